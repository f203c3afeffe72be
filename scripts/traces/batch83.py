"""The eighty-third batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch81_b.py are): fashion, design and creative tools, written in torch alone, first half. Virtual try-on training (a
two-encoder appearance-flow network that warps a garment image onto a person representation by grid_sample at every
scale of a pyramid, a try-on generator that renders the person and composes the warped garment through a predicted
mask, L1, mask, perceptual-feature and flow smoothness losses) at drawn resolutions and batch sizes, graphic layout
generation training (a LayoutTransformer-style decoder over the category and quantised box tokens of a drawn number of
design elements per layout, canvas-type conditioned, padded per batch to its longest, with layout completion sampled
token by token under a per-field logit mask and overlap and alignment metrics at evaluation points), font glyph
diffusion training (a denoising UNet over glyph bitmaps conditioned on a character embedding and a style code pooled
from a drawn number of reference glyphs of the same font under a mask, DDIM sampling at evaluation points) and an
outfit compatibility service (uint8 item thumbnails and category ids uploaded on a side stream, a convolutional item
encoder, a set transformer over the drawn number of items of each outfit under a mask, a compatibility score and a
complementary-item search over a catalogue restricted to each outfit's missing category by torch.where). Same
conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or, for the outfit service,
from two reused pinned host buffers), `rng` the workload's random.Random for every shape, count and sampled choice,
sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value:
batch sizes, element counts, reference counts and item counts are fixed on the host, padding handled by masks
multiplied in or by torch.where / masked_fill, no boolean-mask indexing; losses, metrics and search results are read
back only at logging points. outfit_compat_serve uses a side stream (uploads waited on by event, the tensors
record_stream'ed); the others are single-stream. The models run under bf16 autocast.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new83.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and for
which of them the CPU smoke run (RECORD_SMOKE=1) ran.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, _sincos, randint

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _conv(cin, cout, stride=1):
    return _nn.Sequential(_nn.Conv2d(cin, cout, 3, stride, 1, bias=False), _nn.BatchNorm2d(cout), _nn.ReLU())


def _identity_grid(b, h, w, device):
    ys = torch.linspace(-1, 1, h, device=device)
    xs = torch.linspace(-1, 1, w, device=device)
    gy, gx = torch.meshgrid(ys, xs, indexing="ij")
    return torch.stack([gx, gy], -1)[None].expand(b, h, w, 2)


# ---------------------------------------------------------------- virtual try-on with an appearance flow


class _Pyramid(_nn.Module):
    def __init__(self, cin, widths):
        super().__init__()
        self.stages = _nn.ModuleList()
        for w in widths:
            self.stages.append(_nn.Sequential(_conv(cin, w, 2), _conv(w, w)))
            cin = w

    def forward(self, x):
        feats = []
        for s in self.stages:
            x = s(x)
            feats.append(x)
        return feats


class _FlowNet(_nn.Module):
    """Person and garment pyramids; coarse-to-fine flow, each level warping the garment features by the current
    flow and predicting a residual flow from both."""

    def __init__(self, cp, cg, widths):
        super().__init__()
        self.person, self.garment = _Pyramid(cp, widths), _Pyramid(cg, widths)
        self.heads = _nn.ModuleList(_nn.Sequential(_conv(2 * w, w), _nn.Conv2d(w, 2, 3, 1, 1)) for w in widths)

    def forward(self, p, g):
        fp, fg = self.person(p), self.garment(g)
        flow, flows = None, []
        for lvl in reversed(range(len(fp))):
            b, _, h, w = fp[lvl].shape
            base = _identity_grid(b, h, w, p.device)
            if flow is None:
                flow = torch.zeros(b, h, w, 2, device=p.device)
            else:
                flow = _F.interpolate(flow.permute(0, 3, 1, 2), size=(h, w), mode="bilinear",
                                      align_corners=True).permute(0, 2, 3, 1)
            warped = _F.grid_sample(fg[lvl].float(), base + flow, align_corners=True)
            flow = flow + self.heads[lvl](torch.cat([fp[lvl], warped.to(fp[lvl].dtype)], 1)).permute(0, 2, 3, 1) \
                .float() * 0.1
            flows.append(flow)
        return flows


class _TryOnGen(_nn.Module):
    def __init__(self, cin, widths):
        super().__init__()
        self.down = _nn.ModuleList()
        c = cin
        for w in widths:
            self.down.append(_nn.Sequential(_conv(c, w, 2), _conv(w, w)))
            c = w
        self.up = _nn.ModuleList()
        for w, skip in zip(reversed(widths[:-1]), reversed(widths[:-1])):
            self.up.append(_nn.Sequential(_conv(c + skip, w), _conv(w, w)))
            c = w
        self.out = _nn.Conv2d(c, 4, 3, 1, 1)

    def forward(self, x):
        size = x.shape[-2:]
        skips = []
        for d in self.down:
            x = d(x)
            skips.append(x)
        for u, s in zip(self.up, reversed(skips[:-1])):
            x = u(torch.cat([_F.interpolate(x, size=s.shape[-2:], mode="nearest"), s], 1))
        return _F.interpolate(self.out(x), size=size, mode="bilinear", align_corners=False)


@_workload("virtual try-on training (random init, VITON-HD-like): 4-12 person/garment pairs a step (drawn) at 256 x 192, 320 x 240 or 384 x 288 (drawn per step); a person representation of 22 channels (cloth-agnostic image, 18 pose heatmaps, a body mask) and a garment image with its mask; an appearance-flow network of two 4-level pyramids (32-64-128-256 channels, batch norm) predicting a coarse-to-fine flow, each level warping the garment features by grid_sample and adding a residual flow; the garment and its mask warped at full resolution, a 4-level try-on UNet rendering the person and a composition mask; L1 on the composite, the warped mask's L1 against the worn-garment mask, an L1 over the features of a frozen 3-stage random convolutional extractor and a total-variation penalty on every level's flow; AdamW, bf16 autocast, 300 steps; the loss read back every 20 steps and every 75 steps an evaluation of 4 x 8 pairs at 256 x 192 with the composite L1 and the warped-mask IoU read back")
def virtual_tryon_warp_train(rng):
    widths = _smoke([32, 64, 128, 256], [4, 8, 8, 16])
    sizes = _smoke([(256, 192), (320, 240), (384, 288)], [(32, 32), (48, 32)])
    cp = 22
    flow = _FlowNet(cp, 4, widths).cuda().to(memory_format=torch.channels_last)
    gen = _TryOnGen(cp + 4, widths).cuda().to(memory_format=torch.channels_last)
    feat = _nn.Sequential(_conv(3, widths[0]), _conv(widths[0], widths[1], 2), _conv(widths[1], widths[2], 2)).cuda()
    feat.requires_grad_(False)
    feat.eval()
    params = list(flow.parameters()) + list(gen.parameters())
    opt = torch.optim.AdamW(params, lr=2e-4, betas=(0.5, 0.999), weight_decay=0.01)

    def pairs(b, h, w):
        person = torch.randn(b, cp, h, w, device="cuda").contiguous(memory_format=torch.channels_last)
        garment = torch.rand(b, 3, h, w, device="cuda") * 2 - 1
        gmask = (torch.rand(b, 1, h // 8, w // 8, device="cuda") > 0.4).float()
        gmask = _F.interpolate(gmask, size=(h, w), mode="nearest")
        worn = _F.interpolate((torch.rand(b, 1, h // 8, w // 8, device="cuda") > 0.5).float(), size=(h, w),
                              mode="nearest")
        target = torch.rand(b, 3, h, w, device="cuda") * 2 - 1
        return person, garment, gmask, worn, target

    def forward(person, garment, gmask):
        flows = flow(person, torch.cat([garment, gmask], 1).contiguous(memory_format=torch.channels_last))
        b, _, h, w = garment.shape
        full = _F.interpolate(flows[-1].permute(0, 3, 1, 2), size=(h, w), mode="bilinear",
                              align_corners=True).permute(0, 2, 3, 1)
        grid = _identity_grid(b, h, w, garment.device) + full
        wg = _F.grid_sample(garment, grid, align_corners=True)
        wm = _F.grid_sample(gmask, grid, align_corners=True)
        out = gen(torch.cat([person, wg.to(person.dtype), wm.to(person.dtype)], 1)
                  .contiguous(memory_format=torch.channels_last)).float()
        render, comp = torch.tanh(out[:, :3]), torch.sigmoid(out[:, 3:]) * wm
        return comp * wg + (1 - comp) * render, wm, flows

    steps = _smoke(300, 3)
    for step in range(steps):
        flow.train()
        gen.train()
        b = rng.randint(_smoke(4, 2), _smoke(12, 3))
        h, w = rng.choice(sizes)
        person, garment, gmask, worn, target = pairs(b, h, w)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            img, wm, flows = forward(person, garment, gmask)
            perc = sum(_F.l1_loss(a.float(), c.float()) for a, c in zip(feat(img), feat(target)))
        tv = sum((f[:, 1:] - f[:, :-1]).abs().mean() + (f[:, :, 1:] - f[:, :, :-1]).abs().mean() for f in flows)
        loss = _F.l1_loss(img, target) + _F.l1_loss(wm, worn) + 0.2 * perc + 0.05 * tv
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 20 == 0:
            loss.item()
        del person, garment, gmask, worn, target, img, wm, flows, perc, tv, loss
        if (step + 1) % _smoke(75, 2) == 0:
            flow.eval()
            gen.eval()
            l1s, ious = [], []
            with torch.no_grad():
                for _ in range(_smoke(4, 1)):
                    person, garment, gmask, worn, target = pairs(_smoke(8, 2), *sizes[0])
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        img, wm, _flows = forward(person, garment, gmask)
                    l1s.append((img - target).abs().mean())
                    hard = (wm > 0.5).float()
                    ious.append((hard * worn).sum() / ((hard + worn) > 0).float().sum().clamp(min=1))
                    del person, garment, gmask, worn, target, img, wm, _flows, hard
                metrics = torch.stack([torch.stack(l1s).mean(), torch.stack(ious).mean()])
            metrics.tolist()
            del l1s, ious, metrics


# ---------------------------------------------------------------- graphic layout generation


class _LayoutLM(_nn.Module):
    def __init__(self, vocab, d, heads, layers, maxlen):
        super().__init__()
        self.emb, self.pos = _nn.Embedding(vocab, d, padding_idx=0), _nn.Embedding(maxlen, d)
        self.field = _nn.Embedding(6, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm, self.head = _nn.LayerNorm(d), _nn.Linear(d, vocab)

    def forward(self, ids, keymask):
        b, t = ids.shape
        ar = torch.arange(t, device=ids.device)
        h = self.emb(ids) + self.pos(ar) + self.field(ar % 5 + 1)
        causal = ar[None, :] <= ar[:, None]
        mask = causal[None, None] & (keymask[:, None, None, :] > 0)
        for blk in self.blocks:
            h = blk(h, mask=mask)
        return self.head(self.norm(h))


@_workload("graphic layout generation training (random init, LayoutTransformer-like over posters, banners, slides and app screens): 48-144 layouts a step (drawn, a multiple of 16) of 1-25 design elements each (drawn per layout), each element five tokens (one of 12 categories, then x, y, w, h quantised to 128 bins), a canvas-type token (6 types) and BOS in front and EOS after, the batch padded to its longest rounded to 8 (128 positions at most, the position table 128 rows); an 8-block causal decoder (width 512, 8 heads, vocabulary 149) under a causal and key-padding mask, label-smoothed cross-entropy over the real next tokens; AdamW, warmup and cosine decay, clipping, bf16 autocast, 300 steps; the loss read back every 20 steps and every 75 steps a layout completion of 32 layouts from their first element, 40 tokens (8 elements) sampled one at a time by top-20 sampling under a per-field logit mask without a cache, the boxes decoded and the mean pairwise overlap and alignment of the completed layouts read back")
def graphic_layout_gen_train(rng):
    n_cat, bins, n_canvas = 12, _smoke(128, 16), 6
    maxe = _smoke(25, 6)
    cat0, bin0, canvas0 = 3, 3 + n_cat, 3 + n_cat + bins
    vocab = canvas0 + n_canvas
    maxlen = -(-(5 * maxe + 3) // 8) * 8  # the longest padded sequence: canvas, BOS, 5 per element, EOS
    d, heads, layers = _smoke(512, 32), _smoke(8, 2), _smoke(8, 2)
    model = _LayoutLM(vocab, d, heads, layers, maxlen).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.05)
    # the tokens allowed at each field: category after BOS and every 5th, bins at the four box fields
    allowed = torch.full((5, vocab), -1e4, device="cuda")
    allowed[0, cat0:bin0] = 0
    allowed[1:, bin0:canvas0] = 0

    def layouts(b, counts):
        t = -(-(5 * max(counts) + 3) // 8) * 8
        ar = torch.arange(t, device="cuda")
        n = torch.tensor(counts, device="cuda")[:, None]
        cats = torch.randint(cat0, bin0, (b, t), device="cuda")
        boxes = torch.randint(bin0, canvas0, (b, t), device="cuda")
        field = (ar - 2) % 5
        ids = torch.where(field[None] == 0, cats, boxes)
        ids[:, 0] = torch.randint(canvas0, vocab, (b,), device="cuda")
        ids[:, 1] = 1
        end = 2 + 5 * n
        ids = torch.where(ar[None] == end, torch.full_like(ids, 2), ids)
        keymask = (ar[None] <= end).long()
        return ids * keymask, keymask

    steps = _smoke(300, 3)
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = 3e-4 * min(1.0, (step + 1) / 30) * 0.5 * (1 + math.cos(math.pi * step / steps))
        model.train()
        b = randint(rng, _smoke(48, 4), _smoke(144, 8), _smoke(16, 4))
        counts = [rng.randint(1, maxe) for _ in range(b)]
        ids, keymask = layouts(b, counts)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(ids[:, :-1], keymask[:, :-1])
        tgt = ids[:, 1:].masked_fill(keymask[:, 1:] == 0, -100)
        loss = _F.cross_entropy(logits.float().flatten(0, 1), tgt.flatten(), ignore_index=-100, label_smoothing=0.1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.item()
        del ids, keymask, logits, tgt, loss
        if (step + 1) % _smoke(75, 2) == 0:
            model.eval()
            nb, new = _smoke(32, 2), _smoke(40, 10)
            with torch.no_grad():
                ids, _ = layouts(nb, [1] * nb)
                seq = ids[:, :7]
                for j in range(new):
                    t = seq.shape[1]
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        last = model(seq, torch.ones_like(seq))[:, -1].float()
                    last = last + allowed[(t - 2) % 5]
                    top_v, top_i = last.topk(20, -1)
                    pick = torch.multinomial(torch.softmax(top_v, -1), 1)
                    seq = torch.cat([seq, top_i.gather(1, pick)], 1)
                    del last, top_v, top_i, pick
                el = seq[:, 2:2 + 5 * ((seq.shape[1] - 2) // 5)].view(nb, -1, 5)
                box = (el[..., 1:].float() - bin0).clamp(0, bins - 1) / bins
                x0, y0 = box[..., 0], box[..., 1]
                x1, y1 = (x0 + box[..., 2]).clamp(max=1), (y0 + box[..., 3]).clamp(max=1)
                iw = (torch.minimum(x1[:, :, None], x1[:, None]) - torch.maximum(x0[:, :, None], x0[:, None])).clamp(0)
                ih = (torch.minimum(y1[:, :, None], y1[:, None]) - torch.maximum(y0[:, :, None], y0[:, None])).clamp(0)
                area = (x1 - x0) * (y1 - y0)
                off = 1 - torch.eye(el.shape[1], device="cuda")
                overlap = (iw * ih / area[:, None].clamp(min=1e-4) * off).sum((1, 2)) / off.sum()
                edges = torch.stack([x0, (x0 + x1) / 2, x1], -1)
                gap = (edges[:, :, None] - edges[:, None]).abs().amin(-1) + (1 - off)[None]
                align = gap.amin(-1).mean(-1)
                metrics = torch.stack([overlap.mean(), align.mean()])
            metrics.tolist()
            del ids, seq, el, box, x0, y0, x1, y1, iw, ih, area, off, overlap, edges, gap, align, metrics


# ---------------------------------------------------------------- font glyph diffusion


class _ResBlock(_nn.Module):
    def __init__(self, cin, cout, temb):
        super().__init__()
        self.n1, self.c1 = _nn.GroupNorm(8, cin), _nn.Conv2d(cin, cout, 3, 1, 1)
        self.t = _nn.Linear(temb, cout)
        self.n2, self.c2 = _nn.GroupNorm(8, cout), _nn.Conv2d(cout, cout, 3, 1, 1)
        self.skip = _nn.Conv2d(cin, cout, 1) if cin != cout else _nn.Identity()

    def forward(self, x, e):
        h = self.c1(_F.silu(self.n1(x))) + self.t(e)[:, :, None, None]
        return self.skip(x) + self.c2(_F.silu(self.n2(h)))


class _Attn2d(_nn.Module):
    def __init__(self, c, heads):
        super().__init__()
        self.h, self.n, self.qkv, self.proj = heads, _nn.GroupNorm(8, c), _nn.Conv2d(c, 3 * c, 1), _nn.Conv2d(c, c, 1)

    def forward(self, x):
        b, c, hh, ww = x.shape
        q, k, v = self.qkv(self.n(x)).view(b, 3, self.h, c // self.h, hh * ww).transpose(-1, -2).unbind(1)
        a = _F.scaled_dot_product_attention(q, k, v).transpose(-1, -2).reshape(b, c, hh, ww)
        return x + self.proj(a)


class _GlyphUNet(_nn.Module):
    def __init__(self, widths, n_chars, temb):
        super().__init__()
        self.temb = temb
        self.time = _nn.Sequential(_nn.Linear(temb, temb), _nn.SiLU(), _nn.Linear(temb, temb))
        self.char = _nn.Embedding(n_chars, temb)
        self.style_enc = _nn.Sequential(_nn.Conv2d(1, widths[0], 3, 2, 1), _nn.SiLU(),
                                        _nn.Conv2d(widths[0], widths[1], 3, 2, 1), _nn.SiLU(),
                                        _nn.Conv2d(widths[1], widths[2], 3, 2, 1), _nn.SiLU())
        self.style = _nn.Linear(widths[2], temb)
        self.inp = _nn.Conv2d(1, widths[0], 3, 1, 1)
        self.down, self.up = _nn.ModuleList(), _nn.ModuleList()
        c, skips = widths[0], []
        for i, w in enumerate(widths):
            self.down.append(_nn.ModuleList([_ResBlock(c, w, temb), _ResBlock(w, w, temb)]))
            skips.append(w)
            c = w
        self.mid1, self.mid_attn, self.mid2 = _ResBlock(c, c, temb), _Attn2d(c, 4), _ResBlock(c, c, temb)
        for w in reversed(widths):
            self.up.append(_nn.ModuleList([_ResBlock(c + skips.pop(), w, temb), _ResBlock(w, w, temb)]))
            c = w
        self.out = _nn.Sequential(_nn.GroupNorm(8, c), _nn.SiLU(), _nn.Conv2d(c, 1, 3, 1, 1))

    def style_code(self, refs, rmask):
        """refs (B, R, 1, H, W) reference glyphs, rmask (B, R): the masked mean of their codes, (B, temb)."""
        b, r = rmask.shape
        f = self.style_enc(refs.flatten(0, 1)).mean((2, 3)).view(b, r, -1)
        m = rmask[..., None].to(f.dtype)
        return self.style((f * m).sum(1) / m.sum(1).clamp(min=1))

    def forward(self, x, t, chars, style):
        e = self.time(_sincos(t, self.temb).to(x.dtype)) + self.char(chars) + style
        e = _F.silu(e)
        h, skips = self.inp(x), []
        for i, (r1, r2) in enumerate(self.down):
            h = r2(r1(h, e), e)
            skips.append(h)
            if i < len(self.down) - 1:
                h = _F.avg_pool2d(h, 2)
        h = self.mid2(self.mid_attn(self.mid1(h, e)), e)
        for i, (r1, r2) in enumerate(self.up):
            s = skips.pop()
            if h.shape[-1] != s.shape[-1]:
                h = _F.interpolate(h, size=s.shape[-2:], mode="nearest")
            h = r2(r1(torch.cat([h, s], 1), e), e)
        return self.out(h)


@_workload("font glyph diffusion training (random init, a few-shot font generation DDPM): 16-48 glyphs a step (drawn, a multiple of 8) at 64 x 64 or 80 x 80 (drawn per step), each conditioned on its character (6,763 characters) and on a style code pooled from 2-8 reference glyphs of the same font (the number drawn per step, the real count per glyph drawn and masked) by a 3-layer strided convolutional style encoder; a 4-level denoising UNet (64-128-192-256 channels, two residual blocks a level with group norm and time/condition injection, self-attention at the bottom), cosine noise schedule over 1,000 steps, epsilon-prediction MSE; AdamW, an EMA copy of the weights, bf16 autocast, 232 steps; the loss read back every 20 steps and every 58 steps 16 glyphs sampled by 20 DDIM steps with the EMA weights and their ink ratio and mean intensity read back")
def font_glyph_diffusion_train(rng):
    widths, temb, n_chars = _smoke([64, 128, 192, 256], [8, 8, 16, 16]), _smoke(256, 16), _smoke(6763, 50)
    sizes, maxr = _smoke([64, 80], [16, 24]), _smoke(8, 3)
    model = _GlyphUNet(widths, n_chars, temb).cuda()
    ema = _GlyphUNet(widths, n_chars, temb).cuda()
    ema.load_state_dict(model.state_dict())
    ema.requires_grad_(False)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.01)
    T = 1000
    s = torch.arange(T + 1, device="cuda").float() / T
    abar = torch.cos((s + 0.008) / 1.008 * math.pi / 2).pow(2)
    abar = (abar / abar[0])[1:].clamp(1e-5, 1)

    def glyphs(b, r, nref):
        x0 = (torch.rand(b, 1, r // 4, r // 4, device="cuda") > 0.6).float()
        x0 = _F.interpolate(x0, size=(r, r), mode="bilinear", align_corners=False) * 2 - 1
        refs = (torch.rand(b, nref, 1, r, r, device="cuda") > 0.7).float() * 2 - 1
        real = torch.randint(min(2, nref), nref + 1, (b, 1), device="cuda")
        rmask = (torch.arange(nref, device="cuda")[None] < real).float()
        return x0, refs, rmask, torch.randint(0, n_chars, (b,), device="cuda")

    steps = _smoke(232, 3)
    for step in range(steps):
        model.train()
        b = randint(rng, _smoke(16, 2), _smoke(48, 4), _smoke(8, 2))
        r, nref = rng.choice(sizes), rng.randint(_smoke(2, 1), maxr)
        x0, refs, rmask, chars = glyphs(b, r, nref)
        t = torch.randint(0, T, (b,), device="cuda")
        noise = torch.randn_like(x0)
        a = abar[t].view(b, 1, 1, 1)
        xt = a.sqrt() * x0 + (1 - a).sqrt() * noise
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(xt, t, chars, model.style_code(refs, rmask))
        loss = _F.mse_loss(pred.float(), noise)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        with torch.no_grad():
            for pe, pm in zip(ema.parameters(), model.parameters()):
                pe.lerp_(pm, 0.01)
        if step % 20 == 0:
            loss.item()
        del x0, refs, rmask, chars, t, noise, a, xt, pred, loss
        if (step + 1) % _smoke(58, 2) == 0:
            nb, r = _smoke(16, 2), sizes[0]
            with torch.no_grad():
                _x0, refs, rmask, chars = glyphs(nb, r, maxr)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    style = ema.style_code(refs, rmask)
                x = torch.randn(nb, 1, r, r, device="cuda")
                ns = _smoke(20, 3)
                tl = [round((T - 1) * (1 - j / (ns - 1))) for j in range(ns)]
                for i, ti in enumerate(tl):
                    tt = torch.full((nb,), ti, device="cuda", dtype=torch.long)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        eps = ema(x, tt, chars, style).float()
                    at = abar[ti]
                    prev = abar[tl[i + 1]] if i + 1 < len(tl) else torch.ones((), device="cuda")
                    x0p = ((x - (1 - at).sqrt() * eps) / at.sqrt()).clamp(-1, 1)
                    x = prev.sqrt() * x0p + (1 - prev).sqrt() * eps
                    del tt, eps, x0p
                ink = torch.stack([(x > 0).float().mean(), x.mean()])
            ink.tolist()
            del _x0, refs, rmask, chars, style, x, ink


# ---------------------------------------------------------------- outfit compatibility service


class _ItemEncoder(_nn.Module):
    def __init__(self, widths, d, n_cat):
        super().__init__()
        layers, c = [], 3
        for w in widths:
            layers += [_nn.Conv2d(c, w, 3, 2, 1, bias=False), _nn.BatchNorm2d(w), _nn.ReLU(),
                       _nn.Conv2d(w, w, 3, 1, 1, bias=False), _nn.BatchNorm2d(w), _nn.ReLU()]
            c = w
        self.body = _nn.Sequential(*layers)
        self.proj, self.cat = _nn.Linear(c, d), _nn.Embedding(n_cat, d)

    def forward(self, x, cats):
        return self.proj(self.body(x).mean((2, 3))) + self.cat(cats)


@_workload("outfit compatibility and complementary-item service (random init, Polyvore-like): 1,600-1,700 requests (drawn) of 1-16 outfits (log-uniform) of 3-8 items (drawn per request, the real count per outfit from the upload and masked), each item a uint8 thumbnail of 128 x 128 with its category id (30 categories); the thumbnails and the int32 category ids and item counts uploaded on a side stream from two reused pinned host buffers one request ahead (waited on by event, record_stream'ed); a convolutional item encoder (4 stages, 32-64-128-256 channels, batch norm) plus a category embedding to 256, a 3-block set transformer (4 heads) under the item mask, a masked-mean compatibility score, an outfit query projected against a catalogue of 200,000 item embeddings (bf16) with every category but the outfit's drawn missing one pushed down by torch.where, the top-20 complementary items and their scores; each request's scores and item ids read back")
def outfit_compat_serve(rng):
    widths, d, heads, n_cat = _smoke([32, 64, 128, 256], [4, 8, 8, 16]), _smoke(256, 16), _smoke(4, 2), 30
    maxo, maxi, res, n_cat_items = _smoke(16, 3), 8, _smoke(128, 32), _smoke(200_000, 500)
    enc = _ItemEncoder(widths, d, n_cat).cuda().eval().to(memory_format=torch.channels_last)
    blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(3)).cuda().eval()
    score_head, query = _nn.Linear(d, 1).cuda(), _nn.Linear(d, d).cuda()
    for m in (enc, blocks, score_head, query):
        m.requires_grad_(False)
    catalogue = _F.normalize(torch.randn(n_cat_items, d, device="cuda"), dim=-1).to(torch.bfloat16)
    cat_of = torch.randint(0, n_cat, (n_cat_items,), device="cuda")
    mean = torch.tensor([0.6, 0.57, 0.55], device="cuda").view(1, 3, 1, 1) * 255
    std = torch.tensor([0.3, 0.3, 0.3], device="cuda").view(1, 3, 1, 1) * 255
    npix = maxo * maxi * 3 * res * res
    # a host buffer: the thumbnails' bytes, then maxo * maxi category ids, maxo item counts, maxo missing categories
    # (ids stored as uint8 values below 256)
    host = []
    for _ in range(2):
        buf = torch.randint(0, 256, (npix + maxo * maxi + 2 * maxo,), dtype=torch.uint8)
        buf[npix:npix + maxo * maxi] = torch.randint(0, n_cat, (maxo * maxi,), dtype=torch.uint8)
        buf[npix + maxo * maxi:npix + maxo * maxi + maxo] = torch.randint(3, maxi + 1, (maxo,), dtype=torch.uint8)
        buf[npix + maxo * maxi + maxo:] = torch.randint(0, n_cat, (maxo,), dtype=torch.uint8)
        host.append(buf.pin_memory())
    up = SideUploads(host)
    nreq = rng.randint(_smoke(1600, 3), _smoke(1700, 4))
    plan = [(_loguniform(rng, 1, maxo), rng.randint(3, maxi)) for _ in range(nreq)]

    def spans(i):
        b, n = plan[i]
        meta = npix + maxo * maxi
        return b * n * 3 * res * res, slice(npix, npix + b * n), slice(meta, meta + b), \
            slice(meta + maxo, meta + maxo + b)

    nxt = up.upload(0, *spans(0))
    for i in range(nreq):
        b, n = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, *spans(i + 1))
        raw, cats, counts, missing, ev = item
        SideUploads.ready(ev, raw, cats, counts, missing)
        with torch.no_grad():
            x = ((raw.view(b * n, 3, res, res).float() - mean) / std).contiguous(memory_format=torch.channels_last)
            imask = (torch.arange(n, device="cuda")[None] < counts.long().clamp(max=n)[:, None]).float()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                h = enc(x, cats.long()).view(b, n, d)
                key = ((1 - imask) * -1e4)[:, None, None, :].to(h.dtype)
                for blk in blocks:
                    h = blk(h, mask=key)
                m = imask[..., None].to(h.dtype)
                pooled = (h * m).sum(1) / m.sum(1).clamp(min=1)
                compat = torch.sigmoid(score_head(pooled).float())[:, 0]
                q = _F.normalize(query(pooled).float(), dim=-1).to(torch.bfloat16)
            sims = (q @ catalogue.T).float()
            sims = torch.where(cat_of[None] == missing.long()[:, None], sims, sims - 10.0)
            top_s, top_i = sims.topk(20, dim=1)
            res_t = torch.cat([compat[:, None], top_s, top_i.float()], 1)
        res_t.tolist()
        del item, raw, cats, counts, missing, x, imask, h, key, m, pooled, compat, q, sims, top_s, top_i, res_t

"""The hundred-and-thirty-eighth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py
to batch137_b.py are): wineries and viticulture, written in torch alone, first half. Vine leaf disease training (a
ResNet-style convnet over leaf photos of drawn resolution, the disease by cross-entropy under mixup, its severity and
the leaf's side), a bottling-line inspection service (a strided convnet with a light top-down decoder segmenting each
bottle photo into glass, wine, label and capsule, the fill height read from the wine's rows, the label's skew from its
centre of mass in the two halves, and the defects from the pooled features), fermentation tank training (an LSTM
written out reading by reading over each fermentation's history of drawn length, right-padded readings keeping the
state by torch.where; the next reading's sugar, a stuck fermentation, the risk of hydrogen sulphide and the days to
dryness) and a tasting-note sampler (a decoder-only transformer over left-padded prompts of wine attributes, a key and
value cache written token by token, nucleus sampling by Gumbel-max over the sorted logits, finished notes padded by
torch.where).
Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths,
resolutions and batch sizes are fixed on the host, padding handled by masks or by torch.where / masked_fill, no
boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
wine_bottle_fill_inspect_serve uploads its photos on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every embedding and position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new138.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and
for the CPU smoke run (RECORD_SMOKE=1).
"""

import math

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, SideUploads, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- vine leaf disease (ResNet-style convnet)


class _LeafNet(_nn.Module):
    """A strided stem and max pool, four stages of two basic residual blocks, global average pooling; heads for the
    disease, its severity and the leaf's side."""

    def __init__(self, w, n_cls):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, w[0], 7, 2, 3, bias=False), _nn.BatchNorm2d(w[0]), _nn.ReLU(),
                                   _nn.MaxPool2d(3, 2, 1))
        stages, cin = [], w[0]
        for i, c in enumerate(w):
            stages += [BasicResBlock(cin, c, 1 if i == 0 else 2), BasicResBlock(c, c, 1)]
            cin = c
        self.stages = _nn.Sequential(*stages)
        self.cls, self.sev, self.side = _nn.Linear(cin, n_cls), _nn.Linear(cin, 1), _nn.Linear(cin, 1)

    def forward(self, x):
        f = self.stages(self.stem(x)).mean((2, 3))
        return self.cls(f).float(), self.sev(f).float()[:, 0], self.side(f).float()[:, 0]


@_workload("vine leaf disease training (random init, a ResNet-style convnet): 16-40 leaf photos a step (drawn) at 160-256 px square in steps of 32 (drawn per step), channels_last; a 7x7 strided stem of 32 channels and a max pool, four stages of two basic residual blocks (32/64/128/256 channels), global average pooling; 7 classes (healthy, downy mildew, powdery mildew, black rot, esca, leafroll, phomopsis) by cross-entropy with label smoothing 0.1 under mixup (lambda drawn per step from Beta(0.4, 0.4) on the host, the partner by a randperm on the device), the severity by BCE masked to the diseased leaves and the leaf's side by BCE; SGD with Nesterov momentum, a cosine learning rate set on the host, bf16 autocast, 620 steps; the losses read back every 10 steps and every 124 steps a no-grad pass over 48 photos of 224 px with the accuracy read back")
def vine_leaf_disease_train(rng):
    widths, n_cls = _smoke([32, 64, 128, 256], [8, 8, 16, 16]), 7
    res = [160, 192, 224, 256] if _smoke(1, 0) else [32, 64]
    model = _LeafNet(widths, n_cls).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4)
    steps, every = _smoke(620, 3), _smoke(124, 2)

    for step in range(steps):
        model.train()
        for g in opt.param_groups:
            g["lr"] = 0.05 * 0.5 * (1.0 + math.cos(math.pi * step / steps))
        b, r = rng.randint(_smoke(16, 2), _smoke(40, 3)), rng.choice(res)
        lam = rng.betavariate(0.4, 0.4)
        x = torch.randn(b, 3, r, r, device="cuda")
        y = torch.randint(0, n_cls, (b,), device="cuda")
        sev = torch.rand(b, device="cuda")
        side = (torch.rand(b, device="cuda") < 0.5).float()
        perm = torch.randperm(b, device="cuda")
        xm = (lam * x + (1.0 - lam) * x.index_select(0, perm)).contiguous(memory_format=torch.channels_last)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits, s_out, d_out = model(xm)
        l_cls = (lam * _F.cross_entropy(logits, y, label_smoothing=0.1)
                 + (1.0 - lam) * _F.cross_entropy(logits, y.index_select(0, perm), label_smoothing=0.1))
        sick = (y > 0).float()
        l_sev = (_F.binary_cross_entropy_with_logits(s_out, sev, reduction="none") * sick).sum()
        l_sev = l_sev / sick.sum().clamp_min(1.0)
        l_side = _F.binary_cross_entropy_with_logits(d_out, side)
        loss = l_cls + 0.5 * l_sev + 0.2 * l_side
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 10 == 0:
            torch.stack([l_cls.detach(), l_sev.detach(), l_side.detach()]).tolist()
        del x, y, sev, side, perm, xm, logits, s_out, d_out, l_cls, sick, l_sev, l_side, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                nb, r = _smoke(48, 2), res[-2]
                x = torch.randn(nb, 3, r, r, device="cuda").contiguous(memory_format=torch.channels_last)
                y = torch.randint(0, n_cls, (nb,), device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits, _, _ = model(x)
                acc = (logits.argmax(-1) == y).float().mean()
            acc.item()
            del x, y, logits, acc


# ---------------------------------------------------------------- bottling-line inspection (segmentation service)


def _cbr(cin, cout, stride):
    return _nn.Sequential(_nn.Conv2d(cin, cout, 3, stride, 1, bias=False), _nn.BatchNorm2d(cout), _nn.ReLU())


class _BottleNet(_nn.Module):
    """A plain strided convnet (1/2 .. 1/16), a top-down decoder (1x1 laterals, nearest upsampling, a 3x3 smoothing
    convolution) to a 5-class map at 1/4 (background, glass, wine, label, capsule), and 5 defect logits from the
    pooled 1/16 map."""

    def __init__(self, w, n_seg, n_def):
        super().__init__()
        self.s1 = _nn.Sequential(_cbr(3, w[0], 2), _cbr(w[0], w[0], 1))
        self.s2 = _nn.Sequential(_cbr(w[0], w[1], 2), _cbr(w[1], w[1], 1))
        self.s3 = _nn.Sequential(_cbr(w[1], w[2], 2), _cbr(w[2], w[2], 1))
        self.s4 = _nn.Sequential(_cbr(w[2], w[3], 2), _cbr(w[3], w[3], 1))
        f = w[1]
        self.l2, self.l3, self.l4 = _nn.Conv2d(w[1], f, 1), _nn.Conv2d(w[2], f, 1), _nn.Conv2d(w[3], f, 1)
        self.smooth = _cbr(f, f, 1)
        self.seg = _nn.Conv2d(f, n_seg, 1)
        self.defect = mlp(w[3], w[3], n_def, act=_nn.ReLU)

    def forward(self, x):
        c2 = self.s2(self.s1(x))
        c3 = self.s3(c2)
        c4 = self.s4(c3)
        p = self.l3(c3) + _F.interpolate(self.l4(c4), scale_factor=2.0, mode="nearest")
        p = self.l2(c2) + _F.interpolate(p, scale_factor=2.0, mode="nearest")
        return self.seg(self.smooth(p)).float(), self.defect(c4.mean((2, 3))).float()


@_workload("bottling-line inspection serving (random init, a strided convnet with a top-down segmentation decoder): 2,760-2,800 requests (drawn) of one camera burst of 4-16 bottles (drawn) at 384 x 192, 448 x 224 or 512 x 256 px (portrait, drawn per request), uint8 RGB uploaded on a side stream from two reused pinned host buffers (filled once, sized for 16 x 3 x 512 x 256) one request ahead (one span, through SideUploads.ahead), normalised on the device, channels_last; four stages of two 3x3 conv-BN-ReLU layers (24/48/96/192 channels, each stage strided), 1x1 laterals of the 1/4, 1/8 and 1/16 maps summed top-down with nearest upsampling and a 3x3 smoothing layer, a 5-class map at 1/4 (background, glass, wine, label, capsule) and 5 defect logits (no capsule, torn label, chipped neck, particle, cork) from the pooled 1/16 map, in eval mode under bf16 autocast; the class map softmaxed, the wine's share of each row's glass, the fill height as the share of rows above half full (a sigmoid ramp) against the drawn target height of the request's wine (a rejection flag by a 2% tolerance), the label's skew from its centre of mass in the left and right halves (atan2), the capsule's coverage, and each bottle's verdict from the defects' sigmoids, the fill flag and a skew over 3 degrees; each request's figures read back once")
def wine_bottle_fill_inspect_serve(rng):
    widths, n_seg, n_def = _smoke([24, 48, 96, 192], [8, 8, 16, 16]), 5, 5
    res = [(384, 192), (448, 224), (512, 256)] if _smoke(1, 0) else [(64, 32), (96, 48)]
    max_n = _smoke(16, 3)
    model = _BottleNet(widths, n_seg, n_def).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    mean = torch.tensor([0.45, 0.42, 0.40], device="cuda").view(1, 3, 1, 1) * 255.0
    std = torch.tensor([0.25, 0.24, 0.24], device="cuda").view(1, 3, 1, 1) * 255.0
    big = max(h * w for h, w in res)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_n * 3 * big,), generator=gen, dtype=torch.uint8).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)

    nreq = rng.randint(_smoke(2760, 3), _smoke(2800, 4))
    plan = []
    for _ in range(nreq):
        h, w = rng.choice(res)
        plan.append((rng.randint(4, max_n) if max_n > 4 else max_n, h, w, rng.uniform(0.62, 0.78)))

    for (n, h, w, target), raw in up.ahead(plan, lambda p: (p[0] * 3 * p[1] * p[2],)):
        hq, wq = h // 4, w // 4
        with torch.no_grad():
            img = raw.view(n, 3, h, w).float()
            x = ((img - mean) / std).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                seg, defect = model(x)
            p = seg.softmax(1)
            glass, wine, label, cap = p[:, 1], p[:, 2], p[:, 3], p[:, 4]
            row_glass = (glass + wine).sum(-1)
            share = wine.sum(-1) / row_glass.clamp_min(1e-3)
            fill = torch.sigmoid((share - 0.5) * 20.0).sum(-1) / hq
            reject = ((fill - target).abs() > 0.02).float()
            col = torch.arange(hq, device="cuda").float()[None, :, None]
            left, right = label[..., : wq // 2], label[..., wq // 2:]
            cy_l = (left * col).sum((1, 2)) / left.sum((1, 2)).clamp_min(1e-3)
            cy_r = (right * col).sum((1, 2)) / right.sum((1, 2)).clamp_min(1e-3)
            skew = torch.atan2(cy_r - cy_l, torch.full_like(cy_l, wq / 2.0)) * (180.0 / math.pi)
            cover = cap[:, : hq // 8].mean((1, 2))
            d = torch.sigmoid(defect)
            verdict = torch.maximum(d.amax(-1), torch.maximum(reject, (skew.abs() > 3.0).float()))
            figs = torch.cat([fill, reject, skew, cover, d.flatten(), verdict, verdict.sum()[None]])
        figs.tolist()
        del raw, img, x, seg, defect, p, glass, wine, label, cap, row_glass, share, fill, reject, col, left, right
        del cy_l, cy_r, skew, cover, d, verdict, figs


# ---------------------------------------------------------------- fermentation tanks (LSTM written out)


class _TankLSTM(_nn.Module):
    """An LSTM written out reading by reading (the input gates of all readings at once, the hidden gates step by
    step), the first hidden and cell states from the variety, the yeast and the tank's kind; right-padded readings
    keep both states by torch.where; a per-reading head (the next reading's sugar) and a tank head from the last
    valid state (gathered at each tank's length) and the masked mean of the states."""

    def __init__(self, fin, n_var, n_yeast, n_kind, d):
        super().__init__()
        self.inp = _nn.Linear(fin + 1, d)
        self.var, self.yeast, self.kind = _nn.Embedding(n_var, 2 * d), _nn.Embedding(n_yeast, 2 * d), \
            _nn.Embedding(n_kind, 2 * d)
        self.wx, self.wh = _nn.Linear(d, 4 * d), _nn.Linear(d, 4 * d, bias=False)
        self.step_head = _nn.Linear(d, 1)
        self.head = mlp(2 * d, d, 3, act=_nn.GELU)

    def forward(self, x, keep, last, var, yeast, kind):
        b, t, _ = x.shape
        gx_all = self.wx(_F.gelu(self.inp(torch.cat([x, keep[..., None].to(x.dtype)], -1))))
        h, c = torch.tanh(self.var(var) + self.yeast(yeast) + self.kind(kind)).chunk(2, -1)
        outs = []
        for s in range(t):
            gi, gf, gg, go = (gx_all[:, s] + self.wh(h)).chunk(4, -1)
            c_new = torch.sigmoid(gf) * c + torch.sigmoid(gi) * torch.tanh(gg)
            h_new = torch.sigmoid(go) * torch.tanh(c_new)
            k = keep[:, s, None]
            h, c = torch.where(k, h_new, h), torch.where(k, c_new, c)
            outs.append(h)
        hs = torch.stack(outs, 1)
        w = keep.float()
        pooled = (hs.float() * w[..., None]).sum(1) / w.sum(1, keepdim=True)
        fin_h = hs.gather(1, last[:, None, None].expand(b, 1, hs.shape[2]))[:, 0]
        return self.step_head(hs).float()[..., 0], self.head(torch.cat([fin_h.float(), pooled], -1)).float()


@_workload("fermentation tank monitoring training (random init, an LSTM written out reading by reading): 64-192 fermentations a step (drawn), each 16-64 readings taken every 8 hours (the step's length drawn; each tank's own 6-to-all readings drawn, right-padded under a mask) of 10 features (sugar in Brix, must temperature, cap temperature, CO2 flow, pH, yeast-assimilable nitrogen, additions, pump-overs, cellar temperature, the hours since inoculation) and the mask; the grape variety (of 24), the yeast strain (of 12) and the vessel (of 4: stainless, oak, concrete egg, amphora) by tables as the first hidden and cell states; an input projection and LSTM gates of width 160, the hidden gates step by step, padded readings keeping both states by torch.where; the next reading's sugar at every reading by a masked Huber loss, and from the last valid state (gathered at each tank's length) and the masked mean of the states a stuck fermentation by BCE, the risk of hydrogen sulphide by BCE and the log days to dryness by a Huber loss; Adam, clipping, bf16 autocast, 170 steps; the losses read back every 10 steps and every 34 steps a no-grad pass over 192 tanks of 64 readings with the stuck accuracy read back")
def ferment_tank_lstm_train(rng):
    fin, n_var, n_yeast, n_kind, d = 10, 24, 12, 4, _smoke(160, 16)
    t_lo, t_hi = _smoke(16, 4), _smoke(64, 8)
    model = _TankLSTM(fin, n_var, n_yeast, n_kind, d).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    steps, every = _smoke(170, 3), _smoke(34, 2)

    def batch(b, t, lens):
        keep = keep_mask(lens, t)
        last = torch.tensor([n - 1 for n in lens], device="cuda")
        x = torch.randn(b, t, fin, device="cuda") * keep[..., None].float()
        var = torch.randint(0, n_var, (b,), device="cuda")
        yeast = torch.randint(0, n_yeast, (b,), device="cuda")
        kind = torch.randint(0, n_kind, (b,), device="cuda")
        sugar = 24.0 * torch.rand(b, t, device="cuda")
        stuck = (torch.rand(b, device="cuda") < 0.08).float()
        h2s = (torch.rand(b, device="cuda") < 0.15).float()
        days = torch.log1p(4.0 + 20.0 * torch.rand(b, device="cuda"))
        return keep, last, x, var, yeast, kind, sugar, stuck, h2s, days

    for step in range(steps):
        model.train()
        b, t = rng.randint(_smoke(64, 2), _smoke(192, 3)), rng.randint(t_lo, t_hi)
        lens = [rng.randint(min(6, t), t) for _ in range(b)]
        keep, last, x, var, yeast, kind, sugar, stuck, h2s, days = batch(b, t, lens)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            per, out = model(x, keep, last, var, yeast, kind)
        wk = (keep[:, :-1] & keep[:, 1:]).float()
        l_sug = (_F.huber_loss(per[:, :-1], sugar[:, 1:], reduction="none") * wk).sum() / wk.sum().clamp_min(1.0)
        l_stuck = _F.binary_cross_entropy_with_logits(out[:, 0], stuck)
        l_h2s = _F.binary_cross_entropy_with_logits(out[:, 1], h2s)
        l_days = _F.huber_loss(out[:, 2], days)
        loss = l_sug + l_stuck + l_h2s + 0.5 * l_days
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_sug.detach(), l_stuck.detach(), l_h2s.detach(), l_days.detach()]).tolist()
        del keep, last, x, var, yeast, kind, sugar, stuck, h2s, days, per, out, wk, l_sug, l_stuck, l_h2s, l_days
        del loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                nb = _smoke(192, 2)
                keep, last, x, var, yeast, kind, sugar, stuck, h2s, days = batch(nb, t_hi, [t_hi] * nb)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    per, out = model(x, keep, last, var, yeast, kind)
                acc = ((out[:, 0] > 0).float() == stuck).float().mean()
            acc.item()
            del keep, last, x, var, yeast, kind, sugar, stuck, h2s, days, per, out, acc


# ---------------------------------------------------------------- tasting notes (decoder sampling, KV cache)


class _NoteBlock(_nn.Module):
    """A pre-norm decoder block with a fused qkv projection and a GELU MLP; `forward` attends over the given keys
    and values (the cache's filled part) under a key mask."""

    def __init__(self, d, heads):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.n1, self.n2 = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.o = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.ff = mlp(d, 4 * d, d, act=_nn.GELU)

    def forward(self, x, kc, vc, lo, mask):
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, t, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)
        kc[:, :, lo:lo + t] = k
        vc[:, :, lo:lo + t] = v
        kk, vv = kc[:, :, :lo + t].to(q.dtype), vc[:, :, :lo + t].to(q.dtype)
        a = _F.scaled_dot_product_attention(q, kk, vv, attn_mask=mask)
        x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
        return x + self.ff(self.n2(x))


@_workload("tasting-note sampling (random init, a decoder-only transformer with a key and value cache): 13-14 requests (drawn) of 2-8 notes (drawn), each prompt 16-48 tokens (wine attributes: variety, region, vintage, style, drawn per note) of a 12,000-token vocabulary, left-padded under a key mask, then 48-160 new tokens (drawn per request); 6 pre-norm blocks of width 384, 6 heads, a GELU MLP of 1,536, a 208-row position table indexed by each note's own positions, the output tied to the token table; the prompt prefilled under a causal and key mask (each padded slot attending to itself), then token by token with the bf16 cache (sized for the request) written in place and attended up to the current token; nucleus sampling (top-p 0.9 after a temperature of 0.7-1.1 drawn per request) by a descending sort, a cumulative softmax and Gumbel-max over the kept logits, the token gathered back; notes that emitted the end token keep emitting padding by torch.where; in eval mode under bf16 autocast; each request's tokens read back once")
def tasting_note_sample(rng):
    vocab, d, heads, layers = 12000, _smoke(384, 32), _smoke(6, 2), _smoke(6, 1)
    p_lo, p_hi, n_lo, n_hi = _smoke(16, 4), _smoke(48, 8), _smoke(48, 4), _smoke(160, 8)
    n_pos, eos, pad = p_hi + n_hi, 2, 0
    tok, pos = _nn.Embedding(vocab, d).cuda(), _nn.Embedding(n_pos, d).cuda()
    blocks = _nn.ModuleList(_NoteBlock(d, heads) for _ in range(layers)).cuda()
    norm = _nn.LayerNorm(d).cuda()
    mods = _nn.ModuleList([tok, pos, blocks, norm]).eval()
    mods.requires_grad_(False)
    dh = d // heads

    nreq = rng.randint(_smoke(13, 2), _smoke(14, 2))
    for _ in range(nreq):
        b = rng.randint(2, _smoke(8, 3))
        p_lens = [rng.randint(p_lo, p_hi) for _ in range(b)]
        new, temp = rng.randint(n_lo, n_hi), rng.uniform(0.7, 1.1)
        p = max(p_lens)
        total = p + new
        with torch.no_grad():
            keep = keep_mask(p_lens, p).flip(-1)
            keep = torch.cat([keep, torch.ones(b, new, dtype=torch.bool, device="cuda")], 1)
            posn = (keep.long().cumsum(1) - 1).clamp_min(0)
            ids = torch.randint(3, vocab, (b, p), device="cuda").masked_fill(~keep[:, :p], pad)
            kcs = [torch.zeros(b, heads, total, dh, dtype=torch.bfloat16, device="cuda") for _ in range(layers)]
            vcs = [torch.zeros(b, heads, total, dh, dtype=torch.bfloat16, device="cuda") for _ in range(layers)]
            slot = torch.arange(total, device="cuda")
            causal = slot[:p, None] >= slot[None, :p]
            # a left-padded slot attends to itself alone, so that no row of the prefill is fully masked
            mask = (causal[None, None] & keep[:, None, None, :p]) | (slot[:p, None] == slot[None, :p])[None, None]
            done = torch.zeros(b, dtype=torch.bool, device="cuda")
            out = []
            with torch.autocast("cuda", dtype=torch.bfloat16):
                x = tok(ids) + pos(posn[:, :p])
                for blk, kc, vc in zip(blocks, kcs, vcs):
                    x = blk(x, kc, vc, 0, mask)
                h = norm(x[:, -1:])
                for i in range(new):
                    logits = _F.linear(h[:, 0], tok.weight).float() / temp
                    srt, idx = logits.sort(-1, descending=True)
                    prob = srt.softmax(-1)
                    drop = (prob.cumsum(-1) - prob) > 0.9
                    g = -torch.log(-torch.log(torch.rand_like(srt).clamp(1e-6, 1.0 - 1e-6)))
                    pick = (srt.masked_fill(drop, -1e4) + g).argmax(-1)
                    nxt = idx.gather(1, pick[:, None])[:, 0]
                    nxt = torch.where(done, pad, nxt)
                    done = done | (nxt == eos)
                    out.append(nxt)
                    if i + 1 == new:
                        break
                    at = p + i
                    x = tok(nxt[:, None]) + pos(posn[:, at:at + 1])
                    m = keep[:, None, None, :at + 1]
                    for blk, kc, vc in zip(blocks, kcs, vcs):
                        x = blk(x, kc, vc, at, m)
                    h = norm(x)
            notes = torch.stack(out, 1)
        notes.tolist()
        del keep, posn, ids, kcs, vcs, slot, causal, mask, done, out, x, h, logits, srt, idx, prob, drop, g, pick
        del nxt, notes

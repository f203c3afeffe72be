"""The hundred-and-eighteenth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch117_b.py are): cosmetics, beauty and personal care, written in torch alone, first half. Selfie skin-concern
segmentation training (a residual U-Net over face crops of drawn resolutions, per-pixel maps of five skin concerns,
a Fitzpatrick skin-type class and a skin-tone colour regression), a hair and face parsing service (a residual encoder
and a feature-pyramid decoder over selfies of drawn resolutions, eleven face and hair classes, per-image class
fractions and the mean hair and lip colours weighted by the class probabilities), fragrance odour prediction
training (a message-passing network over molecular graphs of drawn atom counts with a gated update written out as a
GRU cell, messages summed by index_add, an attention readout per molecule, 96 odour descriptors and a volatility
regression) and foundation shade-matching fine-tuning (a vision transformer over cheek-skin patches of drawn
resolutions, its lower blocks frozen, and a shade-swatch encoder trained against it by a contrastive loss, with an
undertone class). Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or
in reused pinned host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled
choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's
value: lengths, resolutions and batch sizes are fixed on the host, padding handled by masks or by torch.where /
masked_fill, no boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
hair_face_parsing_serve uploads its selfies on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new118.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and
for the CPU smoke run (RECORD_SMOKE=1).
"""

import math

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, PreNormBlock, SideUploads, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- selfie skin-concern segmentation (U-Net)


class _SkinUNet(_nn.Module):
    """A 3x3 stem at full resolution, stride-2 residual blocks down, nearest upsampling with skip concatenation and
    a 3x3 convolution up; per-pixel concern logits, and a skin-type class and a Lab skin tone from the pooled
    lowest level."""

    def __init__(self, widths, n_concern, n_type):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, widths[0], 3, 1, 1, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU())
        self.down = _nn.ModuleList(BasicResBlock(a, w, 2) for a, w in zip(widths[:-1], widths[1:]))
        self.up = _nn.ModuleList(
            _nn.Sequential(_nn.Conv2d(a + w, w, 3, 1, 1, bias=False), _nn.BatchNorm2d(w), _nn.ReLU())
            for a, w in zip(widths[:0:-1], widths[-2::-1]))
        self.seg = _nn.Conv2d(widths[0], n_concern, 1)
        self.skin_type, self.tone = _nn.Linear(widths[-1], n_type), mlp(widths[-1], 128, 3)

    def forward(self, x):
        h, skips = self.stem(x), []
        for blk in self.down:
            skips.append(h)
            h = blk(h)
        z = h.mean((2, 3))
        for blk, skip in zip(self.up, skips[::-1]):
            h = blk(torch.cat([_F.interpolate(h, scale_factor=2, mode="nearest"), skip], 1))
        return self.seg(h).float(), self.skin_type(z).float(), self.tone(z).float()


@_workload("selfie skin-concern segmentation training (random init, a residual U-Net): face crops from selfies of 192-320 px square (drawn per step, a multiple of 32), 4-24 crops a step (drawn, at most 12 x 288^2 pixels), drawn on the device in channels-last; a 3x3 stem of 32 at full resolution, stride-2 residual blocks of 64/128/256, nearest upsampling with skip concatenation and 3x3 convolutions up; per-pixel logits of 5 concerns (acne, dark spots, redness, fine lines, enlarged pores; about 8 % positive pixels) by BCE with a positive weight of 3, a Fitzpatrick skin type (of 6) by cross-entropy and a CIELAB skin tone by an L1 loss from the pooled lowest level; AdamW with a warm-up, clipping, bf16 autocast, 800 steps; the losses read back every 20 steps and every 160 steps a no-grad pass over 8 crops of 320 px with the per-concern Dice overlap at 0.5 and the skin-type accuracy read back")
def selfie_skin_concern_unet_train(rng):
    widths, n_concern, n_type = _smoke([32, 64, 128, 256], [8, 16, 16]), 5, 6
    model = _SkinUNet(widths, n_concern, n_type).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 25))
    lo, hi, budget = _smoke(192, 32), _smoke(320, 64), _smoke(12 * 288 * 288, 3 * 64 * 64)
    pos_w = torch.full((1, n_concern, 1, 1), 3.0, device="cuda")

    def crops(b, r):
        x = torch.randn(b, 3, r, r, device="cuda").contiguous(memory_format=torch.channels_last)
        y = (torch.rand(b, n_concern, r, r, device="cuda") < 0.08).float()
        st = torch.randint(0, n_type, (b,), device="cuda")
        lab = torch.stack([torch.rand(b, device="cuda") * 70 + 25, torch.randn(b, device="cuda") * 6 + 12,
                           torch.randn(b, device="cuda") * 6 + 18], -1) / 50.0
        return x, y, st, lab

    steps = _smoke(800, 3)
    for step in range(steps):
        model.train()
        r = rng.randint(lo // 32, hi // 32) * 32
        b = min(rng.randint(_smoke(4, 1), _smoke(24, 3)), max(1, budget // (r * r)))
        x, y, st, lab = crops(b, r)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            seg, typ, tone = model(x)
        l_seg = _F.binary_cross_entropy_with_logits(seg, y, pos_weight=pos_w)
        l_type = _F.cross_entropy(typ, st)
        l_tone = _F.l1_loss(tone, lab)
        loss = l_seg + 0.3 * l_type + 0.3 * l_tone
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            torch.stack([l_seg.detach(), l_type.detach(), l_tone.detach()]).tolist()
        del x, y, st, lab, seg, typ, tone, l_seg, l_type, l_tone, loss
        if (step + 1) % _smoke(160, 2) == 0:
            model.eval()
            with torch.no_grad():
                x, y, st, lab = crops(_smoke(8, 2), hi)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    seg, typ, tone = model(x)
                p = (torch.sigmoid(seg) > 0.5).float()
                dice = (2 * (p * y).sum((0, 2, 3)) + 1) / (p.sum((0, 2, 3)) + y.sum((0, 2, 3)) + 1)
                out = torch.cat([dice, (typ.argmax(-1) == st).float().mean()[None]])
            out.tolist()
            del x, y, st, lab, seg, typ, tone, p, dice, out


# ---------------------------------------------------------------- hair and face parsing service


class _ParseNet(_nn.Module):
    """A stride-2 stem and stride-2 residual blocks to 1/16, 1x1 lateral convolutions and a top-down pathway with
    nearest upsampling (a feature pyramid) to 1/4, a 3x3 head; class logits bilinearly upsampled to the input."""

    def __init__(self, widths, d, n_cls):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, widths[0], 3, 2, 1, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU())
        self.down = _nn.ModuleList(BasicResBlock(a, w, 2) for a, w in zip(widths[:-1], widths[1:]))
        self.lat = _nn.ModuleList(_nn.Conv2d(w, d, 1) for w in widths[1:])
        self.head = _nn.Sequential(_nn.Conv2d(d, d, 3, 1, 1, bias=False), _nn.BatchNorm2d(d), _nn.ReLU(),
                                   _nn.Conv2d(d, n_cls, 1))

    def forward(self, x):
        h, feats = self.stem(x), []
        for blk in self.down:
            h = blk(h)
            feats.append(h)
        p = self.lat[-1](feats[-1])
        for lat, f in zip(self.lat[-2::-1], feats[-2::-1]):
            p = lat(f) + _F.interpolate(p, scale_factor=2, mode="nearest")
        return _F.interpolate(self.head(p), size=x.shape[-2:], mode="bilinear", align_corners=False)


@_workload("hair and face parsing serving (random init, a residual encoder and a feature-pyramid decoder): 2,400-2,500 requests (drawn) of 1-6 selfies (drawn) at 256-512 px square (drawn per request, a multiple of 64), uint8 RGB uploaded on a side stream from two reused pinned host buffers (filled once, sized for 6 selfies of 512^2) one request ahead (one span, through SideUploads.ahead), normalised on the device in channels-last; a 3x3 stride-2 stem of 32 and stride-2 residual blocks of 64/128/192/256 (to 1/32), 1x1 laterals of 96 and a nearest-upsampling top-down pathway to 1/4, a 3x3 head under bf16 autocast; 11 classes (background, skin, brows, eyes, nose, upper lip, lower lip, hair, ears, neck, clothing) bilinearly upsampled to the input; per selfie the class fractions of the argmax labels (by one_hot), the mean hair colour and mean lip colour weighted by the hair and lip probabilities, and a hair-coverage flag by torch.where; each request's results read back once")
def hair_face_parsing_serve(rng):
    widths, d, n_cls = _smoke([32, 64, 128, 192, 256], [8, 16, 16]), _smoke(96, 16), 11
    lo, hi, max_n = _smoke(256, 64), _smoke(512, 128), _smoke(6, 2)
    model = _ParseNet(widths, d, n_cls).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1) * 255.0
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1) * 255.0
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_n * 3 * hi * hi,), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)

    nreq = rng.randint(_smoke(2400, 3), _smoke(2500, 4))
    plan = [(rng.randint(1, max_n), rng.randint(lo // 64, hi // 64) * 64) for _ in range(nreq)]

    for (n, r), raw in up.ahead(plan, lambda p: (p[0] * 3 * p[1] * p[1],)):
        with torch.no_grad():
            rgb = raw.view(n, 3, r, r).float()
            x = ((rgb - mean) / std).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logit = model(x)
            prob = logit.float().softmax(1)
            frac = _F.one_hot(prob.argmax(1), n_cls).float().mean((1, 2))
            hair = prob[:, 7:8]
            lips = prob[:, 5:6] + prob[:, 6:7]
            hair_rgb = (rgb * hair).sum((2, 3)) / (hair.sum((2, 3)) + 1.0)
            lip_rgb = (rgb * lips).sum((2, 3)) / (lips.sum((2, 3)) + 1.0)
            flag = torch.where(frac[:, 7] > 0.15, 1.0, 0.0)
            out = torch.cat([frac.flatten(), hair_rgb.flatten(), lip_rgb.flatten(), flag])
        out.tolist()
        del raw, rgb, x, logit, prob, frac, hair, lips, hair_rgb, lip_rgb, flag, out


# ---------------------------------------------------------------- fragrance odour prediction (MPNN)


class _OdourMpnn(_nn.Module):
    """Atom and bond embeddings, `steps` rounds of one shared message function (an MLP of both endpoints and the
    bond) summed into the receivers by index_add, and a gated update written out as a GRU cell; an attention readout
    per molecule (scores softmaxed within each molecule by index_add of exponentials); odour logits and a log vapour
    pressure."""

    def __init__(self, n_elem, n_bond, n_feat, d, steps, n_odour):
        super().__init__()
        self.elem, self.bond = _nn.Embedding(n_elem, d), _nn.Embedding(n_bond, d)
        self.feat = _nn.Linear(n_feat, d)
        self.msg = mlp(3 * d, d, d, act=_nn.SiLU)
        self.wx, self.wh = _nn.Linear(d, 3 * d), _nn.Linear(d, 3 * d)
        self.score, self.val = mlp(d, d // 2, 1, act=_nn.Tanh), _nn.Linear(d, d)
        self.odour, self.vap = mlp(d, 2 * d, n_odour, act=_nn.SiLU), mlp(d, d, 1, act=_nn.SiLU)
        self.steps = steps

    def forward(self, elem, feat, bond, snd, rcv, mol, n_mol):
        h = self.elem(elem) + self.feat(feat)
        e = self.bond(bond)
        for _ in range(self.steps):
            m = self.msg(torch.cat([h.index_select(0, snd), h.index_select(0, rcv), e.to(h.dtype)], -1))
            agg = m.new_zeros(h.shape[0], m.shape[1]).index_add_(0, rcv, m)
            xr, xz, xn = self.wx(agg).chunk(3, -1)
            hr, hz, hn = self.wh(h).chunk(3, -1)
            r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
            n = torch.tanh(xn + r * hn)
            h = (1 - z) * n + z * h
        s = self.score(h).float()[:, 0]
        w = torch.exp(s - s.max().detach())
        den = w.new_zeros(n_mol).index_add_(0, mol, w)
        v = self.val(h).float() * w[:, None]
        g = v.new_zeros(n_mol, v.shape[1]).index_add_(0, mol, v) / (den[:, None] + 1e-6)
        return self.odour(g).float(), self.vap(g)[:, 0].float()


@_workload("fragrance odour prediction training (random init, a message-passing neural network): 48-192 fragrance molecules a step (drawn), each of 6-40 heavy atoms (drawn per molecule), element (of 10), 12 numeric atom features (charge, hybridisation, aromaticity, hydrogens...) drawn on the device; a bond from each atom to the next (a ring through the molecule) and 2 more bonds per atom to atoms drawn uniformly on the device within its molecule (from each molecule's size and offset), both directions, with a bond type (of 4); 4 rounds (width 160) of one shared message MLP over both endpoints and the bond, messages summed by index_add (the destination made from the message's dtype), a gated update written out as a GRU cell; an attention readout per molecule (exponentials summed by index_add); 96 odour descriptors (fruity, floral, woody, musky, citrus, green, ...; about 6 % positive) by BCE and a log vapour pressure by a Huber loss; AdamW, clipping, bf16 autocast, 700 steps; the losses read back every 20 steps and every 140 steps a no-grad evaluation of 192 molecules of 40 atoms with the mean odour AUC proxy (positive-minus-negative mean probability) and the vapour-pressure error read back")
def fragrance_odour_mpnn_train(rng):
    n_elem, n_bond, n_feat, n_odour = 10, 4, 12, 96
    d, rounds = _smoke(160, 16), _smoke(4, 2)
    model = _OdourMpnn(n_elem, n_bond, n_feat, d, rounds, n_odour).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    lo, hi, extra = _smoke(6, 3), _smoke(40, 6), 2

    def molecules(sizes):
        n_mol, n = len(sizes), sum(sizes)
        size_t = torch.tensor(sizes, device="cuda")
        off_t = torch.cumsum(size_t, 0) - size_t
        mol = torch.repeat_interleave(torch.arange(n_mol, device="cuda"), size_t, output_size=n)
        local = torch.arange(n, device="cuda") - off_t.index_select(0, mol)
        msize, moff = size_t.index_select(0, mol), off_t.index_select(0, mol)
        chain = moff + torch.remainder(local + 1, msize)
        other = moff[:, None] + (torch.rand(n, extra, device="cuda") * msize[:, None]).long()
        other = torch.minimum(other, (moff + msize - 1)[:, None])
        src = torch.arange(n, device="cuda")[:, None].expand(n, extra + 1).reshape(-1)
        dst = torch.cat([chain[:, None], other], 1).reshape(-1)
        snd, rcv = torch.cat([src, dst]), torch.cat([dst, src])
        bond = torch.randint(0, n_bond, (n * (extra + 1),), device="cuda").repeat(2)
        elem = torch.randint(0, n_elem, (n,), device="cuda")
        feat = torch.randn(n, n_feat, device="cuda")
        y = (torch.rand(n_mol, n_odour, device="cuda") < 0.06).float()
        vap = torch.randn(n_mol, device="cuda") * 1.5 - 1.0
        return elem, feat, bond, snd, rcv, mol, y, vap

    steps = _smoke(700, 3)
    for step in range(steps):
        model.train()
        sizes = [rng.randint(lo, hi) for _ in range(rng.randint(_smoke(48, 2), _smoke(192, 4)))]
        elem, feat, bond, snd, rcv, mol, y, vap = molecules(sizes)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logit, p_vap = model(elem, feat, bond, snd, rcv, mol, len(sizes))
        l_odour = _F.binary_cross_entropy_with_logits(logit, y)
        l_vap = _F.huber_loss(p_vap, vap)
        loss = l_odour + 0.2 * l_vap
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_odour.detach(), l_vap.detach()]).tolist()
        del elem, feat, bond, snd, rcv, mol, y, vap, logit, p_vap, l_odour, l_vap, loss
        if (step + 1) % _smoke(140, 2) == 0:
            model.eval()
            with torch.no_grad():
                nb = _smoke(192, 3)
                elem, feat, bond, snd, rcv, mol, y, vap = molecules([hi] * nb)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logit, p_vap = model(elem, feat, bond, snd, rcv, mol, nb)
                p = torch.sigmoid(logit)
                auc = (p * y).sum() / y.sum().clamp(min=1) - (p * (1 - y)).sum() / (1 - y).sum().clamp(min=1)
                out = torch.stack([auc, (p_vap - vap).abs().mean()])
            out.tolist()
            del elem, feat, bond, snd, rcv, mol, y, vap, logit, p_vap, p, auc, out


# ---------------------------------------------------------------- foundation shade-matching fine-tuning


class _SkinPatchViT(_nn.Module):
    """8 px patches by a strided convolution, a learned 2-d position table (max_grid x max_grid) sliced to the
    step's grid, a lighting-condition embedding on a class token, pre-norm blocks; a projected, normalised
    embedding and undertone logits from the class token."""

    def __init__(self, d, heads, layers, max_grid, n_light, d_emb, n_under):
        super().__init__()
        self.patch = _nn.Conv2d(3, d, 8, 8)
        self.pos = _nn.Parameter(torch.randn(max_grid, max_grid, d) * 0.02)
        self.cls, self.light = _nn.Parameter(torch.zeros(1, 1, d)), _nn.Embedding(n_light, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.emb, self.under = _nn.Linear(d, d_emb), _nn.Linear(d, n_under)

    def forward(self, x, light):
        t = self.patch(x)
        b, d, gh, gw = t.shape
        t = t.flatten(2).transpose(1, 2) + self.pos[:gh, :gw].reshape(1, gh * gw, d)
        z = torch.cat([self.cls.expand(b, -1, -1) + self.light(light)[:, None], t], 1)
        for blk in self.blocks:
            z = blk(z)
        c = self.norm(z[:, 0])
        return _F.normalize(self.emb(c).float(), dim=-1), self.under(c).float()


class _ShadeEncoder(_nn.Module):
    """A shade swatch: its CIELAB colour and coverage by a linear layer, undertone, finish and brand embeddings, an
    MLP to the normalised joint embedding."""

    def __init__(self, n_num, n_under, n_finish, n_brand, d, d_emb):
        super().__init__()
        self.num = _nn.Linear(n_num, d)
        self.under, self.finish, self.brand = (_nn.Embedding(n_under, d), _nn.Embedding(n_finish, d),
                                               _nn.Embedding(n_brand, d))
        self.mlp = mlp(d, 2 * d, d_emb, layers=3, act=_nn.GELU, norm=True)

    def forward(self, num, under, finish, brand):
        h = self.num(num) + self.under(under) + self.finish(finish) + self.brand(brand)
        return _F.normalize(self.mlp(h).float(), dim=-1)


@_workload("foundation shade-matching fine-tuning (random init standing in for a pretrained backbone, a vision transformer and a swatch encoder by a contrastive loss): 64-256 pairs a step (drawn, at most 24,576 patch tokens) of a cheek-skin patch at 64-128 px square (drawn per step, a multiple of 16) under one of 5 lighting conditions and its matched foundation shade (CIELAB colour and coverage, undertone of 3, finish of 4, brand of 60), drawn on the device; 8 px patches, a learned 16 x 16 position table sliced to the grid, 6 pre-norm blocks (width 256, 8 heads) with the patch embedding, the position table and the first 3 blocks frozen; a 3-layer swatch MLP; a symmetric InfoNCE over in-batch negatives with a learned temperature and the skin undertone by cross-entropy; AdamW with a lower rate for the unfrozen transformer blocks, clipping, bf16 autocast, 450 steps; the losses read back every 20 steps and every 90 steps a no-grad retrieval of 128 skin patches of 128 px against a catalogue of 1,024 shades with the top-1 and top-5 match rates (by topk) read back")
def shade_match_vit_finetune(rng):
    d, heads, layers, d_emb = _smoke(256, 32), _smoke(8, 2), _smoke(6, 2), _smoke(128, 16)
    n_light, n_under, n_finish, n_brand, n_num = 5, 3, 4, 60, 4
    lo, hi, budget = _smoke(64, 16), _smoke(128, 32), _smoke(24576, 64)
    vit = _SkinPatchViT(d, heads, layers, hi // 8, n_light, d_emb, n_under).cuda()
    swatch = _ShadeEncoder(n_num, n_under, n_finish, n_brand, _smoke(192, 16), d_emb).cuda()
    frozen = [vit.patch] + list(vit.blocks[:layers // 2])
    vit.pos.requires_grad_(False)
    for m in frozen:
        m.requires_grad_(False)
    log_t = _nn.Parameter(torch.tensor(math.log(1 / 0.07), device="cuda"))
    head_params = [p for n_, p in vit.named_parameters() if p.requires_grad and not n_.startswith("blocks")]
    block_params = [p for p in vit.blocks.parameters() if p.requires_grad]
    opt = torch.optim.AdamW([{"params": block_params, "lr": 5e-5},
                             {"params": head_params + list(swatch.parameters()) + [log_t], "lr": 3e-4}],
                            weight_decay=0.01)
    params = block_params + head_params + list(swatch.parameters()) + [log_t]

    def pairs(b, r):
        x = torch.randn(b, 3, r, r, device="cuda")
        light = torch.randint(0, n_light, (b,), device="cuda")
        under = torch.randint(0, n_under, (b,), device="cuda")
        num = torch.randn(b, n_num, device="cuda")
        finish = torch.randint(0, n_finish, (b,), device="cuda")
        brand = torch.randint(0, n_brand, (b,), device="cuda")
        return x, light, under, num, finish, brand

    steps = _smoke(450, 3)
    for step in range(steps):
        vit.train()
        swatch.train()
        r = rng.randint(lo // 16, hi // 16) * 16
        b = min(rng.randint(_smoke(64, 2), _smoke(256, 4)), max(2, budget // ((r // 8) ** 2 + 1)))
        x, light, under, num, finish, brand = pairs(b, r)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            zs, u_logit = vit(x, light)
            zw = swatch(num, under, finish, brand)
        logits = zs @ zw.t() * log_t.exp().clamp(max=100.0)
        lab = torch.arange(b, device="cuda")
        l_nce = 0.5 * (_F.cross_entropy(logits, lab) + _F.cross_entropy(logits.t(), lab))
        l_under = _F.cross_entropy(u_logit, under)
        loss = l_nce + 0.2 * l_under
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_nce.detach(), l_under.detach()]).tolist()
        del x, light, under, num, finish, brand, zs, u_logit, zw, logits, lab, l_nce, l_under, loss
        if (step + 1) % _smoke(90, 2) == 0:
            vit.eval()
            swatch.eval()
            with torch.no_grad():
                nq, ncat = _smoke(128, 3), _smoke(1024, 8)
                _, _, under, num, finish, brand = pairs(ncat, 8)
                x, light = torch.randn(nq, 3, hi, hi, device="cuda"), torch.randint(0, n_light, (nq,), device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    zs, _ = vit(x, light)
                    zw = swatch(num, under, finish, brand)
                top = (zs @ zw.t()).topk(5, -1).indices
                want = torch.arange(nq, device="cuda")[:, None]
                out = torch.stack([(top[:, :1] == want).float().sum(-1).mean(), (top == want).float().sum(-1).mean()])
            out.tolist()
            del x, light, under, num, finish, brand, zs, zw, top, want, out

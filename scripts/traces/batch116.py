"""The hundred-and-sixteenth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch115_b.py are): dentistry and oral health, written in torch alone, first half. Bitewing caries segmentation
training (a residual U-Net over bitewing radiographs of drawn sizes, enamel, dentin, caries and restoration classes
per pixel, cross-entropy with a soft Dice on the lesion classes), intraoral-scan tooth segmentation training (a point
transformer over the vertices of intraoral scans of drawn point counts: k-nearest-neighbour graphs by topk, vector
attention over gathered neighbours with relative-position encodings, a tooth label and a centroid offset per point),
a panoramic tooth-charting service (a convolutional stem and a transformer encoder over panoramic radiographs of
drawn sizes with 2-d sine-cosine positions, 32 learned tooth queries decoded DETR-style into presence, FDI number,
box and condition) and periodontal charting risk forecasting training (a per-visit encoder of full-mouth six-site
charts and a two-layer GRU written out visit by visit, next-visit probing depths, tooth loss and a stage).
Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths,
resolutions and batch sizes are fixed on the host, padding handled by masks or by torch.where / masked_fill, no
boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
panoramic_tooth_chart_serve uploads its radiographs on a side stream (two reused pinned host buffers, one request
ahead, through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16
autocast. Every embedding and position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new116.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and
for the CPU smoke run (RECORD_SMOKE=1).
"""

import math

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, PreNormBlock, SideUploads, _mha, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- bitewing caries segmentation (residual U-Net)


class _BitewingUNet(_nn.Module):
    """A stride-2 stem, four stages of two residual blocks (1/2 to 1/16), a decoder of nearest upsampling,
    concatenated skips and 3x3 convolutions back to 1/2, a bilinear upsampling of the class logits to full size."""

    def __init__(self, widths, n_cls):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(1, widths[0], 3, 2, 1, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU())
        cins = [widths[0]] + widths[:-1]
        self.stages = _nn.ModuleList(
            _nn.Sequential(BasicResBlock(a, w, 1 if i == 0 else 2), BasicResBlock(w, w, 1))
            for i, (a, w) in enumerate(zip(cins, widths)))
        self.up = _nn.ModuleList(
            _nn.Sequential(_nn.Conv2d(a + w, w, 3, 1, 1, bias=False), _nn.BatchNorm2d(w), _nn.ReLU())
            for a, w in zip(widths[:0:-1], widths[-2::-1]))
        self.seg = _nn.Conv2d(widths[0], n_cls, 1)

    def forward(self, x):
        feats, y = [], self.stem(x)
        for st in self.stages:
            y = st(y)
            feats.append(y)
        for up, skip in zip(self.up, feats[-2::-1]):
            y = up(torch.cat([_F.interpolate(y, scale_factor=2, mode="nearest"), skip], 1))
        return _F.interpolate(self.seg(y), scale_factor=2, mode="bilinear", align_corners=False).float()


@_workload("bitewing caries segmentation training (random init, a residual U-Net): bitewing radiographs of 256-448 px high and 320-576 px wide (both drawn per step, multiples of 64), 2-12 films a step (drawn, at most 8 x 384 x 512 pixels), one channel drawn on the device in channels-last; a stride-2 stem (32) and four stages of two basic residual blocks (32/64/128/256 channels, 1/2 to 1/16), a decoder of nearest upsampling, skips and 3x3 convolutions back to 1/2, the logits bilinearly upsampled to full size; 6 classes per pixel (background, enamel, dentin, pulp, caries lesion, restoration) drawn as blocky maps (labels drawn at 1/16 and upsampled by nearest); cross-entropy plus a soft Dice loss on the lesion and restoration classes; AdamW, clipping, bf16 autocast, 550 steps; the loss read back every 20 steps and every 110 steps a no-grad pass over 2 films of 448 x 576 with each film's caries-pixel fraction (by argmax) and maximum caries probability read back")
def bitewing_caries_seg_train(rng):
    widths, n_cls = _smoke([32, 64, 128, 256], [8, 16, 16, 32]), 6
    model = _BitewingUNet(widths, n_cls).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=1e-4)
    h_lo, h_hi, w_lo, w_hi = _smoke(256, 64), _smoke(448, 128), _smoke(320, 64), _smoke(576, 128)
    budget = _smoke(8 * 384 * 512, 2 * 128 * 128)

    def films(b, h, w):
        x = torch.randn(b, 1, h, w, device="cuda").contiguous(memory_format=torch.channels_last)
        lab = torch.randint(0, n_cls, (b, 1, h // 16, w // 16), device="cuda").float()
        lab = _F.interpolate(lab, size=(h, w), mode="nearest")[:, 0].long()
        return x, lab

    steps = _smoke(550, 3)
    for step in range(steps):
        model.train()
        h, w = rng.randint(h_lo // 64, h_hi // 64) * 64, rng.randint(w_lo // 64, w_hi // 64) * 64
        b = rng.randint(2, max(2, min(_smoke(12, 2), budget // (h * w))))
        x, lab = films(b, h, w)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logit = model(x)
        ce = _F.cross_entropy(logit, lab)
        p = logit.softmax(1)[:, 4:]
        t = _F.one_hot(lab, n_cls).permute(0, 3, 1, 2)[:, 4:].float()
        dice = 1 - (2 * (p * t).sum((0, 2, 3)) + 1) / (p.sum((0, 2, 3)) + t.sum((0, 2, 3)) + 1)
        loss = ce + dice.mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        if step % 20 == 0:
            loss.detach().item()
        del x, lab, logit, ce, p, t, dice, loss
        if (step + 1) % _smoke(110, 2) == 0:
            model.eval()
            with torch.no_grad():
                x, _ = films(2, h_hi, w_hi)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logit = model(x)
                prob = logit.softmax(1)
                caries = (logit.argmax(1) == 4).float().mean((1, 2))
                out = torch.cat([caries, prob[:, 4].amax((1, 2))])
            out.tolist()
            del x, logit, prob, caries, out


# ---------------------------------------------------------------- intraoral-scan tooth segmentation (point transformer)


class _PointTransformerLayer(_nn.Module):
    """Vector attention over each point's k gathered neighbours: a relative-position MLP added to the key
    differences and the values, per-channel weights by an MLP and a softmax over the neighbours; residual, norm."""

    def __init__(self, d):
        super().__init__()
        self.qkv = _nn.Linear(d, 3 * d)
        self.pos = mlp(3, d, d)
        self.attn = mlp(d, d, d)
        self.out, self.norm = _nn.Linear(d, d), _nn.LayerNorm(d)

    def forward(self, x, xyz, nbr):
        b, n, d = x.shape
        k = nbr.shape[-1]
        q, kk, v = self.qkv(x).chunk(3, -1)
        flat = nbr.reshape(-1)
        kn = kk.reshape(b * n, d).index_select(0, flat).view(b, n, k, d)
        vn = v.reshape(b * n, d).index_select(0, flat).view(b, n, k, d)
        rel = xyz[:, :, None] - xyz.reshape(b * n, 3).index_select(0, flat).view(b, n, k, 3)
        pe = self.pos(rel.to(x.dtype))
        w = self.attn(q[:, :, None] - kn + pe).float().softmax(2).to(vn.dtype)
        return self.norm(x + self.out((w * (vn + pe)).sum(2)))


class _ScanSegNet(_nn.Module):
    def __init__(self, f_in, d, layers, n_cls):
        super().__init__()
        self.inp = mlp(f_in, d, d)
        self.layers = _nn.ModuleList(_PointTransformerLayer(d) for _ in range(layers))
        self.cls, self.off = mlp(2 * d, d, n_cls), mlp(2 * d, d, 3)

    def forward(self, feats, xyz, nbr, keep):
        x = self.inp(feats)
        for layer in self.layers:
            x = layer(x, xyz, nbr)
        w = keep[..., None].to(x.dtype)
        g = ((x * w).sum(1) / w.sum(1).clamp(min=1))[:, None].expand_as(x)
        z = torch.cat([x, g], -1)
        return self.cls(z).float(), self.off(z).float()


def _scan_knn(xyz, keep, k):
    """Each point's k nearest real neighbours (itself and padded points pushed to infinity), as flat row indices
    into the (b * n) points."""
    b, n, _ = xyz.shape
    d2 = (xyz[:, :, None] - xyz[:, None]).pow(2).sum(-1)
    d2 = d2.masked_fill(~keep[:, None, :], float("inf"))
    d2 = d2.masked_fill(torch.eye(n, dtype=torch.bool, device=xyz.device)[None], float("inf"))
    idx = d2.topk(k, dim=-1, largest=False).indices
    return idx + (torch.arange(b, device=xyz.device) * n)[:, None, None]


@_workload("intraoral-scan tooth segmentation training (random init, a point transformer over scan vertices): 2-12 intraoral scans a step (drawn, at most 12,288 padded points a step), each of 1,024-4,096 vertices (the step's padded count drawn, a multiple of 256, each scan's own from half of it to it, masked), xyz on a drawn dental arch (a parabola with noise), normals and curvature drawn on the device; the 16 nearest real neighbours of every vertex by topk over masked squared distances (itself and pads at infinity); an input MLP and 4 point-transformer layers (width 128: vector attention over the gathered neighbours by index_select, relative-position MLP, per-channel softmax over the neighbours, residual LayerNorm); the masked mean of the scan concatenated; 17 labels per vertex (gingiva and 16 tooth positions of the jaw) by cross-entropy and the offset to the tooth centroid by smooth L1, padded vertices weighted out; AdamW, clipping, bf16 autocast, 540 steps; the losses read back every 20 steps and every 108 steps a no-grad pass over 3 scans of 4,096 vertices with each scan's label histogram (argmax counts by one_hot) read back")
def intraoral_scan_tooth_seg_train(rng):
    d, layers, k, n_cls = _smoke(128, 16), _smoke(4, 1), _smoke(16, 4), 17
    model = _ScanSegNet(7, d, layers, n_cls).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    lo, hi, mult, budget = _smoke(1024, 64), _smoke(4096, 128), _smoke(256, 32), _smoke(12288, 256)

    def scans(counts, n):
        b = len(counts)
        keep = keep_mask(counts, n)
        s = torch.rand(b, n, device="cuda") * 2 - 1
        xyz = torch.stack([s * 25.0, 20.0 * (1 - s * s), torch.randn(b, n, device="cuda") * 4.0], -1)
        xyz = (xyz + torch.randn_like(xyz)) * keep[..., None]
        nrm = _F.normalize(torch.randn(b, n, 3, device="cuda"), dim=-1)
        feats = torch.cat([xyz / 25.0, nrm, torch.randn(b, n, 1, device="cuda")], -1) * keep[..., None]
        lab = torch.randint(0, n_cls, (b, n), device="cuda")
        off = torch.randn(b, n, 3, device="cuda") * 3.0
        return xyz, feats, keep, _scan_knn(xyz, keep, k), lab, off

    steps = _smoke(540, 3)
    for step in range(steps):
        model.train()
        n = rng.randint(lo // mult, hi // mult) * mult
        b = rng.randint(2, max(2, min(_smoke(12, 2), budget // n)))
        xyz, feats, keep, nbr, lab, off = scans([rng.randint(n // 2, n) for _ in range(b)], n)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logit, p_off = model(feats, xyz, nbr, keep)
        w = keep.float()
        l_cls = (_F.cross_entropy(logit.transpose(1, 2), lab, reduction="none") * w).sum() / w.sum()
        l_off = (_F.smooth_l1_loss(p_off, off, reduction="none").sum(-1) * w).sum() / w.sum()
        loss = l_cls + 0.1 * l_off
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_cls.detach(), l_off.detach()]).tolist()
        del xyz, feats, keep, nbr, lab, off, logit, p_off, w, l_cls, l_off, loss
        if (step + 1) % _smoke(108, 2) == 0:
            model.eval()
            with torch.no_grad():
                xyz, feats, keep, nbr, _, _ = scans([hi] * 3, hi)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logit, _ = model(feats, xyz, nbr, keep)
                hist = _F.one_hot(logit.argmax(-1), n_cls).sum(1)
            hist.tolist()
            del xyz, feats, keep, nbr, logit, hist


# ---------------------------------------------------------------- panoramic tooth charting service (DETR-style)


class _QueryBlock(_nn.Module):
    """A DETR-style decoder block: self-attention among the queries, cross-attention over the encoded image,
    a GELU MLP, each pre-norm and residual."""

    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.n1, self.n2, self.n3 = _nn.LayerNorm(d), _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.o1 = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.q, self.kv, self.o2 = _nn.Linear(d, d), _nn.Linear(d, 2 * d), _nn.Linear(d, d)
        self.ff = mlp(d, 4 * d, d, act=_nn.GELU)

    def forward(self, x, mem):
        q, k, v = self.qkv(self.n1(x)).chunk(3, -1)
        x = x + self.o1(_mha(q, k, v, self.h))
        k, v = self.kv(mem).chunk(2, -1)
        x = x + self.o2(_mha(self.q(self.n2(x)), k, v, self.h))
        return x + self.ff(self.n3(x))


class _PanoCharter(_nn.Module):
    """Two stride-2 convolutions and a 4x4 patch convolution (1/16), 2-d sine-cosine positions, pre-norm encoder
    blocks; learned tooth queries through decoder blocks; presence, FDI number, box and condition heads."""

    def __init__(self, d, heads, enc_layers, dec_layers, n_query, n_fdi, n_cond):
        super().__init__()
        self.d = d
        self.stem = _nn.Sequential(_nn.Conv2d(1, 32, 3, 2, 1, bias=False), _nn.BatchNorm2d(32), _nn.ReLU(),
                                   _nn.Conv2d(32, 64, 3, 2, 1, bias=False), _nn.BatchNorm2d(64), _nn.ReLU(),
                                   _nn.Conv2d(64, d, 4, 4))
        self.enc = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(enc_layers))
        self.norm = _nn.LayerNorm(d)
        self.queries = _nn.Embedding(n_query, d)
        self.dec = _nn.ModuleList(_QueryBlock(d, heads) for _ in range(dec_layers))
        self.head = _nn.Sequential(_nn.LayerNorm(d), _nn.Linear(d, 1 + n_fdi + 4 + n_cond))

    def pos2d(self, h, w, device):
        q = self.d // 4
        freqs = torch.exp(-math.log(10000) * torch.arange(q, device=device, dtype=torch.float32) / q)
        ay = torch.arange(h, device=device, dtype=torch.float32)[:, None] * freqs[None]
        ax = torch.arange(w, device=device, dtype=torch.float32)[:, None] * freqs[None]
        py = torch.cat([ay.sin(), ay.cos()], -1)[:, None].expand(h, w, 2 * q)
        px = torch.cat([ax.sin(), ax.cos()], -1)[None].expand(h, w, 2 * q)
        return torch.cat([py, px], -1).reshape(h * w, self.d)

    def forward(self, x):
        f = self.stem(x)
        b, d, h, w = f.shape
        t = f.flatten(2).transpose(1, 2) + self.pos2d(h, w, x.device).to(f.dtype)[None]
        for blk in self.enc:
            t = blk(t)
        mem = self.norm(t)
        qy = self.queries.weight[None].expand(b, -1, -1)
        for blk in self.dec:
            qy = blk(qy, mem)
        return self.head(qy).float()


@_workload("panoramic tooth-charting serving (random init, a convolutional stem, a transformer encoder and a DETR-style tooth-query decoder): 880-920 requests (drawn) of 1-4 panoramic radiographs each (drawn), the request's films 384-640 px high (drawn per request, a multiple of 64) and twice as wide, uint8 uploaded on a side stream from two reused pinned host buffers (filled once, sized for 4 films of 640 x 1,280) one request ahead (one span, through SideUploads.ahead), contrast-normalised on the device; two stride-2 convolutions (32, 64) and a 4x4 patch convolution to 1/16 (width 256, up to 40 x 80 tokens), 2-d sine-cosine positions computed for the drawn size, 4 pre-norm encoder blocks (8 heads); 32 learned tooth queries through 3 decoder blocks (query self-attention, cross-attention over the image tokens); per query a presence logit, the FDI tooth number (of 32), a box (sigmoid) and a condition (of 7: sound, caries, restoration, crown, root-canal filled, implant, residual root), bf16 autocast; per film the teeth present (probability over 0.5), the most likely FDI number and condition of each query and the boxes, with the request's count of teeth charted as carious, read back per request")
def panoramic_tooth_chart_serve(rng):
    d, heads, enc_l, dec_l = _smoke(256, 32), _smoke(8, 2), _smoke(4, 1), _smoke(3, 1)
    n_query, n_fdi, n_cond = _smoke(32, 8), 32, 7
    model = _PanoCharter(d, heads, enc_l, dec_l, n_query, n_fdi, n_cond).cuda().eval()
    model.requires_grad_(False)
    max_f, h_lo, h_hi = _smoke(4, 2), _smoke(384, 64), _smoke(640, 128)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_f * h_hi * 2 * h_hi,), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)

    nreq = rng.randint(_smoke(880, 3), _smoke(920, 4))
    plan = [(rng.randint(1, max_f), rng.randint(h_lo // 64, h_hi // 64) * 64) for _ in range(nreq)]
    for (f, h), raw in up.ahead(plan, lambda p: (p[0] * p[1] * 2 * p[1],)):
        with torch.no_grad():
            x = raw.view(f, 1, h, 2 * h).float()
            mu, sd = x.mean((2, 3), keepdim=True), x.std((2, 3), keepdim=True)
            x = (x - mu) / (sd + 1.0)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                y = model(x)
            present = torch.sigmoid(y[..., 0])
            fdi = y[..., 1:1 + n_fdi].argmax(-1)
            box = torch.sigmoid(y[..., 1 + n_fdi:5 + n_fdi])
            cond = y[..., 5 + n_fdi:].argmax(-1)
            carious = ((cond == 1) & (present > 0.5)).sum()
            out = torch.cat([(present > 0.5).float().flatten(), fdi.float().flatten(), cond.float().flatten(),
                             box.flatten(), carious.float()[None]])
        out.tolist()
        del raw, x, mu, sd, y, present, fdi, box, cond, carious, out


# ---------------------------------------------------------------- periodontal charting risk forecasting (GRU)


class _GRUCell(_nn.Module):
    """A GRU cell written out: input and hidden projections, reset and update gates."""

    def __init__(self, d_in, d):
        super().__init__()
        self.x, self.h = _nn.Linear(d_in, 3 * d), _nn.Linear(d, 3 * d)

    def forward(self, x, h):
        xr, xz, xn = self.x(x).chunk(3, -1)
        hr, hz, hn = self.h(h).chunk(3, -1)
        r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
        return (1 - z) * torch.tanh(xn + r * hn) + z * h


class _PerioNet(_nn.Module):
    """Each visit's chart (six-site probing depths, recession and bleeding, per-tooth mobility, furcation and
    presence, the gap since the last visit) through an MLP with the patient's risk factors; two GRU cells run visit
    by visit (input projections of all visits at once), padded visits keeping the state; next-visit probing-depth
    change per site, tooth-loss logits and a stage from the last state."""

    def __init__(self, n_site, n_tooth, n_static, d, n_stage):
        super().__init__()
        self.smoke, self.hba1c = _nn.Embedding(3, 16), _nn.Linear(n_static, 16)
        d_in = 3 * n_site + 3 * n_tooth + 1 + 32
        self.inp = _nn.Sequential(_nn.Linear(d_in, d), _nn.LayerNorm(d), _nn.GELU(), _nn.Linear(d, d))
        self.cells = _nn.ModuleList([_GRUCell(d, d), _GRUCell(d, d)])
        self.pd, self.loss_head = _nn.Linear(d, n_site), _nn.Linear(d, n_tooth)
        self.stage = mlp(d, d, n_stage, act=_nn.GELU)
        self.d = d

    def forward(self, chart, smoke, static, keep):
        b, t, _ = chart.shape
        s = torch.cat([self.smoke(smoke), self.hba1c(static)], -1)[:, None].expand(b, t, 32)
        x = self.inp(torch.cat([chart, s.to(chart.dtype)], -1))
        hs = [x.new_zeros(b, self.d, dtype=torch.float32) for _ in self.cells]
        outs = []
        for v in range(t):
            z = x[:, v]
            for i, cell in enumerate(self.cells):
                z = torch.where(keep[:, v, None], cell(z, hs[i]), hs[i])
                hs[i] = z
            outs.append(z)
        y = torch.stack(outs, 1)
        return self.pd(y).float(), self.loss_head(y).float(), self.stage(hs[-1]).float()


@_workload("periodontal charting risk forecasting training (random init, a visit encoder and a two-layer GRU written out visit by visit): 64-384 patients a step (drawn), each with 3-20 recall visits (drawn per patient, padded to the step's longest, masked); per visit a full-mouth chart of 32 teeth x 6 sites (probing depth, recession and bleeding on probing, 192 each), per-tooth mobility, furcation grade and presence (32 each) and the time since the last visit (scaled) drawn on the device, per patient a smoking status (of 3) and 4 risk covariates (HbA1c, age, plaque index, family history); an MLP (width 256) per visit, two GRU cells of width 256 run visit by visit with padded visits keeping the state by torch.where; the next visit's probing-depth change per site (smooth L1, masked to real next visits and present teeth), tooth loss by the next visit (binary cross-entropy per tooth, masked) and the periodontitis stage (of 4, cross-entropy) from the last state; AdamW, clipping, bf16 autocast, 155 steps; the losses read back every 10 steps and every 31 steps a no-grad evaluation of 512 patients of 20 visits with the depth-change mean absolute error and the stage accuracy read back")
def periodontal_chart_gru_train(rng):
    n_tooth, n_site, n_static, n_stage = 32, 192, 4, 4
    d = _smoke(256, 16)
    model = _PerioNet(n_site, n_tooth, n_static, d, n_stage).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    v_lo, v_hi = _smoke(3, 2), _smoke(20, 4)

    def patients(visits):
        b, t = len(visits), max(visits)
        keep = keep_mask(visits, t)
        nxt = keep_mask([v - 1 for v in visits], t)  # visits that have a next visit
        present = (torch.rand(b, 1, n_tooth, device="cuda") > 0.1).float().expand(b, t, n_tooth)
        pd = torch.randint(1, 10, (b, t, n_site), device="cuda").float() / 10.0
        rec = torch.randint(0, 6, (b, t, n_site), device="cuda").float() / 6.0
        bop = torch.randint(0, 2, (b, t, n_site), device="cuda").float()
        mob, furc = torch.randint(0, 4, (b, t, n_tooth), device="cuda"), torch.randint(0, 4, (b, t, n_tooth),
                                                                                        device="cuda")
        gap = torch.rand(b, t, 1, device="cuda") * 2.0
        chart = torch.cat([pd, rec, bop, mob.float() / 3.0, furc.float() / 3.0, present, gap], -1) * keep[..., None]
        smoke = torch.randint(0, 3, (b,), device="cuda")
        static = torch.randn(b, n_static, device="cuda")
        d_pd = torch.randn(b, t, n_site, device="cuda") * 0.5
        lost = (torch.rand(b, t, n_tooth, device="cuda") < 0.02).float()
        stage = torch.randint(0, n_stage, (b,), device="cuda")
        site_w = (nxt[..., None].float() * present.repeat_interleave(6, -1))
        return chart, smoke, static, keep, d_pd, lost, stage, site_w, nxt[..., None].float() * present

    steps = _smoke(155, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(64, 2), _smoke(384, 4))
        chart, smoke, static, keep, d_pd, lost, stage, site_w, tooth_w = patients(
            [rng.randint(v_lo, v_hi) for _ in range(b)])
        with torch.autocast("cuda", dtype=torch.bfloat16):
            p_pd, p_lost, p_stage = model(chart, smoke, static, keep)
        l_pd = (_F.smooth_l1_loss(p_pd, d_pd, reduction="none") * site_w).sum() / site_w.sum().clamp(min=1)
        l_lost = (_F.binary_cross_entropy_with_logits(p_lost, lost, reduction="none") * tooth_w).sum() \
            / tooth_w.sum().clamp(min=1)
        l_stage = _F.cross_entropy(p_stage, stage)
        loss = l_pd + l_lost + 0.5 * l_stage
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_pd.detach(), l_lost.detach(), l_stage.detach()]).tolist()
        del chart, smoke, static, keep, d_pd, lost, stage, site_w, tooth_w, p_pd, p_lost, p_stage
        del l_pd, l_lost, l_stage, loss
        if (step + 1) % _smoke(31, 2) == 0:
            model.eval()
            with torch.no_grad():
                chart, smoke, static, keep, d_pd, _, stage, site_w, _ = patients([v_hi] * _smoke(512, 3))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    p_pd, _, p_stage = model(chart, smoke, static, keep)
                mae = ((p_pd - d_pd).abs() * site_w).sum() / site_w.sum().clamp(min=1)
                out = torch.stack([mae, (p_stage.argmax(-1) == stage).float().mean()])
            out.tolist()
            del chart, smoke, static, keep, d_pd, stage, site_w, p_pd, p_stage, mae, out

"""The hundred-and-twenty-eighth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py
to batch127_b.py are): textiles, weaving and laundry, written in torch alone, first half. A loom fabric defect
inspection service (a residual convolutional network over greige-fabric camera frames of drawn sizes, a defect
class per 16-pixel tile, each frame's defect areas, weft bars and warp streaks, its four-point-system demerits and
the pick-density variation), yarn evenness training (a dilated causal temporal convolutional network over
capacitive evenness-tester signals of drawn lengths, a fault class per sample, each yarn's CV%, count and grade), a
knitting chart sampler (a transformer generating stitch charts row by row, each row's stitches at once, attending
to a key/value cache of the rows before, with temperature and top-k sampling) and a dye recipe colour matching
service (a Kubelka-Munk mixing model with a frozen correction MLP, the dye concentrations of each target shade
fitted by Adam against its CIELAB colour difference).
Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the inspection service), `rng` the workload's random.Random for every shape, count and sampled
choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's
value: lengths, resolutions and batch sizes are fixed on the host, padding handled by masks or by torch.where /
masked_fill, no boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
loom_fabric_defect_serve uploads its frames on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every embedding and position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new128.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and
for the CPU smoke run (RECORD_SMOKE=1).
"""

import math

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, SideUploads, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- loom fabric defect inspection (residual convnet)


class _LoomNet(_nn.Module):
    """A strided 5x5 stem with batch norm, three strided residual stages to 1/16, a 1x1 to a class per 16-pixel
    tile."""

    def __init__(self, widths, n_cls):
        super().__init__()
        c0 = widths[0]
        self.stem = _nn.Sequential(_nn.Conv2d(1, c0, 5, 2, 2, bias=False), _nn.BatchNorm2d(c0), _nn.ReLU())
        self.stages = _nn.Sequential(*[BasicResBlock(a, b, 2) for a, b in zip(widths[:-1], widths[1:])])
        self.head = _nn.Conv2d(widths[-1], n_cls, 1)

    def forward(self, x):
        return self.head(self.stages(self.stem(x))).float()


@_workload("loom fabric defect inspection serving (random init, a residual convolutional network over camera frames of greige fabric on the loom and the inspection frame): 3,180-3,240 requests (drawn) of 1-4 frames (drawn) of 256, 384 or 512 lines (drawn per request) by 1,024, 1,536 or 2,048 pixels (drawn per request), grey uint8 frames uploaded on a side stream from two reused pinned host buffers (filled once, sized for 4 x 512 x 2,048) one request ahead (one span, through SideUploads.ahead), normalised on the device; a strided 5x5 stem (24 channels, batch norm), three strided residual stages (48, 96, 128 channels) to 1/16 and a 1x1 to 8 classes per 16-pixel tile (sound, broken end, missing pick, float, hole, slub, oil stain, reed mark) by softmax, in eval mode under bf16 autocast; per frame each defect class's area (tiles above 0.5), weft bars (tile rows whose mean defect probability passes 0.3) and warp streaks (tile columns likewise), the worst 64-pixel patch by average pooling, four-point-system demerits from each tile row's defect length by bucketize, and the pick-density variation from the spread of the raw frame's line means; each request's figures read back once")
def loom_fabric_defect_serve(rng):
    widths, n_cls = _smoke([24, 48, 96, 128], [4, 8, 8, 8]), 8
    max_n = _smoke(4, 2)
    h_opts, w_opts = _smoke([256, 384, 512], [32, 64]), _smoke([1024, 1536, 2048], [64, 96])
    model = _LoomNet(widths, n_cls).cuda().eval()
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_n * max(h_opts) * max(w_opts),), dtype=torch.uint8, generator=gen)
            .pin_memory() for _ in range(2)]
    up = SideUploads(host)
    bounds = torch.tensor([3.0, 6.0, 9.0], device="cuda")

    nreq = rng.randint(_smoke(3180, 3), _smoke(3240, 4))
    plan = [(rng.randint(1, max_n), rng.choice(h_opts), rng.choice(w_opts)) for _ in range(nreq)]

    for (n, hh, ww), raw in up.ahead(plan, lambda p: (p[0] * p[1] * p[2],)):
        with torch.no_grad():
            x = (raw.view(n, 1, hh, ww).float() - 128.0) / 64.0
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(x)
            prob = logits.softmax(1)
            defect = 1.0 - prob[:, 0]
            area = (prob[:, 1:] > 0.5).float().mean((2, 3))
            weft = (defect.mean(2) > 0.3).float().sum(1)
            warp = (defect.mean(1) > 0.3).float().sum(1)
            worst = _F.avg_pool2d(defect[:, None], _smoke(4, 1)).flatten(1).amax(-1)
            length = (defect > 0.5).float().sum(2)
            points = torch.where(length > 0, torch.bucketize(length, bounds).float() + 1.0,
                                 torch.zeros_like(length)).sum(1)
            lines = x[:, 0].mean(-1)
            pick_var = lines.std(-1) / lines.abs().mean(-1).clamp_min(1e-3)
            res = torch.cat([area.flatten(), weft, warp, worst, points, pick_var])
        res.tolist()
        del raw, x, logits, prob, defect, area, weft, warp, worst, length, points, lines, pick_var, res


# ---------------------------------------------------------------- yarn evenness (dilated causal TCN)


class _TcnBlock(_nn.Module):
    """Two causal dilated 3-tap convolutions (left padding) with GELU, a residual and a group norm."""

    def __init__(self, c, dil):
        super().__init__()
        self.pad = 2 * dil
        self.c1, self.c2 = _nn.Conv1d(c, c, 3, dilation=dil), _nn.Conv1d(c, c, 3, dilation=dil)
        self.norm = _nn.GroupNorm(8, c)

    def forward(self, x):
        h = _F.gelu(self.c1(_F.pad(x, (self.pad, 0))))
        return self.norm(x + self.c2(_F.pad(h, (self.pad, 0))))


class _YarnTcn(_nn.Module):
    def __init__(self, c_in, c, dils, n_fault, n_grade):
        super().__init__()
        self.inp = _nn.Conv1d(c_in, c, 1)
        self.blocks = _nn.Sequential(*[_TcnBlock(c, d) for d in dils])
        self.fault = _nn.Conv1d(c, n_fault, 1)
        self.yarn = mlp(c, c, 2 + n_grade, act=_nn.GELU)

    def forward(self, x, keep):
        h = self.blocks(self.inp(x))
        kf = keep.float()[:, None]
        pooled = (h.float() * kf).sum(-1) / kf.sum(-1)
        return self.fault(h).float(), self.yarn(pooled).float()


@_workload("yarn evenness training (random init, a dilated causal temporal convolutional network over evenness-tester signals): 12-40 yarns a step (drawn), each a capacitive signal of 1,024-4,096 samples (drawn per yarn in steps of 256, padded to the step's longest) with 3 channels (mass, diameter, hairiness), drawn on the device as smoothed noise (average pooling over 9 samples) with a drifting count; a 1x1 input convolution to 128 channels, 8 residual blocks of two causal 3-tap convolutions (dilations 1 to 128, left padding) with GELU and group norm; a fault class per sample (of 4: none, thin place, thick place, nep) by masked cross-entropy, and from the masked mean of the features each yarn's CV% and count (tex) by MSE and its evenness grade (of 5) by cross-entropy; AdamW on a cosine schedule, clipping, bf16 autocast, 740 steps; the losses read back every 20 steps and every 148 steps a no-grad pass over 8 yarns of 4,096 samples with the fault accuracy and the grade accuracy read back")
def yarn_evenness_tcn_train(rng):
    c, n_fault, n_grade = _smoke(128, 8), 4, 5
    dils = _smoke([1, 2, 4, 8, 16, 32, 64, 128], [1, 2])
    model = _YarnTcn(3, c, dils, n_fault, n_grade).cuda()
    steps = _smoke(740, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    unit = _smoke(256, 16)
    lo_l, hi_l = _smoke(4, 2), _smoke(16, 4)

    def yarns(lens):
        b, t = len(lens), max(lens)
        keep = torch.arange(t, device="cuda")[None] < torch.tensor(lens, device="cuda")[:, None]
        sig = _F.avg_pool1d(torch.randn(b, 3, t, device="cuda"), 9, 1, 4)
        drift = torch.linspace(0.0, 1.0, t, device="cuda")[None, None] * torch.randn(b, 3, 1, device="cuda") * 0.2
        x = (sig + drift).masked_fill(~keep[:, None], 0.0)
        fault = torch.where(torch.rand(b, t, device="cuda") < 0.03,
                            torch.randint(1, n_fault, (b, t), device="cuda"), torch.zeros(b, t, dtype=torch.long,
                                                                                         device="cuda"))
        stats = torch.randn(b, 2, device="cuda")
        grade = torch.randint(0, n_grade, (b,), device="cuda")
        return x, keep, fault, stats, grade

    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(12, 2), _smoke(40, 3))
        lens = [rng.randint(lo_l, hi_l) * unit for _ in range(b)]
        x, keep, fault, stats, grade = yarns(lens)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            f_log, y_out = model(x, keep)
        kf = keep.float()
        ce = _F.cross_entropy(f_log, fault, reduction="none")
        l_fault = (ce * kf).sum() / kf.sum()
        l_stats = _F.mse_loss(y_out[:, :2], stats)
        l_grade = _F.cross_entropy(y_out[:, 2:], grade)
        loss = l_fault + l_stats + l_grade
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            torch.stack([l_fault.detach(), l_stats.detach(), l_grade.detach()]).tolist()
        del x, keep, fault, stats, grade, f_log, y_out, kf, ce, l_fault, l_stats, l_grade, loss
        if (step + 1) % _smoke(148, 2) == 0:
            model.eval()
            with torch.no_grad():
                x, keep, fault, stats, grade = yarns([hi_l * unit] * _smoke(8, 2))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    f_log, y_out = model(x, keep)
                acc = torch.stack([(f_log.argmax(1) == fault).float().mean(),
                                   (y_out[:, 2:].argmax(-1) == grade).float().mean()])
            acc.tolist()
            del x, keep, fault, stats, grade, f_log, y_out, acc


# ---------------------------------------------------------------- knitting chart sampler (row-wise transformer)


class _KnitBlock(_nn.Module):
    """A pre-norm block whose attention writes its keys and values into a cache and attends over the rows so far."""

    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.n1, self.n2 = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.proj = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.ff = mlp(d, 4 * d, d, act=_nn.GELU)

    def forward(self, x, kc, vc, lo, hi):
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        kc[:, :, lo:hi] = k.to(kc.dtype)
        vc[:, :, lo:hi] = v.to(vc.dtype)
        a = _F.scaled_dot_product_attention(q, kc[:, :, :hi].to(q.dtype), vc[:, :, :hi].to(q.dtype))
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.ff(self.n2(x))


class _KnitChartLm(_nn.Module):
    """Stitch, column (sized for the widest chart) and row (sized for the tallest chart plus the conditioning row)
    tables; the conditioning row from the pattern family and the yarn weight; a stitch distribution per column of
    the next row."""

    def __init__(self, vocab, d, heads, layers, max_w, max_rows, n_family, n_yarn):
        super().__init__()
        self.tok, self.col, self.row = _nn.Embedding(vocab, d), _nn.Embedding(max_w, d), _nn.Embedding(max_rows, d)
        self.family, self.yarn = _nn.Embedding(n_family, d), _nn.Embedding(n_yarn, d)
        self.blocks = _nn.ModuleList(_KnitBlock(d, heads) for _ in range(layers))
        self.norm, self.out = _nn.LayerNorm(d), _nn.Linear(d, vocab)

    def forward(self, x, r, caches):
        w = x.shape[1]
        hi = (r + 1) * w
        x = x + self.col(torch.arange(w, device=x.device))[None] + self.row.weight[r]
        for blk, (kc, vc) in zip(self.blocks, caches):
            x = blk(x, kc, vc, r * w, hi)
        return self.out(self.norm(x)).float()


@_workload("knitting chart sampling (random init, a transformer generating stitch charts row by row with a key/value cache): 64-68 requests (drawn) of 2-16 charts (drawn) of 16, 24, 32 or 48 stitches a row (drawn per request) and 12-32 rows (drawn per request), conditioned on the pattern family (of 12: stockinette, rib, seed, cable, lace, fair isle, ...) and the yarn weight (of 7) as a conditioning row; a transformer of 6 pre-norm blocks (width 256, 8 heads) with stitch (of 20), column (48 rows) and row (33 rows) tables under bf16 autocast, each step feeding one row's stitches at once, writing their keys and values into a cache preallocated for the chart and attending over every row so far, then sampling every stitch of the next row at once with a temperature of 0.6-1.2 and a top-k of 3-10 (drawn per request) by topk, masked_fill and multinomial; then each chart's stitch counts by one_hot, the stitch-count change of each row (increases minus decreases) and the cable crossings; each request's charts and figures read back once")
def knit_chart_transformer_sample(rng):
    vocab, n_family, n_yarn = 20, 12, 7
    d, heads, layers = _smoke(256, 16), _smoke(8, 2), _smoke(6, 1)
    w_opts = _smoke([16, 24, 32, 48], [4, 6])
    lo_r, hi_r = _smoke(12, 2), _smoke(32, 4)
    model = _KnitChartLm(vocab, d, heads, layers, max(w_opts), hi_r + 1, n_family, n_yarn).cuda().eval()
    model.requires_grad_(False)
    delta = torch.zeros(vocab, device="cuda")
    delta[2], delta[3], delta[4] = 1.0, -1.0, -1.0  # yarn over, k2tog, ssk
    cable = torch.zeros(vocab, device="cuda")
    cable[5], cable[6] = 1.0, 1.0

    nreq = rng.randint(_smoke(64, 2), _smoke(68, 3))
    for _ in range(nreq):
        n, w, rows = rng.randint(_smoke(2, 1), _smoke(16, 3)), rng.choice(w_opts), rng.randint(lo_r, hi_r)
        temp, top_k = rng.uniform(0.6, 1.2), rng.randint(3, 10)
        with torch.no_grad():
            caches = [(torch.zeros(n, heads, (rows + 1) * w, d // heads, device="cuda", dtype=torch.bfloat16),
                       torch.zeros(n, heads, (rows + 1) * w, d // heads, device="cuda", dtype=torch.bfloat16))
                      for _ in range(layers)]
            fam = torch.randint(0, n_family, (n,), device="cuda")
            yarn = torch.randint(0, n_yarn, (n,), device="cuda")
            x = (model.family(fam) + model.yarn(yarn))[:, None].expand(n, w, d)
            chart = []
            for r in range(rows):
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = model(x, r, caches)
                logits = logits / temp
                kth = logits.topk(top_k, -1).values[..., -1:]
                logits = logits.masked_fill(logits < kth, float("-inf"))
                st = torch.multinomial(logits.softmax(-1).flatten(0, 1), 1).view(n, w)
                chart.append(st)
                x = model.tok(st)
                del logits, kth
            chart = torch.stack(chart, 1)
            oh = _F.one_hot(chart, vocab).float()
            counts = oh.sum((1, 2))
            change = (oh @ delta).sum(-1)
            crossings = (oh @ cable).sum((1, 2))
            res = torch.cat([chart.flatten().float(), counts.flatten(), change.flatten(), crossings])
        res.tolist()
        del caches, fam, yarn, x, chart, st, oh, counts, change, crossings, res


# ---------------------------------------------------------------- dye recipe colour matching (Kubelka-Munk + MLP)


class _DyeModel(_nn.Module):
    """Kubelka-Munk mixing: the substrate's K/S plus each dye's concentration times its unit K/S spectrum (a table
    of dyes by 31 bands), a residual MLP correction from the recipe, the fibre and the dyeing conditions, the
    reflectance from K/S."""

    def __init__(self, n_dye, n_fibre, bands, d, layers):
        super().__init__()
        self.ks = _nn.Parameter(torch.rand(n_dye, bands) * 2.0)
        self.sub = _nn.Parameter(torch.rand(n_fibre, bands) * 0.05)
        self.dye, self.fibre = _nn.Embedding(n_dye, d), _nn.Embedding(n_fibre, d)
        self.cond = _nn.Linear(2, d)
        self.blocks = _nn.ModuleList(mlp(d, 2 * d, d, act=_nn.GELU) for _ in range(layers))
        self.norms = _nn.ModuleList(_nn.LayerNorm(d) for _ in range(layers))
        self.out = _nn.Linear(d, bands)

    def forward(self, conc, dyes, fibre, cond):
        ks = self.sub[fibre] + (conc[..., None] * self.ks[dyes]).sum(1)
        h = (conc[..., None] * self.dye(dyes)).sum(1) + self.fibre(fibre) + self.cond(cond)
        for blk, nrm in zip(self.blocks, self.norms):
            h = h + blk(nrm(h))
        ks = ks * torch.exp(0.1 * torch.tanh(self.out(h).float()))
        return 1.0 + ks - torch.sqrt(ks * ks + 2.0 * ks)


def _lab(refl, cmf, white):
    xyz = refl @ cmf / white
    f = torch.where(xyz > 0.008856, xyz.clamp_min(1e-6).pow(1.0 / 3.0), 7.787 * xyz + 16.0 / 116.0)
    return torch.stack([116.0 * f[:, 1] - 16.0, 500.0 * (f[:, 0] - f[:, 1]), 200.0 * (f[:, 1] - f[:, 2])], -1)


@_workload("dye recipe colour matching serving (random init, a Kubelka-Munk mixing model with a frozen correction MLP, recipes fitted by gradient descent): 21-23 requests (drawn) of 16-256 target shades (drawn) on one fibre each (of 8, drawn per shade on the device) with a liquor ratio and a dyeing temperature, each target's CIELAB colour from a drawn recipe; 3-6 dyes per recipe (drawn per request) from a 64-dye palette (drawn per shade on the device); the model: each dye's unit K/S spectrum over 31 bands (400-700 nm) weighted by its concentration added to the fibre's K/S, corrected by a residual MLP (4 pre-norm blocks of width 256, hidden 512, with layer norms) from the concentration-weighted dye embeddings, the fibre and the conditions, reflectance from K/S, frozen, under bf16 autocast; XYZ from Gaussian colour-matching functions and CIELAB on the device; the log-concentrations of each shade fitted by Adam (lr 0.05) over 60-120 iterations (drawn per request) on the squared CIE76 colour difference plus a small dye-cost penalty; each request's concentrations, colour differences and pass rate (delta E under 1) read back once")
def dye_recipe_inverse_match_serve(rng):
    n_dye, n_fibre, bands = _smoke(64, 8), 8, 31
    d, layers = _smoke(256, 16), _smoke(4, 1)
    model = _DyeModel(n_dye, n_fibre, bands, d, layers).cuda().eval()
    model.requires_grad_(False)
    lam = torch.linspace(0.0, 1.0, bands, device="cuda")
    cmf = torch.stack([torch.exp(-((lam - m) / 0.12).pow(2)) for m in (0.75, 0.55, 0.2)], -1)
    white = cmf.sum(0)

    def colour(conc, dyes, fibre, cond):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            refl = model(conc, dyes, fibre, cond)
        return _lab(refl.float(), cmf, white)

    nreq = rng.randint(_smoke(21, 2), _smoke(23, 3))
    for _ in range(nreq):
        n, k = rng.randint(_smoke(16, 2), _smoke(256, 4)), rng.randint(3, 6)
        iters = rng.randint(_smoke(60, 2), _smoke(120, 3))
        with torch.no_grad():
            dyes = torch.randint(0, n_dye, (n, k), device="cuda")
            fibre = torch.randint(0, n_fibre, (n,), device="cuda")
            cond = torch.rand(n, 2, device="cuda")
            target = colour(torch.rand(n, k, device="cuda") * 0.03, dyes, fibre, cond)
        logc = torch.full((n, k), math.log(0.01), device="cuda", requires_grad=True)
        opt = torch.optim.Adam([logc], lr=0.05)
        for _ in range(iters):
            conc = logc.exp()
            de2 = (colour(conc, dyes, fibre, cond) - target).pow(2).sum(-1)
            loss = de2.mean() + 10.0 * conc.sum(-1).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            del conc, de2, loss
        with torch.no_grad():
            conc = logc.exp()
            de = (colour(conc, dyes, fibre, cond) - target).pow(2).sum(-1).sqrt()
            res = torch.cat([conc.flatten(), de, (de < 1.0).float().mean()[None]])
        res.tolist()
        del dyes, fibre, cond, target, logc, opt, conc, de, res

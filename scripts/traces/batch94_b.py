"""The ninety-fourth batch of held-out workloads for record.py, second half (see batch94.py): semiconductor design and
fabrication, written in torch alone. Wafer defect pattern fine-tuning (a vision transformer over wafer maps of drawn
sizes, padded and masked, its patch embedding and first blocks frozen, layer-wise learning rates), electrostatic
global placement (an ePlace-style simulation: weighted-average wirelength over nets, a cell density map splatted by
index_add and its potential from an FFT Poisson solve, cell positions optimised by Adam), a netlist power-estimation
service (a GraphSAGE-style network by index_add over each request's netlist and per-window toggle counts, uploaded on
a side stream) and timing-path delay training (a two-layer LSTM written out step by step over the stages of critical
paths of drawn lengths, padded and masked). Same conventions as batch94.py: nothing downloaded, data drawn at random
on the device (or in reused pinned host buffers for the service), `rng` the workload's random.Random for every shape,
count and sampled choice, sizes through `_smoke(real, small)`. No control flow reads a tensor's value: map sizes,
design sizes, iteration counts, netlist sizes and path lengths are fixed on the host, padding handled by masks,
torch.where or masked_fill, no boolean-mask indexing; losses and metrics are read back only at logging points or once
per request. netlist_power_serve uploads its inputs on a side stream (workload_helpers.SideUploads); the other three
are single-stream. The learned models run under bf16 autocast; the placement simulation in fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's. This file
never imports record.py. Real sizes checked before recording: see record_new94.sh's header.
"""

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, fftfreq, keep_mask, mlp, rfftfreq

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- wafer defect pattern classification (ViT fine-tune)


class _WaferViT(_nn.Module):
    """Die states (off-wafer, pass, fail) one-hot, a 4x4 patch embedding, a class token, a 2-d position table of
    grid x grid patches (plus the class token's row), pre-norm blocks under a key mask; a new classification head."""

    def __init__(self, d, heads, layers, grid, n_cls):
        super().__init__()
        self.grid = grid
        self.patch = _nn.Conv2d(3, d, 4, 4)
        self.cls_tok = _nn.Parameter(torch.zeros(1, 1, d))
        self.pos = _nn.Embedding(grid * grid + 1, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.head = mlp(d, d, n_cls, act=_nn.GELU)

    def forward(self, state, keep):
        b, s, _ = state.shape
        g = s // 4
        x = self.patch(_F.one_hot(state, 3).permute(0, 3, 1, 2).to(self.patch.weight.dtype)).flatten(2).transpose(1, 2)
        ar = torch.arange(g, device=state.device)
        pid = (ar[:, None] * self.grid + ar[None, :]).flatten() + 1
        x = x + self.pos(pid)[None]
        c = self.cls_tok.expand(b, 1, -1) + self.pos.weight[:1][None]
        x = torch.cat([c, x], 1)
        key = torch.cat([keep.new_ones(b, 1), keep], 1)[:, None, None, :]
        for blk in self.blocks:
            x = blk(x, mask=key)
        return self.head(self.norm(x[:, 0])).float()


@_workload("wafer defect pattern fine-tuning (random init standing in for a pretrained checkpoint, a vision transformer over wafer maps, WM-811K-style): 32-128 wafers a step (drawn), each a map of 24-64 dies a side (drawn per wafer, a multiple of 4) padded to the step's largest, die states (off-wafer outside the wafer's own disc, pass, fail at a per-wafer rate of 2-40% drawn on the device, plus a radial cluster of fails) one-hot; a 4x4 patch embedding, a class token, a 257-row position table (16 x 16 patches, the largest map, plus the class token), 6 pre-norm blocks (width 256, 4 heads) under a key mask of each wafer's own patches, a new 2-layer head of 9 defect classes; the patch embedding, position table and first 2 blocks frozen, layer-wise learning-rate decay 0.8 over the other 4 blocks; label-smoothed (0.1) cross-entropy; AdamW, clipping, bf16 autocast, 475 steps; the loss read back every 20 steps and every 95 steps a no-grad evaluation of 128 wafers of 64 dies with accuracy and per-class recall (one-hot sums) read back")
def wafer_defect_vit_finetune(rng):
    d, heads, layers, n_cls = _smoke(256, 32), _smoke(4, 2), _smoke(6, 3), 9
    lo, hi = _smoke(24, 8), _smoke(64, 16)
    grid = hi // 4
    model = _WaferViT(d, heads, layers, grid, n_cls).cuda()
    frozen = 2 if layers > 2 else 1
    for m in [model.patch, model.pos, *model.blocks[:frozen]]:
        m.requires_grad_(False)
    groups = [{"params": list(blk.parameters()), "lr": 1e-4 * 0.8 ** (layers - 1 - i)}
              for i, blk in enumerate(model.blocks) if i >= frozen]
    groups.append({"params": [model.cls_tok, *model.norm.parameters(), *model.head.parameters()], "lr": 1e-4})
    opt = torch.optim.AdamW(groups, weight_decay=0.05)

    def wafers(sizes):
        b, s = len(sizes), max(sizes)
        sz = torch.tensor(sizes, device="cuda").float()[:, None, None]
        ar = torch.arange(s, device="cuda").float() + 0.5
        r2 = (ar[None, :, None] - sz / 2) ** 2 + (ar[None, None, :] - sz / 2) ** 2
        on = r2 <= (sz / 2) ** 2
        rate = torch.rand(b, 1, 1, device="cuda") * 0.38 + 0.02
        cy, cx = torch.rand(b, 1, 1, device="cuda") * sz, torch.rand(b, 1, 1, device="cuda") * sz
        cluster = ((ar[None, :, None] - cy) ** 2 + (ar[None, None, :] - cx) ** 2) < (sz / 6) ** 2
        fail = (torch.rand(b, s, s, device="cuda") < rate) | cluster
        state = torch.where(on, 1 + fail.long(), torch.zeros(b, s, s, dtype=torch.long, device="cuda"))
        g = s // 4
        keep = (keep_mask([z // 4 for z in sizes], g)[:, :, None] & keep_mask([z // 4 for z in sizes], g)[:, None, :])
        y = torch.randint(0, n_cls, (b,), device="cuda")
        return state, keep.flatten(1), y

    steps = _smoke(475, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(32, 2), _smoke(128, 4))
        state, keep, y = wafers([rng.randint(lo // 4, hi // 4) * 4 for _ in range(b)])
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logit = model(state, keep)
        loss = _F.cross_entropy(logit, y, label_smoothing=0.1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p for g in groups for p in g["params"]], 1.0)
        opt.step()
        if step % 20 == 0:
            loss.detach().item()
        del state, keep, y, logit, loss
        if (step + 1) % _smoke(95, 2) == 0:
            model.eval()
            with torch.no_grad():
                state, keep, y = wafers([hi] * _smoke(128, 4))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logit = model(state, keep)
                hit = (logit.argmax(-1) == y).float()
                oh = _F.one_hot(y, n_cls).float()
                recall = (oh * hit[:, None]).sum(0) / oh.sum(0).clamp(min=1)
                out = torch.cat([hit.mean()[None], recall])
            out.tolist()
            del state, keep, y, logit, hit, oh, recall, out


# ---------------------------------------------------------------- electrostatic global placement (simulation)


@_workload("electrostatic global placement simulation (ePlace/DREAMPlace-style, no model, fp32): 22 designs in turn, each of 20,000-80,000 standard cells (drawn) with widths and heights drawn on the device (scaled to fill 70% of the placement region) and 1.0-1.3 nets per cell (drawn per design) of 2-8 pins (degree drawn per net on the device, padded to 8 and masked) on random cells with pin offsets, on a bin grid of 128 or 256 bins a side (drawn per design), placed for 60-180 iterations (drawn per design) from a cluster around the centre: weighted-average wirelength per net (masked softmax of pin coordinates over gamma, both axes, gamma shrinking per iteration), the cell areas splatted into the bins bilinearly by one index_add, the density's electric potential from an FFT Poisson solve (rfft2, division by the squared wavenumbers, DC zeroed, irfft2), loss of wirelength plus a density weight (growing 5% per iteration) times the field energy, autograd to the cell positions, Adam on the positions, positions clamped to the region; the density overflow read back every 10 iterations and each design's half-perimeter wirelength read back at its end")
def eplace_density_sim(rng):
    designs, max_pins = _smoke(22, 2), 8
    for _ in range(designs):
        n = rng.randint(_smoke(20000, 300), _smoke(80000, 600))
        nets = int(n * rng.uniform(1.0, 1.3))
        m = rng.choice(_smoke([128, 256], [16, 32]))
        iters = rng.randint(_smoke(60, 3), _smoke(180, 6))
        scale = (0.7 * m * m / n) ** 0.5
        size = (torch.rand(n, 2, device="cuda") * 1.5 + 0.5) * scale / 1.25
        area = size.prod(1)
        pins = torch.randint(0, n, (nets, max_pins), device="cuda")
        deg = torch.randint(2, max_pins + 1, (nets, 1), device="cuda")
        keep = torch.arange(max_pins, device="cuda")[None] < deg
        off = (torch.rand(nets, max_pins, 2, device="cuda") - 0.5) * size[pins]
        pos = (m / 2 + torch.randn(n, 2, device="cuda") * m / 20).requires_grad_(True)
        opt = torch.optim.Adam([pos], lr=m / 200)
        ky, kx = fftfreq(m) * 2 * torch.pi, rfftfreq(m) * 2 * torch.pi
        k2 = ky[:, None] ** 2 + kx[None, :] ** 2
        inv_k2 = torch.where(k2 > 0, 1.0 / k2.clamp(min=1e-12), torch.zeros_like(k2))
        target = area.sum() / (m * m)
        gamma, lam = m / 20.0, 1e-4
        for it in range(iters):
            p = pos[pins] + off  # (nets, pins, 2)
            neg = torch.finfo(p.dtype).min / 4
            hi_w = torch.softmax((p / gamma).masked_fill(~keep[..., None], neg), 1)
            lo_w = torch.softmax((-p / gamma).masked_fill(~keep[..., None], neg), 1)
            wl = ((hi_w - lo_w) * p).sum()
            c = pos - 0.5
            base = c.detach().floor().clamp(0, m - 2)
            f = (c - base).clamp(0, 1)
            bi = base.long()
            idx = torch.cat([bi[:, 1] * m + bi[:, 0], bi[:, 1] * m + bi[:, 0] + 1,
                             (bi[:, 1] + 1) * m + bi[:, 0], (bi[:, 1] + 1) * m + bi[:, 0] + 1])
            w = torch.cat([(1 - f[:, 0]) * (1 - f[:, 1]), f[:, 0] * (1 - f[:, 1]),
                           (1 - f[:, 0]) * f[:, 1], f[:, 0] * f[:, 1]]) * area.repeat(4)
            rho = torch.zeros(m * m, device="cuda").index_add(0, idx, w).view(m, m) - target
            phi = torch.fft.irfft2(torch.fft.rfft2(rho) * inv_k2, s=(m, m))
            energy = (rho * phi).sum()
            loss = wl + lam * energy
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            with torch.no_grad():
                pos.clamp_(0.5, m - 0.5)
            gamma, lam = max(gamma * 0.985, 0.5), lam * 1.05
            if it % 10 == 0:
                over = (rho.detach() - (1.0 - target)).clamp(min=0).sum() / area.sum()
                torch.stack([over, wl.detach()]).tolist()
                del over
            del p, hi_w, lo_w, wl, c, base, f, bi, idx, w, rho, phi, energy, loss
        with torch.no_grad():
            p = pos[pins] + off
            big = torch.finfo(p.dtype).max / 4
            hpwl = (p.masked_fill(~keep[..., None], -big).amax(1) - p.masked_fill(~keep[..., None], big).amin(1)).sum()
        hpwl.item()
        del size, area, pins, deg, keep, off, pos, opt, ky, kx, k2, inv_k2, target, p, hpwl


# ---------------------------------------------------------------- netlist power estimation service (GraphSAGE)


class _PowerSAGE(_nn.Module):
    """Cell-type embeddings plus toggle statistics, GraphSAGE layers with mean aggregation over fan-in and fan-out
    by index_add; per node a switching-power gain and offset applied to each window's toggle counts, and leakage."""

    def __init__(self, n_type, d, layers):
        super().__init__()
        self.cell_type = _nn.Embedding(n_type, d)
        self.stats = mlp(4, d, d, act=_nn.SiLU)
        self.lin = _nn.ModuleList(_nn.Linear(3 * d, d) for _ in range(layers))
        self.norms = _nn.ModuleList(_nn.LayerNorm(d) for _ in range(layers))
        self.out = mlp(d, d, 3, act=_nn.SiLU)

    def forward(self, typ, stats, src, dst, inv_in, inv_out):
        h = self.cell_type(typ) + self.stats(stats)
        for lin, nrm in zip(self.lin, self.norms):
            m_in = torch.zeros_like(h).index_add_(0, dst, h.index_select(0, src)) * inv_in
            m_out = torch.zeros_like(h).index_add_(0, src, h.index_select(0, dst)) * inv_out
            h = nrm(h + _F.silu(lin(torch.cat([h, m_in, m_out], -1))))
        return self.out(h).float()


@_workload("netlist power estimation serving (random init, a GraphSAGE-style network over gate-level netlists): 3,100-3,200 requests (drawn), each a netlist block of 2,000-24,000 cells (drawn) with a fan-in of 2-3 per cell (drawn per request) and toggle counts over 8-32 simulation windows (drawn per request); each request's cell types, edge list and toggle counts one span of int32 uploaded on a side stream from two reused pinned host buffers (filled once with random words, sized for 24,000 cells, fan-in 3 and 32 windows) one request ahead (waited on by event, record_stream'ed), decoded on the device (reduced modulo the 300 cell types, the request's cell count and 64 toggles); 4 GraphSAGE layers (width 128) with mean aggregation over fan-in and fan-out by index_select and index_add under bf16 autocast; per cell a switching-power gain and offset applied to each window's normalised toggles (softplus) and a leakage; each request's per-window total power, its peak window, the total leakage and the 16 hottest cells (topk) read back")
def netlist_power_serve(rng):
    n_type, d, layers, max_w = _smoke(300, 20), _smoke(128, 16), _smoke(4, 1), _smoke(32, 8)
    max_n, max_k = _smoke(24000, 200), 3
    model = _PowerSAGE(n_type, d, layers).cuda().eval()
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    cap = max_n * (1 + 2 * max_k + max_w)
    host = [torch.randint(0, 2**30, (cap,), dtype=torch.int32, generator=gen).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    nreq = rng.randint(_smoke(3100, 3), _smoke(3200, 4))
    plan = [(rng.randint(_smoke(2000, 50), max_n), rng.randint(2, max_k), rng.randint(_smoke(8, 2), max_w))
            for _ in range(nreq)]

    def span(p):
        n, k, w = p
        return n * (1 + 2 * k + w)

    nxt = up.upload(0, span(plan[0]))
    for i in range(nreq):
        n, k, w = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, span(plan[i + 1]))
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            typ = (raw[:n] % n_type).long()
            edges = (raw[n:n + 2 * n * k] % n).long()
            src, dst = edges[:n * k], edges[n * k:]
            tog = (raw[n + 2 * n * k:] % 64).float().view(n, w)
            ones = torch.ones(n * k, 1, device="cuda")
            inv_in = 1.0 / torch.zeros(n, 1, device="cuda").index_add_(0, dst, ones).clamp(min=1)
            inv_out = 1.0 / torch.zeros(n, 1, device="cuda").index_add_(0, src, ones).clamp(min=1)
            tn = tog / 63.0
            stats = torch.stack([tn.mean(1), tn.amax(1), tn.std(1), (tog > 0).float().mean(1)], 1)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                o = model(typ, stats, src, dst, inv_in, inv_out)
            sw = _F.softplus(o[:, :1] * tn + o[:, 1:2])  # (cells, windows)
            leak = _F.softplus(o[:, 2]) * 1e-3
            per_win = sw.sum(0) + leak.sum()
            hot = (sw.mean(1) + leak).topk(16)
            out = torch.cat([per_win, per_win.argmax()[None].float(), leak.sum()[None], hot.values,
                             hot.indices.float()])
        out.tolist()
        del item, raw, typ, edges, src, dst, tog, ones, inv_in, inv_out, tn, stats, o, sw, leak, per_win, hot, out


# ---------------------------------------------------------------- timing-path delay (LSTM written out)


class _PathLSTM(_nn.Module):
    """Stage embeddings (cell type plus projected electrical features), a stacked LSTM written out one stage at a
    time, each layer's state kept on padded stages by torch.where; per-stage delay and output slew."""

    def __init__(self, n_type, n_feat, d, layers):
        super().__init__()
        self.cell_type = _nn.Embedding(n_type, d)
        self.feat = _nn.Linear(n_feat, d)
        self.wx = _nn.ModuleList(_nn.Linear(d, 4 * d) for _ in range(layers))
        self.wh = _nn.ModuleList(_nn.Linear(d, 4 * d, bias=False) for _ in range(layers))
        self.head = mlp(2 * d, d, 2, act=_nn.GELU)

    def forward(self, typ, feat, keep):
        x = self.cell_type(typ) + self.feat(feat)
        b, t, d = x.shape
        hs = [x.new_zeros(b, d) for _ in self.wx]
        cs = [x.new_zeros(b, d) for _ in self.wx]
        outs = []
        for s in range(t):
            inp, k = x[:, s], keep[:, s, None]
            for li, (wx, wh) in enumerate(zip(self.wx, self.wh)):
                i, f, g, o = (wx(inp) + wh(hs[li])).chunk(4, -1)
                c = torch.sigmoid(f) * cs[li] + torch.sigmoid(i) * torch.tanh(g)
                h = torch.sigmoid(o) * torch.tanh(c)
                cs[li], hs[li] = torch.where(k, c, cs[li]), torch.where(k, h, hs[li])
                inp = hs[li]
            outs.append(inp)
        hseq = torch.stack(outs, 1)
        return _F.softplus(self.head(torch.cat([hseq, x.to(hseq.dtype)], -1)).float()) + 1e-3


@_workload("timing-path delay training (random init, a stacked LSTM written out step by step over critical-path stages): 64-256 timing paths a step (drawn), each of 6-48 stages (drawn per path, padded to the step's longest); per stage a cell type of 300 (embedded) and 10 electrical features (fan-out, load and pin capacitance, wire resistance, input slew and others) drawn on the device; 2 LSTM layers (width 256) written out one stage at a time with gates from one input and one recurrent projection, states kept on padded stages by torch.where; per-stage delay and output slew (softplus), the path arrival a masked cumulative sum of the delays, the endpoint arrival gathered at each path's last stage; log-MSE on delays and slews (pads weighted out) and a relative L1 on endpoint arrivals against drawn targets; AdamW, clipping, bf16 autocast, 68 steps; the losses read back every 10 steps and every 17 steps a no-grad evaluation of 256 paths of 48 stages with the endpoint arrival's mean relative error read back")
def timing_path_lstm_train(rng):
    n_type, n_feat, d, layers = _smoke(300, 20), 10, _smoke(256, 16), _smoke(2, 1)
    lo, hi = _smoke(6, 2), _smoke(48, 6)
    model = _PathLSTM(n_type, n_feat, d, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)

    def paths(lengths):
        b, t = len(lengths), max(lengths)
        keep = keep_mask(lengths, t)
        typ = torch.randint(0, n_type, (b, t), device="cuda")
        feat = torch.randn(b, t, n_feat, device="cuda")
        tgt = torch.rand(b, t, 2, device="cuda") * 0.2 + 0.01
        last = torch.tensor([z - 1 for z in lengths], device="cuda")[:, None]
        arr_t = (tgt[..., 0] * keep).sum(1) * (0.8 + 0.4 * torch.rand(b, device="cuda"))
        return typ, feat, keep, tgt, last, arr_t

    def run(typ, feat, keep, last):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(typ, feat, keep)
        arrival = (out[..., 0] * keep).cumsum(1)
        return out, arrival.gather(1, last)[:, 0]

    steps = _smoke(68, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(64, 2), _smoke(256, 4))
        typ, feat, keep, tgt, last, arr_t = paths([rng.randint(lo, hi) for _ in range(b)])
        out, end = run(typ, feat, keep, last)
        w = keep.float()[..., None]
        l_s = ((out.log() - tgt.log()) ** 2 * w).sum() / (2 * w.sum())
        l_a = ((end - arr_t).abs() / arr_t).mean()
        loss = l_s + l_a
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_s.detach(), l_a.detach()]).tolist()
        del typ, feat, keep, tgt, last, arr_t, out, end, w, l_s, l_a, loss
        if (step + 1) % _smoke(17, 2) == 0:
            model.eval()
            with torch.no_grad():
                typ, feat, keep, tgt, last, arr_t = paths([hi] * _smoke(256, 4))
                out, end = run(typ, feat, keep, last)
                err = ((end - arr_t).abs() / arr_t).mean()
            err.item()
            del typ, feat, keep, tgt, last, arr_t, out, end, err

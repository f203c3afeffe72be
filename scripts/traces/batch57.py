"""The fifty-seventh batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch55_b.py are): energy systems and industry on the GPU (power grids, renewables, batteries, manufacturing and
process control), written in torch alone, first half. An AC optimal-power-flow surrogate trained as a graph neural
network over synthetic transmission grids of drawn sizes (118 to 12,000 buses, rings with random chords as lines,
several grids a batch joined as one disjoint graph under a bus budget; a message-passing network predicting voltage
magnitudes and angles and generator dispatch, trained against drawn solver targets with physics-informed penalties:
the AC line flows computed from the predicted voltages, the nodal power-balance mismatch by index_add, voltage and
generator bounds, a quadratic generation cost), a hierarchical probabilistic load forecaster over thousands of smart
meters (a dilated temporal convolutional network over look-back windows of one to four weeks, drawn, with calendar
and temperature covariates, quantile heads over a 24-48 h horizon, the pinball loss on the meters and on their feeder
sums by index_add; a rolling-origin backtest over all meters between phases), a wind-farm wake surrogate used for
layout optimisation (an analytic Gaussian wake model (Bastankhah and Porte-Agel) evaluated on the device for farms of
a drawn number of turbines on grids of drawn size, a Fourier neural operator trained on it, then turbine positions
optimised by gradient through the surrogate with spacing and boundary penalties and checked against the analytic
model), and a PMU linear state-estimation service (synchrophasor frames of several control areas uploaded from
reused pinned host buffers on a side stream one request ahead; weighted least squares with the gain matrix factored
by Cholesky and cached per topology, refactored after drawn line outages; chi-square bad-data tests, largest
normalised residuals, and an FFT of the angle estimates for oscillation monitoring read back). Same conventions as
the earlier batches: nothing downloaded, data drawn at random on the device (or, for the PMU service, from a few
reused pinned host buffers), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: counts
are fixed on the host, masks multiplied in, no boolean-mask indexing; losses, skills, positions and residuals are read
back only at logging points (the service returns each request's results, as a service must).
pmu_state_estimation_serve uses a side stream (uploads waited on by event, the tensors record_stream'ed); the others
are single-stream. The GNN's MLPs, the TCN and the FNO's pointwise layers run under bf16 autocast; the power-flow
physics, the wake model, the FNO's spectral convolutions, the state estimation and the losses are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch57_b.py's header says the same of its half): every workload of this half
was run whole at its final real sizes (RECORD_SMOKE unset) on PyTorch's meta device with the helper's runner
(/tmp/b57/meta_run.py, not committed, a copy of /work/notes/meta_run.py: smoke_cpu.py's patching with "cuda" mapped
to "meta", readbacks answered with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking a math
path, streams, events and pinned memory no-ops; boolean-mask indexing, which the meta device cannot size, is
avoided), its op outputs counted there (events about 1.8x that count) and its peak live bytes tracked:
opf_gnn_surrogate_train 309,862 op outputs, peak 1.27 GB; hier_load_quantile_tcn_train 316,619, 3.96 GB;
wind_wake_fno_layout_opt 302,244, 1.43 GB; pmu_state_estimation_serve 316,926, 1.16 GB (peaks in fp32 where autocast
would take bf16). record_new57.sh's header has them too, with the first runs that led to resizes. The CPU smoke run
(RECORD_SMOKE=1) ran all four.
"""

import functools
import math

import torch

from batch_common import Batch
from workload_helpers import mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn
_mlp = functools.partial(mlp, act=_nn.SiLU)  # SiLU unless a caller names another


# ---------------------------------------------------------------- AC optimal power flow surrogate (GNN)


def _grid(nbus, off):
    """A synthetic transmission grid of nbus buses: a ring plus nbus // 2 random chords as lines, line resistances and
    reactances drawn, loads drawn, every fourth bus a generator. Returns bus features, (src, dst) in both directions
    offset by off, line parameters (g, b, limits) per directed edge, loads and the generator mask."""
    dev = "cuda"
    ring = torch.arange(nbus, device=dev)
    nch = nbus // 2
    a = torch.randint(0, nbus, (nch,), device=dev)
    bb = (a + torch.randint(2, max(3, nbus // 3), (nch,), device=dev)) % nbus
    fr = torch.cat([ring, a])
    to = torch.cat([(ring + 1) % nbus, bb])
    r = 0.005 + 0.03 * torch.rand(fr.shape[0], device=dev)
    x = r * (4 + 6 * torch.rand(fr.shape[0], device=dev))
    z2 = r * r + x * x
    g, b = r / z2, -x / z2
    rate = 0.5 + 2.0 * torch.rand(fr.shape[0], device=dev)
    pd = torch.rand(nbus, device=dev) * 0.6
    qd = pd * (0.2 + 0.2 * torch.rand(nbus, device=dev))
    gen = (ring % 4 == 0).float()
    pmax = gen * (1.0 + 2.0 * torch.rand(nbus, device=dev))
    cost = gen * (10 + 30 * torch.rand(nbus, device=dev))
    feats = torch.stack([pd, qd, gen, pmax, cost / 40, torch.rand(nbus, device=dev)], -1)
    src = torch.cat([fr, to]) + off
    dst = torch.cat([to, fr]) + off
    efeat = torch.stack([torch.cat([g, g]), torch.cat([b, b]), torch.cat([rate, rate])], -1)
    return feats, src, dst, efeat, pd, qd, gen, pmax, cost


class _OpfGnn(_nn.Module):
    def __init__(self, h, layers):
        super().__init__()
        self.enc_n, self.enc_e = _mlp(6, h, h), _mlp(3, h, h)
        self.msg = _nn.ModuleList(_mlp(3 * h, h, h) for _ in range(layers))
        self.upd = _nn.ModuleList(_mlp(2 * h, h, h) for _ in range(layers))
        self.norm = _nn.ModuleList(_nn.LayerNorm(h) for _ in range(layers))
        self.head = _mlp(h, h, 4)

    def forward(self, x, src, dst, e):
        h = self.enc_n(x)
        e = self.enc_e(e)
        for msg, upd, norm in zip(self.msg, self.upd, self.norm):
            m = msg(torch.cat([h[src], h[dst], e], -1))
            agg = torch.zeros(h.shape[0], m.shape[1], device=h.device, dtype=m.dtype).index_add_(0, dst, m)
            h = norm(h + upd(torch.cat([h, agg], -1)))
        return self.head(h)


def _ac_flows(vm, va, src, dst, g, b):
    """AC power flow on every directed line from the voltages: P_ij, Q_ij."""
    vi, vj = vm[src], vm[dst]
    dth = va[src] - va[dst]
    c, s = torch.cos(dth), torch.sin(dth)
    p = vi * vi * g - vi * vj * (g * c + b * s)
    q = -vi * vi * b - vi * vj * (g * s - b * c)
    return p, q


@_workload("AC optimal-power-flow surrogate as a graph neural network written by hand (random init): synthetic transmission grids of 118-12,000 buses (drawn from six sizes, a ring plus random chords as lines, line impedances, loads, generator limits and costs drawn), 1-16 grids a batch joined as one disjoint graph under a budget of 16,000 buses; a message-passing network (hidden 128, 6 rounds of edge MLPs on both line directions and index_add aggregation, LayerNorm) predicting voltage magnitude and angle and generator P and Q; loss: MSE to drawn solver targets plus physics-informed penalties (AC line flows from the predicted voltages, nodal P and Q mismatch by index_add, thermal limits, voltage and generator bounds) and a quadratic cost; bf16 autocast for the MLPs, physics fp32; AdamW with cosine decay and clipping, 330 steps; every 110 an evaluation of 4 batches of the largest grids without grad, mismatch and violation read back")
def opf_gnn_surrogate_train(rng):
    h, layers = _smoke(128, 16), _smoke(6, 6)
    model = _OpfGnn(h, layers).cuda()
    steps = _smoke(330, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    sizes = _smoke([118, 300, 1354, 2000, 6470, 12000], [14, 30, 57])
    budget = _smoke(16000, 120)

    def batch(big=False):
        grids, total = [], 0
        for _ in range(16):
            n = rng.choice(sizes[-2:] if big else sizes)
            if grids and total + n > budget:
                break
            grids.append(_grid(n, total))
            total += n
        parts = list(zip(*grids))
        return [torch.cat(p) for p in parts]

    def losses(out, src, dst, ef, pd, qd, gen, pmax, cost, target):
        vm = 0.9 + 0.2 * torch.sigmoid(out[:, 0])
        va = 0.5 * torch.tanh(out[:, 1])
        pg = _F.softplus(out[:, 2]) * gen
        qg = out[:, 3] * gen
        p, q = _ac_flows(vm, va, src, dst, ef[:, 0], ef[:, 1])
        n = vm.shape[0]
        pinj = torch.zeros(n, device=vm.device).index_add_(0, src, p)
        qinj = torch.zeros(n, device=vm.device).index_add_(0, src, q)
        mis = (pg - pd - pinj).pow(2).mean() + (qg - qd - qinj).pow(2).mean()
        therm = _F.relu(p.pow(2) + q.pow(2) - ef[:, 2].pow(2)).mean()
        bound = _F.relu(pg - pmax).pow(2).mean()
        sup = _F.mse_loss(torch.stack([vm, va, pg, qg], -1), target)
        gcost = (cost * (pg + 0.1 * pg * pg)).sum() / n
        return sup + 10.0 * mis + therm + bound + 1e-3 * gcost, mis, therm

    for step in range(steps):
        model.train()
        x, src, dst, ef, pd, qd, gen, pmax, cost = batch()
        target = torch.stack([1.0 + 0.03 * torch.randn_like(pd), 0.1 * torch.randn_like(pd), pd * gen * 4,
                              qd * gen * 4], -1)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(x, src, dst, ef)
        loss, _mis, _th = losses(out.float(), src, dst, ef, pd, qd, gen, pmax, cost, target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        del x, src, dst, ef, out, target
        if (step + 1) % _smoke(110, 3) == 0:
            model.eval()
            stats = []
            with torch.no_grad():
                for _ in range(_smoke(4, 1)):
                    x, src, dst, ef, pd, qd, gen, pmax, cost = batch(big=True)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        out = model(x, src, dst, ef)
                    _l, mis, th = losses(out.float(), src, dst, ef, pd, qd, gen, pmax, cost, torch.zeros_like(
                        out, dtype=torch.float32))
                    stats.append(torch.stack([mis, th]))
            torch.stack(stats).mean(0).tolist()
            float(loss)


# ---------------------------------------------------------------- hierarchical probabilistic load forecasting


class _TcnBlock(_nn.Module):
    def __init__(self, c, dil):
        super().__init__()
        self.c1 = _nn.Conv1d(c, c, 3, dilation=dil, padding=dil)
        self.c2 = _nn.Conv1d(c, c, 3, dilation=dil, padding=dil)
        self.norm = _nn.GroupNorm(8, c)

    def forward(self, x):
        return x + self.c2(_F.gelu(self.norm(self.c1(x))))


class _LoadTcn(_nn.Module):
    def __init__(self, cin, c, nblk, horizon, nq, ncov):
        super().__init__()
        self.inp = _nn.Conv1d(cin, c, 1)
        self.blocks = _nn.ModuleList(_TcnBlock(c, 2 ** (i % 8)) for i in range(nblk))
        self.meter = _nn.Embedding(4096, 16)
        self.dec = _mlp(c * 2 + 16 + horizon * ncov, 512, horizon * nq, layers=3, act=_nn.GELU)
        self.horizon, self.nq = horizon, nq

    def forward(self, x, ids, fut):
        h = self.inp(x)
        for blk in self.blocks:
            h = blk(h)
        z = torch.cat([h[:, :, -1], h.mean(-1), self.meter(ids), fut.flatten(1)], -1)
        return self.dec(z).view(-1, self.horizon, self.nq)


def _pinball(pred, y, qs):
    d = y[..., None] - pred
    return torch.maximum(qs * d, (qs - 1) * d).mean()


@_workload("hierarchical probabilistic load forecasting over smart meters with a dilated TCN written by hand (random init): a year of hourly load for 4,096 meters in 64 feeders made on the device (daily and weekly profiles, temperature response, noise); training windows of a drawn look-back of 1-4 weeks (168-672 h) and horizon 24 or 48 h (drawn), whole feeders sampled under a budget of 344,064 meter-hours a batch (8-32 feeders); 10 residual dilated conv blocks (64 channels, GroupNorm), meter embeddings, future calendar and temperature covariates, an MLP head of 9 quantiles; the pinball loss on the meters and on their feeder sums (index_add); bf16 autocast, AdamW, 650 steps in two horizon phases (350 at 24 h, 300 at 48 h); after each phase a rolling-origin backtest over all 4,096 meters (6 daily origins, chunks of 1,024 meters, no grad), pinball loss and interval coverage read back")
def hier_load_quantile_tcn_train(rng):
    nm, nfeed = _smoke(4096, 64), _smoke(64, 4)
    per = nm // nfeed
    hours = _smoke(24 * 365, 24 * 40)
    c, nblk = _smoke(64, 8), _smoke(10, 10)
    qs = torch.linspace(0.1, 0.9, 9, device="cuda")
    t = torch.arange(hours, device="cuda").float()
    temp = 12 - 10 * torch.cos(2 * math.pi * t / (24 * 365)) + 5 * torch.sin(2 * math.pi * (t - 9) / 24)
    base = 0.3 + 0.7 * torch.rand(nm, 1, device="cuda")
    daily = torch.rand(nm, 1, device="cuda") * 0.5
    load = (base * (1 + daily * torch.sin(2 * math.pi * (t - 7) / 24)[None]
                    + 0.2 * torch.cos(2 * math.pi * t / 168)[None] + 0.02 * (temp - 15).abs()[None])
            + 0.1 * torch.randn(nm, hours, device="cuda")).clamp_min(0)
    cal = torch.stack([torch.sin(2 * math.pi * t / 24), torch.cos(2 * math.pi * t / 24),
                       torch.sin(2 * math.pi * t / 168), torch.cos(2 * math.pi * t / 168), temp / 20], 0)
    feeder_of = torch.arange(nm, device="cuda") // per
    budget = _smoke(344064, 4096)
    lookbacks = _smoke([168, 336, 504, 672], [24, 48])

    def window(meters, start, lb, hz):
        x = torch.cat([load[meters, start:start + lb][:, None], cal[None, :, start:start + lb].expand(
            meters.shape[0], -1, -1)], 1)
        fut = cal[:, start + lb:start + lb + hz].t()[None].expand(meters.shape[0], -1, -1)
        return x, fut, load[meters, start + lb:start + lb + hz]

    def backtest(model, hz):
        model.eval()
        res = []
        with torch.no_grad():
            for o in range(_smoke(6, 1)):
                lb = max(lookbacks)
                start = hours - lb - hz - 24 * (o + 1)
                for m0 in range(0, nm, _smoke(1024, 32)):
                    meters = torch.arange(m0, min(nm, m0 + _smoke(1024, 32)), device="cuda")
                    x, fut, y = window(meters, start, lb, hz)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        pred = model(x, meters, fut).float()
                    cover = ((y >= pred[..., 1]) & (y <= pred[..., -2])).float().mean()
                    res.append(torch.stack([_pinball(pred, y, qs), cover]))
        torch.stack(res).mean(0).tolist()

    for hz, nsteps in ((24, _smoke(350, 2)), (48, _smoke(300, 2))):
        model = _LoadTcn(6, c, nblk, hz, 9, 5).cuda()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
        for step in range(nsteps):
            model.train()
            lb = rng.choice(lookbacks)
            nf = max(1, min(nfeed, budget // (lb * per)))
            f0 = rng.randrange(nfeed - nf + 1)
            meters = torch.arange(f0 * per, (f0 + nf) * per, device="cuda")
            start = rng.randrange(hours - lb - hz - 24 * 8)
            x, fut, y = window(meters, start, lb, hz)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                pred = model(x, meters, fut)
            pred = pred.float()
            fid = feeder_of[meters] - f0
            fpred = torch.zeros(nf, hz, 9, device="cuda").index_add_(0, fid, pred)
            fy = torch.zeros(nf, hz, device="cuda").index_add_(0, fid, y)
            loss = _pinball(pred, y, qs) + 0.1 * _pinball(fpred, fy, qs) / per
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            del x, fut, y, pred, fpred, fy
            if step % 50 == 0:
                float(loss)
        backtest(model, hz)
        del model, opt


# ---------------------------------------------------------------- wind-farm wake surrogate and layout optimisation


def _wake_field(pos, wdir, u0, g, size, diam=0.126):
    """Bastankhah-Porte-Agel Gaussian wakes of turbines at pos (b, n, 2) in a square farm of side size (km), wind from
    angle wdir (b,), inflow u0 (b,), on a g x g grid: the velocity field (b, g, g) by quadratic superposition."""
    dev = pos.device
    lin = torch.linspace(0, size, g, device=dev)
    gy, gx = torch.meshgrid(lin, lin, indexing="ij")
    c, s = torch.cos(wdir)[:, None, None, None], torch.sin(wdir)[:, None, None, None]
    dx = gx[None, None] - pos[..., 0, None, None]
    dy = gy[None, None] - pos[..., 1, None, None]
    xd = dx * c + dy * s  # downstream distance
    yd = -dx * s + dy * c
    ct, k = 0.8, 0.04
    sig = k * xd.clamp_min(1e-3) + 0.25 * diam
    defi = (1 - torch.sqrt((1 - ct / (8 * sig * sig / diam ** 2)).clamp_min(0.0))) * torch.exp(
        -0.5 * (yd / sig) ** 2) * torch.sigmoid(xd * 200)
    return u0[:, None, None] * (1 - torch.sqrt((defi * defi).sum(1) + 1e-12))


def _splat(pos, g, size, width=0.08):
    lin = torch.linspace(0, size, g, device=pos.device)
    gy, gx = torch.meshgrid(lin, lin, indexing="ij")
    d2 = (gx[None, None] - pos[..., 0, None, None]) ** 2 + (gy[None, None] - pos[..., 1, None, None]) ** 2
    return torch.exp(-d2 / (2 * width * width)).sum(1)


class _SpectralConv(_nn.Module):
    def __init__(self, c, modes):
        super().__init__()
        self.modes = modes
        scale = 1.0 / (c * c)
        self.w1 = _nn.Parameter(scale * torch.randn(c, c, modes, modes, dtype=torch.cfloat))
        self.w2 = _nn.Parameter(scale * torch.randn(c, c, modes, modes, dtype=torch.cfloat))

    def forward(self, x):
        b, c, hh, ww = x.shape
        m = self.modes
        xf = torch.fft.rfft2(x.float())
        out = torch.zeros(b, c, hh, ww // 2 + 1, dtype=torch.cfloat, device=x.device)
        out[:, :, :m, :m] = torch.einsum("bixy,ioxy->boxy", xf[:, :, :m, :m], self.w1)
        out[:, :, -m:, :m] = torch.einsum("bixy,ioxy->boxy", xf[:, :, -m:, :m], self.w2)
        return torch.fft.irfft2(out, s=(hh, ww))


class _Fno2d(_nn.Module):
    def __init__(self, cin, c, modes, layers):
        super().__init__()
        self.lift = _nn.Conv2d(cin, c, 1)
        self.spec = _nn.ModuleList(_SpectralConv(c, modes) for _ in range(layers))
        self.pw = _nn.ModuleList(_nn.Conv2d(c, c, 1) for _ in range(layers))
        self.proj = _nn.Sequential(_nn.Conv2d(c, 128, 1), _nn.GELU(), _nn.Conv2d(128, 1, 1))

    def forward(self, x):
        h = self.lift(x)
        for sp, pw in zip(self.spec, self.pw):
            with torch.autocast("cuda", enabled=False):
                s = sp(h)
            h = _F.gelu(s + pw(h))
        return self.proj(h)[:, 0]


def _wake_inputs(pos, wdir, u0, g, size):
    b = pos.shape[0]
    lin = torch.linspace(0, 1, g, device=pos.device)
    gy, gx = torch.meshgrid(lin, lin, indexing="ij")
    ones = torch.ones(b, g, g, device=pos.device)
    return torch.stack([_splat(pos, g, size), torch.cos(wdir)[:, None, None] * ones,
                        torch.sin(wdir)[:, None, None] * ones, u0[:, None, None] * ones / 10,
                        gx[None].expand(b, -1, -1), gy[None].expand(b, -1, -1)], 1)


@_workload("wind-farm wake surrogate and layout optimisation written by hand (random init): farms of 9-64 turbines (drawn per batch) in a 2-4 km square (drawn), the Gaussian wake model of Bastankhah and Porte-Agel with quadratic superposition evaluated on the device on 64^2-128^2 grids (drawn) for drawn wind directions and speeds (batches of 8-24 farms); a Fourier neural operator (width 48, 16 modes, 4 layers, spectral convolutions fp32, pointwise layers under bf16 autocast) trained 420 steps to map turbine splats and inflow to the velocity field, Adam with step decay; then 6 layout optimisations (36-64 turbines, 8 wind directions a batch, 130 Adam steps on the turbine positions through the surrogate: power from the field sampled at the rotors by grid_sample, cubed, with pairwise spacing and boundary penalties), each checked against the analytic model, power read back")
def wind_wake_fno_layout_opt(rng):
    c, modes = _smoke(48, 8), _smoke(16, 4)
    model = _Fno2d(6, c, modes, _smoke(4, 4)).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, _smoke(140, 2), 0.5)
    grids = _smoke([64, 96, 128], [16, 24])
    for step in range(_smoke(420, 3)):
        b, n, g = rng.randint(8, 24), rng.randint(9, 64), rng.choice(grids)
        size = rng.uniform(2.0, 4.0)
        with torch.no_grad():
            pos = torch.rand(b, n, 2, device="cuda") * size
            wdir = torch.rand(b, device="cuda") * 2 * math.pi
            u0 = 6 + 6 * torch.rand(b, device="cuda")
            y = _wake_field(pos, wdir, u0, g, size)
            x = _wake_inputs(pos, wdir, u0, g, size)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(x)
        loss = _F.mse_loss(pred.float(), y / 10)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        del pos, y, x, pred
        if step % 70 == 0:
            float(loss)
    model.eval().requires_grad_(False)
    for farm in range(_smoke(6, 1)):
        n, g, size = rng.randint(36, 64), rng.choice(grids), rng.uniform(2.0, 4.0)
        nd = _smoke(8, 2)
        wdir = torch.linspace(0, 2 * math.pi, nd + 1, device="cuda")[:-1]
        u0 = torch.full((nd,), 9.0, device="cuda")
        side = int(math.ceil(math.sqrt(n)))
        ij = torch.arange(n, device="cuda")
        xy = torch.stack([(ij % side).float(), (ij // side).float()], -1) / side * size * 0.8 + 0.1 * size
        xy = (xy + 0.02 * torch.randn(n, 2, device="cuda")).requires_grad_(True)
        lopt = torch.optim.Adam([xy], lr=0.01)
        for it in range(_smoke(130, 3)):
            pos = xy[None].expand(nd, -1, -1)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                field = model(_wake_inputs(pos, wdir, u0, g, size)).float()
            grid = (pos / size * 2 - 1)[:, :, None, :]
            u = _F.grid_sample(field[:, None], grid, align_corners=True)[:, 0, :, 0] * 10
            power = u.clamp_min(0).pow(3).mean()
            dist = torch.cdist(xy, xy) + torch.eye(n, device="cuda") * 10
            spacing = _F.relu(0.5 - dist).pow(2).sum()
            bound = (_F.relu(-xy) + _F.relu(xy - size)).pow(2).sum()
            loss = -power / 100 + 10 * spacing + 100 * bound
            lopt.zero_grad(set_to_none=True)
            loss.backward()
            lopt.step()
            del field, u, dist
            if it % 40 == 0:
                float(power)
        with torch.no_grad():
            true = _wake_field(xy.detach()[None].expand(nd, -1, -1), wdir, u0, _smoke(128, 16), size)
            torch.stack([power.detach(), true.mean()]).tolist()


# ---------------------------------------------------------------- PMU linear state estimation service


def _se_area(nbus, npmu_frac=0.35):
    """A control area of nbus buses (ring plus chords) with PMUs on a drawn fraction of the buses measuring the bus
    voltage phasor and the current phasors of lines leaving the bus: the real measurement matrix H (m, 2 nbus) of the
    linear model z = H x, x the rectangular bus voltages, its line list and the PMU placement."""
    dev = "cuda"
    ring = torch.arange(nbus, device=dev)
    nch = nbus // 3
    a = torch.randint(0, nbus, (nch,), device=dev)
    fr = torch.cat([ring, a])
    to = torch.cat([(ring + 1) % nbus, (a + torch.randint(2, max(3, nbus // 4), (nch,), device=dev)) % nbus])
    r = 0.005 + 0.03 * torch.rand(fr.shape[0], device=dev)
    x = r * (4 + 6 * torch.rand(fr.shape[0], device=dev))
    z2 = r * r + x * x
    return {"n": nbus, "fr": fr, "to": to, "g": r / z2, "b": -x / z2, "npmu": max(2, int(nbus * npmu_frac))}


def _se_matrix(area, outage):
    """H for the area with the lines in outage (a 0/1 float per line) switched out: voltage rows for the PMU buses
    (the first npmu buses), current rows for every line measured at its from-bus."""
    dev = "cuda"
    n, npmu = area["n"], area["npmu"]
    fr, to = area["fr"], area["to"]
    nl = fr.shape[0]
    live = 1.0 - outage
    g, b = area["g"] * live, area["b"] * live
    m = 2 * npmu + 2 * nl
    hm = torch.zeros(m, 2 * n, device=dev)
    pm = torch.arange(npmu, device=dev)
    hm[2 * pm, 2 * pm] = 1.0
    hm[2 * pm + 1, 2 * pm + 1] = 1.0
    rows = 2 * npmu + 2 * torch.arange(nl, device=dev)
    for rr, cc, vv in ((rows, 2 * fr, g), (rows, 2 * fr + 1, -b), (rows + 1, 2 * fr, b), (rows + 1, 2 * fr + 1, g),
                       (rows, 2 * to, -g), (rows, 2 * to + 1, b), (rows + 1, 2 * to, -b), (rows + 1, 2 * to + 1, -g)):
        hm.index_put_((rr, cc), vv, accumulate=True)
    w = torch.cat([torch.full((2 * npmu,), 1e4, device=dev), torch.full((2 * nl,), 2.5e3, device=dev)])
    gain = hm.t() @ (hm * w[:, None]) + 1e-6 * torch.eye(2 * n, device=dev)
    chol = torch.linalg.cholesky(gain)
    ginv = torch.cholesky_inverse(chol)
    # diagonal of the residual covariance Omega = W^-1 - H G^-1 H^T, for normalised residuals
    omega = (1.0 / w - ((hm @ ginv) * hm).sum(-1)).clamp_min(1e-9)
    return hm, w, chol, omega


@_workload("PMU linear state-estimation service written by hand: 4 control areas of 300-2,400 buses (drawn; ring-and-chord topologies, PMUs on 35% of the buses measuring voltage and line-current phasors, 1,000-8,100 measurements an area); each request a data-concentrator packet of 30-240 synchrophasor frames (drawn) for every area, uploaded from reused pinned host buffers on a side stream one request ahead (waited on by event, record_stream'ed); weighted least squares per area by cholesky_solve against the gain matrix factored and cached per topology (H^T W H, Cholesky, the residual covariance diagonal), refactored after line outages drawn every 40-80 requests; residuals, chi-square bad-data statistic per frame, the 5 largest normalised residuals, angle estimates and an rfft over the frames for oscillation modes; fp32, no grad; 2,200 requests, each request's results read back")
def pmu_state_estimation_serve(rng):
    sizes = [rng.choice(_smoke([300, 600, 1200, 2400], [12, 20])) for _ in range(4)]
    areas = [_se_area(n) for n in sizes]
    fact = [_se_matrix(a, torch.zeros(a["fr"].shape[0], device="cuda")) for a in areas]
    ms = [f[0].shape[0] for f in fact]
    fmax = _smoke(240, 8)
    host = [torch.randn(fmax * sum(ms)).pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    done = [None, None]
    nreq = _smoke(2200, 3)
    next_outage = rng.randint(40, 80)

    def fetch(i):
        f = rng.randint(_smoke(30, 2), fmax)
        s = i % 2
        if done[s] is not None:
            done[s].synchronize()
        with torch.cuda.stream(side):
            z = host[s][:f * sum(ms)].view(f, sum(ms)).to("cuda", non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        done[s] = ev
        return z, ev

    nxt = fetch(0)
    for req in range(nreq):
        z, ev = nxt
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        z.record_stream(cur)
        if req + 1 < nreq:
            nxt = fetch(req + 1)
        if req == next_outage:
            k = rng.randrange(len(areas))
            a = areas[k]
            nl = a["fr"].shape[0]
            out = torch.zeros(nl, device="cuda")
            out[torch.randint(0, nl, (rng.randint(1, 4),), device="cuda")] = 1.0
            fact[k] = _se_matrix(a, out)
            next_outage += rng.randint(40, 80)
        results = []
        with torch.no_grad():
            off = 0
            for a, (hm, w, chol, omega), m in zip(areas, fact, ms):
                za = z[:, off:off + m] * 0.01 + 0.0
                off += m
                rhs = hm.t() @ (za * w).t()  # (2n, frames)
                xhat = torch.cholesky_solve(rhs, chol)
                r = za - (hm @ xhat).t()
                chi2 = (r * r * w).sum(-1)
                rn = r.abs() / omega.sqrt()
                top, where = rn.max(0).values.topk(5)
                vr, vi = xhat[0::2], xhat[1::2]
                ang = torch.atan2(vi, vr)
                vmag = torch.sqrt(vr * vr + vi * vi)
                spec = torch.fft.rfft(ang - ang.mean(-1, keepdim=True), dim=-1).abs().mean(0)
                results.append(torch.cat([chi2.max()[None], chi2.mean()[None], top, where.float(),
                                          vmag.mean()[None], vmag.min()[None], spec.argmax()[None].float()]))
            torch.stack(results).cpu()
        del z, za, rhs, xhat, r, rn

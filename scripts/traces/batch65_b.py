"""The sixty-fifth batch of held-out workloads for record.py, second half (batch65.py has the first): engineering
simulation and design on the GPU, written in torch alone. A mesh-based CFD surrogate (an encode-process-decode graph
network over unstructured 2D meshes of drawn node count, k-nearest-neighbour edges built on the device by topk,
messages summed by index_add, trained one step ahead on velocity and pressure increments of a synthetic vortex flow
with training noise; then autoregressive rollouts on larger meshes), a geometry-aware Fourier neural operator for
linear elasticity on plates with drawn holes (targets from a matrix-free Jacobi solve of the masked Navier-Cauchy
equations by finite differences on each batch, grids of drawn resolution, spectral convolutions by rfft2; zero-shot
evaluations at finer grids), a structural-health-monitoring model over vibration sensor windows (multichannel
accelerometer windows of drawn length synthesised from damped modal responses on the device for training; then a
monitoring service whose windows arrive as int16 counts in reused pinned host buffers uploaded on a side stream one
window batch ahead), and a heat-sink fin design loop (a finite-difference steady conduction-convection solver by
Jacobi sweeps generating fields for a convolutional surrogate of temperature, then density-based fin layouts
optimised through the surrogate with a volume penalty, each design checked by the solver). Same conventions as the
earlier batches: nothing downloaded, data drawn at random on the device (or, for the monitoring service, from a few
reused pinned host buffers), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: solver
sweeps, rollout lengths and design iterations are fixed on the host, masks multiplied in, neighbour lists a fixed
number by topk, no boolean-mask indexing; losses and metrics are read back only at logging points.
shm_vibration_window_serve uses a side stream (uploads waited on by event, the tensors record_stream'ed); the others
are single-stream. The graph network, the monitoring model and the fin surrogate run under bf16 autocast; the FNO's
spectral layers, the solvers and the losses are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new65.sh's header (and batch65.py's docstring for how the meta-device
runner counts): cfd_mesh_gnn_rollout_train 333,092 op outputs, 1.51 GB; elasticity_geo_fno_train 295,749,
0.21 GB; shm_vibration_window_serve 347,015, 3.39 GB; heatsink_fin_surrogate_design 314,533, 1.41 GB. The CPU
smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- mesh-based CFD surrogate (graph network)


class _GNBlock(_nn.Module):
    def __init__(self, d):
        super().__init__()
        self.edge = mlp(3 * d, d, d, layers=2, act=_nn.SiLU)
        self.node = mlp(2 * d, d, d, layers=2, act=_nn.SiLU)
        self.ne, self.nn_ = _nn.LayerNorm(d), _nn.LayerNorm(d)

    def forward(self, h, e, src, dst):
        m = self.ne(self.edge(torch.cat([e, h.index_select(0, src), h.index_select(0, dst)], -1)))
        e = e + m
        agg = torch.zeros_like(h).index_add_(0, dst, m.to(h.dtype))
        h = h + self.nn_(self.node(torch.cat([h, agg], -1)))
        return h, e


class _MeshGN(_nn.Module):
    def __init__(self, d, layers):
        super().__init__()
        self.enc_n = mlp(3 + 4, d, d, layers=2, act=_nn.SiLU)
        self.enc_e = mlp(3, d, d, layers=2, act=_nn.SiLU)
        self.blocks = _nn.ModuleList(_GNBlock(d) for _ in range(layers))
        self.dec = mlp(d, d, 3, layers=2, act=_nn.SiLU)

    def forward(self, state, ntype, pos, src, dst):
        h = self.enc_n(torch.cat([state, ntype], -1))
        rel = pos.index_select(0, dst) - pos.index_select(0, src)
        e = self.enc_e(torch.cat([rel, rel.norm(dim=-1, keepdim=True)], -1))
        for blk in self.blocks:
            h, e = blk(h, e, src, dst)
        return self.dec(h)


def _mesh(rng, n, k, dev="cuda"):
    """n jittered nodes in a 2x1 channel with a drawn cylinder hole pushed out, k-nearest edges (both ways)."""
    pos = torch.rand(n, 2, device=dev) * torch.tensor([2.0, 1.0], device=dev)
    cx, cy, r = rng.uniform(0.3, 0.7), rng.uniform(0.35, 0.65), rng.uniform(0.05, 0.12)
    c = torch.tensor([cx, cy], device=dev)
    d = pos - c
    dist = d.norm(dim=-1, keepdim=True)
    pos = torch.where(dist < r, c + d / dist.clamp_min(1e-6) * (r + (r - dist)), pos)
    d2 = (pos[:, None] - pos[None]).pow(2).sum(-1) + 1e6 * torch.eye(n, device=dev)
    idx = d2.topk(k, dim=1, largest=False).indices
    src = idx.reshape(-1)
    dst = torch.arange(n, device=dev).repeat_interleave(k)
    # node types: interior, wall (channel walls or cylinder), inflow, outflow, one-hot
    wall = ((pos[:, 1] < 0.02) | (pos[:, 1] > 0.98) | ((pos - c).norm(dim=-1) < r + 0.02)).float()
    inflow, outflow = (pos[:, 0] < 0.03).float(), (pos[:, 0] > 1.97).float()
    interior = (1 - wall) * (1 - inflow) * (1 - outflow)
    ntype = torch.stack([interior, wall, inflow, outflow], -1)
    return pos, src, dst, ntype, (cx, cy)


def _vortex_flow(pos, t, cyl, re):
    """A synthetic unsteady wake: a uniform stream plus a street of decaying Lamb-Oseen vortices shed behind the
    cylinder, convected with time: (n, 3) velocity and pressure."""
    u = torch.ones_like(pos[:, 0])
    v = torch.zeros_like(u)
    p = torch.zeros_like(u)
    for j in range(6):
        xc = cyl[0] + 0.2 + 0.25 * j + 0.5 * t
        yc = cyl[1] + (0.08 if j % 2 else -0.08)
        s = 1.0 if j % 2 else -1.0
        dx, dy = pos[:, 0] - xc, pos[:, 1] - yc
        r2 = dx * dx + dy * dy + 1e-4
        core = 0.004 * (1 + 0.2 * j) * (100.0 / re)
        g = s * 0.05 * (1 - torch.exp(-r2 / core)) / r2
        u = u - g * dy
        v = v + g * dx
        p = p - 0.5 * g * g * r2
    return torch.stack([u, v, p], -1)


@_workload("mesh-based CFD surrogate written by hand in the manner of MeshGraphNets for incompressible wakes (random init): unstructured 2D channel meshes of 1,500-4,500 nodes (drawn per step) with a drawn cylinder hole, 8 nearest-neighbour edges built on the device by topk, node types one-hot; an encode-process-decode graph network (width 128, 10 message-passing blocks with edge and node MLPs, LayerNorm, messages summed by index_add) trained one step ahead on velocity and pressure increments of a synthetic convected vortex street at drawn Reynolds numbers, training noise on the inputs, bf16 autocast, Adam with exponential decay, 240 steps; every 60 steps an autoregressive rollout of 40-60 steps (drawn) on a mesh of 5,000-8,000 nodes (no grad), the rollout error read back")
def cfd_mesh_gnn_rollout_train(rng):
    d, k = _smoke(128, 16), _smoke(8, 3)
    model = _MeshGN(d, _smoke(10, 2)).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, 0.995)
    dt = 0.02
    steps = _smoke(240, 3)
    for step in range(steps):
        model.train()
        n = rng.randint(_smoke(1500, 24), _smoke(4500, 40))
        re = rng.uniform(100, 400)
        pos, src, dst, ntype, cyl = _mesh(rng, n, k)
        t = rng.uniform(0, 2)
        s0 = _vortex_flow(pos, t, cyl, re)
        s1 = _vortex_flow(pos, t + dt, cyl, re)
        noisy = s0 + 0.01 * torch.randn_like(s0) * ntype[:, :1]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(noisy, ntype, pos, src, dst)
        target = (s1 - noisy) / dt
        loss = ((pred.float() - target) ** 2 * ntype[:, :1]).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        del pos, src, dst, ntype, s0, s1, noisy, pred, target
        if step % 10 == 0:
            float(loss)
        if (step + 1) % _smoke(60, 3) == 0:
            model.eval()
            n = rng.randint(_smoke(5000, 48), _smoke(8000, 64))
            re = rng.uniform(100, 400)
            pos, src, dst, ntype, cyl = _mesh(rng, n, k)
            state = _vortex_flow(pos, 0.0, cyl, re)
            errs = []
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for t in range(rng.randint(_smoke(40, 2), _smoke(60, 3))):
                    upd = model(state, ntype, pos, src, dst).float()
                    truth = _vortex_flow(pos, (t + 1) * dt, cyl, re)
                    # boundary nodes take their prescribed values, interior nodes the prediction
                    state = (state + dt * upd) * ntype[:, :1] + truth * (1 - ntype[:, :1])
                    errs.append(((state - truth) ** 2).mean())
                    del upd, truth
            torch.stack(errs).tolist()
            del pos, src, dst, ntype, state, errs


# ---------------------------------------------------------------- geometry-aware FNO for linear elasticity


class _SpectralConv2d(_nn.Module):
    def __init__(self, cin, cout, modes):
        super().__init__()
        self.modes = modes
        scale = 1 / (cin * cout)
        self.w1 = _nn.Parameter(scale * torch.randn(cin, cout, modes, modes, 2))
        self.w2 = _nn.Parameter(scale * torch.randn(cin, cout, modes, modes, 2))

    def forward(self, x):
        b, c, h, w = x.shape
        m = self.modes
        xf = torch.fft.rfft2(x.float())
        out = torch.zeros(b, self.w1.shape[1], h, w // 2 + 1, dtype=torch.cfloat, device=x.device)
        out[:, :, :m, :m] = torch.einsum("bixy,ioxy->boxy", xf[:, :, :m, :m], torch.view_as_complex(self.w1))
        out[:, :, -m:, :m] = torch.einsum("bixy,ioxy->boxy", xf[:, :, -m:, :m], torch.view_as_complex(self.w2))
        return torch.fft.irfft2(out, s=(h, w))


class _GeoFNO(_nn.Module):
    def __init__(self, width, modes, layers):
        super().__init__()
        self.lift = _nn.Conv2d(6, width, 1)
        self.spec = _nn.ModuleList(_SpectralConv2d(width, width, modes) for _ in range(layers))
        self.pw = _nn.ModuleList(_nn.Conv2d(width, width, 1) for _ in range(layers))
        self.proj = _nn.Sequential(_nn.Conv2d(width, 128, 1), _nn.GELU(), _nn.Conv2d(128, 3, 1))

    def forward(self, x):
        h = self.lift(x)
        for i, (s, p) in enumerate(zip(self.spec, self.pw)):
            h = s(h) + p(h)
            if i < len(self.spec) - 1:
                h = _F.gelu(h)
        return self.proj(h)


def _plate_with_holes(rng, b, g, dev="cuda"):
    """b plates on a g x g grid with 1-4 elliptical holes each (drawn): solid fraction (b, 1, g, g)."""
    lin = torch.linspace(0, 1, g, device=dev)
    yy, xx = torch.meshgrid(lin, lin, indexing="ij")
    solid = torch.ones(b, 1, g, g, device=dev)
    for i in range(b):
        for _ in range(rng.randint(1, 4)):
            cx, cy = rng.uniform(0.2, 0.8), rng.uniform(0.2, 0.8)
            a, c, th = rng.uniform(0.04, 0.15), rng.uniform(0.04, 0.15), rng.uniform(0, math.pi)
            dx, dy = xx - cx, yy - cy
            u, v = dx * math.cos(th) + dy * math.sin(th), -dx * math.sin(th) + dy * math.cos(th)
            solid[i, 0] = solid[i, 0] * torch.sigmoid(((u / a) ** 2 + (v / c) ** 2 - 1) * 20)
    return solid, xx, yy


def _elastic_jacobi(solid, traction, sweeps, lam=1.0, mu=0.5):
    """Damped Jacobi sweeps of the Navier-Cauchy equations mu lap u + (lam + mu) grad div u = -f on the grid, the
    stiffness scaled by the solid fraction (soft-material holes), the left edge clamped: (b, 2, g, g)."""
    b, _, g, _ = solid.shape
    h = 1.0 / (g - 1)
    lap = torch.tensor([[0.0, 1, 0], [1, -4, 1], [0, 1, 0]], device=solid.device)[None, None] / h ** 2
    dxx = torch.tensor([[0.0, 0, 0], [1, -2, 1], [0, 0, 0]], device=solid.device)[None, None] / h ** 2
    dyy = dxx.transpose(-1, -2)
    dxy = torch.tensor([[1.0, 0, -1], [0, 0, 0], [-1, 0, 1]], device=solid.device)[None, None] / (4 * h * h)
    kmat = solid * (1 - 1e-3) + 1e-3
    diag = (4 * mu + 2 * (lam + mu)) / h ** 2
    clamp = torch.ones(1, 1, g, g, device=solid.device)
    clamp[..., 0] = 0
    u = torch.zeros(b, 2, g, g, device=solid.device)
    for _ in range(sweeps):
        ux, uy = u[:, :1], u[:, 1:]
        up = _F.pad(u, (1, 1, 1, 1), mode="replicate")
        uxp, uyp = up[:, :1], up[:, 1:]
        rx = mu * _F.conv2d(uxp, lap) + (lam + mu) * (_F.conv2d(uxp, dxx) + _F.conv2d(uyp, dxy))
        ry = mu * _F.conv2d(uyp, lap) + (lam + mu) * (_F.conv2d(uyp, dyy) + _F.conv2d(uxp, dxy))
        res = kmat * torch.cat([rx, ry], 1) + traction
        u = (u + 0.8 * res / (diag * kmat)) * clamp
        del ux, uy, up, uxp, uyp, rx, ry, res
    return u


@_workload("geometry-aware Fourier neural operator for linear elasticity written by hand (random init): plates with 1-4 elliptical holes (drawn) on grids of 48, 64, 80 or 96 points a side (drawn per batch) in batches fitting a budget of 2^16 grid points, a drawn traction load; reference displacements by 40 damped Jacobi sweeps of the masked Navier-Cauchy equations by finite-difference convolutions on each batch (no grad), a von Mises-like stress from them; an FNO (width 32, 12 modes, 4 spectral layers by rfft2 and complex einsum, pointwise convolutions) predicting displacements and stress from the geometry, coordinates and load, fp32 spectral layers, AdamW with a step decay, 150 steps; every 50 steps a zero-shot evaluation on 4 plates at 128 or 160 points a side (drawn), the relative errors read back")
def elasticity_geo_fno_train(rng):
    width, modes = _smoke(32, 8), _smoke(12, 3)
    model = _GeoFNO(width, modes, _smoke(4, 2)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.StepLR(opt, 50, 0.5)
    budget = _smoke(1 << 16, 512)
    sweeps = _smoke(40, 3)

    def batch(b, g):
        solid, xx, yy = _plate_with_holes(rng, b, g)
        load = torch.zeros(b, 2, g, g, device="cuda")
        fx, fy = rng.uniform(-1, 1), rng.uniform(-1, 1)
        load[:, 0, :, -3:] = fx * 50
        load[:, 1, :, -3:] = fy * 50
        with torch.no_grad():
            u = _elastic_jacobi(solid, load * solid, sweeps)
            ex = torch.gradient(u[:, 0], dim=-1)[0]
            ey = torch.gradient(u[:, 1], dim=-2)[0]
            gxy = torch.gradient(u[:, 0], dim=-2)[0] + torch.gradient(u[:, 1], dim=-1)[0]
            vm = (ex * ex - ex * ey + ey * ey + 0.75 * gxy * gxy).clamp_min(0).sqrt() * solid[:, 0]
            target = torch.cat([u * 1e3, vm[:, None] * 1e3], 1)
        inp = torch.cat([solid, xx.expand(b, 1, g, g), yy.expand(b, 1, g, g), load / 50], 1)
        inp = torch.cat([inp, (solid * (1 - solid) * 4)], 1)
        return inp, target, solid

    steps = _smoke(150, 3)
    for step in range(steps):
        model.train()
        g = rng.choice(_smoke([48, 64, 80, 96], [12, 16]))
        b = max(1, budget // (g * g))
        inp, target, solid = batch(b, g)
        pred = model(inp)
        loss = ((pred - target) ** 2 * solid).sum() / (solid.sum() * 3) / (target.pow(2).mean() + 1e-6)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        del inp, target, solid, pred
        if step % 20 == 0:
            float(loss)
        if (step + 1) % _smoke(50, 3) == 0:
            model.eval()
            errs = []
            with torch.no_grad():
                for _ in range(_smoke(4, 1)):
                    g = rng.choice(_smoke([128, 160], [20]))
                    inp, target, solid = batch(1, g)
                    pred = model(inp)
                    errs.append(((pred - target) * solid).norm() / ((target * solid).norm() + 1e-6))
                    del inp, target, solid, pred
            torch.stack(errs).tolist()


# ---------------------------------------------------------------- structural health monitoring over sensor windows


class _SHMNet(_nn.Module):
    """A strided 1D convolution stem (downsampling 16x) over the sensor channels, a transformer over the tokens, a
    damage-state head and a damage-location head."""

    def __init__(self, ch, d, heads, layers, nstates, nloc):
        super().__init__()
        self.stem = _nn.Sequential(
            _nn.Conv1d(ch, d // 2, 7, stride=2, padding=3), _nn.GroupNorm(8, d // 2), _nn.GELU(),
            _nn.Conv1d(d // 2, d, 5, stride=2, padding=2), _nn.GroupNorm(8, d), _nn.GELU(),
            _nn.Conv1d(d, d, 5, stride=2, padding=2), _nn.GroupNorm(8, d), _nn.GELU(),
            _nn.Conv1d(d, d, 3, stride=2, padding=1))
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.state = _nn.Linear(d, nstates)
        self.loc = _nn.Linear(d, nloc)

    def forward(self, x):
        h = self.stem(x).transpose(1, 2)
        for blk in self.blocks:
            h = blk(h)
        h = self.norm(h).mean(1)
        return self.state(h), self.loc(h)


def _modal_windows(b, ch, t, states, locs, fs=512.0, dev="cuda"):
    """Accelerometer windows from 6 damped modes whose frequencies drop with damage state near the damaged
    element: (b, ch, t)."""
    tt = torch.arange(t, device=dev) / fs
    f0 = torch.tensor([3.1, 8.7, 17.2, 28.4, 42.5, 59.3], device=dev)
    sens = torch.linspace(0, 1, ch, device=dev)
    shape = torch.sin(math.pi * sens[:, None] * torch.arange(1, 7, device=dev)[None])  # (ch, 6)
    near = torch.exp(-((sens[None] - locs[:, None]) ** 2) / 0.02)  # (b, ch)
    drop = 1 - 0.03 * states[:, None] * (near @ shape.abs()) / ch  # (b, 6)
    f = f0 * drop
    amp = torch.randn(b, 6, device=dev)
    phase = torch.rand(b, 6, device=dev) * 2 * math.pi
    zeta = 0.02
    modes = amp[..., None] * torch.exp(-zeta * 2 * math.pi * f[..., None] * (tt % 2.0)) * torch.sin(
        2 * math.pi * f[..., None] * tt + phase[..., None])  # (b, 6, t)
    x = torch.einsum("cm,bmt->bct", shape, modes)
    return x + 0.05 * torch.randn_like(x)


@_workload("structural-health-monitoring model over vibration sensor windows written by hand (random init): 16-channel accelerometer windows of 1,024-4,096 samples (drawn per batch) synthesised on the device from 6 damped bridge modes whose frequencies drop with a drawn damage state (8) near a drawn location, batches of 32-128 (drawn); a strided 1D-convolution stem (16x downsampling, GroupNorm) and a 4-layer pre-norm transformer (width 192, 6 heads) with damage-state and location heads, bf16 autocast, AdamW, 340 steps; then a monitoring service of 850-950 window batches (drawn) of 8-96 windows of 2,048 or 4,096 samples (drawn) arriving as int16 counts in 2 reused pinned host buffers uploaded on a side stream one batch ahead (waited on by event, record_stream'ed), scaled to g on the device, classified under bf16 autocast with a running exponential alarm score per sensor array, the alarm states read back every batch")
def shm_vibration_window_serve(rng):
    ch, d, heads = 16, _smoke(192, 32), _smoke(6, 2)
    nstates, nloc = 8, 10
    model = _SHMNet(ch, d, heads, _smoke(4, 1), nstates, nloc).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    steps = _smoke(340, 3)
    for step in range(steps):
        model.train()
        t = rng.choice(_smoke([1024, 2048, 3072, 4096], [64, 128]))
        b = rng.choice(_smoke([32, 64, 96, 128], [2, 3]))
        states = torch.randint(0, nstates, (b,), device="cuda")
        locbin = torch.randint(0, nloc, (b,), device="cuda")
        x = _modal_windows(b, ch, t, states.float(), (locbin.float() + 0.5) / nloc)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            ls, ll = model(x)
        loss = _F.cross_entropy(ls.float(), states) + 0.5 * _F.cross_entropy(ll.float(), locbin)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        del states, locbin, x, ls, ll
        if step % 20 == 0:
            float(loss)

    model.eval()
    tmax, bmax = _smoke(4096, 128), _smoke(96, 4)
    host = [torch.randint(-2000, 2000, (bmax * ch * tmax,), dtype=torch.int16).pin_memory() for _ in range(2)]
    up = SideUploads(host)

    def fetch(i, b, t):
        z, ev = up.upload(i, b * ch * t)
        return z, ev

    narrays = 24
    alarm = torch.zeros(narrays, nstates, device="cuda")
    nb = rng.randint(_smoke(850, 3), _smoke(950, 5))
    plan = [(rng.randint(_smoke(8, 1), bmax), rng.choice(_smoke([2048, 4096], [64, 128]))) for _ in range(nb)]
    nxt = fetch(0, *plan[0])
    with torch.no_grad():
        for i in range(nb):
            b, t = plan[i]
            z, ev = nxt
            if i + 1 < nb:
                nxt = fetch(i + 1, *plan[i + 1])
            cur = torch.cuda.current_stream()
            cur.wait_event(ev)
            z.record_stream(cur)
            x = z.view(b, ch, t).float() * (2.0 / 32768)
            x = x - x.mean(-1, keepdim=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                ls, ll = model(x)
            prob = ls.float().softmax(-1)
            arr = torch.tensor([rng.randrange(narrays) for _ in range(b)], device="cuda")
            upd = torch.zeros_like(alarm).index_add_(0, arr, prob)
            cnt = torch.zeros(narrays, 1, device="cuda").index_add_(0, arr, torch.ones(b, 1, device="cuda"))
            alarm = 0.9 * alarm + 0.1 * upd / cnt.clamp_min(1)
            alarm.argmax(-1).tolist()
            del z, ev, x, ls, ll, prob, arr, upd, cnt


# ---------------------------------------------------------------- heat-sink fin design with a neural surrogate


def _heat_solve(rho, sweeps, hconv=0.05, kmin=0.01):
    """Steady conduction with convection to ambient by damped Jacobi sweeps on the grid: conductivity
    kmin + (1 - kmin) rho^3, convection where there is fin material, a heat source along the base (bottom rows),
    ambient temperature 0: rho (b, 1, g, g) -> temperature (b, 1, g, g)."""
    b, _, g, _ = rho.shape
    k = kmin + (1 - kmin) * rho ** 3
    src = torch.zeros(1, 1, g, g, device=rho.device)
    src[..., -2:, g // 4: 3 * g // 4] = 1.0
    hmap = hconv * rho
    kp = _F.pad(k, (1, 1, 1, 1), mode="replicate")
    kn = [0.5 * (k + kp[..., :-2, 1:-1]), 0.5 * (k + kp[..., 2:, 1:-1]), 0.5 * (k + kp[..., 1:-1, :-2]),
          0.5 * (k + kp[..., 1:-1, 2:])]
    diag = kn[0] + kn[1] + kn[2] + kn[3] + hmap
    temp = torch.zeros(b, 1, g, g, device=rho.device)
    for _ in range(sweeps):
        tp = _F.pad(temp, (1, 1, 1, 1), mode="replicate")
        nb = kn[0] * tp[..., :-2, 1:-1] + kn[1] * tp[..., 2:, 1:-1] + kn[2] * tp[..., 1:-1, :-2] + \
            kn[3] * tp[..., 1:-1, 2:]
        temp = 0.3 * temp + 0.7 * (nb + src) / diag
        del tp, nb
    return temp


class _ThermalUNet(_nn.Module):
    def __init__(self, c):
        super().__init__()

        def blk(i, o):
            return _nn.Sequential(_nn.Conv2d(i, o, 3, padding=1), _nn.GroupNorm(8, o), _nn.SiLU(),
                                  _nn.Conv2d(o, o, 3, padding=1), _nn.GroupNorm(8, o), _nn.SiLU())

        self.e1, self.e2, self.e3 = blk(3, c), blk(c, 2 * c), blk(2 * c, 4 * c)
        self.d2, self.d1 = blk(6 * c, 2 * c), blk(3 * c, c)
        self.head = _nn.Conv2d(c, 1, 1)

    def forward(self, x):
        a = self.e1(x)
        b = self.e2(_F.avg_pool2d(a, 2))
        c = self.e3(_F.avg_pool2d(b, 2))
        u = self.d2(torch.cat([b, _F.interpolate(c, scale_factor=2.0, mode="bilinear", align_corners=False)], 1))
        u = self.d1(torch.cat([a, _F.interpolate(u, scale_factor=2.0, mode="bilinear", align_corners=False)], 1))
        return self.head(u)


def _fin_layouts(rng, b, g, dev="cuda"):
    """b random fin layouts: a base plate along the bottom, 4-12 vertical fins of drawn thickness and height,
    blurred: (b, 1, g, g) in [0, 1]."""
    nf = [rng.randint(4, 12) for _ in range(b)]
    fmax = max(nf)
    x0 = [[(j + 0.5) * g / nf[i] + rng.uniform(-1, 1) if j < nf[i] else -1e3 for j in range(fmax)] for i in range(b)]
    th = [[rng.uniform(0.01, 0.04) * g for _ in range(fmax)] for _ in range(b)]
    hgt = [[rng.uniform(0.3, 0.9) * g for _ in range(fmax)] for _ in range(b)]
    x0, th, hgt = (torch.tensor(v, device=dev)[..., None, None] for v in (x0, th, hgt))  # (b, fmax, 1, 1)
    xs = torch.arange(g, device=dev, dtype=torch.float32)
    colmask = torch.sigmoid((th - (xs[None, None, None, :] - x0).abs()) * 2)  # (b, fmax, 1, g)
    rowmask = torch.sigmoid((xs[None, None, :, None] - (g - hgt)) * 2)  # (b, fmax, g, 1)
    rho = (colmask * rowmask).amax(1, keepdim=True)
    plate = (torch.arange(g, device=dev) >= g - max(2, g // 16)).float()[None, None, :, None]
    rho = torch.maximum(rho, plate)
    return _F.avg_pool2d(rho, 3, 1, 1)


@_workload("heat-sink fin design loop with a neural surrogate written by hand (random init): a finite-difference steady conduction-convection solver (conductivity by a SIMP power law, convection on fin material, a heated base strip) by 60 damped Jacobi sweeps generating temperature fields of random fin layouts (4-12 fins of drawn thickness and height) on grids of 64 or 96 points a side (drawn per batch), batches of 16-48 (drawn), fresh layouts solved every step; a 3-level convolutional U-Net surrogate (32 channels, GroupNorm) of the temperature from layout and coordinates, bf16 autocast, AdamW, 250 steps; then 3 design campaigns of 16-32 layouts (drawn) optimising fin density logits by Adam through the surrogate for 100-130 iterations (drawn) against the peak and mean base temperature with a volume penalty, each design checked by the solver every 40 iterations, the surrogate's error and the true peak temperatures read back")
def heatsink_fin_surrogate_design(rng):
    c = _smoke(32, 8)
    model = _ThermalUNet(c).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    sweeps = _smoke(60, 3)

    def features(rho):
        b, _, g, _ = rho.shape
        lin = torch.linspace(-1, 1, g, device="cuda")
        yy, xx = torch.meshgrid(lin, lin, indexing="ij")
        return torch.cat([rho, xx.expand(b, 1, g, g), yy.expand(b, 1, g, g)], 1)

    steps = _smoke(250, 3)
    for step in range(steps):
        model.train()
        g = rng.choice(_smoke([64, 96], [16]))
        b = rng.randint(_smoke(16, 2), _smoke(48, 3))
        with torch.no_grad():
            rho = _fin_layouts(rng, b, g)
            temp = _heat_solve(rho, sweeps)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(features(rho))
        loss = _F.mse_loss(pred.float(), temp * 10)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del rho, temp, pred
        if step % 20 == 0:
            float(loss)

    model.eval().requires_grad_(False)
    for _ in range(_smoke(3, 1)):
        g = rng.choice(_smoke([64, 96], [16]))
        nd = rng.randint(_smoke(16, 2), _smoke(32, 3))
        with torch.no_grad():
            init = _fin_layouts(rng, nd, g).clamp(0.02, 0.98)
        logits = torch.log(init / (1 - init)).requires_grad_(True)
        dopt = torch.optim.Adam([logits], lr=0.05)
        base = torch.zeros(1, 1, g, g, device="cuda")
        base[..., -2:, g // 4: 3 * g // 4] = 1.0
        iters = rng.randint(_smoke(100, 2), _smoke(130, 4))
        for it in range(iters):
            rho = torch.sigmoid(logits)
            rho = _F.avg_pool2d(rho, 3, 1, 1)  # a density filter
            with torch.autocast("cuda", dtype=torch.bfloat16):
                temp = model(features(rho)).float()
            peak = torch.logsumexp(temp.flatten(1) * 20, 1) / 20
            mean_base = (temp * base).sum((1, 2, 3)) / base.sum()
            vol = rho.mean((1, 2, 3))
            obj = peak + 0.5 * mean_base + 20 * _F.relu(vol - 0.35) ** 2
            dopt.zero_grad(set_to_none=True)
            obj.sum().backward()
            dopt.step()
            del rho, temp, peak, mean_base, vol, obj
            if (it + 1) % 40 == 0:
                with torch.no_grad():
                    rho = _F.avg_pool2d(torch.sigmoid(logits), 3, 1, 1)
                    true = _heat_solve(rho, sweeps) * 10
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        est = model(features(rho)).float()
                    torch.stack([true.amax((1, 2, 3)), (est - true).abs().mean((1, 2, 3))]).tolist()
                del rho, true, est
        del logits, dopt, init, base
    model.requires_grad_(True)

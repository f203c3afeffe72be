"""The fifty-seventh batch of held-out workloads for record.py, second half (batch57.py has the first): energy systems
and industry on the GPU, written in torch alone. Battery state-of-health estimation with a physics-informed
equivalent-circuit model (discharge segments of drawn length (256-1,024 samples) under dynamic current profiles,
cells at drawn ages simulated on the device with an open-circuit-voltage curve, ohmic and RC polarisation by a
lower-triangular decay matrix; a 1D CNN and transformer encoder estimating SOH and the circuit parameters, the
voltage reconstructed from them by the same circuit as a physics loss; evaluations over whole ageing trajectories),
visual defect inspection on a production line with PatchCore (a wide ResNet-style backbone of random init, frozen,
locally aware patch features of two stages, memory banks of good parts per product at drawn resolutions reduced by
greedy k-center coreset selection; then a serving phase with image batches of drawn size uploaded as uint8 from
reused pinned host buffers on a side stream one request ahead, nearest-neighbour distances to the bank in chunks,
anomaly maps upsampled and smoothed, image scores read back), model-predictive control of a chemical reactor through a
learned plant model (a CSTR with Arrhenius kinetics and a cooling jacket simulated by RK4 in batch to make data, a
residual MLP plant trained by multi-step rollouts of drawn horizon, then closed-loop MPC over a batch of reactors
with setpoint changes: the control sequence optimised by Adam through the learned model each interval, the true
plant stepped with the first move), and solar PV nowcasting from sky images and irradiance series (sky-camera frames
made on the device, sun disk at a computed solar position and clouds by spectrally filtered noise advected between
frames, at drawn resolutions, clear-sky index history; a per-frame CNN, a temporal transformer over the frames and a
1D CNN over the irradiance history predicting the clear-sky index for 1-30 minute horizons; evaluation of the skill
over smart persistence). Same conventions as the earlier batches: nothing downloaded, data drawn at random on the
device (or, for the inspection service, from a few reused pinned host buffers), `rng` the workload's random.Random
for every shape, count and sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny.
No control flow reads a tensor's value: counts are fixed on the host (the coreset's iterations, the MPC's
iterations), masks multiplied in, no boolean-mask indexing; losses, scores and skills are read back only at logging
points (the service returns each request's scores, as a service must). patchcore_defect_inspect_serve uses a side
stream (uploads waited on by event, the tensors record_stream'ed); the others are single-stream. The CNNs, the
transformers and the plant MLP run under bf16 autocast; the circuit model, the coreset and nearest-neighbour
distances, the reactor simulation and the losses are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch57.py's header says the same of its half): every workload of this half
was run whole at its final real sizes (RECORD_SMOKE unset) on PyTorch's meta device with the helper's runner
(/tmp/b57/meta_run.py, not committed, a copy of /work/notes/meta_run.py: smoke_cpu.py's patching with "cuda" mapped
to "meta", readbacks answered with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking a math
path, streams, events and pinned memory no-ops; boolean-mask indexing, which the meta device cannot size, is
avoided), its op outputs counted there (events about 1.8x that count) and its peak live bytes tracked:
battery_soh_ecm_train 309,527 op outputs, peak 2.02 GB; patchcore_defect_inspect_serve 330,699, 0.82 GB;
cstr_neural_mpc_control 338,506, 0.28 GB; pv_skyimage_nowcast_train 325,202, 0.33 GB (peaks in fp32 where autocast
would take bf16). record_new57.sh's header has them too, with the first runs that led to resizes. The CPU smoke run
(RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- battery state of health, physics-informed


def _ocv(soc):
    """An NMC-like open-circuit-voltage curve."""
    return 3.0 + 1.2 * soc - 0.25 * soc * soc + 0.15 * torch.tanh(20 * (soc - 0.05)) - 0.1 * torch.exp(
        -30 * (1 - soc).clamp_min(0))


def _ecm_voltage(cur, soc0, cap, r0, r1, tau, dt):
    """Terminal voltage of a first-order Thevenin circuit for current profiles cur (b, t): the SOC by cumulative
    charge, the RC polarisation by a lower-triangular decay matrix exp(-(i-j) dt / tau) (b, t, t)."""
    t = cur.shape[1]
    soc = (soc0[:, None] - torch.cumsum(cur, 1) * dt / (3600 * cap[:, None])).clamp(0, 1)
    i = torch.arange(t, device=cur.device, dtype=torch.float32)
    lag = (i[:, None] - i[None, :]).clamp_min(0)
    tri = torch.ones(t, t, device=cur.device).tril()
    decay = torch.exp(-lag[None] * dt / tau[:, None, None]) * tri[None]
    v_rc = (decay @ (cur * r1[:, None] * (1 - math.exp(-1.0)) * dt / tau[:, None]).unsqueeze(-1))[..., 0]
    return _ocv(soc) - cur * r0[:, None] - v_rc


def _cells(b, t, age=None):
    """b discharge segments of t samples at 1 s: drawn ages (equivalent full cycles 0-2,000), the true capacity,
    resistances and time constant following fade laws, a piecewise-constant dynamic current profile, temperature."""
    dev = "cuda"
    age = torch.rand(b, device=dev) * 2000 if age is None else age
    soh = 1 - 0.12 * (age / 1000).pow(0.75) - 0.02 * torch.rand(b, device=dev)
    cap = 3.0 * soh
    r0 = 0.02 * (1 + 0.6 * (age / 2000)) * (1 + 0.05 * torch.randn(b, device=dev).abs())
    r1 = 0.015 * (1 + 0.8 * (age / 2000))
    tau = 30 + 20 * torch.rand(b, device=dev)
    nseg = 16
    levels = torch.rand(b, nseg, device=dev) * 3 - 0.5
    cur = levels.repeat_interleave(t // nseg, 1)
    cur = cur + 0.05 * torch.randn_like(cur)
    soc0 = 0.7 + 0.3 * torch.rand(b, device=dev)
    v = _ecm_voltage(cur, soc0, cap, r0, r1, tau, 1.0) + 0.003 * torch.randn_like(cur)
    temp = 25 + torch.cumsum(cur.abs() * 0.002, 1) + 0.1 * torch.randn_like(cur)
    x = torch.stack([v, cur, temp / 40, torch.diff(v, dim=1, prepend=v[:, :1]) * 50], 1)
    return x, cur, v, soc0, torch.stack([soh, r0 * 50, r1 * 50, tau / 50], -1)


class _SohNet(_nn.Module):
    def __init__(self, d, depth, heads):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv1d(4, 64, 7, padding=3), _nn.BatchNorm1d(64), _nn.GELU(),
                                   _nn.Conv1d(64, 128, 5, stride=2, padding=2), _nn.BatchNorm1d(128), _nn.GELU(),
                                   _nn.Conv1d(128, d, 5, stride=2, padding=2), _nn.BatchNorm1d(d), _nn.GELU(),
                                   _nn.Conv1d(d, d, 3, stride=2, padding=1))
        self.enc = _nn.Sequential(*(PreNormBlock(d, heads, 4 * d) for _ in range(depth)))
        self.head = _nn.Sequential(_nn.LayerNorm(d), _nn.Linear(d, 256), _nn.GELU(), _nn.Linear(256, 4))

    def forward(self, x):
        h = self.stem(x).transpose(1, 2)
        h = self.enc(h)
        return self.head(h.mean(1))


@_workload("battery state-of-health estimation with a physics-informed equivalent-circuit model written by hand (random init): discharge segments of 256-1,024 samples at 1 s (drawn per batch) of cells at drawn ages (0-2,000 equivalent cycles) simulated on the device (capacity fade and resistance growth laws, an NMC open-circuit-voltage curve, ohmic drop and RC polarisation by a lower-triangular decay matrix, a 16-level dynamic current profile, temperature), batches cut to a budget of 65,536 samples (64-256 segments); a 1D CNN stem (stride 8) and a 4-layer transformer encoder (width 192, 6 heads) estimating SOH, R0, R1 and tau; loss: MSE to the true parameters plus the terminal voltage reconstructed through the same circuit from the estimates (a b x t x t decay matrix with grad); bf16 autocast for the network, the circuit fp32; AdamW with warm-up, 400 steps; every 100 an evaluation over 4 ageing trajectories (64 ages each, 1,024 samples), SOH RMSE read back")
def battery_soh_ecm_train(rng):
    d, depth, heads = _smoke(192, 32), _smoke(4, 4), _smoke(6, 2)
    model = _SohNet(d, depth, heads).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    steps, warm = _smoke(400, 3), _smoke(20, 1)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warm))
    lengths = _smoke([256, 512, 768, 1024], [32, 64])
    budget = _smoke(65536, 256)
    for step in range(steps):
        model.train()
        t = rng.choice(lengths)
        b = max(4, min(256, budget // t))
        with torch.no_grad():
            x, cur, v, soc0, target = _cells(b, t)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            est = model(x)
        est = est.float()
        soh = est[:, 0].sigmoid() * 0.5 + 0.5
        r0 = _F.softplus(est[:, 1]) / 50 + 1e-3
        r1 = _F.softplus(est[:, 2]) / 50 + 1e-3
        tau = _F.softplus(est[:, 3]) * 50 + 5
        vhat = _ecm_voltage(cur, soc0, 3.0 * soh, r0, r1, tau, 1.0)
        pred = torch.stack([soh, r0 * 50, r1 * 50, tau / 50], -1)
        loss = _F.mse_loss(pred, target) + 10 * _F.mse_loss(vhat, v)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        del x, cur, v, est, vhat, pred
        if (step + 1) % _smoke(100, 3) == 0:
            model.eval()
            errs = []
            with torch.no_grad():
                for _ in range(_smoke(4, 1)):
                    ages = torch.linspace(0, 2000, _smoke(64, 4), device="cuda")
                    x, _c, _v, _s, target = _cells(ages.shape[0], max(lengths), ages)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        est = model(x).float()
                    errs.append((est[:, 0].sigmoid() * 0.5 + 0.5 - target[:, 0]).pow(2).mean().sqrt())
            torch.stack(errs).tolist()
            float(loss)


# ---------------------------------------------------------------- PatchCore defect inspection service


class _WideBlock(_nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        mid = cout // 2
        self.c1, self.b1 = _nn.Conv2d(cin, mid, 1, bias=False), _nn.BatchNorm2d(mid)
        self.c2, self.b2 = _nn.Conv2d(mid, mid, 3, stride, 1, bias=False), _nn.BatchNorm2d(mid)
        self.c3, self.b3 = _nn.Conv2d(mid, cout, 1, bias=False), _nn.BatchNorm2d(cout)
        self.down = (_nn.Sequential(_nn.Conv2d(cin, cout, 1, stride, bias=False), _nn.BatchNorm2d(cout))
                     if stride != 1 or cin != cout else _nn.Identity())

    def forward(self, x):
        h = _F.relu(self.b1(self.c1(x)))
        h = _F.relu(self.b2(self.c2(h)))
        return _F.relu(self.b3(self.c3(h)) + self.down(x))


class _WideBackbone(_nn.Module):
    """A WideResNet-50-like trunk to stage 3 (fewer blocks): features of stage 2 (stride 8) and stage 3 (16)."""

    def __init__(self, w):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, w, 7, 2, 3, bias=False), _nn.BatchNorm2d(w), _nn.ReLU(),
                                   _nn.MaxPool2d(3, 2, 1))
        self.l1 = _nn.Sequential(_WideBlock(w, 4 * w, 1), _WideBlock(4 * w, 4 * w, 1))
        self.l2 = _nn.Sequential(_WideBlock(4 * w, 8 * w, 2), _WideBlock(8 * w, 8 * w, 1), _WideBlock(8 * w, 8 * w, 1))
        self.l3 = _nn.Sequential(_WideBlock(8 * w, 16 * w, 2), _WideBlock(16 * w, 16 * w, 1),
                                 _WideBlock(16 * w, 16 * w, 1))

    def forward(self, x):
        f2 = self.l2(self.l1(self.stem(x)))
        return f2, self.l3(f2)


def _patch_features(backbone, imgs, proj):
    """Locally aware patch features: stage 2 and upsampled stage 3, 3x3 average-pooled, projected: (b * h * w, d)."""
    with torch.autocast("cuda", dtype=torch.bfloat16):
        f2, f3 = backbone(imgs)
    f2 = _F.avg_pool2d(f2.float(), 3, 1, 1)
    f3 = _F.interpolate(_F.avg_pool2d(f3.float(), 3, 1, 1), size=f2.shape[-2:], mode="bilinear",
                        align_corners=False)
    f = torch.cat([f2, f3], 1)
    b, c, h, w = f.shape
    return f.permute(0, 2, 3, 1).reshape(-1, c) @ proj, (b, h, w)


def _gauss_kernel(sigma, device):
    r = int(3 * sigma)
    x = torch.arange(-r, r + 1, device=device, dtype=torch.float32)
    k = torch.exp(-x * x / (2 * sigma * sigma))
    k = k / k.sum()
    return k, r


@_workload("visual defect inspection service with PatchCore written by hand (random-init WideResNet-style trunk, frozen, bf16 autocast): 3 products at drawn resolutions (224, 256 or 288); per product a memory bank of locally aware patch features (stage 2 and upsampled stage 3, 3x3 average-pooled, randomly projected to 256 dims) from 160-240 good images (drawn) in batches of 16, reduced to 1.5% by greedy k-center coreset selection (fp32, one distance update a centre); then 1,200 inspection requests of 4-24 images (drawn) of a drawn product, uploaded as uint8 from reused pinned host buffers on a side stream one request ahead (waited on by event, record_stream'ed), normalised on the device, nearest-neighbour distances of every patch to the bank in chunks of 8,192 patches (cdist, top-3 for the PatchCore reweighting), anomaly maps bilinearly upsampled to the image and smoothed by a separable Gaussian (sigma 4), image scores and the maps' maxima read back")
def patchcore_defect_inspect_serve(rng):
    w = _smoke(32, 4)
    backbone = _WideBackbone(w).cuda().eval().requires_grad_(False)
    dfeat, dproj = 24 * w, _smoke(256, 16)
    proj = torch.randn(dfeat, dproj, device="cuda") / math.sqrt(dproj)
    res = _smoke([224, 256, 288], [32, 48])
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1) * 255
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1) * 255
    products = []
    with torch.no_grad():
        for _p in range(_smoke(3, 2)):
            r = rng.choice(res)
            feats = []
            for _ in range(rng.randint(_smoke(10, 1), _smoke(15, 2))):
                imgs = (torch.rand(_smoke(16, 2), 3, r, r, device="cuda") * 255 - mean) / std
                f, _shape = _patch_features(backbone, imgs, proj)
                feats.append(f)
            feats = torch.cat(feats)
            ncore = max(4, int(feats.shape[0] * 0.015))
            sel = [rng.randrange(feats.shape[0])]
            mind = torch.cdist(feats, feats[sel[0]][None])[:, 0]
            picks = [torch.tensor([sel[0]], device="cuda")]
            for _ in range(ncore - 1):
                nxt = mind.argmax()
                picks.append(nxt[None])
                mind = torch.minimum(mind, (feats - feats.index_select(0, nxt[None])).pow(2).sum(-1).sqrt())
            bank = feats[torch.cat(picks)].contiguous()
            products.append((r, bank))
            del feats, mind, picks
    k1d, rad = _gauss_kernel(4.0, "cuda")
    bmax, rmax = _smoke(24, 2), max(res)
    host = [torch.randint(0, 256, (bmax * 3 * rmax * rmax,), dtype=torch.uint8).pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    done = [None, None]
    nreq, chunk = _smoke(1200, 3), _smoke(8192, 64)

    def fetch(i):
        p, b = rng.randrange(len(products)), rng.randint(_smoke(4, 1), bmax)
        r = products[p][0]
        s = i % 2
        if done[s] is not None:
            done[s].synchronize()
        with torch.cuda.stream(side):
            x = host[s][:b * 3 * r * r].view(b, 3, r, r).to("cuda", non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        done[s] = ev
        return p, x, ev

    nxt = fetch(0)
    for req in range(nreq):
        p, x, ev = nxt
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        x.record_stream(cur)
        if req + 1 < nreq:
            nxt = fetch(req + 1)
        r, bank = products[p]
        with torch.no_grad():
            imgs = (x.float() - mean) / std
            f, (b, h, w_) = _patch_features(backbone, imgs, proj)
            dists, nn3 = [], []
            for c0 in range(0, f.shape[0], chunk):
                d = torch.cdist(f[c0:c0 + chunk], bank)
                v, _i = d.topk(3, dim=1, largest=False)
                dists.append(v[:, 0])
                nn3.append(v)
                del d
            score = torch.cat(dists).view(b, 1, h, w_)
            nn3 = torch.cat(nn3).view(b, h * w_, 3)
            wgt = 1 - torch.softmax(-nn3, -1)[..., 0]  # PatchCore's reweighting of the most anomalous patch
            amap = _F.interpolate(score, size=(r, r), mode="bilinear", align_corners=False)
            amap = _F.conv2d(_F.pad(amap, (rad, rad, 0, 0), mode="reflect"), k1d.view(1, 1, 1, -1))
            amap = _F.conv2d(_F.pad(amap, (0, 0, rad, rad), mode="reflect"), k1d.view(1, 1, -1, 1))
            flat = score.view(b, -1)
            top, at = flat.max(-1)
            img_score = top * wgt.gather(1, at[:, None])[:, 0]
            torch.stack([img_score, amap.amax((1, 2, 3)), at.float()], -1).cpu()
        del x, imgs, f, dists, score, nn3, amap


# ---------------------------------------------------------------- CSTR model-predictive control via a neural plant


def _cstr_rhs(s, u):
    """An exothermic CSTR (A -> B) with a cooling jacket: states (c_A mol/l, T K), inputs (coolant T K, feed
    fraction)."""
    ca, temp = s[..., 0], s[..., 1]
    tc, q = 280 + 40 * u[..., 0], 60 + 60 * u[..., 1]
    k = 7.2e10 * torch.exp(-8750.0 / temp)
    dca = q / 100 * (1.0 - ca) - k * ca
    dt = q / 100 * (350 - temp) + 4.78e4 / 239.0 / 1.0 * k * ca * 1e-2 * 209 + 0.5 * (tc - temp) * 2.09
    return torch.stack([dca, dt / 4], -1)


def _rk4(s, u, h):
    k1 = _cstr_rhs(s, u)
    k2 = _cstr_rhs(s + 0.5 * h * k1, u)
    k3 = _cstr_rhs(s + 0.5 * h * k2, u)
    k4 = _cstr_rhs(s + h * k3, u)
    return s + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


class _Plant(_nn.Module):
    def __init__(self, h, layers):
        super().__init__()
        mods, d = [], 2 + 2
        for _ in range(layers):
            mods += [_nn.Linear(d, h), _nn.SiLU()]
            d = h
        mods.append(_nn.Linear(d, 2))
        self.net = _nn.Sequential(*mods)
        self.register_buffer("scale", torch.tensor([1.0, 100.0]))
        self.register_buffer("shift", torch.tensor([0.0, 330.0]))

    def forward(self, s, u):
        z = (s - self.shift) / self.scale
        with torch.autocast("cuda", dtype=torch.bfloat16):
            dz = self.net(torch.cat([z, u], -1))
        return s + dz.float() * self.scale * 0.05


@_workload("model-predictive control of a chemical reactor through a learned plant model written by hand (random init): an exothermic CSTR with a cooling jacket (Arrhenius kinetics) simulated by RK4 (4 substeps a 0.05 interval) for 4,096 trajectories of 120 intervals under random piecewise-constant coolant and feed moves, fp32; a residual MLP plant (4 x 256, SiLU, bf16 autocast) trained 230 steps on multi-step rollouts of a drawn horizon (4-16) over batches of 512-2,048 windows, Adam; then closed-loop MPC for 24 intervals over a batch of 128-512 reactors (drawn) with setpoint changes drawn every 8: at each interval the control sequence (horizon 8-16, drawn) optimised by 8 Adam iterations through the learned plant (tracking, move and bound penalties, warm-started by shifting), the true reactor stepped by RK4 with the first move; tracking error read back every interval")
def cstr_neural_mpc_control(rng):
    ntraj, nint, sub = _smoke(4096, 32), _smoke(120, 12), 4
    h = 0.05
    with torch.no_grad():
        s = torch.stack([0.5 + 0.3 * torch.rand(ntraj, device="cuda"), 310 + 30 * torch.rand(ntraj, device="cuda")],
                        -1)
        states, inputs = [s], []
        u = torch.rand(ntraj, 2, device="cuda")
        for i in range(nint):
            if i % 8 == 0:
                u = (u + 0.4 * torch.randn(ntraj, 2, device="cuda")).clamp(0, 1)
            for _ in range(sub):
                s = _rk4(s, u, h / sub)
            s = torch.stack([s[:, 0].clamp(0, 1), s[:, 1].clamp(250, 450)], -1)
            states.append(s)
            inputs.append(u)
        states, inputs = torch.stack(states, 1), torch.stack(inputs, 1)  # (n, nint+1, 2), (n, nint, 2)
    plant = _Plant(_smoke(256, 16), _smoke(4, 4)).cuda()
    opt = torch.optim.Adam(plant.parameters(), lr=1e-3)
    for step in range(_smoke(230, 3)):
        hz = rng.randint(4, _smoke(16, 6))
        b = rng.choice(_smoke([512, 1024, 2048], [16, 32]))
        t0 = rng.randrange(nint - hz)
        idx = torch.randint(0, ntraj, (b,), device="cuda")
        s = states[idx, t0]
        loss = 0.0
        for k in range(hz):
            s = plant(s, inputs[idx, t0 + k])
            loss = loss + (((s - states[idx, t0 + k + 1]) / plant.scale) ** 2).mean()
        loss = loss / hz
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 50 == 0:
            float(loss)
    plant.eval().requires_grad_(False)
    nr = rng.choice(_smoke([128, 256, 512], [4, 8]))
    s = torch.stack([0.5 + 0.1 * torch.rand(nr, device="cuda"), 320 + 10 * torch.rand(nr, device="cuda")], -1)
    hz = rng.randint(_smoke(8, 3), _smoke(16, 4))
    useq = torch.full((nr, hz, 2), 0.5, device="cuda")
    for it in range(_smoke(24, 3)):
        if it % 8 == 0:
            sp = torch.stack([0.3 + 0.4 * torch.rand(nr, device="cuda"), 310 + 40 * torch.rand(nr, device="cuda")],
                             -1)
        useq = useq.detach().requires_grad_(True)
        mopt = torch.optim.Adam([useq], lr=0.05)
        for _ in range(_smoke(8, 2)):
            x = s
            cost = 0.0
            for k in range(hz):
                x = plant(x, useq[:, k].clamp(0, 1))
                cost = cost + (((x - sp) / plant.scale) ** 2).sum(-1).mean()
            cost = cost + 0.1 * (useq[:, 1:] - useq[:, :-1]).pow(2).sum((1, 2)).mean() + 10 * (
                _F.relu(useq - 1) + _F.relu(-useq)).pow(2).sum((1, 2)).mean()
            mopt.zero_grad(set_to_none=True)
            cost.backward()
            mopt.step()
        with torch.no_grad():
            u0 = useq[:, 0].clamp(0, 1)
            for _ in range(sub):
                s = _rk4(s, u0, h / sub)
            s = torch.stack([s[:, 0].clamp(0, 1), s[:, 1].clamp(250, 450)], -1)
            useq = torch.cat([useq[:, 1:], useq[:, -1:]], 1)
            (((s - sp) / plant.scale) ** 2).sum(-1).mean().item()


# ---------------------------------------------------------------- solar PV nowcasting from sky images


def _sky_frames(b, nf, res, zen):
    """b sequences of nf sky-camera frames (3 x res x res): a sun disk at the solar zenith angle zen (b,) and a drawn
    azimuth, clouds by spectrally filtered noise (k^-1.6) thresholded softly and advected by a drawn wind between
    frames (a phase ramp in Fourier space); the cloud cover at the sun read as a clear-sky index per frame."""
    dev = "cuda"
    ky = (((torch.arange(res, device=dev) + res // 2) % res - res // 2).float() / res)[:, None]  # fftfreq
    kx = (torch.arange(res // 2 + 1, device=dev).float() / res)[None]  # rfftfreq
    k = (kx * kx + ky * ky).sqrt().clamp_min(1.0 / res)
    spec = torch.fft.rfft2(torch.randn(b, res, res, device=dev)) * k.pow(-1.6)
    wind = torch.randn(b, 2, device=dev) * 2
    frames, kc = [], []
    lin = torch.linspace(-1, 1, res, device=dev)
    gy, gx = torch.meshgrid(lin, lin, indexing="ij")
    az = torch.rand(b, device=dev) * 2 * math.pi
    sx, sy = (zen / 1.6 * torch.cos(az))[:, None, None], (zen / 1.6 * torch.sin(az))[:, None, None]
    sun = torch.exp(-((gx - sx) ** 2 + (gy - sy) ** 2) / 0.004)
    cover = torch.rand(b, device=dev)[:, None, None]
    for f in range(nf):
        shift = torch.exp(-2j * math.pi * (kx * wind[:, 0, None, None] + ky * wind[:, 1, None, None]) * f)
        field = torch.fft.irfft2(spec * shift, s=(res, res))
        field = field / field.std((1, 2), keepdim=True).clamp_min(1e-6)
        cloud = torch.sigmoid(3 * (field - 1.5 + 2 * cover))
        sky = torch.stack([0.3 + 0.6 * cloud, 0.5 + 0.4 * cloud, 0.9 + 0.05 * cloud], 1)
        frames.append(sky * (1 - sun[:, None]) + sun[:, None] * (1 - 0.8 * cloud[:, None]))
        kc.append(1 - 0.75 * (cloud * sun).sum((1, 2)) / sun.sum((1, 2)))
    return torch.stack(frames, 1), torch.stack(kc, 1)


class _SkyNet(_nn.Module):
    def __init__(self, w, d, depth, nhz):
        super().__init__()
        chans, layers, c = (w, 2 * w, 4 * w, 8 * w), [], 3
        for co in chans:
            layers += [_nn.Conv2d(c, co, 3, 2, 1), _nn.BatchNorm2d(co), _nn.SiLU(), _nn.Conv2d(co, co, 3, 1, 1),
                       _nn.BatchNorm2d(co), _nn.SiLU()]
            c = co
        self.cnn = _nn.Sequential(*layers, _nn.AdaptiveAvgPool2d(1), _nn.Flatten(), _nn.Linear(c, d))
        self.temporal = _nn.Sequential(*(PreNormBlock(d, 4, 2 * d) for _ in range(depth)))
        self.series = _nn.Sequential(_nn.Conv1d(3, 64, 5, 2, 2), _nn.GELU(), _nn.Conv1d(64, 128, 5, 2, 2), _nn.GELU(),
                                    _nn.Conv1d(128, d, 5, 2, 2), _nn.GELU(), _nn.AdaptiveAvgPool1d(1), _nn.Flatten())
        self.head = _nn.Sequential(_nn.Linear(2 * d, 256), _nn.GELU(), _nn.Linear(256, nhz))

    def forward(self, frames, series):
        b, nf = frames.shape[:2]
        z = self.cnn(frames.flatten(0, 1)).view(b, nf, -1)
        z = self.temporal(z)[:, -1]
        return self.head(torch.cat([z, self.series(series.transpose(1, 2))], -1))


@_workload("solar PV nowcasting from sky images and irradiance series written by hand (random init): sky-camera sequences made on the device (a sun disk at a drawn solar zenith and azimuth, clouds by k^-1.6 spectrally filtered noise thresholded by a drawn cover and advected by a drawn wind as a Fourier phase ramp), 4-8 frames (drawn) at 64^2, 96^2 or 128^2 (drawn), batches cut to a budget of 786,432 frame pixels (6-48 sequences), and 60-180 minutes (drawn) of clear-sky-index history with the Haurwitz clear-sky GHI; a per-frame CNN (4 stride-2 stages, width 32-256), a 2-layer temporal transformer (width 192) over the frames and a 3-layer strided 1D CNN over the series, predicting the clear-sky index at 10 horizons of 1-30 minutes; bf16 autocast, AdamW, 420 steps; every 105 an evaluation of 4 batches at 128^2 without grad, forecast skill over smart persistence read back")
def pv_skyimage_nowcast_train(rng):
    w, d = _smoke(32, 4), _smoke(192, 16)
    nhz = 10
    model = _SkyNet(w, d, _smoke(2, 1), nhz).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    res_choices = _smoke([64, 96, 128], [16, 32])
    budget = _smoke(786432, 8192)

    def batch(res=None):
        res = res or rng.choice(res_choices)
        nf = rng.randint(4, 8)
        b = max(2, min(48, budget // (nf * res * res)))
        hist = rng.randint(_smoke(60, 8), _smoke(180, 16))
        zen = 0.2 + 1.1 * torch.rand(b, device="cuda")
        frames, kc = _sky_frames(b, nf, res, zen)
        ghi_cs = 1098 * torch.cos(zen) * torch.exp(-0.057 / torch.cos(zen))  # Haurwitz
        t = torch.arange(hist, device="cuda").float()
        series = kc[:, -1:, None] + 0.05 * torch.randn(b, hist, 1, device="cuda") * torch.cos(t / 17)[None, :, None]
        series = torch.cat([series, (ghi_cs / 1000)[:, None, None].expand(-1, hist, -1),
                            (t / hist)[None, :, None].expand(b, -1, -1)], -1)
        drift = torch.linspace(0.03, 1.0, nhz, device="cuda")
        target = (kc[:, -1:] + (kc[:, -1:] - kc[:, :1]) * drift[None] + 0.05 * torch.randn(b, nhz, device="cuda"))
        return frames, series, target.clamp(0, 1.2), kc[:, -1:]

    for step in range(_smoke(420, 3)):
        model.train()
        with torch.no_grad():
            frames, series, target, _p = batch()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(frames, series)
        loss = _F.smooth_l1_loss(pred.float(), target, beta=0.05)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        del frames, series, target, pred
        if (step + 1) % _smoke(105, 3) == 0:
            model.eval()
            sk = []
            with torch.no_grad():
                for _ in range(_smoke(4, 1)):
                    frames, series, target, persist = batch(max(res_choices))
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        pred = model(frames, series).float()
                    sk.append(1 - (pred - target).pow(2).mean() / ((persist - target).pow(2).mean() + 1e-6))
            torch.stack(sk).tolist()
            float(loss)

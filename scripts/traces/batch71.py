"""The seventy-first batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch69_b.py are): plasma physics and nuclear engineering on the GPU, written in torch alone, first half. A tokamak
disruption predictor over multi-rate diagnostic signals (fast magnetics, medium-rate radiation and slow equilibrium
channels synthesised on the device for shots of drawn length, a strided convolutional front end per rate, a causal
dilated temporal convolutional network, a class-weighted per-timestep hazard loss with a warning window, validation
by shot-level alarm rates), a turbulent-transport surrogate (a 1-D Fourier neural operator over flux-surface profiles
trained on a critical-gradient gyro-Bohm flux model, then used inside a transport solver that relaxes temperature
and density profiles of a batch of discharges to steady state), a 2-D electrostatic particle-in-cell simulation
(cloud-in-cell charge deposition by index_add, an FFT Poisson solve, field gathering, leapfrog or Boris pushes for
two-stream, beam-plasma and Landau-damping set-ups of drawn size), and Monte Carlo neutron transport for the
k-eigenvalue of a pin lattice (multigroup Woodcock delta tracking over a material map, track-length flux tallies by
index_add, survival biasing with Russian roulette, fission sites resampled from the fission-density mesh each
generation). Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device, `rng`
the workload's random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)` so that
RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: step, flight, generation and solver counts are
fixed on the host, masks multiplied in or selected with torch.where, no boolean-mask indexing; losses, energies and
eigenvalue estimates are read back only at logging points. All four are single-stream. The disruption predictor and
the transport surrogate's pointwise layers run under bf16 autocast; the spectral layers, the particle-in-cell and
Monte Carlo arithmetic, the transport solver's updates and the losses are fp32 (the neutron tallies fp64).

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new71.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py
(smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered with dummies, autocast a no-op so that fp32
sizes are counted, streams, events and pinned memory no-ops), and for which of them the CPU smoke run
(RECORD_SMOKE=1) ran.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import fftfreq, mlp, rfftfreq

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- tokamak disruption prediction


class _CausalBlock(_nn.Module):
    """A residual block of two causal dilated convolutions (left padding), GroupNorm, GELU, dropout."""

    def __init__(self, ch, dilation, k=3):
        super().__init__()
        self.pad = (k - 1) * dilation
        self.c1 = _nn.Conv1d(ch, ch, k, dilation=dilation)
        self.c2 = _nn.Conv1d(ch, ch, k, dilation=dilation)
        self.n1, self.n2 = _nn.GroupNorm(8, ch), _nn.GroupNorm(8, ch)
        self.drop = _nn.Dropout(0.1)

    def forward(self, x):
        h = _F.gelu(self.n1(self.c1(_F.pad(x, (self.pad, 0)))))
        h = self.drop(h)
        h = self.n2(self.c2(_F.pad(h, (self.pad, 0))))
        return _F.gelu(x + h)


class _DisruptionTCN(_nn.Module):
    """Per-rate strided front ends (fast x16, medium x4 down to the slow rate), a causal TCN, a hazard head."""

    def __init__(self, fast_ch, med_ch, slow_ch, width, levels):
        super().__init__()
        self.fast = _nn.Sequential(_nn.Conv1d(fast_ch, 32, 8, stride=4, padding=2), _nn.GELU(),
                                   _nn.Conv1d(32, 48, 8, stride=4, padding=2), _nn.GELU())
        self.med = _nn.Sequential(_nn.Conv1d(med_ch, 32, 8, stride=4, padding=2), _nn.GELU())
        self.inp = _nn.Conv1d(48 + 32 + slow_ch, width, 1)
        self.blocks = _nn.ModuleList([_CausalBlock(width, 2 ** i) for i in range(levels)])
        self.head = _nn.Conv1d(width, 1, 1)

    def forward(self, fast, med, slow):
        t = slow.shape[-1]
        h = torch.cat([self.fast(fast)[..., :t], self.med(med)[..., :t], slow], 1)
        h = self.inp(h)
        for blk in self.blocks:
            h = blk(h)
        return self.head(h)[:, 0]


def _synth_shots(b, t_slow, disrupt_frac, rng):
    """Synthetic multi-rate shots: (fast (b, 8, 16 t), medium (b, 12, 4 t), slow (b, 10, t)), the per-timestep
    labels (1 inside the warning window before a disruption), the validity mask (shots of drawn length, right-
    padded) and the disruptive flags. Disruptive shots grow a locked mode, a radiation spike and a falling
    internal inductance before their disruption time."""
    nd = max(1, int(round(b * disrupt_frac)))
    lengths = [rng.randint(t_slow // 2, t_slow) for _ in range(b)]
    length = torch.tensor(lengths, device="cuda", dtype=torch.float32)
    disrupt = torch.cat([torch.ones(nd, device="cuda"), torch.zeros(b - nd, device="cuda")])
    td = length * (0.8 + 0.2 * torch.rand(b, device="cuda"))  # disruption near the end of the shot
    ts = torch.arange(t_slow, device="cuda", dtype=torch.float32)[None]
    valid = (ts < length[:, None]).float()
    # precursor amplitude: an exponential growth over ~40 slow samples before td, only on disruptive shots
    grow = torch.exp(((ts - td[:, None]) / 40.0).clamp(max=0.0)) * disrupt[:, None]
    warn = 30.0
    label = ((ts > td[:, None] - warn) & (ts < td[:, None])).float() * disrupt[:, None] * valid
    slow = 0.3 * torch.randn(b, 10, t_slow, device="cuda").cumsum(-1) / math.sqrt(t_slow)
    slow = slow + torch.stack([grow * 2.0, -grow, grow * 0.5], 1).repeat(1, 4, 1)[:, :10]
    med = 0.2 * torch.randn(b, 12, 4 * t_slow, device="cuda")
    med = med + 3.0 * _F.interpolate(grow[:, None], scale_factor=4, mode="linear")
    tf = torch.arange(16 * t_slow, device="cuda", dtype=torch.float32)
    phase = 2 * math.pi * (0.05 + 0.01 * torch.rand(b, 8, 1, device="cuda")) * tf
    fast = (1 + 4 * _F.interpolate(grow[:, None], scale_factor=16, mode="linear")) * torch.sin(phase)
    fast = fast + 0.3 * torch.randn(b, 8, 16 * t_slow, device="cuda")
    vmask_fast = _F.interpolate(valid[:, None], scale_factor=16, mode="nearest")
    vmask_med = _F.interpolate(valid[:, None], scale_factor=4, mode="nearest")
    return fast * vmask_fast, med * vmask_med, slow * valid[:, None], label, valid, disrupt


@_workload("tokamak disruption prediction from multi-rate diagnostic signals written by hand (random init): shots synthesised on the device as 8 fast magnetics channels at 16x, 12 radiation and ECE channels at 4x and 10 slow equilibrium channels (locked-mode amplitude, internal inductance, radiated fraction, ...) at 1x the slow rate, 256-1,024 slow samples a batch (drawn) with shot lengths drawn and right-padded, 12-20% disruptive shots with growing precursors; strided convolutional front ends per rate and a causal dilated temporal convolutional network (width 128, 8 levels, dilations 1-128, GroupNorm) with a per-timestep hazard head, a class-weighted binary cross-entropy inside a 30-sample warning window (positive weight from the batch's label counts on the host), bf16 autocast, AdamW with warmup and cosine decay, gradient clipping, batches of 24-64 shots (drawn), 520 steps; every 60 steps a validation batch of 96 shots with shot-level alarm rates at 5 thresholds read back")
def tokamak_disruption_tcn_train(rng):
    width, levels = _smoke(128, 16), _smoke(8, 3)
    model = _DisruptionTCN(8, 12, 10, width, levels).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=1e-2)
    steps = _smoke(520, 3)
    warm = max(1, steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * 0.5 * (1 + math.cos(math.pi * min(1.0, s / steps))))
    thresholds = torch.tensor([0.2, 0.35, 0.5, 0.65, 0.8], device="cuda")
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(24, 2), _smoke(64, 3))
        t = rng.choice(_smoke([256, 384, 512, 768, 1024], [16, 32]))
        frac = rng.uniform(0.12, 0.2)
        fast, med, slow, label, valid, _ = _synth_shots(b, t, frac, rng)
        # class weighting from the batch's expected positive fraction (host arithmetic, no readback)
        pos_weight = torch.tensor(min(50.0, (1 - 0.03 * frac) / (0.03 * frac)) ** 0.5, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logit = model(fast, med, slow)
        loss = _F.binary_cross_entropy_with_logits(logit.float(), label, pos_weight=pos_weight, reduction="none")
        loss = (loss * valid).sum() / valid.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        del fast, med, slow, label, valid, logit, pos_weight
        if step % 20 == 0:
            float(loss)
        if (step + 1) % _smoke(60, 3) == 0:
            model.eval()
            with torch.no_grad():
                fast, med, slow, label, valid, disrupt = _synth_shots(_smoke(96, 4), rng.choice(_smoke([512, 768], [16])),
                                                                      0.15, rng)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    p = torch.sigmoid(model(fast, med, slow).float()) * valid
                peak = p.amax(-1)  # shot-level alarm: the hazard ever crossing the threshold
                alarm = (peak[:, None] > thresholds[None]).float()
                tpr = (alarm * disrupt[:, None]).sum(0) / disrupt.sum().clamp_min(1)
                fpr = (alarm * (1 - disrupt[:, None])).sum(0) / (1 - disrupt).sum().clamp_min(1)
                torch.cat([tpr, fpr]).tolist()
            del fast, med, slow, label, valid, disrupt, p, peak, alarm, tpr, fpr


# ---------------------------------------------------------------- turbulent-transport FNO surrogate and solver


class _Spectral1d(_nn.Module):
    def __init__(self, width, modes):
        super().__init__()
        self.m = modes
        self.w = _nn.Parameter(torch.randn(width, width, modes, 2) / (width * width))

    def forward(self, x):
        n = x.shape[-1]
        xf = torch.fft.rfft(x.float())
        out = torch.einsum("bix,iox->box", xf[..., :self.m], torch.view_as_complex(self.w))
        out = _F.pad(torch.view_as_real(out), (0, 0, 0, n // 2 + 1 - self.m))
        return torch.fft.irfft(torch.view_as_complex(out.contiguous()), n=n)


class _FluxFNO(_nn.Module):
    """A 1-D FNO over the radial grid: profiles and their gradients in, ion and electron heat fluxes and the
    particle flux out (gyro-Bohm normalised, softplus so that they stay positive)."""

    def __init__(self, cin, width, modes, layers):
        super().__init__()
        self.lift = mlp(cin + 1, width, width, layers=2, act=_nn.GELU)
        self.spec = _nn.ModuleList([_Spectral1d(width, modes) for _ in range(layers)])
        self.pw = _nn.ModuleList([_nn.Conv1d(width, width, 1) for _ in range(layers)])
        self.proj = mlp(width, 2 * width, 3, layers=2, act=_nn.GELU)

    def forward(self, x, rho):
        h = self.lift(torch.cat([x, rho.expand(x.shape[0], -1, -1)], 1).transpose(1, 2)).transpose(1, 2)
        for i, (s, p) in enumerate(zip(self.spec, self.pw)):
            h = s(h) + p(h).float()
            if i < len(self.spec) - 1:
                h = _F.gelu(h)
        return _F.softplus(self.proj(h.transpose(1, 2)).float()).transpose(1, 2)


def _transport_inputs(te, ti, ne, q, rho):
    """Profiles (B, nr) -> FNO inputs (B, 9, nr): Te, Ti, ne, q, magnetic shear, a/LTe, a/LTi, a/Ln, Ti/Te."""
    dr = rho[0, 0, 1] - rho[0, 0, 0]

    def grad(f):
        g = (f[:, 2:] - f[:, :-2]) / (2 * dr)
        return torch.cat([g[:, :1], g, g[:, -1:]], 1)

    shear = rho[0] * grad(q) / q
    alte = -grad(te) / te.clamp_min(1e-3)
    alti = -grad(ti) / ti.clamp_min(1e-3)
    aln = -grad(ne) / ne.clamp_min(1e-3)
    return torch.stack([te, ti, ne, q, shear, alte, alti, aln, ti / te.clamp_min(1e-3)], 1)


def _critical_gradient_flux(x, rho):
    """Reference fluxes (B, 3, nr): ITG and TEM-like critical-gradient stiff transport in gyro-Bohm units, smoothed
    radially (turbulence spreading) by a Gaussian convolution."""
    te, ti, ne, q, s, alte, alti, aln, tau = x.unbind(1)
    crit_i = (1 + tau) * (1.33 + 1.91 * s.abs() / q) * 0.8
    crit_e = 4.0 + 0.5 * s.abs()
    gb = te.clamp_min(1e-3) ** 1.5 * q / 3
    qi = gb * (2.0 * _F.relu(alti - crit_i) ** 1.5 + 0.05 * alti.abs())
    qe = gb * (1.2 * _F.relu(alte - crit_e) ** 1.5 + 0.4 * _F.relu(alti - crit_i) + 0.05 * alte.abs())
    gam = gb * ne * (0.3 * _F.relu(aln - 1.0) + 0.1 * _F.relu(alti - crit_i) - 0.02 * aln)
    flux = torch.stack([qi, qe, gam.abs()], 1)
    kern = torch.exp(-torch.linspace(-2, 2, 9, device=x.device) ** 2)[None, None]
    kern = (kern / kern.sum()).expand(3, 1, 9).contiguous()
    return _F.conv1d(_F.pad(flux, (4, 4), mode="replicate"), kern, groups=3)


def _random_profiles(b, nr, rho):
    r = rho[0, 0][None]
    te0 = 2 + 8 * torch.rand(b, 1, device="cuda")
    ti0 = te0 * (0.6 + 0.8 * torch.rand(b, 1, device="cuda"))
    ne0 = 2 + 8 * torch.rand(b, 1, device="cuda")
    pe, pi, pn = [1 + 3 * torch.rand(b, 1, device="cuda") for _ in range(3)]
    te = 0.1 + te0 * (1 - r ** 2) ** pe
    ti = 0.1 + ti0 * (1 - r ** 2) ** pi
    ne = 0.3 + ne0 * (1 - r ** 2) ** (0.5 * pn)
    q0 = 0.8 + 0.4 * torch.rand(b, 1, device="cuda")
    q95 = 3 + 3 * torch.rand(b, 1, device="cuda")
    q = q0 + (q95 - q0) * r ** 2
    # rippled profiles: a few random Fourier components in radius
    k = torch.arange(1, 5, device="cuda", dtype=torch.float32)[None, :, None]
    ripple = (0.05 * torch.randn(b, 4, 1, device="cuda") * torch.sin(math.pi * k * r[:, None])).sum(1)
    return te * (1 + ripple), ti * (1 - ripple), ne, q


@_workload("turbulent-transport surrogate for tokamak profile prediction written by hand (random init): a 1-D Fourier neural operator (width 64, 16 modes, 4 spectral layers by rfft and complex einsum in fp32, pointwise layers under bf16 autocast) over flux-surface profiles (Te, Ti, ne, q, shear and normalised gradients) on radial grids of 64-192 points (drawn per batch), trained on a critical-gradient gyro-Bohm model of ion and electron heat and particle fluxes with radial smoothing, profiles drawn with ripples, batches of 128-512 (drawn), AdamW with a step decay, 500 steps, a zero-shot validation at 256 points every 100; then 4 predictive transport runs of 16-48 discharges (drawn) on 128 or 160 points (drawn) relaxing Te, Ti and ne to steady state with the surrogate's fluxes in a finite-volume transport solver (heating and fuelling sources drawn, an edge pedestal boundary, an explicit step with a fixed count of 240-320 steps), the stored energy and core temperatures read back every 40 steps")
def turbulent_flux_fno_transport_train(rng):
    width, modes, layers = _smoke(64, 8), _smoke(16, 4), 4
    model = _FluxFNO(9, width, modes, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    steps = _smoke(500, 3)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=max(1, steps // 3), gamma=0.5)

    def grid(nr):
        return torch.linspace(0.02, 0.98, nr, device="cuda")[None, None]

    for step in range(steps):
        model.train()
        b = rng.choice(_smoke([128, 192, 256, 384, 512], [4, 6]))
        nr = rng.choice(_smoke([64, 96, 128, 160, 192], [32, 48]))
        rho = grid(nr)
        with torch.no_grad():
            x = _transport_inputs(*_random_profiles(b, nr, rho), rho)
            y = torch.log1p(_critical_gradient_flux(x, rho))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(x, rho)
        loss = _F.mse_loss(torch.log1p(pred), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        del x, y, pred, rho
        if step % 25 == 0:
            float(loss)
        if (step + 1) % _smoke(100, 3) == 0:
            model.eval()
            with torch.no_grad():
                rho = grid(_smoke(256, 64))
                x = _transport_inputs(*_random_profiles(_smoke(256, 4), rho.shape[-1], rho), rho)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pred = model(x, rho)
                ref = _critical_gradient_flux(x, rho)
                ((pred - ref).norm(dim=-1) / ref.norm(dim=-1).clamp_min(1e-6)).mean(0).tolist()
            del rho, x, pred, ref

    # predictive transport with the frozen surrogate: a finite-volume explicit solver in rho
    model.eval().requires_grad_(False)
    for _ in range(_smoke(4, 1)):
        nb = rng.randint(_smoke(16, 2), _smoke(48, 3))
        nr = rng.choice(_smoke([128, 160], [32]))
        rho = grid(nr)
        r = rho[0, 0]
        dr = float(0.96 / (nr - 1))
        face = 0.5 * (r[1:] + r[:-1])
        te, ti, ne, q = _random_profiles(nb, nr, rho)
        q = q.clone()
        p_aux = (0.5 + 2 * torch.rand(nb, 1, device="cuda")) * torch.exp(-((r - rng.uniform(0.0, 0.4)) / 0.2) ** 2)
        s_n = (0.2 + 0.5 * torch.rand(nb, 1, device="cuda")) * torch.exp(-((r - 0.9) / 0.08) ** 2)
        te_ped, ti_ped, ne_ped = te[:, -1:].clone(), ti[:, -1:].clone(), ne[:, -1:].clone()
        dt = 2e-4 * (64 / nr) ** 2
        nsteps = rng.randint(_smoke(240, 2), _smoke(320, 3))
        with torch.no_grad():
            for t in range(nsteps):
                x = _transport_inputs(te, ti, ne, q, rho)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    flux = model(x, rho).float()
                # fluxes at the faces, divergence in cylindrical-like geometry (V' ~ rho)
                ff = 0.5 * (flux[..., 1:] + flux[..., :-1]) * face
                div = torch.cat([ff[..., :1], ff[..., 1:] - ff[..., :-1], -ff[..., -1:]], -1) / (dr * r)
                exch = 0.05 * ne * (te - ti)
                te = (te + dt * (-div[:, 1] / ne + p_aux - exch)).clamp_min(0.05)
                ti = (ti + dt * (-div[:, 0] / ne + 0.5 * p_aux + exch)).clamp_min(0.05)
                ne = (ne + dt * (-div[:, 2] + s_n)).clamp_min(0.1)
                # pedestal boundary: the last point held at the pedestal values
                te = torch.cat([te[:, :-1], te_ped], 1)
                ti = torch.cat([ti[:, :-1], ti_ped], 1)
                ne = torch.cat([ne[:, :-1], ne_ped], 1)
                del x, flux, ff, div, exch
                if (t + 1) % _smoke(40, 2) == 0:
                    w = (1.5 * ne * (te + ti) * r).sum(1) * dr
                    torch.stack([w.mean(), te[:, 0].mean(), ti[:, 0].mean(), ne[:, 0].mean()]).tolist()
        del te, ti, ne, q, p_aux, s_n, rho
    model.requires_grad_(True)


# ---------------------------------------------------------------- 2-D electrostatic particle-in-cell


def _deposit(x, y, w, nx, ny):
    """Cloud-in-cell deposition of particle weights w at (x, y) (grid units, periodic) onto an (ny, nx) grid by one
    index_add of the four corner contributions."""
    ix, iy = x.floor(), y.floor()
    fx, fy = x - ix, y - iy
    i0, j0 = ix.long() % nx, iy.long() % ny
    i1, j1 = (i0 + 1) % nx, (j0 + 1) % ny
    idx = torch.cat([j0 * nx + i0, j0 * nx + i1, j1 * nx + i0, j1 * nx + i1])
    wt = torch.cat([w * (1 - fx) * (1 - fy), w * fx * (1 - fy), w * (1 - fx) * fy, w * fx * fy])
    rho = torch.zeros(ny * nx, device=x.device).index_add_(0, idx, wt)
    return rho.view(ny, nx), idx, torch.stack([(1 - fx) * (1 - fy), fx * (1 - fy), (1 - fx) * fy, fx * fy])


def _gather(field, idx, wts):
    """A (ny, nx) field interpolated back to the particles with the deposition's corner indices and weights."""
    n = wts.shape[1]
    return (field.reshape(-1)[idx].view(4, n) * wts).sum(0)


@_workload("2-D electrostatic particle-in-cell simulation written by hand in torch (no learning): 3 runs in turn of a drawn kind (two-stream instability, a weak beam in a magnetised plasma, Landau damping of a seeded wave) on periodic grids of 64x64 to 256x256 cells (drawn) with 16-64 electrons a cell (drawn, up to about 2.6M), cloud-in-cell charge deposition by one index_add of the four corner weights, a spectral Poisson solve by rfft2 with the k=0 mode removed, the field by spectral gradient and irfft2, gathering at the corners, a leapfrog push (a Boris rotation in the magnetised runs), periodic wrap by remainder; 1,100-1,500 steps a run (drawn), fp32; field and kinetic energies and the total momentum read back every 50 steps, an x-vx phase-space histogram by index_add every 250")
def es_pic_2d_sim(rng):
    for _ in range(_smoke(3, 1)):
        kind = rng.choice(["two_stream", "beam_magnetised", "landau"])
        nx = rng.choice(_smoke([64, 96, 128, 192, 256], [8, 12]))
        ny = nx if rng.random() < 0.5 else nx // 2
        ppc = rng.choice(_smoke([16, 24, 32, 48, 64], [2, 4]))
        n = nx * ny * ppc
        if n > _smoke(2_700_000, 10_000):
            ppc = max(1, _smoke(2_700_000, 10_000) // (nx * ny))
            n = nx * ny * ppc
        lx, ly = float(nx), float(ny)  # lengths in cell units (dx = 1 Debye length)
        qm = -1.0
        wp = 1.0
        q = -wp * wp * lx * ly / n  # charge per macro-particle so that the mean density gives wp = 1
        x = torch.rand(n, device="cuda") * lx
        y = torch.rand(n, device="cuda") * ly
        vth = rng.uniform(0.05, 0.2)
        vx = vth * torch.randn(n, device="cuda")
        vy = vth * torch.randn(n, device="cuda")
        if kind == "two_stream":
            v0 = rng.uniform(0.8, 1.5) * 2
            sign = torch.where(torch.rand(n, device="cuda") < 0.5, 1.0, -1.0)
            vx = vx + v0 * sign
            del sign
        elif kind == "beam_magnetised":
            beam = (torch.rand(n, device="cuda") < rng.uniform(0.05, 0.15)).float()
            vx = vx + beam * rng.uniform(3.0, 6.0)
            del beam
        else:
            mode = rng.randint(1, 3)
            x = (x + 0.2 * torch.sin(2 * math.pi * mode * x / lx) * lx / (2 * math.pi * mode)) % lx
        bz = rng.uniform(0.5, 2.0) if kind == "beam_magnetised" else 0.0
        dt = rng.uniform(0.05, 0.1)
        kx = (2 * math.pi * rfftfreq(nx))[None, :]
        ky = (2 * math.pi * fftfreq(ny))[:, None]
        k2 = kx * kx + ky * ky
        inv_k2 = torch.where(k2 > 0, 1.0 / k2.clamp_min(1e-12), torch.zeros_like(k2))
        ones = torch.full((n,), q, device="cuda")
        hist_bins = _smoke(128, 8)
        nsteps = rng.randint(_smoke(1100, 2), _smoke(1500, 3))
        hists = []
        for t in range(nsteps):
            rho, idx, wts = _deposit(x, y, ones, nx, ny)
            rho = rho - rho.mean()  # the neutralising ion background
            rk = torch.fft.rfft2(rho)
            phik = rk * inv_k2
            ex = torch.fft.irfft2(-1j * kx * phik, s=(ny, nx))
            ey = torch.fft.irfft2(-1j * ky * phik, s=(ny, nx))
            epx, epy = _gather(ex, idx, wts), _gather(ey, idx, wts)
            if bz:
                # Boris: half electric kick, magnetic rotation, half electric kick
                vxm, vym = vx + 0.5 * qm * dt * epx, vy + 0.5 * qm * dt * epy
                tb = 0.5 * qm * bz * dt
                sb = 2 * tb / (1 + tb * tb)
                vxp = vxm + vym * tb
                vyp = vym - vxm * tb
                vx = vxm + vyp * sb + 0.5 * qm * dt * epx
                vy = vym - vxp * sb + 0.5 * qm * dt * epy
                del vxm, vym, vxp, vyp
            else:
                vx = vx + qm * dt * epx
                vy = vy + qm * dt * epy
            x = torch.remainder(x + vx * dt, lx)
            y = torch.remainder(y + vy * dt, ly)
            if (t + 1) % _smoke(50, 2) == 0:
                fe = 0.5 * (ex * ex + ey * ey).sum()
                ke = 0.5 * (vx * vx + vy * vy).sum() * abs(q)
                torch.stack([fe, ke, vx.sum() * abs(q), vy.sum() * abs(q)]).tolist()
                del fe, ke
            if (t + 1) % _smoke(250, 2) == 0:
                vmax = 4 * (vth + 3.0)
                ix = (x / lx * hist_bins).long().clamp(0, hist_bins - 1)
                iv = ((vx / vmax + 0.5) * hist_bins).long().clamp(0, hist_bins - 1)
                h = torch.zeros(hist_bins * hist_bins, device="cuda").index_add_(0, iv * hist_bins + ix, ones.abs())
                hists.append(h.view(hist_bins, hist_bins).to(torch.bfloat16))
                del ix, iv, h
            del rho, idx, wts, rk, phik, ex, ey, epx, epy
        if hists:
            torch.stack(hists).float().amax((1, 2)).tolist()
        del x, y, vx, vy, ones, hists, kx, ky, k2, inv_k2


# ---------------------------------------------------------------- Monte Carlo neutron transport, k-eigenvalue


def _xs_library(groups, nmat, dev="cuda"):
    """Random but physical multigroup cross sections for nmat materials: total, a lower-triangular-heavy scattering
    matrix (down-scatter dominant, some up-scatter in the thermal groups), nu-fission and the fission spectrum."""
    g = torch.arange(groups, device=dev, dtype=torch.float32)
    sig_t = (0.2 + 0.8 * torch.rand(nmat, groups, device=dev)) * (1 + g / groups)
    # scattering: mostly to the same or the next lower groups
    gi, go = g[:, None], g[None, :]
    shape = torch.exp(-((go - gi - 0.7) ** 2) / 1.5) + 0.05 * (go < gi).float() * (gi > groups - 3).float()
    scat_ratio = 0.55 + 0.4 * torch.rand(nmat, groups, 1, device=dev)
    sig_s = shape[None] / shape.sum(-1, keepdim=True)[None] * scat_ratio * sig_t[..., None]
    fissile = torch.zeros(nmat, 1, device=dev)
    fissile[: max(1, nmat - 2)] = 1.0  # the last two materials (moderator, absorber) do not fission
    nu_f = fissile * (0.02 + 0.06 * torch.rand(nmat, groups, device=dev)) * (1 + 2 * g / groups) * sig_t
    chi = torch.exp(-g / 1.5)
    chi = chi / chi.sum()
    return sig_t, sig_s, nu_f, chi


@_workload("Monte Carlo neutron transport for the k-eigenvalue of a pin lattice written by hand in torch (no learning): a square lattice of 9x9 to 17x17 pins (drawn) of 3 fuel enrichments, guide tubes and absorber rods (drawn layout) rasterised onto a material map of 128-256 cells a side, 7 energy groups with random physical cross sections; batches of 500k-1.5M particle histories a generation (drawn), Woodcock delta tracking against the group majorant (a fixed 28 flights a generation), material lookup by gathering from the map, virtual collisions rejected by torch.where, survival biasing (implicit capture) with Russian roulette at a weight cutoff, outgoing groups sampled by multinomial from the gathered scattering rows, isotropic directions, vacuum boundaries, track-length flux tallies on the mesh by index_add (fp64) over sub-sampled points of each flight, fission-weight tallies by index_add; fission sites for the next generation resampled by multinomial from the fission-density mesh with Shannon entropy; 10 inactive and 45-55 active generations (drawn) in 2 problems, k-effective read back every generation")
def mc_neutron_keff_sim(rng):
    groups, nmat = 7, 5
    for _ in range(_smoke(2, 1)):
        sig_t, sig_s, nu_f, chi = _xs_library(groups, nmat)
        sig_maj = sig_t.amax(0)  # (groups,)
        npin = rng.choice([9, 11, 13, 15, 17])
        m = rng.choice(_smoke([128, 160, 192, 256], [16, 24]))
        pitch = 1.26
        width = npin * pitch
        # the material map: pins of drawn fuel types on a moderator, guide tubes / absorbers at drawn pins
        cc = (torch.arange(m, device="cuda", dtype=torch.float32) + 0.5) * width / m
        px = cc % pitch - pitch / 2
        r2 = px[None, :] ** 2 + px[:, None] ** 2
        pin_of = (cc // pitch).long().clamp(0, npin - 1)
        pin_idx = pin_of[:, None] * npin + pin_of[None, :]
        pin_type = torch.tensor([rng.choice([0, 0, 1, 1, 2, 4]) for _ in range(npin * npin)], device="cuda")
        in_pin = r2 < (0.41 ** 2)
        mat = torch.where(in_pin, pin_type[pin_idx], torch.full_like(pin_idx, 3)).reshape(-1)  # 3: moderator
        n = rng.choice(_smoke([500_000, 750_000, 1_000_000, 1_500_000], [500, 800]))
        flights = _smoke(28, 3)
        inactive, active = _smoke(10, 1), rng.randint(_smoke(45, 1), _smoke(55, 2))
        wcut, wsurv = 0.25, 0.5
        sub = 4  # sub-sampled points per flight for the track-length tally
        flux = torch.zeros(groups * m * m, device="cuda", dtype=torch.float64)
        fsrc = torch.ones(m * m, device="cuda")
        k_est = 1.0
        for gen in range(inactive + active):
            # fission sites: cells by multinomial on the fission density, jittered inside the cell
            cell = torch.multinomial(fsrc / fsrc.sum(), n, replacement=True)
            x = ((cell % m).float() + torch.rand(n, device="cuda")) * width / m
            y = ((cell // m).float() + torch.rand(n, device="cuda")) * width / m
            g = torch.multinomial(chi, n, replacement=True)
            w = torch.ones(n, device="cuda")
            fission = torch.zeros(m * m, device="cuda")
            for _ in range(flights):
                mu = 2 * torch.rand(n, device="cuda") - 1
                phi = 2 * math.pi * torch.rand(n, device="cuda")
                st = (1 - mu * mu).sqrt()
                ux, uy = st * torch.cos(phi), st * torch.sin(phi)
                smaj = sig_maj[g]
                d = -torch.log(torch.rand(n, device="cuda").clamp_min(1e-12)) / smaj
                # track-length tally over sub-sampled points of the flight (path length split evenly)
                if gen >= inactive:
                    fr = (torch.arange(sub, device="cuda", dtype=torch.float32) + 0.5)[:, None] / sub
                    tx = ((x[None] + fr * d * ux) / width * m).long().clamp(0, m - 1)
                    ty = ((y[None] + fr * d * uy) / width * m).long().clamp(0, m - 1)
                    tidx = (g[None] * m + ty) * m + tx
                    flux.index_add_(0, tidx.reshape(-1), (w * d / sub).double().repeat(sub))
                    del fr, tx, ty, tidx
                x = x + d * ux
                y = y + d * uy
                inside = ((x > 0) & (x < width) & (y > 0) & (y < width)).float()
                w = w * inside  # vacuum boundary: leaked histories carry no weight
                cx = (x / width * m).long().clamp(0, m - 1)
                cy = (y / width * m).long().clamp(0, m - 1)
                cidx = cy * m + cx
                mt = mat[cidx]
                stot = sig_t[mt, g]
                real = torch.rand(n, device="cuda") * smaj < stot
                # fission weight at real collisions (collision estimator of nu-fission)
                fis = torch.where(real, w * nu_f[mt, g] / stot, torch.zeros_like(w))
                fission.index_add_(0, cidx, fis)
                # survival biasing: the weight reduced by the scattering probability at real collisions
                srow = sig_s[mt, g]  # (n, groups)
                ssum = srow.sum(-1)
                w = torch.where(real, w * ssum / stot, w)
                # Russian roulette below the cutoff
                lucky = torch.rand(n, device="cuda") < w / wsurv
                w = torch.where(w < wcut, torch.where(lucky, torch.full_like(w, wsurv), torch.zeros_like(w)), w)
                gnew = torch.multinomial(srow + 1e-12, 1).squeeze(1)
                g = torch.where(real, gnew, g)
                x, y = x.clamp(0, width - 1e-4), y.clamp(0, width - 1e-4)
                del mu, phi, st, ux, uy, smaj, d, inside, cx, cy, cidx, mt, stot, real, fis, srow, ssum, lucky, gnew
            k_gen = fission.sum() / n
            p = fission / fission.sum().clamp_min(1e-12)
            entropy = -(p * torch.log2(p.clamp_min(1e-30))).sum()
            fsrc = fission + 1e-6 * fission.mean() + 1e-12
            vals = torch.stack([k_gen, entropy]).tolist()
            k_est = 0.9 * k_est + 0.1 * vals[0]
            del cell, x, y, g, w, fission, k_gen, p, entropy
        (flux.view(groups, m, m).sum((1, 2)) / (active * n)).tolist()
        del flux, fsrc, mat, sig_t, sig_s, nu_f, chi

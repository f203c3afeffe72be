"""The seventieth batch of held-out workloads for record.py, second half (batch70.py has the first): geophysics and
the subsurface, written in torch alone. A reservoir-simulation surrogate (a Fourier neural operator over pressure
and water-saturation fields, trained on trajectories from an IMPES two-phase solver written in torch, damped Jacobi
pressure sweeps with harmonic transmissibilities and upwind saturation transport, on log-normal permeability fields
drawn by FFT filtering, with pushforward unrolls; autoregressive rollouts checked against the solver), InSAR
deformation time series (a DnCNN-style phase denoiser trained on synthetic interferograms of subsidence bowls,
seasonal motion, fractal atmospheric screens and coherence-dependent decorrelation noise; then small-baseline
inversions of drawn tiles by coherence-weighted, temporally regularised least squares solved by a fixed count of
conjugate-gradient iterations for every pixel at once, an atmospheric filter and a velocity fit), a joint gravity
and magnetic inversion (dense point-mass and dipole sensitivity kernels built on the device in chunks over drawn
survey grids and meshes, Adam on density and susceptibility with depth weighting, smoothness, a cross-gradient
coupling, IRLS compact-support reweighting and a cooling schedule), and a microseismic event location service
(windows of drawn event count from surface and downhole arrays arriving as int16 counts in reused pinned host
buffers uploaded on a side stream one request ahead, band-passed by rfft, STA/LTA characteristic functions,
diffraction stacking over a travel-time table of a linear-gradient velocity model by gathered shifts, the brightest
nodes refined by Adam on location and origin time against soft picks, local magnitudes). Same conventions as the
earlier batches: nothing downloaded, data drawn at random on the device (or, for the location service, from a few
reused pinned host buffers), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: solver
sweeps, CG iterations, inversion iterations and requests are fixed on the host, upwinding by torch.where, no
boolean-mask indexing; losses and metrics are read back only at logging points. microseismic_stack_locate_serve
uses a side stream (uploads waited on by event, the tensors record_stream'ed); the others are single-stream. The
FNO's pointwise layers and the denoiser run under bf16 autocast; the spectral layers, the solvers, the inversions
and the losses are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new70.sh's header (and batch70.py's docstring for how the
meta-device runner counts).
"""

import math

import torch

from batch_common import Batch
from workload_helpers import SideUploads, fftfreq, rfftfreq

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- reservoir surrogate (FNO over IMPES fields)


def _gaussian_field(b, g, corr):
    """Standardised Gaussian random fields of correlation length corr (in cells) by FFT filtering: (b, g, g)."""
    ky, kx = fftfreq(g)[:, None], fftfreq(g)[None, :]
    filt = torch.exp(-2 * (math.pi * corr) ** 2 * (kx ** 2 + ky ** 2))
    f = torch.fft.ifft2(torch.fft.fft2(torch.randn(b, g, g, device="cuda")) * filt).real
    return (f - f.mean((1, 2), keepdim=True)) / f.std((1, 2), keepdim=True).clamp_min(1e-6)


def _impes_step(p, s, k, inj, prod, sweeps, dt, mu_ratio=3.0, jwell=5.0, phi=0.2):
    """One IMPES step of incompressible two-phase flow: damped Jacobi sweeps of the pressure equation with harmonic
    face transmissibilities (no-flow boundaries, a rate injector, a pressure-controlled producer), then explicit
    upwind transport of water saturation. p, s, k, inj, prod: (b, g, g)."""
    lw, lo = s ** 2, (1 - s) ** 2 / mu_ratio
    lt = lw + lo
    fw = lw / lt
    t = k * lt
    tx = 2 * t[..., :, 1:] * t[..., :, :-1] / (t[..., :, 1:] + t[..., :, :-1])
    ty = 2 * t[..., 1:, :] * t[..., :-1, :] / (t[..., 1:, :] + t[..., :-1, :])
    txp, typ = _F.pad(tx, (1, 1)), _F.pad(ty, (0, 0, 1, 1))
    tw, te, tn, ts = txp[..., :-1], txp[..., 1:], typ[..., :-1, :], typ[..., 1:, :]
    diag = tw + te + tn + ts + jwell * prod + 1e-6
    for _ in range(sweeps):
        pp = _F.pad(p, (1, 1, 1, 1))
        nb = tw * pp[..., 1:-1, :-2] + te * pp[..., 1:-1, 2:] + tn * pp[..., :-2, 1:-1] + ts * pp[..., 2:, 1:-1]
        p = 0.2 * p + 0.8 * (nb + inj) / diag
    fx = tx * (p[..., :, :-1] - p[..., :, 1:])
    fy = ty * (p[..., :-1, :] - p[..., 1:, :])
    wx = fx * torch.where(fx > 0, fw[..., :, :-1], fw[..., :, 1:])
    wy = fy * torch.where(fy > 0, fw[..., :-1, :], fw[..., 1:, :])
    wxp, wyp = _F.pad(wx, (1, 1)), _F.pad(wy, (0, 0, 1, 1))
    div = (wxp[..., 1:] - wxp[..., :-1]) + (wyp[..., 1:, :] - wyp[..., :-1, :])
    out = jwell * prod * p.clamp_min(0) * fw
    s = (s + dt / phi * (inj - div - out)).clamp(0.0, 1.0)
    return p, s


class _SpectralConv2d(_nn.Module):
    def __init__(self, c, modes):
        super().__init__()
        scale = 1 / (c * c)
        self.modes = modes
        self.w1 = _nn.Parameter(scale * torch.randn(c, c, modes, modes, 2))
        self.w2 = _nn.Parameter(scale * torch.randn(c, c, modes, modes, 2))

    def forward(self, x):
        b, c, h, w = x.shape
        m = self.modes
        xf = torch.fft.rfft2(x)
        out = torch.zeros(b, c, h, w // 2 + 1, dtype=torch.cfloat, device=x.device)
        out[:, :, :m, :m] = torch.einsum("bixy,ioxy->boxy", xf[:, :, :m, :m], torch.view_as_complex(self.w1))
        out[:, :, -m:, :m] = torch.einsum("bixy,ioxy->boxy", xf[:, :, -m:, :m], torch.view_as_complex(self.w2))
        return torch.fft.irfft2(out, s=(h, w))


class _ReservoirFNO(_nn.Module):
    def __init__(self, cin, cout, width, modes, layers):
        super().__init__()
        self.lift = _nn.Conv2d(cin, width, 1)
        self.spec = _nn.ModuleList(_SpectralConv2d(width, modes) for _ in range(layers))
        self.pw = _nn.ModuleList(_nn.Conv2d(width, width, 1) for _ in range(layers))
        self.proj = _nn.Sequential(_nn.Conv2d(width, 2 * width, 1), _nn.GELU(), _nn.Conv2d(2 * width, cout, 1))

    def forward(self, x):
        h = self.lift(x)
        for i, (sc, pw) in enumerate(zip(self.spec, self.pw)):
            with torch.autocast("cuda", enabled=False):
                hs = sc(h.float())
            h = pw(h) + hs.to(h.dtype)
            if i < len(self.spec) - 1:
                h = _F.gelu(h)
        return self.proj(h)


@_workload("reservoir-simulation surrogate written by hand (random init): a Fourier neural operator (width 48, 12 modes, 4 spectral layers by rfft2 and complex einsum in fp32, pointwise layers under bf16 autocast) predicting the next pressure and water-saturation fields of a two-phase waterflood from the current ones, log-permeability, well maps and coordinates; training data from an IMPES solver written in torch (harmonic transmissibilities, 40 damped Jacobi pressure sweeps warm-started, upwind saturation transport by torch.where, 2 substeps a saved state, 12 saved states) over pools of 16-24 log-normal permeability fields (Gaussian fields by FFT filtering) with drawn injector and producer locations on grids of 48, 64 or 96 cells (drawn per pool), a fresh pool every 60 steps; pushforward training unrolling 1-3 steps (drawn, the first without grad), relative L2 loss, AdamW with cosine decay, 600 steps; every 200 steps an 11-step autoregressive rollout on 4 fields compared with the solver, the per-step errors read back")
def reservoir_fno_rollout_train(rng):
    width, modes, layers = _smoke(48, 8), _smoke(12, 3), _smoke(4, 2)
    model = _ReservoirFNO(7, 2, width, modes, layers).cuda()
    steps = _smoke(600, 4)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    nsave, sub, sweeps = _smoke(12, 4), _smoke(2, 1), _smoke(40, 3)
    pool = None

    def make_pool():
        g = rng.choice(_smoke([48, 64, 96], [16]))
        b = rng.randint(_smoke(16, 2), _smoke(24, 3))
        logk = _gaussian_field(b, g, rng.uniform(2.0, 6.0)) * rng.uniform(0.5, 1.5)
        k = torch.exp(logk)
        inj = torch.zeros(b, g, g, device="cuda")
        prod = torch.zeros(b, g, g, device="cuda")
        rows = torch.arange(b, device="cuda")
        inj[rows, torch.randint(2, g // 3, (b,), device="cuda"), torch.randint(2, g // 3, (b,), device="cuda")] = 1.0
        prod[rows, torch.randint(2 * g // 3, g - 2, (b,), device="cuda"),
             torch.randint(2 * g // 3, g - 2, (b,), device="cuda")] = 1.0
        p = torch.zeros(b, g, g, device="cuda")
        s = torch.full((b, g, g), 0.1, device="cuda")
        states = []
        with torch.no_grad():
            for _ in range(nsave):
                states.append(torch.stack([p, s], 1))
                for _ in range(sub):
                    p, s = _impes_step(p, s, k, inj, prod, sweeps, 0.05)
        traj = torch.stack(states, 1)  # (b, nsave, 2, g, g)
        pscale = traj[:, :, 0].std().clamp_min(1e-6)
        traj = torch.cat([traj[:, :, :1] / pscale, traj[:, :, 1:]], 2)
        yy, xx = torch.meshgrid(torch.linspace(0, 1, g, device="cuda"), torch.linspace(0, 1, g, device="cuda"),
                                indexing="ij")
        static = torch.stack([logk, inj, prod, xx.expand(b, g, g), yy.expand(b, g, g)], 1)
        return traj, static

    def step_model(state, static):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            d = model(torch.cat([state, static], 1))
        return state + d.float()

    for step in range(steps):
        if step % _smoke(60, 2) == 0:
            pool = None
            pool = make_pool()
        traj, static = pool
        model.train()
        k = rng.randint(1, 3)
        t0 = rng.randint(0, nsave - 1 - k)
        bsel = torch.randperm(traj.shape[0], device="cuda")[: _smoke(12, 2)]
        state = traj[bsel, t0]
        st = static[bsel]
        with torch.no_grad():
            for j in range(k - 1):
                state = step_model(state, st)
        pred = step_model(state, st)
        target = traj[bsel, t0 + k]
        loss = ((pred - target).flatten(1).norm(dim=1) / target.flatten(1).norm(dim=1).clamp_min(1e-6)).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        del bsel, state, st, pred, target
        if step % 20 == 0:
            float(loss)
        del loss
        if (step + 1) % _smoke(200, 4) == 0:
            model.eval()
            with torch.no_grad():
                state = traj[:4, 0]
                errs = []
                for t in range(1, nsave):
                    state = step_model(state, static[:4])
                    tgt = traj[:4, t]
                    errs.append((state - tgt).flatten(1).norm(dim=1).mean() / tgt.flatten(1).norm(dim=1).mean())
                torch.stack(errs).tolist()
                del state, errs, tgt


# ---------------------------------------------------------------- InSAR time series: denoising and SBAS inversion


def _fractal_screens(n, h, w, beta):
    """Power-law (fractal) random screens, standardised: (n, h, w)."""
    ky, kx = fftfreq(h)[:, None], fftfreq(w)[None, :]
    k = (kx ** 2 + ky ** 2).sqrt().clamp_min(1.0 / max(h, w))
    f = torch.fft.ifft2(torch.fft.fft2(torch.randn(n, h, w, device="cuda")) * k ** (-beta / 2)).real
    return (f - f.mean((1, 2), keepdim=True)) / f.std((1, 2), keepdim=True).clamp_min(1e-6)


def _bowls(rng, n, h, w, count):
    """Subsidence bowls (Gaussian) at drawn places: (n, h, w) rates, mm/yr, negative down."""
    yy = torch.linspace(0, 1, h, device="cuda")[:, None]
    xx = torch.linspace(0, 1, w, device="cuda")[None, :]
    out = torch.zeros(n, h, w, device="cuda")
    cx, cy = torch.rand(n, count, 1, 1, device="cuda"), torch.rand(n, count, 1, 1, device="cuda")
    r = 0.03 + 0.15 * torch.rand(n, count, 1, 1, device="cuda")
    amp = 5 + 45 * torch.rand(n, count, 1, 1, device="cuda")
    out = out - (amp * torch.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (r * r))).sum(1)
    return out


def _coherence(n, h, w):
    return 0.15 + 0.8 * torch.sigmoid(1.5 * _fractal_screens(n, h, w, 3.0) + 0.8)


def _wrap(x):
    return torch.atan2(torch.sin(x), torch.cos(x))


def _ifg_patches(rng, b, p):
    """Training interferograms: deformation over a drawn span plus a differenced atmosphere, decorrelation noise
    from the coherence: noisy and clean phase (b, p, p), coherence (b, p, p)."""
    span = 0.1 + 0.9 * torch.rand(b, 1, 1, device="cuda")
    defo = _bowls(rng, b, p, p, rng.randint(1, 3)) * span * (4 * math.pi / 55.6)
    atm = 1.5 * (_fractal_screens(b, p, p, 2.6) - _fractal_screens(b, p, p, 2.6))
    clean = defo + atm
    coh = _coherence(b, p, p)
    sd = (torch.sqrt(1 - coh ** 2) / coh).clamp_max(3.0)
    return clean + sd * torch.randn_like(clean), clean, coh


class _PhaseDenoiser(_nn.Module):
    """DnCNN-style: conv-BN-ReLU layers predicting the residual of (cos, sin) of the phase, coherence as input."""

    def __init__(self, c, depth):
        super().__init__()
        mods = [_nn.Conv2d(3, c, 3, padding=1), _nn.ReLU(inplace=True)]
        for _ in range(depth - 2):
            mods += [_nn.Conv2d(c, c, 3, padding=1, bias=False), _nn.BatchNorm2d(c), _nn.ReLU(inplace=True)]
        mods.append(_nn.Conv2d(c, 2, 3, padding=1))
        self.net = _nn.Sequential(*mods)

    def forward(self, phase, coh):
        cs = torch.stack([torch.cos(phase), torch.sin(phase)], 1)
        return cs + self.net(torch.cat([cs, coh[:, None]], 1)).float()


@_workload("InSAR deformation time-series denoising and small-baseline inversion written by hand (random init): a DnCNN-style phase denoiser (64 channels, 12 layers, BatchNorm, residual on the phase's cosine and sine, coherence as input) trained on synthetic interferograms (Gaussian subsidence bowls over drawn time spans, differenced fractal atmospheric screens by FFT, coherence-dependent decorrelation noise) in patches of 64, 96 or 128 pixels (drawn) fitting a budget of 2^18 pixels, bf16 autocast, Adam, 600 steps; then 80-90 tiles (drawn) of 128-256 pixels a side (drawn) with 20-36 acquisitions 12 days apart (drawn) and a small-baseline network (pairs up to 3 apart), every interferogram denoised in chunks of 16 under bf16 autocast and the noisy phase corrected by the wrapped residual, the time series of every pixel at once by coherence-weighted least squares with a second-difference temporal penalty solved by 40 conjugate-gradient iterations, an atmospheric filter (temporal high-pass, spatial low-pass by avg_pool2d), a per-pixel velocity fit, fp32; the velocity and time-series errors read back per tile")
def insar_sbas_denoise_invert_opt(rng):
    c, depth = _smoke(64, 8), _smoke(12, 3)
    model = _PhaseDenoiser(c, depth).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    budget = _smoke(1 << 18, 2 * 32 * 32)
    for step in range(_smoke(600, 3)):
        model.train()
        p = rng.choice(_smoke([64, 96, 128], [32]))
        b = max(1, budget // (p * p))
        noisy, clean, coh = _ifg_patches(rng, b, p)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(noisy, coh)
        target = torch.stack([torch.cos(clean), torch.sin(clean)], 1)
        loss = _F.mse_loss(out.float(), target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del noisy, clean, coh, out, target
        if step % 20 == 0:
            float(loss)
        del loss

    model.eval()
    lam, cg_iters = 0.3, _smoke(40, 4)
    with torch.no_grad():
        for _ in range(rng.randint(_smoke(80, 1), _smoke(90, 2))):
            h = rng.choice(_smoke([128, 192, 256], [24]))
            w = rng.choice(_smoke([128, 192, 256], [24, 32]))
            nacq = rng.randint(_smoke(20, 6), _smoke(36, 8))
            tyears = [12 * i / 365.25 for i in range(nacq)]
            pairs = [(i, j) for i in range(nacq) for j in range(i + 1, min(nacq, i + 4))]
            npair = len(pairs)
            t = torch.tensor(tyears, device="cuda")
            ii = torch.tensor([a for a, _ in pairs], device="cuda")
            jj = torch.tensor([b for _, b in pairs], device="cuda")
            a_full = torch.zeros(npair, nacq, device="cuda")
            a_full[torch.arange(npair, device="cuda"), jj] = 1.0
            a_full[torch.arange(npair, device="cuda"), ii] = -1.0
            amat = a_full[:, 1:]  # the first acquisition is the reference
            dmat = torch.zeros(nacq - 3, nacq - 1, device="cuda")
            r = torch.arange(nacq - 3, device="cuda")
            dmat[r, r], dmat[r, r + 1], dmat[r, r + 2] = 1.0, -2.0, 1.0
            # the truth: bowls' rates plus seasonal motion, then phases with atmosphere
            rate = _bowls(rng, 1, h, w, rng.randint(1, 4))[0]
            seas = 3 * _fractal_screens(1, h, w, 3.0)[0]
            disp = rate[None] * t[:, None, None] + seas[None] * torch.sin(2 * math.pi * t + rng.uniform(0, 6.28))[
                :, None, None]
            k4 = 4 * math.pi / 55.6
            phase = disp * k4 + 1.5 * _fractal_screens(nacq, h, w, 2.6)
            coh0 = _coherence(1, h, w)[0]
            span = (t[jj] - t[ii])[:, None, None]
            gam = coh0[None] * torch.exp(-span / 1.5)
            clean = phase[jj] - phase[ii]
            sd = (torch.sqrt(1 - gam ** 2) / gam.clamp_min(0.05)).clamp_max(3.0)
            noisy = clean + sd * torch.randn_like(clean)
            # denoise every interferogram, correct the unwrapped phase by the wrapped residual
            parts = []
            for k in range(0, npair, 16):
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    cs = model(noisy[k: k + 16], gam[k: k + 16])
                parts.append(torch.atan2(cs[:, 1], cs[:, 0]))
            den = torch.cat(parts, 0)
            d = (noisy - _wrap(noisy - den)).reshape(npair, -1)
            wgt = (gam ** 2 / (1 - gam ** 2).clamp_min(1e-3)).reshape(npair, -1)

            def apply(x):
                return amat.t() @ (wgt * (amat @ x)) + lam * (dmat.t() @ (dmat @ x))

            rhs = amat.t() @ (wgt * d)
            x = torch.zeros_like(rhs)
            res = rhs.clone()
            pdir = res.clone()
            rr = (res * res).sum(0)
            for _ in range(cg_iters):
                ap = apply(pdir)
                alpha = rr / (pdir * ap).sum(0).clamp_min(1e-12)
                x = x + alpha * pdir
                res = res - alpha * ap
                rr_new = (res * res).sum(0)
                pdir = res + (rr_new / rr.clamp_min(1e-12)) * pdir
                rr = rr_new
            ts = torch.cat([torch.zeros(1, h * w, device="cuda"), x], 0).view(nacq, h, w) / k4
            # atmospheric filter: temporal high-pass, spatial low-pass of it, subtracted
            smooth_t = _F.avg_pool1d(_F.pad(ts.reshape(nacq, -1).t()[:, None], (2, 2), mode="replicate"), 5,
                                     stride=1)[:, 0].t().reshape(nacq, h, w)
            hp = ts - smooth_t
            atm = _F.avg_pool2d(_F.pad(hp[:, None], (7, 7, 7, 7), mode="replicate"), 15, stride=1)[:, 0]
            ts = ts - atm
            tc = t - t.mean()
            vel = torch.einsum("t,thw->hw", tc, ts) / (tc * tc).sum()
            truth = disp - disp[:1]
            torch.stack([(vel - rate).pow(2).mean().sqrt(), (ts - truth).pow(2).mean().sqrt()]).tolist()
            del t, ii, jj, a_full, amat, dmat, r, rate, seas, disp, phase, coh0, span, gam, clean, sd, noisy, parts
            del den, d, wgt, rhs, x, res, pdir, rr, ap, ts, smooth_t, hp, atm, tc, vel, truth


# ---------------------------------------------------------------- joint gravity and magnetic inversion


def _potential_kernels(obs, cells, vol, chunk):
    """Vertical gravity of a point mass (mGal per g/cc) and the vertical field of a vertically magnetised dipole
    (nT per SI) of each cell at each station, built in chunks of stations: (nobs, ncell) each."""
    gs, ms = [], []
    for i in range(0, obs.shape[0], chunk):
        d = cells[None] - obs[i: i + chunk, None]  # (c, ncell, 3)
        r2 = (d * d).sum(-1) + 25.0
        r = r2.sqrt()
        dz = d[..., 2]
        gs.append(6.674e-3 * vol * dz / (r2 * r))
        ms.append(100.0 * vol * (3 * dz * dz - r2) / (r2 * r2 * r))
        del d, r2, r, dz
    return torch.cat(gs, 0), torch.cat(ms, 0)


def _grad3(m):
    """Forward differences of a (nz, ny, nx) model, cropped to the common (nz-1, ny-1, nx-1) block."""
    gx = m[:-1, :-1, 1:] - m[:-1, :-1, :-1]
    gy = m[:-1, 1:, :-1] - m[:-1, :-1, :-1]
    gz = m[1:, :-1, :-1] - m[:-1, :-1, :-1]
    return gx, gy, gz


@_workload("joint gravity and magnetic inversion written by hand in torch (no learning): 4 survey areas in turn, station grids of 24-40 a side (drawn) over meshes of as many cells a side and 12-20 layers (drawn, 50 m cells), dense point-mass gravity and vertical-dipole magnetic sensitivity kernels built on the device in chunks of 256 stations, a drawn true model of 2-4 prisms with density and susceptibility contrasts giving noisy data; Adam on density and susceptibility (bounded by clamping) minimising the weighted data misfits plus depth-weighted smallness, first-difference smoothness in x, y, z, a cross-gradient coupling of the two models and an IRLS compact-support term reweighted every 40 iterations, the regularisation weight cooled every 40 iterations, 360-390 iterations an area (drawn), fp32; the misfits and model errors read back every 40 iterations")
def gravmag_joint_inversion_opt(rng):
    cell = 50.0
    for _ in range(_smoke(4, 1)):
        ns = rng.choice(_smoke([24, 32, 40], [10, 12]))
        nz = rng.randint(_smoke(12, 3), _smoke(20, 4))
        ny = nx = ns
        xs = (torch.arange(ns, device="cuda", dtype=torch.float32) + 0.5) * cell
        oy, ox = torch.meshgrid(xs, xs, indexing="ij")
        obs = torch.stack([ox.flatten(), oy.flatten(), torch.full_like(ox.flatten(), -1.0)], -1)
        zc = (torch.arange(nz, device="cuda", dtype=torch.float32) + 0.5) * cell
        cz, cy, cx = torch.meshgrid(zc, xs, xs, indexing="ij")
        cells = torch.stack([cx.flatten(), cy.flatten(), cz.flatten()], -1)
        gk, mk = _potential_kernels(obs, cells, cell ** 3 / 1e6, _smoke(256, 16))
        rho_t = torch.zeros(nz, ny, nx, device="cuda")
        chi_t = torch.zeros(nz, ny, nx, device="cuda")
        for _ in range(rng.randint(2, 4)):
            z0, y0, x0 = rng.randint(1, nz // 2), rng.randint(2, ny - 6), rng.randint(2, nx - 6)
            z1, y1, x1 = z0 + rng.randint(2, max(3, nz // 2)), y0 + rng.randint(3, 6), x0 + rng.randint(3, 6)
            rho_t[z0:z1, y0:y1, x0:x1] += rng.uniform(-0.3, 0.5)
            chi_t[z0:z1, y0:y1, x0:x1] += rng.uniform(0.0, 0.05) * rng.choice([0.0, 1.0, 1.0])
        dg = gk @ rho_t.flatten()
        dm = mk @ chi_t.flatten()
        sg = 0.02 * dg.abs().amax().clamp_min(1e-6)
        sm = 0.02 * dm.abs().amax().clamp_min(1e-6)
        dg = dg + sg * torch.randn_like(dg)
        dm = dm + sm * torch.randn_like(dm)
        wz_g = ((zc + 25.0) ** -1.0)[:, None, None] * zc[0] ** 1.0
        wz_m = ((zc + 25.0) ** -1.5)[:, None, None] * zc[0] ** 1.5
        rho = torch.zeros(nz, ny, nx, device="cuda", requires_grad=True)
        chi = torch.zeros(nz, ny, nx, device="cuda", requires_grad=True)
        opt = torch.optim.Adam([rho, chi], lr=0.01)
        beta, alpha_s, gamma = 1.0, 1e-3, 10.0
        irls_r = torch.ones(nz, ny, nx, device="cuda")
        irls_c = torch.ones(nz, ny, nx, device="cuda")
        nobs = obs.shape[0]
        iters = rng.randint(_smoke(360, 3), _smoke(390, 4))
        for it in range(iters):
            phi_g = (((gk @ rho.flatten() - dg) / sg) ** 2).sum() / nobs
            phi_m = (((mk @ chi.flatten() - dm) / sm) ** 2).sum() / nobs
            gxr, gyr, gzr = _grad3(rho)
            gxc, gyc, gzc = _grad3(chi)
            smooth = (gxr ** 2 + gyr ** 2 + gzr ** 2).mean() + 400 * (gxc ** 2 + gyc ** 2 + gzc ** 2).mean()
            small = alpha_s * ((irls_r * (rho / wz_g) ** 2).mean() + 400 * (irls_c * (chi / wz_m) ** 2).mean())
            tx = gyr * gzc - gzr * gyc
            ty = gzr * gxc - gxr * gzc
            tz = gxr * gyc - gyr * gxc
            cross = (tx ** 2 + ty ** 2 + tz ** 2).mean()
            loss = phi_g + phi_m + beta * (smooth + small) + gamma * cross
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            with torch.no_grad():
                rho.clamp_(-1.0, 1.0)
                chi.clamp_(0.0, 0.2)
            if (it + 1) % 40 == 0:
                beta *= 0.7
                with torch.no_grad():
                    irls_r = 1 / (rho.detach() ** 2 + 0.01 ** 2)
                    irls_r = irls_r / irls_r.mean()
                    irls_c = 1 / (chi.detach() ** 2 + 0.002 ** 2)
                    irls_c = irls_c / irls_c.mean()
                    torch.stack([phi_g.detach(), phi_m.detach(), (rho - rho_t).abs().mean(),
                                 (chi - chi_t).abs().mean()]).tolist()
            del phi_g, phi_m, gxr, gyr, gzr, gxc, gyc, gzc, smooth, small, tx, ty, tz, cross, loss
        del gk, mk, obs, cells, rho_t, chi_t, dg, dm, rho, chi, opt, irls_r, irls_c


# ---------------------------------------------------------------- microseismic event location service


def _gradient_traveltime(src, rec, v0, kgrad):
    """First-arrival times in a linear-gradient medium v(z) = v0 + k z between sources (..., 1, 3) and receivers
    (R, 3): (..., R)."""
    d = src - rec
    h2 = (d * d).sum(-1)
    vs = v0 + kgrad * src[..., 2].clamp_min(0)
    vr = v0 + kgrad * rec[:, 2].clamp_min(0)
    arg = 1 + kgrad * kgrad * h2 / (2 * vs * vr)
    return torch.acosh(arg.clamp_min(1 + 1e-7)) / kgrad


@_workload("microseismic event location service written by hand in torch (no learning): a surface array of 48-96 geophones (drawn) and a downhole string of 16, a linear-gradient P and S velocity model, P and S travel-time tables over a 24x24x12 grid of candidate nodes by the analytic gradient-medium formula; 190-205 requests (drawn) of 1-12 triggered events (drawn) of 1,024 or 2,048 samples at 2 kHz (drawn) on 3 components arriving as int16 counts in 2 reused pinned host buffers uploaded on a side stream one request ahead (waited on by event, record_stream'ed), band-passed by rfft, P (vertical) and S (horizontal) STA/LTA characteristic functions by cumsum, decimated by 4, diffraction stacking over the nodes and 256 origin times by gathered shifts in chunks of 8 receivers, the 8 brightest nodes' softmax-weighted centroid refined by 12 Adam iterations on location and origin time against soft picks with a Huber loss, local magnitudes from peak amplitudes and distances; each request's locations, origin times and magnitudes read back")
def microseismic_stack_locate_serve(rng):
    fs, dec = 2000.0, 4
    nsurf = rng.choice(_smoke([48, 64, 96], [6]))
    nhole = _smoke(16, 2)
    nrec = nsurf + nhole
    side = int(math.ceil(math.sqrt(nsurf)))
    surf = [((i % side + 0.5) / side * 2000.0, (i // side + 0.5) / side * 2000.0, 0.0) for i in range(nsurf)]
    hole = [(1000.0, 1000.0, 400.0 + 900.0 * i / max(1, nhole - 1)) for i in range(nhole)]
    rec = torch.tensor(surf + hole, device="cuda")
    vp0, kp = 2200.0, 0.9
    vs0, ks = vp0 / 1.73, kp / 1.73
    gx, gy, gz = _smoke(24, 4), _smoke(24, 4), _smoke(12, 3)
    nodes = torch.stack(torch.meshgrid(torch.linspace(100, 1900, gx, device="cuda"),
                                       torch.linspace(100, 1900, gy, device="cuda"),
                                       torch.linspace(600, 2400, gz, device="cuda"), indexing="ij"), -1).view(-1, 3)
    ngrid = nodes.shape[0]
    tp_tab = _gradient_traveltime(nodes[:, None], rec, vp0, kp)  # (G, R), s
    ts_tab = _gradient_traveltime(nodes[:, None], rec, vs0, ks)
    dtd = dec / fs
    shift_p = torch.round(tp_tab / dtd).long()
    shift_s = torch.round(ts_tab / dtd).long()
    nt0, rc = _smoke(256, 16), _smoke(8, 4)
    emax, tmax = _smoke(12, 2), _smoke(2048, 256)
    host = [torch.randint(-4000, 4000, (emax * nrec * 3 * tmax,), dtype=torch.int16).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    nreq = rng.randint(_smoke(190, 3), _smoke(205, 4))
    plan = [(rng.randint(1, emax), rng.choice(_smoke([1024, 2048], [128, 256]))) for _ in range(nreq)]
    nxt = up.upload(0, plan[0][0] * nrec * 3 * plan[0][1])
    ridx = torch.arange(rc, device="cuda")[None, :, None]
    t0s = torch.arange(nt0, device="cuda")[None, None, :]
    ns, nl = _smoke(20, 4), _smoke(200, 16)
    for i in range(nreq):
        ne, nt = plan[i]
        z, ev = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, plan[i + 1][0] * nrec * 3 * plan[i + 1][1])
        SideUploads.ready(ev, z)
        with torch.no_grad():
            x = z.view(ne, nrec, 3, nt).float() * 1e-3
            f = rfftfreq(nt, 1 / fs)
            band = torch.sigmoid((f - 20) / 3) * torch.sigmoid((250 - f) / 20)
            x = torch.fft.irfft(torch.fft.rfft(x, dim=-1) * band, n=nt, dim=-1)
            energy = torch.stack([x[:, :, 0] ** 2, x[:, :, 1] ** 2 + x[:, :, 2] ** 2], 2)  # (E, R, 2, nt)
            cs = _F.pad(energy.cumsum(-1), (nl, 0))
            sta = (cs[..., nl:] - cs[..., nl - ns: -ns]) / ns
            lta = (cs[..., nl:] - cs[..., :-nl]) / nl
            cf = (sta / (lta + 1e-3 * lta.mean(-1, keepdim=True) + 1e-12)).clamp_max(20.0)
            cf = _F.avg_pool1d(cf.reshape(ne, nrec * 2, nt), dec).view(ne, nrec, 2, nt // dec)
            ntd = nt // dec
            cfp, cfs = cf[:, :, 0], cf[:, :, 1]
            stack = torch.zeros(ne, ngrid, nt0, device="cuda")
            for r0 in range(0, nrec, rc):
                r1 = min(nrec, r0 + rc)
                ip = (shift_p[:, r0:r1, None] + t0s).clamp_max(ntd - 1)
                is_ = (shift_s[:, r0:r1, None] + t0s).clamp_max(ntd - 1)
                rr = ridx[:, : r1 - r0]
                stack += cfp[:, r0:r1][:, rr, ip].sum(2) + cfs[:, r0:r1][:, rr, is_].sum(2)
                del ip, is_
            bright, t_best = stack.max(-1)
            top = bright.topk(8, dim=-1)
            wts = torch.softmax(top.values / top.values.std(-1, keepdim=True).clamp_min(1e-6), -1)
            loc0 = (wts[..., None] * nodes[top.indices]).sum(1)  # (E, 3)
            t00 = (torch.gather(t_best, 1, top.indices[:, :1])[:, 0].float()) * dtd
            # soft picks: expected times under a sharpened softmax of each characteristic function
            tgrid = torch.arange(ntd, device="cuda", dtype=torch.float32) * dtd
            pick_p = (torch.softmax(cfp * 2.0, -1) * tgrid).sum(-1)
            pick_s = (torch.softmax(cfs * 2.0, -1) * tgrid).sum(-1)
            conf_p, conf_s = cfp.amax(-1), cfs.amax(-1)
        loc = loc0.clone().requires_grad_(True)
        t0 = t00.clone().requires_grad_(True)
        ropt = torch.optim.Adam([{"params": [loc], "lr": 20.0}, {"params": [t0], "lr": 0.01}])
        for _ in range(_smoke(12, 2)):
            src = loc[:, None]
            rp = t0[:, None] + _gradient_traveltime(src, rec, vp0, kp) - pick_p
            rs = t0[:, None] + _gradient_traveltime(src, rec, vs0, ks) - pick_s
            loss = (conf_p * _F.huber_loss(rp * 100, torch.zeros_like(rp), reduction="none", delta=1.0)).mean() + \
                (conf_s * _F.huber_loss(rs * 100, torch.zeros_like(rs), reduction="none", delta=1.0)).mean()
            ropt.zero_grad(set_to_none=True)
            loss.backward()
            ropt.step()
            del src, rp, rs, loss
        with torch.no_grad():
            dist = (loc[:, None] - rec).norm(dim=-1).clamp_min(10.0) / 1000
            amax = x[:, :, 1:].abs().amax(-1).amax(-1)  # (E, R)
            ml = (torch.log10(amax.clamp_min(1e-9)) + 1.11 * torch.log10(dist) + 0.00189 * dist * 1000 - 2.09).median(
                -1).values
            torch.cat([loc, t0[:, None], ml[:, None]], -1).tolist()
        del z, ev, x, f, band, energy, cs, sta, lta, cf, cfp, cfs, stack, bright, t_best, top, wts, loc0, t00
        del tgrid, pick_p, pick_s, conf_p, conf_s, loc, t0, ropt, dist, amax, ml

"""The forty-fourth batch of held-out workloads for record.py, second half (batch44.py holds the first): scientific
imaging, inverse problems and simulation surrogates. A learned multigrid solver for variable-coefficient Poisson
problems trained by unrolling V-cycles over problems of several sizes (a learned smoother shared across levels),
SIREN implicit neural representations fitted per signal as a sequence of fitting jobs (images, volumes and audio
of many sizes, a fresh network and optimizer per job, random coordinate batches of drawn size, a chunked render at
the end), diffusion posterior sampling for linear inverse problems (inpainting, deblurring, super-resolution and
denoising; a gradient of the measurement residual through the denoiser at every step) and ptychographic phase
retrieval by automatic differentiation (object and probe optimized by Adam over minibatches of scan positions, jobs
of many object sizes and scan densities). Same conventions as the first half: models written by hand in torch with
random weights, nothing downloaded, `rng` the workload's random.Random for every shape, sizes through
`_smoke(real, small)`, no control flow reading a tensor's value (evaluation numbers read back only for logging).
All four are single-stream; dps_inverse_sample runs under bf16 autocast, the others in fp32 (complex64 for the
ptychography's Fourier terms).

Checked as batch44.py's header says: every workload of this half was run whole at its real sizes on the meta device (two then
rescaled in steps or requests, as record_new44.sh's header says)
(op outputs counted, peak live bytes tracked; figures in record_new44.sh's header) and under the CPU smoke run
(RECORD_SMOKE=1).
"""

import math

import torch

from batch_common import Batch
from workload_models import _UNet

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- learned multigrid


def _faces(a):
    """Face coefficients of a cell-centred diffusion coefficient a (B, 1, N, N): harmonic-free arithmetic means on
    the N+1 x-faces and y-faces (zero Dirichlet outside), and the operator's diagonal."""
    f = torch.nn.functional
    ap = f.pad(a, (1, 1, 1, 1), mode="replicate")
    ax = 0.5 * (ap[..., 1:-1, 1:] + ap[..., 1:-1, :-1])
    ay = 0.5 * (ap[..., 1:, 1:-1] + ap[..., :-1, 1:-1])
    diag = ax[..., 1:] + ax[..., :-1] + ay[..., 1:, :] + ay[..., :-1, :]
    return ax, ay, diag


def _apply_op(u, ax, ay):
    """-div(a grad u) on the grid (unit spacing; the levels' spacing is folded into the coefficients)."""
    up = torch.nn.functional.pad(u, (1, 1, 1, 1))
    fx = ax * (up[..., 1:-1, 1:] - up[..., 1:-1, :-1])
    fy = ay * (up[..., 1:, 1:-1] - up[..., :-1, 1:-1])
    return -(fx[..., 1:] - fx[..., :-1] + fy[..., 1:, :] - fy[..., :-1, :])


class _Smoother(torch.nn.Module):
    """A learned smoother: damped Jacobi plus a small CNN correction from the residual, the scaled residual and
    the coefficient (3 -> 16 -> 16 -> 1, 3x3), shared across levels."""

    def __init__(self, w=16):
        super().__init__()
        nn = torch.nn
        self.net = nn.Sequential(nn.Conv2d(3, w, 3, padding=1), nn.ReLU(), nn.Conv2d(w, w, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(w, 1, 3, padding=1))
        self.omega = nn.Parameter(torch.tensor(0.6))

    def forward(self, u, f, lvl):
        ax, ay, diag, a = lvl
        r = f - _apply_op(u, ax, ay)
        jr = r / diag
        return u + self.omega * jr + 0.1 * self.net(torch.cat([r, jr, a], 1))


def _vcycle(sm, u, f, levels, i=0, nu=2):
    fn = torch.nn.functional
    lvl = levels[i]
    if i == len(levels) - 1:
        ax, ay, diag, _ = lvl
        for _ in range(16):
            u = u + 0.8 * (f - _apply_op(u, ax, ay)) / diag
        return u
    for _ in range(nu):
        u = sm(u, f, lvl)
    r = f - _apply_op(u, lvl[0], lvl[1])
    rc = fn.avg_pool2d(r, 2) * 4
    ec = _vcycle(sm, torch.zeros_like(rc), rc, levels, i + 1, nu)
    u = u + fn.interpolate(ec, scale_factor=2.0, mode="bilinear", align_corners=False)
    for _ in range(nu):
        u = sm(u, f, lvl)
    return u


def _mg_levels(a, coarsest=8):
    fn = torch.nn.functional
    levels = []
    while True:
        ax, ay, diag = _faces(a)
        levels.append((ax, ay, diag, a))
        if a.shape[-1] <= coarsest:
            return levels
        a = fn.avg_pool2d(a, 2)


@_workload("learning a multigrid solver (Greenfeld et al. 2019 / Katrutsa et al. 2020-style learned smoothers, written by hand, fp32): variable-coefficient Poisson problems -div(a grad u) = f with a = exp(smooth random field) on grids of 64, 128, 256 or 512 cells a side (drawn per step; batches of 1-16 capped at 4 problems of 256x256 worth of cells), the operator applied by padded finite differences on face coefficients, a hierarchy of averaged coefficients down to 8x8; V-cycles with a learned smoother (damped Jacobi with a learned weight plus a 3-layer CNN of 16 channels on the residual, the Jacobi-scaled residual and the coefficient, shared across levels; 2 pre- and 2 post-smoothing steps), full-weighting restriction by average pooling, bilinear prolongation and 16 Jacobi sweeps on the coarsest level; each step unrolls 2-5 V-cycles (drawn) from zero and minimizes the mean log residual-norm reduction across the cycles, Adam 1e-3, 36 steps; every 12 steps a 512x512 problem solved by 8 V-cycles without grad, its residual reduction read back")
def multigrid_learned_train(rng):
    fn = torch.nn.functional
    nsteps = _smoke(36, 3)
    sizes = _smoke([64, 128, 256, 512], [16, 32])
    cap = _smoke(4 * 256 * 256, 2 * 32 * 32)
    sm = _Smoother(_smoke(16, 4)).cuda()
    opt = torch.optim.Adam(sm.parameters(), lr=1e-3, foreach=True)

    def problem(b, n):
        a = torch.exp(fn.interpolate(torch.randn(b, 1, n // 8, n // 8, device="cuda"), size=(n, n),
                                     mode="bilinear", align_corners=False))
        return a, torch.randn(b, 1, n, n, device="cuda")

    for step in range(nsteps):
        n = rng.choice(sizes)
        b = max(1, min(rng.randint(1, 16), cap // (n * n)))
        a, f = problem(b, n)
        levels = _mg_levels(a, _smoke(8, 4))
        r0 = f.flatten(1).norm(dim=1)
        u = torch.zeros_like(f)
        loss = 0
        ncyc = rng.randint(2, 5)
        for _ in range(ncyc):
            u = _vcycle(sm, u, f, levels)
            rn = (f - _apply_op(u, levels[0][0], levels[0][1])).flatten(1).norm(dim=1)
            loss = loss + torch.log(rn / r0 + 1e-12).mean() / ncyc
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(sm.parameters(), 1.0)
        opt.step()
        del a, f, levels, r0, u, loss, rn
        if (step + 1) % _smoke(12, 2) == 0:
            with torch.no_grad():
                ne = _smoke(512, 32)
                a, f = problem(1, ne)
                levels = _mg_levels(a, _smoke(8, 4))
                u = torch.zeros_like(f)
                for _ in range(8):
                    u = _vcycle(sm, u, f, levels)
                float((f - _apply_op(u, levels[0][0], levels[0][1])).norm() / f.norm())
                del a, f, levels, u
    torch.cuda.synchronize()


# ---------------------------------------------------------------- SIREN fitting jobs


class _Siren(torch.nn.Module):
    """SIREN (Sitzmann et al. 2020): sine layers with omega_0 = 30 and the paper's initialization, a linear head."""

    def __init__(self, din, dout, hidden, layers, w0=30.0):
        super().__init__()
        self.w0 = w0
        dims = [din] + [hidden] * layers
        self.lins = torch.nn.ModuleList(torch.nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))
        with torch.no_grad():
            for i, lin in enumerate(self.lins):
                bound = 1.0 / lin.in_features if i == 0 else math.sqrt(6 / lin.in_features) / w0
                lin.weight.uniform_(-bound, bound)
        self.head = torch.nn.Linear(hidden, dout)

    def forward(self, x):
        for lin in self.lins:
            x = torch.sin(self.w0 * lin(x))
        return self.head(x)


@_workload("implicit neural representation fitting served as a queue of jobs, SIREN (Sitzmann et al. 2020) written by hand, fp32: 40 jobs, each a signal made on the device (smooth random fields plus detail): an RGB image of 128-1024 px a side (multiples of 64, drawn per side), a density volume of 32-128 voxels a side, or a mono audio clip of 20k-300k samples; a fresh SIREN per job (omega_0 30, 3-5 sine layers of 128, 256 or 384, the paper's initialization, a linear head) and a fresh Adam (1e-4, foreach); 60-150 fitting steps (drawn per job), each on a random batch of 8k-128k coordinates (drawn per step, log-uniform, at most the signal's size) built on the device from random flat indices, the targets gathered by the same indices, MSE loss; then the whole signal rendered without grad in chunks of 64k coordinates, its PSNR read back and the fitted weights copied to the host")
def siren_fit_jobs(rng):
    njobs = _smoke(40, 3)
    for _ in range(njobs):
        kind = rng.choice(["image", "image", "volume", "audio"])
        if kind == "image":
            shape = (rng.randrange(_smoke(128, 16), _smoke(1024, 32) + 1, _smoke(64, 16)),
                     rng.randrange(_smoke(128, 16), _smoke(1024, 32) + 1, _smoke(64, 16)))
            ch = 3
        elif kind == "volume":
            shape = tuple(rng.randrange(_smoke(32, 8), _smoke(128, 16) + 1, _smoke(16, 8)) for _ in range(3))
            ch = 1
        else:
            shape = (rng.randint(_smoke(20000, 500), _smoke(300000, 2000)),)
            ch = 1
        dim = len(shape)
        total = math.prod(shape)
        coarse = tuple(max(2, s // 16) for s in shape)
        mode = ("linear", "bilinear", "trilinear")[dim - 1]
        sig = torch.nn.functional.interpolate(torch.randn(1, ch, *coarse, device="cuda"), size=shape, mode=mode,
                                              align_corners=False)
        sig = (sig + 0.1 * torch.randn(1, ch, *shape, device="cuda")).flatten(2)[0].T.contiguous()  # (N, ch)
        sizes = torch.tensor(shape, device="cuda")
        strides = torch.tensor([math.prod(shape[i + 1:]) for i in range(dim)], device="cuda")

        def coords(idx):
            pos = (idx[:, None] // strides) % sizes
            return pos.float() / (sizes - 1).float() * 2 - 1

        hidden = rng.choice(_smoke([128, 256, 384], [16]))
        net = _Siren(dim, ch, hidden, rng.randint(3, 5)).cuda()
        opt = torch.optim.Adam(net.parameters(), lr=1e-4, foreach=True)
        for _ in range(rng.randint(_smoke(60, 2), _smoke(150, 4))):
            nb = min(total, _loguniform(rng, _smoke(8192, 64), _smoke(131072, 256)))
            idx = torch.randint(0, total, (nb,), device="cuda")
            loss = (net(coords(idx)) - sig[idx]).pow(2).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            del idx, loss
        with torch.no_grad():
            chunk = _smoke(65536, 256)
            err = torch.zeros((), device="cuda")
            for c0 in range(0, total, chunk):
                idx = torch.arange(c0, min(total, c0 + chunk), device="cuda")
                err = err + (net(coords(idx)) - sig[idx]).pow(2).sum()
            float(10 * torch.log10(1.0 / (err / (total * ch))))
            {k: v.cpu() for k, v in net.state_dict().items()}
        del net, opt, sig, sizes, strides, err
    torch.cuda.synchronize()


# ---------------------------------------------------------------- diffusion posterior sampling


@_workload("diffusion posterior sampling for linear inverse problems, DPS (Chung et al. 2023) written by hand (random weights): a pixel-space diffusion UNet (the diffusion _UNet: 64-128-256 channels, two ResBlocks a level, attention in the middle, timestep embedding) as the prior under bf16 autocast; 16 requests, each an inverse problem drawn (box inpainting, Gaussian deblurring by a 9x9 kernel, 4x super-resolution by average pooling, or denoising) on 1-8 images at 64, 96 or 128 px (capped at 4 images of 128 px worth of pixels) with noisy measurements; 30-80 DDIM-like ancestral steps (drawn per request) over a 1000-step linear-beta schedule, each step the denoiser's forward with the noisy image requiring grad, x0 predicted, the measurement residual's norm differentiated with respect to the noisy image by torch.autograd.grad and the step corrected by it (step size 1 / residual norm); the reconstructions clamped to uint8 and copied back")
def dps_inverse_sample(rng):
    f = torch.nn.functional
    nreq = _smoke(16, 2)
    ch = (64, 128, 256) if _smoke(1, 0) else (32, 64)
    net = _UNet(ch=ch, tdim=_smoke(256, 32)).cuda().eval()
    net.requires_grad_(False)
    betas = torch.linspace(1e-4, 0.02, 1000, device="cuda")
    abar = torch.cumprod(1 - betas, 0)
    cap = _smoke(4 * 128 * 128, 2 * 32 * 32)
    for _ in range(nreq):
        res = rng.choice(_smoke([64, 96, 128], [16, 32]))
        b = max(1, min(rng.randint(1, 8), cap // (res * res)))
        task = rng.choice(["inpaint", "deblur", "sr4", "denoise"])
        truth = f.interpolate(torch.rand(b, 3, res // 8, res // 8, device="cuda"), size=(res, res), mode="bilinear",
                              align_corners=False) * 2 - 1
        if task == "inpaint":
            mask = torch.ones(1, 1, res, res, device="cuda")
            y0, x0 = rng.randrange(0, res // 2), rng.randrange(0, res // 2)
            mask[..., y0:y0 + res // 2, x0:x0 + res // 2] = 0

            def op(x, mask=mask):
                return x * mask
        elif task == "deblur":
            g = torch.exp(-torch.arange(-4, 5, device="cuda").float() ** 2 / (2 * 3.0 ** 2))
            kern = (g[:, None] * g[None]) / (g.sum() ** 2)
            kern = kern.expand(3, 1, 9, 9).contiguous()

            def op(x, kern=kern):
                return f.conv2d(x, kern.to(x.dtype), padding=4, groups=3)
        elif task == "sr4":
            def op(x):
                return f.avg_pool2d(x, 4)
        else:
            def op(x):
                return x
        y = op(truth) + 0.05 * torch.randn_like(op(truth))
        nsteps = rng.randint(_smoke(30, 2), _smoke(80, 3))
        ts = torch.linspace(999, 0, nsteps).long().tolist()
        x = torch.randn(b, 3, res, res, device="cuda")
        for i, t in enumerate(ts):
            tprev = ts[i + 1] if i + 1 < len(ts) else -1
            a_t = abar[t]
            a_p = abar[tprev] if tprev >= 0 else torch.ones((), device="cuda")
            x = x.detach().requires_grad_(True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                eps = net(x, torch.full((b,), t, device="cuda")).float()
            x0 = ((x - (1 - a_t).sqrt() * eps) / a_t.sqrt()).clamp(-1, 1)
            norm = (y - op(x0)).pow(2).sum().sqrt()
            (grad,) = torch.autograd.grad(norm, x)
            with torch.no_grad():
                sigma = 0.5 * ((1 - a_p) / (1 - a_t) * (1 - a_t / a_p)).clamp(min=0).sqrt()
                dirn = (1 - a_p - sigma ** 2).clamp(min=0).sqrt() * eps
                x = a_p.sqrt() * x0.detach() + dirn + sigma * torch.randn_like(x) - grad / (norm.detach() + 1e-6)
            del eps, x0, norm, grad, dirn
        ((x.detach().clamp(-1, 1) + 1) * 127.5).to(torch.uint8).cpu()
        del x, y, truth
    torch.cuda.synchronize()


# ---------------------------------------------------------------- ptychography


@_workload("ptychographic phase retrieval by automatic differentiation (AD-ptychography, Kandel et al. 2019 / Tike-style, written by hand, fp32 with complex64 Fourier terms): 20 reconstruction jobs, each an object of 256-768 px a side (multiples of 64, drawn) and a probe of 64 or 128 px (drawn) scanned on a jittered raster whose step is drawn (so 100-900 positions); the measured diffraction intensities synthesized from a random true object and probe under no_grad in chunks of 128 positions and kept on the device; the object's real and imaginary parts and the probe as parameters, each minibatch of 8-64 positions (drawn per job, log-uniform) cutting its object patches by index gathering (flat indices built from the positions), the exit waves multiplied by the probe, a 2-D FFT, the amplitude loss against the measured square roots, Adam on the object (and on the probe from the third epoch on), shuffled positions per epoch, 12-30 epochs (drawn per job); after each job the object's amplitude and phase copied back")
def ptycho_phase_retrieval(rng):
    njobs = _smoke(20, 2)
    for _ in range(njobs):
        m = rng.randrange(_smoke(256, 48), _smoke(768, 64) + 1, _smoke(64, 16))
        p = rng.choice(_smoke([64, 128], [16]))
        stepsz = max(p // 8, (m - p) // rng.randint(_smoke(10, 2), _smoke(30, 4)))
        grid = list(range(0, m - p + 1, stepsz))
        pos = [(yy + rng.randint(-2, 2) if 2 <= yy <= m - p - 2 else yy, xx) for yy in grid for xx in grid]
        npos = len(pos)
        offs = torch.tensor([yy * m + xx for yy, xx in pos], device="cuda")
        base = (torch.arange(p, device="cuda")[:, None] * m + torch.arange(p, device="cuda")[None]).flatten()
        yy, xx = torch.meshgrid(torch.arange(p, device="cuda"), torch.arange(p, device="cuda"), indexing="ij")
        rr = ((yy - p / 2) ** 2 + (xx - p / 2) ** 2).float()
        probe_true = torch.polar(torch.exp(-rr / (2 * (p / 5) ** 2)), rr / p)
        amp = 0.6 + 0.4 * torch.rand(m, m, device="cuda")
        obj_true = torch.polar(amp, torch.rand(m, m, device="cuda") * 2 - 1).flatten()
        with torch.no_grad():
            meas = []
            for c0 in range(0, npos, _smoke(128, 8)):
                idx = offs[c0:c0 + _smoke(128, 8), None] + base[None]
                ex = obj_true[idx].view(-1, p, p) * probe_true
                meas.append(torch.fft.fft2(ex, norm="ortho").abs())
            meas = torch.cat(meas)  # measured amplitudes (sqrt of intensities)
        obj = torch.nn.Parameter(torch.stack([torch.ones(m * m, device="cuda"), torch.zeros(m * m, device="cuda")]))
        probe = torch.nn.Parameter(torch.view_as_real(probe_true * 0.9).permute(2, 0, 1).contiguous())
        opt_o = torch.optim.Adam([obj], lr=0.05, foreach=True)
        opt_p = torch.optim.Adam([probe], lr=0.01, foreach=True)
        bsz = _loguniform(rng, 8, 64)
        for epoch in range(rng.randint(_smoke(12, 1), _smoke(30, 3))):
            perm = torch.randperm(npos, device="cuda")
            for c0 in range(0, npos, bsz):
                sel = perm[c0:c0 + bsz]
                idx = offs[sel][:, None] + base[None]
                patch = torch.complex(obj[0][idx], obj[1][idx]).view(-1, p, p)
                ex = patch * torch.complex(probe[0], probe[1])
                loss = (torch.fft.fft2(ex, norm="ortho").abs() - meas[sel]).pow(2).mean()
                opt_o.zero_grad(set_to_none=True)
                opt_p.zero_grad(set_to_none=True)
                loss.backward()
                opt_o.step()
                if epoch >= 2:
                    opt_p.step()
                del sel, idx, patch, ex, loss
        with torch.no_grad():
            o = torch.complex(obj[0], obj[1]).view(m, m)
            o.abs().cpu()
            o.angle().cpu()
        del obj, probe, opt_o, opt_p, meas, offs, obj_true, amp, o
    torch.cuda.synchronize()

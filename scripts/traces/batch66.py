"""The sixty-sixth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch65_b.py are): astronomy and astrophysics on the GPU (survey images, light curves, radio and gravitational-wave
data), written in torch alone, first half. Galaxy morphology classification on multi-band survey cutouts (bulge plus
disk Sersic galaxies with spiral arms rendered on the device in five bands, a per-band Gaussian PSF by depthwise
convolution, sky and shot noise, an asinh stretch; rot90, flip, crop and resize augmentation; a ResNet-style CNN
trained on Galaxy-Zoo-like vote fractions with one softmax per decision-tree question), a photometric-redshift
service (a residual MLP mixture-density network trained on synthetic galaxy magnitudes made by integrating redshifted
template spectra through six filters; then catalogue queries of drawn size, magnitudes and errors uploaded from
reused pinned host buffers on a side stream one request ahead, answered with redshift PDFs on a grid, point estimates
and credible intervals), an exoplanet transit search and vetting model (light curves with stellar variability, gaps
and injected transits drawn on the device, detrended by a weighted moving average, searched by a box-least-squares
periodogram over a fixed period grid with phase folding by index_add, folded global and local views at the best
period fed to an AstroNet-style two-column 1-D CNN trained to vet planets), and an unrolled radio-interferometric
imaging network (sky models of point sources and Gaussian blobs, uv coverage from drawn antenna layouts by earth
rotation synthesis gridded with index_add, dirty images by FFT, a proximal-gradient iteration with the measurement
operator in fp32 FFTs and a learned CNN prior per iteration). Same conventions as the earlier batches: nothing
downloaded, data drawn at random on the device (or, for the redshift service, from a few reused pinned host
buffers), `rng` the workload's random.Random for every shape, count and sampled choice, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: iteration
counts, period grids and chunk counts are fixed on the host, masks are multiplied in, no boolean-mask indexing;
losses and metrics are read back only at logging points. photoz_mdn_catalog_serve uses a side stream (uploads waited
on by event, the tensors record_stream'ed); the others are single-stream. The CNNs and the redshift network's trunk
run under bf16 autocast; the FFTs, the periodogram, the mixture densities and the losses are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch66_b.py's header says the same of its half): see record_new66.sh's header
for each workload's op outputs and peak live bytes counted on PyTorch's meta device at its final real sizes
(RECORD_SMOKE unset) with scripts/traces/meta_run.py (smoke_cpu.py's patching with "cuda" mapped to "meta",
readbacks answered with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking a math path, streams,
events and pinned memory no-ops), its op outputs counted there (events about 1.8x that count) and its peak live bytes
tracked: galaxy_morphology_cutout_train 309,639 op outputs, 2.51 GB; photoz_mdn_catalog_serve 326,695, 0.41 GB;
exoplanet_transit_bls_vet_train 308,919, 0.67 GB; radio_interferometry_unrolled_prox_train 311,173, 2.55 GB. The CPU
smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import SideUploads, fftfreq as _fftfreq

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- galaxy morphology on survey cutouts


_GZ_QUESTIONS = [3, 2, 2, 2, 4, 2, 3, 7, 3, 3, 6]  # Galaxy Zoo 2's decision tree: answers per question, 37 in all


def _sersic(r, re, n):
    """A Sersic profile normalised to 1 at the effective radius: exp(-b_n ((r / re)^(1/n) - 1))."""
    bn = 2 * n - 1.0 / 3
    return torch.exp(-bn * ((r / re).clamp_min(1e-4) ** (1 / n) - 1))


def _render_galaxies(b, g, dev="cuda"):
    """b bulge-plus-disk galaxies with logarithmic spiral arms in 5 bands on a g x g grid, PSF-convolved, with sky
    and shot noise, asinh-stretched: images (b, 5, g, g) and their parameters (b, 12)."""
    p = torch.rand(b, 12, device=dev)
    lin = torch.linspace(-1, 1, g, device=dev)
    yy, xx = torch.meshgrid(lin, lin, indexing="ij")
    x0, y0 = (p[:, 0] - 0.5) * 0.1, (p[:, 1] - 0.5) * 0.1
    pa = p[:, 2] * math.pi
    q = 0.25 + 0.75 * p[:, 3]
    dx, dy = xx[None] - x0[:, None, None], yy[None] - y0[:, None, None]
    c, s = torch.cos(pa)[:, None, None], torch.sin(pa)[:, None, None]
    u, v = dx * c + dy * s, (-dx * s + dy * c) / q[:, None, None]
    r = (u * u + v * v + 1e-6).sqrt()
    phi = torch.atan2(v, u)
    re_b, n_b = (0.03 + 0.1 * p[:, 4])[:, None, None], (1.5 + 3 * p[:, 5])[:, None, None]
    re_d = (0.12 + 0.3 * p[:, 6])[:, None, None]
    arms = (1 + 2 * p[:, 7].mul(3).floor())[:, None, None]  # 1, 3, 5 or 7 (a value, not a branch)
    pitch = (0.2 + 0.5 * p[:, 8])[:, None, None]
    spiral = 1 + p[:, 9][:, None, None] * torch.cos(arms * (phi - torch.log(r + 1e-3) / pitch))
    bulge = _sersic(r, re_b, n_b)
    disk = _sersic(r, re_d, torch.ones_like(n_b)) * spiral.clamp_min(0)
    bt = p[:, 10][:, None, None, None]
    colour_b = torch.tensor([0.3, 0.7, 1.0, 1.2, 1.3], device=dev)[None, :, None, None]
    colour_d = torch.tensor([0.8, 1.0, 0.9, 0.8, 0.7], device=dev)[None, :, None, None]
    img = bt * bulge[:, None] * colour_b + (1 - bt) * disk[:, None] * colour_d
    flux = 50 + 950 * p[:, 11][:, None, None, None]
    img = img * flux
    # a Gaussian PSF per band, applied by a depthwise convolution
    k = torch.arange(-4, 5, device=dev, dtype=torch.float32)
    sig = torch.tensor([1.4, 1.2, 1.0, 0.9, 1.1], device=dev)[:, None, None]
    psf = torch.exp(-(k[None, :, None] ** 2 + k[None, None, :] ** 2) / (2 * sig * sig))
    psf = (psf / psf.sum((1, 2), keepdim=True))[:, None]
    img = _F.conv2d(img, psf, padding=4, groups=5)
    sky = 20.0
    img = img + torch.randn_like(img) * (img.clamp_min(0) + sky).sqrt()
    return torch.asinh(img / 10.0), p


@_workload("galaxy morphology classification on multi-band survey cutouts written by hand (random init): bulge-plus-disk Sersic galaxies with logarithmic spiral arms rendered on the device in 5 bands (ugriz-like colours), a per-band Gaussian PSF by depthwise conv2d, sky and shot noise, an asinh stretch; augmentation by rot90 (drawn), flips, random crops and bilinear resizing to 64, 80 or 96 pixels (drawn per batch), batches of 64-192 (drawn); a ResNet-style CNN (stem of 32, 4 stages of 64-384 channels, 2 basic blocks each, BatchNorm) trained on Galaxy-Zoo-like vote fractions (37 answers over 11 questions, a softmax per question, soft cross-entropy), channels_last, bf16 autocast, SGD with Nesterov momentum and a one-cycle schedule, 470 steps; every 70 steps a validation pass of 256 galaxies with test-time flips, the per-question RMSE read back")
def galaxy_morphology_cutout_train(rng):
    widths = _smoke([64, 128, 256, 384], [8, 8, 16, 16])
    stem = _smoke(32, 8)

    class Block(_nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.c1 = _nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.b1 = _nn.BatchNorm2d(cout)
            self.c2 = _nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.b2 = _nn.BatchNorm2d(cout)
            self.skip = _nn.Sequential(_nn.Conv2d(cin, cout, 1, stride, bias=False), _nn.BatchNorm2d(cout)) \
                if (stride != 1 or cin != cout) else _nn.Identity()

        def forward(self, x):
            h = _F.relu(self.b1(self.c1(x)))
            return _F.relu(self.b2(self.c2(h)) + self.skip(x))

    layers = [_nn.Conv2d(5, stem, 3, 1, 1, bias=False), _nn.BatchNorm2d(stem), _nn.ReLU()]
    cin = stem
    for w in widths:
        layers += [Block(cin, w, 2), Block(w, w, 1)]
        cin = w
    layers += [_nn.AdaptiveAvgPool2d(1), _nn.Flatten(), _nn.Dropout(0.2), _nn.Linear(cin, sum(_GZ_QUESTIONS))]
    model = _nn.Sequential(*layers).cuda().to(memory_format=torch.channels_last)
    steps = _smoke(470, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=steps)
    proj = torch.randn(12, sum(_GZ_QUESTIONS), device="cuda") * 2.0  # the "true" votes as a function of the physics
    bounds = [0]
    for n in _GZ_QUESTIONS:
        bounds.append(bounds[-1] + n)

    def votes(p):
        logits = (p - 0.5) @ proj
        return torch.cat([logits[:, a:b].softmax(-1) for a, b in zip(bounds[:-1], bounds[1:])], -1)

    def per_question_ce(out, target):
        return sum(-(target[:, a:b] * out[:, a:b].float().log_softmax(-1)).sum(-1).mean()
                   for a, b in zip(bounds[:-1], bounds[1:]))

    render = _smoke(112, 16)
    for step in range(steps):
        model.train()
        b = rng.choice(_smoke([64, 96, 128, 160, 192], [2, 3]))
        res = rng.choice(_smoke([64, 80, 96], [12, 16]))
        with torch.no_grad():
            img, p = _render_galaxies(b, render)
            img = torch.rot90(img, rng.randint(0, 3), (2, 3))
            if rng.random() < 0.5:
                img = img.flip(3)
            crop = rng.randint(render * 3 // 4, render)
            oy, ox = rng.randint(0, render - crop), rng.randint(0, render - crop)
            img = _F.interpolate(img[:, :, oy:oy + crop, ox:ox + crop], size=(res, res), mode="bilinear",
                                 align_corners=False)
            img = img * (1 + 0.1 * torch.randn(b, 1, 1, 1, device="cuda"))
            x = img.contiguous(memory_format=torch.channels_last)
            y = votes(p)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(x)
        loss = per_question_ce(out, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        del img, p, x, y, out
        if step % 10 == 0:
            float(loss)
        if (step + 1) % _smoke(70, 3) == 0:
            model.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                nval = _smoke(256, 4)
                img, p = _render_galaxies(nval, render)
                x = _F.interpolate(img, size=(96, 96) if render > 96 else (render, render), mode="bilinear",
                                   align_corners=False).contiguous(memory_format=torch.channels_last)
                out = (model(x).float() + model(x.flip(3)).float()) / 2
                y = votes(p)
                pred = torch.cat([out[:, a:c].softmax(-1) for a, c in zip(bounds[:-1], bounds[1:])], -1)
                rmse = torch.stack([(pred[:, a:c] - y[:, a:c]).pow(2).mean().sqrt()
                                    for a, c in zip(bounds[:-1], bounds[1:])])
                rmse.tolist()
            del img, p, x, out, y, pred, rmse


# ---------------------------------------------------------------- photometric redshifts, a catalogue service


_BANDS = [3600.0, 4800.0, 6200.0, 7500.0, 8700.0, 9700.0]  # ugrizy-like filter centres (Angstrom)


def _synthetic_mags(z, kind, depth, dev="cuda"):
    """Magnitudes and errors of galaxies at redshifts z (N,) with template mixtures kind (N, 4): each template a
    power-law continuum with a 4000 Angstrom break and two emission lines, redshifted, integrated through 6 Gaussian
    filters on a 256-point wavelength grid: (N, 6) magnitudes and (N, 6) errors (depth the 5-sigma limits)."""
    lam = torch.linspace(3000.0, 11000.0, 256, device=dev)
    filt = torch.exp(-0.5 * ((lam[None] - torch.tensor(_BANDS, device=dev)[:, None]) / 450.0) ** 2)  # (6, 256)
    rest = lam[None] / (1 + z[:, None])  # (N, 256)
    slopes = torch.tensor([-2.0, -1.0, 0.0, 1.0], device=dev)
    breaks = torch.tensor([0.9, 0.6, 0.35, 0.15], device=dev)
    lines = torch.tensor([0.0, 0.3, 1.0, 2.0], device=dev)
    cont = (rest[:, None] / 5000.0) ** slopes[None, :, None]  # (N, 4, 256)
    brk = 1 - breaks[None, :, None] * torch.sigmoid(-(rest[:, None] - 4000.0) / 60.0)
    em = lines[None, :, None] * (torch.exp(-0.5 * ((rest[:, None] - 3727.0) / 15.0) ** 2) +
                                 torch.exp(-0.5 * ((rest[:, None] - 6563.0) / 15.0) ** 2))
    sed = ((cont * brk + em) * kind[..., None]).sum(1)  # (N, 256)
    flux = sed @ filt.t() / filt.sum(1)  # (N, 6)
    dist = 5 * torch.log10(z * 4300.0 * (1 + z) + 1e-3)
    mag = -2.5 * torch.log10(flux.clamp_min(1e-8)) + dist[:, None] + 18.0
    err = 0.2 * 10 ** (0.4 * (mag - depth))
    return mag, err.clamp(0.005, 2.0)


class _PhotoZNet(_nn.Module):
    """A residual MLP over magnitudes, errors and colours to a K-component Gaussian mixture in redshift."""

    def __init__(self, width, blocks, k):
        super().__init__()
        self.k = k
        self.inp = _nn.Linear(17, width)
        self.blocks = _nn.ModuleList(_nn.Sequential(_nn.LayerNorm(width), _nn.Linear(width, width), _nn.GELU(),
                                                    _nn.Linear(width, width)) for _ in range(blocks))
        self.out = _nn.Linear(width, 3 * k)

    def forward(self, mag, err):
        col = mag[:, :-1] - mag[:, 1:]
        x = torch.cat([(mag - 24.0) / 2.0, torch.log(err), col], -1)
        h = self.inp(x)
        for blk in self.blocks:
            h = h + blk(h)
        w, mu, ls = self.out(h).float().split(self.k, -1)
        return w.log_softmax(-1), _F.softplus(mu), ls.clamp(-6, 2)


def _mixture_logpdf(z, logw, mu, ls):
    """log p(z) of a Gaussian mixture: z (N, G) at G grid points or (N, 1), components (N, K)."""
    zz = z[:, :, None]
    comp = -0.5 * ((zz - mu[:, None]) / ls.exp()[:, None]) ** 2 - ls[:, None] - 0.5 * math.log(2 * math.pi)
    return torch.logsumexp(logw[:, None] + comp, -1)


@_workload("photometric-redshift catalogue service written by hand (random init): a residual MLP mixture-density network (6 magnitudes, their errors and 5 colours in; width 512, 5 residual blocks, LayerNorm, GELU; an 8-component Gaussian mixture in redshift out) trained on synthetic galaxies (redshifts 0-3, 4-template SED mixtures of power-law continua with a 4000 Angstrom break and emission lines, integrated through 6 Gaussian filters on a 256-point wavelength grid, drawn survey depths and noise) by mixture NLL, trunk under bf16 autocast, mixture in fp32, AdamW with cosine decay, 200 steps of 4,096-8,192 (drawn); then 2,200-2,400 catalogue requests (drawn) of 256-65,536 objects (log-uniform) whose magnitudes and errors are uploaded as fp32 from 2 reused pinned host buffers on a side stream one request ahead (waited on by event, record_stream'ed), answered in chunks of 16,384 with redshift PDFs on a 300-point grid, mode, mean and 68% intervals by cumsum and searchsorted, and an outlier flag from the PDF width; each request's summary read back")
def photoz_mdn_catalog_serve(rng):
    width, k = _smoke(512, 16), 8
    model = _PhotoZNet(width, _smoke(5, 1), k).cuda()
    steps = _smoke(200, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)

    def draw_galaxies(n):
        # a Gamma(2, 2.5) redshift distribution as the sum of two exponentials, template mixtures by a softmax
        z = (-torch.log(torch.rand(n, 2, device="cuda").clamp_min(1e-7)).sum(-1) / 2.5).clamp(0.01, 3.0)
        kind = (1.5 * torch.randn(n, 4, device="cuda")).softmax(-1)
        depth = 24.5 + torch.rand(n, 1, device="cuda") * 2
        mag, err = _synthetic_mags(z, kind, depth)
        mag = mag + err * torch.randn_like(mag)
        return z, mag, err

    for step in range(steps):
        model.train()
        n = rng.choice(_smoke([4096, 6144, 8192], [32, 48]))
        z, mag, err = draw_galaxies(n)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logw, mu, ls = model(mag, err)
        loss = -_mixture_logpdf(z[:, None], logw, mu, ls).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        sched.step()
        del z, mag, err, logw, mu, ls
        if step % 20 == 0:
            float(loss)
    model.eval().requires_grad_(False)

    nmax = _smoke(65536, 96)
    host = []
    for _ in range(2):
        h = torch.empty(nmax * 12)
        h[: nmax * 6].uniform_(20.0, 27.0)  # magnitudes
        h[nmax * 6:].uniform_(0.01, 0.5)  # errors
        host.append(h.pin_memory())
    up = SideUploads(host)
    grid = torch.linspace(0.0, 3.0, _smoke(300, 32), device="cuda")
    dz = grid[1] - grid[0]
    chunk = _smoke(16384, 32)

    def fetch(i, n):
        return up.upload(i, slice(0, n * 6), slice(nmax * 6, nmax * 6 + n * 6))

    nreq = rng.randint(_smoke(2200, 3), _smoke(2400, 5))
    sizes = [_loguniform(rng, _smoke(256, 8), nmax) for _ in range(nreq)]
    nxt = fetch(0, sizes[0])
    with torch.no_grad():
        for i in range(nreq):
            n = sizes[i]
            m, e, ev = nxt
            if i + 1 < nreq:
                nxt = fetch(i + 1, sizes[i + 1])
            cur = torch.cuda.current_stream()
            cur.wait_event(ev)
            m.record_stream(cur)
            e.record_stream(cur)
            mag, err = m.view(n, 6), e.view(n, 6)
            stats = []
            for a in range(0, n, chunk):
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logw, mu, ls = model(mag[a:a + chunk], err[a:a + chunk])
                pdf = _mixture_logpdf(grid[None].expand(logw.shape[0], -1), logw, mu, ls).exp()
                pdf = pdf / (pdf.sum(-1, keepdim=True) * dz)
                cdf = pdf.cumsum(-1) * dz
                lohi = torch.searchsorted(cdf.contiguous(), torch.tensor([0.16, 0.84], device="cuda")
                                          .expand(cdf.shape[0], 2).contiguous()).clamp_max(grid.numel() - 1)
                zlo, zhi = grid[lohi[:, 0]], grid[lohi[:, 1]]
                zmode = grid[pdf.argmax(-1)]
                zmean = (pdf * grid).sum(-1) * dz
                outlier = ((zhi - zlo) > 0.3 * (1 + zmode)).float()
                stats.append(torch.stack([zmode.mean(), zmean.mean(), (zhi - zlo).mean(), outlier.mean()]))
                del logw, mu, ls, pdf, cdf, lohi, zlo, zhi, zmode, zmean, outlier
            torch.stack(stats).mean(0).tolist()
            del m, e, ev, mag, err, stats
    model.requires_grad_(True)


# ---------------------------------------------------------------- exoplanet transit search and vetting


def _pool_len(n, k, s):
    return (n - k) // s + 1


class _AstroNet(_nn.Module):
    """AstroNet's two columns of 1-D convolutions over the global (201-bin) and local (61-bin) folded views, then
    fully connected layers to a planet logit."""

    def __init__(self, gbins, lbins, fc, scale=1):
        super().__init__()

        def column(chans, pool_k, n):
            mods, cin = [], 1
            for c in chans:
                c = c // scale
                mods += [_nn.Conv1d(cin, c, 5, padding=2), _nn.ReLU(), _nn.Conv1d(c, c, 5, padding=2), _nn.ReLU(),
                         _nn.MaxPool1d(pool_k, 2)]
                cin = c
                n = _pool_len(n, pool_k, 2)
            return _nn.Sequential(*mods), cin * n

        self.glob, ng = column([16, 32, 64, 128, 256], 5, gbins)
        self.loc, nl = column([16, 32], 7, lbins)
        self.fc = _nn.Sequential(_nn.Linear(ng + nl, fc), _nn.ReLU(), _nn.Linear(fc, fc), _nn.ReLU(),
                                 _nn.Linear(fc, fc), _nn.ReLU(), _nn.Linear(fc, 1))

    def forward(self, g, l):
        return self.fc(torch.cat([self.glob(g[:, None]).flatten(1), self.loc(l[:, None]).flatten(1)], -1))[:, 0]


def _light_curves(b, n, dev="cuda"):
    """b light curves of n cadences over 27 days: stellar variability (3 sinusoids and a smoothed random walk),
    transits of drawn period, epoch, duration and depth for about half (label 1), white noise, a mid-sector gap and
    random dropped cadences (weights 0): time (n,), flux (b, n), weights (b, n), labels (b,)."""
    t = torch.arange(n, device=dev, dtype=torch.float32) * (27.0 / n)
    per = 0.8 + 11.0 * torch.rand(b, device=dev)
    t0 = torch.rand(b, device=dev) * per
    dur = 0.04 + 0.25 * torch.rand(b, device=dev)
    label = (torch.rand(b, device=dev) < 0.5).float()
    depth = (2e-4 + 5e-3 * torch.rand(b, device=dev) ** 2) * label
    ph = torch.remainder(t[None] - t0[:, None] + 0.5 * per[:, None], per[:, None]) - 0.5 * per[:, None]
    ingress = 0.15 * dur[:, None]
    box = ((0.5 * dur[:, None] - ph.abs()) / ingress).clamp(0, 1)
    vp = 0.4 + 14 * torch.rand(b, 3, device=dev)
    va = 1e-3 * torch.rand(b, 3, device=dev) * 10 ** (torch.rand(b, 3, device=dev))
    vph = 2 * math.pi * torch.rand(b, 3, device=dev)
    var = (va[..., None] * torch.sin(2 * math.pi * t[None, None] / vp[..., None] + vph[..., None])).sum(1)
    walk = torch.cumsum(torch.randn(b, 1, n, device=dev), -1) * 2e-5
    walk = _F.avg_pool1d(walk, 31, 1, 15, count_include_pad=False)[:, 0]
    noise = (1e-4 + 1e-3 * torch.rand(b, 1, device=dev)) * torch.randn(b, n, device=dev)
    flux = (1 + var + walk) * (1 - depth[:, None] * box) + noise
    gap = 1 - ((t > 13.2) & (t < 14.2)).float()
    w = (torch.rand(b, n, device=dev) > 0.02).float() * gap[None]
    return t, flux * w, w, label


def _bls(t, resid, w, periods, nbins, durations):
    """Box-least-squares power of (b, n) residuals at the given periods (P,): each light curve folded at every period
    and binned by index_add, a box of each duration (in bins) slid around the folded curve by a circular average
    pool, signal-to-noise of the deepest box: power (b, P), and the best box's phase and duration index."""
    b, n = resid.shape
    p = periods.numel()
    phase = torch.remainder(t[None] / periods[:, None], 1.0)  # (P, n)
    bins = (phase * nbins).long().clamp_max(nbins - 1)
    idx = (torch.arange(b * p, device=t.device).view(b, p, 1) * nbins + bins[None]).reshape(-1)
    s = torch.zeros(b * p * nbins, device=t.device).index_add_(0, idx, resid[:, None].expand(b, p, n).reshape(-1))
    c = torch.zeros(b * p * nbins, device=t.device).index_add_(0, idx, w[:, None].expand(b, p, n).reshape(-1))
    s, c = s.view(b * p, 1, nbins), c.view(b * p, 1, nbins)
    sigma = (resid.pow(2).sum(-1) / w.sum(-1).clamp_min(1)).sqrt()  # (b,)
    snrs = []
    for d in durations:
        sp = _F.pad(s, (d // 2, d - 1 - d // 2), mode="circular")
        cp = _F.pad(c, (d // 2, d - 1 - d // 2), mode="circular")
        ss, cc = _F.avg_pool1d(sp, d, 1) * d, _F.avg_pool1d(cp, d, 1) * d
        depth = -ss / cc.clamp_min(1)
        snrs.append((depth * cc.clamp_min(0).sqrt()).view(b, p, nbins) / sigma[:, None, None])
    snr = torch.stack(snrs, 2)  # (b, P, D, nbins)
    best = snr.flatten(2).max(-1)
    return best.values, best.indices


@_workload("exoplanet transit search and vetting written by hand (random init): light curves of 8,192-16,384 cadences over a 27-day sector (drawn per batch), batches of 24-48 (drawn), stellar variability, a smoothed random walk, white noise, a downlink gap and dropped cadences, box-shaped transits with ingress of drawn period (0.8-12 d), epoch, duration and depth injected into about half; detrending by a gap-aware moving average (avg_pool1d); a box-least-squares periodogram over 192 log-spaced trial periods in chunks of 32 (phase folding into 400 bins by index_add, 4 box durations by circular average pools); the best period's global (201-bin) and local (61-bin) views folded by index_add and fed to an AstroNet-style two-column 1-D CNN with 4 fully connected layers, trained by BCE under bf16 autocast, Adam, 380 steps; every 40 steps an evaluation search of 96 light curves, precision, recall and period recovery read back")
def exoplanet_transit_bls_vet_train(rng):
    gbins, lbins, nbins = 201, 61, _smoke(400, 64)
    model = _AstroNet(gbins, lbins, _smoke(512, 32), scale=_smoke(1, 4)).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    periods = torch.exp(torch.linspace(math.log(0.8), math.log(12.0), _smoke(192, 8), device="cuda"))
    pchunk = _smoke(32, 4)
    durations = [2, 4, 8, 16]

    def search_and_fold(b, n):
        t, flux, w, label = _light_curves(b, n)
        k = (int(0.75 / (27.0 / n)) // 2) * 2 + 1
        trend = _F.avg_pool1d(flux[:, None], k, 1, k // 2)[:, 0] / \
            _F.avg_pool1d(w[:, None], k, 1, k // 2)[:, 0].clamp_min(1e-3)
        resid = (flux / trend.clamp_min(1e-3) - 1) * w
        powers, where = [], []
        for a in range(0, periods.numel(), pchunk):
            pw, ix = _bls(t, resid, w, periods[a:a + pchunk], nbins, durations)
            powers.append(pw)
            where.append(ix)
        power, where = torch.cat(powers, 1), torch.cat(where, 1)
        best = power.argmax(-1)  # (b,)
        pbest = periods[best]
        flat = where.gather(1, best[:, None])[:, 0]
        dbin = torch.tensor(durations, device="cuda", dtype=torch.float32)[flat // nbins]
        t0 = (flat % nbins).float() / nbins * pbest
        dur = dbin / nbins * pbest
        ph = torch.remainder(t[None] - t0[:, None] + 0.5 * pbest[:, None], pbest[:, None]) - 0.5 * pbest[:, None]
        rows = torch.arange(b, device="cuda")[:, None]
        gi = (rows * gbins + ((ph / pbest[:, None] + 0.5) * gbins).long().clamp(0, gbins - 1)).reshape(-1)
        gsum = torch.zeros(b * gbins, device="cuda").index_add_(0, gi, resid.reshape(-1))
        gcnt = torch.zeros(b * gbins, device="cuda").index_add_(0, gi, w.reshape(-1))
        x = ph / (dur[:, None] + 1e-3)
        inwin = (x.abs() < 2).float() * w
        li = (rows * lbins + ((x + 2) / 4 * lbins).long().clamp(0, lbins - 1)).reshape(-1)
        lsum = torch.zeros(b * lbins, device="cuda").index_add_(0, li, (resid * inwin).reshape(-1))
        lcnt = torch.zeros(b * lbins, device="cuda").index_add_(0, li, inwin.reshape(-1))
        gview = (gsum / gcnt.clamp_min(1)).view(b, gbins)
        lview = (lsum / lcnt.clamp_min(1)).view(b, lbins)
        # AstroNet's normalisation: median 0, the deepest point at -1
        gview = gview - gview.median(-1, keepdim=True).values
        lview = lview - lview.median(-1, keepdim=True).values
        gview = gview / gview.amin(-1, keepdim=True).abs().clamp_min(1e-6)
        lview = lview / lview.amin(-1, keepdim=True).abs().clamp_min(1e-6)
        return gview, lview, label, power.amax(-1), pbest

    steps = _smoke(380, 3)
    for step in range(steps):
        model.train()
        b = rng.choice(_smoke([24, 32, 40, 48], [2, 3]))
        n = rng.choice(_smoke([8192, 12288, 16384], [256, 384]))
        with torch.no_grad():
            gview, lview, label, _, _ = search_and_fold(b, n)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logit = model(gview, lview)
        loss = _F.binary_cross_entropy_with_logits(logit.float(), label)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del gview, lview, label, logit
        if step % 10 == 0:
            float(loss)
        if (step + 1) % _smoke(40, 3) == 0:
            model.eval()
            with torch.no_grad():
                gview, lview, label, snr, pbest = search_and_fold(_smoke(96, 4), _smoke(16384, 256))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    prob = torch.sigmoid(model(gview, lview).float())
                hit = (prob > 0.5).float()
                tp = (hit * label).sum()
                torch.stack([tp / hit.sum().clamp_min(1), tp / label.sum().clamp_min(1), snr.mean(),
                             pbest.mean()]).tolist()
            del gview, lview, label, snr, pbest, prob, hit, tp


# ---------------------------------------------------------------- unrolled radio-interferometric imaging


def _sky_models(rng, b, g, dev="cuda"):
    """b radio skies on a g x g grid: a power-law population of point sources (placed by index_put_ with
    accumulate) and 3-8 elliptical Gaussian blobs each: (b, g, g)."""
    npt = rng.randint(8, 40)
    sky = torch.zeros(b * g * g, device=dev)
    iy = torch.randint(g // 8, 7 * g // 8, (b, npt), device=dev)
    ix = torch.randint(g // 8, 7 * g // 8, (b, npt), device=dev)
    flux = (torch.rand(b, npt, device=dev) * 0.98 + 0.02) ** (-1 / 1.5) * 0.05
    flat = (torch.arange(b, device=dev)[:, None] * g * g + iy * g + ix).reshape(-1)
    sky.index_put_((flat,), flux.reshape(-1), accumulate=True)
    sky = sky.view(b, g, g)
    nb = rng.randint(3, 8)
    lin = torch.linspace(-1, 1, g, device=dev)
    yy, xx = torch.meshgrid(lin, lin, indexing="ij")
    c = (torch.rand(b, nb, 2, device=dev) - 0.5) * 1.2
    sa = 0.02 + 0.12 * torch.rand(b, nb, 1, 1, device=dev)
    sb = 0.02 + 0.12 * torch.rand(b, nb, 1, 1, device=dev)
    th = math.pi * torch.rand(b, nb, 1, 1, device=dev)
    dx, dy = xx - c[..., 0, None, None], yy - c[..., 1, None, None]
    u, v = dx * torch.cos(th) + dy * torch.sin(th), -dx * torch.sin(th) + dy * torch.cos(th)
    amp = 0.2 * torch.rand(b, nb, 1, 1, device=dev)
    return sky + (amp * torch.exp(-0.5 * ((u / sa) ** 2 + (v / sb) ** 2))).sum(1)


def _uv_mask(rng, g, dev="cuda"):
    """uv coverage of a drawn antenna layout (24-64 antennas, Gaussian-distributed with a drawn spread), earth
    rotation synthesis over 8-32 hour angles (drawn) at a drawn declination, gridded on the FFT grid by index_add:
    natural weights (g, g), normalised to a unit mean where sampled."""
    na, nh = rng.randint(24, 64), rng.randint(8, 32)
    spread = rng.uniform(0.08, 0.2) * g
    dec = rng.uniform(0.3, 1.4)
    ant = torch.randn(na, 2, device=dev) * spread
    bl = (ant[:, None] - ant[None]).reshape(-1, 2)  # both orientations, zero baselines included
    h = torch.linspace(-math.pi / 3, math.pi / 3, nh, device=dev)
    u = bl[:, :1] * torch.sin(h)[None] + bl[:, 1:] * torch.cos(h)[None]
    v = (-bl[:, :1] * torch.cos(h)[None] + bl[:, 1:] * torch.sin(h)[None]) * math.sin(dec)
    ui = torch.remainder(u.round().long(), g)
    vi = torch.remainder(v.round().long(), g)
    cnt = torch.zeros(g * g, device=dev).index_add_(0, (vi * g + ui).reshape(-1), torch.ones(ui.numel(), device=dev))
    cnt = cnt.view(g, g)
    sampled = cnt.clamp_max(1)
    return cnt / (cnt.sum() / sampled.sum().clamp_min(1)).clamp_min(1e-6), sampled


class _ProxCNN(_nn.Module):
    """One unrolled iteration's learned prior: a small residual CNN of the current image and the dirty image."""

    def __init__(self, c):
        super().__init__()
        self.net = _nn.Sequential(_nn.Conv2d(2, c, 3, padding=1), _nn.GELU(), _nn.Conv2d(c, c, 3, padding=1),
                                  _nn.GELU(), _nn.Conv2d(c, c, 3, padding=1), _nn.GELU(),
                                  _nn.Conv2d(c, 1, 3, padding=1))

    def forward(self, x, dirty):
        return self.net(torch.stack([x, dirty], 1))[:, 0]


@_workload("unrolled radio-interferometric imaging network written by hand (random init): sky models of 8-40 power-law point sources (index_put_ with accumulate) and 3-8 elliptical Gaussian blobs on 128-256 pixel grids (drawn per step) in batches fitting 2^19 pixels; uv coverage of a drawn antenna layout (24-64 antennas) by earth rotation synthesis over 8-32 hour angles at a drawn declination, gridded by index_add to natural weights; visibilities by fft2 with complex thermal noise, the dirty image by ifft2; an 8-iteration unrolled proximal-gradient network (data-consistency gradient steps through the measurement operator in fp32 FFTs with learned step sizes, a separate 4-layer CNN prior of 24 channels per iteration under bf16 autocast), L1 loss against the sky convolved with a restoring beam (an FFT multiply), AdamW with cosine decay, 450 steps; every 60 steps an evaluation on a fresh array at 256 pixels, the dirty-image and reconstruction errors read back")
def radio_interferometry_unrolled_prox_train(rng):
    iters, c = _smoke(8, 2), _smoke(24, 4)
    priors = _nn.ModuleList(_ProxCNN(c) for _ in range(iters)).cuda()
    steps_sz = _nn.Parameter(torch.full((iters,), 0.5, device="cuda"))
    params = list(priors.parameters()) + [steps_sz]
    steps = _smoke(450, 3)
    opt = torch.optim.AdamW(params, lr=5e-4, weight_decay=1e-5)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    budget = _smoke(1 << 19, 2048)

    def beam(g):
        f = _fftfreq(g)
        return torch.exp(-2 * (math.pi * 1.5) ** 2 * (f[:, None] ** 2 + f[None] ** 2))

    def observe(b, g):
        sky = _sky_models(rng, b, g)
        wts, sampled = _uv_mask(rng, g)
        vis = torch.fft.fft2(sky)
        noise = torch.complex(torch.randn_like(sky), torch.randn_like(sky)) * (0.02 * g)
        vis = (vis + noise) * sampled
        dirty = torch.fft.ifft2(vis * wts).real
        target = torch.fft.ifft2(torch.fft.fft2(sky) * beam(g)).real
        return vis, wts, sampled, dirty, target

    def reconstruct(vis, wts, sampled, dirty):
        x = dirty
        for k in range(iters):
            resid = torch.fft.fft2(x) * sampled - vis
            grad = torch.fft.ifft2(resid * wts).real
            x = x - steps_sz[k] * grad
            with torch.autocast("cuda", dtype=torch.bfloat16):
                x = x + priors[k](x, dirty).float()
        return x

    for step in range(steps):
        priors.train()
        g = rng.choice(_smoke([128, 160, 192, 224, 256], [16, 24]))
        b = max(1, budget // (g * g))
        with torch.no_grad():
            vis, wts, sampled, dirty, target = observe(b, g)
        out = reconstruct(vis, wts, sampled, dirty)
        loss = (out - target).abs().mean() + 0.1 * (out - target).pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        del vis, wts, sampled, dirty, target, out
        if step % 10 == 0:
            float(loss)
        if (step + 1) % _smoke(60, 3) == 0:
            priors.eval()
            with torch.no_grad():
                g = _smoke(256, 16)
                vis, wts, sampled, dirty, target = observe(_smoke(4, 1), g)
                out = reconstruct(vis, wts, sampled, dirty)
                torch.stack([(dirty - target).abs().mean(), (out - target).abs().mean(),
                             out.amax()]).tolist()
            del vis, wts, sampled, dirty, target, out

"""The sixty-sixth batch of held-out workloads for record.py, second half (batch66.py has the first): astronomy and
astrophysics on the GPU (survey images, light curves, radio and gravitational-wave data), written in torch alone. A
gravitational-wave detection service (a 1-D CNN detector trained first on whitened two-detector noise with injected
frequency-domain chirps; then requests of drawn segment count and length whose strain arrives in reused pinned host
buffers, uploaded on a side stream one request ahead, windowed, whitened by an analytic detector noise curve and
matched-filtered against a bank of post-Newtonian (TaylorF2) templates by batched complex FFTs, network SNRs from a
coincidence window by max-pooling, the CNN's score alongside), a supernova light-curve classifier (irregularly
sampled multi-band photometry drawn from Bazin models of six transient classes with redshift dilation, padded to the
batch's longest curve with a key-padding mask, continuous-time sinusoidal encodings and band embeddings, a pre-norm
transformer with class and redshift heads), a strong-lens simulation-based inference model (a singular isothermal
ellipsoid with external shear ray-traced onto a Sersic source plus lens light on the device, PSF and noise; a CNN
summary network and a conditional affine-coupling normalizing flow trained by neural posterior estimation; then
posterior sampling of mock observations by inverting the flow), and a suite of cosmological particle-mesh N-body
simulations (Zel'dovich initial conditions from a BBKS power spectrum at drawn cosmologies, cloud-in-cell painting
by index_add, an FFT Poisson solve with CIC deconvolution, forces read back to the particles by index_select,
kick-drift steps in scale factor, power spectra binned by index_add). Same conventions as the earlier batches:
nothing downloaded, data drawn at random on the device (or, for the detection service, from a few reused pinned host
buffers), `rng` the workload's random.Random for every shape, count and sampled choice, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: step counts,
template chunks, coupling layers and sample counts are fixed on the host, masks are multiplied in or passed to
SDPA as boolean key masks, no boolean-mask indexing; losses and metrics are read back only at logging points.
gw_matched_filter_bank_serve uses a side stream (uploads waited on by event, the tensors record_stream'ed); the
others are single-stream. The CNNs and the transformer run under bf16 autocast; the FFTs, the flow, the N-body
arithmetic and the losses are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new66.sh's header (and batch66.py's docstring for how the meta-device
runner counts): gw_matched_filter_bank_serve 288,310 op outputs, 0.87 GB; supernova_lightcurve_transformer_train
309,571, 3.57 GB; strong_lens_npe_flow_train 311,277, 1.50 GB; cosmo_pm_nbody_suite_sim 302,853, 0.44 GB. The CPU
smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, fftfreq as _fftfreq, mlp, rfftfreq as _rfftfreq

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- gravitational-wave matched filtering service


_FS = 2048.0
_MSUN_S = 4.925e-6  # the Sun's mass in seconds (G M / c^3)


def _asd(f):
    """An aLIGO-like amplitude spectral density (an analytic fit, in units where the strain is scaled by 1e21),
    large below 15 Hz."""
    x = f.clamp_min(1.0) / 215.0
    psd = x ** -4.14 - 5 * x ** -2 + 111 * (1 - x ** 2 + 0.5 * x ** 4) / (1 + 0.5 * x ** 2)
    return psd.clamp_min(1e-3).sqrt() * 0.1 + 1e3 * (f < 15).float()


def _taylorf2_bank(m1, m2, f, asd):
    """Whitened, unit-norm frequency-domain TaylorF2 templates (to 1PN in phase, the Newtonian amplitude f^-7/6,
    cut at 20 Hz and at the ISCO frequency): masses (T,) in solar masses, f (F,) -> (T, F) complex64."""
    mt = (m1 + m2)[:, None] * _MSUN_S
    eta = (m1 * m2 / (m1 + m2) ** 2)[:, None]
    fc = f.clamp_min(1.0)[None]
    v = (math.pi * mt * fc) ** (1.0 / 3)
    psi = 3.0 / (128 * eta * v ** 5) * (1 + (3715.0 / 756 + 55.0 / 9 * eta) * v * v) - math.pi / 4
    fisco = 1.0 / (6 ** 1.5 * math.pi * mt)
    band = (fc >= 20).float() * (fc < fisco).float()
    amp = fc ** (-7.0 / 6) * band / asd[None]
    h = torch.polar(amp, -psi)
    return h / (h.abs().pow(2).sum(-1, keepdim=True).sqrt() + 1e-12)


class _GWNet(_nn.Module):
    """A 1-D CNN detector over whitened two-detector strain (after Gabbard et al.): conv, ELU and max-pool stages,
    an adaptive pool, two linear layers."""

    def __init__(self, c):
        super().__init__()
        mods, cin = [], 2
        for cout, k in [(c, 32), (c, 16), (2 * c, 16), (2 * c, 8), (4 * c, 8), (4 * c, 8)]:
            mods += [_nn.Conv1d(cin, cout, k, padding=k // 2), _nn.BatchNorm1d(cout), _nn.ELU()]
            if cout == cin:
                mods.append(_nn.MaxPool1d(4))
            cin = cout
        self.conv = _nn.Sequential(*mods, _nn.AdaptiveAvgPool1d(16))
        self.head = _nn.Sequential(_nn.Flatten(), _nn.Linear(cin * 16, 128), _nn.ELU(), _nn.Dropout(0.3),
                                   _nn.Linear(128, 1))

    def forward(self, x):
        return self.head(self.conv(x))[:, 0]


@_workload("gravitational-wave detection service written by hand (random init): a bank of 256 TaylorF2 templates (component masses 5-60 solar masses, drawn; 1PN phase, Newtonian amplitude, cut at 20 Hz and ISCO) whitened by an analytic aLIGO-like noise curve; a 1-D CNN detector (6 conv stages of 16-64 channels, BatchNorm, ELU, max pools) trained on 4 s and 8 s two-detector windows at 2,048 Hz of whitened Gaussian noise with injected chirps at drawn SNR, arrival time and inter-detector delay (frequency-domain time shifts, irfft), bf16 autocast, AdamW, 180 steps of 64; then 1,300-1,450 requests (drawn) of 1-24 segments (drawn) of 4 s or 8 s of two-detector strain uploaded as fp32 from 2 reused pinned host buffers on a side stream one request ahead (waited on by event, record_stream'ed), Tukey-windowed, whitened by rfft, matched-filtered against the bank in chunks of 32 templates by batched complex ifft, per-detector SNR series max-pooled over a 10 ms coincidence window into a network SNR, the best template and its SNR per segment with the CNN's score read back each request")
def gw_matched_filter_bank_serve(rng):
    ntemp, tchunk = _smoke(256, 8), _smoke(32, 4)
    m1 = torch.tensor([rng.uniform(5, 60) for _ in range(ntemp)], device="cuda")
    m2 = torch.tensor([rng.uniform(5, 60) for _ in range(ntemp)], device="cuda")
    lengths = _smoke([8192, 16384], [512, 1024])
    banks, asds, windows = {}, {}, {}
    for n in lengths:
        f = _rfftfreq(n, 1.0 / _FS)
        asds[n] = _asd(f)
        banks[n] = _taylorf2_bank(m1, m2, f, asds[n])
        # a Tukey window with 0.1 s tapers
        tt = torch.arange(n, device="cuda", dtype=torch.float32)
        ramp = int(0.1 * _FS) if n > 1024 else 8
        windows[n] = (0.5 * (1 - torch.cos(math.pi * (tt / ramp).clamp_max(1)))) * \
            (0.5 * (1 - torch.cos(math.pi * ((n - 1 - tt) / ramp).clamp_max(1))))

    model = _GWNet(_smoke(16, 4)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=1e-4)
    bt = _smoke(64, 4)
    for step in range(_smoke(180, 3)):
        model.train()
        n = lengths[0] if rng.random() < 0.6 else lengths[1]
        f = _rfftfreq(n, 1.0 / _FS)
        nf = f.numel()
        noise = torch.complex(torch.randn(bt, 2, nf, device="cuda"), torch.randn(bt, 2, nf, device="cuda"))
        tid = torch.randint(0, ntemp, (bt,), device="cuda")
        label = (torch.rand(bt, device="cuda") < 0.5).float()
        snr = (6 + 14 * torch.rand(bt, device="cuda")) * label
        tarr = (0.3 + 0.6 * torch.rand(bt, 1, device="cuda")) * (n / _FS)
        delay = torch.cat([torch.zeros(bt, 1, device="cuda"), (torch.rand(bt, 1, device="cuda") - 0.5) * 0.02], 1)
        shift = torch.polar(torch.ones(bt, 2, nf, device="cuda"),
                            -2 * math.pi * f[None, None] * (tarr + delay)[..., None])
        sig = banks[n][tid][:, None] * shift * (snr * math.sqrt(nf))[:, None, None]
        x = torch.fft.irfft(noise + sig, n=n) / math.sqrt(n)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logit = model(x)
        loss = _F.binary_cross_entropy_with_logits(logit.float(), label)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del noise, tid, label, snr, tarr, delay, shift, sig, x, logit
        if step % 20 == 0:
            float(loss)
    model.eval()

    smax = _smoke(24, 2)
    cap = smax * 2 * lengths[-1]
    host = [torch.randn(cap).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    nreq = rng.randint(_smoke(1300, 3), _smoke(1450, 5))
    plan = [(rng.randint(1, smax), rng.choice(lengths)) for _ in range(nreq)]
    coinc = _smoke(21, 3)  # about 10 ms at 2,048 Hz, odd
    nxt = up.upload(0, plan[0][0] * 2 * plan[0][1])
    with torch.no_grad():
        for i in range(nreq):
            s, n = plan[i]
            z, ev = nxt
            if i + 1 < nreq:
                nxt = up.upload(i + 1, plan[i + 1][0] * 2 * plan[i + 1][1])
            cur = torch.cuda.current_stream()
            cur.wait_event(ev)
            z.record_stream(cur)
            x = z.view(s, 2, n) * windows[n]
            xw = torch.fft.rfft(x) / asds[n]
            xw = xw / math.sqrt(n)
            best_snr, best_id = [], []
            for a in range(0, ntemp, tchunk):
                h = banks[n][a:a + tchunk]
                q = torch.fft.ifft(xw[:, :, None] * h.conj()[None, None], n=n)  # (s, 2, T, n) complex SNR
                rho = q.abs() * 2
                rho = _F.max_pool1d(rho.view(-1, 1, n), coinc, 1, coinc // 2).view(s, 2, -1, n)
                net = rho.pow(2).sum(1).sqrt()[..., n // 16: n - n // 16]  # edges lost to the window
                peak = net.amax(-1)  # (s, T)
                v, j = peak.max(-1)
                best_snr.append(v)
                best_id.append(j + a)
                del h, q, rho, net, peak
            snrs = torch.stack(best_snr, 1)
            pick = snrs.argmax(1)
            tmpl = torch.stack(best_id, 1).gather(1, pick[:, None])[:, 0]
            white = torch.fft.irfft(xw, n=n)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                score = torch.sigmoid(model(white).float())
            torch.stack([snrs.amax(1), tmpl.float(), score], 1).tolist()
            del z, ev, x, xw, best_snr, best_id, snrs, pick, tmpl, white, score


# ---------------------------------------------------------------- supernova light-curve classification


# Bazin-model parameters per class (amplitude, rise time, fall time, plateau fraction, peak colour slope):
# Ia, Ibc, II-P, II-L, SLSN, TDE
_SN_CLASSES = [[1.0, 3.0, 25.0, 0.00, -0.3], [0.6, 4.0, 18.0, 0.00, 0.2], [0.3, 6.0, 90.0, 0.30, 0.5],
               [0.4, 5.0, 45.0, 0.05, 0.4], [3.0, 25.0, 80.0, 0.00, -0.6], [1.5, 20.0, 120.0, 0.10, -0.8]]


def _sn_batch(rng, b, tmax, dev="cuda"):
    """b light curves of drawn lengths (16 to tmax observations) in 6 bands over a 250-day season: times sorted,
    bands drawn, fluxes from the class's Bazin model with per-object scatter, time dilation by (1 + z), distance
    dimming and noise; padded to the longest: features (b, T, 4), times (b, T), bands (b, T), key mask (b, T) bool,
    class (b,), redshift (b,)."""
    lens = [rng.randint(16, tmax) for _ in range(b)]
    t = -(-max(lens) // 8) * 8
    mask = torch.arange(t, device=dev)[None] < torch.tensor(lens, device=dev)[:, None]
    times = torch.sort(torch.rand(b, t, device=dev) * 250, -1).values
    bands = torch.randint(0, 6, (b, t), device=dev)
    cls = torch.randint(0, len(_SN_CLASSES), (b,), device=dev)
    z = 0.05 + 0.95 * torch.rand(b, device=dev)
    par = torch.tensor(_SN_CLASSES, device=dev)[cls] * (1 + 0.15 * torch.randn(b, 5, device=dev))
    amp, trise, tfall, plat, slope = [par[:, i, None] for i in range(5)]
    t0 = 30 + 180 * torch.rand(b, 1, device=dev)
    dt = (times - t0) / (1 + z[:, None])
    lam = (bands.float() - 2.5) / 2.5
    colour = torch.exp(slope * lam)
    bazin = amp * colour * torch.exp(-dt / tfall.clamp_min(1)) / (1 + torch.exp(-dt / trise.clamp_min(0.5)))
    bazin = bazin + plat * amp * colour * torch.sigmoid(dt / 5) * torch.sigmoid((100 - dt) / 5)
    flux = bazin / (z[:, None] * 10) ** 2
    err = (0.01 + 0.05 * torch.rand(b, t, device=dev)) * (1 + 0.5 * (bands == 0).float())
    obs = flux + err * torch.randn_like(flux)
    scale = (obs.abs() * mask).amax(1, keepdim=True).clamp_min(1e-3)
    feats = torch.stack([obs / scale, err / scale, torch.log(err), torch.asinh(obs / err)], -1) * mask[..., None]
    return feats, times * mask, bands, mask, cls, z


class _SNTransformer(_nn.Module):
    def __init__(self, d, heads, layers, classes):
        super().__init__()
        self.inp = _nn.Linear(4, d)
        self.band = _nn.Embedding(6, d)
        self.freqs = _nn.Parameter(torch.exp(torch.linspace(math.log(1 / 200.0), math.log(2.0), d // 2)))
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.cls = mlp(d, d, classes, layers=2, act=_nn.GELU)
        self.red = mlp(d, d // 2, 1, layers=2, act=_nn.GELU)

    def forward(self, feats, times, bands, mask):
        ang = times[..., None] * self.freqs
        h = self.inp(feats) + self.band(bands) + torch.cat([ang.sin(), ang.cos()], -1)
        keymask = mask[:, None, None, :]
        for blk in self.blocks:
            h = blk(h, keymask)
        h = self.norm(h)
        m = mask[..., None].to(h.dtype)
        pooled = (h * m).sum(1) / m.sum(1).clamp_min(1)
        return self.cls(pooled), self.red(pooled)[:, 0]


@_workload("supernova light-curve classification written by hand (random init): irregularly sampled 6-band photometry of 16-192 observations a curve (drawn per object) over a 250-day season drawn from Bazin models of 6 transient classes (Ia, Ibc, II-P, II-L, SLSN, TDE) with per-object scatter, redshift time dilation and dimming, band-dependent noise, padded to each batch's longest curve with a boolean key-padding mask, batches of 64-160 (drawn) within a 24,576-token budget; a pre-norm transformer (width 256, 8 heads, 6 layers, continuous-time sinusoidal encodings with learned frequencies, band embeddings, masked mean pooling) with class and redshift heads, bf16 autocast, AdamW with warmup and cosine decay (LambdaLR), class-weighted cross-entropy plus a smooth-L1 redshift loss, 370 steps; every 60 steps an evaluation of 384 curves, the confusion matrix (by index_add) and the redshift scatter read back")
def supernova_lightcurve_transformer_train(rng):
    d, heads, layers, classes = _smoke(256, 32), _smoke(8, 2), _smoke(6, 1), len(_SN_CLASSES)
    model = _SNTransformer(d, heads, layers, classes).cuda()
    steps = _smoke(370, 3)
    warm = max(1, steps // 20)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.05)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * 0.5 * (1 + math.cos(math.pi * min(1.0, s / steps))))
    cw = torch.tensor([1.0, 1.5, 1.0, 1.5, 3.0, 3.0], device="cuda")
    tmax, budget = _smoke(192, 24), _smoke(24576, 96)
    for step in range(steps):
        model.train()
        b = min(rng.choice(_smoke([64, 96, 128, 160], [2, 3])), budget // tmax)
        feats, times, bands, mask, cls, z = _sn_batch(rng, b, tmax)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits, zhat = model(feats, times, bands, mask)
        loss = _F.cross_entropy(logits.float(), cls, weight=cw) + 0.5 * _F.smooth_l1_loss(zhat.float(), z, beta=0.1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        del feats, times, bands, mask, cls, z, logits, zhat
        if step % 10 == 0:
            float(loss)
        if (step + 1) % _smoke(60, 3) == 0:
            model.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                conf = torch.zeros(classes * classes, device="cuda")
                dz = []
                for _ in range(_smoke(3, 1)):
                    feats, times, bands, mask, cls, z = _sn_batch(rng, _smoke(128, 2), tmax)
                    logits, zhat = model(feats, times, bands, mask)
                    conf.index_add_(0, cls * classes + logits.float().argmax(-1), torch.ones_like(z))
                    dz.append((zhat.float() - z) / (1 + z))
                    del feats, times, bands, mask, cls, z, logits, zhat
                torch.cat([conf, torch.cat(dz).abs().median()[None]]).tolist()
            del conf, dz


# ---------------------------------------------------------------- strong-lens simulation-based inference


_LENS_LO = [0.5, -0.3, -0.3, -0.2, -0.2, -0.1, -0.1]  # theta_E, e1, e2, x0, y0, gamma1, gamma2
_LENS_HI = [2.0, 0.3, 0.3, 0.2, 0.2, 0.1, 0.1]


def _lens_images(theta, g, dev="cuda"):
    """Lensed images (b, 1, g, g) of a 6 arcsec field: an SIE (Kormann et al. deflection) with external shear
    ray-traced onto an elliptical Sersic source of drawn position, size and index, plus a de Vaucouleurs-like lens
    light, a Gaussian PSF and noise. theta (b, 7) in physical units."""
    b = theta.shape[0]
    te, e1, e2, x0, y0, g1, g2 = [theta[:, i, None, None] for i in range(7)]
    lin = torch.linspace(-3, 3, g, device=dev)
    yy, xx = torch.meshgrid(lin, lin, indexing="ij")
    e = (e1 * e1 + e2 * e2).sqrt().clamp(1e-4, 0.9)
    q = (1 - e) / (1 + e)
    phi = 0.5 * torch.atan2(e2, e1)
    dx, dy = xx - x0, yy - y0
    c, s = torch.cos(phi), torch.sin(phi)
    u, v = dx * c + dy * s, -dx * s + dy * c
    fq = (1 - q * q).clamp_min(1e-4).sqrt()
    psi = (q * q * (u * u + 1e-4) + v * v).sqrt()
    au = te * q.sqrt() / fq * torch.atan(fq * u / (psi + 1e-4))
    av = te * q.sqrt() / fq * torch.atanh((fq * v / (psi + q * q * 1e-2)).clamp(-0.999, 0.999))
    ax = au * c - av * s + g1 * dx + g2 * dy
    ay = au * s + av * c + g2 * dx - g1 * dy
    bx, by = xx - ax, yy - ay
    src = [v[:, None, None] for v in torch.rand(b, 6, device=dev).unbind(1)]
    sx, sy = (src[0] - 0.5) * 0.6, (src[1] - 0.5) * 0.6
    sre, sn = 0.1 + 0.3 * src[2], 0.7 + 2.3 * src[3]
    sq, sphi = 0.4 + 0.6 * src[4], math.pi * src[5]
    ux = (bx - sx) * torch.cos(sphi) + (by - sy) * torch.sin(sphi)
    uy = (-(bx - sx) * torch.sin(sphi) + (by - sy) * torch.cos(sphi)) / sq
    rs = (ux * ux + uy * uy + 1e-8).sqrt()
    img = 5 * torch.exp(-(2 * sn - 1 / 3) * ((rs / sre) ** (1 / sn) - 1))
    rl = (dx * dx + dy * dy + 1e-6).sqrt()
    img = img + 2 * torch.exp(-7.67 * ((rl / 1.0) ** 0.25 - 1))
    k = torch.arange(-3, 4, device=dev, dtype=torch.float32)
    psf = torch.exp(-(k[:, None] ** 2 + k[None] ** 2) / (2 * 1.2 ** 2))
    img = _F.conv2d(img[:, None], (psf / psf.sum())[None, None], padding=3)
    return img + (0.1 + 0.05 * img.clamp_min(0).sqrt()) * torch.randn_like(img)


class _Coupling(_nn.Module):
    """A conditional affine coupling layer over a fixed split of the parameter vector."""

    def __init__(self, dim, split, ctx, hidden):
        super().__init__()
        self.split = split
        self.net = mlp(split + ctx, hidden, 2 * (dim - split), layers=3, act=_nn.SiLU)

    def _st(self, a, ctx):
        s, t = self.net(torch.cat([a, ctx], -1)).chunk(2, -1)
        return 2.0 * torch.tanh(s / 2.0), t

    def forward(self, x, ctx):
        a, bb = x[:, :self.split], x[:, self.split:]
        s, t = self._st(a, ctx)
        return torch.cat([a, bb * s.exp() + t], -1), s.sum(-1)

    def inverse(self, y, ctx):
        a, bb = y[:, :self.split], y[:, self.split:]
        s, t = self._st(a, ctx)
        return torch.cat([a, (bb - t) * (-s).exp()], -1)


class _LensNPE(_nn.Module):
    def __init__(self, c, ctx, couplings, hidden, perms):
        super().__init__()

        def stage(i, o):
            return [_nn.Conv2d(i, o, 3, 2, 1), _nn.GroupNorm(8, o), _nn.SiLU(), _nn.Conv2d(o, o, 3, 1, 1),
                    _nn.GroupNorm(8, o), _nn.SiLU()]

        self.cnn = _nn.Sequential(_nn.Conv2d(1, c, 3, 1, 1), _nn.SiLU(), *stage(c, c), *stage(c, 2 * c),
                                  *stage(2 * c, 4 * c), *stage(4 * c, 8 * c), _nn.AdaptiveAvgPool2d(1), _nn.Flatten(),
                                  _nn.Linear(8 * c, ctx))
        self.flows = _nn.ModuleList(_Coupling(7, 3 if i % 2 else 4, ctx, hidden) for i in range(couplings))
        self.register_buffer("perms", perms)  # (couplings, 7)
        self.register_buffer("inv", perms.argsort(-1))

    def embed(self, img):
        return self.cnn(img).float()

    def log_prob(self, theta, ctx):
        x, logdet = theta, 0.0
        for i, f in enumerate(self.flows):
            x = x[:, self.perms[i]]
            x, ld = f(x, ctx)
            logdet = logdet + ld
        return -0.5 * (x * x).sum(-1) - 3.5 * math.log(2 * math.pi) + logdet

    def sample(self, ctx):
        x = torch.randn(ctx.shape[0], 7, device=ctx.device)
        for i in reversed(range(len(self.flows))):
            x = self.flows[i].inverse(x, ctx)
            x = x[:, self.inv[i]]
        return x


@_workload("strong-lens simulation-based inference written by hand (random init): a simulator on the device (a singular isothermal ellipsoid with the Kormann et al. deflection and external shear ray-traced onto an elliptical Sersic source of drawn position, size and index, a de Vaucouleurs-like lens light, a Gaussian PSF by conv2d, Poisson-like and read noise) on 64, 80 or 96 pixel images (drawn per batch) of 7 lens parameters drawn from a box prior, batches of 96-256 (drawn); neural posterior estimation with a CNN summary network (4 stride-2 stages of 32-256 channels, GroupNorm, SiLU, bf16 autocast) and a conditional normalizing flow of 10 affine coupling layers (fixed random permutations, 3-layer SiLU conditioners of width 256, fp32), AdamW with cosine decay, 310 steps, a held-out NLL every 50; then posterior sampling of 8-12 mock observations (drawn) by inverting the flow, 4,096-16,384 samples each (drawn), posterior means, widths and the true parameters' ranks read back per observation")
def strong_lens_npe_flow_train(rng):
    c, ctx, couplings, hidden = _smoke(32, 8), _smoke(128, 16), _smoke(10, 2), _smoke(256, 16)
    perms = torch.stack([torch.tensor(rng.sample(range(7), 7)) for _ in range(couplings)])
    model = _LensNPE(c, ctx, couplings, hidden, perms).cuda()
    steps = _smoke(310, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=1e-5)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    lo = torch.tensor(_LENS_LO, device="cuda")
    hi = torch.tensor(_LENS_HI, device="cuda")

    def simulate(b, g):
        theta = lo + (hi - lo) * torch.rand(b, 7, device="cuda")
        img = _lens_images(theta, g)
        img = img / img.flatten(1).std(-1)[:, None, None, None].clamp_min(1e-3)
        return (theta - (lo + hi) / 2) / ((hi - lo) / 2) * 1.7, img  # standardised, roughly unit variance

    for step in range(steps):
        model.train()
        b = rng.choice(_smoke([96, 128, 192, 256], [2, 3]))
        g = rng.choice(_smoke([64, 80, 96], [16, 32]))
        with torch.no_grad():
            theta, img = simulate(b, g)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = model.embed(img)
        loss = -model.log_prob(theta, h).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        sched.step()
        del theta, img, h
        if step % 10 == 0:
            float(loss)
        if (step + 1) % _smoke(50, 3) == 0:
            model.eval()
            with torch.no_grad():
                theta, img = simulate(_smoke(256, 4), _smoke(80, 16))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    h = model.embed(img)
                (-model.log_prob(theta, h).mean()).item()
            del theta, img, h

    model.eval()
    with torch.no_grad():
        for _ in range(rng.randint(_smoke(8, 1), _smoke(12, 2))):
            ns = rng.choice(_smoke([4096, 8192, 16384], [32, 64]))
            theta, img = simulate(1, rng.choice(_smoke([64, 80, 96], [16, 32])))
            with torch.autocast("cuda", dtype=torch.bfloat16):
                h = model.embed(img)
            post = model.sample(h.expand(ns, -1))
            rank = (post < theta).float().mean(0)
            torch.stack([post.mean(0), post.std(0), rank]).tolist()
            del theta, img, h, post, rank


# ---------------------------------------------------------------- cosmological particle-mesh N-body suite


def _growth(a, om):
    """The linear growth factor D(a) (Carroll, Press and Turner's fit, normalised to a at early times) and the
    growth rate f = Om(a)^0.55, for a flat LCDM cosmology: host floats."""
    ol = 1 - om
    oma = om / (om + ol * a ** 3)
    ola = 1 - oma
    g = 2.5 * oma / (oma ** (4 / 7) - ola + (1 + oma / 2) * (1 + ola / 70))
    g0 = 2.5 * om / (om ** (4 / 7) - ol + (1 + om / 2) * (1 + ol / 70))
    return a * g / g0, oma ** 0.55


def _cic_offsets():
    return [(i, j, k) for i in (0, 1) for j in (0, 1) for k in (0, 1)]


@_workload("cosmological particle-mesh N-body simulation suite written by hand (no learning): 36-41 simulations (drawn) at drawn cosmologies (Omega_m, sigma_8-like amplitude, n_s, h), each on a 64, 96 or 128 cell mesh (drawn) with one particle per cell in a 256 Mpc/h box; Zel'dovich initial conditions at a = 0.02 from a BBKS power spectrum (white noise by rfftn, displacements by 3 irfftn), 40-56 kick-drift steps in scale factor (drawn), each step cloud-in-cell painting by 8 index_add_ calls, an rfftn Poisson solve with CIC deconvolution, 3 irfftn force grids, forces read back to the particles over the 8 CIC corners by index_select, periodic wrapping by remainder, fp32; the matter power spectrum binned by index_add every 8 steps and at the end, the density peaks and the power spectrum read back")
def cosmo_pm_nbody_suite_sim(rng):
    box = 256.0
    nk = _smoke(48, 8)
    for _ in range(rng.randint(_smoke(36, 1), _smoke(41, 2))):
        ng = rng.choice(_smoke([64, 96, 128], [8, 12]))
        om, amp, ns, hh = rng.uniform(0.2, 0.4), rng.uniform(0.7, 0.9), rng.uniform(0.92, 1.0), rng.uniform(0.6, 0.75)
        cell = box / ng
        kf = 2 * math.pi * _fftfreq(ng, cell)
        kr = 2 * math.pi * _rfftfreq(ng, cell)
        kx, ky, kz = kf[:, None, None], kf[None, :, None], kr[None, None, :]
        k2 = (kx * kx + ky * ky + kz * kz)
        kmag = k2.sqrt()
        gam = om * hh
        qk = kmag / gam
        tk = torch.log(1 + 2.34 * qk) / (2.34 * qk + 1e-8) * (1 + 3.89 * qk + (16.1 * qk) ** 2 + (5.46 * qk) ** 3
                                                            + (6.71 * qk) ** 4) ** -0.25
        pk = kmag ** ns * tk * tk
        # CIC window per axis, for the deconvolution of the painted density
        wx = torch.special.sinc(kf * cell / (2 * math.pi))[:, None, None]
        wy = torch.special.sinc(kf * cell / (2 * math.pi))[None, :, None]
        wz = torch.special.sinc(kr * cell / (2 * math.pi))[None, None, :]
        wcic = (wx * wy * wz) ** 2
        green = -1.0 / k2.clamp_min(1e-12) * (k2 > 0).float() / wcic.clamp_min(1e-3)
        kbin = (kmag / kmag.amax() * (nk - 1)).long().reshape(-1)
        kcount = torch.zeros(nk, device="cuda").index_add_(0, kbin, torch.ones_like(kmag).reshape(-1))

        white = torch.fft.rfftn(torch.randn(ng, ng, ng, device="cuda"))
        delta_k = white * pk.sqrt()
        delta0 = torch.fft.irfftn(delta_k, s=(ng, ng, ng))
        delta_k = delta_k * (amp / delta0.std().clamp_min(1e-6))  # normalised to the drawn amplitude
        disp = torch.stack([torch.fft.irfftn(1j * kk * delta_k / k2.clamp_min(1e-12) * (k2 > 0).float(),
                                             s=(ng, ng, ng)) for kk in (kx, ky, kz)]).reshape(3, -1) / cell
        lin = torch.arange(ng, device="cuda", dtype=torch.float32)
        qx, qy, qz = torch.meshgrid(lin, lin, lin, indexing="ij")
        q = torch.stack([qx, qy, qz]).reshape(3, -1)
        a0 = 0.02
        d0, f0 = _growth(a0, om)
        pos = torch.remainder(q + d0 * disp, ng)
        e0 = math.sqrt(om / a0 ** 3 + 1 - om)
        mom = a0 * a0 * e0 * f0 * d0 * disp
        del white, delta0, disp, q, qx, qy, qz
        nsteps = rng.randint(_smoke(40, 2), _smoke(56, 3))
        avals = [a0 + (1.0 - a0) * i / nsteps for i in range(nsteps + 1)]
        npart = ng ** 3

        def paint(pos):
            i0 = pos.floor()
            fr = pos - i0
            i0 = i0.long()
            rho = torch.zeros(npart, device="cuda")
            corners = []
            for ox, oy, oz in _cic_offsets():
                w = (fr[0] if ox else 1 - fr[0]) * (fr[1] if oy else 1 - fr[1]) * (fr[2] if oz else 1 - fr[2])
                idx = (torch.remainder(i0[0] + ox, ng) * ng + torch.remainder(i0[1] + oy, ng)) * ng + \
                    torch.remainder(i0[2] + oz, ng)
                rho.index_add_(0, idx, w)
                corners.append((idx, w))
            return rho.view(ng, ng, ng) - 1.0, corners

        def power(dk):
            p = torch.zeros(nk, device="cuda").index_add_(0, kbin, (dk.abs() ** 2).reshape(-1))
            return p / kcount.clamp_min(1) * box ** 3 / float(npart) ** 2

        for it in range(nsteps):
            a, an = avals[it], avals[it + 1]
            am = 0.5 * (a + an)
            em = math.sqrt(om / am ** 3 + 1 - om)
            delta, corners = paint(pos)
            dk = torch.fft.rfftn(delta)
            phik = dk * green
            force = torch.stack([torch.fft.irfftn(-1j * kk * phik, s=(ng, ng, ng)) for kk in (kx, ky, kz)])
            force = force.reshape(3, -1) * cell
            acc = torch.zeros_like(pos)
            for idx, w in corners:
                acc = acc + force.index_select(1, idx) * w
            mom = mom + (1.5 * om * (an - a) / (am * am * em)) * acc / cell ** 2
            a_drift = an
            ed = math.sqrt(om / a_drift ** 3 + 1 - om)
            pos = torch.remainder(pos + mom * ((an - a) / (a_drift ** 3 * ed)), ng)
            if (it + 1) % 8 == 0:
                power(dk).tolist()
            del delta, corners, dk, phik, force, acc
        delta, corners = paint(pos)
        dk = torch.fft.rfftn(delta)
        peaks = (_F.max_pool3d(delta[None, None], 3, 1, 1)[0, 0] == delta).float() * (delta > 50).float()
        torch.cat([power(dk), peaks.sum()[None], delta.amax()[None]]).tolist()
        del pos, mom, delta, corners, dk, peaks, green, kbin, kcount, pk, tk, k2, kmag

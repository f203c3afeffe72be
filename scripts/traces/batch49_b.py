"""The forty-ninth batch of held-out workloads, second half (batch49.py holds the first): signal processing,
wireless communications and sensing on the GPU, written in torch alone. An FMCW radar pipeline (raw ADC frames of
drawn chirp counts simulated on the device for scenes of moving scatterers with micro-motion, range and Doppler
FFTs, a cell-averaging CFAR by pooling, an angle FFT, the micro-Doppler spectrogram of the strongest range bin by
STFT, and a CNN classifier of the spectrograms trained on it), learned hybrid precoding for multi-user mmWave MIMO
(a network mapping geometric channels to analog phases and a digital precoder, trained by gradient on the negative
sum rate, antenna and user counts drawn per phase, a WMMSE fully-digital baseline by batched complex inverses in
the evaluation), ISTA-Net+ for block compressive sensing (Zhang and Ghanem 2018: deep-unfolded ISTA with learned
convolutional transforms and soft thresholds, a fresh network per measurement ratio, a least-squares initial
matrix, whole-image reconstruction by unfold/fold with PSNR read back), and a streaming speech-enhancement service
(a causal complex spectral-mapping network over STFT chunks with convolution caches carried between chunks, the
audio of concurrent streams uploaded from pinned host buffers on a side stream, overlap-add by fold). Same
conventions as batch49.py: nothing downloaded, data drawn on the device, `rng` the workload's random.Random for
every shape, count and sampled choice, sizes through `_smoke(real, small)`. No control flow reads a tensor's value
(the CFAR's detections are a multiplied map, the strongest bin taken by argmax and gather; iteration counts fixed
on the host); losses, rates and PSNRs are read back only at logging points. crn_stream_enhance_serve uses a side
stream (uploads waited on by event, the tensors record_stream'ed); the others are single-stream.
fmcw_microdoppler_train's classifier, hybrid_precoder_train's network and crn_stream_enhance_serve run under bf16
autocast (FFTs, rates and inverses in fp32 and complex64); ista_net_cs_train is fp32.

Real sizes checked before recording, as batch49.py's header says (the same meta-device runner, op outputs counted,
peak live bytes tracked), each run whole at its final sizes: fmcw_microdoppler_train 314,210 op outputs, peak
0.70 GB; hybrid_precoder_train 321,312, 1.30 GB; ista_net_cs_train 316,635, 1.82 GB; crn_stream_enhance_serve
301,821, 0.11 GB. record_new49.sh's header has the figures, with the first runs that led to resizes. The CPU smoke
run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional


def _hann(n):
    """A periodic Hann window made from arange (as torch.hann_window makes it)."""
    return 0.5 - 0.5 * torch.cos(2 * math.pi * torch.arange(n, device="cuda") / n)


# ---------------------------------------------------------------- FMCW radar and micro-Doppler classification


_MOTIONS = [  # (bulk speed m/s range, micro-motion frequency Hz range, micro amplitude m range, scatterers moving)
    ((0.8, 1.8), (1.5, 2.5), (0.1, 0.4), 8),    # walking person
    ((2.5, 5.0), (2.5, 3.5), (0.2, 0.5), 8),    # running person
    ((0.0, 1.0), (40.0, 120.0), (0.05, 0.15), 4),  # hovering drone, rotor blades
    ((5.0, 15.0), (5.0, 12.0), (0.2, 0.35), 4),  # car, wheels
    ((3.0, 7.0), (1.0, 2.0), (0.15, 0.3), 6),   # cyclist
    ((0.0, 0.2), (0.2, 0.4), (0.002, 0.01), 2),  # static clutter breathing
]


def _fmcw_frames(bsz, chirps, samples, rx, scat):
    """Raw ADC samples (B, rx, chirps, samples) of an FMCW radar (77 GHz, 4 GHz sweep, 60 us chirps) for scenes of
    one target of a drawn class: scat point scatterers at a shared range and bulk speed, the first few with
    sinusoidal micro-motion of the class's frequency and amplitude, plus noise. Returns frames and class labels."""
    lam, slope_t, tc = 3.9e-3, 0.04, 60e-6
    labels = torch.randint(0, len(_MOTIONS), (bsz,), device="cuda")
    onehot = _F.one_hot(labels, len(_MOTIONS)).float()
    lo = torch.tensor([[m[0][0], m[1][0], m[2][0]] for m in _MOTIONS], device="cuda")
    hi = torch.tensor([[m[0][1], m[1][1], m[2][1]] for m in _MOTIONS], device="cuda")
    p = onehot @ lo + torch.rand(bsz, 3, device="cuda") * (onehot @ (hi - lo))
    r0 = 2 + 20 * torch.rand(bsz, 1, 1, device="cuda") + 0.3 * torch.randn(bsz, scat, 1, device="cuda")
    t = torch.arange(chirps, device="cuda")[None, None] * tc
    phase0 = 2 * math.pi * torch.rand(bsz, scat, 1, device="cuda")
    nmov = torch.tensor([m[3] for m in _MOTIONS], device="cuda")[labels]
    moving = (torch.arange(scat, device="cuda")[None] < nmov[:, None]).float()[..., None]
    r = (r0 + p[:, :1, None] * t + moving * p[:, 2:, None] * torch.sin(2 * math.pi * p[:, 1:2, None] * t + phase0))
    amp = torch.rand(bsz, scat, 1, device="cuda") + 0.2
    theta = (torch.rand(bsz, 1, 1, device="cuda") - 0.5) * 1.2
    fb = (2 * slope_t / 3e8 * 1e12 * r)[..., None] * (torch.arange(samples, device="cuda") / samples * 2.56e-5)
    ph = 4 * math.pi * r[..., None] / lam + 2 * math.pi * fb  # (B, scat, chirps, samples)
    sig = (amp[..., None] * torch.polar(torch.ones_like(ph), ph)).sum(1)  # (B, chirps, samples)
    steer = torch.polar(torch.ones(bsz, rx, device="cuda"),
                        math.pi * torch.arange(rx, device="cuda")[None] * torch.sin(theta[:, 0]))
    noise = torch.complex(torch.randn(bsz, rx, chirps, samples, device="cuda"),
                          torch.randn(bsz, rx, chirps, samples, device="cuda")) * 0.3
    del r, fb, ph, p, onehot
    return steer[..., None, None] * sig[:, None] + noise, labels


def _radar_process(frames, guard, train, spec_n):
    """The signal chain: Hann windows, range FFT, Doppler FFT (shifted), non-coherent sum over antennas, a
    cell-averaging CFAR by two average pools (training ring without the guard cells), an angle FFT at every cell,
    then the slow-time signal of the strongest range bin, gathered per scene, turned into a micro-Doppler
    spectrogram by STFT (log magnitude). Returns the spectrograms, the detection count and the angle map."""
    bsz, rx, chirps, samples = frames.shape
    wr = _hann(samples)
    wd = _hann(chirps)
    rng_fft = torch.fft.fft(frames * wr, dim=-1)[..., : samples // 2]
    rd = torch.fft.fftshift(torch.fft.fft(rng_fft * wd[:, None], dim=2), dim=2)
    power = rd.abs().pow(2).sum(1)[:, None]  # (B, 1, chirps, range)
    k_out, k_in = 2 * (guard + train) + 1, 2 * guard + 1
    s_out = _F.avg_pool2d(power, k_out, 1, k_out // 2, count_include_pad=False) * k_out ** 2
    s_in = _F.avg_pool2d(power, k_in, 1, k_in // 2, count_include_pad=False) * k_in ** 2
    noise = (s_out - s_in) / (k_out ** 2 - k_in ** 2)
    det = (power > 12.0 * noise).float()
    ang = torch.fft.fftshift(torch.fft.fft(rd, n=32, dim=1), dim=1).abs()
    ang_map = (ang * det).amax(1)
    prof = rng_fft.abs().pow(2).sum((1, 2))  # (B, range)
    best = prof[:, 1:].argmax(1) + 1
    slow = rng_fft.sum(1).gather(2, best[:, None, None].expand(bsz, chirps, 1))[..., 0]
    spec = torch.stft(slow, spec_n, spec_n // 4, window=_hann(spec_n),
                      return_complex=True, onesided=False)
    spec = torch.fft.fftshift(spec, dim=1).abs().clamp_min(1e-6).log()
    return spec, det.sum(), ang_map


class _SpecNet(torch.nn.Module):
    """A small ResNet over micro-Doppler spectrograms resized to 128 x 128."""

    def __init__(self, classes, width):
        super().__init__()
        w = width
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(1, w, 5, 2, 2), torch.nn.BatchNorm2d(w), torch.nn.ReLU())
        chans = [(w, w, 1), (w, 2 * w, 2), (2 * w, 2 * w, 1), (2 * w, 4 * w, 2), (4 * w, 4 * w, 1), (4 * w, 8 * w, 2)]
        self.blocks = torch.nn.ModuleList()
        for ci, co, s in chans:
            self.blocks.append(torch.nn.ModuleDict({
                "c1": torch.nn.Conv2d(ci, co, 3, s, 1, bias=False), "b1": torch.nn.BatchNorm2d(co),
                "c2": torch.nn.Conv2d(co, co, 3, 1, 1, bias=False), "b2": torch.nn.BatchNorm2d(co),
                "sc": torch.nn.Conv2d(ci, co, 1, s, bias=False) if (ci != co or s != 1) else torch.nn.Identity()}))
        self.head = torch.nn.Linear(8 * w, classes)

    def forward(self, x):
        h = self.stem(x)
        for b in self.blocks:
            h = _F.relu(b["b2"](b["c2"](_F.relu(b["b1"](b["c1"](h))))) + b["sc"](h))
        return self.head(h.mean((2, 3)))


@_workload("FMCW radar sensing and micro-Doppler classification written by hand in torch: per step a batch of 8-48 scenes (drawn, cut to 8M complex ADC samples) of a 77 GHz radar with 4 receive antennas, 64-256 chirps (drawn) of 256 samples, simulated on the device (12 point scatterers of one target of 6 classes: walking, running, drone rotors, car wheels, cyclist, clutter, with bulk speed and sinusoidal micro-motion; complex64), then the signal chain in fp32/complex64: Hann windows, range FFT, Doppler FFT with fftshift, non-coherent antenna sum, cell-averaging CFAR from two average pools (guard 2, training 4), a 32-point angle FFT masked by the detections, the slow-time signal of the strongest range bin by argmax and gather, its micro-Doppler spectrogram by a two-sided STFT (window 32-64, drawn) in log magnitude resized to 128 x 128; a ResNet classifier (width 32, 6 residual blocks, batch norm) under bf16 autocast, cross-entropy, SGD with momentum and a cosine rate; 860 steps; every 172 steps an evaluation without grad on 4 batches, accuracy and detection counts read back")
def fmcw_microdoppler_train(rng):
    classes = len(_MOTIONS)
    net = _SpecNet(classes, _smoke(32, 4)).cuda()
    steps = _smoke(860, 3)
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    rx, samples, scat = 4, _smoke(256, 32), _smoke(12, 3)
    budget = _smoke(8_000_000, 40_000)

    def batch(train):
        chirps = rng.choice(_smoke([64, 128, 256], [16, 32]))
        bsz = max(4, min(rng.choice([8, 16, 32, 48]), budget // (rx * chirps * samples)))
        frames, labels = _fmcw_frames(_smoke(bsz, 4), chirps, samples, rx, scat)
        spec, ndet, _ = _radar_process(frames, 2, 4, rng.choice(_smoke([32, 64], [8])))
        img = _F.interpolate(spec[:, None], size=(_smoke(128, 32), _smoke(128, 32)), mode="bilinear",
                             align_corners=False)
        img = (img - img.mean((2, 3), keepdim=True)) / (img.std((2, 3), keepdim=True) + 1e-5)
        del frames, spec
        return img, labels, ndet

    for step in range(steps):
        img, labels, _ = batch(True)
        net.train()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = _F.cross_entropy(net(img).float(), labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        del img, labels, loss
        if (step + 1) % _smoke(172, 3) == 0:
            net.eval()
            stats = []
            with torch.no_grad():
                for _ in range(_smoke(4, 1)):
                    img, labels, ndet = batch(False)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        pred = net(img).argmax(-1)
                    stats.append(torch.stack([(pred == labels).float().mean(), ndet]))
                    del img, labels, ndet, pred
            torch.stack(stats).cpu()
            del stats


# ---------------------------------------------------------------- learned hybrid precoding


def _mmwave_channel(bsz, users, nt, paths):
    """Geometric narrowband mmWave channels (B, K, Nt) complex64: per user a sum of paths with complex Gaussian
    gains and uniform angles of departure, a half-wavelength ULA's steering vectors."""
    ang = (torch.rand(bsz, users, paths, device="cuda") - 0.5) * math.pi
    gain = torch.complex(torch.randn(bsz, users, paths, device="cuda"),
                         torch.randn(bsz, users, paths, device="cuda")) / math.sqrt(2 * paths)
    ph = math.pi * torch.sin(ang)[..., None] * torch.arange(nt, device="cuda")
    steer = torch.polar(torch.ones_like(ph), ph)
    return (gain[..., None] * steer).sum(2) * math.sqrt(nt)


def _sum_rate(h, f, noise):
    """Per-sample sum rate (bits/s/Hz) of linear precoding f (B, Nt, K) for single-antenna users h (B, K, Nt)."""
    g = torch.bmm(h, f).abs().pow(2)  # (B, K, K): user k's received power from stream j
    sig = g.diagonal(dim1=1, dim2=2)
    inter = g.sum(2) - sig
    return torch.log2(1 + sig / (inter + noise)).sum(1)


class _HybridNet(torch.nn.Module):
    """Channel (real and imaginary parts flattened) to the analog phases (K RF chains x Nt) and the digital
    precoder (K x K complex); the product normalised to the power budget."""

    def __init__(self, users, nt, hid):
        super().__init__()
        self.k, self.nt = users, nt
        self.body = torch.nn.Sequential(torch.nn.Linear(2 * users * nt, hid), torch.nn.LayerNorm(hid),
                                        torch.nn.GELU(), torch.nn.Linear(hid, hid), torch.nn.LayerNorm(hid),
                                        torch.nn.GELU(), torch.nn.Linear(hid, hid), torch.nn.GELU())
        self.phase = torch.nn.Linear(hid, users * nt)
        self.dig = torch.nn.Linear(hid, 2 * users * users)

    def forward(self, h, power):
        b = h.shape[0]
        z = self.body(torch.view_as_real(h).reshape(b, -1))
        th = self.phase(z).float().view(b, self.nt, self.k) * math.pi
        frf = torch.polar(torch.ones_like(th), th) / math.sqrt(self.nt)
        d = self.dig(z).float().view(b, self.k, self.k, 2)
        fbb = torch.complex(d[..., 0], d[..., 1])
        f = torch.bmm(frf, fbb)
        return f * (math.sqrt(power) / f.abs().pow(2).sum((1, 2)).sqrt().clamp_min(1e-6))[:, None, None]


def _wmmse(h, power, noise, iters):
    """The WMMSE algorithm (Shi et al. 2011) for fully-digital MU-MISO precoding, batched over samples: receive
    scalars, MSE weights, then the precoder by a regularised inverse, with the power constraint met by scaling."""
    b, k, nt = h.shape
    f = h.conj().transpose(1, 2)
    f = f * (math.sqrt(power) / f.abs().pow(2).sum((1, 2)).sqrt())[:, None, None]
    eye = torch.eye(nt, device="cuda", dtype=torch.complex64)
    for _ in range(iters):
        hf = torch.bmm(h, f)
        tot = hf.abs().pow(2).sum(2) + noise
        u = hf.diagonal(dim1=1, dim2=2) / tot
        w = 1 / (1 - (u.conj() * hf.diagonal(dim1=1, dim2=2)).real).clamp_min(1e-6)
        a = (w * u.abs().pow(2)).to(torch.complex64)
        mu = (noise * (w * u.abs().pow(2)).sum(1) / power).to(torch.complex64)
        cov = torch.bmm(h.conj().transpose(1, 2) * a[:, None], h) + mu[:, None, None] * eye
        f = torch.bmm(torch.linalg.inv(cov), h.conj().transpose(1, 2) * (u * w)[:, None])
        f = f * (math.sqrt(power) / f.abs().pow(2).sum((1, 2)).sqrt().clamp_min(1e-9))[:, None, None]
        del hf, tot, u, w, a, mu, cov
    return f


@_workload("learned hybrid precoding for multi-user mmWave MIMO written by hand (random init): 4 phases, each with its antenna count (32-256-element ULA) and user count (4-12, as many RF chains) drawn and a fresh network (3 GELU layers of 1024-2048 with layer norm, under bf16 autocast) mapping the flattened channel to analog phase shifts (constant modulus by torch.polar) and a complex digital precoder, normalised to the power budget; 340-500 unsupervised steps per phase on 256-2048 geometric channel realisations (2-8 paths, drawn) made on the device, SNR 0-20 dB drawn, the loss the negative mean sum rate (SINRs from |H F_RF F_BB|^2 in complex64), AdamW, gradient clipping 1; after each phase an evaluation without grad at 4 SNRs: the network's sum rate and the fully-digital WMMSE baseline (25 iterations of batched complex linalg.inv of Nt x Nt covariances) and matched filtering, read back")
def hybrid_precoder_train(rng):
    for phase in range(_smoke(4, 1)):
        nt = _smoke(rng.choice([32, 64, 128, 256]), 8)
        k = _smoke(rng.randint(4, 12), 2)
        hid = _smoke(rng.choice([1024, 2048]), 32)
        net = _HybridNet(k, nt, hid).cuda()
        opt = torch.optim.AdamW(net.parameters(), lr=5e-4, weight_decay=1e-4)
        bmax = _smoke(2048 if nt <= 64 else (1024 if nt <= 128 else 512), 16)
        for step in range(_smoke(rng.randint(340, 500), 3)):
            bsz = rng.choice([b for b in (256, 512, 1024, 2048) if b <= bmax] or [bmax])
            h = _mmwave_channel(_smoke(bsz, 16), k, nt, rng.randint(2, 8))
            snr = 10 ** (rng.uniform(0, 20) / 10)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                f = net(h, 1.0)
            loss = -_sum_rate(h, f, 1.0 / snr).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
            del h, f, loss
        rates = []
        with torch.no_grad():
            for snr_db in (0.0, 5.0, 10.0, 20.0):
                noise = 10 ** (-snr_db / 10)
                h = _mmwave_channel(_smoke(512, 8), k, nt, 4)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    f = net(h, 1.0)
                mf = h.conj().transpose(1, 2)
                mf = mf / mf.abs().pow(2).sum((1, 2)).sqrt()[:, None, None]
                fw = _wmmse(h, 1.0, noise, _smoke(25, 2))
                rates.append(torch.stack([_sum_rate(h, f, noise).mean(), _sum_rate(h, fw, noise).mean(),
                                          _sum_rate(h, mf, noise).mean()]))
                del h, f, mf, fw
        torch.stack(rates).cpu()
        del net, opt, rates


# ---------------------------------------------------------------- ISTA-Net+ block compressive sensing


class _IstaNetPlus(torch.nn.Module):
    """ISTA-Net+ (Zhang and Ghanem 2018): phases of a gradient step on ||Phi x - y||^2 with a learned step, then
    x + G(soft(F(D(x)), theta)) with two-conv transforms F and its learned inverse, returning each phase's
    symmetry residual for the constraint loss."""

    def __init__(self, phases, ch):
        super().__init__()
        self.step = torch.nn.Parameter(torch.full((phases,), 0.5))
        self.thr = torch.nn.Parameter(torch.full((phases,), 0.01))
        mk = lambda ci, co: torch.nn.Parameter(torch.randn(co, ci, 3, 3) * math.sqrt(2 / (9 * ci)))  # noqa: E731
        self.d = torch.nn.ParameterList([mk(1, ch) for _ in range(phases)])
        self.f1 = torch.nn.ParameterList([mk(ch, ch) for _ in range(phases)])
        self.f2 = torch.nn.ParameterList([mk(ch, ch) for _ in range(phases)])
        self.b1 = torch.nn.ParameterList([mk(ch, ch) for _ in range(phases)])
        self.b2 = torch.nn.ParameterList([mk(ch, ch) for _ in range(phases)])
        self.g = torch.nn.ParameterList([mk(ch, 1) for _ in range(phases)])

    def forward(self, x, phitphi, phity, bs):
        n = x.shape[0]
        sym = []
        for i in range(self.step.shape[0]):
            x = x - self.step[i] * (x @ phitphi) + self.step[i] * phity
            xi = x.view(n, 1, bs, bs)
            xd = _F.conv2d(xi, self.d[i], padding=1)
            xf = _F.conv2d(_F.relu(_F.conv2d(xd, self.f1[i], padding=1)), self.f2[i], padding=1)
            xs = torch.sign(xf) * _F.relu(xf.abs() - self.thr[i])
            xb = _F.conv2d(_F.relu(_F.conv2d(xs, self.b1[i], padding=1)), self.b2[i], padding=1)
            x = (xi + _F.conv2d(xb, self.g[i], padding=1)).view(n, bs * bs)
            xe = _F.conv2d(_F.relu(_F.conv2d(xf, self.b1[i], padding=1)), self.b2[i], padding=1)
            sym.append(xe - xd)
            del xd, xf, xs, xb, xe
        return x, sym


def _smooth_images(n, size):
    """Natural-image stand-ins made on the device: white noise shaped by a 1/f^1.6 spectrum (rfft2 / irfft2) plus a
    few random step edges, scaled to [0, 1]."""
    idx = torch.arange(size, device="cuda")
    fy = (torch.where(idx < (size + 1) // 2, idx, idx - size) / size)[:, None]
    fx = (idx[: size // 2 + 1] / size)[None]
    amp = 1 / (fy ** 2 + fx ** 2 + 1e-4) ** 0.8
    spec = torch.complex(torch.randn(n, size, size // 2 + 1, device="cuda"),
                         torch.randn(n, size, size // 2 + 1, device="cuda")) * amp
    img = torch.fft.irfft2(spec, s=(size, size))
    yy = torch.linspace(-1, 1, size, device="cuda")
    ang = torch.rand(n, 1, 1, device="cuda") * 2 * math.pi
    edge = torch.sigmoid(40 * (yy[None, :, None] * ang.cos() + yy[None, None, :] * ang.sin()
                               - (torch.rand(n, 1, 1, device="cuda") - 0.5)))
    img = img / img.flatten(1).std(1)[:, None, None] + edge
    lo, hi = img.flatten(1).amin(1)[:, None, None], img.flatten(1).amax(1)[:, None, None]
    return (img - lo) / (hi - lo + 1e-6)


@_workload("compressive sensing by deep unfolding, ISTA-Net+ (Zhang and Ghanem 2018) written by hand (fp32, random init): block CS of 33 x 33 image blocks (1089 pixels) at 3 measurement ratios drawn one after another from 1-50%, each with its orthogonalised random Gaussian sampling matrix (QR), the initialisation matrix fitted by least squares (batched linalg.solve on 8k training blocks) and a fresh 9-phase network (32 channels: a gradient step with a learned size, a two-conv transform, soft thresholding with a learned threshold, its two-conv inverse, the symmetry-constraint loss weighted 0.01); 120 training steps a ratio on 64-128 blocks (drawn) cut from 1/f-spectrum images with edges synthesised on the device by irfft2, Adam; after each ratio an evaluation without grad: 4 whole 256 x 264 images split into blocks by unfold, reconstructed, put back by fold, PSNR read back")
def ista_net_cs_train(rng):
    bs = _smoke(33, 8)
    nblk = bs * bs
    ratios = [0.01, 0.04, 0.10, 0.25, 0.30, 0.40, 0.50]
    for phase in range(_smoke(3, 1)):
        ratio = rng.choice(ratios)
        m = max(2, int(round(ratio * nblk)))
        phi = torch.linalg.qr(torch.randn(nblk, m, device="cuda"))[0].T  # (m, n), orthonormal rows
        phitphi = phi.T @ phi
        train = _smooth_images(_smoke(128, 4), _smoke(99, 16)).unfold(1, bs, bs).unfold(2, bs, bs).reshape(-1, nblk)
        ytr = train @ phi.T
        qinit = torch.linalg.solve(ytr.T @ ytr + 1e-3 * torch.eye(m, device="cuda"), ytr.T @ train).T  # (n, m)
        model = _IstaNetPlus(_smoke(9, 2), _smoke(32, 4)).cuda()
        opt = torch.optim.Adam(model.parameters(), lr=1e-4)
        for step in range(_smoke(120, 3)):
            bsz = rng.choice(_smoke([64, 96, 128], [4]))
            imgs = _smooth_images(max(1, bsz // 9), _smoke(99, 16))
            x = imgs.unfold(1, bs, bs).unfold(2, bs, bs).reshape(-1, nblk)
            y = x @ phi.T
            rec, sym = model(y @ qinit.T, phitphi, y @ phi, bs)
            loss = (rec - x).pow(2).mean() + 0.01 * sum(s.pow(2).mean() for s in sym) / len(sym)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            del imgs, x, y, rec, sym, loss
        psnr = []
        with torch.no_grad():
            h, w = _smoke(256, 16), _smoke(264, 24)
            for _ in range(4):
                img = _smooth_images(1, max(h, w))[:, :h, :w]
                hp, wp = -(-h // bs) * bs, -(-w // bs) * bs
                pad = _F.pad(img[:, None], (0, wp - w, 0, hp - h))
                blocks = _F.unfold(pad, bs, stride=bs).transpose(1, 2).reshape(-1, nblk)
                y = blocks @ phi.T
                rec, sym = model(y @ qinit.T, phitphi, y @ phi, bs)
                out = _F.fold(rec.view(1, -1, nblk).transpose(1, 2), (hp, wp), bs, stride=bs)[:, 0, :h, :w]
                mse = (out.clamp(0, 1) - img).pow(2).mean()
                psnr.append(10 * torch.log10(1 / mse))
                del img, pad, blocks, y, rec, sym, out, mse
        torch.stack(psnr).cpu()
        del phi, phitphi, train, ytr, qinit, model, opt, psnr


# ---------------------------------------------------------------- streaming speech enhancement service


class _CausalCrn(torch.nn.Module):
    """A causal complex spectral-mapping network: a frequency-strided conv encoder over (re, im, log-magnitude)
    with kernels of 2 frames (one frame of history cached), a stack of dilated causal temporal convs over the
    flattened bottleneck (their histories cached), a mirrored transposed-conv decoder with skips, and a complex
    ratio mask (tanh-bounded magnitude) applied to the noisy spectrum."""

    def __init__(self, freq, ch, tcn, dils):
        super().__init__()
        self.ch = ch
        self.enc = torch.nn.ModuleList()
        self.dec = torch.nn.ModuleList()
        cin, f = 3, freq
        self.fdims = []
        for c in ch:
            self.enc.append(torch.nn.Conv2d(cin, c, (2, 3), stride=(1, 2), padding=(0, 1)))
            self.fdims.append(f)
            f = (f - 1) // 2 + 1
            cin = c
        self.fbot = f
        d = ch[-1] * f
        self.inproj = torch.nn.Conv1d(d, tcn, 1)
        self.tcn = torch.nn.ModuleList([torch.nn.Conv1d(tcn, tcn, 3, dilation=dl) for dl in dils])
        self.dils = dils
        self.outproj = torch.nn.Conv1d(tcn, d, 1)
        outs = list(reversed(ch[:-1])) + [2]
        for i, c in enumerate(outs):
            ci = list(reversed(ch))[i] * 2
            self.dec.append(torch.nn.ConvTranspose2d(ci, c, (1, 3), stride=(1, 2), padding=(0, 1)))

    def init_cache(self, b, freq, dtype):
        enc = []
        cin = 3
        for c, f in zip(self.ch, self.fdims):
            enc.append(torch.zeros(b, cin, 1, f, device="cuda", dtype=dtype))
            cin = c
        tcn = [torch.zeros(b, self.tcn[0].in_channels, 2 * dl, device="cuda", dtype=dtype) for dl in self.dils]
        return enc, tcn

    def forward(self, spec, cache):
        """spec: (B, F, T) complex64 chunk; returns the enhanced chunk and the new caches."""
        enc_c, tcn_c = cache
        b, f, t = spec.shape
        x = torch.stack([spec.real, spec.imag, spec.abs().clamp_min(1e-5).log()], 1).transpose(2, 3)  # (B,3,T,F)
        x = x.to(enc_c[0].dtype)
        skips, new_enc = [], []
        for conv, c in zip(self.enc, enc_c):
            xin = torch.cat([c, x], 2)
            new_enc.append(xin[:, :, -1:])
            x = _F.elu(conv(xin))
            skips.append(x)
        bb, cc, tt, ff = x.shape
        z = self.inproj(x.permute(0, 1, 3, 2).reshape(bb, cc * ff, tt))
        new_tcn = []
        for conv, c, dl in zip(self.tcn, tcn_c, self.dils):
            zin = torch.cat([c, z], 2)
            new_tcn.append(zin[:, :, -2 * dl:])
            z = z + _F.prelu(conv(zin), torch.full((1,), 0.25, device="cuda", dtype=zin.dtype))
        x = self.outproj(z).view(bb, cc, ff, tt).permute(0, 1, 3, 2)
        for i, (dec, s) in enumerate(zip(self.dec, reversed(skips))):
            x = dec(torch.cat([x, s], 1))
            tgt = self.fdims[len(self.fdims) - 1 - i]
            x = x[..., :tgt] if x.shape[-1] >= tgt else _F.pad(x, (0, tgt - x.shape[-1]))
            if i < len(self.dec) - 1:
                x = _F.elu(x)
        m = x.float().transpose(2, 3)  # (B, 2, F, T)
        mr, mi = m[:, 0], m[:, 1]
        mag = torch.tanh(torch.sqrt(mr * mr + mi * mi + 1e-8))
        ph = torch.atan2(mi, mr)
        out = spec * torch.polar(mag, ph)
        return out, (new_enc, new_tcn)


@_workload("streaming speech enhancement service, a causal complex spectral-mapping network written by hand (random init; a CRN with a 4-layer frequency-strided conv encoder of 16-128 channels over real, imaginary and log-magnitude of a 512-point STFT with hop 128, 6 dilated causal temporal convs of 256 channels over the bottleneck, a transposed-conv decoder with skips, a tanh-bounded complex ratio mask) under inference mode and bf16 autocast: 100 request groups, each 1-16 concurrent streams (drawn) of 2-20 s of 16 kHz audio (drawn), the groups' audio from reused pinned host buffers uploaded on a side stream one group ahead (waited on by event, record_stream'ed), processed in chunks of 32 frames (256 ms): each chunk's STFT by unfold, Hann window and rfft, the network with its encoder and temporal-conv caches carried between chunks, the inverse by irfft and overlap-add by fold with the tail of the previous chunk kept; the enhanced audio's energy per stream read back per group")
def crn_stream_enhance_serve(rng):
    nfft, hop, chunk = _smoke(512, 64), _smoke(128, 16), _smoke(32, 4)
    freq = nfft // 2 + 1
    model = _CausalCrn(freq, _smoke([16, 32, 64, 128], [4, 8]), _smoke(256, 16),
                       _smoke([1, 2, 4, 8, 16, 32], [1, 2])).cuda().eval()
    win = _hann(nfft)
    sr = _smoke(16000, 2000)
    smax, lmax = _smoke(16, 2), _smoke(20, 2) * sr
    host = [torch.randn(smax * lmax).mul_(0.1).pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    done = [None, None]

    def fetch(i):
        streams = rng.choice(_smoke([1, 2, 4, 8, 16], [1, 2]))
        secs = rng.uniform(2, 20) if streams <= 8 else rng.uniform(2, 10)
        n = int(_smoke(secs, 1.0) * sr) // (chunk * hop) * (chunk * hop) + chunk * hop
        s = i % 2
        if done[s] is not None:
            done[s].synchronize()
        with torch.cuda.stream(side):
            wav = host[s][:streams * n].view(streams, n).to("cuda", non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        done[s] = ev
        return wav, ev

    nxt = fetch(0)
    for grp in range(_smoke(100, 2)):
        wav, ev = nxt
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        wav.record_stream(cur)
        nxt = fetch(grp + 1)
        b, n = wav.shape
        with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
            act = torch.bfloat16 if torch.is_autocast_enabled("cuda") else torch.float32
            cache = model.init_cache(b, freq, act)
            prev = torch.zeros(b, nfft - hop, device="cuda")
            tail = torch.zeros(b, nfft - hop, device="cuda")
            outs = []
            for c0 in range(0, n, chunk * hop):
                seg = torch.cat([prev, wav[:, c0:c0 + chunk * hop]], 1)
                prev = seg[:, -(nfft - hop):]
                frames = seg.unfold(1, nfft, hop) * win  # (B, chunk, nfft)
                spec = torch.fft.rfft(frames.float(), dim=-1).transpose(1, 2)
                enh, cache = model(spec, cache)
                y = torch.fft.irfft(enh.transpose(1, 2), n=nfft, dim=-1) * win
                ola = _F.fold(y.transpose(1, 2), (1, (chunk - 1) * hop + nfft), (1, nfft), stride=(1, hop))
                ola = ola.view(b, -1)
                ola = torch.cat([ola[:, :nfft - hop] + tail, ola[:, nfft - hop:]], 1)
                outs.append(ola[:, :chunk * hop])
                tail = ola[:, chunk * hop:]
                del seg, frames, spec, enh, y, ola
            out = torch.cat(outs, 1)
            out.pow(2).mean(1).cpu()
            del cache, prev, tail, outs, out
        del wav

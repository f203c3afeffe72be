"""The fifty-eighth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch57_b.py are): agriculture, ecology and Earth observation on the GPU (crops, forests, wildlife, biodiversity and
remote sensing), written in torch alone, first half. Crop-type mapping from Sentinel-2-like satellite image time
series with a pixel-set encoder and a lightweight temporal attention encoder (PSE-TAE; parcels as sets of 16-64
pixels of 10 bands, 24-72 acquisitions drawn per batch at drawn days of the year, cloudy acquisitions masked out of
the attention by an additive mask; phenology curves per crop class made on the device; focal loss; evaluations with
a confusion matrix by one-hot products), a BirdNET-style bioacoustic classification service (recordings of 15-120 s
at 48 kHz uploaded from reused pinned host buffers on a side stream one request ahead, cut on the device into 3 s
windows with 1.5 s overlap, STFT and a mel filterbank and log compression on the device, a residual CNN over the
spectrograms in chunks, 1,500 species logits filtered by a location-and-week range prior, per-species maxima and
detections read back), hyperspectral image classification with a HybridSN-style network (scenes of drawn size and
band count made from endmember spectra and smooth abundance maps, PCA to 30 components by an eigendecomposition of
the band covariance, patches of drawn size gathered around sampled pixels, 3-D convolutions over the spectrum then
2-D convolutions; a full-scene prediction in chunks after each scene), and species distribution modelling from
presence-only records (a SINR-style residual MLP over sinusoidal coordinate encodings and environmental rasters
sampled by grid_sample, 6,000 species, the "assume negative" loss with random pseudo-absence locations, batches
drawn over regions; range maps over a global grid in chunks, expected richness and range error read back). Same
conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or, for the bird-sound
service, from a few reused pinned host buffers), `rng` the workload's random.Random for every shape, count and
sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a
tensor's value: counts are fixed on the host, masks multiplied in or added to attention scores, no boolean-mask
indexing; losses, accuracies and detections are read back only at logging points (the service returns each
request's results, as a service must). birdnet_mel_window_serve uses a side stream (uploads waited on by event, the
tensors record_stream'ed); the others are single-stream. The encoders, the CNNs and the MLP run under bf16 autocast;
the spectrograms, the PCA, the data synthesis and the losses are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch58_b.py's header says the same of its half): see record_new58.sh's header
for each workload's op outputs and peak live bytes counted on PyTorch's meta device with the helper's runner
(/tmp/b58/meta_run.py, not committed, a copy of /work/notes/meta_run.py: smoke_cpu.py's patching with "cuda" mapped
to "meta", readbacks answered with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking a math
path, streams, events and pinned memory no-ops; boolean-mask indexing, which the meta device cannot size, is
avoided; events about 1.8x the op outputs). Two of this half were run whole at their final real sizes:
crop_tae_pixelset_train 317,946 op outputs, peak 4.98 GB; sdm_presence_only_mlp_train 317,764, 2.91 GB. Two were
run in part at their final sizes and their counts extrapolated, as the helper's deadline (45 minutes to write and
check all eight, on two shared cores) did not allow whole runs: birdnet_mel_window_serve through 124 of its 750
requests (53,037 op outputs, about 428 a request, so about 321,000), peak 0.21 GB there;
hsi_spectral_3dconv_train through its first scene's 720 steps and full-scene prediction and 159 steps of its second
(120,857 op outputs, about 136 a step and 45 a prediction chunk, so about 309,000), peak 1.43 GB there (peaks in
fp32 where autocast would take bf16). record_new58.sh's header has them too. The CPU smoke run (RECORD_SMOKE=1) ran
all four.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import mlp as _mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _smooth_noise(b, c, h, w, scale):
    """Spatially smooth random fields: coarse noise bilinearly upsampled."""
    hh, ww = max(2, h // scale), max(2, w // scale)
    return _F.interpolate(torch.randn(b, c, hh, ww, device="cuda"), size=(h, w), mode="bilinear",
                          align_corners=False)


# ---------------------------------------------------------------- crop-type mapping, PSE-TAE


class _PixelSetEncoder(_nn.Module):
    def __init__(self, cin, nextra, d):
        super().__init__()
        self.mlp1 = _nn.Sequential(_nn.Linear(cin, 32), _nn.LayerNorm(32), _nn.ReLU(), _nn.Linear(32, 64),
                                   _nn.LayerNorm(64), _nn.ReLU())
        self.mlp2 = _nn.Sequential(_nn.Linear(128 + nextra, d), _nn.LayerNorm(d), _nn.ReLU())

    def forward(self, x, pmask, extra):
        # x (b, t, s, c); pmask (b, 1, s, 1): which of the s pixel slots hold pixels of the parcel
        h = self.mlp1(x) * pmask
        n = pmask.sum(2).clamp_min(1)
        mean = h.sum(2) / n
        std = (((h - mean[:, :, None]) ** 2 * pmask).sum(2) / n + 1e-6).sqrt()
        return self.mlp2(torch.cat([mean, std, extra[:, None].expand(-1, x.shape[1], -1)], -1))


class _TemporalAttention(_nn.Module):
    """The lightweight TAE: a master query per head attends over the acquisitions, positions from day of year."""

    def __init__(self, d, heads, dk):
        super().__init__()
        self.heads, self.dk = heads, dk
        self.norm = _nn.LayerNorm(d)
        self.key = _nn.Linear(d, heads * dk)
        self.query = _nn.Parameter(torch.randn(heads, dk) * dk ** -0.5)
        self.out = _nn.Sequential(_nn.Linear(d * 1, 256), _nn.LayerNorm(256), _nn.ReLU(), _nn.Linear(256, 128))
        self.d = d

    def forward(self, h, doy, cmask):
        b, t, d = h.shape
        i = torch.arange(0, d, 2, device=h.device, dtype=torch.float32)
        ang = doy[..., None] / (1000.0 ** (i / d))
        pe = torch.stack([ang.sin(), ang.cos()], -1).flatten(2)
        h = self.norm(h + pe.to(h.dtype))
        k = self.key(h).view(b, t, self.heads, self.dk)
        att = torch.einsum("bthk,hk->bht", k, self.query.to(k.dtype)) / math.sqrt(self.dk)
        att = (att.float() + (cmask[:, None] - 1.0) * 1e4).softmax(-1)
        v = h.view(b, t, self.heads, d // self.heads)
        o = torch.einsum("bht,bthe->bhe", att.to(v.dtype), v).reshape(b, d)
        return self.out(o)


class _PseTae(_nn.Module):
    def __init__(self, cin, nextra, d, heads, ncls):
        super().__init__()
        self.pse = _PixelSetEncoder(cin, nextra, d)
        self.tae = _TemporalAttention(d, heads, 32)
        self.dec = _mlp(128, 128, ncls, layers=3, norm=True)

    def forward(self, x, pmask, extra, doy, cmask):
        return self.dec(self.tae(self.pse(x, pmask, extra), doy, cmask))


def _focal(logits, y, gamma=1.0):
    logp = logits.float().log_softmax(-1).gather(1, y[:, None])[:, 0]
    return (-(1 - logp.exp()).pow(gamma) * logp).mean()


@_workload("crop-type mapping from satellite image time series with a PSE-TAE written by hand (random init): parcels as sets of 16-64 pixels (drawn per batch; 64 slots, padding masked) of 10 Sentinel-2-like bands, 24-72 acquisitions (drawn per batch) at sorted drawn days of the year, 20 crop classes with phenology curves made on the device (double-logistic green-up and senescence per class, band responses, per-parcel shifts and noise), clouds on a drawn 10-50% of acquisitions brightening them and masked out of the attention additively, parcel geometry features; pixel-set encoder (MLPs, masked mean and std pooling), a lightweight temporal attention encoder (16 heads, master queries, day-of-year positions), MLP decoder, focal loss; bf16 autocast; AdamW with one-cycle decay, 1,000 steps of 128-512 parcels (drawn); every 250 an evaluation of 8 batches of 512 parcels at 72 acquisitions without grad, confusion matrix by one-hot products, overall accuracy and mean IoU read back")
def crop_tae_pixelset_train(rng):
    ncls, nb, d = _smoke(20, 5), 10, _smoke(128, 32)
    model = _PseTae(nb, 4, d, _smoke(16, 4), ncls).cuda()
    steps = _smoke(1000, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-3, total_steps=steps)
    smax = _smoke(64, 8)
    # per class: green-up day, senescence day, peak, and the band responses to greenness
    pheno = torch.stack([60 + 120 * torch.rand(ncls, device="cuda"), 200 + 120 * torch.rand(ncls, device="cuda"),
                         0.5 + 0.5 * torch.rand(ncls, device="cuda")], -1)
    resp = torch.randn(ncls, nb, device="cuda") * 0.3 + torch.linspace(-0.5, 1.0, nb, device="cuda")
    soil = 0.1 + 0.2 * torch.rand(nb, device="cuda")

    def batch(b, t, s):
        y = torch.randint(0, ncls, (b,), device="cuda")
        doy = (torch.rand(b, t, device="cuda") * 365).sort(-1).values
        p = pheno[y]
        shift = 15 * torch.randn(b, 1, device="cuda")
        green = p[:, 2:3] * (torch.sigmoid((doy - p[:, 0:1] - shift) / 8) - torch.sigmoid((doy - p[:, 1:2] - shift) / 10))
        prof = soil + green[..., None] * resp[y][:, None]  # (b, t, nb)
        x = prof[:, :, None] + 0.05 * torch.randn(b, t, smax, nb, device="cuda")
        cloud = (torch.rand(b, t, device="cuda") < rng.uniform(0.1, 0.5)).float()
        x = x + cloud[..., None, None] * (0.6 + 0.2 * torch.rand(b, t, 1, 1, device="cuda"))
        pmask = (torch.arange(smax, device="cuda") < s).float()[None, None, :, None].expand(b, 1, -1, -1)
        extra = torch.randn(b, 4, device="cuda")
        return x, pmask, extra, doy, 1.0 - cloud, y

    tlist = _smoke([24, 36, 48, 60, 72], [6, 8])
    for step in range(steps):
        model.train()
        b, t, s = rng.randint(_smoke(128, 4), _smoke(512, 8)), rng.choice(tlist), rng.randint(_smoke(16, 2), smax)
        with torch.no_grad():
            x, pmask, extra, doy, cm, y = batch(b, t, s)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x, pmask, extra, doy, cm)
        loss = _focal(logits, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        del x, logits
        if (step + 1) % _smoke(250, 3) == 0:
            model.eval()
            conf = torch.zeros(ncls, ncls, device="cuda")
            with torch.no_grad():
                for _ in range(_smoke(8, 1)):
                    x, pmask, extra, doy, cm, y = batch(_smoke(512, 8), tlist[-1], smax)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        pred = model(x, pmask, extra, doy, cm).argmax(-1)
                    conf += _F.one_hot(y, ncls).float().t() @ _F.one_hot(pred, ncls).float()
            tp = conf.diagonal()
            iou = tp / (conf.sum(0) + conf.sum(1) - tp).clamp_min(1)
            torch.stack([tp.sum() / conf.sum(), iou.mean()]).tolist()
            float(loss)


# ---------------------------------------------------------------- BirdNET-style bioacoustic service


def _mel_fb(nfft, nmel, sr, fmin, fmax):
    """A triangular mel filterbank (nmel, nfft // 2 + 1) on the device."""
    def hz2mel(f):
        return 2595 * math.log10(1 + f / 700)

    mels = torch.linspace(hz2mel(fmin), hz2mel(fmax), nmel + 2, device="cuda")
    hz = 700 * (10 ** (mels / 2595) - 1)
    freqs = torch.linspace(0, sr / 2, nfft // 2 + 1, device="cuda")
    lo, ce, hi = hz[:-2, None], hz[1:-1, None], hz[2:, None]
    return torch.minimum((freqs - lo) / (ce - lo), (hi - freqs) / (hi - ce)).clamp_min(0)


class _ResBlock2d(_nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = _nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = _nn.BatchNorm2d(cout)
        self.c2 = _nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = _nn.BatchNorm2d(cout)
        self.skip = (_nn.Sequential(_nn.Conv2d(cin, cout, 1, stride, bias=False), _nn.BatchNorm2d(cout))
                     if stride != 1 or cin != cout else _nn.Identity())

    def forward(self, x):
        return _F.relu(self.skip(x) + self.b2(self.c2(_F.relu(self.b1(self.c1(x))))))


class _BirdNet(_nn.Module):
    def __init__(self, widths, nspecies):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(1, widths[0], 5, 2, 2, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU())
        blocks, cin = [], widths[0]
        for w in widths:
            blocks += [_ResBlock2d(cin, w, 2), _ResBlock2d(w, w, 1)]
            cin = w
        self.blocks = _nn.Sequential(*blocks)
        self.head = _nn.Sequential(_nn.Conv2d(cin, 512, 1), _nn.ReLU(), _nn.Conv2d(512, nspecies, 1))

    def forward(self, x):
        h = self.head(self.blocks(self.stem(x)))
        return torch.logsumexp(h.float().flatten(2), -1) - math.log(h.shape[2] * h.shape[3])


@_workload("BirdNET-style bioacoustic classification service written by hand (random-init residual CNN, eval mode, bf16 autocast): 750 requests, each a field recording of 15-120 s (drawn) at 48 kHz with the site's latitude, longitude and week, uploaded as fp32 from reused pinned host buffers on a side stream one request ahead (waited on by event, record_stream'ed); on the device the recording is high-passed, cut into 3 s windows with 1.5 s overlap (unfold), an STFT (n_fft 1,024, hop 320, Hann) per window, a 96-band mel filterbank (150 Hz-15 kHz) and log compression with per-window normalisation; the CNN (stem and 4 stages of residual blocks, widths 32-256) in chunks of 24 windows gives 1,500 species logits per window by log-mean-exp pooling; a range prior (an MLP over the sinusoidally encoded location and week, evaluated per request) multiplies the sigmoid scores; per-species maxima over the recording, detections above 0.5 by window, and the top 10 species with their best windows read back")
def birdnet_mel_window_serve(rng):
    sr, nspec, nmel = 48000, _smoke(1500, 40), _smoke(96, 32)
    nfft, hop = _smoke(1024, 256), _smoke(320, 128)
    win, step = 3 * sr, 3 * sr // 2
    if _smoke(False, True):
        sr, win, step = 8000, 8000 * 3, 4000 * 3
    net = _BirdNet(_smoke([32, 64, 128, 256], [8, 16]), nspec).cuda().eval().requires_grad_(False)
    prior = _mlp(12, 256, nspec, layers=3).cuda().eval().requires_grad_(False)
    fb = _mel_fb(nfft, nmel, sr, 150, min(15000, sr // 2 - 1))
    hann = 0.5 - 0.5 * torch.cos(2 * math.pi * torch.arange(nfft, device="cuda") / nfft)  # periodic Hann
    smin, smax = _smoke(15, 3), _smoke(120, 6)
    host = [torch.randn(smax * sr).pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    done = [None, None]
    chunk = _smoke(24, 2)
    nreq = _smoke(750, 3)

    def fetch(i):
        n = rng.randint(smin, smax) * sr
        s = i % 2
        if done[s] is not None:
            done[s].synchronize()
        with torch.cuda.stream(side):
            a = host[s][:n].to("cuda", non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        done[s] = ev
        meta = torch.tensor([rng.uniform(-60, 70), rng.uniform(-180, 180), rng.randint(1, 48)])
        return a, ev, meta.to("cuda")

    nxt = fetch(0)
    for req in range(nreq):
        audio, ev, meta = nxt
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        audio.record_stream(cur)
        if req + 1 < nreq:
            nxt = fetch(req + 1)
        with torch.no_grad():
            a = audio * 0.05
            a = a - _F.avg_pool1d(a[None, None], 31, 1, 15, count_include_pad=False)[0, 0]  # a crude high-pass
            wins = a.unfold(0, win, step)  # (w, win)
            nw = wins.shape[0]
            lat, lon, week = meta[0] / 90 * math.pi, meta[1] / 180 * math.pi, meta[2] / 48 * 2 * math.pi
            enc = torch.stack([f(v * k) for v in (lat, lon, week) for k in (1, 2) for f in (torch.sin, torch.cos)])
            with torch.autocast("cuda", dtype=torch.bfloat16):
                rng_prior = torch.sigmoid(prior(enc[None]).float())[0]
            scores = []
            for c0 in range(0, nw, chunk):
                w = wins[c0:c0 + chunk]
                spec = torch.stft(w, nfft, hop, window=hann, return_complex=True).abs().pow(2)
                mel = torch.log1p(1e3 * (fb @ spec))
                mel = (mel - mel.mean((1, 2), keepdim=True)) / (mel.std((1, 2), keepdim=True) + 1e-5)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = net(mel[:, None])
                scores.append(torch.sigmoid(logits) * rng_prior)
            sc = torch.cat(scores)  # (w, nspec)
            best, where = sc.max(0)
            top, idx = best.topk(10)
            det = (sc > 0.5).float().sum(1)
            torch.cat([top, idx.float(), where[idx].float(), det]).cpu()
        del audio, a, wins, sc


# ---------------------------------------------------------------- hyperspectral classification, HybridSN


class _HybridSN(_nn.Module):
    def __init__(self, bands, ncls):
        super().__init__()
        self.c3 = _nn.Sequential(_nn.Conv3d(1, 8, (7, 3, 3)), _nn.BatchNorm3d(8), _nn.ReLU(),
                                 _nn.Conv3d(8, 16, (5, 3, 3)), _nn.BatchNorm3d(16), _nn.ReLU(),
                                 _nn.Conv3d(16, 32, (3, 3, 3)), _nn.BatchNorm3d(32), _nn.ReLU())
        self.c2 = _nn.Sequential(_nn.Conv2d(32 * (bands - 12), 64, 3), _nn.BatchNorm2d(64), _nn.ReLU())
        self.fc = _nn.Sequential(_nn.Linear(64 * 9, 256), _nn.ReLU(), _nn.Dropout(0.4), _nn.Linear(256, 128),
                                 _nn.ReLU(), _nn.Dropout(0.4), _nn.Linear(128, ncls))

    def forward(self, x):
        h = self.c3(x[:, None])  # (b, 32, bands - 12, p - 6, p - 6)
        h = self.c2(h.flatten(1, 2))
        return self.fc(_F.adaptive_avg_pool2d(h, 3).flatten(1))


def _hsi_scene(h, w, bands, ncls):
    """A hyperspectral scene: ncls endmember spectra (smooth, with absorption features), abundances from smooth
    random fields by a sharpened softmax, the class map their argmax; noise and illumination added."""
    lam = torch.linspace(0, 1, bands, device="cuda")
    centres = torch.rand(ncls, 6, device="cuda")
    ends = (0.3 + 0.4 * torch.rand(ncls, 1, device="cuda") * lam + 0.2 * torch.exp(
        -((lam[None, None] - centres[..., None]) ** 2) / 0.004).sum(1))  # (ncls, bands)
    field = _smooth_noise(1, ncls, h, w, 24)[0]
    ab = (field * 4).softmax(0)  # (ncls, h, w)
    labels = ab.argmax(0)
    cube = torch.einsum("khw,kb->bhw", ab, ends) * (0.8 + 0.2 * _smooth_noise(1, 1, h, w, 48)[0])
    return cube + 0.01 * torch.randn(bands, h, w, device="cuda"), labels


def _pca(cube, k):
    bands = cube.shape[0]
    x = cube.reshape(bands, -1)
    x = x - x.mean(1, keepdim=True)
    cov = x @ x.t() / x.shape[1]
    _evals, evecs = torch.linalg.eigh(cov)
    comp = evecs[:, -k:].flip(1)
    red = (comp.t() @ x).view(k, *cube.shape[1:])
    return red / red.std((1, 2), keepdim=True)


def _patches(cube, ys, xs, p):
    """Patches (n, k, p, p) around (ys, xs) of a reflect-padded cube (k, h + 2r, w + 2r), by index arithmetic."""
    off = torch.arange(p, device=cube.device)
    yy = (ys[:, None] + off[None])[:, :, None]
    xx = (xs[:, None] + off[None])[:, None, :]
    return cube[:, yy, xx].permute(1, 0, 2, 3)


@_workload("hyperspectral image classification with a HybridSN-style network written by hand (random init): 3 scenes in turn with drawn sizes and band counts (145^2 x 200 like Indian Pines, 610 x 340 x 103 like Pavia University, 512 x 217 x 204 like Salinas, the order drawn), each made on the device from 9-16 endmember spectra (drawn) and smooth abundance maps, labels by argmax; PCA to 30 components by an eigendecomposition of the band covariance (fp32), the cube reflect-padded; a fresh network per scene: 3-D convolutions (7, 5, 3 spectral taps, 8-32 channels) then a 2-D convolution over the stacked spectral features, adaptive pooling and an MLP with dropout; training patches of 11-25 pixels square (drawn per batch) gathered by index arithmetic around 64-256 sampled labelled pixels (drawn); bf16 autocast, Adam with step decay, 720 steps a scene; then a full-scene prediction without grad over every pixel in chunks of 1,024 with 17-pixel patches, overall accuracy and per-class accuracy read back")
def hsi_spectral_3dconv_train(rng):
    scenes = _smoke([(145, 145, 200), (610, 340, 103), (512, 217, 204)], [(24, 20, 30), (20, 28, 24)])
    rng.shuffle(scenes)
    k = _smoke(30, 16)
    for h, w, bands in scenes:
        ncls = rng.randint(9, 16)
        with torch.no_grad():
            cube, labels = _hsi_scene(h, w, bands, ncls)
            red = _pca(cube, k)
            del cube
        r = _smoke(12, 8)
        padded = _F.pad(red[None], (r, r, r, r), mode="reflect")[0]
        model = _HybridSN(k, ncls).cuda()
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        sched = torch.optim.lr_scheduler.StepLR(opt, _smoke(240, 2), 0.5)
        sizes = _smoke([11, 13, 15, 17, 19, 21, 23, 25], [9, 11])
        for step in range(_smoke(720, 3)):
            model.train()
            n, p = rng.randint(_smoke(64, 4), _smoke(256, 8)), rng.choice(sizes)
            ys = torch.randint(0, h, (n,), device="cuda")
            xs = torch.randint(0, w, (n,), device="cuda")
            x = _patches(padded, ys + r - p // 2, xs + r - p // 2, p)
            y = labels[ys, xs]
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(x)
            loss = _F.cross_entropy(logits.float(), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            del x, logits
            if step % 180 == 0:
                float(loss)
        model.eval()
        p = _smoke(17, 9)
        correct = torch.zeros(ncls, device="cuda")
        total = torch.zeros(ncls, device="cuda")
        chunk = _smoke(1024, 64)
        with torch.no_grad():
            for c0 in range(0, h * w, chunk):
                idx = torch.arange(c0, min(c0 + chunk, h * w), device="cuda")
                ys, xs = idx // w, idx % w
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pred = model(_patches(padded, ys + r - p // 2, xs + r - p // 2, p)).argmax(-1)
                y = labels[ys, xs]
                correct.index_add_(0, y, (pred == y).float())
                total.index_add_(0, y, torch.ones_like(y, dtype=torch.float32))
        torch.cat([correct.sum()[None] / (h * w), correct / total.clamp_min(1)]).tolist()
        del model, opt, padded, red, labels


# ---------------------------------------------------------------- species distribution modelling, presence-only


def _loc_enc(lonlat, nfreq):
    """Sinusoidal encoding of (lon, lat) in radians at nfreq octaves, and the 3-D unit vector."""
    lon, lat = lonlat[:, 0], lonlat[:, 1]
    xyz = torch.stack([lat.cos() * lon.cos(), lat.cos() * lon.sin(), lat.sin()], -1)
    fr = 2.0 ** torch.arange(nfreq, device=lonlat.device, dtype=torch.float32)
    a = lonlat[:, :, None] * fr
    return torch.cat([xyz, a.sin().flatten(1), a.cos().flatten(1)], -1)


class _Sinr(_nn.Module):
    def __init__(self, din, h, blocks, nspecies):
        super().__init__()
        self.inp = _nn.Linear(din, h)
        self.blocks = _nn.ModuleList(_nn.Sequential(_nn.LayerNorm(h), _nn.Linear(h, h), _nn.ReLU(),
                                                    _nn.Dropout(0.3), _nn.Linear(h, h)) for _ in range(blocks))
        self.out = _nn.Linear(h, nspecies)

    def forward(self, x):
        h = _F.relu(self.inp(x))
        for blk in self.blocks:
            h = h + blk(h)
        return self.out(h)


@_workload("species distribution modelling from presence-only records with a SINR-style network written by hand (random init): 6,000 species with ranges made on the device (1-4 Gaussian kernels on the sphere each, environmental preferences), 20 environmental rasters (bioclim-like, 360 x 720) sampled at the locations by grid_sample, coordinates encoded sinusoidally at 6 octaves plus the unit vector; a residual MLP (width 512, 4 blocks, dropout) giving 6,000 logits; presence records drawn per batch (2,048-8,192, drawn) by species abundance within a drawn region (one of 6 continents' boxes or the globe); loss: the 'assume negative full' loss (the positive term weighted 2,048 for the observed species, all other species and the same number of uniformly drawn pseudo-absence locations negative); bf16 autocast, AdamW with cosine decay, 1,250 steps; every 250 range maps over the global grid (259,200 cells in chunks of 16,384) without grad, expected species richness and the range error against the true maps for 256 species read back")
def sdm_presence_only_mlp_train(rng):
    ns, nenv, nfreq = _smoke(6000, 50), _smoke(20, 4), 6
    gh, gw = _smoke(360, 18), _smoke(720, 36)
    env = _smooth_noise(1, nenv, gh, gw, 12)
    din = 3 + 4 * nfreq + nenv
    model = _Sinr(din, _smoke(512, 32), _smoke(4, 2), ns).cuda()
    steps = _smoke(1250, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    nk = 4
    centres = torch.stack([(torch.rand(ns, nk, device="cuda") * 2 - 1) * math.pi,
                           torch.asin(torch.rand(ns, nk, device="cuda") * 1.8 - 0.9)], -1)  # (ns, nk, 2)
    widths = 0.05 + 0.4 * torch.rand(ns, nk, device="cuda")
    active = (torch.rand(ns, nk, device="cuda") < 0.5).float()
    active[:, 0] = 1.0
    abund = torch.rand(ns, device="cuda").pow(3) + 1e-3
    pref = torch.randn(ns, nenv, device="cuda") * 0.5
    regions = [(-math.pi, math.pi, -1.4, 1.4), (-2.2, -0.9, 0.4, 1.2), (-1.4, -0.6, -0.9, 0.2), (-0.2, 0.7, 0.6, 1.2),
               (-0.3, 0.9, -0.6, 0.6), (1.2, 2.6, 0.1, 1.0), (2.0, 2.7, -0.7, -0.2)]

    def sample_env(lonlat):
        g = torch.stack([lonlat[:, 0] / math.pi, -lonlat[:, 1] / (math.pi / 2)], -1)[None, None]
        return _F.grid_sample(env, g, align_corners=False)[0, :, 0].t()

    def feats(lonlat):
        return torch.cat([_loc_enc(lonlat, nfreq), sample_env(lonlat)], -1)

    def true_prob(lonlat, sp):
        # presence probability of the species sp (k,) at every location (n, 2): (n, k)
        c = centres[sp]  # (k, nk, 2)
        d2 = ((lonlat[:, None, None] - c[None]) ** 2).sum(-1)
        kern = (torch.exp(-d2 / (2 * widths[sp][None] ** 2)) * active[sp][None]).amax(-1)
        suit = torch.sigmoid(sample_env(lonlat) @ pref[sp].t())
        return kern * suit

    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(2048, 16), _smoke(8192, 32))
        lo0, lo1, la0, la1 = rng.choice(regions)
        with torch.no_grad():
            sp = torch.multinomial(abund, b, replacement=True)
            comp = torch.randint(0, nk, (b,), device="cuda")
            mu = centres[sp, comp]
            loc = mu + widths[sp, comp][:, None] * torch.randn(b, 2, device="cuda")
            box = torch.tensor([lo0, la0], device="cuda"), torch.tensor([lo1, la1], device="cuda")
            loc = torch.maximum(torch.minimum(loc, box[1]), box[0])
            rnd = torch.stack([torch.rand(b, device="cuda") * 2 * math.pi - math.pi,
                               torch.asin(torch.rand(b, device="cuda") * 2 - 1)], -1)
            x = torch.cat([feats(loc), feats(rnd)])
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x)
        lg = logits.float()
        pos, neg_rand = lg[:b], lg[b:]
        lpos = _F.logsigmoid(pos.gather(1, sp[:, None]))[:, 0]
        oh = _F.one_hot(sp, ns).float()
        lneg = (_F.logsigmoid(-pos) * (1 - oh)).sum(1)
        lrand = _F.logsigmoid(-neg_rand).sum(1)
        loss = -(2048 * lpos + lneg + lrand).mean() / ns
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        del x, logits, lg, pos, neg_rand, oh
        if (step + 1) % _smoke(250, 3) == 0:
            model.eval()
            lon = torch.linspace(-math.pi, math.pi, gw, device="cuda")
            lat = torch.linspace(-1.5, 1.5, gh, device="cuda")
            grid = torch.stack(torch.meshgrid(lon, lat, indexing="xy"), -1).reshape(-1, 2)
            evs = torch.randperm(ns, device="cuda")[:_smoke(256, 8)]
            rich, err = [], []
            chunk = _smoke(16384, 128)
            with torch.no_grad():
                for c0 in range(0, grid.shape[0], chunk):
                    g = grid[c0:c0 + chunk]
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        pr = torch.sigmoid(model(feats(g)).float())
                    rich.append(pr.sum(1))
                    err.append((pr[:, evs] - true_prob(g, evs)).abs().sum(0))
            torch.stack([torch.cat(rich).mean(), torch.stack(err).sum(0).mean() / grid.shape[0]]).tolist()
            float(loss)

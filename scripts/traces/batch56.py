"""The fifty-sixth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch55_b.py are): neuroscience and brain-computer interfaces on the GPU (electrophysiology, neural decoding and
brain encoding models), written in torch alone, first half. Template-matching spike sorting of high-density probe
recordings (Kilosort-style: 384-channel Neuropixels-like chunks of drawn length synthesised on the device from
rank-3 templates and sparse spike trains, a high-pass filter by FFT, common median reference, a whitening matrix
from the first chunk by eigh, drift correction by cross-correlating each chunk's depth profile with a reference and
resampling the channels by a kriging matrix built from the soft shift, then matching pursuit: spatial projections,
grouped temporal convolutions, peak finding by max-pooling, template subtraction, 6-12 passes (drawn) a chunk;
waveforms of a drawn number of the strongest spikes gathered on their 32 nearest channels, PCA features kept, and
the features of all chunks clustered by k-means at the end), masked modelling of population spiking with a Neural
Data Transformer (NDT, Ye and Pandarinath 2021: six recording sessions of 96-320 neurons (drawn), per-session
read-in and read-out layers, trials of 40-240 bins (drawn buckets) from latent rotational dynamics through a Poisson
observation model on the device, 25% of the time bins masked and a set of held-out neurons, a transformer with a
local attention window as a bias; evaluation of co-smoothing bits per spike), an intracortical speech decoder
(Willett et al. 2023 style: sentences of 2-10 s binned at 20 ms, 512 features of 256 electrodes, uploaded from
reused pinned host buffers on a side stream one batch ahead; day-specific input layers for 20 recording days,
Gaussian smoothing, strided patching, a transformer encoder and CTC over 40 phonemes and blank; evaluation on held-out
sentences with greedy decodes read back), and a voxel-wise fMRI encoding model (frozen convolutional features of
natural-scene stimuli at four depths, pooled, then banded ridge regression per subject of 12k-40k voxels (drawn) by
eigendecomposition with a sweep of 16 penalties, five-fold cross-validation in voxel chunks, the best penalty per
voxel selected by one-hot weighting and the test correlations read back). Same conventions as the earlier batches:
nothing downloaded, data drawn at random on the device (or, for the speech decoder, from a few reused pinned host
buffers), `rng` the workload's random.Random for every shape, count and sampled choice, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: masks are
multiplied or filled in, counts fixed on the host, no boolean-mask indexing; losses, scores and decodes are read back
only at logging points. speech_bci_ctc_train uses a side stream (uploads waited on by event, the tensors
record_stream'ed); the others are single-stream. The transformers and the frozen CNN run under bf16 autocast; the
spike sorting, the ridge solves, the CTC loss and the other losses are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch56_b.py's header says the same of its half): every workload of this half
was run whole at its final real sizes (RECORD_SMOKE unset) on PyTorch's meta device with the helper's runner
(/tmp/b56/meta_run.py, not committed, a copy of /work/notes/meta_run.py: smoke_cpu.py's patching with "cuda" mapped
to "meta", readbacks answered with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking a math
path, streams, events and pinned memory no-ops, and, new in this batch, F.ctc_loss answered on the meta device by a
stand-in of the native kernel's outputs (the loss and its (batch, frames, 2 x target + 1) alpha table), since the
meta device has no CTC kernel; boolean-mask indexing, which the meta device cannot size, is avoided), its op outputs
counted there (events about 1.8x that count) and its peak live bytes tracked:
neuropixels_template_spikesort 307,498 op outputs, peak 3.21 GB; ndt_masked_spikes_train 327,332, 2.01 GB;
speech_bci_ctc_train 312,960, 1.06 GB; fmri_voxel_ridge_encode 329,981, 3.26 GB (peaks in fp32 where autocast
would take bf16).
record_new56.sh's header has them too. The CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- template-matching spike sorting


def _probe_templates(k, c, rank, length):
    """k templates of a rank-`rank` spatial x temporal factorisation: spatial footprints (c, k*rank) decaying with
    distance from a drawn main channel, temporal components (k*rank, 1, length) of biphasic spike shapes."""
    dev = "cuda"
    ypos = torch.arange(c, device=dev, dtype=torch.float32)[None, :] * 20.0 / 2  # two columns, 20 um pitch
    centre = torch.rand(k, 1, device=dev) * ypos.max()
    spread = 30.0 + 40.0 * torch.rand(k, 1, device=dev)
    foot = torch.exp(-(ypos - centre).pow(2) / (2 * spread ** 2))  # (k, c)
    u = foot[:, :, None] * (1.0 + 0.3 * torch.randn(k, c, rank, device=dev)) / math.sqrt(rank)
    u = u.permute(1, 0, 2).reshape(c, k * rank)
    t = torch.linspace(-1.0, 2.0, length, device=dev)[None, None]
    width = 0.15 + 0.1 * torch.rand(k * rank, 1, 1, device=dev)
    w = -torch.exp(-t.pow(2) / (2 * width ** 2)) + 0.4 * torch.exp(-(t - 0.6).pow(2) / (4 * width ** 2))
    w = w * torch.randn(k * rank, 1, 1, device=dev).sign()
    w = w / w.pow(2).sum(-1, keepdim=True).sqrt()
    return u, w


def _synth(u, w, amps, k, rank):
    """Spike trains (k, t) through the temporal components (grouped conv) and the spatial footprints: (c, t)."""
    x = amps[None].repeat_interleave(rank, 1)  # (1, k*rank, t)
    y = _F.conv1d(x, w.flip(-1), padding=w.shape[-1] // 2, groups=k * rank)[0]
    return u @ y


@_workload("template-matching spike sorting of high-density probe recordings written by hand (Kilosort-style): 384-channel chunks of 0.25-1.0 s at 30 kHz (drawn) synthesised on the device from 128 rank-3 templates, sparse spike trains and noise; high-pass by rfft/irfft, common median reference, a whitening matrix from the first chunk by eigh; drift correction per chunk by FFT cross-correlation of the depth profile with a reference and a kriging resampling matrix (384 x 384) from the soft shift; matching pursuit of 6-12 passes (drawn): spatial projection matmul, grouped temporal conv1d, peaks by max_pool1d over time and templates, subtraction by synthesis; 500-2,000 strongest spikes a chunk (drawn) gathered on their 32 nearest channels, 6 PCA features each kept; 1,100 chunks; then k-means (40 iterations, cdist, index_add) over all kept features for 3 cluster counts (drawn), inertia read back; fp32")
def neuropixels_template_spikesort(rng):
    dev = "cuda"
    fs, c, k, rank, L = 30000, _smoke(384, 16), _smoke(128, 6), 3, _smoke(61, 9)
    u, w = _probe_templates(k, c, rank, L)
    main = u.view(c, k, rank).pow(2).sum(-1).argmax(0)  # (k,) main channel of each template
    nbr = _smoke(32, 4)
    neigh = (main[:, None] + torch.arange(nbr, device=dev)[None] - nbr // 2).clamp(0, c - 1)  # (k, nbr)
    tnorm = (u.pow(2).sum(0).view(k, rank)).sum(-1).sqrt()
    pcs = torch.linalg.qr(torch.randn(L, 6, device=dev))[0]  # a fixed PCA basis, (L, 6)
    ypos = torch.arange(c, device=dev, dtype=torch.float32) * 10.0
    ref_profile, whiten, feats = None, None, []
    durations = _smoke([0.25, 0.5, 0.75, 1.0], [0.01, 0.02])
    for chunk in range(_smoke(1100, 2)):
        t = int(rng.choice(durations) * fs)
        with torch.no_grad():
            rate = rng.uniform(5.0, 20.0) / fs
            trains = (torch.rand(k, t, device=dev) < rate).float() * (8.0 + 6.0 * torch.rand(k, t, device=dev))
            raw = _synth(u, w, trains, k, rank) + torch.randn(c, t, device=dev) + 0.5 * torch.randn(c, 1, device=dev)
            f = torch.arange(t // 2 + 1, device=dev, dtype=torch.float32) * (fs / t)  # rfftfreq
            hp = 1.0 - torch.exp(-(f / 300.0).pow(4))
            x = torch.fft.irfft(torch.fft.rfft(raw, dim=-1) * hp, n=t, dim=-1)
            x = x - x.median(0, keepdim=True).values
            if whiten is None:
                cov = x @ x.T / t + 1e-3 * torch.eye(c, device=dev)
                ev, vec = torch.linalg.eigh(cov)
                whiten = vec @ torch.diag(ev.clamp_min(1e-6).rsqrt()) @ vec.T
            x = whiten @ x
            profile = x.pow(2).mean(-1)
            if ref_profile is None:
                ref_profile = profile
            xc = torch.fft.irfft(torch.fft.rfft(profile - profile.mean(), n=2 * c)
                                 * torch.fft.rfft(ref_profile - ref_profile.mean(), n=2 * c).conj(), n=2 * c)
            lags = torch.arange(2 * c, device=dev, dtype=torch.float32)
            lags = torch.where(lags < c, lags, lags - 2 * c) * 10.0
            shift = (torch.softmax(xc / (xc.abs().max() + 1e-6) * 20.0, 0) * lags).sum()
            kr = torch.exp(-(ypos[:, None] - ypos[None, :] - shift).pow(2) / (2 * 20.0 ** 2))
            x = (kr / kr.sum(1, keepdim=True)) @ x
            resid = x
            found = torch.zeros(k, t, device=dev)
            for _ in range(rng.randint(_smoke(6, 1), _smoke(12, 2))):
                proj = u.T @ resid  # (k*rank, t)
                score = _F.conv1d(proj[None], w, padding=L // 2, groups=k * rank)[0]
                score = score.view(k, rank, t).sum(1) / tnorm[:, None]
                best = score.max(0, keepdim=True).values
                locmax = _F.max_pool1d(best[None], L, 1, L // 2)[0]
                keep = ((score >= best) & (best >= locmax) & (score > 6.0)).float()
                amp = score * keep / tnorm[:, None]
                found = found + amp
                resid = resid - _synth(u, w, amp, k, rank)
            nsp = rng.randint(_smoke(500, 8), _smoke(2000, 16))
            top, where = found.reshape(-1).topk(nsp)
            tmpl, tt = where // t, where % t
            tt = tt.clamp(L // 2, t - L // 2 - 1) - L // 2
            win = x.unfold(1, L, 1)  # (c, t-L+1, L), a view
            wf = win[neigh[tmpl], tt[:, None].expand(-1, nbr)]  # (nsp, nbr, L)
            feats.append(torch.cat([(wf @ pcs).reshape(nsp, -1), ypos[main[tmpl]][:, None] / 100.0], 1))
            del trains, raw, x, resid, found, proj, score, win, wf
        if chunk % 30 == 0:
            float(top.mean())
    with torch.no_grad():
        allf = torch.cat(feats)
        del feats
        for kc in sorted(rng.sample(_smoke([96, 128, 192, 256], [3, 4, 5, 6]), 3)):
            cent = allf[torch.randint(0, allf.shape[0], (kc,), device=dev)]
            for _ in range(_smoke(40, 2)):
                d = torch.cdist(allf, cent)
                lab = d.argmin(1)
                sums = torch.zeros(kc, allf.shape[1], device=dev).index_add_(0, lab, allf)
                cnt = torch.zeros(kc, device=dev).index_add_(0, lab, torch.ones_like(lab, dtype=torch.float32))
                cent = torch.where(cnt[:, None] > 0, sums / cnt.clamp_min(1)[:, None], cent)
            d.min(1).values.pow(2).sum().item()


# ---------------------------------------------------------------- Neural Data Transformer masked modelling


def _trials(b, t, n, lat, readout, bias):
    """b trials of t bins: latent rotational dynamics (lat dims) mapped to n neurons' log-rates, Poisson counts."""
    dev = "cuda"
    tt = torch.arange(t, device=dev, dtype=torch.float32)[None, :, None] * 0.02
    omega = 2 * math.pi * (0.5 + 2.5 * torch.rand(b, 1, lat // 2, device=dev))
    phase = 2 * math.pi * torch.rand(b, 1, lat // 2, device=dev)
    amp = 0.5 + torch.rand(b, 1, lat // 2, device=dev)
    z = torch.cat([amp * torch.sin(omega * tt + phase), amp * torch.cos(omega * tt + phase)], -1)
    rates = torch.exp((z @ readout[:, :n] + bias[:n]).clamp(max=3.0))
    return torch.poisson(rates * 0.02 * 10), rates  # ~10 ms bins worth of rate scale


class _NdtLayer(_nn.Module):
    def __init__(self, d, heads, hidden, drop):
        super().__init__()
        self.heads, self.drop = heads, drop
        self.n1, self.n2 = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.proj = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.fc1, self.fc2 = _nn.Linear(d, hidden), _nn.Linear(hidden, d)

    def forward(self, x, bias):
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = _F.scaled_dot_product_attention(q, k, v, attn_mask=bias,
                                            dropout_p=self.drop if self.training else 0.0)
        x = x + _F.dropout(self.proj(a.transpose(1, 2).reshape(b, t, d)), self.drop, self.training)
        return x + _F.dropout(self.fc2(_F.gelu(self.fc1(self.n2(x)))), self.drop, self.training)


class _Ndt(_nn.Module):
    def __init__(self, sessions, d, heads, depth, tmax):
        super().__init__()
        self.readin = _nn.ModuleList(_nn.Linear(n, d) for n in sessions)
        self.readout = _nn.ModuleList(_nn.Linear(d, n) for n in sessions)
        self.pos = _nn.Parameter(torch.randn(1, tmax, d) * 0.02)
        self.layers = _nn.ModuleList(_NdtLayer(d, heads, 2 * d, 0.2) for _ in range(depth))
        self.norm = _nn.LayerNorm(d)

    def forward(self, s, x, bias):
        h = self.readin[s](x) + self.pos[:, :x.shape[1]]
        for layer in self.layers:
            h = layer(h, bias)
        return self.readout[s](self.norm(h))  # log-rates


@_workload("masked modelling of population spiking with a Neural Data Transformer written by hand (NDT, random init): 6 sessions of 96-320 neurons (drawn), per-session read-in and read-out linear layers; trials of 40-240 bins (bucket drawn per batch) generated on the device from latent rotational dynamics through a Poisson observation model; batches cut to a budget of 8,192 bins (34-204 trials); 25% of bins masked (zeroed, 80/10/10), 20% of each session's neurons held out of the input; 6 layers of width 256 (8 heads) with a local attention window of +-30 bins as a float bias; Poisson NLL on masked bins and held-out neurons; bf16 autocast, AdamW, gradient clipping; 420 steps, every 105 an evaluation of co-smoothing bits per spike over one batch of each session read back")
def ndt_masked_spikes_train(rng):
    dev = "cuda"
    lat = 16
    sessions = [rng.randint(_smoke(96, 8), _smoke(320, 16)) for _ in range(6)]
    nmax = max(sessions)
    readouts = [(torch.randn(lat, n, device=dev) * 0.4, torch.randn(n, device=dev) * 0.5 - 0.5) for n in sessions]
    held = [torch.arange(n, device=dev) >= int(n * 0.8) for n in sessions]
    buckets = _smoke([40, 80, 120, 160, 200, 240], [8, 12])
    d = _smoke(256, 16)
    model = _Ndt(sessions, d, _smoke(8, 2), _smoke(6, 1), max(buckets)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.05)
    budget, ctx = _smoke(8192, 64), _smoke(30, 3)
    bias_cache = {}

    def local_bias(t):
        if t not in bias_cache:
            i = torch.arange(t, device=dev)
            bias_cache[t] = torch.where((i[:, None] - i[None]).abs() <= ctx, 0.0, -1e4)[None, None]
        return bias_cache[t]

    def batch(s, t):
        ro, bi = readouts[s]
        spikes, rates = _trials(max(2, budget // t), t, sessions[s], lat, ro, bi)
        return spikes, rates

    steps = _smoke(420, 3)
    for step in range(steps):
        model.train()
        s, t = rng.randrange(6), rng.choice(buckets)
        spikes, _ = batch(s, t)
        hmask = held[s].float()
        m = (torch.rand(spikes.shape[0], t, 1, device=dev) < 0.25).float()
        r = torch.rand(spikes.shape[0], t, 1, device=dev)
        noise = torch.poisson(torch.full_like(spikes, 0.2))
        inp = spikes * (1 - m) + m * ((r >= 0.9).float() * spikes + ((r >= 0.8) & (r < 0.9)).float() * noise)
        inp = inp * (1 - hmask)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logr = model(s, inp, local_bias(t))
        nll = _F.poisson_nll_loss(logr.float(), spikes, log_input=True, reduction="none")
        wt = torch.clamp(m + hmask, max=1.0).expand_as(nll)
        loss = (nll * wt).sum() / wt.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 200.0)
        opt.step()
        del spikes, inp, logr, nll, wt, m, r, noise
        if (step + 1) % _smoke(105, 3) == 0:
            model.eval()
            bps = []
            with torch.no_grad():
                for s in range(6):
                    spikes, _ = batch(s, rng.choice(buckets))
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        logr = model(s, spikes * (1 - held[s].float()), local_bias(spikes.shape[1])).float()
                    hm = held[s].float()
                    ll = ((spikes * logr - logr.exp()) * hm).sum()
                    mean = (spikes * hm).sum((0, 1)) / (spikes.shape[0] * spikes.shape[1])
                    ll0 = ((spikes * mean.clamp_min(1e-6).log() - mean) * hm).sum()
                    bps.append((ll - ll0) / ((spikes * hm).sum() * math.log(2) + 1e-6))
                torch.stack(bps).tolist()
            float(loss)


# ---------------------------------------------------------------- intracortical speech decoding with CTC


class _SpeechDecoder(_nn.Module):
    def __init__(self, days, feat, d, heads, depth, patch, stride, nphone):
        super().__init__()
        self.patch, self.stride = patch, stride
        self.day_w = _nn.Parameter(torch.eye(feat)[None].repeat(days, 1, 1))
        self.day_b = _nn.Parameter(torch.zeros(days, 1, feat))
        self.inp = _nn.Linear(feat * patch, d)
        self.layers = _nn.ModuleList(_NdtLayer(d, heads, 4 * d, 0.1) for _ in range(depth))
        self.norm = _nn.LayerNorm(d)
        self.out = _nn.Linear(d, nphone + 1)
        k = torch.arange(-10, 11, dtype=torch.float32)
        self.register_buffer("smooth", (torch.exp(-k ** 2 / (2 * 2.0 ** 2)) / torch.exp(-k ** 2 / 8.0).sum())
                             .view(1, 1, -1))

    def forward(self, x, day, pad):
        # day-specific input layer (an affine map and softsign per recording day), then Gaussian smoothing
        x = _F.softsign(torch.bmm(x, self.day_w[day]) + self.day_b[day])
        b, t, f = x.shape
        x = _F.conv1d(x.transpose(1, 2).reshape(b * f, 1, t), self.smooth, padding=10).view(b, f, t)
        x = x.unfold(2, self.patch, self.stride).permute(0, 2, 3, 1).reshape(b, -1, self.patch * f)
        h = self.inp(x)
        bias = (pad.to(h.dtype) * -1e4)[:, None, None, :]  # the padding mask as a float bias
        for layer in self.layers:
            h = layer(h, bias)
        return self.out(self.norm(h))


@_workload("intracortical speech BCI decoder written by hand (random init): sentences of 2-10 s (drawn) binned at 20 ms, 512 features (threshold crossings and spike-band power of 256 electrodes), each batch of 16-48 sentences (drawn, cut to a budget of 12,000 bins) padded to its longest and uploaded from reused pinned host buffers on a side stream one batch ahead (waited on by event, record_stream'ed); white-noise and baseline-shift augmentation on the device; day-specific input layers (512 x 512 affine and softsign) for 20 recording days, Gaussian smoothing by conv1d, strided patches of 16 bins at stride 4, a 5-layer transformer encoder of width 384 (6 heads) with a padding mask, CTC over 40 phonemes and blank; bf16 autocast, AdamW with warm-up, gradient clipping; 480 steps, every 120 an evaluation of 4 held-out batches without grad, greedy decodes read back for the phoneme error rate")
def speech_bci_ctc_train(rng):
    dev = "cuda"
    days, feat, nphone = 20, _smoke(512, 16), 40
    patch, stride = _smoke(16, 4), 4
    model = _SpeechDecoder(days, feat, _smoke(384, 32), _smoke(6, 2), _smoke(5, 1), patch, stride, nphone).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.999), weight_decay=1e-5)
    steps, warm = _smoke(480, 3), _smoke(40, 1)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warm))
    tmin, tmax = _smoke(100, 24), _smoke(500, 40)  # bins of 20 ms
    bmax, budget = _smoke(48, 3), _smoke(12000, 96)
    host = [torch.randn(bmax * tmax * feat).pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    done = [None, None]

    def fetch(i):
        b = rng.randint(min(_smoke(16, 2), bmax), bmax)
        lens = [rng.randint(tmin, tmax) for _ in range(b)]
        while b > 2 and b * max(lens) > budget:
            b -= 1
            lens = lens[:b]
        t = max(lens)
        s = i % 2
        if done[s] is not None:
            done[s].synchronize()
        with torch.cuda.stream(side):
            x = host[s][:b * t * feat].view(b, t, feat).to("cuda", non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        done[s] = ev
        return x, ev, lens, rng.randrange(days)

    def frames(n):
        return (n - patch) // stride + 1

    def step_data(x, lens, train):
        b, t, _ = x.shape
        tl = torch.tensor(lens, device=dev)
        binmask = (torch.arange(t, device=dev)[None] < tl[:, None]).float()[..., None]
        if train:
            x = x + 0.8 * torch.randn_like(x) + 0.2 * torch.randn(b, 1, feat, device=dev)
        x = x * binmask
        nfr = frames(t)
        flen = [max(1, frames(n)) for n in lens]
        pad = torch.arange(nfr, device=dev)[None] >= torch.tensor(flen, device=dev)[:, None]
        tlen = [max(1, min(f // 2, n // 6)) for f, n in zip(flen, lens)]  # ~ one phoneme per 120 ms
        targets = torch.randint(1, nphone + 1, (b, max(tlen)), device=dev)
        return x, pad, flen, tlen, targets

    nxt = fetch(0)
    for step in range(steps):
        model.train()
        x, ev, lens, day = nxt
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        x.record_stream(cur)
        nxt = fetch(step + 1)
        x, pad, flen, tlen, targets = step_data(x, lens, True)
        dayi = torch.full((x.shape[0],), day, device=dev, dtype=torch.long)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x, dayi, pad)
        logp = logits.float().log_softmax(-1).transpose(0, 1)
        loss = _F.ctc_loss(logp, targets, torch.tensor(flen, device=dev), torch.tensor(tlen, device=dev),
                           blank=0, zero_infinity=True)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
        opt.step()
        sched.step()
        del x, pad, logits, logp, targets
        if (step + 1) % _smoke(120, 3) == 0:
            model.eval()
            with torch.no_grad():
                for _ in range(_smoke(4, 1)):
                    x, ev, lens, day = nxt
                    cur.wait_event(ev)
                    x.record_stream(cur)
                    nxt = fetch(step + 1)
                    x, pad, flen, tlen, targets = step_data(x, lens, False)
                    dayi = torch.full((x.shape[0],), day, device=dev, dtype=torch.long)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        logits = model(x, dayi, pad)
                    best = logits.float().argmax(-1)
                    best.cpu()  # greedy decodes: collapse repeats and blanks, edit distance on the host
                    del x, pad, logits, best
            float(loss)


# ---------------------------------------------------------------- voxel-wise fMRI encoding with ridge regression


class _FeatNet(_nn.Module):
    """A frozen convolutional feature extractor (random init) with four stages; each stage's map is pooled."""

    def __init__(self, w):
        super().__init__()
        chans, layers, c = (w, 2 * w, 4 * w, 8 * w), [], 3
        for i, co in enumerate(chans):
            layers.append(_nn.Sequential(
                _nn.Conv2d(c, co, 7 if i == 0 else 3, stride=4 if i == 0 else 2, padding=3 if i == 0 else 1),
                _nn.BatchNorm2d(co), _nn.ReLU(), _nn.Conv2d(co, co, 3, padding=1), _nn.BatchNorm2d(co), _nn.ReLU(),
                _nn.Conv2d(co, co, 3, padding=1), _nn.BatchNorm2d(co), _nn.ReLU()))
            c = co
        self.stages = _nn.ModuleList(layers)

    def forward(self, x, pools):
        outs = []
        for st, p in zip(self.stages, pools):
            x = st(x)
            outs.append(_F.adaptive_avg_pool2d(x, p).flatten(1))
        return outs


@_workload("voxel-wise fMRI encoding model written by hand (random init): a frozen four-stage CNN (width 64, bf16 autocast, no grad) extracts features of 6,000 natural-scene stimuli of 224^2 in batches of 48-128 (drawn), pooled per stage to 1,024-2,048 features; per subject (3 subjects, 12k-40k voxels drawn) responses simulated as a sparse mixture of stages plus noise; for each of the four feature spaces ridge regression by eigendecomposition of the Gram matrix (eigh) with a sweep of 16 penalties, five-fold cross-validation in voxel chunks of 1,024 (fit, predict, per-voxel correlation per penalty), the best penalty per voxel by one-hot weighting, a refit on all training data and test correlations; the best feature space per voxel and the mean correlations read back; fp32 solves")
def fmri_voxel_ridge_encode(rng):
    dev = "cuda"
    net = _FeatNet(_smoke(64, 4)).cuda().eval()
    pools = _smoke([4, 3, 2, 2], [1, 1, 1, 1])  # 1,024, 1,152, 1,024 and 2,048 features at width 64
    nstim, res = _smoke(6000, 48), _smoke(224, 32)
    feats = [[] for _ in range(4)]
    with torch.no_grad():
        done = 0
        while done < nstim:
            b = min(nstim - done, rng.randint(_smoke(48, 4), _smoke(128, 8)))
            img = torch.rand(b, 3, res, res, device=dev)
            img = (img - 0.45) / 0.25
            with torch.autocast("cuda", dtype=torch.bfloat16):
                outs = net(img, pools)
            for i, o in enumerate(outs):
                feats[i].append(o.float())
            done += b
        feats = [torch.cat(f) for f in feats]
        feats = [(f - f.mean(0)) / (f.std(0) + 1e-6) for f in feats]
    ntest = nstim // 6
    ntrain = nstim - ntest
    lambdas = torch.logspace(-1, 6, 16, device=dev)
    chunk, folds = _smoke(1024, 16), 5
    for subj in range(3):
        nvox = rng.randint(_smoke(12000, 20), _smoke(40000, 40))
        with torch.no_grad():
            mix = torch.softmax(torch.randn(nvox, 4, device=dev) * 2, -1)
            y = torch.zeros(nstim, nvox, device=dev)
            for i, f in enumerate(feats):
                wt = torch.randn(f.shape[1], nvox, device=dev) / math.sqrt(f.shape[1])
                y += (f @ wt) * mix[:, i]
                del wt
            y = y + torch.randn_like(y) * (0.5 + torch.rand(nvox, device=dev))
            y = (y - y.mean(0)) / (y.std(0) + 1e-6)
            ytr, yte = y[:ntrain], y[ntrain:]
            best_r = []
            for f in feats:
                xtr, xte = f[:ntrain], f[ntrain:]
                perm = torch.randperm(ntrain, device=dev)
                fold_size = ntrain // folds
                eig = []
                for fo in range(folds):
                    va = perm[fo * fold_size:(fo + 1) * fold_size]
                    tr = torch.cat([perm[:fo * fold_size], perm[(fo + 1) * fold_size:]])
                    xa = xtr[tr]
                    ev, vec = torch.linalg.eigh(xa.T @ xa)
                    eig.append((tr, va, xa, ev, vec))
                evf, vecf = torch.linalg.eigh(xtr.T @ xtr)  # the refit's eigendecomposition, all training data
                rs = []
                for v0 in range(0, nvox, chunk):
                    yc = ytr[:, v0:v0 + chunk]
                    score = torch.zeros(len(lambdas), yc.shape[1], device=dev)
                    for tr, va, xa, ev, vec in eig:
                        proj = vec.T @ (xa.T @ yc[tr])  # (p, v)
                        yv = yc[va]
                        xv = xtr[va] @ vec
                        for li in range(len(lambdas)):
                            pred = xv @ (proj / (ev + lambdas[li])[:, None])
                            pc, yc_ = pred - pred.mean(0), yv - yv.mean(0)
                            score[li] += (pc * yc_).sum(0) / (pc.norm(dim=0) * yc_.norm(dim=0) + 1e-6)
                        del proj, yv, xv
                    onehot = _F.one_hot(score.argmax(0), len(lambdas)).float()  # (v, L)
                    proj = vecf.T @ (xtr.T @ yc)
                    shrink = (onehot @ lambdas)[None]  # (1, v) the best penalty per voxel
                    wgt = vecf @ (proj / (evf[:, None] + shrink))
                    pred = xte @ wgt
                    pc, yt = pred - pred.mean(0), yte[:, v0:v0 + chunk] - yte[:, v0:v0 + chunk].mean(0)
                    rs.append((pc * yt).sum(0) / (pc.norm(dim=0) * yt.norm(dim=0) + 1e-6))
                    del yc, score, onehot, proj, wgt, pred, pc, yt
                best_r.append(torch.cat(rs))
                del eig, evf, vecf
            r = torch.stack(best_r)
            torch.stack([r.mean(1).max(), r.max(0).values.mean(), r.argmax(0).float().mean()]).tolist()
            del y, ytr, yte, r, best_r

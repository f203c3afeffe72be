"""The seventy-second batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch71_b.py are): music and audio production, written in torch alone, first half. Band-split RoFormer-style music
source separation training (stereo 44.1 kHz mixtures remixed on the device from four random stems with drawn gains,
an STFT, 29 band-split projections of drawn widths, transformer blocks alternating over time and over bands, per-band
mask-estimation MLPs with GLU giving a complex mask for the vocals, an overlap-add inverse STFT written by fold, an L1
waveform loss plus a multi-resolution STFT loss; drawn batch sizes and segment lengths, an SDR on a held-out mixture
read back now and then), Onsets-and-Frames-style piano transcription training (piano rolls drawn on the device and
rendered by an additive synthesizer, log-mel features, four convolutional acoustic stacks for onsets, offsets,
frames and velocities, each followed by a small transformer in place of the BiLSTM, the frame head conditioned on the
detached onset and offset predictions, BCE and onset-weighted velocity losses, frame-level precision, recall and F1
on a held-out clip read back at intervals), HiFi-GAN V1 vocoder training (a transposed-convolution generator with
multi-receptive-field residual blocks, multi-period and multi-scale discriminators, LSGAN, feature-matching and mel L1
losses, two AdamW optimisers, drawn batch sizes, whole-utterance synthesis of drawn length at evaluation points) and
an EnCodec-style neural codec service (a SEANet convolutional encoder and decoder at 24 kHz, residual vector
quantisation over up to 32 codebooks, requests of 1-8 clips of drawn length and a drawn bandwidth, each request's
int16 PCM uploaded from 2 reused pinned host buffers on a side stream one request ahead, codes copied back as int16
and an SI-SNR per clip read back). Same conventions as the earlier batches: nothing downloaded, data drawn at random
on the device (or, for the codec service, from a few reused pinned host buffers), `rng` the workload's random.Random
for every shape, count and sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny.
No control flow reads a tensor's value: steps, requests and codebook counts are fixed on the host, no boolean-mask
indexing; losses, SDRs, F1 scores and SI-SNRs are read back only at logging points. encodec_rvq_codec_serve uses a
side stream (uploads waited on by event, the tensors record_stream'ed); the others are single-stream. The separator,
the transcriber, the vocoder and the codec run under bf16 autocast; STFTs, mel filterbanks, the inverse STFT, the
losses and the vector-quantiser distances are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.
torch.istft is written out (irfft, window, fold, the window-envelope division) because the meta runner has no path
for its window check.

Real sizes checked before recording: see record_new72.sh's header for each workload's op outputs and peak live
bytes counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, randint

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- shared audio helpers


def _stft(x, n_fft, hop):
    """Complex STFT (centred, Hann window) of x (N, L) in fp32: (N, n_fft // 2 + 1, frames)."""
    w = torch.hann_window(n_fft, device="cuda")
    return torch.stft(x.float(), n_fft, hop, window=w, return_complex=True)


def _istft(spec, n_fft, hop, length):
    """The inverse of _stft by overlap-add: irfft of each frame, Hann synthesis window, fold, divided by the
    summed squared window; (N, length)."""
    w = torch.hann_window(n_fft, device="cuda")
    t = spec.shape[-1]
    frames = torch.fft.irfft(spec, n=n_fft, dim=1) * w[None, :, None]
    total = n_fft + hop * (t - 1)
    y = _F.fold(frames, (1, total), (1, n_fft), stride=(1, hop))
    env = _F.fold((w * w)[None, :, None].expand(1, n_fft, t), (1, total), (1, n_fft), stride=(1, hop))
    y = (y / env.clamp(min=1e-8)).flatten(1)
    return y[:, n_fft // 2: n_fft // 2 + length]


def _mel_fb(n_freqs, n_mels, sr, fmin=0.0, fmax=None):
    """A triangular (HTK-scale) mel filterbank made on the device: (n_freqs, n_mels)."""
    fmax = fmax or sr / 2
    lo, hi = 2595 * math.log10(1 + fmin / 700), 2595 * math.log10(1 + fmax / 700)
    hz = 700 * (10 ** (torch.linspace(lo, hi, n_mels + 2, device="cuda") / 2595) - 1)
    f = torch.linspace(0, sr / 2, n_freqs, device="cuda")
    a, m, c = hz[:-2, None], hz[1:-1, None], hz[2:, None]
    return torch.minimum((f - a) / (m - a), (c - f) / (c - m)).clamp(min=0).T.contiguous()


def _log_mel(x, n_fft, hop, fb):
    """Log-mel spectrogram of x (N, L): (N, frames, n_mels)."""
    return (_stft(x, n_fft, hop).abs().transpose(1, 2) @ fb).clamp(min=1e-5).log()


def _mrstft_loss(pred, target, ffts):
    """Multi-resolution STFT loss (spectral convergence plus log-magnitude L1) of (N, L) signals."""
    loss = 0.0
    for n in ffts:
        p, t = _stft(pred, n, n // 4).abs() + 1e-5, _stft(target, n, n // 4).abs() + 1e-5
        loss = loss + torch.linalg.vector_norm(p - t) / torch.linalg.vector_norm(t) + (p.log() - t.log()).abs().mean()
    return loss / len(ffts)


def _sdr(est, ref):
    """Signal-to-distortion ratio in dB of est against ref, each (N, L): (N,)."""
    return 10 * torch.log10(ref.pow(2).sum(-1) / (est - ref).pow(2).sum(-1).clamp(min=1e-8) + 1e-8)


def _random_stems(b, stems, length, sr):
    """Random stereo stems (b, stems, 2, length): band-limited noise under drawn envelopes plus a few partials."""
    t = torch.arange(length, device="cuda").float() / sr
    f0 = 80 * 2 ** (torch.rand(b, stems, 1, 4, device="cuda") * 4)
    # partials: (b, stems, 4, length) summed, then a slow envelope and a little noise, panned to stereo
    ph = 2 * math.pi * f0.transpose(2, 3) * t  # (b, stems, 4, length)
    tone = (ph.sin() / torch.arange(1, 5, device="cuda").float()[:, None]).sum(2)
    env = _F.interpolate(torch.rand(b * stems, 1, max(2, length // 4096), device="cuda"), size=length,
                         mode="linear").view(b, stems, length)
    mono = env * (tone + 0.3 * torch.randn(b, stems, length, device="cuda"))
    pan = torch.rand(b, stems, 2, 1, device="cuda")
    return mono[:, :, None] * pan


# ---------------------------------------------------------------- band-split RoFormer source separation


def _band_widths(n_freqs):
    widths = [8] * 8 + [16] * 8 + [32] * 6 + [64] * 4 + [128] * 3 if n_freqs > 1024 else [8] * (n_freqs // 8)
    widths[-1] += n_freqs - sum(widths)
    return widths


class _BandSplitSeparator(_nn.Module):
    def __init__(self, n_freqs, d, depth, heads):
        super().__init__()
        self.widths = _band_widths(n_freqs)
        self.split = _nn.ModuleList(_nn.Sequential(_nn.LayerNorm(4 * w), _nn.Linear(4 * w, d)) for w in self.widths)
        self.time_blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(depth))
        self.band_blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(depth))
        self.band_pos = _nn.Parameter(torch.randn(len(self.widths), d) * 0.02)
        self.norm = _nn.LayerNorm(d)
        self.masks = _nn.ModuleList(_nn.Sequential(_nn.Linear(d, 4 * d), _nn.Tanh(), _nn.Linear(4 * d, 2 * 4 * w),
                                                   _nn.GLU(-1)) for w in self.widths)

    def forward(self, spec):
        """spec: (B, 2, F, T) complex mixture; returns the complex vocal mask (B, 2, F, T)."""
        b, _, f, t = spec.shape
        ri = torch.view_as_real(spec).permute(0, 3, 2, 1, 4)  # (B, T, F, 2ch, 2)
        toks, start = [], 0
        for w, proj in zip(self.widths, self.split):
            toks.append(proj(ri[:, :, start:start + w].reshape(b, t, 4 * w)))
            start += w
        x = torch.stack(toks, 2) + self.band_pos  # (B, T, K, d)
        k, d = x.shape[2], x.shape[3]
        for tb, bb in zip(self.time_blocks, self.band_blocks):
            x = tb(x.transpose(1, 2).reshape(b * k, t, d)).view(b, k, t, d).transpose(1, 2)
            x = bb(x.reshape(b * t, k, d)).view(b, t, k, d)
        x = self.norm(x)
        m = torch.cat([est(x[:, :, i]).view(b, t, w, 2, 2) for i, (w, est) in
                       enumerate(zip(self.widths, self.masks))], 2)  # (B, T, F, 2ch, 2)
        return torch.view_as_complex(m.float().permute(0, 3, 2, 1, 4).contiguous())


@_workload("band-split RoFormer-style music source separation training (random init): stereo 44.1 kHz mixtures remixed on the device from 4 random stems (partials under envelopes plus noise) with drawn gains, batch 2-4 (drawn) of 3-5 s segments (drawn), an STFT of 2,048 / hop 512, 29 band-split projections (LayerNorm + Linear of band widths 8-129 bins x stereo x re/im) to width 128, 4 pairs of pre-norm transformer blocks (4 heads) alternating over time and over bands, per-band mask-estimation MLPs (tanh, GLU) giving a complex vocal mask, an inverse STFT by irfft and fold, L1 waveform plus 3-resolution STFT losses, AdamW with gradient clipping under bf16 autocast; 115 steps, the loss read back every 10 and a held-out 8 s mixture separated and its SDR read back every 50")
def bandsplit_roformer_sep_train(rng):
    sr, n_fft, hop = 44100, _smoke(2048, 256), _smoke(512, 64)
    nf = n_fft // 2 + 1
    model = _BandSplitSeparator(nf, _smoke(128, 16), _smoke(4, 1), 4).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    seg_unit = _smoke(sr, 2048)

    def batch(b, seconds):
        length = seconds * seg_unit
        stems = _random_stems(b, 4, length, sr)
        gains = 0.25 + 1.25 * torch.rand(b, 4, 1, 1, device="cuda")
        stems = stems * gains
        mix = stems.sum(1)  # (b, 2, L)
        return mix, stems[:, 0], length

    def separate(mix, length):
        b = mix.shape[0]
        spec = _stft(mix.reshape(b * 2, length), n_fft, hop)
        spec = spec.view(b, 2, nf, spec.shape[-1])
        with torch.autocast("cuda", dtype=torch.bfloat16):
            mask = model(spec)
        est = (mask * spec).view(b * 2, nf, spec.shape[-1])
        return _istft(est, n_fft, hop, length).view(b, 2, length)

    steps = _smoke(115, 3)
    for step in range(steps):
        b, seconds = rng.randint(2, _smoke(4, 2)), rng.randint(3, 5)
        mix, vocals, length = batch(b, seconds)
        model.train()
        est = separate(mix, length)
        loss = (est - vocals).abs().mean() + _mrstft_loss(est.reshape(2 * b, length), vocals.reshape(2 * b, length),
                                                          _smoke([4096, 2048, 1024], [256, 128]))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        del mix, vocals, est
        if step % 10 == 0:
            float(loss)
        del loss
        if (step + 1) % _smoke(50, 3) == 0:
            model.eval()
            with torch.no_grad():
                mix, vocals, length = batch(1, 8)
                est = separate(mix, length)
                _sdr(est.reshape(2, length), vocals.reshape(2, length)).tolist()
            del mix, vocals, est


# ---------------------------------------------------------------- Onsets-and-Frames-style piano transcription


class _ConvStack(_nn.Module):
    """Onsets and Frames' acoustic model: 3 convs with BatchNorm, frequency max-pooling, a Linear to `out`."""

    def __init__(self, n_mels, c, out):
        super().__init__()
        self.cnn = _nn.Sequential(
            _nn.Conv2d(1, c, 3, padding=1), _nn.BatchNorm2d(c), _nn.ReLU(),
            _nn.Conv2d(c, c, 3, padding=1), _nn.BatchNorm2d(c), _nn.ReLU(), _nn.MaxPool2d((1, 2)), _nn.Dropout(0.25),
            _nn.Conv2d(c, 2 * c, 3, padding=1), _nn.BatchNorm2d(2 * c), _nn.ReLU(), _nn.MaxPool2d((1, 2)),
            _nn.Dropout(0.25))
        self.fc = _nn.Sequential(_nn.Linear(2 * c * (n_mels // 4), out), _nn.Dropout(0.5))

    def forward(self, mel):
        x = self.cnn(mel[:, None])  # (B, 2c, T, n_mels // 4)
        return self.fc(x.transpose(1, 2).flatten(2))


class _SeqHead(_nn.Module):
    """A small transformer over time (in place of the BiLSTM) and a Linear to the 88 keys."""

    def __init__(self, din, d, layers, heads=4):
        super().__init__()
        self.inp = _nn.Linear(din, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.out = _nn.Linear(d, 88)

    def forward(self, x):
        x = self.inp(x)
        for blk in self.blocks:
            x = blk(x)
        return self.out(x)


class _PianoTranscriber(_nn.Module):
    def __init__(self, n_mels, c, fc, d, layers):
        super().__init__()
        self.onset_stack, self.offset_stack = _ConvStack(n_mels, c, fc), _ConvStack(n_mels, c, fc)
        self.frame_stack, self.velocity_stack = _ConvStack(n_mels, c, fc), _ConvStack(n_mels, c, fc)
        self.onset_head, self.offset_head = _SeqHead(fc, d, layers), _SeqHead(fc, d, layers)
        self.frame_fc = _nn.Linear(fc, 88)
        self.combined = _SeqHead(3 * 88, d, layers)
        self.velocity_fc = _nn.Linear(fc, 88)

    def forward(self, mel):
        onset = self.onset_head(self.onset_stack(mel))
        offset = self.offset_head(self.offset_stack(mel))
        act = self.frame_fc(self.frame_stack(mel))
        frame = self.combined(torch.cat([onset.sigmoid().detach(), offset.sigmoid().detach(), act.sigmoid()], -1))
        return onset, offset, frame, self.velocity_fc(self.velocity_stack(mel))


@_workload("Onsets-and-Frames-style piano transcription training (random init): piano rolls (88 keys) drawn on the device (Bernoulli onsets, held 14 frames by a causal box filter, random velocities) rendered at 16 kHz by an additive synthesizer (a frame-rate einsum with a sine basis) plus noise, batch 4-8 (drawn) of 160-512 frames (hop 512, drawn in steps of 32), a 229-band log-mel from an STFT of 2,048, four convolutional acoustic stacks (32/64 channels, BatchNorm, frequency pooling, Linear 768) for onsets, offsets, frames and velocities, each followed by a 2-layer transformer (width 256) in place of the BiLSTM, the frame head conditioned on the detached onset and offset predictions; BCE losses and an onset-weighted velocity MSE, Adam with gradient clipping under bf16 autocast; 265 steps, the losses read back every 20 and frame precision, recall and F1 on a held-out 625-frame clip every 70")
def piano_transcription_convstack_train(rng):
    sr, n_fft, hop, n_mels = 16000, _smoke(2048, 256), _smoke(512, 64), _smoke(229, 16)
    model = _PianoTranscriber(n_mels, _smoke(32, 4), _smoke(768, 32), _smoke(256, 16), 2).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=6e-4)
    fb = _mel_fb(n_fft // 2 + 1, n_mels, sr, 30.0, 8000.0)
    keys = torch.arange(88, device="cuda").float()
    freqs = 440 * 2 ** ((keys + 21 - 69) / 12)
    basis = torch.sin(2 * math.pi * freqs[:, None] * torch.arange(hop, device="cuda").float()[None] / sr)  # (88, hop)
    hold = torch.ones(88, 1, _smoke(14, 4), device="cuda")

    def batch(b, t):
        onsets = (torch.rand(b, t, 88, device="cuda") < 0.004).float()
        held = _F.conv1d(_F.pad(onsets.transpose(1, 2), (hold.shape[-1] - 1, 0)), hold, groups=88)
        frames = held.clamp(max=1).transpose(1, 2)
        offsets = (frames - _F.pad(frames, (0, 0, 0, 1))[:, 1:]).clamp(min=0)
        vel = torch.rand(b, t, 88, device="cuda") * onsets
        amp = frames * (0.3 + torch.rand(b, 1, 88, device="cuda"))
        audio = torch.einsum("btk,kh->bth", amp, basis).reshape(b, t * hop) / 8
        audio = audio + 0.01 * torch.randn_like(audio)
        mel = _log_mel(audio, n_fft, hop, fb)[:, :t]
        return mel, onsets, offsets, frames, vel

    def losses(out, onsets, offsets, frames, vel):
        on, off, fr, v = [o.float() for o in out]
        bce = _F.binary_cross_entropy_with_logits
        lv = (onsets * (v.sigmoid() - vel) ** 2).sum() / onsets.sum().clamp(min=1)
        return torch.stack([bce(on, onsets), bce(off, offsets), bce(fr, frames), lv])

    steps = _smoke(265, 3)
    for step in range(steps):
        b, t = rng.randint(_smoke(4, 2), _smoke(8, 2)), randint(rng, _smoke(160, 8), _smoke(512, 16), 8)
        mel, onsets, offsets, frames, vel = batch(b, t)
        model.train()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(mel)
        parts = losses(out, onsets, offsets, frames, vel)
        loss = parts.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 3.0)
        opt.step()
        del mel, onsets, offsets, frames, vel, out, loss
        if step % 20 == 0:
            parts.tolist()
        del parts
        if (step + 1) % _smoke(70, 3) == 0:
            model.eval()
            with torch.no_grad():
                mel, onsets, offsets, frames, vel = batch(1, _smoke(625, 24))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    fr = model(mel)[2].float()
                pred = (fr.sigmoid() > 0.5).float()
                tp = (pred * frames).sum()
                p, r = tp / pred.sum().clamp(min=1), tp / frames.sum().clamp(min=1)
                torch.stack([p, r, 2 * p * r / (p + r).clamp(min=1e-8)]).tolist()
            del mel, onsets, offsets, frames, vel, fr, pred, tp, p, r


# ---------------------------------------------------------------- HiFi-GAN V1 vocoder


class _ResBlock1(_nn.Module):
    def __init__(self, c, k, dilations=(1, 3, 5)):
        super().__init__()
        self.c1 = _nn.ModuleList(_nn.Conv1d(c, c, k, dilation=d, padding=d * (k - 1) // 2) for d in dilations)
        self.c2 = _nn.ModuleList(_nn.Conv1d(c, c, k, padding=(k - 1) // 2) for _ in dilations)

    def forward(self, x):
        for a, b in zip(self.c1, self.c2):
            x = x + b(_F.leaky_relu(a(_F.leaky_relu(x, 0.1)), 0.1))
        return x


class _HiFiGenerator(_nn.Module):
    def __init__(self, n_mels, c, rates=(8, 8, 2, 2), kernels=(3, 7, 11)):
        super().__init__()
        self.pre = _nn.Conv1d(n_mels, c, 7, padding=3)
        self.ups = _nn.ModuleList(_nn.ConvTranspose1d(c // 2 ** i, c // 2 ** (i + 1), 2 * r, r, padding=r // 2)
                                  for i, r in enumerate(rates))
        self.mrf = _nn.ModuleList(_nn.ModuleList(_ResBlock1(c // 2 ** (i + 1), k) for k in kernels)
                                  for i in range(len(rates)))
        self.post = _nn.Conv1d(c // 2 ** len(rates), 1, 7, padding=3)

    def forward(self, mel):
        x = self.pre(mel)
        for up, blocks in zip(self.ups, self.mrf):
            x = up(_F.leaky_relu(x, 0.1))
            x = sum(blk(x) for blk in blocks) / len(blocks)
        return torch.tanh(self.post(_F.leaky_relu(x)))


def _feature_stack(x, convs, post):
    """A HiFi-GAN discriminator's conv stack: its scores, flattened, and every layer's features (for the
    feature-matching loss)."""
    fmaps = []
    for c in convs:
        x = _F.leaky_relu(c(x), 0.1)
        fmaps.append(x)
    x = post(x)
    fmaps.append(x)
    return x.flatten(1), fmaps


class _PeriodD(_nn.Module):
    def __init__(self, period, chans=(32, 128, 512, 1024)):
        super().__init__()
        self.p = period
        cs = (1,) + chans
        self.convs = _nn.ModuleList(_nn.Conv2d(cs[i], cs[i + 1], (5, 1), (3, 1), (2, 0)) for i in range(len(chans)))
        self.convs.append(_nn.Conv2d(chans[-1], 1024, (5, 1), 1, (2, 0)))
        self.post = _nn.Conv2d(1024, 1, (3, 1), 1, (1, 0))

    def forward(self, x):
        b, _, t = x.shape
        pad = (self.p - t % self.p) % self.p
        x = _F.pad(x, (0, pad), mode="reflect").view(b, 1, (t + pad) // self.p, self.p)
        return _feature_stack(x, self.convs, self.post)


class _ScaleD(_nn.Module):
    def __init__(self):
        super().__init__()
        spec = [(1, 128, 15, 1, 1), (128, 128, 41, 2, 4), (128, 256, 41, 2, 16), (256, 512, 41, 4, 16),
                (512, 1024, 41, 4, 16), (1024, 1024, 41, 1, 16), (1024, 1024, 5, 1, 1)]
        self.convs = _nn.ModuleList(_nn.Conv1d(i, o, k, s, groups=g, padding=k // 2) for i, o, k, s, g in spec)
        self.post = _nn.Conv1d(1024, 1, 3, padding=1)

    def forward(self, x):
        return _feature_stack(x, self.convs, self.post)


class _HiFiDiscriminators(_nn.Module):
    def __init__(self):
        super().__init__()
        self.mpd = _nn.ModuleList(_PeriodD(p) for p in (2, 3, 5, 7, 11))
        self.msd = _nn.ModuleList(_ScaleD() for _ in range(3))

    def forward(self, x):
        outs = [d(x) for d in self.mpd]
        for i, d in enumerate(self.msd):
            if i:
                x = _F.avg_pool1d(x, 4, 2, padding=2)
            outs.append(d(x))
        return outs


@_workload("HiFi-GAN V1 vocoder training (random init): a generator from 80-band mels (upsampling 8x8x2x2 by transposed convolutions from 512 channels, multi-receptive-field residual blocks of kernels 3/7/11 and dilations 1/3/5), multi-period (2, 3, 5, 7, 11) and multi-scale (3 scales, grouped convolutions) discriminators; 22.05 kHz waveforms of random partials and noise, batch 6-12 (drawn) of 8,192-sample segments, mels by an STFT of 1,024 / hop 256; the LSGAN discriminator loss, then the generator's adversarial, feature-matching and 45 x mel-L1 losses, two AdamW optimisers (betas 0.8/0.99) under bf16 autocast; 104 steps, the losses read back every 10 and a whole utterance of 200-600 mel frames (drawn) synthesised and its mel L1 read back every 45")
def hifigan_mpd_msd_vocoder_train(rng):
    sr, n_fft, hop, n_mels = 22050, 1024, 256, 80
    gen = _HiFiGenerator(n_mels, _smoke(512, 32)).cuda()
    disc = _HiFiDiscriminators().cuda()
    opt_g = torch.optim.AdamW(gen.parameters(), lr=2e-4, betas=(0.8, 0.99))
    opt_d = torch.optim.AdamW(disc.parameters(), lr=2e-4, betas=(0.8, 0.99))
    fb = _mel_fb(n_fft // 2 + 1, n_mels, sr, 0.0, 8000.0)
    seg = _smoke(8192, 1024)

    def mel_of(wav):
        return _log_mel(wav, n_fft, hop, fb).transpose(1, 2)  # (B, n_mels, frames)

    def waveforms(b, length):
        t = torch.arange(length, device="cuda").float() / sr
        f = 100 * 2 ** (torch.rand(b, 6, 1, device="cuda") * 4)
        amp = torch.rand(b, 6, 1, device="cuda") / 6
        env = _F.interpolate(torch.rand(b, 1, max(2, length // 2048), device="cuda"), size=length, mode="linear")
        wav = (amp * torch.sin(2 * math.pi * f * t + 6.28 * torch.rand(b, 6, 1, device="cuda"))).sum(1, keepdim=True)
        return (env * wav + 0.005 * torch.randn(b, 1, length, device="cuda")).clamp(-1, 1)

    steps = _smoke(104, 3)
    for step in range(steps):
        b = rng.randint(_smoke(6, 1), _smoke(12, 2))
        wav = waveforms(b, seg)
        mel = mel_of(wav[:, 0])[:, :, : seg // hop]
        gen.train()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            fake = gen(mel)
        # discriminator step
        with torch.autocast("cuda", dtype=torch.bfloat16):
            real_out, fake_out = disc(wav), disc(fake.detach())
        loss_d = sum(((1 - r.float()) ** 2).mean() + (f.float() ** 2).mean()
                     for (r, _), (f, _) in zip(real_out, fake_out))
        opt_d.zero_grad(set_to_none=True)
        loss_d.backward()
        opt_d.step()
        del real_out, fake_out
        # generator step
        with torch.autocast("cuda", dtype=torch.bfloat16):
            real_out, fake_out = disc(wav), disc(fake)
        adv = sum(((1 - f.float()) ** 2).mean() for f, _ in fake_out)
        fm = sum((rf.detach().float() - ff.float()).abs().mean()
                 for (_, rfs), (_, ffs) in zip(real_out, fake_out) for rf, ff in zip(rfs, ffs))
        mel_l1 = (mel_of(fake[:, 0].float())[:, :, : seg // hop] - mel).abs().mean()
        loss_g = adv + 2 * fm + 45 * mel_l1
        opt_g.zero_grad(set_to_none=True)
        loss_g.backward()
        opt_g.step()
        del wav, mel, fake, real_out, fake_out, adv, fm
        if step % 10 == 0:
            torch.stack([loss_d.detach(), loss_g.detach(), mel_l1.detach()]).tolist()
        del loss_d, loss_g, mel_l1
        if (step + 1) % _smoke(45, 3) == 0:
            gen.eval()
            frames = rng.randint(_smoke(200, 8), _smoke(600, 16))
            with torch.no_grad():
                wav = waveforms(1, frames * hop)
                mel = mel_of(wav[:, 0])[:, :, :frames]
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    out = gen(mel).float()
                (mel_of(out[:, 0])[:, :, :frames] - mel).abs().mean().item()
            del wav, mel, out


# ---------------------------------------------------------------- EnCodec-style codec service


class _ResUnit(_nn.Module):
    def __init__(self, c, dilation):
        super().__init__()
        self.a = _nn.Conv1d(c, c // 2, 3, dilation=dilation, padding=dilation)
        self.b = _nn.Conv1d(c // 2, c, 1)

    def forward(self, x):
        return x + self.b(_F.elu(self.a(_F.elu(x))))


class _SEANetEncoder(_nn.Module):
    def __init__(self, c, dim, ratios):
        super().__init__()
        layers = [_nn.Conv1d(1, c, 7, padding=3)]
        for r in ratios:
            layers += [_ResUnit(c, 1), _ResUnit(c, 3), _nn.ELU(), _nn.Conv1d(c, 2 * c, 2 * r, r, padding=(r + 1) // 2)]
            c *= 2
        layers += [_nn.ELU(), _nn.Conv1d(c, dim, 7, padding=3)]
        self.net = _nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


class _SEANetDecoder(_nn.Module):
    def __init__(self, c, dim, ratios):
        super().__init__()
        c = c * 2 ** len(ratios)
        layers = [_nn.Conv1d(dim, c, 7, padding=3)]
        for r in reversed(ratios):
            up = _nn.ConvTranspose1d(c, c // 2, 2 * r, r, padding=(r + 1) // 2, output_padding=r % 2)
            layers += [_nn.ELU(), up, _ResUnit(c // 2, 1), _ResUnit(c // 2, 3)]
            c //= 2
        layers += [_nn.ELU(), _nn.Conv1d(c, 1, 7, padding=3)]
        self.net = _nn.Sequential(*layers)

    def forward(self, z):
        return self.net(z)


@_workload("EnCodec-style neural codec service (random init): a SEANet convolutional encoder and decoder at 24 kHz (32 base channels doubling through strides 2, 4, 5, 8 to a 128-dim latent at 75 Hz, two residual units a stage) and residual vector quantisation over up to 32 codebooks of 1,024 entries; 1,250-1,350 requests (drawn) of 1-8 mono clips (drawn) of 0.5-6 s (drawn in 320-sample frames) and a bandwidth drawn from 1.5/3/6/12/24 kbps (2-32 codebooks), each request's int16 PCM uploaded from 2 reused pinned host buffers on a side stream one request ahead (waited on by event, record_stream'ed); encode, quantise (distances by matmul, argmin, index_select, residual updates), decode under bf16 autocast (the quantiser in fp32); each request's codes copied back as int16 and its per-clip SI-SNR read back")
def encodec_rvq_codec_serve(rng):
    sr, hop = 24000, 320
    ratios = (2, 4, 5, 8)
    c, dim, bins = _smoke(32, 4), _smoke(128, 8), _smoke(1024, 16)
    enc, dec = _SEANetEncoder(c, dim, ratios).cuda().eval(), _SEANetDecoder(c, dim, ratios).cuda().eval()
    enc.requires_grad_(False)
    dec.requires_grad_(False)
    codebooks = torch.randn(32, bins, dim, device="cuda")
    cb_sq = codebooks.pow(2).sum(-1)  # (32, bins)
    maxclips, maxframes = 8, _smoke(6 * sr // hop, 8)
    host = [torch.randint(-8000, 8000, (maxclips * maxframes * hop,), dtype=torch.int16).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    bandwidths = {1.5: 2, 3.0: 4, 6.0: 8, 12.0: 16, 24.0: 32}

    def draw():
        return (rng.randint(1, maxclips), rng.randint(_smoke(38, 2), maxframes),
                bandwidths[rng.choice(list(bandwidths))])

    nreq = rng.randint(_smoke(1250, 3), _smoke(1350, 4))
    plan = [draw() for _ in range(nreq)]
    nxt = up.upload(0, plan[0][0] * plan[0][1] * hop)
    for i in range(nreq):
        k, frames, nq = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, plan[i + 1][0] * plan[i + 1][1] * hop)
        raw, ev = item
        SideUploads.ready(ev, raw)
        x = raw.view(k, 1, frames * hop).float() / 32768.0
        with torch.no_grad():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                z = enc(x)
            res = z.float().transpose(1, 2).reshape(-1, dim)  # (k * T, dim)
            quant = torch.zeros_like(res)
            codes = []
            for q in range(nq):
                dist = res.pow(2).sum(-1, keepdim=True) - 2 * res @ codebooks[q].T + cb_sq[q]
                idx = dist.argmin(-1)
                e = codebooks[q].index_select(0, idx)
                quant = quant + e
                res = res - e
                codes.append(idx)
                del dist, e
            zq = quant.view(k, -1, dim).transpose(1, 2)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                y = dec(zq).float()
            codes = torch.stack(codes, 0).view(nq, k, -1).transpose(0, 1)
            ref, est = x[:, 0] - x[:, 0].mean(-1, keepdim=True), y[:, 0] - y[:, 0].mean(-1, keepdim=True)
            s = (est * ref).sum(-1, keepdim=True) / ref.pow(2).sum(-1, keepdim=True).clamp(min=1e-8) * ref
            sisnr = 10 * torch.log10(s.pow(2).sum(-1) / (est - s).pow(2).sum(-1).clamp(min=1e-8) + 1e-8)
        codes.to(torch.int16).cpu()
        sisnr.tolist()
        del item, raw, x, z, res, quant, zq, y, codes, ref, est, s, sisnr

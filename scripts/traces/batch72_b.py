"""The seventy-second batch of held-out workloads for record.py, second half (batch72.py has the first): music and
audio production, written in torch alone. A DDSP instrument model (f0 and loudness contours through MLPs and a
dilated temporal convolution stack to the controls of a harmonic-plus-filtered-noise synthesizer, additive synthesis
of 60 harmonics by a cumulative phase at the audio rate with a Nyquist mask, noise filtered by frequency-sampled FIRs
per frame and overlap-added by fold, a learned reverb impulse response applied by FFT convolution, a 6-scale spectral
loss against target notes rendered on the device), DiffSinger-style singing-voice synthesis training (phoneme, note
pitch and note-duration embeddings through a transformer encoder with a padding mask, a length regulator by gather
over frame indices built on the host from drawn phoneme durations, a frame-level f0 with vibrato, a 20-layer
WaveNet-style denoiser trained on a masked L1 noise loss over 100 diffusion steps, DDIM sampling of held-out phrases
at intervals), a differentiable mixing console fitted to reference mixes (per-stem gain, constant-power pan,
five-band peaking EQs as biquad magnitude responses on the FFT grid, feed-forward compressors on avg-pooled
envelopes, a reverb send through an FFT-convolved decaying-noise impulse response, a master EQ, compressor and soft
limiter; Adam on all the console's parameters against a multi-resolution STFT and loudness loss, for songs of drawn
stem counts and lengths) and an MT3-style multi-instrument transcription service (a T5-style encoder-decoder over
2.048 s log-mel segments, each request's int16 PCM uploaded from 2 reused pinned host buffers on a side stream one
request ahead, the clip cut into segments decoded together by greedy decoding with static self-attention KV caches and
precomputed cross-attention keys and values for a drawn token budget, the tokens read back). Same conventions as the
earlier batches: nothing downloaded, data drawn at random on the device (or, for the transcription service, from a
few reused pinned host buffers), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: steps,
iterations, durations and token budgets are fixed on the host, no boolean-mask indexing; losses, parameters and
tokens are read back only at logging points. mt3_transcribe_serve uses a side stream (uploads waited on by event,
the tensors record_stream'ed); the others are single-stream. The DDSP controller, the singing-voice model and the
transcriber run under bf16 autocast; the synthesizers, the mixing console, the STFTs and the losses are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new72.sh's header (and batch72.py's docstring).
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, _sincos, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _stft_mag(x, n_fft, hop):
    w = torch.hann_window(n_fft, device="cuda")
    return torch.stft(x.float(), n_fft, hop, window=w, return_complex=True).abs()


def _spectral_loss(pred, target, ffts):
    """DDSP's multi-scale spectral loss: L1 of magnitudes and of log magnitudes at every FFT size."""
    loss = 0.0
    for n in ffts:
        p, t = _stft_mag(pred, n, n // 4), _stft_mag(target, n, n // 4)
        loss = loss + (p - t).abs().mean() + ((p + 1e-6).log() - (t + 1e-6).log()).abs().mean()
    return loss


def _fft_convolve(x, h):
    """Linear convolution of x (..., L) with h (..., K) by rfft, cropped to L."""
    n = x.shape[-1] + h.shape[-1] - 1
    n2 = 1 << (n - 1).bit_length()
    return torch.fft.irfft(torch.fft.rfft(x, n=n2) * torch.fft.rfft(h, n=n2), n=n2)[..., : x.shape[-1]]


# ---------------------------------------------------------------- DDSP harmonic-plus-noise instrument model


class _DDSPController(_nn.Module):
    def __init__(self, d, harmonics, bands, layers):
        super().__init__()
        self.f0_mlp = mlp(1, d, d, 3, norm=True)
        self.ld_mlp = mlp(1, d, d, 3, norm=True)
        self.tcn = _nn.ModuleList(_nn.Conv1d(2 * d if i == 0 else d, d, 3, dilation=2 ** i, padding=2 ** i)
                                  for i in range(layers))
        self.norms = _nn.ModuleList(_nn.GroupNorm(1, d) for _ in range(layers))
        self.out_mlp = mlp(d + 2, d, 1 + harmonics + bands, 3, norm=True)

    def forward(self, f0_scaled, loudness):
        x = torch.cat([self.f0_mlp(f0_scaled), self.ld_mlp(loudness)], -1).transpose(1, 2)
        for i, (c, n) in enumerate(zip(self.tcn, self.norms)):
            y = _F.leaky_relu(n(c(x)), 0.1)
            x = y if i == 0 else x + y
        return self.out_mlp(torch.cat([x.transpose(1, 2), f0_scaled, loudness], -1))


def _scale_fn(x):
    """DDSP's exp_sigmoid: 2 sigmoid(x)^log(10) + 1e-7."""
    return 2.0 * torch.sigmoid(x) ** math.log(10.0) + 1e-7


def _ddsp_synth(ctrl, f0, sr, hop, harmonics, ir):
    """Harmonic plus filtered noise plus reverb. ctrl (B, T, 1 + H + K) raw controls, f0 (B, T) Hz: audio (B, T*hop)."""
    b, t, _ = ctrl.shape
    length = t * hop
    amp = _scale_fn(ctrl[..., :1])
    dist = _scale_fn(ctrl[..., 1:1 + harmonics])
    noise_mag = _scale_fn(ctrl[..., 1 + harmonics:] - 5.0)
    k = torch.arange(1, harmonics + 1, device="cuda").float()
    dist = dist * (f0[..., None] * k < sr / 2).float()
    dist = dist / dist.sum(-1, keepdim=True).clamp(min=1e-7) * amp
    # up to the audio rate
    f0_up = _F.interpolate(f0[:, None], size=length, mode="linear")[:, 0]
    dist_up = _F.interpolate(dist.transpose(1, 2), size=length, mode="linear")  # (B, H, L)
    phase = torch.cumsum(2 * math.pi * f0_up / sr, -1)
    harm = (torch.sin(phase[:, None] * k[:, None]) * dist_up).sum(1)
    # filtered noise: a zero-phase FIR per frame from the band magnitudes, windowed, overlap-added
    bands = noise_mag.shape[-1]
    ir_n = 2 * (bands - 1)
    fir = torch.fft.irfft(noise_mag, n=ir_n).roll(ir_n // 2, -1) * torch.hann_window(ir_n, device="cuda")
    white = torch.rand(b, t, hop, device="cuda") * 2 - 1
    n2 = 1 << (hop + ir_n - 1).bit_length()
    filt = torch.fft.irfft(torch.fft.rfft(white, n=n2) * torch.fft.rfft(fir, n=n2), n=n2)  # (B, T, n2)
    noise = _F.fold(filt.transpose(1, 2), (1, (t - 1) * hop + n2), (1, n2), stride=(1, hop)).flatten(1)
    dry = harm + noise[:, ir_n // 2: ir_n // 2 + length]
    return dry + _fft_convolve(dry, ir.expand(b, -1))


@_workload("DDSP harmonic-plus-noise instrument model training (random init): f0 (log-uniform 80-900 Hz with drawn vibrato) and loudness contours at 250 Hz through LayerNorm MLPs (width 512) and 5 dilated Conv1d layers to an amplitude, a 60-harmonic distribution (masked above Nyquist) and 65 noise-band magnitudes; additive synthesis at 16 kHz by a cumulative phase, noise filtered by frequency-sampled 128-tap FIRs per 64-sample frame and overlap-added by fold, a learned 1 s reverb impulse response by FFT convolution; a 6-scale spectral loss (FFT 2,048-64) against target notes rendered on the device by a hidden synthesizer; batch 8-16 (drawn) of 2-4 s (drawn), Adam with the controller under bf16 autocast; 440 steps, the loss read back every 25 and 2 held-out 8 s phrases resynthesised and their loss read back every 100")
def ddsp_harmonic_noise_train(rng):
    sr, hop, harmonics, bands = 16000, _smoke(64, 16), _smoke(60, 8), _smoke(65, 9)
    d = _smoke(512, 16)
    model = _DDSPController(d, harmonics, bands, _smoke(5, 2)).cuda()
    ir_len = _smoke(sr, 256)
    ir_noise = _nn.Parameter(torch.randn(1, ir_len, device="cuda") * 0.05)
    ir_decay = _nn.Parameter(torch.tensor([2.0], device="cuda"))
    opt = torch.optim.Adam(list(model.parameters()) + [ir_noise, ir_decay], lr=1e-3)
    ffts = _smoke([2048, 1024, 512, 256, 128, 64], [128, 64])
    t_ir = torch.arange(ir_len, device="cuda").float() / sr
    hidden_ir = torch.randn(1, ir_len, device="cuda") * 0.03 * torch.exp(-t_ir / 0.3)
    frames_per_s = sr // hop

    def contours(b, t):
        base = 80 * (900 / 80) ** torch.rand(b, 1, device="cuda")
        tt = torch.arange(t, device="cuda").float() / frames_per_s
        vib = 1 + 0.01 * torch.rand(b, 1, device="cuda") * torch.sin(2 * math.pi * (4.5 + 2 * torch.rand(
            b, 1, device="cuda")) * tt)
        f0 = base * vib
        loud = _F.interpolate(torch.rand(b, 1, max(2, t // 50), device="cuda"), size=t, mode="linear")[:, 0]
        return f0, loud

    def target(f0, loud):
        b, t = f0.shape
        ctrl = torch.cat([(loud[..., None] * 6 - 3), torch.randn(b, 1, harmonics, device="cuda").expand(-1, t, -1),
                          torch.randn(b, t, bands, device="cuda") - 1.0], -1)
        return _ddsp_synth(ctrl, f0, sr, hop, harmonics, hidden_ir)

    def render(f0, loud):
        f0_scaled = (torch.log2(f0 / 440) / 4)[..., None]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            ctrl = model(f0_scaled, loud[..., None]).float()
        ir = ir_noise * torch.exp(-t_ir * _F.softplus(ir_decay) * 5)
        return _ddsp_synth(ctrl, f0, sr, hop, harmonics, ir)

    steps = _smoke(440, 3)
    for step in range(steps):
        b, seconds = rng.randint(_smoke(8, 2), _smoke(16, 2)), rng.choice([2, 3, 4])
        t = seconds * _smoke(frames_per_s, 16)
        f0, loud = contours(b, t)
        with torch.no_grad():
            ref = target(f0, loud)
        model.train()
        loss = _spectral_loss(render(f0, loud), ref, ffts)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del f0, loud, ref
        if step % 25 == 0:
            loss.item()
        del loss
        if (step + 1) % _smoke(100, 3) == 0:
            model.eval()
            with torch.no_grad():
                f0, loud = contours(2, 8 * _smoke(frames_per_s, 16))
                _spectral_loss(render(f0, loud), target(f0, loud), ffts).item()
            del f0, loud


# ---------------------------------------------------------------- DiffSinger-style singing voice synthesis


class _SVSEncoder(_nn.Module):
    def __init__(self, phonemes, d, layers, heads):
        super().__init__()
        self.ph = _nn.Embedding(phonemes, d)
        self.pitch = _nn.Embedding(128, d)
        self.dur = _nn.Linear(1, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)

    def forward(self, ph, pitch, dur, mask):
        x = self.ph(ph) + self.pitch(pitch) + self.dur(dur[..., None])
        x = x + _sincos(torch.arange(ph.shape[1], device="cuda"), x.shape[-1])
        for blk in self.blocks:
            x = blk(x, mask)
        return self.norm(x)


class _WaveNetDenoiser(_nn.Module):
    def __init__(self, n_mels, c, cond, layers, cycle):
        super().__init__()
        self.c = c
        self.inp = _nn.Conv1d(n_mels, c, 1)
        self.step_mlp = _nn.Sequential(_nn.Linear(c, 4 * c), _nn.Mish(), _nn.Linear(4 * c, c))
        self.dil = _nn.ModuleList(_nn.Conv1d(c, 2 * c, 3, dilation=2 ** (i % cycle), padding=2 ** (i % cycle))
                                  for i in range(layers))
        self.step_proj = _nn.ModuleList(_nn.Linear(c, c) for _ in range(layers))
        self.cond_proj = _nn.ModuleList(_nn.Conv1d(cond, 2 * c, 1) for _ in range(layers))
        self.out_proj = _nn.ModuleList(_nn.Conv1d(c, 2 * c, 1) for _ in range(layers))
        self.skip = _nn.Conv1d(c, c, 1)
        self.out = _nn.Conv1d(c, n_mels, 1)

    def forward(self, x, t, cond):
        """x (B, n_mels, T) noisy mel, t (B,) steps, cond (B, cond, T)."""
        x = _F.relu(self.inp(x))
        emb = self.step_mlp(_sincos(t, self.c))
        skip = 0
        for dil, sp, cp, op in zip(self.dil, self.step_proj, self.cond_proj, self.out_proj):
            y = dil(x + sp(emb)[:, :, None]) + cp(cond)
            g, f = y.chunk(2, 1)
            y = op(torch.sigmoid(g) * torch.tanh(f))
            r, s = y.chunk(2, 1)
            x = (x + r) / math.sqrt(2.0)
            skip = skip + s
        skip = skip / math.sqrt(len(self.dil))
        return self.out(_F.relu(self.skip(skip)))


@_workload("DiffSinger-style singing-voice synthesis training (random init): phrases of 24-72 phonemes (drawn) with drawn note pitches (MIDI 45-80) and phoneme durations of 3-18 frames drawn on the host, batch 6-12 (drawn), a 4-layer transformer encoder (width 256) over phoneme, pitch and duration embeddings with a key-padding mask, a length regulator by gather over frame indices built on the host, a frame-level f0 with vibrato, and a 20-layer WaveNet-style denoiser (256 channels, dilations cycling 1-8) on 80-band mels conditioned on both, a masked L1 noise-prediction loss over 100 diffusion steps, AdamW with gradient clipping under bf16 autocast; 170 steps, the loss read back every 20 and 2 held-out phrases sampled by 20 DDIM steps and their mel L1 read back every 80")
def diffsinger_svs_train(rng):
    phonemes, n_mels, d = 62, _smoke(80, 8), _smoke(256, 16)
    enc = _SVSEncoder(phonemes, d, _smoke(4, 1), 4).cuda()
    den = _WaveNetDenoiser(n_mels, d, d, _smoke(20, 2), 4).cuda()
    f0_proj = _nn.Linear(1, d).cuda()
    params = list(enc.parameters()) + list(den.parameters()) + list(f0_proj.parameters())
    opt = torch.optim.AdamW(params, lr=4e-4, weight_decay=0.0)
    steps_k = 100
    betas = torch.linspace(1e-4, 0.06, steps_k, device="cuda")
    abar = torch.cumprod(1 - betas, 0)
    mel_centres = torch.linspace(0, 1, n_mels, device="cuda")

    def phrase_batch(b):
        lens, durs, pitches = [], [], []
        for _ in range(b):
            p = rng.randint(_smoke(24, 3), _smoke(72, 6))
            lens.append(p)
            durs.append([rng.randint(3, _smoke(18, 4)) for _ in range(p)])
            notes, cur = [], rng.randint(50, 72)
            for _ in range(p):
                if rng.random() < 0.3:
                    cur = max(45, min(80, cur + rng.choice([-5, -3, -2, 2, 3, 5])))
                notes.append(cur)
            pitches.append(notes)
        pmax = max(lens)
        tlen = [sum(dd) for dd in durs]
        tmax = -(-max(tlen) // 16) * 16
        ph_ids = torch.randint(1, phonemes, (b, pmax), device="cuda")
        pitch = torch.tensor([n + [0] * (pmax - len(n)) for n in pitches], device="cuda")
        dur = torch.tensor([dd + [0] * (pmax - len(dd)) for dd in durs], device="cuda").float()
        idx = []
        for dd in durs:
            row = [i for i, n in enumerate(dd) for _ in range(n)]
            idx.append(row + [0] * (tmax - len(row)))
        idx = torch.tensor(idx, device="cuda")
        ph_mask = torch.arange(pmax, device="cuda")[None] < torch.tensor(lens, device="cuda")[:, None]
        fr_mask = (torch.arange(tmax, device="cuda")[None] < torch.tensor(tlen, device="cuda")[:, None]).float()
        return ph_ids, pitch, dur, idx, ph_mask, fr_mask

    def condition(ph_ids, pitch, dur, idx, ph_mask):
        h = enc(ph_ids, pitch, dur / 10, ph_mask[:, None, None, :])
        cond = h.gather(1, idx[..., None].expand(-1, -1, h.shape[-1]))  # (B, T, d)
        midi = pitch.gather(1, idx).float()
        tt = torch.arange(idx.shape[1], device="cuda").float() / 86.0
        f0 = 440 * 2 ** ((midi - 69) / 12) * (1 + 0.012 * torch.sin(2 * math.pi * 5.5 * tt))
        cond = cond + f0_proj(torch.log2(f0 / 440)[..., None])
        return cond.transpose(1, 2), f0

    def target_mel(f0, fr_mask):
        # harmonic ridges at multiples of f0 on a mel-like axis, smoothed noise, silence past the end
        ridge = torch.cos(2 * math.pi * mel_centres[None, :, None] * 4000 / f0[:, None, :]) * 0.5
        smooth = _F.avg_pool1d(torch.randn(f0.shape[0], n_mels, f0.shape[1], device="cuda"), 5, 1, 2)
        return (ridge + smooth) * fr_mask[:, None] - 4 * (1 - fr_mask[:, None])

    steps = _smoke(170, 3)
    for step in range(steps):
        b = rng.randint(_smoke(6, 2), _smoke(12, 2))
        ph_ids, pitch, dur, idx, ph_mask, fr_mask = phrase_batch(b)
        enc.train()
        den.train()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            cond, f0 = condition(ph_ids, pitch, dur, idx, ph_mask)
            mel = target_mel(f0, fr_mask)
            t = torch.randint(0, steps_k, (b,), device="cuda")
            a = abar.index_select(0, t)[:, None, None]
            eps = torch.randn_like(mel)
            noisy = a.sqrt() * mel + (1 - a).sqrt() * eps
            pred = den(noisy, t, cond).float()
        m = fr_mask[:, None]
        loss = ((pred - eps).abs() * m).sum() / (m.sum() * n_mels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        del ph_ids, pitch, dur, idx, ph_mask, fr_mask, cond, f0, mel, t, a, eps, noisy, pred, m
        if step % 20 == 0:
            loss.item()
        del loss
        if (step + 1) % _smoke(80, 3) == 0:
            enc.eval()
            den.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                ph_ids, pitch, dur, idx, ph_mask, fr_mask = phrase_batch(2)
                cond, f0 = condition(ph_ids, pitch, dur, idx, ph_mask)
                x = torch.randn(2, n_mels, idx.shape[1], device="cuda")
                sched = list(range(steps_k - 1, -1, -steps_k // 20))
                for j, ts in enumerate(sched):
                    a_t = abar[ts]
                    a_prev = abar[sched[j + 1]] if j + 1 < len(sched) else torch.ones((), device="cuda")
                    e = den(x, torch.full((2,), ts, device="cuda"), cond).float()
                    x0 = (x - (1 - a_t).sqrt() * e) / a_t.sqrt()
                    x = a_prev.sqrt() * x0 + (1 - a_prev).sqrt() * e
                    del e, x0
                ((x - target_mel(f0, fr_mask)).abs() * fr_mask[:, None]).mean().item()
            del ph_ids, pitch, dur, idx, ph_mask, fr_mask, cond, f0, x


# ---------------------------------------------------------------- differentiable mixing console


def _peaking_mag(gain_db, freq, q, w):
    """Magnitude responses of peaking biquads (RBJ cookbook) on the radian grid w (N,): params (..., bands),
    returns the product over bands (..., N)."""
    a = 10 ** (gain_db / 40)
    w0 = freq
    alpha = torch.sin(w0) / (2 * q)
    cw = torch.cos(w0)
    b0, b1, b2 = 1 + alpha * a, -2 * cw, 1 - alpha * a
    a0, a1, a2 = 1 + alpha / a, -2 * cw, 1 - alpha / a
    c1, c2 = torch.cos(w), torch.cos(2 * w)

    def mag2(x0, x1, x2):
        return (x0 * x0 + x1 * x1 + x2 * x2)[..., None] + 2 * (x0 * x1 + x1 * x2)[..., None] * c1 \
            + 2 * (x0 * x2)[..., None] * c2

    return (mag2(b0, b1, b2) / mag2(a0, a1, a2).clamp(min=1e-8)).clamp(min=1e-10).sqrt().prod(-2)


def _compress(x, thr_db, ratio, win, hop):
    """A feed-forward compressor: RMS envelope by avg_pool1d, a hard-knee gain computer, gains interpolated back."""
    env = _F.avg_pool1d(x.pow(2), win, hop, padding=win // 2)
    level = 10 * torch.log10(env + 1e-8)
    gain_db = -_F.relu(level - thr_db[..., None]) * (1 - 1 / ratio[..., None])
    gain = _F.interpolate((10 ** (gain_db / 20))[None], size=x.shape[-1], mode="linear")[0]
    return x * gain


class _Console(_nn.Module):
    def __init__(self, stems, bands, sr):
        super().__init__()
        self.sr = sr
        self.gain_db = _nn.Parameter(torch.zeros(stems))
        self.pan = _nn.Parameter(torch.zeros(stems))
        self.eq_gain = _nn.Parameter(torch.zeros(stems, bands))
        self.eq_freq = _nn.Parameter(torch.linspace(-2, 2, bands).repeat(stems, 1))
        self.eq_q = _nn.Parameter(torch.zeros(stems, bands))
        self.thr = _nn.Parameter(torch.full((stems,), -12.0))
        self.ratio = _nn.Parameter(torch.zeros(stems))
        self.send = _nn.Parameter(torch.full((stems,), -2.0))
        self.decay = _nn.Parameter(torch.zeros(1))
        self.m_eq_gain = _nn.Parameter(torch.zeros(1, bands))
        self.m_eq_freq = _nn.Parameter(torch.linspace(-2, 2, bands)[None])
        self.m_eq_q = _nn.Parameter(torch.zeros(1, bands))
        self.m_thr = _nn.Parameter(torch.full((1,), -6.0))
        self.m_ratio = _nn.Parameter(torch.zeros(1))
        self.out_gain = _nn.Parameter(torch.zeros(1))

    def randomise(self):
        with torch.no_grad():
            for p in self.parameters():
                p.add_(torch.randn_like(p) * 0.7)
            self.eq_gain.mul_(6)
            self.m_eq_gain.mul_(3)
            self.gain_db.mul_(5)
            self.thr.add_(torch.randn_like(self.thr) * 5)

    def _eq(self, x, g, f, q, w):
        freq = 2 * math.pi * 1000 * 2 ** (1.5 * torch.tanh(f) * 2.2) / self.sr
        mag = _peaking_mag(12 * torch.tanh(g / 12), freq, 0.7 * torch.exp(q.clamp(-2, 2)), w)
        return torch.fft.irfft(torch.fft.rfft(x) * mag, n=x.shape[-1])

    def forward(self, stems, w, ir_noise, t_ir):
        """stems (S, L) mono: the stereo mix (2, L)."""
        x = self._eq(stems, self.eq_gain, self.eq_freq, self.eq_q, w)
        x = _compress(x, self.thr, 1 + _F.softplus(self.ratio) * 3, 2048, 512)
        x = x * (10 ** (self.gain_db / 20))[:, None]
        theta = torch.sigmoid(self.pan) * (math.pi / 2)
        mix = torch.stack([(x * theta.cos()[:, None]).sum(0), (x * theta.sin()[:, None]).sum(0)])  # (2, L)
        send = (x * torch.sigmoid(self.send)[:, None]).sum(0, keepdim=True)
        ir = ir_noise * torch.exp(-t_ir / (0.2 + 2 * torch.sigmoid(self.decay)))
        mix = mix + _fft_convolve(send.expand(2, -1), ir)
        mix = self._eq(mix, self.m_eq_gain.expand(2, -1), self.m_eq_freq.expand(2, -1), self.m_eq_q.expand(2, -1), w)
        mix = _compress(mix, self.m_thr.expand(2), (1 + _F.softplus(self.m_ratio) * 3).expand(2), 2048, 512)
        return torch.tanh(mix * 10 ** (self.out_gain / 20))


@_workload("a differentiable mixing console fitted to reference mixes (an optimisation loop): for each of 4 songs, 6-14 mono stems (drawn) of 6-12 s at 44.1 kHz (drawn; random partials under envelopes plus noise) through per-stem five-band peaking EQs (RBJ biquad magnitude responses on the whole-signal FFT grid, applied by rfft), RMS feed-forward compressors on avg-pooled envelopes, gains and constant-power pans, a reverb send through a decaying-noise impulse response of 1.5 s by FFT convolution, a master EQ, compressor and tanh limiter; the reference mix rendered by the same console with hidden random settings; Adam on all console parameters against a 3-resolution STFT loss on mid and side plus a loudness term, 85-105 iterations a song (drawn), the loss read back every 10 and the fitted settings read back at the end of each song")
def mixing_console_match_opt(rng):
    sr, bands = 44100, 5
    ffts = _smoke([4096, 1024, 256], [256, 64])
    ir_len = _smoke(int(1.5 * sr), 512)
    t_ir = torch.arange(ir_len, device="cuda").float() / sr
    for song in range(_smoke(4, 1)):
        s = rng.randint(_smoke(6, 2), _smoke(14, 3))
        length = rng.randint(6, 12) * _smoke(sr, 2048)
        t = torch.arange(length, device="cuda").float() / sr
        f0 = 60 * 2 ** (torch.rand(s, 3, 1, device="cuda") * 5)
        tone = (torch.sin(2 * math.pi * f0 * t) / torch.arange(1, 4, device="cuda").float()[:, None]).sum(1)
        env = _F.interpolate(torch.rand(s, 1, max(2, length // 8192), device="cuda"), size=length,
                             mode="linear")[:, 0]
        stems = 0.2 * env * (tone + 0.3 * torch.randn(s, length, device="cuda"))
        del t, f0, tone, env
        w = torch.linspace(0, math.pi, length // 2 + 1, device="cuda")
        ir_noise = torch.randn(2, ir_len, device="cuda") * 0.02
        hidden = _Console(s, bands, sr).cuda()
        hidden.randomise()
        with torch.no_grad():
            ref = hidden(stems, w, ir_noise, t_ir)
            ref_ms = torch.stack([ref.sum(0), ref[0] - ref[1]]) / 2
            ref_loud = 10 * torch.log10(ref.pow(2).mean() + 1e-8)
        console = _Console(s, bands, sr).cuda()
        opt = torch.optim.Adam(console.parameters(), lr=0.03)
        iters = rng.randint(_smoke(85, 2), _smoke(105, 3))
        for it in range(iters):
            mix = console(stems, w, ir_noise, t_ir)
            ms = torch.stack([mix.sum(0), mix[0] - mix[1]]) / 2
            loud = 10 * torch.log10(mix.pow(2).mean() + 1e-8)
            loss = 0.0
            for n in ffts:
                p, q = _stft_mag(ms, n, n // 4) + 1e-5, _stft_mag(ref_ms, n, n // 4) + 1e-5
                loss = loss + torch.linalg.vector_norm(p - q) / torch.linalg.vector_norm(q) \
                    + (p.log() - q.log()).abs().mean()
                del p, q
            loss = loss + 0.05 * (loud - ref_loud).abs()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            del mix, ms, loud
            if it % 10 == 0:
                loss.item()
            del loss
        with torch.no_grad():
            torch.cat([p.flatten() for p in console.parameters()]).tolist()
        del stems, w, ir_noise, hidden, ref, ref_ms, ref_loud, console, opt


# ---------------------------------------------------------------- MT3-style transcription service


class _DecLayer(_nn.Module):
    def __init__(self, d, heads, hidden):
        super().__init__()
        self.h = heads
        self.n1, self.n2, self.n3 = _nn.LayerNorm(d), _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.o1 = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.q2, self.kv2, self.o2 = _nn.Linear(d, d), _nn.Linear(d, 2 * d), _nn.Linear(d, d)
        self.fc1, self.fc2 = _nn.Linear(d, hidden), _nn.Linear(hidden, d)


@_workload("MT3-style multi-instrument transcription service (random init): a T5-style encoder-decoder (width 512, 8 heads, MLP 1,024, 6 encoder and 4 decoder layers, 1,536 event tokens) over 2.048 s segments of 512-band log-mel (16 kHz, STFT 2,048 / hop 128); 27-30 requests (drawn) of one clip of 2-24 s (drawn), each request's int16 PCM uploaded from 2 reused pinned host buffers on a side stream one request ahead (waited on by event, record_stream'ed), the clip's segments encoded together and decoded together by greedy decoding with static self-attention KV caches written in place and cross-attention keys and values computed once, for a drawn budget of 24-96 tokens (the end token not looked at), under bf16 autocast; each request's tokens read back")
def mt3_transcribe_serve(rng):
    sr, n_fft, hop, n_mels = 16000, _smoke(2048, 256), _smoke(128, 32), _smoke(512, 16)
    seg_frames = _smoke(256, 8)
    d, heads, hidden, vocab = _smoke(512, 32), 8, _smoke(1024, 64), _smoke(1536, 64)
    dh = d // heads
    enc_in = _nn.Linear(n_mels, d).cuda()
    enc_pos = (torch.randn(seg_frames, d, device="cuda") * 0.02)
    enc_blocks = _nn.ModuleList(PreNormBlock(d, heads, hidden) for _ in range(_smoke(6, 1))).cuda()
    enc_norm = _nn.LayerNorm(d).cuda()
    dec = _nn.ModuleList(_DecLayer(d, heads, hidden) for _ in range(_smoke(4, 1))).cuda()
    tok_emb, dec_norm, head = _nn.Embedding(vocab, d).cuda(), _nn.LayerNorm(d).cuda(), _nn.Linear(d, vocab).cuda()
    maxtok = _smoke(96, 6)
    dec_pos = torch.randn(maxtok + 1, d, device="cuda") * 0.02
    for m in (enc_in, enc_blocks, enc_norm, dec, tok_emb, dec_norm, head):
        m.eval().requires_grad_(False)
    # the mel filterbank (HTK scale) made on the device
    lo, hi = 2595 * math.log10(1 + 20 / 700), 2595 * math.log10(1 + 8000 / 700)
    hz = 700 * (10 ** (torch.linspace(lo, hi, n_mels + 2, device="cuda") / 2595) - 1)
    f = torch.linspace(0, sr / 2, n_fft // 2 + 1, device="cuda")
    fb = torch.minimum((f - hz[:-2, None]) / (hz[1:-1, None] - hz[:-2, None]),
                       (hz[2:, None] - f) / (hz[2:, None] - hz[1:-1, None])).clamp(min=0).T.contiguous()
    window = torch.hann_window(n_fft, device="cuda")
    maxlen = _smoke(24 * sr, 4096)
    host = [torch.randint(-6000, 6000, (maxlen,), dtype=torch.int16).pin_memory() for _ in range(2)]
    up = SideUploads(host)

    def split(t, n):
        return t.view(n, -1, heads, dh).transpose(1, 2)

    def draw():
        return rng.randint(_smoke(2 * sr, 1024), maxlen) // hop * hop, rng.randint(_smoke(24, 3), maxtok)

    nreq = rng.randint(_smoke(27, 2), _smoke(30, 3))
    plan = [draw() for _ in range(nreq)]
    nxt = up.upload(0, plan[0][0])
    for i in range(nreq):
        length, budget = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, plan[i + 1][0])
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            x = raw.float() / 32768.0
            spec = torch.stft(x, n_fft, hop, window=window, return_complex=True).abs()  # (F, frames)
            mel = (fb.T @ spec).clamp(min=1e-5).log().T  # (frames, n_mels)
            nseg = -(-mel.shape[0] // seg_frames)
            mel = _F.pad(mel, (0, 0, 0, nseg * seg_frames - mel.shape[0])).view(nseg, seg_frames, n_mels)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                h = enc_in(mel) + enc_pos
                for blk in enc_blocks:
                    h = blk(h)
                mem = enc_norm(h)
                cross = [layer.kv2(mem).chunk(2, -1) for layer in dec]
                cross = [(split(k, nseg), split(v, nseg)) for k, v in cross]
                cdt = cross[0][0].dtype  # bf16 under autocast
                kc = [torch.zeros(nseg, heads, budget + 1, dh, device="cuda", dtype=cdt) for _ in dec]
                vc = [torch.zeros(nseg, heads, budget + 1, dh, device="cuda", dtype=cdt) for _ in dec]
                tok = torch.zeros(nseg, dtype=torch.long, device="cuda")
                out = torch.zeros(nseg, budget, dtype=torch.long, device="cuda")
                for pos in range(budget):
                    y = (tok_emb(tok) + dec_pos[pos])[:, None]  # (nseg, 1, d)
                    for j, layer in enumerate(dec):
                        q, k, v = layer.qkv(layer.n1(y)).chunk(3, -1)
                        kc[j][:, :, pos] = split(k, nseg)[:, :, 0]
                        vc[j][:, :, pos] = split(v, nseg)[:, :, 0]
                        a = _F.scaled_dot_product_attention(split(q, nseg), kc[j][:, :, : pos + 1],
                                                            vc[j][:, :, : pos + 1])
                        y = y + layer.o1(a.transpose(1, 2).reshape(nseg, 1, d))
                        a = _F.scaled_dot_product_attention(split(layer.q2(layer.n2(y)), nseg), *cross[j])
                        y = y + layer.o2(a.transpose(1, 2).reshape(nseg, 1, d))
                        y = y + layer.fc2(_F.gelu(layer.fc1(layer.n3(y))))
                    tok = head(dec_norm(y[:, 0])).argmax(-1)
                    out[:, pos] = tok
        out.tolist()
        del item, raw, x, spec, mel, h, mem, cross, kc, vc, tok, out

"""The hundred-and-twenty-fourth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py
to batch123_b.py are): hearing, audiology and hearing aids, written in torch alone, first half. Hearing-aid speech
enhancement training (a 2-d convolutional encoder-decoder over compressed STFT spectra of drawn durations and
signal-to-noise ratios, a complex ratio mask trained by compressed spectral losses), hearing-aid acoustic feedback
cancellation training (a GRU cell written out frame by frame over receiver and microphone blocks of drawn lengths, a
feedback-path FIR estimate a frame applied to the receiver signal, the estimated feedback and the tap misalignment by
MSE), an auditory brainstem response (ABR) service (sweeps averaged with artefact rejection, a patch transformer over
the averaged waveforms of drawn stimulus levels, wave I, III and V peaks, the response at each level and the hearing
threshold) and a tinnitus sound-therapy sampler (a decoder-only transformer over audio codec tokens with a key-value
cache, conditioned on tinnitus pitch, therapy and loudness, top-k sampling by the Gumbel trick, a transposed
convolution decoder to audio and a notch around the tinnitus pitch by an FFT).
Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths,
resolutions and batch sizes are fixed on the host, padding handled by masks or by torch.where / masked_fill, no
boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
abr_wave_transformer_serve uploads its sweeps on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new124.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and
for the CPU smoke run (RECORD_SMOKE=1).
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, keep_mask, mlp, rfftfreq

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- hearing-aid speech enhancement (conv encoder-decoder)


class _CrmUNet(_nn.Module):
    """Four frequency-strided (2, 1) convolution levels over (frequency, frame) with batch norm and PReLU, two
    time-dilated residual convolutions at the bottom, transposed-convolution levels back with skip concatenations, a
    2-channel complex ratio mask."""

    def __init__(self, widths):
        super().__init__()
        self.enc, cin = _nn.ModuleList(), 2
        for c in widths:
            self.enc.append(_nn.Sequential(_nn.Conv2d(cin, c, 3, (2, 1), 1), _nn.BatchNorm2d(c), _nn.PReLU(c)))
            cin = c
        self.mid = _nn.ModuleList(_nn.Sequential(_nn.Conv2d(cin, cin, 3, 1, (1, d), dilation=(1, d)),
                                                 _nn.BatchNorm2d(cin), _nn.PReLU(cin)) for d in (2, 4))
        self.dec = _nn.ModuleList()
        outs = list(widths[:-1][::-1]) + [16]
        for c_skip, c in zip(widths[::-1], outs):
            self.dec.append(_nn.Sequential(_nn.ConvTranspose2d(cin + c_skip, c, (4, 3), (2, 1), (1, 1)),
                                           _nn.BatchNorm2d(c), _nn.PReLU(c)))
            cin = c
        self.out = _nn.Conv2d(cin, 2, 1)

    def forward(self, x):
        skips, h = [], x
        for e in self.enc:
            h = e(h)
            skips.append(h)
        for m in self.mid:
            h = h + m(h)
        for d, s in zip(self.dec, skips[::-1]):
            h = d(torch.cat([h, s], 1))
        return self.out(h).float()


@_workload("hearing-aid speech enhancement training (random init, a 2-d convolutional encoder-decoder predicting a complex ratio mask): 8-32 noisy clips a step (drawn, at most 24 x 3 s a step) of 1-4 s at 16 kHz (drawn per step in quarter seconds), clean speech and noise drawn on the device and mixed at a signal-to-noise ratio of -5 to 15 dB drawn per clip on the device; a 512-point STFT (hop 128, Hann window) keeping 256 bins, magnitudes compressed by a power of 0.3 with the phase kept as the 2-channel input; four frequency-strided convolution levels (32, 48, 64, 96 channels, batch norm, PReLU), two time-dilated residual convolutions (dilations 2 and 4), four transposed-convolution levels back with skip concatenations, a complex ratio mask bounded by tanh on its magnitude, applied to the noisy spectrum; a compressed-magnitude MSE plus a compressed complex MSE against the clean spectrum; Adam with a warm-up, clipping, bf16 autocast, 690 steps; the losses read back every 20 steps and every 138 steps a no-grad pass over 16 clips of 4 s with the spectral SNR before and after enhancement read back")
def hearing_aid_crm_unet_train(rng):
    widths = _smoke([32, 48, 64, 96], [8, 8, 8, 8])
    sr, n_fft, hop = _smoke(16000, 2000), _smoke(512, 64), _smoke(128, 16)
    n_bin = n_fft // 2
    model = _CrmUNet(widths).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 30))
    window = torch.hann_window(n_fft, device="cuda")
    quarter = sr // 4
    budget = _smoke(24 * 3 * 16000, 4 * 2000)

    def spec(w):
        return torch.stft(w, n_fft, hop, window=window, return_complex=True)[:, :n_bin]

    def clips(b, n):
        clean = torch.randn(b, n, device="cuda") * (0.05 + 0.2 * torch.rand(b, 1, device="cuda"))
        noise = torch.randn(b, n, device="cuda")
        snr = torch.rand(b, 1, device="cuda") * 20.0 - 5.0
        rms_c, rms_n = clean.pow(2).mean(-1, keepdim=True).sqrt(), noise.pow(2).mean(-1, keepdim=True).sqrt()
        gain = rms_c / (rms_n * 10 ** (snr / 20))
        return spec(clean + gain * noise), spec(clean)

    def enhance(sn):
        mag = sn.abs().clamp_min(1e-8)
        comp = torch.view_as_real(sn * (mag.pow(0.3) / mag))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            m = model(comp.permute(0, 3, 1, 2))
        mr, mi = m[:, 0], m[:, 1]
        mm = torch.sqrt(mr * mr + mi * mi + 1e-8)
        scale = torch.tanh(mm) / mm
        return sn * torch.complex(mr * scale, mi * scale)

    def losses(est, sc):
        me, mc = est.abs().clamp_min(1e-8), sc.abs().clamp_min(1e-8)
        ce, cc = est * (me.pow(0.3) / me), sc * (mc.pow(0.3) / mc)
        l_mag = _F.mse_loss(me.pow(0.3), mc.pow(0.3))
        l_cplx = _F.mse_loss(torch.view_as_real(ce), torch.view_as_real(cc))
        return l_mag, l_cplx

    steps = _smoke(690, 3)
    for step in range(steps):
        model.train()
        n = rng.randint(_smoke(4, 2), _smoke(16, 4)) * quarter
        b = min(rng.randint(_smoke(8, 2), _smoke(32, 4)), budget // n)
        sn, sc = clips(b, n)
        est = enhance(sn)
        l_mag, l_cplx = losses(est, sc)
        loss = l_mag + 0.3 * l_cplx
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            torch.stack([l_mag.detach(), l_cplx.detach()]).tolist()
        del sn, sc, est, l_mag, l_cplx, loss
        if (step + 1) % _smoke(138, 2) == 0:
            model.eval()
            with torch.no_grad():
                sn, sc = clips(_smoke(16, 2), _smoke(16, 4) * quarter)
                est = enhance(sn)
                p_clean = sc.abs().pow(2).sum((1, 2))
                snr_in = 10 * torch.log10(p_clean / (sn - sc).abs().pow(2).sum((1, 2)).clamp_min(1e-8))
                snr_out = 10 * torch.log10(p_clean / (est - sc).abs().pow(2).sum((1, 2)).clamp_min(1e-8))
                res = torch.stack([snr_in.mean(), snr_out.mean()])
            res.tolist()
            del sn, sc, est, p_clean, snr_in, snr_out, res


# ---------------------------------------------------------------- acoustic feedback cancellation (GRU written out)


class _FeedbackGru(_nn.Module):
    """Each frame's microphone block and the receiver's current and previous blocks through a linear layer, a GRU
    cell written out with linear gates, a head to the frame's feedback-path FIR taps."""

    def __init__(self, blk, d, taps):
        super().__init__()
        self.inp = _nn.Sequential(_nn.Linear(3 * blk, d), _nn.LayerNorm(d), _nn.GELU())
        self.x2h, self.h2h = _nn.Linear(d, 3 * d), _nn.Linear(d, 3 * d)
        self.head = mlp(d, d, taps, act=_nn.GELU)
        self.d = d

    def forward(self, feats, keep):
        b, f, _ = feats.shape
        xs = self.x2h(self.inp(feats))
        h = xs.new_zeros(b, self.d)
        hs = []
        for i in range(f):
            xr, xz, xn = xs[:, i].float().chunk(3, -1)
            hr, hz, hn = self.h2h(h).float().chunk(3, -1)
            r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
            h_new = ((1 - z) * torch.tanh(xn + r * hn) + z * h.float()).to(h.dtype)
            h = torch.where(keep[:, i, None], h_new, h)
            hs.append(h)
        return self.head(torch.stack(hs, 1)).float()


@_workload("hearing-aid acoustic feedback cancellation training (random init, a GRU cell written out frame by frame): 96-384 hearing-aid clips a step (drawn), each 16-40 frames of 128 samples at 16 kHz (drawn per clip, padded to the step's longest, a step at most 40 frames), the receiver signal and the near-end speech drawn on the device, a 64-tap feedback path a clip (a drawn gain and decay times Gaussian taps) applied to the receiver signal by a grouped 1-d convolution and added to the microphone; each frame's microphone block with the receiver's current and previous blocks through a linear layer (width 256, layer norm, GELU), a GRU cell written out with linear gates frame by frame (padded frames keeping the state by torch.where), an MLP to the frame's 64 feedback-path taps; the estimated feedback by applying the taps to the unfolded receiver history, its MSE against the true feedback and the tap misalignment against the true path, both over the kept frames; AdamW with a warm-up, clipping, bf16 autocast, 175 steps; the losses read back every 10 steps and every 35 steps a no-grad pass over 384 clips of 40 frames with the misalignment in dB and the residual feedback reduction in dB read back")
def feedback_cancel_gru_train(rng):
    blk, d, taps = _smoke(128, 16), _smoke(256, 16), _smoke(64, 8)
    model = _FeedbackGru(blk, d, taps).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 20))
    lo, hi = _smoke(16, 2), _smoke(40, 5)
    k_idx = torch.arange(taps, device="cuda").float()

    def clips(lengths, f):
        b, n = len(lengths), f * blk
        keep = keep_mask(lengths, f)
        gain = 0.05 + 0.3 * torch.rand(b, 1, device="cuda")
        decay = 4.0 + 20.0 * torch.rand(b, 1, device="cuda")
        path = gain * torch.randn(b, taps, device="cuda") * torch.exp(-k_idx / decay)
        recv = torch.randn(b, n, device="cuda") * keep.repeat_interleave(blk, 1)
        speech = 0.3 * torch.randn(b, n, device="cuda")
        pad = _F.pad(recv, (taps - 1, 0))
        fb = _F.conv1d(pad[None], path.flip(-1)[:, None], groups=b)[0]
        mic = speech + fb
        prev = _F.pad(recv, (blk, 0))[:, :n]
        feats = torch.cat([mic.view(b, f, blk), recv.view(b, f, blk), prev.view(b, f, blk)], -1)
        hist = pad.unfold(-1, taps, 1).flip(-1).reshape(b, f, blk, taps)
        return feats, keep, hist, fb.view(b, f, blk), path

    def run(feats, keep, hist):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            est_taps = model(feats, keep)
        return est_taps, torch.einsum("bfjk,bfk->bfj", hist, est_taps)

    def losses(est_taps, est_fb, fb, path, keep):
        w = keep.float()
        l_fb = ((est_fb - fb).pow(2).mean(-1) * w).sum() / w.sum()
        mis = (est_taps - path[:, None]).pow(2).sum(-1) / path.pow(2).sum(-1, keepdim=True).clamp_min(1e-8)
        return l_fb, (mis * w).sum() / w.sum(), mis

    steps = _smoke(175, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(96, 2), _smoke(384, 4))
        lengths = [rng.randint(lo, hi) for _ in range(b)]
        feats, keep, hist, fb, path = clips(lengths, max(lengths))
        est_taps, est_fb = run(feats, keep, hist)
        l_fb, l_mis, _ = losses(est_taps, est_fb, fb, path, keep)
        loss = 10.0 * l_fb + l_mis
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 10 == 0:
            torch.stack([l_fb.detach(), l_mis.detach()]).tolist()
        del feats, keep, hist, fb, path, est_taps, est_fb, l_fb, l_mis, loss
        if (step + 1) % _smoke(35, 2) == 0:
            model.eval()
            with torch.no_grad():
                nb = _smoke(384, 3)
                feats, keep, hist, fb, path = clips([hi] * nb, hi)
                est_taps, est_fb = run(feats, keep, hist)
                _, _, mis = losses(est_taps, est_fb, fb, path, keep)
                red = fb.pow(2).mean() / (fb - est_fb).pow(2).mean().clamp_min(1e-12)
                res = torch.stack([10 * torch.log10(mis.mean().clamp_min(1e-12)), 10 * torch.log10(red)])
            res.tolist()
            del feats, keep, hist, fb, path, est_taps, est_fb, mis, red, res


# ---------------------------------------------------------------- ABR wave detection service (patch transformer)


class _AbrNet(_nn.Module):
    """Each level's averaged waveform cut into 8-sample patches through a linear layer, with a patch position table
    and a stimulus-level table (0-100 dB nHL in 10 dB steps), pre-norm blocks over all levels of an ear together;
    per-patch heads to wave I, III and V peak logits for each of the patch's samples and a per-level response logit
    from the level's mean token."""

    def __init__(self, d, heads, layers, n_patch, n_level, psz):
        super().__init__()
        self.patch = _nn.Linear(psz, d)
        self.pos, self.level = _nn.Embedding(n_patch, d), _nn.Embedding(n_level, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.peaks = _nn.Linear(d, 3 * psz)
        self.resp = mlp(d, d, 1, act=_nn.GELU)
        self.psz = psz

    def forward(self, avg, lvl):
        e, n_lv, t = avg.shape
        p = t // self.psz
        z = self.patch(avg.view(e, n_lv, p, self.psz))
        z = z + self.pos(torch.arange(p, device=avg.device))[None, None] + self.level(lvl)[:, :, None]
        z = z.view(e, n_lv * p, -1)
        for blk in self.blocks:
            z = blk(z)
        z = self.norm(z).view(e, n_lv, p, -1)
        peaks = self.peaks(z).view(e, n_lv, p, 3, self.psz).permute(0, 1, 3, 2, 4).reshape(e, n_lv, 3, t)
        return peaks.float(), self.resp(z.mean(2))[..., 0].float()


@_workload("auditory brainstem response (ABR) serving (random init, a patch transformer over averaged sweeps): 1,760-1,820 requests (drawn) of 1-2 ears (drawn) tested at 4-8 click levels (drawn, descending from 90 dB nHL in 10 dB steps) with 256-1,024 sweeps a level (drawn per request, a multiple of 128) of 256 samples (12.8 ms at 20 kHz), 16-bit sweeps uploaded on a side stream from two reused pinned host buffers (filled once, sized for 2 x 8 x 1,024 x 256) one request ahead (one span, through SideUploads.ahead), scaled on the device; artefact rejection (sweeps whose peak exceeds a fixed limit weighted out by a 0/1 mask), the weighted average and the even/odd split-half averages with their correlation a level, the average normalised by its peak an ear; 8-sample patches through a linear layer to width 192 with a 32-row patch table and an 11-row level table, 4 pre-norm blocks (6 heads) over all the ear's levels under bf16 autocast; wave I, III and V peak logits a sample with their latencies in ms by a soft-argmax, a response logit a level; the threshold as the lowest level whose response probability exceeds 0.5 (by torch.where and amin); each request's latencies, response probabilities, split-half correlations, rejection rates and thresholds read back once")
def abr_wave_transformer_serve(rng):
    d, heads, layers = _smoke(192, 16), _smoke(6, 2), _smoke(4, 1)
    psz, t, n_level = 8, _smoke(256, 32), 11
    max_e, max_l, max_s, s_mult = 2, _smoke(8, 3), _smoke(1024, 16), _smoke(128, 8)
    model = _AbrNet(d, heads, layers, t // psz, n_level, psz).cuda().eval()
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(-3000, 3000, (max_e * max_l * max_s * t,), dtype=torch.int16, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    ms = torch.arange(t, device="cuda").float() / 20.0

    nreq = rng.randint(_smoke(1760, 3), _smoke(1820, 4))
    plan = [(rng.randint(1, max_e), rng.randint(_smoke(4, 2), max_l), rng.randint(2, max_s // s_mult) * s_mult)
            for _ in range(nreq)]

    for (e, n_lv, n_sw), raw in up.ahead(plan, lambda p: (p[0] * p[1] * p[2] * t,)):
        with torch.no_grad():
            sw = raw.view(e, n_lv, n_sw, t).float() / 32768.0
            ok = (sw.abs().amax(-1) < 0.085).float()
            avg = (sw * ok[..., None]).sum(2) / ok.sum(2)[..., None].clamp_min(1.0)
            ev, od = sw[:, :, 0::2], sw[:, :, 1::2]
            a_ev = (ev * ok[:, :, 0::2, None]).sum(2) / ok[:, :, 0::2].sum(2)[..., None].clamp_min(1.0)
            a_od = (od * ok[:, :, 1::2, None]).sum(2) / ok[:, :, 1::2].sum(2)[..., None].clamp_min(1.0)
            a_ev, a_od = a_ev - a_ev.mean(-1, keepdim=True), a_od - a_od.mean(-1, keepdim=True)
            corr = (a_ev * a_od).sum(-1) / (a_ev.norm(dim=-1) * a_od.norm(dim=-1)).clamp_min(1e-8)
            norm = avg / avg.abs().amax((1, 2), keepdim=True).clamp_min(1e-6)
            lv_db = [9 - i for i in range(n_lv)]
            lvl = torch.tensor(lv_db, device="cuda")[None].expand(e, -1)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                peaks, resp = model(norm, lvl)
            lat = (peaks.softmax(-1) * ms).sum(-1)
            p_resp = torch.sigmoid(resp)
            db = lvl.float() * 10.0
            thr = torch.where(p_resp > 0.5, db, torch.full_like(db, 120.0)).amin(-1)
            rej = 1.0 - ok.mean(2)
            res = torch.cat([lat.flatten(), p_resp.flatten(), corr.flatten(), rej.flatten(), thr])
        res.tolist()
        del raw, sw, ok, avg, ev, od, a_ev, a_od, corr, norm, lvl, peaks, resp, lat, p_resp, db, thr, rej, res


# ---------------------------------------------------------------- tinnitus sound-therapy sampler (codec transformer)


class _TherapyLm(_nn.Module):
    """A decoder-only transformer over audio codec tokens: a token table, a position table, three condition tokens
    in front (tinnitus pitch band, therapy kind, loudness step), pre-norm blocks with a preallocated key-value cache;
    a transposed 1-d convolution decoder from token embeddings to audio."""

    def __init__(self, vocab, d, heads, layers, max_pos, n_pitch, n_kind, n_loud):
        super().__init__()
        self.tok, self.pos = _nn.Embedding(vocab, d), _nn.Embedding(max_pos, d)
        self.pitch, self.kind, self.loud = _nn.Embedding(n_pitch, d), _nn.Embedding(n_kind, d), _nn.Embedding(n_loud, d)
        self.n1 = _nn.ModuleList(_nn.LayerNorm(d) for _ in range(layers))
        self.qkv = _nn.ModuleList(_nn.Linear(d, 3 * d) for _ in range(layers))
        self.proj = _nn.ModuleList(_nn.Linear(d, d) for _ in range(layers))
        self.ff = _nn.ModuleList(_nn.Sequential(_nn.LayerNorm(d), _nn.Linear(d, 4 * d), _nn.GELU(),
                                                _nn.Linear(4 * d, d)) for _ in range(layers))
        self.norm, self.lm = _nn.LayerNorm(d), _nn.Linear(d, vocab)
        self.codes = _nn.Embedding(vocab, 128)
        ups, cin = [], 128
        for c, s in zip([96, 64, 32, 16], [4, 4, 4, 5]):
            ups += [_nn.ConvTranspose1d(cin, c, 2 * s, s, s // 2 + s % 2, output_padding=s % 2), _nn.ELU()]
            cin = c
        self.dec = _nn.Sequential(*ups, _nn.Conv1d(cin, 1, 7, 1, 3), _nn.Tanh())
        self.h = heads

    def step(self, x, pos0, cache_k, cache_v):
        """x (B, L, d) at positions pos0 .. pos0 + L - 1: writes their keys and values into the caches and attends
        over the cache up to the last of them (causally inside x)."""
        b, n, d = x.shape
        end = pos0 + n
        for i in range(len(self.qkv)):
            q, k, v = self.qkv[i](self.n1[i](x)).view(b, n, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
            cache_k[i, :, :, pos0:end] = k
            cache_v[i, :, :, pos0:end] = v
            kk, vv = cache_k[i, :, :, :end].to(q.dtype), cache_v[i, :, :, :end].to(q.dtype)
            a = _F.scaled_dot_product_attention(q, kk, vv, is_causal=n > 1)
            x = x + self.proj[i](a.transpose(1, 2).reshape(b, n, d))
            x = x + self.ff[i](x)
        return self.lm(self.norm(x[:, -1])).float()


@_workload("tinnitus sound-therapy sampling (random init, a decoder-only transformer over audio codec tokens with a key-value cache): 12-13 requests (drawn) of 1-8 therapy streams (drawn), each with a tinnitus pitch (of 32 log-spaced bands from 1 to 12 kHz), a therapy kind (of 4: notched music, broadband masking, nature sounds, fractal tones) and a loudness step (of 8) drawn; three condition tokens in front, a 1,024-token codebook, a 259-row position table, 6 pre-norm blocks (width 384, 6 heads) with a bf16 key-value cache preallocated per request for its 3 condition tokens and generated tokens; 96-256 tokens generated one at a time (drawn per request, 50 tokens a second), a temperature of 0.7-1.1 and a top-k of 16-128 (drawn per request), the k-th largest logit as the cut by masked_fill and the token drawn by the Gumbel-max trick on the device; the tokens through a 128-wide code table and four transposed 1-d convolutions (strides 4, 4, 4, 5) to 16 kHz audio, a notch of half an octave around each stream's tinnitus pitch by rfft, torch.where and irfft; each request's tokens and 16-bit audio read back once")
def tinnitus_notched_music_sample(rng):
    vocab, d, heads, layers = _smoke(1024, 32), _smoke(384, 32), _smoke(6, 2), _smoke(6, 2)
    n_pitch, n_kind, n_loud, sr = 32, 4, 8, 16000
    lo, hi, max_n = _smoke(96, 3), _smoke(256, 5), _smoke(8, 2)
    model = _TherapyLm(vocab, d, heads, layers, 3 + hi, n_pitch, n_kind, n_loud).cuda().eval()
    model.requires_grad_(False)
    dh = d // heads
    pitch_hz = torch.exp(torch.linspace(math.log(1000.0), math.log(12000.0), n_pitch, device="cuda"))

    nreq = rng.randint(_smoke(12, 2), _smoke(13, 3))
    for _ in range(nreq):
        n, n_new = rng.randint(1, max_n), rng.randint(lo, hi)
        temp, top_k = rng.uniform(0.7, 1.1), rng.randint(_smoke(16, 2), _smoke(128, 8))
        with torch.no_grad():
            pitch = torch.randint(0, n_pitch, (n,), device="cuda")
            kind = torch.randint(0, n_kind, (n,), device="cuda")
            loud = torch.randint(0, n_loud, (n,), device="cuda")
            ck = torch.zeros(layers, n, heads, 3 + n_new, dh, dtype=torch.bfloat16, device="cuda")
            cv = torch.zeros_like(ck)
            x = torch.stack([model.pitch(pitch), model.kind(kind), model.loud(loud)], 1)
            x = x + model.pos(torch.arange(3, device="cuda"))[None]
            toks = []
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model.step(x, 0, ck, cv)
                for i in range(n_new):
                    logits = logits / temp
                    kth = logits.topk(top_k, -1).values[:, -1:]
                    logits = logits.masked_fill(logits < kth, float("-inf"))
                    g = -torch.log(-torch.log(torch.rand_like(logits).clamp(1e-9, 1.0 - 1e-7)))
                    tok = (logits + g).argmax(-1)
                    toks.append(tok)
                    if i + 1 < n_new:
                        x = (model.tok(tok) + model.pos.weight[3 + i])[:, None]
                        logits = model.step(x, 3 + i, ck, cv)
                codes = torch.stack(toks, 1)
                wav = model.dec(model.codes(codes).transpose(1, 2))[:, 0].float()
            spec = torch.fft.rfft(wav)
            f = rfftfreq(wav.shape[-1], 1.0 / sr)
            fc = pitch_hz[pitch][:, None]
            notch = (f[None] > fc * 2 ** -0.25) & (f[None] < fc * 2 ** 0.25)
            spec = torch.where(notch, torch.zeros_like(spec), spec)
            out = torch.fft.irfft(spec, n=wav.shape[-1])
            pcm = (out.clamp(-1.0, 1.0) * 32767.0).to(torch.int16)
        codes.tolist()
        pcm.cpu()
        del pitch, kind, loud, ck, cv, x, toks, logits, codes, wav, spec, f, fc, notch, out, pcm

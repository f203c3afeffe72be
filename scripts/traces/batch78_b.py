"""The seventy-eighth batch of held-out workloads for record.py, second half (the first is batch78.py): oceanography,
marine science and fisheries, written in torch alone. A Fourier neural operator surrogate of sea-surface temperature
trained by autoregressive rollouts (fields drawn on the device from a damped, drifting spectral recurrence over a
land mask, rfft2/irfft2 spectral layers on regional crops of drawn sizes, rollouts of drawn length, a loss over the
ocean cells only), a whale-call detection service over hydrophone audio (int16 chunks of drawn length from 1-4
hydrophones uploaded on a side stream, framing and an rfft short-time spectrum, a mel filterbank and PCEN-style
normalisation, a CNN detector with per-frame scores, smoothing, hysteresis and event merging by cumulative sums and
scatter_reduce), Argo float profile interpolation (a set transformer over irregular depth samples of temperature and
salinity with key-padding masks, query depths cross-attending to them, a Gaussian negative log-likelihood) and a
fisheries catch-at-age management-strategy-evaluation simulation (thousands of stochastic age-structured population
replicates stepped in tensors, autocorrelated Beverton-Holt recruitment deviations, Baranov catch, noisy survey and
catch observations, a per-replicate estimation model fitted by gradient descent each year and a hockey-stick harvest
control rule with implementation error). Same conventions as the earlier batches: nothing downloaded, data drawn at
random on the device (or, for the whale service, from two reused pinned host buffers), `rng` the workload's
random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1
runs are tiny. No control flow reads a tensor's value: crop sizes, rollout lengths, chunk lengths, sample counts,
replicate counts and iteration counts are fixed on the host, padding and land handled by masks multiplied in or by
torch.where / masked_fill, no boolean-mask indexing; losses, metrics, detections and simulation summaries are read
back only at logging points. hydrophone_whale_detect_serve uses a side stream (uploads waited on by event, the tensors
record_stream'ed); the others are single-stream. The networks run under bf16 autocast (the FNO's spectral products in
fp32); the simulation is fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new78.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and for
which of them the CPU smoke run (RECORD_SMOKE=1) ran.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, _mha, mlp, randint, rfftfreq

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- FNO sea-surface temperature rollouts


class _Spectral(_nn.Module):
    """A 2-d spectral convolution: the lowest modes x modes of rfft2, mixed by complex weights (held as real and
    imaginary parts), back by irfft2; computed in fp32 outside autocast."""

    def __init__(self, c, modes):
        super().__init__()
        self.m = modes
        s = 1 / (c * c)
        self.wr = _nn.Parameter(torch.randn(2, c, c, modes, modes) * s)
        self.wi = _nn.Parameter(torch.randn(2, c, c, modes, modes) * s)

    def forward(self, x):
        b, c, h, w = x.shape
        m = self.m
        with torch.autocast("cuda", enabled=False):
            f = torch.fft.rfft2(x.float(), norm="ortho")
            wt = torch.complex(self.wr, self.wi)
            out = torch.zeros(b, c, h, w // 2 + 1, dtype=f.dtype, device=x.device)
            out[:, :, :m, :m] = torch.einsum("bixy,ioxy->boxy", f[:, :, :m, :m], wt[0])
            out[:, :, -m:, :m] = torch.einsum("bixy,ioxy->boxy", f[:, :, -m:, :m], wt[1])
            return torch.fft.irfft2(out, s=(h, w), norm="ortho")


class _FNO(_nn.Module):
    def __init__(self, cin, width, modes, layers):
        super().__init__()
        self.lift = _nn.Conv2d(cin, width, 1)
        self.spec = _nn.ModuleList(_Spectral(width, modes) for _ in range(layers))
        self.pw = _nn.ModuleList(_nn.Conv2d(width, width, 1) for _ in range(layers))
        self.proj = _nn.Sequential(_nn.Conv2d(width, 2 * width, 1), _nn.GELU(), _nn.Conv2d(2 * width, 1, 1))

    def forward(self, x):
        h = self.lift(x)
        for i, (s, p) in enumerate(zip(self.spec, self.pw)):
            h = s(h).to(h.dtype) + p(h)
            if i < len(self.spec) - 1:
                h = _F.gelu(h)
        return self.proj(h)


@_workload("Fourier neural operator surrogate of sea-surface temperature trained by autoregressive rollouts (random init): a 360 x 720 global field sequence drawn on the device from a damped, drifting spectral recurrence (a seasonal mean by latitude plus anomalies advanced by random phase rotations and forcing) under a land mask; 4-10 regional crops a step (drawn) of 64-160 x 128-320 cells (drawn, multiples of 16), two past frames, the land mask and sin/cos latitude and longitude as inputs, rollouts of 1-6 steps (drawn) feeding predictions back; an FNO of 4 spectral layers (width 48, 16 x 16 modes, rfft2 / irfft2 in fp32) with pointwise convolutions under bf16 autocast, an MSE over the ocean cells summed over the rollout, AdamW with a cosine schedule, clipping, 375 steps; the loss read back every 10 steps and every 75 steps an evaluation rollout of 10 steps over 2 crops of 160 x 320 with per-lead RMSE over ocean read back")
def sst_fno_rollout_train(rng):
    gh, gw = _smoke(360, 48), _smoke(720, 96)
    width, modes, layers = _smoke(48, 8), _smoke(16, 4), 4
    # a land mask: smoothed noise thresholded, fixed for the run
    land = (_F.interpolate(torch.randn(1, 1, gh // 24, gw // 24, device="cuda"), size=(gh, gw), mode="bilinear",
                           align_corners=False) > 0.8).float()
    ocean = 1 - land
    lat = torch.linspace(-math.pi / 2, math.pi / 2, gh, device="cuda")[:, None].expand(gh, gw)
    lon = torch.linspace(-math.pi, math.pi, gw, device="cuda")[None].expand(gh, gw)
    coords = torch.stack([lat.sin(), lat.cos(), lon.sin(), lon.cos()])
    clim = 28 * lat.cos() - 2
    kf = rfftfreq(gw)[None] * gw
    kh = torch.cat([torch.arange(0, gh // 2, device="cuda"), torch.arange(-(gh - gh // 2), 0, device="cuda")]).float()
    rot = torch.exp(-((kf ** 2 + kh[:, None] ** 2) / 400.0))  # damping of each mode
    phase = torch.randn(gh, gw // 2 + 1, device="cuda") * 0.3  # drift of each mode a step
    model = _FNO(3 + 4, width, modes, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)

    def sequence(n):
        """n consecutive global fields (n, gh, gw) of the recurrence, from a fresh random anomaly."""
        a = torch.fft.rfft2(torch.randn(gh, gw, device="cuda")) * rot
        frames = []
        for t in range(n):
            a = a * rot.pow(0.05) * torch.polar(torch.ones_like(phase), phase) \
                + torch.fft.rfft2(torch.randn(gh, gw, device="cuda")) * rot * 0.2
            frames.append((clim + torch.fft.irfft2(a, s=(gh, gw)) * 40) * ocean[0, 0])
        return torch.stack(frames)

    def crops(seq, b, h, w):
        """b crops (b, n, h, w) of seq and their static channels (b, 5, h, w), at drawn corners."""
        n = seq.shape[0]
        r0 = torch.randint(0, gh - h + 1, (b, 1, 1), device="cuda")
        c0 = torch.randint(0, gw - w + 1, (b, 1, 1), device="cuda")
        rows = (r0 + torch.arange(h, device="cuda")[None, :, None]).expand(b, h, w)
        cols = (c0 + torch.arange(w, device="cuda")[None, None, :]).expand(b, h, w)
        flat = (rows * gw + cols).flatten(1)
        fields = seq.flatten(1)[:, flat].permute(1, 0, 2).reshape(b, n, h, w)
        stat = torch.cat([ocean[0].flatten(1), coords.flatten(1)])[:, flat].permute(1, 0, 2).reshape(b, 5, h, w)
        return (fields - 15) / 10, stat

    def rollout(fields, stat, lead):
        prev, cur = fields[:, 0:1], fields[:, 1:2]
        preds = []
        for t in range(lead):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                delta = model(torch.cat([prev, cur, stat], 1))
            nxt = (cur + delta.float()) * stat[:, :1]
            preds.append(nxt)
            prev, cur = cur, nxt
        return torch.cat(preds, 1)

    steps = _smoke(375, 3)
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = 1e-3 * 0.5 * (1 + math.cos(math.pi * step / steps))
        model.train()
        b = rng.randint(_smoke(4, 2), _smoke(10, 3))
        h, w = randint(rng, _smoke(64, 16), _smoke(160, 32), 16), randint(rng, _smoke(128, 16), _smoke(320, 48), 16)
        lead = rng.randint(1, 6)
        seq = sequence(lead + 2)
        fields, stat = crops(seq, b, h, w)
        pred = rollout(fields, stat, lead)
        m = stat[:, :1]
        loss = ((pred - fields[:, 2:]).pow(2) * m).sum() / (m.sum() * lead).clamp(min=1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            loss.item()
        del seq, fields, stat, pred, m, loss
        if (step + 1) % _smoke(75, 2) == 0:
            model.eval()
            lead = _smoke(10, 3)
            with torch.no_grad():
                seq = sequence(lead + 2)
                fields, stat = crops(seq, 2, _smoke(160, 32), _smoke(320, 48))
                pred = rollout(fields, stat, lead)
                m = stat[:, :1]
                rmse = (((pred - fields[:, 2:]).pow(2) * m).sum((0, 2, 3)) / m.sum().clamp(min=1)).sqrt() * 10
            rmse.tolist()
            del seq, fields, stat, pred, m, rmse


# ---------------------------------------------------------------- hydrophone whale-call detection service


def _mel_bank(n_freq, n_mels, sr, fmin, fmax):
    """A triangular mel filterbank (n_freq, n_mels) built on the device."""

    def mel(f):
        return 2595 * torch.log10(1 + f / 700)

    lo, hi = mel(torch.tensor(float(fmin), device="cuda")), mel(torch.tensor(float(fmax), device="cuda"))
    pts = 700 * (10 ** ((torch.linspace(0, 1, n_mels + 2, device="cuda") * (hi - lo) + lo) / 2595) - 1)
    freqs = torch.linspace(0, sr / 2, n_freq, device="cuda")
    left, centre, right = pts[:-2], pts[1:-1], pts[2:]
    up = (freqs[:, None] - left[None]) / (centre - left)[None]
    down = (right[None] - freqs[:, None]) / (right - centre)[None]
    return torch.minimum(up, down).clamp(min=0)


class _CallDetector(_nn.Module):
    def __init__(self, widths, n_mels, classes):
        super().__init__()
        layers, c = [], 1
        for w in widths:
            layers += [_nn.Conv2d(c, w, 3, 1, 1, bias=False), _nn.BatchNorm2d(w), _nn.ReLU(),
                       _nn.Conv2d(w, w, 3, 1, 1, bias=False), _nn.BatchNorm2d(w), _nn.ReLU(),
                       _nn.MaxPool2d((2, 1))]
            c = w
        self.cnn = _nn.Sequential(*layers)
        f = n_mels // 2 ** len(widths)
        self.temporal = _nn.Sequential(_nn.Conv1d(c * f, 128, 5, 1, 2), _nn.ReLU(), _nn.Conv1d(128, 128, 5, 1, 4, 2),
                                       _nn.ReLU(), _nn.Conv1d(128, classes, 1))

    def forward(self, spec):
        h = self.cnn(spec)
        return self.temporal(h.flatten(1, 2)).float()


@_workload("whale-call detection service over hydrophone audio (random init): 2,900-3,200 requests (drawn), each 1-4 hydrophones (drawn) x a chunk of 20-120 s at 2 kHz (drawn, whole seconds), the int16 samples uploaded on a side stream from two reused pinned host buffers one request ahead (waited on by event, record_stream'ed); on the device scaling, DC removal, framing (512-sample Hann frames, hop 128) and an rfft power spectrum, a 64-band mel filterbank (10-1,000 Hz), log and a PCEN-style per-band normalisation, a CNN (widths 16-32-64, batch norm, frequency pooling) and a dilated temporal convolution giving per-frame scores for 4 call types (blue, fin, humpback, right) under bf16 autocast and eval-mode batch norm; median-free smoothing by average pooling, hysteresis thresholds, per-channel event segments by cumulative sums of onsets, each event's peak score and extent by scatter_reduce into at most 64 slots, a per-chunk score, and each request's events read back")
def hydrophone_whale_detect_serve(rng):
    sr, n_fft, hop, n_mels, classes = 2000, _smoke(512, 128), _smoke(128, 64), _smoke(64, 16), 4
    max_ev = 64
    model = _CallDetector(_smoke([16, 32, 64], [4, 8, 8]), n_mels, classes).cuda().eval()
    model.requires_grad_(False)
    n_freq = n_fft // 2 + 1
    mel = _mel_bank(n_freq, n_mels, sr, 10, 1000)
    window = torch.hann_window(n_fft, device="cuda")
    max_h, max_s = 4, _smoke(120, 6)
    host = [torch.randint(-3000, 3000, (max_h * max_s * sr,), dtype=torch.int16).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    nreq = rng.randint(_smoke(2900, 3), _smoke(3200, 4))
    plan = [(rng.randint(1, max_h), rng.randint(_smoke(20, 3), max_s)) for _ in range(nreq)]
    slots = torch.arange(max_ev, device="cuda")

    nxt = up.upload(0, plan[0][0] * plan[0][1] * sr)
    for i in range(nreq):
        hyd, secs = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, plan[i + 1][0] * plan[i + 1][1] * sr)
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            x = raw.view(hyd, secs * sr).float() / 32768
            x = x - x.mean(1, keepdim=True)
            frames = x.unfold(1, n_fft, hop) * window
            power = torch.fft.rfft(frames, dim=-1).abs().pow(2)
            m = (power @ mel).clamp(min=1e-10).log()
            smooth = _F.avg_pool1d(m.transpose(1, 2), 25, 1, 12, count_include_pad=False)
            spec = ((m.transpose(1, 2) - smooth) / (smooth.abs() + 1).sqrt())[:, None]
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(spec)
            prob = torch.sigmoid(logits)
            prob = _F.avg_pool1d(prob, 9, 1, 4, count_include_pad=False)
            t = prob.shape[-1]
            high, low = (prob > 0.7).float(), (prob > 0.4).float()
            # hysteresis, one pass: a low-threshold frame counts if a high frame lies within 16 frames
            near = _F.max_pool1d(high, 33, 1, 16)
            on = low * near
            onset = _F.relu(on - _F.pad(on, (1, 0))[..., :-1])
            seg = (onset.cumsum(-1) * on).long().clamp(max=max_ev)  # 1.. event id, 0 outside events
            frame = torch.arange(t, device="cuda").float().expand_as(prob)
            flat = seg.flatten(0, 1)
            peak = torch.zeros(hyd * classes, max_ev + 1, device="cuda").scatter_reduce(
                1, flat, prob.flatten(0, 1), "amax", include_self=True)
            first = torch.full((hyd * classes, max_ev + 1), float(t), device="cuda").scatter_reduce(
                1, flat, frame.flatten(0, 1), "amin", include_self=True)
            last = torch.zeros(hyd * classes, max_ev + 1, device="cuda").scatter_reduce(
                1, flat, frame.flatten(0, 1), "amax", include_self=True)
            count = onset.sum(-1).flatten()
            used = (slots[None] < count[:, None]).float()
            events = torch.stack([peak[:, 1:] * used, first[:, 1:] * hop / sr * used, last[:, 1:] * hop / sr * used], -1)
            chunk_score = prob.amax(-1)
            out = torch.cat([events.flatten(), chunk_score.flatten()])
        out.tolist()
        del item, raw, x, frames, power, m, smooth, spec, logits, prob, high, low, near, on, onset, seg, frame, flat
        del peak, first, last, count, used, events, chunk_score, out


# ---------------------------------------------------------------- Argo profile interpolation


class _CrossBlock(_nn.Module):
    """Queries attending to a memory under a key-padding mask, then a GELU MLP (pre-norm)."""

    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.nq, self.nm, self.n2 = _nn.LayerNorm(d), _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.q, self.kv, self.o = _nn.Linear(d, d), _nn.Linear(d, 2 * d), _nn.Linear(d, d)
        self.fc1, self.fc2 = _nn.Linear(d, 4 * d), _nn.Linear(4 * d, d)

    def forward(self, x, mem, mask):
        k, v = self.kv(self.nm(mem)).chunk(2, -1)
        x = x + self.o(_mha(self.q(self.nq(x)), k, v, self.h, attn_mask=mask))
        return x + self.fc2(_F.gelu(self.fc1(self.n2(x))))


class _ProfileNet(_nn.Module):
    def __init__(self, d, heads, enc_layers, dec_layers, freqs):
        super().__init__()
        self.freqs = freqs
        self.obs = mlp(2 * freqs + 1 + 2 + 4, d, d, layers=2, act=_nn.GELU)
        self.qry = mlp(2 * freqs + 1 + 4, d, d, layers=2, act=_nn.GELU)
        self.enc = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(enc_layers))
        self.dec = _nn.ModuleList(_CrossBlock(d, heads) for _ in range(dec_layers))
        self.norm, self.out = _nn.LayerNorm(d), _nn.Linear(d, 4)

    def depth_feats(self, z):
        k = 2.0 ** torch.arange(self.freqs, device=z.device) * math.pi
        a = z[..., None] * k
        return torch.cat([z[..., None], a.sin(), a.cos()], -1)

    def forward(self, z, ts, smask, meta, qz):
        """z (B, N) sample depths in [0, 1], ts (B, N, 2), smask (B, N), meta (B, 4), qz (B, Q): (B, Q, 4)."""
        n, q = z.shape[1], qz.shape[1]
        h = self.obs(torch.cat([self.depth_feats(z), ts * smask[..., None], meta[:, None].expand(-1, n, -1)], -1))
        keymask = ((1 - smask) * -1e4)[:, None, None, :].to(h.dtype)
        for blk in self.enc:
            h = blk(h, mask=keymask) * smask[..., None].to(h.dtype)
        g = self.qry(torch.cat([self.depth_feats(qz), meta[:, None].expand(-1, q, -1)], -1))
        for blk in self.dec:
            g = blk(g, h, keymask)
        return self.out(self.norm(g)).float()


@_workload("Argo float temperature and salinity profile interpolation training (random init): 128-256 profiles a step (drawn, a multiple of 32), each with 32-256 irregular depth samples (drawn count per step, per-profile valid counts under a key-padding mask, depths drawn denser near the surface over 0-2,000 m) of temperature and salinity drawn on the device from a hidden mixed layer, thermocline and halocline model varying with latitude and season plus sensor noise, and 16-128 query depths (drawn) held out; sample depths Fourier-encoded with the noisy values and the profile's latitude, longitude and day of year, a 4-block set-transformer encoder (width 192, 6 heads) and 2 query blocks cross-attending to the samples, a Gaussian negative log-likelihood of both variables under bf16 autocast, AdamW with warmup and cosine decay, clipping, 330 steps; the loss read back every 20 steps and every 66 steps an evaluation of 4 x 256 profiles (128 samples, 128 queries) with the temperature and salinity RMSE and the 2-sigma coverage read back")
def argo_profile_interp_train(rng):
    d, heads, freqs = _smoke(192, 16), _smoke(6, 2), _smoke(8, 3)
    model = _ProfileNet(d, heads, _smoke(4, 1), _smoke(2, 1), freqs).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)

    def truth(z, lat, doy):
        """Temperature and salinity at normalised depths z (B, N) for latitudes and days (B, 1)."""
        sst = 28 * torch.cos(lat) - 1 + 3 * torch.sin(doy * 2 * math.pi) * torch.sin(lat)
        mld = 0.02 + 0.05 * (1 + torch.sin(doy * 2 * math.pi + lat))
        zt = 0.15 + 0.1 * torch.cos(lat)
        temp = 3 + (sst - 3) * torch.where(z < mld, torch.ones_like(z), torch.exp(-(z - mld) / zt))
        sal = 34.5 + 0.8 * torch.cos(lat) - 0.6 * torch.exp(-z / 0.08) + 0.3 * torch.tanh((z - 0.3) / 0.1)
        return torch.stack([(temp - 12) / 8, sal - 34.8], -1)

    def profiles(b, n, q):
        lat = (torch.rand(b, 1, device="cuda") - 0.5) * 2.6
        lon = torch.rand(b, 1, device="cuda") * 2 * math.pi
        doy = torch.rand(b, 1, device="cuda")
        meta = torch.cat([lat.sin(), lat.cos(), lon.sin(), lon.cos()], 1) * torch.stack(
            [torch.ones(b, device="cuda")] * 3 + [torch.cos(doy[:, 0] * 2 * math.pi)], 1)
        z = torch.rand(b, n, device="cuda").pow(2).sort(1)[0]
        counts = torch.randint(max(4, n // 4), n + 1, (b, 1), device="cuda")
        smask = (torch.arange(n, device="cuda")[None] < counts).float()
        ts = truth(z, lat, doy) + torch.randn(b, n, 2, device="cuda") * 0.02
        qz = torch.rand(b, q, device="cuda").pow(1.5)
        return z, ts, smask, meta, qz, truth(qz, lat, doy)

    def nll(pred, y):
        mu, logv = pred[..., :2], pred[..., 2:].clamp(-8, 5)
        return 0.5 * (logv + (y - mu).pow(2) * torch.exp(-logv))

    steps = _smoke(330, 3)
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = 5e-4 * min(1.0, (step + 1) / 30) * 0.5 * (1 + math.cos(math.pi * step / steps))
        model.train()
        b = randint(rng, _smoke(128, 4), _smoke(256, 8), _smoke(32, 4))
        n = rng.randint(_smoke(32, 6), _smoke(256, 12))
        q = rng.randint(_smoke(16, 3), _smoke(128, 6))
        z, ts, smask, meta, qz, y = profiles(b, n, q)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(z, ts, smask, meta, qz)
        loss = nll(pred, y).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.item()
        del z, ts, smask, meta, qz, y, pred, loss
        if (step + 1) % _smoke(66, 2) == 0:
            model.eval()
            errs, covs = [], []
            with torch.no_grad():
                for _ in range(_smoke(4, 1)):
                    z, ts, smask, meta, qz, y = profiles(_smoke(256, 4), _smoke(128, 8), _smoke(128, 6))
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        pred = model(z, ts, smask, meta, qz)
                    err = pred[..., :2] - y
                    errs.append(err.pow(2).mean((0, 1)))
                    covs.append((err.abs() < 2 * (0.5 * pred[..., 2:]).exp()).float().mean((0, 1)))
                    del z, ts, smask, meta, qz, y, pred, err
                metrics = torch.cat([torch.stack(errs).mean(0).sqrt(), torch.stack(covs).mean(0)])
            metrics.tolist()
            del errs, covs, metrics


# ---------------------------------------------------------------- catch-at-age management strategy evaluation


@_workload("fisheries catch-at-age management-strategy-evaluation simulation (fp32): 4 scenarios (harvest control rules of drawn target F and biomass breakpoints) of 33-46 years (drawn) each, 2,000-8,000 stochastic population replicates (drawn) of 20 age classes stepped in tensors: autocorrelated lognormal Beverton-Holt recruitment deviations, natural mortality, logistic fishery and survey selectivity, Baranov catch equations, a noisy survey index and catch-at-age compositions observed each year; each year a per-replicate estimation model (log recruitments of the last 10 years, log F multipliers, log catchability) fitted to the last 10 years of observations by 12 Adam steps of gradient descent, then a hockey-stick harvest control rule on the estimated spawning biomass sets a total allowable catch, applied with lognormal implementation error and solved for F by 4 Newton steps; spawning biomass, catch and the proportion of replicates below the limit read back every 5 years, and each scenario's summary at its end")
def catch_at_age_mse_sim(rng):
    ages, window, fit_iters = 20, _smoke(10, 4), _smoke(12, 3)
    a = torch.arange(ages, device="cuda").float()
    weight = 0.02 * (1 - torch.exp(-0.25 * (a + 0.5))).pow(3) * 50
    maturity = torch.sigmoid((a - 4) * 1.5)
    sel_f, sel_s = torch.sigmoid((a - 3) * 2), torch.sigmoid((a - 1.5) * 2)
    nat_m = 0.2
    for scenario in range(_smoke(4, 2)):
        reps = rng.randint(_smoke(2000, 6), _smoke(8000, 10))
        years = rng.randint(_smoke(33, 3), _smoke(46, 4))
        f_target, b_lim, b_trig = rng.uniform(0.15, 0.35), rng.uniform(0.15, 0.25), rng.uniform(0.35, 0.6)
        steep = torch.rand(reps, device="cuda") * 0.3 + 0.6
        r0 = torch.exp(torch.randn(reps, device="cuda") * 0.3 + 5)
        surv = torch.exp(-nat_m * a)
        surv = surv.clone()
        surv[-1] = surv[-1] / (1 - math.exp(-nat_m))
        spr0 = (surv * weight * maturity).sum()
        b0 = r0 * spr0
        n_at_age = r0[:, None] * surv[None]
        rec_dev = torch.zeros(reps, device="cuda")
        q_true = torch.exp(torch.randn(reps, device="cuda") * 0.2 - 7)
        obs_index = torch.zeros(reps, window, device="cuda")
        obs_caa = torch.zeros(reps, window, ages, device="cuda")
        f_hist = torch.zeros(reps, window, device="cuda")
        f_now = torch.full((reps,), 0.1, device="cuda")
        ssb_sum = torch.zeros((), device="cuda")
        catch_sum = torch.zeros((), device="cuda")
        below = torch.zeros((), device="cuda")
        # the estimation model's parameters, carried from year to year (warm starts)
        est_logr = torch.full((reps, window), 5.0, device="cuda")
        est_logf = torch.full((reps, window), math.log(0.1), device="cuda")
        est_logq = torch.full((reps,), -7.0, device="cuda")
        for year in range(years):
            ssb = (n_at_age * weight * maturity).sum(1)
            # recruitment: Beverton-Holt with autocorrelated lognormal deviations
            rec_dev = 0.5 * rec_dev + torch.randn(reps, device="cuda") * 0.6 * math.sqrt(1 - 0.25)
            bh = 4 * steep * r0 * ssb / (b0 * (1 - steep) + ssb * (5 * steep - 1))
            recruits = bh * torch.exp(rec_dev - 0.18)
            # catch at age under this year's F (Baranov)
            z = nat_m + f_now[:, None] * sel_f
            caa = n_at_age * (f_now[:, None] * sel_f / z) * (1 - torch.exp(-z))
            catch = (caa * weight).sum(1)
            index = q_true * (n_at_age * sel_s * weight).sum(1) * torch.exp(torch.randn(reps, device="cuda") * 0.2)
            comp = caa * torch.exp(torch.randn(reps, ages, device="cuda") * 0.3)
            comp = comp / comp.sum(1, keepdim=True).clamp(min=1e-9)
            obs_index = torch.cat([obs_index[:, 1:], index[:, None]], 1)
            obs_caa = torch.cat([obs_caa[:, 1:], comp[:, None]], 1)
            f_hist = torch.cat([f_hist[:, 1:], f_now[:, None]], 1)
            # ageing
            survivors = n_at_age * torch.exp(-z)
            plus = survivors[:, -1:] + survivors[:, -2:-1]
            n_at_age = torch.cat([recruits[:, None], survivors[:, :-2], plus], 1)
            ssb_sum = ssb_sum + ssb.mean()
            catch_sum = catch_sum + catch.mean()
            below = below + (ssb < b_lim * b0).float().mean()
            # estimation: a statistical catch-at-age fit over the window by gradient descent
            valid = (torch.arange(window, device="cuda") >= window - 1 - year).float()[None]
            logr = est_logr.clone().requires_grad_(True)
            logf = est_logf.clone().requires_grad_(True)
            logq = est_logq.clone().requires_grad_(True)
            eopt = torch.optim.Adam([logr, logf, logq], lr=0.05)
            for _ in range(fit_iters):
                fy = logf.exp()[..., None] * sel_f  # (reps, window, ages)
                zy = nat_m + fy
                # cohort abundance approximated from each year's recruitment and cumulative mortality by age
                nage = logr.exp()[..., None] * torch.exp(-zy.cumsum(-1) + zy)
                pred_idx = logq.exp()[:, None] * (nage * sel_s * weight).sum(-1)
                pred_caa = nage * fy / zy * (1 - torch.exp(-zy))
                pred_comp = pred_caa / pred_caa.sum(-1, keepdim=True).clamp(min=1e-9)
                l_idx = ((pred_idx.clamp(min=1e-9).log() - obs_index.clamp(min=1e-9).log()).pow(2) * valid).sum(1)
                l_caa = -(obs_caa * pred_comp.clamp(min=1e-9).log()).sum(-1).mul(valid).sum(1) * 0.2
                l_pen = (logr - logr.mean(1, keepdim=True)).pow(2).sum(1) * 0.1 \
                    + (logf - f_hist.clamp(min=1e-3).log()).pow(2).sum(1) * 0.5
                obj = (l_idx + l_caa + l_pen).sum() / reps
                eopt.zero_grad(set_to_none=True)
                obj.backward()
                eopt.step()
                del fy, zy, nage, pred_idx, pred_caa, pred_comp, l_idx, l_caa, l_pen, obj
            with torch.no_grad():
                est_logr, est_logf, est_logq = logr.detach(), logf.detach(), logq.detach()
                fy = est_logf.exp()[..., None] * sel_f
                zy = nat_m + fy
                nage = est_logr.exp()[..., None] * torch.exp(-zy.cumsum(-1) + zy)
                est_ssb = (nage[:, -1] * weight * maturity).sum(-1)
                est_b0 = est_logr.exp().mean(1) * spr0
                ratio = est_ssb / est_b0.clamp(min=1e-6)
                # hockey-stick harvest control rule
                f_hcr = f_target * ((ratio - b_lim) / (b_trig - b_lim)).clamp(0, 1)
                zt = nat_m + f_hcr[:, None] * sel_f
                tac = (n_at_age * (f_hcr[:, None] * sel_f / zt) * (1 - torch.exp(-zt)) * weight).sum(1)
                tac = tac * torch.exp(torch.randn(reps, device="cuda") * 0.1 - 0.005)
                # solve next year's F for the TAC by Newton steps on the Baranov equation
                f = f_hcr.clamp(min=1e-3)
                for _ in range(4):
                    zf = nat_m + f[:, None] * sel_f
                    frac = sel_f / zf * (1 - torch.exp(-zf))
                    c = (n_at_age * f[:, None] * frac * weight).sum(1)
                    dc = (n_at_age * weight * (frac + f[:, None] * sel_f * (
                        sel_f * torch.exp(-zf) / zf - sel_f * (1 - torch.exp(-zf)) / zf ** 2))).sum(1)
                    f = (f - (c - tac) / dc.clamp(min=1e-6)).clamp(0, 2)
                f_now = f
            del logr, logf, logq, eopt, fy, zy, nage, est_ssb, est_b0, ratio, f_hcr, zt, tac, f
            del ssb, bh, recruits, z, caa, catch, index, comp, survivors, plus, valid
            if year % 5 == 4:
                torch.stack([ssb_sum, catch_sum, below]).tolist()
        final = torch.stack([ssb_sum / years, catch_sum / years, below / years,
                             ((n_at_age * weight * maturity).sum(1) / b0).mean()])
        final.tolist()
        del steep, r0, surv, b0, n_at_age, rec_dev, q_true, obs_index, obs_caa, f_hist, f_now, final
        del est_logr, est_logf, est_logq, ssb_sum, catch_sum, below

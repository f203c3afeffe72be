"""The eighty-fourth batch of held-out workloads for record.py, second half (the first is batch84.py):
telecommunications, wireless and signal processing, written in torch alone. A neural receiver serving bursts of uplink
frames (int16 time-domain IQ samples of two antennas uploaded on a side stream, cyclic-prefix removal and an FFT of a
drawn size on the device, the active subcarriers cropped, a dilated convolutional receiver producing LLRs, the hard
bits packed to bytes and read back with per-frame checksums), a spectrum sensing service (wideband int16 captures of
drawn lengths uploaded on a side stream, a windowed short-time FFT, a U-Net segmenting the occupied time-frequency bins
fused with an energy detector against a median noise floor, per-channel occupancy and signal-type scores read back),
multi-user MIMO beamforming and beam selection training (a graph net over the users of a drawn number, each a node
with its geometric multipath channel, producing the precoders, trained unsupervised for the sum rate, with a DFT-codebook
beam-selection head) and channel-state diffusion training (a DDPM over CSI matrices of antennas x a drawn number of
subcarriers from a clustered multipath model, conditioned on the scenario, with an EMA copy and DDIM sampling at
evaluation points). Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or,
for the two services, from two reused pinned host buffers), `rng` the workload's random.Random for every shape, count
and sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a
tensor's value: frame counts, FFT sizes, capture lengths, user counts and subcarrier counts are fixed on the host,
padding handled by masks multiplied in or by torch.where / masked_fill, no boolean-mask indexing; losses, metrics and
results are read back only at logging points. neural_rx_burst_serve and spectrum_sensing_serve use a side stream
(uploads waited on by event, the tensors record_stream'ed); the others are single-stream. The networks run under bf16
autocast (the channel and rate computations in fp32 / complex64 outside it). Every lookup table covers the largest
index that can occur.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new84.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and for
which of them the CPU smoke run (RECORD_SMOKE=1) ran.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import SideUploads, _sincos, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- neural receiver serving bursts of frames


class _RxNet(_nn.Module):
    def __init__(self, cin, c, dil, nbits):
        super().__init__()
        self.stem = _nn.Conv2d(cin, c, 3, 1, 1)
        self.blocks = _nn.ModuleList(_nn.Sequential(
            _nn.Conv2d(c, c, 3, 1, d, dilation=d, groups=c), _nn.Conv2d(c, c, 1), _nn.BatchNorm2d(c), _nn.GELU())
            for d in dil)
        self.head = _nn.Conv2d(c, nbits, 1)

    def forward(self, x):
        h = self.stem(x)
        for blk in self.blocks:
            h = h + blk(h)
        return self.head(h)


@_workload("neural receiver serving bursts of uplink frames (random init, a DeepRx-style convolutional receiver in eval): 2,900-3,000 bursts (drawn) of 1-8 frames (drawn per burst), each frame 14 OFDM symbols of two antennas with a 512, 1024 or 2048-point FFT and its cyclic prefix (drawn per burst) as int16 IQ time samples, plus each frame's modulation (2, 4 or 6 bits); the samples and the modulation codes uploaded on a side stream from two reused pinned host buffers one burst ahead (waited on by event, record_stream'ed); on the device the samples scaled to complex64, the prefix removed, an FFT per symbol, the spectrum shifted and the active subcarriers (12 x 1/4 to 4/5 of the FFT size / 12 resource blocks, drawn per burst) cropped; features of the received grid, the known pilots (a table as wide as the largest FFT) and least-squares estimates; a 8-block dilated depthwise-separable convnet (64 channels) giving 6 LLRs per element under bf16 autocast, the LLRs past each frame's modulation masked by torch.where, hard bits packed into bytes; each burst's per-frame checksums and mean LLR magnitudes read back and the bytes copied back")
def neural_rx_burst_serve(rng):
    nrx, nsym, c = 2, 14, _smoke(64, 8)
    ffts = _smoke([512, 1024, 2048], [64, 128])
    cps = {f: f * 9 // 128 for f in ffts}
    maxf, nfft_max = _smoke(8, 2), max(ffts)
    dil = _smoke([(1, 1), (1, 2), (2, 4), (3, 8), (2, 4), (1, 2), (1, 1), (1, 1)], [(1, 1), (1, 2)])
    model = _RxNet(4 * nrx + 2, c, dil, 6).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    qpsk = torch.polar(torch.ones(4, device="cuda"), torch.arange(4, device="cuda").float() * math.pi / 2
                       + math.pi / 4)
    pil_full = qpsk[torch.randint(0, 4, (nsym, nfft_max), device="cuda")]
    pm_full = torch.zeros(nsym, nfft_max, device="cuda")
    pm_full[2, ::2] = 1
    pm_full[11, ::2] = 1
    per_frame = nrx * nsym * (nfft_max + cps[nfft_max]) * 2
    nsamp = maxf * per_frame
    host = []
    for _ in range(2):
        buf = torch.randint(-2048, 2048, (nsamp + maxf,), dtype=torch.int16)
        buf[nsamp:] = torch.tensor([2, 4, 6] * maxf, dtype=torch.int16)[:maxf]
        host.append(buf.pin_memory())
    up = SideUploads(host)
    nreq = rng.randint(_smoke(2900, 3), _smoke(3000, 4))
    plan = []
    for _ in range(nreq):
        f = rng.choice(ffts)
        plan.append((rng.randint(1, maxf), f, 12 * rng.randint(max(1, f // 48), f * 4 // 60)))

    def spans(i):
        nf, f, _k = plan[i]
        return nf * nrx * nsym * (f + cps[f]) * 2, slice(nsamp, nsamp + nf)

    bitw = 2 ** torch.arange(7, -1, -1, device="cuda")
    nxt = up.upload(0, *spans(0))
    for i in range(nreq):
        nf, f, k = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, *spans(i + 1))
        raw, mods, ev = item
        SideUploads.ready(ev, raw, mods)
        with torch.no_grad():
            t = raw.view(nf, nrx, nsym, f + cps[f], 2).float() / 2048
            sym = torch.view_as_complex(t[:, :, :, cps[f]:].contiguous())
            spec = torch.fft.fftshift(torch.fft.fft(sym, dim=-1, norm="ortho"), dim=-1)
            y = spec[..., (f - k) // 2:(f - k) // 2 + k]
            pil, pm = pil_full[:, :k], pm_full[:, :k]
            ls = y * pil.conj()[None, None] * pm[None, None]
            feats = torch.cat([torch.view_as_real(y).permute(0, 1, 4, 2, 3).reshape(nf, 2 * nrx, nsym, k),
                               torch.view_as_real(ls).permute(0, 1, 4, 2, 3).reshape(nf, 2 * nrx, nsym, k),
                               torch.view_as_real(pil * pm).permute(2, 0, 1)[None].expand(nf, 2, nsym, k)], 1)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                llr = model(feats.contiguous(memory_format=torch.channels_last)).float()
            valid = torch.arange(6, device="cuda")[None] < mods.long()[:, None]
            llr = torch.where(valid[:, :, None, None], llr, torch.zeros_like(llr))
            llr = llr * (1 - pm)[None, None]
            bits = (llr > 0).to(torch.uint8).reshape(nf, -1, 8)
            packed = (bits * bitw).sum(-1).to(torch.uint8)
            summary = torch.stack([packed.long().sum(1).remainder(256).float(), llr.abs().mean((1, 2, 3))], 1)
        summary.tolist()
        packed.cpu()
        del item, raw, mods, t, sym, spec, y, pil, pm, ls, feats, llr, valid, bits, packed, summary


# ---------------------------------------------------------------- spectrum sensing service


class _SenseUNet(_nn.Module):
    def __init__(self, widths):
        super().__init__()
        self.down, c = _nn.ModuleList(), 1
        for i, w in enumerate(widths):
            self.down.append(_nn.Sequential(_nn.Conv2d(c, w, 3, 1 if i == 0 else 2, 1), _nn.BatchNorm2d(w),
                                            _nn.ReLU(), _nn.Conv2d(w, w, 3, 1, 1), _nn.BatchNorm2d(w), _nn.ReLU()))
            c = w
        self.up = _nn.ModuleList()
        for w in reversed(widths[:-1]):
            self.up.append(_nn.Sequential(_nn.Conv2d(c + w, w, 3, 1, 1), _nn.BatchNorm2d(w), _nn.ReLU()))
            c = w
        self.seg = _nn.Conv2d(c, 1, 1)
        self.cls = mlp(widths[-1], 128, 6)

    def forward(self, x):
        skips = []
        for dn in self.down:
            x = dn(x)
            skips.append(x)
        deep = x
        for up, s in zip(self.up, reversed(skips[:-1])):
            x = up(torch.cat([_F.interpolate(x, size=s.shape[-2:], mode="nearest"), s], 1))
        return self.seg(x), deep


@_workload("spectrum sensing service (random init, a U-Net time-frequency occupancy detector in eval): 2,650-2,750 requests (drawn) of 1-8 wideband captures (log-uniform) of 64-256 x 256 int16 IQ samples (the length drawn per request); the samples uploaded on a side stream from two reused pinned host buffers one request ahead (waited on by event, record_stream'ed); on the device scaled to complex64, framed by unfold (256-point frames, hop 128), a Hann window, an FFT per frame shifted to a 256-bin spectrogram in dB, padded to a multiple of 8 frames; a 4-level U-Net (16-32-64-128 channels, batch norm) segmenting occupied bins under bf16 autocast, fused with an energy detector 8 dB above the median noise floor of each frame (by sort), padded frames masked; occupancy of 16 channels of 16 bins, a 6-way signal-type score per channel from the bottom features pooled over time; each request's occupancy and scores read back")
def spectrum_sensing_serve(rng):
    nfft, hop = _smoke(256, 32), _smoke(128, 16)
    widths = _smoke([16, 32, 64, 128], [4, 8, 8, 16])
    maxc, fmin, fmax, nch = _smoke(8, 2), _smoke(64, 4), _smoke(256, 8), _smoke(16, 4)
    model = _SenseUNet(widths).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    win = torch.hann_window(nfft, device="cuda")
    nsamp = maxc * fmax * nfft * 2
    host = []
    for _ in range(2):
        host.append(torch.randint(-4096, 4096, (nsamp,), dtype=torch.int16).pin_memory())
    up = SideUploads(host)
    nreq = rng.randint(_smoke(2650, 3), _smoke(2750, 4))
    plan = [(_loguniform(rng, 1, maxc), rng.randint(fmin, fmax)) for _ in range(nreq)]

    nxt = up.upload(0, plan[0][0] * plan[0][1] * nfft * 2)
    for i in range(nreq):
        nc, nfr = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, plan[i + 1][0] * plan[i + 1][1] * nfft * 2)
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            s = torch.view_as_complex(raw.view(nc, nfr * nfft, 2).float() / 4096)
            frames = s.unfold(-1, nfft, hop) * win
            t = frames.shape[1]
            tp = -(-t // 8) * 8
            spec = torch.fft.fftshift(torch.fft.fft(frames, dim=-1), dim=-1)
            pw = 10 * torch.log10(spec.abs().pow(2) + 1e-9)  # (nc, t, nfft)
            floor = pw.sort(-1)[0][..., nfft // 2:nfft // 2 + 1]
            energy = (pw > floor + 8).float()
            x = _F.pad(((pw - floor) / 20).transpose(1, 2)[:, None], (0, tp - t))
            tmask = (torch.arange(tp, device="cuda") < t).float()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                seg, deep = model(x.contiguous(memory_format=torch.channels_last))
                kinds = model.cls(deep.mean(-1).transpose(1, 2))  # (nc, freq', 6)
            occ = 0.5 * torch.sigmoid(seg.float()[:, 0]) * tmask + 0.5 * _F.pad(energy.transpose(1, 2), (0, tp - t))
            chan = (occ.sum(-1) / t).view(nc, nch, -1).mean(-1)
            kinds = kinds.float().softmax(-1)
            kinds = _F.adaptive_avg_pool1d(kinds.transpose(1, 2), nch).transpose(1, 2)
            res = torch.cat([chan, kinds.flatten(1)], 1)
        res.tolist()
        del item, raw, s, frames, spec, pw, floor, energy, x, tmask, seg, deep, kinds, occ, chan, res


# ---------------------------------------------------------------- multi-user MIMO beamforming with a graph net


def _geo_channel(b, k, m, paths):
    """Users' multipath channels to a ULA of m antennas (half-wavelength): (b, k, m) complex64."""
    theta = (torch.rand(b, k, paths, device="cuda") - 0.5) * math.pi * 0.9
    gain = torch.complex(torch.randn(b, k, paths, device="cuda"), torch.randn(b, k, paths, device="cuda")) \
        / math.sqrt(2 * paths)
    ant = torch.arange(m, device="cuda").float()
    steer = torch.polar(torch.ones(b, k, paths, m, device="cuda"), -math.pi * torch.sin(theta)[..., None] * ant)
    return (gain[..., None] * steer).sum(2)


def _sum_rate(h, w, noise):
    """Per-sample sum rate of precoders w (b, k, m) for channels h (b, k, m) and noise powers (b,)."""
    g = torch.einsum("bkm,bjm->bkj", h.conj(), w).abs().pow(2)
    sig = torch.diagonal(g, dim1=1, dim2=2)
    interf = g.sum(-1) - sig
    return torch.log2(1 + sig / (interf + noise[:, None])).sum(-1)


class _UserGNN(_nn.Module):
    def __init__(self, m, d, layers, beams):
        super().__init__()
        self.enc = _nn.Sequential(mlp(2 * m + 1, d, d), _nn.LayerNorm(d))
        self.msg = _nn.ModuleList(mlp(d, d, d) for _ in range(layers))
        self.upd = _nn.ModuleList(_nn.Sequential(mlp(2 * d, d, d), _nn.LayerNorm(d)) for _ in range(layers))
        self.prec = mlp(d, d, 2 * m)
        self.beam = _nn.Linear(d, beams)

    def forward(self, x):
        h = self.enc(x)
        k = h.shape[1]
        for msg, upd in zip(self.msg, self.upd):
            mm = msg(h)
            agg = (mm.sum(1, keepdim=True) - mm) / max(k - 1, 1)
            h = h + upd(torch.cat([h, agg], -1))
        return self.prec(h), self.beam(h)


@_workload("multi-user MIMO beamforming and beam selection training (random init, a permutation-equivariant graph net over users): a 64-antenna half-wavelength ULA base station serving 4-16 users (drawn per step), 64-256 channel realisations a step (drawn), each user's channel a sum of 1-6 paths (drawn per step) with random angles and complex gains, the noise power drawn per realisation (SNR 0-20 dB); per-user node features of the channel's real and imaginary parts and the SNR, an encoder, 4 rounds of message passing (mean of the other users' messages, residual updates, width 256), a precoder head (the precoders normalised to the total power) and a 64-beam DFT-codebook selection head; the loss minus the sum rate (fp32, complex64 outside autocast) plus the cross-entropy against each user's best codebook beam (argmax of the beam gains); Adam, bf16 autocast, 770 steps; the loss read back every 20 steps and every 154 steps an evaluation of 512 realisations of 8 users with the learned, MRT and best-beam sum rates and the beam accuracy read back")
def mimo_beamforming_gnn_train(rng):
    m, d, layers = _smoke(64, 8), _smoke(256, 16), _smoke(4, 1)
    beams = m
    model = _UserGNN(m, d, layers, beams).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    ant = torch.arange(m, device="cuda").float()
    grid = torch.arcsin(torch.linspace(-1, 1, beams + 1, device="cuda")[:-1] + 1 / beams)
    codebook = torch.polar(torch.ones(m, beams, device="cuda"), -math.pi * ant[:, None] * torch.sin(grid)[None]) \
        / math.sqrt(m)

    def batch(b, k, paths, lo, hi):
        h = _geo_channel(b, k, m, paths) * math.sqrt(m)
        snr = torch.rand(b, device="cuda") * (hi - lo) + lo
        noise = 10 ** (-snr / 10)
        x = torch.cat([torch.view_as_real(h).flatten(2) / math.sqrt(m),
                       (snr / 20)[:, None, None].expand(b, k, 1)], -1)
        best = (h @ codebook).abs().argmax(-1)
        return h, noise, x, best

    def precoders(raw, k):
        w = torch.complex(raw[..., :m], raw[..., m:])
        return w / w.abs().pow(2).sum((1, 2), keepdim=True).clamp(min=1e-9).sqrt()

    steps = _smoke(770, 3)
    for step in range(steps):
        model.train()
        b, k, paths = rng.randint(_smoke(64, 4), _smoke(256, 8)), rng.randint(_smoke(4, 2), _smoke(16, 4)), \
            rng.randint(1, 6)
        h, noise, x, best = batch(b, k, paths, 0.0, 20.0)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            raw, blog = model(x)
        w = precoders(raw.float(), k)
        rate = _sum_rate(h, w, noise)
        loss = -rate.mean() / k + _F.cross_entropy(blog.float().flatten(0, 1), best.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 20 == 0:
            torch.stack([loss.detach(), rate.detach().mean()]).tolist()
        del h, noise, x, best, raw, blog, w, rate, loss
        if (step + 1) % _smoke(154, 2) == 0:
            model.eval()
            with torch.no_grad():
                k = _smoke(8, 3)
                h, noise, x, best = batch(_smoke(512, 8), k, 3, 10.0, 10.0)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    raw, blog = model(x)
                learned = _sum_rate(h, precoders(raw.float(), k), noise).mean()
                mrt = h / h.abs().pow(2).sum((1, 2), keepdim=True).sqrt()
                beam_w = codebook.T[best] / math.sqrt(k)
                res = torch.stack([learned, _sum_rate(h, mrt, noise).mean(), _sum_rate(h, beam_w, noise).mean(),
                                   (blog.argmax(-1) == best).float().mean()])
            res.tolist()
            del h, noise, x, best, raw, blog, learned, mrt, beam_w, res


# ---------------------------------------------------------------- channel-state diffusion


class _ResBlock(_nn.Module):
    def __init__(self, cin, cout, temb):
        super().__init__()
        self.n1, self.c1 = _nn.GroupNorm(8, cin), _nn.Conv2d(cin, cout, 3, 1, 1)
        self.t = _nn.Linear(temb, cout)
        self.n2, self.c2 = _nn.GroupNorm(8, cout), _nn.Conv2d(cout, cout, 3, 1, 1)
        self.skip = _nn.Conv2d(cin, cout, 1) if cin != cout else _nn.Identity()

    def forward(self, x, e):
        h = self.c1(_F.silu(self.n1(x))) + self.t(e)[:, :, None, None]
        return self.skip(x) + self.c2(_F.silu(self.n2(h)))


class _CSIUNet(_nn.Module):
    def __init__(self, widths, temb, classes):
        super().__init__()
        self.temb = temb
        self.tmlp = mlp(temb, temb, temb, act=_nn.SiLU)
        self.cls = _nn.Embedding(classes, temb)
        self.inp = _nn.Conv2d(2, widths[0], 3, 1, 1)
        self.down, self.pool = _nn.ModuleList(), _nn.ModuleList()
        c = widths[0]
        for i, w in enumerate(widths):
            self.down.append(_nn.ModuleList([_ResBlock(c, w, temb), _ResBlock(w, w, temb)]))
            self.pool.append(_nn.Conv2d(w, w, 3, 2, 1) if i < len(widths) - 1 else _nn.Identity())
            c = w
        self.attn = _nn.MultiheadAttention(c, 4, batch_first=True)
        self.anorm = _nn.GroupNorm(8, c)
        self.up = _nn.ModuleList()
        for w in reversed(widths):
            self.up.append(_nn.ModuleList([_ResBlock(c + w, w, temb), _ResBlock(w, w, temb)]))
            c = w
        self.out = _nn.Sequential(_nn.GroupNorm(8, c), _nn.SiLU(), _nn.Conv2d(c, 2, 3, 1, 1))

    def forward(self, x, t, y):
        e = self.tmlp(_sincos(t, self.temb)) + self.cls(y)
        h = self.inp(x)
        skips = []
        for (r1, r2), pool in zip(self.down, self.pool):
            h = r2(r1(h, e), e)
            skips.append(h)
            h = pool(h)
        b, c, hh, ww = h.shape
        a = self.anorm(h).flatten(2).transpose(1, 2)
        h = h + self.attn(a, a, a, need_weights=False)[0].transpose(1, 2).reshape(b, c, hh, ww)
        for (r1, r2), s in zip(self.up, reversed(skips)):
            h = _F.interpolate(h, size=s.shape[-2:], mode="nearest")
            h = r2(r1(torch.cat([h, s], 1), e), e)
        return self.out(h)


def _csi(b, ant, nsc, classes):
    """Clustered multipath CSI (b, 2, ant, nsc), normalised, and the scenario labels: the scenario sets the cluster
    count weights, angle spread and delay spread through a small table indexed by the label (below `classes`)."""
    y = torch.randint(0, classes, (b,), device="cuda")
    spread = torch.linspace(0.05, 0.6, classes, device="cuda")[y][:, None]
    dspread = torch.linspace(0.01, 0.12, classes, device="cuda")[y][:, None]
    paths = 12
    theta = (torch.rand(b, 1, device="cuda") - 0.5) * 2 + torch.randn(b, paths, device="cuda") * spread
    tau = torch.rand(b, paths, device="cuda") * dspread * nsc
    pw = torch.exp(-tau / (dspread * nsc + 1e-3))
    g = torch.complex(torch.randn(b, paths, device="cuda"), torch.randn(b, paths, device="cuda")) * pw.sqrt()
    a = torch.polar(torch.ones(b, paths, ant, device="cuda"),
                    -math.pi * torch.sin(theta)[..., None] * torch.arange(ant, device="cuda").float())
    f = torch.polar(torch.ones(b, paths, nsc, device="cuda"),
                    -2 * math.pi * tau[..., None] * torch.arange(nsc, device="cuda").float() / nsc)
    h = torch.einsum("bp,bpa,bpk->bak", g, a, f)
    h = h / h.abs().pow(2).mean((1, 2), keepdim=True).sqrt()
    return torch.view_as_real(h).permute(0, 3, 1, 2).contiguous(), y


@_workload("channel-state diffusion training (random init, a DDPM over CSI matrices for channel generation): 32-antenna x 64-256-subcarrier CSI (the subcarrier count drawn per step from 64, 96, 128, 192, 256) of a clustered multipath model (12 paths, angle and delay spreads set by one of 6 scenarios, drawn per sample) as 2-channel real/imaginary images, 16-40 a step (drawn); a 4-level UNet (64-128-192-256 channels, two residual blocks a level with group norm, sinusoidal timestep and scenario embeddings, self-attention at the bottom), epsilon prediction over 1,000 cosine-schedule timesteps (a table of 1,000 rows indexed by timesteps below 1,000); AdamW, an EMA copy, bf16 autocast, 216 steps; the loss read back every 10 steps and every 54 steps 20 DDIM steps of the EMA model over 16 samples at 128 subcarriers with the generated power-delay profile and angular spectrum errors against fresh channels read back")
def csi_diffusion_train(rng):
    ant, classes, temb = _smoke(32, 8), 6, _smoke(256, 32)
    widths = _smoke([64, 128, 192, 256], [8, 16])
    nscs = _smoke([64, 96, 128, 192, 256], [16, 32])
    model = _CSIUNet(widths, temb, classes).cuda()
    ema = _CSIUNet(widths, temb, classes).cuda()
    ema.load_state_dict(model.state_dict())
    ema.requires_grad_(False)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.01)
    nt = 1000
    s = torch.arange(nt + 1, device="cuda").float() / nt
    abar = torch.cos((s + 0.008) / 1.008 * math.pi / 2).pow(2)
    abar = (abar[1:] / abar[0]).clamp(min=1e-5)
    steps = _smoke(216, 3)
    for step in range(steps):
        model.train()
        b, nsc = rng.randint(_smoke(16, 2), _smoke(40, 4)), rng.choice(nscs)
        x0, y = _csi(b, ant, nsc, classes)
        t = torch.randint(0, nt, (b,), device="cuda")
        eps = torch.randn_like(x0)
        a = abar[t][:, None, None, None]
        xt = a.sqrt() * x0 + (1 - a).sqrt() * eps
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(xt, t, y)
        loss = _F.mse_loss(pred.float(), eps)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        with torch.no_grad():
            for pe, pm in zip(ema.parameters(), model.parameters()):
                pe.lerp_(pm, 0.001)
        if step % 10 == 0:
            loss.item()
        del x0, y, t, eps, a, xt, pred, loss
        if (step + 1) % _smoke(54, 2) == 0:
            ema.eval()
            with torch.no_grad():
                nb, nsc = _smoke(16, 2), _smoke(128, 16)
                ref, y = _csi(nb, ant, nsc, classes)
                x = torch.randn_like(ref)
                nsteps = _smoke(20, 3)
                ts = [round((nt - 1) * (1 - j / (nsteps - 1))) for j in range(nsteps)]  # on the host
                for j in range(nsteps):
                    tt = torch.full((nb,), ts[j], dtype=torch.long, device="cuda")
                    a = abar[tt][:, None, None, None]
                    a_prev = abar[ts[j + 1]].expand(nb)[:, None, None, None] if j + 1 < nsteps \
                        else torch.ones_like(a)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        eps = ema(x, tt, y).float()
                    x0p = ((x - (1 - a).sqrt() * eps) / a.sqrt()).clamp(-6, 6)
                    x = a_prev.sqrt() * x0p + (1 - a_prev).sqrt() * eps
                    del tt, a, a_prev, eps, x0p
                gen = torch.complex(x[:, 0], x[:, 1])
                refc = torch.complex(ref[:, 0], ref[:, 1])
                pdp = lambda h: torch.fft.ifft(h, dim=-1).abs().pow(2).mean((0, 1))  # noqa: E731
                aps = lambda h: torch.fft.fft(h, dim=1).abs().pow(2).mean((0, 2))  # noqa: E731
                res = torch.stack([(pdp(gen) - pdp(refc)).abs().sum(), (aps(gen) - aps(refc)).abs().sum(),
                                   gen.abs().pow(2).mean()])
            res.tolist()
            del ref, y, x, gen, refc, res

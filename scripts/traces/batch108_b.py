"""The hundred-and-eighth batch of held-out workloads for record.py, second half (see batch108.py): dairy, livestock
and aquaculture farming, written in torch alone. Pig-barn cough detection training (log-mel features computed on the
device from barn audio clips of drawn lengths by framing and an FFT, a convolutional subsampler and a transformer
encoder under a key mask, frame-level sound events and a clip-level respiratory score), herd contact-graph disease
training (an edge-conditioned message-passing network by index_select and index_add over drawn barns of cows linked
by proximity-collar contacts, per-animal onset and per-herd outbreak heads), sea-pen oxygen-field diffusion sampling
(a conditional DDIM sampler with classifier-free guidance over a timestep-conditioned U-Net, drawn grids, scenario
counts and step counts, hypoxic area read back) and a collar rumination service (a dilated temporal convnet over
accelerometer windows of drawn lengths from drawn numbers of cows, per-cow behaviour minutes tallied on the device by
index_add, low-rumination alerts).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or masked_fill;
no boolean-mask indexing; results read back only at logging points or once per request. collar_rumination_serve
uploads its inputs on a side stream (workload_helpers.SideUploads, one request ahead); the other three are
single-stream. The models run under bf16 autocast (the audio features in fp32). Every table is sized for the longest
padded length or largest index that can be drawn.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, TimeResBlock, _sincos, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _loguniform(rng, lo, hi, mult=1):
    return _b.rec._loguniform(rng, lo, hi, mult)


# ---------------------------------------------------------------- pig-barn cough detection (audio)


def _mel_filters(n_fft, n_mels, sr):
    """Triangular filters evenly spaced on the mel scale (HTK formula), (n_fft // 2 + 1, n_mels), on the device."""
    freqs = torch.arange(n_fft // 2 + 1, device="cuda").float() * (sr / n_fft)
    top = 2595.0 * math.log10(1 + sr / 2 / 700)
    hz = 700.0 * (10 ** (torch.linspace(0, top, n_mels + 2, device="cuda") / 2595.0) - 1)
    lo, mid, hi = hz[:-2], hz[1:-1], hz[2:]
    rise = (freqs[:, None] - lo) / (mid - lo)
    fall = (hi - freqs[:, None]) / (hi - mid)
    return torch.minimum(rise, fall).clamp(min=0)


def _sub4(n):
    """Frames after two stride-2 convolutions of kernel 3, padding 1."""
    return -(-(-(-n // 2)) // 2)


class _CoughNet(_nn.Module):
    """Two stride-2 3x3 convolutions over the log-mel image, flattened over channels and mel bands to the model
    width, a position table, pre-norm blocks under a key mask; frame-level event logits and a clip-level
    respiratory-score head on the masked mean."""

    def __init__(self, n_mels, c, d, heads, layers, max_pos, n_event, n_resp):
        super().__init__()
        self.sub = _nn.Sequential(_nn.Conv2d(1, c, 3, 2, 1), _nn.GELU(), _nn.Conv2d(c, c, 3, 2, 1), _nn.GELU())
        self.proj = _nn.Linear(c * _sub4(n_mels), d)
        self.pos = _nn.Embedding(max_pos, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.event, self.resp = _nn.Linear(d, n_event), mlp(d, d, n_resp, act=_nn.GELU)

    def forward(self, logmel, keep):
        y = self.sub(logmel[:, None])  # (b, c, t / 4, mels / 4)
        t = y.shape[2]
        x = self.proj(y.permute(0, 2, 1, 3).flatten(2)) + self.pos(torch.arange(t, device=y.device))[None]
        for blk in self.blocks:
            x = blk(x, mask=keep[:, None, None, :])
        x = self.norm(x)
        w = keep[..., None].to(x.dtype)
        return self.event(x).float(), self.resp((x * w).sum(1) / w.sum(1).clamp(min=1)).float()


@_workload("pig-barn cough detection training (random init, log-mel features on the device and a conv-subsampled transformer encoder): 8-32 barn audio clips a step (drawn) of 2-10 s at 16 kHz each (drawn per clip in 10 ms hops, padded to the step's longest and zeroed past each clip's end); 512-sample Hann-windowed frames every 160 samples by unfold, an rFFT power spectrum and 64 mel filters built on the device, log, in fp32; SpecAugment of one frequency band of up to 11 mels and one time span of up to 39 frames per clip (drawn on the device, by torch.where); two stride-2 3x3 convolutions (32 channels) to 1/4 of the frames, a linear projection to width 192, a 250-row position table (the longest clip's subsampled frames), 4 pre-norm blocks (4 heads) under a key mask; 5 frame-level sound events (cough, sneeze, scream, grunt, feeder noise; masked binary cross-entropy) and a 3-level clip respiratory score from the masked mean (cross-entropy); AdamW, clipping, bf16 autocast, 535 steps; the losses read back every 25 steps and every 134 steps a no-grad evaluation of 16 clips of 10 s with event and respiratory-score accuracy read back")
def pig_cough_audio_train(rng):
    sr, n_fft, hop, n_mels = 16000, _smoke(512, 128), 160, _smoke(64, 16)
    c, d, heads, layers = _smoke(32, 16), _smoke(192, 32), _smoke(4, 2), _smoke(4, 1)
    n_event, n_resp, lo_hops, hi_hops = 5, 3, _smoke(200, 20), _smoke(1000, 40)
    max_pos = _sub4((hi_hops * hop - n_fft) // hop + 1)
    model = _CoughNet(n_mels, c, d, heads, layers, max_pos, n_event, n_resp).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.02)
    mel = _mel_filters(n_fft, n_mels, sr)
    window = torch.hann_window(n_fft, device="cuda")

    def clips(hops, augment):
        samples = [h * hop for h in hops]
        b, n = len(hops), max(samples)
        wav = torch.randn(b, n, device="cuda") * 0.1 * keep_mask(samples, n)
        spec = torch.fft.rfft(wav.unfold(1, n_fft, hop) * window).abs().pow(2)
        logmel = (spec @ mel).clamp(min=1e-8).log()  # (b, frames, mels)
        frames = [(s - n_fft) // hop + 1 for s in samples]
        t = logmel.shape[1]
        if augment:
            f0 = (torch.rand(b, 1, device="cuda") * (n_mels - 12)).long()
            fw = (torch.rand(b, 1, device="cuda") * 12).long()
            band = torch.arange(n_mels, device="cuda")[None]
            t0 = (torch.rand(b, 1, device="cuda") * (t - 40)).long()
            tw = (torch.rand(b, 1, device="cuda") * 40).long()
            span = torch.arange(t, device="cuda")[None]
            fmask = (band >= f0) & (band < f0 + fw)
            tmask = (span >= t0) & (span < t0 + tw)
            logmel = torch.where(fmask[:, None, :] | tmask[:, :, None], logmel.mean(), logmel)
        keep = keep_mask([_sub4(f) for f in frames], _sub4(t))
        events = (torch.rand(b, _sub4(t), n_event, device="cuda") < 0.05).float()
        resp = torch.randint(0, n_resp, (b,), device="cuda")
        return logmel, keep, events, resp

    steps = _smoke(535, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(8, 2), _smoke(32, 4))
        logmel, keep, events, resp = clips([rng.randint(lo_hops, hi_hops) for _ in range(b)], True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            e_log, r_log = model(logmel, keep)
        w = keep[..., None].float()
        l_e = (_F.binary_cross_entropy_with_logits(e_log, events, reduction="none") * w).sum() / (w.sum() * n_event)
        l_r = _F.cross_entropy(r_log, resp)
        loss = l_e + l_r
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 25 == 0:
            torch.stack([l_e.detach(), l_r.detach()]).tolist()
        del logmel, keep, events, resp, e_log, r_log, w, l_e, l_r, loss
        if (step + 1) % _smoke(134, 2) == 0:
            model.eval()
            with torch.no_grad():
                logmel, keep, events, resp = clips([hi_hops] * _smoke(16, 2), False)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    e_log, r_log = model(logmel, keep)
                acc = torch.stack([((e_log > 0).float() == events).float().mean(),
                                   (r_log.argmax(-1) == resp).float().mean()])
            acc.tolist()
            del logmel, keep, events, resp, e_log, r_log, acc


# ---------------------------------------------------------------- herd contact-graph disease (message passing)


class _ContactLayer(_nn.Module):
    """Messages from both ends' states and the contact's features, summed into each receiving animal by index_add
    and scaled by its inverse in-degree; a residual MLP update of the normalised state and the aggregate."""

    def __init__(self, d, d_edge):
        super().__init__()
        self.msg = mlp(2 * d + d_edge, d, d, act=_nn.SiLU)
        self.upd = mlp(2 * d, d, d, act=_nn.SiLU)
        self.norm = _nn.LayerNorm(d)

    def forward(self, h, src, dst, e, inv_deg):
        m = self.msg(torch.cat([h.index_select(0, src), h.index_select(0, dst), e.to(h.dtype)], -1))
        agg = h.new_zeros(h.shape).index_add_(0, dst, m.to(h.dtype)) * inv_deg
        return h + self.upd(torch.cat([self.norm(h), agg.to(h.dtype)], -1)).to(h.dtype)


class _HerdGNN(_nn.Module):
    def __init__(self, n_feat, d_edge, d, layers):
        super().__init__()
        self.enc = mlp(n_feat, d, d, act=_nn.SiLU)
        self.edge = _nn.Linear(d_edge, d_edge)
        self.layers = _nn.ModuleList(_ContactLayer(d, d_edge) for _ in range(layers))
        self.onset = mlp(d, d, 1, act=_nn.SiLU)
        self.herd = mlp(d, d, 1, act=_nn.SiLU)

    def forward(self, x, src, dst, e, inv_deg, herd_id, n_herd, inv_size):
        h = self.enc(x)
        e = self.edge(e)
        for layer in self.layers:
            h = layer(h, src, dst, e, inv_deg)
        pooled = h.new_zeros(n_herd, h.shape[1]).index_add_(0, herd_id, h) * inv_size
        return self.onset(h)[:, 0].float(), self.herd(pooled)[:, 0].float()


@_workload("herd contact-graph disease training (random init, an edge-conditioned message-passing network by index_select and index_add): each step a batch of 2-16 barns (drawn, at most 16,000 cows a step) of 150-2,500 cows each (drawn per barn) with 3-12 proximity-collar contacts per cow (drawn per barn, partners drawn within the barn, both directions kept), 24 cow features and 6 contact features (minutes, feed bunk, stall, water, parlour, night) drawn on the device; a 2-layer encoder to width 96, 6 message-passing layers (message MLP over both ends and the contact, summed by index_add_ and scaled by the inverse in-degree, a residual MLP update), a per-cow 7-day onset logit (binary cross-entropy) and a per-barn outbreak size from the barn means pooled by index_add_ (MSE); AdamW, clipping, bf16 autocast, 540 steps; the losses read back every 25 steps and every 135 steps a no-grad evaluation on 6 barns of 2,500 cows with 8 contacts each, onset accuracy and outbreak-size error read back")
def herd_contact_graph_train(rng):
    n_feat, d_edge, d, layers = 24, 6, _smoke(96, 16), _smoke(6, 2)
    budget, lo, hi = _smoke(16000, 300), _smoke(150, 20), _smoke(2500, 60)
    model = _HerdGNN(n_feat, d_edge, d, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)

    def barns(sizes, contacts):
        src, dst, first = [], [], 0
        for n, k in zip(sizes, contacts):
            a = torch.arange(first, first + n, device="cuda").repeat_interleave(k)
            p = torch.randint(first, first + n, (n * k,), device="cuda")
            src += [a, p]
            dst += [p, a]
            first += n
        src, dst = torch.cat(src), torch.cat(dst)
        x = torch.randn(first, n_feat, device="cuda")
        e = torch.rand(src.shape[0], d_edge, device="cuda")
        deg = torch.zeros(first, device="cuda").index_add_(0, dst, torch.ones(dst.shape[0], device="cuda"))
        inv_deg = (1.0 / deg.clamp(min=1))[:, None]
        size_t = torch.tensor(sizes, device="cuda")
        herd_id = torch.repeat_interleave(torch.arange(len(sizes), device="cuda"), size_t, output_size=first)
        inv_size = (1.0 / size_t.float())[:, None]
        onset = (torch.rand(first, device="cuda") < 0.05).float()
        outbreak = torch.rand(len(sizes), device="cuda") * 3
        return x, src, dst, e, inv_deg, herd_id, inv_size, onset, outbreak

    steps = _smoke(540, 3)
    for step in range(steps):
        model.train()
        n_barn, sizes = rng.randint(2, 16), []
        for _ in range(n_barn):
            n = rng.randint(lo, hi)
            if sizes and sum(sizes) + n > budget:
                break
            sizes.append(n)
        contacts = [rng.randint(3, 12) for _ in sizes]
        x, src, dst, e, inv_deg, herd_id, inv_size, onset, outbreak = barns(sizes, contacts)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            o_log, size_pred = model(x, src, dst, e, inv_deg, herd_id, len(sizes), inv_size)
        l_o = _F.binary_cross_entropy_with_logits(o_log, onset)
        l_s = _F.mse_loss(size_pred, outbreak)
        loss = l_o + 0.1 * l_s
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 25 == 0:
            torch.stack([l_o.detach(), l_s.detach()]).tolist()
        del x, src, dst, e, inv_deg, herd_id, inv_size, onset, outbreak, o_log, size_pred, l_o, l_s, loss
        if (step + 1) % _smoke(135, 2) == 0:
            model.eval()
            with torch.no_grad():
                sizes = [hi] * _smoke(6, 2)
                x, src, dst, e, inv_deg, herd_id, inv_size, onset, outbreak = barns(sizes, [8] * len(sizes))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    o_log, size_pred = model(x, src, dst, e, inv_deg, herd_id, len(sizes), inv_size)
                acc = torch.stack([((o_log > 0).float() == onset).float().mean(), (size_pred - outbreak).abs().mean()])
            acc.tolist()
            del x, src, dst, e, inv_deg, herd_id, inv_size, onset, outbreak, o_log, size_pred, acc


# ---------------------------------------------------------------- sea-pen oxygen-field diffusion sampling


class _OxygenUNet(_nn.Module):
    """A conditional U-Net: the noisy fields and the site maps concatenated, a residual block a level (widths
    `widths`, strided-convolution downsampling), a pre-norm attention block over the lowest level's cells, residual
    blocks on the way up over the upsampled features and the skips; the timestep and weather embeddings summed."""

    def __init__(self, c_x, c_cond, n_weather, widths, temb, heads):
        super().__init__()
        self.w0 = widths[0]
        self.t_mlp = mlp(widths[0], temb, temb, act=_nn.SiLU)
        self.w_mlp = mlp(n_weather, temb, temb, act=_nn.SiLU)
        self.inp = _nn.Conv2d(c_x + c_cond, widths[0], 3, 1, 1)
        self.down, self.pool, c = _nn.ModuleList(), _nn.ModuleList(), widths[0]
        for i, w in enumerate(widths):
            self.down.append(TimeResBlock(c, w, temb))
            self.pool.append(_nn.Conv2d(w, w, 3, 2, 1) if i < len(widths) - 1 else _nn.Identity())
            c = w
        self.mid = TimeResBlock(c, c, temb)
        self.attn = PreNormBlock(c, heads)
        self.up = _nn.ModuleList()
        for w in widths[::-1]:
            self.up.append(TimeResBlock(c + w, w, temb))
            c = w
        self.out = _nn.Sequential(_nn.GroupNorm(8, c), _nn.SiLU(), _nn.Conv2d(c, c_x, 3, 1, 1))

    def forward(self, x, cond, t, weather):
        te = self.t_mlp(_sincos(t, self.w0)) + self.w_mlp(weather)
        h, skips = self.inp(torch.cat([x, cond], 1)), []
        for blk, pool in zip(self.down, self.pool):
            h = blk(h, te)
            skips.append(h)
            h = pool(h)
        h = self.mid(h, te)
        b, c, hh, ww = h.shape
        h = self.attn(h.flatten(2).transpose(1, 2)).transpose(1, 2).reshape(b, c, hh, ww)
        for blk in self.up:
            s = skips.pop()
            h = blk(torch.cat([_F.interpolate(h, size=s.shape[-2:], mode="nearest"), s], 1), te)
        return self.out(h)


@_workload("sea-pen oxygen-field diffusion sampling (random init, a conditional U-Net under a DDIM sampler with classifier-free guidance): 71-75 requests (drawn), each of 1-8 scenarios (drawn) on a site grid of 32-96 cells a side (drawn per request, a multiple of 16), 10-40 DDIM steps (drawn per request, evenly spaced over 1,000 training steps of a linear beta schedule kept on the host) and a guidance scale of 1.5-4 (drawn); 5 site maps (bathymetry, the two current components, feeding rate, fish density) and 6 weather values drawn on the device, a null condition of zeros for the unconditional half; a U-Net of widths 64/128/256 (a timestep residual block a level with GroupNorm, strided-convolution downsampling, a pre-norm attention block of 4 heads over the lowest level's cells, residual blocks with skips on the way up) predicting the noise of 2 fields (dissolved oxygen, temperature), the conditional and unconditional halves in one batch under bf16 autocast; per scenario the minimum and mean oxygen, the hypoxic area fraction (below a threshold, by torch.where) and the mean temperature read back once per request")
def sea_pen_oxygen_ddim_sample(rng):
    c_x, c_cond, n_weather = 2, 5, 6
    widths, temb, heads = _smoke([64, 128, 256], [16, 16, 32]), _smoke(256, 32), _smoke(4, 2)
    model = _OxygenUNet(c_x, c_cond, n_weather, widths, temb, heads).cuda().eval()
    model.requires_grad_(False)
    train_steps = 1000
    abar, prod = [], 1.0
    for i in range(train_steps):
        prod *= 1 - (1e-4 + (0.02 - 1e-4) * i / (train_steps - 1))
        abar.append(prod)
    nreq = rng.randint(_smoke(71, 2), _smoke(75, 3))
    mult = 16
    for _ in range(nreq):
        s = rng.randint(1, _smoke(8, 2))
        n = rng.randint(_smoke(32, 16) // mult, _smoke(96, 32) // mult) * mult
        k = rng.randint(_smoke(10, 2), _smoke(40, 3))
        g = rng.uniform(1.5, 4.0)
        ts = [int(round(train_steps - 1 - j * (train_steps - 1) / k)) for j in range(k)]
        with torch.no_grad():
            cond = torch.randn(s, c_cond, n, n, device="cuda")
            cond2 = torch.cat([cond, torch.zeros_like(cond)])
            weather = torch.randn(s, n_weather, device="cuda")
            weather2 = torch.cat([weather, torch.zeros_like(weather)])
            x = torch.randn(s, c_x, n, n, device="cuda")
            for j, t in enumerate(ts):
                a_t = abar[t]
                a_prev = abar[ts[j + 1]] if j + 1 < len(ts) else 1.0
                tt = torch.full((2 * s,), t, device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    eps2 = model(torch.cat([x, x]), cond2, tt, weather2).float()
                eps = eps2[s:] + g * (eps2[:s] - eps2[s:])
                x0 = (x - math.sqrt(1 - a_t) * eps) / math.sqrt(a_t)
                x = math.sqrt(a_prev) * x0 + math.sqrt(1 - a_prev) * eps
                del tt, eps2, eps, x0
            oxy, temp = x[:, 0] * 2 + 8, x[:, 1] * 2 + 12  # mg/l, degrees C
            hyp = torch.where(oxy < 5.0, 1.0, 0.0)
            out = torch.stack([oxy.amin((1, 2)), oxy.mean((1, 2)), hyp.mean((1, 2)), temp.mean((1, 2))], 1)
        out.tolist()
        del cond, cond2, weather, weather2, x, oxy, temp, hyp, out


# ---------------------------------------------------------------- collar rumination service


class _CollarTCN(_nn.Module):
    """A strided stem from 10 Hz samples to one step a second, residual dilated convolution blocks (kernel 3,
    dilations 1-16, batch norm, GELU, a 1x1 mix), per-second behaviour logits."""

    def __init__(self, c_in, d, dilations, n_cls):
        super().__init__()
        self.stem = _nn.Conv1d(c_in, d, 10, 10)
        self.blocks = _nn.ModuleList(
            _nn.Sequential(_nn.Conv1d(d, d, 3, 1, dl, dilation=dl), _nn.BatchNorm1d(d), _nn.GELU(),
                           _nn.Conv1d(d, d, 1)) for dl in dilations)
        self.head = _nn.Conv1d(d, n_cls, 1)

    def forward(self, x):
        h = self.stem(x)
        for blk in self.blocks:
            h = h + blk(h)
        return self.head(h)


@_workload("collar rumination serving (random init, a dilated temporal convnet over neck-collar accelerometer windows): 2,850-2,950 requests (drawn) from barn gateways, each of 8-256 cows (log-uniform) with one window of 120-600 s at 10 Hz (drawn per request, a multiple of 10 s) of 3-axis int16 samples and the cows' int16 ids (of 20,000), uploaded on a side stream from two reused pinned host buffers (filled once) one request ahead by workload_helpers.SideUploads.ahead (two spans, waited on by event, record_stream'ed); the magnitude added as a fourth channel, a stride-10 stem to one step a second, 10 residual dilated convolution blocks (width 64, dilations 1-16 twice, batch norm) and 6 per-second behaviours (ruminating, eating, resting, walking, drinking, other) under bf16 autocast; per cow the minutes of each behaviour (argmax, one-hot sums), each cow's running tallies and monitored seconds kept on the device by index_add_, a low-rumination alert against each cow's baseline rate by torch.where; each request's minutes, alerts and rumination rates read back")
def collar_rumination_serve(rng):
    d, n_cls, n_cows = _smoke(64, 16), 6, _smoke(20000, 200)
    dilations = [1, 2, 4, 8, 16] * _smoke(2, 1)
    model = _CollarTCN(4, d, dilations, n_cls).cuda().eval()
    model.requires_grad_(False)
    max_k, lo_s, hi_s = _smoke(256, 8), _smoke(120, 20), _smoke(600, 40)
    max_len = hi_s * 10
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    off_ids = max_k * 3 * max_len
    host = []
    for _ in range(2):
        acc = (torch.randn(off_ids, generator=gen) * 2000).to(torch.int16)
        ids = torch.randint(0, n_cows, (max_k,), dtype=torch.int16, generator=gen)
        host.append(torch.cat([acc, ids]).pin_memory())
    up = SideUploads(host)
    tally = torch.zeros(n_cows, n_cls, device="cuda")
    seconds = torch.zeros(n_cows, device="cuda")
    baseline = 0.3 + 0.15 * torch.rand(n_cows, device="cuda")  # each cow's usual ruminating fraction
    nreq = rng.randint(_smoke(2850, 3), _smoke(2950, 4))
    plan = [(_loguniform(rng, _smoke(8, 1), max_k), rng.randint(lo_s // 10, hi_s // 10) * 100)
            for _ in range(nreq)]

    def spans(p):
        return (p[0] * 3 * p[1], slice(off_ids, off_ids + p[0]))

    for (k, n), raw, raw_ids in up.ahead(plan, spans):
        with torch.no_grad():
            a = raw.view(k, 3, n).float() / 4096  # g
            x = torch.cat([a, a.norm(dim=1, keepdim=True)], 1)
            ids = raw_ids.long()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logit = model(x)
            label = logit.float().argmax(1)  # (k, seconds)
            minutes = _F.one_hot(label, n_cls).float().sum(1) / 60
            tally.index_add_(0, ids, minutes)
            seconds.index_add_(0, ids, torch.full((k,), n / 10.0, device="cuda"))
            rate = tally.index_select(0, ids)[:, 0] * 60 / seconds.index_select(0, ids).clamp(min=1)
            alert = torch.where(rate < 0.7 * baseline.index_select(0, ids), 1.0, 0.0)
            out = torch.cat([minutes.flatten(), alert, rate])
        out.tolist()
        del raw, raw_ids, a, x, ids, logit, label, minutes, rate, alert, out

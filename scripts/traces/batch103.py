"""The hundred-and-third batch of held-out workloads for record.py, kept in a file of their own (as batch16.py onward
are): automotive engineering and in-vehicle systems, written in torch alone, first half. Driver drowsiness training (a
residual convnet over infrared face crops of drawn resolutions and clip lengths, a GRU written out step by step over
the frames, eye-closure, gaze-zone and sleepiness-level heads), battery state-of-health training (a causal transformer
over charge/discharge cycles of drawn counts per cell, each cycle's voltage, current and temperature curve encoded by a
1-d convnet, per-cycle capacity fade and resistance, remaining useful life at the last cycle), an in-car voice-command
service (log-mel features computed on the device from int16 audio of drawn lengths, a convolution-subsampled
conformer-style encoder, intent and slot heads) and crash-pulse diffusion training (a conditional 1-d U-Net over
deceleration pulses of drawn lengths, conditioned on impact speed, mass, overlap, angle and barrier type, with
classifier-free guidance in its DDIM evaluations). Same conventions as the earlier batches: nothing downloaded, data
drawn at random on the device (or in reused pinned host buffers for the service), `rng` the workload's random.Random
for every shape, count and sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny.
No control flow reads a tensor's value: lengths, resolutions and batch sizes are fixed on the host, padding handled by
masks multiplied in, boolean attention masks or torch.where, no boolean-mask indexing; losses and metrics are read
back only at logging points or once per request. cabin_voice_intent_serve uploads its audio on a side stream (two
reused pinned host buffers, one request ahead, workload_helpers.SideUploads.ahead); the other three are single-stream.
The models run under bf16 autocast (the audio features' FFT in fp32). Every position table is sized for the longest
padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(): every workload below is then added to
record.py's WORKLOADS with its family. This file never imports record.py; it reaches record.py's helpers through the
module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new103.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes with scripts/traces/meta_run.py.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, _sincos, keep_mask, mlp

_b = Batch()
_workload, _smoke = _b.workload, _b.smoke
register = _b.register

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- driver drowsiness (convnet + GRU by hand)


class _IrBlock(_nn.Module):
    """A stride-2 residual block: two 3x3 convolutions with batch norm, a strided 1x1 convolution on the skip."""

    def __init__(self, cin, cout):
        super().__init__()
        self.c1, self.n1 = _nn.Conv2d(cin, cout, 3, 2, 1, bias=False), _nn.BatchNorm2d(cout)
        self.c2, self.n2 = _nn.Conv2d(cout, cout, 3, 1, 1, bias=False), _nn.BatchNorm2d(cout)
        self.sk = _nn.Conv2d(cin, cout, 1, 2, bias=False)

    def forward(self, x):
        return _F.relu(self.n2(self.c2(_F.relu(self.n1(self.c1(x))))) + self.sk(x))


class _DrowsyNet(_nn.Module):
    def __init__(self, widths, hidden, n_gaze, n_kss):
        super().__init__()
        self.hidden = hidden
        self.stem = _nn.Sequential(_nn.Conv2d(1, widths[0], 5, 2, 2, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU())
        self.stages = _nn.ModuleList(_IrBlock(a, c) for a, c in zip(widths[:-1], widths[1:]))
        self.inp, self.hid = _nn.Linear(widths[-1], 3 * hidden), _nn.Linear(hidden, 3 * hidden)
        self.eye = _nn.Linear(widths[-1] + hidden, 1)
        self.gaze, self.kss = _nn.Linear(hidden, n_gaze), mlp(hidden, hidden, n_kss, act=_nn.GELU)

    def forward(self, frames, keep):
        b, t = keep.shape
        f = self.stem(frames)
        for s in self.stages:
            f = s(f)
        f = f.mean((2, 3)).view(b, t, -1)
        gx = self.inp(f)
        h = gx.new_zeros(b, self.hidden)
        hs = []
        for i in range(t):  # a GRU cell, one frame at a time; padded frames keep the state
            xr, xz, xn = gx[:, i].chunk(3, -1)
            hr, hz, hn = self.hid(h).chunk(3, -1)
            r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
            new = (1 - z) * torch.tanh(xn + r * hn) + z * h
            h = torch.where(keep[:, i, None], new.to(h.dtype), h)
            hs.append(h)
        hs = torch.stack(hs, 1)
        eye = self.eye(torch.cat([f, hs.to(f.dtype)], -1))[..., 0]
        return eye.float(), self.gaze(hs).float(), self.kss(h).float()


@_workload("driver drowsiness training (random init, a driver-monitoring camera model): 4-16 clips a step (drawn) of 6-16 frames (drawn per step, each clip's valid length drawn from half to all of them, the rest masked), single-channel infrared face crops of 96-160 px (drawn per step, a multiple of 16) at most 160 frames a step, drawn on the device in channels-last; a residual convnet (a 5x5 stride-2 stem of 32, stride-2 stages of 64/128/192, batch norm) per frame, global mean pooling, a GRU of 192 written out frame by frame (padded frames keep the state by torch.where); a per-frame eye-closure regression from the frame's pooled features and the GRU state (binary cross-entropy against soft targets), a per-frame 8-way gaze-zone head and a 9-level sleepiness (KSS) head (a 2-layer GELU MLP) on the last state, masked means over valid frames for the per-frame terms, the three losses summed with equal weights; AdamW, clipping, bf16 autocast, 440 steps; the losses read back every 25 steps and every 110 steps a no-grad evaluation of 8 clips of 16 frames at 160 px with KSS accuracy and PERCLOS (fraction of frames with eye closure over 0.8) read back")
def driver_drowsiness_clip_train(rng):
    widths, hidden = _smoke([32, 64, 128, 192], [8, 16]), _smoke(192, 16)
    n_gaze, n_kss = 8, 9
    model = _DrowsyNet(widths, hidden, n_gaze, n_kss).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.02)
    max_frames, mult = _smoke(160, 12), _smoke(16, 8)

    def clips(b, t, res, lengths):
        x = torch.randn(b * t, 1, res, res, device="cuda").contiguous(memory_format=torch.channels_last)
        keep = keep_mask(lengths, t)
        eye = torch.rand(b, t, device="cuda")
        gaze = torch.randint(0, n_gaze, (b, t), device="cuda")
        kss = torch.randint(0, n_kss, (b,), device="cuda")
        return x, keep, eye, gaze, kss

    steps = _smoke(440, 3)
    for step in range(steps):
        model.train()
        t = rng.randint(_smoke(6, 2), _smoke(16, 4))
        b = rng.randint(_smoke(4, 2), max(_smoke(4, 2), min(_smoke(16, 3), max_frames // t)))
        res = rng.randint(_smoke(96, 16) // mult, _smoke(160, 32) // mult) * mult
        lengths = [rng.randint(max(1, t // 2), t) for _ in range(b)]
        x, keep, eye, gaze, kss = clips(b, t, res, lengths)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            e_log, g_log, k_log = model(x, keep)
        w = keep.float()
        l_e = (_F.binary_cross_entropy_with_logits(e_log, eye, reduction="none") * w).sum() / w.sum()
        l_g = (_F.cross_entropy(g_log.flatten(0, 1), gaze.flatten(), reduction="none") * w.flatten()).sum() / w.sum()
        l_k = _F.cross_entropy(k_log, kss)
        loss = l_e + l_g + l_k
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0)
        opt.step()
        if step % 25 == 0:
            torch.stack([l_e.detach(), l_g.detach(), l_k.detach()]).tolist()
        del x, keep, eye, gaze, kss, e_log, g_log, k_log, w, l_e, l_g, l_k, loss
        if (step + 1) % _smoke(110, 2) == 0:
            model.eval()
            n, t = _smoke(8, 2), _smoke(16, 4)
            with torch.no_grad():
                x, keep, eye, gaze, kss = clips(n, t, _smoke(160, 32), [t] * n)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    e_log, g_log, k_log = model(x, keep)
                out = torch.stack([(k_log.argmax(-1) == kss).float().mean(), (e_log.sigmoid() > 0.8).float().mean()])
            out.tolist()
            del x, keep, eye, gaze, kss, e_log, g_log, k_log, out


# ---------------------------------------------------------------- battery state of health (causal transformer)


class _CellHistory(_nn.Module):
    """Each cycle's (voltage, current, temperature) discharge curve through a strided 1-d convnet, plus the cycle's
    summary statistics, chemistry and ambient temperature; causal pre-norm blocks over the cycles."""

    def __init__(self, n_stats, n_chem, d, heads, layers, max_cycles):
        super().__init__()
        self.curve = _nn.Sequential(_nn.Conv1d(3, 32, 5, 1, 2), _nn.GELU(), _nn.Conv1d(32, 64, 5, 2, 2), _nn.GELU(),
                                    _nn.Conv1d(64, 96, 5, 2, 2), _nn.GELU())
        self.curve_out, self.stats = _nn.Linear(96, d), _nn.Linear(n_stats, d)
        self.pos, self.chem, self.amb = _nn.Embedding(max_cycles, d), _nn.Embedding(n_chem, d), _nn.Linear(1, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.per_cycle, self.rul = _nn.Linear(d, 2), mlp(d, d, 1, act=_nn.GELU)

    def forward(self, curves, stats, chem, amb, keep, last):
        b, t = keep.shape
        c = self.curve(curves).mean(-1).view(b, t, -1)
        x = self.curve_out(c) + self.stats(stats) + self.pos(torch.arange(t, device=keep.device))[None]
        x = x + (self.chem(chem) + self.amb(amb[:, None]))[:, None]
        causal = torch.ones(t, t, dtype=torch.bool, device=keep.device).tril()
        mask = causal[None, None] & keep[:, None, None, :]
        for blk in self.blocks:
            x = blk(x, mask=mask)
        x = self.norm(x)
        end = x.gather(1, last[:, None, None].expand(b, 1, x.shape[-1]))[:, 0]
        return self.per_cycle(x).float(), self.rul(end)[:, 0].float()


@_workload("battery state-of-health training (random init, a causal transformer over cycling histories): 16-64 cells a step (drawn, at most 12,288 cycles a step), each with 48-512 charge/discharge cycles (drawn per cell, padded to the step's longest rounded up to a multiple of 16, position table of 512 rows), every cycle a 64-point voltage/current/temperature discharge curve (a 3-layer 1-d convnet of 32/64/96 channels, kernel 5, the last two stride 2, GELU, mean-pooled) plus 12 summary statistics, a chemistry of 4 and an ambient temperature per cell; 6 causal pre-norm blocks (width 192, 6 heads) under a causal and key mask; per-cycle capacity-fade and internal-resistance regression (masked Huber, delta 0.1) and the remaining useful life from the last valid cycle (gathered by index, MSE on its log, weighted 0.1); AdamW with warmup and cosine decay set on the host, clipping, bf16 autocast, 390 steps; the losses read back every 20 steps and every 98 steps a no-grad evaluation of 16 cells of 512 cycles with mean absolute capacity error read back")
def battery_soh_transformer_train(rng):
    d, heads, layers = _smoke(192, 32), _smoke(6, 2), _smoke(6, 1)
    max_cycles, points, n_stats, n_chem = _smoke(512, 32), _smoke(64, 16), 12, 4
    budget, mult = _smoke(12288, 96), _smoke(16, 8)
    model = _CellHistory(n_stats, n_chem, d, heads, layers, max_cycles).cuda()
    base_lr = 4e-4
    opt = torch.optim.AdamW(model.parameters(), lr=base_lr, weight_decay=0.05)

    def cells(lengths):
        b, t = len(lengths), -(-max(lengths) // mult) * mult
        keep = keep_mask(lengths, t)
        curves = torch.randn(b * t, 3, points, device="cuda")
        stats = torch.randn(b, t, n_stats, device="cuda")
        chem = torch.randint(0, n_chem, (b,), device="cuda")
        amb = torch.rand(b, device="cuda") * 2 - 1
        last = torch.tensor([n - 1 for n in lengths], device="cuda")
        fade = 1 - 0.3 * torch.rand(b, t, 1, device="cuda") * torch.linspace(0, 1, t, device="cuda")[None, :, None]
        target = torch.cat([fade, 1 + torch.rand(b, t, 1, device="cuda")], -1)
        rul = torch.rand(b, device="cuda") * 2000 + 10
        return curves, stats, chem, amb, keep, last, target, rul

    steps = _smoke(390, 3)
    warm = max(1, steps // 20)
    for step in range(steps):
        model.train()
        lr = base_lr * (step + 1) / warm if step < warm else \
            base_lr * 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, steps - warm)))
        for g in opt.param_groups:
            g["lr"] = lr
        lengths = [rng.randint(_smoke(48, 8), max_cycles) for _ in range(rng.randint(_smoke(16, 2), _smoke(64, 4)))]
        t = -(-max(lengths) // mult) * mult
        lengths = lengths[:max(2, budget // t)]
        curves, stats, chem, amb, keep, last, target, rul = cells(lengths)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pc, pr = model(curves, stats, chem, amb, keep, last)
        w = keep.float()[..., None]
        l_c = (_F.huber_loss(pc, target, reduction="none", delta=0.1) * w).sum() / (2 * w.sum())
        l_r = _F.mse_loss(pr, rul.log())
        loss = l_c + 0.1 * l_r
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_c.detach(), l_r.detach()]).tolist()
        del curves, stats, chem, amb, keep, last, target, rul, pc, pr, w, l_c, l_r, loss
        if (step + 1) % _smoke(98, 2) == 0:
            model.eval()
            with torch.no_grad():
                curves, stats, chem, amb, keep, last, target, rul = cells([max_cycles] * _smoke(16, 2))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pc, pr = model(curves, stats, chem, amb, keep, last)
                err = (pc[..., 0] - target[..., 0]).abs().mean()
            err.tolist()
            del curves, stats, chem, amb, keep, last, target, rul, pc, pr, err


# ---------------------------------------------------------------- in-car voice commands (side-stream service)


def _mel_bank(n_fft, n_mels, rate):
    """Triangular mel filters (n_fft // 2 + 1, n_mels), made on the device."""

    def mel(f):
        return 2595 * torch.log10(1 + f / 700)

    top = mel(torch.tensor(rate / 2, device="cuda"))
    pts = 700 * (10 ** (torch.linspace(0, 1, n_mels + 2, device="cuda") * top / 2595) - 1)
    freqs = torch.arange(n_fft // 2 + 1, device="cuda").float() * rate / n_fft
    lo, mid, hi = pts[:-2], pts[1:-1], pts[2:]
    up = (freqs[:, None] - lo[None]) / (mid - lo)[None]
    down = (hi[None] - freqs[:, None]) / (hi - mid)[None]
    return torch.clamp(torch.minimum(up, down), min=0)


class _ConvModule(_nn.Module):
    """A conformer convolution module: pointwise to 2d, GLU, a depthwise 1-d convolution (k 15), batch norm, SiLU,
    pointwise back; padded frames zeroed before the depthwise convolution."""

    def __init__(self, d):
        super().__init__()
        self.norm, self.pw1, self.pw2 = _nn.LayerNorm(d), _nn.Linear(d, 2 * d), _nn.Linear(d, d)
        self.dw, self.bn = _nn.Conv1d(d, d, 15, 1, 7, groups=d), _nn.BatchNorm1d(d)

    def forward(self, x, keep):
        h = _F.glu(self.pw1(self.norm(x)), -1) * keep[..., None].to(x.dtype)
        h = _F.silu(self.bn(self.dw(h.transpose(1, 2)))).transpose(1, 2)
        return x + self.pw2(h)


def _sub_len(n):
    return ((n - 3) // 2 + 1 - 3) // 2 + 1


class _VoiceEncoder(_nn.Module):
    def __init__(self, n_mels, c, d, heads, layers, max_frames, n_seats, n_intent, n_slot):
        super().__init__()
        self.sub = _nn.Sequential(_nn.Conv2d(1, c, 3, 2), _nn.ReLU(), _nn.Conv2d(c, c, 3, 2), _nn.ReLU())
        self.inp = _nn.Linear(c * (((n_mels - 3) // 2 + 1 - 3) // 2 + 1), d)
        self.pos, self.seat = _nn.Embedding(max_frames, d), _nn.Embedding(n_seats, d)
        self.att = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.conv = _nn.ModuleList(_ConvModule(d) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.intent, self.slot = mlp(d, d, n_intent, act=_nn.GELU), _nn.Linear(d, n_slot)

    def forward(self, feats, keep, seats):
        z = self.sub(feats[:, None])
        b, c, t, f = z.shape
        x = self.inp(z.permute(0, 2, 1, 3).reshape(b, t, c * f))
        x = x + self.pos(torch.arange(t, device=x.device))[None] + self.seat(seats)[:, None]
        key = keep[:, None, None, :]
        for att, conv in zip(self.att, self.conv):
            x = conv(att(x, mask=key), keep)
        x = self.norm(x)
        w = keep[..., None].to(x.dtype)
        pooled = (x * w).sum(1) / w.sum(1)
        return self.intent(pooled).float(), self.slot(x).float()


@_workload("in-car voice-command service (random init, a conformer-style intent and slot model, no grad): 800-840 requests (drawn), each 1-6 utterances (drawn) of 0.6-4.0 s of 16 kHz int16 audio (drawn per utterance, each given the request's longest length in the span, the samples past its own length not zeroed but masked by frame) from one of 4 seat microphones, uploaded as one span from two reused pinned host buffers on a side stream one request ahead (workload_helpers.SideUploads.ahead); on the device, in fp32: 25 ms Hann frames every 10 ms by unfold, a 512-point rfft, power through 80 triangular mel filters, log, mean and variance normalisation over each utterance's valid frames; then under bf16 autocast two stride-2 3x3 convolutions of 144 channels (4x subsampling), a 98-row position table (the longest padded utterance after subsampling), a seat embedding, 6 blocks of pre-norm self-attention (width 256, 4 heads, key mask) and a conformer convolution module (depthwise kernel 15, batch norm); a 64-way intent head on the masked mean and a 41-way slot tag per frame; intent, confidence and tagged-frame counts per utterance read back once per request")
def cabin_voice_intent_serve(rng):
    rate, n_fft, win, hop, n_mels = 16000, 512, 400, 160, 80
    c, d, heads, layers = _smoke(144, 8), _smoke(256, 32), _smoke(4, 2), _smoke(6, 1)
    n_seats, n_intent, n_slot, max_utt = 4, 64, 41, _smoke(6, 2)
    lo_s, hi_s = _smoke(9600, 2400), _smoke(64000, 4800)
    max_sub = _sub_len((hi_s - win) // hop + 1)
    model = _VoiceEncoder(n_mels, c, d, heads, layers, max_sub, n_seats, n_intent, n_slot).cuda().eval()
    model.requires_grad_(False)
    fbank = _mel_bank(n_fft, n_mels, rate)
    window = torch.hann_window(win, device="cuda")
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(-8000, 8000, (max_utt * hi_s,), dtype=torch.int16, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    plan = []
    for _ in range(rng.randint(_smoke(800, 3), _smoke(840, 4))):
        lens = [rng.randint(lo_s, hi_s) for _ in range(rng.randint(1, max_utt))]
        plan.append((lens, max(lens), [rng.randrange(n_seats) for _ in lens]))

    for (lens, s, seats), raw in up.ahead(plan, lambda p: (len(p[0]) * p[1],)):
        n = len(lens)
        with torch.no_grad():
            wav = raw.view(n, s).float() / 32768
            frames = wav.unfold(1, win, hop) * window
            power = torch.fft.rfft(frames, n_fft).abs().pow(2)
            logmel = (power @ fbank).clamp(min=1e-6).log()
            nf = [(n_s - win) // hop + 1 for n_s in lens]
            fk = keep_mask(nf, logmel.shape[1])[..., None].float()
            mean = (logmel * fk).sum(1, keepdim=True) / fk.sum(1, keepdim=True)
            var = ((logmel - mean).pow(2) * fk).sum(1, keepdim=True) / fk.sum(1, keepdim=True)
            feats = (logmel - mean) / (var + 1e-5).sqrt() * fk
            keep = keep_mask([_sub_len(k) for k in nf], _sub_len(logmel.shape[1]))
            seat_t = torch.tensor(seats, device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                i_log, s_log = model(feats, keep, seat_t)
            prob = i_log.softmax(-1)
            conf, intent = prob.max(-1)
            tagged = ((s_log.argmax(-1) > 0) & keep).sum(1)
            out = torch.cat([intent.float(), conf, tagged.float()])
        out.tolist()
        del raw, wav, frames, power, logmel, fk, mean, var, feats, keep, seat_t, i_log, s_log, prob, conf, intent
        del tagged, out


# ---------------------------------------------------------------- crash-pulse diffusion (conditional 1-d U-Net)


class _Res1d(_nn.Module):
    def __init__(self, cin, cout, temb):
        super().__init__()
        self.n1, self.c1 = _nn.GroupNorm(8, cin), _nn.Conv1d(cin, cout, 3, 1, 1)
        self.t = _nn.Linear(temb, cout)
        self.n2, self.c2 = _nn.GroupNorm(8, cout), _nn.Conv1d(cout, cout, 3, 1, 1)
        self.skip = _nn.Conv1d(cin, cout, 1) if cin != cout else _nn.Identity()

    def forward(self, x, te):
        h = self.c1(_F.silu(self.n1(x))) + self.t(te)[:, :, None]
        return self.skip(x) + self.c2(_F.silu(self.n2(h)))


class _PulseUNet(_nn.Module):
    """A 1-d U-Net of 2 residual blocks a level, strided-convolution downsampling, nearest upsampling, a pre-norm
    attention block at the lowest level; timestep and crash-condition embeddings summed."""

    def __init__(self, ch, widths, temb, n_cont, n_barrier):
        super().__init__()
        self.temb = temb
        self.tmlp = mlp(temb, temb, temb, act=_nn.SiLU)
        self.cont, self.barrier = mlp(n_cont, temb, temb, act=_nn.SiLU), _nn.Embedding(n_barrier, temb)
        self.null = _nn.Parameter(torch.zeros(temb))
        self.inp = _nn.Conv1d(ch, widths[0], 3, 1, 1)
        self.down, self.pool = _nn.ModuleList(), _nn.ModuleList()
        c = widths[0]
        for i, w in enumerate(widths):
            self.down.append(_nn.ModuleList([_Res1d(c, w, temb), _Res1d(w, w, temb)]))
            c = w
            if i < len(widths) - 1:
                self.pool.append(_nn.Conv1d(w, w, 3, 2, 1))
        self.mid = PreNormBlock(c, 4)
        self.up = _nn.ModuleList()
        for w in widths[-2::-1]:
            self.up.append(_nn.ModuleList([_Res1d(c + w, w, temb), _Res1d(w, w, temb)]))
            c = w
        self.out = _nn.Sequential(_nn.GroupNorm(8, c), _nn.SiLU(), _nn.Conv1d(c, ch, 3, 1, 1))

    def forward(self, x, t, cont, barrier, drop):
        cond = self.cont(cont) + self.barrier(barrier)
        cond = torch.where(drop[:, None], self.null.to(cond.dtype)[None], cond)
        te = self.tmlp(_sincos(t, self.temb)) + cond
        h = self.inp(x)
        skips = []
        for i, (r1, r2) in enumerate(self.down):
            h = r2(r1(h, te), te)
            if i < len(self.pool):
                skips.append(h)
                h = self.pool[i](h)
        h = self.mid(h.transpose(1, 2)).transpose(1, 2)
        for r1, r2 in self.up:
            h = _F.interpolate(h, scale_factor=2, mode="nearest")
            h = r2(r1(torch.cat([h, skips.pop()], 1), te), te)
        return self.out(h).float()


@_workload("crash-pulse diffusion training (random init, a conditional 1-d diffusion U-Net as a crash-simulation surrogate): 8-48 pulses a step (drawn, at most 49,152 samples a step) of 512-2,048 samples (drawn per step, a multiple of 64), 6 channels (tri-axial deceleration at two B-pillars) drawn on the device as random fields of n/32 points linearly upsampled to n, under a rise-and-decay envelope (s e^-s, s from 0 to 6); conditioned on 4 continuous crash parameters (impact speed, mass, overlap, angle) through an MLP and a 5-way barrier type, the condition replaced by a learned null 10% of the time (classifier-free dropout by torch.where); a U-Net of widths 64/128/256 with 2 residual blocks a level (GroupNorm, SiLU, a 256-wide sinusoidal timestep embedding through an MLP plus the condition embedding, added per channel), strided-convolution downsampling, nearest upsampling with skips and a pre-norm attention block (4 heads) at the lowest level; v-prediction on a 1,000-step cosine schedule, MSE; AdamW, clipping, bf16 autocast, 325 steps; the loss read back every 25 steps and every 100 steps a no-grad 16-step DDIM sampling of 8 pulses of 2,048 samples with guidance scale 2 (conditional and null batched together), the peak resultant over all 6 channels (both pillars' axes together) and the maximum of its 30-sample moving average per pulse read back")
def crash_pulse_diffusion_train(rng):
    ch, widths, temb = 6, _smoke([64, 128, 256], [8, 16]), _smoke(256, 16)
    n_cont, n_barrier, big_t = 4, 5, 1000
    model = _PulseUNet(ch, widths, temb, n_cont, n_barrier).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.01)
    abar_host = [math.cos((i / big_t + 0.008) / 1.008 * math.pi / 2) ** 2 for i in range(big_t)]
    abar = torch.tensor(abar_host, device="cuda")
    budget, mult, max_len = _smoke(49152, 256), _smoke(64, 16), _smoke(2048, 64)

    def pulses(b, n):
        field = _F.interpolate(torch.randn(b, ch, n // 32, device="cuda"), size=n, mode="linear", align_corners=False)
        env = torch.linspace(0, 6, n, device="cuda")
        x0 = field * (env * (-env).exp() * 2.7)[None, None]
        cont = torch.rand(b, n_cont, device="cuda") * 2 - 1
        barrier = torch.randint(0, n_barrier, (b,), device="cuda")
        return x0, cont, barrier

    steps = _smoke(325, 3)
    for step in range(steps):
        model.train()
        n = rng.randint(_smoke(512, 32) // mult, max_len // mult) * mult
        b = rng.randint(_smoke(8, 2), max(_smoke(8, 2), min(_smoke(48, 4), budget // n)))
        x0, cont, barrier = pulses(b, n)
        t = torch.randint(0, big_t, (b,), device="cuda")
        a = abar[t][:, None, None]
        eps = torch.randn_like(x0)
        xt = a.sqrt() * x0 + (1 - a).sqrt() * eps
        v = a.sqrt() * eps - (1 - a).sqrt() * x0
        drop = torch.rand(b, device="cuda") < 0.1
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(xt, t, cont, barrier, drop)
        loss = _F.mse_loss(pred, v)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 25 == 0:
            loss.detach().tolist()
        del x0, cont, barrier, t, a, eps, xt, v, drop, pred, loss
        if (step + 1) % _smoke(100, 2) == 0:
            model.eval()
            k, n_eval = _smoke(8, 2), _smoke(16, 3)
            times = [int(round(i * (big_t - 1) / (n_eval - 1))) for i in range(n_eval)][::-1]
            with torch.no_grad():
                _, cont, barrier = pulses(k, max_len)
                cont2, barrier2 = torch.cat([cont, cont]), torch.cat([barrier, barrier])
                drop = torch.arange(2 * k, device="cuda") >= k
                x = torch.randn(k, ch, max_len, device="cuda")
                for i, tc in enumerate(times):
                    tp = times[i + 1] if i + 1 < len(times) else -1
                    ac, ap = abar_host[tc], (abar_host[tp] if tp >= 0 else 1.0)
                    tt = torch.full((2 * k,), tc, device="cuda")
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        vv = model(torch.cat([x, x]), tt, cont2, barrier2, drop)
                    vv = vv[k:] + 2.0 * (vv[:k] - vv[k:])
                    x0 = math.sqrt(ac) * x - math.sqrt(1 - ac) * vv
                    ep = math.sqrt(1 - ac) * x + math.sqrt(ac) * vv
                    x = math.sqrt(ap) * x0 + math.sqrt(1 - ap) * ep
                res = (x[:, :3].pow(2).sum(1) + x[:, 3:].pow(2).sum(1)).sqrt()
                win = _F.avg_pool1d(res[:, None], 30, 1)[:, 0]
                out = torch.cat([res.max(-1).values, win.max(-1).values])
            out.tolist()
            del cont, barrier, cont2, barrier2, drop, x, tt, vv, x0, ep, res, win, out

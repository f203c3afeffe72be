"""The hundred-and-first batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch99_b.py are): smart home, IoT and edge devices, written in torch alone, first half. Wake-word training (a
depthwise-separable keyword-spotting convnet over log-mel features computed on the device from raw audio clips of
drawn lengths, background noise mixed in at drawn gains), sound-event detection training (a CNN front end and a
transformer over log-mel clips of drawn lengths, frame-level and clip-level multi-label
losses, a mean-teacher consistency loss with an exponential-moving-average teacher), a doorbell-camera detection
service (a MobileNetV2-style backbone and a CenterNet-style head over bursts of frames of each doorbell's resolution,
peak picking by max-pool suppression and top-k, privacy zones, per-camera person counts) and sensor anomaly detection
training (an LSTM autoencoder, both recurrences written out step by step, over multichannel sensor windows of drawn
lengths with missing readings masked, evaluated on windows with injected faults).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths,
resolutions and batch sizes are fixed on the host, padding handled by masks multiplied in or by torch.where /
masked_fill, no boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
doorbell_detect_serve uploads its frames on a side stream (workload_helpers.SideUploads: two reused pinned host
buffers, one request ahead, the main stream waiting on an event, the tensors record_stream'ed); the other three are
single-stream. The models run under bf16 autocast (the audio features in fp32). Every position table is sized for
the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new101.sh's header.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, keep_mask

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- wake-word keyword spotting (DS-CNN)


class _LogMel(_nn.Module):
    """Framing by unfold (25 ms windows, 10 ms hop at 16 kHz), a Hann window, a 512-point real FFT, power, a fixed
    non-negative random mel-like filterbank, log; in fp32."""

    def __init__(self, n_mels, win=400, hop=160, nfft=512):
        super().__init__()
        self.win, self.hop, self.nfft = win, hop, nfft
        self.register_buffer("window", torch.hann_window(win))
        self.register_buffer("fbank", torch.rand(nfft // 2 + 1, n_mels) * 0.05)

    def forward(self, wav):
        frames = wav.unfold(-1, self.win, self.hop) * self.window
        power = torch.fft.rfft(frames, n=self.nfft).abs().pow(2)
        return torch.log(power @ self.fbank + 1e-6).transpose(1, 2)  # (B, mels, T)


class _DSBlock(_nn.Module):
    def __init__(self, c, stride):
        super().__init__()
        self.dw = _nn.Conv2d(c, c, 3, stride, 1, groups=c, bias=False)
        self.b1 = _nn.BatchNorm2d(c)
        self.pw = _nn.Conv2d(c, c, 1, bias=False)
        self.b2 = _nn.BatchNorm2d(c)

    def forward(self, x):
        return _F.relu(self.b2(self.pw(_F.relu(self.b1(self.dw(x))))))


class _KWSNet(_nn.Module):
    """A 3x3 stride-2 stem, depthwise-separable blocks (the second also stride 2), masked mean pooling over the
    valid frames, a linear classifier."""

    def __init__(self, width, blocks, classes):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(1, width, 3, 2, 1, bias=False), _nn.BatchNorm2d(width), _nn.ReLU())
        self.blocks = _nn.ModuleList(_DSBlock(width, 2 if i == 1 else 1) for i in range(blocks))
        self.drop = _nn.Dropout(0.2)
        self.fc = _nn.Linear(width, classes)

    def forward(self, feats, keep):
        x = self.stem(feats[:, None])
        keep = keep[:, ::2]
        for i, blk in enumerate(self.blocks):
            x = blk(x)
            if i == 1:
                keep = keep[:, ::2]
        w = keep[:, None, None, :].to(x.dtype)
        pooled = (x * w).sum((2, 3)) / (w.sum((2, 3)) * x.shape[2]).clamp(min=1)
        return self.fc(self.drop(pooled)).float()


@_workload("wake-word keyword-spotting training (random init, a channels-last DS-CNN): 64-192 clips a step (drawn), each 0.8-1.6 s of 16 kHz audio (drawn per clip in 10 ms steps, padded to the step's longest rounded up to 0.1 s) drawn on the device, a circular time shift of up to 0.1 s (drawn per step) and background noise mixed in at a drawn gain per clip, samples past each clip's end zeroed by a mask; 40 log-mel features from unfold framing (25 ms, 10 ms hop), a Hann window, a 512-point rfft and a fixed random filterbank in fp32; a 3x3 stride-2 stem of 128 channels and 5 depthwise-separable blocks (the second of stride 2) with batch norm, masked mean pooling over valid frames, 12 classes (10 keywords, silence, unknown) with label smoothing 0.1; AdamW, bf16 autocast, 1,180 steps; the loss read back every 25 steps and every 236 steps a no-grad evaluation of 256 one-second clips with accuracy and the false-accept rate of keyword 0 on non-keyword clips read back")
def kws_dscnn_wakeword_train(rng):
    sr, hop, n_mels = 16000, 160, _smoke(40, 16)
    width, blocks, classes = _smoke(128, 16), _smoke(5, 2), 12
    fe = _LogMel(n_mels).cuda()
    model = _KWSNet(width, blocks, classes).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.01)
    lo, hi = _smoke(80, 20), _smoke(160, 30)  # clip lengths in 10 ms hops

    def clips(hops, shift):
        b = len(hops)
        n = -(-max(hops) // 10) * 10 * hop
        wav = torch.randn(b, n, device="cuda") * 0.1
        if shift:
            wav = torch.roll(wav, shift, 1)
        wav = wav + torch.randn(b, n, device="cuda") * torch.rand(b, 1, device="cuda") * 0.05
        keep_s = keep_mask([h * hop for h in hops], n)
        wav = wav * keep_s
        feats = fe(wav)
        t = feats.shape[2]
        keep = keep_mask([max(1, 1 + (h * hop - 400) // hop) for h in hops], t)
        return feats, keep, torch.randint(0, classes, (b,), device="cuda")

    steps = _smoke(1180, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(64, 2), _smoke(192, 4))
        feats, keep, y = clips([rng.randint(lo, hi) for _ in range(b)], rng.randint(-10, 10) * hop)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(feats.contiguous(), keep)
        loss = _F.cross_entropy(logits, y, label_smoothing=0.1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 25 == 0:
            loss.detach().item()
        del feats, keep, y, logits, loss
        if (step + 1) % _smoke(236, 2) == 0:
            model.eval()
            with torch.no_grad():
                feats, keep, y = clips([_smoke(sr // hop, hi)] * _smoke(256, 3), 0)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = model(feats, keep)
                prob = logits.softmax(-1)
                acc = (logits.argmax(-1) == y).float().mean()
                non_kw = (y >= 10).float()
                fa = ((prob[:, 0] > 0.5).float() * non_kw).sum() / non_kw.sum().clamp(min=1)
                out = torch.stack([acc, fa])
            out.tolist()
            del feats, keep, y, logits, prob, acc, non_kw, fa, out


# ---------------------------------------------------------------- sound-event detection (mean teacher)


class _SEDNet(_nn.Module):
    """Three conv blocks (two 3x3 conv-BN-ReLU each, average pools of 2x2, 2x2 and 2x1: frequency / 8, time / 4),
    frequency flattened into the channels, a linear projection, a learned position table, pre-norm transformer
    blocks under a key mask; frame-level logits and attention-pooled clip logits."""

    def __init__(self, mels, chans, d, heads, layers, max_tok, classes):
        super().__init__()
        mods, c = [], 1
        for i, w in enumerate(chans):
            mods += [_nn.Conv2d(c, w, 3, 1, 1, bias=False), _nn.BatchNorm2d(w), _nn.ReLU(),
                     _nn.Conv2d(w, w, 3, 1, 1, bias=False), _nn.BatchNorm2d(w), _nn.ReLU(),
                     _nn.AvgPool2d((2, 2) if i < 2 else (2, 1))]
            c = w
        self.cnn = _nn.Sequential(*mods)
        self.proj = _nn.Linear(c * (mels // 8), d)
        self.pos = _nn.Embedding(max_tok, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.frame, self.att = _nn.Linear(d, classes), _nn.Linear(d, classes)

    def forward(self, mel, keep):
        x = self.cnn(mel[:, None])  # (B, C, F/8, T/4)
        b, c, f, t = x.shape
        x = self.proj(x.permute(0, 3, 1, 2).reshape(b, t, c * f))
        x = x + self.pos(torch.arange(t, device=x.device))[None]
        for blk in self.blocks:
            x = blk(x, mask=keep[:, None, None, :])
        x = self.norm(x)
        frame = self.frame(x).float()
        att = self.att(x).float().masked_fill(~keep[..., None], -1e4).softmax(1)
        clip = (torch.sigmoid(frame) * att).sum(1)
        return frame, clip


@_workload("sound-event detection training with a mean teacher (random init, a CNN front end and a transformer, DCASE domestic-style): clips in 0.5 s steps at 100 frames a second, the step's longest 2-10 s (drawn) and each other clip 2 s up to the longest (drawn per clip), padded to the longest rounded up to a multiple of 4 frames, with 4-32 clips a step (drawn, at most 16,000 divided by the longest clip's frames), 64 log-mel bins drawn on the device; three conv blocks (32/64/128 channels, two 3x3 conv-BN-ReLU each, average pools to frequency / 8 and time / 4), a projection to width 256, a 250-row position table (the longest padded clip), 4 pre-norm transformer blocks (4 heads) under a key mask; 10 classes, frame-level binary cross-entropy on strong labels masked to valid frames and attention-pooled clip-level binary cross-entropy on weak labels; an exponential-moving-average teacher (decay 0.999, updated parameter by parameter) run without gradients on a noised copy of the input, a masked mean-squared consistency loss on frame probabilities weighted 2 (the two supervised losses weighted 1); AdamW, clipping, bf16 autocast, 350 steps; the losses read back every 10 steps and every 70 steps a no-grad evaluation of the teacher on 8 clips of 10 s with frame-level F1 at threshold 0.5 read back")
def sed_mean_teacher_train(rng):
    mels, chans, d = _smoke(64, 16), _smoke([32, 64, 128], [4, 8, 8]), _smoke(256, 32)
    heads, layers, classes = _smoke(4, 2), _smoke(4, 1), 10
    unit, lo, hi = _smoke(50, 8), _smoke(4, 2), _smoke(20, 4)  # 0.5 s units; 2-10 s
    max_frames = hi * unit
    model = _SEDNet(mels, chans, d, heads, layers, max_frames // 4, classes).cuda()
    teacher = _SEDNet(mels, chans, d, heads, layers, max_frames // 4, classes).cuda()
    teacher.load_state_dict(model.state_dict())
    teacher.requires_grad_(False)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    budget = _smoke(16000, 2 * max_frames)

    def batch(units):
        b, t = len(units), -(-max(units) * unit // 4) * 4
        mel = torch.randn(b, mels, t, device="cuda")
        keep_f = keep_mask([u * unit for u in units], t)
        mel = mel.masked_fill(~keep_f[:, None], 0.0)
        strong = (_F.avg_pool1d(torch.rand(b, classes, t // 4, device="cuda"), 9, 1, 4) > 0.6).float()
        keep = keep_mask([-(-u * unit // 4) for u in units], t // 4)
        weak = strong.amax(2)
        return mel, keep, strong.transpose(1, 2), weak

    steps = _smoke(350, 3)
    for step in range(steps):
        model.train()
        units0 = rng.randint(lo, hi)
        b = rng.randint(_smoke(4, 2), max(_smoke(4, 2), min(_smoke(32, 3), budget // (units0 * unit))))
        units = [units0] + [rng.randint(lo, units0) for _ in range(b - 1)]
        mel, keep, strong, weak = batch(units)
        kf = keep[..., None].float()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            frame, clip = model(mel, keep)
            with torch.no_grad():
                t_frame, _ = teacher(mel + 0.1 * torch.randn_like(mel), keep)
        l_s = (_F.binary_cross_entropy_with_logits(frame, strong, reduction="none") * kf).sum() / \
            (kf.sum() * classes)
        l_w = _F.binary_cross_entropy(clip.clamp(1e-6, 1 - 1e-6), weak)
        l_c = ((torch.sigmoid(frame) - torch.sigmoid(t_frame)).pow(2) * kf).sum() / (kf.sum() * classes)
        loss = l_s + l_w + 2.0 * l_c
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        with torch.no_grad():
            for pt, ps in zip(teacher.parameters(), model.parameters()):
                pt.mul_(0.999).add_(ps, alpha=0.001)
        if step % 10 == 0:
            torch.stack([l_s.detach(), l_w.detach(), l_c.detach()]).tolist()
        del mel, keep, strong, weak, kf, frame, clip, t_frame, l_s, l_w, l_c, loss
        if (step + 1) % _smoke(70, 2) == 0:
            teacher.eval()
            with torch.no_grad():
                mel, keep, strong, weak = batch([hi] * _smoke(8, 2))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    frame, _ = teacher(mel, keep)
                pred = (frame > 0).float()
                tp = (pred * strong).sum()
                f1 = 2 * tp / (pred.sum() + strong.sum()).clamp(min=1)
            f1.item()
            teacher.train()
            del mel, keep, strong, weak, frame, pred, tp, f1


# ---------------------------------------------------------------- doorbell-camera detection service


class _InvRes(_nn.Module):
    def __init__(self, cin, cout, stride, t):
        super().__init__()
        mid = cin * t
        mods = [] if t == 1 else [_nn.Conv2d(cin, mid, 1, bias=False), _nn.BatchNorm2d(mid), _nn.ReLU6()]
        mods += [_nn.Conv2d(mid, mid, 3, stride, 1, groups=mid, bias=False), _nn.BatchNorm2d(mid), _nn.ReLU6(),
                 _nn.Conv2d(mid, cout, 1, bias=False), _nn.BatchNorm2d(cout)]
        self.body = _nn.Sequential(*mods)
        self.res = stride == 1 and cin == cout

    def forward(self, x):
        y = self.body(x)
        return x + y if self.res else y


class _DoorbellDet(_nn.Module):
    """A MobileNetV2-style backbone (stride 16), its stride-16 features upsampled and added to a lateral of the
    stride-8 features, CenterNet-style heads at stride 8: class heatmaps, box sizes and centre offsets."""

    def __init__(self, cfg, classes, head):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, cfg[0][1], 3, 2, 1, bias=False), _nn.BatchNorm2d(cfg[0][1]),
                                   _nn.ReLU6())
        stages, c = [], cfg[0][1]
        for t, w, n, s in cfg[1:]:
            blocks = []
            for i in range(n):
                blocks.append(_InvRes(c, w, s if i == 0 else 1, t))
                c = w
            stages.append(_nn.Sequential(*blocks))
        self.stages = _nn.ModuleList(stages)
        self.lat8, self.lat16 = _nn.Conv2d(cfg[-3][1], head, 1), _nn.Conv2d(c, head, 1)
        self.neck = _nn.Sequential(_nn.Conv2d(head, head, 3, 1, 1), _nn.ReLU())
        self.hm, self.wh, self.off = _nn.Conv2d(head, classes, 1), _nn.Conv2d(head, 2, 1), _nn.Conv2d(head, 2, 1)

    def forward(self, x):
        x = self.stem(x)
        feats = []
        for s in self.stages:
            x = s(x)
            feats.append(x)
        y = self.lat8(feats[-3]) + _F.interpolate(self.lat16(feats[-1]), scale_factor=2, mode="nearest")
        y = self.neck(y)
        return torch.sigmoid(self.hm(y).float()), self.wh(y).float(), self.off(y).float()


@_workload("doorbell-camera detection serving (random init, a MobileNetV2-style backbone and a CenterNet-style head): 1,070-1,120 motion-triggered requests (drawn) of 1-4 frames each (drawn) from one doorbell each (of 40, drawn), the doorbell's resolution one of 288 x 384, 384 x 512 and 480 x 640 (fixed per doorbell, drawn once); uint8 pixels uploaded on a side stream from two reused pinned host buffers (filled once, sized for 4 frames of 480 x 640) one request ahead (one span, waited on by event, record_stream'ed), normalised on the device; a channels-last backbone (stem 32, inverted-residual stages 16/24/32/64/96 of 1/2/3/4/3 blocks, expansion 1 in the first and 6 after, stride 16), the stride-16 features upsampled onto a lateral of the stride-8 ones, a 64-channel neck, 3 class heatmaps (person, package, vehicle), box sizes and offsets at stride 8 under bf16 autocast; peaks by 3x3 max-pool suppression through torch.where, the top 40 per frame by topk, boxes gathered, detections whose centres fall in the doorbell's privacy rectangle zeroed by torch.where, a per-doorbell count of confident people kept on the device by index_add; each request's top scores, classes, boxes and the doorbell's count read back")
def doorbell_detect_serve(rng):
    cfg = _smoke([(1, 32, 1, 2), (1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1)],
                 [(1, 8, 1, 2), (1, 8, 1, 1), (2, 8, 1, 2), (2, 8, 1, 2), (2, 8, 1, 2), (2, 8, 1, 1)])
    classes, head, topk = 3, _smoke(64, 8), _smoke(40, 5)
    model = _DoorbellDet(cfg, classes, head).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    sizes = _smoke([(288, 384), (384, 512), (480, 640)], [(32, 48), (48, 64)])
    n_cam, max_frames = _smoke(40, 3), _smoke(4, 2)
    cam_size = [rng.choice(sizes) for _ in range(n_cam)]
    big = max(h * w for h, w in sizes) * 3
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_frames * big,), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1) * 255
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1) * 255
    privacy = torch.rand(n_cam, 4, device="cuda") * 0.5  # x0, y0 and the extent, as fractions of the frame
    privacy[:, 2:] += privacy[:, :2]
    people = torch.zeros(n_cam, device="cuda")
    nreq = rng.randint(_smoke(1070, 3), _smoke(1120, 4))
    plan = []
    for _ in range(nreq):
        cam = rng.randrange(n_cam)
        plan.append((cam, rng.randint(1, max_frames), *cam_size[cam]))

    for (cam, f, h, w), raw in up.ahead(plan, lambda p: (p[1] * 3 * p[2] * p[3],)):
        with torch.no_grad():
            x = raw.view(f, 3, h, w).float().sub_(mean).div_(std).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                hm, wh, off = model(x)
            hh, ww = hm.shape[2], hm.shape[3]
            peak = torch.where(hm == _F.max_pool2d(hm, 3, 1, 1), hm, torch.zeros_like(hm))
            score, idx = peak.flatten(1).topk(topk, 1)
            cls = idx // (hh * ww)
            pix = idx % (hh * ww)
            cy, cx = (pix // ww).float(), (pix % ww).float()
            wh_g = wh.flatten(2).gather(2, pix[:, None].expand(f, 2, topk))
            off_g = off.flatten(2).gather(2, pix[:, None].expand(f, 2, topk))
            px, py = (cx + off_g[:, 0]) / ww, (cy + off_g[:, 1]) / hh
            zone = privacy[cam]
            inside = (px > zone[0]) & (px < zone[2]) & (py > zone[1]) & (py < zone[3])
            score = torch.where(inside, torch.zeros_like(score), score)
            boxes = torch.stack([px - wh_g[:, 0].abs() / ww, py - wh_g[:, 1].abs() / hh,
                                 px + wh_g[:, 0].abs() / ww, py + wh_g[:, 1].abs() / hh], -1)
            n_person = ((score > 0.3) & (cls == 0)).float().sum()
            people.index_add_(0, torch.tensor([cam], device="cuda"), n_person[None])
            out = torch.cat([score.flatten(), cls.float().flatten(), boxes.flatten(), people[cam][None]])
        out.tolist()
        del raw, x, hm, wh, off, peak, score, idx, cls, pix, cy, cx, wh_g, off_g, px, py, zone, inside, boxes
        del n_person, out


# ---------------------------------------------------------------- sensor anomaly detection (LSTM autoencoder)


class _LSTMCell(_nn.Module):
    """One LSTM cell: a single linear layer over the input and the hidden state gives the four gates."""

    def __init__(self, din, d):
        super().__init__()
        self.lin = _nn.Linear(din + d, 4 * d)

    def forward(self, x, h, c):
        i, f, g, o = self.lin(torch.cat([x, h], -1)).chunk(4, -1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class _SensorLSTMAutoencoder(_nn.Module):
    """A sensor embedding, an LSTM encoder over the window, a bottleneck, an LSTM decoder fed its own previous
    reconstruction that reconstructs the window in reverse order."""

    def __init__(self, sensors, d, z):
        super().__init__()
        self.d = d
        self.inp = _nn.Linear(2 * sensors, d)
        self.enc, self.dec = _LSTMCell(d, d), _LSTMCell(sensors, d)
        self.bott, self.unbott = _nn.Linear(d, z), _nn.Linear(z, 2 * d)
        self.out = _nn.Linear(d, sensors)

    def forward(self, x, present):
        b, t, s = x.shape
        e = self.inp(torch.cat([x * present, present], -1))
        h = c = e.new_zeros(b, self.d)
        for i in range(t):
            h, c = self.enc(e[:, i], h, c)
        h, c = torch.tanh(self.unbott(torch.tanh(self.bott(h)))).chunk(2, -1)
        prev = x.new_zeros(b, s)
        outs = []
        for i in range(t):
            h, c = self.dec(prev, h, c)
            prev = self.out(h)
            outs.append(prev)
        return torch.stack(outs[::-1], 1).float()


@_workload("sensor anomaly detection training (random init, an LSTM autoencoder with both recurrences written out step by step): 64-256 windows a step (drawn) of 16-48 readings (drawn per step) from 24 home sensors (temperature, humidity, power, vibration and the like), smooth signals drawn on the device (cumulative sums of noise plus a daily sine of period 96 readings at a phase drawn per window and sensor), each reading missing with probability 0.05 (its value zeroed and a presence channel given, left out of the loss); an input projection to width 128, an LSTM encoder cell (one linear layer for the four gates), a 32-wide bottleneck, an LSTM decoder cell fed its own previous output reconstructing the window in reverse; masked mean-squared error; Adam, clipping, bf16 autocast, 150 steps; the loss read back every 10 steps and every 30 steps a no-grad evaluation of 512 windows of 48 readings, each faulty with probability 0.25 (drawn on the device) and then given an injected spike fault (+6 by torch.where at one drawn time and sensor), per-window reconstruction errors ranked by topk and the fraction of faulty windows among the top 128 read back")
def sensor_lstm_ae_anomaly_train(rng):
    sensors, d, z = _smoke(24, 6), _smoke(128, 16), _smoke(32, 8)
    model = _SensorLSTMAutoencoder(sensors, d, z).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    lo, hi = _smoke(16, 4), _smoke(48, 8)

    def windows(b, t):
        phase = torch.rand(b, 1, sensors, device="cuda") * 2 * math.pi
        tt = torch.arange(t, device="cuda").float()[None, :, None]
        x = torch.sin(phase + tt * (2 * math.pi / 96)) + 0.05 * torch.randn(b, t, sensors, device="cuda").cumsum(1)
        present = (torch.rand(b, t, sensors, device="cuda") > 0.05).float()
        return x, present

    steps = _smoke(150, 3)
    for step in range(steps):
        model.train()
        b, t = rng.randint(_smoke(64, 2), _smoke(256, 4)), rng.randint(lo, hi)
        x, present = windows(b, t)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            rec = model(x, present)
        loss = ((rec - x).pow(2) * present).sum() / present.sum().clamp(min=1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            loss.detach().item()
        del x, present, rec, loss
        if (step + 1) % _smoke(30, 2) == 0:
            model.eval()
            with torch.no_grad():
                n, top = _smoke(512, 8), _smoke(128, 2)
                x, present = windows(n, hi)
                faulty = (torch.rand(n, device="cuda") < 0.25)
                where_t = _F.one_hot(torch.randint(0, hi, (n,), device="cuda"), hi).bool()
                where_s = _F.one_hot(torch.randint(0, sensors, (n,), device="cuda"), sensors).bool()
                spike = faulty[:, None, None] & where_t[:, :, None] & where_s[:, None, :]
                x = torch.where(spike, x + 6.0, x)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    rec = model(x, present)
                err = ((rec - x).pow(2) * present).sum((1, 2)) / present.sum((1, 2)).clamp(min=1)
                _, order = err.topk(top)
                hit = faulty.float().gather(0, order).mean()
            hit.item()
            del x, present, faulty, where_t, where_s, spike, rec, err, order, hit

"""The ninety-third batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch91_b.py are): manufacturing, quality inspection and predictive maintenance, written in torch alone, first half.
Steel-surface defect segmentation training (a residual encoder-decoder over grayscale strip images of drawn widths,
four multi-label defect classes by binary cross-entropy and soft Dice), a multi-station visual inspection service
(a residual feature extractor over parts from one of several camera stations, patch features scored against the
station's memory bank of normal patches by nearest-neighbour distance, PatchCore-style, a smoothed anomaly map, a
defect-type head and per-station alarm counters), turbofan remaining-useful-life training (a transformer encoder over
run-to-failure sensor windows of drawn lengths under a key mask, a per-cycle capped RUL regression) and bearing-fault
training (vibration segments of drawn lengths framed and Fourier-transformed on the device, a two-layer LSTM written
out step by step over the frames with padded frames held by torch.where, fault-type and health heads).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths,
resolutions and batch sizes are fixed on the host, padding handled by masks multiplied in or by torch.where /
masked_fill, no boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
inspection_station_serve uploads its images on a side stream (two reused pinned host buffers, one request ahead, the
main stream waiting on an event, the tensors record_stream'ed, through workload_helpers.SideUploads); the other three
are single-stream. The models run under bf16 autocast (the Fourier transforms in fp32). Every position table is sized
for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new93.sh's header.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- steel-surface defect segmentation


class _ConvBNAct(_nn.Sequential):
    """k x k convolution (no bias), batch norm, SiLU."""

    def __init__(self, cin, cout, k=3, stride=1):
        super().__init__(_nn.Conv2d(cin, cout, k, stride, k // 2, bias=False), _nn.BatchNorm2d(cout), _nn.SiLU())


class _Bottleneck(_nn.Module):
    """A residual bottleneck (1x1 down, 3x3, 1x1 up); when the stride or width changes, the skip is average-pooled
    and projected by a 1x1 convolution (ResNet-D style)."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        mid = cout // 2
        self.body = _nn.Sequential(_ConvBNAct(cin, mid, 1), _ConvBNAct(mid, mid, 3, stride),
                                   _nn.Conv2d(mid, cout, 1, bias=False), _nn.BatchNorm2d(cout))
        self.skip = _nn.Identity() if (cin == cout and stride == 1) else _nn.Sequential(
            _nn.AvgPool2d(stride, stride) if stride > 1 else _nn.Identity(),
            _nn.Conv2d(cin, cout, 1, bias=False), _nn.BatchNorm2d(cout))

    def forward(self, x):
        return _F.silu(self.body(x) + self.skip(x))


class _StripSegNet(_nn.Module):
    """A stride-2 stem, four stages of two bottlenecks (the first strided), an FPN-like decoder (1x1 laterals, bilinear
    upsampling, a 3x3 smoothing convolution per level) to 1/2 resolution, per-class logits upsampled to full size."""

    def __init__(self, widths, dec, n_cls):
        super().__init__()
        self.stem = _ConvBNAct(1, widths[0], 3, 2)
        stages, c = [], widths[0]
        for i, w in enumerate(widths):
            stages.append(_nn.Sequential(_Bottleneck(c, w, 1 if i == 0 else 2), _Bottleneck(w, w, 1)))
            c = w
        self.stages = _nn.ModuleList(stages)
        self.lat = _nn.ModuleList(_nn.Conv2d(w, dec, 1) for w in widths)
        self.smooth = _nn.ModuleList(_ConvBNAct(dec, dec) for _ in widths)
        self.head = _nn.Conv2d(dec, n_cls, 1)

    def forward(self, x):
        feats, h = [], self.stem(x)
        for s in self.stages:
            h = s(h)
            feats.append(h)
        y = self.smooth[-1](self.lat[-1](feats[-1]))
        for i in range(len(feats) - 2, -1, -1):
            y = _F.interpolate(y, size=feats[i].shape[-2:], mode="bilinear", align_corners=False)
            y = self.smooth[i](y + self.lat[i](feats[i]))
        return _F.interpolate(self.head(y), size=x.shape[-2:], mode="bilinear", align_corners=False).float()


@_workload("steel-surface defect segmentation training (random init, a residual encoder-decoder, Severstal-style): grayscale strips 256 px high and 512-1,600 px wide (drawn per step, a multiple of 64) with 2-12 strips a step (drawn, at most 8 x 256 x 1,024 pixels a step), drawn on the device; a channels-last network of a stride-2 stem (64) and four stages of two residual bottlenecks (64/128/256/384 channels, stride 1/2/2/2), an FPN-like decoder (width 96, 1x1 laterals, bilinear upsampling, a 3x3 convolution per level) and 4 per-class logits upsampled to full size; targets: 4 defect masks from thresholded, upsampled random fields of drawn sparsity; binary cross-entropy plus a soft Dice loss per class; AdamW with a cosine learning rate set per step, clipping, bf16 autocast, 400 steps; the losses read back every 20 steps and every 100 steps a no-grad evaluation of 4 strips of 256 x 1,600 with the per-class Dice read back")
def surface_defect_seg_train(rng):
    widths, dec, n_cls = _smoke([64, 128, 256, 384], [8, 16]), _smoke(96, 8), 4
    model = _StripSegNet(widths, dec, n_cls).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=4e-4, weight_decay=0.01)
    height, wmax, mult = _smoke(256, 32), _smoke(1600, 128), _smoke(64, 32)
    budget = _smoke(8 * 256 * 1024, 4 * 32 * 128)

    def strips(b, w):
        x = torch.randn(b, 1, height, w, device="cuda").contiguous(memory_format=torch.channels_last)
        field = _F.interpolate(torch.randn(b, n_cls, height // 16, w // 16, device="cuda"), size=(height, w),
                               mode="bilinear", align_corners=False)
        thr = torch.tensor([rng.uniform(0.8, 1.6) for _ in range(n_cls)], device="cuda").view(1, n_cls, 1, 1)
        return x, (field > thr).float()

    def dice(logits, y):
        p = torch.sigmoid(logits)
        inter = (p * y).sum((2, 3))
        return (2 * inter + 1) / (p.sum((2, 3)) + y.sum((2, 3)) + 1)

    steps = _smoke(400, 3)
    for step in range(steps):
        model.train()
        for g in opt.param_groups:
            g["lr"] = 4e-4 * 0.5 * (1 + math.cos(math.pi * step / steps))
        w = rng.randint(_smoke(512, 64) // mult, wmax // mult) * mult
        b = rng.randint(2, max(2, min(12, budget // (height * w))))
        x, y = strips(b, w)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x)
        l_bce = _F.binary_cross_entropy_with_logits(logits, y)
        l_dice = 1 - dice(logits, y).mean()
        loss = l_bce + l_dice
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_bce.detach(), l_dice.detach()]).tolist()
        del x, y, logits, l_bce, l_dice, loss
        if (step + 1) % _smoke(100, 2) == 0:
            model.eval()
            with torch.no_grad():
                x, y = strips(_smoke(4, 2), wmax)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = model(x)
                d = dice(torch.where(logits > 0, 50.0, -50.0), y).mean(0)
            d.tolist()
            del x, y, logits, d


# ---------------------------------------------------------------- multi-station visual inspection (PatchCore-style)


class _PatchFeatures(_nn.Module):
    """A residual convnet (stride-2 stem, three stages at 1/4, 1/8 and 1/16): the 1/8 and 1/16 stage outputs, each
    averaged over 3x3 neighbourhoods, the deeper upsampled to 1/8, concatenated and projected to `d`; a defect-type
    head on the pooled deepest features."""

    def __init__(self, widths, d, n_types):
        super().__init__()
        self.stem = _nn.Sequential(_ConvBNAct(3, widths[0], 3, 2), _ConvBNAct(widths[0], widths[0]))
        self.s1 = _nn.Sequential(_Bottleneck(widths[0], widths[1], 2), _Bottleneck(widths[1], widths[1], 1))
        self.s2 = _nn.Sequential(_Bottleneck(widths[1], widths[2], 2), _Bottleneck(widths[2], widths[2], 1))
        self.s3 = _nn.Sequential(_Bottleneck(widths[2], widths[3], 2), _Bottleneck(widths[3], widths[3], 1))
        self.proj = _nn.Conv2d(widths[2] + widths[3], d, 1)
        self.types = _nn.Linear(widths[3], n_types)

    def forward(self, x):
        f2 = self.s2(self.s1(self.stem(x)))
        f3 = self.s3(f2)
        a = _F.avg_pool2d(f2, 3, 1, 1)
        b = _F.interpolate(_F.avg_pool2d(f3, 3, 1, 1), size=f2.shape[-2:], mode="bilinear", align_corners=False)
        return self.proj(torch.cat([a, b], 1)), self.types(f3.mean((2, 3)))


@_workload("multi-station visual inspection serving (random init, a PatchCore-style patch-feature anomaly detector): 1,750-1,850 requests (drawn) of 1-8 parts each (drawn) from one of 12 camera stations (drawn), each station's image size one of 224 x 224, 256 x 320 and 320 x 448 (fixed per station, drawn once); uint8 RGB images uploaded on a side stream from two reused pinned host buffers (filled once, sized for 8 images of 320 x 448) one request ahead (one span, waited on by event, record_stream'ed), normalised on the device; a channels-last residual extractor (stem 32, stages of 64/128/256 channels) whose 1/8 and 1/16 features, 3x3-averaged and concatenated, are projected to 192-wide patch features; each station's memory bank of 3,072 normal patch features (on the device, gathered by index_select) scored by nearest-neighbour squared distance (norms and a matmul, min over the bank) in fp32; the anomaly map smoothed by a 5x5 Gaussian convolution and upsampled bilinearly to the image size; per-part image scores (map maxima), the 9 defect-type probabilities of a linear head, a pass/fail decision against the station's threshold by torch.where and the station's fail counter updated by index_add_, under bf16 autocast; each request's scores, decisions and types read back")
def inspection_station_serve(rng):
    widths, d, n_types = _smoke([32, 64, 128, 256], [8, 8, 16, 16]), _smoke(192, 16), 9
    model = _PatchFeatures(widths, d, n_types).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    sizes = _smoke([(224, 224), (256, 320), (320, 448)], [(32, 32), (32, 48)])
    n_st, max_parts, n_bank = 12, _smoke(8, 2), _smoke(3072, 64)
    st_size = [rng.choice(sizes) for _ in range(n_st)]
    banks = torch.randn(n_st, n_bank, d, device="cuda")
    bank_sq = banks.pow(2).sum(-1)
    thresh = torch.rand(n_st, device="cuda") * 20 + 150
    fails = torch.zeros(n_st, device="cuda")
    g = torch.exp(-torch.arange(-2, 3, device="cuda").float().pow(2) / 2)
    gauss = (g[:, None] * g[None]).div(g.sum() ** 2).view(1, 1, 5, 5)
    big = max(h * w for h, w in sizes) * 3
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_parts * big,), dtype=torch.uint8, generator=gen).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1) * 255
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1) * 255
    nreq = rng.randint(_smoke(1750, 3), _smoke(1850, 4))
    plan = []
    for _ in range(nreq):
        st = rng.randrange(n_st)
        plan.append((st, rng.randint(1, max_parts), *st_size[st]))

    nxt = up.upload(0, plan[0][1] * 3 * plan[0][2] * plan[0][3])
    for i in range(nreq):
        st, n, h, w = plan[i]
        item = nxt
        if i + 1 < nreq:
            p = plan[i + 1]
            nxt = up.upload(i + 1, p[1] * 3 * p[2] * p[3])
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            x = raw.view(n, 3, h, w).float().sub_(mean).div_(std).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                feat, types = model(x)
            fh, fw = feat.shape[-2:]
            q = feat.float().permute(0, 2, 3, 1).reshape(-1, d)
            st_t = torch.tensor([st], device="cuda")
            bank = banks.index_select(0, st_t)[0]
            dist = q.pow(2).sum(-1, keepdim=True) + bank_sq.index_select(0, st_t) - 2 * q @ bank.t()
            amap = dist.amin(-1).clamp(min=0).view(n, 1, fh, fw)
            amap = _F.interpolate(_F.conv2d(amap, gauss, padding=2), size=(h, w), mode="bilinear",
                                  align_corners=False)
            score = amap.amax((1, 2, 3))
            fail = torch.where(score > thresh.index_select(0, st_t), 1.0, 0.0)
            fails.index_add_(0, st_t, fail.sum()[None])
            out = torch.cat([score, fail, types.float().softmax(-1).flatten()])
        out.tolist()
        del item, raw, x, feat, types, q, st_t, bank, dist, amap, score, fail, out


# ---------------------------------------------------------------- turbofan remaining useful life


class _RulTransformer(_nn.Module):
    """Sensor channels normalised and embedded by a kernel-3 1-d convolution, an operating-condition embedding and a
    position table added, pre-norm blocks under a key mask, a per-cycle RUL head."""

    def __init__(self, n_in, n_cond, d, heads, layers, max_len):
        super().__init__()
        self.inp = _nn.Conv1d(n_in, d, 3, 1, 1)
        self.cond, self.pos = _nn.Embedding(n_cond, d), _nn.Embedding(max_len, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.head = mlp(d, d, 1, act=_nn.GELU)

    def forward(self, x, cond, keep):
        t = x.shape[1]
        h = self.inp(x.transpose(1, 2)).transpose(1, 2) + self.cond(cond) + self.pos(torch.arange(t, device=x.device))
        mask = keep[:, None, None, :]
        for blk in self.blocks:
            h = blk(h, mask=mask)
        return self.head(self.norm(h))[..., 0].float()


@_workload("turbofan remaining-useful-life training (random init, a transformer over run-to-failure sensor windows, C-MAPSS-style): 32-128 engine windows a step (drawn), each window 30-320 cycles long (drawn per window, padded to the step's longest rounded up to a multiple of 16, position table of 320 rows), 24 channels (3 operating settings, 21 sensors) drawn on the device as a degradation trend plus noise, one of 6 operating conditions per cycle (embedded), each window's end a drawn 0-200 cycles before failure; a kernel-3 1-d convolution to width 192, 4 pre-norm blocks (6 heads) under a key mask, a per-cycle RUL head; a masked MSE on the RUL capped at 125 at every cycle plus a weighted MSE at each window's last cycle (taken by gather); AdamW with linear warm-up and cosine decay set per step, clipping, bf16 autocast, 580 steps; the loss read back every 20 steps and every 145 steps a no-grad evaluation of 128 windows of 320 cycles with the last-cycle RMSE and the asymmetric NASA score read back")
def turbofan_rul_train(rng):
    n_in, n_cond, d, heads, layers = 24, 6, _smoke(192, 16), _smoke(6, 2), _smoke(4, 1)
    max_len, cap = _smoke(320, 48), 125.0
    model = _RulTransformer(n_in, n_cond, d, heads, layers, max_len).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)

    def windows(lengths):
        b, t = len(lengths), min(max_len, -(-max(lengths) // 16) * 16)
        keep = keep_mask(lengths, t)
        end = torch.tensor([rng.randint(0, 200) for _ in range(b)], device="cuda").float()
        pos = torch.arange(t, device="cuda").float()[None]
        rul = end[:, None] + (torch.tensor(lengths, device="cuda").float()[:, None] - 1 - pos)
        trend = torch.exp(-rul / 150)[..., None] * torch.randn(1, 1, n_in, device="cuda")
        x = (trend + 0.3 * torch.randn(b, t, n_in, device="cuda")).masked_fill(~keep[..., None], 0.0)
        cond = torch.randint(0, n_cond, (b, t), device="cuda")
        last = torch.tensor(lengths, device="cuda")[:, None] - 1
        return x, cond, keep, rul.clamp(max=cap), last

    steps, warm = _smoke(580, 3), _smoke(30, 1)
    for step in range(steps):
        model.train()
        f = (step + 1) / warm if step < warm else 0.5 * (1 + math.cos(math.pi * (step - warm) / (steps - warm)))
        for g in opt.param_groups:
            g["lr"] = 5e-4 * f
        b = rng.randint(_smoke(32, 2), _smoke(128, 4))
        x, cond, keep, rul, last = windows([rng.randint(_smoke(30, 8), max_len) for _ in range(b)])
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(x, cond, keep)
        w = keep.float()
        l_seq = ((pred - rul).pow(2) * w).sum() / w.sum()
        l_last = (pred.gather(1, last) - rul.gather(1, last)).pow(2).mean()
        loss = (l_seq + 2 * l_last) / (cap * cap)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.detach().item()
        del x, cond, keep, rul, last, pred, w, l_seq, l_last, loss
        if (step + 1) % _smoke(145, 2) == 0:
            model.eval()
            with torch.no_grad():
                x, cond, keep, rul, last = windows([max_len] * _smoke(128, 3))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pred = model(x, cond, keep)
                err = pred.gather(1, last) - rul.gather(1, last)
                nasa = torch.where(err < 0, torch.exp(-err / 13) - 1, torch.exp(err / 10) - 1).sum()
                out = torch.stack([err.pow(2).mean().sqrt(), nasa])
            out.tolist()
            del x, cond, keep, rul, last, pred, err, nasa, out


# ---------------------------------------------------------------- bearing-fault diagnosis (LSTM written out)


class _StepLSTM(_nn.Module):
    """A stacked LSTM written out one frame at a time (fused gate projections per layer); a padded frame keeps each
    layer's state by torch.where."""

    def __init__(self, d_in, hidden, layers):
        super().__init__()
        self.h = hidden
        self.ih = _nn.ModuleList(_nn.Linear(d_in if i == 0 else hidden, 4 * hidden) for i in range(layers))
        self.hh = _nn.ModuleList(_nn.Linear(hidden, 4 * hidden, bias=False) for _ in range(layers))

    def forward(self, x, keep):
        b, t, _ = x.shape
        hs = [x.new_zeros(b, self.h) for _ in self.ih]
        cs = [x.new_zeros(b, self.h) for _ in self.ih]
        pre = self.ih[0](x)  # the first layer's input projections for every frame at once
        for s in range(t):
            k = keep[:, s, None]
            inp = None
            for i in range(len(self.ih)):
                gates = (pre[:, s] if i == 0 else self.ih[i](inp)) + self.hh[i](hs[i])
                ig, fg, gg, og = gates.chunk(4, -1)
                c = torch.sigmoid(fg) * cs[i] + torch.sigmoid(ig) * torch.tanh(gg)
                h = torch.sigmoid(og) * torch.tanh(c)
                cs[i] = torch.where(k, c, cs[i])
                hs[i] = torch.where(k, h, hs[i])
                inp = hs[i]
        return hs[-1]


class _BearingNet(_nn.Module):
    def __init__(self, bins, d, hidden, layers, n_fault):
        super().__init__()
        self.inp = _nn.Sequential(_nn.LayerNorm(bins), _nn.Linear(bins, d), _nn.GELU())
        self.rnn = _StepLSTM(d, hidden, layers)
        self.fault, self.health = _nn.Linear(hidden, n_fault), mlp(hidden, hidden // 2, 1)

    def forward(self, spec, keep):
        h = self.rnn(self.inp(spec), keep)
        return self.fault(h).float(), self.health(h)[..., 0].float()


@_workload("bearing-fault diagnosis training (random init, a two-layer LSTM written out frame by frame over vibration spectra, CWRU-style): 16-64 vibration segments a step (drawn), each 6,144-24,576 samples long (drawn per segment, a multiple of 512, padded to the step's longest), drawn on the device as a shaft tone, a fault impulse train of drawn rate and noise; cut into 512-sample frames (hop 512) by unfold, a Hann window, an rfft in fp32 and log magnitudes of the 257 bins; a LayerNorm and linear to width 128, an LSTM of 2 layers (hidden 256) written out one frame at a time (12-48 frames), padded frames holding each layer's state by torch.where; a 10-way fault-type head (cross-entropy) and a health-index head (MSE against a drawn index); Adam, clipping, bf16 autocast, 75 steps; the losses read back every 10 steps and every 25 steps a no-grad evaluation of 64 segments of 24,576 samples with the fault accuracy read back")
def bearing_fault_lstm_train(rng):
    frame, d, hidden, layers, n_fault = _smoke(512, 64), _smoke(128, 16), _smoke(256, 16), 2, 10
    bins, max_len = frame // 2 + 1, _smoke(24576, 256)
    model = _BearingNet(bins, d, hidden, layers, n_fault).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    window = torch.hann_window(frame, device="cuda")

    def segments(lengths):
        b, n = len(lengths), max(lengths)
        t = torch.arange(n, device="cuda").float()[None]
        shaft = torch.sin(2 * math.pi * t * torch.rand(b, 1, device="cuda") * 0.01)
        rate = torch.tensor([rng.uniform(0.002, 0.02) for _ in range(b)], device="cuda")[:, None]
        impulses = torch.relu(torch.cos(2 * math.pi * t * rate) - 0.95) * 20
        sig = shaft + impulses * torch.randn(b, 1, device="cuda").abs() + 0.5 * torch.randn(b, n, device="cuda")
        keep = keep_mask([ln // frame for ln in lengths], n // frame)
        frames = sig.unfold(1, frame, frame) * window
        spec = torch.fft.rfft(frames.float(), dim=-1).abs().add(1e-6).log()
        y = torch.randint(0, n_fault, (b,), device="cuda")
        health = torch.rand(b, device="cuda")
        return spec, keep, y, health

    steps, lo = _smoke(75, 3), _smoke(6144, 128)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(16, 2), _smoke(64, 4))
        spec, keep, y, health = segments([rng.randint(lo // frame, max_len // frame) * frame for _ in range(b)])
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits, hi = model(spec, keep)
        l_f = _F.cross_entropy(logits, y)
        l_h = _F.mse_loss(torch.sigmoid(hi), health)
        loss = l_f + l_h
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_f.detach(), l_h.detach()]).tolist()
        del spec, keep, y, health, logits, hi, l_f, l_h, loss
        if (step + 1) % _smoke(25, 2) == 0:
            model.eval()
            with torch.no_grad():
                spec, keep, y, health = segments([max_len] * _smoke(64, 3))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits, hi = model(spec, keep)
                acc = (logits.argmax(-1) == y).float().mean()
            acc.item()
            del spec, keep, y, health, logits, hi, acc

"""The sixty-fourth batch of held-out workloads for record.py, second half (batch64.py has the first): sports
analytics, fitness and human activity from wearables and video on the GPU, written in torch alone. A wrist-PPG heart
rate and HRV service for many users (batches of 8 s windows of green PPG and 3-axis accelerometer at 64 Hz from a
drawn number of users, packed in reused pinned float32 host buffers and uploaded on a side stream one batch ahead; a
1-D U-Net removes motion artefacts with the accelerometer as reference, heart rate by a soft arg-max over the
zero-padded spectrum's cardiac band, beat-to-beat variability from local maxima found by max-pooling, a per-user
state table smoothed by index_copy; a larger second model re-scores the worst-quality windows), sleep staging over
whole nights of wearable signals (nights of drawn length in 30 s epochs, a per-epoch 1-D CNN encoder and a
transformer over the night with key-padding masks, class-weighted cross-entropy), a fitness-coaching repetition
counter and form scorer over video clips in the manner of RepNet (clips of drawn length and resolution, a per-frame
CNN, a temporal self-similarity matrix, a transformer predicting per-frame period length and periodicity and a form
score; evaluations over long workout videos at several strides), and golf and tennis swing classification from 3D
pose (sequences of drawn length of 25 joints, a spatial-temporal graph convolutional network with three adjacency
partitions, random rotation and scaling as augmentation, swing class and per-frame phase heads). Same conventions as
the earlier batches: nothing downloaded, data drawn at random on the device (or, for the PPG service, from a few
reused pinned host buffers), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: counts
are fixed on the host (batches, users, windows re-scored, evaluation strides), masks multiplied or added in, no
boolean-mask indexing; losses and metrics are read back only at logging points.
ppg_hr_artifact_serve uses a side stream (uploads waited on by event, the tensors record_stream'ed); the others are
single-stream. The PPG U-Nets, the sleep transformer, the repetition counter and the ST-GCN run under bf16 autocast;
the spectra (FFTs want fp32), the state tables and the losses are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after batch64.py's: every workload
below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it reaches
record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch64.py's header says the same of its half): see record_new64.sh's header
for each workload's op outputs and peak live bytes counted on PyTorch's meta device at its final real sizes
(RECORD_SMOKE unset) with the helper's runner (now scripts/traces/meta_run.py:
smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered with dummies, autocast a no-op so that fp32
sizes are counted, SDPA taking a math path, streams, events and pinned memory no-ops; boolean-mask indexing, which
the meta device cannot size, is avoided), its op outputs counted there (events about 1.8x that count) and its peak
live bytes tracked: ppg_hr_artifact_serve 313,663 op outputs, 0.29 GB; sleep_stage_night_train
299,789, 2.84 GB; rep_count_form_video_train 305,006, 1.10 GB; swing_pose3d_stgcn_train 335,227, 7.31 GB.
The CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- wrist PPG heart rate and HRV service


class _Unet1d(_nn.Module):
    """PPG and accelerometer in (4 channels), the clean PPG out: a 1-D U-Net of `depth` levels."""

    def __init__(self, w, depth):
        super().__init__()
        chans = [4] + [w * 2 ** i for i in range(depth)]
        self.down = _nn.ModuleList(_nn.Sequential(_nn.Conv1d(a, b, 7, 2 if i else 1, 3), _nn.GELU(),
                                                  _nn.Conv1d(b, b, 7, 1, 3), _nn.GELU())
                                   for i, (a, b) in enumerate(zip(chans[:-1], chans[1:])))
        self.up = _nn.ModuleList(_nn.Conv1d(chans[i + 1] + chans[i + 2], chans[i + 1], 5, 1, 2)
                                 for i in range(depth - 1))
        self.out = _nn.Conv1d(w, 1, 1)

    def forward(self, x):
        skips = []
        for m in self.down:
            x = m(x)
            skips.append(x)
        for i in range(len(self.up) - 1, -1, -1):
            s = skips[i]
            x = _F.gelu(self.up[i](torch.cat([s, _F.interpolate(x, size=s.shape[-1], mode="linear")], 1)))
        return self.out(x)[:, 0]


@_workload("wrist-PPG heart rate and HRV estimation service written by hand (random init 1-D U-Net artefact removers): a population of 16,000 users; 2,800-3,300 request batches (drawn) of 8 s windows at 64 Hz (green PPG and 3-axis accelerometer) from 64-768 users (drawn per batch; user ids drawn), each batch's windows and user ids packed in one of two reused pinned float32 host buffers and uploaded on a side stream one batch ahead (waited on by event, record_stream'ed); a 4-level U-Net (width 16) removes motion artefacts using the accelerometer as reference; heart rate by a soft arg-max over the 0.7-3.5 Hz band of a 2,048-point zero-padded spectrum weighted down where the accelerometer spectrum peaks; beats as local maxima by max-pooling, an RMSSD proxy from the beat train's autocorrelation; a per-user state table (heart rate, HRV, quality) smoothed by gather and index_copy; every 8 batches the 32-128 worst-quality windows (drawn count, by topk) re-scored by a 5-level width-32 U-Net; bf16 autocast for the U-Nets, fp32 spectra, no grad; the mean heart rate read back every 100 batches")
def ppg_hr_artifact_serve(rng):
    fs, n, nfft = 64, _smoke(512, 128), _smoke(2048, 256)
    users = _smoke(16000, 64)
    bmax = _smoke(768, 8)
    host = [torch.randn(bmax * 5 * n + bmax).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    fast = _Unet1d(_smoke(16, 4), 4).cuda().eval().requires_grad_(False)
    slow = _Unet1d(_smoke(32, 4), 5).cuda().eval().requires_grad_(False)
    state = torch.zeros(users, 3, device="cuda")
    freqs = torch.arange(nfft // 2 + 1, device="cuda").float() * fs / nfft
    band = ((freqs > 0.7) & (freqs < 3.5)).float()
    hann = 0.5 - 0.5 * torch.cos(2 * math.pi * torch.arange(n, device="cuda").float() / n)  # periodic Hann

    def fetch(i, b):
        z, ev = up.upload(i, b * 5 * n + b)
        return z, ev, b

    def hr(clean, acc):
        spec = torch.fft.rfft(clean * hann, n=nfft).abs() ** 2
        aspec = torch.fft.rfft(acc * hann, n=nfft).abs().pow(2).sum(1)
        w = spec * band / (1.0 + 4.0 * aspec / aspec.amax(-1, keepdim=True).clamp_min(1e-6))
        p = torch.softmax(w / w.amax(-1, keepdim=True).clamp_min(1e-6) * 20.0, -1)
        return (p * freqs).sum(-1) * 60.0, w.amax(-1) / w.sum(-1).clamp_min(1e-6)

    nb = rng.randint(_smoke(2800, 3), _smoke(3300, 4))
    sizes = [rng.randint(_smoke(64, 2), bmax) for _ in range(nb)]
    nxt = fetch(0, sizes[0])
    with torch.no_grad():
        for i in range(nb):
            z, ev, b = nxt
            if i + 1 < nb:
                nxt = fetch(i + 1, sizes[i + 1])
            cur = torch.cuda.current_stream()
            cur.wait_event(ev)
            z.record_stream(cur)
            x = z[: b * 5 * n].view(b, 5, n)[:, :4]
            uid = (z[b * 5 * n:].abs() * 1e4).long() % users
            x = (x - x.mean(-1, keepdim=True)) / x.std(-1, keepdim=True).clamp_min(1e-3)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                clean = fast(x).float()
            bpm, qual = hr(clean, x[:, 1:4])
            peaks = (clean == _F.max_pool1d(clean[:, None], 15, 1, 7)[:, 0]).float()
            ac = torch.fft.irfft(torch.fft.rfft(peaks, n=2 * n).abs() ** 2, n=2 * n)[:, 1: n // 2]
            rmssd = ac.std(-1) / ac.mean(-1).clamp_min(1e-6)
            old = state.index_select(0, uid)
            new = torch.stack([0.7 * old[:, 0] + 0.3 * bpm, 0.8 * old[:, 1] + 0.2 * rmssd, qual], -1)
            state = state.index_copy(0, uid, new)
            if i % 8 == 7:
                k = min(b, rng.randint(_smoke(32, 1), _smoke(128, 2)))
                worst = qual.topk(k, largest=False).indices
                xs = x.index_select(0, worst)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    c2 = slow(xs).float()
                bpm2, q2 = hr(c2, xs[:, 1:4])
                state = state.index_copy(0, uid.index_select(0, worst),
                                         torch.stack([bpm2, state.index_select(0, uid.index_select(0, worst))[:, 1],
                                                      q2], -1))
                del worst, xs, c2, bpm2, q2
            del z, x, uid, clean, bpm, qual, peaks, ac, rmssd, old, new
            if i % 100 == 0:
                state[:, 0].mean().item()


# ---------------------------------------------------------------- sleep staging over whole nights


class _EpochEncoder(_nn.Module):
    def __init__(self, cin, d):
        super().__init__()
        layers, a = [], cin
        for b in (32, 48, 64, 96, d):
            layers += [_nn.Conv1d(a, b, 7, 3, 3, bias=False), _nn.BatchNorm1d(b), _nn.GELU()]
            a = b
        self.net = _nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x).mean(-1)


@_workload("sleep staging over whole nights of wearable signals written by hand (random init epoch CNN and night transformer): nights of 6-10 h (drawn per night: 720-1,200 epochs of 30 s), wrist PPG at 32 Hz, 3-axis accelerometer and skin temperature resampled to 32 Hz (5 channels, 960 samples an epoch), batches of 2-6 nights (drawn) padded to the longest; a 5-layer strided 1-D CNN per epoch to 128 features, a 4-layer pre-norm transformer (width 128, 4 heads) over the night with a key-padding mask, 4 stages (wake, light, deep, REM) with class-weighted cross-entropy over valid epochs and a smoothness penalty; bf16 autocast, AdamW, 500 steps; every 125 steps an evaluation over 12 held-out nights one at a time, Cohen's kappa statistics from a confusion matrix by index_add, read back")
def sleep_stage_night_train(rng):
    d, cin, L = _smoke(128, 16), 5, _smoke(960, 96)
    enc = _EpochEncoder(cin, d).cuda()
    blocks = _nn.ModuleList(PreNormBlock(d, _smoke(4, 2)) for _ in range(_smoke(4, 1))).cuda()
    head = mlp(d, d, 4, 2, act=_nn.GELU).cuda()
    params = list(enc.parameters()) + list(blocks.parameters()) + list(head.parameters())
    opt = torch.optim.AdamW(params, lr=5e-4, weight_decay=0.01)
    cw = torch.tensor([1.0, 0.6, 1.5, 1.2], device="cuda")
    steps = _smoke(500, 3)

    def nights(lens):
        E = max(lens)
        x = torch.randn(len(lens), E, cin, L, device="cuda")
        v = (torch.arange(E, device="cuda")[None] < torch.tensor(lens, device="cuda")[:, None]).float()
        y = torch.randint(0, 4, (len(lens), E), device="cuda")
        return x, v, y

    def forward(x, v):
        B, E = v.shape
        h = enc(x.view(B * E, cin, L)).view(B, E, d)
        mask = ((v - 1.0) * 1e4)[:, None, None, :].to(h.dtype)
        for blk in blocks:
            h = blk(h, mask)
        return head(h)

    for step in range(steps):
        enc.train()
        blocks.train()
        lens = [rng.randint(_smoke(720, 6), _smoke(1200, 10)) for _ in range(rng.randint(_smoke(2, 1), _smoke(6, 2)))]
        x, v, y = nights(lens)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = forward(x, v).float()
        ce = _F.cross_entropy(logits.transpose(1, 2), y, weight=cw, reduction="none")
        pr = torch.softmax(logits, -1)
        smooth = ((pr[:, 1:] - pr[:, :-1]).abs().sum(-1) * v[:, 1:]).sum()
        loss = (ce * v).sum() / v.sum() + 0.01 * smooth / v.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        del x, v, y, logits, ce, pr, smooth
        if step % 15 == 0:
            float(loss)
        if (step + 1) % _smoke(125, 3) == 0:
            enc.eval()
            blocks.eval()
            conf = torch.zeros(16, device="cuda")
            with torch.no_grad():
                for _ in range(_smoke(12, 2)):
                    x, v, y = nights([rng.randint(_smoke(720, 6), _smoke(1200, 10))])
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        pred = forward(x, v).float().argmax(-1)
                    conf = conf.index_add(0, (y * 4 + pred).flatten(), v.flatten())
                    del x, v, y, pred
            cm = conf.view(4, 4)
            po = cm.diagonal().sum() / cm.sum()
            pe = (cm.sum(0) * cm.sum(1)).sum() / cm.sum() ** 2
            ((po - pe) / (1 - pe)).item()
            del conf, cm


# ---------------------------------------------------------------- fitness repetition counter and form scorer


class _RepNet(_nn.Module):
    def __init__(self, w, d, maxp):
        super().__init__()
        self.cnn = _nn.Sequential(_nn.Conv2d(3, w, 5, 2, 2, bias=False), _nn.BatchNorm2d(w), _nn.ReLU(),
                                  _nn.MaxPool2d(2),
                                  _nn.Conv2d(w, 2 * w, 3, 2, 1, bias=False), _nn.BatchNorm2d(2 * w), _nn.ReLU(),
                                  _nn.Conv2d(2 * w, 2 * w, 3, 1, 1, bias=False), _nn.BatchNorm2d(2 * w), _nn.ReLU(),
                                  _nn.Conv2d(2 * w, 4 * w, 3, 2, 1, bias=False), _nn.BatchNorm2d(4 * w), _nn.ReLU(),
                                  _nn.Conv2d(4 * w, 4 * w, 3, 1, 1, bias=False), _nn.BatchNorm2d(4 * w), _nn.ReLU(),
                                  _nn.AdaptiveAvgPool2d(1), _nn.Flatten(), _nn.Linear(4 * w, d))
        self.tconv = _nn.Conv1d(d, d, 3, padding=1)
        self.tsm = _nn.Conv2d(1, 32, 3, padding=1)
        self.d, self.maxp = d, maxp
        self.tin = _nn.Linear(32 * 64, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, 4) for _ in range(2))
        self.period = _nn.Linear(d, maxp)
        self.periodic = _nn.Linear(d, 1)
        self.form = mlp(2 * d, d, 1, 2)

    def forward(self, x):
        B, T = x.shape[:2]
        e = self.cnn(x.flatten(0, 1)).view(B, T, self.d)
        e = e + self.tconv(e.transpose(1, 2)).transpose(1, 2)
        sim = -torch.cdist(e.float(), e.float()) ** 2 / 13.5
        s = torch.softmax(sim, -1)[:, None]  # (B, 1, T, T)
        f = _F.relu(self.tsm(s.to(e.dtype)))  # (B, 32, T, T)
        f = _F.adaptive_avg_pool2d(f, (T, 64)).permute(0, 2, 1, 3).flatten(2)
        h = self.tin(f)
        for blk in self.blocks:
            h = blk(h)
        return self.period(h), self.periodic(h).squeeze(-1), self.form(torch.cat([h.mean(1), e.mean(1)], -1))[:, 0]


@_workload("fitness-coaching repetition counter and form scorer over video clips written by hand (random init RepNet-style network): clips of 32-64 frames (drawn) at 112, 128 or 160 pixels (drawn) in batches of 4-8 (drawn, at most 384 frames); a 5-conv per-frame CNN (width 24) to 256-dim embeddings, a temporal conv, the temporal self-similarity matrix (negative squared distances, row softmax) through a 3x3 conv, a 2-layer transformer (width 256) predicting per-frame period length (32 classes) and periodicity, and a form score from pooled features; cross-entropy, BCE and a form regression, bf16 autocast, AdamW, 720 steps; every 180 steps an evaluation over 2 long workout videos of 600-900 frames (drawn) at 128 pixels, counted at strides 1, 2, 3 and 4 in 64-frame windows, the repetition counts read back")
def rep_count_form_video_train(rng):
    w, d, maxp = _smoke(24, 4), _smoke(256, 32), _smoke(32, 4)
    model = _RepNet(w, d, maxp).cuda()
    steps = _smoke(720, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.01)

    def clip(B, T, r):
        t = torch.arange(T, device="cuda").float()
        per = torch.randint(2, maxp, (B, 1), device="cuda").float()
        phase = torch.sin(2 * math.pi * t[None] / per)  # (B, T): the repetition drives the frames
        base = torch.randn(B, 1, 3, r // 8, r // 8, device="cuda")
        mov = torch.randn(B, 1, 3, r // 8, r // 8, device="cuda")
        x = base + phase[..., None, None, None] * mov
        x = _F.interpolate(x.flatten(0, 1), size=(r, r), mode="bilinear", align_corners=False).view(B, T, 3, r, r)
        return x, per

    for step in range(steps):
        model.train()
        T = rng.choice(_smoke([32, 48, 64], [8]))
        B = min(rng.randint(_smoke(4, 1), _smoke(8, 2)), _smoke(384, 16) // T)
        r = rng.choice(_smoke([112, 128, 160], [32]))
        x, per = clip(B, T, r)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pl, pp, form = model(x)
        yp = per.long().expand(B, T)
        loss = _F.cross_entropy(pl.float().flatten(0, 1), yp.flatten()) + \
            _F.binary_cross_entropy_with_logits(pp.float(), torch.ones(B, T, device="cuda")) + \
            _F.mse_loss(form.float(), torch.rand(B, device="cuda"))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del x, per, pl, pp, form, yp
        if step % 20 == 0:
            float(loss)
        if (step + 1) % _smoke(180, 3) == 0:
            model.eval()
            counts = []
            with torch.no_grad():
                for _ in range(2):
                    nf = rng.randint(_smoke(600, 24), _smoke(900, 32))
                    vid, _ = clip(1, nf, _smoke(128, 32))
                    for stride in (1, 2, 3, 4):
                        sub = vid[0, ::stride]
                        W = _smoke(64, 8)
                        nwin = sub.shape[0] // W
                        wins = sub[: nwin * W].reshape(nwin, W, *sub.shape[1:])
                        tot = torch.zeros((), device="cuda")
                        for s0 in range(0, nwin, 4):
                            with torch.autocast("cuda", dtype=torch.bfloat16):
                                pl, pp, _ = model(wins[s0: s0 + 4])
                            plen = pl.float().argmax(-1).float() + 1.0
                            tot = tot + (torch.sigmoid(pp.float()) / plen).sum()
                            del pl, pp, plen
                        counts.append(tot)
                        del sub, wins
                    del vid
            torch.stack(counts).tolist()


# ---------------------------------------------------------------- golf and tennis swing classification from 3D pose


def _skeleton_adj(V):
    """Three ST-GCN partitions (self, centripetal, centrifugal) of a 25-joint tree, row-normalised."""
    parent = [0, 0, 1, 2, 3, 1, 5, 6, 1, 8, 9, 10, 8, 12, 13, 0, 0, 15, 16, 14, 19, 14, 11, 22, 11][:V]
    A = torch.zeros(3, V, V)
    for i in range(V):
        A[0, i, i] = 1.0
        if i:
            A[1, i, parent[i]] = 1.0
            A[2, parent[i], i] = 1.0
    return A / A.sum(-1, keepdim=True).clamp_min(1.0)


class _STGCNBlock(_nn.Module):
    def __init__(self, a, b, stride, A):
        super().__init__()
        self.register_buffer("A", A)
        self.imp = _nn.Parameter(torch.ones_like(A))
        self.g = _nn.Conv2d(a, 3 * b, 1)
        self.n1 = _nn.BatchNorm2d(b)
        self.t = _nn.Conv2d(b, b, (9, 1), (stride, 1), (4, 0))
        self.n2 = _nn.BatchNorm2d(b)
        self.res = _nn.Identity() if a == b and stride == 1 else _nn.Sequential(_nn.Conv2d(a, b, 1, (stride, 1)),
                                                                                 _nn.BatchNorm2d(b))
        self.b = b

    def forward(self, x):
        N, _, T, V = x.shape
        g = self.g(x).view(N, 3, self.b, T, V)
        g = torch.einsum("nkctv,kvw->nctw", g, (self.A * self.imp).to(g.dtype))
        return _F.relu(self.n2(self.t(_F.relu(self.n1(g)))) + self.res(x))


@_workload("golf and tennis swing classification from 3D pose written by hand (random init ST-GCN): sequences of 25 joints in 3D of 60-240 frames (drawn per batch, the swing's capture length) in batches of 32-64 (drawn); random rotation about the vertical axis, scaling and joint jitter as augmentation on the device; 9 spatial-temporal graph conv blocks (widths 64, 128, 256, temporal stride 2 at the fourth and seventh) with three learnable-importance adjacency partitions by einsum; 14 swing classes (golf drive, iron, chip, putt; tennis serve, forehand, backhand, volley ...) and a per-frame 6-phase head (address, backswing, top, downswing, impact, follow-through) upsampled to the input length; bf16 autocast, SGD with Nesterov momentum and a step decay, 520 steps; every 130 steps an evaluation of 384 sequences at 5 test-time rotations, accuracy read back")
def swing_pose3d_stgcn_train(rng):
    V, ncls, nph = 25, 14, 6
    A = _skeleton_adj(V).cuda()
    widths = _smoke([64, 64, 64, 128, 128, 128, 256, 256, 256], [8, 8, 16])
    strides = _smoke([1, 1, 1, 2, 1, 1, 2, 1, 1], [1, 2, 1])
    layers, a = [], 3
    for b, s in zip(widths, strides):
        layers.append(_STGCNBlock(a, b, s, A))
        a = b
    net = _nn.Sequential(_nn.BatchNorm2d(3), *layers).cuda()
    cls = _nn.Linear(a, ncls).cuda()
    phase = _nn.Conv1d(a, nph, 1).cuda()
    params = list(net.parameters()) + list(cls.parameters()) + list(phase.parameters())
    steps = _smoke(520, 3)
    opt = torch.optim.SGD(params, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, [steps // 2, steps * 3 // 4], 0.1)

    def seqs(N, T, nrot=1):
        base = torch.randn(N, 1, V, 3, device="cuda") * 0.3
        motion = torch.randn(N, T // 10 + 2, V, 3, device="cuda").cumsum(1) * 0.05
        m = _F.interpolate(motion.permute(0, 2, 3, 1).reshape(N, V * 3, -1), size=T, mode="linear",
                           align_corners=True).view(N, V, 3, T).permute(0, 3, 1, 2)
        x = base + m  # (N, T, V, 3)
        th = torch.rand(N * nrot, device="cuda") * 2 * math.pi
        c, s = th.cos(), th.sin()
        z, o = torch.zeros_like(th), torch.ones_like(th)
        R = torch.stack([c, z, s, z, o, z, -s, z, c], -1).view(N * nrot, 3, 3)
        sc = 0.9 + 0.2 * torch.rand(N * nrot, 1, 1, 1, device="cuda")
        x = x.repeat(nrot, 1, 1, 1) @ R[:, None].transpose(-1, -2) * sc
        x = x + 0.01 * torch.randn_like(x)
        return x.permute(0, 3, 1, 2).contiguous()  # (N, 3, T, V)

    def forward(x):
        h = net(x)  # (N, C, T', V)
        hp = h.mean(-1)
        ph = _F.interpolate(phase(hp), size=x.shape[2], mode="linear", align_corners=False)
        return cls(hp.mean(-1)), ph

    for step in range(steps):
        net.train()
        N = rng.randint(_smoke(32, 2), _smoke(64, 3))
        T = rng.randint(_smoke(60, 8), _smoke(240, 12)) // 4 * 4
        x = seqs(N, T)
        y = torch.randint(0, ncls, (N,), device="cuda")
        yph = (torch.arange(T, device="cuda")[None] * nph // T).expand(N, T)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            lg, ph = forward(x)
        loss = _F.cross_entropy(lg.float(), y) + 0.5 * _F.cross_entropy(ph.float(), yph)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        del x, y, yph, lg, ph
        if step % 20 == 0:
            float(loss)
        if (step + 1) % _smoke(130, 3) == 0:
            net.eval()
            correct = torch.zeros((), device="cuda")
            nrot, total = _smoke(5, 2), _smoke(384, 4)
            with torch.no_grad():
                for s0 in range(0, total, _smoke(64, 2)):
                    n = min(_smoke(64, 2), total - s0)
                    T = rng.randint(_smoke(60, 8), _smoke(240, 12)) // 4 * 4
                    x = seqs(n, T, nrot)
                    y = torch.randint(0, ncls, (n,), device="cuda")
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        lg, _ = forward(x)
                    p = torch.softmax(lg.float(), -1).view(nrot, n, ncls).mean(0)
                    correct = correct + (p.argmax(-1) == y).float().sum()
                    del x, y, lg, p
            (correct / total).item()

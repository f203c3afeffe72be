"""The ninety-seventh batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch96_b.py are): video platforms and video understanding, written in torch alone, first half. Action-recognition
training (a factorised space-time vision transformer over tubelet embeddings of clips of drawn lengths and
resolutions, mixup and label smoothing), recurrent video super-resolution training (a BasicVSR-style bidirectional
recurrent network written out frame by frame, flow-warped hidden states, x4 pixel-shuffle upsampling), a
frame-interpolation service (a RIFE-style coarse-to-fine flow network over the neighbouring pairs of uploaded
segments of 2-5 frames of drawn resolutions, 2x-4x frame-rate up-conversion) and next-video recommendation training
(a causal transformer over watch histories of drawn lengths with sampled-softmax negatives). Same conventions as the
earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned host buffers for the
service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes through `_smoke(real,
small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths, resolutions and batch
sizes are fixed on the host, padding handled by masks or by torch.where / masked_fill, no boolean-mask indexing;
losses and metrics are read back only at logging points or once per request. frame_interp_serve uploads its frames on
a side stream (two reused pinned host buffers, one request ahead, the main stream waiting on an event, the tensors
record_stream'ed, through workload_helpers.SideUploads); the other three are single-stream. The models run under bf16
autocast (the flow warps by grid_sample in fp32). Every position table is sized for the longest padded length that
can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new97.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and for
which of them the CPU smoke run (RECORD_SMOKE=1) ran.
"""

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, keep_mask

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _warp(x, flow):
    """x (N, C, H, W) sampled bilinearly at every pixel displaced by flow (N, 2, H, W) in pixels (x, then y), the
    borders repeated; in fp32, returned in x's dtype."""
    _, _, h, w = x.shape
    f = flow.float()
    xs = torch.arange(w, device=x.device, dtype=torch.float32).view(1, 1, w)
    ys = torch.arange(h, device=x.device, dtype=torch.float32).view(1, h, 1)
    gx = (xs + f[:, 0]) * (2.0 / max(w - 1, 1)) - 1.0
    gy = (ys + f[:, 1]) * (2.0 / max(h - 1, 1)) - 1.0
    out = _F.grid_sample(x.float(), torch.stack([gx, gy], -1), mode="bilinear", padding_mode="border",
                         align_corners=True)
    return out.to(x.dtype)


# ---------------------------------------------------------------- action recognition (factorised space-time ViT)


class _SpaceTimeViT(_nn.Module):
    """Tubelets embedded by a strided 3-d convolution, row, column and time position tables added, spatial blocks
    within each tubelet slice, then temporal blocks across slices at each patch position, mean pooled; a class
    head."""

    def __init__(self, d, heads, s_layers, t_layers, patch, tube, max_side, max_slices, classes):
        super().__init__()
        self.embed = _nn.Conv3d(3, d, (tube, patch, patch), (tube, patch, patch))
        self.row, self.col = _nn.Embedding(max_side, d), _nn.Embedding(max_side, d)
        self.time = _nn.Embedding(max_slices, d)
        self.spatial = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(s_layers))
        self.temporal = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(t_layers))
        self.norm, self.head = _nn.LayerNorm(d), _nn.Linear(d, classes)

    def forward(self, x):
        z = self.embed(x)
        b, d, t, h, w = z.shape
        dev = x.device
        pos = self.row(torch.arange(h, device=dev))[:, None] + self.col(torch.arange(w, device=dev))[None]
        z = z.permute(0, 2, 3, 4, 1) + pos + self.time(torch.arange(t, device=dev))[:, None, None]
        z = _F.dropout(z.reshape(b * t, h * w, d), 0.1, self.training)
        for blk in self.spatial:
            z = blk(z)
        z = z.view(b, t, h * w, d).transpose(1, 2).reshape(b * h * w, t, d)
        for blk in self.temporal:
            z = blk(z)
        return self.head(self.norm(z).view(b, h * w * t, d).mean(1)).float()


@_workload("action-recognition training (random init, a factorised space-time vision transformer, ViViT-style): clips of 8, 12 or 16 frames (drawn per step) at 112-192 px square (drawn per step, a multiple of 16), 4-16 clips a step (drawn, at most 12 x 8 x 144 tubelet tokens a step), drawn on the device, flipped horizontally on half the steps (drawn); 2 x 16 x 16 tubelets embedded by a strided 3-d convolution to width 384, row and column tables of 12 rows and a time table of 8 rows, 5 spatial pre-norm blocks within each time slice then 3 temporal blocks across slices (6 heads), mean pooling, a 400-way head; mixup (weight drawn from Beta(0.8, 0.8), a device permutation) with label-smoothed cross-entropy (0.1); AdamW, clipping, bf16 autocast, 335 steps; the loss read back every 20 steps and every 67 steps a no-grad evaluation of 4 clips of 16 frames at 192 px with top-1 and top-5 accuracy read back")
def video_tubelet_vit_train(rng):
    d, heads, s_layers, t_layers = _smoke(384, 32), _smoke(6, 2), _smoke(5, 1), _smoke(3, 1)
    patch, tube, classes = _smoke(16, 8), 2, _smoke(400, 10)
    frame_choices, lo, hi = _smoke([8, 12, 16], [4, 6]), _smoke(112, 16), _smoke(192, 32)
    max_side, max_slices = hi // patch, max(frame_choices) // tube
    model = _SpaceTimeViT(d, heads, s_layers, t_layers, patch, tube, max_side, max_slices, classes).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.05)
    budget = _smoke(12 * 8 * 144, 2 * 2 * 4)

    steps = _smoke(335, 3)
    for step in range(steps):
        model.train()
        frames, res = rng.choice(frame_choices), rng.randint(lo // patch, hi // patch) * patch
        tokens = (frames // tube) * (res // patch) ** 2
        b = rng.randint(_smoke(4, 2), max(_smoke(4, 2), min(_smoke(16, 3), budget // tokens)))
        x = torch.randn(b, 3, frames, res, res, device="cuda")
        if rng.random() < 0.5:
            x = x.flip(-1)
        y = torch.randint(0, classes, (b,), device="cuda")
        lam = rng.betavariate(0.8, 0.8)
        perm = torch.randperm(b, device="cuda")
        x = lam * x + (1 - lam) * x[perm]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x)
        loss = lam * _F.cross_entropy(logits, y, label_smoothing=0.1) + \
            (1 - lam) * _F.cross_entropy(logits, y[perm], label_smoothing=0.1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.detach().item()
        del x, y, perm, logits, loss
        if (step + 1) % _smoke(67, 2) == 0:
            model.eval()
            with torch.no_grad():
                x = torch.randn(_smoke(4, 2), 3, max(frame_choices), hi, hi, device="cuda")
                y = torch.randint(0, classes, (x.shape[0],), device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = model(x)
                top5 = logits.topk(5, -1).indices
                acc = torch.stack([(top5[:, 0] == y).float().mean(), (top5 == y[:, None]).any(-1).float().mean()])
            acc.tolist()
            del x, y, logits, top5, acc


# ---------------------------------------------------------------- recurrent video super-resolution (BasicVSR-style)


class _ResStack(_nn.Module):
    """A 3x3 convolution from cin to c channels, a leaky ReLU, n residual blocks of two 3x3 convolutions."""

    def __init__(self, cin, c, n):
        super().__init__()
        self.inp = _nn.Conv2d(cin, c, 3, 1, 1)
        self.blocks = _nn.ModuleList(_nn.Sequential(_nn.Conv2d(c, c, 3, 1, 1), _nn.ReLU(), _nn.Conv2d(c, c, 3, 1, 1))
                                     for _ in range(n))

    def forward(self, x):
        x = _F.leaky_relu(self.inp(x), 0.1)
        for blk in self.blocks:
            x = x + blk(x)
        return x


class _RecurrentVSR(_nn.Module):
    """Flows between neighbouring low-resolution frames from a small convnet (all pairs at once); a backward and a
    forward recurrence, frame by frame, each warping its hidden state to the current frame and updating it with a
    residual stack; both states fused per frame and upsampled x4 by two pixel shuffles, added to the bilinear
    upsampling of the input."""

    def __init__(self, c, blocks):
        super().__init__()
        self.c = c
        self.flow = _nn.Sequential(_nn.Conv2d(6, 32, 7, 1, 3), _nn.LeakyReLU(0.1), _nn.Conv2d(32, 64, 7, 1, 3),
                                   _nn.LeakyReLU(0.1), _nn.Conv2d(64, 32, 7, 1, 3), _nn.LeakyReLU(0.1),
                                   _nn.Conv2d(32, 16, 7, 1, 3), _nn.LeakyReLU(0.1), _nn.Conv2d(16, 2, 7, 1, 3))
        self.back, self.fwd = _ResStack(3 + c, c, blocks), _ResStack(3 + c, c, blocks)
        self.fuse = _nn.Conv2d(2 * c, c, 1)
        self.up1, self.up2 = _nn.Conv2d(c, 4 * c, 3, 1, 1), _nn.Conv2d(c, 4 * 32, 3, 1, 1)
        self.hr, self.out = _nn.Conv2d(32, 32, 3, 1, 1), _nn.Conv2d(32, 3, 3, 1, 1)

    def forward(self, lr):
        b, t, _, h, w = lr.shape
        a, nb = lr[:, 1:].reshape(-1, 3, h, w), lr[:, :-1].reshape(-1, 3, h, w)
        to_prev = self.flow(torch.cat([a, nb], 1)).view(b, t - 1, 2, h, w)  # frame i+1 -> frame i
        to_next = self.flow(torch.cat([nb, a], 1)).view(b, t - 1, 2, h, w)  # frame i -> frame i+1
        state = lr.new_zeros(b, self.c, h, w)
        backward = [None] * t
        for i in range(t - 1, -1, -1):
            if i < t - 1:
                state = _warp(state, to_next[:, i])
            state = self.back(torch.cat([lr[:, i], state], 1))
            backward[i] = state
        state = lr.new_zeros(b, self.c, h, w)
        forward = []
        for i in range(t):
            if i > 0:
                state = _warp(state, to_prev[:, i - 1])
            state = self.fwd(torch.cat([lr[:, i], state], 1))
            forward.append(state)
        z = torch.cat([torch.stack(backward, 1), torch.stack(forward, 1)], 2).view(b * t, 2 * self.c, h, w)
        z = _F.leaky_relu(self.fuse(z), 0.1)
        z = _F.leaky_relu(_F.pixel_shuffle(self.up1(z), 2), 0.1)
        z = _F.leaky_relu(_F.pixel_shuffle(self.up2(z), 2), 0.1)
        z = self.out(_F.leaky_relu(self.hr(z), 0.1))
        base = _F.interpolate(lr.view(b * t, 3, h, w), scale_factor=4, mode="bilinear", align_corners=False)
        return (z + base).view(b, t, 3, 4 * h, 4 * w)


@_workload("recurrent video super-resolution training (random init, a BasicVSR-style bidirectional recurrent network): 2-8 clips a step (drawn, at most 40 frames of 64 x 64 low-resolution pixels a step) of 5-15 frames (drawn per step) with low-resolution patches of 32-64 px square (drawn per step, a multiple of 8) and x4 high-resolution targets drawn on the device; a 5-layer 7x7 flow convnet over every neighbouring pair at once, once per direction; a backward then a forward recurrence written out frame by frame, each warping its 64-channel hidden state by the flow (grid_sample in fp32) and updating it with a residual stack of 7 blocks; the two states fused per frame, upsampled x4 by two pixel shuffles and added to the bilinear upsampling; Charbonnier loss; Adam, clipping, bf16 autocast, 98 steps; the loss read back every 10 steps and every 20 steps a no-grad evaluation of 1 clip of 15 frames at 64 px with its PSNR read back")
def video_superres_recurrent_train(rng):
    c, blocks = _smoke(64, 8), _smoke(7, 1)
    model = _RecurrentVSR(c, blocks).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=2e-4, betas=(0.9, 0.99))
    lo, hi, mult = _smoke(32, 8), _smoke(64, 16), _smoke(8, 8)
    t_lo, t_hi = _smoke(5, 2), _smoke(15, 3)
    budget = _smoke(40 * 64 * 64, 6 * 16 * 16)

    def clip(b, t, n):
        lr = torch.rand(b, t, 3, n, n, device="cuda")
        hr = (_F.interpolate(lr.view(b * t, 3, n, n), scale_factor=4, mode="bicubic", align_corners=False)
              + 0.05 * torch.randn(b * t, 3, 4 * n, 4 * n, device="cuda")).view(b, t, 3, 4 * n, 4 * n)
        return lr, hr

    steps = _smoke(98, 3)
    for step in range(steps):
        model.train()
        t, n = rng.randint(t_lo, t_hi), rng.randint(lo // mult, hi // mult) * mult
        b = rng.randint(2, max(2, min(_smoke(8, 2), budget // (t * n * n))))
        lr, hr = clip(b, t, n)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            sr = model(lr)
        loss = torch.sqrt((sr.float() - hr) ** 2 + 1e-6).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            loss.detach().item()
        del lr, hr, sr, loss
        if (step + 1) % _smoke(20, 2) == 0:
            model.eval()
            with torch.no_grad():
                lr, hr = clip(1, t_hi, hi)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    sr = model(lr).float().clamp(0, 1)
                psnr = -10 * torch.log10(((sr - hr) ** 2).mean().clamp(min=1e-10))
            psnr.item()
            del lr, hr, sr, psnr


# ---------------------------------------------------------------- frame-interpolation service (RIFE-style)


class _FlowBlock(_nn.Module):
    """One level of the coarse-to-fine flow network: its input and the current flow resized to 1/scale, two stride-2
    convolutions, a residual stack of PReLU convolutions, a transposed convolution to 4 flow channels and a mask
    channel, resized back to full resolution."""

    def __init__(self, cin, c):
        super().__init__()
        self.down = _nn.Sequential(_nn.Conv2d(cin + 4, c // 2, 3, 2, 1), _nn.PReLU(c // 2),
                                   _nn.Conv2d(c // 2, c, 3, 2, 1), _nn.PReLU(c))
        self.body = _nn.Sequential(*[m for _ in range(4) for m in (_nn.Conv2d(c, c, 3, 1, 1), _nn.PReLU(c))])
        self.up = _nn.ConvTranspose2d(c, 5, 4, 2, 1)

    def forward(self, x, flow, scale):
        h, w = x.shape[2:]
        small = (h // scale, w // scale)
        xs = _F.interpolate(x, size=small, mode="bilinear", align_corners=False)
        fs = _F.interpolate(flow, size=small, mode="bilinear", align_corners=False) / scale
        z = self.down(torch.cat([xs, fs], 1))
        z = self.up(self.body(z) + z)
        z = _F.interpolate(z, size=(h, w), mode="bilinear", align_corners=False)
        return z[:, :4] * scale, z[:, 4:]


class _Interpolator(_nn.Module):
    """Three flow levels (1/4, 1/2 and full resolution), each refining the flows from the middle time to both input
    frames and a blending mask, both frames warped after each level; the blend refined by a small convnet."""

    def __init__(self, widths):
        super().__init__()
        self.blocks = _nn.ModuleList(_FlowBlock(3 * 4 + 2, c) for c in widths)
        self.refine = _nn.Sequential(_nn.Conv2d(15, 32, 3, 1, 1), _nn.PReLU(32), _nn.Conv2d(32, 32, 3, 1, 1),
                                     _nn.PReLU(32), _nn.Conv2d(32, 3, 3, 1, 1))

    def forward(self, f0, f1, t):
        n, _, h, w = f0.shape
        tmap = t.view(n, 1, 1, 1).expand(n, 1, h, w).to(f0.dtype)
        flow, mask = f0.new_zeros(n, 4, h, w), f0.new_zeros(n, 1, h, w)
        w0, w1 = f0, f1
        for blk, s in zip(self.blocks, (4, 2, 1)):
            df, dm = blk(torch.cat([f0, f1, w0, w1, tmap, mask], 1), flow, s)
            flow, mask = flow + df, mask + dm
            w0, w1 = _warp(f0, flow[:, :2]), _warp(f1, flow[:, 2:])
        m = torch.sigmoid(mask)
        blend = w0 * m + w1 * (1 - m)
        res = torch.tanh(self.refine(torch.cat([f0, f1, w0, w1, blend], 1)))
        return (blend + 0.1 * res).clamp(0, 1), m


@_workload("frame-interpolation serving (random init, a RIFE-style coarse-to-fine flow network for frame-rate up-conversion): 2,000-2,100 requests (drawn), each a segment of 2-5 consecutive frames (drawn) from one video at 256 x 448, 352 x 640 or 544 x 960 (drawn per request) and an up-conversion factor of 2, 3 or 4 (drawn), so every neighbouring pair gets factor - 1 intermediate frames at evenly spaced times, all of a request's pairs and times in one batch; uint8 frames uploaded on a side stream from two reused pinned host buffers (filled once, sized for 5 frames of 544 x 960) one request ahead (one span, waited on by event, record_stream'ed), scaled to [0, 1] on the device; three flow levels (1/4, 1/2, full resolution; widths 192/128/96) of two stride-2 convolutions, 4 PReLU convolutions with a skip and a transposed convolution each, both frames warped by grid_sample (fp32) after each level, a sigmoid blending mask and a 3-layer refinement convnet, under bf16 autocast; the output frames quantised back to uint8, and each request's per-frame mean blending mask, mean absolute difference from the plain average of the two frames and mean of the uint8 frame at every 64th row and column read back")
def frame_interp_serve(rng):
    widths = _smoke([192, 128, 96], [16, 16, 16])
    model = _Interpolator(widths).cuda().eval()
    model.requires_grad_(False)
    sizes = _smoke([(256, 448), (352, 640), (544, 960)], [(32, 48), (64, 64)])
    max_frames = 5
    big = max(h * w for h, w in sizes) * 3
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_frames * big,), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    nreq = rng.randint(_smoke(2000, 3), _smoke(2100, 4))
    plan = [(rng.randint(2, max_frames), rng.choice([2, 3, 4]), *rng.choice(sizes)) for _ in range(nreq)]

    def span(p):
        return p[0] * 3 * p[2] * p[3]

    nxt = up.upload(0, span(plan[0]))
    for i in range(nreq):
        frames, factor, h, w = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, span(plan[i + 1]))
        raw, ev = item
        SideUploads.ready(ev, raw)
        pairs, k = frames - 1, factor - 1
        with torch.no_grad():
            x = raw.view(frames, 3, h, w).float().div_(255)
            f0 = x[:-1].repeat_interleave(k, 0)
            f1 = x[1:].repeat_interleave(k, 0)
            times = torch.tensor([j / factor for j in range(1, factor)] * pairs, device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                mid, m = model(f0, f1, times)
            mid = mid.float()
            frames_u8 = (mid * 255).round().to(torch.uint8)
            diff = (mid - 0.5 * (f0 + f1)).abs().mean((1, 2, 3))
            out = torch.cat([m.float().mean((1, 2, 3)), diff, frames_u8[:, :, ::64, ::64].float().mean((1, 2, 3))])
        out.tolist()
        del item, raw, x, f0, f1, times, mid, m, frames_u8, diff, out


# ---------------------------------------------------------------- next-video recommendation over watch histories


class _WatchSeqModel(_nn.Module):
    """Video-id, category and position embeddings plus a projection of per-watch signals (completion, log dwell
    time), causal pre-norm blocks under a causal-and-key mask, a final norm; scores are dot products with the
    video table."""

    def __init__(self, n_items, n_cats, d, heads, layers, max_len):
        super().__init__()
        self.item = _nn.Embedding(n_items, d, padding_idx=0)
        self.cat, self.pos = _nn.Embedding(n_cats, d), _nn.Embedding(max_len, d)
        self.signal = _nn.Linear(2, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)

    def forward(self, items, cats, signals, keep):
        t = items.shape[1]
        causal = torch.ones(t, t, dtype=torch.bool, device=items.device).tril()
        mask = causal[None, None] & keep[:, None, None, :]
        x = self.item(items) + self.cat(cats) + self.pos(torch.arange(t, device=items.device))[None] + \
            self.signal(signals)
        x = _F.dropout(x, 0.1, self.training)
        for blk in self.blocks:
            x = blk(x, mask=mask)
        return self.norm(x)


@_workload("next-video recommendation training (random init, a SASRec-style causal transformer over watch histories): 64-256 users a step (drawn, at most 32,768 padded positions a step), each a history of 8-256 watched videos (drawn per user, log-uniform) out of a 200,000-video catalogue with a category of 500 and two watch signals (completion fraction, log dwell time), right-padded to the step's longest rounded up to a multiple of 16 (position table of 256 rows); 4 pre-norm blocks (width 256, 4 heads) under a causal-and-key mask; each position predicts the next video by sampled softmax over the true next video and 512 negatives shared by the step (drawn on the device), cross-entropy on valid positions only; Adam, clipping, bf16 autocast, 600 steps; the loss read back every 25 steps and every 150 steps a no-grad evaluation of 256 users with 128-watch histories scored at the last position against the whole catalogue (top 20 by topk) with hit rate read back")
def watch_history_seqrec_train(rng):
    n_items, n_cats = _smoke(200000, 300), _smoke(500, 20)
    d, heads, layers, max_len = _smoke(256, 32), _smoke(4, 2), _smoke(4, 1), _smoke(256, 32)
    n_neg, budget = _smoke(512, 16), _smoke(32768, 128)
    model = _WatchSeqModel(n_items, n_cats, d, heads, layers, max_len).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def histories(lengths):
        t = -(-max(lengths) // 16) * 16
        keep = keep_mask(lengths, t)
        b = len(lengths)
        items = torch.randint(1, n_items, (b, t), device="cuda").masked_fill(~keep, 0)
        cats = torch.randint(0, n_cats, (b, t), device="cuda")
        signals = torch.stack([torch.rand(b, t, device="cuda"), torch.randn(b, t, device="cuda")], -1)
        return items, cats, signals * keep[..., None], keep

    steps = _smoke(600, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(64, 2), _smoke(256, 4))
        lengths = [_b.loguniform(rng, _smoke(8, 4), max_len) for _ in range(b)]
        t = -(-max(lengths) // 16) * 16
        lengths = lengths[:max(2, min(b, budget // t))]
        items, cats, signals, keep = histories(lengths)
        neg = torch.randint(1, n_items, (n_neg,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = model(items, cats, signals, keep)[:, :-1]
            target = items[:, 1:]
            pos = (h * model.item(target)).sum(-1, keepdim=True)
            negs = h @ model.item(neg).t()
            logits = torch.cat([pos, negs], -1).float()
        valid = keep[:, 1:].float()
        ce = _F.cross_entropy(logits.flatten(0, 1), torch.zeros(logits.shape[0] * logits.shape[1], dtype=torch.long,
                                                                device="cuda"), reduction="none")
        loss = (ce * valid.flatten()).sum() / valid.sum().clamp(min=1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 25 == 0:
            loss.detach().item()
        del items, cats, signals, keep, neg, h, target, pos, negs, logits, valid, ce, loss
        if (step + 1) % _smoke(150, 2) == 0:
            model.eval()
            with torch.no_grad():
                items, cats, signals, keep = histories([_smoke(128, 16)] * _smoke(256, 4))
                held = torch.randint(1, n_items, (items.shape[0],), device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    h = model(items, cats, signals, keep)[:, -1]
                    scores = (h @ model.item.weight.t()).float()
                scores[:, 0] = float("-inf")
                top = scores.topk(20, -1).indices
                hit = (top == held[:, None]).any(-1).float().mean()
            hit.item()
            del items, cats, signals, keep, held, h, scores, top, hit

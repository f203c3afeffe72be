"""The eighty-first batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch79_b.py are): architecture, construction and civil engineering, written in torch alone, first half. Structural
health monitoring of bridges from vibration sensor networks (a 1D convolutional encoder and a log-spectrum encoder per
sensor of accelerations of drawn lengths, dense graph attention over the sensors with a distance bias under a mask
of the real sensors, structure-level damage class and severity heads and a per-sensor damage localisation head),
concrete crack segmentation (a U-Net over inspection photo patches of drawn sizes, batch sizes under a pixel budget,
thin crack masks from level sets of smooth noise, weighted binary cross-entropy plus soft Dice, IoU and F1 at
evaluation points), a construction-site safety detection service (uint8 camera frames uploaded on a side stream, a
CenterNet-style detector with a small feature pyramid, peak decoding by max pooling and top-k, helmet and
machinery-proximity rules by pairwise distances) and a MeshGraphNet-style finite-element surrogate of bridge decks
under traffic loads (triangulated deck meshes of drawn sizes batched as one graph, vehicle axle loads of drawn
counts, targets from Jacobi iterations of a plate-like Poisson problem with the supports held at zero, gather and
index_add message passing). Same conventions as the earlier batches: nothing downloaded, data drawn at random on the
device (or, for the safety service, from two reused pinned host buffers), `rng` the workload's random.Random for
every shape, count and sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No
control flow reads a tensor's value: batch sizes, sensor counts, mesh sizes and vehicle counts are fixed on the host,
padding handled by masks multiplied in or by torch.where / masked_fill, no boolean-mask indexing; losses, metrics
and detections are read back only at logging points. site_safety_detect_serve uses a side stream (uploads waited on
by event, the tensors record_stream'ed); the others are single-stream. The networks run under bf16 autocast (the
spectra, the physics and the targets in fp32).

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new81.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, or
estimated from CPU smoke counts, and for which of them the CPU smoke run (RECORD_SMOKE=1) ran.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import SideUploads, mlp, randint

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- structural health monitoring over sensor graphs


class _GraphAttn(_nn.Module):
    """Dense multi-head attention over a structure's sensors with an additive distance bias and a key mask."""

    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.n1, self.n2 = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.proj = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.ff = mlp(d, 2 * d, d, layers=2, act=_nn.GELU)

    def forward(self, h, bias):
        b, n, d = h.shape
        q, k, v = self.qkv(self.n1(h)).view(b, n, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        s = (q @ k.transpose(-1, -2)).float() * (d // self.h) ** -0.5 + bias[:, None]
        a = torch.softmax(s, -1).to(v.dtype) @ v
        h = h + self.proj(a.transpose(1, 2).reshape(b, n, d))
        return h + self.ff(self.n2(h))


class _SHMNet(_nn.Module):
    def __init__(self, channels, widths, nbands, d, heads, layers, classes):
        super().__init__()
        convs, c = [], channels
        for w in widths:
            convs += [_nn.Conv1d(c, w, 7, 2, 3, bias=False), _nn.BatchNorm1d(w), _nn.GELU()]
            c = w
        self.conv = _nn.Sequential(*convs)
        self.tproj = _nn.Linear(2 * c, d)
        self.spec = mlp(channels * nbands, d, d, layers=2, act=_nn.GELU)
        self.pos = mlp(3, d // 2, d, layers=2, act=_nn.GELU)
        self.graph = _nn.ModuleList(_GraphAttn(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.node = mlp(d, d, 1, layers=2, act=_nn.GELU)
        self.cls = mlp(2 * d, d, classes, layers=2, act=_nn.GELU)
        self.sev = mlp(2 * d, d, 1, layers=2, act=_nn.GELU)

    def forward(self, x, spec, pos, nmask, span):
        """x (B, N, C, T) accelerations, spec (B, N, C * bands) log spectra, pos (B, N, 3) sensor positions in m,
        nmask (B, N) the real sensors: class logits (B, K), severity (B,), per-sensor damage logits (B, N)."""
        b, n, c, t = x.shape
        f = self.conv(x.flatten(0, 1))
        h = self.tproj(torch.cat([f.mean(-1), f.amax(-1)], -1)) + self.spec(spec.flatten(0, 1))
        h = h.view(b, n, -1) + self.pos(pos / span)
        dist2 = (pos[:, :, None] - pos[:, None]).pow(2).sum(-1)
        bias = (-dist2 / (2 * 25.0 ** 2)).masked_fill(nmask[:, None, :] == 0, -1e4)
        for blk in self.graph:
            h = blk(h, bias)
        h = self.norm(h)
        m = nmask[..., None].to(h.dtype)
        pooled = torch.cat([(h * m).sum(1) / m.sum(1).clamp(min=1),
                            h.float().masked_fill(m == 0, -1e4).amax(1).to(h.dtype)], -1)
        return self.cls(pooled).float(), self.sev(pooled)[:, 0].float(), self.node(h)[..., 0].float()


@_workload("structural health monitoring training over bridge vibration sensor networks (random init): 8-16 structures a step (drawn, a multiple of 4) with 24-96 sensor slots (drawn per step, a multiple of 8; the real count per structure drawn and the rest masked) recording 3-axis accelerations of 512-2,048 samples (drawn per step) synthesised on the device as three modal sinusoids whose frequencies drop with the damage state plus noise; per sensor a 5-stage strided 1D convolutional encoder (32-160 channels, mean and max pooled) and a log-magnitude rFFT spectrum in 32 bands (fp32), a positional MLP of the sensor coordinates, 4 dense graph-attention blocks (width 192, 6 heads) with a Gaussian distance bias and a key mask of the real sensors, masked mean and max pooling, a 4-way damage class head, a severity regression head and a per-sensor damage localisation head by masked binary cross-entropy; AdamW with warmup and cosine decay, clipping, bf16 autocast, 400 steps; the loss read back every 20 steps and every 100 steps an evaluation of 4 batches with class accuracy and localisation F1 read back")
def shm_sensor_gnn_train(rng):
    d, heads, layers, classes = _smoke(192, 16), _smoke(6, 2), _smoke(4, 2), 4
    widths, nbands, span = _smoke([32, 64, 96, 128, 160], [8, 8, 16]), _smoke(32, 4), 120.0
    lengths = _smoke([512, 1024, 1536, 2048], [64, 128])
    model = _SHMNet(3, widths, nbands, d, heads, layers, classes).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    scale = torch.tensor([span, 12.0, 6.0], device="cuda")

    def batch(b, n, t):
        real = torch.randint(max(4, n // 3), n + 1, (b, 1), device="cuda")
        nmask = (torch.arange(n, device="cuda")[None] < real).float()
        pos = torch.rand(b, n, 3, device="cuda") * scale
        dmg = torch.randint(0, classes, (b,), device="cuda")
        loc = torch.rand(b, 1, 3, device="cuda") * scale
        near = ((pos - loc).norm(dim=-1) < 18.0).float() * (dmg > 0).float()[:, None] * nmask
        sev = dmg.float() / (classes - 1) + 0.05 * torch.randn(b, device="cuda")
        tt = torch.arange(t, device="cuda").float() / 256.0
        freqs = (torch.rand(b, 1, 1, 3, device="cuda") * 8 + 1) * (1 - 0.04 * dmg.float())[:, None, None, None]
        x = 0.3 * torch.randn(b, n, 3, t, device="cuda")
        for m in range(3):
            phase = torch.rand(b, n, 3, 1, device="cuda") * (2 * math.pi)
            amp = torch.randn(b, n, 3, 1, device="cuda") / (m + 1)
            x = x + amp * torch.sin(2 * math.pi * freqs[..., m:m + 1] * tt + phase)
        x = x * nmask[..., None, None]
        spec = torch.fft.rfft(x, dim=-1).abs()[..., 1:]
        spec = torch.log1p(spec.view(b, n, 3, nbands, -1).mean(-1)).flatten(2)
        return x, spec, pos, nmask, dmg, sev, near

    steps = _smoke(400, 3)
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = 3e-4 * min(1.0, (step + 1) / 25) * 0.5 * (1 + math.cos(math.pi * step / steps))
        model.train()
        b = randint(rng, _smoke(8, 2), _smoke(16, 4), _smoke(4, 2))
        n = randint(rng, _smoke(24, 8), _smoke(96, 16), 8)
        t = rng.choice(lengths)
        x, spec, pos, nmask, dmg, sev, near = batch(b, n, t)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits, sev_hat, node = model(x, spec, pos, nmask, span)
        bce = _F.binary_cross_entropy_with_logits(node, near, pos_weight=torch.full_like(near, 3.0),
                                                  reduction="none")
        loss = _F.cross_entropy(logits, dmg) + _F.smooth_l1_loss(sev_hat, sev) \
            + (bce * nmask).sum() / nmask.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.item()
        del x, spec, pos, nmask, dmg, sev, near, logits, sev_hat, node, bce, loss
        if (step + 1) % _smoke(100, 2) == 0:
            model.eval()
            acc, tp, fp, fn = [], [], [], []
            with torch.no_grad():
                for _ in range(_smoke(4, 1)):
                    x, spec, pos, nmask, dmg, sev, near = batch(_smoke(16, 2), _smoke(64, 8), rng.choice(lengths))
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        logits, sev_hat, node = model(x, spec, pos, nmask, span)
                    pred = (node > 0).float() * nmask
                    acc.append((logits.argmax(-1) == dmg).float().mean())
                    tp.append((pred * near).sum())
                    fp.append((pred * (1 - near)).sum())
                    fn.append(((1 - pred) * near).sum())
                    del x, spec, pos, nmask, dmg, sev, near, logits, sev_hat, node, pred
                tps, fps, fns = torch.stack(tp).sum(), torch.stack(fp).sum(), torch.stack(fn).sum()
                metrics = torch.stack([torch.stack(acc).mean(), 2 * tps / (2 * tps + fps + fns).clamp(min=1)])
            metrics.tolist()
            del acc, tp, fp, fn, tps, fps, fns, metrics


# ---------------------------------------------------------------- concrete crack segmentation


def _double_conv(cin, cout):
    return _nn.Sequential(_nn.Conv2d(cin, cout, 3, 1, 1, bias=False), _nn.BatchNorm2d(cout), _nn.ReLU(inplace=True),
                          _nn.Conv2d(cout, cout, 3, 1, 1, bias=False), _nn.BatchNorm2d(cout), _nn.ReLU(inplace=True))


class _UNet(_nn.Module):
    def __init__(self, widths):
        super().__init__()
        self.downs, cin = _nn.ModuleList(), 3
        for w in widths:
            self.downs.append(_double_conv(cin, w))
            cin = w
        self.upconvs, self.ups = _nn.ModuleList(), _nn.ModuleList()
        for w in reversed(widths[:-1]):
            self.upconvs.append(_nn.ConvTranspose2d(cin, w, 2, 2))
            self.ups.append(_double_conv(2 * w, w))
            cin = w
        self.head = _nn.Conv2d(cin, 1, 1)

    def forward(self, x):
        skips = []
        for i, blk in enumerate(self.downs):
            x = blk(x if i == 0 else _F.max_pool2d(x, 2))
            skips.append(x)
        for up, blk, s in zip(self.upconvs, self.ups, reversed(skips[:-1])):
            x = blk(torch.cat([up(x), s], 1))
        return self.head(x)


@_workload("concrete crack segmentation training (random init, a U-Net): patches of inspection photos at 256, 320, 384, 448 or 512 pixels (drawn per step), 4-16 patches a step (drawn) cut to a budget of four 512-pixel patches, thin crack masks drawn on the device as level sets of upsampled smooth noise (about 3-6% of pixels) over a noisy grey concrete texture with crack darkening and stains; a 5-level U-Net (32-512 channels, transposed-convolution upsampling, skip concatenation, batch norm) in channels_last under bf16 autocast, binary cross-entropy with a positive weight of 8 plus soft Dice; AdamW with a one-cycle schedule, 720 steps; the loss read back every 20 steps and every 180 steps an evaluation of 3 batches of 4 512-pixel patches with IoU, precision, recall and F1 at 0.5 read back")
def concrete_crack_unet_train(rng):
    widths = _smoke([32, 64, 128, 256, 512], [4, 8, 16])
    sizes = _smoke([256, 320, 384, 448, 512], [32, 48])
    budget = _smoke(4 * 512 * 512, 4 * 48 * 48)
    model = _UNet(widths).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)

    def batch(b, r):
        noise = _F.interpolate(torch.randn(b, 1, r // 16, r // 16, device="cuda"), size=(r, r), mode="bilinear",
                               align_corners=False)
        crack = (noise.abs() < 0.04).float()
        stain = _F.avg_pool2d(torch.rand(b, 1, r // 8, r // 8, device="cuda"), 3, 1, 1)
        stain = _F.interpolate(stain, size=(r, r), mode="nearest")
        grey = 0.55 + 0.08 * torch.randn(b, 3, r, r, device="cuda") - 0.15 * stain
        img = grey * (1 - 0.6 * crack) + 0.03 * torch.randn(b, 1, r, r, device="cuda")
        img = ((img - 0.5) / 0.25).contiguous(memory_format=torch.channels_last)
        return img, crack

    steps = _smoke(720, 3)
    pw = torch.tensor([8.0], device="cuda")
    for step in range(steps):
        frac = step / steps
        for g in opt.param_groups:
            g["lr"] = 1e-3 * (frac / 0.3 if frac < 0.3 else 0.5 * (1 + math.cos(math.pi * (frac - 0.3) / 0.7)))
        model.train()
        r = rng.choice(sizes)
        b = max(1, min(rng.randint(_smoke(4, 1), _smoke(16, 4)), budget // (r * r)))
        img, crack = batch(b, r)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(img).float()
        p = torch.sigmoid(logits)
        dice = 1 - (2 * (p * crack).sum((1, 2, 3)) + 1) / (p.sum((1, 2, 3)) + crack.sum((1, 2, 3)) + 1)
        loss = _F.binary_cross_entropy_with_logits(logits, crack, pos_weight=pw) + dice.mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 20 == 0:
            loss.item()
        del img, crack, logits, p, dice, loss
        if (step + 1) % _smoke(180, 2) == 0:
            model.eval()
            tp, fp, fn = [], [], []
            with torch.no_grad():
                for _ in range(_smoke(3, 1)):
                    img, crack = batch(_smoke(4, 2), max(sizes))
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        pred = (model(img).float() > 0).float()
                    tp.append((pred * crack).sum())
                    fp.append((pred * (1 - crack)).sum())
                    fn.append(((1 - pred) * crack).sum())
                    del img, crack, pred
                t, f, n = torch.stack(tp).sum(), torch.stack(fp).sum(), torch.stack(fn).sum()
                prec, rec = t / (t + f).clamp(min=1), t / (t + n).clamp(min=1)
                metrics = torch.stack([t / (t + f + n).clamp(min=1), prec, rec, 2 * prec * rec / (prec + rec + 1e-6)])
            metrics.tolist()
            del tp, fp, fn, t, f, n, prec, rec, metrics


# ---------------------------------------------------------------- construction-site safety detection service


def _cbr(cin, cout, stride=1):
    return _nn.Sequential(_nn.Conv2d(cin, cout, 3, stride, 1, bias=False), _nn.BatchNorm2d(cout), _nn.ReLU())


class _ResStage(_nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.down = _cbr(cin, cout, 2)
        self.c1 = _cbr(cout, cout)
        self.c2 = _nn.Sequential(_nn.Conv2d(cout, cout, 3, 1, 1, bias=False), _nn.BatchNorm2d(cout))

    def forward(self, x):
        x = self.down(x)
        return _F.relu(x + self.c2(self.c1(x)))


class _SiteDetector(_nn.Module):
    """A CenterNet-style detector: a residual trunk, a top-down pyramid to stride 8, heatmap, size and offset heads."""

    def __init__(self, widths, fpn, classes):
        super().__init__()
        self.stem = _cbr(3, widths[0], 2)
        self.stages = _nn.ModuleList()
        cin = widths[0]
        for w in widths[1:]:
            self.stages.append(_ResStage(cin, w))
            cin = w
        self.lat = _nn.ModuleList(_nn.Conv2d(w, fpn, 1) for w in widths[-3:])
        self.smooth = _cbr(fpn, fpn)

        def head(out):
            return _nn.Sequential(_nn.Conv2d(fpn, fpn, 3, 1, 1), _nn.ReLU(), _nn.Conv2d(fpn, out, 1))

        self.heat, self.size, self.off = head(classes), head(2), head(2)

    def forward(self, x):
        x = self.stem(x)
        feats = []
        for s in self.stages:
            x = s(x)
            feats.append(x)
        p = self.lat[2](feats[-1])
        for lat, f in zip((self.lat[1], self.lat[0]), (feats[-2], feats[-3])):
            p = lat(f) + _F.interpolate(p, scale_factor=2.0, mode="nearest")
        p = self.smooth(p)
        return self.heat(p).float(), self.size(p).float(), self.off(p).float()


@_workload("construction-site safety detection service (random init): 1,600-1,700 requests (drawn) of 1-8 camera frames (log-uniform) at 384x640, 448x768 or 544x960 (drawn), the uint8 pixels of each request uploaded on a side stream from two reused pinned host buffers one request ahead (waited on by event, record_stream'ed); normalisation on the device, a CenterNet-style detector (a residual trunk of 32-256 channels to stride 32, a top-down feature pyramid of 128 channels to stride 8, heatmap heads for 6 classes: worker, hard hat, bare head, safety vest, excavator, crane; box size and offset heads) in channels_last under bf16 autocast with eval-mode batch norm; peaks by 3x3 max pooling and the top 100 per frame, boxes gathered, hard-hat compliance of each worker by pairwise distances from the worker's head point to hard-hat and bare-head centres, machinery proximity alerts by distances between workers and excavators or cranes scaled by the machine's size, all masked by score thresholds; each request's top boxes, per-frame worker, violation and alert counts read back")
def site_safety_detect_serve(rng):
    widths, fpn, classes, k = _smoke([32, 64, 128, 256, 256], [4, 8, 8, 16, 16]), _smoke(128, 8), 6, _smoke(100, 8)
    model = _SiteDetector(widths, fpn, classes).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1) * 255
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1) * 255
    maxb, shapes = _smoke(8, 3), _smoke([(384, 640), (448, 768), (544, 960)], [(64, 96), (96, 128)])
    maxpix = max(h * w for h, w in shapes)
    host = [torch.randint(0, 256, (maxb * 3 * maxpix,), dtype=torch.uint8).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    nreq = rng.randint(_smoke(1600, 3), _smoke(1700, 4))
    plan = [(_loguniform(rng, 1, maxb), rng.choice(shapes)) for _ in range(nreq)]

    def span(i):
        b, (h, w) = plan[i]
        return slice(0, b * 3 * h * w)

    nxt = up.upload(0, span(0))
    for i in range(nreq):
        b, (h, w) = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, span(i + 1))
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            x = ((raw.view(b, 3, h, w).float() - mean) / std).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                heat, size, off = model(x)
            fh, fw = heat.shape[2], heat.shape[3]
            hm = torch.sigmoid(heat)
            hm = hm * (_F.max_pool2d(hm, 3, 1, 1) == hm).float()
            scores, idx = hm.flatten(1).topk(k, -1)
            cls, pix = idx // (fh * fw), idx % (fh * fw)
            ys, xs = (pix // fw).float(), (pix % fw).float()
            o = off.flatten(2).gather(2, pix[:, None].expand(b, 2, k))
            wh = size.flatten(2).gather(2, pix[:, None].expand(b, 2, k)).exp() * 4
            cx, cy = (xs + o[:, 0]) * 8, (ys + o[:, 1]) * 8
            bw, bh = wh[:, 0] * 8, wh[:, 1] * 8
            boxes = torch.stack([cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2], -1)
            valid = (scores > 0.3).float()
            worker = (cls == 0).float() * valid
            hat = (cls == 1).float() * valid
            bare = (cls == 2).float() * valid
            machine = ((cls == 4) | (cls == 5)).float() * valid
            head = torch.stack([cx, cy - 0.35 * bh], -1)
            ctr = torch.stack([cx, cy], -1)
            dist = torch.cdist(head, ctr)
            near = (dist < (0.5 * bw)[:, :, None]).float()
            covered = (near * hat[:, None]).amax(-1)
            bare_near = (near * bare[:, None]).amax(-1)
            violation = worker * torch.maximum(1 - covered, bare_near)
            reach = 0.75 * torch.maximum(bw, bh)[:, None, :] + 40.0
            close = (torch.cdist(ctr, ctr) < reach).float() * machine[:, None]
            alert = worker * close.amax(-1)
            counts = torch.stack([worker.sum(1), violation.sum(1), alert.sum(1), machine.sum(1)], -1)
            top = torch.cat([boxes[:, :20], scores[:, :20, None], cls[:, :20, None].float(),
                             violation[:, :20, None], alert[:, :20, None]], -1)
        counts.tolist()
        top.tolist()
        del item, raw, x, heat, size, off, hm, scores, idx, cls, pix, ys, xs, o, wh, cx, cy, bw, bh, boxes, valid
        del worker, hat, bare, machine, head, ctr, dist, near, covered, bare_near, violation, reach, close, alert
        del counts, top


# ---------------------------------------------------------------- bridge deck finite-element surrogate


def _deck_edges(nx, ny, b):
    """Directed edges (2, E) of b triangulated nx x ny grids (each quad split by one diagonal) batched as one graph."""
    idx = torch.arange(nx * ny, device="cuda").view(nx, ny)
    und = torch.cat([torch.stack([idx[:-1].flatten(), idx[1:].flatten()]),
                     torch.stack([idx[:, :-1].flatten(), idx[:, 1:].flatten()]),
                     torch.stack([idx[:-1, :-1].flatten(), idx[1:, 1:].flatten()])], 1)
    e = torch.cat([und, und.flip(0)], 1)
    off = (torch.arange(b, device="cuda") * (nx * ny))[:, None, None]
    return (e[None] + off).permute(1, 0, 2).reshape(2, -1)


class _MeshGN(_nn.Module):
    def __init__(self, nin, ein, d, steps, nout):
        super().__init__()
        self.node_enc = mlp(nin, d, d, layers=2, act=_nn.SiLU, norm=True)
        self.edge_enc = mlp(ein, d, d, layers=2, act=_nn.SiLU, norm=True)
        self.edge_mlps = _nn.ModuleList(mlp(3 * d, d, d, layers=2, act=_nn.SiLU, norm=True) for _ in range(steps))
        self.node_mlps = _nn.ModuleList(mlp(2 * d, d, d, layers=2, act=_nn.SiLU, norm=True) for _ in range(steps))
        self.dec = mlp(d, d, nout, layers=2, act=_nn.SiLU)

    def forward(self, nodes, edges, src, dst):
        h, e = self.node_enc(nodes), self.edge_enc(edges)
        for em, nm in zip(self.edge_mlps, self.node_mlps):
            e = e + em(torch.cat([e, h[src], h[dst]], -1))
            agg = torch.zeros(h.shape[0], e.shape[1], device=h.device, dtype=e.dtype).index_add_(0, dst, e)
            h = h + nm(torch.cat([h, agg.to(h.dtype)], -1))
        return self.dec(h).float()


@_workload("MeshGraphNet-style finite-element surrogate training for bridge decks under traffic loads (random init): deck meshes of 60-160 x 12-40 nodes (drawn per step; a 20-60 m span by 8-16 m width, 1-3 spans with pier lines as supports), 1-8 meshes a step (drawn, cut to 16,000 nodes) batched as one graph with triangulated directed edges, 1-12 vehicles per deck (drawn per step, the real count per deck drawn and masked) of 2-5 axles with drawn loads as Gaussian pressures at the nodes; targets (deflection and a stress proxy from edge differences by index_add) from 40 Jacobi iterations of a plate-like Poisson problem on the mesh graph with the supports held at zero (fp32, no grad); node and edge encoders, 8 processor steps of edge updates over gathered endpoint states and node updates over index_add aggregation (width 128, LayerNorm MLPs), a decoder; normalised MSE over the free nodes, Adam with cosine decay, clipping, bf16 autocast, 280 steps; the loss read back every 20 steps and every 70 steps an evaluation of 2 meshes with the relative L2 errors read back")
def bridge_mesh_fe_surrogate_train(rng):
    d, psteps, jacobi = _smoke(128, 16), _smoke(8, 2), _smoke(40, 4)
    maxveh, budget = _smoke(12, 3), _smoke(16_000, 400)
    model = _MeshGN(8, 3, d, psteps, 2).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def batch(b, nx, ny):
        n = nx * ny
        length, width = rng.uniform(20.0, 60.0), rng.uniform(8.0, 16.0)
        spans = rng.randint(1, 3)
        ex = _deck_edges(nx, ny, b)
        src, dst = ex[0], ex[1]
        gx = torch.arange(nx, device="cuda").float()[:, None].expand(nx, ny) / (nx - 1) * length
        gy = torch.arange(ny, device="cuda").float()[None, :].expand(nx, ny) / (ny - 1) * width
        xy = torch.stack([gx, gy], -1).reshape(1, n, 2).expand(b, n, 2)
        piers = torch.tensor([length * j / spans for j in range(spans + 1)], device="cuda")
        support = ((xy[..., :1] - piers).abs().amin(-1) < 0.6 * length / nx).float()
        thick = 0.2 + 0.15 * torch.rand(b, 1, device="cuda")
        stiff = 0.8 + 0.4 * torch.rand(b, 1, device="cuda")
        nveh = torch.randint(1, maxveh + 1, (b, 1), device="cuda")
        vmask = (torch.arange(maxveh, device="cuda")[None] < nveh).float()
        axles = rng.randint(2, 5)
        vpos = torch.rand(b, maxveh, 1, 2, device="cuda") * torch.tensor([length, width], device="cuda")
        apos = vpos + torch.stack([torch.arange(axles, device="cuda").float() * 1.4,
                                   torch.zeros(axles, device="cuda")], -1)
        aload = (torch.rand(b, maxveh, axles, device="cuda") * 90 + 30) * vmask[..., None]
        d2 = (xy[:, :, None, :] - apos.view(b, 1, -1, 2)).pow(2).sum(-1)
        load = (torch.exp(-d2 / 1.5) * aload.view(b, 1, -1)).sum(-1) / 100.0
        free = (1 - support).reshape(-1)
        deg = torch.zeros(b * n, device="cuda").index_add_(0, dst, torch.ones_like(dst, dtype=torch.float))
        f = (load / (thick ** 3 * stiff)).reshape(-1)
        with torch.no_grad():
            u = torch.zeros(b * n, device="cuda")
            for _ in range(jacobi):
                u = (torch.zeros_like(u).index_add_(0, dst, u[src]) + f) / deg * free
            du = u[dst] - u[src]
            stress = torch.zeros_like(u).index_add_(0, dst, du * du).div(deg).sqrt() * thick.expand(b, n).reshape(-1)
        target = torch.stack([u, stress], -1)
        target = (target - target.mean(0)) / target.std(0).clamp(min=1e-6)
        nodes = torch.cat([xy / length, support[..., None], thick[:, None].expand(b, n, 1),
                           stiff[:, None].expand(b, n, 1), load[..., None], torch.sin(math.pi * xy / length)],
                          -1).reshape(b * n, -1)
        rel = xy.reshape(-1, 2)[dst] - xy.reshape(-1, 2)[src]
        edges = torch.cat([rel, rel.norm(dim=-1, keepdim=True)], -1) / (length / nx)
        return nodes, edges, src, dst, target, free

    steps = _smoke(280, 3)
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = 1e-3 * min(1.0, (step + 1) / 20) * 0.5 * (1 + math.cos(math.pi * step / steps))
        model.train()
        nx, ny = rng.randint(_smoke(60, 6), _smoke(160, 12)), rng.randint(_smoke(12, 4), _smoke(40, 8))
        b = max(1, min(rng.randint(1, 8), budget // (nx * ny)))
        nodes, edges, src, dst, target, free = batch(b, nx, ny)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(nodes, edges, src, dst)
        loss = (((pred - target) ** 2).sum(-1) * free).sum() / free.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.item()
        del nodes, edges, src, dst, target, free, pred, loss
        if (step + 1) % _smoke(70, 2) == 0:
            model.eval()
            with torch.no_grad():
                nodes, edges, src, dst, target, free = batch(2, _smoke(120, 8), _smoke(24, 6))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pred = model(nodes, edges, src, dst)
                err = (((pred - target) ** 2 * free[:, None]).sum(0) / ((target ** 2) * free[:, None]).sum(0)).sqrt()
            err.tolist()
            del nodes, edges, src, dst, target, free, pred, err

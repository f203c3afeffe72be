"""The fifty-eighth batch of held-out workloads for record.py, second half (batch58.py has the first): agriculture,
ecology and Earth observation on the GPU, written in torch alone. A camera-trap service (bursts of 3-10 frames of
drawn resolution uploaded as uint8 from reused pinned host buffers on a side stream one burst ahead; an anchor-free
animal detector of the MegaDetector kind over the frames, the top detections of every frame cropped by grid_sample
from affine grids and classified into 200 species by a second CNN, scores pooled over the burst and read back),
canopy-height and tree-crown estimation from aerial RGB-NIR tiles (a forest scene made on the device from tree tops
splatted and blurred by crown-size kernels, a UNet regressing the canopy height model under lidar-gap masks and a
crown-centre heatmap; a large mosaic predicted in overlapping tiles with feathered blending), SAR flood mapping by
change detection (Sentinel-1-like VV and VH pairs before and after a flood with multiplicative speckle, a Lee filter
and the log-ratio on the device, a Siamese encoder with feature differences at every scale and a decoder, BCE and
Dice, tiles of drawn size; IoU over held-out scenes), and animal re-identification (individuals with coat patterns
made on the device and rendered with drawn poses and lighting, a CNN embedding trained with an additive angular
margin and batch-hard triplets over P x K batches; a gallery of sightings enrolled batch by batch that grows through
the run, queried by chunked similarity with top-k, rank-1 accuracy read back). Same conventions as the earlier
batches: nothing downloaded, data drawn at random on the device (or, for the camera-trap service, from a few reused
pinned host buffers), `rng` the workload's random.Random for every shape, count and sampled choice, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: counts are fixed
on the host (detections per frame, enrolments), masks multiplied in, no boolean-mask indexing; losses, IoUs and
scores are read back only at logging points (the service returns each burst's results, as a service must).
camtrap_burst_detect_serve uses a side stream (uploads waited on by event, the tensors record_stream'ed); the others
are single-stream. The CNNs run under bf16 autocast; the scene synthesis, the speckle filtering, the blending, the
margins and the losses are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch58.py's header says the same of its half): see record_new58.sh's header
for each workload's op outputs and peak live bytes counted on PyTorch's meta device with the helper's runner
(/tmp/b58/meta_run.py, not committed, a copy of /work/notes/meta_run.py: smoke_cpu.py's patching with "cuda" mapped
to "meta", readbacks answered with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking a math
path, streams, events and pinned memory no-ops; boolean-mask indexing, which the meta device cannot size, is
avoided; events about 1.8x the op outputs). Two of this half were run whole at their final real sizes:
camtrap_burst_detect_serve 313,494 op outputs, peak 0.58 GB; wildlife_reid_gallery_train 313,797, 2.11 GB. Two were
run in part at their final sizes and their counts extrapolated, as the helper's deadline (45 minutes to write and
check all eight, on two shared cores) did not allow whole runs: canopy_height_unet_train through 152 of its 500
steps, its first mosaic evaluation included (86,920 op outputs, about 555 a training step and 2,300 an evaluation, so
about 287,000), peak 3.27 GB there; sar_flood_change_siamese_train through 143 of its 540 steps, its first evaluation
included (83,252, about 570 a step, so about 310,000), peak 0.75 GB there (peaks in fp32 where autocast would take
bf16). record_new58.sh's header has them too. The CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _cbr(cin, cout, stride=1, k=3):
    return _nn.Sequential(_nn.Conv2d(cin, cout, k, stride, k // 2, bias=False), _nn.BatchNorm2d(cout),
                          _nn.ReLU(inplace=True))


def _smooth_noise(b, c, h, w, scale):
    hh, ww = max(2, h // scale), max(2, w // scale)
    return _F.interpolate(torch.randn(b, c, hh, ww, device="cuda"), size=(h, w), mode="bilinear",
                          align_corners=False)


class _Backbone(_nn.Module):
    """A small ResNet-like trunk: stride 2 stem, stages at strides 4, 8, 16 (and 32), features of each stage."""

    def __init__(self, cin, widths):
        super().__init__()
        self.stem = _cbr(cin, widths[0], 2)
        stages, c = [], widths[0]
        for w in widths:
            stages.append(_nn.Sequential(_cbr(c, w, 2), _cbr(w, w)))
            c = w
        self.stages = _nn.ModuleList(stages)

    def forward(self, x):
        feats, h = [], self.stem(x)
        for st in self.stages:
            h = st(h)
            feats.append(h)
        return feats


# ---------------------------------------------------------------- camera-trap burst detection and species service


class _Detector(_nn.Module):
    """Anchor-free detector at stride 16: a trunk, a top-down merge of strides 16 and 32, objectness, class-agnostic
    box (l, t, r, b) regression and centre-ness."""

    def __init__(self, widths):
        super().__init__()
        self.trunk = _Backbone(3, widths)
        self.lat = _nn.Conv2d(widths[-2], 128, 1)
        self.top = _nn.Conv2d(widths[-1], 128, 1)
        self.tower = _nn.Sequential(_cbr(128, 128), _cbr(128, 128))
        self.obj, self.box = _nn.Conv2d(128, 2, 3, 1, 1), _nn.Conv2d(128, 4, 3, 1, 1)

    def forward(self, x):
        f = self.trunk(x)
        p = self.lat(f[-2]) + _F.interpolate(self.top(f[-1]), size=f[-2].shape[-2:], mode="nearest")
        t = self.tower(p)
        return self.obj(t), _F.softplus(self.box(t))


@_workload("camera-trap burst service written by hand (random-init CNNs, eval mode, bf16 autocast): 1,750 bursts of 3-10 frames (drawn) from camera models of drawn resolution (384 x 512, 480 x 640, 576 x 768, 720 x 960), uploaded as uint8 from reused pinned host buffers on a side stream one burst ahead (waited on by event, record_stream'ed), normalised on the device; an anchor-free animal detector (ResNet-like trunk, widths 32-256, strides 16 and 32 merged, objectness, person/vehicle-vs-animal, ltrb boxes) with 3x3 max-pool peak picking and the top 12 peaks of every frame decoded to boxes; each box cropped to 160^2 by grid_sample on an affine grid and classified into 200 species by a second CNN (widths 32-256); species scores weighted by objectness and pooled over the burst (max and noisy-OR), the burst's top 5 species, empty-burst probability and the boxes read back")
def camtrap_burst_detect_serve(rng):
    det = _Detector(_smoke([32, 64, 128, 256], [8, 8, 16, 16])).cuda().eval().requires_grad_(False)
    cls_trunk = _Backbone(3, _smoke([32, 64, 128, 256], [8, 16])).cuda().eval().requires_grad_(False)
    nsp = _smoke(200, 10)
    cls_head = _nn.Linear(_smoke(256, 16), nsp).cuda().eval().requires_grad_(False)
    res = _smoke([(384, 512), (480, 640), (576, 768), (720, 960)], [(64, 96), (96, 128)])
    fmax = _smoke(10, 3)
    hmax = max(h * w for h, w in res)
    host = [torch.randint(0, 256, (fmax * 3 * hmax,), dtype=torch.uint8).pin_memory() for _ in range(2)]
    mean = torch.tensor([0.45, 0.45, 0.42], device="cuda")[:, None, None] * 255
    std = torch.tensor([0.25, 0.25, 0.25], device="cuda")[:, None, None] * 255
    side = torch.cuda.Stream()
    done = [None, None]
    ktop, crop = _smoke(12, 3), _smoke(160, 32)
    nreq = _smoke(1750, 3)

    def fetch(i):
        f, (h, w) = rng.randint(_smoke(3, 2), fmax), rng.choice(res)
        s = i % 2
        if done[s] is not None:
            done[s].synchronize()
        with torch.cuda.stream(side):
            x = host[s][:f * 3 * h * w].view(f, 3, h, w).to("cuda", non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        done[s] = ev
        return x, ev

    nxt = fetch(0)
    for req in range(nreq):
        raw, ev = nxt
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        raw.record_stream(cur)
        if req + 1 < nreq:
            nxt = fetch(req + 1)
        with torch.no_grad():
            f, _, h, w = raw.shape
            x = (raw.float() - mean) / std
            with torch.autocast("cuda", dtype=torch.bfloat16):
                obj, box = det(x)
            obj, box = obj.float(), box.float()
            heat = torch.sigmoid(obj[:, 0])
            animal = torch.sigmoid(obj[:, 1])
            peak = heat * (heat == _F.max_pool2d(heat[:, None], 3, 1, 1)[:, 0]).float()
            gh, gw = heat.shape[-2:]
            score, idx = peak.flatten(1).topk(ktop, -1)  # (f, k)
            cy = (idx // gw).float() + 0.5
            cx = (idx % gw).float() + 0.5
            ltrb = box.flatten(2).gather(2, idx[:, None].expand(-1, 4, -1)) * 4  # (f, 4, k) in cells
            x0, y0 = (cx - ltrb[:, 0]) / gw, (cy - ltrb[:, 1]) / gh
            x1, y1 = (cx + ltrb[:, 2]) / gw, (cy + ltrb[:, 3]) / gh
            boxes = torch.stack([x0, y0, x1, y1], -1).clamp(0, 1)  # (f, k, 4) normalised
            # affine grids for the crops: theta maps the output square to the box in [-1, 1] coordinates
            sx, sy = (boxes[..., 2] - boxes[..., 0]).clamp_min(0.02), (boxes[..., 3] - boxes[..., 1]).clamp_min(0.02)
            tx, ty = boxes[..., 0] + boxes[..., 2] - 1, boxes[..., 1] + boxes[..., 3] - 1
            z = torch.zeros_like(sx)
            theta = torch.stack([torch.stack([sx, z, tx], -1), torch.stack([z, sy, ty], -1)], -2).flatten(0, 1)
            grid = _F.affine_grid(theta, (f * ktop, 3, crop, crop), align_corners=False).view(f, ktop * crop, crop, 2)
            crops = _F.grid_sample(x, grid, align_corners=False).view(f, 3, ktop, crop, crop).transpose(1, 2)
            crops = crops.reshape(f * ktop, 3, crop, crop)  # each frame's crops stacked, sampled from the frame once
            with torch.autocast("cuda", dtype=torch.bfloat16):
                feat = cls_trunk(crops)[-1].mean((2, 3))
                sp = torch.softmax(cls_head(feat).float(), -1).view(f, ktop, nsp)
            ai = animal.flatten(1).gather(1, idx)
            wsp = sp * (score * ai)[..., None]
            burst_max = wsp.amax((0, 1))
            noisy_or = 1 - torch.exp(torch.log1p(-wsp.clamp(max=0.999)).sum((0, 1)))
            top, which = (burst_max + noisy_or).topk(5)
            empty = torch.exp(torch.log1p(-(score * ai).clamp(max=0.999)).sum())
            torch.cat([top, which.float(), empty[None], boxes.flatten()]).cpu()
        del raw, x, obj, box, crops, grid


# ---------------------------------------------------------------- canopy height and tree crowns from aerial tiles


def _gauss_kernel(sigma, size):
    r = torch.arange(size, device="cuda", dtype=torch.float32) - size // 2
    g = torch.exp(-r * r / (2 * sigma * sigma))
    k = g[:, None] * g[None]
    return k / k.max()


def _forest(b, h, w, kernels, density):
    """b aerial tiles of a forest: tree tops (Bernoulli per pixel at a drawn density, heights drawn) splatted per
    crown-size class and blurred by that class's kernel, the canopy height model their max; RGB-NIR from the
    height (shading from its gradient, NIR high on canopy), lidar gaps, the crown-centre heatmap."""
    chm = torch.zeros(b, 1, h, w, device="cuda")
    tops = torch.zeros(b, 1, h, w, device="cuda")
    for kern in kernels:
        seeds = (torch.rand(b, 1, h, w, device="cuda") < density).float()
        hgt = seeds * (5 + 30 * torch.rand(b, 1, h, w, device="cuda"))
        crown = _F.conv2d(hgt, kern[None, None], padding=kern.shape[-1] // 2)
        chm = torch.maximum(chm, crown.clamp_max(40))
        tops = tops + seeds
    dx = chm[..., :, 1:] - chm[..., :, :-1]
    shade = torch.sigmoid(-_F.pad(dx, (0, 1)) * 0.5)
    veg = torch.sigmoid(chm - 2)
    ground = _smooth_noise(b, 1, h, w, 32)
    rgb = torch.cat([0.3 - 0.15 * veg + 0.05 * ground, 0.35 + 0.05 * veg, 0.25 - 0.1 * veg], 1) * (0.6 + 0.4 * shade)
    nir = 0.2 + 0.5 * veg * (0.7 + 0.3 * shade)
    img = torch.cat([rgb, nir], 1) + 0.02 * torch.randn(b, 4, h, w, device="cuda")
    valid = (_smooth_noise(b, 1, h, w, 64) > -1.2).float()  # lidar coverage
    heat = _F.max_pool2d(_F.conv2d(tops, _gauss_kernel(2.0, 9)[None, None], padding=4), 1)
    return img, chm, valid, heat.clamp_max(1)


class _UNet(_nn.Module):
    def __init__(self, cin, widths, cout):
        super().__init__()
        self.down = _nn.ModuleList()
        c = cin
        for w in widths:
            self.down.append(_nn.Sequential(_cbr(c, w), _cbr(w, w)))
            c = w
        self.up = _nn.ModuleList()
        for w in reversed(widths[:-1]):
            self.up.append(_nn.Sequential(_cbr(c + w, w), _cbr(w, w)))
            c = w
        self.out = _nn.Conv2d(c, cout, 1)

    def forward(self, x):
        skips = []
        for i, blk in enumerate(self.down):
            x = blk(x if i == 0 else _F.max_pool2d(x, 2))
            skips.append(x)
        for blk, s in zip(self.up, reversed(skips[:-1])):
            x = blk(torch.cat([_F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False), s], 1))
        return self.out(x)


@_workload("canopy-height and tree-crown estimation from aerial RGB-NIR tiles with a UNet written by hand (random init): forest tiles of 256^2-512^2 (drawn per batch, batches cut to a budget of 1.05M pixels, 4-16 tiles) made on the device (tree tops at a drawn density for 3 crown-size classes, heights drawn, splatted and blurred by Gaussian crown kernels, canopy height as their max; shading from the height gradient, NIR high on canopy, soil background, noise; lidar gaps as a smooth random mask); a 5-level UNet (widths 32-256) with two heads: canopy height (masked L1 over the lidar coverage) and crown-centre heatmap (focal BCE); bf16 autocast, AdamW with cosine decay, 500 steps; every 125 a 2,048^2 mosaic predicted in 512^2 tiles with 64-pixel overlap (feathered blending weights accumulated), height MAE and crown-count error read back")
def canopy_height_unet_train(rng):
    widths = _smoke([32, 64, 128, 192, 256], [8, 16, 16])
    model = _UNet(4, widths, 2).cuda()
    steps = _smoke(500, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    kernels = [_gauss_kernel(s, _smoke(2 * int(3 * s) + 1, 5)) for s in (2.0, 3.5, 5.0)]
    sizes = _smoke([256, 320, 384, 448, 512], [32, 48])
    budget = _smoke(1048576, 4096)

    def losses(out, chm, valid, heat):
        hl = ((out[:, 0:1] * 10 - chm).abs() * valid).sum() / valid.sum().clamp_min(1)
        p = torch.sigmoid(out[:, 1:2])
        pos = (heat > 0.9).float()
        focal = -(pos * (1 - p).pow(2) * torch.log(p + 1e-6) + (1 - pos) * (1 - heat).pow(4) * p.pow(2) *
                  torch.log(1 - p + 1e-6)).sum() / pos.sum().clamp_min(1)
        return hl, focal

    for step in range(steps):
        model.train()
        s = rng.choice(sizes)
        b = max(_smoke(4, 1), min(16, budget // (s * s)))
        with torch.no_grad():
            img, chm, valid, heat = _forest(b, s, s, kernels, rng.uniform(0.002, 0.008))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(img)
        hl, focal = losses(out.float(), chm, valid, heat)
        loss = hl + focal
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        del img, chm, valid, heat, out
        if (step + 1) % _smoke(125, 3) == 0:
            model.eval()
            big, tile, ov = _smoke(2048, 96), _smoke(512, 48), _smoke(64, 8)
            with torch.no_grad():
                img, chm, valid, heat = _forest(1, big, big, kernels, 0.005)
                acc = torch.zeros(1, 2, big, big, device="cuda")
                wsum = torch.zeros(1, 1, big, big, device="cuda")
                ramp = torch.minimum(torch.arange(tile, device="cuda") + 1, tile - torch.arange(tile, device="cuda"))
                ramp = (ramp.float() / ov).clamp_max(1)
                feather = (ramp[:, None] * ramp[None])[None, None]
                stride = tile - ov
                starts = list(range(0, big - tile + 1, stride))
                if starts[-1] != big - tile:
                    starts.append(big - tile)
                for y0 in starts:
                    for x0 in starts:
                        with torch.autocast("cuda", dtype=torch.bfloat16):
                            o = model(img[..., y0:y0 + tile, x0:x0 + tile]).float()
                        acc[..., y0:y0 + tile, x0:x0 + tile] += o * feather
                        wsum[..., y0:y0 + tile, x0:x0 + tile] += feather
                pred = acc / wsum
                mae = ((pred[:, 0:1] * 10 - chm).abs() * valid).sum() / valid.sum()
                hp = torch.sigmoid(pred[:, 1:2])
                npk = (hp * (hp == _F.max_pool2d(hp, 5, 1, 2)).float() > 0.5).float().sum()
                torch.stack([mae, npk, (heat > 0.9).float().sum()]).tolist()
                del acc, wsum, pred, img, chm
            float(loss)


# ---------------------------------------------------------------- SAR flood mapping by change detection


def _lee(x, k=7, looks=4.0):
    """The Lee speckle filter on intensity images (b, c, h, w): local mean and variance by box filters."""
    m = _F.avg_pool2d(x, k, 1, k // 2, count_include_pad=False)
    m2 = _F.avg_pool2d(x * x, k, 1, k // 2, count_include_pad=False)
    var = (m2 - m * m).clamp_min(0)
    cu2 = 1.0 / looks
    wgt = (1 - cu2 * m * m / (var + 1e-8)).clamp(0, 1)
    return m + wgt * (x - m)


def _sar_pair(b, h, w, looks):
    """Pre- and post-event SAR intensity pairs (VV, VH) with L-look speckle (the mean of L unit exponentials),
    terrain backscatter from smooth fields, the flood extent (smooth noise above a drawn level, outside permanent
    water) darkening the post image, and the change label."""
    terrain = _smooth_noise(b, 2, h, w, 16) * 0.3 + torch.tensor([-1.0, -1.7], device="cuda")[:, None, None]
    perm = (_smooth_noise(b, 1, h, w, 48) > 1.3).float()
    flood = (_smooth_noise(b, 1, h, w, 32) > 0.6).float() * (1 - perm)
    water = torch.tensor([-2.2, -2.8], device="cuda")[:, None, None]
    pre_db = terrain * (1 - perm) + water * perm
    post_db = pre_db * (1 - flood) + water * flood + 0.05 * _smooth_noise(b, 2, h, w, 8)

    def speckle():
        return -torch.log(torch.rand(int(looks), b, 2, h, w, device="cuda").clamp_min(1e-7)).mean(0)

    return (10 ** pre_db) * speckle(), (10 ** post_db) * speckle(), flood


class _SiameseChange(_nn.Module):
    def __init__(self, widths):
        super().__init__()
        self.enc = _Backbone(3, widths)
        self.fuse = _nn.ModuleList(_cbr(2 * w, w, k=1) for w in widths)
        self.dec = _nn.ModuleList(_cbr(widths[i] + widths[i - 1], widths[i - 1]) for i in range(len(widths) - 1, 0, -1))
        self.out = _nn.Conv2d(widths[0], 1, 1)

    def forward(self, pre, post):
        fa, fb = self.enc(pre), self.enc(post)
        fused = [f(torch.cat([b - a, (b - a).abs()], 1)) for f, a, b in zip(self.fuse, fa, fb)]
        h = fused[-1]
        for dec, skip in zip(self.dec, reversed(fused[:-1])):
            h = dec(torch.cat([_F.interpolate(h, size=skip.shape[-2:], mode="bilinear", align_corners=False),
                               skip], 1))
        return _F.interpolate(self.out(h), scale_factor=4, mode="bilinear", align_corners=False)


@_workload("SAR flood mapping by change detection with a Siamese network written by hand (random init): Sentinel-1-like pre- and post-event intensity pairs (VV and VH) made on the device (terrain backscatter from smooth fields, permanent water, the flood extent drawn as smooth noise above a level darkening the post image, 1-8 look speckle drawn per batch as means of unit exponentials), tiles of 256^2-768^2 (drawn per batch, batches cut to a budget of 1.6M pixels, 2-24 tiles); on the device a 7x7 Lee filter, dB conversion and the VV log-ratio as a third channel; a shared encoder (ResNet-like, widths 32-256, strides 4-32) over both dates, feature differences and absolute differences fused per scale, a UNet-style decoder; BCE plus Dice; bf16 autocast, AdamW with warm-up and cosine decay, 540 steps; every 135 an evaluation on 3 held-out 1,024^2 scenes without grad, IoU and F1 read back")
def sar_flood_change_siamese_train(rng):
    model = _SiameseChange(_smoke([32, 64, 128, 256], [8, 16])).cuda()
    steps, warm = _smoke(540, 3), _smoke(20, 1)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * 0.5 * (1 + math.cos(math.pi * s / steps)))
    sizes = _smoke([256, 384, 512, 640, 768], [32, 64])
    budget = _smoke(1600000, 8192)

    def prep(pre, post, looks):
        pre, post = _lee(pre, looks=looks), _lee(post, looks=looks)
        a = 10 * torch.log10(pre.clamp_min(1e-6))
        bb = 10 * torch.log10(post.clamp_min(1e-6))
        lr = bb[:, :1] - a[:, :1]
        return torch.cat([a / 20 + 1, lr / 10], 1), torch.cat([bb / 20 + 1, lr / 10], 1)

    for step in range(steps):
        model.train()
        s = rng.choice(sizes)
        b = max(_smoke(2, 1), min(24, budget // (s * s)))
        looks = rng.randint(1, 8)
        with torch.no_grad():
            pre, post, flood = _sar_pair(b, s, s, looks)
            xa, xb = prep(pre, post, looks)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logit = model(xa, xb)
        logit = logit.float()
        p = torch.sigmoid(logit)
        dice = 1 - (2 * (p * flood).sum() + 1) / (p.sum() + flood.sum() + 1)
        loss = _F.binary_cross_entropy_with_logits(logit, flood) + dice
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        del pre, post, flood, xa, xb, logit, p
        if (step + 1) % _smoke(135, 3) == 0:
            model.eval()
            stats = []
            with torch.no_grad():
                for _ in range(_smoke(3, 1)):
                    big = _smoke(1024, 64)
                    pre, post, flood = _sar_pair(1, big, big, 4)
                    xa, xb = prep(pre, post, 4)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        pred = (model(xa, xb).float() > 0).float()
                    inter = (pred * flood).sum()
                    union = pred.sum() + flood.sum() - inter
                    stats.append(torch.stack([inter / union.clamp_min(1), 2 * inter / (pred.sum() + flood.sum())]))
            torch.stack(stats).mean(0).tolist()
            float(loss)


# ---------------------------------------------------------------- animal re-identification with a growing gallery


def _render(ident_freq, ident_phase, ident_col, ids, h, w):
    """Sightings of individuals ids: a coat of stripes (sum of 4 oriented sinusoids with the individual's
    frequencies and phases) coloured by the individual, warped by a drawn affine pose, lit and noised."""
    n = ids.shape[0]
    dev = ids.device
    ys = torch.linspace(-1, 1, h, device=dev)
    xs = torch.linspace(-1, 1, w, device=dev)
    gy, gx = torch.meshgrid(ys, xs, indexing="ij")
    fr, ph = ident_freq[ids], ident_phase[ids]  # (n, 4, 2), (n, 4)
    arg = fr[..., 0, None, None] * gx + fr[..., 1, None, None] * gy + ph[..., None, None]
    coat = torch.sigmoid(4 * torch.sin(arg).sum(1, keepdim=True))  # (n, 1, h, w)
    img = coat * ident_col[ids][:, :, None, None] + (1 - coat) * 0.2
    ang = (torch.rand(n, device=dev) - 0.5) * 0.8
    sc = 0.8 + 0.4 * torch.rand(n, device=dev)
    tx, ty = 0.2 * torch.randn(n, device=dev), 0.2 * torch.randn(n, device=dev)
    theta = torch.stack([torch.stack([sc * ang.cos(), -sc * ang.sin(), tx], -1),
                         torch.stack([sc * ang.sin(), sc * ang.cos(), ty], -1)], 1)
    grid = _F.affine_grid(theta, (n, 3, h, w), align_corners=False)
    img = _F.grid_sample(img, grid, padding_mode="reflection", align_corners=False)
    light = 0.6 + 0.8 * torch.rand(n, 1, 1, 1, device=dev)
    return (img * light + 0.05 * torch.randn(n, 3, h, w, device=dev) - 0.45) / 0.25


class _ReidNet(_nn.Module):
    def __init__(self, widths, dim):
        super().__init__()
        self.trunk = _Backbone(3, widths)
        self.neck = _nn.Sequential(_nn.Linear(widths[-1] * 2, dim), _nn.BatchNorm1d(dim))

    def forward(self, x):
        f = self.trunk(x)[-1]
        gem = f.float().clamp_min(1e-6).pow(3).mean((2, 3)).pow(1 / 3)
        return self.neck(torch.cat([gem, f.float().amax((2, 3))], 1).to(f.dtype))


@_workload("animal re-identification with a growing gallery written by hand (random init): 3,000 training individuals and 1,500 held-out ones with coat patterns (4 oriented sinusoids, colours) made on the device and rendered per sighting with a drawn affine pose, lighting and noise at 128 x 256 or 160 x 320 (drawn per batch); a ResNet-like embedding network (widths 48-384, GeM and max pooling, 512-d BN neck) trained with an additive angular margin (ArcFace, s 30, m 0.4) over the training individuals plus a batch-hard triplet loss over P x K batches (P 16-48 individuals drawn, K 4); bf16 autocast, SGD with momentum and step decay, 950 steps; every 60 steps a batch of 256-768 sightings of held-out individuals enrolled into the gallery (embeddings and ids concatenated, growing to about 8,000) and 512 query sightings matched against it by chunked cosine similarity with top-10, rank-1 and rank-5 accuracy read back")
def wildlife_reid_gallery_train(rng):
    ntr, nho, dim = _smoke(3000, 40), _smoke(1500, 30), _smoke(512, 32)
    nall = ntr + nho
    freq = torch.randn(nall, 4, 2, device="cuda") * 6
    phase = torch.rand(nall, 4, device="cuda") * 2 * math.pi
    col = 0.4 + 0.6 * torch.rand(nall, 3, device="cuda")
    model = _ReidNet(_smoke([48, 96, 192, 384], [8, 16]), dim).cuda()
    arc_w = torch.nn.Parameter(torch.randn(ntr, dim, device="cuda") * 0.01)
    steps = _smoke(950, 4)
    opt = torch.optim.SGD(list(model.parameters()) + [arc_w], lr=0.05, momentum=0.9, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.StepLR(opt, _smoke(360, 2), 0.2)
    shapes = _smoke([(128, 256), (160, 320)], [(32, 64)])
    s_arc, m_arc = 30.0, 0.4
    g_emb = torch.zeros(0, dim, device="cuda")
    g_ids = torch.zeros(0, dtype=torch.long, device="cuda")
    for step in range(steps):
        model.train()
        p, k = rng.randint(_smoke(16, 2), _smoke(48, 4)), 4
        h, w = rng.choice(shapes)
        ids = torch.tensor(rng.sample(range(ntr), p), device="cuda").repeat_interleave(k)
        with torch.no_grad():
            x = _render(freq, phase, col, ids, h, w)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            emb = model(x)
        e = _F.normalize(emb.float(), dim=-1)
        cos = e @ _F.normalize(arc_w, dim=-1).t()
        oh = _F.one_hot(ids, ntr).float()
        theta = torch.acos(cos.clamp(-1 + 1e-6, 1 - 1e-6))
        arc = _F.cross_entropy(s_arc * (oh * torch.cos(theta + m_arc) + (1 - oh) * cos), ids)
        d = torch.cdist(e, e)
        same = (ids[:, None] == ids[None]).float()
        hard_pos = (d * same).amax(1)
        hard_neg = (d + same * 10).amin(1)
        trip = _F.relu(hard_pos - hard_neg + 0.3).mean()
        loss = arc + trip
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        del x, emb, e, cos, oh, theta, d
        if (step + 1) % _smoke(60, 2) == 0:
            model.eval()
            with torch.no_grad():
                nen = rng.randint(_smoke(256, 4), _smoke(768, 8))
                eids = torch.randint(ntr, nall, (nen,), device="cuda")
                parts = []
                for c0 in range(0, nen, 256):
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        parts.append(_F.normalize(model(_render(freq, phase, col, eids[c0:c0 + 256], *shapes[0]))
                                                  .float(), dim=-1))
                g_emb = torch.cat([g_emb] + parts)
                g_ids = torch.cat([g_ids, eids])
                hits = []
                for q0 in range(0, _smoke(512, 8), 256):
                    qids = torch.randint(ntr, nall, (_smoke(256, 4),), device="cuda")
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        q = _F.normalize(model(_render(freq, phase, col, qids, *shapes[0])).float(), dim=-1)
                    best, bidx = [], []
                    for c0 in range(0, g_emb.shape[0], 4096):
                        sim = q @ g_emb[c0:c0 + 4096].t()
                        v, i = sim.topk(min(10, sim.shape[1]), -1)
                        best.append(v)
                        bidx.append(i + c0)
                    v, j = torch.cat(best, 1).topk(min(10, g_emb.shape[0]), -1)
                    top_ids = g_ids[torch.cat(bidx, 1).gather(1, j)]
                    match = (top_ids == qids[:, None]).float()
                    hits.append(torch.stack([match[:, 0].mean(), match[:, :5].amax(1).mean()]))
                torch.stack(hits).mean(0).tolist()
            float(loss)

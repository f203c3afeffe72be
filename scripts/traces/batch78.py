"""The seventy-eighth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch77_b.py are): oceanography, marine science and fisheries, written in torch alone, first half. Sea-ice
segmentation of satellite radar swaths (a UNet over variable-size two-polarisation swath tiles with an incidence-angle
channel and a no-data margin, five ice classes, cross-entropy plus soft dice, per-class IoU at evaluation points), a
side-scan sonar object detection service (uint8 port and starboard waterfall strips of drawn ping counts uploaded on a
side stream, a CenterNet-style convolutional detector, peak picking by max pooling, top-k and a one-pass
non-maximum suppression by an IoU matrix, all without value-dependent control flow), long-tailed plankton image
classification (a ResNet-style CNN over grayscale images of drawn sizes, 1,000 classes drawn from a Zipf prior, a
logit-adjusted loss, balanced and head/tail accuracies at evaluation points) and fish re-identification for tracking
(a ResNet-style embedder over P x K batches of crops at drawn sizes, a BNNeck, batch-hard triplet and ArcFace losses,
rank-1 retrieval at evaluation points). Same conventions as the earlier batches: nothing downloaded, data drawn at
random on the device (or, for the sonar service, from two reused pinned host buffers), `rng` the workload's
random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1
runs are tiny. No control flow reads a tensor's value: batch sizes, tile sizes, strip lengths and top-k sizes are
fixed on the host, padding and no-data handled by masks multiplied in or by torch.where / masked_fill, no
boolean-mask indexing; losses, metrics and detections are read back only at logging points.
sidescan_sonar_detect_serve uses a side stream (uploads waited on by event, the tensors record_stream'ed); the others
are single-stream. The networks run under bf16 autocast.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new78.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py
(smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered with dummies, autocast a no-op so that fp32
sizes are counted, streams, events and pinned memory no-ops), and for which of them the CPU smoke run
(RECORD_SMOKE=1) ran.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import SideUploads, randint

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _cbr(cin, cout, stride=1, k=3):
    return _nn.Sequential(_nn.Conv2d(cin, cout, k, stride, k // 2, bias=False), _nn.BatchNorm2d(cout), _nn.ReLU())


class _Res(_nn.Module):
    """A basic residual block (two 3x3 convolutions, batch norm, a projected shortcut when the shape changes)."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1, self.b1 = _nn.Conv2d(cin, cout, 3, stride, 1, bias=False), _nn.BatchNorm2d(cout)
        self.c2, self.b2 = _nn.Conv2d(cout, cout, 3, 1, 1, bias=False), _nn.BatchNorm2d(cout)
        self.short = None
        if stride != 1 or cin != cout:
            self.short = _nn.Sequential(_nn.Conv2d(cin, cout, 1, stride, bias=False), _nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.b2(self.c2(_F.relu(self.b1(self.c1(x)))))
        return _F.relu(y + (x if self.short is None else self.short(x)))


class _ResTrunk(_nn.Module):
    """A ResNet-style trunk: a stem, then per stage `depth` residual blocks (the first strided after stage 0)."""

    def __init__(self, cin, widths, depth, stem_stride=2):
        super().__init__()
        self.stem = _cbr(cin, widths[0], stem_stride)
        blocks, c = [], widths[0]
        for i, w in enumerate(widths):
            for j in range(depth):
                blocks.append(_Res(c, w, 2 if (i > 0 and j == 0) else 1))
                c = w
        self.blocks = _nn.Sequential(*blocks)
        self.out = c

    def forward(self, x):
        return self.blocks(self.stem(x))


# ---------------------------------------------------------------- sea-ice segmentation of radar swaths


class _UNet(_nn.Module):
    def __init__(self, cin, widths, classes):
        super().__init__()
        self.down = _nn.ModuleList()
        c = cin
        for w in widths:
            self.down.append(_nn.Sequential(_cbr(c, w), _cbr(w, w)))
            c = w
        self.up = _nn.ModuleList()
        self.fuse = _nn.ModuleList()
        for w in reversed(widths[:-1]):
            self.up.append(_nn.ConvTranspose2d(c, w, 2, 2))
            self.fuse.append(_nn.Sequential(_cbr(2 * w, w), _cbr(w, w)))
            c = w
        self.head = _nn.Conv2d(c, classes, 1)

    def forward(self, x):
        skips = []
        for i, blk in enumerate(self.down):
            x = blk(x if i == 0 else _F.max_pool2d(x, 2))
            skips.append(x)
        for up, fuse, s in zip(self.up, self.fuse, reversed(skips[:-1])):
            x = fuse(torch.cat([up(x), s], 1))
        return self.head(x)


@_workload("sea-ice segmentation training over satellite radar swaths (random init, a UNet): 2-5 tiles a step (drawn) of 192-576 x 256-768 pixels (drawn, multiples of 32) with HH and HV backscatter in dB, an incidence-angle ramp across the swath and a no-data margin of drawn width on either edge (masked), ice charts of 5 classes (open water, new, young, first-year, multi-year) drawn as smoothed random fields; a 5-level UNet (widths 32-512, batch norm, transposed-convolution upsampling) under bf16 autocast, cross-entropy plus a soft dice loss over the valid pixels, AdamW with a cosine schedule, channels_last, 670 steps; the loss read back every 20 steps and every 134 steps an evaluation of 4 tiles at 512 x 512 with per-class IoU read back")
def sea_ice_swath_seg_train(rng):
    classes, widths = 5, _smoke([32, 64, 128, 256, 512], [4, 8, 8, 16, 16])
    model = _UNet(3, widths, classes).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)

    def tiles(b, h, w):
        hh = torch.randn(b, 1, h, w, device="cuda") * 3 - 15
        hv = hh * 0.6 - 8 + torch.randn(b, 1, h, w, device="cuda") * 2
        inc = torch.linspace(-1, 1, w, device="cuda")[None, None, None].expand(b, 1, h, w)
        lo = torch.randint(0, max(1, w // 8), (b, 1, 1, 1), device="cuda")
        hi = w - torch.randint(0, max(1, w // 8), (b, 1, 1, 1), device="cuda")
        col = torch.arange(w, device="cuda")[None, None, None]
        valid = ((col >= lo) & (col < hi)).float().expand(b, 1, h, w)
        x = torch.cat([(hh + 15) / 3, (hv + 17) / 3, inc], 1) * valid
        coarse = torch.randn(b, classes, h // 32, w // 32, device="cuda")
        y = _F.interpolate(coarse, size=(h, w), mode="bilinear", align_corners=False).argmax(1)
        return x.contiguous(memory_format=torch.channels_last), y, valid[:, 0]

    def losses(logits, y, valid):
        ce = (_F.cross_entropy(logits, y, reduction="none") * valid).sum() / valid.sum().clamp(min=1)
        p = torch.softmax(logits, 1) * valid[:, None]
        oh = _F.one_hot(y, classes).permute(0, 3, 1, 2).float() * valid[:, None]
        inter, denom = (p * oh).sum((0, 2, 3)), (p + oh).sum((0, 2, 3))
        dice = 1 - ((2 * inter + 1) / (denom + 1)).mean()
        return ce + dice

    steps = _smoke(670, 3)
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = 1e-3 * 0.5 * (1 + math.cos(math.pi * step / steps))
        model.train()
        b = rng.randint(2, _smoke(5, 3))
        h, w = randint(rng, _smoke(192, 32), _smoke(576, 64), 32), randint(rng, _smoke(256, 32), _smoke(768, 96), 32)
        x, y, valid = tiles(b, h, w)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x)
        loss = losses(logits.float(), y, valid)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 20 == 0:
            loss.item()
        del x, y, valid, logits, loss
        if (step + 1) % _smoke(134, 2) == 0:
            model.eval()
            inter = torch.zeros(classes, device="cuda")
            union = torch.zeros(classes, device="cuda")
            with torch.no_grad():
                for _ in range(_smoke(4, 1)):
                    x, y, valid = tiles(1, _smoke(512, 64), _smoke(512, 64))
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        pred = model(x).argmax(1)
                    po = _F.one_hot(pred, classes).float() * valid[..., None]
                    yo = _F.one_hot(y, classes).float() * valid[..., None]
                    inter += (po * yo).sum((0, 1, 2))
                    union += ((po + yo) > 0).float().sum((0, 1, 2))
                    del x, y, valid, pred, po, yo
            (inter / union.clamp(min=1)).tolist()
            del inter, union


# ---------------------------------------------------------------- side-scan sonar detection service


class _SonarDetector(_nn.Module):
    """A ResNet-style trunk at stride 8 with one upsampled stride-4 fusion, CenterNet heads (heatmap, size, offset)."""

    def __init__(self, widths, classes):
        super().__init__()
        self.trunk = _ResTrunk(2, widths, 1)
        self.lat = _nn.Conv2d(widths[1], widths[-1], 1)
        self.neck = _cbr(widths[-1], widths[-1])
        self.heat = _nn.Sequential(_cbr(widths[-1], widths[-1]), _nn.Conv2d(widths[-1], classes, 1))
        self.box = _nn.Sequential(_cbr(widths[-1], widths[-1]), _nn.Conv2d(widths[-1], 4, 1))

    def forward(self, x):
        h = self.trunk.stem(x)
        feats = []
        for blk in self.trunk.blocks:
            h = blk(h)
            feats.append(h)
        f4 = feats[1]
        h = self.neck(_F.interpolate(h, size=f4.shape[-2:], mode="nearest") + self.lat(f4))
        return self.heat(h).float(), self.box(h).float()


@_workload("side-scan sonar object detection service (random init): 1,880-2,060 requests (drawn), each 1-4 waterfall strips (drawn) of 256-2,048 pings (drawn, a multiple of 64) x 2 channels (port and starboard) x 512 range bins, the uint8 intensities uploaded on a side stream from two reused pinned host buffers one request ahead (waited on by event, record_stream'ed); slant-range gain correction and normalisation on the device, a ResNet-style trunk (widths 32-64-128-128) with a stride-4 fusion and CenterNet heads (6 classes: wreck, rock, tyre, pipeline, mine-like, debris) under bf16 autocast and eval-mode batch norm; peaks by 3 x 3 max pooling, the top 100 per strip, boxes decoded from sizes and offsets, a one-pass non-maximum suppression by the IoU matrix of higher-scored same-class boxes (torch.where, no value-dependent control flow), and each request's boxes, classes and scores read back")
def sidescan_sonar_detect_serve(rng):
    classes, bins = 6, _smoke(512, 64)
    widths = _smoke([32, 64, 128, 128], [8, 8, 16, 16])
    model = _SonarDetector(widths, classes).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    maxb, maxl = 4, _smoke(2048, 128)
    host = [torch.randint(0, 256, (maxb * maxl * 2 * bins,), dtype=torch.uint8).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    nreq = rng.randint(_smoke(1880, 3), _smoke(2060, 4))
    plan = [(rng.randint(1, maxb), randint(rng, _smoke(256, 64), maxl, 64)) for _ in range(nreq)]
    topk = _smoke(100, 10)
    gain = (1 + torch.linspace(0, 1, bins, device="cuda")).pow(2)[None, None, None]

    nxt = up.upload(0, plan[0][0] * plan[0][1] * 2 * bins)
    for i in range(nreq):
        b, length = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, plan[i + 1][0] * plan[i + 1][1] * 2 * bins)
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            x = raw.view(b, length, 2, bins).permute(0, 2, 1, 3).float() * gain
            x = (x.log1p() - 4.0) / 1.5
            x = x.contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                heat, box = model(x)
            heat = torch.sigmoid(heat)
            peak = heat * (heat == _F.max_pool2d(heat, 3, 1, 1)).float()
            gh, gw = heat.shape[-2:]
            score, idx = peak.flatten(1).topk(topk, dim=1)
            cls = idx // (gh * gw)
            pix = idx % (gh * gw)
            cy, cx = (pix // gw).float(), (pix % gw).float()
            reg = box.flatten(2).gather(2, pix[:, None].expand(b, 4, topk))
            off, size = reg[:, :2], reg[:, 2:].exp() * 4
            x0, y0 = (cx + off[:, 0]) * 4 - size[:, 0] / 2, (cy + off[:, 1]) * 4 - size[:, 1] / 2
            x1, y1 = x0 + size[:, 0], y0 + size[:, 1]
            boxes = torch.stack([x0, y0, x1, y1], -1)
            area = (x1 - x0) * (y1 - y0)
            iw = (torch.minimum(x1[:, :, None], x1[:, None]) - torch.maximum(x0[:, :, None], x0[:, None])).clamp(min=0)
            ih = (torch.minimum(y1[:, :, None], y1[:, None]) - torch.maximum(y0[:, :, None], y0[:, None])).clamp(min=0)
            iou = iw * ih / (area[:, :, None] + area[:, None] - iw * ih).clamp(min=1e-6)
            higher = torch.ones(topk, topk, dtype=torch.bool, device="cuda").triu(1).T  # j ranked above i
            same = cls[:, :, None] == cls[:, None]
            suppressed = ((iou > 0.5) & same & higher[None]).any(2)
            kept = torch.where(suppressed | (score < 0.05), torch.zeros_like(score), score)
            out = torch.cat([boxes, cls[..., None].float(), kept[..., None]], -1)
        out.tolist()
        del item, raw, x, heat, box, peak, score, idx, cls, pix, cy, cx, reg, off, size, x0, y0, x1, y1, boxes
        del area, iw, ih, iou, higher, same, suppressed, kept, out


# ---------------------------------------------------------------- long-tailed plankton classification


@_workload("long-tailed plankton image classification training (random init, imaging-flow-cytometer-like): 96-192 grayscale images a step (drawn, a multiple of 32) at 64-160 pixels (drawn, a multiple of 16), labels of 1,000 taxa drawn from a Zipf prior (exponent 1.1), the image statistics class-dependent; a ResNet-style CNN (widths 64-128-256-512, 2 blocks a stage) with global pooling under bf16 autocast and channels_last, a logit-adjusted cross-entropy (tau 1.0 times the log prior added to the logits) with label smoothing, SGD with Nesterov momentum, warmup and cosine decay, 730 steps; the loss read back every 20 steps and every 146 steps an evaluation of 4 x 256 class-balanced images at 128 pixels with the balanced accuracy and the head, middle and tail accuracies (per-class counts by scatter_add) read back")
def plankton_longtail_train(rng):
    n_cls = _smoke(1000, 20)
    widths = _smoke([64, 128, 256, 512], [8, 8, 16, 16])
    trunk = _ResTrunk(1, widths, 2).cuda().to(memory_format=torch.channels_last)
    fc = _nn.Linear(trunk.out, n_cls).cuda()
    prior = (torch.arange(n_cls, device="cuda").float() + 1).pow(-1.1)
    prior = prior / prior.sum()
    log_prior = prior.log()
    proto = torch.randn(n_cls, 4, device="cuda")
    params = list(trunk.parameters()) + list(fc.parameters())
    opt = torch.optim.SGD(params, lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4)

    def images(y, r):
        b = y.shape[0]
        p = proto[y]
        ramp = torch.linspace(-1, 1, r, device="cuda")
        blob = torch.exp(-(ramp[None, :, None] ** 2 + ramp[None, None, :] ** 2) * (2 + p[:, 0, None, None].abs()))
        x = blob * p[:, 1, None, None] + torch.randn(b, r, r, device="cuda") * 0.5 + p[:, 2, None, None] * 0.2
        return x[:, None].contiguous(memory_format=torch.channels_last)

    def forward(x):
        return fc(trunk(x).mean((2, 3)))

    steps = _smoke(730, 3)
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = 0.1 * min(1.0, (step + 1) / 20) * 0.5 * (1 + math.cos(math.pi * step / steps))
        trunk.train()
        b = randint(rng, _smoke(96, 4), _smoke(192, 8), _smoke(32, 4))
        r = randint(rng, _smoke(64, 16), _smoke(160, 32), 16)
        y = torch.multinomial(prior, b, replacement=True)
        x = images(y, r)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = forward(x)
        loss = _F.cross_entropy(logits.float() + log_prior, y, label_smoothing=0.1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 20 == 0:
            loss.item()
        del y, x, logits, loss
        if (step + 1) % _smoke(146, 2) == 0:
            trunk.eval()
            correct = torch.zeros(n_cls, device="cuda")
            seen = torch.zeros(n_cls, device="cuda")
            with torch.no_grad():
                for _ in range(_smoke(4, 1)):
                    y = torch.randint(0, n_cls, (_smoke(256, 8),), device="cuda")
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        pred = forward(images(y, _smoke(128, 32))).float().argmax(1)
                    correct.scatter_add_(0, y, (pred == y).float())
                    seen.scatter_add_(0, y, torch.ones_like(y, dtype=torch.float))
                    del y, pred
                acc = correct / seen.clamp(min=1)
                has = (seen > 0).float()
                third = n_cls // 3
                groups = [slice(0, third), slice(third, 2 * third), slice(2 * third, n_cls)]
                metrics = torch.stack([(acc * has).sum() / has.sum().clamp(min=1)]
                                      + [(acc[g] * has[g]).sum() / has[g].sum().clamp(min=1) for g in groups])
            metrics.tolist()
            del correct, seen, acc, has, metrics


# ---------------------------------------------------------------- fish re-identification


@_workload("fish re-identification training for multi-object tracking (random init): P x K batches of 16-32 identities (drawn) x 4 crops of 2,000 training fish, crops at 128 x 64 to 256 x 128 pixels (drawn height a multiple of 32, width half of it), the crops of one identity sharing a drawn appearance code plus pose and lighting noise; a ResNet-style embedder (widths 64-128-256-512, 2 blocks a stage, the last stage unstrided) with GeM pooling, a BNNeck and a 512-d embedding under bf16 autocast; a batch-hard triplet loss (margin 0.3) on the raw embedding plus an ArcFace loss (scale 30, margin 0.5) on the normalised one, AdamW with warmup and cosine decay, clipping, 480 steps; the loss read back every 20 steps and every 120 steps an evaluation of 200 unseen fish x 5 crops at 256 x 128 (query one crop against the rest) with rank-1 and mAP-like average precision read back")
def fish_reid_track_train(rng):
    n_ids, dim, k = _smoke(2000, 30), _smoke(512, 16), 4
    widths = _smoke([64, 128, 256, 512], [8, 8, 16, 16])
    trunk = _ResTrunk(3, widths, 2).cuda().to(memory_format=torch.channels_last)
    trunk.blocks[-2].c1.stride = (1, 1)  # the last stage unstrided, as re-id models keep stride 16
    trunk.blocks[-2].short[0].stride = (1, 1)
    neck = _nn.Sequential(_nn.Linear(trunk.out, dim), _nn.BatchNorm1d(dim)).cuda()
    arc_w = _nn.Parameter(torch.randn(n_ids, dim, device="cuda") * 0.01)
    gem_p = _nn.Parameter(torch.full((1,), 3.0, device="cuda"))
    codes = torch.randn(n_ids, 3, 4, 4, device="cuda")
    params = list(trunk.parameters()) + list(neck.parameters()) + [arc_w, gem_p]
    opt = torch.optim.AdamW(params, lr=3.5e-4, weight_decay=5e-4)

    def crops(ids, h, w, code_table):
        n = ids.shape[0]
        base = _F.interpolate(code_table[ids], size=(h, w), mode="bilinear", align_corners=False)
        light = torch.rand(n, 1, 1, 1, device="cuda") + 0.5
        return (base * light + torch.randn(n, 3, h, w, device="cuda") * 0.4).contiguous(
            memory_format=torch.channels_last)

    def embed(x):
        f = trunk(x).float()
        p = gem_p.clamp(min=1)
        g = f.clamp(min=1e-6).pow(p).mean((2, 3)).pow(1 / p)
        return neck[0](g.to(x.dtype)).float(), neck

    steps = _smoke(480, 3)
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = 3.5e-4 * min(1.0, (step + 1) / 20) * 0.5 * (1 + math.cos(math.pi * step / steps))
        trunk.train(), neck.train()
        p = rng.randint(_smoke(16, 3), _smoke(32, 4))
        h = randint(rng, _smoke(128, 32), _smoke(256, 64), 32)
        ids = torch.randperm(n_ids, device="cuda")[:p].repeat_interleave(k)
        x = crops(ids, h, h // 2, codes)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            raw, _ = embed(x)
        bn = neck[1](raw)
        # batch-hard triplet on the raw embedding
        dist = torch.cdist(raw, raw)
        same = (ids[:, None] == ids[None]).float()
        hard_pos = (dist * same).amax(1)
        hard_neg = (dist + same * 1e4).amin(1)
        triplet = _F.relu(hard_pos - hard_neg + 0.3).mean()
        # ArcFace on the normalised BNNeck output
        cos = _F.normalize(bn, dim=-1) @ _F.normalize(arc_w, dim=-1).T
        theta = torch.acos(cos.clamp(-1 + 1e-6, 1 - 1e-6))
        target = _F.one_hot(ids, n_ids).float()
        logits = 30 * torch.where(target > 0, torch.cos(theta + 0.5), cos)
        loss = triplet + _F.cross_entropy(logits, ids)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 5.0)
        opt.step()
        if step % 20 == 0:
            loss.item()
        del ids, x, raw, bn, dist, same, hard_pos, hard_neg, triplet, cos, theta, target, logits, loss
        if (step + 1) % _smoke(120, 2) == 0:
            trunk.eval(), neck.eval()
            n_eval, per = _smoke(200, 6), 5
            test_codes = torch.randn(n_eval, 3, 4, 4, device="cuda")
            ids = torch.arange(n_eval, device="cuda").repeat_interleave(per)
            embs = []
            with torch.no_grad():
                for s in range(0, n_eval * per, _smoke(250, 10)):
                    x = crops(ids[s:s + _smoke(250, 10)], _smoke(256, 64), _smoke(128, 32), test_codes)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        raw, _ = embed(x)
                    embs.append(_F.normalize(neck[1](raw), dim=-1))
                    del x, raw
                e = torch.cat(embs)
                sims = e @ e.T - 2 * torch.eye(e.shape[0], device="cuda")
                same = (ids[:, None] == ids[None]).float() - torch.eye(e.shape[0], device="cuda")
                order = sims.argsort(1, descending=True)
                rel = same.gather(1, order)
                rank1 = rel[:, 0].mean()
                prec = rel.cumsum(1) / torch.arange(1, e.shape[0] + 1, device="cuda")
                ap = ((prec * rel).sum(1) / rel.sum(1).clamp(min=1)).mean()
            torch.stack([rank1, ap]).tolist()
            del test_codes, ids, embs, e, sims, same, order, rel, rank1, prec, ap

"""The forty-first batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch39_b.py are): dense vision prediction and video, first half. Panoptic segmentation training
(Panoptic-DeepLab-style semantic, centre-heatmap and offset heads, targets rendered on the device for a varying
number of instances per image, multi-scale crops), instance segmentation training with dynamic mask kernels
(SOLOv2-style: a varying number of positive grid cells per image picks the kernels, Matrix NMS at evaluation),
semi-supervised video object segmentation serving (XMem-style: a working memory that grows every few frames and is
consolidated into a pruned long-term memory, objects joining mid-video, frames prefetched on a side stream), and
arbitrary-scale super-resolution training (LIIF: an EDSR encoder queried by an implicit MLP at a scale factor, crop
and query count drawn per step, chunked whole-image queries at evaluation). Same conventions: models built from
configs (hand-written torch here) with random weights, nothing downloaded, `rng` the workload's random.Random for
every shape, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a
tensor's value (instance counts, positive cells, memory sizes and object arrivals are drawn or counted on the host).
xmem_vos_serve uses a side stream (uploads waited on by event, tensors record_stream'ed); the others are
single-stream. panoptic_deeplab_train and xmem_vos_serve run under bf16 autocast, solov2_instseg_train and
liif_arbsr_train in fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch41_b.py's header says the same of its half): every workload of this
half was run whole, at its real sizes (RECORD_SMOKE unset), on PyTorch's meta device (a runner like
/tmp/b41/meta_run.py, not committed: smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered
with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking its math path; boolean-mask indexing,
which the meta device cannot size, is avoided) and its op outputs counted there (events about 1.8x that count);
the counts and peaks are in record_new41.sh's header. The CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


class _Basic(torch.nn.Module):
    """ResNet's basic block (two 3x3 convs with BatchNorm), optionally strided or dilated."""

    def __init__(self, cin, cout, s=1, d=1):
        super().__init__()
        nn = torch.nn
        self.c1, self.n1 = nn.Conv2d(cin, cout, 3, s, d, dilation=d, bias=False), nn.BatchNorm2d(cout)
        self.c2, self.n2 = nn.Conv2d(cout, cout, 3, 1, d, dilation=d, bias=False), nn.BatchNorm2d(cout)
        self.down = (nn.Sequential(nn.Conv2d(cin, cout, 1, s, bias=False), nn.BatchNorm2d(cout))
                     if s != 1 or cin != cout else None)

    def forward(self, x):
        y = self.n2(self.c2(torch.relu(self.n1(self.c1(x)))))
        return torch.relu(y + (x if self.down is None else self.down(x)))


class _Backbone(torch.nn.Module):
    """A ResNet-18/34-shaped trunk (7x7 stem, max pool, four stages of basic blocks) returning the stride-4, 8, 16
    and 32 features (stride 16 for the last with dilate_last, as DeepLab-style heads run it)."""

    def __init__(self, widths=(64, 128, 256, 512), depth=(2, 2, 2, 2), cin=3, dilate_last=False):
        super().__init__()
        nn = torch.nn
        self.stem = nn.Sequential(nn.Conv2d(cin, widths[0], 7, 2, 3, bias=False), nn.BatchNorm2d(widths[0]),
                                  nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1))
        self.stages = nn.ModuleList()
        c = widths[0]
        for i, (w, n) in enumerate(zip(widths, depth)):
            last = dilate_last and i == 3
            s, d = (1 if i == 0 or last else 2), (2 if last else 1)
            self.stages.append(nn.Sequential(_Basic(c, w, s, d), *[_Basic(w, w, 1, d) for _ in range(n - 1)]))
            c = w

    def forward(self, x):
        x = self.stem(x)
        out = []
        for st in self.stages:
            x = st(x)
            out.append(x)
        return out


def _conv_gn(cin, cout, k=3, groups=16):
    nn = torch.nn
    return nn.Sequential(nn.Conv2d(cin, cout, k, 1, k // 2, bias=False), nn.GroupNorm(math.gcd(groups, cout), cout), nn.ReLU(inplace=True))


# ---------------------------------------------------------------- panoptic segmentation training


class _Aspp(torch.nn.Module):
    def __init__(self, cin, c, rates=(6, 12, 18)):
        super().__init__()
        nn = torch.nn
        self.branches = nn.ModuleList([nn.Sequential(nn.Conv2d(cin, c, 1, bias=False), nn.BatchNorm2d(c), nn.ReLU())] +
                                      [nn.Sequential(nn.Conv2d(cin, c, 3, 1, r, dilation=r, bias=False),
                                                     nn.BatchNorm2d(c), nn.ReLU()) for r in rates])
        self.pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(cin, c, 1, bias=False), nn.ReLU())
        self.proj = nn.Sequential(nn.Conv2d(c * (len(rates) + 2), c, 1, bias=False), nn.BatchNorm2d(c), nn.ReLU(),
                                  nn.Dropout(0.1))

    def forward(self, x):
        outs = [br(x) for br in self.branches]
        outs.append(self.pool(x).expand(-1, -1, x.shape[2], x.shape[3]))
        return self.proj(torch.cat(outs, 1))


class _PanopticDecoder(torch.nn.Module):
    """Panoptic-DeepLab's single decoder: ASPP on the stride-16 features, then two upsampling fusions with
    projected stride-8 and stride-4 skips."""

    def __init__(self, c, skips=(64, 32)):
        super().__init__()
        nn = torch.nn
        self.aspp = _Aspp(512, c)
        self.p8, self.p4 = _conv_gn(128, skips[0], 1), _conv_gn(64, skips[1], 1)
        self.f8 = nn.Sequential(_conv_gn(c + skips[0], c), _conv_gn(c, c))
        self.f4 = nn.Sequential(_conv_gn(c + skips[1], c), _conv_gn(c, c))

    def forward(self, f4, f8, f16):
        f = torch.nn.functional
        x = self.aspp(f16)
        x = self.f8(torch.cat([f.interpolate(x, size=f8.shape[-2:], mode="bilinear"), self.p8(f8)], 1))
        return self.f4(torch.cat([f.interpolate(x, size=f4.shape[-2:], mode="bilinear"), self.p4(f4)], 1))


class _PanopticDeepLab(torch.nn.Module):
    def __init__(self, widths=(64, 128, 256, 512), depth=(3, 4, 6, 3), classes=19, sem_c=256, ins_c=128):
        super().__init__()
        nn = torch.nn
        self.backbone = _Backbone(widths, depth, dilate_last=True)
        self.sem_dec, self.ins_dec = _PanopticDecoder(sem_c), _PanopticDecoder(ins_c)
        self.sem_head = nn.Sequential(_conv_gn(sem_c, sem_c, 5), nn.Conv2d(sem_c, classes, 1))
        self.ctr_head = nn.Sequential(_conv_gn(ins_c, 32, 5), nn.Conv2d(32, 1, 1))
        self.off_head = nn.Sequential(_conv_gn(ins_c, 32, 5), nn.Conv2d(32, 2, 1))

    def forward(self, x):
        f = torch.nn.functional
        f4, f8, _, f16 = self.backbone(x)
        s, i = self.sem_dec(f4, f8, f16), self.ins_dec(f4, f8, f16)
        up = lambda t: f.interpolate(t, size=x.shape[-2:], mode="bilinear")  # noqa: E731
        return up(self.sem_head(s)), up(self.ctr_head(i)), up(self.off_head(i)) * 4


@_workload("panoptic segmentation training, Panoptic-DeepLab-style (Cheng et al. 2020) written by hand (random init): a ResNet-34-shaped trunk with its last stage dilated (output stride 16), two decoders (ASPP with rates 6/12/18 and image pooling, fusions of stride-8 and stride-4 skips; 256 wide for semantics, 128 for instances), a 19-class semantic head, an instance-centre heatmap head and a centre-offset head, upsampled to the crop; Cityscapes-style multi-scale crops of 384-768 x 512-1024 px (multiples of 32, drawn per step) in batches of 2-8 capped at 1.5M pixels, 1-40 instances per image (drawn), their elliptic masks, occlusion order, thing classes and stuff labels rendered on the device (instances padded per image: the centre Gaussians (sigma 8) maxed over instances, each pixel's offset to its instance's centre gathered by its instance id), 3% ignored pixels; losses: cross-entropy with hard-pixel mining (the top 20% of pixel losses by topk), centre MSE x200, offset L1 x0.01 on thing pixels; AdamW, bf16 autocast; every 40 steps a panoptic inference of 2 images of 512 x 1024 without grad: centre NMS by max pooling and the top 200 centres, thing pixels grouped to their nearest predicted centre (argmin over centres of the offset-shifted coordinates), instance areas by scatter_add, read back")
def panoptic_deeplab_train(rng):
    f = torch.nn.functional
    nsteps = _smoke(280, 2)
    model = (_PanopticDeepLab() if _smoke(1, 0) else
             _PanopticDeepLab(depth=(1, 1, 1, 1), sem_c=32, ins_c=32)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2.5e-4, weight_decay=1e-4, foreach=True)
    nthing = 8

    def grid(h, w):
        gy = torch.arange(h, device="cuda", dtype=torch.float32).view(1, 1, h, 1)
        gx = torch.arange(w, device="cuda", dtype=torch.float32).view(1, 1, 1, w)
        return gy, gx

    def targets(b, h, w, counts):
        n = max(counts)
        valid = torch.tensor([[1.0 if j < c else 0.0 for j in range(n)] for c in counts], device="cuda")
        cy, cx = torch.rand(b, n, device="cuda") * h, torch.rand(b, n, device="cuda") * w
        ry = (0.02 + 0.2 * torch.rand(b, n, device="cuda")) * h
        rx = (0.02 + 0.2 * torch.rand(b, n, device="cuda")) * w
        gy, gx = grid(h, w)
        dy, dx = gy - cy[..., None, None], gx - cx[..., None, None]
        occ = ((dy / ry[..., None, None]) ** 2 + (dx / rx[..., None, None]) ** 2 < 1).float() * valid[..., None, None]
        top, inst = (occ * torch.arange(1, n + 1, device="cuda", dtype=torch.float32).view(1, n, 1, 1)).max(1)
        thing = (top > 0).float()
        ctr = (torch.exp(-(dy ** 2 + dx ** 2) / (2 * 8.0 ** 2)) * valid[..., None, None]).amax(1, keepdim=True)
        del dy, dx, occ
        cls = torch.randint(19 - nthing, 19, (b, n), device="cuda")
        stuff = torch.randint(0, 19 - nthing, (b, 1, h // 64 + 1, w // 64 + 1), device="cuda").float()
        stuff = f.interpolate(stuff, size=(h, w), mode="nearest")[:, 0].long()
        flat = inst.flatten(1)
        sem = torch.where(thing > 0, cls.gather(1, flat).view(b, h, w), stuff)
        sem = torch.where(torch.rand(b, h, w, device="cuda") < 0.03, torch.full_like(sem, 255), sem)
        oy = (cy.gather(1, flat).view(b, h, w) - gy[0]) * thing
        ox = (cx.gather(1, flat).view(b, h, w) - gx[0]) * thing
        return sem, ctr, torch.stack([oy, ox], 1), thing

    def evaluate():
        h, w = _smoke(512, 64), _smoke(1024, 96)
        x = torch.randn(2, 3, h, w, device="cuda")
        model.eval()
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            sem, ctr, off = model(x)
        model.train()
        sem, ctr, off = sem.float().argmax(1), ctr.float(), off.float()
        k = _smoke(200, 8)
        peaks = ctr * (ctr == f.max_pool2d(ctr, 7, 1, 3)).float()
        score, idx = peaks.flatten(1).topk(k, -1)
        cyx = torch.stack([idx // w, idx % w], -1).float()  # (2, k, 2)
        gy, gx = grid(h, w)
        py = (gy[0, 0] + off[:, 0]).flatten(1)
        px = (gx[0, 0] + off[:, 1]).flatten(1)
        d = (py[:, None] - cyx[..., 0, None]) ** 2 + (px[:, None] - cyx[..., 1, None]) ** 2  # (2, k, hw)
        ids = d.argmin(1)
        thing = (sem >= 19 - nthing).float().flatten(1)
        area = torch.zeros(2, k, device="cuda").scatter_add_(1, ids, thing)
        area.cpu()

    for step in range(nsteps):
        h = rng.randrange(_smoke(384, 64), _smoke(768, 128) + 1, 32)
        w = rng.randrange(_smoke(512, 64), _smoke(1024, 128) + 1, 32)
        b = max(1, min(rng.randint(_smoke(2, 1), _smoke(8, 2)), _smoke(1_500_000, 20000) // (h * w)))
        counts = [rng.randint(1, _smoke(40, 4)) for _ in range(b)]
        x = torch.randn(b, 3, h, w, device="cuda")
        sem_t, ctr_t, off_t, thing = targets(b, h, w, counts)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            sem, ctr, off = model(x)
        ce = f.cross_entropy(sem.float(), sem_t, ignore_index=255, reduction="none").flatten()
        loss = ce.topk(max(1, int(0.2 * ce.numel())))[0].mean()
        loss = loss + 200 * f.mse_loss(ctr.float(), ctr_t)
        loss = loss + 0.01 * ((off.float() - off_t).abs().sum(1) * thing).sum() / thing.sum().clamp(min=1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del x, sem_t, ctr_t, off_t, thing, sem, ctr, off, ce, loss
        if (step + 1) % _smoke(40, 2) == 0:
            evaluate()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- instance segmentation with dynamic kernels


class _Solo(torch.nn.Module):
    """SOLOv2: a ResNet-18-shaped trunk and an FPN (P2-P6), a shared category branch and kernel branch (4 GroupNorm
    convs each, CoordConv input for kernels) run on each level's features resized to its S x S grid, and a unified
    mask-feature branch at stride 4."""

    def __init__(self, c=128, e=64, classes=80, grids=(40, 36, 24, 16, 12), widths=(64, 128, 256, 512)):
        super().__init__()
        nn = torch.nn
        self.grids = grids
        self.backbone = _Backbone(widths)
        self.lat = nn.ModuleList([nn.Conv2d(w, c, 1) for w in widths])
        self.out = nn.ModuleList([nn.Conv2d(c, c, 3, 1, 1) for _ in widths])
        self.cate = nn.Sequential(*[_conv_gn(c, c) for _ in range(4)], nn.Conv2d(c, classes, 3, 1, 1))
        self.kern = nn.Sequential(_conv_gn(c + 2, c), *[_conv_gn(c, c) for _ in range(3)], nn.Conv2d(c, e, 3, 1, 1))
        self.mask_lv = nn.ModuleList([_conv_gn(c + (2 if i == 3 else 0), c // 2) for i in range(4)])
        self.mask_out = nn.Sequential(nn.Conv2d(c // 2, e, 1, bias=False), nn.GroupNorm(16, e), nn.ReLU())

    @staticmethod
    def coords(x):
        b, _, h, w = x.shape
        ys = torch.linspace(-1, 1, h, device=x.device, dtype=x.dtype).view(1, 1, h, 1).expand(b, 1, h, w)
        xs = torch.linspace(-1, 1, w, device=x.device, dtype=x.dtype).view(1, 1, 1, w).expand(b, 1, h, w)
        return torch.cat([xs, ys], 1)

    def forward(self, x):
        f = torch.nn.functional
        feats = self.backbone(x)
        lat = [l(t) for l, t in zip(self.lat, feats)]
        for i in range(2, -1, -1):
            lat[i] = lat[i] + f.interpolate(lat[i + 1], size=lat[i].shape[-2:], mode="nearest")
        p = [o(t) for o, t in zip(self.out, lat)]
        p.append(f.max_pool2d(p[-1], 1, 2))
        cates, kerns = [], []
        for lv, s in enumerate(self.grids):
            src = p[lv] if lv > 0 else f.interpolate(p[0], scale_factor=0.5, mode="bilinear")
            if lv == 4:
                src = f.interpolate(src, size=p[3].shape[-2:], mode="bilinear")
            kf = f.interpolate(torch.cat([src, self.coords(src)], 1), size=(s, s), mode="bilinear")
            kerns.append(self.kern(kf).flatten(2))  # (b, e, s*s)
            cates.append(self.cate(kf[:, :-2]).flatten(2))  # (b, classes, s*s)
        m = self.mask_lv[0](p[0])
        for i in range(1, 4):
            t = p[i] if i < 3 else torch.cat([p[i], self.coords(p[i])], 1)
            m = m + f.interpolate(self.mask_lv[i](t), size=m.shape[-2:], mode="bilinear")
        return cates, kerns, self.mask_out(m)


@_workload("instance segmentation training with dynamic mask kernels, SOLOv2-style (Wang et al. 2020) written by hand (random init, fp32): a ResNet-18-shaped trunk and an FPN of 128 (P2-P6), category and kernel branches (4 GroupNorm convs each, CoordConv for kernels) on each level's features resized to grids of 40/36/24/16/12, 80 classes, 64-d dynamic 1x1 kernels applied to a unified stride-4 mask feature; COCO-style images of 384-800 px each side (multiples of 32, drawn per step) in batches of 2-8 capped at 1.6M pixels, 1-50 instances an image (drawn: box scales log-uniform 8-512 px, class), each instance assigned on the host to an FPN level by scale and to its centre-region grid cells (1-9 cells), the positives' kernels gathered by (image, cell) indices from all levels and applied per image (P_i x 64 @ 64 x HW) to give P masks of a varying count, Dice loss against the instances' elliptic masks rendered on the device at stride 4 (gathered per positive), sigmoid focal loss on the category grids (targets scattered by index_put_), SGD with momentum; every 30 steps an inference of one 640-800 px image without grad: the top 100 cell-class scores, their masks, Matrix NMS (mask IoU by matmul, Gaussian decay), the top 30 masks upsampled and copied back as uint8")
def solov2_instseg_train(rng):
    f = torch.nn.functional
    nsteps = _smoke(240, 2)
    classes = 80
    grids = (40, 36, 24, 16, 12) if _smoke(1, 0) else (8, 6, 4, 4, 2)
    model = (_Solo(grids=grids) if _smoke(1, 0) else _Solo(32, 16, classes, grids, (16, 16, 32, 32))).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4, foreach=True)
    ranges = ((1, 96), (48, 192), (96, 384), (192, 768), (384, 4096))

    def focal(logits, target):
        p = logits.sigmoid()
        ce = f.binary_cross_entropy_with_logits(logits, target, reduction="none")
        pt = p * target + (1 - p) * (1 - target)
        a = 0.25 * target + 0.75 * (1 - target)
        return (a * (1 - pt) ** 2 * ce).sum()

    def masks_at(h4, w4, boxes):  # boxes: (n, 4) cy, cx, hy, hx in stride-4 pixels -> (n, h4*w4) float masks
        gy = torch.arange(h4, device="cuda", dtype=torch.float32).view(1, h4, 1)
        gx = torch.arange(w4, device="cuda", dtype=torch.float32).view(1, 1, w4)
        d = ((gy - boxes[:, 0, None, None]) / boxes[:, 2, None, None]) ** 2 + \
            ((gx - boxes[:, 1, None, None]) / boxes[:, 3, None, None]) ** 2
        return (d < 1).float().flatten(1)

    def evaluate():
        h, w = rng.randrange(_smoke(640, 64), _smoke(800, 96) + 1, 32), rng.randrange(_smoke(640, 64), _smoke(800, 96) + 1, 32)
        x = torch.randn(1, 3, h, w, device="cuda")
        model.eval()
        with torch.no_grad():
            cates, kerns, mf = model(x)
            scores = torch.cat(cates, 2)[0].sigmoid().t()  # (cells, classes)
            kall = torch.cat(kerns, 2)[0].t()  # (cells, e)
            k = min(_smoke(100, 8), scores.numel())
            s, idx = scores.flatten().topk(k)
            cell = idx // classes
            m = (kall[cell] @ mf[0].flatten(1)).sigmoid()
            mb = (m > 0.5).float()
            inter = mb @ mb.t()
            area = mb.sum(1)
            iou = (inter / (area[:, None] + area[None] - inter).clamp(min=1)).triu(1)
            comp = iou.amax(0)
            decay = torch.exp(-2 * (iou ** 2 - comp[:, None] ** 2)).amin(0)
            s2, keep = (s * decay).topk(min(_smoke(30, 4), k))
            out = f.interpolate(m[keep].view(1, -1, h // 4, w // 4), size=(h, w), mode="bilinear")[0]
            (out > 0.5).to(torch.uint8).cpu()
        model.train()

    for step in range(nsteps):
        h = rng.randrange(_smoke(384, 64), _smoke(800, 128) + 1, 32)
        w = rng.randrange(_smoke(384, 64), _smoke(800, 128) + 1, 32)
        b = max(1, min(rng.randint(2, _smoke(8, 2)), _smoke(1_600_000, 20000) // (h * w)))
        h4, w4 = h // 4, w // 4
        boxes, img_of, cls = [], [], []
        pos = []  # (level, image, cell, instance)
        for i in range(b):
            for _ in range(rng.randint(1, _smoke(50, 4))):
                sc = _loguniform(rng, 8, 512)
                ar = rng.uniform(0.5, 2.0)
                bh, bw = min(h - 2, sc * math.sqrt(ar)), min(w - 2, sc / math.sqrt(ar))
                cy, cx = rng.uniform(bh / 2, h - bh / 2), rng.uniform(bw / 2, w - bw / 2)
                n = len(boxes)
                boxes.append((cy / 4, cx / 4, max(bh / 8, 0.6), max(bw / 8, 0.6)))
                img_of.append(i)
                cls.append(rng.randrange(classes))
                lv = next(j for j, (lo, hi) in enumerate(ranges) if lo <= sc <= hi)
                s = grids[lv]
                gy0, gx0 = int(cy / h * s), int(cx / w * s)
                ry, rx = max(0, int(0.2 * bh / 2 / h * s)), max(0, int(0.2 * bw / 2 / w * s))
                for gy in range(max(0, gy0 - min(ry, 1)), min(s, gy0 + min(ry, 1) + 1)):
                    for gx in range(max(0, gx0 - min(rx, 1)), min(s, gx0 + min(rx, 1) + 1)):
                        pos.append((lv, i, gy * s + gx, n))
        pos.sort(key=lambda t: (t[1], t[0], t[2]))
        x = torch.randn(b, 3, h, w, device="cuda")
        gt = masks_at(h4, w4, torch.tensor(boxes, device="cuda"))
        cates, kerns, mf = model(x)
        offs = [0]
        for g in grids:
            offs.append(offs[-1] + g * g)
        kall = torch.cat(kerns, 2).permute(0, 2, 1)  # (b, cells of all levels, e)
        kcat = kall[torch.tensor([t[1] for t in pos], device="cuda"),
                    torch.tensor([offs[t[0]] + t[2] for t in pos], device="cuda")]
        inst = torch.tensor([t[3] for t in pos], device="cuda")
        preds, start = [], 0
        for i in range(b):
            cnt = sum(1 for t in pos if t[1] == i)
            if cnt:
                preds.append((kcat[start:start + cnt] @ mf[i, :, :h4, :w4].flatten(1)).sigmoid())
            start += cnt
        pm, tm = torch.cat(preds, 0), gt[inst]
        dice = 1 - 2 * (pm * tm).sum(1) / ((pm * pm).sum(1) + (tm * tm).sum(1) + 1e-3)
        loss = 3 * dice.mean()
        for lv in range(5):
            s = grids[lv]
            tgt = torch.zeros(b, s * s, classes, device="cuda")
            sel = [t for t in pos if t[0] == lv]
            if sel:
                tgt.index_put_((torch.tensor([t[1] for t in sel], device="cuda"),
                                torch.tensor([t[2] for t in sel], device="cuda"),
                                torch.tensor([cls[t[3]] for t in sel], device="cuda")),
                               torch.ones(len(sel), device="cuda"))
            loss = loss + focal(cates[lv].permute(0, 2, 1), tgt) / (len(pos) + 1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del x, gt, cates, kerns, mf, kall, kcat, preds, pm, tm, loss
        if (step + 1) % _smoke(30, 2) == 0:
            evaluate()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- video object segmentation serving


class _XMem(torch.nn.Module):
    """XMem's networks: a key encoder (ResNet-34-shaped to stride 16) with key (64), shrinkage and selection
    projections, a value encoder per object (image, its mask and the others' masks; ResNet-18-shaped, narrower)
    fused with the key features and a sensory hidden state, and a decoder with stride-8 and stride-4 skips."""

    def __init__(self, ck=64, cv=256, ch=64, kw=(64, 128, 256, 512), vw=(32, 64, 128, 256)):
        super().__init__()
        nn = torch.nn
        self.key_enc = _Backbone(kw, (3, 4, 6, 3), dilate_last=True)
        self.key_proj, self.shrink, self.select = nn.Conv2d(kw[3], ck, 3, 1, 1), nn.Conv2d(kw[3], 1, 3, 1, 1), nn.Conv2d(kw[3], ck, 3, 1, 1)
        self.val_enc = _Backbone(vw, (1, 1, 1, 1), cin=5, dilate_last=True)
        self.val_fuse = nn.Sequential(_Basic(vw[3] + kw[3], cv), _Basic(cv, cv))
        self.hid = nn.Conv2d(cv + ch, 3 * ch, 3, 1, 1)
        self.fuse16 = nn.Sequential(_Basic(cv + ch + kw[3], 256), _Basic(256, 256))
        self.up8 = _Basic(256 + kw[1], 128)
        self.up4 = _Basic(128 + kw[0], 64)
        self.pred = nn.Conv2d(64, 1, 3, 1, 1)
        self.dec_hid = nn.Conv2d(256 + ch, 3 * ch, 3, 1, 1)
        self.ch = ch

    def encode_key(self, x):
        f4, f8, _, f16 = self.key_enc(x)
        return (self.key_proj(f16), 1 + self.shrink(f16) ** 2, torch.sigmoid(self.select(f16))), (f4, f8, f16)

    def gru(self, conv, x, h):  # XMem's HiddenUpdater: forget and update gates and a new value from [x, h]
        g = conv(torch.cat([x, h], 1))
        forget, update = torch.sigmoid(g[:, :self.ch]), torch.sigmoid(g[:, self.ch:2 * self.ch])
        return forget * h * (1 - update) + update * torch.tanh(g[:, 2 * self.ch:])

    def encode_value(self, x, masks, f16, hidden):  # masks (O, 1, H, W) -> values (O, cv, h, w), new hidden
        o = masks.shape[0]
        others = (masks.sum(0, keepdim=True) - masks).clamp(0, 1)
        inp = torch.cat([x.expand(o, -1, -1, -1), masks, others], 1)
        v = self.val_fuse(torch.cat([self.val_enc(inp)[3], f16.expand(o, -1, -1, -1)], 1))
        return v, self.gru(self.hid, v, hidden)

    def decode(self, feats, readout, hidden):
        f = torch.nn.functional
        f4, f8, f16 = feats
        o = readout.shape[0]
        x = self.fuse16(torch.cat([readout, hidden, f16.expand(o, -1, -1, -1)], 1))
        hidden = self.gru(self.dec_hid, x, hidden)
        x = self.up8(torch.cat([f.interpolate(x, scale_factor=2.0, mode="bilinear"), f8.expand(o, -1, -1, -1)], 1))
        x = self.up4(torch.cat([f.interpolate(x, scale_factor=2.0, mode="bilinear"), f4.expand(o, -1, -1, -1)], 1))
        return self.pred(x), hidden


@_workload("semi-supervised video object segmentation serving, XMem-style (Cheng & Schwing 2022) written by hand (random weights): a ResNet-34-shaped key encoder to stride 16 (64-d keys with shrinkage and selection terms), a per-object value encoder (image + the object's mask + the other objects' masks, 256-d values fused with key features) and a sensory hidden state per object (conv GRU, 64), a decoder with stride-8 and stride-4 skips and soft aggregation over objects; per frame an anisotropic-L2 affinity of the query keys against all memory keys (long-term + working), top-30 filtered per query (topk, softmax, scatter) and the objects' values read out by matmul, the affinity's row sums accumulated as element usage; the working memory grows by one frame's keys and values every 5 frames (torch.cat) and, past 6-10 frames (drawn per video), its oldest frames are consolidated into long-term prototypes (the 1/8 most used elements by topk, index_select), the long-term memory pruned to its most used 8k-16k elements (drawn) when over; 16 videos of 40-160 frames (drawn) at 384x640, 480x864 or 576x1024 (drawn), 1-5 objects at the first frame and 0-3 more joining at drawn frames (their memory values zero-padded with torch.cat), each frame's uint8 image uploaded from a reused pinned host buffer on a side stream one frame ahead (the compute stream waits on the upload's event, the tensor record_stream'ed), the argmax mask copied back as uint8 every frame; eval mode, bf16 autocast under inference_mode")
def xmem_vos_serve(rng):
    f = torch.nn.functional
    nvid = _smoke(16, 2)
    model = (_XMem() if _smoke(1, 0) else _XMem(8, 16, 8, (8, 8, 16, 16), (4, 4, 8, 8))).cuda().eval()
    sizes = ((384, 640), (480, 864), (576, 1024)) if _smoke(1, 0) else ((64, 96), (96, 64))
    hmax, wmax = max(s[0] for s in sizes), max(s[1] for s in sizes)
    host = torch.randint(0, 256, (3 * hmax * wmax,), dtype=torch.uint8).pin_memory()
    side = torch.cuda.Stream()
    topk = _smoke(30, 4)

    def upload(h, w):
        with torch.cuda.stream(side):
            x = host[:3 * h * w].to("cuda", non_blocking=True).view(1, 3, h, w)
            ev = side.record_event()
        return x, ev

    def ellipse(o, h, w):
        gy = torch.arange(h, device="cuda", dtype=torch.float32).view(1, 1, h, 1)
        gx = torch.arange(w, device="cuda", dtype=torch.float32).view(1, 1, 1, w)
        c = torch.rand(o, 4, device="cuda")
        d = ((gy - c[:, 0, None, None, None] * h) / (0.05 + 0.2 * c[:, 2, None, None, None]) / h) ** 2 + \
            ((gx - c[:, 1, None, None, None] * w) / (0.05 + 0.2 * c[:, 3, None, None, None]) / w) ** 2
        return (d < 1).float()

    def readout(mk, ms, mv, qk, qe):
        # anisotropic L2 similarity (XMem's get_similarity), top-k per query, softmax, values read out
        ck = mk.shape[0]
        a_sq = (mk.pow(2).t() @ qe)  # (N, HW)
        two_ab = 2 * (mk.t() @ (qk * qe))
        b_sq = (qe * qk.pow(2)).sum(0, keepdim=True)
        sim = (-a_sq + two_ab - b_sq) * ms.t() / math.sqrt(ck)
        val, idx = sim.topk(min(topk, sim.shape[0]), dim=0)
        aff = torch.zeros_like(sim).scatter_(0, idx, val.softmax(0))
        o, cv, _ = mv.shape
        return (mv.flatten(0, 1) @ aff).view(o, cv, -1), aff.sum(1)

    with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
        for _ in range(nvid):
            h, w = rng.choice(sizes)
            h16, w16 = h // 16, w // 16
            nframes = rng.randint(_smoke(40, 6), _smoke(160, 10))
            max_work = rng.randint(6, 10) if _smoke(1, 0) else 4
            lt_cap = rng.randint(8000, 16000) if _smoke(1, 0) else 64
            nobj = rng.randint(1, 5)
            joins = sorted(rng.randrange(1, nframes) for _ in range(rng.randint(0, 3)))
            # memory: long-term (keys, shrinkage, values, usage) and working frames
            lt = None
            work = []  # list of (keys (ck, n), shrink (1, n), values (O, cv, n))
            work_usage = None
            hidden = torch.zeros(nobj, model.ch, h16, w16, device="cuda")
            pending = upload(h, w)
            for t in range(nframes):
                x, ev = pending
                if t + 1 < nframes:
                    pending = upload(h, w)
                torch.cuda.current_stream().wait_event(ev)
                x.record_stream(torch.cuda.current_stream())
                x = (x.float() / 255.0 - 0.45) / 0.225
                (qk, qs, qe), feats = model.encode_key(x)
                qk2, qs2, qe2 = qk[0].flatten(1), qs[0].flatten(1), qe[0].flatten(1)
                new = sum(1 for j in joins if j == t)
                if t == 0 or new:
                    add = nobj if t == 0 else new
                    if t > 0:
                        nobj += new
                        hidden = torch.cat([hidden, torch.zeros(new, model.ch, h16, w16, device="cuda")], 0)
                        cvd = work[0][2].shape[1]
                        work = [(k, s, torch.cat([v, torch.zeros(new, cvd, v.shape[2], device="cuda", dtype=v.dtype)], 0))
                                for k, s, v in work]
                        if lt is not None:
                            lk, ls, lv, lu = lt
                            lt = (lk, ls, torch.cat([lv, torch.zeros(new, cvd, lv.shape[2], device="cuda", dtype=lv.dtype)], 0), lu)
                    given = ellipse(add, h, w)
                if t == 0:
                    masks = given
                else:
                    ms = torch.cat(([lt[1]] if lt is not None else []) + [s for _, s, _ in work], 1)
                    mv = torch.cat(([lt[2]] if lt is not None else []) + [v for _, _, v in work], 2)
                    mk = torch.cat(([lt[0]] if lt is not None else []) + [k for k, _, _ in work], 1)
                    ro, usage = readout(mk, ms, mv, qk2, qe2)
                    nlt = 0 if lt is None else lt[0].shape[1]
                    if lt is not None:
                        lt = (lt[0], lt[1], lt[2], lt[3] + usage[:nlt].float())
                    work_usage = work_usage + usage[nlt:].float()
                    logits, hidden = model.decode(feats, ro.view(ro.shape[0], ro.shape[1], h16, w16), hidden[:ro.shape[0]])
                    prob = torch.sigmoid(f.interpolate(logits.float(), size=(h, w), mode="bilinear"))
                    if new:
                        prob = torch.cat([prob[:nobj - new], given], 0)
                    bg = (1 - prob).prod(0, keepdim=True)
                    allp = torch.cat([bg, prob], 0).clamp(1e-7, 1 - 1e-7)
                    soft = torch.log(allp / (1 - allp)).softmax(0)
                    masks = soft[1:]
                    soft.argmax(0).to(torch.uint8).cpu()
                if t % _smoke(5, 2) == 0 or new:
                    v, hidden = model.encode_value(x, masks, feats[2], hidden)
                    work.append((qk2, qs2, v.flatten(2)))
                    u0 = torch.zeros(qk2.shape[1], device="cuda")
                    work_usage = u0 if work_usage is None else torch.cat([work_usage, u0])
                    if len(work) > max_work:
                        nold = len(work) - 3
                        old_k = torch.cat([k for k, _, _ in work[:nold]], 1)
                        old_s = torch.cat([s for _, s, _ in work[:nold]], 1)
                        old_v = torch.cat([v for _, _, v in work[:nold]], 2)
                        n_old = old_k.shape[1]
                        keep = work_usage[:n_old].topk(max(1, n_old // 8))[1]
                        pk, ps, pv = old_k.index_select(1, keep), old_s.index_select(1, keep), old_v.index_select(2, keep)
                        pu = work_usage[:n_old].index_select(0, keep)
                        if lt is None:
                            lt = (pk, ps, pv, pu)
                        else:
                            lt = (torch.cat([lt[0], pk], 1), torch.cat([lt[1], ps], 1), torch.cat([lt[2], pv], 2),
                                  torch.cat([lt[3], pu]))
                        if lt[0].shape[1] > lt_cap:
                            keep = lt[3].topk(lt_cap)[1]
                            lt = (lt[0].index_select(1, keep), lt[1].index_select(1, keep), lt[2].index_select(2, keep),
                                  lt[3].index_select(0, keep))
                        work = work[nold:]
                        work_usage = work_usage[n_old:]
                del x
            del work, lt, hidden, work_usage
    torch.cuda.synchronize()


# ---------------------------------------------------------------- arbitrary-scale super-resolution training


class _Edsr(torch.nn.Module):
    """EDSR-baseline without its upsampler (LIIF's encoder): a head conv, 16 residual blocks of 64, a conv, a skip."""

    def __init__(self, c=64, blocks=16):
        super().__init__()
        nn = torch.nn
        self.head = nn.Conv2d(3, c, 3, 1, 1)
        self.body = nn.ModuleList([nn.Sequential(nn.Conv2d(c, c, 3, 1, 1), nn.ReLU(True), nn.Conv2d(c, c, 3, 1, 1))
                                   for _ in range(blocks)])
        self.tail = nn.Conv2d(c, c, 3, 1, 1)

    def forward(self, x):
        h = self.head(x)
        r = h
        for blk in self.body:
            r = r + blk(r)
        return self.tail(r) + h


def _make_coord(h, w, device="cuda"):
    ys = -1 + (2 * torch.arange(h, device=device, dtype=torch.float32) + 1) / h
    xs = -1 + (2 * torch.arange(w, device=device, dtype=torch.float32) + 1) / w
    return torch.stack(torch.meshgrid(ys, xs, indexing="ij"), -1)  # (h, w, 2) as (y, x)


def _liif_query(imnet, feat, coord, cell):
    """LIIF's query_rgb: 3x3 feature unfolding, local ensemble over the four nearest latent codes (grid_sample
    nearest), relative coordinates and cell decoding into the MLP, area-weighted sum."""
    f = torch.nn.functional
    b, c, h, w = feat.shape
    feat = f.unfold(feat, 3, padding=1).view(b, c * 9, h, w)
    fc = _make_coord(h, w).permute(2, 0, 1)[None].expand(b, 2, h, w)
    scale = torch.tensor([h, w], device="cuda", dtype=torch.float32)
    preds, areas = [], []
    for vy in (-1, 1):
        for vx in (-1, 1):
            shift = torch.tensor([vy / h + 1e-6, vx / w + 1e-6], device="cuda")
            c_ = (coord + shift).clamp(-1 + 1e-6, 1 - 1e-6)
            g = c_.flip(-1)[:, None]
            qf = f.grid_sample(feat, g, mode="nearest", align_corners=False)[:, :, 0].permute(0, 2, 1)
            qc = f.grid_sample(fc, g, mode="nearest", align_corners=False)[:, :, 0].permute(0, 2, 1)
            rel = (coord - qc) * scale
            inp = torch.cat([qf, rel, cell * scale], -1)
            q = coord.shape[1]
            preds.append(imnet(inp.view(b * q, -1)).view(b, q, -1))
            areas.append((rel[..., 0] * rel[..., 1]).abs() + 1e-9)
    tot = sum(areas)
    areas = [areas[3], areas[2], areas[1], areas[0]]
    return sum(p * (a / tot)[..., None] for p, a in zip(preds, areas))


@_workload("arbitrary-scale super-resolution training, LIIF (Chen et al. 2021) written by hand (random init, fp32): an EDSR-baseline encoder (16 residual blocks of 64, no upsampler) and an implicit MLP (580-256-256-256-256-3 over the 3x3-unfolded latent code, relative coordinates and the query cell) with the local ensemble over the 4 nearest codes (grid_sample nearest) and area weighting; each step a batch of 8-32 HR crops (drawn) whose size is the LR crop (32-64 px, drawn) times a scale factor drawn uniformly in 1-4, made on the device and downsampled bicubically (antialiased) to the LR crop, 1024-4096 query pixels per image (drawn, at most the HR crop) sampled by randperm and gathered with their coordinates and cells, L1 loss, Adam with step decay; every 60 steps an evaluation of one LR image of 48-160 px (drawn) at a scale of 2, 3, 4, 6, 8 or 12 (drawn, output at most 1024 px a side), all output pixels queried in chunks of 30000 without grad (LIIF's batched_predict), the PSNR read back")
def liif_arbsr_train(rng):
    nn, f = torch.nn, torch.nn.functional
    nsteps = _smoke(540, 2)
    enc = (_Edsr() if _smoke(1, 0) else _Edsr(8, 2)).cuda()
    c = 64 if _smoke(1, 0) else 8
    hid = _smoke(256, 16)
    imnet = nn.Sequential(nn.Linear(c * 9 + 4, hid), nn.ReLU(), nn.Linear(hid, hid), nn.ReLU(), nn.Linear(hid, hid),
                          nn.ReLU(), nn.Linear(hid, hid), nn.ReLU(), nn.Linear(hid, 3)).cuda()
    params = list(enc.parameters()) + list(imnet.parameters())
    opt = torch.optim.Adam(params, lr=1e-4, foreach=True)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=max(1, nsteps // 3), gamma=0.5)
    chunk = _smoke(30000, 500)

    def evaluate():
        lr_h, lr_w = rng.randint(_smoke(48, 8), _smoke(160, 16)), rng.randint(_smoke(48, 8), _smoke(160, 16))
        s = rng.choice([2, 3, 4, 6, 8, 12])
        s = min(s, _smoke(1024, 64) // max(lr_h, lr_w))
        H, W = lr_h * s, lr_w * s
        hr = torch.rand(1, 3, H, W, device="cuda")
        lr = f.interpolate(hr, size=(lr_h, lr_w), mode="bicubic", antialias=True).clamp(0, 1)
        with torch.no_grad():
            feat = enc((lr - 0.5) / 0.5)
            coord = _make_coord(H, W).view(1, -1, 2)
            cell = torch.tensor([2 / H, 2 / W], device="cuda").view(1, 1, 2)
            outs = []
            for q0 in range(0, H * W, chunk):
                cq = coord[:, q0:q0 + chunk]
                outs.append(_liif_query(imnet, feat, cq, cell.expand(1, cq.shape[1], 2)))
            pred = (torch.cat(outs, 1) * 0.5 + 0.5).clamp(0, 1)
            mse = (pred - hr.flatten(2).transpose(1, 2)).pow(2).mean()
            (-10 * torch.log10(mse)).item()

    for step in range(nsteps):
        b = rng.randint(_smoke(8, 1), _smoke(32, 2))
        lr_sz = rng.randint(_smoke(32, 6), _smoke(64, 10))
        s = rng.uniform(1, 4)
        H = W = round(lr_sz * s)
        q = min(H * W, rng.randint(_smoke(1024, 16), _smoke(4096, 32)))
        hr = torch.rand(b, 3, H, W, device="cuda")
        lr = f.interpolate(hr, size=(lr_sz, lr_sz), mode="bicubic", antialias=True).clamp(0, 1)
        idx = torch.stack([torch.randperm(H * W, device="cuda")[:q] for _ in range(b)])
        coord = _make_coord(H, W).view(1, -1, 2).expand(b, -1, -1).gather(1, idx[..., None].expand(-1, -1, 2))
        gt = hr.flatten(2).gather(2, idx[:, None].expand(-1, 3, -1)).transpose(1, 2)
        cell = torch.tensor([2 / H, 2 / W], device="cuda").view(1, 1, 2).expand(b, q, 2)
        pred = _liif_query(imnet, enc((lr - 0.5) / 0.5), coord, cell)
        loss = (pred - (gt - 0.5) / 0.5).abs().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        del hr, lr, idx, coord, gt, cell, pred, loss
        if (step + 1) % _smoke(60, 2) == 0:
            evaluate()
    torch.cuda.synchronize()

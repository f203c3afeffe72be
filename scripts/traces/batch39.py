"""The thirty-ninth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch36_b.py are): geometry, motion and tracking, first half. Coarse-to-fine stereo-matching serving whose cost
volumes change depth with each request's disparity range (stereo pairs uploaded on a side stream), bottom-up
multi-person pose training (OpenPose-style part heatmaps and part-affinity fields rendered on the device for a
varying number of people), multi-object tracking serving (a FairMOT-style joint detection and re-ID network with
a Kalman-filter tracker whose track set grows and shrinks, frames prefetched on a side stream), and point-cloud
registration training (Deep Closest Point with DGCNN features, SVD Procrustes and an ICP refinement at
evaluation) on clouds of varying sizes and overlaps. Same conventions: models built from configs (hand-written
torch here) with random weights, nothing downloaded, `rng` the workload's random.Random for every shape, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value (the
tracker's match counts, births and deaths are drawn on the host; matching itself is argmin on the device).
anynet_stereo_serve and fairmot_track_serve use a side stream (uploads waited on by event, tensors
record_stream'ed); anynet_stereo_serve, bottomup_pose_train and fairmot_track_serve run under bf16 autocast,
dcp_registration_train in fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch39_b.py's header says the same of its half): every workload of this
half was run whole, at its real sizes (RECORD_SMOKE unset), on PyTorch's meta device (a runner like
/tmp/b39/meta_run.py, not committed: smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered
with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking its math path; boolean-mask indexing,
which the meta device cannot size, is avoided) and its op outputs counted there (events about 1.8x that count);
the counts and peaks are in record_new39.sh's header. The CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


def _cbr(cin, cout, k=3, s=1, bn=True):
    nn = torch.nn
    return nn.Sequential(nn.Conv2d(cin, cout, k, s, k // 2, bias=not bn),
                         nn.BatchNorm2d(cout) if bn else nn.Identity(), nn.ReLU(inplace=True))


# ---------------------------------------------------------------- coarse-to-fine stereo serving


class _StereoFeat(torch.nn.Module):
    """AnyNet's U-Net feature extractor: features at 1/16, 1/8 and 1/4 of the input."""

    def __init__(self, c=(16, 32, 64, 128), out=32):
        super().__init__()
        nn = torch.nn
        self.stem = nn.Sequential(_cbr(3, c[0], 3, 2), _cbr(c[0], c[1], 3, 2), _cbr(c[1], c[1]))
        self.d1 = nn.Sequential(_cbr(c[1], c[2], 3, 2), _cbr(c[2], c[2]))
        self.d2 = nn.Sequential(_cbr(c[2], c[3], 3, 2), _cbr(c[3], c[3]))
        self.u1 = _cbr(c[3] + c[2], c[2])
        self.u0 = _cbr(c[2] + c[1], c[1])
        self.o16, self.o8, self.o4 = nn.Conv2d(c[3], out, 1), nn.Conv2d(c[2], out, 1), nn.Conv2d(c[1], out, 1)

    def forward(self, x):
        f = torch.nn.functional
        x4 = self.stem(x)
        x8 = self.d1(x4)
        x16 = self.d2(x8)
        u8 = self.u1(torch.cat([f.interpolate(x16, size=x8.shape[-2:], mode="bilinear"), x8], 1))
        u4 = self.u0(torch.cat([f.interpolate(u8, size=x4.shape[-2:], mode="bilinear"), x4], 1))
        return self.o16(x16), self.o8(u8), self.o4(u4)


def _gcorr(l, r, g):
    b, c, h, w = l.shape
    return (l * r).view(b, g, c // g, h, w).mean(2)


@_workload("coarse-to-fine stereo-matching serving, AnyNet-style (Wang et al. 2019) written by hand (random weights): a U-Net feature extractor (16-128 channels, BatchNorm) giving 32-channel features at 1/16, 1/8 and 1/4; stage 1 a full group-wise correlation cost volume (8 groups) over the request's disparity range at 1/16 (96-256 px, drawn per request: 6-16 levels, built by a loop over shifted right features), regularized by five 3-D convs and reduced by soft-argmin; stages 2 and 3 warp the right features by the upsampled disparity (grid_sample) at 2R+1 residual offsets (R 2-4, drawn per request) into residual cost volumes, 3-D convs and a soft-argmin residual; requests of 1-8 stereo pairs at 256-544 x 512-960 px (multiples of 32, drawn) whose uint8 images are uploaded from a reused pinned host buffer on a side stream one request ahead (the compute stream waits on the upload's event, the tensor record_stream'ed), disparity upsampled to full resolution and copied back as fp16; eval mode, bf16 autocast under inference_mode")
def anynet_stereo_serve(rng):
    nn, f = torch.nn, torch.nn.functional
    groups = 8
    nreq = _smoke(1000, 3)
    feat = _StereoFeat() if _smoke(1, 0) else _StereoFeat((4, 8, 8, 16), 8)
    g = groups if _smoke(1, 0) else 4

    def reg3d(c):
        return nn.Sequential(nn.Conv3d(g, c, 3, 1, 1), nn.BatchNorm3d(c), nn.ReLU(), nn.Conv3d(c, c, 3, 1, 1),
                             nn.BatchNorm3d(c), nn.ReLU(), nn.Conv3d(c, c, 3, 1, 1), nn.BatchNorm3d(c), nn.ReLU(),
                             nn.Conv3d(c, c, 3, 1, 1), nn.ReLU(), nn.Conv3d(c, 1, 3, 1, 1))

    regs = nn.ModuleList([reg3d(_smoke(16, 4)), reg3d(_smoke(8, 4)), reg3d(_smoke(8, 4))])
    model = nn.ModuleList([feat, regs]).cuda().eval()
    bmax, hmax, wmax = _smoke(8, 2), _smoke(544, 64), _smoke(960, 96)
    host = torch.randint(0, 256, (bmax * 2 * 3 * hmax * wmax,), dtype=torch.uint8).pin_memory()
    side = torch.cuda.Stream()

    def draw():
        b = rng.randint(1, bmax)
        h = rng.randrange(_smoke(256, 32), hmax + 1, 32)
        w = rng.randrange(_smoke(512, 64), wmax + 1, 32)
        maxdisp = rng.choice([96, 128, 160, 192, 256]) if _smoke(1, 0) else 32
        return b, h, w, maxdisp, rng.randint(2, 4)

    def upload(req):
        b, h, w = req[:3]
        with torch.cuda.stream(side):
            x = host[:b * 2 * 3 * h * w].to("cuda", non_blocking=True).view(2 * b, 3, h, w)
            ev = side.record_event()
        return x, ev

    def warp(r, disp):
        b, c, h, w = r.shape
        xs = torch.arange(w, device="cuda", dtype=disp.dtype).view(1, 1, w) - disp[:, 0]
        ys = torch.arange(h, device="cuda", dtype=disp.dtype).view(1, h, 1).expand(b, h, w)
        grid = torch.stack([2 * xs / (w - 1) - 1, 2 * ys / (h - 1) - 1], -1)
        return f.grid_sample(r, grid.to(r.dtype), align_corners=True, padding_mode="zeros")

    def run(x, b, maxdisp, R):
        x = (x.float() / 255.0 - 0.45) / 0.225
        f16, f8, f4 = feat(x)
        l16, r16 = f16[:b], f16[b:]
        nd = maxdisp // 16
        vols = [_gcorr(l16, r16, g)]
        for d in range(1, nd):
            vols.append(_gcorr(l16, f.pad(r16[..., :-d], (d, 0)), g))
        cost = regs[0](torch.stack(vols, 2))[:, 0]
        prob = cost.float().softmax(1)
        disp = (prob * torch.arange(nd, device="cuda", dtype=prob.dtype).view(1, nd, 1, 1)).sum(1, keepdim=True)
        offs = torch.arange(-R, R + 1, device="cuda", dtype=torch.float32).view(1, 2 * R + 1, 1, 1)
        for stage, fs in ((1, f8), (2, f4)):
            disp = f.interpolate(disp, size=fs.shape[-2:], mode="bilinear") * 2
            l, r = fs[:b], fs[b:]
            vols = [_gcorr(l, warp(r, disp + o), g) for o in range(-R, R + 1)]
            cost = regs[stage](torch.stack(vols, 2))[:, 0]
            disp = disp + (cost.float().softmax(1) * offs).sum(1, keepdim=True)
        return f.interpolate(disp, size=x.shape[-2:], mode="bilinear") * 4

    nxt = draw()
    pending = upload(nxt)
    with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
        for i in range(nreq):
            req, (x, ev) = nxt, pending
            if i + 1 < nreq:
                nxt = draw()
                pending = upload(nxt)
            torch.cuda.current_stream().wait_event(ev)
            x.record_stream(torch.cuda.current_stream())
            b, h, w, maxdisp, R = req
            disp = run(x, b, maxdisp, R)
            disp.half().cpu()
            del x, disp
    torch.cuda.synchronize()


# ---------------------------------------------------------------- bottom-up pose


_LIMBS = [(1, 2), (1, 5), (2, 3), (3, 4), (5, 6), (6, 7), (1, 8), (8, 9), (9, 10), (1, 11), (11, 12), (12, 13),
          (1, 0), (0, 14), (14, 16), (0, 15), (15, 17), (2, 16), (5, 17)]


class _OpenPose(torch.nn.Module):
    """OpenPose's two-branch multi-stage CPM on a VGG-style backbone (to 1/8), 3x3 stage convs."""

    def __init__(self, w=(64, 128, 256, 512), c=128, stages=3, nparts=19, npaf=38):
        super().__init__()
        nn = torch.nn
        self.backbone = nn.Sequential(_cbr(3, w[0], bn=False), _cbr(w[0], w[0], bn=False), nn.MaxPool2d(2),
                                      _cbr(w[0], w[1], bn=False), _cbr(w[1], w[1], bn=False), nn.MaxPool2d(2),
                                      _cbr(w[1], w[2], bn=False), _cbr(w[2], w[2], bn=False),
                                      _cbr(w[2], w[2], bn=False), nn.MaxPool2d(2),
                                      _cbr(w[2], w[3], bn=False), _cbr(w[3], w[3], bn=False),
                                      _cbr(w[3], c * 2, bn=False), _cbr(c * 2, c, bn=False))

        def branch(cin, cout, n):
            layers = [_cbr(cin if i == 0 else c, c, bn=False) for i in range(n)]
            return nn.Sequential(*layers, _cbr(c, 4 * c, 1, bn=False), nn.Conv2d(4 * c, cout, 1))

        self.paf = nn.ModuleList(branch(c if s == 0 else c + nparts + npaf, npaf, 3 if s == 0 else 5)
                                 for s in range(stages))
        self.hm = nn.ModuleList(branch(c if s == 0 else c + nparts + npaf, nparts, 3 if s == 0 else 5)
                                for s in range(stages))

    def forward(self, x):
        feat = self.backbone(x)
        outs, inp = [], feat
        for pb, hb in zip(self.paf, self.hm):
            p, h = pb(inp), hb(inp)
            outs.append((p, h))
            inp = torch.cat([feat, p, h], 1)
        return outs


@_workload("bottom-up multi-person pose estimation training, OpenPose-style (Cao et al. 2017) written by hand (random init): a VGG-style backbone to 1/8 (64-512 channels) and 3 two-branch stages (part-affinity fields of 19 limbs and 18 part heatmaps plus background; 3 then 5 convs of 128 a branch, 1x1 heads), intermediate supervision at every stage; COCO-style images of 256-512 px each side (multiples of 64, drawn per step) in batches of 4-16 capped at 16 images of 368 px worth of pixels, 1-20 people per image (drawn), whose random keypoints (18 parts, 80% visible) are rendered on the device into targets: Gaussian heatmaps maxed over the image's people (persons padded per image and scattered by index_put) and soft-edged part-affinity fields averaged over overlapping people (index_add over the person-to-image index), MSE losses, AdamW, bf16 autocast; every 60 steps an evaluation of 4 images without grad: peak NMS by max-pooling, the top 24 peaks a part, every candidate limb scored by sampling the PAF at 10 points along it (grid_sample), the best limb scores read back")
def bottomup_pose_train(rng):
    f = torch.nn.functional
    nsteps = _smoke(720, 2)
    model = (_OpenPose() if _smoke(1, 0) else _OpenPose((4, 8, 8, 16), 8, 2)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=1e-4, foreach=True)
    nparts, nl = 18, len(_LIMBS)
    la = torch.tensor([a for a, _ in _LIMBS], device="cuda")
    lb = torch.tensor([b for _, b in _LIMBS], device="cuda")
    sigma, thick = 1.0, 1.0

    def targets(b, h, w, counts):
        ptot = sum(counts)
        img_id = torch.tensor([i for i, c in enumerate(counts) for _ in range(c)], device="cuda")
        slot = torch.tensor([j for c in counts for j in range(c)], device="cuda")
        scale = torch.tensor([w, h], device="cuda", dtype=torch.float32)
        kp = torch.rand(ptot, nparts, 2, device="cuda") * scale
        vis = (torch.rand(ptot, nparts, device="cuda") < 0.8).float()
        gy = torch.arange(h, device="cuda", dtype=torch.float32).view(1, 1, h, 1)
        gx = torch.arange(w, device="cuda", dtype=torch.float32).view(1, 1, 1, w)
        d2 = (gx - kp[..., 0, None, None]) ** 2 + (gy - kp[..., 1, None, None]) ** 2
        g = torch.exp(-d2 / (2 * sigma ** 2)) * vis[..., None, None]
        pad = torch.zeros(b, max(counts), nparts, h, w, device="cuda")
        pad.index_put_((img_id, slot), g)
        hm = pad.amax(1)
        hm = torch.cat([hm, (1 - hm.amax(1, keepdim=True)).clamp(min=0)], 1)
        pa, pb = kp[:, la], kp[:, lb]
        v = pb - pa
        ln = v.norm(dim=-1, keepdim=True).clamp(min=1e-3)
        u = v / ln
        rx, ry = gx - pa[..., 0, None, None], gy - pa[..., 1, None, None]
        along = rx * u[..., 0, None, None] + ry * u[..., 1, None, None]
        perp = (rx * u[..., 1, None, None] - ry * u[..., 0, None, None]).abs()
        wgt = (torch.sigmoid(4 * along) * torch.sigmoid(4 * (ln[..., None] - along)) *
               torch.sigmoid(4 * (thick - perp)) * (vis[:, la] * vis[:, lb])[..., None, None])
        paf = torch.zeros(b, nl, 2, h, w, device="cuda").index_add_(0, img_id, wgt[:, :, None] * u[..., None, None])
        cnt = torch.zeros(b, nl, h, w, device="cuda").index_add_(0, img_id, (wgt > 0.5).float())
        paf = (paf / cnt.clamp(min=1)[:, :, None]).flatten(1, 2)
        return paf, hm

    def evaluate():
        h = w = _smoke(512, 64)
        x = torch.randn(4, 3, h, w, device="cuda")
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            paf, hm = model(x)[-1]
        hm, paf = hm[:, :nparts].float(), paf.float()
        b, _, hh, ww = hm.shape
        peaks = hm * (hm == f.max_pool2d(hm, 3, 1, 1)).float()
        score, idx = peaks.flatten(2).topk(24, -1)
        xy = torch.stack([idx % ww, idx // ww], -1).float()  # (b, 18, 24, 2)
        A, B = xy[:, la][:, :, :, None], xy[:, lb][:, :, None]  # (b, L, 24, 1, 2), (b, L, 1, 24, 2)
        t = torch.linspace(0, 1, 10, device="cuda").view(1, 1, 1, 1, 10, 1)
        pts = A[..., None, :] + t * (B - A)[..., None, :]  # (b, L, 24, 24, 10, 2)
        norm = torch.tensor([ww - 1, hh - 1], device="cuda", dtype=torch.float32)
        grid = (2 * pts / norm - 1).reshape(b * nl, 24 * 24 * 10, 1, 2)
        smp = f.grid_sample(paf.reshape(b * nl, 2, hh, ww), grid, align_corners=True)[..., 0].view(b, nl, 2, 24, 24, 10)
        vec = (B - A)
        vec = vec / vec.norm(dim=-1, keepdim=True).clamp(min=1e-3)
        s = (smp * vec.permute(0, 1, 4, 2, 3)[..., None]).sum(2).mean(-1)  # (b, L, 24, 24)
        s.amax(-1).mean((0, 2)).tolist()

    for step in range(nsteps):
        h = rng.randrange(_smoke(256, 64), _smoke(512, 128) + 1, 64)
        w = rng.randrange(_smoke(256, 64), _smoke(512, 128) + 1, 64)
        b = max(1, min(rng.randint(_smoke(4, 1), _smoke(16, 2)), int(_smoke(16, 2) * 368 * 368 / (h * w))))
        counts = [rng.randint(1, _smoke(20, 3)) for _ in range(b)]
        x = torch.randn(b, 3, h, w, device="cuda")
        paf_t, hm_t = targets(b, h // 8, w // 8, counts)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            outs = model(x)
            loss = sum(f.mse_loss(p.float(), paf_t) + f.mse_loss(q.float(), hm_t) for p, q in outs)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del x, paf_t, hm_t, outs, loss
        if (step + 1) % _smoke(60, 2) == 0:
            evaluate()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- multi-object tracking


class _FairMOT(torch.nn.Module):
    """FairMOT's one-shot tracker: a ResNet-style backbone with an upsampling neck to stride 4 and heads for the
    object-centre heatmap, box size, centre offset and a 128-d re-ID embedding."""

    def __init__(self, c=(32, 64, 128, 256), head=128, emb=128):
        super().__init__()
        nn = torch.nn
        self.stem = nn.Sequential(_cbr(3, c[0], 7, 2), _cbr(c[0], c[0], 3, 2))

        def stage(a, b_):
            return nn.Sequential(_cbr(a, b_, 3, 2), _cbr(b_, b_), _cbr(b_, b_))

        self.s = nn.ModuleList([nn.Sequential(_cbr(c[0], c[0]), _cbr(c[0], c[0])),
                                stage(c[0], c[1]), stage(c[1], c[2]), stage(c[2], c[3])])
        self.lat = nn.ModuleList([nn.Conv2d(ci, c[0] * 2, 1) for ci in c])
        self.heads = nn.ModuleList([nn.Sequential(_cbr(c[0] * 2, head, bn=False), nn.Conv2d(head, o, 1))
                                    for o in (1, 2, 2, emb)])

    def forward(self, x):
        f = torch.nn.functional
        y = self.stem(x)
        feats = []
        for s in self.s:
            y = s(y)
            feats.append(y)
        out = self.lat[3](feats[3])
        for i in (2, 1, 0):
            out = f.interpolate(out, size=feats[i].shape[-2:], mode="nearest") + self.lat[i](feats[i])
        return [h(out) for h in self.heads]


@_workload("multi-object tracking serving, FairMOT/JDE-style (Zhang et al. 2021) with a Kalman-filter tracker written by hand (random weights): a one-shot network (ResNet-style backbone of 32-256 channels, FPN-style upsampling neck to stride 4, heads for the centre heatmap, box size, centre offset and a 128-d re-ID embedding) over sessions of 1-6 synchronized cameras (drawn) at 384x672, 480x864 or 608x1088 (drawn per session) for 40-130 frames (drawn), each frame batch's uint8 images uploaded from a reused pinned host buffer on a side stream one frame ahead (the compute stream waits on the upload's event, the tensor record_stream'ed); per camera and frame: detections as the heatmap's top-K centres (K drawn 1-60 from the camera's crowd level), their boxes and L2-normalized embeddings gathered, the tracks' Kalman predictions (constant velocity, 8-d state, batched 8x8 covariances), a fused cost of embedding cosine distance and Mahalanobis gating (batched 4x4 inverses) plus IoU distance, argmin matching for a drawn number of matches, batched Kalman updates and embedding EMA written back by index_copy_, unmatched detections born as new tracks (torch.cat) and drawn tracks dying (index_select of the survivors), so each camera's track set grows and shrinks; the live tracks' boxes copied back every frame; eval mode, bf16 autocast for the network, the tracker in fp32, inference_mode")
def fairmot_track_serve(rng):
    nsessions = _smoke(6, 2)
    model = (_FairMOT() if _smoke(1, 0) else _FairMOT((4, 8, 8, 16), 8, 16)).cuda().eval()
    emb_dim = 128 if _smoke(1, 0) else 16
    res = [(384, 672), (480, 864), (608, 1088)] if _smoke(1, 0) else [(64, 96), (96, 128)]
    cmax = _smoke(6, 2)
    host = torch.randint(0, 256, (cmax * 3 * res[-1][0] * res[-1][1],), dtype=torch.uint8).pin_memory()
    side = torch.cuda.Stream()
    dt = 1.0
    F = torch.eye(8, device="cuda")
    for i in range(4):
        F[i, i + 4] = dt
    Hm = torch.eye(4, 8, device="cuda")
    std_p, std_v = 1.0 / 20, 1.0 / 160

    def upload(ncam, h, w):
        with torch.cuda.stream(side):
            x = host[:ncam * 3 * h * w].to("cuda", non_blocking=True).view(ncam, 3, h, w)
            ev = side.record_event()
        return x, ev

    def initiate(z):  # z (n, 4) xyah
        mean = torch.cat([z, torch.zeros_like(z)], 1)
        hgt = z[:, 3:4]
        std = torch.cat([2 * std_p * hgt, 2 * std_p * hgt, 1e-2 * torch.ones_like(hgt), 2 * std_p * hgt,
                         10 * std_v * hgt, 10 * std_v * hgt, 1e-5 * torch.ones_like(hgt), 10 * std_v * hgt], 1)
        return mean, torch.diag_embed(std ** 2)

    def project(mean, cov):
        hgt = mean[:, 3:4]
        r = torch.cat([std_p * hgt, std_p * hgt, 1e-1 * torch.ones_like(hgt), std_p * hgt], 1) ** 2
        return mean @ Hm.T, Hm @ cov @ Hm.T + torch.diag_embed(r)

    def xyah_to_tlbr(z):
        wdt = z[:, 2:3] * z[:, 3:4]
        return torch.cat([z[:, :2] - 0.5 * torch.cat([wdt, z[:, 3:4]], 1), z[:, :2] + 0.5 * torch.cat([wdt, z[:, 3:4]], 1)], 1)

    def iou(a, b):  # tlbr (n,4), (m,4) -> (n, m)
        lt = torch.maximum(a[:, None, :2], b[None, :, :2])
        rb = torch.minimum(a[:, None, 2:], b[None, :, 2:])
        inter = (rb - lt).clamp(min=0).prod(-1)
        area = lambda t: (t[:, 2:] - t[:, :2]).clamp(min=0).prod(-1)
        return inter / (area(a)[:, None] + area(b)[None] - inter + 1e-6)

    def track_camera(trk, hm, wh, off, emb, k, crowd):
        _, h, w = hm.shape
        score, idx = hm.flatten().sigmoid().topk(k)
        ys, xs = (idx // w).float(), (idx % w).float()
        o = off.flatten(1)[:, idx]
        s = wh.flatten(1)[:, idx].float().exp() * 8
        cx, cy = (xs + o[0].float()) * 4, (ys + o[1].float()) * 4
        z = torch.stack([cx, cy, s[0] / s[1].clamp(min=1e-3), s[1]], 1)
        e = torch.nn.functional.normalize(emb.flatten(1)[:, idx].T.float(), dim=1)
        T = trk["n"]
        if T == 0:
            trk["mean"], trk["cov"] = initiate(z)
            trk["emb"], trk["n"] = e, k
            return
        mean = trk["mean"] @ F.T
        q = torch.cat([std_p * mean[:, 3:4].expand(-1, 4), std_v * mean[:, 3:4].expand(-1, 4)], 1) ** 2
        cov = F @ trk["cov"] @ F.T + torch.diag_embed(q)
        pm, pc = project(mean, cov)
        Sinv = torch.linalg.inv(pc)
        d = z[:, None] - pm[None]  # (k, T, 4)
        maha = torch.einsum("kti,tij,ktj->kt", d, Sinv, d)
        cost = 1 - e @ trk["emb"].T
        cost = 0.98 * cost + 0.02 * maha + 1e5 * (maha > 9.4877).float()
        cost = 0.9 * cost + 0.1 * (1 - iou(xyah_to_tlbr(z), xyah_to_tlbr(pm)))
        m = max(0, min(k, int(min(k, T) * rng.uniform(0.5, 1.0))))
        if m > 0:
            tr = cost[:m].argmin(1)
            K = cov[tr] @ Hm.T @ Sinv[tr]  # (m, 8, 4)
            innov = z[:m] - pm[tr]
            mean_m = mean[tr] + (K @ innov[..., None])[..., 0]
            cov_m = cov[tr] - K @ pc[tr] @ K.transpose(1, 2)
            mean = mean.index_copy(0, tr, mean_m)
            cov = cov.index_copy(0, tr, cov_m)
            e_new = torch.nn.functional.normalize(0.9 * trk["emb"][tr] + 0.1 * e[:m], dim=1)
            trk["emb"] = trk["emb"].index_copy(0, tr, e_new)
        keep = [i for i in range(T) if rng.random() > crowd * 0.15]
        if len(keep) < T:
            kt = torch.tensor(keep, device="cuda", dtype=torch.long)
            mean, cov, trk["emb"] = mean.index_select(0, kt), cov.index_select(0, kt), trk["emb"].index_select(0, kt)
        if m < k:
            nm, nc = initiate(z[m:])
            mean, cov = torch.cat([mean, nm]), torch.cat([cov, nc])
            trk["emb"] = torch.cat([trk["emb"], e[m:]])
        trk["mean"], trk["cov"], trk["n"] = mean, cov, len(keep) + k - m

    sessions = [(rng.randint(1, cmax), rng.choice(res), rng.randint(_smoke(40, 2), _smoke(130, 3)))
                for _ in range(nsessions)]
    frames = [(ncam, h, w) for ncam, (h, w), nf in sessions for _ in range(nf)]
    starts = set()
    t = 0
    for ncam, _, nf in sessions:
        starts.add(t)
        t += nf
    pending = upload(*frames[0])
    tracks = crowd = None
    with torch.inference_mode():
        for i, (ncam, h, w) in enumerate(frames):
            if i in starts:
                tracks = [dict(n=0) for _ in range(ncam)]
                crowd = [rng.uniform(0.1, 1.0) for _ in range(ncam)]
            x, ev = pending
            if i + 1 < len(frames):
                pending = upload(*frames[i + 1])
            torch.cuda.current_stream().wait_event(ev)
            x.record_stream(torch.cuda.current_stream())
            with torch.autocast("cuda", dtype=torch.bfloat16):
                hm, wh, off, emb = model((x.float() / 255.0 - 0.45) / 0.225)
            for c in range(ncam):
                k = max(1, int(rng.randint(1, _smoke(60, 6)) * crowd[c]))
                track_camera(tracks[c], hm[c].float(), wh[c], off[c], emb[c], k, crowd[c])
            torch.cat([xyah_to_tlbr(tr["mean"][:, :4]) for tr in tracks]).cpu()
            del x, hm, wh, off, emb
    torch.cuda.synchronize()


# ---------------------------------------------------------------- point-cloud registration


class _DGCNN(torch.nn.Module):
    """DCP's DGCNN embedding: EdgeConv layers over a k=20 nearest-neighbour graph rebuilt in feature space at
    every layer, their outputs concatenated and projected."""

    def __init__(self, widths=(64, 64, 128, 256), emb=512, k=20):
        super().__init__()
        nn = torch.nn
        self.k = k
        self.convs = nn.ModuleList()
        cin = 3
        for w in widths:
            self.convs.append(nn.Sequential(nn.Conv2d(2 * cin, w, 1, bias=False), nn.BatchNorm2d(w),
                                            nn.LeakyReLU(0.2)))
            cin = w
        self.out = nn.Sequential(nn.Conv1d(sum(widths), emb, 1, bias=False), nn.BatchNorm1d(emb), nn.LeakyReLU(0.2))

    def forward(self, x):  # (B, 3, N)
        B, _, N = x.shape
        outs = []
        for conv in self.convs:
            xt = x.transpose(1, 2)
            d = -2 * xt @ x + (x * x).sum(1, keepdim=True) + (x * x).sum(1)[..., None]
            idx = d.topk(self.k, -1, largest=False)[1]  # (B, N, k)
            flat = (idx + torch.arange(B, device=x.device).view(B, 1, 1) * N).flatten()
            nb = xt.reshape(B * N, -1)[flat].view(B, N, self.k, -1)
            ctr = xt[:, :, None].expand(-1, -1, self.k, -1)
            e = torch.cat([nb - ctr, ctr], -1).permute(0, 3, 1, 2)
            x = conv(e).amax(-1)
            outs.append(x)
        return self.out(torch.cat(outs, 1))


def _rand_rot(B, max_angle):
    axis = torch.nn.functional.normalize(torch.randn(B, 3, device="cuda"), dim=1)
    ang = (torch.rand(B, 1, device="cuda") * 2 - 1) * max_angle
    K = torch.zeros(B, 3, 3, device="cuda")
    K[:, 0, 1], K[:, 0, 2], K[:, 1, 2] = -axis[:, 2], axis[:, 1], -axis[:, 0]
    K = K - K.transpose(1, 2)
    s, c = ang.sin()[..., None], ang.cos()[..., None]
    return torch.eye(3, device="cuda") + s * K + (1 - c) * K @ K


def _procrustes(src, corr, w=None):  # (B, 3, N) each -> R (B, 3, 3), t (B, 3)
    if w is None:
        ms, mc = src.mean(2, keepdim=True), corr.mean(2, keepdim=True)
        H = (src - ms) @ (corr - mc).transpose(1, 2)
    else:
        ms, mc = (src * w).sum(2, keepdim=True), (corr * w).sum(2, keepdim=True)
        H = (src - ms) * w @ (corr - mc).transpose(1, 2)
    U, S, Vh = torch.linalg.svd(H)
    V = Vh.transpose(1, 2)
    d = torch.linalg.det(V @ U.transpose(1, 2))
    D = torch.diag_embed(torch.stack([torch.ones_like(d), torch.ones_like(d), d], 1))
    R = V @ D @ U.transpose(1, 2)
    t = mc[..., 0] - (R @ ms)[..., 0]
    return R, t


@_workload("point-cloud registration training, Deep Closest Point (Wang & Solomon 2019, DCP-v2) written by hand (random init, fp32): a DGCNN embedding (EdgeConv layers of 64-64-128-256 over a k=20 nearest-neighbour graph rebuilt in feature space at each layer by a pairwise-distance topk, concatenated and projected to 512) shared by source and target, a Transformer (1 encoder and 1 decoder layer of 512, 4 heads) attending each cloud to the other, soft correspondences by a softmax over the N x M embedding similarities, rigid motion by SVD Procrustes with the reflection fix (batched 3x3 SVD and determinants); synthetic ModelNet-like shapes: every step a batch of 3-32 source clouds of 512-1536 points (drawn, capped at 5120 points a step), a random rotation of up to 45 degrees and translation, the target a random permutation of the moved cloud with noise cropped to 70-100% overlap (M drawn), loss on R^T R_gt - I and the translation plus a cycle term, Adam, 160 steps; every 40 steps an evaluation batch without grad refined by 5-20 ICP iterations (drawn: cdist nearest neighbours, Procrustes), the rotation error read back")
def dcp_registration_train(rng):
    nn, f = torch.nn, torch.nn.functional
    nsteps = _smoke(160, 2)
    emb = _smoke(512, 16)
    dg = _DGCNN((64, 64, 128, 256), emb) if _smoke(1, 0) else _DGCNN((8, 8, 8, 8), emb, 4)
    tf = nn.Transformer(emb, _smoke(4, 2), 1, 1, _smoke(1024, 32), 0.0, batch_first=True)
    model = nn.ModuleList([dg, tf]).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=True)

    def make(B, N):
        pts = f.normalize(torch.randn(B, N, 3, device="cuda"), dim=-1) * (0.5 + 0.5 * torch.rand(B, 1, 3, device="cuda"))
        pts = pts + 0.05 * torch.randn_like(pts)
        R = _rand_rot(B, math.pi / 4)
        t = torch.rand(B, 3, device="cuda") - 0.5
        M = max(_smoke(64, 8), int(N * rng.uniform(0.7, 1.0)))
        moved = pts @ R.transpose(1, 2) + t[:, None] + 0.01 * torch.randn_like(pts)
        perm = torch.rand(B, N, device="cuda").argsort(1)[:, :M]
        tgt = torch.gather(moved, 1, perm[..., None].expand(-1, -1, 3))
        return pts.transpose(1, 2).contiguous(), tgt.transpose(1, 2).contiguous(), R, t

    def forward(src, tgt):
        es, et = dg(src), dg(tgt)
        a, b = es.transpose(1, 2), et.transpose(1, 2)
        ps = tf(b, a).transpose(1, 2)
        pt = tf(a, b).transpose(1, 2)
        es, et = es + ps, et + pt
        scores = torch.softmax(es.transpose(1, 2) @ et / math.sqrt(es.shape[1]), -1)  # (B, N, M)
        corr = tgt @ scores.transpose(1, 2)  # (B, 3, N)
        return _procrustes(src, corr)

    eye = torch.eye(3, device="cuda")
    for step in range(nsteps):
        N = rng.randint(_smoke(512, 16), _smoke(1536, 32))
        B = max(1, min(rng.randint(_smoke(3, 1), _smoke(32, 2)), _smoke(5120, 64) // N))
        src, tgt, Rg, tg = make(B, N)
        R, t = forward(src, tgt)
        Rb, tb = forward(tgt, src)
        loss = (f.mse_loss(R.transpose(1, 2) @ Rg, eye.expand(B, 3, 3)) + f.mse_loss(t, tg) +
                0.1 * (f.mse_loss(R @ Rb, eye.expand(B, 3, 3)) + f.mse_loss((R @ tb[..., None])[..., 0] + t, torch.zeros_like(t))))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del src, tgt, R, t, Rb, tb, loss
        if (step + 1) % _smoke(40, 2) == 0:
            with torch.no_grad():
                N = rng.randint(_smoke(512, 16), _smoke(1536, 32))
                B = max(1, _smoke(5120, 64) // N)
                src, tgt, Rg, tg = make(B, N)
                R, t = forward(src, tgt)
                for _ in range(rng.randint(5, 20)):
                    cur = R @ src + t[..., None]
                    nn_idx = torch.cdist(cur.transpose(1, 2), tgt.transpose(1, 2)).argmin(-1)
                    corr = torch.gather(tgt, 2, nn_idx[:, None].expand(-1, 3, -1))
                    dR, dt = _procrustes(cur, corr)
                    R, t = dR @ R, (dR @ t[..., None])[..., 0] + dt
                ((R.transpose(1, 2) @ Rg).diagonal(dim1=1, dim2=2).sum(-1).sub(1).div(2).clamp(-1, 1).acos()
                 .mean()).tolist()
                del src, tgt, R, t
    torch.cuda.synchronize()

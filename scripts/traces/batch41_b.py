"""The forty-first batch of held-out workloads for record.py, second half (batch41.py holds the first): dense
vision prediction and video. Scene-text OCR serving as a detection-then-recognition pipeline (a DBNet-style
probability map over pages of varying size, then a varying number of text lines of varying length cropped by
roi_align into width buckets and recognized by a CNN-transformer CTC model; pages uploaded on a side stream),
trimap-based image matting training (alpha, foreground and background composited on the device, trimaps by
dilation and erosion of drawn widths, crops and batches of varying size, whole-image evaluation at varying
resolution), monocular relative-depth training (DPT-style ViT with position embeddings interpolated to each
batch's grid, a scale-and-shift-invariant loss solved per image, multi-resolution batches from mixed datasets),
and dense point tracking serving (CoTracker-style sliding windows over videos of varying length, query points of
varying count that join as the window reaches their frame, iterative correlation and a time/point transformer).
Same conventions as batch41.py: models built from configs (hand-written torch) with random weights, nothing
downloaded, `rng` the workload's random.Random for every shape, sizes through `_smoke(real, small)` so that
RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value (text boxes, query frames and counts are
drawn on the host). dbnet_ocr_serve uses a side stream (uploads waited on by event, tensors record_stream'ed);
the others are single-stream. matting_trimap_train and dpt_depth_train run under bf16 autocast, dbnet_ocr_serve
and cotracker_points_serve under fp16 autocast (inference_mode).

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. The plumbing is batch_common.py's.

Real sizes checked before recording: every workload of this half was run whole, at its real sizes (RECORD_SMOKE
unset), on PyTorch's meta device (a runner like /tmp/b41/meta_run.py, not committed: smoke_cpu.py's patching
with "cuda" mapped to "meta", readbacks answered with dummies, autocast a no-op so that fp32 sizes are counted;
boolean-mask indexing, which the meta device cannot size, is avoided) and its op outputs counted there (events
about 1.8x that count); the counts and peaks are in record_new41.sh's header. The CPU smoke run (RECORD_SMOKE=1)
ran all four.
"""

import math

import torch

from batch_common import Batch
from batch41 import _Backbone, _Basic, _conv_gn
from workload_helpers import _mha, _sincos

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


class _PreNormBlock(torch.nn.Module):
    """A pre-norm transformer block (self-attention by _mha, GELU MLP 4x) over (N, L, C) tokens."""

    def __init__(self, c, heads):
        super().__init__()
        nn = torch.nn
        self.heads = heads
        self.n1, self.qkv, self.o = nn.LayerNorm(c), nn.Linear(c, 3 * c), nn.Linear(c, c)
        self.n2, self.mlp = nn.LayerNorm(c), nn.Sequential(nn.Linear(c, 4 * c), nn.GELU(), nn.Linear(4 * c, c))

    def forward(self, x):
        q, k, v = self.qkv(self.n1(x)).chunk(3, -1)
        x = x + self.o(_mha(q, k, v, self.heads))
        return x + self.mlp(self.n2(x))


# ---------------------------------------------------------------- OCR detection + recognition serving


class _DBNet(torch.nn.Module):
    """DBNet's inference path: a ResNet-18-shaped trunk, an FPN of 128 whose four levels are reduced to 32 each,
    upsampled to stride 4 and concatenated, and the probability head (conv, two stride-2 transposed convs, sigmoid)."""

    def __init__(self, widths=(64, 128, 256, 512), c=128):
        super().__init__()
        nn = torch.nn
        self.backbone = _Backbone(widths)
        self.lat = nn.ModuleList([nn.Conv2d(w, c, 1, bias=False) for w in widths])
        self.smooth = nn.ModuleList([nn.Conv2d(c, c // 4, 3, 1, 1, bias=False) for _ in widths])
        self.prob = nn.Sequential(nn.Conv2d(c, c // 4, 3, 1, 1, bias=False), nn.BatchNorm2d(c // 4), nn.ReLU(),
                                  nn.ConvTranspose2d(c // 4, c // 4, 2, 2), nn.BatchNorm2d(c // 4), nn.ReLU(),
                                  nn.ConvTranspose2d(c // 4, 1, 2, 2))

    def forward(self, x):
        f = torch.nn.functional
        lat = [l(t) for l, t in zip(self.lat, self.backbone(x))]
        for i in range(2, -1, -1):
            lat[i] = lat[i] + f.interpolate(lat[i + 1], size=lat[i].shape[-2:], mode="nearest")
        size = lat[0].shape[-2:]
        fuse = torch.cat([f.interpolate(s(t), size=size, mode="nearest") for s, t in zip(self.smooth, lat)], 1)
        return torch.sigmoid(self.prob(fuse))


class _TextRecognizer(torch.nn.Module):
    """A CNN to a single row at stride 4 along the line, 2 pre-norm transformer layers of 256, a CTC head."""

    def __init__(self, charset=6625, c=(64, 128, 256), d=256, layers=2):
        super().__init__()
        nn = torch.nn
        self.cnn = nn.Sequential(_conv_gn(3, c[0]), nn.MaxPool2d(2), _conv_gn(c[0], c[1]), nn.MaxPool2d(2),
                                 _conv_gn(c[1], c[2]), _conv_gn(c[2], c[2]), nn.MaxPool2d((2, 1)),
                                 _conv_gn(c[2], d), nn.MaxPool2d((2, 1)))
        self.pos = nn.Parameter(torch.randn(1, 512, d) * 0.02)
        self.blocks = nn.ModuleList([_PreNormBlock(d, 8) for _ in range(layers)])
        self.head = nn.Linear(d, charset + 1)

    def forward(self, x):  # (n, 3, 32, W) -> (n, W/4, charset + 1)
        h = self.cnn(x).mean(2).transpose(1, 2)
        h = h + self.pos[:, :h.shape[1]]
        for blk in self.blocks:
            h = blk(h)
        return self.head(h)


@_workload("scene-text OCR serving, detection then recognition (a PaddleOCR/MMOCR-style pipeline) written by hand (random weights): a DBNet detector (Liao et al. 2020: ResNet-18-shaped trunk, FPN of 128 reduced to 4 x 32 at stride 4, probability head with two transposed convs) over requests of 1-4 pages (drawn) resized to a longer side of 736-1600 px (multiples of 32) at an aspect of 0.6-1.6 (drawn), whose uint8 pixels are uploaded from a reused pinned host buffer on a side stream one request ahead (the compute stream waits on the upload's event, the tensor record_stream'ed), the binarized probability map copied back as uint8 (where the host would trace contours); 3-150 text lines a page (drawn log-uniform: heights 10-64 px, 1-60 characters) cropped from the normalized page by torchvision roi_align to 32 px high and a width bucket of 64-768 px (multiples of 64, from the line's aspect), the lines grouped by bucket into batches of at most 96 and recognized by a CNN (64-256, GroupNorm) to W/4 columns, 2 pre-norm transformer layers of 256 (8 heads, learned positions) and a CTC head over 6625 characters + blank, greedy CTC decoding (argmax, collapse by comparing neighbours) and the label ids copied back; eval mode, fp16 autocast under inference_mode")
def dbnet_ocr_serve(rng):
    from torchvision.ops import roi_align
    nreq = _smoke(540, 3)
    det = (_DBNet() if _smoke(1, 0) else _DBNet((8, 8, 16, 16), 16)).cuda().eval()
    rec = (_TextRecognizer() if _smoke(1, 0) else _TextRecognizer(50, (8, 8, 16), 16, 1)).cuda().eval()
    bmax, side_max = _smoke(4, 2), _smoke(1600, 128)
    host = torch.randint(0, 256, (bmax * 3 * side_max * side_max,), dtype=torch.uint8).pin_memory()
    side = torch.cuda.Stream()
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1)
    per_batch = _smoke(96, 4)

    def draw():
        b = rng.randint(1, bmax)
        longer = rng.randrange(_smoke(736, 64), side_max + 1, 32)
        ar = rng.uniform(0.6, 1.6)
        shorter = max(32, int(longer / max(ar, 1 / ar)) // 32 * 32)
        h, w = (longer, shorter) if ar > 1 else (shorter, longer)
        lines = []  # (page, x0, y0, x1, y1, bucket)
        for p in range(b):
            for _ in range(int(_loguniform(rng, 3, _smoke(150, 6)))):
                lh = rng.uniform(10, 64)
                lw = min(w - 2, lh * rng.randint(1, 60) * rng.uniform(0.5, 1.0) + lh)
                x0, y0 = rng.uniform(0, w - lw), rng.uniform(0, h - lh)
                bucket = min(_smoke(768, 128), max(64, int(math.ceil(lw * 32 / lh / 64)) * 64))
                lines.append((p, x0, y0, x0 + lw, y0 + lh, bucket))
        return b, h, w, lines

    def upload(req):
        b, h, w, _ = req
        with torch.cuda.stream(side):
            x = host[:b * h * w * 3].to("cuda", non_blocking=True).view(b, h, w, 3)
            ev = side.record_event()
        return x, ev

    nxt = draw()
    pending = upload(nxt)
    with torch.inference_mode(), torch.autocast("cuda", dtype=torch.float16):
        for i in range(nreq):
            req, (x, ev) = nxt, pending
            if i + 1 < nreq:
                nxt = draw()
                pending = upload(nxt)
            torch.cuda.current_stream().wait_event(ev)
            x.record_stream(torch.cuda.current_stream())
            b, h, w, lines = req
            img = (x.permute(0, 3, 1, 2).float() / 255.0 - mean) / std
            prob = det(img)
            (prob > 0.3).to(torch.uint8).cpu()
            buckets = {}
            for ln in lines:
                buckets.setdefault(ln[5], []).append(ln)
            for bw, group in sorted(buckets.items()):
                for g0 in range(0, len(group), per_batch):
                    part = group[g0:g0 + per_batch]
                    boxes = torch.tensor([[float(p), x0, y0, x1, y1] for p, x0, y0, x1, y1, _ in part], device="cuda")
                    crops = roi_align(img, boxes, output_size=(32, bw), spatial_scale=1.0, sampling_ratio=2, aligned=True)
                    ids = rec(crops).argmax(-1)
                    keep = torch.cat([torch.ones_like(ids[:, :1]), (ids[:, 1:] != ids[:, :-1]).long()], 1) * (ids > 0).long()
                    (ids * keep).to(torch.int16).cpu()
            del x, img, prob
    torch.cuda.synchronize()


# ---------------------------------------------------------------- image matting training


class _MattingNet(torch.nn.Module):
    """A GCA/DIM-style encoder-decoder: a ResNet-34-shaped trunk on RGB + a one-hot trimap (6 channels), shortcut
    convs from the input at strides 1 and 2, a decoder of basic blocks upsampling by 2 with skip additions at every
    stride down to 1, a sigmoid alpha."""

    def __init__(self, widths=(64, 128, 256, 512), depth=(3, 4, 6, 3), sc=(32, 32)):
        super().__init__()
        nn = torch.nn
        self.enc = _Backbone(widths, depth, cin=6)
        self.sc1 = nn.Sequential(_conv_gn(6, sc[0], groups=8), _conv_gn(sc[0], sc[0], groups=8))
        self.sc2 = nn.Sequential(nn.Conv2d(6, sc[1], 3, 2, 1), nn.ReLU(), _conv_gn(sc[1], widths[0], groups=8))
        self.dec = nn.ModuleList([_Basic(widths[3], widths[2]), _Basic(widths[2], widths[1]), _Basic(widths[1], widths[0]),
                                  _Basic(widths[0], widths[0]), _Basic(widths[0], sc[0])])
        self.out = nn.Conv2d(sc[0], 1, 3, 1, 1)

    def forward(self, x):
        f = torch.nn.functional
        f4, f8, f16, f32 = self.enc(x)
        skips = [f16, f8, f4, self.sc2(x), self.sc1(x)]
        h = f32
        for blk, s in zip(self.dec, skips):
            h = blk(f.interpolate(h, scale_factor=2.0, mode="nearest")) + s
        return torch.sigmoid(self.out(h))


def _gauss5(x):
    k = torch.tensor([1.0, 4.0, 6.0, 4.0, 1.0], device=x.device, dtype=x.dtype) / 16
    k2 = (k[:, None] * k[None]).view(1, 1, 5, 5).expand(x.shape[1], 1, 5, 5)
    return torch.nn.functional.conv2d(torch.nn.functional.pad(x, (2, 2, 2, 2), mode="reflect"), k2, groups=x.shape[1])


def _laplacian_loss(p, t, levels=5):
    f = torch.nn.functional
    loss = 0
    for lv in range(levels):
        bp, bt = _gauss5(p), _gauss5(t)
        dp, dt = bp[..., ::2, ::2], bt[..., ::2, ::2]
        up = lambda d, ref: _gauss5(f.interpolate(d, size=ref.shape[-2:], mode="nearest"))  # noqa: E731
        loss = loss + (2 ** lv) * ((p - up(dp, p)) - (t - up(dt, t))).abs().mean()
        p, t = dp, dt
    return loss


@_workload("trimap-based image matting training, GCA/Deep-Image-Matting-style written by hand (random init): a ResNet-34-shaped encoder on RGB plus a one-hot trimap (6 channels), shortcut convs at strides 1 and 2, a decoder of basic blocks upsampling to full resolution with skip additions, a sigmoid alpha; training data composited on the device as the Adobe-composition recipe does: smooth random alpha mattes (low-resolution noise upsampled and sharpened), foregrounds and backgrounds, image = alpha x fg + (1 - alpha) x bg, trimaps from the alpha by max-pool dilation and erosion with a kernel of 7-31 px (drawn per step); crops of 320, 480, 640 or 800 px (drawn per step) in batches of 2-12 capped at 7 crops of 512 px worth of pixels; alpha L1 and composition L1 on the unknown region (float masks) plus a 5-level Laplacian-pyramid loss (Gaussian 5x5 depthwise convs), AdamW with warmup, bf16 autocast; every 40 steps a whole-image evaluation of one image of 720-2000 px each side (drawn, padded to a multiple of 32) without grad, the SAD on the unknown region read back")
def matting_trimap_train(rng):
    f = torch.nn.functional
    nsteps = _smoke(280, 2)
    model = (_MattingNet() if _smoke(1, 0) else _MattingNet((8, 8, 16, 16), (1, 1, 1, 1), (8, 8))).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=4e-4, betas=(0.5, 0.999), weight_decay=1e-4, foreach=True)
    warm = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 50))

    def compose(b, h, w, k):
        lo = torch.randn(b, 1, h // 32 + 2, w // 32 + 2, device="cuda")
        alpha = torch.sigmoid(4 * f.interpolate(lo, size=(h, w), mode="bicubic"))
        fg = torch.rand(b, 3, h, w, device="cuda")
        bg = torch.rand(b, 3, h, w, device="cuda")
        img = alpha * fg + (1 - alpha) * bg
        fgm = (alpha > 0.99).float()
        anym = (alpha > 0.01).float()
        dil = f.max_pool2d(anym, k, 1, k // 2)
        ero = 1 - f.max_pool2d(1 - fgm, k, 1, k // 2)
        unknown = (dil - ero).clamp(0, 1)
        tri = torch.cat([1 - dil, unknown, ero], 1)
        return img, alpha, fg, bg, tri, unknown

    def evaluate():
        h, w = rng.randint(_smoke(720, 64), _smoke(2000, 96)), rng.randint(_smoke(720, 64), _smoke(2000, 96))
        H, W = (h + 31) // 32 * 32, (w + 31) // 32 * 32
        img, alpha, _, _, tri, unknown = compose(1, h, w, 15)
        x = f.pad(torch.cat([img, tri], 1), (0, W - w, 0, H - h), mode="reflect")
        model.eval()
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(x)[..., :h, :w].float()
        model.train()
        ((pred - alpha).abs() * unknown).sum().item()

    for step in range(nsteps):
        s = rng.choice([320, 480, 640, 800]) if _smoke(1, 0) else rng.choice([64, 96])
        b = max(2, min(rng.randint(2, _smoke(12, 2)), int(_smoke(7, 2) * 512 * 512 / (s * s))))
        k = rng.randrange(7, 32, 2)
        img, alpha, fg, bg, tri, unknown = compose(b, s, s, k)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(torch.cat([img, tri], 1)).float()
        pred = pred * unknown + (1 - unknown) * tri[:, 2:3]  # known pixels taken from the trimap, as GCA does
        n = unknown.sum().clamp(min=1)
        l_alpha = ((pred - alpha).abs() * unknown).sum() / n
        comp = pred * fg + (1 - pred) * bg
        l_comp = ((comp - img).abs() * unknown).sum() / (3 * n)
        loss = l_alpha + l_comp + _laplacian_loss(pred, alpha)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        warm.step()
        del img, alpha, fg, bg, tri, unknown, pred, comp, loss
        if (step + 1) % _smoke(40, 2) == 0:
            evaluate()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- monocular relative-depth training


class _Dpt(torch.nn.Module):
    """DPT (Ranftl et al. 2021) on a ViT-S/16: learned positions interpolated to the batch's grid, four hooked
    layers reassembled to strides 4/8/16/32 (1x1 projections, transposed convs or a strided conv), projected to
    128, RefineNet-style fusion blocks (residual conv units, bilinear x2), a head to full resolution."""

    def __init__(self, width=384, layers=12, heads=6, hooks=(2, 5, 8, 11), feats=(48, 96, 192, 384), c=128, grid=24):
        super().__init__()
        nn = torch.nn
        self.hooks, self.grid = hooks, grid
        self.patch = nn.Conv2d(3, width, 16, 16)
        self.cls = nn.Parameter(torch.zeros(1, 1, width))
        self.pos = nn.Parameter(torch.randn(1, 1 + grid * grid, width) * 0.02)
        self.blocks = nn.ModuleList([_PreNormBlock(width, heads) for _ in range(layers)])
        self.proj = nn.ModuleList([nn.Conv2d(width, fc, 1) for fc in feats])
        self.resample = nn.ModuleList([nn.ConvTranspose2d(feats[0], feats[0], 4, 4), nn.ConvTranspose2d(feats[1], feats[1], 2, 2),
                                       nn.Identity(), nn.Conv2d(feats[3], feats[3], 3, 2, 1)])
        self.rn = nn.ModuleList([nn.Conv2d(fc, c, 3, 1, 1, bias=False) for fc in feats])
        self.rcu = nn.ModuleList([nn.ModuleList([nn.Sequential(nn.ReLU(), nn.Conv2d(c, c, 3, 1, 1), nn.ReLU(),
                                                               nn.Conv2d(c, c, 3, 1, 1)) for _ in range(2)])
                                  for _ in feats])
        self.fout = nn.ModuleList([nn.Conv2d(c, c, 1) for _ in feats])
        self.head = nn.Sequential(nn.Conv2d(c, c // 2, 3, 1, 1), nn.Upsample(scale_factor=2.0, mode="bilinear"),
                                  nn.Conv2d(c // 2, 32, 3, 1, 1), nn.ReLU(), nn.Conv2d(32, 1, 1), nn.ReLU())

    def forward(self, x):
        f = torch.nn.functional
        b, _, h, w = x.shape
        gh, gw = h // 16, w // 16
        t = self.patch(x).flatten(2).transpose(1, 2)
        pos = self.pos[:, 1:].reshape(1, self.grid, self.grid, -1).permute(0, 3, 1, 2)
        pos = f.interpolate(pos, size=(gh, gw), mode="bicubic", align_corners=False).flatten(2).transpose(1, 2)
        t = torch.cat([self.cls.expand(b, -1, -1) + self.pos[:, :1], t + pos], 1)
        taps = []
        for i, blk in enumerate(self.blocks):
            t = blk(t)
            if i in self.hooks:
                taps.append(t[:, 1:].transpose(1, 2).reshape(b, -1, gh, gw))
        maps = [rn(rs(pj(tp))) for tp, pj, rs, rn in zip(taps, self.proj, self.resample, self.rn)]
        path = None
        for lv in range(3, -1, -1):
            m = maps[lv]
            if path is not None:
                m = m + self.rcu[lv][0](m) + f.interpolate(path, size=m.shape[-2:], mode="bilinear")
            m = m + self.rcu[lv][1](m)
            path = self.fout[lv](f.interpolate(m, scale_factor=2.0, mode="bilinear", align_corners=True))
        return self.head(path)[:, 0]


def _ssi_align(pred, gt, mask):
    """MiDaS's scale-and-shift alignment: per image the least-squares s, t of s*pred + t to gt over the mask."""
    a00, a01, a11 = (mask * pred * pred).sum((1, 2)), (mask * pred).sum((1, 2)), mask.sum((1, 2))
    b0, b1 = (mask * pred * gt).sum((1, 2)), (mask * gt).sum((1, 2))
    det = (a00 * a11 - a01 * a01).clamp(min=1e-6)
    s = (a11 * b0 - a01 * b1) / det
    t = (-a01 * b0 + a00 * b1) / det
    return s[:, None, None] * pred + t[:, None, None]


@_workload("monocular relative-depth training on mixed datasets, MiDaS v3/DPT-style (Ranftl et al. 2020, 2021) written by hand (random init): a DPT on a ViT-S/16 (12 pre-norm blocks of 384, 6 heads, a class token, learned 24x24 positions interpolated bicubically to each batch's grid), four hooked layers reassembled to strides 4/8/16/32 and fused by RefineNet-style blocks (128), a head to full-resolution inverse depth; each step a batch from one of five dataset styles (drawn: dense indoor, dense synthetic, stereo-derived with 60-90% valid pixels, LiDAR-sparse with 5-30% valid, web stereo with sky masked) at 256-640 x 256-640 px (multiples of 32, drawn) in batches of 2-16 capped at 10 images of 384 px worth of pixels, smooth random disparity targets and validity masks made on the device (float masks); the scale-and-shift-invariant loss (per-image least-squares scale and shift in closed form, masked MAE) plus a multi-scale gradient-matching term over 4 scales (strided subsampling), AdamW with the backbone at a tenth of the decoder's rate, bf16 autocast; every 50 steps an evaluation of 2 images at 384-768 px each side (drawn) without grad, the aligned RMSE read back")
def dpt_depth_train(rng):
    f = torch.nn.functional
    nsteps = _smoke(210, 2)
    model = (_Dpt() if _smoke(1, 0) else _Dpt(32, 4, 2, (0, 1, 2, 3), (8, 8, 16, 16), 16, 4)).cuda()
    backbone = [p for n, p in model.named_parameters() if n.startswith(("patch", "cls", "pos", "blocks"))]
    rest = [p for n, p in model.named_parameters() if not n.startswith(("patch", "cls", "pos", "blocks"))]
    opt = torch.optim.AdamW([{"params": backbone, "lr": 1e-5}, {"params": rest, "lr": 1e-4}], weight_decay=1e-4,
                            foreach=True)
    styles = [(1.0, 1.0), (1.0, 1.0), (0.6, 0.9), (0.05, 0.3), (0.7, 0.95)]

    def data(b, h, w, lo, hi):
        lo_res = torch.rand(b, 1, h // 32 + 2, w // 32 + 2, device="cuda")
        gt = f.interpolate(lo_res, size=(h, w), mode="bicubic")[:, 0].clamp(min=0) + 0.1
        keep = torch.rand(b, 1, 1, device="cuda") * (hi - lo) + lo
        mask = (torch.rand(b, h, w, device="cuda") < keep).float()
        return torch.randn(b, 3, h, w, device="cuda"), gt, mask

    def grad_loss(res, mask):
        loss = 0
        for sc in range(4):
            step = 2 ** sc
            r, m = res[:, ::step, ::step], mask[:, ::step, ::step]
            gx = (r[:, :, 1:] - r[:, :, :-1]).abs() * m[:, :, 1:] * m[:, :, :-1]
            gy = (r[:, 1:] - r[:, :-1]).abs() * m[:, 1:] * m[:, :-1]
            loss = loss + (gx.sum() + gy.sum()) / m.sum().clamp(min=1)
        return loss

    def evaluate():
        h, w = rng.randrange(_smoke(384, 64), _smoke(768, 96) + 1, 32), rng.randrange(_smoke(384, 64), _smoke(768, 96) + 1, 32)
        x, gt, mask = data(2, h, w, 1.0, 1.0)
        model.eval()
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(x).float()
        model.train()
        al = _ssi_align(pred, gt, mask)
        ((al - gt).pow(2) * mask).sum().div(mask.sum()).sqrt().item()

    for step in range(nsteps):
        lo, hi = rng.choice(styles)
        h = rng.randrange(_smoke(256, 64), _smoke(640, 96) + 1, 32)
        w = rng.randrange(_smoke(256, 64), _smoke(640, 96) + 1, 32)
        b = max(2, min(rng.randint(2, _smoke(16, 2)), int(_smoke(10, 2) * 384 * 384 / (h * w))))
        x, gt, mask = data(b, h, w, lo, hi)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(x).float()
        al = _ssi_align(pred, gt, mask)
        res = al - gt
        loss = (res.abs() * mask).sum() / mask.sum().clamp(min=1) + 0.5 * grad_loss(res, mask)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del x, gt, mask, pred, al, res, loss
        if (step + 1) % _smoke(50, 2) == 0:
            evaluate()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- dense point tracking serving


class _Tracker(torch.nn.Module):
    """CoTracker-style: a stride-8 CNN encoder to 128 channels, a 4-level correlation pyramid sampled in a 7x7
    neighbourhood of each track, tokens of flow embedding + correlations + track feature, a transformer alternating
    attention over time (per track) and over tracks (per frame), heads for coordinate and feature updates and
    visibility."""

    def __init__(self, c=128, d=256, heads=8, pairs=3, radius=3, levels=4, wide=(64, 96)):
        super().__init__()
        nn = torch.nn
        self.c, self.radius, self.levels = c, radius, levels
        self.enc = nn.Sequential(nn.Conv2d(3, wide[0], 7, 2, 3), nn.InstanceNorm2d(wide[0]), nn.ReLU(),
                                 _Basic(wide[0], wide[0]), _Basic(wide[0], wide[1], 2), _Basic(wide[1], c, 2),
                                 nn.Conv2d(c, c, 1))
        ncorr = levels * (2 * radius + 1) ** 2
        self.inp = nn.Linear(64 + ncorr + c, d)
        self.time = nn.ModuleList([_PreNormBlock(d, heads) for _ in range(pairs)])
        self.space = nn.ModuleList([_PreNormBlock(d, heads) for _ in range(pairs)])
        self.delta = nn.Linear(d, 2 + c)
        self.ffeat = nn.Sequential(nn.LayerNorm(c), nn.Linear(c, c), nn.GELU())
        self.vis = nn.Linear(c, 1)

    def corr(self, pyr, coords, feat):
        """pyr: list of (S, C, h, w) maps; coords (N, S, 2) in stride-8 pixels; feat (N, S, C) -> (N, S, L*49)."""
        f = torch.nn.functional
        r = self.radius
        d = torch.arange(-r, r + 1, device=coords.device, dtype=coords.dtype)
        off = torch.stack(torch.meshgrid(d, d, indexing="ij"), -1).view(1, 1, -1, 2).flip(-1)
        out = []
        n, s, _ = coords.shape
        for lv, fm in enumerate(pyr):
            h, w = fm.shape[-2:]
            pts = coords[:, :, None] / (2 ** lv) + off  # (N, S, 49, 2) as (x, y)
            norm = torch.stack([2 * pts[..., 0] / max(w - 1, 1) - 1, 2 * pts[..., 1] / max(h - 1, 1) - 1], -1)
            grid = norm.permute(1, 0, 2, 3).reshape(s, n * pts.shape[2], 1, 2).to(fm.dtype)
            smp = f.grid_sample(fm, grid, align_corners=True)[..., 0].view(s, self.c, n, -1)  # (S, C, N, 49)
            out.append(torch.einsum("scnk,nsc->nsk", smp, feat.to(smp.dtype)) / math.sqrt(self.c))
        return torch.cat(out, -1)

    def update(self, pyr, coords, feat, q_coords, iters):
        n, s, _ = coords.shape
        for _ in range(iters):
            flow = coords - q_coords[:, None]
            emb = torch.cat([_sincos(flow[..., 0].reshape(-1), 32), _sincos(flow[..., 1].reshape(-1), 32)], -1).view(n, s, 64)
            tok = self.inp(torch.cat([emb.to(feat.dtype), self.corr(pyr, coords, feat).to(feat.dtype), feat], -1))
            for tb, sb in zip(self.time, self.space):
                tok = tb(tok)  # attention over time, tracks as the batch
                tok = sb(tok.transpose(0, 1)).transpose(0, 1)  # attention over tracks, frames as the batch
            dl = self.delta(tok)
            coords = coords + dl[..., :2].float()
            feat = feat + self.ffeat(dl[..., 2:])
        return coords, feat, torch.sigmoid(self.vis(feat))[..., 0]


@_workload("dense point tracking serving, CoTracker-style (Karaev et al. 2023) written by hand (random weights): a stride-8 CNN encoder to 128 channels, a 4-level correlation pyramid (avg pooling) sampled by grid_sample in a 7x7 neighbourhood of every track in every frame of the window, tokens of sinusoidal flow embeddings, correlations and the per-frame track features projected to 256, a transformer of 3 pairs of pre-norm blocks alternating attention over time (tracks as the batch) and over tracks (frames as the batch), 4 iterative updates of coordinates and features per window, a visibility head; 34 videos of 24-120 frames (drawn, multiples of 4) at 240p-1080p of random aspect (drawn) resized on the device to the model's 384x512, sliding windows of 8 frames with a stride of 4 (the overlap's estimates carried into the next window, the feature maps of the overlap reused and the new frames encoded), 32-2048 query points a video (drawn log-uniform) at query frames drawn across the video, a track joining (its feature sampled at its query frame by grid_sample, torch.cat onto the live set) when the window reaches its frame, so the live track count grows window by window; each window's tracks and visibilities copied back; eval mode, fp16 autocast under inference_mode")
def cotracker_points_serve(rng):
    f = torch.nn.functional
    nvid = _smoke(34, 2)
    model = (_Tracker() if _smoke(1, 0) else _Tracker(16, 32, 2, 1, 1, 2, (8, 8))).cuda().eval()
    H, W = (384, 512) if _smoke(1, 0) else (64, 96)
    S, step = 8, 4
    iters = _smoke(4, 2)

    def pyramid(fm):
        pyr = [fm]
        for _ in range(model.levels - 1):
            pyr.append(f.avg_pool2d(pyr[-1], 2, 2))
        return pyr

    with torch.inference_mode(), torch.autocast("cuda", dtype=torch.float16):
        for _ in range(nvid):
            T = rng.randrange(_smoke(24, 8), _smoke(120, 12) + 1, 4)
            vh = rng.choice([240, 360, 480, 720, 1080]) if _smoke(1, 0) else 48
            vw = int(vh * rng.choice([4 / 3, 16 / 9, 9 / 16, 1.0])) // 2 * 2
            npts = int(_loguniform(rng, 32, _smoke(2048, 8)))
            qframes = sorted(rng.randrange(0, max(1, T - step)) for _ in range(npts))
            video = torch.randint(0, 256, (T, 3, vh, vw), device="cuda", dtype=torch.uint8)
            qxy = torch.rand(npts, 2, device="cuda") * torch.tensor([W / 8 - 1, H / 8 - 1], device="cuda")
            fmaps = None  # features of the current window's frames
            coords = feat = q_c = None
            live = 0
            for start in range(0, T - S + step if T > S else 1, step):
                end = min(start + S, T)
                first_new = start if fmaps is None else start + S - step
                frames = video[first_new:end].float()
                frames = f.interpolate(frames, size=(H, W), mode="bilinear") / 127.5 - 1
                new = model.enc(frames)
                fmaps = new if fmaps is None else torch.cat([fmaps[step:], new], 0)
                s = fmaps.shape[0]
                pyr = pyramid(fmaps)
                joined = sum(1 for q in qframes if q < end) - live
                if joined > 0:
                    # each joining track's feature sampled at its query frame (clamped into this window)
                    qf = torch.tensor([min(max(q - start, 0), s - 1) for q in qframes[live:live + joined]], device="cuda")
                    xy = qxy[live:live + joined]
                    g = torch.stack([2 * xy[:, 0] / (W / 8 - 1) - 1, 2 * xy[:, 1] / (H / 8 - 1) - 1], -1)
                    smp = f.grid_sample(fmaps[qf], g.view(joined, 1, 1, 2).to(fmaps.dtype), align_corners=True)
                    tf = smp.view(joined, 1, -1).expand(joined, s, -1)
                    c0 = xy[:, None].expand(joined, s, 2)
                    if coords is None:
                        coords, feat, q_c = c0.clone(), tf.clone(), xy
                    else:
                        coords = torch.cat([coords, c0], 0)
                        feat = torch.cat([feat, tf], 0)
                        q_c = torch.cat([q_c, xy], 0)
                    live += joined
                if live == 0:
                    continue
                if coords.shape[1] != s:
                    coords, feat = coords[:, :s], feat[:, :s]
                coords, feat, vis = model.update(pyr, coords, feat, q_c, iters)
                torch.cat([coords * 8, vis[..., None].float()], -1).half().cpu()
                # carry the overlap's estimates into the next window, new frames start at the last estimate
                coords = torch.cat([coords[:, step:], coords[:, -1:].expand(-1, S - (s - step), -1)], 1)
                feat = torch.cat([feat[:, step:], feat[:, -1:].expand(-1, S - (s - step), -1)], 1)
            del video, fmaps, coords, feat, q_c
    torch.cuda.synchronize()

"""The hundred-and-fourteenth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch113_b.py are): railways and rail transport, written in torch alone, first half. Overhead catenary lidar
segmentation training (a DGCNN of EdgeConv layers over lidar point clouds of a railway's overhead line of drawn point
counts, k-nearest-neighbour graphs rebuilt in feature space each layer by topk over masked pairwise distances, a
masked global max, a per-point class head), rail-head surface defect fine-tuning (a vision transformer over
line-scan strips of the rail head of drawn widths, its lower blocks frozen and run without gradients, the upper
blocks trained with layer-wise learning-rate decay, a multi-label defect head and a per-patch defect head), bogie
vibration fault classification training (a gated dilated 1-d convnet, WaveNet-style, over axle-box and bogie-frame
accelerometer windows of drawn lengths, a fault class and a wheel-flat severity per window) and a platform crowding
service (a CSRNet-style dilated convnet estimating crowd density maps from platform CCTV frames of drawn resolutions,
per-zone counts by zone masks, each platform's smoothed occupancy kept on the device by index_add). Same conventions
as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned host buffers for
the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths,
resolutions and batch sizes are fixed on the host, padding handled by masks or by torch.where / masked_fill, no
boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
platform_crowd_density_serve uploads its frames on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new114.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and
for the CPU smoke run (RECORD_SMOKE=1).
"""

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- overhead catenary lidar segmentation (DGCNN)


class _EdgeConv(_nn.Module):
    """DGCNN's EdgeConv: for each point its k nearest neighbours (indices given), the edge features [x_i, x_j - x_i]
    through a linear layer, layer norm and leaky ReLU, the maximum over the neighbours."""

    def __init__(self, cin, cout):
        super().__init__()
        self.lin, self.norm = _nn.Linear(2 * cin, cout), _nn.LayerNorm(cout)

    def forward(self, x, idx):
        b, n, k = idx.shape
        bidx = torch.arange(b, device=x.device)[:, None, None]
        nb = x[bidx, idx]
        xi = x[:, :, None].expand(b, n, k, x.shape[-1])
        e = _F.leaky_relu(self.norm(self.lin(torch.cat([xi, nb - xi], -1))), 0.2)
        return e.max(2).values


def _knn(x, keep, k):
    """Indices (B, N, k) of each point's k nearest valid points in the feature space x (B, N, C), padded points
    pushed away by masked_fill; no gradient."""
    with torch.no_grad():
        xf = x.float()
        sq = xf.pow(2).sum(-1)
        d = sq[:, :, None] + sq[:, None, :] - 2 * xf @ xf.transpose(1, 2)
        d = d.masked_fill(~keep[:, None, :], 1e9)
        return d.topk(k, dim=-1, largest=False).indices


class _CatenaryDgcnn(_nn.Module):
    """Three EdgeConv layers (the first graph on xyz, later ones rebuilt in feature space), a linear layer to the
    global width and a masked max over the valid points, a per-point MLP over the local and global features."""

    def __init__(self, c_in, widths, d_glob, n_cls, k):
        super().__init__()
        cins = [c_in] + widths[:-1]
        self.edges = _nn.ModuleList(_EdgeConv(a, w) for a, w in zip(cins, widths))
        self.glob = _nn.Sequential(_nn.Linear(sum(widths), d_glob), _nn.LayerNorm(d_glob), _nn.LeakyReLU(0.2))
        self.head = _nn.Sequential(_nn.Linear(sum(widths) + d_glob, 256), _nn.LayerNorm(256), _nn.LeakyReLU(0.2),
                                   _nn.Linear(256, 128), _nn.LeakyReLU(0.2), _nn.Linear(128, n_cls))
        self.k = k

    def forward(self, pts, keep):
        feats, x = [], pts
        idx = _knn(pts[..., :3], keep, self.k)
        for i, ec in enumerate(self.edges):
            if i > 0:
                idx = _knn(x, keep, self.k)
            x = ec(x, idx)
            feats.append(x)
        loc = torch.cat(feats, -1)
        g = self.glob(loc).masked_fill(~keep[..., None], -1e4).max(1).values
        return self.head(torch.cat([loc, g[:, None].expand(-1, loc.shape[1], -1)], -1)).float()


@_workload("overhead catenary lidar segmentation training (random init, a DGCNN of EdgeConv layers): 2-16 point clouds a step (drawn, at most 16,384 padded points a step) of 1,024-4,096 padded points (drawn per step, a multiple of 256) from a train-mounted lidar scanning the overhead line, each cloud's own point count drawn between half of it and it (masked), 5 channels per point (x, y, z, intensity, return number) and one of 8 classes (contact wire, messenger wire, dropper, registration arm, mast, insulator, track bed, vegetation) drawn on the device; 3 EdgeConv layers (widths 64/64/128, 20 nearest neighbours by topk over masked pairwise distances, no gradient through the graph, the first on xyz and the others rebuilt in feature space, neighbour features gathered by integer indexing, the edge features [x_i, x_j - x_i] through a linear layer, layer norm and leaky ReLU, the max over the neighbours), a linear layer with layer norm and leaky ReLU to 512 and a masked max over the valid points, a per-point MLP (256, 128) to the 8 classes; a cross-entropy over the valid points; AdamW, clipping, bf16 autocast, 1,200 steps; the loss read back every 20 steps and every 300 steps a no-grad pass over 4 clouds of 4,096 points with the per-class intersections and unions read back")
def catenary_lidar_dgcnn_train(rng):
    widths, d_glob, n_cls, k = _smoke([64, 64, 128], [16, 16, 32]), _smoke(512, 32), 8, _smoke(20, 4)
    model = _CatenaryDgcnn(5, widths, d_glob, n_cls, k).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    n_lo, n_hi, mult, budget = _smoke(1024, 32), _smoke(4096, 64), _smoke(256, 16), _smoke(16384, 128)

    def clouds(counts, n):
        b = len(counts)
        keep = keep_mask(counts, n)
        xyz = torch.rand(b, n, 3, device="cuda") * torch.tensor([20.0, 4.0, 7.0], device="cuda")
        inten = torch.rand(b, n, 1, device="cuda")
        ret = torch.randint(1, 4, (b, n, 1), device="cuda").float() / 3.0
        pts = torch.cat([xyz / 10.0, inten, ret], -1) * keep[..., None]
        label = torch.randint(0, n_cls, (b, n), device="cuda")
        return pts, keep, label

    steps = _smoke(1200, 3)
    for step in range(steps):
        model.train()
        n = rng.randint(n_lo // mult, n_hi // mult) * mult
        b = rng.randint(2, max(2, min(_smoke(16, 2), budget // n)))
        pts, keep, label = clouds([rng.randint(n // 2, n) for _ in range(b)], n)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(pts, keep)
        w = keep.float()
        ce = _F.cross_entropy(logits.flatten(0, 1), label.flatten(), reduction="none")
        loss = (ce * w.flatten()).sum() / w.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.detach().item()
        del pts, keep, label, logits, w, ce, loss
        if (step + 1) % _smoke(300, 2) == 0:
            model.eval()
            with torch.no_grad():
                nb = _smoke(4, 2)
                pts, keep, label = clouds([n_hi] * nb, n_hi)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = model(pts, keep)
                pred = _F.one_hot(logits.argmax(-1), n_cls).float() * keep[..., None]
                true = _F.one_hot(label, n_cls).float() * keep[..., None]
                inter = (pred * true).sum((0, 1))
                union = (pred + true).clamp(max=1).sum((0, 1))
                out = torch.cat([inter, union])
            out.tolist()
            del pts, keep, label, logits, pred, true, inter, union, out


# ---------------------------------------------------------------- rail-head surface defects (ViT fine-tuning)


class _RailViT(_nn.Module):
    """Line-scan strips cut into 16 x 16 patches, row and column position tables (sized for the tallest and widest
    strip), a class token, pre-norm blocks; a multi-label defect head on the class token and a per-patch head."""

    def __init__(self, patch, d, heads, layers, max_rows, max_cols, n_def, n_patch_cls):
        super().__init__()
        self.patch = patch
        self.embed = _nn.Conv2d(1, d, patch, patch)
        self.row, self.col = _nn.Embedding(max_rows, d), _nn.Embedding(max_cols, d)
        self.cls = _nn.Parameter(torch.zeros(1, 1, d))
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.defect, self.local = _nn.Linear(d, n_def), _nn.Linear(d, n_patch_cls)

    def tokens(self, img):
        x = self.embed(img)
        b, d, gh, gw = x.shape
        pos = self.row(torch.arange(gh, device=img.device))[:, None] + self.col(torch.arange(gw, device=img.device))
        x = x.flatten(2).transpose(1, 2) + pos.flatten(0, 1)[None]
        return torch.cat([self.cls.expand(b, -1, -1).to(x.dtype), x], 1)

    def heads(self, x):
        x = self.norm(x)
        return self.defect(x[:, 0]).float(), self.local(x[:, 1:]).float()


@_workload("rail-head surface defect fine-tuning (random init standing in for pretrained weights, a vision transformer with frozen lower blocks): 8-48 grey line-scan strips of the rail head a step (drawn, at most 12,288 patches a step), 96 px high and 384-1,024 px long (drawn per step, a multiple of 32), drawn on the device; 16 x 16 patches embedded by a strided convolution, row (6) and column (64) position tables sized for the longest strip, a class token, 8 pre-norm blocks (width 384, 6 heads): the patch embedding, tables and first 4 blocks frozen (requires_grad off, run under no_grad), the upper 4 blocks, final norm and two new heads trained; 5 multi-label defect types (squat, head check, corrugation, spalling, weld defect) by BCE on the class token and 6 per-patch classes (sound and the five defects) by cross-entropy; AdamW with layer-wise learning-rate decay (0.75 a block, a parameter group per block), clipping, bf16 autocast, 515 steps; the losses read back every 20 steps and every 128 steps a no-grad pass over 16 strips of 1,024 px with the mean defect probabilities and the patch accuracy read back")
def rail_head_vit_finetune(rng):
    patch, d, heads, layers, frozen = 16, _smoke(384, 32), _smoke(6, 2), _smoke(8, 2), _smoke(4, 1)
    height, w_lo, w_hi, mult = _smoke(96, 32), _smoke(384, 64), _smoke(1024, 128), 32
    n_def, n_pc = 5, 6
    model = _RailViT(patch, d, heads, layers, height // patch, w_hi // patch, n_def, n_pc).cuda()
    for mod in [model.embed, model.row, model.col, *model.blocks[:frozen]]:
        mod.requires_grad_(False)
    model.cls.requires_grad_(False)
    groups = []
    for i, blk in enumerate(model.blocks[frozen:]):
        groups.append({"params": list(blk.parameters()), "lr": 2e-4 * 0.75 ** (layers - frozen - 1 - i)})
    groups.append({"params": [*model.norm.parameters(), *model.defect.parameters(), *model.local.parameters()],
                   "lr": 2e-4})
    opt = torch.optim.AdamW(groups, weight_decay=0.05)
    trained = [p for g in groups for p in g["params"]]
    budget = _smoke(12288, 64)

    def strips(b, w):
        img = torch.randn(b, 1, height, w, device="cuda")
        lab = (torch.rand(b, n_def, device="cuda") < 0.2).float()
        plab = torch.randint(0, n_pc, (b, (height // patch) * (w // patch)), device="cuda")
        return img, lab, plab

    def forward(img):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            with torch.no_grad():
                x = model.tokens(img)
                for blk in model.blocks[:frozen]:
                    x = blk(x)
            for blk in model.blocks[frozen:]:
                x = blk(x)
            return model.heads(x)

    steps = _smoke(515, 3)
    for step in range(steps):
        model.train()
        w = rng.randint(w_lo // mult, w_hi // mult) * mult
        per = (height // patch) * (w // patch)
        b = rng.randint(_smoke(8, 2), max(_smoke(8, 2), min(_smoke(48, 3), budget // per)))
        img, lab, plab = strips(b, w)
        dlog, plog = forward(img)
        l_def = _F.binary_cross_entropy_with_logits(dlog, lab)
        l_loc = _F.cross_entropy(plog.flatten(0, 1), plab.flatten())
        loss = l_def + l_loc
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trained, 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_def.detach(), l_loc.detach()]).tolist()
        del img, lab, plab, dlog, plog, l_def, l_loc, loss
        if (step + 1) % _smoke(128, 2) == 0:
            model.eval()
            with torch.no_grad():
                img, lab, plab = strips(_smoke(16, 2), w_hi)
                dlog, plog = forward(img)
                acc = (plog.argmax(-1) == plab).float().mean()
                out = torch.cat([torch.sigmoid(dlog).mean(0), acc[None]])
            out.tolist()
            del img, lab, plab, dlog, plog, acc, out


# ---------------------------------------------------------------- bogie vibration faults (gated dilated convnet)


class _GatedBlock(_nn.Module):
    """A WaveNet block: a dilated 1-d convolution to tanh and sigmoid halves multiplied, 1x1 residual and skip
    convolutions; padded samples zeroed by the mask."""

    def __init__(self, c, skip, dilation):
        super().__init__()
        self.conv = _nn.Conv1d(c, 2 * c, 3, padding=dilation, dilation=dilation)
        self.res, self.skip = _nn.Conv1d(c, c, 1), _nn.Conv1d(c, skip, 1)

    def forward(self, x, m):
        a, g = self.conv(x).chunk(2, 1)
        z = torch.tanh(a) * torch.sigmoid(g)
        return (x + self.res(z)) * m, self.skip(z)


class _BogieWaveNet(_nn.Module):
    """Accelerometer channels and a speed channel into a stride-4 stem, gated dilated blocks (dilations doubling,
    repeated), the skip sum masked-mean pooled; fault-class and wheel-flat-severity heads."""

    def __init__(self, c_in, c, skip, dilations, n_cls):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv1d(c_in, c, 8, 4, 2), _nn.GELU(), _nn.Conv1d(c, c, 3, 1, 1))
        self.blocks = _nn.ModuleList(_GatedBlock(c, skip, dl) for dl in dilations)
        self.cls, self.sev = mlp(skip, skip, n_cls, act=_nn.GELU), mlp(skip, skip, 1, act=_nn.GELU)

    def forward(self, x, keep):
        y = self.stem(x)
        m = keep[:, None, ::4][..., :y.shape[-1]].to(y.dtype)  # the stem's stride
        y = y * m
        s = 0
        for blk in self.blocks:
            y, sk = blk(y, m)
            s = s + sk
        pooled = (_F.relu(s) * m).sum(-1) / m.sum(-1).clamp(min=1)
        return self.cls(pooled).float(), self.sev(pooled)[:, 0].float()


@_workload("bogie vibration fault classification training (random init, a gated dilated 1-d convnet, WaveNet-style): 16-96 accelerometer windows a step (drawn, at most 786,432 padded samples a step), the step's padded length 4,096-16,384 samples at 2 kHz (drawn, a multiple of 512) and each window's own length drawn between half of it and it (masked), 6 channels (axle-box vertical and lateral at both wheels, bogie-frame lateral and yaw rate) plus train speed drawn on the device; a stride-4 stem (width 96), 12 gated blocks (dilations 1 to 32, twice, tanh-sigmoid gates, 1x1 residual and skip convolutions of 128) with padded samples zeroed by the mask, the skip sum masked-mean pooled; 7 fault classes (healthy, wheel flat, out-of-round wheel, bearing outer race, bearing inner race, yaw damper failure, hunting) by cross-entropy and a wheel-flat length regressed by a Huber loss only on windows of that class (torch.where); AdamW, clipping, bf16 autocast, 470 steps; the losses read back every 20 steps and every 117 steps a no-grad pass over 32 windows of 16,384 samples with the accuracy and the class histogram read back")
def bogie_vibration_wavenet_train(rng):
    c_in, c, skip, n_cls = 7, _smoke(96, 16), _smoke(128, 16), 7
    dilations = _smoke([1, 2, 4, 8, 16, 32] * 2, [1, 2])
    model = _BogieWaveNet(c_in, c, skip, dilations, n_cls).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    t_lo, t_hi, mult, budget = _smoke(4096, 256), _smoke(16384, 512), _smoke(512, 64), _smoke(786432, 2048)

    def windows(lengths, t):
        b = len(lengths)
        keep = keep_mask(lengths, t)
        acc = torch.randn(b, 6, t, device="cuda")
        speed = (torch.rand(b, 1, 1, device="cuda") * 0.8 + 0.2).expand(b, 1, t)
        x = torch.cat([acc, speed], 1) * keep[:, None]
        label = torch.randint(0, n_cls, (b,), device="cuda")
        flat = torch.rand(b, device="cuda") * 60.0
        return x, keep, label, flat

    steps = _smoke(470, 3)
    for step in range(steps):
        model.train()
        t = rng.randint(t_lo // mult, t_hi // mult) * mult
        b = rng.randint(_smoke(16, 2), max(_smoke(16, 2), min(_smoke(96, 3), budget // t)))
        x, keep, label, flat = windows([rng.randint(t // 2, t) for _ in range(b)], t)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logit, sev = model(x, keep)
        l_cls = _F.cross_entropy(logit, label)
        is_flat = torch.where(label == 1, 1.0, 0.0)
        l_sev = (_F.huber_loss(sev, flat / 20.0, reduction="none") * is_flat).sum() / is_flat.sum().clamp(min=1)
        loss = l_cls + l_sev
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_cls.detach(), l_sev.detach()]).tolist()
        del x, keep, label, flat, logit, sev, l_cls, is_flat, l_sev, loss
        if (step + 1) % _smoke(117, 2) == 0:
            model.eval()
            with torch.no_grad():
                nb = _smoke(32, 2)
                x, keep, label, flat = windows([t_hi] * nb, t_hi)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logit, sev = model(x, keep)
                pred = logit.argmax(-1)
                out = torch.cat([(pred == label).float().mean()[None], _F.one_hot(pred, n_cls).float().sum(0)])
            out.tolist()
            del x, keep, label, flat, logit, sev, pred, out


# ---------------------------------------------------------------- platform crowding service (CSRNet-style)


class _CrowdNet(_nn.Module):
    """A VGG-style front end (3x3 convolutions with ReLU, three 2x2 max pools, stride 8) and a back end of dilated
    3x3 convolutions (dilation 2), a 1x1 convolution to a non-negative density map at 1/8 resolution."""

    def __init__(self, front, back):
        super().__init__()
        mods, c = [], 3
        for item in front:
            if item == "M":
                mods.append(_nn.MaxPool2d(2))
            else:
                mods += [_nn.Conv2d(c, item, 3, 1, 1), _nn.ReLU()]
                c = item
        for w in back:
            mods += [_nn.Conv2d(c, w, 3, 1, 2, dilation=2), _nn.ReLU()]
            c = w
        self.body = _nn.Sequential(*mods)
        self.out = _nn.Conv2d(c, 1, 1)

    def forward(self, x):
        return _F.softplus(self.out(self.body(x)).float())[:, 0]


@_workload("platform crowding serving (random init, a CSRNet-style dilated convnet estimating crowd density): 5,650-5,750 requests (drawn) of 1-4 CCTV frames each (drawn) from one of 32 platform cameras (drawn per request, 8 cameras to each of 4 platforms), 360 x 640, 480 x 848, 544 x 960 or 720 x 1,280 px (drawn per request), uint8 RGB uploaded on a side stream from two reused pinned host buffers (filled once, sized for 4 frames of 720 x 1,280) one request ahead (one span, through SideUploads.ahead), normalised and made channels-last on the device; a VGG-style front end (32, 32, pool, 64, 64, pool, 128 x 3, pool, 256 x 3) and a dilated back end (256, 128, 64, dilation 2) to a softplus density map at 1/8 resolution under bf16 autocast; per frame the counts in 6 platform zones (edge strip, stairs, lift, seating, doors, rest; a zone map per camera and size built on the device once, summed by einsum), the mean frame total folded into the platform's smoothed occupancy (4 platforms kept on the device, all decayed by 0.9 each request, the platform's 0.1 x mean added by index_add) and a crowding flag per zone by torch.where; each request's zone counts, flags and platform occupancy read back")
def platform_crowd_density_serve(rng):
    front = _smoke([32, 32, "M", 64, 64, "M", 128, 128, 128, "M", 256, 256, 256], [8, "M", 16, "M", 16, "M", 16])
    back = _smoke([256, 128, 64], [16])
    model = _CrowdNet(front, back).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    sizes = _smoke([(360, 640), (480, 848), (544, 960), (720, 1280)], [(32, 48), (48, 64)])
    max_f, n_cam, n_plat, n_zone = _smoke(4, 2), 32, 4, 6
    max_px = max(h * w for h, w in sizes)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_f * max_px * 3,), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    occupancy = torch.zeros(n_plat, device="cuda")
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1)
    zones = {}

    def zone_map(cam, h, w):
        """A (6, h/8, w/8) one-hot zone map of a camera: the platform edge a strip at the bottom, the other zones
        cut by columns at camera-dependent places (from the host rng)."""
        if (cam, h, w) not in zones:
            gh, gw = h // 8, w // 8
            cut = [int(gw * f) for f in sorted(rng.uniform(0.1, 0.9) for _ in range(3))]
            yy = torch.arange(gh, device="cuda")[:, None].expand(gh, gw)
            xx = torch.arange(gw, device="cuda")[None].expand(gh, gw)
            z = 1 + (xx >= cut[0]).long() + (xx >= cut[1]).long() + (xx >= cut[2]).long()
            z = torch.where(yy >= gh * 4 // 5, 0, z)
            z = torch.where((yy < gh // 5) & (xx < gw // 4), 5, z)
            zones[(cam, h, w)] = _F.one_hot(z, n_zone).permute(2, 0, 1).float()
        return zones[(cam, h, w)]

    nreq = rng.randint(_smoke(5650, 3), _smoke(5750, 4))
    plan = []
    for _ in range(nreq):
        h, w = rng.choice(sizes)
        plan.append((rng.randint(1, max_f), h, w, rng.randrange(n_cam)))

    for (f, h, w, cam), raw in up.ahead(plan, lambda p: (p[0] * p[1] * p[2] * 3,)):
        with torch.no_grad():
            zm = zone_map(cam, h, w)
            x = (raw.view(f, h, w, 3).permute(0, 3, 1, 2).float() / 255.0 - mean) / std
            x = x.contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                dens = model(x)
            counts = torch.einsum("fhw,zhw->fz", dens, zm)
            plat = torch.full((1,), cam // (n_cam // n_plat), device="cuda", dtype=torch.long)
            occupancy.mul_(0.9)
            occupancy.index_add_(0, plat, 0.1 * counts.sum(1).mean(0, keepdim=True))
            area = zm.sum((1, 2)).clamp(min=1)
            flags = torch.where(counts / area > 0.5, 1.0, 0.0)
            out = torch.cat([counts.flatten(), flags.flatten(), occupancy.index_select(0, plat)])
        out.tolist()
        del raw, zm, x, dens, counts, plat, area, flags, out

"""The hundred-and-tenth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch109_b.py are): forestry, timber and wood products, written in torch alone, first half. Tree-crown detection
training (a CenterNet-style residual convnet with a feature-pyramid decoder over 4-band aerial orthophoto tiles of
drawn resolutions: a crown-centre heatmap, crown radius and tree height, and the species at each centre), airborne
lidar tree-species fine-tuning (EdgeConv layers over k nearest neighbours found by topk, then pre-norm transformer
blocks over strided point tokens under a key mask, per-tree point clouds of drawn sizes padded and masked; a species,
height and stem-diameter head; the EdgeConv front frozen for the first part of the run and then trained at a tenth of
the learning rate), a board-grading service (a residual encoder-decoder convnet over line-scanner images of sawn
boards of drawn lengths: a defect segmentation, a grade, clear-length and defect-zone figures) and stand growth and
yield forecasting training (a two-layer GRU written out step by step over annual plot histories of drawn lengths
with climate, management and site covariates, masked losses on top height, basal area, stem count and volume).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths,
resolutions and batch sizes are fixed on the host, padding handled by masks multiplied in or by torch.where /
masked_fill, no boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
board_grading_serve uploads its board images on a side stream (workload_helpers.SideUploads, one request ahead); the
other three are single-stream. The models run under bf16 autocast.

record.py calls `register(<its own module object>)` once, just before main(): every workload below is then added to
record.py's WORKLOADS with its family. This file never imports record.py; the plumbing is batch_common.py's.
Real sizes checked before recording: see record_new110.sh's header.
"""

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, PreNormBlock, SideUploads, _gather_points, _square_distance, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _loguniform(rng, lo, hi, mult=1):
    return _b.rec._loguniform(rng, lo, hi, mult)


# ---------------------------------------------------------------- tree-crown detection (CenterNet-style)


class _CrownNet(_nn.Module):
    """A stride-2 stem, four residual stages (1/2 to 1/16), lateral 1x1 convolutions summed top-down to 1/4
    resolution, a 3x3 smoothing convolution; heatmap, size (radius, height) and species heads."""

    def __init__(self, bands, widths, d_fpn, n_species):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(bands, widths[0], 3, 2, 1, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU())
        stages, c = [], widths[0]
        for i, w in enumerate(widths):
            stages.append(_nn.Sequential(BasicResBlock(c, w, 1 if i == 0 else 2), BasicResBlock(w, w, 1)))
            c = w
        self.stages = _nn.ModuleList(stages)
        self.lat = _nn.ModuleList(_nn.Conv2d(w, d_fpn, 1) for w in widths[1:])
        self.smooth = _nn.Sequential(_nn.Conv2d(d_fpn, d_fpn, 3, 1, 1), _nn.ReLU())
        self.heat = _nn.Sequential(_nn.Conv2d(d_fpn, d_fpn, 3, 1, 1), _nn.ReLU(), _nn.Conv2d(d_fpn, 1, 1))
        self.size = _nn.Sequential(_nn.Conv2d(d_fpn, d_fpn, 3, 1, 1), _nn.ReLU(), _nn.Conv2d(d_fpn, 2, 1))
        self.species = _nn.Sequential(_nn.Conv2d(d_fpn, d_fpn, 3, 1, 1), _nn.ReLU(), _nn.Conv2d(d_fpn, n_species, 1))
        with torch.no_grad():
            self.heat[-1].bias.fill_(-2.19)

    def forward(self, x):
        feats, y = [], self.stem(x)
        for s in self.stages:
            y = s(y)
            feats.append(y)
        top = self.lat[-1](feats[-1])
        for lat, f in zip(self.lat[-2::-1], feats[-2:0:-1]):
            top = lat(f) + _F.interpolate(top, scale_factor=2, mode="nearest")
        p = self.smooth(top)
        return self.heat(p)[:, 0].float(), self.size(p).float(), self.species(p).float()


def _crown_targets(b, h, w, n_species, kernel):
    """Crown centres (about 1 in 150 cells at 1/4 resolution), a Gaussian-splatted heatmap clamped to 1, radius and
    height targets and a species id per cell (used at centres only)."""
    centre = (torch.rand(b, 1, h, w, device="cuda") < 1 / 150).float()
    heat = _F.conv2d(centre, kernel, padding=kernel.shape[-1] // 2).clamp(max=1.0)[:, 0]
    size = torch.stack([torch.rand(b, h, w, device="cuda") * 4 + 1, torch.rand(b, h, w, device="cuda") * 30 + 5], 1)
    species = torch.randint(0, n_species, (b, h, w), device="cuda")
    return centre[:, 0], heat, size, species


def _focal(logit, heat, centre):
    """CenterNet's penalty-reduced focal loss, normalised by the number of centres."""
    p = torch.sigmoid(logit).clamp(1e-4, 1 - 1e-4)
    pos = -torch.log(p) * (1 - p) ** 2 * centre
    neg = -torch.log(1 - p) * p ** 2 * (1 - heat) ** 4 * (1 - centre)
    return (pos.sum() + neg.sum()) / centre.sum().clamp(min=1)


@_workload("tree-crown detection training (random init, a CenterNet-style residual convnet with a feature-pyramid decoder): 4-band (RGB and near-infrared) aerial orthophoto tiles of 256-576 px (drawn per step, a multiple of 64) with 2-16 tiles a step (drawn, at most 8 x 384^2 pixels a step), drawn on the device; a channels-last stride-2 stem (32) and four stages of two basic residual blocks (32/64/128/256 channels, 1/2 to 1/16 resolution), lateral 1x1 convolutions (96 wide) summed top-down by nearest upsampling to 1/4 resolution; a crown-centre heatmap (penalty-reduced focal loss against centres drawn at about 1 in 150 cells and splatted by a 7x7 Gaussian), crown radius and tree height (L1 at the centres) and 14 species (cross-entropy at the centres); AdamW, clipping, bf16 autocast, 480 steps; the losses read back every 20 steps and every 96 steps a no-grad evaluation of 2 tiles of 576 px: peaks kept by 3x3 max-pool suppression (torch.where), the top 200 scores with their sizes and species gathered; the count of detections over 0.3, their mean height and species-id sum read back")
def tree_crown_centernet_train(rng):
    bands, n_species = 4, 14
    widths, d_fpn = _smoke([32, 64, 128, 256], [16, 16, 32, 32]), _smoke(96, 16)
    model = _CrownNet(bands, widths, d_fpn, n_species).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=4e-4, weight_decay=0.01)
    g = torch.exp(-(torch.arange(7, device="cuda").float() - 3) ** 2 / 2.0)
    kernel = (g[:, None] * g[None, :])[None, None]
    mult, budget = _smoke(64, 32), _smoke(8 * 384 * 384, 2 * 64 * 64)
    lo, hi = _smoke(256, 64), _smoke(576, 96)

    def tiles(b, res):
        x = torch.randn(b, bands, res, res, device="cuda").contiguous(memory_format=torch.channels_last)
        return (x, *_crown_targets(b, res // 4, res // 4, n_species, kernel))

    steps = _smoke(480, 3)
    for step in range(steps):
        model.train()
        res = rng.randint(lo // mult, hi // mult) * mult
        b = rng.randint(2, max(2, min(16, budget // (res * res))))
        x, centre, heat, size, species = tiles(b, res)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h_log, s_pred, c_log = model(x)
        n_c = centre.sum().clamp(min=1)
        l_h = _focal(h_log, heat, centre)
        l_s = ((s_pred - size).abs().sum(1) * centre).sum() / n_c
        l_c = (_F.cross_entropy(c_log, species, reduction="none") * centre).sum() / n_c
        loss = l_h + 0.1 * l_s + l_c
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_h.detach(), l_s.detach(), l_c.detach()]).tolist()
        del x, centre, heat, size, species, h_log, s_pred, c_log, n_c, l_h, l_s, l_c, loss
        if (step + 1) % _smoke(96, 2) == 0:
            model.eval()
            with torch.no_grad():
                x = torch.randn(2, bands, hi, hi, device="cuda").contiguous(memory_format=torch.channels_last)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    h_log, s_pred, c_log = model(x)
                score = torch.sigmoid(h_log)
                peak = torch.where(score == _F.max_pool2d(score[:, None], 3, 1, 1)[:, 0], score, 0.0).flatten(1)
                top, where = peak.topk(_smoke(200, 8), dim=1)
                sizes = s_pred.flatten(2).gather(2, where[:, None].expand(-1, 2, -1))
                kind = c_log.argmax(1).flatten(1).gather(1, where)
                kept = (top > 0.3).float()
                out = torch.stack([kept.sum(1), (sizes[:, 1] * kept).sum(1) / kept.sum(1).clamp(min=1),
                                   (kind.float() * kept).sum(1)], 1)
            out.tolist()
            del x, h_log, s_pred, c_log, score, peak, top, where, sizes, kind, kept, out


# ---------------------------------------------------------------- lidar tree-species fine-tuning


class _EdgeConv(_nn.Module):
    """DGCNN's edge convolution: for each point, [x_i, x_j - x_i] over its k neighbours through a shared MLP, the
    maximum over the neighbours."""

    def __init__(self, cin, cout):
        super().__init__()
        self.f = _nn.Sequential(_nn.Linear(2 * cin, cout), _nn.LayerNorm(cout), _nn.GELU(), _nn.Linear(cout, cout))

    def forward(self, x, idx):
        nb = _gather_points(x, idx)  # (B, N, k, C)
        xi = x[:, :, None].expand_as(nb)
        return self.f(torch.cat([xi, nb - xi], -1)).amax(2)


class _TreeCloudNet(_nn.Module):
    def __init__(self, c_in, widths, d, heads, layers, stride, n_species):
        super().__init__()
        convs, c = [], c_in
        for w in widths:
            convs.append(_EdgeConv(c, w))
            c = w
        self.front = _nn.ModuleList(convs)
        self.stride = stride
        self.proj = _nn.Linear(sum(widths) + 3, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.species = _nn.Linear(2 * d, n_species)
        self.dims = mlp(2 * d, d, 2, act=_nn.GELU)

    def backbone(self):
        return list(self.front.parameters())

    def forward(self, pts, idx, keep):
        feats, x = [], pts
        for conv in self.front:
            x = conv(x, idx)
            feats.append(x)
        s = self.stride
        tok = self.proj(torch.cat([f[:, ::s] for f in feats] + [pts[:, ::s, :3]], -1))
        key = keep[:, ::s]
        for blk in self.blocks:
            tok = blk(tok, mask=key[:, None, None, :])
        tok = self.norm(tok)
        w = key[..., None].to(tok.dtype)
        z = torch.cat([(tok * w).sum(1) / w.sum(1).clamp(min=1), tok.masked_fill(~key[..., None], -1e4).amax(1)], -1)
        return self.species(z).float(), self.dims(z).float()


@_workload("airborne-lidar tree-species fine-tuning (random init standing in for a pre-trained backbone, EdgeConv then a transformer): 6-48 segmented trees a step (drawn, at most 24,576 padded points a step), each a cloud of 256-2,048 points (log-uniform: the first tree's drawn, the others' drawn up to it; padded to the first's rounded up to a multiple of 128) of x, y, z, intensity and return number drawn on the device (a crown-shaped ellipsoid scatter); the 16 nearest neighbours of every point by topk over squared distances with padded points and the point itself pushed to infinity by masked_fill; two EdgeConv layers (64 and 128 wide, neighbours gathered, a shared MLP, max over neighbours), every fourth point taken as a token (its features concatenated with its coordinates, projected to 192), 4 pre-norm transformer blocks (6 heads) under a key mask, masked mean and max pooling; 11 species (cross-entropy with label smoothing 0.1) and tree height and stem diameter (smooth L1); the EdgeConv front frozen (requires_grad off) for the first 30% of the steps, then trained at a tenth of the head's learning rate (AdamW parameter groups); clipping, bf16 autocast, 485 steps; the losses read back every 20 steps and every 97 steps a no-grad evaluation of 16 trees of 2,048 points with the species accuracy read back")
def lidar_tree_species_finetune(rng):
    c_in, widths, d, heads, layers = 5, _smoke([64, 128], [16, 16]), _smoke(192, 32), _smoke(6, 2), _smoke(4, 1)
    k, stride, n_species = _smoke(16, 4), 4, 11
    lo, hi, mult, budget = _smoke(256, 32), _smoke(2048, 96), _smoke(128, 32), _smoke(24576, 384)
    model = _TreeCloudNet(c_in, widths, d, heads, layers, stride, n_species).cuda()
    backbone = model.backbone()
    ids = {id(p) for p in backbone}
    head = [p for p in model.parameters() if id(p) not in ids]
    opt = torch.optim.AdamW([{"params": head, "lr": 3e-4}, {"params": backbone, "lr": 3e-5}], weight_decay=0.05)
    steps = _smoke(485, 4)
    thaw = int(0.3 * steps)
    for p in backbone:
        p.requires_grad_(False)

    def trees(lengths):
        b, n = len(lengths), -(-max(lengths) // mult) * mult
        keep = keep_mask(lengths, n)
        height = torch.rand(b, 1, 1, device="cuda") * 25 + 5
        xyz = torch.randn(b, n, 3, device="cuda") * torch.tensor([2.0, 2.0, 0.3], device="cuda") * height / 10
        xyz = xyz + torch.stack([torch.zeros_like(height), torch.zeros_like(height), height / 2], -1)[:, :, 0]
        extra = torch.stack([torch.rand(b, n, device="cuda"), torch.randint(1, 5, (b, n), device="cuda").float() / 4],
                            -1)
        pts = torch.cat([xyz, extra], -1) * keep[..., None]
        d2 = _square_distance(xyz, xyz)
        d2 = d2.masked_fill(~keep[:, None, :], float("inf"))
        d2 = d2.masked_fill(torch.eye(n, dtype=torch.bool, device="cuda")[None], float("inf"))
        idx = d2.topk(k, dim=-1, largest=False).indices
        species = torch.randint(0, n_species, (b,), device="cuda")
        dims = torch.cat([height[:, 0], torch.rand(b, 1, device="cuda") * 0.6 + 0.1], -1)
        return pts, idx, keep, species, dims

    for step in range(steps):
        if step == thaw:
            for p in backbone:
                p.requires_grad_(True)
        model.train()
        first = _loguniform(rng, lo, hi)
        n = -(-first // mult) * mult
        b = rng.randint(_smoke(6, 2), max(_smoke(6, 2), min(_smoke(48, 4), budget // n)))
        lengths = [first] + [_loguniform(rng, lo, first) for _ in range(b - 1)]
        pts, idx, keep, species, dims = trees(lengths)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            s_log, d_pred = model(pts, idx, keep)
        l_s = _F.cross_entropy(s_log, species, label_smoothing=0.1)
        l_d = _F.smooth_l1_loss(d_pred, dims)
        loss = l_s + 0.2 * l_d
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_s.detach(), l_d.detach()]).tolist()
        del pts, idx, keep, species, dims, s_log, d_pred, l_s, l_d, loss
        if (step + 1) % _smoke(97, 2) == 0:
            model.eval()
            with torch.no_grad():
                pts, idx, keep, species, dims = trees([hi] * _smoke(16, 2))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    s_log, d_pred = model(pts, idx, keep)
                acc = (s_log.argmax(-1) == species).float().mean()
            acc.item()
            del pts, idx, keep, species, dims, s_log, d_pred, acc


# ---------------------------------------------------------------- board-grading service


class _BoardNet(_nn.Module):
    """A residual encoder (1/2 to 1/16) and a decoder with skips back to 1/4 resolution: defect logits per pixel; a
    grade head on the pooled deepest features."""

    def __init__(self, c_in, widths, n_defect, n_grade):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(c_in, widths[0], 3, 2, 1, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU())
        self.enc = _nn.ModuleList(BasicResBlock(a, b, 2) for a, b in zip(widths[:-1], widths[1:]))
        self.dec = _nn.ModuleList(_nn.Sequential(_nn.Conv2d(a + b, b, 3, 1, 1, bias=False), _nn.BatchNorm2d(b),
                                                 _nn.ReLU())
                                  for a, b in zip(widths[:1:-1], widths[-2:0:-1]))
        self.defect = _nn.Conv2d(widths[1], n_defect, 1)
        self.grade = mlp(widths[-1], widths[-1], n_grade)

    def forward(self, x):
        feats = [self.stem(x)]
        for e in self.enc:
            feats.append(e(feats[-1]))
        y = feats[-1]
        for d, skip in zip(self.dec, feats[-2:0:-1]):
            y = d(torch.cat([_F.interpolate(y, size=skip.shape[-2:], mode="nearest"), skip], 1))
        return self.defect(y).float(), self.grade(feats[-1].mean((2, 3))).float()


@_workload("board-grading serving (random init, a residual encoder-decoder convnet over sawn-board line-scanner images): 3,000-3,100 requests (drawn) of 1-6 boards each (drawn), the request's boards 128 px wide and 512-1,536 px long (drawn per request, a multiple of 64: 2.0-6.1 m at 4 mm a pixel), 4 channels (RGB and laser tracheid scatter), uint8 uploaded on a side stream from two reused pinned host buffers (filled once, sized for 6 boards of 1,536 px) one request ahead (SideUploads.ahead, one span), normalised on the device; a channels-last stride-2 stem (32) and stride-2 basic residual blocks (64/128/256, to 1/16), a decoder with skips to 1/4 resolution; 8 defect classes per pixel (clear, sound knot, dead knot, wane, split, decay, pitch pocket, stain) and 5 grades from the pooled features, bf16 autocast; per board the defect fractions, the defect fraction in 24 length zones (adaptive average pooling), the longest run of clear zones (defect fraction under 0.05) in px (the cumulative count of clear zones less its value at the last zone that was not clear, by cummax) and the top grade with its probability, read back per request")
def board_grading_serve(rng):
    c_in, n_defect, n_grade = 4, 8, 5
    widths = _smoke([32, 64, 128, 256], [16, 16, 32, 32])
    model = _BoardNet(c_in, widths, n_defect, n_grade).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    width, lo, hi, mult, max_boards = _smoke(128, 64), _smoke(512, 128), _smoke(1536, 192), 64, _smoke(6, 2)
    zones = _smoke(24, 4)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_boards * c_in * width * hi,), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    mean = torch.tensor([0.55, 0.45, 0.35, 0.3], device="cuda").view(1, c_in, 1, 1) * 255
    std = torch.tensor([0.2, 0.2, 0.2, 0.25], device="cuda").view(1, c_in, 1, 1) * 255
    nreq = rng.randint(_smoke(3000, 3), _smoke(3100, 4))
    plan = [(rng.randint(1, max_boards), rng.randint(lo // mult, hi // mult) * mult) for _ in range(nreq)]

    for (n, length), raw in up.ahead(plan, lambda p: (p[0] * c_in * width * p[1],)):
        with torch.no_grad():
            x = raw.view(n, c_in, width, length).float().sub_(mean).div_(std)
            x = x.contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                d_log, g_log = model(x)
            prob = d_log.softmax(1)
            frac = prob.mean((2, 3))
            bad = 1 - prob[:, 0]
            zone = _F.adaptive_avg_pool2d(bad[:, None], (1, zones))[:, 0, 0]
            clear = (zone < 0.05).float()
            count = clear.cumsum(1)
            run = count - (count * (1 - clear)).cummax(1).values  # clear zones since the last one that was not
            best = run.amax(1)
            gp, gi = g_log.softmax(-1).max(-1)
            out = torch.cat([frac, zone, (best * length / zones)[:, None], gp[:, None], gi.float()[:, None]], 1)
        out.tolist()
        del raw, x, d_log, g_log, prob, frac, bad, zone, clear, count, run, best, gp, gi, out


# ---------------------------------------------------------------- stand growth and yield forecasting (GRU)


class _GRUCell(_nn.Module):
    """A GRU cell written out: input and hidden projections, reset and update gates."""

    def __init__(self, d_in, d):
        super().__init__()
        self.x, self.h = _nn.Linear(d_in, 3 * d), _nn.Linear(d, 3 * d)

    def forward(self, x, h):
        xr, xz, xn = self.x(x).chunk(3, -1)
        hr, hz, hn = self.h(h).chunk(3, -1)
        r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
        return (1 - z) * torch.tanh(xn + r * hn) + z * h


class _YieldNet(_nn.Module):
    """Per-year climate, management and the previous year's stand state embedded with the plot's static
    covariates; two stacked GRU cells run year by year; next-year stand state and a mortality logit."""

    def __init__(self, d_clim, n_mgmt, cards, d_static, d_state, d):
        super().__init__()
        self.register_buffer("offsets", torch.tensor([0] + list(cards[:-1])).cumsum(0))
        self.cat = _nn.Embedding(sum(cards), 16)
        self.mgmt = _nn.Embedding(n_mgmt, 16)
        d_in = d_clim + 16 + len(cards) * 16 + d_static + d_state
        self.inp = _nn.Sequential(_nn.Linear(d_in, d), _nn.LayerNorm(d), _nn.GELU())
        self.cells = _nn.ModuleList([_GRUCell(d, d), _GRUCell(d, d)])
        self.init = _nn.Linear(len(cards) * 16 + d_static, 2 * d)
        self.out = mlp(d, d, d_state + 1, act=_nn.GELU)

    def start(self, cat, static):
        s = torch.cat([self.cat(cat + self.offsets).flatten(1), static], -1)
        return list(torch.tanh(self.init(s)).chunk(2, -1)), s

    def step(self, hs, s, clim, mgmt, state):
        x = self.inp(torch.cat([clim, self.mgmt(mgmt), s, state], -1))
        new = []
        for cell, h in zip(self.cells, hs):
            x = cell(x, h)
            new.append(x)
        y = self.out(x)
        return new, state + y[:, :-1], y[:, -1]


@_workload("stand growth and yield forecasting training (random init, a two-layer GRU written out step by step): 64-512 permanent sample plots a step (drawn), each an annual history of 6-30 years (drawn per plot, padded to the step's longest, masked); per year 24 monthly climate values (temperature and precipitation) and a management event (none, thinning, fertilisation, clear-cut, planting; embedded), per plot species group (of 20), soil class (of 12) and ecoregion (of 40) from one offset table of 16-wide embeddings and 4 static covariates (site index, elevation, latitude, initial age); the previous year's 4 stand attributes (top height, basal area, stem count, volume; teacher forcing) fed in; two GRU cells of width 256 written out year by year, the initial states from the plot's embeddings and static covariates, a residual next-year state and a mortality logit; mean squared error and binary cross-entropy on the real years only (masked); AdamW, clipping, bf16 autocast, 86 steps; the losses read back every 10 steps and every 17 steps a no-grad 40-year free-running forecast of 256 plots (the predicted state fed back) with the final volume and cumulative mortality read back")
def stand_yield_gru_train(rng):
    d_clim, n_mgmt, cards, d_static, d_state = 24, 5, [20, 12, 40], 4, 4
    d = _smoke(256, 16)
    model = _YieldNet(d_clim, n_mgmt, cards, d_static, d_state, d).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    lo, hi = _smoke(6, 2), _smoke(30, 4)

    def plots(b, t):
        clim = torch.randn(b, t, d_clim, device="cuda")
        mgmt = torch.multinomial(torch.tensor([0.9, 0.04, 0.03, 0.01, 0.02], device="cuda"), b * t,
                                 replacement=True).view(b, t)
        cat = torch.stack([torch.randint(0, c, (b,), device="cuda") for c in cards], 1)
        static = torch.randn(b, d_static, device="cuda")
        state = torch.randn(b, t + 1, d_state, device="cuda").cumsum(1) * 0.1
        dead = (torch.rand(b, t, device="cuda") < 0.02).float()
        return clim, mgmt, cat, static, state, dead

    steps = _smoke(86, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(64, 2), _smoke(512, 4))
        lengths = [rng.randint(lo, hi) for _ in range(b)]
        t = max(lengths)
        keep = keep_mask(lengths, t).float()
        clim, mgmt, cat, static, state, dead = plots(b, t)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            hs, s = model.start(cat, static)
            preds, morts = [], []
            for y in range(t):
                hs, nxt, mort = model.step(hs, s, clim[:, y], mgmt[:, y], state[:, y])
                preds.append(nxt)
                morts.append(mort)
        pred = torch.stack(preds, 1).float()
        mort = torch.stack(morts, 1).float()
        l_s = (((pred - state[:, 1:]) ** 2).mean(-1) * keep).sum() / keep.sum()
        l_m = (_F.binary_cross_entropy_with_logits(mort, dead, reduction="none") * keep).sum() / keep.sum()
        loss = l_s + l_m
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_s.detach(), l_m.detach()]).tolist()
        del keep, clim, mgmt, cat, static, state, dead, hs, s, preds, morts, pred, mort, l_s, l_m, loss
        if (step + 1) % _smoke(17, 2) == 0:
            model.eval()
            horizon, n = _smoke(40, 3), _smoke(256, 4)
            with torch.no_grad():
                clim, mgmt, cat, static, state, dead = plots(n, horizon)
                cur = state[:, 0]
                alive = torch.ones(n, device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    hs, s = model.start(cat, static)
                    for y in range(horizon):
                        hs, cur, mort = model.step(hs, s, clim[:, y], mgmt[:, y], cur)
                        alive = alive * (1 - torch.sigmoid(mort.float()))
                out = torch.stack([cur[:, 3].float().mean(), 1 - alive.mean()])
            out.tolist()
            del clim, mgmt, cat, static, state, dead, cur, alive, hs, s, mort, out

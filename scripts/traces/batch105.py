"""The hundred-and-fifth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch103_b.py are): mining, metals and heavy industry, written in torch alone, first half. Ore-grade estimation
training (a transformer over drill-hole assay samples of drawn counts with cross-attention from block centroids, a
Gaussian grade head and an ore/waste head), a mineral-sorting vision service (a residual convnet over conveyor-belt
camera frames of drawn sizes, per-cell mineral classes and grades, per-lane ejection decisions), blast-fragmentation
segmentation training (an encoder-decoder convnet over muck-pile photographs of drawn resolutions, fragment edges, a
distance map and a soft sieve curve) and haul-truck dispatch training (a message-passing graph network by index_add
over mine road graphs of drawn sizes, edge travel times, shovel queues and a truck-to-shovel assignment head). Same
conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned host
buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths,
resolutions and batch sizes are fixed on the host, padding handled by masks multiplied in or by torch.where /
masked_fill, no boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
mineral_sort_serve uploads its frames on a side stream (workload_helpers.SideUploads, one request ahead); the other
three are single-stream. The models run under bf16 autocast.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new105.sh's header for each workload's op outputs and peak live
bytes counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py,
and for the CPU smoke run (RECORD_SMOKE=1).
"""

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, PreNormBlock, SideUploads, _mha, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- ore-grade estimation (assay-set transformer)


class _CrossBlock(_nn.Module):
    """Queries attend over a masked set of keys (pre-norm), then a GELU MLP."""

    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.nq, self.nk, self.n2 = _nn.LayerNorm(d), _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.q, self.kv, self.o = _nn.Linear(d, d), _nn.Linear(d, 2 * d), _nn.Linear(d, d)
        self.ff = mlp(d, 4 * d, d, act=_nn.GELU)

    def forward(self, x, mem, key):
        k, v = self.kv(self.nk(mem)).chunk(2, -1)
        x = x + self.o(_mha(self.q(self.nq(x)), k, v, self.h, attn_mask=key))
        return x + self.ff(self.n2(x))


class _GradeNet(_nn.Module):
    def __init__(self, n_assay, n_rock, n_metal, d, heads, enc, dec):
        super().__init__()
        self.coord = mlp(3, d, d, act=_nn.GELU)
        self.assay = _nn.Linear(n_assay, d)
        self.rock = _nn.Embedding(n_rock, d)
        self.enc = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(enc))
        self.query = mlp(3, d, d, act=_nn.GELU)
        self.dec = _nn.ModuleList(_CrossBlock(d, heads) for _ in range(dec))
        self.norm = _nn.LayerNorm(d)
        self.grade, self.ore = _nn.Linear(d, 2 * n_metal), _nn.Linear(d, 1)

    def forward(self, xyz, assays, rock, key, blocks):
        x = self.coord(xyz) + self.assay(assays) + self.rock(rock)
        mask = key[:, None, None, :]
        for blk in self.enc:
            x = blk(x, mask=mask)
        q = self.query(blocks)
        for blk in self.dec:
            q = blk(q, x, mask)
        q = self.norm(q)
        mu, logvar = self.grade(q).float().chunk(2, -1)
        return mu, logvar.clamp(-8, 8), self.ore(q)[..., 0].float()


@_workload("ore-grade estimation training (random init, a set transformer over drill-hole assays): 8-32 deposit neighbourhoods a step (drawn), each of 64-512 assay intervals (drawn per neighbourhood, padded to the step's longest rounded up to a multiple of 32, a key mask) with coordinates, 6 log-assays and one of 12 rock types, and 16-96 block centroids to estimate (drawn per step); coordinates through a 2-layer MLP, assays through a linear layer, rock types embedded, summed; 4 pre-norm encoder blocks (width 256, 8 heads) under the key mask, 2 cross-attention decoder blocks from the block centroids over the encoded intervals; a Gaussian head (mean and log-variance, the log-variance clamped to +-8) for 3 metal grades (Gaussian negative log-likelihood written out: half of the sum of the log-variance and the squared error over the variance, averaged) and an ore/waste logit (binary cross-entropy, weight 0.5, ore where the first metal's drawn grade exceeds 0.3); AdamW, clipping, bf16 autocast, 375 steps; the two losses read back every 25 steps and every 93 steps a no-grad evaluation of 16 neighbourhoods of 512 intervals and 96 blocks with the grade RMSE and ore/waste accuracy read back")
def ore_grade_transformer_train(rng):
    d, heads, enc, dec = _smoke(256, 32), _smoke(8, 2), _smoke(4, 1), _smoke(2, 1)
    n_assay, n_rock, n_metal = 6, 12, 3
    max_n, min_n = _smoke(512, 48), _smoke(64, 8)
    model = _GradeNet(n_assay, n_rock, n_metal, d, heads, enc, dec).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.05)

    def batch(lengths, nb):
        b, t = len(lengths), -(-max(lengths) // 32) * 32
        key = keep_mask(lengths, t)
        xyz = torch.rand(b, t, 3, device="cuda") * 2 - 1
        assays = torch.randn(b, t, n_assay, device="cuda").masked_fill(~key[..., None], 0.0)
        rock = torch.randint(0, n_rock, (b, t), device="cuda")
        blocks = torch.rand(b, nb, 3, device="cuda") * 2 - 1
        grade = torch.randn(b, nb, n_metal, device="cuda")
        ore = (grade[..., 0] > 0.3).float()
        return xyz, assays, rock, key, blocks, grade, ore

    steps, every = _smoke(375, 3), _smoke(93, 2)
    for step in range(steps):
        model.train()
        b, nb = rng.randint(_smoke(8, 2), _smoke(32, 3)), rng.randint(_smoke(16, 2), _smoke(96, 4))
        xyz, assays, rock, key, blocks, grade, ore = batch([rng.randint(min_n, max_n) for _ in range(b)], nb)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            mu, logvar, ore_log = model(xyz, assays, rock, key, blocks)
        l_g = 0.5 * (logvar + (mu - grade).pow(2) * torch.exp(-logvar)).mean()
        l_o = _F.binary_cross_entropy_with_logits(ore_log, ore)
        loss = l_g + 0.5 * l_o
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 25 == 0:
            torch.stack([l_g.detach(), l_o.detach()]).tolist()
        del xyz, assays, rock, key, blocks, grade, ore, mu, logvar, ore_log, l_g, l_o, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                xyz, assays, rock, key, blocks, grade, ore = batch([max_n] * _smoke(16, 2), _smoke(96, 4))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    mu, _, ore_log = model(xyz, assays, rock, key, blocks)
                out = torch.stack([(mu - grade).pow(2).mean().sqrt(), ((ore_log > 0).float() == ore).float().mean()])
            out.tolist()
            del xyz, assays, rock, key, blocks, grade, ore, mu, ore_log, out


# ---------------------------------------------------------------- mineral-sorting vision service


class _SortNet(_nn.Module):
    def __init__(self, widths, n_cls):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, widths[0], 3, 2, 1, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU())
        blocks, c = [], widths[0]
        for w in widths[1:]:
            blocks += [BasicResBlock(c, w, 2), BasicResBlock(w, w, 1)]
            c = w
        self.body = _nn.Sequential(*blocks)
        self.cls, self.grade = _nn.Conv2d(c, n_cls, 1), _nn.Conv2d(c, 1, 1)

    def forward(self, x):
        h = self.body(self.stem(x))
        return self.cls(h).float(), self.grade(h).float()


@_workload("mineral-sorting vision serving (random init, a residual convnet over conveyor-belt camera frames): 2,000-2,080 requests (drawn) of 1-3 frames each (drawn), each request's belt width one of 512, 768 and 1,024 px (drawn) and its frame height 128-384 px (drawn, a multiple of 32); uint8 pixels uploaded on a side stream from two reused pinned host buffers (filled once, sized for 3 frames of 384 x 1,024) one request ahead with workload_helpers.SideUploads.ahead (one span, waited on by event, record_stream'ed), normalised on the device; a channels-last stem (stride 2, 32 channels) and four stages of two basic residual blocks (48/96/160/256, each stage stride 2) under bf16 autocast to a 1/32-resolution grid of 6 particle classes (class 0 the empty belt, class 1 waste) and a grade; per-lane (32 ejector lanes across the belt, adaptive average pooling) class probabilities and grade, ejection flags by torch.where where the waste probability over the non-empty-belt probability is above 0.6 and the belt loading (1 minus the empty-belt probability) above 0.15; each request's per-lane eject flags, eject count and mean grade over all lanes with the ejected lanes zeroed read back")
def mineral_sort_serve(rng):
    widths, n_cls, lanes = _smoke([32, 48, 96, 160, 256], [8, 8, 16]), 6, _smoke(32, 4)
    model = _SortNet(widths, n_cls).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    belts = _smoke([512, 768, 1024], [64, 96])
    h_lo, h_hi, max_f = _smoke(128, 32), _smoke(384, 64), _smoke(3, 2)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_f * 3 * h_hi * max(belts),), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    mean = torch.tensor([0.40, 0.38, 0.35], device="cuda").view(1, 3, 1, 1) * 255
    std = torch.tensor([0.25, 0.24, 0.24], device="cuda").view(1, 3, 1, 1) * 255
    plan = [(rng.randint(1, max_f), rng.randint(h_lo // 32, h_hi // 32) * 32, rng.choice(belts))
            for _ in range(rng.randint(_smoke(2000, 3), _smoke(2080, 4)))]

    for (f, h, w), raw in up.ahead(plan, lambda p: (p[0] * 3 * p[1] * p[2],)):
        with torch.no_grad():
            x = raw.view(f, 3, h, w).float().sub_(mean).div_(std).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits, grade = model(x)
            prob = logits.softmax(1)
            lane_p = _F.adaptive_avg_pool2d(prob, (1, lanes))[:, :, 0]  # (f, cls, lanes)
            lane_g = _F.adaptive_avg_pool2d(grade, (1, lanes))[:, 0, 0]
            loading = 1.0 - lane_p[:, 0]  # class 0 is empty belt
            waste = lane_p[:, 1] / loading.clamp(min=1e-3)
            eject = torch.where((waste > 0.6) & (loading > 0.15), 1.0, 0.0)
            out = torch.cat([eject.flatten(), eject.sum()[None], (lane_g * (1 - eject)).mean()[None]])
        out.tolist()
        del raw, x, logits, grade, prob, lane_p, lane_g, loading, waste, eject, out


# ---------------------------------------------------------------- blast-fragmentation segmentation


def _conv_bn(cin, cout, stride=1):
    return _nn.Sequential(_nn.Conv2d(cin, cout, 3, stride, 1, bias=False), _nn.BatchNorm2d(cout), _nn.SiLU())


class _FragNet(_nn.Module):
    """An encoder of strided conv stages, a decoder of bilinear upsampling and concatenated skips; an edge logit,
    a distance-to-edge map and a fragment-size map (log of the size in cm) at full resolution."""

    def __init__(self, widths):
        super().__init__()
        self.stem = _nn.Sequential(_conv_bn(3, widths[0]), _conv_bn(widths[0], widths[0]))
        self.down = _nn.ModuleList(_nn.Sequential(_conv_bn(a, b, 2), _conv_bn(b, b))
                                   for a, b in zip(widths[:-1], widths[1:]))
        self.up = _nn.ModuleList(_nn.Sequential(_conv_bn(a + b, b), _conv_bn(b, b))
                                 for a, b in zip(widths[:0:-1], widths[-2::-1]))
        self.head = _nn.Conv2d(widths[0], 3, 1)

    def forward(self, x):
        feats = [self.stem(x)]
        for d in self.down:
            feats.append(d(feats[-1]))
        y = feats[-1]
        for up, skip in zip(self.up, feats[-2::-1]):
            y = up(torch.cat([_F.interpolate(y, size=skip.shape[-2:], mode="bilinear", align_corners=False), skip],
                             1))
        out = self.head(y).float()
        return out[:, 0], out[:, 1], out[:, 2]


def _sieve_curve(log_size, weight, bins):
    """Cumulative passing fraction at each sieve size, from a soft (sigmoid) assignment of every pixel's fragment
    size below each sieve, weighted per pixel: (B, len(bins))."""
    below = torch.sigmoid((bins[None, :, None] - log_size.flatten(1)[:, None, :]) * 4.0)
    w = weight.flatten(1)[:, None, :]
    return (below * w).sum(-1) / w.sum(-1).clamp(min=1.0)


@_workload("blast-fragmentation segmentation training (random init, an encoder-decoder convnet over muck-pile photographs): photographs of 256-640 px (drawn per step, a multiple of 64, width 1-1.5 times the height, a multiple of 64) with 2-16 images a step (drawn, at most 1.9M pixels a step), drawn on the device; a channels-last encoder (two 3x3 conv-BN-SiLU at 32 channels, stride-2 stages of 64/128/192/256), a bilinear-upsampling decoder with concatenated skips; an edge logit (binary cross-entropy with pos_weight 3 against the mask where a bilinearly upsampled 1/8-resolution random field is within 0.15 of zero), a distance-to-edge map (smooth L1 against the edge mask's 9 x 9 average, weight 0.5) and a log fragment-size map whose soft sieve curve over 10 sieve sizes (log sizes 0-4.5; sigmoid assignment, weighted by non-edge pixels) is matched to a drawn monotone curve (L1, weight 0.2); AdamW, clipping, bf16 autocast, 670 steps; the three losses read back every 20 steps and every 168 steps a no-grad evaluation of 2 photographs of 640 x 960 with edge F1 and the P20/P50/P80 sieve sizes (the first sieve size whose predicted passing fraction reaches 0.2, 0.5 and 0.8, found by counting) read back")
def blast_fragmentation_seg_train(rng):
    widths = _smoke([32, 64, 128, 192, 256], [8, 8, 16])
    model = _FragNet(widths).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    budget, lo, hi = _smoke(1_900_000, 3 * 64 * 96), _smoke(256, 64), _smoke(640, 128)
    bins = torch.linspace(0.0, 4.5, 10, device="cuda")
    pos_w = torch.tensor([3.0], device="cuda")

    def photos(b, h, w):
        img = torch.rand(b, 3, h, w, device="cuda").contiguous(memory_format=torch.channels_last)
        field = _F.interpolate(torch.randn(b, 1, h // 8, w // 8, device="cuda"), size=(h, w), mode="bilinear",
                               align_corners=False)[:, 0]
        edge = (field.abs() < 0.15).float()
        dist = _F.avg_pool2d(edge[:, None], 9, 1, 4)[:, 0]
        curve = torch.rand(b, len(bins), device="cuda").cumsum(1)
        curve = curve / curve[:, -1:]
        return img, edge, dist, curve

    steps, every = _smoke(670, 3), _smoke(168, 2)
    for step in range(steps):
        model.train()
        h = rng.randint(lo // 64, hi // 64) * 64
        w = rng.randint(h // 64, (3 * h // 2) // 64) * 64
        b = rng.randint(2, max(2, min(16, budget // (h * w))))
        img, edge, dist, curve = photos(b, h, w)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            e_log, d_pred, s_pred = model(img)
        l_e = _F.binary_cross_entropy_with_logits(e_log, edge, pos_weight=pos_w)
        l_d = _F.smooth_l1_loss(d_pred, dist)
        l_s = (_sieve_curve(s_pred, 1.0 - edge, bins) - curve).abs().mean()
        loss = l_e + 0.5 * l_d + 0.2 * l_s
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_e.detach(), l_d.detach(), l_s.detach()]).tolist()
        del img, edge, dist, curve, e_log, d_pred, s_pred, l_e, l_d, l_s, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                eh = _smoke(640, 64)
                img, edge, dist, curve = photos(2, eh, eh * 3 // 2)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    e_log, _, s_pred = model(img)
                pe = (e_log > 0).float()
                f1 = 2 * (pe * edge).sum() / (pe.sum() + edge.sum()).clamp(min=1)
                cum = _sieve_curve(s_pred, 1.0 - pe, bins).mean(0)
                # P20/P50/P80: the sieve sizes interpolated where the curve crosses 0.2, 0.5, 0.8 (by counting)
                pts = torch.tensor([0.2, 0.5, 0.8], device="cuda")
                idx = (cum[None, :] < pts[:, None]).sum(1).clamp(max=len(bins) - 1)
                out = torch.cat([f1[None], bins[idx]])
            out.tolist()
            del img, edge, dist, curve, e_log, s_pred, pe, f1, cum, pts, idx, out


# ---------------------------------------------------------------- haul-truck dispatch (road-graph message passing)


class _RoadLayer(_nn.Module):
    """An edge-conditioned message-passing layer: edge states updated from both end nodes, messages summed into the
    receiving node by index_add and divided by the in-degree, residual node and edge updates with layer norm."""

    def __init__(self, d):
        super().__init__()
        self.edge = mlp(3 * d, d, d, act=_nn.SiLU)
        self.node = mlp(2 * d, d, d, act=_nn.SiLU)
        self.ne, self.nn_ = _nn.LayerNorm(d), _nn.LayerNorm(d)

    def forward(self, h, e, src, dst, inv_deg):
        e = e + self.edge(torch.cat([h.index_select(0, src), h.index_select(0, dst), e], -1))
        agg = torch.zeros_like(h, dtype=torch.float32).index_add_(0, dst, e.float()) * inv_deg
        h = h + self.node(torch.cat([h, agg], -1))
        return self.nn_(h), self.ne(e)


class _DispatchNet(_nn.Module):
    def __init__(self, n_node_feat, n_kind, n_edge_feat, n_truck_feat, d, layers):
        super().__init__()
        self.kind = _nn.Embedding(n_kind, d)
        self.nin, self.ein = _nn.Linear(n_node_feat, d), mlp(n_edge_feat, d, d, act=_nn.SiLU)
        self.layers = _nn.ModuleList(_RoadLayer(d) for _ in range(layers))
        self.time, self.queue = mlp(d, d, 1, act=_nn.SiLU), mlp(d, d, 1, act=_nn.SiLU)
        self.truck = mlp(n_truck_feat + d, d, d, act=_nn.SiLU)
        self.shovel = _nn.Linear(d, d)

    def forward(self, nf, kind, ef, src, dst, inv_deg):
        h = self.nin(nf) + self.kind(kind)
        e = self.ein(ef)
        for layer in self.layers:
            h, e = layer(h, e, src, dst, inv_deg)
        return h, self.time(e)[:, 0].float(), self.queue(h)[:, 0].float()


@_workload("haul-truck dispatch training (random init, an edge-conditioned message-passing network by index_select and index_add over mine road graphs): 2-6 mine graphs a step (drawn), each of 300-2,000 road nodes (drawn) with 2-4 directed road segments per node (drawn per graph, each node the source of that many, destinations random within the graph, offsets by the running node count), 8 node features and one of 5 node kinds (shovel, dump, crusher, intersection, park), 6 segment features (grade, length, rolling resistance, congestion, ...), the first 4-16 nodes of each graph (drawn) its shovels; 6 layers of width 128 (edge update from both end nodes, in-degree-normalised index_add aggregation, layer norm); segment travel times (smooth L1), shovel queue waits on shovel nodes only (MSE masked by torch.where, weight 0.5), and 32-256 trucks a graph (drawn) with 10 state features and their current node's embedding (index_select) scored against their graph's shovels (padded to the step's most shovels, masked_fill to -inf), cross-entropy to a drawn target shovel (weight 0.3); AdamW, clipping, bf16 autocast, 400 steps; the three losses read back every 25 steps and every 100 steps a no-grad evaluation of 4 graphs of 2,000 nodes (3 segments a node, 16 shovels, 256 trucks) with the assignment accuracy and travel-time MAE read back")
def haul_truck_dispatch_gnn_train(rng):
    d, layers = _smoke(128, 16), _smoke(6, 2)
    n_nf, n_kind, n_ef, n_tf = 8, 5, 6, 10
    model = _DispatchNet(n_nf, n_kind, n_ef, n_tf, d, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    n_lo, n_hi, t_lo, t_hi = _smoke(300, 20), _smoke(2000, 40), _smoke(32, 3), _smoke(256, 6)

    def graphs(sizes, degs, shovels, trucks):
        g = len(sizes)
        src, dst, kinds, truck_node = [], [], [], []
        off = 0
        for n, k, s, t in zip(sizes, degs, shovels, trucks):
            src.append(torch.arange(off, off + n, device="cuda").repeat_interleave(k))
            dst.append(torch.randint(off, off + n, (n * k,), device="cuda"))
            kind = torch.randint(1, n_kind, (n,), device="cuda")
            kinds.append(torch.cat([torch.zeros(s, dtype=torch.long, device="cuda"), kind[s:]]))
            truck_node.append(torch.randint(off, off + n, (t,), device="cuda"))
            off += n
        src, dst, kind, truck_node = torch.cat(src), torch.cat(dst), torch.cat(kinds), torch.cat(truck_node)
        deg = torch.zeros(off, device="cuda").index_add_(0, dst, torch.ones(dst.shape[0], device="cuda"))
        inv_deg = (1.0 / deg.clamp(min=1.0))[:, None]
        nf = torch.randn(off, n_nf, device="cuda")
        ef = torch.randn(src.shape[0], n_ef, device="cuda")
        t_time = ef[:, :2].abs().sum(1) + 0.1 * torch.rand(src.shape[0], device="cuda")
        t_queue = torch.rand(off, device="cuda") * 5
        is_shovel = kind == 0
        # shovel node indices per graph padded to the step's most shovels, and the mask of real ones
        ms = max(shovels)
        starts = torch.tensor([sum(sizes[:i]) for i in range(g)], device="cuda")
        sh_idx = starts[:, None] + torch.arange(ms, device="cuda")[None]
        sh_keep = keep_mask(shovels, ms)
        t_graph = torch.cat([torch.full((t,), i, device="cuda") for i, t in enumerate(trucks)])
        tf = torch.randn(t_graph.shape[0], n_tf, device="cuda")
        target = (torch.rand(t_graph.shape[0], device="cuda") * torch.tensor(shovels, device="cuda")[t_graph]).long()
        return (nf, kind, ef, src, dst, inv_deg, t_time, t_queue, is_shovel, sh_idx, sh_keep, t_graph, tf,
                truck_node, target)

    def run(data):
        nf, kind, ef, src, dst, inv_deg, _, _, _, sh_idx, sh_keep, t_graph, tf, truck_node, _ = data
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h, time, queue = model(nf, kind, ef, src, dst, inv_deg)
            sh = model.shovel(h[sh_idx])  # (G, ms, d)
            tr = model.truck(torch.cat([tf, h.index_select(0, truck_node)], -1))
            score = (tr[:, None, :] * sh[t_graph]).sum(-1).float()
        score = score.masked_fill(~sh_keep[t_graph], float("-inf"))
        return time, queue, score

    steps, every = _smoke(400, 3), _smoke(100, 2)
    for step in range(steps):
        model.train()
        g = rng.randint(_smoke(2, 1), _smoke(6, 2))
        sizes = [rng.randint(n_lo, n_hi) for _ in range(g)]
        data = graphs(sizes, [rng.randint(2, 4) for _ in range(g)], [rng.randint(4, 16) for _ in range(g)],
                      [rng.randint(t_lo, t_hi) for _ in range(g)])
        time, queue, score = run(data)
        t_time, t_queue, is_shovel, target = data[6], data[7], data[8], data[14]
        l_t = _F.smooth_l1_loss(time, t_time)
        l_q = torch.where(is_shovel, (queue - t_queue).pow(2), 0.0).sum() / is_shovel.sum().clamp(min=1)
        l_a = _F.cross_entropy(score, target)
        loss = l_t + 0.5 * l_q + 0.3 * l_a
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 25 == 0:
            torch.stack([l_t.detach(), l_q.detach(), l_a.detach()]).tolist()
        del data, time, queue, score, t_time, t_queue, is_shovel, target, l_t, l_q, l_a, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                ng = _smoke(4, 2)
                data = graphs([n_hi] * ng, [3] * ng, [16] * ng, [t_hi] * ng)
                time, _, score = run(data)
                out = torch.stack([(score.argmax(1) == data[14]).float().mean(), (time - data[6]).abs().mean()])
            out.tolist()
            del data, time, score, out

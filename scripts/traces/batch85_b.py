"""The eighty-fifth batch of held-out workloads for record.py, second half (the first is batch85.py): logistics,
warehousing and supply chain, written in torch alone. A package dimensioning service (int16 depth frames from an
overhead camera at drawn resolutions uploaded on a side stream, hole filling, a segmentation U-Net over depth and its
gradients, a floor plane fitted by weighted least squares, the box height over the plane and the minimum-area
footprint rectangle over a fixed set of rotations, all under masks), fleet ETA training (a graph network over the road
segments of a city region of drawn size, message passing by index_select and index_add, segment travel times and a
trip transformer over the drawn number of segments of each trip under a mask), a parcel-sorting vision service (uint8
conveyor images and lane ids uploaded on a side stream, a ResNet-style classifier of destination zone, hazard labels
and the shipping label's position, the zones folded into sorter chutes reachable from each lane by torch.where, the
top chutes read back) and a multi-echelon inventory simulation trained by PPO (a central warehouse and a drawn number
of regional DCs over a drawn horizon in a batch of simulated networks, a deep-sets actor-critic ordering stock, lead
time pipelines, allocation of scarce central stock, generalised advantage estimation and clipped policy updates over
shuffled minibatches). Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device
(or, for the two services, from two reused pinned host buffers), `rng` the workload's random.Random for every shape,
count and sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow
reads a tensor's value: frame counts, region sizes, trip lengths, network sizes and horizons are fixed on the host,
padding handled by masks multiplied in or by torch.where / masked_fill, no boolean-mask indexing; losses, metrics and
results are read back only at logging points. package_dimension_depth_serve and parcel_sort_vision_serve use a side
stream (uploads waited on by event, the tensors record_stream'ed); the other two are single-stream. The networks run
under bf16 autocast. Every position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new85.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and for
which of them the CPU smoke run (RECORD_SMOKE=1) ran.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _loguniform(rng, lo, hi, mult=1):
    return _b.rec._loguniform(rng, lo, hi, mult)


# ---------------------------------------------------------------- package dimensioning from depth


class _DepthUNet(_nn.Module):
    def __init__(self, cin, widths):
        super().__init__()
        self.down, c = _nn.ModuleList(), cin
        for i, w in enumerate(widths):
            self.down.append(_nn.Sequential(_nn.Conv2d(c, w, 3, 1 if i == 0 else 2, 1),
                                            _nn.InstanceNorm2d(w, affine=True), _nn.ReLU(),
                                            _nn.Conv2d(w, w, 3, 1, 1), _nn.ReLU()))
            c = w
        self.up = _nn.ModuleList()
        for w in reversed(widths[:-1]):
            self.up.append(_nn.Sequential(_nn.Conv2d(c + w, w, 3, 1, 1), _nn.InstanceNorm2d(w, affine=True),
                                          _nn.ReLU(), _nn.Conv2d(w, w, 3, 1, 1), _nn.ReLU()))
            c = w
        self.out = _nn.Conv2d(c, 1, 1)

    def forward(self, x):
        skips = []
        for dn in self.down:
            x = dn(x)
            skips.append(x)
        skips.pop()
        for up in self.up:
            s = skips.pop()
            x = up(torch.cat([_F.interpolate(x, size=s.shape[-2:], mode="bilinear", align_corners=False), s], 1))
        return self.out(x)


@_workload("package dimensioning service (random init, an overhead depth-camera dimensioner at a parcel induction station): 1,800-1,900 requests (drawn) of 1-8 depth frames (log-uniform) at 240 x 320, 360 x 480 or 480 x 640 (drawn per request); the int16 millimetre depths uploaded on a side stream from two reused pinned host buffers one request ahead (waited on by event, record_stream'ed); invalid pixels filled from a 5 x 5 max pool by torch.where, depth gradients, a 4-level segmentation U-Net (32-64-128-256 channels, instance norm) under bf16 autocast, back-projection through fixed intrinsics, a floor plane fitted to the unmasked pixels by weighted least squares (3 x 3 normal equations, torch.linalg.solve), the box height as the masked maximum over the plane and the minimum-area footprint rectangle over 18 rotations by masked minima and maxima, the volume; each request's dimensions read back")
def package_dimension_depth_serve(rng):
    widths = _smoke([32, 64, 128, 256], [4, 8, 8, 16])
    sizes = _smoke([(240, 320), (360, 480), (480, 640)], [(24, 32), (32, 48)])
    maxb, n_ang = _smoke(8, 3), _smoke(18, 6)
    maxh, maxw = max(s[0] for s in sizes), max(s[1] for s in sizes)
    model = _DepthUNet(3, widths).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    ang = torch.arange(n_ang, device="cuda").float() * (math.pi / 2 / n_ang)
    cos_a, sin_a = ang.cos()[None, :, None], ang.sin()[None, :, None]
    host = [torch.randint(500, 2500, (maxb * maxh * maxw,), dtype=torch.int16).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    nreq = rng.randint(_smoke(1800, 3), _smoke(1900, 4))
    plan = [(_loguniform(rng, 1, maxb), rng.choice(sizes)) for _ in range(nreq)]
    nxt = up.upload(0, plan[0][0] * plan[0][1][0] * plan[0][1][1])
    for i in range(nreq):
        b, (h, w) = plan[i]
        item = nxt
        if i + 1 < nreq:
            nb, (nh, nw) = plan[i + 1]
            nxt = up.upload(i + 1, nb * nh * nw)
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            z = raw.view(b, 1, h, w).float() / 1000
            hole = z < 0.55
            z = torch.where(hole, _F.max_pool2d(z, 5, 1, 2), z)
            gx = _F.pad(z[..., :, 1:] - z[..., :, :-1], (0, 1, 0, 0))
            gy = _F.pad(z[..., 1:, :] - z[..., :-1, :], (0, 0, 0, 1))
            x = torch.cat([(z - 1.5) / 0.5, gx * 20, gy * 20], 1).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logit = model(x)
            m = (logit.float() > 0).float().view(b, -1)
            fx = 0.9 * w
            us = (torch.arange(w, device="cuda").float() - w / 2) / fx
            vs = (torch.arange(h, device="cuda").float() - h / 2) / fx
            zf = z.view(b, -1)
            px = (us[None, None, :] * z[:, 0]).view(b, -1)
            py = (vs[None, :, None] * z[:, 0]).view(b, -1)
            fw = (1 - m) * (1 - hole.float().view(b, -1))
            A = torch.stack([px, py, torch.ones_like(px)], -1)
            ata = (A * fw[..., None]).transpose(1, 2) @ A + 1e-4 * torch.eye(3, device="cuda")
            atb = (A * fw[..., None]).transpose(1, 2) @ zf[..., None]
            coef = torch.linalg.solve(ata, atb)[..., 0]
            above = (A @ coef[..., None])[..., 0] - zf
            height = (above / coef[:, :2].pow(2).sum(-1, keepdim=True).add(1).sqrt())
            height = torch.where(m > 0, height, torch.full_like(height, -1e4)).amax(1).clamp(min=0)
            mm = m[:, None] > 0
            ru = px[:, None] * cos_a + py[:, None] * sin_a
            rv = py[:, None] * cos_a - px[:, None] * sin_a
            eu = torch.where(mm, ru, -1e4).amax(-1) - torch.where(mm, ru, 1e4).amin(-1)
            evv = torch.where(mm, rv, -1e4).amax(-1) - torch.where(mm, rv, 1e4).amin(-1)
            area = (eu * evv).clamp(min=0)
            best = area.argmin(-1, keepdim=True)
            length, width = eu.gather(1, best)[:, 0].clamp(min=0), evv.gather(1, best)[:, 0].clamp(min=0)
            dims = torch.stack([length, width, height, length * width * height, m.mean(1)], 1)
        dims.tolist()
        del item, raw, z, hole, gx, gy, x, logit, m, us, vs, zf, px, py, fw, A, ata, atb, coef, above, height
        del mm, ru, rv, eu, evv, area, best, length, width, dims


# ---------------------------------------------------------------- fleet ETA over a road graph


class _RoadGNN(_nn.Module):
    def __init__(self, node_in, edge_in, n_class, d, layers):
        super().__init__()
        self.road_class = _nn.Embedding(n_class, 16)
        self.node_enc = _nn.Sequential(mlp(node_in, d, d), _nn.LayerNorm(d))
        self.edge_enc = _nn.Sequential(mlp(edge_in + 16, d, d), _nn.LayerNorm(d))
        self.edge_mlps = _nn.ModuleList(_nn.Sequential(mlp(3 * d, d, d), _nn.LayerNorm(d)) for _ in range(layers))
        self.node_mlps = _nn.ModuleList(_nn.Sequential(mlp(2 * d, d, d), _nn.LayerNorm(d)) for _ in range(layers))

    def forward(self, nodes, edges, cls, snd, rcv):
        v = self.node_enc(nodes)
        e = self.edge_enc(torch.cat([edges, self.road_class(cls).to(edges.dtype)], -1))
        for em, nm in zip(self.edge_mlps, self.node_mlps):
            e = e + em(torch.cat([e, v.index_select(0, snd), v.index_select(0, rcv)], -1))
            agg = torch.zeros(v.shape[0], e.shape[1], device=v.device, dtype=e.dtype).index_add_(0, rcv, e)
            v = v + nm(torch.cat([v, agg], -1))
        return e


class _TripETA(_nn.Module):
    def __init__(self, d, heads, layers, max_seg):
        super().__init__()
        self.seg_time = mlp(d, d, 1)
        self.pos = _nn.Embedding(max_seg, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.corr = mlp(d + 2, d, 1)

    def forward(self, e, ids, smask, free_time, tod):
        x = e[ids] + self.pos(torch.arange(ids.shape[1], device=ids.device))[None]
        base = (_F.softplus(self.seg_time(x).float()[..., 0]) * free_time * smask).sum(1)
        key = ((1 - smask) * -1e4)[:, None, None, :].to(x.dtype)
        for blk in self.blocks:
            x = blk(x, mask=key)
        m = smask[..., None].to(x.dtype)
        pooled = (x * m).sum(1) / m.sum(1).clamp(min=1)
        return base * torch.exp(0.5 * torch.tanh(self.corr(torch.cat([pooled, tod.to(x.dtype)], -1)).float()[:, 0]))


@_workload("fleet ETA prediction training (random init, a graph network over a city road network for delivery dispatch): a region of 40-110 x 40-110 intersections a step (drawn; up to 12,100 nodes and about 48,000 directed road segments), segment features of length, speed limit, live speed, road class (an 8-row embedding) and time of day; a 4-step message-passing network (edge MLPs over sender and receiver latents by index_select, index_add aggregation, node MLPs, width 128, layer norm, residuals); 256-768 trips a step (log-uniform, a multiple of 32) of 5-80 segments each (drawn per trip, padded to the step's longest and masked), per-segment travel times from the segment latents summed under the mask, a 2-block trip transformer (4 heads) with an 80-row position table (the longest padded trip) giving a correction factor; Huber loss on the log ETA, AdamW, clipping, bf16 autocast, 425 steps; the loss read back every 20 steps and every 85 steps an evaluation of 2,048 trips with the MAPE read back")
def road_eta_gnn_train(rng):
    d, layers, heads, n_class = _smoke(128, 16), _smoke(4, 2), _smoke(4, 2), 8
    max_seg, min_seg = _smoke(80, 8), 5
    gnn = _RoadGNN(4, 6, n_class, d, layers).cuda()
    trip = _TripETA(d, heads, 2, max_seg).cuda()
    params = list(gnn.parameters()) + list(trip.parameters())
    opt = torch.optim.AdamW(params, lr=3e-4, weight_decay=0.01)

    def region(gx, gy):
        idx = torch.arange(gx * gy, device="cuda").view(gy, gx)
        a = torch.cat([idx[:, :-1].flatten(), idx[:-1, :].flatten()])
        c = torch.cat([idx[:, 1:].flatten(), idx[1:, :].flatten()])
        snd, rcv = torch.cat([a, c]), torch.cat([c, a])
        n_e = snd.shape[0]
        yy, xx = torch.meshgrid(torch.linspace(0, 1, gy, device="cuda"), torch.linspace(0, 1, gx, device="cuda"),
                                indexing="ij")
        nodes = torch.stack([xx.flatten(), yy.flatten(), (torch.rand(gx * gy, device="cuda") < 0.3).float(),
                             torch.rand(gx * gy, device="cuda")], -1)
        length = 0.05 + 0.45 * torch.rand(n_e, device="cuda")
        limit = 30 + 70 * torch.rand(n_e, device="cuda")
        live = 0.2 + 0.8 * torch.rand(n_e, device="cuda")
        tod = rng.uniform(0, 2 * math.pi)
        edges = torch.stack([length, limit / 100, live, length / (limit * live) * 60,
                             torch.full_like(length, math.sin(tod)), torch.full_like(length, math.cos(tod))], -1)
        cls = torch.randint(0, n_class, (n_e,), device="cuda")
        free_time = length / limit * 60
        return nodes, edges, cls, snd, rcv, free_time, torch.tensor([[math.sin(tod), math.cos(tod)]], device="cuda")

    def trips(n_e, lens):
        s = max(lens)
        ids = torch.randint(0, n_e, (len(lens), s), device="cuda")
        smask = (torch.arange(s, device="cuda")[None] < torch.tensor(lens, device="cuda")[:, None]).float()
        return ids, smask

    steps = _smoke(425, 3)
    for step in range(steps):
        gnn.train()
        trip.train()
        gx, gy = rng.randint(_smoke(40, 4), _smoke(110, 6)), rng.randint(_smoke(40, 4), _smoke(110, 6))
        nodes, edges, cls, snd, rcv, free_time, tod = region(gx, gy)
        nt = _loguniform(rng, _smoke(256, 4), _smoke(768, 8), _smoke(32, 4))
        lens = [rng.randint(min_seg, max_seg) for _ in range(nt)]
        ids, smask = trips(snd.shape[0], lens)
        ft = free_time[ids]
        target = (ft * smask).sum(1) * (1 + torch.rand(nt, device="cuda"))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            e = gnn(nodes, edges, cls, snd, rcv)
            eta = trip(e, ids, smask, ft, tod.expand(nt, 2))
        loss = _F.huber_loss(torch.log(eta + 1e-3), torch.log(target + 1e-3), delta=0.5)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if step % 20 == 0:
            loss.item()
        del nodes, edges, cls, snd, rcv, free_time, tod, ids, smask, ft, target, e, eta, loss
        if (step + 1) % _smoke(85, 2) == 0:
            gnn.eval()
            trip.eval()
            nt = _smoke(2048, 8)
            with torch.no_grad():
                nodes, edges, cls, snd, rcv, free_time, tod = region(_smoke(110, 6), _smoke(110, 6))
                ids, smask = trips(snd.shape[0], [rng.randint(min_seg, max_seg) for _ in range(nt)])
                ft = free_time[ids]
                target = (ft * smask).sum(1) * 1.5
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    e = gnn(nodes, edges, cls, snd, rcv)
                    eta = trip(e, ids, smask, ft, tod.expand(nt, 2))
                mape = ((eta - target).abs() / target.clamp(min=1e-3)).mean()
            mape.item()
            del nodes, edges, cls, snd, rcv, free_time, tod, ids, smask, ft, target, e, eta, mape


# ---------------------------------------------------------------- parcel sorting vision service


class _Basic(_nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1, self.b1 = _nn.Conv2d(cin, cout, 3, stride, 1, bias=False), _nn.BatchNorm2d(cout)
        self.c2, self.b2 = _nn.Conv2d(cout, cout, 3, 1, 1, bias=False), _nn.BatchNorm2d(cout)
        self.sc = _nn.Identity() if stride == 1 and cin == cout else _nn.Sequential(
            _nn.Conv2d(cin, cout, 1, stride, bias=False), _nn.BatchNorm2d(cout))

    def forward(self, x):
        return _F.relu(self.b2(self.c2(_F.relu(self.b1(self.c1(x))))) + self.sc(x))


class _SortNet(_nn.Module):
    def __init__(self, widths, zones, hazards):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, widths[0], 7, 2, 3, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU(), _nn.MaxPool2d(3, 2, 1))
        self.stages, c = _nn.ModuleList(), widths[0]
        for i, w in enumerate(widths):
            self.stages.append(_nn.Sequential(_Basic(c, w, 1 if i == 0 else 2), _Basic(w, w, 1)))
            c = w
        self.zone, self.hazard = _nn.Linear(c, zones), _nn.Linear(c, hazards)
        self.label = _nn.Conv2d(widths[1], 1, 1)

    def forward(self, x):
        x = self.stem(x)
        heat = None
        for i, s in enumerate(self.stages):
            x = s(x)
            if i == 1:
                heat = self.label(x)
        f = x.mean((2, 3))
        return self.zone(f), self.hazard(f), heat


@_workload("parcel sorting vision service (random init, a ResNet-18-style classifier on a cross-belt sorter's induction camera): 1,900-2,000 requests (drawn) of 1-24 parcels (log-uniform) imaged at 192, 224 or 256 pixels (drawn per request) with the conveyor lane (of 8) each came in on; the uint8 pixels and lane ids uploaded on a side stream from two reused pinned host buffers one request ahead (two spans of one buffer, waited on by event, record_stream'ed); normalisation, a ResNet-18-style network (64-128-256-512 channels, batch norm) under bf16 autocast with heads for 500 destination zones, 6 hazard labels and a stride-8 shipping-label heatmap whose soft-argmax gives the label centre; the zone probabilities folded into 120 sorter chutes by a zone-to-chute matrix, chutes unreachable from the parcel's lane pushed down by torch.where, the top-3 chutes, their scores, the hazard flags and the label centre read back per request")
def parcel_sort_vision_serve(rng):
    widths, zones, hazards = _smoke([64, 128, 256, 512], [4, 8, 8, 16]), _smoke(500, 20), 6
    n_chute, n_lane, maxb = _smoke(120, 10), 8, _smoke(24, 3)
    resolutions = _smoke([192, 224, 256], [32, 64])
    maxr = max(resolutions)
    model = _SortNet(widths, zones, hazards).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    zone_chute = _F.one_hot(torch.randint(0, n_chute, (zones,), device="cuda"), n_chute).float()
    lane_ok = torch.rand(n_lane, n_chute, device="cuda") < 0.7
    mean = torch.tensor([0.5, 0.48, 0.45], device="cuda").view(1, 3, 1, 1) * 255
    std = torch.tensor([0.25, 0.25, 0.25], device="cuda").view(1, 3, 1, 1) * 255
    npix = maxb * 3 * maxr * maxr
    host = []
    for _ in range(2):
        buf = torch.randint(0, 256, (npix + maxb,), dtype=torch.uint8)
        buf[npix:] = torch.randint(0, n_lane, (maxb,), dtype=torch.uint8)
        host.append(buf.pin_memory())
    up = SideUploads(host)
    nreq = rng.randint(_smoke(1900, 3), _smoke(2000, 4))
    plan = [(_loguniform(rng, 1, maxb), rng.choice(resolutions)) for _ in range(nreq)]

    def spans(i):
        b, r = plan[i]
        return b * 3 * r * r, slice(npix, npix + b)

    nxt = up.upload(0, *spans(0))
    for i in range(nreq):
        b, r = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, *spans(i + 1))
        raw, lanes, ev = item
        SideUploads.ready(ev, raw, lanes)
        with torch.no_grad():
            x = ((raw.view(b, 3, r, r).float() - mean) / std).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                zl, hl, heat = model(x)
            chute = torch.softmax(zl.float(), -1) @ zone_chute
            chute = torch.where(lane_ok[lanes.long().clamp(max=n_lane - 1)], chute, chute - 2.0)
            top_s, top_i = chute.topk(3, -1)
            hz = torch.sigmoid(hl.float())
            hw = heat.shape[-1]
            p = torch.softmax(heat.float().flatten(1), -1).view(b, hw, hw)
            grid = torch.arange(hw, device="cuda").float() / hw
            centre = torch.stack([(p.sum(1) * grid).sum(-1), (p.sum(2) * grid).sum(-1)], -1)
            res_t = torch.cat([top_s, top_i.float(), hz, centre], 1)
        res_t.tolist()
        del item, raw, lanes, x, zl, hl, heat, chute, top_s, top_i, hz, p, grid, centre, res_t


# ---------------------------------------------------------------- multi-echelon inventory by PPO


class _InvPolicy(_nn.Module):
    """A deep-sets actor-critic: each regional DC's observation encoded, mean-pooled into a network context; an order
    for each DC from its code and the context, the central warehouse's order and the value from the context."""

    def __init__(self, obs, d):
        super().__init__()
        self.node = mlp(obs, d, d, layers=2, act=_nn.Tanh)
        self.ctx = mlp(d + 2, d, d, layers=2, act=_nn.Tanh)
        self.act_dc, self.act_c, self.value = mlp(2 * d, d, 1, act=_nn.Tanh), _nn.Linear(d, 1), _nn.Linear(d, 1)
        self.log_std = _nn.Parameter(torch.full((2,), -0.5))

    def forward(self, obs, central):
        h = torch.tanh(self.node(obs))
        c = torch.tanh(self.ctx(torch.cat([h.mean(1), central], -1)))
        mu_dc = self.act_dc(torch.cat([h, c[:, None].expand_as(h)], -1))[..., 0]
        mu = torch.cat([mu_dc, self.act_c(c)], -1).float()
        std = torch.cat([self.log_std[0].expand_as(mu_dc), self.log_std[1:].expand(mu.shape[0], 1)], -1).exp()
        return mu, std.float(), self.value(c).float()[:, 0]


def _gauss_logp(a, mu, std):
    return (-0.5 * ((a - mu) / std).pow(2) - std.log() - 0.5 * math.log(2 * math.pi)).sum(-1)


@_workload("multi-echelon inventory simulation trained by PPO (random init, a central warehouse replenishing regional DCs): 22 iterations, each a batch of 512-2,048 simulated networks (log-uniform, a multiple of 128) with 4-12 regional DCs (drawn per iteration) rolled out for 60-120 days (drawn); Poisson demand with weekly seasonality per DC, lead-time pipelines of 4 days to the DCs and 6 to the central warehouse, scarce central stock allocated in proportion to the DCs' orders, backlog, holding, shortage and ordering costs; a deep-sets actor-critic (DC encoder and network context MLPs, width 128) giving Gaussian orders (softplus-scaled) for every DC and the central warehouse, under bf16 autocast; generalised advantage estimation by a backward loop over the days, then 4 epochs of clipped PPO updates over 8 shuffled minibatches (torch.randperm on the device) with value and entropy terms, Adam, clipping; the mean cost and fill rate read back every iteration and the losses at the end of each update")
def inventory_ppo_network_sim(rng):
    d, lead, lead_c, hist = _smoke(128, 16), 4, 6, 7
    obs_dim = 3 + lead + hist + 2
    pol = _InvPolicy(obs_dim, d).cuda()
    opt = torch.optim.Adam(pol.parameters(), lr=3e-4)
    h_cost, p_cost, hc_cost, k_cost = 0.1, 1.0, 0.05, 0.02
    iters, epochs, mbs = _smoke(22, 2), _smoke(4, 2), _smoke(8, 2)
    for it in range(iters):
        E = _loguniform(rng, _smoke(512, 8), _smoke(2048, 16), _smoke(128, 8))
        R, T = rng.randint(4, _smoke(12, 5)), rng.randint(_smoke(60, 4), _smoke(120, 6))
        with torch.no_grad():
            rate = 2 + 8 * torch.rand(E, R, device="cuda")
            season = 1 + 0.3 * torch.sin(torch.arange(7, device="cuda").float() * 2 * math.pi / 7)
            inv, back = torch.full((E, R), 20.0, device="cuda"), torch.zeros(E, R, device="cuda")
            pipe, cent = torch.zeros(E, R, lead, device="cuda"), torch.full((E,), 100.0, device="cuda")
            pipe_c, dem_hist = torch.zeros(E, lead_c, device="cuda"), rate[..., None].expand(E, R, hist).clone()
            obs_l, cen_l, act_l, logp_l, val_l, rew_l = [], [], [], [], [], []
            served_sum, demand_sum = torch.zeros((), device="cuda"), torch.zeros((), device="cuda")
            for t in range(T):
                dow = t % 7
                dowf = torch.tensor([math.sin(2 * math.pi * dow / 7), math.cos(2 * math.pi * dow / 7)], device="cuda")
                obs = torch.cat([inv[..., None] / 20, back[..., None] / 20, cent[:, None, None].expand(E, R, 1) / 100,
                                 pipe / 20, dem_hist / 10, dowf.expand(E, R, 2)], -1)
                central = torch.stack([cent / 100, pipe_c.sum(1) / 100], -1)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    mu, std, val = pol(obs, central)
                a = mu + std * torch.randn_like(mu)
                orders = _F.softplus(a) * 10
                req = orders[:, :R]
                frac = (cent / req.sum(1).clamp(min=1e-3)).clamp(max=1)
                shipped = req * frac[:, None]
                cent = cent - shipped.sum(1) + pipe_c[:, 0]
                pipe_c = torch.cat([pipe_c[:, 1:], orders[:, R:] * 5], 1)
                inv = inv + pipe[..., 0]
                pipe = torch.cat([pipe[..., 1:], shipped[..., None]], -1)
                demand = torch.poisson(rate * season[dow])
                want = demand + back
                served = torch.minimum(inv, want)
                back, inv = want - served, inv - served
                dem_hist = torch.cat([dem_hist[..., 1:], demand[..., None]], -1)
                cost = h_cost * inv.sum(1) + p_cost * back.sum(1) + hc_cost * cent + k_cost * orders.sum(1)
                served_sum, demand_sum = served_sum + served.sum(), demand_sum + demand.sum()
                obs_l.append(obs)
                cen_l.append(central)
                act_l.append(a)
                logp_l.append(_gauss_logp(a, mu, std))
                val_l.append(val)
                rew_l.append(-cost / 10)
                del dowf, obs, central, mu, std, a, orders, req, frac, shipped, demand, want, served, cost
            vals, rews = torch.stack(val_l), torch.stack(rew_l)
            adv = torch.zeros_like(rews)
            last = torch.zeros(E, device="cuda")
            for t in reversed(range(T)):
                nv = vals[t + 1] if t + 1 < T else torch.zeros(E, device="cuda")
                last = rews[t] + 0.99 * nv - vals[t] + 0.99 * 0.95 * last
                adv[t] = last
            ret = (adv + vals).flatten()
            adv = ((adv - adv.mean()) / (adv.std() + 1e-6)).flatten()
            obs_all, cen_all = torch.stack(obs_l).flatten(0, 1), torch.stack(cen_l).flatten(0, 1)
            act_all, logp_all = torch.stack(act_l).flatten(0, 1), torch.stack(logp_l).flatten()
            torch.stack([-rews.mean() * 10, served_sum / demand_sum.clamp(min=1)]).tolist()
            del obs_l, cen_l, act_l, logp_l, val_l, rew_l, vals, rews, last
        n = T * E
        mb = n // mbs
        for _ in range(epochs):
            perm = torch.randperm(n, device="cuda")
            for j in range(mbs):
                idx = perm[j * mb:(j + 1) * mb]
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    mu, std, val = pol(obs_all[idx], cen_all[idx])
                lp = _gauss_logp(act_all[idx], mu, std)
                ratio = torch.exp(lp - logp_all[idx])
                a_mb = adv[idx]
                pg = -torch.minimum(ratio * a_mb, ratio.clamp(0.8, 1.2) * a_mb).mean()
                vl = (val - ret[idx]).pow(2).mean()
                ent = (std.log() + 0.5 * math.log(2 * math.pi * math.e)).sum(-1).mean()
                loss = pg + 0.5 * vl - 0.01 * ent
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(pol.parameters(), 0.5)
                opt.step()
                del idx, mu, std, val, lp, ratio, a_mb, pg, vl, ent
            del perm
        loss.item()
        del loss, adv, ret, obs_all, cen_all, act_all, logp_all, rate, season, inv, back, pipe, cent, pipe_c, dem_hist
        del served_sum, demand_sum

"""The hundred-and-sixth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch105_b.py are): railways and rail transport, written in torch alone, first half. Rail-surface defect segmentation
training (a residual encoder and a feature-pyramid decoder over grayscale line-scan rail images of drawn lengths,
per-pixel defect classes and per-sleeper fastener states), a catenary-component detection service (a residual
CenterNet-style detector over overhead-line inspection photographs of drawn camera resolutions, peaks by max-pool
suppression and top-k, a defect state read off each peak), train-delay propagation training (an edge-conditioned
message-passing network by index_select and index_add over drawn timetable event graphs of train runs, running,
dwell and headway edges, delays observed up to a drawn cut and forecast after it) and passenger-flow forecasting
training (a factorised spatio-temporal transformer over the tap-in and tap-out counts of drawn numbers of stations and
intervals, quantile forecasts of the next intervals).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths,
resolutions and batch sizes are fixed on the host, padding handled by masks multiplied in or by torch.where /
masked_fill, no boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
catenary_detect_serve uploads its photographs on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's. This file
never imports record.py; it reaches record.py's helpers through the module object it was given (`_b.rec`).

Real sizes checked before recording: see record_new106.sh's header.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, PreNormBlock, SideUploads, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- rail-surface defect segmentation


def _stage(cin, cout, blocks, stride):
    return _nn.Sequential(BasicResBlock(cin, cout, stride), *[BasicResBlock(cout, cout, 1) for _ in range(blocks - 1)])


class _RailSegNet(_nn.Module):
    """A stride-2 stem and four stride-2 residual stages (strides 4 to 32), a feature-pyramid decoder (1x1
    laterals, bilinear top-down sums, a 3x3 smoothing convolution), per-pixel defect logits at stride 4 upsampled to the image; the
    deepest features pooled per sleeper bay (a fixed pitch along the rail) for fastener-state logits."""

    def __init__(self, widths, fpn, n_defect, n_fast):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(1, widths[0], 5, 2, 2, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU())
        chans = [widths[0]] + list(widths)
        self.stages = _nn.ModuleList(_stage(a, b, 2, 2) for a, b in zip(chans[:-1], chans[1:]))
        self.lat = _nn.ModuleList(_nn.Conv2d(w, fpn, 1) for w in widths)
        self.smooth = _nn.Sequential(_nn.Conv2d(fpn, fpn, 3, 1, 1, bias=False), _nn.BatchNorm2d(fpn), _nn.ReLU())
        self.seg = _nn.Conv2d(fpn, n_defect, 1)
        self.fast = mlp(widths[-1], 128, n_fast)

    def forward(self, x, bays):
        h, w = x.shape[2:]
        y = self.stem(x)
        feats = []
        for s in self.stages:
            y = s(y)
            feats.append(y)
        p = self.lat[-1](feats[-1])
        for lat, f in zip(self.lat[-2::-1], feats[-2::-1]):
            p = lat(f) + _F.interpolate(p, size=f.shape[2:], mode="bilinear", align_corners=False)
        seg = _F.interpolate(self.seg(self.smooth(p)), size=(h, w), mode="bilinear", align_corners=False)
        pooled = feats[-1].mean(2).unflatten(2, (bays, -1)).mean(3).transpose(1, 2)
        return seg.float(), self.fast(pooled).float()


@_workload("rail-surface defect segmentation training (random init, a residual FPN segmenter over line-scan rail images): grayscale tiles 256 px across the rail and 512-2,048 px along it (drawn per step, a multiple of 256), 2-12 tiles a step (drawn, at most 4 M pixels a step), drawn on the device; a channels-last stride-2 5x5 stem of 32 and four stride-2 residual stages of two basic blocks (32/64/128/256, strides 4 to 32), a feature-pyramid decoder of width 96 to 6 defect classes at stride 4 upsampled to the image (cross-entropy against a blob label map from thresholded upsampled random fields, plus a soft Dice over the 5 defect classes); the deepest features pooled into one bay per 256 px (sleeper pitch) with 4 fastener states each (cross-entropy); AdamW, clipping, bf16 autocast, 500 steps; the losses read back every 20 steps and every 125 steps a no-grad evaluation of 4 tiles of 256 x 2,048 with per-class IoU read back")
def rail_defect_seg_train(rng):
    widths, fpn = _smoke([32, 64, 128, 256], [16, 16, 32, 32]), _smoke(96, 16)
    n_defect, n_fast, pitch = 6, 4, 256
    model = _RailSegNet(widths, fpn, n_defect, n_fast).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=4e-4, weight_decay=0.01)
    height, budget = _smoke(256, 64), _smoke(4 * 2**20, 4 * 64 * 256)

    def tiles(b, length):
        x = torch.randn(b, 1, height, length, device="cuda").contiguous(memory_format=torch.channels_last)
        field = _F.interpolate(torch.randn(b, n_defect - 1, height // 32, length // 32, device="cuda"),
                               size=(height, length), mode="bilinear", align_corners=False)
        top = field.max(1)
        label = torch.where(top.values > 1.0, top.indices + 1, torch.zeros_like(top.indices))
        fast = torch.randint(0, n_fast, (b, length // pitch), device="cuda")
        return x, label, fast

    def dice(logits, label):
        prob = logits.softmax(1)[:, 1:]
        onehot = _F.one_hot(label, n_defect).permute(0, 3, 1, 2)[:, 1:].float()
        inter = (prob * onehot).sum((0, 2, 3))
        return 1 - ((2 * inter + 1) / (prob.sum((0, 2, 3)) + onehot.sum((0, 2, 3)) + 1)).mean()

    steps = _smoke(500, 3)
    for step in range(steps):
        model.train()
        length = rng.randint(2, 8) * pitch
        b = rng.randint(2, max(2, min(12, budget // (height * length))))
        x, label, fast = tiles(b, length)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            seg, f_log = model(x, length // pitch)
        l_ce = _F.cross_entropy(seg, label)
        l_dice = dice(seg, label)
        l_f = _F.cross_entropy(f_log.flatten(0, 1), fast.flatten())
        loss = l_ce + l_dice + 0.5 * l_f
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_ce.detach(), l_dice.detach(), l_f.detach()]).tolist()
        del x, label, fast, seg, f_log, l_ce, l_dice, l_f, loss
        if (step + 1) % _smoke(125, 2) == 0:
            model.eval()
            with torch.no_grad():
                x, label, fast = tiles(_smoke(4, 2), 8 * pitch)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    seg, f_log = model(x, 8)
                pred = _F.one_hot(seg.argmax(1), n_defect)
                true = _F.one_hot(label, n_defect)
                inter = (pred * true).sum((0, 1, 2)).float()
                iou = inter / (pred.sum((0, 1, 2)) + true.sum((0, 1, 2)) - inter).float().clamp(min=1)
            iou.tolist()
            del x, label, fast, seg, f_log, pred, true, inter, iou


# ---------------------------------------------------------------- catenary-component detection service


class _CatenaryDet(_nn.Module):
    """A residual backbone to strides 8, 16 and 32, the two deeper maps upsampled and summed into the stride-8 map,
    CenterNet heads: class heatmaps, box size and centre offset; a small defect-state head read at the peaks."""

    def __init__(self, widths, d, n_cls, n_state):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, widths[0], 3, 2, 1, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU(), _nn.Conv2d(widths[0], widths[0], 3, 2, 1, bias=False),
                                   _nn.BatchNorm2d(widths[0]), _nn.ReLU())
        chans = [widths[0]] + list(widths[1:])
        self.stages = _nn.ModuleList(_nn.Sequential(BasicResBlock(a, b, 2), BasicResBlock(b, b, 1))
                                     for a, b in zip(chans[:-1], chans[1:]))
        self.lat = _nn.ModuleList(_nn.Conv2d(w, d, 1) for w in widths[1:])
        self.neck = _nn.Sequential(_nn.Conv2d(d, d, 3, 1, 1), _nn.ReLU())
        self.hm = _nn.Sequential(_nn.Conv2d(d, d, 3, 1, 1), _nn.ReLU(), _nn.Conv2d(d, n_cls, 1))
        self.box = _nn.Sequential(_nn.Conv2d(d, d, 3, 1, 1), _nn.ReLU(), _nn.Conv2d(d, 4, 1))
        self.state = mlp(d, d, n_state, act=_nn.GELU)

    def forward(self, x):
        y = self.stem(x)
        feats = []
        for s in self.stages:
            y = s(y)
            feats.append(y)
        p = self.lat[0](feats[0])
        for lat, f in zip(self.lat[1:], feats[1:]):
            p = p + _F.interpolate(lat(f), size=p.shape[2:], mode="nearest")
        p = self.neck(p)
        return p, self.hm(p).float(), self.box(p).float()


@_workload("catenary-component detection serving (random init, a residual CenterNet-style detector over overhead-line inspection photographs): 1,800-1,880 requests (drawn) of 1-4 photographs each (drawn) from one of 12 inspection-vehicle cameras (drawn), each camera's resolution one of 512 x 640, 640 x 896 and 768 x 1,024 (fixed per camera, drawn once); uint8 pixels uploaded on a side stream from two reused pinned host buffers (filled once, sized for 4 photographs of 768 x 1,024) one request ahead through SideUploads.ahead (one span, waited on by event, record_stream'ed), normalised on the device; a channels-last stride-4 stem of 32 and three residual stages (64/128/256, two basic blocks each, strides 8 to 32), 1x1 laterals of width 96 summed at stride 8, heads for 10 component classes (sigmoid heatmaps), box sizes and centre offsets under bf16 autocast; peaks kept by 3x3 max-pool suppression (torch.where), the top 64 per photograph, their boxes gathered and a 4-way defect state (a 2-layer MLP on the features gathered at each peak); each request's scores, classes, boxes and defect states read back")
def catenary_detect_serve(rng):
    widths, d = _smoke([32, 64, 128, 256], [8, 8, 16, 16]), _smoke(96, 8)
    n_cls, n_state, top = 10, 4, _smoke(64, 8)
    model = _CatenaryDet(widths, d, n_cls, n_state).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    sizes = _smoke([(512, 640), (640, 896), (768, 1024)], [(64, 96), (96, 128)])
    n_cam, max_img = 12, _smoke(4, 2)
    cam_size = [rng.choice(sizes) for _ in range(n_cam)]
    big = max(h * w for h, w in sizes) * 3
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_img * big,), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    mean = torch.tensor([0.48, 0.50, 0.52], device="cuda").view(1, 3, 1, 1) * 255
    std = torch.tensor([0.21, 0.21, 0.23], device="cuda").view(1, 3, 1, 1) * 255
    nreq = rng.randint(_smoke(1800, 3), _smoke(1880, 4))
    plan = []
    for _ in range(nreq):
        cam = rng.randrange(n_cam)
        plan.append((rng.randint(1, max_img), *cam_size[cam]))

    def spans(p):
        return (p[0] * 3 * p[1] * p[2],)

    for (f, h, w), raw in up.ahead(plan, spans):
        with torch.no_grad():
            x = raw.view(f, 3, h, w).float().sub_(mean).div_(std).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                feat, hm, box = model(x)
            heat = torch.sigmoid(hm)
            peak = torch.where(heat == _F.max_pool2d(heat, 3, 1, 1), heat, torch.zeros_like(heat))
            hh, ww = heat.shape[2:]
            score, idx = peak.flatten(1).topk(top)
            cls, pos = idx // (hh * ww), idx % (hh * ww)
            cy, cx = (pos // ww).float(), (pos % ww).float()
            b4 = box.flatten(2).gather(2, pos[:, None].expand(f, 4, top))
            stride = h / hh
            boxes = torch.stack([(cx + b4[:, 2]) * stride - b4[:, 0].exp() * 8, (cy + b4[:, 3]) * stride
                                 - b4[:, 1].exp() * 8, (cx + b4[:, 2]) * stride + b4[:, 0].exp() * 8,
                                 (cy + b4[:, 3]) * stride + b4[:, 1].exp() * 8], -1)
            at = feat.flatten(2).gather(2, pos[:, None].expand(f, feat.shape[1], top)).transpose(1, 2)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                state = model.state(at).float().argmax(-1)
            out = torch.cat([score[..., None], cls[..., None].float(), boxes, state[..., None].float()], -1)
        out.tolist()
        del raw, x, feat, hm, box, heat, peak, score, idx, cls, pos, cy, cx, b4, boxes, at, state, out


# ---------------------------------------------------------------- train-delay propagation (message passing)


class _DelayMPNN(_nn.Module):
    """Event embeddings (station, train category, event kind, time of day, observed delay where known), edge
    embeddings (edge type, scheduled minutes); `layers` rounds of edge-conditioned messages by index_select and
    index_add, a degree-normalised sum, a residual node update; a delay forecast (minutes) per event."""

    def __init__(self, n_station, n_cat, d, layers):
        super().__init__()
        self.station, self.cat, self.kind = _nn.Embedding(n_station, d), _nn.Embedding(n_cat, d), _nn.Embedding(2, d)
        self.num = _nn.Linear(4, d)
        self.etype, self.enum = _nn.Embedding(3, d), _nn.Linear(1, d)
        self.msg = _nn.ModuleList(mlp(3 * d, d, d, act=_nn.SiLU) for _ in range(layers))
        self.upd = _nn.ModuleList(mlp(2 * d, d, d, act=_nn.SiLU) for _ in range(layers))
        self.norm = _nn.ModuleList(_nn.LayerNorm(d) for _ in range(layers))
        self.head = mlp(d, d, 2, act=_nn.SiLU)

    def forward(self, station, cat, kind, numf, src, dst, etype, eminutes, ew):
        h = self.station(station) + self.cat(cat) + self.kind(kind) + self.num(numf)
        e = self.etype(etype) + self.enum(eminutes[:, None])
        deg = torch.zeros(h.shape[0], device=h.device).index_add_(0, dst, ew).clamp(min=1)[:, None]
        for msg, upd, norm in zip(self.msg, self.upd, self.norm):
            m = msg(torch.cat([h.index_select(0, src), h.index_select(0, dst), e], -1)) * ew[:, None].to(h.dtype)
            agg = torch.zeros_like(h).index_add_(0, dst, m) / deg.to(h.dtype)
            h = norm(h + upd(torch.cat([h, agg], -1)))
        return self.head(h).float()


@_workload("train-delay propagation training (random init, an edge-conditioned message-passing network over timetable event graphs): 150-600 train runs a step (drawn) of 4-40 stops each (drawn per run), two events (arrival, departure) per stop; each event's station (of 3,000), train category (of 12), scheduled time of day (sine and cosine) and delay observed before a cut (drawn per run, masked after it by torch.where); running and dwell edges between consecutive events of a run (cross-run pairs zeroed by a train-id comparison) and 1-2 times as many headway edges as events (the factor drawn per step), each into a random event from the event 1-60 positions before it (both drawn on the device, the source clamped at the first event, an edge from an event to itself zeroed), scheduled minutes per edge; 6 rounds of width 128 of messages by index_select and index_add, degree-normalised; a forecast delay and a log-variance (clamped to -6..6) per event, Gaussian negative log-likelihood on the events after each run's cut only; Adam, clipping, bf16 autocast, 540 steps; the loss read back every 20 steps and every 135 steps a no-grad evaluation of 600 runs of 40 stops with the mean absolute error after the cut read back")
def delay_propagation_gnn_train(rng):
    n_station, n_cat, d, layers = _smoke(3000, 50), 12, _smoke(128, 16), _smoke(6, 2)
    model = _DelayMPNN(n_station, n_cat, d, layers).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=5e-4)
    max_stops = _smoke(40, 6)

    def graph(stops, cuts):
        runs = len(stops)
        lens = [2 * s for s in stops]
        n = sum(lens)
        starts = [0]
        for ln in lens[:-1]:
            starts.append(starts[-1] + ln)
        first = torch.zeros(n, device="cuda").index_fill_(0, torch.tensor(starts[1:], device="cuda"), 1.0)
        run_id = first.cumsum(0).long()
        pos = torch.arange(n, device="cuda") - torch.tensor(starts, device="cuda").index_select(0, run_id)
        cut = torch.tensor(cuts, device="cuda").index_select(0, run_id) * 2
        known = pos < cut
        station = torch.randint(0, n_station, (n,), device="cuda")
        cat = torch.randint(0, n_cat, (runs,), device="cuda").index_select(0, run_id)
        kind = pos % 2
        tod = torch.rand(n, device="cuda") * 2 * math.pi
        delay = torch.relu(torch.randn(n, device="cuda") * 4 + torch.randn(runs, device="cuda").index_select(0, run_id)
                           * 3 + pos * 0.05)
        obs = torch.where(known, delay, torch.zeros_like(delay))
        numf = torch.stack([tod.sin(), tod.cos(), obs.log1p(), known.float()], -1)
        seq_src = torch.arange(n - 1, device="cuda")
        seq_w = (run_id[:-1] == run_id[1:]).float()
        nh = rng.randint(1, 2)
        h_dst = torch.randint(0, n, (nh * n,), device="cuda")
        h_src = (h_dst - torch.randint(1, 61, (nh * n,), device="cuda")).clamp(min=0)
        src = torch.cat([seq_src, h_src])
        dst = torch.cat([seq_src + 1, h_dst])
        etype = torch.cat([kind[:-1], torch.full((nh * n,), 2, device="cuda")])
        ew = torch.cat([seq_w, (h_src < h_dst).float()])
        minutes = torch.rand(src.shape[0], device="cuda") * 15
        return station, cat, kind, numf, src, dst, etype, minutes, ew, delay, (~known).float()

    steps = _smoke(540, 3)
    for step in range(steps):
        model.train()
        runs = rng.randint(_smoke(150, 3), _smoke(600, 6))
        stops = [rng.randint(4, max_stops) for _ in range(runs)]
        cuts = [rng.randint(1, s - 1) for s in stops]
        *g, delay, future = graph(stops, cuts)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(*g)
        mu, logvar = out[:, 0], out[:, 1].clamp(-6, 6)
        nll = 0.5 * (logvar + (delay - mu) ** 2 / logvar.exp())
        loss = (nll * future).sum() / future.sum().clamp(min=1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.detach().item()
        del g, delay, future, out, mu, logvar, nll, loss
        if (step + 1) % _smoke(135, 2) == 0:
            model.eval()
            with torch.no_grad():
                runs = _smoke(600, 6)
                *g, delay, future = graph([max_stops] * runs, [rng.randint(1, max_stops - 1) for _ in range(runs)])
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    out = model(*g)
                mae = ((out[:, 0] - delay).abs() * future).sum() / future.sum().clamp(min=1)
            mae.item()
            del g, delay, future, out, mae


# ---------------------------------------------------------------- passenger-flow forecasting


class _FlowST(_nn.Module):
    """Tap-in/tap-out counts (log1p) projected, plus station, interval-position, time-of-day and day-of-week
    embeddings; blocks of temporal attention per station and spatial attention per interval (padded stations masked
    out as keys); the last interval's state mapped to quantile forecasts of the next `horizon` intervals."""

    def __init__(self, n_station, max_t, d, heads, blocks, horizon, n_q):
        super().__init__()
        self.inp = _nn.Linear(2, d)
        self.station, self.pos = _nn.Embedding(n_station, d), _nn.Embedding(max_t, d)
        self.tod, self.dow = _nn.Embedding(96, d), _nn.Embedding(7, d)
        self.temporal = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(blocks))
        self.spatial = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(blocks))
        self.norm = _nn.LayerNorm(d)
        self.head = _nn.Linear(d, horizon * 2 * n_q)
        self.horizon, self.n_q = horizon, n_q

    def forward(self, counts, station, tod, dow, keep):
        b, s, t, _ = counts.shape
        x = self.inp(counts.log1p()) + self.station(station)[:, :, None]
        x = x + self.pos(torch.arange(t, device=counts.device))
        x = x + self.tod(tod)[:, None] + self.dow(dow)[:, None, None]
        key = keep[:, None, None, :].repeat_interleave(t, 0)
        for tb, sb in zip(self.temporal, self.spatial):
            x = tb(x.reshape(b * s, t, -1)).view(b, s, t, -1)
            x = sb(x.transpose(1, 2).reshape(b * t, s, -1), mask=key).view(b, t, s, -1).transpose(1, 2)
        y = self.head(self.norm(x[:, :, -1]))
        return y.view(b, s, self.horizon, 2, self.n_q).float()


@_workload("passenger-flow forecasting training (random init, a factorised spatio-temporal transformer over metro fare-gate counts): 4-12 networks a step (drawn), each of 16-96 stations (drawn per network, of 600, padded to the step's longest rounded up to a multiple of 8 and masked as attention keys) with 16-96 past 15-minute intervals (drawn per step, a multiple of 8; position table of 96 rows) of tap-in and tap-out counts (Poisson draws on the device), time-of-day and day-of-week embeddings; 3 pairs of pre-norm blocks (width 128, 4 heads), temporal attention per station then spatial attention per interval; quantile forecasts (0.1/0.5/0.9) of both counts for the next 8 intervals from the last interval's state, pinball loss on log1p counts over real stations only; AdamW with a 40-step warm-up and cosine decay, clipping, bf16 autocast, 450 steps; the loss read back every 20 steps and every 90 steps a no-grad evaluation of 8 networks of 96 stations and 96 intervals with the median's mean absolute error read back")
def passenger_flow_st_train(rng):
    n_station, d, heads, blocks = _smoke(600, 40), _smoke(128, 16), _smoke(4, 2), _smoke(3, 1)
    max_t, horizon, n_q = _smoke(96, 16), 8, 3
    model = _FlowST(n_station, max_t, d, heads, blocks, horizon, n_q).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    steps = _smoke(450, 3)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / 40) * 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    qs = torch.tensor([0.1, 0.5, 0.9], device="cuda")
    max_s = _smoke(96, 12)

    def networks(sizes, t):
        b, s = len(sizes), -(-max(sizes) // 8) * 8
        keep = keep_mask(sizes, s)
        rate = torch.rand(b, s, 1, 2, device="cuda") * 60 + 1
        counts = torch.poisson(rate * (1 + torch.rand(b, s, t + horizon, 2, device="cuda")))
        counts = counts * keep[:, :, None, None]
        station = torch.randint(0, n_station, (b, s), device="cuda")
        tod = torch.randint(0, 97 - t, (b, 1), device="cuda") + torch.arange(t, device="cuda")
        dow = torch.randint(0, 7, (b,), device="cuda")
        return counts[:, :, :t], counts[:, :, t:], station, tod, dow, keep

    def pinball(pred, target, keep):
        err = target.log1p().transpose(2, 3)[..., None] - pred.transpose(2, 3)
        loss = torch.maximum(qs * err, (qs - 1) * err).mean((2, 3, 4))
        return (loss * keep).sum() / keep.sum()

    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(4, 2), _smoke(12, 3))
        t = rng.randint(_smoke(16, 8) // 8, max_t // 8) * 8
        hist, fut, station, tod, dow, keep = networks([rng.randint(_smoke(16, 4), max_s) for _ in range(b)], t)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(hist, station, tod, dow, keep)
        loss = pinball(pred, fut, keep.float())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            loss.detach().item()
        del hist, fut, station, tod, dow, keep, pred, loss
        if (step + 1) % _smoke(90, 2) == 0:
            model.eval()
            with torch.no_grad():
                hist, fut, station, tod, dow, keep = networks([max_s] * _smoke(8, 2), max_t)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pred = model(hist, station, tod, dow, keep)
                mae = (pred[..., 1].expm1() - fut).abs().mean()
            mae.item()
            del hist, fut, station, tod, dow, keep, pred, mae

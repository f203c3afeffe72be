"""The hundred-and-eighth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch107_b.py are): dairy, livestock and aquaculture farming, written in torch alone, first half. Milk-yield and
herd-health forecasting training (a transformer encoder over each cow's daily milking and sensor records of drawn
history lengths with breed, parity and herd embeddings, a 14-day yield forecast and three health-event heads),
cattle-behaviour video training (a residual frame convnet with a temporal convolution over barn-camera clips of drawn
frame counts and resolutions, per-frame behaviour and a per-clip locomotion score), feed-ration rumen surrogate
training (an ingredient-set encoder with masked attention pooling feeding a GRU cell written out step by step over a
drawn number of hours, hourly rumen outputs and daily milk and methane outputs) and a fish-pen biomass service (a
CenterNet-style residual detector over underwater camera frames of drawn camera resolutions, peak picking by max
pooling and top-k, fish weights from a length-weight relation, a running biomass per pen kept by index_copy).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths,
resolutions and batch sizes are fixed on the host, padding handled by masks multiplied in or by torch.where /
masked_fill, no boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
fish_pen_biomass_serve uploads its frames on a side stream (workload_helpers.SideUploads, one request ahead); the
other three are single-stream. The models run under bf16 autocast. Every position table is sized for the longest
padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's. This file
never imports record.py; it reaches record.py's helpers through the module object it was given (`_b.rec`). Real sizes
checked before recording: see record_new108.sh's header.
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


# ---------------------------------------------------------------- milk-yield and herd-health forecasting


class _LactationEncoder(_nn.Module):
    """Daily records projected and added to a day-position table and the cow's metadata (breed, parity, herd, from
    one offset table, summed); pre-norm blocks under a key mask; the masked mean and the last recorded day's state
    feed a yield-forecast MLP and health-event logits."""

    def __init__(self, n_feat, d, heads, layers, max_days, cards, horizon, n_health):
        super().__init__()
        self.inp, self.pos = _nn.Linear(n_feat, d), _nn.Embedding(max_days, d)
        self.register_buffer("offsets", torch.tensor([0] + list(cards[:-1])).cumsum(0))
        self.meta = _nn.Embedding(sum(cards), d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.yld = mlp(2 * d, d, horizon, act=_nn.GELU)
        self.health = _nn.Linear(2 * d, n_health)

    def forward(self, x, keep, meta, last):
        t = x.shape[1]
        h = self.inp(x) + self.pos(torch.arange(t, device=x.device))[None]
        h = h + self.meta(meta + self.offsets).sum(1)[:, None]
        key = keep[:, None, None, :]
        for blk in self.blocks:
            h = blk(h, mask=key)
        h = self.norm(h)
        w = keep[..., None].to(h.dtype)
        pooled = (h * w).sum(1) / w.sum(1).clamp(min=1)
        final = h.gather(1, last[:, None, None].expand(-1, 1, h.shape[-1]))[:, 0]
        z = torch.cat([pooled, final], -1)
        return self.yld(z).float(), self.health(z).float()


@_workload("milk-yield and herd-health forecasting training (random init, a transformer encoder over daily cow records): 16-64 cows a step (drawn), each with 30-365 days of history (drawn per cow, padded to the step's longest rounded up to a multiple of 16, day-position table of 368 rows), 12 daily features drawn on the device (yield, fat, protein, somatic cell count, conductivity, activity, rumination and the like) zeroed on padded days; breed (of 12), parity (of 10) and herd (of 400) from one offset table; a 4-block pre-norm transformer (width 256, 4 heads) under a key mask, masked mean pooling and the last recorded day's state (gathered); a 14-day yield forecast (MSE) and 3 health events (mastitis, lameness, ketosis; binary cross-entropy); AdamW, clipping, bf16 autocast, 590 steps; the losses read back every 25 steps and every 148 steps a no-grad evaluation of 64 cows of 365 days with the forecast error and event accuracy read back")
def milk_yield_forecast_train(rng):
    n_feat, d, heads, layers = 12, _smoke(256, 32), _smoke(4, 2), _smoke(4, 1)
    max_days, cards, horizon, n_health = _smoke(365, 48), [12, 10, _smoke(400, 20)], 14, 3
    model = _LactationEncoder(n_feat, d, heads, layers, -(-max_days // 16) * 16, cards, horizon, n_health).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)

    def cows(lengths):
        b, t = len(lengths), -(-max(lengths) // 16) * 16
        keep = keep_mask(lengths, t)
        x = torch.randn(b, t, n_feat, device="cuda") * keep[..., None]
        meta = torch.stack([torch.randint(0, c, (b,), device="cuda") for c in cards], 1)
        last = torch.tensor([n - 1 for n in lengths], device="cuda")
        y = torch.randn(b, horizon, device="cuda")
        ev = (torch.rand(b, n_health, device="cuda") < 0.08).float()
        return x, keep, meta, last, y, ev

    steps = _smoke(590, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(16, 2), _smoke(64, 4))
        x, keep, meta, last, y, ev = cows([rng.randint(_smoke(30, 8), max_days) for _ in range(b)])
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred, logit = model(x, keep, meta, last)
        l_y = _F.mse_loss(pred, y)
        l_h = _F.binary_cross_entropy_with_logits(logit, ev)
        loss = l_y + l_h
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 25 == 0:
            torch.stack([l_y.detach(), l_h.detach()]).tolist()
        del x, keep, meta, last, y, ev, pred, logit, l_y, l_h, loss
        if (step + 1) % _smoke(148, 2) == 0:
            model.eval()
            with torch.no_grad():
                x, keep, meta, last, y, ev = cows([max_days] * _smoke(64, 3))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pred, logit = model(x, keep, meta, last)
                out = torch.cat([(pred - y).abs().mean()[None], ((logit > 0).float() == ev).float().mean(0)])
            out.tolist()
            del x, keep, meta, last, y, ev, pred, logit, out


# ---------------------------------------------------------------- cattle-behaviour video


class _BehaviourNet(_nn.Module):
    """A ResNet-style frame encoder (7x7 stride-2 stem, max-pool, two basic blocks a stage), globally pooled per
    frame; a residual temporal convolution over the clip's frames; per-frame behaviour logits and a clip-level
    locomotion score from the masked mean."""

    def __init__(self, widths, n_beh, n_loco):
        super().__init__()
        w0 = widths[0]
        self.stem = _nn.Sequential(_nn.Conv2d(3, w0, 7, 2, 3, bias=False), _nn.BatchNorm2d(w0), _nn.ReLU(),
                                   _nn.MaxPool2d(3, 2, 1))
        blocks, c = [], w0
        for i, w in enumerate(widths):
            blocks += [BasicResBlock(c, w, 1 if i == 0 else 2), BasicResBlock(w, w, 1)]
            c = w
        self.body = _nn.Sequential(*blocks)
        self.temporal = _nn.Sequential(_nn.Conv1d(c, c, 3, 1, 1), _nn.GELU(), _nn.Conv1d(c, c, 3, 1, 1))
        self.frame, self.loco = _nn.Linear(c, n_beh), mlp(c, c, n_loco)

    def forward(self, x, b, t, keep):
        f = self.body(self.stem(x)).mean((2, 3)).view(b, t, -1)
        f = f + self.temporal(f.transpose(1, 2)).transpose(1, 2)
        w = keep[..., None].to(f.dtype)
        pooled = (f * w).sum(1) / w.sum(1).clamp(min=1)
        return self.frame(f).float(), self.loco(pooled).float()


@_workload("cattle-behaviour video training (random init, a residual frame convnet with a temporal convolution): barn-camera clips of 112-176 px (drawn per step, a multiple of 16), 2-8 clips a step (drawn, at most 128 frames a step) of 8-16 frames each (drawn per clip, padded to the step's longest and the padded frames zeroed and masked), drawn on the device; a channels-last ResNet-style frame encoder (7x7 stride-2 stem of 32, max-pool, stages of 32/64/128/256 channels with two basic blocks each) globally pooled per frame, a residual 2-layer temporal convolution (kernel 3) over the frames; 8 per-frame behaviour classes (feeding, ruminating, lying, standing, walking, drinking, grooming, mounting; masked cross-entropy) and a 4-level clip locomotion score from the masked mean (cross-entropy); SGD with momentum and Nesterov, clipping, bf16 autocast, 590 steps; the losses read back every 20 steps and every 148 steps a no-grad evaluation of 4 clips of 16 frames at 176 px with frame and locomotion accuracy read back")
def cattle_behaviour_video_train(rng):
    widths, n_beh, n_loco = _smoke([32, 64, 128, 256], [16, 16]), 8, 4
    model = _BehaviourNet(widths, n_beh, n_loco).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9, nesterov=True, weight_decay=1e-4)
    mult, max_frames, budget = _smoke(16, 16), _smoke(16, 4), _smoke(128, 8)

    def clips(lengths, res):
        b, t = len(lengths), max(lengths)
        keep = keep_mask(lengths, t)
        x = torch.randn(b, t, 3, res, res, device="cuda") * keep[:, :, None, None, None]
        x = x.view(b * t, 3, res, res).contiguous(memory_format=torch.channels_last)
        beh = torch.randint(0, n_beh, (b, t), device="cuda").masked_fill(~keep, -100)
        loco = torch.randint(0, n_loco, (b,), device="cuda")
        return x, keep, beh, loco

    steps = _smoke(590, 3)
    for step in range(steps):
        model.train()
        res = rng.randint(_smoke(112, 32) // mult, _smoke(176, 48) // mult) * mult
        b = rng.randint(2, max(2, budget // max_frames))
        lengths = [rng.randint(_smoke(8, 2), max_frames) for _ in range(b)]
        x, keep, beh, loco = clips(lengths, res)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            f_log, l_log = model(x, b, max(lengths), keep)
        l_f = _F.cross_entropy(f_log.flatten(0, 1), beh.flatten(), ignore_index=-100)
        l_l = _F.cross_entropy(l_log, loco)
        loss = l_f + 0.5 * l_l
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_f.detach(), l_l.detach()]).tolist()
        del x, keep, beh, loco, f_log, l_log, l_f, l_l, loss
        if (step + 1) % _smoke(148, 2) == 0:
            model.eval()
            with torch.no_grad():
                n = _smoke(4, 2)
                x, keep, beh, loco = clips([max_frames] * n, _smoke(176, 48))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    f_log, l_log = model(x, n, max_frames, keep)
                acc = torch.stack([(f_log.argmax(-1) == beh).float().mean(), (l_log.argmax(-1) == loco).float().mean()])
            acc.tolist()
            del x, keep, beh, loco, f_log, l_log, acc


# ---------------------------------------------------------------- feed-ration rumen surrogate (recurrent)


class _RumenSurrogate(_nn.Module):
    """Each ingredient (feedstuff embedding, nutrient profile, kg of dry matter) through an MLP, pooled by a learned
    query's masked softmax; the animal's features added; a GRU cell written out step by step over the hours, fed the
    ration and each hour's intake and water; hourly rumen outputs from every hidden state and daily outputs from the
    last one and the ration."""

    def __init__(self, n_feed, n_nutr, n_animal, d, hid, n_hour, n_day):
        super().__init__()
        self.d = d
        self.feed = _nn.Embedding(n_feed, d)
        self.ing = mlp(d + n_nutr + 1, d, d, act=_nn.GELU)
        self.key = _nn.Linear(d, d)
        self.query = _nn.Parameter(torch.randn(d) * 0.02)
        self.animal = _nn.Linear(n_animal, d)
        self.h0 = _nn.Linear(d, hid)
        self.wx, self.wh = _nn.Linear(d + 2, 3 * hid), _nn.Linear(hid, 3 * hid)
        self.hour, self.day = mlp(hid, hid, n_hour), mlp(hid + d, hid, n_day)

    def forward(self, ids, nutr, kg, keep, animal, intake):
        e = self.ing(torch.cat([self.feed(ids), nutr, kg[..., None]], -1))
        s = (self.key(e) * self.query).sum(-1).float() / math.sqrt(self.d)
        a = s.masked_fill(~keep, -1e4).softmax(-1).to(e.dtype)
        ration = (a[..., None] * e).sum(1) + self.animal(animal)
        hours = intake.shape[1]
        gx_all = self.wx(torch.cat([ration[:, None].expand(-1, hours, -1).to(intake.dtype), intake], -1))
        h = torch.tanh(self.h0(ration))
        states = []
        for t in range(hours):
            rx, zx, nx = gx_all[:, t].chunk(3, -1)
            rh, zh, nh = self.wh(h).chunk(3, -1)
            r, z = torch.sigmoid(rx + rh), torch.sigmoid(zx + zh)
            h = (1 - z) * torch.tanh(nx + r * nh) + z * h
            states.append(h)
        return self.hour(torch.stack(states, 1)).float(), self.day(torch.cat([h, ration.to(h.dtype)], -1)).float()


@_workload("feed-ration rumen surrogate training (random init, an ingredient-set encoder and a step-by-step GRU): 64-256 rations a step (drawn), each of 4-24 ingredients (drawn per ration, padded to the step's most and masked) with a feedstuff id (of 600), 14 nutrient values and kg of dry matter, and 5 animal features (body weight, days in milk, parity, yield, body condition), drawn on the device; a 2-layer ingredient MLP (width 128), attention pooling by a learned query's masked softmax; a GRU cell (hidden 192) written out step by step over 12-36 hours (drawn per step), fed the ration and each hour's drawn intake and water fractions; hourly outputs (pH, acetate, propionate, butyrate, ammonia, methane; MSE) from every hidden state and daily outputs (milk yield, fat, protein, methane per day; MSE) from the last state and the ration; Adam, clipping, bf16 autocast, 315 steps; the losses read back every 20 steps and every 79 steps a no-grad 36-hour rollout of 256 rations of 24 ingredients with the hourly and daily errors read back")
def rumen_ration_surrogate_train(rng):
    n_feed, n_nutr, n_animal, d, hid = _smoke(600, 40), 14, 5, _smoke(128, 16), _smoke(192, 16)
    n_hour, n_day, max_ing, max_hours = 6, 4, _smoke(24, 6), _smoke(36, 4)
    model = _RumenSurrogate(n_feed, n_nutr, n_animal, d, hid, n_hour, n_day).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def rations(counts, hours):
        b, m = len(counts), max(counts)
        keep = keep_mask(counts, m)
        ids = torch.randint(0, n_feed, (b, m), device="cuda").masked_fill(~keep, 0)
        nutr = torch.rand(b, m, n_nutr, device="cuda") * keep[..., None]
        kg = torch.rand(b, m, device="cuda") * 6 * keep
        animal = torch.randn(b, n_animal, device="cuda")
        intake = torch.rand(b, hours, 2, device="cuda")
        y_h, y_d = torch.randn(b, hours, n_hour, device="cuda"), torch.randn(b, n_day, device="cuda")
        return ids, nutr, kg, keep, animal, intake, y_h, y_d

    steps = _smoke(315, 3)
    for step in range(steps):
        model.train()
        b, hours = rng.randint(_smoke(64, 4), _smoke(256, 8)), rng.randint(_smoke(12, 2), max_hours)
        ids, nutr, kg, keep, animal, intake, y_h, y_d = rations([rng.randint(4, max_ing) for _ in range(b)], hours)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            p_h, p_d = model(ids, nutr, kg, keep, animal, intake)
        l_h, l_d = _F.mse_loss(p_h, y_h), _F.mse_loss(p_d, y_d)
        loss = l_h + l_d
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_h.detach(), l_d.detach()]).tolist()
        del ids, nutr, kg, keep, animal, intake, y_h, y_d, p_h, p_d, l_h, l_d, loss
        if (step + 1) % _smoke(79, 2) == 0:
            model.eval()
            with torch.no_grad():
                ids, nutr, kg, keep, animal, intake, y_h, y_d = rations([max_ing] * _smoke(256, 4), max_hours)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    p_h, p_d = model(ids, nutr, kg, keep, animal, intake)
                err = torch.cat([(p_h - y_h).abs().mean((0, 1)), (p_d - y_d).abs().mean(0)])
            err.tolist()
            del ids, nutr, kg, keep, animal, intake, y_h, y_d, p_h, p_d, err


# ---------------------------------------------------------------- fish-pen biomass service (CenterNet-style)


class _FishDetector(_nn.Module):
    """A stride-2 stem and residual stages (stride 2 each) to 1/32, a top-down pyramid of 1x1 laterals summed after
    nearest upsampling to 1/4, a 3x3 smoothing convolution; per-class centre heatmaps (healthy, wounded,
    lice-infested) and a log length / log height regression."""

    def __init__(self, widths, d, n_cls):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, widths[0], 3, 2, 1, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU())
        stages, c = [], widths[0]
        for w in widths:
            stages.append(_nn.Sequential(BasicResBlock(c, w, 2), BasicResBlock(w, w, 1)))
            c = w
        self.stages = _nn.ModuleList(stages)
        self.lat = _nn.ModuleList(_nn.Conv2d(w, d, 1) for w in widths)
        self.smooth = _nn.Conv2d(d, d, 3, 1, 1)
        self.heat = _nn.Sequential(_nn.Conv2d(d, d, 3, 1, 1), _nn.ReLU(), _nn.Conv2d(d, n_cls, 1))
        self.size = _nn.Sequential(_nn.Conv2d(d, d, 3, 1, 1), _nn.ReLU(), _nn.Conv2d(d, 2, 1))

    def forward(self, x):
        feats, y = [], self.stem(x)
        for s in self.stages:
            y = s(y)
            feats.append(y)
        y = self.lat[-1](feats[-1])
        for lat, f in zip(self.lat[-2::-1], feats[-2::-1]):
            y = _F.interpolate(y, size=f.shape[-2:], mode="nearest") + lat(f)
        y = self.smooth(y)
        return self.heat(y).float(), self.size(y).float()


@_workload("fish-pen biomass serving (random init, a CenterNet-style residual detector over underwater camera frames): 1,620-1,700 requests (drawn) of 1-6 frames each (drawn) from one camera each (of 24, drawn; 3 cameras to a pen, 8 pens), the camera's resolution one of 384 x 512, 480 x 640 and 448 x 768 (fixed per camera, drawn once); uint8 pixels uploaded on a side stream from two reused pinned host buffers (filled once, sized for 6 frames of the largest) one request ahead by workload_helpers.SideUploads.ahead (one span, waited on by event, record_stream'ed), normalised on the device; a channels-last detector (stride-2 stem of 32, four stages of 32/64/128/256 channels with two basic blocks each, the first strided) with a top-down pyramid of width 96 to 1/4 resolution under bf16 autocast; 3 condition heatmaps (healthy, wounded, lice-infested) and a log length and height; peaks by 3x3 max pooling and torch.where, the top 64 per frame, detections above 0.3, fish weights from a length-weight relation (0.012 L^3), the lice-positive fraction; the pen's biomass (mean weight times its stock) kept on the device as a running average updated by index_copy; each request's per-frame counts, mean weights, lice fractions and the pen's running biomass read back")
def fish_pen_biomass_serve(rng):
    widths, d, n_cls = _smoke([32, 64, 128, 256], [16, 16, 16, 16]), _smoke(96, 16), 3
    model = _FishDetector(widths, d, n_cls).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    sizes = _smoke([(384, 512), (480, 640), (448, 768)], [(64, 64), (64, 96)])
    n_cam, n_pen, max_frames, top_k = _smoke(24, 4), _smoke(8, 2), _smoke(6, 2), _smoke(64, 8)
    cam_size = [rng.choice(sizes) for _ in range(n_cam)]
    big = max(h * w for h, w in sizes) * 3
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_frames * big,), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    mean = torch.tensor([0.2, 0.45, 0.5], device="cuda").view(1, 3, 1, 1) * 255
    std = torch.tensor([0.15, 0.2, 0.2], device="cuda").view(1, 3, 1, 1) * 255
    stock = torch.randint(20000, 120000, (n_pen,), device="cuda").float()
    biomass = torch.zeros(n_pen, device="cuda")
    nreq = rng.randint(_smoke(1620, 3), _smoke(1700, 4))
    plan = []
    for _ in range(nreq):
        cam = rng.randrange(n_cam)
        plan.append((cam, rng.randint(1, max_frames), *cam_size[cam]))

    for (cam, f, h, w), raw in up.ahead(plan, lambda p: (p[1] * 3 * p[2] * p[3],)):
        with torch.no_grad():
            x = raw.view(f, 3, h, w).float().sub_(mean).div_(std).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                hm, sz = model(x)
            heat = torch.sigmoid(hm)
            peak = heat.amax(1, keepdim=True)
            score = torch.where(peak == _F.max_pool2d(peak, 3, 1, 1), peak, 0.0).flatten(1)
            top, idx = score.topk(top_k, 1)
            det = (top > 0.3).float()
            length = sz.flatten(2).gather(2, idx[:, None].expand(-1, 2, -1))[:, 0].exp() * 30  # cm
            weight = 0.012 * length.pow(3)  # g
            cls = heat.flatten(2).gather(2, idx[:, None].expand(-1, n_cls, -1)).argmax(1)
            count = det.sum(1)
            mean_w = (weight * det).sum(1) / count.clamp(min=1)
            lice = ((cls == 2).float() * det).sum(1) / count.clamp(min=1)
            pen_t = torch.tensor([cam % n_pen], device="cuda")
            new = 0.9 * biomass.index_select(0, pen_t) + 0.1 * mean_w.mean()[None] * stock.index_select(0, pen_t) / 1e6
            biomass.index_copy_(0, pen_t, new)
            out = torch.cat([count, mean_w, lice, new])
        out.tolist()
        del raw, x, hm, sz, heat, peak, score, top, idx, det, length, weight, cls, count, mean_w, lice, pen_t, new, out

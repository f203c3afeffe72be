"""The ninety-second batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch91_b.py are): real estate, property and urban planning, written in torch alone, first half. Building-footprint
and land-use segmentation training (a DeepLabv3+-style dilated residual convnet with atrous spatial pyramid pooling
over aerial tiles of drawn resolutions, land-use classes with unlabelled pixels ignored, a building mask with a soft
Dice term and building boundaries), property valuation training (a feature-tokenising transformer over numeric
fields with missing values, categorical fields, a map raster around the property and a drawn, masked number of
comparable sales, price quantiles and days on market), short-term-rental occupancy forecasting training (a GRU
encoder-decoder written out step by step over left-padded nightly histories of drawn lengths, booking and price heads
over a drawn horizon) and a listing-photo service (a vision transformer over each listing's photos of drawn aspect
ratios, room type, quality, amenities and near-duplicate flags). Same conventions as the earlier batches: nothing
downloaded, data drawn at random on the device (or in reused pinned host buffers for the service), `rng` the
workload's random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)` so that
RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: resolutions, history lengths, comparable counts
and batch sizes are fixed on the host, padding handled by masks multiplied in or by torch.where / masked_fill, no
boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
listing_photo_serve uploads its photos on a side stream (two reused pinned host buffers, one request ahead, the main
stream waiting on an event, the tensors record_stream'ed, through workload_helpers.SideUploads); the other three are
single-stream. The models run under bf16 autocast. Every position table is sized for the longest padded length that
can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new92.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and for
which of them the CPU smoke run (RECORD_SMOKE=1) ran.
"""

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- building footprint and land-use segmentation


def _conv_bn(cin, cout, k=3, stride=1, dilation=1, relu=True):
    mods = [_nn.Conv2d(cin, cout, k, stride, dilation * (k // 2), dilation=dilation, bias=False),
            _nn.BatchNorm2d(cout)]
    return _nn.Sequential(*mods, _nn.ReLU(inplace=True)) if relu else _nn.Sequential(*mods)


class _DilatedBlock(_nn.Module):
    """Two 3x3 convolutions (the first strided, both dilated as given) with a shortcut projected when the shape
    changes (average-pooled first when strided, as ResNet-D does)."""

    def __init__(self, cin, cout, stride, dilation):
        super().__init__()
        self.a = _conv_bn(cin, cout, 3, stride, dilation)
        self.b = _conv_bn(cout, cout, 3, 1, dilation, relu=False)
        if stride != 1:  # ResNet-D shortcut: average pooling, then a 1x1 projection
            self.sc = _nn.Sequential(_nn.AvgPool2d(stride, stride), _conv_bn(cin, cout, 1, relu=False))
        else:
            self.sc = _conv_bn(cin, cout, 1, relu=False) if cin != cout else _nn.Identity()

    def forward(self, x):
        return _F.relu(self.b(self.a(x)) + self.sc(x))


class _FootprintDeepLab(_nn.Module):
    """Stem to 1/2, residual stages to 1/4, 1/8, 1/16 and a dilated 1/16 stage; ASPP (1x1, rates 6/12/18, image
    pooling); a decoder joining the 1/4 features; land-use, building and boundary logits at full resolution."""

    def __init__(self, stem, stages, aspp, n_land, rates):
        super().__init__()
        self.stem = _nn.Sequential(_conv_bn(3, stem, 3, 2), _conv_bn(stem, stem))
        layers, c = [], stem
        for w, s, d in stages:
            layers.append(_nn.Sequential(_DilatedBlock(c, w, s, d), _DilatedBlock(w, w, 1, d)))
            c = w
        self.stages = _nn.ModuleList(layers)
        self.aspp = _nn.ModuleList([_conv_bn(c, aspp, 1)] + [_conv_bn(c, aspp, 3, 1, r) for r in rates])
        self.pool = _conv_bn(c, aspp, 1)
        self.merge = _conv_bn(5 * aspp, aspp, 1)
        self.low = _conv_bn(stages[0][0], 48, 1)
        self.dec = _nn.Sequential(_conv_bn(aspp + 48, aspp), _conv_bn(aspp, aspp))
        self.head = _nn.Conv2d(aspp, n_land + 2, 1)

    def forward(self, x):
        h, w = x.shape[-2:]
        y = self.stem(x)
        low = None
        for i, st in enumerate(self.stages):
            y = st(y)
            if i == 0:
                low = y
        pooled = _F.interpolate(self.pool(_F.adaptive_avg_pool2d(y, 1)), size=y.shape[-2:], mode="nearest")
        y = self.merge(torch.cat([a(y) for a in self.aspp] + [pooled], 1))
        y = _F.interpolate(y, size=low.shape[-2:], mode="bilinear", align_corners=False)
        y = self.dec(torch.cat([y, self.low(low)], 1))
        return _F.interpolate(self.head(y), size=(h, w), mode="bilinear", align_corners=False).float()


@_workload("building-footprint and land-use segmentation training (random init, a DeepLabv3+-style dilated residual convnet over aerial tiles): tiles of 256-640 px (drawn per step, a multiple of 32) with 2-16 tiles a step (drawn, at most 10 x 512^2 pixels a step), 3-band imagery drawn on the device; a channels-last stem (32 channels, 1/2) and residual stages of two blocks each of 64/128/256/320 channels (1/4, 1/8, 1/16, the last dilated by 2; ResNet-D shortcuts), ASPP of width 128 (1x1, rates 6/12/18, image pooling), a decoder joining the 1/4 features; 9 land-use classes (cross-entropy, unlabelled pixels ignored by index 255 where a drawn field marks about 15% of each tile), a building mask (binary cross-entropy plus a soft Dice term, from a thresholded upsampled random field) and building boundaries (the mask minus its 3x3 erosion by max-pooling, binary cross-entropy with a positive weight of 4); SGD with momentum and a poly learning-rate schedule, bf16 autocast, 560 steps; the losses read back every 20 steps and every 140 steps a no-grad evaluation of 4 tiles of 640 px with per-class land-use IoU (one-hot by comparison with an arange) and building IoU read back")
def building_footprint_seg_train(rng):
    stages = _smoke([(64, 2, 1), (128, 2, 1), (256, 2, 1), (320, 1, 2)], [(8, 2, 1), (16, 2, 1), (16, 1, 2)])
    n_land, aspp = 9, _smoke(128, 16)
    rates = _smoke((6, 12, 18), (1, 2, 3))  # the smoke run's tiny maps take small rates
    model = _FootprintDeepLab(_smoke(32, 8), stages, aspp, n_land, rates).cuda().to(memory_format=torch.channels_last)
    steps = _smoke(560, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: (1 - s / steps) ** 0.9)
    budget, mult = _smoke(10 * 512 * 512, 2 * 64 * 64), _smoke(32, 16)
    pos_w = torch.tensor([4.0], device="cuda")

    def tiles(b, res):
        x = torch.randn(b, 3, res, res, device="cuda").contiguous(memory_format=torch.channels_last)
        coarse = torch.randn(b, n_land, res // 32, res // 32, device="cuda")
        land = _F.interpolate(coarse, size=(res, res), mode="nearest").argmax(1)
        unlab = _F.interpolate(torch.rand(b, 1, res // 16, res // 16, device="cuda"), size=(res, res),
                               mode="nearest")[:, 0] < 0.15
        land = land.masked_fill(unlab, 255)
        field = _F.interpolate(torch.randn(b, 1, res // 8, res // 8, device="cuda"), size=(res, res),
                               mode="bilinear", align_corners=False)
        bld = (field > 0.7).float()
        eroded = -_F.max_pool2d(-bld, 3, 1, 1)
        return x, land, bld[:, 0], (bld - eroded)[:, 0]

    for step in range(steps):
        model.train()
        res = rng.randint(_smoke(256, 32) // mult, _smoke(640, 64) // mult) * mult
        b = rng.randint(2, max(2, min(16, budget // (res * res))))
        x, land, bld, edge = tiles(b, res)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(x)
        l_land = _F.cross_entropy(out[:, :n_land], land, ignore_index=255)
        pb = torch.sigmoid(out[:, n_land])
        dice = 1 - (2 * (pb * bld).sum((1, 2)) + 1) / (pb.sum((1, 2)) + bld.sum((1, 2)) + 1)
        l_bld = _F.binary_cross_entropy_with_logits(out[:, n_land], bld) + dice.mean()
        l_edge = _F.binary_cross_entropy_with_logits(out[:, n_land + 1], edge, pos_weight=pos_w)
        loss = l_land + l_bld + 0.5 * l_edge
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        if step % 20 == 0:
            torch.stack([l_land.detach(), l_bld.detach(), l_edge.detach()]).tolist()
        del x, land, bld, edge, out, l_land, pb, dice, l_bld, l_edge, loss
        if (step + 1) % _smoke(140, 2) == 0:
            model.eval()
            with torch.no_grad():
                x, land, bld, edge = tiles(_smoke(4, 2), _smoke(640, 64))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    out = model(x)
                cls = torch.arange(n_land, device="cuda")[None, :, None, None]
                pred = out[:, :n_land].argmax(1)[:, None] == cls
                true = land[:, None] == cls
                inter = (pred & true).float().sum((0, 2, 3))
                union = (pred | true).float().sum((0, 2, 3))
                pbin = (out[:, n_land] > 0).float()
                b_iou = (pbin * bld).sum() / (pbin + bld - pbin * bld).sum().clamp(min=1)
                res_t = torch.cat([inter / union.clamp(min=1), b_iou[None]])
            res_t.tolist()
            del x, land, bld, edge, out, cls, pred, true, inter, union, pbin, b_iou, res_t


# ---------------------------------------------------------------- property valuation (feature-tokenising transformer)


class _ValuationNet(_nn.Module):
    """Numeric fields tokenised per field (a weight and a bias each, a learned token where missing), categorical
    fields from one offset table, a map raster through a small convnet to 4 x 4 tokens, comparable sales through an
    MLP (their features, log price, distance and age of sale), a CLS token; pre-norm blocks under a key mask
    covering absent comparables; price-quantile and days-on-market heads."""

    def __init__(self, n_num, cards, map_ch, comp_dim, d, heads, layers, n_q):
        super().__init__()
        self.w = _nn.Parameter(torch.randn(n_num, d) * 0.1)
        self.bias = _nn.Parameter(torch.zeros(n_num, d))
        self.missing = _nn.Parameter(torch.zeros(n_num, d))
        self.register_buffer("offsets", torch.tensor([0] + list(cards[:-1])).cumsum(0))
        self.cat = _nn.Embedding(sum(cards), d)
        self.map = _nn.Sequential(_nn.Conv2d(map_ch, 32, 3, 2, 1), _nn.GELU(), _nn.Conv2d(32, 64, 3, 2, 1), _nn.GELU(),
                                  _nn.Conv2d(64, d, 3, 2, 1), _nn.AdaptiveAvgPool2d(4))
        self.comp = mlp(comp_dim, d, d, act=_nn.GELU)
        self.kind = _nn.Parameter(torch.zeros(4, d))  # field, categorical, map and comparable type embeddings
        self.cls = _nn.Parameter(torch.zeros(1, 1, d))
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.q = _nn.Linear(d, n_q)
        self.dom = _nn.Linear(d, 1)

    def forward(self, num, present, cat, raster, comps, keep):
        b = num.shape[0]
        tok_num = torch.where(present[..., None], num[..., None] * self.w + self.bias, self.missing) + self.kind[0]
        tok_cat = self.cat(cat + self.offsets) + self.kind[1]
        tok_map = self.map(raster).flatten(2).transpose(1, 2) + self.kind[2]
        tok_comp = self.comp(comps) + self.kind[3]
        x = torch.cat([self.cls.expand(b, -1, -1).to(tok_num.dtype), tok_num, tok_cat.to(tok_num.dtype),
                       tok_map.to(tok_num.dtype), tok_comp.to(tok_num.dtype)], 1)
        fixed = x.shape[1] - keep.shape[1]
        mask = torch.cat([torch.ones(b, fixed, dtype=torch.bool, device=keep.device), keep], 1)[:, None, None, :]
        for blk in self.blocks:
            x = blk(x, mask=mask)
        z = self.norm(x[:, 0])
        return self.q(z).float(), self.dom(z)[:, 0].float()


@_workload("property valuation training (random init, a feature-tokenising transformer over tabular, map and comparable-sales inputs): 160-640 properties a step (drawn), each with 28 numeric fields (about 8% missing, drawn, replaced by a learned token through torch.where), 6 categorical fields (property type 14, zip code 3,000, condition 6, heating 9, year-built decade 16, listing month 12; one offset table), an 8-channel 64 x 64 map raster around the property (a 3-layer strided convnet pooled to 4 x 4 tokens) and 4-40 comparable sales a step (drawn; 1 to that many valid per property, drawn, the rest masked) of 12 features each through an MLP; a CLS token and 6 pre-norm blocks (width 192, 6 heads) under a key mask; 3 log-price quantiles (0.1/0.5/0.9, pinball loss) and a days-on-market rate (Poisson negative log-likelihood); AdamW, clipping, bf16 autocast, 370 steps; the losses read back every 25 steps and every 92 steps a no-grad evaluation of 1,024 properties with 40 comparables, median absolute log error and 80% interval coverage read back")
def property_valuation_train(rng):
    n_num, cards, map_ch, comp_dim = 28, _smoke([14, 3000, 6, 9, 16, 12], [4, 30, 3, 3, 4, 12]), 8, 12
    d, heads, layers = _smoke(192, 32), _smoke(6, 2), _smoke(6, 1)
    quant = torch.tensor([0.1, 0.5, 0.9], device="cuda")
    model = _ValuationNet(n_num, cards, map_ch, comp_dim, d, heads, layers, 3).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.02)
    map_px, max_comp = _smoke(64, 16), _smoke(40, 6)

    def batch(b, k, valid):
        num = torch.randn(b, n_num, device="cuda")
        present = torch.rand(b, n_num, device="cuda") > 0.08
        cat = torch.stack([torch.randint(0, c, (b,), device="cuda") for c in cards], 1)
        raster = torch.rand(b, map_ch, map_px, map_px, device="cuda")
        comps = torch.randn(b, k, comp_dim, device="cuda")
        keep = keep_mask(valid, k)
        comps = comps.masked_fill(~keep[..., None], 0.0)
        price = 12.5 + 0.6 * torch.randn(b, device="cuda")
        dom = torch.poisson(torch.full((b,), 30.0, device="cuda"))
        return num, present, cat, raster, comps, keep, price, dom

    def pinball(q, y):
        e = y[:, None] - q
        return torch.maximum(quant * e, (quant - 1) * e).mean()

    steps = _smoke(370, 3)
    for step in range(steps):
        model.train()
        b, k = rng.randint(_smoke(160, 4), _smoke(640, 8)), rng.randint(_smoke(4, 2), max_comp)
        num, present, cat, raster, comps, keep, price, dom = batch(b, k, [rng.randint(1, k) for _ in range(b)])
        with torch.autocast("cuda", dtype=torch.bfloat16):
            q, rate = model(num, present, cat, raster, comps, keep)
        l_q = pinball(q, price)
        l_dom = _F.poisson_nll_loss(rate, dom, log_input=True)
        loss = l_q + 0.1 * l_dom
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 25 == 0:
            torch.stack([l_q.detach(), l_dom.detach()]).tolist()
        del num, present, cat, raster, comps, keep, price, dom, q, rate, l_q, l_dom, loss
        if (step + 1) % _smoke(92, 2) == 0:
            model.eval()
            n = _smoke(1024, 4)
            with torch.no_grad():
                num, present, cat, raster, comps, keep, price, dom = batch(n, max_comp, [max_comp] * n)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    q, rate = model(num, present, cat, raster, comps, keep)
                mae = (q[:, 1] - price).abs().median()
                cover = ((price >= q[:, 0]) & (price <= q[:, 2])).float().mean()
                out = torch.stack([mae, cover])
            out.tolist()
            del num, present, cat, raster, comps, keep, price, dom, q, rate, mae, cover, out


# ---------------------------------------------------------------- short-term-rental occupancy forecasting (GRU)


class _GRUStep(_nn.Module):
    """One GRU layer run a step at a time: the input projection for every step at once, the recurrent projection
    and the gates per step."""

    def __init__(self, din, hidden):
        super().__init__()
        self.inp = _nn.Linear(din, 3 * hidden)
        self.rec = _nn.Linear(hidden, 3 * hidden, bias=False)

    def step(self, xi, h):
        xr, xz, xn = xi.chunk(3, -1)
        hr, hz, hn = self.rec(h).chunk(3, -1)
        r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
        n = torch.tanh(xn + r * hn)
        return n + z * (h - n)


class _OccupancyForecaster(_nn.Module):
    """Nightly inputs (booked, log price, available, a day-of-week and a month embedding, a holiday flag) into a GRU
    encoder started from the listing's static features (neighbourhood, room type, capacity); a GRU decoder over the
    horizon fed the previous night's booking, the planned price and the target night's calendar; a booking logit
    and a log-price per night."""

    def __init__(self, n_hood, hidden, d_cal):
        super().__init__()
        self.hood, self.room, self.cap = _nn.Embedding(n_hood, 32), _nn.Embedding(4, 8), _nn.Embedding(17, 8)
        self.h0 = _nn.Linear(48, hidden)
        self.dow, self.month = _nn.Embedding(7, d_cal), _nn.Embedding(12, d_cal)
        self.enc = _GRUStep(3 + 2 * d_cal + 1, hidden)
        self.dec = _GRUStep(2 + 2 * d_cal + 1, hidden)
        self.out = mlp(hidden, hidden, 2, act=_nn.GELU)

    def calendar(self, dow, month, hol):
        return [self.dow(dow), self.month(month), hol[..., None]]

    def start(self, hood, room, cap):
        return torch.tanh(self.h0(torch.cat([self.hood(hood), self.room(room), self.cap(cap)], -1)))

    def encode(self, h, hist, cal, active):
        xi = self.enc.inp(torch.cat([hist] + cal, -1))
        for t in range(hist.shape[1]):
            h = torch.where(active[:, t:t + 1], self.enc.step(xi[:, t], h), h)
        return h

    def decode_step(self, h, prev, price, cal_t):
        xi = self.dec.inp(torch.cat([prev[:, None], price[:, None]] + cal_t, -1))
        h = self.dec.step(xi, h)
        o = self.out(h)
        return h, o[:, 0], o[:, 1]


@_workload("short-term-rental occupancy forecasting training (random init, a GRU encoder-decoder written out step by step): 128-512 listings a step (drawn), nightly histories of 28-84 nights (the step's window drawn; each listing's length drawn from 7 nights up to it, left-padded, the state held through padding by torch.where) of booked, log price and availability with day-of-week and month embeddings and a holiday flag, the encoder state started from neighbourhood (of 900), room type and capacity embeddings; a 1-layer GRU encoder and a 1-layer GRU decoder (hidden 256) over a 7-28-night horizon (drawn) fed the previous night's booking (teacher forcing), the planned price and the target night's calendar; a booking logit (binary cross-entropy, blocked nights masked out) and a log price (Huber) per night; Adam, clipping, bf16 autocast, 105 steps; the losses read back every 10 steps and every 35 steps a no-grad 28-night autoregressive forecast of 256 listings (the predicted booking probability fed back) with the booking MAE read back")
def rental_occupancy_forecast_train(rng):
    n_hood, hidden, d_cal = _smoke(900, 20), _smoke(256, 16), 8
    model = _OccupancyForecaster(n_hood, hidden, d_cal).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def listings(b, t, h, lengths):
        static = (torch.randint(0, n_hood, (b,), device="cuda"), torch.randint(0, 4, (b,), device="cuda"),
                  torch.randint(1, 17, (b,), device="cuda"))
        start = torch.randint(0, 7, (b, 1), device="cuda")
        days = start + torch.arange(t + h, device="cuda")[None]
        dow, month = days % 7, (days // 30) % 12
        hol = (torch.rand(b, t + h, device="cuda") < 0.04).float()
        booked = (torch.rand(b, t + h, device="cuda") < 0.6).float()
        price = 4.5 + 0.3 * torch.randn(b, t + h, device="cuda")
        avail = (torch.rand(b, t + h, device="cuda") > 0.1).float()
        active = keep_mask(lengths, t).flip(1)
        hist = torch.stack([booked[:, :t], price[:, :t], avail[:, :t]], -1) * active[..., None]
        return static, dow, month, hol, booked, price, avail, active, hist

    steps = _smoke(105, 3)
    for step in range(steps):
        model.train()
        b, t, h = rng.randint(_smoke(128, 2), _smoke(512, 4)), rng.randint(_smoke(28, 4), _smoke(84, 8)), \
            rng.randint(_smoke(7, 2), _smoke(28, 4))
        static, dow, month, hol, booked, price, avail, active, hist = listings(
            b, t, h, [rng.randint(_smoke(7, 1), t) for _ in range(b)])
        with torch.autocast("cuda", dtype=torch.bfloat16):
            cal = model.calendar(dow, month, hol)
            state = model.encode(model.start(*static), hist, [c[:, :t] for c in cal], active)
            logits, prices = [], []
            for j in range(h):
                i = t + j
                state, lg, pr = model.decode_step(state, booked[:, i - 1], price[:, i], [c[:, i] for c in cal])
                logits.append(lg)
                prices.append(pr)
        logit, pred = torch.stack(logits, 1).float(), torch.stack(prices, 1).float()
        w = avail[:, t:]
        l_book = (_F.binary_cross_entropy_with_logits(logit, booked[:, t:], reduction="none") * w).sum() \
            / w.sum().clamp(min=1)
        l_price = _F.huber_loss(pred, price[:, t:])
        loss = l_book + l_price
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_book.detach(), l_price.detach()]).tolist()
        del static, dow, month, hol, booked, price, avail, active, hist, cal, state, logits, prices, lg, pr
        del logit, pred, w, l_book, l_price, loss
        if (step + 1) % _smoke(35, 2) == 0:
            model.eval()
            n, t, h = _smoke(256, 3), _smoke(84, 8), _smoke(28, 4)
            with torch.no_grad():
                static, dow, month, hol, booked, price, avail, active, hist = listings(n, t, h, [t] * n)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    cal = model.calendar(dow, month, hol)
                    state = model.encode(model.start(*static), hist, [c[:, :t] for c in cal], active)
                    prev, probs = booked[:, t - 1], []
                    for j in range(h):
                        state, lg, _ = model.decode_step(state, prev, price[:, t + j], [c[:, t + j] for c in cal])
                        prev = torch.sigmoid(lg.float())
                        probs.append(prev)
                mae = (torch.stack(probs, 1) - booked[:, t:]).abs().mean()
            mae.item()
            del static, dow, month, hol, booked, price, avail, active, hist, cal, state, prev, probs, lg, mae


# ---------------------------------------------------------------- listing-photo service (vision transformer)


class _PhotoViT(_nn.Module):
    """16-px patches, row and column position tables of the largest grid (18 x 18), a CLS token, pre-norm blocks;
    room-type, quality, amenity and embedding heads."""

    def __init__(self, d, heads, layers, grid, n_room, n_amen, d_emb):
        super().__init__()
        self.patch = _nn.Conv2d(3, d, 16, 16)
        self.row, self.col = _nn.Embedding(grid, d), _nn.Embedding(grid, d)
        self.cls = _nn.Parameter(torch.zeros(1, 1, d))
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.room, self.quality = _nn.Linear(d, n_room), _nn.Linear(d, 1)
        self.amen, self.emb = _nn.Linear(d, n_amen), _nn.Linear(d, d_emb)

    def forward(self, x):
        p = self.patch(x)
        gh, gw = p.shape[-2:]
        pos = self.row(torch.arange(gh, device=x.device))[:, None] + self.col(torch.arange(gw, device=x.device))[None]
        tok = p.flatten(2).transpose(1, 2) + pos.flatten(0, 1)[None]
        z = torch.cat([self.cls.expand(x.shape[0], -1, -1).to(tok.dtype), tok], 1)
        for blk in self.blocks:
            z = blk(z)
        c = self.norm(z[:, 0])
        return self.room(c).float(), self.quality(c)[:, 0].float(), self.amen(c).float(), self.emb(c).float()


@_workload("listing-photo serving (random init, a vision transformer over each listing's photos): 1,040-1,080 requests (drawn), each one listing of 1-12 photos (drawn) at one of three camera sizes (480 x 640, 640 x 480 or 600 x 600, drawn per request); uint8 pixels uploaded on a side stream from two reused pinned host buffers (filled once, sized for 12 photos of 600 x 600 pixels) one request ahead (one span, waited on by event, record_stream'ed), normalised and resized bilinearly on the device to 224 x 288, 288 x 224 or 256 x 256; a ViT (16-px patches, width 384, 8 pre-norm blocks of 6 heads, row and column position tables of 18, a CLS token) under bf16 autocast; 14 room types, a quality score, 30 amenity tags (sigmoid) and a normalised 256-d embedding; near-duplicate pairs (cosine similarity above 0.95 in the upper triangle, by torch.where) counted per photo, the cover photo chosen by quality among non-duplicates; each request's room types, quality, amenity counts, duplicate counts and cover index read back")
def listing_photo_serve(rng):
    d, heads, layers = _smoke(384, 32), _smoke(6, 2), _smoke(8, 1)
    model = _PhotoViT(d, heads, layers, 18, 14, 30, _smoke(256, 16)).cuda().eval()
    model.requires_grad_(False)
    cams = _smoke([((480, 640), (224, 288)), ((640, 480), (288, 224)), ((600, 600), (256, 256))],
                  [((48, 64), (32, 48)), ((64, 48), (48, 32))])
    max_photos = _smoke(12, 2)
    big = max(h * w for (h, w), _ in cams)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_photos * 3 * big,), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1) * 255
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1) * 255
    nreq = rng.randint(_smoke(1040, 3), _smoke(1080, 4))
    plan = [(rng.randint(1, max_photos), rng.choice(cams)) for _ in range(nreq)]

    def span(p):
        return p[0] * 3 * p[1][0][0] * p[1][0][1]

    nxt = up.upload(0, span(plan[0]))
    for i in range(nreq):
        f, ((h, w), size) = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, span(plan[i + 1]))
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            x = raw.view(f, 3, h, w).float().sub_(mean).div_(std)
            x = _F.interpolate(x, size=size, mode="bilinear", align_corners=False)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                room, quality, amen, emb = model(x)
            emb = _F.normalize(emb, dim=-1)
            sim = emb @ emb.t()
            upper = torch.ones(f, f, dtype=torch.bool, device="cuda").triu(1)
            dup = torch.where(upper & (sim > 0.95), 1.0, 0.0)
            is_dup = dup.sum(0)
            cover = torch.where(is_dup > 0, float("-inf"), quality).argmax()
            out = torch.cat([room.argmax(-1).float(), quality, (torch.sigmoid(amen) > 0.5).float().sum(-1),
                             is_dup, cover.float()[None]])
        out.tolist()
        del item, raw, x, room, quality, amen, emb, sim, upper, dup, is_dup, cover, out

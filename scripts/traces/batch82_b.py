"""The eighty-second batch of held-out workloads for record.py, second half (the first is batch82.py): food and
nutrition, written in torch alone. A hyperspectral food-safety inspection service on a processing line (fp16
hyperspectral tiles of drawn counts and sizes uploaded on a side stream, band attention and a spectral-spatial U-Net
segmenting foreign material, mould and bruising, per-tile reject decisions by area thresholds), flavour and
ingredient-pairing graph training (a message-passing network over an ingredient-compound-cuisine graph by index_add_,
edge dropout by a mask multiplied in, link prediction of ingredient pairs against drawn negatives, hits@20 at
evaluation points), crop-to-plate supply forecasting (an encoder-decoder transformer over weekly series of drawn
lookback and horizon for region x commodity pairs, static embeddings, quantile loss) and class-conditional food image
diffusion training (a small U-Net denoiser with time and dish embeddings at drawn resolutions, classifier-free
guidance dropout, an EMA of the weights, a few guided DDIM preview steps at evaluation points). Same conventions as
the earlier batches: nothing downloaded, data drawn at random on the device (or, for the inspection service, from two
reused pinned host buffers), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: batch
sizes, lengths, tile counts and edge counts are fixed on the host, padding handled by masks multiplied in or by
torch.where / masked_fill, no boolean-mask indexing; losses, metrics and decisions are read back only at logging
points. hyperspectral_contamination_serve uses a side stream (uploads waited on by event, the tensors
record_stream'ed); the others are single-stream. The networks run under bf16 autocast.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new82.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and for
which of them the CPU smoke run (RECORD_SMOKE=1) ran.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import SideUploads, _sincos, mlp, randint

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _conv_block(cin, cout):
    return _nn.Sequential(_nn.Conv2d(cin, cout, 3, padding=1, bias=False), _nn.BatchNorm2d(cout), _nn.ReLU(),
                          _nn.Conv2d(cout, cout, 3, padding=1, bias=False), _nn.BatchNorm2d(cout), _nn.ReLU())


# ---------------------------------------------------------------- hyperspectral contamination inspection


class _SpectralUNet(_nn.Module):
    """Band attention (squeeze-excitation over the spectral bands), a 1x1 spectral reduction, a 3-level U-Net."""

    def __init__(self, bands, widths, classes):
        super().__init__()
        self.se = _nn.Sequential(_nn.Linear(bands, bands // 4), _nn.ReLU(), _nn.Linear(bands // 4, bands))
        self.reduce = _nn.Sequential(_nn.Conv2d(bands, widths[0], 1, bias=False), _nn.BatchNorm2d(widths[0]),
                                     _nn.ReLU())
        self.down = _nn.ModuleList()
        cin = widths[0]
        for w in widths:
            self.down.append(_conv_block(cin, w))
            cin = w
        self.up = _nn.ModuleList()
        self.upconv = _nn.ModuleList()
        for w in reversed(widths[:-1]):
            self.upconv.append(_nn.ConvTranspose2d(cin, w, 2, 2))
            self.up.append(_conv_block(2 * w, w))
            cin = w
        self.out = _nn.Conv2d(cin, classes, 1)

    def forward(self, x):
        a = torch.sigmoid(self.se(x.mean((2, 3))))
        h = self.reduce(x * a[..., None, None])
        skips = []
        for i, blk in enumerate(self.down):
            h = blk(h if i == 0 else _F.max_pool2d(h, 2))
            skips.append(h)
        for up, blk, s in zip(self.upconv, self.up, reversed(skips[:-1])):
            h = blk(torch.cat([up(h), s], 1))
        return self.out(h).float()


@_workload("hyperspectral food-safety inspection service on a processing line (random init): 2,700-2,900 requests (drawn) of 1-12 hyperspectral tiles (log-uniform) of 96, 128 or 160 pixels (drawn) x 96 bands, each request's fp16 reflectance cube uploaded on a side stream from two reused pinned host buffers one request ahead (waited on by event, record_stream'ed); white/dark reference calibration and a log-absorbance transform on the device, band attention (squeeze-excitation over the bands), a 1x1 spectral reduction and a 3-level U-Net (widths 48, 96, 192, channels_last, bf16 autocast, eval-mode batch norm) segmenting 5 classes (clean product, foreign material, mould, bruise, background); per-tile class areas, a reject flag by per-class area thresholds via torch.where, the worst tile's area and a per-request line decision; each request's decisions and areas read back")
def hyperspectral_contamination_serve(rng):
    bands, widths, classes = _smoke(96, 8), _smoke([48, 96, 192], [8, 16, 16]), 5
    model = _SpectralUNet(bands, widths, classes).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    white = (torch.rand(1, bands, 1, 1, device="cuda") * 0.2 + 0.8)
    dark = torch.rand(1, bands, 1, 1, device="cuda") * 0.02
    area_thr = torch.tensor([1.0, 0.0005, 0.002, 0.01, 1.0], device="cuda")
    maxb, sizes = _smoke(12, 3), _smoke([96, 128, 160], [16, 24])
    maxs = max(sizes)
    host = [(torch.rand(maxb * bands * maxs * maxs) * 0.9 + 0.05).half().pin_memory() for _ in range(2)]
    up = SideUploads(host)
    nreq = rng.randint(_smoke(2700, 3), _smoke(2900, 4))
    plan = [(_loguniform(rng, 1, maxb), rng.choice(sizes)) for _ in range(nreq)]

    def span(i):
        b, s = plan[i]
        return slice(0, b * bands * s * s)

    nxt = up.upload(0, span(0))
    for i in range(nreq):
        b, s = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, span(i + 1))
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            refl = ((raw.view(b, bands, s, s).float() - dark) / (white - dark)).clamp(1e-3, 1.0)
            x = (-torch.log10(refl)).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(x)
            seg = _F.one_hot(logits.argmax(1), classes).float()
            area = seg.mean((1, 2))
            conf = torch.softmax(logits, 1).amax(1).mean((1, 2))
            over = area - area_thr
            reject = torch.where(over[:, 1:4] > 0, torch.ones_like(over[:, 1:4]), torch.zeros_like(over[:, 1:4]))
            flag = reject.amax(1)
            worst = area[:, 1:4].amax(0)
            out = torch.cat([flag[:, None], area, conf[:, None], worst[None].expand(b, 3), flag.amax()[None, None]
                             .expand(b, 1)], 1)
        out.tolist()
        del item, raw, refl, x, logits, seg, area, conf, over, reject, flag, worst, out


# ---------------------------------------------------------------- flavour and ingredient-pairing graph


class _SageLayer(_nn.Module):
    def __init__(self, d):
        super().__init__()
        self.self_lin, self.nbr_lin = _nn.Linear(d, d), _nn.Linear(d, d, bias=False)
        self.norm = _nn.LayerNorm(d)

    def forward(self, h, src, dst, w, deg):
        msg = h[src] * w[:, None].to(h.dtype)
        agg = torch.zeros_like(h).index_add_(0, dst, msg) / deg[:, None].to(h.dtype)
        return h + _F.gelu(self.norm(self.self_lin(h) + self.nbr_lin(agg)))


class _FlavorGNN(_nn.Module):
    def __init__(self, n_nodes, n_types, d, layers):
        super().__init__()
        self.emb, self.kind = _nn.Embedding(n_nodes, d), _nn.Embedding(n_types, d)
        self.layers = _nn.ModuleList(_SageLayer(d) for _ in range(layers))
        self.score = mlp(2 * d, d, 1, layers=2, act=_nn.GELU)

    def forward(self, ntype, src, dst, w):
        h = self.emb.weight + self.kind(ntype)
        deg = torch.zeros(h.shape[0], device=h.device).index_add_(0, dst, w).clamp(min=1)
        for layer in self.layers:
            h = layer(h, src, dst, w, deg)
        return h

    def pair(self, h, a, b):
        ha, hb = h[a], h[b]
        return self.score(torch.cat([ha * hb, (ha - hb).abs()], -1))[..., 0].float()


@_workload("flavour and ingredient-pairing graph training (random init, FlavorGraph-like): a graph of 6,600 ingredients, 1,600 flavour compounds and 40 cuisines (8,240 nodes, node-type embeddings) with 120,000 ingredient-compound, 40,000 ingredient-cuisine and 120,000 ingredient co-occurrence edges both ways (560,000 directed edges, weights drawn once), 4 GraphSAGE-style residual layers (width 192, messages by gather and index_add_, weighted mean aggregation) over the whole graph every step with 10-30% of edges dropped (drawn per step, by a mask multiplied into the weights); link prediction of 4,096-16,384 ingredient pairs a step (drawn, a multiple of 1,024, from the co-occurrence edges) each against 4 random ingredient negatives by binary cross-entropy, plus a compound-profile reconstruction loss; AdamW, clipping, bf16 autocast, 1,000 steps; the loss read back every 25 steps and every 250 steps an evaluation scoring 1,024 held-out pairs against 200 random ingredients each with hits@20 and MRR read back")
def flavor_pairing_gnn_train(rng):
    n_ing, n_cmp, n_cui = _smoke(6600, 60), _smoke(1600, 20), _smoke(40, 4)
    e_ic, e_iu, e_ii = _smoke(120_000, 400), _smoke(40_000, 100), _smoke(120_000, 500)
    d, layers = _smoke(192, 16), 4
    n = n_ing + n_cmp + n_cui
    ntype = torch.cat([torch.zeros(n_ing, dtype=torch.long), torch.ones(n_cmp, dtype=torch.long),
                       torch.full((n_cui,), 2, dtype=torch.long)]).cuda()
    ing_a = torch.randint(0, n_ing, (e_ic + e_iu + e_ii,), device="cuda")
    other = torch.cat([torch.randint(n_ing, n_ing + n_cmp, (e_ic,), device="cuda"),
                       torch.randint(n_ing + n_cmp, n, (e_iu,), device="cuda"),
                       torch.randint(0, n_ing, (e_ii,), device="cuda")])
    src, dst = torch.cat([ing_a, other]), torch.cat([other, ing_a])
    weight = torch.rand(src.shape[0], device="cuda") * 0.9 + 0.1
    pos_a, pos_b = ing_a[e_ic + e_iu:], other[e_ic + e_iu:]
    held = torch.randint(0, e_ii, (_smoke(1024, 16),), device="cuda")
    profile = (torch.rand(n_ing, n_cmp, device="cuda") < 0.02).float()
    model = _FlavorGNN(n, 3, d, layers).cuda()
    recon = _nn.Linear(d, n_cmp).cuda()
    params = list(model.parameters()) + list(recon.parameters())
    opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=1e-4)
    negs = 4

    steps = _smoke(1000, 3)
    for step in range(steps):
        model.train()
        drop = rng.uniform(0.1, 0.3)
        m = randint(rng, _smoke(4096, 32), _smoke(16384, 64), _smoke(1024, 32))
        w = weight * (torch.rand_like(weight) >= drop).float()
        pick = torch.randint(0, e_ii, (m,), device="cuda")
        a, b = pos_a[pick], pos_b[pick]
        na = a.repeat(negs)
        nb = torch.randint(0, n_ing, (m * negs,), device="cuda")
        rows = torch.randint(0, n_ing, (_smoke(2048, 16),), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = model(ntype, src, dst, w)
            pos, neg = model.pair(h, a, b), model.pair(h, na, nb)
            rec_logits = recon(h[rows]).float()
        loss = _F.binary_cross_entropy_with_logits(pos, torch.ones_like(pos)) \
            + _F.binary_cross_entropy_with_logits(neg, torch.zeros_like(neg)) \
            + 0.2 * _F.binary_cross_entropy_with_logits(rec_logits, profile[rows], pos_weight=torch.tensor(10.0, device="cuda"))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if step % 25 == 0:
            loss.item()
        del w, pick, a, b, na, nb, rows, h, pos, neg, rec_logits, loss
        if (step + 1) % _smoke(250, 2) == 0:
            model.eval()
            with torch.no_grad():
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    h = model(ntype, src, dst, weight)
                    k = _smoke(200, 8)
                    a, b = pos_a[held], pos_b[held]
                    cand = torch.cat([b[:, None], torch.randint(0, n_ing, (held.shape[0], k), device="cuda")], 1)
                    s = model.pair(h, a[:, None].expand_as(cand), cand)
                rank = (s[:, 1:] > s[:, :1]).sum(1).float()
                metrics = torch.stack([(rank < 20).float().mean(), (1 / (rank + 1)).mean()])
            metrics.tolist()
            del h, a, b, cand, s, rank, metrics


# ---------------------------------------------------------------- crop-to-plate supply forecasting


class _SupplyForecaster(_nn.Module):
    """Static region and commodity embeddings, an encoder over the lookback and a decoder whose queries (future
    covariates and positions) attend to it; three quantiles per future week."""

    def __init__(self, n_regions, n_items, feats, futs, d, heads, layers, maxpos, quantiles):
        super().__init__()
        self.region, self.item = _nn.Embedding(n_regions, d), _nn.Embedding(n_items, d)
        self.inp, self.fut = _nn.Linear(feats, d), _nn.Linear(futs, d)
        self.pos = _nn.Embedding(maxpos, d)
        self.enc = _nn.TransformerEncoder(_nn.TransformerEncoderLayer(d, heads, 4 * d, 0.1, batch_first=True,
                                                                      norm_first=True), layers,
                                          enable_nested_tensor=False)
        self.dec = _nn.TransformerDecoder(_nn.TransformerDecoderLayer(d, heads, 4 * d, 0.1, batch_first=True,
                                                                      norm_first=True), layers)
        self.out = _nn.Linear(d, quantiles)

    def forward(self, past, pmask, future, region, item):
        b, lb, _ = past.shape
        hz = future.shape[1]
        s = (self.region(region) + self.item(item))[:, None]
        pos = self.pos(torch.arange(lb + hz, device=past.device))
        mem = self.enc(self.inp(past) + s + pos[:lb], src_key_padding_mask=pmask)
        q = self.fut(future) + s + pos[lb:]
        return self.out(self.dec(q, mem, memory_key_padding_mask=pmask)).float()


@_workload("crop-to-plate supply forecasting training (random init, an encoder-decoder transformer): 64-256 region x commodity series a step (drawn, a multiple of 32; 600 regions, 80 commodities) with a lookback of 52-156 weeks (drawn per step; each series' real history drawn and the missing early weeks masked as key padding) of 10 features (harvested tonnes, farm-gate and retail prices, stocks, imports, exports, rainfall, temperature, a vegetation index, a disruption flag) and a horizon of 4-26 weeks (drawn per step) of 5 known future covariates (weather forecast, holidays, planting calendar), region and commodity embeddings, learned positions for up to 182 weeks, 3 encoder and 3 decoder pre-norm layers (width 256, 8 heads, dropout 0.1), the 10th, 50th and 90th percentiles by pinball loss weighted by series scale; AdamW with cosine decay, clipping, bf16 autocast, 280 steps; the loss read back every 20 steps and every 93 steps an evaluation of 4 x 256 series at 104 + 13 weeks with weighted quantile loss, MAPE of the median and 80% interval coverage read back")
def crop_supply_forecast_train(rng):
    n_regions, n_items, feats, futs = _smoke(600, 10), _smoke(80, 6), 10, 5
    d, heads, layers, qs = _smoke(256, 16), _smoke(8, 2), _smoke(3, 1), [0.1, 0.5, 0.9]
    lookback, horizon = (_smoke(52, 6), _smoke(156, 12)), (_smoke(4, 2), _smoke(26, 4))
    # Positions for the longest lookback plus the longest horizon: 156 + 26 = 182 weeks.
    maxpos = lookback[1] + horizon[1]
    model = _SupplyForecaster(n_regions, n_items, feats, futs, d, heads, layers, maxpos, len(qs)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    qt = torch.tensor(qs, device="cuda")

    def batch(b, lb, hz):
        start = torch.randint(0, lb // 2, (b, 1), device="cuda")
        pmask = torch.arange(lb, device="cuda")[None] < start
        scale = torch.rand(b, 1, 1, device="cuda") * 5 + 0.5
        past = (torch.randn(b, lb, feats, device="cuda") * scale).masked_fill(pmask[..., None], 0.0)
        future = torch.randn(b, hz, futs, device="cuda")
        y = (torch.randn(b, hz, 1, device="cuda") * 0.3 + 1) * scale
        region = torch.randint(0, n_regions, (b,), device="cuda")
        item = torch.randint(0, n_items, (b,), device="cuda")
        return past / scale, pmask, future, region, item, y / scale, scale

    def pinball(pred, y, scale):
        e = y - pred
        return (torch.maximum(qt * e, (qt - 1) * e) * scale).mean()

    steps = _smoke(280, 3)
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = 5e-4 * min(1.0, (step + 1) / 20) * 0.5 * (1 + math.cos(math.pi * step / steps))
        model.train()
        b = randint(rng, _smoke(64, 4), _smoke(256, 8), _smoke(32, 4))
        lb, hz = rng.randint(*lookback), rng.randint(*horizon)
        past, pmask, future, region, item, y, scale = batch(b, lb, hz)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(past, pmask, future, region, item)
        loss = pinball(pred, y, scale)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.item()
        del past, pmask, future, region, item, y, scale, pred, loss
        if (step + 1) % _smoke(93, 2) == 0:
            model.eval()
            wql, ape, cover = [], [], []
            with torch.no_grad():
                for _ in range(_smoke(4, 1)):
                    past, pmask, future, region, item, y, scale = batch(_smoke(256, 4), _smoke(104, 8), _smoke(13, 3))
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        pred = model(past, pmask, future, region, item)
                    wql.append(pinball(pred, y, scale) / (y.abs() * scale).mean())
                    ape.append(((pred[..., 1:2] - y).abs() / y.abs().clamp(min=1e-3)).mean())
                    cover.append(((y >= pred[..., :1]) & (y <= pred[..., 2:])).float().mean())
                    del past, pmask, future, region, item, y, scale, pred
                metrics = torch.stack([torch.stack(wql).mean(), torch.stack(ape).mean(), torch.stack(cover).mean()])
            metrics.tolist()
            del wql, ape, cover, metrics


# ---------------------------------------------------------------- class-conditional food image diffusion


class _ResBlock(_nn.Module):
    def __init__(self, cin, cout, temb):
        super().__init__()
        self.n1, self.c1 = _nn.GroupNorm(8, cin), _nn.Conv2d(cin, cout, 3, padding=1)
        self.t = _nn.Linear(temb, cout)
        self.n2, self.c2 = _nn.GroupNorm(8, cout), _nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = _nn.Conv2d(cin, cout, 1) if cin != cout else _nn.Identity()

    def forward(self, x, e):
        h = self.c1(_F.silu(self.n1(x))) + self.t(e)[..., None, None]
        h = self.c2(_F.dropout(_F.silu(self.n2(h)), 0.1, self.training))
        return h + self.skip(x)


class _AttnBlock(_nn.Module):
    def __init__(self, c, heads):
        super().__init__()
        self.h = heads
        self.norm, self.qkv, self.proj = _nn.GroupNorm(8, c), _nn.Conv2d(c, 3 * c, 1), _nn.Conv2d(c, c, 1)

    def forward(self, x):
        b, c, hh, ww = x.shape
        q, k, v = self.qkv(self.norm(x)).view(b, 3, self.h, c // self.h, hh * ww).permute(1, 0, 2, 4, 3)
        a = _F.scaled_dot_product_attention(q, k, v)
        return x + self.proj(a.transpose(2, 3).reshape(b, c, hh, ww))


class _FoodUNet(_nn.Module):
    def __init__(self, widths, classes, temb):
        super().__init__()
        self.temb = temb
        self.time = mlp(temb, 4 * temb, 4 * temb, layers=2, act=_nn.SiLU)
        self.cls = _nn.Embedding(classes + 1, 4 * temb)  # the last row is the null class of guidance dropout
        e = 4 * temb
        self.inp = _nn.Conv2d(3, widths[0], 3, padding=1)
        self.down, self.pools = _nn.ModuleList(), _nn.ModuleList()
        cin, skips = widths[0], []
        for i, w in enumerate(widths):
            self.down.append(_ResBlock(cin, w, e))
            skips.append(w)
            cin = w
            self.pools.append(_nn.Conv2d(w, w, 3, 2, 1) if i < len(widths) - 1 else _nn.Identity())
        self.mid1, self.mid_attn, self.mid2 = _ResBlock(cin, cin, e), _AttnBlock(cin, 4), _ResBlock(cin, cin, e)
        self.up, self.ups = _nn.ModuleList(), _nn.ModuleList()
        for i, w in enumerate(reversed(widths)):
            self.up.append(_ResBlock(cin + skips[-1 - i], w, e))
            cin = w
            self.ups.append(_nn.Upsample(scale_factor=2) if i < len(widths) - 1 else _nn.Identity())
        self.out = _nn.Sequential(_nn.GroupNorm(8, cin), _nn.SiLU(), _nn.Conv2d(cin, 3, 3, padding=1))

    def forward(self, x, t, y):
        e = self.time(_sincos(t, self.temb)) + self.cls(y)
        h = self.inp(x)
        hs = []
        for blk, pool in zip(self.down, self.pools):
            h = blk(h, e)
            hs.append(h)
            h = pool(h)
        h = self.mid2(self.mid_attn(self.mid1(h, e)), e)
        for blk, up in zip(self.up, self.ups):
            h = up(blk(torch.cat([h, hs.pop()], 1), e))
        return self.out(h)


@_workload("class-conditional food image diffusion training (random init, a DDPM-style U-Net denoiser, Food-101-like): 16-64 images a step (drawn, a multiple of 8; fewer at the larger sizes, at most 40 at 96 and 20 at 128 pixels) at 64, 96 or 128 pixels (drawn per step), 101 dish classes with 10% dropped to the null class for classifier-free guidance, a U-Net of residual blocks (widths 96, 192, 288, 384, group norm, time and class embeddings of 512) with 4-head self-attention at the bottleneck, a cosine noise schedule over 1,000 steps, v-prediction MSE; AdamW, clipping, an EMA of the weights (0.999) updated every step, bf16 autocast, 350 steps; the loss read back every 10 steps and every 116 steps a preview of 8 images at 64 pixels by 8 guided DDIM steps (scale 4, conditional and unconditional in one batch of 16) with the EMA weights, the previews' per-channel mean and standard deviation read back")
def food_image_diffusion_train(rng):
    widths, classes, temb = _smoke([96, 192, 288, 384], [8, 16]), _smoke(101, 5), _smoke(128, 8)
    model = _FoodUNet(widths, classes, temb).cuda().to(memory_format=torch.channels_last)
    ema = _FoodUNet(widths, classes, temb).cuda().to(memory_format=torch.channels_last)
    ema.load_state_dict(model.state_dict())
    ema.requires_grad_(False)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.0)
    T = 1000
    s = torch.arange(T + 1, device="cuda").float() / T
    abar = torch.cos((s + 0.008) / 1.008 * math.pi / 2) ** 2
    abar = (abar / abar[0])[1:].clamp(1e-5, 0.9999)
    resolutions = _smoke([64, 96, 128], [16, 32])
    cap = {resolutions[0]: _smoke(64, 8), resolutions[1]: _smoke(40, 6), resolutions[-1]: _smoke(20, 4)}
    params, eparams = list(model.parameters()), list(ema.parameters())

    steps = _smoke(350, 3)
    for step in range(steps):
        model.train()
        r = rng.choice(resolutions)
        b = min(cap[r], randint(rng, _smoke(16, 2), _smoke(64, 8), _smoke(8, 2)))
        x0 = torch.randn(b, 3, r, r, device="cuda").clamp(-1, 1).contiguous(memory_format=torch.channels_last)
        y = torch.randint(0, classes, (b,), device="cuda")
        y = torch.where(torch.rand(b, device="cuda") < 0.1, torch.full_like(y, classes), y)
        t = torch.randint(0, T, (b,), device="cuda")
        a = abar[t].view(b, 1, 1, 1)
        noise = torch.randn_like(x0)
        xt = a.sqrt() * x0 + (1 - a).sqrt() * noise
        v = a.sqrt() * noise - (1 - a).sqrt() * x0
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(xt, t, y)
        loss = _F.mse_loss(pred.float(), v)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        with torch.no_grad():
            torch._foreach_lerp_(eparams, params, 0.001)
        if step % 10 == 0:
            loss.item()
        del x0, y, t, a, noise, xt, v, pred, loss
        if (step + 1) % _smoke(116, 2) == 0:
            ema.eval()
            nb, res = _smoke(8, 2), resolutions[0]
            with torch.no_grad():
                x = torch.randn(nb, 3, res, res, device="cuda").contiguous(memory_format=torch.channels_last)
                yc = torch.cat([torch.randint(0, classes, (nb,), device="cuda"),
                                torch.full((nb,), classes, device="cuda")])
                k = _smoke(8, 2)
                ts = [round((T - 1) * (1 - j / k)) for j in range(k + 1)]  # the DDIM timesteps, on the host
                for i in range(k):
                    tt = torch.full((2 * nb,), ts[i], dtype=torch.long, device="cuda")
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        vv = ema(torch.cat([x, x]), tt, yc).float()
                    vc, vu = vv.chunk(2)
                    vg = vu + 4.0 * (vc - vu)
                    a, an = abar[ts[i]], abar[ts[i + 1]]
                    x0p = (a.sqrt() * x - (1 - a).sqrt() * vg).clamp(-1, 1)
                    eps = (x - a.sqrt() * x0p) / (1 - a).sqrt()
                    x = an.sqrt() * x0p + (1 - an).sqrt() * eps
                    del tt, vv, vc, vu, vg, a, an, x0p, eps
                stats = torch.cat([x.mean((0, 2, 3)), x.std((0, 2, 3))])
            stats.tolist()
            del x, yc, stats

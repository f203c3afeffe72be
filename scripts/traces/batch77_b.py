"""The seventy-seventh batch of held-out workloads for record.py, second half (the first is batch77.py): retail,
advertising and e-commerce, written in torch alone. An ad ranking and auction service (each request's user behaviour
sequence, profile and candidate ads with their bids uploaded as int32 on a side stream; a Deep Interest Network's
target attention of every candidate over the behaviours, ESMM-style click and conversion heads, quality-weighted eCPM
ranking, top slots and generalised second prices), retail demand forecasting (store-item daily sales drawn on the
device from hidden level, weekly and yearly seasonality, price elasticity, promotions and events, an encoder-decoder
transformer over drawn context lengths with static and calendar embeddings, quantile loss, weighted quantile loss and
interval coverage at evaluation points), a Thompson-sampling dynamic pricing simulation (thousands of products with
hidden log-linear demand, Bayesian linear regression posteriors updated by rank-one steps, posterior draws through
batched Cholesky factors, a price grid under inventory limits, and every two weeks a markdown plan optimised by
gradient ascent with an inventory penalty) and product matching fine-tuning over images and titles (a ViT image
encoder at drawn resolutions with interpolated position embeddings, a title transformer with key-padding masks, a
CLIP-style symmetric contrastive loss and a match classifier on in-batch hard negatives). Same conventions as the
earlier batches: nothing downloaded, data drawn at random on the device (or, for the ad service, from two reused pinned
host buffers), `rng` the workload's random.Random for every shape, count and sampled choice, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: request sizes,
context lengths, slot counts and iteration counts are fixed on the host, padding handled by masks multiplied in, no
boolean-mask indexing; losses, metrics, prices and auction results are read back only at logging points.
din_ad_auction_serve uses a side stream (uploads waited on by event, the tensors record_stream'ed); the others are
single-stream. The networks run under bf16 autocast; the pricing simulation is fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new77.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and for
which of them the CPU smoke run (RECORD_SMOKE=1) ran.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, mlp, randint

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- DIN ad ranking and auction service


class _DIN(_nn.Module):
    def __init__(self, n_ads, n_cats, n_adv, n_profile, d_id, d_side, att_hidden, hidden):
        super().__init__()
        self.ad, self.cat, self.adv = _nn.Embedding(n_ads, d_id), _nn.Embedding(n_cats, d_side), \
            _nn.Embedding(n_adv, d_side)
        self.profile = _nn.Embedding(n_profile, d_side)
        d = d_id + 2 * d_side
        self.att = _nn.Sequential(_nn.Linear(4 * d, att_hidden[0]), _nn.PReLU(),
                                  _nn.Linear(att_hidden[0], att_hidden[1]), _nn.PReLU(),
                                  _nn.Linear(att_hidden[1], 1))
        self.tower = mlp(4 * d_side + 3 * d, hidden, hidden // 2, layers=2, act=_nn.PReLU)
        self.ctr, self.cvr = _nn.Linear(hidden // 2, 1), _nn.Linear(hidden // 2, 1)

    def items(self, ad, cat, adv):
        return torch.cat([self.ad(ad), self.cat(cat), self.adv(adv)], -1)

    def forward(self, behav, bmask, cands, profile):
        """behav (L, d) one user's behaviours, bmask (L,), cands (N, d), profile (4,) ids: pCTR, pCVR (N,)."""
        n, length = cands.shape[0], behav.shape[0]
        c = cands[:, None].expand(n, length, -1)
        b = behav[None].expand(n, length, -1)
        w = self.att(torch.cat([c, b, c - b, c * b], -1))[..., 0] * bmask[None]
        interest = (w[..., None] * b).sum(1)
        prof = self.profile(profile).flatten()[None].expand(n, -1)
        h = self.tower(torch.cat([prof, interest, cands, behav.mean(0, keepdim=True).expand(n, -1)], -1))
        return torch.sigmoid(self.ctr(h)[:, 0].float()), torch.sigmoid(self.cvr(h)[:, 0].float())


@_workload("display-ad ranking and auction service with a Deep Interest Network (random init): 4,000-4,400 requests (drawn), each one user's behaviour sequence of 20-256 clicked items (drawn, padded to a multiple of 16 and masked) with 4 profile fields and 64-1,024 candidate ads (log-uniform) with categories, advertisers and integer bids, all int32 and uploaded on a side stream from two reused pinned host buffers one request ahead (waited on by event, record_stream'ed); ad ids (500,000), categories (3,000) and advertisers (50,000) embedded to 64 wide, a target-attention MLP (256-80-40-1, PReLU) of every candidate over every behaviour, weighted-sum pooling, a 2-layer PReLU tower of 200 and ESMM-style click and conversion heads under bf16 autocast; quality-weighted eCPM ranking, 3-8 slots (drawn), generalised second prices with a reserve; each request's slot winners, prices and pCTRs read back")
def din_ad_auction_serve(rng):
    n_ads, n_cats, n_adv, n_profile = _smoke(500_000, 300), _smoke(3000, 20), _smoke(50_000, 40), _smoke(1000, 20)
    model = _DIN(n_ads, n_cats, n_adv, n_profile, _smoke(32, 8), _smoke(16, 4), _smoke([80, 40], [8, 4]),
                 _smoke(200, 16)).cuda().eval()
    model.requires_grad_(False)
    max_l, max_n = _smoke(256, 16), _smoke(1024, 32)
    # layout of a host buffer: behaviour items, behaviour categories, candidate ads, categories, advertisers,
    # bids (in 1/1000 of a currency unit), profile (4)
    offs = [0, max_l, 2 * max_l, 2 * max_l + max_n, 2 * max_l + 2 * max_n, 2 * max_l + 3 * max_n,
            2 * max_l + 4 * max_n]
    size = offs[-1] + 4
    host = []
    for _ in range(2):
        buf = torch.empty(size, dtype=torch.int32)
        buf[:max_l] = torch.randint(0, n_ads, (max_l,), dtype=torch.int32)
        buf[max_l:2 * max_l] = torch.randint(0, n_cats, (max_l,), dtype=torch.int32)
        buf[offs[2]:offs[3]] = torch.randint(0, n_ads, (max_n,), dtype=torch.int32)
        buf[offs[3]:offs[4]] = torch.randint(0, n_cats, (max_n,), dtype=torch.int32)
        buf[offs[4]:offs[5]] = torch.randint(0, n_adv, (max_n,), dtype=torch.int32)
        buf[offs[5]:offs[6]] = torch.randint(200, 5000, (max_n,), dtype=torch.int32)
        buf[offs[6]:] = torch.randint(0, n_profile, (4,), dtype=torch.int32)
        host.append(buf.pin_memory())
    up = SideUploads(host)
    nreq = rng.randint(_smoke(4000, 3), _smoke(4400, 4))
    plan = []
    for _ in range(nreq):
        true_l = rng.randint(_smoke(20, 3), max_l)
        plan.append((true_l, -(-true_l // 16) * 16 if max_l >= 16 else true_l, _loguniform(rng, _smoke(64, 8), max_n),
                     rng.randint(3, 8)))

    def spans(i):
        _, pad_l, n, _ = plan[i]
        return (slice(0, pad_l), slice(max_l, max_l + pad_l), slice(offs[2], offs[2] + n),
                slice(offs[3], offs[3] + n), slice(offs[4], offs[4] + n), slice(offs[5], offs[5] + n),
                slice(offs[6], offs[6] + 4))

    reserve = 0.05
    nxt = up.upload(0, *spans(0))
    for i in range(nreq):
        true_l, pad_l, n, slots = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, *spans(i + 1))
        *parts, ev = item
        SideUploads.ready(ev, *parts)
        b_item, b_cat, c_ad, c_cat, c_adv, bid_raw, prof = parts
        with torch.no_grad():
            bmask = (torch.arange(pad_l, device="cuda") < true_l).float()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                behav = model.items(b_item.long(), b_cat.long(), (b_item.long() * 7919) % n_adv)
                cands = model.items(c_ad.long(), c_cat.long(), c_adv.long())
                pctr, pcvr = model(behav, bmask, cands, prof.long())
            bid = bid_raw.float() / 1000
            quality = pctr * (1 + 0.2 * pcvr)
            score = bid * quality
            k = min(slots + 1, n)
            top_s, top_i = score.topk(k)
            nxt_s = torch.cat([top_s[1:], torch.full((1,), reserve, device="cuda")])[:slots]
            win = top_i[:slots]
            price = torch.maximum(nxt_s / quality[win].clamp(min=1e-6), torch.full_like(nxt_s, reserve))
            price = torch.minimum(price, bid[win])
            out = torch.stack([win.float(), price, pctr[win], pcvr[win]], 1)
        out.tolist()
        del item, parts, b_item, b_cat, c_ad, c_cat, c_adv, bid_raw, prof, bmask, behav, cands, pctr, pcvr, bid
        del quality, score, top_s, top_i, nxt_s, win, price, out


# ---------------------------------------------------------------- retail demand quantile forecasting


class _XBlock(_nn.Module):
    """A pre-norm decoder block: self-attention, cross-attention to a memory, a GELU MLP."""

    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.n1, self.n2, self.n3 = _nn.LayerNorm(d), _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.proj = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.q, self.kv, self.o = _nn.Linear(d, d), _nn.Linear(d, 2 * d), _nn.Linear(d, d)
        self.fc1, self.fc2 = _nn.Linear(d, 4 * d), _nn.Linear(4 * d, d)

    def _split(self, t):
        return t.unflatten(-1, (self.h, -1)).transpose(1, 2)

    def forward(self, x, mem):
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        x = x + self.proj(_F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, t, d))
        k, v = self.kv(mem).chunk(2, -1)
        a = _F.scaled_dot_product_attention(self._split(self.q(self.n2(x))), self._split(k), self._split(v))
        x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(_F.gelu(self.fc1(self.n3(x))))


class _Forecaster(_nn.Module):
    def __init__(self, n_items, n_stores, n_depts, n_events, d, heads, enc_layers, dec_layers, quantiles):
        super().__init__()
        self.item, self.store, self.dept = _nn.Embedding(n_items, d), _nn.Embedding(n_stores, d), \
            _nn.Embedding(n_depts, d)
        self.dow, self.month, self.event = _nn.Embedding(7, d), _nn.Embedding(12, d), _nn.Embedding(n_events, d)
        self.obs = _nn.Linear(4, d)  # scaled sales, log price ratio, promotion, SNAP day
        self.known = _nn.Linear(3, d)  # log price ratio, promotion, SNAP day
        self.conv = _nn.Conv1d(d, d, 7, padding=6, groups=d)
        self.enc = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(enc_layers))
        self.dec = _nn.ModuleList(_XBlock(d, heads) for _ in range(dec_layers))
        self.pos = _nn.Embedding(512, d)
        self.norm, self.out = _nn.LayerNorm(d), _nn.Linear(d, quantiles)

    def forward(self, static, cal, cov, scaled, ctx):
        """static (B, 3) ids; cal (B, T, 3) day of week, month, event; cov (B, T, 3); scaled (B, ctx) sales."""
        b, t = cal.shape[:2]
        s = (self.item(static[:, 0]) + self.store(static[:, 1]) + self.dept(static[:, 2]))[:, None]
        c = self.dow(cal[..., 0]) + self.month(cal[..., 1]) + self.event(cal[..., 2]) + s \
            + self.pos(torch.arange(t, device=cal.device))
        h = self.obs(torch.cat([scaled[..., None], cov[:, :ctx]], -1)) + c[:, :ctx]
        h = h + self.conv(h.transpose(1, 2))[..., :ctx].transpose(1, 2)
        causal = torch.ones(ctx, ctx, dtype=torch.bool, device=cal.device).tril()
        for blk in self.enc:
            h = blk(h, mask=causal)
        g = self.known(cov[:, ctx:]) + c[:, ctx:]
        for blk in self.dec:
            g = blk(g, h)
        return self.out(self.norm(g)).float()


@_workload("retail demand forecasting training (random init, M5-like): 30,490 store-item series (3,049 items, 10 stores, 7 departments) whose daily sales are drawn on the device from hidden levels, weekly and yearly seasonality, price elasticities, promotions, SNAP days and events (Poisson counts); windows of 84-364 context days (drawn, a multiple of 7) and a 28-day horizon for 128-256 series a step (drawn), mean-scaled; static, calendar and event embeddings, a depthwise causal convolution, a 3-block causal transformer encoder over the context and a 2-block decoder over the horizon's known covariates with cross-attention (width 128, 4 heads), 3 quantiles (0.1, 0.5, 0.9) by pinball loss; AdamW with warmup and cosine decay, clipping, bf16 autocast, 330 steps; the loss read back every 20 steps and every 60 steps an evaluation of 2,048 series (chunks of 256, 364-day context) with the weighted quantile loss and the 80% interval's coverage read back")
def demand_quantile_forecast_train(rng):
    n_items, n_stores, n_depts, n_events = _smoke(3049, 20), 10, 7, 6
    n_series, horizon = n_items * n_stores, _smoke(28, 4)
    d, heads, enc_layers, dec_layers = _smoke(128, 16), _smoke(4, 2), _smoke(3, 1), _smoke(2, 1)
    qs = torch.tensor([0.1, 0.5, 0.9], device="cuda")
    item_dept = torch.randint(0, n_depts, (n_items,), device="cuda")
    level = torch.randn(n_series, device="cuda") * 1.0 + 0.3
    weekly_amp, yearly_amp = torch.rand(n_series, device="cuda") * 0.5, torch.rand(n_series, device="cuda") * 0.3
    phase = torch.rand(n_series, device="cuda") * 6.283
    elasticity = -(torch.rand(n_series, device="cuda") * 2 + 0.5)
    base_price = torch.rand(n_series, device="cuda") * 20 + 1
    event_day = torch.randint(0, n_events, (2200,), device="cuda") * (torch.rand(2200, device="cuda") < 0.05).long()
    event_lift = torch.tensor([1.0, 1.4, 0.6, 1.2, 1.8, 0.9], device="cuda")[:n_events]
    model = _Forecaster(n_items, n_stores, n_depts, n_events, d, heads, enc_layers, dec_layers, 3).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)

    def windows(b, ctx):
        sid = torch.randint(0, n_series, (b,), device="cuda")
        t = ctx + horizon
        day = torch.randint(0, 2200 - t, (b, 1), device="cuda") + torch.arange(t, device="cuda")[None]
        item, store = sid % n_items, sid // n_items
        static = torch.stack([item, store, item_dept[item]], 1)
        dow, month, ev = day % 7, (day // 30) % 12, event_day[day]
        promo = (torch.rand(b, t, device="cuda") < 0.08).float()
        snap = ((day % 30) < 10).float()
        price = base_price[sid, None] * (1 - 0.25 * promo) * (1 + 0.05 * torch.randn(b, 1, device="cuda"))
        logp = (price / base_price[sid, None]).log()
        rate = torch.exp(level[sid, None] + weekly_amp[sid, None] * torch.sin(6.283 * dow / 7 + phase[sid, None])
                         + yearly_amp[sid, None] * torch.sin(6.283 * day / 365) + elasticity[sid, None] * logp
                         + 0.15 * snap) * event_lift[ev]
        sales = torch.poisson(rate)
        scale = sales[:, :ctx].mean(1, keepdim=True) + 1
        cov = torch.stack([logp, promo, snap], -1)
        return static, torch.stack([dow, month, ev], -1), cov, sales[:, :ctx] / scale, sales[:, ctx:] / scale, scale

    def pinball(pred, y):
        diff = y[..., None] - pred
        return torch.maximum(qs * diff, (qs - 1) * diff)

    ctx_max = _smoke(364, 14)
    steps = _smoke(330, 3)
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = 1e-3 * min(1.0, (step + 1) / 25) * 0.5 * (1 + math.cos(math.pi * step / steps))
        model.train()
        b = rng.choice(_smoke([128, 160, 192, 256], [3, 4]))
        ctx = randint(rng, _smoke(84, 7), ctx_max, 7)
        static, cal, cov, hist, target, _scale = windows(b, ctx)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(static, cal, cov, hist, ctx)
        loss = pinball(pred, target).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.item()
        del static, cal, cov, hist, target, _scale, pred, loss
        if (step + 1) % _smoke(60, 2) == 0:
            model.eval()
            wql, cover, total = [], [], []
            with torch.no_grad():
                for _ in range(_smoke(8, 1)):
                    static, cal, cov, hist, target, scale = windows(_smoke(256, 4), ctx_max)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        pred = model(static, cal, cov, hist, ctx_max)
                    y, p = target * scale, pred * scale[..., None]
                    wql.append(pinball(p, y).sum((0, 1)))
                    total.append(y.abs().sum())
                    cover.append(((y >= p[..., 0]) & (y <= p[..., 2])).float().mean())
                    del static, cal, cov, hist, target, scale, pred, y, p
                wql = 2 * torch.stack(wql).sum(0) / torch.stack(total).sum()
                metrics = torch.cat([wql, torch.stack(cover).mean()[None]])
            metrics.tolist()
            del wql, cover, total, metrics


# ---------------------------------------------------------------- Thompson-sampling dynamic pricing simulation


@_workload("Thompson-sampling dynamic pricing simulation (fp32): 14 seasons of 91 days, each of 20,000-60,000 products (drawn) with hidden log-linear demand (base level, price elasticity, yearly seasonality, competitor price response) and per-product Bayesian linear regression posteriors over 4 coefficients; each day a posterior draw through batched 4 x 4 Cholesky factors, expected margin over a grid of 16 price multipliers capped by the inventory left for the season, the argmax price gathered, Poisson demand simulated and sales capped by inventory, a rank-one posterior update, and the oracle's margin under the true coefficients for regret; every 14 days a markdown plan over the next 14 days' log-prices optimised by 50 Adam steps of gradient ascent on expected margin with an inventory penalty, and replenishment orders from it; cumulative margin and regret read back every 7 days, the posterior error at the end of a season")
def thompson_pricing_sim(rng):
    seasons, days, grid_k, dim = _smoke(14, 1), _smoke(91, 15), _smoke(16, 4), 4
    grid = torch.linspace(0.7, 1.3, grid_k, device="cuda")
    plan_iters, plan_days = _smoke(50, 3), _smoke(14, 7)
    for season in range(seasons):
        p = rng.randint(_smoke(20000, 8), _smoke(60000, 16))
        day0 = rng.randint(0, 364)
        base = torch.rand(p, device="cuda") * 40 + 5
        cost = base * (0.4 + 0.3 * torch.rand(p, device="cuda"))
        truth = torch.stack([torch.randn(p, device="cuda") * 0.7 + 2.0, -(torch.rand(p, device="cuda") * 2 + 1),
                             torch.randn(p, device="cuda") * 0.3, torch.randn(p, device="cuda") * 0.5], 1)
        mu = torch.zeros(p, dim, device="cuda")
        mu[:, 0], mu[:, 1] = 1.5, -1.5
        cov = torch.eye(dim, device="cuda").repeat(p, 1, 1)
        noise = 0.25
        inventory = torch.rand(p, device="cuda") * 300 + 100
        margin_total = torch.zeros((), device="cuda")
        regret_total = torch.zeros((), device="cuda")
        eye = torch.eye(dim, device="cuda") * 1e-5
        for day in range(days):
            season_x = math.sin(2 * math.pi * (day0 + day) / 365)
            comp = torch.randn(p, device="cuda") * 0.1
            left = float(days - day)
            # features for every grid level: 1, log price ratio, seasonality, competitor log-ratio
            feats = torch.stack([torch.ones(p, grid_k, device="cuda"), grid.log()[None].expand(p, grid_k),
                                 torch.full((p, grid_k), season_x, device="cuda"),
                                 comp[:, None].expand(p, grid_k)], -1)
            chol = torch.linalg.cholesky(cov + eye)
            theta = mu + (chol @ torch.randn(p, dim, 1, device="cuda"))[..., 0]
            price = base[:, None] * grid[None]
            cap = (inventory / left * 1.5)[:, None]
            demand = torch.exp((feats * theta[:, None]).sum(-1)).clamp(max=1e4)
            value = (price - cost[:, None]) * torch.minimum(demand, cap)
            choice = value.argmax(1)
            x = feats.gather(1, choice[:, None, None].expand(p, 1, dim))[:, 0]
            true_rate = torch.exp((x * truth).sum(-1)).clamp(max=1e4)
            sales = torch.minimum(torch.poisson(true_rate), inventory)
            chosen_price = price.gather(1, choice[:, None])[:, 0]
            margin_total = margin_total + ((chosen_price - cost) * sales).sum()
            oracle = ((price - cost[:, None]) * torch.minimum(torch.exp((feats * truth[:, None]).sum(-1))
                                                              .clamp(max=1e4), cap)).amax(1)
            regret_total = regret_total + (oracle - (chosen_price - cost) * torch.minimum(true_rate, cap[:, 0])).sum()
            inventory = inventory - sales
            # rank-one Bayesian linear regression update on log(sales + 0.5)
            y = torch.log(sales + 0.5)
            sx = (cov @ x[..., None])[..., 0]
            denom = noise ** 2 + (x * sx).sum(-1, keepdim=True)
            resid = y[:, None] - (x * mu).sum(-1, keepdim=True)
            mu = mu + sx * resid / denom
            cov = cov - sx[:, :, None] * sx[:, None, :] / denom[..., None]
            del feats, chol, theta, price, cap, demand, value, choice, x, true_rate, sales, chosen_price, oracle
            del y, sx, denom, resid
            if day % 7 == 6:
                torch.stack([margin_total, regret_total, inventory.sum()]).tolist()
            if day % 14 == 0:
                # a markdown plan: log-price multipliers for the next plan_days days under the posterior mean
                logm = torch.zeros(p, plan_days, device="cuda", requires_grad=True)
                popt = torch.optim.Adam([logm], lr=0.03)
                seas = torch.sin(2 * math.pi * (day0 + day + torch.arange(plan_days, device="cuda")) / 365)
                m = mu.detach()
                for _ in range(plan_iters):
                    lm = logm.clamp(-0.36, 0.26)
                    dem = torch.exp(m[:, :1] + m[:, 1:2] * lm + m[:, 2:3] * seas[None]).clamp(max=1e4)
                    rev = ((base[:, None] * lm.exp() - cost[:, None]) * dem).sum(1)
                    over = _F.relu(dem.sum(1) - inventory)
                    obj = -(rev - 5.0 * over).sum() / p
                    popt.zero_grad(set_to_none=True)
                    obj.backward()
                    popt.step()
                    del lm, dem, rev, over, obj
                with torch.no_grad():
                    lm = logm.clamp(-0.36, 0.26)
                    planned = torch.exp(m[:, :1] + m[:, 1:2] * lm + m[:, 2:3] * seas[None]).sum(1)
                    order = _F.relu(planned * 1.1 - inventory).round()
                    inventory = inventory + order
                del logm, popt, seas, m, lm, planned, order
        err = (mu - truth).abs().mean(0)
        torch.cat([err, margin_total[None], regret_total[None]]).tolist()
        del base, cost, truth, mu, cov, inventory, margin_total, regret_total, err


# ---------------------------------------------------------------- product image-title matching


class _ViT(_nn.Module):
    def __init__(self, patch, d, heads, layers, base_res, out):
        super().__init__()
        self.patch, self.grid = patch, base_res // patch
        self.embed = _nn.Conv2d(3, d, patch, patch)
        self.cls = _nn.Parameter(torch.zeros(1, 1, d))
        self.pos = _nn.Parameter(torch.randn(1, self.grid * self.grid + 1, d) * 0.02)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm, self.proj = _nn.LayerNorm(d), _nn.Linear(d, out, bias=False)

    def forward(self, x):
        b, _, r, _ = x.shape
        g = r // self.patch
        pos = self.pos[:, 1:]
        if g != self.grid:
            pos = _F.interpolate(pos.reshape(1, self.grid, self.grid, -1).permute(0, 3, 1, 2), size=(g, g),
                                 mode="bicubic", align_corners=False).permute(0, 2, 3, 1).reshape(1, g * g, -1)
        h = self.embed(x).flatten(2).transpose(1, 2) + pos
        h = torch.cat([(self.cls + self.pos[:, :1]).expand(b, -1, -1), h], 1)
        for blk in self.blocks:
            h = blk(h)
        return self.proj(self.norm(h[:, 0]))


class _TitleEncoder(_nn.Module):
    def __init__(self, vocab, d, heads, layers, maxlen, out):
        super().__init__()
        self.emb, self.pos = _nn.Embedding(vocab, d, padding_idx=0), _nn.Embedding(maxlen, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm, self.proj = _nn.LayerNorm(d), _nn.Linear(d, out, bias=False)

    def forward(self, ids, keymask):
        h = self.emb(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
        mask = ((1 - keymask) * -1e4)[:, None, None, :].to(h.dtype)
        for blk in self.blocks:
            h = blk(h, mask=mask)
        h = self.norm(h)
        m = keymask[..., None].to(h.dtype)
        return self.proj((h * m).sum(1) / m.sum(1).clamp(min=1))


@_workload("product matching fine-tuning over images and titles (random init, a CLIP-style dual encoder with a match head): 64-160 product pairs a step (drawn, a multiple of 16) of photos at 160, 192 or 224 pixels (drawn, position embeddings bicubically interpolated from 224) through a ViT (patch 16, 8 pre-norm blocks, width 256, 8 heads) and titles of 16-48 tokens (drawn, per-title lengths under a key-padding mask, vocabulary 32,000) through a 6-block text transformer of width 256, both projected to 256 and L2-normalised; a symmetric contrastive loss with a learnable temperature plus a same-product classifier over the fused pair features on the positives and on each image's hardest in-batch non-matching title; AdamW with weight decay off for norms and biases, warmup and cosine decay, clipping, bf16 autocast, 180 steps; the loss read back every 10 steps and every 45 steps an evaluation of 512 pairs (chunks of 128 at 224) with image-to-title recall@1 and @5 and the match accuracy read back")
def product_image_title_match_finetune(rng):
    d, heads, out = _smoke(256, 16), _smoke(8, 2), _smoke(256, 16)
    vocab, maxlen, base_res, patch = _smoke(32000, 100), _smoke(48, 12), _smoke(224, 32), _smoke(16, 8)
    vit = _ViT(patch, d, heads, _smoke(8, 1), base_res, out).cuda()
    txt = _TitleEncoder(vocab, d, heads, _smoke(6, 1), maxlen, out).cuda()
    head = mlp(4 * out, _smoke(512, 16), 1, layers=2, act=_nn.GELU).cuda()
    logit_scale = torch.tensor(math.log(1 / 0.07), device="cuda", requires_grad=True)
    params = [(n, p) for m in (vit, txt, head) for n, p in m.named_parameters()]
    decay = [p for n, p in params if p.dim() >= 2 and "pos" not in n]
    no_decay = [p for n, p in params if not (p.dim() >= 2 and "pos" not in n)] + [logit_scale]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=2e-4, betas=(0.9, 0.98))
    resolutions = _smoke([160, 192, 224], [16, 32])

    def pairs(b, r, t):
        x = torch.randn(b, 3, r, r, device="cuda")
        lens = torch.randint(max(4, t // 3), t + 1, (b, 1), device="cuda")
        keymask = (torch.arange(t, device="cuda")[None] < lens).float()
        ids = torch.randint(1, vocab, (b, t), device="cuda") * keymask.long()
        return x, ids, keymask

    def fuse(i, t):
        return head(torch.cat([i, t, (i - t).abs(), i * t], -1))[:, 0].float()

    steps = _smoke(180, 3)
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = 2e-4 * min(1.0, (step + 1) / 12) * 0.5 * (1 + math.cos(math.pi * step / steps))
        vit.train(), txt.train(), head.train()
        b = randint(rng, _smoke(64, 4), _smoke(160, 8), _smoke(16, 4))
        r = rng.choice(resolutions)
        t = randint(rng, _smoke(16, 4), maxlen, 4)
        x, ids, keymask = pairs(b, r, t)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            ie = _F.normalize(vit(x).float(), dim=-1)
            te = _F.normalize(txt(ids, keymask).float(), dim=-1)
            sims = ie @ te.T
            logits = sims * logit_scale.clamp(max=math.log(100)).exp()
            labels = torch.arange(b, device="cuda")
            clip = (_F.cross_entropy(logits, labels) + _F.cross_entropy(logits.T, labels)) / 2
            hard = (sims.detach() - 4 * torch.eye(b, device="cuda")).argmax(1)
            match = torch.cat([fuse(ie, te), fuse(ie, te[hard])])
            target = torch.cat([torch.ones(b, device="cuda"), torch.zeros(b, device="cuda")])
            loss = clip + 0.5 * _F.binary_cross_entropy_with_logits(match, target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p for _, p in params] + [logit_scale], 1.0)
        opt.step()
        if step % 10 == 0:
            loss.item()
        del x, ids, keymask, ie, te, sims, logits, labels, clip, hard, match, target, loss
        if (step + 1) % _smoke(45, 2) == 0:
            vit.eval(), txt.eval(), head.eval()
            ies, tes = [], []
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for _ in range(_smoke(4, 1)):
                    x, ids, keymask = pairs(_smoke(128, 8), base_res, maxlen)
                    ies.append(_F.normalize(vit(x).float(), dim=-1))
                    tes.append(_F.normalize(txt(ids, keymask).float(), dim=-1))
                    del x, ids, keymask
                ie, te = torch.cat(ies), torch.cat(tes)
                sims = ie @ te.T
                rank = (sims > sims.diagonal()[:, None]).sum(1)
                acc = (fuse(ie, te) > 0).float().mean()
                metrics = torch.stack([(rank < 1).float().mean(), (rank < 5).float().mean(), acc])
            metrics.tolist()
            del ies, tes, ie, te, sims, rank, acc, metrics

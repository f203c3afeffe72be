"""The hundred-and-nineteenth batch of held-out workloads for record.py, second half (see batch119.py): snow, ice and
mountain environments, written in torch alone. A snow-cover tile service (a patch transformer over multispectral
satellite tiles of drawn resolutions with the normalised-difference snow index as an extra band, a 2-d position table
sliced to the grid, per-pixel snow, land and cloud logits by a linear patch decoder and pixel shuffle, snow and cloud
fractions per tile), ski-lift queue forecasting training (graph attention over the lift networks of ski resorts of
drawn sizes, a fixed number of slope-connected neighbours per lift drawn within its resort so that each softmax is
dense, resort pooling by index_add, per-lift waiting times and per-resort visitor counts), a snowfall downscaling
diffusion sampler (a 2-d U-Net denoiser conditioned on the coarse model field and the elevation, classifier-free
guidance in one doubled batch, DDIM with drawn batch sizes, resolutions, step counts and guidance scales per request)
and mountain-rescue drone search policy training (a convnet policy over probability-of-area maps, one move a round by
Gumbel-max under border masks, the map updated by the detection probability, an actor-critic with a learned value
baseline and discounted returns).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the tile service), `rng` the workload's random.Random for every shape, count and sampled choice,
sizes through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or
masked_fill; no boolean-mask indexing; results read back only at logging points or once per request.
snowcover_tile_vit_serve uploads its tiles on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, TimeResBlock, _sincos, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- snow-cover tile service (patch transformer)


class _SnowSegViT(_nn.Module):
    """16 px patches by a strided convolution over the bands and the snow index, a learned 2-d position table
    (max_grid x max_grid) sliced to the tile's grid, a day-of-year embedding from sine features, pre-norm blocks,
    a linear decoder to 16 x 16 pixels of class logits a patch, put in place by pixel shuffle."""

    def __init__(self, bands, d, heads, layers, max_grid, n_cls):
        super().__init__()
        self.patch = _nn.Conv2d(bands, d, 16, 16)
        self.pos = _nn.Parameter(torch.randn(max_grid, max_grid, d) * 0.02)
        self.doy = mlp(32, d, d, act=_nn.GELU)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.dec = _nn.Linear(d, n_cls * 256)
        self.n_cls = n_cls

    def forward(self, x, doy):
        t = self.patch(x)
        b, d, gh, gw = t.shape
        t = t.flatten(2).transpose(1, 2) + self.pos[:gh, :gw].reshape(1, gh * gw, d) + self.doy(doy)[:, None]
        for blk in self.blocks:
            t = blk(t)
        y = self.dec(self.norm(t)).transpose(1, 2).reshape(b, self.n_cls * 256, gh, gw)
        return _F.pixel_shuffle(y, 16).float()


@_workload("snow-cover tile serving (random init, a patch transformer segmenter): 1,300-1,350 requests (drawn) of 1-4 satellite tiles (drawn) of 256, 384 or 512 px (drawn per request) in 6 bands (blue, green, red, near infrared, two short-wave infrared), uint8 tiles uploaded on a side stream from two reused pinned host buffers (filled once, sized for 4 x 6 x 512^2) one request ahead (one span, through SideUploads.ahead), scaled on the device with the normalised-difference snow index added as a seventh band and a day of year (drawn per request) by sine features; 16 px patches, a learned 32 x 32 position table sliced to the tile's grid, 6 pre-norm blocks (width 256, 8 heads) under bf16 autocast, a linear decoder to 16 x 16 pixels of 3 classes (snow, snow-free land, cloud) a patch put in place by pixel shuffle; per tile the snow fraction of the cloud-free pixels, the cloud fraction, the agreement with the snow index above 0.4 and the mean snow and cloud probabilities; each request's results read back once")
def snowcover_tile_vit_serve(rng):
    bands, n_cls = 6, 3
    d, heads, layers = _smoke(256, 32), _smoke(8, 2), _smoke(6, 1)
    max_t, res_opts = _smoke(4, 2), _smoke([256, 384, 512], [32, 64])
    max_grid = max(res_opts) // 16
    model = _SnowSegViT(bands + 1, d, heads, layers, max_grid, n_cls).cuda().eval()
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_t * bands * max(res_opts) ** 2,), dtype=torch.uint8, generator=gen)
            .pin_memory() for _ in range(2)]
    up = SideUploads(host)

    nreq = rng.randint(_smoke(1300, 3), _smoke(1350, 4))
    plan = [(rng.randint(1, max_t), rng.choice(res_opts), rng.randint(1, 365)) for _ in range(nreq)]

    for (n, r, day), raw in up.ahead(plan, lambda p: (p[0] * bands * p[1] * p[1],)):
        with torch.no_grad():
            x = raw.view(n, bands, r, r).float() / 255.0
            ndsi = (x[:, 1] - x[:, 4]) / (x[:, 1] + x[:, 4]).clamp_min(1e-3)
            x = torch.cat([x, ndsi[:, None]], 1)
            doy = _sincos(torch.full((n,), day * 1000.0 / 365.0, device="cuda"), 32)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logit = model(x, doy)
            p = logit.softmax(1)
            snow, cloud = p[:, 0], p[:, 2]
            label = logit.argmax(1)
            clear = (label != 2).float()
            is_snow = (label == 0).float()
            frac = (is_snow * clear).sum((1, 2)) / clear.sum((1, 2)).clamp_min(1.0)
            agree = ((is_snow > 0.5) == (ndsi > 0.4)).float().mean((1, 2))
            out = torch.stack([frac, (label == 2).float().mean((1, 2)), agree, snow.mean((1, 2)),
                               cloud.mean((1, 2))], -1)
        out.tolist()
        del raw, x, ndsi, doy, logit, p, snow, cloud, label, clear, is_snow, frac, agree, out


# ---------------------------------------------------------------- ski-lift queue forecasting (graph attention)


class _LiftGraph(_nn.Module):
    """Per-lift features (an MLP over the flattened hourly history, lift-type embedding, static features), graph
    attention layers over a fixed number of neighbours per lift (a dense softmax over them), resort context by
    index_add pooling and index_select back; per-lift waiting-time quantiles and a wind-hold logit, per-resort log
    visitor rates."""

    def __init__(self, hours, n_ch, n_static, n_type, d, heads, layers, n_ahead):
        super().__init__()
        self.hist = mlp(hours * n_ch, 2 * d, d, act=_nn.GELU)
        self.static, self.lift_type = _nn.Linear(n_static, d), _nn.Embedding(n_type, d)
        self.h = heads
        self.q = _nn.ModuleList(_nn.Linear(d, d) for _ in range(layers))
        self.kv = _nn.ModuleList(_nn.Linear(d, 2 * d) for _ in range(layers))
        self.o = _nn.ModuleList(_nn.Linear(d, d) for _ in range(layers))
        self.n1 = _nn.ModuleList(_nn.LayerNorm(d) for _ in range(layers))
        self.n2 = _nn.ModuleList(_nn.LayerNorm(d) for _ in range(layers))
        self.ff = _nn.ModuleList(mlp(d, 2 * d, d, act=_nn.GELU) for _ in range(layers))
        self.ctx = _nn.Linear(d, d)
        self.wait = mlp(2 * d, d, n_ahead + 1, act=_nn.GELU)
        self.visit = mlp(d, d, 1, act=_nn.GELU)

    def forward(self, hist, static, kind, nbr, resort, n_resort, sizes):
        n, k = nbr.shape
        h = self.hist(hist.flatten(1)) + self.static(static) + self.lift_type(kind)
        dh = h.shape[-1] // self.h
        for q_, kv_, o_, n1, n2, ff in zip(self.q, self.kv, self.o, self.n1, self.n2, self.ff):
            z = n1(h)
            q = q_(z).view(n, self.h, dh)
            kk, v = kv_(z).index_select(0, nbr.flatten()).view(n, k, 2, self.h, dh).unbind(2)
            att = (torch.einsum("nhd,nkhd->nhk", q, kk) / math.sqrt(dh)).softmax(-1)
            h = h + o_(torch.einsum("nhk,nkhd->nhd", att, v).reshape(n, -1))
            h = h + ff(n2(h))
        pooled = h.new_zeros(n_resort, h.shape[-1]).index_add_(0, resort, h) / sizes[:, None].to(h.dtype)
        z = torch.cat([h, self.ctx(pooled).index_select(0, resort)], -1)
        out = self.wait(z).float()
        return out[:, :-1], out[:, -1], self.visit(pooled)[:, 0].float()


@_workload("ski-lift queue forecasting training (random init, graph attention over resort lift networks): 8-32 ski resorts a step (drawn) of 6-48 lifts each (drawn per resort; resorts past 768 lifts a step dropped), each lift with 24 hours of 8 hourly channels (arrivals, queue length, gate scans, wind, visibility, new snow, temperature, holiday flag), 6 static features and a lift type (of 5: gondola, chairlift, detachable chair, T-bar, carpet), drawn on the device; 8 slope-connected neighbours per lift drawn within its own resort (offsets and sizes gathered by index_select, so each attention softmax is dense over 8); an MLP history encoder and 5 graph-attention layers (width 192, 6 heads, neighbours' keys and values by index_select, pre-norm with a GELU MLP), resort context by index_add pooling (same dtype) and index_select back; waiting minutes for the next 4 hours per lift by a Huber loss, a wind hold by BCE and resort visitors by a Poisson likelihood; AdamW, clipping, bf16 autocast, 470 steps; the losses read back every 25 steps and every 94 steps a no-grad pass over 32 resorts of 24 lifts with the waiting-time mean absolute error and the visitor error read back")
def lift_queue_graph_attention_train(rng):
    hours, n_ch, n_static, n_type, n_ahead, k = 24, 8, 6, 5, 4, 8
    d, heads, layers = _smoke(192, 16), _smoke(6, 2), _smoke(5, 1)
    model = _LiftGraph(hours, n_ch, n_static, n_type, d, heads, layers, n_ahead).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    lo, hi, budget = _smoke(6, 2), _smoke(48, 6), _smoke(768, 16)

    def resorts(sizes):
        r, n = len(sizes), sum(sizes)
        sz = torch.tensor(sizes, device="cuda")
        resort = torch.repeat_interleave(torch.arange(r, device="cuda"), sz, output_size=n)
        offs = torch.cumsum(sz, 0) - sz
        base, size = offs.index_select(0, resort), sz.index_select(0, resort)
        nbr = base[:, None] + (torch.rand(n, k, device="cuda") * size[:, None]).long()
        hist = torch.rand(n, hours, n_ch, device="cuda")
        static = torch.randn(n, n_static, device="cuda")
        kind = torch.randint(0, n_type, (n,), device="cuda")
        wait = torch.rand(n, n_ahead, device="cuda") * 30.0
        hold = (torch.rand(n, device="cuda") < 0.1).float()
        visit = torch.poisson(sz.float() * 400.0)
        return hist, static, kind, nbr, resort, sz.float(), wait, hold, visit

    steps = _smoke(470, 3)
    for step in range(steps):
        model.train()
        sizes = [rng.randint(lo, hi) for _ in range(rng.randint(_smoke(8, 2), _smoke(32, 3)))]
        while sum(sizes) > budget:
            sizes.pop()
        hist, static, kind, nbr, resort, sz, wait, hold, visit = resorts(sizes)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            p_wait, p_hold, log_v = model(hist, static, kind, nbr, resort, len(sizes), sz)
        l_wait = _F.huber_loss(p_wait, wait, delta=5.0)
        l_hold = _F.binary_cross_entropy_with_logits(p_hold, hold)
        l_vis = _F.poisson_nll_loss(log_v + math.log(400.0), visit, log_input=True) / 400.0
        loss = l_wait + l_hold + l_vis
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 25 == 0:
            torch.stack([l_wait.detach(), l_hold.detach(), l_vis.detach()]).tolist()
        del hist, static, kind, nbr, resort, sz, wait, hold, visit, p_wait, p_hold, log_v, l_wait, l_hold, l_vis, loss
        if (step + 1) % _smoke(94, 2) == 0:
            model.eval()
            with torch.no_grad():
                sizes = [_smoke(24, 4)] * _smoke(32, 2)
                hist, static, kind, nbr, resort, sz, wait, hold, visit = resorts(sizes)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    p_wait, p_hold, log_v = model(hist, static, kind, nbr, resort, len(sizes), sz)
                out = torch.stack([(p_wait - wait).abs().mean(), (log_v.exp() * 400.0 - visit).abs().mean()])
            out.tolist()
            del hist, static, kind, nbr, resort, sz, wait, hold, visit, p_wait, p_hold, log_v, out


# ---------------------------------------------------------------- snowfall downscaling diffusion sampler


class _DownscaleUnet(_nn.Module):
    """A 2-d U-Net over the noisy fine field, the upsampled coarse field and the elevation: two conditioned
    residual blocks at full resolution, stride-2 convolutions down to 1/4 with one block a level and two at the
    bottom, nearest upsampling with skips up; the timestep's sine features through an MLP."""

    def __init__(self, widths, temb):
        super().__init__()
        c0, c1, c2 = widths
        self.temb = mlp(c0, temb, temb, act=_nn.SiLU)
        self.inp = _nn.Conv2d(3, c0, 3, 1, 1)
        self.e0 = TimeResBlock(c0, c0, temb)
        self.d1, self.e1 = _nn.Conv2d(c0, c0, 3, 2, 1), TimeResBlock(c0, c1, temb)
        self.d2, self.e2 = _nn.Conv2d(c1, c1, 3, 2, 1), TimeResBlock(c1, c2, temb)
        self.m1, self.m2 = TimeResBlock(c2, c2, temb), TimeResBlock(c2, c2, temb)
        self.u2 = TimeResBlock(c2 + c2, c1, temb)
        self.u1 = TimeResBlock(c1 + c1, c0, temb)
        self.u0 = TimeResBlock(c0 + c0, c0, temb)
        self.out = _nn.Sequential(_nn.GroupNorm(8, c0), _nn.SiLU(), _nn.Conv2d(c0, 1, 3, 1, 1))
        self.c0 = c0

    def forward(self, x, cond, t):
        te = self.temb(_sincos(t, self.c0))
        h0 = self.e0(self.inp(torch.cat([x, cond], 1)), te)
        h1 = self.e1(self.d1(h0), te)
        h2 = self.e2(self.d2(h1), te)
        m = self.m2(self.m1(h2, te), te)
        u = self.u2(torch.cat([m, h2], 1), te)
        u = self.u1(torch.cat([_F.interpolate(u, scale_factor=2.0, mode="nearest"), h1], 1), te)
        u = self.u0(torch.cat([_F.interpolate(u, scale_factor=2.0, mode="nearest"), h0], 1), te)
        return self.out(u)


@_workload("snowfall downscaling diffusion sampling (random init, a conditioned 2-d U-Net with classifier-free guidance): 90-95 requests (drawn) of 2-8 fields (drawn) at 64, 96 or 128 px (drawn per request), each conditioned on a coarse snowfall field at 1/8 drawn on the device and upsampled bilinearly and an elevation map; a U-Net (widths 64/128/192, conditioned residual blocks with group norm, stride-2 convolutions down to 1/4, two blocks at the bottom, nearest upsampling with skips) and a timestep MLP; 10-40 DDIM steps (drawn per request) over a 1,000-step linear schedule with a guidance scale of 1-4 (drawn per request), the conditional and unconditional (coarse field zeroed) passes in one doubled batch under bf16 autocast; per field the total and the maximum snowfall, the fraction above 0.5 and the mean absolute difference from the coarse field; each request's results read back once")
def snow_downscale_ddim_sample(rng):
    widths, temb = _smoke([64, 128, 192], [8, 16, 16]), _smoke(256, 32)
    model = _DownscaleUnet(widths, temb).cuda().eval()
    model.requires_grad_(False)
    betas = torch.linspace(1e-4, 0.02, 1000, dtype=torch.float64)
    abar = torch.cumprod(1 - betas, 0).tolist()
    res_opts = _smoke([64, 96, 128], [16, 32])
    nreq = rng.randint(_smoke(90, 2), _smoke(95, 3))
    for _ in range(nreq):
        b, r = rng.randint(_smoke(2, 1), _smoke(8, 2)), rng.choice(res_opts)
        n_steps, g = rng.randint(_smoke(10, 2), _smoke(40, 3)), rng.uniform(1.0, 4.0)
        ts = [int(round(999 * (1 - i / n_steps))) for i in range(n_steps)] + [-1]
        with torch.no_grad():
            coarse = _F.interpolate(torch.rand(b, 1, r // 8, r // 8, device="cuda"), size=(r, r), mode="bilinear",
                                    align_corners=False)
            dem = torch.rand(b, 1, r, r, device="cuda")
            cond = torch.cat([torch.cat([coarse, dem], 1), torch.cat([torch.zeros_like(coarse), dem], 1)], 0)
            x = torch.randn(b, 1, r, r, device="cuda")
            for t, t_next in zip(ts[:-1], ts[1:]):
                a, a_next = abar[t], (abar[t_next] if t_next >= 0 else 1.0)
                tt = torch.full((2 * b,), float(t), device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    eps = model(torch.cat([x, x], 0), cond, tt).float()
                e_c, e_u = eps.chunk(2, 0)
                e = e_u + g * (e_c - e_u)
                x0 = ((x - math.sqrt(1 - a) * e) / math.sqrt(a)).clamp(-3.0, 3.0)
                x = math.sqrt(a_next) * x0 + math.sqrt(1 - a_next) * e
                del tt, eps, e_c, e_u, e, x0
            snow = x.clamp_min(0.0)
            out = torch.stack([snow.sum((1, 2, 3)), snow.amax((1, 2, 3)), (snow > 0.5).float().mean((1, 2, 3)),
                               (snow - coarse).abs().mean((1, 2, 3))], -1)
        out.tolist()
        del coarse, dem, cond, x, snow, out


# ---------------------------------------------------------------- mountain-rescue drone search policy (actor-critic)


class _SearchPolicy(_nn.Module):
    """A convnet over the probability-of-area map, the searched-cells map and the drone's position plane, global
    pooling and the first layer's features at the drone's cell; move logits (stay, north, south, east, west) and a
    value."""

    def __init__(self, c, d):
        super().__init__()
        self.c1 = _nn.Conv2d(4, c, 3, 1, 1)
        self.c2 = _nn.Conv2d(c, 2 * c, 3, 2, 1)
        self.c3 = _nn.Conv2d(2 * c, 2 * c, 3, 2, 1)
        self.head = mlp(3 * c + 2, d, 6, act=_nn.ReLU)

    def forward(self, obs, pos, frac):
        f1 = _F.relu(self.c1(obs))
        f3 = _F.relu(self.c3(_F.relu(self.c2(f1))))
        at = f1.flatten(2).gather(2, pos[:, None, None].expand(-1, f1.shape[1], 1))[..., 0]
        out = self.head(torch.cat([f3.mean((2, 3)), at, frac.to(at.dtype)], -1)).float()
        return out[:, :5], out[:, 5]


@_workload("mountain-rescue drone search policy training (random init, a convnet policy by advantage actor-critic): 64-256 search episodes a step (drawn) over grids of 24-48 cells (drawn per step, a multiple of 8) with a probability-of-area map (a random field at 1/8 upsampled bilinearly and normalised by a softmax) drawn on the device and a start cell drawn per episode; 12-24 rounds (drawn per step) of a 3-layer convnet (32/64/64 channels, stride 2 twice) over the map, the searched cells, the drone's position plane and the terrain, global pooling, the first layer's features at the drone's cell by gather and the remaining probability and searched share, move logits (stay and 4 moves, off-grid moves masked_fill'ed) sampled by Gumbel-max, the position updated by index_select of the move's offsets and clamping, the reward the found probability at the new cell times a detection probability (0.5-0.9, drawn per step), the map updated by a one-hot scatter; discounted returns (0.97), a learned value baseline, policy-gradient, value and entropy losses; Adam, clipping, bf16 autocast, 160 steps; the losses and the found probability read back every 10 steps and every 40 steps a greedy no-grad rollout of 256 episodes on 48 cells for 24 rounds with the found probability read back")
def rescue_drone_search_policy_train(rng):
    c, d = _smoke(32, 8), _smoke(256, 16)
    model = _SearchPolicy(c, d).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    moves = torch.tensor([[0, 0], [-1, 0], [1, 0], [0, 1], [0, -1]], device="cuda")
    lo, hi = _smoke(24, 8), _smoke(48, 16)

    def episodes(b, g):
        field = _F.interpolate(torch.randn(b, 1, g // 8, g // 8, device="cuda") * 2.0, size=(g, g),
                               mode="bilinear", align_corners=False)
        poa = field.flatten(1).softmax(-1)
        terrain = torch.rand(b, g * g, device="cuda")
        pos = torch.randint(0, g * g, (b,), device="cuda")
        return poa, terrain, pos

    def rollout(poa, terrain, pos, g, rounds, pd, greedy):
        b = poa.shape[0]
        searched = torch.zeros_like(poa)
        logps, values, ents, rewards = [], [], [], []
        for _ in range(rounds):
            onehot = _F.one_hot(pos, g * g).float()
            obs = torch.stack([poa / poa.amax(-1, keepdim=True), searched, onehot, terrain], 1).view(b, 4, g, g)
            frac = torch.stack([poa.sum(-1), searched.mean(-1)], -1)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logit, value = model(obs, pos, frac)
            row, col = pos // g, pos % g
            ok = torch.stack([torch.ones_like(row, dtype=torch.bool), row > 0, row < g - 1, col < g - 1, col > 0], -1)
            logit = logit.masked_fill(~ok, -1e4)
            if greedy:
                act = logit.argmax(-1)
            else:
                gumbel = -torch.log(-torch.log(torch.rand_like(logit).clamp(1e-6, 1 - 1e-6)))
                act = (logit + gumbel).argmax(-1)
            lp = logit.log_softmax(-1)
            logps.append(lp.gather(1, act[:, None])[:, 0])
            ents.append(-(lp.exp() * lp).sum(-1))
            values.append(value)
            step = moves.index_select(0, act)
            row, col = (row + step[:, 0]).clamp(0, g - 1), (col + step[:, 1]).clamp(0, g - 1)
            pos = row * g + col
            cell = _F.one_hot(pos, g * g).float()
            found = (poa * cell).sum(-1) * pd
            rewards.append(found)
            poa = poa * (1 - pd * cell)
            searched = torch.maximum(searched, cell)
        return logps, values, ents, rewards

    steps = _smoke(160, 3)
    for step in range(steps):
        model.train()
        b, g = rng.randint(_smoke(64, 2), _smoke(256, 4)), rng.randint(lo // 8, hi // 8) * 8
        rounds, pd = rng.randint(_smoke(12, 2), _smoke(24, 4)), rng.uniform(0.5, 0.9)
        poa, terrain, pos = episodes(b, g)
        logps, values, ents, rewards = rollout(poa, terrain, pos, g, rounds, pd, False)
        ret, rets = torch.zeros_like(rewards[0]), []
        for rwd in reversed(rewards):
            ret = rwd + 0.97 * ret
            rets.append(ret)
        ret_t = torch.stack(rets[::-1], 1) * 100.0
        val_t, lp_t, ent_t = torch.stack(values, 1), torch.stack(logps, 1), torch.stack(ents, 1)
        adv = (ret_t - val_t).detach()
        l_pi = -(adv * lp_t).mean()
        l_v = _F.mse_loss(val_t, ret_t)
        l_ent = -ent_t.mean()
        loss = l_pi + 0.5 * l_v + 0.01 * l_ent
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_pi.detach(), l_v.detach(), -l_ent.detach(), torch.stack(rewards).sum(0).mean()]).tolist()
        del poa, terrain, pos, logps, values, ents, rewards, ret, rets, ret_t, val_t, lp_t, ent_t, adv
        del l_pi, l_v, l_ent, loss
        if (step + 1) % _smoke(40, 2) == 0:
            model.eval()
            with torch.no_grad():
                poa, terrain, pos = episodes(_smoke(256, 3), hi)
                _, _, _, rewards = rollout(poa, terrain, pos, hi, _smoke(24, 3), 0.7, True)
                found = torch.stack(rewards).sum(0).mean()
            found.item()
            del poa, terrain, pos, rewards, found

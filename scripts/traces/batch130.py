"""The hundred-and-thirtieth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py
to batch129_b.py are): bakeries, confectionery and pastry, written in torch alone, first half. A baked-goods defect
inspection service on the line (a residual U-Net over conveyor camera frames of drawn sizes, a defect class per
pixel at 1/4 resolution, each frame's defect areas, product count by peak finding, browning index and reject flag),
tunnel oven control training (a policy MLP trained by backpropagation through a differentiable simulation of the
loaves' radial heat conduction, crust moisture and browning in the oven's zones, unrolled tick by tick), shop demand
forecasting training (N-BEATS residual MLP stacks over each shop and product's daily sales history of a drawn
lookback, masked, with quantile forecasts by a pinball loss) and a cake piping pattern sampler (a small U-Net with
time residual blocks and a self-attention bottleneck, rectified-flow Euler sampling with classifier-free guidance
on the cake style and icing colour, then each image's palette coverage, symmetry and edge density).
Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the inspection service), `rng` the workload's random.Random for every shape, count and sampled
choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's
value: lengths, resolutions and batch sizes are fixed on the host, padding handled by masks or by torch.where /
masked_fill, no boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
bakery_line_defect_unet_serve uploads its frames on a side stream (two reused pinned host buffers, one request
ahead, through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16
autocast (the oven simulation itself in fp32). Every embedding and position table is sized for the longest padded
length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new130.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and
for the CPU smoke run (RECORD_SMOKE=1).
"""

import math

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, SideUploads, TimeResBlock, _mha, _sincos, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- baked-goods defect inspection (residual U-Net)


class _UpCat(_nn.Module):
    """Bilinear upsampling to the skip's size, the skip concatenated, two 3x3 convolutions with batch norm and
    ReLU."""

    def __init__(self, cin, cskip, cout):
        super().__init__()
        self.conv = _nn.Sequential(_nn.Conv2d(cin + cskip, cout, 3, 1, 1, bias=False), _nn.BatchNorm2d(cout),
                                   _nn.ReLU(), _nn.Conv2d(cout, cout, 3, 1, 1, bias=False), _nn.BatchNorm2d(cout),
                                   _nn.ReLU())

    def forward(self, x, skip):
        x = _F.interpolate(x, size=skip.shape[-2:], mode="bilinear", align_corners=False)
        return self.conv(torch.cat([x, skip.to(x.dtype)], 1))


class _BakeUNet(_nn.Module):
    """A strided stem to 1/2, three strided residual stages to 1/4, 1/8 and 1/16 (two blocks each), two
    upsamplings with skips back to 1/4, a 1x1 to the classes."""

    def __init__(self, widths, n_cls):
        super().__init__()
        c0, c1, c2, c3 = widths
        self.stem = _nn.Sequential(_nn.Conv2d(3, c0, 3, 2, 1, bias=False), _nn.BatchNorm2d(c0), _nn.ReLU())
        self.s1 = _nn.Sequential(BasicResBlock(c0, c1, 2), BasicResBlock(c1, c1, 1))
        self.s2 = _nn.Sequential(BasicResBlock(c1, c2, 2), BasicResBlock(c2, c2, 1))
        self.s3 = _nn.Sequential(BasicResBlock(c2, c3, 2), BasicResBlock(c3, c3, 1))
        self.u2, self.u1 = _UpCat(c3, c2, c2), _UpCat(c2, c1, c1)
        self.out = _nn.Conv2d(c1, n_cls, 1)

    def forward(self, x):
        f1 = self.s1(self.stem(x))
        f2 = self.s2(f1)
        return self.out(self.u1(self.u2(self.s3(f2), f2), f1)).float()


@_workload("baked-goods defect inspection serving on the line (random init, a residual U-Net over conveyor camera frames): 1,840-1,880 requests (drawn) of 1-6 frames (drawn) at 256 x 384, 320 x 480 or 384 x 576 px (drawn per request), uint8 RGB frames uploaded on a side stream from two reused pinned host buffers (filled once, sized for 6 x 3 x 384 x 576) one request ahead (one span, through SideUploads.ahead), normalised on the device; a strided stem (24 channels), three strided stages of two residual blocks each (48, 96, 160 channels) and two bilinear upsamplings with skips (two 3x3 convolutions each) back to 1/4 resolution, a 1x1 to 6 classes per pixel (background, good bake, burnt, underbaked, cracked, misshapen) by softmax, in eval mode under bf16 autocast; per frame each class's soft and hard (one_hot of the argmax) area, the product count by peak finding (max pooling 9 x 9, equality and a threshold), the browning index from the frame's luminance (average pooled to 1/4) weighted by the product probability, the defect fraction among product pixels and a reject flag over 2 %; each request's figures read back once")
def bakery_line_defect_unet_serve(rng):
    widths, n_cls = _smoke([24, 48, 96, 160], [8, 8, 16, 16]), 6
    max_n = _smoke(6, 2)
    res_opts = _smoke([(256, 384), (320, 480), (384, 576)], [(32, 48), (48, 64)])
    max_px = max(h * w for h, w in res_opts)
    model = _BakeUNet(widths, n_cls).cuda().eval()
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_n * 3 * max_px,), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1) * 255.0
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1) * 255.0
    luma = torch.tensor([0.299, 0.587, 0.114], device="cuda").view(1, 3, 1, 1)

    nreq = rng.randint(_smoke(1840, 3), _smoke(1880, 4))
    plan = [(rng.randint(1, max_n), *rng.choice(res_opts)) for _ in range(nreq)]

    for (n, hh, ww), raw in up.ahead(plan, lambda p: (p[0] * 3 * p[1] * p[2],)):
        with torch.no_grad():
            img = raw.view(n, 3, hh, ww).float()
            x = (img - mean) / std
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logit = model(x)
            p = logit.softmax(1)
            soft = p.mean((2, 3))
            hard = _F.one_hot(p.argmax(1), n_cls).float().mean((1, 2))
            prod = 1.0 - p[:, 0]
            peak = (prod == _F.max_pool2d(prod[:, None], 9, 1, 4)[:, 0]) & (prod > 0.5)
            count = peak.float().sum((1, 2))
            y = (_F.avg_pool2d(img, 4) * luma).sum(1) / 255.0
            brown = ((1.0 - y) * prod).sum((1, 2)) / prod.sum((1, 2)).clamp_min(1e-6)
            defect = p[:, 2:].sum(1)
            frac = (defect * prod).sum((1, 2)) / prod.sum((1, 2)).clamp_min(1e-6)
            reject = (frac > 0.02).float()
            res = torch.cat([soft.flatten(), hard.flatten(), count, brown, frac, reject])
        res.tolist()
        del raw, img, x, logit, p, soft, hard, prod, peak, count, y, brown, defect, frac, reject, res


# ---------------------------------------------------------------- tunnel oven control (differentiable simulation)


class _OvenPolicy(_nn.Module):
    """An MLP with layer norms over the loaf's observed state, the zone and the product (a table); the zone's air
    temperature setpoint, steam and fan speed, each by a sigmoid."""

    def __init__(self, n_obs, n_zone, n_prod, hidden):
        super().__init__()
        self.prod, self.zone = _nn.Embedding(n_prod, 32), _nn.Embedding(n_zone, 16)
        self.net = mlp(n_obs + 48, hidden, 3, layers=4, act=_nn.SiLU, norm=True)

    def forward(self, obs, prod, zone):
        z = torch.cat([obs, self.prod(prod), self.zone(zone).expand(obs.shape[0], -1)], -1)
        return torch.sigmoid(self.net(z).float())


@_workload("tunnel oven control training (random init, a policy MLP trained by backpropagation through a differentiable oven simulation): 256-1,024 loaves a step (drawn) of 8 products (baguette, sourdough, brioche, rye, ciabatta, croissant, pan loaf, focaccia; drawn on the device with each product's target crust colour and core temperature), each loaf 24 radial nodes of dough with a drawn thermal diffusivity (in grid units, stable for the explicit scheme); an oven of 6 zones crossed in 36-60 ticks (drawn per step); each tick the policy (4 linear layers of 256 with layer norms and SiLU over 12 observed features, a product table and a zone table, under bf16 autocast) sets the zone's air temperature (160-280 C), steam and fan speed; in fp32 the air follows the setpoint by a first-order lag, the surface flux from a fan-dependent coefficient minus evaporation, the radial conduction by an explicit finite-difference step with a ghost node at the crust, the crust moisture and a sigmoid browning rate; the loss at the end: core temperature short of its target, crust colour error, moisture loss, energy and setpoint changes; Adam, clipping, 28 steps of backpropagation through the whole rollout; the losses read back every 4 steps and every 14 steps a no-grad rollout of 2,048 loaves over 60 ticks with the pass rate read back")
def tunnel_oven_bptt_control_train(rng):
    n_prod, n_zone, n_obs, r_nodes = 8, 6, 12, _smoke(24, 6)
    hidden = _smoke(256, 16)
    policy = _OvenPolicy(n_obs, n_zone, n_prod, hidden).cuda()
    opt = torch.optim.Adam(policy.parameters(), lr=5e-4)
    steps, every = _smoke(28, 3), _smoke(14, 2)
    tgt_color = torch.tensor([0.75, 0.8, 0.6, 0.85, 0.7, 0.65, 0.55, 0.6], device="cuda")
    tgt_core = torch.tensor([96.0, 97.0, 93.0, 98.0, 96.0, 92.0, 95.0, 94.0], device="cuda")
    zones = torch.arange(n_zone, device="cuda")

    def rollout(b, ticks):
        prod = torch.randint(0, n_prod, (b,), device="cuda")
        coef = 0.1 + 0.3 * torch.rand(b, 1, device="cuda")
        temp = 25.0 + 3.0 * torch.randn(b, r_nodes, device="cuda")
        air = torch.full((b, 1), 200.0, device="cuda")
        moist = 0.9 + 0.05 * torch.rand(b, 1, device="cuda")
        color = torch.zeros(b, 1, device="cuda")
        set_prev = torch.full((b, 1), 0.5, device="cuda")
        energy, smooth = 0.0, 0.0
        for t in range(ticks):
            zi = t * n_zone // ticks
            obs = torch.cat([temp[:, -1:] / 200.0, temp[:, :1] / 100.0, temp[:, r_nodes // 2:r_nodes // 2 + 1] / 100.0,
                             air / 250.0, moist, color, coef, torch.full_like(coef, t / ticks),
                             temp.mean(-1, keepdim=True) / 100.0, (temp[:, -1:] - temp[:, -2:-1]) / 10.0,
                             set_prev, torch.full_like(coef, zi / n_zone)], -1)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                act = policy(obs, prod, zones[zi:zi + 1])
            setp, steam, fan = act[:, :1], act[:, 1:2], act[:, 2:3]
            air = air + 0.3 * (160.0 + 120.0 * setp - air)
            h = 0.02 + 0.08 * fan
            evap = 0.6 * moist * (1.0 - 0.7 * steam) * torch.sigmoid((temp[:, -1:] - 100.0) / 5.0)
            flux = h * (air - temp[:, -1:]) - 8.0 * evap
            ghost = temp[:, -1:] + flux
            inner = torch.cat([temp[:, 1:2], temp[:, :-1]], -1)
            outer = torch.cat([temp[:, 1:], ghost], -1)
            temp = temp + coef * (inner + outer - 2.0 * temp)
            moist = (moist - 0.02 * evap).clamp_min(0.0)
            color = color + 0.06 * torch.sigmoid((temp[:, -1:] - 150.0) / 10.0) * (1.0 - color) * (1.0 - moist)
            energy = energy + (setp * (0.5 + 0.5 * fan)).mean()
            smooth = smooth + (setp - set_prev).pow(2).mean()
            set_prev = setp
        core = temp[:, 0]
        l_core = _F.relu(tgt_core[prod] - core).pow(2).mean() / 100.0
        l_color = (color[:, 0] - tgt_color[prod]).pow(2).mean()
        l_moist = (0.9 - moist[:, 0]).clamp_min(0.0).mean()
        passed = ((core >= tgt_core[prod] - 2.0) & ((color[:, 0] - tgt_color[prod]).abs() < 0.1)).float().mean()
        return l_core, l_color, l_moist, energy / ticks, smooth / ticks, passed

    for step in range(steps):
        b, ticks = rng.randint(_smoke(256, 4), _smoke(1024, 8)), rng.randint(_smoke(36, 4), _smoke(60, 6))
        l_core, l_color, l_moist, l_en, l_sm, _ = rollout(b, ticks)
        loss = l_core + 4.0 * l_color + l_moist + 0.05 * l_en + 0.5 * l_sm
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        opt.step()
        if step % 4 == 0:
            torch.stack([l_core.detach(), l_color.detach(), l_moist.detach(), l_en.detach()]).tolist()
        del l_core, l_color, l_moist, l_en, l_sm, loss
        if (step + 1) % every == 0:
            with torch.no_grad():
                passed = rollout(_smoke(2048, 8), _smoke(60, 6))[-1]
            passed.item()
            del passed


# ---------------------------------------------------------------- shop demand forecasting (N-BEATS)


class _NBeatsBlock(_nn.Module):
    """Four linear layers with ReLU over the residual history, its mask and the covariates; the backcast over the
    lookback and the forecast's quantiles over the horizon."""

    def __init__(self, din, width, lookback, horizon, n_q):
        super().__init__()
        self.fc = mlp(din, width, width, layers=4)
        self.back, self.fore = _nn.Linear(width, lookback), _nn.Linear(width, horizon * n_q)

    def forward(self, z):
        h = torch.relu(self.fc(z))
        return self.back(h), self.fore(h)


class _NBeats(_nn.Module):
    """Shop and product tables, the horizon's covariates, stacks of _NBeatsBlock with the backcast taken off the
    masked residual after each block and the forecasts summed."""

    def __init__(self, n_shop, n_prod, lookback, horizon, n_cov, n_q, width, blocks):
        super().__init__()
        self.shop, self.prod = _nn.Embedding(n_shop, 32), _nn.Embedding(n_prod, 16)
        self.dow = _nn.Embedding(7, 8)
        din = 2 * lookback + 48 + horizon * (n_cov + 8)
        self.blocks = _nn.ModuleList(_NBeatsBlock(din, width, lookback, horizon, n_q) for _ in range(blocks))
        self.horizon, self.n_q = horizon, n_q

    def forward(self, hist, keep, shop, prod, fdow, cov):
        b = hist.shape[0]
        stat = torch.cat([self.shop(shop), self.prod(prod), self.dow(fdow).flatten(1), cov.flatten(1)], -1)
        res, fc = hist, 0.0
        for blk in self.blocks:
            back, fore = blk(torch.cat([res, keep, stat], -1))
            res = (res - back) * keep
            fc = fc + fore
        return fc.float().view(b, self.horizon, self.n_q)


@_workload("bakery chain demand forecasting training (random init, N-BEATS residual MLP stacks): 256-2,048 series a step (drawn), each one product (of 40: loaves, rolls, croissants, cakes, ...) in one shop (of 120), a daily sales history with a lookback of 28, 56 or 84 days (drawn per step, left-padded to 84 under a mask) and a horizon of 14 days; sales drawn on the device from a per-series level, a weekly pattern from a random start weekday and a promotion lift, scaled by the history's masked mean; shop, product and the horizon's weekday tables and 3 covariates a day (temperature, rain, holiday); 12 blocks of 4 linear layers of 512 with ReLU, each block's backcast taken off the masked residual and its forecast of 3 quantiles (0.1, 0.5, 0.9) over the 14 days summed; a pinball loss; AdamW on a one-cycle schedule, clipping, bf16 autocast, 310 steps; the loss read back every 20 steps and every 62 steps a no-grad pass over 4,096 series of 84 days with the weighted absolute percentage error and the 80 % interval coverage read back")
def shop_demand_nbeats_train(rng):
    n_shop, n_prod, max_lb, horizon, n_cov = _smoke(120, 8), _smoke(40, 6), 84, 14, 3
    qs = torch.tensor([0.1, 0.5, 0.9], device="cuda")
    width, blocks = _smoke(512, 16), _smoke(12, 2)
    model = _NBeats(n_shop, n_prod, max_lb, horizon, n_cov, len(qs), width, blocks).cuda()
    steps, every = _smoke(310, 3), _smoke(62, 2)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-3, total_steps=steps + 1)

    def series(b, lookback):
        level = torch.exp(torch.randn(b, 1, device="cuda") * 0.8 + 2.5)
        start = torch.randint(0, 7, (b, 1), device="cuda")
        dow = (start + torch.arange(max_lb + horizon, device="cuda")[None]) % 7
        weekly = 1.0 + 0.3 * torch.randn(b, 7, device="cuda").clamp(-2.0, 2.0)
        cov = torch.randn(b, max_lb + horizon, n_cov, device="cuda")
        lift = 1.0 + 0.15 * cov[..., 2].clamp_min(0.0)
        sales = (level * weekly.gather(1, dow) * lift * (0.6 + 0.8 * torch.rand_like(lift))).clamp_min(0.0).floor()
        keep = keep_mask([lookback] * b, max_lb).flip(-1).float()
        hist, fut = sales[:, :max_lb] * keep, sales[:, max_lb:]
        scale = hist.sum(-1, keepdim=True) / keep.sum(-1, keepdim=True) + 1.0
        shop = torch.randint(0, n_shop, (b,), device="cuda")
        prod = torch.randint(0, n_prod, (b,), device="cuda")
        return (hist / scale, keep, shop, prod, dow[:, max_lb:], cov[:, max_lb:]), fut, scale

    def pinball(pred, fut, scale):
        err = (fut / scale)[..., None] - pred
        return torch.maximum(qs * err, (qs - 1.0) * err).mean()

    for step in range(steps):
        model.train()
        b, lookback = rng.randint(_smoke(256, 4), _smoke(2048, 8)), rng.choice([28, 56, 84])
        inp, fut, scale = series(b, lookback)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(*inp)
        loss = pinball(pred, fut, scale)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            loss.item()
        del inp, fut, scale, pred, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                inp, fut, scale = series(_smoke(4096, 8), max_lb)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pred = model(*inp) * scale[..., None]
                wape = (pred[..., 1] - fut).abs().sum() / fut.sum().clamp_min(1.0)
                cover = ((fut >= pred[..., 0]) & (fut <= pred[..., 2])).float().mean()
            torch.stack([wape, cover]).tolist()
            del inp, fut, scale, pred, wape, cover


# ---------------------------------------------------------------- cake piping patterns (U-Net, rectified flow)


class _AttnMid(_nn.Module):
    """Group norm and multi-head self-attention over the bottleneck's positions, residual."""

    def __init__(self, c, heads):
        super().__init__()
        self.norm, self.qkv, self.out, self.h = _nn.GroupNorm(8, c), _nn.Conv2d(c, 3 * c, 1), _nn.Conv2d(c, c, 1), heads

    def forward(self, x):
        b, c, hh, ww = x.shape
        q, k, v = self.qkv(self.norm(x)).flatten(2).transpose(1, 2).chunk(3, -1)
        a = _mha(q, k, v, self.h).transpose(1, 2).reshape(b, c, hh, ww)
        return x + self.out(a)


class _PipingUNet(_nn.Module):
    """Two downsamplings and two upsamplings with skips, TimeResBlocks at each level, self-attention in the
    bottleneck; the time by sine features, the style and icing colour tables (their last rows the null condition)
    added to the time embedding; the predicted velocity."""

    def __init__(self, widths, n_style, n_color, heads):
        super().__init__()
        c0, c1, c2 = widths
        te = 4 * c0
        self.c0 = c0
        self.t_mlp = mlp(c0, te, te, act=_nn.SiLU)
        self.style, self.color = _nn.Embedding(n_style + 1, te), _nn.Embedding(n_color + 1, te)
        self.inp = _nn.Conv2d(3, c0, 3, 1, 1)
        self.d0, self.down0 = TimeResBlock(c0, c0, te), _nn.Conv2d(c0, c0, 3, 2, 1)
        self.d1, self.down1 = TimeResBlock(c0, c1, te), _nn.Conv2d(c1, c1, 3, 2, 1)
        self.m1, self.attn, self.m2 = TimeResBlock(c1, c2, te), _AttnMid(c2, heads), TimeResBlock(c2, c2, te)
        self.u1, self.u0 = TimeResBlock(c2 + c1, c1, te), TimeResBlock(c1 + c0, c0, te)
        self.norm, self.out = _nn.GroupNorm(8, c0), _nn.Conv2d(c0, 3, 3, 1, 1)

    def forward(self, x, t, style, color):
        te = self.t_mlp(_sincos(t * 1000.0, self.c0)) + self.style(style) + self.color(color)
        h0 = self.d0(self.inp(x), te)
        h1 = self.d1(self.down0(h0), te)
        h = self.m2(self.attn(self.m1(self.down1(h1), te)), te)
        h = self.u1(torch.cat([_F.interpolate(h, scale_factor=2.0, mode="nearest"), h1], 1), te)
        h = self.u0(torch.cat([_F.interpolate(h, scale_factor=2.0, mode="nearest"), h0], 1), te)
        return self.out(_F.silu(self.norm(h))).float()


@_workload("cake piping pattern sampling (random init, a U-Net with rectified-flow Euler sampling and classifier-free guidance): 94-98 requests (drawn) of 4-16 images (drawn) of 32 x 32, 48 x 48 or 64 x 64 px (drawn per request) conditioned on a cake style (of 16: rosettes, basketweave, lace, drop strings, ruffles, ...) and an icing colour (of 12), both drawn per image; a U-Net (96, 192, 256 channels) of time residual blocks with group norm at three levels, 4-head self-attention in the bottleneck, the time by sine features, the style and colour tables (each with a null row) added to the time embedding, in eval mode under bf16 autocast; 12-32 Euler steps (drawn per request) from noise along a shifted time schedule (shift of 1-3, drawn per request), each on the conditional and the null-conditioned batch together, guided with a scale of 2-6 (drawn per request); then each image's palette coverage (nearest of 12 piping colours per pixel by cdist and argmin, one_hot counts), its mirror and 90-degree rotational symmetry errors, and the edge density by Sobel convolutions; each request's figures read back once")
def cake_piping_flow_sample(rng):
    widths, heads = _smoke([96, 192, 256], [16, 16, 16]), _smoke(4, 2)
    n_style, n_color = 16, 12
    res_opts = _smoke([32, 48, 64], [8, 16])
    model = _PipingUNet(widths, n_style, n_color, heads).cuda().eval()
    model.requires_grad_(False)
    palette = torch.rand(n_color, 3, device="cuda") * 2.0 - 1.0
    sob = torch.tensor([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]], device="cuda")
    sobel = torch.stack([sob, sob.t()])[:, None]

    nreq = rng.randint(_smoke(94, 2), _smoke(98, 3))
    for _ in range(nreq):
        n, res = rng.randint(_smoke(4, 1), _smoke(16, 3)), rng.choice(res_opts)
        n_steps, shift, scale = rng.randint(_smoke(12, 2), _smoke(32, 3)), rng.uniform(1.0, 3.0), rng.uniform(2.0, 6.0)
        ts = [i / n_steps for i in range(n_steps, -1, -1)]
        ts = [shift * t / (1.0 + (shift - 1.0) * t) for t in ts]
        with torch.no_grad():
            style = torch.randint(0, n_style, (n,), device="cuda")
            color = torch.randint(0, n_color, (n,), device="cuda")
            style2 = torch.cat([style, torch.full_like(style, n_style)])
            color2 = torch.cat([color, torch.full_like(color, n_color)])
            x = torch.randn(n, 3, res, res, device="cuda")
            for t, t_next in zip(ts[:-1], ts[1:]):
                tt = torch.full((2 * n,), t, device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    v = model(torch.cat([x, x]), tt, style2, color2)
                vc, vu = v.chunk(2)
                x = x + (t_next - t) * (vu + scale * (vc - vu))
                del tt, v, vc, vu
            img = x.clamp(-1.0, 1.0)
            pix = img.flatten(2).transpose(1, 2)
            near = torch.cdist(pix, palette[None].expand(n, -1, -1)).argmin(-1)
            cover = _F.one_hot(near, n_color).float().mean(1)
            mirror = (img - img.flip(-1)).abs().mean((1, 2, 3))
            rot = (img - img.rot90(1, (2, 3))).abs().mean((1, 2, 3))
            grey = img.mean(1, keepdim=True)
            edge = _F.conv2d(grey, sobel, padding=1).pow(2).sum(1).sqrt()
            dens = (edge > 0.5).float().mean((1, 2))
            out = torch.cat([cover.flatten(), mirror, rot, dens])
        out.tolist()
        del style, color, style2, color2, x, img, pix, near, cover, mirror, rot, grey, edge, dens, out

"""The hundred-and-twenty-first batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch119_b.py are): cycling, bike sharing and micromobility, written in torch alone, first half. Docking-station demand
forecasting training (a dilated causal temporal convolution network over each station's hourly history of drawn
length, a station embedding, pickups and returns for the next day by a Poisson likelihood), e-scooter rebalancing
policy training (a recurrent policy written out round by round over city zones of drawn counts, a pick-up and a
drop-off zone a round by Gumbel-max, the fleet moved by one-hot arithmetic, an actor-critic with a learned value
baseline), a cyclist and helmet detection service (a residual convnet with a small feature pyramid and centre-point
heads over camera frames of drawn resolutions, peaks by max-pooling and top-k, helmet compliance per frame) and e-bike
battery range fine-tuning (a patch transformer over ride telemetry of drawn durations with its patch embedding and
lower blocks frozen, remaining range by a pinball loss on three quantiles and the battery's state of health).
Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths,
resolutions and batch sizes are fixed on the host, padding handled by masks or by torch.where / masked_fill, no
boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
cyclist_helmet_detect_serve uploads its frames on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new121.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and
for the CPU smoke run (RECORD_SMOKE=1).
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


# ---------------------------------------------------------------- docking-station demand forecasting (TCN)


class _CausalBlock(_nn.Module):
    """Two dilated causal 1-d convolutions (left padding) with GELU and a residual connection."""

    def __init__(self, ch, dil):
        super().__init__()
        self.pad = 2 * dil
        self.c1 = _nn.Conv1d(ch, ch, 3, 1, 0, dilation=dil)
        self.c2 = _nn.Conv1d(ch, ch, 3, 1, 0, dilation=dil)
        self.norm = _nn.GroupNorm(8, ch)

    def forward(self, x):
        h = _F.gelu(self.c1(_F.pad(x, (self.pad, 0))))
        h = self.c2(_F.pad(h, (self.pad, 0)))
        return _F.gelu(self.norm(x + h))


class _DockTcn(_nn.Module):
    """A 1x1 input convolution, dilated causal blocks, the last hour's features with a station embedding and an
    hour-of-week embedding, an MLP to log-rates of pickups and returns for each hour ahead."""

    def __init__(self, n_ch, width, dils, n_station, horizon):
        super().__init__()
        self.inp = _nn.Conv1d(n_ch, width, 1)
        self.blocks = _nn.Sequential(*[_CausalBlock(width, d) for d in dils])
        self.station, self.how = _nn.Embedding(n_station, width), _nn.Embedding(168, width)
        self.head = mlp(3 * width, 2 * width, 2 * horizon, act=_nn.GELU)
        self.horizon = horizon

    def forward(self, x, station, how):
        h = self.blocks(self.inp(x))
        z = torch.cat([h[:, :, -1], h.mean(-1), self.station(station) + self.how(how)], -1)
        return self.head(z).float().view(-1, 2, self.horizon)


@_workload("docking-station demand forecasting training (random init, a dilated causal temporal convolution network): 64-256 stations a step (drawn, from a table of 1,200), each with 72-336 hours of history (drawn per step, a multiple of 24) in 10 hourly channels (pickups, returns, bikes available, docks free, temperature, rain, wind, holiday, event, daylight) drawn on the device, a station id and an hour of week (of 168); a 1x1 input convolution to 128 channels and 7 residual blocks of two dilated causal convolutions (kernel 3, dilations 1-64, left padding, group norm), the last hour's and the mean features with station and hour-of-week embeddings through an MLP to log-rates of pickups and returns for each of the next 24 hours; a Poisson likelihood against counts drawn by torch.poisson; AdamW on a cosine schedule, clipping, bf16 autocast, 850 steps; the loss read back every 20 steps and every 170 steps a no-grad pass over 256 stations of 336 hours with the mean absolute error of both counts read back")
def dock_demand_tcn_train(rng):
    n_ch, n_station, horizon = 10, _smoke(1200, 16), 24
    width = _smoke(128, 16)
    dils = _smoke([1, 2, 4, 8, 16, 32, 64], [1, 2])
    model = _DockTcn(n_ch, width, dils, n_station, horizon).cuda()
    steps = _smoke(850, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    lo, hi = _smoke(72, 24), _smoke(336, 48)

    def stations(b, hours):
        x = torch.randn(b, n_ch, hours, device="cuda")
        station = torch.randint(0, n_station, (b,), device="cuda")
        how = torch.randint(0, 168, (b,), device="cuda")
        rate = torch.rand(b, 2, horizon, device="cuda") * 6.0
        return x, station, how, torch.poisson(rate)

    for step in range(steps):
        model.train()
        b, hours = rng.randint(_smoke(64, 2), _smoke(256, 4)), rng.randint(lo // 24, hi // 24) * 24
        x, station, how, y = stations(b, hours)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            log_rate = model(x, station, how)
        loss = _F.poisson_nll_loss(log_rate, y, log_input=True)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            loss.detach().item()
        del x, station, how, y, log_rate, loss
        if (step + 1) % _smoke(170, 2) == 0:
            model.eval()
            with torch.no_grad():
                x, station, how, y = stations(_smoke(256, 3), hi)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    log_rate = model(x, station, how)
                out = (log_rate.exp() - y).abs().mean((0, 2))
            out.tolist()
            del x, station, how, y, log_rate, out


# ---------------------------------------------------------------- e-scooter rebalancing policy (recurrent actor-critic)


class _RebalancePolicy(_nn.Module):
    """Zone features through an MLP, mean-pooled with the truck's hidden state into a GRU cell written out with
    linear gates; pick-up and drop-off zone logits by dot products of two query projections of the hidden state
    with the zone encodings; a value head."""

    def __init__(self, n_feat, d):
        super().__init__()
        self.zone = mlp(n_feat, d, d, act=_nn.GELU)
        self.x2h, self.h2h = _nn.Linear(2 * d, 3 * d), _nn.Linear(d, 3 * d)
        self.q_pick, self.q_drop = _nn.Linear(d, d), _nn.Linear(2 * d, d)
        self.value = mlp(d, d, 1, act=_nn.GELU)
        self.d = d

    def encode(self, feat, h):
        z = self.zone(feat)
        xr, xz, xn = self.x2h(torch.cat([z.mean(1), z.amax(1)], -1)).chunk(3, -1)
        hr, hz, hn = self.h2h(h).chunk(3, -1)
        r, u = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
        h = (1 - u) * torch.tanh(xn + r * hn) + u * h
        pick = (z @ self.q_pick(h)[:, :, None])[..., 0] / math.sqrt(self.d)
        return z, h, pick.float(), self.value(h)[:, 0].float()

    def drop(self, z, h, zp):
        return (z @ self.q_drop(torch.cat([h, zp], -1))[:, :, None])[..., 0].float() / math.sqrt(self.d)


@_workload("e-scooter rebalancing policy training (random init, a recurrent actor-critic written out round by round): 48-192 city episodes a step (drawn) of 16-64 zones (drawn per step, a multiple of 8) with zone coordinates, scooter counts, low-battery share, and hourly demand drawn on the device; 10-20 rounds (drawn per step), each an MLP zone encoder (6 features: scooters, low-battery share, demand, coordinates, round) of width 192, mean and max pooling into a GRU cell written out with linear gates (width 192), a pick-up zone by Gumbel-max over dot-product logits (empty zones masked_fill'ed), a drop-off zone by Gumbel-max given the pick-up zone's encoding (the pick-up zone masked), up to 8 scooters moved by one-hot arithmetic, the reward the demand served (a minimum of scooters and demand, averaged over zones) minus a distance cost; discounted returns (0.95), a learned value baseline, policy-gradient, value and entropy losses; Adam, clipping, bf16 autocast, 100 steps; the losses and the served demand read back every 10 steps and every 25 steps a greedy no-grad rollout of 192 episodes of 64 zones for 20 rounds with the served demand read back")
def scooter_rebalance_policy_train(rng):
    n_feat, d, cap = 6, _smoke(192, 16), 8.0
    model = _RebalancePolicy(n_feat, d).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    lo, hi = _smoke(16, 8), _smoke(64, 16)

    def cities(b, z):
        xy = torch.rand(b, z, 2, device="cuda")
        count = torch.poisson(torch.full((b, z), 6.0, device="cuda"))
        low = torch.rand(b, z, device="cuda") * 0.4
        demand = torch.poisson(torch.rand(b, z, device="cuda") * 10.0)
        return xy, count, low, demand

    def gumbel(logit):
        return -torch.log(-torch.log(torch.rand_like(logit).clamp(1e-6, 1 - 1e-6)))

    def rollout(xy, count, low, demand, rounds, greedy):
        b, z = count.shape
        h = xy.new_zeros(b, d)
        logps, values, ents, rewards = [], [], [], []
        for t in range(rounds):
            feat = torch.cat([torch.stack([count / 10.0, low, demand / 10.0], -1), xy,
                              torch.full((b, z, 1), t / rounds, device="cuda")], -1)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                zenc, h, pick_logit, value = model.encode(feat, h)
            pick_logit = pick_logit.masked_fill(count < 1, -1e4)
            pick = pick_logit.argmax(-1) if greedy else (pick_logit + gumbel(pick_logit)).argmax(-1)
            zp = zenc.gather(1, pick[:, None, None].expand(-1, 1, zenc.shape[-1]))[:, 0]
            with torch.autocast("cuda", dtype=torch.bfloat16):
                drop_logit = model.drop(zenc, h, zp)
            oh_p = _F.one_hot(pick, z).float()
            drop_logit = drop_logit.masked_fill(oh_p > 0, -1e4)
            drop = drop_logit.argmax(-1) if greedy else (drop_logit + gumbel(drop_logit)).argmax(-1)
            oh_d = _F.one_hot(drop, z).float()
            lp_p, lp_d = pick_logit.log_softmax(-1), drop_logit.log_softmax(-1)
            logps.append((lp_p * oh_p).sum(-1) + (lp_d * oh_d).sum(-1))
            ents.append(-(lp_p.exp() * lp_p).sum(-1) - (lp_d.exp() * lp_d).sum(-1))
            values.append(value)
            moved = torch.minimum((count * oh_p).sum(-1), torch.full_like(value, cap))
            count = count + moved[:, None] * (oh_d - oh_p)
            dist = ((xy * oh_p[..., None]).sum(1) - (xy * oh_d[..., None]).sum(1)).norm(dim=-1)
            rewards.append(torch.minimum(count, demand).sum(-1) / z - 0.5 * dist)
            h = h.float()
        return logps, values, ents, rewards

    steps = _smoke(100, 3)
    for step in range(steps):
        model.train()
        b, z = rng.randint(_smoke(48, 2), _smoke(192, 4)), rng.randint(lo // 8, hi // 8) * 8
        rounds = rng.randint(_smoke(10, 2), _smoke(20, 3))
        xy, count, low, demand = cities(b, z)
        logps, values, ents, rewards = rollout(xy, count, low, demand, rounds, False)
        ret, rets = torch.zeros_like(rewards[0]), []
        for rwd in reversed(rewards):
            ret = rwd + 0.95 * ret
            rets.append(ret)
        ret_t = torch.stack(rets[::-1], 1)
        val_t, lp_t, ent_t = torch.stack(values, 1), torch.stack(logps, 1), torch.stack(ents, 1)
        adv = (ret_t - val_t).detach()
        l_pi, l_v, l_ent = -(adv * lp_t).mean(), _F.mse_loss(val_t, ret_t), -ent_t.mean()
        loss = l_pi + 0.5 * l_v + 0.01 * l_ent
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_pi.detach(), l_v.detach(), -l_ent.detach(), torch.stack(rewards).sum(0).mean()]).tolist()
        del xy, count, low, demand, logps, values, ents, rewards, ret, rets, ret_t, val_t, lp_t, ent_t, adv
        del l_pi, l_v, l_ent, loss
        if (step + 1) % _smoke(25, 2) == 0:
            model.eval()
            with torch.no_grad():
                xy, count, low, demand = cities(_smoke(192, 3), hi)
                _, _, _, rewards = rollout(xy, count, low, demand, _smoke(20, 3), True)
                served = torch.stack(rewards).sum(0).mean()
            served.item()
            del xy, count, low, demand, rewards, served


# ---------------------------------------------------------------- cyclist and helmet detection service (centre points)


class _CentreDet(_nn.Module):
    """A residual convnet to 1/16 (stride-2 stem and residual blocks of stride 2), a small feature pyramid back to
    1/4 (1x1 lateral convolutions, nearest upsampling), centre heatmap, box-size and offset heads."""

    def __init__(self, widths, n_cls, fpn):
        super().__init__()
        c0, c1, c2, c3 = widths
        self.stem = _nn.Sequential(_nn.Conv2d(3, c0, 3, 2, 1, bias=False), _nn.BatchNorm2d(c0), _nn.ReLU())
        self.s1 = _nn.Sequential(BasicResBlock(c0, c1, 2), BasicResBlock(c1, c1, 1))
        self.s2 = _nn.Sequential(BasicResBlock(c1, c2, 2), BasicResBlock(c2, c2, 1))
        self.s3 = _nn.Sequential(BasicResBlock(c2, c3, 2), BasicResBlock(c3, c3, 1))
        self.l1, self.l2, self.l3 = _nn.Conv2d(c1, fpn, 1), _nn.Conv2d(c2, fpn, 1), _nn.Conv2d(c3, fpn, 1)
        self.smooth = _nn.Sequential(_nn.Conv2d(fpn, fpn, 3, 1, 1), _nn.ReLU())
        self.heat = _nn.Sequential(_nn.Conv2d(fpn, fpn, 3, 1, 1), _nn.ReLU(), _nn.Conv2d(fpn, n_cls, 1))
        self.box = _nn.Sequential(_nn.Conv2d(fpn, fpn, 3, 1, 1), _nn.ReLU(), _nn.Conv2d(fpn, 4, 1))

    def forward(self, x):
        f1 = self.s1(self.stem(x))
        f2 = self.s2(f1)
        f3 = self.s3(f2)
        p = self.l2(f2) + _F.interpolate(self.l3(f3), scale_factor=2.0, mode="nearest")
        p = self.smooth(self.l1(f1) + _F.interpolate(p, scale_factor=2.0, mode="nearest"))
        return self.heat(p).float(), self.box(p).float()


@_workload("cyclist and helmet detection serving (random init, a centre-point detector): 1,830-1,900 requests (drawn) of 1-6 street-camera frames (drawn) of 320, 384, 448 or 512 px (drawn per request), uint8 RGB frames uploaded on a side stream from two reused pinned host buffers (filled once, sized for 6 x 3 x 512^2) one request ahead (one span, through SideUploads.ahead), normalised on the device in channels-last; a residual convnet (3x3 stride-2 stem of 32, two residual blocks each at 64, 128 and 192 channels, stride 2 at the first of each) and a feature pyramid of 96 channels back to 1/4 under bf16 autocast, centre heatmaps for 4 classes (cyclist, e-scooter rider, helmeted head, bare head) and box size and offset heads; peaks by 3x3 max-pooling, the 64 best by top-k per frame, boxes gathered at them; per frame the number of cyclists and scooter riders above 0.3, the helmet compliance (helmeted over all heads, score-weighted) and the mean box area of the kept cyclists; each request's counts, compliance and areas with the top-64 cyclist and scooter-rider boxes and scores read back once")
def cyclist_helmet_detect_serve(rng):
    widths, fpn, n_cls, top = _smoke([32, 64, 128, 192], [8, 8, 16, 16]), _smoke(96, 8), 4, _smoke(64, 8)
    max_n, res_opts = _smoke(6, 2), _smoke([320, 384, 448, 512], [64, 96])
    model = _CentreDet(widths, n_cls, fpn).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_n * 3 * max(res_opts) ** 2,), dtype=torch.uint8, generator=gen)
            .pin_memory() for _ in range(2)]
    up = SideUploads(host)
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1) * 255.0
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1) * 255.0

    nreq = rng.randint(_smoke(1830, 3), _smoke(1900, 4))
    plan = [(rng.randint(1, max_n), rng.choice(res_opts)) for _ in range(nreq)]

    for (n, r), raw in up.ahead(plan, lambda p: (p[0] * 3 * p[1] * p[1],)):
        with torch.no_grad():
            x = ((raw.view(n, 3, r, r).float() - mean) / std).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                heat, box = model(x)
            score = torch.sigmoid(heat)
            peak = torch.where(score == _F.max_pool2d(score, 3, 1, 1), score, 0.0)
            w = peak.shape[-1]
            best, idx = peak.flatten(2).topk(top, -1)
            cell = idx.flatten(1)
            boxes = box.flatten(2).gather(2, cell[:, None].expand(-1, 4, -1)).view(n, 4, n_cls, top)
            cx = (cell % w).float().view(n, n_cls, top) + boxes[:, 2].sigmoid()
            cy = (cell // w).float().view(n, n_cls, top) + boxes[:, 3].sigmoid()
            size = boxes[:, :2].exp()
            xyxy = torch.stack([cx - size[:, 0] / 2, cy - size[:, 1] / 2, cx + size[:, 0] / 2, cy + size[:, 1] / 2],
                               -1) * 4.0
            keep = (best > 0.3).float()
            counts = keep.sum(-1)
            heads = (best[:, 2:] * keep[:, 2:]).sum(-1)
            comply = heads[:, 0] / heads.sum(-1).clamp_min(1e-6)
            area = ((size[:, 0] * size[:, 1])[:, 0] * keep[:, 0]).sum(-1) / counts[:, 0].clamp_min(1.0) * 16.0
            out = torch.cat([counts[:, :2], comply[:, None], area[:, None]], -1)
            res = torch.cat([out.flatten(), xyxy[:, :2].flatten(), best[:, :2].flatten()])
        res.tolist()
        del raw, x, heat, box, score, peak, best, idx, cell, boxes, cx, cy, size, xyxy, keep, counts, heads, comply
        del area, out, res


# ---------------------------------------------------------------- e-bike battery range fine-tuning (patch transformer)


class _RangeNet(_nn.Module):
    """Telemetry patches of 16 one-second samples by a strided 1-d convolution, a position table over patches, a
    class token with bike-model, assist-level and static-feature embeddings, pre-norm blocks under the patch mask;
    remaining-range quantiles, energy per kilometre and state of health from the class token and the masked mean."""

    def __init__(self, n_ch, d, heads, layers, max_patch, n_model, n_assist, n_static):
        super().__init__()
        self.patch = _nn.Conv1d(n_ch, d, 16, 16)
        self.pos = _nn.Embedding(max_patch, d)
        self.cls = _nn.Parameter(torch.zeros(1, 1, d))
        self.model, self.assist = _nn.Embedding(n_model, d), _nn.Embedding(n_assist, d)
        self.static = _nn.Linear(n_static, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.head = mlp(2 * d, d, 5, act=_nn.GELU)

    def forward(self, x, keep, bike, assist, static):
        t = self.patch(x).transpose(1, 2)
        b, n, _ = t.shape
        t = t + self.pos(torch.arange(n, device=x.device))[None]
        c = self.cls.expand(b, -1, -1) + (self.model(bike) + self.assist(assist) + self.static(static))[:, None]
        z = torch.cat([c.to(t.dtype), t], 1)
        mask = torch.cat([torch.ones(b, 1, dtype=torch.bool, device=x.device), keep], 1)[:, None, None, :]
        for blk in self.blocks:
            z = blk(z, mask=mask)
        z = self.norm(z)
        kf = keep[..., None].to(z.dtype)
        pooled = (z[:, 1:] * kf).sum(1) / kf.sum(1).clamp_min(1.0)
        return self.head(torch.cat([z[:, 0], pooled], -1)).float()


@_workload("e-bike battery range fine-tuning (random init standing in for a pretrained telemetry transformer): 32-128 rides a step (drawn), each of 256-2,048 one-second samples (drawn per ride, padded to the step's longest rounded up to a multiple of 128) in 9 channels (speed, cadence, rider torque, motor power, battery voltage and current, slope, altitude, temperature) drawn on the device with padded samples zeroed, a bike model (of 40), an assist level (of 5) and 4 static features (battery capacity, cycle count, rider and cargo weight, tyre pressure); 16-sample patches by a strided convolution (a 128-row patch position table), a class token, 8 pre-norm blocks (width 256, 8 heads) under the patch mask, of which the patch convolution, the position table and the lower 4 blocks are frozen; the remaining range by a pinball loss on 3 quantiles (0.1, 0.5, 0.9), the energy per kilometre by a Huber loss and the state of health by MSE from the class token and the masked mean; AdamW on the unfrozen parameters with a warm-up, clipping, bf16 autocast, 390 steps; the losses read back every 20 steps and every 78 steps a no-grad pass over 128 rides of 2,048 samples with the median's absolute error and the 0.1-0.9 interval coverage read back")
def ebike_range_transformer_finetune(rng):
    n_ch, n_model, n_assist, n_static = 9, 40, 5, 4
    d, heads, layers = _smoke(256, 32), _smoke(8, 2), _smoke(8, 2)
    max_len = _smoke(2048, 256)
    max_patch = max_len // 16
    model = _RangeNet(n_ch, d, heads, layers, max_patch, n_model, n_assist, n_static).cuda()
    frozen = [model.patch, model.pos] + list(model.blocks[:layers // 2])
    for m in frozen:
        m.requires_grad_(False)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=2e-4, weight_decay=0.05)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 20))
    qs = torch.tensor([0.1, 0.5, 0.9], device="cuda")

    def rides(lengths, n_pad):
        b = len(lengths)
        keep_s = keep_mask(lengths, n_pad)
        x = torch.randn(b, n_ch, n_pad, device="cuda") * keep_s[:, None]
        keep = keep_mask([-(-n // 16) for n in lengths], n_pad // 16)
        bike = torch.randint(0, n_model, (b,), device="cuda")
        assist = torch.randint(0, n_assist, (b,), device="cuda")
        static = torch.randn(b, n_static, device="cuda")
        rng_km = torch.rand(b, device="cuda") * 80.0
        wh_km = torch.rand(b, device="cuda") * 10.0 + 5.0
        soh = torch.rand(b, device="cuda") * 0.3 + 0.7
        return x, keep, bike, assist, static, rng_km, wh_km, soh

    def losses(out, rng_km, wh_km, soh):
        err = rng_km[:, None] - out[:, :3] * 40.0
        pin = torch.maximum(qs * err, (qs - 1) * err).mean()
        return pin, _F.huber_loss(out[:, 3] * 5.0 + 10.0, wh_km), _F.mse_loss(torch.sigmoid(out[:, 4]), soh)

    steps = _smoke(390, 3)
    for step in range(steps):
        model.train()
        for m in frozen:
            m.eval()
        b = rng.randint(_smoke(32, 2), _smoke(128, 4))
        lengths = [rng.randint(_smoke(256, 32), max_len) for _ in range(b)]
        n_pad = min(max_len, -(-max(lengths) // 128) * 128)
        x, keep, bike, assist, static, rng_km, wh_km, soh = rides(lengths, n_pad)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(x, keep, bike, assist, static)
        l_pin, l_wh, l_soh = losses(out, rng_km, wh_km, soh)
        loss = l_pin + l_wh + 10.0 * l_soh
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            torch.stack([l_pin.detach(), l_wh.detach(), l_soh.detach()]).tolist()
        del x, keep, bike, assist, static, rng_km, wh_km, soh, out, l_pin, l_wh, l_soh, loss
        if (step + 1) % _smoke(78, 2) == 0:
            model.eval()
            with torch.no_grad():
                nb = _smoke(128, 3)
                x, keep, bike, assist, static, rng_km, wh_km, soh = rides([max_len] * nb, max_len)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    out = model(x, keep, bike, assist, static)
                q = out[:, :3] * 40.0
                res = torch.stack([(q[:, 1] - rng_km).abs().mean(),
                                   ((rng_km >= q[:, 0]) & (rng_km <= q[:, 2])).float().mean()])
            res.tolist()
            del x, keep, bike, assist, static, rng_km, wh_km, soh, out, q, res

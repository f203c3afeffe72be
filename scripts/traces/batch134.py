"""The hundred-and-thirty-fourth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py
to batch133_b.py are): public aquariums and marine exhibits, written in torch alone, first half. Tank water-quality
forecasting training (a temporal convolutional network of dilated causal convolutions over each tank's sensor series,
series of drawn lengths padded under a mask; the next hour of the key readings at every step and the alarm level),
reef fish detection fine-tuning on the tank cameras (a residual convolutional backbone with its stem and first stage
frozen, a top-down feature pyramid and CenterNet heads; each species' centre heatmap by focal loss, the box size and
the centre offset at the fish centres), feeding policy training (proximal policy optimisation over tanks simulated on
the device: the fish groups' hunger, the uneaten food, ammonia, dissolved oxygen and the visitors at the glass, a feed
choice and an aeration level per step, advantages by GAE) and a tank sensor anomaly service (a transformer encoder
over patches of each tank's recent readings, readings after a sensor dropout masked, the patches' reconstruction error
and the fault kind, the worst tanks ranked).
Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths,
resolutions and batch sizes are fixed on the host, padding handled by masks or by torch.where / masked_fill, no
boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
tank_sensor_anomaly_serve uploads its readings on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every embedding and position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`).  The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new134.sh's header for each workload's op outputs and peak live bytes
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


# ---------------------------------------------------------------- tank water quality (temporal convolutional network)


class _CausalBlock(_nn.Module):
    """Two dilated causal convolutions of kernel 3 (padded on the left only) with group norms and GELU, residual."""

    def __init__(self, d, dil):
        super().__init__()
        self.pad = 2 * dil
        self.c1, self.c2 = _nn.Conv1d(d, d, 3, dilation=dil), _nn.Conv1d(d, d, 3, dilation=dil)
        self.n1, self.n2 = _nn.GroupNorm(8, d), _nn.GroupNorm(8, d)

    def forward(self, x):
        h = _F.gelu(self.n1(self.c1(_F.pad(x, (self.pad, 0)))))
        h = self.n2(self.c2(_F.pad(h, (self.pad, 0))))
        return _F.gelu(x + h)


class _WaterTCN(_nn.Module):
    def __init__(self, cin, d, dils, n_kind, n_out):
        super().__init__()
        self.inp = _nn.Conv1d(cin + 1, d, 1)
        self.kind = _nn.Embedding(n_kind, d)
        self.blocks = _nn.ModuleList(_CausalBlock(d, k) for k in dils)
        self.out = _nn.Conv1d(d, n_out, 1)

    def forward(self, x, keep, kind):
        h = self.inp(torch.cat([x, keep[:, None].to(x.dtype)], 1)) + self.kind(kind)[:, :, None]
        for blk in self.blocks:
            h = blk(h)
        return self.out(h).float()


@_workload("tank water-quality forecasting training (random init, a temporal convolutional network): 16-64 tanks a step (drawn), each a series of 96-288 readings every 5 minutes (drawn per tank, padded to the step's longest under a mask) of 10 channels (temperature, pH, salinity, dissolved oxygen, ammonia, nitrite, nitrate, ORP, turbidity, a feeding flag) made on the device as drifting random walks, and a tank kind from an 8-row table; a 1x1 input convolution (width 128) over the readings and the mask, 8 residual blocks of paired dilated causal convolutions (kernel 3, dilations 1 to 128, left padding only, group norms, GELU), a 1x1 output convolution; at every step the next 12 readings (an hour) of 6 key channels by MSE masked past each tank's end (targets by unfold) and the ammonia alarm level (of 3, from the next reading) by masked cross-entropy; AdamW on a cosine schedule, clipping, bf16 autocast, 600 steps; the losses read back every 20 steps and every 120 steps a no-grad pass over 64 tanks of 288 readings with the alarm accuracy read back")
def tank_water_quality_tcn_train(rng):
    cin, d, n_kind, n_key, horizon = 10, _smoke(128, 16), 8, 6, 12
    dils = _smoke([1, 2, 4, 8, 16, 32, 64, 128], [1, 2])
    model = _WaterTCN(cin, d, dils, n_kind, n_key * horizon + 3).cuda()
    steps, every = _smoke(600, 3), _smoke(120, 2)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    t_lo, t_hi = _smoke(96, 12), _smoke(288, 20)

    def batch(lens):
        b, t = len(lens), max(lens)
        keep = keep_mask(lens, t)
        x = (torch.randn(b, cin, t, device="cuda") * 0.05).cumsum(-1) + torch.randn(b, cin, 1, device="cuda")
        x = x * keep[:, None].float()
        kind = torch.randint(0, n_kind, (b,), device="cuda")
        ahead = _F.pad(x[:, :n_key], (0, horizon)).unfold(-1, horizon, 1)[:, :, 1:t + 1]  # (b, 6, t, 12)
        steps_ahead = torch.arange(t, device="cuda")[:, None] + torch.arange(1, horizon + 1, device="cuda")[None]
        valid = steps_ahead[None] < torch.tensor(lens, device="cuda")[:, None, None]  # (b, t, 12)
        amm = ahead[:, 4, :, 0]
        level = (amm > 0.8).long() + (amm > 1.6).long()
        return x, keep, kind, ahead, valid, level

    def run(x, keep, kind):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(x, keep, kind)
        b, _, t = out.shape
        return out[:, :n_key * horizon].view(b, n_key, horizon, t).transpose(2, 3), out[:, n_key * horizon:]

    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(16, 2), _smoke(64, 3))
        lens = [rng.randint(t_lo, t_hi) for _ in range(b)]
        x, keep, kind, ahead, valid, level = batch(lens)
        fc, alarm = run(x, keep, kind)
        w = valid[:, None].float()
        l_fc = ((fc - ahead).pow(2) * w).sum() / (w.sum() * n_key)
        kw = keep.float()
        l_alarm = (_F.cross_entropy(alarm, level, reduction="none") * kw).sum() / kw.sum()
        loss = l_fc + 0.5 * l_alarm
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            torch.stack([l_fc.detach(), l_alarm.detach()]).tolist()
        del x, keep, kind, ahead, valid, level, fc, alarm, w, kw, l_fc, l_alarm, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                x, keep, kind, ahead, valid, level = batch([t_hi] * _smoke(64, 2))
                fc, alarm = run(x, keep, kind)
                acc = (alarm.argmax(1) == level).float().mean()
            acc.item()
            del x, keep, kind, ahead, valid, level, fc, alarm, acc


# ---------------------------------------------------------------- reef fish detection (CenterNet, fine-tuned)


class _ReefCenterNet(_nn.Module):
    """A residual backbone (a strided 7x7 stem and max pooling, four stages of two basic blocks), a top-down pyramid
    (1x1 laterals, nearest upsampling, a 3x3 smoothing convolution) to stride 4, and the CenterNet heads."""

    def __init__(self, widths, dn, n_cls):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, widths[0], 7, 2, 3, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU(), _nn.MaxPool2d(3, 2, 1))
        self.stages, c = _nn.ModuleList(), widths[0]
        for i, w in enumerate(widths):
            self.stages.append(_nn.Sequential(BasicResBlock(c, w, 1 if i == 0 else 2), BasicResBlock(w, w, 1)))
            c = w
        self.lat = _nn.ModuleList(_nn.Conv2d(w, dn, 1) for w in widths)
        self.smooth = _nn.Conv2d(dn, dn, 3, 1, 1)
        self.heat = _nn.Sequential(_nn.Conv2d(dn, dn, 3, 1, 1), _nn.ReLU(), _nn.Conv2d(dn, n_cls, 1))
        self.box = _nn.Sequential(_nn.Conv2d(dn, dn, 3, 1, 1), _nn.ReLU(), _nn.Conv2d(dn, 4, 1))

    def forward(self, x):
        feats, x = [], self.stem(x)
        for stage in self.stages:
            x = stage(x)
            feats.append(x)
        y = self.lat[-1](feats[-1])
        for f, lat in zip(reversed(feats[:-1]), reversed(list(self.lat)[:-1])):
            y = _F.interpolate(y, size=f.shape[-2:], mode="nearest") + lat(f)
        y = _F.relu(self.smooth(y))
        return self.heat(y).float(), self.box(y).float()


@_workload("reef fish detection fine-tuning on tank cameras (random init, a CenterNet): 8-20 frames a step (drawn) at 256 x 320, 320 x 448 or 384 x 512 px (drawn per step), made on the device, each with 1-16 fish (drawn per frame, padded to 16 under a mask) of 24 species at centres, sizes and species drawn on the device; a residual backbone (7x7 stem, 4 stages of 2 basic blocks, 64/128/256/512 channels) with the stem and first stage frozen (batch norms in eval mode), a top-down pyramid (1x1 laterals of 128, nearest upsampling, a 3x3 smoothing convolution) to stride 4, heatmap and box heads (3x3 then 1x1), in channels_last; the species heatmaps (Gaussians at the integer centres scaled by the fish size, built by an einsum over the fish) by CenterNet's focal loss, the box size and centre offset gathered at the centres by masked L1; AdamW on the trainable parameters, clipping, bf16 autocast, 530 steps; the losses read back every 20 steps and every 106 steps a no-grad pass over 8 frames at 384 x 512 with the 64 best peaks (3x3 max-pool suppression, topk) read back")
def reef_fish_centernet_finetune(rng):
    widths, dn, n_cls, n_max = _smoke([64, 128, 256, 512], [8, 8, 16, 16]), _smoke(128, 16), 24, 16
    model = _ReefCenterNet(widths, dn, n_cls).cuda().to(memory_format=torch.channels_last)
    frozen = [model.stem, model.stages[0]]
    for m in frozen:
        m.requires_grad_(False)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=2e-4, weight_decay=0.01)
    steps, every = _smoke(530, 3), _smoke(106, 2)
    res_opts = _smoke([(256, 320), (320, 448), (384, 512)], [(64, 64), (64, 96)])

    def frames(b, hh, ww, counts):
        h4, w4 = hh // 4, ww // 4
        x = torch.rand(b, 3, hh, ww, device="cuda").contiguous(memory_format=torch.channels_last)
        keep = keep_mask(counts, n_max).float()
        cxf = torch.rand(b, n_max, device="cuda") * (w4 - 1)
        cyf = torch.rand(b, n_max, device="cuda") * (h4 - 1)
        cx, cy = cxf.floor(), cyf.floor()
        size = torch.rand(b, n_max, 2, device="cuda") * 0.25 + 0.03
        cls = torch.randint(0, n_cls, (b, n_max), device="cuda")
        sig = (size.mean(-1) * w4 / 6.0).clamp_min(0.7)
        gy = torch.arange(h4, device="cuda").float().view(1, 1, h4, 1)
        gx = torch.arange(w4, device="cuda").float().view(1, 1, 1, w4)
        g = torch.exp(-((gx - cx[..., None, None]).pow(2) + (gy - cy[..., None, None]).pow(2))
                      / (2 * sig[..., None, None].pow(2))) * keep[..., None, None]
        heat = torch.einsum("bnhw,bnc->bchw", g, _F.one_hot(cls, n_cls).float()).clamp(max=1.0)
        idx = (cy * w4 + cx).long()
        box = torch.cat([size.transpose(1, 2), torch.stack([cxf - cx, cyf - cy], 1)], 1)  # (b, 4, n)
        return x, heat, idx, box, keep

    def focal(logit, heat):
        p = torch.sigmoid(logit).clamp(1e-4, 1 - 1e-4)
        pos = (heat > 0.999).float()
        l_pos = pos * (1 - p).pow(2) * p.log()
        l_neg = (1 - pos) * (1 - heat).pow(4) * p.pow(2) * (1 - p).log()
        return -(l_pos + l_neg).sum() / pos.sum().clamp_min(1.0)

    for step in range(steps):
        model.train()
        for m in frozen:
            m.eval()
        b = rng.randint(_smoke(8, 2), _smoke(20, 3))
        hh, ww = rng.choice(res_opts)
        counts = [rng.randint(1, n_max) for _ in range(b)]
        x, heat, idx, box, keep = frames(b, hh, ww, counts)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logit, pred = model(x)
        got = pred.flatten(2).gather(2, idx[:, None].expand(b, 4, n_max))
        l_heat = focal(logit, heat)
        l_box = ((got - box).abs() * keep[:, None]).sum() / (keep.sum() * 4.0)
        loss = l_heat + l_box
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 5.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_heat.detach(), l_box.detach()]).tolist()
        del x, heat, idx, box, keep, logit, pred, got, l_heat, l_box, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                hh, ww = res_opts[-1]
                nb = _smoke(8, 2)
                x, heat, idx, box, keep = frames(nb, hh, ww, [n_max] * nb)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logit, pred = model(x)
                p = torch.sigmoid(logit)
                peaks = p * (_F.max_pool2d(p, 3, 1, 1) == p).float()
                top = peaks.flatten(1).topk(_smoke(64, 8), -1)
                found = torch.cat([top.values, top.indices.float()], -1)
            found.tolist()
            del x, heat, idx, box, keep, logit, pred, p, peaks, top, found


# ---------------------------------------------------------------- feeding policy (PPO over simulated tanks)


class _FeedPolicy(_nn.Module):
    """An actor (feed choice of 6 and aeration level of 3, two categorical heads on one trunk) and a critic, both MLPs
    of 3 layers with layer norms and tanh."""

    def __init__(self, s_dim, hidden, n_feed, n_air):
        super().__init__()
        self.n_feed = n_feed
        self.actor = mlp(s_dim, hidden, n_feed + n_air, layers=3, act=_nn.Tanh, norm=True)
        self.critic = mlp(s_dim, hidden, 1, layers=3, act=_nn.Tanh, norm=True)

    def forward(self, s):
        logits = self.actor(s).float()
        return logits[:, :self.n_feed].log_softmax(-1), logits[:, self.n_feed:].log_softmax(-1), \
            self.critic(s).float()[:, 0]


@_workload("feeding policy training for aquarium tanks (random init, proximal policy optimisation): 2,048 tanks simulated on the device, each with 4 fish groups' hunger, uneaten food, ammonia, dissolved oxygen, temperature, the hour, the visitors at the glass and the feeds so far (a 14-feature state); per step a feed choice of 6 (none, flake, pellet, frozen mysis, target feeding, a public feeding show) and an aeration level of 3 sampled from two categorical heads by the Gumbel-max trick; the feeds' amounts and each group's preference from fixed tables, eating limited by the food and the hunger, ammonia from the leftovers and the eaten food, oxygen from the aeration and the load, visitors following the hour, the day wrapping by torch.where; reward the negative hunger less ammonia and low-oxygen penalties plus a show bonus by visitors less the aeration's cost; per iteration a rollout of 32-64 steps (drawn), advantages by GAE (gamma 0.99, lambda 0.95, a loop over the steps backwards), then 3 epochs of 4-8 minibatches (drawn per iteration) by randperm: the clipped surrogate (0.2), the clipped value loss and an entropy bonus; actor and critic MLPs of 3 layers of 256 with layer norms and tanh; Adam, clipping at 0.5, bf16 autocast, 28 iterations; the mean reward, the losses and the approximate KL read back every iteration")
def fish_feeding_ppo_train(rng):
    s_dim, hidden, n_feed, n_air, groups = 14, _smoke(256, 16), 6, 3, 4
    envs = _smoke(2048, 16)
    net = _FeedPolicy(s_dim, hidden, n_feed, n_air).cuda()
    opt = torch.optim.Adam(net.parameters(), lr=3e-4, eps=1e-5)
    iters, epochs = _smoke(28, 2), _smoke(3, 1)
    gamma, lam, clip = 0.99, 0.95, 0.2
    amount = torch.tensor([0.0, 0.3, 0.5, 0.6, 0.4, 0.8], device="cuda")
    pref = torch.rand(n_feed, groups, device="cuda") * 0.8 + 0.2
    pref[0] = 0.0
    air_cost = torch.tensor([0.0, 0.05, 0.12], device="cuda")
    air_o2 = torch.tensor([0.0, 0.15, 0.3], device="cuda")
    st = dict(hunger=torch.rand(envs, groups, device="cuda"), food=torch.zeros(envs, device="cuda"),
              amm=torch.rand(envs, device="cuda") * 0.3, do=torch.rand(envs, device="cuda") + 6.5,
              temp=torch.rand(envs, device="cuda") * 4 + 22, hour=torch.rand(envs, device="cuda") * 24,
              feeds=torch.zeros(envs, device="cuda"))

    def observe(s):
        ang = s["hour"] / 24.0 * 2 * math.pi
        vis = (torch.sin(ang - 1.2).clamp_min(0.0) * 3.0)
        return torch.cat([s["hunger"], torch.stack([s["food"], s["amm"], s["do"] / 8.0, s["temp"] / 25.0, ang.sin(),
                                                     ang.cos(), vis, s["feeds"] / 6.0, torch.ones_like(vis),
                                                     s["amm"] * s["food"]], -1)], -1), vis

    def env_step(s, vis, feed, air):
        food = s["food"] + amount[feed]
        want = (s["hunger"] * pref[feed]).sum(-1)
        eaten = torch.minimum(food, want * 0.5)
        share = s["hunger"] * pref[feed] / (want[:, None] + 1e-6)
        hunger = (s["hunger"] - eaten[:, None] * share + 0.02).clamp(0.0, 1.5)
        food = (food - eaten) * 0.8
        amm = (s["amm"] + 0.05 * food + 0.02 * eaten - 0.03 - 0.02 * air.float()).clamp_min(0.0)
        do = (s["do"] - 0.1 * amm - 0.05 * hunger.sum(-1) + air_o2[air] + 0.05 * torch.randn_like(amm)).clamp(3, 9)
        temp = s["temp"] + 0.05 * torch.randn_like(amm)
        hour = s["hour"] + 0.25
        wrap = hour >= 24.0
        feeds = torch.where(wrap, torch.zeros_like(hour), s["feeds"] + (feed > 0).float())
        hour = torch.where(wrap, hour - 24.0, hour)
        r = (-hunger.sum(-1) - 2.0 * (amm - 0.5).clamp_min(0.0) - 3.0 * (5.0 - do).clamp_min(0.0)
             + 0.5 * vis * (feed == 5).float() - air_cost[air] - 0.2 * (s["feeds"] > 5).float() * (feed > 0).float())
        return dict(hunger=hunger, food=food, amm=amm, do=do, temp=temp, hour=hour, feeds=feeds), r

    for it in range(iters):
        horizon = rng.randint(_smoke(32, 3), _smoke(64, 5))
        n_mb = rng.randint(4, 8) if envs >= 64 else 2
        obs_l, feed_l, air_l, lp_l, v_l, r_l = [], [], [], [], [], []
        net.eval()
        with torch.no_grad():
            for _ in range(horizon):
                s, vis = observe(st)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    lf, la, v = net(s)
                feed = (lf - torch.rand_like(lf).clamp_min(1e-9).log().neg().log()).argmax(-1)
                air = (la - torch.rand_like(la).clamp_min(1e-9).log().neg().log()).argmax(-1)
                lp = lf.gather(1, feed[:, None])[:, 0] + la.gather(1, air[:, None])[:, 0]
                st, r = env_step(st, vis, feed, air)
                obs_l.append(s), feed_l.append(feed), air_l.append(air), lp_l.append(lp), v_l.append(v)
                r_l.append(r)
            s, _ = observe(st)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                v_next = net(s)[2]
            adv, last = [None] * horizon, torch.zeros(envs, device="cuda")
            for t in reversed(range(horizon)):
                nv = v_next if t == horizon - 1 else v_l[t + 1]
                delta = r_l[t] + gamma * nv - v_l[t]
                last = delta + gamma * lam * last
                adv[t] = last
            obs, feed, air = torch.cat(obs_l), torch.cat(feed_l), torch.cat(air_l)
            old_lp, old_v, adv = torch.cat(lp_l), torch.cat(v_l), torch.cat(adv)
            ret = adv + old_v
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            mean_r = torch.stack(r_l).mean()
        del obs_l, feed_l, air_l, lp_l, v_l, r_l, s, vis, lf, la, v, lp, r, v_next, last, nv, delta
        net.train()
        n = horizon * envs
        mbs = n // n_mb
        for _ in range(epochs):
            perm = torch.randperm(n, device="cuda")
            for j in range(n_mb):
                idx = perm[j * mbs:(j + 1) * mbs]
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    lf, la, v = net(obs[idx])
                lp = lf.gather(1, feed[idx, None])[:, 0] + la.gather(1, air[idx, None])[:, 0]
                ratio = (lp - old_lp[idx]).exp()
                a = adv[idx]
                l_pi = -torch.minimum(ratio * a, ratio.clamp(1 - clip, 1 + clip) * a).mean()
                ov = old_v[idx]
                v_clip = ov + (v - ov).clamp(-clip, clip)
                l_v = 0.5 * torch.maximum((v - ret[idx]).pow(2), (v_clip - ret[idx]).pow(2)).mean()
                ent = -((lf.exp() * lf).sum(-1) + (la.exp() * la).sum(-1)).mean()
                loss = l_pi + 0.5 * l_v - 0.01 * ent
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
                opt.step()
                kl = (old_lp[idx] - lp).mean().detach()
                del idx, lf, la, v, lp, ratio, a, ov, v_clip
            del perm
        torch.stack([mean_r, l_pi.detach(), l_v.detach(), ent.detach(), kl]).tolist()
        del obs, feed, air, old_lp, old_v, adv, ret, mean_r, l_pi, l_v, ent, loss, kl


# ---------------------------------------------------------------- tank sensor anomalies (transformer, side stream)


class _SensorEncoder(_nn.Module):
    """Patches of 16 readings of every channel with their valid fraction, a tank-kind table and a position table,
    pre-norm transformer blocks under a key mask, a reconstruction head per patch and a fault head on the masked
    mean."""

    def __init__(self, ch, patch, d, heads, layers, n_pos, n_kind, n_fault):
        super().__init__()
        self.patch = patch
        self.emb = _nn.Linear(patch * ch + 1, d)
        self.pos, self.kind = _nn.Embedding(n_pos, d), _nn.Embedding(n_kind, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.rec = _nn.Linear(d, patch * ch)
        self.fault = mlp(d, d, n_fault, act=_nn.GELU)

    def forward(self, x, keep, kind):
        n, t, c = x.shape
        p = t // self.patch
        frac = keep.float().view(n, p, self.patch).mean(-1, keepdim=True)
        tok = torch.cat([(x * keep[..., None].to(x.dtype)).reshape(n, p, self.patch * c), frac.to(x.dtype)], -1)
        h = self.emb(tok) + self.pos(torch.arange(p, device=x.device))[None] + self.kind(kind)[:, None]
        pkeep = frac[..., 0] > 0
        mask = pkeep[:, None, None, :]
        for blk in self.blocks:
            h = blk(h, mask)
        h = self.norm(h)
        w = pkeep.to(h.dtype)[..., None]
        pooled = (h * w).sum(1) / w.sum(1)
        return self.rec(h).float().view(n, t, c), self.fault(pooled).float(), pkeep


@_workload("tank sensor anomaly serving (random init, a transformer encoder over sensor patches): 1,530-1,560 requests (drawn) of 16-192 tanks (drawn), each tank's last 64-256 readings (drawn per request in steps of 16) of 12 channels, fp16 uploaded on a side stream from two reused pinned host buffers (filled once, sized for 192 x 256 x 12) one request ahead (one span, through SideUploads.ahead); each tank's readings past a sensor dropout (its valid length drawn per tank, half the window to all of it) masked; patches of 16 readings (every channel and the valid fraction) to width 192, a 16-row position table and an 8-row tank-kind table, 4 pre-norm blocks of 6 heads under a key mask of the patches with readings, a reconstruction head per patch and a fault head (of 5) on the masked mean, in eval mode under bf16 autocast; each reading's reconstruction error masked, each tank's worst patch, the 5 worst tanks by topk with their fault probabilities and each channel's share of their error; each request's figures read back once")
def tank_sensor_anomaly_serve(rng):
    ch, patch, d, heads, layers = 12, 16, _smoke(192, 16), _smoke(6, 2), _smoke(4, 1)
    max_n, max_t, n_kind, n_fault = _smoke(192, 8), _smoke(256, 64), 8, 5
    model = _SensorEncoder(ch, patch, d, heads, layers, max_t // patch, n_kind, n_fault).cuda().eval()
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randn(max_n * max_t * ch, generator=gen).half().pin_memory() for _ in range(2)]
    up = SideUploads(host)

    nreq = rng.randint(_smoke(1530, 3), _smoke(1560, 4))
    plan = []
    for _ in range(nreq):
        n = rng.randint(_smoke(16, 2), max_n)
        t = rng.randint(4, max_t // patch) * patch
        plan.append((n, t, [rng.randint(t // 2, t) for _ in range(n)]))

    for (n, t, lens), raw in up.ahead(plan, lambda p: (p[0] * p[1] * ch,)):
        with torch.no_grad():
            x = raw.view(n, t, ch).float()
            keep = keep_mask(lens, t)
            kind = torch.randint(0, n_kind, (n,), device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                rec, fault, pkeep = model(x, keep, kind)
            err = (rec - x).pow(2) * keep[..., None].float()
            per_patch = err.sum(-1).view(n, t // patch, patch).sum(-1) / (keep.float().view(n, t // patch, patch)
                                                                          .sum(-1).clamp_min(1.0) * ch)
            worst = per_patch.masked_fill(~pkeep, 0.0).amax(-1)
            k = min(5, n)
            top = worst.topk(k)
            probs = fault.softmax(-1).index_select(0, top.indices)
            share = err.sum(1).index_select(0, top.indices)
            share = share / share.sum(-1, keepdim=True).clamp_min(1e-6)
            figs = torch.cat([top.values, top.indices.float(), probs.flatten(), share.flatten(), worst.mean()[None]])
        figs.tolist()
        del raw, x, keep, kind, rec, fault, pkeep, err, per_patch, worst, top, probs, share, figs

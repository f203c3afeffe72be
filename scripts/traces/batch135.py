"""The hundred-and-thirty-fifth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py
to batch133_b.py are): fire and rescue services, written in torch alone, first half. Emergency call triage training
(a transformer encoder over call transcripts of drawn lengths under a key mask, the caller's kind and the hour; the
incident type, its priority, the number of appliances by a Poisson loss and a tag for each token), a smoke and flame
detection service on camera feeds (a strided residual convnet with a small feature pyramid, centre heatmaps decoded
by max-pool peaks and topk, each camera's embedding kept in a bank on the device for a change score), fire spread
training on open land (a convolutional GRU written out step by step over landscapes of drawn sizes with the wind of
each step, trained against spread drawn by a stochastic cellular automaton on the device) and station dispatch policy
training (PPO over cities simulated on the device, a policy scoring each station for each incident with the busy
stations masked, GAE written out over rollouts of drawn lengths).
Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths,
resolutions and batch sizes are fixed on the host, padding handled by masks or by torch.where / masked_fill, no
boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
smoke_flame_camera_serve uploads its frames on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every embedding and position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new135.sh's header for each workload's op outputs and peak live bytes
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


# ---------------------------------------------------------------- emergency call triage (transformer encoder)


@_workload("emergency call triage training (random init, a transformer encoder): 16-48 calls a step (drawn), each transcript 32-256 tokens (drawn per call, padded to the step's longest rounded up to 8, at most 256) of an 8,000-token vocabulary, a 256-row position table, the caller's kind (of 6) by a table and the hour as sine and cosine; 4 pre-norm blocks of width 256, 8 heads, under a boolean key mask; each token's tag (of 5: none, address, landmark, hazard, casualty) by masked cross-entropy, and from the masked mean of the tokens the incident type (of 24) and the priority (of 5) by cross-entropy and the appliances to send (a Poisson loss on the log rate); AdamW, clipping, bf16 autocast, 540 steps; the losses read back every 10 steps and every 90 steps a no-grad pass over 64 calls of 256 tokens with the type accuracy read back")
def fire_call_triage_transformer_train(rng):
    vocab, d, heads, layers = 8000, _smoke(256, 32), _smoke(8, 2), _smoke(4, 1)
    t_lo, t_hi = _smoke(32, 8), _smoke(256, 24)
    n_type, n_pri, n_tag, n_caller = 24, 5, 5, 6
    tok, pos = _nn.Embedding(vocab, d).cuda(), _nn.Embedding(t_hi, d).cuda()
    caller, hour_in = _nn.Embedding(n_caller, d).cuda(), _nn.Linear(2, d).cuda()
    blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers)).cuda()
    norm = _nn.LayerNorm(d).cuda()
    tag_head = _nn.Linear(d, n_tag).cuda()
    call_head = mlp(d, d, n_type + n_pri + 1, act=_nn.GELU).cuda()
    mods = _nn.ModuleList([tok, pos, caller, hour_in, blocks, norm, tag_head, call_head])
    opt = torch.optim.AdamW(mods.parameters(), lr=3e-4, weight_decay=0.01)
    steps, every = _smoke(540, 3), _smoke(90, 2)

    def run(lens):
        b, t = len(lens), min(t_hi, -(-max(lens) // 8) * 8)
        keep = keep_mask(lens, t)
        ids = torch.randint(1, vocab, (b, t), device="cuda").masked_fill(~keep, 0)
        hour = torch.rand(b, device="cuda") * (2 * math.pi)
        who = torch.randint(0, n_caller, (b,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            ctx = caller(who) + hour_in(torch.stack([hour.sin(), hour.cos()], -1))
            x = tok(ids) + pos(torch.arange(t, device="cuda"))[None] + ctx[:, None]
            m = keep[:, None, None, :]
            for blk in blocks:
                x = blk(x, m)
            x = norm(x)
            tags = tag_head(x).float()
            w = keep.float()
            pooled = (x.float() * w[..., None]).sum(1) / w.sum(1, keepdim=True)
            call = call_head(pooled).float()
        return keep, tags, call

    for step in range(steps):
        mods.train()
        b = rng.randint(_smoke(16, 2), _smoke(48, 3))
        lens = [rng.randint(t_lo, t_hi) for _ in range(b)]
        keep, tags, call = run(lens)
        t = keep.shape[1]
        tag_y = torch.randint(0, n_tag, (b, t), device="cuda")
        type_y = torch.randint(0, n_type, (b,), device="cuda")
        pri_y = torch.randint(0, n_pri, (b,), device="cuda")
        count_y = torch.randint(1, 9, (b,), device="cuda").float()
        w = keep.float()
        l_tag = (_F.cross_entropy(tags.transpose(1, 2), tag_y, reduction="none") * w).sum() / w.sum()
        l_type = _F.cross_entropy(call[:, :n_type], type_y)
        l_pri = _F.cross_entropy(call[:, n_type:n_type + n_pri], pri_y)
        l_cnt = _F.poisson_nll_loss(call[:, -1], count_y, log_input=True)
        loss = l_tag + l_type + l_pri + 0.5 * l_cnt
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(mods.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_tag.detach(), l_type.detach(), l_pri.detach(), l_cnt.detach()]).tolist()
        del keep, tags, call, tag_y, type_y, pri_y, count_y, w, l_tag, l_type, l_pri, l_cnt, loss
        if (step + 1) % every == 0:
            mods.eval()
            with torch.no_grad():
                nb = _smoke(64, 2)
                keep, tags, call = run([t_hi] * nb)
                type_y = torch.randint(0, n_type, (nb,), device="cuda")
                acc = (call[:, :n_type].argmax(-1) == type_y).float().mean()
            acc.item()
            del keep, tags, call, type_y, acc


# ---------------------------------------------------------------- smoke and flame detection on camera feeds


class _FireDet(_nn.Module):
    """A strided residual convnet (1/2 .. 1/32), a feature pyramid of 1x1 laterals back onto the 1/8 map, a centre
    head (smoke and flame heatmaps, box size and offset) and a pooled camera embedding."""

    def __init__(self, w):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, w[0], 3, 2, 1, bias=False), _nn.BatchNorm2d(w[0]), _nn.ReLU())
        self.s1, self.s2 = BasicResBlock(w[0], w[1], 2), BasicResBlock(w[1], w[2], 2)
        self.s3, self.s4 = BasicResBlock(w[2], w[3], 2), BasicResBlock(w[3], w[4], 2)
        f = w[2]
        self.l2, self.l3, self.l4 = _nn.Conv2d(w[2], f, 1), _nn.Conv2d(w[3], f, 1), _nn.Conv2d(w[4], f, 1)
        self.head = _nn.Sequential(_nn.Conv2d(f, f, 3, 1, 1), _nn.ReLU(), _nn.Conv2d(f, 6, 1))
        self.emb = _nn.Linear(w[4], 128)

    def forward(self, x):
        c2 = self.s2(self.s1(self.stem(x)))
        c3 = self.s3(c2)
        c4 = self.s4(c3)
        p3 = self.l3(c3) + _F.interpolate(self.l4(c4), scale_factor=2.0, mode="nearest")
        p2 = self.l2(c2) + _F.interpolate(p3, scale_factor=2.0, mode="nearest")
        return self.head(p2).float(), self.emb(c4.mean((2, 3))).float()


@_workload("smoke and flame detection serving on camera feeds (random init, a strided residual convnet with a centre head): 2,260-2,300 requests (drawn) of 1-8 camera frames (drawn) at 288 x 512, 384 x 672 or 448 x 800 px (drawn per request), uint8 RGB uploaded on a side stream from two reused pinned host buffers (filled once, sized for 8 x 3 x 448 x 800) one request ahead (one span, through SideUploads.ahead), normalised on the device in channels_last; a strided stem (32 channels) and four strided residual blocks (48, 96, 160, 224) with 1x1 laterals upsampled back onto the 1/8 map, a centre head (smoke and flame heatmaps, box size and offset), in eval mode under bf16 autocast; peaks by a 3x3 max-pool test, the 32 best of each frame by topk with their class, position and box gathered; each frame's smoke and flame alarm (the heatmaps' maxima) and its contrast (luminance standard deviation); a 128-d embedding of each frame compared by cosine with that camera's last one, kept in a bank of 96 cameras on the device (index_select, then index_copy_ of the new ones; cameras drawn per request); each request's figures read back once")
def smoke_flame_camera_serve(rng):
    widths = (_smoke(32, 8), _smoke(48, 8), _smoke(96, 16), _smoke(160, 16), _smoke(224, 16))
    res = [(288, 512), (384, 672), (448, 800)] if _smoke(1, 0) else [(64, 96), (96, 128)]
    max_n, n_cam, top = _smoke(8, 2), 96, _smoke(32, 4)
    model = _FireDet(widths).cuda().to(memory_format=torch.channels_last).eval()
    model.requires_grad_(False)
    bank = torch.zeros(n_cam, 128, device="cuda")
    mean = torch.tensor([0.45, 0.43, 0.41], device="cuda").view(1, 3, 1, 1) * 255.0
    std = torch.tensor([0.23, 0.23, 0.24], device="cuda").view(1, 3, 1, 1) * 255.0
    big = max(h * w for h, w in res)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_n * 3 * big,), generator=gen, dtype=torch.uint8).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)

    nreq = rng.randint(_smoke(2260, 3), _smoke(2300, 4))
    plan = []
    for _ in range(nreq):
        n = rng.randint(1, max_n)
        h, w = rng.choice(res)
        plan.append((n, h, w, rng.sample(range(n_cam), n)))

    for (n, h, w, cams), raw in up.ahead(plan, lambda p: (p[0] * 3 * p[1] * p[2],)):
        with torch.no_grad():
            img = raw.view(n, 3, h, w).float()
            lum = img[:, 0] * 0.299 + img[:, 1] * 0.587 + img[:, 2] * 0.114
            contrast = lum.flatten(1).std(-1) / 255.0
            x = ((img - mean) / std).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out, emb = model(x)
            heat = out[:, :2].sigmoid()
            hh, ww = heat.shape[2], heat.shape[3]
            peak = heat * (_F.max_pool2d(heat, 3, 1, 1) == heat).float()
            score, idx = peak.flatten(1).topk(top, -1)
            cls = torch.div(idx, hh * ww, rounding_mode="floor")
            pix = idx % (hh * ww)
            box = out[:, 2:].flatten(2)
            size = box[:, :2].gather(2, pix[:, None].expand(n, 2, top)).exp() * 8.0
            off = box[:, 2:].gather(2, pix[:, None].expand(n, 2, top)).sigmoid()
            cx = ((pix % ww).float() + off[:, 0]) * 8.0
            cy = (torch.div(pix, ww, rounding_mode="floor").float() + off[:, 1]) * 8.0
            alarm = heat.flatten(2).amax(-1)
            e = _F.normalize(emb, dim=-1)
            cam = torch.tensor(cams, device="cuda")
            change = 1.0 - (bank.index_select(0, cam) * e).sum(-1)
            bank.index_copy_(0, cam, e.to(bank.dtype))
            dets = torch.stack([score, cls.float(), cx, cy, size[:, 0], size[:, 1]], -1).flatten()
            figs = torch.cat([dets, alarm.flatten(), contrast, change])
        figs.tolist()
        del raw, img, lum, contrast, x, out, emb, heat, peak, score, idx, cls, pix, box, size, off, cx, cy, alarm
        del e, cam, change, dets, figs


# ---------------------------------------------------------------- fire spread on open land (ConvGRU written out)


class _SpreadNet(_nn.Module):
    """A static encoder of the landscape at half resolution, a convolutional GRU cell written out (the update and
    reset gates by one 3x3 convolution, the candidate by another), the ignition map as the first state, and a
    transposed-convolution decoder back to full resolution."""

    def __init__(self, n_fuel, cin, hid):
        super().__init__()
        self.fuel = _nn.Embedding(n_fuel, 8)
        self.enc = _nn.Sequential(_nn.Conv2d(8 + cin, 48, 3, 1, 1), _nn.GELU(), _nn.Conv2d(48, hid, 3, 2, 1),
                                  _nn.GELU())
        self.h0 = _nn.Conv2d(1, hid, 3, 1, 1)
        self.gates = _nn.Conv2d(2 * hid + 3, 2 * hid, 3, 1, 1)
        self.cand = _nn.Conv2d(2 * hid + 3, hid, 3, 1, 1)
        self.dec = _nn.Sequential(_nn.ConvTranspose2d(hid, 32, 2, 2), _nn.GELU(), _nn.Conv2d(32, 1, 3, 1, 1))

    def forward(self, fuel, land, ignite, weather):
        b, steps = weather.shape[0], weather.shape[1]
        static = self.enc(torch.cat([self.fuel(fuel).permute(0, 3, 1, 2), land], 1))
        hs, ws = static.shape[2], static.shape[3]
        h = torch.tanh(self.h0(_F.avg_pool2d(ignite, 2)))
        outs = []
        for s in range(steps):
            xw = torch.cat([static, weather[:, s, :, None, None].expand(b, 3, hs, ws).to(static.dtype)], 1)
            zr = torch.sigmoid(self.gates(torch.cat([xw, h.to(xw.dtype)], 1)))
            z, r = zr.chunk(2, 1)
            n = torch.tanh(self.cand(torch.cat([xw, (r * h).to(xw.dtype)], 1)))
            h = (1 - z) * h + z * n
            outs.append(h)
        y = self.dec(torch.stack(outs, 1).flatten(0, 1))
        return y.float().view(b, steps, y.shape[-2], y.shape[-1])


@_workload("fire spread training on open land (random init, a convolutional GRU written out step by step): 4-12 landscapes a step (drawn) of 64 x 64, 96 x 96 or 128 x 128 cells (drawn per step), each with a fuel model (of 13, 0 unburnable, by an 8-d table) and 5 channels (slope east and north, elevation, fuel moisture, canopy cover) and the ignition (the centre cell and up to 3 more cells drawn on the device), 6-12 spread steps (drawn per step) with each step's wind (east, north) and humidity; a static encoder to 64 channels at half resolution, the ignition map as the first state, a ConvGRU cell of 64 (3x3 gate and candidate convolutions on the static features, the weather and the state) written out over the steps, a transposed-convolution decoder of all steps at once; targets from a stochastic cellular automaton on the device (two 3x3 max-pool spreads a step gated by fuel, moisture, wind and a random draw), the burned map of each step by BCE (positive weight 3) and the burned area by an L1 loss; Adam, clipping, bf16 autocast, 490 steps; the losses read back every 10 steps and every 70 steps a no-grad pass over 4 landscapes of 128 x 128 for 12 steps with the final burned IoU read back")
def wildland_spread_convgru_train(rng):
    n_fuel, cin, hid = 13, 5, _smoke(64, 8)
    sizes = [64, 96, 128] if _smoke(1, 0) else [16, 24]
    model = _SpreadNet(n_fuel, cin, hid).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    steps, every = _smoke(490, 3), _smoke(70, 2)
    pos_w = torch.tensor(3.0, device="cuda")

    def scene(b, g, n_steps):
        fuel = torch.randint(0, n_fuel, (b, g, g), device="cuda")
        land = torch.rand(b, cin, g, g, device="cuda")
        ign = torch.zeros(b, g * g, device="cuda")
        ign.scatter_(1, torch.randint(0, g * g, (b, 3), device="cuda"), torch.rand(b, 3, device="cuda").round())
        ign[:, (g // 2) * g + g // 2] = 1.0
        ignite = ign.view(b, 1, g, g)
        weather = torch.randn(b, n_steps, 3, device="cuda")
        spread = ((fuel > 0).float() * (0.25 + 0.35 * land[:, 4]) * (1.1 - land[:, 3]))[:, None]
        burn, tgt = ignite, []
        for s in range(n_steps):
            wind = weather[:, s, :2].pow(2).sum(-1).sqrt()[:, None, None, None]
            p = (spread * (1.0 + 0.3 * wind - 0.2 * weather[:, s, 2, None, None, None])).clamp(0.0, 1.0)
            for _ in range(2):
                near = _F.max_pool2d(burn, 3, 1, 1)
                burn = torch.maximum(burn, near * (torch.rand_like(burn) < p).float())
            tgt.append(burn)
        return fuel, land, ignite, weather, torch.cat(tgt, 1)

    for step in range(steps):
        model.train()
        b, g, n_steps = rng.randint(_smoke(4, 1), _smoke(12, 2)), rng.choice(sizes), rng.randint(_smoke(6, 2), 12)
        with torch.no_grad():
            fuel, land, ignite, weather, tgt = scene(b, g, n_steps)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logit = model(fuel, land, ignite, weather)
        l_map = _F.binary_cross_entropy_with_logits(logit, tgt, pos_weight=pos_w)
        l_area = (logit.sigmoid().mean((2, 3)) - tgt.mean((2, 3))).abs().mean()
        loss = l_map + l_area
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_map.detach(), l_area.detach()]).tolist()
        del fuel, land, ignite, weather, tgt, logit, l_map, l_area, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                g = sizes[-1]
                fuel, land, ignite, weather, tgt = scene(_smoke(4, 1), g, 12)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pred = (model(fuel, land, ignite, weather)[:, -1] > 0).float()
                inter = (pred * tgt[:, -1]).sum()
                iou = inter / (pred.sum() + tgt[:, -1].sum() - inter + 1.0)
            iou.item()
            del fuel, land, ignite, weather, tgt, pred, inter, iou


# ---------------------------------------------------------------- station dispatch policy (PPO)


class _DispatchPolicy(_nn.Module):
    """Each station scored for the incident by a shared MLP, a 'mutual aid' action from the pooled stations, the
    busy stations masked; the value from the pooled stations."""

    def __init__(self, f, hidden):
        super().__init__()
        self.station = mlp(f, hidden, hidden, act=_nn.Tanh)
        self.score = _nn.Linear(hidden, 1)
        self.aid = mlp(hidden, hidden, 1, act=_nn.Tanh)
        self.value = mlp(hidden, hidden, 1, act=_nn.Tanh)

    def forward(self, obs, busy):
        h = torch.tanh(self.station(obs))
        pooled = h.mean(1)
        logits = torch.cat([self.score(h)[..., 0].float().masked_fill(busy, -1e4), self.aid(pooled).float()], -1)
        return logits, self.value(pooled).float()[:, 0]


@_workload("station dispatch policy training (random init, PPO): 512 cities simulated on the device, each with 16 stations (positions and unit kinds, of 4: engine, ladder, rescue, tanker, drawn once) and one incident a step (position, kind of 6 and severity drawn on the device); 18 features a station (offset and distance to the incident, busy time, busy flag, the unit kind, whether the kind suits the incident, the incident kind and severity, the city's busy fraction); a shared station MLP (width 128, tanh) scoring each station with the busy ones masked_fill'ed, a mutual-aid action and a value head from the pooled stations; actions by Gumbel-max; the chosen station busy for a service time by severity (one_hot), every busy time counting down; reward the response time (turnout plus distance) and a kind mismatch penalty weighted by severity, mutual aid a fixed cost; rollouts of 24-40 steps (drawn per iteration), GAE (gamma 0.99, lambda 0.95) written out backward over the steps, then 3 epochs of 4-8 minibatches (drawn per iteration) by randperm: the clipped surrogate (0.2), the value loss and an entropy bonus; Adam, clipping, bf16 autocast, 60 iterations; the mean reward and the losses read back every 5 iterations")
def station_dispatch_ppo_train(rng):
    envs, n_st, n_kind, n_unit, f, hidden = _smoke(512, 4), _smoke(16, 4), 6, 4, 18, _smoke(128, 16)
    policy = _DispatchPolicy(f, hidden).cuda()
    opt = torch.optim.Adam(policy.parameters(), lr=3e-4)
    gamma, lam, clip, iters, log_every = 0.99, 0.95, 0.2, _smoke(60, 2), _smoke(5, 1)
    st_xy = torch.rand(envs, n_st, 2, device="cuda")
    st_kind = torch.randint(0, n_unit, (envs, n_st), device="cuda")
    suits = (torch.rand(n_kind, n_unit, device="cuda") < 0.5).float()
    suits[:, 0] = 1.0
    busy = torch.zeros(envs, n_st, device="cuda")

    def incident():
        return (torch.rand(envs, 2, device="cuda"), torch.randint(0, n_kind, (envs,), device="cuda"),
                torch.rand(envs, device="cuda"))

    def observe(busy, inc):
        xy, kind, sev = inc
        off = st_xy - xy[:, None]
        dist = off.pow(2).sum(-1).sqrt()
        ok = suits[kind[:, None], st_kind]
        frac = (busy > 0).float().mean(1, keepdim=True).expand(envs, n_st)
        obs = torch.cat([off, dist[..., None], (busy / 10.0)[..., None], (busy > 0).float()[..., None],
                         _F.one_hot(st_kind, n_unit).float(), ok[..., None],
                         _F.one_hot(kind, n_kind).float()[:, None].expand(envs, n_st, n_kind),
                         sev[:, None, None].expand(envs, n_st, 1), frac[..., None]], -1)
        return obs, busy > 0, dist, ok

    inc = incident()
    for it in range(iters):
        n_steps, n_mb = rng.randint(_smoke(24, 2), _smoke(40, 3)), rng.randint(_smoke(4, 1), _smoke(8, 2))
        o_l, m_l, a_l, lp_l, v_l, r_l = [], [], [], [], [], []
        policy.eval()
        with torch.no_grad():
            for s in range(n_steps):
                obs, mask, dist, ok = observe(busy, inc)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits, value = policy(obs, mask)
                gumbel = -torch.log(-torch.log(torch.rand_like(logits).clamp(1e-6, 1.0 - 1e-6)))
                act = (logits + gumbel).argmax(-1)
                logp = logits.log_softmax(-1).gather(1, act[:, None])[:, 0]
                pick = _F.one_hot(act, n_st + 1).float()
                resp = 1.0 + 8.0 * (pick[:, :n_st] * dist).sum(-1) + 2.0 * (pick[:, :n_st] * (1.0 - ok)).sum(-1)
                cost = resp * (1.0 - pick[:, n_st]) + 6.0 * pick[:, n_st]
                r = -cost * (0.5 + inc[2])
                busy = (busy - 1.0).clamp_min(0.0) + pick[:, :n_st] * (2.0 + 8.0 * inc[2])[:, None]
                o_l.append(obs)
                m_l.append(mask)
                a_l.append(act)
                lp_l.append(logp)
                v_l.append(value)
                r_l.append(r)
                inc = incident()
            obs, mask, _, _ = observe(busy, inc)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                _, last_v = policy(obs, mask)
            adv, nxt, advs = torch.zeros(envs, device="cuda"), last_v, []
            for s in reversed(range(n_steps)):
                delta = r_l[s] + gamma * nxt - v_l[s]
                adv = delta + gamma * lam * adv
                advs.append(adv)
                nxt = v_l[s]
            adv_t = torch.stack(advs[::-1]).flatten()
            ret_t = adv_t + torch.stack(v_l).flatten()
            adv_t = (adv_t - adv_t.mean()) / (adv_t.std() + 1e-6)
            o_t, m_t = torch.stack(o_l).flatten(0, 1), torch.stack(m_l).flatten(0, 1)
            a_t, lp_t, mean_r = torch.stack(a_l).flatten(), torch.stack(lp_l).flatten(), torch.stack(r_l).mean()
        del o_l, m_l, a_l, lp_l, v_l, r_l, advs, obs, mask, logits, value, gumbel, act, logp, pick, resp, cost, r
        policy.train()
        total, mb = n_steps * envs, n_steps * envs // n_mb
        for ep in range(3):
            perm = torch.randperm(total, device="cuda")
            for i in range(n_mb):
                idx = perm[i * mb:(i + 1) * mb]
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits, value = policy(o_t.index_select(0, idx), m_t.index_select(0, idx))
                logp_all = logits.log_softmax(-1)
                logp = logp_all.gather(1, a_t.index_select(0, idx)[:, None])[:, 0]
                ratio = (logp - lp_t.index_select(0, idx)).exp()
                a_mb = adv_t.index_select(0, idx)
                l_pi = -torch.minimum(ratio * a_mb, ratio.clamp(1.0 - clip, 1.0 + clip) * a_mb).mean()
                l_v = _F.mse_loss(value, ret_t.index_select(0, idx))
                ent = -(logp_all.exp() * logp_all).sum(-1).mean()
                loss = l_pi + 0.5 * l_v - 0.01 * ent
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
                opt.step()
                del idx, logits, value, logp_all, logp, ratio, a_mb
            del perm
        if it % log_every == 0:
            torch.stack([mean_r, l_pi.detach(), l_v.detach(), ent.detach()]).tolist()
        del adv, nxt, adv_t, ret_t, o_t, m_t, a_t, lp_t, mean_r, l_pi, l_v, ent, loss, last_v

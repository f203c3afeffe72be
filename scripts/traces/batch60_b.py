"""The sixtieth batch of held-out workloads for record.py, second half (batch60.py has the first): transportation,
autonomous driving and urban mobility on the GPU, written in torch alone. Ride-hailing demand forecasting and
dispatch (cities of a drawn number of zones (256-1,024) with a zone graph from centroid distances, demand and supply
series made on the device with daily and weekly cycles, a spatio-temporal graph model of gated temporal
convolutions and two-hop graph diffusion predicting six 15-minute intervals of demand by a Poisson loss; every so
often a dispatch round matching a drawn number of idle drivers to open requests by log-domain Sinkhorn iterations
over pickup costs with a repositioning bonus from the forecast), traffic-signal control by multi-agent reinforcement
learning in the manner of CoLight (grids of a drawn number of intersections (4x4 to 12x12) simulated in batch on the
device as 12 movement queues each, arrivals at the border drawn, eight signal phases, vehicles passed downstream by
index_add; a graph-attention policy over each intersection and its four neighbours, advantage actor-critic with GAE
over 24-step rollouts; evaluations against fixed-time control), trip ETA regression with a route transformer (trips
as sequences of 10-400 road segments (drawn), segment-id embeddings of a 400,000-segment network with per-segment
features, time-of-day and weekday embeddings, a transformer encoder over each route with padding masks, batches by a
token budget; per-segment and whole-trip losses, MAPE evaluations), and a lidar scene-flow estimation service (pairs
of point clouds of 4,096-16,384 points (drawn) uploaded from reused pinned host buffers on a side stream one frame
ahead, a FlowNet3D-style estimator of random init: per-point features, a cost volume from the 16 nearest neighbours
in the next frame found in chunks, a flow head and a refinement iteration after warping; end-point error on
known-motion probe frames). Same conventions as the earlier batches: nothing downloaded, data drawn at random on the
device (or, for the scene-flow service, from a few reused pinned host buffers), `rng` the workload's random.Random
for every shape, count and sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny.
No control flow reads a tensor's value: counts are fixed on the host (Sinkhorn's iterations, the rollout's length,
the number of drivers and requests), masks multiplied or added in, no boolean-mask indexing; losses, match rates,
queue lengths, MAPEs and flows are read back only at logging points (the service returns each frame's flow
statistics, as a service must). lidar_sceneflow_serve uses a side stream (uploads waited on by event, the tensors
record_stream'ed); the others are single-stream. The graph model, the signal policy, the route transformer and the
flow MLPs run under bf16 autocast; the Sinkhorn iterations, the traffic simulation, the neighbour search and the
losses are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch60.py's header says the same of its half): every workload of this half
was run on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with the helper's runner
(/tmp/b60/meta_run.py, not committed, a copy of /work/notes/meta_run.py: smoke_cpu.py's patching with "cuda" mapped
to "meta", readbacks answered with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking a math
path, streams, events and pinned memory no-ops; boolean-mask indexing, which the meta device cannot size, is
avoided), its op outputs counted there (events about 1.8x that count) and its peak live bytes tracked:
rideshare_demand_dispatch_train 319,242 op outputs, peak 2.38 GB; traffic_signal_colight_train 313,312,
0.88 GB; trip_eta_route_transformer_train 283,867, 3.47 GB; lidar_sceneflow_serve 353,402, 0.42 GB
(peaks in fp32 where autocast would take bf16). record_new60.sh's header has them too. The CPU smoke run
(RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, _square_distance, mlp as _mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- ride-hailing demand forecasting and dispatch


def _city(z, k, dev="cuda"):
    """z zone centroids (km) of a city, a row-normalised adjacency keeping each zone's k nearest by a Gaussian
    kernel, and per-zone base demand rates (a dense centre and suburbs)."""
    xy = torch.randn(z, 2, device=dev) * 6
    d2 = _square_distance(xy[None], xy[None])[0]
    w = torch.exp(-d2 / 4)
    top = w.topk(k, -1)
    a = torch.zeros(z, z, device=dev).scatter_(1, top.indices, top.values)
    a = a / a.sum(1, keepdim=True)
    base = 2 + 30 * torch.exp(-xy.pow(2).sum(-1) / 40) * torch.rand(z, device=dev)
    return xy, a, base


def _demand_windows(b, base, hist, horizon, dev="cuda"):
    """b windows of hist past and horizon future 15-minute intervals at drawn start times: demand counts drawn
    Poisson-like (rate plus Gaussian noise, rounded), supply, and the time of day and weekday features."""
    z = base.shape[0]
    t0 = torch.randint(0, 96 * 7, (b, 1), device=dev).float()
    t = t0 + torch.arange(hist + horizon, device=dev).float()[None]
    day = torch.sin(2 * math.pi * t / 96)[..., None]
    week = torch.cos(2 * math.pi * t / (96 * 7))[..., None]
    rate = base[None, None] * (1.3 + day + 0.3 * week) * (0.8 + 0.4 * torch.rand(b, 1, z, device=dev))
    dem = (rate + rate.sqrt() * torch.randn_like(rate)).clamp_min(0).round()  # (b, T, z)
    sup = (rate * 0.9 + 2 * torch.randn_like(rate)).clamp_min(0)
    x = torch.stack([dem[:, :hist].log1p(), sup[:, :hist].log1p(), day[:, :hist].expand(-1, -1, z),
                     week[:, :hist].expand(-1, -1, z)], -1)  # (b, hist, z, 4)
    return x, dem[:, hist:]


class _STGraph(_nn.Module):
    def __init__(self, cin, h, layers, horizon, hist):
        super().__init__()
        self.inp = _nn.Linear(cin, h)
        self.filt = _nn.ModuleList(_nn.Conv2d(h, h, (1, 3), padding=(0, 1)) for _ in range(layers))
        self.gate = _nn.ModuleList(_nn.Conv2d(h, h, (1, 3), padding=(0, 1)) for _ in range(layers))
        self.hop1 = _nn.ModuleList(_nn.Linear(h, h) for _ in range(layers))
        self.hop2 = _nn.ModuleList(_nn.Linear(h, h) for _ in range(layers))
        self.norm = _nn.ModuleList(_nn.LayerNorm(h) for _ in range(layers))
        self.out = _nn.Sequential(_nn.Linear(h * hist, 2 * h), _nn.ReLU(), _nn.Linear(2 * h, horizon))

    def forward(self, x, a):
        # x (b, T, z, c); a (z, z)
        h = self.inp(x)  # (b, T, z, h)
        for f, g, h1, h2, nm in zip(self.filt, self.gate, self.hop1, self.hop2, self.norm):
            c = h.permute(0, 3, 2, 1)  # (b, h, z, T)
            t = (torch.tanh(f(c)) * torch.sigmoid(g(c))).permute(0, 3, 2, 1)
            n1 = torch.einsum("zy,btyh->btzh", a.to(t.dtype), t)
            n2 = torch.einsum("zy,btyh->btzh", a.to(t.dtype), n1)
            h = nm(h + t + h1(n1) + h2(n2))
        return self.out(h.permute(0, 2, 1, 3).flatten(2)).transpose(1, 2)  # (b, horizon, z) log rates


def _sinkhorn(cost, mu, nu, eps, iters):
    """Log-domain entropic optimal transport between driver and request marginals; returns the log plan."""
    la, lb = mu.log(), nu.log()
    f = torch.zeros_like(mu)
    g = torch.zeros_like(nu)
    for _ in range(iters):
        f = eps * (la - torch.logsumexp((g[None] - cost) / eps, 1))
        g = eps * (lb - torch.logsumexp((f[:, None] - cost) / eps, 0))
    return (f[:, None] + g[None] - cost) / eps


@_workload("ride-hailing demand forecasting and dispatch written by hand (random init): 3 cities of 256, 512 or 1,024 zones (drawn) with an 8-nearest-zone graph from centroid distances, demand and supply series of 15-minute intervals made on the device with daily and weekly cycles; a spatio-temporal graph model (hidden 64, 3 layers of gated temporal convolutions and two-hop graph diffusion, LayerNorm) from 12 past intervals to 6 future demand rates, Poisson NLL; batches of 8-32 windows (drawn), a city switched every 100 steps; bf16 autocast, Adam, 900 steps; every 50 a dispatch round: 500-3,000 idle drivers and 500-3,000 open requests (drawn) in the city, pickup costs from distances less a repositioning bonus from the forecast, 60 log-domain Sinkhorn iterations (fp32), greedy assignment by argmax, the match rate and mean pickup distance read back")
def rideshare_demand_dispatch_train(rng):
    hist, horizon, h = 12, 6, _smoke(64, 8)
    model = _STGraph(4, h, _smoke(3, 1), horizon, hist).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    zones = _smoke([256, 512, 1024], [16, 24])
    cities = [_city(rng.choice(zones), 8) for _ in range(3)]
    steps = _smoke(900, 4)
    xy, a, base = cities[0]
    for step in range(steps):
        model.train()
        if step % _smoke(100, 2) == 0:
            xy, a, base = cities[rng.randrange(3)]
        x, y = _demand_windows(rng.randint(_smoke(8, 2), _smoke(32, 3)), base, hist, horizon)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logr = model(x, a)
        logr = logr.float()
        loss = (logr.exp() - y * logr).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        del x, y, logr
        if step % 50 == 0:
            float(loss)
        if (step + 1) % _smoke(50, 2) == 0:
            model.eval()
            with torch.no_grad():
                x, y = _demand_windows(1, base, hist, horizon)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    fc = model(x, a).float().exp()[0, 0]  # next interval's demand per zone
                nd, nr = rng.randint(_smoke(500, 8), _smoke(3000, 16)), rng.randint(_smoke(500, 8), _smoke(3000, 16))
                z = xy.shape[0]
                dz = torch.randint(0, z, (nd,), device="cuda")
                rz = torch.multinomial(fc / fc.sum(), nr, replacement=True)
                dpos = xy[dz] + 0.5 * torch.randn(nd, 2, device="cuda")
                rpos = xy[rz] + 0.5 * torch.randn(nr, 2, device="cuda")
                dist = _square_distance(dpos[None], rpos[None])[0].clamp_min(0).sqrt()
                bonus = 0.1 * (fc[rz] / fc.mean()).log1p()[None]
                cost = dist - bonus
                mu = torch.full((nd,), 1.0 / nd, device="cuda")
                nu = torch.full((nr,), 1.0 / nr, device="cuda")
                plan = _sinkhorn(cost, mu, nu, 0.5, _smoke(60, 4))
                assign = plan.argmax(1)
                taken = torch.zeros(nr, device="cuda").index_add_(0, assign, torch.ones(nd, device="cuda"))
                served = taken.clamp_max(1).sum() / nr
                pick = dist.gather(1, assign[:, None]).mean()
                torch.stack([served, pick, (fc.sum() - y[0, 0].sum()).abs() / y[0, 0].sum().clamp_min(1)]).tolist()
                del x, y, fc, dz, rz, dpos, rpos, dist, bonus, cost, plan, assign, taken


# ---------------------------------------------------------------- traffic-signal control by multi-agent RL (CoLight)


_PHASES = torch.tensor([  # 12 movements (N, E, S, W approaches x left, through, right); rights always allowed
    [0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 0, 1], [1, 0, 1, 0, 0, 1, 1, 0, 1, 0, 0, 1],
    [0, 0, 1, 0, 1, 1, 0, 0, 1, 0, 1, 1], [0, 0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1],
    [1, 1, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1], [0, 0, 1, 1, 1, 1, 0, 0, 1, 0, 0, 1],
    [0, 0, 1, 0, 0, 1, 1, 1, 1, 0, 0, 1], [0, 0, 1, 0, 0, 1, 0, 0, 1, 1, 1, 1]], dtype=torch.float32)


def _grid_net(n, dev="cuda"):
    """An n x n grid: neighbour ids (n*n, 4) in N, E, S, W order (self where at the border, with a 0/1 mask),
    and for each (intersection, movement) the downstream intersection and the incoming lane group it joins
    (or the intersection itself with a 0 weight when the movement leaves the grid)."""
    i = torch.arange(n * n, device=dev)
    r, c = i // n, i % n
    dr = torch.tensor([-1, 0, 1, 0], device=dev)
    dc = torch.tensor([0, 1, 0, -1], device=dev)
    nr, nc = r[:, None] + dr, c[:, None] + dc
    inside = ((nr >= 0) & (nr < n) & (nc >= 0) & (nc < n)).float()
    nb = torch.where(inside > 0, nr.clamp(0, n - 1) * n + nc.clamp(0, n - 1), i[:, None])
    # movement m = approach*3 + turn, approach a (vehicles coming from direction a), turn 0 left 1 through 2 right
    app = torch.arange(12, device=dev) // 3
    turn = torch.arange(12, device=dev) % 3
    exit_dir = (app + 2 + torch.tensor([1, 0, -1], device=dev)[turn]) % 4  # heading after the turn
    down = nb[:, exit_dir]  # (n*n, 12)
    keep = inside[:, exit_dir]
    enter_app = (exit_dir + 2) % 4  # the downstream approach it arrives from
    lane = (enter_app[None] * 3).expand(n * n, -1)  # joins the downstream approach's first lane group
    border = 1 - inside  # approaches fed from outside
    return nb, inside, down * 12 + lane, keep, border


class _CoLight(_nn.Module):
    def __init__(self, h, heads):
        super().__init__()
        self.h, self.heads = h, heads
        self.emb = _mlp(12 + 8, h, h)
        self.att = _nn.ModuleList(_nn.Linear(h, 3 * h) for _ in range(2))
        self.proj = _nn.ModuleList(_nn.Linear(h, h) for _ in range(2))
        self.pi = _nn.Sequential(_nn.Linear(h, h), _nn.ReLU(), _nn.Linear(h, 8))
        self.v = _nn.Sequential(_nn.Linear(h, h), _nn.ReLU(), _nn.Linear(h, 1))

    def forward(self, obs, nb, nmask):
        # obs (B, n*n, 20); nb (n*n, 4) neighbour ids; nmask (n*n, 4)
        x = self.emb(obs)
        idx = torch.cat([torch.arange(nb.shape[0], device=nb.device)[:, None], nb], 1)  # self + 4
        m = torch.cat([torch.ones_like(nmask[:, :1]), nmask], 1)
        for att, proj in zip(self.att, self.proj):
            q, k, v = att(x).chunk(3, -1)
            kk, vv = k[:, idx], v[:, idx]  # (B, N, 5, h)
            qh = q.unflatten(-1, (self.heads, -1))
            kh, vh = kk.unflatten(-1, (self.heads, -1)), vv.unflatten(-1, (self.heads, -1))
            s = torch.einsum("bnhd,bnkhd->bnhk", qh, kh) / math.sqrt(qh.shape[-1])
            s = s + ((m - 1) * 1e4)[None, :, None, :].to(s.dtype)
            w = s.softmax(-1)
            x = x + _F.relu(proj(torch.einsum("bnhk,bnkhd->bnhd", w, vh).flatten(2)))
        return self.pi(x), self.v(x)[..., 0]


@_workload("traffic-signal control by multi-agent reinforcement learning written by hand in the manner of CoLight (random init): road grids of 4x4, 6x6, 8x8 or 12x12 intersections (drawn, a new grid every 30 updates) simulated in batch on the device for 16-48 parallel environments (drawn), 12 movement queues an intersection, border arrivals drawn each step, 8 signal phases with a saturation flow, served vehicles passed to the downstream intersection's approach by index_add; a graph-attention policy (hidden 64, 2 layers of 4-head attention over each intersection and its four neighbours by gather) with actor and critic heads shared by all intersections; phases sampled by Gumbel-max, advantage actor-critic with GAE over 24-step rollouts, the policy re-evaluated over the stacked rollout; bf16 autocast for the policy, fp32 simulation, Adam, 120 updates; every 60 a 24-step greedy evaluation against fixed-time cycling, mean queue lengths read back")
def traffic_signal_colight_train(rng):
    h, heads, horizon = _smoke(64, 8), _smoke(4, 2), _smoke(24, 3)
    policy = _CoLight(h, heads).cuda()
    opt = torch.optim.Adam(policy.parameters(), lr=5e-4)
    phases = _PHASES.cuda()
    sat, gamma, lam = 3.0, 0.97, 0.95
    sizes = _smoke([4, 6, 8, 12], [2, 3])
    updates = _smoke(120, 3)

    def obs_of(q, ph):
        return torch.cat([q / 20.0, _F.one_hot(ph, 8).float()], -1)

    def env_step(q, act, net, rate):
        nb, nmask, target, keep, border = net
        e, n = q.shape[:2]
        served = torch.minimum(q, sat * phases[act])  # (e, n, 12)
        q = q - served
        moved = (served * keep[None]).flatten(1)
        q = q.flatten(1).index_add(1, target.flatten(), moved).view(e, n, 12)
        arr = (torch.rand(e, n, 4, 3, device="cuda") < rate).float() * border[None, :, :, None]
        q = q + arr.flatten(2)
        return q, -q.sum(-1) / 20.0

    n = rng.choice(sizes)
    net = _grid_net(n)
    for up in range(updates):
        if up % _smoke(30, 2) == 0:
            n = rng.choice(sizes)
            net = _grid_net(n)
        e = rng.randint(_smoke(16, 2), _smoke(48, 3))
        rate = rng.uniform(0.15, 0.45)
        nb, nmask = net[0], net[1]
        q = torch.rand(e, n * n, 12, device="cuda") * 5
        ph = torch.zeros(e, n * n, dtype=torch.long, device="cuda")
        obs, acts, rews, vals = [], [], [], []
        policy.eval()
        with torch.no_grad():
            for _t in range(horizon):
                o = obs_of(q, ph)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits, v = policy(o, nb, nmask)
                g = -torch.log(-torch.log(torch.rand(logits.shape, device="cuda").clamp(1e-9, 1 - 1e-9)))
                ph = (logits.float() + g).argmax(-1)
                q, r = env_step(q, ph, net, rate)
                obs.append(o)
                acts.append(ph)
                rews.append(r)
                vals.append(v.float())
            with torch.autocast("cuda", dtype=torch.bfloat16):
                last = policy(obs_of(q, ph), nb, nmask)[1].float()
            adv, gae = [], torch.zeros_like(last)
            for t in reversed(range(horizon)):
                nxt = vals[t + 1] if t + 1 < horizon else last
                gae = rews[t] + gamma * nxt - vals[t] + gamma * lam * gae
                adv.append(gae)
            adv = torch.stack(adv[::-1])  # (T, e, n)
            ret = adv + torch.stack(vals)
            adv = (adv - adv.mean()) / (adv.std() + 1e-6)
        policy.train()
        ob = torch.stack(obs).flatten(0, 1)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits, v = policy(ob, nb, nmask)
        logp = torch.log_softmax(logits.float(), -1)
        a = torch.stack(acts).flatten(0, 1)
        lp = logp.gather(-1, a[..., None])[..., 0]
        ent = -(logp.exp() * logp).sum(-1).mean()
        loss = -(lp * adv.flatten(0, 1)).mean() + 0.5 * (v.float() - ret.flatten(0, 1)).pow(2).mean() - 0.01 * ent
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
        opt.step()
        del obs, acts, rews, vals, adv, ret, ob, logits, v, logp, a, lp
        if up % 10 == 0:
            torch.stack([loss.detach(), q.sum(-1).mean()]).tolist()
        if (up + 1) % _smoke(60, 3) == 0:
            policy.eval()
            res = []
            with torch.no_grad():
                for mode in ("greedy", "fixed"):
                    q = torch.rand(16, n * n, 12, device="cuda") * 5
                    ph = torch.zeros(16, n * n, dtype=torch.long, device="cuda")
                    tot = torch.zeros((), device="cuda")
                    for t in range(horizon):
                        if mode == "greedy":
                            with torch.autocast("cuda", dtype=torch.bfloat16):
                                ph = policy(obs_of(q, ph), nb, nmask)[0].float().argmax(-1)
                        else:
                            ph = torch.full_like(ph, (t // 3) % 8)
                        q, _r = env_step(q, ph, net, rate)
                        tot = tot + q.sum(-1).mean()
                    res.append(tot / horizon)
            torch.stack(res).tolist()


# ---------------------------------------------------------------- trip ETA regression with a route transformer


class _RouteETA(_nn.Module):
    def __init__(self, nseg, d, depth, heads):
        super().__init__()
        self.seg = _nn.Embedding(nseg, d)
        self.feat = _nn.Linear(6, d)
        self.tod = _nn.Embedding(288, d)
        self.dow = _nn.Embedding(7, d)
        self.pos = _nn.Embedding(512, d)
        self.enc = _nn.ModuleList(PreNormBlock(d, heads, 4 * d) for _ in range(depth))
        self.norm = _nn.LayerNorm(d)
        self.per_seg = _nn.Linear(d, 1)
        self.trip = _nn.Sequential(_nn.Linear(2 * d, d), _nn.GELU(), _nn.Linear(d, 1))

    def forward(self, ids, feats, tod, dow, valid):
        b, s = ids.shape
        x = self.seg(ids) + self.feat(feats) + self.pos.weight[:s][None] + (self.tod(tod) + self.dow(dow))[:, None]
        mask = ((valid - 1.0) * 1e4)[:, None, None, :].to(x.dtype)
        for blk in self.enc:
            x = blk(x, mask)
        x = self.norm(x)
        seg_t = _F.softplus(self.per_seg(x)[..., 0]) * valid.to(x.dtype)  # per-segment seconds / 10
        pooled = torch.cat([(x * valid[..., None].to(x.dtype)).sum(1) / valid.sum(1, keepdim=True).to(x.dtype),
                            x.amax(1)], -1)
        return seg_t, seg_t.sum(1) + _F.softplus(self.trip(pooled)[:, 0])


def _trips(lengths, nseg, s, teacher, dev="cuda"):
    """Routes of the given lengths padded to s: consecutive segment ids along a drawn start (roads are numbered
    along corridors), segment features (length, speed limit, lanes, class, signal, turn) and travel times from a
    congestion teacher by time of day, with noise."""
    b = len(lengths)
    valid = (torch.arange(s, device=dev)[None] < torch.tensor(lengths, device=dev)[:, None]).float()
    start = torch.randint(0, nseg - s, (b, 1), device=dev)
    ids = start + torch.arange(s, device=dev)[None] + torch.randint(0, 3, (b, s), device=dev).cumsum(1)
    ids = ids.clamp_max(nseg - 1)
    seglen, limit, cong = teacher
    tod = torch.randint(0, 288, (b,), device=dev)
    dow = torch.randint(0, 7, (b,), device=dev)
    peak = 1 + 0.8 * torch.exp(-((tod.float() - 102) ** 2) / 200) + 0.6 * torch.exp(-((tod.float() - 210) ** 2) / 300)
    feats = torch.stack([seglen[ids] / 500, limit[ids] / 30, torch.randint(1, 5, (b, s), device=dev).float() / 4,
                         cong[ids], (torch.rand(b, s, device=dev) < 0.2).float(),
                         torch.randn(b, s, device=dev)], -1) * valid[..., None]
    secs = seglen[ids] / limit[ids] * (1 + cong[ids] * peak[:, None]) * (0.9 + 0.2 * torch.rand(b, s, device=dev))
    secs = secs * valid / 10
    return ids * valid.long(), feats, tod, dow, valid, secs


@_workload("trip ETA regression with a route transformer written by hand (random init, in the manner of DeepTTE and route-based ETA models): trips as sequences of 10-400 road segments (drawn, log-uniform) of a 400,000-segment network, segment-id embeddings (width 192) with per-segment features (length, speed limit, lanes, congestion, signals), time-of-day and weekday embeddings; a 4-layer transformer encoder (6 heads, padding masks) with per-segment travel-time and whole-trip heads; batches by a token budget of 8,192-24,576 (drawn) of routes sorted into length buckets and padded to the bucket's longest; loss: per-segment L1 plus the trip MAPE; bf16 autocast, AdamW with warmup and cosine decay, 470 steps; every 120 a MAPE and 90th-percentile error evaluation on 8 held-out batches of long and short trips (no grad) read back")
def trip_eta_route_transformer_train(rng):
    nseg, d = _smoke(400000, 2000), _smoke(192, 24)
    model = _RouteETA(nseg, d, _smoke(4, 1), _smoke(6, 2)).cuda()
    steps = _smoke(470, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=4e-4, weight_decay=0.01)
    warm = max(1, steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda i: min(1.0, (i + 1) / warm) * 0.5 * (1 + math.cos(math.pi * min(1.0, i / steps))))
    teacher = (50 + 450 * torch.rand(nseg, device="cuda"), 8 + 22 * torch.rand(nseg, device="cuda"),
               torch.rand(nseg, device="cuda"))
    lmin, lmax = _smoke(10, 4), _smoke(400, 16)

    def batch(budget):
        cap = int(_loguniform(rng, lmin, lmax))
        n = max(1, budget // cap)
        lengths = [rng.randint(max(lmin, cap // 2), cap) for _ in range(n)]
        return _trips(lengths, nseg, max(lengths), teacher)

    for step in range(steps):
        model.train()
        ids, feats, tod, dow, valid, secs = batch(rng.randint(_smoke(8192, 64), _smoke(24576, 128)))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            seg_t, trip_t = model(ids, feats, tod, dow, valid)
        total = secs.sum(1)
        l_seg = ((seg_t.float() - secs).abs() * valid).sum() / valid.sum()
        mape = ((trip_t.float() - total).abs() / total.clamp_min(1.0)).mean()
        loss = l_seg + mape
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        del ids, feats, tod, dow, valid, secs, seg_t, trip_t, total
        if step % 25 == 0:
            torch.stack([l_seg, mape]).tolist()
        if (step + 1) % _smoke(120, 3) == 0:
            model.eval()
            errs = []
            with torch.no_grad():
                for _e in range(_smoke(8, 2)):
                    ids, feats, tod, dow, valid, secs = batch(_smoke(16384, 64))
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        _s, trip_t = model(ids, feats, tod, dow, valid)
                    total = secs.sum(1)
                    errs.append((trip_t.float() - total).abs() / total.clamp_min(1.0))
                    del ids, feats, tod, dow, valid, secs, _s, trip_t
                e = torch.cat(errs)
                torch.stack([e.mean(), torch.quantile(e, 0.9)]).tolist()


# ---------------------------------------------------------------- lidar scene-flow estimation service


class _SceneFlow(_nn.Module):
    def __init__(self, h):
        super().__init__()
        self.enc = _mlp(3, h, h)
        self.cost = _mlp(2 * h + 3, h, h)
        self.flow = _mlp(2 * h, h, 3)

    def cost_volume(self, p1, f1, p2, f2, k, chunk):
        # p1 (n, 3) queries with features f1; p2 (m, 3) targets with f2: the k nearest targets' features and offsets
        out = []
        for c0 in range(0, p1.shape[0], chunk):
            q = p1[c0:c0 + chunk]
            d = _square_distance(q[None].float(), p2[None].float())[0]
            nn_idx = d.topk(k, -1, largest=False).indices  # (c, k)
            rel = p2[nn_idx] - q[:, None]
            fe = torch.cat([f1[c0:c0 + chunk, None].expand(-1, k, -1), f2[nn_idx], rel.to(f2.dtype)], -1)
            out.append(self.cost(fe).amax(1))
            del d, nn_idx, rel, fe
        return torch.cat(out)


@_workload("lidar scene-flow estimation service written by hand in the manner of FlowNet3D (random init): consecutive lidar sweeps of 4,096-16,384 points (drawn per frame pair), both clouds uploaded from reused pinned host buffers on a side stream one frame ahead (waited on by event, record_stream'ed); per-point MLP features (hidden 64), a cost volume from the 16 nearest next-frame points of every point found by squared distances and top-k in chunks of 2,048 queries, a flow head, then one refinement: the cloud warped by the flow, neighbours searched again and a residual flow; bf16 autocast for the MLPs, fp32 neighbour search; 1,350 frame pairs, the mean flow and a motion-segmentation fraction read back a frame, and every 25 a probe pair with known rigid ego-motion and object motions whose end-point error is read back")
def lidar_sceneflow_serve(rng):
    dev = "cuda"
    h, k, chunk = _smoke(64, 8), _smoke(16, 4), _smoke(2048, 64)
    model = _SceneFlow(h).cuda().eval()
    nmax = _smoke(16384, 256)
    host = [torch.randn(2 * nmax * 3).pin_memory() for _ in range(2)]
    for hb in host:  # a ring of points around the sensor, the second sweep nudged forward
        v = hb.view(2, nmax, 3)
        v[..., :2] *= 20
        v[..., 2] *= 0.5
        v[1, :, 0] += 0.8
    side = torch.cuda.Stream()
    done = [None, None]

    def fetch(i):
        n = rng.randint(_smoke(4096, 64), nmax)
        s = i % 2
        if done[s] is not None:
            done[s].synchronize()
        with torch.cuda.stream(side):
            x = host[s][: 2 * n * 3].to(dev, non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        done[s] = ev
        return x, n, ev

    def estimate(p1, p2):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            f1, f2 = model.enc(p1), model.enc(p2)
            c = model.cost_volume(p1, f1, p2, f2, k, chunk)
            flow = model.flow(torch.cat([f1, c], -1)).float()
            warped = p1 + flow
            fw = model.enc(warped)
            c2 = model.cost_volume(warped, fw, p2, f2, k, chunk)
            flow = flow + model.flow(torch.cat([fw, c2], -1)).float()
        return flow

    nreq = _smoke(1350, 4)
    nxt = fetch(0)
    for req in range(nreq):
        x, n, ev = nxt
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        x.record_stream(cur)
        if req + 1 < nreq:
            nxt = fetch(req + 1)
        with torch.no_grad():
            p1, p2 = x.view(2, n, 3).unbind(0)
            if req % 25 == 0:  # a probe pair with known motion replaces the upload
                ang = rng.uniform(-0.05, 0.05)
                rot = torch.tensor([[math.cos(ang), -math.sin(ang), 0.0], [math.sin(ang), math.cos(ang), 0.0],
                                    [0.0, 0.0, 1.0]], device=dev)
                p1 = torch.randn(n, 3, device=dev) * torch.tensor([20.0, 20.0, 0.5], device=dev)
                obj = (torch.rand(n, 1, device=dev) < 0.2).float() * torch.randn(1, 3, device=dev)
                gt = p1 @ rot.T + torch.tensor([0.8, 0.0, 0.0], device=dev) + obj - p1
                p2 = p1 + gt + 0.02 * torch.randn(n, 3, device=dev)
            flow = estimate(p1, p2)
            moving = (flow.norm(dim=-1) > 0.3).float().mean()
            torch.stack([flow.mean(0).norm(), moving]).cpu()
            if req % 25 == 0:
                (flow - gt).norm(dim=-1).mean().tolist()
            del x, p1, p2, flow

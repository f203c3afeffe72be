"""The hundred-and-fourteenth batch of held-out workloads for record.py, second half (see batch114.py): railways and
rail transport, written in torch alone. Train delay propagation forecasting training (a diffusion-convolutional GRU,
DCRNN-style, written out step by step over the station graphs of rail networks of drawn sizes: neighbour messages by
index_select and index_add inside every gate, an encoder over the observed time slots and a decoder over the
forecast horizon under teacher forcing), single-track line dispatching policy training (PPO over a vectorised
single-track line simulated on the device: trains of both directions, passing loops, head-on conflicts counted by
scatter_add; an attention policy over each line's trains giving proceed-or-hold probabilities, GAE, clipped updates
over shuffled minibatches), a passenger-flow scenario diffusion sampler (an axial diffusion transformer with adaLN
conditioning, attention along each station's day and across the line's stations under a key mask, classifier-free
guidance and DDIM with drawn batch sizes, station counts, step counts and guidance scales per request) and a wayside
acoustic bearing monitoring service (rail-side microphone recordings of passing trains of drawn lengths turned into
log-mel spectrograms on the device by framing and a DFT matrix, one window per axle and side classified by a
convolutional stem and transformer blocks, each wagon's worst bearing folded into fleet statistics by index_add).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the acoustic service), `rng` the workload's random.Random for every shape, count and sampled choice,
sizes through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or
masked_fill; no boolean-mask indexing; results read back only at logging points or once per request.
wayside_acoustic_bearing_serve uploads its recordings on a side stream (two reused pinned host buffers, one request
ahead, through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16
autocast. Every position table is sized for the longest padded length that can be drawn.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, _sincos, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- train delay propagation (diffusion-conv GRU)


def _propagate(h, src, dst, w, deg):
    """The weighted mean of each station's neighbours' states: h[src] scaled by the edge weight, summed into dst by
    index_add (the destination made from the messages, so that the dtypes match), over the weighted in-degree."""
    msg = h.index_select(0, src) * w.to(h.dtype)[:, None]
    agg = msg.new_zeros(h.shape).index_add_(0, dst, msg)
    return agg / deg.to(agg.dtype)[:, None]


class _GraphGruCell(_nn.Module):
    """A GRU cell whose gates and candidate see the input, the state and the neighbours' mean state (DCRNN with one
    diffusion step), written out: reset and update gates from [x, h, A h], the candidate from [x, r h, A (r h)]."""

    def __init__(self, din, hidden):
        super().__init__()
        self.gates = _nn.Linear(din + 2 * hidden, 2 * hidden)
        self.cand = _nn.Linear(din + 2 * hidden, hidden)

    def forward(self, x, h, graph):
        r, u = torch.sigmoid(self.gates(torch.cat([x, h, _propagate(h, *graph)], -1))).chunk(2, -1)
        rh = r * h
        c = torch.tanh(self.cand(torch.cat([x, rh, _propagate(rh, *graph)], -1)))
        return u * h + (1 - u) * c


class _DelayDcrnn(_nn.Module):
    """Station features and a station-type embedding into a graph-GRU encoder over the observed slots, a graph-GRU
    decoder fed the previous slot's delays (teacher forcing), arrival and departure delays per slot."""

    def __init__(self, n_feat, n_type, hidden):
        super().__init__()
        self.stype = _nn.Embedding(n_type, 16)
        self.inp = _nn.Linear(n_feat + 16, 64)
        self.enc = _GraphGruCell(64, hidden)
        self.dec_in = _nn.Linear(2 + 16, 64)
        self.dec = _GraphGruCell(64, hidden)
        self.out = mlp(hidden, hidden, 2, act=_nn.GELU)
        self.hidden = hidden

    def forward(self, obs, stype, prev, graph):
        n, t_in, _ = obs.shape
        st = self.stype(stype)
        x = self.inp(torch.cat([obs, st[:, None].expand(n, t_in, 16)], -1))
        h = obs.new_zeros(n, self.hidden)
        for s in range(t_in):
            h = self.enc(x[:, s], h, graph)
        outs = []
        for s in range(prev.shape[1]):
            h = self.dec(self.dec_in(torch.cat([prev[:, s], st], -1)), h, graph)
            outs.append(self.out(h))
        return torch.stack(outs, 1).float()


@_workload("train delay propagation forecasting training (random init, a diffusion-convolutional GRU, DCRNN-style, written out step by step): 4-16 rail networks a step (drawn, at most 2,048 padded stations a step) of 64-256 station slots (drawn per step, a multiple of 32), each network's own 40 to that many stations (drawn, masked), 3 outgoing track links per station to random stations of its network plus the reversed links (links from or to padded stations weighted 0), 8 features per station and 15-minute slot (arrival and departure delays, trains due, trains cancelled, dwell overrun, weather, sin and cos of the time of day) and a station type (of 6) drawn on the device; an input layer (64), a graph-GRU encoder (hidden 128) over 8-16 observed slots (drawn per step) and a graph-GRU decoder over a 4-8 slot horizon (drawn per step) fed the previous slot's true delays, every gate and candidate seeing the neighbours' weighted mean state by index_select and index_add; a Huber loss on the arrival and departure delays of the valid stations; AdamW, clipping, bf16 autocast, 255 steps; the loss read back every 10 steps and every 85 steps a no-grad evaluation on 16 networks of 128 stations over 16 slots with an 8-slot horizon, the mean absolute error per horizon slot read back")
def train_delay_dcrnn_train(rng):
    n_feat, n_type, hidden, deg = 8, 6, _smoke(128, 16), 3
    model = _DelayDcrnn(n_feat, n_type, hidden).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    n_lo, n_hi, mult, budget = _smoke(64, 8), _smoke(256, 16), _smoke(32, 8), _smoke(2048, 48)

    def networks(counts, n, t_in, t_out):
        b = len(counts)
        keep = keep_mask(counts, n).flatten()
        cnt = torch.tensor(counts, device="cuda", dtype=torch.float32)
        base = (torch.arange(b, device="cuda") * n)[:, None, None]
        src = (torch.arange(n, device="cuda")[None, :, None] + base).expand(b, n, deg).flatten()
        dst = ((torch.rand(b, n, deg, device="cuda") * cnt[:, None, None]).long() + base).flatten()
        w = (keep[src] & keep[dst]).float()
        src, dst, w = torch.cat([src, dst]), torch.cat([dst, src]), torch.cat([w, w])
        dg = torch.zeros(b * n, device="cuda").index_add_(0, dst, w).clamp(min=1)
        obs = torch.randn(b * n, t_in, n_feat, device="cuda") * keep[:, None, None]
        stype = torch.randint(0, n_type, (b * n,), device="cuda")
        fut = torch.randn(b * n, t_out + 1, 2, device="cuda").cumsum(1) * keep[:, None, None]
        return (src, dst, w, dg), keep, obs, stype, fut[:, :-1], fut[:, 1:]

    steps = _smoke(255, 3)
    for step in range(steps):
        model.train()
        n = rng.randint(n_lo // mult, n_hi // mult) * mult
        b = rng.randint(_smoke(4, 2), max(_smoke(4, 2), min(_smoke(16, 3), budget // n)))
        t_in, t_out = rng.randint(_smoke(8, 2), _smoke(16, 3)), rng.randint(_smoke(4, 2), _smoke(8, 3))
        graph, keep, obs, stype, prev, fut = networks([rng.randint(min(40, n), n) for _ in range(b)], n, t_in, t_out)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(obs, stype, prev, graph)
        w = keep.float()[:, None, None]
        loss = (_F.huber_loss(pred, fut, reduction="none") * w).sum() / (w.sum() * t_out * 2)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            loss.detach().item()
        del graph, keep, obs, stype, prev, fut, pred, w, loss
        if (step + 1) % _smoke(85, 2) == 0:
            model.eval()
            with torch.no_grad():
                nb, nn_ = _smoke(16, 2), _smoke(128, 16)
                graph, keep, obs, stype, prev, fut = networks([nn_] * nb, nn_, _smoke(16, 3), _smoke(8, 3))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pred = model(obs, stype, prev, graph)
                out = ((pred - fut).abs().mean(-1) * keep.float()[:, None]).sum(0) / keep.float().sum()
            out.tolist()
            del graph, keep, obs, stype, prev, fut, pred, out


# ---------------------------------------------------------------- single-track dispatching (PPO)


class _DispatchPolicy(_nn.Module):
    """Per-train observations through an MLP and pre-norm blocks over the line's trains (a key mask for the padded
    train slots); a proceed logit per train and a value from the masked mean."""

    def __init__(self, n_obs, d, heads, layers):
        super().__init__()
        self.inp = mlp(n_obs, d, d, act=_nn.GELU)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.pi, self.v = _nn.Linear(d, 1), mlp(d, d, 1, act=_nn.GELU)

    def forward(self, obs, keep):
        x = self.inp(obs)
        for blk in self.blocks:
            x = blk(x, mask=keep[:, None, None, :])
        x = self.norm(x)
        w = keep[..., None].to(x.dtype)
        pooled = (x * w).sum(1) / w.sum(1).clamp(min=1)
        return self.pi(x)[..., 0].float(), self.v(pooled)[:, 0].float()


class _SingleTrackLine:
    """E single-track lines of S sections simulated on the device, M train slots each (the first `counts` valid):
    trains of both directions start at either end, move by their speed when told to proceed, and finish past the
    far end; a section holding trains of both directions is a head-on conflict unless it is a passing loop."""

    def __init__(self, counts, m, s):
        e = len(counts)
        self.s = s
        self.keep = keep_mask(counts, m)
        self.dir = torch.where(torch.rand(e, m, device="cuda") < 0.5, 1.0, -1.0)
        start = torch.rand(e, m, device="cuda") * 0.3 * s
        self.pos = torch.where(self.dir > 0, start, s - 1e-3 - start)
        self.speed = torch.rand(e, m, device="cuda") * 0.2 + 0.15
        self.delay = torch.zeros(e, m, device="cuda")
        self.loop = torch.rand(e, s, device="cuda") < 0.3

    def _occ(self, active):
        sec = self.pos.floor().long().clamp(0, self.s - 1)
        zero = torch.zeros(active.shape[0], self.s, device="cuda")
        fwd = zero.scatter_add(1, sec, (active & (self.dir > 0)).float())
        bwd = zero.scatter_add(1, sec, (active & (self.dir < 0)).float())
        return sec, fwd, bwd

    def obs(self):
        active = self.keep & (self.pos >= 0) & (self.pos < self.s)
        sec, fwd, bwd = self._occ(active)
        nxt = (sec + self.dir.long()).clamp(0, self.s - 1)
        opp_ahead = torch.where(self.dir > 0, bwd.gather(1, nxt), fwd.gather(1, nxt))
        loop_here, loop_next = self.loop.gather(1, sec).float(), self.loop.gather(1, nxt).float()
        o = torch.stack([self.pos / self.s, self.dir, self.delay / 10.0, self.speed, active.float(), opp_ahead,
                         loop_here, loop_next], -1)
        return o * self.keep[..., None], active

    def step(self, go, active):
        move = go * active.float()
        before = (self.pos >= 0) & (self.pos < self.s)
        self.pos = self.pos + self.dir * self.speed * move
        self.delay = self.delay + (1 - move) * active.float()
        now = self.keep & (self.pos >= 0) & (self.pos < self.s)
        _, fwd, bwd = self._occ(now)
        conflicts = ((fwd > 0) & (bwd > 0) & ~self.loop).float().sum(1)
        arrived = (before & ~now & self.keep).float().sum(1)
        return arrived - 0.05 * ((1 - move) * active.float()).sum(1) - 2.0 * conflicts, conflicts


@_workload("single-track line dispatching policy training (random init, PPO with an attention policy over a line's trains): 23 PPO iterations, each over 128-384 single-track lines (drawn per iteration) simulated on the device, 12-32 sections (drawn per iteration, about 30% of them passing loops, drawn on the device) and 8-24 train slots (drawn per iteration) with each line's own 4 to that many trains (drawn per line, masked), trains of both directions with drawn speeds starting near either end; 8 observations per train (position, direction, delay, speed, active, opposing trains in the next section and the loop flags of this and the next section, by scatter_add of occupancy and gather); a train MLP and 2 pre-norm blocks (width 128, 4 heads) under a key mask, a proceed logit per train (Bernoulli, sampled) and a value from the masked mean; rewards for arrivals, minus holding delay and head-on conflicts in non-loop sections; 32-64 rollout steps (drawn per iteration) without gradients, GAE (gamma 0.99, lambda 0.95) written out backwards; 3 epochs of 4 shuffled minibatches (randperm on the device, integer indexing) with the clipped surrogate, value and entropy losses; AdamW, clipping, bf16 autocast; the mean reward, conflicts and the approximate KL read back once per iteration")
def single_track_dispatch_ppo_train(rng):
    n_obs, d, heads, layers = 8, _smoke(128, 16), _smoke(4, 2), _smoke(2, 1)
    model = _DispatchPolicy(n_obs, d, heads, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.0)
    gamma, lam, clip, epochs, n_mb = 0.99, 0.95, 0.2, _smoke(3, 1), _smoke(4, 2)

    def log_prob(logit, act, keep):
        lp = act * _F.logsigmoid(logit) + (1 - act) * _F.logsigmoid(-logit)
        return (lp * keep.float()).sum(-1)

    iters = _smoke(23, 2)
    for _ in range(iters):
        e, s = rng.randint(_smoke(128, 4), _smoke(384, 6)), rng.randint(12, 32)
        m = rng.randint(_smoke(8, 4), _smoke(24, 6))
        horizon = rng.randint(_smoke(32, 3), _smoke(64, 4))
        env = _SingleTrackLine([rng.randint(4, m) for _ in range(e)], m, s)
        model.eval()
        obs_l, act_l, logp_l, val_l, rew_l, conf_l = [], [], [], [], [], []
        with torch.no_grad():
            for _ in range(horizon):
                o, active = env.obs()
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logit, v = model(o, env.keep)
                a = (torch.rand_like(logit) < torch.sigmoid(logit)).float()
                r, conf = env.step(a, active)
                obs_l.append(o)
                act_l.append(a)
                logp_l.append(log_prob(logit, a, env.keep))
                val_l.append(v)
                rew_l.append(r)
                conf_l.append(conf)
            _, last_v = model(env.obs()[0], env.keep)
            adv_l, gae, nxt = [], torch.zeros(e, device="cuda"), last_v
            for t in range(horizon - 1, -1, -1):
                delta = rew_l[t] + gamma * nxt - val_l[t]
                gae = delta + gamma * lam * gae
                adv_l.append(gae)
                nxt = val_l[t]
            adv = torch.stack(adv_l[::-1]).flatten()
            ret = adv + torch.stack(val_l).flatten()
            adv = (adv - adv.mean()) / (adv.std() + 1e-6)
        obs, act = torch.stack(obs_l).flatten(0, 1), torch.stack(act_l).flatten(0, 1)
        old_logp = torch.stack(logp_l).flatten()
        keep = env.keep[None].expand(horizon, e, m).flatten(0, 1)
        model.train()
        n = horizon * e
        mbs = n // n_mb
        kl = None
        for _ in range(epochs):
            perm = torch.randperm(n, device="cuda")
            for i in range(n_mb):
                idx = perm[i * mbs:(i + 1) * mbs]
                k = keep[idx]
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logit, v = model(obs[idx], k)
                lp = log_prob(logit, act[idx], k)
                ratio = torch.exp(lp - old_logp[idx])
                a_mb = adv[idx]
                pg = -torch.minimum(ratio * a_mb, ratio.clamp(1 - clip, 1 + clip) * a_mb).mean()
                p = torch.sigmoid(logit)
                ent = (-(p * _F.logsigmoid(logit) + (1 - p) * _F.logsigmoid(-logit)) * k.float()).sum(-1).mean()
                loss = pg + 0.5 * (v - ret[idx]).pow(2).mean() - 0.01 * ent
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
                opt.step()
                kl = (old_logp[idx] - lp).mean().detach()
                del idx, k, logit, v, lp, ratio, a_mb, pg, p, ent, loss
        torch.stack([torch.stack(rew_l).mean(), torch.stack(conf_l).mean(), kl]).tolist()
        del env, obs_l, act_l, logp_l, val_l, rew_l, conf_l, adv_l, gae, nxt, last_v, adv, ret, obs, act, old_logp
        del keep, perm, kl


# ---------------------------------------------------------------- passenger-flow scenario sampler (axial DiT)


class _AxialDitBlock(_nn.Module):
    """adaLN-modulated attention along each station's day (time patches), attention across the line's stations
    at each time patch under a station key mask, and a GELU MLP; shifts, scales and gates from the condition."""

    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.mod = _nn.Linear(d, 9 * d)
        self.n1, self.n2, self.n3 = (_nn.LayerNorm(d, elementwise_affine=False) for _ in range(3))
        self.qkv_t, self.o_t = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.qkv_s, self.o_s = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.ff = mlp(d, 4 * d, d, act=_nn.GELU)

    def _attn(self, x, qkv, o, mask):
        n, t, d = x.shape
        q, k, v = qkv(x).view(n, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        a = _F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return o(a.transpose(1, 2).reshape(n, t, d))

    def forward(self, x, c, smask):
        b, s, p, d = x.shape
        sh1, sc1, g1, sh2, sc2, g2, sh3, sc3, g3 = self.mod(c)[:, None, None].chunk(9, -1)
        y = (self.n1(x) * (1 + sc1) + sh1).reshape(b * s, p, d)
        x = x + g1 * self._attn(y, self.qkv_t, self.o_t, None).view(b, s, p, d)
        y = (self.n2(x) * (1 + sc2) + sh2).transpose(1, 2).reshape(b * p, s, d)
        m = smask[:, None, None, None, :].expand(b, p, 1, 1, s).reshape(b * p, 1, 1, s)
        x = x + g2 * self._attn(y, self.qkv_s, self.o_s, m).view(b, p, s, d).transpose(1, 2)
        return x + g3 * self.ff(self.n3(x) * (1 + sc3) + sh3)


class _FlowDit(_nn.Module):
    """Boarding and alighting counts per station and 15-minute slot, patched over time by 4, a station table
    (sized for the longest padded line) and a patch table; the timestep, day type and weather (each with a null
    row for classifier-free guidance) summed into the condition; axial DiT blocks; the noise per patch."""

    def __init__(self, c_patch, d, heads, layers, max_s, n_patch, n_day, n_weather):
        super().__init__()
        self.inp, self.out = _nn.Linear(c_patch, d), _nn.Linear(d, c_patch)
        self.station, self.slot = _nn.Embedding(max_s, d), _nn.Embedding(n_patch, d)
        self.day, self.weather = _nn.Embedding(n_day + 1, d), _nn.Embedding(n_weather + 1, d)
        self.temb = mlp(d, d, d, act=_nn.SiLU)
        self.blocks = _nn.ModuleList(_AxialDitBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.d = d

    def forward(self, x, t, day, weather, smask):
        b, s, p, _ = x.shape
        dev = x.device
        h = self.inp(x) + self.station(torch.arange(s, device=dev))[None, :, None] + \
            self.slot(torch.arange(p, device=dev))[None, None]
        c = _F.silu(self.temb(_sincos(t, self.d)) + self.day(day) + self.weather(weather))
        for blk in self.blocks:
            h = blk(h, c, smask)
        return self.out(self.norm(h)).float()


@_workload("passenger-flow scenario diffusion sampling (random init, an axial diffusion transformer with classifier-free guidance, DDIM): 24-26 requests (drawn), each 4-24 scenarios (drawn) of one line's 12-64 stations (drawn per request, padded to a multiple of 8, a 64-row station table, padded stations masked as attention keys) over a 96-slot day of boarding and alighting counts patched by 4 slots (24 patches); the condition a sinusoidal timestep MLP plus a day type (of 8) and weather (of 5) drawn per scenario, each with a null row; 6 axial DiT blocks (width 256, 4 heads, adaLN shifts, scales and gates): attention along each station's 24 patches, attention across the stations at each patch under the key mask, a GELU MLP; classifier-free guidance in one doubled batch (the conditional half and the null half) with a guidance scale of 1.0-4.0 (drawn per request); 10-40 DDIM steps (drawn per request) on a 1,000-step cosine schedule, eta 0, under bf16 autocast; per request the samples unpatched to counts by softplus, each valid station's mean daily boardings and alightings and its peak-slot load (max over the day), masked, read back")
def passenger_flow_dit_sample(rng):
    d, heads, layers = _smoke(256, 32), _smoke(4, 2), _smoke(6, 1)
    slots, patch, n_day, n_weather = _smoke(96, 16), 4, 8, 5
    s_lo, s_hi, s_mult = _smoke(12, 3), _smoke(64, 8), 8
    n_patch = slots // patch
    model = _FlowDit(2 * patch, d, heads, layers, s_hi, n_patch, n_day, n_weather).cuda().eval()
    model.requires_grad_(False)
    total = 1000
    abar = [math.cos((i / total + 0.008) / 1.008 * math.pi / 2) ** 2 for i in range(total + 1)]
    abar = [a / abar[0] for a in abar]

    nreq = rng.randint(_smoke(24, 1), _smoke(26, 2))
    for _ in range(nreq):
        b = rng.randint(_smoke(4, 1), _smoke(24, 2))
        s_true = rng.randint(s_lo, s_hi)
        s = -(-s_true // s_mult) * s_mult
        n_steps, scale = rng.randint(_smoke(10, 2), _smoke(40, 3)), rng.uniform(1.0, 4.0)
        ts = [int(total - 1 - i * (total - 1) / n_steps) for i in range(n_steps)] + [-1]
        with torch.no_grad():
            smask = keep_mask([s_true] * b, s)
            smask2 = torch.cat([smask, smask])
            day = torch.randint(0, n_day, (b,), device="cuda")
            weather = torch.randint(0, n_weather, (b,), device="cuda")
            day2 = torch.cat([day, torch.full_like(day, n_day)])
            weather2 = torch.cat([weather, torch.full_like(weather, n_weather)])
            x = torch.randn(b, s, n_patch, 2 * patch, device="cuda")
            for t, t_next in zip(ts[:-1], ts[1:]):
                a_t, a_n = abar[t + 1], abar[t_next + 1] if t_next >= 0 else 1.0
                tt = torch.full((2 * b,), t, device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    eps_c, eps_u = model(torch.cat([x, x]), tt, day2, weather2, smask2).chunk(2)
                eps = eps_u + scale * (eps_c - eps_u)
                x0 = ((x - math.sqrt(1 - a_t) * eps) / math.sqrt(a_t)).clamp(-4, 4)
                x = math.sqrt(a_n) * x0 + math.sqrt(1 - a_n) * eps
                del tt, eps_c, eps_u, eps, x0
            counts = _F.softplus(x.view(b, s, n_patch, patch, 2).flatten(2, 3)) * 50.0
            w = smask.float()[..., None]
            daily = (counts.sum(2) * w).sum(0) / b
            peak = (counts.sum(-1).amax(2)[..., None] * w).amax(0)
            out = torch.cat([daily.flatten(), peak.flatten()])
        out.tolist()
        del smask, smask2, day, weather, day2, weather2, x, counts, w, daily, peak, out


# ---------------------------------------------------------------- wayside acoustic bearing monitoring service


class _BearingNet(_nn.Module):
    """A log-mel window (frames x mels) through three stride-2 3x3 convolutions with batch norm, the 4 x 8 grid as
    tokens with a position table and a class token, pre-norm blocks; bearing-condition and anomaly heads."""

    def __init__(self, widths, d, heads, layers, n_tok, n_cls):
        super().__init__()
        mods, c = [], 1
        for w in widths:
            mods += [_nn.Conv2d(c, w, 3, 2, 1, bias=False), _nn.BatchNorm2d(w), _nn.ReLU()]
            c = w
        self.stem = _nn.Sequential(*mods, _nn.Conv2d(c, d, 1))
        self.pos = _nn.Embedding(n_tok + 1, d)
        self.cls = _nn.Parameter(torch.zeros(1, 1, d))
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.head, self.anom = _nn.Linear(d, n_cls), _nn.Linear(d, 1)

    def forward(self, x):
        y = self.stem(x).flatten(2).transpose(1, 2)
        y = torch.cat([self.cls.expand(y.shape[0], -1, -1).to(y.dtype), y], 1)
        y = y + self.pos(torch.arange(y.shape[1], device=x.device))[None]
        for blk in self.blocks:
            y = blk(y)
        y = self.norm(y[:, 0])
        return self.head(y).float(), self.anom(y)[:, 0].float()


@_workload("wayside acoustic bearing monitoring serving (random init, a convolutional stem and transformer blocks over log-mel windows): 2,500-2,600 requests (drawn), each one passing train of 2-12 wagons of 4 axles (drawn) recorded by 2 rail-side microphones at 16 kHz for 2-6 s (drawn, a multiple of 4,096 samples), int16 uploaded on a side stream from two reused pinned host buffers (filled once, sized for 2 x 98,304 samples) one request ahead (one span, through SideUploads.ahead); on the device: framing by unfold (512 samples, hop 256), a Hann window, power spectra by a real DFT matrix (512 x 257 cosines and sines, built once), 64 mel bands by a triangular filterbank matrix, log; one 32-frame window per axle and side at axle passage frames spaced evenly (host-computed indices, integer indexing); three stride-2 convolutions (32/64/128) with batch norm, the 4 x 8 grid and a class token with a 33-row position table through 2 pre-norm blocks (width 128, 4 heads) under bf16 autocast; 5 bearing conditions (sound, outer race, inner race, roller, wheel flat) and an anomaly logit; each wagon's worst bearing (max over its 8) folded into a fleet table of 1,500 wagons (wagon ids drawn per request) by index_add with a pass count, and an alarm flag by torch.where; each request's per-wagon maxima, alarms and fleet rows read back")
def wayside_acoustic_bearing_serve(rng):
    n_mel, n_fft, hop, win = _smoke(64, 16), _smoke(512, 64), _smoke(256, 32), _smoke(32, 8)
    widths, d, heads, layers, n_cls = _smoke([32, 64, 128], [8, 16, 16]), _smoke(128, 16), _smoke(4, 2), \
        _smoke(2, 1), 5
    n_tok = (win // 8) * (n_mel // 8)
    model = _BearingNet(widths, d, heads, layers, n_tok, n_cls).cuda().eval()
    model.requires_grad_(False)
    l_lo, l_hi, l_mult, n_fleet = _smoke(32768, 2048), _smoke(98304, 4096), _smoke(4096, 512), _smoke(1500, 16)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(-32768, 32768, (2 * l_hi,), dtype=torch.int16, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    n_bin = n_fft // 2 + 1
    k = torch.arange(n_bin, device="cuda").float()
    nn_ = torch.arange(n_fft, device="cuda").float()
    ang = 2 * math.pi * nn_[:, None] * k[None] / n_fft
    hann = 0.5 - 0.5 * torch.cos(2 * math.pi * nn_ / n_fft)
    basis = torch.cat([torch.cos(ang), torch.sin(ang)], 1) * hann[:, None]
    mel_pts = torch.linspace(0, 2595 * math.log10(1 + 8000 / 700), n_mel + 2, device="cuda")
    hz = 700 * (10 ** (mel_pts / 2595) - 1) / 8000 * (n_bin - 1)
    lo, mid, hi = hz[:-2, None], hz[1:-1, None], hz[2:, None]
    fb = torch.clamp(torch.minimum((k[None] - lo) / (mid - lo), (hi - k[None]) / (hi - mid)), min=0).t()
    fleet = torch.zeros(n_fleet, n_cls, device="cuda")
    passes = torch.zeros(n_fleet, device="cuda")

    nreq = rng.randint(_smoke(2500, 3), _smoke(2600, 4))
    plan = []
    for _ in range(nreq):
        length = rng.randint(l_lo // l_mult, l_hi // l_mult) * l_mult
        wagons = rng.randint(2, _smoke(12, 3))
        plan.append((length, wagons, [rng.randrange(n_fleet) for _ in range(wagons)]))

    for (length, wagons, ids), raw in up.ahead(plan, lambda p: (2 * p[0],)):
        with torch.no_grad():
            n_frames = (length - n_fft) // hop + 1
            axles = 4 * wagons
            margin = win // 2
            centres = [margin + int((n_frames - 2 * margin - 1) * (i + 0.5) / axles) for i in range(axles)]
            idx = torch.tensor([[c - margin + j for j in range(win)] for c in centres], device="cuda")
            x = raw.view(2, length).float() / 32768.0
            spec = (x.unfold(-1, n_fft, hop) @ basis).pow(2)
            power = spec[..., :n_bin] + spec[..., n_bin:]
            logmel = torch.log(power @ fb + 1e-6)
            wins = logmel[:, idx].reshape(2 * axles, 1, win, n_mel)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logit, anom = model(wins)
            prob = torch.cat([logit.softmax(-1), torch.sigmoid(anom)[:, None]], -1)
            per_wagon = prob.view(2, wagons, 4, n_cls + 1).transpose(0, 1).reshape(wagons, 8, n_cls + 1).amax(1)
            wid = torch.tensor(ids, device="cuda")
            fleet.index_add_(0, wid, per_wagon[:, :n_cls])
            passes.index_add_(0, wid, torch.ones(wagons, device="cuda"))
            alarm = torch.where((per_wagon[:, 1:n_cls].amax(1) > 0.5) | (per_wagon[:, n_cls] > 0.8), 1.0, 0.0)
            rows = fleet.index_select(0, wid) / passes.index_select(0, wid)[:, None]
            out = torch.cat([per_wagon.flatten(), alarm, rows.flatten()])
        out.tolist()
        del raw, idx, x, spec, power, logmel, wins, logit, anom, prob, per_wagon, wid, alarm, rows, out

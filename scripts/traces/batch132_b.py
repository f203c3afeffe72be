"""The hundred-and-thirty-second batch of held-out workloads for record.py, second half (see batch132.py): amusement
parks, theme parks and rides, written in torch alone. Ride dispatch training (a dueling double DQN over parks
simulated on the device step by step, extra trains added to or taken off each ride's track, transitions kept in a
replay buffer on the device written by index_copy_ and sampled by randint, a target network synchronised by copy),
a crowd density map sampler (a convolutional U-Net denoiser with self-attention at its lowest level, DDIM with
classifier-free guidance over the park's walkable area, conditioned on the hour, the attendance and the day's event;
each map's occupancy, hot spots and entropy), a queue-time board service (an MLP mixer over the rides and 5-minute
history of drawn lengths of each park, mixing along time, across the rides under a mask and along the features, the
next hour's percentile waits and each ride's downtime risk, the board's longest waits by topk) and maintenance-log
fine-tuning (a frozen transformer encoder over ride maintenance log entries of drawn lengths with a sensor summary
token, low-rank adapters on its attention trained; fault codes, severity and masked tokens at drawn positions).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the board service), `rng` the workload's random.Random for every shape, count and sampled choice,
sizes through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or
masked_fill; no boolean-mask indexing; results read back only at logging points or once per request.
queue_board_mixer_serve uploads its histories on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every embedding and position table is sized for the longest padded length that can be drawn.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import SideUploads, TimeResBlock, _mha, _sincos, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- ride dispatch (dueling double DQN)


class _DuelQ(_nn.Module):
    """A trunk of 3 layers with layer norms and ReLU, a value head and an advantage head (dueling)."""

    def __init__(self, s_dim, n_act, hidden):
        super().__init__()
        self.trunk = mlp(s_dim, hidden, hidden, layers=3, norm=True)
        self.v, self.a = _nn.Linear(hidden, 1), _nn.Linear(hidden, n_act)

    def forward(self, s):
        z = torch.relu(self.trunk(s))
        a = self.a(z).float()
        return self.v(z).float() + a - a.mean(-1, keepdim=True)


@_workload("ride dispatch training (random init, a dueling double DQN): 21 blocks of 50 iterations, each block over 128-512 parks (drawn per block) simulated on the device step by step: 12 rides each with its queue, trains on the track (1-4), riders per train (12-32 per ride, drawn per block), arrival rate (drawn on the device per park and ride) and breakdowns (started and repaired at random), 25 actions (add a train to a ride, take one off, or hold) chosen epsilon-greedily (epsilon from 0.5 down to 0.05 over the blocks) by torch.where over random numbers, the reward the negative total queue less a cost per train, each park's day (96 steps of 5 minutes) reset in place by torch.where; a 52-feature state; every iteration the transitions written into a 131,072-row replay buffer on the device by index_copy_ at positions from the host's ring pointer, then 1-2 updates (drawn) on minibatches of 256-1,024 (drawn) sampled by randint: a trunk of 3 layers of 256 with layer norms, dueling value and advantage heads, bf16 autocast, the double-DQN target (online argmax, target network value, gamma 0.99) by a Huber loss, Adam, clipping; the target network synchronised by load_state_dict every 100 updates; the mean reward and the loss read back every 25 iterations")
def ride_dispatch_dqn_train(rng):
    n_ride, hidden = 12, _smoke(256, 16)
    n_act, s_dim = 2 * n_ride + 1, 4 * n_ride + 4
    cap, day = _smoke(131072, 512), 96
    blocks, iters = _smoke(21, 2), _smoke(50, 3)
    q_net, q_tgt = _DuelQ(s_dim, n_act, hidden).cuda(), _DuelQ(s_dim, n_act, hidden).cuda()
    q_tgt.load_state_dict(q_net.state_dict())
    q_tgt.requires_grad_(False)
    opt = torch.optim.Adam(q_net.parameters(), lr=3e-4)
    buf_s = torch.zeros(cap, s_dim, device="cuda")
    buf_s2 = torch.zeros(cap, s_dim, device="cuda")
    buf_a = torch.zeros(cap, dtype=torch.long, device="cuda")
    buf_r = torch.zeros(cap, device="cuda")
    buf_d = torch.zeros(cap, device="cuda")
    ptr, filled, updates = 0, 0, 0
    act_add = torch.cat([torch.eye(n_ride, device="cuda"), -torch.eye(n_ride, device="cuda"),
                         torch.zeros(1, n_ride, device="cuda")])

    def state(queue, trains, broken, rate, clock):
        tod = clock.float() / day * 2.0 * math.pi
        return torch.cat([queue / 500.0, trains / 4.0, broken, rate / 100.0, tod.sin()[:, None], tod.cos()[:, None],
                          trains.sum(-1, keepdim=True) / 48.0, queue.sum(-1, keepdim=True) / 6000.0], -1)

    for blk in range(blocks):
        e = rng.randint(_smoke(128, 4), _smoke(512, 8))
        queue = torch.rand(e, n_ride, device="cuda") * 100.0
        trains = torch.randint(1, 5, (e, n_ride), device="cuda").float()
        broken = torch.zeros(e, n_ride, device="cuda")
        rate = 20.0 + torch.rand(e, n_ride, device="cuda") * 80.0
        riders = torch.randint(12, 33, (1, n_ride), device="cuda").float()
        clock = torch.randint(0, day, (e,), device="cuda")
        s = state(queue, trains, broken, rate, clock)
        eps = max(0.05, 0.5 * (1.0 - blk / blocks))
        for it in range(iters):
            with torch.no_grad():
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    greedy = q_net(s).argmax(-1)
                rand_a = torch.randint(0, n_act, (e,), device="cuda")
                a = torch.where(torch.rand(e, device="cuda") < eps, rand_a, greedy)
                trains = (trains + act_add[a]).clamp(1.0, 4.0)
                br = torch.rand(e, n_ride, device="cuda")
                broken = torch.where(br < 0.005, torch.ones_like(broken), torch.where(br > 0.85, 0.0 * broken, broken))
                arrive = rate * (0.5 + torch.rand(e, n_ride, device="cuda")) / 12.0
                served = trains * riders * 2.5 * (1.0 - broken)
                queue = (queue + arrive - served).clamp_min(0.0)
                r = -(queue.sum(-1) / 1000.0) - 0.02 * trains.sum(-1)
                clock = clock + 1
                done = clock >= day
                queue = torch.where(done[:, None], torch.rand_like(queue) * 50.0, queue)
                broken = torch.where(done[:, None], torch.zeros_like(broken), broken)
                clock = torch.where(done, torch.zeros_like(clock), clock)
                s2 = state(queue, trains, broken, rate, clock)
                pos = (torch.arange(e, device="cuda") + ptr) % cap
                buf_s.index_copy_(0, pos, s)
                buf_s2.index_copy_(0, pos, s2)
                buf_a.index_copy_(0, pos, a)
                buf_r.index_copy_(0, pos, r)
                buf_d.index_copy_(0, pos, done.float())
            ptr, filled = (ptr + e) % cap, min(filled + e, cap)
            s = s2
            for _ in range(rng.randint(1, 2)):
                mb = rng.randint(_smoke(256, 4), _smoke(1024, 8))
                idx = torch.randint(0, filled, (mb,), device="cuda")
                bs, bs2, ba = buf_s.index_select(0, idx), buf_s2.index_select(0, idx), buf_a.index_select(0, idx)
                br_, bd = buf_r.index_select(0, idx), buf_d.index_select(0, idx)
                with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                    nxt = q_net(bs2).argmax(-1, keepdim=True)
                    tv = q_tgt(bs2).gather(1, nxt)[:, 0]
                    target = br_ + 0.99 * (1.0 - bd) * tv
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    qa = q_net(bs).gather(1, ba[:, None])[:, 0]
                loss = _F.huber_loss(qa, target)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(q_net.parameters(), 10.0)
                opt.step()
                updates += 1
                if updates % 100 == 0:
                    q_tgt.load_state_dict(q_net.state_dict())
                del idx, bs, bs2, ba, br_, bd, nxt, tv, target, qa
            if it % 25 == 0:
                torch.stack([r.mean(), loss.detach()]).tolist()
            del greedy, rand_a, a, br, arrive, served, r, done, s2, pos, loss
        del queue, trains, broken, rate, riders, clock, s


# ---------------------------------------------------------------- crowd density maps (U-Net, DDIM with guidance)


class _AttnBlock(_nn.Module):
    """Group norm and single-head-per-64-channels self-attention over the map's cells, residual."""

    def __init__(self, c, heads):
        super().__init__()
        self.h = heads
        self.norm, self.qkv, self.out = _nn.GroupNorm(8, c), _nn.Conv2d(c, 3 * c, 1), _nn.Conv2d(c, c, 1)

    def forward(self, x):
        b, c, hh, ww = x.shape
        q, k, v = self.qkv(self.norm(x)).flatten(2).transpose(1, 2).chunk(3, -1)
        a = _mha(q, k, v, self.h)
        return x + self.out(a.transpose(1, 2).reshape(b, c, hh, ww))


class _CrowdUNet(_nn.Module):
    """Three levels of two TimeResBlocks each (stride-2 convolutions down, nearest upsampling and skips up),
    self-attention in the middle; the timestep by sine features plus the condition (hour, attendance, event)."""

    def __init__(self, cin, cout, widths, n_event, heads):
        super().__init__()
        c0, c1, c2 = widths
        te = 4 * c0
        self.t_mlp = mlp(c0, te, te, act=_nn.SiLU)
        self.event, self.cond = _nn.Embedding(n_event + 1, te), _nn.Linear(3, te)
        self.inp = _nn.Conv2d(cin, c0, 3, 1, 1)
        self.d0 = _nn.ModuleList([TimeResBlock(c0, c0, te), TimeResBlock(c0, c0, te)])
        self.down0 = _nn.Conv2d(c0, c0, 3, 2, 1)
        self.d1 = _nn.ModuleList([TimeResBlock(c0, c1, te), TimeResBlock(c1, c1, te)])
        self.down1 = _nn.Conv2d(c1, c1, 3, 2, 1)
        self.d2 = _nn.ModuleList([TimeResBlock(c1, c2, te), TimeResBlock(c2, c2, te)])
        self.attn = _AttnBlock(c2, heads)
        self.mid = TimeResBlock(c2, c2, te)
        self.u2 = _nn.ModuleList([TimeResBlock(2 * c2, c2, te), TimeResBlock(c2, c1, te)])
        self.u1 = _nn.ModuleList([TimeResBlock(2 * c1, c1, te), TimeResBlock(c1, c0, te)])
        self.u0 = _nn.ModuleList([TimeResBlock(2 * c0, c0, te), TimeResBlock(c0, c0, te)])
        self.out = _nn.Sequential(_nn.GroupNorm(8, c0), _nn.SiLU(), _nn.Conv2d(c0, cout, 3, 1, 1))
        self.c0 = c0

    def forward(self, x, t, event, cond):
        te = self.t_mlp(_sincos(t, self.c0)) + self.event(event) + self.cond(cond)
        h0 = self.inp(x)
        for blk in self.d0:
            h0 = blk(h0, te)
        h1 = self.down0(h0)
        for blk in self.d1:
            h1 = blk(h1, te)
        h2 = self.down1(h1)
        for blk in self.d2:
            h2 = blk(h2, te)
        m = self.mid(self.attn(h2), te)
        u = self.u2[1](self.u2[0](torch.cat([m, h2], 1), te), te)
        u = _F.interpolate(u, scale_factor=2.0, mode="nearest")
        u = self.u1[1](self.u1[0](torch.cat([u, h1], 1), te), te)
        u = _F.interpolate(u, scale_factor=2.0, mode="nearest")
        u = self.u0[1](self.u0[0](torch.cat([u, h0], 1), te), te)
        return self.out(u).float()


@_workload("crowd density map sampling (random init, a convolutional U-Net denoiser with DDIM and classifier-free guidance): 52-54 requests (drawn) of 2-8 maps (drawn) of the park at 64 x 64, 96 x 96 or 128 x 128 cells (drawn per request), 2 channels (guest density, queueing intensity) and the park's walkable area (a random mask made on the device by pooling noise) as a third input channel; conditioned on the hour (sine and cosine), the attendance and the day's event (of 8: none, parade, fireworks, rain, heat, holiday, school trip, night opening, drawn per map) with a null row for the unconditional half; three levels (64, 128, 192 channels) of two TimeResBlocks, stride-2 convolutions down, nearest upsampling with skips up, self-attention (3 heads) at 1/4 resolution, under bf16 autocast; deterministic DDIM over 15-40 of 1,000 linear-schedule steps (drawn per request), the conditional and unconditional halves in one doubled batch and mixed at a guidance scale of 1.5-4.0 (drawn per request), the walkable mask held fixed; then each map's total occupancy of the walkable cells, its 10 hottest cells by topk, the density's entropy and the mean queueing intensity; each request's figures read back once")
def crowd_heatmap_ddim_sample(rng):
    widths, n_event = _smoke([64, 128, 192], [8, 16, 16]), 8
    res_opts = _smoke([64, 96, 128], [16, 24])
    model = _CrowdUNet(3, 2, widths, n_event, _smoke(3, 2)).cuda().eval()
    model.requires_grad_(False)
    n_t = 1000
    betas = torch.linspace(1e-4, 0.02, n_t, dtype=torch.float64)
    alpha_bar = torch.cumprod(1.0 - betas, 0).tolist()

    nreq = rng.randint(_smoke(52, 2), _smoke(54, 3))
    for _ in range(nreq):
        n, r = rng.randint(_smoke(2, 1), _smoke(8, 2)), rng.choice(res_opts)
        n_steps, scale = rng.randint(_smoke(15, 2), _smoke(40, 3)), rng.uniform(1.5, 4.0)
        seq = [int(i * (n_t - 1) / (n_steps - 1)) for i in range(n_steps)][::-1]
        with torch.no_grad():
            walk = (_F.avg_pool2d(torch.rand(n, 1, r, r, device="cuda"), 9, 1, 4) > 0.45).float()
            event = torch.randint(0, n_event, (n,), device="cuda")
            hour = torch.rand(n, device="cuda") * 2.0 * math.pi
            cond = torch.stack([hour.sin(), hour.cos(), torch.rand(n, device="cuda")], -1)
            ev2 = torch.cat([event, torch.full_like(event, n_event)])
            cond2 = torch.cat([cond, torch.zeros_like(cond)])
            walk2 = torch.cat([walk, walk])
            x = torch.randn(n, 2, r, r, device="cuda")
            for i, t in enumerate(seq):
                a_t = alpha_bar[t]
                a_prev = alpha_bar[seq[i + 1]] if i + 1 < len(seq) else 1.0
                tt = torch.full((2 * n,), float(t), device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    e = model(torch.cat([torch.cat([x, x]), walk2], 1), tt, ev2, cond2)
                ec, eu = e.chunk(2)
                eps = eu + scale * (ec - eu)
                x0 = ((x - math.sqrt(1.0 - a_t) * eps) / math.sqrt(a_t)).clamp(-4.0, 4.0)
                x = math.sqrt(a_prev) * x0 + math.sqrt(1.0 - a_prev) * eps
                del tt, e, ec, eu, eps, x0
            dens = _F.softplus(x[:, 0]) * walk[:, 0]
            total = dens.flatten(1).sum(-1)
            hot, _ = dens.flatten(1).topk(10, dim=-1)
            p = dens.flatten(1) / total[:, None].clamp_min(1e-6)
            ent = -(p * p.clamp_min(1e-12).log()).sum(-1)
            qi = (torch.sigmoid(x[:, 1]) * walk[:, 0]).flatten(1).sum(-1) / walk.flatten(1).sum(-1).clamp_min(1.0)
            res = torch.cat([total, hot.flatten(), ent, qi])
        res.tolist()
        del walk, event, hour, cond, ev2, cond2, walk2, x, dens, total, hot, p, ent, qi, res


# ---------------------------------------------------------------- queue-time board (MLP mixer over rides and time)


class _MixerBlock(_nn.Module):
    """Mixing along time (an MLP over the history's steps), across the rides (an MLP over the ride slots, the padded
    rides zeroed before and after) and along the features, each pre-normed and residual."""

    def __init__(self, d, length, rides, t_hid, r_hid, f_hid):
        super().__init__()
        self.n1, self.n2, self.n3 = _nn.LayerNorm(d), _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.time = mlp(length, t_hid, length, act=_nn.GELU)
        self.ride = mlp(rides, r_hid, rides, act=_nn.GELU)
        self.feat = mlp(d, f_hid, d, act=_nn.GELU)

    def forward(self, x, rkeep):
        # x: (P, R, L, d); rkeep: (P, R, 1, 1)
        x = x + self.time(self.n1(x).transpose(2, 3)).transpose(2, 3)
        x = x + self.ride((self.n2(x) * rkeep).permute(0, 2, 3, 1)).permute(0, 3, 1, 2) * rkeep
        return x + self.feat(self.n3(x))


class _BoardMixer(_nn.Module):
    def __init__(self, cin, d, length, rides, horizon, layers):
        super().__init__()
        self.inp, self.slot = _nn.Linear(cin + 1, d), _nn.Embedding(rides, d)
        self.blocks = _nn.ModuleList(_MixerBlock(d, length, rides, 256, 128, 4 * d) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.proj = _nn.Linear(length, horizon)
        self.q, self.down = _nn.Linear(d, 3), _nn.Linear(d, 1)

    def forward(self, x, tkeep, rkeep):
        p, r = x.shape[:2]
        h = self.inp(torch.cat([x * tkeep, tkeep.expand(*x.shape[:3], 1)], -1))
        h = (h + self.slot(torch.arange(r, device=x.device))[None, :, None]) * rkeep
        for blk in self.blocks:
            h = blk(h, rkeep)
        h = self.norm(h)
        fut = self.proj(h.transpose(2, 3)).transpose(2, 3)
        return self.q(fut).float(), self.down(h[:, :, -1]).float()[..., 0]


@_workload("queue-time board serving (random init, an MLP mixer over each park's rides and history): 1,700-1,740 requests (drawn) of 1-8 parks (drawn), each park 16-64 rides (drawn per park, padded to 64 ride slots under a mask) with a history of 48-192 five-minute steps (drawn per request in steps of 12, left-padded to 192 under a time mask) of 6 channels (posted wait, riders per hour, trains running, downtime flag, temperature, rain), fp16 uploaded on a side stream from two reused pinned host buffers (filled once, sized for 8 x 64 x 192 x 6) one request ahead (one span, through SideUploads.ahead); an input projection to width 48 with the time mask as a channel and a 64-row ride-slot table, 4 mixer blocks (time mixing 192 -> 256 -> 192, ride mixing 64 -> 128 -> 64 with the padded rides zeroed, feature mixing 48 -> 192 -> 48), in eval mode under bf16 autocast; the next hour's 10th, 50th and 90th percentile waits (12 steps, a linear over time) and each ride's downtime risk; the board's waits rounded to 5 minutes, each park's 5 longest waits by topk over masked_fill'ed rides, its mean wait and the rides at risk; each request's figures read back once")
def queue_board_mixer_serve(rng):
    cin, d, horizon, layers = 6, _smoke(48, 8), 12, _smoke(4, 1)
    max_p, max_r, length = _smoke(8, 2), _smoke(64, 8), _smoke(192, 24)
    model = _BoardMixer(cin, d, length, max_r, horizon, layers).cuda().eval()
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randn(max_p * max_r * length * cin, generator=gen).to(torch.float16).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    unit = _smoke(12, 4)

    nreq = rng.randint(_smoke(1700, 3), _smoke(1740, 4))
    plan = []
    for _ in range(nreq):
        p = rng.randint(1, max_p)
        plan.append((p, [rng.randint(_smoke(16, 2), max_r) for _ in range(p)], rng.randint(4, length // unit) * unit))

    for (p, rides, hist), raw in up.ahead(plan, lambda q: (q[0] * max_r * length * cin,)):
        with torch.no_grad():
            x = raw.view(p, max_r, length, cin).float()
            tkeep = (torch.arange(length, device="cuda") >= length - hist).float().view(1, 1, length, 1)
            rk = keep_mask(rides, max_r)
            rkeep = rk.float()[:, :, None, None]
            with torch.autocast("cuda", dtype=torch.bfloat16):
                q, risk = model(x, tkeep, rkeep)
            wait = (q.clamp_min(0.0) * 60.0 / 5.0).round() * 5.0
            now = wait[:, :, 0, 1].masked_fill(~rk, -1.0)
            top, idx = now.topk(5, dim=-1)
            mean = (wait[:, :, 0, 1] * rk.float()).sum(-1) / rk.float().sum(-1)
            at_risk = ((torch.sigmoid(risk) > 0.5) & rk).float().sum(-1)
            res = torch.cat([top.flatten(), idx.float().flatten(), mean, at_risk, wait[:, :, :, 1].mean((1, 2))])
        res.tolist()
        del raw, x, tkeep, rk, rkeep, q, risk, wait, now, top, idx, mean, at_risk, res


# ---------------------------------------------------------------- maintenance-log fine-tuning (transformer, LoRA)


class _LoRALinear(_nn.Module):
    """A frozen linear plus a trained low-rank update (B starts at zero), scaled by alpha / rank."""

    def __init__(self, din, dout, rank, alpha):
        super().__init__()
        self.base = _nn.Linear(din, dout)
        self.base.requires_grad_(False)
        self.a = _nn.Parameter(torch.randn(rank, din) / math.sqrt(din))
        self.b = _nn.Parameter(torch.zeros(dout, rank))
        self.scale = alpha / rank

    def forward(self, x):
        return self.base(x) + (x @ self.a.T.to(x.dtype)) @ self.b.T.to(x.dtype) * self.scale


class _LoRABlock(_nn.Module):
    """A pre-norm encoder block whose fused qkv and output projections carry adapters; norms and MLP frozen."""

    def __init__(self, d, heads, rank, alpha):
        super().__init__()
        self.h = heads
        self.n1, self.n2 = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.o = _LoRALinear(d, 3 * d, rank, alpha), _LoRALinear(d, d, rank, alpha)
        self.ff = mlp(d, 4 * d, d, act=_nn.GELU)
        for m in (self.n1, self.n2, self.ff):
            m.requires_grad_(False)

    def forward(self, x, mask):
        q, k, v = self.qkv(self.n1(x)).chunk(3, -1)
        x = x + self.o(_mha(q, k, v, self.h, attn_mask=mask))
        return x + self.ff(self.n2(x))


@_workload("maintenance-log fine-tuning (random init, a frozen transformer encoder with low-rank adapters): 16-64 ride maintenance log entries a step (drawn) of 32-256 tokens each (drawn per entry, padded to the step's longest rounded up to 8, under a key mask) from an 8,000-token vocabulary, a class token and a sensor summary token (24 features of the ride's vibration, temperature and cycle counts, an MLP) in front, a 258-row position table; 8 pre-norm blocks (width 384, 6 heads), the token and position tables, norms and MLPs frozen, rank-8 adapters (alpha 16) on each block's fused qkv and output projections trained with the heads; 64 fault codes by multi-label BCE and the severity (of 4) by cross-entropy from the class token, 24 masked positions per entry (drawn on the device by argsort of random keys over the entry's own tokens, their ids replaced by a mask id) predicted against the frozen token table by cross-entropy; AdamW, clipping, bf16 autocast, 340 steps; the losses read back every 20 steps and every 85 steps a no-grad pass over 32 entries of 256 tokens with the fault-code F1 and the severity accuracy read back")
def ride_maintenance_lora_finetune(rng):
    vocab, n_sens, n_code, n_sev = _smoke(8000, 64), 24, 64, 4
    d, heads, layers, rank = _smoke(384, 32), _smoke(6, 2), _smoke(8, 2), _smoke(8, 2)
    max_len, n_mask = _smoke(256, 32), _smoke(24, 4)
    tok, pos = _nn.Embedding(vocab, d).cuda(), _nn.Embedding(max_len + 2, d).cuda()
    cls = _nn.Parameter(torch.zeros(1, 1, d, device="cuda"))
    sens = mlp(n_sens, d, d, act=_nn.GELU).cuda()
    blocks = _nn.ModuleList(_LoRABlock(d, heads, rank, 2.0 * rank) for _ in range(layers)).cuda()
    norm = _nn.LayerNorm(d).cuda()
    head = mlp(d, d, n_code + n_sev, act=_nn.GELU).cuda()
    mlm = _nn.Sequential(_nn.Linear(d, d), _nn.GELU(), _nn.LayerNorm(d)).cuda()
    for m in (tok, pos, sens, norm):
        m.requires_grad_(False)
    cls.requires_grad_(False)
    params = [p for m in (blocks, head, mlm) for p in m.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=5e-4, weight_decay=0.01)
    steps, every = _smoke(340, 3), _smoke(85, 2)
    mask_id = 1

    def run(lens):
        b = len(lens)
        t = -(-max(lens) // 8) * 8
        keep = keep_mask(lens, t)
        ids = torch.randint(2, vocab, (b, t), device="cuda").masked_fill(~keep, 0)
        picks = (torch.rand(b, t, device="cuda") + (~keep).float() * 2.0).argsort(-1)[:, :n_mask]
        gold = ids.gather(1, picks)
        ids = ids.scatter(1, picks, torch.full_like(picks, mask_id))
        s = torch.randn(b, n_sens, device="cuda")
        km = torch.cat([torch.ones(b, 2, dtype=torch.bool, device="cuda"), keep], 1)[:, None, None]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            x = torch.cat([cls.expand(b, 1, d), sens(s)[:, None], tok(ids)], 1)
            x = x + pos(torch.arange(t + 2, device="cuda"))[None]
            for blk in blocks:
                x = blk(x, km)
            x = norm(x)
            out = head(x[:, 0]).float()
            hm = mlm(x[:, 2:].gather(1, picks[..., None].expand(b, n_mask, d)))
            logits = (hm @ tok.weight.T.to(hm.dtype)).float()
        return out, logits, gold

    for step in range(steps):
        blocks.train()
        b = rng.randint(_smoke(16, 2), _smoke(64, 3))
        lens = [rng.randint(_smoke(32, 8), max_len) for _ in range(b)]
        out, logits, gold = run(lens)
        codes = (torch.rand(b, n_code, device="cuda") < 0.05).float()
        sev = torch.randint(0, n_sev, (b,), device="cuda")
        l_code = _F.binary_cross_entropy_with_logits(out[:, :n_code], codes)
        l_sev = _F.cross_entropy(out[:, n_code:], sev)
        l_mlm = _F.cross_entropy(logits.flatten(0, 1), gold.flatten())
        loss = l_code + l_sev + l_mlm
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_code.detach(), l_sev.detach(), l_mlm.detach()]).tolist()
        del out, logits, gold, codes, sev, l_code, l_sev, l_mlm, loss
        if (step + 1) % every == 0:
            blocks.eval()
            with torch.no_grad():
                nb = _smoke(32, 2)
                out, logits, gold = run([max_len] * nb)
                codes = (torch.rand(nb, n_code, device="cuda") < 0.05).float()
                sev = torch.randint(0, n_sev, (nb,), device="cuda")
                pred = (out[:, :n_code] > 0).float()
                tp = (pred * codes).sum()
                f1 = 2.0 * tp / (pred.sum() + codes.sum()).clamp_min(1.0)
                acc = (out[:, n_code:].argmax(-1) == sev).float().mean()
            torch.stack([f1, acc]).tolist()
            del out, logits, gold, codes, sev, pred, tp, f1, acc

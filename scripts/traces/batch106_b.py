"""The hundred-and-sixth batch of held-out workloads for record.py, second half (see batch106.py): railways and rail
transport, written in torch alone. Bogie condition-monitoring training (a strided 1-d convolutional front end over
axle-box and bogie-frame accelerations of drawn lengths and a two-layer GRU written out step by step under a frame
mask, fault class, speed and wheel-flat length heads), a track-geometry diffusion sampling service (a 1-d conditional
U-Net with timestep, track-class and line-speed embeddings and attention at the lowest level, DDIM with
classifier-free guidance for drawn numbers of profiles, lengths and steps), rolling-stock assignment policy training (an
attention policy that assigns train units to the trips of drawn timetables one trip at a time, infeasible units
masked, Gumbel-max sampling, unit locations and free times updated by scatter and torch.where, REINFORCE with a batch
baseline) and a wayside wheel-impact detector service (a residual 1-d convnet over the strain-gauge windows of every
wheel of drawn train passages, per-wagon maxima by index_add, each wheelset's running health kept on the device by
index_copy_).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the wheel-impact service), `rng` the workload's random.Random for every shape, count and sampled
choice, sizes through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or
masked_fill; no boolean-mask indexing; results read back only at logging points or once per request.
wheel_impact_detect_serve uploads its strain windows and wheelset ids on a side stream (two reused pinned host
buffers, one passage ahead, through workload_helpers.SideUploads.ahead); the other three are single-stream. The models
run under bf16 autocast. Every table is sized for the largest index that can be drawn.
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


# ---------------------------------------------------------------- bogie condition monitoring (GRU by hand)


class _BogieGRU(_nn.Module):
    """Three strided 1-d convolutions (x64 in time) to frames, then `layers` GRU layers written out one frame at a
    time (input projections of all frames at once, the hidden projection per frame), the state held where a frame is
    padding; masked mean of the top layer's outputs and its last state to fault, speed and flat-length heads."""

    def __init__(self, c_in, d, hidden, layers, n_fault):
        super().__init__()
        self.front = _nn.Sequential(
            _nn.Conv1d(c_in, d // 2, 9, 4, 4, bias=False), _nn.BatchNorm1d(d // 2), _nn.ReLU(),
            _nn.Conv1d(d // 2, d, 9, 4, 4, bias=False), _nn.BatchNorm1d(d), _nn.ReLU(),
            _nn.Conv1d(d, d, 5, 4, 2, bias=False), _nn.BatchNorm1d(d), _nn.ReLU())
        self.w_in = _nn.ModuleList(_nn.Linear(d if i == 0 else hidden, 3 * hidden) for i in range(layers))
        self.w_h = _nn.ModuleList(_nn.Linear(hidden, 3 * hidden) for _ in range(layers))
        self.hidden = hidden
        self.fault = mlp(2 * hidden, hidden, n_fault)
        self.reg = mlp(2 * hidden, hidden, 2)

    def forward(self, x, keep):
        seq = self.front(x).transpose(1, 2)  # (B, T, d)
        b, t, _ = seq.shape
        for w_in, w_h in zip(self.w_in, self.w_h):
            gi = w_in(seq)
            h = seq.new_zeros(b, self.hidden)
            outs = []
            for s in range(t):
                ir, iz, inn = gi[:, s].chunk(3, -1)
                hr, hz, hn = w_h(h).chunk(3, -1)
                r, z = torch.sigmoid(ir + hr), torch.sigmoid(iz + hz)
                new = (1 - z) * torch.tanh(inn + r * hn) + z * h
                h = torch.where(keep[:, s, None], new, h)
                outs.append(h)
            seq = torch.stack(outs, 1)
        w = keep[..., None].to(seq.dtype)
        pooled = (seq * w).sum(1) / w.sum(1).clamp(min=1)
        z = torch.cat([pooled, h], -1)
        return self.fault(z).float(), self.reg(z).float()


@_workload("bogie condition-monitoring training (random init, a 1-d convolutional front end and a GRU written out step by step): 16-48 recordings a step (drawn) of 6 acceleration channels (axle-box vertical and lateral on both sides, bogie-frame vertical and lateral), each 1,536-4,096 samples long (drawn per recording, a multiple of 64, padded to the step's longest and zeroed past each end); three strided convolutions (kernels 9/9/5, stride 4 each, widths 64/128/128 with batch norm) to 24-64 frames, a 2-layer GRU of hidden 192 written out frame by frame (input projections batched, the state held on padded frames by torch.where), masked mean pooling with the last state; a 7-way fault head (healthy, wheel flat, polygonal wear, outer-race, inner-race, yaw-damper and primary-spring faults; cross-entropy) and speed and flat-length regressions (MSE); AdamW, clipping, bf16 autocast, 60 steps; the losses read back every 10 steps and every 20 steps a no-grad evaluation of 48 recordings of 4,096 samples with the fault accuracy read back")
def bogie_vibration_gru_train(rng):
    c_in, d, hidden, layers, n_fault = 6, _smoke(128, 16), _smoke(192, 16), 2, 7
    model = _BogieGRU(c_in, d, hidden, layers, n_fault).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    lo, hi = _smoke(1536, 256), _smoke(4096, 512)

    def recordings(lengths):
        b, n = len(lengths), max(lengths)
        keep = keep_mask(lengths, n)
        freq = torch.rand(b, c_in, 1, device="cuda") * 0.2
        tt = torch.arange(n, device="cuda").float()
        x = torch.sin(freq * tt) + 0.5 * torch.randn(b, c_in, n, device="cuda")
        x = x * keep[:, None]
        frames = keep_mask([ln // 64 for ln in lengths], n // 64)
        fault = torch.randint(0, n_fault, (b,), device="cuda")
        reg = torch.rand(b, 2, device="cuda")
        return x, frames, fault, reg

    steps = _smoke(60, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(16, 2), _smoke(48, 4))
        x, frames, fault, reg = recordings([rng.randint(lo // 64, hi // 64) * 64 for _ in range(b)])
        with torch.autocast("cuda", dtype=torch.bfloat16):
            f_log, r_out = model(x, frames)
        l_f = _F.cross_entropy(f_log, fault)
        l_r = _F.mse_loss(r_out, reg)
        loss = l_f + l_r
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_f.detach(), l_r.detach()]).tolist()
        del x, frames, fault, reg, f_log, r_out, l_f, l_r, loss
        if (step + 1) % _smoke(20, 2) == 0:
            model.eval()
            with torch.no_grad():
                x, frames, fault, reg = recordings([hi] * _smoke(48, 3))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    f_log, _ = model(x, frames)
                acc = (f_log.argmax(-1) == fault).float().mean()
            acc.item()
            del x, frames, fault, reg, f_log, acc


# ---------------------------------------------------------------- track-geometry diffusion sampling


class _TimeBlock1d(_nn.Module):
    """GroupNorm, SiLU, a kernel-3 convolution, the conditioning embedding added per channel, again with dropout off;
    a 1x1 convolution on the skip where the widths differ."""

    def __init__(self, cin, cout, demb):
        super().__init__()
        self.a = _nn.Sequential(_nn.GroupNorm(8, cin), _nn.SiLU(), _nn.Conv1d(cin, cout, 3, 1, 1))
        self.emb = _nn.Sequential(_nn.SiLU(), _nn.Linear(demb, cout))
        self.b = _nn.Sequential(_nn.GroupNorm(8, cout), _nn.SiLU(), _nn.Conv1d(cout, cout, 3, 1, 1))
        self.skip = _nn.Conv1d(cin, cout, 1) if cin != cout else _nn.Identity()

    def forward(self, x, emb):
        return self.skip(x) + self.b(self.a(x) + self.emb(emb)[:, :, None])


class _TrackUNet1d(_nn.Module):
    """A 1-d U-Net over geometry channels plus a curvature channel: two blocks a level, strided-convolution downs,
    nearest-upsampling ups with skips, a pre-norm attention block at the lowest level; the timestep's sine features,
    a track-class embedding (the last row the null class) and the line speed summed into one conditioning vector."""

    def __init__(self, c_geo, widths, demb, n_class, heads):
        super().__init__()
        self.demb = demb
        self.t_mlp = mlp(demb, demb, demb, act=_nn.SiLU)
        self.cls, self.speed = _nn.Embedding(n_class + 1, demb), _nn.Linear(1, demb)
        self.inp = _nn.Conv1d(c_geo + 1, widths[0], 3, 1, 1)
        self.down, self.pool = _nn.ModuleList(), _nn.ModuleList()
        c = widths[0]
        for i, w in enumerate(widths):
            self.down.append(_nn.ModuleList([_TimeBlock1d(c, w, demb), _TimeBlock1d(w, w, demb)]))
            c = w
            if i < len(widths) - 1:
                self.pool.append(_nn.Conv1d(w, w, 3, 2, 1))
        self.attn = PreNormBlock(c, heads)
        self.mid = _TimeBlock1d(c, c, demb)
        self.up, self.upconv = _nn.ModuleList(), _nn.ModuleList()
        for i, w in reversed(list(enumerate(widths))):
            self.up.append(_nn.ModuleList([_TimeBlock1d(c + w, w, demb), _TimeBlock1d(w, w, demb)]))
            c = w
            if i > 0:
                self.upconv.append(_nn.Conv1d(w, widths[i - 1], 3, 1, 1))
                c = widths[i - 1]
        self.out = _nn.Sequential(_nn.GroupNorm(8, c), _nn.SiLU(), _nn.Conv1d(c, c_geo, 3, 1, 1))

    def forward(self, x, curv, t, cls, speed):
        emb = self.t_mlp(_sincos(t, self.demb)) + self.cls(cls) + self.speed(speed[:, None])
        h = self.inp(torch.cat([x, curv], 1))
        skips = []
        for i, (b1, b2) in enumerate(self.down):
            h = b2(b1(h, emb), emb)
            skips.append(h)
            if i < len(self.pool):
                h = self.pool[i](h)
        h = self.mid(self.attn(h.transpose(1, 2)).transpose(1, 2), emb)
        for i, (b1, b2) in enumerate(self.up):
            h = b2(b1(torch.cat([h, skips.pop()], 1), emb), emb)
            if i < len(self.upconv):
                h = self.upconv[i](_F.interpolate(h, scale_factor=2, mode="nearest"))
        return self.out(h).float()


@_workload("track-geometry diffusion sampling service (random init, a 1-d conditional U-Net, DDIM with classifier-free guidance): 63-67 requests (drawn), each for 1-8 synthetic track-geometry profiles (drawn) of 4 channels (longitudinal level, alignment, gauge deviation, cross-level) of 1,024-4,096 samples at 0.25 m (drawn per request, a multiple of 256) for one of 6 track classes and a line speed of 40-200 km/h (drawn), conditioned on a curvature channel (a smoothed random walk drawn on the device); a U-Net of widths 64/128/256 (two GroupNorm residual blocks a level, strided-convolution downs, nearest-upsampling ups with skips, a pre-norm attention block of 4 heads at the lowest level), timestep sine features, track-class (null row for guidance) and speed embeddings summed; 10-30 DDIM steps (drawn per request) over a 1,000-step linear beta schedule (timesteps and coefficients on the host), the conditional and null batches run together and mixed at guidance scale 2.5, bf16 autocast; each request's per-channel standard deviation, peak absolute gauge and cross-level and twist (the cross-level difference over 12 samples) read back")
def track_geometry_diffusion_sample(rng):
    c_geo, widths, demb, n_class = 4, _smoke([64, 128, 256], [16, 16, 32]), _smoke(256, 32), 6
    model = _TrackUNet1d(c_geo, widths, demb, n_class, _smoke(4, 2)).cuda().eval()
    model.requires_grad_(False)
    betas = [1e-4 + (0.02 - 1e-4) * i / 999 for i in range(1000)]
    abar, acc = [], 1.0
    for beta in betas:
        acc *= 1 - beta
        abar.append(acc)
    nreq = rng.randint(_smoke(63, 2), _smoke(67, 3))
    max_b, lo, hi = _smoke(8, 2), _smoke(1024, 64), _smoke(4096, 128)
    mult = _smoke(256, 64)
    guide = 2.5
    for _ in range(nreq):
        b, n = rng.randint(1, max_b), rng.randint(lo // mult, hi // mult) * mult
        steps = rng.randint(_smoke(10, 2), _smoke(30, 3))
        cls = rng.randrange(n_class)
        speed = rng.uniform(40, 200) / 200
        ts = [int(round(999 - i * 999 / steps)) for i in range(steps)] + [-1]
        with torch.no_grad():
            curv = _F.avg_pool1d(torch.randn(b, 1, n, device="cuda").cumsum(-1) * 0.01, 31, 1, 15)
            curv2 = torch.cat([curv, curv])
            cls_t = torch.cat([torch.full((b,), cls, device="cuda"), torch.full((b,), n_class, device="cuda")])
            speed_t = torch.full((2 * b,), speed, device="cuda")
            x = torch.randn(b, c_geo, n, device="cuda")
            for t, t_prev in zip(ts[:-1], ts[1:]):
                a, a_prev = abar[t], abar[t_prev] if t_prev >= 0 else 1.0
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    eps = model(torch.cat([x, x]), curv2, torch.full((2 * b,), t, device="cuda"), cls_t, speed_t)
                e_c, e_u = eps.chunk(2)
                e = e_u + guide * (e_c - e_u)
                x0 = ((x - math.sqrt(1 - a) * e) / math.sqrt(a)).clamp(-4, 4)
                x = math.sqrt(a_prev) * x0 + math.sqrt(1 - a_prev) * e
                del eps, e_c, e_u, e, x0
            twist = (x[:, 3, 12:] - x[:, 3, :-12]).abs().amax(-1)
            out = torch.cat([x.std(-1).flatten(), x[:, 2].abs().amax(-1), x[:, 3].abs().amax(-1), twist])
        out.tolist()
        del curv, curv2, cls_t, speed_t, x, twist, out


# ---------------------------------------------------------------- rolling-stock assignment policy (REINFORCE)


class _StockPolicy(_nn.Module):
    """Trip encoder (origin and destination station embeddings, departure, arrival and demand) of pre-norm blocks
    under a trip key mask, unit encoder (type embedding, capacity, home station) of one block; a decoder that scores
    every unit for the current trip from the trip's encoding, a pooled context and each unit's dynamic state (hours
    until free, at the origin or not, trips served), plus a cancel option."""

    def __init__(self, n_station, n_type, d, heads, blocks):
        super().__init__()
        self.st = _nn.Embedding(n_station, d)
        self.trip_in, self.unit_in = _nn.Linear(3, d), _nn.Linear(2, d)
        self.utype = _nn.Embedding(n_type, d)
        self.trip_blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(blocks))
        self.unit_block = PreNormBlock(d, heads)
        self.q = _nn.Linear(2 * d, d)
        self.dyn = _nn.Linear(3, d)
        self.cancel = _nn.Linear(2 * d, 1)
        self.d = d

    def encode(self, origin, dest, tnum, tkeep, utype, unum, home, ukeep):
        x = self.st(origin) + 0.5 * self.st(dest) + self.trip_in(tnum)
        for blk in self.trip_blocks:
            x = blk(x, mask=tkeep[:, None, None, :])
        u = self.utype(utype) + self.unit_in(unum) + self.st(home)
        u = self.unit_block(u, mask=ukeep[:, None, None, :])
        w = tkeep[..., None].to(x.dtype)
        ctx = (x * w).sum(1) / w.sum(1)
        return x, u, ctx

    def scores(self, trip, ctx, u, dyn):
        q = self.q(torch.cat([trip, ctx], -1))
        k = u + self.dyn(dyn)
        s = 10 * torch.tanh((k @ q[:, :, None])[..., 0] / math.sqrt(self.d))
        return torch.cat([s, self.cancel(torch.cat([trip, ctx], -1))], -1).float()


@_workload("rolling-stock assignment policy training (random init, an attention policy trained by REINFORCE): 32-96 timetables a step (drawn), each of 16-40 trips (drawn per timetable, padded to the step's longest and masked) between 14 stations with departures over 18 hours (sorted on the device), run times of 0.5-3 h and demands of 100-900 seats, and 6-20 train units (drawn per timetable, padded and masked) of 3 types (200/300/600 seats) at drawn home stations; trip encoder of 2 pre-norm blocks and unit encoder of 1 (width 128, 4 heads) under key masks; trips assigned one at a time in departure order, units infeasible for the trip (padding, or not free by departure allowing a 0.75 h empty run from another station) masked by masked_fill, a cancel option always open, Gumbel-max sampling, the chosen unit's station, free time and trip count updated by a scatter-made one-hot and torch.where (a 0.25 h turnaround after each trip); cost of cancellations (2 per seat demanded), seat shortfall, empty runs (150 each) and units used (500 each, units picked for padded trips included); REINFORCE with the batch-mean baseline (advantages divided by the batch standard deviation) and an entropy bonus; Adam, clipping, bf16 autocast, 68 steps; the mean cost read back every 10 steps and every 17 steps a no-grad greedy evaluation of 96 timetables of 40 trips and 20 units with the mean cost and cancellation rate read back")
def rolling_stock_policy_train(rng):
    n_station, n_type, d, heads, blocks = 14, 3, _smoke(128, 16), _smoke(4, 2), _smoke(2, 1)
    model = _StockPolicy(n_station, n_type, d, heads, blocks).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=2e-4)
    caps = torch.tensor([200.0, 300.0, 600.0], device="cuda")
    max_trips, max_units = _smoke(40, 6), _smoke(20, 4)

    def instances(trips, units):
        b, tm, um = len(trips), max(trips), max(units)
        tkeep, ukeep = keep_mask(trips, tm), keep_mask(units, um)
        dep = torch.rand(b, tm, device="cuda").masked_fill(~tkeep, 2.0).sort(-1).values * 18
        arr = dep + 0.5 + 2.5 * torch.rand(b, tm, device="cuda")
        origin = torch.randint(0, n_station, (b, tm), device="cuda")
        dest = (origin + torch.randint(1, n_station, (b, tm), device="cuda")) % n_station
        demand = torch.randint(100, 901, (b, tm), device="cuda").float() * tkeep
        utype = torch.randint(0, n_type, (b, um), device="cuda")
        home = torch.randint(0, n_station, (b, um), device="cuda")
        tnum = torch.stack([dep / 18, arr / 18, demand / 900], -1)
        unum = torch.stack([caps[utype] / 600, ukeep.float()], -1)
        return dict(origin=origin, dest=dest, dep=dep, arr=arr, demand=demand, tnum=tnum, tkeep=tkeep,
                    utype=utype, unum=unum, home=home, ukeep=ukeep)

    def rollout(inst, greedy):
        x, u, ctx = model.encode(inst["origin"], inst["dest"], inst["tnum"], inst["tkeep"], inst["utype"],
                                 inst["unum"], inst["home"], inst["ukeep"])
        b, tm = inst["dep"].shape
        um = u.shape[1]
        loc, free = inst["home"].clone(), torch.zeros(b, um, device="cuda")
        served = torch.zeros(b, um, device="cuda")
        cap = caps[inst["utype"]]
        cost = torch.zeros(b, device="cuda")
        logp = torch.zeros(b, device="cuda")
        ent = torch.zeros(b, device="cuda")
        for j in range(tm):
            o, dp = inst["origin"][:, j], inst["dep"][:, j]
            away = (loc != o[:, None]).float()
            ok = inst["ukeep"] & (free + 0.75 * away <= dp[:, None])
            dyn = torch.stack([(free - dp[:, None]) / 18, away, served / 10], -1)
            s = model.scores(x[:, j], ctx, u, dyn.to(x.dtype))
            s = s.masked_fill(torch.cat([~ok, torch.zeros_like(ok[:, :1])], 1), float("-inf"))
            lp = s.log_softmax(-1)
            if greedy:
                a = s.argmax(-1)
            else:
                a = (s - torch.log(-torch.log(torch.rand_like(s).clamp(1e-9, 1 - 1e-9)))).argmax(-1)
            tk = inst["tkeep"][:, j].float()
            logp = logp + lp.gather(1, a[:, None])[:, 0] * tk
            ent = ent - (lp.exp() * lp.masked_fill(lp == float("-inf"), 0)).sum(-1) * tk
            pick = torch.zeros(b, um + 1, device="cuda").scatter_(1, a[:, None], 1.0)
            cancel, pick = pick[:, um], pick[:, :um]
            chosen = pick > 0
            dem = inst["demand"][:, j]
            cost = cost + tk * (2 * dem * cancel + torch.relu(dem - (pick * cap).sum(-1))
                                + 150 * (pick * away).sum(-1))
            loc = torch.where(chosen, inst["dest"][:, j, None], loc)
            free = torch.where(chosen, inst["arr"][:, j, None] + 0.25, free)
            served = served + pick
        cost = cost + 500 * (served > 0).float().sum(-1)
        return cost, logp, ent, (served.sum(-1) / inst["tkeep"].float().sum(-1))

    steps = _smoke(68, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(32, 2), _smoke(96, 4))
        inst = instances([rng.randint(_smoke(16, 3), max_trips) for _ in range(b)],
                         [rng.randint(_smoke(6, 2), max_units) for _ in range(b)])
        with torch.autocast("cuda", dtype=torch.bfloat16):
            cost, logp, ent, _ = rollout(inst, False)
        adv = (cost - cost.mean()) / (cost.std() + 1e-6)
        loss = (adv.detach() * logp).mean() - 0.01 * ent.mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            cost.mean().item()
        del inst, cost, logp, ent, adv, loss
        if (step + 1) % _smoke(17, 2) == 0:
            model.eval()
            with torch.no_grad():
                n = _smoke(96, 3)
                inst = instances([max_trips] * n, [max_units] * n)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    cost, _, _, served = rollout(inst, True)
                out = torch.stack([cost.mean(), 1 - served.mean()])
            out.tolist()
            del inst, cost, served, out


# ---------------------------------------------------------------- wayside wheel-impact detector service


class _GaugeBlock(_nn.Module):
    """Two kernel-5 1-d convolutions with batch norm and ReLU, the first strided, a strided 1x1 shortcut."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1, self.n1 = _nn.Conv1d(cin, cout, 5, stride, 2, bias=False), _nn.BatchNorm1d(cout)
        self.c2, self.n2 = _nn.Conv1d(cout, cout, 5, 1, 2, bias=False), _nn.BatchNorm1d(cout)
        self.sc = _nn.Sequential(_nn.Conv1d(cin, cout, 1, stride, bias=False), _nn.BatchNorm1d(cout))

    def forward(self, x):
        return _F.relu(self.n2(self.c2(_F.relu(self.n1(self.c1(x))))) + self.sc(x))


class _ImpactNet(_nn.Module):
    def __init__(self, c_in, widths, n_cls):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv1d(c_in, widths[0], 7, 2, 3, bias=False), _nn.BatchNorm1d(widths[0]),
                                   _nn.ReLU())
        self.blocks = _nn.Sequential(*[_GaugeBlock(a, b, 2) for a, b in zip(widths[:-1], widths[1:])])
        self.head = mlp(2 * widths[-1], 128, n_cls + 1, act=_nn.GELU)

    def forward(self, x):
        h = self.blocks(self.stem(x))
        z = torch.cat([h.mean(-1), h.amax(-1)], -1)
        out = self.head(z).float()
        return out[:, :-1], _F.softplus(out[:, -1]) * 100  # class logits, peak impact load (kN)


@_workload("wayside wheel-impact detector serving (random init, a residual 1-d convnet over strain-gauge windows): 2,680-2,780 train passages (drawn) of 1-2 locomotives and 8-40 wagons (drawn), 4 axles each (36-168 axles); each axle's 8 strain-gauge channels (4 per rail) of 512 samples as int16 and its wheelset id (of 30,000, int16), uploaded on a side stream from two reused pinned host buffers (filled once, sized for 168 axles) one passage ahead through SideUploads.ahead (two spans, waited on by event, record_stream'ed), scaled on the device; each wheel's 4 channels through a stride-2 kernel-7 stem of 32 and four stride-2 residual blocks (64/96/128/160, kernel 5, batch norm), mean and max pooling, a 2-layer MLP to 4 defect classes (sound, wheel flat, out-of-round, shelling) and a peak impact load under bf16 autocast; each axle's load the larger of its two wheels', per-vehicle sums (index_add of axle loads by vehicle index) and maxima (amax over each vehicle's 4 axles), each wheelset's running load (an exponential average kept on the device for 30,000 wheelsets, gathered by index_select and written back by index_copy_) and alert flags by torch.where (load over 350 kN, or running load over 250 kN with a defect class); each passage's per-wheel loads and classes, per-vehicle sums and maxima and alert count read back")
def wheel_impact_detect_serve(rng):
    n_ch, win, n_cls, n_ws = 8, _smoke(512, 64), 4, _smoke(30000, 500)
    widths = _smoke([32, 64, 96, 128, 160], [16, 16, 32])
    model = _ImpactNet(n_ch // 2, widths, n_cls).cuda().eval()
    model.requires_grad_(False)
    max_w = _smoke(40, 3)
    max_ax = 4 * (max_w + 2)
    sig = max_ax * n_ch * win
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = []
    for _ in range(2):
        s = (torch.randn(sig, generator=gen) * 3000).clamp(-32000, 32000).to(torch.int16)
        ids = torch.randint(0, n_ws, (max_ax,), dtype=torch.int16, generator=gen)
        host.append(torch.cat([s, ids]).pin_memory())
    up = SideUploads(host)
    running = torch.zeros(n_ws, device="cuda")
    nreq = rng.randint(_smoke(2680, 3), _smoke(2780, 4))
    plan = [rng.randint(1, 2) + rng.randint(_smoke(8, 1), max_w) for _ in range(nreq)]  # vehicles per passage

    def spans(vehicles):
        return (4 * vehicles * n_ch * win, slice(sig, sig + 4 * vehicles))

    for vehicles, raw, ids in up.ahead(plan, spans):
        axles = 4 * vehicles
        with torch.no_grad():
            x = raw.view(axles * 2, n_ch // 2, win).float() / 3000
            ws = ids.long()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits, load = model(x)
            cls = logits.argmax(-1)
            wheel_load = load.view(axles, 2)
            axle_load = wheel_load.amax(-1)
            veh = torch.arange(axles, device="cuda") // 4
            veh_sum = torch.zeros(vehicles, device="cuda").index_add_(0, veh, axle_load)
            veh_max = axle_load.view(vehicles, 4).amax(-1)
            new = 0.9 * running.index_select(0, ws) + 0.1 * axle_load
            running.index_copy_(0, ws, new)
            defect = (cls.view(axles, 2) > 0).any(-1)
            alert = torch.where((axle_load > 350) | ((new > 250) & defect), 1.0, 0.0)
            out = torch.cat([load, cls.float(), veh_sum, veh_max, alert.sum()[None]])
        out.tolist()
        del raw, ids, x, ws, logits, load, cls, wheel_load, axle_load, veh, veh_sum, veh_max, new, defect, alert, out

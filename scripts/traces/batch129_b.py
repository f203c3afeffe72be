"""The hundred-and-twenty-ninth batch of held-out workloads for record.py, second half (see batch129.py): horses,
equestrian sport and horse racing, written in torch alone. Pedigree training (a gated graph network written by hand
over batches of pedigrees of drawn sizes, sire and dam edges each way with a weight per edge type, messages summed by
index_add and a GRU-style update; each horse's racing ability and distance aptitude, each pedigree's inbreeding),
stable health monitoring training (a strided convolutional front end over stall sensor streams of drawn lengths and
a two-layer LSTM written out step by step, padded steps keeping the state by torch.where; colic risk and the next
readings per step, the health state per horse), race pacing training (PPO on an actor-critic over races simulated
on the device step by step, generalised advantage estimation, clipped surrogate updates on shuffled minibatches) and
an in-running odds service (a strided convolutional encoder over each runner's GPS and heart-rate telemetry and a
transformer across the runners of each race under a key mask, the win and place probabilities and the finishing
times, with the sectional speeds, stride lengths and heart rates measured on the device).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the odds service), `rng` the workload's random.Random for every shape, count and sampled choice,
sizes through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or
masked_fill; no boolean-mask indexing; results read back only at logging points or once per request.
inrunning_odds_telemetry_serve uploads its telemetry on a side stream (two reused pinned host buffers, one request
ahead, through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16
autocast. Every embedding and position table is sized for the longest padded length that can be drawn.
"""

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- pedigree model (gated graph network)


class _GatedLayer(_nn.Module):
    """One propagation step: a linear message per edge type (sire, dam, and each back to the parent), summed into
    each horse by index_add in the messages' dtype and scaled by its in-degree, then a GRU-style gated update."""

    def __init__(self, d, n_etype):
        super().__init__()
        self.msg = _nn.ModuleList(_nn.Linear(d, d) for _ in range(n_etype))
        self.zr = _nn.Linear(2 * d, 2 * d)
        self.cand = _nn.Linear(2 * d, d)
        self.norm = _nn.LayerNorm(d)

    def forward(self, h, edges, inv_deg):
        agg = None
        for lin, (src, dst, w) in zip(self.msg, edges):
            m = lin(h.index_select(0, src)) * w[:, None].to(h.dtype)
            part = m.new_zeros(h.shape[0], m.shape[1]).index_add_(0, dst, m)
            agg = part if agg is None else agg + part
        agg = agg * inv_deg[:, None].to(agg.dtype)
        z, r = torch.sigmoid(self.zr(torch.cat([h, agg.to(h.dtype)], -1))).chunk(2, -1)
        c = torch.tanh(self.cand(torch.cat([r * h, agg.to(h.dtype)], -1)))
        return self.norm((1 - z) * h + z * c)


class _PedigreeNet(_nn.Module):
    def __init__(self, n_breed, n_feat, d, layers, n_etype, n_apt):
        super().__init__()
        self.breed, self.sex = _nn.Embedding(n_breed, d), _nn.Embedding(2, d)
        self.feat = mlp(n_feat + 2, d, d, act=_nn.GELU)
        self.layers = _nn.ModuleList(_GatedLayer(d, n_etype) for _ in range(layers))
        self.node = mlp(d, d, 1 + n_apt, act=_nn.GELU)
        self.graph = mlp(d, d, 1, act=_nn.GELU)

    def forward(self, breed, sex, feat, edges, inv_deg, gid, n_graph):
        h = self.breed(breed) + self.sex(sex) + self.feat(feat)
        for layer in self.layers:
            h = layer(h, edges, inv_deg)
        pooled = h.new_zeros(n_graph, h.shape[1]).index_add_(0, gid, h)
        return self.node(h).float(), self.graph(pooled).float()


@_workload("pedigree training (random init, a gated graph network written by hand): 8-32 pedigrees a step (drawn) of 60-250 horses each (drawn per pedigree, batched flat with per-pedigree offsets), each horse after the first 8 founders of its pedigree given a sire and a dam among the earlier horses (drawn on the device), 4 edge types (sire to foal, dam to foal, foal to sire, foal to dam) with the founders' edges weighted 0; horse features from a 12-row breed table, sex and 16 race-record features (masked for the unraced half) with the birth year; 6 propagation layers (width 192) of a linear message per edge type summed into each horse by index_add in the messages' dtype and scaled by the in-degree, a GRU-style gated update and a layer norm; each raced horse's ability rating by masked MSE, its distance aptitude (of 5) by masked cross-entropy, each pedigree's inbreeding coefficient by MSE from sum pooling by index_add; AdamW, clipping, bf16 autocast, 320 steps; the losses read back every 20 steps and every 64 steps a no-grad pass over 32 pedigrees of 250 horses with the aptitude accuracy read back")
def pedigree_gated_gnn_train(rng):
    n_breed, n_feat, n_apt, n_etype = 12, 16, 5, 4
    d, layers = _smoke(192, 16), _smoke(6, 2)
    model = _PedigreeNet(n_breed, n_feat, d, layers, n_etype, n_apt).cuda()
    steps, every = _smoke(320, 3), _smoke(64, 2)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    founders = 8

    def pedigrees(sizes):
        g, n = len(sizes), sum(sizes)
        local, gid, off = [], [], []
        start = 0
        for i, s in enumerate(sizes):
            local += range(s)
            gid += [i] * s
            off += [start] * s
            start += s
        local = torch.tensor(local, device="cuda")
        gid = torch.tensor(gid, device="cuda")
        off = torch.tensor(off, device="cuda")
        child = torch.arange(n, device="cuda")
        sire = off + (torch.rand(n, device="cuda") * local.float()).long()
        dam = off + (torch.rand(n, device="cuda") * local.float()).long()
        w = (local >= founders).float()
        edges = [(sire, child, w), (dam, child, w), (child, sire, w), (child, dam, w)]
        deg = torch.zeros(n, device="cuda")
        for src, dst, ew in edges:
            deg = deg.index_add(0, dst, ew)
        inv_deg = 1.0 / deg.clamp_min(1.0)
        raced = torch.rand(n, device="cuda") < 0.5
        year = (local.float() / 250.0)[:, None]
        feat = torch.cat([torch.randn(n, n_feat, device="cuda") * raced[:, None].float(), raced[:, None].float(),
                          year], -1)
        breed = torch.randint(0, n_breed, (n,), device="cuda")
        sex = torch.randint(0, 2, (n,), device="cuda")
        rating = torch.randn(n, device="cuda")
        apt = torch.randint(0, n_apt, (n,), device="cuda")
        inbreed = torch.rand(g, device="cuda") * 0.25
        return (breed, sex, feat, edges, inv_deg, gid, g), (raced, rating, apt, inbreed)

    for step in range(steps):
        model.train()
        g = rng.randint(_smoke(8, 2), _smoke(32, 3))
        sizes = [rng.randint(_smoke(60, 10), _smoke(250, 20)) for _ in range(g)]
        inp, (raced, rating, apt, inbreed) = pedigrees(sizes)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            node, graph = model(*inp)
        w = raced.float()
        l_rate = ((node[:, 0] - rating).pow(2) * w).sum() / w.sum().clamp_min(1.0)
        l_apt = (_F.cross_entropy(node[:, 1:], apt, reduction="none") * w).sum() / w.sum().clamp_min(1.0)
        l_inb = _F.mse_loss(torch.sigmoid(graph[:, 0]), inbreed)
        loss = l_rate + l_apt + 4.0 * l_inb
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_rate.detach(), l_apt.detach(), l_inb.detach()]).tolist()
        del inp, raced, rating, apt, inbreed, node, graph, w, l_rate, l_apt, l_inb, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                inp, (raced, rating, apt, inbreed) = pedigrees([_smoke(250, 20)] * _smoke(32, 2))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    node, graph = model(*inp)
                acc = ((node[:, 1:].argmax(-1) == apt).float() * raced.float()).sum() / raced.float().sum()
            acc.item()
            del inp, raced, rating, apt, inbreed, node, graph, acc


# ---------------------------------------------------------------- stable health monitoring (LSTM written out)


class _LSTMCell(_nn.Module):
    """An LSTM cell written out: one linear of the input and the previous hidden state to the four gates."""

    def __init__(self, din, h):
        super().__init__()
        self.lin = _nn.Linear(din + h, 4 * h)

    def forward(self, x, hc):
        h, c = hc
        i, f, g, o = self.lin(torch.cat([x, h.to(x.dtype)], -1)).float().chunk(4, -1)
        c = torch.sigmoid(f + 1.0) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


@_workload("stable health monitoring training (random init, a convolutional front end and a two-layer LSTM written out step by step): 32-128 horses a step (drawn), each with 1-5 days (drawn per horse, padded to the step's longest) of 8 stall sensor channels at 10-minute resolution (body temperature, heart rate, activity, lying time, feed and water intake, stall temperature, humidity; 144-720 readings), a front end of two convolutions (64 then 128 channels, strides 3 and 4) to 2-hour steps (12-60 steps), two LSTM cells of 256 written out step by step, padded steps keeping each horse's state by torch.where; per step the colic risk over the next 12 hours by masked BCE and the next step's 8 sensor means by masked MSE, per horse its health state (of 5: healthy, colic, respiratory, lameness, fever) from the final state by cross-entropy; AdamW, clipping, bf16 autocast, 56 steps; the losses read back every 10 steps and every 14 steps a no-grad pass over 64 horses of 5 days with the state accuracy read back")
def stable_health_lstm_train(rng):
    cin, c1, c2, hid, n_state = 8, _smoke(64, 8), _smoke(128, 16), _smoke(256, 16), 5
    front = _nn.Sequential(_nn.Conv1d(cin, c1, 5, 3, 2), _nn.GELU(), _nn.Conv1d(c1, c2, 4, 4, 0), _nn.GELU()).cuda()
    cell1, cell2 = _LSTMCell(c2, hid).cuda(), _LSTMCell(hid, hid).cuda()
    risk, nxt, state = _nn.Linear(hid, 1).cuda(), _nn.Linear(hid, cin).cuda(), mlp(hid, hid, n_state).cuda()
    mods = _nn.ModuleList([front, cell1, cell2, risk, nxt, state])
    opt = torch.optim.AdamW(mods.parameters(), lr=1e-3, weight_decay=0.01)
    steps, every = _smoke(56, 3), _smoke(14, 2)
    per_day = _smoke(144, 24)  # readings a day; 12 steps a day after the front end's stride of 12

    def run(days):
        b, tr = len(days), max(days) * per_day
        t = tr // 12
        keep = keep_mask([dd * (per_day // 12) for dd in days], t)
        x = torch.randn(b, cin, tr, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            f = front(x).transpose(1, 2)
            h1 = c_1 = h2 = c_2 = torch.zeros(b, hid, device="cuda")
            outs = []
            for s in range(t):
                k = keep[:, s:s + 1]
                n1, m1 = cell1(f[:, s], (h1, c_1))
                h1, c_1 = torch.where(k, n1, h1), torch.where(k, m1, c_1)
                n2, m2 = cell2(h1, (h2, c_2))
                h2, c_2 = torch.where(k, n2, h2), torch.where(k, m2, c_2)
                outs.append(h2)
            hs = torch.stack(outs, 1)
            r, p, st = risk(hs).float()[..., 0], nxt(hs).float(), state(h2).float()
        return keep, x, r, p, st

    for step in range(steps):
        mods.train()
        b = rng.randint(_smoke(32, 2), _smoke(128, 3))
        days = [rng.randint(1, 5) for _ in range(b)]
        keep, x, r, p, st = run(days)
        t = keep.shape[1]
        w = keep.float()
        colic = (torch.rand(b, t, device="cuda") < 0.05).float()
        target = x.view(b, cin, t, -1).mean(-1).transpose(1, 2).roll(-1, 1)
        lbl = torch.randint(0, n_state, (b,), device="cuda")
        l_risk = (_F.binary_cross_entropy_with_logits(r, colic, reduction="none") * w).sum() / w.sum()
        l_next = ((p - target).pow(2).mean(-1) * w).sum() / w.sum()
        l_state = _F.cross_entropy(st, lbl)
        loss = l_risk + l_next + l_state
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(mods.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_risk.detach(), l_next.detach(), l_state.detach()]).tolist()
        del keep, x, r, p, st, w, colic, target, lbl, l_risk, l_next, l_state, loss
        if (step + 1) % every == 0:
            mods.eval()
            with torch.no_grad():
                keep, x, r, p, st = run([5] * _smoke(64, 2))
                lbl = torch.randint(0, n_state, (st.shape[0],), device="cuda")
                acc = (st.argmax(-1) == lbl).float().mean()
            acc.item()
            del keep, x, r, p, st, lbl, acc


# ---------------------------------------------------------------- race pacing (PPO)


class _PaceAC(_nn.Module):
    """A shared MLP trunk with layer norms, a policy head over the pacing actions and a value head."""

    def __init__(self, s_dim, n_act, hidden):
        super().__init__()
        self.trunk = mlp(s_dim, hidden, hidden, layers=3, act=_nn.Tanh, norm=True)
        self.pi, self.v = _nn.Linear(hidden, n_act), _nn.Linear(hidden, 1)

    def forward(self, s):
        z = torch.tanh(self.trunk(s))
        return self.pi(z).float(), self.v(z).float()[:, 0]


@_workload("race pacing training (random init, PPO on an actor-critic): 52 updates, each a rollout of 24-48 steps (drawn per update) over 128-512 races (drawn per update) simulated on the device step by step: the ridden horse's distance run, speed and energy against 8 rivals with their own drawn pacing, a race distance of 1,000-3,200 m (drawn on the device), 5 actions (ease, hold, push, move out, move in) sampled from the policy's softmax by multinomial; speed from the action and the remaining energy, energy spent by the push, a wide-run penalty by lane, the finishing reward from the place among the rivals, finished races reset in place by torch.where; a 24-feature state (distance left, speed, energy, lane, the gaps to the 8 rivals and their speeds, fatigue, the race distance, the fraction run and a zero pad); 4 s a step; a shared trunk of 3 layers of 256 with layer norms and tanh, policy and value heads, bf16 autocast; generalised advantage estimation (gamma 0.99, lambda 0.95) backwards over the rollout, then 3 epochs of 4 shuffled minibatches (randperm) of the clipped surrogate (0.2), the value loss and an entropy bonus, Adam, clipping; the mean reward and the losses read back every 5 updates")
def race_pacing_ppo_train(rng):
    n_riv, s_dim, n_act, hidden = 8, 24, 5, _smoke(256, 16)
    net = _PaceAC(s_dim, n_act, hidden).cuda()
    opt = torch.optim.Adam(net.parameters(), lr=3e-4)
    updates, epochs, n_mb = _smoke(52, 2), _smoke(3, 1), _smoke(4, 2)
    gamma, lam, clip, dt = 0.99, 0.95, 0.2, 4.0

    def reset(e):
        dist = torch.rand(e, device="cuda") * 2200.0 + 1000.0
        return dict(dist=dist, run=torch.zeros(e, device="cuda"), v=torch.full((e,), 14.0, device="cuda"),
                    en=torch.ones(e, device="cuda"), lane=torch.rand(e, device="cuda") * 3.0,
                    rrun=torch.zeros(e, n_riv, device="cuda"), rv=torch.rand(e, n_riv, device="cuda") * 2.0 + 14.0,
                    rpace=torch.rand(e, n_riv, device="cuda") * 0.4 - 0.2)

    def observe(st):
        left = (st["dist"] - st["run"]) / 1000.0
        gaps = (st["rrun"] - st["run"][:, None]) / 20.0
        return torch.cat([left[:, None], st["v"][:, None] / 16.0, st["en"][:, None], st["lane"][:, None] / 3.0,
                          gaps, st["rv"] / 16.0, (1.0 - st["en"]).pow(2)[:, None], st["dist"][:, None] / 3200.0,
                          (st["run"] / st["dist"])[:, None], torch.zeros_like(left)[:, None]], -1)

    e_max = _smoke(512, 8)
    full = reset(e_max)
    for upd in range(updates):
        e, horizon = rng.randint(_smoke(128, 4), _smoke(512, 8)), rng.randint(_smoke(24, 3), _smoke(48, 4))
        with torch.no_grad():
            st = {k: v[:e] for k, v in full.items()}
            ss, aa, lp, vv, rr, dd = [], [], [], [], [], []
            for t in range(horizon):
                s = observe(st)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits, v = net(s)
                logp = logits.log_softmax(-1)
                a = torch.multinomial(logp.exp(), 1)[:, 0]
                oh = _F.one_hot(a, n_act).float()
                push = oh[:, 2] - oh[:, 0]
                lane = (st["lane"] + oh[:, 3] - oh[:, 4]).clamp(0.0, 6.0)
                en = (st["en"] - 0.004 - 0.02 * oh[:, 2]).clamp_min(0.0)
                vel = (st["v"] + 0.6 * push - 0.8 * (0.2 - en).clamp_min(0.0)).clamp(8.0, 19.0)
                run = st["run"] + (vel - 0.05 * lane) * dt
                rv = (st["rv"] + st["rpace"] * 0.3 + 0.1 * torch.randn_like(st["rv"])).clamp(12.0, 18.5)
                rrun = st["rrun"] + rv * dt
                done = run >= st["dist"]
                place = (rrun >= st["dist"][:, None]).float().sum(-1)
                r = torch.where(done, 1.0 - place / n_riv, torch.zeros_like(run)) - 0.002 * lane
                ss.append(s)
                aa.append(a)
                lp.append(logp.gather(1, a[:, None])[:, 0])
                vv.append(v)
                rr.append(r)
                dd.append(done.float())
                nst = dict(dist=st["dist"], run=run, v=vel, en=en, lane=lane, rrun=rrun, rv=rv, rpace=st["rpace"])
                fresh = reset(e)
                st = {k: torch.where(done.view(-1, *([1] * (nst[k].dim() - 1))), fresh[k], nst[k]) for k in nst}
            with torch.autocast("cuda", dtype=torch.bfloat16):
                _, v_last = net(observe(st))
            full = {k: torch.cat([st[k], full[k][e:]]) for k in full}
            adv, gae = [], torch.zeros(e, device="cuda")
            nv = v_last
            for t in reversed(range(horizon)):
                nd = 1.0 - dd[t]
                delta = rr[t] + gamma * nv * nd - vv[t]
                gae = delta + gamma * lam * nd * gae
                adv.append(gae)
                nv = vv[t]
            adv = torch.stack(adv[::-1]).flatten()
            ret = adv + torch.stack(vv).flatten()
            adv = (adv - adv.mean()) / (adv.std() + 1e-6)
            bs, ba, blp = torch.cat(ss), torch.cat(aa), torch.cat(lp)
            mean_r = torch.stack(rr).mean()
        del ss, aa, lp, vv, rr, dd, fresh, nst
        n = e * horizon
        mb = n // n_mb
        for _ in range(epochs):
            perm = torch.randperm(n, device="cuda")
            for j in range(n_mb):
                idx = perm[j * mb:(j + 1) * mb]
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits, v = net(bs.index_select(0, idx))
                logp_all = logits.log_softmax(-1)
                new_lp = logp_all.gather(1, ba.index_select(0, idx)[:, None])[:, 0]
                ratio = (new_lp - blp.index_select(0, idx)).exp()
                a_mb = adv.index_select(0, idx)
                l_pi = -torch.minimum(ratio * a_mb, ratio.clamp(1 - clip, 1 + clip) * a_mb).mean()
                l_v = _F.mse_loss(v, ret.index_select(0, idx))
                ent = -(logp_all.exp() * logp_all).sum(-1).mean()
                loss = l_pi + 0.5 * l_v - 0.01 * ent
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
                opt.step()
                del idx, logits, v, logp_all, new_lp, ratio, a_mb
        if upd % 5 == 0:
            torch.stack([mean_r, l_pi.detach(), l_v.detach(), ent.detach()]).tolist()
        del adv, ret, bs, ba, blp, mean_r, perm, l_pi, l_v, ent, loss


# ---------------------------------------------------------------- in-running odds (telemetry encoder, transformer)


class _TelemetryNet(_nn.Module):
    """A strided convolutional encoder over each runner's telemetry (pooled over time), a race token in front (the
    distance and the fraction run), pre-norm blocks across the runners of each race under their key mask; a win
    score, a place logit and the remaining time per runner."""

    def __init__(self, cin, widths, d, heads, layers, max_field):
        super().__init__()
        c0, c1, c2 = widths
        self.enc = _nn.Sequential(_nn.Conv1d(cin, c0, 5, 2, 2), _nn.BatchNorm1d(c0), _nn.GELU(),
                                  _nn.Conv1d(c0, c1, 5, 2, 2), _nn.BatchNorm1d(c1), _nn.GELU(),
                                  _nn.Conv1d(c1, c2, 3, 2, 1), _nn.BatchNorm1d(c2), _nn.GELU())
        self.proj = _nn.Linear(2 * c2, d)
        self.stall = _nn.Embedding(max_field, d)
        self.race = _nn.Linear(2, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.head = _nn.Linear(d, 3)

    def forward(self, x, keep, race):
        m, r, cin, t = x.shape
        f = self.enc(x.reshape(m * r, cin, t))
        f = self.proj(torch.cat([f.mean(-1), f.amax(-1)], -1)).view(m, r, -1)
        f = f + self.stall(torch.arange(r, device=x.device))[None]
        z = torch.cat([self.race(race)[:, None], f], 1)
        km = torch.cat([torch.ones_like(keep[:, :1]), keep], 1)[:, None, None]
        for blk in self.blocks:
            z = blk(z, km)
        return self.head(self.norm(z[:, 1:])).float()


@_workload("in-running odds serving (random init, a convolutional telemetry encoder and a transformer across runners): 1,500-1,540 requests (drawn) of 1-6 races (drawn), each of 6-20 runners (drawn per race, padded to the request's largest field under a key mask), each runner's last 20-60 s of 10 Hz telemetry (200-600 samples in steps of 100, drawn per request) with 6 channels (x, y, speed, stride frequency, heart rate, lateral acceleration), fp16 uploaded on a side stream from two reused pinned host buffers (filled once, sized for 6 x 20 x 6 x 600) one request ahead (one span, through SideUploads.ahead); a strided convolutional encoder (64, 128, 192 channels with batch norm) pooled by mean and max, a 20-row stall table, a race token (the distance and the fraction run, drawn per request), 4 pre-norm blocks (width 192, 6 heads) under the runners' key mask, in eval mode under bf16 autocast; per race the win probabilities (a masked softmax), the place probabilities (sigmoid) and the remaining times, and from the telemetry the distance run (a cumulative sum of the speeds), the last second's speed, the stride length (speed over stride frequency) and the mean heart rate, masked; each request's odds and figures read back once")
def inrunning_odds_telemetry_serve(rng):
    cin, widths, d, heads, layers = 6, _smoke([64, 128, 192], [8, 8, 16]), _smoke(192, 16), _smoke(6, 2), _smoke(4, 1)
    max_m, max_field, max_t, unit = _smoke(6, 2), 20, _smoke(600, 24), _smoke(100, 4)
    model = _TelemetryNet(cin, widths, d, heads, layers, max_field).cuda().eval()
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randn(max_m * max_field * cin * max_t, generator=gen).half().pin_memory() for _ in range(2)]
    up = SideUploads(host)

    nreq = rng.randint(_smoke(1500, 3), _smoke(1540, 4))
    plan = []
    for _ in range(nreq):
        m = rng.randint(1, max_m)
        fields = [rng.randint(6, max_field) for _ in range(m)]
        plan.append((m, fields, rng.randint(2, max_t // unit) * unit, rng.uniform(1000.0, 3200.0), rng.random()))

    for (m, fields, t, dist, frac), raw in up.ahead(plan, lambda p: (p[0] * max(p[1]) * cin * p[2],)):
        r = max(fields)
        with torch.no_grad():
            x = raw.view(m, r, cin, t).float()
            keep = keep_mask(fields, r)
            race = torch.tensor([[dist / 3200.0, frac]], device="cuda").expand(m, 2)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = model(x, keep, race)
            win = out[..., 0].masked_fill(~keep, -1e4).softmax(-1)
            place = torch.sigmoid(out[..., 1]) * keep.float()
            remain = _F.softplus(out[..., 2]) * (1.0 - frac) * dist / 16.0
            speed = 15.0 + x[:, :, 2]
            run = (speed * 0.1).cumsum(-1)[..., -1]
            last = speed[..., -10:].mean(-1)
            stride = (speed / (2.2 + 0.1 * x[:, :, 3]).clamp_min(0.5)).mean(-1)
            hr = (180.0 + 10.0 * x[:, :, 4]).mean(-1)
            figs = torch.stack([win, place, remain, run, last, stride, hr], -1) * keep[..., None].float()
        figs.tolist()
        del raw, x, keep, race, out, win, place, remain, speed, run, last, stride, hr, figs

"""The ninetieth batch of held-out workloads for record.py, second half (see batch90.py): emergency response, public
safety and disaster management, written in torch alone. Road-network travel-time training for emergency routing (an
edge-conditioned message-passing network over drawn subgraphs of a road network with incident closures, edges by
index_select and index_add with degree normalisation, per-edge travel times and route ETAs summed along drawn
routes), flood-depth diffusion training (a conditional denoising U-Net over flood-depth maps of drawn resolutions,
conditioned on terrain, rainfall and land cover, with a few-step DDIM sampling evaluation), ambulance dispatch policy
training (an attention actor-critic over drawn numbers of ambulances and incidents, rolled out over several dispatch
rounds with ambulances kept busy by tensor bookkeeping, advantage actor-critic with an entropy bonus) and a
traffic-incident detection service (a (2+1)-d convnet over traffic-camera clips of drawn frame counts and camera
resolutions, incident-type and severity outputs per clip).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or masked_fill;
no boolean-mask indexing; results read back only at logging points or once per request. traffic_incident_serve
uploads its clips on a side stream (two reused pinned host buffers, one request ahead, the main stream waiting on an
event, the tensors record_stream'ed, as workload_helpers.SideUploads does); the other three are single-stream. Models
run under bf16 autocast. Every table is sized for the largest index that can be drawn.
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


def _loguniform(rng, lo, hi, mult=1):
    return _b.rec._loguniform(rng, lo, hi, mult)


# ---------------------------------------------------------------- road-network travel times (edge-conditioned GNN)


class _RoadLayer(_nn.Module):
    """Messages from [source, target, edge] features by an MLP, index_select for the endpoints, index_add into the
    targets with degree normalisation, a residual node update and a residual edge update."""

    def __init__(self, d):
        super().__init__()
        self.msg = mlp(3 * d, 2 * d, d, act=_nn.SiLU)
        self.node = mlp(2 * d, 2 * d, d, act=_nn.SiLU)
        self.edge = _nn.Linear(d, d)
        self.nn, self.ne = _nn.LayerNorm(d), _nn.LayerNorm(d)

    def forward(self, h, e, src, dst, deg):
        m = self.msg(torch.cat([h.index_select(0, src), h.index_select(0, dst), e], -1))
        agg = torch.zeros_like(h).index_add_(0, dst, m) / deg[:, None].to(h.dtype)
        h = h + self.node(torch.cat([self.nn(h), agg], -1))
        e = e + self.edge(self.ne(m))
        return h, e


class _RoadGNN(_nn.Module):
    def __init__(self, n_node_feat, n_edge_feat, n_class, d, layers):
        super().__init__()
        self.node_in = mlp(n_node_feat, d, d, act=_nn.SiLU)
        self.edge_in = mlp(n_edge_feat + 16, d, d, act=_nn.SiLU)
        self.road_class = _nn.Embedding(n_class, 16)
        self.layers = _nn.ModuleList(_RoadLayer(d) for _ in range(layers))
        self.out = mlp(d, d, 1, act=_nn.SiLU)

    def forward(self, xn, xe, cls, src, dst, deg):
        h = self.node_in(xn)
        e = self.edge_in(torch.cat([xe, self.road_class(cls).to(xe.dtype)], -1))
        for layer in self.layers:
            h, e = layer(h, e, src, dst, deg)
        return _F.softplus(self.out(e)[:, 0].float())  # minutes per edge


@_workload("road-network travel-time training for emergency routing (random init, an edge-conditioned message-passing network): a drawn subgraph of 15,000-50,000 intersections a step with 2-3 directed road segments per intersection (drawn per step) between random endpoints, 8 node features and 6 edge features (length, speed limit, lanes, live speed, an incident-closure flag for 3% of the segments, time of day) drawn on the device and a road class of 7 (embedded); 5 layers (width 128) of messages from source, target and edge features by index_select, index_add into the targets normalised by in-degree, residual node and edge updates; a softplus travel time per segment, closed segments masked to a large time by torch.where; a per-segment log-MSE against drawn times (open segments only) and a route ETA loss: 256-1,024 routes (drawn) of 8-64 segments (drawn per step), ETAs summed by gather; AdamW, clipping, bf16 autocast, 530 steps; the losses read back every 20 steps and every 106 steps a no-grad evaluation on a subgraph of 50,000 intersections with the mean absolute ETA error of 2,048 routes read back")
def road_network_eta_train(rng):
    n_nf, n_ef, n_class, d, layers = 8, 6, 7, _smoke(128, 16), _smoke(5, 1)
    model = _RoadGNN(n_nf, n_ef, n_class, d, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)

    def subgraph(n, per):
        e = n * per
        src, dst = torch.randint(0, n, (e,), device="cuda"), torch.randint(0, n, (e,), device="cuda")
        deg = torch.zeros(n, device="cuda").index_add_(0, dst, torch.ones(e, device="cuda")).clamp(min=1)
        xn = torch.randn(n, n_nf, device="cuda")
        xe = torch.randn(e, n_ef, device="cuda")
        closed = torch.rand(e, device="cuda") < 0.03
        xe[:, 4] = closed.float()
        cls = torch.randint(0, n_class, (e,), device="cuda")
        t_true = torch.rand(e, device="cuda") * 4 + 0.2
        return e, src, dst, deg, xn, xe, closed, cls, t_true

    def times(g):
        e, src, dst, deg, xn, xe, closed, cls, _ = g
        with torch.autocast("cuda", dtype=torch.bfloat16):
            t = model(xn, xe, cls, src, dst, deg)
        return torch.where(closed, torch.full_like(t, 60.0), t)

    steps = _smoke(530, 3)
    for step in range(steps):
        model.train()
        n, per = rng.randint(_smoke(15000, 50), _smoke(50000, 100)), rng.randint(2, 3)
        g = subgraph(n, per)
        e, t_true, closed = g[0], g[8], g[6]
        r, hops = rng.randint(_smoke(256, 4), _smoke(1024, 8)), rng.randint(8, 64)
        routes = torch.randint(0, e, (r, hops), device="cuda")
        t = times(g)
        open_w = (~closed).float()
        l_e = (((t.clamp(min=1e-3).log() - t_true.log()) ** 2) * open_w).sum() / open_w.sum().clamp(min=1)
        eta = t.gather(0, routes.flatten()).view(r, hops).sum(1)
        eta_true = t_true.gather(0, routes.flatten()).view(r, hops).sum(1)
        l_r = _F.smooth_l1_loss(eta.clamp(max=500.0).log1p(), eta_true.log1p())
        loss = l_e + l_r
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_e.detach(), l_r.detach()]).tolist()
        del g, t_true, closed, routes, t, open_w, l_e, eta, eta_true, l_r, loss
        if (step + 1) % _smoke(106, 2) == 0:
            model.eval()
            with torch.no_grad():
                g = subgraph(_smoke(50000, 100), 3)
                routes = torch.randint(0, g[0], (_smoke(2048, 8), 32), device="cuda")
                t = times(g)
                err = (t.gather(0, routes.flatten()) - g[8].gather(0, routes.flatten())).view(-1, 32).sum(1).abs()
                err = err.mean()
            err.item()
            del g, routes, t, err


# ---------------------------------------------------------------- flood-depth diffusion (conditional U-Net)


class _FloodUNet(_nn.Module):
    """Noisy depth concatenated with terrain, rainfall and an embedded land-cover map; a U-Net of residual blocks
    with timestep embeddings, self-attention at the lowest resolution, skips; the predicted noise."""

    def __init__(self, widths, n_cover, heads):
        super().__init__()
        temb = 4 * widths[0]
        self.temb = mlp(widths[0], temb, temb, act=_nn.SiLU)
        self.cover = _nn.Embedding(n_cover, 8)
        self.inp = _nn.Conv2d(1 + 2 + 8, widths[0], 3, 1, 1)
        self.down, self.pools, c = _nn.ModuleList(), _nn.ModuleList(), widths[0]
        for w in widths:
            self.down.append(TimeResBlock(c, w, temb))
            self.pools.append(_nn.Conv2d(w, w, 3, 2, 1))
            c = w
        self.mid = TimeResBlock(c, c, temb)
        self.attn = PreNormBlock(c, heads)
        self.up = _nn.ModuleList(TimeResBlock(c + w, w, temb) if i == 0 else TimeResBlock(widths[-i] + w, w, temb)
                                 for i, w in enumerate(reversed(widths)))
        self.out = _nn.Sequential(_nn.GroupNorm(8, widths[0]), _nn.SiLU(), _nn.Conv2d(widths[0], 1, 3, 1, 1))
        self.w0 = widths[0]

    def forward(self, x, t, cond, cover):
        te = self.temb(_sincos(t, self.w0).to(x.dtype))
        h = self.inp(torch.cat([x, cond, self.cover(cover).permute(0, 3, 1, 2).to(x.dtype)], 1))
        skips = []
        for blk, pool in zip(self.down, self.pools):
            h = blk(h, te)
            skips.append(h)
            h = pool(h)
        h = self.mid(h, te)
        b, c, hh, ww = h.shape
        h = self.attn(h.flatten(2).transpose(1, 2)).transpose(1, 2).reshape(b, c, hh, ww)
        for blk, skip in zip(self.up, reversed(skips)):
            h = blk(torch.cat([_F.interpolate(h, scale_factor=2, mode="nearest"), skip], 1), te)
        return self.out(h).float()


@_workload("flood-depth diffusion training (random init, a conditional DDPM denoiser): 4-24 flood-depth maps a step (drawn, at most 12 x 128^2 pixels) at 64-192 cells a side (drawn per step, a multiple of 32), each with terrain elevation and accumulated rainfall channels and a land-cover map of 10 classes drawn on the device, the depth a softplus of a smoothed random field minus terrain; a 1,000-step cosine noise schedule, timesteps drawn per map; a U-Net (widths 64/128/256, a residual block and a stride-2 convolution per level, GroupNorm, sinusoidal timestep embeddings, a self-attention block of 4 heads at the lowest resolution, nearest-upsampling residual blocks with skips) predicting the noise, MSE; AdamW, clipping, bf16 autocast, 405 steps; the loss read back every 20 steps and every 81 steps a no-grad 12-step DDIM sample of 4 maps of 128 cells with the mean depth and the flooded fraction read back")
def flood_depth_diffusion_train(rng):
    widths, n_cover, heads = _smoke([64, 128, 256], [8, 16]), 10, _smoke(4, 2)
    model = _FloodUNet(widths, n_cover, heads).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.01)
    n_t = 1000
    s = torch.arange(n_t + 1, device="cuda").float() / n_t
    abar = (torch.cos((s + 0.008) / 1.008 * math.pi / 2) ** 2)
    abar = (abar[1:] / abar[0]).clamp(1e-5, 1.0)
    mult, budget = _smoke(32, 16), _smoke(12 * 128 * 128, 2 * 32 * 32)

    def maps(b, n):
        terrain = _F.avg_pool2d(torch.randn(b, 1, n, n, device="cuda"), 9, 1, 4)
        rain = torch.rand(b, 1, 1, 1, device="cuda").expand(b, 1, n, n) * 2
        field = _F.avg_pool2d(torch.randn(b, 1, n, n, device="cuda"), 7, 1, 3)
        depth = _F.softplus(3 * (field + rain * 0.3 - terrain)) - 0.5
        cover = torch.randint(0, n_cover, (b, n, n), device="cuda")
        return depth, torch.cat([terrain, rain], 1), cover

    steps = _smoke(405, 3)
    for step in range(steps):
        model.train()
        n = rng.randint(_smoke(64, 16) // mult, _smoke(192, 32) // mult) * mult
        b = rng.randint(_smoke(4, 1), max(_smoke(4, 1), min(_smoke(24, 2), budget // (n * n))))
        x0, cond, cover = maps(b, n)
        t = torch.randint(0, n_t, (b,), device="cuda")
        a = abar[t].view(b, 1, 1, 1)
        eps = torch.randn_like(x0)
        xt = a.sqrt() * x0 + (1 - a).sqrt() * eps
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(xt, t, cond, cover)
        loss = _F.mse_loss(pred, eps)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.detach().item()
        del x0, cond, cover, t, a, eps, xt, pred, loss
        if (step + 1) % _smoke(81, 2) == 0:
            model.eval()
            with torch.no_grad():
                nb, n = _smoke(4, 1), _smoke(128, 32)
                _, cond, cover = maps(nb, n)
                x = torch.randn(nb, 1, n, n, device="cuda")
                k = _smoke(12, 2)
                ts = [round((n_t - 1) * (1 - i / (k - 1))) for i in range(k)]  # timesteps fixed on the host
                for i in range(k):
                    a = abar[ts[i]]
                    a_prev = abar[ts[i + 1]] if i + 1 < k else torch.ones_like(a)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        e = model(x, torch.full((nb,), ts[i], device="cuda"), cond, cover)
                    x0 = (x - (1 - a).sqrt() * e) / a.sqrt()
                    x = a_prev.sqrt() * x0 + (1 - a_prev).sqrt() * e
                out = torch.stack([x.clamp(min=0).mean(), (x > 0.1).float().mean()])
            out.tolist()
            del cond, cover, x, ts, a, a_prev, e, x0, out


# ---------------------------------------------------------------- ambulance dispatch (actor-critic)


class _DispatchPolicy(_nn.Module):
    """Ambulance and incident encoders, ambulance self-attention and incident-to-ambulance cross-attention under
    key masks; logits of each incident for each ambulance and a value per region."""

    def __init__(self, f_a, f_i, d, heads, layers):
        super().__init__()
        self.enc_a, self.enc_i = mlp(f_a, d, d), mlp(f_i, d, d)
        self.a_blocks = _nn.ModuleList(PreNormBlock(d, heads, 2 * d) for _ in range(layers))
        self.cross = _nn.ModuleList(_nn.MultiheadAttention(d, heads, batch_first=True) for _ in range(layers))
        self.cross_norm = _nn.ModuleList(_nn.LayerNorm(d) for _ in range(layers))
        self.q, self.k = _nn.Linear(d, d), _nn.Linear(d, d)
        self.value = mlp(2 * d, d, 1)
        self.d = d

    def forward(self, fa, fi, keep_a, keep_i):
        ha, hi = self.enc_a(fa), self.enc_i(fi)
        for ba, ca, cn in zip(self.a_blocks, self.cross, self.cross_norm):
            ha = ba(ha, mask=keep_a[:, None, None, :])
            a, _ = ca(cn(hi), ha, ha, key_padding_mask=~keep_a, need_weights=False)
            hi = hi + a
        logits = 10 * torch.tanh(self.q(hi) @ self.k(ha).transpose(1, 2) / self.d ** 0.5)
        wa, wi = keep_a[..., None].to(ha.dtype), keep_i[..., None].to(hi.dtype)
        pooled = torch.cat([(ha * wa).sum(1) / wa.sum(1), (hi * wi).sum(1) / wi.sum(1).clamp(min=1)], -1)
        return logits.float(), self.value(pooled)[:, 0].float()


@_workload("ambulance dispatch policy training (random init, an attention actor-critic): 16-48 regions a step (drawn), each with its own fleet of 12-64 ambulances (drawn per region, padded to the step's largest and masked) at random positions in a unit square, rolled out over 4-8 dispatch rounds (drawn per step); each round 8-40 incidents per region (drawn per round, the same count for every region of that round) with positions, a priority of 3 (one-hot) and 7 more features drawn on the device; ambulance features (position, busy time left and 5 more drawn once per episode) and incident features encoded, 3 layers of ambulance self-attention and incident-to-ambulance cross-attention (width 128, 4 heads) under key masks; tanh-capped logits of each incident for each ambulance with padded and busy ambulances masked by torch.where, one ambulance sampled per incident by Gumbel-max; reward of minus the priority-weighted response distance, ambulances made busy by a one-hot scatter of the assignment and moved to the incident, busy times decayed per round; a value head on pooled features, discounted returns (0.95), advantage actor-critic with an entropy bonus and a value MSE; AdamW, clipping, bf16 autocast, 82 steps; the losses and mean return read back every 20 steps and every 16 steps a greedy rollout of 32 regions (6 rounds of 24 incidents) with its mean reward read back")
def ambulance_dispatch_policy_train(rng):
    f_a, f_i, d, heads, layers = 8, 12, _smoke(128, 16), _smoke(4, 2), _smoke(3, 1)
    model = _DispatchPolicy(f_a, f_i, d, heads, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)

    def fleet(sizes):
        b, m = len(sizes), max(sizes)
        keep_a = torch.arange(m, device="cuda")[None] < torch.tensor(sizes, device="cuda")[:, None]
        pos = torch.rand(b, m, 2, device="cuda")
        busy = torch.zeros(b, m, device="cuda")
        extra = torch.randn(b, m, 5, device="cuda")
        return keep_a, pos, busy, extra

    def round_(state, n_inc, greedy):
        keep_a, pos, busy, extra = state
        b, m = keep_a.shape
        ipos = torch.rand(b, n_inc, 2, device="cuda")
        pri = torch.randint(0, 3, (b, n_inc), device="cuda")
        fi = torch.cat([ipos, _F.one_hot(pri, 3).float(), torch.randn(b, n_inc, f_i - 5, device="cuda")], -1)
        fa = torch.cat([pos, busy[..., None], extra[..., :f_a - 3]], -1)
        keep_i = torch.ones(b, n_inc, dtype=torch.bool, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits, value = model(fa, fi, keep_a, keep_i)
        free = keep_a & (busy <= 0)
        logits = torch.where(free[:, None], logits, torch.full_like(logits, -1e4))
        logp = logits.log_softmax(-1)
        if greedy:
            pick = logits.argmax(-1)
        else:
            g = -torch.log(-torch.log(torch.rand_like(logits).clamp(1e-9, 1.0)))
            pick = (logits + g).argmax(-1)  # (b, n_inc)
        lp = logp.gather(-1, pick[..., None])[..., 0].sum(1)
        ent = -(logp.exp() * logp).sum(-1).mean(1)
        apos = pos.gather(1, pick[..., None].expand(-1, -1, 2))
        dist = (apos - ipos).norm(dim=-1)
        reward = -((3 - pri).float() * dist).mean(1)
        onehot = torch.zeros(b, m, device="cuda").scatter_add_(1, pick, torch.ones_like(dist)).clamp(max=1)
        moved = torch.zeros(b, m, 2, device="cuda").scatter_add_(1, pick[..., None].expand(-1, -1, 2), ipos)
        cnt = torch.zeros(b, m, device="cuda").scatter_add_(1, pick, torch.ones_like(dist)).clamp(min=1)
        pos = torch.where(onehot[..., None] > 0, moved / cnt[..., None], pos)
        busy = torch.clamp(busy - 1, min=0) + onehot * 2
        return (keep_a, pos, busy, extra), lp, ent, value, reward

    steps = _smoke(82, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(16, 2), _smoke(48, 3))
        state = fleet([rng.randint(_smoke(12, 3), _smoke(64, 6)) for _ in range(b)])
        lps, ents, vals, rews = [], [], [], []
        for _ in range(rng.randint(4, 8)):
            state, lp, ent, value, reward = round_(state, rng.randint(_smoke(8, 2), _smoke(40, 4)), False)
            lps.append(lp), ents.append(ent), vals.append(value), rews.append(reward)
        ret, rets = torch.zeros_like(rews[0]), []
        for r in reversed(rews):
            ret = r + 0.95 * ret
            rets.append(ret)
        rets = torch.stack(rets[::-1], 1)
        vals, lps, ents = torch.stack(vals, 1), torch.stack(lps, 1), torch.stack(ents, 1)
        adv = (rets - vals).detach()
        adv = (adv - adv.mean()) / (adv.std() + 1e-6)
        l_pi = -(adv * lps).mean()
        l_v = _F.mse_loss(vals, rets)
        l_ent = -ents.mean()
        loss = l_pi + 0.5 * l_v + 0.01 * l_ent
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_pi.detach(), l_v.detach(), -l_ent.detach(), rets[:, 0].mean()]).tolist()
        del state, lps, ents, vals, rews, ret, rets, adv, l_pi, l_v, l_ent, loss, lp, ent, value, reward
        if (step + 1) % _smoke(16, 2) == 0:
            model.eval()
            with torch.no_grad():
                nb = _smoke(32, 2)
                state = fleet([rng.randint(_smoke(12, 3), _smoke(64, 6)) for _ in range(nb)])
                total = torch.zeros(nb, device="cuda")
                for _ in range(_smoke(6, 2)):
                    state, _, _, _, reward = round_(state, _smoke(24, 3), True)
                    total = total + reward
            total.mean().item()
            del state, total, reward


# ---------------------------------------------------------------- traffic-incident detection service ((2+1)-d convnet)


class _Conv2p1(_nn.Module):
    """A (2+1)-d block: a spatial 1 x 3 x 3 convolution and a temporal 3 x 1 x 1 convolution with batch norms, a
    residual projection when the shape changes."""

    def __init__(self, cin, cout, stride_s, stride_t):
        super().__init__()
        mid = (cin + cout) // 2
        self.s = _nn.Sequential(_nn.Conv3d(cin, mid, (1, 3, 3), (1, stride_s, stride_s), (0, 1, 1), bias=False),
                                _nn.BatchNorm3d(mid), _nn.ReLU())
        self.t = _nn.Sequential(_nn.Conv3d(mid, cout, (3, 1, 1), (stride_t, 1, 1), (1, 0, 0), bias=False),
                                _nn.BatchNorm3d(cout))
        self.sc = _nn.Sequential(_nn.Conv3d(cin, cout, 1, (stride_t, stride_s, stride_s), bias=False),
                                 _nn.BatchNorm3d(cout))

    def forward(self, x):
        return _F.relu(self.t(self.s(x)) + self.sc(x))


class _IncidentNet(_nn.Module):
    def __init__(self, widths, n_cls):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv3d(3, widths[0], (1, 5, 5), (1, 2, 2), (0, 2, 2), bias=False),
                                   _nn.BatchNorm3d(widths[0]), _nn.ReLU())
        blocks, c = [], widths[0]
        for i, w in enumerate(widths):
            blocks.append(_Conv2p1(c, w, 2, 2 if i in (1, 2) else 1))
            c = w
        self.body = _nn.Sequential(*blocks)
        self.cls, self.sev = _nn.Linear(c, n_cls), mlp(c, c, 1)

    def forward(self, x):
        f = self.body(self.stem(x)).mean((2, 3, 4))
        return self.cls(f).float(), self.sev(f)[:, 0].float()


@_workload("traffic-incident detection serving (random init, a (2+1)-d residual convnet over traffic-camera clips): 3,550-3,700 requests (drawn) of 1-6 clips each (drawn), all clips of a request of 8-24 frames (drawn per request, a multiple of 4) at one camera resolution (144 x 192 or 176 x 240, drawn per request) of uint8 pixels; the pixels uploaded on a side stream from two reused pinned host buffers (filled once, sized for 6 clips of 24 frames of 176 x 240) one request ahead (one span, waited on by event, record_stream'ed), normalised on the device; a 5 x 5 stride-2 spatial stem of 32 channels and four (2+1)-d residual blocks (32/64/128/192 channels, spatial stride 2, temporal stride 2 in the middle two, batch norm) under bf16 autocast, global pooling; 6 incident classes (crash, stalled vehicle, debris, wrong-way, congestion, none) and a severity score; each request's class probabilities and severities read back")
def traffic_incident_serve(rng):
    widths, n_cls = _smoke([32, 64, 128, 192], [8, 8, 16, 16]), 6
    model = _IncidentNet(widths, n_cls).cuda().eval()
    model.requires_grad_(False)
    sizes = _smoke([(144, 192), (176, 240)], [(32, 48), (48, 64)])
    max_clips, max_frames = _smoke(6, 2), _smoke(24, 8)
    big = max(h * w for h, w in sizes) * 3
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_clips * max_frames * big,), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    mean = torch.tensor([0.42, 0.42, 0.40], device="cuda").view(1, 3, 1, 1, 1) * 255
    std = torch.tensor([0.24, 0.23, 0.23], device="cuda").view(1, 3, 1, 1, 1) * 255
    nreq = rng.randint(_smoke(3550, 3), _smoke(3700, 4))
    plan = [(rng.randint(1, max_clips), rng.randint(_smoke(8, 4) // 4, max_frames // 4) * 4, *rng.choice(sizes))
            for _ in range(nreq)]

    def span(p):
        return p[0] * p[1] * 3 * p[2] * p[3]

    nxt = up.upload(0, span(plan[0]))
    for i in range(nreq):
        clips, frames, h, w = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, span(plan[i + 1]))
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            x = raw.view(clips, frames, 3, h, w).permute(0, 2, 1, 3, 4).float().sub_(mean).div_(std)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits, sev = model(x)
            out = torch.cat([logits.softmax(-1), torch.sigmoid(sev)[:, None]], 1)
        out.tolist()
        del item, raw, x, logits, sev, out

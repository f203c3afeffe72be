"""The hundred-and-thirty-eighth batch of held-out workloads for record.py, second half (see batch138.py): wineries and
viticulture, written in torch alone. Vineyard block training (a graph attention network over an estate's vine blocks,
the edges each block's nearest neighbours found on the device by topk of the distances; the yield, the pressure of
three diseases and the harvest date, on the labelled blocks only), a cellar sensor service (a dilated causal temporal
convolutional autoencoder over each sensor's readings of drawn length, the reconstruction error as an anomaly score, a
forecast of the next readings and the alarms summed per cellar zone), canopy and irrigation policy training (PPO over
a vineyard simulated on the device, a Gaussian irrigation amount and a categorical canopy action, the advantages by
GAE written out backwards over the drawn horizon) and berry ripeness fine-tuning (a vision transformer over cluster
photos of drawn shape, its first blocks frozen, the sugar, acidity, pH, colour, seed browning and the days to
harvest).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the cellar service), `rng` the workload's random.Random for every shape, count and sampled choice,
sizes through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or
masked_fill; no boolean-mask indexing; results read back only at logging points or once per request.
cellar_sensor_tcn_serve uploads its readings on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every embedding and position table is sized for the longest padded length that can be drawn.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- vineyard blocks (graph attention network)


class _GATLayer(_nn.Module):
    """Multi-head graph attention: each edge's logit from the two blocks' projections and the edge's features
    (distance, slope, same variety), LeakyReLU, exp after subtracting the largest logit (detached), normalised by
    index_add_ sums at the destination; the messages summed by index_add_ in their own dtype; a residual, a layer
    norm and a GELU MLP."""

    def __init__(self, d, heads, de):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.proj = _nn.Linear(d, d, bias=False)
        self.a_src, self.a_dst = _nn.Parameter(torch.randn(heads, self.dh) * 0.1), \
            _nn.Parameter(torch.randn(heads, self.dh) * 0.1)
        self.edge = _nn.Linear(de, heads)
        self.n1, self.n2 = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.ff = mlp(d, 2 * d, d, act=_nn.GELU)

    def forward(self, x, ef, src, dst):
        n, d = x.shape
        z = self.proj(self.n1(x)).view(n, self.h, self.dh)
        e = (z * self.a_src).sum(-1).index_select(0, src) + (z * self.a_dst).sum(-1).index_select(0, dst)
        e = _F.leaky_relu(e.float() + self.edge(ef).float(), 0.2)
        w = torch.exp(e - e.detach().amax())
        den = w.new_zeros(n, self.h).index_add_(0, dst, w)
        msg = z.index_select(0, src) * w[..., None].to(z.dtype)
        agg = msg.new_zeros(n, self.h, self.dh).index_add_(0, dst, msg)
        agg = agg / den.clamp_min(1e-6)[..., None].to(agg.dtype)
        x = x + agg.reshape(n, d).to(x.dtype)
        return x + self.ff(self.n2(x))


class _VineyardGAT(_nn.Module):
    def __init__(self, fin, n_var, n_root, d, heads, layers, de):
        super().__init__()
        self.inp = mlp(fin, d, d, act=_nn.GELU)
        self.var, self.root = _nn.Embedding(n_var, d), _nn.Embedding(n_root, d)
        self.layers = _nn.ModuleList(_GATLayer(d, heads, de) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.out = mlp(d, d, 5, act=_nn.GELU)

    def forward(self, feats, var, root, ef, src, dst):
        x = self.inp(feats) + self.var(var) + self.root(root)
        for layer in self.layers:
            x = layer(x, ef, src, dst)
        return self.out(self.norm(x)).float()


@_workload("vineyard block yield and disease training (random init, a graph attention network): 400-1,600 vine blocks a step (drawn), each with 24 drawn features (soil texture and depth, slope and aspect, vine age and spacing, last season's yield, NDVI of 6 flights, growing degree days, rainfall, spray counts) and its variety (of 20) and rootstock (of 10) by tables; positions drawn on the device and each block's 8 nearest blocks found by topk of the pairwise distances (the edges made both ways), with the distance, the slope between them and a same-variety flag as edge features; 4 graph attention layers of width 128, 8 heads (logits from both blocks and the edge features, LeakyReLU, exp after the largest logit, sums by index_add_ in the messages' dtype, residual, layer norm, GELU MLP); the yield in tonnes a hectare and the harvest date offset by Huber losses and the pressure of downy mildew, powdery mildew and botrytis by BCE, all masked to the labelled blocks (about 60%, drawn on the device); AdamW, clipping, bf16 autocast, 520 steps; the losses read back every 10 steps and every 104 steps a no-grad pass over 1,600 blocks with the yield error read back")
def vineyard_block_gat_train(rng):
    fin, n_var, n_root, d, heads, layers, de, knn = 24, 20, 10, _smoke(128, 16), _smoke(8, 2), _smoke(4, 1), 3, 8
    n_lo, n_hi = _smoke(400, 12), _smoke(1600, 20)
    model = _VineyardGAT(fin, n_var, n_root, d, heads, layers, de).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    steps, every = _smoke(520, 3), _smoke(104, 2)

    def estate(n):
        xy = torch.rand(n, 2, device="cuda") * 5.0
        elev = torch.rand(n, device="cuda") * 80.0
        var = torch.randint(0, n_var, (n,), device="cuda")
        root = torch.randint(0, n_root, (n,), device="cuda")
        feats = torch.randn(n, fin, device="cuda")
        dist = torch.cdist(xy, xy) + torch.eye(n, device="cuda") * 1e4
        nd, nb = dist.topk(knn, -1, largest=False)
        a = torch.arange(n, device="cuda").repeat_interleave(knn)
        c = nb.flatten()
        src, dst = torch.cat([a, c]), torch.cat([c, a])
        dd = torch.cat([nd.flatten(), nd.flatten()])
        slope = (elev.index_select(0, dst) - elev.index_select(0, src)) / (dd * 1000.0).clamp_min(1.0)
        same = (var.index_select(0, src) == var.index_select(0, dst)).float()
        ef = torch.stack([dd, slope, same], -1)
        y = torch.stack([2.0 + 10.0 * torch.rand(n, device="cuda"), 20.0 * torch.randn(n, device="cuda")], -1)
        dis = (torch.rand(n, 3, device="cuda") < 0.3).float()
        lab = (torch.rand(n, device="cuda") < 0.6).float()
        return (feats, var, root, ef, src, dst), y, dis, lab

    def losses(out, y, dis, lab):
        s = lab.sum().clamp_min(1.0)
        l_y = (_F.huber_loss(out[:, 0], y[:, 0], reduction="none") * lab).sum() / s
        l_d = (_F.huber_loss(out[:, 1], y[:, 1] / 10.0, reduction="none") * lab).sum() / s
        l_p = (_F.binary_cross_entropy_with_logits(out[:, 2:], dis, reduction="none") * lab[:, None]).sum() / (3 * s)
        return l_y, l_d, l_p

    for step in range(steps):
        model.train()
        n = rng.randint(n_lo, n_hi)
        with torch.no_grad():
            inputs, y, dis, lab = estate(n)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(*inputs)
        l_y, l_d, l_p = losses(out, y, dis, lab)
        loss = l_y + l_d + l_p
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_y.detach(), l_d.detach(), l_p.detach()]).tolist()
        del inputs, y, dis, lab, out, l_y, l_d, l_p, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                inputs, y, dis, lab = estate(n_hi)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    out = model(*inputs)
                err = ((out[:, 0] - y[:, 0]).abs() * lab).sum() / lab.sum().clamp_min(1.0)
            err.item()
            del inputs, y, dis, lab, out, err


# ---------------------------------------------------------------- cellar sensors (temporal convolutional service)


class _TCNBlock(_nn.Module):
    """A causal dilated residual block: left padding, two dilated 1-d convolutions of kernel 3 with group norm and
    GELU, the input added back."""

    def __init__(self, c, dil):
        super().__init__()
        self.pad = 2 * dil
        self.c1, self.c2 = _nn.Conv1d(c, c, 3, dilation=dil), _nn.Conv1d(c, c, 3, dilation=dil)
        self.n1, self.n2 = _nn.GroupNorm(8, c), _nn.GroupNorm(8, c)

    def forward(self, x):
        h = _F.gelu(self.n1(self.c1(_F.pad(x, (self.pad, 0)))))
        h = self.n2(self.c2(_F.pad(h, (self.pad, 0))))
        return _F.gelu(x + h)


class _CellarTCN(_nn.Module):
    """An encoder of causal dilated blocks, a 1x1 decoder back to the channels (the reconstruction) and a forecast
    head from the last step's features."""

    def __init__(self, cin, c, dils, horizon):
        super().__init__()
        self.cin, self.horizon = cin, horizon
        self.inp = _nn.Conv1d(cin + 1, c, 1)
        self.blocks = _nn.Sequential(*[_TCNBlock(c, d_) for d_ in dils])
        self.rec = _nn.Conv1d(c, cin, 1)
        self.fore = mlp(c, c, cin * horizon, act=_nn.GELU)

    def forward(self, x, kind):
        h = self.blocks(self.inp(torch.cat([x, kind], 1)))
        return self.rec(h).float(), self.fore(h[..., -1]).float().view(x.shape[0], self.cin, self.horizon)


@_workload("cellar sensor anomaly serving (random init, a dilated causal temporal convolutional autoencoder): 2,700-2,740 requests (drawn) of one cellar's 32-256 sensors (drawn), each with 288-1,152 readings every 5 minutes (drawn per request in steps of 96) of 4 channels (temperature, humidity, CO2, tank pressure), fp16 uploaded on a side stream from two reused pinned host buffers (filled once, sized for 256 x 4 x 1,152) one request ahead (one span, through SideUploads.ahead); each sensor scaled by its own mean and standard deviation; the sensor's kind (barrel room, tank, bottle store; drawn on the device) as a constant channel; a 1x1 input of 64 channels, 6 causal dilated residual blocks (dilations 1 to 32, kernel 3, group norm, GELU), a 1x1 reconstruction and a forecast of the next 12 readings from the last step, in eval mode under bf16 autocast; the anomaly score as the mean squared reconstruction error of the last 24 readings over that of the whole window, alarms above 3, each zone's (2-12 zones drawn, sensors assigned on the host) alarm count and worst score by index_add_ and scatter_reduce in fp32, and the forecast's excursions past 18 C; each request's figures read back once")
def cellar_sensor_tcn_serve(rng):
    cin, c, horizon = 4, _smoke(64, 16), 12
    dils = _smoke([1, 2, 4, 8, 16, 32], [1, 2])
    n_lo, n_hi, t_lo, t_hi, unit = _smoke(32, 4), _smoke(256, 8), _smoke(288, 48), _smoke(1152, 96), _smoke(96, 48)
    model = _CellarTCN(cin, c, dils, horizon).cuda().eval()
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [(torch.randn(n_hi * cin * t_hi, generator=gen) * 3.0 + 14.0).half().pin_memory() for _ in range(2)]
    up = SideUploads(host)

    nreq = rng.randint(_smoke(2700, 3), _smoke(2740, 4))
    plan = []
    for _ in range(nreq):
        n, t = rng.randint(n_lo, n_hi), rng.randint(t_lo // unit, t_hi // unit) * unit
        n_zone = rng.randint(2, 12)
        plan.append((n, t, n_zone, [rng.randrange(n_zone) for _ in range(n)]))

    for (n, t, n_zone, zone), raw in up.ahead(plan, lambda p: (p[0] * cin * p[1],)):
        with torch.no_grad():
            x = raw.view(n, cin, t).float()
            mu, sd = x.mean(-1, keepdim=True), x.std(-1, keepdim=True).clamp_min(1e-3)
            xn = (x - mu) / sd
            kind = torch.randint(0, 3, (n, 1, 1), device="cuda").float().expand(n, 1, t)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                rec, fore = model(xn, kind)
            err = (rec - xn).pow(2).mean(1)
            score = err[:, -24:].mean(-1) / err.mean(-1).clamp_min(1e-6)
            alarm = (score > 3.0).float()
            z = torch.tensor(zone, device="cuda")
            counts = torch.zeros(n_zone, device="cuda").index_add_(0, z, alarm)
            worst = torch.zeros(n_zone, device="cuda").scatter_reduce(0, z, score, "amax", include_self=False)
            temp = fore[:, 0] * sd[:, 0] + mu[:, 0]
            over = (temp > 18.0).float().sum(-1)
            figs = torch.cat([score, alarm, counts, worst, over, temp[:, -1]])
        figs.tolist()
        del raw, x, mu, sd, xn, kind, rec, fore, err, score, alarm, z, counts, worst, temp, over, figs


# ---------------------------------------------------------------- canopy and irrigation policy (PPO)


class _ActorCritic(_nn.Module):
    """A shared trunk of two tanh layers; a Gaussian head (mean and a learned log std) for the irrigation amount, a
    categorical head for the canopy action and a value head."""

    def __init__(self, fin, d, n_act):
        super().__init__()
        self.trunk = _nn.Sequential(_nn.Linear(fin, d), _nn.Tanh(), _nn.Linear(d, d), _nn.Tanh())
        self.mu, self.cat, self.v = _nn.Linear(d, 1), _nn.Linear(d, n_act), _nn.Linear(d, 1)
        self.log_std = _nn.Parameter(torch.full((1,), -0.5))

    def forward(self, s):
        h = self.trunk(s)
        return self.mu(h).float()[:, 0], self.cat(h).float(), self.v(h).float()[:, 0]


def _vine_step(state, water, act, weather):
    """One simulated week of a vineyard block: soil moisture at 3 depths filled by rain and irrigation and drained
    by evapotranspiration through the canopy, stem water potential from the moisture, canopy growth slowed by
    stress and cut by hedging or leaf removal, berry weight and sugar accumulation; the reward a quality score from
    moderate stress and sugar, less the water's and the labour's costs."""
    soil, swp, canopy, berry, brix, day = state.unbind(-1)[:3], state[:, 3], state[:, 4], state[:, 5], state[:, 6], \
        state[:, 7]
    rain, et0, heat = weather.unbind(-1)
    s0, s1, s2 = soil
    hedge, leaf, thin = (act == 1).float(), (act == 2).float(), (act == 3).float()
    uptake = et0 * canopy * 0.6
    s0 = (s0 + rain + water - uptake * 0.5).clamp(0.0, 1.0)
    s1 = (s1 + 0.3 * s0 - uptake * 0.3).clamp(0.0, 1.0)
    s2 = (s2 + 0.1 * s1 - uptake * 0.2).clamp(0.0, 1.0)
    moist = 0.5 * s0 + 0.3 * s1 + 0.2 * s2
    swp = -0.2 - 1.6 * (1.0 - moist) - 0.2 * heat
    stress = (-swp - 0.8).clamp_min(0.0)
    canopy = (canopy * (1.0 + 0.08 * (1.0 - stress)) * (1.0 - 0.2 * hedge - 0.1 * leaf)).clamp(0.1, 2.0)
    berry = berry + 0.05 * moist - 0.03 * stress + 0.02 * thin
    brix = brix + 1.2 * canopy.clamp(max=1.2) * (1.0 - 0.5 * stress) + 0.4 * leaf
    day = day + 7.0 / 180.0
    quality = -(swp + 1.0).pow(2) + 0.05 * brix + 0.3 * leaf * heat - 0.2 * berry
    reward = quality - 0.8 * water - 0.15 * (hedge + leaf + thin)
    return torch.stack([s0, s1, s2, swp, canopy, berry, brix, day], -1), reward


@_workload("canopy and irrigation policy training (random init, PPO over a vineyard simulated on the device): 52 iterations, each 512-1,536 blocks (drawn per iteration) over a horizon of 16-32 weeks (drawn per iteration) of a simulated season (3 soil moisture depths, stem water potential, canopy size, berry weight, sugar and the day, with rain, reference evapotranspiration and heat drawn every week); an actor-critic of two tanh layers of width 256 over the state and the week's weather, a tanh-squashed Gaussian irrigation amount (a learned log std) and a categorical canopy action of 4 (none, hedging, leaf removal, cluster thinning) by Gumbel-max, under no grad and bf16 autocast while rolling out; the reward moderate stress and sugar less water and labour costs; the advantages by GAE (gamma 0.97, lambda 0.95) written out backwards over the horizon, normalised; 4 epochs of 4 minibatches (a randperm on the device) of the clipped PPO loss (clip 0.2) on both heads' log-probabilities, a value loss and an entropy bonus; Adam, clipping, bf16 autocast; the mean return and the last minibatch's loss read back every iteration")
def canopy_irrigation_ppo_train(rng):
    fin, d, n_act = 11, _smoke(256, 16), 4
    model = _ActorCritic(fin, d, n_act).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    iters, epochs, n_mb = _smoke(52, 2), _smoke(4, 1), _smoke(4, 2)
    e_lo, e_hi, h_lo, h_hi = _smoke(512, 8), _smoke(1536, 12), _smoke(16, 3), _smoke(32, 4)
    gamma, lam, clip = 0.97, 0.95, 0.2

    def logp_of(mu, log_std, logits, pre, act):
        std = log_std.exp()
        lp_w = -0.5 * ((pre - mu) / std).pow(2) - log_std - 0.5 * math.log(2 * math.pi)
        lp_w = lp_w - torch.log(1.0 - torch.tanh(pre).pow(2) + 1e-6)
        lp_a = logits.log_softmax(-1).gather(1, act[:, None])[:, 0]
        return lp_w + lp_a

    for it in range(iters):
        n, hor = rng.randint(e_lo, e_hi), rng.randint(h_lo, h_hi)
        states, pres, acts, logps, vals, rews = [], [], [], [], [], []
        with torch.no_grad():
            state = torch.cat([0.4 + 0.4 * torch.rand(n, 3, device="cuda"), -0.5 * torch.ones(n, 1, device="cuda"),
                               0.3 + 0.3 * torch.rand(n, 1, device="cuda"), torch.ones(n, 1, device="cuda"),
                               torch.full((n, 1), 4.0, device="cuda"), torch.zeros(n, 1, device="cuda")], -1)
            for _ in range(hor):
                weather = torch.stack([0.1 * torch.rand(n, device="cuda").pow(3),
                                       0.05 + 0.05 * torch.rand(n, device="cuda"), torch.rand(n, device="cuda")], -1)
                s = torch.cat([state, weather], -1)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    mu, logits, v = model(s)
                pre = mu + model.log_std.exp() * torch.randn_like(mu)
                g = -torch.log(-torch.log(torch.rand_like(logits).clamp(1e-6, 1.0 - 1e-6)))
                act = (logits + g).argmax(-1)
                lp = logp_of(mu, model.log_std, logits, pre, act)
                water = 0.05 * (torch.tanh(pre) + 1.0)
                state, r = _vine_step(state, water, act, weather)
                states.append(s)
                pres.append(pre)
                acts.append(act)
                logps.append(lp)
                vals.append(v)
                rews.append(r)
            s_last = torch.cat([state, torch.zeros(n, 3, device="cuda")], -1)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                _, _, v_next = model(s_last)
            gae, advs = torch.zeros(n, device="cuda"), []
            for k in range(hor - 1, -1, -1):
                delta = rews[k] + gamma * v_next - vals[k]
                gae = delta + gamma * lam * gae
                advs.append(gae)
                v_next = vals[k]
            adv = torch.stack(advs[::-1]).flatten()
            ret = adv + torch.stack(vals).flatten()
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            s_all, pre_all = torch.cat(states), torch.cat(pres)
            act_all, lp_all = torch.cat(acts), torch.cat(logps)
            mean_ret = torch.stack(rews).sum(0).mean()
        total = n * hor
        mb = total // n_mb
        for _ in range(epochs):
            perm = torch.randperm(total, device="cuda")
            for j in range(n_mb):
                ix = perm[j * mb:(j + 1) * mb]
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    mu, logits, v = model(s_all.index_select(0, ix))
                lp = logp_of(mu, model.log_std, logits, pre_all.index_select(0, ix), act_all.index_select(0, ix))
                ratio = torch.exp(lp - lp_all.index_select(0, ix))
                a = adv.index_select(0, ix)
                l_pi = -torch.minimum(ratio * a, ratio.clamp(1.0 - clip, 1.0 + clip) * a).mean()
                l_v = (v - ret.index_select(0, ix)).pow(2).mean()
                ent = -(logits.softmax(-1) * logits.log_softmax(-1)).sum(-1).mean() + model.log_std.sum()
                loss = l_pi + 0.5 * l_v - 0.01 * ent
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
                opt.step()
            del perm, ix, mu, logits, v, lp, ratio, a, l_pi, l_v, ent
        torch.stack([mean_ret, loss.detach()]).tolist()
        del states, pres, acts, logps, vals, rews, state, weather, s, pre, g, act, water, r, s_last, v_next, gae
        del advs, adv, ret, s_all, pre_all, act_all, lp_all, mean_ret, loss


# ---------------------------------------------------------------- berry ripeness (vision transformer fine-tuning)


class _BerryViT(_nn.Module):
    """A ViT: 16-px patches by a strided convolution, a class token, row and column position tables sized for the
    largest grid, pre-norm blocks, heads for the chemistry (sugar, acidity, pH, anthocyanins, days to harvest) and
    the seed browning stage."""

    def __init__(self, d, heads, layers, max_rows, max_cols, n_stage):
        super().__init__()
        self.patch = _nn.Conv2d(3, d, 16, 16)
        self.cls = _nn.Parameter(torch.zeros(1, 1, d))
        self.row, self.col = _nn.Embedding(max_rows, d), _nn.Embedding(max_cols, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.chem, self.stage = mlp(d, d, 5, act=_nn.GELU), _nn.Linear(d, n_stage)

    def forward(self, x, frozen):
        p = self.patch(x)
        b, d, gh, gw = p.shape
        pos = self.row(torch.arange(gh, device=x.device))[:, None] + self.col(torch.arange(gw, device=x.device))[None]
        z = torch.cat([self.cls.expand(b, 1, d).to(p.dtype), p.flatten(2).transpose(1, 2) + pos.flatten(0, 1)], 1)
        with torch.no_grad():
            for blk in self.blocks[:frozen]:
                z = blk(z)
        for blk in self.blocks[frozen:]:
            z = blk(z)
        c = self.norm(z[:, 0])
        return self.chem(c).float(), self.stage(c).float()


@_workload("berry ripeness fine-tuning (random init standing in for a pretrained vision transformer, its first blocks frozen): 16-48 cluster photos a step (drawn) at 192-320 px high and 192-320 px wide in steps of 32 (drawn per step); 16-px patches by a strided convolution, a class token, 20-row and 20-column position tables (the largest grid), 8 pre-norm blocks of width 384, 6 heads, a GELU MLP of 1,536; the patch embedding, the class token, the position tables and the first 5 blocks frozen (the blocks run under no grad), the last 3 blocks and the heads trained; the sugar, titratable acidity, pH, anthocyanins and days to harvest by a Huber loss and the seed browning stage (of 5) by cross-entropy; AdamW with a warm-up set on the host, clipping, bf16 autocast, 570 steps; the losses read back every 10 steps and every 114 steps a no-grad pass over 64 photos of 256 x 256 with the stage accuracy read back")
def berry_ripeness_vit_finetune(rng):
    d, heads, layers, frozen, n_stage = _smoke(384, 32), _smoke(6, 2), _smoke(8, 2), _smoke(5, 1), 5
    sizes = [192, 224, 256, 288, 320] if _smoke(1, 0) else [32, 48]
    grid = max(sizes) // 16
    model = _BerryViT(d, heads, layers, grid, grid, n_stage).cuda()
    for m in [model.patch, model.row, model.col, *model.blocks[:frozen]]:
        m.requires_grad_(False)
    model.cls.requires_grad_(False)
    train = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(train, lr=1e-4, weight_decay=0.05)
    steps, every, warm = _smoke(570, 3), _smoke(114, 2), _smoke(40, 1)

    for step in range(steps):
        model.train()
        for g in opt.param_groups:
            g["lr"] = 1e-4 * min(1.0, (step + 1) / warm)
        b, h, w = rng.randint(_smoke(16, 2), _smoke(48, 3)), rng.choice(sizes), rng.choice(sizes)
        x = torch.randn(b, 3, h, w, device="cuda")
        chem_y = torch.randn(b, 5, device="cuda")
        stage_y = torch.randint(0, n_stage, (b,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            chem, stage = model(x, frozen)
        l_chem = _F.huber_loss(chem, chem_y)
        l_stage = _F.cross_entropy(stage, stage_y)
        loss = l_chem + 0.5 * l_stage
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(train, 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_chem.detach(), l_stage.detach()]).tolist()
        del x, chem_y, stage_y, chem, stage, l_chem, l_stage, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                nb, r = _smoke(64, 2), sizes[-3] if len(sizes) > 2 else sizes[-1]
                x = torch.randn(nb, 3, r, r, device="cuda")
                stage_y = torch.randint(0, n_stage, (nb,), device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    _, stage = model(x, frozen)
                acc = (stage.argmax(-1) == stage_y).float().mean()
            acc.item()
            del x, stage_y, stage, acc

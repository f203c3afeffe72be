"""The hundred-and-twenty-second batch of held-out workloads for record.py, kept in a file of their own (as batch16.py
to batch121_b.py are): beekeeping, apiculture and pollination, written in torch alone, second half. Plant-pollinator
visit network training (a bipartite message-passing network over flower patches and pollinator groups of drawn counts,
messages summed by index_add both ways, visit counts on observed edges and observed-or-not against drawn non-edges),
a crop pollination-map diffusion sampler (a 2-d U-Net denoiser over orchard fields of drawn sizes, conditioned on
land-cover layers by concatenation, DDIM steps drawn per request, coverage by guild and under-pollinated share),
hive placement policy training (a residual convnet policy placing a drawn number of hives one by one on orchard grids
of drawn sizes by Gumbel-max, forage coverage added by Gaussian kernels, REINFORCE with a learned value baseline) and
a swarm-alert service on raw hive audio (a learned strided filterbank and a dilated 1-d residual convnet over clips of
drawn durations from a drawn number of microphones, the colony state and piping events per clip).
Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths,
resolutions and batch sizes are fixed on the host, padding handled by masks or by torch.where / masked_fill, no
boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
hive_swarm_alert_serve uploads its audio on a side stream (two reused pinned host buffers, one request ahead, through
workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast. No model
here has a position table.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new122.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and
for the CPU smoke run (RECORD_SMOKE=1).
"""

import math

import torch

from batch_common import Batch
from workload_helpers import SideUploads, TimeResBlock, _sincos, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- plant-pollinator visit network (bipartite GNN)


class _BipartiteLayer(_nn.Module):
    """Edge messages by an MLP over the edge and both ends (index_select), summed into plants and into pollinators
    by index_add in the messages' dtype, node MLPs with residuals and layer norm; the edge state updated too."""

    def __init__(self, d):
        super().__init__()
        self.msg = mlp(3 * d, d, 2 * d, act=_nn.SiLU)
        self.up_p, self.up_q = mlp(2 * d, d, d, act=_nn.SiLU), mlp(2 * d, d, d, act=_nn.SiLU)
        self.n_p, self.n_q, self.n_e = _nn.LayerNorm(d), _nn.LayerNorm(d), _nn.LayerNorm(d)

    def forward(self, hp, hq, he, src, dst):
        m = self.msg(torch.cat([he, hp.index_select(0, src), hq.index_select(0, dst)], -1))
        to_q, to_p = m.chunk(2, -1)
        agg_q = to_q.new_zeros(hq.shape[0], to_q.shape[-1]).index_add_(0, dst, to_q)
        agg_p = to_p.new_zeros(hp.shape[0], to_p.shape[-1]).index_add_(0, src, to_p)
        hp = self.n_p(hp + self.up_p(torch.cat([hp, agg_p.to(hp.dtype)], -1)))
        hq = self.n_q(hq + self.up_q(torch.cat([hq, agg_q.to(hq.dtype)], -1)))
        return hp, hq, self.n_e(he + to_q.to(he.dtype) + to_p.to(he.dtype))


class _VisitGnn(_nn.Module):
    """Plant, pollinator and edge encoders, bipartite layers, and an edge decoder over both ends' states and the
    edge state (log visit rate, observed logit); the same decoder scores drawn non-edges with a zero edge state."""

    def __init__(self, n_p, n_q, n_e, d, layers):
        super().__init__()
        self.enc_p, self.enc_q = mlp(n_p, d, d, act=_nn.SiLU), mlp(n_q, d, d, act=_nn.SiLU)
        self.enc_e = mlp(n_e, d, d, act=_nn.SiLU)
        self.layers = _nn.ModuleList(_BipartiteLayer(d) for _ in range(layers))
        self.dec = mlp(3 * d, d, 2, act=_nn.SiLU)

    def forward(self, xp, xq, xe, src, dst, neg_src, neg_dst):
        hp, hq, he = self.enc_p(xp), self.enc_q(xq), self.enc_e(xe)
        for lay in self.layers:
            hp, hq, he = lay(hp, hq, he, src, dst)
        pos = self.dec(torch.cat([hp.index_select(0, src), hq.index_select(0, dst), he], -1))
        zero = he.new_zeros(neg_src.shape[0], he.shape[-1])
        neg = self.dec(torch.cat([hp.index_select(0, neg_src), hq.index_select(0, neg_dst), zero], -1))
        return pos.float(), neg[:, 1].float()


@_workload("plant-pollinator visit network training (random init, a bipartite message-passing network): one landscape a step of 300-1,500 flower patches (drawn, 14 features: species group, flower density, corolla depth, nectar sugar, colour, bloom stage, ...) and 80-400 pollinator groups (drawn, 10 features: honeybee, bumblebee, solitary bee, hoverfly, tongue length, body size, ...), 6-16 observed visit edges a pollinator group (drawn per step) to patches drawn at random with 6 edge features (transect counts, time of day, weather, distance to hive), and as many non-edges drawn at random, all drawn on the device; node and edge MLP encoders (width 160), 6 bipartite layers (an edge MLP over the edge and both ends by index_select, messages summed into patches and into pollinator groups by index_add in the messages' dtype, node MLPs, residuals with layer norm, the edge state updated), an edge decoder to a log visit rate (a Poisson likelihood on counts drawn by torch.poisson) and an observed logit (BCE, observed edges against non-edges); AdamW, clipping, bf16 autocast, 340 steps; the losses read back every 20 steps and every 85 steps a no-grad pass over a landscape of 1,500 patches and 400 groups with 16 edges each, with the visit-count mean absolute error and the observed-edge accuracy read back")
def pollinator_visit_gnn_train(rng):
    n_p, n_q, n_e, d, layers = 14, 10, 6, _smoke(160, 16), _smoke(6, 2)
    model = _VisitGnn(n_p, n_q, n_e, d, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)

    def landscape(np_, nq, deg):
        ne = nq * deg
        xp, xq = torch.randn(np_, n_p, device="cuda"), torch.randn(nq, n_q, device="cuda")
        xe = torch.randn(ne, n_e, device="cuda")
        dst = torch.arange(nq, device="cuda").repeat_interleave(deg)
        src = torch.randint(0, np_, (ne,), device="cuda")
        neg_src, neg_dst = torch.randint(0, np_, (ne,), device="cuda"), torch.randint(0, nq, (ne,), device="cuda")
        visits = torch.poisson(torch.rand(ne, device="cuda") * 8.0)
        return xp, xq, xe, src, dst, neg_src, neg_dst, visits

    def losses(pos, neg, visits):
        l_vis = _F.poisson_nll_loss(pos[:, 0], visits, log_input=True)
        logit = torch.cat([pos[:, 1], neg])
        target = torch.cat([torch.ones_like(pos[:, 1]), torch.zeros_like(neg)])
        return l_vis, _F.binary_cross_entropy_with_logits(logit, target), logit, target

    steps = _smoke(340, 3)
    for step in range(steps):
        model.train()
        np_, nq = rng.randint(_smoke(300, 8), _smoke(1500, 16)), rng.randint(_smoke(80, 4), _smoke(400, 8))
        deg = rng.randint(_smoke(6, 2), _smoke(16, 3))
        xp, xq, xe, src, dst, neg_src, neg_dst, visits = landscape(np_, nq, deg)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pos, neg = model(xp, xq, xe, src, dst, neg_src, neg_dst)
        l_vis, l_obs, logit, target = losses(pos, neg, visits)
        loss = l_vis + l_obs
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_vis.detach(), l_obs.detach()]).tolist()
        del xp, xq, xe, src, dst, neg_src, neg_dst, visits, pos, neg, l_vis, l_obs, logit, target, loss
        if (step + 1) % _smoke(85, 2) == 0:
            model.eval()
            with torch.no_grad():
                xp, xq, xe, src, dst, neg_src, neg_dst, visits = landscape(_smoke(1500, 16), _smoke(400, 8),
                                                                           _smoke(16, 3))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pos, neg = model(xp, xq, xe, src, dst, neg_src, neg_dst)
                _, _, logit, target = losses(pos, neg, visits)
                res = torch.stack([(pos[:, 0].exp() - visits).abs().mean(), ((logit > 0).float() == target).float()
                                   .mean()])
            res.tolist()
            del xp, xq, xe, src, dst, neg_src, neg_dst, visits, pos, neg, logit, target, res


# ---------------------------------------------------------------- crop pollination-map diffusion sampler (2-d U-Net)


class _MapUnet(_nn.Module):
    """A 2-d U-Net denoiser: the noisy coverage maps concatenated with the land-cover layers, time-conditioned
    residual blocks at three widths, stride-2 convolutions down, nearest upsampling with concatenated skips; a
    sinusoidal timestep embedding through an MLP, plus an embedding of the crop (of 12)."""

    def __init__(self, n_out, n_cond, widths, temb, n_crop):
        super().__init__()
        w0, w1, w2 = widths
        self.temb = mlp(temb, temb, temb, act=_nn.SiLU)
        self.crop = _nn.Embedding(n_crop, temb)
        self.inp = _nn.Conv2d(n_out + n_cond, w0, 3, 1, 1)
        self.d0, self.d1, self.d2 = TimeResBlock(w0, w0, temb), TimeResBlock(w1, w1, temb), TimeResBlock(w2, w2, temb)
        self.down0, self.down1 = _nn.Conv2d(w0, w1, 3, 2, 1), _nn.Conv2d(w1, w2, 3, 2, 1)
        self.mid = TimeResBlock(w2, w2, temb)
        self.u1, self.u0 = TimeResBlock(w2 + w1, w1, temb), TimeResBlock(w1 + w0, w0, temb)
        self.out = _nn.Sequential(_nn.GroupNorm(8, w0), _nn.SiLU(), _nn.Conv2d(w0, n_out, 3, 1, 1))
        self.tdim = temb

    def forward(self, x, cond, t, crop):
        te = self.temb(_sincos(t, self.tdim)) + self.crop(crop)
        h0 = self.d0(self.inp(torch.cat([x, cond], 1)), te)
        h1 = self.d1(self.down0(h0), te)
        h = self.mid(self.d2(self.down1(h1), te), te)
        h = self.u1(torch.cat([_F.interpolate(h, scale_factor=2.0, mode="nearest"), h1], 1), te)
        h = self.u0(torch.cat([_F.interpolate(h, scale_factor=2.0, mode="nearest"), h0], 1), te)
        return self.out(h).float()


@_workload("crop pollination-map diffusion sampling (random init, a 2-d U-Net denoiser conditioned on land cover): 104-108 requests (drawn) of 2-12 orchard fields (drawn) of 48, 64, 96 or 128 cells square (drawn per request), each with 7 land-cover layers (crop rows, hedgerow, wildflower strips, woodland edge, water, hive stands, pesticide-drift risk) drawn on the device and a crop (of 12, drawn per field); the noisy 3 coverage maps (honeybee, bumblebee, solitary-bee visits) concatenated with the layers, a U-Net of time-conditioned residual blocks (widths 64/128/192, stride-2 convolutions to 1/4, nearest upsampling with skips, a sinusoidal timestep MLP plus the crop embedding); 10-36 deterministic DDIM steps (drawn per request) over a 1,000-step cosine schedule under bf16 autocast; per field the mean coverage by guild, the share of crop cells whose summed coverage is under a threshold drawn per request (0.2-0.6) and the crop-weighted coverage; each request's results read back once")
def pollination_map_diffusion_sample(rng):
    n_out, n_cond, n_crop = 3, 7, 12
    widths, temb = _smoke([64, 128, 192], [8, 16, 16]), _smoke(128, 16)
    model = _MapUnet(n_out, n_cond, widths, temb, n_crop).cuda().eval()
    model.requires_grad_(False)
    big_t = 1000
    abar = torch.cos((torch.arange(big_t + 1, device="cuda").float() / big_t + 0.008) / 1.008 * math.pi / 2) ** 2
    abar = (abar / abar[0]).clamp(1e-5, 1.0)
    res_opts = _smoke([48, 64, 96, 128], [16, 24])

    nreq = rng.randint(_smoke(104, 2), _smoke(108, 3))
    for _ in range(nreq):
        n, r = rng.randint(_smoke(2, 1), _smoke(12, 2)), rng.choice(res_opts)
        k, thr = rng.randint(_smoke(10, 2), _smoke(36, 3)), rng.uniform(0.2, 0.6)
        ts = [int(round(big_t * (1 - i / k))) for i in range(k)] + [0]
        with torch.no_grad():
            cond = (torch.rand(n, n_cond, r, r, device="cuda") < 0.3).float()
            crop = torch.randint(0, n_crop, (n,), device="cuda")
            x = torch.randn(n, n_out, r, r, device="cuda")
            for t_now, t_next in zip(ts[:-1], ts[1:]):
                a_t, a_n = abar[t_now], abar[t_next]
                tt = torch.full((n,), float(t_now), device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    eps = model(x, cond, tt, crop)
                x0 = ((x - (1 - a_t).sqrt() * eps) / a_t.sqrt()).clamp(-3.0, 3.0)
                x = a_n.sqrt() * x0 + (1 - a_n).sqrt() * eps
            cover = torch.sigmoid(x)
            crop_cells = cond[:, 0]
            under = ((cover.sum(1) < thr).float() * crop_cells).sum((1, 2)) / crop_cells.sum((1, 2)).clamp_min(1.0)
            weighted = (cover * crop_cells[:, None]).sum((2, 3)) / crop_cells.sum((1, 2)).clamp_min(1.0)[:, None]
            res = torch.cat([cover.mean((2, 3)), under[:, None], weighted], -1)
        res.tolist()
        del cond, crop, x, tt, eps, x0, cover, crop_cells, under, weighted, res


# ---------------------------------------------------------------- hive placement policy training (conv policy, RL)


class _PlacePolicy(_nn.Module):
    """Orchard layers through a 3x3 stem and residual blocks at full resolution, a 1x1 head to per-cell logits and
    a pooled value head."""

    def __init__(self, n_in, ch, blocks):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(n_in, ch, 3, 1, 1), _nn.GroupNorm(8, ch), _nn.ReLU())
        self.body = _nn.ModuleList(_nn.Sequential(_nn.Conv2d(ch, ch, 3, 1, 1), _nn.GroupNorm(8, ch), _nn.ReLU(),
                                                  _nn.Conv2d(ch, ch, 3, 1, 1), _nn.GroupNorm(8, ch))
                                   for _ in range(blocks))
        self.logit = _nn.Conv2d(ch, 1, 1)
        self.value = mlp(2 * ch, ch, 1)

    def forward(self, x):
        h = self.stem(x)
        for blk in self.body:
            h = _F.relu(h + blk(h))
        v = self.value(torch.cat([h.mean((2, 3)), h.amax((2, 3))], -1))
        return self.logit(h).flatten(1).float(), v[:, 0].float()


@_workload("hive placement policy training for orchard pollination (random init, a convolutional policy trained by REINFORCE): 16-48 orchards a step (drawn) on square grids of 16-40 cells (drawn per step, a multiple of 8) with bloom density, water distance, pesticide risk, shelter and existing apiaries drawn on the device; 3-8 hives placed one by one (drawn per step), each round a residual convnet (a 3x3 stem and 4 residual blocks of 48 channels with group norm, full resolution) over 8 layers (the 5 maps, the current forage coverage, the placed hives, the round) to per-cell logits (occupied and high-risk cells masked_fill'ed), a cell by Gumbel-max, the hive added by one-hot arithmetic and its forage coverage by a Gaussian kernel around the cell (foraging radius 2-5 cells, drawn per step), the reward the gain in pollinated bloom (bloom times capped coverage) minus a crowding and a risk cost; returns to go, a learned value baseline, policy-gradient, value and entropy losses; Adam, clipping, bf16 autocast, 215 steps; the losses and the pollinated share read back every 10 steps and every 43 steps a greedy no-grad rollout over 64 orchards of 40 cells with 8 hives, the pollinated share read back")
def hive_placement_policy_train(rng):
    n_in, ch, blocks = 8, _smoke(48, 8), _smoke(4, 1)
    model = _PlacePolicy(n_in, ch, blocks).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    lo, hi = _smoke(16, 8), _smoke(40, 16)

    def orchards(b, g):
        maps = torch.rand(b, 5, g, g, device="cuda")
        maps[:, 4] = (maps[:, 4] < 0.02).float()
        return maps

    def gumbel(logit):
        return -torch.log(-torch.log(torch.rand_like(logit).clamp(1e-6, 1 - 1e-6)))

    def rollout(maps, hives, radius, greedy):
        b, _, g, _ = maps.shape
        yy, xx = torch.meshgrid(torch.arange(g, device="cuda").float(), torch.arange(g, device="cuda").float(),
                                indexing="ij")
        coords = torch.stack([yy.flatten(), xx.flatten()], -1)
        bloom, risk = maps[:, 0], maps[:, 2]
        cover = maps[:, 4] * 0.5
        placed = torch.zeros_like(bloom)
        logps, values, ents, rewards = [], [], [], []
        for t in range(hives):
            feat = torch.cat([maps, cover[:, None], placed[:, None], torch.full_like(bloom, t / hives)[:, None]], 1)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logit, value = model(feat)
            banned = ((placed + maps[:, 4]) > 0) | (risk > 0.95)
            logit = logit.masked_fill(banned.flatten(1), -1e4)
            cell = logit.argmax(-1) if greedy else (logit + gumbel(logit)).argmax(-1)
            oh = _F.one_hot(cell, g * g).float()
            lp = logit.log_softmax(-1)
            logps.append((lp * oh).sum(-1))
            ents.append(-(lp.exp() * lp).sum(-1))
            values.append(value)
            at = oh @ coords
            d2 = ((coords[None] - at[:, None]) ** 2).sum(-1).view(b, g, g)
            before = (bloom * cover.clamp(max=1.0)).sum((1, 2))
            cover = cover + torch.exp(-d2 / (2 * radius * radius))
            placed = placed + oh.view(b, g, g)
            after = (bloom * cover.clamp(max=1.0)).sum((1, 2))
            crowd = (cover.clamp(min=2.0) - 2.0).mean((1, 2))
            rewards.append((after - before) / (g * g) * 10.0 - crowd - (risk * oh.view(b, g, g)).sum((1, 2)) * 0.2)
        share = (bloom * cover.clamp(max=1.0)).sum((1, 2)) / bloom.sum((1, 2))
        return logps, values, ents, rewards, share

    steps = _smoke(215, 3)
    for step in range(steps):
        model.train()
        b, g = rng.randint(_smoke(16, 2), _smoke(48, 3)), rng.randint(lo // 8, hi // 8) * 8
        hives, radius = rng.randint(_smoke(3, 2), _smoke(8, 3)), rng.uniform(2.0, 5.0)
        maps = orchards(b, g)
        logps, values, ents, rewards, share = rollout(maps, hives, radius, False)
        ret, rets = torch.zeros_like(rewards[0]), []
        for rwd in reversed(rewards):
            ret = rwd + ret
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
            torch.stack([l_pi.detach(), l_v.detach(), -l_ent.detach(), share.mean()]).tolist()
        del maps, logps, values, ents, rewards, share, ret, rets, ret_t, val_t, lp_t, ent_t, adv, l_pi, l_v, l_ent
        del loss
        if (step + 1) % _smoke(43, 2) == 0:
            model.eval()
            with torch.no_grad():
                maps = orchards(_smoke(64, 3), hi)
                _, _, _, _, share = rollout(maps, _smoke(8, 3), 3.5, True)
                share = share.mean()
            share.item()
            del maps, share


# ---------------------------------------------------------------- swarm-alert service on raw hive audio (1-d convnet)


class _SwarmNet(_nn.Module):
    """Raw audio through a learned filterbank (a strided 1-d convolution, log-compressed magnitude), dilated 1-d
    residual blocks with stride-2 downsampling between stages, a per-frame piping head, attention pooling over
    frames to the colony state."""

    def __init__(self, bank, kernel, hop, widths, n_state):
        super().__init__()
        self.bank = _nn.Conv1d(1, bank, kernel, hop, kernel // 2 - hop // 2, bias=False)
        self.inp = _nn.Conv1d(bank, widths[0], 1)
        stages, cin = [], widths[0]
        for i, w in enumerate(widths):
            mods = [] if i == 0 else [_nn.Conv1d(cin, w, 3, 2, 1), _nn.BatchNorm1d(w), _nn.ReLU()]
            for dil in (1, 2, 4):
                mods.append(_Res1d(w, dil))
            stages.append(_nn.Sequential(*mods))
            cin = w
        self.stages = _nn.Sequential(*stages)
        self.pipe = _nn.Conv1d(cin, 2, 1)
        self.att = _nn.Conv1d(cin, 1, 1)
        self.state = mlp(cin, cin, n_state, act=_nn.GELU)

    def forward(self, wav):
        h = self.inp(torch.log1p(self.bank(wav[:, None]).abs()))
        h = self.stages(h)
        w = self.att(h).float().softmax(-1)
        pooled = (h.float() * w).sum(-1)
        return self.state(pooled).float(), self.pipe(h).float()


class _Res1d(_nn.Module):
    def __init__(self, ch, dil):
        super().__init__()
        self.c1 = _nn.Conv1d(ch, ch, 3, 1, dil, dilation=dil, bias=False)
        self.b1 = _nn.BatchNorm1d(ch)
        self.c2 = _nn.Conv1d(ch, ch, 1, bias=False)
        self.b2 = _nn.BatchNorm1d(ch)

    def forward(self, x):
        return _F.relu(x + self.b2(self.c2(_F.relu(self.b1(self.c1(x))))))


@_workload("swarm-alert serving on raw hive audio (random init, a learned filterbank and a dilated 1-d residual convnet): 1,980-2,060 requests (drawn) of 1-8 in-hive microphone clips (drawn) of 2-12 s at 8 kHz (drawn per request, in whole seconds), float32 waveforms uploaded on a side stream from two reused pinned host buffers (filled once, sized for 8 x 12 s) one request ahead (one span, through SideUploads.ahead); a learned filterbank (a 1-d convolution of 64 filters, kernel 256, hop 64, log-compressed magnitude), a 1x1 convolution, and 3 stages (96/160/224 channels, stride-2 convolutions between them) of 3 dilated residual blocks each (dilations 1, 2, 4, batch norm) under bf16 autocast; attention pooling over frames to the colony state (normal, queenless, pre-swarm, swarming, robbing) and a per-frame piping/quacking head; per clip the state probabilities, the number of frames over 0.5 for each piping kind, the longest-burst proxy (the maximum of a 5-frame moving average) and the alert flag (pre-swarm plus swarming over 0.6); each request's results read back once")
def hive_swarm_alert_serve(rng):
    sr, bank, kernel, hop = _smoke(8000, 256), _smoke(64, 8), _smoke(256, 16), _smoke(64, 8)
    widths, n_state = _smoke([96, 160, 224], [8, 16]), 5
    max_n, lo_s, hi_s = _smoke(8, 2), _smoke(2, 1), _smoke(12, 3)
    model = _SwarmNet(bank, kernel, hop, widths, n_state).cuda().eval()
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [(torch.randn(max_n * hi_s * sr, generator=gen) * 0.1).pin_memory() for _ in range(2)]
    up = SideUploads(host)

    nreq = rng.randint(_smoke(1980, 3), _smoke(2060, 4))
    plan = [(rng.randint(1, max_n), rng.randint(lo_s, hi_s)) for _ in range(nreq)]

    for (n, secs), raw in up.ahead(plan, lambda p: (p[0] * p[1] * sr,)):
        with torch.no_grad():
            wav = raw.view(n, secs * sr)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                state, pipe = model(wav)
            prob = state.softmax(-1)
            pp = torch.sigmoid(pipe)
            frames = (pp > 0.5).float().sum(-1)
            burst = _F.avg_pool1d(pp, 5, 1, 2).amax(-1)
            alert = ((prob[:, 2] + prob[:, 3]) > 0.6).float()
            res = torch.cat([prob, frames, burst, alert[:, None]], -1)
        res.tolist()
        del raw, wav, state, pipe, prob, pp, frames, burst, alert, res

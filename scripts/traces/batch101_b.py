"""The hundred-and-first batch of held-out workloads for record.py, second half (see batch101.py): smart home, IoT
and edge devices, written in torch alone. Room-occupancy forecasting training (a temporal convnet over each room's
sensor history and a message-passing network by index_select and index_add over drawn building graphs, occupancy
probabilities and people counts for the next day), a smart-meter load-forecasting service (a patch transformer over
households' 15-minute load histories of drawn lengths with a weather token, instance normalisation, quantile
forecasts and neighbourhood aggregates), low-light doorbell-frame enhancement by conditional DDIM sampling (a
diffusion U-Net conditioned on the dark frame, drawn crop sizes and step counts) and a smart-thermostat model
predictive control simulation (cross-entropy-method planning over a learned zone-temperature surrogate, the chosen
heating applied to a resistance-capacitance plant of drawn homes, zones and horizons).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or
masked_fill; no boolean-mask indexing; results read back only at logging points or once per request or control
step. meter_load_forecast_serve uploads its inputs on a side stream (workload_helpers.SideUploads: two reused pinned
host buffers, one request ahead, the main stream waiting on an event, the tensors record_stream'ed); the other three
are single-stream. The networks run under bf16 autocast (the thermostat simulation in fp32). Every table is sized for
the largest index that can be drawn.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, TimeResBlock, _sincos, keep_mask, mlp

_b = Batch()
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- room-occupancy forecasting (temporal conv + GNN)


class _RoomGNN(_nn.Module):
    """1-d convolutions (the second and third dilated) over each room's sensor history (mean and last step
    pooled), room-type and hour-of-week embeddings, message passing over typed room adjacencies (edge MLP,
    index_add, degree normalisation, residual update from the room, its messages and its building's mean),
    occupancy and count heads."""

    def __init__(self, ch, d, layers, room_types, edge_types, horizon):
        super().__init__()
        self.tcn = _nn.ModuleList([_nn.Conv1d(ch, d, 5, 1, 2), _nn.Conv1d(d, d, 3, 1, 2, dilation=2),
                                   _nn.Conv1d(d, d, 3, 1, 4, dilation=4)])
        self.node_in = _nn.Linear(2 * d, d)
        self.rtype, self.how, self.etype = _nn.Embedding(room_types, d), _nn.Embedding(168, d), \
            _nn.Embedding(edge_types, d)
        self.msg = _nn.ModuleList(mlp(3 * d, d, d, act=_nn.SiLU) for _ in range(layers))
        self.upd = _nn.ModuleList(mlp(3 * d, d, d, act=_nn.SiLU) for _ in range(layers))
        self.norms = _nn.ModuleList(_nn.LayerNorm(d) for _ in range(layers))
        self.occ, self.count = _nn.Linear(d, horizon), _nn.Linear(d, horizon)

    def forward(self, hist, rtype, how, node_bld, n_bld, src, dst, etype):
        z = hist
        for i, conv in enumerate(self.tcn):
            z = _F.gelu(conv(z)) + (z if i else 0)
        h = self.node_in(torch.cat([z.mean(2), z[:, :, -1]], -1)) + self.rtype(rtype) + self.how(how)[node_bld]
        n = h.shape[0]
        deg = h.new_zeros(n, 1).index_add_(0, dst, h.new_ones(dst.shape[0], 1)).clamp(min=1)
        cnt = h.new_zeros(n_bld, 1).index_add_(0, node_bld, h.new_ones(n, 1))
        e = self.etype(etype)
        for msg, upd, norm in zip(self.msg, self.upd, self.norms):
            m = msg(torch.cat([h.index_select(0, src), h.index_select(0, dst), e], -1))
            agg = h.new_zeros(n, h.shape[1]).index_add_(0, dst, m.to(h.dtype)) / deg
            bld = (h.new_zeros(n_bld, h.shape[1]).index_add_(0, node_bld, h) / cnt).index_select(0, node_bld)
            h = norm(h + upd(torch.cat([h, agg, bld], -1)))
        return self.occ(h).float(), self.count(h).float()


@_workload("room-occupancy forecasting training (random init, a temporal convnet and a message-passing graph network): 16-64 buildings a step (drawn) of 6-40 rooms each (drawn per building), each room linked on the device to 3 random other rooms of its own building (repeats possible, both directions, 3 edge types drawn), 2-7 days of hourly history (drawn per step, 48-168 readings) of 5 sensor channels (PIR counts, CO2, door events, plug power, temperature) drawn on the device; 3 1-d convolutions of width 128 (kernel 5, then kernel 3 at dilations 2 and 4, residual after the first, GELU), mean and last-step pooling, 12 room types and a 168-row hour-of-week table for the forecast origin (drawn per building); 4 message-passing layers (edge MLP over sender, receiver and edge type by index_select, index_add to receivers, degree normalisation, building means by index_add gathered back to each room, a residual MLP update over the room's state, its aggregated messages and its building's mean, LayerNorm); 24-hour occupancy logits (binary cross-entropy) and people counts (Poisson NLL on log rates, weighted 0.5); AdamW, clipping, bf16 autocast, 640 steps; the losses read back every 20 steps and every 128 steps a no-grad evaluation of 64 buildings of 40 rooms and 7 days with the Brier score and count MAE read back")
def occupancy_gnn_forecast_train(rng):
    ch, d, layers, horizon = 5, _smoke(128, 16), _smoke(4, 1), 24
    room_types, edge_types, links = 12, 3, 3
    model = _RoomGNN(ch, d, layers, room_types, edge_types, horizon).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)

    def buildings(rooms, days):
        nb, n = len(rooms), sum(rooms)
        sizes = torch.tensor(rooms, device="cuda")
        node_bld = torch.repeat_interleave(torch.arange(nb, device="cuda"), sizes, output_size=n)
        start = torch.cumsum(sizes, 0) - sizes
        local = torch.arange(n, device="cuda") - start[node_bld]
        size_n = sizes[node_bld]
        hop = (torch.rand(n, links, device="cuda") * (size_n[:, None] - 1)).long() + 1
        nbr = start[node_bld][:, None] + (local[:, None] + hop) % size_n[:, None]
        me = torch.arange(n, device="cuda")[:, None].expand(n, links)
        src = torch.cat([me.flatten(), nbr.flatten()])
        dst = torch.cat([nbr.flatten(), me.flatten()])
        et = torch.randint(0, edge_types, (n * links,), device="cuda")
        hist = torch.rand(n, ch, 24 * days, device="cuda")
        rtype = torch.randint(0, room_types, (n,), device="cuda")
        how = torch.randint(0, 168, (nb,), device="cuda")
        occ = (torch.rand(n, horizon, device="cuda") < 0.3).float()
        count = (torch.rand(n, horizon, device="cuda") * 4).floor() * occ
        return hist, rtype, how, node_bld, nb, src, dst, torch.cat([et, et]), occ, count

    steps = _smoke(640, 3)
    for step in range(steps):
        model.train()
        nb = rng.randint(_smoke(16, 2), _smoke(64, 3))
        rooms = [rng.randint(6, _smoke(40, 8)) for _ in range(nb)]
        hist, rtype, how, node_bld, nb, src, dst, et, occ, count = buildings(rooms, rng.randint(2, 7))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            o_log, c_log = model(hist, rtype, how, node_bld, nb, src, dst, et)
        l_o = _F.binary_cross_entropy_with_logits(o_log, occ)
        l_c = _F.poisson_nll_loss(c_log, count, log_input=True)
        loss = l_o + 0.5 * l_c
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_o.detach(), l_c.detach()]).tolist()
        del hist, rtype, how, node_bld, src, dst, et, occ, count, o_log, c_log, l_o, l_c, loss
        if (step + 1) % _smoke(128, 2) == 0:
            model.eval()
            with torch.no_grad():
                hist, rtype, how, node_bld, nb, src, dst, et, occ, count = buildings(
                    [_smoke(40, 8)] * _smoke(64, 2), 7)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    o_log, c_log = model(hist, rtype, how, node_bld, nb, src, dst, et)
                out = torch.stack([(torch.sigmoid(o_log) - occ).pow(2).mean(), (c_log.exp() - count).abs().mean()])
            out.tolist()
            del hist, rtype, how, node_bld, src, dst, et, occ, count, o_log, c_log, out


# ---------------------------------------------------------------- smart-meter load forecasting service


class _LoadPatchTST(_nn.Module):
    """Patches of each household's normalised history embedded with a learned position table, a weather token from
    the next day's temperature forecast, pre-norm transformer blocks, mean and last-patch pooling, a quantile head."""

    def __init__(self, patch, d, heads, layers, max_patches, horizon, quantiles):
        super().__init__()
        self.patch, self.h, self.q = patch, horizon, quantiles
        self.embed = _nn.Linear(patch, d)
        self.pos = _nn.Embedding(max_patches, d)
        self.weather = _nn.Sequential(_nn.Linear(horizon, d), _nn.GELU(), _nn.Linear(d, d))
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.head = _nn.Linear(2 * d, horizon * quantiles)

    def forward(self, x, temp):
        n, length = x.shape
        p = length // self.patch
        tok = self.embed(x.view(n, p, self.patch)) + self.pos(torch.arange(p, device=x.device))[None]
        w = self.weather(temp)[None, None].expand(n, 1, -1)
        z = torch.cat([w.to(tok.dtype), tok], 1)
        for blk in self.blocks:
            z = blk(z)
        z = self.norm(z)
        return self.head(torch.cat([z[:, 1:].mean(1), z[:, -1]], -1)).float().view(n, self.h, self.q)


@_workload("smart-meter load-forecasting serving (random init, a patch transformer): 2,260-2,320 requests (drawn), each a neighbourhood of 16-256 households (drawn) with 7-28 days (drawn per request) of 15-minute load readings and the next day's 96-step temperature forecast; float32 readings uploaded on a side stream from two reused pinned host buffers (filled once, sized for 256 households of 28 days plus the forecast) one request ahead (two spans, waited on by event, record_stream'ed); per-household instance normalisation (mean and standard deviation of the history), patches of 24 readings (28-112 patches, a 112-row position table), a weather token, 3 pre-norm transformer blocks (width 128, 4 heads), mean and last-patch pooling and a head of 96 steps x 3 quantiles (10/50/90, sorted) under bf16 autocast, de-normalised; the neighbourhood's total median and 10/90 forecasts, its peak interval, and the households whose 90% peak exceeds a drawn contract limit (counted by torch.where) read back once per request")
def meter_load_forecast_serve(rng):
    patch, d, heads, layers = 24, _smoke(128, 16), _smoke(4, 2), _smoke(3, 1)
    horizon, quantiles = 96, 3
    max_days, max_house = _smoke(28, 3), _smoke(256, 6)
    model = _LoadPatchTST(patch, d, heads, layers, max_days * 96 // patch, horizon, quantiles).cuda().eval()
    model.requires_grad_(False)
    big = max_house * max_days * 96
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [(torch.rand(big + horizon, generator=gen) * 3.0).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    nreq = rng.randint(_smoke(2260, 3), _smoke(2320, 4))
    plan = [(rng.randint(_smoke(16, 2), max_house), rng.randint(_smoke(7, 1), max_days), rng.uniform(2.0, 6.0))
            for _ in range(nreq)]

    def spans(p):
        return slice(0, p[0] * p[1] * 96), slice(big, big + horizon)

    for (n, days, limit), load, temp in up.ahead(plan, spans):
        with torch.no_grad():
            x = load.view(n, days * 96)
            mu = x.mean(1, keepdim=True)
            sd = x.std(1, keepdim=True).clamp(min=1e-3)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                q = model((x - mu) / sd, (temp - 15.0) / 10.0)
            q = q.sort(-1).values * sd[:, :, None] + mu[:, :, None]
            total = q.sum(0)  # (96, 3)
            peak = total[:, 1].argmax()
            over = torch.where(q[:, :, 2].amax(1) > limit, 1.0, 0.0).sum()
            out = torch.cat([total.flatten(), peak.float()[None], over[None]])
        out.tolist()
        del load, temp, x, mu, sd, q, total, peak, over, out


# ---------------------------------------------------------------- low-light doorbell enhancement (conditional DDIM)


class _EnhanceUNet(_nn.Module):
    """A two-level diffusion U-Net over the noisy frame and the dark frame concatenated: timestep embedding by
    sines and cosines and an MLP, TimeResBlocks, strided-convolution downsampling, a self-attention block over the
    lowest level's pixels, nearest upsampling with skip concatenation."""

    def __init__(self, w, temb):
        super().__init__()
        self.w0 = w[0]
        self.temb = _nn.Sequential(_nn.Linear(w[0], temb), _nn.SiLU(), _nn.Linear(temb, temb))
        self.inp = _nn.Conv2d(6, w[0], 3, 1, 1)
        self.e0, self.d0 = TimeResBlock(w[0], w[0], temb), _nn.Conv2d(w[0], w[0], 3, 2, 1)
        self.e1, self.d1 = TimeResBlock(w[0], w[1], temb), _nn.Conv2d(w[1], w[1], 3, 2, 1)
        self.m0, self.attn, self.m1 = TimeResBlock(w[1], w[2], temb), PreNormBlock(w[2], 4), \
            TimeResBlock(w[2], w[2], temb)
        self.u1 = TimeResBlock(w[2] + w[1], w[1], temb)
        self.u0 = TimeResBlock(w[1] + w[0], w[0], temb)
        self.out = _nn.Sequential(_nn.GroupNorm(8, w[0]), _nn.SiLU(), _nn.Conv2d(w[0], 3, 3, 1, 1))

    def forward(self, x, cond, t):
        te = self.temb(_sincos(t, self.w0))
        h0 = self.e0(self.inp(torch.cat([x, cond], 1)), te)
        h1 = self.e1(self.d0(h0), te)
        m = self.m0(self.d1(h1), te)
        b, c, hh, ww = m.shape
        m = self.attn(m.flatten(2).transpose(1, 2)).transpose(1, 2).reshape(b, c, hh, ww)
        m = self.m1(m, te)
        u = self.u1(torch.cat([_F.interpolate(m, scale_factor=2, mode="nearest"), h1], 1), te)
        u = self.u0(torch.cat([_F.interpolate(u, scale_factor=2, mode="nearest"), h0], 1), te)
        return self.out(u)


@_workload("low-light doorbell-frame enhancement by conditional DDIM sampling (random init, a diffusion U-Net): 155 requests, each 1-6 night crops (drawn) of 64-160 px (drawn per request, a multiple of 32), the dark frame drawn on the device (a dimmed random image plus noise) and concatenated to the noisy estimate; a U-Net of widths 64/128/192 (GroupNorm TimeResBlocks, 64 sine-cosine timestep features through a 256-wide MLP, strided-convolution downsampling twice, a 4-head pre-norm self-attention block over the lowest level's pixels between two blocks, nearest upsampling with skip concatenation) under bf16 autocast; a 1,000-step linear beta schedule computed on the host, 8-20 deterministic DDIM steps (drawn per request, evenly spaced timesteps), the predicted clean frame clamped to [-1, 1] at each step; each request's per-crop mean brightness and contrast read back")
def lowlight_doorbell_ddim_sample(rng):
    w, temb = _smoke([64, 128, 192], [8, 16, 16]), _smoke(256, 32)
    model = _EnhanceUNet(w, temb).cuda().eval()
    model.requires_grad_(False)
    T = 1000
    betas = [1e-4 + (0.02 - 1e-4) * i / (T - 1) for i in range(T)]
    abar, acc = [], 1.0
    for bt in betas:
        acc *= 1.0 - bt
        abar.append(acc)
    nreq = _smoke(155, 2)
    for _ in range(nreq):
        b = rng.randint(1, _smoke(6, 2))
        res = rng.randint(_smoke(2, 1), _smoke(5, 1)) * _smoke(32, 16)
        n_steps = rng.randint(_smoke(8, 2), _smoke(20, 3))
        ts = [int(round(T - 1 - i * (T - 1) / n_steps)) for i in range(n_steps)]
        with torch.no_grad():
            dark = torch.rand(b, 3, res, res, device="cuda") * 0.2 - 0.9 + 0.05 * torch.randn(b, 3, res, res,
                                                                                                device="cuda")
            x = torch.randn(b, 3, res, res, device="cuda")
            for j, t in enumerate(ts):
                a = abar[t]
                a_prev = abar[ts[j + 1]] if j + 1 < len(ts) else 1.0
                tt = torch.full((b,), t, device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    eps = model(x, dark, tt).float()
                x0 = ((x - math.sqrt(1 - a) * eps) / math.sqrt(a)).clamp(-1, 1)
                x = math.sqrt(a_prev) * x0 + math.sqrt(1 - a_prev) * eps
            img = (x.clamp(-1, 1) + 1) / 2
            out = torch.stack([img.mean((1, 2, 3)), img.std((1, 2, 3))], 1)
        out.tolist()
        del dark, x, tt, eps, x0, img, out


# ---------------------------------------------------------------- smart-thermostat model predictive control


@_workload("smart-thermostat model predictive control simulation (random init surrogate, fp32): 40 episodes, each 8-48 homes (drawn) of 4-12 heating zones (drawn per home, padded to 12 with a keep mask) with random zone adjacencies, conductances and capacitances, 2-4 receding-horizon control steps (drawn); at each control step a cross-entropy-method planner with 64-256 candidate heating schedules (drawn per episode) over a 24-48-step horizon (drawn per episode, 15-minute steps): 3 iterations of sampling schedules from a clamped Gaussian, rolling out a learned zone-temperature surrogate (an MLP of width 128 over zone temperature, outdoor temperature, solar gain, occupancy, heating and the mean temperature of adjacent zones by bmm with the 0/1 adjacency over the degree) step by step, costing energy at a drawn time-of-use price plus occupied comfort violations (masked to real zones), taking the 12.5% elites by topk and gather to refit the mean and standard deviation; the refit mean's first action applied to a resistance-capacitance plant with noise, the mean then shifted one step as the next control step's start; each control step's mean best planned cost, mean zone temperature and energy cost read back")
def thermostat_mpc_cem_sim(rng):
    zmax, hidden, iters = _smoke(12, 4), _smoke(128, 16), _smoke(3, 2)
    surrogate = mlp(6, hidden, 1, layers=3, act=_nn.SiLU).cuda().eval()
    surrogate.requires_grad_(False)
    episodes = _smoke(40, 2)
    for _ in range(episodes):
        homes = rng.randint(_smoke(8, 2), _smoke(48, 3))
        zones = [rng.randint(min(4, zmax), zmax) for _ in range(homes)]
        k, horizon = rng.randint(_smoke(64, 8), _smoke(256, 16)), rng.randint(_smoke(24, 3), _smoke(48, 4))
        elites, controls = max(2, k // 8), rng.randint(2, 4)
        with torch.no_grad():
            keep = keep_mask(zones, zmax).float()  # (H, Z)
            adj = (torch.rand(homes, zmax, zmax, device="cuda") < 0.4).float()
            adj = adj * adj.transpose(1, 2) * keep[:, :, None] * keep[:, None, :]
            deg = adj.sum(2, keepdim=True).clamp(min=1)
            cond = torch.rand(homes, zmax, zmax, device="cuda") * 0.05 * adj
            cap = torch.rand(homes, zmax, device="cuda") * 2 + 1
            temp = 17 + 3 * torch.rand(homes, zmax, device="cuda")
            t_out = 5 + 5 * torch.sin(torch.linspace(0, math.pi, horizon + controls, device="cuda"))[None] + \
                torch.randn(homes, 1, device="cuda")
            solar = torch.rand(homes, horizon + controls, device="cuda").cumsum(1) / horizon
            occ = (torch.rand(homes, horizon + controls, zmax, device="cuda") < 0.6).float() * keep[:, None]
            price = 0.1 + 0.3 * torch.rand(horizon + controls, device="cuda")
            mean = torch.full((homes, horizon, zmax), 0.5, device="cuda")
            std = torch.full((homes, horizon, zmax), 0.3, device="cuda")
            for c in range(controls):
                for _ in range(iters):
                    act = (mean[:, None] + std[:, None] * torch.randn(homes, k, horizon, zmax, device="cuda")
                           ).clamp(0, 1) * keep[:, None, None]
                    tz = temp[:, None].expand(homes, k, zmax)
                    cost = torch.zeros(homes, k, device="cuda")
                    for h in range(horizon):
                        nb = torch.bmm(tz, adj.transpose(1, 2)) / deg.transpose(1, 2)
                        a_h = act[:, :, h]
                        feat = torch.stack([tz / 20, (t_out[:, c + h, None, None] / 20).expand_as(tz),
                                            solar[:, c + h, None, None].expand_as(tz),
                                            occ[:, c + h, None, :].expand_as(tz), a_h, nb / 20], -1)
                        tz = tz + 0.5 * torch.tanh(surrogate(feat)[..., 0])
                        viol = _F.relu(20.0 - tz) * occ[:, c + h, None, :]
                        cost = cost + ((price[c + h] * a_h + viol) * keep[:, None]).sum(2)
                    best, idx = cost.topk(elites, 1, largest=False)
                    elite = act.gather(1, idx[:, :, None, None].expand(homes, elites, horizon, zmax))
                    mean, std = elite.mean(1), elite.std(1).clamp(min=0.02)
                u = mean[:, 0] * keep
                flow = (cond * (temp[:, None, :] - temp[:, :, None])).sum(2)
                temp = temp + (flow + 0.02 * (t_out[:, c, None] - temp) + 0.8 * u) / cap + \
                    0.05 * torch.randn_like(temp)
                temp = temp * keep + 18 * (1 - keep)
                mean = torch.cat([mean[:, 1:], mean[:, -1:]], 1)
                out = torch.stack([best[:, 0].mean(), (temp * keep).sum() / keep.sum(), (u * price[c]).sum()])
                out.tolist()
                del act, tz, cost, nb, a_h, feat, viol, best, idx, elite, u, flow, out
            del keep, adj, deg, cond, cap, temp, t_out, solar, occ, price, mean, std

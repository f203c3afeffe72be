"""The hundred-and-eleventh batch of held-out workloads for record.py, second half (see batch111.py): maritime
shipping and ports, written in torch alone. Vessel fuel-consumption and hull-fouling forecasting training (a strided
1-d convolutional front end and a two-layer GRU written out step by step over voyage sensor logs of drawn lengths,
a fuel rate per step and a speed-loss index per voyage), harbour traffic simulator training (a learned interaction
simulator over port-approach scenes of drawn vessel counts: k-nearest-neighbour graphs by topk, closest-point-of-
approach edge features, message passing by index_select and index_add, rolled out with the predicted accelerations
integrated and fed back, a collision-risk edge head), a ship-chip diffusion sampler (a class- and sea-state-
conditioned U-Net denoiser with classifier-free guidance sampling synthetic satellite ship chips by DDIM for detector
augmentation, drawn batch sizes, resolutions, step counts and guidance scales per request) and a coastal radar
tracking service (a residual convnet over the range-azimuth sweeps of vessel-traffic-service radar stations with
azimuth wrap-around, peak picking, nearest-track association and alpha-beta track updates kept in an on-device track
table per station by index_add and index_copy).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the radar service), `rng` the workload's random.Random for every shape, count and sampled choice,
sizes through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or
masked_fill; no boolean-mask indexing; results read back only at logging points or once per request.
coastal_radar_track_serve uploads its sweeps on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, PreNormBlock, SideUploads, TimeResBlock, _sincos, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- fuel consumption and hull fouling (GRU)


class _FuelGru(_nn.Module):
    """Numeric sensor channels with the vessel class and hull-coating embeddings broadcast over time, three stride-2
    1-d convolutions (1/8 of the sampling rate), a GRU of `layers` layers written out step by step (input gates for
    all steps at once, padded steps keeping the previous state by torch.where); a fuel-rate head per step and a
    speed-loss head on the masked mean."""

    def __init__(self, n_num, n_cls, n_coat, d_conv, hidden, layers):
        super().__init__()
        self.vcls, self.coat = _nn.Embedding(n_cls, 16), _nn.Embedding(n_coat, 8)
        c = n_num + 24
        self.front = _nn.Sequential(_nn.Conv1d(c, d_conv, 5, 2, 2), _nn.GELU(), _nn.Conv1d(d_conv, d_conv, 5, 2, 2),
                                    _nn.GELU(), _nn.Conv1d(d_conv, d_conv, 5, 2, 2), _nn.GELU())
        self.ih = _nn.ModuleList(_nn.Linear(d_conv if i == 0 else hidden, 3 * hidden) for i in range(layers))
        self.hh = _nn.ModuleList(_nn.Linear(hidden, 3 * hidden) for _ in range(layers))
        self.fuel, self.foul = mlp(hidden, hidden, 1, act=_nn.GELU), mlp(hidden, hidden, 1, act=_nn.GELU)
        self.hidden = hidden

    def forward(self, num, vcls, coat, keep):
        b, t, _ = num.shape
        stat = torch.cat([self.vcls(vcls), self.coat(coat)], -1)[:, :, None].expand(b, 24, t)
        z = self.front(torch.cat([num.transpose(1, 2), stat.to(num.dtype)], 1)).transpose(1, 2)
        for ih, hh in zip(self.ih, self.hh):
            gi = ih(z)
            h = z.new_zeros(b, self.hidden, dtype=torch.float32)
            outs = []
            for s in range(z.shape[1]):
                ir, iz, inn = gi[:, s].chunk(3, -1)
                hr, hz, hn = hh(h).chunk(3, -1)
                r, u = torch.sigmoid(ir + hr), torch.sigmoid(iz + hz)
                cand = torch.tanh(inn + r * hn)
                h = torch.where(keep[:, s, None], cand + u * (h - cand), h)
                outs.append(h)
            z = torch.stack(outs, 1)
        w = keep[..., None].to(z.dtype)
        pooled = (z * w).sum(1) / w.sum(1).clamp(min=1)
        return self.fuel(z)[..., 0].float(), self.foul(pooled)[:, 0].float()


@_workload("vessel fuel-consumption and hull-fouling forecasting training (random init, a 1-d convnet and a GRU written out step by step): 64-256 voyage legs a step (drawn), the step's padded length 96-384 ten-minute samples (drawn, a multiple of 32) and each leg's own length drawn between half of it and it (masked), 14 sensor channels (speed through water and over ground, draft fore and aft, trim, shaft rpm and power, relative wind speed and direction, wave height, current, sea temperature, days since dry-dock, displacement) drawn on the device with a vessel class (of 12) and a hull coating (of 6) per leg; three stride-2 1-d convolutions (width 128) to 12-48 steps, a 2-layer GRU (hidden 256) written out step by step with padded steps keeping the state by torch.where; a Huber loss on the fuel rate per step (masked) and an MSE on the leg's speed-loss index from the masked mean state; AdamW, clipping, bf16 autocast, 125 steps; the losses read back every 20 steps and every 50 steps a no-grad evaluation of 256 legs of 384 samples with the fuel-rate and speed-loss mean absolute errors read back")
def vessel_fuel_gru_train(rng):
    n_num, n_cls, n_coat = 14, 12, 6
    d_conv, hidden, layers = _smoke(128, 16), _smoke(256, 16), _smoke(2, 1)
    model = _FuelGru(n_num, n_cls, n_coat, d_conv, hidden, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    lo, hi = _smoke(96, 32), _smoke(384, 64)

    def legs(lengths, t):
        b = len(lengths)
        keep = keep_mask([-(-n // 8) for n in lengths], t // 8)
        raw_keep = keep_mask(lengths, t)
        num = torch.randn(b, t, n_num, device="cuda") * raw_keep[..., None]
        vcls = torch.randint(0, n_cls, (b,), device="cuda")
        coat = torch.randint(0, n_coat, (b,), device="cuda")
        fuel = torch.rand(b, t // 8, device="cuda") * 3.0  # tonnes an hour
        foul = torch.rand(b, device="cuda") * 0.2  # fraction of speed lost
        return num, vcls, coat, keep, fuel, foul

    steps = _smoke(125, 3)
    for step in range(steps):
        model.train()
        b, t = rng.randint(_smoke(64, 2), _smoke(256, 4)), rng.randint(lo // 32, hi // 32) * 32
        num, vcls, coat, keep, fuel, foul = legs([rng.randint(t // 2, t) for _ in range(b)], t)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            p_fuel, p_foul = model(num, vcls, coat, keep)
        w = keep.float()
        l_fuel = (_F.huber_loss(p_fuel, fuel, reduction="none") * w).sum() / w.sum()
        l_foul = _F.mse_loss(p_foul, foul)
        loss = l_fuel + 10.0 * l_foul
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_fuel.detach(), l_foul.detach()]).tolist()
        del num, vcls, coat, keep, fuel, foul, p_fuel, p_foul, w, l_fuel, l_foul, loss
        if (step + 1) % _smoke(50, 2) == 0:
            model.eval()
            with torch.no_grad():
                num, vcls, coat, keep, fuel, foul = legs([hi] * _smoke(256, 3), hi)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    p_fuel, p_foul = model(num, vcls, coat, keep)
                out = torch.stack([(p_fuel - fuel).abs().mean(), (p_foul - foul).abs().mean()])
            out.tolist()
            del num, vcls, coat, keep, fuel, foul, p_fuel, p_foul, out


# ---------------------------------------------------------------- harbour traffic simulator (graph network)


class _TrafficLayer(_nn.Module):
    """Edge messages from both endpoints and the edge state, summed into the receivers by index_add (pad edges
    weighted out, normalised by in-degree); residual edge and node updates with LayerNorm."""

    def __init__(self, d):
        super().__init__()
        self.msg, self.upd = mlp(3 * d, d, d, act=_nn.SiLU), mlp(2 * d, d, d, act=_nn.SiLU)
        self.ne, self.nn = _nn.LayerNorm(d), _nn.LayerNorm(d)

    def forward(self, h, e, snd, rcv, w, inv_deg):
        m = self.msg(torch.cat([h.index_select(0, snd), h.index_select(0, rcv), e], -1))
        e = self.ne(e + m)
        mw = m * w.to(m.dtype)
        agg = torch.zeros(h.shape[0], mw.shape[1], device=h.device, dtype=mw.dtype).index_add_(0, rcv, mw)
        return self.nn(h + self.upd(torch.cat([h, agg.to(h.dtype) * inv_deg], -1))), e


class _HarborSim(_nn.Module):
    def __init__(self, n_node, n_type, n_edge, d, layers):
        super().__init__()
        self.vtype = _nn.Embedding(n_type, d)
        self.node_in, self.edge_in = mlp(n_node, d, d, act=_nn.SiLU), mlp(n_edge, d, d, act=_nn.SiLU)
        self.layers = _nn.ModuleList(_TrafficLayer(d) for _ in range(layers))
        self.acc, self.risk = mlp(d, d, 2, act=_nn.SiLU), mlp(3 * d, d, 1, act=_nn.SiLU)

    def forward(self, nfeat, vtype, efeat, snd, rcv, w, inv_deg):
        h = self.node_in(nfeat) + self.vtype(vtype)
        e = self.edge_in(efeat)
        for layer in self.layers:
            h, e = layer(h, e, snd, rcv, w, inv_deg)
        risk = self.risk(torch.cat([h.index_select(0, snd), h.index_select(0, rcv), e], -1))[:, 0]
        return self.acc(h).float(), risk.float()


def _knn_graph(pos, keep, k):
    """Each vessel's k nearest vessels of its own scene (pads and itself pushed away): flat sender and receiver
    indices over the scenes' padded nodes, and a weight of 1 for edges between two real vessels."""
    s, v, _ = pos.shape
    dist = (pos[:, :, None] - pos[:, None]).pow(2).sum(-1)
    pair = keep[:, :, None] & keep[:, None, :] & ~torch.eye(v, dtype=torch.bool, device=pos.device)[None]
    nbr = dist.masked_fill(~pair, 1e6).topk(k, -1, largest=False).indices  # (s, v, k)
    base = (torch.arange(s, device=pos.device) * v)[:, None, None]
    snd = (nbr + base).flatten()
    rcv = (torch.arange(v, device=pos.device)[None, :, None] + base).expand(s, v, k).flatten()
    flat_keep = keep.flatten()
    w = (flat_keep.index_select(0, snd) & flat_keep.index_select(0, rcv)).float()[:, None]
    deg = torch.zeros(s * v, device=pos.device).index_add_(0, rcv, w[:, 0])
    return snd, rcv, w, (1.0 / deg.clamp(min=1))[:, None]


def _harbor_features(pos, vhist, static, keep, snd, rcv):
    """Node features (velocity history, speed, heading, static particulars) and edge features (relative position,
    distance, relative velocity, time and distance of closest point of approach); the CPA risk flag target."""
    s, v, hlen, _ = vhist.shape
    vel = vhist[:, :, -1]
    speed = vel.norm(dim=-1, keepdim=True)
    head = vel / speed.clamp(min=1e-6)
    nfeat = torch.cat([vhist.flatten(2), speed, head, static], -1) * keep[..., None]
    p, vv = pos.flatten(0, 1), vel.flatten(0, 1)
    dp, dv = p.index_select(0, snd) - p.index_select(0, rcv), vv.index_select(0, snd) - vv.index_select(0, rcv)
    tcpa = (-(dp * dv).sum(-1) / (dv.pow(2).sum(-1) + 1e-6)).clamp(0.0, 2.0)
    dcpa = (dp + dv * tcpa[:, None]).norm(dim=-1)
    efeat = torch.cat([dp, dp.norm(dim=-1, keepdim=True), dv, tcpa[:, None], dcpa[:, None]], -1)
    risk_t = torch.where((dcpa < 0.02) & (tcpa < 1.0), 1.0, 0.0)
    return nfeat.flatten(0, 1), efeat, risk_t


@_workload("harbour traffic simulator training (random init, a learned graph-network simulator of vessel motion): 4-16 port-approach scenes a step (drawn), each padded to the step's vessel count of 48-384 (drawn, a multiple of 16, at most 3,072 padded vessels a step) with its own 24 to that many vessels (drawn per scene, masked); positions in a unit square, a 5-step velocity history, length, beam, draft and air draught and a vessel type (of 16) drawn on the device; each rollout step a 10-nearest-neighbour graph per scene by topk over masked squared distances (pads and self excluded), edge features of relative position, distance, relative velocity and the time and distance of closest point of approach; an encoder, 4 message-passing layers (width 128) by index_select and index_add normalised by in-degree with residual LayerNorm updates, an acceleration head per vessel and a collision-risk head per edge (binary cross-entropy against the CPA flag, distance under 0.02 within 1 time unit, pad edges weighted out); rolled out 2-4 steps (drawn), the predicted accelerations integrated (semi-implicit Euler) and fed back, MSE against drawn target accelerations at every step, backpropagated through the rollout; AdamW, clipping, bf16 autocast, 195 steps; the losses read back every 20 steps and every 65 steps a no-grad 10-step rollout of 8 scenes of 384 vessels with each step's count of edges of positive risk logit (mean per scene) read back once after it")
def harbor_traffic_gnn_train(rng):
    d, layers, k, hlen, n_type = _smoke(128, 16), _smoke(4, 1), _smoke(10, 4), 5, 16
    model = _HarborSim(2 * hlen + 3 + 4, n_type, 7, d, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    budget, v_lo, v_hi, dt = _smoke(3072, 64), _smoke(48, 16), _smoke(384, 32), 0.05

    def scenes(counts, v):
        s = len(counts)
        keep = keep_mask(counts, v)
        pos = torch.rand(s, v, 2, device="cuda")
        vhist = (0.1 * torch.randn(s, v, 1, 2, device="cuda") + 0.01 * torch.randn(s, v, hlen, 2, device="cuda"))
        static = torch.rand(s, v, 4, device="cuda")
        vtype = torch.randint(0, n_type, (s, v), device="cuda").flatten()
        return keep, pos, vhist * keep[..., None, None], static, vtype

    def step_sim(keep, pos, vhist, static, vtype):
        with torch.no_grad():
            snd, rcv, w, inv_deg = _knn_graph(pos.detach(), keep, k)
        nfeat, efeat, risk_t = _harbor_features(pos, vhist, static, keep, snd, rcv)
        acc, risk = model(nfeat, vtype, efeat, snd, rcv, w, inv_deg)
        acc = acc.view(pos.shape) * keep[..., None]
        vel = vhist[:, :, -1] + acc * dt
        return acc, risk, risk_t, w[:, 0], pos + vel * dt, torch.cat([vhist[:, :, 1:], vel[:, :, None]], 2)

    steps = _smoke(195, 3)
    for step in range(steps):
        model.train()
        s = rng.randint(_smoke(4, 2), _smoke(16, 3))
        v = rng.randint(v_lo // 16, max(v_lo, min(v_hi, budget // s)) // 16) * 16
        keep, pos, vhist, static, vtype = scenes([rng.randint(min(24, v), v) for _ in range(s)], v)
        roll = rng.randint(2, 4)
        l_acc, l_risk = 0.0, 0.0
        for _ in range(roll):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                acc, risk, risk_t, w, pos, vhist = step_sim(keep, pos, vhist, static, vtype)
            target = 0.01 * torch.randn_like(acc) * keep[..., None]
            l_acc = l_acc + (acc - target).pow(2).sum() / keep.sum().clamp(min=1)
            bce = _F.binary_cross_entropy_with_logits(risk, risk_t, reduction="none")
            l_risk = l_risk + (bce * w).sum() / w.sum().clamp(min=1)
        loss = (l_acc * 100.0 + l_risk) / roll
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_acc.detach(), l_risk.detach()]).tolist()
        del keep, pos, vhist, static, vtype, acc, risk, risk_t, w, target, bce, l_acc, l_risk, loss
        if (step + 1) % _smoke(65, 2) == 0:
            model.eval()
            with torch.no_grad():
                ns = _smoke(8, 2)
                keep, pos, vhist, static, vtype = scenes([v_hi] * ns, v_hi)
                flags = []
                for _ in range(_smoke(10, 2)):
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        _, risk, _, w, pos, vhist = step_sim(keep, pos, vhist, static, vtype)
                    flags.append((torch.where(risk > 0, 1.0, 0.0) * w).sum() / ns)
                flags = torch.stack(flags)
            flags.tolist()
            del keep, pos, vhist, static, vtype, risk, w, flags


# ---------------------------------------------------------------- ship-chip diffusion sampler


class _ChipDenoiser(_nn.Module):
    """A conditional U-Net denoiser: timestep, vessel-class and sea-state embeddings summed (the last row of each
    table the null condition for classifier-free guidance); a residual block per level with stride-2 convolutions
    between, a pre-norm transformer block over the lowest level's pixels, nearest-upsampling residual blocks with
    skips."""

    def __init__(self, c_img, widths, temb, n_cls, n_sea, heads):
        super().__init__()
        w0 = widths[0]
        self.w0 = w0
        self.temb = _nn.Sequential(_nn.Linear(w0, temb), _nn.SiLU(), _nn.Linear(temb, temb))
        self.cls, self.sea = _nn.Embedding(n_cls + 1, temb), _nn.Embedding(n_sea + 1, temb)
        self.inp = _nn.Conv2d(c_img, w0, 3, 1, 1)
        self.down = _nn.ModuleList(TimeResBlock(a, w, temb) for a, w in zip([w0] + widths[:-1], widths))
        self.pool = _nn.ModuleList(_nn.Conv2d(w, w, 3, 2, 1) for w in widths[:-1])
        self.mid, self.mid_res = PreNormBlock(widths[-1], heads), TimeResBlock(widths[-1], widths[-1], temb)
        self.up = _nn.ModuleList(TimeResBlock(a + w, w, temb) for a, w in zip(widths[:0:-1], widths[-2::-1]))
        self.out = _nn.Sequential(_nn.GroupNorm(8, w0), _nn.SiLU(), _nn.Conv2d(w0, c_img, 3, 1, 1))

    def forward(self, x, t, cls, sea):
        te = self.temb(_sincos(t, self.w0)) + self.cls(cls) + self.sea(sea)
        h, skips = self.inp(x), []
        for i, blk in enumerate(self.down):
            h = blk(h, te)
            if i < len(self.pool):
                skips.append(h)
                h = self.pool[i](h)
        b, c, hh, ww = h.shape
        h = self.mid(h.flatten(2).transpose(1, 2)).transpose(1, 2).reshape(b, c, hh, ww)
        h = self.mid_res(h, te)
        for blk, skip in zip(self.up, skips[::-1]):
            h = blk(torch.cat([_F.interpolate(h, scale_factor=2, mode="nearest"), skip], 1), te)
        return self.out(h)


@_workload("ship-chip diffusion sampling (random init, a class- and sea-state-conditioned U-Net denoiser with classifier-free guidance, DDIM): 75-80 sampling requests (drawn) for synthetic 4-band (RGB and near-infrared) satellite ship chips to augment a detector's training set, each of 4-32 chips (drawn) at 64, 96 or 128 px (drawn per request) with 10-40 DDIM steps (drawn per request) over a 1,000-step cosine schedule (timesteps and coefficients on the host) and a guidance scale of 1.5-5 (drawn per request); a vessel class (of 12) and a sea state (of 4) per chip drawn on the device, the conditional and null-conditioned halves in one doubled batch; a U-Net (widths 64/128/256, a timestep-conditioned residual block per level with GroupNorm, stride-2 convolutions, a pre-norm transformer block of 4 heads over the lowest level's pixels and a residual block after it, nearest-upsampling residual blocks with skips) predicting the noise under bf16 autocast; the clipped x0 estimate and DDIM update per step; the chips quantised to uint8 and each request's per-band means and standard deviations and the bright-hull pixel fraction (near-infrared above 0.8) read back")
def ship_chip_ddim_sample(rng):
    widths, temb, heads = _smoke([64, 128, 256], [16, 32]), _smoke(256, 32), _smoke(4, 2)
    n_cls, n_sea, c_img = 12, 4, 4
    model = _ChipDenoiser(c_img, widths, temb, n_cls, n_sea, heads).cuda().eval()
    model.requires_grad_(False)
    res_opts, t_total = _smoke([64, 96, 128], [16, 32]), 1000

    def abar(t):
        s = 0.008
        f = math.cos((t / t_total + s) / (1 + s) * math.pi / 2) ** 2
        return f / math.cos(s / (1 + s) * math.pi / 2) ** 2

    nreq = rng.randint(_smoke(75, 2), _smoke(80, 3))
    for _ in range(nreq):
        n, res = rng.randint(_smoke(4, 2), _smoke(32, 3)), rng.choice(res_opts)
        n_steps, scale = rng.randint(_smoke(10, 2), _smoke(40, 3)), rng.uniform(1.5, 5.0)
        ts = [int(round((t_total - 1) * (1 - i / n_steps))) for i in range(n_steps)]
        with torch.no_grad():
            cls = torch.randint(0, n_cls, (n,), device="cuda")
            sea = torch.randint(0, n_sea, (n,), device="cuda")
            cond_c = torch.cat([cls, torch.full_like(cls, n_cls)])
            cond_s = torch.cat([sea, torch.full_like(sea, n_sea)])
            x = torch.randn(n, c_img, res, res, device="cuda")
            for i, t in enumerate(ts):
                a_t = abar(t)
                a_prev = abar(ts[i + 1]) if i + 1 < n_steps else 1.0
                tt = torch.full((2 * n,), t, device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    eps = model(torch.cat([x, x]), tt, cond_c, cond_s).float()
                e_c, e_u = eps.chunk(2)
                eps = e_u + scale * (e_c - e_u)
                x0 = ((x - math.sqrt(1 - a_t) * eps) / math.sqrt(a_t)).clamp(-1, 1)
                x = math.sqrt(a_prev) * x0 + math.sqrt(1 - a_prev) * eps
                del tt, eps, e_c, e_u, x0
            img = ((x.clamp(-1, 1) + 1) * 127.5).round().to(torch.uint8)
            f = img.float() / 255.0
            out = torch.cat([f.mean((0, 2, 3)), f.std((0, 2, 3)), (f[:, 3] > 0.8).float().mean()[None]])
        out.tolist()
        del cls, sea, cond_c, cond_s, x, img, f, out


# ---------------------------------------------------------------- coastal radar tracking service


class _RadarNet(_nn.Module):
    """A residual convnet over each sweep's range-azimuth image (strides 2, 4, 8), the stride-8 features upsampled
    onto the stride-4 ones; the sweeps of a request fused (the latest, the mean and the latest minus the earliest)
    by a 1x1 convolution; target heatmap, radial and tangential velocity and extent heads at stride 4."""

    def __init__(self, widths, d):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(1, widths[0], 3, 2, 1, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU())
        self.s1 = _nn.Sequential(BasicResBlock(widths[0], widths[0], 1), BasicResBlock(widths[0], widths[1], 2))
        self.s2 = _nn.Sequential(BasicResBlock(widths[1], widths[2], 2), BasicResBlock(widths[2], widths[2], 1))
        self.lat, self.top = _nn.Conv2d(widths[1], d, 1), _nn.Conv2d(widths[2], d, 1)
        self.fuse = _nn.Sequential(_nn.Conv2d(3 * d, d, 1), _nn.ReLU(), _nn.Conv2d(d, d, 3, 1, 1), _nn.ReLU())
        self.heads = _nn.Conv2d(d, 4, 1)

    def forward(self, x):
        f4 = self.s1(self.stem(x))
        f8 = self.s2(f4)
        y = self.lat(f4) + _F.interpolate(self.top(f8), size=f4.shape[2:], mode="nearest")
        z = self.fuse(torch.cat([y[-1:], y.mean(0, keepdim=True), y[-1:] - y[:1]], 1))
        return self.heads(z).float()


@_workload("coastal radar tracking serving (random init, a residual convnet detector and an alpha-beta tracker): 1,700-1,800 requests (drawn), each the latest 2-4 sweeps (drawn) of one of 12 vessel-traffic-service radar stations (drawn), each station with its own 512 or 1,024 azimuths and 256-768 range bins (a multiple of 128) and a range resolution of 7.5-15 m, drawn once per station; uint8 echo intensities uploaded on a side stream from two reused pinned host buffers (filled once, sized for 4 sweeps of 768 x 1,024) one request ahead (one span, through SideUploads.ahead), normalised on the device, padded circularly by 16 azimuths a side for the wrap-around; a channels-last residual convnet (stem 32 at stride 2, residual blocks of 32/64 to stride 4 and 128 to stride 8, width 96 after the top-down merge), the sweeps fused by a 1x1 and a 3x3 convolution over the latest, the mean and the latest minus the earliest, the azimuth padding cropped; heatmap, radial and tangential velocity and extent heads at stride 4 under bf16 autocast; 3 x 3 max-pool peak picking and the top 64 peaks converted to metres east and north (detections: score above 0.3); association to the station's 128 track slots (predicted by their velocities) by the nearest slot, matched when within a 150 m gate and live (score above zero), matched detections averaged into their tracks by index_add, alpha-beta updates and score decay by torch.where, unmatched detections started in the lowest-scoring slots by index_copy, the station's rows of the on-device track table (positions, velocities, scores) written back by index_copy_; each request's detection count, confirmed-track count and mean confirmed speed read back")
def coastal_radar_track_serve(rng):
    widths, d = _smoke([32, 64, 128], [16, 16, 32]), _smoke(96, 16)
    model = _RadarNet(widths, d).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    n_sta, slots, n_det, max_sw, pad = _smoke(12, 3), _smoke(128, 16), _smoke(64, 8), _smoke(4, 3), 16
    az_opts, r_lo, r_hi = _smoke([512, 1024], [64, 96]), _smoke(256, 64), _smoke(768, 128)
    r_mult = _smoke(128, 32)
    station = [(rng.choice(az_opts), rng.randint(r_lo // r_mult, r_hi // r_mult) * r_mult, rng.uniform(7.5, 15.0))
               for _ in range(n_sta)]
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_sw * r_hi * max(az_opts),), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    trk_pos = torch.zeros(n_sta * slots, 2, device="cuda")
    trk_vel = torch.zeros(n_sta * slots, 2, device="cuda")
    trk_score = torch.zeros(n_sta * slots, device="cuda")
    period, gate, alpha, beta = 2.5, 150.0, 0.6, 0.2

    nreq = rng.randint(_smoke(1700, 3), _smoke(1800, 4))
    plan = []
    for _ in range(nreq):
        sta = rng.randrange(n_sta)
        plan.append((sta, rng.randint(2, max_sw)))

    def span(p):
        az, rb, _ = station[p[0]]
        return (p[1] * rb * az,)

    for (sta, sw), raw in up.ahead(plan, span):
        az, rb, res_m = station[sta]
        with torch.no_grad():
            x = raw.view(sw, 1, rb, az).float().div_(255.0).sub_(0.2)
            x = _F.pad(x, (pad, pad, 0, 0), mode="circular").contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = model(x)[0, :, :, pad // 4:pad // 4 + az // 4]
            heat = torch.sigmoid(out[0])
            peaks = torch.where(heat == _F.max_pool2d(heat[None], 3, 1, 1)[0], heat, 0.0)
            score, idx = peaks.flatten().topk(n_det)
            a4 = az // 4
            rng_m = (torch.div(idx, a4, rounding_mode="floor").float() + 0.5) * 4 * res_m
            ang = ((idx % a4).float() + 0.5) * (2 * math.pi / a4)
            det = torch.stack([rng_m * torch.sin(ang), rng_m * torch.cos(ang)], -1)
            valid = torch.where(score > 0.3, 1.0, 0.0)
            rows = torch.arange(slots, device="cuda") + sta * slots
            pos, vel = trk_pos.index_select(0, rows), trk_vel.index_select(0, rows)
            tsc = trk_score.index_select(0, rows)
            pred = pos + vel * (period * sw)
            dist = torch.cdist(det, pred)
            best, tidx = dist.min(1)
            matched = valid * torch.where((best < gate) & (tsc[tidx] > 0), 1.0, 0.0)
            acc = torch.zeros(slots, 2, device="cuda").index_add_(0, tidx, det * matched[:, None])
            cnt = torch.zeros(slots, device="cuda").index_add_(0, tidx, matched)
            has = (cnt > 0)[:, None]
            resid = acc / cnt.clamp(min=1)[:, None] - pred
            pos = torch.where(has, pred + alpha * resid, pred)
            vel = torch.where(has, vel + beta * resid / (period * sw), vel)
            tsc = torch.where(has[:, 0], (tsc + 1).clamp(max=10), tsc * 0.8)
            spawn = (valid * (1 - matched))[:, None]
            free = tsc.topk(n_det, largest=False).indices
            pos = pos.index_copy(0, free, spawn * det + (1 - spawn) * pos.index_select(0, free))
            vel = vel.index_copy(0, free, (1 - spawn) * vel.index_select(0, free))
            tsc = tsc.index_copy(0, free, spawn[:, 0] + (1 - spawn[:, 0]) * tsc.index_select(0, free))
            trk_pos.index_copy_(0, rows, pos)
            trk_vel.index_copy_(0, rows, vel)
            trk_score.index_copy_(0, rows, tsc)
            conf = torch.where(tsc >= 3, 1.0, 0.0)
            speed = (vel.norm(dim=-1) * conf).sum() / conf.sum().clamp(min=1)
            res = torch.stack([valid.sum(), conf.sum(), speed])
        res.tolist()
        del raw, x, out, heat, peaks, score, idx, rng_m, ang, det, valid, rows, pos, vel, tsc, pred, dist, best, tidx
        del matched, acc, cnt, has, resid, spawn, free, conf, speed, res

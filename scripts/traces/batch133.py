"""The hundred-and-thirty-third batch of held-out workloads for record.py, kept in a file of their own (as batch16.py
to batch132_b.py are): sailing, yachting and regattas, written in torch alone, first half. Wind-shift forecasting
training on the race course (two GRU cells written out step by step over the readings of the mark boats' and the
committee boat's anemometers, stations of drawn counts under a mask and series of drawn lengths, padded steps keeping
the state by torch.where; the next shift, its kind and the pressure change per step), helm and sail trim policy
training (soft actor-critic over boats simulated on the device with a polar-based speed model, a replay buffer held
on the device as ring tensors, twin critics and their targets, a learned temperature), foil section flow prediction
training (a convolutional U-Net over signed distance fields of drawn foil sections at drawn resolutions, the velocity
and pressure fields by masked MSE and the lift and drag from the pressure on the section's surface band) and a fleet
tracking service (an encoder over each boat's recent GPS fixes and a graph network over each race's fleet, every boat
joined to its nearest rivals by cdist and topk, the win probabilities, time to the next mark and the fleet's
leverage).
Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths,
resolutions and batch sizes are fixed on the host, padding handled by masks or by torch.where / masked_fill, no
boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
fleet_tracking_gnn_serve uploads its tracks on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every embedding and position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new133.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and
for the CPU smoke run (RECORD_SMOKE=1).
"""

import math

import torch

from batch_common import Batch
from workload_helpers import SideUploads, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- wind-shift forecasting (GRU written out)


class _GRUCell(_nn.Module):
    """A GRU cell written out: the input's gates computed beforehand for every step, the hidden state's here."""

    def __init__(self, h):
        super().__init__()
        self.hh = _nn.Linear(h, 3 * h)

    def forward(self, gx, h):
        gh = self.hh(h.to(gx.dtype))
        xr, xz, xn = gx.chunk(3, -1)
        hr, hz, hn = gh.chunk(3, -1)
        r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
        n = torch.tanh(xn + r * hn)
        return ((1 - z) * n).float() + z.float() * h


@_workload("wind-shift forecasting training on the race course (random init, two GRU cells written out step by step): 32-96 courses a step (drawn), each with 6-12 wind stations (mark boats, the committee boat and the pin; drawn per course, padded to 12 under a mask) of 6 channels (direction sine and cosine, speed, gust, pressure trend, air temperature) every 30 s over 24-72 readings (drawn per course, padded to the step's longest); the stations' readings with their mask flattened to an input MLP (width 192), the input gates of the first cell computed for every step at once, two GRU cells of 256 written out step by step, padded steps keeping each course's state by torch.where; per step the next 5 minutes' shift (sine and cosine of the change) and speed change by masked MSE and the shift's kind (of 3: left, steady, right) by masked cross-entropy; AdamW, clipping, bf16 autocast, 48 steps; the losses read back every 10 steps and every 12 steps a no-grad pass over 64 courses of 12 stations and 72 readings with the kind accuracy read back")
def course_wind_shift_gru_train(rng):
    n_st, ch, d, hid = 12, 6, _smoke(192, 16), _smoke(256, 16)
    inp = mlp(n_st * (ch + 1), d, d, act=_nn.GELU).cuda()
    gx1, gx2 = _nn.Linear(d, 3 * hid).cuda(), _nn.Linear(hid, 3 * hid).cuda()
    cell1, cell2 = _GRUCell(hid).cuda(), _GRUCell(hid).cuda()
    head = mlp(hid, hid, 3 + 3, act=_nn.GELU).cuda()
    mods = _nn.ModuleList([inp, gx1, gx2, cell1, cell2, head])
    opt = torch.optim.AdamW(mods.parameters(), lr=1e-3, weight_decay=0.01)
    steps, every = _smoke(48, 3), _smoke(12, 2)
    t_lo, t_hi = _smoke(24, 4), _smoke(72, 8)

    def run(n_stations, lens):
        b, t = len(lens), max(lens)
        keep = keep_mask(lens, t)
        smask = keep_mask(n_stations, n_st).float()
        x = torch.randn(b, t, n_st, ch, device="cuda") * smask[:, None, :, None]
        feat = torch.cat([x, smask[:, None, :, None].expand(b, t, n_st, 1)], -1).flatten(2)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            g1 = gx1(inp(feat))
            h1 = h2 = torch.zeros(b, hid, device="cuda")
            outs = []
            for s in range(t):
                k = keep[:, s:s + 1]
                h1 = torch.where(k, cell1(g1[:, s], h1), h1)
                h2 = torch.where(k, cell2(gx2(h1), h2), h2)
                outs.append(h2)
            out = head(torch.stack(outs, 1)).float()
        return keep, out

    def targets(b, t):
        ang = torch.randn(b, t, device="cuda") * 0.15
        shift = torch.stack([ang.sin(), ang.cos(), torch.randn(b, t, device="cuda") * 0.3], -1)
        kind = (ang > 0.08).long() - (ang < -0.08).long() + 1
        return shift, kind

    for step in range(steps):
        mods.train()
        b = rng.randint(_smoke(32, 2), _smoke(96, 3))
        n_stations = [rng.randint(6, n_st) for _ in range(b)]
        lens = [rng.randint(t_lo, t_hi) for _ in range(b)]
        keep, out = run(n_stations, lens)
        shift, kind = targets(b, keep.shape[1])
        w = keep.float()
        l_shift = ((out[..., :3] - shift).pow(2).sum(-1) * w).sum() / w.sum()
        l_kind = (_F.cross_entropy(out[..., 3:].transpose(1, 2), kind, reduction="none") * w).sum() / w.sum()
        loss = l_shift + l_kind
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(mods.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_shift.detach(), l_kind.detach()]).tolist()
        del keep, out, shift, kind, w, l_shift, l_kind, loss
        if (step + 1) % every == 0:
            mods.eval()
            with torch.no_grad():
                nb = _smoke(64, 2)
                keep, out = run([n_st] * nb, [t_hi] * nb)
                shift, kind = targets(nb, t_hi)
                acc = (out[..., 3:].argmax(-1) == kind).float().mean()
            acc.item()
            del keep, out, shift, kind, acc


# ---------------------------------------------------------------- helm and sail trim policy (soft actor-critic)


class _Actor(_nn.Module):
    """A tanh-squashed Gaussian policy: an MLP trunk with layer norms, the mean and log-std of each action."""

    def __init__(self, s_dim, a_dim, hidden):
        super().__init__()
        self.trunk = mlp(s_dim, hidden, 2 * a_dim, layers=3, act=_nn.ReLU, norm=True)

    def forward(self, s, noise):
        mu, log_std = self.trunk(s).float().chunk(2, -1)
        log_std = log_std.clamp(-5.0, 2.0)
        u = mu + log_std.exp() * noise
        a = torch.tanh(u)
        logp = (-0.5 * noise.pow(2) - log_std - 0.5 * math.log(2 * math.pi)).sum(-1)
        logp = logp - (2 * (math.log(2.0) - u - _F.softplus(-2 * u))).sum(-1)
        return a, logp


class _TwinQ(_nn.Module):
    def __init__(self, s_dim, a_dim, hidden):
        super().__init__()
        self.q1 = mlp(s_dim + a_dim, hidden, 1, layers=3, act=_nn.ReLU, norm=True)
        self.q2 = mlp(s_dim + a_dim, hidden, 1, layers=3, act=_nn.ReLU, norm=True)

    def forward(self, s, a):
        sa = torch.cat([s, a], -1)
        return self.q1(sa).float()[:, 0], self.q2(sa).float()[:, 0]


@_workload("helm and sail trim policy training (random init, soft actor-critic): 1,024 boats simulated on the device on an upwind or downwind leg, a 16-feature state (true wind angle as sine and cosine, true wind speed, boat speed, heel, rudder angle, mainsheet, jib sheet, the sheets' difference, the wave phase as sine and cosine, the leg's direction, the target speed from a polar, VMG, the last shift and a bias), 3 continuous actions (rudder rate, mainsheet and jib sheet trim) from a tanh-squashed Gaussian; the boat speed relaxes to a polar speed (a function of the wind angle and speed) scaled by the sails' trim efficiency and cut by heel and rudder drag, heel from the sheets and the wind, the wind shifting by a random walk with gusts; reward the VMG less heel and rudder penalties; every env step stored in a replay buffer held on the device (ring tensors of 200,000 transitions written at host-computed offsets); per iteration one env step, then one update on a minibatch of 256-1,024 transitions (drawn per update) sampled by randint: twin critics of 3 layers of 256 with layer norms against the soft target (gamma 0.99, the target critics' minimum less the entropy term), the actor by the reparameterised minimum Q less the entropy, a learned temperature toward the target entropy of -3, Polyak averaging of the targets (tau 0.005) by _foreach_lerp_; Adam, bf16 autocast, 650 iterations after 40 random warm-up steps; the mean reward and the losses read back every 50 iterations")
def helm_trim_sac_train(rng):
    s_dim, a_dim, hidden = 16, 3, _smoke(256, 16)
    envs, cap = _smoke(1024, 8), _smoke(200000, 256)
    actor = _Actor(s_dim, a_dim, hidden).cuda()
    critic, target = _TwinQ(s_dim, a_dim, hidden).cuda(), _TwinQ(s_dim, a_dim, hidden).cuda()
    target.load_state_dict(critic.state_dict())
    target.requires_grad_(False)
    log_alpha = torch.zeros((), device="cuda", requires_grad=True)
    opt_a = torch.optim.Adam(actor.parameters(), lr=3e-4)
    opt_c = torch.optim.Adam(critic.parameters(), lr=3e-4)
    opt_t = torch.optim.Adam([log_alpha], lr=3e-4)
    gamma, tau, h_target, dt = 0.99, 0.005, -float(a_dim), 1.0
    iters, warm, log_every = _smoke(650, 4), _smoke(40, 2), _smoke(50, 2)
    buf_s = torch.zeros(cap, s_dim, device="cuda")
    buf_a = torch.zeros(cap, a_dim, device="cuda")
    buf_r = torch.zeros(cap, device="cuda")
    buf_n = torch.zeros(cap, s_dim, device="cuda")
    pos, filled = 0, 0

    st = dict(twa=torch.rand(envs, device="cuda") * 2.6 + 0.5, tws=torch.rand(envs, device="cuda") * 14.0 + 6.0,
              bs=torch.rand(envs, device="cuda") * 6.0, heel=torch.zeros(envs, device="cuda"),
              rud=torch.zeros(envs, device="cuda"), main=torch.full((envs,), 0.5, device="cuda"),
              jib=torch.full((envs,), 0.5, device="cuda"), phase=torch.rand(envs, device="cuda") * 6.28,
              shift=torch.zeros(envs, device="cuda"))

    def polar(twa, tws):
        return tws.clamp(0.0, 20.0).sqrt() * 2.2 * torch.sin(twa.clamp(0.6, 3.0) * 0.8).clamp_min(0.1)

    def observe(s):
        tgt = polar(s["twa"], s["tws"])
        vmg = s["bs"] * s["twa"].cos()
        return torch.stack([s["twa"].sin(), s["twa"].cos(), s["tws"] / 20.0, s["bs"] / 10.0, s["heel"] / 0.5,
                            s["rud"], s["main"], s["jib"], (s["main"] - s["jib"]).abs(), s["phase"].sin(),
                            s["phase"].cos(), (s["twa"] > 1.57).float(), tgt / 10.0, vmg / 10.0, s["shift"] * 5.0,
                            torch.ones_like(vmg)], -1)

    def env_step(s, a):
        rud = (s["rud"] + 0.2 * a[:, 0]).clamp(-1.0, 1.0)
        main, jib = (a[:, 1] + 1.0) * 0.5, (a[:, 2] + 1.0) * 0.5
        ideal = (1.0 - s["twa"] / 3.14).clamp(0.05, 1.0)
        eff = 1.0 - 0.6 * (main - ideal).pow(2) - 0.4 * (jib - ideal).pow(2)
        heel = (0.04 * s["tws"] * (main + jib) * s["twa"].sin()).clamp(0.0, 0.6)
        target_bs = polar(s["twa"], s["tws"]) * eff * (1.0 - 0.5 * heel.pow(2)) * (1.0 - 0.1 * rud.abs())
        bs = s["bs"] + 0.3 * (target_bs - s["bs"]) * dt
        shift = 0.9 * s["shift"] + 0.02 * torch.randn_like(s["shift"])
        twa = (s["twa"] + 0.05 * rud + shift).clamp(0.3, 3.1)
        tws = (s["tws"] + 0.2 * torch.randn_like(s["tws"])).clamp(4.0, 25.0)
        phase = s["phase"] + 0.7 * dt
        vmg = bs * twa.cos().abs()
        r = 0.1 * vmg - 0.5 * (heel - 0.35).clamp_min(0.0) - 0.05 * rud.abs()
        return dict(twa=twa, tws=tws, bs=bs, heel=heel, rud=rud, main=main, jib=jib, phase=phase, shift=shift), r

    for it in range(warm + iters):
        with torch.no_grad():
            s = observe(st)
            if it < warm:
                a = torch.rand(envs, a_dim, device="cuda") * 2.0 - 1.0
            else:
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    a, _ = actor(s, torch.randn(envs, a_dim, device="cuda"))
            st, r = env_step(st, a)
            n = envs if pos + envs <= cap else cap - pos
            buf_s[pos:pos + n] = s[:n]
            buf_a[pos:pos + n] = a[:n]
            buf_r[pos:pos + n] = r[:n]
            buf_n[pos:pos + n] = observe(st)[:n]
            pos, filled = (pos + n) % cap, min(cap, filled + n)
            mean_r = r.mean()
            del s, a
        if it < warm:
            del r, mean_r
            continue
        mb = rng.randint(_smoke(256, 4), _smoke(1024, 8))
        idx = torch.randint(0, filled, (mb,), device="cuda")
        bs_, ba, br, bn = buf_s[idx], buf_a[idx], buf_r[idx], buf_n[idx]
        alpha = log_alpha.exp().detach()
        with torch.no_grad():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                an, lpn = actor(bn, torch.randn(mb, a_dim, device="cuda"))
                t1, t2 = target(bn, an)
            y = br + gamma * (torch.minimum(t1, t2) - alpha * lpn)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            q1, q2 = critic(bs_, ba)
        l_q = _F.mse_loss(q1, y) + _F.mse_loss(q2, y)
        opt_c.zero_grad(set_to_none=True)
        l_q.backward()
        opt_c.step()
        critic.requires_grad_(False)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            ap, lpp = actor(bs_, torch.randn(mb, a_dim, device="cuda"))
            p1, p2 = critic(bs_, ap)
        l_pi = (alpha * lpp - torch.minimum(p1, p2)).mean()
        opt_a.zero_grad(set_to_none=True)
        l_pi.backward()
        opt_a.step()
        critic.requires_grad_(True)
        l_t = -(log_alpha * (lpp.detach() + h_target)).mean()
        opt_t.zero_grad(set_to_none=True)
        l_t.backward()
        opt_t.step()
        with torch.no_grad():
            torch._foreach_lerp_(list(target.parameters()), list(critic.parameters()), tau)
        if (it - warm) % log_every == 0:
            torch.stack([mean_r, l_q.detach(), l_pi.detach(), log_alpha.detach()]).tolist()
        del idx, bs_, ba, br, bn, alpha, an, lpn, t1, t2, y, q1, q2, l_q, ap, lpp, p1, p2, l_pi, l_t, r, mean_r


# ---------------------------------------------------------------- foil section flow (convolutional U-Net)


class _ConvPair(_nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.net = _nn.Sequential(_nn.Conv2d(cin, cout, 3, 1, 1, bias=False), _nn.BatchNorm2d(cout), _nn.ReLU(),
                                  _nn.Conv2d(cout, cout, 3, 1, 1, bias=False), _nn.BatchNorm2d(cout), _nn.ReLU())

    def forward(self, x):
        return self.net(x)


class _FlowUNet(_nn.Module):
    """Four levels of paired 3x3 convolutions with batch norm, max pooling down, transposed convolutions up with the
    skips concatenated, a 1x1 to the velocity and pressure fields."""

    def __init__(self, cin, widths, cout):
        super().__init__()
        self.down = _nn.ModuleList()
        c = cin
        for w in widths:
            self.down.append(_ConvPair(c, w))
            c = w
        self.up, self.dec = _nn.ModuleList(), _nn.ModuleList()
        for w in reversed(widths[:-1]):
            self.up.append(_nn.ConvTranspose2d(c, w, 2, 2))
            self.dec.append(_ConvPair(2 * w, w))
            c = w
        self.out = _nn.Conv2d(c, cout, 1)

    def forward(self, x):
        skips = []
        for i, blk in enumerate(self.down):
            x = blk(x if i == 0 else _F.max_pool2d(x, 2))
            skips.append(x)
        for up, dec, skip in zip(self.up, self.dec, reversed(skips[:-1])):
            x = dec(torch.cat([up(x), skip], 1))
        return self.out(x).float()


@_workload("foil section flow prediction training (random init, a convolutional U-Net over signed distance fields): 8-24 foil sections a step (drawn) on a grid of 64 x 128, 96 x 192 or 128 x 256 cells (drawn per step), each a NACA-style section made on the device from a drawn thickness (6-18 %), camber (0-6 %) and camber position, placed at a drawn angle of attack (-4 to 14 degrees) by rotating the grid, its signed distance approximated from the thickness envelope; 5 inputs (the signed distance, the inflow's two components, the Reynolds number's log and the inside mask); a U-Net of 4 levels (32, 64, 128, 256 channels, paired 3x3 convolutions with batch norm, max pooling, transposed convolutions and skips) in channels_last to 3 outputs (u, v and the pressure coefficient); the fields by MSE masked outside the section, the lift and drag coefficients from the pressure and the u velocity integrated over a band around the surface (weights from the distance) against targets from thin-aerofoil theory (2 pi alpha plus the camber's term, a drag polar); AdamW on a cosine schedule, clipping, bf16 autocast, 590 steps; the losses read back every 20 steps and every 118 steps a no-grad pass over 16 sections at 128 x 256 with the lift error read back")
def foil_section_flow_unet_train(rng):
    widths = _smoke([32, 64, 128, 256], [8, 8, 16, 16])
    model = _FlowUNet(5, widths, 3).cuda().to(memory_format=torch.channels_last)
    steps, every = _smoke(590, 3), _smoke(118, 2)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    res_opts = _smoke([(64, 128), (96, 192), (128, 256)], [(16, 32), (24, 48)])

    def sections(b, hh, ww):
        thick = torch.rand(b, 1, 1, device="cuda") * 0.12 + 0.06
        camber = torch.rand(b, 1, 1, device="cuda") * 0.06
        cpos = torch.rand(b, 1, 1, device="cuda") * 0.3 + 0.3
        alpha = (torch.rand(b, 1, 1, device="cuda") * 18.0 - 4.0) * math.pi / 180.0
        ys = torch.linspace(-0.5, 0.5, hh, device="cuda").view(1, hh, 1) * (hh / ww) * 2.0
        xs = torch.linspace(-0.5, 1.5, ww, device="cuda").view(1, 1, ww)
        xr = xs * alpha.cos() + ys * alpha.sin()
        yr = -xs * alpha.sin() + ys * alpha.cos()
        xc = xr.clamp(0.0, 1.0)
        half = 5 * thick * (0.2969 * xc.sqrt() - 0.126 * xc - 0.3516 * xc.pow(2) + 0.2843 * xc.pow(3)
                            - 0.1015 * xc.pow(4))
        yc = torch.where(xc < cpos, camber / cpos.pow(2) * (2 * cpos * xc - xc.pow(2)),
                         camber / (1 - cpos).pow(2) * ((1 - 2 * cpos) + 2 * cpos * xc - xc.pow(2)))
        sdf = (yr - yc).abs() - half + (xr - xc).abs()
        inside = (sdf < 0).float()
        re = torch.rand(b, 1, 1, device="cuda") * 2.0 + 5.0
        x = torch.stack([sdf, alpha.cos().expand_as(sdf), alpha.sin().expand_as(sdf), re.expand_as(sdf) - 6.0,
                         inside], 1).contiguous(memory_format=torch.channels_last)
        flow = torch.randn(b, 3, hh, ww, device="cuda") * 0.1
        flow = flow + torch.stack([1.0 + 0.2 * torch.exp(-sdf.abs() * 8.0), 0.1 * alpha.expand_as(sdf),
                                   1.0 - torch.exp(-sdf.abs() * 4.0)], 1)
        cl = 2 * math.pi * (alpha.flatten() + 2.0 * camber.flatten())
        cd = 0.008 + 0.01 * thick.flatten() + 0.02 * cl.pow(2) / (2 * math.pi)
        return x, flow, inside, sdf, torch.stack([cl, cd], -1), alpha.flatten()

    def coeffs(out, sdf, alpha):
        band = torch.exp(-(sdf / 0.02).pow(2))
        cp = out[:, 2] * band
        lift = -(cp * torch.sign(torch.linspace(-1, 1, sdf.shape[1], device="cuda"))[None, :, None]).mean((1, 2))
        drag = (out[:, 0] * band).mean((1, 2))
        cl = lift * alpha.cos() + drag * alpha.sin()
        cd = drag * alpha.cos() - lift * alpha.sin()
        return torch.stack([cl, cd], -1) * 50.0

    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(8, 2), _smoke(24, 3))
        hh, ww = rng.choice(res_opts)
        x, flow, inside, sdf, coef, alpha = sections(b, hh, ww)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(x)
        w = (1.0 - inside)[:, None]
        l_field = ((out - flow).pow(2) * w).sum() / (w.sum() * 3.0)
        l_coef = _F.smooth_l1_loss(coeffs(out, sdf, alpha), coef)
        loss = l_field + 0.2 * l_coef
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            torch.stack([l_field.detach(), l_coef.detach()]).tolist()
        del x, flow, inside, sdf, coef, alpha, out, w, l_field, l_coef, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                hh, ww = res_opts[-1]
                x, flow, inside, sdf, coef, alpha = sections(_smoke(16, 2), hh, ww)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    out = model(x)
                err = (coeffs(out, sdf, alpha)[:, 0] - coef[:, 0]).abs().mean()
            err.item()
            del x, flow, inside, sdf, coef, alpha, out, err


# ---------------------------------------------------------------- fleet tracking (track encoder, graph network)


class _EdgeLayer(_nn.Module):
    """An edge-convolution layer: a message MLP on each boat, its neighbour's difference and their relative position,
    max-aggregated over the k nearest rivals, a residual update and a layer norm."""

    def __init__(self, d):
        super().__init__()
        self.msg = mlp(2 * d + 4, d, d, act=_nn.GELU)
        self.norm = _nn.LayerNorm(d)

    def forward(self, h, nbr, rel):
        m, r, k = nbr.shape
        d = h.shape[-1]
        hj = h.reshape(m * r, d).index_select(0, nbr.flatten()).view(m, r, k, d)
        hi = h[:, :, None].expand(m, r, k, d)
        msg = self.msg(torch.cat([hi, hj - hi, rel.to(h.dtype)], -1)).amax(2)
        return self.norm(h + msg)


class _FleetNet(_nn.Module):
    def __init__(self, cin, d, layers, n_class):
        super().__init__()
        self.fix = mlp(cin + 2, d, d, act=_nn.GELU)
        self.cls = _nn.Embedding(n_class, d)
        self.layers = _nn.ModuleList(_EdgeLayer(d) for _ in range(layers))
        self.head = mlp(d, d, 3, act=_nn.GELU)

    def forward(self, trk, cls, nbr, rel):
        m, r, t, c = trk.shape
        step = torch.cat([trk[:, :, 1:, :2] - trk[:, :, :-1, :2], trk[:, :, 1:]], -1)
        f = self.fix(step)
        h = f.mean(2) + f.amax(2) + self.cls(cls)
        for layer in self.layers:
            h = layer(h, nbr, rel)
        return self.head(h).float()


@_workload("fleet tracking serving (random init, a track encoder and a graph network over each race's fleet): 2,540-2,580 requests (drawn) of 1-4 races (drawn), each of 20-120 boats (drawn per race, padded to the request's largest fleet under a mask), each boat's last 16-64 GPS fixes (drawn per request in steps of 8) of 4 channels (x, y, speed and course over ground), fp16 uploaded on a side stream from two reused pinned host buffers (filled once, sized for 4 x 120 x 64 x 4) one request ahead (one span, through SideUploads.ahead), and a boat class from a 6-row table; each fix step (the displacement and the fix) through an MLP (width 128) pooled by mean and max; each boat joined to its 8 nearest rivals of the same race by cdist on the last fixes and topk (padded boats pushed far), 4 edge-convolution layers (message MLPs on the boat, the neighbour's difference and the relative position and velocity, max over neighbours, residual and layer norm), in eval mode under bf16 autocast; per race the win probabilities (a masked softmax), each boat's time to the next mark (softplus) and its distance to the leader along the course axis, the fleet's lateral spread (leverage) and each boat's gain over its track; each request's figures read back once")
def fleet_tracking_gnn_serve(rng):
    cin, d, layers, n_class, k = 4, _smoke(128, 16), _smoke(4, 1), 6, 8
    max_m, max_r, max_t, unit = _smoke(4, 2), _smoke(120, 24), _smoke(64, 16), 8
    r_lo = _smoke(20, 10)
    model = _FleetNet(cin, d, layers, n_class).cuda().eval()
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randn(max_m * max_r * max_t * cin, generator=gen).half().pin_memory() for _ in range(2)]
    up = SideUploads(host)

    nreq = rng.randint(_smoke(2540, 3), _smoke(2580, 4))
    plan = []
    for _ in range(nreq):
        m = rng.randint(1, max_m)
        plan.append((m, [rng.randint(r_lo, max_r) for _ in range(m)], rng.randint(2, max_t // unit) * unit))

    for (m, fleets, t), raw in up.ahead(plan, lambda p: (p[0] * max(p[1]) * p[2] * cin,)):
        r = max(fleets)
        with torch.no_grad():
            trk = raw.view(m, r, t, cin).float()
            keep = keep_mask(fleets, r)
            pos = trk[:, :, -1, :2] * 100.0
            vel = trk[:, :, -1, 2:]
            dist = torch.cdist(pos, pos) + torch.eye(r, device="cuda") * 1e6
            dist = dist.masked_fill(~keep[:, None, :], 1e7)
            nbr_local = dist.topk(k, -1, largest=False).indices
            nbr = nbr_local + (torch.arange(m, device="cuda") * r)[:, None, None]
            pj = pos.reshape(m * r, 2).index_select(0, nbr.flatten()).view(m, r, k, 2)
            vj = vel.reshape(m * r, 2).index_select(0, nbr.flatten()).view(m, r, k, 2)
            rel = torch.cat([(pj - pos[:, :, None]) / 100.0, vj - vel[:, :, None]], -1)
            cls = torch.randint(0, n_class, (m, r), device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = model(trk, cls, nbr, rel)
            win = out[..., 0].masked_fill(~keep, -1e4).softmax(-1)
            to_mark = _F.softplus(out[..., 1]) * 60.0
            ahead = pos[..., 1].masked_fill(~keep, -1e7)
            behind = (ahead.amax(-1, keepdim=True) - pos[..., 1]) * keep.float()
            lat = pos[..., 0]
            w = keep.float()
            mean_x = (lat * w).sum(-1, keepdim=True) / w.sum(-1, keepdim=True)
            spread = ((lat - mean_x).pow(2) * w).sum(-1) / w.sum(-1)
            gain = (trk[:, :, -1, 1] - trk[:, :, 0, 1]) * 100.0 * w
            figs = torch.cat([torch.stack([win, to_mark * w, behind, gain], -1).flatten(), spread.sqrt()])
        figs.tolist()
        del raw, trk, keep, pos, vel, dist, nbr_local, nbr, pj, vj, rel, cls, out, win, to_mark, ahead, behind
        del lat, w, mean_x, spread, gain, figs

"""The hundred-and-twenty-seventh batch of held-out workloads for record.py, kept in a file of their own (as batch16.py
to batch125_b.py are): ceramics, pottery and glassmaking, written in torch alone, first half. Kiln firing-curve
control training (TD3 on an actor and twin critics, rollouts of a zoned kiln's heat balance simulated on the device
step by step, an on-device replay buffer filled by index_copy_ and sampled by randint), glaze colour and surface
prediction training (a set transformer over glaze recipes of drawn numbers of raw materials, their Seger unity
formula computed on the device as a conditioning token with the cone, atmosphere and clay body; CIELAB colour,
surface and firing defects), a float-glass defect inspection service (a residual encoder-decoder over bright-field and
dark-field line-scan strips of drawn lengths and widths, defect classes per pixel, defect counts by peak finding and
each 64-pixel tile's grade) and a pottery profile sampler (a 1-d U-Net denoiser over vessel profiles of drawn
heights, conditioned on the vessel form and clay body, DDIM with classifier-free guidance, then the volume, clay
volume and stability of each profile revolved).
Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths,
resolutions and batch sizes are fixed on the host, padding handled by masks or by torch.where / masked_fill, no
boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
float_glass_defect_serve uploads its strips on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every embedding and position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new127.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and
for the CPU smoke run (RECORD_SMOKE=1).
"""

import math

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, PreNormBlock, SideUploads, _sincos, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- kiln firing-curve control (TD3)


class _Actor(_nn.Module):
    """An MLP with layer norms from the kiln state to tanh burner powers of each zone and the damper position."""

    def __init__(self, s_dim, a_dim, hidden):
        super().__init__()
        self.net = mlp(s_dim, hidden, a_dim, layers=3, act=_nn.ReLU, norm=True)

    def forward(self, s):
        return torch.tanh(self.net(s).float())


class _TwinCritic(_nn.Module):
    """Two MLPs with layer norms from the state and action to Q values."""

    def __init__(self, s_dim, a_dim, hidden):
        super().__init__()
        self.q1 = mlp(s_dim + a_dim, hidden, 1, layers=3, act=_nn.ReLU, norm=True)
        self.q2 = mlp(s_dim + a_dim, hidden, 1, layers=3, act=_nn.ReLU, norm=True)

    def forward(self, s, a):
        sa = torch.cat([s, a], -1)
        return self.q1(sa).float()[:, 0], self.q2(sa).float()[:, 0]


@_workload("kiln firing-curve control training (random init, TD3 on an actor and twin critics): 160 updates, each a rollout of 8-16 control steps (drawn per update, 3 simulated minutes a step) over 64-256 kilns (drawn per update) of 4 zones whose heat balance is simulated on the device step by step (burner power against losses to ambient, coupling between neighbouring zones, the damper's draught, noise), each kiln following a firing curve of a drawn ramp of 60-180 C/h to a peak of 1000-1300 C (drawn on the device); a 16-feature state (zone temperatures, the curve's next 4 targets, the zone errors, oxygen, phase, ambient and ramp), an actor MLP (3 layers of 256 with layer norms) to 4 burner powers and a damper by tanh with Gaussian exploration noise, rewards from the tracking error, fuel and oxygen; transitions written into a 131,072-row replay buffer on the device (a quarter pre-filled with random transitions) by index_copy_, then 4 gradient steps on 256-1,024 transitions sampled by randint (drawn per update): twin critic MLPs (3 layers of 256 with layer norms) against clipped double-Q targets with target-policy smoothing, the actor every second step, Polyak averaging of the target actor and twin critics by lerp_ (tau 0.005), Adam, bf16 autocast; the mean reward and the losses read back every 5 updates")
def kiln_firing_td3_train(rng):
    zones, s_dim, a_dim, hidden = 4, 16, 5, _smoke(256, 16)
    actor, critic = _Actor(s_dim, a_dim, hidden).cuda(), _TwinCritic(s_dim, a_dim, hidden).cuda()
    actor_t, critic_t = _Actor(s_dim, a_dim, hidden).cuda(), _TwinCritic(s_dim, a_dim, hidden).cuda()
    actor_t.load_state_dict(actor.state_dict())
    critic_t.load_state_dict(critic.state_dict())
    actor_t.requires_grad_(False)
    critic_t.requires_grad_(False)
    opt_a = torch.optim.Adam(actor.parameters(), lr=3e-4)
    opt_c = torch.optim.Adam(critic.parameters(), lr=3e-4)
    cap = _smoke(131072, 512)
    buf_s, buf_s2 = torch.randn(cap, s_dim, device="cuda"), torch.randn(cap, s_dim, device="cuda")
    buf_a, buf_r = torch.rand(cap, a_dim, device="cuda") * 2 - 1, torch.randn(cap, device="cuda") * 0.1
    buf_d = torch.zeros(cap, device="cuda")
    ptr, filled = 0, cap // 4
    updates, grad_steps, gamma, tau, dt = _smoke(160, 2), _smoke(4, 2), 0.99, 0.005, 0.05

    def observe(temp, t, ramp, peak, start, o2, amb):
        look = torch.stack([torch.minimum(start + ramp * (t + j) * dt, peak) for j in range(1, 5)], -1)
        now = torch.minimum(start + ramp * t * dt, peak)
        phase = torch.full_like(o2, t * dt)
        s = torch.cat([temp / 1300.0, look / 1300.0, (temp - now[:, None]) / 100.0, o2[:, None], phase[:, None],
                       amb[:, None] / 40.0, ramp[:, None] / 200.0], -1)
        return s, now

    for upd in range(updates):
        e, horizon = rng.randint(_smoke(64, 4), _smoke(256, 8)), rng.randint(_smoke(8, 2), _smoke(16, 3))
        bsz = rng.randint(_smoke(256, 8), _smoke(1024, 16))
        with torch.no_grad():
            ramp = torch.rand(e, device="cuda") * 120.0 + 60.0
            peak = torch.rand(e, device="cuda") * 300.0 + 1000.0
            amb = torch.rand(e, device="cuda") * 20.0 + 10.0
            temp = amb[:, None] + torch.rand(e, zones, device="cuda") * 600.0
            start = temp.mean(-1)
            o2 = torch.rand(e, device="cuda") * 0.1 + 0.05
            t0 = rng.randint(0, 20)
            s, now = observe(temp, t0, ramp, peak, start, o2, amb)
            ss, aa, rr, ss2 = [], [], [], []
            for t in range(t0, t0 + horizon):
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    a = actor(s)
                a = (a + 0.1 * torch.randn_like(a)).clamp(-1.0, 1.0)
                power, damper = (a[:, :zones] + 1.0) * 0.5, (a[:, zones] + 1.0) * 0.5
                couple = torch.roll(temp, 1, 1) + torch.roll(temp, -1, 1) - 2.0 * temp
                temp = temp + dt * (2400.0 * power * (1.0 - 0.3 * damper[:, None]) - 0.8 * (temp - amb[:, None])
                                    + 2.0 * couple) + torch.randn_like(temp)
                o2 = (0.02 + 0.15 * damper - 0.05 * power.mean(-1)).clamp(0.0, 0.21)
                s2, now = observe(temp, t + 1, ramp, peak, start, o2, amb)
                r = -(temp - now[:, None]).abs().mean(-1) / 100.0 - 0.01 * power.mean(-1) - (o2 - 0.05).abs()
                ss.append(s)
                aa.append(a)
                rr.append(r)
                ss2.append(s2)
                s = s2
            n = e * horizon
            pos = (torch.arange(n, device="cuda") + ptr) % cap
            buf_s.index_copy_(0, pos, torch.cat(ss).to(buf_s.dtype))
            buf_a.index_copy_(0, pos, torch.cat(aa).to(buf_a.dtype))
            buf_r.index_copy_(0, pos, torch.cat(rr).to(buf_r.dtype))
            buf_s2.index_copy_(0, pos, torch.cat(ss2).to(buf_s2.dtype))
            buf_d.index_copy_(0, pos, torch.zeros(n, device="cuda"))
            mean_r = torch.stack(rr).mean()
            ptr, filled = (ptr + n) % cap, min(cap, filled + n)
        del ss, aa, rr, ss2, s, s2, a, power, damper, couple, temp, o2, now, r, pos, ramp, peak, amb, start
        for g in range(grad_steps):
            idx = torch.randint(0, filled, (bsz,), device="cuda")
            bs, ba, br = buf_s.index_select(0, idx), buf_a.index_select(0, idx), buf_r.index_select(0, idx)
            bs2, bd = buf_s2.index_select(0, idx), buf_d.index_select(0, idx)
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                na = (actor_t(bs2) + (0.2 * torch.randn_like(ba)).clamp(-0.5, 0.5)).clamp(-1.0, 1.0)
                q1t, q2t = critic_t(bs2, na)
                y = br + gamma * (1.0 - bd) * torch.minimum(q1t, q2t)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                q1, q2 = critic(bs, ba)
            l_c = _F.mse_loss(q1, y) + _F.mse_loss(q2, y)
            opt_c.zero_grad(set_to_none=True)
            l_c.backward()
            opt_c.step()
            if g % 2 == 1:
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    l_a = -critic(bs, actor(bs))[0].mean()
                opt_a.zero_grad(set_to_none=True)
                l_a.backward()
                opt_a.step()
                with torch.no_grad():
                    for net, tgt in ((actor, actor_t), (critic, critic_t)):
                        for p, tp in zip(net.parameters(), tgt.parameters()):
                            tp.lerp_(p, tau)
            del idx, bs, ba, br, bs2, bd, na, q1t, q2t, y, q1, q2
        if upd % 5 == 0:
            torch.stack([mean_r, l_c.detach(), l_a.detach()]).tolist()
        del mean_r, l_c, l_a


# ---------------------------------------------------------------- glaze colour from recipes (set transformer)


class _GlazeNet(_nn.Module):
    """Each raw material of a recipe (a 96-row material table, its amount and its 12-oxide analysis) as a token, a
    conditioning token (the cone, atmosphere and clay body tables and the recipe's Seger unity formula) in front,
    pre-norm blocks under the tokens' key mask (no positions: a recipe is a set); CIELAB colour, surface, firing
    defects and the thermal expansion from the conditioning token."""

    def __init__(self, n_mat, n_ox, d, heads, layers, n_surf, n_def):
        super().__init__()
        self.mat, self.ing = _nn.Embedding(n_mat, d), _nn.Linear(1 + n_ox, d)
        self.cone, self.atm, self.body = _nn.Embedding(14, d), _nn.Embedding(3, d), _nn.Embedding(24, d)
        self.seger = mlp(n_ox + 1, d, d, act=_nn.GELU)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.head = mlp(d, d, 3 + n_surf + n_def + 1, act=_nn.GELU)

    def forward(self, mat, amt, ox, keep, cone, atm, body, seg):
        tok = self.mat(mat) + self.ing(torch.cat([amt[..., None], ox], -1))
        c = self.cone(cone) + self.atm(atm) + self.body(body) + self.seger(seg)
        z = torch.cat([c[:, None], tok], 1)
        km = torch.cat([torch.ones_like(keep[:, :1]), keep], 1)[:, None, None]
        for blk in self.blocks:
            z = blk(z, km)
        return self.head(self.norm(z[:, 0])).float()


@_workload("glaze colour and surface prediction training (random init, a set transformer over glaze recipes): 96-320 glazes a step (drawn), each of 3-14 raw materials (drawn per glaze, padded to the step's longest) from a 96-row material table with an amount (drawn on the device) and a 12-oxide analysis; each recipe's Seger unity formula computed on the device (oxide moles summed over its materials, normalised to the fluxes, with the silica:alumina ratio) into a conditioning token with the cone (of 14), the atmosphere (oxidation, reduction, neutral) and the clay body (of 24); 6 pre-norm blocks (width 256, 8 heads) under the materials' key mask, no positions; CIELAB colour by MSE, the surface (gloss, satin, matte) by cross-entropy, 5 firing defects (crazing, crawling, pinholing, running, shivering) by BCE and the thermal expansion by MSE from the conditioning token; AdamW on a cosine schedule with a warm-up, clipping, bf16 autocast, 390 steps; the losses read back every 20 steps and every 78 steps a no-grad pass over 512 glazes of 14 materials with the mean colour difference (CIE76 delta E) and the surface accuracy read back")
def glaze_recipe_set_transformer_train(rng):
    n_mat, n_ox, n_surf, n_def = _smoke(96, 16), 12, 3, 5
    d, heads, layers = _smoke(256, 16), _smoke(8, 2), _smoke(6, 1)
    model = _GlazeNet(n_mat, n_ox, d, heads, layers, n_surf, n_def).cuda()
    steps = _smoke(390, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.05)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / 30) * 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    max_ing = 14
    analysis = torch.rand(n_mat, n_ox, device="cuda").pow(3)
    analysis = analysis / analysis.sum(-1, keepdim=True)

    def recipes(lens):
        b, t = len(lens), max(lens)
        keep = torch.arange(t, device="cuda")[None] < torch.tensor(lens, device="cuda")[:, None]
        mat = torch.randint(0, n_mat, (b, t), device="cuda")
        amt = torch.rand(b, t, device="cuda").masked_fill(~keep, 0.0)
        amt = amt / amt.sum(-1, keepdim=True)
        ox = analysis[mat] * keep[..., None].float()
        moles = (amt[..., None] * ox).sum(1)
        flux = moles[:, :6].sum(-1, keepdim=True).clamp_min(1e-6)
        unity = moles / flux
        ratio = unity[:, 6:7] / unity[:, 7:8].clamp_min(1e-3)
        seg = torch.cat([unity, ratio.clamp(0.0, 20.0) / 10.0], -1)
        cone = torch.randint(0, 14, (b,), device="cuda")
        atm, body = torch.randint(0, 3, (b,), device="cuda"), torch.randint(0, 24, (b,), device="cuda")
        lab = torch.randn(b, 3, device="cuda") * torch.tensor([20.0, 15.0, 15.0], device="cuda") + torch.tensor(
            [60.0, 0.0, 10.0], device="cuda")
        surf = torch.randint(0, n_surf, (b,), device="cuda")
        defects = (torch.rand(b, n_def, device="cuda") < 0.15).float()
        cte = torch.randn(b, device="cuda")
        return (mat, amt, ox, keep, cone, atm, body, seg), (lab, surf, defects, cte)

    def losses(out, tgt):
        lab, surf, defects, cte = tgt
        l_lab = _F.mse_loss(out[:, :3] * 20.0, lab) / 400.0
        l_surf = _F.cross_entropy(out[:, 3:3 + n_surf], surf)
        l_def = _F.binary_cross_entropy_with_logits(out[:, 3 + n_surf:3 + n_surf + n_def], defects)
        l_cte = _F.mse_loss(out[:, -1], cte)
        return l_lab, l_surf, l_def, l_cte

    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(96, 3), _smoke(320, 6))
        lens = [rng.randint(3, max_ing) for _ in range(b)]
        inp, tgt = recipes(lens)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(*inp)
        l_lab, l_surf, l_def, l_cte = losses(out, tgt)
        loss = l_lab + l_surf + l_def + 0.5 * l_cte
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            torch.stack([l_lab.detach(), l_surf.detach(), l_def.detach(), l_cte.detach()]).tolist()
        del inp, tgt, out, l_lab, l_surf, l_def, l_cte, loss
        if (step + 1) % _smoke(78, 2) == 0:
            model.eval()
            with torch.no_grad():
                inp, tgt = recipes([max_ing] * _smoke(512, 4))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    out = model(*inp)
                de = (out[:, :3] * 20.0 - tgt[0]).pow(2).sum(-1).sqrt().mean()
                acc = (out[:, 3:3 + n_surf].argmax(-1) == tgt[1]).float().mean()
            torch.stack([de, acc]).tolist()
            del inp, tgt, out, de, acc


# ---------------------------------------------------------------- float glass defect inspection (encoder-decoder)


class _Up(_nn.Module):
    """Bilinear upsampling by 2, the skip concatenated, a 3x3 convolution with batch norm and ReLU."""

    def __init__(self, cin, cskip, cout):
        super().__init__()
        self.conv = _nn.Sequential(_nn.Conv2d(cin + cskip, cout, 3, 1, 1, bias=False), _nn.BatchNorm2d(cout),
                                   _nn.ReLU())

    def forward(self, x, skip):
        x = _F.interpolate(x, size=skip.shape[-2:], mode="bilinear", align_corners=False)
        return self.conv(torch.cat([x, skip.to(x.dtype)], 1))


class _GlassSeg(_nn.Module):
    """A strided stem over the bright-field and dark-field channels, three residual stages (each strided by 2), a
    decoder of three upsampling steps with skips back to 1/2, a 1x1 to the defect classes."""

    def __init__(self, widths, n_cls):
        super().__init__()
        c0, c1, c2, c3 = widths
        self.stem = _nn.Sequential(_nn.Conv2d(2, c0, 3, 2, 1, bias=False), _nn.BatchNorm2d(c0), _nn.ReLU())
        self.s1, self.s2, self.s3 = BasicResBlock(c0, c1, 2), BasicResBlock(c1, c2, 2), BasicResBlock(c2, c3, 2)
        self.u3, self.u2, self.u1 = _Up(c3, c2, c2), _Up(c2, c1, c1), _Up(c1, c0, c0)
        self.out = _nn.Conv2d(c0, n_cls, 1)

    def forward(self, x):
        f0 = self.stem(x)
        f1 = self.s1(f0)
        f2 = self.s2(f1)
        f3 = self.s3(f2)
        return self.out(self.u1(self.u2(self.u3(f3, f2), f1), f0)).float()


@_workload("float glass defect inspection serving (random init, a residual encoder-decoder over line-scan strips): 2,800-2,860 requests (drawn) of 1-4 camera lanes (drawn) across the ribbon, each a strip of 256, 384, 512, 640 or 768 lines (drawn per request) by 1,024, 1,536 or 2,048 pixels (drawn per request) with a bright-field and a dark-field channel, uint8 strips uploaded on a side stream from two reused pinned host buffers (filled once, sized for 4 x 2 x 768 x 2,048) one request ahead (one span, through SideUploads.ahead), normalised on the device; a strided stem (16 channels), three strided residual stages (32, 64, 96 channels) and a decoder of three bilinear upsamplings with skips and 3x3 convolutions back to 1/2 resolution, a 1x1 to 6 classes (background, bubble, stone, tin drip, scratch, distortion) by softmax, in eval mode under bf16 autocast; per lane the area of each defect class (probability above 0.5), the count of each class by peak finding (a 5x5 max pool, peaks above 0.5), the worst 64-pixel tile's defect fraction (average pooling) and its grade by bucketize, the optical distortion from the bright field's Sobel gradients (conv2d) by their standard deviation; each request's areas, counts, grades and distortion read back once")
def float_glass_defect_serve(rng):
    widths, n_cls = _smoke([16, 32, 64, 96], [4, 8, 8, 8]), 6
    max_n = _smoke(4, 2)
    h_opts, w_opts = _smoke([256, 384, 512, 640, 768], [32, 64]), _smoke([1024, 1536, 2048], [64, 96])
    model = _GlassSeg(widths, n_cls).cuda().eval()
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_n * 2 * max(h_opts) * max(w_opts),), dtype=torch.uint8, generator=gen)
            .pin_memory() for _ in range(2)]
    up = SideUploads(host)
    sob = torch.tensor([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]], device="cuda")
    sobel = torch.stack([sob, sob.t()])[:, None]
    bounds = torch.tensor([0.01, 0.05, 0.2], device="cuda")

    nreq = rng.randint(_smoke(2800, 3), _smoke(2860, 4))
    plan = [(rng.randint(1, max_n), rng.choice(h_opts), rng.choice(w_opts)) for _ in range(nreq)]

    for (n, hh, ww), raw in up.ahead(plan, lambda p: (p[0] * 2 * p[1] * p[2],)):
        with torch.no_grad():
            x = (raw.view(n, 2, hh, ww).float() - 128.0) / 64.0
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(x)
            prob = logits.softmax(1)
            heat = prob[:, 1:]
            area = (heat > 0.5).float().mean((2, 3))
            peaks = ((heat == _F.max_pool2d(heat, 5, 1, 2)) & (heat > 0.5)).float().sum((2, 3))
            tile = _F.avg_pool2d(1.0 - prob[:, :1], _smoke(32, 4))
            worst = tile.flatten(1).amax(-1)
            grade = torch.bucketize(worst, bounds).float()
            grad = _F.conv2d(x[:, :1], sobel, padding=1)
            distort = grad.pow(2).sum(1).sqrt().flatten(1).std(-1)
            res = torch.cat([area.flatten(), peaks.flatten(), worst, grade, distort])
        res.tolist()
        del raw, x, logits, prob, heat, area, peaks, tile, worst, grade, grad, distort, res


# ---------------------------------------------------------------- pottery profile sampler (1-d U-Net, DDIM)


class _Res1d(_nn.Module):
    """A 1-d residual block: group norm, SiLU, a 3-tap convolution, the conditioning added per channel, again; a
    1x1 convolution on the skip when the widths differ."""

    def __init__(self, cin, cout, temb):
        super().__init__()
        self.n1, self.c1 = _nn.GroupNorm(8, cin), _nn.Conv1d(cin, cout, 3, 1, 1)
        self.t = _nn.Linear(temb, cout)
        self.n2, self.c2 = _nn.GroupNorm(8, cout), _nn.Conv1d(cout, cout, 3, 1, 1)
        self.skip = _nn.Conv1d(cin, cout, 1) if cin != cout else _nn.Identity()

    def forward(self, x, te):
        h = self.c1(_F.silu(self.n1(x))) + self.t(te)[:, :, None]
        return self.skip(x) + self.c2(_F.silu(self.n2(h)))


class _ProfileUNet(_nn.Module):
    """A 1-d U-Net over the profile's height samples: three levels down by strided convolutions, a bottleneck with
    self-attention over the height positions (a position table sized for the tallest profile), three levels up by
    nearest upsampling with skips; the conditioning (timestep by sine features, the vessel form and clay body tables
    with a null row each, the height-to-width ratio) added in every residual block."""

    def __init__(self, ch, widths, temb, n_form, n_body, max_pos, heads):
        super().__init__()
        self.t_mlp = mlp(temb, temb, temb, act=_nn.SiLU)
        self.form, self.body = _nn.Embedding(n_form + 1, temb), _nn.Embedding(n_body + 1, temb)
        self.aspect = _nn.Linear(1, temb)
        self.inp = _nn.Conv1d(ch, widths[0], 3, 1, 1)
        self.down = _nn.ModuleList(_Res1d(a, b, temb) for a, b in zip(widths[:-1], widths[1:]))
        self.pool = _nn.ModuleList(_nn.Conv1d(b, b, 3, 2, 1) for b in widths[1:])
        c = widths[-1]
        self.mid1, self.mid2 = _Res1d(c, c, temb), _Res1d(c, c, temb)
        self.pos = _nn.Embedding(max_pos, c)
        self.attn = PreNormBlock(c, heads)
        self.up = _nn.ModuleList(_Res1d(b + b, a, temb) for a, b in reversed(list(zip(widths[:-1], widths[1:]))))
        self.out = _nn.Sequential(_nn.GroupNorm(8, widths[0]), _nn.SiLU(), _nn.Conv1d(widths[0], ch, 3, 1, 1))
        self.temb = temb

    def forward(self, x, t, form, body, aspect):
        te = self.t_mlp(_sincos(t, self.temb)) + self.form(form) + self.body(body) + self.aspect(aspect[:, None])
        h = self.inp(x)
        skips = []
        for blk, pool in zip(self.down, self.pool):
            h = blk(h, te)
            skips.append(h)
            h = pool(h)
        h = self.mid1(h, te)
        z = h.transpose(1, 2) + self.pos(torch.arange(h.shape[-1], device=h.device))[None]
        h = self.mid2(self.attn(z).transpose(1, 2), te)
        for blk in self.up:
            s = skips.pop()
            h = blk(torch.cat([_F.interpolate(h, size=s.shape[-1], mode="nearest"), s.to(h.dtype)], 1), te)
        return self.out(h).float()


@_workload("pottery profile sampling (random init, a 1-d U-Net denoiser with DDIM and classifier-free guidance): 48-52 requests (drawn) of 4-32 vessel profiles (drawn) of 128, 192, 256, 320 or 384 height samples (drawn per request) with 3 channels (outer radius, wall thickness, glaze coverage), conditioned on the vessel form (of 8: bowl, vase, jar, cup, plate, bottle, teapot body, amphora), the clay body (of 6; each table with a null row) and a height-to-width ratio of 0.3-3 (drawn per request), with a height of 8-40 cm (drawn per request); a 1-d U-Net (widths 64, 128, 192, 256 with group norm, three strided levels down and nearest upsampling back with skips, a pre-norm self-attention block at the bottleneck over at most 48 positions with a 48-row position table) under bf16 autocast; DDIM (eta 0) over 20-50 of 1,000 cosine-schedule timesteps (drawn per request) with a guidance scale of 1.5-5 (drawn per request), the conditional and null passes in one doubled batch; then each profile revolved: the inner volume, the clay volume, the centre of mass height, the foot radius, the stability ratio and the thinnest wall; each request's figures read back once")
def pottery_profile_ddim_sample(rng):
    ch, widths, temb = 3, _smoke([64, 128, 192, 256], [8, 16, 16, 16]), _smoke(256, 16)
    n_form, n_body, heads = 8, 6, _smoke(8, 2)
    l_opts = _smoke([128, 192, 256, 320, 384], [16, 32])
    max_pos = max(l_opts) // 8
    model = _ProfileUNet(ch, widths, temb, n_form, n_body, max_pos, heads).cuda().eval()
    model.requires_grad_(False)
    n_t = 1000
    ts = torch.arange(n_t + 1, dtype=torch.float64) / n_t
    ab = torch.cos((ts + 0.008) / 1.008 * math.pi / 2) ** 2
    alpha_bar = (ab / ab[0]).clamp(1e-5, 1.0)[1:].tolist()

    nreq = rng.randint(_smoke(48, 2), _smoke(52, 3))
    for _ in range(nreq):
        n, length = rng.randint(_smoke(4, 1), _smoke(32, 3)), rng.choice(l_opts)
        n_steps, scale = rng.randint(_smoke(20, 2), _smoke(50, 3)), rng.uniform(1.5, 5.0)
        ratio, height = rng.uniform(0.3, 3.0), rng.uniform(8.0, 40.0)
        seq = [int(i * (n_t - 1) / (n_steps - 1)) for i in range(n_steps)][::-1]
        with torch.no_grad():
            form = torch.randint(1, n_form + 1, (n,), device="cuda")
            body = torch.randint(1, n_body + 1, (n,), device="cuda")
            null = torch.zeros(n, dtype=torch.long, device="cuda")
            cf, cb = torch.cat([form, null]), torch.cat([body, null])
            asp = torch.full((2 * n,), ratio, device="cuda")
            x = torch.randn(n, ch, length, device="cuda")
            for i, t in enumerate(seq):
                a_t = alpha_bar[t]
                a_prev = alpha_bar[seq[i + 1]] if i + 1 < len(seq) else 1.0
                tt = torch.full((2 * n,), float(t), device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    eps = model(torch.cat([x, x]), tt, cf, cb, asp)
                e_c, e_u = eps.chunk(2)
                e = e_u + scale * (e_c - e_u)
                x0 = ((x - math.sqrt(1.0 - a_t) * e) / math.sqrt(a_t)).clamp(-4.0, 4.0)
                x = math.sqrt(a_prev) * x0 + math.sqrt(1.0 - a_prev) * e
                del tt, eps, e_c, e_u, e, x0
            dh = height / length
            r_out = _F.softplus(x[:, 0]) * height / (2.0 * ratio)
            wall = 0.3 + _F.softplus(x[:, 1]) * 0.5
            r_in = (r_out - wall).clamp_min(0.0)
            vol = math.pi * r_in.pow(2).sum(-1) * dh
            clay = math.pi * (r_out.pow(2) - r_in.pow(2)).sum(-1) * dh
            z = (torch.arange(length, device="cuda").float() + 0.5) * dh
            com = (math.pi * (r_out.pow(2) - r_in.pow(2)) * z).sum(-1) * dh / clay.clamp_min(1e-6)
            foot = r_out[:, :max(1, length // 16)].mean(-1)
            res = torch.cat([vol, clay, com, foot, foot / com.clamp_min(1e-3), wall.amin(-1),
                             torch.sigmoid(x[:, 2]).mean(-1)])
        res.tolist()
        del form, body, null, cf, cb, asp, x, r_out, wall, r_in, vol, clay, z, com, foot, res

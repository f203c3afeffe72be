"""The eightieth batch of held-out workloads for record.py, second half (the first is batch80.py): aerospace and
aviation, written in torch alone. Air-traffic delay forecasting over an airport network (a DCRNN-style
encoder-decoder of diffusion-convolution GRU cells over a route graph, history windows of drawn lengths, scheduled
sampling in the decoder, a masked MAE over the observed airports), satellite image super-resolution by a conditional
diffusion model (an SR3-style U-Net over multispectral tiles at drawn resolutions, the upsampled low-resolution tile
concatenated, nodata pixels masked, DDIM sampling at evaluation points), a quadrotor gate-racing guidance policy
trained by PPO in a vectorised flight simulation written in tensors (rate-controlled rigid-body dynamics, wind gusts,
resets by torch.where, rollouts of drawn lengths, GAE) and an aerial aircraft detection service (uint8 airport tiles
uploaded on a side stream, a CenterNet-style network with oriented boxes, peak extraction by max pooling and top-k
decoding). Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or, for
the detection service, from two reused pinned host buffers), `rng` the workload's random.Random for every shape,
count and sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow
reads a tensor's value: batch sizes, window lengths, resolutions, rollout lengths and tile counts are fixed on the
host, padding, missing observations, crashes and resets handled by masks multiplied in or by torch.where /
masked_fill, no boolean-mask indexing; losses, metrics, returns and detections are read back only at logging points.
aerial_aircraft_detect_serve uses a side stream (uploads waited on by event, the tensors record_stream'ed); the others
are single-stream. The networks run under bf16 autocast, and the one that calls scaled_dot_product_attention (the
diffusion U-Net) runs under sdpa_kernel restricted to the flash, memory-efficient and math backends (never cuDNN's).

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new80.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and for
which of them the CPU smoke run (RECORD_SMOKE=1) ran.
"""

import math

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

from batch_common import Batch
from workload_helpers import SideUploads, _sincos, mlp, randint

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn
_BACKENDS = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]


# ---------------------------------------------------------------- airport delay forecasting (DCRNN-style)


class _DCGRUCell(_nn.Module):
    """A GRU cell whose gates are diffusion convolutions over forward and backward random-walk supports."""

    def __init__(self, din, hidden, order):
        super().__init__()
        self.order = order
        terms = 1 + 2 * order
        self.gates = _nn.Linear(terms * (din + hidden), 2 * hidden)
        self.cand = _nn.Linear(terms * (din + hidden), hidden)

    def _diffuse(self, x, supports):
        out = [x]
        for p in supports:
            y = x
            for _ in range(self.order):
                y = p @ y
                out.append(y)
        return torch.cat(out, -1)

    def forward(self, x, h, supports):
        r, u = torch.sigmoid(self.gates(self._diffuse(torch.cat([x, h], -1), supports))).chunk(2, -1)
        c = torch.tanh(self.cand(self._diffuse(torch.cat([x, r * h], -1), supports)))
        return u * h + (1 - u) * c


class _DCRNN(_nn.Module):
    def __init__(self, din, dout, hidden, layers, order):
        super().__init__()
        self.hidden, self.dout = hidden, dout
        self.enc = _nn.ModuleList(_DCGRUCell(din if i == 0 else hidden, hidden, order) for i in range(layers))
        self.dec = _nn.ModuleList(_DCGRUCell(dout + 2 if i == 0 else hidden, hidden, order) for i in range(layers))
        self.out = _nn.Linear(hidden, dout)

    def forward(self, x, supports, fut_tod, teacher, use_teacher):
        """x (B, T, N, F); fut_tod (B, H, N, 2); teacher (B, H, N, dout); use_teacher a list of H host booleans."""
        b, t, n, _ = x.shape
        hs = [torch.zeros(b, n, self.hidden, device=x.device, dtype=x.dtype) for _ in self.enc]
        for i in range(t):
            inp = x[:, i]
            for j, cell in enumerate(self.enc):
                hs[j] = cell(inp, hs[j], supports)
                inp = hs[j]
        prev = x[:, -1, :, :self.dout]
        preds = []
        for i, tf in enumerate(use_teacher):
            inp = torch.cat([prev, fut_tod[:, i]], -1)
            for j, cell in enumerate(self.dec):
                hs[j] = cell(inp, hs[j], supports)
                inp = hs[j]
            y = self.out(inp)
            preds.append(y)
            prev = teacher[:, i].to(y.dtype) if tf else y
        return torch.stack(preds, 1).float()


@_workload("air-traffic delay forecasting training over an airport network (random init, DCRNN-style): 320 airports joined by a drawn route graph (hub-weighted, forward and backward random-walk supports), a simulated 90-day hourly series per airport of departure delay, arrival delay and movements (daily cycles, weather shocks spread over the routes), 16-32 windows a step (drawn, a multiple of 8) of 12-24 past hours (drawn per step) with time-of-day features and a 12-hour horizon; an encoder-decoder of two-layer diffusion-convolution GRU cells (hidden 64, diffusion order 2 each way) unrolled over the hours, scheduled sampling in the decoder (teacher forcing drawn per horizon step with a decaying probability); a masked MAE over the observed airport-hours (about 8% missing, masked by multiplication); Adam with step decay, clipping, bf16 autocast, 66 steps; the loss read back every 5 steps and every 22 steps an evaluation of 2 x 32 windows with MAE, RMSE and masked MAPE at 3, 6 and 12 hours read back")
def airport_delay_graph_forecast_train(rng):
    n, hidden, order, horizon = _smoke(320, 10), _smoke(64, 8), 2, _smoke(12, 3)
    hours = _smoke(90 * 24, 120)
    w = torch.rand(n, n, device="cuda") * (torch.rand(n, n, device="cuda") < 0.04).float()
    hub = (torch.arange(n, device="cuda").float() + 5).pow(-0.6)
    adj = w * (hub[:, None] + hub[None]) * n ** 0.6 + torch.eye(n, device="cuda")
    supports = [adj / adj.sum(1, keepdim=True), adj.T / adj.T.sum(1, keepdim=True)]
    hr = torch.arange(hours, device="cuda").float()
    tod = torch.stack([torch.sin(2 * math.pi * hr / 24), torch.cos(2 * math.pi * hr / 24)], -1)  # (L, 2)
    base = torch.rand(n, device="cuda") * 10
    shocks = (torch.rand(hours, n, device="cuda") < 0.01).float() * torch.rand(hours, n, device="cuda") * 60
    shocks = _F.avg_pool1d(shocks.T[None], 7, 1, 3)[0].T
    shocks = shocks + 0.5 * shocks @ supports[1].T
    cycle = (1 + tod[:, :1]) * 0.5 * hub[None] * 20
    dep = base[None] + cycle + shocks + torch.randn(hours, n, device="cuda")
    arr = 0.8 * dep + 0.2 * torch.roll(dep, 2, 0) + torch.randn(hours, n, device="cuda")
    mov = hub[None] * 50 * (1 + tod[:, :1]) + torch.randn(hours, n, device="cuda")
    series = torch.stack([dep, arr, mov], -1)
    mean, std = series.mean((0, 1)), series.std((0, 1))
    series = (series - mean) / std
    observed = (torch.rand(hours, n, device="cuda") > 0.08).float()
    del w, adj, hr, shocks, cycle, dep, arr, mov
    model = _DCRNN(5, 3, hidden, 2, order).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2 * 0.3, eps=1e-3)

    def windows(b, t):
        start = torch.randint(0, hours - t - horizon, (b, 1), device="cuda")
        idx = start + torch.arange(t + horizon, device="cuda")[None]
        s, td, ob = series[idx], tod[idx][:, :, None].expand(-1, -1, n, -1), observed[idx]
        x = torch.cat([s[:, :t] * ob[:, :t, :, None], td[:, :t]], -1)
        return x, td[:, t:], s[:, t:], ob[:, t:]

    def masked_mae(pred, y, ob):
        return ((pred - y).abs() * ob[..., None]).sum() / (ob.sum() * 3).clamp(min=1)

    steps = _smoke(66, 3)
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = 3e-3 * (0.3 ** (step // max(1, steps // 3)))
        model.train()
        b = randint(rng, _smoke(16, 2), _smoke(32, 4), _smoke(8, 2))
        t = rng.randint(_smoke(12, 3), _smoke(24, 5))
        p_teacher = 1.0 / (1.0 + math.exp((step - steps / 2) / (steps / 10)))
        use_teacher = [rng.random() < p_teacher for _ in range(horizon)]
        x, ftod, y, ob = windows(b, t)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(x, supports, ftod, y, use_teacher)
        loss = masked_mae(pred, y, ob)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        if step % 5 == 0:
            loss.item()
        del x, ftod, y, ob, pred, loss
        if (step + 1) % _smoke(22, 2) == 0:
            model.eval()
            sums = []
            with torch.no_grad():
                for _ in range(_smoke(2, 1)):
                    x, ftod, y, ob = windows(_smoke(32, 2), _smoke(24, 5))
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        pred = model(x, supports, ftod, y, [False] * horizon)
                    pred, y = pred * std + mean, y * std + mean
                    at = [min(h, horizon) - 1 for h in (3, 6, 12)]
                    e = (pred - y)[:, at] * ob[:, at, :, None]
                    mape = (e.abs() / y[:, at].abs().clamp(min=1.0)).sum((0, 2, 3))
                    sums.append(torch.stack([e.abs().sum((0, 2, 3)), e.pow(2).sum((0, 2, 3)), mape,
                                             ob[:, at].sum((0, 2)) * 3]))
                    del x, ftod, y, ob, pred, e, mape
                tot = torch.stack(sums).sum(0)
                cnt = tot[3].clamp(min=1)
                metrics = torch.stack([tot[0] / cnt, (tot[1] / cnt).sqrt(), tot[2] / cnt])
            metrics.tolist()
            del sums, tot, cnt, metrics


# ---------------------------------------------------------------- satellite image super-resolution diffusion


class _ResBlock(_nn.Module):
    def __init__(self, cin, cout, temb):
        super().__init__()
        self.n1, self.c1 = _nn.GroupNorm(8, cin), _nn.Conv2d(cin, cout, 3, padding=1)
        self.t = _nn.Linear(temb, cout)
        self.n2, self.c2 = _nn.GroupNorm(8, cout), _nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = _nn.Conv2d(cin, cout, 1) if cin != cout else None

    def forward(self, x, te):
        h = self.c1(_F.silu(self.n1(x))) + self.t(te)[:, :, None, None]
        h = self.c2(_F.dropout(_F.silu(self.n2(h)), 0.1, self.training))
        return h + (x if self.skip is None else self.skip(x))


class _AttnBlock(_nn.Module):
    def __init__(self, c, heads):
        super().__init__()
        self.h = heads
        self.norm, self.qkv, self.proj = _nn.GroupNorm(8, c), _nn.Conv2d(c, 3 * c, 1), _nn.Conv2d(c, c, 1)

    def forward(self, x):
        b, c, hh, ww = x.shape
        q, k, v = self.qkv(self.norm(x)).view(b, 3, self.h, c // self.h, hh * ww).transpose(-1, -2).unbind(1)
        a = _F.scaled_dot_product_attention(q, k, v)
        return x + self.proj(a.transpose(-1, -2).reshape(b, c, hh, ww))


class _SRUNet(_nn.Module):
    def __init__(self, bands, base, mults, heads):
        super().__init__()
        temb = 4 * base
        self.base = base
        self.temb = mlp(base, temb, temb, layers=2, act=_nn.SiLU)
        self.inp = _nn.Conv2d(2 * bands, base, 3, padding=1)
        self.down, self.downsample = _nn.ModuleList(), _nn.ModuleList()
        chans, c = [base], base
        for i, m in enumerate(mults):
            blocks = _nn.ModuleList()
            for _ in range(2):
                blocks.append(_ResBlock(c, base * m, temb))
                c = base * m
                chans.append(c)
            self.down.append(blocks)
            self.downsample.append(_nn.Conv2d(c, c, 3, 2, 1) if i < len(mults) - 1 else _nn.Identity())
            if i < len(mults) - 1:
                chans.append(c)
        self.mid1, self.mid_attn, self.mid2 = _ResBlock(c, c, temb), _AttnBlock(c, heads), _ResBlock(c, c, temb)
        self.up, self.upsample = _nn.ModuleList(), _nn.ModuleList()
        for i, m in reversed(list(enumerate(mults))):
            blocks = _nn.ModuleList()
            for _ in range(3):
                blocks.append(_ResBlock(c + chans.pop(), base * m, temb))
                c = base * m
            self.up.append(blocks)
            self.upsample.append(_nn.Conv2d(c, c, 3, padding=1) if i > 0 else _nn.Identity())
        self.low_attn = _AttnBlock(base * mults[-1], heads)
        self.out = _nn.Sequential(_nn.GroupNorm(8, c), _nn.SiLU(), _nn.Conv2d(c, bands, 3, padding=1))

    def forward(self, x, cond, t):
        te = self.temb(_sincos(t * 1000, self.base))
        h = self.inp(torch.cat([x, cond], 1))
        skips = [h]
        for i, (blocks, ds) in enumerate(zip(self.down, self.downsample)):
            for blk in blocks:
                h = blk(h, te)
                skips.append(h)
            if i < len(self.down) - 1:
                h = ds(h)
                skips.append(h)
        h = self.mid2(self.mid_attn(self.mid1(h, te)), te)
        for i, (blocks, us) in enumerate(zip(self.up, self.upsample)):
            for blk in blocks:
                h = blk(torch.cat([h, skips.pop()], 1), te)
            if i == 0:
                h = self.low_attn(h)
            if i < len(self.up) - 1:
                h = us(_F.interpolate(h, scale_factor=2.0, mode="nearest"))
        return self.out(h)


@_workload("satellite image super-resolution by a conditional diffusion model training (random init, SR3-style, 4 spectral bands RGB and near-infrared): 4x super-resolution of tiles at 64, 96 or 128 pixels (drawn per step) in batches of 24, 12 or 8 (by resolution), the low-resolution tile made on the device by area downsampling and bicubic upsampling and concatenated to the noisy tile; a U-Net (base 64 channels, multipliers 1, 2, 4, two residual blocks a level down and three up with GroupNorm, SiLU, dropout and timestep embeddings, self-attention with 4 heads at the lowest resolution); a cosine noise schedule with timesteps drawn per tile, epsilon prediction, a loss over valid pixels only (nodata swaths and cloud masks drawn and multiplied in); AdamW with warmup, clipping, an EMA of the weights, bf16 autocast, 195 steps; the loss read back every 10 steps and every 65 steps 4 tiles at 64 pixels super-resolved by 10 DDIM steps with the EMA weights and PSNR against the reference read back")
def sat_image_sr_diffusion_train(rng):
    with sdpa_kernel(_BACKENDS):
        _sr_diffusion(rng)


def _sr_diffusion(rng):
    bands, base = 4, _smoke(64, 8)
    model = _SRUNet(bands, base, (1, 2, 4), _smoke(4, 2)).cuda().to(memory_format=torch.channels_last)
    ema = [p.detach().clone() for p in model.parameters()]
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.0)
    res_batch = _smoke({64: 24, 96: 12, 128: 8}, {16: 2, 32: 1})

    def alpha_bar(t):
        return torch.cos((t + 0.008) / 1.008 * math.pi / 2).pow(2).clamp(1e-5, 1.0)

    def tiles(b, r):
        yy = torch.linspace(0, 1, r, device="cuda")
        f = torch.rand(b, bands, 1, 1, 3, device="cuda") * 20 + 2
        hr = (torch.sin(f[..., 0] * yy[:, None] + f[..., 1] * yy[None]) * torch.cos(f[..., 2] * yy[None])
              + 0.3 * torch.randn(b, bands, r, r, device="cuda")).tanh()
        lr = _F.avg_pool2d(hr, 4)
        cond = _F.interpolate(lr, scale_factor=4.0, mode="bicubic", align_corners=False)
        col = torch.arange(r, device="cuda").float()[None, None, None]
        edge = torch.rand(b, 1, 1, 1, device="cuda") * r * 1.5
        valid = (col < edge).float() * (torch.rand(b, 1, r // 8, r // 8, device="cuda") > 0.1).float() \
            .repeat_interleave(8, 2).repeat_interleave(8, 3)
        return hr.contiguous(memory_format=torch.channels_last), cond.contiguous(memory_format=torch.channels_last), valid

    steps = _smoke(195, 3)
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = 1e-4 * min(1.0, (step + 1) / 20)
        model.train()
        r = rng.choice(sorted(res_batch))
        b = res_batch[r]
        hr, cond, valid = tiles(b, r)
        t = torch.rand(b, device="cuda")
        ab = alpha_bar(t)[:, None, None, None]
        noise = torch.randn_like(hr)
        xt = ab.sqrt() * hr + (1 - ab).sqrt() * noise
        with torch.autocast("cuda", dtype=torch.bfloat16):
            eps = model(xt, cond, t).float()
        loss = ((eps - noise).pow(2) * valid).sum() / (valid.sum() * bands).clamp(min=1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        with torch.no_grad():
            torch._foreach_lerp_(ema, [p.detach() for p in model.parameters()], 0.001)
        if step % 10 == 0:
            loss.item()
        del hr, cond, valid, t, ab, noise, xt, eps, loss
        if (step + 1) % _smoke(65, 2) == 0:
            model.eval()
            live = [p.detach().clone() for p in model.parameters()]
            with torch.no_grad():
                for p, e in zip(model.parameters(), ema):
                    p.copy_(e)
                r = min(res_batch)
                hr, cond, _ = tiles(_smoke(4, 1), r)
                x = torch.randn_like(hr)
                ts = torch.linspace(1, 0, _smoke(10, 2) + 1, device="cuda")
                for i in range(_smoke(10, 2)):
                    a_t, a_s = alpha_bar(ts[i]), alpha_bar(ts[i + 1])
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        eps = model(x, cond, ts[i].expand(x.shape[0])).float()
                    x0 = ((x - (1 - a_t).sqrt() * eps) / a_t.sqrt()).clamp(-1, 1)
                    x = a_s.sqrt() * x0 + (1 - a_s).sqrt() * eps
                    del a_t, a_s, eps, x0
                mse = (x - hr).pow(2).mean((1, 2, 3))
                psnr = 10 * torch.log10(4.0 / mse.clamp(min=1e-8))
                for p, keep in zip(model.parameters(), live):
                    p.copy_(keep)
            psnr.tolist()
            del live, hr, cond, x, ts, mse, psnr


# ---------------------------------------------------------------- quadrotor gate-racing PPO in a tensor simulation


class _ActorCritic(_nn.Module):
    def __init__(self, obs, act, hidden):
        super().__init__()
        self.pi = mlp(obs, hidden, act, layers=3, act=_nn.Tanh)
        self.v = mlp(obs, hidden, 1, layers=3, act=_nn.Tanh)
        self.log_std = _nn.Parameter(torch.full((act,), -0.5))

    def forward(self, o):
        return self.pi(o), self.log_std.expand(o.shape[0], -1), self.v(o)[:, 0]


def _rotation(euler):
    """Body-to-world rotation matrices (E, 3, 3) from roll, pitch, yaw (E, 3)."""
    c, s = euler.cos(), euler.sin()
    cr, cp, cy, sr, sp, sy = c[:, 0], c[:, 1], c[:, 2], s[:, 0], s[:, 1], s[:, 2]
    return torch.stack([
        torch.stack([cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr], -1),
        torch.stack([sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr], -1),
        torch.stack([-sp, cp * sr, cp * cr], -1)], -2)


@_workload("quadrotor gate-racing guidance policy trained by PPO in a vectorised flight simulation written in tensors (random init): 8,192, 12,288 or 16,384 simulated quadrotors (drawn once) with rate-controlled rigid-body dynamics (collective thrust and body-rate commands, first-order motor lag, rotation matrices from Euler angles, quadratic drag, gravity, an Ornstein-Uhlenbeck wind gust per vehicle) integrated at 50 Hz, gates drawn on a circuit, a reward of progress toward the next gate minus rate and crash penalties, gate passes advancing the target by torch.where, crashes, fly-aways and time limits resetting vehicles by torch.where; 19 iterations of a rollout of 48-96 steps (drawn per iteration, a multiple of 16) with a Gaussian tanh-MLP actor and a critic (2 x 128 hidden), GAE (gamma 0.99, lambda 0.95) computed backwards over the rollout, then 4 epochs x 4 minibatches of clipped-surrogate PPO with value and entropy terms, Adam, clipping; each iteration's mean reward, gate passes, crash rate and losses read back")
def quadrotor_gate_ppo_sim(rng):
    n_env = _smoke(rng.choice([8192, 12288, 16384]), 32)
    obs_dim, act_dim, hidden = 18, 4, _smoke(128, 16)
    dt, g, mass = 0.02, 9.81, 0.8
    model = _ActorCritic(obs_dim, act_dim, hidden).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=3e-4, eps=1e-5)
    n_gates = 8
    ang = torch.arange(n_gates, device="cuda").float() * 2 * math.pi / n_gates
    gates = torch.stack([6 * ang.cos(), 4 * ang.sin(), 1.5 + 0.5 * (2 * ang).sin()], -1)
    gdir = torch.roll(gates, -1, 0) - gates
    gdir = gdir / gdir.norm(dim=-1, keepdim=True)

    def spawn(e):
        return (torch.randn(e, 3, device="cuda") * 0.3 + gates[-1], torch.zeros(e, 3, device="cuda"),
                torch.randn(e, 3, device="cuda") * 0.05, torch.zeros(e, 3, device="cuda"),
                torch.zeros(e, device="cuda", dtype=torch.long), torch.zeros(e, device="cuda"))

    pos, vel, att, rate, target, clock = spawn(n_env)
    wind = torch.zeros(n_env, 3, device="cuda")
    thrust = torch.full((n_env,), mass * g, device="cuda")

    def observe():
        rel = gates[target] - pos
        nxt = gates[(target + 1) % n_gates] - pos
        return torch.cat([rel, nxt, vel, att.sin(), att.cos()[:, :2], rate, clock[:, None] / 500], -1)

    iters = _smoke(19, 2)
    for it in range(iters):
        horizon = randint(rng, _smoke(48, 4), _smoke(96, 8), _smoke(16, 4))
        obs_b, act_b, logp_b, val_b, rew_b, done_b = [], [], [], [], [], []
        passes = torch.zeros((), device="cuda")
        crashes = torch.zeros((), device="cuda")
        with torch.no_grad():
            for _ in range(horizon):
                o = observe()
                mu, log_std, v = model(o)
                a = mu + log_std.exp() * torch.randn_like(mu)
                logp = (-0.5 * ((a - mu) / log_std.exp()).pow(2) - log_std - 0.5 * math.log(2 * math.pi)).sum(-1)
                cmd = torch.tanh(a)
                thrust = thrust + (mass * g * (1 + cmd[:, 0]) - thrust) * (dt / 0.05)
                rate = rate + (cmd[:, 1:] * 6 - rate) * (dt / 0.03)
                att = att + rate * dt
                rot = _rotation(att)
                wind = wind - 0.5 * wind * dt + torch.randn_like(wind) * (0.8 * math.sqrt(dt))
                air = vel - wind
                acc = rot[:, :, 2] * (thrust / mass)[:, None] - torch.tensor([0.0, 0.0, g], device="cuda") \
                    - 0.1 * air * air.norm(dim=-1, keepdim=True)
                prev_d = (gates[target] - pos).norm(dim=-1)
                vel = vel + acc * dt
                pos = pos + vel * dt
                d = (gates[target] - pos).norm(dim=-1)
                through = ((d < 0.5) & (((pos - gates[target]) * gdir[target]).sum(-1) > 0)).float()
                target = torch.where(through > 0, (target + 1) % n_gates, target)
                clock = clock + 1
                crash = ((pos[:, 2] < 0) | (d > 12) | (att[:, :2].abs() > 1.4).any(-1)).float()
                timeout = (clock >= 500).float()
                r = (prev_d - d) * 5 + through * 10 - 0.01 * rate.pow(2).sum(-1) - crash * 10
                done = torch.maximum(crash, timeout)
                obs_b.append(o)
                act_b.append(a)
                logp_b.append(logp)
                val_b.append(v)
                rew_b.append(r)
                done_b.append(done)
                passes = passes + through.sum()
                crashes = crashes + crash.sum()
                n_pos, n_vel, n_att, n_rate, n_tgt, n_clk = spawn(n_env)
                keep = (done == 0)[:, None]
                pos, vel = torch.where(keep, pos, n_pos), torch.where(keep, vel, n_vel)
                att, rate = torch.where(keep, att, n_att), torch.where(keep, rate, n_rate)
                target = torch.where(done == 0, target, n_tgt)
                clock = torch.where(done == 0, clock, n_clk)
                thrust = torch.where(done == 0, thrust, torch.full_like(thrust, mass * g))
                del o, mu, log_std, v, a, logp, cmd, rot, air, acc, prev_d, d, through, crash, timeout, r, done
                del n_pos, n_vel, n_att, n_rate, n_tgt, n_clk, keep
            _, _, last_v = model(observe())
            adv = torch.zeros(horizon, n_env, device="cuda")
            gae = torch.zeros(n_env, device="cuda")
            for t in reversed(range(horizon)):
                nv = last_v if t == horizon - 1 else val_b[t + 1]
                nd = 1 - done_b[t]
                delta = rew_b[t] + 0.99 * nv * nd - val_b[t]
                gae = delta + 0.99 * 0.95 * nd * gae
                adv[t] = gae
            obs, act, old_logp = torch.cat(obs_b), torch.cat(act_b), torch.cat(logp_b)
            ret = adv.flatten() + torch.cat(val_b)
            adv = adv.flatten()
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        total = obs.shape[0]
        mb = total // 4
        stats = []
        for epoch in range(4):
            perm = torch.randperm(total, device="cuda")
            for k in range(4):
                idx = perm[k * mb:(k + 1) * mb]
                mu, log_std, v = model(obs[idx])
                lp = (-0.5 * ((act[idx] - mu) / log_std.exp()).pow(2) - log_std - 0.5 * math.log(2 * math.pi)).sum(-1)
                ratio = (lp - old_logp[idx]).exp()
                a_mb = adv[idx]
                pg = -torch.minimum(ratio * a_mb, ratio.clamp(0.8, 1.2) * a_mb).mean()
                vl = 0.5 * (v - ret[idx]).pow(2).mean()
                ent = (log_std + 0.5 * math.log(2 * math.pi * math.e)).sum(-1).mean()
                loss = pg + 0.5 * vl - 0.001 * ent
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
                opt.step()
                if k == 3 and epoch == 3:
                    stats = [pg.detach(), vl.detach()]
                del idx, mu, log_std, v, lp, ratio, a_mb, pg, vl, ent, loss
            del perm
        report = torch.stack([torch.stack(rew_b).mean(), passes / n_env, crashes / (n_env * horizon), *stats])
        report.tolist()
        del obs_b, act_b, logp_b, val_b, rew_b, done_b, obs, act, old_logp, ret, adv, gae, last_v, report, stats


# ---------------------------------------------------------------- aerial aircraft detection service


class _Block(_nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1, self.b1 = _nn.Conv2d(cin, cout, 3, stride, 1, bias=False), _nn.BatchNorm2d(cout)
        self.c2, self.b2 = _nn.Conv2d(cout, cout, 3, 1, 1, bias=False), _nn.BatchNorm2d(cout)
        self.short = None
        if stride != 1 or cin != cout:
            self.short = _nn.Sequential(_nn.Conv2d(cin, cout, 1, stride, bias=False), _nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.b2(self.c2(_F.relu(self.b1(self.c1(x)))))
        return _F.relu(y + (x if self.short is None else self.short(x)))


class _CenterNet(_nn.Module):
    """A ResNet-style trunk, a feature-pyramid neck merged at stride 4, heatmap, size, offset and angle heads."""

    def __init__(self, widths, neck, classes):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, widths[0], 7, 2, 3, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU(), _nn.MaxPool2d(3, 2, 1))
        self.stages, cin = _nn.ModuleList(), widths[0]
        for i, w in enumerate(widths):
            self.stages.append(_nn.Sequential(_Block(cin, w, 1 if i == 0 else 2), _Block(w, w, 1)))
            cin = w
        self.lat = _nn.ModuleList(_nn.Conv2d(w, neck, 1) for w in widths)
        self.smooth = _nn.Sequential(_nn.Conv2d(neck, neck, 3, padding=1), _nn.BatchNorm2d(neck), _nn.ReLU())

        def head(n):
            return _nn.Sequential(_nn.Conv2d(neck, neck, 3, padding=1), _nn.ReLU(), _nn.Conv2d(neck, n, 1))

        self.heat, self.size, self.off, self.angle = head(classes), head(2), head(2), head(2)

    def forward(self, x):
        feats, h = [], self.stem(x)
        for st in self.stages:
            h = st(h)
            feats.append(h)
        p = self.lat[-1](feats[-1])
        for lat, f in zip(reversed(self.lat[:-1]), reversed(feats[:-1])):
            p = lat(f) + _F.interpolate(p, size=f.shape[-2:], mode="nearest")
        p = self.smooth(p)
        return self.heat(p).float(), self.size(p).float(), self.off(p).float(), self.angle(p).float()


@_workload("aerial aircraft detection service over airport imagery (random init, CenterNet-style with oriented boxes): 1,580-1,680 requests (drawn) of 1-16 image tiles (log-uniform) at 256, 320, 384 or 512 pixels (drawn), the uint8 pixels of each request uploaded on a side stream from two reused pinned host buffers one request ahead (waited on by event, record_stream'ed); normalisation on the device, a ResNet-18-style trunk (channels_last, bf16 autocast, eval-mode batch norm), a feature-pyramid neck merged at stride 4 (128 channels), heads for 5 aircraft classes (airliner, business jet, turboprop, helicopter, military), box size, sub-pixel offset and heading (sine and cosine); peaks by 3x3 max pooling and an equality mask multiplied in, the top 100 peaks per tile by topk over classes and pixels, sizes, offsets and headings gathered, a 0.3 score threshold multiplied in and per-class counts per tile by one-hot sums; each request's oriented boxes, scores, classes and counts read back")
def aerial_aircraft_detect_serve(rng):
    widths, neck, classes, k = _smoke([64, 128, 256, 512], [8, 8, 16, 16]), _smoke(128, 8), 5, _smoke(100, 10)
    model = _CenterNet(widths, neck, classes).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    mean = torch.tensor([0.40, 0.42, 0.39], device="cuda").view(1, 3, 1, 1) * 255
    std = torch.tensor([0.20, 0.19, 0.19], device="cuda").view(1, 3, 1, 1) * 255
    maxb, resolutions = _smoke(16, 3), _smoke([256, 320, 384, 512], [32, 64])
    maxr = max(resolutions)
    host = [torch.randint(0, 256, (maxb * 3 * maxr * maxr,), dtype=torch.uint8).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    nreq = rng.randint(_smoke(1580, 3), _smoke(1680, 4))
    plan = [(_loguniform(rng, 1, maxb), rng.choice(resolutions)) for _ in range(nreq)]

    def span(i):
        b, r = plan[i]
        return slice(0, b * 3 * r * r)

    nxt = up.upload(0, span(0))
    for i in range(nreq):
        b, r = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, span(i + 1))
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            x = ((raw.view(b, 3, r, r).float() - mean) / std).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                heat, size, off, angle = model(x)
            heat = torch.sigmoid(heat)
            peak = heat * (_F.max_pool2d(heat, 3, 1, 1) == heat).float()
            hh, ww = heat.shape[-2:]
            score, idx = peak.flatten(1).topk(k, -1)
            cls, pix = idx // (hh * ww), idx % (hh * ww)
            ys, xs = (pix // ww).float(), (pix % ww).float()
            gather = pix[:, None].expand(-1, 2, -1)
            sz = size.flatten(2).gather(2, gather).exp() * 4
            of = off.flatten(2).gather(2, gather).sigmoid()
            an = angle.flatten(2).gather(2, gather)
            heading = torch.atan2(an[:, 0], an[:, 1])
            keep = (score > 0.3).float()
            boxes = torch.stack([(xs + of[:, 0]) * 4, (ys + of[:, 1]) * 4, sz[:, 0], sz[:, 1], heading,
                                 score * keep, cls.float()], -1)
            counts = (_F.one_hot(cls, classes).float() * keep[..., None]).sum(1)
            out = torch.cat([boxes.flatten(1), counts], -1)
        out.tolist()
        del item, raw, x, heat, size, off, angle, peak, score, idx, cls, pix, ys, xs, gather, sz, of, an, heading
        del keep, boxes, counts, out

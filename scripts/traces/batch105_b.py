"""The hundred-and-fifth batch of held-out workloads for record.py, second half (the first is batch105.py): mining,
metals and heavy industry, written in torch alone. Blast-furnace surrogate training (a two-layer GRU written out step
by step over plant histories of drawn lengths, then rolled out over a drawn horizon with its predictions fed back), a
grinding-mill setpoint sampling service (a transformer DDPM denoiser over control trajectories of drawn horizons,
DDIM sampling with classifier-free guidance, a critic picking the best candidate per plant), a drill-core
hyperspectral mineral-mapping service (a spectral-then-spatial convnet over core-tray scans of drawn sizes, per-
interval mineral abundances) and electric-arc-furnace fine-tuning (a dilated causal temporal convnet with a frozen
lower half over heats of drawn lengths, melt-phase, tap-temperature and end-point-carbon heads). Same conventions as
the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned host buffers for the
service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths and
batch sizes are fixed on the host, padding handled by masks or torch.where / masked_fill, no boolean-mask indexing;
losses and metrics are read back only at logging points or once per request. drill_core_hyperspectral_infer uploads
its scans on a side stream (workload_helpers.SideUploads, one request ahead); the other three are single-stream.
The models run under bf16 autocast. The diffusion denoiser's position table is sized for the longest horizon.

record.py calls `register(<its own module object>)` once, just before main(), after batch105.py's. This file never
imports record.py; the plumbing is batch_common.py's. Real sizes checked before recording: see record_new105.sh.
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


# ---------------------------------------------------------------- blast-furnace surrogate (GRU written out)


def _gru_cell(gi, h, hidden_lin):
    """One GRU update from the input's precomputed gates gi (B, 3H) and the state h (B, H)."""
    ir, iz, inn = gi.chunk(3, -1)
    hr, hz, hn = hidden_lin(h).chunk(3, -1)
    r = torch.sigmoid(ir + hr)
    z = torch.sigmoid(iz + hz)
    n = torch.tanh(inn + r * hn)
    return n + z * (h - n)


class _FurnaceGRU(_nn.Module):
    def __init__(self, n_sensor, n_ctrl, n_out, hidden, layers):
        super().__init__()
        self.hidden = hidden
        ins = [n_sensor + n_ctrl] + [hidden] * (layers - 1)
        self.enc_in = _nn.ModuleList(_nn.Linear(i, 3 * hidden) for i in ins)
        self.enc_h = _nn.ModuleList(_nn.Linear(hidden, 3 * hidden) for _ in ins)
        dins = [n_ctrl + n_out] + [hidden] * (layers - 1)
        self.dec_in = _nn.ModuleList(_nn.Linear(i, 3 * hidden) for i in dins)
        self.dec_h = _nn.ModuleList(_nn.Linear(hidden, 3 * hidden) for _ in dins)
        self.head = mlp(hidden, hidden, n_out, act=_nn.SiLU)

    def encode(self, x, valid):
        """x (B, T, F), valid (B, T) bool (histories right-aligned): layer by layer, the state held where a
        position is padding; returns every position's top-layer output and each layer's final state."""
        b, t, _ = x.shape
        seq, finals = x, []
        for lin_i, lin_h in zip(self.enc_in, self.enc_h):
            gi = lin_i(seq)  # the input gates of every position at once
            h = x.new_zeros(b, self.hidden, dtype=gi.dtype)
            outs = []
            for s in range(t):
                h = torch.where(valid[:, s, None], _gru_cell(gi[:, s], h, lin_h), h)
                outs.append(h)
            seq = torch.stack(outs, 1)
            finals.append(h)
        return seq, finals

    def rollout(self, states, ctrl, last):
        """Free-running over the horizon: each step's input is its control and the previous prediction."""
        states, prev, preds = list(states), last, []
        for s in range(ctrl.shape[1]):
            inp = torch.cat([ctrl[:, s], prev.to(ctrl.dtype)], -1)
            for i, (lin_i, lin_h) in enumerate(zip(self.dec_in, self.dec_h)):
                states[i] = _gru_cell(lin_i(inp), states[i], lin_h)
                inp = states[i]
            prev = self.head(inp)
            preds.append(prev)
        return torch.stack(preds, 1)


@_workload("blast-furnace surrogate training (random init, a 2-layer GRU of width 192 written out step by step): 16-64 furnace histories a step (drawn), a context of 24-72 hourly steps (drawn per step; each history's own length 12 to the context, drawn, right-aligned, the state held by torch.where over the padding) of 24 sensors and 6 controls, then a horizon of 6-18 steps (drawn) of the 6 controls; the encoder runs layer by layer (each layer's input gates for all steps by one linear layer, the recurrence by hand: sigmoid reset and update gates, tanh candidate), a separate 2-layer decoder GRU starts from the encoder's final states and rolls out free-running with its previous hot-metal temperature and silicon prediction fed back (the first from the encoder's last position), a 2-layer SiLU head; losses: horizon MSE on temperature (weight 1) and silicon (weight 2), and a one-step context MSE from the encoder outputs masked to the valid positions (weight 0.5), backpropagated through the whole sequence; AdamW, clipping, bf16 autocast, 60 steps; the losses read back every 10 steps and every 20 steps a no-grad 48-step rollout of 32 full-length histories of 72 steps with the per-step temperature RMSE read back")
def blast_furnace_gru_train(rng):
    n_sensor, n_ctrl, n_out = 24, 6, 2
    hidden, layers = _smoke(192, 16), 2
    model = _FurnaceGRU(n_sensor, n_ctrl, n_out, hidden, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    c_lo, c_hi, hz_lo, hz_hi = _smoke(24, 4), _smoke(72, 6), _smoke(6, 2), _smoke(18, 3)
    weights = torch.tensor([1.0, 2.0], device="cuda")

    def histories(b, t, lengths, horizon):
        valid = torch.arange(t, device="cuda")[None] >= (t - torch.tensor(lengths, device="cuda"))[:, None]
        x = torch.randn(b, t, n_sensor + n_ctrl, device="cuda").masked_fill(~valid[..., None], 0.0)
        y_ctx = torch.randn(b, t, n_out, device="cuda")
        ctrl = torch.randn(b, horizon, n_ctrl, device="cuda")
        y_hor = torch.randn(b, horizon, n_out, device="cuda").cumsum(1) * 0.1
        return x, valid, y_ctx, ctrl, y_hor

    steps, every = _smoke(60, 2), _smoke(20, 2)
    for step in range(steps):
        model.train()
        b, t, horizon = rng.randint(_smoke(16, 2), _smoke(64, 3)), rng.randint(c_lo, c_hi), rng.randint(hz_lo, hz_hi)
        lengths = [rng.randint(min(t, _smoke(12, 2)), t) for _ in range(b)]
        x, valid, y_ctx, ctrl, y_hor = histories(b, t, lengths, horizon)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            seq, finals = model.encode(x, valid)
            ctx_pred = model.head(seq).float()
            hor_pred = model.rollout(finals, ctrl, ctx_pred[:, -1]).float()
        l_h = ((hor_pred - y_hor).pow(2).mean((0, 1)) * weights).sum()
        v = valid[..., None].float()
        l_c = ((ctx_pred - y_ctx).pow(2) * v).sum() / (v.sum() * n_out)
        loss = l_h + 0.5 * l_c
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_h.detach(), l_c.detach()]).tolist()
        del x, valid, y_ctx, ctrl, y_hor, seq, finals, ctx_pred, hor_pred, l_h, v, l_c, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                nb, t = _smoke(32, 2), c_hi
                x, valid, _, ctrl, y_hor = histories(nb, t, [t] * nb, _smoke(48, 4))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    seq, finals = model.encode(x, valid)
                    hor_pred = model.rollout(finals, ctrl, model.head(seq[:, -1])).float()
                rmse = (hor_pred[..., 0] - y_hor[..., 0]).pow(2).mean(0).sqrt()
            rmse.tolist()
            del x, valid, ctrl, y_hor, seq, finals, hor_pred, rmse


# ---------------------------------------------------------------- grinding-mill setpoint diffusion (DDIM service)


class _SetpointDenoiser(_nn.Module):
    """A transformer over a control trajectory (one token per time step) with a leading condition token (the ore
    context and target throughput, or a learned null token) and the diffusion step's embedding added to all."""

    def __init__(self, n_ctrl, n_ctx, d, heads, layers, max_len):
        super().__init__()
        self.d = d
        self.inp, self.pos = _nn.Linear(n_ctrl, d), _nn.Embedding(max_len + 1, d)
        self.temb = mlp(d, 4 * d, d, act=_nn.SiLU)
        self.cond = mlp(n_ctx + 1, d, d, act=_nn.SiLU)
        self.null = _nn.Parameter(torch.zeros(d))
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm, self.out = _nn.LayerNorm(d), _nn.Linear(d, n_ctrl)

    def forward(self, x, t, ctx, use_cond):
        b, n, _ = x.shape
        te = self.temb(_sincos(t, self.d))
        c = torch.where(use_cond[:, None], self.cond(ctx), self.null[None].to(te.dtype))
        h = torch.cat([c[:, None], self.inp(x)], 1) + self.pos(torch.arange(n + 1, device=x.device))[None] + te[:, None]
        for blk in self.blocks:
            h = blk(h)
        return self.out(self.norm(h[:, 1:])).float()


@_workload("grinding-mill setpoint sampling service (random init, a transformer DDPM denoiser with classifier-free guidance): 76-80 requests (drawn), each for 1-4 mill circuits (drawn) with 4-16 candidate trajectories each (drawn), a horizon of 32-128 steps (drawn, a multiple of 8; position table of 129 rows) of 6 controls (feed rate, water addition, mill speed, cyclone pressure, pump speed, ball charge) and 10-25 DDIM steps (drawn, deterministic, over a 1,000-step cosine schedule computed on the host); condition: 8 steps of 16 ore and circuit measurements flattened and a target throughput, through an MLP into a leading token (a learned null token for the unconditioned half, the conditioned and unconditioned batches run as one), guidance scale 2.5; 6 pre-norm blocks of width 256 (8 heads), a sinusoidal step embedding through an MLP; a 3-layer critic MLP per step averaged over the horizon scoring throughput minus 0.3 x specific energy minus 5 x mill-load overshoot; the best candidate per circuit by argmax and index_select; bf16 autocast; each request's chosen trajectories' first 8 steps and their scores read back")
def mill_setpoint_diffusion_serve(rng):
    n_ctrl, n_ctx, d, heads, layers = 6, 8 * 16, _smoke(256, 32), _smoke(8, 2), _smoke(6, 1)
    max_len = _smoke(128, 16)
    model = _SetpointDenoiser(n_ctrl, n_ctx, d, heads, layers, max_len).cuda().eval()
    critic = mlp(n_ctrl + n_ctx + 1, _smoke(256, 16), 3, layers=3, act=_nn.SiLU).cuda().eval()
    model.requires_grad_(False)
    critic.requires_grad_(False)
    big_t = 1000
    abar = [math.cos((t / big_t + 0.008) / 1.008 * math.pi / 2) ** 2 for t in range(big_t)]
    guidance = 2.5
    nreq = rng.randint(_smoke(76, 2), _smoke(80, 3))
    for _ in range(nreq):
        circuits, cand = rng.randint(1, _smoke(4, 2)), rng.randint(_smoke(4, 2), _smoke(16, 3))
        horizon, n_steps = rng.randint(_smoke(32, 8) // 8, max_len // 8) * 8, rng.randint(_smoke(10, 2), _smoke(25, 3))
        ts = [int(big_t - 1 - i * (big_t - 1) / n_steps) for i in range(n_steps)] + [-1]
        b = circuits * cand
        with torch.no_grad():
            ctx = torch.cat([torch.randn(circuits, n_ctx, device="cuda"), torch.rand(circuits, 1, device="cuda")], 1)
            ctx = ctx.repeat_interleave(cand, 0)
            ctx2 = torch.cat([ctx, ctx])
            use = torch.cat([torch.ones(b, dtype=torch.bool, device="cuda"), torch.zeros(b, dtype=torch.bool,
                                                                                          device="cuda")])
            x = torch.randn(b, horizon, n_ctrl, device="cuda")
            for t, t_next in zip(ts[:-1], ts[1:]):
                a, a_next = abar[t], (abar[t_next] if t_next >= 0 else 1.0)
                tt = torch.full((2 * b,), t, device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    eps_c, eps_u = model(torch.cat([x, x]), tt, ctx2, use).chunk(2)
                eps = eps_u + guidance * (eps_c - eps_u)
                x0 = ((x - math.sqrt(1 - a) * eps) / math.sqrt(a)).clamp(-4, 4)
                x = math.sqrt(a_next) * x0 + math.sqrt(1 - a_next) * eps
            with torch.autocast("cuda", dtype=torch.bfloat16):
                crit = critic(torch.cat([x, ctx[:, None].expand(b, horizon, ctx.shape[1])], -1)).float().mean(1)
            score = crit[:, 0] - 0.3 * crit[:, 1] - 5.0 * _F.relu(crit[:, 2] - 1.0)
            best = score.view(circuits, cand).argmax(1)
            pick = best + torch.arange(circuits, device="cuda") * cand
            chosen = x.index_select(0, pick)[:, :8]
            out = torch.cat([chosen.flatten(), score.index_select(0, pick)])
        out.tolist()
        del ctx, ctx2, use, x, tt, eps_c, eps_u, eps, x0, crit, score, best, pick, chosen, out


# ---------------------------------------------------------------- drill-core hyperspectral mapping (side stream)


class _GNRes(_nn.Module):
    """Two 3x3 convolutions with group norm and GELU, a residual connection (1x1 strided projection when the shape
    changes)."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.a = _nn.Sequential(_nn.Conv2d(cin, cout, 3, stride, 1), _nn.GroupNorm(8, cout), _nn.GELU())
        self.b = _nn.Sequential(_nn.Conv2d(cout, cout, 3, 1, 1), _nn.GroupNorm(8, cout))
        self.skip = _nn.Conv2d(cin, cout, 1, stride) if stride != 1 or cin != cout else _nn.Identity()

    def forward(self, x):
        return _F.gelu(self.b(self.a(x)) + self.skip(x))


class _CoreNet(_nn.Module):
    def __init__(self, bands, spec, widths, n_min):
        super().__init__()
        self.spec = _nn.Sequential(_nn.Conv2d(bands, spec[0], 1), _nn.GELU(), _nn.Conv2d(spec[0], spec[1], 1),
                                   _nn.GELU())
        mods, c = [], spec[1]
        for w, s in widths:
            mods.append(_GNRes(c, w, s))
            c = w
        self.body = _nn.Sequential(*mods)
        self.cls, self.abund = _nn.Conv2d(c, n_min, 1), _nn.Conv2d(c, n_min, 1)

    def forward(self, x):
        h = self.body(self.spec(x))
        return self.cls(h).float(), _F.softplus(self.abund(h).float())


@_workload("drill-core hyperspectral mineral-mapping inference (random init, a spectral-then-spatial convnet over core-tray SWIR scans): 3,600-3,700 requests (drawn), each a tray of 1-4 core rows (drawn) of 64 px across and 512-1,536 px along (drawn per request, a multiple of 128) in 48 bands; 12-bit int16 radiance uploaded on a side stream from two reused pinned host buffers (filled once, sized for 4 rows x 48 bands x 64 x 1,536) one request ahead with workload_helpers.SideUploads.ahead (one span, waited on by event, record_stream'ed), scaled on the device and divided by each pixel's band maximum (a continuum-style normalisation); two 1x1 spectral convolutions (48 -> 128 -> 64, GELU), five group-norm residual blocks (64, 96 stride 2, 128, 160 stride 2, 160), under bf16 autocast, to 12 mineral logits and 12 softplus abundances at 1/4 resolution; per-interval (every 128 px along the core, adaptive average pooling) class probabilities weighted by abundance and normalised, the dominant mineral by argmax, a sulphide flag per interval by torch.where (the two sulphide classes' summed fraction above 0.25); each request's interval mineral fractions, dominant minerals and flags read back")
def drill_core_hyperspectral_infer(rng):
    bands, n_min = _smoke(48, 8), 12
    spec = _smoke([128, 64], [16, 8])
    widths = _smoke([(64, 1), (96, 2), (128, 1), (160, 2), (160, 1)], [(8, 2), (16, 2)])
    model = _CoreNet(bands, spec, widths, n_min).cuda().eval()
    model.requires_grad_(False)
    across, lo, hi, max_rows, interval = _smoke(64, 16), _smoke(512, 128), _smoke(1536, 256), _smoke(4, 2), 128
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 4096, (max_rows * bands * across * hi,), dtype=torch.int16, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    plan = [(rng.randint(1, max_rows), rng.randint(lo // 128, hi // 128) * 128)
            for _ in range(rng.randint(_smoke(3600, 3), _smoke(3700, 4)))]
    sulph = torch.zeros(n_min, device="cuda")
    sulph[:2] = 1.0

    for (rows, length), raw in up.ahead(plan, lambda p: (p[0] * bands * across * p[1],)):
        with torch.no_grad():
            x = raw.view(rows, bands, across, length).float() / 4095.0
            x = x / x.amax(1, keepdim=True).clamp(min=1e-3)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits, abund = model(x)
            frac = logits.softmax(1) * abund
            iv = _F.adaptive_avg_pool2d(frac, (1, length // interval))[:, :, 0]  # (rows, min, intervals)
            iv = iv / iv.sum(1, keepdim=True).clamp(min=1e-6)
            dom = iv.argmax(1)
            flag = torch.where((iv * sulph[None, :, None]).sum(1) > 0.25, 1.0, 0.0)
            out = torch.cat([iv.flatten(), dom.flatten().float(), flag.flatten()])
        out.tolist()
        del raw, x, logits, abund, frac, iv, dom, flag, out


# ---------------------------------------------------------------- electric-arc-furnace fine-tuning (dilated TCN)


class _CausalBlock(_nn.Module):
    """A dilated causal convolution (kernel 3, left padding), group norm, GELU, a 1x1 convolution, residual."""

    def __init__(self, c, dilation):
        super().__init__()
        self.pad = 2 * dilation
        self.conv = _nn.Conv1d(c, c, 3, dilation=dilation)
        self.norm = _nn.GroupNorm(8, c)
        self.mix = _nn.Conv1d(c, c, 1)

    def forward(self, x):
        return x + self.mix(_F.gelu(self.norm(self.conv(_F.pad(x, (self.pad, 0))))))


class _ArcTCN(_nn.Module):
    def __init__(self, n_in, c, blocks, n_phase):
        super().__init__()
        self.inp = _nn.Conv1d(n_in, c, 1)
        self.blocks = _nn.ModuleList(_CausalBlock(c, 2 ** i) for i in range(blocks))
        self.phase = _nn.Conv1d(c, n_phase, 1)
        self.tap = mlp(2 * c, c, 2, act=_nn.GELU)  # tap temperature and end-point carbon

    def features(self, x, frozen):
        h = self.inp(x)
        for blk in self.blocks[:frozen]:
            h = blk(h)
        return h

    def forward(self, h, frozen, keep, last):
        for blk in self.blocks[frozen:]:
            h = blk(h)
        w = keep[:, None].to(h.dtype)
        pooled = (h * w).sum(-1) / w.sum(-1).clamp(min=1)
        end = h.gather(2, last[:, None, None].expand(-1, h.shape[1], 1))[..., 0]
        return self.phase(h).float(), self.tap(torch.cat([pooled, end], -1)).float()


@_workload("electric-arc-furnace fine-tuning (random init standing in for a pre-trained dilated causal temporal convnet): 8-32 heats a step (drawn), each of 1,024-4,096 samples at 10 Hz (drawn per heat, padded to the step's longest rounded up to a multiple of 256, a mask) of 12 channels (three phase currents and voltages, active and reactive power, harmonic distortion, oxygen and carbon injection, off-gas temperature); a 1x1 input convolution to width 128 and 10 residual causal blocks (kernel 3, dilations 1-512, group norm, GELU, a 1x1 mix), the input layer and first 6 blocks frozen and run without gradients, the last 4 blocks and heads trained; a per-sample melt-phase head (4 phases, cross-entropy with padding ignored by masked_fill to -100), and from the masked mean and the last valid sample (gather) a tap-temperature and end-point-carbon head (Huber, weights 1 and 0.5) with the phase loss weight 0.5; AdamW (heads at 3x the blocks' learning rate), clipping, bf16 autocast, 1,120 steps; the three losses read back every 25 steps and every 280 steps a no-grad evaluation of 16 heats of 4,096 samples with phase accuracy and tap-temperature MAE read back")
def arc_furnace_tcn_finetune(rng):
    n_in, c, blocks, frozen, n_phase = 12, _smoke(128, 16), _smoke(10, 4), _smoke(6, 2), 4
    model = _ArcTCN(n_in, c, blocks, n_phase).cuda()
    model.inp.requires_grad_(False)
    for blk in model.blocks[:frozen]:
        blk.requires_grad_(False)
    heads = list(model.phase.parameters()) + list(model.tap.parameters())
    opt = torch.optim.AdamW([{"params": [p for blk in model.blocks[frozen:] for p in blk.parameters()], "lr": 1e-4},
                             {"params": heads, "lr": 3e-4}], weight_decay=0.01)
    lo, hi = _smoke(1024, 64), _smoke(4096, 256)

    def heats(lengths):
        b, t = len(lengths), -(-max(lengths) // 256) * 256
        keep = keep_mask(lengths, t)
        x = torch.randn(b, n_in, t, device="cuda") * keep[:, None]
        phase = torch.randint(0, n_phase, (b, t), device="cuda").masked_fill(~keep, -100)
        tap = torch.randn(b, 2, device="cuda")
        last = torch.tensor(lengths, device="cuda") - 1
        return x, keep, phase, tap, last

    steps, every = _smoke(1120, 3), _smoke(280, 2)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(8, 2), _smoke(32, 3))
        x, keep, phase, tap, last = heats([rng.randint(lo, hi) for _ in range(b)])
        with torch.autocast("cuda", dtype=torch.bfloat16):
            with torch.no_grad():
                h = model.features(x, frozen)
            p_log, t_pred = model(h, frozen, keep, last)
        l_p = _F.cross_entropy(p_log, phase, ignore_index=-100)
        l_t = _F.huber_loss(t_pred[:, 0], tap[:, 0])
        l_c = _F.huber_loss(t_pred[:, 1], tap[:, 1])
        loss = l_t + 0.5 * l_c + 0.5 * l_p
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p for g in opt.param_groups for p in g["params"]], 1.0)
        opt.step()
        if step % 25 == 0:
            torch.stack([l_t.detach(), l_c.detach(), l_p.detach()]).tolist()
        del x, keep, phase, tap, last, h, p_log, t_pred, l_p, l_t, l_c, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                x, keep, phase, tap, last = heats([hi] * _smoke(16, 2))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    p_log, t_pred = model(model.features(x, frozen), frozen, keep, last)
                out = torch.stack([(p_log.argmax(1) == phase).float().mean(), (t_pred[:, 0] - tap[:, 0]).abs().mean()])
            out.tolist()
            del x, keep, phase, tap, last, p_log, t_pred, out

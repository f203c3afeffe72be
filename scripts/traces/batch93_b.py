"""The ninety-third batch of held-out workloads for record.py, second half (see batch93.py): manufacturing, quality
inspection and predictive maintenance, written in torch alone. Defect-image diffusion training (a class-conditional
DDPM U-Net over grayscale inspection patches of drawn sizes, rare defect classes synthesised for augmentation, an EMA
copy of the weights and classifier-free-guided DDIM sampling at evaluations), a CNC machining thermal surrogate (a
MeshGraphNet-style encode-process-decode network by index_select and index_add over workpiece meshes of drawn node
counts heated by a moving tool, trained one step ahead with noise injection, rolled out at evaluations), a machine
sensor anomaly service (production-line requests of drawn machine counts and window lengths, per-machine
normalisation statistics, a dilated temporal-convolution autoencoder, reconstruction-error scores against per-machine
thresholds, alarm counters and root-cause channels) and a process-control simulation (batches of simulated
continuous stirred-tank reactors driven by cross-entropy-method model-predictive control over a learned probabilistic
ensemble, the ensemble refitted from an on-device replay buffer during the run).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or masked_fill;
no boolean-mask indexing; results read back only at logging points or once per request. machine_sensor_anomaly_serve
uploads its inputs on a side stream (two reused pinned host buffers, one request ahead, the main stream waiting on an
event, the tensors record_stream'ed, through workload_helpers.SideUploads); the other three are single-stream. The
networks run under bf16 autocast (the reactor plant and the CEM bookkeeping in fp32).
"""

import copy
import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, TimeResBlock, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _timestep_features(t, dim):
    """Sinusoidal features of (B,) integer timesteps at dim // 2 log-spaced frequencies (cos first)."""
    half = dim // 2
    k = torch.arange(half, device=t.device).float()
    ang = t.float()[:, None] * torch.exp(k * (-math.log(10000.0) / half))[None]
    return torch.cat([ang.cos(), ang.sin()], -1)


# ---------------------------------------------------------------- defect-image diffusion (class-conditional DDPM)


class _DefectUNet(_nn.Module):
    """Three levels of two TimeResBlocks (widths w0/w1/w2), strided-convolution downsampling, a middle of two
    TimeResBlocks around a pre-norm attention block over the lowest level's tokens, a decoder taking one skip per
    level; the timestep features and a class embedding (with a null class) summed into the time embedding."""

    def __init__(self, widths, temb, n_cls, heads):
        super().__init__()
        self.temb_dim = widths[0]
        self.t_mlp = mlp(widths[0], temb, temb, act=_nn.SiLU)
        self.cls = _nn.Embedding(n_cls + 1, temb)
        self.inp = _nn.Conv2d(1, widths[0], 3, 1, 1)
        self.enc = _nn.ModuleList()
        self.down = _nn.ModuleList()
        c = widths[0]
        for i, w in enumerate(widths):
            self.enc.append(_nn.ModuleList([TimeResBlock(c, w, temb), TimeResBlock(w, w, temb)]))
            c = w
            self.down.append(_nn.Conv2d(w, w, 3, 2, 1) if i < len(widths) - 1 else _nn.Identity())
        self.mid1, self.mid2 = TimeResBlock(c, c, temb), TimeResBlock(c, c, temb)
        self.attn = PreNormBlock(c, heads)
        self.dec = _nn.ModuleList()
        self.up = _nn.ModuleList()
        for i in range(len(widths) - 1, -1, -1):
            w = widths[i]
            self.dec.append(_nn.ModuleList([TimeResBlock(c + w, w, temb), TimeResBlock(w, w, temb)]))
            c = w
            self.up.append(_nn.Conv2d(w, widths[i - 1], 3, 1, 1) if i > 0 else _nn.Identity())
            if i > 0:
                c = widths[i - 1]
        self.out = _nn.Sequential(_nn.GroupNorm(8, widths[0]), _nn.SiLU(), _nn.Conv2d(widths[0], 1, 3, 1, 1))

    def forward(self, x, t, y):
        te = self.t_mlp(_timestep_features(t, self.temb_dim)) + self.cls(y)
        h, skips = self.inp(x), []
        for blocks, down in zip(self.enc, self.down):
            for blk in blocks:
                h = blk(h, te)
            skips.append(h)
            h = down(h)
        h = self.mid1(h, te)
        b, c, hh, ww = h.shape
        h = self.attn(h.flatten(2).transpose(1, 2)).transpose(1, 2).reshape(b, c, hh, ww)
        h = self.mid2(h, te)
        for i, (blocks, up) in enumerate(zip(self.dec, self.up)):
            h = torch.cat([h, skips[-1 - i]], 1)
            for blk in blocks:
                h = blk(h, te)
            if i < len(self.dec) - 1:
                h = up(_F.interpolate(h, scale_factor=2, mode="nearest"))
        return self.out(h).float()


@_workload("defect-image diffusion training (random init, a class-conditional DDPM U-Net for synthesising rare surface defects): 8-24 grayscale inspection patches a step (drawn) of 64, 96 or 128 px (drawn per step), drawn on the device, each with one of 7 defect classes, the label replaced by a null class for 10% of the patches (torch.where on a drawn mask); a U-Net of widths 64/128/192 (two TimeResBlocks a level, strided-convolution downsampling, nearest upsampling, one skip a level), a middle of two TimeResBlocks around a pre-norm attention block (4 heads) over the lowest level's tokens, a 256-wide time embedding of sinusoidal features plus a class embedding; epsilon prediction at timesteps drawn on the device from 1,000 of a cosine schedule (the schedule a device table gathered by the timesteps), MSE; AdamW, clipping, bf16 autocast, an EMA copy updated by lerp_ after every step, 261 steps; the loss read back every 20 steps and every 87 steps a no-grad 12-step DDIM sampling of 8 patches of 96 px with the EMA weights and classifier-free guidance (scale 3, conditional and null-class halves batched), the sample statistics read back")
def defect_image_diffusion_train(rng):
    widths, temb, n_cls, heads = _smoke([64, 128, 192], [8, 16, 16]), _smoke(256, 16), 7, _smoke(4, 2)
    model = _DefectUNet(widths, temb, n_cls, heads).cuda()
    ema = copy.deepcopy(model).eval()
    ema.requires_grad_(False)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.01)
    n_t = 1000
    abar_host = [math.cos((i / n_t + 0.008) / 1.008 * math.pi / 2) ** 2 for i in range(n_t + 1)]
    abar_host = [min(0.9999, a / abar_host[0]) for a in abar_host[1:]]
    abar = torch.tensor(abar_host, device="cuda")
    res_choices = _smoke([64, 96, 128], [16, 32])

    steps = _smoke(261, 3)
    for step in range(steps):
        model.train()
        b, r = rng.randint(_smoke(8, 2), _smoke(24, 4)), rng.choice(res_choices)
        x0 = torch.randn(b, 1, r, r, device="cuda").tanh()
        y = torch.randint(0, n_cls, (b,), device="cuda")
        y = torch.where(torch.rand(b, device="cuda") < 0.1, torch.full_like(y, n_cls), y)
        t = torch.randint(0, n_t, (b,), device="cuda")
        a = abar[t].view(b, 1, 1, 1)
        eps = torch.randn_like(x0)
        xt = a.sqrt() * x0 + (1 - a).sqrt() * eps
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(xt, t, y)
        loss = _F.mse_loss(pred, eps)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        with torch.no_grad():
            for pe, p in zip(ema.parameters(), model.parameters()):
                pe.lerp_(p, 0.001)
        if step % 20 == 0:
            loss.detach().item()
        del x0, y, t, a, eps, xt, pred, loss
        if (step + 1) % _smoke(87, 2) == 0:
            n, r = _smoke(8, 2), _smoke(96, 32)
            ts = [int(n_t - 1 - i * n_t / _smoke(12, 3)) for i in range(_smoke(12, 3))]
            with torch.no_grad():
                x = torch.randn(n, 1, r, r, device="cuda")
                yc = torch.tensor([rng.randrange(n_cls) for _ in range(n)], device="cuda")
                ys = torch.cat([yc, torch.full_like(yc, n_cls)])
                for j, tj in enumerate(ts):
                    a_t = abar_host[tj]
                    a_prev = abar_host[ts[j + 1]] if j + 1 < len(ts) else 1.0
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        e2 = ema(torch.cat([x, x]), torch.full((2 * n,), tj, device="cuda"), ys)
                    e = e2[n:] + 3.0 * (e2[:n] - e2[n:])
                    x0_hat = ((x - math.sqrt(1 - a_t) * e) / math.sqrt(a_t)).clamp(-1, 1)
                    x = math.sqrt(a_prev) * x0_hat + math.sqrt(1 - a_prev) * e
                stats = torch.stack([x.mean(), x.std(), x.abs().amax()])
            stats.tolist()
            del x, yc, ys, e2, e, x0_hat, stats


# ---------------------------------------------------------------- CNC machining thermal surrogate (MeshGraphNet)


class _ThermalGraphNet(_nn.Module):
    """Node and edge encoders (MLPs with LayerNorm), `layers` processor steps (edge update from [edge, sender,
    receiver] by index_select, node update from [node, sum of incoming edges] by index_add, both residual), a node
    decoder to the temperature change."""

    def __init__(self, n_node_in, n_mat, n_edge_in, d, layers):
        super().__init__()
        self.mat = _nn.Embedding(n_mat, 8)
        self.node_enc = mlp(n_node_in + 8, d, d, act=_nn.SiLU, norm=True)
        self.edge_enc = mlp(n_edge_in, d, d, act=_nn.SiLU, norm=True)
        self.edge_up = _nn.ModuleList(mlp(3 * d, d, d, act=_nn.SiLU, norm=True) for _ in range(layers))
        self.node_up = _nn.ModuleList(mlp(2 * d, d, d, act=_nn.SiLU, norm=True) for _ in range(layers))
        self.dec = mlp(d, d, 1, act=_nn.SiLU)

    def forward(self, xn, mat, xe, src, dst):
        h = self.node_enc(torch.cat([xn, self.mat(mat).to(xn.dtype)], -1))
        e = self.edge_enc(xe)
        for eu, nu in zip(self.edge_up, self.node_up):
            e = e + eu(torch.cat([e, h.index_select(0, src), h.index_select(0, dst)], -1))
            agg = torch.zeros_like(h).index_add_(0, dst, e.to(h.dtype))
            h = h + nu(torch.cat([h, agg], -1))
        return self.dec(h)[:, 0].float()


@_workload("CNC machining thermal surrogate training (random init, a MeshGraphNet-style encode-process-decode network): a drawn workpiece mesh of 4,000-16,000 nodes a step with node positions in a unit block, each node joined to 3 others at drawn index offsets (both directions, 6 directed edges a node), 4 materials (embedded), 5% fixed-temperature boundary nodes and a tool at a drawn position heating nodes by a Gaussian flux, all drawn on the device; node inputs temperature (with injected noise), boundary flag, tool flux and distance to the tool, edge inputs relative position and length; 128-wide MLP encoders with LayerNorm, 8 processor steps (edge update from edge, sender and receiver by index_select, node update from the sum of incoming edges by index_add, residual), a decoder to each node's temperature change; MSE against drawn targets on free nodes only (boundary nodes masked); Adam with an exponential learning-rate decay set per step, clipping, bf16 autocast, 340 steps; the loss read back every 20 steps and every 85 steps a no-grad 20-step rollout on a mesh of 16,000 nodes with the tool moving along a drawn straight path, boundary nodes held by torch.where, the mean and peak temperature per step read back")
def cnc_thermal_meshgraph_train(rng):
    d, layers, n_mat = _smoke(128, 16), _smoke(8, 2), 4
    model = _ThermalGraphNet(4, n_mat, 4, d, layers).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    lo, hi = _smoke(4000, 60), _smoke(16000, 120)

    def mesh(n):
        pos = torch.rand(n, 3, device="cuda")
        offs = [rng.randint(1, max(2, n // 50)) for _ in range(3)]
        base = torch.arange(n, device="cuda")
        nb = torch.cat([(base + o) % n for o in offs])
        src = torch.cat([base.repeat(3), nb])
        dst = torch.cat([nb, base.repeat(3)])
        rel = pos.index_select(0, dst) - pos.index_select(0, src)
        xe = torch.cat([rel, rel.norm(dim=-1, keepdim=True)], -1)
        mat = torch.randint(0, n_mat, (n,), device="cuda")
        fixed = torch.rand(n, device="cuda") < 0.05
        temp = torch.rand(n, device="cuda") * 0.2
        return pos, src, dst, xe, mat, fixed, temp

    def node_inputs(pos, fixed, temp, tool):
        dist = (pos - tool[None]).norm(dim=-1)
        flux = torch.exp(-dist.pow(2) / 0.005)
        return torch.stack([temp, fixed.float(), flux, dist], -1)

    steps = _smoke(340, 3)
    for step in range(steps):
        model.train()
        for g in opt.param_groups:
            g["lr"] = 1e-3 * 0.1 ** (step / steps)
        n = rng.randint(lo, hi)
        pos, src, dst, xe, mat, fixed, temp = mesh(n)
        tool = torch.tensor([rng.random(), rng.random(), 1.0], device="cuda")
        xn = node_inputs(pos, fixed, temp + 0.01 * torch.randn_like(temp), tool)
        target = torch.randn(n, device="cuda") * 0.05
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(xn, mat, xe, src, dst)
        free = (~fixed).float()
        loss = ((pred - target).pow(2) * free).sum() / free.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.detach().item()
        del pos, src, dst, xe, mat, fixed, temp, tool, xn, target, pred, free, loss
        if (step + 1) % _smoke(85, 2) == 0:
            model.eval()
            n_roll = _smoke(20, 2)
            start, end = [rng.random(), rng.random()], [rng.random(), rng.random()]
            with torch.no_grad():
                pos, src, dst, xe, mat, fixed, temp = mesh(hi)
                t_fixed, trace = temp, []
                for k in range(n_roll):
                    f = k / max(1, n_roll - 1)
                    tool = torch.tensor([start[0] + f * (end[0] - start[0]), start[1] + f * (end[1] - start[1]),
                                         1.0], device="cuda")
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        dt = model(node_inputs(pos, fixed, temp, tool), mat, xe, src, dst)
                    temp = torch.where(fixed, t_fixed, temp + dt)
                    trace.append(torch.stack([temp.mean(), temp.amax()]))
                trace = torch.stack(trace)
            trace.tolist()
            del pos, src, dst, xe, mat, fixed, temp, t_fixed, trace, tool, dt


# ---------------------------------------------------------------- machine sensor anomaly service (TCN autoencoder)


class _CausalTCNAE(_nn.Module):
    """A causal dilated temporal-convolution encoder (left padding, GroupNorm, GELU, residual), a stride-4
    bottleneck, a transposed-convolution decoder back to full length and a 1x1 reconstruction of the channels."""

    def __init__(self, ch, d, dilations, k, code):
        super().__init__()
        self.k, self.dil = k, dilations
        self.inp = _nn.Conv1d(ch, d, 1)
        self.convs = _nn.ModuleList(_nn.Conv1d(d, d, k, dilation=r) for r in dilations)
        self.norms = _nn.ModuleList(_nn.GroupNorm(8, d) for _ in dilations)
        self.squeeze = _nn.Conv1d(d, code, 4, 4)
        self.expand = _nn.ConvTranspose1d(code, d, 4, 4)
        self.dec = _nn.Sequential(_nn.Conv1d(d, d, 3, 1, 1), _nn.GELU(), _nn.Conv1d(d, ch, 1))

    def forward(self, x):
        h = self.inp(x)
        for conv, norm, r in zip(self.convs, self.norms, self.dil):
            h = h + _F.gelu(norm(conv(_F.pad(h, ((self.k - 1) * r, 0)))))
        return self.dec(self.expand(_F.gelu(self.squeeze(h)))).float()


@_workload("machine sensor anomaly serving (random init, a causal dilated temporal-convolution autoencoder over production-line sensor windows): 3,850-4,000 requests (drawn), each a production line's poll of 4-48 distinct machines (drawn, of 320) with a window of 256-1,024 samples (drawn per request, a multiple of 128) of 16 sensor channels; the machine ids (as float32) and the samples uploaded on a side stream from two reused pinned host buffers (filled once, sized for 48 machines x 16 x 1,024) one request ahead (two spans of one buffer, waited on by event, record_stream'ed); each machine's per-channel mean and variance gathered from on-device tables and the window normalised; an input 1x1 convolution to width 64, 6 causal dilated kernel-3 convolution layers (dilations 1-32, GroupNorm, GELU, residual), a stride-4 bottleneck of 16 channels, a transposed convolution back and a 1x1 reconstruction, under bf16 autocast; per machine the reconstruction error over the last 128 samples (the score), the root-cause channel (argmax of per-channel error), an alarm against its threshold by torch.where; the statistics tables updated as exponential averages and written back by index_copy_, the thresholds likewise, the alarm counters by index_add_; each request's scores, alarms and root-cause channels read back")
def machine_sensor_anomaly_serve(rng):
    ch, d, k, code = 16, _smoke(64, 8), 3, _smoke(16, 4)
    dilations = _smoke([1, 2, 4, 8, 16, 32], [1, 2])
    model = _CausalTCNAE(ch, d, dilations, k, code).cuda().eval()
    model.requires_grad_(False)
    n_mach, max_m, max_len, tail = _smoke(320, 12), _smoke(48, 4), _smoke(1024, 64), _smoke(128, 16)
    mean_t = torch.randn(n_mach, ch, device="cuda")
    var_t = torch.rand(n_mach, ch, device="cuda") + 0.5
    thresh = torch.full((n_mach,), 2.0, device="cuda")
    alarms = torch.zeros(n_mach, device="cuda")
    off = max_m
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = []
    for _ in range(2):
        buf = torch.randn(off + max_m * ch * max_len, generator=gen)
        host.append(buf.pin_memory())
    up = SideUploads(host)
    nreq = rng.randint(_smoke(3850, 3), _smoke(4000, 4))
    mult = _smoke(128, 16)
    plan = []
    for _ in range(nreq):
        ids = rng.sample(range(n_mach), rng.randint(_smoke(4, 2), max_m))
        plan.append((ids, rng.randint(_smoke(256, 32) // mult, max_len // mult) * mult))

    def send(i):
        """The request's machine ids written into the first floats of its slot's pinned buffer (once that slot's
        previous upload has finished), then the ids and the samples uploaded as two spans."""
        ids, ln = plan[i]
        m = len(ids)
        if up.done[i % 2] is not None:
            up.done[i % 2].synchronize()
        host[i % 2][:m] = torch.tensor(ids, dtype=torch.float32)
        return up.upload(i, m, slice(off, off + m * ch * ln))

    nxt = send(0)
    for i in range(nreq):
        ids, ln = plan[i]
        m = len(ids)
        item = nxt
        if i + 1 < nreq:
            nxt = send(i + 1)
        raw_ids, raw_x, ev = item
        SideUploads.ready(ev, raw_ids, raw_x)
        with torch.no_grad():
            idx = raw_ids.long()
            x = raw_x.view(m, ch, ln)
            mu, var = mean_t.index_select(0, idx), var_t.index_select(0, idx)
            z = (x - mu[..., None]) / var[..., None].sqrt()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                rec = model(z)
            err = (rec[..., -tail:] - z[..., -tail:]).pow(2).mean(-1)  # (m, ch)
            score = err.mean(-1)
            cause = err.argmax(-1)
            thr = thresh.index_select(0, idx)
            alarm = torch.where(score > thr, 1.0, 0.0)
            alarms.index_add_(0, idx, alarm)
            mean_t.index_copy_(0, idx, 0.99 * mu + 0.01 * x.mean(-1))
            var_t.index_copy_(0, idx, 0.99 * var + 0.01 * x.var(-1))
            thresh.index_copy_(0, idx, torch.where(alarm > 0, thr, 0.995 * thr + 0.005 * 3 * score))
            out = torch.cat([score, alarm, cause.float()])
        out.tolist()
        del item, raw_ids, raw_x, idx, x, mu, var, z, rec, err, score, cause, thr, alarm, out


# ---------------------------------------------------------------- reactor process control (CEM-MPC over an ensemble)


class _Ensemble(_nn.Module):
    """E probabilistic MLPs held as stacked weights and run together by baddbmm: the next state's change (mean and
    log-variance, clamped) from state and action."""

    def __init__(self, e, d_in, hidden, d_out, layers):
        super().__init__()
        dims = [d_in] + [hidden] * (layers - 1) + [2 * d_out]
        self.w = _nn.ParameterList(_nn.Parameter(torch.randn(e, a, b) / math.sqrt(a)) for a, b in zip(dims, dims[1:]))
        self.bias = _nn.ParameterList(_nn.Parameter(torch.zeros(e, 1, b)) for b in dims[1:])
        self.d_out = d_out

    def forward(self, x):  # x (E, N, d_in)
        for i, (w, b) in enumerate(zip(self.w, self.bias)):
            x = torch.baddbmm(b, x, w)
            if i < len(self.w) - 1:
                x = _F.silu(x)
        mean, logvar = x.float().split(self.d_out, -1)
        return mean, logvar.clamp(-8, 2)


def _cstr_rhs(s, u):
    """A continuous stirred-tank reactor (A -> B, exothermic, cooling jacket): states concentration A, concentration B,
    reactor and jacket temperatures (scaled), actions feed rate and coolant flow in [0, 1]."""
    ca, cb, tr, tj = s.unbind(-1)
    feed, cool = u.unbind(-1)
    rate = 0.8 * ca * torch.exp(2.0 - 2.0 / (0.5 + tr.clamp(min=0.05)))
    return torch.stack([feed * (1 - ca) - rate, -feed * cb + rate, feed * (0.3 - tr) + 0.6 * rate - 0.4 * (tr - tj),
                        0.4 * (tr - tj) + cool * (0.1 - tj)], -1)


@_workload("reactor process-control simulation (cross-entropy-method model-predictive control over a learned probabilistic ensemble, PETS-style): 5 episodes, each of 64-256 simulated continuous stirred-tank reactors (drawn per episode) with drawn set points and initial states, 30-60 control steps (drawn per episode); the plant integrated in fp32 by 4 RK4 substeps a control step; each control step a CEM of 3-5 iterations (drawn per episode) over 128-384 action sequences per reactor (drawn per episode) of horizon 8-16 (drawn per episode), actions clamped to [0, 1], rolled out through a 5-member ensemble of 3-layer SiLU MLPs (width 200, stacked weights by baddbmm, sampled Gaussian state changes) under bf16 autocast, costs of set-point error and action effort averaged over members, elites (the best 10%) by topk and gather, the mean and spread refitted with momentum and shifted one step for the next control step; every transition written into an on-device replay buffer of 65,536 by index_copy_; every 10 control steps 12 Adam steps of Gaussian negative log-likelihood on 256 transitions per member drawn from the filled part; the tracking error read back every 10 control steps and the model loss after each refit")
def reactor_cem_mpc_sim(rng):
    e, hidden, n_s, n_a = 5, _smoke(200, 16), 4, 2
    model = _Ensemble(e, n_s + n_a, hidden, n_s, 3).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    cap = _smoke(65536, 512)
    buf_s = torch.zeros(cap, n_s, device="cuda")
    buf_a = torch.zeros(cap, n_a, device="cuda")
    buf_n = torch.zeros(cap, n_s, device="cuda")
    filled, pos = 0, 0

    def plant(s, u, dt=0.1, sub=4):
        h = dt / sub
        for _ in range(sub):
            k1 = _cstr_rhs(s, u)
            k2 = _cstr_rhs(s + 0.5 * h * k1, u)
            k3 = _cstr_rhs(s + 0.5 * h * k2, u)
            k4 = _cstr_rhs(s + h * k3, u)
            s = s + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return s

    def refit():
        model.train()
        bs = _smoke(256, 8)
        for _ in range(_smoke(12, 2)):
            idx = torch.randint(0, filled, (e, bs), device="cuda")
            s, a, nx = buf_s[idx], buf_a[idx], buf_n[idx]
            with torch.autocast("cuda", dtype=torch.bfloat16):
                mean, logvar = model(torch.cat([s, a], -1))
            loss = (((nx - s) - mean).pow(2) * torch.exp(-logvar) + logvar).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        model.eval()
        return loss.detach()

    for ep in range(_smoke(5, 1)):
        p = rng.randint(_smoke(64, 2), _smoke(256, 4))
        n_ctrl, iters = rng.randint(_smoke(30, 3), _smoke(60, 4)), rng.randint(3, 5)
        samples, horizon = rng.randint(_smoke(128, 8), _smoke(384, 12)), rng.randint(_smoke(8, 2), _smoke(16, 3))
        n_elite = max(2, samples // 10)
        state = torch.rand(p, n_s, device="cuda") * torch.tensor([1.0, 0.2, 0.6, 0.4], device="cuda")
        target = torch.rand(p, 1, device="cuda") * 0.5 + 0.2  # set point of concentration B
        mu = torch.full((p, horizon, n_a), 0.5, device="cuda")
        sd = torch.full((p, horizon, n_a), 0.3, device="cuda")
        track = []
        for c in range(n_ctrl):
            with torch.no_grad():
                sd = sd.clamp(min=0.05)
                for _ in range(iters):
                    noise = torch.randn(p, samples, horizon, n_a, device="cuda")
                    acts = (mu[:, None] + sd[:, None] * noise).clamp(0, 1)
                    s = state[None, :, None].expand(e, p, samples, n_s).reshape(e, p * samples, n_s)
                    a_all = acts.reshape(1, p * samples, horizon, n_a).expand(e, -1, -1, -1)
                    cost = torch.zeros(e, p * samples, device="cuda")
                    tgt = target.repeat_interleave(samples, 0)[None, :, 0]
                    for h in range(horizon):
                        a = a_all[:, :, h]
                        with torch.autocast("cuda", dtype=torch.bfloat16):
                            mean, logvar = model(torch.cat([s, a], -1))
                        s = s + mean + torch.exp(0.5 * logvar) * torch.randn_like(mean)
                        cost = cost + (s[..., 1] - tgt).pow(2) + 0.01 * a.pow(2).sum(-1)
                    cost = cost.mean(0).view(p, samples)
                    elite = (-cost).topk(n_elite, dim=1).indices
                    chosen = acts.gather(1, elite[..., None, None].expand(-1, -1, horizon, n_a))
                    mu = 0.1 * mu + 0.9 * chosen.mean(1)
                    sd = 0.1 * sd + 0.9 * chosen.std(1)
                u = mu[:, 0]
                nxt = plant(state, u)
                rows = torch.arange(pos, pos + p, device="cuda") % cap
                buf_s.index_copy_(0, rows, state)
                buf_a.index_copy_(0, rows, u)
                buf_n.index_copy_(0, rows, nxt)
                pos, filled = (pos + p) % cap, min(cap, filled + p)
                track.append((nxt[:, 1:2] - target).abs().mean())
                state = nxt
                mu = torch.cat([mu[:, 1:], mu[:, -1:]], 1)
                sd = torch.cat([sd[:, 1:], torch.full_like(sd[:, -1:], 0.3)], 1)
            if (c + 1) % _smoke(10, 2) == 0:
                torch.stack(track).tolist()
                track = []
                refit().item()
        del state, target, mu, sd, noise, acts, s, a_all, cost, tgt, a, mean, logvar, elite, chosen, u, nxt, rows, track

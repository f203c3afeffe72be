"""The fifty-second batch of held-out workloads, second half (batch52.py holds the first): climate, weather and
earth-system science on the GPU, written in torch alone. A ClimaX-style foundation model fine-tuned on different
variable subsets (Nguyen et al. 2023: every input variable patchified by an embedding of its own, picked out of a
table of 48 by index, variable embeddings added, a cross-attention over the variables of each patch aggregating them
into one token, a lead-time embedding, a ViT; three fine-tuning tasks in turn, each with its own pool of input
variables, its own target variables and a fresh head and optimizer), CorrDiff-style generative downscaling (Mardani
et al. 2023: an EDM-preconditioned diffusion UNet learning the fine-scale residual over an interpolated coarse field,
regions of drawn size at a drawn refinement factor, batches cut to a pixel budget, Heun sampling of small ensembles
over held-out regions), an EA-LSTM streamflow model over many basins (Kratzert et al. 2019, as in NeuralHydrology:
static catchment attributes setting the input gate, daily meteorological forcings through a hand-written recurrence,
sequences of drawn length, an NSE loss weighted by each basin's streamflow spread; the forcings, attributes and
targets of every batch uploaded from reused pinned host buffers on a side stream one batch ahead, as a data loader
would deliver them; held-out basins simulated over two years), and a Samudra-style ocean emulator with land masks
(Dheeshjith et al. 2024: a ConvNeXt UNet over the ocean state at five depths with atmospheric forcing, every
convolution's output multiplied by the ocean mask at its resolution, basins of drawn size cut from a synthetic
global mask, two-step rollout loss, long masked rollouts in evaluation). Same conventions as batch52.py: nothing
downloaded, data drawn on the device (or, for the streamflow model, from a few reused pinned host buffers), `rng`
the workload's random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)`. No
control flow reads a tensor's value: masks are multiplied in, counts fixed on the host; losses and skill scores are
read back only at logging points. ealstm_streamflow_train uses a side stream (uploads waited on by event, the tensors
record_stream'ed); the others are single-stream. The ViT, the UNets and the emulator run under bf16 autocast; the
LSTM recurrence, the diffusion preconditioning and the losses are fp32.

Real sizes checked before recording, as batch52.py's header says (the same meta-device runner, op outputs counted,
peak live bytes tracked), each run whole at its final sizes: climax_varsubset_finetune 313,799 op outputs, peak
4.28 GB; corrdiff_downscale_train 303,471, 3.96 GB; ealstm_streamflow_train 322,242, 1.53 GB;
ocean_masked_emulator_train 312,573, 6.15 GB (peaks in fp32 where autocast would take bf16). record_new52.sh's header
has the figures, with the first runs that led to resizes. The CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock as _Block

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _smooth_fields(b, c, h, w, coarse=8):
    """Smooth random fields (b, c, h, w): low-resolution noise upsampled bilinearly plus a little fine noise."""
    lo = torch.randn(b, c, max(2, h // coarse), max(2, w // coarse), device="cuda")
    x = _F.interpolate(lo, size=(h, w), mode="bilinear", align_corners=False)
    return x + 0.1 * torch.randn(b, c, h, w, device="cuda")


def _lat_weights(h):
    lat = torch.linspace(-math.pi / 2, math.pi / 2, h, device="cuda")
    w = torch.cos(lat).clamp_min(1e-3)
    return (w / w.mean())[:, None]


# ---------------------------------------------------------------- ClimaX fine-tuning on variable subsets


class _ClimaX(_nn.Module):
    """Per-variable patch embeddings (a table of nvar_all kernels, the batch's variables picked by index and run as
    one grouped convolution), variable embeddings, a one-query cross-attention over each patch's variables, learned
    positions, a lead-time embedding, ViT blocks; the head is attached per task."""

    def __init__(self, nvar_all, d, depth, heads, patch, ntok):
        super().__init__()
        self.d, self.p, self.heads = d, patch, heads
        self.kern = _nn.Parameter(torch.randn(nvar_all, d, 1, patch, patch) / patch)
        self.kbias = _nn.Parameter(torch.zeros(nvar_all, d))
        self.var_emb = _nn.Parameter(torch.randn(nvar_all, d) * 0.02)
        self.query = _nn.Parameter(torch.randn(1, 1, d) * 0.02)
        self.kv = _nn.Linear(d, 2 * d)
        self.agg_out = _nn.Linear(d, d)
        self.pos = _nn.Parameter(torch.randn(1, ntok, d) * 0.02)
        self.lead = _nn.Linear(1, d)
        self.blocks = _nn.ModuleList([_Block(d, heads) for _ in range(depth)])
        self.norm = _nn.LayerNorm(d)

    def forward(self, x, var_idx, lead_h):
        b, v, hh, ww = x.shape
        d, p = self.d, self.p
        wgt = self.kern[var_idx].reshape(v * d, 1, p, p)
        tok = _F.conv2d(x, wgt, self.kbias[var_idx].reshape(-1), stride=p, groups=v)  # (b, v*d, h/p, w/p)
        ntok = tok.shape[-2] * tok.shape[-1]
        tok = tok.view(b, v, d, ntok).permute(0, 3, 1, 2) + self.var_emb[var_idx]  # (b, L, v, d)
        kv = self.kv(tok.reshape(b * ntok, v, d)).view(b * ntok, v, 2, self.heads, d // self.heads)
        k, vv = kv.permute(2, 0, 3, 1, 4)
        q = self.query.expand(b * ntok, -1, -1).view(b * ntok, 1, self.heads, d // self.heads).transpose(1, 2)
        agg = _F.scaled_dot_product_attention(q, k, vv).reshape(b, ntok, d)
        h = self.agg_out(agg) + self.pos[:, :ntok] + self.lead(lead_h[:, None, None] / 168.0)
        for blk in self.blocks:
            h = blk(h)
        return self.norm(h)


def _unpatch(y, nout, p, hh, ww):
    b = y.shape[0]
    y = y.view(b, hh // p, ww // p, nout, p, p).permute(0, 3, 1, 4, 2, 5)
    return y.reshape(b, nout, hh, ww)


@_workload("ClimaX-style weather foundation model fine-tuned on variable subsets, written by hand (random init; Nguyen et al. 2023): a table of 48 variables (5 upper-air at 8 levels plus 8 surface), each batch's variables patchified by their own 4x4 kernels picked by index and run as one grouped convolution, variable embeddings, a one-query cross-attention aggregating each patch's variables, width 384, 8 ViT blocks of 8 heads over 512 tokens (64 x 128 grid), a lead-time embedding; three fine-tuning tasks in turn (a surface-and-low-level task, an upper-air task, a full-variable task), each with its own pool of inputs (18, 40 and 48 variables; 6 up to the whole pool drawn per batch, the targets always among them), 3-6 target variables, a fresh linear head and a fresh AdamW, 110 steps each under bf16 autocast (the learning rate cut by 0.7 every 28), batches of 4-16 cut to 256 variable-samples, lead times of 6-168 h drawn, latitude-weighted MSE, clipping; each task ending with an evaluation of 6 batches without grad, latitude-weighted RMSE per target read back")
def climax_varsubset_finetune(rng):
    nvar_all = 48
    hh, ww, p = _smoke(64, 16), _smoke(128, 32), _smoke(4, 4)
    d, depth, heads = _smoke(384, 32), _smoke(8, 1), _smoke(8, 2)
    ntok = (hh // p) * (ww // p)
    model = _ClimaX(nvar_all, d, depth, heads, p, ntok).cuda()
    latw = _lat_weights(hh)
    surface = list(range(40, 48))
    tasks = [
        surface + [8 * v + lvl for v in range(5) for lvl in (6, 7)],  # surface and the two lowest levels
        list(range(0, 40)),  # upper air
        list(range(48)),  # everything
    ]
    for task, pool in enumerate(tasks):
        pool = sorted(set(pool))
        ntgt = rng.randint(3, 6)
        targets = rng.sample(pool, ntgt)
        head = _nn.Linear(d, ntgt * p * p).cuda()
        params = list(model.parameters()) + list(head.parameters())
        opt = torch.optim.AdamW(params, lr=2e-4, weight_decay=0.05)
        tgt_idx = torch.tensor(targets, device="cuda")
        for step in range(_smoke(110, 2)):
            nv = rng.randint(min(6, len(pool)), len(pool))
            sel = sorted(set(rng.sample(pool, nv)) | set(targets))
            bsz = max(1, min(rng.choice(_smoke([4, 8, 16], [2])), _smoke(256, 16) // len(sel)))
            var_idx = torch.tensor(sel, device="cuda")
            lead = torch.tensor([float(rng.choice([6, 12, 24, 72, 168])) for _ in range(bsz)], device="cuda")
            full = _smooth_fields(bsz, nvar_all, hh, ww)
            x = full[:, var_idx]
            y = torch.roll(full[:, tgt_idx], 2, -1) * 0.95
            model.train()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = _unpatch(head(model(x, var_idx, lead)), ntgt, p, hh, ww)
            loss = ((out.float() - y) ** 2 * latw).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            del full, x, y, out, loss, var_idx, lead
            if (step + 1) % 28 == 0:
                opt.param_groups[0]["lr"] *= 0.7
        model.eval()
        errs = []
        with torch.no_grad():
            var_idx = torch.tensor(pool, device="cuda")
            for _ in range(_smoke(6, 1)):
                bsz = max(1, _smoke(256, 16) // len(pool))
                full = _smooth_fields(bsz, nvar_all, hh, ww)
                lead = torch.full((bsz,), 24.0, device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    out = _unpatch(head(model(full[:, var_idx], var_idx, lead)), ntgt, p, hh, ww)
                y = torch.roll(full[:, tgt_idx], 2, -1) * 0.95
                errs.append(((out.float() - y) ** 2 * latw).mean((0, 2, 3)).sqrt())
                del full, out, y
            torch.stack(errs).cpu()
        del head, opt, params, errs, tgt_idx, var_idx


# ---------------------------------------------------------------- CorrDiff-style diffusion downscaling


class _ResBlock(_nn.Module):
    def __init__(self, cin, cout, temb):
        super().__init__()
        self.n1, self.n2 = _nn.GroupNorm(16, cin), _nn.GroupNorm(16, cout)
        self.c1, self.c2 = _nn.Conv2d(cin, cout, 3, padding=1), _nn.Conv2d(cout, cout, 3, padding=1)
        self.t = _nn.Linear(temb, cout)
        self.skip = _nn.Conv2d(cin, cout, 1) if cin != cout else _nn.Identity()

    def forward(self, x, te):
        h = self.c1(_F.silu(self.n1(x))) + self.t(te)[:, :, None, None]
        h = self.c2(_F.silu(self.n2(h)))
        return self.skip(x) + h


class _DiffUNet(_nn.Module):
    """A UNet over (noisy residual, interpolated coarse conditioning, topography): 3 levels, 2 residual blocks a
    level, average-pool down, nearest up, skip concatenation, a noise-level embedding from Fourier features."""

    def __init__(self, cin, cout, chans, temb=128):
        super().__init__()
        self.freq = _nn.Parameter(torch.randn(temb // 2) * 4, requires_grad=False)
        self.temb = _nn.Sequential(_nn.Linear(temb, temb), _nn.SiLU(), _nn.Linear(temb, temb))
        self.inp = _nn.Conv2d(cin, chans[0], 3, padding=1)
        self.down = _nn.ModuleList()
        c = chans[0]
        for co in chans:
            self.down.append(_nn.ModuleList([_ResBlock(c, co, temb), _ResBlock(co, co, temb)]))
            c = co
        self.up = _nn.ModuleList()
        for co in reversed(chans):
            self.up.append(_nn.ModuleList([_ResBlock(c + co, co, temb), _ResBlock(co, co, temb)]))
            c = co
        self.out = _nn.Sequential(_nn.GroupNorm(16, c), _nn.SiLU(), _nn.Conv2d(c, cout, 3, padding=1))

    def forward(self, x, cond, c_noise):
        f = c_noise[:, None] * self.freq[None]
        te = self.temb(torch.cat([f.sin(), f.cos()], 1))
        h = self.inp(torch.cat([x, cond], 1))
        skips = []
        for i, (b1, b2) in enumerate(self.down):
            h = b2(b1(h, te), te)
            skips.append(h)
            if i < len(self.down) - 1:
                h = _F.avg_pool2d(h, 2)
        for i, (b1, b2) in enumerate(self.up):
            s = skips.pop()
            if h.shape[-1] != s.shape[-1]:
                h = _F.interpolate(h, size=s.shape[-2:], mode="nearest")
            h = b2(b1(torch.cat([h, s], 1), te), te)
        return self.out(h)


def _edm_denoise(net, x, cond, sigma, sd=1.0):
    """EDM preconditioning (Karras et al. 2022), fp32 around the bf16 network."""
    s = sigma[:, None, None, None]
    c_skip = sd ** 2 / (s ** 2 + sd ** 2)
    c_out = s * sd / (s ** 2 + sd ** 2).sqrt()
    c_in = 1 / (s ** 2 + sd ** 2).sqrt()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        f = net(x * c_in, cond, sigma.log() / 4)
    return c_skip * x + c_out * f.float()


def _downscale_batch(b, size, factor, ccoarse, cfine, topo):
    """Coarse fields (b, ccoarse, size/factor, size/factor), the bilinear interpolation to the fine grid as the
    conditioning with a topography crop, the fine target's residual over the interpolation (fine-scale detail tied to
    topography plus noise)."""
    coarse = _smooth_fields(b, ccoarse, size // factor, size // factor, coarse=2)
    up = _F.interpolate(coarse, size=(size, size), mode="bilinear", align_corners=False)
    t = topo[None, None, :size, :size].expand(b, -1, -1, -1)
    resid = 0.5 * t * up[:, :cfine] + 0.2 * _smooth_fields(b, cfine, size, size, coarse=4)
    return torch.cat([up, t], 1), resid


@_workload("CorrDiff-style generative downscaling written by hand (random init; Mardani et al. 2023): an EDM-preconditioned diffusion UNet (3 levels of 64-128-256 channels, 2 residual blocks each with GroupNorm and a noise-level embedding, skip concatenation) learning the fine-scale residual of 4 target variables over the bilinear interpolation of 12 coarse variables plus topography; training regions of 64-256 fine cells square (drawn) at a refinement factor of 4 or 8 (drawn), batches cut to 256k fine cells, EDM's log-normal noise levels and loss weighting, bf16 autocast, Adam with warmup, EMA weights, 350 steps; every 70 steps a held-out region of 128-256 cells sampled with the EMA weights for an ensemble of 4 by 12 Heun steps without grad, CRPS-like ensemble error and spread read back")
def corrdiff_downscale_train(rng):
    ccoarse, cfine = 12, 4
    chans = _smoke([64, 128, 256], [16, 16, 32])
    net = _DiffUNet(cfine + ccoarse + 1, cfine, chans).cuda()
    ema = _DiffUNet(cfine + ccoarse + 1, cfine, chans).cuda()
    ema.load_state_dict(net.state_dict())
    ema.requires_grad_(False)
    smax = _smoke(256, 32)
    topo = _smooth_fields(1, 1, smax, smax, coarse=16)[0, 0]
    opt = torch.optim.Adam(net.parameters(), lr=2e-4)
    warm = _smoke(20, 1)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warm))
    sizes = _smoke([64, 96, 128, 192, 256], [16, 32])
    budget = _smoke(262144, 4096)
    for step in range(_smoke(350, 4)):
        size = rng.choice(sizes)
        factor = rng.choice([4, 8])
        b = max(1, min(rng.choice([8, 16, 32, 64]), budget // (size * size)))
        cond, resid = _downscale_batch(b, size, factor, ccoarse, cfine, topo)
        sigma = (torch.randn(b, device="cuda") * 1.2 - 1.2).exp()
        noisy = resid + sigma[:, None, None, None] * torch.randn_like(resid)
        net.train()
        den = _edm_denoise(net, noisy, cond, sigma)
        wgt = (sigma ** 2 + 1) / sigma ** 2
        loss = (wgt[:, None, None, None] * (den - resid) ** 2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        with torch.no_grad():
            for pe, pn in zip(ema.parameters(), net.parameters()):
                pe.lerp_(pn, 1e-2)
        del cond, resid, sigma, noisy, den, wgt, loss
        if (step + 1) % _smoke(70, 2) == 0:
            ema.eval()
            with torch.no_grad():
                size = rng.choice(sizes[len(sizes) // 2:])
                members = 4
                cond, resid = _downscale_batch(1, size, rng.choice([4, 8]), ccoarse, cfine, topo)
                cond = cond.expand(members, -1, -1, -1)
                nsteps = _smoke(12, 2)
                sig = [80.0 * (0.002 / 80.0) ** (i / (nsteps - 1)) for i in range(nsteps)] + [0.0]
                x = torch.randn(members, cfine, size, size, device="cuda") * sig[0]
                for i in range(nsteps):
                    s0 = torch.full((members,), sig[i], device="cuda")
                    d0 = (x - _edm_denoise(ema, x, cond, s0)) / sig[i]
                    x1 = x + (sig[i + 1] - sig[i]) * d0
                    if sig[i + 1] > 0:
                        s1 = torch.full((members,), sig[i + 1], device="cuda")
                        d1 = (x1 - _edm_denoise(ema, x1, cond, s1)) / sig[i + 1]
                        x1 = x + (sig[i + 1] - sig[i]) * 0.5 * (d0 + d1)
                        del d1
                    x = x1
                    del d0, x1
                mae = (x - resid).abs().mean(0).mean((1, 2))
                spread = (x[:, None] - x[None]).abs().mean((0, 1)).mean((1, 2))
                torch.stack([mae - 0.5 * spread, x.std(0).mean((1, 2))]).cpu()
            del cond, resid, x


# ---------------------------------------------------------------- EA-LSTM streamflow over many basins


class _EALstm(_nn.Module):
    """Entity-aware LSTM (Kratzert et al. 2019): the input gate from the static attributes only, the forget, cell
    and output gates from the dynamic inputs and the hidden state; a linear head on the hidden state. fp32."""

    def __init__(self, ndyn, nstat, hid):
        super().__init__()
        self.hid = hid
        self.stat_gate = _nn.Linear(nstat, hid)
        self.w_ih = _nn.Linear(ndyn, 3 * hid)
        self.w_hh = _nn.Linear(hid, 3 * hid, bias=False)
        self.head = _nn.Linear(hid, 1)
        self.drop = _nn.Dropout(0.4)

    def forward(self, x, s, nlast):
        b, t, _ = x.shape
        i = torch.sigmoid(self.stat_gate(s))
        xw = self.w_ih(x)
        h = torch.zeros(b, self.hid, device=x.device)
        c = torch.zeros_like(h)
        outs = []
        for k in range(t):
            f, o, g = (xw[:, k] + self.w_hh(h)).chunk(3, 1)
            c = torch.sigmoid(f) * c + i * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            if k >= t - nlast:
                outs.append(h)
        return self.head(self.drop(torch.stack(outs, 1)))[..., 0]


@_workload("EA-LSTM streamflow model over many basins written by hand (random init; Kratzert et al. 2019, NeuralHydrology-style): 27 static catchment attributes setting the input gate, 5 daily meteorological forcings through a hand-written recurrence of hidden size 256, dropout on the head, fp32; each batch a drawn sequence length of 90-365 days and 64-512 basins cut to 96k basin-days, predicting the last 1-30 days (drawn per run), an NSE loss weighted by each basin's streamflow spread, Adam with gradient clipping, 46 steps; every batch's forcings, attributes, targets and basin spreads uploaded from reused pinned host buffers on a side stream one batch ahead (waited on by event, record_stream'ed); every 10 steps 256 held-out basins simulated over 730 days without grad (the full sequence predicted), NSE per basin read back")
def ealstm_streamflow_train(rng):
    ndyn, nstat, hid = 5, 27, _smoke(256, 16)
    model = _EALstm(ndyn, nstat, hid).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    nlast = _smoke(rng.choice([1, 7, 30]), 2)
    lengths = _smoke([90, 180, 270, 365], [6, 10])
    budget = _smoke(98304, 256)
    bmax = _smoke(512, 32)
    cap_x = budget * ndyn
    host_x = [torch.randn(cap_x).pin_memory() for _ in range(2)]
    host_s = [torch.randn(bmax * nstat).pin_memory() for _ in range(2)]
    host_y = [torch.rand(bmax * 30).pin_memory() for _ in range(2)]
    host_sd = [(torch.rand(bmax) + 0.1).pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    done = [None, None]
    ny = min(nlast, min(lengths))

    def fetch(i):
        t = rng.choice(lengths)
        b = max(1, min(rng.choice(_smoke([64, 128, 256, 512], [4, 8])), budget // t))
        s = i % 2
        if done[s] is not None:
            done[s].synchronize()
        with torch.cuda.stream(side):
            x = host_x[s][:b * t * ndyn].view(b, t, ndyn).to("cuda", non_blocking=True)
            st = host_s[s][:b * nstat].view(b, nstat).to("cuda", non_blocking=True)
            y = host_y[s][:b * ny].view(b, ny).to("cuda", non_blocking=True)
            sd = host_sd[s][:b].to("cuda", non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        done[s] = ev
        return (x, st, y, sd), ev

    steps = _smoke(46, 3)
    nxt = fetch(0)
    for step in range(steps):
        batch, ev = nxt
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        for t_ in batch:
            t_.record_stream(cur)
        if step + 1 < steps:
            nxt = fetch(step + 1)
        x, st, y, sd = batch
        model.train()
        pred = model(x, st, ny)
        loss = (((pred - y) / (sd[:, None] + 0.1)) ** 2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        del batch, x, st, y, sd, pred, loss
        if (step + 1) % _smoke(10, 3) == 0:
            model.eval()
            with torch.no_grad():
                nb, t = _smoke(256, 4), _smoke(730, 12)
                xe = torch.randn(nb, t, ndyn, device="cuda")
                se = torch.randn(nb, nstat, device="cuda")
                qobs = torch.rand(nb, t, device="cuda")
                qsim = model(xe, se, t)
                nse = 1 - ((qsim - qobs) ** 2).sum(1) / ((qobs - qobs.mean(1, keepdim=True)) ** 2).sum(1)
                nse.cpu()
            del xe, se, qobs, qsim, nse


# ---------------------------------------------------------------- Samudra-style masked ocean emulator


class _MaskedConvNeXt(_nn.Module):
    """A ConvNeXt block whose output is multiplied by the ocean mask: depthwise 7x7, GroupNorm, 1x1 to 4x, GELU,
    1x1 back, residual, mask."""

    def __init__(self, c):
        super().__init__()
        self.dw = _nn.Conv2d(c, c, 7, padding=3, groups=c)
        self.norm = _nn.GroupNorm(1, c)
        self.pw1, self.pw2 = _nn.Conv2d(c, 4 * c, 1), _nn.Conv2d(4 * c, c, 1)

    def forward(self, x, m):
        return (x + self.pw2(_F.gelu(self.pw1(self.norm(self.dw(x)))))) * m


class _OceanUNet(_nn.Module):
    def __init__(self, cin, cout, chans, nblk):
        super().__init__()
        self.inp = _nn.Conv2d(cin, chans[0], 3, padding=1)
        self.enc = _nn.ModuleList([_nn.ModuleList([_MaskedConvNeXt(c) for _ in range(nblk)]) for c in chans])
        self.downs = _nn.ModuleList([_nn.Conv2d(chans[i], chans[i + 1], 2, stride=2) for i in range(len(chans) - 1)])
        self.ups = _nn.ModuleList([_nn.ConvTranspose2d(chans[i + 1], chans[i], 2, stride=2)
                                   for i in range(len(chans) - 1)])
        self.dec = _nn.ModuleList([_nn.ModuleList([_MaskedConvNeXt(c) for _ in range(nblk)]) for c in chans[:-1]])
        self.fuse = _nn.ModuleList([_nn.Conv2d(2 * c, c, 1) for c in chans[:-1]])
        self.out = _nn.Conv2d(chans[0], cout, 1)

    def forward(self, x, masks):
        h = self.inp(x) * masks[0]
        skips = []
        for lvl, blks in enumerate(self.enc):
            for blk in blks:
                h = blk(h, masks[lvl])
            if lvl < len(self.downs):
                skips.append(h)
                h = self.downs[lvl](h) * masks[lvl + 1]
        for lvl in reversed(range(len(self.dec))):
            h = self.ups[lvl](h) * masks[lvl]
            h = self.fuse[lvl](torch.cat([h, skips.pop()], 1)) * masks[lvl]
            for blk in self.dec[lvl]:
                h = blk(h, masks[lvl])
        return self.out(h) * masks[0]


def _mask_pyramid(m, levels):
    """The ocean mask at each UNet resolution: a coarse cell is ocean only if all its fine cells are."""
    out = [m]
    for _ in range(levels - 1):
        out.append(-_F.max_pool2d(-out[-1], 2))
    return out


@_workload("Samudra-style ocean emulator with land masks written by hand (random init; Dheeshjith et al. 2024): 21 ocean variables (temperature, salinity, zonal and meridional velocity at 5 depths, sea-surface height) plus 4 atmospheric forcings and the mask in, a 3-level ConvNeXt UNet (96-192-384 channels, 2 blocks a level, depthwise 7x7, strided-conv down, transposed-conv up) with every block's output multiplied by the ocean mask at its resolution (a synthetic global mask on a near-1-degree 176 x 352 grid, coarse masks by min-pooling); basins cut from the global grid at 64 x 128 to 176 x 352 cells (drawn), batches cut to 96k cells, a two-step rollout loss (masked MSE normalised by ocean cells), bf16 autocast, AdamW with cosine decay and clipping, 290 steps; every 58 steps a 20-step masked rollout of the whole 176 x 352 grid without grad, masked RMSE per variable at every fifth step read back")
def ocean_masked_emulator_train(rng):
    cvar, cforc = 21, 4
    chans, nblk = _smoke([96, 192, 384], [8, 16, 32]), _smoke(2, 1)
    model = _OceanUNet(cvar + cforc + 1, cvar, chans, nblk).cuda()
    gh, gw = _smoke(176, 32), _smoke(352, 64)
    world = _smooth_fields(1, 1, gh, gw, coarse=16)
    ocean = torch.where(world > -0.3, 1.0, 0.0)
    regions = _smoke([(64, 128), (96, 192), (128, 256), (176, 352)], [(16, 32), (32, 64)])
    budget = _smoke(98304, 2048)
    steps = _smoke(290, 4)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))

    def evolve(x, f, m):
        return (0.98 * torch.roll(x, 1, -1) + 0.02 * f.mean(1, keepdim=True)) * m

    def run(x, f, masks):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            d = model(torch.cat([x, f, masks[0]], 1), masks)
        return x + d.float()

    for step in range(steps):
        hh, ww = rng.choice(regions)
        b = max(1, min(rng.choice([2, 4, 8, 16]), budget // (hh * ww)))
        y0 = rng.randrange(0, gh - hh + 1, 16) if gh > hh else 0
        x0 = rng.randrange(0, gw - ww + 1, 16) if gw > ww else 0
        m = ocean[:, :, y0:y0 + hh, x0:x0 + ww].expand(b, -1, -1, -1)
        masks = _mask_pyramid(m, len(chans))
        x = _smooth_fields(b, cvar, hh, ww) * m
        f1, f2 = _smooth_fields(b, cforc, hh, ww), _smooth_fields(b, cforc, hh, ww)
        t1 = evolve(x, f1, m)
        t2 = evolve(t1, f2, m)
        model.train()
        p1 = run(x, f1, masks)
        p2 = run(p1, f2, masks)
        norm = m.sum() * cvar
        loss = (((p1 - t1) ** 2).sum() + ((p2 - t2) ** 2).sum()) / (2 * norm)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        del m, masks, x, f1, f2, t1, t2, p1, p2, loss, norm
        if (step + 1) % _smoke(58, 2) == 0:
            model.eval()
            out = []
            with torch.no_grad():
                masks = _mask_pyramid(ocean, len(chans))
                x = _smooth_fields(1, cvar, gh, gw) * ocean
                tx = x
                for r in range(_smoke(20, 2)):
                    f = _smooth_fields(1, cforc, gh, gw)
                    tx = evolve(tx, f, ocean)
                    x = run(x, f, masks)
                    if r % 5 == 4 or r == _smoke(19, 1):
                        out.append((((x - tx) ** 2 * ocean).sum((0, 2, 3)) / ocean.sum()).sqrt())
                    del f
                torch.stack(out).cpu()
            del out, masks, x, tx

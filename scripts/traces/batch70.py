"""The seventieth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch69_b.py are): geophysics and the subsurface, written in torch alone, first half. Full-waveform inversion of a
2D acoustic velocity model (a fourth-order finite-difference wave-equation solver by conv2d with a sponge
absorbing boundary and a free surface, Ricker sources, receivers along the surface, time steps grouped into
segments under activation checkpointing, a drawn subset of shots a iteration, multiscale low-pass bands by rfft,
Adam on a sigmoid-bounded velocity with depth preconditioning and a total-variation penalty), a seismic-facies
segmentation U-Net trained on synthetic 2D seismic sections (folded, dipping and faulted layer-cake facies drawn on
the device, impedance contrasts convolved with a Ricker wavelet, noise; cross-entropy plus Dice, sliding-window
inference over a whole section at intervals), a PhaseNet-style earthquake phase picker (a 1D U-Net over
three-component windows, trained on synthetic P and S arrivals with Gaussian pick targets; then a continuous
monitoring service whose station chunks of drawn count and duration arrive as int16 counts in reused pinned host
buffers uploaded on a side stream one request ahead, cut into overlapping windows, stitched with triangular
weights, peaks found by max-pooling and a fixed-count topk), and a well-log imputation transformer (synthetic wells
of drawn length from piecewise-constant lithology with compaction trends, drawn missing intervals per log, a
strided convolutional stem and a pre-norm transformer over depth tokens predicting the missing logs with a
heteroscedastic loss and the lithology; then whole-field inference over long wells in stitched windows). Same
conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or, for the picking
service, from a few reused pinned host buffers), `rng` the workload's random.Random for every shape, count and
sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a
tensor's value: time steps, iterations and requests are fixed on the host, masks are multiplied or selected with
torch.where, no boolean-mask indexing; losses and metrics are read back only at logging points.
phasenet_continuous_pick_serve uses a side stream (uploads waited on by event, the tensors record_stream'ed); the
others are single-stream. The facies U-Net, the picker and the well-log transformer run under bf16 autocast; the
wave-equation solver, the FWI update and the losses are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new70.sh's header for each workload's op outputs and peak live
bytes counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py
(smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered with dummies, autocast a no-op so that
fp32 sizes are counted, SDPA taking a math path), and the CPU smoke run (RECORD_SMOKE=1).
"""

import math

import torch
import torch.utils.checkpoint

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, _sincos, rfftfreq

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- full-waveform inversion, acoustic 2D


def _ricker(f0, nt, dt):
    t = torch.arange(nt, device="cuda", dtype=torch.float32) * dt - 1.2 / f0
    a = (math.pi * f0 * t) ** 2
    return (1 - 2 * a) * torch.exp(-a)


def _lap4_kernel(dx):
    """The 5x5 cross stencil of the fourth-order Laplacian, divided by dx^2: (1, 1, 5, 5)."""
    c = [-1 / 12, 4 / 3, -5 / 2, 4 / 3, -1 / 12]
    k = [[0.0] * 5 for _ in range(5)]
    for i in range(5):
        k[2][i] += c[i]
        k[i][2] += c[i]
    return torch.tensor(k, device="cuda")[None, None] / (dx * dx)


def _sponge(nz, nx, nb, strength):
    """Damping coefficients of a quadratic sponge on the left, right and bottom edges (the top a free surface)."""
    iz = torch.arange(nz, device="cuda", dtype=torch.float32)[:, None]
    ix = torch.arange(nx, device="cuda", dtype=torch.float32)[None, :]
    dl = (nb - ix).clamp_min(0) / nb
    dr = (ix - (nx - 1 - nb)).clamp_min(0) / nb
    db = (iz - (nz - 1 - nb)).clamp_min(0) / nb
    return (strength * torch.maximum(torch.maximum(dl, dr), db) ** 2)[None, None]


def _true_velocity(rng, nz, nx):
    """A layered model with a dipping interface, a high-velocity lens and a low-velocity gas pocket."""
    z = torch.linspace(0, 1, nz, device="cuda")[:, None]
    x = torch.linspace(0, 1, nx, device="cuda")[None, :]
    v = 1600 + 2400 * z + 0 * x
    for _ in range(rng.randint(3, 5)):
        depth, dip, jump = rng.uniform(0.15, 0.9), rng.uniform(-0.15, 0.15), rng.uniform(150, 450)
        v = v + jump * torch.sigmoid((z - depth - dip * (x - 0.5)) * 80)
    cx, cz = rng.uniform(0.25, 0.75), rng.uniform(0.3, 0.6)
    v = v + 500 * torch.exp(-((x - cx) ** 2 / 0.01 + (z - cz) ** 2 / 0.004))
    gx, gz = rng.uniform(0.2, 0.8), rng.uniform(0.2, 0.45)
    v = v - 400 * torch.exp(-((x - gx) ** 2 / 0.004 + (z - gz) ** 2 / 0.002))
    return v.clamp(1500, 4400)[None, None]


@_workload("full-waveform inversion of a 2D acoustic velocity model written by hand in torch (no learning): a 160x400 grid at 20 m, a fourth-order finite-difference wave-equation solver (Laplacian by conv2d, second-order leapfrog in time, 2.5 ms, 480 steps), a quadratic sponge on the sides and bottom and a free surface, Ricker sources; a drawn layered true model with a dipping interface, a fast lens and a gas pocket gives observed data for 32 shots; each iteration 16 shots (drawn) are modelled with the time steps in 20 segments of 24 under activation checkpointing, the traces low-pass filtered by rfft in 3 multiscale bands (4, 7, 11 Hz), a normalised L2 misfit plus a total-variation penalty, the gradient preconditioned by depth, Adam on a sigmoid-bounded velocity, 6-7 iterations a band (drawn), fp32; the misfit and the model error read back every iteration")
def fwi_acoustic_checkpoint_opt(rng):
    nz, nx = _smoke(160, 24), _smoke(400, 48)
    dx, dt = 20.0, 0.0025
    nt, seg = _smoke(480, 12), _smoke(24, 4)
    nshots, per_iter = _smoke(32, 4), _smoke(16, 2)
    vmin, vmax = 1400.0, 4500.0
    k5 = _lap4_kernel(dx)
    damp = _sponge(nz, nx, _smoke(30, 4), 0.12)
    keep = 1 - damp  # multiplies the previous field
    inv = 1 / (1 + damp)
    src_z, rec_z = 2, 2
    wav = _ricker(rng.uniform(8.0, 11.0), nt, dt) * (dt * dt) * 1e3
    x0, x1 = _smoke(35, 5), nx - _smoke(36, 6)
    shot_x = [int(round(x0 + (x1 - x0) * i / (nshots - 1))) for i in range(nshots)]

    def source_mask(xs):
        m = torch.zeros(len(xs), 1, nz, nx, device="cuda")
        m[torch.arange(len(xs), device="cuda"), 0, src_z, torch.tensor(xs, device="cuda")] = 1.0
        return m

    def segment(t0, t1, srcm):
        def run(p, pold, v2):
            traces = []
            for t in range(t0, t1):
                lap = _F.conv2d(p, k5, padding=2)
                pnew = (2 * p - keep * pold + v2 * lap + srcm * wav[t]) * inv
                traces.append(pnew[:, 0, rec_z, ::2])
                pold, p = p, pnew
            return p, pold, torch.stack(traces, -1)
        return run

    def model(vel, srcm, checkpointed):
        v2 = (vel * dt) ** 2
        p = torch.zeros(srcm.shape[0], 1, nz, nx, device="cuda")
        pold = torch.zeros_like(p)
        out = []
        for t0 in range(0, nt, seg):
            fn = segment(t0, min(nt, t0 + seg), srcm)
            if checkpointed:
                p, pold, tr = torch.utils.checkpoint.checkpoint(fn, p, pold, v2, use_reentrant=False,
                                                                preserve_rng_state=False)
            else:
                p, pold, tr = fn(p, pold, v2)
            out.append(tr)
        return torch.cat(out, -1)  # (shots, receivers, nt)

    freqs = rfftfreq(nt, dt)

    def lowpass(d, fmax):
        taper = torch.exp(-(freqs / fmax) ** 4)
        return torch.fft.irfft(torch.fft.rfft(d, dim=-1) * taper, n=nt, dim=-1)

    vtrue = _true_velocity(rng, nz, nx)
    with torch.no_grad():
        obs_all = model(vtrue, source_mask(shot_x), False)
    # the starting model: a smoothed version of the true one (a tomography result)
    smooth = torch.ones(1, 1, 21, 21, device="cuda") / 441
    vinit = _F.conv2d(_F.pad(vtrue, (10, 10, 10, 10), mode="replicate"), smooth)
    vinit = _F.avg_pool2d(_F.pad(vinit, (10, 10, 10, 10), mode="replicate"), 21, stride=1)
    theta = torch.logit((vinit - vmin) / (vmax - vmin)).detach().requires_grad_(True)
    opt = torch.optim.Adam([theta], lr=0.03)
    depth_pre = (torch.linspace(0.2, 1.0, nz, device="cuda") ** 1.5)[None, None, :, None]
    tv_weight = 1e-4
    for fmax in (4.0, 7.0, 11.0):
        obs_band = lowpass(obs_all, fmax)
        for _ in range(rng.randint(_smoke(6, 1), _smoke(7, 1))):
            picks = sorted(rng.sample(range(nshots), per_iter))
            srcm = source_mask([shot_x[i] for i in picks])
            obs = obs_band.index_select(0, torch.tensor(picks, device="cuda"))
            vel = vmin + (vmax - vmin) * torch.sigmoid(theta)
            syn = lowpass(model(vel, srcm, True), fmax)
            misfit = 0.5 * ((syn - obs) ** 2).sum() / (obs ** 2).sum().clamp_min(1e-20)
            tv = (vel[..., 1:, :] - vel[..., :-1, :]).abs().mean() + (vel[..., :, 1:] - vel[..., :, :-1]).abs().mean()
            loss = misfit + tv_weight * tv
            opt.zero_grad(set_to_none=True)
            loss.backward()
            with torch.no_grad():
                theta.grad.mul_(depth_pre)
                theta.grad[..., :3, :] = 0  # no update at the sources and receivers
            opt.step()
            err = (vel.detach() - vtrue).abs().mean()
            torch.stack([misfit.detach(), err]).tolist()
            del srcm, obs, vel, syn, misfit, tv, loss, err
        del obs_band


# ---------------------------------------------------------------- seismic-facies segmentation


def _facies_sections(rng, b, h, w, nf):
    """Synthetic seismic sections: layer-cake facies with folded, dipping horizons and one normal fault a section,
    impedances drawn per facies, reflectivity convolved along depth with a Ricker wavelet, noise. Returns the
    (b, 2, h, w) input (amplitude and relative depth) and the (b, h, w) facies labels."""
    z = torch.linspace(0, 1, h, device="cuda")[None, None, :, None]
    x = torch.linspace(0, 1, w, device="cuda")[None, None, None, :]
    base = torch.sort(torch.rand(b, nf - 1, device="cuda") * 0.9 + 0.05, dim=1).values[..., None, None]
    amp = 0.05 * torch.rand(b, 1, 1, 1, device="cuda")
    freq = 1 + 4 * torch.rand(b, 1, 1, 1, device="cuda")
    phase = 2 * math.pi * torch.rand(b, 1, 1, 1, device="cuda")
    dip = (torch.rand(b, 1, 1, 1, device="cuda") - 0.5) * 0.3
    horizons = base + amp * torch.sin(2 * math.pi * freq * x + phase) + dip * (x - 0.5)  # (b, nf-1, 1, w)
    label = (z > horizons).sum(1)  # (b, h, w)
    # a normal fault: the hanging wall (right of a dipping plane) dropped by a drawn throw
    fx, slope, throw = rng.uniform(0.3, 0.7), rng.uniform(-0.3, 0.3), rng.randint(2, max(3, h // 12))
    hang = x[:, 0] > fx + slope * (z[:, 0] - 0.5)  # (1, h, w)
    label = torch.where(hang, torch.roll(label, throw, dims=1), label)
    imp = 2 + 4 * torch.rand(b, nf, device="cuda")
    imap = torch.gather(imp, 1, label.flatten(1)).view(b, h, w)
    refl = (imap[:, 1:] - imap[:, :-1]) / (imap[:, 1:] + imap[:, :-1])
    refl = _F.pad(refl, (0, 0, 1, 0))
    t = torch.arange(-15, 16, device="cuda", dtype=torch.float32)
    f0 = rng.uniform(0.06, 0.12)
    a = (math.pi * f0 * t) ** 2
    wavelet = ((1 - 2 * a) * torch.exp(-a))[None, None]
    trace = refl.transpose(1, 2).reshape(b * w, 1, h)
    seis = _F.conv1d(trace, wavelet, padding=15).view(b, w, h).transpose(1, 2)
    seis = seis + 0.02 * torch.randn_like(seis)
    seis = seis / seis.std(dim=(1, 2), keepdim=True).clamp_min(1e-6)
    x_in = torch.stack([seis, z[:, 0].expand(b, h, w)], 1)
    return x_in, label


def _cbr(i, o):
    return _nn.Sequential(_nn.Conv2d(i, o, 3, padding=1, bias=False), _nn.BatchNorm2d(o), _nn.ReLU(inplace=True),
                          _nn.Conv2d(o, o, 3, padding=1, bias=False), _nn.BatchNorm2d(o), _nn.ReLU(inplace=True))


class _FaciesUNet(_nn.Module):
    def __init__(self, cin, ncls, c):
        super().__init__()
        ch = [c, 2 * c, 4 * c, 8 * c]
        self.enc = _nn.ModuleList([_cbr(cin, ch[0]), _cbr(ch[0], ch[1]), _cbr(ch[1], ch[2]), _cbr(ch[2], ch[3])])
        self.mid = _cbr(ch[3], 2 * ch[3])
        self.up = _nn.ModuleList([_nn.ConvTranspose2d(2 * ch[3], ch[3], 2, stride=2),
                                  _nn.ConvTranspose2d(ch[3], ch[2], 2, stride=2),
                                  _nn.ConvTranspose2d(ch[2], ch[1], 2, stride=2),
                                  _nn.ConvTranspose2d(ch[1], ch[0], 2, stride=2)])
        self.dec = _nn.ModuleList([_cbr(2 * ch[3], ch[3]), _cbr(2 * ch[2], ch[2]), _cbr(2 * ch[1], ch[1]),
                                   _cbr(2 * ch[0], ch[0])])
        self.head = _nn.Conv2d(ch[0], ncls, 1)

    def forward(self, x):
        skips = []
        for i, e in enumerate(self.enc):
            x = e(x if i == 0 else _F.max_pool2d(x, 2))
            skips.append(x)
        x = self.mid(_F.max_pool2d(x, 2))
        for up, dec, s in zip(self.up, self.dec, reversed(skips)):
            x = dec(torch.cat([up(x), s], 1))
        return self.head(x)


@_workload("seismic-facies segmentation U-Net written by hand (random init): synthetic 2D seismic sections drawn on the device (7 facies in a layer cake with folded, dipping horizons and a normal fault of drawn throw per batch, impedances drawn per facies, reflectivity convolved along depth with a Ricker wavelet of drawn frequency, noise), patches of 128, 192 or 256 samples square (drawn per step) in batches fitting a budget of 2^20 samples; a 4-level U-Net (32-256 channels, BatchNorm, transposed-convolution upsampling) on amplitude and relative depth, channels_last, bf16 autocast, class-weighted cross-entropy plus soft Dice, AdamW with a one-cycle schedule, 660 steps; every 165 steps a whole section of 384x1,024 samples segmented in overlapping 256-sample patches (stride 128) stitched by summed softmax, the pixel accuracy read back")
def seismic_facies_unet_train(rng):
    nf, c = 7, _smoke(32, 4)
    model = _FaciesUNet(2, nf, c).cuda().to(memory_format=torch.channels_last)
    steps = _smoke(660, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=2e-3, total_steps=steps)
    cw = torch.tensor([1.0, 1.2, 1.0, 1.5, 1.0, 1.3, 2.0], device="cuda")
    budget = _smoke(1 << 20, 2 * 32 * 32)
    for step in range(steps):
        model.train()
        p = rng.choice(_smoke([128, 192, 256], [32]))
        b = max(1, budget // (p * p))
        x, y = _facies_sections(rng, b, p, p, nf)
        x = x.contiguous(memory_format=torch.channels_last)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x)
        logits = logits.float()
        ce = _F.cross_entropy(logits, y, weight=cw)
        prob = logits.softmax(1)
        onehot = torch.zeros_like(prob).scatter_(1, y[:, None], 1.0)
        inter = (prob * onehot).sum((0, 2, 3))
        dice = 1 - ((2 * inter + 1) / (prob.sum((0, 2, 3)) + onehot.sum((0, 2, 3)) + 1)).mean()
        loss = ce + dice
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        del x, y, logits, prob, onehot, inter
        if step % 10 == 0:
            torch.stack([ce.detach(), dice.detach()]).tolist()
        del ce, dice, loss
        if (step + 1) % _smoke(165, 3) == 0:
            model.eval()
            hs, ws, ps, st = _smoke(384, 64), _smoke(1024, 96), _smoke(256, 32), _smoke(128, 16)
            with torch.no_grad():
                sec, lab = _facies_sections(rng, 1, hs, ws, nf)
                acc = torch.zeros(1, nf, hs, ws, device="cuda")
                pos = [(i, j) for i in range(0, hs - ps + 1, st) for j in range(0, ws - ps + 1, st)]
                for k in range(0, len(pos), 8):
                    chunk = pos[k: k + 8]
                    patches = torch.cat([sec[:, :, i: i + ps, j: j + ps] for i, j in chunk], 0)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        pr = model(patches.contiguous(memory_format=torch.channels_last)).float().softmax(1)
                    for n, (i, j) in enumerate(chunk):
                        acc[:, :, i: i + ps, j: j + ps] += pr[n: n + 1]
                    del patches, pr
                pixel_acc = (acc.argmax(1) == lab).float().mean()
                float(pixel_acc)
                del sec, lab, acc, pixel_acc


# ---------------------------------------------------------------- earthquake phase picking (PhaseNet-like)


class _PickerUNet(_nn.Module):
    """PhaseNet's shape: a 1D U-Net of kernel-7 convolutions, stride-4 downsampling, transposed-convolution
    upsampling with skips, softmax over noise, P and S."""

    def __init__(self, c, depth):
        super().__init__()
        ch = [c * 2 ** i for i in range(depth)]

        def blk(i, o):
            return _nn.Sequential(_nn.Conv1d(i, o, 7, padding=3, bias=False), _nn.BatchNorm1d(o), _nn.ReLU())

        self.inp = blk(3, ch[0])
        self.down = _nn.ModuleList(_nn.Sequential(blk(ch[i], ch[i]), _nn.Conv1d(ch[i], ch[i + 1], 7, stride=4,
                                                                                 padding=3), _nn.BatchNorm1d(ch[i + 1]),
                                                  _nn.ReLU()) for i in range(depth - 1))
        self.bottom = blk(ch[-1], ch[-1])
        self.up = _nn.ModuleList(_nn.ConvTranspose1d(ch[i + 1], ch[i], 8, stride=4, padding=2)
                                 for i in reversed(range(depth - 1)))
        self.dec = _nn.ModuleList(blk(2 * ch[i], ch[i]) for i in reversed(range(depth - 1)))
        self.out = _nn.Conv1d(ch[0], 3, 1)

    def forward(self, x):
        x = self.inp(x)
        skips = []
        for d in self.down:
            skips.append(x)
            x = d(x)
        x = self.bottom(x)
        for up, dec, s in zip(self.up, self.dec, reversed(skips)):
            x = dec(torch.cat([up(x), s], 1))
        return self.out(x)


def _quake_windows(b, t):
    """Three-component windows with a P and an S arrival (an event in 80 % of them), and Gaussian pick targets:
    (b, 3, t) waveforms and (b, 3, t) noise/P/S probabilities."""
    tt = torch.arange(t, device="cuda", dtype=torch.float32)[None, None]
    has = (torch.rand(b, 1, 1, device="cuda") < 0.8).float()
    tp = (torch.rand(b, 1, 1, device="cuda") * 0.55 + 0.05) * t
    ts = tp + (torch.rand(b, 1, 1, device="cuda") * 0.3 + 0.03) * t
    fp = (2 + 6 * torch.rand(b, 1, 1, device="cuda")) / 100
    fs = (0.8 + 3 * torch.rand(b, 1, 1, device="cuda")) / 100
    dp, ds = tt - tp, tt - ts
    envp = (dp >= 0).float() * torch.exp(-dp.clamp_min(0) / (40 + 120 * torch.rand(b, 1, 1, device="cuda")))
    envs = (ds >= 0).float() * torch.exp(-ds.clamp_min(0) / (80 + 250 * torch.rand(b, 1, 1, device="cuda")))
    pol_p = torch.tensor([1.0, 0.35, 0.35], device="cuda")[None, :, None] * torch.randn(b, 3, 1, device="cuda")
    pol_s = torch.tensor([0.3, 1.0, 1.0], device="cuda")[None, :, None] * torch.randn(b, 3, 1, device="cuda")
    amp = torch.exp(torch.randn(b, 1, 1, device="cuda"))
    sig = amp * has * (envp * torch.sin(2 * math.pi * fp * dp) * pol_p +
                       2.0 * envs * torch.sin(2 * math.pi * fs * ds) * pol_s)
    noise = _F.avg_pool1d(torch.randn(b, 3, t + 4, device="cuda"), 5, stride=1) * (0.1 + 0.5 * torch.rand(
        b, 1, 1, device="cuda"))
    x = sig + noise
    x = (x - x.mean(-1, keepdim=True)) / x.std(-1, keepdim=True).clamp_min(1e-6)
    yp = has * torch.exp(-dp ** 2 / (2 * 20.0 ** 2))
    ys = has * torch.exp(-ds ** 2 / (2 * 20.0 ** 2))
    y = torch.cat([(1 - yp - ys).clamp_min(0), yp, ys], 1)
    return x, y


@_workload("earthquake phase picking and detection service in the manner of PhaseNet written by hand (random init): a 1D U-Net (16-256 channels over 5 levels, kernel-7 convolutions, stride-4 downsampling, BatchNorm, transposed-convolution upsampling with skips) over three-component windows of 3,072 samples, trained on synthetic P and S arrivals (decaying wavelets of drawn frequency, polarisation and amplitude over coloured noise, 20 % noise-only) with Gaussian pick targets, soft-label cross-entropy, bf16 autocast, AdamW, 200 steps of 64-160 windows (drawn); then a continuous monitoring service of 1,700-1,900 requests (drawn) of 2-48 stations (drawn) by 6,144-24,576 samples (drawn, 100 Hz) arriving as int16 counts in 2 reused pinned host buffers uploaded on a side stream one request ahead (waited on by event, record_stream'ed), cut into 3,072-sample windows at half overlap, normalised per window, picked under bf16 autocast, stitched with triangular weights, peaks by max-pooling and 8 per station and phase by topk; each request's picks read back")
def phasenet_continuous_pick_serve(rng):
    win, hop = _smoke(3072, 256), _smoke(1536, 128)
    model = _PickerUNet(_smoke(16, 4), _smoke(5, 3)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    for step in range(_smoke(200, 3)):
        model.train()
        b = rng.randint(_smoke(64, 2), _smoke(160, 4))
        x, y = _quake_windows(b, win)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x)
        loss = -(y * logits.float().log_softmax(1)).sum(1).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del x, y, logits
        if step % 20 == 0:
            float(loss)
        del loss

    model.eval()
    smax, tmax = _smoke(48, 3), _smoke(24576, 1024)
    host = [torch.randint(-3000, 3000, (smax * 3 * tmax,), dtype=torch.int16).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    tri = 1 - (torch.arange(win, device="cuda", dtype=torch.float32) - (win - 1) / 2).abs() / (win / 2)
    nreq = rng.randint(_smoke(1700, 3), _smoke(1900, 4))
    plan = [(rng.randint(2, smax), rng.randint(4, tmax // hop) * hop) for _ in range(nreq)]
    nxt = up.upload(0, plan[0][0] * 3 * plan[0][1])
    with torch.no_grad():
        for i in range(nreq):
            s, t = plan[i]
            z, ev = nxt
            if i + 1 < nreq:
                nxt = up.upload(i + 1, plan[i + 1][0] * 3 * plan[i + 1][1])
            SideUploads.ready(ev, z)
            x = z.view(s, 3, t).float()
            nw = (t - win) // hop + 1
            w = x.unfold(-1, win, hop).permute(0, 2, 1, 3).reshape(s * nw, 3, win)
            w = (w - w.mean(-1, keepdim=True)) / w.std(-1, keepdim=True).clamp_min(1e-6)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                prob = model(w).float().softmax(1)
            prob = (prob * tri).view(s, nw, 3, win)
            first = prob[..., :hop].permute(0, 2, 1, 3).reshape(s, 3, nw * hop)
            second = prob[..., hop:].permute(0, 2, 1, 3).reshape(s, 3, nw * hop)
            full = _F.pad(first, (0, hop)) + _F.pad(second, (hop, 0))  # (s, 3, t)
            ps = full[:, 1:]
            peak = ps * (ps == _F.max_pool1d(ps, 51, stride=1, padding=25)).float() * (ps > 0.3).float()
            top = peak.topk(8, dim=-1)
            torch.cat([top.values, top.indices.float()], -1).tolist()
            del z, ev, x, w, prob, first, second, full, ps, peak, top


# ---------------------------------------------------------------- well-log imputation over depth


def _synthetic_wells(b, n, nlog, nlith, props):
    """Wells of n samples: beds of drawn lithology (boundaries a Bernoulli process), each log a lithology's value
    plus a compaction trend with depth and smoothed noise: logs (b, nlog, n), lithology (b, n), depth (b, n)."""
    top = torch.rand(b, 1, device="cuda") * 2000 + 500
    depth = top + 0.15 * torch.arange(n, device="cuda", dtype=torch.float32)[None]
    bed = (torch.rand(b, n, device="cuda") < 1 / 80).long().cumsum(1).clamp_max(n - 1)
    bed_lith = torch.randint(0, nlith, (b, n), device="cuda")
    lith = torch.gather(bed_lith, 1, bed)
    logs = _F.embedding(lith, props).transpose(1, 2)  # (b, nlog, n)
    trend = torch.linspace(-0.5, 0.5, nlog, device="cuda")[None, :, None] * (depth[:, None] / 3000)
    noise = _F.avg_pool1d(torch.randn(b, nlog, n + 8, device="cuda"), 9, stride=1) * 0.3
    return logs + trend + noise, lith, depth


def _missing_mask(b, nlog, n):
    """1 where a log is present: one missing interval of drawn position and length per log, and 10 % of logs
    missing throughout."""
    pos = torch.arange(n, device="cuda", dtype=torch.float32)[None, None]
    start = torch.rand(b, nlog, 1, device="cuda") * n
    length = (torch.rand(b, nlog, 1, device="cuda") * 0.5 + 0.1) * n
    gap = ((pos >= start) & (pos < start + length)).float()
    whole = (torch.rand(b, nlog, 1, device="cuda") < 0.1).float()
    return (1 - gap) * (1 - whole)


class _WellLogNet(_nn.Module):
    def __init__(self, nlog, d, heads, layers, nlith, patch):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv1d(2 * nlog, d // 2, 5, padding=2), _nn.GELU(),
                                   _nn.Conv1d(d // 2, d, patch, stride=patch))
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.up = _nn.ConvTranspose1d(d, d // 2, patch, stride=patch)
        self.refine = _nn.Sequential(_nn.Conv1d(d // 2 + 2 * nlog, d // 2, 5, padding=2), _nn.GELU())
        self.head_logs = _nn.Conv1d(d // 2, 2 * nlog, 1)
        self.head_lith = _nn.Conv1d(d // 2, nlith, 1)
        self.d, self.patch = d, patch

    def forward(self, logs, mask, depth):
        x = torch.cat([logs * mask, mask], 1)
        h = self.stem(x).transpose(1, 2)  # (b, tokens, d)
        b, t, d = h.shape
        pos = depth[:, :: self.patch] / 0.15
        h = h + _sincos(pos.reshape(-1), d).view(b, t, d).to(h.dtype)
        for blk in self.blocks:
            h = blk(h)
        h = self.up(self.norm(h).transpose(1, 2))
        h = self.refine(torch.cat([h, x.to(h.dtype)], 1))
        mu, logvar = self.head_logs(h).chunk(2, 1)
        return mu, logvar, self.head_lith(h)


@_workload("well-log imputation and lithology model written by hand (random init): synthetic wells of 1,024, 2,048 or 3,072 samples at 0.15 m (drawn per step) in batches fitting a budget of 32,768 samples, 6 logs (gamma ray, density, neutron, sonic, resistivity, PE) from piecewise-constant lithology (8 classes, beds by a Bernoulli process) with compaction trends and smoothed noise, one missing interval of drawn position and length per log and 10 % of logs missing throughout; a strided convolutional stem (4 samples a token), sinusoidal depth encodings, a 6-layer pre-norm transformer (width 256, 8 heads), transposed-convolution upsampling and heads for the missing logs' means and log-variances (heteroscedastic Gaussian loss on the missing samples) and the lithology (cross-entropy), bf16 autocast, AdamW with warmup and cosine decay, gradient clipping, 420 steps; every 140 steps a field of 6-12 wells (drawn) of 4,096-16,384 samples (drawn) imputed in 2,048-sample windows at half overlap stitched with triangular weights, the imputation error and mean predicted uncertainty read back per well")
def well_log_imputation_train(rng):
    nlog, nlith, patch = 6, 8, 4
    d, heads, layers = _smoke(256, 32), _smoke(8, 2), _smoke(6, 1)
    model = _WellLogNet(nlog, d, heads, layers, nlith, patch).cuda()
    props = torch.randn(nlith, nlog, device="cuda")
    steps = _smoke(420, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.05)
    warm = max(1, steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * 0.5 * (1 + math.cos(math.pi * min(1.0, s / steps))))
    budget = _smoke(32768, 256)
    for step in range(steps):
        model.train()
        n = rng.choice(_smoke([1024, 2048, 3072], [64, 128]))
        b = max(1, budget // n)
        logs, lith, depth = _synthetic_wells(b, n, nlog, nlith, props)
        mask = _missing_mask(b, nlog, n)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            mu, logvar, lith_logits = model(logs, mask, depth)
        miss = 1 - mask
        nll = (((mu.float() - logs) ** 2) * torch.exp(-logvar.float()) + logvar.float()) * miss
        loss = nll.sum() / miss.sum().clamp_min(1) + 0.5 * _F.cross_entropy(lith_logits.float(), lith)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        del logs, lith, depth, mask, mu, logvar, lith_logits, miss, nll
        if step % 20 == 0:
            float(loss)
        del loss
        if (step + 1) % _smoke(140, 3) == 0:
            model.eval()
            win, hop = _smoke(2048, 64), _smoke(1024, 32)
            tri = 1 - (torch.arange(win, device="cuda", dtype=torch.float32) - (win - 1) / 2).abs() / (win / 2)
            with torch.no_grad():
                for _ in range(rng.randint(_smoke(6, 1), _smoke(12, 2))):
                    n = rng.randint(_smoke(4, 3), _smoke(16, 4)) * hop
                    logs, lith, depth = _synthetic_wells(1, n, nlog, nlith, props)
                    mask = _missing_mask(1, nlog, n)
                    nw = (n - win) // hop + 1
                    lw = logs.unfold(-1, win, hop)[0].transpose(0, 1)  # (nw, nlog, win)
                    mw = mask.unfold(-1, win, hop)[0].transpose(0, 1)
                    dw = depth.unfold(-1, win, hop)[0]
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        mu, logvar, _ = model(lw, mw, dw)
                    out = torch.cat([mu.float(), logvar.float()], 1) * tri  # (nw, 2 nlog, win)
                    first = out[..., :hop].permute(1, 0, 2).reshape(1, 2 * nlog, nw * hop)
                    second = out[..., hop:].permute(1, 0, 2).reshape(1, 2 * nlog, nw * hop)
                    full = _F.pad(first, (0, hop)) + _F.pad(second, (hop, 0))
                    mu_f, lv_f = full.chunk(2, 1)
                    miss = 1 - mask
                    err = (((mu_f - logs) ** 2) * miss).sum() / miss.sum().clamp_min(1)
                    unc = (torch.exp(0.5 * lv_f) * miss).sum() / miss.sum().clamp_min(1)
                    torch.stack([err, unc]).tolist()
                    del logs, lith, depth, mask, lw, mw, dw, mu, logvar, out, first, second, full, miss, err, unc

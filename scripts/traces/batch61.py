"""The sixty-first batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch59_b.py are): computer graphics, games and character animation on the GPU, written in torch alone, first half.
A phase-functioned neural network character controller in the manner of Holden et al.'s PFNN (mocap clips of
240-2,400 frames drawn, made on the device as smooth trajectories with a gait phase, loaded in three shards one after
another; three-layer networks whose weights are Catmull-Rom blends of four control weight sets chosen by each frame's
phase; evaluations that roll 64 characters forward autoregressively for a drawn number of frames), text-conditioned
human motion diffusion in the manner of MDM (a frozen text encoder, a transformer over 263-dim joint features of
40-196 frames drawn, padding masks, x0 prediction with a velocity loss and condition dropout, then DDIM sampling with
classifier-free guidance for prompts of drawn motion length), a kernel-predicting Monte-Carlo path-tracing denoiser
in the manner of KPCN (diffuse and specular CNNs over noisy radiance with G-buffer features and gradients, crops of
drawn size and spp, 15x15 per-pixel kernels applied by unfold; evaluations on frame sequences at drawn resolutions,
tiled, with temporal reprojection of the previous output by motion vectors), and a DLSS-style neural upscaler for
game frames (a short fine-tuning phase on crops, then four play sessions at drawn render resolutions and 2x or 3x
scale, each frame's colour, depth and motion vectors uploaded from reused pinned host buffers on a side stream one
frame ahead, the previous high-resolution output warped by the motion vectors, a small U-Net predicting blend weights
and a residual, pixel-shuffled to the output resolution). Same conventions as the earlier batches: nothing
downloaded, data drawn at random on the device (or, for the upscaler service, from a few reused pinned host
buffers), `rng` the workload's random.Random for every shape, count and sampled choice, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: counts are fixed
on the host (rollout frames, sampling steps, tiles, session frames), masks multiplied or added in, no boolean-mask
indexing; losses and metrics are read back only at logging points (the upscaler service reads back each 30th
frame's statistics). game_frame_upscale_serve uses a side stream (uploads waited on by event, the tensors
record_stream'ed); the others are single-stream. The motion transformer, the denoiser CNNs and the upscaler U-Net run
under bf16 autocast; the PFNN, the kernel application, the reprojection, the diffusion arithmetic and the losses are
fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch61_b.py's header says the same of its half): every workload of this half was
run on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with the helper's runner
(/tmp/b61/meta_run.py, not committed, a copy of /work/notes/meta_run.py: smoke_cpu.py's patching with "cuda" mapped to
"meta", readbacks answered with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking a math path,
streams, events and pinned memory no-ops; boolean-mask indexing, which the meta device cannot size, is avoided), its
op outputs counted there (events about 1.8x that count) and its peak live bytes tracked: pfnn_phase_controller_train
348,649 op outputs, peak 0.79 GB; mdm_motion_diffusion_train 352,380, 3.33 GB; kpcn_pathtrace_denoise_train 334,000,
1.10 GB; game_frame_upscale_serve 307,274, 2.84 GB; all four run whole (peaks in fp32 where autocast would take bf16;
the motion transformer's peak mostly the attention matrices of the math path, far above what flash attention holds on
the GPU). record_new61.sh's header has them too, with the runs that led to resizes. The CPU smoke run (RECORD_SMOKE=1)
ran all four.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _smooth_noise(shape_lowres, size, mode="bilinear", dev="cuda"):
    """Smooth random fields: random values on a coarse grid interpolated to size."""
    z = torch.randn(*shape_lowres, device=dev)
    return _F.interpolate(z, size=size, mode=mode, align_corners=False)


# ---------------------------------------------------------------- phase-functioned character controller (PFNN)


class _PFNN(_nn.Module):
    """Three layers whose weights are Catmull-Rom blends of four control sets, chosen by each frame's phase."""

    def __init__(self, din, hidden, dout, ctrl=4, drop=0.3):
        super().__init__()
        dims = [(din, hidden), (hidden, hidden), (hidden, dout)]
        self.w = _nn.ParameterList(_nn.Parameter(torch.randn(ctrl, a, b) * math.sqrt(2.0 / (a + b))) for a, b in dims)
        self.bias = _nn.ParameterList(_nn.Parameter(torch.zeros(ctrl, b)) for _, b in dims)
        self.ctrl, self.drop = ctrl, drop

    def coeffs(self, phase):
        # phase (B,) in [0, 2 pi): the four control points around it and their cubic Catmull-Rom weights
        p = phase * (self.ctrl / (2 * math.pi))
        k1 = torch.floor(p)
        t = (p - k1)[:, None]
        k1 = k1.long()
        idx = torch.stack([k1 - 1, k1, k1 + 1, k1 + 2], 1) % self.ctrl
        t2, t3 = t * t, t * t * t
        cw = torch.cat([-0.5 * t3 + t2 - 0.5 * t, 1.5 * t3 - 2.5 * t2 + 1, -1.5 * t3 + 2 * t2 + 0.5 * t,
                        0.5 * t3 - 0.5 * t2], 1)
        return torch.zeros(phase.shape[0], self.ctrl, device=phase.device).scatter_add_(1, idx, cw)

    def forward(self, x, phase):
        c = self.coeffs(phase)
        h = x
        for i, (w, b) in enumerate(zip(self.w, self.bias)):
            if self.training:
                h = _F.dropout(h, self.drop)
            k, a, o = w.shape
            y = (h @ w.permute(1, 0, 2).reshape(a, k * o)).view(-1, k, o)
            h = (y * c[..., None]).sum(1) + c @ b
            if i < 2:
                h = _F.elu(h)
        return h


def _mocap_shard(rng, nclips, lmin, lmax, din, dout, teacher, dev="cuda"):
    """nclips clips of drawn length made on the device: smooth joint/trajectory features, a gait phase advancing at a
    clip's own rate, next-frame targets from a fixed random teacher; concatenated, with per-shard normalisation."""
    xs, ys, ps = [], [], []
    for _ in range(nclips):
        n = rng.randint(lmin, lmax)
        x = _F.interpolate(torch.randn(1, din, n // 8 + 2, device=dev), size=n, mode="linear", align_corners=False)
        x = x[0].t().contiguous()
        rate = 2 * math.pi / rng.uniform(24, 60)
        phase = torch.cumsum(rate * (1 + 0.2 * torch.randn(n, device=dev).clamp(-2, 2)), 0) % (2 * math.pi)
        a, bb = teacher
        y = torch.tanh(x @ a) * torch.cos(phase)[:, None] + 0.3 * torch.tanh(x @ bb)
        y = torch.cat([y[:, :-1], (rate * torch.ones(n, 1, device=dev))], 1)  # last column: the phase increment
        xs.append(x), ys.append(y), ps.append(phase)
    x, y, p = torch.cat(xs), torch.cat(ys), torch.cat(ps)
    mx, sx = x.mean(0), x.std(0) + 1e-3
    my, sy = y.mean(0), y.std(0) + 1e-3
    return (x - mx) / sx, (y - my) / sy, p


@_workload("phase-functioned neural network character controller written by hand in the manner of Holden et al.'s PFNN (random init): mocap clips of 240-2,400 frames (drawn) made on the device as smooth 342-dim trajectory and joint features with a gait phase advancing at a drawn rate and 311-dim next-frame targets from a fixed random teacher, loaded in 3 shards of 40-64 clips (drawn) one after another, each normalised and replacing the last; a 3-layer PFNN (hidden 512, ELU, dropout 0.3) whose weights are Catmull-Rom blends of 4 control weight sets chosen per frame by its phase; batches of 256-2,048 frames (drawn); fp32, AdamW with warm restarts, 640 steps a shard; after each shard an evaluation rolling 64 characters forward autoregressively for 400-1,200 frames (drawn; each frame's pose fed back, the phase advanced by the predicted increment, no grad), the drift read back")
def pfnn_phase_controller_train(rng):
    din, dout, hidden = _smoke(342, 24), _smoke(311, 20), _smoke(512, 32)
    model = _PFNN(din, hidden, dout).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=2.5e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, _smoke(140, 2))
    teacher = (torch.randn(din, dout, device="cuda") / math.sqrt(din),
               torch.randn(din, dout, device="cuda") / math.sqrt(din))
    steps = _smoke(640, 3)
    for shard in range(3):
        x, y, phase = _mocap_shard(rng, rng.randint(_smoke(40, 2), _smoke(64, 3)), _smoke(240, 16), _smoke(2400, 48),
                                   din, dout, teacher)
        total = x.shape[0]
        model.train()
        for step in range(steps):
            b = rng.choice(_smoke([256, 512, 1024, 2048], [8, 16]))
            idx = torch.randint(0, total, (b,), device="cuda")
            pred = model(x[idx], phase[idx])
            loss = _F.mse_loss(pred, y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            del idx, pred
            if step % 50 == 0:
                float(loss)
        model.eval()
        with torch.no_grad():
            nchar, frames = _smoke(64, 4), rng.randint(_smoke(400, 3), _smoke(1200, 5))
            start = torch.randint(0, total, (nchar,), device="cuda")
            state, ph = x[start].clone(), phase[start].clone()
            drift = torch.zeros(nchar, device="cuda")
            njoint = min(dout - 1, din)
            for f in range(frames):
                out = model(state, ph)
                # the predicted pose becomes the next input's joint part; the user's trajectory goal is blended in
                goal = torch.randn(nchar, din - njoint, device="cuda") * 0.1 if din > njoint else None
                nxt = out[:, :njoint]
                state = torch.cat([nxt, 0.9 * state[:, njoint:] + goal], 1) if goal is not None else nxt
                ph = (ph + out[:, -1].abs().clamp(0.01, 0.5)) % (2 * math.pi)
                drift += (nxt - x[start, :njoint]).pow(2).mean(1)
                del out, nxt
            drift.mean().item()
        del x, y, phase


# ---------------------------------------------------------------- text-conditioned motion diffusion (MDM)


class _TextEnc(_nn.Module):
    def __init__(self, vocab, d, depth, heads):
        super().__init__()
        self.emb = _nn.Embedding(vocab, d)
        self.pos = _nn.Parameter(torch.randn(1, 64, d) * 0.02)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(depth))
        self.norm = _nn.LayerNorm(d)

    def forward(self, ids, valid):
        h = self.emb(ids) + self.pos[:, : ids.shape[1]]
        mask = ((valid - 1.0) * 1e4)[:, None, None, :].to(h.dtype)
        for blk in self.blocks:
            h = blk(h, mask)
        h = self.norm(h) * valid[..., None].to(h.dtype)
        return h.sum(1) / valid.sum(1, keepdim=True).to(h.dtype)


class _MDM(_nn.Module):
    def __init__(self, dmot, d, depth, heads, dtext):
        super().__init__()
        self.inp = _nn.Linear(dmot, d)
        self.time = _nn.Sequential(_nn.Linear(d, d), _nn.SiLU(), _nn.Linear(d, d))
        self.text = _nn.Linear(dtext, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads, 2 * d) for _ in range(depth))
        self.out = _nn.Sequential(_nn.LayerNorm(d), _nn.Linear(d, dmot))
        self.d = d

    def forward(self, x, t, text, keep, valid):
        # x (b, T, dmot); the condition token (timestep + text, text zeroed where dropped) prepended
        b, T, _ = x.shape
        half = self.d // 2
        freqs = torch.exp(-math.log(10000) * torch.arange(half, device=x.device) / half)
        te = self.time(torch.cat([torch.sin(t[:, None] * freqs), torch.cos(t[:, None] * freqs)], 1))
        cond = te + self.text(text) * keep[:, None]
        pos = torch.arange(T + 1, device=x.device)[:, None] * freqs[None]
        pe = torch.cat([torch.sin(pos), torch.cos(pos)], 1)
        h = torch.cat([cond[:, None], self.inp(x)], 1) + pe[None]
        v = torch.cat([torch.ones(b, 1, device=x.device), valid], 1)
        mask = ((v - 1.0) * 1e4)[:, None, None, :].to(h.dtype)
        for blk in self.blocks:
            h = blk(h, mask)
        return self.out(h[:, 1:])


def _motion_batch(b, lengths, dmot, basis, dev="cuda"):
    """b motions padded to the longest of lengths: smooth joint-feature curves from a fixed random basis, masked."""
    T = max(lengths)
    z = _F.interpolate(torch.randn(b, basis.shape[0], T // 6 + 2, device=dev), size=T, mode="linear",
                       align_corners=False)
    x = torch.tanh(z.transpose(1, 2) @ basis)
    valid = (torch.arange(T, device=dev)[None] < torch.tensor(lengths, device=dev)[:, None]).float()
    return x * valid[..., None], valid


@_workload("text-conditioned human motion diffusion written by hand in the manner of MDM (random init): HumanML3D-style motions of 263-dim joint features, 40-196 frames (drawn per motion) made on the device as smooth curves, padded per batch of 32-64 (drawn) with key-padding masks; captions of 6-32 tokens (drawn) through a frozen 4-layer text encoder (width 512, no grad); an 8-layer pre-norm transformer denoiser (width 512, 4 heads) with a timestep-plus-text condition token, condition dropped for 10% of the batch; cosine schedule of 1,000 steps, x0 prediction, masked MSE plus a velocity loss; bf16 autocast, AdamW, 250 steps; every 50 steps DDIM sampling of 32 prompts with drawn lengths for 50 steps with classifier-free guidance (scale 2.5, conditional and unconditional in one batch of 64, no grad), the samples' jerk read back")
def mdm_motion_diffusion_train(rng):
    dmot, d, dtext = _smoke(263, 16), _smoke(512, 32), _smoke(512, 32)
    vocab = _smoke(8192, 64)
    textenc = _TextEnc(vocab, dtext, _smoke(4, 1), _smoke(8, 2)).cuda().eval().requires_grad_(False)
    model = _MDM(dmot, d, _smoke(8, 2), _smoke(4, 2), dtext).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.0)
    basis = torch.randn(_smoke(48, 4), dmot, device="cuda") / 4
    T_diff = 1000
    s = torch.arange(T_diff + 1, device="cuda", dtype=torch.float64) / T_diff
    abar = torch.cos((s + 0.008) / 1.008 * math.pi / 2) ** 2
    abar = (abar / abar[0])[1:].clamp(1e-5, 1.0).float()
    lmin, lmax = _smoke(40, 4), _smoke(196, 12)

    def captions(b):
        lens = [rng.randint(6, _smoke(32, 8)) for _ in range(b)]
        L = max(lens)
        ids = torch.randint(1, vocab, (b, L), device="cuda")
        valid = (torch.arange(L, device="cuda")[None] < torch.tensor(lens, device="cuda")[:, None]).float()
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            return textenc(ids * valid.long(), valid).float()

    steps = _smoke(250, 3)
    for step in range(steps):
        model.train()
        b = rng.choice(_smoke([32, 48, 64], [2, 3]))
        lengths = [rng.randint(lmin, lmax) for _ in range(b)]
        x0, valid = _motion_batch(b, lengths, dmot, basis)
        text = captions(b)
        t = torch.randint(0, T_diff, (b,), device="cuda")
        a = abar[t][:, None, None]
        xt = a.sqrt() * x0 + (1 - a).sqrt() * torch.randn_like(x0)
        keep = (torch.rand(b, device="cuda") > 0.1).float()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(xt, t.float(), text, keep, valid)
        pred = pred.float()
        m = valid[..., None]
        loss = ((pred - x0) ** 2 * m).sum() / (m.sum() * dmot)
        vm = m[:, 1:] * m[:, :-1]
        vel = (((pred[:, 1:] - pred[:, :-1]) - (x0[:, 1:] - x0[:, :-1])) ** 2 * vm).sum() / (vm.sum() * dmot)
        loss = loss + vel
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        del x0, valid, text, xt, pred, m, vm, vel
        if step % 25 == 0:
            float(loss)
        if (step + 1) % _smoke(50, 3) == 0:
            model.eval()
            with torch.no_grad():
                nb = _smoke(32, 2)
                lengths = [rng.randint(lmin, lmax) for _ in range(nb)]
                T = max(lengths)
                valid = (torch.arange(T, device="cuda")[None] < torch.tensor(lengths, device="cuda")[:, None]).float()
                text = captions(nb)
                v2, t2 = torch.cat([valid, valid]), torch.cat([text, text])
                keep = torch.cat([torch.ones(nb, device="cuda"), torch.zeros(nb, device="cuda")])
                x = torch.randn(nb, T, dmot, device="cuda") * valid[..., None]
                nsteps = _smoke(50, 3)
                tl = [round((T_diff - 1) * (1 - i / (nsteps - 1))) for i in range(nsteps)]  # DDIM timesteps, host
                for i, ti in enumerate(tl):
                    tt = torch.full((2 * nb,), float(ti), device="cuda")
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        out = model(torch.cat([x, x]), tt, t2, keep, v2).float()
                    x0 = out[nb:] + 2.5 * (out[:nb] - out[nb:])
                    a = abar[ti]
                    eps = (x - a.sqrt() * x0) / (1 - a).sqrt().clamp_min(1e-4)
                    an = abar[tl[i + 1]] if i + 1 < len(tl) else torch.ones((), device="cuda")
                    x = (an.sqrt() * x0 + (1 - an).sqrt() * eps) * valid[..., None]
                    del out, x0, eps
                jerk = (x[:, 3:] - 3 * x[:, 2:-1] + 3 * x[:, 1:-2] - x[:, :-3]).abs().mean()
                jerk.item()
            del x, valid, text, v2, t2


# ---------------------------------------------------------------- kernel-predicting path-tracing denoiser (KPCN)


def _kpcn_net(cin, ch, k, layers):
    mods = [_nn.Conv2d(cin, ch, 5, padding=2), _nn.ReLU()]
    for _ in range(layers - 2):
        mods += [_nn.Conv2d(ch, ch, 5, padding=2), _nn.ReLU()]
    mods.append(_nn.Conv2d(ch, k * k, 5, padding=2))
    return _nn.Sequential(*mods)


def _render_buffers(b, h, w, spp, dev="cuda"):
    """A path tracer's noisy output with G-buffers for b frames: smooth reference diffuse and specular radiance,
    albedo, normals, depth; Monte-Carlo noise falling with spp; per-buffer variances."""
    lo = (max(h // 16, 2), max(w // 16, 2))
    albedo = torch.sigmoid(_smooth_noise((b, 3) + lo, (h, w), dev=dev))
    normal = _F.normalize(_smooth_noise((b, 3) + lo, (h, w), dev=dev), dim=1)
    depth = torch.sigmoid(_smooth_noise((b, 1) + lo, (h, w), dev=dev))
    light = torch.relu(_smooth_noise((b, 3) + lo, (h, w), dev=dev)) + 0.1
    diff_ref = light
    spec_ref = torch.relu(_smooth_noise((b, 3) + lo, (h, w), dev=dev)) ** 3
    sig = 1.0 / math.sqrt(spp)
    diff = diff_ref * (1 + sig * torch.randn_like(diff_ref)).clamp_min(0)
    spec = spec_ref * (1 + 2 * sig * torch.randn_like(spec_ref)).clamp_min(0)
    var_d = (diff - diff_ref).pow(2).mean(1, keepdim=True)
    var_s = (spec - spec_ref).pow(2).mean(1, keepdim=True)
    return dict(albedo=albedo, normal=normal, depth=depth, diff=diff, spec=spec, var_d=var_d, var_s=var_s,
                diff_ref=diff_ref, spec_ref=spec_ref)


def _grads(x):
    gx = _F.pad(x[..., :, 1:] - x[..., :, :-1], (0, 1))
    gy = _F.pad(x[..., 1:, :] - x[..., :-1, :], (0, 0, 0, 1))
    return torch.cat([gx, gy], 1)


def _kpcn_inputs(buf):
    d = buf["diff"] / (buf["albedo"] + 1e-2)  # untextured irradiance, as KPCN does
    s = torch.log1p(buf["spec"])
    g = torch.cat([buf["normal"], buf["depth"], buf["albedo"]], 1)
    xd = torch.cat([d, buf["var_d"], g, _grads(d), _grads(g)], 1)
    xs = torch.cat([s, buf["var_s"], g, _grads(s), _grads(g)], 1)
    return xd, d, xs, s


def _apply_kernels(logits, img, k):
    b, _, h, w = img.shape
    wts = torch.softmax(logits.float(), 1).view(b, 1, k * k, h, w)
    patches = _F.unfold(img, k, padding=k // 2).view(b, 3, k * k, h, w)
    return (patches * wts).sum(2)


@_workload("kernel-predicting Monte-Carlo path-tracing denoiser written by hand in the manner of KPCN (random init): noisy diffuse and specular radiance of 4-64 spp (drawn) with albedo, normal and depth buffers, variances and finite-difference gradients (31 input channels a branch), made on the device as smooth random scenes; two 9-layer 5x5 CNNs (64 channels) predicting 15x15 per-pixel kernels, softmax-normalised and applied to the noisy radiance by unfold; crops of 64-160 pixels (drawn) in batches fitting a budget of 65,536 pixels; L1 on the tonemapped recombined image; bf16 autocast for the CNNs, fp32 kernels, Adam, 1,000 steps; every 250 steps an evaluation on a sequence of 12 frames at a drawn resolution (360x640, 540x960 or 720x1280) denoised in 224-pixel tiles with 16-pixel overlaps, the previous output reprojected by a smooth motion-vector field (grid_sample) and blended where depth agrees, relative MSE read back")
def kpcn_pathtrace_denoise_train(rng):
    k, ch, layers = _smoke(15, 3), _smoke(64, 8), _smoke(9, 3)
    cin = 31
    nd, ns = _kpcn_net(cin, ch, k, layers).cuda(), _kpcn_net(cin, ch, k, layers).cuda()
    opt = torch.optim.Adam(list(nd.parameters()) + list(ns.parameters()), lr=1e-4)
    budget = _smoke(65536, 512)

    def denoise(buf):
        xd, d, xs, s = _kpcn_inputs(buf)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            ld, ls = nd(xd), ns(xs)
        od = _apply_kernels(ld, d, k) * (buf["albedo"] + 1e-2)
        osp = torch.expm1(_apply_kernels(ls, s, k))
        return od + osp

    def tonemap(x):
        return x / (1 + x)

    steps = _smoke(1000, 3)
    for step in range(steps):
        nd.train(), ns.train()
        crop = rng.choice(_smoke([64, 96, 128, 160], [8, 16]))
        b = max(1, budget // (crop * crop))
        buf = _render_buffers(b, crop, crop, rng.choice([4, 8, 16, 32, 64]))
        out = denoise(buf)
        ref = buf["diff_ref"] + buf["spec_ref"]
        loss = (tonemap(out) - tonemap(ref)).abs().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del buf, out, ref
        if step % 40 == 0:
            float(loss)
        if (step + 1) % _smoke(250, 3) == 0:
            nd.eval(), ns.eval()
            h, w = rng.choice(_smoke([(360, 640), (540, 960), (720, 1280)], [(24, 40), (32, 48)]))
            tile, ov = _smoke(224, 16), _smoke(16, 2)
            yy, xx = torch.meshgrid(torch.linspace(-1, 1, h, device="cuda"), torch.linspace(-1, 1, w, device="cuda"),
                                    indexing="ij")
            base = torch.stack([xx, yy], -1)[None]
            prev, prev_depth = None, None
            errs = []
            with torch.no_grad():
                for f in range(_smoke(12, 2)):
                    buf = _render_buffers(1, h, w, rng.choice([4, 8, 16]))
                    out = torch.zeros(1, 3, h, w, device="cuda")
                    for y0 in range(0, h, tile - 2 * ov):
                        for x0 in range(0, w, tile - 2 * ov):
                            y1, x1 = min(y0 + tile, h), min(x0 + tile, w)
                            sub = {kk: v[..., y0:y1, x0:x1] for kk, v in buf.items()}
                            den = denoise(sub)
                            iy, ix = (y0 + ov if y0 else 0), (x0 + ov if x0 else 0)
                            out[..., iy:y1, ix:x1] = den[..., iy - y0:, ix - x0:]
                            del sub, den
                    if prev is not None:
                        mv = _smooth_noise((1, 2, 6, 10), (h, w)).permute(0, 2, 3, 1) * 0.01
                        warped = _F.grid_sample(prev, base + mv, mode="bilinear", padding_mode="border",
                                                align_corners=True)
                        wdepth = _F.grid_sample(prev_depth, base + mv, mode="bilinear", padding_mode="border",
                                                align_corners=True)
                        agree = torch.exp(-((wdepth - buf["depth"]).abs() * 50)) * 0.8
                        out = agree * warped + (1 - agree) * out
                        del mv, warped, wdepth, agree
                    ref = buf["diff_ref"] + buf["spec_ref"]
                    errs.append(((out - ref) ** 2 / (ref ** 2 + 1e-2)).mean())
                    prev, prev_depth = out, buf["depth"]
                    del buf, ref
            torch.stack(errs).tolist()
            del prev, prev_depth, base, out


# ---------------------------------------------------------------- neural upscaler for game frames (DLSS-style)


class _Upscaler(_nn.Module):
    """Low-resolution colour, depth, motion and the space-to-depth of the warped history in; a two-level U-Net; out:
    per output pixel a history blend weight and a colour residual, pixel-shuffled to the output resolution."""

    def __init__(self, scale, ch):
        super().__init__()
        cin = 6 + 3 * scale * scale
        self.s = scale
        self.e1 = _nn.Sequential(_nn.Conv2d(cin, ch, 3, padding=1), _nn.ReLU(), _nn.Conv2d(ch, ch, 3, padding=1),
                                 _nn.ReLU())
        self.e2 = _nn.Sequential(_nn.Conv2d(ch, 2 * ch, 3, stride=2, padding=1), _nn.ReLU(),
                                 _nn.Conv2d(2 * ch, 2 * ch, 3, padding=1), _nn.ReLU())
        self.d1 = _nn.Sequential(_nn.Conv2d(3 * ch, ch, 3, padding=1), _nn.ReLU())
        self.head = _nn.Conv2d(ch, 4 * scale * scale, 3, padding=1)

    def forward(self, color, depth, mv, warped):
        x = torch.cat([color, depth, mv, _F.pixel_unshuffle(warped, self.s)], 1)
        a = self.e1(x)
        bb = self.e2(a)
        up = _F.interpolate(bb, size=a.shape[-2:], mode="bilinear", align_corners=False)
        o = _F.pixel_shuffle(self.head(self.d1(torch.cat([a, up], 1))), self.s).float()
        alpha = torch.sigmoid(o[:, :1])
        base = _F.interpolate(color.float(), scale_factor=self.s, mode="bilinear", align_corners=False)
        return alpha * warped + (1 - alpha) * (base + o[:, 1:])


def _hr_grid(h, w, dev="cuda"):
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, h, device=dev), torch.linspace(-1, 1, w, device=dev), indexing="ij")
    return torch.stack([xx, yy], -1)[None]


@_workload("DLSS-style neural upscaler service for game frames written by hand (random init): per scale factor (2x, 3x) a two-level U-Net (32 channels) over low-resolution colour, depth, motion vectors and the space-to-depth of the previous high-resolution output warped by the upsampled motion vectors (grid_sample), predicting a history blend weight and a colour residual pixel-shuffled to the output resolution; a fine-tuning phase of 160 Adam steps a scale on batches of 8 low-resolution crops of 64-160 pixels (drawn) against smooth reference frames; then 4 play sessions at drawn render resolutions (540p, 720p, 1080p at 2x; 720p at 3x to 4K), 1,800-2,600 frames each (drawn), each frame's fp16 colour, depth and motion vectors uploaded from reused pinned host buffers on a side stream one frame ahead (waited on by event, record_stream'ed), bf16 autocast, the history kept per session and dropped at its end; every 30th frame's luminance statistics read back")
def game_frame_upscale_serve(rng):
    ch = _smoke(32, 8)
    nets = {s: _Upscaler(s, ch).cuda() for s in (2, 3)}
    # fine-tuning on crops: the reference at output resolution, the render its box-filtered and jittered version
    for s, net in nets.items():
        opt = torch.optim.Adam(net.parameters(), lr=2e-4)
        net.train()
        for step in range(_smoke(160, 2)):
            c = rng.choice(_smoke([64, 96, 128, 160], [8, 12]))
            b = _smoke(8, 2)
            ref = torch.sigmoid(_smooth_noise((b, 3, c // 4 + 1, c // 4 + 1), (c * s, c * s)) * 2)
            color = _F.avg_pool2d(ref, s) + 0.02 * torch.randn(b, 3, c, c, device="cuda")
            depth = torch.rand(b, 1, c, c, device="cuda")
            mv = 0.01 * torch.randn(b, 2, c, c, device="cuda")
            hist = (ref + 0.05 * torch.randn_like(ref)).clamp(0, 1)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = net(color, depth, mv, hist)
            loss = (out - ref).abs().mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            del ref, color, depth, mv, hist, out
            if step % 40 == 0:
                float(loss)
        net.eval().requires_grad_(False)
        del opt

    sessions = [rng.choice(_smoke([(540, 960, 2), (720, 1280, 2), (1080, 1920, 2)], [(16, 24, 2)]))
                for _ in range(3)] + [_smoke((720, 1280, 3), (12, 20, 3))]
    rng.shuffle(sessions)
    hmax, wmax = _smoke(1080, 16), _smoke(1920, 24)
    host = [torch.rand(6 * hmax * wmax, dtype=torch.float16).pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    done = [None, None]
    for h, w, s in sessions:
        net = nets[s]
        H, W = h * s, w * s
        grid = _hr_grid(H, W)
        hist = torch.zeros(1, 3, H, W, device="cuda")
        nframes = rng.randint(_smoke(1800, 3), _smoke(2600, 5))

        def fetch(i):
            slot = i % 2
            if done[slot] is not None:
                done[slot].synchronize()
            with torch.cuda.stream(side):
                z = host[slot][: 6 * h * w].to("cuda", non_blocking=True)
                ev = torch.cuda.Event()
                ev.record(side)
            done[slot] = ev
            return z, ev

        nxt = fetch(0)
        with torch.no_grad():
            for f in range(nframes):
                z, ev = nxt
                cur = torch.cuda.current_stream()
                cur.wait_event(ev)
                z.record_stream(cur)
                if f + 1 < nframes:
                    nxt = fetch(f + 1)
                frame = z.view(1, 6, h, w).float()
                color, depth, mv = frame[:, :3], frame[:, 3:4], frame[:, 4:6]
                mv_hr = _F.interpolate(mv.float(), size=(H, W), mode="bilinear", align_corners=False)
                warped = _F.grid_sample(hist, grid + 0.01 * (mv_hr.permute(0, 2, 3, 1) - 0.5), mode="bilinear",
                                        padding_mode="border", align_corners=True)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    out = net(color, depth, mv, warped)
                hist = out.clamp(0, 1)
                del z, frame, color, depth, mv, mv_hr, warped, out
                if f % 30 == 0:
                    lum = hist[0, 0] * 0.2126 + hist[0, 1] * 0.7152 + hist[0, 2] * 0.0722
                    torch.stack([lum.mean(), lum.amax(), lum.std()]).cpu()
                    del lum
        del hist, grid

"""The fifty-fifth batch of held-out workloads, second half (batch55.py holds the first): particle physics and
astronomy on the GPU, written in torch alone. Fast calorimeter-shower generation with a conditional normalising flow
(CaloFlow-style, on CaloChallenge-like voxelised showers: a flow over the layer energies and a flow over the
normalised voxels, both conditioned on the incident energy, affine couplings with MLP conditioners, logit
preprocessing; showers simulated on the device from a longitudinal gamma profile and a radial core-plus-halo profile;
photons (368 voxels) then pions (533 voxels) trained in one run, so two model sizes; sampling phases of drawn batch
size with shower-shape summaries read back), radio-interferometric imaging by an unrolled, learned reconstruction
(the observation's uv-tracks and weights uploaded from reused pinned host buffers on a side stream one batch ahead;
visibilities predicted from true skies of point and Gaussian sources by FFT and degridding, thermal noise added,
gridded by index_add to a dirty image, then 6 unrolled iterations of a gradient step through the measurement
operator and a learned residual CNN prior, images of 128 to 384 pixels drawn per batch), supernova and transient
classification over irregularly sampled multi-band light curves (PLAsTiCC-style: 6 passbands, 20-360 observations a
light curve, drawn, each observation a token of flux, error, passband embedding and a sinusoidal encoding of its
time; a transformer encoder with a padding mask, batches bucketed by length and cut to a token budget, a weighted
cross-entropy over 14 classes plus masked-flux reconstruction; evaluation of the weighted log-loss), and a
strong-lens finder over survey cutouts (lenses simulated on the device by ray shooting through a singular isothermal
ellipsoid with external shear onto a Sersic source, a Sersic lens galaxy, a Gaussian PSF per band by grouped
convolution and noise; four bands; cutouts of 64-160 pixels drawn per batch; a ResNet classifier; evaluation with
the ROC area by sort). Same conventions as batch55.py: nothing downloaded, data drawn on the device (or, for the
interferometer, from a few reused pinned host buffers), `rng` the workload's random.Random for every shape, count and
sampled choice, sizes through `_smoke(real, small)`. No control flow reads a tensor's value: masks are multiplied or
filled in, counts fixed on the host, no boolean-mask indexing; losses and scores are read back only at logging
points. radio_unrolled_imaging_train uses a side stream (uploads waited on by event, the tensors record_stream'ed);
the others are single-stream. The transformers and CNNs run under bf16 autocast; the flows, the FFTs and gridding,
the lens simulation and the losses are fp32.

Real sizes checked before recording, as batch55.py's header says (the same meta-device runner, op outputs counted,
peak live bytes tracked), each run whole at its final sizes:
calo_flow_shower_train 323,288 op outputs, peak 0.55 GB; radio_unrolled_imaging_train 328,701, 2.57 GB;
plasticc_lc_transformer_train 302,241, 4.59 GB; strong_lens_cutout_train 298,735, 3.49 GB (peaks in fp32 where
autocast would take bf16). record_new55.sh's header has the figures, with the first runs that led to resizes. The
CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- CaloFlow-style shower generation


def _showers(b, layers):
    """b showers of incident energies 1-1000 GeV (log-uniform): a gamma longitudinal profile over the layers, a
    core-plus-halo radial profile, angular fluctuations; returns log10 E, layer energies (b, L) and voxels
    (b, sum of voxels over layers) with per-voxel fluctuation."""
    dev = "cuda"
    loge = torch.rand(b, 1, device=dev) * 3
    e = 10 ** loge
    t = torch.arange(len(layers), device=dev, dtype=torch.float32)[None] + 0.5
    a = 2.0 + 0.5 * loge + 0.3 * torch.randn(b, 1, device=dev)
    prof = t.pow(a - 1) * torch.exp(-t / 1.8)
    prof = prof / prof.sum(1, keepdim=True)
    lay_e = e * prof * (1 + 0.1 * torch.randn_like(prof)).clamp_min(0.05)
    vox = []
    for li, (nr, na) in enumerate(layers):
        r = torch.arange(nr, device=dev, dtype=torch.float32)[None] + 0.5
        rad = 0.8 * torch.exp(-r / (0.6 + 0.1 * li)) + 0.2 * torch.exp(-r / 3.0)
        rad = rad[:, :, None].expand(b, nr, na) * (1 + 0.3 * torch.rand(b, nr, na, device=dev))
        v = rad.reshape(b, -1)
        vox.append(v / v.sum(1, keepdim=True) * lay_e[:, li:li + 1])
    return loge, lay_e, torch.cat(vox, 1)


class _Coupling(_nn.Module):
    """An affine coupling layer: half the dimensions (by a fixed permutation) condition a scale and a shift of the
    other half, through an MLP that also takes the condition."""

    def __init__(self, dim, cond, hidden, seed):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.register_buffer("perm", torch.randperm(dim, generator=g))
        self.register_buffer("inv", torch.argsort(self.perm))
        self.h = dim // 2
        self.net = _nn.Sequential(_nn.Linear(self.h + cond, hidden), _nn.GELU(), _nn.Linear(hidden, hidden),
                                  _nn.GELU(), _nn.Linear(hidden, 2 * (dim - self.h)))
        _nn.init.zeros_(self.net[-1].weight)
        _nn.init.zeros_(self.net[-1].bias)

    def forward(self, x, c):
        x = x[:, self.perm]
        a, b = x[:, :self.h], x[:, self.h:]
        s, t = self.net(torch.cat([a, c], 1)).chunk(2, 1)
        s = 2.0 * torch.tanh(s / 2.0)
        return torch.cat([a, b * torch.exp(s) + t], 1), s.sum(1)

    def inverse(self, y, c):
        a, b = y[:, :self.h], y[:, self.h:]
        s, t = self.net(torch.cat([a, c], 1)).chunk(2, 1)
        s = 2.0 * torch.tanh(s / 2.0)
        return torch.cat([a, (b - t) * torch.exp(-s)], 1)[:, self.inv]


class _Flow(_nn.Module):
    def __init__(self, dim, cond, hidden, nblocks):
        super().__init__()
        self.blocks = _nn.ModuleList(_Coupling(dim, cond, hidden, 55 + i) for i in range(nblocks))

    def log_prob(self, x, c):
        ld = torch.zeros(x.shape[0], device=x.device)
        for blk in self.blocks:
            x, l_ = blk(x, c)
            ld = ld + l_
        return -0.5 * (x ** 2).sum(1) - 0.5 * x.shape[1] * math.log(2 * math.pi) + ld

    def sample(self, c, dim):
        z = torch.randn(c.shape[0], dim, device=c.device)
        for blk in reversed(self.blocks):
            z = blk.inverse(z, c)
        return z


def _logit(u, alpha=1e-6):
    u = alpha + (1 - 2 * alpha) * u
    return torch.log(u) - torch.log1p(-u), (math.log(1 - 2 * alpha) - torch.log(u) - torch.log1p(-u)).sum(1)


@_workload("fast calorimeter-shower generation with conditional normalising flows written by hand (CaloFlow-style, random init): CaloChallenge-like voxelised showers simulated on the device (incident energies 1-1000 GeV log-uniform, a gamma longitudinal profile, a core-plus-halo radial profile, fluctuations), for photons (5 layers, 368 voxels) then pions (7 layers, 533 voxels); per particle a layer-energy flow (6 affine couplings, MLP 256) and a voxel flow (12 affine couplings, MLP 512) over logit-transformed normalised voxels, both conditioned on log E (and the layer energies), fp32; per particle 125 training steps of the two flows, batches of 256-2,048 showers (drawn), Adam with decay; after each particle a sampling phase of 6 batches of 500-5,000 showers (drawn) without grad, shower shapes (layer centroids and widths, total-energy ratio) read back")
def calo_flow_shower_train(rng):
    geoms = _smoke({"photon": [(8, 1), (16, 10), (19, 10), (5, 1), (5, 1)],
                    "pion": [(8, 1), (10, 10), (10, 10), (5, 1), (15, 10), (16, 10), (10, 1)]},
                   {"photon": [(2, 1), (3, 2), (2, 2)], "pion": [(2, 1), (3, 2)]})
    # CaloChallenge dataset 1: photons have 5 non-empty layers (368 voxels), pions 7 (533); radial x angular bins
    for particle in ("photon", "pion"):
        layers = geoms[particle]
        nlay = len(layers)
        dim = sum(nr * na for nr, na in layers)
        lay_flow = _Flow(nlay, 1, _smoke(256, 16), _smoke(6, 2)).cuda()
        vox_flow = _Flow(dim, 1 + nlay, _smoke(512, 16), _smoke(12, 2)).cuda()
        params = list(lay_flow.parameters()) + list(vox_flow.parameters())
        opt = torch.optim.Adam(params, lr=5e-4)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=_smoke(40, 2), gamma=0.5)
        for step in range(_smoke(125, 3)):
            b = rng.choice(_smoke([256, 512, 1024, 2048], [8, 16]))
            loge, lay_e, vox = _showers(b, layers)
            cond = loge / 3.0
            lay_u = (torch.log1p(lay_e) / 7.0).clamp(0, 1)
            lx, lld = _logit(lay_u)
            offs, parts = 0, []
            for li, (nr, na) in enumerate(layers):
                v = vox[:, offs:offs + nr * na]
                parts.append(v / (v.sum(1, keepdim=True) + 1e-6))
                offs += nr * na
            vx, vld = _logit(torch.cat(parts, 1).clamp(0, 1))
            nll_l = -(lay_flow.log_prob(lx, cond) + lld).mean() / nlay
            nll_v = -(vox_flow.log_prob(vx, torch.cat([cond, lay_u], 1)) + vld).mean() / dim
            loss = nll_l + nll_v
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 5.0)
            opt.step()
            sched.step()
            del loge, lay_e, vox, lx, vx, parts
            if step % 25 == 0:
                float(loss)
        with torch.no_grad():
            shapes = []
            for _ in range(_smoke(6, 1)):
                b = rng.randint(_smoke(500, 4), _smoke(5000, 8))
                loge = torch.rand(b, 1, device="cuda") * 3
                lay_u = torch.sigmoid(lay_flow.sample(loge / 3.0, nlay))
                lay_e = torch.expm1(lay_u * 7.0)
                v = torch.sigmoid(vox_flow.sample(torch.cat([loge / 3.0, lay_u], 1), dim))
                offs, out = 0, []
                for li, (nr, na) in enumerate(layers):
                    p = v[:, offs:offs + nr * na]
                    p = p / (p.sum(1, keepdim=True) + 1e-6)
                    r = torch.arange(nr, device="cuda", dtype=torch.float32).repeat_interleave(na)[None] + 0.5
                    cen = (p * r).sum(1)
                    wid = ((p * r * r).sum(1) - cen ** 2).clamp_min(0).sqrt()
                    out.append(torch.stack([cen.mean(), wid.mean()]))
                    offs += nr * na
                ratio = (lay_e.sum(1) / 10 ** loge[:, 0]).mean()
                shapes.append(torch.cat([torch.cat(out), ratio[None]]))
                del v, lay_u, lay_e
            torch.cat(shapes).tolist()
        del lay_flow, vox_flow, opt, params


# ---------------------------------------------------------------- unrolled radio-interferometric imaging


def _sky(b, n):
    """b true skies of n x n pixels: 5-40 point sources and 2-8 elliptical Gaussians of drawn flux and size."""
    dev = "cuda"
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, n, device=dev), torch.linspace(-1, 1, n, device=dev), indexing="ij")
    npt, ng = 40, 8
    flux = torch.rand(b, npt, device=dev).pow(3) * (torch.rand(b, npt, device=dev) < 0.6).float()
    idx = torch.randint(0, n * n, (b, npt), device=dev)
    img = torch.zeros(b, n * n, device=dev).scatter_add_(1, idx, flux).view(b, n, n)
    cx, cy = (torch.rand(b, ng, 1, 1, device=dev) * 1.6 - 0.8 for _ in range(2))
    sx, sy = (0.01 + 0.08 * torch.rand(b, ng, 1, 1, device=dev) for _ in range(2))
    amp = 0.2 * torch.rand(b, ng, 1, 1, device=dev)
    img = img + (amp * torch.exp(-0.5 * (((xx - cx) / sx) ** 2 + ((yy - cy) / sy) ** 2))).sum(1)
    return img


class _Prior(_nn.Module):
    def __init__(self, w):
        super().__init__()
        self.net = _nn.Sequential(_nn.Conv2d(2, w, 3, padding=1), _nn.GELU(), _nn.Conv2d(w, w, 3, padding=1),
                                  _nn.GELU(), _nn.Conv2d(w, w, 3, padding=2, dilation=2), _nn.GELU(),
                                  _nn.Conv2d(w, w, 3, padding=1), _nn.GELU(), _nn.Conv2d(w, 1, 3, padding=1))

    def forward(self, x, grad):
        return x - self.net(torch.cat([x, grad], 1))


@_workload("radio-interferometric imaging by an unrolled learned reconstruction written by hand (random init): per batch an observation's uv-tracks (40k-160k visibilities of a drawn array and hour angle, as uv-cell coordinates and natural weights) uploaded from reused pinned host buffers on a side stream one batch ahead (waited on by event, record_stream'ed); 2-8 true skies (drawn, cut to a budget of 6 x 256^2 pixels a batch) of 128-384 pixels (drawn) of point and Gaussian sources, visibilities predicted by fft2 and degridding by gather, thermal noise added, gridded by index_add to a dirty image; 6 unrolled iterations, each a gradient step through the measurement operator (fft2, degrid, residual, grid by index_add, ifft2) and a learned residual CNN prior (width 32, 5 conv layers, one per iteration) under bf16 autocast; L1 plus gradient-difference loss against the true sky, Adam, 530 steps; every 130 steps a validation of 3 batches without grad, PSNR against the dirty image read back")
def radio_unrolled_imaging_train(rng):
    iters, w = _smoke(6, 2), _smoke(32, 4)
    priors = _nn.ModuleList(_Prior(w) for _ in range(iters)).cuda()
    steps_size = _nn.Parameter(torch.full((iters,), 0.5, device="cuda"))
    opt = torch.optim.Adam(list(priors.parameters()) + [steps_size], lr=3e-4)
    sizes = _smoke([128, 192, 256, 384], [16, 24])
    vmax = _smoke(160000, 512)
    host_uv = [torch.randint(0, 1 << 30, (vmax,), dtype=torch.int64).pin_memory() for _ in range(2)]
    host_w = [torch.rand(vmax).pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    done = [None, None]
    nsteps, every = _smoke(530, 3), _smoke(130, 3)
    budget = _smoke(6 * 256 * 256, 4 * 16 * 16)  # pixels a batch: 2 skies at 384, 6 at 256, 8 below
    plan = []
    for i in range(nsteps + 3 * (nsteps // every)):
        n = rng.choice(sizes)
        plan.append((n, max(2, min(rng.randint(2, 8), budget // (n * n))), rng.randint(_smoke(40000, 128), vmax)))

    def fetch(i):
        n, b, nv = plan[i]
        s = i % 2
        if done[s] is not None:
            done[s].synchronize()
        with torch.cuda.stream(side):
            uv = host_uv[s][:nv].to("cuda", non_blocking=True)
            wt = host_w[s][:nv].to("cuda", non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        done[s] = ev
        return (uv, wt), ev

    def get(i, nxt):
        (uv, wt), ev = nxt
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        uv.record_stream(cur)
        wt.record_stream(cur)
        return uv, wt, (fetch(i + 1) if i + 1 < len(plan) else None)

    def forward_op(img, cells, n):
        return torch.view_as_real(torch.fft.fft2(img, norm="ortho").reshape(img.shape[0], -1)[:, cells])

    def adjoint_op(vis, cells, wt, n):
        b = vis.shape[0]
        grid = torch.zeros(b, n * n, 2, device="cuda").index_add_(1, cells, vis * wt[None, :, None])
        return torch.fft.ifft2(torch.view_as_complex(grid).view(b, n, n), norm="ortho").real

    def run(i, nxt, train):
        n, b, nv = plan[i]
        uv, wt, nxt = get(i, nxt)
        cells = uv % (n * n)  # the uv-cell each visibility falls in at this image size
        wt = wt / wt.mean()
        sky = _sky(b, n)
        vis = forward_op(sky, cells, n)
        vis = vis + 0.01 * torch.randn_like(vis)
        dirty = adjoint_op(vis, cells, wt, n) / (n * 0.05)
        x = dirty[:, None]
        for it in range(iters):
            resid = forward_op(x[:, 0], cells, n) - vis
            grad = adjoint_op(resid, cells, wt, n)[:, None] / (n * 0.05)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                x = priors[it](x - steps_size[it] * grad, grad).float()
        tgt = sky[:, None]
        loss = (x - tgt).abs().mean() + (x.diff(dim=-1) - tgt.diff(dim=-1)).abs().mean() + (
            x.diff(dim=-2) - tgt.diff(dim=-2)).abs().mean()
        if train:
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(priors.parameters(), 1.0)
            opt.step()
        return loss, x.detach(), dirty, tgt, nxt

    nxt = fetch(0)
    i = 0
    for step in range(nsteps):
        loss, _x, _d, _t, nxt = run(i, nxt, True)
        i += 1
        if (step + 1) % every == 0:
            with torch.no_grad():
                ps = []
                for _ in range(3):
                    _l, x, dirty, tgt, nxt = run(i, nxt, False)
                    i += 1
                    mse_x = ((x - tgt) ** 2).mean((1, 2, 3))
                    mse_d = ((dirty[:, None] - tgt) ** 2).mean((1, 2, 3))
                    peak = tgt.amax((1, 2, 3)) ** 2
                    ps.append(torch.stack([10 * torch.log10(peak / mse_x), 10 * torch.log10(peak / mse_d)], 1).mean(0))
                torch.stack(ps).tolist()
            float(loss)
        del loss, _x, _d, _t


# ---------------------------------------------------------------- transient light-curve transformer


def _light_curves(b, n, nband):
    """b light curves padded to n observations: drawn lengths, irregular times over ~3 years, passbands, fluxes of
    a class-dependent rise-and-fall with noise, flux errors; plus a per-object redshift and Galactic latitude."""
    dev = "cuda"
    cls = torch.randint(0, 14, (b,), device=dev)
    length = torch.randint(max(2, n // 3), n + 1, (b,), device=dev)
    mask = (torch.arange(n, device=dev)[None] < length[:, None]).float()
    t = torch.sort(torch.rand(b, n, device=dev) * 1100, dim=1).values
    band = torch.randint(0, nband, (b, n), device=dev)
    t0 = torch.rand(b, 1, device=dev) * 1100
    rise = 5 + cls[:, None].float() * 2
    fall = 20 + cls[:, None].float() * 8
    dt = t - t0
    shape = torch.exp(-dt.clamp_min(0) / fall) / (1 + torch.exp(-dt / rise))
    amp = (10 ** (torch.rand(b, 1, device=dev) * 3)) * (1 + 0.1 * band.float())
    err = 0.5 + torch.rand(b, n, device=dev) * 5
    flux = (amp * shape + err * torch.randn(b, n, device=dev)) * mask
    meta = torch.stack([torch.rand(b, device=dev) * 3, torch.rand(b, device=dev) * 2 - 1], -1)
    return t * mask, band, flux, err * mask, mask, meta, cls


class _LcTransformer(_nn.Module):
    def __init__(self, d, heads, depth, nband, ncls):
        super().__init__()
        self.d = d
        self.band = _nn.Embedding(nband, d)
        self.val = _nn.Linear(3, d)
        self.meta = _nn.Linear(2, d)
        layer = _nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.1, batch_first=True, norm_first=True,
                                            activation="gelu")
        self.enc = _nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.norm = _nn.LayerNorm(d)
        self.cls_head = _nn.Sequential(_nn.Linear(2 * d, d), _nn.GELU(), _nn.Linear(d, ncls))
        self.rec_head = _nn.Linear(d, 1)
        self.register_buffer("freq", torch.exp(torch.arange(0, d, 2).float() * (-math.log(1e4) / d)))

    def forward(self, t, band, flux, err, mask, meta, hide):
        ang = t[..., None] * self.freq
        tenc = torch.cat([torch.sin(ang), torch.cos(ang)], -1)
        f = torch.sign(flux) * torch.log1p(flux.abs())
        val = torch.stack([f * (1 - hide), torch.log1p(err), hide], -1)
        x = self.val(val) + self.band(band) + tenc + self.meta(meta)[:, None]
        x = self.enc(x, src_key_padding_mask=mask < 0.5)
        x = self.norm(x)
        pooled = torch.cat([(x * mask[..., None]).sum(1) / mask.sum(1, keepdim=True), x.amax(1)], -1)
        return self.cls_head(pooled), self.rec_head(x)[..., 0]


@_workload("supernova and transient classification over irregularly sampled multi-band light curves with a transformer written by hand (random init, PLAsTiCC-style): 6 passbands, light curves of 20-360 observations (drawn per object) over ~3 years, each observation a token of signed-log flux, flux error and a masked-out flag, a passband embedding and a sinusoidal encoding of its time, plus redshift and Galactic-latitude metadata; padded to a bucket of 64-384 (drawn per batch) with a key-padding mask, batches cut to a budget of 12,288 tokens (32-192 curves); a pre-norm transformer encoder of width 256, 8 heads, 6 layers (nn.TransformerEncoder), mean and max pooling; weighted cross-entropy over 14 classes plus reconstruction of 15% masked fluxes; bf16 autocast, AdamW with one-cycle schedule, gradient clipping; 330 steps, every 110 an evaluation of 5 batches of up to 512 curves (twice the token budget) without grad, the weighted log-loss and accuracy read back")
def plasticc_lc_transformer_train(rng):
    nband, ncls = 6, 14
    model = _LcTransformer(_smoke(256, 16), _smoke(8, 2), _smoke(6, 1), nband, ncls).cuda()
    steps = _smoke(330, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.05)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-4, total_steps=steps)
    weights = torch.tensor([1, 2, 1, 1, 1, 1, 1, 2, 1, 1, 1, 1, 1, 2], device="cuda", dtype=torch.float32)
    buckets = _smoke([64, 128, 192, 256, 384], [8, 16])
    budget = _smoke(12288, 128)
    for step in range(steps):
        model.train()
        n = rng.choice(buckets)
        b = max(4, min(192, budget // n))
        t, band, flux, err, mask, meta, cls = _light_curves(b, n, nband)
        hide = (torch.rand(b, n, device="cuda") < 0.15).float() * mask
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits, rec = model(t, band, flux, err, mask, meta, hide)
        target = torch.sign(flux) * torch.log1p(flux.abs())
        loss = _F.cross_entropy(logits.float(), cls, weight=weights) + 0.5 * (
            ((rec.float() - target) ** 2 * hide).sum() / (hide.sum() + 1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        del t, band, flux, err, mask, meta, cls, hide, logits, rec, target
        if (step + 1) % _smoke(110, 3) == 0:
            model.eval()
            res = []
            with torch.no_grad():
                for _ in range(_smoke(5, 1)):
                    n = rng.choice(buckets)
                    t, band, flux, err, mask, meta, cls = _light_curves(min(512, 2 * budget // n), n, nband)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        logits, _ = model(t, band, flux, err, mask, meta, torch.zeros_like(mask))
                    lp = logits.float().log_softmax(-1)
                    res.append(torch.stack([_F.nll_loss(lp, cls, weight=weights),
                                            (lp.argmax(-1) == cls).float().mean()]))
            torch.stack(res).mean(0).tolist()
            float(loss)


# ---------------------------------------------------------------- strong-lens finding on survey cutouts


def _sersic(x, y, cx, cy, q, ang, re, n):
    c, s = torch.cos(ang), torch.sin(ang)
    dx, dy = x - cx, y - cy
    xr, yr = c * dx + s * dy, -s * dx + c * dy
    r = torch.sqrt(q * xr ** 2 + yr ** 2 / q + 1e-6)
    bn = 2 * n - 1.0 / 3
    return torch.exp(-bn * ((r / re).pow(1.0 / n) - 1))


def _cutouts(b, npix, nband, psf_k):
    """b cutouts of npix x npix in nband bands, half of them strong lenses: a Sersic lens galaxy, and for the lenses
    a Sersic source ray-shot through a singular isothermal ellipsoid with external shear; a Gaussian PSF per band
    (grouped convolution), sky noise. Returns the images (b, nband, npix, npix) and the labels."""
    dev = "cuda"
    lab = (torch.rand(b, device=dev) < 0.5).float()
    g = torch.linspace(-1, 1, npix, device=dev) * npix * 0.1  # arcsec, 0.2"/pixel
    y, x = torch.meshgrid(g, g, indexing="ij")
    x, y = x[None], y[None]

    def par(lo, hi):
        return (lo + (hi - lo) * torch.rand(b, 1, 1, device=dev))

    theta_e, q, phi = par(0.8, 2.5), par(0.5, 1.0), par(0, math.pi)
    c, s = torch.cos(phi), torch.sin(phi)
    xr, yr = c * x + s * y, -s * x + c * y
    psi = torch.sqrt(q * q * xr ** 2 + yr ** 2 + 1e-6)
    sq = torch.sqrt(1 - q * q + 1e-6)
    axr = theta_e * q / sq * torch.atan(sq * xr / (psi + 1e-6))
    ayr = theta_e * q / sq * torch.atanh((sq * yr / (psi + q * q + 1e-6)).clamp(-0.999, 0.999))
    ax, ay = c * axr - s * ayr, s * axr + c * ayr
    g1, g2 = par(-0.05, 0.05), par(-0.05, 0.05)
    bx = x - ax - (g1 * x + g2 * y)
    by = y - ay - (g2 * x - g1 * y)
    src = _sersic(bx, by, par(-0.5, 0.5), par(-0.5, 0.5), par(0.4, 1.0), par(0, math.pi), par(0.1, 0.5), par(0.8, 2))
    lens = _sersic(x, y, 0.0, 0.0, q, phi, par(0.5, 2.0), par(2, 5))
    col_l = torch.tensor([0.3, 0.6, 1.0, 1.2], device=dev)[:nband]
    col_s = torch.tensor([1.0, 0.8, 0.5, 0.3], device=dev)[:nband]
    img = (lens[:, None] * col_l[None, :, None, None] * par(5, 20)[:, None]
           + lab[:, None, None, None] * src[:, None] * col_s[None, :, None, None] * par(1, 8)[:, None])
    sig = torch.linspace(0.8, 1.3, nband, device=dev)[:, None]
    k = torch.arange(psf_k, device=dev, dtype=torch.float32) - psf_k // 2
    g1d = torch.exp(-0.5 * (k[None] / sig) ** 2)
    g1d = g1d / g1d.sum(1, keepdim=True)
    psf = (g1d[:, :, None] * g1d[:, None, :])[:, None]
    img = _F.conv2d(img, psf, padding=psf_k // 2, groups=nband)
    img = img + 0.3 * torch.randn_like(img)
    return torch.asinh(img), lab


class _LensResNet(_nn.Module):
    def __init__(self, cin, w, blocks):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(cin, w, 3, padding=1, bias=False), _nn.BatchNorm2d(w), _nn.ReLU())
        stages, c = [], w
        for i, nb in enumerate(blocks):
            cout = w * 2 ** i
            for j in range(nb):
                stages.append(_ResBlock(c, cout, 2 if (j == 0 and i > 0) else 1))
                c = cout
        self.stages = _nn.Sequential(*stages)
        self.head = _nn.Linear(c, 1)

    def forward(self, x):
        return self.head(_F.adaptive_avg_pool2d(self.stages(self.stem(x)), 1).flatten(1))[:, 0]


class _ResBlock(_nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = _nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = _nn.BatchNorm2d(cout)
        self.c2 = _nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = _nn.BatchNorm2d(cout)
        self.sc = (_nn.Sequential(_nn.Conv2d(cin, cout, 1, stride, bias=False), _nn.BatchNorm2d(cout))
                   if stride != 1 or cin != cout else _nn.Identity())

    def forward(self, x):
        return _F.relu(self.b2(self.c2(_F.relu(self.b1(self.c1(x))))) + self.sc(x))


@_workload("strong-lens finding on simulated survey cutouts with a ResNet written by hand (random init): cutouts of 64-160 pixels (drawn per batch) in 4 bands simulated on the device, half of them lenses (a Sersic source ray-shot through a singular isothermal ellipsoid with external shear), a Sersic lens galaxy, a Gaussian PSF per band by grouped convolution, sky noise, asinh stretch; a ResNet of width 32 (2-2-2-2 blocks, BatchNorm) under bf16 autocast; batches cut to a budget of 256 cutouts of 64^2 pixels (40-256 cutouts), random flips and 90-degree rotations, BCE with label smoothing, SGD with Nesterov momentum and cosine decay; 510 steps, every 170 an evaluation of 4 batches of 256 cutouts at each of two sizes without grad, the ROC area (by sort) and accuracy read back")
def strong_lens_cutout_train(rng):
    nband = 4
    model = _LensResNet(nband, _smoke(32, 4), _smoke([2, 2, 2, 2], [1, 1])).cuda()
    steps = _smoke(510, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    sizes = _smoke([64, 96, 128, 160], [16, 24])
    budget = _smoke(256 * 64 * 64, 8 * 16 * 16)
    psf_k = _smoke(15, 5)
    for step in range(steps):
        model.train()
        npix = rng.choice(sizes)
        b = max(4, min(256, budget // (npix * npix)))
        x, y = _cutouts(b, npix, nband, psf_k)
        if rng.random() < 0.5:
            x = x.flip(-1)
        x = torch.rot90(x, rng.randrange(4), (-2, -1))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logit = model(x)
        loss = _F.binary_cross_entropy_with_logits(logit.float(), y * 0.9 + 0.05)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        del x, y, logit
        if (step + 1) % _smoke(170, 3) == 0:
            model.eval()
            res = []
            with torch.no_grad():
                for npix in rng.sample(sizes, 2):
                    for _ in range(_smoke(4, 1)):
                        x, y = _cutouts(_smoke(256, 8), npix, nband, psf_k)
                        with torch.autocast("cuda", dtype=torch.bfloat16):
                            p = torch.sigmoid(model(x).float())
                        order = torch.argsort(p, descending=True)
                        ys = y[order]
                        tpr = torch.cumsum(ys, 0) / (ys.sum() + 1e-6)
                        fpr = torch.cumsum(1 - ys, 0) / ((1 - ys).sum() + 1e-6)
                        auc = ((fpr[1:] - fpr[:-1]) * (tpr[1:] + tpr[:-1]) * 0.5).sum()
                        res.append(torch.stack([auc, ((p > 0.5).float() == y).float().mean()]))
            torch.stack(res).mean(0).tolist()
            float(loss)

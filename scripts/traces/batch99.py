"""The ninety-ninth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch97_b.py are): computational photography and smartphone cameras, written in torch alone, first half. Burst
denoising training (a kernel-prediction U-Net over bursts of drawn frame counts of packed Bayer raw with a
shot/read noise model, frames fused by max-pooling across the burst at every scale, per-pixel kernels applied by
unfold), HDR merging training (a window transformer over patch tokens of three exposures of drawn resolutions and
exposure ratios, a mu-law tone-mapped loss), a portrait-mode service (a MobileNetV2-style matting network over
phone photos of drawn resolutions, a full-resolution refinement and a synthetic bokeh by disc-kernel depthwise
convolution, composited to uint8) and burst super-resolution training (a convolutional GRU written out frame by
frame over bursts of drawn lengths of noisy packed raw frames, decoded by two pixel shuffles to RGB at twice the raw
resolution). Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in
reused pinned host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled
choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's
value: frame counts, resolutions and batch sizes are fixed on the host, no boolean-mask indexing; losses and metrics
are read back only at logging points or once per request. portrait_bokeh_serve uploads its photos on a side stream
(two reused pinned host buffers, one request ahead, the main stream waiting on an event, the tensors
record_stream'ed, as workload_helpers.SideUploads does); the other three are single-stream. The models run under
bf16 autocast. The HDR transformer's in-window position table covers every token of a window.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new99.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and for
which of them the CPU smoke run (RECORD_SMOKE=1) ran.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _loguniform(rng, lo, hi, mult=1):
    return _b.rec._loguniform(rng, lo, hi, mult)


def _smooth_field(b, c, n, cells, device="cuda"):
    """A smooth random image in (0, 1): a coarse (cells x cells) normal field upsampled bicubically, squashed."""
    coarse = torch.randn(b, c, cells, cells, device=device)
    return torch.sigmoid(1.5 * _F.interpolate(coarse, size=(n, n), mode="bicubic", align_corners=False))


def _shot_read_noise(b):
    """Per-image shot and read noise variances, log-uniform shot noise and read noise tied to it (as in the
    unprocessing model): (b, 1, 1, 1) each."""
    log_shot = torch.empty(b, device="cuda").uniform_(math.log(1e-4), math.log(1.2e-2))
    log_read = 2.18 * log_shot + 1.2 + 0.26 * torch.randn(b, device="cuda")
    return log_shot.exp().view(b, 1, 1, 1), log_read.exp().view(b, 1, 1, 1)


def _pack_bayer(rgb):
    """An RGGB mosaic of an RGB image (B, 3, 2h, 2w), packed to (B, 4, h, w)."""
    return torch.stack([rgb[:, 0, 0::2, 0::2], rgb[:, 1, 0::2, 1::2], rgb[:, 1, 1::2, 0::2], rgb[:, 2, 1::2, 1::2]], 1)


# ---------------------------------------------------------------- burst denoising (kernel-prediction U-Net)


class _BurstSetConv(_nn.Module):
    """A 3x3 convolution of each frame's features concatenated with their maximum over the burst, a ReLU."""

    def __init__(self, cin, cout):
        super().__init__()
        self.conv = _nn.Conv2d(2 * cin, cout, 3, 1, 1)

    def forward(self, x, n):
        bn, c, h, w = x.shape
        pooled = x.view(bn // n, n, c, h, w).amax(1, keepdim=True).expand(-1, n, -1, -1, -1).reshape(bn, c, h, w)
        return _F.relu(self.conv(torch.cat([x, pooled], 1)))


class _BurstKPN(_nn.Module):
    """Per-frame encoder-decoder with burst max-pooling at every layer; per frame, per pixel a taps x taps kernel
    (shared by the four Bayer planes), softmax-normalised over all frames and taps together."""

    def __init__(self, widths, taps):
        super().__init__()
        self.taps = taps
        self.stem = _nn.Conv2d(8, widths[0], 3, 1, 1)
        self.enc = _nn.ModuleList(_BurstSetConv(w, w) for w in widths)
        self.down = _nn.ModuleList(_nn.Conv2d(a, b, 3, 2, 1) for a, b in zip(widths[:-1], widths[1:]))
        self.dec = _nn.ModuleList(_BurstSetConv(a + b, b) for a, b in zip(widths[:0:-1], widths[-2::-1]))
        self.head = _nn.Conv2d(widths[0], taps * taps, 3, 1, 1)

    def forward(self, frames, sigma, n):
        """frames, sigma: (B*N, 4, H, W) packed raw and its noise standard deviation; weights (B, N, T, H, W)."""
        x = _F.relu(self.stem(torch.cat([frames, sigma], 1)))
        skips = []
        for i, blk in enumerate(self.enc):
            x = blk(x, n)
            if i < len(self.down):
                skips.append(x)
                x = _F.relu(self.down[i](x))
        for blk, skip in zip(self.dec, reversed(skips)):
            x = blk(torch.cat([_F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False), skip], 1), n)
        bn, _, h, w = frames.shape
        logits = self.head(x).float().view(bn // n, n * self.taps * self.taps, h, w)
        return logits.softmax(1).view(bn // n, n, self.taps * self.taps, h, w)


@_workload("burst denoising training (random init, a kernel-prediction network over raw bursts): 4-16 bursts a step (drawn, at most 64 frames of 128^2 packed pixels a step) of 4-8 frames (drawn per step) of packed RGGB raw at 64-160 pixels a side (drawn per step, a multiple of 16); the clean frame a smooth random image, each frame shifted by a drawn whole-pixel offset of -2..2 (torch.roll), shot and read noise variances drawn per burst (log-uniform shot 1e-4..1.2e-2, read tied to it), the noisy frames and their per-pixel noise standard deviation as input; a per-frame U-Net (widths 32/64/128, stride-2 convolutions, bilinear upsampling, skips) whose encoder and decoder 3x3 convolutions see the frame's features concatenated with their max over the burst; 5 x 5 per-pixel kernels per frame softmax-normalised over frames and taps together, applied by unfold to the four Bayer planes and summed; L1 on gamma-encoded (1/2.2) images of the merged frame plus an annealed per-frame L1 (weight 100 x 0.998^step); Adam, clipping, bf16 autocast, 1,250 steps; the loss read back every 20 steps and every 312 steps a no-grad evaluation of 8 bursts of 8 frames at 128 pixels with the PSNR read back")
def burst_denoise_kpn_train(rng):
    widths, taps = _smoke([32, 64, 128], [8, 16]), _smoke(5, 3)
    model = _BurstKPN(widths, taps).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=2e-4)
    mult, budget = _smoke(16, 8), _smoke(64 * 128 * 128, 8 * 16 * 16)

    def burst(b, n, res):
        clean = _smooth_field(b, 4, res, max(2, res // 16))
        frames = []
        for _ in range(n):
            dy, dx = rng.randint(-2, 2), rng.randint(-2, 2)
            frames.append(torch.roll(clean, (dy, dx), (2, 3)))
        frames = torch.stack(frames, 1)  # (B, N, 4, H, W)
        shot, read = _shot_read_noise(b)
        var = shot[:, None] * frames + read[:, None]
        noisy = frames + var.sqrt() * torch.randn_like(frames)
        sigma = (shot[:, None] * noisy.clamp(min=0) + read[:, None]).sqrt()
        return clean, noisy.flatten(0, 1), sigma.flatten(0, 1)

    def apply(noisy, wts, b, n, res):
        patches = _F.unfold(noisy.reshape(b * n * 4, 1, res, res), taps, padding=taps // 2)
        patches = patches.view(b, n, 4, taps * taps, res, res)
        per_frame = (patches * wts[:, :, None]).sum(3)  # (B, N, 4, H, W)
        return per_frame.sum(1), per_frame

    def gamma(x):
        return x.clamp(min=1e-6) ** (1 / 2.2)

    steps = _smoke(1250, 3)
    for step in range(steps):
        model.train()
        res = rng.randint(_smoke(64, 16) // mult, _smoke(160, 32) // mult) * mult
        n = rng.randint(_smoke(4, 2), _smoke(8, 3))
        b = rng.randint(_smoke(4, 1), max(_smoke(4, 1), min(_smoke(16, 2), budget // (n * res * res))))
        clean, noisy, sigma = burst(b, n, res)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            wts = model(noisy, sigma, n)
        merged, per_frame = apply(noisy, wts, b, n, res)
        loss = _F.l1_loss(gamma(merged), gamma(clean))
        anneal = 100 * 0.998 ** step
        loss = loss + anneal * _F.l1_loss(gamma(per_frame * n), gamma(clean)[:, None].expand_as(per_frame))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.detach().item()
        del clean, noisy, sigma, wts, merged, per_frame, loss
        if (step + 1) % _smoke(312, 2) == 0:
            model.eval()
            with torch.no_grad():
                b, n, res = _smoke(8, 1), _smoke(8, 2), _smoke(128, 16)
                clean, noisy, sigma = burst(b, n, res)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    wts = model(noisy, sigma, n)
                merged, _ = apply(noisy, wts, b, n, res)
                mse = (gamma(merged) - gamma(clean)).pow(2).mean((1, 2, 3))
                psnr = (-10 * torch.log10(mse.clamp(min=1e-10))).mean()
            psnr.item()
            del clean, noisy, sigma, wts, merged, mse, psnr


# ---------------------------------------------------------------- HDR merging (window transformer)


class _HdrWindowNet(_nn.Module):
    """Each exposure (LDR and its linearisation) embedded by a patch x patch strided convolution; tokens of the
    three exposures grouped by win x win windows of patches (3 win^2 tokens a window), an exposure-and-position
    table over those slots, pre-norm blocks within windows (every other one on a grid rolled by half a window,
    cyclically, no mask); the three exposures' tokens fused, pixel-shuffled back to a residual on the reference
    exposure's linear image."""

    def __init__(self, d, heads, layers, patch, win):
        super().__init__()
        self.patch, self.win = patch, win
        self.embed = _nn.Conv2d(6, d, patch, patch)
        self.pos = _nn.Embedding(3 * win * win, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.fuse = _nn.Linear(3 * d, d)
        self.head = _nn.Conv2d(d, 3 * patch * patch, 3, 1, 1)

    def windows(self, x):
        """(B, 3, gh, gw, d) -> (B * windows, 3 win^2, d)."""
        b, e, gh, gw, d = x.shape
        w = self.win
        x = x.view(b, e, gh // w, w, gw // w, w, d).permute(0, 2, 4, 1, 3, 5, 6)
        return x.reshape(b * (gh // w) * (gw // w), e * w * w, d)

    def unwindows(self, x, b, gh, gw):
        w, d = self.win, x.shape[-1]
        x = x.view(b, gh // w, gw // w, 3, w, w, d).permute(0, 3, 1, 4, 2, 5, 6)
        return x.reshape(b, 3, gh, gw, d)

    def forward(self, ldr, lin):
        """ldr, lin: (B, 3 exposures, 3, H, W); the HDR estimate (B, 3, H, W)."""
        b, e, _, h, w = ldr.shape
        tok = self.embed(torch.cat([ldr, lin], 2).flatten(0, 1))  # (B*3, d, gh, gw)
        gh, gw = tok.shape[2], tok.shape[3]
        x = tok.view(b, e, -1, gh, gw).permute(0, 1, 3, 4, 2)
        slots = torch.arange(3 * self.win * self.win, device=ldr.device)
        half = self.win // 2
        for i, blk in enumerate(self.blocks):
            if i % 2:
                x = torch.roll(x, (half, half), (2, 3))
            t = self.windows(x)
            if i == 0:
                t = t + self.pos(slots)[None].to(t.dtype)
            x = self.unwindows(blk(t), b, gh, gw)
            if i % 2:
                x = torch.roll(x, (-half, -half), (2, 3))
        x = self.norm(x)
        x = self.fuse(x.permute(0, 2, 3, 1, 4).flatten(3))  # (B, gh, gw, d)
        res = _F.pixel_shuffle(self.head(x.permute(0, 3, 1, 2)), self.patch)
        return _F.softplus(lin[:, 1].float() + res.float(), beta=20)


@_workload("HDR merging training (random init, a window transformer over three exposures): 2-16 scenes a step (drawn, at most 8 x 256^2 pixels a step) at 128, 192 or 256 pixels a side (drawn per step, a multiple of 64); a linear HDR scene drawn on the device (a smooth random field exponentiated, up to about 8 stops), three exposures at ratios of 1, r and r^2 (r drawn per step, 2-8), each clipped, gamma-encoded with noise, and its linearisation divided by the exposure, the middle one the reference; an 8 x 8 strided patch embedding (width 144), windows of 8 x 8 patches of all three exposures (192 tokens a window), a 192-row exposure-and-position table added before the first block, 6 pre-norm blocks (6 heads) within windows, every other one on a grid cyclically rolled by 4 patches (no mask); the three exposures' tokens concatenated and fused, a 3x3 convolution and pixel shuffle back to full resolution as a residual on the reference's linear image, softplus; L1 on mu-law tone-mapped images (mu 5,000, radiance normalised by the scene's peak); AdamW, clipping, bf16 autocast, 400 steps; the loss read back every 20 steps and every 100 steps a no-grad evaluation of 4 scenes of 256 pixels with the PSNR of the tone-mapped images read back")
def hdr_merge_window_transformer_train(rng):
    d, heads, layers = _smoke(144, 16), _smoke(6, 2), _smoke(6, 2)
    patch, win = _smoke(8, 4), _smoke(8, 2)
    model = _HdrWindowNet(d, heads, layers, patch, win).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.01)
    mult, budget, mu = patch * win, _smoke(8 * 256 * 256, 2 * 32 * 32), 5000.0  # whole windows

    def scenes(b, res, ratio):
        radiance = torch.exp(2.8 * (_smooth_field(b, 3, res, max(2, res // 32)) - 0.5) * 2)
        radiance = radiance / radiance.amax((1, 2, 3), keepdim=True)
        ts = torch.tensor([1.0, ratio, ratio * ratio], device="cuda").view(1, 3, 1, 1, 1) / (ratio * ratio)
        exp = (radiance[:, None] * ts * 8).clamp(0, 1)
        ldr = (exp.clamp(min=1e-6) ** (1 / 2.2) + 0.01 * torch.randn_like(exp)).clamp(0, 1)
        lin = ldr ** 2.2 / (ts * 8)
        return ldr, lin, radiance

    def tonemap(x):
        return torch.log1p(mu * x.clamp(min=0)) / math.log1p(mu)

    steps = _smoke(400, 3)
    for step in range(steps):
        model.train()
        res = rng.randint(_smoke(128, 16) // mult, _smoke(256, 32) // mult) * mult
        b = rng.randint(_smoke(2, 1), max(_smoke(2, 1), min(_smoke(16, 2), budget // (res * res))))
        ldr, lin, hdr = scenes(b, res, rng.uniform(2.0, 8.0))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(ldr, lin)
        loss = _F.l1_loss(tonemap(pred), tonemap(hdr))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.detach().item()
        del ldr, lin, hdr, pred, loss
        if (step + 1) % _smoke(100, 2) == 0:
            model.eval()
            with torch.no_grad():
                ldr, lin, hdr = scenes(_smoke(4, 1), _smoke(256, 32), 4.0)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pred = model(ldr, lin)
                mse = (tonemap(pred) - tonemap(hdr)).pow(2).mean()
                psnr = -10 * torch.log10(mse.clamp(min=1e-10))
            psnr.item()
            del ldr, lin, hdr, pred, mse, psnr


# ---------------------------------------------------------------- portrait mode (matting, refinement, bokeh)


class _InvertedResidual(_nn.Module):
    """MobileNetV2's block: 1x1 expansion, 3x3 depthwise, 1x1 projection, batch norm, ReLU6, a residual when the
    shapes match."""

    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hid = cin * expand
        self.body = _nn.Sequential(
            _nn.Conv2d(cin, hid, 1, bias=False), _nn.BatchNorm2d(hid), _nn.ReLU6(inplace=True),
            _nn.Conv2d(hid, hid, 3, stride, 1, groups=hid, bias=False), _nn.BatchNorm2d(hid), _nn.ReLU6(inplace=True),
            _nn.Conv2d(hid, cout, 1, bias=False), _nn.BatchNorm2d(cout))
        self.res = stride == 1 and cin == cout

    def forward(self, x):
        y = self.body(x)
        return x + y if self.res else y


class _PortraitMatte(_nn.Module):
    """A MobileNetV2-style encoder (stem stride 2, stages to stride 32), a decoder adding every stage's 1x1-projected
    features after bilinear upsampling, an alpha logit at stride 2; a full-resolution refinement of the upsampled
    logit from the image (three 3x3 convolutions, a residual on the logit)."""

    def __init__(self, stages, dec, refine):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, stages[0][0], 3, 2, 1, bias=False), _nn.BatchNorm2d(stages[0][0]),
                                   _nn.ReLU6(inplace=True))
        self.stages = _nn.ModuleList()
        for cin, cout, stride, reps in stages:
            blocks = [_InvertedResidual(cin, cout, stride, 6)] + [_InvertedResidual(cout, cout, 1, 6)
                                                                   for _ in range(reps - 1)]
            self.stages.append(_nn.Sequential(*blocks))
        self.lat = _nn.ModuleList(_nn.Conv2d(s[1], dec, 1) for s in stages)
        self.smooth = _nn.Conv2d(dec, dec, 3, 1, 1)
        self.alpha = _nn.Conv2d(dec, 1, 3, 1, 1)
        self.refine = _nn.Sequential(_nn.Conv2d(4, refine, 3, 1, 1), _nn.ReLU(inplace=True),
                                     _nn.Conv2d(refine, refine, 3, 1, 1), _nn.ReLU(inplace=True),
                                     _nn.Conv2d(refine, 1, 3, 1, 1))

    def forward(self, img, seg_size):
        """img: (B, 3, H, W) normalised; the full-resolution alpha logit (B, 1, H, W)."""
        x = self.stem(_F.interpolate(img, size=seg_size, mode="bilinear", align_corners=False))
        feats = []
        for st in self.stages:
            x = st(x)
            feats.append(x)
        y = self.lat[-1](feats[-1])
        for lat, f in zip(self.lat[-2::-1], feats[-2::-1]):
            y = lat(f) + _F.interpolate(y, size=f.shape[-2:], mode="bilinear", align_corners=False)
        logit = self.alpha(_F.relu(self.smooth(y)))
        up = _F.interpolate(logit, size=img.shape[-2:], mode="bilinear", align_corners=False)
        return up + self.refine(torch.cat([img, up], 1))


@_workload("portrait-mode serving (random init, a MobileNetV2-style matting network with a synthetic bokeh): 1,000-1,050 requests (drawn) of 1-4 phone photos each (drawn), the request's resolution one of 640 x 480, 800 x 600 and 960 x 720 (portrait orientation, drawn per request) and a blur strength of 3 disc kernels (radius 3, 5 or 7 pixels at half resolution, drawn per request); uint8 pixels uploaded on a side stream from two reused pinned host buffers (filled once, sized for 4 photos of 960 x 720) one request ahead (one span, waited on by event, record_stream'ed), normalised on the device; the matting network under bf16 autocast at 256 x 192 (a stride-2 stem of 16 and inverted-residual stages 16/24/32/64/96/160 of 1/2/3/4/3/3 blocks with strides 1/2/2/2/1/2, expansion 6, an FPN-style decoder of width 64 over every stage, alpha at stride 2), the alpha logit upsampled and refined at full resolution (three 3x3 convolutions of width 16); the background blurred at half resolution by a depthwise disc-kernel convolution normalised by the blurred background weight, upsampled, composited with the photo by the alpha and quantised to uint8; each request's foreground fractions and mean output levels read back")
def portrait_bokeh_serve(rng):
    stages = _smoke([(16, 16, 1, 1), (16, 24, 2, 2), (24, 32, 2, 3), (32, 64, 2, 4), (64, 96, 1, 3),
                     (96, 160, 2, 3)], [(8, 8, 1, 1), (8, 16, 2, 1), (16, 16, 2, 1)])
    model = _PortraitMatte(stages, _smoke(64, 8), _smoke(16, 4)).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    sizes = _smoke([(640, 480), (800, 600), (960, 720)], [(64, 48), (80, 64)])
    seg_size = _smoke((256, 192), (64, 48))
    max_photos = _smoke(4, 2)
    kernels = []
    for r in _smoke([3, 5, 7], [1, 2]):
        g = torch.arange(-r, r + 1, device="cuda").float()
        disc = ((g[:, None] ** 2 + g[None] ** 2) <= r * r + 0.5).float()
        kernels.append((r, (disc / disc.sum()).expand(4, 1, 2 * r + 1, 2 * r + 1).contiguous()))
    big = max(h * w for h, w in sizes) * 3
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_photos * big,), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1)
    nreq = rng.randint(_smoke(1000, 3), _smoke(1050, 4))
    plan = [(rng.randint(1, max_photos), *rng.choice(sizes), rng.randrange(len(kernels))) for _ in range(nreq)]

    def span(p):
        return p[0] * 3 * p[1] * p[2]

    nxt = up.upload(0, span(plan[0]))
    for i in range(nreq):
        f, h, w, k = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, span(plan[i + 1]))
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            img = raw.view(f, 3, h, w).float().div_(255)
            x = ((img - mean) / std).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logit = model(x, seg_size)
            alpha = torch.sigmoid(logit.float())
            r, kern = kernels[k]
            bg_w = 1 - alpha
            half = _F.avg_pool2d(torch.cat([img * bg_w, bg_w], 1), 2)
            blurred = _F.conv2d(half, kern, padding=r, groups=4)
            blurred = _F.interpolate(blurred, size=(h, w), mode="bilinear", align_corners=False)
            bokeh = blurred[:, :3] / blurred[:, 3:].clamp(min=1e-3)
            out = alpha * img + (1 - alpha) * bokeh
            pix = (out * 255).round().clamp(0, 255).to(torch.uint8)
            stats = torch.cat([alpha.mean((1, 2, 3)), pix.float().mean((1, 2, 3))])
        stats.tolist()
        del item, raw, img, x, logit, alpha, bg_w, half, blurred, bokeh, out, pix, stats


# ---------------------------------------------------------------- burst super-resolution (ConvGRU, step by step)


class _BurstSRGru(_nn.Module):
    """A per-frame encoder of packed raw, an alignment block on each frame's features and the base frame's, a
    convolutional GRU over the burst written out frame by frame, two pixel-shuffle stages to RGB."""

    def __init__(self, w):
        super().__init__()
        self.enc = _nn.Sequential(_nn.Conv2d(4, w, 3, 1, 1), _nn.LeakyReLU(0.1), _nn.Conv2d(w, w, 3, 1, 1),
                                  _nn.LeakyReLU(0.1))
        self.align = _nn.Sequential(_nn.Conv2d(2 * w, w, 3, 1, 1), _nn.LeakyReLU(0.1), _nn.Conv2d(w, w, 3, 1, 1))
        self.gates = _nn.Conv2d(2 * w, 2 * w, 3, 1, 1)
        self.cand = _nn.Conv2d(2 * w, w, 3, 1, 1)
        self.up1 = _nn.Conv2d(w, 4 * w, 3, 1, 1)
        self.up2 = _nn.Conv2d(w, 4 * (w // 2), 3, 1, 1)
        self.out = _nn.Conv2d(w // 2, 3, 3, 1, 1)

    def forward(self, frames):
        """frames: (B, N, 4, h, w) packed raw, frame 0 the base; RGB at (4h, 4w)."""
        n = frames.shape[1]
        base = self.enc(frames[:, 0])
        hid = torch.zeros_like(base)
        for i in range(n):
            f = base if i == 0 else self.enc(frames[:, i])
            x = f + self.align(torch.cat([f, base], 1))
            z, r = torch.sigmoid(self.gates(torch.cat([x, hid], 1))).chunk(2, 1)
            c = torch.tanh(self.cand(torch.cat([x, r * hid], 1)))
            hid = (1 - z) * hid + z * c
        y = _F.leaky_relu(_F.pixel_shuffle(self.up1(hid), 2), 0.1)
        y = _F.leaky_relu(_F.pixel_shuffle(self.up2(y), 2), 0.1)
        return self.out(y).float()


@_workload("burst super-resolution training (random init, a convolutional GRU written out frame by frame): 2-12 bursts a step (drawn, at most 8 bursts of 80^2 packed pixels a step) of 6-14 frames (drawn per step) of packed RGGB raw at 48-96 pixels a side (drawn per step, a multiple of 16); a smooth random RGB image at 4x that size drawn on the device, each frame shifted by a drawn whole-pixel offset of 0..3 at the high resolution (torch.roll, drawn on the host), box-downsampled by 2, mosaiced and packed, with shot and read noise drawn per burst; a per-frame encoder (width 64), an alignment block on each frame's and the base frame's features, a ConvGRU (3x3 gate and candidate convolutions) over the burst frame by frame, two pixel-shuffle stages (64 -> 32 channels) to RGB at 4x the packed size; L1 plus an L1 on horizontal and vertical image gradients; Adam, clipping, bf16 autocast, 375 steps; the loss read back every 20 steps and every 94 steps a no-grad evaluation of 4 bursts of 14 frames at 96 packed pixels with the PSNR read back")
def burst_sr_convgru_train(rng):
    w = _smoke(64, 8)
    model = _BurstSRGru(w).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=2e-4)
    mult, budget = _smoke(16, 8), _smoke(8 * 80 * 80, 2 * 16 * 16)

    def burst(b, n, res):
        hr = _smooth_field(b, 3, 4 * res, max(2, res // 8))
        frames = []
        for _ in range(n):
            dy, dx = rng.randint(0, 3), rng.randint(0, 3)
            frames.append(_pack_bayer(_F.avg_pool2d(torch.roll(hr, (dy, dx), (2, 3)), 2)))
        frames = torch.stack(frames, 1)
        shot, read = _shot_read_noise(b)
        var = shot[:, None] * frames + read[:, None]
        return frames + var.sqrt() * torch.randn_like(frames), hr

    def grad_l1(a, b):
        return (_F.l1_loss(a[..., 1:, :] - a[..., :-1, :], b[..., 1:, :] - b[..., :-1, :])
                + _F.l1_loss(a[..., 1:] - a[..., :-1], b[..., 1:] - b[..., :-1]))

    steps = _smoke(375, 3)
    for step in range(steps):
        model.train()
        res = rng.randint(_smoke(48, 8) // mult, _smoke(96, 16) // mult) * mult
        n = rng.randint(_smoke(6, 2), _smoke(14, 3))
        b = rng.randint(_smoke(2, 1), max(_smoke(2, 1), min(_smoke(12, 2), budget // (res * res))))
        frames, hr = burst(b, n, res)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(frames)
        loss = _F.l1_loss(pred, hr) + grad_l1(pred, hr)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.detach().item()
        del frames, hr, pred, loss
        if (step + 1) % _smoke(94, 2) == 0:
            model.eval()
            with torch.no_grad():
                frames, hr = burst(_smoke(4, 1), _smoke(14, 3), _smoke(96, 16))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pred = model(frames)
                mse = (pred.clamp(0, 1) - hr).pow(2).mean()
                psnr = -10 * torch.log10(mse.clamp(min=1e-10))
            psnr.item()
            del frames, hr, pred, mse, psnr

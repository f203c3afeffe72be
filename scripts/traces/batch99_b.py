"""The ninety-ninth batch of held-out workloads for record.py, second half (see batch99.py): computational photography
and smartphone cameras, written in torch alone. An on-device photo-enhancement service (an HDRNet-style bilateral
grid network: a low-resolution coefficient network with local and global paths and a style preset, a learned
per-pixel guide, trilinear slicing by grid_sample and per-pixel affine colour transforms at full resolution),
portrait relighting sampling (a conditional diffusion U-Net over albedo, normals and a matte with spherical-harmonic
target lighting, DDIM sampling with classifier-free guidance for drawn step counts and guidance scales), non-local
graph denoising training (an edge-conditioned message-passing network by index_select and index_add over a
k-nearest-neighbour graph of feature-map pixels picked by topk among local and random candidates within a search
window) and lens point-spread-function surrogate training (Fourier-optics simulation of PSFs from Zernike aberrations
of drawn lenses, field positions, focus and wavelengths, an MLP and transposed-convolution surrogate trained on the
PSFs and on FFT-convolved renders).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)`. No control flow reads a tensor's value; no boolean-mask indexing; results read back
only at logging points or once per request. photo_enhance_bilateral_serve uploads its photos on a side stream (two
reused pinned host buffers, one request ahead, the main stream waiting on an event, the tensors record_stream'ed, as
workload_helpers.SideUploads does); the other three are single-stream. Models run under bf16 autocast (Fourier
optics, slicing and renders in fp32). Every table is sized for the largest index that can be drawn.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, TimeResBlock, _posenc, _sincos, fftfreq, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _loguniform(rng, lo, hi, mult=1):
    return _b.rec._loguniform(rng, lo, hi, mult)


def _blurry_noise(b, c, h, w, cells):
    """Smooth random maps: a coarse normal field of `cells` rows, bilinearly upsampled to (h, w)."""
    coarse = torch.randn(b, c, cells, max(1, cells * w // h), device="cuda")
    return _F.interpolate(coarse, size=(h, w), mode="bilinear", align_corners=False)


# ---------------------------------------------------------------- photo enhancement (HDRNet-style bilateral grid)


class _BilateralEnhancer(_nn.Module):
    """Low-resolution splatting convolutions to a 16 x 16 map, a local path and a global path (two more stride-2
    convolutions and an MLP, plus a style-preset embedding) fused into a bilateral grid of 12 affine coefficients
    x `depth` luminance bins; a guide from a learned 1x1 colour transform and per-channel piecewise-linear curves
    (`hinges` ReLU hinges), mixed by a 1x1 convolution; the grid sliced trilinearly by grid_sample at every pixel."""

    def __init__(self, n_style, depth, hinges, w):
        super().__init__()
        self.depth = depth
        chans = [3, w // 8, w // 4, w // 2, w]
        self.splat = _nn.Sequential(*[m for a, b in zip(chans[:-1], chans[1:])
                                      for m in (_nn.Conv2d(a, b, 3, 2, 1), _nn.ReLU(inplace=True))])
        self.local = _nn.Sequential(_nn.Conv2d(w, w, 3, 1, 1), _nn.ReLU(inplace=True),
                                    _nn.Conv2d(w, w, 3, 1, 1, bias=False))
        self.glob_conv = _nn.Sequential(_nn.Conv2d(w, w, 3, 2, 1), _nn.ReLU(inplace=True), _nn.Conv2d(w, w, 3, 2, 1),
                                        _nn.ReLU(inplace=True))
        self.glob_mlp = mlp(w * 16, 4 * w, w, layers=3)
        self.style = _nn.Embedding(n_style, w)
        self.out = _nn.Conv2d(w, 12 * depth, 1)
        self.ccm = _nn.Conv2d(3, 3, 1)
        self.slopes = _nn.Parameter(torch.full((1, 3, hinges, 1, 1), 1.0 / hinges))
        self.register_buffer("knots", torch.linspace(0, 1, hinges + 1)[:-1].view(1, 1, hinges, 1, 1))
        self.mix = _nn.Conv2d(3, 1, 1)

    def forward(self, full, style, low_size):
        """full: (B, 3, H, W) in [0, 1]; style: (B,) preset ids; the enhanced image (B, 3, H, W)."""
        b, _, h, w = full.shape
        x = self.splat(_F.interpolate(full, size=low_size, mode="bilinear", align_corners=False))
        g = self.glob_mlp(self.glob_conv(x).flatten(1)) + self.style(style).to(x.dtype)
        grid = self.out(_F.relu(self.local(x) + g[:, :, None, None]))
        grid = grid.float().view(b, 12, self.depth, grid.shape[2], grid.shape[3])
        y = self.ccm(full)
        curves = (self.slopes * _F.relu(y[:, :, None] - self.knots)).sum(2)
        guide = torch.sigmoid(self.mix(curves)).float()
        xs = torch.linspace(-1, 1, w, device=full.device).view(1, 1, w).expand(b, h, w)
        ys = torch.linspace(-1, 1, h, device=full.device).view(1, h, 1).expand(b, h, w)
        coords = torch.stack([xs, ys, guide[:, 0] * 2 - 1], -1)[:, None]  # (B, 1, H, W, 3)
        coef = _F.grid_sample(grid, coords, mode="bilinear", align_corners=True)[:, :, 0]  # (B, 12, H, W)
        coef = coef.view(b, 3, 4, h, w)
        return (coef[:, :, :3] * full.float()[:, None]).sum(2) + coef[:, :, 3]


@_workload("photo-enhancement serving (random init, an HDRNet-style bilateral-grid network): 6,150-6,300 requests (drawn) of 1-4 photos each (drawn), the request's resolution one of 1,024 x 768, 1,280 x 960 and 1,440 x 1,080 (drawn per request) and one of 8 style presets per photo (drawn); uint8 pixels uploaded on a side stream from two reused pinned host buffers (filled once, sized for 4 photos of 1,440 x 1,080) one request ahead (one span, waited on by event, record_stream'ed), scaled to [0, 1] on the device; under bf16 autocast a 256 x 256 bilinear downsample, four stride-2 splatting convolutions (8/16/32/64 channels) to 16 x 16, a local path (two 3x3 convolutions) and a global path (two stride-2 convolutions and a 3-layer MLP, plus a 64-wide style embedding) fused into a bilateral grid of 12 affine coefficients x 8 luminance bins; a full-resolution guide from a learned 1x1 colour transform, 8-hinge piecewise-linear curves per channel and a 1x1 mix with a sigmoid; the grid sliced trilinearly by grid_sample (fp32) at every pixel and the per-pixel 3 x 4 affine transform applied, clamped and quantised to uint8; each request's mean output luma, clipped-highlight fraction and mean uint8 level per photo read back")
def photo_enhance_bilateral_serve(rng):
    n_style, depth, hinges, w = 8, _smoke(8, 4), _smoke(8, 4), _smoke(64, 16)
    model = _BilateralEnhancer(n_style, depth, hinges, w).cuda().eval()
    model.requires_grad_(False)
    sizes = _smoke([(1024, 768), (1280, 960), (1440, 1080)], [(96, 64), (128, 96)])
    low_size = (256, 256)  # 16 x 16 after the splatting, 4 x 4 in the global path
    max_photos = _smoke(4, 2)
    big = max(h * w for h, w in sizes) * 3
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_photos * big,), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    luma = torch.tensor([0.299, 0.587, 0.114], device="cuda").view(1, 3, 1, 1)
    nreq = rng.randint(_smoke(6150, 3), _smoke(6300, 4))
    plan = []
    for _ in range(nreq):
        f = rng.randint(1, max_photos)
        plan.append((f, *rng.choice(sizes), [rng.randrange(n_style) for _ in range(f)]))

    def span(p):
        return p[0] * 3 * p[1] * p[2]

    nxt = up.upload(0, span(plan[0]))
    for i in range(nreq):
        f, h, w, styles = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, span(plan[i + 1]))
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            img = raw.view(f, 3, h, w).float().div_(255)
            style = torch.tensor(styles, device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = model(img, style, low_size)
            out = out.clamp(0, 1)
            pix = (out * 255).round().to(torch.uint8)
            y = (out * luma).sum(1)
            stats = torch.cat([y.mean((1, 2)), (y > 0.98).float().mean((1, 2)), pix.float().mean((1, 2, 3))])
        stats.tolist()
        del item, raw, img, style, out, pix, y, stats


# ---------------------------------------------------------------- portrait relighting (diffusion sampling)


class _RelightUNet(_nn.Module):
    """The noisy image with the albedo, normals and matte; a U-Net of residual blocks with a timestep embedding plus
    an embedding of the 27 spherical-harmonic lighting coefficients (a learned null lighting for the unconditional
    branch), a stride-2 convolution per level, a residual block, a self-attention block and a residual block at the
    lowest resolution, nearest-upsampling residual blocks with skips; the predicted noise."""

    def __init__(self, widths, heads):
        super().__init__()
        temb = 4 * widths[0]
        self.w0 = widths[0]
        self.temb = mlp(widths[0], temb, temb, act=_nn.SiLU)
        self.light = mlp(27, temb, temb, act=_nn.SiLU)
        self.null = _nn.Parameter(torch.zeros(27))
        self.inp = _nn.Conv2d(3 + 3 + 3 + 1, widths[0], 3, 1, 1)
        self.down, self.pools, c = _nn.ModuleList(), _nn.ModuleList(), widths[0]
        for w in widths:
            self.down.append(TimeResBlock(c, w, temb))
            self.pools.append(_nn.Conv2d(w, w, 3, 2, 1))
            c = w
        self.mid1, self.attn, self.mid2 = TimeResBlock(c, c, temb), PreNormBlock(c, heads), TimeResBlock(c, c, temb)
        self.up = _nn.ModuleList()
        for w in reversed(widths):
            self.up.append(TimeResBlock(c + w, w, temb))
            c = w
        self.out = _nn.Sequential(_nn.GroupNorm(8, widths[0]), _nn.SiLU(), _nn.Conv2d(widths[0], 3, 3, 1, 1))

    def forward(self, x, t, cond, sh, uncond):
        """uncond: (B, 1) 1.0 where the null lighting replaces sh."""
        sh = torch.where(uncond > 0.5, self.null[None].to(sh.dtype), sh)
        te = self.temb(_sincos(t, self.w0).to(x.dtype)) + self.light(sh)
        h = self.inp(torch.cat([x, cond], 1))
        skips = []
        for blk, pool in zip(self.down, self.pools):
            h = blk(h, te)
            skips.append(h)
            h = pool(h)
        h = self.mid1(h, te)
        b, c, hh, ww = h.shape
        h = self.attn(h.flatten(2).transpose(1, 2)).transpose(1, 2).reshape(b, c, hh, ww)
        h = self.mid2(h, te)
        for blk, skip in zip(self.up, reversed(skips)):
            h = blk(torch.cat([_F.interpolate(h, scale_factor=2, mode="nearest"), skip], 1), te)
        return self.out(h).float()


@_workload("portrait relighting sampling (random init, a conditional diffusion U-Net): 68-74 requests (drawn) of 1-8 portraits each (drawn) at 128-256 pixels a side (drawn per request, a multiple of 32); per portrait an albedo, unit normals and a soft matte drawn on the device as smooth random fields, 27 target spherical-harmonic lighting coefficients (3 colours x 9) and a background; a U-Net (widths 64/128/192/256, a residual block with GroupNorm and a stride-2 convolution per level, sinusoidal timestep embedding plus a lighting-MLP embedding, residual, self-attention (4 heads, at 1/16 resolution) and residual blocks in the middle, nearest-upsampling residual blocks with skips) under bf16 autocast; DDIM sampling (eta 0) over 10-30 steps (drawn per request) of a 1,000-step cosine schedule, the timesteps and schedule values on the host, classifier-free guidance with a scale of 1.5-4 (drawn per request) by running the conditional and null-lighting branches as one doubled batch; the predicted image composited over the background by the matte and quantised to uint8; each request's mean luminance inside and outside the matte per portrait read back")
def portrait_relight_ddim_sample(rng):
    widths, heads = _smoke([64, 128, 192, 256], [8, 16]), _smoke(4, 2)
    model = _RelightUNet(widths, heads).cuda().eval()
    model.requires_grad_(False)
    n_t = 1000

    def abar(t):
        a0 = math.cos(0.008 / 1.008 * math.pi / 2) ** 2
        return max(1e-5, math.cos((t / n_t + 0.008) / 1.008 * math.pi / 2) ** 2 / a0)

    mult, down = _smoke(32, 8), 2 ** len(widths)
    nreq = rng.randint(_smoke(68, 2), _smoke(74, 3))
    for _ in range(nreq):
        b = rng.randint(1, _smoke(8, 2))
        r = max(down, rng.randint(_smoke(128, 8) // mult, _smoke(256, 16) // mult) * mult)
        k = rng.randint(_smoke(10, 2), _smoke(30, 3))
        scale = rng.uniform(1.5, 4.0)
        with torch.no_grad():
            albedo = torch.sigmoid(_blurry_noise(b, 3, r, r, max(2, r // 16)))
            normals = _F.normalize(_blurry_noise(b, 3, r, r, max(2, r // 32)) + torch.tensor(
                [0.0, 0.0, 1.5], device="cuda").view(1, 3, 1, 1), dim=1)
            matte = torch.sigmoid(4 * _blurry_noise(b, 1, r, r, 4) + 2)
            cond = torch.cat([albedo * 2 - 1, normals, matte], 1)
            sh = 0.5 * torch.randn(b, 27, device="cuda")
            background = torch.sigmoid(_blurry_noise(b, 3, r, r, 4))
            cond2, sh2 = torch.cat([cond, cond]), torch.cat([sh, sh])
            uncond = torch.cat([torch.zeros(b, 1, device="cuda"), torch.ones(b, 1, device="cuda")])
            x = torch.randn(b, 3, r, r, device="cuda")
            ts = [round((n_t - 1) * (1 - i / k)) for i in range(k)]
            for i in range(k):
                a, a_prev = abar(ts[i]), (abar(ts[i + 1]) if i + 1 < k else 1.0)
                t = torch.full((2 * b,), ts[i], device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    e = model(torch.cat([x, x]), t, cond2, sh2, uncond)
                e_c, e_u = e.chunk(2)
                e = e_u + scale * (e_c - e_u)
                x0 = ((x - math.sqrt(1 - a) * e) / math.sqrt(a)).clamp(-1, 1)
                x = math.sqrt(a_prev) * x0 + math.sqrt(1 - a_prev) * e
            img = (x.clamp(-1, 1) + 1) / 2
            out = matte * img + (1 - matte) * background
            pix = (out * 255).round().to(torch.uint8)
            lum = pix.float().mean(1, keepdim=True) / 255
            inside = (lum * matte).sum((1, 2, 3)) / matte.sum((1, 2, 3)).clamp(min=1)
            outside = (lum * (1 - matte)).sum((1, 2, 3)) / (1 - matte).sum((1, 2, 3)).clamp(min=1)
            stats = torch.cat([inside, outside])
        stats.tolist()
        del albedo, normals, matte, cond, sh, background, cond2, sh2, uncond, x, t, e, e_c, e_u, x0, img, out, pix
        del lum, inside, outside, stats


# ---------------------------------------------------------------- non-local graph denoising (message passing)


class _NonLocalEdgeLayer(_nn.Module):
    """Edge-conditioned messages from each neighbour (its features, their difference to the target's and the edge's
    offset and feature distance) by index_select, summed into the targets by index_add and averaged over the k
    neighbours; a residual node update from the LayerNormed state and the aggregate."""

    def __init__(self, w, edge_dim):
        super().__init__()
        self.norm = _nn.LayerNorm(w)
        self.msg = mlp(2 * w + edge_dim, w, w, act=_nn.GELU)
        self.upd = mlp(2 * w, 2 * w, w, act=_nn.GELU)

    def forward(self, h, src, dst, ef, k):
        hn = self.norm(h)
        hi, hj = hn.index_select(0, dst), hn.index_select(0, src)
        m = self.msg(torch.cat([hj, hj - hi, ef.to(hj.dtype)], -1))
        agg = torch.zeros(h.shape[0], m.shape[1], device=h.device, dtype=m.dtype).index_add_(0, dst, m) / k
        return h + self.upd(torch.cat([hn, agg.to(hn.dtype)], -1))


class _GraphDenoiser(_nn.Module):
    """The parts the training loop runs in turn: a full-resolution convolution, a stride-2 encoder to the graph's
    nodes, the message-passing layers, a pixel-shuffle upsampling and a head on it and the full-resolution
    features."""

    def __init__(self, w, layers):
        super().__init__()
        self.full = _nn.Sequential(_nn.Conv2d(4, w // 2, 3, 1, 1), _nn.ReLU())
        self.down = _nn.Sequential(_nn.Conv2d(w // 2, w, 3, 2, 1), _nn.ReLU(), _nn.Conv2d(w, w, 3, 1, 1))
        self.layers = _nn.ModuleList(_NonLocalEdgeLayer(w, 3) for _ in range(layers))
        self.up = _nn.Conv2d(w, 4 * (w // 2), 3, 1, 1)
        self.head = _nn.Sequential(_nn.Conv2d(w, w // 2, 3, 1, 1), _nn.ReLU(), _nn.Conv2d(w // 2, 3, 3, 1, 1))


@_workload("non-local graph denoising training (random init, an edge-conditioned message-passing network over a pixel graph, GCDN-style): 4-24 colour images a step (drawn, at most 12 x 128^2 pixels a step) at 64-160 pixels a side (drawn per step, a multiple of 16), smooth random fields with fine texture drawn on the device, Gaussian noise of sigma 5-50/255 drawn per image with the sigma map as an input channel; a full-resolution 3x3 convolution (width 32) and a stride-2 encoder (width 64) to the graph's nodes, one per half-resolution pixel; each node's 24 candidate neighbours (its 8 adjacent pixels and 16 offsets within a 15 x 15 search window drawn per step, clamped at the borders, self-candidates pushed away by masked_fill) ranked by no-grad feature distance and the nearest 8 kept by topk; 4 message-passing layers (width 64) with edge features of the offset and an exp(-distance) weight, messages by index_select and an MLP, index_add into the targets, residual node updates; the nodes put back on the grid, a pixel shuffle to full resolution, concatenated with the full-resolution features, a predicted noise residual; MSE; Adam, clipping, bf16 autocast, 715 steps; the loss read back every 20 steps and every 179 steps a no-grad evaluation of 4 images of 128 pixels at sigma 25/255 with the PSNR read back")
def nonlocal_graph_denoise_train(rng):
    w, layers, k, n_rand, radius = _smoke(64, 8), _smoke(4, 1), _smoke(8, 3), _smoke(16, 3), 7
    model = _GraphDenoiser(w, layers).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=2e-4)
    mult, budget = _smoke(16, 8), _smoke(12 * 128 * 128, 2 * 16 * 16)
    ring = torch.tensor([[dy, dx] for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dy or dx], device="cuda")

    def images(b, res, sigma=None):
        clean = torch.sigmoid(1.5 * _blurry_noise(b, 3, res, res, max(2, res // 16))
                              + 0.3 * torch.randn(b, 3, res, res, device="cuda"))
        s = (torch.empty(b, 1, 1, 1, device="cuda").uniform_(5 / 255, 50 / 255) if sigma is None
             else torch.full((b, 1, 1, 1), sigma, device="cuda"))
        noisy = clean + s * torch.randn_like(clean)
        return clean, noisy, s.expand(b, 1, res, res)

    def graph(feat, b, hh, ww):
        """feat: (N, w) node features; (src, dst, edge features) of the k nearest of 24 candidates per node."""
        n = feat.shape[0]
        offs = torch.cat([ring, torch.randint(-radius, radius + 1, (n_rand, 2), device="cuda")])
        node = torch.arange(n, device="cuda")
        bi, y, x = node // (hh * ww), (node // ww) % hh, node % ww
        ny = (y[:, None] + offs[None, :, 0]).clamp(0, hh - 1)
        nx = (x[:, None] + offs[None, :, 1]).clamp(0, ww - 1)
        cand = bi[:, None] * (hh * ww) + ny * ww + nx  # (N, C)
        dist = (feat[:, None] - feat.index_select(0, cand.flatten()).view(n, -1, feat.shape[1])).pow(2).mean(-1)
        dist = dist.masked_fill(cand == node[:, None], 1e4)
        near, sel = dist.topk(k, 1, largest=False)
        src = cand.gather(1, sel).flatten()
        dst = node[:, None].expand(n, k).flatten()
        ef = torch.stack([(ny - y[:, None]).gather(1, sel).float() / radius,
                          (nx - x[:, None]).gather(1, sel).float() / radius, torch.exp(-near)], -1).view(-1, 3)
        return src, dst, ef

    def denoise(noisy, smap):
        b, _, res, _ = noisy.shape
        full = model.full(torch.cat([noisy, smap], 1))
        grid = model.down(full)
        hh, ww = grid.shape[2], grid.shape[3]
        h = grid.permute(0, 2, 3, 1).reshape(-1, grid.shape[1])
        with torch.no_grad():
            src, dst, ef = graph(h.detach().float(), b, hh, ww)
        for layer in model.layers:
            h = layer(h, src, dst, ef, k)
        grid = h.view(b, hh, ww, -1).permute(0, 3, 1, 2)
        upf = _F.pixel_shuffle(model.up(grid), 2)
        return noisy - model.head(torch.cat([upf, full], 1)).float()

    steps = _smoke(715, 3)
    for step in range(steps):
        model.train()
        res = rng.randint(_smoke(64, 16) // mult, _smoke(160, 32) // mult) * mult
        b = rng.randint(_smoke(4, 1), max(_smoke(4, 1), min(_smoke(24, 2), budget // (res * res))))
        clean, noisy, smap = images(b, res)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = denoise(noisy, smap)
        loss = _F.mse_loss(pred, clean)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.detach().item()
        del clean, noisy, smap, pred, loss
        if (step + 1) % _smoke(179, 2) == 0:
            model.eval()
            with torch.no_grad():
                clean, noisy, smap = images(_smoke(4, 1), _smoke(128, 16), 25 / 255)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pred = denoise(noisy, smap)
                psnr = -10 * torch.log10((pred.clamp(0, 1) - clean).pow(2).mean().clamp(min=1e-10))
            psnr.item()
            del clean, noisy, smap, pred, psnr


# ---------------------------------------------------------------- lens PSF surrogate (Fourier optics)


class _PsfSurrogate(_nn.Module):
    """Positional encodings of field position, focus, wavelength and f-number with the lens's coefficients, an MLP
    to a 4 x 4 map, three transposed convolutions to 32 x 32, a softmax over the pixels."""

    def __init__(self, n_lens, freqs, hidden, c0):
        super().__init__()
        self.freqs, self.c0 = freqs, c0
        self.mlp = mlp(5 + 10 * freqs + n_lens, hidden, c0 * 16, layers=3, act=_nn.GELU)
        self.dec = _nn.Sequential(_nn.ConvTranspose2d(c0, c0 // 2, 4, 2, 1), _nn.GELU(),
                                  _nn.ConvTranspose2d(c0 // 2, c0 // 4, 4, 2, 1), _nn.GELU(),
                                  _nn.ConvTranspose2d(c0 // 4, c0 // 8, 4, 2, 1), _nn.GELU(),
                                  _nn.Conv2d(c0 // 8, 1, 3, 1, 1))

    def forward(self, q, lens):
        z = self.mlp(torch.cat([_posenc(q, self.freqs), lens], -1)).view(-1, self.c0, 4, 4)
        logits = self.dec(z).float().flatten(1)
        return logits.softmax(-1).view(-1, 32, 32)


@_workload("lens point-spread-function surrogate training (random init, an MLP and transposed-convolution decoder against a Fourier-optics simulation): 64-512 queries a step (log-uniform, a multiple of 32), each a lens of 8 aberration coefficients, a field position in the unit disc, a focus error, a wavelength of 450-650 nm and an f-number of 1.8-4 drawn on the device; the simulation: Seidel-style defocus, astigmatism, coma, spherical and trefoil Zernike coefficients from those, a 64 x 64 pupil (soft circular aperture scaled by the f-number), the complex pupil zero-padded to 128 x 128, its FFT's squared magnitude centred by roll, cropped and 2 x 2 average-pooled to a 32 x 32 PSF, a lateral shift (distortion and lateral colour) applied by a Fourier phase ramp (fftfreq) and renormalised; the surrogate: positional encodings (6 frequencies) of the 5 query values with the raw lens coefficients, a 3-layer MLP (width 512) to a 128 x 4 x 4 map, three stride-2 transposed convolutions and a 3x3 convolution, a softmax over the 1,024 pixels; L1 on the PSFs (x 1,024) plus 100 x the MSE between 64 x 64 random scene patches blurred by the predicted and the simulated PSF (FFT convolution in fp32); AdamW, clipping, bf16 autocast, 1,175 steps; the loss read back every 20 steps and every 235 steps a no-grad evaluation over a 16 x 16 grid of field positions of one lens with the mean PSF L1 and the peak-intensity error read back")
def lens_psf_surrogate_train(rng):
    n, n_lens, freqs, hidden, c0 = 64, 8, _smoke(6, 2), _smoke(512, 32), _smoke(128, 16)
    out_n, scene_n = n // 2, 2 * (n // 2)
    model = _PsfSurrogate(n_lens, freqs, hidden, c0).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=1e-4)
    g = torch.linspace(-1.1, 1.1, n, device="cuda")
    py, px = g[:, None].expand(n, n), g[None, :].expand(n, n)
    rho0, th = (px * px + py * py).sqrt(), torch.atan2(py, px)
    fy, fx = fftfreq(out_n)[:, None], fftfreq(out_n)[None, :]

    def queries(b):
        ang = torch.rand(b, device="cuda") * 2 * math.pi
        rad = torch.rand(b, device="cuda").sqrt()
        q = torch.stack([rad * ang.cos(), rad * ang.sin(), torch.randn(b, device="cuda") * 0.5,
                         torch.empty(b, device="cuda").uniform_(0.45, 0.65),
                         torch.empty(b, device="cuda").uniform_(1.8, 4.0)], -1)
        lens = torch.randn(b, n_lens, device="cuda") * 0.5
        return q, lens

    def simulate(q, lens):
        x, y, focus, lam, fnum = (q[:, i, None, None] for i in range(5))
        r2, phi = x * x + y * y, torch.atan2(y, x)
        L = [lens[:, i, None, None] for i in range(n_lens)]
        dl = (lam - 0.55) / 0.1
        scale = 1.8 / fnum
        rho = rho0 / scale
        theta = th - phi
        c_def = 1.5 * focus + L[0] * r2 + 0.4 * L[1] * dl
        c_ast, c_com = L[2] * r2, L[3] * r2.sqrt()
        c_sph, c_tre = 0.3 * L[4] + 0.1 * L[5] * dl, 0.3 * L[6] * r2 * r2.sqrt()
        wave = (c_def * (2 * rho ** 2 - 1) + c_ast * rho ** 2 * torch.cos(2 * theta)
                + c_com * (3 * rho ** 3 - 2 * rho) * torch.cos(theta) + c_sph * (6 * rho ** 4 - 6 * rho ** 2 + 1)
                + c_tre * rho ** 3 * torch.cos(3 * theta)) * (0.55 / lam)
        amp = torch.sigmoid((1 - rho) * 40)
        re, im = _F.pad(amp * torch.cos(2 * math.pi * wave), (0, n, 0, n)), _F.pad(
            amp * torch.sin(2 * math.pi * wave), (0, n, 0, n))
        field = torch.fft.fft2(torch.complex(re, im))
        inten = torch.roll(field.real ** 2 + field.imag ** 2, (n, n), (1, 2))
        crop = inten[:, n // 2:n // 2 + n, n // 2:n // 2 + n]
        psf = _F.avg_pool2d(crop[:, None], 2)[:, 0]
        psf = psf / psf.sum((1, 2), keepdim=True)
        shift = (2.0 * L[7] * r2 + 1.5 * dl * L[1]) * 2  # pixels, radial
        sx, sy = shift * x / r2.sqrt().clamp(min=1e-3), shift * y / r2.sqrt().clamp(min=1e-3)
        ramp = torch.polar(torch.ones_like(fx * sx), -2 * math.pi * (fx * sx + fy * sy))
        psf = torch.fft.ifft2(torch.fft.fft2(psf) * ramp).real.clamp(min=0)
        return psf / psf.sum((1, 2), keepdim=True).clamp(min=1e-12)

    def render(scene, psf):
        kern = torch.roll(_F.pad(psf, (0, scene_n - out_n, 0, scene_n - out_n)), (-out_n // 2, -out_n // 2), (1, 2))
        return torch.fft.irfft2(torch.fft.rfft2(scene) * torch.fft.rfft2(kern), s=(scene_n, scene_n))

    steps = _smoke(1175, 3)
    for step in range(steps):
        model.train()
        b = _loguniform(rng, _smoke(64, 4), _smoke(512, 8), _smoke(32, 4))
        q, lens = queries(b)
        with torch.no_grad():
            target = simulate(q, lens)
            scene = torch.sigmoid(_blurry_noise(b, 1, scene_n, scene_n, 8)[:, 0] * 2)
            ref = render(scene, target)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(q, lens)
        loss = _F.l1_loss(pred * out_n * out_n, target * out_n * out_n) + 100 * _F.mse_loss(render(scene, pred), ref)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.detach().item()
        del q, lens, target, scene, ref, pred, loss
        if (step + 1) % _smoke(235, 2) == 0:
            model.eval()
            with torch.no_grad():
                m = _smoke(16, 2)
                gx = torch.linspace(-0.7, 0.7, m, device="cuda")
                q, _ = queries(m * m)
                q = torch.cat([gx[None, :].expand(m, m).reshape(-1, 1), gx[:, None].expand(m, m).reshape(-1, 1),
                               q[:, 2:]], 1)
                lens = (torch.randn(1, n_lens, device="cuda") * 0.5).expand(m * m, n_lens)
                target = simulate(q, lens)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pred = model(q, lens)
                err = torch.stack([(pred - target).abs().sum((1, 2)).mean(),
                                   (pred.amax((1, 2)) - target.amax((1, 2))).abs().mean()])
            err.tolist()
            del q, lens, target, pred, err, gx

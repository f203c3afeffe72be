"""The forty-third batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch42_b.py are): generative image and video models other than plain diffusion sampling, first half. A VQGAN
tokenizer trained with a perceptual loss, a PatchGAN discriminator switched on part-way with the adaptive weight
of taming-transformers and an EMA codebook whose dead codes are restarted, a StyleGAN2 trained with lazy
regularization (an R1 penalty every 16 discriminator steps, path-length regularization every 4 generator steps, both
through double backward) under a batch-size ramp, consistency distillation of a frozen pixel-space diffusion
teacher (Heun steps of the teacher between adjacent noise levels, an EMA target network, a discretization that
grows over the run) and a causal 3-D video VAE that encodes and decodes videos of many frame counts and sizes in
temporal tiles with per-layer causal-conv caches, its uint8 frames uploaded on a side stream. Same conventions:
models written by hand in torch with random weights, nothing downloaded, `rng` the workload's random.Random for
every shape, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a
tensor's value (dead codes are restarted through torch.where on a float mask; evaluation numbers are read back only
for logging). videovae_tile_serve uses a side stream (uploads waited on by event, the tensors record_stream'ed);
the others are single-stream. vqgan_tokenizer_train and consistency_distill_train run under bf16 autocast,
videovae_tile_serve in bf16 under inference_mode, stylegan2_lazyreg_train in fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch43_b.py's header says the same of its half): every workload of this
half was run whole, at its real sizes (RECORD_SMOKE unset), on PyTorch's meta device (a runner like
/tmp/b43/meta_run.py, not committed: smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered
with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking its math path; boolean-mask indexing,
which the meta device cannot size, is avoided) and its op outputs counted there (events about 1.8x that count);
the counts and peaks are in record_new43.sh's header. The CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import copy
import math

import torch

from batch_common import Batch
from workload_models import _UNet, _VaeResBlock

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


class _Lpips(torch.nn.Module):
    """An LPIPS-style perceptual distance (frozen VGG-shaped trunk, random weights): channel-normalized features
    of five stages, squared differences weighted by 1x1 'lin' layers, averaged over space, summed over stages."""

    def __init__(self, widths=(64, 128, 256, 512, 512)):
        super().__init__()
        nn = torch.nn
        self.stages, self.lins, c = nn.ModuleList(), nn.ModuleList(), 3
        for i, w in enumerate(widths):
            layers = ([nn.MaxPool2d(2)] if i else []) + [nn.Conv2d(c, w, 3, padding=1), nn.ReLU(),
                                                         nn.Conv2d(w, w, 3, padding=1), nn.ReLU()]
            self.stages.append(nn.Sequential(*layers))
            self.lins.append(nn.Conv2d(w, 1, 1, bias=False))
            c = w
        self.requires_grad_(False)
        self.eval()

    def forward(self, a, b):
        h = torch.cat([a, b])
        d = 0
        for st, lin in zip(self.stages, self.lins):
            h = st(h)
            fa, fb = h.chunk(2)
            fa = fa / (fa.pow(2).sum(1, keepdim=True).sqrt() + 1e-10)
            fb = fb / (fb.pow(2).sum(1, keepdim=True).sqrt() + 1e-10)
            d = d + lin((fa - fb).pow(2)).mean((1, 2, 3))
        return d


class _PatchDisc(torch.nn.Module):
    """pix2pix's NLayerDiscriminator (64-128-256-512, BatchNorm, LeakyReLU 0.2), a logit per patch."""

    def __init__(self, cin=3, w=64, layers=3):
        super().__init__()
        nn = torch.nn
        seq, c = [nn.Conv2d(cin, w, 4, 2, 1), nn.LeakyReLU(0.2)], w
        for i in range(1, layers + 1):
            co = w * min(2 ** i, 8)
            seq += [nn.Conv2d(c, co, 4, 2 if i < layers else 1, 1, bias=False), nn.BatchNorm2d(co), nn.LeakyReLU(0.2)]
            c = co
        seq.append(nn.Conv2d(c, 1, 4, 1, 1))
        self.net = nn.Sequential(*seq)

    def forward(self, x):
        return self.net(x)


# ---------------------------------------------------------------- VQGAN


class _VqCoder(torch.nn.Module):
    """A VQGAN encoder or decoder (taming-transformers' layout, narrower): SD-VAE ResBlocks, stride-2 convs down
    (nearest 2x and a conv up), widths per level."""

    def __init__(self, widths, zc, decode):
        super().__init__()
        nn = torch.nn
        self.decode = decode
        ws = list(reversed(widths)) if decode else list(widths)
        self.inp = nn.Conv2d(zc if decode else 3, ws[0], 3, padding=1)
        self.levels, c = nn.ModuleList(), ws[0]
        for i, w in enumerate(ws):
            blocks = nn.ModuleList([_VaeResBlock(c, w), _VaeResBlock(w, w)])
            c = w
            if i < len(ws) - 1:
                blocks.append(nn.Conv2d(c, c, 3, padding=1) if decode else nn.Conv2d(c, c, 3, 2, 1))
            self.levels.append(blocks)
        self.mid = _VaeResBlock(ws[0], ws[0]) if decode else _VaeResBlock(c, c)
        self.norm = nn.GroupNorm(32, c, eps=1e-6)
        self.out = nn.Conv2d(c, 3 if decode else zc, 3, padding=1)

    def forward(self, x):
        f = torch.nn.functional
        h = self.inp(x)
        if self.decode:
            h = self.mid(h)
        for i, blocks in enumerate(self.levels):
            h = blocks[1](blocks[0](h))
            if len(blocks) == 3:
                h = blocks[2](f.interpolate(h, scale_factor=2.0, mode="nearest") if self.decode else h)
        if not self.decode:
            h = self.mid(h)
        return self.out(f.silu(self.norm(h)))


@_workload("image tokenizer training, VQGAN (Esser et al. 2021, taming-transformers' recipe) written by hand (random init): an encoder and decoder of SD-VAE-style ResBlocks (widths 128-128-256-256, downsampling 8x) around an EMA vector quantizer (8192 codes of 32 dims, l2-normalized, decay 0.99 with Laplace smoothing; codes used less than 0.03 of the time restarted from random encoder outputs through torch.where on a float mask), commitment loss 0.25; an LPIPS-style perceptual loss (a frozen VGG-shaped trunk of random weights, five stages) and, from step 60 on, a PatchGAN discriminator (64-512, BatchNorm) with hinge losses and taming's adaptive weight (the ratio of the reconstruction and generator losses' gradient norms at the decoder's last conv, by torch.autograd.grad); batches of 4-16 images at 128, 192, 256 or 320 px (drawn per step, capped at 4 images of 256 px worth of pixels), 205 steps, Adam (0.5, 0.9) for both, bf16 autocast; every 45 steps a reconstruction of 8 images at 256 px without grad, the codebook usage read back")
def vqgan_tokenizer_train(rng):
    f = torch.nn.functional
    nsteps, disc_start = _smoke(205, 3), _smoke(60, 1)
    widths = (128, 128, 256, 256) if _smoke(1, 0) else (32, 32, 64)
    k, dz = _smoke(8192, 64), 32
    enc, dec = _VqCoder(widths, dz, False).cuda(), _VqCoder(widths, dz, True).cuda()
    disc, lp = _PatchDisc().cuda(), _Lpips().cuda()
    book = f.normalize(torch.randn(k, dz, device="cuda"), dim=1)
    size = torch.ones(k, device="cuda")
    embed_sum = book.clone()
    opt_ae = torch.optim.Adam(list(enc.parameters()) + list(dec.parameters()), lr=4.5e-6 * 8, betas=(0.5, 0.9))
    opt_d = torch.optim.Adam(disc.parameters(), lr=4.5e-6 * 8, betas=(0.5, 0.9))
    cap = _smoke(4 * 256 * 256, 2 * 64 * 64)

    def quantize(z, train):
        nonlocal book, size, embed_sum
        zf = f.normalize(z.permute(0, 2, 3, 1).reshape(-1, dz).float(), dim=1)
        idx = (zf @ book.t()).argmax(1)
        q = book[idx]
        if train:
            with torch.no_grad():
                onehot = f.one_hot(idx, k).float()
                size = size * 0.99 + onehot.sum(0) * 0.01
                embed_sum = embed_sum * 0.99 + (onehot.t() @ zf) * 0.01
                n = size.sum()
                smoothed = (size + 1e-5) / (n + k * 1e-5) * n
                book = f.normalize(embed_sum / smoothed[:, None], dim=1)
                dead = (size / n * k < 0.03).float()[:, None]
                pick = torch.randint(0, zf.shape[0], (k,), device="cuda")
                book = torch.where(dead > 0, zf[pick], book)
                embed_sum = torch.where(dead > 0, zf[pick], embed_sum)
                size = size * (1 - dead[:, 0]) + dead[:, 0]
        commit = 0.25 * (zf - q.detach()).pow(2).mean()
        q = zf + (q - zf).detach()
        return q.reshape(z.shape[0], z.shape[2], z.shape[3], dz).permute(0, 3, 1, 2), commit, idx

    for step in range(nsteps):
        res = rng.choice(_smoke([128, 192, 256, 320], [32, 64]))
        b = max(1, min(rng.randint(4, 16), cap // (res * res)))
        x = torch.rand(b, 3, res, res, device="cuda") * 2 - 1
        with torch.autocast("cuda", dtype=torch.bfloat16):
            q, commit, _ = quantize(enc(x), True)
            xr = dec(q)
            rec = (x - xr.float()).abs().mean() + lp(x, xr.float()).mean()
            loss = rec + commit
            if step >= disc_start:
                g = -disc(xr).float().mean()
                last = dec.out.weight
                gr = torch.autograd.grad(rec, last, retain_graph=True)[0]
                gg = torch.autograd.grad(g, last, retain_graph=True)[0]
                w = (gr.norm() / (gg.norm() + 1e-4)).clamp(0, 1e4).detach()
                loss = loss + 0.8 * w * g
        opt_ae.zero_grad(set_to_none=True)
        loss.backward()
        opt_ae.step()
        if step >= disc_start:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                lr_ = disc(x).float()
                lf = disc(xr.detach()).float()
                ld = 0.5 * (f.relu(1 - lr_).mean() + f.relu(1 + lf).mean())
            opt_d.zero_grad(set_to_none=True)
            ld.backward()
            opt_d.step()
            del lr_, lf, ld
        del x, q, xr, rec, loss, commit
        if (step + 1) % _smoke(45, 2) == 0:
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                xe = torch.rand(_smoke(8, 2), 3, _smoke(256, 64), _smoke(256, 64), device="cuda") * 2 - 1
                _, _, idx = quantize(enc(xe), False)
                used = torch.zeros(k, device="cuda").index_fill_(0, idx, 1.0).sum()
                err = (dec(book[idx].reshape(xe.shape[0], xe.shape[2] // 2 ** (len(widths) - 1), -1, dz).permute(0, 3, 1, 2)).float() - xe).abs().mean()
            used.item(), err.item()
            del xe, idx, used, err


# ---------------------------------------------------------------- StyleGAN2


class _ModConv(torch.nn.Module):
    """StyleGAN2's modulated convolution: weights scaled by the style, demodulated, run as one grouped conv over
    the batch; optional 2x upsampling (bilinear here, where StyleGAN2 uses upfirdn), per-pixel noise, bias, lrelu."""

    def __init__(self, cin, cout, wdim, k=3, up=False, demod=True, act=True):
        super().__init__()
        nn = torch.nn
        self.weight = nn.Parameter(torch.randn(cout, cin, k, k))
        self.affine = nn.Linear(wdim, cin)
        nn.init.ones_(self.affine.bias)
        self.bias = nn.Parameter(torch.zeros(cout))
        self.noise_strength = nn.Parameter(torch.zeros(())) if act else None
        self.up, self.demod, self.act, self.k = up, demod, act, k
        self.scale = 1 / math.sqrt(cin * k * k)

    def forward(self, x, w, noise=None):
        f = torch.nn.functional
        b, cin, h, ww = x.shape
        s = self.affine(w)
        wt = self.weight[None] * self.scale * s[:, None, :, None, None]
        if self.demod:
            wt = wt * torch.rsqrt(wt.pow(2).sum((2, 3, 4), keepdim=True) + 1e-8)
        if self.up:
            x = f.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=False)
            h, ww = h * 2, ww * 2
        y = f.conv2d(x.reshape(1, b * cin, h, ww), wt.reshape(-1, cin, self.k, self.k), padding=self.k // 2, groups=b)
        y = y.reshape(b, -1, h, ww)
        if self.act:
            if noise is None:
                noise = torch.randn(b, 1, h, ww, device=x.device)
            y = y + noise * self.noise_strength
            return f.leaky_relu(y + self.bias[None, :, None, None], 0.2) * math.sqrt(2)
        return y + self.bias[None, :, None, None]


class _StyleGen(torch.nn.Module):
    """A StyleGAN2 generator (config-F layout, narrower): an 8-layer mapping MLP (lr multiplier 0.01 omitted), a
    learned 4x4 constant, two modulated convs per resolution up to `res`, skip-connected ToRGBs."""

    def __init__(self, res=128, zdim=512, wdim=512, chans=None):
        super().__init__()
        nn = torch.nn
        layers = []
        for i in range(8):
            layers += [nn.Linear(zdim if i == 0 else wdim, wdim), nn.LeakyReLU(0.2)]
        self.mapping = nn.Sequential(*layers)
        self.wdim = wdim
        self.log = int(math.log2(res))
        chans = chans or {4: 512, 8: 512, 16: 512, 32: 512, 64: 256, 128: 128, 256: 64}
        self.const = nn.Parameter(torch.randn(1, chans[4], 4, 4))
        self.conv0 = _ModConv(chans[4], chans[4], wdim)
        self.rgb0 = _ModConv(chans[4], 3, wdim, k=1, demod=False, act=False)
        self.convs, self.rgbs = nn.ModuleList(), nn.ModuleList()
        for lg in range(3, self.log + 1):
            cin, cout = chans[2 ** (lg - 1)], chans[2 ** lg]
            self.convs.append(nn.ModuleList([_ModConv(cin, cout, wdim, up=True), _ModConv(cout, cout, wdim)]))
            self.rgbs.append(_ModConv(cout, 3, wdim, k=1, demod=False, act=False))
        self.num_ws = 2 + 2 * (self.log - 2)

    def synth(self, ws, noises=None):
        f = torch.nn.functional
        b = ws.shape[0]
        x = self.conv0(self.const.expand(b, -1, -1, -1), ws[:, 0], None if noises is None else noises[0])
        img = self.rgb0(x, ws[:, 1])
        i = 1
        for (c1, c2), rgb in zip(self.convs, self.rgbs):
            x = c1(x, ws[:, i], None if noises is None else noises[i])
            x = c2(x, ws[:, i + 1], None if noises is None else noises[i + 1])
            img = f.interpolate(img, scale_factor=2.0, mode="bilinear", align_corners=False) + rgb(x, ws[:, i + 2])
            i += 2
        return img

    def noise_shapes(self):
        shapes = [4]
        for lg in range(3, self.log + 1):
            shapes += [2 ** lg, 2 ** lg]
        return shapes


class _StyleDisc(torch.nn.Module):
    """StyleGAN2's residual discriminator: fromRGB, residual blocks halving the resolution down to 4x4,
    minibatch standard deviation (group 4), a conv and two linear layers."""

    def __init__(self, res=128, chans=None):
        super().__init__()
        nn = torch.nn
        chans = chans or {4: 512, 8: 512, 16: 512, 32: 512, 64: 256, 128: 128, 256: 64}
        self.frgb = nn.Conv2d(3, chans[res], 1)
        self.blocks = nn.ModuleList()
        r = res
        while r > 4:
            cin, cout = chans[r], chans[r // 2]
            self.blocks.append(nn.ModuleList([nn.Conv2d(cin, cin, 3, padding=1), nn.Conv2d(cin, cout, 3, 2, 1),
                                              nn.Conv2d(cin, cout, 1, 2, bias=False)]))
            r //= 2
        self.conv = nn.Conv2d(chans[4] + 1, chans[4], 3, padding=1)
        self.fc, self.out = nn.Linear(chans[4] * 16, chans[4]), nn.Linear(chans[4], 1)

    def forward(self, x):
        f = torch.nn.functional
        h = f.leaky_relu(self.frgb(x), 0.2)
        for c1, c2, sk in self.blocks:
            y = f.leaky_relu(c2(f.leaky_relu(c1(h), 0.2)), 0.2)
            h = (y + sk(h)) / math.sqrt(2)
        b, c, hh, ww = h.shape
        g = min(4, b)
        y = h.reshape(g, -1, c, hh, ww)
        y = (y - y.mean(0)).pow(2).mean(0).add(1e-8).sqrt().mean((1, 2, 3))
        y = y.reshape(-1, 1, 1, 1).repeat(g, 1, hh, ww)
        h = f.leaky_relu(self.conv(torch.cat([h, y], 1)), 0.2)
        return self.out(f.leaky_relu(self.fc(h.flatten(1)), 0.2))


@_workload("style-based GAN training with lazy regularization, StyleGAN2 (Karras et al. 2020, config F's losses) written by hand at 128 px (random init, fp32): an 8-layer mapping network of 512, modulated and demodulated 3x3 convs run as grouped convs over the batch (512-512-512-512-256-128 channels from 4 to 128 px), per-pixel noise, skip ToRGBs; a residual discriminator with minibatch standard deviation; non-saturating logistic losses, style mixing with probability 0.9 (the crossover layer drawn on the host); lazy regularization: an R1 penalty (gamma 0.1, double backward through the discriminator) every 16 discriminator steps and path-length regularization (half the batch, the gradient of the image against random image-space noise w.r.t. the w's by torch.autograd.grad with create_graph, its running mean kept on the device) every 4 generator steps, the Adam betas and rates scaled as the paper's lazy schedule does; progressive batch sizes 8 -> 12 -> 16 -> 20 over 4 phases of 40 iterations (a discriminator then a generator step each), an EMA of the generator (foreach lerp) every step; every 40 iterations 32 EMA samples in batches of 8 without grad, their mean read back")
def stylegan2_lazyreg_train(rng):
    f = torch.nn.functional
    res = _smoke(128, 16)
    chans = None if _smoke(1, 0) else {4: 32, 8: 32, 16: 16}
    wdim = _smoke(512, 32)
    g = _StyleGen(res, wdim, wdim, chans).cuda()
    d = _StyleDisc(res, chans).cuda()
    g_ema = copy.deepcopy(g).requires_grad_(False)
    r1_every, pl_every = 16, 4
    gr, dr = pl_every / (pl_every + 1), r1_every / (r1_every + 1)
    opt_g = torch.optim.Adam(g.parameters(), lr=0.0025 * gr, betas=(0.0, 0.99 ** gr))
    opt_d = torch.optim.Adam(d.parameters(), lr=0.0025 * dr, betas=(0.0, 0.99 ** dr))
    pl_mean = torch.zeros((), device="cuda")
    per_phase = _smoke(40, 2)
    batches = _smoke([8, 12, 16, 20], [2, 4])
    it = 0

    def make_ws(b, net):
        z = torch.randn(b, wdim, device="cuda")
        w = net.mapping(z)[:, None].repeat(1, net.num_ws, 1)
        if rng.random() < 0.9:
            cut = rng.randrange(1, net.num_ws)
            w2 = net.mapping(torch.randn(b, wdim, device="cuda"))
            w = torch.cat([w[:, :cut], w2[:, None].expand(-1, net.num_ws - cut, -1)], 1)
        return w

    for b in batches:
        for _ in range(per_phase):
            # Discriminator step (R1 every r1_every).
            real = torch.rand(b, 3, res, res, device="cuda") * 2 - 1
            with torch.no_grad():
                fake = g.synth(make_ws(b, g))
            loss_d = f.softplus(d(fake)).mean() + f.softplus(-d(real)).mean()
            opt_d.zero_grad(set_to_none=True)
            loss_d.backward()
            if it % r1_every == 0:
                rr = real.detach().requires_grad_()
                out = d(rr)
                grad, = torch.autograd.grad(out.sum(), rr, create_graph=True)
                r1 = grad.pow(2).sum((1, 2, 3)).mean() * (0.1 / 2) * r1_every
                (r1 + out.mean() * 0).backward()
                del rr, out, grad, r1
            opt_d.step()
            del real, fake, loss_d
            # Generator step (path length every pl_every).
            img = g.synth(make_ws(b, g))
            loss_g = f.softplus(-d(img)).mean()
            opt_g.zero_grad(set_to_none=True)
            loss_g.backward()
            del img, loss_g
            if it % pl_every == 0:
                pb = max(1, b // 2)
                ws = make_ws(pb, g)
                img = g.synth(ws)
                noise = torch.randn_like(img) / math.sqrt(res * res)
                grad, = torch.autograd.grad((img * noise).sum(), ws, create_graph=True)
                lengths = grad.pow(2).sum(2).mean(1).sqrt()
                pl_mean = pl_mean.lerp(lengths.mean().detach(), 0.01)
                pen = (lengths - pl_mean).pow(2).mean() * 2 * pl_every
                (pen + img[:, 0, 0, 0].mean() * 0).backward()
                del ws, img, noise, grad, lengths, pen
            opt_g.step()
            with torch.no_grad():
                torch._foreach_lerp_(list(g_ema.parameters()), list(g.parameters()), 1 - 0.999)
            it += 1
        with torch.no_grad():
            tot = torch.zeros((), device="cuda")
            for _ in range(_smoke(4, 1)):
                tot = tot + g_ema.synth(make_ws(_smoke(8, 2), g_ema)).mean()
            tot.item()
            del tot


# ---------------------------------------------------------------- consistency distillation


def _karras(n, smin=0.002, smax=80.0, rho=7.0):
    return [(smax ** (1 / rho) + i / (n - 1) * (smin ** (1 / rho) - smax ** (1 / rho))) ** rho for i in range(n)]


@_workload("consistency distillation of a diffusion model (Song et al. 2023, CD with a Heun teacher, as openai/consistency_models trains it) written by hand (random init): a frozen pixel-space teacher (the diffusion _UNet: 128-256-512 channels, two ResBlocks a level, attention in the middle, noise-level embedding; EDM preconditioning) and a student initialized from it plus an EMA target network (decay 0.95); each step draws images at 32, 48 or 64 px (drawn per step) in batches of 8-64 (capped at 32 images of 64 px worth of pixels), a discretization index n of a Karras schedule whose size N grows over the run (18, 40, 80: iCT-style curriculum), x at sigma_{n+1}, one Heun step of the teacher (two evaluations, no grad) down to sigma_n, the target network's consistency function there (no grad) and the student's at sigma_{n+1} with the c_skip/c_out boundary parametrization, a pseudo-Huber loss weighted by 1/(sigma_{n+1} - sigma_n), RAdam, a foreach EMA of the target; 140 steps; every 50 steps one- and two-step sampling of 16-48 images at 64 px without grad, the mean read back; bf16 autocast")
def consistency_distill_train(rng):
    nsteps = _smoke(140, 3)
    ch = (128, 256, 512) if _smoke(1, 0) else (32, 32, 64)
    teacher = _UNet(ch).cuda().eval().requires_grad_(False)
    student = copy.deepcopy(teacher).train().requires_grad_(True)
    target = copy.deepcopy(teacher)
    opt = torch.optim.RAdam(student.parameters(), lr=4e-5)
    sd = 0.5
    cap = _smoke(32 * 64 * 64, 4 * 16 * 16)

    def denoise(net, x, sig):
        """EDM-preconditioned denoiser; sig (B,) sigmas."""
        s = sig[:, None, None, None]
        cin = 1 / (s * s + sd * sd).sqrt()
        out = net(x * cin, 250 * sig.log())
        cskip = sd * sd / (s * s + sd * sd)
        cout = s * sd / (s * s + sd * sd).sqrt()
        return cskip * x + cout * out.float()

    def consistency(net, x, sig):
        s = sig[:, None, None, None]
        smin = 0.002
        cskip = sd * sd / ((s - smin) ** 2 + sd * sd)
        cout = (s - smin) * sd / (s * s + sd * sd).sqrt()
        cin = 1 / (s * s + sd * sd).sqrt()
        return cskip * x + cout * net(x * cin, 250 * sig.log()).float()

    for step in range(nsteps):
        big_n = (18, 40, 80)[min(2, step * 3 // nsteps)]
        sigmas = list(reversed(_karras(big_n)))  # ascending
        res = rng.choice(_smoke([32, 48, 64], [16]))
        b = max(1, min(rng.randint(8, 64), cap // (res * res)))
        idx = [rng.randrange(0, big_n - 1) for _ in range(b)]
        s_lo = torch.tensor([sigmas[i] for i in idx], device="cuda")
        s_hi = torch.tensor([sigmas[i + 1] for i in idx], device="cuda")
        x0 = torch.rand(b, 3, res, res, device="cuda") * 2 - 1
        x_hi = x0 + s_hi[:, None, None, None] * torch.randn_like(x0)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            with torch.no_grad():
                dh = (x_hi - denoise(teacher, x_hi, s_hi)) / s_hi[:, None, None, None]
                dt = (s_lo - s_hi)[:, None, None, None]
                x_eul = x_hi + dt * dh
                dl = (x_eul - denoise(teacher, x_eul, s_lo)) / s_lo[:, None, None, None]
                x_lo = x_hi + dt * 0.5 * (dh + dl)
                tgt = consistency(target, x_lo, s_lo)
            pred = consistency(student, x_hi, s_hi)
            c = 0.00054 * math.sqrt(3 * res * res)
            w = 1 / (s_hi - s_lo)
            loss = (w * (((pred - tgt).pow(2).mean((1, 2, 3)) + c * c).sqrt() - c)).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        with torch.no_grad():
            torch._foreach_lerp_(list(target.parameters()), list(student.parameters()), 0.05)
        del x0, x_hi, dh, x_eul, dl, x_lo, tgt, pred, loss, s_lo, s_hi, w
        if (step + 1) % _smoke(50, 3) == 0:
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                n = rng.randint(_smoke(16, 1), _smoke(48, 2))
                r = _smoke(64, 16)
                x = torch.randn(n, 3, r, r, device="cuda") * 80.0
                img = consistency(target, x, torch.full((n,), 80.0, device="cuda"))
                mid = 0.8
                x = img + math.sqrt(mid * mid - 0.002 ** 2) * torch.randn_like(img)
                img = consistency(target, x, torch.full((n,), mid, device="cuda"))
                img.mean().item()
                del x, img


# ---------------------------------------------------------------- causal video VAE


class _CausalConv3d(torch.nn.Module):
    """A 3-D conv padded causally in time: the previous tile's last k-1 frames (this layer's cache) are prepended,
    the first tile's are replicas of its first frame; the new cache is returned."""

    def __init__(self, cin, cout, k=3, stride=(1, 1, 1)):
        super().__init__()
        self.conv = torch.nn.Conv3d(cin, cout, k, stride=stride, padding=(0, k // 2, k // 2))
        self.kt = k

    def forward(self, x, cache):
        if self.kt > 1:
            pad = x[:, :, :1].expand(-1, -1, self.kt - 1, -1, -1) if cache is None else cache
            x = torch.cat([pad, x], 2)
            new = x[:, :, -(self.kt - 1):].clone()
        else:
            new = None
        return self.conv(x), new


class _CausalRes(torch.nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        nn = torch.nn
        self.n1, self.c1 = nn.GroupNorm(32, cin), _CausalConv3d(cin, cout)
        self.n2, self.c2 = nn.GroupNorm(32, cout), _CausalConv3d(cout, cout)
        self.skip = nn.Conv3d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, caches, key):
        f = torch.nn.functional
        h, caches[key + "a"] = self.c1(f.silu(self.n1(x)), caches.get(key + "a"))
        h, caches[key + "b"] = self.c2(f.silu(self.n2(h)), caches.get(key + "b"))
        return self.skip(x) + h


class _VideoVae(torch.nn.Module):
    """A causal 3-D video VAE (CogVideoX/Hunyuan-style layout, narrower): 8x spatial and 4x temporal compression
    to 16 latent channels; every conv causal in time with a per-layer cache so that a video can run tile by
    tile; time is downsampled (stride-2 causal convs) at the two deeper levels, and upsampled by repeating frames."""

    def __init__(self, widths=(64, 128, 256, 256), zc=16):
        super().__init__()
        nn = torch.nn
        self.e_in = _CausalConv3d(3, widths[0])
        self.e_blocks, self.e_down, c = nn.ModuleList(), nn.ModuleList(), widths[0]
        for i, w in enumerate(widths):
            self.e_blocks.append(_CausalRes(c, w))
            c = w
            if i < len(widths) - 1:
                st = (2 if i >= 1 else 1, 2, 2)
                self.e_down.append(_CausalConv3d(c, c, 3, st))
        self.e_out = nn.Sequential(nn.GroupNorm(32, c), nn.SiLU(), nn.Conv3d(c, 2 * zc, 1))
        self.d_in = _CausalConv3d(zc, c)
        self.d_blocks, self.d_up = nn.ModuleList(), nn.ModuleList()
        for i, w in enumerate(reversed(widths)):
            self.d_blocks.append(_CausalRes(c, w))
            c = w
            if i < len(widths) - 1:
                self.d_up.append(_CausalConv3d(c, c))
        self.d_out = nn.Sequential(nn.GroupNorm(32, c), nn.SiLU(), nn.Conv3d(c, 3, 1))
        self.nlev = len(widths)

    def encode(self, x, caches):
        h, caches["in"] = self.e_in(x, caches.get("in"))
        for i, blk in enumerate(self.e_blocks):
            h = blk(h, caches, f"e{i}")
            if i < self.nlev - 1:
                h, caches[f"ed{i}"] = self.e_down[i](h, caches.get(f"ed{i}"))
        return self.e_out(h).chunk(2, 1)[0]

    def decode(self, z, caches):
        f = torch.nn.functional
        h, caches["din"] = self.d_in(z, caches.get("din"))
        for i, blk in enumerate(self.d_blocks):
            h = blk(h, caches, f"d{i}")
            if i < self.nlev - 1:
                tf = 2 if i < self.nlev - 2 else 1
                h = f.interpolate(h, scale_factor=(tf, 2, 2), mode="nearest")
                h, caches[f"du{i}"] = self.d_up[i](h, caches.get(f"du{i}"))
        return self.d_out(h)


@_workload("video VAE encoding and decoding in temporal tiles (inference, two CUDA streams), as a video-generation pipeline's tokenizer stage runs it (CogVideoX/Hunyuan-style causal 3-D VAE written by hand, random weights): causal 3-D convs with GroupNorm ResBlocks of 64-128-256-256 channels, 8x spatial and 4x temporal compression to 16 latent channels; 175 requests of one video each, 9-97 frames (1 + 4k, drawn) at 192-512 px a side (multiples of 64, drawn per side, capped at 384x384 worth of pixels), encoded in temporal tiles of 4 frames (the first frame alone, as the causal VAE's first latent frame holds it) and decoded one latent frame at a time, every causal conv carrying its cache (the previous tile's last frames) from tile to tile, the caches dropped between encode and decode and at the end of the request; each tile's uint8 frames uploaded from a reused pinned host buffer on a side stream one tile ahead (the compute stream waits on the upload's event, the tensor record_stream'ed), normalized on the device; decoded frames clamped to uint8 and copied back tile by tile; the latents of each video kept until it is decoded; bf16 under inference_mode")
def videovae_tile_serve(rng):
    nreq = _smoke(175, 2)
    widths = (64, 128, 256, 256) if _smoke(1, 0) else (32, 32, 32)
    vae = _VideoVae(widths).cuda().eval().to(torch.bfloat16)
    tile = 4
    cap = _smoke(384 * 384, 64 * 64)
    maxpix = _smoke(512 * 512, 64 * 64)
    host = torch.randint(0, 256, (tile * maxpix * 3,), dtype=torch.uint8).pin_memory()
    side = torch.cuda.Stream()

    def upload(nf, h, w):
        with torch.cuda.stream(side):
            t = host[: nf * h * w * 3].view(nf, h, w, 3).to("cuda", non_blocking=True)
            ev = side.record_event()
        return t, ev

    with torch.inference_mode():
        for _ in range(nreq):
            h = rng.randrange(_smoke(192, 32), _smoke(512, 64) + 1, _smoke(64, 32))
            w = rng.randrange(_smoke(192, 32), _smoke(512, 64) + 1, _smoke(64, 32))
            while h * w > cap:
                if h >= w:
                    h -= _smoke(64, 32)
                else:
                    w -= _smoke(64, 32)
            frames = 1 + 4 * rng.randint(2, _smoke(24, 2))
            # encoding: the first frame alone, then tiles of 4 frames
            spans = [(0, 1)] + [(s, min(s + tile, frames)) for s in range(1, frames, tile)]
            caches, lat = {}, []
            nxt = upload(spans[0][1] - spans[0][0], h, w)
            for j, (a, bnd) in enumerate(spans):
                t, ev = nxt
                if j + 1 < len(spans):
                    nxt = upload(spans[j + 1][1] - spans[j + 1][0], h, w)
                torch.cuda.current_stream().wait_event(ev)
                t.record_stream(torch.cuda.current_stream())
                x = (t.permute(3, 0, 1, 2)[None].to(torch.bfloat16) / 127.5 - 1)
                lat.append(vae.encode(x, caches))
                del t, x
            caches.clear()
            z = torch.cat(lat, 2)
            del lat
            # decoding: one latent frame at a time
            for a in range(z.shape[2]):
                out = vae.decode(z[:, :, a:a + 1], caches)
                px = ((out.float().clamp(-1, 1) + 1) * 127.5).to(torch.uint8)
                px[0].permute(1, 2, 3, 0).cpu()
                del out, px
            caches.clear()
            del z
    torch.cuda.synchronize()

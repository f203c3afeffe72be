"""The forty-third batch of held-out workloads, second half (batch43.py holds the first): generative image models
other than plain diffusion sampling. A latent x2 upscaler served as a pipeline stage (a noise-level-conditioned
latent UNet sampled with classifier-free guidance on the low-resolution latent, then a tiled VAE decode, the
images copied back on a side stream), GAN inversion by per-image latent optimization followed by pivotal tuning
(a StyleGAN2 generator's w / w+ latents and noise maps optimized against an LPIPS-style distance, then a copy of the
generator fine-tuned around the pivot, a fresh copy for every batch of images), AdaIN arbitrary style transfer
training (a frozen VGG-shaped encoder, a trained decoder, content and style images at different resolutions each
step) and SPADE / GauGAN semantic image synthesis training (spatially-adaptive normalization from one-hot label
maps, multi-scale PatchGAN discriminators with feature matching and a perceptual loss). Same conventions as
batch43.py: models written by hand with random weights, nothing downloaded, `rng` the workload's random.Random for
every shape, sizes through `_smoke(real, small)`. No control flow reads a tensor's value (losses are read back
only at evaluation points, for logging). latent_upscale_serve uses a side stream (its downloads wait on the compute
stream, the tensors record_stream'ed); the others are single-stream. latent_upscale_serve runs under fp16 autocast
in inference_mode, adain_style_train and spade_gaugan_train under bf16 autocast, gan_inversion_pti in fp32.

Real sizes checked before recording, as batch43.py's header says: every workload of this half was run whole at
its real sizes on the meta device and its op outputs counted (events about 1.8x that count; the counts and peaks
are in record_new43.sh's header), and the CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import copy

import torch

from batch_common import Batch
from batch43 import _Lpips, _PatchDisc, _StyleGen
from workload_models import _UNet, _VaeResBlock

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- latent upscaler


class _LatDec(torch.nn.Module):
    """An SD-VAE-style decoder without the mid attention (so that it can run on tiles): 4 latent channels to RGB,
    8x upsampling, SD-VAE ResBlocks of the given widths."""

    def __init__(self, widths=(256, 256, 128, 64)):
        super().__init__()
        nn = torch.nn
        self.inp = nn.Conv2d(4, widths[0], 3, padding=1)
        self.levels, c = nn.ModuleList(), widths[0]
        for i, w in enumerate(widths):
            lv = nn.ModuleList([_VaeResBlock(c, w), _VaeResBlock(w, w)])
            c = w
            if i < len(widths) - 1:
                lv.append(nn.Conv2d(c, c, 3, padding=1))
            self.levels.append(lv)
        self.out = nn.Sequential(nn.GroupNorm(32, c, eps=1e-6), nn.SiLU(), nn.Conv2d(c, 3, 3, padding=1))

    def forward(self, z):
        f = torch.nn.functional
        h = self.inp(z)
        for lv in self.levels:
            h = lv[1](lv[0](h))
            if len(lv) == 3:
                h = lv[2](f.interpolate(h, scale_factor=2.0, mode="nearest"))
        return self.out(h)


@_workload("latent upscaling as a pipeline stage (inference, two CUDA streams), SD-x2-latent-upscaler-style (written by hand, random weights): a noise-level-conditioned latent UNet (the diffusion _UNet: 128-256-512 channels, two ResBlocks a level, attention in the middle; input the noisy 4-channel latent concatenated with the nearest-2x-upsampled low-resolution latent, 8 channels) sampled by 8-20 Euler steps (drawn per request) with classifier-free guidance on the low-resolution latent (the unconditional half given zeros, batch doubled), then an SD-VAE-style decoder without attention (256-256-128-64, 8x) run on 64x64 latent tiles overlapping by 8 (each tile's centre kept) into the full image; 105 requests of 1-4 latents of 32-96 x 32-96 (multiples of 8, drawn; capped at 2 latents of 96x96 worth) upscaled to 64-192 (512-1536 px images); the images clamped to uint8 and copied back on a side stream (the side stream waits on the compute stream, the tensor record_stream'ed); fp16 autocast under inference_mode")
def latent_upscale_serve(rng):
    nn, f = torch.nn, torch.nn.functional
    nreq = _smoke(105, 2)
    ch = (128, 256, 512) if _smoke(1, 0) else (32, 32, 64)
    unet = _UNet(ch)
    unet.inp = nn.Conv2d(8, ch[0], 3, padding=1)
    unet.out[2] = nn.Conv2d(ch[0], 4, 3, padding=1)
    unet = unet.cuda().eval()
    dec = _LatDec((256, 256, 128, 64) if _smoke(1, 0) else (32, 32)).cuda().eval()
    up = 8 if _smoke(1, 0) else 2
    cap = _smoke(2 * 96 * 96, 2 * 16 * 16)
    tile, ov = _smoke(64, 16), _smoke(8, 4)
    side = torch.cuda.Stream()
    with torch.inference_mode(), torch.autocast("cuda", dtype=torch.float16):
        for _ in range(nreq):
            b = rng.randint(1, 4)
            h = rng.randrange(_smoke(32, 8), _smoke(96, 16) + 1, 8)
            w = rng.randrange(_smoke(32, 8), _smoke(96, 16) + 1, 8)
            b = max(1, min(b, cap // (h * w)))
            steps = rng.randint(_smoke(8, 2), _smoke(20, 3))
            lo = torch.randn(b, 4, h, w, device="cuda")
            cond = f.interpolate(lo, scale_factor=2.0, mode="nearest")
            cond2 = torch.cat([cond, torch.zeros_like(cond)])
            sig = [14.6 * (1 - i / steps) + 0.03 * i / steps for i in range(steps + 1)]
            x = torch.randn(b, 4, 2 * h, 2 * w, device="cuda") * sig[0]
            for i in range(steps):
                xin = torch.cat([x, x]) / (sig[i] ** 2 + 1) ** 0.5
                t = torch.full((2 * b,), sig[i], device="cuda")
                e = unet(torch.cat([xin, cond2], 1), t).float()
                ec, eu = e.chunk(2)
                eps = eu + 6.0 * (ec - eu)
                x = x + (sig[i + 1] - sig[i]) * eps
                del xin, t, e, ec, eu, eps
            z = x / 0.18215
            H, W = z.shape[2], z.shape[3]
            img = torch.empty(b, 3, H * up, W * up, device="cuda", dtype=torch.float16)
            step = tile - 2 * ov
            for y0 in range(0, H, step):
                for x0 in range(0, W, step):
                    ya, xa = max(0, y0 - ov), max(0, x0 - ov)
                    yb, xb = min(H, y0 + step + ov), min(W, x0 + step + ov)
                    out = dec(z[:, :, ya:yb, xa:xb])
                    cy, cx = y0 - ya, x0 - xa
                    hh, ww = min(step, H - y0), min(step, W - x0)
                    img[:, :, y0 * up:(y0 + hh) * up, x0 * up:(x0 + ww) * up] = \
                        out[:, :, cy * up:(cy + hh) * up, cx * up:(cx + ww) * up]
                    del out
            px = ((img.float().clamp(-1, 1) + 1) * 127.5).to(torch.uint8).permute(0, 2, 3, 1).contiguous()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                px.record_stream(side)
                px.cpu()
            del lo, cond, cond2, x, z, img, px
        torch.cuda.synchronize()


# ---------------------------------------------------------------- GAN inversion


def _noise_reg(noises):
    """StyleGAN2 projector's noise regularization: squared autocorrelations at shifts of one pixel, over a
    pyramid down to 8x8."""
    f = torch.nn.functional
    loss = 0
    for n in noises:
        while True:
            loss = loss + (n * torch.roll(n, 1, 3)).mean() ** 2 + (n * torch.roll(n, 1, 2)).mean() ** 2
            if n.shape[2] <= 8:
                break
            n = f.avg_pool2d(n, 2)
    return loss


@_workload("GAN inversion by per-image latent optimization, then pivotal tuning (StyleGAN2's projector, Karras et al. 2020, then PTI, Roich et al. 2022), written by hand (random weights, fp32): a 128-px StyleGAN2 generator (8-layer mapping of 512, modulated convs 512-512-512-512-256-128) and an LPIPS-style distance (frozen VGG-shaped trunk, random weights); w_avg and its spread from 4096 mapped z in chunks of 1024; 4 jobs of 1-8 target images (drawn) each: their w (W space, or W+ one time in three) and one noise map per layer (4-128 px) optimized together by Adam (lr 0.1 with a ramp up and a cosine ramp down, noise added to w decaying over the first 3/4) for 28-46 steps (drawn; far fewer than the projector's 1000, to keep the trace short) with the LPIPS distance plus StyleGAN2's noise regularization (autocorrelations over a pyramid), the noise maps renormalized in place after every step; then a fresh copy of the generator (load_state_dict of the base weights) fine-tuned for 5-11 steps (drawn) around the pivot latents with L2 + LPIPS, Adam 3e-4; then 4 edits per image (the pivot moved along random directions) synthesized without grad and copied back")
def gan_inversion_pti(rng):
    f = torch.nn.functional
    res = _smoke(128, 16)
    chans = None if _smoke(1, 0) else {4: 32, 8: 32, 16: 16}
    wdim = _smoke(512, 32)
    g = _StyleGen(res, wdim, wdim, chans).cuda().eval().requires_grad_(False)
    lp = _Lpips() if _smoke(1, 0) else _Lpips((16, 16, 16))
    lp = lp.cuda()
    tuned = copy.deepcopy(g)
    with torch.no_grad():
        ws = torch.cat([g.mapping(torch.randn(_smoke(1024, 16), wdim, device="cuda")) for _ in range(4)])
        w_avg = ws.mean(0, keepdim=True)
        w_std = ((ws - w_avg).pow(2).sum() / ws.shape[0]).sqrt()
        del ws
    for _ in range(_smoke(4, 2)):
        n = rng.randint(1, 8)
        target = torch.rand(n, 3, res, res, device="cuda") * 2 - 1
        plus = rng.random() < 1 / 3
        w_opt = w_avg.repeat(n, g.num_ws if plus else 1, 1).detach().requires_grad_()
        noises = [torch.randn(n, 1, s, s, device="cuda").requires_grad_() for s in g.noise_shapes()]
        opt = torch.optim.Adam([w_opt] + noises, lr=0.1, betas=(0.9, 0.999))
        steps = rng.randint(_smoke(28, 2), _smoke(46, 3))
        for i in range(steps):
            t = i / steps
            lr = 0.1 * min(1.0, (1 - t) / 0.25) * min(1.0, t / 0.05 + 1e-3)
            for gr in opt.param_groups:
                gr["lr"] = lr
            nscale = w_std * 0.05 * max(0.0, 1 - t / 0.75) ** 2
            w = w_opt + torch.randn_like(w_opt) * nscale
            w = w if plus else w.expand(-1, g.num_ws, -1)
            img = g.synth(w, noises)
            loss = lp(img, target).sum() + 1e5 * _noise_reg(noises)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            with torch.no_grad():
                for nz in noises:
                    nz.sub_(nz.mean((1, 2, 3), keepdim=True)).div_(nz.pow(2).mean((1, 2, 3), keepdim=True).sqrt())
            del w, img, loss
        pivot = (w_opt if plus else w_opt.expand(-1, g.num_ws, -1)).detach()
        del opt, w_opt, noises
        # pivotal tuning: a fresh copy of the generator around the pivot
        tuned.load_state_dict(g.state_dict())
        tuned.requires_grad_(True)
        opt = torch.optim.Adam(tuned.parameters(), lr=3e-4)
        for _ in range(rng.randint(_smoke(5, 1), _smoke(11, 2))):
            img = tuned.synth(pivot)
            loss = f.mse_loss(img, target) + lp(img, target).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            del img, loss
        tuned.requires_grad_(False)
        del opt
        with torch.no_grad():
            dirs = torch.randn(4, 1, 1, wdim, device="cuda")
            for k in range(4):
                img = tuned.synth(pivot + 2.0 * dirs[k])
                ((img.clamp(-1, 1) + 1) * 127.5).to(torch.uint8).cpu()
                del img
        del target, pivot, dirs


# ---------------------------------------------------------------- AdaIN style transfer


class _VggEnc(torch.nn.Module):
    """VGG-19 to relu4_1 (random weights, frozen): returns relu1_1, relu2_1, relu3_1, relu4_1."""

    def __init__(self, w=(64, 128, 256, 512)):
        super().__init__()
        nn = torch.nn
        self.s1 = nn.Sequential(nn.Conv2d(3, 3, 1), nn.ReflectionPad2d(1), nn.Conv2d(3, w[0], 3), nn.ReLU())
        self.s2 = nn.Sequential(nn.ReflectionPad2d(1), nn.Conv2d(w[0], w[0], 3), nn.ReLU(), nn.MaxPool2d(2, ceil_mode=True),
                                nn.ReflectionPad2d(1), nn.Conv2d(w[0], w[1], 3), nn.ReLU())
        s3 = [nn.ReflectionPad2d(1), nn.Conv2d(w[1], w[1], 3), nn.ReLU(), nn.MaxPool2d(2, ceil_mode=True),
              nn.ReflectionPad2d(1), nn.Conv2d(w[1], w[2], 3), nn.ReLU()]
        self.s3 = nn.Sequential(*s3)
        s4 = []
        for _ in range(3):
            s4 += [nn.ReflectionPad2d(1), nn.Conv2d(w[2], w[2], 3), nn.ReLU()]
        s4 += [nn.MaxPool2d(2, ceil_mode=True), nn.ReflectionPad2d(1), nn.Conv2d(w[2], w[3], 3), nn.ReLU()]
        self.s4 = nn.Sequential(*s4)
        self.requires_grad_(False)
        self.eval()

    def forward(self, x):
        f1 = self.s1(x)
        f2 = self.s2(f1)
        f3 = self.s3(f2)
        return [f1, f2, f3, self.s4(f3)]


def _adain_dec(w=(64, 128, 256, 512)):
    nn = torch.nn

    def cv(a, b, act=True):
        return [nn.ReflectionPad2d(1), nn.Conv2d(a, b, 3)] + ([nn.ReLU()] if act else [])

    up = [nn.Upsample(scale_factor=2, mode="nearest")]
    layers = (cv(w[3], w[2]) + up + cv(w[2], w[2]) * 1 + cv(w[2], w[2]) + cv(w[2], w[2]) + cv(w[2], w[1]) + up
              + cv(w[1], w[1]) + cv(w[1], w[0]) + up + cv(w[0], w[0]) + cv(w[0], 3, act=False))
    return nn.Sequential(*layers)


def _stats(x):
    m = x.mean((2, 3), keepdim=True)
    return m, (x.var((2, 3), keepdim=True) + 1e-5).sqrt()


@_workload("arbitrary style transfer training, AdaIN (Huang & Belongie 2017) as its reference recipe trains it, written by hand (random init): a frozen VGG-19 encoder to relu4_1 (random weights, reflection padding) and a mirrored decoder (nearest upsampling) trained to invert adaptive instance normalization; each step a batch of 2-12 content images and as many style images (capped at 8 images of 384 px worth of pixels), the content at 256-512 and the style at 256-640 px a side (multiples of 32, drawn separately per side, so the two differ), AdaIN of the content's relu4_1 to the style's statistics, the decoded image re-encoded; content loss on relu4_1 and style loss on the means and standard deviations of relu1_1-relu4_1 (weight 10), Adam 1e-4 with inverse decay, 880 steps, bf16 autocast; every 220 steps a stylization without grad of one content image at 512-1024 px a side with two styles mixed by interpolation weights and a content-style trade-off alpha of 0.6-1.0, clamped to uint8 and copied back")
def adain_style_train(rng):
    f = torch.nn.functional
    nsteps = _smoke(880, 3)
    w = (64, 128, 256, 512) if _smoke(1, 0) else (8, 8, 16, 16)
    enc = _VggEnc(w).cuda()
    dec = _adain_dec(w).cuda()
    opt = torch.optim.Adam(dec.parameters(), lr=1e-4)
    cap = _smoke(8 * 384 * 384, 2 * 32 * 32)
    lo, hi_c, hi_s, m = _smoke(256, 32), _smoke(512, 64), _smoke(640, 64), _smoke(32, 16)
    for step in range(nsteps):
        for gr in opt.param_groups:
            gr["lr"] = 1e-4 / (1 + 5e-5 * step)
        ch, cw = rng.randrange(lo, hi_c + 1, m), rng.randrange(lo, hi_c + 1, m)
        sh, sw = rng.randrange(lo, hi_s + 1, m), rng.randrange(lo, hi_s + 1, m)
        b = max(1, min(rng.randint(2, 12), cap // max(ch * cw, sh * sw)))
        content = torch.rand(b, 3, ch, cw, device="cuda")
        style = torch.rand(b, 3, sh, sw, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            with torch.no_grad():
                fs = [_stats(t.float()) for t in enc(style)]
                fc = enc(content)[-1].float()
                mc, sc = _stats(fc)
                t = (fc - mc) / sc * fs[-1][1] + fs[-1][0]
            g = dec(t)
            fg = enc(g)
            loss_c = f.mse_loss(fg[-1].float(), t)
            loss_s = 0
            for a, (ms, ss) in zip(fg, fs):
                mg, sg = _stats(a.float())
                loss_s = loss_s + f.mse_loss(mg, ms) + f.mse_loss(sg, ss)
            loss = loss_c + 10 * loss_s
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del content, style, fs, fc, mc, sc, t, g, fg, loss, loss_c, loss_s
        if (step + 1) % _smoke(220, 3) == 0:
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                eh = rng.randrange(_smoke(512, 32), _smoke(1024, 64) + 1, m)
                ew = rng.randrange(_smoke(512, 32), _smoke(1024, 64) + 1, m)
                c = torch.rand(1, 3, eh, ew, device="cuda")
                s = torch.rand(2, 3, rng.randrange(lo, hi_s + 1, m), rng.randrange(lo, hi_s + 1, m), device="cuda")
                fc = enc(c)[-1].float()
                ms, ss = _stats(enc(s)[-1].float())
                mix = rng.random()
                mc, sc = _stats(fc)
                t = (fc - mc) / sc * (mix * ss[:1] + (1 - mix) * ss[1:]) + (mix * ms[:1] + (1 - mix) * ms[1:])
                alpha = rng.uniform(0.6, 1.0)
                out = dec(alpha * t + (1 - alpha) * fc)
                (out.float().clamp(0, 1) * 255).to(torch.uint8).cpu()
                del c, s, fc, ms, ss, mc, sc, t, out


# ---------------------------------------------------------------- SPADE


class _Spade(torch.nn.Module):
    """SPADE: parameter-free BatchNorm, then a per-pixel scale and shift predicted from the label map (resized to
    the features' size) by a shared 3x3 conv of 128 and two 3x3 convs."""

    def __init__(self, c, labels, hidden=128):
        super().__init__()
        nn = torch.nn
        self.norm = nn.BatchNorm2d(c, affine=False)
        self.shared = nn.Sequential(nn.Conv2d(labels, hidden, 3, padding=1), nn.ReLU())
        self.gamma, self.beta = nn.Conv2d(hidden, c, 3, padding=1), nn.Conv2d(hidden, c, 3, padding=1)

    def forward(self, x, seg):
        s = torch.nn.functional.interpolate(seg, size=x.shape[2:], mode="nearest")
        a = self.shared(s)
        return self.norm(x) * (1 + self.gamma(a)) + self.beta(a)


class _SpadeBlock(torch.nn.Module):
    def __init__(self, cin, cout, labels):
        super().__init__()
        nn = torch.nn
        mid = min(cin, cout)
        self.n0, self.c0 = _Spade(cin, labels), nn.Conv2d(cin, mid, 3, padding=1)
        self.n1, self.c1 = _Spade(mid, labels), nn.Conv2d(mid, cout, 3, padding=1)
        self.learned = cin != cout
        if self.learned:
            self.ns, self.cs = _Spade(cin, labels), nn.Conv2d(cin, cout, 1, bias=False)

    def forward(self, x, seg):
        f = torch.nn.functional
        xs = self.cs(self.ns(x, seg)) if self.learned else x
        h = self.c0(f.leaky_relu(self.n0(x, seg), 0.2))
        h = self.c1(f.leaky_relu(self.n1(h, seg), 0.2))
        return xs + h


class _SpadeGen(torch.nn.Module):
    """GauGAN's generator (no VAE): the label map downsampled 32x and convolved to 16nf channels, then SPADE
    ResBlocks 16nf, 16nf, 16nf, 8nf, 4nf, 2nf, nf with a nearest 2x upsampling before each of the last five."""

    def __init__(self, labels, nf=64):
        super().__init__()
        nn = torch.nn
        self.fc = nn.Conv2d(labels, 16 * nf, 3, padding=1)
        self.head = _SpadeBlock(16 * nf, 16 * nf, labels)
        self.mid = _SpadeBlock(16 * nf, 16 * nf, labels)
        ws = [16 * nf, 16 * nf, 8 * nf, 4 * nf, 2 * nf, nf]
        self.ups = nn.ModuleList(_SpadeBlock(ws[i], ws[i + 1], labels) for i in range(5))
        self.img = nn.Conv2d(nf, 3, 3, padding=1)

    def forward(self, seg):
        f = torch.nn.functional
        h = self.fc(f.interpolate(seg, scale_factor=1 / 32, mode="nearest"))
        h = self.mid(self.head(h, seg), seg)
        for blk in self.ups:
            h = blk(f.interpolate(h, scale_factor=2.0, mode="nearest"), seg)
        return torch.tanh(self.img(f.leaky_relu(h, 0.2)))


def _disc_feats(disc, x):
    """The intermediate activations of a _PatchDisc (after every LeakyReLU) and its final logits."""
    out = []
    for layer in disc.net:
        x = layer(x)
        if isinstance(layer, torch.nn.LeakyReLU):
            out.append(x)
    return out + [x]


@_workload("semantic image synthesis training, SPADE / GauGAN (Park et al. 2019) as its Cityscapes/ADE20K recipes train it, written by hand (random init, no encoder, no spectral norm): a generator of SPADE ResBlocks (16nf-16nf-16nf-8nf-4nf-2nf-nf with nf 48, every normalization a parameter-free BatchNorm modulated per pixel by convs on the one-hot label map resized to its size) from the label map downsampled 32x; two PatchGAN discriminators (64-512, at full and half resolution) on the label map concatenated with the image, hinge losses, feature matching (L1 over every discriminator layer, weight 10) and an LPIPS-style perceptual loss (frozen VGG-shaped trunk, random weights, weight 10); label maps of 35 classes made on the device (smooth random logits upsampled, argmax, one_hot), images of 256x256, 256x512, 384x384, 320x448 or 512x512 (drawn per step) in batches of 1-8 capped at 3 images of 256x512 worth of pixels, a generator step then a discriminator step, 180 steps, Adam (0, 0.999) with TTUR rates 1e-4 / 4e-4, bf16 autocast; every 45 steps 4 label maps at 512x1024 synthesized without grad and copied back as uint8")
def spade_gaugan_train(rng):
    f = torch.nn.functional
    nsteps = _smoke(180, 2)
    labels = _smoke(35, 5)
    g = _SpadeGen(labels, _smoke(48, 4)).cuda()
    ds = torch.nn.ModuleList(_PatchDisc(labels + 3) for _ in range(2)).cuda()
    lp = (_Lpips() if _smoke(1, 0) else _Lpips((16, 16, 16))).cuda()
    opt_g = torch.optim.Adam(g.parameters(), lr=1e-4, betas=(0.0, 0.999))
    opt_d = torch.optim.Adam(ds.parameters(), lr=4e-4, betas=(0.0, 0.999))
    sizes = _smoke([(256, 256), (256, 512), (384, 384), (320, 448), (512, 512)], [(64, 64), (64, 128)])
    cap = _smoke(3 * 256 * 512, 2 * 64 * 64)

    def labelmap(b, h, w):
        logits = torch.randn(b, labels, h // 16, w // 16, device="cuda")
        lab = f.interpolate(logits, size=(h, w), mode="bilinear", align_corners=False).argmax(1)
        return f.one_hot(lab, labels).permute(0, 3, 1, 2).float()

    def discriminate(seg, img):
        x = torch.cat([seg, img], 1)
        return [_disc_feats(ds[0], x), _disc_feats(ds[1], f.avg_pool2d(x, 3, 2, 1, count_include_pad=False))]

    for step in range(nsteps):
        h, w = rng.choice(sizes)
        b = max(1, min(rng.randint(1, 8), cap // (h * w)))
        seg = labelmap(b, h, w)
        real = torch.rand(b, 3, h, w, device="cuda") * 2 - 1
        with torch.autocast("cuda", dtype=torch.bfloat16):
            fake = g(seg)
            pf = discriminate(seg, fake)
            with torch.no_grad():
                pr = discriminate(seg, real)
            adv = sum(-p[-1].float().mean() for p in pf)
            fm = sum(f.l1_loss(a.float(), r.float()) for p, q in zip(pf, pr) for a, r in zip(p[:-1], q[:-1])) / 2
            vgg = lp(fake.float(), real).mean()
            loss_g = adv + 10 * fm + 10 * vgg
        opt_g.zero_grad(set_to_none=True)
        loss_g.backward()
        opt_g.step()
        del pf, pr, adv, fm, vgg, loss_g
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pf = discriminate(seg, fake.detach())
            pr = discriminate(seg, real)
            loss_d = sum(f.relu(1 + p[-1].float()).mean() for p in pf) + sum(f.relu(1 - p[-1].float()).mean() for p in pr)
        opt_d.zero_grad(set_to_none=True)
        loss_d.backward()
        opt_d.step()
        del seg, real, fake, pf, pr, loss_d
        if (step + 1) % _smoke(45, 2) == 0:
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for _ in range(_smoke(4, 1)):
                    out = g(labelmap(1, _smoke(512, 64), _smoke(1024, 128)))
                    ((out.float().clamp(-1, 1) + 1) * 127.5).to(torch.uint8).cpu()
                    del out

"""The workloads of issue 8's fourth batch of eight held-out families (part 2 of 2), moved verbatim from
record.py; how record.py registers them: batch_common.py."""

import math

import torch

from batch_common import Batch
from workload_models import _RrdbNet, _VaeAttn, _VaeResBlock
from workload_helpers import randint

_b = Batch()  # this module's workloads, and record.py's module object once register() has run
workload = _b.workload
register = _b.register  # what record.py calls


@workload("windowed-attention vision training: torchvision Swin-T (random init, stochastic depth 0.2), image 160-320 px (multiple of 32, windows padded as needed), batch 16-128 capped at 128 images of 224 px worth of pixels, 40 steps, mixup, label smoothing 0.1, gradient clipping, AdamW, bf16 autocast")
def swin_varres(rng):
    import torchvision

    f = torch.nn.functional
    model = torchvision.models.swin_t().cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
    for _ in range(40):
        r = randint(rng, 160, 320, 32)
        b = max(8, min(rng.randint(16, 128), 128 * 224 * 224 // (r * r)))
        x = torch.randn(b, 3, r, r, device="cuda")
        y = f.one_hot(torch.randint(0, 1000, (b,), device="cuda"), 1000).float() * 0.9 + 0.1 / 1000
        lam = rng.betavariate(0.8, 0.8)
        x = lam * x + (1 - lam) * x.flip(0)
        y = lam * y + (1 - lam) * y.flip(0)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = f.cross_entropy(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, y, loss


class _VaeDecoder(torch.nn.Module):
    """The Stable Diffusion VAE's decoder (AutoencoderKL, channels 128-256-512-512): 4 latent channels in,
    a mid-block of two ResBlocks around attention, four up-blocks of three ResBlocks (nearest 2x upsampling
    and a conv between them), GroupNorm, SiLU, 3 channels out: 8x the latent's size."""

    def __init__(self, ch=(512, 512, 256, 128)):
        super().__init__()
        nn = torch.nn
        self.post_quant = nn.Conv2d(4, 4, 1)
        self.inp = nn.Conv2d(4, ch[0], 3, padding=1)
        self.mid = nn.Sequential(_VaeResBlock(ch[0], ch[0]), _VaeAttn(ch[0]), _VaeResBlock(ch[0], ch[0]))
        self.up, c = nn.ModuleList(), ch[0]
        for i, co in enumerate(ch):
            blocks = [_VaeResBlock(c if j == 0 else co, co) for j in range(3)]
            if i < len(ch) - 1:
                blocks += [nn.Upsample(scale_factor=2.0, mode="nearest"), nn.Conv2d(co, co, 3, padding=1)]
            self.up.append(nn.Sequential(*blocks))
            c = co
        self.out = nn.Sequential(nn.GroupNorm(32, c, eps=1e-6), nn.SiLU(), nn.Conv2d(c, 3, 3, padding=1))

    def forward(self, z):
        h = self.mid(self.inp(self.post_quant(z)))
        for blk in self.up:
            h = blk(h)
        return self.out(h)


@workload("high-resolution VAE decoding (inference): the Stable Diffusion VAE decoder (random weights) in bf16 under inference_mode, 48 requests of batch 1-4 latents of 64-128 x 64-128 (images of 512-1024 px each side, any aspect), scaled, decoded, clamped to uint8 and copied to the host, as a diffusion pipeline's last stage does")
def sd_vae_decode(rng):
    model = _VaeDecoder().to("cuda", torch.bfloat16).eval()
    with torch.inference_mode():
        for _ in range(48):
            b, h, w = rng.randint(1, 4), randint(rng, 64, 128, 8), randint(rng, 64, 128, 8)
            latents = torch.randn(b, 4, h, w, device="cuda", dtype=torch.bfloat16)
            image = model(latents / 0.18215)
            pixels = ((image.float() / 2 + 0.5).clamp(0, 1) * 255).round().to(torch.uint8).permute(0, 2, 3, 1)
            pixels.cpu()
            del latents, image, pixels


@workload("mobile-architecture training: torchvision EfficientNet-B2 (depthwise convs, squeeze-excitation, SiLU, stochastic depth 0.2, random init), image 192-352 px (multiple of 32), batch 16-128 capped at 96 images of 288 px worth of pixels, channels-last, 120 steps, label smoothing 0.1, RMSprop (alpha 0.9, momentum 0.9, eps 1e-3) with an EMA of the weights, bf16 autocast")
def effnet_varres(rng):
    import torchvision

    f = torch.nn.functional
    model = torchvision.models.efficientnet_b2(stochastic_depth_prob=0.2).cuda()
    model = model.to(memory_format=torch.channels_last).train()
    ema = [p.detach().clone() for p in model.parameters()]
    opt = torch.optim.RMSprop(model.parameters(), lr=0.016, alpha=0.9, eps=1e-3, momentum=0.9, weight_decay=1e-5)
    params = list(model.parameters())
    for _ in range(120):
        r = randint(rng, 192, 352, 32)
        b = max(8, min(rng.randint(16, 128), 96 * 288 * 288 // (r * r)))
        x = torch.randn(b, 3, r, r, device="cuda").contiguous(memory_format=torch.channels_last)
        y = torch.randint(0, 1000, (b,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = f.cross_entropy(model(x), y, label_smoothing=0.1)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        with torch.no_grad():
            torch._foreach_lerp_(ema, [p.detach() for p in params], 1 - 0.9999)
        del x, y, loss


class _DcganG(torch.nn.Module):
    """DCGAN generator to 128 px: z (128) -> 4x4x1024, five stride-2 transposed convs with BatchNorm + ReLU, tanh."""

    def __init__(self, z=128, ch=(1024, 512, 256, 128, 64)):
        super().__init__()
        nn = torch.nn
        layers = [nn.ConvTranspose2d(z, ch[0], 4, 1, 0, bias=False), nn.BatchNorm2d(ch[0]), nn.ReLU(True)]
        for ci, co in zip(ch, ch[1:]):
            layers += [nn.ConvTranspose2d(ci, co, 4, 2, 1, bias=False), nn.BatchNorm2d(co), nn.ReLU(True)]
        layers += [nn.ConvTranspose2d(ch[-1], 3, 4, 2, 1, bias=False), nn.Tanh()]
        self.net = nn.Sequential(*layers)

    def forward(self, z):
        return self.net(z[:, :, None, None])


class _DcganD(torch.nn.Module):
    """DCGAN discriminator from 128 px: five stride-2 convs (64-1024 channels, BatchNorm after the first, LeakyReLU 0.2), a 4x4 conv to one logit."""

    def __init__(self, ch=(64, 128, 256, 512, 1024)):
        super().__init__()
        nn = torch.nn
        layers, ci = [], 3
        for i, co in enumerate(ch):
            layers += [nn.Conv2d(ci, co, 4, 2, 1, bias=False)]
            layers += ([nn.BatchNorm2d(co)] if i else []) + [nn.LeakyReLU(0.2, True)]
            ci = co
        layers += [nn.Conv2d(ci, 1, 4, 1, 0, bias=False)]
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x).flatten()


@workload("image GAN training: DCGAN at 128 px (generator z 128 -> 1024-64 channels of transposed convs with BatchNorm; discriminator 64-1024 channels, LeakyReLU), batch 128 with each epoch's last batch partial (epochs of 2k-9k random images), discriminator step on real and detached fake then non-saturating generator step, BCE-with-logits, 1000 steps, Adam (0.5, 0.999), fp32")
def dcgan_train(rng):
    f = torch.nn.functional
    gen, disc = _DcganG().cuda().train(), _DcganD().cuda().train()
    opt_g = torch.optim.Adam(gen.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(disc.parameters(), lr=2e-4, betas=(0.5, 0.999))
    left = 0
    for _ in range(1000):
        if left == 0:
            left = rng.randint(2000, 9000)
        b = min(128, left)
        left -= b
        real = torch.rand(b, 3, 128, 128, device="cuda") * 2 - 1
        fake = gen(torch.randn(b, 128, device="cuda"))
        ones, zeros = torch.ones(b, device="cuda"), torch.zeros(b, device="cuda")
        loss_d = f.binary_cross_entropy_with_logits(disc(real), ones)
        loss_d = loss_d + f.binary_cross_entropy_with_logits(disc(fake.detach()), zeros)
        loss_d.backward()
        opt_d.step()
        opt_d.zero_grad(set_to_none=True)
        loss_g = f.binary_cross_entropy_with_logits(disc(fake), ones)
        loss_g.backward()
        opt_g.step()
        opt_g.zero_grad(set_to_none=True)
        opt_d.zero_grad(set_to_none=True)
        del real, fake, ones, zeros, loss_d, loss_g


@workload("vision inference server: torchvision ResNet-50 (channels-last) and ViT-B/16 (224 px) in bf16 under inference_mode behind one queue, 4000 requests of 1-32 images; ResNet requests at 224-384 px (multiple of 32) are batched with the queued requests of the same size up to 128 images; uint8 images copied from a pinned host buffer, normalized on the device, top-5 classes (ResNet) or embeddings (ViT) copied back")
def vision_serving(rng):
    import torchvision

    resnet = torchvision.models.resnet50().to("cuda", torch.bfloat16).to(memory_format=torch.channels_last).eval()
    vit = torchvision.models.vit_b_16().to("cuda", torch.bfloat16).eval()
    vit.heads = torch.nn.Identity()
    host = torch.randint(0, 256, (128 * 3 * 384 * 384,), dtype=torch.uint8).pin_memory()
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1) * 255
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1) * 255

    def upload(b, r):
        x = host[: b * 3 * r * r].view(b, 3, r, r).cuda(non_blocking=True)
        return ((x.float() - mean) / std).to(torch.bfloat16).contiguous(memory_format=torch.channels_last)

    queue, served = [], 0
    with torch.inference_mode():
        while served < 4000:
            # Arrivals since the last batch: 1-6 requests.
            for _ in range(rng.randint(1, 6)):
                model = "vit" if rng.random() < 0.3 else "resnet"
                r = 224 if model == "vit" else randint(rng, 224, 384, 32)
                queue.append((model, r, rng.randint(1, 32)))
            model, r, _ = queue[0]
            batch, rest, n = [], [], 0
            for req in queue:
                if req[:2] == (model, r) and n + req[2] <= 128:
                    batch.append(req)
                    n += req[2]
                else:
                    rest.append(req)
            queue = rest
            x = upload(n, r)
            if model == "vit":
                out = vit(x).float().cpu()
            else:
                out = resnet(x).float().softmax(-1).topk(5).indices.cpu()
            served += len(batch)
            del x, out


@workload("retrieval training: two-tower model with in-batch negatives (user tower: 2M user-id table and a mean EmbeddingBag over the 1M-item history of 5-100 ids plus 4 categorical tables of 1k-100k; item tower: the shared item table plus 3 categorical tables; MLPs 512-256-128, L2-normalized), batch 2k-16k, sampled softmax over the batch with log-frequency correction and temperature 0.05, sparse embedding gradients with SparseAdam, dense Adam, 300 steps, fp32")
def two_tower(rng):
    nn = torch.nn
    f = torch.nn.functional
    users = nn.Embedding(2_000_000, 128, sparse=True)
    items = nn.Embedding(1_000_000, 128, sparse=True)
    user_cats = nn.ModuleList([nn.Embedding(n, 32, sparse=True) for n in (1000, 10_000, 50_000, 100_000)])
    item_cats = nn.ModuleList([nn.Embedding(n, 32, sparse=True) for n in (500, 20_000, 100_000)])
    sparse = nn.ModuleList([users, items, user_cats, item_cats]).cuda()

    def mlp(d):
        return nn.Sequential(nn.Linear(d, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 128)).cuda()

    user_mlp, item_mlp = mlp(128 * 2 + 32 * 4), mlp(128 + 32 * 3)
    opt_s = torch.optim.SparseAdam(list(sparse.parameters()), lr=1e-3)
    opt_d = torch.optim.Adam(list(user_mlp.parameters()) + list(item_mlp.parameters()), lr=1e-3)
    # Item popularity: Zipf-like ids, log-frequency of each id as the correction.
    log_q = torch.log(1.0 / torch.arange(1, 1_000_001, device="cuda", dtype=torch.float32))
    for _ in range(300):
        b = randint(rng, 2048, 16384, 256)
        item_ids = (torch.rand(b, device="cuda") ** 3 * 1_000_000).long()
        user_ids = torch.randint(0, 2_000_000, (b,), device="cuda")
        lengths = torch.randint(5, 101, (b,), device="cuda")
        offsets = torch.cumsum(lengths, 0) - lengths
        hist = (torch.rand(int(lengths.sum()), device="cuda") ** 3 * 1_000_000).long()
        u = [users(user_ids), f.embedding_bag(hist, items.weight, offsets, mode="mean", sparse=True)]
        u += [t(torch.randint(0, t.num_embeddings, (b,), device="cuda")) for t in user_cats]
        v = [items(item_ids)] + [t(torch.randint(0, t.num_embeddings, (b,), device="cuda")) for t in item_cats]
        u = f.normalize(user_mlp(torch.cat(u, 1)), dim=-1)
        v = f.normalize(item_mlp(torch.cat(v, 1)), dim=-1)
        logits = u @ v.t() / 0.05 - log_q[item_ids][None, :]
        loss = f.cross_entropy(logits, torch.arange(b, device="cuda"))
        loss.backward()
        opt_s.step()
        opt_d.step()
        opt_s.zero_grad(set_to_none=True)
        opt_d.zero_grad(set_to_none=True)
        del item_ids, user_ids, lengths, offsets, hist, u, v, logits, loss


@workload("super-resolution GAN training: ESRGAN-lite x4 (RRDBNet generator, 64 channels, 12 RRDB blocks; VGG-style discriminator 64-512 channels with BatchNorm and a global pool; frozen torchvision VGG19 to conv5_4 for the perceptual loss), random HR crops of 96-192 px (multiple of 32) from LR crops of 24-48, batch 4-16, relativistic average GAN loss, L1 x0.01 + perceptual + 0.005 adversarial, generator then discriminator step, 120 steps, Adam (0.9, 0.99), fp32")
def esrgan_sr(rng):
    import torchvision

    nn = torch.nn
    f = torch.nn.functional
    gen = _RrdbNet(12).cuda().train()
    layers, ci = [], 3
    for co in (64, 64, 128, 128, 256, 256, 512, 512, 512, 512):
        stride = 2 if len(layers) % 2 else 1
        layers += [nn.Conv2d(ci, co, 3 if stride == 1 else 4, stride, 1, bias=False), nn.BatchNorm2d(co), nn.LeakyReLU(0.2, True)]
        ci = co
    disc = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 100), nn.LeakyReLU(0.2, True), nn.Linear(100, 1))
    disc = disc.cuda().train()
    vgg = torchvision.models.vgg19().features[:35].cuda().eval().requires_grad_(False)
    opt_g = torch.optim.Adam(gen.parameters(), lr=1e-4, betas=(0.9, 0.99))
    opt_d = torch.optim.Adam(disc.parameters(), lr=1e-4, betas=(0.9, 0.99))
    for _ in range(120):
        s, b = randint(rng, 96, 192, 32), rng.randint(4, 16)
        hr = torch.rand(b, 3, s, s, device="cuda")
        lr = f.interpolate(hr, scale_factor=0.25, mode="bicubic", antialias=True)
        sr = gen(lr)
        # Generator step (discriminator frozen).
        disc.requires_grad_(False)
        real_d, fake_d = disc(hr).detach(), disc(sr)
        adv = (f.binary_cross_entropy_with_logits(real_d - fake_d.mean(), torch.zeros_like(real_d))
               + f.binary_cross_entropy_with_logits(fake_d - real_d.mean(), torch.ones_like(fake_d))) / 2
        loss_g = 0.01 * f.l1_loss(sr, hr) + f.l1_loss(vgg(sr), vgg(hr)) + 0.005 * adv
        loss_g.backward()
        opt_g.step()
        opt_g.zero_grad(set_to_none=True)
        # Discriminator step.
        disc.requires_grad_(True)
        real_d, fake_d = disc(hr), disc(sr.detach())
        loss_d = (f.binary_cross_entropy_with_logits(real_d - fake_d.mean(), torch.ones_like(real_d))
                  + f.binary_cross_entropy_with_logits(fake_d - real_d.mean(), torch.zeros_like(fake_d))) / 2
        loss_d.backward()
        opt_d.step()
        opt_d.zero_grad(set_to_none=True)
        del hr, lr, sr, real_d, fake_d, adv, loss_g, loss_d


@workload("translation training: torch.nn.Transformer (transformer-base: 6+6 layers, d_model 512, 8 heads, FFN 2048, dropout 0.1, shared 32k vocab and tied output, sinusoidal positions, key padding masks), fairseq-style token batches: sentence pairs of bucketed lengths 4-256 (target 0.8-1.25x the source) packed up to 12k-25k tokens per batch, label smoothing 0.1, inverse-sqrt warmup, 150 steps, Adam (0.9, 0.98), bf16 autocast")
def mt_transformer(rng):
    nn = torch.nn
    d, vocab = 512, 32000
    model = nn.Transformer(d, 8, 6, 6, 2048, 0.1, batch_first=True, norm_first=True).cuda().train()
    emb = nn.Embedding(vocab, d, padding_idx=0).cuda()
    pe = torch.zeros(1024, d)
    pos = torch.arange(1024)[:, None]
    div = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))
    pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * div), torch.cos(pos * div)
    pe = pe.cuda()
    params = list(model.parameters()) + list(emb.parameters())
    opt = torch.optim.Adam(params, lr=7e-4, betas=(0.9, 0.98), eps=1e-9)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min((s + 1) / 40, (40 / (s + 1)) ** 0.5))

    def embed(ids):
        return emb(ids) * math.sqrt(d) + pe[: ids.shape[1]]

    for _ in range(150):
        # A bucket: lengths within about 10% of each other, as many pairs as fit the token budget.
        budget = rng.randint(12000, 25000)
        lo = int(math.exp(rng.uniform(math.log(4), math.log(240))))
        pairs, longest = [], 0
        while True:
            s = rng.randint(lo, max(lo + 1, int(lo * 1.1)))
            t = max(2, int(s * rng.uniform(0.8, 1.25)))
            if (len(pairs) + 1) * max(longest, s, t) > budget:
                break
            pairs.append((s, t + 1))  # the target with its start token
            longest = max(longest, s, t)
        lens = torch.tensor(pairs)
        b, ls, lt = len(pairs), int(lens[:, 0].max()), int(lens[:, 1].max())
        src = torch.randint(1, vocab, (b, ls)) * (torch.arange(ls)[None] < lens[:, :1])
        tgt = torch.randint(1, vocab, (b, lt)) * (torch.arange(lt)[None] < lens[:, 1:])
        src, tgt = src.cuda(non_blocking=True), tgt.cuda(non_blocking=True)
        inp, out = tgt[:, :-1], tgt[:, 1:]
        causal = torch.ones(lt - 1, lt - 1, dtype=torch.bool, device="cuda").triu(1)  # True: masked
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = model(embed(src), embed(inp), tgt_mask=causal, src_key_padding_mask=src == 0,
                      tgt_key_padding_mask=inp == 0, memory_key_padding_mask=src == 0, tgt_is_causal=True)
            logits = h @ emb.weight.t()
        loss = torch.nn.functional.cross_entropy(logits.float().flatten(0, 1), out.flatten(), ignore_index=0, label_smoothing=0.1)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        del src, tgt, inp, out, causal, h, logits, loss


class _VidRes(torch.nn.Module):
    """Pseudo-3D ResBlock on (B, C, F, H, W): GroupNorm, SiLU, 3x3 conv per frame, timestep shift, again, then a residual 3-tap temporal conv."""

    def __init__(self, cin, cout, temb=512):
        super().__init__()
        nn = torch.nn
        self.n1, self.c1 = nn.GroupNorm(32, cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.t = nn.Linear(temb, cout)
        self.n2, self.c2 = nn.GroupNorm(32, cout), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()
        self.nt, self.ct = nn.GroupNorm(32, cout), nn.Conv1d(cout, cout, 3, padding=1)

    def forward(self, x, t):
        f = torch.nn.functional
        b, c, fr, h, w = x.shape
        x2 = x.transpose(1, 2).reshape(b * fr, c, h, w)
        y = self.c1(f.silu(self.n1(x2))) + self.t(t).repeat_interleave(fr, 0)[:, :, None, None]
        y = self.skip(x2) + self.c2(f.silu(self.n2(y)))
        co = y.shape[1]
        y = y.view(b, fr, co, h, w).permute(0, 3, 4, 2, 1).reshape(b * h * w, co, fr)
        y = y + self.ct(f.silu(self.nt(y)))
        return y.view(b, h, w, co, fr).permute(0, 3, 4, 1, 2)


class _VidAttn(torch.nn.Module):
    """Spatial self-attention per frame, cross-attention to the text (77 x 768), then temporal self-attention per position."""

    def __init__(self, c, heads=8, ctx=768):
        super().__init__()
        nn = torch.nn
        self.heads = heads
        self.n1, self.qkv1, self.o1 = nn.LayerNorm(c), nn.Linear(c, 3 * c), nn.Linear(c, c)
        self.n2, self.q2, self.kv2, self.o2 = nn.LayerNorm(c), nn.Linear(c, c), nn.Linear(ctx, 2 * c), nn.Linear(c, c)
        self.n3, self.qkv3, self.o3 = nn.LayerNorm(c), nn.Linear(c, 3 * c), nn.Linear(c, c)

    def _sdpa(self, q, k, v):
        n, lq, c = q.shape
        split = lambda t: t.view(n, -1, self.heads, c // self.heads).transpose(1, 2)
        a = torch.nn.functional.scaled_dot_product_attention(split(q), split(k), split(v))
        return a.transpose(1, 2).reshape(n, lq, c)

    def forward(self, x, text):
        b, c, fr, h, w = x.shape
        s = x.permute(0, 2, 3, 4, 1).reshape(b * fr, h * w, c)
        s = s + self.o1(self._sdpa(*self.qkv1(self.n1(s)).chunk(3, -1)))
        k, v = self.kv2(text).repeat_interleave(fr, 0).chunk(2, -1)
        s = s + self.o2(self._sdpa(self.q2(self.n2(s)), k, v))
        t = s.view(b, fr, h * w, c).transpose(1, 2).reshape(b * h * w, fr, c)
        t = t + self.o3(self._sdpa(*self.qkv3(self.n3(t)).chunk(3, -1)))
        return t.view(b, h, w, fr, c).permute(0, 4, 3, 1, 2)


class _VideoUNet(torch.nn.Module):
    """A small text-to-video latent UNet: 4 latent channels, widths 192-384-576, two ResBlocks per level
    down and three up (attention after each at the two lower levels), 2x spatial average-pool down and
    nearest up-sampling (frames kept), skips as in Stable Diffusion's UNet."""

    def __init__(self, ch=(192, 384, 576)):
        super().__init__()
        nn = torch.nn
        self.temb = nn.Sequential(nn.Linear(192, 512), nn.SiLU(), nn.Linear(512, 512))
        self.inp = nn.Conv2d(4, ch[0], 3, padding=1)
        self.down, self.up = nn.ModuleList(), nn.ModuleList()
        c, skips = ch[0], [ch[0]]
        for i, co in enumerate(ch):
            if i:  # the 2x average pool that starts the level
                skips.append(c)
            for _ in range(2):
                self.down.append(nn.ModuleList([_VidRes(c, co), _VidAttn(co) if i else nn.Identity()]))
                c = co
                skips.append(c)
        self.mid = nn.ModuleList([_VidRes(c, c), _VidAttn(c), _VidRes(c, c)])
        for i, co in reversed(list(enumerate(ch))):
            for _ in range(3):
                self.up.append(nn.ModuleList([_VidRes(c + skips.pop(), co), _VidAttn(co) if i else nn.Identity()]))
                c = co
        self.out = nn.Sequential(nn.GroupNorm(32, c), nn.SiLU(), nn.Conv2d(c, 4, 3, padding=1))

    @staticmethod
    def _frames(fn, x):
        b, c, fr, h, w = x.shape
        y = fn(x.transpose(1, 2).reshape(b * fr, c, h, w))
        return y.view(b, fr, *y.shape[1:]).transpose(1, 2)

    def forward(self, x, step, text):
        f = torch.nn.functional
        half = torch.exp(-math.log(10000) * torch.arange(96, device=x.device) / 96)
        t = self.temb(torch.cat([torch.sin(step * half), torch.cos(step * half)])[None].to(x.dtype).expand(x.shape[0], -1))
        h = self._frames(self.inp, x)
        hs = [h]
        for i, (res, attn) in enumerate(self.down):
            if i in (2, 4):  # the start of the two lower levels
                h = self._frames(lambda y: f.avg_pool2d(y, 2), h)
                hs.append(h)
            h = res(h, t)
            h = attn(h, text) if isinstance(attn, _VidAttn) else h
            hs.append(h)
        h = self.mid[2](self.mid[1](self.mid[0](h, t), text), t)
        for i, (res, attn) in enumerate(self.up):
            if i in (3, 6):
                h = self._frames(lambda y: f.interpolate(y, scale_factor=2.0, mode="nearest"), h)
            skip = hs.pop()
            h = res(torch.cat([h, skip], 1), t)
            h = attn(h, text) if isinstance(attn, _VidAttn) else h
        return self._frames(self.out, h)


@workload("text-to-video diffusion sampling (inference): a pseudo-3D latent UNet (widths 192-384-576; per-frame convs plus temporal convs; spatial, text cross- and temporal attention at the two lower levels; random weights) in bf16 under inference_mode, 14 requests of batch 1-2 clips of 8-24 frames at latent 32-64 px (multiple of 8; 256-512 px video), classifier-free guidance (batch doubled), 30 Euler steps each, random text embeddings 77 x 768")
def video_diffusion(rng):
    model = _VideoUNet().to("cuda", torch.bfloat16).eval()
    sigmas = torch.linspace(14.6, 0.03, 30).tolist() + [0.0]
    with torch.inference_mode():
        for _ in range(14):
            b, fr = rng.randint(1, 2), randint(rng, 8, 24, 8)
            h, w = randint(rng, 32, 64, 8), randint(rng, 32, 64, 8)
            text = torch.randn(2 * b, 77, 768, device="cuda", dtype=torch.bfloat16)
            x = torch.randn(b, 4, fr, h, w, device="cuda") * sigmas[0]
            for i in range(30):
                s, s_next = sigmas[i], sigmas[i + 1]
                inp = (torch.cat([x, x]) / (s * s + 1) ** 0.5).to(torch.bfloat16)
                eps_c, eps_u = model(inp, 1000 * (1 - i / 30), text).float().chunk(2)
                eps = eps_u + 7.5 * (eps_c - eps_u)
                x = x + eps * (s_next - s)
                del inp, eps_c, eps_u, eps
            x.cpu()
            del text, x

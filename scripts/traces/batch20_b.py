"""The twentieth batch's second half (batch20.py holds the first; split only to keep files small): Hyena LM
training, attribution-explanation serving, GDAS architecture search and a FedProx simulation. Same conventions
and plumbing as batch20.py; record.py registers this module right after it, so that the batch's workloads keep
their order.
"""

import copy
import math

import torch

from batch20 import _Cifar
from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

# ---------------------------------------------------------------- Hyena long-convolution LM


class _Sin(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.freq = torch.nn.Parameter(torch.ones(1, dim))

    def forward(self, x):
        return torch.sin(self.freq * x)


class _HyenaOperator(torch.nn.Module):
    """safari's HyenaOperator of order 2: an input projection to 3 x width, a short depthwise causal conv (kernel 3),
    gating, and one long convolution by FFT with an implicit filter (an MLP with sine activations over 33 positional
    features, exponentially decaying windows) recomputed for every sequence length."""

    def __init__(self, d, filter_width=64, emb=33):
        super().__init__()
        nn = torch.nn
        self.d, self.emb = d, emb
        self.in_proj, self.out_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.short = nn.Conv1d(3 * d, 3 * d, 3, padding=2, groups=3 * d)
        fw = filter_width
        self.filter = nn.Sequential(nn.Linear(emb, fw), _Sin(fw), nn.Linear(fw, fw), _Sin(fw), nn.Linear(fw, fw),
                                    _Sin(fw), nn.Linear(fw, d, bias=False))
        self.bias = nn.Parameter(torch.randn(d))
        self.register_buffer("deltas", torch.linspace(math.log(1e-2) / 0.3, math.log(1e-2) / 1.5, d).abs())

    def filters(self, n):
        """The long filters for length n: (d, n)."""
        t = torch.linspace(0, 1, n, device=self.deltas.device)[:, None]
        bands = (self.emb - 1) // 2
        w = 2 * math.pi * torch.arange(n, device=t.device)[:, None] / n
        fr = torch.linspace(1e-4, bands - 1, bands, device=t.device)[None]
        z = torch.cat([t, torch.cos(fr * w), -torch.sin(fr * w)], -1)
        return (self.filter(z) * torch.exp(-t * self.deltas)).T

    def forward(self, u):
        n = u.shape[1]
        x0, x1, v = self.short(self.in_proj(u).transpose(1, 2))[..., :n].split(self.d, 1)
        v = v * x1
        k = self.filters(n)
        size = 2 * n
        kf = torch.fft.rfft(k.float(), n=size) / size
        y = torch.fft.irfft(torch.fft.rfft(v.float(), n=size) * kf, n=size, norm="forward")[..., :n]
        y = (y + v.float() * self.bias[:, None]).to(v.dtype)
        return self.out_proj((y * x0).transpose(1, 2))


class _HyenaBlock(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        nn = torch.nn
        self.ln1, self.mixer, self.ln2 = nn.LayerNorm(d), _HyenaOperator(d), nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate="tanh"), nn.Linear(4 * d, d))

    def forward(self, x):
        x = x + self.mixer(self.ln1(x))
        return x + self.mlp(self.ln2(x))


@_workload("long-convolution language-model training, Hyena (Poli et al. 2023) as in HazyResearch's safari, written by hand: 12 blocks of width 768 (Hyena operators of order 2: input projection to 3 x 768, short depthwise conv, an implicit long filter from a 3-layer sine MLP over positional features with exponential decay, recomputed for each length, the long convolution by torch.fft.rfft/irfft at twice the length in fp32; GELU MLP 3072), vocab 50257 with a tied head, random init; sequences of 1024-8192 tokens (log-uniform, multiples of 256), the batch sized to 16384 tokens a step, bf16 autocast, gradient clipping 1.0, AdamW (lr 6e-4, weight decay 0.1), 80 steps; every 40 steps a no_grad evaluation of 4 batches of 4 x 4096 tokens (loss read back)")
def hyena_lm(rng):
    f = torch.nn.functional
    d, layers, vocab = _smoke(768, 64), _smoke(12, 12), 50257
    emb = torch.nn.Embedding(vocab, d).cuda()
    blocks = torch.nn.ModuleList(_HyenaBlock(d) for _ in range(layers)).cuda()
    norm = torch.nn.LayerNorm(d).cuda()
    params = list(emb.parameters()) + list(blocks.parameters()) + list(norm.parameters())
    opt = torch.optim.AdamW(params, lr=6e-4, weight_decay=0.1)
    tokens = _smoke(16384, 512)

    def loss_of(ids):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            x = emb(ids)
            for blk in blocks:
                x = blk(x)
            logits = norm(x) @ emb.weight.T
        return f.cross_entropy(logits[:, :-1].float().reshape(-1, vocab), ids[:, 1:].reshape(-1))

    # About 4.4k tensors a step (counted on CPU at 12 blocks: 11.4k for 2 steps and an evaluation of 4 batches of about
    # 650 each; AdamW and clipping over the 231 parameters included): 80 steps and 2 evaluations make about 0.36M
    # tensors, 0.71M events.
    for step in range(_smoke(80, 2)):
        m = _smoke(256, 64)
        n = _loguniform(rng, _smoke(1024, 64) // m, _smoke(8192, 256) // m) * m
        ids = torch.randint(0, vocab, (max(1, tokens // n), n), device="cuda")
        loss = loss_of(ids)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, loss
        if (step + 1) % _smoke(40, 2) == 0:
            with torch.no_grad():
                total = 0.0
                for _ in range(4):
                    total += float(loss_of(torch.randint(0, vocab, (4, _smoke(4096, 128)), device="cuda")))
    torch.cuda.synchronize()


# ---------------------------------------------------------------- integrated-gradients explanation serving


@_workload("model-explanation serving, Captum-style attributions (inference with input gradients): torchvision ResNet-50 and ViT-B/16 (random init, fp32, eval, weights frozen); 140 requests of 1-8 images (log-uniform) of one of five camera sizes (480x640 to 1080x1920), uint8 made on the device, resized (bilinear, antialiased) to 256 on the short side, centre-cropped to 224 and normalized; the target class from a no_grad forward; then, drawn per request: Integrated Gradients (zero baseline, 16, 32 or 50 Gauss-Legendre steps, internal batches of 32 examples, torch.autograd.grad to the inputs, the convergence delta from two more forwards), SmoothGrad-squared (10 or 20 noisy copies, sigma 0.15 of the range, batches of 32) or, for the ResNet, Grad-CAM on layer4 (a forward hook swapping in a leaf); the saliency maps normalized per image and copied back as uint8 224x224 heatmaps")
def ig_explain(rng):
    import numpy
    import torchvision

    f = torch.nn.functional
    crop, short = _smoke(224, 64), _smoke(256, 72)
    models = {"resnet": torchvision.models.resnet50(), "vit": torchvision.models.vit_b_16(image_size=crop)}
    for m in models.values():
        m.cuda().eval().requires_grad_(False)
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda")[None, :, None, None]
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda")[None, :, None, None]
    sizes = ((480, 640), (600, 800), (768, 1024), (720, 1280), (1080, 1920))
    internal = 32
    grab = {}

    def swap_in_leaf(mod, args, out):
        grab["feat"] = out.detach().requires_grad_(True)
        return grab["feat"]

    def preprocess(u8):
        x = u8.permute(0, 3, 1, 2).float() / 255
        h, w = x.shape[-2:]
        s = short / min(h, w)
        x = f.interpolate(x, size=(max(short, round(h * s)), max(short, round(w * s))), mode="bilinear", antialias=True)
        top, left = (x.shape[-2] - crop) // 2, (x.shape[-1] - crop) // 2
        return ((x[..., top: top + crop, left: left + crop] - mean) / std).contiguous()

    def input_grads(model, inp, target):
        inp = inp.requires_grad_(True)
        score = model(inp).gather(1, target[:, None]).sum()
        g, = torch.autograd.grad(score, inp)
        return g

    # About 2.3k tensors a request (counted on CPU at full depth and 64 px: 9.4k for 4 requests; a chunk of 32 through
    # either model and back to its inputs is about 500, a request 3 chunks and 2 forwards on average): 140 requests
    # make about 0.3M tensors, 0.6M events.
    for _ in range(_smoke(140, 4)):
        name = rng.choice(("resnet", "resnet", "vit"))
        model = models[name]
        b = _loguniform(rng, 1, 8)
        h, w = rng.choice(sizes) if not _smoke(0, 1) else (96, 128)
        x = preprocess(torch.randint(0, 256, (b, h, w, 3), dtype=torch.uint8, device="cuda"))
        with torch.no_grad():
            target = model(x).argmax(-1)
        method = rng.choice(("ig", "ig", "smoothgrad", "gradcam" if name == "resnet" else "ig"))
        if method == "ig":
            steps = rng.choice((16, 32, 50))
            nodes, weights = numpy.polynomial.legendre.leggauss(steps)
            alphas = torch.tensor((nodes + 1) / 2, dtype=torch.float32, device="cuda")
            wts = torch.tensor(weights / 2, dtype=torch.float32, device="cuda")
            total = torch.zeros_like(x)
            per = max(1, internal // b)
            for lo in range(0, steps, per):
                a = alphas[lo: lo + per]
                inp = (a[:, None, None, None, None] * x[None]).flatten(0, 1)
                g = input_grads(model, inp, target.repeat(a.shape[0])).view(a.shape[0], b, *x.shape[1:])
                total += (g * wts[lo: lo + per, None, None, None, None]).sum(0)
                del a, inp, g
            sal = (x * total).sum(1).abs()
            with torch.no_grad():
                at_x = model(x).gather(1, target[:, None])[:, 0]
                delta = at_x - model(torch.zeros_like(x)).gather(1, target[:, None])[:, 0]
                delta = delta - (x * total).sum((1, 2, 3))
            del total
        elif method == "smoothgrad":
            k = rng.choice((10, 20))
            sigma = 0.15 * (x.amax((1, 2, 3)) - x.amin((1, 2, 3)))
            acc = torch.zeros_like(x)
            per = max(1, internal // b)
            for lo in range(0, k, per):
                m = min(per, k - lo)
                noise = torch.randn(m, *x.shape, device="cuda") * sigma[None, :, None, None, None]
                noisy = (x[None] + noise).flatten(0, 1)
                g = input_grads(model, noisy, target.repeat(m)).view(m, *x.shape)
                acc += g.pow(2).sum(0)
                del noisy, g
            sal = (acc / k).sum(1)
            del acc
        else:
            hook = model.layer4.register_forward_hook(swap_in_leaf)
            score = model(x).gather(1, target[:, None]).sum()
            hook.remove()
            feat = grab.pop("feat")
            g, = torch.autograd.grad(score, feat)
            cam = torch.relu((g.mean((2, 3), keepdim=True) * feat).sum(1, keepdim=True))
            sal = f.interpolate(cam, size=(crop, crop), mode="bilinear")[:, 0]
            del score, feat, g, cam
        sal = sal / sal.flatten(1).amax(1).clamp(min=1e-12)[:, None, None]
        (sal * 255).to(torch.uint8).cpu()
        del x, target, sal
    torch.cuda.synchronize()


# ---------------------------------------------------------------- GDAS differentiable architecture search


_DARTS_OPS = ("none", "max_pool_3x3", "avg_pool_3x3", "skip_connect", "sep_conv_3x3", "sep_conv_5x5", "dil_conv_3x3",
              "dil_conv_5x5")


def _relu_conv_bn(cin, cout, k, stride, pad, dilation=1, groups=1, pointwise=None):
    nn = torch.nn
    conv = nn.Conv2d(cin, cin if pointwise else cout, k, stride, pad, dilation=dilation, groups=groups, bias=False)
    layers = [nn.ReLU(), conv]
    if pointwise:
        layers.append(nn.Conv2d(cin, cout, 1, bias=False))
    return layers + [nn.BatchNorm2d(cout, affine=False)]


class _FactorizedReduce(torch.nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        nn = torch.nn
        self.c1, self.c2 = nn.Conv2d(cin, cout // 2, 1, 2, bias=False), nn.Conv2d(cin, cout // 2, 1, 2, bias=False)
        self.bn = nn.BatchNorm2d(cout, affine=False)

    def forward(self, x):
        x = torch.relu(x)
        return self.bn(torch.cat([self.c1(x), self.c2(x[:, :, 1:, 1:])], 1))


class _Zero(torch.nn.Module):
    def __init__(self, stride):
        super().__init__()
        self.stride = stride

    def forward(self, x):
        return x[:, :, :: self.stride, :: self.stride].mul(0.0)


def _darts_op(name, c, stride):
    nn = torch.nn
    if name == "none":
        return _Zero(stride)
    if name.endswith("pool_3x3"):
        if name.startswith("max"):
            pool = nn.MaxPool2d(3, stride, 1)
        else:
            pool = nn.AvgPool2d(3, stride, 1, count_include_pad=False)
        return nn.Sequential(pool, nn.BatchNorm2d(c, affine=False))
    if name == "skip_connect":
        return nn.Identity() if stride == 1 else _FactorizedReduce(c, c)
    k = int(name[-1])
    if name.startswith("sep"):
        return nn.Sequential(*_relu_conv_bn(c, c, k, stride, k // 2, groups=c, pointwise=True),
                             *_relu_conv_bn(c, c, k, 1, k // 2, groups=c, pointwise=True))
    return nn.Sequential(*_relu_conv_bn(c, c, k, stride, k - 1, dilation=2, groups=c, pointwise=True))


class _GdasCell(torch.nn.Module):
    """A DARTS search cell (4 nodes, 14 mixed edges of the 8 DARTS operations) run GDAS's way: on each edge only the
    operation sampled by the hard Gumbel-softmax runs, scaled by its straight-through weight."""

    def __init__(self, c_pp, c_p, c, reduction, reduction_prev):
        super().__init__()
        nn = torch.nn
        self.pre0 = _FactorizedReduce(c_pp, c) if reduction_prev else nn.Sequential(*_relu_conv_bn(c_pp, c, 1, 1, 0))
        self.pre1 = nn.Sequential(*_relu_conv_bn(c_p, c, 1, 1, 0))
        self.edges = nn.ModuleList()
        for i in range(4):
            for j in range(2 + i):
                stride = 2 if reduction and j < 2 else 1
                self.edges.append(nn.ModuleList(_darts_op(name, c, stride) for name in _DARTS_OPS))

    def forward(self, s0, s1, hardwts, index):
        states, e = [self.pre0(s0), self.pre1(s1)], 0
        for i in range(4):
            acc = 0
            for h in states:
                k = index[e]
                # GDAS's sum: the sampled operation times its weight, plus the other (zero-valued) weights so that their
                # gradients reach the architecture parameters.
                acc = acc + self.edges[e][k](h) * hardwts[e, k] + (hardwts[e].sum() - hardwts[e, k])
                e += 1
            states.append(acc)
        return torch.cat(states[2:], 1)


class _GdasNet(torch.nn.Module):
    def __init__(self, c=16, cells=8, classes=10):
        super().__init__()
        nn = torch.nn
        self.stem = nn.Sequential(nn.Conv2d(3, 3 * c, 3, padding=1, bias=False), nn.BatchNorm2d(3 * c))
        self.cells, self.reductions = nn.ModuleList(), []
        c_pp, c_p, cur, reduction_prev = 3 * c, 3 * c, c, False
        for i in range(cells):
            reduction = i in (cells // 3, 2 * cells // 3)
            cur = cur * 2 if reduction else cur
            self.cells.append(_GdasCell(c_pp, c_p, cur, reduction, reduction_prev))
            self.reductions.append(reduction)
            c_pp, c_p, reduction_prev = c_p, 4 * cur, reduction
        self.head = nn.Linear(c_p, classes)
        self.alphas = nn.ParameterList([nn.Parameter(1e-3 * torch.randn(14, len(_DARTS_OPS))) for _ in range(2)])

    def forward(self, x, tau):
        hard, index = [], []
        for a in self.alphas:
            while True:  # GDAS resamples when the Gumbel noise overflows
                gumbels = -torch.empty_like(a).exponential_().log()
                probs = ((a.log_softmax(dim=1) + gumbels) / tau).softmax(dim=1)
                idx = probs.max(-1, keepdim=True)[1]
                hardwts = torch.zeros_like(probs).scatter_(-1, idx, 1.0) - probs.detach() + probs
                if not bool(torch.isinf(gumbels).any() | torch.isnan(probs).any()):
                    break
            hard.append(hardwts)
            index.append(idx[:, 0])
        index = torch.stack(index).tolist()
        s0 = s1 = self.stem(x)
        for cell, red in zip(self.cells, self.reductions):
            s0, s1 = s1, cell(s0, s1, hard[red], index[red])
        return self.head(s1.mean((2, 3)))


@_workload("neural architecture search, GDAS (Dong & Yang 2019) over the DARTS search space, written by hand: a supernet of 8 cells (16 initial channels, reductions at cells 2 and 5, 4 nodes and 14 edges a cell, 8 candidate operations an edge: none, 3x3 max and average pooling, skip, separable convs 3x3 and 5x5, dilated convs 3x3 and 5x5; random init) in which each edge runs only the operation drawn by a hard Gumbel-softmax (straight-through weights, the indices read back once a forward, temperature decayed from 10 to 0.1), so the operations run, and their tensors, change every forward; CIFAR-10 halves of 25k uint8 images kept on the device for the weights and the architecture, per-sample random crops and flips on the device, batch 64; every step a weight step on a training batch (SGD momentum 0.9, weight decay 3e-4, cosine rate from 0.025, gradient clipping 5) and an architecture step on a validation batch (Adam 3e-4, betas 0.5 and 0.999, weight decay 1e-3), fp32, 32 steps; every 16 steps the genotype (top-2 edges a node by softmax of the architecture weights) read back and 1000 validation images scored in batches of 250 with the argmax operations")
def gdas_search(rng):
    f = torch.nn.functional
    n = _smoke(50_000, 400)
    data = _Cifar(n)
    net = _GdasNet(c=_smoke(16, 4)).cuda()
    arch = list(net.alphas.parameters())
    weights = [p for name, p in net.named_parameters() if not name.startswith("alphas")]
    steps, batch = _smoke(32, 3), _smoke(64, 16)
    w_opt = torch.optim.SGD(weights, lr=0.025, momentum=0.9, weight_decay=3e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(w_opt, steps, eta_min=0.001)
    a_opt = torch.optim.Adam(arch, lr=3e-4, betas=(0.5, 0.999), weight_decay=1e-3)
    half = n // 2
    perms, at = None, half
    # About 9.8k tensors a step of two supernet passes (counted on CPU: 31k for 3 steps and an evaluation of 2
    # batches; the 112 edges' sampled operations forward and backward, the Gumbel draws, clipping and both optimizers)
    # and 0.8k an evaluation batch: 32 steps and 2 evaluations of 4 batches make about 0.32M tensors, 0.64M events.
    for step in range(steps):
        if at + batch > half:
            perms, at = (torch.randperm(half, device="cuda"), torch.randperm(half, device="cuda") + half), 0
        tr, va = perms[0][at: at + batch], perms[1][at: at + batch]
        at += batch
        tau = 10 - (10 - 0.1) * step / max(1, steps - 1)
        loss = f.cross_entropy(net(data.augmented(tr), tau), data.labels[tr])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(weights, 5)
        w_opt.step()
        w_opt.zero_grad(set_to_none=True)
        a_opt.zero_grad(set_to_none=True)
        loss = f.cross_entropy(net(data.augmented(va), tau), data.labels[va])
        loss.backward()
        a_opt.step()
        a_opt.zero_grad(set_to_none=True)
        w_opt.zero_grad(set_to_none=True)
        sched.step()
        del tr, va, loss
        if (step + 1) % _smoke(16, 3) == 0:
            with torch.no_grad():
                for a in arch:
                    a.softmax(-1)[:, 1:].topk(2, -1).indices.tolist()  # the genotype, "none" excluded
                correct = []
                for lo in range(half, half + _smoke(1000, 32), _smoke(250, 16)):
                    idx = torch.arange(lo, lo + _smoke(250, 16), device="cuda")
                    correct.append((net(data.plain(idx), 0.1).argmax(-1) == data.labels[idx]).sum())
                float(torch.stack(correct).sum())
                del correct
    torch.cuda.synchronize()


# ---------------------------------------------------------------- federated learning simulation


@_workload("federated learning simulation on one GPU, FedProx (Li et al. 2020) with systems heterogeneity as Flower/FedML simulations run it: McMahan et al.'s CIFAR CNN (two 5x5 convs of 64 channels with max-pools, FC 384 and 192, 10 classes; 1.8M parameters, random init); 50k uint8 CIFAR-10-sized images kept on the device, split over 100 clients of log-normal sizes (20 at least); 16 rounds, each: 10 clients sampled, each given a deep copy of the global model and a fresh SGD optimizer (lr 0.05, momentum 0.9, weight decay 1e-4), 1-3 local epochs (a straggler's draw) over its data in batches of 50 (a fresh permutation an epoch, its last batch partial), cross-entropy plus the proximal term (mu 0.01) to the global weights; the clients' weights summed in proportion to their sizes and averaged into the global model; then 5 other clients evaluating it on their own data (batches of 500, no_grad); every 4 rounds the global model scored on 10k held-out images in chunks of 1000")
def fedavg_sim(rng):
    nn, f = torch.nn, torch.nn.functional
    n_train, n_test, clients = _smoke(50_000, 600), _smoke(10_000, 100), _smoke(100, 10)
    data = _Cifar(n_train + n_test)
    model = nn.Sequential(nn.Conv2d(3, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(3, 2, 1),
                          nn.Conv2d(64, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(3, 2, 1), nn.Flatten(),
                          nn.Linear(64 * 8 * 8, 384), nn.ReLU(), nn.Linear(384, 192), nn.ReLU(),
                          nn.Linear(192, 10)).cuda()
    raw = [rng.lognormvariate(0, 1) for _ in range(clients)]
    sizes = [20 + int((n_train - 20 * clients) * r / sum(raw)) for r in raw]
    perm = torch.randperm(n_train, device="cuda")
    starts = [0]
    for s in sizes:
        starts.append(starts[-1] + s)
    shards = [perm[starts[i]: starts[i + 1]] for i in range(clients)]
    batch, mu = 50, 0.01
    # About 100 tensors a local step (counted on CPU: forward, the proximal term over 10 parameters, backward, SGD)
    # and 20 local steps a client on average: 16 rounds of 10 clients, their copies and the evaluations make about
    # 0.34M tensors, 0.68M events.
    for rnd in range(_smoke(16, 2)):
        agg, total = None, 0
        glob = [p.detach() for p in model.parameters()]
        for c in rng.sample(range(clients), _smoke(10, 3)):
            local = copy.deepcopy(model)
            opt = torch.optim.SGD(local.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
            shard = shards[c]
            for _ in range(rng.randint(1, 3)):
                order = torch.randperm(shard.shape[0], device="cuda")
                for lo in range(0, shard.shape[0], batch):
                    idx = shard[order[lo: lo + batch]]
                    loss = f.cross_entropy(local(data.plain(idx)), data.labels[idx])
                    loss = loss + mu / 2 * sum((w - g).pow(2).sum() for w, g in zip(local.parameters(), glob))
                    loss.backward()
                    opt.step()
                    opt.zero_grad(set_to_none=True)
                    del idx, loss
                del order
            m = shard.shape[0]
            if agg is None:
                agg = [p.detach() * m for p in local.parameters()]
            else:
                torch._foreach_add_(agg, [p.detach() for p in local.parameters()], alpha=m)
            total += m
            del local, opt
        with torch.no_grad():
            for p, a in zip(model.parameters(), agg):
                p.copy_(a / total)
        del agg, glob
        with torch.no_grad():
            correct = []
            for c in rng.sample(range(clients), _smoke(5, 2)):
                for lo in range(0, shards[c].shape[0], 500):
                    idx = shards[c][lo: lo + 500]
                    correct.append((model(data.plain(idx)).argmax(-1) == data.labels[idx]).sum())
            float(torch.stack(correct).sum())
            if (rnd + 1) % _smoke(4, 2) == 0:
                correct = []
                for lo in range(n_train, n_train + n_test, _smoke(1000, 50)):
                    idx = torch.arange(lo, min(lo + _smoke(1000, 50), n_train + n_test), device="cuda")
                    correct.append((model(data.plain(idx)).argmax(-1) == data.labels[idx]).sum())
                float(torch.stack(correct).sum())
            del correct
    torch.cuda.synchronize()

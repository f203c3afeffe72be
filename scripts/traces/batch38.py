"""The thirty-eighth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch36_b.py are): training-system patterns and recurrent or spiking models. Momentum-contrast self-supervised
training with a 65536-key queue and a momentum encoder (images of varying batch and crop size prefetched on a side
stream), semi-supervised FixMatch with a varying unlabeled ratio and an EMA model, a spiking CNN trained by
backpropagation through time over a varying number of time steps on event-camera frames, and a differentiable
neural computer trained on a copy-task curriculum (sequence length and memory size growing). Same conventions:
models built from configs (hand-written torch here) with random weights, nothing downloaded, `rng` the workload's
random.Random for every shape, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control
flow reads a tensor's value (confidence masks, spikes and memory allocation are all tensor ops; no boolean-mask
indexing). moco_queue_train uploads its uint8 batches on a side stream (the compute stream waits on the copy's
stream, the batch record_stream'ed); the other three are single-stream. moco_queue_train and fixmatch_ema_train run
under bf16 autocast, snn_dvs_train and dnc_copy_curriculum in fp32 (dnc_copy_curriculum stays under 1 GB).

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch38_b.py's header says the same of its half): every workload of this
half was run whole, at its real sizes (RECORD_SMOKE unset), on PyTorch's meta device (a runner like
/tmp/b38/meta_run.py, not committed: smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered
with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking its math path; boolean-mask indexing,
which the meta device cannot size, is avoided) and its op outputs counted there (events about 1.8x that count);
the counts and peaks are in record_new38.sh's header. The CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- MoCo v2


class _Basic(torch.nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        nn = torch.nn
        self.c1, self.n1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout)
        self.c2, self.n2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout)
        self.sc = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                   if stride != 1 or cin != cout else nn.Identity())

    def forward(self, x):
        return torch.relu(self.n2(self.c2(torch.relu(self.n1(self.c1(x))))) + self.sc(x))


class _ResNet(torch.nn.Module):
    """A ResNet-18 trunk (BasicBlocks 2-2-2-2, widths w..8w) ending in global average pooling."""

    def __init__(self, w=64, blocks=(2, 2, 2, 2), stem_stride=2):
        super().__init__()
        nn = torch.nn
        self.stem = nn.Sequential(nn.Conv2d(3, w, 3, stem_stride, 1, bias=False), nn.BatchNorm2d(w), nn.ReLU())
        layers, cin = [], w
        for i, n in enumerate(blocks):
            cout = w * 2 ** i
            for j in range(n):
                layers.append(_Basic(cin, cout, 2 if (i and not j) else 1))
                cin = cout
        self.layers = nn.Sequential(*layers)
        self.dim = cin

    def forward(self, x):
        return self.layers(self.stem(x)).mean((2, 3))


@_workload("self-supervised contrastive pretraining with a momentum encoder and a key queue, MoCo v2 (Chen et al. 2020) written by hand: a ResNet-18 trunk (a stride-2 3x3 stem, widths 64-512, BatchNorm) with a 2-layer MLP head (512-2048-128) as the query encoder and its momentum copy (m 0.99, updated with foreach lerp) as the key encoder; a queue of 65536 normalized 128-d keys (fp32, a ring buffer written by index_copy at the pointer); 580 steps on batches of 96-192 images (drawn per step) stored as uint8 at 112-176 px (drawn per step, multiples of 16), uploaded one step ahead from a pinned host buffer on a side stream (the compute stream waits on it, the batch record_stream'ed), two views made on the device (random resized crop by interpolate to 96-128 px, flips by torch.where, colour jitter, grayscale), shuffled BN emulated by permuting the key batch and un-permuting its output; InfoNCE over 1 + 65536 logits (temperature 0.2), SGD with momentum and cosine decay; every 100 steps a kNN monitor (200 nearest of the queue by cosine similarity on a 512-image probe batch, topk and scatter-vote over 100 classes, the accuracy read back); bf16 autocast")
def moco_queue_train(rng):
    nn, f = torch.nn, torch.nn.functional
    nsteps, K, dim = _smoke(580, 3), _smoke(65536, 64), _smoke(128, 16)
    cl = torch.channels_last if _smoke(1, 0) else torch.contiguous_format  # (the CPU smoke run's bf16 convs)
    enc_q = nn.Sequential(_ResNet(_smoke(64, 8), stem_stride=_smoke(2, 1)), nn.Linear(_smoke(512, 64), _smoke(2048, 32)),
                          nn.ReLU(), nn.Linear(_smoke(2048, 32), dim)).cuda().to(memory_format=cl)
    enc_k = nn.Sequential(_ResNet(_smoke(64, 8), stem_stride=_smoke(2, 1)), nn.Linear(_smoke(512, 64), _smoke(2048, 32)),
                          nn.ReLU(), nn.Linear(_smoke(2048, 32), dim)).cuda().to(memory_format=cl)
    for pk, pq in zip(enc_k.parameters(), enc_q.parameters()):
        pk.data.copy_(pq.data)
        pk.requires_grad_(False)
    queue = f.normalize(torch.randn(K, dim, device="cuda"), dim=1)
    qlabels = torch.randint(0, 100, (K,), device="cuda")
    ptr = 0
    opt = torch.optim.SGD(enc_q.parameters(), lr=0.06, momentum=0.9, weight_decay=5e-4, foreach=True)
    bmax, smax = _smoke(192, 4), _smoke(176, 32)
    host = torch.empty(bmax * smax * smax * 3, dtype=torch.uint8).pin_memory()
    side = torch.cuda.Stream()
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1)

    def stage():
        b = rng.randint(_smoke(96, 2), bmax)
        s = 16 * rng.randint(_smoke(7, 1), smax // 16)
        host[:b * s * 3].random_(0, 256)  # one row of the batch read in (the rest of the buffer reused)
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            x = host[:b * s * s * 3].to("cuda", non_blocking=True).view(b, s, s, 3)
        return x, rng.randint(_smoke(6, 1), _smoke(8, 2)) * 16

    def view(x, out):
        b, s = x.shape[0], x.shape[1]
        c = rng.randint(s // 2, s)
        y0, x0 = rng.randint(0, s - c), rng.randint(0, s - c)
        v = x[:, y0:y0 + c, x0:x0 + c].permute(0, 3, 1, 2).float().div_(255)
        v = f.interpolate(v, size=(out, out), mode="bilinear", align_corners=False)
        flip = torch.rand(b, 1, 1, 1, device="cuda") < 0.5
        v = torch.where(flip, v.flip(3), v)
        jit = 1 + 0.4 * (torch.rand(b, 3, 1, 1, device="cuda") - 0.5)
        v = (v * jit).clamp_(0, 1)
        gray = (torch.rand(b, 1, 1, 1, device="cuda") < 0.2).float()
        v = gray * v.mean(1, keepdim=True) + (1 - gray) * v
        return (v - mean).contiguous(memory_format=cl)

    nxt = stage()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        for step in range(nsteps):
            torch.cuda.current_stream().wait_stream(side)
            x, out = nxt
            x.record_stream(torch.cuda.current_stream())
            nxt = stage()
            for g in opt.param_groups:
                g["lr"] = 0.06 * 0.5 * (1 + math.cos(math.pi * step / nsteps))
            b = x.shape[0]
            im_q, im_k = view(x, out), view(x, out)
            q = f.normalize(enc_q(im_q).float(), dim=1)
            with torch.no_grad():
                torch._foreach_lerp_(list(enc_k.parameters()), [p.detach() for p in enc_q.parameters()], 0.01)
                perm = torch.randperm(b, device="cuda")
                k = f.normalize(enc_k(im_k[perm]).float(), dim=1)
                k = k[torch.argsort(perm)]
            lpos = (q * k).sum(1, keepdim=True)
            lneg = q @ queue.t()
            logits = torch.cat([lpos, lneg], 1) / 0.2
            loss = f.cross_entropy(logits, torch.zeros(b, dtype=torch.long, device="cuda"))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            with torch.no_grad():
                n = min(b, K - ptr)
                idx = torch.arange(ptr, ptr + n, device="cuda")
                queue.index_copy_(0, idx, k[:n])
                qlabels.index_copy_(0, idx, torch.randint(0, 100, (n,), device="cuda"))
                ptr = (ptr + n) % K
            del x, im_q, im_k, q, k, perm, lpos, lneg, logits, loss
            if (step + 1) % _smoke(100, 2) == 0:
                with torch.no_grad():
                    enc_q.eval()
                    pb = _smoke(512, 4)
                    probe = torch.rand(pb, 3, 112, 112, device="cuda").contiguous(memory_format=cl)
                    feats = f.normalize(enc_q(probe - mean).float(), dim=1)
                    sim, nn_idx = (feats @ queue.t()).topk(_smoke(200, 8), dim=1)
                    w = (sim.float() / 0.1).exp()
                    votes = torch.zeros(pb, 100, device="cuda").scatter_add_(1, qlabels[nn_idx], w)
                    truth = torch.randint(0, 100, (pb,), device="cuda")
                    (votes.argmax(1) == truth).float().mean().item()
                    enc_q.train()
                    del probe, feats, sim, nn_idx, w, votes
    torch.cuda.synchronize()


# ---------------------------------------------------------------- FixMatch


class _WideBlock(torch.nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        nn = torch.nn
        self.n1, self.c1 = nn.BatchNorm2d(cin, momentum=0.001), nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.n2, self.c2 = nn.BatchNorm2d(cout, momentum=0.001), nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.sc = nn.Conv2d(cin, cout, 1, stride, bias=False) if (cin != cout or stride != 1) else None

    def forward(self, x):
        o = f_lrelu(self.n1(x))
        y = self.c2(f_lrelu(self.n2(self.c1(o))))
        return y + (self.sc(o) if self.sc is not None else x)


def f_lrelu(x):
    return torch.nn.functional.leaky_relu(x, 0.1)


class _WRN(torch.nn.Module):
    """WRN-28-k as FixMatch uses it (pre-activation blocks, BN momentum 0.001, leaky ReLU 0.1)."""

    def __init__(self, k=2, depth=28, ncls=10):
        super().__init__()
        nn = torch.nn
        n = (depth - 4) // 6
        ws = [16, 16 * k, 32 * k, 64 * k]
        self.conv = nn.Conv2d(3, ws[0], 3, 1, 1, bias=False)
        blocks, cin = [], ws[0]
        for i in range(3):
            for j in range(n):
                blocks.append(_WideBlock(cin, ws[i + 1], (1 if i == 0 else 2) if j == 0 else 1))
                cin = ws[i + 1]
        self.blocks = nn.Sequential(*blocks)
        self.bn = nn.BatchNorm2d(cin, momentum=0.001)
        self.fc = nn.Linear(cin, ncls)

    def forward(self, x):
        return self.fc(f_lrelu(self.bn(self.blocks(self.conv(x)))).mean((2, 3)))


@_workload("semi-supervised image classification, FixMatch (Sohn et al. 2020) as its CIFAR recipe trains it, written by hand: a WRN-28-2 (pre-activation, BN momentum 0.001, leaky ReLU 0.1, random init) on 32x32 images (a 50000-image uint8 pool kept on the device); each step 32-64 labeled images plus mu x as many unlabeled (mu drawn per step from 2-7, as a varying unlabeled ratio), the labeled, weak and strong views interleaved through one forward; weak views by random crop-with-padding and flip, strong views by RandAugment-style tensor ops (brightness, contrast, solarize, posterize by integer ops, Cutout by arange comparisons), pseudo-labels from the detached weak predictions with a 0.95-confidence float mask (no boolean indexing), cross-entropy on the labeled and the masked unlabeled terms; SGD with Nesterov momentum and cosine decay, an EMA model (decay 0.999, params by foreach lerp, BN buffers copied); 620 steps; every 100 steps an evaluation of the EMA model on 1000-2500 test images (drawn) in batches of 512, the accuracy read back; bf16 autocast")
def fixmatch_ema_train(rng):
    f = torch.nn.functional
    nsteps, ncls = _smoke(620, 3), 10
    model = _WRN(_smoke(2, 1), _smoke(28, 10), ncls).cuda().to(memory_format=torch.channels_last)
    ema = _WRN(_smoke(2, 1), _smoke(28, 10), ncls).cuda().to(memory_format=torch.channels_last)
    ema.load_state_dict(model.state_dict())
    for p in ema.parameters():
        p.requires_grad_(False)
    npool = _smoke(50000, 256)
    pool = torch.randint(0, 256, (npool, 32, 32, 3), dtype=torch.uint8, device="cuda")
    plabels = torch.randint(0, ncls, (npool,), device="cuda")
    decay, nodecay = [], []
    for n_, p in model.named_parameters():
        (nodecay if ("bn" in n_ or "n1" in n_ or "n2" in n_ or "bias" in n_) else decay).append(p)
    opt = torch.optim.SGD([dict(params=decay, weight_decay=5e-4), dict(params=nodecay, weight_decay=0.0)],
                          lr=0.03, momentum=0.9, nesterov=True, foreach=True)
    mean = torch.tensor([0.491, 0.482, 0.447], device="cuda").view(1, 3, 1, 1)
    yy = torch.arange(32, device="cuda").view(1, 1, 32, 1)
    xx = torch.arange(32, device="cuda").view(1, 1, 1, 32)

    def fetch(n):
        idx = torch.randint(0, npool, (n,), device="cuda")
        return pool[idx].permute(0, 3, 1, 2).float().div_(255), idx

    def weak(x):
        n = x.shape[0]
        dy, dx = rng.randint(-4, 4), rng.randint(-4, 4)
        x = torch.roll(f.pad(x, (4, 4, 4, 4), mode="reflect"), (dy, dx), (2, 3))[:, :, 4:36, 4:36]
        flip = torch.rand(n, 1, 1, 1, device="cuda") < 0.5
        return torch.where(flip, x.flip(3), x)

    def strong(x):
        n = x.shape[0]
        x = weak(x)
        br = 0.05 + 0.9 * torch.rand(n, 1, 1, 1, device="cuda")
        x = (x * (0.5 + br)).clamp(0, 1)
        m = x.mean((1, 2, 3), keepdim=True)
        x = ((x - m) * (0.5 + torch.rand(n, 1, 1, 1, device="cuda")) + m).clamp(0, 1)
        th = torch.rand(n, 1, 1, 1, device="cuda")
        x = torch.where(x > th * 0.5 + 0.5, 1 - x, x)
        bits = torch.randint(4, 9, (n, 1, 1, 1), device="cuda")
        q = (x * 255).to(torch.int32)
        sh = 8 - bits.to(torch.int32)
        x = ((q >> sh) << sh).float() / 255
        cy = torch.randint(0, 32, (n, 1, 1, 1), device="cuda")
        cx = torch.randint(0, 32, (n, 1, 1, 1), device="cuda")
        cut = ((yy - cy).abs() < 8) & ((xx - cx).abs() < 8)
        return x * (~cut).float() + 0.5 * cut.float()

    with torch.autocast("cuda", dtype=torch.bfloat16):
        for step in range(nsteps):
            for g in opt.param_groups:
                g["lr"] = 0.03 * math.cos(7 * math.pi * step / (16 * nsteps))
            bl = rng.randint(_smoke(32, 2), _smoke(64, 4))
            mu = rng.randint(2, 7)
            xl, il = fetch(bl)
            xu, _ = fetch(bl * mu)
            inp = torch.cat([weak(xl), weak(xu), strong(xu)]) - mean
            logits = model(inp.contiguous(memory_format=torch.channels_last)).float()
            lx = logits[:bl]
            lw, ls = logits[bl:].chunk(2)
            loss_x = f.cross_entropy(lx, plabels[il])
            probs = lw.detach().softmax(1)
            conf, pseudo = probs.max(1)
            mask = (conf >= 0.95).float()
            loss_u = (f.cross_entropy(ls, pseudo, reduction="none") * mask).mean()
            loss = loss_x + loss_u
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            with torch.no_grad():
                torch._foreach_lerp_(list(ema.parameters()), [p.detach() for p in model.parameters()], 0.001)
                for be, bm in zip(ema.buffers(), model.buffers()):
                    be.copy_(bm)
            del xl, il, xu, inp, logits, lx, lw, ls, loss_x, probs, conf, pseudo, mask, loss_u, loss
            if (step + 1) % _smoke(100, 2) == 0:
                with torch.no_grad():
                    ema.eval()
                    ntest = rng.randint(_smoke(1000, 4), _smoke(2500, 8))
                    correct = torch.zeros((), device="cuda")
                    for s0 in range(0, ntest, _smoke(512, 4)):
                        n = min(_smoke(512, 4), ntest - s0)
                        xt, it = fetch(n)
                        pred = ema((xt - mean).contiguous(memory_format=torch.channels_last)).argmax(1)
                        correct += (pred == plabels[it]).float().sum()
                        del xt, it, pred
                    (correct / ntest).item()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- spiking CNN, BPTT


class _Spike(torch.autograd.Function):
    """Heaviside spike with a sigmoid surrogate gradient (alpha 4), as SpikingJelly's surrogate.Sigmoid."""

    @staticmethod
    def forward(ctx, v):
        ctx.save_for_backward(v)
        return (v >= 0).to(v.dtype)

    @staticmethod
    def backward(ctx, g):
        (v,) = ctx.saved_tensors
        s = torch.sigmoid(4 * v)
        return g * 4 * s * (1 - s)


def _lif(x, tau=2.0, vth=1.0):
    """A multi-step LIF layer: x is (T, B, ...), the membrane charged, fired and hard-reset step by step."""
    v = torch.zeros_like(x[0])
    out = []
    for t in range(x.shape[0]):
        v = v + (x[t] - v) / tau
        s = _Spike.apply(v - vth)
        out.append(s)
        v = v * (1 - s)
    return torch.stack(out)


@_workload("spiking neural network training by backpropagation through time with surrogate gradients, SpikingJelly multi-step style (Fang et al. 2021) written by hand, on DVS-Gesture-like event-camera clips (2 polarity channels, 11 classes): a spiking VGG (5 conv-BN blocks of 128 channels with max pooling, LIF neurons with tau 2 and hard reset, a Heaviside spike with a sigmoid surrogate gradient as a custom autograd Function, two spiking fully connected layers with dropout) run on (T*B) flattened frames for the convolutions and unrolled step by step for the neurons; each step a batch of 8-16 clips (drawn) binned into 6-16 time steps (drawn) at 48 or 64 px (drawn, the 128-px sensor downsampled), the event frames made on the device from random event counts; firing-rate MSE loss against one-hot targets, Adam with cosine decay; every 40 steps an evaluation on 16-32 clips at 16 time steps without grad, the firing rates and accuracy read back; fp32")
def snn_dvs_train(rng):
    nn, f = torch.nn, torch.nn.functional
    nsteps, ncls, c = _smoke(165, 2), 11, _smoke(128, 8)
    convs = nn.ModuleList()
    cin = 2
    for _ in range(5):
        convs.append(nn.Sequential(nn.Conv2d(cin, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)))
        cin = c
    fc1, fc2 = nn.Linear(c * 2 * 2, _smoke(512, 16)), nn.Linear(_smoke(512, 16), ncls * 10)
    model = nn.ModuleList([convs, fc1, fc2]).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=True)

    def forward(x):  # (T, B, 2, H, W) -> firing rate (B, ncls)
        T, B = x.shape[:2]
        h = x
        for conv in convs:
            y = conv(h.flatten(0, 1))
            s = _lif(y.view(T, B, *y.shape[1:]))
            s = f.max_pool2d(s.flatten(0, 1), 2)
            h = s.view(T, B, *s.shape[1:])
        h = f.adaptive_avg_pool2d(h.flatten(0, 1), 2).view(T, B, -1)
        h = _lif(fc1(f.dropout(h, 0.5, model.training)))
        h = _lif(fc2(f.dropout(h, 0.5, model.training)))
        return h.mean(0).view(B, ncls, 10).mean(2)

    def clip(b, T, res):
        ev = torch.poisson(torch.full((T, b, 2, res, res), 0.08, device="cuda"))
        return (ev > 0).float()

    for step in range(nsteps):
        for g in opt.param_groups:
            g["lr"] = 1e-3 * 0.5 * (1 + math.cos(math.pi * step / nsteps))
        b, T = rng.randint(_smoke(8, 1), _smoke(16, 2)), rng.randint(_smoke(6, 2), _smoke(16, 3))
        res = rng.choice((_smoke(48, 32), _smoke(64, 32)))
        x = clip(b, T, res)
        y = torch.randint(0, ncls, (b,), device="cuda")
        rate = forward(x)
        loss = f.mse_loss(rate, f.one_hot(y, ncls).float())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del x, y, rate, loss
        if (step + 1) % _smoke(40, 2) == 0:
            with torch.no_grad():
                model.eval()
                n = rng.randint(_smoke(16, 1), _smoke(32, 2))
                rate = forward(clip(n, _smoke(16, 2), _smoke(64, 32)))
                y = torch.randint(0, ncls, (n,), device="cuda")
                torch.stack([rate.mean(), (rate.argmax(1) == y).float().mean()]).tolist()
                model.train()
                del rate, y
    torch.cuda.synchronize()


# ---------------------------------------------------------------- differentiable neural computer


class _DNC(torch.nn.Module):
    """A DNC (Graves et al. 2016): an LSTM controller reading its input and last reads, an interface vector
    parsed into read/write keys and strengths, erase and write vectors, free and allocation gates, write gate and
    read modes; content addressing by cosine similarity, dynamic allocation from sorted usage, a temporal link
    matrix with precedence weighting, forward/backward/content read modes."""

    def __init__(self, nin, nout, hidden, W, R):
        super().__init__()
        nn = torch.nn
        self.W, self.R, self.hidden = W, R, hidden
        self.ctrl = nn.LSTMCell(nin + R * W, hidden)
        self.iface = nn.Linear(hidden, R * W + 3 * W + 5 * R + 3)
        self.out = nn.Linear(hidden + R * W, nout)

    def content(self, mem, key, beta):  # mem (B,N,W), key (B,H,W), beta (B,H) -> (B,H,N)
        sim = torch.einsum("bhw,bnw->bhn", torch.nn.functional.normalize(key, dim=-1),
                           torch.nn.functional.normalize(mem, dim=-1))
        return (sim * beta[..., None]).softmax(-1)

    def forward(self, xs, N):
        f = torch.nn.functional
        T, B, _ = xs.shape
        W, R = self.W, self.R
        dev = xs.device
        h = torch.zeros(B, self.hidden, device=dev)
        c = torch.zeros(B, self.hidden, device=dev)
        mem = torch.full((B, N, W), 1e-6, device=dev)
        usage = torch.zeros(B, N, device=dev)
        link = torch.zeros(B, N, N, device=dev)
        prec = torch.zeros(B, N, device=dev)
        rw = torch.zeros(B, R, N, device=dev)
        ww = torch.zeros(B, N, device=dev)
        reads = torch.zeros(B, R * W, device=dev)
        eye = torch.eye(N, device=dev)
        ys = []
        for t in range(T):
            h, c = self.ctrl(torch.cat([xs[t], reads], 1), (h, c))
            v = self.iface(h)
            o = 0
            rk = v[:, o:o + R * W].view(B, R, W); o += R * W
            rb = 1 + f.softplus(v[:, o:o + R]); o += R
            wk = v[:, o:o + W].view(B, 1, W); o += W
            wb = 1 + f.softplus(v[:, o:o + 1]); o += 1
            erase = torch.sigmoid(v[:, o:o + W]); o += W
            wvec = v[:, o:o + W]; o += W
            free = torch.sigmoid(v[:, o:o + R]); o += R
            ag = torch.sigmoid(v[:, o:o + 1]); o += 1
            wg = torch.sigmoid(v[:, o:o + 1]); o += 1
            modes = v[:, o:o + 3 * R].view(B, R, 3).softmax(-1)
            # usage and allocation
            psi = (1 - free[..., None] * rw).prod(1)
            usage = (usage + ww - usage * ww) * psi
            su, order = torch.sort(usage * (1 - 1e-6) + 1e-6, dim=1)
            cp = torch.cumprod(torch.cat([torch.ones(B, 1, device=dev), su[:, :-1]], 1), 1)
            alloc = torch.zeros_like(usage).scatter(1, order, (1 - su) * cp)
            cw = self.content(mem, wk, wb).squeeze(1)
            ww = wg * (ag * alloc + (1 - ag) * cw)
            mem = mem * (1 - ww[..., None] * erase[:, None]) + ww[..., None] * wvec[:, None]
            link = (1 - ww[:, :, None] - ww[:, None, :]) * link + ww[:, :, None] * prec[:, None, :]
            link = link * (1 - eye)
            prec = (1 - ww.sum(1, keepdim=True)) * prec + ww
            fw = torch.bmm(rw, link.transpose(1, 2))
            bw = torch.bmm(rw, link)
            cr = self.content(mem, rk, rb)
            rw = modes[..., 0:1] * bw + modes[..., 1:2] * cr + modes[..., 2:3] * fw
            reads = torch.bmm(rw, mem).flatten(1)
            ys.append(self.out(torch.cat([h, reads], 1)))
        return torch.stack(ys)


@_workload("memory-augmented recurrent network training, a Differentiable Neural Computer (Graves et al. 2016) written by hand, on the copy task with a curriculum (as the DNC reference and its PyTorch ports train it): an LSTM controller of 256, 4 read heads and one write head over a memory of N slots of 64 words, content addressing by cosine similarity, dynamic allocation from sorted usage (sort, cumprod, scatter), a B x N x N temporal link matrix with precedence, read modes; each step a batch of 16-48 sequences (drawn) of 8-bit random patterns whose length is drawn up to a curriculum maximum growing from 4 to 20 over 44 steps, unrolled for 2L+2 time steps (input, delimiter, recall) through BPTT, the memory grown with the curriculum (N from 32 to 128 slots); sigmoid cross-entropy on the recall phase, RMSprop with gradient-norm clipping at 10; every 15 steps an evaluation at the current maximum length without grad, the bit error read back; fp32, under 1 GB")
def dnc_copy_curriculum(rng):
    f = torch.nn.functional
    nsteps, bits = _smoke(44, 2), _smoke(8, 3)
    W, R, hidden = _smoke(64, 8), _smoke(4, 2), _smoke(256, 16)
    model = _DNC(bits + 2, bits, hidden, W, R).cuda()
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-4, momentum=0.9, eps=1e-10, foreach=True)
    lmin, lmax = _smoke(4, 2), _smoke(20, 3)

    def batch(b, L):
        pat = torch.randint(0, 2, (L, b, bits), device="cuda").float()
        x = torch.zeros(2 * L + 2, b, bits + 2, device="cuda")
        x[:L, :, :bits] = pat
        x[L, :, bits] = 1  # delimiter
        x[L + 1:, :, bits + 1] = 1  # recall cue
        return x, pat

    for step in range(nsteps):
        cur = lmin + (lmax - lmin) * step // max(1, nsteps - 1)
        N = 32 * (1 + 3 * step // nsteps) if _smoke(1, 0) else 8
        L = rng.randint(max(1, cur // 2), cur)
        b = rng.randint(_smoke(16, 2), _smoke(48, 3))
        x, pat = batch(b, L)
        y = model(x, N)
        loss = f.binary_cross_entropy_with_logits(y[L + 2:], pat)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
        opt.step()
        del x, pat, y, loss
        if (step + 1) % _smoke(15, 2) == 0:
            with torch.no_grad():
                x, pat = batch(_smoke(32, 2), cur)
                y = model(x, N)
                ((y[cur + 2:] > 0).float() - pat).abs().sum(0).mean().item()
                del x, pat, y
    torch.cuda.synchronize()

"""The forty-fifth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch43_b.py are): neural architecture search, AutoML and weight sharing, first half. A once-for-all supernet
trained by progressive shrinking (a random sub-network each step: elastic kernel size through OFA's kernel
transformation matrices, elastic expand ratio by channel slicing, elastic depth, elastic resolution; in-place
distillation from a frozen copy of the full network; sub-networks' BatchNorm statistics recalibrated before each
evaluation), ProxylessNAS-style path-level search (one sampled path a layer for the weight step, two paths with
binary gates for the architecture step, a latency-aware loss), a graph hypernetwork (GHN-2 style) that predicts
every parameter of randomly sampled CNNs from their computational graphs and is trained through them, and a deep
ensemble of wide ResNets of five different widths and depths trained together on bootstrapped batches whose next
batch is uploaded on a side stream. Same conventions as the earlier batches: models written by hand in torch with
random weights, nothing downloaded, `rng` the workload's random.Random for every shape and every sampled
architecture, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a
tensor's value (paths, gates and architectures are drawn by `rng` on the host; accuracies and losses are read back
only at evaluation points, for logging). hetero_ensemble_train uses a side stream (uploads waited on by event, the
tensors record_stream'ed); the others are single-stream. ofa_supernet_train and ghn_param_predict_train run under
bf16 autocast, proxyless_nas_search and hetero_ensemble_train in fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch45_b.py's header says the same of its half): every workload of this
half was run at its real sizes (RECORD_SMOKE unset) on PyTorch's meta device, ofa_supernet_train and
hetero_ensemble_train whole (at more steps than they keep now), proxyless_nas_search and ghn_param_predict_train
at fewer steps, their counts scaled (record_new45.sh's header says which and how) (a runner like
/tmp/b45/meta_run.py, not committed: smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered
with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking its math path; boolean-mask indexing,
which the meta device cannot size, is avoided) and its op outputs counted there (events about 1.8x that count);
the counts and peaks are in record_new45.sh's header. The CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import copy
import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


def _bn(bn, x):
    """A BatchNorm2d applied to the first x.shape[1] channels of its parameters and running statistics."""
    c = x.shape[1]
    return torch.nn.functional.batch_norm(x, bn.running_mean[:c], bn.running_var[:c], bn.weight[:c], bn.bias[:c],
                                          bn.training, 0.1, 1e-5)


# ---------------------------------------------------------------- once-for-all supernet


class _OfaBlock(torch.nn.Module):
    """OFA's dynamic MBConv: weights at the largest expand ratio (6) and kernel (7); smaller kernels are the
    centre of the larger one through learned kernel transformation matrices (25x25, 9x9), smaller widths the
    first channels; squeeze-and-excitation where the stage has it; hard-swish."""

    def __init__(self, cin, cout, stride, se):
        super().__init__()
        nn = torch.nn
        mid = cin * 6
        self.cin, self.stride, self.res = cin, stride, stride == 1 and cin == cout
        self.expand = nn.Parameter(torch.randn(mid, cin, 1, 1) * (2 / cin) ** 0.5)
        self.dw = nn.Parameter(torch.randn(mid, 1, 7, 7) * 0.15)
        self.t5, self.t3 = nn.Parameter(torch.eye(25)), nn.Parameter(torch.eye(9))
        self.bn1, self.bn2, self.bn3 = nn.BatchNorm2d(mid), nn.BatchNorm2d(mid), nn.BatchNorm2d(cout)
        self.se = nn.ModuleList([nn.Conv2d(mid, mid // 4, 1), nn.Conv2d(mid // 4, mid, 1)]) if se else None
        self.proj = nn.Parameter(torch.randn(cout, mid, 1, 1) * (1 / mid) ** 0.5)

    def kernel(self, k, m):
        w = self.dw[:m]
        if k <= 5:
            w = (w[:, :, 1:6, 1:6].reshape(m, 25) @ self.t5).reshape(m, 1, 5, 5)
        if k == 3:
            w = (w[:, :, 1:4, 1:4].reshape(m, 9) @ self.t3).reshape(m, 1, 3, 3)
        return w

    def forward(self, x, k, e):
        f = torch.nn.functional
        m = self.cin * e
        h = f.hardswish(_bn(self.bn1, f.conv2d(x, self.expand[:m])))
        h = f.hardswish(_bn(self.bn2, f.conv2d(h, self.kernel(k, m), None, self.stride, k // 2, 1, m)))
        if self.se is not None:
            r, ex = self.se
            q = m // 4
            s = f.relu(f.conv2d(h.mean((2, 3), keepdim=True), r.weight[:q, :m], r.bias[:q]))
            h = h * f.hardsigmoid(f.conv2d(s, ex.weight[:m, :q], ex.bias[:m]))
        h = _bn(self.bn3, f.conv2d(h, self.proj[:, :m]))
        return x + h if self.res else h


class _OfaNet(torch.nn.Module):
    """OFA-MobileNetV3's supernet: a stem, a fixed MBConv1, five stages of up to 4 dynamic blocks (24-40-80-112-160
    channels), the final 1x1 conv to 960, a 1280 feature layer, 1000 classes."""

    def __init__(self, widths=(24, 40, 80, 112, 160), strides=(2, 2, 2, 1, 2), se=(False, True, False, True, True)):
        super().__init__()
        nn = torch.nn
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.Hardswish())
        self.first = nn.Sequential(nn.Conv2d(16, 16, 3, 1, 1, groups=16, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
                                   nn.Conv2d(16, 16, 1, bias=False), nn.BatchNorm2d(16))
        self.stages, c = nn.ModuleList(), 16
        for w, s, q in zip(widths, strides, se):
            self.stages.append(nn.ModuleList([_OfaBlock(c if i == 0 else w, w, s if i == 0 else 1, q) for i in range(4)]))
            c = w
        self.final = nn.Sequential(nn.Conv2d(c, c * 6, 1, bias=False), nn.BatchNorm2d(c * 6), nn.Hardswish())
        self.feature = nn.Sequential(nn.Linear(c * 6, 1280), nn.Hardswish())
        self.head = nn.Linear(1280, 1000)

    def forward(self, x, cfg):
        h = self.stem(x)
        h = h + self.first(h)
        for blocks, (d, ke) in zip(self.stages, cfg):
            for i in range(d):
                h = blocks[i](h, *ke[i])
        return self.head(self.feature(self.final(h).mean((2, 3))))


@_workload("neural architecture search by weight sharing, once-for-all network training (Cai et al. 2020) with progressive shrinking, written by hand (random init): an OFA-MobileNetV3 supernet (five stages of up to 4 dynamic MBConv blocks, 24-160 channels, SE in three stages, hard-swish, 1000 classes) whose every step trains one random sub-network: elastic kernel 3/5/7 (the smaller kernels the larger one's centre through learned 25x25 and 9x9 transformation matrices), elastic expand ratio 3/4/6 (first channels of weights, BatchNorm and SE sliced), elastic depth 2-4 a stage and elastic resolution 128-224 px with batches of 24-64 (capped at 40 images of 224 px worth of pixels); four phases (full network, then elastic kernel, depth, expand ratio added in turn), from the second on a KD loss from a frozen copy of the full network; SGD Nesterov with cosine decay and label smoothing, bf16 autocast; every 40 steps the smallest, largest and two random sub-networks evaluated at their own resolution after BatchNorm recalibration (statistics reset, then 2 batches in train mode), accuracy read back")
def ofa_supernet_train(rng):
    f = torch.nn.functional
    nsteps = _smoke(150, 5)
    net = _OfaNet() if _smoke(1, 0) else _OfaNet(widths=(8, 8, 16, 16, 24))
    net = net.cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.08, momentum=0.9, nesterov=True, weight_decay=3e-5)
    full = [(4, [(7, 6)] * 4)] * 5
    cap = _smoke(40 * 224 * 224, 4 * 64 * 64)
    teacher = None

    def sample(phase, lo=None):
        cfg = []
        for _ in range(5):
            d = 4 if phase < 2 else (lo or rng.randint(2, 4))
            ke = [(7 if phase < 1 else (lo and 3 or rng.choice([3, 5, 7])),
                   6 if phase < 3 else (lo and 3 or rng.choice([3, 4, 6]))) for _ in range(d)]
            cfg.append((d, ke))
        return cfg

    for step in range(nsteps):
        phase = min(3, int(4 * step / nsteps + 0.4)) if step else 0
        if phase >= 1 and teacher is None:
            teacher = copy.deepcopy(net).eval().requires_grad_(False)
        for g in opt.param_groups:
            g["lr"] = 0.08 * 0.5 * (1 + math.cos(math.pi * step / nsteps))
        res = rng.choice(_smoke([128, 160, 192, 224], [32, 48, 64]))
        b = max(2, min(rng.randint(24, 64), cap // (res * res)))
        x = torch.randn(b, 3, res, res, device="cuda")
        y = torch.randint(0, 1000, (b,), device="cuda")
        cfg = sample(phase)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = net(x, cfg).float()
            loss = f.cross_entropy(out, y, label_smoothing=0.1)
            if teacher is not None:
                with torch.no_grad():
                    soft = teacher(x, full).float().softmax(-1)
                loss = loss + 1.0 * -(soft * out.log_softmax(-1)).sum(-1).mean()
                del soft
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del x, y, out, loss
        if (step + 1) % _smoke(40, 3) == 0:
            accs = []
            for cfg in (sample(3, lo=2), full, sample(3), sample(3)):
                r = rng.choice(_smoke([160, 192, 224], [32, 48]))
                sub = copy.deepcopy(net)
                for m in sub.modules():
                    if isinstance(m, torch.nn.BatchNorm2d):
                        m.reset_running_stats()
                with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                    for _ in range(2):
                        sub(torch.randn(_smoke(32, 2), 3, r, r, device="cuda"), cfg)
                    sub.eval()
                    xe = torch.randn(_smoke(64, 2), 3, r, r, device="cuda")
                    ye = torch.randint(0, 1000, (xe.shape[0],), device="cuda")
                    accs.append((sub(xe, cfg).argmax(1) == ye).float().mean())
                del sub, xe, ye
            [a.item() for a in accs]
            del accs


# ---------------------------------------------------------------- ProxylessNAS


class _MBConv(torch.nn.Module):
    """MobileNetV2's inverted residual (ReLU6, BatchNorm), kernel k and expand ratio e; residual where shapes match."""

    def __init__(self, cin, cout, k, e, stride):
        super().__init__()
        nn = torch.nn
        mid = cin * e
        layers = [] if e == 1 else [nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.ReLU6()]
        layers += [nn.Conv2d(mid, mid, k, stride, k // 2, groups=mid, bias=False), nn.BatchNorm2d(mid), nn.ReLU6(),
                   nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.net, self.res = nn.Sequential(*layers), stride == 1 and cin == cout

    def forward(self, x):
        h = self.net(x)
        return x + h if self.res else h


_PROXYLESS_OPS = [(3, 3), (3, 6), (5, 3), (5, 6), (7, 3), (7, 6)]


class _ProxylessSupernet(torch.nn.Module):
    """ProxylessNAS's over-parameterized MobileNetV2 space: 21 mixed layers, each six MBConv candidates (kernel
    3/5/7, expand 3/6) and, where the layer keeps its shape, the zero op (the layer skipped)."""

    def __init__(self, stages=((24, 4, 2), (40, 4, 2), (80, 4, 2), (96, 4, 1), (192, 4, 2), (320, 1, 1))):
        super().__init__()
        nn = torch.nn
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU6(),
                                  _MBConv(32, 16, 3, 1, 1))
        self.layers, self.skippable, c = nn.ModuleList(), [], 16
        for w, n, s in stages:
            for i in range(n):
                self.layers.append(nn.ModuleList([_MBConv(c, w, k, e, s if i == 0 else 1) for k, e in _PROXYLESS_OPS]))
                self.skippable.append(i > 0)
                c = w
        self.last = nn.Sequential(nn.Conv2d(c, 1280, 1, bias=False), nn.BatchNorm2d(1280), nn.ReLU6())
        self.head = nn.Linear(1280, 1000)

    def options(self, i):
        return len(_PROXYLESS_OPS) + int(self.skippable[i])

    def forward(self, x, path, pairs=None, alpha=None):
        """path[i]: the active candidate of layer i (6: skipped); with pairs and alpha, the two candidates of each
        layer run under binary gates (value one-hot on the active one, gradient through softmax(alpha[pair]))."""
        h = self.stem(x)
        for i, ops in enumerate(self.layers):
            run = lambda j, h=h, ops=ops: h if j == len(_PROXYLESS_OPS) else ops[j](h)  # noqa: E731
            if pairs is None:
                h = run(path[i])
            else:
                a, b = pairs[i]
                p = alpha[i, [a, b]].softmax(0)
                g = p - p.detach()
                oa, ob = run(a), run(b)
                h = (oa if path[i] == a else ob) + g[0] * oa + g[1] * ob
        return self.head(self.last(h).mean((2, 3)))


@_workload("neural architecture search, ProxylessNAS (Cai et al. 2019) path-level binarization over the MobileNetV2 space, written by hand (random init, fp32): a supernet of 21 mixed layers (24-320 channels) of six MBConv candidates each (kernel 3/5/7, expand 3/6) plus the zero op where the layer keeps its shape, 1000 classes; 134 iterations, the first 28 weight steps only, then alternating: a weight step trains one path drawn per layer (SGD Nesterov, cosine), an architecture step runs two candidates per layer under binary gates (one active, the gates' gradient through the softmax of the pair's architecture parameters) on a held-out batch, with ProxylessNAS's latency loss (cross-entropy times (log expected latency / log target)^0.6, the expected latency from a per-layer lookup table) and Adam on the architecture parameters (backward restricted to them); batches of 24-64 at 128-192 px drawn per step (capped at 48 images of 160 px worth of pixels); every 50 steps a sampled path evaluated on 96 images, the architecture entropy read back")
def proxyless_nas_search(rng):
    f = torch.nn.functional
    iters, warm = _smoke(134, 4), _smoke(28, 1)
    net = _ProxylessSupernet() if _smoke(1, 0) else _ProxylessSupernet(((8, 2, 2), (16, 2, 2), (24, 1, 1)))
    net = net.cuda()
    nl = len(net.layers)
    alpha = torch.zeros(nl, len(_PROXYLESS_OPS) + 1, device="cuda", requires_grad=True)
    invalid = torch.tensor([[0.0] * len(_PROXYLESS_OPS) + [0.0 if s else -1e4] for s in net.skippable], device="cuda")
    lat = torch.tensor([[k * k * e * (1 + 0.1 * i) for k, e in _PROXYLESS_OPS] + [0.0] for i in range(nl)],
                       device="cuda") / 10
    target = math.log(0.6 * float(sum(45 * (1 + 0.1 * i) for i in range(nl))) / 10)
    opt_w = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=4e-5)
    opt_a = torch.optim.Adam([alpha], lr=6e-3, betas=(0.0, 0.999))
    cap = _smoke(48 * 160 * 160, 4 * 64 * 64)

    def batch():
        res = rng.choice(_smoke([128, 160, 192], [32, 48, 64]))
        b = max(2, min(rng.randint(24, 64), cap // (res * res)))
        return torch.randn(b, 3, res, res, device="cuda"), torch.randint(0, 1000, (b,), device="cuda")

    for it in range(iters):
        for g in opt_w.param_groups:
            g["lr"] = 0.05 * 0.5 * (1 + math.cos(math.pi * it / iters))
        x, y = batch()
        path = [rng.randrange(net.options(i)) for i in range(nl)]
        loss = f.cross_entropy(net(x, path), y, label_smoothing=0.1)
        opt_w.zero_grad(set_to_none=True)
        loss.backward()
        opt_w.step()
        del x, y, loss
        if it >= warm:
            x, y = batch()
            pairs = [rng.sample(range(net.options(i)), 2) for i in range(nl)]
            path = [rng.choice(p) for p in pairs]
            ce = f.cross_entropy(net(x, path, pairs, alpha), y)
            exp_lat = ((alpha + invalid).softmax(-1) * lat).sum()
            loss = ce * (exp_lat.log() / target).pow(0.6)
            opt_a.zero_grad(set_to_none=True)
            loss.backward(inputs=[alpha])
            opt_a.step()
            del x, y, ce, exp_lat, loss
        if (it + 1) % _smoke(50, 2) == 0:
            net.eval()
            with torch.no_grad():
                path = [rng.randrange(net.options(i)) for i in range(nl)]
                xe = torch.randn(_smoke(96, 2), 3, _smoke(192, 64), _smoke(192, 64), device="cuda")
                acc = (net(xe, path).argmax(1) == torch.randint(0, 1000, (xe.shape[0],), device="cuda")).float().mean()
                p = (alpha + invalid).softmax(-1)
                ent = -(p * (p + 1e-9).log()).sum(-1).mean()
            net.train()
            acc.item(), ent.item()
            del xe, acc, p, ent


# ---------------------------------------------------------------- graph hypernetwork


_GHN_OPS = {"conv1": 0, "conv3": 1, "conv5": 2, "bn": 3, "relu": 4, "add": 5, "pool": 6, "fc": 7, "input": 8}


def _ghn_arch(rng, lo, hi, widths):
    """A random CNN for 32 px images: conv layers (kernel, input and output width, stride, residual) and its
    computational graph: node op ids, shapes and directed edges."""
    layers, c = [], 3
    n = rng.randint(lo, hi)
    for i in range(n):
        co = rng.choice(widths)
        k = rng.choice([1, 3, 3, 5])
        s = 2 if i in (n // 3, 2 * n // 3) and i > 0 else 1
        layers.append((k, c, co, s, s == 1 and co == c and rng.random() < 0.6))
        c = co
    ops, shapes, edges = [_GHN_OPS["input"]], [(3, 3)], []
    prev = 0
    for k, ci, co, s, r in layers:
        base = len(ops)
        ops += [_GHN_OPS[f"conv{k}"], _GHN_OPS["bn"], _GHN_OPS["relu"]]
        shapes += [(ci, co), (co, co), (co, co)]
        edges += [(prev, base), (base, base + 1), (base + 1, base + 2)]
        prev = base + 2
        if r:
            ops.append(_GHN_OPS["add"])
            shapes.append((co, co))
            edges += [(prev, len(ops) - 1), (base - 1 if base > 1 else 0, len(ops) - 1)]
            prev = len(ops) - 1
    ops += [_GHN_OPS["pool"], _GHN_OPS["fc"]]
    shapes += [(c, c), (c, 10)]
    edges += [(prev, len(ops) - 2), (len(ops) - 2, len(ops) - 1)]
    return layers, ops, shapes, edges


class _Ghn(torch.nn.Module):
    """A GHN-2-style graph hypernetwork: node embeddings from op type and shape, gated message passing forward
    and backward along the DAG (T rounds, GRU updates), a decoder to (64, 64, 5, 5) conv tensors through a
    low-rank basis, BatchNorm scale and shift and classifier heads."""

    def __init__(self, d=128, cmax=64, rounds=2):
        super().__init__()
        nn = torch.nn
        self.cmax, self.rounds = cmax, rounds
        self.op = nn.Embedding(len(_GHN_OPS), d)
        self.cin, self.cout = nn.Embedding(cmax + 1, d), nn.Embedding(cmax + 1, d)
        self.msg_f, self.msg_b = (nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d)) for _ in range(2))
        self.gru_f, self.gru_b = nn.GRUCell(d, d), nn.GRUCell(d, d)
        self.ln = nn.LayerNorm(d)
        self.dec = nn.Sequential(nn.Linear(d, 4 * d), nn.ReLU(), nn.Linear(4 * d, cmax * 32))
        self.basis = nn.Parameter(torch.randn(32, cmax * 25) / 32 ** 0.5)
        self.dec_bn, self.dec_fc = nn.Linear(d, 2 * cmax), nn.Linear(d, 10 * cmax)

    def forward(self, ops, cin, cout, adj):
        h = self.op(ops) + self.cin(cin) + self.cout(cout)
        for _ in range(self.rounds):
            h = self.gru_f(adj @ self.msg_f(h), h)
            h = self.gru_b(adj.t() @ self.msg_b(h), h)
        return self.ln(h)

    def conv(self, h):
        n = h.shape[0]
        return (self.dec(h).view(n, self.cmax, 32) @ self.basis).view(n, self.cmax, self.cmax, 5, 5)


def _ghn_forward(ghn, archs, x_list):
    """Predicts every parameter of the architectures (one graph batch: block-diagonal adjacency) and runs each
    on its images; returns the logits per architecture."""
    f = torch.nn.functional
    ops, cin, cout, edges, convs, bns, fcs = [], [], [], [], [], [], []
    for layers, o, shapes, e in archs:
        base = len(ops)
        ops += o
        cin += [min(a, ghn.cmax) for a, _ in shapes]
        cout += [min(b, ghn.cmax) for _, b in shapes]
        edges += [(base + a, base + b) for a, b in e]
        convs.append([base + i for i, op in enumerate(o) if op <= 2])
        bns.append([base + i for i, op in enumerate(o) if op == 3])
        fcs.append(base + len(o) - 1)
    n = len(ops)
    dev = "cuda"
    src, dst = torch.tensor([e[1] for e in edges], device=dev), torch.tensor([e[0] for e in edges], device=dev)
    adj = torch.zeros(n, n, device=dev).index_put_((src, dst), torch.ones(len(edges), device=dev))
    h = ghn(torch.tensor(ops, device=dev), torch.tensor(cin, device=dev), torch.tensor(cout, device=dev), adj)
    flat_c = [i for c in convs for i in c]
    flat_b = [i for bb in bns for i in bb]
    w_all = ghn.conv(h[torch.tensor(flat_c, device=dev)])
    bn_all = ghn.dec_bn(h[torch.tensor(flat_b, device=dev)]).view(-1, 2, ghn.cmax)
    fc_all = ghn.dec_fc(h[torch.tensor(fcs, device=dev)]).view(-1, 10, ghn.cmax)
    outs, j = [], 0
    for a, ((layers, _, _, _), x) in enumerate(zip(archs, x_list)):
        hx = x
        for k, ci, co, s, r in layers:
            o = (5 - k) // 2
            w = w_all[j, :co, :ci, o:o + k, o:o + k] * (2 / (ci * k * k)) ** 0.5
            y = f.conv2d(hx, w, None, s, k // 2)
            y = f.relu(f.batch_norm(y, None, None, 1 + bn_all[j, 0, :co], bn_all[j, 1, :co], True))
            hx = hx + y if r else y
            j += 1
        c = hx.shape[1]
        outs.append(hx.mean((2, 3)) @ fc_all[a, :, :c].t() * c ** -0.5)
    return outs


@_workload("parameter prediction with a graph hypernetwork, GHN-2 (Knyazev et al. 2021) written by hand (random init): each step a meta-batch of 4-8 random CNNs for 32 px images (4-11 conv layers of kernel 1/3/5 and 16-64 channels, two stride-2 layers, random residual connections, BatchNorm without running statistics, global pooling, 10 classes) is turned into one batched computational graph (op-type and shape embeddings, a block-diagonal adjacency of 50-300 nodes), two rounds of gated message passing forward and backward along the DAG (GRU cells), every conv tensor decoded through a low-rank basis to 64x64x5x5 and sliced to each layer's shape, BatchNorm and classifier parameters from their own heads; each architecture then runs functionally on its own batch of 32-128 images and the summed cross-entropy trains the hypernetwork (AdamW, gradient clipping 5); bf16 autocast; every 45 steps 8 deeper unseen architectures (10-16 layers) evaluated on 256 images each, accuracy read back")
def ghn_param_predict_train(rng):
    f = torch.nn.functional
    nsteps = _smoke(185, 3)
    ghn = _Ghn() if _smoke(1, 0) else _Ghn(d=32, cmax=64)
    ghn = ghn.cuda()
    opt = torch.optim.AdamW(ghn.parameters(), lr=1e-3, weight_decay=1e-5)
    widths = _smoke([16, 24, 32, 48, 64], [8, 16])

    for step in range(nsteps):
        m = rng.randint(_smoke(4, 2), _smoke(8, 2))
        archs = [_ghn_arch(rng, _smoke(4, 2), _smoke(11, 3), widths) for _ in range(m)]
        xs = [torch.randn(rng.choice(_smoke([32, 64, 96, 128], [4, 8])), 3, 32, 32, device="cuda") for _ in range(m)]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            outs = _ghn_forward(ghn, archs, xs)
            loss = sum(f.cross_entropy(o.float(), torch.randint(0, 10, (o.shape[0],), device="cuda")) for o in outs) / m
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(ghn.parameters(), 5.0)
        opt.step()
        del xs, outs, loss
        if (step + 1) % _smoke(45, 2) == 0:
            archs = [_ghn_arch(rng, _smoke(10, 2), _smoke(16, 3), widths) for _ in range(_smoke(8, 2))]
            xs = [torch.randn(_smoke(256, 4), 3, 32, 32, device="cuda") for _ in archs]
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                accs = [(o.argmax(1) == torch.randint(0, 10, (o.shape[0],), device="cuda")).float().mean()
                        for o in _ghn_forward(ghn, archs, xs)]
            [a.item() for a in accs]
            del xs, accs


# ---------------------------------------------------------------- heterogeneous deep ensemble


class _WideBlock(torch.nn.Module):
    """WRN's pre-activation basic block (dropout left out); a 1x1 shortcut where the shape changes."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        nn = torch.nn
        self.bn1, self.conv1 = nn.BatchNorm2d(cin), nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn2, self.conv2 = nn.BatchNorm2d(cout), nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.short = None if stride == 1 and cin == cout else nn.Conv2d(cin, cout, 1, stride, bias=False)

    def forward(self, x):
        f = torch.nn.functional
        o = f.relu(self.bn1(x))
        y = self.conv2(f.relu(self.bn2(self.conv1(o))))
        return y + (x if self.short is None else self.short(o))


def _wrn(depth, k, classes):
    nn = torch.nn
    n = (depth - 4) // 6
    layers, c = [nn.Conv2d(3, 16, 3, 1, 1, bias=False)], 16
    for i, w in enumerate((16 * k, 32 * k, 64 * k)):
        for j in range(n):
            layers.append(_WideBlock(c, w, 2 if i and not j else 1))
            c = w
    layers += [nn.BatchNorm2d(c), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c, classes)]
    return nn.Sequential(*layers)


@_workload("deep ensemble training with heterogeneous members (Lakshminarayanan et al. 2017, members of different capacity), written by hand (random init, fp32): five wide ResNets for 32 px CIFAR-100-style images, WRN-16-1, WRN-16-2, WRN-22-2, WRN-16-4 and WRN-28-3 (16-192 channels), each with its own SGD Nesterov optimizer and learning rate, trained one after another on the same step's batch (64-256 images drawn per step), each on its own bootstrap resample (an index gather) with its own random flips (torch.where); the next batch's uint8 images and labels are uploaded from two reused pinned host buffers on a side stream one step ahead (waited on by event, the tensors record_stream'ed, the host buffer's previous copy synchronized before it is refilled) and normalized on the compute stream; every 60 steps the ensemble evaluated on 512 images in chunks of 128 (mean of members' softmax, NLL, a 15-bin expected calibration error through index_add_, member disagreement), read back")
def hetero_ensemble_train(rng):
    f = torch.nn.functional
    nsteps = _smoke(178, 3)
    specs = [(16, 1), (16, 2), (22, 2), (16, 4), (28, 3)] if _smoke(1, 0) else [(10, 1), (10, 2)]
    members = [_wrn(d, k, 100).cuda() for d, k in specs]
    opts = [torch.optim.SGD(m.parameters(), lr=0.1 * rng.uniform(0.5, 1.5), momentum=0.9, nesterov=True,
                            weight_decay=5e-4) for m in members]
    bmax = _smoke(256, 8)
    side = torch.cuda.Stream()
    hx = [torch.empty(bmax, 3, 32, 32, dtype=torch.uint8).pin_memory() for _ in range(2)]
    hy = [torch.empty(bmax, dtype=torch.int64).pin_memory() for _ in range(2)]
    done = [None, None]
    mean = torch.tensor([0.507, 0.487, 0.441], device="cuda").view(1, 3, 1, 1) * 255
    std = torch.tensor([0.267, 0.256, 0.276], device="cuda").view(1, 3, 1, 1) * 255

    def fetch(i):
        b = rng.choice(_smoke(list(range(64, 257, 32)), [4, 8]))
        s = i % 2
        if done[s] is not None:
            done[s].synchronize()
        hx[s][:b].random_(0, 256)
        hy[s][:b].random_(0, 100)
        with torch.cuda.stream(side):
            xd = hx[s][:b].to("cuda", non_blocking=True)
            yd = hy[s][:b].to("cuda", non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        done[s] = ev
        return xd, yd, ev

    nxt = fetch(0)
    for step in range(nsteps):
        xd, yd, ev = nxt
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        xd.record_stream(cur)
        yd.record_stream(cur)
        nxt = fetch(step + 1)
        x = (xd.float() - mean) / std
        b = x.shape[0]
        for m, opt in zip(members, opts):
            idx = torch.randint(0, b, (b,), device="cuda")
            flip = torch.rand(b, 1, 1, 1, device="cuda") < 0.5
            xi = x[idx]
            xb = torch.where(flip, xi.flip(3), xi)
            loss = f.cross_entropy(m(xb), yd[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            del idx, flip, xi, xb, loss
        del xd, yd, x
        if (step + 1) % _smoke(60, 2) == 0:
            for m in members:
                m.eval()
            nll, disagree = 0.0, 0.0
            bins_n, bins_c, bins_a = (torch.zeros(15, device="cuda") for _ in range(3))
            with torch.no_grad():
                for _ in range(_smoke(4, 1)):
                    xe = torch.randn(_smoke(128, 4), 3, 32, 32, device="cuda")
                    ye = torch.randint(0, 100, (xe.shape[0],), device="cuda")
                    probs = torch.stack([m(xe).softmax(-1) for m in members])
                    p = probs.mean(0)
                    nll = nll + f.nll_loss((p + 1e-8).log(), ye)
                    disagree = disagree + (probs.argmax(-1) != p.argmax(-1)[None]).float().mean()
                    conf, pred = p.max(1)
                    bi = (conf * 15).long().clamp(max=14)
                    bins_n.index_add_(0, bi, torch.ones_like(conf))
                    bins_c.index_add_(0, bi, conf)
                    bins_a.index_add_(0, bi, (pred == ye).float())
                ece = (bins_c - bins_a).abs().sum() / bins_n.sum()
            for m in members:
                m.train()
            nll.item(), disagree.item(), ece.item()
            del xe, ye, probs, p, conf, pred, bi, ece

"""The forty-fifth batch of held-out workloads, second half (batch45.py holds the first): neural architecture
search, AutoML and weight sharing. A TPE-driven (Tree-structured Parzen Estimator, as Optuna's sampler proposes)
hyperparameter sweep that trains short runs of GPT language models of different depth, width, context and batch
one after another, regularized (aging) evolution that trains and scores mutated CNN candidates one after another,
a slimmable MobileNetV2 with switchable BatchNorm served at several widths per request (anytime prediction, uploads
on a side stream) and knowledge distillation from an ensemble of three ViTs into a student ViT that grows in
stages (deepened by function-preserving block copies, its MLPs widened Net2Net-style). Same conventions as
batch45.py: models written by hand with random weights, nothing downloaded, `rng` the workload's random.Random for
every shape and every sampled configuration, sizes through `_smoke(real, small)`. No control flow reads a tensor's
value: the sweep's and the evolution's choices are made on the host from stand-in scores computed from each
configuration and `rng` (the losses, accuracies and zero-cost scores are read back only for logging).
slimmable_width_serve uses a side stream (uploads waited on by event, the tensors record_stream'ed); the others are
single-stream. tpe_lm_sweep and ens_kd_grow_student run under bf16 autocast, slimmable_width_serve in bf16 under
inference_mode, aging_evo_nas in fp32.

Real sizes checked before recording, as batch45.py's header says: every workload of this half was run at its
real sizes on the meta device (tpe_lm_sweep and aging_evo_nas whole at their final trials and candidates,
slimmable_width_serve and ens_kd_grow_student at fewer requests and steps) and its op outputs counted and scaled (events about 1.8x that count; the counts and peaks
are in record_new45.sh's header), and the CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import copy
import math

import torch

from batch_common import Batch
from batch45 import _bn, _MBConv
from workload_helpers import _mha
from workload_models import _GptBlock

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- TPE sweep of GPT language models


class _SweepGpt(torch.nn.Module):
    """A nanoGPT: token and learned position embeddings, pre-norm blocks, a tied head."""

    def __init__(self, vocab, depth, d, ctx):
        super().__init__()
        nn = torch.nn
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Parameter(torch.randn(ctx, d) * 0.02)
        self.blocks = nn.ModuleList([_GptBlock(d, d // 64) for _ in range(depth)])
        self.ln = nn.LayerNorm(d)

    def forward(self, ids):
        h = self.tok(ids) + self.pos[: ids.shape[1]]
        for blk in self.blocks:
            h = blk(h)
        return self.ln(h) @ self.tok.weight.t()


_TPE_SPACE = {"depth": [2, 3, 4, 5, 6, 8], "d": [256, 384, 512, 640, 768], "ctx": [128, 256, 384, 512]}


def _tpe_propose(rng, trials, n_startup=5, gamma=0.25, candidates=24):
    """Optuna-style TPE on the host: categorical choices from smoothed counts of the good and bad trials,
    log learning rate and batch from Parzen windows; the candidate maximizing l(x)/g(x) is returned."""

    def random_cfg():
        return {"depth": rng.choice(_TPE_SPACE["depth"]), "d": rng.choice(_TPE_SPACE["d"]),
                "ctx": rng.choice(_TPE_SPACE["ctx"]), "loglr": rng.uniform(math.log(1e-4), math.log(3e-3)),
                "logb": rng.uniform(math.log(4), math.log(32))}

    if len(trials) < n_startup:
        return random_cfg()
    ranked = sorted(trials, key=lambda t: t[1])
    ng = max(1, int(math.ceil(gamma * len(ranked))))
    good, bad = [t[0] for t in ranked[:ng]], [t[0] for t in ranked[ng:]]

    def density(cfg, group):
        p = 1.0
        for k, vals in _TPE_SPACE.items():
            p *= (1 + sum(g[k] == cfg[k] for g in group)) / (len(vals) + len(group))
        for k in ("loglr", "logb"):
            bw = 0.5
            p *= (sum(math.exp(-0.5 * ((cfg[k] - g[k]) / bw) ** 2) for g in group) + 0.1) / (len(group) + 0.1)
        return p

    best, score = None, -1.0
    for _ in range(candidates):
        base = dict(rng.choice(good))
        for k in _TPE_SPACE:
            if rng.random() < 0.3:
                base[k] = rng.choice(_TPE_SPACE[k])
        base["loglr"] += rng.gauss(0, 0.4)
        base["logb"] = min(math.log(32), max(math.log(4), base["logb"] + rng.gauss(0, 0.4)))
        s = density(base, good) / density(base, bad)
        if s > score:
            best, score = base, s
    return best


@_workload("hyperparameter optimization with a Tree-structured Parzen Estimator (Bergstra et al. 2011, as Optuna's TPESampler proposes: 5 random start-up trials, then the best of 24 candidates by l(x)/g(x) with gamma 0.25), written by hand: 13 trials one after another, each a fresh nanoGPT language model (vocabulary 8192, depth 2-8, width 256-768 with 64-dim heads, context 128-512, tied head; random init) trained for 24-40 AdamW steps with warm-up and cosine decay at its own learning rate and batch (4-32 sequences, capped at 8192 tokens), the sequence lengths of each step drawn between half the context and the context, bf16 autocast, then evaluated on 4 held-out batches without grad and deleted; the loss is read back only for logging and the sampler conditions on a host-side stand-in score of each configuration (a scaling-law-like function of parameters, tokens and learning rate plus rng noise), so the run's shapes do not depend on tensor values")
def tpe_lm_sweep(rng):
    f = torch.nn.functional
    ntrials, vocab = _smoke(13, 2), _smoke(8192, 256)
    cap = _smoke(8192, 256)
    trials = []
    for t in range(ntrials):
        cfg = _tpe_propose(rng, trials)
        depth, d, ctx = cfg["depth"], cfg["d"], cfg["ctx"]
        if not _smoke(1, 0):
            depth, d, ctx = 2, 64, 32
        lr = math.exp(cfg["loglr"])
        b = max(2, min(int(math.exp(cfg["logb"])), cap // ctx))
        nsteps = _smoke(rng.randint(24, 40), 2)
        model = _SweepGpt(vocab, depth, d, ctx).cuda()
        opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.1)
        for step in range(nsteps):
            for g in opt.param_groups:
                g["lr"] = lr * min(1.0, (step + 1) / 5) * 0.5 * (1 + math.cos(math.pi * step / nsteps))
            s = rng.randrange(ctx // 2, ctx + 1, 16 if ctx > 64 else 1)
            ids = torch.randint(0, vocab, (b, s + 1), device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(ids[:, :-1])
                loss = f.cross_entropy(logits.float().view(-1, vocab), ids[:, 1:].reshape(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            del ids, logits, loss
        model.eval()
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            ev = 0
            for _ in range(_smoke(4, 1)):
                ids = torch.randint(0, vocab, (b, ctx + 1), device="cuda")
                ev = ev + f.cross_entropy(model(ids[:, :-1]).float().view(-1, vocab), ids[:, 1:].reshape(-1))
        ev.item()
        params = depth * 12 * d * d
        stand_in = (2.0 + 30 / (params / 1e5) ** 0.3 + 8 / (nsteps * b * ctx / 1e3) ** 0.3
                    + 0.15 * (cfg["loglr"] - math.log(1e-3)) ** 2 + rng.gauss(0, 0.03))
        trials.append((cfg, stand_in))
        del model, opt, ids, ev


# ---------------------------------------------------------------- aging evolution


_EVO_OPS = ["conv3", "conv5", "sep3", "sep5", "mb3e3", "mb5e6", "dil3"]


def _evo_op(op, cin, cout, stride):
    nn = torch.nn
    if op.startswith("mb"):
        return _MBConv(cin, cout, int(op[2]), int(op[4]), stride)
    if op.startswith("sep"):
        k = int(op[3])
        return nn.Sequential(nn.Conv2d(cin, cin, k, stride, k // 2, groups=cin, bias=False),
                             nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())
    k, dil = (3, 2) if op == "dil3" else (int(op[4]), 1)
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, dil * (k // 2), dil, bias=False), nn.BatchNorm2d(cout),
                         nn.ReLU())


class _Res(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return x + self.m(x)


def _evo_net(genome, classes=100):
    nn = torch.nn
    c = genome["stem"]
    layers = [nn.Conv2d(3, c, 3, 1, 1, bias=False), nn.BatchNorm2d(c), nn.ReLU()]
    for i, (op, depth, w) in enumerate(genome["stages"]):
        for j in range(depth):
            s = 2 if i and not j else 1
            m = _evo_op(op, c, w, s)
            layers.append(_Res(m) if s == 1 and c == w and not op.startswith("mb") else m)
            c = w
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c, classes)]
    return nn.Sequential(*layers)


_EVO_WIDTHS = ((16, 24, 32, 48), (32, 48, 64, 96), (64, 96, 128, 160))


def _evo_random(rng):
    return {"stem": rng.choice([16, 24, 32]), "batch": rng.choice([64, 96, 128, 192, 256]),
            "stages": [(rng.choice(_EVO_OPS), rng.randint(1, 4), rng.choice(ws)) for ws in _EVO_WIDTHS]}


def _evo_mutate(rng, g):
    g = copy.deepcopy(g)
    kind = rng.randrange(4)
    i = rng.randrange(3)
    op, depth, w = g["stages"][i]
    if kind == 0:
        op = rng.choice(_EVO_OPS)
    elif kind == 1:
        depth = max(1, min(4, depth + rng.choice([-1, 1])))
    elif kind == 2:
        w = rng.choice(_EVO_WIDTHS[i])
    else:
        g["batch"] = rng.choice([64, 96, 128, 192, 256])
    g["stages"][i] = (op, depth, w)
    return g


def _evo_stand_in(rng, g):
    """A host-side predicted accuracy (as predictor-guided evolution uses), from capacity and op choice."""
    cap = sum(d * w for _, d, w in g["stages"]) + g["stem"]
    bonus = sum({"mb5e6": 0.04, "sep5": 0.02, "mb3e3": 0.03}.get(op, 0.0) for op, _, _ in g["stages"])
    return 0.4 + 0.1 * math.log(cap) + bonus + rng.gauss(0, 0.02)


@_workload("neural architecture search by regularized (aging) evolution (Real et al. 2019), written by hand (random init, fp32): CNN candidates for 32 px CIFAR-100-style images described by a genome (stem width 16-32, three stages each of one op type out of conv 3x3/5x5, separable 3x3/5x5, MBConv k3e3/k5e6 and dilated 3x3, depth 1-4 and width 16-160, training batch 64-256), a population of 8 random candidates then 23 evolution cycles (a tournament of 4 picked by a host-side predicted accuracy, one mutation of op, depth, width or batch, the oldest member removed); each candidate built fresh, trained for 30-48 SGD momentum steps with cosine decay and label smoothing, scored by SynFlow (parameters made absolute in place, a forward of ones, backward, the sum of |theta * grad|, signs restored) and evaluated on 2 held-out batches of 256 without grad, the scores read back for logging, then deleted")
def aging_evo_nas(rng):
    f = torch.nn.functional
    npop, ncycles = _smoke(8, 2), _smoke(23, 2)
    population, history = [], []

    def evaluate(g):
        if not _smoke(1, 0):
            g = {"stem": 8, "batch": 4, "stages": [(op, 1, w // 4) for op, _, w in g["stages"]]}
        net = _evo_net(g).cuda()
        nsteps = _smoke(rng.randint(30, 48), 2)
        opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
        for step in range(nsteps):
            for grp in opt.param_groups:
                grp["lr"] = 0.05 * 0.5 * (1 + math.cos(math.pi * step / nsteps))
            x = torch.randn(g["batch"], 3, 32, 32, device="cuda")
            y = torch.randint(0, 100, (g["batch"],), device="cuda")
            loss = f.cross_entropy(net(x), y, label_smoothing=0.1)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            del x, y, loss
        net.eval()
        opt.zero_grad(set_to_none=True)
        with torch.no_grad():
            signs = [p.sign() for p in net.parameters()]
            for p in net.parameters():
                p.abs_()
        out = net(torch.ones(1, 3, 32, 32, device="cuda")).sum()
        out.backward()
        with torch.no_grad():
            synflow = sum((p * p.grad).abs().sum() for p in net.parameters())
            for p, s in zip(net.parameters(), signs):
                p.mul_(s)
            acc = 0
            for _ in range(2):
                xe = torch.randn(_smoke(256, 4), 3, 32, 32, device="cuda")
                acc = acc + (net(xe).argmax(1) == torch.randint(0, 100, (xe.shape[0],), device="cuda")).float().mean()
        synflow.item(), acc.item()
        del net, opt, signs, out, synflow, acc, xe
        return _evo_stand_in(rng, g)

    for _ in range(npop):
        g = _evo_random(rng)
        population.append((g, evaluate(g)))
    for _ in range(ncycles):
        sample = rng.sample(population, min(4, len(population)))
        parent = max(sample, key=lambda t: t[1])[0]
        child = _evo_mutate(rng, parent)
        population.append((child, evaluate(child)))
        history.append(population.pop(0))


# ---------------------------------------------------------------- slimmable network serving


_SLIM_WIDTHS = (0.35, 0.5, 0.75, 1.0)


def _div8(c):
    return max(8, int(c + 4) // 8 * 8)


class _SlimConv(torch.nn.Module):
    """A conv whose input and output channels shrink with the width (the first channels), followed by a
    switchable BatchNorm (private statistics and affine parameters per width) and ReLU6."""

    def __init__(self, cin, cout, k, stride, dw=False, act=True, fixed_out=False):
        super().__init__()
        nn = torch.nn
        self.k, self.stride, self.dw, self.act = k, stride, dw, act
        self.couts = [cout if fixed_out else _div8(cout * w) for w in _SLIM_WIDTHS]
        self.weight = nn.Parameter(torch.randn(cout, 1 if dw else cin, k, k) * (2 / ((1 if dw else cin) * k * k)) ** 0.5)
        self.bns = nn.ModuleList([nn.BatchNorm2d(c) for c in self.couts])

    def forward(self, x, wi):
        f = torch.nn.functional
        co = self.couts[wi]
        w = self.weight[:co] if self.dw else self.weight[:co, : x.shape[1]]
        h = _bn(self.bns[wi], f.conv2d(x, w, None, self.stride, self.k // 2, 1, co if self.dw else 1))
        return f.relu6(h) if self.act else h


class _SlimMobileNetV2(torch.nn.Module):
    """Slimmable MobileNetV2 (Yu et al. 2019) at widths 0.35/0.5/0.75/1.0, the 1280 feature layer fixed."""

    def __init__(self, setting=((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                                (6, 160, 3, 2), (6, 320, 1, 1))):
        super().__init__()
        nn = torch.nn
        self.stem = _SlimConv(3, 32, 3, 2)
        self.blocks, c = nn.ModuleList(), 32
        for t, co, n, s in setting:
            for i in range(n):
                mid = c * t
                parts = ([] if t == 1 else [_SlimConv(c, mid, 1, 1)]) + [_SlimConv(mid, mid, 3, s if i == 0 else 1, dw=True),
                                                                        _SlimConv(mid, co, 1, 1, act=False)]
                self.blocks.append(nn.ModuleList(parts))
                c = co
        self.last = _SlimConv(c, 1280, 1, 1, fixed_out=True)
        self.head = nn.Linear(1280, 1000)
        self.res = [blk[-2].stride == 1 for blk in self.blocks]

    def forward(self, x, wi):
        h = self.stem(x, wi)
        for blk, r in zip(self.blocks, self.res):
            y = h
            for part in blk:
                y = part(y, wi)
            h = h + y if r and y.shape == h.shape else y
        return self.head(self.last(h, wi).mean((2, 3)))


@_workload("serving a slimmable network (Yu et al. 2019, switchable BatchNorm) at several widths per request, written by hand (random init): a slimmable MobileNetV2 (widths 0.35/0.5/0.75/1.0 of its 16-320 channels, weights sliced to the first channels, private BatchNorm statistics per width, 1000 classes) in inference_mode under bf16 autocast; 1200 requests of 1-48 images of 180-400 px (drawn per request) each ask for 1-3 widths by latency budget (anytime prediction: the widths' softmax averaged, top-5 copied back); each request's uint8 images are uploaded one request ahead on a side stream from two reused pinned host buffers (waited on by event, the tensors record_stream'ed), then resized (bilinear, antialiased) to the width's resolution (160-224 px, smaller widths at lower resolution) and normalized")
def slimmable_width_serve(rng):
    f = torch.nn.functional
    nreq = _smoke(1200, 4)
    net = _SlimMobileNetV2() if _smoke(1, 0) else _SlimMobileNetV2(((1, 8, 1, 1), (6, 16, 2, 2)))
    net = net.cuda().eval()
    bmax, smax = _smoke(48, 2), _smoke(400, 64)
    side = torch.cuda.Stream()
    host = [torch.empty(bmax * 3 * smax * smax, dtype=torch.uint8).pin_memory() for _ in range(2)]
    done = [None, None]
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1) * 255
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1) * 255
    res_of = _smoke([160, 176, 192, 224], [32, 32, 48, 48])

    def fetch(i):
        b = _loguniform(rng, 1, bmax)
        hh, ww = rng.randint(_smoke(180, 40), smax), rng.randint(_smoke(180, 40), smax)
        s = i % 2
        if done[s] is not None:
            done[s].synchronize()
        buf = host[s][: b * 3 * hh * ww]
        buf[: 3 * hh * ww].random_(0, 256)
        with torch.cuda.stream(side):
            xd = buf.to("cuda", non_blocking=True).view(b, 3, hh, ww)
            ev = torch.cuda.Event()
            ev.record(side)
        done[s] = ev
        widths = sorted(rng.sample(range(len(_SLIM_WIDTHS)), rng.choice([1, 1, 2, 3])))
        return xd, ev, widths

    nxt = fetch(0)
    with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
        for r in range(nreq):
            xd, ev, widths = nxt
            cur = torch.cuda.current_stream()
            cur.wait_event(ev)
            xd.record_stream(cur)
            nxt = fetch(r + 1)
            x = (xd.float() - mean) / std
            probs = 0
            for wi in widths:
                res = res_of[wi]
                xi = f.interpolate(x, size=(res, res), mode="bilinear", antialias=True, align_corners=False)
                probs = probs + net(xi, wi).float().softmax(-1)
                del xi
            top = (probs / len(widths)).topk(5, dim=-1)
            top.indices.cpu(), top.values.cpu()
            del xd, x, probs, top


# ---------------------------------------------------------------- ensemble distillation into a growing student


class _VitBlock(torch.nn.Module):
    """A pre-norm ViT block: bidirectional SDPA self-attention, a GELU MLP of width `mlp`."""

    def __init__(self, d, heads, mlp):
        super().__init__()
        nn = torch.nn
        self.ln1, self.qkv, self.proj = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ln2, self.fc1, self.fc2 = nn.LayerNorm(d), nn.Linear(d, mlp), nn.Linear(mlp, d)
        self.heads = heads

    def forward(self, x):
        x = x + self.proj(_mha(*self.qkv(self.ln1(x)).chunk(3, -1), self.heads))
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))


class _Vit(torch.nn.Module):
    """A ViT for variable resolution: 16 px patches, a class token, 14x14 learned positions interpolated
    (bicubic) to each batch's grid, 1000 classes."""

    def __init__(self, d, depth, heads, mlp):
        super().__init__()
        nn = torch.nn
        self.patch = nn.Conv2d(3, d, 16, 16)
        self.cls, self.pos = nn.Parameter(torch.zeros(1, 1, d)), nn.Parameter(torch.randn(1, d, 14, 14) * 0.02)
        self.blocks = nn.ModuleList([_VitBlock(d, heads, mlp) for _ in range(depth)])
        self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, 1000)

    def forward(self, x):
        h = self.patch(x)
        pos = torch.nn.functional.interpolate(self.pos, size=h.shape[2:], mode="bicubic", align_corners=False)
        h = (h + pos).flatten(2).transpose(1, 2)
        h = torch.cat([self.cls.expand(h.shape[0], -1, -1), h], 1)
        for blk in self.blocks:
            h = blk(h)
        return self.head(self.ln(h[:, 0]))


def _deepen(student, every):
    """Function-preserving deepening: after every `every`-th block a copy of it whose output projections are
    zeroed (so the copy starts as the identity)."""
    new = []
    for i, blk in enumerate(student.blocks):
        new.append(blk)
        if i % every == 0:
            c = copy.deepcopy(blk)
            with torch.no_grad():
                for lin in (c.proj, c.fc2):
                    lin.weight.zero_()
                    lin.bias.zero_()
            new.append(c)
    student.blocks = torch.nn.ModuleList(new)


def _widen_mlp(rng, student, factor):
    """Net2WiderNet on every MLP: new hidden units copy random old ones (fc1 rows gathered), fc2's columns
    gathered and divided by each unit's replica count."""
    nn = torch.nn
    for blk in student.blocks:
        m = blk.fc1.out_features
        mapping = list(range(m)) + [rng.randrange(m) for _ in range(m * (factor - 1))]
        counts = [0] * m
        for j in mapping:
            counts[j] += 1
        idx = torch.tensor(mapping, device="cuda")
        scale = torch.tensor([1.0 / counts[j] for j in mapping], device="cuda")
        fc1, fc2 = nn.Linear(blk.fc1.in_features, len(mapping)).cuda(), nn.Linear(len(mapping), blk.fc2.out_features).cuda()
        with torch.no_grad():
            fc1.weight.copy_(blk.fc1.weight[idx])
            fc1.bias.copy_(blk.fc1.bias[idx])
            fc2.weight.copy_(blk.fc2.weight[:, idx] * scale)
            fc2.bias.copy_(blk.fc2.bias)
        blk.fc1, blk.fc2 = fc1, fc2


@_workload("knowledge distillation from an ensemble into a student that grows in stages, written by hand (random init): three frozen ViT teachers of different shapes (6 blocks of 384, 8 of 512, 4 of 768; 16 px patches) run without grad and their temperature-4 softmaxes averaged; a student ViT (width 256, 4 heads) starts at 4 blocks with MLP 768 and grows three times in a 210-step run, each growth function-preserving and followed by a fresh AdamW: deepened to 8 blocks (each block followed by a copy with zeroed output projections), MLPs widened Net2Net-style to 1536 (units replicated by an rng mapping, the outgoing weights divided by replica counts), deepened again to 12; loss 0.9 KL(T=4) + 0.1 cross-entropy; images at 128-224 px drawn per step (positions interpolated bicubic to the grid), 32-96 a batch capped at 64 images of 224 px worth of pixels, bf16 autocast; every 60 steps the student's accuracy and agreement with the ensemble on 128 images at 224 px read back")
def ens_kd_grow_student(rng):
    f = torch.nn.functional
    nsteps = _smoke(210, 6)
    if _smoke(1, 0):
        teachers = [_Vit(384, 6, 6, 1536), _Vit(512, 8, 8, 2048), _Vit(768, 4, 12, 3072)]
        student = _Vit(256, 4, 4, 768)
    else:
        teachers = [_Vit(32, 1, 2, 64), _Vit(64, 1, 2, 128)]
        student = _Vit(32, 2, 2, 64)
    teachers = [t.cuda().eval().requires_grad_(False) for t in teachers]
    student = student.cuda()
    growths = {nsteps // 4: "deepen", nsteps // 2: "widen", 3 * nsteps // 4: "deepen2"}
    cap = _smoke(64 * 224 * 224, 4 * 64 * 64)
    tau = 4.0

    def make_opt():
        return torch.optim.AdamW(student.parameters(), lr=5e-4, weight_decay=0.05)

    opt = make_opt()
    for step in range(nsteps):
        g = growths.get(step)
        if g:
            del opt
            if g == "deepen":
                _deepen(student, 1)
            elif g == "widen":
                _widen_mlp(rng, student, 2)
            else:
                _deepen(student, 2)
            opt = make_opt()
        res = rng.choice(_smoke([128, 160, 192, 224], [32, 48, 64]))
        b = max(2, min(rng.randint(32, 96), cap // (res * res)))
        x = torch.randn(b, 3, res, res, device="cuda")
        y = torch.randint(0, 1000, (b,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            with torch.no_grad():
                soft = sum((t(x).float() / tau).softmax(-1) for t in teachers) / len(teachers)
            out = student(x).float()
            loss = 0.9 * f.kl_div((out / tau).log_softmax(-1), soft, reduction="batchmean") * tau * tau
            loss = loss + 0.1 * f.cross_entropy(out, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(student.parameters(), 1.0)
        opt.step()
        del x, y, soft, out, loss
        if (step + 1) % _smoke(60, 3) == 0:
            student.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                xe = torch.randn(_smoke(128, 2), 3, _smoke(224, 64), _smoke(224, 64), device="cuda")
                ye = torch.randint(0, 1000, (xe.shape[0],), device="cuda")
                pe = student(xe).argmax(1)
                te = sum(t(xe).float().softmax(-1) for t in teachers).argmax(1)
                acc, agree = (pe == ye).float().mean(), (pe == te).float().mean()
            student.train()
            acc.item(), agree.item()
            del xe, ye, pe, te, acc, agree

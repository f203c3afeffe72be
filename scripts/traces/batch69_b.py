"""The sixty-ninth batch of held-out workloads for record.py, second half (batch69.py has the first): federated,
private and robust machine learning, written in torch alone. PGD adversarial training with the TRADES loss (a
pre-activation ResNet on 32x32 images, a fixed number of PGD steps on the KL divergence from the clean prediction
in an L-infinity ball, sign steps projected by min/max, then cross-entropy plus beta times the KL of the adversarial
prediction; PGD-20 robust accuracy every so often), a membership-inference attack with shadow models (a target MLP
and several shadow MLPs on Purchase-like binary tabular data, each trained on its own "in" half of a device-resident
pool, their sorted confidence vectors on in and out records training an attack MLP, then per-example LiRA scores from
the shadows' logit-scaled confidences, AUCs by ranking), split learning with client and server halves exchanging
activations (several clients each holding a convolutional bottom of their own, their smashed activations sent as bf16
with Gaussian noise to a transformer top on the server, the gradient at the cut sent back as bf16, the client halves
averaged every round, SplitFed-style), and a robust-aggregation server over client updates (client updates of a CNN's
flattened parameters received as fp16 from 2 reused pinned host buffers on a side stream one round ahead, a few
Byzantine updates crafted on the device, a little is enough, sign flips and scaling, then the round's rule among
multi-Krum by cdist and topk, a coordinate-wise trimmed mean by sort, the median and FLTrust with a root-dataset
gradient computed by the server, the aggregate applied with server momentum and the model evaluated). Same
conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or, for the aggregation
server, from a few reused pinned host buffers), `rng` the workload's random.Random for every shape, count and sampled
choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's
value: PGD steps, training steps and rounds are fixed on the host, no boolean-mask indexing; losses, accuracies and
AUCs are read back only at logging points. krum_trimmed_mean_agg_serve uses a side stream (uploads waited on by
event, the tensors record_stream'ed); the others are single-stream. The ResNet, the split model and the aggregation
server's CNN run under bf16 autocast; the PGD perturbations, the MLPs, the aggregation rules and the LiRA statistics
are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new69.sh's header (and batch69.py's docstring).
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- TRADES adversarial training


class _PreActBlock(_nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.bn1, self.bn2 = _nn.BatchNorm2d(cin), _nn.BatchNorm2d(cout)
        self.c1 = _nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.c2 = _nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.short = _nn.Conv2d(cin, cout, 1, stride, bias=False) if (stride != 1 or cin != cout) else None

    def forward(self, x):
        o = _F.relu(self.bn1(x))
        sc = self.short(o) if self.short is not None else x
        o = self.c1(o)
        o = self.c2(_F.relu(self.bn2(o)))
        return o + sc


class _PreActResNet(_nn.Module):
    def __init__(self, c, classes):
        super().__init__()
        self.stem = _nn.Conv2d(3, c, 3, 1, 1, bias=False)
        self.blocks = _nn.Sequential(_PreActBlock(c, c, 1), _PreActBlock(c, 2 * c, 2), _PreActBlock(2 * c, 4 * c, 2),
                                     _PreActBlock(4 * c, 8 * c, 2))
        self.bn = _nn.BatchNorm2d(8 * c)
        self.fc = _nn.Linear(8 * c, classes)

    def forward(self, x):
        h = _F.relu(self.bn(self.blocks(self.stem(x))))
        return self.fc(h.mean((2, 3)))


def _pgd(model, x, eps, alpha, steps, loss_fn):
    """L-infinity PGD from a small random start: sign steps on loss_fn(logits), projected back into the ball."""
    xa = (x + 0.001 * torch.randn_like(x)).detach()
    for _ in range(steps):
        xa.requires_grad_(True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = loss_fn(model(xa).float())
        g, = torch.autograd.grad(loss, xa)
        xa = xa.detach() + alpha * g.sign()
        xa = torch.minimum(torch.maximum(xa, x - eps), x + eps).clamp(0, 1)
        del g, loss
    return xa.detach()


@_workload("PGD adversarial training with the TRADES loss (random init): a pre-activation ResNet (width 48, 4 stages, 32x32 images, 10 classes) trained by SGD with momentum on prototype-plus-noise images in batches of 96-160 (drawn) under bf16 autocast; each step 5-10 PGD steps (drawn) in an L-infinity ball of 8/255 maximising the KL divergence from the clean prediction, then cross-entropy plus beta=6 times that KL at the adversarial point; 230 steps with a multistep learning-rate schedule, the losses read back every 10 steps and PGD-20 robust accuracy (cross-entropy attack) on a fixed batch of 256 every 50")
def trades_pgd_adversarial_train(rng):
    classes, c, res = 10, _smoke(48, 8), _smoke(32, 8)
    model = _PreActResNet(c, classes).cuda().to(memory_format=torch.channels_last)
    steps = _smoke(230, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, [int(steps * 0.75), int(steps * 0.9)], 0.1)
    protos = _F.avg_pool2d(torch.rand(classes, 3, res, res, device="cuda"), 5, 1, 2)
    eps, alpha, beta = 8 / 255, 2 / 255, 6.0
    yv = torch.randint(0, classes, (_smoke(256, 8),), device="cuda")
    xv = (protos.index_select(0, yv) + 0.1 * torch.randn(yv.shape[0], 3, res, res, device="cuda")).clamp(0, 1)
    xv = xv.contiguous(memory_format=torch.channels_last)
    for step in range(steps):
        b = rng.randint(_smoke(96, 4), _smoke(160, 6))
        y = torch.randint(0, classes, (b,), device="cuda")
        x = (protos.index_select(0, y) + 0.1 * torch.randn(b, 3, res, res, device="cuda")).clamp(0, 1)
        x = x.contiguous(memory_format=torch.channels_last)
        model.eval()
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            p_nat = model(x).float().log_softmax(-1)
        xa = _pgd(model, x, eps, alpha, rng.randint(_smoke(5, 1), _smoke(10, 2)),
                  lambda lo: _F.kl_div(lo.log_softmax(-1), p_nat, log_target=True, reduction="sum"))
        model.train()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            lo_nat = model(x).float()
            lo_adv = model(xa).float()
        nat = _F.cross_entropy(lo_nat, y)
        rob = _F.kl_div(lo_adv.log_softmax(-1), lo_nat.log_softmax(-1), log_target=True, reduction="batchmean")
        loss = nat + beta * rob
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        if step % 10 == 0:
            torch.stack([nat, rob]).tolist()
        del x, y, p_nat, xa, lo_nat, lo_adv, nat, rob, loss
        if (step + 1) % _smoke(50, 2) == 0:
            model.eval()
            xa = _pgd(model, xv, eps, alpha, _smoke(20, 2), lambda lo: _F.cross_entropy(lo, yv))
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                acc = (model(xa).argmax(-1) == yv).float().mean()
            acc.item()
            del xa, acc


# ---------------------------------------------------------------- membership inference with shadow models


def _train_mlp(model, x, y, rows, steps, bt, rng):
    """Trains model on the rows (an index tensor into x, y) for a fixed number of Adam steps."""
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    n = rows.shape[0]
    for step in range(steps):
        i = rows.index_select(0, torch.randint(0, n, (bt,), device="cuda"))
        loss = _F.cross_entropy(model(x.index_select(0, i)), y.index_select(0, i))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 50 == 0:
            float(loss)
        del i, loss
    model.eval()


def _roc_auc(scores, labels):
    """ROC AUC of scores against 0/1 labels by ranking (no ties assumed)."""
    ranks = torch.empty_like(scores).scatter_(0, scores.argsort(), torch.arange(1, scores.numel() + 1,
                                                                                 device=scores.device,
                                                                                 dtype=scores.dtype))
    npos = labels.sum()
    nneg = labels.numel() - npos
    return ((ranks * labels).sum() - npos * (npos + 1) / 2) / (npos * nneg)


@_workload("membership-inference attack with shadow models (random init): Purchase-like tabular data (a device-resident pool of 40,000 records of 600 binary features from 100 drawn cluster centres, labels by cluster); a target MLP (600-1024-512-256-100, tanh) and 8-9 shadow MLPs (drawn) of the same architecture, each trained by Adam for 580-640 steps (drawn) of 256 on its own random half of the pool (its in set, by randperm); the shadows' sorted top-10 confidences plus the label one-hot on in and out records train an attack MLP for 600 steps, which is then scored against the target; then offline LiRA: per-record Gaussians of the shadows' logit-scaled true-class confidences, in and out, the likelihood ratio of the target's; attack AUCs by ranking read back")
def shadow_model_mia_opt(rng):
    feats, classes, hidden = _smoke(600, 16), _smoke(100, 5), _smoke(1024, 16)
    pool = _smoke(40000, 96)
    centres = (torch.rand(classes, feats, device="cuda") < 0.5).float()
    y = torch.randint(0, classes, (pool,), device="cuda")
    flip = (torch.rand(pool, feats, device="cuda") < 0.15).float()
    x = (centres.index_select(0, y) - flip).abs()
    del flip

    def make():
        return _nn.Sequential(_nn.Linear(feats, hidden), _nn.Tanh(), _nn.Linear(hidden, hidden // 2), _nn.Tanh(),
                              _nn.Linear(hidden // 2, hidden // 4), _nn.Tanh(), _nn.Linear(hidden // 4, classes)).cuda()

    bt = _smoke(256, 8)
    nshadow = rng.randint(_smoke(8, 2), _smoke(9, 2))
    models, members = [], []
    for _ in range(nshadow + 1):
        perm = torch.randperm(pool, device="cuda")
        inset = torch.zeros(pool, device="cuda").index_fill_(0, perm[: pool // 2], 1.0)
        m = make()
        _train_mlp(m, x, y, perm[: pool // 2], rng.randint(_smoke(580, 2), _smoke(640, 3)), bt, rng)
        m.requires_grad_(False)
        models.append(m)
        members.append(inset)
        del perm
    target, shadows = models[0], models[1:]
    t_in, s_in = members[0], members[1:]

    ntop = min(10, classes)

    def features(m, rows):
        with torch.no_grad():
            p = m(x.index_select(0, rows)).softmax(-1)
        top = p.sort(-1, descending=True).values[:, :ntop]
        return torch.cat([top, _F.one_hot(y.index_select(0, rows), classes).float()], -1)

    # attack model trained on the shadows' in/out behaviour
    attack = mlp(ntop + classes, _smoke(256, 16), 1, layers=3).cuda()
    aopt = torch.optim.Adam(attack.parameters(), lr=1e-3)
    for step in range(_smoke(600, 3)):
        k = rng.randrange(nshadow)
        rows = torch.randint(0, pool, (2 * bt,), device="cuda")
        f = features(shadows[k], rows)
        lab = s_in[k].index_select(0, rows)
        loss = _F.binary_cross_entropy_with_logits(attack(f)[:, 0], lab)
        aopt.zero_grad(set_to_none=True)
        loss.backward()
        aopt.step()
        if step % 50 == 0:
            float(loss)
        del rows, f, lab, loss
    with torch.no_grad():
        rows = torch.randperm(pool, device="cuda")[: _smoke(8192, 32)]
        score = attack(features(target, rows))[:, 0]
        auc_attack = _roc_auc(score, t_in.index_select(0, rows))

        # offline LiRA over the evaluation rows, in chunks
        def scaled_conf(m, r):
            p = m(x.index_select(0, r)).softmax(-1).gather(1, y.index_select(0, r)[:, None])[:, 0]
            p = p.clamp(1e-6, 1 - 1e-6)
            return torch.log(p) - torch.log1p(-p)

        lr_scores = []
        ch = _smoke(2048, 16)
        for j in range(0, rows.shape[0], ch):
            r = rows[j: j + ch]
            conf = torch.stack([scaled_conf(m, r) for m in shadows], 0)
            ins = torch.stack([s.index_select(0, r) for s in s_in], 0)
            n_in = ins.sum(0).clamp_min(1)
            n_out = (1 - ins).sum(0).clamp_min(1)
            mu_in = (conf * ins).sum(0) / n_in
            mu_out = (conf * (1 - ins)).sum(0) / n_out
            var = (((conf - mu_in) ** 2) * ins + ((conf - mu_out) ** 2) * (1 - ins)).sum(0) / nshadow + 1e-3
            tc = scaled_conf(target, r)
            lr_scores.append(((tc - mu_out) ** 2 - (tc - mu_in) ** 2) / (2 * var))
            del conf, ins, n_in, n_out, mu_in, mu_out, var, tc
        auc_lira = _roc_auc(torch.cat(lr_scores), t_in.index_select(0, rows))
        acc = (target(x.index_select(0, rows)).argmax(-1) == y.index_select(0, rows)).float().mean()
        torch.stack([auc_attack, auc_lira, acc]).tolist()


# ---------------------------------------------------------------- split learning (SplitFed)


class _ClientBottom(_nn.Module):
    def __init__(self, c, d):
        super().__init__()
        self.f = _nn.Sequential(_nn.Conv2d(3, c, 3, 2, 1), _nn.GroupNorm(8, c), _nn.GELU(),
                                _nn.Conv2d(c, c, 3, 1, 1), _nn.GroupNorm(8, c), _nn.GELU(),
                                _nn.Conv2d(c, d, 2, 2))

    def forward(self, x):
        return self.f(x).flatten(2).transpose(1, 2)  # (B, tokens, d): the smashed activations


class _ServerTop(_nn.Module):
    def __init__(self, d, depth, heads, classes, tokens):
        super().__init__()
        self.pos = _nn.Parameter(torch.randn(1, tokens, d) * 0.02)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(depth))
        self.norm, self.head = _nn.LayerNorm(d), _nn.Linear(d, classes)

    def forward(self, t):
        t = t + self.pos
        for blk in self.blocks:
            t = blk(t)
        return self.head(self.norm(t).mean(1))


@_workload("split learning with client and server halves exchanging activations (random init), SplitFed-style: 5 clients, each holding a convolutional bottom of its own (3 convs to 256 channels, 64x64 images to 16x16 = 256 tokens) and its own AdamW, a transformer top on the server (4 pre-norm blocks, width 256, 8 heads, 20 classes) with its AdamW; 52 rounds, each client in turn running 2-3 steps (drawn) of 48-80 images (drawn) with a client-specific label skew: its smashed activations sent as bf16 with Gaussian noise (a simple defence), the server's forward and backward under bf16 autocast, the gradient at the cut sent back as bf16 for the client's backward; the client halves averaged after each round (FedAvg), the loss read back every round and test accuracy through client 0's bottom every 8 rounds")
def splitfed_activation_exchange_train(rng):
    classes, res = 20, _smoke(64, 16)
    c, d, depth = _smoke(64, 8), _smoke(256, 16), 4
    tokens = (res // 4) ** 2
    nclients = 5
    bottoms = [_ClientBottom(c, d).cuda() for _ in range(nclients)]
    for bm in bottoms[1:]:
        bm.load_state_dict(bottoms[0].state_dict())
    server = _ServerTop(d, depth, 8 if d % 8 == 0 else 2, classes, tokens).cuda()
    copts = [torch.optim.AdamW(bm.parameters(), lr=3e-4, weight_decay=0.01) for bm in bottoms]
    sopt = torch.optim.AdamW(server.parameters(), lr=3e-4, weight_decay=0.05)
    protos = _F.avg_pool2d(torch.randn(classes, 3, res, res, device="cuda"), 5, 1, 2) * 2
    skews = []
    for _ in range(nclients):
        w = [rng.uniform(0.2, 1.0) for _ in range(classes)]
        for j in rng.sample(range(classes), classes // 4):
            w[j] *= 6
        skews.append(w)
    noise = 0.05
    for rnd in range(_smoke(52, 2)):
        for k in range(nclients):
            probs = torch.tensor(skews[k], device="cuda")
            bottoms[k].train()
            server.train()
            for _s in range(rng.randint(2, 3)):
                b = rng.randint(_smoke(48, 2), _smoke(80, 4))
                y = torch.multinomial(probs, b, replacement=True)
                x = protos.index_select(0, y) + 0.7 * torch.randn(b, 3, res, res, device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    smashed = bottoms[k](x)
                sent = (smashed.float() + noise * torch.randn(smashed.shape, device="cuda")).to(torch.bfloat16)
                # server side: the received activations are a leaf
                recv = sent.detach().float().requires_grad_(True)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = _F.cross_entropy(server(recv).float(), y)
                sopt.zero_grad(set_to_none=True)
                loss.backward()
                sopt.step()
                back = recv.grad.to(torch.bfloat16)
                # client side: backward from the returned gradient at the cut
                copts[k].zero_grad(set_to_none=True)
                smashed.backward(back.to(smashed.dtype))
                copts[k].step()
                del x, y, smashed, sent, recv, back
            del probs
        with torch.no_grad():
            for ps in zip(*[bm.parameters() for bm in bottoms]):
                avg = torch.stack(ps).mean(0)
                for p in ps:
                    p.copy_(avg)
        float(loss)
        del loss
        if (rnd + 1) % _smoke(8, 1) == 0:
            bottoms[0].eval()
            server.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                y = torch.randint(0, classes, (_smoke(512, 8),), device="cuda")
                x = protos.index_select(0, y) + 0.7 * torch.randn(y.shape[0], 3, res, res, device="cuda")
                acc = (server(bottoms[0](x)).argmax(-1) == y).float().mean()
            acc.item()
            del x, y, acc


# ---------------------------------------------------------------- robust aggregation server


class _AggCNN(_nn.Module):
    def __init__(self, c, classes):
        super().__init__()
        self.f = _nn.Sequential(_nn.Conv2d(1, c, 5, padding=2), _nn.ReLU(), _nn.MaxPool2d(2),
                                _nn.Conv2d(c, 2 * c, 5, padding=2), _nn.ReLU(), _nn.MaxPool2d(2), _nn.Flatten(),
                                _nn.Linear(2 * c * 49, 512), _nn.ReLU(), _nn.Linear(512, classes))

    def forward(self, x):
        return self.f(x)


@_workload("robust-aggregation federated server (random init): a CNN on 28x28 images (2 convs of 32 and 64 channels, a 3,136-512-10 head, about 1.7M parameters) as the global model; 5,400 rounds, each receiving 20-40 client updates (drawn) of the flattened parameters as fp16 from 2 reused pinned host buffers on a side stream one round ahead (waited on by event, record_stream'ed), honest updates formed as the server's root-dataset gradient direction plus the received client deviation, 10-25% Byzantine updates (drawn) crafted on the device by a-little-is-enough, sign flipping or scaling (drawn); the round's rule drawn among multi-Krum (cdist, topk of neighbour distances), a coordinate-wise 20% trimmed mean (sort), the coordinate median and FLTrust (cosine trust scores against the server's root gradient of a 64-image batch under bf16 autocast, magnitudes normalised); the aggregate written back by vector_to_parameters with server momentum; test accuracy and the update norm read back every 25 rounds")
def krum_trimmed_mean_agg_serve(rng):
    classes, c = 10, _smoke(32, 4)
    res = 28
    model = _AggCNN(c, classes).cuda()
    params = list(model.parameters())
    vec = torch.nn.utils.parameters_to_vector(params).detach()
    dim = vec.numel()
    mom = torch.zeros_like(vec)
    protos = _F.avg_pool2d(torch.randn(classes, 1, res, res, device="cuda"), 3, 1, 1) * 2
    maxc = _smoke(40, 6)
    host = [(0.01 * torch.randn(maxc * dim)).half().pin_memory() for _ in range(2)]
    up = SideUploads(host)
    lr, root_b = 0.05, _smoke(64, 8)

    def root_gradient():
        y = torch.randint(0, classes, (root_b,), device="cuda")
        x = protos.index_select(0, y) + 0.8 * torch.randn(root_b, 1, res, res, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = _F.cross_entropy(model(x), y)
        g = torch.autograd.grad(loss, params)
        return torch.cat([t.reshape(-1) for t in g]).float()

    def draw():
        n = rng.randint(_smoke(20, 4), maxc)
        nb = max(1, int(n * rng.uniform(0.1, 0.25)))
        return n, nb, rng.choice(["alie", "signflip", "scale"]), rng.choice(["krum", "trimmed", "median", "fltrust"])

    rounds = _smoke(5400, 3)
    plan = [draw() for _ in range(rounds)]
    nxt = up.upload(0, plan[0][0] * dim)
    for rnd in range(rounds):
        n, nb, attack, rule = plan[rnd]
        item = nxt
        if rnd + 1 < rounds:
            nxt = up.upload(rnd + 1, plan[rnd + 1][0] * dim)
        raw, ev = item
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        raw.record_stream(cur)
        g0 = root_gradient()
        honest = -lr * g0[None] + raw.view(n, dim)[: n - nb].float()
        if attack == "alie":
            mu, sd = honest.mean(0), honest.std(0)
            byz = (mu - 1.0 * sd)[None].expand(nb, dim)
        elif attack == "signflip":
            byz = -4.0 * honest[:nb]
        else:
            byz = 20.0 * honest[:nb]
        upd = torch.cat([honest, byz], 0)
        if rule == "krum":
            f = nb
            dist = torch.cdist(upd, upd).pow(2)
            score = dist.topk(n - f - 1, dim=1, largest=False).values.sum(1)  # includes the zero self-distance
            keep = score.topk(n - f, largest=False).indices
            agg = upd.index_select(0, keep).mean(0)
            del dist, score, keep
        elif rule == "trimmed":
            t = int(0.2 * n)
            agg = upd.sort(0).values[t: n - t].mean(0)
        elif rule == "median":
            agg = upd.median(0).values
        else:
            ref = -lr * g0
            trust = _F.relu(_F.cosine_similarity(upd, ref[None], dim=1))
            scaled = upd * (ref.norm() / upd.norm(dim=1).clamp_min(1e-12))[:, None]
            agg = (trust[:, None] * scaled).sum(0) / trust.sum().clamp_min(1e-12)
            del ref, trust, scaled
        with torch.no_grad():
            mom.mul_(0.9).add_(agg)
            vec.add_(mom)
            torch.nn.utils.vector_to_parameters(vec, params)
        if (rnd + 1) % _smoke(25, 1) == 0:
            with torch.no_grad():
                y = torch.randint(0, classes, (_smoke(1000, 8),), device="cuda")
                x = protos.index_select(0, y) + 0.8 * torch.randn(y.shape[0], 1, res, res, device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    acc = (model(x).argmax(-1) == y).float().mean()
                torch.stack([acc, agg.norm()]).tolist()
            del x, y, acc
        del item, raw, g0, honest, byz, upd, agg

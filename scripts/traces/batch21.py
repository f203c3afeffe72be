"""The twenty-first batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch20.py are). Same conventions: models built from configs (transformers, torchvision or hand-written
torch) with random weights, nothing downloaded, `rng` the workload's random.Random, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny.

record.py calls `register(<its own module object>)` once, just before main(), after batch20_b's: every workload
below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it reaches
record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.
"""

import itertools
import math

import torch

from batch_common import Batch
from workload_helpers import _rope_tables

_b = Batch()  # this batch's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- Bayesian optimization with an exact GP


def _bo_function(name, x):
    """BoTorch's test function `name` (negated, to be maximized) at points x (..., d) in the unit cube."""
    if name == "hartmann":
        alpha = torch.tensor([1.0, 1.2, 3.0, 3.2], device=x.device)
        a = torch.tensor([[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14], [3, 3.5, 1.7, 10, 17, 8],
                          [17, 8, 0.05, 10, 0.1, 14]], device=x.device)
        p = 1e-4 * torch.tensor([[1312, 1696, 5569, 124, 8283, 5886], [2329, 4135, 8307, 3736, 1004, 9991],
                                 [2348, 1451, 3522, 2883, 3047, 6650], [4047, 8828, 8732, 5743, 1091, 381]],
                                device=x.device)
        return (alpha * torch.exp(-(a * (x[..., None, :] - p).pow(2)).sum(-1))).sum(-1)
    if name == "ackley":
        z = x * 65.536 - 32.768
        return (20 * torch.exp(-0.2 * z.pow(2).mean(-1).sqrt()) + torch.exp(torch.cos(2 * math.pi * z).mean(-1))
                - 20 - math.e)
    if name == "levy":
        w = 1 + (x * 20 - 10 - 1) / 4
        mid = ((w[..., :-1] - 1).pow(2) * (1 + 10 * torch.sin(math.pi * w[..., :-1] + 1).pow(2))).sum(-1)
        last = (w[..., -1] - 1).pow(2) * (1 + torch.sin(2 * math.pi * w[..., -1]).pow(2))
        return -(torch.sin(math.pi * w[..., 0]).pow(2) + mid + last)
    z = x * 15 - 5  # rosenbrock on [-5, 10]^d
    return -(100 * (z[..., 1:] - z[..., :-1].pow(2)).pow(2) + (z[..., :-1] - 1).pow(2)).sum(-1)


def _matern52(x1, x2, ls, scale):
    """gpytorch's ScaleKernel(MaternKernel(nu=2.5, ARD)) between (..., n, d) and (..., m, d): (..., n, m)."""
    a, b = x1 / ls, x2 / ls
    d2 = a.pow(2).sum(-1)[..., :, None] + b.pow(2).sum(-1)[..., None, :] - 2 * a @ b.transpose(-1, -2)
    r = (5 * d2.clamp_min(1e-30)).sqrt()
    return scale * (1 + r + r.pow(2) / 3) * torch.exp(-r)


@_workload("Bayesian optimization, BoTorch-style (SingleTaskGP, qExpectedImprovement, optimize_acqf), written by hand: 3 runs one after another on BoTorch test functions (3 of Hartmann-6, Ackley-10, Levy-8, Rosenbrock-12, drawn), each from 2(d+1) uniform points, a batch of q = 4, 8 or 16 new points an iteration (drawn per run), 15 iterations, the observations noisy (sigma 0.05) and appended to the training set (14-266 points, growing); an exact GP with a Matern-5/2 ARD kernel, an outputscale and Gaussian noise (softplus-constrained, SingleTaskGP's Gamma priors), outcomes standardized, refit every iteration by 20 Adam steps (lr 0.1) on the exact marginal log-likelihood (Cholesky of the n x n kernel, cholesky_solve), warm-started from the previous iteration's hyperparameters; the acquisition MC qEI with 128 base samples fixed per iteration (posterior by triangular solves against the training Cholesky, the q x q posterior covariance's Cholesky with jitter), optimize_acqf-style: 512 uniform raw candidate batches scored at once, 8 restarts drawn by Boltzmann sampling, 25 Adam steps (lr 0.025) on them clamped to the unit cube, the best restart's q points evaluated; the incumbent read back every iteration, fp64 as BoTorch recommends")
def gp_bayesopt(rng):
    f = torch.nn.functional
    dt = torch.float64
    dims = {"hartmann": 6, "ackley": 10, "levy": 8, "rosenbrock": 12}
    log2pi = math.log(2 * math.pi)
    gamma_logp = (lambda x, a, b: (a - 1) * torch.log(x) - b * x)  # a Gamma(a, b) prior's log density, unnormalized

    def fit(raw, x, y, steps):
        """Adam on the negative marginal log-likelihood (plus the priors) per training point: the Cholesky factor
        and the solve alpha at the fitted hyperparameters."""
        opt = torch.optim.Adam(raw, lr=0.1)
        n = x.shape[0]
        eye = torch.eye(n, dtype=dt, device="cuda")
        for _ in range(steps):
            ls, scale, noise = f.softplus(raw[0]), f.softplus(raw[1]), f.softplus(raw[2]) + 1e-4
            k = _matern52(x, x, ls, scale) + noise * eye
            chol = torch.linalg.cholesky(k)
            alpha = torch.cholesky_solve(y[:, None], chol)
            mll = -0.5 * (y[:, None] * alpha).sum() - chol.diagonal().log().sum() - 0.5 * n * log2pi
            prior = gamma_logp(ls, 3.0, 6.0).sum() + gamma_logp(scale, 2.0, 0.15) + gamma_logp(noise, 1.1, 0.05)
            (-(mll + prior) / n).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            del k, chol, alpha, mll, prior
        with torch.no_grad():
            ls, scale, noise = f.softplus(raw[0]), f.softplus(raw[1]), f.softplus(raw[2]) + 1e-4
            chol = torch.linalg.cholesky(_matern52(x, x, ls, scale) + noise * eye)
            return ls, scale, chol, torch.cholesky_solve(y[:, None], chol)

    def qei(xc, x, model, best, z):
        """MC qEI of candidate batches xc (b, q, d): (b,)."""
        ls, scale, chol, alpha = model
        q = xc.shape[-2]
        kxc = _matern52(xc, x, ls, scale)  # (b, q, n)
        mean = (kxc @ alpha)[..., 0]
        v = torch.linalg.solve_triangular(chol, kxc.transpose(-1, -2), upper=False)  # (b, n, q)
        cov = _matern52(xc, xc, ls, scale) - v.transpose(-1, -2) @ v
        lq = torch.linalg.cholesky_ex(cov + 1e-6 * torch.eye(q, dtype=dt, device="cuda"))[0]
        samples = mean + (z[:, None, None] @ lq.transpose(-1, -2))[..., 0, :]  # (S, b, q)
        return (samples.amax(-1) - best).clamp_min(0).mean(0)

    names = rng.sample(sorted(dims), 3)
    # About 7.3k tensors a BO iteration (counted on CPU: a refit step 150, backward and Adam included, an acquisition
    # step 160, the rest 230): 3 runs of 15 iterations make about 0.33M tensors, 0.65M events.
    for name in names:
        d, q = dims[name], rng.choice((4, 8, 16))
        x = torch.rand(2 * (d + 1), d, dtype=dt, device="cuda")
        obs = _bo_function(name, x) + 0.05 * torch.randn(x.shape[0], dtype=dt, device="cuda")
        raw = [torch.zeros(d, dtype=dt, device="cuda", requires_grad=True),
               torch.zeros((), dtype=dt, device="cuda", requires_grad=True),
               torch.full((), -3.0, dtype=dt, device="cuda", requires_grad=True)]
        for _ in range(_smoke(15, 2)):
            y = (obs - obs.mean()) / obs.std()
            model = fit(raw, x, y, _smoke(20, 3))
            best = y.max()
            z = torch.randn(128, q, dtype=dt, device="cuda")
            with torch.no_grad():
                raw_c = torch.rand(_smoke(512, 64), q, d, dtype=dt, device="cuda")
                acq = qei(raw_c, x, model, best, z)
                weights = torch.exp(2 * (acq - acq.mean()) / acq.std().clamp_min(1e-9))
                pick = torch.multinomial(weights, 8)
                pick[0] = acq.argmax()
                xc = raw_c[pick].clone().requires_grad_(True)
                del raw_c, acq, weights, pick
            opt = torch.optim.Adam([xc], lr=0.025)
            for _ in range(_smoke(25, 3)):
                (-qei(xc, x, model, best, z).sum()).backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
                with torch.no_grad():
                    xc.clamp_(0, 1)
            with torch.no_grad():
                new = xc[qei(xc, x, model, best, z).argmax()]
                x = torch.cat([x, new])
                obs = torch.cat([obs, _bo_function(name, new) + 0.05 * torch.randn(q, dtype=dt, device="cuda")])
            float(obs.max())
            del model, best, z, xc, opt, new, y
    torch.cuda.synchronize()


# ---------------------------------------------------------------- sparse 3-D convolution (MinkUNet)


_SHIFT = 1 << 15  # voxel indices are offset by this, so that every coordinate field of a key is positive


def _vkeys(c):
    """(batch, x, y, z) int64 voxel coordinates (n, 4) packed in one int64 key each (16 bits a field)."""
    return (c[:, 0] << 48) | (c[:, 1] << 32) | (c[:, 2] << 16) | c[:, 3]


def _subm_maps(keys):
    """The kernel map of a 3x3x3 submanifold convolution over sorted unique keys: per offset (in rows, out rows)
    where the neighbour exists (None for the centre, offset 13, whose map is the identity)."""
    n, maps = keys.shape[0], []
    for dx, dy, dz in itertools.product((-1, 0, 1), repeat=3):
        if dx == dy == dz == 0:
            maps.append(None)
            continue
        q = keys + ((dx << 32) + (dy << 16) + dz)
        pos = torch.searchsorted(keys, q).clamp_(max=n - 1)
        out_rows = (keys[pos] == q).nonzero()[:, 0]
        maps.append((pos[out_rows], out_rows))
    return maps


def _down_maps(coords):
    """The coarser level of a kernel-2 stride-2 convolution: its coordinates, sorted keys, and per offset of the 8
    (fine rows, coarse rows)."""
    c = torch.cat([coords[:, :1], coords[:, 1:] // 2], 1)
    keys, inv = torch.unique(_vkeys(c), return_inverse=True)
    coarse = torch.stack([keys >> 48, (keys >> 32) & 0xFFFF, (keys >> 16) & 0xFFFF, keys & 0xFFFF], 1)
    off = (coords[:, 1] % 2) * 4 + (coords[:, 2] % 2) * 2 + coords[:, 3] % 2
    maps = []
    for k in range(8):
        rows = (off == k).nonzero()[:, 0]
        maps.append((rows, inv[rows]))
    return coarse, keys, maps


class _SparseConvFn(torch.autograd.Function):
    """A sparse convolution as torchsparse/MinkowskiEngine run it, with torch ops for their gather and scatter
    kernels: per kernel offset the input rows gathered, multiplied by that offset's weight, index_add_-ed into the
    output rows (and the same three steps in the backward)."""

    @staticmethod
    def forward(ctx, x, w, maps, n_out, centre):
        out = x @ w[centre] if centre >= 0 else x.new_zeros(n_out, w.shape[2])
        for k, m in enumerate(maps):
            if m is not None and m[0].numel():
                out.index_add_(0, m[1], x.index_select(0, m[0]) @ w[k])
        ctx.save_for_backward(x, w)
        ctx.maps, ctx.centre = maps, centre
        return out

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        want_x = ctx.needs_input_grad[0]
        gw, gx = torch.zeros_like(w), None
        if want_x:
            gx = g @ w[ctx.centre].T if ctx.centre >= 0 else torch.zeros_like(x)
        if ctx.centre >= 0:
            gw[ctx.centre] = x.T @ g
        for k, m in enumerate(ctx.maps):
            if m is not None and m[0].numel():
                go = g.index_select(0, m[1])
                if want_x:
                    gx.index_add_(0, m[0], go @ w[k].T)
                gw[k] = x.index_select(0, m[0]).T @ go
        return gx, gw, None, None, None


class _SpConv(torch.nn.Module):
    def __init__(self, cin, cout, k=27):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(k, cin, cout) * math.sqrt(2 / (k * cin)))

    def forward(self, x, maps, n_out, centre=13):
        return _SparseConvFn.apply(x, self.weight, maps, n_out, centre)


class _SpBlock(torch.nn.Module):
    """MinkUNet's residual block: two submanifold 3x3x3 convs with BatchNorm, a linear projection if widths differ."""

    def __init__(self, cin, cout):
        super().__init__()
        nn = torch.nn
        self.c1, self.c2, self.n1, self.n2 = _SpConv(cin, cout), _SpConv(cout, cout), nn.BatchNorm1d(cout), \
            nn.BatchNorm1d(cout)
        self.skip = nn.Sequential(nn.Linear(cin, cout, bias=False), nn.BatchNorm1d(cout)) if cin != cout else None

    def forward(self, x, maps):
        n = x.shape[0]
        h = torch.relu(self.n1(self.c1(x, maps, n)))
        h = self.n2(self.c2(h, maps, n))
        return torch.relu(h + (self.skip(x) if self.skip is not None else x))


class _MinkUNet(torch.nn.Module):
    """MinkUNet-18 as in SPVNAS/torchsparse: a stem of two 3x3x3 convs, 4 encoder stages (a kernel-2 stride-2 conv
    and two residual blocks: 32-64-128-256), 4 decoder stages (a kernel-2 stride-2 transposed conv, the skip
    concatenated, two residual blocks: 256-128-96-96), a linear classifier."""

    def __init__(self, cin, classes, cs=(32, 32, 64, 128, 256, 256, 128, 96, 96)):
        super().__init__()
        nn = torch.nn
        self.stem = nn.ModuleList([_SpConv(cin, cs[0]), nn.BatchNorm1d(cs[0]), _SpConv(cs[0], cs[0]),
                                   nn.BatchNorm1d(cs[0])])
        self.down = nn.ModuleList(_SpConv(cs[i], cs[i], 8) for i in range(4))
        self.down_n = nn.ModuleList(nn.BatchNorm1d(cs[i]) for i in range(4))
        self.enc = nn.ModuleList(nn.ModuleList([_SpBlock(cs[i], cs[i + 1]), _SpBlock(cs[i + 1], cs[i + 1])])
                                 for i in range(4))
        self.up = nn.ModuleList(_SpConv(cs[4 + i], cs[5 + i], 8) for i in range(4))
        self.up_n = nn.ModuleList(nn.BatchNorm1d(cs[5 + i]) for i in range(4))
        self.dec = nn.ModuleList(nn.ModuleList([_SpBlock(cs[5 + i] + cs[3 - i], cs[5 + i]),
                                                _SpBlock(cs[5 + i], cs[5 + i])]) for i in range(4))
        self.head = nn.Linear(cs[8], classes)

    def forward(self, x, levels):
        """levels: per level (submanifold maps, down maps to the next level, voxel count), finest first."""
        maps0 = levels[0][0]
        n0 = x.shape[0]
        x = torch.relu(self.stem[1](self.stem[0](x, maps0, n0)))
        x = torch.relu(self.stem[3](self.stem[2](x, maps0, n0)))
        skips = [x]
        for i in range(4):
            x = torch.relu(self.down_n[i](self.down[i](x, levels[i][1], levels[i + 1][2], -1)))
            for blk in self.enc[i]:
                x = blk(x, levels[i + 1][0])
            skips.append(x)
        for i in range(4):
            lvl = 3 - i
            fine = [(o, r) for r, o in levels[lvl][1]]  # the transposed conv: coarse rows in, fine rows out
            x = torch.relu(self.up_n[i](self.up[i](x, fine, levels[lvl][2], -1)))
            x = torch.cat([x, skips[lvl]], 1)
            for blk in self.dec[i]:
                x = blk(x, levels[lvl][0])
        return self.head(x)


@_workload("LiDAR semantic segmentation training with sparse 3-D convolutions, MinkUNet-18 (SPVNAS/torchsparse layout: 32-32-64-128-256 encoder, 256-128-96-96 decoder, 19 classes, random init) written with a gather, a matmul and an index_add_ per kernel offset (a torch.autograd.Function, forward and backward), as MinkowskiEngine and torchsparse run it with kernels of their own: SemanticKITTI-like scans of 40k-120k points (log-uniform) made on the device (ground returns denser near the sensor, 30-90 box-shaped objects, an intensity channel), batches of 2-4 scans (at most 320k points), augmented on the device (rotation about z, scaling 0.95-1.05, a random flip), voxelized at 5 cm (torch.unique of packed int64 keys with the inverse, features averaged per voxel by index_add_, a label per voxel); at each of the 5 levels the 26 off-centre kernel maps by searchsorted over the sorted keys, and the stride-2 maps by unique of the halved coordinates, rebuilt every step; cross-entropy over voxels, SGD (momentum 0.9, Nesterov, weight decay 1e-4, lr 0.24 with cosine decay), fp32, 42 steps; every 21 steps a no_grad evaluation of 2 scans, the predictions devoxelized to the points and per-class IoU by bincount read back")
def sparse_conv_seg(rng):
    f = torch.nn.functional
    classes, voxel = 19, 0.05
    model = _MinkUNet(4, classes).cuda()
    steps = _smoke(42, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.24, momentum=0.9, nesterov=True, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)

    def scan(n):
        """A LiDAR-like scan of n points made on the device: points (n, 4) (x, y, z, intensity), labels (n,)."""
        ng = int(0.55 * n)
        r = torch.exp(torch.empty(ng, device="cuda").uniform_(math.log(2.5), math.log(50)))
        th = torch.rand(ng, device="cuda") * 2 * math.pi
        ground = torch.stack([r * th.cos(), r * th.sin(), -1.7 + 0.03 * torch.randn(ng, device="cuda")], 1)
        k = rng.randint(30, 90)
        rc = torch.exp(torch.empty(k, device="cuda").uniform_(math.log(4), math.log(40)))
        tc = torch.rand(k, device="cuda") * 2 * math.pi
        ext = torch.rand(k, 3, device="cuda") * torch.tensor([2.2, 2.2, 2.5], device="cuda") + 0.3
        centre = torch.stack([rc * tc.cos(), rc * tc.sin(), -1.7 + ext[:, 2] / 2], 1)
        which = torch.randint(0, k, (n - ng,), device="cuda")
        objects = centre[which] + (torch.rand(n - ng, 3, device="cuda") - 0.5) * ext[which]
        pts = torch.cat([torch.cat([ground, objects]), torch.rand(n, 1, device="cuda")], 1)
        return pts, torch.cat([(r > 12).long(), 2 + which % (classes - 2)])

    def voxelize(scans, augment):
        """Voxel features, voxel labels, the point-to-voxel inverse, the point labels, and the levels' maps."""
        coords, feats, labels = [], [], []
        for i, (pts, lab) in enumerate(scans):
            xyz = pts[:, :3]
            if augment:
                a = rng.uniform(0, 2 * math.pi)
                rot = torch.tensor([[math.cos(a), -math.sin(a), 0.0], [math.sin(a), math.cos(a), 0.0], [0.0, 0.0, 1.0]],
                                   device="cuda")
                xyz = xyz @ rot.T * rng.uniform(0.95, 1.05)
                if rng.random() < 0.5:
                    xyz = xyz * torch.tensor([-1.0, 1.0, 1.0], device="cuda")
            c = (xyz / voxel).floor().long() + _SHIFT
            coords.append(torch.cat([torch.full_like(c[:, :1], i), c], 1))
            feats.append(torch.cat([xyz, pts[:, 3:]], 1))
            labels.append(lab)
        coords, feats, labels = torch.cat(coords), torch.cat(feats), torch.cat(labels)
        keys, inv = torch.unique(_vkeys(coords), return_inverse=True)
        m = keys.shape[0]
        count = torch.zeros(m, device="cuda").index_add_(0, inv, torch.ones_like(feats[:, 0]))
        vfeat = torch.zeros(m, 4, device="cuda").index_add_(0, inv, feats) / count[:, None]
        vlab = torch.zeros(m, dtype=torch.long, device="cuda").scatter_(0, inv, labels)
        vcoords = torch.stack([keys >> 48, (keys >> 32) & 0xFFFF, (keys >> 16) & 0xFFFF, keys & 0xFFFF], 1)
        levels = []
        for lvl in range(5):
            sub, down, n = _subm_maps(keys), None, keys.shape[0]
            if lvl < 4:
                vcoords, keys, down = _down_maps(vcoords)
            levels.append((sub, down, n))
        return vfeat, vlab, inv, labels, levels

    lo, hi, cap = _smoke(40_000, 2000), _smoke(120_000, 6000), _smoke(320_000, 16_000)
    # About 7.8k tensors a step (counted on CPU: 34 submanifold convs of 26 offsets, 2 tensors an offset forward and
    # 3 backward, the 5 levels' maps about 900, BatchNorm and SGD the rest) and 3.3k an evaluation: 42 steps and 2
    # evaluations make about 0.33M tensors, 0.67M events.
    for step in range(steps):
        ns = [_loguniform(rng, lo, hi) for _ in range(rng.randint(2, 4))]
        while sum(ns) > cap:
            ns.pop()
        vfeat, vlab, _, _, levels = voxelize([scan(n) for n in ns], True)
        loss = f.cross_entropy(model(vfeat, levels), vlab)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        sched.step()
        del vfeat, vlab, levels, loss
        if (step + 1) % _smoke(21, 2) == 0:
            model.eval()
            with torch.no_grad():
                vfeat, _, inv, plab, levels = voxelize([scan(_loguniform(rng, lo, hi)) for _ in range(2)], False)
                pred = model(vfeat, levels).argmax(-1)[inv]
                conf = torch.bincount(plab * classes + pred, minlength=classes * classes).view(classes, classes)
                (conf.diagonal() / (conf.sum(0) + conf.sum(1) - conf.diagonal()).clamp_min(1)).tolist()
                del vfeat, inv, plab, levels, pred, conf
            model.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- heavy-hitter KV-cache eviction (H2O)


@_workload("long-context LLM generation under a KV-cache budget with heavy-hitter eviction, H2O (Zhang et al. 2023), written by hand over an HF LlamaForCausalLM's weights (hidden 1024, 12 layers, GQA 16/4 heads of 64, MLP 2816, vocab 32000, random init) in bf16 under inference_mode; 6 batches one after another of 1-8 prompts (log-uniform) of 1k-8k tokens (log-uniform, multiples of 256, batch x prompt at most 16k tokens) with a cache budget of 10%, 20% or 40% of the prompt (drawn per batch), half heavy hitters and half the recent window; the prefill attention computed explicitly in query chunks of 512 (scores in fp32, causal mask, softmax, probabilities times values), the attention each key receives summed over its query-head group and the chunk's queries into an accumulated score per (row, KV head, position); after the prefill each layer's cache cut to the top heavy-hitter keys of the non-recent part (topk, in order) plus the recent window (gather); then greedy decoding of 48-128 new tokens (uniform): each step and layer the new key and value concatenated to the cache, explicit attention over it, the accumulated scores extended and updated, and the key with the lowest accumulated score outside the recent window evicted per (row, KV head) (the cache, values and scores gathered to the budget again, a new tensor each every step); the tokens read back every step")
def h2o_kv_evict(rng):
    from transformers import LlamaConfig, LlamaForCausalLM

    d, layers, heads, kvh = _smoke(1024, 128), _smoke(12, 12), 16, 4
    dh, group = d // heads, heads // kvh
    cfg = LlamaConfig(hidden_size=d, intermediate_size=_smoke(2816, 256), num_hidden_layers=layers,
                      num_attention_heads=heads, num_key_value_heads=kvh, vocab_size=32000,
                      max_position_embeddings=16384)
    lm = LlamaForCausalLM(cfg).to("cuda", torch.bfloat16).eval()
    rope, scale = _b.rec._rope, 1 / math.sqrt(dh)
    chunk, unit = _smoke(512, 32), _smoke(256, 16)
    cos, sin = _rope_tables(dh, _smoke(8192, 512) + 256, 10000.0)

    def qkv(layer, x, c, s):
        """Queries (b, kvh, group, t, dh), keys and values (b, kvh, t, dh) of x (b, t, d), keys and queries rotated."""
        a, b, t = layer.self_attn, x.shape[0], x.shape[1]
        h = layer.input_layernorm(x)
        q = rope(a.q_proj(h).view(b, t, heads, dh), c, s).view(b, t, kvh, group, dh).permute(0, 2, 3, 1, 4)
        k = rope(a.k_proj(h).view(b, t, kvh, dh), c, s).transpose(1, 2)
        return q, k, a.v_proj(h).view(b, t, kvh, dh).transpose(1, 2)

    def finish(layer, x, o):
        """The layer's output from the attention output o (b, kvh, group, t, dh)."""
        b, t = x.shape[0], x.shape[1]
        x = x + layer.self_attn.o_proj(o.permute(0, 3, 1, 2, 4).reshape(b, t, d))
        return x + layer.mlp(layer.post_attention_layernorm(x))

    def prefill(ids, heavy, recent):
        b, t = ids.shape
        x, caches = lm.model.embed_tokens(ids), []
        c, s = cos[:t, None], sin[:t, None]
        causal = torch.full((chunk, chunk), float("-inf"), device="cuda").triu_(1)
        for layer in lm.model.layers:
            q, k, v = qkv(layer, x, c, s)
            acc = torch.zeros(b, kvh, t, device="cuda")
            outs = []
            for lo in range(0, t, chunk):
                hi = min(t, lo + chunk)
                sc = (q[:, :, :, lo:hi] @ k[:, :, None, :hi].transpose(-1, -2)).float() * scale
                sc[..., lo:] += causal[: hi - lo, : hi - lo]
                p = sc.softmax(-1)
                outs.append(p.to(torch.bfloat16) @ v[:, :, None, :hi])
                acc[..., :hi] += p.sum((2, 3))
                del sc, p
            x = finish(layer, x, torch.cat(outs, 3))
            keep = acc[..., : t - recent].topk(heavy, -1).indices.sort(-1).values
            keep = torch.cat([keep, torch.arange(t - recent, t, device="cuda").expand(b, kvh, recent)], -1)
            idx = keep[..., None].expand(-1, -1, -1, dh)
            caches.append([k.gather(2, idx), v.gather(2, idx), acc.gather(2, keep)])
            del q, k, v, acc, outs, keep, idx
        return lm.lm_head(lm.model.norm(x[:, -1:])).argmax(-1), caches

    def decode(tok, pos, caches, recent):
        x = lm.model.embed_tokens(tok)
        c, s = cos[pos: pos + 1, None], sin[pos: pos + 1, None]
        for layer, cache in zip(lm.model.layers, caches):
            q, k, v = qkv(layer, x, c, s)
            keys, vals = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
            p = ((q @ keys[:, :, None].transpose(-1, -2)).float() * scale).softmax(-1)
            x = finish(layer, x, p.to(torch.bfloat16) @ vals[:, :, None])
            acc = torch.cat([cache[2], torch.zeros_like(cache[2][..., :1])], -1) + p.sum((2, 3))
            budget = cache[2].shape[-1]
            evict = acc[..., : budget + 1 - recent].argmin(-1, keepdim=True)
            ar = torch.arange(budget, device="cuda")
            keep = ar + (ar >= evict).long()  # every position but the evicted one, in order
            idx = keep[..., None].expand(-1, -1, -1, dh)
            cache[:] = [keys.gather(2, idx), vals.gather(2, idx), acc.gather(2, keep)]
            del q, k, v, keys, vals, p, acc, evict, keep, idx
        return lm.lm_head(lm.model.norm(x)).argmax(-1)

    # About 610 tensors a decoded token (counted on CPU at 12 layers: about 50 a layer) and about 1.7k a batch's
    # prefill at full length (16 chunks): 6 batches of 88 new tokens on average make about 0.33M tensors, 0.66M events.
    with torch.inference_mode():
        for _ in range(_smoke(6, 2)):
            b = _loguniform(rng, 1, 8)
            t = min(_loguniform(rng, 4, 32) * unit, _smoke(16384, 1024) // b // unit * unit)
            ratio = rng.choice((0.1, 0.2, 0.4))
            heavy = recent = max(1, int(t * ratio / 2))
            new = rng.randint(_smoke(48, 3), _smoke(128, 5))
            ids = torch.randint(0, cfg.vocab_size, (b, t), device="cuda")
            tok, caches = prefill(ids, heavy, recent)
            for i in range(new):
                tok.tolist()
                tok = decode(tok, t + i, caches, recent)
            del ids, tok, caches
    torch.cuda.synchronize()


# ---------------------------------------------------------------- growing neural cellular automata


@_workload("neural cellular automata training, Growing NCA (Mordvintsev et al. 2020) with a sample pool and regeneration training, as the PyTorch ports of the Distill notebook do it: 16-channel cell states (RGBA and 12 hidden channels), perception by a fixed depthwise 3x3 conv (identity, Sobel x and y: 48 channels), an update rule of two 1x1 convs 48-128-16 (ReLU, the last zero-initialized), stochastic updates (fire rate 0.5, a fresh mask every step), alive masking by a 3x3 max-pool of alpha > 0.1 before and after; 2 runs one after another, each a random 32-56 px RGBA target (soft blobs made on the device, premultiplied alpha, padded by 16 on every side) with a model, Adam (lr 2e-3) and a pool of 1024 states of its own (seeded by one live cell); 40 steps a run, each a batch of 8 drawn from the pool, sorted by loss, the worst replaced by the seed and, in the second half (regeneration), the 3 best damaged by random circles; rollouts of 64-96 steps (uniform, drawn per step) backpropagated through entirely, checkpointed every 8 steps (torch.utils.checkpoint, non-reentrant, the update masks' RNG replayed), L2 loss on RGBA, per-parameter gradient normalization, fp32; the final states written back to the pool, the loss read back every 10 steps")
def nca_grow(rng):
    from torch.utils.checkpoint import checkpoint

    f, nn = torch.nn.functional, torch.nn
    ch, hidden, batch, pool_n = 16, _smoke(128, 32), 8, _smoke(1024, 16)
    ident = torch.tensor([[0.0, 0, 0], [0, 1, 0], [0, 0, 0]])
    sobel = torch.tensor([[-1.0, 0, 1], [-2, 0, 2], [-1, 0, 1]]) / 8
    kernel = torch.stack([ident, sobel, sobel.T]).repeat(ch, 1, 1)[:, None].to("cuda")  # (3 ch, 1, 3, 3)

    def target_image(size):
        yy, xx = torch.meshgrid(torch.linspace(-1, 1, size, device="cuda"), torch.linspace(-1, 1, size, device="cuda"),
                                indexing="ij")
        rgb, alpha = torch.zeros(3, size, size, device="cuda"), torch.zeros(size, size, device="cuda")
        for _ in range(rng.randint(3, 6)):
            cx, cy, r = rng.uniform(-0.5, 0.5), rng.uniform(-0.5, 0.5), rng.uniform(0.2, 0.5)
            blob = torch.sigmoid((r - ((xx - cx) ** 2 + (yy - cy) ** 2).sqrt()) * 20)
            rgb = rgb * (1 - blob) + torch.rand(3, 1, 1, device="cuda") * blob
            alpha = torch.maximum(alpha, blob)
        return f.pad(torch.cat([rgb * alpha, alpha[None]]), (16, 16, 16, 16))

    # About 4k tensors a training step (counted on CPU with full-length rollouts: about 49 a CA step, its checkpointed
    # forward, recomputation and backward; 80 steps on average): 2 runs of 40 steps make about 0.32M tensors, 0.63M
    # events.
    for _ in range(_smoke(2, 1)):
        target = target_image(rng.choice((32, 40, 48, 56)) if not _smoke(0, 1) else 16)
        grid = target.shape[-1]
        seed = torch.zeros(ch, grid, grid, device="cuda")
        seed[3:, grid // 2, grid // 2] = 1
        pool = seed.repeat(pool_n, 1, 1, 1)
        w1, w2 = nn.Conv2d(3 * ch, hidden, 1).cuda(), nn.Conv2d(hidden, ch, 1, bias=False).cuda()
        nn.init.zeros_(w2.weight)
        params = list(w1.parameters()) + list(w2.parameters())
        opt = torch.optim.Adam(params, lr=2e-3)

        def segment(x, n):
            for _ in range(n):
                pre = f.max_pool2d(x[:, 3:4], 3, 1, 1) > 0.1
                dx = w2(torch.relu(w1(f.conv2d(x, kernel, padding=1, groups=ch))))
                x = x + dx * (torch.rand(x.shape[0], 1, grid, grid, device="cuda") <= 0.5)
                x = x * (pre & (f.max_pool2d(x[:, 3:4], 3, 1, 1) > 0.1))
            return x

        steps = _smoke(40, 2)
        ar = torch.linspace(-1, 1, grid, device="cuda")
        for it in range(steps):
            idx = torch.randperm(pool_n, device="cuda")[:batch]
            with torch.no_grad():
                x = pool[idx]
                order = (x[:, :4] - target).pow(2).mean((1, 2, 3)).argsort(descending=True)
                idx, x = idx[order], x[order]
                x[0] = seed
                if it >= steps // 2:
                    c, r = torch.rand(3, 2, 1, 1, device="cuda") - 0.5, torch.rand(3, 1, 1, device="cuda") * 0.3 + 0.1
                    keep = (ar[None, None, :] - c[:, 0]) ** 2 + (ar[None, :, None] - c[:, 1]) ** 2 > r ** 2
                    x[-3:] *= keep[:, None]
                    del c, r, keep
            n = rng.randint(_smoke(64, 6), _smoke(96, 10))
            for lo in range(0, n, 8):
                x = checkpoint(segment, x, min(8, n - lo), use_reentrant=False)
            loss = (x[:, :4] - target).pow(2).mean()
            loss.backward()
            with torch.no_grad():
                for p in params:
                    p.grad /= p.grad.norm() + 1e-8
            opt.step()
            opt.zero_grad(set_to_none=True)
            pool[idx] = x.detach()
            if it % 10 == 0:
                float(loss.detach())
            del idx, x, order, loss
    torch.cuda.synchronize()

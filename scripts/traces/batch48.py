"""The forty-eighth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch47_b.py are): combinatorial optimization, operations research and optimal transport on the GPU, written in
torch alone, first half. POMO training of an attention model for the travelling salesman problem (Kwon et al.
2020: a 6-layer encoder, a decoder that builds every multi-start tour step by step, REINFORCE with the shared
multi-start baseline; instance sizes drawn per epoch, batches shrinking as the size grows, greedy multi-start
evaluation with 8-fold augmentation), a batched first-order LP solver in the manner of PDLP (Applegate et al. 2021:
Ruiz equilibration, a power-iteration step size, primal-dual hybrid gradient iterations with averaging, restarts to
the average or the current iterate chosen per instance on device, primal-weight updates; dense batched and sparse
COO instances of different shapes), a GCNN branching policy for MILP trained by imitation (Gasse et al. 2019:
bipartite variable-constraint graph convolutions over batches of samples from four instance families of
different sizes, candidate logits padded per sample, a held-out evaluation of top-1 and top-5 accuracy), and a
point-cloud autoencoder trained with a Sinkhorn-divergence loss (log-domain Sinkhorn with epsilon scaling as in
GeomLoss, a last differentiable extrapolation step; target clouds uploaded on a side stream; Wasserstein
barycenters computed as an evaluation). Same conventions as the earlier batches: nothing downloaded, data drawn at
random on the device, `rng` the workload's random.Random for every shape, count and sampled choice, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: iteration
counts, restart points and tour lengths are fixed on the host (no convergence test read back; restarts choose
per instance with torch.where), masks are additive or multiply (boolean-mask indexing is avoided); losses, KKT
errors, tour lengths and accuracies are read back only at logging points. sinkhorn_pc_autoencode uses a side
stream (uploads waited on by event, the tensors record_stream'ed); the others are single-stream. pomo_tsp_train
and sinkhorn_pc_autoencode run their networks under bf16 autocast (Sinkhorn itself in fp32); the LP solver and
the GCNN are fp32, as they are usually run.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch48_b.py's header says the same of its half): every workload of this
half was run whole at its final real sizes (RECORD_SMOKE unset) on PyTorch's meta device with the helper's runner
(/tmp/b48/meta_run.py, not committed, a copy of batch 47's: smoke_cpu.py's patching with "cuda" mapped to "meta",
readbacks answered with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking a math path, streams,
events and pinned memory no-ops; boolean-mask indexing, which the meta device cannot size, is avoided), its op
outputs counted there (events about 1.8x that count) and its peak live bytes tracked: pomo_tsp_train 316,186
op outputs, peak 2.66 GB; pdhg_lp_batch 311,551, 1.37 GB; gcnn_branch_imitate 320,234, 1.80 GB;
sinkhorn_pc_autoencode 321,300, 2.25 GB (record_new48.sh's header has them too, with the first runs that led to
resizes). The CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional


# ---------------------------------------------------------------- POMO for the TSP


class _PomoEncoder(torch.nn.Module):
    """The attention model's encoder (Kool et al. 2019) as POMO uses it: a linear embedding of the coordinates,
    then layers of multi-head self-attention and a ReLU feed-forward block, each residual with instance norm."""

    def __init__(self, din, d, layers, heads, ff):
        super().__init__()
        self.heads = heads
        self.inp = torch.nn.Linear(din, d)
        self.qkv = torch.nn.ModuleList([torch.nn.Linear(d, 3 * d, bias=False) for _ in range(layers)])
        self.out = torch.nn.ModuleList([torch.nn.Linear(d, d) for _ in range(layers)])
        self.n1 = torch.nn.ModuleList([torch.nn.InstanceNorm1d(d, affine=True) for _ in range(layers)])
        self.ff = torch.nn.ModuleList([torch.nn.Sequential(torch.nn.Linear(d, ff), torch.nn.ReLU(),
                                                           torch.nn.Linear(ff, d)) for _ in range(layers)])
        self.n2 = torch.nn.ModuleList([torch.nn.InstanceNorm1d(d, affine=True) for _ in range(layers)])

    def forward(self, x):
        h = self.inp(x)
        b, n, d = h.shape
        for qkv, out, n1, ff, n2 in zip(self.qkv, self.out, self.n1, self.ff, self.n2):
            q, k, v = qkv(h).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
            a = _F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, d)
            h = n1((h + out(a)).transpose(1, 2)).transpose(1, 2)
            h = n2((h + ff(h)).transpose(1, 2)).transpose(1, 2)
        return h


class _PomoDecoder(torch.nn.Module):
    """POMO's TSP decoder: the query from the first and the last node of each partial tour, a multi-head glimpse
    over the unvisited nodes, a single-head compatibility clipped by 10 tanh."""

    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.wq_first = torch.nn.Linear(d, d, bias=False)
        self.wq_last = torch.nn.Linear(d, d, bias=False)
        self.wkv = torch.nn.Linear(d, 2 * d, bias=False)
        self.comb = torch.nn.Linear(d, d)

    def setup(self, h):
        b, n, d = h.shape
        k, v = self.wkv(h).view(b, n, 2, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        return k, v

    def step(self, h, kv, q_first, last, mask):
        b, n, d = h.shape
        p = last.shape[1]
        hl = h.gather(1, last[..., None].expand(b, p, d))
        q = (q_first + self.wq_last(hl)).view(b, p, self.heads, d // self.heads).transpose(1, 2)
        g = _F.scaled_dot_product_attention(q, kv[0], kv[1], attn_mask=mask[:, None].to(q.dtype))
        mh = self.comb(g.transpose(1, 2).reshape(b, p, d))
        score = torch.matmul(mh, h.transpose(1, 2)) / math.sqrt(d)
        return torch.log_softmax((10 * torch.tanh(score)).float() + mask, -1)


def _pomo_rollout(enc, dec, xy, starts, greedy):
    """Every multi-start tour of a batch built node by node: returns the tours' lengths and summed log-probs."""
    h = enc(xy)
    b, n, _ = h.shape
    p = starts
    kv = dec.setup(h)
    first = torch.arange(p, device="cuda")[None].expand(b, p)
    q_first = dec.wq_first(h.gather(1, first[..., None].expand(b, p, h.shape[2])))
    mask = torch.zeros(b, p, n, device="cuda").scatter(2, first[..., None], float("-inf"))
    last, tour, logp = first, [first], []
    for _ in range(n - 1):
        lp = dec.step(h, kv, q_first, last, mask)
        if greedy:
            sel = lp.argmax(-1)
        else:
            sel = torch.multinomial(lp.exp().view(b * p, n), 1).view(b, p)
            logp.append(lp.gather(2, sel[..., None])[..., 0])
        mask = mask.scatter(2, sel[..., None], float("-inf"))
        tour.append(sel)
        last = sel
    tour = torch.stack(tour, 2)
    pts = xy[..., :2].gather(1, tour.view(b, p * n, 1).expand(b, p * n, 2)).view(b, p, n, 2)
    length = (pts - pts.roll(-1, 2)).norm(dim=-1).sum(-1)
    return length, (torch.stack(logp, 2).sum(-1) if logp else None)


def _augment8(xy):
    """POMO's 8-fold instance augmentation: the unit square's reflections and the swap of x and y."""
    x, y = xy[..., :1], xy[..., 1:2]
    outs = [torch.cat(t, -1) for t in ((x, y), (1 - x, y), (x, 1 - y), (1 - x, 1 - y),
                                       (y, x), (1 - y, x), (y, 1 - x), (1 - y, 1 - x))]
    return torch.cat(outs, 0)


@_workload("neural combinatorial optimization, POMO (Kwon et al. 2020) for the travelling salesman problem written by hand (random init): an attention-model encoder (embedding 128, 6 layers of 8-head self-attention and a 512-wide ReLU feed-forward block, instance norm) and POMO's decoder (query from the first and last node, a masked 8-head glimpse, a single-head compatibility clipped by 10 tanh, visited nodes masked additively); 10 epochs, each at an instance size drawn from 20-100 nodes, 6 steps of a batch sized to the instance (64 down to 32 instances, uniform random coordinates made on the device) with every node a start (N x N partial tours decoded in parallel for N - 1 steps, nodes sampled by multinomial), REINFORCE with the shared multi-start mean as baseline, bf16 autocast, Adam with weight decay, gradient clipping 1; after each epoch a greedy multi-start evaluation without grad on 64 held-out instances of a size drawn from 50-150 nodes with 8-fold augmentation (512 augmented instances), the best tour per instance taken over starts and augmentations and the mean length read back")
def pomo_tsp_train(rng):
    d = _smoke(128, 16)
    enc = _PomoEncoder(2, d, _smoke(6, 2), 8, _smoke(512, 32)).cuda()
    dec = _PomoDecoder(d, 8).cuda()
    params = list(enc.parameters()) + list(dec.parameters())
    opt = torch.optim.Adam(params, lr=1e-4, weight_decay=1e-6)
    for epoch in range(_smoke(10, 2)):
        n = rng.randint(_smoke(20, 5), _smoke(100, 8))
        bsz = max(32, min(64, (_smoke(32_000_000, 4096) // n ** 3) // 8 * 8))
        for _ in range(_smoke(6, 2)):
            xy = torch.rand(bsz, n, 2, device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                length, logp = _pomo_rollout(enc, dec, xy, n, greedy=False)
            adv = length - length.mean(1, keepdim=True)
            loss = (adv.detach() * logp).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            del xy, length, logp, adv, loss
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            ne = rng.randint(_smoke(50, 5), _smoke(150, 8))
            xe = torch.rand(_smoke(64, 4), ne, 2, device="cuda")
            le, _ = _pomo_rollout(enc, dec, _augment8(xe), ne, greedy=True)
            best = le.view(8, xe.shape[0], ne).amin(0).amin(1)
            best.mean().cpu()
            del xe, le, best


# ---------------------------------------------------------------- PDLP-style batched LP solver


def _lp_instance(batch, m, n, sparse, density):
    """A batch of feasible, bounded LPs min c^T x s.t. A x (=|>=) b, 0 <= x <= u (u finite on some columns),
    built from a primal-dual pair so that an optimum exists. Dense: A (batch, m, n). Sparse: one COO matrix of
    the block-diagonal batch (rows, cols, values), m and n per block."""
    if sparse:
        nnz = int(batch * m * n * density)
        blk = torch.randint(0, batch, (nnz,), device="cuda")
        rows = blk * m + torch.randint(0, m, (nnz,), device="cuda")
        cols = blk * n + torch.randint(0, n, (nnz,), device="cuda")
        vals = torch.randn(nnz, device="cuda")
        del blk
        A = (rows, cols, vals)
    else:
        A = torch.randn(batch, m, n, device="cuda") * torch.bernoulli(torch.full((batch, m, n), density,
                                                                                device="cuda"))
    ub = torch.where(torch.rand(batch, n, device="cuda") < 0.3, torch.rand(batch, n, device="cuda") * 10 + 1,
                     torch.full((batch, n), float("inf"), device="cuda"))
    xs = torch.rand(batch, n, device="cuda") * torch.bernoulli(torch.full((batch, n), 0.5, device="cuda"))
    xs = torch.minimum(xs, ub)
    ineq = torch.bernoulli(torch.full((batch, m), 0.5, device="cuda"))
    active = torch.bernoulli(torch.full((batch, m), 0.5, device="cuda"))
    ys = torch.randn(batch, m, device="cuda")
    ys = torch.where(ineq > 0, ys.abs() * active, ys)
    slack = torch.rand(batch, m, device="cuda") * ineq * (1 - active)
    return A, ub, xs, ineq, ys, slack


def _lp_ops(A, batch, m, n):
    """The matrix-vector products A x and A^T y for a dense batch or a sparse block-diagonal COO matrix."""
    if isinstance(A, tuple):
        rows, cols, vals = A

        def ax(x):
            return torch.zeros(batch * m, device="cuda").index_add_(0, rows, vals * x.reshape(-1)[cols]).view(
                batch, m)

        def aty(y):
            return torch.zeros(batch * n, device="cuda").index_add_(0, cols, vals * y.reshape(-1)[rows]).view(
                batch, n)
    else:
        def ax(x):
            return torch.bmm(A, x[..., None])[..., 0]

        def aty(y):
            return torch.bmm(A.transpose(1, 2), y[..., None])[..., 0]
    return ax, aty


def _ruiz(A, batch, m, n, iters):
    """Ruiz equilibration: rows and columns scaled by the square roots of their infinity norms, iters times;
    returns the scaled matrix and the accumulated row and column scalings."""
    dr = torch.ones(batch, m, device="cuda")
    dc = torch.ones(batch, n, device="cuda")
    for _ in range(iters):
        if isinstance(A, tuple):
            rows, cols, vals = A
            av = vals.abs()
            r = torch.zeros(batch * m, device="cuda").scatter_reduce_(0, rows, av, "amax").clamp_min(1e-8).sqrt()
            c = torch.zeros(batch * n, device="cuda").scatter_reduce_(0, cols, av, "amax").clamp_min(1e-8).sqrt()
            A = (rows, cols, vals / r[rows] / c[cols])
            r, c = r.view(batch, m), c.view(batch, n)
            del av
        else:
            r = A.abs().amax(2).clamp_min(1e-8).sqrt()
            c = A.abs().amax(1).clamp_min(1e-8).sqrt()
            A = A / r[:, :, None] / c[:, None, :]
        dr, dc = dr / r, dc / c
    return A, dr, dc


def _kkt(ax, aty, c, b, ub, ineq, x, y):
    """Per-instance relative KKT error: primal residual, dual residual after the bound multipliers and the
    duality gap."""
    rp = b - ax(x)
    rp = torch.where(ineq > 0, rp.clamp_min(0), rp)
    red = c - aty(y)
    inf = torch.isinf(ub)
    rd = torch.where(inf, red.clamp_max(0), torch.zeros_like(red))
    dual_obj = (b * y).sum(1) - torch.where(inf, torch.zeros_like(ub), ub * (-red).clamp_min(0)).sum(1)
    gap = (c * x).sum(1) - dual_obj
    return (rp.norm(dim=1) + rd.norm(dim=1) + gap.abs()) / (1 + b.norm(dim=1) + c.norm(dim=1))


@_workload("linear programming with a first-order method, a PDLP-style solver (Applegate et al. 2021) written by hand in torch (fp32): 6 LP jobs one after another, each a batch of instances built from a primal-dual pair (equality and >= rows mixed, some columns with finite upper bounds): dense batches (8-64 instances of 200-2000 rows by 300-3000 columns, 5-100% dense, capped at 160M entries, batched bmm) or one sparse block-diagonal COO batch (8-32 blocks of 2k-40k rows, 2-8 nonzeros a column, index_add_ matrix-vector products); 10 Ruiz equilibration passes (row and column infinity norms, amax by scatter_reduce for COO), a step size from 30 power iterations on A^T A, then 1,600-3,200 primal-dual hybrid gradient iterations (projected primal step onto the bounds, extrapolated dual step projected onto the cone of the >= rows, running averages): every 64 iterations a restart candidate check (relative KKT error of the current and the averaged iterate, the better chosen per instance by torch.where, the averages reset) and a primal-weight update from the movement of the iterates (log-smoothed, per instance); the worst KKT error of the batch read back every 320 iterations, the objectives at the end")
def pdhg_lp_batch(rng):
    for job in range(_smoke(6, 2)):
        sparse = rng.random() < 0.35
        if sparse:
            batch = rng.choice(_smoke([8, 16, 32], [2]))
            m = int(_loguniform(rng, _smoke(2000, 20), _smoke(40000, 40)))
            n = int(m * rng.uniform(1.2, 2.5))
            density = rng.uniform(2, 8) / m
        else:
            batch = rng.choice(_smoke([8, 16, 32, 64], [2, 3]))
            m = int(_loguniform(rng, _smoke(200, 10), _smoke(2000, 20)))
            n = int(m * rng.uniform(1.2, 2.0))
            batch = max(2, min(batch, _smoke(160_000_000, 10 ** 9) // (m * n)))
            density = rng.choice([0.05, 0.2, 0.5, 1.0])
        A, ub, xs, ineq, ys, slack = _lp_instance(batch, m, n, sparse, density)
        ax0, aty0 = _lp_ops(A, batch, m, n)
        b = ax0(xs) - slack  # >= rows with a zero multiplier are slack at x*
        red = torch.rand(batch, n, device="cuda") * (xs == 0)  # reduced costs only where x* sits at 0
        c = aty0(ys) + red
        del ax0, aty0, xs, ys, slack, red
        A, dr, dc = _ruiz(A, batch, m, n, 10)
        b, c, ub = b * dr, c * dc, ub / dc
        ax, aty = _lp_ops(A, batch, m, n)
        v = torch.randn(batch, n, device="cuda")
        for _ in range(30):
            v = aty(ax(v))
            v = v / v.norm(dim=1, keepdim=True).clamp_min(1e-12)
        eta = 0.9 / aty(ax(v)).norm(dim=1, keepdim=True).clamp_min(1e-12).sqrt()
        omega = (c.norm(dim=1, keepdim=True) / b.norm(dim=1, keepdim=True).clamp_min(1e-12)).clamp(1e-3, 1e3)
        x = torch.zeros(batch, n, device="cuda")
        y = torch.zeros(batch, m, device="cuda")
        xsum, ysum = torch.zeros_like(x), torch.zeros_like(y)
        x0, y0 = x, y
        cnt = 0
        iters = rng.randint(_smoke(1600, 4), _smoke(3200, 8))
        zero = torch.zeros_like(ub)
        for it in range(iters):
            tau, sigma = eta / omega, eta * omega
            xn = torch.minimum(torch.maximum(x - tau * (c - aty(y)), zero), ub)
            yn = y + sigma * (b - ax(2 * xn - x))
            yn = torch.where(ineq > 0, yn.clamp_min(0), yn)
            x, y = xn, yn
            xsum, ysum = xsum + x, ysum + y
            cnt += 1
            if (it + 1) % _smoke(64, 2) == 0:
                xa, ya = xsum / cnt, ysum / cnt
                use_avg = (_kkt(ax, aty, c, b, ub, ineq, xa, ya) < _kkt(ax, aty, c, b, ub, ineq, x, y))[:, None]
                x, y = torch.where(use_avg, xa, x), torch.where(use_avg, ya, y)
                dx = (x - x0).norm(dim=1, keepdim=True)
                dy = (y - y0).norm(dim=1, keepdim=True)
                upd = (dx > 1e-10) & (dy > 1e-10)
                new_w = torch.exp(0.5 * (dy.clamp_min(1e-10) / dx.clamp_min(1e-10)).log() + 0.5 * omega.log())
                omega = torch.where(upd, new_w, omega).clamp(1e-4, 1e4)
                x0, y0 = x, y
                xsum, ysum, cnt = torch.zeros_like(x), torch.zeros_like(y), 0
                del xa, ya, use_avg, dx, dy, upd, new_w
            if (it + 1) % _smoke(320, 4) == 0:
                _kkt(ax, aty, c, b, ub, ineq, x, y).max().cpu()
        obj = ((c / dc) * (x * dc)).sum(1)
        obj.cpu()
        del A, ub, ineq, b, c, dr, dc, v, eta, omega, x, y, xsum, ysum, x0, y0, zero, obj, ax, aty


# ---------------------------------------------------------------- GCNN branching policy (Gasse et al. 2019)


class _BipartiteConv(torch.nn.Module):
    """One half-convolution of the bipartite graph: messages from the left nodes along the edges to the right."""

    def __init__(self, d):
        super().__init__()
        self.left = torch.nn.Linear(d, d)
        self.edge = torch.nn.Linear(1, d, bias=False)
        self.right = torch.nn.Linear(d, d, bias=False)
        self.final = torch.nn.Sequential(torch.nn.LayerNorm(d), torch.nn.ReLU(), torch.nn.Linear(d, d))
        self.post = torch.nn.LayerNorm(d)
        self.out = torch.nn.Sequential(torch.nn.Linear(2 * d, d), torch.nn.ReLU(), torch.nn.Linear(d, d))

    def forward(self, left, src, ef, dst, right):
        msg = self.final(self.left(left)[src] + self.edge(ef) + self.right(right)[dst])
        agg = torch.zeros_like(right).index_add_(0, dst, msg.to(right.dtype))
        return self.out(torch.cat([self.post(agg), right], 1))


class _Gcnn(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.cemb = torch.nn.Sequential(torch.nn.LayerNorm(5), torch.nn.Linear(5, d), torch.nn.ReLU(),
                                        torch.nn.Linear(d, d), torch.nn.ReLU())
        self.eemb = torch.nn.LayerNorm(1)
        self.vemb = torch.nn.Sequential(torch.nn.LayerNorm(19), torch.nn.Linear(19, d), torch.nn.ReLU(),
                                        torch.nn.Linear(d, d), torch.nn.ReLU())
        self.v2c = _BipartiteConv(d)
        self.c2v = _BipartiteConv(d)
        self.head = torch.nn.Sequential(torch.nn.Linear(d, d), torch.nn.ReLU(), torch.nn.Linear(d, 1, bias=False))

    def forward(self, cf, ci, ef, vi, vf):
        c, e, v = self.cemb(cf), self.eemb(ef), self.vemb(vf)
        c = self.v2c(v, vi, e, ci, c)
        v = self.c2v(c, ci, e, vi, v)
        return self.head(v)[:, 0]


_MILP_FAMILIES = {  # (rows, columns, density) ranges of the four benchmark families
    "setcover": ((500, 1000), (1000, 1000), (0.05, 0.05)),
    "cauctions": ((200, 400), (1000, 2000), (0.01, 0.03)),
    "facility": ((10_000, 10_200), (10_000, 10_100), (0.0002, 0.0003)),
    "indset": ((1500, 4000), (500, 1500), (0.002, 0.004)),
}


def _milp_graph(rng, family, small):
    (m0, m1), (n0, n1), (d0, d1) = _MILP_FAMILIES[family]
    m, n = rng.randint(m0, m1), rng.randint(n0, n1)
    if small:
        m, n = max(4, m // 200), max(6, n // 200)
    nnz = max(2 * m, int(m * n * rng.uniform(d0, d1)))
    ci = torch.cat([torch.arange(m, device="cuda"), torch.randint(0, m, (nnz - m,), device="cuda")])
    vi = torch.randint(0, n, (nnz,), device="cuda")
    w = torch.randn(nnz, 1, device="cuda")
    return m, n, ci, vi, w


@_workload("learning to branch in mixed-integer programming, the GCNN policy of Gasse et al. 2019 written by hand (random init, fp32): a bipartite graph convolution (constraint features 5, variable features 19, edge coefficients; embeddings 64, a variable-to-constraint then a constraint-to-variable half-convolution with layer norms, messages gathered along the edges and summed by index_add_) scoring every variable; a pool of 120 training and 30 held-out problems drawn at start from four families of different sizes (set cover 500-1000 x 1000, combinatorial auctions, capacitated facility location about 10k x 10k, independent set 1500-4000 x 500-1500), each sample a branch-and-bound node of one problem with fresh node features and 8-120 candidate variables (drawn), its strong-branching expert choice made on the device from a hidden scoring of the features; 520 training steps of 8-32 samples (drawn, cut to 700k edges a batch) collated by concatenation with node offsets, candidate logits gathered and padded per sample (additive mask), cross-entropy, Adam with a step-decayed rate, gradient clipping 1; every 80 steps the held-out samples scored without grad in batches and top-1 and top-5 accuracy read back")
def gcnn_branch_imitate(rng):
    small = _smoke(False, True)
    fams = list(_MILP_FAMILIES)
    pool = [(f,) + _milp_graph(rng, f, small) for f in (rng.choice(fams) for _ in range(_smoke(150, 8)))]
    train, held = pool[:_smoke(120, 6)], pool[_smoke(120, 6):]
    model = _Gcnn(64).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=_smoke(200, 2), gamma=0.5)
    hidden_v = torch.randn(19, device="cuda")

    def collate(samples):
        cfs, vfs, cis, vis, efs, cands, pads, labels = [], [], [], [], [], [], [], []
        kmax = max(k for _, k in samples)
        moff = noff = 0
        for g, k in samples:
            _, m, n, ci, vi, w = g
            cf = torch.randn(m, 5, device="cuda")
            vf = torch.randn(n, 19, device="cuda")
            cand = torch.randperm(n, device="cuda")[:k]
            score = vf[cand] @ hidden_v + 0.3 * torch.randn(k, device="cuda")
            labels.append(score.argmax().view(1))
            cands.append(_F.pad(cand + noff, (0, kmax - k)))
            pads.append(_F.pad(torch.zeros(k, device="cuda"), (0, kmax - k), value=float("-inf")))
            cfs.append(cf)
            vfs.append(vf)
            cis.append(ci + moff)
            vis.append(vi + noff)
            efs.append(w)
            moff += m
            noff += n
            del cand, score
        return (torch.cat(cfs), torch.cat(cis), torch.cat(efs), torch.cat(vis), torch.cat(vfs),
                torch.stack(cands), torch.stack(pads), torch.cat(labels))

    def draw(graphs, bsz):
        samples, edges = [], 0
        for _ in range(bsz):
            g = rng.choice(graphs)
            if samples and edges + g[3].shape[0] > _smoke(700_000, 10 ** 9):
                break
            edges += g[3].shape[0]
            samples.append((g, min(g[2], rng.randint(8, 120))))
        return samples

    for step in range(_smoke(520, 4)):
        cf, ci, ef, vi, vf, cand, pad, label = collate(draw(train, rng.randint(8, 32)))
        logits = model(cf, ci, ef, vi, vf)[cand] + pad
        loss = _F.cross_entropy(logits, label)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        del cf, ci, ef, vi, vf, cand, pad, label, logits, loss
        if (step + 1) % _smoke(80, 2) == 0:
            hits = torch.zeros(2, device="cuda")
            with torch.no_grad():
                for i in range(0, len(held), 10):
                    cf, ci, ef, vi, vf, cand, pad, label = collate([(g, min(g[2], 64)) for g in held[i:i + 10]])
                    logits = model(cf, ci, ef, vi, vf)[cand] + pad
                    top = logits.topk(min(5, logits.shape[1]), 1).indices
                    hits += torch.stack([(top[:, 0] == label).float().sum(),
                                         (top == label[:, None]).any(1).float().sum()])
                    del cf, ci, ef, vi, vf, cand, pad, label, logits, top
            (hits / len(held)).cpu()
            del hits


# ---------------------------------------------------------------- Sinkhorn point-cloud autoencoder


def _lse_update(pot, c, logw, eps):
    """One log-domain Sinkhorn half-step: -eps * logsumexp_j(log w_j + (pot_j - C_ij) / eps)."""
    return -eps * torch.logsumexp(logw[:, None, :] + (pot[:, None, :] - c) / eps, dim=2)


def _sinkhorn_div(x, y, eps_final, scaling, diameter):
    """The debiased Sinkhorn divergence S_eps(x, y) between uniform point clouds (batches of (B, n, d)), computed
    as GeomLoss does: symmetric log-domain iterations under no_grad over a geometric schedule of epsilons from the
    diameter down to eps_final, then one differentiable extrapolation step at eps_final."""
    bsz, n, _ = x.shape
    logw = torch.full((bsz, n), -math.log(n), device="cuda")
    steps = max(2, int(math.log(diameter / eps_final) / -math.log(scaling)) + 1)
    eps_list = [diameter * scaling ** i for i in range(steps)] + [eps_final]
    with torch.no_grad():
        cxy = torch.cdist(x, y).pow_(2).div_(2)
        cxx = torch.cdist(x, x).pow_(2).div_(2)
        cyy = torch.cdist(y, y).pow_(2).div_(2)
        cyx = cxy.transpose(1, 2)
        f = _lse_update(torch.zeros_like(logw), cxy, logw, eps_list[0])
        g = _lse_update(torch.zeros_like(logw), cyx, logw, eps_list[0])
        p = _lse_update(torch.zeros_like(logw), cxx, logw, eps_list[0])
        q = _lse_update(torch.zeros_like(logw), cyy, logw, eps_list[0])
        for eps in eps_list:
            ft, gt = _lse_update(g, cxy, logw, eps), _lse_update(f, cyx, logw, eps)
            pt, qt = _lse_update(p, cxx, logw, eps), _lse_update(q, cyy, logw, eps)
            f, g, p, q = (f + ft) / 2, (g + gt) / 2, (p + pt) / 2, (q + qt) / 2
            del ft, gt, pt, qt
        del cxy, cxx, cyy, cyx
    # the last extrapolation with grad: costs rebuilt from the differentiable clouds
    eps = eps_final
    cxy = torch.cdist(x, y.detach()).pow(2) / 2
    cxx = torch.cdist(x, x.detach()).pow(2) / 2
    f = _lse_update(g, cxy, logw, eps)
    p = _lse_update(p, cxx, logw, eps)
    return (f - p).mean(1) + (g - q).mean(1)


class _FoldingAE(torch.nn.Module):
    """A PointNet encoder (shared MLP, max pool) and a two-stage folding decoder (Yang et al. 2018) that deforms
    a 2D grid of n points into a 3D cloud conditioned on the code."""

    def __init__(self, code):
        super().__init__()
        self.enc = torch.nn.Sequential(torch.nn.Linear(3, 64), torch.nn.ReLU(), torch.nn.Linear(64, 128),
                                       torch.nn.ReLU(), torch.nn.Linear(128, code))
        self.fold1 = torch.nn.Sequential(torch.nn.Linear(code + 2, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                         torch.nn.ReLU(), torch.nn.Linear(512, 3))
        self.fold2 = torch.nn.Sequential(torch.nn.Linear(code + 3, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                         torch.nn.ReLU(), torch.nn.Linear(512, 3))

    def encode(self, x):
        return self.enc(x).amax(1)

    def decode(self, z, n):
        s = int(math.ceil(math.sqrt(n)))
        g = torch.linspace(-1, 1, s, device="cuda")
        grid = torch.stack(torch.meshgrid(g, g, indexing="ij"), -1).view(-1, 2)[:n]
        zc = z[:, None].expand(z.shape[0], n, z.shape[1])
        p1 = self.fold1(torch.cat([zc, grid[None].expand(z.shape[0], n, 2).to(zc.dtype)], -1))
        return self.fold2(torch.cat([zc, p1], -1))


@_workload("point-cloud generation with optimal transport, a FoldingNet-style autoencoder (PointNet encoder with max pooling, a 512-dim code, a two-stage folding decoder of a 2D grid; random init) trained with the debiased Sinkhorn divergence as its reconstruction loss, log-domain Sinkhorn written by hand as GeomLoss computes it (fp32): 360 steps, each a batch of 4-32 target clouds of 1024-4096 points (drawn, batch cut to 64M cost entries) from reused pinned host buffers uploaded on a side stream one step ahead (waited on by event, record_stream'ed), randomly rotated on the device; the network under bf16 autocast; per step the three cost matrices (x-y, x-x, y-y by cdist), symmetric log-domain Sinkhorn updates by logsumexp under no_grad over an epsilon-scaling schedule from the diameter down to 0.01-0.05 (scaling 0.7-0.85 drawn, 13-38 scales), then one differentiable extrapolation step, Adam; every 70 steps an evaluation: the mean Sinkhorn divergence on held-out clouds read back and a free-support Wasserstein barycenter of 4-8 encoded-decoded clouds (10 fixed-point updates, each batched log-domain Sinkhorn to every input cloud, the plans' barycentric projections averaged)")
def sinkhorn_pc_autoencode(rng):
    model = _FoldingAE(_smoke(512, 16)).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=2e-4)
    bmax, nmax = _smoke(32, 4), _smoke(4096, 64)
    host = [torch.randn(bmax * nmax * 3).pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    done = [None, None]

    def fetch(i):
        n = rng.choice(_smoke([1024, 2048, 3072, 4096], [32, 64]))
        bsz = max(2, min(rng.choice(_smoke([4, 8, 16, 32], [2, 4])), _smoke(64_000_000, 10 ** 9) // (n * n)))
        s = i % 2
        if done[s] is not None:
            done[s].synchronize()
        with torch.cuda.stream(side):
            x = host[s][:bsz * n * 3].view(bsz, n, 3).to("cuda", non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        done[s] = ev
        return x, ev

    def rotate(x):
        a = torch.rand(x.shape[0], 3, device="cuda") * 2 * math.pi
        ca, sa = a.cos(), a.sin()
        o, z = torch.ones_like(ca[:, 0]), torch.zeros_like(ca[:, 0])
        rz = torch.stack([ca[:, 0], -sa[:, 0], z, sa[:, 0], ca[:, 0], z, z, z, o], 1).view(-1, 3, 3)
        ry = torch.stack([ca[:, 1], z, sa[:, 1], z, o, z, -sa[:, 1], z, ca[:, 1]], 1).view(-1, 3, 3)
        return x @ (rz @ ry)

    nxt = fetch(0)
    for step in range(_smoke(360, 3)):
        x, ev = nxt
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        x.record_stream(cur)
        nxt = fetch(step + 1)
        tgt = rotate(x * 0.5)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            rec = model.decode(model.encode(tgt), tgt.shape[1])
        loss = _sinkhorn_div(rec.float(), tgt, rng.uniform(0.01, 0.05), rng.uniform(0.7, 0.85), 4.0).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del x, tgt, rec, loss
        if (step + 1) % _smoke(70, 2) == 0:
            with torch.no_grad():
                held = rotate(torch.randn(_smoke(8, 2), _smoke(2048, 32), 3, device="cuda") * 0.5)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    rec = model.decode(model.encode(held), held.shape[1]).float()
                _sinkhorn_div(rec, held, 0.02, 0.8, 4.0).mean().cpu()
                k = rng.randint(4, 8)
                clouds = rec[:1].expand(k, rec.shape[1], 3) + 0.05 * torch.randn(k, rec.shape[1], 3, device="cuda")
                nb = clouds.shape[1]
                bary = torch.randn(1, nb, 3, device="cuda") * 0.5
                logw = torch.full((k, nb), -math.log(nb), device="cuda")
                for _ in range(10):
                    c = torch.cdist(bary.expand(k, nb, 3), clouds).pow(2) / 2
                    f = torch.zeros(k, nb, device="cuda")
                    g = torch.zeros(k, nb, device="cuda")
                    for _ in range(30):
                        f = _lse_update(g, c, logw, 0.02)
                        g = _lse_update(f, c.transpose(1, 2), logw, 0.02)
                    plan = torch.exp((f[:, :, None] + g[:, None, :] - c) / 0.02 + logw[:, :, None] + logw[:, None, :])
                    bary = ((plan @ clouds) / plan.sum(2, keepdim=True).clamp_min(1e-12)).mean(0, keepdim=True)
                    del c, f, g, plan
                bary.norm().cpu()
                del held, rec, clouds, bary, logw

"""The fifty-ninth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch57_b.py are): machine learning for computer systems, compilers and databases on the GPU, written in torch alone,
first half. A learned cost model for tensor-program schedules in the manner of TVM Ansor and TenSet (every candidate
schedule a sequence of 4-48 loop-nest statements, drawn per task, each a 164-dim feature vector; a statement MLP and a
small transformer encoder with padding masks, sum-pooled to a throughput score, trained by a pairwise ranking loss
within tasks; then the model ranks thousands of candidates per task in chunks and the top-k recall is read back), an
MSCN-style learned cardinality estimator (a multi-set convolutional network over the tables with their sample
bitmaps, the joins and the predicates of a query, sets of drawn size padded per batch and masked, trained on the
q-error of log cardinalities; evaluations on a short workload and a long synthetic one), a recursive model index
over sorted keys of several distributions (lognormal, uniform, a clustered mixture and a piecewise one, 8-48M fp64
keys drawn per dataset, sorted on the device; a stage-1 MLP trained on sampled keys, 4,096-65,536 stage-2 linear
leaves fitted in closed form by index_add over chunks of the keys, their error bounds by scatter_reduce; then lookup
requests of drawn size uploaded from reused pinned host buffers on a side stream one request ahead, served by the
model and a fixed number of branchless bounded binary-search steps), and device placement of computation graphs by
reinforcement learning (layered DAGs of 200-4,000 operators drawn, a GraphSAGE policy over 2-8 devices, placements
sampled by Gumbel-max, a simulated step time from per-device compute load, cross-device transfers and a memory
penalty, REINFORCE with a mean baseline and an entropy bonus). Same conventions as the earlier batches: nothing
downloaded, data drawn at random on the device (or, for the index service, from a few reused pinned host buffers),
`rng` the workload's random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)` so
that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: counts are fixed on the host (the binary
search's steps, the number of leaves, the samples a graph), masks multiplied or added in, no boolean-mask indexing;
losses, recalls, q-errors and step times are read back only at logging points (the service returns each request's
positions, as a service must). rmi_learned_index_serve uses a side stream (uploads waited on by event, the tensors
record_stream'ed); the others are single-stream. The cost model's transformer, the MSCN's MLPs and the placement
policy run under bf16 autocast; the keys, the leaf fits, the searches, the simulated costs and the losses are fp32 or
fp64.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch59_b.py's header says the same of its half): every workload of this half
was run whole on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with the helper's runner
(/tmp/b59/meta_run.py, not committed, a copy of /work/notes/meta_run.py: smoke_cpu.py's patching with "cuda" mapped
to "meta", readbacks answered with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking a math
path, streams, events and pinned memory no-ops; boolean-mask indexing, which the meta device cannot size, is
avoided), its op outputs counted there (events about 1.8x that count) and its peak live bytes tracked:
tenset_costmodel_rank_train 329,869 op outputs, peak 4.94 GB; mscn_cardinality_train 310,514, 0.33 GB;
rmi_learned_index_serve 313,470, 3.79 GB; placement_gnn_reinforce 319,818, 0.15 GB
(peaks in fp32 where autocast would take bf16). record_new59.sh's header has them too, with the runs that led to
resizes. The CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, mlp as _mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- tensor-program cost model (TenSet / Ansor style)


class _CostModel(_nn.Module):
    def __init__(self, dfeat, d, depth, heads):
        super().__init__()
        self.stmt = _nn.Sequential(_nn.Linear(dfeat, d), _nn.ReLU(), _nn.Linear(d, d))
        self.enc = _nn.ModuleList(PreNormBlock(d, heads, 2 * d) for _ in range(depth))
        self.head = _nn.Sequential(_nn.LayerNorm(d), _nn.Linear(d, d), _nn.ReLU(), _nn.Linear(d, 1))

    def forward(self, x, valid):
        # x (b, s, f), valid (b, s) 0/1 float; padding keys masked out of attention, padded statements out of the sum
        h = self.stmt(x)
        mask = ((valid - 1.0) * 1e4)[:, None, None, :].to(h.dtype)
        for blk in self.enc:
            h = blk(h, mask)
        return self.head((h * valid[..., None].to(h.dtype)).sum(1))[:, 0]


def _schedules(teacher, n, s, nstmt, dfeat, dev="cuda"):
    """n candidate schedules of one task padded to s statements (nstmt real): feature vectors made on the device
    (loop extents, vectorisation, unroll and cache flags, arithmetic intensity as log-scaled and 0/1 columns), and a
    measured throughput from a fixed random teacher plus noise."""
    base = torch.randn(1, s, dfeat, device=dev)
    x = base + 0.7 * torch.randn(n, s, dfeat, device=dev)
    x[..., : dfeat // 4] = torch.log1p(x[..., : dfeat // 4].abs() * 8)
    x[..., dfeat // 4: dfeat // 2] = (x[..., dfeat // 4: dfeat // 2] > 0.3).float()
    valid = (torch.arange(s, device=dev) < nstmt).float()[None].expand(n, -1)
    x = x * valid[..., None]
    w1, w2 = teacher
    per = torch.tanh(x @ w1) @ w2
    y = (per[..., 0] * valid).sum(1) / nstmt + 0.05 * torch.randn(n, device=dev)
    return x, valid.contiguous(), y


@_workload("learned cost model for tensor-program schedules written by hand in the manner of TVM Ansor and TenSet (random init): 96 tasks (operators or subgraphs), each with a drawn number of loop-nest statements (4-48) and candidate schedules as 164-dim statement feature vectors made on the device with throughputs from a fixed random teacher; a statement MLP and a 3-layer transformer encoder (width 256, 8 heads, padding masks) sum-pooled to a score; batches of 4-16 tasks x 32-128 candidates (drawn), padded to the batch's longest task; a pairwise logistic ranking loss over all pairs within a task; bf16 autocast, AdamW with cosine decay, 500 steps; every 125 an evaluation ranking 4,096 candidates of each of 4 held-out tasks in chunks of 1,024 (no grad), top-8 recall against the teacher read back")
def tenset_costmodel_rank_train(rng):
    dfeat, d = 164, _smoke(256, 32)
    model = _CostModel(dfeat, d, _smoke(3, 2), _smoke(8, 2)).cuda()
    steps = _smoke(500, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    teacher = (torch.randn(dfeat, 64, device="cuda") / math.sqrt(dfeat), torch.randn(64, 1, device="cuda") / 8)
    ntask = _smoke(96, 6)
    tasks = [rng.randint(4, _smoke(48, 8)) for _ in range(ntask)]
    for step in range(steps):
        model.train()
        g = rng.randint(_smoke(4, 2), _smoke(16, 3))
        k = rng.choice(_smoke([32, 64, 128], [4, 8]))
        chosen = [tasks[rng.randrange(ntask)] for _ in range(g)]
        s = max(chosen)
        xs, vs, ys = zip(*(_schedules(teacher, k, s, ns, dfeat) for ns in chosen))
        x, valid, y = torch.cat(xs), torch.cat(vs), torch.stack(ys)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            score = model(x, valid)
        score = score.float().view(g, k)
        diff = score[:, :, None] - score[:, None, :]
        sign = torch.sign(y[:, :, None] - y[:, None, :])
        loss = (_F.softplus(-sign * diff) * sign.abs()).sum() / sign.abs().sum().clamp_min(1.0)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        del x, valid, y, score, diff, sign, xs, vs, ys
        if step % 40 == 0:
            float(loss)
        if (step + 1) % _smoke(125, 3) == 0:
            model.eval()
            recalls = []
            with torch.no_grad():
                for _t in range(_smoke(4, 1)):
                    ns = rng.randint(4, _smoke(48, 8))
                    ncand, chunk = _smoke(4096, 16), _smoke(1024, 8)
                    x, valid, y = _schedules(teacher, ncand, ns, ns, dfeat)
                    scores = []
                    for c0 in range(0, ncand, chunk):
                        with torch.autocast("cuda", dtype=torch.bfloat16):
                            scores.append(model(x[c0:c0 + chunk], valid[c0:c0 + chunk]).float())
                    pred_top = torch.cat(scores).topk(8).indices
                    true_top = y.topk(8).indices
                    recalls.append((pred_top[:, None] == true_top[None]).float().sum() / 8)
                    del x, valid, y, scores
            torch.stack(recalls).tolist()


# ---------------------------------------------------------------- MSCN cardinality estimation


class _SetConv(_nn.Module):
    def __init__(self, dt, dj, dp, h):
        super().__init__()
        self.t, self.j, self.p = _mlp(dt, h, h), _mlp(dj, h, h), _mlp(dp, h, h)
        self.out = _mlp(3 * h, h, 1)

    @staticmethod
    def _pool(mlp, x, m):
        h = _F.relu(mlp(x)) * m[..., None]
        return h.sum(1) / m.sum(1, keepdim=True).clamp_min(1.0)

    def forward(self, tab, tm, join, jm, pred, pm):
        z = torch.cat([self._pool(self.t, tab, tm), self._pool(self.j, join, jm), self._pool(self.p, pred, pm)], -1)
        return torch.sigmoid(self.out(z))[:, 0]


def _queries(b, tabs, joins, preds, ntab, njoin, ncol, nbits, teacher, dev="cuda"):
    """b queries of up to tabs tables, joins joins and preds predicates (each query's counts drawn on the device as
    masks): one-hot tables with their materialised-sample bitmaps, one-hot joins, column one-hot + operator + value;
    log cardinalities normalised to [0, 1] from a fixed random teacher."""
    nt = torch.randint(1, tabs + 1, (b, 1), device=dev)
    tm = (torch.arange(tabs, device=dev)[None] < nt).float()
    jm = (torch.arange(joins, device=dev)[None] < (nt - 1).clamp_max(joins)).float()
    npr = torch.randint(0, preds + 1, (b, 1), device=dev)
    pm = (torch.arange(preds, device=dev)[None] < npr).float()
    tab = torch.cat([_F.one_hot(torch.randint(0, ntab, (b, tabs), device=dev), ntab).float(),
                     (torch.rand(b, tabs, nbits, device=dev) < 0.3).float()], -1) * tm[..., None]
    join = _F.one_hot(torch.randint(0, njoin, (b, joins), device=dev), njoin).float() * jm[..., None]
    pred = torch.cat([_F.one_hot(torch.randint(0, ncol, (b, preds), device=dev), ncol).float(),
                      _F.one_hot(torch.randint(0, 3, (b, preds), device=dev), 3).float(),
                      torch.rand(b, preds, 1, device=dev)], -1) * pm[..., None]
    wt, wj, wp = teacher
    logc = (torch.tanh(tab @ wt).sum((1, 2)) + torch.tanh(join @ wj).sum((1, 2)) - torch.tanh(pred @ wp).sum((1, 2))
            + 4 * nt[:, 0].float())
    y = (logc.clamp(0, 24) / 24)
    return tab, tm, join, jm, pred, pm, y


def _qerror(pred, y, scale=24.0):
    return torch.exp((pred - y).abs() * scale)  # q-error of exp(log card), the ratio of estimate and truth


@_workload("MSCN-style learned cardinality estimator written by hand (random init): queries of 1-5 tables (each one-hot with a 1,000-bit materialised-sample bitmap), 0-4 joins and 0-8 predicates (column one-hot over 120 columns, operator, value), the counts drawn per query on the device and applied as masks, batches of 256-4,096 queries (drawn) padded to the set maxima; three set MLPs (hidden 256) with masked mean pooling and an output MLP to the normalised log cardinality; loss: the mean q-error of the cardinality (exp of the log error); bf16 autocast, Adam, 1,680 steps in 4 epochs of a drawn batch-size schedule; every 420 steps an evaluation on a 70-query workload and a 20,000-query synthetic workload in chunks of 2,048 (no grad), median, 95th-percentile and max q-error read back")
def mscn_cardinality_train(rng):
    ntab, njoin, ncol, nbits = 20, 40, _smoke(120, 12), _smoke(1000, 16)
    tabs, joins, preds = 5, 4, 8
    h = _smoke(256, 16)
    dt, dj, dp = ntab + nbits, njoin, ncol + 4
    model = _SetConv(dt, dj, dp, h).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    teacher = (torch.randn(dt, 4, device="cuda") * 0.3, torch.randn(dj, 4, device="cuda") * 0.3,
               torch.randn(dp, 4, device="cuda") * 0.5)
    steps = _smoke(1680, 4)
    sizes = _smoke([256, 512, 1024, 2048, 4096], [8, 16])
    for epoch in range(4):
        bs = rng.choice(sizes)
        for step in range(steps // 4):
            model.train()
            b = bs if rng.random() < 0.8 else rng.choice(sizes)
            batch = _queries(b, tabs, joins, preds, ntab, njoin, ncol, nbits, teacher)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = model(*batch[:6])
            loss = _qerror(out.float(), batch[6]).clamp_max(1e4).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            del batch, out
            if step % 50 == 0:
                float(loss)
        model.eval()
        with torch.no_grad():
            stats = []
            for nq in (_smoke(70, 5), _smoke(20000, 40)):
                errs = []
                for c0 in range(0, nq, _smoke(2048, 16)):
                    b = min(_smoke(2048, 16), nq - c0)
                    batch = _queries(b, tabs, joins, preds, ntab, njoin, ncol, nbits, teacher)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        out = model(*batch[:6])
                    errs.append(_qerror(out.float(), batch[6]))
                    del batch
                e = torch.cat(errs)
                stats.append(torch.stack([e.median(), torch.quantile(e, 0.95), e.max()]))
            torch.stack(stats).tolist()


# ---------------------------------------------------------------- recursive model index (learned index) service


def _keyset(kind, n, dev="cuda"):
    """n fp64 keys of a distribution, sorted on the device, normalised to [0, 1] for the models."""
    if kind == "lognormal":
        k = torch.exp(2.0 * torch.randn(n, device=dev, dtype=torch.float64))
    elif kind == "uniform":
        k = torch.rand(n, device=dev, dtype=torch.float64) * 1e12
    elif kind == "clustered":
        centres = torch.rand(64, device=dev, dtype=torch.float64) * 1e9
        k = centres[torch.randint(0, 64, (n,), device=dev)] + 1e5 * torch.randn(n, device=dev, dtype=torch.float64)
    else:  # piecewise: dense and sparse ranges, like map or timestamp keys
        u = torch.rand(n, device=dev, dtype=torch.float64)
        k = torch.where(u < 0.7, u * 1e6, 1e6 + (u - 0.7) ** 3 * 1e11)
    k = torch.sort(k).values
    lo, hi = k[0], k[-1]
    return k, (k - lo) / (hi - lo)


@_workload("recursive model index (learned index) built and served written by hand (random init): 3 datasets of 8-48M fp64 keys (drawn size and distribution: lognormal, uniform, clustered, piecewise) made and sorted on the device one after another; a stage-1 MLP (1-64-64-1) trained 90 Adam steps on 65,536 sampled keys to predict the normalised position, then 4,096-65,536 stage-2 linear leaves (drawn) fitted in closed form over chunks of 4M keys (index_add of the least-squares sums), their error bounds by scatter_reduce amax; then 520 lookup requests a dataset of 32K-1M query keys (drawn, fp64), uploaded from reused pinned host buffers on a side stream one request ahead (waited on by event, record_stream'ed): stage-1 and leaf predictions, a bounded window and 22 branchless binary-search steps by gather, checked against searchsorted; each request's positions summarised and read back")
def rmi_learned_index_serve(rng):
    dev = "cuda"
    qmax = _smoke(1 << 20, 256)
    host = [torch.rand(qmax, dtype=torch.float64).pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    done = [None, None]
    chunk = _smoke(1 << 22, 512)
    for ds in range(_smoke(3, 2)):
        kind = rng.choice(["lognormal", "uniform", "clustered", "piecewise"])
        n = rng.choice(_smoke([8 << 20, 16 << 20, 32 << 20, 48 << 20], [1024, 2048]))
        keys, xk = _keyset(kind, n)
        pos = torch.arange(n, device=dev, dtype=torch.float64) / n
        top = _nn.Sequential(_nn.Linear(1, 64), _nn.ReLU(), _nn.Linear(64, 64), _nn.ReLU(), _nn.Linear(64, 1)).cuda()
        opt = torch.optim.Adam(top.parameters(), lr=3e-3)
        for step in range(_smoke(90, 3)):
            idx = torch.randint(0, n, (_smoke(65536, 64),), device=dev)
            p = top(xk[idx].float()[:, None])[:, 0]
            loss = _F.mse_loss(p, pos[idx].float())
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if step % 30 == 0:
                float(loss)
        top.eval().requires_grad_(False)
        leaves = rng.choice(_smoke([4096, 16384, 65536], [16, 32]))

        def leaf_of(x):
            return (top(x.float()[:, None])[:, 0] * leaves).long().clamp(0, leaves - 1)

        with torch.no_grad():
            sums = torch.zeros(5, leaves, device=dev, dtype=torch.float64)
            for c0 in range(0, n, chunk):
                x, y = xk[c0:c0 + chunk], pos[c0:c0 + chunk]
                lf = leaf_of(x)
                sums.index_add_(1, lf, torch.stack([torch.ones_like(x), x, y, x * x, x * y]))
                del x, y, lf
            cnt, sx, sy, sxx, sxy = sums
            den = (cnt * sxx - sx * sx)
            slope = torch.where(den.abs() > 1e-18, (cnt * sxy - sx * sy) / den.clamp_min(1e-18), torch.zeros_like(den))
            icpt = (sy - slope * sx) / cnt.clamp_min(1.0)
            err = torch.zeros(leaves, device=dev, dtype=torch.float64)
            for c0 in range(0, n, chunk):
                x, y = xk[c0:c0 + chunk], pos[c0:c0 + chunk]
                lf = leaf_of(x)
                e = ((slope[lf] * x + icpt[lf]) - y).abs() * n
                err.scatter_reduce_(0, lf, e, "amax")
                del x, y, lf, e
            lo_k, span = keys[0], keys[-1] - keys[0]
            torch.stack([err.max(), err.mean()]).tolist()

        def fetch(i):
            q = rng.randint(_smoke(32768, 16), qmax)
            s = i % 2
            if done[s] is not None:
                done[s].synchronize()
            with torch.cuda.stream(side):
                z = host[s][:q].to(dev, non_blocking=True)
                ev = torch.cuda.Event()
                ev.record(side)
            done[s] = ev
            return z, ev

        nreq = _smoke(520, 3)
        nxt = fetch(0)
        for req in range(nreq):
            z, ev = nxt
            cur = torch.cuda.current_stream()
            cur.wait_event(ev)
            z.record_stream(cur)
            if req + 1 < nreq:
                nxt = fetch(req + 1)
            with torch.no_grad():
                qk = lo_k + z * span
                qx = (qk - lo_k) / span
                lf = leaf_of(qx)
                guess = ((slope[lf] * qx + icpt[lf]) * n)
                e = err[lf] + 1
                lo = (guess - e).floor().clamp(0, n - 1).long()
                hi = (guess + e).ceil().clamp(0, n - 1).long()
                for _ in range(22):  # lower_bound within [lo, hi]
                    mid = (lo + hi) // 2
                    go_right = keys[mid] < qk
                    lo = torch.where(go_right, mid + 1, lo)
                    hi = torch.where(go_right, hi, mid)
                ref = torch.searchsorted(keys, qk)
                torch.stack([(lo == ref).double().mean(), (hi - lo).double().mean(),
                             lo.double().mean()]).cpu()
            del z, qk, qx, lf, guess, e, lo, hi, ref
        del keys, xk, pos, top, opt, sums, slope, icpt, err


# ---------------------------------------------------------------- device placement by RL over computation graphs


def _comp_graph(n, dev="cuda"):
    """A layered DAG of n operators (like an unrolled NMT or Inception graph): each op draws 1-3 inputs among the
    previous 64; op types, FLOPs, output bytes and parameter bytes drawn. Returns node features, edges (src, dst),
    compute cost, output bytes and memory per node."""
    deg = 2
    i = torch.arange(1, n, device=dev).repeat_interleave(deg)
    back = torch.randint(1, 65, i.shape, device=dev)
    src = (i - back).clamp_min(0)
    dst = i
    optype = torch.randint(0, 32, (n,), device=dev)
    flops = torch.exp(torch.randn(n, device=dev) * 1.5)
    outb = torch.exp(torch.randn(n, device=dev))
    mem = outb + torch.exp(torch.randn(n, device=dev) - 1)
    depth = torch.arange(n, device=dev).float() / n
    feats = torch.stack([flops.log(), outb.log(), mem.log(), depth], -1)
    return optype, feats, src, dst, flops, outb, mem


class _PlacePolicy(_nn.Module):
    def __init__(self, h, layers, maxdev):
        super().__init__()
        self.emb = _nn.Embedding(32, h)
        self.inp = _nn.Linear(4, h)
        self.self_l = _nn.ModuleList(_nn.Linear(h, h) for _ in range(layers))
        self.nb_in = _nn.ModuleList(_nn.Linear(h, h) for _ in range(layers))
        self.nb_out = _nn.ModuleList(_nn.Linear(h, h) for _ in range(layers))
        self.norm = _nn.ModuleList(_nn.LayerNorm(h) for _ in range(layers))
        self.head = _nn.Sequential(_nn.Linear(h, h), _nn.ReLU(), _nn.Linear(h, maxdev))

    def forward(self, optype, feats, src, dst, n):
        h = self.emb(optype) + self.inp(feats)
        one = torch.ones(src.shape[0], 1, device=h.device, dtype=h.dtype)
        din = torch.zeros(n, 1, device=h.device, dtype=h.dtype).index_add_(0, dst, one).clamp_min(1)
        dout = torch.zeros(n, 1, device=h.device, dtype=h.dtype).index_add_(0, src, one).clamp_min(1)
        for sl, ni, no, nm in zip(self.self_l, self.nb_in, self.nb_out, self.norm):
            agg_in = torch.zeros_like(h).index_add_(0, dst, h[src]) / din
            agg_out = torch.zeros_like(h).index_add_(0, src, h[dst]) / dout
            h = nm(h + _F.relu(sl(h) + ni(agg_in) + no(agg_out)))
        return self.head(h)


def _step_time(place, flops, outb, mem, src, dst, ndev, cap):
    """Simulated step time of placements place (k, n) over ndev devices: the slowest device's compute, plus
    transfers on edges that cross devices (serialised per link), plus an out-of-memory penalty."""
    k = place.shape[0]
    oh = _F.one_hot(place, ndev).float()  # (k, n, d)
    load = torch.einsum("knd,n->kd", oh, flops)
    used = torch.einsum("knd,n->kd", oh, mem)
    cross = (place[:, src] != place[:, dst]).float()  # (k, e)
    comm = (cross * outb[src][None]).sum(1) / 8.0
    oom = _F.relu(used - cap).sum(1) * 10
    return load.amax(1) + comm + oom, k


@_workload("device placement of computation graphs by reinforcement learning written by hand (random init): layered DAGs of 200-4,000 operators (drawn, like unrolled NMT and Inception graphs: 2 inputs each among the previous 64, op types, FLOPs, output and parameter bytes drawn) placed on 2, 4 or 8 devices (drawn) with a memory cap; a GraphSAGE policy (hidden 128, 4 layers of in- and out-neighbour mean aggregation by index_add, LayerNorm) giving per-operator device logits; 32-128 placements a graph sampled by Gumbel-max, a simulated step time (slowest device's compute, cross-device transfers, out-of-memory penalty); REINFORCE with the mean baseline and an entropy bonus, bf16 autocast for the policy, Adam, 840 episodes, a new graph every 6; every 210 greedy placements of 4 held-out graphs against round-robin and single-device baselines, step times read back")
def placement_gnn_reinforce(rng):
    h, layers, maxdev = _smoke(128, 16), _smoke(4, 2), 8
    policy = _PlacePolicy(h, layers, maxdev).cuda()
    opt = torch.optim.Adam(policy.parameters(), lr=3e-4)
    sizes = _smoke([200, 500, 1000, 2000, 4000], [20, 40])
    graph = None
    for ep in range(_smoke(840, 4)):
        if ep % 6 == 0:
            n, ndev = rng.choice(sizes), rng.choice([2, 4, 8])
            graph = _comp_graph(n)
            cap = float(n) * 2.2 / ndev
        optype, feats, src, dst, flops, outb, mem = graph
        k = rng.choice(_smoke([32, 64, 128], [4, 8]))
        policy.train()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = policy(optype, feats, src, dst, n)
        logits = logits.float()[:, :ndev]
        logp = torch.log_softmax(logits, -1)
        gumbel = -torch.log(-torch.log(torch.rand(k, n, ndev, device="cuda").clamp(1e-9, 1 - 1e-9)))
        place = (logp.detach()[None] + gumbel).argmax(-1)  # (k, n)
        with torch.no_grad():
            t, _k = _step_time(place, flops, outb, mem, src, dst, ndev, cap)
            adv = (t.mean() - t) / (t.std() + 1e-6)
        lp = logp.gather(1, place.t()).sum(0)  # (k,)
        ent = -(logp.exp() * logp).sum(-1).mean()
        loss = -(adv * lp).mean() / n - 0.01 * ent
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        opt.step()
        del logits, logp, gumbel, place, lp
        if ep % 30 == 0:
            torch.stack([t.mean(), t.min()]).tolist()
        if (ep + 1) % _smoke(210, 2) == 0:
            policy.eval()
            res = []
            with torch.no_grad():
                for _g in range(_smoke(4, 1)):
                    n2, nd2 = rng.choice(sizes), rng.choice([2, 4, 8])
                    g2 = _comp_graph(n2)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        lg = policy(g2[0], g2[1], g2[2], g2[3], n2).float()[:, :nd2]
                    greedy = lg.argmax(-1)[None]
                    rr = (torch.arange(n2, device="cuda") * nd2 // n2)[None]
                    single = torch.zeros(1, n2, dtype=torch.long, device="cuda")
                    cap2 = float(n2) * 2.2 / nd2
                    res.append(torch.cat([_step_time(p, g2[4], g2[5], g2[6], g2[2], g2[3], nd2, cap2)[0]
                                          for p in (greedy, rr, single)]))
                    del g2, lg
            torch.stack(res).tolist()

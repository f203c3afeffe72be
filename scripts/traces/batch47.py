"""The forty-seventh batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch46_b.py are): classical machine learning and data processing on the GPU, written in torch alone (as
cuML/RAPIDS-style code does it, by hand), first half. A k-means model-selection job (k-means++ seeding with
greedy candidate trials, chunked Lloyd iterations over several datasets of different size and dimension, a sweep
over k scored by inertia and a sampled silhouette, then mini-batch k-means over a stream of feature batches uploaded
on a side stream), gradient-boosted decision trees (quantile binning by sort and searchsorted, histograms built
by index_add_ over binned features, split gains from cumulative sums, trees grown level by level with row and
column subsampling, an evaluation set scored as the trees grow; binary, regression and multiclass tables of
different shapes), exact t-SNE embeddings (PCA to 50 dimensions, a kNN graph by chunked cdist and topk, a
vectorised perplexity bisection, symmetric sparse affinities, early exaggeration, repulsive forces computed
exactly in row chunks) of several datasets of different size, and a Gaussian mixture model with full covariances
fitted by EM over a sweep of component counts (Cholesky factors, triangular solves for Mahalanobis distances,
log-determinants, responsibilities in chunks, BIC). Same conventions as the earlier batches: nothing downloaded,
data drawn at random on the device, `rng` the workload's random.Random for every shape, count and sampled
choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a
tensor's value: iteration counts are drawn on the host (no convergence tests read back), random choices on the
device are made by multinomial/argmax into index tensors, and boolean-mask indexing is avoided (masks multiply or
go through torch.where); inertias, losses, KL divergences and BICs are read back only at logging points.
kmeans_ksweep_fit uses a side stream (uploads waited on by event, the tensors record_stream'ed); the others are
single-stream. kmeans_ksweep_fit's mini-batch phase runs its distance matmuls under bf16 autocast; the rest of
this half is fp32, as these algorithms are usually run.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch47_b.py's header says the same of its half): every workload of this
half was run whole at its final real sizes (RECORD_SMOKE unset) on PyTorch's meta device with the helper's runner
(/tmp/b47/meta_run.py, not committed, a copy of batch 46's: smoke_cpu.py's patching with "cuda" mapped to "meta",
readbacks answered with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking a math path, streams,
events and pinned memory no-ops; boolean-mask indexing, which the meta device cannot size, is avoided), its op
outputs counted there (events about 1.8x that count) and its peak live bytes tracked: kmeans_ksweep_fit 339,122
op outputs, peak 3.22 GB; gbdt_hist_train 318,448, 0.95 GB; tsne_exact_embed 331,849, 1.02 GB; gmm_fullcov_em
291,846, 3.39 GB (record_new47.sh's header has them too, with the first runs that led to resizes). The CPU smoke
run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- k-means model selection


def _blobs(n, d, centres, spread=1.0):
    """n points in d dimensions around `centres` random centres (a Gaussian-blob dataset made on the device)."""
    c = torch.randn(centres, d, device="cuda") * 4
    lab = torch.randint(0, centres, (n,), device="cuda")
    return c[lab] + torch.randn(n, d, device="cuda") * spread


def _kmeanspp(x, k, trials):
    """Greedy k-means++ seeding (Arthur and Vassilvitskii 2007, scikit-learn's variant): each new centre is the
    best of `trials` candidates drawn in proportion to the current squared distance to the nearest centre."""
    n = x.shape[0]
    first = torch.randint(0, n, (1,), device="cuda")
    cent = [x[first]]
    mind = ((x - cent[0]) ** 2).sum(1)
    for _ in range(1, k):
        cand = torch.multinomial(mind, trials, replacement=True)
        cx = x[cand]
        d = torch.cdist(x, cx).pow_(2)
        pot = torch.minimum(mind[:, None], d).sum(0)
        best = pot.argmin().view(1)
        mind = torch.minimum(mind, d.index_select(1, best)[:, 0])
        cent.append(cx.index_select(0, best))
        del cand, cx, d, pot, best
    return torch.cat(cent)


def _lloyd(x, x2, c, iters, chunk):
    """Lloyd iterations in row chunks (distances by one addmm against the centres, argmin, sums by index_add_);
    returns the centres, the labels of the last pass and the inertia (a device scalar)."""
    n, d = x.shape
    k = c.shape[0]
    for _ in range(iters):
        sums = torch.zeros(k, d, device="cuda")
        cnt = torch.zeros(k, device="cuda")
        inertia = torch.zeros((), device="cuda")
        c2 = (c * c).sum(1)
        labels = []
        for c0 in range(0, n, chunk):
            xc = x[c0:c0 + chunk]
            dist = torch.addmm(c2[None], xc, c.t(), alpha=-2)
            md, a = dist.min(1)
            sums.index_add_(0, a, xc)
            cnt.index_add_(0, a, torch.ones_like(md))
            inertia = inertia + (md + x2[c0:c0 + chunk]).clamp_min(0).sum()
            labels.append(a)
            del xc, dist, md
        # an empty cluster keeps its old centre, as scikit-learn relocates it (here without a readback)
        c = torch.where(cnt[:, None] > 0, sums / cnt.clamp_min(1)[:, None], c)
        lab = torch.cat(labels)
        del sums, cnt, c2, labels
    return c, lab, inertia


def _silhouette(x, lab, k, sample):
    """The silhouette score on a row sample: mean distance to each cluster by a matmul with the one-hot labels."""
    idx = torch.randint(0, x.shape[0], (sample,), device="cuda")
    xs, ls = x[idx], lab[idx]
    dist = torch.cdist(xs, xs)
    oh = torch.nn.functional.one_hot(ls, k).float()
    cnt = oh.sum(0)
    mean = (dist @ oh) / cnt.clamp_min(1)
    own = mean.gather(1, ls[:, None])[:, 0] * cnt[ls] / (cnt[ls] - 1).clamp_min(1)
    other = torch.where(oh > 0, torch.full_like(mean, float("inf")), mean).min(1).values
    return ((other - own) / torch.maximum(own, other).clamp_min(1e-12)).mean()


@_workload("clustering model selection, k-means written by hand in torch (as cuML's KMeans is, fp32): 4 datasets of Gaussian blobs (100k-1.2M points, 8-256 dimensions, drawn) each fitted at 4-5 values of k from 8 to 320 (drawn, ascending; 2 initialisations for k up to 32): greedy k-means++ seeding (2 + ln k candidates a centre drawn by multinomial over the squared distances, the best kept by potential, dense cdist to the candidates), 24-64 Lloyd iterations (drawn; no tolerance read back) over row chunks of 16k-64k points (distances by addmm, argmin, sums and counts by index_add_, empty clusters keeping their centre), inertia read back per fit and a silhouette score on a 4096-8192-point sample (cdist, one-hot matmul); then mini-batch k-means (Sculley 2010) at the chosen k over a stream of 2,400 batches of 4k-32k feature vectors (fp16, from reused pinned host buffers, uploaded on a side stream one batch ahead, waited on by event and record_stream'ed), bf16 autocast distances, per-centre learning rates from running counts, the centres' inertia on a held-out chunk read back every 200 batches")
def kmeans_ksweep_fit(rng):
    ndata = _smoke(4, 1)
    for _ in range(ndata):
        n = int(_loguniform(rng, _smoke(100_000, 2000), _smoke(1_200_000, 4000)))
        d = rng.choice(_smoke([8, 16, 32, 64, 128, 256], [4, 8]))
        n = min(n, _smoke(300_000_000, 10 ** 9) // d)  # at most 1.2 GB of points
        x = _blobs(n, d, rng.randint(5, 200))
        x2 = (x * x).sum(1)
        ks = sorted(rng.sample(_smoke([8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 320], [3, 4, 6, 8]),
                               rng.randint(4, _smoke(5, 4))))
        for k in ks:
            chunk = min(rng.choice(_smoke([16384, 32768, 65536], [256, 512])), max(4096, (1 << 24) // k))
            best = None
            for _ in range(2 if k <= 32 else 1):
                c = _kmeanspp(x, k, 2 + int(math.log(k)))
                c, lab, inertia = _lloyd(x, x2, c, rng.randint(_smoke(24, 2), _smoke(64, 3)), chunk)
                inertia.cpu()  # logged per initialisation; the host keeps the later one (no value-based choice)
                best = (c, lab)
                del c, lab, inertia
            s = _silhouette(x, best[1], k, rng.choice(_smoke([4096, 6144, 8192], [64])))
            s.cpu()
            del best, s
        del x, x2

    # mini-batch k-means over a stream of feature batches (e.g. image embeddings paged in from host memory)
    d = rng.choice(_smoke([64, 128, 256], [8]))
    k = rng.choice(_smoke([64, 128, 256], [6]))
    bmax = _smoke(32768, 256)
    side = torch.cuda.Stream()
    host = [torch.randn(bmax, d).half().pin_memory() for _ in range(3)]
    held = _blobs(_smoke(65536, 512), d, 64)
    centres = held[torch.randint(0, held.shape[0], (k,), device="cuda")].clone()
    counts = torch.zeros(k, device="cuda")

    def fetch(i):
        b = rng.choice(_smoke([4096, 8192, 16384, 32768], [64, 128, 256]))
        with torch.cuda.stream(side):
            xb = host[i % 3][:b].to("cuda", non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        return xb, ev

    nxt = fetch(0)
    nb = _smoke(2400, 4)
    for i in range(nb):
        xb, ev = nxt
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        xb.record_stream(cur)
        nxt = fetch(i + 1)
        xf = xb.float() + torch.randn(1, d, device="cuda") * 0.1  # the batch, with a per-batch shift
        with torch.autocast("cuda", dtype=torch.bfloat16):
            cross = xf @ centres.t()
        dist = (centres * centres).sum(1)[None] - 2 * cross.float()
        a = dist.argmin(1)
        bc = torch.zeros(k, device="cuda").index_add_(0, a, torch.ones_like(a, dtype=torch.float32))
        bs = torch.zeros(k, d, device="cuda").index_add_(0, a, xf)
        counts += bc
        lr = bc / counts.clamp_min(1)
        centres = centres * (1 - lr[:, None]) + bs / bc.clamp_min(1)[:, None] * lr[:, None]
        del xb, xf, cross, dist, a, bc, bs, lr
        if (i + 1) % _smoke(200, 2) == 0:
            dd = torch.cdist(held, centres).min(1).values.pow(2).sum()
            dd.cpu()
            del dd


# ---------------------------------------------------------------- gradient-boosted decision trees


def _quantile_bins(x, nbins, sample):
    """Per-feature quantile boundaries from a row sample (sort), every value binned by searchsorted; returns the
    bins (n, f) uint8 and the boundaries (f, nbins - 1)."""
    n, f = x.shape
    idx = torch.randint(0, n, (sample,), device="cuda")
    s = x[idx].t().contiguous().sort(1).values
    q = (torch.linspace(0, 1, nbins + 1, device="cuda")[1:-1] * (sample - 1)).long()
    bounds = s[:, q].contiguous()
    bins = torch.searchsorted(bounds, x.t().contiguous()).to(torch.uint8).t().contiguous()
    return bins, bounds


def _grow_tree(bins, g, h, cols, depth, nbins, lam, min_hess):
    """One tree grown level by level (XGBoost's hist method, depthwise): at each level a gradient/Hessian
    histogram per node over the sampled columns (index_add_ into nodes x features x bins), prefix sums for the
    left children, the best split per node by argmax of the gain, rows moved to their child by a gather of their
    bin. Returns the per-level (feature, bin) splits and the leaf values."""
    n = bins.shape[0]
    fs = cols.shape[0]
    offs = torch.arange(fs, device="cuda", dtype=torch.int32)[None] * nbins
    fbt = bins.index_select(1, cols).int() + offs  # (n, fs) bins of the sampled columns, offset per column
    gh = torch.stack([g, h], 1)
    nid = torch.zeros(n, dtype=torch.long, device="cuda")
    splits = []
    for lvl in range(depth):
        nodes = 1 << lvl
        idx = (nid[:, None] * (fs * nbins) + fbt).view(-1)
        hist = torch.zeros(nodes * fs * nbins, 2, device="cuda")
        hist.index_add_(0, idx, gh[:, None, :].expand(n, fs, 2).reshape(-1, 2))
        cum = hist.view(nodes, fs, nbins, 2).cumsum(2)
        tot = cum[:, :1, -1:, :]
        gl, hl = cum[..., 0], cum[..., 1]
        gr, hr = tot[..., 0] - gl, tot[..., 1] - hl
        gain = gl * gl / (hl + lam) + gr * gr / (hr + lam) - tot[..., 0] ** 2 / (tot[..., 1] + lam)
        gain = torch.where((hl > min_hess) & (hr > min_hess), gain, torch.full_like(gain, -1e30))
        best = gain.view(nodes, fs * nbins).argmax(1)
        bf, bb = cols[best // nbins], best % nbins
        rowbin = bins.gather(1, bf[nid][:, None])[:, 0].long()
        nid = nid * 2 + (rowbin > bb[nid]).long()
        splits.append((bf, bb))
        del idx, hist, cum, tot, gl, hl, gr, hr, gain, best, rowbin
    leaves = torch.zeros(1 << depth, 2, device="cuda").index_add_(0, nid, gh)
    leaf = -leaves[:, 0] / (leaves[:, 1] + lam)
    del fbt, gh, offs
    return splits, leaf, nid


def _tree_predict(bins, splits, leaf):
    nid = torch.zeros(bins.shape[0], dtype=torch.long, device="cuda")
    for bf, bb in splits:
        rowbin = bins.gather(1, bf[nid][:, None])[:, 0].long()
        nid = nid * 2 + (rowbin > bb[nid]).long()
    return leaf[nid]


@_workload("gradient-boosted decision trees, XGBoost's hist method written by hand in torch (fp32): 3 tabular datasets of different shapes drawn at start (a binary-classification table of 200k-1M rows and 32-128 features, a regression table, a 3-6-class table; features from random projections with noise, labels from a random nonlinear function): quantile binning (a row sample sorted per feature, 64 or 256 bins, searchsorted), then boosting rounds (logistic, squared-error or softmax loss; one tree per class per round) each growing a depth-5-8 tree level by level on an 80% row subsample (Bernoulli weights on the gradients) and a 50-90% column sample drawn on the host: per level a gradient/Hessian histogram of nodes x features x bins built by index_add_ over the (row, feature) pairs, cumulative sums for the left children, gains with L2 regularisation and a minimum child Hessian, argmax per node, rows moved to their child by gathering their bin; leaf weights by index_add_, shrinkage 0.1, the training margins and a held-out set's margins (binned with the same boundaries, the tree applied to it) updated tree by tree; the held-out loss read back every 25 rounds; 225 rounds for the binary and regression tables and 90 for the multiclass one, 720-990 trees in all")
def gbdt_hist_train(rng):
    f_ = torch.nn.functional
    kinds = ["binary", "regression", "multiclass"]
    rng.shuffle(kinds)
    for kind in kinds:
        n = int(_loguniform(rng, _smoke(200_000, 2000), _smoke(1_000_000, 4000)))
        f = rng.choice(_smoke([32, 48, 64, 96, 128], [6, 8]))
        n = min(n, _smoke(48_000_000, 10 ** 9) // f)
        nval = n // 5
        nbins = rng.choice(_smoke([64, 256], [16]))
        depth = rng.randint(_smoke(5, 2), _smoke(8, 3))
        ncls = rng.randint(3, 6) if kind == "multiclass" else 1
        rounds = _smoke({"binary": 225, "regression": 225, "multiclass": 90}[kind], 3)
        proj = torch.randn(f, 16, device="cuda")
        head = torch.randn(16, ncls, device="cuda")

        def table(m):
            x = torch.randn(m, f, device="cuda")
            z = torch.tanh(x @ proj) @ head + torch.randn(m, ncls, device="cuda") * 0.3
            if kind == "binary":
                y = (z[:, 0] > 0).float()
            elif kind == "regression":
                y = z[:, 0]
            else:
                y = z.argmax(1)
            return x, y

        x, y = table(n)
        bins, bounds = _quantile_bins(x, nbins, min(n, _smoke(200_000, 1000)))
        del x
        xv, yv = table(nval)
        vbins = torch.searchsorted(bounds, xv.t().contiguous()).to(torch.uint8).t().contiguous()
        del xv
        margin = torch.zeros(n, ncls, device="cuda")
        vmargin = torch.zeros(nval, ncls, device="cuda")
        yoh = f_.one_hot(y.long(), ncls).float() if kind == "multiclass" else None
        for r in range(rounds):
            if kind == "binary":
                p = margin[:, 0].sigmoid()
                grads = [(p - y, (p * (1 - p)).clamp_min(1e-6))]
            elif kind == "regression":
                grads = [(margin[:, 0] - y, torch.ones_like(y))]
            else:
                p = margin.softmax(1)
                grads = [(p[:, c] - yoh[:, c], (2 * p[:, c] * (1 - p[:, c])).clamp_min(1e-6)) for c in range(ncls)]
            keep = torch.bernoulli(torch.full((n,), 0.8, device="cuda"))
            for c, (g, h) in enumerate(grads):
                cols = sorted(rng.sample(range(f), max(2, int(f * rng.uniform(0.5, 0.9)))))
                cols = torch.tensor(cols, device="cuda")
                splits, leaf, nid = _grow_tree(bins, g * keep, h * keep, cols, depth, nbins, 1.0, 1.0)
                margin[:, c] += 0.1 * leaf[nid]
                vmargin[:, c] += 0.1 * _tree_predict(vbins, splits, leaf)
                del cols, splits, leaf, nid
            del grads, keep
            if (r + 1) % _smoke(25, 2) == 0:
                if kind == "binary":
                    vl = f_.binary_cross_entropy_with_logits(vmargin[:, 0], yv)
                elif kind == "regression":
                    vl = f_.mse_loss(vmargin[:, 0], yv)
                else:
                    vl = f_.cross_entropy(vmargin, yv.long())
                vl.cpu()
                del vl
        del bins, bounds, vbins, margin, vmargin, y, yv, yoh, proj, head


# ---------------------------------------------------------------- exact t-SNE


def _pca(x, k):
    """Principal components by an eigendecomposition of the covariance (x centred), the top k kept."""
    xc = x - x.mean(0)
    cov = xc.t() @ xc / (x.shape[0] - 1)
    _, vec = torch.linalg.eigh(cov)
    return xc @ vec[:, -k:].flip(1)


def _knn(x, k, chunk):
    """k nearest neighbours (self excluded) by chunked cdist and topk: squared distances and indices."""
    ds, ids = [], []
    for c0 in range(0, x.shape[0], chunk):
        d = torch.cdist(x[c0:c0 + chunk], x).pow_(2)
        dk, ik = d.topk(k + 1, largest=False)
        ds.append(dk[:, 1:])
        ids.append(ik[:, 1:])
        del d, dk, ik
    return torch.cat(ds), torch.cat(ids)


def _perplexity_p(dk, perplexity, steps=50):
    """Conditional affinities p_j|i with each row's precision found by a vectorised bisection on the entropy."""
    n = dk.shape[0]
    target = math.log(perplexity)
    dk = dk - dk[:, :1]
    beta = torch.ones(n, device=dk.device)
    lo = torch.zeros(n, device=dk.device)
    hi = torch.full((n,), float("inf"), device=dk.device)
    for _ in range(steps):
        p = torch.exp(-dk * beta[:, None])
        sp = p.sum(1).clamp_min(1e-12)
        ent = torch.log(sp) + beta * (dk * p).sum(1) / sp
        high = ent > target
        lo = torch.where(high, beta, lo)
        hi = torch.where(high, hi, beta)
        beta = torch.where(torch.isinf(hi), beta * 2, (lo + hi) / 2)
        del p, sp, ent, high
    p = torch.exp(-dk * beta[:, None])
    return p / p.sum(1, keepdim=True)


@_workload("nonlinear embedding for visualisation, exact t-SNE (van der Maaten and Hinton 2008) written by hand in torch (fp32, no Barnes-Hut): 4 datasets one after another (5k-40k points of 64-784 dimensions drawn, clustered): PCA to 50 dimensions by eigh of the covariance, a 3 x perplexity nearest-neighbour graph (perplexity 15-50 drawn) by cdist and topk in row chunks, a 50-step vectorised bisection for each point's precision, the conditional affinities symmetrised into an edge list (both directions concatenated, normalised by 2n); then 520-870 gradient iterations (early exaggeration 12 for the first 250, momentum 0.5 then 0.8, per-coordinate gains): attractive forces over the edge list (gather, index_add_), repulsive forces and the normaliser Z computed exactly over all pairs in row chunks sized to about 64M pairs (cdist, Student-t kernel, q^2 sums and a matmul with the embedding), the KL divergence over the edges read back every 100 iterations")
def tsne_exact_embed(rng):
    for _ in range(_smoke(4, 1)):
        n = int(_loguniform(rng, _smoke(5000, 128), _smoke(40000, 256)))
        dim = rng.choice(_smoke([64, 128, 256, 512, 784], [16]))
        perp = rng.choice(_smoke([15, 30, 50], [5]))
        iters = rng.randint(_smoke(520, 3), _smoke(870, 4))
        x = _blobs(n, dim, rng.randint(5, 30), spread=2.0)
        z = _pca(x, min(50, dim))
        del x
        k = min(n - 1, 3 * perp)
        chunk = max(256, (1 << 26) // n)
        dk, ik = _knn(z, k, min(chunk, 4096))
        p = _perplexity_p(dk, perp)
        del z, dk
        rows = torch.arange(n, device="cuda").repeat_interleave(k)
        cols = ik.reshape(-1)
        ei, ej = torch.cat([rows, cols]), torch.cat([cols, rows])
        w = torch.cat([p.reshape(-1), p.reshape(-1)]) / (2 * n)
        del rows, cols, ik, p
        y = torch.randn(n, 2, device="cuda") * 1e-4
        upd = torch.zeros_like(y)
        gains = torch.ones_like(y)
        for it in range(iters):
            exag = 12.0 if it < 250 else 1.0
            mom = 0.5 if it < 250 else 0.8
            diff = y[ei] - y[ej]
            qa = 1.0 / (1.0 + (diff * diff).sum(1))
            attr = torch.zeros_like(y).index_add_(0, ei, diff * (w * qa)[:, None])
            del diff, qa
            rep, zsum = [], torch.zeros((), device="cuda")
            for c0 in range(0, n, chunk):
                yc = y[c0:c0 + chunk]
                q = 1.0 / (1.0 + torch.cdist(yc, y).pow_(2))
                zsum = zsum + q.sum() - yc.shape[0]
                q2 = q * q
                rep.append(q2.sum(1, keepdim=True) * yc - q2 @ y)
                del yc, q, q2
            grad = 4.0 * (exag * attr - torch.cat(rep) / zsum)
            same = (grad > 0) == (upd > 0)
            gains = torch.where(same, gains * 0.8, gains + 0.2).clamp_min(0.01)
            upd = mom * upd - 200.0 * gains * grad
            y = y + upd
            y = y - y.mean(0, keepdim=True)
            del attr, rep, grad, same
            if (it + 1) % _smoke(100, 2) == 0:
                d2 = ((y[ei] - y[ej]) ** 2).sum(1)
                kl = (w * (torch.log(w.clamp_min(1e-12)) + torch.log1p(d2) + torch.log(zsum))).sum()
                kl.cpu()
                del d2, kl
            del zsum
        del ei, ej, w, y, upd, gains


# ---------------------------------------------------------------- Gaussian mixture EM


def _gmm_pass(x, logw, mu, chol, chunk):
    """One EM pass in row chunks: the E-step's log densities by triangular solves against the Cholesky factors
    of the covariances (log-determinants from their diagonals), responsibilities by logsumexp, and the M-step's
    sufficient statistics (counts, first and second moments) accumulated; returns them and the log likelihood."""
    n, d = x.shape
    k = mu.shape[0]
    logdet = 2 * chol.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    const = (d * math.log(2 * math.pi) + logdet)[:, None]
    nk = torch.zeros(k, device="cuda")
    sx = torch.zeros(k, d, device="cuda")
    sxx = torch.zeros(k, d, d, device="cuda")
    ll = torch.zeros((), device="cuda")
    for c0 in range(0, n, chunk):
        xc = x[c0:c0 + chunk]
        diff = (xc[None] - mu[:, None]).transpose(1, 2)
        sol = torch.linalg.solve_triangular(chol, diff, upper=False)
        logp = (logw[:, None] - 0.5 * (const + (sol * sol).sum(1))).t()
        lse = logp.logsumexp(1, keepdim=True)
        resp = (logp - lse).exp()
        ll = ll + lse.sum()
        nk += resp.sum(0)
        sx += resp.t() @ xc
        sxx += (resp.t()[:, None, :] * xc.t()[None]) @ xc
        del xc, diff, sol, logp, lse, resp
    return nk, sx, sxx, ll


@_workload("density estimation and soft clustering, a Gaussian mixture model with full covariances fitted by EM, written by hand in torch (fp32, as scikit-learn's GaussianMixture with covariance_type='full'): 3 datasets (40k-400k points of 4-64 dimensions drawn, from random anisotropic Gaussians), each fitted at 4 component counts from 2 to 48 (drawn, ascending) for 30-74 EM iterations (drawn; no tolerance read back): means initialised from random rows, covariances from the global one; each iteration the Cholesky factors of the k covariances (plus 1e-4 on the diagonal), log-determinants from their diagonals, then a pass over the data in row chunks (sized to about 8M k x chunk x d elements): Mahalanobis distances by batched triangular solves, log responsibilities normalised by logsumexp, counts, first moments and second moments (a batched matmul of the weighted rows) accumulated; new weights, means and covariances; the log likelihood read back every 10 iterations and the BIC per fit; finally one of the fitted models (drawn on the host, standing in for the best-BIC one so that no readback decides) scores a held-out set and samples 100k points through its Cholesky factors")
def gmm_fullcov_em(rng):
    for _ in range(_smoke(3, 1)):
        n = int(_loguniform(rng, _smoke(40_000, 500), _smoke(400_000, 1000)))
        d = rng.choice(_smoke([4, 8, 16, 24, 32, 48, 64], [3, 4]))
        nsrc = rng.randint(3, 20)
        a = torch.randn(nsrc, d, d, device="cuda") / math.sqrt(d)
        m = torch.randn(nsrc, d, device="cuda") * 3
        lab = torch.randint(0, nsrc, (n,), device="cuda")
        x = m[lab] + (torch.randn(n, 1, d, device="cuda") @ a[lab])[:, 0]
        del a, lab
        gmean = x.mean(0)
        gcov = (x - gmean).t() @ (x - gmean) / n
        ks = sorted(rng.sample(_smoke(list(range(2, 49)), [2, 3, 4]), _smoke(4, 2)))
        eye = torch.eye(d, device="cuda")
        fits = []
        for k in ks:
            chunk = max(512, min(65536, (8 << 20) // (k * d)))
            mu = x[torch.randint(0, n, (k,), device="cuda")].clone()
            cov = gcov.expand(k, d, d).clone()
            logw = torch.full((k,), -math.log(k), device="cuda")
            iters = rng.randint(_smoke(30, 2), _smoke(74, 3))
            for it in range(iters):
                chol = torch.linalg.cholesky(cov + 1e-4 * eye)
                nk, sx, sxx, ll = _gmm_pass(x, logw, mu, chol, chunk)
                nkc = nk.clamp_min(1e-6)
                logw = (nkc / n).log()
                mu = sx / nkc[:, None]
                cov = sxx / nkc[:, None, None] - mu[:, :, None] * mu[:, None, :]
                if (it + 1) % 10 == 0:
                    (ll / n).cpu()
                del chol, nk, sx, sxx, nkc
            npar = k * (d + d * (d + 1) / 2) + k - 1
            bic = -2 * ll + npar * math.log(n)
            bic.cpu()
            fits.append((logw, mu, cov))
            del ll, bic
        logw, mu, cov = fits[rng.randrange(len(fits))]
        chol = torch.linalg.cholesky(cov + 1e-4 * eye)
        xv = x[torch.randint(0, n, (n // 4,), device="cuda")] + torch.randn(n // 4, d, device="cuda") * 0.1
        ll = _gmm_pass(xv, logw, mu, chol, max(512, min(65536, (8 << 20) // (mu.shape[0] * d))))[3]
        ll.cpu()
        ns = _smoke(100_000, 100)
        comp = torch.multinomial(logw.exp(), ns, replacement=True)
        samp = mu[comp] + (chol[comp] @ torch.randn(ns, d, 1, device="cuda"))[..., 0]
        samp.mean(0).cpu()
        del fits, x, gcov, logw, mu, cov, chol, xv, ll, comp, samp, eye

"""The forty-seventh batch of held-out workloads, second half (batch47.py holds the first): classical machine
learning and data processing on the GPU, written in torch alone. A randomized-SVD PCA of two models' per-layer
activation stores streamed from host memory in chunks (uploaded on a side stream: Halko-style range finding with
power iterations and QR, then whitening, a reconstruction check and the CKA between consecutive layers, and an
incremental PCA over newly arriving chunks), a feature-
engineering pipeline over a columnar table feeding a DeepFM-style factorization machine retrained day by day
(group-by aggregations by sort, searchsorted segment bounds and cumulative sums, a dimension-table join by
searchsorted, out-of-fold target encoding, quantile binning, hashed categorical ids), a cross-validated
hyperparameter grid for ridge, logistic and softmax regression (repeated k folds, eigendecomposed Gram matrices for the
ridge path, Newton-IRLS with Cholesky solves for the logistic path, full-batch Adam for softmax), and implicit-
feedback matrix factorization by alternating least squares with conjugate-gradient solves (Hu, Koren and Volinsky
2008; Takacs et al. 2011) over a sweep of ranks, evaluated by recall@k on held-out users. Same conventions as
batch47.py: nothing downloaded, data drawn on the device, `rng` the workload's random.Random for every shape,
count and sampled choice, sizes through `_smoke(real, small)`. No control flow reads a tensor's value (iteration
counts drawn on the host; no convergence test read back; boolean-mask indexing avoided); losses, errors and
metrics are read back only at logging points. rsvd_pca_stream uses a side stream (uploads waited on by event, the
tensors record_stream'ed); the others are single-stream. featpipe_deepfm_daily trains under bf16 autocast, the
rest is fp32 (the ridge Gram matrices in fp64), as these are usually run.

Real sizes checked before recording, as batch47.py's header says (the same meta-device runner, op outputs
counted, peak live bytes tracked), each run whole at its final sizes: rsvd_pca_stream 319,885 op outputs, peak
0.34 GB; featpipe_deepfm_daily 317,717, 5.61 GB; linear_cv_grid 302,378, 1.77 GB; als_implicit_cg 308,163,
1.43 GB. record_new47.sh's header has the figures, with the first runs that led to resizes. The CPU smoke run
(RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- streamed randomized PCA


@_workload("representation analysis of a model's stored activations, PCA by randomized SVD (Halko, Martinsson and Tropp 2011) written by hand in torch over data that does not fit on the device at once: two models' activation stores one after another (every other layer: 12 layers of a 24-layer model of width 768-1024, then 16 of a 32-layer model of width 1024-1536, drawn; 100k-400k token rows a layer, fp16), each layer's rows paged in as chunks of 1024 or 2048 rows from a few reused pinned host buffers and uploaded on a side stream one chunk ahead (waited on by event, record_stream'ed; each chunk given its own scale on the device): a pass for the column means, a Gaussian test matrix of rank 64-192 plus 10 oversampling, the range Y = A Omega assembled on the device (rows x (k+10)), 3-5 power iterations (drawn per layer) each two more streamed passes (A^T Q accumulated, then A Z) with a QR of the tall matrix after each, B = Q^T A streamed, the small SVD, explained variance read back; then a streamed whitening pass (each chunk centred, projected, scaled by 1/sqrt of the eigenvalues into an fp16 matrix of scores kept on the device) with the reconstruction error accumulated, the linear CKA between this layer's and the previous layer's whitened scores (the previous layer's kept until then), read back; after each model's last layer an incremental PCA (Ross et al. 2008, scikit-learn's IncrementalPCA) over 20-40 newly arriving chunks (each an SVD of the stacked previous components, the centred chunk and a mean-correction row); fp32 matmuls on fp16 uploads")
def rsvd_pca_stream(rng):
    side = torch.cuda.Stream()
    cmax = _smoke(2048, 64)
    dmax = _smoke(1536, 24)
    host = [torch.randn(cmax, dmax).half().pin_memory() for _ in range(4)]
    state = {"i": 0}

    def chunks(n, d, chunk):
        """One streamed pass over a store: yields (row offset, the chunk as fp32 on the device)."""
        starts = list(range(0, n, chunk))

        def up(j):
            s = state["i"] % 4
            state["i"] += 1
            rows = min(chunk, n - starts[j])
            with torch.cuda.stream(side):
                t = host[s][:rows, :d].to("cuda", non_blocking=True)
                ev = torch.cuda.Event()
                ev.record(side)
            return t, ev

        nxt = up(0)
        for j, c0 in enumerate(starts):
            t, ev = nxt
            cur = torch.cuda.current_stream()
            cur.wait_event(ev)
            t.record_stream(cur)
            if j + 1 < len(starts):
                nxt = up(j + 1)
            yield c0, t.float() * (1.0 + 0.01 * (j % 7))
            del t

    models = _smoke([(12, [768, 1024]), (16, [1024, 1280, 1536])], [(2, [16]), (2, [24])])  # every other layer
    for nlayers, widths in models:
        d = rng.choice(widths)
        n = int(_loguniform(rng, _smoke(100_000, 300), _smoke(400_000, 600)))
        chunk = rng.choice(_smoke([1024, 2048], [64]))
        k = rng.choice(_smoke([64, 96, 128, 192], [4]))
        ell = k + 10
        prev = None
        for layer in range(nlayers):
            q = rng.randint(3, 5)
            mean = torch.zeros(d, device="cuda")
            for c0, a in chunks(n, d, chunk):
                mean += a.sum(0)
                del a
            mean /= n
            omega = torch.randn(d, ell, device="cuda")
            y = torch.empty(n, ell, device="cuda")

            def range_pass(z):
                mz = mean @ z
                for c0, a in chunks(n, d, chunk):
                    y[c0:c0 + a.shape[0]] = a @ z - mz
                    del a

            def adjoint_pass(qm):
                z = torch.zeros(d, ell, device="cuda")
                for c0, a in chunks(n, d, chunk):
                    z += a.t() @ qm[c0:c0 + a.shape[0]]
                    del a
                return z - mean[:, None] * qm.sum(0)[None]

            range_pass(omega)
            qm = torch.linalg.qr(y).Q
            for _ in range(q):
                z = torch.linalg.qr(adjoint_pass(qm)).Q
                range_pass(z)
                qm = torch.linalg.qr(y).Q
                del z
            bt = adjoint_pass(qm)  # (d, ell) = (Q^T A)^T
            ub, s, vt = torch.linalg.svd(bt.t(), full_matrices=False)
            comps = vt[:k]
            var = s[:k] ** 2 / (n - 1)
            (var / var.sum()).cumsum(0).cpu()
            del y, qm, bt, ub, omega, vt
            scores = torch.empty(n, k, device="cuda", dtype=torch.float16)
            err = torch.zeros((), device="cuda")
            wscale = var.rsqrt()
            for c0, a in chunks(n, d, chunk):
                ac = a - mean
                p = ac @ comps.t()
                scores[c0:c0 + a.shape[0]] = (p * wscale).half()
                err = err + ((ac - p @ comps) ** 2).sum()
                del a, ac, p
            if prev is not None:
                xs, ys = scores.float(), prev.float()
                cka = (xs.t() @ ys).pow(2).sum() / ((xs.t() @ xs).norm() * (ys.t() @ ys).norm())
                torch.stack([err / n, cka]).cpu()
                del xs, ys, cka
            prev = scores
            del scores, err, wscale
            if layer == nlayers - 1:
                # incremental PCA over newly arriving chunks, starting from the batch solution
                icomp, isv, imean, seen = comps.clone(), s[:k].clone(), mean.clone(), n
                narr = rng.randint(_smoke(20, 2), _smoke(40, 3))
                for c0, a in chunks(narr * chunk, d, chunk):
                    m = a.shape[0]
                    bmean = a.mean(0)
                    tot = seen + m
                    nmean = imean + (bmean - imean) * (m / tot)
                    corr = math.sqrt(seen * m / tot) * (imean - bmean)
                    stacked = torch.cat([isv[:, None] * icomp, a - bmean, corr[None]], 0)
                    _, sv, vt = torch.linalg.svd(stacked, full_matrices=False)
                    icomp, isv, imean, seen = vt[:k], sv[:k], nmean, tot
                    del a, bmean, nmean, corr, stacked, sv, vt
                (icomp @ comps.t()).abs().diagonal().mean().cpu()
                del icomp, isv, imean
            del mean, comps, var, s
        del prev


# ---------------------------------------------------------------- feature pipeline and DeepFM


def _segment_stats(key, vals, card):
    """Group-by by sort: rows ordered by key, each group's bounds found by searchsorted over the sorted keys,
    sums by differences of a cumulative sum; returns per-group counts and sums (vals (n, m)) and the max of the
    first value column by scatter_reduce."""
    order = key.argsort()
    sk = key[order]
    ids = torch.arange(card, device="cuda")
    lo = torch.searchsorted(sk, ids)
    hi = torch.searchsorted(sk, ids, right=True)
    cs = torch.cat([torch.zeros(1, vals.shape[1], device="cuda"), vals[order].cumsum(0)])
    sums = cs[hi] - cs[lo]
    mx = torch.full((card,), -1e30, device="cuda").scatter_reduce_(0, key, vals[:, 0], "amax")
    return (hi - lo).float(), sums, mx


class _DeepFM(torch.nn.Module):
    """DeepFM (Guo et al. 2017): a shared embedding table over hashed field ids, first-order weights, the FM
    pairwise term by the square-of-sum trick, and an MLP over the concatenated field embeddings and the dense
    features."""

    def __init__(self, vocab, fields, dense, k, hidden):
        super().__init__()
        nn = torch.nn
        self.emb = nn.Embedding(vocab, k)
        self.lin = nn.Embedding(vocab, 1)
        self.dense = nn.Linear(dense, k)
        layers, w = [], fields * k + k
        for h in hidden:
            layers += [nn.Linear(w, h), nn.ReLU(), nn.Dropout(0.1)]
            w = h
        self.mlp = nn.Sequential(*layers, nn.Linear(w, 1))
        torch.nn.init.normal_(self.emb.weight, std=0.01)

    def forward(self, ids, xd):
        e = self.emb(ids)
        dv = self.dense(xd)
        allv = torch.cat([e, dv[:, None]], 1)
        fm = 0.5 * (allv.sum(1) ** 2 - (allv * allv).sum(1)).sum(1)
        return self.lin(ids).sum((1, 2)) + fm + self.mlp(allv.flatten(1))[:, 0]


@_workload("click-through-rate modelling from a columnar event log, a RAPIDS-style feature pipeline written in torch feeding a DeepFM (Guo et al. 2017), retrained daily: 4 days one after another, each a table of 0.5M-3M events (drawn) with user ids (50k-400k), raw item ids (joined to a sorted item dimension table of 10k-150k rows by searchsorted for brand, category and price), 4-8 further categorical columns (cardinalities 10-20k), 6-12 numeric columns and a click label; features built on the device: group-by aggregations by argsort, searchsorted segment bounds and cumulative-sum differences (counts, sums, means and scatter_reduce maxima per user, item, brand and user-category pair), broadcast back by gather; 5-fold out-of-fold target encoding of every categorical column (smoothed, per-fold sums by index_add_); quantile binning of numeric and aggregate columns (sorted sample, bucketize into 32 bins); all categorical and binned columns hashed into one id space with field offsets (1M-4M ids); then the day's model (embedding dim 16-32, MLP 400-400 or 256-128-64, the previous day's weights carried over when the day's id space and fields are the same, else a new model) trained for 750-1050 steps of 4096-16384 rows (drawn) under bf16 autocast with Adam, and the day's last 10% of rows scored for AUC by a rank sort (read back)")
def featpipe_deepfm_daily(rng):
    f_ = torch.nn.functional
    model = opt = None
    prev_vocab = None
    for day in range(_smoke(4, 1)):
        n = int(_loguniform(rng, _smoke(500_000, 5000), _smoke(3_000_000, 8000)))
        nu = rng.randint(_smoke(50_000, 200), _smoke(400_000, 400))
        ni = rng.randint(_smoke(10_000, 50), _smoke(150_000, 100))
        ncat = rng.randint(4, 8)
        cards = [rng.choice([10, 50, 200, 1000, 5000, 20000]) for _ in range(ncat)]
        nnum = rng.randint(6, 12)
        # the event table
        user = torch.randint(0, nu, (n,), device="cuda")
        space = ni * 8
        item_keys = torch.randperm(space, device="cuda")[:ni].sort().values
        item_attr = torch.stack([torch.randint(0, 500, (ni,), device="cuda"), torch.randint(0, 60, (ni,), device="cuda")], 1)
        item_price = torch.rand(ni, device="cuda") * 100
        pop = torch.rand(ni, device="cuda") ** 3
        raw_item = item_keys[torch.multinomial(pop, n, replacement=True)]
        cats = torch.stack([torch.randint(0, c, (n,), device="cuda") for c in cards], 1)
        num = torch.randn(n, nnum, device="cuda").exp()
        hidden_w = torch.randn(nnum, device="cuda")
        label = (torch.rand(n, device="cuda") < torch.sigmoid(num.log() @ hidden_w * 0.3 - 2)).float()
        # join the item dimension table
        pos = torch.searchsorted(item_keys, raw_item)
        brand, categ = item_attr[pos, 0], item_attr[pos, 1]
        price = item_price[pos]
        # group-by aggregations
        dense = [num.log1p()]
        for key, card in ((user, nu), (pos, ni), (brand, 500), (user * 60 + categ, nu * 60)):
            vals = torch.stack([price, num[:, 0], label], 1)
            cnt, sums, mx = _segment_stats(key, vals, card)
            mean = sums / cnt.clamp_min(1)[:, None]
            dense.append(torch.cat([cnt[key, None].log1p(), mean[key], mx[key, None].clamp_min(0)], 1))
            del vals, cnt, sums, mx, mean
        # out-of-fold target encoding
        fold = torch.randint(0, 5, (n,), device="cuda")
        prior = label.mean()
        catcols = [cats[:, j] for j in range(ncat)] + [brand, categ]
        catcards = cards + [500, 60]
        for col, card in zip(catcols, catcards):
            te = torch.zeros(n, device="cuda")
            tot_s = torch.zeros(card, device="cuda").index_add_(0, col, label)
            tot_c = torch.zeros(card, device="cuda").index_add_(0, col, torch.ones_like(label))
            for fo in range(5):
                inf = (fold == fo).float()
                fs = torch.zeros(card, device="cuda").index_add_(0, col, label * inf)
                fc = torch.zeros(card, device="cuda").index_add_(0, col, inf)
                enc = (tot_s - fs + 20 * prior) / (tot_c - fc + 20)
                te = te + inf * enc[col]
                del inf, fs, fc, enc
            dense.append(te[:, None])
            del te, tot_s, tot_c
        xd = torch.cat(dense, 1)
        del dense
        xd = (xd - xd.mean(0)) / xd.std(0).clamp_min(1e-6)
        # quantile binning
        samp = xd[torch.randint(0, n, (min(n, 100_000),), device="cuda")].sort(0).values
        qidx = (torch.linspace(0, 1, 33, device="cuda")[1:-1] * (samp.shape[0] - 1)).long()
        bounds = samp[qidx].t().contiguous()
        binned = torch.searchsorted(bounds, xd.t().contiguous()).t()
        del samp, qidx, bounds
        # hashed ids with field offsets
        fields = torch.cat([user[:, None], pos[:, None], cats, brand[:, None], categ[:, None], binned], 1)
        nf = fields.shape[1]
        vocab = rng.choice(_smoke([1 << 20, 1 << 21, 1 << 22], [4096]))
        per = vocab // nf
        ids = (fields * 2654435761 % per) + torch.arange(nf, device="cuda")[None] * per
        del fields, binned, user, pos, cats, num, brand, categ, price, raw_item, fold, catcols
        shape = (vocab, nf, xd.shape[1])
        if model is None or shape != prev_vocab:
            k = rng.choice(_smoke([16, 24, 32], [4]))
            hidden = rng.choice(_smoke([[400, 400], [256, 128, 64]], [[8]]))
            model = _DeepFM(vocab, nf, xd.shape[1], k, hidden).cuda()
            opt = torch.optim.Adam(model.parameters(), lr=1e-3)
            prev_vocab = shape
        ntrain = n * 9 // 10
        steps = rng.randint(_smoke(750, 2), _smoke(1050, 3))
        for step in range(steps):
            bsz = rng.choice(_smoke([4096, 8192, 16384], [64]))
            rows = torch.randint(0, ntrain, (bsz,), device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logit = model(ids[rows], xd[rows])
            loss = f_.binary_cross_entropy_with_logits(logit.float(), label[rows])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if (step + 1) % _smoke(200, 2) == 0:
                loss.detach().cpu()
            del rows, logit, loss
        model.eval()
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            ec = _smoke(65536, 256)
            sc = torch.cat([model(ids[c0:c0 + ec], xd[c0:c0 + ec]).float() for c0 in range(ntrain, n, ec)])
        model.train()
        yv = label[ntrain:]
        ranks = torch.empty_like(sc).scatter_(0, sc.argsort(), torch.arange(1, sc.shape[0] + 1, device="cuda", dtype=sc.dtype))
        npos = yv.sum()
        auc = ((ranks * yv).sum() - npos * (npos + 1) / 2) / (npos * (yv.shape[0] - npos)).clamp_min(1)
        auc.cpu()
        del ids, xd, label, sc, yv, ranks, npos, auc, item_keys, item_attr, item_price, pop, hidden_w


# ---------------------------------------------------------------- cross-validated linear models


def _fit_softmax(lin, x, y, steps, wd):
    """Softmax regression: `lin` trained by Adam (lr 0.05, weight decay `wd`) for `steps` full-batch steps on
    (x, y); returns the optimizer (its state lives until the caller drops it)."""
    opt = torch.optim.Adam(lin.parameters(), lr=0.05, weight_decay=wd)
    for _ in range(steps):
        loss = torch.nn.functional.cross_entropy(lin(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del loss
    return opt


@_workload("model selection for linear models by repeated k-fold cross-validation on tabular data, written by hand in torch (as cuML/scikit-learn's RidgeCV, LogisticRegressionCV and a softmax regression would): 4 datasets one after another (50k-400k rows, 64-1024 standardised features drawn, at most 128M values; a regression, two binary and a 5-20-class target from a sparse random linear model with noise), 3 repeats of 5 folds (a fresh random permutation per repeat, each fold's training rows gathered into their own matrix): ridge over 16 penalties from one eigendecomposition of the fp64 Gram matrix per fold (validation MSE per penalty); L2 logistic regression over 16 values of C from strong to weak regularisation, warm-started along the path, each fitted by 10-14 Newton-IRLS iterations (weighted Gram matrix, Cholesky solve); multinomial softmax regression over 5 weight decays by 120-220 full-batch Adam iterations with autograd; validation scores stacked and read back per dataset, then a refit on all rows and a test set scored")
def linear_cv_grid(rng):
    f_ = torch.nn.functional
    for kind in ("regression", "binary", "multiclass", "binary"):
        n = int(_loguniform(rng, _smoke(50_000, 500), _smoke(400_000, 1000)))
        d = rng.choice(_smoke([64, 128, 256, 512, 1024], [8, 16]))
        ncls = rng.randint(5, 20) if kind == "multiclass" else 1
        n = min(n, _smoke(1 << 27, 10 ** 9) // d)  # at most 128M values (the Newton path's Gram matrices)
        x = torch.randn(n, d, device="cuda") * torch.rand(d, device="cuda") * 3 + torch.randn(d, device="cuda")
        x = (x - x.mean(0)) / x.std(0)
        wtrue = torch.randn(d, ncls, device="cuda") * (torch.rand(d, 1, device="cuda") < 0.2).float()
        z = x @ wtrue + torch.randn(n, ncls, device="cuda")
        y = z[:, 0] if kind == "regression" else ((z[:, 0] > 0).float() if kind == "binary" else z.argmax(1))
        folds, repeats = 5, 3
        fsz = n // folds
        scores = []
        for rep in range(repeats * folds):
            fo = rep % folds
            if fo == 0:
                perm = torch.randperm(n, device="cuda")  # a new shuffle per repeat (RepeatedKFold)
            vidx = perm[fo * fsz:(fo + 1) * fsz]
            tidx = torch.cat([perm[:fo * fsz], perm[(fo + 1) * fsz:]])
            xt, yt, xv, yv = x[tidx], y[tidx], x[vidx], y[vidx]
            if kind == "regression":
                xt64 = xt.double()
                g = xt64.t() @ xt64
                b = xt64.t() @ yt.double()
                del xt64
                ev, vec = torch.linalg.eigh(g)
                vb = vec.t() @ b
                for lam in torch.logspace(-3, 4, 16).tolist():
                    w = (vec @ (vb / (ev + lam))).float()
                    scores.append(((xv @ w - yv) ** 2).mean())
                    del w
                del g, b, ev, vec, vb
            elif kind == "binary":
                w = torch.zeros(d, device="cuda")
                eye = torch.eye(d, device="cuda")
                for c in torch.logspace(-4, 2, 16).tolist():
                    lam = 1.0 / (c * xt.shape[0])
                    for _ in range(rng.randint(_smoke(10, 1), _smoke(14, 2))):
                        p = torch.sigmoid(xt @ w)
                        grad = xt.t() @ (p - yt) / xt.shape[0] + lam * w
                        hess = (xt * (p * (1 - p))[:, None]).t() @ xt / xt.shape[0] + lam * eye
                        w = w - torch.cholesky_solve(grad[:, None], torch.linalg.cholesky(hess))[:, 0]
                        del p, grad, hess
                    scores.append(f_.binary_cross_entropy_with_logits(xv @ w, yv))
                del w, eye
            else:
                for wd in (1e-5, 1e-4, 1e-3, 1e-2, 1e-1):
                    lin = torch.nn.Linear(d, ncls).cuda()
                    opt = _fit_softmax(lin, xt, yt, rng.randint(_smoke(120, 2), _smoke(220, 3)), wd)
                    with torch.no_grad():
                        scores.append((lin(xv).argmax(1) == yv).float().mean())
                    del lin, opt
            del vidx, tidx, xt, yt, xv, yv
        torch.stack(scores).cpu()
        # refit on all rows at a drawn grid point, score a fresh test set
        xtest = torch.randn(n // 4, d, device="cuda")
        if kind == "multiclass":
            lin = torch.nn.Linear(d, ncls).cuda()
            opt = _fit_softmax(lin, x, y, _smoke(100, 2), 0.0)
            with torch.no_grad():
                lin(xtest).softmax(1).max(1).values.mean().cpu()
            del lin, opt
        else:
            x64 = x.double()
            g = x64.t() @ x64 + 10.0 * torch.eye(d, device="cuda", dtype=torch.float64)
            w = torch.linalg.solve(g, x64.t() @ y.double()).float()
            (xtest @ w).std().cpu()
            del x64, g, w
        del x, y, z, wtrue, perm, scores, xtest


# ---------------------------------------------------------------- implicit ALS


def _als_half(rows, cols, conf, fixed, x, reg, nrows, chunk, cg_steps):
    """One half-sweep of implicit ALS: every row's factors solved against the fixed side by a few conjugate-
    gradient steps from its current value (implicit's GPU method): A x = (Y^T Y + reg I) x + sum over observed
    (c - 1) (y . x) y, b = sum over observed c y, products over the interactions in chunks by gather and
    index_add_."""
    yty = fixed.t() @ fixed + reg * torch.eye(fixed.shape[1], device="cuda")
    nnz = rows.shape[0]

    def matvec(p):
        out = p @ yty
        for c0 in range(0, nnz, chunk):
            r, c, w = rows[c0:c0 + chunk], cols[c0:c0 + chunk], conf[c0:c0 + chunk]
            yc = fixed[c]
            s = (yc * p[r]).sum(1) * (w - 1)
            out.index_add_(0, r, yc * s[:, None])
            del yc, s
        return out

    b = torch.zeros_like(x)
    for c0 in range(0, nnz, chunk):
        b.index_add_(0, rows[c0:c0 + chunk], fixed[cols[c0:c0 + chunk]] * conf[c0:c0 + chunk, None])
    res = b - matvec(x)
    p = res
    rs = (res * res).sum(1, keepdim=True)
    for _ in range(cg_steps):
        ap = matvec(p)
        alpha = rs / (p * ap).sum(1, keepdim=True).clamp_min(1e-20)
        x = x + alpha * p
        res = res - alpha * ap
        rsn = (res * res).sum(1, keepdim=True)
        p = res + (rsn / rs.clamp_min(1e-20)) * p
        rs = rsn
        del ap, alpha, rsn
    return x


@_workload("implicit-feedback recommendation by matrix factorization, alternating least squares with conjugate-gradient solves (Hu, Koren and Volinsky 2008; Takacs et al. 2011; the `implicit` library's GPU method) written by hand in torch (fp32): a play-count matrix of 60k-300k users and 20k-120k items with 3M-15M interactions (drawn; item popularity power-law by multinomial, confidence 1 + alpha log(1 + count/eps)), kept as user-major and item-major COO copies (argsort); a sweep of 6 configurations (rank 32-128, regularisation, alpha drawn), each 12-20 ALS iterations (drawn) alternating users and items, each half a Gram matrix of the fixed side and 3 CG steps whose matrix-vector products run over the interactions in chunks of 128k-512k (gather the fixed factors, dot, index_add_); every 4 iterations and at the end recall@50 on 8k held-out users (each with 20 history and 10 test items drawn; their factors folded in by one CG solve, scores by a matmul with all item factors in batches of 2048 users, history masked by scatter_, topk, hits counted by comparison), read back")
def als_implicit_cg(rng):
    nu = rng.randint(_smoke(60_000, 300), _smoke(300_000, 600))
    ni = rng.randint(_smoke(20_000, 100), _smoke(120_000, 200))
    nnz = int(_loguniform(rng, _smoke(3_000_000, 4000), _smoke(15_000_000, 8000)))
    pop = torch.rand(ni, device="cuda") ** 4 + 1e-4
    users = torch.randint(0, nu, (nnz,), device="cuda")
    items = torch.multinomial(pop, nnz, replacement=True)
    counts = torch.randint(1, 50, (nnz,), device="cuda").float()
    o = users.argsort()
    u_rows, u_cols, u_cnt = users[o], items[o], counts[o]
    o = items.argsort()
    i_rows, i_cols, i_cnt = items[o], users[o], counts[o]
    del users, items, counts, o
    neval = _smoke(8192, 64)
    ev_hist = torch.multinomial(pop, neval * 20, replacement=True).view(neval, 20)
    ev_test = torch.multinomial(pop, neval * 10, replacement=True).view(neval, 10)
    ev_rows = torch.arange(neval, device="cuda").repeat_interleave(20)
    for _ in range(_smoke(6, 1)):
        rank = rng.choice(_smoke([32, 48, 64, 96, 128], [8]))
        reg = rng.choice([0.01, 0.05, 0.1])
        alpha = rng.choice([5.0, 20.0, 40.0])
        chunk = rng.choice(_smoke([1 << 17, 1 << 18, 1 << 19], [1024]))
        uf = torch.randn(nu, rank, device="cuda") * 0.01
        itf = torch.randn(ni, rank, device="cuda") * 0.01
        uconf = 1 + alpha * torch.log1p(u_cnt)
        iconf = 1 + alpha * torch.log1p(i_cnt)
        iters = rng.randint(_smoke(12, 2), _smoke(20, 3))

        def recall():
            ef = _als_half(ev_rows, ev_hist.reshape(-1), torch.full((neval * 20,), 1 + alpha, device="cuda"), itf,
                           torch.zeros(neval, rank, device="cuda"), reg, neval, chunk, 3)
            hits = torch.zeros((), device="cuda")
            bs = _smoke(2048, 32)
            for b0 in range(0, neval, bs):
                sc = ef[b0:b0 + bs] @ itf.t()
                sc.scatter_(1, ev_hist[b0:b0 + bs], float("-inf"))
                top = sc.topk(50, 1).indices
                hits = hits + (top[:, :, None] == ev_test[b0:b0 + bs, None, :]).any(1).float().sum()
                del sc, top
            (hits / (neval * 10)).cpu()
            del ef, hits

        for it in range(iters):
            uf = _als_half(u_rows, u_cols, uconf, itf, uf, reg, nu, chunk, 3)
            itf = _als_half(i_rows, i_cols, iconf, uf, itf, reg, ni, chunk, 3)
            if (it + 1) % 4 == 0:
                recall()
        recall()
        del uf, itf, uconf, iconf

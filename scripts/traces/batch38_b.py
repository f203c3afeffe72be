"""The thirty-eighth batch's second half (batch38.py holds the first; written in two to keep files small): materials,
tabular anomaly detection, neural fields and sparse embeddings. A crystal graph convolutional network trained on
batches of crystals of varying atom counts, a deep autoencoding Gaussian mixture model trained on three tabular
datasets one after another and then serving scoring requests of varying row counts (uploaded on a side stream), a
Trans-INR-style hypernetwork serving images rendered at varying output resolutions in chunks of query points, and
skip-gram word2vec with negative sampling updating two large embedding tables by hand (index_add_) with a varying
number of pairs per step. Same conventions and plumbing as batch38.py; record.py registers this module right after
it, so that the batch's workloads keep their order. Three are single-stream; dagmm_anomaly_serve uploads every
request's rows from one reused pinned host buffer on a side stream (the compute stream waits on it, the rows
record_stream'ed). transinr_hypernet_serve runs under bf16 autocast; cgcnn_crystal_train, dagmm_anomaly_serve and
sgns_word2vec_train run in fp32.

Real sizes checked as batch38.py's header says: every workload run whole at its real sizes on the meta device,
its op outputs counted there for the estimates in record_new38.sh's header, and the CPU smoke run on all four.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- CGCNN


class _CGConv(torch.nn.Module):
    """CGCNN's gated convolution: for each atom's M neighbours z = [v_i, v_j, u_ij] -> Linear to 2 x width -> BN,
    sigmoid(filter) * softplus(core) summed over the neighbours, BN, softplus(v_i + sum)."""

    def __init__(self, w, e):
        super().__init__()
        nn = torch.nn
        self.fc = nn.Linear(2 * w + e, 2 * w)
        self.bn1, self.bn2 = nn.BatchNorm1d(2 * w), nn.BatchNorm1d(w)

    def forward(self, v, nbr, ef):  # v (A, w), nbr (A, M), ef (A, M, e)
        f = torch.nn.functional
        A, M = nbr.shape
        z = torch.cat([v[:, None].expand(A, M, v.shape[1]), v[nbr], ef], -1)
        g = self.bn1(self.fc(z).flatten(0, 1)).view(A, M, -1)
        filt, core = g.chunk(2, -1)
        s = self.bn2((torch.sigmoid(filt) * f.softplus(core)).sum(1))
        return f.softplus(v + s)


@_workload("crystal property prediction training, CGCNN (Xie & Grossman 2018) as its Materials-Project formation-energy recipe trains it, written by hand: atom features (92-d one-hot-style, embedded to 64), 12 nearest neighbours per atom with distances expanded in 41 Gaussians (0-8 A, step 0.2), 3 gated graph convolutions of width 64 with BatchNorm, mean pooling per crystal by index_add_ over an atom-to-crystal index, a 128-wide softplus head; each step a batch of 64-256 crystals (drawn) of 4-120 atoms each (drawn per crystal, log-uniform), neighbour indices drawn on the device within each crystal (per-crystal offsets and sizes gathered by the atom-to-crystal index, no host round-trips); MSE on normalized targets, Adam with step decay; every 100 steps an evaluation pass over 4 batches of 256 crystals without grad, the MAE read back; fp32")
def cgcnn_crystal_train(rng):
    nn, f = torch.nn, torch.nn.functional
    nsteps, w, ne, M = _smoke(1700, 3), _smoke(64, 8), _smoke(41, 5), _smoke(12, 3)
    embed = nn.Linear(92, w)
    convs = nn.ModuleList(_CGConv(w, ne) for _ in range(3))
    head = nn.Sequential(nn.Linear(w, _smoke(128, 8)), nn.Softplus(), nn.Linear(_smoke(128, 8), 1))
    model = nn.ModuleList([embed, convs, head]).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2, foreach=True)
    centers = torch.linspace(0, 8, ne, device="cuda")

    def crystals(nc):
        sizes = [max(_smoke(4, 2), int(_loguniform(rng, 4, _smoke(120, 6)))) for _ in range(nc)]
        starts, crys, o = [], [], 0
        for i, n in enumerate(sizes):
            starts.append(o)
            crys.extend([i] * n)
            o += n
        A = o
        ci = torch.tensor(crys, device="cuda")
        st = torch.tensor(starts, device="cuda")[ci]
        sz = torch.tensor(sizes, device="cuda", dtype=torch.float)[ci]
        nbr = st[:, None] + (torch.rand(A, M, device="cuda") * sz[:, None]).long()
        dist = 0.7 + 7.3 * torch.rand(A, M, device="cuda")
        dist = dist.sort(1).values
        ef = torch.exp(-(dist[..., None] - centers) ** 2 / 0.04)
        atoms = f.one_hot(torch.randint(0, 92, (A,), device="cuda"), 92).float()
        cnt = torch.tensor(sizes, device="cuda", dtype=torch.float)
        return atoms, nbr, ef, ci, cnt, nc

    def forward(atoms, nbr, ef, ci, cnt, nc):
        v = embed(atoms)
        for conv in convs:
            v = conv(v, nbr, ef)
        pooled = torch.zeros(nc, v.shape[1], device="cuda").index_add_(0, ci, v) / cnt[:, None]
        return head(pooled).squeeze(-1)

    for step in range(nsteps):
        if step in (nsteps // 2, 3 * nsteps // 4):
            for g in opt.param_groups:
                g["lr"] *= 0.1
        batch = crystals(rng.randint(_smoke(64, 2), _smoke(256, 4)))
        target = torch.randn(batch[-1], device="cuda")
        loss = f.mse_loss(forward(*batch), target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del batch, target, loss
        if (step + 1) % _smoke(100, 2) == 0:
            with torch.no_grad():
                model.eval()
                mae = torch.zeros((), device="cuda")
                for _ in range(_smoke(4, 1)):
                    batch = crystals(_smoke(256, 4))
                    mae += (forward(*batch) - torch.randn(batch[-1], device="cuda")).abs().mean()
                    del batch
                mae.item()
                model.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- DAGMM


class _DAGMM(torch.nn.Module):
    """DAGMM (Zong et al. 2018): a compression autoencoder (tanh) whose code is joined with the reconstruction's
    relative Euclidean distance and cosine similarity, an estimation network giving K mixture memberships."""

    def __init__(self, d, hid, zc, K):
        super().__init__()
        nn = torch.nn
        dims = [d] + list(hid) + [zc]
        enc, dec = [], []
        for a, b in zip(dims[:-1], dims[1:]):
            enc += [nn.Linear(a, b), nn.Tanh()]
        for a, b in zip(dims[::-1][:-1], dims[::-1][1:]):
            dec += [nn.Linear(a, b), nn.Tanh()]
        self.enc, self.dec = nn.Sequential(*enc[:-1]), nn.Sequential(*dec[:-1])
        self.est = nn.Sequential(nn.Linear(zc + 2, 10), nn.Tanh(), nn.Dropout(0.5), nn.Linear(10, K))

    def forward(self, x):
        f = torch.nn.functional
        zc = self.enc(x)
        xr = self.dec(zc)
        rel = (x - xr).norm(dim=1, keepdim=True) / x.norm(dim=1, keepdim=True).clamp_min(1e-6)
        cos = f.cosine_similarity(x, xr, dim=1)[:, None]
        z = torch.cat([zc, rel, cos], 1)
        return z, xr, self.est(z).softmax(1)


def _gmm_params(z, gamma):
    s = gamma.sum(0)
    phi = s / z.shape[0]
    mu = gamma.t() @ z / s[:, None]
    d = z[:, None] - mu[None]
    cov = torch.einsum("nk,nki,nkj->kij", gamma, d, d) / s[:, None, None]
    return phi, mu, cov + 1e-3 * torch.eye(z.shape[1], device=z.device)


def _energy(z, phi, mu, cov):
    d = z[:, None] - mu[None]
    inv = torch.linalg.inv(cov)
    md = torch.einsum("nki,kij,nkj->nk", d, inv, d)
    logdet = torch.logdet(2 * math.pi * cov)
    return -torch.logsumexp(phi.clamp_min(1e-9).log() - 0.5 * md - 0.5 * logdet, 1)


@_workload("tabular anomaly detection trained then served, DAGMM (Zong et al. 2018) as its KDDCUP99/Thyroid/Arrhythmia recipes run it, written by hand: per dataset (KDDCUP-like 120 features with a 60-30-10-1 autoencoder, Thyroid-like 6 features and Arrhythmia-like 274 features with their own widths; K 4 or 2 mixtures) a fresh model trained for 400 steps on minibatches of 512-2048 rows (drawn) with the reconstruction, sample-energy (GMM fitted on each batch's memberships, covariance inverse and log-determinant) and covariance-diagonal penalty losses, Adam; then the mixture fitted on a 16384-row reference pass and a serving loop of 240 requests of 32-16384 rows (drawn log-uniform), each uploaded from one reused pinned host buffer on a side stream (the compute stream waits on it, the rows record_stream'ed), scored by sample energy against the fitted mixture, thresholded at a running 80th percentile (kthvalue over a 8192-score ring buffer) and the flags read back as uint8; fp32, under 1 GB")
def dagmm_anomaly_serve(rng):
    datasets = [(120, (60, 30, 10), 1, 4), (6, (12, 4), 1, 2), (274, (64, 24, 10), 2, 2)]
    ntrain, nreq = _smoke(400, 3), _smoke(720, 3)
    rmax = _smoke(16384, 64)
    side = torch.cuda.Stream()
    host = torch.empty(rmax * 274).pin_memory()
    for d, hid, zc, K in datasets:
        if not _smoke(1, 0):
            hid = (4,)
        model = _DAGMM(d, hid, zc, K).cuda()
        opt = torch.optim.Adam(model.parameters(), lr=1e-4, foreach=True)
        for step in range(ntrain):
            x = torch.randn(rng.randint(_smoke(512, 16), _smoke(2048, 32)), d, device="cuda")
            z, xr, gamma = model(x)
            phi, mu, cov = _gmm_params(z, gamma)
            e = _energy(z, phi, mu, cov).mean()
            pen = (1 / torch.diagonal(cov, dim1=1, dim2=2)).sum()
            loss = (x - xr).pow(2).sum(1).mean() + 0.1 * e + 0.005 * pen
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            del x, z, xr, gamma, phi, mu, cov, e, pen, loss
        model.eval()
        with torch.no_grad():
            z, _, gamma = model(torch.randn(_smoke(16384, 64), d, device="cuda"))
            phi, mu, cov = _gmm_params(z, gamma)
            ring = _energy(z[:_smoke(8192, 32)], phi, mu, cov)
            pos = 0
            del z, gamma
            for r in range(nreq // len(datasets)):
                n = int(_loguniform(rng, _smoke(32, 2), rmax))
                host[:d].normal_()  # the request's first row read in (the rest of the buffer reused)
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):
                    rows = host[:n * d].to("cuda", non_blocking=True).view(n, d)
                torch.cuda.current_stream().wait_stream(side)
                rows.record_stream(torch.cuda.current_stream())
                zz, _, _ = model(rows)
                score = _energy(zz, phi, mu, cov)
                k = min(n, ring.shape[0] - pos)
                ring[pos:pos + k] = score[:k]
                pos = (pos + k) % ring.shape[0]
                th = ring.kthvalue(int(0.8 * ring.shape[0])).values
                (score > th).to(torch.uint8).cpu()
                del rows, zz, score, th
        del model, opt, ring
    torch.cuda.synchronize()


# ---------------------------------------------------------------- Trans-INR hypernetwork serving


class _TBlock(torch.nn.Module):
    def __init__(self, d, h):
        super().__init__()
        nn = torch.nn
        self.h = h
        self.n1, self.qkv, self.o = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.n2, self.ff = nn.LayerNorm(d), nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        B, L, D = x.shape
        q, k, v = self.qkv(self.n1(x)).view(B, L, 3, self.h, D // self.h).permute(2, 0, 3, 1, 4)
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        x = x + self.o(a.transpose(1, 2).reshape(B, L, D))
        return x + self.ff(self.n2(x))


@_workload("neural-field serving with a transformer hypernetwork, Trans-INR (Chen & Wang 2022) written by hand (inference, random weights): a 6-layer transformer encoder (width 512, 8 heads) reads an input image's 8x8 patch tokens together with learned weight tokens (one per column group of each INR layer) and emits them as per-image modulations of a shared base INR (Fourier features of 128 frequencies then 4 hidden layers of 256, the weight columns group-wise rescaled by the emitted tokens and renormalized); 2450 requests of 1-12 images (drawn) at 32, 64 or 96 px input (drawn per request) each rendered at an output resolution of 48-512 px (drawn per request, super-resolution queries) by batched per-image bmm over chunks of at most 65536 query points per image, the RGB chunks written into an output buffer and the uint8 images read back; bf16 autocast under inference_mode")
def transinr_hypernet_serve(rng):
    nn = torch.nn
    D, depth, heads = _smoke(512, 32), _smoke(6, 1), _smoke(8, 2)
    nfreq, hid, nlayers, groups = _smoke(128, 4), _smoke(256, 16), 4, _smoke(32, 4)
    nreq, p = _smoke(2450, 2), _smoke(8, 8)
    dims = [2 * nfreq] + [hid] * nlayers + [3]
    base = nn.ParameterList(nn.Parameter(torch.randn(a + 1, b) / math.sqrt(a)) for a, b in zip(dims[:-1], dims[1:]))
    ntok = groups * (len(dims) - 1)
    hyper = nn.ModuleDict(dict(
        patch=nn.Linear(3 * p * p, D), blocks=nn.Sequential(*[_TBlock(D, heads) for _ in range(depth)]),
        norm=nn.LayerNorm(D),
        outs=nn.ModuleList(nn.Linear(D, b // groups if b >= groups else b) for b in dims[1:])))
    model = nn.ModuleList([hyper, base]).cuda()
    wtok = torch.randn(1, ntok, D, device="cuda") * 0.02
    pos = torch.randn(1, (96 // p) ** 2, D, device="cuda") * 0.02
    freqs = torch.randn(2, nfreq, device="cuda") * 10
    model.eval()
    with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
        for r in range(nreq):
            B = rng.randint(1, _smoke(12, 2))
            res = rng.choice((32, 64, 96)) if _smoke(1, 0) else 16
            out = rng.randint(_smoke(3, 1), _smoke(32, 2)) * 16
            img = torch.rand(B, 3, res, res, device="cuda")
            tok = img.unfold(2, p, p).unfold(3, p, p).permute(0, 2, 3, 1, 4, 5).reshape(B, -1, 3 * p * p)
            x = hyper["patch"](tok) + pos[:, :tok.shape[1]]
            x = hyper["norm"](hyper["blocks"](torch.cat([x, wtok.expand(B, -1, -1)], 1)))[:, -ntok:]
            weights = []
            for i, (w0, head) in enumerate(zip(base, hyper["outs"])):
                t = x[:, i * groups:(i + 1) * groups]
                mod = head(t)  # (B, groups, cols_per_group)
                wb = w0[None].expand(B, -1, -1)
                if w0.shape[1] >= groups:
                    m = mod.flatten(1)[:, None, :]
                    wmod = wb[:, :-1] * m
                    wmod = wmod / wmod.norm(dim=1, keepdim=True).clamp_min(1e-6)
                    wb = torch.cat([wmod, wb[:, -1:]], 1)
                weights.append(wb)
            ys = torch.linspace(-1, 1, out, device="cuda")
            coords = torch.stack(torch.meshgrid(ys, ys, indexing="ij"), -1).view(1, -1, 2).expand(B, -1, -1)
            rgb = torch.empty(B, out * out, 3, device="cuda")
            chunk = _smoke(65536, 256)
            for c0 in range(0, out * out, chunk):
                q = coords[:, c0:c0 + chunk]
                pe = q @ freqs
                h = torch.cat([pe.sin(), pe.cos()], -1)
                for li, wb in enumerate(weights):
                    h = torch.baddbmm(wb[:, -1:], h, wb[:, :-1])
                    if li < len(weights) - 1:
                        h = torch.relu(h)
                rgb[:, c0:c0 + chunk] = torch.sigmoid(h.float())
                del q, pe, h
            (rgb * 255).to(torch.uint8).view(B, out, out, 3).cpu()
            del img, tok, x, weights, coords, rgb
    torch.cuda.synchronize()


# ---------------------------------------------------------------- word2vec SGNS


@_workload("word-embedding training, skip-gram with negative sampling (word2vec, Mikolov et al. 2013) as its C tool and Hogwild-style GPU ports train it, written by hand with sparse updates: input and output tables of 1M x 300 fp32 kept on the device, updated by index_add_ of the gathered rows' gradients (autograd on the gathered rows only, no dense gradient); each step a batch of 64-512 sentences (drawn) of 5-60 tokens (drawn per sentence) with a reduced window of 1-5 per sentence (drawn), so 0.6k-230k (centre, context) pairs a step, frequent-word subsampling as a float keep weight, 5 negatives per pair drawn by torch.multinomial from the unigram^0.75 table, the sum of log-sigmoid losses, the learning rate decaying linearly from 0.025; 9000 steps; every 1000 steps a nearest-neighbour probe (256 query words against a 100k-word normalized slice of the input table, topk 10) read back; fp32")
def sgns_word2vec_train(rng):
    V, dim, neg = _smoke(1000000, 500), _smoke(300, 8), 5
    nsteps = _smoke(9000, 3)
    emb_in = (torch.rand(V, dim, device="cuda") - 0.5) / dim
    emb_out = torch.zeros(V, dim, device="cuda")
    ranks = torch.arange(1, V + 1, device="cuda", dtype=torch.float)
    freq = 1.0 / ranks  # Zipf
    freq = freq / freq.sum()
    unigram = freq.pow(0.75)
    keep_p = ((1e-4 / freq).sqrt() + 1e-4 / freq).clamp(max=1.0)
    for step in range(nsteps):
        lr = max(0.025 * (1 - step / nsteps), 0.025 * 1e-4)
        ns = rng.randint(_smoke(64, 2), _smoke(512, 4))
        npairs = 0
        for _ in range(ns):  # a sentence of n tokens with a reduced window w: about 2 n w pairs
            npairs += 2 * rng.randint(5, 60) * rng.randint(1, 5)
        npairs = min(npairs, _smoke(230000, 4096))
        center = torch.multinomial(freq, npairs, replacement=True)
        context = torch.multinomial(freq, npairs, replacement=True)
        negs = torch.multinomial(unigram, npairs * neg, replacement=True).view(npairs, neg)
        keep = (torch.rand(npairs, device="cuda") < keep_p[center]).float()
        vin = emb_in.index_select(0, center).requires_grad_()
        vout = emb_out.index_select(0, context).requires_grad_()
        vneg = emb_out.index_select(0, negs.flatten()).view(npairs, neg, dim).requires_grad_()
        pos = torch.nn.functional.logsigmoid((vin * vout).sum(1))
        ng = torch.nn.functional.logsigmoid(-torch.bmm(vneg, vin[:, :, None]).squeeze(2)).sum(1)
        loss = -((pos + ng) * keep).sum()
        gin, gout, gneg = torch.autograd.grad(loss, (vin, vout, vneg))
        with torch.no_grad():
            emb_in.index_add_(0, center, gin, alpha=-lr)
            emb_out.index_add_(0, context, gout, alpha=-lr)
            emb_out.index_add_(0, negs.flatten(), gneg.flatten(0, 1), alpha=-lr)
        del center, context, negs, keep, vin, vout, vneg, pos, ng, loss, gin, gout, gneg
        if (step + 1) % _smoke(1000, 2) == 0:
            with torch.no_grad():
                sl = torch.nn.functional.normalize(emb_in[:_smoke(100000, 200)], dim=1)
                qi = torch.randint(0, sl.shape[0], (_smoke(256, 4),), device="cuda")
                sim = sl[qi] @ sl.t()
                sim.topk(10, dim=1).indices.cpu()
                del sl, qi, sim
    torch.cuda.synchronize()

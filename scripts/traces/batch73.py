"""The seventy-third batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch71_b.py are): mathematics and symbolic reasoning, written in torch alone, first half. End-to-end transformer
symbolic regression (random expression trees over up to three variables drawn on the device as heap-ordered complete
trees with per-node leaf/unary/binary choices, evaluated bottom-up on drawn point sets, serialised in prefix notation by
a stable argsort that compacts the used nodes; a set encoder over the (x, y) points and a causal decoder of the prefix
tokens, greedy decoding at evaluation points), PDE and ODE equation discovery (PDE-FIND and SINDy: Burgers, KdV and
Kuramoto-Sivashinsky simulated pseudo-spectrally with integrating-factor RK4, Lorenz and Rossler trajectories by RK4,
noise, spectral and Savitzky-Golay derivatives, candidate-term libraries, sequentially thresholded ridge regression
over a sweep of tolerances by batched Cholesky solves, bootstrap ensembles for inclusion probabilities), a
transformer on integer sequences (linear recurrences, polynomials and inhomogeneous recurrences generated on the device,
terms tokenised as a sign and two base-1,000 digits, next-token training, greedy continuation of held-out sequences
with an exact-match score), and a neural premise-selection service (a dual encoder of formula tokens trained by
InfoNCE, a premise library embedded on the device, requests of goals uploaded on a side stream, chunked similarity
search with running top-k merges and cross-encoder reranking of the candidates). Same conventions as the earlier
batches: nothing downloaded, data drawn at random on the device (or, for the premise-selection service, from two
reused pinned host buffers), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: tree
depths, recurrence lengths, simulation steps, thresholding iterations and decoding lengths are fixed on the host,
masks multiplied in or selected with torch.where, no boolean-mask indexing; losses, accuracies, coefficients and
retrieved ids are read back only at logging points. premise_selection_rerank_serve uses a side stream (uploads waited
on by event, the tensors record_stream'ed); the others are single-stream. The transformers run under bf16 autocast;
the expression evaluation, the simulations and the regressions are fp32 (the normal equations fp64).

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new73.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py
(smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered with dummies, autocast a no-op so that fp32
sizes are counted, streams, events and pinned memory no-ops), and for which of them the CPU smoke run
(RECORD_SMOKE=1) ran.
"""

import itertools
import math

import torch

from batch_common import Batch
from workload_helpers import SideUploads, rfftfreq

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- shared transformer pieces


class _Block(_nn.Module):
    """A pre-norm transformer block: self-attention (causal or not, an optional additive key mask), an optional
    cross-attention to a memory, a GELU MLP."""

    def __init__(self, d, heads, cross=False):
        super().__init__()
        self.h = heads
        self.n1, self.n3 = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.proj = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.cross = cross
        if cross:
            self.n2 = _nn.LayerNorm(d)
            self.q, self.kv, self.o = _nn.Linear(d, d), _nn.Linear(d, 2 * d), _nn.Linear(d, d)
        self.fc1, self.fc2 = _nn.Linear(d, 4 * d), _nn.Linear(4 * d, d)

    def _split(self, t):
        return t.unflatten(-1, (self.h, -1)).transpose(1, 2)

    def forward(self, x, mem=None, causal=False, mask=None):
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        a = _F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        if self.cross:
            k, v = self.kv(mem).chunk(2, -1)
            a = _F.scaled_dot_product_attention(self._split(self.q(self.n2(x))), self._split(k), self._split(v))
            x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(_F.gelu(self.fc1(self.n3(x))))


# ---------------------------------------------------------------- end-to-end symbolic regression

# tokens: 0 PAD, 1 BOS, 2 EOS, 3-6 binary (+ - * /), 7-12 unary (sin cos exp log sqrt sq), 13-15 x0-x2, 16-25 consts
_SR_CONSTS = [-2.0, -1.0, -0.5, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0]
_SR_VOCAB = 26


def _prefix_order(depth):
    out = []

    def visit(k, level):
        out.append(k)
        if level < depth - 1:
            visit(2 * k + 1, level + 1)
            visit(2 * k + 2, level + 1)

    visit(0, 0)
    return out


def _sr_expressions(b, npts, depth, consts):
    """b random expressions as complete heap-ordered trees of `depth` levels, evaluated on npts points of up to 3
    variables: (x (b, npts, 3) with unused variables zeroed, y (b, npts), prefix targets BOS ... EOS PAD (b, nodes+2))."""
    nodes = 2 ** depth - 1
    nleaf_from = 2 ** (depth - 1) - 1
    u = torch.rand(b, nodes, device="cuda")
    p_leaf = torch.full((nodes,), 0.3, device="cuda")
    p_leaf[0] = 0.0
    p_leaf[nleaf_from:] = 1.0
    kind = (u >= p_leaf).long() + (u >= p_leaf + 0.25).long()  # 0 leaf, 1 unary, 2 binary
    nvars = torch.randint(1, 4, (b, 1), device="cuda")
    var = (torch.rand(b, nodes, device="cuda") * nvars).long()
    isvar = torch.rand(b, nodes, device="cuda") < 0.65
    ci = torch.randint(0, len(_SR_CONSTS), (b, nodes), device="cuda")
    leaftok = torch.where(isvar, 13 + var, 16 + ci)
    tok = torch.where(kind == 2, 3 + torch.randint(0, 4, (b, nodes), device="cuda"),
                      torch.where(kind == 1, 7 + torch.randint(0, 6, (b, nodes), device="cuda"), leaftok))
    used = [torch.ones(b, 1, device="cuda", dtype=torch.long)]
    for level in range(depth - 1):
        lo, hi = 2 ** level - 1, 2 ** (level + 1) - 1
        kp = kind[:, lo:hi]
        used.append(torch.stack([used[-1] * (kp >= 1), used[-1] * (kp == 2)], -1).flatten(1))
    used = torch.cat(used, 1)
    x = torch.rand(b, npts, 3, device="cuda") * 6 - 3
    x = x * (torch.arange(3, device="cuda")[None, None] < nvars[:, :, None])
    leafval = torch.where(isvar[:, :, None], x.gather(2, var[:, None, :].expand(b, npts, nodes)).transpose(1, 2),
                          consts[ci][:, :, None])
    val = leafval[:, nleaf_from:]
    for level in range(depth - 2, -1, -1):
        lo, hi = 2 ** level - 1, 2 ** (level + 1) - 1
        a, c = val[:, 0::2], val[:, 1::2]
        cand = torch.stack([a + c, a - c, a * c, a / torch.where(c.abs() < 1e-3, torch.full_like(c, 1e-3), c),
                            a.sin(), a.cos(), a.clamp(max=8).exp(), (a.abs() + 1e-3).log(), a.abs().sqrt(), a * a], -1)
        op = (tok[:, lo:hi] - 3).clamp(0, 9)
        picked = cand.gather(-1, op[:, :, None, None].expand(b, hi - lo, npts, 1))[..., 0]
        val = torch.where(kind[:, lo:hi, None] == 0, leafval[:, lo:hi], picked)
        val = torch.nan_to_num(val, 0.0, 1e4, -1e4).clamp(-1e4, 1e4)
        del a, c, cand, picked
    y = val[:, 0]
    perm = torch.tensor(_prefix_order(depth), device="cuda")
    tokp, usedp = tok[:, perm], used[:, perm]
    order = (1 - usedp).argsort(dim=1, stable=True)
    seq = tokp.gather(1, order) * usedp.gather(1, order)
    length = usedp.sum(1)
    tgt = torch.cat([torch.ones(b, 1, dtype=torch.long, device="cuda"), seq,
                     torch.zeros(b, 1, dtype=torch.long, device="cuda")], 1)
    tgt.scatter_(1, (length + 1)[:, None], 2)
    return x, y, tgt


class _SymRegNet(_nn.Module):
    def __init__(self, d, heads, enc, dec, vocab, maxlen):
        super().__init__()
        self.inp = _nn.Sequential(_nn.Linear(4, d), _nn.GELU(), _nn.Linear(d, d))
        self.enc = _nn.ModuleList(_Block(d, heads) for _ in range(enc))
        self.emb, self.pos = _nn.Embedding(vocab, d), _nn.Embedding(maxlen, d)
        self.dec = _nn.ModuleList(_Block(d, heads, cross=True) for _ in range(dec))
        self.norm, self.out = _nn.LayerNorm(d), _nn.Linear(d, vocab)

    def encode(self, x, y):
        pts = torch.cat([x, y[..., None]], -1)
        h = self.inp(pts.sign() * pts.abs().log1p())
        for blk in self.enc:
            h = blk(h)
        return h

    def decode(self, mem, ids):
        h = self.emb(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
        for blk in self.dec:
            h = blk(h, mem=mem, causal=True)
        return self.out(self.norm(h))


@_workload("end-to-end transformer symbolic regression (random init): random expressions over 1-3 variables drawn on the device as complete trees of 5 levels (31 heap-ordered nodes, each a leaf, one of 6 unary or 4 binary operators; leaves variables or one of 10 constants), evaluated bottom-up on 50-200 points (drawn a step) with every operator computed and the chosen one gathered, serialised in prefix notation by a stable argsort compacting the used nodes; a set encoder (4 blocks, width 256, 8 heads) over sign-log-scaled (x, y) points and a causal decoder (4 blocks with cross-attention) of the prefix tokens, AdamW with warmup and clipping under bf16 autocast, 200 steps of 64-160 expressions (drawn); every 25 steps the loss read back, every 40 steps greedy decoding of 32 tokens for 256 held-out expressions (full recompute each token) and token accuracy read back")
def symbolic_regression_e2e_train(rng):
    d, heads = _smoke(256, 16), _smoke(8, 2)
    depth = _smoke(5, 3)
    maxlen = 2 ** depth + 1
    model = _SymRegNet(d, heads, _smoke(4, 1), _smoke(4, 1), _SR_VOCAB, maxlen + 1).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.01, betas=(0.9, 0.98))
    consts = torch.tensor(_SR_CONSTS, device="cuda")
    steps = _smoke(200, 3)
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = 2e-4 * min(1.0, (step + 1) / 20)
        b = rng.choice(_smoke([64, 96, 128, 160], [4, 6]))
        npts = rng.randint(_smoke(50, 6), _smoke(200, 12))
        model.train()
        with torch.no_grad():
            x, y, tgt = _sr_expressions(b, npts, depth, consts)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model.decode(model.encode(x, y), tgt[:, :-1])
        loss = _F.cross_entropy(logits.float().flatten(0, 1), tgt[:, 1:].flatten(), ignore_index=0)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 25 == 0:
            float(loss)
        del x, y, tgt, logits, loss
        if (step + 1) % _smoke(40, 2) == 0:
            model.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                x, y, tgt = _sr_expressions(_smoke(256, 4), _smoke(100, 8), depth, consts)
                mem = model.encode(x, y)
                ids = tgt[:, :1]
                for _t in range(maxlen - 1):
                    nxt = model.decode(mem, ids)[:, -1].argmax(-1)
                    ids = torch.cat([ids, nxt[:, None]], 1)
                keep = (tgt[:, 1:] != 0).float()
                acc = ((ids[:, 1:] == tgt[:, 1:]).float() * keep).sum() / keep.sum()
            acc.item()
            del x, y, tgt, mem, ids, nxt, keep, acc


# ---------------------------------------------------------------- PDE-FIND / SINDy equation discovery


def _stridge(gram, rhs, tols, lam, iters):
    """Sequentially thresholded ridge regression on normal equations: gram (..., p, p), rhs (..., p), one solve per
    tolerance of tols (T,): coefficients (..., T, p). Inactive terms are pinned to zero by a large ridge penalty."""
    p = gram.shape[-1]
    eye = torch.eye(p, device=gram.device, dtype=gram.dtype)
    g = gram[..., None, :, :]
    r = rhs[..., None, :, None]
    shape = gram.shape[:-2] + (tols.shape[0], p)
    mask = torch.ones(shape, device=gram.device, dtype=gram.dtype)
    w = None
    for _ in range(iters):
        a = g + lam * eye + torch.diag_embed(1e8 * (1 - mask))
        w = torch.cholesky_solve(r.expand(*shape, 1), torch.linalg.cholesky_ex(a).L)[..., 0] * mask
        mask = mask * (w.abs() >= tols[:, None]).to(gram.dtype)
        del a
    return w * mask


def _select(w, gram, rhs, yy, n, eps):
    """The tolerance whose fit (residual from the normal equations) plus eps x nonzeros is least: (..., p)."""
    gw = (gram[..., None, :, :] @ w[..., None])[..., 0]
    resid = (w * gw).sum(-1) - 2 * (w * rhs[..., None, :]).sum(-1) + yy[..., None]
    score = resid / n + eps * (w != 0).to(w.dtype).sum(-1) * yy[..., None] / n
    best = score.argmin(-1)
    return w.gather(-2, best[..., None, None].expand(*w.shape[:-2], 1, w.shape[-1]))[..., 0, :]


def _pde_sim(kind, b, nx, nt, sub, rng):
    """Pseudo-spectral integrating-factor RK4 of Burgers, KdV or Kuramoto-Sivashinsky on a periodic grid for b initial
    conditions: snapshots (b, nt, nx), dt between snapshots, domain length."""
    if kind == "burgers":
        length, dt, nu, c = 2 * math.pi * 4, 0.02, 0.05, -0.5
    elif kind == "kdv":
        length, dt, nu, c = 2 * math.pi * 8, 0.002, 0.0, -3.0
    else:
        length, dt, nu, c = 2 * math.pi * 16, 0.05, 0.0, -0.5
    k = 2 * math.pi * rfftfreq(nx, length / nx)
    if kind == "burgers":
        lin = -nu * k * k
    elif kind == "kdv":
        lin = torch.zeros_like(k)
    else:
        lin = k * k - k ** 4
    ik = 1j * k
    lin_c = lin.to(torch.complex64) + (1j * k ** 3 if kind == "kdv" else 0.0)
    dealias = (k.abs() < (2.0 / 3.0) * k.abs().max()).to(torch.float32)
    e = torch.exp(lin_c * dt / 2)
    e2 = e * e
    x = torch.arange(nx, device="cuda").float() * (length / nx)
    modes = torch.randint(1, 5, (b, 3, 1), device="cuda").float()
    amp, phase = torch.randn(b, 3, 1, device="cuda"), torch.rand(b, 3, 1, device="cuda") * 2 * math.pi
    u0 = (amp * torch.cos(modes * x[None, None] * (2 * math.pi / length) + phase)).sum(1)
    v = torch.fft.rfft(u0)

    def nonlin(vh):
        u = torch.fft.irfft(vh, nx)
        return c * ik * torch.fft.rfft(u * u) * dealias

    snaps = []
    for _i in range(nt):
        for _s in range(sub):
            n1 = nonlin(v)
            va = e * (v + 0.5 * dt * n1)
            n2 = nonlin(va)
            vb = e * v + 0.5 * dt * n2
            n3 = nonlin(vb)
            vc = e2 * v + dt * e * n3
            n4 = nonlin(vc)
            v = e2 * v + dt / 6 * (e2 * n1 + 2 * e * (n2 + n3) + n4)
            del n1, n2, n3, n4, va, vb, vc
        snaps.append(torch.fft.irfft(v, nx))
    return torch.stack(snaps, 1), dt * sub, length


def _ode_sim(kind, b, steps, dt):
    if kind == "lorenz":
        def f(s):
            x, y, z = s.unbind(-1)
            return torch.stack([10 * (y - x), x * (28 - z) - y, x * y - 8.0 / 3.0 * z], -1)
        s = torch.randn(b, 3, device="cuda") * 8 + torch.tensor([0.0, 0.0, 25.0], device="cuda")
    else:
        def f(s):
            x, y, z = s.unbind(-1)
            return torch.stack([-y - z, x + 0.2 * y, 0.2 + z * (x - 5.7)], -1)
        s = torch.randn(b, 3, device="cuda") * 3
    traj = []
    for _ in range(steps):
        k1 = f(s)
        k2 = f(s + 0.5 * dt * k1)
        k3 = f(s + 0.5 * dt * k2)
        k4 = f(s + dt * k3)
        s = s + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        traj.append(s)
    return torch.stack(traj, 1)


@_workload("PDE-FIND and SINDy equation discovery written by hand (no learned weights): 11-12 problems (drawn) from Burgers, KdV and Kuramoto-Sivashinsky (8-16 initial conditions of 3 random modes, 256 or 512 grid points, 140-200 snapshots of 3 integrating-factor RK4 steps, pseudo-spectral with 2/3 dealiasing) and Lorenz and Rossler (96-256 trajectories, 700-1,000 RK4 steps); 0.5-2% noise (drawn), spectral low-pass derivatives up to 4th order or Savitzky-Golay smoothing and differentiation by conv1d, time derivatives by central differences; libraries of 20 candidate terms (u^0..3 x derivatives, or cubic monomials of 3 states) on 40,000-120,000 sampled rows (drawn), column-normalised; sequentially thresholded ridge regression (10 iterations) over 24 tolerances by batched fp64 Cholesky solves (cholesky_ex, no error-check sync) with an argmin model choice, then 32-64 bootstrap ensembles (drawn) of a quarter of the rows for inclusion probabilities; coefficients read back per problem")
def pde_find_sindy_stridge_opt(rng):
    nprob = rng.randint(_smoke(11, 2), _smoke(12, 2))
    kinds = [rng.choice(["burgers", "kdv", "ks", "lorenz", "rossler"]) for _ in range(nprob)]
    if _smoke(False, True):
        kinds = ["ks", "lorenz"]
    ntol = _smoke(24, 4)
    for kind in kinds:
        noise = rng.uniform(0.005, 0.02)
        nrows = rng.randint(_smoke(40000, 64), _smoke(120000, 128))
        if kind in ("lorenz", "rossler"):
            b, steps, dt = rng.randint(_smoke(96, 4), _smoke(256, 6)), rng.randint(_smoke(700, 12), _smoke(1000, 16)), 0.005
            traj = _ode_sim(kind, b, steps, dt)
            traj = traj + noise * traj.std() * torch.randn_like(traj)
            # Savitzky-Golay (window 9, cubic) smoothing and first derivative along time, by conv1d
            win = 9
            tpos = torch.arange(-(win // 2), win // 2 + 1, dtype=torch.float64)
            vand = torch.stack([tpos ** j for j in range(4)], 1)
            pinv = torch.linalg.pinv(vand).float().to("cuda")
            kern = torch.stack([pinv[0], pinv[1] / dt], 0)[:, None]
            sig = traj.permute(0, 2, 1).reshape(b * 3, 1, steps)
            out = _F.conv1d(sig, kern).view(b, 3, 2, steps - win + 1)
            xs, dxs = out[:, :, 0].permute(0, 2, 1).reshape(-1, 3), out[:, :, 1].permute(0, 2, 1).reshape(-1, 3)
            idx = torch.randint(0, xs.shape[0], (nrows,), device="cuda")
            xs, dxs = xs.index_select(0, idx), dxs.index_select(0, idx)
            cols = [torch.ones_like(xs[:, 0])]
            for deg in range(1, 4):
                for comb in itertools.combinations_with_replacement(range(3), deg):
                    c = xs[:, comb[0]]
                    for j in comb[1:]:
                        c = c * xs[:, j]
                    cols.append(c)
            theta = torch.stack(cols, 1)
            targets = dxs
            del traj, sig, out, xs, dxs, idx, cols
        else:
            b, nx = rng.randint(_smoke(8, 2), _smoke(16, 3)), rng.choice(_smoke([256, 512], [32]))
            nt, sub = rng.randint(_smoke(140, 5), _smoke(200, 6)), 3
            u, dts, length = _pde_sim(kind, b, nx, nt, sub, rng)
            u = u + noise * u.std() * torch.randn_like(u)
            k = 2 * math.pi * rfftfreq(nx, length / nx)
            filt = torch.exp(-((k / (0.5 * k.max())) ** 8))
            uh = torch.fft.rfft(u, dim=-1) * filt
            derivs = [torch.fft.irfft(uh * (1j * k) ** j, nx, dim=-1) for j in range(5)]
            ut = (derivs[0][:, 2:] - derivs[0][:, :-2]) / (2 * dts)
            lib = torch.stack([dv[:, 1:-1] for dv in derivs], -1)  # (b, nt-2, nx, 5): u, u_x, ..., u_xxxx
            uu = lib[..., 0:1]
            polys = torch.cat([torch.ones_like(uu), uu, uu * uu, uu * uu * uu], -1)
            full = (polys[..., :, None] * torch.cat([torch.ones_like(uu), lib[..., 1:]], -1)[..., None, :])
            full = full.flatten(-2).reshape(-1, 20)
            idx = torch.randint(0, full.shape[0], (nrows,), device="cuda")
            theta, targets = full.index_select(0, idx), ut.reshape(-1, 1).index_select(0, idx)
            del u, uh, derivs, ut, lib, uu, polys, full, idx
        norms = theta.norm(dim=0).clamp_min(1e-8)
        theta = (theta / norms).double()
        targets = targets.double()
        gram = (theta.T @ theta)[None].expand(targets.shape[1], -1, -1)
        rhs = (theta.T @ targets).T
        yy = (targets * targets).sum(0)
        tols = torch.logspace(-3, 0.5, ntol, device="cuda", dtype=torch.float64) * (yy / nrows).sqrt().mean()
        w = _stridge(gram, rhs, tols, 1e-5 * nrows, 10)
        best = _select(w, gram, rhs, yy, nrows, 1e-3)
        # bootstrap ensemble: a quarter of the rows per member
        ens = rng.randint(_smoke(32, 2), _smoke(64, 3))
        sub_rows = nrows // 4
        bi = torch.randint(0, nrows, (ens, sub_rows), device="cuda")
        tb = theta[bi]
        yb = targets[bi]
        gb = tb.transpose(1, 2) @ tb
        rb = (tb.transpose(1, 2) @ yb).transpose(1, 2)
        yyb = (yb * yb).sum(1)
        gb = gb[:, None].expand(ens, targets.shape[1], -1, -1)
        wb = _stridge(gb, rb, tols, 1e-5 * sub_rows, 10)
        bb = _select(wb, gb, rb, yyb, sub_rows, 1e-3)
        incl = (bb != 0).double().mean(0)
        coef = bb.median(0).values / norms.double()
        torch.stack([best / norms.double(), incl, coef]).tolist()
        del theta, targets, gram, rhs, yy, tols, w, best, bi, tb, yb, gb, rb, yyb, wb, bb, incl, coef, norms


# ---------------------------------------------------------------- transformer on integer sequences

_SEQ_M = 1000000  # terms kept in (-M/2, M/2]: a sign and two base-1,000 digits


def _int_sequences(b, terms):
    """b integer sequences of `terms` terms: linear recurrences of order 1-4, cubic polynomials in n, and first-order
    recurrences with a term linear in n (family per row), reduced into (-M/2, M/2]: tokens (b, 1 + 3 terms)."""
    fam = torch.randint(0, 3, (b,), device="cuda")
    order = torch.randint(1, 5, (b, 1), device="cuda")
    coef = torch.randint(-3, 4, (b, 4), device="cuda") * (torch.arange(4, device="cuda")[None] < order)
    poly = torch.randint(-5, 6, (b, 4), device="cuda")
    aff = torch.randint(-4, 5, (b, 3), device="cuda")
    window = torch.randint(-9, 10, (b, 4), device="cuda")  # last 4 terms, newest first
    half = _SEQ_M // 2
    vals = []
    for n in range(terms):
        nn_ = torch.full((b,), float(n), device="cuda").long()
        lin = (coef * window).sum(1)
        pol = poly[:, 0] + poly[:, 1] * nn_ + poly[:, 2] * nn_ * nn_ + poly[:, 3] * nn_ * nn_ * nn_
        af = aff[:, 0] * window[:, 0] + aff[:, 1] * nn_ + aff[:, 2]
        init = window[:, 3 - min(n, 3)] if n < 4 else lin
        nxt = torch.where(fam == 0, init if n < 4 else lin, torch.where(fam == 1, pol, af if n > 0 else window[:, 0]))
        nxt = torch.remainder(nxt + half, _SEQ_M) - half
        window = torch.cat([nxt[:, None], window[:, :3]], 1)
        vals.append(nxt)
    v = torch.stack(vals, 1)
    mag = v.abs()
    tok = torch.stack([2 + (v < 0).long(), 4 + mag // 1000, 4 + mag % 1000], -1).flatten(1)
    return torch.cat([torch.ones(b, 1, dtype=torch.long, device="cuda"), tok], 1)


class _SeqLM(_nn.Module):
    def __init__(self, vocab, d, heads, layers, maxlen):
        super().__init__()
        self.emb, self.pos = _nn.Embedding(vocab, d), _nn.Embedding(maxlen, d)
        self.blocks = _nn.ModuleList(_Block(d, heads) for _ in range(layers))
        self.norm, self.out = _nn.LayerNorm(d), _nn.Linear(d, vocab)

    def forward(self, ids):
        h = self.emb(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
        for blk in self.blocks:
            h = blk(h, causal=True)
        return self.out(self.norm(h))


@_workload("a transformer on integer sequences (random init): sequences generated on the device per row as linear recurrences of order 1-4 with coefficients in [-3, 3], cubic polynomials in n, or first-order recurrences with a term linear in n, reduced into (-500,000, 500,000], each term tokenised as a sign and two base-1,000 digits (vocabulary 1,004); a decoder-only model (6 blocks, width 384, 6 heads, learned positions up to 160) trained by next-token prediction for 210 steps of 64-256 sequences (drawn) of 12-48 terms (drawn) under bf16 autocast, AdamW with cosine decay; the loss read back every 25 steps, and every 60 steps 256 held-out sequences of 20 terms continued greedily by 4 terms (12 tokens, full recompute) with the exact-match rate of the continued terms read back")
def integer_sequence_transformer_train(rng):
    vocab, d, heads, layers = 1004, _smoke(384, 24), _smoke(6, 2), _smoke(6, 1)
    model = _SeqLM(vocab, d, heads, layers, 160).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.05, betas=(0.9, 0.95))
    steps = _smoke(210, 3)
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = 3e-4 * 0.5 * (1 + math.cos(math.pi * step / steps))
        b = rng.choice(_smoke([64, 96, 128, 192, 256], [3, 5]))
        terms = rng.randint(_smoke(12, 4), _smoke(48, 6))
        model.train()
        with torch.no_grad():
            ids = _int_sequences(b, terms)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(ids[:, :-1])
        loss = _F.cross_entropy(logits.float().flatten(0, 1), ids[:, 1:].flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 25 == 0:
            float(loss)
        del ids, logits, loss
        if (step + 1) % _smoke(60, 2) == 0:
            model.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                ids = _int_sequences(_smoke(256, 4), _smoke(20, 6))
                ctx = ids[:, :-12]
                for _t in range(12):
                    nxt = model(ctx)[:, -1].argmax(-1)
                    ctx = torch.cat([ctx, nxt[:, None]], 1)
                exact = (ctx[:, -12:].view(-1, 4, 3) == ids[:, -12:].view(-1, 4, 3)).all(-1).float().mean()
            exact.item()
            del ids, ctx, nxt, exact


# ---------------------------------------------------------------- premise selection with reranking (side stream)


class _FormulaEncoder(_nn.Module):
    def __init__(self, vocab, d, heads, layers, maxlen, out, normalize=True):
        super().__init__()
        self.normalize = normalize
        self.emb, self.pos = _nn.Embedding(vocab, d), _nn.Embedding(maxlen, d)
        self.blocks = _nn.ModuleList(_Block(d, heads) for _ in range(layers))
        self.norm, self.proj = _nn.LayerNorm(d), _nn.Linear(d, out)

    def hidden(self, ids):
        keep = (ids != 0).to(torch.float32)
        attend = (ids != 0)[:, None, None, :]
        h = self.emb(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
        for blk in self.blocks:
            h = blk(h, mask=attend)
        return self.norm(h), keep

    def forward(self, ids):
        h, keep = self.hidden(ids)
        pooled = (h * keep[..., None]).sum(1) / keep.sum(1, keepdim=True).clamp_min(1.0)
        out = self.proj(pooled).float()
        return _F.normalize(out, dim=-1) if self.normalize else out


def _padded_formulas(b, lo, hi, width, vocab):
    """Random formula token rows of lengths in [lo, hi] right-padded with 0 to width."""
    ids = torch.randint(5, vocab, (b, width), device="cuda")
    lens = torch.randint(lo, hi + 1, (b, 1), device="cuda")
    return ids * (torch.arange(width, device="cuda")[None] < lens)


@_workload("neural premise-selection service (random init): a dual encoder of formula tokens (vocabulary 3,000, 4 blocks of width 256, 4 heads, mean-pooled to 256, normalised) trained first for 120 InfoNCE steps of 128 goal/premise pairs (premises from the goals by token dropout, in-batch negatives, temperature 0.05) under bf16 autocast, and a cross-encoder reranker (2 blocks over goal+premise concatenations, a scalar head) trained alongside by binary cross-entropy; a library of 60,000 premises (16-64 tokens) embedded on the device in chunks of 1,024 and stored fp16 with their tokens; then 400-440 requests (drawn) of 1-16 goals of 24-128 tokens (drawn), uploaded as int32 from 2 reused pinned host buffers on a side stream one request ahead (waited on by event, record_stream'ed): goals encoded, similarity to the library in chunks of 15,000 with a running top-64 merge, the top 32 reranked by the cross-encoder in batches of at most 128 pairs, the 16 best premise ids and scores read back per request")
def premise_selection_rerank_serve(rng):
    vocab, d, heads = 3000, _smoke(256, 16), _smoke(4, 2)
    glen, plen = _smoke(128, 12), _smoke(64, 8)
    enc = _FormulaEncoder(vocab, d, heads, _smoke(4, 1), glen + plen, d).cuda()
    cross = _FormulaEncoder(vocab, d, heads, _smoke(2, 1), glen + plen, 1, normalize=False).cuda()
    opt = torch.optim.AdamW(list(enc.parameters()) + list(cross.parameters()), lr=3e-4, weight_decay=0.01)
    bt = _smoke(128, 4)
    for step in range(_smoke(120, 3)):
        enc.train()
        cross.train()
        gl = rng.randint(_smoke(24, 4), glen)
        goals = _padded_formulas(bt, gl // 2, gl, gl, vocab)
        keep = (torch.rand(bt, gl, device="cuda") > 0.3).long()
        prem = (goals * keep)[:, :plen]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            qg, qp = enc(goals), enc(prem)
            sim = qg @ qp.T / 0.05
            neg = prem.roll(1, 0)
            pairs = torch.cat([torch.cat([goals, prem], 1), torch.cat([goals, neg], 1)], 0)
            sc = cross(pairs)[:, 0].float()
        lab = torch.cat([torch.ones(bt, device="cuda"), torch.zeros(bt, device="cuda")])
        tgt = torch.arange(bt, device="cuda")
        loss = 0.5 * (_F.cross_entropy(sim.float(), tgt) + _F.cross_entropy(sim.float().T, tgt)) + \
            _F.binary_cross_entropy_with_logits(sc, lab)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 20 == 0:
            float(loss)
        del goals, keep, prem, qg, qp, sim, neg, pairs, sc, lab, tgt, loss
    enc.eval().requires_grad_(False)
    cross.eval().requires_grad_(False)

    nlib, chunk = _smoke(60000, 96), _smoke(1024, 32)
    lib_tok = _padded_formulas(nlib, _smoke(16, 3), plen, plen, vocab).to(torch.int32)
    lib = torch.empty(nlib, d, device="cuda", dtype=torch.float16)
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        for s in range(0, nlib, chunk):
            lib[s:s + chunk] = enc(lib_tok[s:s + chunk].long()).half()

    maxg = 16
    host = [torch.randint(5, vocab, (maxg * glen,), dtype=torch.int32).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    schunk, k1, k2, kout = _smoke(15000, 40), _smoke(64, 8), _smoke(32, 6), _smoke(16, 4)
    rbatch = _smoke(128, 8)

    def draw():
        return rng.randint(1, maxg), rng.randint(_smoke(24, 4), glen)

    nreq = rng.randint(_smoke(400, 3), _smoke(440, 4))
    plan = [draw() for _ in range(nreq)]
    nxt = up.upload(0, plan[0][0] * plan[0][1])
    for i in range(nreq):
        g, gl = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, plan[i + 1][0] * plan[i + 1][1])
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            goals = raw.view(g, gl).long()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                q = enc(goals).half()
            best_s = torch.full((g, k1), -1e4, device="cuda", dtype=torch.float16)
            best_i = torch.zeros(g, k1, dtype=torch.long, device="cuda")
            for s in range(0, nlib, schunk):
                sc = q @ lib[s:s + schunk].T
                ts, ti = sc.topk(min(k1, sc.shape[1]), dim=1)
                cs, ci = torch.cat([best_s, ts], 1), torch.cat([best_i, ti + s], 1)
                best_s, pos = cs.topk(k1, dim=1)
                best_i = ci.gather(1, pos)
                del sc, ts, ti, cs, ci, pos
            cand = best_i[:, :k2]
            ptok = lib_tok.index_select(0, cand.flatten()).long()
            pairs = torch.cat([goals.repeat_interleave(k2, 0), ptok], 1)
            scores = []
            with torch.autocast("cuda", dtype=torch.bfloat16):
                for s in range(0, pairs.shape[0], rbatch):
                    scores.append(cross(pairs[s:s + rbatch])[:, 0].float())
            rs = torch.cat(scores).view(g, k2)
            top_s, top_p = rs.topk(kout, dim=1)
            torch.stack([cand.gather(1, top_p).float(), top_s]).tolist()
        del item, raw, goals, q, best_s, best_i, cand, ptok, pairs, scores, rs, top_s, top_p

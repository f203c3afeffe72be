"""The sixty-eighth batch of held-out workloads for record.py, second half (batch68.py has the first): single-cell
and spatial omics and protein design, written in torch alone. Trajectory inference by a neural ODE fitted to
time-course single-cell populations (a bifurcating differentiation drawn in a 30-dim PCA-like latent space at 5-7
time points, a time-conditioned MLP vector field integrated by fixed-step RK4 between consecutive time points, an
entropic optimal-transport loss by log-domain Sinkhorn at a fixed iteration count, an energy penalty and an
RNA-velocity alignment term), a ProteinMPNN-like inverse-folding service (backbones of drawn length uploaded as fp32
atom coordinates from 2 reused pinned host buffers on a side stream one request ahead, kNN graphs by topk over CA
distances, RBF features of 25 backbone atom-pair distances, 3 message-passing encoder layers, then autoregressive
sequence sampling one position at a time in a random decoding order per design with cached decoder states updated by
scatter_, Gumbel-max sampling at a drawn temperature, and a teacher-forced scoring pass of the sampled sequences),
protein backbone diffusion over residue frames (RFdiffusion/FrameDiff-like, simplified: synthetic backbones as frames
of CA translations and rotations, translations noised by a VP schedule and rotations by axis-angle noise through
Rodrigues' formula, an invariant-point-attention-style denoiser with pair bias and frame updates from quaternions,
trained, then reverse sampling), and antibody language-model fine-tuning with masked spans (paired heavy and light
chains of drawn lengths with a drawn CDR-H3, span masking over CDR-H3 or random spans, a pre-norm transformer with a
padding mask, an MLM head and a paratope head, layer-wise learning-rate decay, a CDR-H3 pseudo-log-likelihood
evaluation). Same conventions as batch68.py: nothing downloaded, data drawn at random on the device (or, for the
inverse-folding service, from a few reused pinned host buffers), `rng` the workload's random.Random for every shape,
count and sampled choice, sizes through `_smoke(real, small)`, no control flow that reads a tensor's value, no
boolean-mask indexing, values read back only at logging points. protein_mpnn_design_serve uses a side stream
(uploads waited on by event, the tensors record_stream'ed); the others are single-stream. The antibody LM, the
inverse-folding network and the diffusion denoiser run under bf16 autocast; the neural ODE, Sinkhorn, the frame
algebra and the losses are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after batch68.py's. See
record_new68.sh's header for each workload's op outputs and peak live bytes counted on the meta device
(scripts/traces/meta_run.py) and the CPU smoke run (RECORD_SMOKE=1).
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, _sincos, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- trajectory inference by neural ODE + OT


class _VectorField(_nn.Module):
    def __init__(self, dim, hidden, tdim=16):
        super().__init__()
        self.freqs = _nn.Parameter(torch.exp(torch.linspace(0, 3, tdim // 2)), requires_grad=False)
        self.net = mlp(dim + tdim, hidden, dim, layers=4, act=_nn.SiLU)

    def forward(self, t, x):
        a = self.freqs * t
        tf = torch.cat([a.sin(), a.cos()])[None].expand(x.shape[0], -1)
        return self.net(torch.cat([x, tf], -1))


def _rk4(f, x, t0, t1, n):
    h = (t1 - t0) / n
    energy = 0.0
    for i in range(n):
        t = t0 + i * h
        k1 = f(t, x)
        k2 = f(t + h / 2, x + h / 2 * k1)
        k3 = f(t + h / 2, x + h / 2 * k2)
        k4 = f(t + h, x + h * k3)
        x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        energy = energy + h * k1.pow(2).sum(-1).mean()
    return x, energy


def _sinkhorn_cost(a_pts, b_pts, eps, iters):
    """Entropic OT cost between two uniform point clouds by log-domain Sinkhorn, a fixed number of iterations."""
    c = torch.cdist(a_pts, b_pts).pow(2)
    n, m = c.shape
    loga = torch.full((n,), -math.log(n), device=c.device)
    logb = torch.full((m,), -math.log(m), device=c.device)
    f = torch.zeros(n, device=c.device)
    g = torch.zeros(m, device=c.device)
    for _ in range(iters):
        f = -eps * torch.logsumexp((g[None] - c) / eps + logb[None], 1)
        g = -eps * torch.logsumexp((f[:, None] - c) / eps + loga[:, None], 0)
    logp = (f[:, None] + g[None] - c) / eps + loga[:, None] + logb[None]
    return (logp.exp() * c).sum()


def _branch_population(n, t, centres, dirs, dim):
    """Cells at pseudotime t of a bifurcating process: a shared stem then 3 branches, plus noise; with their
    velocity (the path's derivative plus noise), (n, dim) each."""
    br = torch.randint(0, 3, (n,), device="cuda")
    tt = t + 0.05 * torch.randn(n, 1, device="cuda")
    stem = centres[None] + tt.clamp_max(1.0) * dirs[0][None]
    after = _F.relu(tt - 1.0)
    x = stem + after * dirs[1 + br] + 0.3 * after.pow(2) * dirs[4 + br]
    v = dirs[0][None] * (tt < 1.0).float() + (tt >= 1.0).float() * (dirs[1 + br] + 0.6 * after * dirs[4 + br])
    return x + 0.15 * torch.randn_like(x), v + 0.2 * torch.randn_like(v)


@_workload("trajectory inference by a neural ODE fitted to time-course single-cell data (random init): a bifurcating differentiation (a stem then 3 branches) drawn in a 30-dim PCA-like latent space at 5-7 time points (drawn), populations of 512-1,536 cells per time point (drawn per step) with noisy RNA-velocity vectors; a time-conditioned MLP vector field (4 layers of width 256, SiLU, sinusoidal time features) integrated by fixed-step RK4 (6-10 substeps a interval, drawn) from one time point's cells to the next, an entropic optimal-transport loss against the next population by log-domain Sinkhorn (cdist, 25 logsumexp iterations, fixed), a kinetic-energy penalty and a cosine alignment with the velocities, fp32 Adam, 120 steps; every 30 steps the whole time course integrated from the first time point without grad and the per-time-point Sinkhorn distances read back")
def trajectory_neural_ode_ot_fit(rng):
    dim, hidden = _smoke(30, 6), _smoke(256, 16)
    ntp = rng.randint(5, 7)
    times = [1.5 * i / (ntp - 1) * 1.6 for i in range(ntp)]
    centres = torch.randn(dim, device="cuda")
    dirs = torch.randn(7, dim, device="cuda")
    dirs = dirs / dirs.norm(dim=-1, keepdim=True) * 3.0
    field = _VectorField(dim, hidden).cuda()
    opt = torch.optim.Adam(field.parameters(), lr=1e-3)
    iters = _smoke(25, 3)
    for step in range(_smoke(120, 3)):
        i = rng.randrange(ntp - 1)
        n, m = rng.choice(_smoke([512, 768, 1024, 1536], [8, 12])), rng.choice(_smoke([512, 768, 1024, 1536],
                                                                                     [8, 12]))
        x0, v0 = _branch_population(n, times[i], centres, dirs, dim)
        x1, _ = _branch_population(m, times[i + 1], centres, dirs, dim)
        sub = rng.randint(_smoke(6, 2), _smoke(10, 3))
        pred, energy = _rk4(field, x0, times[i], times[i + 1], sub)
        ot = _sinkhorn_cost(pred, x1, 0.5, iters)
        align = 1 - _F.cosine_similarity(field(times[i], x0), v0, dim=-1).mean()
        loss = ot + 0.01 * energy + 0.5 * align
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(field.parameters(), 5.0)
        opt.step()
        del x0, v0, x1, pred, energy, ot, align
        if step % 10 == 0:
            float(loss)
        if (step + 1) % _smoke(30, 2) == 0:
            with torch.no_grad():
                x, _ = _branch_population(_smoke(1024, 8), times[0], centres, dirs, dim)
                dists = []
                for j in range(ntp - 1):
                    x, _ = _rk4(field, x, times[j], times[j + 1], _smoke(8, 2))
                    obs, _ = _branch_population(_smoke(1024, 8), times[j + 1], centres, dirs, dim)
                    dists.append(_sinkhorn_cost(x, obs, 0.5, iters))
                torch.stack(dists).tolist()
                del x, obs, dists


# ---------------------------------------------------------------- ProteinMPNN-like inverse folding service


def _rbf(d, lo=2.0, hi=22.0, n=16):
    mu = torch.linspace(lo, hi, n, device=d.device)
    sigma = (hi - lo) / n
    return torch.exp(-((d[..., None] - mu) / sigma) ** 2)


class _MPNNLayer(_nn.Module):
    def __init__(self, c, cin, edge_update):
        super().__init__()
        self.w = mlp(c + cin, c, c, layers=3, act=_nn.GELU)
        self.n1, self.n2 = _nn.LayerNorm(c), _nn.LayerNorm(c)
        self.ff = mlp(c, 4 * c, c, layers=2, act=_nn.GELU)
        self.e = mlp(c + cin, c, c, layers=3, act=_nn.GELU) if edge_update else None
        self.n3 = _nn.LayerNorm(c) if edge_update else None

    def node(self, hv, hx, scale=30.0):
        """hv (..., 1 or L, c) nodes, hx (..., K, cin) their neighbourhood features."""
        msg = self.w(torch.cat([hv[..., None, :].expand(*hx.shape[:-1], hv.shape[-1]), hx], -1)).sum(-2) / scale
        hv = self.n1(hv + msg)
        return self.n2(hv + self.ff(hv))


class _ProteinMPNN(_nn.Module):
    def __init__(self, c, layers, k, vocab=21):
        super().__init__()
        self.k, self.c = k, c
        self.pos = _nn.Linear(66, 16)
        self.edge = _nn.Linear(25 * 16 + 16, c)
        self.enc = _nn.ModuleList([_MPNNLayer(c, 2 * c, True) for _ in range(layers)])
        self.dec = _nn.ModuleList([_MPNNLayer(c, 3 * c, False) for _ in range(layers)])
        self.ws = _nn.Embedding(vocab, c)
        self.out = _nn.Linear(c, vocab)

    def encode(self, x):
        """x (L, 4, 3) backbone N, CA, C, O -> nodes (L, c), edges (L, K, c), neighbours (L, K)."""
        n_, ca, c_ = x[:, 0], x[:, 1], x[:, 2]
        b, cc = ca - n_, c_ - ca
        cb = -0.58273431 * torch.cross(b, cc, dim=-1) + 0.56802827 * b - 0.54067466 * cc + ca
        atoms = torch.cat([x, cb[:, None]], 1)  # (L, 5, 3)
        d = torch.cdist(ca, ca)
        _, nbr = d.topk(self.k, largest=False)
        pair = (atoms[:, None, :, None] - atoms[nbr][:, :, None, :]).pow(2).sum(-1).add(1e-6).sqrt()
        rel = (nbr - torch.arange(x.shape[0], device=x.device)[:, None]).clamp(-32, 32) + 32
        relf = torch.zeros(*rel.shape, 66, device=x.device).scatter_(-1, rel[..., None], 1.0)
        he = self.edge(torch.cat([_rbf(pair).flatten(-3), self.pos(relf)], -1))
        hv = torch.zeros(x.shape[0], self.c, device=x.device, dtype=he.dtype)
        for layer in self.enc:
            hx = torch.cat([he, hv[nbr]], -1)
            hv = layer.node(hv, hx)
            hx = torch.cat([he, hv[nbr]], -1)
            he = layer.n3(he + layer.e(torch.cat([hv[:, None].expand_as(he), hx], -1)))
        return hv, he, nbr


@_workload("ProteinMPNN-like inverse-folding service (random init): 20-22 design requests (drawn) of backbones of 64-256 residues (drawn) whose fp32 N, CA, C, O coordinates arrive in 2 reused pinned host buffers uploaded on a side stream one request ahead (waited on by event, record_stream'ed); a virtual CB, a kNN graph by topk 32 over CA distances, RBF features of the 25 backbone atom-pair distances and relative-position features, 3 message-passing encoder layers with edge updates (width 128) under bf16 autocast; then 4-32 sequences a request (drawn) sampled autoregressively one position at a time in a random decoding order per sequence (argsort of uniforms), 3 decoder layers over each position's neighbourhood mixing decoded and encoder-only context by the order mask, cached layer states written back by scatter_, Gumbel-max sampling at a drawn temperature; a teacher-forced scoring pass of the sampled sequences (per-residue log-likelihoods) and the sequence recovery read back each request")
def protein_mpnn_design_serve(rng):
    c, layers, k = _smoke(128, 16), _smoke(3, 1), _smoke(32, 4)
    model = _ProteinMPNN(c, layers, k).cuda().eval()
    lmax = _smoke(256, 12)
    # a pool of helix-like backbones on the host, filled once: residue i at a helical CA position plus a drift
    host = []
    for s in range(2):
        g = torch.Generator().manual_seed(1000 + s)
        i = torch.arange(lmax).float()
        ca = torch.stack([2.3 * torch.cos(1.745 * i), 2.3 * torch.sin(1.745 * i), 1.5 * i], -1)
        ca = ca + torch.cumsum(0.3 * torch.randn(lmax, 3, generator=g), 0)
        off = torch.randn(4, 3, generator=g) * 1.3
        off[1] = 0
        host.append((ca[:, None] + off[None] + 0.1 * torch.randn(lmax, 4, 3, generator=g)).flatten().pin_memory())
    up = SideUploads(host)
    nreq = rng.randint(_smoke(20, 2), _smoke(22, 3))
    plan = [(rng.choice(_smoke([64, 96, 128, 160, 192, 256], [8, 12])), rng.choice(_smoke([4, 8, 16, 32], [2, 3])),
             rng.choice([0.1, 0.2, 0.3])) for _ in range(nreq)]
    nxt = up.upload(0, plan[0][0] * 12)
    with torch.no_grad():
        for r in range(nreq):
            L, B, temp = plan[r]
            xh, ev = nxt
            if r + 1 < nreq:
                nxt = up.upload(r + 1, plan[r + 1][0] * 12)
            cur = torch.cuda.current_stream()
            cur.wait_event(ev)
            xh.record_stream(cur)
            x = xh.view(L, 4, 3)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                hv, he, nbr = model.encode(x)
            hv, he = hv.float(), he.float()
            native = torch.randint(0, 20, (L,), device="cuda")
            # encoder-only context of every position's neighbourhood: [h_E, 0 (no sequence), h_V_enc]
            hexv = torch.cat([he, torch.zeros_like(he), hv[nbr]], -1)  # (L, K, 3c)
            order = torch.argsort(torch.rand(B, L, device="cuda"), -1)
            rank = torch.argsort(order, -1)  # rank[b, pos] = the step at which pos is decoded
            stack = [hv[None].expand(B, L, c).clone() for _ in range(layers + 1)]
            hs = torch.zeros(B, L, c, device="cuda")
            seq = torch.zeros(B, L, dtype=torch.long, device="cuda")
            xmask = torch.zeros(21, device="cuda")
            xmask[20] = -1e9
            for s in range(L):
                t = order[:, s]  # (B,)
                nb = nbr[t]  # (B, K)
                bw = (rank.gather(1, nb) < s).float()[..., None]
                idx_k = nb[..., None].expand(B, k, c)
                idx_t = t[:, None, None].expand(B, 1, c)
                hs_n = hs.gather(1, idx_k)
                enc_t = hexv[t]
                he_t = he[t]
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    hvt = stack[0].gather(1, idx_t)
                    for li, layer in enumerate(model.dec):
                        hx = (bw * torch.cat([he_t, hs_n, stack[li].gather(1, idx_k)], -1) + (1 - bw) * enc_t)[:, None]
                        hvt = layer.node(hvt, hx).float()
                        stack[li + 1].scatter_(1, idx_t, hvt)
                    logits = model.out(hvt).float()[:, 0] / temp + xmask
                g = -torch.log(-torch.log(torch.rand_like(logits).clamp_min(1e-9)))
                st = (logits + g).argmax(-1)
                hs.scatter_(1, idx_t, model.ws(st)[:, None])
                seq.scatter_(1, t[:, None], st[:, None])
                del t, nb, bw, idx_k, idx_t, hs_n, enc_t, he_t, hvt, logits, g, st
            # teacher-forced scoring of the sampled sequences in a fresh random order
            order2 = torch.argsort(torch.rand(B, L, device="cuda"), -1)
            rank2 = torch.argsort(order2, -1)
            bw = (rank2[:, nbr] < rank2[:, :, None]).float()[..., None]  # (B, L, K, 1)
            hs_all = model.ws(seq)
            hv_b = hv[None].expand(B, L, c)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                for layer in model.dec:
                    hx = bw * torch.cat([he[None].expand(B, L, k, c), hs_all[:, nbr], hv_b[:, nbr]], -1) + \
                        (1 - bw) * hexv[None]
                    hv_b = layer.node(hv_b, hx).float()
                logp = torch.log_softmax(model.out(hv_b).float() + xmask, -1)
            ll = logp.gather(-1, seq[..., None])[..., 0].mean(-1)
            rec = (seq == native[None]).float().mean(-1)
            torch.stack([ll, rec], -1).tolist()
            del xh, ev, x, hv, he, nbr, native, hexv, order, rank, stack, hs, seq, order2, rank2, bw, hs_all, hv_b
            del logp, ll, rec


# ---------------------------------------------------------------- protein backbone diffusion over frames


def _rodrigues(w):
    """Axis-angle vectors (..., 3) -> rotation matrices (..., 3, 3)."""
    theta = w.norm(dim=-1, keepdim=True).clamp_min(1e-6)
    kx, ky, kz = (w / theta).unbind(-1)
    z = torch.zeros_like(kx)
    kmat = torch.stack([z, -kz, ky, kz, z, -kx, -ky, kx, z], -1).unflatten(-1, (3, 3))
    s, c = theta.sin()[..., None], theta.cos()[..., None]
    eye = torch.eye(3, device=w.device).expand_as(kmat)
    return eye + s * kmat + (1 - c) * kmat @ kmat


def _quat_to_rot(q):
    q = q / q.norm(dim=-1, keepdim=True)
    a, b, c, d = q.unbind(-1)
    return torch.stack([a * a + b * b - c * c - d * d, 2 * (b * c - a * d), 2 * (b * d + a * c),
                        2 * (b * c + a * d), a * a - b * b + c * c - d * d, 2 * (c * d - a * b),
                        2 * (b * d - a * c), 2 * (c * d + a * b), a * a - b * b - c * c + d * d], -1).unflatten(-1,
                                                                                                                (3, 3))


def _synthetic_backbones(b, L):
    """Helix-like CA traces with smooth random bends (centred, in nm) and their frames (Gram-Schmidt on the
    neighbouring CA vectors): translations (b, L, 3), rotations (b, L, 3, 3)."""
    i = torch.arange(L, device="cuda").float()
    helix = torch.stack([2.3 * torch.cos(1.745 * i), 2.3 * torch.sin(1.745 * i), 1.5 * i], -1)[None]
    bend = torch.cumsum(torch.cumsum(0.02 * torch.randn(b, L, 3, device="cuda"), 1), 1)
    rot = _rodrigues(torch.randn(b, 3, device="cuda"))
    ca = (helix + bend) @ rot.transpose(1, 2)
    ca = (ca - ca.mean(1, keepdim=True)) / 10.0
    nxt = torch.cat([ca[:, 1:], 2 * ca[:, -1:] - ca[:, -2:-1]], 1)
    prv = torch.cat([2 * ca[:, :1] - ca[:, 1:2], ca[:, :-1]], 1)
    e1 = _F.normalize(nxt - ca, dim=-1)
    u2 = prv - ca
    e2 = _F.normalize(u2 - (u2 * e1).sum(-1, keepdim=True) * e1, dim=-1)
    e3 = torch.cross(e1, e2, dim=-1)
    return ca, torch.stack([e1, e2, e3], -1)


class _IPABlock(_nn.Module):
    """Invariant-point-attention-style block: scalar attention with a pair bias and a point-distance term
    (query and key points in each residue's frame, compared in the global frame), point values brought back to
    the local frame, a transition MLP and a frame update from a quaternion and a translation."""

    def __init__(self, c, cz, heads, pts):
        super().__init__()
        self.h, self.p, self.dh = heads, pts, c // heads
        self.qkv = _nn.Linear(c, 3 * c, bias=False)
        self.qkp = _nn.Linear(c, 2 * heads * pts * 3)
        self.vp = _nn.Linear(c, heads * pts * 3)
        self.bias = _nn.Linear(cz, heads, bias=False)
        self.wpt = _nn.Parameter(torch.zeros(heads))
        self.out = _nn.Linear(c + heads * pts * 4 + heads * cz, c)
        self.n1, self.n2 = _nn.LayerNorm(c), _nn.LayerNorm(c)
        self.trans = mlp(c, c, c, layers=3, act=_nn.ReLU)
        self.upd = _nn.Linear(c, 6)

    def forward(self, s, z, rot, tr):
        b, L, c = s.shape
        h, p = self.h, self.p
        q, k, v = self.qkv(s).view(b, L, 3, h, self.dh).unbind(2)
        qp, kp = self.qkp(s).float().view(b, L, 2, h * p, 3).unbind(2)
        vp = self.vp(s).float().view(b, L, h * p, 3)
        glob = lambda x: torch.einsum("blij,blnj->blni", rot, x) + tr[:, :, None]  # noqa: E731
        qg, kg, vg = glob(qp).view(b, L, h, p * 3), glob(kp).view(b, L, h, p * 3), glob(vp)
        d2 = qg.pow(2).sum(-1).transpose(1, 2)[..., None] + kg.pow(2).sum(-1).transpose(1, 2)[:, :, None] \
            - 2 * torch.einsum("bihd,bjhd->bhij", qg, kg)
        logits = torch.einsum("bihd,bjhd->bhij", q, k).float() / math.sqrt(self.dh) \
            + self.bias(z).float().permute(0, 3, 1, 2) - _F.softplus(self.wpt)[None, :, None, None] * d2 * 0.5
        a = torch.softmax(logits, -1)
        o = torch.einsum("bhij,bjhd->bihd", a.to(v.dtype), v).reshape(b, L, c)
        op = torch.einsum("bhij,bjhd->bihd", a, vg.view(b, L, h, p * 3)).reshape(b, L, h * p, 3) - tr[:, :, None]
        op = torch.einsum("blji,blnj->blni", rot, op)
        oz = torch.einsum("bhij,bijc->bihc", a.to(z.dtype), z).reshape(b, L, -1)
        feats = torch.cat([o.float(), op.flatten(-2), op.norm(dim=-1), oz.float()], -1)
        s = self.n1(s + self.out(feats.to(s.dtype)))
        s = self.n2(s + self.trans(s))
        u = self.upd(s).float()
        drot = _quat_to_rot(torch.cat([torch.ones_like(u[..., :1]), u[..., :3]], -1))
        tr = tr + torch.einsum("blij,blj->bli", rot, u[..., 3:] * 0.1)
        return s, rot @ drot, tr


class _FrameDenoiser(_nn.Module):
    def __init__(self, c, cz, heads, pts, blocks):
        super().__init__()
        self.c = c
        self.node = mlp(c // 2 + 21, c, c, layers=2, act=_nn.ReLU)
        self.pair = mlp(32 + 65, cz, cz, layers=2, act=_nn.ReLU)
        self.blocks = _nn.ModuleList([_IPABlock(c, cz, heads, pts) for _ in range(blocks)])

    def forward(self, rot, tr, t):
        b, L = tr.shape[:2]
        idx = torch.arange(L, device=tr.device)
        rel = (idx[None] - idx[:, None]).clamp(-32, 32) + 32
        relf = torch.zeros(L, L, 65, device=tr.device).scatter_(-1, rel[..., None], 1.0)
        d = torch.cdist(tr, tr) * 10.0
        z = self.pair(torch.cat([_rbf(d, 0.0, 20.0, 32), relf[None].expand(b, L, L, 65)], -1))
        posf = _sincos(idx, self.c // 2)[None].expand(b, L, -1)
        tf = _sincos(t * 1000, self.c // 2)[:, None].expand(b, L, -1)
        s = self.node(torch.cat([posf + tf, _rbf(d.mean(-1), 0.0, 20.0, 21)], -1))
        for blk in self.blocks:
            s, rot, tr = blk(s, z, rot, tr)
        return rot, tr


def _abar(t):
    return torch.cos((t + 0.008) / 1.008 * math.pi / 2).pow(2)


@_workload("protein backbone diffusion over residue frames, RFdiffusion/FrameDiff-like and simplified (random init): synthetic helix-like backbones with smooth random bends (64-256 residues, drawn per batch, batches under a 4,096-residue budget) as frames of CA translations and Gram-Schmidt rotations; translations noised by a cosine VP schedule and rotations by Gaussian axis-angle noise composed through Rodrigues' formula; a 4-block invariant-point-attention-style denoiser (width 128, 8 heads, 4 query points a head, a 64-channel pair representation from RBF distances and relative positions, pair bias, point-distance logits, pair-weighted outputs, frame updates from quaternions) under bf16 autocast with the frame algebra in fp32; translation, rotation (Frobenius) and local pairwise-distance losses, AdamW, gradient clipping, 110 steps; then 2 sampling runs (8 backbones of 96-192 residues, drawn) of 50-70 reverse steps (drawn) interpolating predicted frames, the CA-CA bond-length statistics read back every 10 steps")
def backbone_frame_diffusion_train(rng):
    c, cz, heads, pts, blocks = _smoke(128, 16), _smoke(64, 8), _smoke(8, 2), 4, _smoke(4, 1)
    model = _FrameDenoiser(c, cz, heads, pts, blocks).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.01)
    budget = _smoke(4096, 32)
    for step in range(_smoke(110, 3)):
        model.train()
        L = rng.choice(_smoke([64, 96, 128, 192, 256], [8, 12]))
        b = max(1, budget // L)
        tr0, rot0 = _synthetic_backbones(b, L)
        t = torch.rand(b, device="cuda") * 0.99 + 0.01
        ab = _abar(t)[:, None, None]
        trt = ab.sqrt() * tr0 + (1 - ab).sqrt() * torch.randn_like(tr0)
        rott = rot0 @ _rodrigues(torch.randn(b, L, 3, device="cuda") * (1.5 * t)[:, None, None])
        with torch.autocast("cuda", dtype=torch.bfloat16):
            rotp, trp = model(rott, trt, t)
        lt = (trp - tr0).pow(2).sum(-1).mean()
        lr_ = (rotp - rot0).pow(2).sum((-1, -2)).mean()
        dp, d0 = torch.cdist(trp, trp), torch.cdist(tr0, tr0)
        local = (d0 < 1.0).float()
        ld = ((dp - d0).pow(2) * local).sum() / local.sum()
        loss = lt + 0.5 * lr_ + ld
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        del tr0, rot0, t, ab, trt, rott, rotp, trp, lt, lr_, dp, d0, local, ld
        if step % 10 == 0:
            float(loss)
    model.eval()
    with torch.no_grad():
        for _ in range(2):
            b, L = _smoke(8, 2), rng.choice(_smoke([96, 128, 160, 192], [8]))
            nsteps = rng.randint(_smoke(50, 2), _smoke(70, 3))
            tr = torch.randn(b, L, 3, device="cuda")
            rot = _rodrigues(torch.randn(b, L, 3, device="cuda") * 3)
            for i in range(nsteps, 0, -1):
                t, tn = i / nsteps, (i - 1) / nsteps
                tt = torch.full((b,), t, device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    rotp, trp = model(rot, tr, tt)
                ab, abn = _abar(tt)[0], _abar(torch.full((1,), tn, device="cuda"))[0]
                eps = (tr - ab.sqrt() * trp) / (1 - ab).sqrt().clamp_min(1e-4)
                tr = abn.sqrt() * trp + (1 - abn).sqrt() * eps
                # rotations: step a fraction of the way toward the prediction (geodesic by SVD-free blend)
                frac = 1.0 / i
                blend = (1 - frac) * rot + frac * rotp
                u, _, vh = torch.linalg.svd(blend)
                rot = u @ vh
                if (i - 1) % 10 == 0:
                    bond = (tr[:, 1:] - tr[:, :-1]).norm(dim=-1) * 10
                    torch.stack([bond.mean(), bond.std()]).tolist()
                del tt, rotp, trp, eps, blend, u, vh
            del tr, rot


# ---------------------------------------------------------------- antibody LM fine-tuning with masked spans


class _AbLM(_nn.Module):
    def __init__(self, vocab, d, heads, layers, maxlen):
        super().__init__()
        self.tok, self.pos, self.chain = _nn.Embedding(vocab, d), _nn.Embedding(maxlen, d), _nn.Embedding(3, d)
        self.blocks = _nn.ModuleList([PreNormBlock(d, heads) for _ in range(layers)])
        self.norm = _nn.LayerNorm(d)
        self.mlm = _nn.Linear(d, vocab)
        self.para = mlp(d, d // 2, 1, layers=2, act=_nn.GELU)

    def forward(self, ids, chain, keep):
        x = self.tok(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))[None] + self.chain(chain)
        mask = keep[:, None, None, :]
        for blk in self.blocks:
            x = blk(x, mask)
        x = self.norm(x)
        return self.mlm(x), self.para(x)[..., 0]


@_workload("antibody language-model fine-tuning with masked spans (random init): paired heavy and light chains (heavy 110-130, light 105-115 residues, drawn per sequence) with a drawn CDR-H3 of 8-20 residues, [CLS] heavy [SEP] light [SEP] right-padded to a multiple of 8, batches of 16-48 pairs (drawn); span masking (the whole CDR-H3 or a random span of 3-10, drawn per sequence, built from start and end tensors by arange comparisons) plus 8% random positions, [MASK] by torch.where; an 8-layer pre-norm transformer (width 384, 6 heads, learned positions and chain embeddings, a boolean key-padding mask through SDPA), an MLM head and a paratope head (BCE on synthetic CDR contact labels), layer-wise learning-rate decay by parameter group, bf16 autocast, AdamW with warm-up, gradient clipping, 300 steps; every 50 steps a CDR-H3 pseudo-log-likelihood of 6 antibodies (one row per masked position) read back")
def antibody_span_mlm_finetune(rng):
    vocab, d, heads, layers = 24, _smoke(384, 32), _smoke(6, 2), _smoke(8, 1)
    pad, cls, sep, msk = 0, 1, 2, 3
    maxlen = 256
    model = _AbLM(vocab, d, heads, layers, maxlen).cuda()
    groups = [{"params": list(model.tok.parameters()) + list(model.pos.parameters()) + list(model.chain.parameters()),
               "lr": 1e-4 * 0.85 ** layers}]
    for i, blk in enumerate(model.blocks):
        groups.append({"params": blk.parameters(), "lr": 1e-4 * 0.85 ** (layers - 1 - i)})
    groups.append({"params": list(model.norm.parameters()) + list(model.mlm.parameters()) +
                   list(model.para.parameters()), "lr": 1e-4})
    opt = torch.optim.AdamW(groups, weight_decay=0.01)
    steps = _smoke(300, 3)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 15))

    def make(bsz, whole_h3=None):
        hl = [rng.randint(_smoke(110, 10), _smoke(130, 14)) for _ in range(bsz)]
        ll = [rng.randint(_smoke(105, 8), _smoke(115, 10)) for _ in range(bsz)]
        h3 = [rng.randint(_smoke(8, 2), _smoke(20, 3)) for _ in range(bsz)]
        h3s = [hl[j] - h3[j] - _smoke(11, 2) for j in range(bsz)]
        tot = [hl[j] + ll[j] + 3 for j in range(bsz)]
        s = -(-max(tot) // 8) * 8
        ar = torch.arange(s, device="cuda")[None]

        def col(v):
            return torch.tensor(v, device="cuda")[:, None]

        hl_t, tot_t = col(hl), col(tot)
        ids = torch.randint(4, vocab, (bsz, s), device="cuda")
        ids = torch.where(ar == 0, torch.full_like(ids, cls), ids)
        ids = torch.where((ar == hl_t + 1) | (ar == tot_t - 1), torch.full_like(ids, sep), ids)
        keep = ar < tot_t
        ids = torch.where(keep, ids, torch.full_like(ids, pad))
        chain = (ar > hl_t + 1).long() + keep.long()
        h3a, h3b = col([1 + a for a in h3s]), col([1 + a + b for a, b in zip(h3s, h3)])
        in_h3 = (ar >= h3a) & (ar < h3b)
        h3spans = [(1 + h3s[j], 1 + h3s[j] + h3[j]) for j in range(bsz)]
        if whole_h3 is None:
            spans = []
            for j in range(bsz):
                if rng.random() < 0.5:
                    spans.append((1 + h3s[j], 1 + h3s[j] + h3[j]))
                else:
                    n = rng.randint(3, 10)
                    a = rng.randint(1, tot[j] - n - 2)
                    spans.append((a, a + n))
            sa, sb = col([a for a, _ in spans]), col([b_ for _, b_ in spans])
            masked = (((ar >= sa) & (ar < sb)) | (torch.rand(bsz, s, device="cuda") < 0.08)) & keep & (ids > 3)
        else:
            masked = in_h3
        para = (in_h3.float() * (torch.rand(bsz, s, device="cuda") < 0.6).float())
        return ids, chain, keep, masked, para, h3spans

    for step in range(steps):
        model.train()
        bsz = rng.choice(_smoke([16, 24, 32, 48], [2, 3]))
        ids, chain, keep, masked, para, _ = make(bsz)
        inp = torch.where(masked, torch.full_like(ids, msk), ids)
        w = masked.float()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits, pl = model(inp, chain, keep)
        ce = _F.cross_entropy(logits.float().flatten(0, 1), ids.flatten(), reduction="none")
        mlm = (ce * w.flatten()).sum() / w.sum().clamp_min(1)
        bce = (_F.binary_cross_entropy_with_logits(pl.float(), para, reduction="none") * keep.float()).sum() / \
            keep.float().sum()
        loss = mlm + 0.3 * bce
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        del ids, chain, keep, masked, para, inp, w, logits, pl, ce, mlm, bce
        if step % 10 == 0:
            float(loss)
        if (step + 1) % _smoke(50, 2) == 0:
            model.eval()
            with torch.no_grad():
                ids, chain, keep, _, _, spans = make(_smoke(6, 2), whole_h3=True)
                # one row per (antibody, CDR-H3 position): that position masked alone
                src = [j for j, (a0, b0) in enumerate(spans) for _ in range(a0, b0)]
                pos = torch.tensor([p for a0, b0 in spans for p in range(a0, b0)], device="cuda")[:, None]
                src_t = torch.tensor(src, device="cuda")
                rows = ids[src_t]
                inp = rows.scatter(1, pos, msk)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits, _ = model(inp, chain[src_t], keep[src_t])
                lp = torch.log_softmax(logits.float().gather(1, pos[..., None].expand(-1, 1, vocab))[:, 0], -1)
                pll = lp.gather(-1, rows.gather(1, pos))[:, 0]
                per_ab = torch.zeros(len(spans), device="cuda").index_add_(0, src_t, pll)
                per_ab.tolist()
            del ids, chain, keep, spans, src_t, pos, rows, inp, logits, lp, pll, per_ab

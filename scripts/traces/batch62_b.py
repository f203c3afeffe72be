"""The sixty-second batch of held-out workloads for record.py, second half (batch62.py has the first): quantum
computing and quantum many-body physics on the GPU, written in torch alone. Time evolution of matrix-product states
by TEBD after a quench (disordered XXZ and transverse-field Ising chains of drawn length, two-site gates from
matrix exponentials, sequential sweeps with SVD truncation, the bond dimension growing up to a drawn cap, entropies
and correlation functions measured along the way), exact diagonalisation of frustrated Heisenberg models by Lanczos
(J1-J2 lattices of 16-22 spins drawn, the Hamiltonian applied matrix-free to the 2^n state vector by axis swaps, full
reorthogonalisation against a preallocated Krylov basis, ground-state correlations, then dynamical structure factors
by a second Lanczos per momentum and continued fractions), neural quantum-state tomography in the manner of
Carrasquilla et al. (tetrahedral-POVM measurement records of 16-60 qubits uploaded from reused pinned host buffers on
a side stream one batch ahead, an autoregressive transformer over the outcomes trained by likelihood, evaluations
that sample it site by site and estimate correlators), and GRAPE optimal control of transmon gates (coupled transmons
of 2-3 levels, piecewise-constant drives of 120-480 slices, a robust ensemble of detuning and amplitude errors, every
slice's propagator a matrix exponential, the product by a tree of batched matrix products, autograd through it all).
Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or, for the
tomography, from a few reused pinned host buffers), `rng` the workload's random.Random for every shape, count and
sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a
tensor's value: counts are fixed on the host (time steps, truncation ranks from shapes, Lanczos iterations, sampling
steps), masks multiplied in, no boolean-mask indexing; losses and metrics are read back only at logging points.
povm_transformer_tomography_train uses a side stream (uploads waited on by event, the tensors record_stream'ed); the
others are single-stream. The tomography transformer runs under bf16 autocast; the MPS and GRAPE work is complex64,
the Lanczos fp32 with fp64 tridiagonal algebra.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch62.py's header says the same of its half): every workload of this half was
run on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with the helper's runner
(/tmp/b62/meta_run.py, not committed, a copy of /work/notes/meta_run.py: smoke_cpu.py's patching with "cuda" mapped to
"meta", readbacks answered with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking a math path,
streams, events and pinned memory no-ops; boolean-mask indexing, which the meta device cannot size, is avoided), its
op outputs counted there (events about 1.8x that count) and its peak live bytes tracked: mps_tebd_quench_sim 358,148
op outputs, peak under 0.01 GB (tensors of at most 48 x 2 x 48 complex numbers); heisenberg_lanczos_ed 282,232,
2.21 GB (the Krylov basis of a 2^20-22 state); povm_transformer_tomography_train 316,774, 3.51 GB (in fp32, mostly
the attention matrices of the math path during sampling, far above what flash attention holds on the GPU);
grape_transmon_pulse_opt 274,269, 0.05 GB; all four run whole at their final sizes. record_new62.sh's header has
them too, with the runs that led to resizes. The CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn

_PX = [[0, 1], [1, 0]]
_PY = [[0, -1j], [1j, 0]]
_PZ = [[1, 0], [0, -1]]


# ---------------------------------------------------------------- MPS time evolution (TEBD) after a quench


def _bond_gates(nb, jx, jz, hx, hz, dt, dev="cuda"):
    """exp(-i dt h_b) for every bond b of a chain, h_b = jx (XX + YY) + jz ZZ + fields split between the sites."""
    x, y, z = (torch.tensor(p, dtype=torch.complex64, device=dev) for p in (_PX, _PY, _PZ))
    eye = torch.eye(2, dtype=torch.complex64, device=dev)
    kr = torch.kron
    hb = jx * (kr(x, x) + kr(y, y)) + jz * kr(z, z)
    hloc = (hx[:, None, None] * x + hz[:, None, None] * z).to(torch.complex64)  # (nsite, 2, 2)
    h = hb[None] + 0.5 * (torch.einsum("bij,kl->bikjl", hloc[:-1], eye).reshape(nb, 4, 4)
                          + torch.einsum("ij,bkl->bikjl", eye, hloc[1:]).reshape(nb, 4, 4))
    return torch.linalg.matrix_exp(-1j * dt * h).view(nb, 2, 2, 2, 2)


def _two_site(a, b, g, chi_max, normalize_right):
    """One TEBD bond update: contract, apply the gate, SVD, truncate to chi_max (a rank known from the shapes)."""
    theta = torch.einsum("asb,btc->astc", a, b)
    theta = torch.einsum("stuv,auvc->astc", g, theta)
    la, lc = a.shape[0], b.shape[2]
    u, s, vh = torch.linalg.svd(theta.reshape(la * 2, 2 * lc), full_matrices=False)
    k = min(chi_max, s.shape[0])
    s = s[:k] / torch.linalg.vector_norm(s[:k])
    ent = -(s * s * torch.log(s * s + 1e-12)).sum()
    if normalize_right:  # moving right: left tensor an isometry, singular values into the right one
        na = u[:, :k].reshape(la, 2, k)
        nb = (s.to(vh.dtype)[:, None] * vh[:k]).reshape(k, 2, lc)
    else:
        na = (u[:, :k] * s.to(u.dtype)[None]).reshape(la, 2, k)
        nb = vh[:k].reshape(k, 2, lc)
    return na, nb, ent


def _zz_correlations(mps, rmax, dev="cuda"):
    """<Z_0 Z_r> for r < rmax by left environments (the MPS in canonical-ish form, normalised by <psi|psi>)."""
    z = torch.tensor(_PZ, dtype=torch.complex64, device=dev)
    env_id = torch.ones(1, 1, dtype=torch.complex64, device=dev)
    env_z = None
    out = []
    for i, a in enumerate(mps[:rmax]):
        if env_z is not None:
            val = torch.einsum("ab,asc,st,btc->", env_z, a, z, a.conj())
            out.append(val.real)
        env_id_next = torch.einsum("ab,asc,bsd->cd", env_id, a, a.conj())
        if i == 0:
            env_z = torch.einsum("ab,asc,st,btd->cd", env_id, a, z, a.conj())
        else:
            env_z = torch.einsum("ab,asc,bsd->cd", env_z, a, a.conj())
        env_id = env_id_next
    return torch.stack(out)


@_workload("time evolution of matrix-product states by TEBD after a quench written by hand in torch (complex64): 3 quenches one after another, each a chain of 28-48 sites (drawn) of a disordered XXZ or transverse-field Ising Hamiltonian (couplings and random fields drawn), started from a Neel or all-up product state (bond dimension 1); two-site gates exp(-i dt h_b) from batched matrix exponentials; each time step a left-to-right and a right-to-left sweep over every bond (contract with einsum, apply the gate, SVD, truncate to a drawn cap of 32-64, singular values moved along), so that the bond dimension grows over the run; 60-80 time steps a quench (drawn), the entanglement entropy of every bond kept, <Z_0 Z_r> correlations by left environments every 20 steps, the entropies read back there")
def mps_tebd_quench_sim(rng):
    for quench in range(_smoke(3, 1)):
        nsite = rng.randint(_smoke(28, 4), _smoke(48, 6))
        chi_max = rng.choice(_smoke([32, 48, 64], [4, 6]))
        dt = rng.uniform(0.02, 0.06)
        if rng.random() < 0.5:  # disordered XXZ
            jx, jz = 1.0, rng.uniform(0.5, 1.5)
            hx = torch.zeros(nsite, device="cuda")
            hz = (torch.rand(nsite, device="cuda") * 2 - 1) * rng.uniform(0.5, 3.0)
        else:  # transverse-field Ising with a weak longitudinal field
            jx, jz = 0.0, -1.0
            hx = torch.full((nsite,), rng.uniform(0.5, 1.5), device="cuda")
            hz = torch.full((nsite,), rng.uniform(0.0, 0.2), device="cuda")
        gates = _bond_gates(nsite - 1, jx, jz, hx, hz, dt / 2)  # half steps: each sweep is half the Trotter step
        up = torch.tensor([1.0, 0.0], dtype=torch.complex64, device="cuda")
        dn = torch.tensor([0.0, 1.0], dtype=torch.complex64, device="cuda")
        neel = rng.random() < 0.5
        mps = [(dn if (neel and i % 2) else up).view(1, 2, 1).clone() for i in range(nsite)]
        ents = torch.zeros(nsite - 1, device="cuda")
        nsteps = rng.randint(_smoke(60, 2), _smoke(80, 3))
        for t in range(nsteps):
            for i in range(nsite - 1):
                mps[i], mps[i + 1], ents[i] = _two_site(mps[i], mps[i + 1], gates[i], chi_max, True)
            for i in range(nsite - 2, -1, -1):
                mps[i], mps[i + 1], ents[i] = _two_site(mps[i], mps[i + 1], gates[i], chi_max, False)
            if (t + 1) % _smoke(20, 2) == 0:
                corr = _zz_correlations(mps, nsite // 2)
                torch.cat([ents, corr]).cpu()
                del corr
        del mps, gates, ents, hx, hz


# ---------------------------------------------------------------- exact diagonalisation by Lanczos


def _lattice_bonds(rng, shape, j2):
    """Nearest-neighbour bonds (J1 = 1) of a periodic chain or rectangular lattice, with next-nearest diagonal bonds
    of strength j2 on lattices; (i, j, J) with i < j."""
    bonds = set()
    if len(shape) == 1:
        n = shape[0]
        for i in range(n):
            bonds.add((min(i, (i + 1) % n), max(i, (i + 1) % n), 1.0))
            if j2:
                bonds.add((min(i, (i + 2) % n), max(i, (i + 2) % n), j2))
    else:
        lx, ly = shape

        def site(x, y):
            return (x % lx) * ly + (y % ly)

        for x in range(lx):
            for y in range(ly):
                for dx, dy, jj in ((1, 0, 1.0), (0, 1, 1.0), (1, 1, j2), (1, -1, j2)):
                    a, b = site(x, y), site(x + dx, y + dy)
                    if jj and a != b:
                        bonds.add((min(a, b), max(a, b), jj))
    return sorted(bonds)


def _apply_heisenberg(psi, n, bonds):
    """H psi for H = sum_b J_b S_i.S_j = sum_b J_b (P_ij / 2 - 1/4), P_ij the swap of spins i and j, applied by
    transposing the two axes of the 2^n state."""
    out = psi * (-0.25 * sum(jj for _, _, jj in bonds))
    for i, j, jj in bonds:
        v = psi.view(1 << i, 2, 1 << (j - i - 1), 2, 1 << (n - j - 1)).transpose(1, 3).reshape(-1)
        out.add_(v, alpha=0.5 * jj)
    return out


def _lanczos(v0, k, apply, basis=None):
    """k Lanczos steps from v0; with basis (k, N) preallocated, full reorthogonalisation against it. Returns the
    alphas and betas (device tensors) and the basis."""
    alphas, betas = [], []
    v = v0 / torch.linalg.vector_norm(v0)
    prev, beta = None, None
    for it in range(k):
        if basis is not None:
            basis[it] = v
        w = apply(v)
        alpha = torch.dot(w, v)
        w = w - alpha * v
        if prev is not None:
            w = w - beta * prev
        if basis is not None:  # two passes of classical Gram-Schmidt against everything so far
            for _ in range(2):
                c = basis[: it + 1] @ w
                w = w - c @ basis[: it + 1]
        beta = torch.linalg.vector_norm(w).clamp_min(1e-12)
        alphas.append(alpha)
        betas.append(beta)
        prev, v = v, w / beta
    return torch.stack(alphas).double(), torch.stack(betas).double()


@_workload("exact diagonalisation of frustrated Heisenberg models by Lanczos written by hand in torch: 4 systems one after another, periodic J1-J2 chains or rectangular lattices of 16-22 spins (drawn, e.g. 4x4, 4x5, 3x6, 2x10, 3x7; J2 drawn 0-0.6), the Hamiltonian applied matrix-free to the fp32 state vector of 2^n amplitudes, one axis swap of the reshaped state per bond; 120-170 Lanczos steps (drawn) with two passes of full reorthogonalisation against a preallocated Krylov basis, the tridiagonal matrix diagonalised in fp64 and the ground state rebuilt from the basis; <S_0.S_j> for every j by swaps; then the dynamical structure factor S(q, w) at 4 momenta (drawn), each a second Lanczos of 80-120 steps (no reorthogonalisation) from S^z(q)|0> built from spin bits, continued fractions on a grid of 400 frequencies; the spectra and correlations read back")
def heisenberg_lanczos_ed(rng):
    shapes = [(16,), (18,), (20,), (22,), (4, 4), (4, 5), (3, 6), (2, 10), (3, 7), (2, 11), (4, 5)]
    for system in range(_smoke(4, 1)):
        shape = rng.choice(_smoke(shapes, [(8,), (2, 4)]))
        n = math.prod(shape)
        j2 = rng.choice([0.0, 0.2, 0.4, 0.5, 0.6])
        bonds = _lattice_bonds(rng, shape, j2)
        k = rng.randint(_smoke(120, 6), _smoke(170, 8))

        def apply(v):
            return _apply_heisenberg(v, n, bonds)

        basis = torch.empty(k, 1 << n, device="cuda")
        v0 = torch.randn(1 << n, device="cuda")
        al, be = _lanczos(v0, k, apply, basis)
        tri = torch.diag(al) + torch.diag(be[:-1], 1) + torch.diag(be[:-1], -1)
        evals, evecs = torch.linalg.eigh(tri)
        gs = evecs[:, 0].float() @ basis
        del basis, v0
        gs = gs / torch.linalg.vector_norm(gs)
        e0 = torch.dot(gs, apply(gs))
        corr = []
        for j in range(1, n):
            sw = gs.view(1, 2, 1 << (j - 1), 2, 1 << (n - j - 1)).transpose(1, 3).reshape(-1)
            corr.append(0.5 * torch.dot(gs, sw) - 0.25)
        torch.cat([torch.stack([e0 / n, evals[0].float() / n]), torch.stack(corr)]).cpu()
        del corr
        # dynamical structure factor: S^z(q)|0>, Lanczos without reorthogonalisation, continued fraction
        idx = torch.arange(1 << n, device="cuda")
        omegas = torch.linspace(0, 4, _smoke(400, 16), device="cuda", dtype=torch.float64)
        eta = 0.05
        spectra = []
        for q in rng.sample(range(1, n), 4 if n > 4 else 1):
            phase = [math.cos(2 * math.pi * q * j / n) for j in range(n)]
            sq = torch.zeros(1 << n, device="cuda")
            for j in range(n):
                sq += phase[j] * (0.5 - ((idx >> (n - 1 - j)) & 1).float())
            phi = sq * gs
            norm2 = torch.dot(phi, phi).double()
            del sq
            al2, be2 = _lanczos(phi, rng.randint(_smoke(80, 4), _smoke(120, 5)), apply)
            z = (omegas + e0.double()) + 1j * eta
            g = torch.zeros_like(z)
            for i in range(al2.shape[0] - 1, 0, -1):  # G(z) = |phi|^2 / (z - a0 - b1^2 / (z - a1 - ...))
                g = be2[i - 1] ** 2 / (z - al2[i] - g)
            g = norm2 / (z - al2[0] - g)
            spectra.append(-g.imag / math.pi)
            del phi
        torch.stack(spectra).float().cpu()
        del gs, idx, omegas, spectra


# ---------------------------------------------------------------- neural quantum-state tomography (POVM + transformer)


class _POVMTransformer(_nn.Module):
    """An autoregressive transformer over tetrahedral-POVM outcomes (4 per qubit): a start token, outcome and
    site embeddings, causal pre-norm blocks, 4 logits per position."""

    def __init__(self, nmax, d, depth, heads):
        super().__init__()
        self.tok = _nn.Embedding(5, d)  # 4 outcomes and a start token
        self.pos = _nn.Parameter(torch.randn(1, nmax, d) * 0.02)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(depth))
        self.norm = _nn.LayerNorm(d)
        self.out = _nn.Linear(d, 4)

    def forward(self, prefix, causal):
        # prefix (b, t): the start token then the first t-1 outcomes; logits for outcome t
        b, t = prefix.shape
        h = self.tok(prefix) + self.pos[:, :t]
        for blk in self.blocks:
            h = blk(h, causal[:t, :t].to(h.dtype))
        return self.out(self.norm(h))


@_workload("neural quantum-state tomography in the manner of Carrasquilla et al. (random init): 3 experiments one after another, each 16-60 qubits (drawn) measured with the tetrahedral POVM, the records (one uint8 outcome a qubit) in batches of 256-1,024 shots (drawn) uploaded from reused pinned host buffers on a side stream one batch ahead (waited on by event, record_stream'ed); a fresh autoregressive transformer per experiment (width 128-256 drawn, 4 layers, 4 heads, additive causal mask) trained by negative log-likelihood, bf16 autocast, AdamW with warmup, 220 steps an experiment; then an evaluation that samples 2,048 shots site by site (the full prefix recomputed each site, no grad) and estimates <Z_i Z_i+1> and <X_i> from the POVM's dual frame, plus the held-out likelihood of 4 uploaded batches; correlators and likelihoods read back")
def povm_transformer_tomography_train(rng):
    nmax, bmax = _smoke(60, 8), _smoke(1024, 16)
    host = [torch.randint(0, 4, (bmax * nmax,), dtype=torch.uint8).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    counter = [0]

    def fetch(b, n):
        z, ev = up.upload(counter[0], b * n)
        counter[0] += 1
        return z, ev, b

    def take(item):
        z, ev, b = item
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        z.record_stream(cur)
        return z, b

    # the tetrahedral POVM's dual frame: Q_sigma(a) = 3 s_a . e_sigma for a Pauli sigma
    svec = torch.tensor([[0.0, 0.0, 1.0], [2 * math.sqrt(2) / 3, 0.0, -1 / 3],
                         [-math.sqrt(2) / 3, math.sqrt(2 / 3), -1 / 3], [-math.sqrt(2) / 3, -math.sqrt(2 / 3), -1 / 3]],
                        device="cuda")
    qx, qz = 3 * svec[:, 0], 3 * svec[:, 2]
    for exp in range(_smoke(3, 1)):
        n = rng.randint(_smoke(16, 4), nmax)
        d = rng.choice(_smoke([128, 192, 256], [16, 32]))
        model = _POVMTransformer(n, d, _smoke(4, 2), _smoke(4, 2)).cuda()
        opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=1e-2)
        steps = _smoke(220, 3)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 20))
        causal = torch.triu(torch.full((n, n), -1e4, device="cuda"), 1)
        start = torch.full((bmax, 1), 4, dtype=torch.long, device="cuda")
        plan = [rng.choice(_smoke([256, 512, 768, 1024], [8, 16])) for _ in range(steps)]
        nxt = fetch(plan[0], n)
        model.train()
        for step in range(steps):
            z, b = take(nxt)
            if step + 1 < steps:
                nxt = fetch(plan[step + 1], n)
            x = z.view(b, n).long()
            prefix = torch.cat([start[:b], x[:, :-1]], 1)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(prefix, causal)
            loss = _F.cross_entropy(logits.float().reshape(-1, 4), x.reshape(-1)) * n
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            del z, x, prefix, logits
            if step % 10 == 0:
                float(loss)
        model.eval()
        with torch.no_grad():
            nll = []
            nxt = fetch(bmax, n)
            for i in range(_smoke(4, 1)):
                z, b = take(nxt)
                if i + 1 < _smoke(4, 1):
                    nxt = fetch(bmax, n)
                x = z.view(b, n).long()
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = model(torch.cat([start[:b], x[:, :-1]], 1), causal)
                nll.append(_F.cross_entropy(logits.float().reshape(-1, 4), x.reshape(-1)) * n)
                del z, x, logits
            ns = _smoke(2048, 8)
            seq = torch.full((ns, 1), 4, dtype=torch.long, device="cuda")
            for t in range(n):
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = model(seq, causal)[:, -1].float()
                g = -torch.log(-torch.log(torch.rand(ns, 4, device="cuda").clamp_min(1e-9)))
                a = (logits + g).argmax(-1, keepdim=True)
                seq = torch.cat([seq, a], 1)
                del logits, g, a
            out = seq[:, 1:]
            zz = (qz[out[:, :-1]] * qz[out[:, 1:]]).mean(0)
            xm = qx[out].mean(0)
            torch.cat([torch.stack(nll), zz, xm]).cpu()
            del seq, out, zz, xm, nll
        del model, opt, sched, causal, start


# ---------------------------------------------------------------- GRAPE optimal control of transmon gates


def _ladder(levels, dev="cuda"):
    return torch.diag(torch.sqrt(torch.arange(1, levels, device=dev, dtype=torch.float32)), 1).to(torch.complex64)


def _embed(op, site, levels, nq, dev="cuda"):
    mats = [op if k == site else torch.eye(levels, dtype=torch.complex64, device=dev) for k in range(nq)]
    out = mats[0]
    for m in mats[1:]:
        out = torch.kron(out, m)
    return out


@_workload("GRAPE optimal control of transmon gates written by hand in torch (complex64): 5 gate jobs one after another (CZ, iSWAP or sqrt-iSWAP on two transmons, CCZ on three, an X gate with leakage on one), each transmon of 2-3 levels (drawn) with anharmonicity and an exchange coupling in the rotating frame, x and y drives per transmon, 120-480 piecewise-constant slices (drawn) bounded by tanh; a robust ensemble of 16-64 Hamiltonians (drawn) with detuning and drive-amplitude errors; every slice's propagator a batched matrix exponential, the total the product by a tree of batched matrix products (odd levels padded with the identity); loss 1 - the ensemble's mean gate fidelity on the computational subspace (leakage penalised) plus smoothness and amplitude penalties; Adam, 260-340 steps a job (drawn) with autograd through the matrix exponentials; then the pulse evaluated on an ensemble of 1,024 (no grad) and the fidelity quantiles read back")
def grape_transmon_pulse_opt(rng):
    jobs = ["cz", "iswap", "sqiswap", "ccz", "x"]
    for job in range(_smoke(5, 2)):
        kind = rng.choice(jobs)
        nq = 3 if kind == "ccz" else (1 if kind == "x" else 2)
        levels = rng.choice([2, 3]) if kind != "x" else 3
        if kind == "ccz":
            levels = 2
        dim = levels ** nq
        nslice = rng.randint(_smoke(120, 8), _smoke(480, 12))
        ens = rng.choice(_smoke([16, 32, 64], [2, 4]))
        dt = 0.5  # ns
        a = _ladder(levels)
        ops = [_embed(a, k, levels, nq) for k in range(nq)]
        nops = [o.conj().t() @ o for o in ops]
        alpha = [-2 * math.pi * rng.uniform(0.18, 0.25) for _ in range(nq)]
        det = [2 * math.pi * rng.uniform(-0.02, 0.02) for _ in range(nq)]
        g = 2 * math.pi * rng.uniform(0.005, 0.02)
        h0 = sum(det[k] * nops[k] + 0.5 * alpha[k] * (nops[k] @ nops[k] - nops[k]) for k in range(nq))
        for k in range(nq - 1):
            h0 = h0 + g * (ops[k].conj().t() @ ops[k + 1] + ops[k + 1].conj().t() @ ops[k])
        hc = torch.stack([c for o in ops for c in (0.5 * (o + o.conj().t()), 0.5j * (o.conj().t() - o))])  # (2nq,d,d)
        ndrv = hc.shape[0]
        # the target on the computational subspace (levels 0, 1 of each transmon)
        comp = torch.tensor([sum(((i >> (nq - 1 - k)) & 1) * levels ** (nq - 1 - k) for k in range(nq))
                             for i in range(1 << nq)], device="cuda")
        tgt = torch.eye(1 << nq, dtype=torch.complex64, device="cuda")
        if kind in ("cz", "ccz"):
            tgt[-1, -1] = -1
        elif kind == "iswap":
            tgt[1:3, 1:3] = torch.tensor([[0, 1j], [1j, 0]], dtype=torch.complex64, device="cuda")
        elif kind == "sqiswap":
            r = 1 / math.sqrt(2)
            tgt[1:3, 1:3] = torch.tensor([[r, 1j * r], [1j * r, r]], dtype=torch.complex64, device="cuda")
        else:
            tgt = torch.tensor([[0, 1], [1, 0]], dtype=torch.complex64, device="cuda")
        amax = 2 * math.pi * 0.05
        raw = (0.1 * torch.randn(ndrv, nslice, device="cuda")).requires_grad_(True)
        opt = torch.optim.Adam([raw], lr=0.02)
        eye = torch.eye(dim, dtype=torch.complex64, device="cuda")

        def propagate(ctrl, e_det, e_amp):
            # ctrl (ndrv, N); e_det (E, d, d) Hamiltonian error terms; e_amp (E, ndrv) amplitude errors
            drive = (e_amp[:, :, None] * ctrl[None]).to(torch.complex64)  # (E, ndrv, N)
            h = (h0 + e_det)[:, None] + torch.einsum("ekn,kij->enij", drive, hc)
            u = torch.linalg.matrix_exp(-1j * dt * h)  # (E, N, d, d)
            while u.shape[1] > 1:
                if u.shape[1] % 2:
                    u = torch.cat([u, eye.expand(u.shape[0], 1, dim, dim)], 1)
                u = u[:, 1::2] @ u[:, 0::2]
            return u[:, 0]

        def fidelity(u):
            sub = u[:, comp][:, :, comp]
            m = 1 << nq
            ov = torch.einsum("ij,eij->e", tgt.conj(), sub)
            leak = 1 - (sub.abs() ** 2).sum((1, 2)) / m
            return (ov.abs() ** 2 + m * (1 - leak)) / (m * (m + 1)), leak

        def ensemble(e):
            dd = torch.randn(e, nq, device="cuda") * 2 * math.pi * 0.001
            e_det = torch.einsum("ek,kij->eij", dd.to(torch.complex64), torch.stack(nops))
            e_amp = 1 + 0.02 * torch.randn(e, ndrv, device="cuda")
            return e_det, e_amp

        for step in range(rng.randint(_smoke(260, 3), _smoke(340, 4))):
            ctrl = amax * torch.tanh(raw)
            e_det, e_amp = ensemble(ens)
            u = propagate(ctrl, e_det, e_amp)
            fid, leak = fidelity(u)
            smooth = (ctrl[:, 1:] - ctrl[:, :-1]).pow(2).mean() / amax ** 2
            loss = 1 - fid.mean() + 0.1 * leak.mean() + 0.01 * smooth + 1e-3 * (ctrl / amax).pow(2).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            del ctrl, e_det, e_amp, u, fid, leak, smooth
            if step % 20 == 0:
                float(loss)
        with torch.no_grad():
            ctrl = amax * torch.tanh(raw)
            fids = []
            eb = _smoke(64, 4)
            for _ in range(_smoke(1024, 8) // eb):
                e_det, e_amp = ensemble(eb)
                fids.append(fidelity(propagate(ctrl, e_det, e_amp))[0])
            f = torch.cat(fids)
            torch.quantile(f, torch.tensor([0.05, 0.5, 0.95], device="cuda")).cpu()
            del f, fids, ctrl
        del raw, opt, hc, h0

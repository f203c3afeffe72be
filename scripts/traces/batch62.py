"""The sixty-second batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch61_b.py are): quantum computing and quantum many-body physics on the GPU, written in torch alone, first half.
A batched state-vector simulator optimising QAOA circuits for MaxCut (random 3-regular graphs of 14-20 qubits drawn,
complex64 states of 2^n amplitudes for a batch of parameter restarts, the cost diagonal built from bit operations,
the mixer's RX gates applied qubit by qubit by reshape and einsum, the depth grown layer by layer with interpolated
warm starts, the angles optimised by autograd through the simulator, bitstrings sampled at the end), variational
Monte Carlo of the transverse-field Ising model with a restricted-Boltzmann-machine wavefunction (chains and square
lattices of drawn size, persistent Metropolis chains with single-spin flips, local energies over every flipped
configuration, stochastic reconfiguration with the S matrix formed explicitly in fp64 and solved by Cholesky), a
neural decoder for the rotated surface code (syndromes of distances 3-15 over d rounds with data and measurement
errors generated on the device by convolutions, detection events fed to a fully convolutional 3-D CNN predicting
the two logical flips, a curriculum growing the distance, then an evaluation per distance and error rate), and a
classical-shadow estimation service (randomised Pauli measurement records of 16-96 qubits and 2,000-16,000
snapshots uploaded from reused pinned host buffers on a side stream one request ahead, Pauli observables of drawn
weight estimated by median of means, subsystem purities from snapshot pairs). Same conventions as the earlier
batches: nothing downloaded, data drawn at random on the device (or, for the shadow service, from a few reused
pinned host buffers), `rng` the workload's random.Random for every shape, count and sampled choice, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: counts are fixed
on the host (circuit depths, Metropolis proposals, decoder batches, snapshot chunks), acceptances and masks
multiplied in, no boolean-mask indexing; losses and metrics are read back only at logging points.
classical_shadow_estimate_serve uses a side stream (uploads waited on by event, the tensors record_stream'ed); the
others are single-stream. The decoder CNN runs under bf16 autocast; the state vectors are complex64, the VMC fp32
with an fp64 S matrix, the shadow estimates fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch62_b.py's header says the same of its half): every workload of this half was
run on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with the helper's runner
(/tmp/b62/meta_run.py, not committed, a copy of /work/notes/meta_run.py: smoke_cpu.py's patching with "cuda" mapped to
"meta", readbacks answered with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking a math path,
streams, events and pinned memory no-ops; boolean-mask indexing, which the meta device cannot size, is avoided), its
op outputs counted there (events about 1.8x that count) and its peak live bytes tracked: qaoa_statevector_maxcut_opt
300,436 op outputs, peak 0.83 GB; rbm_vmc_stochastic_reconfig 327,200, 0.47 GB; surface_code_cnn_decoder_train
298,684, 2.20 GB (in fp32 where autocast would take bf16); classical_shadow_estimate_serve 332,809, 0.90 GB; all four
run whole at their final sizes. record_new62.sh's header has them too, with the runs that led to resizes. The CPU
smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import SideUploads

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- QAOA state-vector simulator for MaxCut


def _regular_graph(rng, n, deg=3):
    """A random near-regular graph on n vertices (a pairing of vertex stubs, self-loops and repeats dropped), with
    weights; drawn on the host."""
    for _ in range(50):
        stubs = [v for v in range(n) for _ in range(deg)]
        rng.shuffle(stubs)
        edges = {tuple(sorted(stubs[i:i + 2])) for i in range(0, len(stubs) - 1, 2) if stubs[i] != stubs[i + 1]}
        if len(edges) >= n:
            break
    return sorted(edges), [rng.uniform(0.5, 1.5) for _ in edges]


def _cut_diagonal(n, edges, weights, dev="cuda"):
    """C(z) = sum_(i,j) w_ij (z_i xor z_j) for every computational basis state, from bit operations."""
    idx = torch.arange(1 << n, device=dev)
    c = torch.zeros(1 << n, device=dev)
    for (i, j), w in zip(edges, weights):
        c += w * (((idx >> (n - 1 - i)) ^ (idx >> (n - 1 - j))) & 1).float()
    return c


def _qaoa_state(n, cost, gammas, betas):
    """|gamma, beta> for a batch of angle sets: exp(-i gamma C) then RX(2 beta) on every qubit, layer by layer."""
    bsz, p = gammas.shape
    psi = torch.full((bsz, 1 << n), 1.0 / math.sqrt(1 << n), dtype=torch.complex64, device=cost.device)
    for layer in range(p):
        psi = psi * torch.exp((-1j) * (gammas[:, layer, None] * cost[None]))
        c, s = torch.cos(betas[:, layer]), torch.sin(betas[:, layer])
        rx = torch.stack([torch.stack([c + 0j, -1j * s], -1), torch.stack([-1j * s, c + 0j], -1)], -2)  # (B,2,2)
        for q in range(n):
            v = psi.view(bsz, 1 << q, 2, 1 << (n - q - 1))
            psi = torch.einsum("bij,bajc->baic", rx, v).reshape(bsz, 1 << n)
    return psi


@_workload("QAOA for weighted MaxCut on a batched state-vector simulator written by hand in torch (complex64): 4 random near-3-regular weighted graphs of 14-20 qubits (drawn), the cost diagonal of 2^n entries built from bit operations; a batch of angle restarts filling 2^20 amplitudes (64 restarts at 14 qubits, 1 at 20); each layer exp(-i gamma C) then RX(2 beta) on every qubit by reshape and einsum; the depth grown from 1 to 3-5 (drawn) layer by layer with interpolated warm starts (INTERP), the angles optimised by Adam on -<C> with autograd through the whole circuit, 24-40 steps a depth (drawn); at the end of each graph 4,096 bitstrings a restart sampled by inverse CDF (cumsum and searchsorted), their cut values computed and the best approximation ratio read back")
def qaoa_statevector_maxcut_opt(rng):
    budget = _smoke(1 << 20, 1 << 8)
    for graph in range(_smoke(4, 1)):
        n = rng.randint(_smoke(14, 4), _smoke(20, 6))
        edges, weights = _regular_graph(rng, n)
        cost = _cut_diagonal(n, edges, weights)
        bsz = max(1, budget >> n)
        pmax = rng.randint(_smoke(3, 2), _smoke(5, 2))
        gam = torch.rand(bsz, 1, device="cuda") * 0.8
        bet = torch.rand(bsz, 1, device="cuda") * 0.4
        for p in range(1, pmax + 1):
            if p > 1:  # INTERP: the p-layer schedule interpolated from the (p-1)-layer optimum
                xs = torch.linspace(0, 1, p, device="cuda")
                pos = xs * (p - 2)
                lo = pos.floor().long().clamp(max=p - 2)
                hi = (lo + 1).clamp(max=p - 2)
                fr = (pos - lo.float())[None]
                gam = gam[:, lo] * (1 - fr) + gam[:, hi] * fr
                bet = bet[:, lo] * (1 - fr) + bet[:, hi] * fr
            gamma = gam.detach().clone().requires_grad_(True)
            beta = bet.detach().clone().requires_grad_(True)
            opt = torch.optim.Adam([gamma, beta], lr=0.05)
            for step in range(rng.randint(_smoke(24, 2), _smoke(40, 3))):
                psi = _qaoa_state(n, cost, gamma, beta)
                energy = (psi.abs() ** 2 * cost[None]).sum(1)
                loss = -energy.mean()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                del psi, energy
                if step % 10 == 0:
                    float(loss)
            gam, bet = gamma.detach(), beta.detach()
            del opt, gamma, beta
        with torch.no_grad():
            psi = _qaoa_state(n, cost, gam, bet)
            cdf = torch.cumsum(psi.abs() ** 2, 1)
            del psi
            u = torch.rand(bsz, _smoke(4096, 16), device="cuda") * cdf[:, -1:]
            z = torch.searchsorted(cdf, u).clamp(max=(1 << n) - 1)
            cuts = cost[z]
            ratio = cuts.amax(1) / cost.max()
            ratio.max().item()
            del cdf, u, z, cuts, ratio
        del cost, gam, bet


# ---------------------------------------------------------------- RBM variational Monte Carlo, stochastic reconfig.


def _logcosh(x):
    return x.abs() + torch.log1p(torch.exp(-2 * x.abs())) - math.log(2.0)


@_workload("variational Monte Carlo of the transverse-field Ising model with a restricted-Boltzmann-machine wavefunction written by hand in torch: 3 systems one after another, each a periodic chain of 24-72 spins or a square lattice of 5x5 to 8x8 (drawn), field h/J drawn near criticality, hidden density 1-2 (drawn); 1,024-3,072 persistent Metropolis chains (drawn) with single-spin-flip proposals updating the cached hidden activations, n/2 proposals (half a sweep) between iterations; local energies from all n flipped configurations at once; log-derivatives O of all n + M + nM parameters formed per sample, the S matrix O^T O formed explicitly in fp64 with a diagonal shift and solved by Cholesky (stochastic reconfiguration), 60-75 iterations a system (drawn); energy read back every 10; at the end of each system a longer evaluation run with twice the chains, energy, magnetisation and nearest-neighbour correlations read back")
def rbm_vmc_stochastic_reconfig(rng):
    for system in range(_smoke(3, 1)):
        if rng.random() < 0.5:
            L = rng.randint(_smoke(5, 2), _smoke(8, 3))
            shape = (L, L)
        else:
            shape = (rng.randint(_smoke(24, 4), _smoke(72, 8)),)
        n = math.prod(shape)
        m = n * rng.choice([1, 2])
        hfield = rng.uniform(2.6, 3.4) if len(shape) == 2 else rng.uniform(0.8, 1.2)
        a = torch.zeros(n, device="cuda")
        bvis = torch.randn(m, device="cuda") * 0.01
        w = torch.randn(m, n, device="cuda") * 0.01
        nch = rng.choice(_smoke([1024, 2048, 3072], [32, 48]))

        def thermalise(s, theta, proposals):
            for _ in range(proposals):
                site = torch.randint(0, n, (s.shape[0],), device="cuda")
                oh = _F.one_hot(site, n).float()
                sk = (s * oh).sum(1)
                dtheta = (-2 * sk)[:, None] * (oh @ w.t())
                dlp = -2 * sk * (oh @ a) + (_logcosh(theta + dtheta) - _logcosh(theta)).sum(1)
                acc = (torch.rand(s.shape[0], device="cuda").log() < 2 * dlp).float()[:, None]
                s = s - acc * (2 * sk[:, None] * oh)
                theta = theta + acc * dtheta
            return s, theta

        def local_energy(s, theta):
            sl = s.view(-1, *shape)
            zz = sum((sl * torch.roll(sl, 1, d + 1)).flatten(1).sum(1) for d in range(len(shape)))
            th_all = theta[:, None, :] - 2 * s[:, :, None] * w.t()[None]  # every single flip at once (C, n, M)
            dlp = -2 * s * a + (_logcosh(th_all) - _logcosh(theta)[:, None]).sum(2)
            return -zz - hfield * torch.exp(dlp).sum(1), sl

        s = torch.randint(0, 2, (nch, n), device="cuda").float() * 2 - 1
        theta = s @ w.t() + bvis
        s, theta = thermalise(s, theta, _smoke(2 * n, 4))
        iters = rng.randint(_smoke(60, 2), _smoke(75, 3))
        for it in range(iters):
            s, theta = thermalise(s, theta, max(1, n // 2))
            theta = s @ w.t() + bvis  # refreshed against drift
            eloc, _ = local_energy(s, theta)
            th = torch.tanh(theta)
            o = torch.cat([s, th, (th[:, :, None] * s[:, None, :]).flatten(1)], 1).double()
            oc = o - o.mean(0)
            de = (eloc - eloc.mean()).double()
            grad = oc.t() @ de / nch
            smat = oc.t() @ oc / nch
            shift = max(1e-4, 0.1 * 0.9 ** it)
            smat.diagonal().mul_(1 + shift).add_(1e-4)
            chol = torch.linalg.cholesky(smat)
            dx = torch.cholesky_solve(grad[:, None], chol)[:, 0].float()
            lr = 0.02
            a -= lr * dx[:n]
            bvis -= lr * dx[n:n + m]
            w -= lr * dx[n + m:].view(m, n)
            theta = s @ w.t() + bvis
            del o, oc, de, grad, smat, chol, dx, th
            if it % 10 == 0:
                (eloc.mean() / n).item()
            del eloc
        # evaluation: twice the chains, longer thermalisation, observables
        s2 = torch.randint(0, 2, (2 * nch, n), device="cuda").float() * 2 - 1
        th2 = s2 @ w.t() + bvis
        s2, th2 = thermalise(s2, th2, _smoke(3 * n, 4))
        eloc, sl = local_energy(s2, th2)
        corr = torch.stack([(sl * torch.roll(sl, 1, d + 1)).flatten(1).mean(1) for d in range(len(shape))]).mean()
        torch.stack([eloc.mean() / n, eloc.var() / n, s2.mean(1).abs().mean(), corr]).cpu()
        del s, theta, s2, th2, eloc, sl, a, bvis, w


# ---------------------------------------------------------------- neural surface-code decoder


def _code_masks(d, dev="cuda"):
    """Rotated surface code of distance d: stabiliser positions on the (d+1)x(d+1) grid of plaquette corners;
    interior weight-4 plaquettes alternate X and Z, weight-2 Z checks on the top and bottom edges, X on the left and
    right (their alternate positions)."""
    i = torch.arange(d + 1, device=dev)
    ii, jj = torch.meshgrid(i, i, indexing="ij")
    inner = ((ii > 0) & (ii < d) & (jj > 0) & (jj < d)).float()
    par = ((ii + jj) % 2).float()
    topbot = (((ii == 0) | (ii == d)) & (jj > 0) & (jj < d)).float()
    leftright = (((jj == 0) | (jj == d)) & (ii > 0) & (ii < d)).float()
    mz = inner * par + topbot * par
    mx = inner * (1 - par) + leftright * (1 - par)
    return mx, mz


def _syndromes(b, d, rounds, p, q, masks, dev="cuda"):
    """b shots of rounds rounds of code-capacity-plus-measurement noise: depolarising data errors accumulated, each
    check's parity from a 2x2 convolution of the padded error grid (mod 2), measurement flips of probability q (the
    last round perfect), detection events as differences of consecutive rounds; labels the logical X and Z flips."""
    mx, mz = masks
    u = torch.rand(b, rounds, d, d, device=dev)
    ex_new = ((u < p / 3) | ((u >= 2 * p / 3) & (u < p))).float()  # X or Y
    ez_new = ((u >= p / 3) & (u < p)).float()  # Z or Y
    ex = torch.cumsum(ex_new, 1) % 2
    ez = torch.cumsum(ez_new, 1) % 2
    k = torch.ones(1, 1, 2, 2, device=dev)
    sz = _F.conv2d(_F.pad(ex.view(b * rounds, 1, d, d), (1, 1, 1, 1)), k).view(b, rounds, d + 1, d + 1) % 2 * mz
    sx = _F.conv2d(_F.pad(ez.view(b * rounds, 1, d, d), (1, 1, 1, 1)), k).view(b, rounds, d + 1, d + 1) % 2 * mx
    flip = (torch.rand(b, 2, rounds, d + 1, d + 1, device=dev) < q).float()
    flip[:, :, -1] = 0
    meas = (torch.stack([sx, sz], 1) + flip) % 2 * torch.stack([mx, mz])[None, :, None]
    det = (meas - _F.pad(meas, (0, 0, 0, 0, 1, 0))[:, :, :-1]).abs()
    x = torch.cat([det, torch.stack([mx, mz])[None, :, None].expand(b, 2, rounds, d + 1, d + 1)], 1)
    labels = torch.stack([ex[:, -1, :, 0].sum(-1) % 2, ez[:, -1, 0, :].sum(-1) % 2], 1)
    return x, labels


class _Decoder3D(_nn.Module):
    """A fully convolutional 3-D CNN over (rounds, d+1, d+1) detection events and check masks, residual blocks,
    global average pooling, two logits; the same weights for every distance."""

    def __init__(self, ch, blocks):
        super().__init__()
        self.stem = _nn.Conv3d(4, ch, 3, padding=1)
        self.blocks = _nn.ModuleList(_nn.Sequential(_nn.BatchNorm3d(ch), _nn.ReLU(), _nn.Conv3d(ch, ch, 3, padding=1),
                                                    _nn.BatchNorm3d(ch), _nn.ReLU(), _nn.Conv3d(ch, ch, 3, padding=1))
                                     for _ in range(blocks))
        self.head = _nn.Sequential(_nn.Linear(2 * ch, ch), _nn.ReLU(), _nn.Linear(ch, 2))

    def forward(self, x):
        h = self.stem(x)
        for blk in self.blocks:
            h = h + blk(h)
        return self.head(torch.cat([h.mean((2, 3, 4)), h.amax((2, 3, 4))], 1))


@_workload("neural decoder for the rotated surface code written by hand (random init): syndromes of distance 3-15 over d rounds generated on the device (depolarising data errors of rate p drawn log-uniformly in 0.1-1.5%, accumulated over rounds, each check's parity a 2x2 convolution of the padded error grid mod 2, measurement flips of rate p, the last round perfect), detection events and the X and Z check masks as 4 input channels; a fully convolutional 3-D CNN (48 channels, 4 residual blocks with batch norm, mean and max pooling, 2 logits for the logical X and Z flips) shared by all distances; a curriculum whose largest distance grows from 5 to 15 over training, the distance drawn per step and the batch fitting 600,000 voxels; bf16 autocast, AdamW with cosine decay, 880 steps; every 220 steps (the last at the end) an evaluation of every odd distance at 3 error rates (8 batches each, no grad), the logical error rates read back")
def surface_code_cnn_decoder_train(rng):
    ch, blocks = _smoke(48, 8), _smoke(4, 1)
    model = _Decoder3D(ch, blocks).cuda()
    steps = _smoke(880, 4)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    budget = _smoke(600_000, 4000)
    dmax_final = _smoke(15, 5)
    masks = {d: _code_masks(d) for d in range(3, dmax_final + 1, 2)}

    def evaluate():
        model.eval()
        rates = []
        with torch.no_grad():
            for d in range(3, dmax_final + 1, 2):
                b = max(8, budget // (d * (d + 1) ** 2) // 2)
                for p in (0.003, 0.006, 0.01):
                    errs = []
                    for _ in range(_smoke(8, 1)):
                        x, y = _syndromes(b, d, d, p, p, masks[d])
                        with torch.autocast("cuda", dtype=torch.bfloat16):
                            logits = model(x)
                        errs.append(((logits.float() > 0).float() != y).any(1).float().mean())
                        del x, y, logits
                    rates.append(torch.stack(errs).mean())
        torch.stack(rates).tolist()
        model.train()

    for step in range(steps):
        dmax = 5 + 2 * int((dmax_final - 5) // 2 * min(1.0, step / (0.6 * steps)))
        d = rng.choice(list(range(3, max(dmax, 3) + 1, 2)))
        b = max(8, budget // (d * (d + 1) ** 2))
        p = _loguniform(rng, 0.001, 0.015)
        x, y = _syndromes(b, d, d, p, p, masks[d])
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x)
        loss = _F.binary_cross_entropy_with_logits(logits.float(), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        del x, y, logits
        if step % 20 == 0:
            float(loss)
        if (step + 1) % _smoke(220, 2) == 0:
            evaluate()


# ---------------------------------------------------------------- classical-shadow estimation service


@_workload("classical-shadow estimation service written by hand in torch: 1,450 requests, each a randomised Pauli-measurement record of 16-96 qubits and 2,000-16,000 snapshots (drawn), its int8 bases and outcomes uploaded from reused pinned host buffers on a side stream one request ahead (waited on by event, record_stream'ed); 2-5 queries a request (drawn), each of 256-4,096 Pauli observables of weight 1-4 (drawn) made on the device, each snapshot's estimate the product of 3 o_q over the support where the basis matches (gathered, chunks of 2,048 snapshots), median of 10 means; each query's random local Hamiltonian's energy from the estimates; for a third of the requests the purities of 2-4 subsystems of 2-4 qubits (drawn) from all pairs of 1,024 snapshots (5 or -4 where bases match, 1/2 elsewhere); the estimates of every 25th request read back")
def classical_shadow_estimate_serve(rng):
    nmax, mmax = _smoke(96, 12), _smoke(16000, 400)
    chunk, groups = _smoke(2048, 64), 10
    host = [torch.randint(0, 3, (2 * mmax * nmax,), dtype=torch.int8).pin_memory() for _ in range(2)]
    for h in host:  # the second half holds outcome bits
        h[mmax * nmax:].remainder_(2)
    up = SideUploads(host)
    nreq = _smoke(1450, 4)

    def draw():
        n = rng.randint(_smoke(16, 6), nmax)
        m = rng.randint(_smoke(2000, 200), mmax) // groups * groups
        return n, m

    def fetch(i, n, m):
        return up.upload(i, m * n, slice(mmax * nmax, mmax * nmax + m * n))

    plan = [draw() for _ in range(nreq)]
    nxt = fetch(0, *plan[0])
    for r in range(nreq):
        n, m = plan[r]
        zb, zo, ev = nxt
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        zb.record_stream(cur)
        zo.record_stream(cur)
        if r + 1 < nreq:
            nxt = fetch(r + 1, *plan[r + 1])
        bases = zb.view(m, n).long()
        signs = 1.0 - 2.0 * zo.view(m, n).float()
        out = []
        with torch.no_grad():
            for query in range(rng.randint(2, 5)):  # each request carries 2-5 observable queries
                k, wt = rng.choice(_smoke([256, 512, 1024, 2048, 4096], [8, 16])), rng.randint(1, 4)
                sites = torch.stack([torch.randperm(n, device="cuda")[:wt] for _ in range(_smoke(8, 2))])
                sites = sites.repeat(k // sites.shape[0] + 1, 1)[:k]
                sites = (sites + torch.randint(0, n, (k, 1), device="cuda")) % n
                paulis = torch.randint(0, 3, (k, wt), device="cuda")
                flat = sites.reshape(-1)
                parts = []
                for c0 in range(0, m, chunk):
                    c1 = min(m, c0 + chunk)
                    bs = bases[c0:c1, flat].view(c1 - c0, k, wt)
                    ss = signs[c0:c1, flat].view(c1 - c0, k, wt)
                    parts.append(((bs == paulis[None]).float() * 3 * ss).prod(-1))
                    del bs, ss
                vals = torch.cat(parts)  # (m, k)
                del parts
                est = vals.view(groups, m // groups, k).mean(1).median(0).values
                coeff = torch.randn(k, device="cuda") / math.sqrt(k)
                out += [(coeff * est).sum(), est.abs().mean()]
                del sites, paulis, flat, vals, est, coeff
            if r % 3 == 0:
                ms = min(m, _smoke(1024, 64))
                for _ in range(rng.randint(2, 4)):
                    sub = rng.sample(range(n), rng.randint(2, 4))
                    sb, so = bases[:ms, sub], zo.view(m, n)[:ms, sub].long()
                    same_b = (sb[:, None] == sb[None]).float()
                    same_o = (so[:, None] == so[None]).float()
                    x = (same_b * (9 * same_o - 4) + (1 - same_b) * 0.5).prod(-1)
                    purity = (x.sum() - x.diagonal().sum()) / (ms * (ms - 1))
                    out.append(purity)
                    del sb, so, same_b, same_o, x
            res = torch.stack(out)
            if r % 25 == 0:
                res.cpu()
        del zb, zo, bases, signs, out, res

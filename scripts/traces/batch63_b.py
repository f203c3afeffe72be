"""The sixty-third batch of held-out workloads for record.py, second half (batch63.py has the first): chemistry and
materials science on the GPU, written in torch alone. A high-throughput virtual screening service (a compound library
streamed in chunks of drawn molecule count, each chunk's molecular graphs, atoms, bonds and molecule ids packed in one
reused pinned int32 host buffer and uploaded on a side stream one chunk ahead; per target campaign an ensemble of
directed message-passing scorers of drawn widths, bf16, a running top-k hit list merged every chunk), active learning
for catalyst discovery (an ensemble of five MLP surrogates of different widths over adsorption-site descriptors of a
candidate pool, retrained each round on a growing labelled set, upper-confidence-bound acquisition over the pool in
chunks, acquired candidates masked out, labels from a fixed teacher standing in for DFT), a Cahn-Hilliard phase-field
simulation with a learned concentration-dependent mobility (a small CNN trained by backpropagation through unrolled
semi-implicit spectral rollouts against reference trajectories on grids refined over the run, then a production run
refined by spectral interpolation mid-way), and spectrum-to-structure inversion (IR spectra of drawn resolution and
13C NMR peak lists of drawn length into a transformer predicting 2,048-bit fingerprints and functional groups, with
retrieval evaluations against a fingerprint library by Tanimoto similarity in chunks). Same conventions as the
earlier batches: nothing downloaded, data drawn at random on the device (or, for the screening service, from a few
reused pinned host buffers), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: counts are
fixed on the host (chunks, atoms and bonds per chunk, rounds, rollout steps, refinement points), masks multiplied or
added in, no boolean-mask indexing; losses and metrics are read back only at logging points.
hts_molgraph_screen_serve uses a side stream (uploads waited on by event, the tensors record_stream'ed); the others
are single-stream. The screening scorers and the spectrum transformer run under bf16 autocast; the surrogates, the
phase-field simulation (whose spectral solve wants fp32) and the losses are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after batch63.py's: every workload
below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it reaches
record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch63.py's header says the same of its half): see record_new63.sh's header
for each workload's op outputs and peak live bytes counted on PyTorch's meta device at its final real sizes
(RECORD_SMOKE unset) with the helper's runner (/tmp/b63/meta_run.py, not committed, a copy of /work/notes/meta_run.py:
smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered with dummies, autocast a no-op so that fp32
sizes are counted, SDPA taking a math path, streams, events and pinned memory no-ops; boolean-mask indexing, which
the meta device cannot size, is avoided), its op outputs counted there (events about 1.8x that count) and its peak
live bytes tracked: hts_molgraph_screen_serve 275,074 op outputs, peak 0.74 GB; catalyst_active_learning 313,756,
0.33 GB; cahn_hilliard_mobility 306,474, 0.63 GB; ir_nmr_spectrum_to_fingerprint 301,328, 5.48 GB; all four run whole
(peaks in fp32 where autocast would take bf16; the spectrum transformer's peak mostly the attention matrices of the
math path, far above what flash attention holds on the GPU). record_new63.sh's header has them too, with the runs
that led to resizes. The CPU smoke run (RECORD_SMOKE=1) ran all four.
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


# ---------------------------------------------------------------- high-throughput virtual screening service


class _DMPNN(_nn.Module):
    """A directed message-passing scorer in the manner of Chemprop: bond-level hidden states, messages summed into
    atoms by index_add_, the reverse bond's message subtracted, a molecule readout by index_add_ over molecule ids."""

    def __init__(self, natom, nbond, d, depth):
        super().__init__()
        self.aemb, self.bemb = _nn.Embedding(natom, d), _nn.Embedding(nbond, d)
        self.wi = _nn.Linear(2 * d, d, bias=False)
        self.wh = _nn.Linear(d, d, bias=False)
        self.wo = _nn.Linear(2 * d, d)
        self.ffn = _nn.Sequential(_nn.Linear(d, d), _nn.ReLU(), _nn.Linear(d, 1))
        self.depth, self.d = depth, d

    def forward(self, atoms, bonds, src, dst, mol, natoms, nmol):
        a = self.aemb(atoms)
        h0 = torch.relu(self.wi(torch.cat([a[src], self.bemb(bonds)], -1)))  # directed bonds src -> dst
        h = h0
        rev = torch.arange(h.shape[0], device=h.device) ^ 1  # bonds stored in reverse pairs
        for _ in range(self.depth - 1):
            m = torch.zeros(natoms, self.d, device=h.device, dtype=h.dtype).index_add_(0, dst, h)
            h = torch.relu(h0 + self.wh(m[src] - h[rev]))
        m = torch.zeros(natoms, self.d, device=h.device, dtype=h.dtype).index_add_(0, dst, h)
        ha = torch.relu(self.wo(torch.cat([a, m], -1)))
        pooled = torch.zeros(nmol, self.d, device=h.device, dtype=ha.dtype).index_add_(0, mol, ha)
        cnt = torch.zeros(nmol, device=h.device).index_add_(0, mol, torch.ones(natoms, device=h.device))
        return self.ffn(pooled / cnt.clamp_min(1)[:, None].to(pooled.dtype)).squeeze(-1)


@_workload("high-throughput virtual screening service over molecular graphs written by hand (random init Chemprop-style D-MPNN scorers): 3 target campaigns, each an ensemble of 3 scorers of a drawn width (200, 300 or 400) and depth 3-5 (drawn), screening 560-660 library chunks (drawn) of 512-2,048 molecules (drawn per chunk) of 12-40 heavy atoms; each chunk's atom types, bond types, directed bond endpoints and molecule ids packed in one reused pinned int32 host buffer and uploaded on a side stream one chunk ahead (waited on by event, record_stream'ed); message passing by index_add_, bf16 autocast, no grad; ensemble mean and spread combined into a score, a running top-2,000 hit list (scores and library ids) merged with every chunk by topk; the best score read back every 25 chunks and the hit list at a campaign's end")
def hts_molgraph_screen_serve(rng):
    natom_t, nbond_t = 40, 5
    mmax = _smoke(2048, 16)
    amax = mmax * 40
    bmax = amax * 2 + 8  # directed bonds of a chain plus rings: under 2 per atom
    host = [torch.randint(0, 1 << 20, (2 * amax + 3 * bmax,), dtype=torch.int32).pin_memory() for _ in range(2)]
    up = SideUploads(host)

    def fetch(i, nmol, na, nb):
        z, ev = up.upload(i, 2 * na + 3 * nb)
        return z, ev, nmol, na, nb

    def unpack(item):
        z, ev, nmol, na, nb = item
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        z.record_stream(cur)
        z = z.long()
        atoms = z[:na] % natom_t
        mol = (z[na: 2 * na] % nmol).sort()[0]  # molecule ids, contiguous per molecule
        o = 2 * na
        bonds = z[o: o + nb] % nbond_t
        src = z[o + nb: o + 2 * nb] % na
        dst = z[o + 2 * nb: o + 3 * nb] % na
        return atoms, mol, bonds, src, dst

    topn = _smoke(2000, 8)
    for campaign in range(_smoke(3, 1)):
        d = rng.choice(_smoke([200, 300, 400], [16]))
        depth = rng.randint(3, _smoke(5, 3))
        models = [_DMPNN(natom_t, nbond_t, d, depth).cuda().eval().requires_grad_(False) for _ in range(3)]
        nchunks = rng.randint(_smoke(560, 2), _smoke(660, 3))
        plan = []
        for _ in range(nchunks):
            nmol = rng.randint(_smoke(512, 4), mmax)
            na = sum(rng.randint(12, 40) for _ in range(nmol)) if nmol < 64 else int(nmol * rng.uniform(22, 30))
            nb = 2 * int(na * rng.uniform(1.02, 1.1) / 2) * 1
            nb = min(nb, bmax) // 2 * 2
            plan.append((nmol, na, nb))
        best_s = torch.full((topn,), -1e9, device="cuda")
        best_i = torch.zeros(topn, dtype=torch.long, device="cuda")
        nxt = fetch(0, *plan[0])
        offset = 0
        with torch.no_grad():
            for c in range(nchunks):
                item = nxt
                if c + 1 < nchunks:
                    nxt = fetch(c + 1, *plan[c + 1])
                nmol, na, nb = plan[c]
                atoms, mol, bonds, src, dst = unpack(item)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    preds = torch.stack([m(atoms, bonds, src, dst, mol, na, nmol) for m in models]).float()
                score = preds.mean(0) - 0.5 * preds.std(0)
                ids = torch.arange(offset, offset + nmol, device="cuda")
                best_s, pos = torch.cat([best_s, score]).topk(topn)
                best_i = torch.cat([best_i, ids]).index_select(0, pos)
                offset += nmol
                del item, atoms, mol, bonds, src, dst, preds, score, ids, pos
                if c % 25 == 0:
                    best_s[0].item()
        best_s.cpu(), best_i.cpu()
        del models, best_s, best_i


# ---------------------------------------------------------------- active learning for catalyst discovery


class _Surrogate(_nn.Module):
    def __init__(self, din, width, depth):
        super().__init__()
        dims = [din] + [width] * depth
        mods = []
        for a, b in zip(dims[:-1], dims[1:]):
            mods += [_nn.Linear(a, b), _nn.LayerNorm(b), _nn.SiLU()]
        self.body = _nn.Sequential(*mods)
        self.head = _nn.Linear(width, 2)  # mean and log-variance

    def forward(self, x):
        o = self.head(self.body(x))
        return o[:, 0], o[:, 1].clamp(-8, 4)


@_workload("active learning for catalyst discovery written by hand (random init): a candidate pool of 160,000-240,000 adsorbate-site combinations (drawn) with 192-dim composition, site-fingerprint and adsorbate descriptors made on the device; adsorption energies from a fixed random teacher network standing in for DFT; an ensemble of 5 MLP surrogates (widths 256-768 and depths 3-5, drawn per member) with mean and variance heads, Gaussian negative log-likelihood, fp32, AdamW; 12 rounds: each member retrained for 28-56 steps (drawn) on bootstrap batches of up to 1,024 from the labelled set (512 at the start, growing by the batch acquired), then the pool scored in chunks of 16,384 (no grad), a UCB acquisition (ensemble mean, epistemic and aleatoric spread) with already-labelled candidates masked out, 256-768 candidates (drawn) acquired by topk and labelled; the best energy found read back each round")
def catalyst_active_learning(rng):
    din = _smoke(192, 16)
    npool = rng.randint(_smoke(160000, 600), _smoke(240000, 800))
    pool = torch.randn(npool, din, device="cuda")
    pool[:, : din // 4] = torch.softmax(pool[:, : din // 4] * 2, 1)  # composition fractions
    teacher = _nn.Sequential(_nn.Linear(din, 256), _nn.Tanh(), _nn.Linear(256, 256), _nn.Tanh(),
                             _nn.Linear(256, 1)).cuda().requires_grad_(False)

    def oracle(idx):
        with torch.no_grad():
            x = pool.index_select(0, idx)
            return teacher(x).squeeze(-1) + 0.05 * torch.randn(idx.shape[0], device="cuda")

    taken = torch.zeros(npool, device="cuda")
    lab_idx = torch.randperm(npool, device="cuda")[: _smoke(512, 32)]
    taken[lab_idx] = 1.0
    lab_y = oracle(lab_idx)
    members = [_Surrogate(din, rng.choice(_smoke([256, 384, 512, 768], [16, 24])), rng.randint(3, 5)).cuda()
               for _ in range(5)]
    opts = [torch.optim.AdamW(m.parameters(), lr=1e-3, weight_decay=1e-4) for m in members]
    chunk = _smoke(16384, 128)
    for rnd in range(_smoke(12, 2)):
        nlab = lab_idx.shape[0]
        for m, opt in zip(members, opts):
            m.train()
            for _ in range(rng.randint(_smoke(28, 2), _smoke(56, 3))):
                b = min(_smoke(1024, 16), nlab)
                pick = torch.randint(0, nlab, (b,), device="cuda")
                x = pool.index_select(0, lab_idx.index_select(0, pick))
                y = lab_y.index_select(0, pick)
                mu, logv = m(x)
                loss = (0.5 * (logv + (y - mu) ** 2 * torch.exp(-logv))).mean()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                del pick, x, y, mu, logv
            float(loss)
            m.eval()
        with torch.no_grad():
            scores = []
            for s0 in range(0, npool, chunk):
                x = pool[s0: s0 + chunk]
                outs = [m(x) for m in members]
                mus = torch.stack([o[0] for o in outs])
                alea = torch.stack([o[1].exp() for o in outs]).mean(0)
                # minimisation of the adsorption energy toward a target: UCB on the negative energy
                ucb = -mus.mean(0) + 2.0 * (mus.var(0) + alea).sqrt()
                scores.append(ucb)
                del x, outs, mus, alea
            score = torch.cat(scores) - 1e9 * taken
            k = rng.randint(_smoke(256, 4), _smoke(768, 8))
            new = score.topk(k).indices
            taken[new] = 1.0
            lab_idx = torch.cat([lab_idx, new])
            lab_y = torch.cat([lab_y, oracle(new)])
            lab_y.min().item()
            del scores, score, new


# ---------------------------------------------------------------- Cahn-Hilliard with a learned mobility


class _Mobility(_nn.Module):
    """M(c, |grad c|^2) > 0 per grid point: a small CNN of 1x1 and 3x3 periodic convolutions, softplus output."""

    def __init__(self, ch):
        super().__init__()
        self.c1 = _nn.Conv2d(2, ch, 3, padding=1, padding_mode="circular")
        self.c2 = _nn.Conv2d(ch, ch, 1)
        self.c3 = _nn.Conv2d(ch, 1, 1)

    def forward(self, c, g2):
        x = torch.cat([c, g2], 1)
        return _F.softplus(self.c3(torch.tanh(self.c2(torch.tanh(self.c1(x)))))) + 1e-3


def _spectral(n, dev="cuda"):
    # fftfreq and rfftfreq (times n), made with arange
    k = torch.cat([torch.arange(0, n // 2, device=dev), torch.arange(-(n // 2), 0, device=dev)]).float()
    k = k * (2 * math.pi / n)
    kr = torch.arange(0, n // 2 + 1, device=dev).float() * (2 * math.pi / n)
    kx, ky = k[:, None].expand(n, kr.shape[0]), kr[None].expand(n, kr.shape[0])
    return kx, ky, kx * kx + ky * ky


def _ch_step(c, mob, kx, ky, k2, dt, kappa, stab):
    """One semi-implicit spectral step of dc/dt = div(M grad mu), mu = c^3 - c - kappa lap c, c (B,1,n,n)."""
    n = c.shape[-1]
    ch = torch.fft.rfft2(c)
    mu_h = torch.fft.rfft2(c ** 3 - c) + kappa * k2 * ch
    gx = torch.fft.irfft2(1j * kx * mu_h, s=(n, n))
    gy = torch.fft.irfft2(1j * ky * mu_h, s=(n, n))
    cx = torch.fft.irfft2(1j * kx * ch, s=(n, n))
    cy = torch.fft.irfft2(1j * ky * ch, s=(n, n))
    m = mob(c, cx * cx + cy * cy)
    div_h = 1j * kx * torch.fft.rfft2(m * gx) + 1j * ky * torch.fft.rfft2(m * gy)
    new_h = (ch + dt * div_h + dt * stab * kappa * k2 * k2 * ch) / (1 + dt * stab * kappa * k2 * k2)
    return torch.fft.irfft2(new_h, s=(n, n))


@_workload("Cahn-Hilliard phase-field simulation of spinodal decomposition with a learned mobility written by hand (random init): a semi-implicit spectral scheme (rfft2, a stabilised biharmonic term) for dc/dt = div(M grad mu) with a small periodic CNN mobility M(c, |grad c|^2) trained by backpropagation through unrolled rollouts of 8-14 steps (drawn, after 0-20 unrecorded coarsening steps) against reference trajectories of a ground-truth mobility 1 - 0.8 c^2 (no grad) from random quenches; grids refined over the training run (64^2 in batches of 16, 128^2 in batches of 8, 256^2 in batches of 2, 28 steps each), fp32, Adam; then a production run of 2 quenches of 800-1,200 steps (drawn) each starting at 256^2 and refined to 512^2 by spectral zero-padding at a drawn step, the structure factor's peak read back every 100 steps")
def cahn_hilliard_mobility(rng):
    mob = _Mobility(_smoke(32, 4)).cuda()
    opt = torch.optim.Adam(mob.parameters(), lr=1e-3)
    kappa, dt, stab = 1.0, 0.1, 2.0

    def true_mob(c, g2):
        return (1 - 0.8 * c * c).clamp_min(0.05)

    for n, b in _smoke([(64, 16), (128, 8), (256, 2)], [(16, 2), (24, 1)]):
        kx, ky, k2 = _spectral(n)
        for step in range(_smoke(28, 2)):
            c0 = 0.05 * torch.randn(b, 1, n, n, device="cuda") + rng.uniform(-0.3, 0.3)
            warm = rng.randint(0, _smoke(20, 2))
            with torch.no_grad():
                for _ in range(warm):  # a partly coarsened start
                    c0 = _ch_step(c0, true_mob, kx, ky, k2, dt, kappa, stab)
                ref, c = [], c0
                roll = rng.randint(_smoke(8, 2), _smoke(14, 3))
                for _ in range(roll):
                    c = _ch_step(c, true_mob, kx, ky, k2, dt, kappa, stab)
                    ref.append(c)
            c, loss = c0, 0.0
            for t in range(roll):
                c = _ch_step(c, mob, kx, ky, k2, dt, kappa, stab)
                loss = loss + ((c - ref[t]) ** 2).mean()
            loss = loss / roll
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            del c0, c, ref
            if step % 10 == 0:
                float(loss)
        del kx, ky, k2

    mob.eval().requires_grad_(False)
    with torch.no_grad():
        for _ in range(_smoke(2, 1)):
            n = _smoke(256, 16)
            kx, ky, k2 = _spectral(n)
            c = 0.05 * torch.randn(1, 1, n, n, device="cuda") + rng.uniform(-0.2, 0.2)
            nsteps = rng.randint(_smoke(800, 4), _smoke(1200, 6))
            refine_at = rng.randint(nsteps // 3, 2 * nsteps // 3)
            for t in range(nsteps):
                if t == refine_at:  # refine the grid: zero-pad the spectrum to twice the points
                    ch = torch.fft.fft2(c)
                    n2 = 2 * n
                    big = torch.zeros(1, 1, n2, n2, dtype=ch.dtype, device="cuda")
                    h = n // 2
                    big[..., :h, :h], big[..., :h, -h:] = ch[..., :h, :h], ch[..., :h, -h:]
                    big[..., -h:, :h], big[..., -h:, -h:] = ch[..., -h:, :h], ch[..., -h:, -h:]
                    c = torch.fft.ifft2(big).real * 4
                    n = n2
                    kx, ky, k2 = _spectral(n)
                    del ch, big
                c = _ch_step(c, mob, kx, ky, k2, dt * (0.5 if t >= refine_at else 1.0), kappa, stab)
                if (t + 1) % 100 == 0:
                    sf = torch.fft.rfft2(c - c.mean()).abs().pow(2)
                    sf.flatten(1).max(1).values.item()
                    del sf
            del c, kx, ky, k2


# ---------------------------------------------------------------- spectrum-to-structure inversion


class _Spec2Struct(_nn.Module):
    def __init__(self, d, heads, depth, nbits, ngroups):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv1d(1, d // 4, 9, stride=2, padding=4), _nn.GELU(),
                                   _nn.Conv1d(d // 4, d // 2, 9, stride=2, padding=4), _nn.GELU(),
                                   _nn.Conv1d(d // 2, d, 9, stride=4, padding=4))
        self.peak = _nn.Sequential(_nn.Linear(2, d), _nn.GELU(), _nn.Linear(d, d))  # 13C shift, intensity
        self.kind = _nn.Parameter(torch.randn(2, d) * 0.02)
        self.cls = _nn.Parameter(torch.randn(1, 1, d) * 0.02)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(depth))
        self.norm = _nn.LayerNorm(d)
        self.fp = _nn.Linear(d, nbits)
        self.fg = _nn.Linear(d, ngroups)
        self.d = d

    def forward(self, ir, irvalid, peaks, pvalid):
        b = ir.shape[0]
        x = self.stem(ir[:, None]).transpose(1, 2)  # (b, L/16, d)
        L = x.shape[1]
        pos = torch.arange(L, device=ir.device, dtype=torch.float32)[:, None]
        freqs = torch.exp(-math.log(10000) * torch.arange(self.d // 2, device=ir.device) / (self.d // 2))
        pe = torch.cat([torch.sin(pos * freqs), torch.cos(pos * freqs)], 1)
        x = x + pe + self.kind[0]
        p = self.peak(peaks) + self.kind[1]
        h = torch.cat([self.cls.expand(b, 1, self.d).to(x.dtype), x, p.to(x.dtype)], 1)
        v = torch.cat([torch.ones(b, 1, device=ir.device), irvalid, pvalid], 1)
        mask = ((v - 1.0) * 1e4)[:, None, None, :].to(h.dtype)
        for blk in self.blocks:
            h = blk(h, mask)
        z = self.norm(h[:, 0])
        return self.fp(z), self.fg(z)


@_workload("spectrum-to-structure inversion written by hand (random init): IR spectra of 1,792-3,584 points (drawn per batch: the instrument's resolution) with per-spectrum valid ranges (drawn) and 13C NMR peak lists of 4-40 peaks (drawn per molecule) as (shift, intensity) tokens, in batches of 32-96 (drawn); targets 2,048-bit fingerprints and 37 functional groups from a fixed random teacher of the spectrum; a strided 1-D convolution stem to patches of 16 points and a 6-layer pre-norm transformer (width 384, 6 heads) over IR patches and NMR peaks with key-padding masks; BCE on the fingerprint bits (positive-weighted) and the groups; bf16 autocast, AdamW with cosine decay, 390 steps; every 130 steps retrieval of 128 query spectra against a library of 60,000-120,000 fingerprints (drawn) by Tanimoto similarity in chunks of 16,384, top-10 kept by merging, the top-1 hit rate read back")
def ir_nmr_spectrum_to_fingerprint(rng):
    d, heads, nbits, ngroups = _smoke(384, 32), _smoke(6, 2), _smoke(2048, 64), 37
    model = _Spec2Struct(d, heads, _smoke(6, 1), nbits, ngroups).cuda()
    steps = _smoke(390, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.05)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    tproj = torch.randn(nbits + ngroups, 64, device="cuda") * 0.5

    def batch(b, npts):
        # smooth absorbance bands: a sum of random Lorentzians on a coarse grid, interpolated
        base = torch.rand(b, 1, npts // 32, device="cuda") ** 8
        ir = _F.interpolate(base, size=npts, mode="linear", align_corners=False)[:, 0]
        ir = ir + 0.01 * torch.randn(b, npts, device="cuda")
        lo = [rng.randint(0, npts // 8) // 16 * 16 for _ in range(b)]
        hi = [npts - rng.randint(0, npts // 8) // 16 * 16 for _ in range(b)]
        grid = torch.arange(npts // 16, device="cuda")[None] * 16
        irvalid = ((grid >= torch.tensor(lo, device="cuda")[:, None]) &
                   (grid < torch.tensor(hi, device="cuda")[:, None])).float()
        ir = ir * _F.interpolate(irvalid[:, None], size=npts, mode="nearest")[:, 0]
        npk = [rng.randint(4, _smoke(40, 6)) for _ in range(b)]
        P = max(npk)
        peaks = torch.rand(b, P, 2, device="cuda")
        pvalid = (torch.arange(P, device="cuda")[None] < torch.tensor(npk, device="cuda")[:, None]).float()
        feat = _F.adaptive_avg_pool1d(ir[:, None], 64)[:, 0]
        logits = feat @ tproj.t() * 20 - 2.0
        y = (torch.rand_like(logits) < torch.sigmoid(logits)).float()
        return ir, irvalid, peaks * pvalid[..., None], pvalid, y[:, :nbits], y[:, nbits:]

    posw = torch.full((nbits,), 4.0, device="cuda")
    for step in range(steps):
        model.train()
        b = rng.choice(_smoke([32, 48, 64, 96], [2, 3]))
        npts = rng.choice(_smoke([1792, 2688, 3584], [256, 512]))
        ir, irv, peaks, pv, yfp, yfg = batch(b, npts)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pfp, pfg = model(ir, irv, peaks, pv)
        loss = _F.binary_cross_entropy_with_logits(pfp.float(), yfp, pos_weight=posw) + \
            _F.binary_cross_entropy_with_logits(pfg.float(), yfg)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        del ir, irv, peaks, pv, yfp, yfg, pfp, pfg
        if step % 20 == 0:
            float(loss)
        if (step + 1) % _smoke(130, 3) == 0:
            model.eval()
            nq = _smoke(128, 4)
            nlib = rng.randint(_smoke(60000, 300), _smoke(120000, 500))
            chunk = _smoke(16384, 128)
            with torch.no_grad():
                ir, irv, peaks, pv, yfp, _ = batch(nq, rng.choice(_smoke([1792, 2688, 3584], [256])))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pfp, _ = model(ir, irv, peaks, pv)
                q = (torch.sigmoid(pfp.float()) > 0.5).half()
                lib = (torch.rand(nlib, nbits, device="cuda") < 0.08).half()
                lib[:nq] = yfp.half()  # the true answers are in the library
                top_s = torch.full((nq, 10), -1.0, device="cuda")
                top_i = torch.zeros(nq, 10, dtype=torch.long, device="cuda")
                qn = q.float().sum(1, keepdim=True)
                for s0 in range(0, nlib, chunk):
                    blk = lib[s0: s0 + chunk]
                    inter = (q @ blk.t()).float()
                    tan = inter / (qn + blk.float().sum(1)[None] - inter).clamp_min(1.0)
                    ids = torch.arange(s0, s0 + blk.shape[0], device="cuda").expand(nq, -1)
                    top_s, pos = torch.cat([top_s, tan], 1).topk(10, 1)
                    top_i = torch.cat([top_i, ids], 1).gather(1, pos)
                    del blk, inter, tan, ids, pos
                (top_i[:, 0] == torch.arange(nq, device="cuda")).float().mean().item()
            del ir, irv, peaks, pv, yfp, pfp, q, lib, top_s, top_i, qn

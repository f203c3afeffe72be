"""The sixty-third batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch61_b.py are): chemistry and materials science on the GPU, written in torch alone, first half. A MACE-style
equivariant interatomic potential (structures of drawn atom counts in periodic boxes, neighbour lists by radius on
the device with the minimum image, Bessel radial bases and real spherical harmonics up to l=2 written by hand,
scalar and vector node features with a body-ordered product basis, trained on energies and forces of a Morse
reference with forces by autograd and a double backward; then velocity-Verlet molecular dynamics with it, forces by
autograd, the neighbour list rebuilt every few steps), a retrosynthesis transformer over SMILES-like token
sequences (products and reactant sets of drawn lengths batched by a token budget, an encoder-decoder with padding
masks, label smoothing; then beam search with a growing key-value cache reordered by beam every step), crystal
structure prediction by joint diffusion over fractional coordinates and lattices in the manner of DiffCSP (crystals
of drawn atom counts batched by a pair budget, periodic Fourier features of fractional differences, a wrapped-normal
score target summed over images, DDPM on the lattice; then predictor-corrector sampling), and an electron-density
predictor on 3D grids in the manner of a DFT surrogate (superposition-of-atomic-densities guesses and reference
densities of drawn grid size uploaded from reused pinned host buffers on a side stream one batch ahead, a 3D U-Net
predicting the density difference, an electron-count constraint; evaluations on larger grids). Same conventions as
the earlier batches: nothing downloaded, data drawn at random on the device (or, for the density predictor, from a
few reused pinned host buffers), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: counts
are fixed on the host (MD steps, rebuild intervals, beam steps, sampling steps), masks multiplied or added in,
neighbour lists a fixed number of nearest neighbours by topk with a radius mask, no boolean-mask indexing; losses and
metrics are read back only at logging points. dft_density_unet3d_train uses a side stream (uploads waited on by
event, the tensors record_stream'ed); the others are single-stream. The retrosynthesis transformer, the crystal
denoiser and the 3D U-Net run under bf16 autocast; the potential and its molecular dynamics (forces want fp32), the
diffusion arithmetic and the losses are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch63_b.py's header says the same of its half): see record_new63.sh's header
for each workload's op outputs and peak live bytes counted on PyTorch's meta device at its final real sizes
(RECORD_SMOKE unset) with the helper's runner (/tmp/b63/meta_run.py, not committed, a copy of /work/notes/meta_run.py:
smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered with dummies, autocast a no-op so that fp32
sizes are counted, SDPA taking a math path, streams, events and pinned memory no-ops; boolean-mask indexing, which
the meta device cannot size, is avoided), its op outputs counted there (events about 1.8x that count) and its peak
live bytes tracked: mace_equivariant_md 350,339 op outputs, peak 1.34 GB; retrosynth_smiles_beam 308,302, 4.91 GB;
diffcsp_lattice_diffusion 297,283, 0.66 GB; dft_density_unet3d_train 301,394, 0.60 GB; all four run whole (peaks in
fp32 where autocast would take bf16; the retrosynthesis transformer's peak mostly the attention matrices of the math
path, far above what flash attention holds on the GPU). record_new63.sh's header has them too, with the runs that
led to resizes. The CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, _gather_points

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- MACE-style equivariant potential and MD


def _sph_harm(u):
    """Real spherical harmonics (component normalisation) of unit vectors u (..., 3): l=1 (..., 3), l=2 (..., 5)."""
    x, y, z = u.unbind(-1)
    s15 = math.sqrt(15.0)
    y1 = u * math.sqrt(3.0)
    y2 = torch.stack([s15 * x * y, s15 * y * z, math.sqrt(5.0) / 2 * (3 * z * z - 1), s15 * x * z,
                      s15 / 2 * (x * x - y * y)], -1)
    return y1, y2


def _bessel(r, nb, rc):
    """Bessel radial basis sin(n pi r / rc) / r times a smooth polynomial cutoff envelope, r (...,): (..., nb)."""
    n = torch.arange(1, nb + 1, device=r.device, dtype=r.dtype)
    x = (r / rc).clamp(max=1.0)
    env = 1 - 10 * x ** 3 + 15 * x ** 4 - 6 * x ** 5
    return math.sqrt(2.0 / rc) * torch.sin(n * math.pi * r[..., None] / rc) / r[..., None] * env[..., None]


class _MaceLayer(_nn.Module):
    """One interaction: radial-weighted A-basis of l=0,1,2 from neighbours' scalars and vectors, a body-ordered
    product basis contracted to scalars, vectors updated by channel mixing; an atomic energy readout."""

    def __init__(self, c, nb):
        super().__init__()
        self.c = c
        self.radial = _nn.Sequential(_nn.Linear(nb, 64), _nn.SiLU(), _nn.Linear(64, 64), _nn.SiLU(),
                                     _nn.Linear(64, 4 * c))
        self.up = _nn.Linear(c, c, bias=False)
        self.vup = _nn.Linear(c, c, bias=False)
        self.prod = _nn.Linear(6 * c, c)
        self.vout = _nn.Linear(2 * c, c, bias=False)
        self.read = _nn.Sequential(_nn.Linear(c, 16), _nn.SiLU(), _nn.Linear(16, 1))

    def forward(self, h, v, idx, rb, y1, y2, emask, amask):
        # h (B,N,C) scalars, v (B,N,3,C) vectors, idx (B,N,K), rb (B,N,K,nb), y1 (B,N,K,3), y2 (B,N,K,5)
        B, N, K = idx.shape
        C = self.c
        w0, w1, w2, wv = (self.radial(rb) * emask[..., None]).chunk(4, -1)
        hj = _gather_points(self.up(h), idx)  # (B,N,K,C)
        vj = _gather_points(self.vup(v).reshape(B, N, 3 * C), idx).view(B, N, K, 3, C)
        a0 = (w0 * hj + wv * (vj * y1[..., None]).sum(-2)).sum(2)
        a1 = (w1[..., None, :] * y1[..., None] * hj[..., None, :] + wv[..., None, :] * vj).sum(2)  # (B,N,3,C)
        a2 = (w2[..., None, :] * y2[..., None] * hj[..., None, :]).sum(2)  # (B,N,5,C)
        n1, n2 = (a1 * a1).sum(-2), (a2 * a2).sum(-2)
        x, y, z = a1.unbind(-2)  # the l=2 part of a1 (x) a1, contracted with a2: a three-body invariant
        s15 = math.sqrt(15.0)
        q2 = torch.stack([s15 * x * y, s15 * y * z, math.sqrt(5.0) / 2 * (2 * z * z - x * x - y * y), s15 * x * z,
                          s15 / 2 * (x * x - y * y)], -2)
        b = torch.cat([a0, n1, n2, a0 * n1, a0 * a0, (q2 * a2).sum(-2)], -1)
        h = h + _F.silu(self.prod(b)) * amask[..., None]
        v = v + self.vout(torch.cat([a1, a0[..., None, :] * a1], -1)) * amask[..., None, None]
        return h, v, self.read(h).squeeze(-1) * amask


class _Mace(_nn.Module):
    def __init__(self, nspecies, c, nb, layers, rc):
        super().__init__()
        self.emb = _nn.Embedding(nspecies, c)
        self.e0 = _nn.Embedding(nspecies, 1)
        self.layers = _nn.ModuleList(_MaceLayer(c, nb) for _ in range(layers))
        self.c, self.nb, self.rc = c, nb, rc

    def forward(self, pos, species, amask, idx, emask, box):
        B, N, _ = pos.shape
        rij = _gather_points(pos, idx) - pos[:, :, None]
        rij = rij - box[..., None] * torch.round(rij / box[..., None])  # minimum image
        r = (rij.pow(2).sum(-1) + 1e-9).sqrt()
        rb = _bessel(r, self.nb, self.rc)
        y1, y2 = _sph_harm(rij / r[..., None])
        h = self.emb(species) * amask[..., None]
        v = torch.zeros(B, N, 3, self.c, device=pos.device)
        e = self.e0(species).squeeze(-1) * amask
        for layer in self.layers:
            h, v, ei = layer(h, v, idx, rb, y1, y2, emask, amask)
            e = e + ei
        return e.sum(1)


def _neighbours(pos, amask, box, k, rc):
    """k nearest neighbours by minimum-image distance (self and padding pushed out), a radius mask: idx, emask."""
    d = pos[:, :, None] - pos[:, None]
    d = d - box[..., None] * torch.round(d / box[..., None])
    d2 = d.pow(2).sum(-1)
    n = pos.shape[1]
    d2 = d2 + 1e6 * torch.eye(n, device=pos.device) + 1e6 * (1 - amask[:, None, :])
    vals, idx = torch.topk(d2, k, dim=-1, largest=False)
    emask = (vals < rc * rc).float() * amask[..., None]
    return idx, emask


def _morse_energy(pos, species, amask, idx, emask, box, depth, r0):
    """The reference (a species-pair Morse potential over the same neighbour list, halved for double counting)."""
    rij = _gather_points(pos, idx) - pos[:, :, None]
    rij = rij - box[..., None] * torch.round(rij / box[..., None])
    r = (rij.pow(2).sum(-1) + 1e-9).sqrt()
    sj = _gather_points(species[..., None].float(), idx).squeeze(-1).long()
    dd = depth[species[..., None].expand_as(sj), sj]
    rr = r0[species[..., None].expand_as(sj), sj]
    e = dd * ((1 - torch.exp(-1.6 * (r - rr))) ** 2 - 1)
    return 0.5 * (e * emask).sum((1, 2))


def _structures(rng, b, n, nspecies, spacing, dev="cuda"):
    """b periodic structures padded to n atoms: jittered cubic lattice sites in a box, drawn fill, random species."""
    m = math.ceil(n ** (1 / 3))
    g = torch.stack(torch.meshgrid(*[torch.arange(m, device=dev, dtype=torch.float32)] * 3, indexing="ij"), -1)
    sites = g.reshape(-1, 3)[:n] * spacing
    pos = sites[None] + 0.25 * spacing * torch.randn(b, n, 3, device=dev)
    counts = [rng.randint(max(2, n // 2), n) for _ in range(b)]
    amask = (torch.arange(n, device=dev)[None] < torch.tensor(counts, device=dev)[:, None]).float()
    species = torch.randint(0, nspecies, (b, n), device=dev)
    box = torch.full((b, 1, 1), m * spacing, device=dev)
    return pos, species, amask, box


@_workload("MACE-style equivariant interatomic potential written by hand (random init): periodic structures of 32-192 atoms (drawn per batch, 50-100% of the sites filled per structure) of 8 species on jittered lattices in batches fitting a budget of 2,048 atom slots; neighbour lists of the 24 nearest within 5 A by minimum-image distance and topk on the device; Bessel radial bases (8) with a polynomial cutoff, real spherical harmonics up to l=2 by hand, 2 interactions (64 channels) with scalar and vector features and a body-ordered product basis, atomic energy readouts; trained on energies and forces of a species-pair Morse reference (forces by autograd, a double backward), fp32, Adam with a decaying rate, 100 steps; then velocity-Verlet molecular dynamics of 2 systems of 64-216 atoms (drawn) for 130-180 steps each (drawn), forces by autograd, the neighbour list rebuilt every 10 steps, Berendsen-style velocity rescaling, the energy drift read back every 50 steps")
def mace_equivariant_md(rng):
    nspecies, c, nb, rc, k = 8, _smoke(64, 8), 8, 5.0, _smoke(24, 6)
    model = _Mace(nspecies, c, nb, _smoke(2, 1), rc).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, 0.995)
    depth = (0.5 + torch.rand(nspecies, nspecies, device="cuda"))
    depth = (depth + depth.t()) / 2
    r0 = 2.4 + 0.4 * torch.rand(nspecies, nspecies, device="cuda")
    r0 = (r0 + r0.t()) / 2
    budget = _smoke(2048, 64)
    steps = _smoke(100, 3)
    for step in range(steps):
        n = rng.choice(_smoke([32, 48, 64, 96, 128, 192], [8, 12]))
        b = max(1, budget // n)
        pos, species, amask, box = _structures(rng, b, n, nspecies, 2.6)
        idx, emask = _neighbours(pos, amask, box, min(k, n - 1), rc)
        pos = pos.requires_grad_(True)
        e_ref = _morse_energy(pos, species, amask, idx, emask, box, depth, r0)
        f_ref = -torch.autograd.grad(e_ref.sum(), pos)[0]
        e_ref, f_ref = e_ref.detach(), f_ref.detach()
        e = model(pos, species, amask, idx, emask, box)
        f = -torch.autograd.grad(e.sum(), pos, create_graph=True)[0]
        natoms = amask.sum(1)
        loss = (((e - e_ref) / natoms) ** 2).mean() + 10 * ((f - f_ref) ** 2 * amask[..., None]).sum() / (
            3 * natoms.sum())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        del pos, species, amask, box, idx, emask, e_ref, f_ref, e, f
        if step % 20 == 0:
            float(loss)

    # molecular dynamics with the trained potential
    model.eval().requires_grad_(False)
    dt, rebuild = 0.5, _smoke(10, 2)
    for _ in range(_smoke(2, 1)):
        n = rng.choice(_smoke([64, 125, 216], [8]))
        pos, species, amask, box = _structures(rng, 1, n, nspecies, 2.6)
        amask = torch.ones_like(amask)
        mass = 10.0 + 20.0 * torch.rand(1, n, 1, device="cuda")
        vel = torch.randn(1, n, 3, device="cuda") * (0.01 / mass).sqrt()

        def forces(p, idx, emask):
            p = p.detach().requires_grad_(True)
            with torch.enable_grad():
                e = model(p, species, amask, idx, emask, box)
                g = torch.autograd.grad(e.sum(), p)[0]
            return -g, e.detach()

        idx, emask = _neighbours(pos, amask, box, min(k, n - 1), rc)
        f, e = forces(pos, idx, emask)
        e_start = e
        nsteps = rng.randint(_smoke(130, 3), _smoke(180, 5))
        with torch.no_grad():
            for t in range(nsteps):
                vel = vel + 0.5 * dt * f / mass
                pos = pos + dt * vel
                pos = pos - box * torch.floor(pos / box)  # wrap into the box
                if (t + 1) % rebuild == 0:
                    idx, emask = _neighbours(pos, amask, box, min(k, n - 1), rc)
                f, e = forces(pos, idx, emask)
                vel = vel + 0.5 * dt * f / mass
                if (t + 1) % 20 == 0:  # velocity rescaling toward the target temperature
                    ke = 0.5 * (mass * vel * vel).sum() / (1.5 * n)
                    vel = vel * (0.01 / ke.clamp_min(1e-8)).sqrt().clamp(0.9, 1.1)
                if (t + 1) % 50 == 0:
                    ke = 0.5 * (mass * vel * vel).sum()
                    (e + ke - e_start).abs().item()
        del pos, vel, f, e, idx, emask, mass
    model.requires_grad_(True)


# ---------------------------------------------------------------- retrosynthesis transformer with beam search


class _DecLayer(_nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.n1, self.n2, self.n3 = _nn.LayerNorm(d), _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.o1 = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.q2, self.kv2, self.o2 = _nn.Linear(d, d), _nn.Linear(d, 2 * d), _nn.Linear(d, d)
        self.fc1, self.fc2 = _nn.Linear(d, 4 * d), _nn.Linear(4 * d, d)

    def forward(self, x, mem, mem_mask, cache=None):
        b, t, d = x.shape
        h = self.h
        q, k, v = self.qkv(self.n1(x)).view(b, t, 3, h, d // h).permute(2, 0, 3, 1, 4)
        if cache is not None:
            if "k" in cache:
                k, v = torch.cat([cache["k"], k], 2), torch.cat([cache["v"], v], 2)
            cache["k"], cache["v"] = k, v
            a = _F.scaled_dot_product_attention(q, k, v)
        else:
            a = _F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o1(a.transpose(1, 2).reshape(b, t, d))
        q2 = self.q2(self.n2(x)).view(b, t, h, d // h).transpose(1, 2)
        if cache is not None and "mk" in cache:
            mk, mv = cache["mk"], cache["mv"]
        else:
            mk, mv = self.kv2(mem).view(b, mem.shape[1], 2, h, d // h).permute(2, 0, 3, 1, 4)
            if cache is not None:
                cache["mk"], cache["mv"] = mk, mv
        a = _F.scaled_dot_product_attention(q2, mk, mv, attn_mask=mem_mask)
        x = x + self.o2(a.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(_F.gelu(self.fc1(self.n3(x))))


class _Retro(_nn.Module):
    def __init__(self, vocab, d, heads, enc, dec, maxlen):
        super().__init__()
        self.emb = _nn.Embedding(vocab, d)
        self.pos = _nn.Parameter(torch.randn(1, maxlen, d) * 0.02)
        self.enc = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(enc))
        self.dec = _nn.ModuleList(_DecLayer(d, heads) for _ in range(dec))
        self.ne, self.nd = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.out = _nn.Linear(d, vocab)

    def encode(self, src, mask):
        h = self.emb(src) + self.pos[:, : src.shape[1]]
        for blk in self.enc:
            h = blk(h, mask)
        return self.ne(h)

    def decode(self, tgt, mem, mask, caches=None, start=0):
        x = self.emb(tgt) + self.pos[:, start: start + tgt.shape[1]]
        for i, layer in enumerate(self.dec):
            x = layer(x, mem, mask, None if caches is None else caches[i])
        return self.out(self.nd(x))


def _pad_batch(lengths, vocab, dev="cuda"):
    L = max(lengths)
    ids = torch.randint(4, vocab, (len(lengths), L), device=dev)
    valid = (torch.arange(L, device=dev)[None] < torch.tensor(lengths, device=dev)[:, None])
    return ids * valid.long(), valid.float()


@_workload("retrosynthesis transformer over SMILES-like token sequences written by hand in the manner of Molecular Transformer / Chemformer (random init): products of 20-120 tokens and reactant sets of 25-160 tokens (drawn per reaction, vocab 96), batched to a budget of 6,144 source tokens with key-padding masks; a 6-layer pre-norm encoder and 6-layer decoder with cross-attention (width 256, 8 heads), teacher forcing, label-smoothed cross-entropy; bf16 autocast, AdamW with Noam warmup, 120 steps; every 40 steps beam search for 16 products (beam 10, 160 hypotheses) for 80-140 steps (drawn), a per-layer key-value cache grown by concatenation and reordered by beam every step, the cross-attention keys kept, finished beams held at the pad token, top-1 scores read back")
def retrosynth_smiles_beam(rng):
    vocab, d, heads = 96, _smoke(256, 32), _smoke(8, 2)
    maxlen = 256
    model = _Retro(vocab, d, heads, _smoke(6, 1), _smoke(6, 1), maxlen).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1.0, betas=(0.9, 0.998), weight_decay=0.0)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (d ** -0.5) * min((s + 1) ** -0.5, (s + 1) * 40 ** -1.5))
    budget = _smoke(6144, 96)
    steps = _smoke(120, 3)
    for step in range(steps):
        model.train()
        lp = [rng.randint(_smoke(20, 4), _smoke(120, 12))]
        while sum(lp) + lp[0] < budget and len(lp) < 256:
            lp.append(rng.randint(_smoke(20, 4), _smoke(120, 12)))
        lr_ = [min(maxlen - 1, int(x * rng.uniform(1.05, 1.4)) + 2) for x in lp]
        src, sv = _pad_batch(lp, vocab)
        tgt, tv = _pad_batch(lr_, vocab)
        smask = ((sv - 1.0) * 1e4)[:, None, None, :]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            mem = model.encode(src, smask)
            logits = model.decode(tgt[:, :-1], mem, smask)
        ce = _F.cross_entropy(logits.float().reshape(-1, vocab), tgt[:, 1:].reshape(-1), reduction="none",
                              label_smoothing=0.1)
        m = tv[:, 1:].reshape(-1)
        loss = (ce * m).sum() / m.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        del src, sv, tgt, tv, smask, mem, logits, ce, m
        if step % 20 == 0:
            float(loss)
        if (step + 1) % _smoke(40, 3) == 0:
            model.eval()
            nb, beam = _smoke(16, 2), _smoke(10, 3)
            lp = [rng.randint(_smoke(20, 4), _smoke(120, 12)) for _ in range(nb)]
            T = rng.randint(_smoke(80, 3), _smoke(140, 5))
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                src, sv = _pad_batch(lp, vocab)
                smask = ((sv - 1.0) * 1e4)[:, None, None, :]
                mem = model.encode(src, smask)
                mem = mem.repeat_interleave(beam, 0)
                smask = smask.repeat_interleave(beam, 0)
                caches = [dict() for _ in model.dec]
                tok = torch.ones(nb * beam, 1, dtype=torch.long, device="cuda")  # BOS
                scores = torch.zeros(nb, beam, device="cuda")
                scores[:, 1:] = -1e9
                finished = torch.zeros(nb * beam, device="cuda")
                seqs = tok
                base = (torch.arange(nb, device="cuda") * beam)[:, None]
                for t in range(T):
                    logp = torch.log_softmax(model.decode(tok, mem, smask, caches, start=t)[:, -1].float(), -1)
                    # a finished hypothesis may only emit pad (0) at no cost
                    stay = torch.full_like(logp, -1e9)
                    stay[:, 0] = 0.0
                    logp = logp * (1 - finished[:, None]) + stay * finished[:, None]
                    cand = (scores[..., None] + logp.view(nb, beam, vocab)).view(nb, beam * vocab)
                    scores, flat = cand.topk(beam, -1)
                    src_beam = (base + flat // vocab).view(-1)
                    tok = (flat % vocab).view(-1, 1)
                    for cch in caches:
                        cch["k"] = cch["k"].index_select(0, src_beam)
                        cch["v"] = cch["v"].index_select(0, src_beam)
                    seqs = torch.cat([seqs.index_select(0, src_beam), tok], 1)
                    finished = torch.maximum(finished.index_select(0, src_beam), (tok[:, 0] == 2).float())
                    del logp, stay, cand, flat
                scores[:, 0].tolist()
            del src, sv, smask, mem, caches, tok, scores, finished, seqs


# ---------------------------------------------------------------- crystal structure prediction (DiffCSP-style)


class _CSPLayer(_nn.Module):
    def __init__(self, d, nfreq):
        super().__init__()
        self.edge = _nn.Sequential(_nn.Linear(2 * d + 9 + 6 * nfreq, d), _nn.SiLU(), _nn.Linear(d, d), _nn.SiLU())
        self.node = _nn.Sequential(_nn.Linear(2 * d, d), _nn.SiLU(), _nn.Linear(d, d))
        self.norm = _nn.LayerNorm(d)

    def forward(self, h, fourier, lat, pmask, amask):
        B, N, D = h.shape
        hi = h[:, :, None].expand(B, N, N, D)
        hj = h[:, None].expand(B, N, N, D)
        e = torch.cat([hi, hj, lat[:, None, None].expand(B, N, N, 9), fourier], -1)
        m = self.edge(e) * pmask[..., None]
        agg = m.sum(2) / pmask.sum(2, keepdim=True).clamp_min(1)
        return h + self.node(torch.cat([self.norm(h), agg], -1)) * amask[..., None], m


class _CSPNet(_nn.Module):
    def __init__(self, ntypes, d, layers, nfreq):
        super().__init__()
        self.emb = _nn.Embedding(ntypes, d)
        self.time = _nn.Sequential(_nn.Linear(d, d), _nn.SiLU(), _nn.Linear(d, d))
        self.layers = _nn.ModuleList(_CSPLayer(d, nfreq) for _ in range(layers))
        self.coord = _nn.Linear(d, 3, bias=False)
        self.lat = _nn.Linear(d, 9, bias=False)
        self.d, self.nfreq = d, nfreq

    def forward(self, types, frac, lattice, t, amask):
        B, N = types.shape
        half = self.d // 2
        freqs = torch.exp(-math.log(10000) * torch.arange(half, device=frac.device) / half)
        te = self.time(torch.cat([torch.sin(t[:, None] * freqs), torch.cos(t[:, None] * freqs)], 1))
        h = (self.emb(types) + te[:, None]) * amask[..., None]
        df = frac[:, None] - frac[:, :, None]  # (B,N,N,3) fractional differences
        k = torch.arange(1, self.nfreq + 1, device=frac.device, dtype=frac.dtype)
        ang = 2 * math.pi * df[..., None] * k
        fourier = torch.cat([ang.sin(), ang.cos()], -1).flatten(-2)
        lat = (lattice @ lattice.transpose(1, 2)).flatten(1)
        pmask = amask[:, :, None] * amask[:, None, :]
        for layer in self.layers:
            h, m = layer(h, fourier, lat, pmask, amask)
        eps_f = self.coord(h) * amask[..., None]
        pooled = (h * amask[..., None]).sum(1) / amask.sum(1, keepdim=True)
        eps_l = (self.lat(pooled).view(B, 3, 3) @ lattice)
        return eps_f, eps_l


def _wrapped_score(d, sigma, images=3):
    """The score of a wrapped normal of scale sigma (B,1,1) at fractional offsets d: a sum over periodic images."""
    k = torch.arange(-images, images + 1, device=d.device, dtype=d.dtype)
    x = d[..., None] + k
    w = torch.exp(-x ** 2 / (2 * sigma[..., None] ** 2))
    return (-(x / sigma[..., None] ** 2) * w).sum(-1) / w.sum(-1).clamp_min(1e-12)


@_workload("crystal structure prediction by joint diffusion over fractional coordinates and lattices written by hand in the manner of DiffCSP (random init): crystals of 4-40 atoms (drawn per crystal, 60 element types) with drawn lattices, batched to a budget of 24,576 atom pairs (at most 128 crystals), padded with atom masks; a 4-layer periodic message-passing denoiser (width 256) over all atom pairs of a crystal with Fourier features (8 frequencies) of fractional differences and the lattice's inner products, predicting coordinate scores and lattice noise; DDPM on the lattice (1,000 steps, cosine schedule) and wrapped-normal score matching on the coordinates (sigma 0.005-0.5, score summed over 7 images); bf16 autocast, AdamW, 450 steps; every 150 steps predictor-corrector sampling of 32 compositions of drawn sizes for 100 steps (no grad), the lattice volumes read back")
def diffcsp_lattice_diffusion(rng):
    ntypes, d, nfreq = 60, _smoke(256, 32), _smoke(8, 2)
    model = _CSPNet(ntypes, d, _smoke(4, 1), nfreq).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0)
    T_diff = 1000
    s = torch.arange(T_diff + 1, device="cuda", dtype=torch.float64) / T_diff
    abar = torch.cos((s + 0.008) / 1.008 * math.pi / 2) ** 2
    abar = (abar / abar[0])[1:].clamp(1e-5, 1.0).float()
    smin, smax = 0.005, 0.5
    budget = _smoke(24576, 256)

    def crystals(b, sizes):
        n = max(sizes)
        amask = (torch.arange(n, device="cuda")[None] < torch.tensor(sizes, device="cuda")[:, None]).float()
        types = torch.randint(0, ntypes, (b, n), device="cuda") * amask.long()
        frac = torch.rand(b, n, 3, device="cuda")
        lengths = 3 + 5 * torch.rand(b, 3, device="cuda")
        ang = math.pi / 2 + 0.3 * (torch.rand(b, 3, device="cuda") - 0.5)
        lattice = torch.diag_embed(lengths) + 0.3 * torch.randn(b, 3, 3, device="cuda") * torch.cos(ang)[:, None]
        return types, frac, lattice, amask

    steps = _smoke(450, 3)
    for step in range(steps):
        model.train()
        nmax = rng.randint(_smoke(4, 2), _smoke(40, 6))
        b = max(2, min(_smoke(128, 4), budget // (nmax * nmax)))
        sizes = [rng.randint(max(1, nmax // 3), nmax) for _ in range(b)]
        sizes[0] = nmax
        types, frac, lattice, amask = crystals(b, sizes)
        t = torch.randint(0, T_diff, (b,), device="cuda")
        a = abar[t][:, None, None]
        eps_l = torch.randn_like(lattice)
        lat_t = a.sqrt() * lattice + (1 - a).sqrt() * eps_l
        sigma = smin * (smax / smin) ** (t.float() / T_diff)[:, None, None]
        noise = sigma * torch.randn_like(frac)
        frac_t = (frac + noise) % 1.0
        target = _wrapped_score(noise, sigma) * sigma
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pf, pl = model(types, frac_t, lat_t, t.float(), amask)
        loss_l = ((pl.float() - eps_l) ** 2).mean()
        loss_f = (((pf.float() - target) ** 2) * amask[..., None]).sum() / (3 * amask.sum())
        loss = loss_l + loss_f
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        del types, frac, lattice, amask, t, a, eps_l, lat_t, sigma, noise, frac_t, target, pf, pl
        if step % 25 == 0:
            float(loss)
        if (step + 1) % _smoke(150, 3) == 0:
            model.eval()
            nb = _smoke(32, 2)
            sizes = [rng.randint(_smoke(4, 2), _smoke(40, 6)) for _ in range(nb)]
            with torch.no_grad():
                types, _, _, amask = crystals(nb, sizes)
                x_f = torch.rand(nb, max(sizes), 3, device="cuda")
                x_l = torch.randn(nb, 3, 3, device="cuda")
                nsteps = _smoke(100, 3)
                ts = [round((T_diff - 1) * (1 - i / (nsteps - 1))) for i in range(nsteps)]
                for i, ti in enumerate(ts):
                    tt = torch.full((nb,), float(ti), device="cuda")
                    sig = smin * (smax / smin) ** (ti / T_diff)
                    sig_next = smin * (smax / smin) ** ((ts[i + 1] if i + 1 < nsteps else 0) / T_diff)
                    # corrector: one Langevin step on the coordinates
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        pf, _ = model(types, x_f, x_l, tt, amask)
                    step_c = 0.5 * (sig_next / smax) ** 2 * 1e-4
                    x_f = (x_f + step_c * pf.float() / sig + math.sqrt(2 * step_c) * torch.randn_like(x_f)) % 1.0
                    # predictor: DDPM on the lattice, variance-exploding reverse step on the coordinates
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        pf, pl = model(types, x_f, x_l, tt, amask)
                    a_t = abar[ti]
                    a_prev = abar[ts[i + 1]] if i + 1 < nsteps else torch.ones((), device="cuda")
                    x0 = (x_l - (1 - a_t).sqrt() * pl.float()) / a_t.sqrt()
                    x_l = a_prev.sqrt() * x0 + (1 - a_prev).sqrt() * pl.float()
                    var = max(sig ** 2 - sig_next ** 2, 0.0)
                    x_f = (x_f + var * pf.float() / sig + math.sqrt(var) * torch.randn_like(x_f)) % 1.0
                    x_f = x_f * amask[..., None]
                    del pf, pl, x0
                torch.linalg.det(x_l).abs().mean().item()
            del types, amask, x_f, x_l


# ---------------------------------------------------------------- electron-density predictor on 3D grids


def _conv3(cin, cout):
    return _nn.Sequential(_nn.Conv3d(cin, cout, 3, padding=1), _nn.GroupNorm(8, cout), _nn.SiLU(),
                          _nn.Conv3d(cout, cout, 3, padding=1), _nn.GroupNorm(8, cout), _nn.SiLU())


class _UNet3D(_nn.Module):
    def __init__(self, cin, ch):
        super().__init__()
        self.e1, self.e2, self.e3 = _conv3(cin, ch), _conv3(ch, 2 * ch), _conv3(2 * ch, 4 * ch)
        self.d2, self.d1 = _conv3(6 * ch, 2 * ch), _conv3(3 * ch, ch)
        self.head = _nn.Conv3d(ch, 1, 1)

    def forward(self, x):
        a = self.e1(x)
        b = self.e2(_F.avg_pool3d(a, 2))
        c = self.e3(_F.avg_pool3d(b, 2))
        u = self.d2(torch.cat([b, _F.interpolate(c, size=b.shape[-3:], mode="trilinear", align_corners=False)], 1))
        u = self.d1(torch.cat([a, _F.interpolate(u, size=a.shape[-3:], mode="trilinear", align_corners=False)], 1))
        return self.head(u)


@_workload("electron-density predictor on 3D grids written by hand in the manner of a DFT surrogate (random init): molecules on cubic grids of 32, 40, 48 or 64 points a side (drawn per batch) in batches fitting a budget of 2^18 voxels, each sample's superposition-of-atomic-densities guess and its reference density uploaded as fp16 from reused pinned host buffers on a side stream one batch ahead (waited on by event, record_stream'ed); a 3-level 3D U-Net (24 channels, GroupNorm) predicting the density difference from the guess and positional features made on the device; L1 on the density plus an electron-count constraint on the voxel sum; bf16 autocast, AdamW, 1,200 steps; every 300 steps an evaluation on 4 larger grids of 80 or 96 points a side (drawn, uploaded the same way, no grad), the electron-count error and the L1 read back")
def dft_density_unet3d_train(rng):
    ch = _smoke(24, 8)
    model = _UNet3D(4, ch).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=1e-4)
    budget = _smoke(1 << 18, 4096)
    vmax = _smoke(96 ** 3, 16 ** 3)
    host = [torch.rand(2 * max(budget, vmax), dtype=torch.float16).pin_memory() for _ in range(2)]
    up = SideUploads(host)

    def fetch(i, b, g):
        z, ev = up.upload(i, 2 * b * g ** 3)
        return z, ev, b, g

    def take(item):
        z, ev, b, g = item
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        z.record_stream(cur)
        x = z.view(b, 2, g, g, g).float()
        lin = torch.linspace(-1, 1, g, device="cuda")
        coords = torch.stack(torch.meshgrid(lin, lin, lin, indexing="ij"), 0)[None]
        guess, ref = x[:, :1], x[:, 1:]
        inp = torch.cat([guess, coords[:, :1].expand(b, 1, g, g, g), coords[:, 1:2].expand(b, 1, g, g, g),
                         coords[:, 2:].expand(b, 1, g, g, g)], 1)
        return inp, guess, guess + 0.1 * (ref - 0.5)

    def draw():
        g = rng.choice(_smoke([32, 40, 48, 64], [8, 12, 16]))
        return max(1, budget // g ** 3), g

    steps = _smoke(1200, 3)
    plan = [draw() for _ in range(steps)]
    nxt = fetch(0, *plan[0])
    counter = 1
    for step in range(steps):
        model.train()
        item = nxt
        if step + 1 < steps:
            nxt = fetch(counter, *plan[step + 1])
            counter += 1
        inp, guess, target = take(item)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            delta = model(inp)
        pred = guess + delta.float()
        l1 = (pred - target).abs().mean()
        count = (pred.sum((1, 2, 3, 4)) - target.sum((1, 2, 3, 4))) / target[0].numel()
        loss = l1 + 0.1 * count.pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del item, inp, guess, target, delta, pred, l1, count
        if step % 20 == 0:
            float(loss)
        if (step + 1) % _smoke(300, 3) == 0:
            model.eval()
            errs = []
            with torch.no_grad():
                for _ in range(_smoke(4, 1)):
                    g = rng.choice(_smoke([80, 96], [16]))
                    inp, guess, target = take(fetch(counter, 1, g))
                    counter += 1
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        pred = guess + model(inp).float()
                    errs.append(torch.stack([(pred.sum() - target.sum()).abs() / target.sum(),
                                             (pred - target).abs().mean()]))
                    del inp, guess, target, pred
                torch.stack(errs).tolist()

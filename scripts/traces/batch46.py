"""The forty-sixth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch45_b.py are): computational biology, genomics, single-cell and chemistry, first half. A single-cell VAE
(scVI-style: negative-binomial likelihood, a library-size latent, gene panels of three different widths with their
own first and last layers, sparse count matrices uploaded on a side stream and densified on the device, a latent
kNN graph built in chunks at evaluation), an Enformer-style genomic track predictor (a conv tower with attention
pooling over one-hot DNA windows of varying length, a transformer with a relative position bias, human and mouse
heads of thousands of tracks, Poisson loss; reverse-complement and shift averaged variant-effect scoring), a protein
language model (ESM-2-style, two sizes) scoring every single mutant of proteins of varying length by masked
marginals, and an E(3)-equivariant docking pose model (EGNN message passing over protein pocket residues and
ligand atoms, a k-nearest-neighbour graph built on the device by topk over dense distances, denoising training and
reverse-diffusion pose sampling with confidence ranking). Same conventions as the earlier batches: models written
by hand in torch with random weights, nothing downloaded, `rng` the workload's random.Random for every shape,
length and sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control
flow reads a tensor's value (losses, scores and accuracies are read back only at logging points; boolean-mask
indexing is avoided). scvi_nb_vae_train uses a side stream (uploads waited on by event, the tensors
record_stream'ed); the others are single-stream. enformer_tracks_train and esm_variant_scan run under bf16
autocast, scvi_nb_vae_train and egnn_dock_pose_train in fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch46_b.py's header says the same of its half): every workload of this
half was run whole at its final real sizes (RECORD_SMOKE unset) on PyTorch's meta device with the helper's runner
(saved as /work/notes/meta_run.py, not committed: smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks
answered with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking a math path, streams, events and
pinned memory no-ops; boolean-mask indexing, which the meta device cannot size, is avoided) and its op outputs
counted there (events about 1.8x that count) and its peak live bytes tracked: scvi_nb_vae_train 303,317 op
outputs, peak 0.53 GB; enformer_tracks_train 309,474, 6.01 GB; esm_variant_scan 347,792, 5.80 GB;
egnn_dock_pose_train 308,623, 4.54 GB (record_new46.sh's header has them too). The CPU smoke run
(RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import _mha, _rope

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- scVI-style single-cell VAE


class _ScviPanel(torch.nn.Module):
    """One gene panel's first encoder layer and its decoder's output layers (scale logits, per-gene dispersion
    and, for the library encoder, its own first layer); the rest of the VAE is shared across panels."""

    def __init__(self, genes, hidden, nbatch):
        super().__init__()
        nn = torch.nn
        self.enc = nn.Linear(genes + nbatch, hidden)
        self.lib = nn.Linear(genes + nbatch, hidden)
        self.scale = nn.Linear(hidden, genes)
        self.px_r = nn.Parameter(torch.randn(genes) * 0.1)
        self.nbatch = nbatch


class _Scvi(torch.nn.Module):
    """scVI (Lopez et al. 2018): z ~ q(z | x, s) through a 2-layer BatchNorm MLP, log library l ~ q(l | x, s),
    decoder rho = softmax(f(z, s)), mean exp(l) * rho, gene-wise NB dispersion."""

    def __init__(self, panels, hidden=128, latent=10):
        super().__init__()
        nn = torch.nn
        self.panels = nn.ModuleList([_ScviPanel(g, hidden, nb) for g, nb in panels])
        self.enc = nn.Sequential(nn.BatchNorm1d(hidden), nn.ReLU(), nn.Dropout(0.1), nn.Linear(hidden, hidden),
                                 nn.BatchNorm1d(hidden), nn.ReLU())
        self.mu, self.lv = nn.Linear(hidden, latent), nn.Linear(hidden, latent)
        self.lib = nn.Sequential(nn.BatchNorm1d(hidden), nn.ReLU(), nn.Linear(hidden, 2))
        self.dec = nn.Sequential(nn.Linear(latent + 16, hidden), nn.BatchNorm1d(hidden), nn.ReLU())
        self.latent = latent

    def encode(self, p, x, s1h):
        pan = self.panels[p]
        h = torch.cat([torch.log1p(x), s1h], 1)
        q = self.enc(pan.enc(h))
        lq = self.lib(pan.lib(h))
        return self.mu(q), self.lv(q).clamp(-10, 10), lq[:, :1], lq[:, 1:].clamp(-10, 10)

    def decode(self, p, z, s1h):
        pan = self.panels[p]
        pad = torch.nn.functional.pad(s1h, (0, 16 - s1h.shape[1]))
        return pan.scale(self.dec(torch.cat([z, pad], 1))).softmax(-1), pan.px_r.exp()


def _nb_logpdf(x, mu, theta, eps=1e-8):
    """scVI's negative-binomial log likelihood (mean mu, inverse dispersion theta), summed over genes."""
    log_theta_mu = torch.log(theta + mu + eps)
    res = (theta * (torch.log(theta + eps) - log_theta_mu) + x * (torch.log(mu + eps) - log_theta_mu)
           + torch.lgamma(x + theta) - torch.lgamma(theta) - torch.lgamma(x + 1))
    return res.sum(-1)


@_workload("single-cell RNA-seq representation learning, scVI (Lopez et al. 2018) written by hand (random init, fp32): a VAE over gene counts with a negative-binomial likelihood (gene-wise dispersion), a 10-dim latent and a log-library-size latent with its own encoder, batch covariates one-hot, BatchNorm MLPs of width 128; three datasets with gene panels of different widths (2000-8000 highly variable genes drawn at start, 4-12 batches each) share the inner layers and keep their own first and last layers; each step picks a dataset and a library-size bucket, 256-2048 cells (capped at 8M counts' worth of matrix), whose sparse count matrix (COO rows, columns and values, 3-15% nonzero by bucket) is uploaded from reused pinned host buffers on a side stream one step ahead (waited on by event, record_stream'ed) and densified on the device by index_put_ with accumulation; KL warm-up, Adam with weight decay; every 150 steps each dataset's 20k-60k cells embedded without grad in chunks of 4096 (posterior means concatenated), a 15-nearest-neighbour graph on the latent built in chunks of 2048 (cdist then topk), and a differential-expression query (50 posterior samples of two groups' normalized expression, the log-fold-change read back)")
def scvi_nb_vae_train(rng):
    nsteps = _smoke(900, 4)
    panels = [(_smoke(rng.randrange(2000, 8001, 500), rng.choice([64, 96])), rng.randint(4, 12)) for _ in range(3)]
    model = _Scvi(panels, hidden=_smoke(128, 16)).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-6, eps=0.01)
    cap = _smoke(8_000_000, 4096)
    nnz_max = int(cap * 0.15) + 1
    side = torch.cuda.Stream()
    h_rows = [torch.empty(nnz_max, dtype=torch.int32).pin_memory() for _ in range(2)]
    h_cols = [torch.empty(nnz_max, dtype=torch.int32).pin_memory() for _ in range(2)]
    h_vals = [torch.empty(nnz_max, dtype=torch.float16).pin_memory() for _ in range(2)]
    h_bat = [torch.empty(_smoke(2048, 64), dtype=torch.int64).pin_memory() for _ in range(2)]
    done = [None, None]

    def fetch(i):
        p = rng.randrange(3)
        genes, nbatch = panels[p]
        bucket = rng.randrange(4)  # library-size bucket: deeper cells are denser
        b = min(rng.choice(_smoke([256, 512, 768, 1024, 1536, 2048], [8, 16, 32])), cap // genes)
        nnz = int(b * genes * (0.03 + 0.04 * bucket))
        s = i % 2
        if done[s] is not None:
            done[s].synchronize()
        h_rows[s][:nnz].random_(0, b)
        h_cols[s][:nnz].random_(0, genes)
        h_vals[s][:nnz].random_(1, 8 * (bucket + 1))
        h_bat[s][:b].random_(0, nbatch)
        with torch.cuda.stream(side):
            rows = h_rows[s][:nnz].to("cuda", non_blocking=True)
            cols = h_cols[s][:nnz].to("cuda", non_blocking=True)
            vals = h_vals[s][:nnz].to("cuda", non_blocking=True)
            bat = h_bat[s][:b].to("cuda", non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        done[s] = ev
        return p, b, (rows, cols, vals, bat), ev

    def dense(p, b, parts):
        rows, cols, vals, bat = parts
        x = torch.zeros(b, panels[p][0], device="cuda")
        x.index_put_((rows.long(), cols.long()), vals.float(), accumulate=True)
        return x, torch.nn.functional.one_hot(bat, panels[p][1]).float()

    lib_prior = [(torch.full((1,), 7.0, device="cuda"), torch.ones(1, device="cuda")) for _ in panels]
    nxt = fetch(0)
    for step in range(nsteps):
        p, b, parts, ev = nxt
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        for t in parts:
            t.record_stream(cur)
        nxt = fetch(step + 1)
        x, s1h = dense(p, b, parts)
        mu, lv, lmu, llv = model.encode(p, x, s1h)
        z = mu + (0.5 * lv).exp() * torch.randn_like(mu)
        lib = lmu + (0.5 * llv).exp() * torch.randn_like(lmu)
        rho, theta = model.decode(p, z, s1h)
        rec = -_nb_logpdf(x, lib.exp() * rho, theta)
        kl_z = 0.5 * (mu.pow(2) + lv.exp() - lv - 1).sum(-1)
        pm, pv = lib_prior[p]
        kl_l = 0.5 * ((lmu - pm).pow(2) / pv + llv.exp() / pv - llv + pv.log() - 1).sum(-1)
        w = min(1.0, step / max(1, nsteps // 3))
        loss = (rec + w * kl_z + kl_l).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del parts, x, s1h, mu, lv, lmu, llv, z, lib, rho, theta, rec, kl_z, kl_l, loss
        if (step + 1) % _smoke(150, 2) == 0:
            model.eval()
            with torch.no_grad():
                for q, (genes, nbatch) in enumerate(panels):
                    ncells = _smoke(rng.randrange(20_000, 60_001, 4096), 96)
                    chunk = _smoke(4096, 32)
                    lat = []
                    for c0 in range(0, ncells, chunk):
                        n = min(chunk, ncells - c0)
                        xc = torch.poisson(torch.full((n, genes), 0.4, device="cuda"))
                        sc = torch.nn.functional.one_hot(torch.randint(0, nbatch, (n,), device="cuda"), nbatch).float()
                        lat.append(model.encode(q, xc, sc)[0])
                        del xc, sc
                    lat = torch.cat(lat)
                    nbrs = []
                    kc = _smoke(2048, 32)
                    for c0 in range(0, ncells, kc):
                        d = torch.cdist(lat[c0:c0 + kc], lat)
                        nbrs.append(d.topk(16, largest=False).indices[:, 1:])
                        del d
                    nbrs = torch.cat(nbrs)
                    ga, gb = (torch.randint(0, ncells, (_smoke(500, 8),), device="cuda") for _ in range(2))
                    sc = torch.zeros(ga.shape[0], 16, device="cuda")
                    lfc = 0
                    for _ in range(_smoke(50, 2)):
                        za = lat[ga] + torch.randn(ga.shape[0], model.latent, device="cuda")
                        zb = lat[gb] + torch.randn(gb.shape[0], model.latent, device="cuda")
                        ra, rb = model.decode(q, za, sc[:, :nbatch])[0], model.decode(q, zb, sc[:, :nbatch])[0]
                        lfc = lfc + (ra.mean(0) + 1e-6).log2() - (rb.mean(0) + 1e-6).log2()
                        del za, zb, ra, rb
                    (lfc / _smoke(50, 2)).abs().topk(50).values.cpu()
                    del lat, nbrs, ga, gb, sc, lfc
            model.train()


# ---------------------------------------------------------------- Enformer-style genomic track prediction


class _ConvBlock(torch.nn.Module):
    """Enformer's conv block: BatchNorm, GELU, conv (residual when `res`)."""

    def __init__(self, cin, cout, k, res=False):
        super().__init__()
        self.bn, self.conv, self.res = torch.nn.BatchNorm1d(cin), torch.nn.Conv1d(cin, cout, k, padding=k // 2), res

    def forward(self, x):
        h = self.conv(torch.nn.functional.gelu(self.bn(x)))
        return x + h if self.res else h


class _AttnPool(torch.nn.Module):
    """Enformer's attention pooling by 2: softmax weights from a 1x1 conv (initialised near 2x), pairs summed."""

    def __init__(self, c):
        super().__init__()
        self.logit = torch.nn.Conv1d(c, c, 1, bias=False)

    def forward(self, x):
        b, c, n = x.shape
        xs = x.view(b, c, n // 2, 2)
        w = self.logit(x).view(b, c, n // 2, 2).softmax(-1)
        return (xs * w).sum(-1)


class _RelBiasAttn(torch.nn.Module):
    """Multi-head self-attention with a learned relative position bias (bucketed distances, per head), pre-norm."""

    def __init__(self, d, heads, buckets=64):
        super().__init__()
        nn = torch.nn
        self.ln, self.qkv, self.out = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.bias = nn.Embedding(2 * buckets + 1, heads)
        self.heads, self.buckets = heads, buckets

    def forward(self, x, bucket_ids):
        b, n, d = x.shape
        q, k, v = self.qkv(self.ln(x)).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        bias = self.bias(bucket_ids).permute(2, 0, 1).unsqueeze(0).to(q.dtype)
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        return x + self.out(a.transpose(1, 2).reshape(b, n, d))


class _Enformer(torch.nn.Module):
    """Stem (conv 15, residual conv block, attention pool), a conv tower of 6 (conv 5, residual 1x1, attention
    pool) stages widening to `d` (128 bp bins), transformer layers with relative bias, cropping, a pointwise conv
    to 2d and two species heads (softplus)."""

    def __init__(self, d=768, layers=8, heads=8, tracks=(5313, 1643)):
        super().__init__()
        nn = torch.nn
        c0 = d // 2
        self.stem = nn.Sequential(nn.Conv1d(4, c0, 15, padding=7), _ConvBlock(c0, c0, 1, res=True), _AttnPool(c0))
        chans = [int(c0 * (d / c0) ** (i / 5)) // 16 * 16 for i in range(6)]
        chans[-1] = d
        tower, c = [], c0
        for co in chans:
            tower += [_ConvBlock(c, co, 5), _ConvBlock(co, co, 1, res=True), _AttnPool(co)]
            c = co
        self.tower = nn.Sequential(*tower)
        self.attn = nn.ModuleList([_RelBiasAttn(d, heads) for _ in range(layers)])
        self.ffn = nn.ModuleList([nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 2 * d), nn.Dropout(0.4), nn.ReLU(),
                                                nn.Linear(2 * d, d)) for _ in range(layers)])
        self.final = _ConvBlock(d, 2 * d, 1)
        self.heads = nn.ModuleList([nn.Linear(2 * d, t) for t in tracks])

    def trunk(self, x, crop):
        h = self.tower(self.stem(x)).transpose(1, 2)
        n = h.shape[1]
        pos = torch.arange(n, device=x.device)
        rel = pos[None, :] - pos[:, None]
        sign = rel.sign()
        mag = rel.abs().clamp(min=1).float().log2().mul(8).long().clamp(max=self.attn[0].buckets - 1)
        bucket_ids = (sign * mag + self.attn[0].buckets).long()
        for a, f in zip(self.attn, self.ffn):
            h = a(h, bucket_ids)
            h = h + f(h)
        h = h[:, crop:n - crop].transpose(1, 2)
        return torch.nn.functional.gelu(self.final(h)).transpose(1, 2)

    def forward(self, x, species, crop):
        return torch.nn.functional.softplus(self.heads[species](self.trunk(x, crop)))


def _onehot_dna(b, length):
    return torch.nn.functional.one_hot(torch.randint(0, 4, (b, length), device="cuda"), 4).transpose(1, 2).float()


@_workload("genomic track prediction, Enformer (Avsec et al. 2021) written by hand (random init): one-hot DNA windows of 24,576-98,304 bp drawn per step (multiples of 8192, batches of 1-8 capped at 196,608 bp a batch), a stem (conv 15, residual block, attention pooling) and a 6-stage conv tower with attention pooling widening 384 to 768 channels at 128 bp bins, 8 transformer layers (8 heads, a learned relative position bias over log-bucketed distances passed to SDPA as an additive mask, ReLU FFN with dropout), cropping of a quarter of the bins on each side, a pointwise conv to 1536 and two species heads (human 5313 tracks, mouse 1643, softplus) alternating batches; Poisson loss on random coverage targets, bf16 autocast, AdamW with warm-up and gradient clipping 0.2, 190 steps; every 70 steps a variant-effect scoring pass without grad: 8 variants, reference and alternate windows of 98,304 bp each scored with reverse-complement and 2 bp shift averaging (4 passes a window), the summed track difference read back")
def enformer_tracks_train(rng):
    nsteps = _smoke(190, 3)
    if _smoke(1, 0):
        model = _Enformer()
    else:
        model = _Enformer(d=32, layers=1, heads=2, tracks=(64, 32))
    model = model.cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=1e-4)
    cap = _smoke(196_608, 16_384)
    lens = _smoke(list(range(24_576, 98_305, 8_192)), [8_192, 16_384])
    for step in range(nsteps):
        for g in opt.param_groups:
            g["lr"] = 5e-4 * min(1.0, (step + 1) / 20)
        length = rng.choice(lens)
        b = max(1, min(rng.randint(1, 8), cap // length))
        crop = length // 128 // 4
        species = step % 2
        x = _onehot_dna(b, length)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(x, species, crop).float()
        y = torch.poisson(torch.rand_like(pred) * 4)
        loss = torch.nn.functional.poisson_nll_loss(pred, y, log_input=False)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.2)
        opt.step()
        del x, pred, y, loss
        if (step + 1) % _smoke(70, 2) == 0:
            model.eval()
            length = lens[-1]
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                total = 0
                for _ in range(_smoke(8, 1)):
                    ref = _onehot_dna(1, length + 4)
                    alt = ref.clone()
                    mid = length // 2 + rng.randrange(-64, 64)
                    alt[:, :, mid] = torch.nn.functional.one_hot(torch.randint(0, 4, (1,), device="cuda"), 4).float()
                    preds = []
                    for seq in (ref, alt):
                        acc = 0
                        for sh in (0, 2):
                            win = seq[:, :, sh:sh + length]
                            acc = acc + model(win, 0, length // 512).float()
                            acc = acc + model(win.flip(1, 2), 0, length // 512).float().flip(1)
                        preds.append(acc / 4)
                        del acc
                    total = total + (preds[1] - preds[0]).sum((0, 1))
                    del ref, alt, preds
                total.abs().max().cpu()
            model.train()
            del total


# ---------------------------------------------------------------- protein language model variant scoring


class _EsmLayer(torch.nn.Module):
    """ESM-2's pre-norm transformer layer: rotary self-attention (bidirectional, key padding mask), GELU FFN 4x."""

    def __init__(self, d, heads):
        super().__init__()
        nn = torch.nn
        self.ln1, self.qkv, self.o = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ln2, self.fc1, self.fc2 = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.heads = heads

    def forward(self, x, cos, sin, mask):
        b, n, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        cos, sin = cos.to(q.dtype), sin.to(q.dtype)  # bf16 under autocast, as q and k are
        q, k = _rope(q, cos, sin), _rope(k, cos, sin)
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.o(a.transpose(1, 2).reshape(b, n, d))
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))


class _Esm2(torch.nn.Module):
    """ESM-2 (Lin et al. 2023): 33-token vocabulary, rotary positions, a final LayerNorm and a tied LM head."""

    def __init__(self, d, layers, heads, vocab=33):
        super().__init__()
        nn = torch.nn
        self.embed = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList([_EsmLayer(d, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)
        self.lm_dense, self.lm_ln = nn.Linear(d, d), nn.LayerNorm(d)
        self.heads, self.dh = heads, d // heads

    def forward(self, ids, lengths=None):
        b, n = ids.shape
        inv = 1.0 / 10000 ** (torch.arange(0, self.dh, 2, device=ids.device).float() / self.dh)
        ang = torch.arange(n, device=ids.device).float()[:, None] * inv[None]
        ang = torch.cat([ang, ang], -1)
        cos, sin = ang.cos().to(self.embed.weight.dtype), ang.sin().to(self.embed.weight.dtype)
        mask = None
        if lengths is not None:
            mask = (torch.arange(n, device=ids.device)[None, :] < lengths[:, None])[:, None, None, :]
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x, cos, sin, mask)
        h = self.lm_ln(torch.nn.functional.gelu(self.lm_dense(self.ln(x))))
        return h @ self.embed.weight.t()


_AA = 20  # token ids 4..23 are the 20 amino acids; 32 is <mask>, 0 <cls>, 2 <eos>, 1 <pad>


@_workload("protein variant effect prediction with a protein language model, ESM-2 (Lin et al. 2023) written by hand (random init) at two sizes, 12 layers of 480 (35M) and 30 layers of 640 (150M), rotary attention, tied LM head, bf16 autocast under inference_mode: a deep mutational scan of 9 proteins of 80-1000 residues (drawn) per model, every position masked once (masked marginals, Meier et al. 2021): the masked copies of a protein batched up to 12,288 tokens a forward, the log-softmax at each masked position gathered into an (L, 20) table of log-ratios against the wild type; then 64-256 multi-mutants of each protein scored from the wild-type marginals (one unmasked forward, log-probabilities gathered and summed) and a batch of 8-24 homologues of varying length (padded, key padding mask) embedded by mean pooling; the tables' top-scoring substitutions read back per protein")
def esm_variant_scan(rng):
    cfgs = [(480, 12, 20), (640, 30, 20)] if _smoke(1, 0) else [(32, 1, 2), (48, 2, 2)]
    cap = _smoke(12_288, 256)
    with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
        for d, layers, heads in cfgs:
            model = _Esm2(d, layers, heads).cuda().eval()
            for _ in range(_smoke(9, 2)):
                length = rng.randint(_smoke(80, 8), _smoke(1000, 24))
                n = length + 2
                wt = torch.randint(4, 4 + _AA, (1, n), device="cuda")
                wt[:, 0], wt[:, -1] = 0, 2
                per = max(1, cap // n)
                table = []
                for p0 in range(1, n - 1, per):
                    pos = torch.arange(p0, min(p0 + per, n - 1), device="cuda")
                    m = pos.shape[0]
                    batch = wt.expand(m, n).clone()
                    batch.scatter_(1, pos[:, None], 32)
                    lp = model(batch).float().log_softmax(-1)
                    at = lp.gather(1, pos[:, None, None].expand(m, 1, lp.shape[-1]))[:, 0, 4:4 + _AA]
                    wt_lp = at.gather(1, (wt[0, pos] - 4)[:, None])
                    table.append(at - wt_lp)
                    del pos, batch, lp, at, wt_lp
                table = torch.cat(table)
                logits = model(wt).float().log_softmax(-1)[0, 1:-1, 4:4 + _AA]
                nm = rng.randint(64, 256)
                k = rng.randint(2, 6)
                mpos = torch.randint(0, length, (nm, k), device="cuda")
                maa = torch.randint(0, _AA, (nm, k), device="cuda")
                wt_aa = (wt[0, 1:-1] - 4)[mpos]
                scores = (logits[mpos, maa] - logits[mpos, wt_aa]).sum(-1)
                nh = rng.randint(8, 24)
                hl = [rng.randint(max(8, length // 2), length + length // 4 + 2) for _ in range(nh)]
                hmax = max(hl)
                homs = torch.randint(4, 4 + _AA, (nh, hmax), device="cuda")
                hlen = torch.tensor(hl, device="cuda")
                emb = model(homs, hlen)
                w = (torch.arange(hmax, device="cuda")[None, :] < hlen[:, None]).to(emb.dtype)
                pooled = (emb * w[..., None]).sum(1) / hlen[:, None]
                table.flatten().topk(10).indices.cpu(), scores.topk(8).values.cpu(), pooled.norm(dim=-1).cpu()
                del wt, table, logits, mpos, maa, wt_aa, scores, homs, hlen, emb, w, pooled
            del model


# ---------------------------------------------------------------- equivariant docking pose model


class _EgnnLayer(torch.nn.Module):
    """An E(n)-equivariant layer (Satorras et al. 2021) on a k-nearest-neighbour graph: edge messages from both
    nodes' features, the squared distance (RBF-expanded) and an edge type; coordinates moved along the relative
    vectors, features updated by the summed messages."""

    def __init__(self, d, rbf=16):
        super().__init__()
        nn = torch.nn
        self.edge = nn.Sequential(nn.Linear(2 * d + rbf + 4, d), nn.SiLU(), nn.Linear(d, d), nn.SiLU())
        self.coord = nn.Sequential(nn.Linear(d, d), nn.SiLU(), nn.Linear(d, 1, bias=False))
        self.node = nn.Sequential(nn.Linear(2 * d, d), nn.SiLU(), nn.Linear(d, d))
        self.ln = nn.LayerNorm(d)
        self.register_buffer("centres", torch.linspace(0, 20, rbf))

    def forward(self, h, x, nbr, etype, cut):
        b, n, d = h.shape
        k = nbr.shape[-1]
        flat = nbr.reshape(b, n * k, 1)
        hj = h.gather(1, flat.expand(-1, -1, d)).view(b, n, k, d)
        xj = x.gather(1, flat.expand(-1, -1, 3)).view(b, n, k, 3)
        rel = x[:, :, None] - xj
        d2 = (rel * rel).sum(-1, keepdim=True)
        rbf = torch.exp(-(d2.sqrt() - self.centres) ** 2)
        m = self.edge(torch.cat([h[:, :, None].expand(-1, -1, k, -1), hj, rbf, etype], -1)) * cut
        x = x + (rel / (d2.sqrt() + 1) * self.coord(m) * cut).mean(2)
        h = self.ln(h + self.node(torch.cat([h, m.sum(2)], -1)))
        return h, x


class _DockNet(torch.nn.Module):
    """Protein pocket residues (20 types) and ligand atoms (16 elements) embedded, a time embedding, EGNN layers
    on a kNN graph rebuilt each layer from current coordinates; heads: per-ligand-atom score (displacement) and a
    pooled pose-confidence logit."""

    def __init__(self, d=128, layers=6, k=24):
        super().__init__()
        nn = torch.nn
        self.res, self.atom = nn.Embedding(21, d), nn.Embedding(17, d)
        self.t = nn.Sequential(nn.Linear(32, d), nn.SiLU(), nn.Linear(d, d))
        self.layers = nn.ModuleList([_EgnnLayer(d) for _ in range(layers)])
        self.conf = nn.Sequential(nn.Linear(d, d), nn.SiLU(), nn.Linear(d, 1))
        self.k = k

    def forward(self, res, atom, xp, xl, t, valid):
        """res (B, Np), atom (B, Nl) types (0 = padding), coordinates (B, N*, 3), t (B,), valid (B, Np+Nl) 0/1."""
        np_ = res.shape[1]
        h = torch.cat([self.res(res), self.atom(atom)], 1)
        freqs = torch.exp(-math.log(1000) * torch.arange(16, device=t.device) / 16)
        te = self.t(torch.cat([(t[:, None] * freqs).sin(), (t[:, None] * freqs).cos()], -1))
        h = h + te[:, None]
        x = torch.cat([xp, xl], 1)
        kind = torch.cat([torch.zeros_like(res), torch.ones_like(atom)], 1)
        big = (1 - valid) * 1e4
        for layer in self.layers:
            dist = torch.cdist(x, x) + big[:, None, :] + torch.eye(x.shape[1], device=x.device) * 1e4
            dk, nbr = dist.topk(min(self.k, x.shape[1] - 1), largest=False)
            cut = (0.5 * (torch.cos(dk.clamp(max=10.0) * math.pi / 10.0) + 1))[..., None] * valid[:, :, None, None]
            kj = kind.gather(1, nbr.flatten(1)).view_as(nbr)
            etype = torch.nn.functional.one_hot(kind[:, :, None] * 2 + kj, 4).to(h.dtype)
            xp_fixed = x[:, :np_]
            h, x = layer(h, x, nbr, etype, cut)
            x = torch.cat([xp_fixed, x[:, np_:]], 1)  # the pocket stays rigid
            del dist, dk, nbr, cut, kj, etype
        score = x[:, np_:] - xl
        conf = self.conf((h * valid[..., None]).sum(1) / valid.sum(1, keepdim=True))[:, 0]
        return score, conf


def _random_rotation(n, device):
    q = torch.nn.functional.normalize(torch.randn(n, 4, device=device), dim=-1)
    w, x, y, z = q.unbind(-1)
    return torch.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
                        2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
                        2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1).view(n, 3, 3)


def _complexes(rng, b, np_lo, np_hi, nl_lo, nl_hi):
    """A padded batch of protein-ligand complexes of drawn sizes: residue and atom types (0 past each one's
    length), coordinates, a validity mask."""
    nps = [rng.randint(np_lo, np_hi) for _ in range(b)]
    nls = [rng.randint(nl_lo, nl_hi) for _ in range(b)]
    mp, ml = max(nps), max(nls)
    vp = (torch.arange(mp, device="cuda")[None] < torch.tensor(nps, device="cuda")[:, None]).long()
    vl = (torch.arange(ml, device="cuda")[None] < torch.tensor(nls, device="cuda")[:, None]).long()
    res = torch.randint(1, 21, (b, mp), device="cuda") * vp
    atom = torch.randint(1, 17, (b, ml), device="cuda") * vl
    xp = torch.randn(b, mp, 3, device="cuda") * 8
    xl = torch.randn(b, ml, 3, device="cuda") * 2
    return res, atom, xp, xl, torch.cat([vp, vl], 1).float()


@_workload("protein-ligand docking by score-based pose generation, a DiffDock-like (Corso et al. 2023) model written by hand with an E(n)-equivariant GNN (EGNN, Satorras et al. 2021; random init, fp32): pocket residues (40-320 drawn a complex) and ligand atoms (12-72) embedded, 6 EGNN layers of width 128 on a 24-nearest-neighbour graph rebuilt every layer on the device (dense cdist over the padded complex, padding pushed away, topk; a cosine cutoff at 10 A; edge types protein/ligand), the pocket rigid and the ligand's coordinates updated; denoising training: 4-16 complexes a step (padded to the largest), ligand poses perturbed by a random rotation, translation and per-atom noise at a drawn noise level, the score head regressed onto the displacement and a confidence head onto the pose RMSD (MSE + BCE), Adam; 195 steps, every 50 steps reverse-diffusion sampling for 2 complexes with 24-40 poses each (20 denoising steps from random poses, no grad), poses ranked by confidence (topk) and the best RMSDs read back")
def egnn_dock_pose_train(rng):
    f = torch.nn.functional
    nsteps = _smoke(195, 3)
    model = (_DockNet() if _smoke(1, 0) else _DockNet(d=16, layers=2, k=8)).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sizes = _smoke((40, 320, 12, 72), (6, 12, 4, 8))
    for step in range(nsteps):
        b = rng.randint(_smoke(4, 2), _smoke(16, 3))
        res, atom, xp, xl, valid = _complexes(rng, b, *sizes)
        sigma = rng.uniform(0.1, 1.0)
        rot = _random_rotation(b, "cuda")
        centre = xl.mean(1, keepdim=True)
        noisy = (xl - centre) @ rot.transpose(1, 2) + centre + torch.randn(b, 1, 3, device="cuda") * 4 * sigma
        noisy = noisy + torch.randn_like(xl) * sigma
        t = torch.full((b,), sigma, device="cuda")
        score, conf = model(res, atom, xp, noisy, t, valid)
        vl = valid[:, res.shape[1]:, None]
        target = (xl - noisy) * vl
        rmsd = ((target ** 2).sum(-1).sum(-1) / vl.sum((1, 2))).sqrt()
        loss = ((score * vl - target) ** 2).sum() / vl.sum() + f.binary_cross_entropy_with_logits(conf, (rmsd < 2).float())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
        opt.step()
        del res, atom, xp, xl, valid, rot, noisy, t, score, conf, target, rmsd, loss
        if (step + 1) % _smoke(50, 2) == 0:
            model.eval()
            with torch.no_grad():
                for _ in range(_smoke(2, 1)):
                    poses = rng.randint(_smoke(24, 2), _smoke(40, 3))
                    res, atom, xp, xl, valid = _complexes(rng, 1, *sizes)
                    res, atom, xp, xl, valid = (t.expand(poses, *t.shape[1:]).contiguous() for t in (res, atom, xp, xl, valid))
                    x = xp.mean(1, keepdim=True) + torch.randn_like(xl) * 6
                    nden = _smoke(20, 2)
                    for i in range(nden):
                        sig = 1.0 - i / nden
                        score, conf = model(res, atom, xp, x, torch.full((poses,), sig, device="cuda"), valid)
                        x = x + score * (1.0 / nden) + torch.randn_like(x) * (0.2 * sig / nden ** 0.5)
                        del score
                    best = conf.topk(min(5, poses)).indices
                    rms = ((x - xl) ** 2).sum(-1).mean(-1).sqrt()
                    rms[best].cpu()
                    del res, atom, xp, xl, valid, x, conf, best, rms
            model.train()

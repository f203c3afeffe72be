"""The twenty-seventh batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch26_b.py are). Same conventions: models built from configs (hand-written torch here) with random weights,
nothing downloaded, `rng` the workload's random.Random for every shape, sizes through `_smoke(real, small)` so
that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value. Three are single-stream;
dcn_ctr_prefetch uploads every batch's sparse ids, bag offsets and dense features from reused pinned host buffers
on a side stream (the compute stream waiting on its event, the uploaded tensors record_stream'ed).

record.py calls `register(<its own module object>)` once, just before main(), after batch26_b's: every workload
below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it reaches
record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch27_b.py's header says the same of its half): every workload of this
batch was run whole, at its real sizes (RECORD_SMOKE unset), on PyTorch's meta device (a runner like
/tmp/b27/meta_run.py, not committed: smoke_cpu.py's patching with "cuda" mapped to "meta" instead of the CPU,
modules' .cuda() moving them to meta, readbacks (float, item, tolist, cpu) answered with dummies, autocast a
no-op there so that fp32 sizes are counted where the GPU autocasts, SDPA taking its math path so that (N, N)
attention matrices are counted that the fused kernels never make on the GPU), and its op outputs counted there
(events about twice that count); the counts and peaks are in record_new27.sh's header. Only gqa_chat_serve and
dcn_ctr_prefetch were checked that way in time; alibi_seqwarm_lm and edm_mol_diffusion (like batch27_b.py's four)
passed the CPU smoke run only and are left out of record_new27.sh until checked.
"""

import math

import torch

from batch_common import Batch, upload
from workload_helpers import _rope, _rope_tables

_b = Batch()  # this batch's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- ALiBi LM with sequence-length warmup


def _alibi_slopes(heads):
    """ALiBi's per-head slopes (Press et al. 2022), for a power-of-two head count."""
    start = 2 ** (-8 / heads)
    return torch.tensor([start ** (i + 1) for i in range(heads)])


class _AlibiBlock(torch.nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        nn = torch.nn
        self.h = heads
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x, bias):
        b, n, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, n, 3, self.h, -1).permute(2, 0, 3, 1, 4)
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=bias.to(q.dtype))
        x = x + self.proj(a.transpose(1, 2).reshape(b, n, d))
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.n2(x)), approximate="tanh"))


@_workload("causal LM pretraining with ALiBi position biases and sequence-length warmup (Press et al. 2022; Li et al. 2022's stability-efficiency warmup), written by hand: a GPT-2-small-sized decoder (768 wide, 16 heads of 48, 12 layers, tanh-GELU MLP, no position embeddings, 32000-token tied vocabulary, random init); each step's ALiBi bias built on the device as a (1, 16, T, T) bf16 tensor (head slopes x -distance, causal positions set to -inf) and passed to SDPA as its mask; batches of 4 sequences whose length grows from 64 to 2048 over the first 60% of the 330 steps (linear in the step, rounded to a multiple of 64, a little jitter), then stays at 2048; bf16 autocast, AdamW with warmup and cosine decay, gradient clipping at 1.0, the loss read back every step; every 110 steps a length-extrapolation evaluation at 1024, 2048 and 4096 tokens (batch 2, no grad)")
def alibi_seqwarm_lm(rng):
    f = torch.nn.functional
    # ALiBi's slopes want a power of two of heads: 16 heads of 48.
    d, heads, nl, vocab = _smoke(768, 64), _smoke(16, 4), _smoke(12, 2), _smoke(32000, 500)
    emb = torch.nn.Embedding(vocab, d).cuda()
    blocks = torch.nn.ModuleList(_AlibiBlock(d, heads) for _ in range(nl)).cuda()
    norm = torch.nn.LayerNorm(d).cuda()
    model = torch.nn.ModuleList([emb, blocks, norm])
    slopes = _alibi_slopes(heads).cuda()
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    other = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": other, "weight_decay": 0.0}],
                            lr=6e-4, betas=(0.9, 0.95))
    steps = _smoke(330, 3)
    warm, smax, bsz = int(0.6 * steps), _smoke(2048, 128), 4
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / 30) * 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))

    def bias(t):
        pos = torch.arange(t, device="cuda")
        dist = (pos[None, :] - pos[:, None]).float()  # key - query: <= 0 where attended
        b = slopes[:, None, None] * dist[None]
        return b.masked_fill(dist[None] > 0, float("-inf")).to(torch.bfloat16)[None]

    def forward(ids):
        x = emb(ids)
        mask = bias(ids.shape[1])
        for blk in blocks:
            x = blk(x, mask)
        return f.linear(norm(x), emb.weight)

    for step in range(steps):
        frac = min(1.0, (step + 1) / max(1, warm))
        t = max(64, int(smax * frac) // 64 * 64 + 64 * rng.randint(-1, 1))
        t = min(t, smax)
        ids = torch.randint(0, vocab, (bsz, t + 1), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = forward(ids[:, :-1])
            loss = f.cross_entropy(logits.float().view(-1, vocab), ids[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        float(loss.detach())
        del ids, logits, loss
        if (step + 1) % _smoke(110, 3) == 0:
            model.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for t in (smax // 2, smax, 2 * smax):
                    ids = torch.randint(0, vocab, (2, t + 1), device="cuda")
                    logits = forward(ids[:, :-1])
                    float(f.cross_entropy(logits.float().view(-1, vocab), ids[:, 1:].reshape(-1)))
                    del ids, logits
            model.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- GQA chat serving with early stops


class _GqaLayer(torch.nn.Module):
    def __init__(self, d, heads, kv, ff):
        super().__init__()
        nn = torch.nn
        self.h, self.kv, self.dh = heads, kv, d // heads
        self.n1, self.n2 = nn.RMSNorm(d), nn.RMSNorm(d)
        self.q, self.k, self.v = (nn.Linear(d, d, bias=False), nn.Linear(d, kv * self.dh, bias=False),
                                  nn.Linear(d, kv * self.dh, bias=False))
        self.o = nn.Linear(d, d, bias=False)
        self.gate, self.up, self.down = nn.Linear(d, ff, bias=False), nn.Linear(d, ff, bias=False), nn.Linear(ff, d, bias=False)

    def forward(self, x, cos, sin, cache, mask):
        b, n, _ = x.shape
        h = self.n1(x)
        q = _rope(self.q(h).view(b, n, self.h, self.dh).transpose(1, 2), cos, sin)
        k = _rope(self.k(h).view(b, n, self.kv, self.dh).transpose(1, 2), cos, sin)
        v = self.v(h).view(b, n, self.kv, self.dh).transpose(1, 2)
        if cache[0] is not None:  # HF DynamicCache style: the cache grows by cat every step
            k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
        cache[0], cache[1] = k, v
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, n, -1))
        h = self.n2(x)
        return x + self.down(torch.nn.functional.silu(self.gate(h)) * self.up(h))


@_workload("grouped-query-attention chat serving with static batches, requests of many lengths and early stops (as a simple HF-generate-style server with batch filtering runs it, TGI's filter step): a hand-written Llama-style decoder (2048 wide, 16 query heads sharing 4 KV heads, 16 layers, SwiGLU 5632, RMSNorm, rotary, 32000 vocabulary, random init, bf16 weights, about 1.7 GB); 6 waves of 4-24 chat requests (drawn), prompts of 32-1536 tokens (log-uniform) left-padded to the wave's longest with a key-padding mask, one prefill, then sampled decoding (temperature, top-p over the sorted vocabulary) with KV caches that grow by torch.cat each step; every request stops at its own drawn length (8-112 tokens, as an EOS would) and whenever a quarter of the batch has finished the caches, masks and positions are compacted to the live rows by index_select; each wave's tokens read back at the end")
def gqa_chat_serve(rng):
    f = torch.nn.functional
    d, heads, kv, ff = _smoke(2048, 64), _smoke(16, 4), _smoke(4, 2), _smoke(5632, 128)
    nl, vocab = _smoke(16, 2), _smoke(32000, 500)
    dh = d // heads
    emb = torch.nn.Embedding(vocab, d).cuda().to(torch.bfloat16)
    layers = torch.nn.ModuleList(_GqaLayer(d, heads, kv, ff) for _ in range(nl)).cuda().to(torch.bfloat16).eval()
    norm = torch.nn.RMSNorm(d).cuda().to(torch.bfloat16)
    head = torch.nn.Linear(d, vocab, bias=False).cuda().to(torch.bfloat16)
    maxpos = _smoke(1536 + 112 + 8, 256)
    cos_t, sin_t = _rope_tables(dh, maxpos, 10000.0)
    with torch.inference_mode():
        for _ in range(_smoke(6, 2)):
            nb = rng.randint(4, _smoke(24, 5))
            plens = [_loguniform(rng, _smoke(32, 4), _smoke(1536, 40)) for _ in range(nb)]
            gens = [rng.randint(_smoke(8, 2), _smoke(112, 8)) for _ in range(nb)]
            s = max(plens)
            ids = torch.randint(2, vocab, (nb, s), device="cuda")
            valid = torch.arange(s, device="cuda")[None] >= (s - torch.tensor(plens, device="cuda"))[:, None]
            pos = (valid.long().cumsum(-1) - 1).clamp(min=0)
            causal = torch.ones(s, s, dtype=torch.bool, device="cuda").tril()
            mask = (causal[None] & valid[:, None, :])[:, None]
            caches = [[None, None] for _ in layers]
            x = emb(ids)
            c, sn = cos_t[pos][:, None], sin_t[pos][:, None]
            for i, layer in enumerate(layers):
                x = layer(x, c, sn, caches[i], mask)
            logits = head(norm(x[:, -1]))
            del x, causal, mask, c, sn
            live = list(range(nb))  # request index of every batch row
            remaining = list(gens)
            keymask = valid
            nextpos = pos[:, -1] + 1
            outs = []
            step = 0
            while live:
                probs = (logits.float() / 0.7).softmax(-1)
                sp, si = probs.sort(-1, descending=True)
                keep = sp.cumsum(-1) - sp < 0.9
                sp = sp * keep
                tok = si.gather(1, torch.multinomial(sp, 1))
                outs.append(tok)
                del probs, sp, si, keep
                step += 1
                done = [r for r, q in enumerate(live) if remaining[q] <= step]
                if done and len(live) - len(done) == 0:
                    break
                if len(done) >= max(1, len(live) // 4):
                    rows = [r for r, q in enumerate(live) if remaining[q] > step]
                    sel = torch.tensor(rows, device="cuda")
                    for cache in caches:
                        cache[0], cache[1] = cache[0].index_select(0, sel), cache[1].index_select(0, sel)
                    keymask, nextpos, tok = keymask.index_select(0, sel), nextpos.index_select(0, sel), tok.index_select(0, sel)
                    outs = [o.index_select(0, sel) for o in outs]
                    live = [live[r] for r in rows]
                keymask = torch.cat([keymask, torch.ones(len(live), 1, dtype=torch.bool, device="cuda")], 1)
                x = emb(tok)
                c, sn = cos_t[nextpos][:, None, None], sin_t[nextpos][:, None, None]
                m = keymask[:, None, None]
                for i, layer in enumerate(layers):
                    x = layer(x, c, sn, caches[i], m)
                logits = head(norm(x[:, -1]))
                nextpos = nextpos + 1
                del x, c, sn, m
            torch.cat(outs, 1).tolist()
            del caches, logits, outs, keymask, nextpos, ids, valid, pos
    torch.cuda.synchronize()


# ---------------------------------------------------------------- EDM: equivariant diffusion for molecules


class _EgnnLayer(torch.nn.Module):
    """An E(n)-equivariant GNN layer (Satorras et al. 2021) as EDM's EquivariantBlock uses it, over edge lists."""

    def __init__(self, h):
        super().__init__()
        nn = torch.nn
        self.edge = nn.Sequential(nn.Linear(2 * h + 2, h), nn.SiLU(), nn.Linear(h, h), nn.SiLU())
        self.att = nn.Sequential(nn.Linear(h, 1), nn.Sigmoid())
        self.node = nn.Sequential(nn.Linear(2 * h, h), nn.SiLU(), nn.Linear(h, h))
        self.coord = nn.Sequential(nn.Linear(2 * h + 2, h), nn.SiLU(), nn.Linear(h, h), nn.SiLU(), nn.Linear(h, 1, bias=False))
        self.norm = nn.LayerNorm(h)

    def forward(self, hfeat, x, row, col, d0, emask, nmask):
        diff = x[row] - x[col]
        radial = (diff ** 2).sum(-1, keepdim=True)
        diff = diff / (radial.sqrt() + 1.0)
        ein = torch.cat([hfeat[row], hfeat[col], radial, d0], -1)
        m = self.edge(ein)
        m = m * self.att(m) * emask
        agg = torch.zeros_like(hfeat).index_add_(0, row, m) / 100.0
        hfeat = (hfeat + self.node(torch.cat([hfeat, agg], -1))) * nmask
        hfeat = self.norm(hfeat)
        trans = diff * torch.tanh(self.coord(torch.cat([hfeat[row], hfeat[col], radial, d0], -1))) * 15.0 * emask
        x = (x + torch.zeros_like(x).index_add_(0, row, trans) / 100.0) * nmask
        return hfeat, x


def _edges(counts):
    """Fully connected edges (no self loops) inside every molecule of a batch, built on the host as a collate
    function does: (row, col, molecule of every atom) as CPU tensors."""
    rows, cols, mol = [], [], []
    off = 0
    for i, n in enumerate(counts):
        a = torch.arange(n)
        r, c = a.repeat_interleave(n), a.repeat(n)
        keep = r != c
        rows.append(r[keep] + off)
        cols.append(c[keep] + off)
        mol.append(torch.full((n,), i))
        off += n
    return torch.cat(rows), torch.cat(cols), torch.cat(mol)


@_workload("equivariant diffusion for 3D molecule generation, EDM (Hoogeboom et al. 2022) as its GEOM-drugs-style recipe trains it, written by hand: an EGNN denoiser (9 equivariant layers of 192, SiLU edge, attention, node and coordinate MLPs, random init) over fully connected edge lists inside each molecule (built on the host by the collate function and uploaded), atom types one-hot (16) plus charge as features, positions with the centre of mass removed per molecule by index_add; batches of molecules with 12-72 atoms each (drawn per molecule) up to a budget of 1400 atoms (so 20-90 molecules and 20-100k edges a step); a gamma-schedule noise level per molecule, epsilon prediction with the denoiser's output re-centred, MSE loss, fp32, AdamW with gradient clipping and an EMA copy of the weights, 200 steps, the loss read back every step; every 100 steps a 50-step ancestral sampling chain for 24 molecules of drawn sizes with the EMA weights")
def edm_mol_diffusion(rng):
    nn = torch.nn
    hid, nl, ntype = _smoke(192, 32), _smoke(9, 2), 16
    nf = ntype + 1
    emb_in, emb_out = nn.Linear(nf + 1, hid).cuda(), nn.Linear(hid, nf).cuda()
    layers = nn.ModuleList(_EgnnLayer(hid) for _ in range(nl)).cuda()
    model = nn.ModuleList([emb_in, emb_out, layers])
    ema = [p.detach().clone() for p in model.parameters()]
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, amsgrad=True, weight_decay=1e-12)
    budget, lo, hi = _smoke(1400, 60), _smoke(12, 4), _smoke(72, 12)
    T = 1000

    def alphas(t):  # a polynomial schedule: alpha_t, sigma_t per molecule
        a = (1 - (t.float() / T) ** 2).clamp(min=1e-5) * (1 - 2e-5) + 1e-5
        return a.sqrt(), (1 - a).sqrt()

    def centre(x, mol, nmol):
        s = torch.zeros(nmol, 3, device="cuda").index_add_(0, mol, x)
        cnt = torch.zeros(nmol, 1, device="cuda").index_add_(0, mol, torch.ones_like(x[:, :1]))
        return x - (s / cnt)[mol]

    def denoise(xh, tfrac, row, col, mol, nmol):
        x, h = xh[:, :3], xh[:, 3:]
        nmask = torch.ones(x.shape[0], 1, device="cuda")
        emask = torch.ones(row.shape[0], 1, device="cuda")
        d0 = ((x[row] - x[col]) ** 2).sum(-1, keepdim=True)
        hfeat = emb_in(torch.cat([h, tfrac[mol][:, None]], -1))
        xc = x
        for layer in layers:
            hfeat, xc = layer(hfeat, xc, row, col, d0, emask, nmask)
        return torch.cat([centre(xc - x, mol, nmol), emb_out(hfeat)], -1)

    def collate():
        counts = []
        while True:
            n = rng.randint(lo, hi)
            if sum(counts) + n > budget:
                break
            counts.append(n)
        row, col, mol = _edges(counts)
        return counts, upload(row), upload(col), upload(mol)

    steps = _smoke(200, 3)
    for step in range(steps):
        counts, row, col, mol = collate()
        nmol, natom = len(counts), sum(counts)
        x = centre(torch.randn(natom, 3, device="cuda"), mol, nmol)
        h = torch.cat([f_one_hot(torch.randint(0, ntype, (natom,), device="cuda"), ntype),
                       torch.randint(1, 10, (natom, 1), device="cuda").float() / 10], -1)
        t = torch.randint(0, T + 1, (nmol,), device="cuda")
        a, s = alphas(t)
        eps = torch.cat([centre(torch.randn(natom, 3, device="cuda"), mol, nmol), torch.randn(natom, nf, device="cuda")], -1)
        z = a[mol][:, None] * torch.cat([x, h], -1) + s[mol][:, None] * eps
        pred = denoise(z, t.float() / T, row, col, mol, nmol)
        loss = ((pred - eps) ** 2).sum(-1).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        with torch.no_grad():
            torch._foreach_lerp_(ema, [p.detach() for p in model.parameters()], 0.001)
        float(loss.detach())
        del row, col, mol, x, h, t, a, s, eps, z, pred, loss
        if (step + 1) % _smoke(100, 3) == 0:
            live = [p.detach().clone() for p in model.parameters()]
            with torch.no_grad():
                for p, e in zip(model.parameters(), ema):
                    p.copy_(e)
                counts = [rng.randint(lo, hi) for _ in range(_smoke(24, 3))]
                row, col, mol = (upload(v) for v in _edges(counts))
                nmol, natom = len(counts), sum(counts)
                z = torch.cat([centre(torch.randn(natom, 3, device="cuda"), mol, nmol),
                               torch.randn(natom, nf, device="cuda")], -1)
                nsample = _smoke(50, 3)
                for k in range(nsample, 0, -1):
                    tt = torch.full((nmol,), k * T // nsample, device="cuda")
                    a, s = alphas(tt)
                    a2, s2 = alphas(tt - T // nsample)
                    eps = denoise(z, tt.float() / T, row, col, mol, nmol)
                    mean = (z - (s ** 2 - (a / a2) ** 2 * s2 ** 2).clamp(min=0).sqrt()[mol][:, None] * eps) / (a / a2)[mol][:, None]
                    noise = torch.cat([centre(torch.randn(natom, 3, device="cuda"), mol, nmol),
                                       torch.randn(natom, nf, device="cuda")], -1)
                    z = mean + 0.1 * s2[mol][:, None] * noise
                    del tt, a, s, a2, s2, eps, mean, noise
                z[:, 3:3 + ntype].argmax(-1).cpu()
                for p, v in zip(model.parameters(), live):
                    p.copy_(v)
                del live, row, col, mol, z
    torch.cuda.synchronize()


def f_one_hot(idx, n):
    return torch.nn.functional.one_hot(idx, n).float()


# ---------------------------------------------------------------- DCN-v2 CTR training with a prefetch stream


@_workload("click-through-rate model training, DCN-v2 (Wang et al. 2021) on Criteo-style logs with multi-hot features, in plain PyTorch: 26 categorical features in nn.EmbeddingBag tables (mode sum, dense gradients) of 1k-2M rows (about 5.3M rows of 64 in all), every sample's bag size per feature drawn (1 for single-valued features, 1-40 for the multi-hot ones, so the id count of a batch varies); 13 dense features through a 512-256-64 bottom MLP; a 3-layer low-rank (rank 256) cross network and a 1024-1024-512 deep tower in parallel, a logit head, BCE loss; batches of 2048-8192 samples (drawn), their ids, bag offsets and dense features staged in 3 reused pinned host buffers and uploaded on a side stream one batch ahead (the compute stream waiting on the batch's event, the tensors record_stream'ed); bf16 autocast for the MLPs, Adam (fp32 states over the tables too), 780 steps, the loss read back every step; every 260 steps an evaluation over 4 batches of 16384 with AUC-style sorted scores")
def dcn_ctr_prefetch(rng):
    nn, f = torch.nn, torch.nn.functional
    dim = 64
    scale = _smoke(1, 1000)
    rows = [max(8, r // scale) for r in [2_000_000, 1_000_000, 600_000, 400_000, 300_000, 200_000, 150_000,
                                         100_000, 100_000, 80_000, 60_000, 50_000, 40_000, 30_000, 20_000,
                                         10_000, 10_000, 5_000, 5_000, 3_000, 2_000, 2_000, 1_000, 1_000, 1_000,
                                         1_000]]
    multi = set(rng.sample(range(26), 8))
    tables = nn.ModuleList(nn.EmbeddingBag(r, dim, mode="sum") for r in rows).cuda()
    bottom = nn.Sequential(nn.Linear(13, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, dim), nn.ReLU()).cuda()
    d0 = 27 * dim
    rank = _smoke(256, 16)
    cross_u = nn.ModuleList(nn.Linear(d0, rank, bias=False) for _ in range(3)).cuda()
    cross_v = nn.ModuleList(nn.Linear(rank, d0) for _ in range(3)).cuda()
    w = _smoke(1024, 32)
    deep = nn.Sequential(nn.Linear(d0, w), nn.ReLU(), nn.Linear(w, w), nn.ReLU(), nn.Linear(w, w // 2), nn.ReLU()).cuda()
    top = nn.Linear(d0 + w // 2, 1).cuda()
    model = nn.ModuleList([tables, bottom, cross_u, cross_v, deep, top])
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    side = torch.cuda.Stream()
    bmax = _smoke(16384, 64)
    maxids = bmax * (18 + 8 * 40)  # room for every bag at its largest
    hosts = [(torch.empty(maxids, dtype=torch.long).pin_memory(), torch.empty(26 * bmax, dtype=torch.long).pin_memory(),
              torch.empty(bmax, 14).pin_memory()) for _ in range(3)]
    for hi, ho, hd in hosts:
        hi.random_(0, 1000)
        hd.normal_()

    gen = torch.Generator().manual_seed(rng.randrange(2 ** 31))

    def stage(k, b):
        """The collate step on the host: every multi-hot sample's bag size drawn (1-40), the bag offsets of every
        feature written into host buffer k; returns the per-feature id counts."""
        ho = hosts[k][1]
        counts = []
        for i in range(26):
            if i in multi:
                sizes = torch.randint(1, 41, (b,), generator=gen)
                ends = sizes.cumsum(0)
                ho[i * b:(i + 1) * b] = ends - sizes
                counts.append(int(ends[-1]))
            else:
                torch.arange(b, out=ho[i * b:(i + 1) * b])
                counts.append(b)
        return k, b, counts

    def upload_batch(spec):
        k, b, counts = spec
        hi, ho, hd = hosts[k]
        n = sum(counts)
        with torch.cuda.stream(side):
            ids, offs, dense = upload(hi[:n]), upload(ho[:26 * b]), upload(hd[:b])
            ev = side.record_event()
        return ids, offs, dense, ev, counts

    def forward(batch, b):
        ids, offs, dense, ev, counts = batch
        torch.cuda.current_stream().wait_event(ev)
        for t in (ids, offs, dense):
            t.record_stream(torch.cuda.current_stream())
        embs, start = [], 0
        for i, tab in enumerate(tables):
            # ids hashed into the table's rows, offsets of feature i's bags inside its slice of ids
            embs.append(tab(ids[start:start + counts[i]] % tab.num_embeddings, offs[i * b:(i + 1) * b]))
            start += counts[i]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            x0 = torch.cat([bottom(dense[:, :13])] + embs, 1)
            x = x0
            for u, v in zip(cross_u, cross_v):
                x = x0 * v(u(x)) + x
            out = top(torch.cat([x, deep(x0)], 1)).float().squeeze(1)
        return out, dense[:, 13]

    steps = _smoke(780, 3)
    nxt = upload_batch(stage(0, rng.randint(_smoke(2048, 16), _smoke(8192, 32))))
    for step in range(steps):
        cur = nxt
        b = cur[2].shape[0]
        nxt = upload_batch(stage((step + 1) % 3, rng.randint(_smoke(2048, 16), _smoke(8192, 32))))
        logit, y = forward(cur, b)
        loss = f.binary_cross_entropy_with_logits(logit, (y > 0).float())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        float(loss.detach())
        del cur, logit, y, loss
        if (step + 1) % _smoke(260, 3) == 0:
            model.eval()
            with torch.no_grad():
                scores, labels = [], []
                for _ in range(_smoke(4, 1)):
                    side.synchronize()  # host buffer 0 free again
                    batch = upload_batch(stage(0, bmax))
                    s, y = forward(batch, bmax)
                    scores.append(s)
                    labels.append(y > 0)
                    del batch
                s, lab = torch.cat(scores), torch.cat(labels)
                order = s.argsort(descending=True)
                lab = lab[order].float()
                tp = lab.cumsum(0)
                fp = (1 - lab).cumsum(0)
                float((tp * (1 - lab)).sum() / (tp[-1] * fp[-1] + 1))
                del scores, labels, s, lab, order, tp, fp
            model.train()
    torch.cuda.synchronize()

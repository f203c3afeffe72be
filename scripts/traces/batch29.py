"""The twenty-ninth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch28_b.py are): contrastive sequential-recommendation training (CL4SRec), LLM generation with a KIVI-style
quantized KV cache, TabNet training on a tabular dataset, and BiLSTM-CRF named-entity-recognition training with
Viterbi decoding. Same conventions: models built from configs (hand-written torch here) with random weights,
nothing downloaded, `rng` the workload's random.Random for every shape, sizes through `_smoke(real, small)` so
that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value. All four are single-stream;
cl4srec_train runs under bf16 autocast, kivi_kvquant_gen holds its weights and activations in bf16, tabnet_train
and bilstm_crf_ner run in fp32.

record.py calls `register(<its own module object>)` once, just before main(), after batch28_b's: every workload
below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it reaches
record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch29_b.py's header says the same of its half): every workload of this
half was run whole, at its real sizes (RECORD_SMOKE unset), on PyTorch's meta device (a runner like
/tmp/b29/meta_run.py, not committed: smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered
with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking its math path; boolean-mask indexing,
which the meta device cannot size, is avoided: masked means are weighted sums) and its op outputs counted there
(events about 1.8x that count); the counts and peaks are in record_new29.sh's header.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this batch's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- CL4SRec: contrastive sequential recommendation


class _SasBlock(torch.nn.Module):
    """A pre-norm SASRec block: masked self-attention and a GELU feed-forward layer, dropout on both."""

    def __init__(self, d, heads):
        super().__init__()
        nn = torch.nn
        self.h = heads
        self.n1, self.qkv, self.o = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.n2, self.fc1, self.fc2 = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.drop = nn.Dropout(0.2)

    def forward(self, x, mask):
        f = torch.nn.functional
        q, k, v = (t.unflatten(-1, (self.h, -1)).transpose(1, 2) for t in self.qkv(self.n1(x)).chunk(3, -1))
        a = f.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.drop(self.o(a.transpose(1, 2).flatten(2)))
        return x + self.drop(self.fc2(f.gelu(self.fc1(self.n2(x)))))


@_workload("contrastive sequential recommendation training, CL4SRec (Xie et al. 2022) on a SASRec encoder, written by hand: 60000 items (plus padding and a mask token), 3 pre-norm causal self-attention blocks (256 wide, 4 heads, learned positions up to 200, dropout 0.2); users' interaction histories of 3-200 items (drawn per user, log-uniform) left-padded to the batch's longest, batches of 128-512 users (drawn) capped by a 32768-item budget; two augmented views of every history, each user's augmentation drawn among item crop (60% window), item mask (30%) and item reorder (a 40% window shuffled by argsort of noise), all built with arange comparisons and torch.where; a sampled-softmax next-item loss at every valid position (the positive against 256 shared sampled negatives) plus an InfoNCE loss (temperature 1) between the two views' masked-mean representations with the other 2B-2 views as negatives; bf16 autocast, AdamW, 300 steps, the loss read back every 10 steps; every 75 steps a full-ranking evaluation of 2048 users (histories of 50) against all 60000 items in chunks of 512, HR@10 and NDCG@10 read back")
def cl4srec_train(rng):
    nn, f = torch.nn, torch.nn.functional
    nitems, d, heads, nl = _smoke(60000, 500), _smoke(256, 32), _smoke(4, 2), _smoke(3, 1)
    lmax, nneg, budget = _smoke(200, 12), _smoke(256, 8), _smoke(32768, 64)
    pad, mask_id = 0, nitems
    emb, pos = nn.Embedding(nitems + 1, d, padding_idx=pad).cuda(), nn.Embedding(lmax, d).cuda()
    blocks = nn.ModuleList(_SasBlock(d, heads) for _ in range(nl)).cuda()
    norm = nn.LayerNorm(d).cuda()
    model = nn.ModuleList([emb, pos, blocks, norm])
    steps = _smoke(300, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)

    def encode(seq, valid):
        b, n = seq.shape
        x = emb(seq) * math.sqrt(d) + pos(torch.arange(lmax - n, lmax, device="cuda"))
        x = f.dropout(x, 0.2, model.training) * valid[..., None]
        causal = torch.ones(n, n, dtype=torch.bool, device="cuda").tril()
        eye = torch.eye(n, dtype=torch.bool, device="cuda")
        mask = (causal[None] & valid[:, None, :]) | eye[None]
        for blk in blocks:
            x = blk(x, mask[:, None])
        return norm(x)

    def augment(seq, valid, lens):
        """Per user one of crop / mask / reorder; returns the view's items and validity."""
        b, n = seq.shape
        p = torch.arange(n, device="cuda")[None].float()
        first = (n - lens)[:, None].float()  # the first valid position (left padding)
        lf = lens[:, None].float()
        # crop: keep a window of ceil(0.6 len) items at a random offset
        cl = torch.ceil(0.6 * lf)
        c0 = first + torch.floor(torch.rand(b, 1, device="cuda") * (lf - cl + 1))
        keep = (p >= c0) & (p < c0 + cl)
        crop_seq, crop_valid = seq * keep, valid & keep
        # mask: 30% of the valid items replaced by the mask token
        masked = torch.where(valid & (torch.rand(b, n, device="cuda") < 0.3), torch.full_like(seq, mask_id), seq)
        # reorder: a window of ceil(0.4 len) items shuffled
        rl = torch.ceil(0.4 * lf)
        r0 = first + torch.floor(torch.rand(b, 1, device="cuda") * (lf - rl + 1))
        inwin = (p >= r0) & (p < r0 + rl)
        key = torch.where(inwin, r0 + torch.rand(b, n, device="cuda") * rl, p)
        reordered = seq.gather(1, key.argsort(-1))
        which = torch.randint(0, 3, (b, 1), device="cuda")
        view = torch.where(which == 0, crop_seq, torch.where(which == 1, masked, reordered))
        vvalid = torch.where(which == 0, crop_valid, valid)
        return view, vvalid

    def mean_rep(h, valid):
        w = valid.to(h.dtype)[..., None]
        return (h * w).sum(1) / w.sum(1).clamp(min=1)

    for step in range(steps):
        n_users = rng.randint(_smoke(128, 4), _smoke(512, 8))
        lens_l = [_loguniform(rng, 3, lmax - 1) for _ in range(n_users)]
        n = max(lens_l) + 1
        b = max(_smoke(16, 2), min(n_users, budget // n))
        lens_l = lens_l[:b]
        lens = torch.tensor([x + 1 for x in lens_l], device="cuda")
        valid_all = torch.arange(n, device="cuda")[None] >= (n - lens)[:, None]
        seq_all = torch.randint(1, nitems, (b, n), device="cuda") * valid_all
        seq, valid, tgt, tvalid = seq_all[:, :-1], valid_all[:, :-1], seq_all[:, 1:], valid_all[:, 1:] & valid_all[:, :-1]
        negs = torch.randint(1, nitems, (nneg,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = encode(seq, valid)
            pos_logit = (h * emb(tgt)).sum(-1, keepdim=True)
            neg_logit = h @ emb(negs).t()
            logits = torch.cat([pos_logit, neg_logit], -1).float()
            nll = -logits.log_softmax(-1)[..., 0]
            tw = tvalid.float()
            rec_loss = (nll * tw).sum() / tw.sum().clamp(min=1)
            v1, m1 = augment(seq, valid, lens - 1)
            v2, m2 = augment(seq, valid, lens - 1)
            z = f.normalize(torch.cat([mean_rep(encode(v1, m1), m1), mean_rep(encode(v2, m2), m2)]).float(), dim=-1)
            sim = (z @ z.t()).masked_fill(torch.eye(2 * b, dtype=torch.bool, device="cuda"), -1e9)
            labels = torch.arange(2 * b, device="cuda").roll(b)
            cl_loss = f.cross_entropy(sim, labels)
            loss = rec_loss + 0.1 * cl_loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 10 == 0:
            float(loss.detach())
        del lens, valid_all, seq_all, seq, valid, tgt, tvalid, negs, h, pos_logit, neg_logit, logits, nll, tw
        del rec_loss, v1, m1, v2, m2, z, sim, labels, cl_loss, loss
        if (step + 1) % _smoke(75, 2) == 0:
            model.eval()
            hits = torch.zeros((), device="cuda")
            ndcg = torch.zeros((), device="cuda")
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for _ in range(_smoke(4, 1)):
                    ub, hl = _smoke(512, 4), _smoke(50, 6)
                    seq = torch.randint(1, nitems, (ub, hl), device="cuda")
                    valid = torch.ones(ub, hl, dtype=torch.bool, device="cuda")
                    tgt = torch.randint(1, nitems, (ub,), device="cuda")
                    scores = encode(seq, valid)[:, -1] @ emb.weight[:nitems].t()
                    scores[:, pad] = -1e4
                    top = scores.topk(10, -1).indices
                    hit = (top == tgt[:, None]).float()
                    hits += hit.sum()
                    ndcg += (hit / torch.log2(torch.arange(2, 12, device="cuda").float())[None]).sum()
                    del seq, valid, tgt, scores, top, hit
            float(hits), float(ndcg)
            model.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- generation with a KIVI-style quantized KV cache


class _LlamaLayer(torch.nn.Module):
    """A Llama decoder layer: RMSNorm, fused QKV, rotary positions, SDPA, SwiGLU MLP (no biases)."""

    def __init__(self, d, heads, ff):
        super().__init__()
        nn = torch.nn
        self.h = heads
        self.g1, self.g2 = nn.Parameter(torch.ones(d)), nn.Parameter(torch.ones(d))
        self.qkv, self.o = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d, bias=False)
        self.w13, self.w2 = nn.Linear(d, 2 * ff, bias=False), nn.Linear(ff, d, bias=False)

    @staticmethod
    def rms(x, g):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * g

    def mlp(self, x):
        a, b = self.w13(self.rms(x, self.g2)).chunk(2, -1)
        return x + self.w2(torch.nn.functional.silu(a) * b)


def _rotate(x, cos, sin):
    """Rotary embedding over the head dimension (halves rotated), x (B, H, T, hd), cos/sin (T, hd / 2)."""
    x1, x2 = x.chunk(2, -1)
    c, s = cos.to(x.dtype), sin.to(x.dtype)
    return torch.cat([x1 * c - x2 * s, x1 * s + x2 * c], -1)


def _quant_keys(k, group):
    """KIVI's key quantization: per channel over groups of `group` tokens, 4-bit levels held one per uint8."""
    b, h, t, hd = k.shape
    kg = k.float().view(b, h, t // group, group, hd)
    mn, mx = kg.amin(3, keepdim=True), kg.amax(3, keepdim=True)
    scale = (mx - mn).clamp(min=1e-5) / 15
    q = ((kg - mn) / scale).round().clamp(0, 15).to(torch.uint8)
    return q.view(b, h, t, hd), scale.to(k.dtype), mn.to(k.dtype)


def _quant_values(v):
    """KIVI's value quantization: per token, 4-bit levels held one per uint8."""
    vf = v.float()
    mn, mx = vf.amin(-1, keepdim=True), vf.amax(-1, keepdim=True)
    scale = (mx - mn).clamp(min=1e-5) / 15
    return ((vf - mn) / scale).round().clamp(0, 15).to(torch.uint8), scale.to(v.dtype), mn.to(v.dtype)


@_workload("batched LLM generation with a KIVI-style quantized KV cache (Liu et al. 2024), written by hand on a Llama-style decoder of 10 layers (2048 wide, 16 heads of 128, SwiGLU 5632, rotary positions, 32000-token vocabulary, random init) held in bf16: rounds of 4-12 prompts (drawn) of 200-1536 tokens (drawn per prompt) left-padded to the round's longest with a key-padding mask, a causal prefill, then 40-88 new tokens (drawn per round) sampled with temperature 0.8 and top-k 50; every layer's cache kept as 4-bit codes (one per uint8) in 32-token groups, keys quantized per channel and values per token (scales and minima in bf16) plus a full-precision residual window: each new token's keys and values appended to the residual by torch.cat, a full residual of 32 quantized and appended to the store by torch.cat, the store dequantized to bf16 and concatenated with the residual for every decoding step's attention; 6 rounds, each round's tokens read back at its end")
def kivi_kvquant_gen(rng):
    nn, f = torch.nn, torch.nn.functional
    d, heads, nl, ff, vocab = _smoke(2048, 64), _smoke(16, 4), _smoke(10, 2), _smoke(5632, 128), _smoke(32000, 300)
    group, hd = _smoke(32, 4), d // heads
    bf = torch.bfloat16
    emb = nn.Embedding(vocab, d).cuda().to(bf)
    layers = nn.ModuleList(_LlamaLayer(d, heads, ff) for _ in range(nl)).cuda().to(bf)
    gf = nn.Parameter(torch.ones(d, device="cuda", dtype=bf))
    lm_head = nn.Linear(d, vocab, bias=False).cuda().to(bf)
    maxpos = _smoke(2048, 64)
    inv = 1.0 / (10000 ** (torch.arange(0, hd, 2, device="cuda").float() / hd))
    ang = torch.arange(maxpos, device="cuda").float()[:, None] * inv[None]
    cos_t, sin_t = ang.cos(), ang.sin()

    def split(t):
        return t.unflatten(-1, (heads, hd)).transpose(1, 2)

    def deq_keys(q, scale, mn):
        b, h, t, _ = q.shape
        return (q.view(b, h, t // group, group, hd).to(bf) * scale + mn).view(b, h, t, hd)

    def quantize_into(cache, k, v):
        kq, ks, km = _quant_keys(k, group)
        vq, vs, vm = _quant_values(v)
        new = (kq, ks, km, vq, vs, vm)
        if cache["store"] is None:
            cache["store"] = new
        else:
            dims = (2, 2, 2, 2, 2, 2)
            cache["store"] = tuple(torch.cat([a, b], dm) for a, b, dm in zip(cache["store"], new, dims))

    def attend(layer, x, cache, posn, mask, causal):
        q, k, v = (split(t) for t in layer.qkv(layer.rms(x, layer.g1)).chunk(3, -1))
        c, s = cos_t[posn], sin_t[posn]
        q, k = _rotate(q, c, s), _rotate(k, c, s)
        if cache["res"] is not None:
            k_res, v_res = torch.cat([cache["res"][0], k], 2), torch.cat([cache["res"][1], v], 2)
        else:
            k_res, v_res = k, v
        if causal:  # prefill: attend to the prompt in full precision, then fill the cache
            a = f.scaled_dot_product_attention(q, k, v, attn_mask=mask)
            t = k.shape[2]
            tq = t // group * group
            if tq:
                quantize_into(cache, k[:, :, :tq], v[:, :, :tq])
            cache["res"] = (k[:, :, tq:].clone(), v[:, :, tq:].clone()) if t > tq else None
        else:
            if cache["store"] is not None:
                kq, ks, km, vq, vs, vm = cache["store"]
                kk = torch.cat([deq_keys(kq, ks, km), k_res], 2)
                vv = torch.cat([vq.to(bf) * vs + vm, v_res], 2)
            else:
                kk, vv = k_res, v_res
            a = f.scaled_dot_product_attention(q, kk, vv, attn_mask=mask)
            del kk, vv
            if k_res.shape[2] == group:
                quantize_into(cache, k_res, v_res)
                cache["res"] = None
            else:
                cache["res"] = (k_res, v_res)
        return x + layer.o(a.transpose(1, 2).flatten(2))

    with torch.no_grad():
        for _ in range(_smoke(6, 2)):
            b = rng.randint(_smoke(4, 1), _smoke(12, 3))
            plens = [rng.randint(_smoke(200, 5), _smoke(1536, 30)) for _ in range(b)]
            p = max(plens)
            new_tokens = rng.randint(_smoke(40, 3), _smoke(88, 6))
            ids = torch.randint(0, vocab, (b, p), device="cuda")
            keyvalid = torch.arange(p, device="cuda")[None] >= (p - torch.tensor(plens, device="cuda"))[:, None]
            causal = torch.ones(p, p, dtype=torch.bool, device="cuda").tril()
            mask = ((causal[None] & keyvalid[:, None]) | torch.eye(p, dtype=torch.bool, device="cuda")[None])[:, None]
            caches = [{"store": None, "res": None} for _ in layers]
            x = emb(ids)
            posn = torch.arange(p, device="cuda")
            for layer, cache in zip(layers, caches):
                x = layer.mlp(attend(layer, x, cache, posn, mask, True))
            del mask, causal, ids
            logits = lm_head(_LlamaLayer.rms(x[:, -1], gf)).float()
            del x
            out = []
            for i in range(new_tokens):
                top = (logits / 0.8).topk(50, -1)
                pick = torch.multinomial(top.values.softmax(-1), 1)
                tok = top.indices.gather(1, pick)
                out.append(tok)
                keyvalid = torch.cat([keyvalid, torch.ones(b, 1, dtype=torch.bool, device="cuda")], 1)
                m = keyvalid[:, None, None, :]
                x = emb(tok)
                posn = torch.full((1,), p + i, device="cuda", dtype=torch.long)
                for layer, cache in zip(layers, caches):
                    x = layer.mlp(attend(layer, x, cache, posn, m, False))
                logits = lm_head(_LlamaLayer.rms(x[:, -1], gf)).float()
                del top, pick, x, m
            torch.cat(out, 1).tolist()
            del caches, out, logits, keyvalid, tok, posn
    torch.cuda.synchronize()


# ---------------------------------------------------------------- TabNet


def _sparsemax(z):
    """Sparsemax over the last dimension (Martins & Astudillo 2016), by sort and cumsum."""
    zs = z.sort(-1, descending=True).values
    k = torch.arange(1, z.shape[-1] + 1, device=z.device, dtype=z.dtype)
    cs = zs.cumsum(-1) - 1
    kz = (k * zs > cs).sum(-1, keepdim=True)
    tau = cs.gather(-1, kz - 1) / kz.to(z.dtype)
    return torch.clamp(z - tau, min=0)


class _Gbn(torch.nn.Module):
    """Ghost batch normalization: BatchNorm over virtual batches of `vbs` rows when training."""

    def __init__(self, d, vbs):
        super().__init__()
        self.bn, self.vbs = torch.nn.BatchNorm1d(d, momentum=0.02), vbs

    def forward(self, x):
        if not self.training:
            return self.bn(x)
        return torch.cat([self.bn(c) for c in x.split(self.vbs)], 0)


class _Glu(torch.nn.Module):
    def __init__(self, i, o, vbs):
        super().__init__()
        self.fc, self.bn = torch.nn.Linear(i, 2 * o, bias=False), _Gbn(2 * o, vbs)

    def forward(self, x):
        a, b = self.bn(self.fc(x)).chunk(2, -1)
        return a * torch.sigmoid(b)


class _FeatTransformer(torch.nn.Module):
    """Two shared GLU layers then two step-specific ones, residuals scaled by sqrt(0.5)."""

    def __init__(self, shared, width, vbs):
        super().__init__()
        self.shared = shared
        self.own = torch.nn.ModuleList(_Glu(width, width, vbs) for _ in range(2))

    def forward(self, x):
        s = math.sqrt(0.5)
        x = self.shared[0](x)
        x = (x + self.shared[1](x)) * s
        for g in self.own:
            x = (x + g(x)) * s
        return x


@_workload("tabular classification training with TabNet (Arik & Pfister 2021) as its Forest-Cover recipe trains it, written by hand and small (well under 1 GB): a table of 400000 rows held on the device (80 numeric columns and 12 categorical ones of 10-1000 levels embedded in 4 dimensions each, 7 classes), an input BatchNorm, 5 decision steps of n_d = n_a = 64 (feature transformers of 2 shared and 2 step-specific GLU layers, ghost BatchNorm over virtual batches of 512, residuals scaled by sqrt(0.5); attentive transformers with prior scales at relaxation 1.5 and sparsemax by sort and cumsum), the mask-entropy sparsity loss at 1e-4; epochs of a fresh device permutation sliced into batches of 1024-4096 rows (drawn per batch), Adam at 2e-2 with step decay, gradient clipping at 2.0, 150 steps, the loss read back every 10 steps; every 50 steps an evaluation over 60000 validation rows in batches of 16384 (no grad, running statistics) with accuracy read back and the aggregated feature-importance masks of one batch read back")
def tabnet_train(rng):
    nn, f = torch.nn, torch.nn.functional
    nrows, nnum, ncls = _smoke(400000, 2000), _smoke(80, 8), 7
    cards = [rng.randint(10, _smoke(1000, 20)) for _ in range(_smoke(12, 3))]
    nd = na = _smoke(64, 8)
    nsteps, vbs, gamma = _smoke(5, 2), _smoke(512, 16), 1.5
    width = nd + na
    nin = nnum + 4 * len(cards)
    x_num = torch.randn(nrows, nnum, device="cuda")
    x_cat = torch.stack([torch.randint(0, c, (nrows,), device="cuda") for c in cards], 1)
    y_all = torch.randint(0, ncls, (nrows,), device="cuda")
    embs = nn.ModuleList(nn.Embedding(c, 4) for c in cards).cuda()
    bn0 = nn.BatchNorm1d(nin, momentum=0.01).cuda()
    shared = nn.ModuleList([_Glu(nin, width, vbs), _Glu(width, width, vbs)]).cuda()
    first = _FeatTransformer(shared, width, vbs).cuda()
    feats = nn.ModuleList(_FeatTransformer(shared, width, vbs) for _ in range(nsteps)).cuda()
    atts = nn.ModuleList(nn.Sequential(nn.Linear(na, nin, bias=False), _Gbn(nin, vbs)) for _ in range(nsteps)).cuda()
    final = nn.Linear(nd, ncls).cuda()
    model = nn.ModuleList([embs, bn0, shared, first, feats, atts, final])
    opt = torch.optim.Adam(model.parameters(), lr=2e-2)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=_smoke(50, 2), gamma=0.9)

    def forward(idx):
        x = torch.cat([x_num[idx]] + [e(x_cat[idx, i]) for i, e in enumerate(embs)], 1)
        x = bn0(x)
        prior = torch.ones_like(x)
        att = first(x)[:, nd:]
        out = 0
        m_loss = 0
        explain = torch.zeros_like(x)
        for step in range(nsteps):
            m = _sparsemax(atts[step](att) * prior)
            m_loss = m_loss + (-m * torch.log(m + 1e-15)).sum(1).mean()
            prior = prior * (gamma - m)
            h = feats[step](m * x)
            dstep = torch.relu(h[:, :nd])
            out = out + dstep
            explain = explain + m * dstep.sum(1, keepdim=True)
            att = h[:, nd:]
        return final(out), m_loss / nsteps, explain

    steps, perm, cursor = _smoke(150, 3), None, nrows
    for step in range(steps):
        bsz = rng.choice([1024, 1536, 2048, 3072, 4096]) if _smoke(1, 0) else 2 * vbs
        if cursor + bsz > nrows:
            perm, cursor = torch.randperm(nrows, device="cuda"), 0
        idx = perm[cursor:cursor + bsz]
        cursor += bsz
        logits, m_loss, _ = forward(idx)
        loss = f.cross_entropy(logits, y_all[idx]) + 1e-4 * m_loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0)
        opt.step()
        sched.step()
        if step % 10 == 0:
            float(loss.detach())
        del idx, logits, m_loss, loss
        if (step + 1) % _smoke(50, 2) == 0:
            model.eval()
            correct = torch.zeros((), device="cuda")
            with torch.no_grad():
                nval, eb = _smoke(60000, 64), _smoke(16384, 32)
                for s0 in range(0, nval, eb):
                    idx = torch.arange(s0, min(nval, s0 + eb), device="cuda")
                    logits, _, explain = forward(idx)
                    correct += (logits.argmax(-1) == y_all[idx]).sum()
                    del idx, logits
                float(correct)
                (explain.sum(0) / explain.sum()).tolist()
                del explain
            model.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- BiLSTM-CRF NER


class _BiLstm(torch.nn.Module):
    """A bidirectional LSTM written by hand: both directions' input projections in one matmul, then a step loop
    per direction (padding steps keep the state by torch.where)."""

    def __init__(self, i, hid):
        super().__init__()
        self.hid = hid
        self.ih = torch.nn.Linear(i, 8 * hid)
        self.hh = torch.nn.ModuleList(torch.nn.Linear(hid, 4 * hid, bias=False) for _ in range(2))

    def forward(self, x, mask):
        b, t, _ = x.shape
        gx = self.ih(x).chunk(2, -1)
        keep = (mask > 0)[..., None].unbind(1)
        outs = []
        for dr in range(2):
            h = x.new_zeros(b, self.hid)
            c = x.new_zeros(b, self.hid)
            hs = [None] * t
            for s in (range(t) if dr == 0 else range(t - 1, -1, -1)):
                i, fg, g, o = (gx[dr][:, s] + self.hh[dr](h)).chunk(4, -1)
                c_new = torch.sigmoid(fg) * c + torch.sigmoid(i) * torch.tanh(g)
                h_new = torch.sigmoid(o) * torch.tanh(c_new)
                c = torch.where(keep[s], c_new, c)
                h = torch.where(keep[s], h_new, h)
                hs[s] = h
            outs.append(torch.stack(hs, 1))
        return torch.cat(outs, -1)


@_workload("named-entity-recognition training with a BiLSTM-CNN-CRF tagger (Lample et al. 2016; Ma & Hovy 2016) as a CoNLL-2003 recipe trains it, written by hand: 100000-word embeddings of 200 (random, standing in for GloVe), a character CNN (30-dim character embeddings, 50 filters of width 3, max over each word's characters), dropout 0.5, a bidirectional LSTM of 256 a direction written as a step loop (padding steps keep the state), 9 BIO tags with a linear-chain CRF (start, end and transition scores); sentences of 2-40 words (drawn per sentence, log-uniform) right-padded to the batch's longest with words of 3-16 characters (the batch's longest drawn), batches of 16-64 sentences (drawn); the CRF negative log-likelihood (gold path score against the forward algorithm's logsumexp over the padded steps, masked by torch.where), SGD with momentum 0.9 at 0.015 with 1/(1+0.05 epoch) decay, gradient clipping at 5.0, 80 steps, the loss read back every 10 steps; every 20 steps Viterbi decoding (max and argmax a step, the backtrace by gather) of 4 dev batches of 64, the decoded tags read back")
def bilstm_crf_ner(rng):
    nn, f = torch.nn, torch.nn.functional
    nwords, wdim, nchars, cdim, nfilt = _smoke(100000, 500), _smoke(200, 16), 100, _smoke(30, 8), _smoke(50, 8)
    hid, ntags = _smoke(256, 16), 9
    wemb, cemb = nn.Embedding(nwords, wdim).cuda(), nn.Embedding(nchars, cdim, padding_idx=0).cuda()
    cconv = nn.Conv1d(cdim, nfilt, 3, padding=1).cuda()
    lstm = _BiLstm(wdim + nfilt, hid).cuda()
    proj = nn.Linear(2 * hid, ntags).cuda()
    trans = nn.Parameter(torch.randn(ntags, ntags, device="cuda") * 0.1)
    start, end = nn.Parameter(torch.zeros(ntags, device="cuda")), nn.Parameter(torch.zeros(ntags, device="cuda"))
    model = nn.ModuleList([wemb, cemb, cconv, lstm, proj])
    params = list(model.parameters()) + [trans, start, end]
    opt = torch.optim.SGD(params, lr=0.015, momentum=0.9)
    steps = _smoke(80, 3)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0 / (1 + 0.05 * (s // max(1, steps // 10))))

    def batch(b):
        lens_l = [_loguniform(rng, 2, _smoke(40, 6)) for _ in range(b)]
        t, wl = max(lens_l), rng.randint(3, _smoke(16, 5))
        lens = torch.tensor(lens_l, device="cuda")
        mask = (torch.arange(t, device="cuda")[None] < lens[:, None]).float()
        words = torch.randint(1, nwords, (b, t), device="cuda") * mask.long()
        clen = torch.randint(1, wl + 1, (b, t, 1), device="cuda")
        chars = torch.randint(1, nchars, (b, t, wl), device="cuda") * (torch.arange(wl, device="cuda") < clen)
        tags = torch.randint(0, ntags, (b, t), device="cuda")
        return words, chars, tags, mask, lens

    def emissions(words, chars, mask, train):
        b, t, wl = chars.shape
        ce = cemb(chars.flatten(0, 1)).transpose(1, 2)  # (B*T, cdim, wl)
        cf = cconv(ce).amax(-1).view(b, t, -1)
        x = f.dropout(torch.cat([wemb(words), cf], -1), 0.5, train)
        h = f.dropout(lstm(x, mask), 0.5, train)
        return proj(h)

    def crf_nll(em, tags, mask, lens):
        b, t, _ = em.shape
        gold = start[tags[:, 0]] + em[:, 0].gather(1, tags[:, :1]).squeeze(1)
        if t > 1:
            step_scores = em[:, 1:].gather(2, tags[:, 1:, None]).squeeze(2) + trans[tags[:, :-1], tags[:, 1:]]
            gold = gold + (step_scores * mask[:, 1:]).sum(1)
        last = tags.gather(1, (lens - 1)[:, None]).squeeze(1)
        gold = gold + end[last]
        alpha = start[None] + em[:, 0]
        for s in range(1, t):
            nxt = torch.logsumexp(alpha[:, :, None] + trans[None] + em[:, s, None, :], 1)
            alpha = torch.where(mask[:, s, None] > 0, nxt, alpha)
        logz = torch.logsumexp(alpha + end[None], 1)
        return (logz - gold).mean()

    def viterbi(em, mask):
        b, t, _ = em.shape
        score = start[None] + em[:, 0]
        hist = []
        for s in range(1, t):
            best, idx = (score[:, :, None] + trans[None] + em[:, s, None, :]).max(1)
            score = torch.where(mask[:, s, None] > 0, best, score)
            hist.append(idx)
        cur = (score + end[None]).argmax(-1)
        path = [cur]
        for s in range(t - 1, 0, -1):
            prev = hist[s - 1].gather(1, cur[:, None]).squeeze(1)
            cur = torch.where(mask[:, s] > 0, prev, cur)
            path.append(cur)
        return torch.stack(path[::-1], 1)

    for step in range(steps):
        b = rng.randint(_smoke(16, 2), _smoke(64, 4))
        words, chars, tags, mask, lens = batch(b)
        loss = crf_nll(emissions(words, chars, mask, True), tags, mask, lens)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 5.0)
        opt.step()
        sched.step()
        if step % 10 == 0:
            float(loss.detach())
        del words, chars, tags, mask, lens, loss
        if (step + 1) % _smoke(20, 2) == 0:
            model.eval()
            with torch.no_grad():
                for _ in range(_smoke(4, 1)):
                    words, chars, tags, mask, lens = batch(_smoke(64, 3))
                    viterbi(emissions(words, chars, mask, False), mask).tolist()
                    del words, chars, tags, mask, lens
            model.train()
    torch.cuda.synchronize()

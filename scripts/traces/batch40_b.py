"""The fortieth batch of held-out workloads for record.py, second half (batch40.py holds the first): LLM training
systems. Long-context fine-tuning with ring attention simulated on one GPU (the sequence cut into chunks, every
query chunk meeting the key chunks in ring order with a log-sum-exp merge, each block recomputed in the
backward; the next step's tokens prefetched on a side stream), a mixture-of-experts LM trained with expert-choice
routing (each expert takes its top tokens up to a capacity drawn per step, unpicked tokens dropped), multi-token
prediction pretraining (DeepSeek-V3-style sequential MTP modules) on packed documents attended document by
document, and grouped-query-attention uptraining (Ainslie et al. 2023: a multi-head checkpoint converted by
mean-pooling its key and value heads to 8, 4, 2 and then 1 group, each phase a new model and optimizer). Same
conventions as batch40.py: models built from configs (hand-written torch, batch40.py's decoder layer) with random
weights, nothing downloaded, `rng` the workload's random.Random for every shape, sizes through `_smoke(real,
small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value (document lengths and
capacities are drawn on the host; losses are read back only at logging points). ringattn_longctx_train uses a
side stream (uploads waited on by event, tensors record_stream'ed); the others are single-stream.
ringattn_longctx_train and mtp_packed_pretrain run under bf16 autocast, expert_choice_moe_train and
gqa_uptrain_sweep in fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. The plumbing is batch_common.py's.

Real sizes checked before recording: every workload of this half was run whole (RECORD_SMOKE unset; some at
more steps, then cut back by the ratio of counts, as record_new40.sh says), on PyTorch's meta device (a runner like /tmp/b40/meta_run.py, not committed: smoke_cpu.py's patching
with "cuda" mapped to "meta", readbacks answered with dummies, autocast a no-op so that fp32 sizes are counted,
SDPA taking its math path; boolean-mask indexing, which the meta device cannot size, is avoided) and its op
outputs counted there (events about 1.8x that count); the counts and peaks are in record_new40.sh's header. The
CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch
from torch.utils.checkpoint import checkpoint

from batch40 import _Layer, _Lm
from batch_common import Batch
from workload_helpers import _repeat_kv, _rope_tables

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


def _ce_chunk(norm, head, h, y, w):
    return (torch.nn.functional.cross_entropy(head(norm(h)).float(), y, reduction="none") * w).sum()


def _chunked_ce(lm, h, labels, weight, chunk=2048, norm=None):
    """Cross-entropy of h (N, d) through lm's final norm and head, chunk by chunk, each chunk's logits
    recomputed in the backward (only h is kept)."""
    tot = 0
    for a in range(0, h.shape[0], chunk):
        tot = tot + checkpoint(_ce_chunk, norm or lm.norm, lm.head, h[a:a + chunk], labels[a:a + chunk],
                               weight[a:a + chunk], use_reentrant=False, preserve_rng_state=False)
    return tot / weight.sum().clamp(min=1)


def _causal_self_attn(ly, x, cos, sin):
    """x (B, T, d) through ly's attention (causal SDPA, keys and values repeated to the query heads)."""
    B, T, _ = x.shape
    q, k, v = ly.qkv(x, cos, sin)
    rep = ly.heads // ly.kvh
    a = torch.nn.functional.scaled_dot_product_attention(q.transpose(1, 2), _repeat_kv(k.transpose(1, 2), rep),
                                                         _repeat_kv(v.transpose(1, 2), rep), is_causal=True)
    return x + ly.o(a.transpose(1, 2).reshape(B, T, -1))


# ---------------------------------------------------------------- ring attention long-context fine-tuning


@_workload("long-context fine-tuning with ring attention simulated on one GPU (Liu et al. 2023's blockwise ring order, written by hand; two CUDA streams): a 4-layer Llama-style decoder (width 768, GQA 12/4 heads of 64, SwiGLU 2048, vocab 32000, rope theta 500000, random init) on single sequences of 4096-16384 tokens (2-8 chunks of 2048, drawn per step); every layer's attention runs query chunk by key chunk in ring order (causal: key chunks up to the query's), each block's scores, log-sum-exp and output in fp32 under activation checkpointing (recomputed in the backward), merged into the running output by log-add-exp rescaling; the loss by chunked cross-entropy (each 2048-token chunk's logits recomputed in the backward); the next step's tokens uploaded from a reused pinned host buffer on a side stream one step ahead (the compute stream waits on the upload's event, the tensor record_stream'ed); gradient clipping at 1, AdamW, bf16 autocast, 64 steps, the loss read back every 8 steps")
def ringattn_longctx_train(rng):
    L, d, H, KV = _smoke(4, 2), _smoke(768, 64), _smoke(12, 4), _smoke(4, 2)
    C = _smoke(2048, 32)
    lm = _Lm(d, L, H, KV, _smoke(2048, 128)).cuda()
    dh, rep = lm.dh, H // KV
    scale = 1.0 / math.sqrt(dh)
    opt = torch.optim.AdamW(lm.parameters(), lr=2e-5, weight_decay=0.0, foreach=True)
    cos, sin = _rope_tables(dh, 8 * C, 500000.0)
    tri = torch.full((C, C), float("-inf"), device="cuda").triu(1)
    side = torch.cuda.Stream()
    cur = torch.cuda.current_stream()
    host = torch.randint(0, 32000, (8 * C + 1,)).pin_memory()
    nsteps = _smoke(64, 2)

    def block(q, k, v, bias):
        s = (q.float() @ k.float().transpose(1, 2)) * scale
        if bias is not None:
            s = s + bias
        lse = s.logsumexp(-1)
        return (torch.exp(s - lse[..., None]).to(v.dtype) @ v).float(), lse

    def ring(q, k, v):
        qs, ks, vs = q.split(C, 1), k.split(C, 1), v.split(C, 1)
        outs = []
        for i in range(len(qs)):
            o = lse = None
            for j in range(i + 1):
                oj, lj = checkpoint(block, qs[i], ks[j], vs[j], tri if j == i else None, use_reentrant=False,
                                    preserve_rng_state=False)
                if o is None:
                    o, lse = oj, lj
                else:
                    m = torch.logaddexp(lse, lj)
                    o = o * torch.exp(lse - m)[..., None] + oj * torch.exp(lj - m)[..., None]
                    lse = m
            outs.append(o)
        return torch.cat(outs, 1)

    def upload():
        n = rng.randint(2, 8) if _smoke(1, 0) else 2
        with torch.cuda.stream(side):
            ids = host[:n * C + 1].to("cuda", non_blocking=True)
            ev = side.record_event()
        return ids, ev

    pending = upload()
    for step in range(nsteps):
        ids, ev = pending
        cur.wait_event(ev)
        ids.record_stream(cur)
        if step + 1 < nsteps:
            pending = upload()
        T = ids.shape[0] - 1
        c, s = cos[:T, None], sin[:T, None]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            x = lm.emb(ids[:-1])
            for ly in lm.layers:
                q, k, v = ly.qkv(x, c, s)
                a = ring(q.transpose(0, 1), _repeat_kv(k.transpose(0, 1)[None], rep)[0],
                         _repeat_kv(v.transpose(0, 1)[None], rep)[0])
                x = ly.mlp(x + ly.o(a.to(x.dtype).transpose(0, 1).reshape(T, H * dh)))
            loss = _chunked_ce(lm, x, ids[1:], torch.ones(T, device="cuda"), C)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(lm.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % 8 == 0:
            loss.item()
        del ids, x, loss
    torch.cuda.synchronize()


# ---------------------------------------------------------------- expert-choice mixture of experts


class _EcMoe(torch.nn.Module):
    """Expert-choice routing (Zhou et al. 2022): every expert takes its top-k tokens by router probability,
    k = tokens x capacity factor / experts; tokens no expert takes are dropped (zero update)."""

    def __init__(self, d, experts, ff):
        super().__init__()
        self.n = torch.nn.RMSNorm(d)
        self.router = torch.nn.Linear(d, experts, bias=False)
        self.w1 = torch.nn.Parameter(torch.randn(experts, d, ff) * d ** -0.5)
        self.w2 = torch.nn.Parameter(torch.randn(experts, ff, d) * ff ** -0.5)
        self.e = experts

    def forward(self, x, cf):
        shape = x.shape
        h = self.n(x).reshape(-1, shape[-1])
        N = h.shape[0]
        logits = self.router(h)
        g, idx = logits.softmax(-1).t().topk(max(1, int(N * cf / self.e)), -1)  # (E, k)
        ye = torch.bmm(torch.nn.functional.gelu(torch.bmm(h[idx], self.w1)), self.w2) * g[..., None]
        out = torch.zeros_like(h).index_add_(0, idx.reshape(-1), ye.reshape(-1, shape[-1]))
        zloss = logits.logsumexp(-1).pow(2).mean()
        return x + out.view(shape), zloss, idx


@_workload("mixture-of-experts LM training with expert-choice routing (Zhou et al. 2022) written by hand (random init, fp32): an 8-layer decoder (width 512, 8 heads of 64, rotary, RMSNorm) whose odd layers replace the SwiGLU MLP (1408) by 16 GELU experts of 1024 with a linear router: every expert takes its top-k tokens of the step by router probability, k = tokens x capacity factor / 16 with the capacity factor drawn per step from 1.0, 1.25 and 2.0, the picked tokens gathered into a (16, k, 512) batch, two bmm's over the stacked expert weights, gated and index_add_'ed back, tokens no expert picks dropped (their residual passed on); router z-loss 1e-3; batches of sequences of 64 up to 256, 512 or 1024 tokens (log-uniform, the maximum drawn per step) right-padded to the longest (a multiple of 64), as many as fit in 6144 tokens, causal SDPA, padding masked out of the loss by weights; AdamW, gradient clipping at 1, 260 steps; every 55 steps a no-grad evaluation batch whose loss and dropped-token fraction (an index_add_ coverage count) are read back")
def expert_choice_moe_train(rng):
    f = torch.nn.functional
    L, d, H = _smoke(8, 2), _smoke(512, 64), _smoke(8, 4)
    E, eff = _smoke(16, 4), _smoke(1024, 64)
    lm = _Lm(d, L, H, H, _smoke(1408, 128)).cuda()
    moes = torch.nn.ModuleList(_EcMoe(d, E, eff) for _ in range(L // 2)).cuda()
    params = list(lm.parameters()) + list(moes.parameters())
    opt = torch.optim.AdamW(params, lr=3e-4, weight_decay=0.1, foreach=True)
    cos, sin = _rope_tables(lm.dh, 1024, 10000.0)
    cos, sin = cos.float(), sin.float()
    cap = _smoke(6144, 256)
    nsteps = _smoke(260, 2)

    def forward(ids, w, cf):
        B, T = ids.shape
        c, s = cos[:T, None], sin[:T, None]
        x = lm.emb(ids)
        z, picks = 0, []
        for i, ly in enumerate(lm.layers):
            x = _causal_self_attn(ly, x, c, s)
            if i % 2:
                x, zl, idx = moes[i // 2](x, cf)
                z, picks = z + zl, picks + [idx]
            else:
                x = ly.mlp(x)
        logits = lm.head(lm.norm(x[:, :-1]))
        ce = f.cross_entropy(logits.reshape(-1, lm.vocab), ids[:, 1:].reshape(-1), reduction="none")
        return (ce * w.reshape(-1)).sum() / w.sum() + 1e-3 * z, picks

    def batch():
        tmax = rng.choice([256, 512, 1024]) if _smoke(1, 0) else 64
        B = max(1, rng.randint(cap // tmax // 2, cap // tmax))
        lens = [_loguniform(rng, 64 if _smoke(1, 0) else 8, tmax) for _ in range(B)]
        T = -(-max(lens) // 64) * 64
        while B * T > cap:
            B, lens = B - 1, lens[:-1]
        ids = torch.randint(0, 32000, (B, T), device="cuda")
        w = (torch.arange(T - 1, device="cuda")[None, :] < torch.tensor(lens, device="cuda")[:, None] - 1).float()
        return ids, w

    for step in range(nsteps):
        ids, w = batch()
        loss, _ = forward(ids, w, rng.choice([1.0, 1.25, 2.0]))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del loss
        if step % 55 == 54:
            with torch.no_grad():
                ids, w = batch()
                loss, picks = forward(ids, w, 1.0)
                N = ids.numel()
                cover = torch.stack([torch.zeros(N, device="cuda").index_add_(0, p.reshape(-1),
                                                                               torch.ones(p.numel(), device="cuda"))
                                     for p in picks])
                torch.stack([loss, (cover == 0).float().mean()]).cpu()
                del loss, picks, cover
    torch.cuda.synchronize()


# ---------------------------------------------------------------- multi-token prediction on packed documents


@_workload("multi-token prediction pretraining on packed documents, DeepSeek-V3-style MTP written by hand (random init): a 6-layer Llama-style decoder (width 768, GQA 12/4 heads of 64, SwiGLU 2048, vocab 32000) and 2 sequential MTP modules (RMSNorm of the previous depth's hidden states and of the embedding of the token k ahead, concatenated and projected 1536 -> 768, one decoder layer each, the shared embedding and output head) predicting tokens 2 and 3 ahead; every step a stream of 4096, 5120 or 6144 tokens (drawn) packed with documents of 16-1024 tokens (log-uniform, the last cut), position ids restarting at every document, attention run document by document (causal SDPA on each document's slice, varlen-style, keys and values repeated to 12 heads), the MTP losses weighted off where the target lies in another document; losses by chunked cross-entropy (each 2048-token chunk's logits recomputed in the backward), main loss + 0.3 x the MTP losses' mean, AdamW, gradient clipping at 1, bf16 autocast, 45 steps, the loss read back every 10 steps")
def mtp_packed_pretrain(rng):
    L, d, H, KV, ff, D = _smoke(6, 2), _smoke(768, 64), _smoke(12, 4), _smoke(4, 2), _smoke(2048, 128), 2
    lm = _Lm(d, L, H, KV, ff).cuda()
    nn = torch.nn
    mtp = nn.ModuleList(nn.ModuleDict({"hn": nn.RMSNorm(d), "en": nn.RMSNorm(d), "on": nn.RMSNorm(d),
                                       "proj": nn.Linear(2 * d, d, bias=False),
                                       "blk": _Layer(d, H, KV, lm.dh, ff)}) for _ in range(D)).cuda()
    params = list(lm.parameters()) + list(mtp.parameters())
    opt = torch.optim.AdamW(params, lr=3e-4, weight_decay=0.1, foreach=True)
    dh, rep = lm.dh, H // KV
    cos, sin = _rope_tables(dh, 1024, 10000.0)
    nsteps = _smoke(45, 2)

    def attend(ly, x, c, s, docs):
        q, k, v = ly.qkv(x, c, s)
        outs, a = [], 0
        for n in docs:
            outs.append(torch.nn.functional.scaled_dot_product_attention(
                q[a:a + n].transpose(0, 1), _repeat_kv(k[a:a + n].transpose(0, 1)[None], rep)[0],
                _repeat_kv(v[a:a + n].transpose(0, 1)[None], rep)[0], is_causal=True))
            a += n
        return ly.mlp(x + ly.o(torch.cat(outs, 1).transpose(0, 1).reshape(x.shape[0], -1)))

    for step in range(nsteps):
        N = rng.choice([4096, 5120, 6144]) if _smoke(1, 0) else 96
        docs, tot = [], 0
        while tot < N + D + 1:
            n = _loguniform(rng, 16, _smoke(1024, 40))
            docs.append(n)
            tot += n
        pos, doc = [], []
        for j, n in enumerate(docs):
            pos += range(n)
            doc += [j] * n
        ids = torch.randint(0, 32000, (N + D + 1,), device="cuda")
        pos_t = torch.tensor(pos[:N], device="cuda")
        doc_t = torch.tensor(doc[:N + D + 1], device="cuda")
        cut = docs[:]
        while sum(cut) > N:
            over = sum(cut) - N
            if cut[-1] > over:
                cut[-1] -= over
            else:
                cut.pop()
        c, s = cos[pos_t][:, None], sin[pos_t][:, None]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = lm.emb(ids[:N])
            for ly in lm.layers:
                h = attend(ly, h, c, s, cut)
            same = (doc_t[1:N + 1] == doc_t[:N]).float()
            loss = _chunked_ce(lm, h, ids[1:N + 1], same)
            extra = 0
            for k, m in enumerate(mtp, 1):
                x = m["proj"](torch.cat([m["hn"](h), m["en"](lm.emb(ids[k:k + N]))], -1))
                h = attend(m["blk"], x, c, s, cut)
                w = (doc_t[k + 1:k + 1 + N] == doc_t[:N]).float()
                extra = extra + _chunked_ce(lm, h, ids[k + 1:k + 1 + N], w, norm=m["on"])
            loss = loss + 0.3 * extra / D
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % 10 == 0:
            loss.item()
        del h, x, loss, extra
    torch.cuda.synchronize()


# ---------------------------------------------------------------- grouped-query attention uptraining


@_workload("grouped-query-attention uptraining (Ainslie et al. 2023) written by hand (random init, fp32): an 8-layer Llama-style decoder (width 768, 16 query heads of 48, SwiGLU 2048, vocab 32000) trained first as multi-head (16 KV heads), then converted four times, to 8, 4, 2 and 1 KV groups (multi-query at the end), each conversion a new model whose key and value projections are the mean of the previous model's heads in each group (state_dict copied, the old model and its optimizer freed) and a fresh AdamW; 5 phases of 48 steps, each step a batch of sequences of 128-1024 tokens (a multiple of 64, drawn) as many as fit in 2048-4096 tokens (drawn), causal SDPA with keys and values repeated to 16 heads, full-vocabulary cross-entropy, gradient clipping at 1; after each phase 4 no-grad evaluation batches at 1024 tokens whose losses are read back")
def gqa_uptrain_sweep(rng):
    f = torch.nn.functional
    L, d, H, dh = _smoke(8, 2), _smoke(768, 64), _smoke(16, 4), _smoke(48, 16)
    ff = _smoke(2048, 128)
    groups = [H, H // 2, H // 4, H // 8, 1] if _smoke(1, 0) else [4, 2, 1]
    cos, sin = _rope_tables(dh, 1024, 10000.0)
    cos, sin = cos.float(), sin.float()
    nsteps = _smoke(48, 2)
    lm = opt = None

    def loss_of(ids):
        T = ids.shape[1]
        x = lm.emb(ids)
        for ly in lm.layers:
            x = ly.mlp(_causal_self_attn(ly, x, cos[:T, None], sin[:T, None]))
        logits = lm.head(lm.norm(x[:, :-1]))
        return f.cross_entropy(logits.reshape(-1, lm.vocab), ids[:, 1:].reshape(-1))

    for G in groups:
        new = _Lm(d, L, H, G, ff, dh=dh).cuda()
        if lm is not None:
            with torch.no_grad():
                sd = lm.state_dict()
                for i in range(L):
                    key = f"layers.{i}.kv.weight"
                    w = sd[key].view(2, G, lm.kvh // G, dh, d).mean(2)
                    sd[key] = w.reshape(2 * G * dh, d)
                new.load_state_dict(sd)
                del sd, w
        del lm, opt
        lm = new
        opt = torch.optim.AdamW(lm.parameters(), lr=1e-4, weight_decay=0.1, foreach=True)
        for step in range(nsteps):
            T = rng.randrange(128, 1025, 64) if _smoke(1, 0) else 32
            B = max(1, rng.randint(_smoke(2048, 64), _smoke(4096, 128)) // T)
            loss = loss_of(torch.randint(0, 32000, (B, T), device="cuda"))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(lm.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            del loss
        with torch.no_grad():
            T = _smoke(1024, 32)
            torch.stack([loss_of(torch.randint(0, 32000, (2, T), device="cuda")) for _ in range(4)]).cpu()
    torch.cuda.synchronize()

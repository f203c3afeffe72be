"""The hundredth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch99_b.py are): web search, ranking and query understanding, written in torch alone, first half. Query spelling
correction and intent training (a gated dilated 1-d convnet over the characters of queries of drawn lengths, a
corrected character per position, an intent and multi-label verticals), dense passage retrieval training (a shared
transformer dual encoder over queries and passages of drawn lengths, in-batch and hard negatives, an InfoNCE loss), a
SPLADE-style sparse query encoding service (a transformer with an MLM head max-pooled into vocabulary weights, pruned
to the top terms and scored against a drawn index of (term, impact) pairs by index_select) and unbiased learning to
rank from simulated clicks (a list-attention ranker over candidate lists of drawn lengths, clicks drawn from a
position-based click model over a logging ranker's order, an inverse-propensity-weighted listwise loss). Same
conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned host
buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths and batch
sizes are fixed on the host, padding handled by masks multiplied in or by torch.where / masked_fill, no boolean-mask
indexing; losses and metrics are read back only at logging points or once per request. splade_query_serve uploads its
token ids on a side stream (two reused pinned host buffers, one request ahead, as workload_helpers.SideUploads does);
the other three are single-stream. The models run under bf16 autocast. Every position table is sized for the longest
padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new100.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py.
"""

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _ceil(n, m):
    return -(-n // m) * m


# ---------------------------------------------------------------- query spelling correction and intent (char CNN)


class _GatedDilated(_nn.Module):
    """Layer norm, a dilated 3-tap convolution to twice the width split into a value and a sigmoid gate, a 1x1
    convolution back, residual; padded positions zeroed by the multiplied mask."""

    def __init__(self, d, dil):
        super().__init__()
        self.norm = _nn.LayerNorm(d)
        self.conv = _nn.Conv1d(d, 2 * d, 3, padding=dil, dilation=dil)
        self.out = _nn.Conv1d(d, d, 1)

    def forward(self, x, w):
        a, g = self.conv(self.norm(x).transpose(1, 2)).chunk(2, 1)
        return (x + self.out(a * torch.sigmoid(g)).transpose(1, 2)) * w


class _SpellIntentNet(_nn.Module):
    def __init__(self, chars, d, dils, max_len, n_intent, n_vert):
        super().__init__()
        self.emb, self.pos = _nn.Embedding(chars, d, padding_idx=0), _nn.Embedding(max_len, d)
        self.blocks = _nn.ModuleList(_GatedDilated(d, k) for k in dils)
        self.norm = _nn.LayerNorm(d)
        self.fix = _nn.Linear(d, chars)
        self.intent = mlp(2 * d, d, n_intent, act=_nn.GELU)
        self.vert = _nn.Linear(2 * d, n_vert)

    def forward(self, ids, keep):
        t = ids.shape[1]
        w = keep[..., None].float()
        x = (self.emb(ids) + self.pos(torch.arange(t, device=ids.device))[None]) * w
        for blk in self.blocks:
            x = blk(x, w)
        h = self.norm(x)
        mean = (h * w).sum(1) / w.sum(1).clamp(min=1)
        peak = h.masked_fill(~keep[..., None], -1e4).amax(1)
        z = torch.cat([mean, peak], -1)
        return self.fix(h).float(), self.intent(z).float(), self.vert(z).float()


@_workload("query spelling correction and intent training (random init, a gated dilated 1-d convnet over characters): 64-256 queries a step (drawn), each of 4-64 characters (drawn per query, character ids 1-127 with 0 the pad, padded to the step's longest rounded up to a multiple of 8, position table of 64 rows); the clean query drawn on the device, typos made by torch.where: 8% of the characters (drawn per position) replaced by a freshly drawn character and 3% overwritten with their right neighbour's clean character (torch.roll; a copy, not a swap), typo positions where the noisy character differs from the clean one; 8 gated residual blocks (width 256, kernel 3, dilations 1/2/4/8/1/2/4/8, layer norm, sigmoid gate, 1x1 output convolution, padded positions masked); a per-character correction head (128-way cross-entropy on real characters, typo positions weighted 5x), a final layer norm, masked mean and max pooling into a 40-way intent head (a 2-layer GELU MLP, cross-entropy) and 12 multi-label verticals (a linear layer, binary cross-entropy, weighted 0.5 in the summed loss); AdamW, clipping, bf16 autocast, 640 steps; the three losses read back every 25 steps and every 128 steps a no-grad evaluation of 256 queries of 64 characters with typo-position correction accuracy and intent accuracy read back")
def query_spell_intent_cnn_train(rng):
    chars, d, max_len = _smoke(128, 40), _smoke(256, 32), _smoke(64, 16)
    dils = _smoke([1, 2, 4, 8, 1, 2, 4, 8], [1, 2])
    n_intent, n_vert = 40, 12
    model = _SpellIntentNet(chars, d, dils, max_len, n_intent, n_vert).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)

    def queries(lengths):
        b, t = len(lengths), _ceil(max(lengths), 8)
        keep = keep_mask(lengths, t)
        clean = torch.randint(1, chars, (b, t), device="cuda").masked_fill(~keep, 0)
        sub = (torch.rand(b, t, device="cuda") < 0.08) & keep
        swap = (torch.rand(b, t, device="cuda") < 0.03) & keep
        noisy = torch.where(sub, torch.randint(1, chars, (b, t), device="cuda"), clean)
        noisy = torch.where(swap, torch.roll(clean, -1, 1), noisy).masked_fill(~keep, 0)
        typo = (noisy != clean) & keep
        intent = torch.randint(0, n_intent, (b,), device="cuda")
        vert = (torch.rand(b, n_vert, device="cuda") < 0.15).float()
        return noisy, clean, keep, typo, intent, vert

    steps = _smoke(640, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(64, 2), _smoke(256, 4))
        noisy, clean, keep, typo, intent, vert = queries([rng.randint(4, max_len) for _ in range(b)])
        with torch.autocast("cuda", dtype=torch.bfloat16):
            fix, it, vt = model(noisy, keep)
        wt = keep.float() * (1 + 4 * typo.float())
        l_fix = (_F.cross_entropy(fix.flatten(0, 1), clean.flatten(), reduction="none") * wt.flatten()).sum() / \
            wt.sum().clamp(min=1)
        l_int = _F.cross_entropy(it, intent)
        l_vert = _F.binary_cross_entropy_with_logits(vt, vert)
        loss = l_fix + l_int + 0.5 * l_vert
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 25 == 0:
            torch.stack([l_fix.detach(), l_int.detach(), l_vert.detach()]).tolist()
        del noisy, clean, keep, typo, intent, vert, fix, it, vt, wt, l_fix, l_int, l_vert, loss
        if (step + 1) % _smoke(128, 2) == 0:
            model.eval()
            with torch.no_grad():
                noisy, clean, keep, typo, intent, vert = queries([max_len] * _smoke(256, 3))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    fix, it, _ = model(noisy, keep)
                tf = typo.float()
                acc = torch.stack([((fix.argmax(-1) == clean).float() * tf).sum() / tf.sum().clamp(min=1),
                                   (it.argmax(-1) == intent).float().mean()])
            acc.tolist()
            del noisy, clean, keep, typo, intent, vert, fix, it, tf, acc


# ---------------------------------------------------------------- dense passage retrieval (dual encoder)


class _DualEncoder(_nn.Module):
    """One transformer for queries and passages (a marker token first), masked mean pooling, a projection,
    L2-normalised embeddings."""

    def __init__(self, vocab, d, heads, layers, max_pos, out):
        super().__init__()
        self.tok, self.pos = _nn.Embedding(vocab, d), _nn.Embedding(max_pos, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm, self.proj = _nn.LayerNorm(d), _nn.Linear(d, out)

    def forward(self, ids, keep):
        t = ids.shape[1]
        x = self.tok(ids) + self.pos(torch.arange(t, device=ids.device))[None]
        x = _F.dropout(x, 0.1, self.training)
        key = keep[:, None, None, :]
        for blk in self.blocks:
            x = blk(x, mask=key)
        w = keep[..., None].to(x.dtype)
        pooled = (self.norm(x) * w).sum(1) / w.sum(1).clamp(min=1)
        return _F.normalize(self.proj(pooled).float(), dim=-1)


@_workload("dense passage retrieval training (random init, a shared transformer dual encoder, DPR-style): 16-48 queries a step (drawn), each query of 4-32 tokens and its positive and hard-negative passages of 32-192 tokens (drawn per text over a 30,522-token vocabulary, a query or passage marker id first, queries padded to the step's longest rounded up to a multiple of 8 and passages to a multiple of 16, position table of 192 rows); embedding dropout 0.1, a 6-block pre-norm transformer (width 384, 6 heads) under each text's key mask (one encoder for both sides), masked mean pooling, a 256-d projection, L2-normalised; an InfoNCE loss at temperature 0.05 of each query against all the step's passages (in-batch and hard negatives); AdamW with linear warm-up over 60 steps, clipping, bf16 autocast, 245 steps; the loss and in-batch top-1 accuracy read back every 20 steps and every 61 steps a no-grad evaluation encoding 1,024 passages of 128 tokens (in chunks of 128) and 64 queries of 16 tokens, with recall at 10 read back")
def dense_passage_retrieval_train(rng):
    vocab, d, heads, layers = _smoke(30522, 500), _smoke(384, 32), _smoke(6, 2), _smoke(6, 1)
    q_max, p_min, p_max, out = _smoke(32, 8), _smoke(32, 8), _smoke(192, 32), _smoke(256, 16)
    model = _DualEncoder(vocab, d, heads, layers, p_max, out).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.01)
    warm = 60
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warm))

    def texts(lengths, marker, mult):
        b, t = len(lengths), _ceil(max(lengths), mult)
        keep = keep_mask(lengths, t)
        ids = torch.randint(3, vocab, (b, t), device="cuda")
        ids[:, 0] = marker
        return ids.masked_fill(~keep, 0), keep

    steps = _smoke(245, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(16, 2), _smoke(48, 4))
        q_ids, q_keep = texts([rng.randint(4, q_max) for _ in range(b)], 1, 8)
        p_ids, p_keep = texts([rng.randint(p_min, p_max) for _ in range(2 * b)], 2, 16)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            q = model(q_ids, q_keep)
            p = model(p_ids, p_keep)
        scores = q @ p.t() / 0.05
        target = torch.arange(b, device="cuda")
        loss = _F.cross_entropy(scores, target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            torch.stack([loss.detach(), (scores.detach().argmax(-1) == target).float().mean()]).tolist()
        del q_ids, q_keep, p_ids, p_keep, q, p, scores, target, loss
        if (step + 1) % _smoke(61, 2) == 0:
            model.eval()
            n_p, chunk, n_q = _smoke(1024, 8), _smoke(128, 4), _smoke(64, 4)
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                bank = []
                for _ in range(n_p // chunk):
                    ids, keep = texts([_smoke(128, 24)] * chunk, 2, 16)
                    bank.append(model(ids, keep))
                bank = torch.cat(bank)
                ids, keep = texts([_smoke(16, 6)] * n_q, 1, 8)
                q = model(ids, keep)
                top = (q @ bank.t()).topk(min(10, n_p), -1).indices
                recall = (top == torch.arange(n_q, device="cuda")[:, None]).any(-1).float().mean()
            recall.item()
            del bank, ids, keep, q, top, recall


# ---------------------------------------------------------------- SPLADE-style sparse query encoding service


class _SpladeQuery(_nn.Module):
    """A transformer encoder and an MLM head tied to the token embeddings; log(1 + relu) of the logits max-pooled
    over the real tokens: one weight per vocabulary term."""

    def __init__(self, vocab, d, heads, layers, max_pos):
        super().__init__()
        self.tok, self.pos = _nn.Embedding(vocab, d), _nn.Embedding(max_pos, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.head = _nn.Sequential(_nn.LayerNorm(d), _nn.Linear(d, d), _nn.GELU(), _nn.LayerNorm(d))
        self.bias = _nn.Parameter(torch.zeros(vocab))

    def forward(self, ids, keep):
        t = ids.shape[1]
        x = self.tok(ids) + self.pos(torch.arange(t, device=ids.device))[None]
        key = keep[:, None, None, :]
        for blk in self.blocks:
            x = blk(x, mask=key)
        logits = _F.linear(self.head(x), self.tok.weight, self.bias)
        w = torch.log1p(torch.relu(logits.float()))
        return w.masked_fill(~keep[..., None], 0.0).amax(1)


@_workload("SPLADE-style sparse retrieval serving (random init, a transformer query encoder with an MLM head, scored against a drawn forward index of (term, impact) pairs): 1,650-1,720 requests (drawn) of 1-16 queries each (drawn), each query of 2-32 tokens (drawn per query over a 30,522-token vocabulary, padded to the request's longest rounded up to a multiple of 8, position table of 32 rows); int32 token ids uploaded on a side stream from two reused pinned host buffers (filled once, sized for 16 x 32 ids) one request ahead (one span, waited on by event, record_stream'ed); a 4-block pre-norm transformer (width 256, 4 heads) under a key mask, an MLM head tied to the token embeddings, log(1 + relu) max-pooled over real tokens into 30,522 term weights under bf16 autocast; each query pruned to its top 64 terms (topk and scatter into zeros); scored against an index of 60,000 documents of 48 (term, impact) pairs each (drawn once on the device) by index_select of the query weights at the documents' terms, multiplied by the impacts and summed; the top 100 documents by topk; each request's top scores, document ids and kept-term counts (how many of the top 64 weights are above zero) read back")
def splade_query_serve(rng):
    vocab, d, heads, layers, max_len = _smoke(30522, 500), _smoke(256, 32), _smoke(4, 2), _smoke(4, 1), \
        _smoke(32, 16)
    model = _SpladeQuery(vocab, d, heads, layers, max_len).cuda().eval()
    model.requires_grad_(False)
    n_docs, per_doc, keep_terms, top_k = _smoke(60000, 300), 48, _smoke(64, 16), _smoke(100, 10)
    max_q = _smoke(16, 3)
    doc_terms = torch.randint(0, vocab, (n_docs, per_doc), device="cuda").flatten()
    doc_imp = torch.rand(n_docs, per_doc, device="cuda") * 3
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(3, vocab, (max_q * max_len,), dtype=torch.int32, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    nreq = rng.randint(_smoke(1650, 3), _smoke(1720, 4))
    plan = []
    for _ in range(nreq):
        lengths = [rng.randint(2, max_len) for _ in range(rng.randint(1, max_q))]
        plan.append((lengths, _ceil(max(lengths), 8)))
    for (lengths, t), raw in up.ahead(plan, lambda p: (len(p[0]) * p[1],)):
        with torch.no_grad():
            keep = keep_mask(lengths, t)
            ids = raw.view(len(lengths), t).long().masked_fill(~keep, 0)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                w = model(ids, keep)
            vals, idx = w.topk(keep_terms, -1)
            q = torch.zeros_like(w).scatter_(1, idx, vals)
            hit = q.index_select(1, doc_terms).view(len(lengths), n_docs, per_doc)
            scores = (hit * doc_imp[None]).sum(-1)
            top = scores.topk(top_k, -1)
            out = torch.cat([top.values.flatten(), top.indices.float().flatten(), (vals > 0).float().sum(1)])
        out.tolist()
        del raw, keep, ids, w, vals, idx, q, hit, scores, top, out


# ---------------------------------------------------------------- unbiased learning to rank from simulated clicks


class _ListRanker(_nn.Module):
    """A per-document feature MLP (layer norms), list-level self-attention blocks under a key mask over the
    candidates, a scalar score per document."""

    def __init__(self, feats, d, heads, layers):
        super().__init__()
        self.inp = _nn.LayerNorm(feats)
        self.enc = mlp(feats, d, d, layers=3, act=_nn.GELU, norm=True)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.out = _nn.Sequential(_nn.LayerNorm(d), _nn.Linear(d, 1))

    def forward(self, x, keep):
        h = self.enc(self.inp(x))
        key = keep[:, None, None, :]
        for blk in self.blocks:
            h = blk(h, mask=key)
        return self.out(h)[..., 0].float()


@_workload("unbiased learning to rank from simulated clicks (random init, a list-attention ranker): 32-128 queries a step (drawn), each with 20-120 candidate documents (drawn per query, padded to the step's longest rounded up to a multiple of 8) of 136 features drawn on the device; graded relevance 0-4 by bucketing a fixed hidden linear oracle of the features plus noise; a logging ranker (the noisy oracle score plus unit noise, padded documents at -1e4) orders each list (argsort twice for ranks), clicks drawn by torch.bernoulli from a position-based model (examination 1/(rank+1), click 0.05 + 0.95 (2^rel - 1)/15); an input layer norm over the 136 features, a 3-layer GELU feature MLP with layer norms (width 256) and 3 pre-norm self-attention blocks (4 heads) over the candidates under a key mask, a scalar score; an inverse-propensity-weighted listwise softmax cross-entropy (propensities clipped at 0.05, padded documents at -1e4, normalised by the summed click weights); AdamW, clipping, bf16 autocast, 660 steps; the loss and click rate read back every 25 steps and every 132 steps a no-grad evaluation of 256 lists of 120 documents with NDCG@10 against the true grades (topk, gather, ideal DCG by topk of the grades) read back")
def click_ltr_ips_train(rng):
    feats, d, heads, layers = 136, _smoke(256, 32), _smoke(4, 2), _smoke(3, 1)
    max_docs = _smoke(120, 24)
    model = _ListRanker(feats, d, heads, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    oracle = torch.randn(feats, device="cuda") / feats ** 0.5
    bounds = torch.tensor([-0.4, 0.4, 1.0, 1.6], device="cuda")
    disc = 1.0 / torch.log2(torch.arange(2, 12, device="cuda").float())

    def lists(lengths):
        q, n = len(lengths), _ceil(max(lengths), 8)
        keep = keep_mask(lengths, n)
        x = torch.randn(q, n, feats, device="cuda")
        true = x @ oracle + 0.3 * torch.randn(q, n, device="cuda")
        rel = torch.bucketize(true, bounds).masked_fill(~keep, 0)
        return x, keep, true, rel

    steps = _smoke(660, 3)
    for step in range(steps):
        model.train()
        q = rng.randint(_smoke(32, 2), _smoke(128, 4))
        x, keep, true, rel = lists([rng.randint(_smoke(20, 4), max_docs) for _ in range(q)])
        with torch.no_grad():
            logged = (true + torch.randn_like(true)).masked_fill(~keep, -1e4)
            rank = logged.argsort(-1, descending=True).argsort(-1)
            exam = 1.0 / (rank + 1).float()
            p_click = exam * (0.05 + 0.95 * (2.0 ** rel.float() - 1) / 15) * keep.float()
            clicks = torch.bernoulli(p_click)
            target = clicks / exam.clamp(min=0.05)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            s = model(x, keep)
        logp = torch.log_softmax(s.masked_fill(~keep, -1e4), -1)
        loss = -(target * logp).sum() / target.sum().clamp(min=1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 25 == 0:
            torch.stack([loss.detach(), clicks.sum() / keep.float().sum()]).tolist()
        del x, keep, true, rel, logged, rank, exam, p_click, clicks, target, s, logp, loss
        if (step + 1) % _smoke(132, 2) == 0:
            model.eval()
            with torch.no_grad():
                x, keep, true, rel = lists([max_docs] * _smoke(256, 3))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    s = model(x, keep)
                k = min(10, max_docs)
                top = s.masked_fill(~keep, -1e4).topk(k, -1).indices
                gain = (2.0 ** rel.gather(1, top).float() - 1) * disc[:k]
                ideal = (2.0 ** rel.float().topk(k, -1).values - 1) * disc[:k]
                ndcg = (gain.sum(1) / ideal.sum(1).clamp(min=1e-6)).mean()
            ndcg.item()
            del x, keep, true, rel, s, top, gain, ideal, ndcg

"""The thirty-fifth batch's second half (batch35.py holds the first; written in two to keep files small): variable-
misuse detection training with a gated graph neural network over program graphs of varying size (a code model),
Music Transformer generation with relative attention and growing caches, Pix2Struct-style chart question answering
training on variable-resolution patch sequences, and hierarchical extractive summarization training on long
documents of varying sentence counts and lengths. Same conventions and plumbing as batch35.py; record.py registers
this module right after it, so that the batch's workloads keep their order. All four are single-stream;
music_transformer_generate, pix2struct_chart_train and hibert_extsum_train run under bf16 autocast,
ggnn_varmisuse_train in fp32.

Real sizes checked as batch35.py's header says: every workload run whole at its real sizes on the meta device,
its op outputs counted there for the estimates in record_new35.sh's header.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


def _heads(t, h):
    return t.unflatten(-1, (h, -1)).transpose(1, 2)


class _Layer(torch.nn.Module):
    """A pre-norm transformer layer: self-attention with an optional mask (boolean or additive) and an optional
    KV cache grown by torch.cat, optional cross-attention over a memory with its key mask, GELU MLP."""

    def __init__(self, d, heads, cross=False, ffn=4):
        super().__init__()
        nn = torch.nn
        self.h = heads
        self.n1, self.qkv, self.o = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        if cross:
            self.n2, self.q, self.kv, self.o2 = nn.LayerNorm(d), nn.Linear(d, d), nn.Linear(d, 2 * d), nn.Linear(d, d)
        self.n3, self.fc1, self.fc2 = nn.LayerNorm(d), nn.Linear(d, ffn * d), nn.Linear(ffn * d, d)

    def forward(self, x, mask=None, causal=False, cache=None, mem=None, mem_mask=None):
        sdpa = torch.nn.functional.scaled_dot_product_attention
        q, k, v = (_heads(t, self.h) for t in self.qkv(self.n1(x)).chunk(3, -1))
        if cache is not None:
            if cache[0] is not None:
                k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
            cache[0], cache[1] = k, v
        a = sdpa(q, k, v, attn_mask=mask, is_causal=causal and mask is None)
        x = x + self.o(a.transpose(1, 2).flatten(2))
        if mem is not None:
            q = _heads(self.q(self.n2(x)), self.h)
            k, v = (_heads(t, self.h) for t in self.kv(mem).chunk(2, -1))
            x = x + self.o2(sdpa(q, k, v, attn_mask=mem_mask).transpose(1, 2).flatten(2))
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.n3(x))))


# ---------------------------------------------------------------- GGNN variable-misuse detection (code)


@_workload("code-model training, variable-misuse detection with a gated graph neural network (Allamanis et al. 2018, as the tf-gnn-samples/PyTorch ports train it) written by hand, fp32: program graphs of 100-1500 nodes (drawn log-uniform per graph) batched until a node budget of 12k-40k (drawn per step), node labels of 4 subtokens (32000-token subtoken vocabulary, embedded and averaged), 10 edge types (Child, NextToken, LastUse, LastWrite, LastLexicalUse, ComputedFrom, GuardedBy, GuardedByNegation, ReturnsTo, FormalArgName, each with 0.3-1.2 edges a node, drawn per graph batch), 8 propagation steps of width 128 (per-type linear messages gathered by index_select and summed by index_add_, a GRU cell update); 1-3 slots a graph with 2-8 candidate variables each (drawn), candidates padded to 8 and masked, scored by an MLP over the slot and candidate states, cross-entropy over candidates; Adam with grad-norm clipping, 260 steps; every 50 steps an evaluation of 2 batches without grad, accuracy read back")
def ggnn_varmisuse_train(rng):
    nn, f = torch.nn, torch.nn.functional
    d, vocab, ntypes, nprop = _smoke(128, 16), _smoke(32000, 300), 10, _smoke(8, 2)
    emb = nn.Embedding(vocab, d)
    msg = nn.ModuleList(nn.Linear(d, d, bias=False) for _ in range(ntypes))
    gru = nn.GRUCell(d, d)
    score = nn.Sequential(nn.Linear(2 * d, d), nn.ReLU(), nn.Linear(d, 1))
    model = nn.ModuleList([emb, msg, gru, score]).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    nsteps = _smoke(260, 2)

    def batch():
        budget = rng.randint(_smoke(12000, 200), _smoke(40000, 600))
        sizes = []
        while sum(sizes) < budget:
            sizes.append(_loguniform(rng, _smoke(100, 10), _smoke(1500, 60)))
        N = sum(sizes)
        slots, cands, off = [], [], 0
        for n in sizes:
            for _ in range(rng.randint(1, 3)):
                slots.append(off + rng.randrange(n))
                cands.append(rng.randint(2, 8))
            off += n
        edges = [int(N * rng.uniform(0.3, 1.2)) for _ in range(ntypes)]
        return N, slots, cands, edges

    def forward(N, slots, cands, edges):
        labels = torch.randint(0, vocab, (N, 4), device="cuda")
        h = emb(labels).mean(1)
        src, dst = [], []
        for e in edges:
            s = torch.randint(0, N, (e,), device="cuda")
            src.append(s)
            dst.append((s + torch.randint(-16, 17, (e,), device="cuda")).clamp(0, N - 1))  # mostly local edges
        for _ in range(nprop):
            agg = torch.zeros_like(h)
            for t in range(ntypes):
                agg = agg.index_add(0, dst[t], msg[t](h.index_select(0, src[t])))
            h = gru(agg, h)
        S = len(slots)
        slot = h.index_select(0, torch.tensor(slots, device="cuda"))
        nc = torch.tensor(cands, device="cuda")
        cidx = torch.randint(0, N, (S, 8), device="cuda")
        cand = h.index_select(0, cidx.flatten()).view(S, 8, -1)
        logits = score(torch.cat([slot[:, None].expand(S, 8, -1), cand], -1)).squeeze(-1)
        logits = logits.masked_fill(torch.arange(8, device="cuda")[None] >= nc[:, None], -1e9)
        target = (torch.rand(S, device="cuda") * nc).long()
        return logits, target

    for step in range(nsteps):
        logits, target = forward(*batch())
        loss = f.cross_entropy(logits, target)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del logits, target, loss
        if (step + 1) % _smoke(50, 2) == 0:
            with torch.no_grad():
                accs = []
                for _ in range(2):
                    logits, target = forward(*batch())
                    accs.append((logits.argmax(-1) == target).float().mean())
                    del logits, target
                torch.stack(accs).tolist()
                del accs
    torch.cuda.synchronize()


# ---------------------------------------------------------------- Music Transformer generation


@_workload("symbolic music generation, Music Transformer (Huang et al. 2018) written by hand, the sampling loop: a 6-layer decoder (512 wide, 8 heads, FFN 1024) over the 388-event performance vocabulary (note-on, note-off, time-shift, velocity) with relative self-attention (per-layer relative embeddings for 2048 distances; the prefill's relative logits by the memory-efficient skewing trick, pad-reshape-slice, passed with the causal and padding mask as an additive attention mask; each generated step's relative logits from the embeddings gathered at its distances); batches of 1-8 primers of 64-512 events (drawn log-uniform each, left-padded), per-layer KV caches grown by torch.cat each step, 64-235 new events a batch (drawn), top-k 32 sampling with temperature by the Gumbel-max trick on the device, the events read back at the end of a batch; 10 batches, eval mode, bf16 autocast, no grad")
def music_transformer_generate(rng):
    nn, f = torch.nn, torch.nn.functional
    d, heads, nl, vocab, maxrel = _smoke(512, 32), _smoke(8, 2), _smoke(6, 1), 388, _smoke(2048, 64)
    dh = d // heads
    tok = nn.Embedding(vocab, d)
    blocks = nn.ModuleList(_Layer(d, heads, ffn=2) for _ in range(nl))
    rel = nn.ParameterList(nn.Parameter(torch.randn(maxrel, dh) * 0.02) for _ in range(nl))
    norm, head = nn.LayerNorm(d), nn.Linear(d, vocab)
    model = nn.ModuleList([tok, blocks, rel, norm, head]).cuda().eval()
    nbatches = _smoke(10, 2)
    scale = 1 / math.sqrt(dh)

    def qkv_rel(blk, x, E, mask_add, cache, pos_last):
        q, k, v = (_heads(t, blk.h) for t in blk.qkv(blk.n1(x)).chunk(3, -1))
        if cache[0] is not None:
            k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
        cache[0], cache[1] = k, v
        L = k.shape[2]
        if pos_last:  # one query at the last position: distances L-1 .. 0
            idx = (maxrel - L + torch.arange(L, device="cuda")).clamp(min=0)
            srel = q @ E.index_select(0, idx).T  # (b, h, 1, L)
        else:  # skewing: q @ E^T over distances L-1..0, pad a column, reshape, drop the first row
            Er = E[max(0, maxrel - L):]
            if Er.shape[0] < L:
                Er = torch.cat([Er[:1].expand(L - Er.shape[0], -1), Er], 0)
            qe = q @ Er.T  # (b, h, L, L)
            srel = f.pad(qe, (1, 0)).reshape(q.shape[0], blk.h, L + 1, L)[:, :, 1:]
        a = f.scaled_dot_product_attention(q, k, v, attn_mask=(srel * scale + mask_add).to(q.dtype))
        x = x + blk.o(a.transpose(1, 2).flatten(2))
        return x + blk.fc2(f.gelu(blk.fc1(blk.n3(x))))

    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        for _ in range(nbatches):
            b = rng.randint(1, _smoke(8, 2))
            lens = [_loguniform(rng, _smoke(64, 4), _smoke(512, 16)) for _ in range(b)]
            gen = rng.randint(_smoke(64, 3), _smoke(235, 6))
            L = max(lens)
            ids = torch.randint(0, vocab, (b, L), device="cuda")
            start = torch.tensor([L - n for n in lens], device="cuda")
            keyok = torch.arange(L, device="cuda")[None] >= start[:, None]  # (b, L), left padding
            causal = torch.ones(L, L, dtype=torch.bool, device="cuda").tril()
            ok = (causal[None] & keyok[:, None, :]) | ~keyok[:, :, None]
            mask_add = torch.zeros(b, 1, L, L, device="cuda").masked_fill(~ok[:, None], -1e4)
            caches = [[None, None] for _ in blocks]
            x = tok(ids) * math.sqrt(d)
            for blk, E, cache in zip(blocks, rel, caches):
                x = qkv_rel(blk, x, E, mask_add, cache, False)
            logits = head(norm(x[:, -1:])).float()
            del x, ids, causal, ok, mask_add
            kpad = torch.zeros(b, 1, 1, L, device="cuda").masked_fill(~keyok[:, None, None], -1e4)
            out = []
            for _ in range(gen):
                top, ti = (logits[:, -1] / 0.9).topk(32, -1)
                g = -torch.log(-torch.log(torch.rand_like(top).clamp(1e-6, 1 - 1e-6)))
                nxt = ti.gather(1, (top + g).argmax(-1, keepdim=True))
                out.append(nxt)
                kpad = torch.cat([kpad, torch.zeros(b, 1, 1, 1, device="cuda")], -1)
                y = tok(nxt) * math.sqrt(d)
                for blk, E, cache in zip(blocks, rel, caches):
                    y = qkv_rel(blk, y, E, kpad, cache, True)
                logits = head(norm(y)).float()
                del top, ti, g, y
            torch.cat(out, 1).cpu()
            del caches, logits, kpad, out, start, keyok
    torch.cuda.synchronize()


# ---------------------------------------------------------------- Pix2Struct chart QA


@_workload("chart and document question answering training, Pix2Struct-style (Lee et al. 2023, ChartQA fine-tuning) written by hand: variable-resolution input, each image of random aspect ratio (0.4-2.5, drawn) rescaled so that its 16x16 patches fill at most the step's patch budget (256, 512 or 1024, drawn per step, as a multi-resolution schedule mixes them), patches extracted by unfold, padded to the batch's most and masked, each patch's 768 pixels projected to 768 plus learned row and column embeddings; an 8-layer encoder (768 wide, 12 heads) and a 4-layer decoder with cross-attention over the patches (T5-sized 32128-token vocabulary, tied output), question-and-answer targets of 8-128 tokens (drawn log-uniform, right-padded, ignored in the loss); batches of 4096 patches' worth (2-16 images); AdamW with warmup and grad-norm clipping, bf16 autocast, 180 steps; every 60 steps an evaluation of 2 batches without grad, the loss and token accuracy read back")
def pix2struct_chart_train(rng):
    nn, f = torch.nn, torch.nn.functional
    d, heads, ne, nd, vocab = _smoke(768, 32), _smoke(12, 2), _smoke(8, 1), _smoke(4, 1), _smoke(32128, 300)
    P = _smoke(16, 4)
    patch = nn.Linear(3 * P * P, d)
    rowE, colE = nn.Embedding(128, d), nn.Embedding(128, d)
    enc = nn.ModuleList(_Layer(d, heads) for _ in range(ne))
    dec = nn.ModuleList(_Layer(d, heads, cross=True) for _ in range(nd))
    tok, tpos = nn.Embedding(vocab, d), nn.Embedding(160, d)
    en, dn = nn.LayerNorm(d), nn.LayerNorm(d)
    model = nn.ModuleList([patch, rowE, colE, enc, dec, tok, tpos, en, dn]).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
    nsteps = _smoke(180, 2)
    budget = _smoke(4096, 64)

    def batch():
        maxp = rng.choice([_smoke(256, 8), _smoke(512, 16), _smoke(1024, 32)])
        b = rng.randint(max(2, budget // maxp // 2), max(2, budget // maxp))
        grids = []
        for _ in range(b):
            ar = math.exp(rng.uniform(math.log(0.4), math.log(2.5)))  # width / height
            rows = max(1, min(127, int(math.sqrt(maxp / ar))))
            cols = max(1, min(127, maxp // rows))
            grids.append((rows, cols))
        T = max(r * c for r, c in grids)
        x = torch.zeros(b, T, 3 * P * P, device="cuda")
        rid = torch.zeros(b, T, dtype=torch.long, device="cuda")
        cid = torch.zeros(b, T, dtype=torch.long, device="cuda")
        for i, (r, c) in enumerate(grids):
            img = torch.rand(3, r * P, c * P, device="cuda")
            pt = f.unfold(img[None], P, stride=P)[0].T  # (r*c, 3*P*P)
            x[i, : r * c] = pt
            rid[i, : r * c] = torch.arange(r, device="cuda").repeat_interleave(c) + 1
            cid[i, : r * c] = torch.arange(c, device="cuda").repeat(r) + 1
        n = torch.tensor([r * c for r, c in grids], device="cuda")
        pmask = (torch.arange(T, device="cuda")[None] < n[:, None])[:, None, None, :]
        tl = [_loguniform(rng, _smoke(8, 3), _smoke(128, 12)) for _ in range(b)]
        Lt = max(tl)
        tgt = torch.randint(1, vocab, (b, Lt + 1), device="cuda")
        tn = torch.tensor(tl, device="cuda")
        tgt = tgt.masked_fill(torch.arange(Lt + 1, device="cuda")[None] > tn[:, None], 0)
        return x, rid, cid, pmask, tgt

    def loss_of(x, rid, cid, pmask, tgt):
        h = patch(x) + rowE(rid) + colE(cid)
        for blk in enc:
            h = blk(h, mask=pmask)
        h = en(h)
        inp, lab = tgt[:, :-1], tgt[:, 1:]
        y = tok(inp) + tpos(torch.arange(inp.shape[1], device="cuda"))
        for blk in dec:
            y = blk(y, causal=True, mem=h, mem_mask=pmask)
        logits = f.linear(dn(y), tok.weight).float()
        return f.cross_entropy(logits.flatten(0, 1), lab.flatten(), ignore_index=0), logits, lab

    with torch.autocast("cuda", dtype=torch.bfloat16):
        for step in range(nsteps):
            for g in opt.param_groups:
                g["lr"] = 1e-4 * min(1.0, (step + 1) / 30)
            loss, logits, lab = loss_of(*batch())
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            del loss, logits, lab
            if (step + 1) % _smoke(60, 2) == 0:
                with torch.no_grad():
                    out = []
                    for _ in range(2):
                        loss, logits, lab = loss_of(*batch())
                        out += [loss, ((logits.argmax(-1) == lab).float() * (lab > 0)).sum() / (lab > 0).sum()]
                        del loss, logits, lab
                    torch.stack(out).tolist()
                    del out
    torch.cuda.synchronize()


# ---------------------------------------------------------------- hierarchical extractive summarization


@_workload("long-document extractive summarization training with a hierarchical transformer (HiBERT/BertSumExt-style, Zhang et al. 2019; Liu & Lapata 2019) written by hand: a sentence encoder of 4 layers (512 wide, 8 heads, 30522-token vocabulary, learned positions) over every sentence of the step's documents at once (sentences padded to the longest, key-padding mask), each sentence's first token scattered by index_copy into a padded document batch, a document encoder of 4 layers over the sentence vectors (learned sentence positions up to 256, key-padding mask), a sentence-score head with BCE against oracle labels (about 3 a document) masked to real sentences; 2-8 documents a step (drawn) of 20-200 sentences (log-uniform) of 5-60 tokens (log-uniform each), capped at 400 sentences a step; AdamW with warmup, bf16 autocast, 380 steps; every 70 steps an evaluation of 3 batches without grad, the top-3 sentences per document (scores masked) read back")
def hibert_extsum_train(rng):
    nn, f = torch.nn, torch.nn.functional
    d, heads, nl, vocab = _smoke(512, 32), _smoke(8, 2), _smoke(4, 1), _smoke(30522, 300)
    tok, pos, spos = nn.Embedding(vocab, d), nn.Embedding(64, d), nn.Embedding(256, d)
    sent_enc = nn.ModuleList(_Layer(d, heads) for _ in range(nl))
    doc_enc = nn.ModuleList(_Layer(d, heads) for _ in range(nl))
    sn, dn, head = nn.LayerNorm(d), nn.LayerNorm(d), nn.Linear(d, 1)
    model = nn.ModuleList([tok, pos, spos, sent_enc, doc_enc, sn, dn, head]).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.01)
    nsteps = _smoke(380, 2)
    cap = _smoke(400, 30)

    def batch():
        docs, total = [], 0
        for _ in range(rng.randint(2, _smoke(8, 3))):
            ns = min(_loguniform(rng, _smoke(20, 3), _smoke(200, 12)), 255)
            if docs and total + ns > cap:
                break
            ns = min(ns, cap)
            docs.append([_loguniform(rng, _smoke(5, 2), _smoke(60, 8)) for _ in range(ns)])
            total += ns
        return docs

    def scores(docs):
        D, S = len(docs), max(len(s) for s in docs)
        lens = [n + 1 for s in docs for n in s]
        N, L = len(lens), max(lens)
        ids = torch.randint(1, vocab, (N, L), device="cuda")
        ln = torch.tensor(lens, device="cuda")
        kv = torch.arange(L, device="cuda")[None] < ln[:, None]
        x = tok(ids) + pos(torch.arange(L, device="cuda"))
        for blk in sent_enc:
            x = blk(x, mask=kv[:, None, None, :])
        sv = sn(x[:, 0])
        slots = torch.tensor([i * S + j for i, s in enumerate(docs) for j in range(len(s))], device="cuda")
        h = torch.zeros(D * S, d, device="cuda", dtype=sv.dtype).index_copy(0, slots, sv).view(D, S, d)
        nsent = torch.tensor([len(s) for s in docs], device="cuda")
        dv = torch.arange(S, device="cuda")[None] < nsent[:, None]
        h = h + spos(torch.arange(S, device="cuda"))
        for blk in doc_enc:
            h = blk(h, mask=dv[:, None, None, :])
        return head(dn(h)).float().squeeze(-1), dv, nsent

    with torch.autocast("cuda", dtype=torch.bfloat16):
        for step in range(nsteps):
            for g in opt.param_groups:
                g["lr"] = 2e-4 * min(1.0, (step + 1) / 40)
            sc, dv, nsent = scores(batch())
            lab = (torch.rand(sc.shape, device="cuda") < 3.0 / nsent[:, None]).float()
            w = dv.float()
            loss = (f.binary_cross_entropy_with_logits(sc, lab, reduction="none") * w).sum() / w.sum()
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            del sc, dv, nsent, lab, w, loss
            if (step + 1) % _smoke(70, 2) == 0:
                with torch.no_grad():
                    for _ in range(3):
                        sc, dv, nsent = scores(batch())
                        sc.masked_fill(~dv, -1e4).topk(3, -1).indices.cpu()
                        del sc, dv, nsent
    torch.cuda.synchronize()

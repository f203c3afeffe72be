"""The twenty-eighth batch's second half (batch28.py holds the first; written in two to keep files small):
Recurrent Memory Transformer training over multi-segment documents, R-GCN knowledge-graph completion, BERT
pretraining with random layerwise token dropping (random-LTD), and offline Decision Transformer training with
trajectory batches uploaded on a side stream. Same conventions and plumbing as batch28.py; record.py registers
this module right after it, so that the batch's workloads keep their order. Three are single-stream;
decision_transformer_prefetch uploads every batch from reused pinned host buffers on a side stream (the compute
stream waiting on the batch's event, the uploaded tensors record_stream'ed) and stays well under 1 GB requested.

Real sizes checked as batch28.py's header says: every workload run whole at its real sizes on the meta device,
its op outputs counted there for the estimates in record_new28.sh's header (random_ltd_bert and
decision_transformer_prefetch first failed there on boolean-mask indexing, which the meta device cannot size:
they gather BERT's fixed masked_lm_positions and take weighted masked means instead).
"""

import math

import torch

from batch_common import Batch, upload

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- Recurrent Memory Transformer


@_workload("long-document language-model training with a Recurrent Memory Transformer (Bulatov et al. 2022), written by hand on nanoGPT blocks: a 10-layer decoder (768 wide, 12 heads, tanh-GELU MLP, learned positions, 32000-token tied vocabulary, random init); documents of 2-8 segments of 512 tokens (drawn per step, the last segment 128-512 tokens), 16 memory tokens read at the front of every segment and written at its end ([mem, tokens, mem] with a causal mask, the written memory carried to the next segment), backpropagation through time truncated to the last 3 segments (older memory detached), the per-segment losses summed; batches of 4, bf16 autocast, AdamW with warmup and cosine decay, gradient clipping at 1.0, 98 steps, the loss read back every step; every 40 steps a no-grad evaluation over a 16-segment document (batch 2) carrying the memory across all segments")
def rmt_memory_lm(rng):
    nn, f = torch.nn, torch.nn.functional
    d, heads, nl, vocab = _smoke(768, 32), _smoke(12, 2), _smoke(10, 2), _smoke(32000, 300)
    seg, nmem, bptt = _smoke(512, 16), _smoke(16, 2), 3
    emb, pos = nn.Embedding(vocab, d).cuda(), nn.Embedding(seg + 2 * nmem, d).cuda()
    mem0 = nn.Parameter(torch.randn(1, nmem, d, device="cuda") * 0.02)
    blocks = nn.ModuleList(_b.rec._GptBlock(d, heads) for _ in range(nl)).cuda()
    norm = nn.LayerNorm(d).cuda()
    model = nn.ModuleList([emb, pos, blocks, norm])
    params = list(model.parameters()) + [mem0]
    steps = _smoke(98, 3)
    opt = torch.optim.AdamW(params, lr=3e-4, betas=(0.9, 0.95), weight_decay=0.1)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / 15) * 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))

    def segment(ids, mem):
        """One segment: [read memory, tokens, write memory] through the decoder; logits of the tokens and the new memory."""
        b, n = ids.shape
        x = torch.cat([mem, emb(ids), mem], 1)
        x = x + pos(torch.arange(n + 2 * nmem, device="cuda"))
        for blk in blocks:
            x = blk(x)
        x = norm(x)
        return f.linear(x[:, nmem:nmem + n], emb.weight), x[:, nmem + n:]

    for step in range(steps):
        nseg = rng.randint(2, _smoke(8, 3))
        last = rng.randint(_smoke(128, 4), seg) // 8 * 8
        bsz = 4
        mem = mem0.expand(bsz, -1, -1)
        total = 0.0
        with torch.autocast("cuda", dtype=torch.bfloat16):
            for k in range(nseg):
                n = seg if k < nseg - 1 else last
                ids = torch.randint(0, vocab, (bsz, n + 1), device="cuda")
                if k < nseg - bptt:
                    with torch.no_grad():
                        _, mem = segment(ids[:, :-1], mem)
                    mem = mem.detach()
                else:
                    logits, mem = segment(ids[:, :-1], mem)
                    total = total + f.cross_entropy(logits.float().flatten(0, 1), ids[:, 1:].flatten())
                    del logits
                del ids
        opt.zero_grad(set_to_none=True)
        total.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        float(total.detach())
        del total, mem
        if (step + 1) % _smoke(40, 3) == 0:
            model.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                mem = mem0.expand(2, -1, -1)
                losses = []
                for _ in range(_smoke(16, 3)):
                    ids = torch.randint(0, vocab, (2, seg + 1), device="cuda")
                    logits, mem = segment(ids[:, :-1], mem)
                    losses.append(f.cross_entropy(logits.float().flatten(0, 1), ids[:, 1:].flatten()))
                    del ids, logits
                torch.stack(losses).tolist()
                del mem, losses
            model.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- R-GCN knowledge-graph completion


class _RgcnLayer(torch.nn.Module):
    """An R-GCN layer with basis decomposition (Schlichtkrull et al. 2018): every relation's weight a mix of the
    bases, messages h[src] @ W_rel computed as a per-edge mix of h @ V_b, mean-normalized by destination, a self loop."""

    def __init__(self, d, rels, bases):
        super().__init__()
        self.bases = torch.nn.Parameter(torch.randn(bases, d, d) / math.sqrt(d))
        self.coef = torch.nn.Parameter(torch.randn(rels, bases) / math.sqrt(bases))
        self.loop = torch.nn.Linear(d, d, bias=False)

    def forward(self, h, src, dst, rel, norm):
        hv = torch.einsum("nd,bde->nbe", h, self.bases)  # (N, B, d)
        msg = (hv[src] * self.coef[rel][..., None]).sum(1) * norm[:, None]
        agg = torch.zeros_like(h).index_add_(0, dst, msg)
        return agg + self.loop(h)


@_workload("knowledge-graph completion with an R-GCN encoder and a DistMult decoder (Schlichtkrull et al. 2018) as its FB15k-237 link-prediction recipe trains it, written by hand at a larger scale: 40000 entities, 237 relations plus their inverses, 2 R-GCN layers of 200 with 8 shared bases (messages mixed per edge from h @ V_b, mean-normalized by in-degree, self loops, dropout); every step samples a subgraph of 15000-40000 training triples (drawn; their inverses added), builds the edge list and degree normalization on the device, encodes every entity, then scores 2000-6000 of the sampled triples (drawn) against 10 corrupted heads or tails each by DistMult with a BCE loss and L2 regularization on the relation embeddings; fp32, Adam with gradient clipping, 1900 steps, the loss read back every 20 steps; every 380 steps a ranking evaluation of 1000 held-out triples against all 40000 entities in chunks of 250 (raw ranks, no grad) on the full training graph of 150k triples, MRR read back")
def rgcn_kg_complete(rng):
    f = torch.nn.functional
    ents, rels, d, nbase = _smoke(40000, 200), _smoke(237, 8), _smoke(200, 16), 8
    ntrain = _smoke(150000, 2000)
    heads = torch.randint(0, ents, (ntrain,), device="cuda")
    tails = torch.randint(0, ents, (ntrain,), device="cuda")
    rtype = torch.randint(0, rels, (ntrain,), device="cuda")
    emb = torch.nn.Embedding(ents, d).cuda()
    layers = torch.nn.ModuleList(_RgcnLayer(d, 2 * rels, nbase) for _ in range(2)).cuda()
    rel_emb = torch.nn.Embedding(rels, d).cuda()
    model = torch.nn.ModuleList([emb, layers, rel_emb])
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)

    def encode(src, dst, rel, train):
        deg = torch.zeros(ents, device="cuda").index_add_(0, dst, torch.ones_like(dst, dtype=torch.float))
        norm = 1.0 / deg.clamp(min=1)[dst]
        h = emb.weight
        for i, layer in enumerate(layers):
            h = layer(h, src, dst, rel, norm)
            if i == 0:
                h = f.dropout(torch.relu(h), 0.2, train)
        return h

    def graph(idx):
        s, o, r = heads[idx], tails[idx], rtype[idx]
        return torch.cat([s, o]), torch.cat([o, s]), torch.cat([r, r + rels])

    steps = _smoke(1900, 3)
    for step in range(steps):
        ne = rng.randint(_smoke(15000, 100), _smoke(40000, 300))
        idx = torch.randint(0, ntrain, (ne,), device="cuda")
        src, dst, rel = graph(idx)
        h = encode(src, dst, rel, True)
        nq = rng.randint(_smoke(2000, 20), _smoke(6000, 60))
        q = idx[:nq]
        s, o, r = heads[q], tails[q], rtype[q]
        neg = torch.randint(0, ents, (nq, 10), device="cuda")
        corrupt_head = torch.rand(nq, 1, device="cuda") < 0.5
        ns = torch.where(corrupt_head, neg, s[:, None])
        no = torch.where(corrupt_head, o[:, None], neg)
        rv = rel_emb(r)
        pos_score = (h[s] * rv * h[o]).sum(-1)
        neg_score = (h[ns] * rv[:, None] * h[no]).sum(-1)
        logits = torch.cat([pos_score[:, None], neg_score], 1)
        labels = torch.zeros_like(logits)
        labels[:, 0] = 1.0
        loss = f.binary_cross_entropy_with_logits(logits, labels) + 0.01 * rel_emb.weight.pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            float(loss.detach())
        del idx, src, dst, rel, h, q, s, o, r, neg, corrupt_head, ns, no, rv, pos_score, neg_score, logits, labels, loss
        if (step + 1) % _smoke(380, 3) == 0:
            with torch.no_grad():
                src, dst, rel = graph(torch.arange(ntrain, device="cuda"))
                h = encode(src, dst, rel, False)
                rr = []
                for _ in range(_smoke(4, 1)):
                    q = torch.randint(0, ntrain, (_smoke(250, 8),), device="cuda")
                    s, o, r = heads[q], tails[q], rtype[q]
                    scores = (h[s] * rel_emb(r)) @ h.t()  # (250, ents)
                    target = scores.gather(1, o[:, None])
                    rank = (scores > target).sum(1) + 1
                    rr.append(1.0 / rank.float())
                    del q, s, o, r, scores, target, rank
                float(torch.cat(rr).mean())
                del src, dst, rel, h, rr
    torch.cuda.synchronize()


# ---------------------------------------------------------------- BERT with random layerwise token dropping


class _BertLayer(torch.nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        nn = torch.nn
        self.h = heads
        self.qkv, self.o, self.n1 = nn.Linear(d, 3 * d), nn.Linear(d, d), nn.LayerNorm(d, eps=1e-12)
        self.fc1, self.fc2, self.n2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d), nn.LayerNorm(d, eps=1e-12)
        self.drop = nn.Dropout(0.1)

    def forward(self, x, mask):
        a = _b.rec._mha(*self.qkv(x).chunk(3, -1), self.h, attn_mask=mask)
        x = self.n1(x + self.drop(self.o(a)))
        return self.n2(x + self.drop(self.fc2(torch.nn.functional.gelu(self.fc1(x)))))


@_workload("BERT-base masked-LM pretraining with random layerwise token dropping, random-LTD (Yao et al. 2022, DeepSpeed's data-efficiency recipe), written by hand: 12 post-norm layers (768 wide, 12 heads, GELU MLP 3072, 30522-token vocabulary, learned positions, random init); every middle layer (2nd to 11th) runs on a random subset of each sequence's tokens (drawn per layer by argsort of noise, sorted back to order, gathered with their padding mask, the layer's output scattered back in place) while the first and last layers see every token; the kept-token count grows from 128 to the full length over the first 70% of 180 steps (DeepSpeed's linear schedule in steps of 16); sequences of 128-512 tokens (drawn, padded to the batch's longest with a key-padding mask) in batches set by an 8192-token budget; 15% of the padded length masked per sequence at valid positions drawn by argsort of noise (80/10/10, BERT's fixed masked_lm_positions), the MLM head (dense, GELU, LayerNorm, tied decoder) run on the gathered masked positions only; bf16 autocast, AdamW with warmup and linear decay, gradient clipping at 1.0, the loss read back every step; every 60 steps a full-token evaluation (no dropping, no grad) over 4 batches of 16 x 512")
def random_ltd_bert(rng):
    nn, f = torch.nn, torch.nn.functional
    d, heads, nl, vocab = _smoke(768, 32), _smoke(12, 2), _smoke(12, 3), _smoke(30522, 300)
    smax, budget = _smoke(512, 32), _smoke(8192, 128)
    tok, pos = nn.Embedding(vocab, d).cuda(), nn.Embedding(smax, d).cuda()
    emb_norm = nn.LayerNorm(d, eps=1e-12).cuda()
    layers = nn.ModuleList(_BertLayer(d, heads) for _ in range(nl)).cuda()
    mlm = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.LayerNorm(d, eps=1e-12)).cuda()
    mlm_bias = nn.Parameter(torch.zeros(vocab, device="cuda"))
    model = nn.ModuleList([tok, pos, emb_norm, layers, mlm])
    params = list(model.parameters()) + [mlm_bias]
    steps = _smoke(180, 3)
    opt = torch.optim.AdamW(params, lr=1e-4, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 20) * max(0.0, 1 - s / steps))
    warm = int(0.7 * steps)

    def forward(ids, valid, keep):
        b, s = ids.shape
        x = emb_norm(tok(ids) + pos(torch.arange(s, device="cuda")))
        full_mask = valid[:, None, None, :]
        for i, layer in enumerate(layers):
            if keep >= s or i == 0 or i == nl - 1:
                x = layer(x, full_mask)
                continue
            idx = torch.rand(b, s, device="cuda").argsort(-1)[:, :keep].sort(-1).values
            gi = idx[..., None].expand(-1, -1, d)
            sub = layer(x.gather(1, gi), valid.gather(1, idx)[:, None, None, :])
            x = x.scatter(1, gi, sub.to(x.dtype))
            del idx, gi, sub
        return x

    def mlm_loss(x, where, labels):
        h = mlm(x.gather(1, where[..., None].expand(-1, -1, d)))
        return f.cross_entropy(f.linear(h, tok.weight, mlm_bias).float().flatten(0, 1), labels.flatten())

    def batch(s, b, lengths):
        ids, valid = _b.rec._padded_ids(vocab, lengths, mult=64)
        valid = valid.bool()
        ids = ids[:, :s]
        # BERT's masked_lm_positions: a fixed count (15% of the padded length) of valid positions per row
        npred = max(1, int(0.15 * s))
        where = (torch.rand(ids.shape, device="cuda") + (~valid[:, :s]).float()).argsort(-1)[:, :npred]
        chosen = torch.zeros_like(valid[:, :s]).scatter_(1, where, True)
        labels = ids.gather(1, where)
        p = torch.rand(ids.shape, device="cuda")
        ids = torch.where(chosen & (p < 0.8), torch.full_like(ids, 103), ids)
        ids = torch.where(chosen & (p >= 0.8) & (p < 0.9), torch.randint_like(ids, _smoke(1000, 5), vocab), ids)
        return ids, valid[:, :s], where, labels

    for step in range(steps):
        s_draw = rng.randint(_smoke(128, 8), smax)
        b = max(1, budget // (-(-s_draw // 64) * 64))
        lengths = [rng.randint(max(8, s_draw // 2), s_draw) for _ in range(b - 1)] + [s_draw]
        ids, valid, where, labels = batch(s_draw, b, lengths)
        s = ids.shape[1]
        keep = min(s, max(_smoke(128, 8), (_smoke(128, 8) + (smax - _smoke(128, 8)) * step // max(1, warm)) // 16 * 16))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = mlm_loss(forward(ids, valid, keep), where, labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        float(loss.detach())
        del ids, valid, where, labels, loss
        if (step + 1) % _smoke(60, 3) == 0:
            model.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for _ in range(_smoke(4, 1)):
                    nb = _smoke(16, 2)
                    ids, valid, where, labels = batch(smax, nb, [smax] * nb)
                    float(mlm_loss(forward(ids, valid, smax), where, labels))
                    del ids, valid, where, labels
            model.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- Decision Transformer with a prefetch stream


@_workload("offline RL with a Decision Transformer (Chen et al. 2021) as its D4RL-gym recipe trains it, with trajectory windows prefetched on a side stream, small (well under 1 GB): a GPT of 3 layers (128 wide, 4 heads, tanh-GELU MLP, learned timestep embeddings up to 1000) over interleaved (return-to-go, state, action) tokens of 17-dim states and 6-dim continuous actions; windows of K = 10-40 timesteps (drawn per step, DT's context curriculum) cut from an offline dataset of variable-length episodes held on the host (episodes shorter than K left-padded with an attention mask), batches of 32-192 (drawn), states, actions, returns-to-go, timesteps and masks staged by the collate step in 3 reused pinned host buffers and uploaded on a side stream one batch ahead (the compute stream waiting on the batch's event, the tensors record_stream'ed); action MSE loss on valid positions, AdamW with warmup, gradient clipping at 0.25, 580 steps, the loss read back every 50 steps; every 145 steps 16 parallel evaluation rollouts of 100-200 steps (drawn) in a GPU-simulated linear-dynamics environment, the context growing token by token up to 20 timesteps (the oldest dropped), returns read back")
def decision_transformer_prefetch(rng):
    nn, f = torch.nn, torch.nn.functional
    d, heads, nl, sdim, adim = _smoke(128, 32), 4, 3, 17, 6
    kmax, bmax = _smoke(40, 6), _smoke(192, 8)
    e_state, e_act, e_ret = nn.Linear(sdim, d).cuda(), nn.Linear(adim, d).cuda(), nn.Linear(1, d).cuda()
    e_time = nn.Embedding(1000, d).cuda()
    e_norm = nn.LayerNorm(d).cuda()
    blocks = nn.ModuleList(_b.rec._GptBlock(d, heads) for _ in range(nl)).cuda()
    head = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, adim), nn.Tanh()).cuda()
    model = nn.ModuleList([e_state, e_act, e_ret, e_time, e_norm, blocks, head])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 100))
    side = torch.cuda.Stream()
    # The offline dataset on the host: episodes of 20-1000 steps in one flat buffer.
    nep = _smoke(400, 20)
    ep_len = [rng.randint(_smoke(20, 3), _smoke(1000, 20)) for _ in range(nep)]
    ep_start = [0]
    for n in ep_len[:-1]:
        ep_start.append(ep_start[-1] + n)
    tot = sum(ep_len)
    gen = torch.Generator().manual_seed(rng.randrange(2 ** 31))
    data_s, data_a = torch.randn(tot, sdim, generator=gen), torch.rand(tot, adim, generator=gen) * 2 - 1
    data_rtg = torch.rand(tot, generator=gen) * 3600
    hosts = [(torch.empty(bmax, kmax, sdim).pin_memory(), torch.empty(bmax, kmax, adim).pin_memory(),
              torch.empty(bmax, kmax, 1).pin_memory(), torch.empty(bmax, kmax, dtype=torch.long).pin_memory(),
              torch.empty(bmax, kmax, dtype=torch.bool).pin_memory()) for _ in range(3)]

    def stage(k, b, kk):
        """The collate step: b windows of kk timesteps from random episodes, left-padded, into host buffer k."""
        hs, ha, hr, ht, hm = (t[:b, :kk] for t in hosts[k])
        hs.zero_()
        ha.fill_(-10.0)
        hr.zero_()
        ht.zero_()
        hm.zero_()
        for i in range(b):
            e = rng.randrange(nep)
            st = rng.randint(0, max(0, ep_len[e] - 1))
            n = min(kk, ep_len[e] - st)
            g = ep_start[e] + st
            hs[i, kk - n:] = data_s[g:g + n]
            ha[i, kk - n:] = data_a[g:g + n]
            hr[i, kk - n:, 0] = data_rtg[g:g + n] / 1000
            torch.arange(st, st + n, out=ht[i, kk - n:])
            hm[i, kk - n:] = True
        return k, b, kk

    def upload_batch(spec):
        k, b, kk = spec
        with torch.cuda.stream(side):
            out = [upload(t[:b, :kk]) for t in hosts[k]]
            ev = side.record_event()
        return out, ev

    def forward(s, a, r, t, m):
        b, kk = m.shape
        te = e_time(t.clamp(max=999))
        x = torch.stack([e_ret(r) + te, e_state(s) + te, e_act(a) + te], 2).flatten(1, 2)  # (B, 3K, d)
        x = e_norm(x)
        mask = m[:, :, None].expand(b, kk, 3).flatten(1)
        causal = torch.ones(3 * kk, 3 * kk, dtype=torch.bool, device="cuda").tril()
        attn = (causal[None] & mask[:, None, :])[:, None]
        for blk in blocks:
            h = blk.ln1(x)
            x = x + blk.proj(_b.rec._mha(*blk.attn(h).chunk(3, -1), blk.heads, attn_mask=attn | ~mask[:, None, :, None]))
            x = x + blk.out(f.gelu(blk.fc(blk.ln2(x)), approximate="tanh"))
        return head(x.view(b, kk, 3, -1)[:, :, 1])  # actions predicted from the state tokens

    steps = _smoke(580, 3)
    draw = lambda: (rng.randint(_smoke(32, 2), bmax), rng.randint(_smoke(10, 2), kmax))  # noqa: E731
    nxt = upload_batch(stage(0, *draw()))
    for step in range(steps):
        (s, a, r, t, m), ev = nxt
        torch.cuda.current_stream().wait_event(ev)
        for x in (s, a, r, t, m):
            x.record_stream(torch.cuda.current_stream())
        nxt = upload_batch(stage((step + 1) % 3, *draw()))
        pred = forward(s, a, r, t, m)
        mf = m.float()
        loss = (((pred - a) ** 2).mean(-1) * mf).sum() / mf.sum().clamp(min=1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        opt.step()
        sched.step()
        if step % 50 == 0:
            float(loss.detach())
        del s, a, r, t, m, mf, ev, pred, loss
        if (step + 1) % _smoke(145, 3) == 0:
            model.eval()
            with torch.no_grad():
                ne, ctx = _smoke(16, 2), _smoke(20, 3)
                A = torch.randn(sdim, sdim, device="cuda") * 0.1
                B = torch.randn(adim, sdim, device="cuda") * 0.1
                state = torch.randn(ne, sdim, device="cuda")
                ss, aa, rr, tt = [], [], [], []
                rtg = torch.full((ne, 1), 3.6, device="cuda")
                ret = torch.zeros(ne, device="cuda")
                for i in range(rng.randint(_smoke(100, 3), _smoke(200, 5))):
                    ss.append(state)
                    aa.append(torch.zeros(ne, adim, device="cuda"))
                    rr.append(rtg)
                    tt.append(torch.full((ne,), i, device="cuda", dtype=torch.long))
                    ss, aa, rr, tt = ss[-ctx:], aa[-ctx:], rr[-ctx:], tt[-ctx:]
                    kk = len(ss)
                    act = forward(torch.stack(ss, 1), torch.stack(aa, 1), torch.stack(rr, 1), torch.stack(tt, 1),
                                  torch.ones(ne, kk, dtype=torch.bool, device="cuda"))[:, -1]
                    aa[-1] = act
                    state = torch.tanh(state @ A + act @ B) + 0.01 * torch.randn_like(state)
                    rew = -(state ** 2).mean(-1) + 1.0
                    ret = ret + rew
                    rtg = rtg - rew[:, None] / 1000
                ret.tolist()
                del A, B, state, ss, aa, rr, tt, rtg, ret
            model.train()
    side.synchronize()
    torch.cuda.synchronize()

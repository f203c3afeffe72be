"""The hundred-and-second batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch101_b.py are): software engineering and developer tools, written in torch alone, first half. Code-completion
language-model training with fill-in-the-middle (a decoder-only rotary transformer over code files of drawn lengths,
the loss on the middle span only), a code-search service (a transformer query encoder over natural-language queries
of drawn lengths, a dot-product search over an on-device index of code-snippet embeddings, an MLP re-ranker over the
top candidates), vulnerability detection training (a gated graph network by index_add over code property graphs of
drawn sizes, four edge types, a function-level and a statement-level head) and log-anomaly detection training (a
DeepLog-style two-layer LSTM written out step by step over windows of log-template keys and parameter values,
next-key prediction, a top-k anomaly evaluation). Same conventions as the earlier batches: nothing downloaded, data
drawn at random on the device (or in reused pinned host buffers for the service), `rng` the workload's random.Random
for every shape, count and sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny.
No control flow reads a tensor's value: lengths, sizes and batch sizes are fixed on the host, padding handled by
masks multiplied in or by torch.where / masked_fill, no boolean-mask indexing; losses and metrics are read back only
at logging points or once per request. code_search_serve uploads its query tokens on a side stream (two reused
pinned host buffers, one request ahead, through workload_helpers.SideUploads.ahead); the other three are
single-stream. The models run under bf16 autocast. Every position table is sized for the longest padded length that
can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new102.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and for
which of them the CPU smoke run (RECORD_SMOKE=1) ran.
"""

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, _rope, _rope_tables, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _loguniform(rng, lo, hi, mult=1):
    return _b.rec._loguniform(rng, lo, hi, mult)


# ---------------------------------------------------------------- code completion (fill-in-the-middle)


class _RotaryBlock(_nn.Module):
    """A pre-RMS-norm causal block: fused qkv with rotary embeddings, causal SDPA, a SwiGLU MLP."""

    def __init__(self, d, heads, hidden):
        super().__init__()
        self.h = heads
        self.n1, self.n2 = _nn.RMSNorm(d), _nn.RMSNorm(d)
        self.qkv, self.o = _nn.Linear(d, 3 * d, bias=False), _nn.Linear(d, d, bias=False)
        self.up, self.down = _nn.Linear(d, 2 * hidden, bias=False), _nn.Linear(hidden, d, bias=False)

    def forward(self, x, cos, sin):
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        q, k = _rope(q, cos, sin), _rope(k, cos, sin)
        a = _F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
        g, u = self.up(self.n2(x)).chunk(2, -1)
        return x + self.down(_F.silu(g) * u)


class _CodeLM(_nn.Module):
    def __init__(self, vocab, d, heads, layers, max_pos):
        super().__init__()
        self.emb = _nn.Embedding(vocab, d)
        self.blocks = _nn.ModuleList(_RotaryBlock(d, heads, 8 * d // 3 // 64 * 64 or d) for _ in range(layers))
        self.norm = _nn.RMSNorm(d)
        self.head = _nn.Linear(d, vocab, bias=False)
        self.cos, self.sin = _rope_tables(d // heads, max_pos, 10000.0)

    def forward(self, ids):
        t = ids.shape[1]
        cos, sin = self.cos[:t].to(torch.bfloat16), self.sin[:t].to(torch.bfloat16)
        x = self.emb(ids)
        for blk in self.blocks:
            x = blk(x, cos, sin)
        return self.head(self.norm(x))


@_workload("code-completion language-model training with fill-in-the-middle (random init, a decoder-only rotary transformer): 2-16 code files a step (drawn, then the last dropped until at most 5,120 padded tokens a step), each of 128-1,024 tokens (drawn per file over a 32,768-token vocabulary, padded to the step's longest rounded up to a multiple of 64, rotary tables of 1,024 positions) each with a fill-in-the-middle span (start drawn in the file's last three quarters, end drawn after it); an 8-block pre-RMS-norm transformer (width 512, 8 heads, SwiGLU MLP of 1,344) with causal SDPA; next-token cross-entropy on the middle span only (a mask multiplied in, padding excluded); AdamW with a cosine learning rate, clipping, bf16 autocast, 275 steps; the loss read back every 20 steps and every 55 steps a no-grad evaluation of 8 files of 1,024 tokens with the middle-span loss and top-1 accuracy read back")
def code_completion_fim_train(rng):
    vocab, d, heads, layers = _smoke(32768, 300), _smoke(512, 32), _smoke(8, 2), _smoke(8, 1)
    max_len, min_len, budget = _smoke(1024, 64), _smoke(128, 16), _smoke(5120, 256)
    model = _CodeLM(vocab, d, heads, layers, max_len).cuda()
    steps = _smoke(275, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, betas=(0.9, 0.95))
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)

    def files(lengths):
        t = -(-max(lengths) // 64) * 64
        spans = []
        for n in lengths:
            s = rng.randint(n // 4, n - 2)
            spans.append((s, rng.randint(s + 1, n)))
        keep = keep_mask(lengths, t)
        ids = torch.randint(3, vocab, (len(lengths), t), device="cuda").masked_fill(~keep, 0)
        pos = torch.arange(t, device="cuda")[None]
        lo = torch.tensor([a for a, _ in spans], device="cuda")[:, None]
        hi = torch.tensor([e for _, e in spans], device="cuda")[:, None]
        mid = ((pos >= lo) & (pos < hi)).float()  # the loss mask of the middle span
        return ids, mid

    def loss_of(ids, mid):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(ids[:, :-1])
        ce = _F.cross_entropy(logits.float().transpose(1, 2), ids[:, 1:], reduction="none")
        w = mid[:, 1:]
        return (ce * w).sum() / w.sum().clamp(min=1), logits, w

    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(2, 1), _smoke(16, 3))
        lengths = [rng.randint(min_len, max_len) for _ in range(b)]
        while len(lengths) > 1 and len(lengths) * (-(-max(lengths) // 64) * 64) > budget:
            lengths.pop()
        ids, mid = files(lengths)
        loss, logits, w = loss_of(ids, mid)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            loss.detach().item()
        del ids, mid, loss, logits, w
        if (step + 1) % _smoke(55, 2) == 0:
            model.eval()
            with torch.no_grad():
                ids, mid = files([max_len] * _smoke(8, 2))
                loss, logits, w = loss_of(ids, mid)
                acc = ((logits.argmax(-1) == ids[:, 1:]).float() * w).sum() / w.sum().clamp(min=1)
                out = torch.stack([loss, acc])
            out.tolist()
            del ids, mid, loss, logits, w, acc, out


# ---------------------------------------------------------------- code search service (bi-encoder + re-ranker)


class _QueryEncoder(_nn.Module):
    def __init__(self, vocab, d, heads, layers, max_pos, d_out):
        super().__init__()
        self.tok, self.pos = _nn.Embedding(vocab, d), _nn.Embedding(max_pos, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.out = _nn.Linear(d, d_out)

    def forward(self, ids, keep):
        t = ids.shape[1]
        x = self.tok(ids) + self.pos(torch.arange(t, device=ids.device))[None]
        for blk in self.blocks:
            x = blk(x, mask=keep[:, None, None, :])
        w = keep[..., None].to(x.dtype)
        pooled = (self.norm(x) * w).sum(1) / w.sum(1).clamp(min=1)
        return _F.normalize(self.out(pooled).float(), dim=-1)


@_workload("code-search serving (random init, a bi-encoder with an MLP re-ranker): 1,650-1,750 requests (drawn) of 1-64 natural-language queries each (log-uniform), each query of 4-64 tokens (the length drawn per query, the ids over a 30,000-token vocabulary from the buffers' fixed contents, padded to the request's longest rounded up to a multiple of 8, position table of 64 rows), the int32 token ids (padding set to 0 by the key mask on the device) uploaded on a side stream from two reused pinned host buffers (filled once) one request ahead through SideUploads.ahead (one span, waited on by event, record_stream'ed), the key mask built on the device from the host lengths; a 4-block pre-norm transformer query encoder (width 384, 6 heads) under a key mask, masked mean pooling, a 256-wide L2-normalised embedding, under bf16 autocast; scores against an on-device bf16 index of 300,000 code-snippet embeddings (one matmul under bf16 autocast), the top 100 per query, their embeddings gathered and re-scored by a 3-layer MLP over [query, code, product, first-stage score] (width 256) under bf16 autocast, the top 10 of the re-ranked scores; each request's top-10 snippet ids and scores read back")
def code_search_serve(rng):
    vocab, d, heads, layers, d_out = _smoke(30000, 300), _smoke(384, 32), _smoke(6, 2), _smoke(4, 1), _smoke(256, 16)
    n_index, max_tok, max_q, k1, k2 = _smoke(300000, 2000), _smoke(64, 16), _smoke(64, 4), _smoke(100, 20), 10
    enc = _QueryEncoder(vocab, d, heads, layers, max_tok, d_out).cuda().eval()
    rerank = mlp(3 * d_out + 1, _smoke(256, 16), 1, layers=3, act=_nn.GELU).cuda().eval()
    enc.requires_grad_(False)
    rerank.requires_grad_(False)
    index = _F.normalize(torch.randn(n_index, d_out, device="cuda"), dim=-1).to(torch.bfloat16)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(2, vocab, (max_q * max_tok,), dtype=torch.int32, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    nreq = rng.randint(_smoke(1650, 3), _smoke(1750, 4))
    plan = []
    for _ in range(nreq):
        lengths = [rng.randint(4, max_tok) for _ in range(_loguniform(rng, 1, max_q))]
        plan.append((lengths, -(-max(lengths) // 8) * 8))

    for (lengths, t), raw in up.ahead(plan, lambda p: (len(p[0]) * p[1],)):
        b = len(lengths)
        with torch.no_grad():
            keep = keep_mask(lengths, t)
            ids = raw.view(b, t).long().masked_fill(~keep, 0)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                q = enc(ids, keep)
                scores = q.to(torch.bfloat16) @ index.T
            top_s, top_i = scores.float().topk(k1, dim=-1)
            cand = index[top_i].float()  # (b, k1, d_out)
            qe = q[:, None].expand_as(cand)
            feats = torch.cat([qe, cand, qe * cand, top_s[..., None]], -1)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                rs = rerank(feats)[..., 0].float()
            best_s, best_j = rs.topk(k2, dim=-1)
            best_i = top_i.gather(1, best_j)
            out = torch.cat([best_i.float(), best_s], -1)
        out.tolist()
        del raw, keep, ids, q, scores, top_s, top_i, cand, qe, feats, rs, best_s, best_j, best_i, out


# ---------------------------------------------------------------- vulnerability detection (gated graph network)


class _GatedGraphNet(_nn.Module):
    """Node features from a node-kind table and the mean of each statement's token embeddings; `layers` rounds of
    typed messages (one linear map per edge type, summed into the destination by index_add_) and a hand-written GRU
    update; a gated sum readout per graph by index_add_; a function-level and a statement-level head."""

    def __init__(self, kinds, vocab, d, n_etypes, layers):
        super().__init__()
        self.kind, self.tok = _nn.Embedding(kinds, d), _nn.Embedding(vocab, d)
        self.msg = _nn.ModuleList(_nn.Linear(d, n_etypes * d) for _ in range(layers))
        self.zr = _nn.ModuleList(_nn.Linear(2 * d, 2 * d) for _ in range(layers))
        self.cand = _nn.ModuleList(_nn.Linear(2 * d, d) for _ in range(layers))
        self.gate, self.feat = _nn.Linear(2 * d, 1), _nn.Linear(2 * d, d)
        self.graph_head = mlp(d, d, 1, act=_nn.GELU)
        self.node_head = _nn.Linear(2 * d, 1)
        self.et = n_etypes

    def forward(self, kind, toks, src, dst, etype, gid, n_graphs):
        n, d = kind.shape[0], self.kind.weight.shape[1]
        h0 = self.kind(kind) + self.tok(toks).mean(1)
        h = h0
        for msg, zr, cand in zip(self.msg, self.zr, self.cand):
            m_all = msg(h).view(n, self.et, d)
            m = m_all[src, etype]
            agg = torch.zeros(n, d, device=h.device, dtype=m.dtype).index_add_(0, dst, m)
            z, r = torch.sigmoid(zr(torch.cat([agg, h], -1))).chunk(2, -1)
            c = torch.tanh(cand(torch.cat([agg, r * h], -1)))
            h = (1 - z) * h + z * c
        hc = torch.cat([h, h0], -1)
        g = torch.sigmoid(self.gate(hc)) * self.feat(hc)
        pooled = torch.zeros(n_graphs, d, device=h.device, dtype=g.dtype).index_add_(0, gid, g)
        return self.graph_head(pooled)[:, 0].float(), self.node_head(hc)[:, 0].float()


@_workload("vulnerability detection training (random init, a gated graph network over code property graphs, Devign-style): 8-48 functions a step (drawn, then the last dropped until at most 12,000 nodes a step), each of 40-800 nodes (drawn per function) with 2-4 edges a node (drawn per step) of 4 edge types (AST, control flow, data flow, call) drawn within each function on the device (each node's function found by bucketize over the functions' end offsets, a cumsum on the device of the host sizes), labels drawn on the device (25% of functions vulnerable, 5% of their statements); node features from a 64-kind node-type table plus the mean of 12 statement-token embeddings (a 20,000-token vocabulary); 6 rounds of typed messages (one linear map per edge type, gathered per edge and summed by index_add_) with a hand-written GRU update (width 192); a gated sum readout per function by index_add_; a function-level vulnerable logit (binary cross-entropy, positive weight 3) and a statement-level vulnerable-line logit (binary cross-entropy, weighted 0.5); Adam, clipping, bf16 autocast, 650 steps; the losses read back every 20 steps and every 130 steps a no-grad evaluation of 32 functions of 400 nodes with 3 edges a node, with the function-level accuracy and the mean predicted probability read back")
def vuln_graph_detect_train(rng):
    kinds, vocab, d, n_et, layers = 64, _smoke(20000, 200), _smoke(192, 16), 4, _smoke(6, 2)
    n_tok, budget = 12, _smoke(12000, 300)
    model = _GatedGraphNet(kinds, vocab, d, n_et, layers).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=5e-4)

    def graphs(sizes, per_node):
        n, g = sum(sizes), len(sizes)
        ends = torch.tensor(sizes, device="cuda").cumsum(0)
        starts = ends - torch.tensor(sizes, device="cuda")
        gid = torch.bucketize(torch.arange(n, device="cuda"), ends, right=True)
        e = n * per_node
        src = torch.randint(0, n, (e,), device="cuda")
        ge = gid[src]
        dst = starts[ge] + (torch.rand(e, device="cuda") * (ends[ge] - starts[ge])).long()
        etype = torch.randint(0, n_et, (e,), device="cuda")
        kind = torch.randint(0, kinds, (n,), device="cuda")
        toks = torch.randint(0, vocab, (n, n_tok), device="cuda")
        y_g = (torch.rand(g, device="cuda") < 0.25).float()
        y_n = (torch.rand(n, device="cuda") < 0.05).float() * y_g[gid]
        return kind, toks, src, dst, etype, gid, y_g, y_n

    pos_w = torch.tensor(3.0, device="cuda")
    steps = _smoke(650, 3)
    for step in range(steps):
        model.train()
        sizes = [rng.randint(_smoke(40, 5), _smoke(800, 40)) for _ in range(rng.randint(_smoke(8, 2), _smoke(48, 4)))]
        while len(sizes) > 1 and sum(sizes) > budget:
            sizes.pop()
        kind, toks, src, dst, etype, gid, y_g, y_n = graphs(sizes, rng.randint(2, 4))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            g_log, n_log = model(kind, toks, src, dst, etype, gid, len(sizes))
        l_g = _F.binary_cross_entropy_with_logits(g_log, y_g, pos_weight=pos_w)
        l_n = _F.binary_cross_entropy_with_logits(n_log, y_n)
        loss = l_g + 0.5 * l_n
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_g.detach(), l_n.detach()]).tolist()
        del kind, toks, src, dst, etype, gid, y_g, y_n, g_log, n_log, l_g, l_n, loss
        if (step + 1) % _smoke(130, 2) == 0:
            model.eval()
            with torch.no_grad():
                sizes = [_smoke(400, 20)] * _smoke(32, 2)
                kind, toks, src, dst, etype, gid, y_g, y_n = graphs(sizes, 3)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    g_log, n_log = model(kind, toks, src, dst, etype, gid, len(sizes))
                p = torch.sigmoid(g_log)
                out = torch.stack([((p > 0.5).float() == y_g).float().mean(), p.mean()])
            out.tolist()
            del kind, toks, src, dst, etype, gid, y_g, y_n, g_log, n_log, p, out


# ---------------------------------------------------------------- log anomaly detection (DeepLog-style LSTM)


class _StepLSTM(_nn.Module):
    """A stacked LSTM written out step by step: each layer's input projections for all steps at once, then the
    recurrence one step at a time."""

    def __init__(self, din, hidden, layers):
        super().__init__()
        self.ih = _nn.ModuleList(_nn.Linear(din if i == 0 else hidden, 4 * hidden) for i in range(layers))
        self.hh = _nn.ModuleList(_nn.Linear(hidden, 4 * hidden, bias=False) for _ in range(layers))
        self.hd = hidden

    def forward(self, x):
        b, t, _ = x.shape
        for ih, hh in zip(self.ih, self.hh):
            xp = ih(x)
            h = x.new_zeros(b, self.hd)
            c = torch.zeros(b, self.hd, device=x.device)
            outs = []
            for s in range(t):
                i, f, g, o = (xp[:, s] + hh(h)).chunk(4, -1)
                c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
                h = torch.sigmoid(o) * torch.tanh(c)
                outs.append(h)
            x = torch.stack(outs, 1)
        return x


class _LogKeyModel(_nn.Module):
    def __init__(self, n_keys, d_key, n_params, hidden, layers):
        super().__init__()
        self.key = _nn.Embedding(n_keys, d_key)
        self.par = _nn.Linear(n_params, d_key)
        self.rnn = _StepLSTM(2 * d_key, hidden, layers)
        self.head = _nn.Linear(hidden, n_keys)

    def forward(self, keys, params):
        x = torch.cat([self.key(keys), self.par(params)], -1)
        return self.head(self.rnn(x)).float()


@_workload("log-anomaly detection training (random init, a DeepLog-style LSTM over log-template keys): 64-512 sessions a step (drawn), each a window of 8-40 log events (the step's window drawn, each session's own length drawn between 4 and it, padded), each event a template key (of 1,800) and 8 parameter values (drawn on the device); key embeddings (width 64) and a linear projection of the parameters (width 64), a 2-layer LSTM (hidden 256) written out step by step (input projections for all steps at once, the recurrence one step at a time), next-key cross-entropy at every valid step (masked); Adam, clipping, bf16 autocast, 200 steps; the loss read back every 20 steps and every 50 steps a no-grad evaluation of 1,024 sessions of 32 events with the top-9 hit rate and the fraction of sessions flagged anomalous (any next key outside the top 9) read back")
def log_anomaly_lstm_train(rng):
    n_keys, d_key, n_par, hidden, layers = _smoke(1800, 50), _smoke(64, 8), 8, _smoke(256, 16), 2
    model = _LogKeyModel(n_keys, d_key, n_par, hidden, layers).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def sessions(lengths, t):
        keep = keep_mask(lengths, t + 1)
        keys = torch.randint(0, n_keys, (len(lengths), t + 1), device="cuda").masked_fill(~keep, 0)
        params = torch.randn(len(lengths), t, n_par, device="cuda")
        return keys, params, keep[:, 1:].float()

    steps = _smoke(200, 3)
    for step in range(steps):
        model.train()
        b, t = rng.randint(_smoke(64, 2), _smoke(512, 6)), rng.randint(_smoke(8, 3), _smoke(40, 6))
        keys, params, w = sessions([rng.randint(min(4, t), t) + 1 for _ in range(b)], t)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(keys[:, :-1], params)
        ce = _F.cross_entropy(logits.transpose(1, 2), keys[:, 1:], reduction="none")
        loss = (ce * w).sum() / w.sum().clamp(min=1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.detach().item()
        del keys, params, w, logits, ce, loss
        if (step + 1) % _smoke(50, 2) == 0:
            model.eval()
            with torch.no_grad():
                t = _smoke(32, 4)
                keys, params, w = sessions([t + 1] * _smoke(1024, 4), t)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = model(keys[:, :-1], params)
                top = logits.topk(9, dim=-1).indices
                hit = (top == keys[:, 1:, None]).any(-1).float()
                miss = ((1 - hit) * w).amax(1)
                out = torch.stack([(hit * w).sum() / w.sum(), miss.mean()])
            out.tolist()
            del keys, params, w, logits, top, hit, miss, out

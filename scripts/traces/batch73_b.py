"""The seventy-third batch of held-out workloads for record.py, second half (batch73.py has the first): mathematics and
symbolic reasoning, written in torch alone. Neural theorem proving by expert iteration (a decoder-only policy with a
value head pretrained on (proof state, tactic) pairs, then rounds of batched best-first proof search: tactics sampled
for every frontier state with a KV cache, new states scored by the value head, the frontier of each theorem kept on
the device by top-k over cumulative log-probabilities plus values, the chosen steps written into a device replay
buffer and the policy fine-tuned on it), multi-digit arithmetic with a looped transformer and Abacus positional
embeddings (addition and multiplication of reversed-digit operands of drawn lengths computed on the device with carry
loops and a scatter_add of partial products, the answer tokens alone supervised, greedy KV-cached decoding of longer
out-of-distribution problems for exact-match accuracy), NeuroSAT-style message passing on random planted 3-SAT
instances trained without labels (literal and clause LSTM cells exchanging messages by index_add over the
clause-literal incidence, an unsupervised loss on the probability that every clause is satisfied, more rounds at test
time, satisfied-clause and solved-instance rates), and a symbolic-integration service (a Lample-Charton style
sequence-to-sequence transformer decoding antiderivatives in prefix notation by beam search with a reordered KV cache;
every candidate verified numerically by a stack machine that evaluates prefix token sequences on the device, right to
left, comparing central differences of the candidate with the integrand; the integrands uploaded on a side stream).
Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or, for the
integration service, from two reused pinned host buffers), `rng` the workload's random.Random for every shape, count
and sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a
tensor's value: search expansions, tactic and decoding lengths, message-passing rounds, carry loops and stack-machine
positions are fixed on the host, finished beams and padding handled with torch.where, no boolean-mask indexing;
losses, accuracies, frontier scores and verification results are read back only at logging points.
symbolic_integration_beam_serve uses a side stream (uploads waited on by event, the tensors record_stream'ed); the
others are single-stream. The transformers run under bf16 autocast; the message passing, the SAT loss and the stack
machine are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new73.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py
(smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered with dummies, autocast a no-op so that fp32
sizes are counted, streams, events and pinned memory no-ops), and for which of them the CPU smoke run
(RECORD_SMOKE=1) ran.
"""

import torch

from batch_common import Batch
from workload_helpers import SideUploads

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- a transformer block with a KV cache


class _CBlock(_nn.Module):
    """A pre-norm block whose self-attention takes and returns a KV cache (k, v) of shape (B, heads, T, dh); an
    optional cross-attention to precomputed memory keys and values."""

    def __init__(self, d, heads, cross=False):
        super().__init__()
        self.h = heads
        self.n1, self.n3 = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.proj = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.cross = cross
        if cross:
            self.n2 = _nn.LayerNorm(d)
            self.q, self.kv, self.o = _nn.Linear(d, d), _nn.Linear(d, 2 * d), _nn.Linear(d, d)
        self.fc1, self.fc2 = _nn.Linear(d, 4 * d), _nn.Linear(4 * d, d)

    def split(self, t):
        return t.unflatten(-1, (self.h, -1)).transpose(1, 2)

    def memory(self, mem):
        k, v = self.kv(mem).chunk(2, -1)
        return self.split(k), self.split(v)

    def forward(self, x, cache=None, causal=True, mem_kv=None, mask=None):
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        if cache is not None:
            k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
        a = _F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal and cache is None and t > 1)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        if self.cross:
            a = _F.scaled_dot_product_attention(self.split(self.q(self.n2(x))), *mem_kv)
            x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(_F.gelu(self.fc1(self.n3(x)))), (k, v)


# ---------------------------------------------------------------- expert iteration for neural theorem proving


class _ProverLM(_nn.Module):
    def __init__(self, vocab, d, heads, layers, maxlen):
        super().__init__()
        self.emb, self.pos = _nn.Embedding(vocab, d), _nn.Embedding(maxlen, d)
        self.blocks = _nn.ModuleList(_CBlock(d, heads) for _ in range(layers))
        self.norm, self.out = _nn.LayerNorm(d), _nn.Linear(d, vocab)
        self.value = _nn.Sequential(_nn.Linear(d, d), _nn.GELU(), _nn.Linear(d, 1))

    def forward(self, ids, caches=None, start=0):
        h = self.emb(ids) + self.pos(torch.arange(start, start + ids.shape[1], device=ids.device))
        new = []
        for i, blk in enumerate(self.blocks):
            h, kv = blk(h, None if caches is None else caches[i])
            new.append(kv)
        h = self.norm(h)
        return self.out(h), h, new


@_workload("neural theorem proving by expert iteration (random init): a decoder-only policy (6 blocks, width 384, 6 heads, vocabulary 1,024, learned positions) with a value head, pretrained 40 AdamW steps on (proof state, tactic) pairs of 32-64 (drawn; states 64-160 tokens, tactics 8-24, loss on the tactic tokens plus value regression) under bf16 autocast; then 8 rounds of batched best-first search over 8-16 theorems (drawn) with a frontier of 4 states each: 4-6 expansions a round (drawn), each sampling 2-4 tactics of 8-20 tokens (drawn) for every frontier state at temperature 0.8 with a KV cache (multinomial), applying them as a sliding edit of the state, scoring the new states with the value head and keeping each theorem's 4 best by cumulative log-probability plus value (top-k and gathers on the device), the kept steps written to a device replay buffer of 4,096; after each round 20-28 fine-tuning steps (drawn) on buffer samples; frontier scores read back each round, losses every 10 steps")
def proof_search_expert_iteration_train(rng):
    vocab, d, heads, layers = 1024, _smoke(384, 24), _smoke(6, 2), _smoke(6, 1)
    slen, tmax = _smoke(160, 12), _smoke(24, 4)
    sep, eos = 1, 2
    model = _ProverLM(vocab, d, heads, layers, slen + tmax + 4).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.01)
    cap = _smoke(4096, 32)
    width = slen + tmax + 2
    buf_ids = torch.zeros(cap, width, dtype=torch.long, device="cuda")
    buf_lab = torch.full((cap, width), -100, dtype=torch.long, device="cuda")
    buf_val = torch.zeros(cap, device="cuda")
    filled = [0, 0]  # count written, next slot

    def train_step(ids, labels, vpos, vtarget):
        model.train()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits, h, _ = model(ids[:, :-1])
            v = model.value(h.gather(1, vpos[:, None, None].expand(-1, 1, h.shape[-1]))[:, 0]).float()[:, 0]
        loss = _F.cross_entropy(logits.float().flatten(0, 1), labels[:, 1:].flatten(), ignore_index=-100) + \
            _F.mse_loss(v.sigmoid(), vtarget)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss

    # supervised pretraining on (state, tactic) pairs
    for step in range(_smoke(40, 2)):
        b, sl, tl = rng.randint(_smoke(32, 2), _smoke(64, 3)), rng.randint(_smoke(64, 6), slen), rng.randint(8 if tmax > 8 else 2, tmax)
        state = torch.randint(3, vocab, (b, sl), device="cuda")
        tac = torch.randint(3, vocab, (b, tl), device="cuda")
        col = torch.full((b, 1), sep, dtype=torch.long, device="cuda")
        ids = torch.cat([state, col, tac, col * 0 + eos], 1)
        labels = torch.cat([torch.full((b, sl + 1), -100, dtype=torch.long, device="cuda"), tac, col * 0 + eos], 1)
        loss = train_step(ids, labels, torch.full((b,), sl, device="cuda", dtype=torch.long),
                          torch.rand(b, device="cuda"))
        if step % 10 == 0:
            float(loss)
        del state, tac, col, ids, labels, loss

    frontier = 4
    for rnd in range(_smoke(8, 2)):
        nth = rng.randint(_smoke(8, 2), _smoke(16, 3))
        sl = rng.randint(_smoke(64, 6), slen - tmax)
        states = torch.randint(3, vocab, (nth, 1, sl), device="cuda").expand(nth, frontier, sl).reshape(-1, sl)
        scores = torch.tensor([0.0] + [-1e4] * (frontier - 1), device="cuda").repeat(nth)
        model.eval()
        for _e in range(rng.randint(_smoke(4, 1), _smoke(6, 2))):
            ns = rng.randint(2, 4)
            tl = rng.randint(8 if tmax > 8 else 2, _smoke(20, 4))
            rows = nth * frontier * ns
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                src = torch.cat([states.repeat_interleave(ns, 0),
                                 torch.full((rows, 1), sep, dtype=torch.long, device="cuda")], 1)
                logits, _h, caches = model(src)
                logp_sum = torch.zeros(rows, device="cuda")
                toks = []
                for t in range(tl):
                    logp = (logits[:, -1].float() / 0.8).log_softmax(-1)
                    nxt = torch.multinomial(logp.exp(), 1)
                    logp_sum = logp_sum + logp.gather(1, nxt)[:, 0]
                    toks.append(nxt)
                    logits, _h, caches = model(nxt, caches, start=sl + 1 + t)
                tac = torch.cat(toks, 1)
                new_states = torch.cat([src[:, tl:sl], tac], 1)
                _l, h, _c = model(new_states)
                value = model.value(h[:, -1]).float()[:, 0].sigmoid()
                cand = (scores.repeat_interleave(ns) + logp_sum / tl + value.log()).view(nth, frontier * ns)
                top_s, top_i = cand.topk(frontier, dim=1)
                pick = (torch.arange(nth, device="cuda")[:, None] * frontier * ns + top_i).flatten()
                # the kept steps go to the replay buffer: state SEP tactic EOS, labels on the tactic
                kept = pick.shape[0]
                slot = filled[1]
                end = min(slot + kept, cap)
                n = end - slot
                pad = width - (sl + tl + 2)
                ids = torch.cat([src.index_select(0, pick), tac.index_select(0, pick),
                                 torch.full((kept, 1), eos, dtype=torch.long, device="cuda"),
                                 torch.zeros(kept, pad, dtype=torch.long, device="cuda")], 1)
                lab = torch.cat([torch.full((kept, sl + 1), -100, dtype=torch.long, device="cuda"),
                                 tac.index_select(0, pick), torch.full((kept, 1), eos, dtype=torch.long, device="cuda"),
                                 torch.full((kept, pad), -100, dtype=torch.long, device="cuda")], 1)
                buf_ids[slot:end] = ids[:n]
                buf_lab[slot:end] = lab[:n]
                buf_val[slot:end] = value.index_select(0, pick)[:n]
                filled[0] = min(cap, filled[0] + n)
                filled[1] = end % cap
                states = new_states.index_select(0, pick)
                scores = top_s.flatten()
            del src, logits, _h, caches, logp_sum, toks, tac, new_states, _l, h, _c, value, cand, top_i, pick
            del ids, lab, logp, nxt
        scores.view(nth, frontier).max(1).values.tolist()
        for step in range(rng.randint(_smoke(20, 2), _smoke(28, 3))):
            b = min(filled[0], rng.choice(_smoke([32, 48, 64], [2, 3])))
            idx = torch.randint(0, filled[0], (b,), device="cuda")
            ids, labels = buf_ids.index_select(0, idx), buf_lab.index_select(0, idx)
            vpos = (labels != -100).long().argmax(1) - 1
            loss = train_step(ids, labels, vpos, buf_val.index_select(0, idx))
            if step % 10 == 0:
                float(loss)
            del idx, ids, labels, vpos, loss
        del states, scores, top_s


# ---------------------------------------------------------------- multi-digit arithmetic with a looped transformer

_PLUS, _TIMES, _EQ, _EOS = 10, 11, 12, 13


def _arith_batch(b, n, m, op, offset_max):
    """b problems a op b = c with n- and m-digit operands, digits least significant first: ids (b, T), labels
    (answer tokens only, -100 elsewhere), Abacus positions (digit index within its number plus a per-row offset)."""
    a = torch.randint(0, 10, (b, n), device="cuda")
    c = torch.randint(0, 10, (b, m), device="cuda")
    if op == _PLUS:
        L = max(n, m) + 1
        aa, cc = _F.pad(a, (0, L - n)), _F.pad(c, (0, L - m))
        coeff = aa + cc
    else:
        L = n + m
        prod = (a[:, :, None] * c[:, None, :]).flatten(1)
        where = (torch.arange(n, device="cuda")[:, None] + torch.arange(m, device="cuda")[None]).flatten()
        coeff = torch.zeros(b, L, dtype=torch.long, device="cuda").scatter_add_(1, where[None].expand(b, -1), prod)
    carry = torch.zeros(b, dtype=torch.long, device="cuda")
    digits = []
    for i in range(L):
        s = coeff[:, i] + carry
        digits.append(s % 10)
        carry = s // 10
    ans = torch.stack(digits, 1)
    col = torch.full((b, 1), op, dtype=torch.long, device="cuda")
    ids = torch.cat([a, col, c, col * 0 + _EQ, ans, col * 0 + _EOS], 1)
    prompt = n + m + 2
    labels = torch.cat([torch.full((b, prompt), -100, dtype=torch.long, device="cuda"), ans, col * 0 + _EOS], 1)
    ar = torch.arange(1, 64, device="cuda")
    z = torch.zeros(1, dtype=torch.long, device="cuda")
    pos = torch.cat([ar[:n], z, ar[:m], z, ar[:L], z])[None]
    off = torch.randint(0, offset_max + 1, (b, 1), device="cuda")
    pos = pos + off * (pos > 0)
    return ids, labels, pos, prompt


class _LoopedLM(_nn.Module):
    """Two blocks applied `loops` times each, the input embedding re-injected before every loop (as in looped
    arithmetic transformers), Abacus positional embeddings of digit positions."""

    def __init__(self, vocab, d, heads, loops, maxpos):
        super().__init__()
        self.emb, self.abacus = _nn.Embedding(vocab, d), _nn.Embedding(maxpos, d)
        self.blocks = _nn.ModuleList(_CBlock(d, heads) for _ in range(2))
        self.loops = loops
        self.norm, self.out = _nn.LayerNorm(d), _nn.Linear(d, vocab)

    def forward(self, ids, pos, caches=None):
        e = self.emb(ids) + self.abacus(pos)
        h = e
        new = []
        for i in range(self.loops):
            h = h + e
            for j, blk in enumerate(self.blocks):
                h, kv = blk(h, None if caches is None else caches[2 * i + j])
                new.append(kv)
        return self.out(self.norm(h)), new


@_workload("multi-digit arithmetic with a looped transformer (random init): addition of 1-20-digit and multiplication of 1-8-digit operands (digits least significant first, lengths and the operation drawn a step) computed on the device by a carry loop over the digit columns (the multiplication's partial products by scatter_add), batches of 128-384 (drawn); a looped decoder (2 pre-norm blocks of width 384, 6 heads, applied 4 times with input injection) with Abacus positional embeddings (digit index within each number plus a random per-row offset of up to 40), only the answer tokens supervised, AdamW with warmup and clipping under bf16 autocast, 340 steps; the loss read back every 25 steps, and every 60 steps 256 out-of-distribution additions of 21-30 digits decoded greedily with a KV cache per block application, exact-match accuracy read back")
def looped_abacus_arithmetic_train(rng):
    vocab, d, heads, loops = 16, _smoke(384, 24), _smoke(6, 2), _smoke(4, 2)
    model = _LoopedLM(vocab, d, heads, loops, 128).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    steps = _smoke(340, 3)
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = 3e-4 * min(1.0, (step + 1) / 25)
        if rng.random() < 0.6:
            op, n, m = _PLUS, rng.randint(1, _smoke(20, 4)), rng.randint(1, _smoke(20, 4))
        else:
            op, n, m = _TIMES, rng.randint(1, _smoke(8, 3)), rng.randint(1, _smoke(8, 3))
        b = rng.choice(_smoke([128, 192, 256, 384], [3, 4]))
        model.train()
        ids, labels, pos, _p = _arith_batch(b, n, m, op, 40)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits, _c = model(ids[:, :-1], pos.expand(b, -1)[:, :-1])
        loss = _F.cross_entropy(logits.float().flatten(0, 1), labels[:, 1:].flatten(), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 25 == 0:
            float(loss)
        del ids, labels, pos, logits, _c, loss
        if (step + 1) % _smoke(60, 2) == 0:
            model.eval()
            n = rng.randint(_smoke(21, 5), _smoke(30, 6))
            eb = _smoke(256, 4)
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                ids, labels, pos, prompt = _arith_batch(eb, n, n, _PLUS, 0)
                pos = pos.expand(eb, -1)
                logits, caches = model(ids[:, :prompt], pos[:, :prompt])
                out = []
                for t in range(ids.shape[1] - prompt):
                    nxt = logits[:, -1].argmax(-1, keepdim=True)
                    out.append(nxt)
                    logits, caches = model(nxt, pos[:, prompt + t:prompt + t + 1], caches)
                exact = (torch.cat(out, 1) == ids[:, prompt:]).all(1).float().mean()
            exact.item()
            del ids, labels, pos, logits, caches, out, nxt, exact


# ---------------------------------------------------------------- NeuroSAT-style unsupervised SAT solving


def _planted_3sat(b, n, m):
    """b planted 3-SAT instances of n variables and m clauses: (variable of each literal slot (b, m, 3), its sign
    (1 positive), the planted assignment (b, n)); every clause made true under the assignment by flipping the sign of
    its first literal where none was true."""
    assign = torch.randint(0, 2, (b, n), device="cuda")
    var = torch.randint(0, n, (b, m, 3), device="cuda")
    sign = torch.randint(0, 2, (b, m, 3), device="cuda")
    truth = (sign == assign.gather(1, var.flatten(1)).view(b, m, 3)).long()
    sat = truth.sum(-1) > 0
    sign = torch.cat([torch.where(sat, sign[..., 0], 1 - sign[..., 0])[..., None], sign[..., 1:]], -1)
    return var, sign, assign


class _NeuroSAT(_nn.Module):
    def __init__(self, d):
        super().__init__()
        self.l0, self.c0 = _nn.Parameter(torch.randn(d) * 0.1), _nn.Parameter(torch.randn(d) * 0.1)

        def mlp():
            return _nn.Sequential(_nn.Linear(d, d), _nn.ReLU(), _nn.Linear(d, d), _nn.ReLU(), _nn.Linear(d, d))

        self.lmsg, self.cmsg = mlp(), mlp()
        self.cupd, self.lupd = _nn.LSTMCell(d, d), _nn.LSTMCell(2 * d, d)
        self.vote = _nn.Sequential(_nn.Linear(d, d), _nn.ReLU(), _nn.Linear(d, 1))

    def forward(self, lit, clause, nlit, ncl, rounds):
        d = self.l0.shape[0]
        lh, lc = self.l0.expand(nlit, d), torch.zeros(nlit, d, device=lit.device)
        ch, cc = self.c0.expand(ncl, d), torch.zeros(ncl, d, device=lit.device)
        for _ in range(rounds):
            m = self.lmsg(lh).index_select(0, lit)
            agg = torch.zeros(ncl, d, device=lit.device).index_add(0, clause, m)
            ch, cc = self.cupd(agg, (ch, cc))
            m = self.cmsg(ch).index_select(0, clause)
            agg = torch.zeros(nlit, d, device=lit.device).index_add(0, lit, m)
            flip = lh.view(-1, 2, d).flip(1).reshape(nlit, d)
            lh, lc = self.lupd(torch.cat([agg, flip], 1), (lh, lc))
        v = self.vote(lh).view(-1, 2)
        return v[:, 1] - v[:, 0]  # a logit per variable: positive literal's vote minus the negative's


@_workload("NeuroSAT-style message passing trained without labels (random init): batches of planted random 3-SAT instances generated on the device (40-200 variables drawn a step, clause/variable ratio 4.0-4.4 drawn, as many instances as fit about 3,000 variables, each unsatisfied clause repaired by flipping one literal's sign), literal and clause embeddings of width 128 updated by LSTM cells from 3-layer MLP messages summed by index_add over the clause-literal incidence (each literal also sees its negation), 8-14 rounds a step (drawn); a per-variable vote, the probability of each literal being true gathered per clause and the loss -log(1 - prod(1 - p)) over clauses (no labels), Adam with clipping, fp32, 200 steps; the loss read back every 10 steps, every 30 steps a test batch of 200-variable instances run for 32 rounds with hard assignments, the satisfied-clause rate and the solved-instance rate read back")
def neurosat_unsupervised_train(rng):
    d = _smoke(128, 16)
    model = _NeuroSAT(d).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=2e-4)
    budget = _smoke(3000, 60)

    def graph(b, n, m):
        var, sign, assign = _planted_3sat(b, n, m)
        base = (torch.arange(b, device="cuda") * n)[:, None, None]
        lit = ((base + var) * 2 + sign).flatten()
        clause = torch.arange(b * m, device="cuda").repeat_interleave(3)
        return var, sign, lit, clause

    def clause_true_prob(logit, var, sign, b, n):
        p = torch.sigmoid(logit).view(b, n)
        pv = p.gather(1, var.flatten(1)).view(var.shape)
        return torch.where(sign == 1, pv, 1 - pv)

    steps = _smoke(200, 3)
    for step in range(steps):
        n = rng.randint(_smoke(40, 6), _smoke(200, 10))
        m = int(round(rng.uniform(4.0, 4.4) * n))
        b = max(1, budget // n)
        rounds = rng.randint(_smoke(8, 2), _smoke(14, 3))
        model.train()
        var, sign, lit, clause = graph(b, n, m)
        logit = model(lit, clause, 2 * b * n, b * m, rounds)
        pt = clause_true_prob(logit, var, sign, b, n)
        unsat = (1 - pt).prod(-1)
        loss = -torch.log((1 - unsat).clamp_min(1e-6)).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.65)
        opt.step()
        if step % 10 == 0:
            float(loss)
        del var, sign, lit, clause, logit, pt, unsat, loss
        if (step + 1) % _smoke(30, 2) == 0:
            model.eval()
            n = _smoke(200, 10)
            m, b = int(4.2 * n), max(1, budget // n)
            with torch.no_grad():
                var, sign, lit, clause = graph(b, n, m)
                logit = model(lit, clause, 2 * b * n, b * m, _smoke(32, 3))
                hard = (logit > 0).float()
                pv = hard.view(b, n).gather(1, var.flatten(1)).view(var.shape)
                sat = (torch.where(sign == 1, pv, 1 - pv).sum(-1) > 0).float()
                torch.stack([sat.mean(), sat.view(b, m).min(1).values.mean()]).tolist()
            del var, sign, lit, clause, logit, hard, pv, sat


# ---------------------------------------------------------------- symbolic integration by beam search (side stream)

# tokens: 0 PAD, 1 BOS, 2 EOS, 3-6 binary (+ - * /), 7-12 unary (sin cos exp log sqrt sq), 13 x, 14-23 constants
_INT_CONSTS = [-2.0, -1.0, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 10.0]
_INT_VOCAB = 24


def _prefix_eval(tok, x, cls, const):
    """Values (R, P) of prefix-notation token rows tok (R, T) at points x (R, P), by a stack machine run right to
    left on the device: operands pushed, unary operators replace the top, binary operators pop two and push one;
    padding, BOS and EOS leave the stack alone (invalid rows give garbage, not errors)."""
    r, t = tok.shape
    p = x.shape[1]
    stack = torch.zeros(r, t + 2, p, device=x.device)
    sp = torch.zeros(r, dtype=torch.long, device=x.device)
    for i in range(t - 1, -1, -1):
        tk = tok[:, i]
        cl = cls[tk]
        top = stack.gather(1, (sp - 1).clamp(min=0)[:, None, None].expand(r, 1, p))[:, 0]
        sec = stack.gather(1, (sp - 2).clamp(min=0)[:, None, None].expand(r, 1, p))[:, 0]
        operand = torch.where((tk == 13)[:, None], x, const[tk][:, None].expand(r, p))
        un = torch.stack([top.sin(), top.cos(), top.clamp(max=8).exp(), (top.abs() + 1e-3).log(), top.abs().sqrt(),
                          top * top], 1)
        uv = un.gather(1, (tk - 7).clamp(0, 5)[:, None, None].expand(r, 1, p))[:, 0]
        safe = torch.where(sec.abs() < 1e-3, torch.full_like(sec, 1e-3), sec)
        bi = torch.stack([top + sec, top - sec, top * sec, top / safe], 1)
        bv = bi.gather(1, (tk - 3).clamp(0, 3)[:, None, None].expand(r, 1, p))[:, 0]
        val = torch.where((cl == 1)[:, None], operand, torch.where((cl == 2)[:, None], uv, bv))
        at = torch.where(cl == 1, sp, torch.where(cl == 2, sp - 1, sp - 2)).clamp(0, t + 1)
        old = stack.gather(1, at[:, None, None].expand(r, 1, p))[:, 0]
        val = torch.where((cl == 0)[:, None], old, torch.nan_to_num(val, 0.0, 1e6, -1e6).clamp(-1e6, 1e6))
        stack.scatter_(1, at[:, None, None].expand(r, 1, p), val[:, None])
        sp = torch.where(cl == 0, sp, at + 1)
        del tk, cl, top, sec, operand, un, uv, safe, bi, bv, val, at, old
    return stack[:, 0]


class _Seq2Seq(_nn.Module):
    def __init__(self, vocab, d, heads, enc, dec, maxlen):
        super().__init__()
        self.emb, self.pos = _nn.Embedding(vocab, d), _nn.Embedding(maxlen, d)
        self.enc = _nn.ModuleList(_CBlock(d, heads) for _ in range(enc))
        self.dec = _nn.ModuleList(_CBlock(d, heads, cross=True) for _ in range(dec))
        self.enorm, self.norm, self.out = _nn.LayerNorm(d), _nn.LayerNorm(d), _nn.Linear(d, vocab)

    def embed(self, ids, start=0):
        return self.emb(ids) + self.pos(torch.arange(start, start + ids.shape[1], device=ids.device))

    def encode(self, src):
        h = self.embed(src)
        for blk in self.enc:
            h, _ = blk(h, causal=False)
        h = self.enorm(h)
        return [blk.memory(h) for blk in self.dec]

    def decode(self, ids, mems, caches=None, start=0):
        h = self.embed(ids, start)
        new = []
        for i, blk in enumerate(self.dec):
            h, kv = blk(h, None if caches is None else caches[i], mem_kv=mems[i])
            new.append(kv)
        return self.out(self.norm(h)), new


@_workload("symbolic-integration service (random init): a Lample-Charton style sequence-to-sequence transformer (3 encoder and 3 decoder blocks of width 512, 8 heads, a prefix-notation vocabulary of 24 tokens) warmed up for 30 teacher-forced AdamW steps of 64 random pairs under bf16 autocast; then 41-45 requests (drawn) of 1-8 integrands (drawn) of 12-48 prefix tokens (drawn), uploaded as int16 from 2 reused pinned host buffers on a side stream one request ahead (waited on by event, record_stream'ed): beam search of width 1, 2, 4 or 8 (drawn) for 16-32 tokens (drawn) with the decoder's KV caches reordered by index_select after every step and finished beams held by torch.where; every candidate and the integrand evaluated at 24 points in [0.5, 2] by a device stack machine over the prefix tokens (right to left, gathers and scatter_ into a per-row stack), the candidate's central difference compared with the integrand; each request's verified flags and beam scores read back")
def symbolic_integration_beam_serve(rng):
    vocab, d, heads = _INT_VOCAB, _smoke(512, 32), _smoke(8, 2)
    slen, tmax = _smoke(48, 10), _smoke(32, 6)
    model = _Seq2Seq(vocab, d, heads, _smoke(3, 1), _smoke(3, 1), 64).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
    bt = _smoke(64, 3)
    for step in range(_smoke(30, 2)):
        model.train()
        sl, tl = rng.randint(_smoke(12, 4), slen), rng.randint(_smoke(12, 4), tmax)
        src = torch.randint(3, vocab, (bt, sl), device="cuda")
        tgt = torch.cat([torch.ones(bt, 1, dtype=torch.long, device="cuda"), torch.randint(3, vocab, (bt, tl), device="cuda"),
                         torch.full((bt, 1), 2, dtype=torch.long, device="cuda")], 1)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits, _c = model.decode(tgt[:, :-1], model.encode(src))
        loss = _F.cross_entropy(logits.float().flatten(0, 1), tgt[:, 1:].flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 10 == 0:
            float(loss)
        del src, tgt, logits, _c, loss
    model.eval().requires_grad_(False)

    cls = torch.tensor([0, 0, 0] + [3] * 4 + [2] * 6 + [1] * 11, device="cuda")
    const = torch.tensor([0.0] * 14 + _INT_CONSTS, device="cuda")
    maxg = 8
    host = [torch.randint(3, vocab, (maxg * slen,), dtype=torch.int16).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    npts, hstep = _smoke(24, 4), 1e-3

    def draw():
        return rng.randint(1, maxg), rng.randint(_smoke(12, 4), slen), rng.choice([1, 2, 4, 8]), \
            rng.randint(_smoke(16, 3), tmax)

    nreq = rng.randint(_smoke(41, 3), _smoke(45, 4))
    plan = [draw() for _ in range(nreq)]
    nxt = up.upload(0, plan[0][0] * plan[0][1])
    for i in range(nreq):
        g, sl, beam, tl = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, plan[i + 1][0] * plan[i + 1][1])
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            src = raw.view(g, sl).long()
            rows = g * beam
            with torch.autocast("cuda", dtype=torch.bfloat16):
                mems = [(k.repeat_interleave(beam, 0), v.repeat_interleave(beam, 0)) for k, v in model.encode(src)]
                ids = torch.ones(rows, 1, dtype=torch.long, device="cuda")
                score = torch.tensor([0.0] + [-1e9] * (beam - 1), device="cuda").repeat(g)
                done = torch.zeros(rows, dtype=torch.bool, device="cuda")
                logits, caches = model.decode(ids, mems)
                out = []
                for t in range(tl):
                    logp = logits[:, -1].float().log_softmax(-1)
                    held = torch.full_like(logp, -1e9)
                    held[:, 0] = 0.0
                    logp = torch.where(done[:, None], held, logp)
                    flat = (score[:, None] + logp).view(g, beam * vocab)
                    top_s, top_i = flat.topk(beam, dim=1)
                    parent = (torch.arange(g, device="cuda")[:, None] * beam + top_i // vocab).flatten()
                    tok = (top_i % vocab).flatten()
                    score = top_s.flatten()
                    done = done.index_select(0, parent) | (tok == 2)
                    out = [o.index_select(0, parent) for o in out] + [tok[:, None]]
                    caches = [(k.index_select(0, parent), v.index_select(0, parent)) for k, v in caches]
                    logits, caches = model.decode(tok[:, None], mems, caches, start=t + 1)
                    del logp, held, flat, top_s, top_i, parent, tok
            cand = torch.cat(out, 1)
            x = 0.5 + 1.5 * torch.rand(g, npts, device="cuda")
            f = _prefix_eval(src, x, cls, const)
            xb = x.repeat_interleave(beam, 0)
            big = _prefix_eval(cand, torch.cat([xb + hstep, xb - hstep], 1), cls, const)
            deriv = (big[:, :npts] - big[:, npts:]) / (2 * hstep)
            err = (deriv - f.repeat_interleave(beam, 0)).abs() / (f.repeat_interleave(beam, 0).abs() + 1e-3)
            verified = ((err < 1e-2).float().mean(1) > 0.9).float()
            torch.stack([verified, score]).tolist()
        del item, raw, src, mems, ids, score, done, logits, caches, out, cand, x, f, xb, big, deriv, err, verified

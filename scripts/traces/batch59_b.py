"""The fifty-ninth batch of held-out workloads for record.py, second half (batch59.py has the first): machine learning
for computer systems, compilers and databases on the GPU, written in torch alone. A Bao-style learned query optimizer
(query plans as binary trees of 3-63 operator nodes drawn, padded per batch with a null node as Bao does, tree
convolution by gathering each node's children, dynamic max pooling; rounds of plan selection over 5-49 hint sets a
query with the current model, latencies from a fixed random teacher tree network, then the value model retrained from
scratch on the round's experience), a learned hardware prefetcher over memory-access traces (traces of drawn
applications made on the device as mixtures of strided streams, pointer chasing and loops; a causal transformer over
page and address-delta tokens in windows of 64-512 accesses, drawn, predicting the next delta class; evaluations that
simulate prefetching from the top-4 predictions over long traces and read back accuracy and coverage), binary-code
similarity search with a Gemini-style structure2vec network over control-flow graphs (functions of 5-200 basic
blocks drawn, compiled variants made by perturbing block features and dropping edges, siamese cosine training; then
a function database embedded in batches and a search service whose query functions, bucketed by block count, arrive
from reused pinned host buffers on a side stream one request ahead), and RobustFill-style neural program synthesis
(a transformer encoder over 4 input-output string examples of drawn length, a decoder over DSL program tokens of
drawn length 3-20 trained by teacher forcing, then beam search with 16-64 beams, drawn, over programs up to the
task's length, beams reordered by index_select each step). Same conventions as the earlier batches: nothing
downloaded, data drawn at random on the device (or, for the search service, from a few reused pinned host buffers),
`rng` the workload's random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)` so
that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: counts are fixed on the host (beam steps,
plans a query, blocks a bucket), masks multiplied or added in, no boolean-mask indexing; losses, accuracies, chosen
plans and hits are read back only at logging points (the service returns each request's top matches, as a service
must). gemini_cfg_similarity_serve uses a side stream (uploads waited on by event, the tensors record_stream'ed); the
others are single-stream. The tree convolution, the transformers and the structure2vec layers run under bf16
autocast; the teachers, the trace generation, the similarity scores and the losses are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch59.py's header says the same of its half): every workload of this half
was run whole on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with the helper's runner
(/tmp/b59/meta_run.py, not committed, a copy of /work/notes/meta_run.py: smoke_cpu.py's patching with "cuda" mapped
to "meta", readbacks answered with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking a math
path, streams, events and pinned memory no-ops; boolean-mask indexing, which the meta device cannot size, is
avoided), its op outputs counted there (events about 1.8x that count) and its peak live bytes tracked:
bao_treeconv_plan_train 279,035 op outputs, peak 0.73 GB; addr_delta_prefetch_train 314,265, 4.98 GB;
gemini_cfg_similarity_serve 274,017, 0.87 GB; robustfill_beam_synth 356,323, 3.69 GB (peaks in fp32 where
autocast would take bf16; the transformers' peaks mostly the attention matrices of the math path, far above what
flash attention holds on the GPU). record_new59.sh's header has them too, with the runs that led to
resizes. The CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


class _Attn(_nn.Module):
    """Pre-norm attention block: self-attention (causal or with an additive mask), optional cross-attention to a
    memory, GELU MLP."""

    def __init__(self, d, heads, hidden, cross=False):
        super().__init__()
        self.heads = heads
        self.n1, self.n3 = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.proj = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.cross = cross
        if cross:
            self.n2, self.q2, self.kv2, self.proj2 = _nn.LayerNorm(d), _nn.Linear(d, d), _nn.Linear(d, 2 * d), \
                _nn.Linear(d, d)
        self.fc1, self.fc2 = _nn.Linear(d, hidden), _nn.Linear(hidden, d)

    def _split(self, t, b, n):
        return t.view(b, n, self.heads, -1).transpose(1, 2)

    def forward(self, x, causal=False, mask=None, mem=None, mem_mask=None):
        b, n, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = _F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)
        x = x + self.proj(a.transpose(1, 2).reshape(b, n, d))
        if self.cross:
            m = mem.shape[1]
            q2 = self._split(self.q2(self.n2(x)), b, n)
            k2, v2 = self.kv2(mem).chunk(2, -1)
            a = _F.scaled_dot_product_attention(q2, self._split(k2, b, m), self._split(v2, b, m), attn_mask=mem_mask)
            x = x + self.proj2(a.transpose(1, 2).reshape(b, n, d))
        return x + self.fc2(_F.gelu(self.fc1(self.n3(x))))


# ---------------------------------------------------------------- Bao-style learned query optimizer (tree convolution)


def _plans(b, nodes, nfeat, dev="cuda"):
    """b query plans padded to `nodes` nodes (index 0 of each the null node): operator one-hot (scans, joins, sorts,
    aggregates), estimated cardinality and cost (log), and each node's left and right child (0 = none), laid out as
    complete binary trees cut at a per-plan node count drawn on the device (children past the count point at 0)."""
    ops = _F.one_hot(torch.randint(0, nfeat - 2, (b, nodes), device=dev), nfeat - 2).float()
    card = torch.randn(b, nodes, 2, device=dev) * 2 + 8
    cnt = torch.randint(3, nodes + 1, (b, 1), device=dev)
    idx = torch.arange(1, nodes + 1, device=dev)
    live = (idx[None] <= cnt).float()
    x = torch.cat([ops, card / 10], -1) * live[..., None]
    x = torch.cat([torch.zeros(b, 1, nfeat, device=dev), x], 1)  # the null node at 0
    left, right = 2 * idx, 2 * idx + 1
    lch = torch.where(left[None] <= cnt, left[None], torch.zeros_like(left[None])).expand(b, -1)
    rch = torch.where(right[None] <= cnt, right[None], torch.zeros_like(right[None])).expand(b, -1)
    return x, lch.contiguous(), rch.contiguous(), live


class _TreeConv(_nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.w = _nn.Linear(3 * cin, cout)

    def forward(self, x, lch, rch):
        # x (b, n+1, c) with the null node at 0; each node's (self, left, right) triangle filter
        c = x.shape[-1]
        lx = x.gather(1, lch[..., None].expand(-1, -1, c))
        rx = x.gather(1, rch[..., None].expand(-1, -1, c))
        out = self.w(torch.cat([x[:, 1:], lx, rx], -1))
        return torch.cat([torch.zeros_like(out[:, :1]), out], 1)


class _BaoNet(_nn.Module):
    def __init__(self, nfeat, widths):
        super().__init__()
        ws = [nfeat] + widths
        self.convs = _nn.ModuleList(_TreeConv(a, b) for a, b in zip(ws[:-1], ws[1:]))
        self.norms = _nn.ModuleList(_nn.LayerNorm(b) for b in widths)
        self.head = _nn.Sequential(_nn.Linear(widths[-1], 32), _nn.LeakyReLU(), _nn.Linear(32, 1))

    def forward(self, x, lch, rch, live):
        h = x
        for conv, norm in zip(self.convs, self.norms):
            h = _F.leaky_relu(norm(conv(h, lch, rch)))
        pooled = (h[:, 1:] + (live[..., None] - 1) * 1e4).amax(1)  # dynamic pooling over the live nodes
        return self.head(pooled)[:, 0]


@_workload("Bao-style learned query optimizer written by hand (random init): query plans as binary trees of 3-63 operator nodes (drawn per plan, padded per batch to 15, 31 or 63 nodes with a null node at index 0, operator one-hot and log cardinality and cost features); a tree-convolution value network (3 layers 256-128-64 gathering each node's children, LayerNorm, dynamic max pooling over live nodes, MLP head) predicting log latency; 12 rounds: plan selection for 128 queries over 5-49 hint-set plans each (drawn, no grad, argmin read back), latencies from a fixed random teacher tree network, then the value network retrained from scratch on 40-64 batches (drawn) of 256-1,024 plans of the round's window, MSE on log latency, bf16 autocast, Adam; the round's regret against the teacher's best plan read back")
def bao_treeconv_plan_train(rng):
    nfeat = 14
    widths = _smoke([256, 128, 64], [16, 8, 4])
    teacher = _BaoNet(nfeat, _smoke([128, 64, 32], [8, 4, 4])).cuda().eval().requires_grad_(False)
    pads = _smoke([15, 31, 63], [7, 15])
    model = None
    for rnd in range(_smoke(12, 2)):
        if model is not None:
            model.eval()
            regrets = []
            with torch.no_grad():
                for _q in range(_smoke(128, 3)):
                    arms, nodes = rng.randint(5, 49), rng.choice(pads)
                    plan = _plans(arms, nodes, nfeat)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        pred = model(*plan).float()
                    true = teacher(*plan)
                    pick = pred.argmin()[None]
                    regrets.append(true.index_select(0, pick)[0] - true.min())
                    del plan
            torch.stack(regrets).mean().tolist()
        model = _BaoNet(nfeat, widths).cuda()
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        for step in range(rng.randint(_smoke(40, 2), _smoke(64, 3))):
            model.train()
            b, nodes = rng.choice(_smoke([256, 512, 1024], [8, 16])), rng.choice(pads)
            with torch.no_grad():
                plan = _plans(b, nodes, nfeat)
                y = teacher(*plan) + 0.05 * torch.randn(b, device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                pred = model(*plan)
            loss = _F.mse_loss(pred.float(), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            del plan, y, pred
            if step % 10 == 0:
                float(loss)


# ---------------------------------------------------------------- learned prefetcher over memory-access traces


def _traces(b, t, nd, napp_pat, dev="cuda"):
    """b access traces of t+1 accesses, each from an application of a drawn mix of patterns: strided streams
    (constant delta), loops (a repeating delta sequence of period 4-16) and pointer chasing (random deltas); page
    numbers by a cumulative sum. Returns page buckets (b, t), delta classes (b, t) and next-delta targets (b, t)."""
    stride = torch.randint(-8, 9, (b, 1), device=dev)
    period = torch.randint(4, 17, (b, 1), device=dev)
    pattern = torch.randint(-64, 65, (b, 16), device=dev)
    pos = torch.arange(t + 1, device=dev)[None]
    loop = pattern.gather(1, (pos % period))
    rnd = torch.randint(-2048, 2049, (b, t + 1), device=dev)
    mix = torch.rand(b, 3, device=dev).softmax(-1) * napp_pat
    u = torch.rand(b, t + 1, device=dev)
    delta = torch.where(u < mix[:, :1], stride.expand(-1, t + 1), torch.where(u < mix[:, :1] + mix[:, 1:2], loop, rnd))
    base = torch.randint(0, 1 << 30, (b, 1), device=dev)
    page = base + torch.cumsum(delta, 1)
    cls = (delta + nd // 2).clamp(0, nd - 1)
    return (page % 8191)[:, :-1], cls[:, :-1], cls[:, 1:]


class _Prefetcher(_nn.Module):
    def __init__(self, nd, d, depth, heads, maxlen):
        super().__init__()
        self.page = _nn.Embedding(8191, d)
        self.delta = _nn.Embedding(nd, d)
        self.pos = _nn.Parameter(torch.randn(maxlen, d) * 0.02)
        self.blocks = _nn.ModuleList(_Attn(d, heads, 4 * d) for _ in range(depth))
        self.norm = _nn.LayerNorm(d)
        self.out = _nn.Linear(d, nd)

    def forward(self, page, delta):
        t = page.shape[1]
        h = self.page(page) + self.delta(delta) + self.pos[:t]
        for blk in self.blocks:
            h = blk(h, causal=True)
        return self.out(self.norm(h))


@_workload("learned hardware prefetcher over memory-access traces written by hand (random init): traces of drawn applications made on the device (mixtures of strided streams, loops of period 4-16 and pointer chasing, page numbers by cumulative sum), windows of 64-512 accesses (drawn per batch) under a budget of 24,576 accesses a batch; a causal transformer (4 layers, width 256, 8 heads) over hashed page and address-delta tokens predicting the next delta among 4,097 classes; bf16 autocast, AdamW with warm-up and clipping, 620 steps; every 155 a prefetch simulation over 16 traces of 4,096 accesses in sliding windows of 512 (no grad): top-4 predicted deltas issued as prefetches, accuracy and coverage against the next 8 accesses read back")
def addr_delta_prefetch_train(rng):
    nd, d = _smoke(4097, 65), _smoke(256, 32)
    lens = _smoke([64, 128, 256, 512], [8, 16])
    model = _Prefetcher(nd, d, _smoke(4, 2), _smoke(8, 2), max(lens)).cuda()
    steps, warm = _smoke(620, 3), _smoke(30, 1)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warm))
    budget = _smoke(24576, 64)
    for step in range(steps):
        model.train()
        t = rng.choice(lens)
        b = max(4, budget // t)
        with torch.no_grad():
            page, cls, tgt = _traces(b, t, nd, rng.uniform(0.6, 1.0))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(page, cls)
        loss = _F.cross_entropy(logits.float().view(-1, nd), tgt.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        del page, cls, tgt, logits
        if step % 50 == 0:
            float(loss)
        if (step + 1) % _smoke(155, 3) == 0:
            model.eval()
            w, total = max(lens), _smoke(4096, 32)
            stats = []
            with torch.no_grad():
                page, cls, tgt = _traces(_smoke(16, 2), total, nd, 0.8)
                for s0 in range(0, total - w - 8, w // 2):
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        lg = model(page[:, s0:s0 + w], cls[:, s0:s0 + w]).float()
                    top4 = lg[:, -w // 2:].topk(4, -1).indices  # (b, w/2, 4)
                    fut = torch.stack([tgt[:, s0 + w // 2 + j: s0 + w + j] for j in range(8)], -1)  # (b, w/2, 8)
                    hit = (top4[..., :, None] == fut[..., None, :]).float()
                    stats.append(torch.stack([hit.amax(-1).mean(), hit.amax(-2).mean()]))
                    del lg, top4, fut, hit
            torch.stack(stats).mean(0).tolist()


# ---------------------------------------------------------------- binary-code similarity (Gemini structure2vec)


class _S2V(_nn.Module):
    """Gemini's structure2vec: mu_v = tanh(W1 x_v + sigma(sum of neighbours' mu)), T iterations, a graph embedding
    W2 sum_v mu_v."""

    def __init__(self, din, d, t, depth=2):
        super().__init__()
        self.w1 = _nn.Linear(din, d)
        self.sigma = _nn.ModuleList(_nn.Linear(d, d) for _ in range(depth))
        self.w2 = _nn.Linear(d, d)
        self.t = t

    def forward(self, x, src, dst, gid, ngraph):
        base = self.w1(x)
        mu = torch.zeros_like(base)
        for _ in range(self.t):
            agg = torch.zeros_like(mu).index_add_(0, dst, mu[src])
            for i, lin in enumerate(self.sigma):
                agg = lin(agg)
                if i < len(self.sigma) - 1:
                    agg = _F.relu(agg)
            mu = torch.tanh(base + agg)
        g = torch.zeros(ngraph, mu.shape[1], device=mu.device, dtype=mu.dtype).index_add_(0, gid, mu)
        return self.w2(g)


def _cfgs(nf, nb, din, feats=None, edges=None, dev="cuda"):
    """nf functions of nb basic blocks each (one bucket): 7 attributed-CFG block features (string and numeric
    constants, transfer, call and instruction counts, arithmetic, offspring) plus padding to din, and edges: the
    fall-through chain and 1 branch target per block. feats / edges: raw draws to use instead of fresh ones (the
    service's uploaded buffers)."""
    n = nf * nb
    if feats is None:
        feats = torch.rand(n, din, device=dev)
        edges = torch.rand(n, device=dev)
    x = torch.log1p(feats * 20)
    i = torch.arange(n, device=dev)
    off = (i // nb) * nb
    chain_dst = off + (i - off + 1) % nb
    br_dst = off + (edges * nb).long().clamp(0, nb - 1)
    src = torch.cat([i, i])
    dst = torch.cat([chain_dst, br_dst])
    return x, torch.cat([src, dst]), torch.cat([dst, src]), i // nb


def _variant(x, src, dst, keep=0.9):
    """The same function compiled differently: block features perturbed, a fraction of the edges dropped by zeroing
    their messages (the edge list kept, the dropped edges pointed at a self loop)."""
    x2 = x * (1 + 0.15 * torch.randn_like(x)) + 0.05 * torch.randn_like(x)
    k = (torch.rand(src.shape[0], device=x.device) < keep).long()
    return x2, src, dst * k + src * (1 - k)


@_workload("binary-code similarity search with a Gemini-style structure2vec network written by hand (random init): attributed control-flow graphs of 5-200 basic blocks (drawn per bucket, fall-through and branch edges, 7 block features padded to 16) made on the device; siamese training on batches of 64-256 function pairs (drawn) of the same function under perturbed compilation (features jittered, 10% of the edges dropped) or of different functions, cosine similarity against +-1, 5 message-passing iterations (width 64, 2-layer sigma), bf16 autocast, Adam, 420 steps; then a database of 40,960 function embeddings built in batches of 1,024; then 1,800 search requests of 1-64 query functions of a bucket (drawn) whose block features and branch draws are uploaded from reused pinned host buffers on a side stream one request ahead (waited on by event, record_stream'ed), embedded and matched by cosine against the database, top-50 hits read back")
def gemini_cfg_similarity_serve(rng):
    din, d = 16, _smoke(64, 16)
    model = _S2V(din, d, _smoke(5, 2)).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    buckets = _smoke([5, 10, 20, 40, 80, 120, 200], [4, 6, 9])
    for step in range(_smoke(420, 3)):
        model.train()
        nb = rng.choice(buckets)
        npair = rng.choice(_smoke([64, 128, 256], [4, 8]))
        with torch.no_grad():
            x, src, dst, gid = _cfgs(npair, nb, din)
            xo, _s, _d, _g = _cfgs(npair, nb, din)
            xa, sa, da = _variant(x, src, dst)
            same = (torch.rand(npair, device="cuda") < 0.5).float()
            xb = xa * same.repeat_interleave(nb)[:, None] + xo * (1 - same.repeat_interleave(nb)[:, None])
        with torch.autocast("cuda", dtype=torch.bfloat16):
            ea = model(x, src, dst, gid, npair)
            eb = model(xb, sa, da, gid, npair)
        sim = _F.cosine_similarity(ea.float(), eb.float())
        loss = _F.mse_loss(sim, same * 2 - 1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del x, xo, xa, xb, ea, eb, sim
        if step % 40 == 0:
            float(loss)
    model.eval().requires_grad_(False)
    ndb, bs = _smoke(40960, 64), _smoke(1024, 16)
    db = []
    with torch.no_grad():
        for c0 in range(0, ndb, bs):
            nb = rng.choice(buckets)
            x, src, dst, gid = _cfgs(bs, nb, din)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                db.append(_F.normalize(model(x, src, dst, gid, bs).float(), dim=-1))
            del x, src, dst, gid
    db = torch.cat(db)
    qmax, bmax = _smoke(64, 4), max(buckets)
    host = [(torch.rand(qmax * bmax * din).pin_memory(), torch.rand(qmax * bmax).pin_memory()) for _ in range(2)]
    side = torch.cuda.Stream()
    done = [None, None]
    nreq = _smoke(1800, 3)

    def fetch(i):
        nq, nb = rng.randint(1, qmax), rng.choice(buckets)
        s = i % 2
        if done[s] is not None:
            done[s].synchronize()
        with torch.cuda.stream(side):
            f = host[s][0][:nq * nb * din].view(nq * nb, din).to("cuda", non_blocking=True)
            e = host[s][1][:nq * nb].to("cuda", non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        done[s] = ev
        return nq, nb, f, e, ev

    nxt = fetch(0)
    for req in range(nreq):
        nq, nb, f, e, ev = nxt
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        f.record_stream(cur)
        e.record_stream(cur)
        if req + 1 < nreq:
            nxt = fetch(req + 1)
        with torch.no_grad():
            x, src, dst, gid = _cfgs(nq, nb, din, f, e)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                q = _F.normalize(model(x, src, dst, gid, nq).float(), dim=-1)
            scores = q @ db.t()
            top = scores.topk(min(50, ndb), -1)
            torch.stack([top.values, top.indices.float()], -1).cpu()
        del f, e, x, src, dst, gid, q, scores, top


# ---------------------------------------------------------------- RobustFill-style program synthesis with beam search


class _Synth(_nn.Module):
    def __init__(self, nchar, nprog, d, depth, heads, maxio, maxprog):
        super().__init__()
        self.char = _nn.Embedding(nchar, d)
        self.io_pos = _nn.Parameter(torch.randn(2, maxio, d) * 0.02)  # input and output string positions
        self.ex = _nn.Parameter(torch.randn(8, d) * 0.02)  # example id
        self.enc = _nn.ModuleList(_Attn(d, heads, 4 * d) for _ in range(depth))
        self.tok = _nn.Embedding(nprog, d)
        self.prog_pos = _nn.Parameter(torch.randn(maxprog + 1, d) * 0.02)
        self.dec = _nn.ModuleList(_Attn(d, heads, 4 * d, cross=True) for _ in range(depth))
        self.norm = _nn.LayerNorm(d)
        self.out = _nn.Linear(d, nprog)

    def encode(self, inp, outp):
        # inp, outp (b, e, l) character ids: every example's input and output string encoded together
        b, e, l = inp.shape
        h = torch.cat([self.char(inp) + self.io_pos[0, :l], self.char(outp) + self.io_pos[1, :l]], 2)
        h = (h + self.ex[:e, None]).view(b * e, 2 * l, -1)
        for blk in self.enc:
            h = blk(h)
        return h.view(b, e * 2 * l, -1)

    def decode(self, prog, mem):
        t = prog.shape[1]
        h = self.tok(prog) + self.prog_pos[:t]
        for blk in self.dec:
            h = blk(h, causal=True, mem=mem)
        return self.out(self.norm(h))


def _io_task(b, e, l, plen, nchar, nprog, dev="cuda"):
    """b synthesis tasks: programs of plen DSL tokens (ops of a string-transformation DSL: substrings, positions,
    constants, case changes, concatenation) and e input-output examples of l characters each, the outputs a fixed
    function of the input and the program (a cyclic shift and substitution keyed by the program's tokens)."""
    prog = torch.randint(2, nprog, (b, plen), device=dev)
    inp = torch.randint(1, nchar, (b, e, l), device=dev)
    key = prog.sum(1) % l
    shift = (torch.arange(l, device=dev)[None] + key[:, None]) % l
    out = inp.gather(2, shift[:, None].expand(-1, e, -1))
    out = (out + prog[:, :1, None]) % (nchar - 1) + 1
    return inp, out, prog


@_workload("RobustFill-style neural program synthesis written by hand (random init): string-transformation tasks with 4 input-output examples of 16-48 characters (drawn) and DSL programs of 3-20 tokens (drawn, 96 tokens); a transformer encoder (3 layers, width 256, 8 heads) over every example's input and output string, a decoder (3 layers, causal self-attention and cross-attention to all examples' encodings) trained by teacher forcing on batches of 32-128 tasks (drawn), cross-entropy, bf16 autocast, AdamW with clipping, 240 steps; then synthesis of 48 held-out tasks by beam search (16-64 beams, drawn; the decoder rerun over each beam's whole prefix every step, up to the task's program length 8-20; log-probabilities accumulated, topk over beams x tokens, beams reordered by index_select, the encoder memory expanded to the beams), the best programs and scores read back per task")
def robustfill_beam_synth(rng):
    nchar, nprog, d = 64, 96, _smoke(256, 32)
    maxio, maxprog = _smoke(48, 8), _smoke(20, 6)
    model = _Synth(nchar, nprog, d, _smoke(3, 2), _smoke(8, 2), maxio, maxprog).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    ne = 4
    for step in range(_smoke(240, 3)):
        model.train()
        b = rng.choice(_smoke([32, 64, 128], [2, 4]))
        l = rng.randint(_smoke(16, 4), maxio)
        plen = rng.randint(3, maxprog)
        inp, out, prog = _io_task(b, ne, l, plen, nchar, nprog)
        bos = torch.ones(b, 1, dtype=torch.long, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            mem = model.encode(inp, out)
            logits = model.decode(torch.cat([bos, prog[:, :-1]], 1), mem)
        loss = _F.cross_entropy(logits.float().reshape(-1, nprog), prog.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        del inp, out, prog, mem, logits
        if step % 30 == 0:
            float(loss)
    model.eval().requires_grad_(False)
    for task in range(_smoke(48, 2)):
        beams = rng.choice(_smoke([16, 32, 64], [2, 3]))
        l = rng.randint(_smoke(16, 4), maxio)
        plen = rng.randint(_smoke(8, 3), maxprog)
        inp, out, _prog = _io_task(1, ne, l, plen, nchar, nprog)
        with torch.no_grad():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                mem = model.encode(inp, out)
            memb = mem.expand(beams, -1, -1).contiguous()
            seqs = torch.ones(beams, 1, dtype=torch.long, device="cuda")
            score = torch.full((beams,), -1e9, device="cuda")
            score[0] = 0.0
            for t in range(plen):
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    lg = model.decode(seqs, memb)[:, -1].float()
                cand = (score[:, None] + torch.log_softmax(lg, -1)).view(-1)
                score, flat = cand.topk(beams)
                src_beam = flat // nprog
                seqs = torch.cat([seqs.index_select(0, src_beam), (flat % nprog)[:, None]], 1)
                del lg, cand
            torch.cat([score[:, None], seqs.float()], 1)[:4].cpu()
        del mem, memb, seqs, score

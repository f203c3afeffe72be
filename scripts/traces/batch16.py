"""The sixteenth batch of held-out workloads for record.py, kept in a file of their own (record.py is long
enough). Same conventions: models built from configs with random weights, nothing downloaded, `rng` the
workload's random.Random, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny.

record.py calls `register(<its own module object>)` once, just before main(): every workload below is then
added to record.py's WORKLOADS with its family, whether record.py runs as __main__ (the recording) or is
imported as `record` (scripts/traces/smoke_cpu.py, scripts/gpu/run_workload.py). This file never imports
record.py (that would load it a second time, with a second WORKLOADS); it reaches record.py's helpers
through the module object it was given. The plumbing (the registration, `_smoke`, `_loguniform`) is
batch_common.py's, shared with the other batch files.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this batch's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


def _rotary(dh, positions, dtype):
    """Llama's rotary tables (rotate-half form): cos and sin of shape (positions, dh)."""
    inv = 1.0 / 10000 ** (torch.arange(0, dh, 2, device="cuda").float() / dh)
    angles = torch.arange(positions, device="cuda").float()[:, None] * inv
    return tuple(torch.cat([a, a], -1).to(dtype) for a in (angles.cos(), angles.sin()))


# ---------------------------------------------------------------- multi-adapter LoRA serving


@_workload("multi-adapter LoRA serving, S-LoRA/LoRAX-style, written by hand (two CUDA streams): the weights of an HF LlamaForCausalLM (hidden 2048, 16 layers, GQA 16/4 heads of 128, MLP 5632, vocab 32000: 0.85B, random init) in bf16 under inference_mode, run by a hand-written forward, and 64 LoRA adapters (q_proj and v_proj, rank 8, 16, 32 or 64, alpha 16) kept in pinned host memory; requests (prompt 16-2048 tokens log-uniform, 8-256 new tokens) name an adapter (Zipf-like popularity); a GPU adapter cache of 8 slots: the adapters of the first 8 waiting requests are loaded tensor by tensor (per layer A and B, as a state dict is) on a loader stream, the least recently used adapter no running request needs evicted, a request admitted once its adapter's event has completed (record_stream to the compute stream at first use); continuous batching up to 32 running and 4096 prompt tokens a step, prefill of the admitted prompts concatenated, then one decode step for all running requests sorted by adapter, the LoRA deltas added per adapter segment (x A B, SGMV-style); one KV buffer per request for all layers sized to prompt + new tokens, gathered into a padded batch per layer for decode attention; greedy tokens copied back; 400 steps")
def multi_lora_serve(rng):
    from transformers import LlamaConfig, LlamaForCausalLM

    d, layers = _smoke(2048, 128), _smoke(16, 2)
    heads, kv_heads = 16, 4
    dh = d // heads
    cfg = LlamaConfig(
        hidden_size=d, intermediate_size=_smoke(5632, 352), num_hidden_layers=layers, num_attention_heads=heads,
        num_key_value_heads=kv_heads, vocab_size=32000, max_position_embeddings=4096,
    )
    lm = LlamaForCausalLM(cfg).to("cuda", torch.bfloat16).eval()
    cos, sin = _rotary(dh, 4096, torch.bfloat16)
    sdpa = torch.nn.functional.scaled_dot_product_attention
    n_adapters, slots, max_running = _smoke(64, 6), _smoke(8, 3), _smoke(32, 4)
    ranks = [rng.choice((8, 16, 32, 64)) for _ in range(n_adapters)]
    # The adapters' weights in pinned host memory: every adapter's per-layer tensors are views of one
    # pinned pool of random values (the values do not matter; their sizes and copies do).
    shapes = lambda r: ((d, r), (r, d), (d, r), (r, kv_heads * dh))  # noqa: E731  A_q, B_q, A_v, B_v
    pool = (torch.randn(layers * 64 * (3 * d + kv_heads * dh)) * 0.02).to(torch.bfloat16).pin_memory()
    host = []
    for r in ranks:
        views, o = [], 0
        for _ in range(layers):
            for shape in shapes(r):
                views.append(pool[o: o + shape[0] * shape[1]].view(shape))
                o += shape[0] * shape[1]
        host.append(views)
    loader, main = torch.cuda.Stream(), torch.cuda.current_stream()
    cache = {}  # adapter -> [weights, ready event, used by the compute stream yet, last step used]

    class Request:
        def __init__(self):
            self.prompt = _loguniform(rng, 16, _smoke(2048, 64))
            self.left = rng.randint(8, _smoke(256, 12))
            self.adapter = min(n_adapters - 1, int(n_adapters * rng.random() ** 2.5))
            self.n = 0  # tokens in the KV buffer
            self.kv = None
            self.last = 0

    def weights(a, step):
        c = cache[a]
        if not c[2]:
            main.wait_event(c[1])
            for t in c[0]:
                t.record_stream(main)
            c[2] = True
        c[3] = step
        return c[0], 16.0 / ranks[a]

    def forward(x, positions, groups, attend):
        """Final hidden states of x (T, d), T new tokens at positions; groups: (weights, scale, lo, hi) of the
        token segments that share an adapter; attend(layer, q, k, v) returns the attention output (T, heads, dh)."""
        c, s = cos[positions][:, None], sin[positions][:, None]
        for i, layer in enumerate(lm.model.layers):
            a = layer.self_attn
            h = layer.input_layernorm(x)
            q, k, v = a.q_proj(h), a.k_proj(h), a.v_proj(h)
            for w, scale, lo, hi in groups:  # SGMV: x A B per adapter segment, added in place
                hs = h[lo:hi]
                q[lo:hi].addmm_(hs @ w[4 * i], w[4 * i + 1], alpha=scale)
                v[lo:hi].addmm_(hs @ w[4 * i + 2], w[4 * i + 3], alpha=scale)
            q = _b.rec._rope(q.view(-1, heads, dh), c, s)
            k = _b.rec._rope(k.view(-1, kv_heads, dh), c, s)
            x = x + a.o_proj(attend(i, q, k, v.view(-1, kv_heads, dh)).flatten(1))
            x = x + layer.mlp(layer.post_attention_layernorm(x))
        return lm.model.norm(x)

    waiting, running = [], []
    # About 900 tensors a step (counted on CPU at 16 layers): 400 steps make about 0.8M events.
    with torch.inference_mode():
        for step in range(_smoke(400, 10)):
            for _ in range(rng.choice((0, 0, 0, 0, 0, 0, 0, 1, 1, 2))):
                waiting.append(Request())
            # Prefetch the adapters of the first waiting requests, evicting idle ones (least recently used).
            keep = {r.adapter for r in running}
            for r in waiting[:8]:
                if r.adapter not in cache:
                    if len(cache) >= slots:
                        idle = [a for a in cache if a not in keep]
                        if not idle:
                            break
                        del cache[min(idle, key=lambda a: cache[a][3])]
                    with torch.cuda.stream(loader):
                        w = [t.to("cuda", non_blocking=True) for t in host[r.adapter]]
                        cache[r.adapter] = [w, loader.record_event(), False, step]
                        del w
                keep.add(r.adapter)
            admitted, budget = [], 4096
            while (waiting and len(running) + len(admitted) < max_running and waiting[0].prompt <= budget
                   and waiting[0].adapter in cache and cache[waiting[0].adapter][1].query()):
                r = waiting.pop(0)
                budget -= r.prompt
                r.kv = torch.empty(layers, 2, kv_heads, r.prompt + r.left, dh, device="cuda", dtype=torch.bfloat16)
                admitted.append(r)
            if admitted:
                lens = [r.prompt for r in admitted]
                bounds = [0]
                for n in lens:
                    bounds.append(bounds[-1] + n)
                groups = [(*weights(r.adapter, step), lo, hi) for r, lo, hi in zip(admitted, bounds, bounds[1:])]
                ids = torch.randint(0, cfg.vocab_size, (bounds[-1],), dtype=torch.int32).pin_memory()
                ids = ids.to("cuda", non_blocking=True)
                positions = torch.cat([torch.arange(n) for n in lens]).pin_memory().to("cuda", non_blocking=True)

                def prefill(i, q, k, v):
                    outs = []
                    for r, lo, hi in zip(admitted, bounds, bounds[1:]):
                        r.kv[i, 0, :, : hi - lo], r.kv[i, 1, :, : hi - lo] = k[lo:hi].transpose(0, 1), v[lo:hi].transpose(0, 1)
                        t = lambda z: z.transpose(0, 1)[None]  # noqa: E731
                        outs.append(sdpa(t(q[lo:hi]), t(k[lo:hi]), t(v[lo:hi]), is_causal=True, enable_gqa=True)[0].transpose(0, 1))
                    return torch.cat(outs)

                h = forward(lm.model.embed_tokens(ids), positions, groups, prefill)
                last = torch.tensor(bounds[1:]).to("cuda", non_blocking=True) - 1
                for r, t in zip(admitted, lm.lm_head(h[last]).argmax(-1).tolist()):
                    r.n, r.last, r.left = r.prompt, t, r.left - 1
                running += [r for r in admitted if r.left > 0]
                del ids, positions, h, last, groups, prefill
            if running:
                running.sort(key=lambda r: r.adapter)
                groups, lo = [], 0
                for j, r in enumerate(running):
                    if j + 1 == len(running) or running[j + 1].adapter != r.adapter:
                        groups.append((*weights(r.adapter, step), lo, j + 1))
                        lo = j + 1
                b, width = len(running), max(r.n for r in running) + 1
                ids = torch.tensor([r.last for r in running], dtype=torch.int32).to("cuda", non_blocking=True)
                pos = torch.tensor([r.n for r in running]).to("cuda", non_blocking=True)
                visible = (torch.arange(width, device="cuda")[None] <= pos[:, None])[:, None, None]

                def decode(i, q, k, v):
                    kk = k.new_zeros(b, kv_heads, width, dh)
                    vv = v.new_zeros(b, kv_heads, width, dh)
                    for j, r in enumerate(running):
                        r.kv[i, 0, :, r.n], r.kv[i, 1, :, r.n] = k[j], v[j]
                        kk[j, :, : r.n + 1], vv[j, :, : r.n + 1] = r.kv[i, 0, :, : r.n + 1], r.kv[i, 1, :, : r.n + 1]
                    return sdpa(q[:, :, None], kk, vv, attn_mask=visible, enable_gqa=True)[:, :, 0]

                h = forward(lm.model.embed_tokens(ids), pos, groups, decode)
                for r, t in zip(running, lm.lm_head(h).argmax(-1).tolist()):
                    r.n, r.last, r.left = r.n + 1, t, r.left - 1
                for r in running:
                    if r.left <= 0:
                        r.kv = None  # the finished request's KV buffer freed
                running = [r for r in running if r.left > 0]
                del ids, pos, visible, h, groups, decode
    torch.cuda.synchronize()


# ---------------------------------------------------------------- recommendation ranking serving


class _DinDcn(torch.nn.Module):
    """A ranking model: DIN's target attention (an MLP 256-80-40-1 with PReLU over [history, candidate,
    difference, product] of every candidate and history item, the weights unnormalized and masked) pooling
    the user's history per candidate, then DCN-v2 (three full-rank cross layers) and a deep MLP 1024-512-256
    over the concatenated candidate, user, interest and dense features, one logit per candidate."""

    def __init__(self, dim, user_rows, user_cats, item_cats, dense=13, cross=3, mlp=(1024, 512, 256)):
        super().__init__()
        nn = torch.nn
        self.user = nn.Embedding(user_rows, dim)
        self.user_cats = nn.ModuleList(nn.Embedding(n, dim) for n in user_cats)
        self.item_cats = nn.ModuleList(nn.Embedding(n, dim) for n in item_cats)
        self.dense = nn.Linear(dense, dim)
        self.att = nn.Sequential(nn.Linear(4 * dim, 80), nn.PReLU(), nn.Linear(80, 40), nn.PReLU(), nn.Linear(40, 1))
        width = dim * (4 + len(user_cats) + len(item_cats))
        self.cross = nn.ModuleList(nn.Linear(width, width) for _ in range(cross))
        deep, w = [], width
        for m in mlp:
            deep += [nn.Linear(w, m), nn.ReLU()]
            w = m
        self.deep = nn.Sequential(*deep)
        self.out = nn.Linear(width + w, 1)

    def lookup(self, user, user_cats, item_cats):
        """The device-side tables' rows: user (R, dim), user features (R, n, dim), item features (C, n, dim)."""
        return (self.user(user), torch.stack([e(user_cats[:, i]) for i, e in enumerate(self.user_cats)], 1),
                torch.stack([e(item_cats[:, i]) for i, e in enumerate(self.item_cats)], 1))

    def forward(self, item, hist, hist_mask, seg, user, ufeat, ifeat, dense, pairs):
        """item (C, dim) candidates' id embeddings, hist (R, H, dim) histories padded, hist_mask (R, H), seg (C,)
        each candidate's request; DIN run over chunks of at most `pairs` candidate-history pairs."""
        c, h = item.shape[0], hist.shape[1]
        step = max(1, pairs // h)
        interest = []
        for lo in range(0, c, step):
            q, s = item[lo: lo + step], seg[lo: lo + step]
            keys = hist[s]  # (c, H, dim)
            qq = q[:, None].expand_as(keys)
            w = self.att(torch.cat([keys, qq, keys - qq, keys * qq], -1)).squeeze(-1) * hist_mask[s]
            interest.append((w[..., None] * keys).sum(1))
            del keys, qq, w
        x0 = torch.cat([item, ifeat.flatten(1), user[seg], ufeat[seg].flatten(1), torch.cat(interest), self.dense(dense)], 1)
        x = x0
        for layer in self.cross:
            x = x0 * layer(x) + x
        return self.out(torch.cat([x, self.deep(x0)], 1)).squeeze(-1)


@_workload("recommendation ranking serving with variable candidate sets (two CUDA streams): a DIN + DCN-v2 ranking model (random weights) in fp16 under inference_mode, 64-wide embeddings: a 10M-item id table kept in host memory (rows gathered on the host into a pinned staging ring and copied, UVM/parameter-server style), a 5M-user table and 8 user and 6 item feature tables of 100-1M rows on the device, 13 dense features; DIN target attention of every candidate over the user's history of 10-1000 items (log-uniform, padded to the batch's longest, chunked at 512k candidate-history pairs), DCN-v2 (3 cross layers of 1088) and a 1024-512-256 MLP; 4000 batches of 1-8 queued requests (log-uniform), each request 50-2000 candidates (log-uniform); the next batch's ids, dense features and host-gathered item rows copied and its device tables looked up on a side stream while the current batch is ranked (record_stream to the compute stream); scores sigmoid, per request top-100 of its candidates (padded to the longest set), indices and scores copied back to pinned memory, finished batches polled by event query")
def recsys_rank_serve(rng):
    dim = 64
    items, users = _smoke(10_000_000, 20_000), _smoke(5_000_000, 10_000)
    user_cats = [_smoke(n, 200) for n in (100, 1000, 1000, 10_000, 50_000, 100_000, 300_000, 1_000_000)]
    item_cats = [_smoke(n, 200) for n in (100, 1000, 10_000, 100_000, 500_000, 1_000_000)]
    model = _DinDcn(dim, users, user_cats, item_cats).to("cuda", torch.float16).eval()
    # The host-resident item table (a random block repeated: the values do not matter).
    block = torch.randn(65536 if items > 65536 else items, dim).half()
    table = block.repeat(-(-items // block.shape[0]), 1)[:items]
    max_c, max_h, max_r = _smoke(2000, 64), _smoke(1000, 48), 8
    rows = max_r * (max_c + max_h)
    staging = [torch.empty(rows, dim, dtype=torch.float16).pin_memory() for _ in range(2)]
    staged = [None, None]  # the event after the last copy out of each staging buffer
    side, main = torch.cuda.Stream(), torch.cuda.current_stream()
    pending = []

    def prepare(k):
        """The next batch: its host tensors built, its item rows gathered into staging buffer k, everything
        copied and the device tables looked up on the side stream."""
        reqs = _loguniform(rng, 1, max_r)
        cands = [_loguniform(rng, 50, max_c) for _ in range(reqs)]
        hists = [_loguniform(rng, 10, max_h) for _ in range(reqs)]
        c, hmax = sum(cands), max(hists)
        ids = torch.randint(0, items, (c + sum(hists),))
        if staged[k] is not None:
            staged[k].synchronize()  # its previous copy has left the buffer
        host_rows = torch.index_select(table, 0, ids, out=staging[k][: ids.shape[0]])
        seg = torch.repeat_interleave(torch.arange(reqs), torch.tensor(cands)).pin_memory()
        hist_mask = (torch.arange(hmax)[None] < torch.tensor(hists)[:, None]).half().pin_memory()
        user = torch.randint(0, users, (reqs,)).pin_memory()
        ucat = torch.stack([torch.randint(0, n, (reqs,)) for n in user_cats], 1).pin_memory()
        icat = torch.stack([torch.randint(0, n, (c,)) for n in item_cats], 1).pin_memory()
        dense = torch.randn(c, 13).half().pin_memory()
        with torch.cuda.stream(side):
            side.wait_stream(main)
            emb = host_rows.to("cuda", non_blocking=True)
            staged[k] = side.record_event()
            item, flat_hist = emb[:c], emb[c:]
            mask = hist_mask.to("cuda", non_blocking=True)
            hist = emb.new_zeros(reqs, hmax, dim)
            hist[mask.bool()] = flat_hist
            dev = [t.to("cuda", non_blocking=True) for t in (seg, user, ucat, icat, dense)]
            u, uf, itf = model.lookup(dev[1], dev[2], dev[3])
            batch = dict(item=item, hist=hist, hist_mask=mask, seg=dev[0], user=u, ufeat=uf, ifeat=itf, dense=dev[4])
            ready = side.record_event()
            del emb, flat_hist, dev
        return batch, cands, ready

    # About 100 tensors a batch (counted on CPU at the real candidate and history sizes): 4000 batches make about
    # 0.8M events.
    batches = _smoke(4000, 5)
    with torch.inference_mode():
        nxt = prepare(0)
        for i in range(batches):
            batch, cands, ready = nxt
            main.wait_event(ready)
            for t in batch.values():
                t.record_stream(main)
            if i + 1 < batches:
                nxt = prepare((i + 1) % 2)
            while pending and pending[0][0].query():
                pending.pop(0)
            scores = torch.sigmoid(model(**batch, pairs=_smoke(512 * 1024, 4096)).float())
            reqs, cmax = len(cands), max(cands)
            starts = torch.tensor([0] + cands[:-1]).cumsum(0).to("cuda", non_blocking=True)
            col = torch.arange(scores.shape[0], device="cuda") - starts[batch["seg"]]
            padded = scores.new_full((reqs, cmax), -1.0)
            padded[batch["seg"], col] = scores
            top = padded.topk(min(100, cmax), -1)
            out = (torch.empty(top.indices.shape, dtype=torch.int64).pin_memory(),
                   torch.empty(top.values.shape, dtype=torch.float32).pin_memory())
            out[0].copy_(top.indices, non_blocking=True)
            out[1].copy_(top.values, non_blocking=True)
            pending.append((main.record_event(), out))
            del batch, scores, starts, col, padded, top
    torch.cuda.synchronize()


# ---------------------------------------------------------------- RWKV-style recurrent LM serving


class _Rwkv5(torch.nn.Module):
    """An RWKV-5-style LM ("Eagle": pre-LayerNorm blocks of a time mix with token shift, receptance, key,
    value and a SiLU gate, a linear-attention recurrence with a matrix state per head of 64, per-channel
    decay and a bonus for the current token, GroupNorm over the heads; then a channel mix with token
    shift and a squared-ReLU FFN of 3.5x under a sigmoid receptance)."""

    def __init__(self, vocab, d, layers, head=64):
        super().__init__()
        nn = torch.nn
        self.head_size, self.heads = head, d // head
        self.emb, self.ln0 = nn.Embedding(vocab, d), nn.LayerNorm(d)
        ffn = int(3.5 * d) // 32 * 32
        self.blocks = nn.ModuleList()
        for _ in range(layers):
            b = nn.Module()
            b.ln1, b.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            b.mix, b.cmix = nn.Parameter(torch.rand(4, d)), nn.Parameter(torch.rand(2, d))
            b.r, b.k, b.v, b.g, b.o = (nn.Linear(d, d, bias=False) for _ in range(5))
            # w = exp(-exp(decay)) between 0.55 and 0.9975 per channel
            b.decay = nn.Parameter(torch.empty(self.heads, head).uniform_(-6, -0.5))
            b.bonus = nn.Parameter(torch.rand(self.heads, head) * 0.5)
            b.gn = nn.GroupNorm(self.heads, d, eps=64e-5)
            b.ck, b.cv, b.cr = nn.Linear(d, ffn, bias=False), nn.Linear(ffn, d, bias=False), nn.Linear(d, d, bias=False)
            self.blocks.append(b)
        self.ln_out, self.out = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)


def _wkv_chunked(r, k, v, logw, u, state, chunk):
    """RWKV-5's recurrence over a whole prompt in chunks (the parallel form within a chunk, the state carried
    between chunks): r, k, v (H, T, K) fp32, logw and u (H, K), state (H, K, K) updated in place; returns (H, T, K)."""
    heads, t_all, kd = r.shape
    outs, s = [], state
    full = t_all // chunk * chunk
    for lo, n in ((0, full), (full, t_all - full)):  # the full chunks, then what is left as one shorter chunk
        if n == 0:
            continue
        c = min(chunk, n)
        rr, kk, vv = (z[:, lo: lo + n].reshape(heads, n // c, c, kd) for z in (r, k, v))
        t = torch.arange(c, device=r.device, dtype=torch.float32)[:, None]
        lw = logw[:, None, None]
        rw = rr * torch.exp(lw * t)  # r_t w^t
        a = (rw @ (kk * torch.exp(-lw * (t + 1))).transpose(-1, -2)).tril(-1)  # r_t k_s w^(t-s-1), s < t
        o = a @ vv + (rr * u[:, None, None] * kk).sum(-1, keepdim=True) * vv
        upd = (kk * torch.exp(lw * (c - 1 - t))).transpose(-1, -2) @ vv  # each chunk's addition to the state
        wc = torch.exp(logw * c)[..., None]
        starts = []
        for j in range(n // c):
            starts.append(s)
            s = torch.addcmul(upd[:, j], s, wc)
        o = o + rw @ torch.stack(starts, 1)
        outs.append(o.reshape(heads, n, kd))
        del rr, kk, vv, rw, a, upd, starts
    state.copy_(s)
    return torch.cat(outs, 1) if len(outs) > 1 else outs[0]


def _rwkv_block(b, x, shift, state, logw, u, heads, kd, chunk):
    """One block over x: (T, d) tokens of one sequence (prompt; shift (2, d), state (H, K, K)) or (B, d) one
    token of each of B sequences (decode; shift (B, 2, d), state (B, H, K, K)); shift and state updated in place."""
    f = torch.nn.functional
    seq = shift.dim() == 2
    h = b.ln1(x)
    if seq:
        prev = torch.cat([shift[0][None], h[:-1]])
        shift[0] = h[-1]
    else:
        prev = shift[:, 0].clone()
        shift[:, 0] = h
    xx = prev - h
    xr, xk, xv, xg = (h + xx * b.mix[i] for i in range(4))
    r, k, v = (p(z).view(-1, heads, kd).float() for p, z in ((b.r, xr), (b.k, xk), (b.v, xv)))
    g = f.silu(b.g(xg))
    if seq:
        o = _wkv_chunked(r.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), logw, u, state, chunk).transpose(0, 1)
    else:
        kv = k[..., :, None] * v[..., None, :]  # (B, H, K, K)
        o = (r[..., None, :] @ (state + u[..., None] * kv)).squeeze(-2)
        state.mul_(torch.exp(logw)[..., None]).add_(kv)
    x = x + b.o(b.gn(o.reshape(x.shape[0], -1).to(x.dtype)) * g)
    h = b.ln2(x)
    if seq:
        prev = torch.cat([shift[1][None], h[:-1]])
        shift[1] = h[-1]
    else:
        prev = shift[:, 1].clone()
        shift[:, 1] = h
    xx = prev - h
    return x + torch.sigmoid(b.cr(h + xx * b.cmix[1])) * b.cv(torch.relu(b.ck(h + xx * b.cmix[0])) ** 2)


@_workload("recurrent-LM serving with constant-size state, RWKV-5-style (\"Eagle\" 0.4B-sized: 24 layers of width 1024, 16 heads of 64, FFN 3584, vocab 65536; random weights) in bf16 (the recurrence in fp32) under inference_mode, written by hand; 0-2 requests arrive a step (prompt 16-8192 tokens log-uniform, 16-256 new tokens), admitted up to 48 running and 8192 prompt tokens a step; each admitted prompt prefilled on its own in the chunked parallel form (chunks of 64, the state carried between chunks, the last partial chunk on its own) into the request's own state (24 x 16 x 64 x 64 fp32 plus the token-shift vectors, 6.4 MB whatever the length), then one decode step for all running requests: their states stacked into one batch tensor, updated in place layer by layer and copied back; top-p 0.85 sampling, tokens copied back; a finished request's state freed; 350 steps")
def rwkv_serve(rng):
    d, layers, vocab = _smoke(1024, 64), _smoke(24, 2), 65536
    model = _Rwkv5(vocab, d, layers).to("cuda", torch.bfloat16).eval()
    heads, kd = model.heads, model.head_size
    decay = [(-torch.exp(b.decay.float()), b.bonus.float()) for b in model.blocks]
    max_running, chunk = _smoke(48, 4), _smoke(64, 8)

    class Request:
        def __init__(self):
            self.prompt, self.left = _loguniform(rng, 16, _smoke(8192, 96)), rng.randint(16, _smoke(256, 24))
            self.state = self.shift = self.last = None

    def sample(logits):
        probs = torch.softmax(logits.float(), -1)
        p, idx = probs.sort(-1, descending=True)
        p = p.masked_fill(p.cumsum(-1) - p > 0.85, 0)
        return idx.gather(-1, torch.multinomial(p, 1)).squeeze(-1).tolist()

    waiting, running = [], []
    # About 1k tensors a decode step and 2.3k a prompt of the average length (counted on CPU at 24 layers):
    # about 1.4M events.
    with torch.inference_mode():
        for _ in range(_smoke(350, 12)):
            for _ in range(rng.choice((0, 0, 0, 0, 0, 0, 1, 1, 2))):
                waiting.append(Request())
            budget = 8192
            while waiting and len(running) < max_running and waiting[0].prompt <= budget:
                r = waiting.pop(0)
                budget -= r.prompt
                r.state = torch.zeros(layers, heads, kd, kd, device="cuda")
                r.shift = torch.zeros(layers, 2, d, device="cuda", dtype=torch.bfloat16)
                ids = torch.randint(0, vocab, (r.prompt,), dtype=torch.int32).pin_memory().to("cuda", non_blocking=True)
                x = model.ln0(model.emb(ids))
                for i, b in enumerate(model.blocks):
                    x = _rwkv_block(b, x, r.shift[i], r.state[i], *decay[i], heads, kd, chunk)
                r.last = sample(model.out(model.ln_out(x[-1:])))[0]
                running.append(r)
                del ids, x
            if not running:
                continue
            state = torch.stack([r.state for r in running])
            shift = torch.stack([r.shift for r in running])
            ids = torch.tensor([r.last for r in running], dtype=torch.int32).to("cuda", non_blocking=True)
            x = model.ln0(model.emb(ids))
            for i, b in enumerate(model.blocks):
                x = _rwkv_block(b, x, shift[:, i], state[:, i], *decay[i], heads, kd, chunk)
            for j, (r, t) in enumerate(zip(running, sample(model.out(model.ln_out(x))))):
                r.state.copy_(state[j])
                r.shift.copy_(shift[j])
                r.last, r.left = t, r.left - 1
            for r in running:
                if r.left <= 0:
                    r.state = r.shift = None
            running = [r for r in running if r.left > 0]
            del state, shift, ids, x
    torch.cuda.synchronize()


# ---------------------------------------------------------------- audio-LM token generation


class _SeaNetDecoder(torch.nn.Module):
    """EnCodec's SEANet decoder as MusicGen's 32 kHz codec has it: a conv from the 128-wide codes to 1024
    channels, a 2-layer LSTM with a skip, then per upsampling ratio (8, 5, 4, 4: 640 samples a frame) an ELU,
    a transposed conv halving the channels and a residual unit (ELU, conv k3 to a quarter, ELU, conv k1
    back), and an ELU and a conv to one channel."""

    def __init__(self, dim=128, ch=1024, ratios=(8, 5, 4, 4)):
        super().__init__()
        nn = torch.nn
        self.inp, self.lstm = nn.Conv1d(dim, ch, 7, padding=3), nn.LSTM(ch, ch, 2)
        self.ratios, self.ups, self.res = ratios, nn.ModuleList(), nn.ModuleList()
        for r in ratios:
            self.ups.append(nn.ConvTranspose1d(ch, ch // 2, 2 * r, stride=r))
            self.res.append(nn.Sequential(nn.ELU(), nn.Conv1d(ch // 2, ch // 4, 3, padding=1), nn.ELU(), nn.Conv1d(ch // 4, ch // 2, 1)))
            ch //= 2
        self.out = nn.Conv1d(ch, 1, 7, padding=3)

    def forward(self, z):  # (B, dim, frames)
        f = torch.nn.functional
        x = self.inp(z)
        y, _ = self.lstm(x.permute(2, 0, 1))
        x = x + y.permute(1, 2, 0)
        for r, up, res in zip(self.ratios, self.ups, self.res):
            x = up(f.elu(x))[..., : x.shape[-1] * r]
            x = x + res(x)
        return self.out(f.elu(x))


class _MgLayer(torch.nn.Module):
    """A MusicGen decoder layer: pre-LayerNorm causal self-attention, cross-attention to the text encoder's
    states, a GELU FFN."""

    def __init__(self, d, ffn):
        super().__init__()
        nn = torch.nn
        self.ln1, self.ln2, self.ln3 = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.o = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d, bias=False)
        self.cq, self.ck, self.cv, self.co = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.fc1, self.fc2 = nn.Linear(d, ffn, bias=False), nn.Linear(ffn, d, bias=False)


@_workload("text-to-music audio-LM generation, MusicGen-style (inference): a T5-base-sized text encoder (HF T5EncoderModel, 12 layers, width 768, random init) and a MusicGen-small-sized decoder (24 layers of width 1024, 16 heads, FFN 4096, sinusoidal positions, cross-attention to the projected text states; random weights) over 4 EnCodec codebooks of 2048 (embeddings summed, 4 heads) with MusicGen's delay pattern (codebook k lagging k steps), both bf16 under inference_mode, written by hand; 5 requests of 1-8 text prompts (log-uniform) of 8-64 tokens for 4-24 s of audio (log-uniform, at 50 frames a second, capped at 64 s of audio a request); classifier-free guidance (scale 3: batch doubled with zeroed text states under a zero mask), top-k 250 sampling, one token per codebook a step for frames + 3 steps, the self-attention KV cache grown by concatenation every step (HF's dynamic cache); then the codes undelayed, the residual codebooks (128-wide) summed and decoded by EnCodec's SEANet decoder (1024 channels, LSTM, upsampling 8-5-4-4 to 32 kHz) in fp16, clamped to int16 and copied back")
def musicgen_generate(rng):
    from transformers import T5Config, T5EncoderModel

    f = torch.nn.functional
    sdpa = f.scaled_dot_product_attention
    d, heads, layers, card, books = _smoke(1024, 64), _smoke(16, 4), _smoke(24, 2), _smoke(2048, 64), 4
    tcfg = T5Config(d_model=_smoke(768, 32), d_ff=_smoke(3072, 64), num_layers=_smoke(12, 1), num_heads=_smoke(12, 2),
                    d_kv=64, vocab_size=32128)
    text = T5EncoderModel(tcfg).to("cuda", torch.bfloat16).eval()
    nn = torch.nn
    lm = nn.Module()
    lm.emb = nn.ModuleList(nn.Embedding(card + 1, d) for _ in range(books))  # id `card` is the delay's pad
    lm.layers = nn.ModuleList(_MgLayer(d, 4 * d) for _ in range(layers))
    lm.ln, lm.proj = nn.LayerNorm(d), nn.Linear(tcfg.d_model, d)
    lm.heads = nn.ModuleList(nn.Linear(d, card, bias=False) for _ in range(books))
    lm = lm.to("cuda", torch.bfloat16).eval()
    codebooks = (torch.randn(books, card, 128, device="cuda")).half()
    codec = _SeaNetDecoder(ch=_smoke(1024, 32)).to("cuda", torch.float16).eval()
    fps, top_k, dh = 50, _smoke(250, 16), d // heads
    half = d // 2
    freqs = torch.exp(-math.log(10000) * torch.arange(half, device="cuda") / half)
    pos_angles = torch.arange(1600, device="cuda")[:, None] * freqs
    positions = torch.cat([pos_angles.cos(), pos_angles.sin()], -1).to(torch.bfloat16)  # (1600, d)

    # About 430 tensors a decoding step (counted on CPU at 24 layers): the 5 requests' 1715 steps make about
    # 1.5M events.
    with torch.inference_mode():
        for _ in range(_smoke(5, 2)):
            b = _loguniform(rng, 1, 8)
            frames = fps * min(_loguniform(rng, 4, _smoke(24, 5)), max(4, 64 // b))
            lens = [rng.randint(8, 64) for _ in range(b)]
            ids = torch.randint(0, tcfg.vocab_size, (b, max(lens)))
            mask = (torch.arange(max(lens))[None] < torch.tensor(lens)[:, None]).long()
            ids, mask = ids.pin_memory().to("cuda", non_blocking=True), mask.pin_memory().to("cuda", non_blocking=True)
            enc = lm.proj(text(input_ids=ids, attention_mask=mask).last_hidden_state)
            enc = torch.cat([enc, torch.zeros_like(enc)])  # the unconditional half: zeroed states
            keep = torch.cat([mask, torch.zeros_like(mask)])
            bias = ((1 - keep) * torch.finfo(torch.bfloat16).min).to(torch.bfloat16)[:, None, None]
            split = lambda t: t.view(2 * b, -1, heads, dh).transpose(1, 2)  # noqa: E731
            cross = [(split(layer.ck(enc)), split(layer.cv(enc))) for layer in lm.layers]
            del ids, mask, enc, keep
            delay = torch.tensor([[0 <= s - k < frames for k in range(books)] for s in range(frames + books - 1)], device="cuda")
            tokens = torch.full((b, books), card, device="cuda")
            cache, out = [None] * layers, []
            for step in range(frames + books - 1):
                x = sum(e(tokens[:, k]) for k, e in enumerate(lm.emb))
                x = (torch.cat([x, x]) + positions[step])[:, None]  # (2b, 1, d)
                for i, layer in enumerate(lm.layers):
                    q, k, v = layer.qkv(layer.ln1(x)).view(2 * b, 1, 3, heads, dh).permute(2, 0, 3, 1, 4)
                    if cache[i] is not None:
                        k, v = torch.cat([cache[i][0], k], 2), torch.cat([cache[i][1], v], 2)
                    cache[i] = (k, v)
                    x = x + layer.o(sdpa(q, k, v).transpose(1, 2).reshape(2 * b, 1, d))
                    q = layer.cq(layer.ln2(x)).view(2 * b, 1, heads, dh).transpose(1, 2)
                    x = x + layer.co(sdpa(q, *cross[i], attn_mask=bias).transpose(1, 2).reshape(2 * b, 1, d))
                    x = x + layer.fc2(f.gelu(layer.fc1(layer.ln3(x))))
                h = lm.ln(x[:, 0])
                logits = torch.stack([head(h) for head in lm.heads], 1).float()  # (2b, books, card)
                cond, uncond = logits.chunk(2)
                logits = uncond + 3.0 * (cond - uncond)
                vals, idx = logits.topk(top_k, -1)
                pick = torch.multinomial(torch.softmax(vals, -1).view(-1, top_k), 1).view(b, books, 1)
                tokens = torch.where(delay[step], idx.gather(-1, pick)[..., 0], card)
                out.append(tokens)
                del x, h, logits, cond, uncond, vals, idx, pick, q, k, v
            del cache, cross
            codes = torch.stack(out, -1)  # (b, books, frames + 3)
            codes = torch.stack([codes[:, k, k: k + frames] for k in range(books)], 1)
            z = sum(codebooks[k][codes[:, k]] for k in range(books)).transpose(1, 2)  # (b, 128, frames)
            wav = codec(z.contiguous())
            pcm = (wav.float().clamp(-1, 1) * 32767).to(torch.int16)
            host = torch.empty(pcm.shape, dtype=torch.int16).pin_memory()
            host.copy_(pcm, non_blocking=True)
            del out, codes, z, wav, pcm, tokens, delay, bias
    torch.cuda.synchronize()


# ---------------------------------------------------------------- 3D Gaussian splatting


_SH = (0.28209479177387814, 0.4886025119029199,
       (1.0925484305920792, -1.0925484305920792, 0.31539156525252005, -1.0925484305920792, 0.5462742152960396),
       (-0.5900435899266435, 2.890611442640554, -0.4570457994644658, 0.3731763325901154, -0.4570457994644658,
        1.445305721320277, -0.5900435899266435))


def _sh_colors(sh, dirs):
    """Degree-3 spherical harmonics (N, 16, 3) evaluated at unit directions (N, 3), as 3DGS's eval_sh."""
    c0, c1, c2, c3 = _SH
    x, y, z = (t[:, None] for t in dirs.unbind(-1))
    xx, yy, zz, xy, yz, xz = x * x, y * y, z * z, x * y, y * z, x * z
    out = c0 * sh[:, 0] - c1 * y * sh[:, 1] + c1 * z * sh[:, 2] - c1 * x * sh[:, 3]
    out = (out + c2[0] * xy * sh[:, 4] + c2[1] * yz * sh[:, 5] + c2[2] * (2 * zz - xx - yy) * sh[:, 6]
           + c2[3] * xz * sh[:, 7] + c2[4] * (xx - yy) * sh[:, 8])
    return (out + c3[0] * y * (3 * xx - yy) * sh[:, 9] + c3[1] * xy * z * sh[:, 10] + c3[2] * y * (4 * zz - xx - yy) * sh[:, 11]
            + c3[3] * z * (2 * zz - 3 * xx - 3 * yy) * sh[:, 12] + c3[4] * x * (4 * zz - xx - yy) * sh[:, 13]
            + c3[5] * z * (xx - yy) * sh[:, 14] + c3[6] * x * (xx - 3 * yy) * sh[:, 15])


def _quat_rot(q):
    """Rotation matrices (N, 3, 3) of unit quaternions (N, 4), w first."""
    w, x, y, z = q.unbind(-1)
    return torch.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                        2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                        2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1).view(-1, 3, 3)


def _ssim(x, y, win):
    """SSIM of images (1, 3, H, W) with an 11x11 gaussian window (3, 1, 11, 11), as 3DGS's loss computes it."""
    f = torch.nn.functional
    conv = lambda t: f.conv2d(t, win, padding=5, groups=3)  # noqa: E731
    mx, my = conv(x), conv(y)
    sxx, syy, sxy = conv(x * x) - mx * mx, conv(y * y) - my * my, conv(x * y) - mx * my
    c1, c2 = 0.01 ** 2, 0.03 ** 2
    return ((2 * mx * my + c1) * (2 * sxy + c2) / ((mx * mx + my * my + c1) * (sxx + syy + c2))).mean()


@_workload("3D Gaussian splatting training with a pure-PyTorch tile rasterizer (as the torch-only reimplementations do it): 3DGS's parametrization (means, log-scales, quaternions, opacity logits, degree-3 SH colours) from 50k random points, a per-attribute Adam (3DGS learning rates, eps 1e-15); each step one of 64 training views (480x320 uint8 images kept on the device, cameras at 3-6 units around the scene, 60 degree field of view): projection to 2D covariances through the Jacobian, 3-sigma radii, binning into 32x32 tiles (a tile x Gaussian overlap mask, the front-most Gaussians by depth per tile by top-k, at most 1024), tiles rendered 25 at a time (K the group's fullest tile) (pixel x Gaussian alphas, exclusive cumprod transmittance, alpha blending on a black background), L1 x 0.8 + D-SSIM x 0.2 loss; 3DGS's adaptive density control every 50 steps from step 50 to 400 (the top 30% by accumulated screen-space gradient cloned when small or split in two when large, low-opacity Gaussians pruned, at most 600k), the parameters and Adam moments rebuilt by concatenation and masking each time, opacity reset at step 300; 450 steps, fp32")
def gsplat_train(rng):
    f = torch.nn.functional
    n0, cap, k_cap = _smoke(50_000, 600), _smoke(600_000, 3000), _smoke(1024, 64)
    height, width, tile, group = _smoke(320, 64), _smoke(480, 96), _smoke(32, 16), _smoke(25, 8)
    views = _smoke(64, 4)
    images = torch.randint(0, 256, (views, 3, height, width), dtype=torch.uint8).pin_memory().to("cuda")
    g = torch.Generator().manual_seed(rng.randrange(2**31))
    pts = torch.randn(n0, 3, generator=g)
    pts = pts / pts.norm(dim=-1, keepdim=True) * torch.rand(n0, 1, generator=g) ** (1 / 3) * 1.5
    init = {
        "means": pts, "scales": torch.full((n0, 3), math.log(0.03)) + 0.1 * torch.randn(n0, 3, generator=g),
        "quats": torch.cat([torch.ones(n0, 1), torch.zeros(n0, 3)], 1), "opac": torch.full((n0, 1), math.log(0.1 / 0.9)),
        "sh0": torch.randn(n0, 1, 3, generator=g) * 0.3, "shN": torch.zeros(n0, 15, 3),
    }
    lrs = {"means": 1.6e-4 * 3, "scales": 5e-3, "quats": 1e-3, "opac": 0.05, "sh0": 2.5e-3, "shN": 2.5e-3 / 20}
    params = {k: torch.nn.Parameter(v.cuda()) for k, v in init.items()}
    opt = torch.optim.Adam([{"params": [params[k]], "name": k, "lr": lrs[k]} for k in params], eps=1e-15)
    ty, tx = height // tile, width // tile
    yy, xx = torch.meshgrid(torch.arange(height, device="cuda"), torch.arange(width, device="cuda"), indexing="ij")
    pix = torch.stack([xx, yy], -1).float().add(0.5).view(ty, tile, tx, tile, 2).permute(0, 2, 1, 3, 4).reshape(ty * tx, tile * tile, 2)
    t0 = torch.stack(torch.meshgrid(torch.arange(ty, device="cuda"), torch.arange(tx, device="cuda"), indexing="ij"), -1).view(-1, 2) * tile
    gauss = torch.exp(-((torch.arange(11, device="cuda") - 5.0) ** 2) / (2 * 1.5 ** 2))
    win = (gauss[:, None] * gauss[None]).div(gauss.sum() ** 2).expand(3, 1, 11, 11).contiguous()
    focal = 0.5 * width / math.tan(math.radians(30))
    grad_acc = torch.zeros(n0, device="cuda")
    seen = torch.zeros(n0, device="cuda")

    def rebuild(fn):
        """Every parameter and its Adam moments replaced by fn(tensor, name, is_moment), as 3DGS's
        cat_tensors_to_optimizer and _prune_optimizer do."""
        for grp in opt.param_groups:
            old, name = grp["params"][0], grp["name"]
            state = opt.state.pop(old, None)
            new = torch.nn.Parameter(fn(old.detach(), name, False))
            if state:
                state["exp_avg"], state["exp_avg_sq"] = fn(state["exp_avg"], name, True), fn(state["exp_avg_sq"], name, True)
                opt.state[new] = state
            grp["params"][0] = params[name] = new

    # About 1.4k tensors a step (counted on CPU at the real sizes): 450 steps make about 1.3M events.
    steps = _smoke(450, 8)
    for step in range(1, steps + 1):
        # A camera on a sphere around the scene, looking at its centre.
        theta, phi, dist = rng.uniform(0, 2 * math.pi), rng.uniform(-1.2, 1.2), rng.uniform(3, 6)
        eye = torch.tensor([dist * math.cos(phi) * math.cos(theta), dist * math.sin(phi), dist * math.cos(phi) * math.sin(theta)])
        fwd = -eye / eye.norm()
        right = torch.linalg.cross(fwd, torch.tensor([0.0, 1.0, 0.0]))
        right = right / right.norm()
        rot = torch.stack([right, torch.linalg.cross(fwd, right), fwd]).cuda()  # world to camera
        trans, eye = (-rot.cpu() @ eye).cuda(), eye.cuda()
        target = images[rng.randrange(views)].float()[None] / 255
        means, n = params["means"], params["means"].shape[0]
        p = means @ rot.T + trans
        z = p[:, 2].clamp(min=0.2)
        scale = torch.exp(params["scales"])
        m = _quat_rot(f.normalize(params["quats"], dim=-1)) * scale[:, None, :]
        cov3 = m @ m.transpose(1, 2)
        lim = 1.3 * math.tan(math.radians(30))
        px, py = (p[:, 0] / z).clamp(-lim * width / height, lim * width / height) * z, (p[:, 1] / z).clamp(-lim, lim) * z
        zero = torch.zeros_like(z)
        jac = torch.stack([focal / z, zero, -focal * px / (z * z), zero, focal / z, -focal * py / (z * z)], -1).view(-1, 2, 3)
        w = jac @ rot
        cov2 = w @ cov3 @ w.transpose(1, 2) + 0.3 * torch.eye(2, device="cuda")
        a, b, c = cov2[:, 0, 0], cov2[:, 0, 1], cov2[:, 1, 1]
        det = a * c - b * b
        conic = torch.stack([c / det, -b / det, a / det], -1)
        mean2d = torch.stack([focal * p[:, 0] / z + width / 2, focal * p[:, 1] / z + height / 2], -1)
        mean2d.retain_grad()
        dirs = f.normalize(means - eye, dim=-1)
        color = (_sh_colors(torch.cat([params["sh0"], params["shN"]], 1), dirs) + 0.5).clamp(min=0)
        opacity = torch.sigmoid(params["opac"])[:, 0]
        with torch.no_grad():
            mid = 0.5 * (a + c)
            radius = torch.ceil(3 * torch.sqrt(mid + (mid * mid - det).clamp(min=0.1).sqrt())) * (p[:, 2] > 0.2)
            lo, hi = mean2d - radius[:, None], mean2d + radius[:, None]
            overlap = ((lo[None, :, 0] < t0[:, None, 1] + tile) & (hi[None, :, 0] > t0[:, None, 1])
                       & (lo[None, :, 1] < t0[:, None, 0] + tile) & (hi[None, :, 1] > t0[:, None, 0]) & (radius > 0))
            key = torch.where(overlap, p[None, :, 2], torch.inf)
            counts = overlap.sum(1).clamp(min=1, max=k_cap).tolist()
            depth, order = key.topk(max(counts), 1, largest=False)
            valid = depth < torch.inf
            del lo, hi, overlap, key, depth
        rgb = []
        for g0 in range(0, ty * tx, group):
            k = max(counts[g0: g0 + group])  # this group's K: its fullest tile's count
            ix, ok = order[g0: g0 + group, :k], valid[g0: g0 + group, :k]
            m2, cn, op, col = mean2d[ix], conic[ix], opacity[ix], color[ix]
            d = pix[g0: g0 + group, :, None] - m2[:, None]  # (G, pixels, K, 2)
            dx, dy = d[..., 0], d[..., 1]
            power = -0.5 * (cn[:, None, :, 0] * dx * dx + cn[:, None, :, 2] * dy * dy) - cn[:, None, :, 1] * dx * dy
            alpha = (op[:, None] * torch.exp(power)).clamp(max=0.99)
            alpha = alpha * ((power <= 0) & (alpha >= 1 / 255) & ok[:, None])
            t = torch.cumprod(1 - alpha, -1)
            t = torch.cat([torch.ones_like(t[..., :1]), t[..., :-1]], -1)
            rgb.append((alpha * t) @ col)
            del ix, ok, m2, cn, op, col, d, dx, dy, power, alpha, t
        img = torch.cat(rgb).view(ty, tx, tile, tile, 3).permute(4, 0, 2, 1, 3).reshape(1, 3, height, width)
        loss = 0.8 * (img - target).abs().mean() + 0.2 * (1 - _ssim(img, target, win))
        loss.backward()
        with torch.no_grad():
            seen_now = radius > 0
            grad_acc += mean2d.grad.norm(dim=-1) * seen_now
            seen += seen_now
        opt.step()
        opt.zero_grad(set_to_none=True)
        del p, z, scale, m, cov3, px, py, zero, jac, w, cov2, a, b, c, det, conic, mean2d, dirs, color, opacity
        del radius, order, valid, rgb, img, loss, target, rot, trans, eye
        if step % _smoke(50, 2) == 0 and step <= _smoke(400, 6):
            with torch.no_grad():
                avg = grad_acc / seen.clamp(min=1)
                thr = avg.kthvalue(max(1, int(0.7 * n))).values
                high = (avg >= thr) & (seen > 0)
                room = max(0, cap - n)
                if int(high.sum()) > room // 2:  # at most `cap` Gaussians: the largest gradients first
                    high = avg >= avg.topk(max(1, room // 2)).values[-1]
                big = torch.exp(params["scales"]).max(-1).values > 0.02
                clone, split = (high & ~big).nonzero()[:, 0], (high & big).nonzero()[:, 0]
                s_split = torch.exp(params["scales"][split]).repeat(2, 1)
                offset = (_quat_rot(f.normalize(params["quats"][split], dim=-1)).repeat(2, 1, 1) @ (torch.randn_like(s_split) * s_split)[..., None])[..., 0]
                extra = {}
                for name, prm in params.items():
                    extra[name] = torch.cat([prm[clone], prm[split].repeat(2, *([1] * (prm.dim() - 1)))])
                extra["means"][clone.shape[0]:] += offset
                extra["scales"][clone.shape[0]:] = torch.log(s_split / 1.6)
                keep = torch.ones(n, dtype=torch.bool, device="cuda")
                keep[split] = False  # the split originals go
                keep &= torch.sigmoid(params["opac"][:, 0]) >= 0.005
                rebuild(lambda t, name, moment: torch.cat([t[keep], torch.zeros_like(extra[name]) if moment else extra[name]]))
                n = params["means"].shape[0]
                grad_acc, seen = torch.zeros(n, device="cuda"), torch.zeros(n, device="cuda")
                del avg, thr, high, big, clone, split, s_split, offset, extra, keep
        if step == _smoke(300, 4):
            with torch.no_grad():
                reset = torch.minimum(params["opac"], torch.full_like(params["opac"], math.log(0.01 / 0.99)))
                rebuild(lambda t, name, moment: (torch.zeros_like(t) if moment else reset) if name == "opac" else t)
                del reset
    torch.cuda.synchronize()


# ---------------------------------------------------------------- mixture-of-depths training


class _ModBlock(torch.nn.Module):
    """A pre-norm GPT block (causal SDPA attention, GELU MLP of 4x); delta() is its residual branch."""

    def __init__(self, d, heads):
        super().__init__()
        nn = torch.nn
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.heads = heads

    def delta(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        h = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return h - x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(h))))


@_workload("mixture-of-depths LM training (Raposo et al. 2024): a 12-layer GPT-style decoder (width 1024, 16 heads, MLP 4096, learned positions, vocab 32000, untied head, random init) whose every other block is routed: a linear router scores each token, the top 12.5% of each sequence (capacity C = T/8) are gathered in order, run through the block (causal attention among them) and scattered back added to the residual stream weighted by their router scores, the others skip it; a small MLP predictor (on the detached stream) learns the top-k membership with BCE for causal sampling; batches of 2-32 sequences of 256-4096 tokens (multiple of 256) capped at 16k tokens, 250 steps, gradient clipping, AdamW with cosine decay, bf16 autocast")
def mod_train(rng):
    f = torch.nn.functional
    nn = torch.nn
    d, layers, heads, vocab = _smoke(1024, 64), _smoke(12, 4), _smoke(16, 4), 32000
    model = nn.Module()
    model.emb, model.pos = nn.Embedding(vocab, d), nn.Embedding(4096, d)
    model.blocks = nn.ModuleList(_ModBlock(d, heads) for _ in range(layers))
    model.routers = nn.ModuleList(nn.Linear(d, 1) for _ in range(layers // 2))
    model.predictors = nn.ModuleList(nn.Sequential(nn.Linear(d, d // 8), nn.SiLU(), nn.Linear(d // 8, 1)) for _ in range(layers // 2))
    model.ln, model.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)
    model = model.cuda().train()
    steps = _smoke(250, 4)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, betas=(0.9, 0.95))
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    max_tokens, longest = _smoke(16384, 512), _smoke(4096, 256)

    # About 1.8k tensors a step (counted on CPU at 12 layers, the optimizer's and clipping's included): 250
    # steps make about 0.9M events.
    for _ in range(steps):
        t = rng.randrange(256, longest + 1, 256)
        b = max(1, min(rng.randint(2, 32), max_tokens // t))
        ids = torch.randint(0, vocab, (b, t + 1), dtype=torch.int32).pin_memory().to("cuda", non_blocking=True).long()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            x = model.emb(ids[:, :-1]) + model.pos.weight[:t]
            aux = 0.0
            for i, blk in enumerate(model.blocks):
                if i % 2 == 0:
                    x = x + blk.delta(x)
                    continue
                cap = t // 8
                score = model.routers[i // 2](x).squeeze(-1).float()  # (b, t)
                top = score.topk(cap, -1).indices.sort(-1).values  # kept in causal order
                gather = top[..., None].expand(-1, -1, d)
                sel = x.gather(1, gather)
                upd = blk.delta(sel) * torch.sigmoid(score.gather(1, top))[..., None].to(sel.dtype)
                x = x.scatter_add(1, gather, upd.to(x.dtype))
                member = torch.zeros_like(score).scatter_(1, top, 1.0)
                aux = aux + f.binary_cross_entropy_with_logits(model.predictors[i // 2](x.detach()).squeeze(-1).float(), member)
                del score, top, gather, sel, upd, member
            logits = model.head(model.ln(x))
        loss = f.cross_entropy(logits.float().flatten(0, 1), ids[:, 1:].flatten()) + 0.01 * aux
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        del ids, x, aux, logits, loss
    torch.cuda.synchronize()


# ---------------------------------------------------------------- GradCache contrastive embedding training


@_workload("sentence-embedding training with GradCache, as sentence-transformers' CachedMultipleNegativesRankingLoss does it: an HF BertModel (BERT-base: 12 layers, width 768, random init, no pooler) with mean pooling; a round-robin of four datasets in proportion to their sizes (query-passage pairs of 4-32 and 32-256 tokens, NLI triplets of 6-48 tokens each, title-abstract pairs of 8-32 and 96-256, question-answer pairs of 8-64 and 16-192; log-uniform), batches of 512 rows, each column padded to its longest over the batch (the collator tokenizes whole columns) and cut into mini-batches of 128; per step: every mini-batch embedded under no_grad with its RNG state saved, the in-batch-negatives loss (cosine similarity x 20 against every candidate of the batch, cross-entropy) computed on the cached embeddings mini-batch by mini-batch to get their gradients, then every mini-batch embedded again with grad under its restored RNG state and backpropagated with its cached gradient (a dot-product surrogate); gradient clipping, 25 steps, linear warmup, AdamW, bf16 autocast")
def gradcache_embed(rng):
    from torch.utils.checkpoint import get_device_states, set_device_states
    from transformers import BertConfig, BertModel

    f = torch.nn.functional
    cfg = BertConfig(hidden_size=_smoke(768, 64), num_hidden_layers=_smoke(12, 2), num_attention_heads=_smoke(12, 4),
                     intermediate_size=_smoke(3072, 128), max_position_embeddings=512)
    model = BertModel(cfg, add_pooling_layer=False).cuda().train()
    steps, batch, mini = _smoke(25, 3), _smoke(512, 16), _smoke(128, 4)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-5, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 10))
    top = _smoke(256, 32)
    datasets = [  # (weight, token ranges of its columns)
        (5, ((4, 32), (32, top))), (3, ((6, 48), (6, 48), (6, 48))), (1, ((8, 32), (96, top))), (2, ((8, 64), (16, 192 if top > 192 else top))),
    ]

    def column(lo, hi):
        lens = [_loguniform(rng, lo, hi) for _ in range(batch)]
        ids = torch.randint(1000, cfg.vocab_size, (batch, max(lens)), dtype=torch.int32)
        mask = (torch.arange(max(lens))[None] < torch.tensor(lens)[:, None]).to(torch.int32)
        ids = ids * mask
        return ids.pin_memory().to("cuda", non_blocking=True), mask.pin_memory().to("cuda", non_blocking=True)

    def embed(ids, mask):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = model(input_ids=ids, attention_mask=mask).last_hidden_state
        m = mask[..., None].float()
        return (h.float() * m).sum(1) / m.sum(1).clamp(min=1)

    # About 2.6k tensors a mini-batch, embedded twice, forward and backward (counted on CPU at 12 layers), and
    # 2.3 columns of 4 mini-batches a step on average: 25 steps make about 1.2M events.
    weights = [w for w, _ in datasets]
    for _ in range(steps):
        _, ranges = rng.choices(datasets, weights)[0]
        cols = [column(lo, hi) for lo, hi in ranges]
        # 1. embed every mini-batch without grad, keeping its RNG state (sentence-transformers' RandContext)
        reps, states = [], []
        for ids, mask in cols:
            r, s = [], []
            for lo in range(0, batch, mini):
                s.append((torch.get_rng_state(), get_device_states(ids)))
                with torch.no_grad():
                    r.append(embed(ids[lo: lo + mini], mask[lo: lo + mini]).detach().requires_grad_())
            reps.append(r)
            states.append(s)
        # 2. the loss on the cached embeddings, mini-batch by mini-batch, for their gradients
        anchors = torch.cat(reps[0])
        cands = torch.cat([torch.cat(r) for r in reps[1:]])
        labels = torch.arange(batch, device="cuda")
        total = 0.0
        for lo in range(0, batch, mini):
            scores = f.normalize(anchors[lo: lo + mini], dim=-1) @ f.normalize(cands, dim=-1).T * 20.0
            part = f.cross_entropy(scores, labels[lo: lo + mini]) * scores.shape[0] / batch
            part.backward()
            total += part.detach()
            del scores, part
        grads = [[r.grad for r in rs] for rs in reps]
        del anchors, cands, labels, reps
        # 3. embed again with grad under the saved RNG states; backpropagate the cached gradients
        for (ids, mask), s, g in zip(cols, states, grads):
            for j, lo in enumerate(range(0, batch, mini)):
                cpu_state, (devices, dev_states) = s[j]
                with torch.random.fork_rng(devices=devices):
                    torch.set_rng_state(cpu_state)
                    set_device_states(devices, dev_states)
                    rep = embed(ids[lo: lo + mini], mask[lo: lo + mini])
                    torch.dot(rep.flatten(), g[j].flatten()).backward()
                del rep
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        float(total)
        del cols, states, grads, total
    torch.cuda.synchronize()


# ---------------------------------------------------------------- image-text retrieval index build


@_workload("image-text retrieval index build and search, faiss-IVF-style in pure PyTorch (two CUDA streams): CLIP ViT-B/32 towers (HF CLIPVisionModelWithProjection at 224 px and CLIPTextModelWithProjection, 12 layers each, 512-wide embeddings; random weights) in fp16 under inference_mode; a corpus of about 300k images in shards of 2k-20k (log-uniform), batches of 512 (each shard's last one partial), uint8 HWC images of the next batch copied from pinned memory, converted and normalized on a side stream while the current batch is encoded; the first 64k unit-norm embeddings staged in a device buffer grown by doubling, then spherical k-means (1024 lists, 20 Lloyd iterations in chunks of 16k points, empty lists reseeded) and every embedding, staged or new, added to its nearest list: one vector and one id buffer per list, each grown by doubling from 32 rows as vectors arrive (faiss-GPU's per-list device vectors); the lists then compacted into one CSR array; 500 query batches of 1-256 texts (log-uniform) of 5-77 tokens encoded, the nearest 8-64 lists probed per query, their members gathered (padded to the longest candidate list, chunked at 512k candidates), scored, top 10-100 ids and scores copied back")
def ivf_index_build(rng):
    from transformers import CLIPTextConfig, CLIPTextModelWithProjection, CLIPVisionConfig, CLIPVisionModelWithProjection

    f = torch.nn.functional
    vcfg = CLIPVisionConfig(hidden_size=_smoke(768, 64), intermediate_size=_smoke(3072, 128), num_hidden_layers=_smoke(12, 2),
                            num_attention_heads=_smoke(12, 4), image_size=_smoke(224, 64), patch_size=32, projection_dim=_smoke(512, 32))
    tcfg = CLIPTextConfig(hidden_size=_smoke(512, 64), intermediate_size=_smoke(2048, 128), num_hidden_layers=_smoke(12, 2),
                          num_attention_heads=_smoke(8, 4), projection_dim=_smoke(512, 32), max_position_embeddings=77)
    vis = CLIPVisionModelWithProjection(vcfg).to("cuda", torch.float16).eval()
    txt = CLIPTextModelWithProjection(tcfg).to("cuda", torch.float16).eval()
    dim, res, batch = vcfg.projection_dim, vcfg.image_size, _smoke(512, 16)
    nlist, n_train, corpus = _smoke(1024, 16), _smoke(65536, 128), _smoke(300_000, 400)
    side, main = torch.cuda.Stream(), torch.cuda.current_stream()
    mean = torch.tensor([0.48145466, 0.4578275, 0.40821073], device="cuda")[None, :, None, None]
    std = torch.tensor([0.26862954, 0.26130258, 0.27577711], device="cuda")[None, :, None, None]
    # Decoded images land in a pinned host buffer (random bytes drawn once: drawing them per batch is slow).
    pool = torch.randint(0, 256, (2 * batch, res, res, 3), dtype=torch.uint8).pin_memory()
    sizes = []
    while sum(sizes) < corpus:
        shard = _loguniform(rng, _smoke(2000, 20), _smoke(20000, 60))
        sizes += [batch] * (shard // batch) + ([shard % batch] if shard % batch else [])

    def upload(n):
        host = pool[rng.randrange(pool.shape[0] - n + 1):][:n]
        with torch.cuda.stream(side):
            side.wait_stream(main)
            x = host.to("cuda", non_blocking=True).permute(0, 3, 1, 2).float().div_(255)
            x = ((x - mean) / std).half()
            ready = side.record_event()
        return x, ready

    store, count = torch.empty(_smoke(8192, 32), dim, device="cuda", dtype=torch.float16), 0
    centroids, lists = None, []  # lists: [vectors (capacity, dim), ids (capacity,), size]

    def add(x, ids):
        assign = (x @ centroids.T.half()).argmax(1)
        order = assign.argsort()
        xs, ids = x[order], ids[order]
        o = 0
        for l, c in enumerate(torch.bincount(assign, minlength=nlist).tolist()):
            if c == 0:
                continue
            vecs, idv, size = lists[l]
            if size + c > vecs.shape[0]:
                capacity = max(32, vecs.shape[0])
                while capacity < size + c:
                    capacity *= 2
                grown, grown_ids = x.new_empty(capacity, dim), ids.new_empty(capacity)
                grown[:size], grown_ids[:size] = vecs[:size], idv[:size]
                vecs, idv = lists[l][0], lists[l][1] = grown, grown_ids
            vecs[size: size + c], idv[size: size + c] = xs[o: o + c], ids[o: o + c]
            lists[l][2] = size + c
            o += c
        del assign, order, xs, ids

    def kmeans(data):
        c = data[torch.randperm(data.shape[0], device="cuda")[:nlist]].clone()
        for _ in range(20):
            sums, counts = torch.zeros_like(c), torch.zeros(nlist, device="cuda")
            for lo in range(0, data.shape[0], 16384):
                chunk = data[lo: lo + 16384]
                a = (chunk @ c.T).argmax(1)
                sums.index_add_(0, a, chunk)
                counts += torch.bincount(a, minlength=nlist)
                del chunk, a
            reseed = data[torch.randint(0, data.shape[0], (nlist,), device="cuda")]
            c = f.normalize(torch.where(counts[:, None] > 0, sums / counts.clamp(min=1)[:, None], reseed), dim=-1)
            del sums, counts, reseed
        return c

    # About 230 tensors an image batch, 250 a query batch and a few thousand list growths (counted on CPU at
    # 12 layers): about 0.6M events.
    with torch.inference_mode():
        nxt, seen = upload(sizes[0]), 0
        for i, n in enumerate(sizes):
            x, ready = nxt
            main.wait_event(ready)
            x.record_stream(main)
            if i + 1 < len(sizes):
                nxt = upload(sizes[i + 1])
            emb = f.normalize(vis(pixel_values=x).image_embeds.float(), dim=-1).half()
            ids = torch.arange(seen, seen + n, device="cuda")
            seen += n
            if centroids is None:
                if count + n > store.shape[0]:
                    grown = store.new_empty(2 * store.shape[0], dim)
                    grown[:count] = store[:count]
                    store = grown
                    del grown
                store[count: count + n] = emb
                count += n
                if count >= n_train:  # train the coarse quantizer, then add what was staged
                    centroids = kmeans(store[:count].float())
                    lists = [[store.new_empty(0, dim), ids.new_empty(0), 0] for _ in range(nlist)]
                    add(store[:count], torch.arange(count, device="cuda"))
                    store = None
            else:
                add(emb, ids)
            del x, emb, ids
        # The index compacted into one CSR array, the per-list buffers freed.
        flat = torch.cat([v[:s] for v, _, s in lists])
        flat_ids = torch.cat([d[:s] for _, d, s in lists])
        list_sizes = torch.tensor([s for _, _, s in lists], device="cuda")
        offsets = list_sizes.cumsum(0) - list_sizes
        lists = None
        for _ in range(_smoke(500, 4)):
            q = _loguniform(rng, 1, 256)
            lens = [rng.randint(5, 77) for _ in range(q)]
            tokens = torch.randint(1, tcfg.vocab_size - 1, (q, max(lens)))
            mask = (torch.arange(max(lens))[None] < torch.tensor(lens)[:, None]).long()
            tokens, mask = tokens.pin_memory().to("cuda", non_blocking=True), mask.pin_memory().to("cuda", non_blocking=True)
            qe = f.normalize(txt(input_ids=tokens, attention_mask=mask).text_embeds.float(), dim=-1)
            nprobe, k = rng.choice((8, 16, 32, 64)), rng.choice((10, 50, 100))
            probe = (qe @ centroids.T).topk(min(nprobe, nlist), -1).indices
            plen, pstart = list_sizes[probe], offsets[probe]
            ends = plen.cumsum(1)
            cmax = max(1, int(ends[:, -1].max()))
            step = max(1, _smoke(512 * 1024, 256) // cmax)
            found = []
            for q0 in range(0, q, step):
                e, ln, st = ends[q0: q0 + step], plen[q0: q0 + step], pstart[q0: q0 + step]
                j = torch.arange(cmax, device="cuda").expand(e.shape[0], -1).contiguous()
                slot = torch.searchsorted(e, j, right=True).clamp(max=e.shape[1] - 1)
                valid = j < e[:, -1:]
                pos = torch.where(valid, st.gather(1, slot) + j - (e - ln).gather(1, slot), 0)
                scores = (flat[pos] @ qe[q0: q0 + step, :, None].half()).squeeze(-1).float().masked_fill(~valid, -torch.inf)
                top = scores.topk(min(k, cmax), -1)
                found.append((flat_ids[pos.gather(1, top.indices)], top.values))
                del e, ln, st, j, slot, valid, pos, scores, top
            out_ids, out_scores = torch.cat([a for a, _ in found]), torch.cat([b for _, b in found])
            host = (torch.empty(out_ids.shape, dtype=torch.int64).pin_memory(), torch.empty(out_scores.shape).pin_memory())
            host[0].copy_(out_ids, non_blocking=True)
            host[1].copy_(out_scores, non_blocking=True)
            del tokens, mask, qe, probe, plen, pstart, ends, found, out_ids, out_scores
    torch.cuda.synchronize()

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

"""The fortieth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch39_b.py are): LLM serving systems, first half. Serving with a multi-head latent attention model
(DeepSeek-V2-style, a compressed latent KV cache kept in pages of 64 tokens, absorbed projections in decoding)
under continuous batching, disaggregated prefill and decode (a prefill worker on a side stream hands per-request
KV buffers to a decode worker on the compute stream), best-of-n parallel sampling over a paged KV pool with a
system prompt shared by a wave's requests and copy-on-write of the shared partial blocks, and streaming
multi-turn generation with attention sinks and a rolling window (StreamingLLM-style) on a multi-query model.
Same conventions: models built from configs (hand-written torch here) with random weights, nothing downloaded,
`rng` the workload's random.Random for every shape, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1
runs are tiny. No control flow reads a tensor's value (arrivals, lengths, stops and block tables are drawn or
kept on the host; generated tokens are only copied back). disagg_pd_serve uses a side stream (the decode
stream waits on each prefill's event, its buffers record_stream'ed); all four run bf16 weights under
inference_mode.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.
batch40_b.py imports this file's decoder layer (`_Layer`, `_Lm`).

Real sizes checked before recording (batch40_b.py's header says the same of its half): every workload of this
half was run whole (RECORD_SMOKE unset; some at more steps, then cut back by the ratio of
counts, as record_new40.sh says), on PyTorch's meta device (a runner like
/tmp/b40/meta_run.py, not committed: smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered
with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking its math path; boolean-mask indexing,
which the meta device cannot size, is avoided) and its op outputs counted there (events about 1.8x that count);
the counts and peaks are in record_new40.sh's header. The CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import _repeat_kv, _rope, _rope_tables

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


class _Layer(torch.nn.Module):
    """A Llama-style pre-norm decoder layer (RMSNorm, GQA projections, SwiGLU MLP), run by the workloads' own
    attention code."""

    def __init__(self, d, heads, kvh, dh, ff):
        super().__init__()
        nn = torch.nn
        self.n1, self.n2 = nn.RMSNorm(d, eps=1e-5), nn.RMSNorm(d, eps=1e-5)
        self.q = nn.Linear(d, heads * dh, bias=False)
        self.kv = nn.Linear(d, 2 * kvh * dh, bias=False)
        self.o = nn.Linear(heads * dh, d, bias=False)
        self.gu = nn.Linear(d, 2 * ff, bias=False)
        self.dn = nn.Linear(ff, d, bias=False)
        self.heads, self.kvh, self.dh = heads, kvh, dh

    def qkv(self, x, cos, sin):
        """q (..., heads, dh), k and v (..., kvh, dh) of x (..., d); q and k rotated by cos and sin (..., 1, dh)."""
        h = self.n1(x)
        q = self.q(h).unflatten(-1, (self.heads, self.dh))
        k, v = self.kv(h).unflatten(-1, (2 * self.kvh, self.dh)).chunk(2, -2)
        return _rope(q, cos, sin), _rope(k, cos, sin), v

    def mlp(self, x):
        g, u = self.gu(self.n2(x)).chunk(2, -1)
        return x + self.dn(torch.nn.functional.silu(g) * u)


class _Lm(torch.nn.Module):
    def __init__(self, d, layers, heads, kvh, ff, vocab=32000, dh=None):
        super().__init__()
        nn = torch.nn
        dh = dh or d // heads
        self.emb = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(_Layer(d, heads, kvh, dh, ff) for _ in range(layers))
        self.norm = nn.RMSNorm(d, eps=1e-5)
        self.head = nn.Linear(d, vocab, bias=False)
        self.heads, self.kvh, self.dh, self.vocab = heads, kvh, dh, vocab


def _arrivals(rng, rate):
    n = 0
    while rng.random() < rate and n < 3:
        n += 1
    return n


# ---------------------------------------------------------------- multi-head latent attention serving


class _MlaLayer(torch.nn.Module):
    """DeepSeek-V2's multi-head latent attention (no query compression) and a SwiGLU MLP."""

    def __init__(self, d, heads, nope, rope, lat, vdim, ff):
        super().__init__()
        nn = torch.nn
        self.n1, self.n2, self.kvn = nn.RMSNorm(d), nn.RMSNorm(d), nn.RMSNorm(lat)
        self.q = nn.Linear(d, heads * (nope + rope), bias=False)
        self.kva = nn.Linear(d, lat + rope, bias=False)
        self.kvb = nn.Linear(lat, heads * (nope + vdim), bias=False)
        self.o = nn.Linear(heads * vdim, d, bias=False)
        self.gu, self.dn = nn.Linear(d, 2 * ff, bias=False), nn.Linear(ff, d, bias=False)
        self.dims = heads, nope, rope, lat, vdim

    def mlp(self, x):
        g, u = self.gu(self.n2(x)).chunk(2, -1)
        return x + self.dn(torch.nn.functional.silu(g) * u)


@_workload("LLM serving with multi-head latent attention and a paged latent KV cache, DeepSeek-V2-style MLA written by hand (random weights, bf16 under inference_mode): an 8-layer decoder (width 1024, 16 heads with 64 no-position and 32 rotary dims a head, a 256-wide KV latent plus a shared 32-dim rotary key cached per token instead of keys and values, value heads of 64, SwiGLU 2816, vocab 32000); requests arrive 0-3 a step (prompt 16-1500 tokens log-uniform, 8-256 new tokens), admitted up to 32 running and 2 prefills a step; a prefill expands the latent to full keys and values for causal SDPA and writes the (layers, tokens, 288) latents into freshly allocated pages of 64 tokens; a decode step copies every running request's pages into a batch tensor padded to the longest (a multiple of 64), writes each layer's new latent in by index_put, and attends with the absorbed projections (queries mapped into the latent space by the up-projection's key half, outputs mapped back by its value half) under a length mask; new latents copied back to the request's last page (a new page every 64 tokens), pages freed when the request ends; greedy tokens copied back every step; 900 steps")
def mla_latent_serve(rng):
    f = torch.nn.functional
    L, d, H, nope, rp, lat, vd = _smoke(8, 2), _smoke(1024, 64), _smoke(16, 2), 64, 32, _smoke(256, 32), 64
    layers = torch.nn.ModuleList(_MlaLayer(d, H, nope, rp, lat, vd, _smoke(2816, 128)) for _ in range(L))
    emb, norm, head = torch.nn.Embedding(32000, d), torch.nn.RMSNorm(d), torch.nn.Linear(d, 32000, bias=False)
    model = torch.nn.ModuleList([layers, emb, norm, head]).cuda().to(torch.bfloat16).eval()
    cos, sin = _rope_tables(rp, 2048, 10000.0)
    W = lat + rp
    page = 64
    scale = 1.0 / math.sqrt(nope + rp)
    nsteps = _smoke(900, 8)
    maxrun = _smoke(32, 3)
    waiting, running = [], []

    def prefill(req):
        T = req["T"]
        ids = torch.randint(0, 32000, (T,), device="cuda")
        c, s = cos[:T], sin[:T]
        x = emb(ids)
        store = []
        for ly in layers:
            h = ly.n1(x)
            qn, qr = ly.q(h).view(T, H, nope + rp).split([nope, rp], -1)
            qr = _rope(qr, c[:, None], s[:, None])
            lt, kr = ly.kva(h).split([lat, rp], -1)
            lt, kr = ly.kvn(lt), _rope(kr, c, s)
            store.append(torch.cat([lt, kr], -1))
            kn, v = ly.kvb(lt).view(T, H, nope + vd).split([nope, vd], -1)
            k = torch.cat([kn, kr[:, None].expand(T, H, rp)], -1)
            a = f.scaled_dot_product_attention(torch.cat([qn, qr], -1).transpose(0, 1), k.transpose(0, 1),
                                               v.transpose(0, 1), is_causal=True)
            x = ly.mlp(x + ly.o(a.transpose(0, 1).reshape(T, H * vd)))
        full = torch.stack(store)  # (L, T, W)
        for p in range(-(-(T + 1) // page)):
            pg = torch.empty(L, page, W, device="cuda", dtype=torch.bfloat16)
            n = min(page, T - p * page)
            if n > 0:
                pg[:, :n] = full[:, p * page:p * page + n]
            req["pages"].append(pg)
        req["tok"] = head(norm(x[-1:])).argmax(-1)
        req["len"] = T

    def decode():
        B = len(running)
        lens = [r["len"] for r in running]
        P = -(-(max(lens) + 1) // page) * page
        G = torch.zeros(L, B, P, W, device="cuda", dtype=torch.bfloat16)
        for b, r in enumerate(running):
            for p, pg in enumerate(r["pages"]):
                G[:, b, p * page:(p + 1) * page] = pg
        pos = torch.tensor(lens, device="cuda")
        ar = torch.arange(B, device="cuda")
        live = torch.arange(P, device="cuda")[None, None, :] <= pos[:, None, None]
        bias = torch.zeros(B, 1, P, device="cuda", dtype=torch.bfloat16).masked_fill(~live, float("-inf"))
        cb, sb = cos[pos], sin[pos]
        x = emb(torch.cat([r["tok"] for r in running]))
        for i, ly in enumerate(layers):
            h = ly.n1(x)
            qn, qr = ly.q(h).view(B, H, nope + rp).split([nope, rp], -1)
            qr = _rope(qr, cb[:, None], sb[:, None])
            lt, kr = ly.kva(h).split([lat, rp], -1)
            G[i].index_put_((ar, pos), torch.cat([ly.kvn(lt), _rope(kr, cb, sb)], -1))
            latc, krc = G[i].split([lat, rp], -1)
            wb = ly.kvb.weight.view(H, nope + vd, lat)
            ql = torch.einsum("bhn,hnl->bhl", qn, wb[:, :nope])
            sc = (ql @ latc.transpose(1, 2) + qr @ krc.transpose(1, 2)) * scale + bias
            ol = sc.float().softmax(-1).to(torch.bfloat16) @ latc
            o = torch.einsum("bhl,hvl->bhv", ol, wb[:, nope:])
            x = ly.mlp(x + ly.o(o.reshape(B, H * vd)))
        nxt = head(norm(x)).argmax(-1)
        nxt.cpu()
        for b, r in enumerate(running):
            n = r["len"]
            if n % page == 0 and n // page >= len(r["pages"]):
                r["pages"].append(torch.empty(L, page, W, device="cuda", dtype=torch.bfloat16))
            r["pages"][n // page][:, n % page] = G[:, b, n]
            r["len"], r["tok"], r["left"] = n + 1, nxt[b:b + 1], r["left"] - 1

    with torch.inference_mode():
        for step in range(nsteps):
            for _ in range(_arrivals(rng, 0.32)):
                waiting.append({"T": _loguniform(rng, 16, _smoke(1500, 64)), "left": _loguniform(rng, 8, 256),
                                "pages": []})
            admitted = 0
            while waiting and len(running) < maxrun and admitted < 2:
                req = waiting.pop(0)
                prefill(req)
                running.append(req)
                admitted += 1
            if running:
                decode()
            running = [r for r in running if r["left"] > 0]
    torch.cuda.synchronize()


# ---------------------------------------------------------------- disaggregated prefill / decode


@_workload("disaggregated prefill and decode serving on one GPU, DistServe/Splitwise-style written by hand (random weights, bf16 under inference_mode; two CUDA streams): a 10-layer Llama-style decoder (width 1024, GQA 16/4 heads of 64, SwiGLU 2816, vocab 32000); requests arrive 0-3 a step (prompt 32-2000 tokens log-uniform, 8-200 new tokens); a prefill worker on a side stream takes up to 3 waiting requests a step, each run alone with causal SDPA (keys and values repeated to 16 heads) while its keys and values are written into a per-request buffer (layers, 2, 4 heads, prompt + new tokens rounded up to 64, 64) allocated on that stream; the decode worker on the compute stream waits on each finished prefill's event and record_stream's its buffer and first token before admitting it (up to 48 running); every decode step copies the running requests' caches into a batch tensor padded to the longest (a multiple of 64), writes each layer's new keys and values in by index_put, attends under a length mask, and copies the new entries back to the requests' buffers; greedy tokens copied back every step; buffers freed when requests end; 880 steps")
def disagg_pd_serve(rng):
    f = torch.nn.functional
    L, d, H, KV = _smoke(10, 2), _smoke(1024, 64), _smoke(16, 4), _smoke(4, 2)
    lm = _Lm(d, L, H, KV, _smoke(2816, 128)).cuda().to(torch.bfloat16).eval()
    dh, rep = lm.dh, H // KV
    cos, sin = _rope_tables(dh, 2304, 10000.0)
    side = torch.cuda.Stream()
    cur = torch.cuda.current_stream()
    nsteps = _smoke(880, 8)
    maxrun = _smoke(48, 3)
    waiting, inflight, running = [], [], []

    def prefill(req):
        T = req["T"]
        cap = -(-(T + req["left"] + 1) // 64) * 64
        with torch.cuda.stream(side):
            kvbuf = torch.zeros(L, 2, KV, cap, dh, device="cuda", dtype=torch.bfloat16)
            x = lm.emb(torch.randint(0, 32000, (T,), device="cuda"))
            c, s = cos[:T, None], sin[:T, None]
            for i, ly in enumerate(lm.layers):
                q, k, v = ly.qkv(x, c, s)
                kvbuf[i, 0, :, :T] = k.transpose(0, 1)
                kvbuf[i, 1, :, :T] = v.transpose(0, 1)
                a = f.scaled_dot_product_attention(q.transpose(0, 1), _repeat_kv(k.transpose(0, 1)[None], rep)[0],
                                                   _repeat_kv(v.transpose(0, 1)[None], rep)[0], is_causal=True)
                x = ly.mlp(x + ly.o(a.transpose(0, 1).reshape(T, H * dh)))
            tok = lm.head(lm.norm(x[-1:])).argmax(-1)
            ev = side.record_event()
        req.update(kv=kvbuf, tok=tok, len=T)
        inflight.append((req, ev))

    def decode():
        B = len(running)
        lens = [r["len"] for r in running]
        P = -(-(max(lens) + 1) // 64) * 64
        G = torch.zeros(L, 2, B, KV, P, dh, device="cuda", dtype=torch.bfloat16)
        for b, r in enumerate(running):
            n = min(P, r["kv"].shape[3])
            G[:, :, b, :, :n] = r["kv"][:, :, :, :n]
        pos = torch.tensor(lens, device="cuda")
        ar = torch.arange(B, device="cuda")
        live = (torch.arange(P, device="cuda")[None, :] <= pos[:, None])[:, None, None, :]
        c, s = cos[pos][:, None], sin[pos][:, None]
        x = lm.emb(torch.cat([r["tok"] for r in running]))
        for i, ly in enumerate(lm.layers):
            q, k, v = ly.qkv(x, c, s)
            G[i, 0][ar, :, pos] = k
            G[i, 1][ar, :, pos] = v
            a = f.scaled_dot_product_attention(q[:, :, None], _repeat_kv(G[i, 0], rep), _repeat_kv(G[i, 1], rep),
                                               attn_mask=live)
            x = ly.mlp(x + ly.o(a.reshape(B, H * dh)))
        nxt = lm.head(lm.norm(x)).argmax(-1)
        nxt.cpu()
        for b, r in enumerate(running):
            n = r["len"]
            r["kv"][:, :, :, n] = G[:, :, b, :, n]
            r["len"], r["tok"], r["left"] = n + 1, nxt[b:b + 1], r["left"] - 1

    with torch.inference_mode():
        for step in range(nsteps):
            for _ in range(_arrivals(rng, 0.4)):
                waiting.append({"T": _loguniform(rng, 32, _smoke(2000, 64)), "left": _loguniform(rng, 8, 200)})
            while inflight and len(running) < maxrun:
                req, ev = inflight.pop(0)
                cur.wait_event(ev)
                req["kv"].record_stream(cur)
                req["tok"].record_stream(cur)
                running.append(req)
            for _ in range(min(3, len(waiting))):
                if len(inflight) + len(running) >= maxrun + 4:
                    break
                prefill(waiting.pop(0))
            if running:
                decode()
            running = [r for r in running if r["left"] > 0]
    torch.cuda.synchronize()


# ---------------------------------------------------------------- best-of-n sampling over a paged pool


@_workload("best-of-n parallel sampling over a paged KV pool with prefix sharing and copy-on-write, vLLM-style written by hand (random weights, bf16 under inference_mode): an 8-layer Llama-style decoder (width 1024, GQA 16/8 heads of 64, SwiGLU 2816, vocab 32000) and a linear reward head; one K and one V pool preallocated (layers x 4096 blocks of 16 tokens x 8 heads x 64), a host free list and reference counts; 8 waves, each a system prompt of 64-512 tokens (whole blocks) prefilled once and shared by the wave's 1-4 requests (drawn), each request a prompt of 16-1024 tokens (log-uniform) prefilled against the shared blocks (explicit offset-causal mask) and n = 2, 4 or 8 samples (drawn) sharing the request's blocks; a sample's first write into a shared partial block copies it to a fresh block (copy-on-write, the last owner keeps it); every decode step writes each live sample's keys and values into its slot by index_copy_, gathers its blocks through a padded block table into a (samples, blocks x 16, 8, 64) tensor per layer and attends under a length mask; temperature-0.8 Gumbel-max sampling, tokens copied back every step; samples stop at their own drawn lengths (16-192) and free their blocks; at the wave's end the samples' last hidden states are scored by the reward head and each request's best sample index read back")
def paged_cow_bestofn(rng):
    f = torch.nn.functional
    L, d, H, KV = _smoke(8, 2), _smoke(1024, 64), _smoke(16, 4), _smoke(8, 2)
    lm = _Lm(d, L, H, KV, _smoke(2816, 128)).cuda().to(torch.bfloat16).eval()
    reward = torch.nn.Linear(d, 1).cuda().to(torch.bfloat16)
    dh, rep, BS = lm.dh, H // KV, 16
    NB = _smoke(4096, 256)
    kpool = torch.zeros(L, NB * BS, KV, dh, device="cuda", dtype=torch.bfloat16)
    vpool = torch.zeros_like(kpool)
    cos, sin = _rope_tables(dh, 2048, 10000.0)
    free = list(range(NB))
    refs = [0] * NB
    nwaves = _smoke(8, 2)

    def alloc():
        blk = free.pop()
        refs[blk] = 1
        return blk

    def release(blk):
        refs[blk] -= 1
        if refs[blk] == 0:
            free.append(blk)

    def slots_of(blocks, start, n):
        return torch.tensor([blocks[(start + j) // BS] * BS + (start + j) % BS for j in range(n)], device="cuda")

    def prefill(ids, blocks, prefix_blocks, plen):
        T = ids.shape[0]
        x = lm.emb(ids)
        c, s = cos[plen:plen + T, None], sin[plen:plen + T, None]
        slots = slots_of(blocks, plen, T)
        pslots = slots_of(prefix_blocks, 0, plen) if plen else None
        mask = None
        if plen:
            mask = torch.arange(plen + T, device="cuda")[None, :] <= torch.arange(T, device="cuda")[:, None] + plen
        for i, ly in enumerate(lm.layers):
            q, k, v = ly.qkv(x, c, s)
            kpool[i].index_copy_(0, slots, k)
            vpool[i].index_copy_(0, slots, v)
            if plen:
                k = torch.cat([kpool[i][pslots], k])
                v = torch.cat([vpool[i][pslots], v])
            kk = _repeat_kv(k.transpose(0, 1)[None], rep)[0]
            vv = _repeat_kv(v.transpose(0, 1)[None], rep)[0]
            a = f.scaled_dot_product_attention(q.transpose(0, 1), kk, vv, attn_mask=mask, is_causal=mask is None)
            x = ly.mlp(x + ly.o(a.transpose(0, 1).reshape(T, H * dh)))
        return lm.norm(x[-1:])

    with torch.inference_mode():
        for wave in range(nwaves):
            sp = rng.randint(4, _smoke(32, 4)) * BS
            sys_blocks = [alloc() for _ in range(sp // BS)]
            prefill(torch.randint(0, 32000, (sp,), device="cuda"), sys_blocks, [], 0)
            samples, groups = [], []
            for r in range(rng.randint(1, 4)):
                T = _loguniform(rng, 16, _smoke(1024, 48))
                own = [alloc() for _ in range(-(-(sp + T) // BS) - len(sys_blocks))]
                blocks = sys_blocks + own
                hlast = prefill(torch.randint(0, 32000, (T,), device="cuda"), blocks, sys_blocks, sp)
                tok = lm.head(hlast).argmax(-1)
                n = rng.choice([2, 4, 8])
                for blk in blocks:
                    refs[blk] += n
                for blk in own:
                    refs[blk] -= 1  # the request's own hold passes to its samples
                groups.append(len(samples))
                for _ in range(n):
                    samples.append({"blocks": list(blocks), "len": sp + T, "tok": tok,
                                    "left": rng.randint(16, _smoke(192, 20)), "h": hlast[0]})
            for blk in sys_blocks:
                release(blk)  # the wave's hold on the system prompt
            done = []
            live = list(samples)
            while live:
                B = len(live)
                slots = []
                for sm in live:
                    n = sm["len"]
                    if n % BS == 0:
                        sm["blocks"].append(alloc())
                    else:
                        blk = sm["blocks"][n // BS]
                        if refs[blk] > 1:  # copy-on-write of a shared partial block
                            new = alloc()
                            release(blk)
                            sm["blocks"][n // BS] = new
                            kpool[:, new * BS:(new + 1) * BS] = kpool[:, blk * BS:(blk + 1) * BS]
                            vpool[:, new * BS:(new + 1) * BS] = vpool[:, blk * BS:(blk + 1) * BS]
                    slots.append(sm["blocks"][n // BS] * BS + n % BS)
                nb = max(len(sm["blocks"]) for sm in live)
                table = torch.tensor([sm["blocks"] + [0] * (nb - len(sm["blocks"])) for sm in live], device="cuda")
                idx = (table[:, :, None] * BS + torch.arange(BS, device="cuda")).view(B, nb * BS)
                pos = torch.tensor([sm["len"] for sm in live], device="cuda")
                slot_t = torch.tensor(slots, device="cuda")
                mask = (torch.arange(nb * BS, device="cuda")[None, :] <= pos[:, None])[:, None, None, :]
                c, s = cos[pos][:, None], sin[pos][:, None]
                x = lm.emb(torch.cat([sm["tok"] for sm in live]))
                for i, ly in enumerate(lm.layers):
                    q, k, v = ly.qkv(x, c, s)
                    kpool[i].index_copy_(0, slot_t, k)
                    vpool[i].index_copy_(0, slot_t, v)
                    kg = kpool[i][idx].transpose(1, 2)
                    vg = vpool[i][idx].transpose(1, 2)
                    a = f.scaled_dot_product_attention(q[:, :, None], _repeat_kv(kg, rep), _repeat_kv(vg, rep),
                                                       attn_mask=mask)
                    x = ly.mlp(x + ly.o(a.reshape(B, H * dh)))
                h = lm.norm(x)
                logits = lm.head(h).float() / 0.8
                u = torch.rand_like(logits).clamp_(1e-6, 1 - 1e-6)
                nxt = (logits - torch.log(-torch.log(u))).argmax(-1)
                nxt.cpu()
                still = []
                for b, sm in enumerate(live):
                    sm["len"], sm["tok"], sm["left"], sm["h"] = sm["len"] + 1, nxt[b:b + 1], sm["left"] - 1, h[b]
                    if sm["left"] > 0:
                        still.append(sm)
                    else:
                        for blk in sm["blocks"]:
                            release(blk)
                        sm["blocks"] = []
                        done.append(sm)
                live = still
            scores = reward(torch.stack([sm["h"] for sm in samples])).float()[:, 0]
            bounds = groups + [len(samples)]
            torch.stack([scores[bounds[g]:bounds[g + 1]].argmax() for g in range(len(groups))]).cpu()
            del samples, done, scores
    torch.cuda.synchronize()


# ---------------------------------------------------------------- streaming generation with attention sinks


@_workload("streaming multi-turn generation with attention sinks and a rolling KV window, StreamingLLM-style (Xiao et al. 2024; HF's SinkCache) written by hand (random weights, bf16 under inference_mode): a 10-layer multi-query decoder (width 1024, 16 query heads sharing one KV head of 64, SwiGLU 2816, vocab 32000); 5 batches of 1-8 streams (drawn) with a window of 252, 508 or 1020 recent tokens plus 4 sink tokens (drawn per batch) and 3-8 turns (drawn), each turn a user message of 16-256 tokens (log-uniform) prefilled in one chunk against the cache (explicit offset-causal mask), then 16-64 generated tokens (drawn, greedy, copied back every token); keys cached before rotation and rotated at their positions inside the cache on every forward (the whole cache re-rotated, as StreamingLLM does), caches grown by torch.cat and, once over budget, cut to the sinks plus the most recent window by torch.cat; keys and values repeated to 16 heads for SDPA")
def streaming_sink_serve(rng):
    f = torch.nn.functional
    L, d, H = _smoke(10, 2), _smoke(1024, 64), _smoke(16, 4)
    lm = _Lm(d, L, H, 1, _smoke(2816, 128)).cuda().to(torch.bfloat16).eval()
    dh, sinks = lm.dh, 4
    cos, sin = _rope_tables(dh, 1400, 10000.0)
    nbatches = _smoke(5, 2)

    def forward(ids, cache):
        B, T = ids.shape
        n = cache[0][0].shape[2] if cache[0] is not None else 0
        x = lm.emb(ids)
        cq, sq = cos[n:n + T, None], sin[n:n + T, None]
        ck, sk = cos[:n + T], sin[:n + T]
        mask = None
        if T > 1:
            mask = torch.arange(n + T, device="cuda")[None, :] <= torch.arange(T, device="cuda")[:, None] + n
        for i, ly in enumerate(lm.layers):
            h = ly.n1(x)
            q = _rope(ly.q(h).view(B, T, H, dh), cq, sq).transpose(1, 2)
            k, v = ly.kv(h).view(B, T, 2, dh).transpose(1, 2).chunk(2, 1)  # (B, 1, T, dh) each, unrotated
            if cache[i] is not None:
                k, v = torch.cat([cache[i][0], k], 2), torch.cat([cache[i][1], v], 2)
            cache[i] = (k, v)
            kr = _rope(k, ck, sk)
            a = f.scaled_dot_product_attention(q, _repeat_kv(kr, H), _repeat_kv(v, H), attn_mask=mask)
            x = ly.mlp(x + ly.o(a.transpose(1, 2).reshape(B, T, H * dh)))
        return lm.head(lm.norm(x[:, -1])).argmax(-1, keepdim=True)

    def evict(cache, window):
        for i, (k, v) in enumerate(cache):
            if k.shape[2] > sinks + window:
                cache[i] = (torch.cat([k[:, :, :sinks], k[:, :, -window:]], 2),
                            torch.cat([v[:, :, :sinks], v[:, :, -window:]], 2))

    with torch.inference_mode():
        for _ in range(nbatches):
            B = rng.randint(1, _smoke(8, 2))
            window = rng.choice([252, 508, 1020]) if _smoke(1, 0) else 28
            cache = [None] * L
            for turn in range(rng.randint(_smoke(3, 1), _smoke(8, 2))):
                m = _loguniform(rng, 16, _smoke(256, 24))
                tok = forward(torch.randint(0, 32000, (B, m), device="cuda"), cache)
                evict(cache, window)
                for _ in range(rng.randint(16, _smoke(64, 18))):
                    tok.cpu()
                    tok = forward(tok, cache)
                    evict(cache, window)
            del cache, tok
    torch.cuda.synchronize()

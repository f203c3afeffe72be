"""The eighty-eighth batch of held-out workloads for record.py, second half (see batch88.py): hospitality, travel and
tourism, written in torch alone. A travel-assistant serving loop (a decoder-only transformer answering travellers'
questions in short greedy answers from a preallocated KV cache, prompts of drawn lengths left-padded and masked), a
landmark retrieval service (an EfficientNet-style MBConv embedder over query photographs of drawn resolutions in
requests of drawn sizes, GeM pooling, a search of a gallery of landmark embeddings with query expansion), flight-fare
forecasting training by diffusion (a DiffWave-style denoiser of future fare curves conditioned on a transformer
encoding of each route's booking history of drawn length) and a tourist-flow simulation (a message-passing surrogate
over a city's points of interest linked to their nearest neighbours, rolled out hour by hour, visitors moved along the
edges by index_add under capacity limits).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the two services), `rng` the workload's random.Random for every shape, count and sampled choice,
sizes through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or
masked_fill; no boolean-mask indexing; results read back only at logging points or once per request.
travel_assistant_kv_serve and landmark_retrieval_serve upload their inputs on a side stream (two reused pinned host
buffers, one request ahead, the main stream waiting on an event, the tensors record_stream'ed, as
workload_helpers.SideUploads does); the other two are single-stream. Models run under bf16 autocast. Every table is
sized for the largest index that can be drawn.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _loguniform(rng, lo, hi, mult=1):
    return _b.rec._loguniform(rng, lo, hi, mult)


# ---------------------------------------------------------------- travel assistant serving (KV cache)


class _DecoderLM(_nn.Module):
    """A GPT-style decoder (learned positions, pre-norm, fused qkv, GELU MLP, tied output) whose attention reads and
    writes a preallocated per-request KV cache."""

    def __init__(self, vocab, d, heads, layers, max_pos):
        super().__init__()
        self.tok, self.pos = _nn.Embedding(vocab, d), _nn.Embedding(max_pos, d)
        self.n1 = _nn.ModuleList(_nn.LayerNorm(d) for _ in range(layers))
        self.n2 = _nn.ModuleList(_nn.LayerNorm(d) for _ in range(layers))
        self.qkv = _nn.ModuleList(_nn.Linear(d, 3 * d) for _ in range(layers))
        self.proj = _nn.ModuleList(_nn.Linear(d, d) for _ in range(layers))
        self.fc1 = _nn.ModuleList(_nn.Linear(d, 4 * d) for _ in range(layers))
        self.fc2 = _nn.ModuleList(_nn.Linear(4 * d, d) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.heads = heads

    def forward(self, ids, pos, cache_k, cache_v, start, mask):
        """ids, pos (B, T); the new keys and values written at [start, start + T) of the caches (L, B, H, S, dh);
        attention over [0, start + T) under mask (B, 1, T, start + T)."""
        b, t = ids.shape
        x = self.tok(ids) + self.pos(pos)
        end = start + t
        for i in range(len(self.qkv)):
            q, k, v = self.qkv[i](self.n1[i](x)).view(b, t, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
            cache_k[i, :, :, start:end] = k
            cache_v[i, :, :, start:end] = v
            a = _F.scaled_dot_product_attention(q, cache_k[i, :, :, :end], cache_v[i, :, :, :end], attn_mask=mask)
            x = x + self.proj[i](a.transpose(1, 2).reshape(b, t, -1))
            x = x + self.fc2[i](_F.gelu(self.fc1[i](self.n2[i](x))))
        return self.norm(x[:, -1]) @ self.tok.weight.t()


@_workload("travel-assistant serving (random init, a GPT-style decoder-only model with a KV cache): 44-48 requests (drawn) of 1-16 prompts each (log-uniform), each prompt of its own length of 24-448 tokens (drawn per prompt, left-padded to the request's longest and masked) over a 32,000-token vocabulary; the int32 prompt ids uploaded on a side stream from two reused pinned host buffers (filled once) one request ahead (waited on by event, record_stream'ed); a 6-layer decoder (width 512, 8 heads, tied output, learned positions of 512 rows: positions count from each prompt's first real token, so at most 447 + 63) under bf16 autocast; a prefill of the whole prompt under a causal-and-padding mask writing a preallocated bf16 KV cache sized for the prompt and the new tokens, then 16-64 new tokens (drawn per request) decoded greedily one at a time, each step attending over the cache under the padding mask; each request's generated tokens read back")
def travel_assistant_kv_serve(rng):
    vocab, d, heads, layers = _smoke(32000, 300), _smoke(512, 32), _smoke(8, 2), _smoke(6, 1)
    max_prompt, new_range = _smoke(448, 24), _smoke((16, 64), (2, 4))
    max_pos = _smoke(512, 28)
    maxb = _smoke(16, 3)
    model = _DecoderLM(vocab, d, heads, layers, max_pos).cuda().eval()
    model.requires_grad_(False)
    dh = d // heads
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(2, vocab, (maxb * max_prompt,), dtype=torch.int32, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    nreq = rng.randint(_smoke(44, 3), _smoke(48, 4))
    plan = []
    for _ in range(nreq):
        b = _loguniform(rng, 1, maxb)
        plan.append(([rng.randint(_smoke(24, 4), max_prompt) for _ in range(b)], rng.randint(*new_range)))

    def span(i):
        lens, _ = plan[i]
        return len(lens) * max(lens)

    nxt = up.upload(0, span(0))
    for i in range(nreq):
        lens, n_new = plan[i]
        b, p = len(lens), max(lens)
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, span(i + 1))
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            ln = torch.tensor(lens, device="cuda")
            ar = torch.arange(p, device="cuda")
            real = ar[None] >= (p - ln)[:, None]  # left padding
            ids = raw.view(b, p).long().masked_fill(~real, 0)
            pos = (ar[None] - (p - ln)[:, None]).clamp(min=0)
            total = p + n_new
            dt = model.qkv[0](torch.zeros(1, d, device="cuda")).dtype  # the compute dtype: bf16 under autocast
            cache_k = torch.zeros(layers, b, heads, total, dh, device="cuda", dtype=dt)
            cache_v = torch.zeros_like(cache_k)
            causal = torch.ones(p, p, dtype=torch.bool, device="cuda").tril()
            mask = causal[None, None] & (real[:, None, None, :] | torch.eye(p, dtype=torch.bool, device="cuda")[None, None])
            logits = model(ids, pos, cache_k, cache_v, 0, mask)
            tok = logits.argmax(-1)
            out = [tok]
            key_ok = torch.cat([real, torch.ones(b, n_new, dtype=torch.bool, device="cuda")], 1)
            last_pos = pos[:, -1]
            for s in range(n_new - 1):
                logits = model(tok[:, None], (last_pos + 1 + s)[:, None], cache_k, cache_v, p + s,
                               key_ok[:, None, None, :p + s + 1])
                tok = logits.argmax(-1)
                out.append(tok)
            answer = torch.stack(out, 1)
        answer.tolist()
        del item, raw, dt, ln, ar, real, ids, pos, cache_k, cache_v, causal, mask, logits, tok, out, key_ok, last_pos, answer


# ---------------------------------------------------------------- landmark retrieval service (MBConv + GeM)


class _MBConv(_nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        mid = cin * expand
        self.exp = _nn.Sequential(_nn.Conv2d(cin, mid, 1, bias=False), _nn.BatchNorm2d(mid), _nn.SiLU())
        self.dw = _nn.Sequential(_nn.Conv2d(mid, mid, 3, stride, 1, groups=mid, bias=False), _nn.BatchNorm2d(mid),
                                 _nn.SiLU())
        self.se1, self.se2 = _nn.Conv2d(mid, max(8, cin // 4), 1), _nn.Conv2d(max(8, cin // 4), mid, 1)
        self.out = _nn.Sequential(_nn.Conv2d(mid, cout, 1, bias=False), _nn.BatchNorm2d(cout))
        self.res = stride == 1 and cin == cout

    def forward(self, x):
        y = self.dw(self.exp(x))
        y = y * torch.sigmoid(self.se2(_F.silu(self.se1(y.mean((2, 3), keepdim=True)))))
        y = self.out(y)
        return x + y if self.res else y


class _LandmarkNet(_nn.Module):
    def __init__(self, stages, dim):
        super().__init__()
        c0 = stages[0][0]
        self.stem = _nn.Sequential(_nn.Conv2d(3, c0, 3, 2, 1, bias=False), _nn.BatchNorm2d(c0), _nn.SiLU())
        blocks, c = [], c0
        for cout, n, stride in stages:
            for j in range(n):
                blocks.append(_MBConv(c, cout, stride if j == 0 else 1, 1 if c == c0 and j == 0 and cout == c0 else 4))
                c = cout
        self.blocks = _nn.Sequential(*blocks)
        self.head = _nn.Sequential(_nn.Conv2d(c, 4 * c, 1, bias=False), _nn.BatchNorm2d(4 * c), _nn.SiLU())
        self.p = _nn.Parameter(torch.tensor(3.0))
        self.proj = _nn.Linear(4 * c, dim)

    def forward(self, x):
        f = self.head(self.blocks(self.stem(x))).float()
        gem = f.clamp(min=1e-6).pow(self.p).mean((2, 3)).pow(1.0 / self.p)
        return _F.normalize(self.proj(gem).float(), dim=-1)


@_workload("landmark retrieval serving (random init, an image embedder with gallery search): 900-930 requests (drawn) of 1-24 query photographs each (log-uniform) at one of 224 x 224, 256 x 320, 320 x 256, 288 x 384 or 384 x 288 (drawn per request); the uint8 pixels uploaded on a side stream from two reused pinned host buffers (filled once) one request ahead (waited on by event, record_stream'ed); normalisation, a channels-last EfficientNet-style embedder (a stride-2 stem of 32 channels, 12 MBConv blocks with squeeze-excitation over 32-48-80-128-192 channels, batch norm, SiLU) under bf16 autocast, a 768-channel head, GeM pooling and a 256-d L2-normalised projection; cosine search of a gallery of 120,000 random bf16 embeddings (built on the device at the start, each mapped to one of 9,000 landmarks by a lookup table), top-50 neighbours, alpha query expansion over the top-10 and a second full search, the top-10 photos' landmark ids and scores and a per-landmark vote over them (scatter_add into a request x 9,000 table); each request's landmark ids and scores read back")
def landmark_retrieval_serve(rng):
    stages = _smoke([(32, 1, 1), (48, 2, 2), (80, 3, 2), (128, 3, 2), (192, 3, 2)], [(8, 1, 1), (8, 1, 2), (16, 1, 2)])
    dim, n_gal, n_land = _smoke(256, 16), _smoke(120000, 500), _smoke(9000, 40)
    model = _LandmarkNet(stages, dim).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    resolutions = _smoke([(224, 224), (256, 320), (320, 256), (288, 384), (384, 288)], [(64, 64), (64, 96)])
    maxb = _smoke(24, 2)
    npix = maxb * 3 * max(h * w for h, w in resolutions)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (npix,), dtype=torch.uint8, generator=gen).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    gallery = _F.normalize(torch.randn(n_gal, dim, device="cuda"), dim=-1).to(torch.bfloat16)
    photo_land = torch.randint(0, n_land, (n_gal,), device="cuda")
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1) * 255
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1) * 255
    nreq = rng.randint(_smoke(900, 3), _smoke(930, 4))
    plan = [(_loguniform(rng, 1, maxb), rng.choice(resolutions)) for _ in range(nreq)]
    k, k_qe = _smoke(50, 8), _smoke(10, 4)

    nxt = up.upload(0, plan[0][0] * 3 * plan[0][1][0] * plan[0][1][1])
    for i in range(nreq):
        b, (h, w) = plan[i]
        item = nxt
        if i + 1 < nreq:
            bn, (hn, wn) = plan[i + 1]
            nxt = up.upload(i + 1, bn * 3 * hn * wn)
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            x = ((raw.view(b, 3, h, w).float() - mean) / std).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                q = model(x)
            sim = (q.to(torch.bfloat16) @ gallery.t()).float()
            top, idx = sim.topk(k, -1)
            wts = top[:, :k_qe].clamp(min=0).pow(3.0)
            nb = gallery[idx[:, :k_qe]].float()
            q2 = _F.normalize(q + (wts[..., None] * nb).sum(1), dim=-1)
            sim2 = (q2.to(torch.bfloat16) @ gallery.t()).float()
            top2, idx2 = sim2.topk(k_qe, -1)
            land = photo_land[idx2]
            votes = torch.zeros(b, n_land, device="cuda").scatter_add_(1, land, top2.clamp(min=0))
            best_score, best_land = votes.max(-1)
            out = torch.cat([land.float(), top2, best_land.float()[:, None], best_score[:, None]], 1)
        out.tolist()
        del item, raw, x, q, sim, top, idx, wts, nb, q2, sim2, top2, idx2, land, votes, best_score, best_land, out


# ---------------------------------------------------------------- flight-fare forecasting by diffusion


class _FareDenoiser(_nn.Module):
    """DiffWave-style residual layers (dilated conv, gated tanh/sigmoid, skip sums) over the future fare curve,
    conditioned on the diffusion step (sinusoidal features), route, cabin and a transformer encoding of the route's
    booking history pooled under its mask."""

    def __init__(self, c, dilations, n_hist_feat, d_hist, heads, hist_layers, max_hist, n_routes):
        super().__init__()
        self.inp = _nn.Conv1d(1, c, 1)
        self.t_mlp = mlp(128, 4 * c, c, act=_nn.SiLU)
        self.route, self.cabin = _nn.Embedding(n_routes, d_hist), _nn.Embedding(4, d_hist)
        self.h_in, self.h_pos = _nn.Linear(n_hist_feat, d_hist), _nn.Embedding(max_hist, d_hist)
        self.h_blocks = _nn.ModuleList(PreNormBlock(d_hist, heads) for _ in range(hist_layers))
        self.cond = _nn.Linear(d_hist, c)
        self.dil = _nn.ModuleList(_nn.Conv1d(c, 2 * c, 3, padding=dd, dilation=dd) for dd in dilations)
        self.cproj = _nn.ModuleList(_nn.Linear(c, 2 * c) for _ in dilations)
        self.out = _nn.ModuleList(_nn.Conv1d(c, 2 * c, 1) for _ in dilations)
        self.skip = _nn.Sequential(_nn.Conv1d(c, c, 1), _nn.ReLU(), _nn.Conv1d(c, 1, 1))

    def encode(self, hist, keep, route, cabin):
        t = hist.shape[1]
        x = self.h_in(hist) + self.h_pos(torch.arange(t, device=hist.device))[None]
        for blk in self.h_blocks:
            x = blk(x, mask=keep[:, None, None, :])
        w = keep.to(x.dtype)[..., None]
        return self.cond((x * w).sum(1) / w.sum(1) + self.route(route) + self.cabin(cabin))

    def forward(self, y, t_feat, cond):
        x = _F.relu(self.inp(y))
        c = cond + self.t_mlp(t_feat)
        skip = 0
        for dil, cp, out in zip(self.dil, self.cproj, self.out):
            z = dil(x) + cp(c)[:, :, None]
            a, g = z.chunk(2, 1)
            r, s = out(torch.tanh(a) * torch.sigmoid(g)).chunk(2, 1)
            x = (x + r) / math.sqrt(2)
            skip = skip + s
        return self.skip(skip / math.sqrt(len(self.dil)))


@_workload("flight-fare forecasting training by diffusion (random init, a DiffWave-style denoiser conditioned on a history transformer): 128-512 route-departures a step (log-uniform, a multiple of 32), each with its own booking history of 14-120 days (drawn per departure, right-padded to the step's longest and masked) of 10 random features; route (5,000) and cabin (4) embeddings and a 2-block pre-norm transformer history encoder (width 128, 4 heads, a 120-row position table) pooled under the mask; a DiffWave-style denoiser (64 channels, 10 residual layers of dilated convolution, dilations 1-16 cycled twice, gated activations, skip sums) of a 64-day curve (a random walk drawn on the device), with 128 sinusoidal features of the diffusion step (1,000-step linear schedule, steps drawn per series on the device and their alpha-bar gathered); epsilon MSE, AdamW, clipping, bf16 autocast, 360 steps; the loss read back every 20 steps and every 90 steps a 25-step DDIM sampling of 256 departures with 120-day histories, the 10/50/90% quantiles of the sampled curve at days 7, 21 and 63 read back")
def flight_fare_diffusion_train(rng):
    c, d_hist, heads, hist_layers = _smoke(64, 8), _smoke(128, 16), _smoke(4, 2), _smoke(2, 1)
    dilations = _smoke([1, 2, 4, 8, 16] * 2, [1, 2])
    n_feat, n_routes, max_hist, horizon, T = 10, _smoke(5000, 30), _smoke(120, 16), _smoke(64, 8), 1000
    model = _FareDenoiser(c, dilations, n_feat, d_hist, heads, hist_layers, max_hist, n_routes).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    betas = torch.linspace(1e-4, 0.02, T, device="cuda")
    abar = torch.cumprod(1 - betas, 0)

    def departures(lengths):
        b, t = len(lengths), max(lengths)
        keep = torch.arange(t, device="cuda")[None] < torch.tensor(lengths, device="cuda")[:, None]
        hist = torch.randn(b, t, n_feat, device="cuda") * keep[..., None]
        route = torch.randint(0, n_routes, (b,), device="cuda")
        cabin = torch.randint(0, 4, (b,), device="cuda")
        return hist, keep, route, cabin

    steps = _smoke(360, 3)
    for step in range(steps):
        model.train()
        b = _loguniform(rng, _smoke(128, 4), _smoke(512, 8), _smoke(32, 4))
        lengths = [rng.randint(_smoke(14, 4), max_hist) for _ in range(b)]
        hist, keep, route, cabin = departures(lengths)
        y0 = torch.randn(b, 1, horizon, device="cuda").cumsum(-1) * 0.05
        tt = torch.randint(0, T, (b,), device="cuda")
        a = abar[tt][:, None, None]
        eps = torch.randn_like(y0)
        yt = a.sqrt() * y0 + (1 - a).sqrt() * eps
        with torch.autocast("cuda", dtype=torch.bfloat16):
            cond = model.encode(hist, keep, route, cabin)
            pred = model(yt, _b.rec._sincos(tt, 128), cond)
        loss = _F.mse_loss(pred.float(), eps)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.item()
        del hist, keep, route, cabin, y0, tt, a, eps, yt, cond, pred, loss
        if (step + 1) % _smoke(90, 2) == 0:
            model.eval()
            nb = _smoke(256, 4)
            ts = torch.linspace(T - 1, 0, _smoke(25, 3)).long().tolist()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                hist, keep, route, cabin = departures([max_hist] * nb)
                cond = model.encode(hist, keep, route, cabin)
                y = torch.randn(nb, 1, horizon, device="cuda")
                for j, t_ in enumerate(ts):
                    tv = torch.full((nb,), t_, device="cuda", dtype=torch.long)
                    e = model(y, _b.rec._sincos(tv, 128), cond).float()
                    a_t = abar[t_]
                    a_prev = abar[ts[j + 1]] if j + 1 < len(ts) else torch.ones((), device="cuda")
                    y0 = (y - (1 - a_t).sqrt() * e) / a_t.sqrt()
                    y = a_prev.sqrt() * y0 + (1 - a_prev).sqrt() * e
                idx = [min(q_, horizon - 1) for q_ in (6, 20, 62)]
                qv = y[:, 0, idx].float().quantile(torch.tensor([0.1, 0.5, 0.9], device="cuda"), 0)
            qv.tolist()
            del hist, keep, route, cabin, cond, y, tv, e, y0, qv


# ---------------------------------------------------------------- tourist-flow simulation (GNN surrogate)


class _FlowGNN(_nn.Module):
    """Edge-conditioned message passing over a kNN graph laid out as (N, k) neighbour indices: messages from
    neighbours gathered by index_select, aggregated by mean over k, a residual node update; heads giving each POI's
    leaving rate and a score per outgoing edge (softmax over the k neighbours)."""

    def __init__(self, n_feat, d, layers, n_types):
        super().__init__()
        self.enc = mlp(n_feat + 3, d, d, act=_nn.SiLU)
        self.kind = _nn.Embedding(n_types, d)
        self.edge = mlp(3, d, d, act=_nn.SiLU)
        self.msg = _nn.ModuleList(_nn.Linear(2 * d, d) for _ in range(layers))
        self.upd = _nn.ModuleList(mlp(2 * d, d, d, act=_nn.SiLU) for _ in range(layers))
        self.norm = _nn.ModuleList(_nn.LayerNorm(d) for _ in range(layers))
        self.leave = mlp(d, d, 1, act=_nn.SiLU)
        self.score = _nn.Linear(2 * d, 1)

    def forward(self, x, ptype, nbr, efeat_h):
        n, k = nbr.shape
        h = self.enc(x) + self.kind(ptype)
        flat = nbr.flatten()
        for msg, upd, norm in zip(self.msg, self.upd, self.norm):
            hj = h.index_select(0, flat).view(n, k, -1)
            m = _F.silu(msg(torch.cat([hj, efeat_h], -1))).mean(1)
            h = norm(h + upd(torch.cat([h, m], -1)))
        hj = h.index_select(0, flat).view(n, k, -1)
        s = self.score(torch.cat([h[:, None].expand(-1, k, -1), hj], -1))[..., 0]
        return torch.sigmoid(self.leave(h)[:, 0]).float(), s.float()


@_workload("tourist-flow simulation (random init, a graph-network surrogate): 75-80 scenarios (drawn), each a city of 2,000-9,000 points of interest (drawn per scenario, 8 types drawn at random) placed at random on the device, each linked to its 12 nearest neighbours (distances by an N x N cdist, topk), with 16 static features and a capacity per POI and edge features (offset, distance) encoded once; hourly rollouts of 24-72 hours (drawn per scenario) under no_grad: hourly features (hour-of-day sin/cos, occupancy ratio), a 3-layer edge-conditioned message-passing network (width 64, messages gathered by index_select over the (N, 12) neighbour table, mean aggregation, layer norm) under bf16 autocast giving each POI's leaving rate and a softmax over its 12 outgoing edges; visitors moved along the edges by index_add, arrivals at two of the types (hotels and hubs) from a drawn 24-hour profile, admissions capped at capacity by torch.minimum with half the overflow queued; the peak occupancy ratio per POI type and the POI-hours over 90% of capacity read back at the end of each scenario")
def tourist_flow_gnn_sim(rng):
    n_feat, d, layers, n_types, k = 16, _smoke(64, 8), _smoke(3, 1), 8, _smoke(12, 4)
    model = _FlowGNN(n_feat, d, layers, n_types).cuda().eval()
    model.requires_grad_(False)
    nscen = rng.randint(_smoke(75, 2), _smoke(80, 3))
    for _ in range(nscen):
        n = rng.randint(_smoke(2000, 30), _smoke(9000, 60))
        hours = rng.randint(_smoke(24, 3), _smoke(72, 5))
        start_hour = rng.randint(0, 23)
        with torch.no_grad():
            xy = torch.rand(n, 2, device="cuda") * 10.0
            dist = torch.cdist(xy, xy)
            dist = dist + torch.eye(n, device="cuda") * 1e6
            nd, nbr = dist.topk(k, -1, largest=False)
            del dist
            ptype = torch.randint(0, n_types, (n,), device="cuda")
            static = torch.randn(n, n_feat, device="cuda")
            cap = torch.rand(n, device="cuda") * 900 + 100
            occ = torch.rand(n, device="cuda") * cap * 0.3
            queue = torch.zeros(n, device="cuda")
            entry = ((ptype == 3) | (ptype == 7)).float()  # hotels and transit hubs
            profile = torch.rand(24, device="cuda") * 40
            delta = xy[nbr] - xy[:, None]
            efeat = torch.cat([delta, nd[..., None]], -1)
            peak = torch.zeros(n, device="cuda")
            crowded = torch.zeros((), device="cuda")
            flat = nbr.flatten()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                efeat_h = model.edge(efeat)
            for hr in range(hours):
                hod = (start_hour + hr) % 24
                ang = 2 * math.pi * hod / 24
                ratio = occ / cap
                x = torch.cat([static, ratio[:, None], torch.full((n, 2), 0.0, device="cuda")
                               + torch.tensor([math.sin(ang), math.cos(ang)], device="cuda")], -1)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    leave, s = model(x, ptype, nbr, efeat_h)
                share = torch.softmax(s, -1)
                out = occ * leave
                moved = (out[:, None] * share).flatten()
                inflow = torch.zeros(n, device="cuda").index_add_(0, flat, moved) + queue + entry * profile[hod]
                room = (cap - (occ - out)).clamp(min=0)
                admitted = torch.minimum(inflow, room)
                queue = (inflow - admitted) * 0.5
                occ = occ - out + admitted
                peak = torch.maximum(peak, occ / cap)
                crowded = crowded + (occ > 0.9 * cap).float().sum()
            by_type = torch.zeros(n_types, device="cuda").scatter_reduce_(0, ptype, peak, "amax", include_self=True)
            res = torch.cat([by_type, crowded[None]])
        res.tolist()
        del xy, nd, nbr, ptype, static, cap, occ, queue, entry, profile, delta, efeat, efeat_h, peak, crowded, flat
        del x, leave, s, share, out, moved, inflow, room, admitted, by_type, res

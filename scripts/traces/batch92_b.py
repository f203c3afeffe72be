"""The ninety-second batch of held-out workloads for record.py, second half (the first is batch92.py): real estate,
property and urban planning, written in torch alone. A floor-plan layout sampling service (a conditional diffusion
U-Net over room-type rasters of drawn sizes given the building outline, the entrance and the requested room counts,
DDIM with classifier-free guidance for a drawn number of steps), lease reading training (a layout-aware transformer
over OCR tokens of lease pages with word boxes, entity tags, the lease type and the rent-amount span), parcel-graph
land-value training (a graph attention network by index_select, scatter_reduce and index_add over drawn subgraphs of
adjacent parcels, parcel values, zoning changes and neighbourhood rents) and a listing-recommendation service (a
transformer over each user's drawn viewing history, retrieval over a catalogue of listings under price and bedroom
filters, a cross-feature ranker over the candidates). Same conventions as the earlier batches: nothing downloaded,
data drawn at random on the device (or in reused pinned host buffers for the recommendation service), `rng` the
workload's random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)` so that
RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: raster sizes, step counts, document lengths,
graph sizes, history lengths and batch sizes are fixed on the host, padding handled by masks multiplied in or by
torch.where / masked_fill, no boolean-mask indexing; losses and metrics are read back only at logging points or
once per request. listing_recommend_serve uploads its requests' histories and filters on a side stream (two reused
pinned host buffers, one request ahead, the main stream waiting on an event, the tensors record_stream'ed, through
workload_helpers.SideUploads); the other three are single-stream. The models run under bf16 autocast. Every
position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new92.sh's header.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, TimeResBlock, _sincos, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- floor-plan layout sampling (conditional DDIM)


class _PlanUNet(_nn.Module):
    """A 3-level U-Net of TimeResBlocks (two a level on the way down and up), self-attention at the lowest level;
    the noisy room channels, the outline and the entrance in; the timestep embedding plus an embedding of the
    requested room counts (zeroed for the unconditional half)."""

    def __init__(self, c_room, widths, temb, n_types, max_rooms):
        super().__init__()
        self.temb = temb
        self.t_mlp = mlp(temb, temb, temb, act=_nn.SiLU)
        self.count = _nn.Embedding(n_types * (max_rooms + 1), temb)
        self.register_buffer("count_off", torch.arange(n_types) * (max_rooms + 1))
        self.inp = _nn.Conv2d(c_room + 2, widths[0], 3, 1, 1)
        self.down, self.pool = _nn.ModuleList(), _nn.ModuleList()
        c = widths[0]
        for i, w in enumerate(widths):
            self.down.append(_nn.ModuleList([TimeResBlock(c, w, temb), TimeResBlock(w, w, temb)]))
            c = w
            self.pool.append(_nn.Conv2d(w, w, 3, 2, 1) if i < len(widths) - 1 else _nn.Identity())
        self.mid1, self.mid2 = TimeResBlock(c, c, temb), TimeResBlock(c, c, temb)
        self.attn = PreNormBlock(c, 4)
        self.up = _nn.ModuleList()
        for w in reversed(widths):
            self.up.append(_nn.ModuleList([TimeResBlock(c + w, w, temb), TimeResBlock(w, w, temb)]))
            c = w
        self.out = _nn.Sequential(_nn.GroupNorm(8, c), _nn.SiLU(), _nn.Conv2d(c, c_room, 3, 1, 1))

    def forward(self, x, cond, t, counts, use):
        te = self.t_mlp(_sincos(t, self.temb)) + self.count(counts + self.count_off).sum(1) * use[:, None]
        h = self.inp(torch.cat([x, cond], 1))
        skips = []
        for (a, b), p in zip(self.down, self.pool):
            h = b(a(h, te), te)
            skips.append(h)
            h = p(h)
        h = self.mid1(h, te)
        n, c, hh, ww = h.shape
        h = self.attn(h.flatten(2).transpose(1, 2)).transpose(1, 2).reshape(n, c, hh, ww)
        h = self.mid2(h, te)
        for i, (a, b) in enumerate(self.up):
            if i > 0:
                h = _F.interpolate(h, scale_factor=2, mode="nearest")
            h = b(a(torch.cat([h, skips[-1 - i]], 1), te), te)
        return self.out(h)


@_workload("floor-plan layout sampling service (random init, a conditional diffusion U-Net with DDIM and classifier-free guidance): 43-45 requests (drawn) of 1-8 plans each (drawn) at 64, 96 or 128 cells a side (drawn per request); each plan conditioned on a building outline (a union of 1-3 rectangles drawn on the host, rasterised on the device) and entrance cells (about 0.1% of the outline's cells, drawn on the device), and on requested counts of 10 room types (0-4 each, drawn; embedded and added to the timestep embedding, zeroed for the unconditional half); a U-Net of widths 64/128/256 (two TimeResBlocks a level each way, strided-convolution downsampling, nearest upsampling, a 4-head self-attention block at the lowest level) over 10 room-type channels plus the outline and entrance, the conditional and unconditional halves in one batch, guidance scale 3; 12-40 DDIM steps (drawn per request, eta 0, a linear beta schedule of 1,000 steps, timesteps on the host); rooms by argmax inside the outline (torch.where) and each plan's room areas (one-hot by comparison with an arange) read back once per request; bf16 autocast, no grad")
def floorplan_layout_ddim_serve(rng):
    c_room, widths, temb = 10, _smoke([64, 128, 256], [8, 16, 32]), _smoke(256, 32)
    n_types, max_rooms = c_room, 4
    model = _PlanUNet(c_room, widths, temb, n_types, max_rooms).cuda().eval()
    model.requires_grad_(False)
    betas = [1e-4 + (0.02 - 1e-4) * i / 999 for i in range(1000)]
    abar, acc = [], 1.0
    for beta in betas:
        acc *= 1 - beta
        abar.append(acc)
    sizes, guide = _smoke([64, 96, 128], [16, 32]), 3.0
    nreq = rng.randint(_smoke(43, 2), _smoke(45, 2))
    for _ in range(nreq):
        b, n, k = rng.randint(1, _smoke(8, 2)), rng.choice(sizes), rng.randint(_smoke(12, 2), _smoke(40, 3))
        rects = [[(rng.randint(0, n // 3), rng.randint(0, n // 3), rng.randint(n // 2, n), rng.randint(n // 2, n))
                  for _ in range(rng.randint(1, 3))] for _ in range(b)]
        with torch.no_grad():
            ys = torch.arange(n, device="cuda")[None, :, None]
            xs = torch.arange(n, device="cuda")[None, None, :]
            outline = torch.zeros(b, n, n, device="cuda")
            for j in range(3):
                box = torch.tensor([r[j] if j < len(r) else (0, 0, 0, 0) for r in rects], device="cuda")
                inside = (ys >= box[:, 0, None, None]) & (xs >= box[:, 1, None, None]) & \
                    (ys < box[:, 2, None, None]) & (xs < box[:, 3, None, None])
                outline = torch.maximum(outline, inside.float())
            entrance = (torch.rand(b, n, n, device="cuda") > 0.999).float() * outline
            cond = torch.stack([outline, entrance], 1)
            counts = torch.randint(0, max_rooms + 1, (b, n_types), device="cuda")
            use = torch.cat([torch.ones(b, device="cuda"), torch.zeros(b, device="cuda")])
            x = torch.randn(b, c_room, n, n, device="cuda")
            ts = [int(999 - i * 999 / (k - 1)) for i in range(k)] + [-1]
            for t, t_next in zip(ts[:-1], ts[1:]):
                a_t, a_n = abar[t], (abar[t_next] if t_next >= 0 else 1.0)
                tt = torch.full((2 * b,), t, device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    eps = model(torch.cat([x, x]), torch.cat([cond, cond]), tt, torch.cat([counts, counts]),
                                use).float()
                e_c, e_u = eps.chunk(2)
                e = e_u + guide * (e_c - e_u)
                x0 = ((x - math.sqrt(1 - a_t) * e) / math.sqrt(a_t)).clamp(-1, 1)
                x = math.sqrt(a_n) * x0 + math.sqrt(1 - a_n) * e
            rooms = torch.where(outline > 0, x.argmax(1), -1)
            types = torch.arange(c_room, device="cuda")[None, :, None, None]
            areas = (rooms[:, None] == types).float().sum((2, 3))
        areas.tolist()
        del ys, xs, outline, box, inside, entrance, cond, counts, use, x, tt, eps, e_c, e_u, e, x0, rooms, types, areas


# ---------------------------------------------------------------- lease reading (layout-aware transformer)


class _LeaseReader(_nn.Module):
    """LayoutLM-style embeddings (token, 1-d position, page, and x0/y0/x1/y1/width/height tables over a 0-1000
    grid), pre-norm blocks under a key mask; BIO entity tags, the lease type from the first token and rent-amount
    span start and end logits."""

    def __init__(self, vocab, d, heads, layers, max_pos, pages, n_tags, n_types):
        super().__init__()
        self.tok, self.pos, self.page = _nn.Embedding(vocab, d), _nn.Embedding(max_pos, d), _nn.Embedding(pages, d)
        self.x, self.y = _nn.Embedding(1001, d), _nn.Embedding(1001, d)
        self.w, self.h = _nn.Embedding(1001, d), _nn.Embedding(1001, d)
        self.ln = _nn.LayerNorm(d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.tags, self.kind, self.span = _nn.Linear(d, n_tags), mlp(d, d, n_types, act=_nn.GELU), _nn.Linear(d, 2)

    def forward(self, ids, page, box, keep):
        t = ids.shape[1]
        e = self.tok(ids) + self.pos(torch.arange(t, device=ids.device))[None] + self.page(page)
        e = e + self.x(box[..., 0]) + self.y(box[..., 1]) + self.x(box[..., 2]) + self.y(box[..., 3])
        e = e + self.w(box[..., 2] - box[..., 0]) + self.h(box[..., 3] - box[..., 1])
        x = _F.dropout(self.ln(e), 0.1, self.training)
        for blk in self.blocks:
            x = blk(x, mask=keep[:, None, None, :])
        x = self.norm(x)
        s = self.span(x).float().masked_fill(~keep[..., None], -1e4)
        return self.tags(x).float(), self.kind(x[:, 0]).float(), s[..., 0], s[..., 1]


@_workload("lease reading training (random init, a LayoutLM-style layout-aware transformer over OCR tokens of lease pages): 8-32 documents a step (drawn, at most 16,384 padded tokens), the step's longest of 64-512 tokens (drawn) and the others of 64 up to that (drawn per document), over a 30,000-token vocabulary (padded to the longest rounded up to a multiple of 64, position table of 512 rows), each document from 1-4 pages (drawn), with word boxes drawn on a 0-1000 grid (x0/y0/x1/y1, width and height tables of 1,001 rows); 8 pre-norm blocks (width 384, 6 heads) under a key mask; 37 BIO tags of 18 lease entities (cross-entropy on real tokens only), a 12-way lease type from the first token and rent-amount span start and end logits (padding masked by masked_fill, cross-entropy); AdamW with a linear warm-up of 40 steps and linear decay, clipping, bf16 autocast, 295 steps; the losses read back every 20 steps and every 74 steps a no-grad evaluation of 24 documents of 512 tokens with tag accuracy on entity tokens and span exact match read back")
def lease_layout_reader_train(rng):
    vocab, d, heads, layers = _smoke(30000, 300), _smoke(384, 32), _smoke(6, 2), _smoke(8, 1)
    max_tok, pages, n_tags, n_types = _smoke(512, 64), 4, 37, 12
    model = _LeaseReader(vocab, d, heads, layers, max_tok, pages, n_tags, n_types).cuda()
    steps = _smoke(295, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.01)
    warm = _smoke(40, 1)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / steps)))
    mult = _smoke(64, 16)

    def docs(lengths):
        b, t = len(lengths), -(-max(lengths) // mult) * mult
        keep = keep_mask(lengths, t)
        ids = torch.randint(2, vocab, (b, t), device="cuda").masked_fill(~keep, 0)
        page = (torch.arange(t, device="cuda")[None] * torch.randint(1, pages + 1, (b, 1), device="cuda")
                // t).clamp(max=pages - 1)
        x0 = torch.randint(0, 900, (b, t), device="cuda")
        y0 = torch.randint(0, 980, (b, t), device="cuda")
        box = torch.stack([x0, y0, (x0 + torch.randint(5, 100, (b, t), device="cuda")).clamp(max=1000),
                           (y0 + torch.randint(8, 20, (b, t), device="cuda")).clamp(max=1000)], -1)
        box = box.masked_fill(~keep[..., None], 0)
        tags = torch.where(torch.rand(b, t, device="cuda") < 0.8, 0, torch.randint(1, n_tags, (b, t), device="cuda"))
        tags = tags.masked_fill(~keep, -100)
        kind = torch.randint(0, n_types, (b,), device="cuda")
        ln = torch.tensor(lengths, device="cuda")
        start = (torch.rand(b, device="cuda") * (ln - 4).float()).long()
        end = start + torch.randint(0, 4, (b,), device="cuda")
        return ids, page, box, keep, tags, kind, start, end

    for step in range(steps):
        model.train()
        t_max = rng.randint(_smoke(64, 16), max_tok)
        b = rng.randint(_smoke(8, 2), max(_smoke(8, 2), min(_smoke(32, 4), _smoke(16384, 256) // (-(-t_max // mult)
                                                                                            * mult))))
        lengths = [rng.randint(_smoke(64, 8), t_max) for _ in range(b - 1)] + [t_max]
        ids, page, box, keep, tags, kind, start, end = docs(lengths)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            tag_log, kind_log, s_log, e_log = model(ids, page, box, keep)
        l_tag = _F.cross_entropy(tag_log.flatten(0, 1), tags.flatten(), ignore_index=-100)
        l_kind = _F.cross_entropy(kind_log, kind)
        l_span = (_F.cross_entropy(s_log, start) + _F.cross_entropy(e_log, end)) / 2
        loss = l_tag + l_kind + l_span
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            torch.stack([l_tag.detach(), l_kind.detach(), l_span.detach()]).tolist()
        del ids, page, box, keep, tags, kind, start, end, tag_log, kind_log, s_log, e_log, l_tag, l_kind, l_span, loss
        if (step + 1) % _smoke(74, 2) == 0:
            model.eval()
            with torch.no_grad():
                ids, page, box, keep, tags, kind, start, end = docs([max_tok] * _smoke(24, 2))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    tag_log, kind_log, s_log, e_log = model(ids, page, box, keep)
                ent = (tags > 0).float()
                acc = ((tag_log.argmax(-1) == tags).float() * ent).sum() / ent.sum().clamp(min=1)
                em = ((s_log.argmax(-1) == start) & (e_log.argmax(-1) == end)).float().mean()
                out = torch.stack([acc, em])
            out.tolist()
            del ids, page, box, keep, tags, kind, start, end, tag_log, kind_log, s_log, e_log, ent, acc, em, out


# ---------------------------------------------------------------- parcel-graph land value (graph attention)


class _ParcelAttention(_nn.Module):
    """Multi-head attention over each parcel's neighbours: queries from the receiver, keys and values from the
    sender and the edge features; a softmax per receiver by scatter_reduce (amax), exp and index_add; the
    weighted values summed by index_add; a residual MLP."""

    def __init__(self, d, d_edge, heads):
        super().__init__()
        self.h = heads
        self.q, self.kv, self.e = _nn.Linear(d, d), _nn.Linear(d, 2 * d), _nn.Linear(d_edge, 2 * d)
        self.o = _nn.Linear(d, d)
        self.n1, self.n2 = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.ff = mlp(d, 2 * d, d, act=_nn.GELU)

    def forward(self, x, src, dst, ef):
        n, d = x.shape
        hx = self.n1(x)
        q = self.q(hx).index_select(0, dst).view(-1, self.h, d // self.h)
        k, v = (self.kv(hx).index_select(0, src) + self.e(ef)).chunk(2, -1)
        k, v = k.reshape(-1, self.h, d // self.h), v.reshape(-1, self.h, d // self.h)
        logit = (q * k).sum(-1).float() / math.sqrt(d // self.h)
        top = torch.full((n, self.h), -1e4, device=x.device).scatter_reduce(
            0, dst[:, None].expand(-1, self.h), logit, "amax", include_self=True)
        ex = (logit - top.index_select(0, dst)).exp()
        den = torch.zeros(n, self.h, device=x.device).index_add_(0, dst, ex)
        alpha = ex / den.index_select(0, dst).clamp(min=1e-9)
        agg = torch.zeros(n, self.h, d // self.h, device=x.device).index_add_(0, dst, alpha[..., None] * v.float())
        x = x + self.o(agg.flatten(1).to(hx.dtype))
        return x + self.ff(self.n2(x))


class _ParcelGAT(_nn.Module):
    def __init__(self, n_num, n_zone, n_use, d_edge, d, heads, layers):
        super().__init__()
        self.inp = _nn.Linear(n_num, d)
        self.zone, self.use = _nn.Embedding(n_zone, d), _nn.Embedding(n_use, d)
        self.layers = _nn.ModuleList(_ParcelAttention(d, d_edge, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.value, self.change = _nn.Linear(d, 1), _nn.Linear(d, 1)
        self.hood = mlp(d, d, 1, act=_nn.GELU)

    def forward(self, num, zone, use, src, dst, ef, hood, n_hood):
        x = self.inp(num) + self.zone(zone) + self.use(use)
        for layer in self.layers:
            x = layer(x, src, dst, ef)
        x = self.norm(x)
        pooled = torch.zeros(n_hood, x.shape[1], device=x.device).index_add_(0, hood, x.float())
        size = torch.zeros(n_hood, device=x.device).index_add_(0, hood, torch.ones_like(hood, dtype=torch.float))
        pooled = pooled / size[:, None].clamp(min=1)
        return self.value(x)[:, 0].float(), self.change(x)[:, 0].float(), self.hood(pooled.to(x.dtype))[:, 0].float()


@_workload("parcel-graph land-value training (random init, a graph attention network by index_select, scatter_reduce and index_add): a drawn subgraph of 8,000-30,000 parcels a step with 3-6 adjacency edges per parcel (drawn per step; receivers drawn, senders nearby by a drawn index offset of 1-200, wrapped), 16 numeric parcel features, a zoning class of 24 and a land use of 12 (embedded), 4 edge features (shared frontage, centroid distance, same-street and same-block flags) drawn on the device; 4 layers (width 128, 4 heads) of pre-norm edge attention (keys and values from the sender and the edge, a per-receiver softmax by scatter_reduce amax, exp and index_add, values summed by index_add) with residual MLPs; a log land value per parcel (Huber on the 30% with a recent sale, masked), a zoning-change logit (binary cross-entropy with a positive weight of 8) and the median rent of 40-200 neighbourhoods (drawn per step, parcels assigned at random, mean-pooled by index_add, MSE); AdamW, clipping, bf16 autocast, 420 steps; the losses read back every 20 steps and every 105 steps a no-grad evaluation on a subgraph of 30,000 parcels with the value MAE and zoning-change accuracy read back")
def parcel_graph_value_train(rng):
    n_num, n_zone, n_use, d_edge = 16, 24, 12, 4
    d, heads, layers = _smoke(128, 16), 4, _smoke(4, 1)
    model = _ParcelGAT(n_num, n_zone, n_use, d_edge, d, heads, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    pos_w = torch.tensor(8.0, device="cuda")

    def graph(n, deg, n_hood):
        e = n * deg
        dst = torch.randint(0, n, (e,), device="cuda")
        src = (dst + torch.randint(1, min(200, n - 1) + 1, (e,), device="cuda")) % n
        ef = torch.cat([torch.rand(e, 2, device="cuda"), (torch.rand(e, 2, device="cuda") < 0.4).float()], 1)
        num = torch.randn(n, n_num, device="cuda")
        zone, use = torch.randint(0, n_zone, (n,), device="cuda"), torch.randint(0, n_use, (n,), device="cuda")
        hood = torch.randint(0, n_hood, (n,), device="cuda")
        value = 11 + torch.randn(n, device="cuda")
        sold = (torch.rand(n, device="cuda") < 0.3).float()
        change = (torch.rand(n, device="cuda") < 0.05).float()
        rent = 7 + 0.4 * torch.randn(n_hood, device="cuda")
        return num, zone, use, src, dst, ef, hood, value, sold, change, rent

    steps = _smoke(420, 3)
    for step in range(steps):
        model.train()
        n, deg, n_hood = rng.randint(_smoke(8000, 100), _smoke(30000, 300)), rng.randint(3, 6), \
            rng.randint(_smoke(40, 4), _smoke(200, 8))
        num, zone, use, src, dst, ef, hood, value, sold, change, rent = graph(n, deg, n_hood)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            v_hat, c_log, r_hat = model(num, zone, use, src, dst, ef, hood, n_hood)
        l_v = (_F.huber_loss(v_hat, value, reduction="none") * sold).sum() / sold.sum().clamp(min=1)
        l_c = _F.binary_cross_entropy_with_logits(c_log, change, pos_weight=pos_w)
        l_r = _F.mse_loss(r_hat, rent)
        loss = l_v + l_c + l_r
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_v.detach(), l_c.detach(), l_r.detach()]).tolist()
        del num, zone, use, src, dst, ef, hood, value, sold, change, rent, v_hat, c_log, r_hat, l_v, l_c, l_r, loss
        if (step + 1) % _smoke(105, 2) == 0:
            model.eval()
            with torch.no_grad():
                n = _smoke(30000, 300)
                num, zone, use, src, dst, ef, hood, value, sold, change, rent = graph(n, 4, _smoke(200, 8))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    v_hat, c_log, r_hat = model(num, zone, use, src, dst, ef, hood, _smoke(200, 8))
                mae = ((v_hat - value).abs() * sold).sum() / sold.sum().clamp(min=1)
                acc = ((c_log > 0).float() == change).float().mean()
                out = torch.stack([mae, acc])
            out.tolist()
            del num, zone, use, src, dst, ef, hood, value, sold, change, rent, v_hat, c_log, r_hat, mae, acc, out


# ---------------------------------------------------------------- listing recommendation service


class _ListingTower(_nn.Module):
    """A listing's vector from its id embedding, its price bucket, bedrooms, neighbourhood and property type, and
    numeric features (location, size, age, rating)."""

    def __init__(self, n_list, cards, n_num, d):
        super().__init__()
        self.id = _nn.Embedding(n_list, d)
        self.register_buffer("offsets", torch.tensor([0] + list(cards[:-1])).cumsum(0))
        self.attr = _nn.Embedding(sum(cards), d)
        self.num = _nn.Linear(n_num, d)
        self.proj = mlp(d, 2 * d, d, act=_nn.GELU)

    def forward(self, ids, attrs, num):
        return self.proj(self.id(ids) + self.attr(attrs + self.offsets).sum(-2) + self.num(num))


class _HistoryEncoder(_nn.Module):
    """The user's viewed listings (their ids and attributes through the shared id and attribute tables), an action
    embedding (view, save, contact, tour) and a position table; pre-norm blocks under a key mask; the masked mean
    and the last valid position joined."""

    def __init__(self, tower, d, heads, layers, max_pos):
        super().__init__()
        self.tower = tower
        self.act, self.pos = _nn.Embedding(4, d), _nn.Embedding(max_pos, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.out = _nn.Linear(2 * d, d)

    def forward(self, ids, attrs, acts, keep, last):
        t = ids.shape[1]
        x = self.tower.id(ids) + self.tower.attr(attrs + self.tower.offsets).sum(-2) + self.act(acts)
        x = x + self.pos(torch.arange(t, device=ids.device))[None]
        for blk in self.blocks:
            x = blk(x, mask=keep[:, None, None, :])
        x = self.norm(x)
        w = keep[..., None].to(x.dtype)
        mean = (x * w).sum(1) / w.sum(1).clamp(min=1)
        end = x.gather(1, last[:, None, None].expand(-1, 1, x.shape[2]))[:, 0]
        return self.out(torch.cat([mean, end], -1))


@_workload("listing recommendation serving (random init, a two-tower retriever and a cross-feature ranker over a catalogue of rental listings): a catalogue of 200,000 listings (an id embedding, price bucket of 20, bedrooms of 7, neighbourhood of 900 and property type of 14 from one offset table, 8 numeric features) embedded to width 128 under no grad in chunks of 50,000 at the start and again every 600 requests (the numeric features nudged by drawn noise first); 2,300-2,400 requests (drawn) of 1-16 users each (drawn), each user's viewing history of 8-200 listings (drawn per user, padded to the request's longest rounded up to a multiple of 8, position table of 200 rows) with an action type of 4; listing ids, actions and each user's filter (a maximum price bucket and a minimum bedroom count) uploaded on a side stream from two reused pinned int64 host buffers (filled once) one request ahead (three spans, waited on by event, record_stream'ed); a 2-block pre-norm transformer (4 heads) over the history, masked mean and last-position pooling; scores against the whole catalogue, listings outside the filter masked by torch.where, top 400 retrieved; a ranker MLP over user, candidate, their product and the candidate's distance from the user's search centre, top 24 by rank score; ids and scores read back once per request; bf16 autocast")
def listing_recommend_serve(rng):
    n_list, cards, n_num, d = _smoke(200000, 500), _smoke([20, 7, 900, 14], [20, 7, 10, 4]), 8, _smoke(128, 16)
    heads, layers, max_hist, mult = 4, _smoke(2, 1), _smoke(200, 16), 8
    max_users, n_cand, n_top, chunk = _smoke(16, 2), _smoke(400, 40), _smoke(24, 4), _smoke(50000, 200)
    tower = _ListingTower(n_list, cards, n_num, d)
    enc = _HistoryEncoder(tower, d, heads, layers, max_hist).cuda().eval()
    ranker = mlp(3 * d + 1, 2 * d, 1, layers=3, act=_nn.GELU).cuda().eval()
    enc.requires_grad_(False)
    ranker.requires_grad_(False)
    attrs = torch.stack([torch.randint(0, c, (n_list,), device="cuda") for c in cards], 1)
    feats = torch.randn(n_list, n_num, device="cuda")
    all_ids = torch.arange(n_list, device="cuda")
    max_len = -(-max_hist // mult) * mult
    span_ids, span_act = max_users * max_len, max_users * max_len
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = []
    for _ in range(2):
        buf = torch.cat([torch.randint(0, n_list, (span_ids,), generator=gen),
                         torch.randint(0, 4, (span_act,), generator=gen),
                         torch.stack([torch.randint(4, 20, (max_users,), generator=gen),
                                      torch.randint(0, 5, (max_users,), generator=gen)], 1).flatten()])
        host.append(buf.pin_memory())
    up = SideUploads(host)

    def catalogue():
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            return torch.cat([tower(all_ids[i:i + chunk], attrs[i:i + chunk], feats[i:i + chunk]).float()
                              for i in range(0, n_list, chunk)])

    nreq = rng.randint(_smoke(2300, 3), _smoke(2400, 4))
    plan = []
    for _ in range(nreq):
        lengths = [rng.randint(_smoke(8, 2), max_hist) for _ in range(rng.randint(1, max_users))]
        plan.append((lengths, -(-max(lengths) // mult) * mult))

    def spans(p):
        u, t = len(p[0]), p[1]
        return slice(0, u * t), slice(span_ids, span_ids + u * t), slice(span_ids + span_act, span_ids + span_act
                                                                         + 2 * u)

    refresh = _smoke(600, 2)
    vecs = catalogue()
    nxt = up.upload(0, *spans(plan[0]))
    for i in range(nreq):
        lengths, t = plan[i]
        u = len(lengths)
        if i > 0 and i % refresh == 0:
            feats.add_(0.01 * torch.randn_like(feats))
            del vecs
            vecs = catalogue()
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, *spans(plan[i + 1]))
        ids, acts, filt, ev = item
        SideUploads.ready(ev, ids, acts, filt)
        with torch.no_grad():
            ids, acts, filt = ids.view(u, t), acts.view(u, t), filt.view(u, 2)
            keep = keep_mask(lengths, t)
            last = torch.tensor([n - 1 for n in lengths], device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                user = enc(ids, attrs.index_select(0, ids.flatten()).view(u, t, -1), acts, keep, last).float()
            ok = (attrs[None, :, 0] <= filt[:, 0:1]) & (attrs[None, :, 1] >= filt[:, 1:2])
            score = torch.where(ok, user @ vecs.t(), float("-inf"))
            top_s, cand = score.topk(n_cand, dim=1)
            cv = vecs.index_select(0, cand.flatten()).view(u, n_cand, d)
            centre = (feats.index_select(0, ids.flatten())[:, :2].view(u, t, 2) * keep[..., None]).sum(1) \
                / keep.sum(1, keepdim=True)
            dist = (feats.index_select(0, cand.flatten())[:, :2].view(u, n_cand, 2) - centre[:, None]).norm(dim=-1)
            x = torch.cat([user[:, None].expand(-1, n_cand, -1), cv, user[:, None] * cv, dist[..., None]], -1)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                rank = ranker(x)[..., 0].float()
            rank = torch.where(torch.isfinite(top_s), rank, float("-inf"))
            best, pos = rank.topk(n_top, dim=1)
            out = torch.cat([cand.gather(1, pos).float(), best], 1)
        out.tolist()
        del item, ids, acts, filt, keep, last, user, ok, score, top_s, cand, cv, centre, dist, x, rank, best, pos, out

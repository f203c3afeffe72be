"""The eighty-eighth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch87_b.py are): hospitality, travel and tourism, written in torch alone, first half. Hotel booking-demand and
room-price forecasting training (a dilated causal temporal convnet over the daily booking histories of many
properties, each of its own length, left-padded and masked, property, city and star-class embeddings, quantile
forecasts of occupancy and average daily rate), review aspect-sentiment training (a transformer encoder over guest
reviews of drawn token counts, BIO tagging of aspect spans, per-aspect sentiment from masked pooling and the overall
rating), next-destination recommendation training (a SASRec-style causal transformer over travellers' trip histories of
drawn lengths, a sampled softmax over the destination catalogue, full-catalogue recall at evaluation points) and
hotel-photo scene classification training (a ConvNeXt-style convnet over listing photographs of drawn sizes and aspect
ratios, scene classes and multi-label amenity tags). Same conventions as the earlier batches: nothing downloaded, data
drawn at random on the device, `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: history
lengths, token counts, session lengths, resolutions and batch sizes are fixed on the host, padding handled by masks
multiplied in or by torch.where / masked_fill, no boolean-mask indexing; losses and metrics are read back only at
logging points. All four are single-stream. The models run under bf16 autocast. Every embedding and position table is
sized for the longest padded length or the largest index that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new88.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and for
which of them the CPU smoke run (RECORD_SMOKE=1) ran.
"""

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, mlp, randint

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _loguniform(rng, lo, hi, mult=1):
    return _b.rec._loguniform(rng, lo, hi, mult)


# ---------------------------------------------------------------- hotel demand and price forecasting (TCN)


class _TCNBlock(_nn.Module):
    def __init__(self, c, dilation):
        super().__init__()
        self.pad = 2 * dilation
        self.c1 = _nn.Conv1d(c, c, 3, dilation=dilation)
        self.c2 = _nn.Conv1d(c, c, 3, dilation=dilation)
        self.norm = _nn.GroupNorm(1, c)

    def forward(self, x, valid):
        y = _F.gelu(self.c1(_F.pad(x, (self.pad, 0))))
        y = self.c2(_F.pad(_F.dropout(y, 0.1, self.training), (self.pad, 0)))
        return self.norm(x + y) * valid


class _DemandTCN(_nn.Module):
    def __init__(self, n_feat, c, dilations, n_prop, n_city, horizon, n_q):
        super().__init__()
        self.inp = _nn.Conv1d(n_feat, c, 1)
        self.prop, self.city, self.star = _nn.Embedding(n_prop, 64), _nn.Embedding(n_city, 32), _nn.Embedding(6, 8)
        self.static = _nn.Linear(104, c)
        self.blocks = _nn.ModuleList(_TCNBlock(c, d) for d in dilations)
        self.next_day = _nn.Conv1d(c, 2, 1)
        self.head = mlp(2 * c, 256, horizon * 2 * n_q, act=_nn.GELU)
        self.horizon, self.n_q = horizon, n_q

    def forward(self, x, valid, prop, city, star):
        s = self.static(torch.cat([self.prop(prop), self.city(city), self.star(star)], -1))
        h = (self.inp(x) + s[:, :, None]) * valid
        for blk in self.blocks:
            h = blk(h, valid)
        last = h[:, :, -1]
        q = self.head(torch.cat([last, s], -1)).view(-1, self.horizon, 2, self.n_q)
        return self.next_day(h).float(), q.float()


def _pinball(pred, y, qs):
    e = y[..., None] - pred
    return torch.maximum(qs * e, (qs - 1) * e).mean()


@_workload("hotel booking-demand and room-price forecasting training (random init, a temporal convnet): 128-512 properties a step (log-uniform, a multiple of 32), each with its own daily history of 60-364 days (drawn per property, left-padded to the step's longest and masked) of 14 random features, random next-day and 28-night targets; property (6,000), city (400) and star-class (6) embeddings, a 1x1 input convolution to 96 channels and 8 dilated causal residual blocks (kernel 3, dilations 1-128, group norm, the history mask multiplied in after each block), a per-day next-day occupancy and rate head and a 2-layer head on the last day's state giving 0.1/0.5/0.9 quantiles of occupancy and average daily rate for the next 28 nights; a pinball loss plus a squared error on the next-day head masked to the history, AdamW, clipping, bf16 autocast, 630 steps; the losses read back every 20 steps and every 126 steps a no-grad forecast of 1,024 properties with 364-day histories with the mean 0.1-0.9 interval widths read back")
def hotel_demand_tcn_train(rng):
    n_feat, c, horizon = 14, _smoke(96, 8), 28
    dilations = _smoke([1, 2, 4, 8, 16, 32, 64, 128], [1, 2])
    n_prop, n_city, max_days = _smoke(6000, 50), _smoke(400, 10), _smoke(364, 24)
    model = _DemandTCN(n_feat, c, dilations, n_prop, n_city, horizon, 3).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    qs = torch.tensor([0.1, 0.5, 0.9], device="cuda")

    def hotels(lengths):
        b, t = len(lengths), max(lengths)
        x = torch.randn(b, n_feat, t, device="cuda")
        ln = torch.tensor(lengths, device="cuda")
        valid = (torch.arange(t, device="cuda")[None] >= (t - ln)[:, None]).float()[:, None]
        st = [torch.randint(0, n, (b,), device="cuda") for n in (n_prop, n_city, 6)]
        return x * valid, valid, st

    steps = _smoke(630, 3)
    for step in range(steps):
        model.train()
        b = _loguniform(rng, _smoke(128, 4), _smoke(512, 8), _smoke(32, 4))
        lengths = [rng.randint(_smoke(60, 6), max_days) for _ in range(b)]
        x, valid, st = hotels(lengths)
        y_next = torch.rand(b, 2, x.shape[-1], device="cuda")
        y_fut = torch.rand(b, horizon, 2, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            nd, q = model(x, valid, *st)
        l_n = ((nd - y_next).pow(2) * valid).sum() / (2 * valid.sum())
        l_q = _pinball(q, y_fut, qs)
        loss = l_q + 0.3 * l_n
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_q.detach(), l_n.detach()]).tolist()
        del x, valid, st, y_next, y_fut, nd, q, l_n, l_q, loss
        if (step + 1) % _smoke(126, 2) == 0:
            model.eval()
            with torch.no_grad():
                x, valid, st = hotels([max_days] * _smoke(1024, 4))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    _, q = model(x, valid, *st)
                width = (q[..., 2] - q[..., 0]).mean((0, 1))
            width.tolist()
            del x, valid, st, q, width


# ---------------------------------------------------------------- review aspect-sentiment extraction


class _ReviewEncoder(_nn.Module):
    def __init__(self, vocab, d, heads, layers, max_pos, n_tags, n_aspects):
        super().__init__()
        self.word, self.pos, self.seg = _nn.Embedding(vocab, d), _nn.Embedding(max_pos, d), _nn.Embedding(3, d)
        self.norm_in = _nn.LayerNorm(d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.tag = _nn.Linear(d, n_tags)
        self.aspect = mlp(d, d, n_aspects * 4, act=_nn.GELU)
        self.rating = mlp(d, d // 2, 1)
        self.n_aspects = n_aspects

    def forward(self, ids, seg, keep):
        t = ids.shape[1]
        x = self.word(ids) + self.pos(torch.arange(t, device=ids.device))[None] + self.seg(seg)
        x = _F.dropout(self.norm_in(x), 0.1, self.training)
        key = keep[:, None, None, :]
        for blk in self.blocks:
            x = blk(x, mask=key)
        x = self.norm(x)
        w = keep.to(x.dtype)[..., None]
        pooled = (x * w).sum(1) / w.sum(1)
        return self.tag(x), self.aspect(pooled).view(-1, self.n_aspects, 4), self.rating(pooled)[:, 0]


@_workload("hotel review aspect-sentiment training (random init, a transformer encoder tagging aspects): 16-64 reviews a step (drawn), each with its own token count of 24-384 (drawn per review, padded to the step's longest, a multiple of 16) over a 32,000-word vocabulary, with a segment id (3) drawn per token; word, position (384 rows, the longest padded review) and segment tables, a 6-block pre-norm transformer (width 384, 6 heads) under a key mask; BIO tagging of aspect spans for 14 aspects (29 tags) with pads ignored, per-aspect sentiment (4 classes: not mentioned, negative, neutral, positive) and a 1-5 star rating regression from masked mean pooling; AdamW, clipping, bf16 autocast, 400 steps; the losses read back every 20 steps and every 100 steps a no-grad evaluation of 64 reviews of 384 tokens with the tagging and aspect accuracies read back")
def review_aspect_sentiment_train(rng):
    vocab, d, heads, layers = _smoke(32000, 400), _smoke(384, 32), _smoke(6, 2), _smoke(6, 1)
    max_tok, n_asp = _smoke(384, 48), 14
    n_tags = 2 * n_asp + 1
    model = _ReviewEncoder(vocab, d, heads, layers, max_tok, n_tags, n_asp).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.01)

    def reviews(lengths):
        b, t = len(lengths), -(-max(lengths) // 16) * 16
        keep = torch.arange(t, device="cuda")[None] < torch.tensor(lengths, device="cuda")[:, None]
        ids = torch.randint(2, vocab, (b, t), device="cuda").masked_fill(~keep, 0)
        seg = torch.randint(0, 3, (b, t), device="cuda") * keep
        tags = torch.randint(0, n_tags, (b, t), device="cuda").masked_fill(~keep, -100)
        asp = torch.randint(0, 4, (b, n_asp), device="cuda")
        stars = torch.randint(1, 6, (b,), device="cuda").float()
        return ids, seg, keep, tags, asp, stars

    steps = _smoke(400, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(16, 2), _smoke(64, 4))
        lengths = [rng.randint(_smoke(24, 6), max_tok) for _ in range(b)]
        ids, seg, keep, tags, asp, stars = reviews(lengths)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            tag_log, asp_log, rating = model(ids, seg, keep)
        l_t = _F.cross_entropy(tag_log.float().flatten(0, 1), tags.flatten(), ignore_index=-100)
        l_a = _F.cross_entropy(asp_log.float().flatten(0, 1), asp.flatten())
        l_r = _F.smooth_l1_loss(rating.float(), stars)
        loss = l_t + l_a + 0.2 * l_r
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_t.detach(), l_a.detach(), l_r.detach()]).tolist()
        del ids, seg, keep, tags, asp, stars, tag_log, asp_log, rating, l_t, l_a, l_r, loss
        if (step + 1) % _smoke(100, 2) == 0:
            model.eval()
            with torch.no_grad():
                ids, seg, keep, tags, asp, stars = reviews([max_tok] * _smoke(64, 3))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    tag_log, asp_log, rating = model(ids, seg, keep)
                acc = torch.stack([(tag_log.argmax(-1) == tags).float().mean(), (asp_log.argmax(-1) == asp).float().mean()])
            acc.tolist()
            del ids, seg, keep, tags, asp, stars, tag_log, asp_log, rating, acc


# ---------------------------------------------------------------- next-destination recommendation (SASRec)


class _SASRec(_nn.Module):
    def __init__(self, n_items, d, heads, layers, max_len, n_trip):
        super().__init__()
        self.item, self.pos = _nn.Embedding(n_items + 1, d, padding_idx=0), _nn.Embedding(max_len, d)
        self.month, self.trip = _nn.Embedding(12, d), _nn.Embedding(n_trip, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads, 2 * d) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)

    def forward(self, items, month, trip, keep):
        t = items.shape[1]
        x = self.item(items) + self.pos(torch.arange(t, device=items.device))[None]
        x = x + self.month(month) + self.trip(trip)[:, None]
        x = _F.dropout(x, 0.2, self.training) * keep[..., None]
        causal = torch.ones(t, t, dtype=torch.bool, device=items.device).tril()
        mask = causal[None, None] & keep[:, None, None, :]
        for blk in self.blocks:
            x = blk(x, mask=mask)
        return self.norm(x)


@_workload("next-destination recommendation training (random init, a SASRec-style sequential recommender): 96-512 travellers a step (log-uniform, a multiple of 32), each with its own history of 3-100 visited destinations (drawn per traveller, right-padded to the step's longest and masked) from a catalogue of 80,000 destinations (table of 80,001 rows, row 0 the pad), a position table of 100 rows (the longest history), travel-month (12, drawn per position) and trip-type (6) embeddings; 3 causal pre-norm blocks (width 128, 4 heads) under a causal-and-key mask; next-destination prediction at every position by a sampled softmax over the true next destination and 2,048 negatives drawn uniformly per step (shared by the batch) against the item table, with a log-Q correction and pads ignored by a mask; AdamW, clipping, bf16 autocast, 750 steps; the loss read back every 25 steps and every 150 steps a no-grad full-catalogue scoring of 1,024 travellers' last states (histories of 3-100, drawn) against all 80,000 destinations with recall@10 of a drawn held-out destination read back")
def next_destination_sasrec_train(rng):
    n_items, d, heads, layers = _smoke(80000, 500), _smoke(128, 16), _smoke(4, 2), _smoke(3, 1)
    max_len, n_trip, n_neg = _smoke(100, 12), 6, _smoke(2048, 32)
    model = _SASRec(n_items, d, heads, layers, max_len, n_trip).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0)
    log_q = torch.log(torch.tensor(n_neg / n_items, device="cuda"))

    def travellers(lengths):
        b, t = len(lengths), max(lengths)
        keep = torch.arange(t, device="cuda")[None] < torch.tensor(lengths, device="cuda")[:, None]
        items = torch.randint(1, n_items + 1, (b, t), device="cuda").masked_fill(~keep, 0)
        month = torch.randint(0, 12, (b, t), device="cuda")
        trip = torch.randint(0, n_trip, (b,), device="cuda")
        return items, month, trip, keep

    steps = _smoke(750, 3)
    for step in range(steps):
        model.train()
        b = _loguniform(rng, _smoke(96, 4), _smoke(512, 8), _smoke(32, 4))
        lengths = [rng.randint(3, max_len) for _ in range(b)]
        items, month, trip, keep = travellers(lengths)
        target = torch.cat([items[:, 1:], torch.zeros_like(items[:, :1])], 1)
        tmask = (target > 0).float()
        neg = torch.randint(1, n_items + 1, (n_neg,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = model(items, month, trip, keep)
            pos_logit = (h * model.item(target)).sum(-1)
            neg_logit = h @ model.item(neg).t()
        logits = torch.cat([pos_logit.float()[..., None], neg_logit.float() - log_q], -1)
        nll = torch.logsumexp(logits, -1) - logits[..., 0]
        loss = (nll * tmask).sum() / tmask.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 25 == 0:
            loss.item()
        del items, month, trip, keep, target, tmask, neg, h, pos_logit, neg_logit, logits, nll, loss
        if (step + 1) % _smoke(150, 2) == 0:
            model.eval()
            ev_len = [rng.randint(3, max_len) for _ in range(_smoke(1024, 4))]
            with torch.no_grad():
                items, month, trip, keep = travellers(ev_len)
                held = torch.randint(1, n_items + 1, (len(ev_len),), device="cuda")
                last = torch.tensor([n - 1 for n in ev_len], device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    h = model(items, month, trip, keep)
                    q = h.gather(1, last[:, None, None].expand(-1, 1, h.shape[-1]))[:, 0]
                    scores = q @ model.item.weight[1:].t()
                top = scores.float().topk(10, -1).indices + 1
                recall = (top == held[:, None]).float().sum(-1).mean()
            recall.item()
            del items, month, trip, keep, held, last, h, q, scores, top, recall


# ---------------------------------------------------------------- hotel-photo scene classification (ConvNeXt)


class _CNBlock(_nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dw = _nn.Conv2d(c, c, 7, 1, 3, groups=c)
        self.norm = _nn.LayerNorm(c)
        self.fc1, self.fc2 = _nn.Linear(c, 4 * c), _nn.Linear(4 * c, c)
        self.gamma = _nn.Parameter(torch.full((c,), 1e-6))

    def forward(self, x):
        y = self.dw(x).permute(0, 2, 3, 1)
        y = self.fc2(_F.gelu(self.fc1(self.norm(y)))) * self.gamma
        return x + y.permute(0, 3, 1, 2)


class _SceneNet(_nn.Module):
    def __init__(self, widths, depths, n_scenes, n_tags):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, widths[0], 4, 4), _nn.GroupNorm(1, widths[0]))
        self.stages = _nn.ModuleList()
        for i, (w, dpt) in enumerate(zip(widths, depths)):
            down = _nn.Identity() if i == 0 else _nn.Sequential(_nn.GroupNorm(1, widths[i - 1]),
                                                                 _nn.Conv2d(widths[i - 1], w, 2, 2))
            self.stages.append(_nn.Sequential(down, *[_CNBlock(w) for _ in range(dpt)]))
        self.norm = _nn.LayerNorm(widths[-1])
        self.scene, self.tags = _nn.Linear(widths[-1], n_scenes), _nn.Linear(widths[-1], n_tags)

    def forward(self, x):
        x = self.stem(x)
        for s in self.stages:
            x = s(x)
        f = self.norm(x.mean((2, 3)))
        return self.scene(f), self.tags(f)


@_workload("hotel-photo scene classification training (random init, a ConvNeXt-style classifier): 12-40 random photos a step (drawn) of 192-384 x 192-448 pixels (height and width drawn per step, multiples of 32, so aspect ratios vary), channels-last; a patchify stem (stride 4) and 4 stages (64-128-256-512 channels, 2-2-4-2 blocks of 7x7 depthwise convolution, layer norm, a 4x GELU MLP and layer scale, group-norm downsampling); 40 scene classes with label smoothing and 96 multi-label tags (each on with probability 0.08) by binary cross-entropy, AdamW, clipping, bf16 autocast, 425 steps; the losses read back every 20 steps and every 85 steps a no-grad evaluation of 32 photos at 320 x 416 with the scene accuracy and the mean tag precision at 5 read back")
def hotel_photo_scene_train(rng):
    widths, depths = _smoke([64, 128, 256, 512], [8, 8, 16, 16]), _smoke([2, 2, 4, 2], [1, 1, 1, 1])
    n_scenes, n_tags = 40, 96
    model = _SceneNet(widths, depths, n_scenes, n_tags).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=4e-4, weight_decay=0.05)

    def photos(b, h, w):
        x = torch.randn(b, 3, h, w, device="cuda").contiguous(memory_format=torch.channels_last)
        y = torch.randint(0, n_scenes, (b,), device="cuda")
        tags = (torch.rand(b, n_tags, device="cuda") < 0.08).float()
        return x, y, tags

    steps = _smoke(425, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(12, 2), _smoke(40, 3))
        h, w = randint(rng, _smoke(192, 64), _smoke(384, 96), 32), randint(rng, _smoke(192, 64), _smoke(448, 128), 32)
        x, y, tags = photos(b, h, w)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            s_log, t_log = model(x)
        l_s = _F.cross_entropy(s_log.float(), y, label_smoothing=0.1)
        l_t = _F.binary_cross_entropy_with_logits(t_log.float(), tags)
        loss = l_s + l_t
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_s.detach(), l_t.detach()]).tolist()
        del x, y, tags, s_log, t_log, l_s, l_t, loss
        if (step + 1) % _smoke(85, 2) == 0:
            model.eval()
            with torch.no_grad():
                x, y, tags = photos(_smoke(32, 2), _smoke(320, 64), _smoke(416, 96))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    s_log, t_log = model(x)
                acc = (s_log.argmax(-1) == y).float().mean()
                top5 = t_log.float().topk(5, -1).indices
                prec = tags.gather(1, top5).mean()
            torch.stack([acc, prec]).tolist()
            del x, y, tags, s_log, t_log, acc, top5, prec

"""The ninety-eighth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch97_b.py are): social media platforms, feeds and messaging, written in torch alone, first half. Friend
recommendation training (a GraphSAGE-style link predictor by index_select and index_add over drawn subgraphs of the
social graph, user-id and profile embeddings, held-out friendships as positives and drawn negatives), post-text
moderation training (a transformer classifier over posts of drawn lengths in length buckets, a [CLS] token with
author metadata, multi-label policy heads and a severity head, two micro-batches of gradient accumulation a step), a
post-image moderation service (a ResNet-style convnet over each post's images at the post's drawn resolution, policy
probabilities, an embedding matched against a bank of known violating images, per-post decisions by torch.where) and a
reply-suggestion service (a small decoder transformer with a key/value cache written by hand, three candidate replies a
conversation sampled by Gumbel-max over the top 40 tokens, a blocklist of tokens masked out). Same conventions as the
earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned host buffers for the
image service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths,
resolutions and batch sizes are fixed on the host, padding handled by masks or torch.where / masked_fill, no
boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
post_image_moderation_serve uploads its images on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads); the other three are single-stream. The models run under bf16 autocast. Every
position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new98.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, _rope, _rope_tables, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- friend recommendation (GraphSAGE link prediction)


class _SageMean(_nn.Module):
    """One mean-aggregation layer: neighbours' states gathered along the edges (index_select), weighted (held-out
    edges weigh zero) and summed into their destinations (index_add), divided by the weighted degree; a self and a
    neighbour projection, LayerNorm, GELU, residual."""

    def __init__(self, d):
        super().__init__()
        self.own, self.nbr, self.norm = _nn.Linear(d, d), _nn.Linear(d, d, bias=False), _nn.LayerNorm(d)

    def forward(self, h, src, dst, w, inv_deg):
        msg = h.index_select(0, src) * w[:, None].to(h.dtype)
        agg = h.new_zeros(h.shape).index_add_(0, dst, msg) * inv_deg[:, None].to(h.dtype)
        return h + _F.gelu(self.norm(self.own(h) + self.nbr(agg)))


class _FriendSage(_nn.Module):
    def __init__(self, users, cards, dense, d, layers, out):
        super().__init__()
        self.uid = _nn.Embedding(users, d)
        self.register_buffer("offsets", torch.tensor([0] + list(cards[:-1])).cumsum(0))
        self.cat = _nn.Embedding(sum(cards), d)
        self.dense = _nn.Linear(dense, d)
        self.layers = _nn.ModuleList(_SageMean(d) for _ in range(layers))
        self.out = _nn.Linear(d, out)
        self.pair = mlp(2 * out, out, 1, act=_nn.GELU)

    def embed(self, ids, cats, feats, src, dst, w, inv_deg):
        h = self.uid(ids) + self.cat(cats + self.offsets).sum(1) + self.dense(feats)
        for layer in self.layers:
            h = layer(h, src, dst, w, inv_deg)
        return _F.normalize(self.out(h).float(), dim=-1)

    def score(self, z, a, b):
        za, zb = z.index_select(0, a), z.index_select(0, b)
        return (za * zb).sum(-1) * 10 + self.pair(torch.cat([za * zb, (za - zb).abs()], -1))[:, 0].float()


@_workload("friend recommendation training (random init, a GraphSAGE-style link predictor written with index_select and index_add): each step a drawn subgraph of 20,000-50,000 users (drawn) with 3-6 times as many friendships as users (drawn, random pairs, both directions kept, so 6-12 directed edges a user on average), user-id embeddings from a 400,000-row table plus 4 profile fields (country of 200, age bucket of 10, language of 60, account-age bucket of 16, one offset table, summed) plus 32 dense profile features; 3 mean-aggregation layers (width 192, held-out edges weighted zero, weighted in-degree normalisation by index_add) with LayerNorm and residuals, a 128-d L2-normalised output; 2,048-8,192 held-out friendships (drawn) as positives and 4 drawn random users per positive as negatives, scored by a scaled dot product plus a pair MLP, binary cross-entropy; AdamW, clipping, bf16 autocast, 1,010 steps; the loss read back every 20 steps and every 202 steps a no-grad retrieval evaluation (256 query users scored against every user of a 50,000-user subgraph with 4 friendships a user, top 50, hit rate of a held-out friend) read back")
def friend_recommendation_sage_train(rng):
    users, cards, dense = _smoke(400000, 500), [200, 10, 60, 16], _smoke(32, 8)
    d, layers, out = _smoke(192, 16), _smoke(3, 1), _smoke(128, 16)
    model = _FriendSage(users, cards, dense, d, layers, out).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    n_lo, n_hi = _smoke(20000, 64), _smoke(50000, 128)

    def graph(n, per_user, held):
        half = n * per_user
        a = torch.randint(0, n, (half,), device="cuda")
        b = (a + torch.randint(1, n, (half,), device="cuda")) % n
        src, dst = torch.cat([a, b]), torch.cat([b, a])
        w = torch.ones(2 * half, device="cuda")
        w[:held] = 0.0
        w[half:half + held] = 0.0
        inv_deg = 1.0 / torch.zeros(n, device="cuda").index_add_(0, dst, w).clamp(min=1.0)
        ids = torch.randint(0, users, (n,), device="cuda")
        cats = torch.stack([torch.randint(0, c, (n,), device="cuda") for c in cards], 1)
        feats = torch.randn(n, dense, device="cuda")
        return ids, cats, feats, src, dst, w, inv_deg, a[:held], b[:held]

    steps, neg = _smoke(1010, 3), 4
    for step in range(steps):
        model.train()
        n, per_user = rng.randint(n_lo, n_hi), rng.randint(3, 6)
        held = rng.randint(_smoke(2048, 8), _smoke(8192, 32))
        ids, cats, feats, src, dst, w, inv_deg, pa, pb = graph(n, per_user, held)
        na = pa.repeat(neg)
        nb = torch.randint(0, n, (held * neg,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            z = model.embed(ids, cats, feats, src, dst, w, inv_deg)
            pos = model.score(z, pa, pb)
            negs = model.score(z, na, nb)
        logits = torch.cat([pos, negs])
        labels = torch.cat([torch.ones_like(pos), torch.zeros_like(negs)])
        loss = _F.binary_cross_entropy_with_logits(logits, labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.detach().item()
        del ids, cats, feats, src, dst, w, inv_deg, pa, pb, na, nb, z, pos, negs, logits, labels, loss
        if (step + 1) % _smoke(202, 2) == 0:
            model.eval()
            with torch.no_grad():
                q = _smoke(256, 8)
                ids, cats, feats, src, dst, w, inv_deg, pa, pb = graph(n_hi, 4, q)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    z = model.embed(ids, cats, feats, src, dst, w, inv_deg)
                sims = z.index_select(0, pa) @ z.t()
                sims = sims.scatter(1, pa[:, None], -1e4)  # never recommend the user to themself
                top = sims.topk(_smoke(50, 8), dim=-1).indices
                hit = (top == pb[:, None]).any(1).float().mean()
            hit.item()
            del ids, cats, feats, src, dst, w, inv_deg, pa, pb, z, sims, top, hit


# ---------------------------------------------------------------- post-text moderation (transformer classifier)


class _PostClassifier(_nn.Module):
    """Token and position embeddings, a learned [CLS] token at position 0 plus the author-metadata embeddings (one
    offset table, summed), pre-norm blocks under a key mask, the [CLS] state into policy and severity heads."""

    def __init__(self, vocab, d, heads, layers, max_pos, cards, n_policy, n_sev):
        super().__init__()
        self.tok, self.pos = _nn.Embedding(vocab, d), _nn.Embedding(max_pos, d)
        self.cls = _nn.Parameter(torch.randn(d) * 0.02)
        self.register_buffer("offsets", torch.tensor([0] + list(cards[:-1])).cumsum(0))
        self.meta = _nn.Embedding(sum(cards), d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.policy, self.sev = _nn.Linear(d, n_policy), mlp(d, d // 2, n_sev, act=_nn.GELU)

    def forward(self, ids, keep, meta):
        b, t = ids.shape
        head = (self.cls[None] + self.meta(meta + self.offsets).sum(1))[:, None]
        x = torch.cat([head, self.tok(ids[:, 1:])], 1) + self.pos(torch.arange(t, device=ids.device))[None]
        x = _F.dropout(x, 0.1, self.training)
        key = keep[:, None, None, :]
        for blk in self.blocks:
            x = blk(x, mask=key)
        c = self.norm(x[:, 0])
        return self.policy(c).float(), self.sev(c).float()


@_workload("post-text moderation training (random init, a transformer text classifier): two micro-batches of gradient accumulation a step, each from a drawn length bucket (the bucket's longest post 32-511 tokens, drawn) with each post 16 tokens to the bucket's longest (drawn per post over a 50,000-token vocabulary), a [CLS] slot in front, padded to a multiple of 32 (position table of 512 rows), 8-48 posts a micro-batch (drawn, at most 12,288 padded tokens); the [CLS] slot carries a learned vector plus 4 author-metadata fields (account age of 12, follower bucket of 10, prior strikes of 6, country of 120, one offset table, summed); a 6-block pre-norm transformer (width 384, 6 heads) under a key mask; 9 multi-label policy heads (binary cross-entropy with positive weights) and a 4-level severity head (cross-entropy with label smoothing 0.1); AdamW with linear warm-up over 30 steps and cosine decay set per step, clipping, bf16 autocast, 250 steps; the losses read back every 10 steps and every 50 steps a no-grad evaluation of 64 posts of 511 tokens with policy precision, recall and severity accuracy read back")
def post_moderation_text_train(rng):
    vocab, d, heads, layers = _smoke(50000, 300), _smoke(384, 32), _smoke(6, 2), _smoke(6, 1)
    max_pos, cards, n_policy, n_sev = _smoke(512, 64), [12, 10, 6, 120], 9, 4
    model = _PostClassifier(vocab, d, heads, layers, max_pos, cards, n_policy, n_sev).cuda()
    base_lr, steps, warm = 2e-4, _smoke(250, 3), _smoke(30, 1)
    opt = torch.optim.AdamW(model.parameters(), lr=base_lr, weight_decay=0.01)
    pos_weight = torch.linspace(2.0, 12.0, n_policy, device="cuda")
    budget, longest = _smoke(12288, 256), max_pos - 1

    def posts(lengths):
        """lengths count the [CLS] slot; padded to a multiple of 32."""
        b, t = len(lengths), -(-max(lengths) // 32) * 32
        keep = keep_mask(lengths, t)
        ids = torch.randint(2, vocab, (b, t), device="cuda").masked_fill(~keep, 0)
        meta = torch.stack([torch.randint(0, c, (b,), device="cuda") for c in cards], 1)
        policy = (torch.rand(b, n_policy, device="cuda") < 0.08).float()
        sev = torch.randint(0, n_sev, (b,), device="cuda")
        return ids, keep, meta, policy, sev

    for step in range(steps):
        model.train()
        lr = base_lr * min(1.0, (step + 1) / warm) * 0.5 * (1 + math.cos(math.pi * step / steps))
        for group in opt.param_groups:
            group["lr"] = lr
        opt.zero_grad(set_to_none=True)
        logged = []
        for _ in range(2):
            top = rng.randint(_smoke(32, 8), longest)
            pad = -(-(top + 1) // 32) * 32
            b = rng.randint(_smoke(8, 2), max(_smoke(8, 2), min(_smoke(48, 4), budget // pad)))
            lengths = [rng.randint(min(16, top), top) + 1 for _ in range(b - 1)] + [top + 1]
            ids, keep, meta, policy, sev = posts(lengths)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                p_log, s_log = model(ids, keep, meta)
            l_p = _F.binary_cross_entropy_with_logits(p_log, policy, pos_weight=pos_weight)
            l_s = _F.cross_entropy(s_log, sev, label_smoothing=0.1)
            ((l_p + l_s) / 2).backward()
            logged += [l_p.detach(), l_s.detach()]
            del ids, keep, meta, policy, sev, p_log, s_log, l_p, l_s
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack(logged).tolist()
        del logged
        if (step + 1) % _smoke(50, 2) == 0:
            model.eval()
            with torch.no_grad():
                ids, keep, meta, policy, sev = posts([longest + 1] * _smoke(64, 3))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    p_log, s_log = model(ids, keep, meta)
                pred = (p_log > 0).float()
                tp = (pred * policy).sum()
                out = torch.stack([tp / pred.sum().clamp(min=1), tp / policy.sum().clamp(min=1),
                                   (s_log.argmax(-1) == sev).float().mean()])
            out.tolist()
            del ids, keep, meta, policy, sev, p_log, s_log, pred, tp, out


# ---------------------------------------------------------------- post-image moderation service (ResNet-style)


class _Basic(_nn.Module):
    """Two 3x3 convolutions with batch norm, a strided 1x1 projection on the shortcut when the shape changes."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1, self.b1 = _nn.Conv2d(cin, cout, 3, stride, 1, bias=False), _nn.BatchNorm2d(cout)
        self.c2, self.b2 = _nn.Conv2d(cout, cout, 3, 1, 1, bias=False), _nn.BatchNorm2d(cout)
        self.short = _nn.Identity() if stride == 1 and cin == cout else _nn.Sequential(
            _nn.Conv2d(cin, cout, 1, stride, bias=False), _nn.BatchNorm2d(cout))

    def forward(self, x):
        return _F.relu(self.b2(self.c2(_F.relu(self.b1(self.c1(x))))) + self.short(x))


class _ModerationNet(_nn.Module):
    def __init__(self, widths, depths, n_policy, emb):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, widths[0], 7, 2, 3, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU(), _nn.MaxPool2d(3, 2, 1))
        blocks, c = [], widths[0]
        for i, (w, n) in enumerate(zip(widths, depths)):
            for j in range(n):
                blocks.append(_Basic(c, w, 2 if j == 0 and i > 0 else 1))
                c = w
        self.body = _nn.Sequential(*blocks)
        self.policy, self.emb = _nn.Linear(c, n_policy), _nn.Linear(c, emb)

    def forward(self, x):
        f = self.body(self.stem(x)).mean((2, 3))
        return self.policy(f).float(), _F.normalize(self.emb(f).float(), dim=-1)


@_workload("post-image moderation serving (random init, a ResNet-18-style convnet): 1,900-1,960 requests (drawn), each a post of 1-8 images (drawn) at the post's resolution (drawn per request from 224 x 224, 256 x 256, 320 x 320, 256 x 384 and 384 x 256); uint8 pixels uploaded on a side stream from two reused pinned host buffers (filled once, sized for 8 images of 320 x 320) one request ahead (one span, waited on by event, record_stream'ed), normalised on the device; a channels-last stem (7x7 stride 2, max-pool) and basic-block stages of 64/128/256/512 channels (2 blocks each, batch norm in eval) under bf16 autocast, global average pooling; 7 policy probabilities (softmax) per image and a 128-d L2-normalised embedding matched against a bank of 20,000 known violating images (cosine similarity, best match); per-post the per-class maximum of the probabilities over its images and the best bank match set against per-class remove and review thresholds and two near-duplicate thresholds by torch.where for a remove / review / allow decision; each request's per-image probabilities and best matches, the per-class maxima and the post decision read back")
def post_image_moderation_serve(rng):
    widths, depths = _smoke([64, 128, 256, 512], [8, 8]), _smoke([2, 2, 2, 2], [1, 1])
    n_policy, emb, bank_n = 7, _smoke(128, 16), _smoke(20000, 64)
    model = _ModerationNet(widths, depths, n_policy, emb).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    sizes = _smoke([(224, 224), (256, 256), (320, 320), (256, 384), (384, 256)], [(32, 32), (32, 48)])
    max_images = _smoke(8, 2)
    big = max(h * w for h, w in sizes) * 3
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_images * big,), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1) * 255
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1) * 255
    bank = _F.normalize(torch.randn(bank_n, emb, device="cuda"), dim=-1)
    remove_at = torch.tensor([1.01, 0.9, 0.85, 0.9, 0.8, 0.95, 0.9], device="cuda")  # class 0: safe, never removed
    review_at = remove_at * 0.6
    nreq = rng.randint(_smoke(1900, 3), _smoke(1960, 4))
    plan = [(rng.randint(1, max_images), *rng.choice(sizes)) for _ in range(nreq)]

    def span(p):
        return p[0] * 3 * p[1] * p[2]

    nxt = up.upload(0, span(plan[0]))
    for i in range(nreq):
        f, h, w = plan[i]
        raw, ev = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, span(plan[i + 1]))
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            x = raw.view(f, 3, h, w).float().sub_(mean).div_(std).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits, e = model(x)
            probs = logits.softmax(-1)
            match = (e @ bank.t()).max(-1).values
            worst = probs.max(0).values
            remove = torch.where((worst >= remove_at).any() | (match.max() > 0.92), 1.0, 0.0)
            review = torch.where((worst >= review_at).any() | (match.max() > 0.8), 1.0, 0.0)
            decision = torch.where(remove > 0, 2.0, review)
            out = torch.cat([probs.flatten(), match, worst, decision[None]])
        out.tolist()
        del raw, ev, x, logits, e, probs, match, worst, remove, review, decision, out


# ---------------------------------------------------------------- reply suggestion (decoder with a hand-written cache)


class _DecoderLayer(_nn.Module):
    """A pre-norm decoder layer: fused q/k/v without bias, rotary positions, keys and values written into a cache
    made at the first call (the layer's own dtype, sized for the whole conversation plus the reply), SDPA over the
    filled part of the cache, a SwiGLU MLP."""

    def __init__(self, d, heads, hidden):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.n1, self.n2 = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.o = _nn.Linear(d, 3 * d, bias=False), _nn.Linear(d, d, bias=False)
        self.gate_up, self.down = _nn.Linear(d, 2 * hidden, bias=False), _nn.Linear(hidden, d, bias=False)

    def forward(self, x, cos, sin, cache, start, total):
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, t, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)
        q, k = _rope(q, cos, sin), _rope(k, cos, sin)
        if not cache:
            cache += [k.new_zeros(b, self.h, total, self.dh), v.new_zeros(b, self.h, total, self.dh)]
        kc, vc = cache
        kc[:, :, start:start + t] = k
        vc[:, :, start:start + t] = v
        a = _F.scaled_dot_product_attention(q, kc[:, :, :start + t], vc[:, :, :start + t], is_causal=t > 1)
        x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
        g, u = self.gate_up(self.n2(x)).chunk(2, -1)
        return x + self.down(_F.silu(g) * u)


class _ReplyLM(_nn.Module):
    def __init__(self, vocab, d, heads, layers, hidden, speakers):
        super().__init__()
        self.tok, self.spk = _nn.Embedding(vocab, d), _nn.Embedding(speakers, d)
        self.layers = _nn.ModuleList(_DecoderLayer(d, heads, hidden) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.head = _nn.Linear(d, vocab, bias=False)

    def forward(self, ids, spk, cos, sin, caches, start, total):
        x = self.tok(ids) + self.spk(spk)
        for layer, cache in zip(self.layers, caches):
            x = layer(x, cos, sin, cache, start, total)
        return self.head(self.norm(x[:, -1])).float()


@_workload("reply-suggestion serving (random init, a decoder-only transformer with a hand-written key/value cache): 86-90 requests (drawn), each one conversation of 2-12 turns (drawn) of 4-48 tokens each (drawn, the whole context cut to at most 480 tokens) over a 32,000-token vocabulary with a speaker embedding per turn (8 speakers), copied three times for three candidate replies; a 6-layer decoder (width 512, 8 heads, SwiGLU MLP of 1,408, rotary tables of 512 positions, the longest context plus reply) prefilling the context with a causal SDPA (its last position giving the first reply token) and then decoding the rest one token at a time, 6-24 reply tokens in all (drawn per request), against per-layer caches sized for context plus reply; each token sampled by Gumbel-max over the top 40 logits at a temperature of 0.6-1.0 (drawn per request) after a 600-token blocklist is masked out by index_fill, an end-of-reply token freezing each candidate's running log-probability by torch.where; bf16 autocast; each request's three token sequences, scores and end flags read back once")
def reply_suggestion_serve(rng):
    vocab, d, heads, layers = _smoke(32000, 256), _smoke(512, 32), _smoke(8, 2), _smoke(6, 1)
    hidden, speakers, cands, eos = _smoke(1408, 64), 8, 3, 2
    max_ctx, max_new, positions = _smoke(480, 40), _smoke(24, 4), _smoke(512, 48)
    model = _ReplyLM(vocab, d, heads, layers, hidden, speakers).cuda().eval()
    model.requires_grad_(False)
    cos_t, sin_t = _rope_tables(d // heads, positions, 10000.0)
    block = torch.randint(3, vocab, (_smoke(600, 10),), device="cuda")
    nreq = rng.randint(_smoke(86, 2), _smoke(90, 3))
    for _ in range(nreq):
        turns = [rng.randint(_smoke(4, 2), _smoke(48, 8)) for _ in range(rng.randint(2, 12))]
        speaker_ids = [rng.randrange(speakers) for _ in turns]
        spk_host = [s for n, s in zip(turns, speaker_ids) for _ in range(n)][-max_ctx:]
        ctx, new, temp = len(spk_host), rng.randint(_smoke(6, 2), max_new), rng.uniform(0.6, 1.0)
        total = ctx + new
        with torch.no_grad():
            ids = torch.randint(3, vocab, (1, ctx), device="cuda").expand(cands, ctx)
            spk = torch.tensor(spk_host, device="cuda")[None].expand(cands, ctx)
            me = torch.full((cands, 1), rng.randrange(speakers), device="cuda", dtype=torch.long)
            caches = [[] for _ in range(layers)]
            tokens, score = [], torch.zeros(cands, device="cuda")
            done = torch.zeros(cands, dtype=torch.bool, device="cuda")
            start, step_ids, step_spk = 0, ids, spk
            for _ in range(new):
                t = step_ids.shape[1]
                cos, sin = cos_t[start:start + t], sin_t[start:start + t]
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = model(step_ids, step_spk, cos, sin, caches, start, total)
                logits = logits.index_fill(1, block, -1e9)
                vals, idx = logits.topk(40, dim=-1)
                vals = vals / temp
                g = -torch.log(-torch.log(torch.rand_like(vals).clamp(1e-6, 1 - 1e-6)))
                pick = (vals + g).argmax(-1, keepdim=True)
                tok = idx.gather(1, pick)
                lp = vals.log_softmax(-1).gather(1, pick)[:, 0]
                score = torch.where(done, score, score + lp)
                done = done | (tok[:, 0] == eos)
                tokens.append(tok)
                start += t
                step_ids, step_spk = tok, me
            out = torch.cat([torch.cat(tokens, 1).float(), score[:, None], done[:, None].float()], 1)
        out.tolist()
        del ids, spk, me, caches, tokens, score, done, step_ids, step_spk, logits, vals, idx, g, pick, tok, lp, out

"""The ninety-eighth batch of held-out workloads for record.py, second half (batch98.py has the first): social media
platforms, feeds and messaging, written in torch alone. Feed-ranking training (a multi-task ranking model over
impressions: sparse fields from one offset table, a target-attention pooling of each user's recent items, a pairwise
dot-product interaction, mixture-of-experts task towers for click, like, share and dwell time), message-spam
training (a character convnet and a GRU written out step by step over messages of drawn lengths, with sender
features, a spam logit and an abuse type), engagement-forecast diffusion training (a conditional 1-d DDPM U-Net over
hourly engagement curves of drawn horizons, conditioned on the observed first hours and the post's metadata, with
an exponential moving average of the weights and DDIM forecasts) and a feed re-ranking service (a transformer over
each session's history and candidates, multi-objective scores and a greedy maximal-marginal-relevance selection of a
drawn number of posts). Same conventions as batch98.py: nothing downloaded, data drawn at random on the device (or
in reused pinned host buffers for the service), `rng` the workload's random.Random for every shape, count and
sampled choice, sizes through `_smoke(real, small)`, no control flow reading a tensor's value, losses and metrics
read back only at logging points or once per request. feed_rerank_diversity_serve uploads its candidate and history
features on a side stream (two reused pinned host buffers, one request ahead, through workload_helpers.SideUploads);
the other three are single-stream. The models run under bf16 autocast.

Real sizes checked before recording: see record_new98.sh's header.
"""

import copy
import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, _sincos, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _loguniform(rng, lo, hi, mult=1):
    return _b.rec._loguniform(rng, lo, hi, mult)


# ---------------------------------------------------------------- feed ranking (multi-task, target attention, MMoE)


class _FeedRanker(_nn.Module):
    """Sparse fields looked up in one offset table; the user's recent items pooled by target attention (an MLP over
    candidate, history item, their product and difference, masked softmax); a bottom MLP on dense features; the
    pairwise dot products of all field vectors (upper triangle); a mixture of experts with one gate and one tower per
    task."""

    def __init__(self, cards, item_field, dense, d, experts, tasks):
        super().__init__()
        self.register_buffer("offsets", torch.tensor([0] + list(cards[:-1])).cumsum(0))
        self.item_offset = int(sum(cards[:item_field]))
        self.table = _nn.Embedding(sum(cards), d)
        self.att = mlp(4 * d, 128, 1, act=_nn.SiLU)
        self.bottom = mlp(dense, 256, d, layers=3)
        nf = len(cards) + 2
        self.register_buffer("pairs", torch.triu_indices(nf, nf, 1))
        width = nf * (nf - 1) // 2 + d
        self.experts = _nn.ModuleList(mlp(width, 512, 256, act=_nn.ReLU) for _ in range(experts))
        self.gates = _nn.Linear(width, experts * tasks)
        self.towers = _nn.ModuleList(mlp(256, 128, 1) for _ in range(tasks))
        self.tasks, self.n_exp = tasks, experts

    def forward(self, sparse, hist, hist_keep, dense, cand_field):
        fields = self.table(sparse + self.offsets)  # (B, F, d)
        cand = fields[:, cand_field]
        h = self.table(hist + self.item_offset)  # (B, L, d)
        c = cand[:, None].expand_as(h)
        w = self.att(torch.cat([c, h, c * h, c - h], -1))[..., 0].float()
        w = w.masked_fill(~hist_keep, -1e4).softmax(-1)
        pooled = (w[..., None].to(h.dtype) * h).sum(1)
        bot = self.bottom(dense)
        z = torch.cat([fields, pooled[:, None].to(fields.dtype), bot[:, None].to(fields.dtype)], 1)
        inter = torch.bmm(z, z.transpose(1, 2))[:, self.pairs[0], self.pairs[1]]
        x = torch.cat([inter, bot.to(inter.dtype)], -1)
        ex = torch.stack([e(x) for e in self.experts], 1)  # (B, E, 256)
        g = self.gates(x).float().view(-1, self.tasks, self.n_exp).softmax(-1).to(ex.dtype)
        mixed = torch.bmm(g, ex)  # (B, tasks, 256)
        return torch.cat([t(mixed[:, i]) for i, t in enumerate(self.towers)], -1).float()


def _auc(score, label):
    """Rank AUC of scores against 0/1 labels, all on the device (ties broken by order)."""
    n = score.shape[0]
    ranks = torch.empty_like(score).scatter_(0, score.argsort(), torch.arange(1, n + 1, device=score.device,
                                                                              dtype=score.dtype))
    pos = label.sum()
    neg = n - pos
    return ((ranks * label).sum() - pos * (pos + 1) / 2) / (pos * neg).clamp(min=1)


@_workload("feed-ranking training (random init, a multi-task ranking model over impressions): 1,024-8,192 impressions a step (drawn log-uniformly, a multiple of 256), 12 sparse fields from one offset table of 64-d rows (user of 300,000, age bucket of 10, country of 200, device of 8, language of 60, item of 600,000, author of 200,000, topic of 500, media type of 5, item-age bucket of 24, hour of 24, surface of 6), each user's 8-64 most recent items (the step's history length drawn, each row's length drawn on the device, a key mask) pooled by target attention against the candidate item (an MLP over candidate, item, product and difference, masked softmax), 24 dense features through a 3-layer bottom MLP, the 91 pairwise dot products of the 14 field vectors, a mixture of 4 experts (MLPs to 256) with a softmax gate per task and 4 task towers (click, like and share by binary cross-entropy, log dwell time by squared error on clicked impressions only); Adagrad on the embedding table and AdamW on the rest, bf16 autocast, 1,000 steps; the losses read back every 25 steps and every 200 steps a no-grad evaluation of 16,384 impressions with the click, like and share rank AUCs (argsort and scatter) read back")
def feed_ranking_mtl_train(rng):
    cards = _smoke([300000, 10, 200, 8, 60, 600000, 200000, 500, 5, 24, 24, 6],
                   [500, 10, 20, 8, 6, 800, 200, 50, 5, 24, 24, 6])
    item_field, dense, d = 5, _smoke(24, 8), _smoke(64, 16)
    model = _FeedRanker(cards, item_field, dense, d, _smoke(4, 2), 4).cuda()
    sparse_opt = torch.optim.Adagrad(model.table.parameters(), lr=0.02)
    dense_opt = torch.optim.AdamW([p for n, p in model.named_parameters() if not n.startswith("table")], lr=1e-3,
                                  weight_decay=1e-4)
    card_t = torch.tensor(cards, device="cuda")

    def impressions(b, hist_len):
        sparse = (torch.rand(b, len(cards), device="cuda") ** 2 * card_t).long()  # popular rows drawn more often
        hist = (torch.rand(b, hist_len, device="cuda") ** 2 * cards[item_field]).long()
        keep = torch.arange(hist_len, device="cuda")[None] < torch.randint(1, hist_len + 1, (b, 1), device="cuda")
        feats = torch.randn(b, dense, device="cuda")
        click = (torch.rand(b, device="cuda") < 0.1).float()
        like = click * (torch.rand(b, device="cuda") < 0.3).float()
        share = click * (torch.rand(b, device="cuda") < 0.05).float()
        dwell = torch.rand(b, device="cuda") * 6
        return sparse, hist, keep, feats, torch.stack([click, like, share], 1), dwell

    steps = _smoke(1000, 3)
    for step in range(steps):
        model.train()
        b = _loguniform(rng, _smoke(1024, 16), _smoke(8192, 64), _smoke(256, 16))
        hist_len = rng.randint(_smoke(8, 2), _smoke(64, 8))
        sparse, hist, keep, feats, labels, dwell = impressions(b, hist_len)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(sparse, hist, keep, feats, item_field)
        l_bin = _F.binary_cross_entropy_with_logits(out[:, :3], labels)
        l_dwell = ((out[:, 3] - dwell).pow(2) * labels[:, 0]).sum() / labels[:, 0].sum().clamp(min=1)
        loss = l_bin + 0.1 * l_dwell
        sparse_opt.zero_grad(set_to_none=True)
        dense_opt.zero_grad(set_to_none=True)
        loss.backward()
        sparse_opt.step()
        dense_opt.step()
        if step % 25 == 0:
            torch.stack([l_bin.detach(), l_dwell.detach()]).tolist()
        del sparse, hist, keep, feats, labels, dwell, out, l_bin, l_dwell, loss
        if (step + 1) % _smoke(200, 2) == 0:
            model.eval()
            with torch.no_grad():
                sparse, hist, keep, feats, labels, dwell = impressions(_smoke(16384, 64), _smoke(64, 8))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    out = model(sparse, hist, keep, feats, item_field)
                aucs = torch.stack([_auc(out[:, i], labels[:, i]) for i in range(3)])
            aucs.tolist()
            del sparse, hist, keep, feats, labels, dwell, out, aucs


# ---------------------------------------------------------------- message spam (character convnet + GRU by hand)


class _SpamNet(_nn.Module):
    """Byte embeddings, two stride-2 1-d convolutions (a quarter of the characters), a GRU cell applied step by step
    (input gates computed for all steps at once, the hidden state frozen past each message's end by torch.where),
    the final state and the masked mean of the states with the sender features into a spam logit and an abuse
    type."""

    def __init__(self, d, hid, sender, n_type):
        super().__init__()
        self.emb = _nn.Embedding(256, d)
        self.conv = _nn.Sequential(_nn.Conv1d(d, 2 * d, 5, 2, 2), _nn.GELU(), _nn.Conv1d(2 * d, 2 * d, 5, 2, 2),
                                   _nn.GELU())
        self.inp, self.rec = _nn.Linear(2 * d, 3 * hid), _nn.Linear(hid, 3 * hid, bias=False)
        self.sender = mlp(sender, 128, 128, act=_nn.GELU)
        self.spam, self.kind = mlp(2 * hid + 128, 256, 1, act=_nn.GELU), _nn.Linear(2 * hid + 128, n_type)
        self.hid = hid

    def forward(self, chars, keep, sender):
        x = self.conv(self.emb(chars).transpose(1, 2)).transpose(1, 2)
        gi = self.inp(x)
        b, t, _ = gi.shape
        n = self.hid
        h = gi.new_zeros(b, n)
        states = []
        for s in range(t):
            gh = self.rec(h)
            r = torch.sigmoid(gi[:, s, :n] + gh[:, :n])
            z = torch.sigmoid(gi[:, s, n:2 * n] + gh[:, n:2 * n])
            cand = torch.tanh(gi[:, s, 2 * n:] + r * gh[:, 2 * n:])
            h = torch.where(keep[:, s, None], (1 - z) * cand + z * h, h)
            states.append(h)
        hs = torch.stack(states, 1)
        w = keep[..., None].to(hs.dtype)
        mean = (hs * w).sum(1) / w.sum(1).clamp(min=1)
        f = torch.cat([h, mean, self.sender(sender).to(h.dtype)], -1)
        return self.spam(f)[:, 0].float(), self.kind(f).float()


@_workload("message-spam training (random init, a character convnet and a GRU written out step by step): 64-256 messages a step (drawn), each 24-256 bytes (drawn per message, padded to the step's longest rounded up to a multiple of 16), byte embeddings of 64, two stride-2 1-d convolutions (width 128, kernel 5) to a quarter of the padded length (8-64 recurrent steps a step), a GRU cell of 256 applied step by step with the input gates precomputed and the state frozen past each message's end by torch.where, the final state and the masked mean of the states with 12 sender features (an MLP to 128) into a spam logit (binary cross-entropy, positive weight 4) and a 5-way abuse type (cross-entropy on the spam messages only); Adam, clipping at 1.0, bf16 autocast, 95 steps; the losses read back every 10 steps and every 19 steps a no-grad evaluation of 256 messages of 256 bytes with spam precision and recall at 0.5 read back")
def message_spam_gru_train(rng):
    d, hid, sender, n_type = _smoke(64, 8), _smoke(256, 16), 12, 5
    model = _SpamNet(d, hid, sender, n_type).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    pos_weight = torch.tensor(4.0, device="cuda")
    longest = _smoke(256, 48)

    def messages(lengths):
        b, t = len(lengths), -(-max(lengths) // 16) * 16
        chars = torch.randint(32, 256, (b, t), device="cuda").masked_fill(~keep_mask(lengths, t), 0)
        keep = keep_mask([-(-n // 4) for n in lengths], t // 4)
        feats = torch.randn(b, sender, device="cuda")
        spam = (torch.rand(b, device="cuda") < 0.15).float()
        kind = torch.randint(0, n_type, (b,), device="cuda")
        return chars, keep, feats, spam, kind

    steps = _smoke(95, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(64, 2), _smoke(256, 4))
        chars, keep, feats, spam, kind = messages([rng.randint(_smoke(24, 8), longest) for _ in range(b)])
        with torch.autocast("cuda", dtype=torch.bfloat16):
            s_log, k_log = model(chars, keep, feats)
        l_s = _F.binary_cross_entropy_with_logits(s_log, spam, pos_weight=pos_weight)
        l_k = (_F.cross_entropy(k_log, kind, reduction="none") * spam).sum() / spam.sum().clamp(min=1)
        loss = l_s + 0.5 * l_k
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_s.detach(), l_k.detach()]).tolist()
        del chars, keep, feats, spam, kind, s_log, k_log, l_s, l_k, loss
        if (step + 1) % _smoke(19, 2) == 0:
            model.eval()
            with torch.no_grad():
                chars, keep, feats, spam, kind = messages([longest] * _smoke(256, 4))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    s_log, _ = model(chars, keep, feats)
                pred = (s_log > 0).float()
                tp = (pred * spam).sum()
                out = torch.stack([tp / pred.sum().clamp(min=1), tp / spam.sum().clamp(min=1)])
            out.tolist()
            del chars, keep, feats, spam, kind, s_log, pred, tp, out


# ---------------------------------------------------------------- engagement forecasting (conditional 1-d DDPM)


class _Res1d(_nn.Module):
    """GroupNorm, SiLU, a kernel-3 1-d convolution, the conditioning embedding added per channel, again (dropout
    between); a 1x1 convolution on the skip when the widths differ."""

    def __init__(self, cin, cout, emb):
        super().__init__()
        self.a = _nn.Sequential(_nn.GroupNorm(8, cin), _nn.SiLU(), _nn.Conv1d(cin, cout, 3, 1, 1))
        self.e = _nn.Linear(emb, cout)
        self.b = _nn.Sequential(_nn.GroupNorm(8, cout), _nn.SiLU(), _nn.Dropout(0.1), _nn.Conv1d(cout, cout, 3, 1, 1))
        self.skip = _nn.Conv1d(cin, cout, 1) if cin != cout else _nn.Identity()

    def forward(self, x, e):
        return self.skip(x) + self.b(self.a(x) + self.e(e)[:, :, None])


class _CurveUNet(_nn.Module):
    """A 1-d U-Net over (noisy curve, observed prefix, observed mask) channels: two residual blocks a level, stride-2
    convolutions down, nearest upsampling and a convolution up, skips concatenated, a pre-norm attention block over
    time at the lowest level; the timestep's sine features plus the post-metadata embeddings condition every
    block."""

    def __init__(self, ch, widths, emb, cards):
        super().__init__()
        self.temb = mlp(widths[0], emb, emb, act=_nn.SiLU)
        self.register_buffer("offsets", torch.tensor([0] + list(cards[:-1])).cumsum(0))
        self.meta = _nn.Embedding(sum(cards), emb)
        self.inp = _nn.Conv1d(2 * ch + 1, widths[0], 3, 1, 1)
        self.down, self.pool = _nn.ModuleList(), _nn.ModuleList()
        c, skips = widths[0], []
        for i, w in enumerate(widths):
            self.down.append(_nn.ModuleList([_Res1d(c, w, emb), _Res1d(w, w, emb)]))
            skips.append(w)
            c = w
            self.pool.append(_nn.Conv1d(w, w, 3, 2, 1) if i < len(widths) - 1 else _nn.Identity())
        self.mid1, self.mid2 = _Res1d(c, c, emb), _Res1d(c, c, emb)
        self.attn = PreNormBlock(c, 4)
        self.up, self.lift = _nn.ModuleList(), _nn.ModuleList()
        for i, w in enumerate(reversed(widths)):
            s = skips[len(widths) - 1 - i]
            self.up.append(_nn.ModuleList([_Res1d(c + s, w, emb), _Res1d(w, w, emb)]))
            c = w
            self.lift.append(_nn.Conv1d(w, w, 3, 1, 1) if i < len(widths) - 1 else _nn.Identity())
        self.out = _nn.Sequential(_nn.GroupNorm(8, c), _nn.SiLU(), _nn.Conv1d(c, ch, 3, 1, 1))
        self.w0 = widths[0]

    def forward(self, x, t, meta):
        e = self.temb(_sincos(t, self.w0)) + self.meta(meta + self.offsets).sum(1)
        h = self.inp(x)
        skips = []
        for (r1, r2), p in zip(self.down, self.pool):
            h = r2(r1(h, e), e)
            skips.append(h)
            h = p(h)
        h = self.mid1(h, e)
        h = self.attn(h.transpose(1, 2)).transpose(1, 2)
        h = self.mid2(h, e)
        for i, ((r1, r2), lift) in enumerate(zip(self.up, self.lift)):
            h = r2(r1(torch.cat([h, skips.pop()], 1), e), e)
            if i < len(self.up) - 1:
                h = lift(_F.interpolate(h, scale_factor=2, mode="nearest"))
        return self.out(h).float()


@_workload("engagement-forecast diffusion training (random init, a conditional 1-d DDPM U-Net over hourly engagement curves): 32-128 posts a step (drawn), horizons of 72-168 hours (drawn per step, a multiple of 8), 4 log-engagement channels (views, likes, comments, shares) drawn on the device as noisy decaying curves; conditioned on the first 6-24 hours observed (drawn per step; the observed values and an observed mask as input channels, the loss on the unobserved hours only) and on 3 post-metadata fields (creator follower bucket of 12, content type of 8, posting hour of 24, one offset table) added to the timestep embedding; a U-Net of widths 64/128/256 (two residual blocks a level with GroupNorm, stride-2 convolutions down, nearest upsampling and a convolution up, skips concatenated, a middle of two residual blocks around a 4-head pre-norm attention block over time at the lowest level), 1,000-step cosine schedule, epsilon prediction, AdamW, clipping, an exponential moving average of the weights (decay 0.999, lerp_ per parameter), bf16 autocast, 230 steps; the loss read back every 10 steps and every 46 steps a no-grad 12-step DDIM forecast of 32 posts of 168 hours with the EMA weights and the mean absolute error of each channel's 7-day total read back")
def engagement_curve_diffusion_train(rng):
    ch, widths, emb, cards = 4, _smoke([64, 128, 256], [16, 32]), _smoke(256, 32), [12, 8, 24]
    model = _CurveUNet(ch, widths, emb, cards).cuda()
    ema = copy.deepcopy(model).eval()
    ema.requires_grad_(False)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.01)
    n_t = 1000
    s = torch.arange(n_t + 1, device="cuda", dtype=torch.float32) / n_t
    f = torch.cos((s + 0.008) / 1.008 * math.pi / 2) ** 2
    abar = (f[1:] / f[0]).clamp(min=1e-5)
    mult = 8 if len(widths) == 3 else 4
    lo, hi = _smoke(72, 16), _smoke(168, 32)

    def curves(b, hours, seen):
        tt = torch.arange(hours, device="cuda", dtype=torch.float32)[None, None]
        level = torch.randn(b, ch, 1, device="cuda") + 3
        tau = torch.rand(b, 1, 1, device="cuda") * 40 + 8
        x0 = level - tt / tau + 0.1 * torch.randn(b, ch, hours, device="cuda")
        obs = (torch.arange(hours, device="cuda") < seen).float()[None, None].expand(b, 1, hours)
        meta = torch.stack([torch.randint(0, c, (b,), device="cuda") for c in cards], 1)
        return x0 / 4, obs, meta

    steps = _smoke(230, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(32, 2), _smoke(128, 4))
        hours = rng.randint(lo // mult, hi // mult) * mult
        seen = rng.randint(6, min(24, hours // 2))
        x0, obs, meta = curves(b, hours, seen)
        t = torch.randint(0, n_t, (b,), device="cuda")
        a = abar[t][:, None, None]
        eps = torch.randn_like(x0)
        xt = a.sqrt() * x0 + (1 - a).sqrt() * eps
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(torch.cat([xt, x0 * obs, obs], 1), t, meta)
        w = 1 - obs
        loss = ((pred - eps).pow(2) * w).sum() / (w.sum() * ch).clamp(min=1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        with torch.no_grad():
            for pe, pm in zip(ema.parameters(), model.parameters()):
                pe.lerp_(pm, 0.001)
        if step % 10 == 0:
            loss.detach().item()
        del x0, obs, meta, t, a, eps, xt, pred, w, loss
        if (step + 1) % _smoke(46, 2) == 0:
            with torch.no_grad():
                b = _smoke(32, 2)
                x0, obs, meta = curves(b, hi, rng.randint(6, 24))
                x = torch.randn_like(x0)
                times = [int(v) for v in torch.linspace(n_t - 1, 0, _smoke(12, 3)).tolist()]
                for i, tc in enumerate(times):
                    a = abar[tc]
                    a_prev = abar[times[i + 1]] if i + 1 < len(times) else torch.ones_like(a)
                    tv = torch.full((b,), tc, device="cuda", dtype=torch.long)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        e = ema(torch.cat([x, x0 * obs, obs], 1), tv, meta)
                    x0_hat = ((x - (1 - a).sqrt() * e) / a.sqrt()).clamp(-3, 3)
                    x = a_prev.sqrt() * x0_hat + (1 - a_prev).sqrt() * e
                    x = torch.where(obs > 0, x0, x)
                mae = (torch.expm1(4 * x).sum(-1) - torch.expm1(4 * x0).sum(-1)).abs().mean(0)
            mae.tolist()
            del x0, obs, meta, x, a, a_prev, tv, e, x0_hat, mae


# ---------------------------------------------------------------- feed re-ranking service (transformer + MMR)


class _SessionRanker(_nn.Module):
    """History items and candidates: dense features projected, categorical embeddings (one offset table) and a
    segment embedding (the history's action type, or 'candidate') added; pre-norm blocks under a mask (history sees
    history, candidates see everything); per-candidate objective logits and a normalised similarity embedding."""

    def __init__(self, feat, d, heads, layers, cards, actions, n_obj, sim):
        super().__init__()
        self.proj = _nn.Linear(feat, d)
        self.register_buffer("offsets", torch.tensor([0] + list(cards[:-1])).cumsum(0))
        self.cat = _nn.Embedding(sum(cards), d)
        self.seg = _nn.Embedding(actions + 1, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.obj, self.sim = mlp(d, d, n_obj, act=_nn.GELU), _nn.Linear(d, sim)

    def forward(self, feats, cats, seg, allow, n_hist):
        x = self.proj(feats) + self.cat(cats + self.offsets).sum(1) + self.seg(seg)
        x = x[None]
        for blk in self.blocks:
            x = blk(x, mask=allow)
        c = self.norm(x[0, n_hist:])
        return self.obj(c).float(), _F.normalize(self.sim(c).float(), dim=-1)


@_workload("feed re-ranking serving (random init, a session transformer and a greedy diversity re-ranker): 830-870 requests (drawn), each one user session of 16-128 recent history items (drawn) and 64-512 retrieved candidates (drawn), 48 float features per item uploaded on a side stream from two reused pinned host buffers (filled once, sized for 128 history items and 512 candidates) one request ahead (two spans, waited on by event, record_stream'ed), 3 categorical fields per item (author of 100,000, topic of 500, media type of 5, one offset table) drawn on the device, the history's action type (like, comment, share, hide) or 'candidate' as a segment embedding; a 4-block pre-norm transformer (width 256, 4 heads) over history and candidates together under a boolean mask (history attends to history only), bf16 autocast; per candidate 5 objective probabilities (click, like, comment, hide, report) combined by fixed weights into a value, a 64-d normalised similarity embedding, and a greedy maximal-marginal-relevance selection of 20-40 posts (drawn per request; each pick an argmax of value minus 0.3 times the highest similarity to the posts already picked, picked posts masked by masked_fill, the chosen mask updated by scatter); each request's picked posts and their values read back once")
def feed_rerank_diversity_serve(rng):
    feat, d, heads, layers = _smoke(48, 8), _smoke(256, 32), _smoke(4, 2), _smoke(4, 1)
    cards, actions, n_obj, sim = _smoke([100000, 500, 5], [100, 20, 5]), 4, 5, _smoke(64, 8)
    model = _SessionRanker(feat, d, heads, layers, cards, actions, n_obj, sim).cuda().eval()
    model.requires_grad_(False)
    max_hist, max_cand = _smoke(128, 8), _smoke(512, 32)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randn((max_hist + max_cand) * feat, generator=gen).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    card_t = torch.tensor(cards, device="cuda")
    weights = torch.tensor([1.0, 2.0, 3.0, -4.0, -8.0], device="cuda")
    nreq = rng.randint(_smoke(830, 3), _smoke(870, 4))
    plan = [(rng.randint(_smoke(16, 2), max_hist), rng.randint(_smoke(64, 8), max_cand), rng.randint(_smoke(20, 2),
                                                                                                      _smoke(40, 4)))
            for _ in range(nreq)]

    def spans(p):
        return slice(0, p[0] * feat), slice(max_hist * feat, (max_hist + p[1]) * feat)

    nxt = up.upload(0, *spans(plan[0]))
    for i in range(nreq):
        n_hist, n_cand, k = plan[i]
        hist, cand, ev = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, *spans(plan[i + 1]))
        SideUploads.ready(ev, hist, cand)
        n = n_hist + n_cand
        with torch.no_grad():
            feats = torch.cat([hist.view(n_hist, feat), cand.view(n_cand, feat)])
            cats = (torch.rand(n, len(cards), device="cuda") * card_t).long()
            seg = torch.cat([torch.randint(0, actions, (n_hist,), device="cuda"),
                             torch.full((n_cand,), actions, device="cuda", dtype=torch.long)])
            pos = torch.arange(n, device="cuda")
            allow = (pos[None, :] < n_hist) | (pos[:, None] >= n_hist)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits, e = model(feats, cats, seg, allow, n_hist)
            value = logits.sigmoid() @ weights
            sims = e @ e.t()
            chosen = torch.zeros(n_cand, dtype=torch.bool, device="cuda")
            best_sim = torch.zeros(n_cand, device="cuda")
            picks = []
            for _ in range(k):
                adj = (value - 0.3 * best_sim).masked_fill(chosen, -1e9)
                j = adj.argmax(0, keepdim=True)
                picks.append(j)
                chosen = chosen.scatter(0, j, True)
                best_sim = torch.maximum(best_sim, sims.index_select(0, j)[0])
            idx = torch.cat(picks)
            out = torch.cat([idx.float(), value.gather(0, idx)])
        out.tolist()
        del hist, cand, ev, feats, cats, seg, pos, allow, logits, e, value, sims, chosen, best_sim, picks, adj, j
        del idx, out

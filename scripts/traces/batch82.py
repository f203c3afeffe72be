"""The eighty-second batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch81_b.py are): food and nutrition, written in torch alone, first half. A meal photo recognition and calorie
estimation service (uint8 meal photos of drawn counts and resolutions uploaded on a side stream, a ResNet-style trunk
with a dish classifier, multi-label ingredient detection and portion regression, calories and macronutrients from a
per-dish density table gathered by the top dish), recipe generation training (a decoder-only transformer over a
title and ingredient prefix followed by the instructions, recipes of drawn lengths padded per batch to their longest,
the loss over the real instruction tokens only), recipe-image cross-modal retrieval training (a ViT-style image
encoder over food photos at drawn resolutions and a recipe encoder over ingredient sets and instructions of drawn
lengths, a symmetric InfoNCE loss with a learned temperature and a dish-category loss, recall@1/5/10 at evaluation
points) and postprandial glucose forecasting from logged intake and wearable streams (a hand-written LayerNorm-GRU,
which cuDNN has no kernel for, over 15-minute windows of CGM, meal macronutrients, insulin and accelerometer features
of drawn lengths, masked to each participant's real length, multi-horizon Gaussian likelihood). Same conventions as
the earlier batches: nothing downloaded, data drawn at random on the device (or, for the meal photo service, from two
reused pinned host buffers), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: batch
sizes, lengths, photo counts and window counts are fixed on the host, padding handled by masks multiplied in or by
torch.where / masked_fill, no boolean-mask indexing; losses, metrics and estimates are read back only at logging
points. meal_photo_calorie_serve uses a side stream (uploads waited on by event, the tensors record_stream'ed); the
others are single-stream. The networks run under bf16 autocast.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new82.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and for
which of them the CPU smoke run (RECORD_SMOKE=1) ran.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, mlp, randint

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- meal photo calorie estimation service


class _Bottleneck(_nn.Module):
    def __init__(self, cin, mid, cout, stride):
        super().__init__()
        self.c1, self.b1 = _nn.Conv2d(cin, mid, 1, bias=False), _nn.BatchNorm2d(mid)
        self.c2, self.b2 = _nn.Conv2d(mid, mid, 3, stride, 1, bias=False), _nn.BatchNorm2d(mid)
        self.c3, self.b3 = _nn.Conv2d(mid, cout, 1, bias=False), _nn.BatchNorm2d(cout)
        self.short = None
        if stride != 1 or cin != cout:
            self.short = _nn.Sequential(_nn.Conv2d(cin, cout, 1, stride, bias=False), _nn.BatchNorm2d(cout))

    def forward(self, x):
        y = _F.relu(self.b1(self.c1(x)))
        y = _F.relu(self.b2(self.c2(y)))
        y = self.b3(self.c3(y))
        return _F.relu(y + (x if self.short is None else self.short(x)))


class _MealNet(_nn.Module):
    """A bottleneck ResNet trunk; heads: dish (softmax), ingredients (sigmoid), portion grams and a density
    correction (softplus)."""

    def __init__(self, widths, dishes, ingredients):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, widths[0], 7, 2, 3, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU(), _nn.MaxPool2d(3, 2, 1))
        blocks, cin = [], widths[0]
        for i, w in enumerate(widths):
            blocks += [_Bottleneck(cin, w, 4 * w, 1 if i == 0 else 2), _Bottleneck(4 * w, w, 4 * w, 1)]
            cin = 4 * w
        self.blocks = _nn.Sequential(*blocks)
        self.dish = _nn.Linear(cin, dishes)
        self.ingr = _nn.Linear(cin, ingredients)
        self.portion = mlp(cin, 256, 2, layers=2, act=_nn.GELU)

    def forward(self, x):
        f = self.blocks(self.stem(x)).mean((2, 3))
        return self.dish(f).float(), self.ingr(f).float(), _F.softplus(self.portion(f).float())


@_workload("meal photo recognition and calorie estimation service (random init, Food-101/Nutrition5k-like): 1,450-1,550 requests (drawn) of 1-16 meal photos (log-uniform) at 192, 224, 256 or 288 pixels (drawn), the uint8 pixels of each request uploaded on a side stream from two reused pinned host buffers one request ahead (waited on by event, record_stream'ed); normalisation on the device, a bottleneck ResNet trunk (widths 64-512, two blocks a stage, channels_last, bf16 autocast, eval-mode batch norm), a 256-dish classifier, 180 ingredient sigmoids with a threshold, a portion head (grams and a density correction); the top dish's kcal, protein, fat and carbohydrate per 100 g gathered from a per-dish table and blended with the top-5 dishes' by probability, scaled by the portion, plus an ingredient-based allergen flag matrix (14 allergens); each request's top-5 dishes, nutrients and allergen flags read back")
def meal_photo_calorie_serve(rng):
    widths, dishes, ingredients, allergens = _smoke([64, 128, 256, 512], [8, 8, 16, 16]), _smoke(256, 12), \
        _smoke(180, 20), 14
    model = _MealNet(widths, dishes, ingredients).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    per100 = torch.rand(dishes, 4, device="cuda") * torch.tensor([400.0, 30.0, 30.0, 60.0], device="cuda")
    allergen_of = (torch.rand(ingredients, allergens, device="cuda") < 0.08).float()
    ing_thr = torch.rand(ingredients, device="cuda") * 0.3 + 0.4
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1) * 255
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1) * 255
    maxb, resolutions = _smoke(16, 3), _smoke([192, 224, 256, 288], [32, 48])
    maxr = max(resolutions)
    host = [torch.randint(0, 256, (maxb * 3 * maxr * maxr,), dtype=torch.uint8).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    nreq = rng.randint(_smoke(1450, 3), _smoke(1550, 4))
    plan = [(_loguniform(rng, 1, maxb), rng.choice(resolutions)) for _ in range(nreq)]

    def span(i):
        b, r = plan[i]
        return slice(0, b * 3 * r * r)

    nxt = up.upload(0, span(0))
    for i in range(nreq):
        b, r = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, span(i + 1))
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            x = ((raw.view(b, 3, r, r).float() - mean) / std).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                dish, ingr, portion = model(x)
            p = torch.softmax(dish, -1)
            top_p, top_i = p.topk(5, -1)
            w = top_p / top_p.sum(-1, keepdim=True)
            nutr100 = (w[..., None] * per100[top_i]).sum(1)
            grams = portion[:, :1] * 150.0
            nutr = nutr100 * grams / 100.0 * portion[:, 1:].clamp(0.5, 2.0)
            present = (torch.sigmoid(ingr) > ing_thr).float()
            flags = (present @ allergen_of).clamp(max=1)
            out = torch.cat([top_i.float(), top_p, grams, nutr, flags, nutr.sum(0, keepdim=True).expand(b, 4)], 1)
        out.tolist()
        del item, raw, x, dish, ingr, portion, p, top_p, top_i, w, nutr100, grams, nutr, present, flags, out


# ---------------------------------------------------------------- recipe generation


class _RecipeLM(_nn.Module):
    def __init__(self, vocab, d, heads, layers, maxlen):
        super().__init__()
        self.emb, self.pos, self.seg = _nn.Embedding(vocab, d, padding_idx=0), _nn.Embedding(maxlen, d), \
            _nn.Embedding(3, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)

    def forward(self, ids, seg, mask):
        t = ids.shape[1]
        h = _F.dropout(self.emb(ids) + self.pos(torch.arange(t, device=ids.device)) + self.seg(seg), 0.1,
                       self.training)
        for blk in self.blocks:
            h = blk(h, mask=mask)
        return self.norm(h) @ self.emb.weight.T


@_workload("recipe generation training (random init, a decoder-only transformer, Recipe1M-like): 8-16 recipes a step (drawn, a multiple of 4), each a title of 4-16 tokens, an ingredient list of 20-96 tokens and instructions of 64-384 tokens (all drawn per recipe, segment embeddings for the three parts, the batch right-padded to its longest rounded to 8 and at most 504 positions, a causal mask joined with the key-padding mask), 6 pre-norm blocks (width 512, 8 heads, vocabulary 24,000, tied embedding, dropout 0.1), cross-entropy over the real instruction tokens only (title, ingredients and padding set to the ignore index by torch.where); AdamW with warmup and cosine decay, clipping, bf16 autocast, 430 steps; the loss read back every 10 steps and every 143 steps an evaluation of 4 x 16 recipes with the token accuracy and perplexity read back")
def recipe_generation_train(rng):
    vocab, d, heads, layers = _smoke(24000, 200), _smoke(512, 32), _smoke(8, 2), _smoke(6, 2)
    title, ingr, instr = (_smoke(4, 2), _smoke(16, 3)), (_smoke(20, 3), _smoke(96, 8)), (_smoke(64, 4), _smoke(384, 16))
    # The longest recipe is 16 + 96 + 384 + 2 separators = 498 tokens, padded up to 504: the position table has
    # room for the padded length.
    maxlen = -(-(title[1] + ingr[1] + instr[1] + 2) // 8) * 8
    model = _RecipeLM(vocab, d, heads, layers, maxlen).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, betas=(0.9, 0.95))

    def batch(b):
        tl = [rng.randint(*title) for _ in range(b)]
        il = [rng.randint(*ingr) for _ in range(b)]
        sl = [rng.randint(*instr) for _ in range(b)]
        tot = [a + c + e + 2 for a, c, e in zip(tl, il, sl)]
        t = -(-max(tot) // 8) * 8
        ar = torch.arange(t, device="cuda")[None]
        e1 = torch.tensor(tl, device="cuda")[:, None]
        e2 = e1 + 1 + torch.tensor(il, device="cuda")[:, None]
        end = torch.tensor(tot, device="cuda")[:, None]
        valid = ar < end
        seg = (ar > e1).long() + (ar > e2).long()
        ids = torch.randint(4, vocab, (b, t), device="cuda")
        ids = torch.where((ar == e1) | (ar == e2), torch.full_like(ids, 2), ids)
        ids = torch.where(ar == end - 1, torch.full_like(ids, 3), ids).masked_fill(~valid, 0)
        mask = torch.ones(t, t, dtype=torch.bool, device="cuda").tril()[None, None] & valid[:, None, None, :]
        lab = torch.cat([ids[:, 1:], torch.zeros_like(ids[:, :1])], 1)
        lab = torch.where((ar >= e2) & (ar < end - 1), lab, torch.full_like(lab, -100))
        return ids, seg * valid.long(), mask, lab

    steps = _smoke(430, 3)
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = 3e-4 * min(1.0, (step + 1) / 25) * 0.5 * (1 + math.cos(math.pi * step / steps))
        model.train()
        b = randint(rng, _smoke(8, 2), _smoke(16, 4), _smoke(4, 1))
        ids, seg, mask, lab = batch(b)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(ids, seg, mask)
        loss = _F.cross_entropy(logits.float().flatten(0, 1), lab.flatten(), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            loss.item()
        del ids, seg, mask, lab, logits, loss
        if (step + 1) % _smoke(143, 2) == 0:
            model.eval()
            correct, count, nll = [], [], []
            with torch.no_grad():
                for _ in range(_smoke(4, 1)):
                    ids, seg, mask, lab = batch(_smoke(16, 2))
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        logits = model(ids, seg, mask).float()
                    real = (lab >= 0).float()
                    correct.append(((logits.argmax(-1) == lab).float() * real).sum())
                    count.append(real.sum())
                    nll.append(_F.cross_entropy(logits.flatten(0, 1), lab.flatten(), ignore_index=-100,
                                                reduction="sum"))
                    del ids, seg, mask, lab, logits, real
                n = torch.stack(count).sum()
                metrics = torch.stack([torch.stack(correct).sum() / n, (torch.stack(nll).sum() / n).exp()])
            metrics.tolist()
            del correct, count, nll, n, metrics


# ---------------------------------------------------------------- recipe-image cross-modal retrieval


class _ImageTower(_nn.Module):
    def __init__(self, d, heads, layers, patch, max_tokens, out):
        super().__init__()
        self.patch = _nn.Conv2d(3, d, patch, patch)
        self.cls = _nn.Parameter(torch.zeros(1, 1, d))
        self.pos = _nn.Embedding(max_tokens, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.proj = _nn.Linear(d, out, bias=False)

    def forward(self, x):
        p = self.patch(x).flatten(2).transpose(1, 2)
        h = torch.cat([self.cls.expand(p.shape[0], -1, -1).to(p.dtype), p], 1)
        h = h + self.pos(torch.arange(h.shape[1], device=x.device))
        for blk in self.blocks:
            h = blk(h)
        return self.proj(self.norm(h[:, 0]))


class _RecipeTower(_nn.Module):
    """Ingredients as a set (no positions, a transformer over the set, masked mean) and instructions as a
    sequence (positions, a transformer, masked mean), fused by an MLP."""

    def __init__(self, n_ingr, vocab, d, heads, layers, maxlen, out):
        super().__init__()
        self.ingr = _nn.Embedding(n_ingr, d, padding_idx=0)
        self.word, self.pos = _nn.Embedding(vocab, d, padding_idx=0), _nn.Embedding(maxlen, d)
        self.iblocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(2))
        self.sblocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.fuse = mlp(2 * d, 2 * d, out, layers=2, act=_nn.GELU)

    @staticmethod
    def _pool(h, m):
        m = m[..., None].to(h.dtype)
        return (h * m).sum(1) / m.sum(1).clamp(min=1)

    def forward(self, ingr, imask, words, wmask):
        hi = self.ingr(ingr)
        key = ((1 - imask) * -1e4)[:, None, None, :].to(hi.dtype)
        for blk in self.iblocks:
            hi = blk(hi, mask=key)
        t = words.shape[1]
        hs = self.word(words) + self.pos(torch.arange(t, device=words.device))
        key = ((1 - wmask) * -1e4)[:, None, None, :].to(hs.dtype)
        for blk in self.sblocks:
            hs = blk(hs, mask=key)
        return self.fuse(torch.cat([self._pool(hi, imask), self._pool(hs, wmask)], -1))


@_workload("recipe-image cross-modal retrieval training (random init, im2recipe-like): 32-64 recipe-photo pairs a step (drawn, a multiple of 16), photos at 160, 192 or 224 pixels (drawn per step) through a ViT-style image tower (16-pixel patches, up to 197 tokens, 6 blocks, width 384, 6 heads), recipes as 3-20 ingredients (drawn per recipe, of 3,000, a set transformer of 2 blocks, masked mean) and instructions of 32-256 tokens (drawn per recipe, vocabulary 20,000, padded to the batch's longest rounded to 8, 4 blocks, masked mean), both projected to 256 and L2-normalised; a symmetric InfoNCE loss with a learned temperature and a 1,000-way dish-category loss from both towers' embeddings; AdamW, clipping, bf16 autocast, 215 steps; the loss read back every 20 steps and every 70 steps an evaluation embedding 4 x 128 pairs with image-to-recipe and recipe-to-image recall@1, 5 and 10 and the median rank read back")
def recipe_image_retrieval_train(rng):
    d, heads, out, cats = _smoke(384, 32), _smoke(6, 2), _smoke(256, 16), _smoke(1000, 10)
    n_ingr, vocab, maxi, maxw = _smoke(3000, 60), _smoke(20000, 200), _smoke(20, 5), _smoke(256, 24)
    resolutions, patch = _smoke([160, 192, 224], [32, 48]), _smoke(16, 16)
    # Positions for the longest inputs: (224 / 16)^2 + 1 = 197 image tokens; 256 words, already a multiple of 8.
    max_tokens = (max(resolutions) // patch) ** 2 + 1
    maxlen = -(-maxw // 8) * 8
    img = _ImageTower(d, heads, _smoke(6, 2), patch, max_tokens, out).cuda()
    rec = _RecipeTower(n_ingr, vocab, d, heads, _smoke(4, 2), maxlen, out).cuda()
    cls = _nn.Linear(out, cats).cuda()
    logit_scale = torch.tensor(math.log(1 / 0.07), device="cuda").requires_grad_()
    params = list(img.parameters()) + list(rec.parameters()) + list(cls.parameters()) + [logit_scale]
    opt = torch.optim.AdamW(params, lr=2e-4, weight_decay=0.05)

    def batch(b, r):
        x = torch.randn(b, 3, r, r, device="cuda")
        il = torch.tensor([rng.randint(3, maxi) for _ in range(b)], device="cuda")[:, None]
        imask = (torch.arange(maxi, device="cuda")[None] < il).float()
        ingr = torch.randint(1, n_ingr, (b, maxi), device="cuda") * imask.long()
        wl = [rng.randint(_smoke(32, 4), maxw) for _ in range(b)]
        t = -(-max(wl) // 8) * 8
        wmask = (torch.arange(t, device="cuda")[None] < torch.tensor(wl, device="cuda")[:, None]).float()
        words = torch.randint(1, vocab, (b, t), device="cuda") * wmask.long()
        y = torch.randint(0, cats, (b,), device="cuda")
        return x, ingr, imask, words, wmask, y

    def embed(x, ingr, imask, words, wmask):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return _F.normalize(img(x).float(), dim=-1), _F.normalize(rec(ingr, imask, words, wmask).float(), dim=-1)

    steps = _smoke(215, 3)
    for step in range(steps):
        img.train()
        rec.train()
        b = randint(rng, _smoke(32, 4), _smoke(64, 8), _smoke(16, 4))
        r = rng.choice(resolutions)
        x, ingr, imask, words, wmask, y = batch(b, r)
        ei, er = embed(x, ingr, imask, words, wmask)
        sim = logit_scale.exp().clamp(max=100) * ei @ er.T
        target = torch.arange(b, device="cuda")
        loss = (_F.cross_entropy(sim, target) + _F.cross_entropy(sim.T, target)) / 2 \
            + 0.1 * (_F.cross_entropy(cls(ei), y) + _F.cross_entropy(cls(er), y))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if step % 20 == 0:
            loss.item()
        del x, ingr, imask, words, wmask, y, ei, er, sim, target, loss
        if (step + 1) % _smoke(70, 2) == 0:
            img.eval()
            rec.eval()
            eis, ers = [], []
            with torch.no_grad():
                for _ in range(_smoke(4, 2)):
                    x, ingr, imask, words, wmask, _y = batch(_smoke(128, 4), max(resolutions))
                    ei, er = embed(x, ingr, imask, words, wmask)
                    eis.append(ei)
                    ers.append(er)
                    del x, ingr, imask, words, wmask, _y, ei, er
                s = torch.cat(eis) @ torch.cat(ers).T
                n = s.shape[0]
                diag = s.diagonal()
                r_i2r = (s > diag[:, None]).sum(1).float()
                r_r2i = (s > diag[None, :]).sum(0).float()
                ks = torch.tensor([1.0, 5.0, 10.0], device="cuda")
                metrics = torch.cat([(r_i2r[:, None] < ks).float().mean(0), (r_r2i[:, None] < ks).float().mean(0),
                                     r_i2r.median()[None] + 1, r_r2i.median()[None] + 1, torch.tensor([n], device="cuda")])
            metrics.tolist()
            del eis, ers, s, diag, r_i2r, r_r2i, ks, metrics


# ---------------------------------------------------------------- postprandial glucose forecasting


class _LNGRU(_nn.Module):
    """One layer of a GRU with layer norm on the gates (no cuDNN kernel), the input projection for every step at
    once, the recurrence one window at a time."""

    def __init__(self, din, h):
        super().__init__()
        self.h = h
        self.wx = _nn.Linear(din, 3 * h)
        self.wh = _nn.Linear(h, 3 * h, bias=False)
        self.nx, self.nh = _nn.LayerNorm(3 * h), _nn.LayerNorm(3 * h)

    def forward(self, x, mask):
        """x (B, T, din), mask (B, T): (B, T, h); past each row's end the hidden state is held."""
        b, t, _ = x.shape
        gx = self.nx(self.wx(x))
        hs = x.new_zeros(b, self.h)
        outs = []
        for i in range(t):
            gh = self.nh(self.wh(hs))
            rx, zx, nx = gx[:, i].chunk(3, -1)
            rh, zh, nh = gh.chunk(3, -1)
            r, z = torch.sigmoid(rx + rh), torch.sigmoid(zx + zh)
            n = torch.tanh(nx + r * nh)
            new = (1 - z) * n + z * hs
            m = mask[:, i, None].to(new.dtype)
            hs = m * new + (1 - m) * hs
            outs.append(hs)
        return torch.stack(outs, 1)


class _GlucoseNet(_nn.Module):
    def __init__(self, feats, n_people, d, h, horizons):
        super().__init__()
        self.person = _nn.Embedding(n_people, d)
        self.inp = _nn.Sequential(_nn.Conv1d(feats, d, 3, padding=1), _nn.GELU(), _nn.Conv1d(d, d, 3, padding=1))
        self.gru1, self.gru2 = _LNGRU(d, h), _LNGRU(h, h)
        self.head = mlp(h + d, h, 2 * horizons, layers=2, act=_nn.GELU)

    def forward(self, x, pid, mask):
        e = self.person(pid)
        f = _F.gelu(self.inp(x.transpose(1, 2)).transpose(1, 2) + e[:, None])
        h = self.gru2(self.gru1(f, mask), mask)
        out = self.head(torch.cat([h, e[:, None].expand(-1, h.shape[1], -1)], -1)).float()
        mu, log_sigma = out.chunk(2, -1)
        return mu, log_sigma.clamp(-5, 3)


@_workload("postprandial glucose forecasting from logged intake and wearables training (random init, a hand-written LayerNorm-GRU): 32-128 participants a step (drawn, a multiple of 16) of 12-36 hours in 15-minute windows (48-144 windows, drawn per step; each participant's real length drawn and masked, hidden states held past it), 12 features a window (CGM mean and slope, logged carbohydrate, sugar, fat, protein and fibre, bolus and basal insulin, accelerometer activity counts, heart rate, sleep flag; meals sparse), a participant embedding (2,000 people), two 1D convolutions, two stacked GRU layers with layer-normed gates (width 192, one window at a time), a head predicting mean and log-scale of glucose 30, 60, 90 and 120 minutes ahead; Gaussian negative log-likelihood over the real windows with targets masked where the horizon runs past the end; AdamW, clipping, bf16 autocast, 28 steps; the loss read back every 4 steps and every 9 steps an evaluation of 2 x 128 participants at 96 windows with RMSE per horizon and the share within the 20% Clarke-like zone read back")
def intake_glucose_gru_train(rng):
    feats, n_people, d, h, horizons = 12, _smoke(2000, 20), _smoke(128, 16), _smoke(192, 16), 4
    model = _GlucoseNet(feats, n_people, d, h, horizons).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    steps_ahead = torch.tensor([2, 4, 6, 8], device="cuda")

    def batch(b, t):
        lens = torch.randint(max(4, t // 2), t + 1, (b, 1), device="cuda")
        ar = torch.arange(t, device="cuda")[None]
        mask = (ar < lens).float()
        x = torch.randn(b, t, feats, device="cuda")
        meal = (torch.rand(b, t, 1, device="cuda") < 0.08).float()
        x = torch.cat([x[..., :2], x[..., 2:7].abs() * meal, x[..., 7:]], -1) * mask[..., None]
        glucose = torch.cumsum(torch.randn(b, t + 8, device="cuda") * 0.1, 1)
        idx = (ar[..., None] + steps_ahead).expand(b, t, horizons)
        target = torch.gather(glucose[:, None].expand(b, t, t + 8), 2, idx)
        tmask = ((ar[..., None] + steps_ahead) < lens[..., None]).float() * mask[..., None]
        pid = torch.randint(0, n_people, (b,), device="cuda")
        return x, pid, mask, target, tmask

    steps = _smoke(28, 3)
    for step in range(steps):
        model.train()
        b = randint(rng, _smoke(32, 4), _smoke(128, 8), _smoke(16, 4))
        t = rng.randint(_smoke(48, 4), _smoke(144, 8))
        x, pid, mask, target, tmask = batch(b, t)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            mu, ls = model(x, pid, mask)
        nll = (ls + 0.5 * ((target - mu) / ls.exp()) ** 2) * tmask
        loss = nll.sum() / tmask.sum().clamp(min=1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 4 == 0:
            loss.item()
        del x, pid, mask, target, tmask, mu, ls, nll, loss
        if (step + 1) % _smoke(9, 2) == 0:
            model.eval()
            se, within, count = [], [], []
            with torch.no_grad():
                for _ in range(_smoke(2, 1)):
                    x, pid, mask, target, tmask = batch(_smoke(128, 4), _smoke(96, 6))
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        mu, _ls = model(x, pid, mask)
                    se.append((((mu - target) ** 2) * tmask).sum((0, 1)))
                    within.append((((mu - target).abs() <= 0.2 * target.abs() + 0.1).float() * tmask).sum())
                    count.append(tmask.sum((0, 1)))
                    del x, pid, mask, target, tmask, mu, _ls
                n = torch.stack(count).sum(0)
                metrics = torch.cat([(torch.stack(se).sum(0) / n.clamp(min=1)).sqrt(),
                                     (torch.stack(within).sum() / n.sum().clamp(min=1))[None]])
            metrics.tolist()
            del se, within, count, n, metrics

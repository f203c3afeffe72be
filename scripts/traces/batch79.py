"""The seventy-ninth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch77_b.py are): news, media and content moderation, written in torch alone, first half. A headline generation
service (a decoder-only transformer over batches of left-padded articles of drawn prompt lengths, a prefill and then a
drawn number of new tokens decoded one at a time with the key/value cache grown by concatenation every step, as
simple servers do, greedy or top-k sampling), encoder-decoder abstractive summarization fine-tuning (articles and
summaries of drawn lengths padded per batch to their longest, teacher forcing, label-smoothed cross-entropy over the
real summary tokens), claim-evidence verification for misinformation and stance detection (a cross-encoder over a
claim joined to each of a drawn number of evidence passages of drawn lengths, attention pooling over the evidence
masked to the real count, a 3-way stance head and a per-passage relevance head) and an image moderation service (uint8
images uploaded on a side stream, a ResNet-style classifier with several policy heads, per-policy thresholds applied
by tensor ops). Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or,
for the moderation service, from two reused pinned host buffers), `rng` the workload's random.Random for every shape,
count and sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow
reads a tensor's value: batch sizes, lengths, evidence counts and decode lengths are fixed on the host, padding
handled by masks multiplied in or by torch.where / masked_fill, no boolean-mask indexing; losses, metrics, generated
tokens and decisions are read back only at logging points. image_moderation_serve uses a side stream (uploads waited
on by event, the tensors record_stream'ed); the others are single-stream. The models run under bf16 autocast.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new79.sh's header for each workload's op outputs and peak live bytes
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


def _split(t, h):
    return t.unflatten(-1, (h, -1)).transpose(1, 2)


def _merge(t):
    return t.transpose(1, 2).flatten(2)


# ---------------------------------------------------------------- headline generation with a growing KV cache


class _DecBlock(_nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.n1, self.n2 = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.proj = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.fc1, self.fc2 = _nn.Linear(d, 4 * d), _nn.Linear(4 * d, d)

    def forward(self, x, cache, mask):
        """x (B, T, d); cache None or (k, v) of (B, H, S, dh); mask a boolean (B, 1, T, S + T): the new cache too."""
        q, k, v = (_split(t, self.h) for t in self.qkv(self.n1(x)).chunk(3, -1))
        if cache is not None:
            k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
        a = _F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.proj(_merge(a))
        return x + self.fc2(_F.gelu(self.fc1(self.n2(x)))), (k, v)


class _HeadlineLM(_nn.Module):
    def __init__(self, vocab, d, heads, layers, maxlen):
        super().__init__()
        self.emb, self.pos = _nn.Embedding(vocab, d), _nn.Embedding(maxlen, d)
        self.blocks = _nn.ModuleList(_DecBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)

    def forward(self, ids, pos, caches, mask):
        h = self.emb(ids) + self.pos(pos)
        new = []
        for blk, c in zip(self.blocks, caches):
            h, c = blk(h, c, mask)
            new.append(c)
        return self.norm(h[:, -1]) @ self.emb.weight.T, new


@_workload("news headline generation service with a growing KV cache (random init): 76-84 requests (drawn) of 1-16 articles (log-uniform) of 64-768 prompt tokens each (drawn per article, left-padded to the batch's longest under a key mask), a decoder-only transformer (6 pre-norm blocks, width 512, 8 heads, vocabulary 32,000, tied output embedding) under bf16 autocast; a prefill over the prompts and then 8-24 new tokens (drawn) decoded one at a time with every block's keys and values grown by concatenation each step and the mask grown with them; greedy decoding on about half the requests and top-50 temperature sampling on the rest (drawn), a repetition penalty over the tokens generated so far by scatter; each request's headlines read back")
def news_headline_kv_serve(rng):
    vocab, d, heads, layers = _smoke(32000, 200), _smoke(512, 32), _smoke(8, 2), 6
    maxp, maxnew = _smoke(768, 24), _smoke(24, 6)
    model = _HeadlineLM(vocab, d, heads, layers, maxp + maxnew).cuda().eval()
    model.requires_grad_(False)
    nreq = rng.randint(_smoke(76, 2), _smoke(84, 3))
    for _ in range(nreq):
        b = _loguniform(rng, 1, _smoke(16, 4))
        lens = [rng.randint(_smoke(64, 6), maxp) for _ in range(b)]
        p = max(lens)
        n = rng.randint(_smoke(8, 2), maxnew)
        greedy = rng.random() < 0.5
        with torch.no_grad():
            lens_t = torch.tensor(lens, device="cuda")[:, None]
            ar = torch.arange(p, device="cuda")[None]
            valid = ar >= (p - lens_t)
            ids = torch.randint(3, vocab, (b, p), device="cuda").masked_fill(~valid, 0)
            pos = (ar - (p - lens_t)).clamp(min=0)
            causal = torch.ones(p, p, dtype=torch.bool, device="cuda").tril()
            mask = (causal[None] & valid[:, None, :])[:, None]
            mask = mask | torch.eye(p, dtype=torch.bool, device="cuda")[None, None]
            out = torch.zeros(b, n, dtype=torch.long, device="cuda")
            seen = torch.zeros(b, vocab, device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits, caches = model(ids, pos, [None] * layers, mask)
            kmask = valid[:, None, None, :]
            cur = lens_t[:, 0]
            for t in range(n):
                logits = logits.float() - 1.2 * seen * logits.float().sign()
                if greedy:
                    tok = logits.argmax(-1)
                else:
                    top_v, top_i = (logits / 0.8).topk(_smoke(50, 5), -1)
                    pick = torch.multinomial(torch.softmax(top_v, -1), 1)
                    tok = top_i.gather(1, pick)[:, 0]
                out[:, t] = tok
                seen.scatter_(1, tok[:, None], 1.0)
                kmask = torch.cat([kmask, torch.ones(b, 1, 1, 1, dtype=torch.bool, device="cuda")], -1)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits, caches = model(tok[:, None], (cur + t)[:, None], caches, kmask)
            out.tolist()
        del lens_t, ar, valid, ids, pos, causal, mask, out, seen, logits, caches, kmask, cur


# ---------------------------------------------------------------- abstractive summarization fine-tuning


class _XBlock(_nn.Module):
    """A pre-norm decoder block: causal self-attention, cross-attention to a memory under a key mask, a GELU MLP."""

    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.n1, self.n2, self.n3 = _nn.LayerNorm(d), _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.proj = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.q, self.kv, self.o = _nn.Linear(d, d), _nn.Linear(d, 2 * d), _nn.Linear(d, d)
        self.fc1, self.fc2 = _nn.Linear(d, 4 * d), _nn.Linear(4 * d, d)

    def forward(self, x, mem, self_mask, mem_mask):
        q, k, v = (_split(t, self.h) for t in self.qkv(self.n1(x)).chunk(3, -1))
        x = x + self.proj(_merge(_F.scaled_dot_product_attention(q, k, v, attn_mask=self_mask)))
        k, v = self.kv(mem).chunk(2, -1)
        a = _F.scaled_dot_product_attention(_split(self.q(self.n2(x)), self.h), _split(k, self.h),
                                            _split(v, self.h), attn_mask=mem_mask)
        x = x + self.o(_merge(a))
        return x + self.fc2(_F.gelu(self.fc1(self.n3(x))))


class _Summarizer(_nn.Module):
    def __init__(self, vocab, d, heads, enc_layers, dec_layers, maxlen):
        super().__init__()
        self.emb, self.pos = _nn.Embedding(vocab, d, padding_idx=0), _nn.Embedding(maxlen, d)
        self.enc = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(enc_layers))
        self.dec = _nn.ModuleList(_XBlock(d, heads) for _ in range(dec_layers))
        self.enc_norm, self.dec_norm = _nn.LayerNorm(d), _nn.LayerNorm(d)

    def forward(self, src, src_mask, tgt):
        s, t = src.shape[1], tgt.shape[1]
        h = _F.dropout(self.emb(src) + self.pos(torch.arange(s, device=src.device)), 0.1, self.training)
        key = ((1 - src_mask) * -1e4)[:, None, None, :].to(h.dtype)
        for blk in self.enc:
            h = blk(h, mask=key)
        mem = self.enc_norm(h)
        g = _F.dropout(self.emb(tgt) + self.pos(torch.arange(t, device=tgt.device)), 0.1, self.training)
        causal = torch.ones(t, t, dtype=torch.bool, device=tgt.device).tril()
        for blk in self.dec:
            g = blk(g, mem, causal, key)
        return self.dec_norm(g) @ self.emb.weight.T


@_workload("abstractive news summarization fine-tuning with dynamic padding (random init, an encoder-decoder transformer): 8-16 articles a step (drawn, a multiple of 4) of 128-640 tokens (drawn per article, the batch padded to its longest rounded to 8, a key-padding mask) with summaries of 24-128 tokens (drawn per article, padded likewise), a 4-block pre-norm encoder and a 4-block decoder with causal self-attention and cross-attention (width 512, 8 heads, vocabulary 32,000, shared tied embedding, dropout 0.1); teacher forcing, label-smoothed (0.1) cross-entropy over the real summary tokens only (padding masked by torch.where to the ignore index); AdamW with warmup and linear decay, clipping, bf16 autocast, 250 steps; the loss read back every 10 steps and every 62 steps an evaluation of 4 batches of 16 articles with the token accuracy and perplexity read back")
def news_summarizer_finetune(rng):
    vocab, d, heads = _smoke(32000, 200), _smoke(512, 32), _smoke(8, 2)
    maxs, maxt = _smoke(640, 24), _smoke(128, 12)
    model = _Summarizer(vocab, d, heads, 4, 4, maxs).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01, betas=(0.9, 0.98))

    def batch(b):
        sl = [rng.randint(_smoke(128, 8), maxs) for _ in range(b)]
        tl = [rng.randint(_smoke(24, 4), maxt) for _ in range(b)]
        s, t = -(-max(sl) // 8) * 8, -(-(max(tl) + 1) // 8) * 8
        smask = (torch.arange(s, device="cuda")[None] < torch.tensor(sl, device="cuda")[:, None]).float()
        src = torch.randint(3, vocab, (b, s), device="cuda") * smask.long()
        tlen = torch.tensor(tl, device="cuda")[:, None]
        tvalid = torch.arange(t, device="cuda")[None] <= tlen
        summ = torch.randint(3, vocab, (b, t), device="cuda")
        summ[:, 0] = 1
        summ = summ.masked_fill(~tvalid, 0)
        inp, lab = summ[:, :-1], summ[:, 1:]
        lab = torch.where(tvalid[:, 1:], lab, torch.full_like(lab, -100))
        return src, smask, inp, lab

    steps = _smoke(250, 3)
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = 3e-4 * min(1.0, (step + 1) / 30) * max(0.05, 1 - step / steps)
        model.train()
        b = randint(rng, _smoke(8, 2), _smoke(16, 4), _smoke(4, 1))
        src, smask, inp, lab = batch(b)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(src, smask, inp)
        loss = _F.cross_entropy(logits.float().flatten(0, 1), lab.flatten(), ignore_index=-100, label_smoothing=0.1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            loss.item()
        del src, smask, inp, lab, logits, loss
        if (step + 1) % _smoke(62, 2) == 0:
            model.eval()
            correct, count, nll = [], [], []
            with torch.no_grad():
                for _ in range(_smoke(4, 1)):
                    src, smask, inp, lab = batch(_smoke(16, 2))
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        logits = model(src, smask, inp).float()
                    real = (lab >= 0).float()
                    correct.append(((logits.argmax(-1) == lab).float() * real).sum())
                    count.append(real.sum())
                    nll.append(_F.cross_entropy(logits.flatten(0, 1), lab.flatten(), ignore_index=-100,
                                                reduction="sum"))
                    del src, smask, inp, lab, logits, real
                n = torch.stack(count).sum()
                metrics = torch.stack([torch.stack(correct).sum() / n, (torch.stack(nll).sum() / n).exp()])
            metrics.tolist()
            del correct, count, nll, n, metrics


# ---------------------------------------------------------------- claim-evidence verification


class _CrossEncoder(_nn.Module):
    def __init__(self, vocab, d, heads, layers, maxlen, classes):
        super().__init__()
        self.emb, self.pos, self.seg = _nn.Embedding(vocab, d, padding_idx=0), _nn.Embedding(maxlen, d), \
            _nn.Embedding(2, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.att = _nn.Linear(d, 1)
        self.rel = _nn.Linear(d, 1)
        self.cls = mlp(2 * d, d, classes, layers=2, act=_nn.GELU)

    def forward(self, ids, seg, keymask, ev_mask):
        """ids, seg, keymask (B * K, T) for B claims x K evidence slots; ev_mask (B, K): stance logits (B, C) and
        relevance logits (B, K)."""
        bk, t = ids.shape
        b, k = ev_mask.shape
        h = _F.dropout(self.emb(ids) + self.pos(torch.arange(t, device=ids.device)) + self.seg(seg), 0.1,
                       self.training)
        mask = ((1 - keymask) * -1e4)[:, None, None, :].to(h.dtype)
        for blk in self.blocks:
            h = blk(h, mask=mask)
        pair = self.norm(h[:, 0]).view(b, k, -1)
        w = torch.softmax(self.att(pair)[..., 0].float().masked_fill(ev_mask == 0, -1e4), -1)
        pooled = (w[..., None].to(pair.dtype) * pair).sum(1)
        best = pair.float().masked_fill(ev_mask[..., None] == 0, -1e4).amax(1).to(pair.dtype)
        return self.cls(torch.cat([pooled, best], -1)).float(), self.rel(pair)[..., 0].float()


@_workload("claim-evidence verification training for misinformation and stance detection (random init, a cross-encoder): 8-16 claims a step (drawn, a multiple of 4) of 12-48 tokens, each joined (with a separator and segment embeddings) to 2-5 evidence passages (drawn per step, the real count per claim drawn and the rest masked) of 32-192 tokens (drawn per pair, padded to the step's longest pair rounded to 8 under a key-padding mask); a 6-block pre-norm encoder (width 384, 6 heads, vocabulary 30,000), each pair's first token pooled, attention pooling and a masked max over the claim's real evidence, a 3-way stance classifier (supports, refutes, not enough information; class weights) and a per-passage relevance head by masked binary cross-entropy; AdamW with warmup and cosine decay, clipping, bf16 autocast, 380 steps; the loss read back every 20 steps and every 95 steps an evaluation of 8 x 16 claims with accuracy and macro-F1 read back")
def claim_evidence_verify_train(rng):
    vocab, d, heads, layers = _smoke(30000, 200), _smoke(384, 24), _smoke(6, 2), 6
    maxc, maxe, classes = _smoke(48, 8), _smoke(192, 16), 3
    # Room for the longest pair after batch() rounds it up to a multiple of 8. The first recording
    # (docs/gpu-results.md 42) had maxc + maxe + 2 = 242 positions for pairs padded to up to 248: an index out of the
    # position table, a device-side assert reported later inside cuDNN's attention (the meta device checks no index).
    maxlen = -(-(maxc + maxe + 2) // 8) * 8
    model = _CrossEncoder(vocab, d, heads, layers, maxlen, classes).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-5 * 4, weight_decay=0.01)
    cw = torch.tensor([1.0, 1.3, 0.8], device="cuda")

    def batch(b, k):
        cl = rng.randint(_smoke(12, 3), maxc)
        el = [rng.randint(_smoke(32, 4), maxe) for _ in range(b * k)]
        t = -(-(cl + 2 + max(el)) // 8) * 8
        lens = torch.tensor(el, device="cuda")[:, None] + cl + 2
        ar = torch.arange(t, device="cuda")[None]
        keymask = (ar < lens).float()
        seg = (ar > cl).long() * keymask.long()
        ids = torch.randint(3, vocab, (b * k, t), device="cuda")
        ids = torch.where(ar == 0, torch.ones_like(ids), ids)
        ids = torch.where(ar == cl + 1, torch.full_like(ids, 2), ids) * keymask.long()
        real = torch.randint(1, k + 1, (b, 1), device="cuda")
        ev_mask = (torch.arange(k, device="cuda")[None] < real).float()
        label = torch.randint(0, classes, (b,), device="cuda")
        rel = (torch.rand(b, k, device="cuda") < 0.4).float() * ev_mask
        return ids, seg, keymask, ev_mask, label, rel

    steps = _smoke(380, 3)
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = 2e-4 * min(1.0, (step + 1) / 30) * 0.5 * (1 + math.cos(math.pi * step / steps))
        model.train()
        b = randint(rng, _smoke(8, 2), _smoke(16, 4), _smoke(4, 1))
        k = rng.randint(2, 5)
        ids, seg, keymask, ev_mask, label, rel = batch(b, k)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            stance, relevance = model(ids, seg, keymask, ev_mask)
        rl = _F.binary_cross_entropy_with_logits(relevance, rel, reduction="none")
        loss = _F.cross_entropy(stance, label, weight=cw) + 0.5 * (rl * ev_mask).sum() / ev_mask.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.item()
        del ids, seg, keymask, ev_mask, label, rel, stance, relevance, rl, loss
        if (step + 1) % _smoke(95, 2) == 0:
            model.eval()
            preds, labels = [], []
            with torch.no_grad():
                for _ in range(_smoke(8, 1)):
                    ids, seg, keymask, ev_mask, label, _rel = batch(_smoke(16, 2), 4)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        stance, _ = model(ids, seg, keymask, ev_mask)
                    preds.append(stance.argmax(-1))
                    labels.append(label)
                    del ids, seg, keymask, ev_mask, label, _rel, stance
                p, y = _F.one_hot(torch.cat(preds), classes).float(), _F.one_hot(torch.cat(labels), classes).float()
                tp, fp, fn = (p * y).sum(0), (p * (1 - y)).sum(0), ((1 - p) * y).sum(0)
                f1 = (2 * tp / (2 * tp + fp + fn).clamp(min=1)).mean()
                metrics = torch.stack([(p * y).sum() / y.shape[0], f1])
            metrics.tolist()
            del preds, labels, p, y, tp, fp, fn, f1, metrics


# ---------------------------------------------------------------- image moderation service


class _BasicBlock(_nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1, self.b1 = _nn.Conv2d(cin, cout, 3, stride, 1, bias=False), _nn.BatchNorm2d(cout)
        self.c2, self.b2 = _nn.Conv2d(cout, cout, 3, 1, 1, bias=False), _nn.BatchNorm2d(cout)
        self.short = None
        if stride != 1 or cin != cout:
            self.short = _nn.Sequential(_nn.Conv2d(cin, cout, 1, stride, bias=False), _nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.b2(self.c2(_F.relu(self.b1(self.c1(x)))))
        return _F.relu(y + (x if self.short is None else self.short(x)))


class _Moderator(_nn.Module):
    """A ResNet-style trunk, average and max pooling, a shared neck and one head per policy (each a few labels)."""

    def __init__(self, widths, neck, policies):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, widths[0], 7, 2, 3, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU(), _nn.MaxPool2d(3, 2, 1))
        blocks, cin = [], widths[0]
        for i, w in enumerate(widths):
            blocks += [_BasicBlock(cin, w, 1 if i == 0 else 2), _BasicBlock(w, w, 1)]
            cin = w
        self.blocks = _nn.Sequential(*blocks)
        self.neck = mlp(2 * cin, neck, neck, layers=2, act=_nn.GELU)
        self.heads = _nn.ModuleList(_nn.Linear(neck, n) for n in policies)

    def forward(self, x):
        f = self.blocks(self.stem(x))
        g = _F.gelu(self.neck(torch.cat([f.mean((2, 3)), f.amax((2, 3))], -1)))
        return [h(g).float() for h in self.heads]


@_workload("image moderation service (random init): 1,450-1,550 requests (drawn) of 1-24 uploaded images (log-uniform) at 160, 192, 224 or 256 pixels (drawn), the uint8 pixels of each request uploaded on a side stream from two reused pinned host buffers one request ahead (waited on by event, record_stream'ed); normalisation on the device, a ResNet-18-style classifier (channels_last, bf16 autocast, eval-mode batch norm) with average and max pooling, a shared neck and five policy heads (adult content 3 labels by softmax, violence 2, hate symbols 4, self-harm 1, spam or text overlay 2, sigmoid), per-label thresholds from a tensor, a per-image action (allow, blur, human review, remove) by torch.where over the policy scores and a per-request worst action by max; each request's actions and top policy scores read back")
def image_moderation_serve(rng):
    widths, neck = _smoke([64, 128, 256, 512], [8, 8, 16, 16]), _smoke(256, 16)
    policies = [3, 2, 4, 1, 2]
    model = _Moderator(widths, neck, policies).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    thresholds = torch.rand(sum(policies), device="cuda") * 0.4 + 0.5
    severity = torch.tensor([0, 2, 3, 1, 3, 0, 3, 3, 2, 3, 3, 1, 2], device="cuda").float()[:sum(policies)]
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1) * 255
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1) * 255
    maxb, resolutions = _smoke(24, 4), _smoke([160, 192, 224, 256], [32, 48])
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
                outs = model(x)
            probs = torch.cat([torch.softmax(outs[0], -1), torch.sigmoid(torch.cat(outs[1:], -1))], -1)
            over = (probs - thresholds).clamp(min=0)
            act = torch.where(over > 0, severity.expand_as(probs), torch.zeros_like(probs)).amax(-1)
            review = (probs > thresholds * 0.8).float().sum(-1)
            act = torch.where((act == 0) & (review > 0), torch.ones_like(act), act)
            top_s, top_i = probs.topk(3, -1)
            out = torch.cat([act[:, None], top_i.float(), top_s, act.amax()[None, None].expand(b, 1)], 1)
        out.tolist()
        del item, raw, x, outs, probs, over, act, review, top_s, top_i, out

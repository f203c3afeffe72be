"""The ninety-first batch of held-out workloads for record.py, second half (see batch91.py): banking, payments and
consumer credit, written in torch alone. A payments-authorisation service (requests of drawn sizes of card
authorisations scored by a deep-and-cross network over merchant, category, country, entry-mode, channel and
hour embeddings, the amount and each card's on-device state and velocity counters, which are updated by
index_copy_ and index_add_ after every request; approve, step-up or decline), an identity-verification service (a
document convnet over ID-card photos and a residual face convnet over the card's portrait and a selfie burst of
drawn frame counts, face matching by cosine similarity, a temporal liveness block, document type and tamper heads),
customer-complaint classification training (a transformer encoder over complaint narratives of drawn lengths batched
by a token budget, product, multi-label issue and escalation heads, warm-up and cosine learning-rate schedule) and a
credit-portfolio loss simulation (a multi-factor rating-migration Monte Carlo over a loan book, drawn numbers of
scenarios and quarters per batch, correlated asset returns, migrations by threshold counts, losses given default
tied to the systematic factor, value-at-risk and expected shortfall read back).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the two services), `rng` the workload's random.Random for every shape, count and sampled choice,
sizes through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or
masked_fill; no boolean-mask indexing; results read back only at logging points or once per request.
payment_auth_serve and id_verify_face_serve upload their inputs on a side stream (two reused pinned host buffers, one
request ahead, the main stream waiting on an event, the tensors record_stream'ed, as workload_helpers.SideUploads
does); the other two are single-stream. The models run under bf16 autocast (the simulation in fp32). Every table is
sized for the largest index that can be drawn.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _loguniform(rng, lo, hi, mult=1):
    return _b.rec._loguniform(rng, lo, hi, mult)


# ---------------------------------------------------------------- payments-authorisation service


class _AuthScorer(_nn.Module):
    """Categorical fields from one offset table, the card's state row and numeric features (log amount, velocity
    counters, amount against the card's mean spend), a DCN-v2 cross network and a deep MLP; a fraud logit and the
    card's next state (a gated update)."""

    def __init__(self, cards, d_cat, d_state, d, n_cross):
        super().__init__()
        self.register_buffer("offsets", torch.tensor([0] + list(cards[:-1])).cumsum(0))
        self.cat = _nn.Embedding(sum(cards), d_cat)
        d_in = len(cards) * d_cat + d_state + 4
        self.inp = _nn.Sequential(_nn.Linear(d_in, d), _nn.LayerNorm(d))
        self.cross = _nn.ModuleList(_nn.Linear(d, d) for _ in range(n_cross))
        self.deep = mlp(d, 2 * d, d, layers=3, act=_nn.GELU)
        self.head = _nn.Linear(2 * d, 1)
        self.gate, self.cand = _nn.Linear(d + d_state, d_state), _nn.Linear(d + d_state, d_state)

    def forward(self, cat, state, numf):
        x0 = self.inp(torch.cat([self.cat(cat + self.offsets).flatten(1), state, numf], -1))
        x = x0
        for lin in self.cross:
            x = x0 * lin(x) + x
        z = torch.cat([x, self.deep(x0)], -1)
        u = torch.cat([x0, state], -1)
        g = torch.sigmoid(self.gate(u))
        new_state = (1 - g) * state + g * torch.tanh(self.cand(u))
        return self.head(z)[..., 0].float(), new_state


@_workload("payments-authorisation serving (random init, a deep-and-cross scorer with per-card state): 4,950-5,150 requests (drawn) of 1-1,024 card authorisations each (log-uniform); each authorisation's card id (of 400,000), merchant (100,000), category code (600), country (250), entry mode (12), channel (4), hour of week (168) and amount in cents as int32, uploaded on a side stream from two reused pinned host buffers (filled once) one request ahead (one span, waited on by event, record_stream'ed); the card's 64-wide state row gathered from an on-device bf16 table and its velocity counters (authorisation count and total spend, fp32 tables); an offset embedding table of width 24 for the six categorical fields, a 3-layer DCN-v2 cross network and a 3-layer deep MLP (width 256, hidden 512) under bf16 autocast; a fraud probability and a decision (approve, step-up or decline by two thresholds); the card states updated by a gated cell and written back by index_copy_, the counters by index_add_; each request's probabilities and decisions read back")
def payment_auth_serve(rng):
    n_cards, d_state, d_cat, d, n_cross = _smoke(400000, 1000), _smoke(64, 8), _smoke(24, 4), _smoke(256, 16), 3
    cards = [_smoke(100000, 500), 600, 250, 12, 4, 168]
    n_f = 2 + len(cards)  # card id, six categorical fields, amount in cents
    model = _AuthScorer(cards, d_cat, d_state, d, n_cross).cuda().eval()
    model.requires_grad_(False)
    state = (torch.randn(n_cards, d_state, device="cuda") * 0.1).to(torch.bfloat16)
    count = torch.zeros(n_cards, device="cuda")
    spend = torch.zeros(n_cards, device="cuda")
    maxb = _smoke(1024, 16)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = []
    for _ in range(2):
        card = torch.randint(0, n_cards, (maxb, 1), dtype=torch.int32, generator=gen)
        fields = torch.stack([torch.randint(0, c, (maxb,), dtype=torch.int32, generator=gen) for c in cards], 1)
        cents = (torch.randn(maxb, 1, generator=gen) * 1.2 + 8.0).exp().to(torch.int32)  # log-normal amounts
        host.append(torch.cat([card, fields, cents], 1).flatten().pin_memory())
    up = SideUploads(host)
    nreq = rng.randint(_smoke(4950, 3), _smoke(5150, 4))
    plan = [_loguniform(rng, 1, maxb) for _ in range(nreq)]

    nxt = up.upload(0, plan[0] * n_f)
    for i in range(nreq):
        b = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, plan[i + 1] * n_f)
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            f = raw.view(b, n_f).long()
            card, cat = f[:, 0], f[:, 1:-1]
            amount = f[:, -1].float() / 100
            cnt, tot = count[card], spend[card]
            numf = torch.stack([amount.log1p(), cnt.log1p(), tot.log1p(),
                                (amount / (tot / cnt.clamp(min=1)).clamp(min=1)).log()], -1)
            st = state[card]
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logit, new_state = model(cat, st, numf.to(torch.bfloat16))
            p = torch.sigmoid(logit)
            decision = (p > 0.2).long() + (p > 0.6).long()  # 0 approve, 1 step-up, 2 decline
            state.index_copy_(0, card, new_state.to(state.dtype))
            count.index_add_(0, card, torch.ones_like(amount))
            spend.index_add_(0, card, amount * (decision < 2).float())
            out = torch.stack([p, decision.float()], -1)
        out.tolist()
        del item, raw, f, card, cat, amount, cnt, tot, numf, st, logit, new_state, p, decision, out


# ---------------------------------------------------------------- identity-verification service


def _cbr(cin, cout, stride=1):
    return _nn.Sequential(_nn.Conv2d(cin, cout, 3, stride, 1, bias=False), _nn.BatchNorm2d(cout), _nn.ReLU())


class _ResBlock(_nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.a, self.b = _cbr(cin, cout, stride), _nn.Sequential(_nn.Conv2d(cout, cout, 3, 1, 1, bias=False),
                                                                  _nn.BatchNorm2d(cout))
        self.sc = _nn.Sequential(_nn.Conv2d(cin, cout, 1, stride, bias=False), _nn.BatchNorm2d(cout))

    def forward(self, x):
        return _F.relu(self.b(self.a(x)) + self.sc(x))


class _FaceNet(_nn.Module):
    """A residual convnet over face crops, global pooling, a projection to an L2-normalised embedding; the pooled
    features also returned for the liveness block."""

    def __init__(self, widths, d_emb):
        super().__init__()
        self.stem = _cbr(3, widths[0], 2)
        blocks, c = [], widths[0]
        for w in widths:
            blocks += [_ResBlock(c, w, 2), _ResBlock(w, w, 1)]
            c = w
        self.body = _nn.Sequential(*blocks)
        self.emb = _nn.Linear(c, d_emb)
        self.c = c

    def forward(self, x):
        f = self.body(self.stem(x)).mean((2, 3))
        return _F.normalize(self.emb(f).float(), dim=-1), f


class _DocNet(_nn.Module):
    """Strided convolutions over the ID-card photo, global pooling, document-type and tamper heads."""

    def __init__(self, widths, n_types):
        super().__init__()
        layers, c = [], 3
        for w in widths:
            layers += [_cbr(c, w, 2), _cbr(w, w, 1)]
            c = w
        self.body = _nn.Sequential(*layers)
        self.types, self.tamper = _nn.Linear(c, n_types), mlp(c, c, 1)

    def forward(self, x):
        f = self.body(x).mean((2, 3))
        return self.types(f).float(), self.tamper(f)[..., 0].float()


class _Liveness(_nn.Module):
    """Frame features and their differences to the previous frame, a frame-position table, a pre-norm block under a
    key mask, a masked mean, a liveness logit."""

    def __init__(self, c, d, heads, max_frames):
        super().__init__()
        self.proj = _nn.Linear(2 * c, d)
        self.pos = _nn.Embedding(max_frames, d)
        self.block = PreNormBlock(d, heads)
        self.head = mlp(d, d, 1)

    def forward(self, f, keep):
        diff = torch.cat([torch.zeros_like(f[:, :1]), f[:, 1:] - f[:, :-1]], 1)
        t = f.shape[1]
        x = self.proj(torch.cat([f, diff], -1)) + self.pos(torch.arange(t, device=f.device))[None]
        x = self.block(x, mask=keep[:, None, None, :])
        w = keep[..., None].to(x.dtype)
        return self.head((x * w).sum(1) / w.sum(1))[..., 0].float()


@_workload("identity-verification serving (random init, a document convnet, a residual face convnet and a liveness transformer block): 1,100-1,200 requests (drawn) of 1-4 verification sessions each (drawn), each session an ID-card photo of 160 x 256, the card's portrait crop of 112 x 112 and a selfie burst of 3-8 frames of 112 x 112 (the request's frame count drawn, each session's own count drawn between 2 and it, masked), all uint8, uploaded on a side stream from two reused pinned host buffers (filled once) one request ahead (three spans of one buffer, waited on by event, record_stream'ed), normalised on the device; a channels-last document convnet (three stages of 32/64/128 channels, each a stride-2 and a stride-1 3x3 convolution with batch norm) with 16 document-type and a tamper head; a channels-last residual face convnet (stem 32, four stages of 32/64/128/256 channels, two residual blocks each) over the portrait and every selfie frame, padded frames included, 256-wide L2-normalised embeddings; a liveness pre-norm block (width 128, 4 heads, an 8-row frame-position table) over the frame features and their differences under a key mask; bf16 autocast; per session the masked mean and max cosine similarity of the portrait to the selfie frames, the liveness and tamper probabilities and the top document type with its probability read back per request")
def id_verify_face_serve(rng):
    face_w, doc_w = _smoke([32, 64, 128, 256], [8, 8, 16, 16]), _smoke([32, 64, 128], [8, 8, 16])
    d_emb, d, heads, n_types = _smoke(256, 16), _smoke(128, 16), _smoke(4, 2), 16
    max_s, max_f, res, doc_h, doc_w_px = _smoke(4, 2), _smoke(8, 3), _smoke(112, 32), _smoke(160, 32), _smoke(256, 48)
    face = _FaceNet(face_w, d_emb).cuda().eval().to(memory_format=torch.channels_last)
    doc = _DocNet(doc_w, n_types).cuda().eval().to(memory_format=torch.channels_last)
    live = _Liveness(face.c, d, heads, max_f).cuda().eval()
    for m in (face, doc, live):
        m.requires_grad_(False)
    per_face, per_doc = 3 * res * res, 3 * doc_h * doc_w_px
    off_crop, off_self = max_s * per_doc, max_s * (per_doc + per_face)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (off_self + max_s * max_f * per_face,), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    mean = torch.tensor([0.5, 0.45, 0.4], device="cuda").view(1, 3, 1, 1) * 255
    std = torch.tensor([0.25, 0.24, 0.24], device="cuda").view(1, 3, 1, 1) * 255
    nreq = rng.randint(_smoke(1100, 3), _smoke(1200, 4))
    plan = []
    for _ in range(nreq):
        s, fr = rng.randint(1, max_s), rng.randint(3, max_f)
        plan.append((s, fr, [rng.randint(2, fr) for _ in range(s)]))

    def spans(i):
        s, fr, _ = plan[i]
        return (s * per_doc, slice(off_crop, off_crop + s * per_face),
                slice(off_self, off_self + s * fr * per_face))

    def norm(raw, shape):
        return raw.view(shape).float().sub_(mean).div_(std).contiguous(memory_format=torch.channels_last)

    nxt = up.upload(0, *spans(0))
    for i in range(nreq):
        s, fr, counts = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, *spans(i + 1))
        raw_doc, raw_crop, raw_self, ev = item
        SideUploads.ready(ev, raw_doc, raw_crop, raw_self)
        with torch.no_grad():
            x_doc = norm(raw_doc, (s, 3, doc_h, doc_w_px))
            x_face = norm(torch.cat([raw_crop, raw_self]), (s + s * fr, 3, res, res))
            keep = keep_mask(counts, fr)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                types, tamper = doc(x_doc)
                emb, feat = face(x_face)
                liveness = live(feat[s:].view(s, fr, -1), keep)
            sim = (emb[s:].view(s, fr, -1) * emb[:s, None]).sum(-1)  # (s, fr) cosine of portrait to each frame
            w = keep.float()
            sim_mean = (sim * w).sum(1) / w.sum(1)
            sim_max = sim.masked_fill(~keep, -2.0).amax(1)
            tp, tt = types.softmax(-1).max(-1)
            out = torch.stack([sim_mean, sim_max, torch.sigmoid(liveness), torch.sigmoid(tamper), tp, tt.float()], -1)
        out.tolist()
        del item, raw_doc, raw_crop, raw_self, x_doc, x_face, keep, types, tamper, emb, feat, liveness, sim, w
        del sim_mean, sim_max, tp, tt, out


# ---------------------------------------------------------------- customer-complaint classification


class _ComplaintEncoder(_nn.Module):
    """Token and position embeddings, pre-norm blocks under a key mask, a final LayerNorm; product, issue
    (multi-label) and escalation heads on the first token and the masked mean."""

    def __init__(self, vocab, d, heads, layers, max_pos, n_prod, n_issue):
        super().__init__()
        self.tok, self.pos = _nn.Embedding(vocab, d), _nn.Embedding(max_pos, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.prod, self.issue = _nn.Linear(2 * d, n_prod), _nn.Linear(2 * d, n_issue)
        self.esc = mlp(2 * d, d, 1, act=_nn.GELU)

    def forward(self, ids, keep):
        t = ids.shape[1]
        x = _F.dropout(self.tok(ids) + self.pos(torch.arange(t, device=ids.device))[None], 0.1, self.training)
        key = keep[:, None, None, :]
        for blk in self.blocks:
            x = blk(x, mask=key)
        x = self.norm(x)
        w = keep[..., None].to(x.dtype)
        z = torch.cat([x[:, 0], (x * w).sum(1) / w.sum(1)], -1)
        return self.prod(z).float(), self.issue(z).float(), self.esc(z)[..., 0].float()


@_workload("customer-complaint classification training (random init, a transformer encoder): complaint narratives of 32-1,024 tokens (drawn per complaint, log-uniform, over a 32,000-token vocabulary), batched by a token budget of 16,384 (the step's first length drawn, the rest of the batch drawn up to it, the batch size the budget over the padded length, 16-128 complaints), padded to a multiple of 64; a 1,024-row position table (the longest padded complaint), 5 pre-norm blocks (width 320, 5 heads) under a key mask; heads on the first token and the masked mean: product (18 classes, cross-entropy with label smoothing 0.1), issue (90 labels, 1-3 positives per complaint scattered, binary cross-entropy) and escalation (binary, drawn at 10%); AdamW with a 50-step linear warm-up and cosine decay (LambdaLR), clipping, bf16 autocast, 470 steps; the losses read back every 20 steps and every 94 steps a no-grad evaluation of 48 complaints of 1,024 tokens with the product accuracy and the issue micro-F1 read back")
def complaint_text_classify_train(rng):
    vocab, d, heads, layers = _smoke(32000, 500), _smoke(320, 32), _smoke(5, 2), _smoke(5, 1)
    max_tok, budget, n_prod, n_issue = _smoke(1024, 128), _smoke(16384, 512), 18, 90
    model = _ComplaintEncoder(vocab, d, heads, layers, max_tok, n_prod, n_issue).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.01)
    steps, warm = _smoke(470, 3), _smoke(50, 1)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * 0.5 * (1 + math.cos(math.pi * min(1.0, s / steps))))

    def complaints(lengths):
        b, t = len(lengths), -(-max(lengths) // 64) * 64
        keep = keep_mask(lengths, t)
        ids = torch.randint(2, vocab, (b, t), device="cuda").masked_fill(~keep, 0)
        prod = torch.randint(0, n_prod, (b,), device="cuda")
        n_pos = torch.randint(1, 4, (b, 1), device="cuda")
        cols = torch.randint(0, n_issue, (b, 3), device="cuda")
        src = (torch.arange(3, device="cuda")[None] < n_pos).float()
        issue = torch.zeros(b, n_issue, device="cuda").scatter_(1, cols, src)  # a collision may overwrite with 0
        esc = (torch.rand(b, device="cuda") < 0.1).float()
        return ids, keep, prod, issue, esc

    for step in range(steps):
        model.train()
        first = _loguniform(rng, _smoke(32, 8), max_tok)
        t = -(-first // 64) * 64
        b = max(_smoke(4, 1), min(_smoke(128, 8), budget // t))
        lengths = [first] + [_loguniform(rng, _smoke(32, 8), first) for _ in range(b - 1)]
        ids, keep, prod, issue, esc = complaints(lengths)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            p_log, i_log, e_log = model(ids, keep)
        l_p = _F.cross_entropy(p_log, prod, label_smoothing=0.1)
        l_i = _F.binary_cross_entropy_with_logits(i_log, issue)
        l_e = _F.binary_cross_entropy_with_logits(e_log, esc)
        loss = l_p + l_i + 0.5 * l_e
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            torch.stack([l_p.detach(), l_i.detach(), l_e.detach()]).tolist()
        del ids, keep, prod, issue, esc, p_log, i_log, e_log, l_p, l_i, l_e, loss
        if (step + 1) % _smoke(94, 2) == 0:
            model.eval()
            with torch.no_grad():
                ids, keep, prod, issue, esc = complaints([max_tok] * _smoke(48, 3))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    p_log, i_log, _ = model(ids, keep)
                acc = (p_log.argmax(-1) == prod).float().mean()
                pred = (i_log > 0).float()
                tp = (pred * issue).sum()
                f1 = 2 * tp / (pred.sum() + issue.sum()).clamp(min=1)
            torch.stack([acc, f1]).tolist()
            del ids, keep, prod, issue, esc, p_log, i_log, acc, pred, tp, f1


# ---------------------------------------------------------------- credit-portfolio loss simulation


@_workload("credit-portfolio loss simulation (a multi-factor rating-migration Monte Carlo, no model): a loan book of 40,000 obligors drawn on the device (8 rating grades, the last default, the first seven drawn; exposures log-normal; 20 sectors; loadings on 24 systematic factors, normalised, with asset correlations of 0.08-0.35 drawn per obligor) and a quarterly migration matrix (random rows, default probability rising with the grade, default absorbing) turned into per-grade thresholds by ndtri; 715 batches, each of 256-2,048 scenarios (log-uniform, a multiple of 128) over 4-12 quarters (drawn per batch): AR(1) factor paths (rho 0.7) drawn per quarter, asset returns from the factors through the loadings plus idiosyncratic noise, new grades by counting the thresholds of each obligor's grade (gathered per threshold) the return falls below, default absorbing by torch.where, losses on new defaults of exposure times a loss-given-default tied to the first factor with noise, clamped to 0-1, summed per scenario and per sector (a matmul with the sector one-hot); every 143 batches the 99% and 99.9% value-at-risk and expected shortfall and the mean loss of all scenarios so far (sorted), and the mean sector losses, read back")
def credit_portfolio_loss_sim(rng):
    n, n_grade, n_sector, k = _smoke(40000, 300), 8, 20, _smoke(24, 4)
    gen_dev = "cuda"
    grade0 = torch.randint(0, n_grade - 1, (n,), device=gen_dev)
    ead = (torch.randn(n, device=gen_dev) * 1.0 + 11.0).exp()
    sector = torch.randint(0, n_sector, (n,), device=gen_dev)
    sector_1h = _F.one_hot(sector, n_sector).float()
    load = torch.randn(n, k, device=gen_dev)
    load = load / load.norm(dim=1, keepdim=True)
    r2 = torch.rand(n, device=gen_dev) * 0.27 + 0.08
    a_sys, a_idio = r2.sqrt()[:, None] * load, (1 - r2).sqrt()
    # quarterly migration matrix: random rows, default probability rising with the grade, default absorbing
    trans = torch.rand(n_grade, n_grade, device=gen_dev) + 20 * torch.eye(n_grade, device=gen_dev)
    trans[:, -1] = torch.logspace(-4, -1.3, n_grade, device=gen_dev) * trans[:, :-1].sum(1)
    trans = trans / trans.sum(1, keepdim=True)
    trans = torch.cat([trans[:-1], _F.one_hot(torch.tensor([n_grade - 1], device=gen_dev), n_grade).float()])
    # P(new grade > j | grade): thresholds, decreasing in j; a return below thr[g, j] means a grade above j
    tail = trans.flip(1).cumsum(1).flip(1)[:, 1:]
    thr = torch.special.ndtri(tail.clamp(1e-9, 1 - 1e-9))  # (grades, grades - 1)
    rho, lgd_mu = 0.7, 0.45
    losses, sect = [], []
    batches = _smoke(715, 3)
    for bi in range(batches):
        s = _loguniform(rng, _smoke(256, 8), _smoke(2048, 32), _smoke(128, 8))
        quarters = rng.randint(4, _smoke(12, 5))
        g = grade0[None].expand(s, n)
        f = torch.randn(s, k, device="cuda")
        total = torch.zeros(s, device="cuda")
        by_sector = torch.zeros(s, n_sector, device="cuda")
        for _ in range(quarters):
            f = rho * f + math.sqrt(1 - rho ** 2) * torch.randn(s, k, device="cuda")
            z = f @ a_sys.t() + a_idio * torch.randn(s, n, device="cuda")
            new = torch.zeros_like(g)
            for j in range(n_grade - 1):
                new = new + (z < thr[:, j][g]).long()
            new = torch.where(g == n_grade - 1, g, new)
            fresh = ((new == n_grade - 1) & (g < n_grade - 1)).float()
            lgd = (lgd_mu - 0.1 * f[:, :1] + 0.15 * torch.randn(s, n, device="cuda")).clamp(0, 1)
            loss = fresh * lgd * ead
            total = total + loss.sum(1)
            by_sector = by_sector + loss @ sector_1h
            g = new
            del z, fresh, lgd, loss
        losses.append(total)
        sect.append(by_sector.mean(0))
        del g, f, new
        if (bi + 1) % _smoke(143, 2) == 0:
            allv = torch.cat(losses).sort().values
            m = allv.numel()
            i99, i999 = int(0.99 * m), min(m - 1, int(0.999 * m))
            risk = torch.stack([allv[i99], allv[i99:].mean(), allv[i999], allv[i999:].mean(), allv.mean()])
            torch.cat([risk, torch.stack(sect).mean(0)]).tolist()
            del allv, risk

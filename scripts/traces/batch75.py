"""The seventy-fifth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch73_b.py are): education technology and accessibility, written in torch alone, first half. SAINT-style knowledge
tracing (an encoder of exercise and part embeddings, a decoder of shifted responses, elapsed and lag times, both causal,
trained on student interaction logs drawn on the device from a hidden IRT model with per-student padding, a rank-based
AUC at evaluation points), Bayesian knowledge tracing fitted by EM (hundreds of skills at once: response sequences
simulated from hidden BKT parameters with variable numbers of opportunities, scaled forward-backward passes, expected
counts and closed-form M-steps, log-likelihoods read back every few iterations and the recovered parameters at the
end of each course), automated essay trait scoring (long essays cut into overlapping 512-token windows, a transformer
encoder over every window with key-padding masks, masked mean pooling, attention pooling over the windows, six trait
regressions, layer-wise learning-rate decay, gradient accumulation, quadratic weighted kappa from device confusion
matrices at evaluation points) and a short-answer grading service (a cross-encoder over question, reference and student
answer tokens uploaded on a side stream, a three-way grade and a score, and a nearest-exemplar vote over a bank of
graded exemplar answers embedded on the device at start). Same conventions as the earlier batches: nothing
downloaded, data drawn at random on the device (or, for the grading service, from two reused pinned host buffers),
`rng` the workload's random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)` so
that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: sequence lengths, EM iterations and request
sizes are fixed on the host, masks multiplied in or selected with torch.where, no boolean-mask indexing; losses, AUCs,
log-likelihoods, kappas and grades are read back only at logging points. short_answer_grading_serve uses a side
stream (uploads waited on by event, the tensors record_stream'ed); the others are single-stream. The transformers run
under bf16 autocast; the EM fit is fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new75.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py
(smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered with dummies, autocast a no-op so that fp32
sizes are counted, streams, events and pinned memory no-ops), and for which of them the CPU smoke run
(RECORD_SMOKE=1) ran.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, randint

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


class _Block(_nn.Module):
    """A pre-norm transformer block: self-attention (causal or not, an optional additive key mask), an optional
    cross-attention to a memory (causal when asked, for SAINT's decoder), a GELU MLP."""

    def __init__(self, d, heads, cross=False):
        super().__init__()
        self.h = heads
        self.n1, self.n3 = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.proj = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.cross = cross
        if cross:
            self.n2 = _nn.LayerNorm(d)
            self.q, self.kv, self.o = _nn.Linear(d, d), _nn.Linear(d, 2 * d), _nn.Linear(d, d)
        self.fc1, self.fc2 = _nn.Linear(d, 4 * d), _nn.Linear(4 * d, d)

    def _split(self, t):
        return t.unflatten(-1, (self.h, -1)).transpose(1, 2)

    def forward(self, x, mem=None, causal=False, mask=None, cross_causal=False):
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        a = _F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        if self.cross:
            k, v = self.kv(mem).chunk(2, -1)
            a = _F.scaled_dot_product_attention(self._split(self.q(self.n2(x))), self._split(k), self._split(v),
                                                is_causal=cross_causal)
            x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(_F.gelu(self.fc1(self.n3(x))))


# ---------------------------------------------------------------- SAINT knowledge tracing


class _Saint(_nn.Module):
    def __init__(self, n_items, n_parts, n_lag, d, heads, layers, maxlen):
        super().__init__()
        self.item, self.part = _nn.Embedding(n_items + 1, d), _nn.Embedding(n_parts + 1, d)
        self.resp, self.lag = _nn.Embedding(3, d), _nn.Embedding(n_lag, d)
        self.elapsed = _nn.Linear(1, d)
        self.pos_e, self.pos_d = _nn.Embedding(maxlen, d), _nn.Embedding(maxlen, d)
        self.enc = _nn.ModuleList(_Block(d, heads) for _ in range(layers))
        self.dec = _nn.ModuleList(_Block(d, heads, cross=True) for _ in range(layers))
        self.norm, self.out = _nn.LayerNorm(d), _nn.Linear(d, 1)

    def forward(self, items, parts, resp_in, elapsed_in, lag):
        pos = torch.arange(items.shape[1], device=items.device)
        h = self.item(items) + self.part(parts) + self.pos_e(pos)
        for blk in self.enc:
            h = blk(h, causal=True)
        g = self.resp(resp_in) + self.elapsed(elapsed_in[..., None]) + self.lag(lag) + self.pos_d(pos)
        for blk in self.dec:
            g = blk(g, mem=h, causal=True, cross_causal=True)
        return self.out(self.norm(g))[..., 0]


def _kt_batch(b, t, n_items, difficulty, part_of, n_lag):
    """b students' interaction logs of t steps (right-padded at random lengths): items, parts, shifted responses,
    shifted elapsed times, lag buckets, the responses and the valid mask."""
    lens = torch.randint(max(2, t // 4), t + 1, (b, 1), device="cuda")
    valid = (torch.arange(t, device="cuda")[None] < lens).float()
    items = torch.randint(1, n_items + 1, (b, t), device="cuda")
    ability = torch.randn(b, 1, device="cuda") + torch.linspace(0, 0.8, t, device="cuda")[None]
    p = torch.sigmoid(1.7 * (ability - difficulty[items]))
    correct = torch.bernoulli(p)
    items = (items * valid.long())
    parts = part_of[items] * valid.long()
    resp_in = torch.cat([torch.full((b, 1), 2, device="cuda", dtype=torch.long), correct[:, :-1].long()], 1)
    elapsed = torch.rand(b, t, device="cuda").mul(3.0).exp().clamp(max=300.0) / 300.0
    elapsed_in = torch.cat([torch.zeros(b, 1, device="cuda"), elapsed[:, :-1]], 1)
    gap = torch.randn(b, t, device="cuda").mul(2.5).add(4.0).exp()
    lag = gap.log1p().mul(8).long().clamp(0, n_lag - 1)
    return items, parts, resp_in * valid.long(), elapsed_in * valid, lag * valid.long(), correct, valid


def _auc(scores, labels, valid):
    """Rank AUC of flattened scores over the valid entries (the padded ones ranked lowest as negatives and
    discounted): a 0-d tensor."""
    s = torch.where(valid > 0, scores, torch.full_like(scores, -1e9)).flatten()
    y, w = labels.flatten(), valid.flatten()
    ranks = torch.empty_like(s)
    ranks[s.argsort()] = torch.arange(1, s.numel() + 1, device=s.device, dtype=s.dtype)
    npos = (y * w).sum()
    ninvalid = (1 - w).sum()
    nneg = w.sum() - npos
    return ((ranks * y * w).sum() - npos * ninvalid - npos * (npos + 1) / 2) / (npos * nneg).clamp(min=1)


@_workload("SAINT-style knowledge tracing (random init): student interaction logs drawn on the device from a hidden IRT model (13,523 exercises with difficulties and 7 parts, per-student ability rising over the log, Bernoulli responses, elapsed times and log-bucketed lag times), right-padded at per-student lengths; an encoder of exercise, part and position embeddings and a decoder of the shifted responses, elapsed and lag embeddings (3 + 3 causal blocks, width 256, 8 heads, causal cross-attention), masked binary cross-entropy, AdamW with warmup, clipping, bf16 autocast, 290 steps of 64-128 students x 96-200 interactions (drawn); the loss read back every 20 steps and every 40 steps a validation pass over 512 students of 200 interactions in chunks of 128 with a rank-based AUC read back")
def saint_knowledge_tracing_train(rng):
    n_items, n_parts, n_lag = _smoke(13523, 50), 7, 150
    d, heads, layers = _smoke(256, 16), _smoke(8, 2), _smoke(3, 1)
    maxlen = _smoke(200, 16)
    difficulty = torch.randn(n_items + 1, device="cuda")
    part_of = torch.randint(1, n_parts + 1, (n_items + 1,), device="cuda")
    model = _Saint(n_items, n_parts, n_lag, d, heads, layers, maxlen).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01, betas=(0.9, 0.999))
    steps = _smoke(290, 3)
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = 1e-3 * min(1.0, (step + 1) / 30) * 0.5 * (1 + math.cos(math.pi * step / steps))
        model.train()
        b = rng.choice(_smoke([64, 96, 128], [3, 4]))
        t = randint(rng, _smoke(96, 8), maxlen, 8)
        items, parts, resp_in, el_in, lag, correct, valid = _kt_batch(b, t, n_items, difficulty, part_of, n_lag)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(items, parts, resp_in, el_in, lag)
        loss = (_F.binary_cross_entropy_with_logits(logits.float(), correct, reduction="none") * valid).sum() \
            / valid.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.item()
        del items, parts, resp_in, el_in, lag, correct, valid, logits, loss
        if (step + 1) % _smoke(40, 2) == 0:
            model.eval()
            preds, labels, masks = [], [], []
            with torch.no_grad():
                for _ in range(_smoke(4, 1)):
                    batch = _kt_batch(_smoke(128, 4), maxlen, n_items, difficulty, part_of, n_lag)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        preds.append(model(*batch[:5]).float())
                    labels.append(batch[5])
                    masks.append(batch[6])
                    del batch
                auc = _auc(torch.cat(preds), torch.cat(labels), torch.cat(masks))
            auc.item()
            del preds, labels, masks, auc


# ---------------------------------------------------------------- Bayesian knowledge tracing by EM


def _bkt_simulate(p0, pl, pg, ps, n, t):
    """Responses (S, n, t) of n students on each of S skills from BKT parameters (S,), and the valid mask."""
    s = p0.shape[0]
    known = (torch.rand(s, n, device="cuda") < p0[:, None]).float()
    obs = []
    for _ in range(t):
        r = torch.rand(s, n, device="cuda")
        right = known * (r >= ps[:, None]).float() + (1 - known) * (r < pg[:, None]).float()
        obs.append(right)
        known = torch.maximum(known, (torch.rand(s, n, device="cuda") < pl[:, None]).float())
    lens = torch.randint(max(2, t // 3), t + 1, (s, n, 1), device="cuda")
    valid = (torch.arange(t, device="cuda")[None, None] < lens).float()
    return torch.stack(obs, -1) * valid, valid


def _bkt_em_step(obs, valid, p0, pl, pg, ps):
    """One EM iteration of BKT (no forgetting) on obs (S, n, t): the new (p0, pl, pg, ps) and the log-likelihood."""
    s, n, t = obs.shape
    # emission probabilities of each step under (unknown, known); padded steps emit 1
    e_u = torch.where(obs > 0, pg[:, None, None], 1 - pg[:, None, None])
    e_k = torch.where(obs > 0, 1 - ps[:, None, None], ps[:, None, None])
    e_u = e_u * valid + (1 - valid)
    e_k = e_k * valid + (1 - valid)
    plb = pl[:, None]
    au, ak = (1 - p0[:, None]) * e_u[..., 0], p0[:, None] * e_k[..., 0]
    c = au + ak
    alphas_u, alphas_k, cs = [au / c], [ak / c], [c]
    for i in range(1, t):
        pu, pk = alphas_u[-1], alphas_k[-1]
        au = pu * (1 - plb) * e_u[..., i]
        ak = (pu * plb + pk) * e_k[..., i]
        c = au + ak
        alphas_u.append(au / c)
        alphas_k.append(ak / c)
        cs.append(c)
    bu, bk = torch.ones(s, n, device="cuda"), torch.ones(s, n, device="cuda")
    betas_u, betas_k = [bu], [bk]
    for i in range(t - 1, 0, -1):
        nu, nk = e_u[..., i] * bu, e_k[..., i] * bk
        bu = ((1 - plb) * nu + plb * nk) / cs[i]
        bk = nk / cs[i]
        betas_u.append(bu)
        betas_k.append(bk)
    au, ak = torch.stack(alphas_u, -1), torch.stack(alphas_k, -1)
    bu, bk = torch.stack(betas_u[::-1], -1), torch.stack(betas_k[::-1], -1)
    c = torch.stack(cs, -1)
    gu, gk = au * bu, au * 0 + ak * bk
    z = (gu + gk).clamp(min=1e-12)
    gu, gk = gu / z, gk / z
    # expected unknown -> known transitions between steps i and i + 1 (both valid)
    step_ok = valid[..., 1:]
    xi = au[..., :-1] * plb[..., None] * e_k[..., 1:] * bk[..., 1:] / c[..., 1:] * step_ok
    new_p0 = gk[..., 0].mean(1)
    new_pl = xi.sum((1, 2)) / (gu[..., :-1] * step_ok).sum((1, 2)).clamp(min=1e-6)
    new_pg = (gu * obs * valid).sum((1, 2)) / (gu * valid).sum((1, 2)).clamp(min=1e-6)
    new_ps = (gk * (1 - obs) * valid).sum((1, 2)) / (gk * valid).sum((1, 2)).clamp(min=1e-6)
    ll = (c.log() * valid).sum((1, 2))
    return (new_p0.clamp(0.01, 0.99), new_pl.clamp(0.005, 0.6), new_pg.clamp(0.01, 0.4), new_ps.clamp(0.01, 0.4),
            ll)


@_workload("Bayesian knowledge tracing fitted by EM (an optimisation loop, fp32): 22 courses, each of 256-640 skills (drawn) at once, 48-128 students a skill and 24-64 opportunities (drawn), responses simulated on the device from hidden per-skill BKT parameters (initial mastery, learn, guess, slip) with per-student numbers of opportunities as padding masks; 12-18 EM iterations a course (drawn) of scaled forward-backward passes over the opportunities, posteriors, expected learning transitions and closed-form M-steps; the summed log-likelihood read back every 4 iterations, and at the end of a course the parameter-recovery error and the next-opportunity mastery predictions' accuracy read back")
def bkt_em_skill_fit_opt(rng):
    courses = _smoke(22, 2)
    for _course in range(courses):
        s = rng.randint(_smoke(256, 4), _smoke(640, 8))
        n = rng.randint(_smoke(48, 3), _smoke(128, 5))
        t = rng.randint(_smoke(24, 4), _smoke(64, 6))
        iters = rng.randint(_smoke(12, 2), _smoke(18, 3))
        true = [torch.rand(s, device="cuda") * (hi - lo) + lo
                for lo, hi in ((0.1, 0.6), (0.05, 0.3), (0.08, 0.3), (0.05, 0.2))]
        with torch.no_grad():
            obs, valid = _bkt_simulate(*true, n, t)
            p0, pl = torch.full((s,), 0.4, device="cuda"), torch.full((s,), 0.1, device="cuda")
            pg, ps = torch.full((s,), 0.2, device="cuda"), torch.full((s,), 0.1, device="cuda")
            for it in range(iters):
                p0, pl, pg, ps, ll = _bkt_em_step(obs, valid, p0, pl, pg, ps)
                if it % 4 == 0:
                    ll.sum().item()
                del ll
            err = torch.stack([(a - b).abs().mean() for a, b in zip((p0, pl, pg, ps), true)])
            # mastery after the first half of each log, and the prediction of the next response
            half = t // 2
            m = p0[:, None].expand(s, n)
            for i in range(half):
                o = obs[..., i]
                post = torch.where(o > 0, m * (1 - ps[:, None]) / (m * (1 - ps[:, None]) + (1 - m) * pg[:, None]),
                                   m * ps[:, None] / (m * ps[:, None] + (1 - m) * (1 - pg[:, None])))
                m = torch.where(valid[..., i] > 0, post + (1 - post) * pl[:, None], m)
            pred = m * (1 - ps[:, None]) + (1 - m) * pg[:, None]
            acc = (((pred > 0.5).float() == obs[..., half]).float() * valid[..., half]).sum() \
                / valid[..., half].sum().clamp(min=1)
        torch.cat([err, acc[None]]).tolist()
        del true, obs, valid, p0, pl, pg, ps, err, m, pred, acc


# ---------------------------------------------------------------- automated essay trait scoring


class _EssayScorer(_nn.Module):
    def __init__(self, vocab, d, heads, layers, win, traits):
        super().__init__()
        self.emb, self.pos = _nn.Embedding(vocab, d), _nn.Embedding(win, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.att = _nn.Linear(d, 1)
        self.head = _nn.Sequential(_nn.Linear(d, d), _nn.GELU(), _nn.Linear(d, traits))

    def forward(self, windows, tokmask):
        """windows (B, C, W) token ids, tokmask (B, C, W) float: trait scores (B, traits)."""
        b, c, w = windows.shape
        ids, m = windows.flatten(0, 1), tokmask.flatten(0, 1)
        h = self.emb(ids) + self.pos(torch.arange(w, device=ids.device))
        mask = ((1 - m) * -1e4)[:, None, None, :].to(h.dtype)
        for blk in self.blocks:
            h = blk(h, mask=mask.to(h.dtype))
        h = self.norm(h)
        pooled = (h * m[..., None]).sum(1) / m.sum(1, keepdim=True).clamp(min=1)
        pooled = pooled.view(b, c, -1)
        wvalid = tokmask[:, :, 0]
        a = torch.softmax(self.att(pooled)[..., 0].float() + (wvalid - 1) * 1e4, -1)
        essay = (a[..., None] * pooled.float()).sum(1)
        return 3.0 + self.head(essay.to(pooled.dtype)).float()


def _essays(b, lengths, vocab, win, stride, traits):
    """b essays of the given token lengths cut into overlapping windows: windows (b, C, win), token mask, trait
    targets on the 1-5 half-point scale (b, traits)."""
    longest = max(lengths)
    c = 1 + max(0, -(-(longest - win) // stride))
    total = win + (c - 1) * stride
    lens = torch.tensor(lengths, device="cuda")
    mask = (torch.arange(total, device="cuda")[None] < lens[:, None]).float()
    ids = torch.randint(5, vocab, (b, total), device="cuda") * mask.long()
    windows = ids.unfold(1, win, stride)
    tokmask = mask.unfold(1, win, stride)
    base = torch.randn(b, 1, device="cuda") * 0.7 + 3.0 + (lens[:, None].float() / 1500.0)
    y = ((base + 0.35 * torch.randn(b, traits, device="cuda")) * 2).round().clamp(2, 10) / 2
    return windows, tokmask, y


def _qwk(pred, target, traits):
    """Quadratic weighted kappa per trait of half-point scores 1-5 (9 classes): (traits,)."""
    pi = ((pred.clamp(1, 5) * 2).round() - 2).long()
    ti = ((target * 2).round() - 2).long()
    tr = torch.arange(traits, device=pred.device)[None].expand_as(pi)
    conf = torch.zeros(traits * 81, device=pred.device)
    conf.scatter_add_(0, (tr * 81 + ti * 9 + pi).flatten(), torch.ones(pi.numel(), device=pred.device))
    conf = conf.view(traits, 9, 9)
    k = torch.arange(9, device=pred.device).float()
    wq = (k[:, None] - k[None]) ** 2 / 64.0
    expect = conf.sum(2, keepdim=True) * conf.sum(1, keepdim=True) / conf.sum((1, 2), keepdim=True).clamp(min=1)
    return 1 - (wq * conf).sum((1, 2)) / (wq * expect).sum((1, 2)).clamp(min=1e-6)


@_workload("automated essay trait scoring fine-tuning (random init, DeBERTa-small-like): essays of 150-1,500 tokens (drawn each) cut into overlapping 512-token windows with stride 384 (up to 4 windows), a transformer encoder (6 pre-norm blocks, width 384, 6 heads, vocabulary 32,000) over every window with an additive key-padding mask, masked mean pooling, attention pooling over the windows, six trait regressions (cohesion, syntax, vocabulary, phraseology, grammar, conventions on a 1-5 half-point scale) by smooth-L1; AdamW with layer-wise learning-rate decay 0.8, warmup, clipping, bf16 autocast, gradient accumulation over 2 micro-batches of 4-8 essays (drawn), 240 optimizer steps; the loss read back every 10 steps and every 55 steps an evaluation over 96 essays in batches of 8 with per-trait quadratic weighted kappa from device confusion matrices and the RMSE read back")
def essay_trait_scoring_finetune(rng):
    vocab, d, heads, layers = _smoke(32000, 64), _smoke(384, 16), _smoke(6, 2), _smoke(6, 1)
    win, stride, traits = _smoke(512, 16), _smoke(384, 12), 6
    lo_len, hi_len = _smoke(150, 6), _smoke(1500, 40)
    model = _EssayScorer(vocab, d, heads, layers, win, traits).cuda()
    lr, decay = 3e-5, 0.8
    groups = [{"params": list(model.emb.parameters()) + list(model.pos.parameters()), "lr": lr * decay ** layers}]
    for i, blk in enumerate(model.blocks):
        groups.append({"params": list(blk.parameters()), "lr": lr * decay ** (layers - 1 - i)})
    groups.append({"params": list(model.norm.parameters()) + list(model.att.parameters())
                   + list(model.head.parameters()), "lr": lr * 20})
    for g in groups:
        g["base"] = g["lr"]
    opt = torch.optim.AdamW(groups, weight_decay=0.01)
    steps, accum = _smoke(240, 3), 2
    for step in range(steps):
        model.train()
        for g in opt.param_groups:
            g["lr"] = g["base"] * min(1.0, (step + 1) / 16) * max(0.05, 1 - step / steps)
        opt.zero_grad(set_to_none=True)
        for _ in range(accum):
            b = rng.randint(_smoke(4, 2), _smoke(8, 3))
            lengths = [rng.randint(lo_len, hi_len) for _ in range(b)]
            windows, tokmask, y = _essays(b, lengths, vocab, win, stride, traits)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                pred = model(windows, tokmask)
            loss = _F.smooth_l1_loss(pred, y, beta=0.5) / accum
            loss.backward()
            del windows, tokmask, y, pred
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            loss.item()
        del loss
        if (step + 1) % _smoke(55, 2) == 0:
            model.eval()
            preds, targets = [], []
            with torch.no_grad():
                for _ in range(_smoke(12, 1)):
                    lengths = [rng.randint(lo_len, hi_len) for _ in range(_smoke(8, 2))]
                    windows, tokmask, y = _essays(len(lengths), lengths, vocab, win, stride, traits)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        preds.append(model(windows, tokmask))
                    targets.append(y)
                    del windows, tokmask, y
                p, t = torch.cat(preds), torch.cat(targets)
                kappa = _qwk(p, t, traits)
                rmse = (p - t).pow(2).mean(0).sqrt()
            torch.cat([kappa, rmse]).tolist()
            del preds, targets, p, t, kappa, rmse


# ---------------------------------------------------------------- short-answer grading service


class _CrossEncoder(_nn.Module):
    def __init__(self, vocab, d, heads, layers, maxlen, classes):
        super().__init__()
        self.emb, self.pos, self.seg = _nn.Embedding(vocab, d), _nn.Embedding(maxlen, d), _nn.Embedding(2, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.cls, self.score = _nn.Linear(d, classes), _nn.Linear(d, 1)
        self.proj = _nn.Linear(d, d)

    def forward(self, ids, segs, keymask):
        """ids (B, L), segs (B, L) 0 for question + reference, 1 for the answer, keymask (B, L) float: grade logits
        (B, classes), scores (B,), normalised embeddings of the answer span (B, d)."""
        h = self.emb(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device)) + self.seg(segs)
        mask = ((1 - keymask) * -1e4)[:, None, None, :].to(h.dtype)
        for blk in self.blocks:
            h = blk(h, mask=mask)
        h = self.norm(h)
        am = (segs.float() * keymask)[..., None]
        span = (h.float() * am).sum(1) / am.sum(1).clamp(min=1)
        return self.cls(h[:, 0]).float(), self.score(h[:, 0]).float()[:, 0], \
            _F.normalize(self.proj(span.to(h.dtype)).float(), dim=-1)


def _segments(lens, qlen, seq):
    """Segment ids and key mask for rows of `seq` tokens: the first qlen the question and reference, then the
    answer up to lens (B,) tokens in all."""
    pos = torch.arange(seq, device=lens.device)[None]
    keymask = (pos < lens[:, None]).float()
    segs = (pos >= qlen).long() * keymask.long()
    return segs, keymask


@_workload("short-answer grading service (random init, a BERT-small-like cross-encoder): at start a bank of 16,384 graded exemplar answers embedded in batches of 256 x 128 tokens (no grad); then 1,150-1,250 requests (drawn) of 1-32 student answers (log-uniform) x 48-192 tokens (drawn, a multiple of 8) of question + reference + answer, the int32 tokens and answer lengths of each request uploaded on a side stream from two reused pinned host buffers one request ahead (waited on by event, record_stream'ed); the cross-encoder (6 pre-norm blocks, width 384, 6 heads, vocabulary 30,522) under bf16 autocast with an additive key-padding mask, a three-way grade (correct, partially correct, incorrect), a 0-1 score, a cosine search of the answer-span embedding over the exemplar bank with top-8 and a similarity-weighted grade vote blended with the classifier; each request's grades, scores and best exemplar ids read back")
def short_answer_grading_serve(rng):
    vocab, d, heads, layers = _smoke(30522, 64), _smoke(384, 16), _smoke(6, 2), _smoke(6, 1)
    maxlen, classes = _smoke(192, 24), 3
    model = _CrossEncoder(vocab, d, heads, layers, maxlen, classes).cuda().eval()
    model.requires_grad_(False)
    nbank, bchunk, blen = _smoke(16384, 32), _smoke(256, 16), _smoke(128, 16)
    bank, bank_grade = [], torch.randint(0, classes, (nbank,), device="cuda")
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        for s in range(0, nbank, bchunk):
            ids = torch.randint(5, vocab, (bchunk, blen), device="cuda")
            lens = torch.randint(blen // 2, blen + 1, (bchunk,), device="cuda")
            segs, keymask = _segments(lens, blen // 3, blen)
            bank.append(model(ids * keymask.long(), segs, keymask)[2].to(torch.bfloat16))
            del ids, lens, segs, keymask
    bank = torch.cat(bank)
    bank_onehot = _F.one_hot(bank_grade, classes).float()
    maxb = 32
    host = []
    for _ in range(2):
        buf = torch.randint(5, vocab, (maxb * maxlen + maxb,), dtype=torch.int32)
        buf[maxb * maxlen:] = torch.randint(maxlen // 3, maxlen + 1, (maxb,), dtype=torch.int32)
        host.append(buf.pin_memory())
    up = SideUploads(host)

    def draw():
        b = _loguniform(rng, 1, maxb)
        seq = randint(rng, _smoke(48, 16), maxlen, 8)
        return b, seq, rng.randint(_smoke(16, 4), seq // 2)

    nreq = rng.randint(_smoke(1150, 3), _smoke(1250, 4))
    plan = [draw() for _ in range(nreq)]

    def spans(i):
        b, seq, _ = plan[i]
        return slice(0, b * seq), slice(maxb * maxlen, maxb * maxlen + b)

    nxt = up.upload(0, *spans(0))
    for i in range(nreq):
        b, seq, qlen = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, *spans(i + 1))
        raw, rawlen, ev = item
        SideUploads.ready(ev, raw, rawlen)
        with torch.no_grad():
            lens = rawlen.long().clamp(qlen + 2, seq)
            segs, keymask = _segments(lens, qlen, seq)
            ids = raw.view(b, seq).long() * keymask.long()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits, score, emb = model(ids, segs, keymask)
                sims = (emb.to(torch.bfloat16) @ bank.T).float()
            top_s, top_i = sims.topk(8, dim=1)
            w = torch.softmax(top_s / 0.05, -1)
            vote = (w[..., None] * bank_onehot.index_select(0, top_i.flatten()).view(b, 8, classes)).sum(1)
            probs = 0.7 * torch.softmax(logits, -1) + 0.3 * vote
            grade = probs.argmax(-1)
            out = torch.stack([grade.float(), torch.sigmoid(score), top_i[:, 0].float()], 1)
        out.tolist()
        del item, raw, rawlen, lens, segs, keymask, ids, logits, score, emb, sims, top_s, top_i, w, vote, probs
        del grade, out

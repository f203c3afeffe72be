"""The eighty-ninth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch87_b.py are): human resources, recruiting and workplace analytics, written in torch alone, first half. Résumé
entity tagging training (a transformer encoder over the tokens of résumés of drawn lengths with section embeddings,
BIO tagging of résumé entities and a seniority head), candidate-job matching training (two transformer towers over
résumé and job-posting tokens of drawn lengths, a contrastive loss over in-batch and hard negatives), interview speech
analysis training (a convolutional subsampler and conformer blocks over log-mel features of interview answers of drawn
durations, masked pooling, competency scores and frame-level filler-word tagging) and employee attrition survival
training (a GRU written out month by month over tenure histories of drawn lengths per employee, competing-risk
discrete-time hazards for voluntary and involuntary exits, cumulative incidence at evaluation points). Same
conventions as the earlier batches: nothing downloaded, data drawn at random on the device, `rng` the workload's
random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1
runs are tiny. No control flow reads a tensor's value: history lengths, token counts, durations and batch sizes are
fixed on the host, padding handled by masks multiplied in or by torch.where / masked_fill, no boolean-mask indexing;
losses and metrics are read back only at logging points. All four are single-stream. The models run under bf16
autocast. Every position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new89.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and for
which of them the CPU smoke run (RECORD_SMOKE=1) ran.
"""

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _loguniform(rng, lo, hi, mult=1):
    return _b.rec._loguniform(rng, lo, hi, mult)


# ---------------------------------------------------------------- résumé entity tagging


class _ResumeEncoder(_nn.Module):
    """Word, 1-d position and résumé-section embeddings, pre-norm transformer blocks under a key mask, a BIO tagging
    head on every token and a seniority head on the first token."""

    def __init__(self, vocab, d, heads, layers, max_pos, n_sec, n_tags, n_levels):
        super().__init__()
        self.word, self.pos, self.sec = _nn.Embedding(vocab, d), _nn.Embedding(max_pos, d), _nn.Embedding(n_sec, d)
        self.norm_in = _nn.LayerNorm(d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.tag, self.level = _nn.Linear(d, n_tags), mlp(d, d, n_levels, act=_nn.Tanh)

    def forward(self, ids, sec, key):
        t = ids.shape[1]
        x = self.word(ids) + self.pos(torch.arange(t, device=ids.device))[None] + self.sec(sec)
        x = _F.dropout(self.norm_in(x), 0.1, self.training)
        for blk in self.blocks:
            x = blk(x, mask=key)
        x = self.norm(x)
        return self.tag(x), self.level(x[:, 0])


@_workload("résumé entity tagging training (random init, a BERT-style token tagger): 8-32 résumés a step (drawn), each of 64-512 tokens (drawn per résumé, padded to the step's longest rounded up to a multiple of 32) over a 32,000-word vocabulary, each token with a section index of 12 (a sorted random draw per résumé, so sections run in order); word, position (512 rows, the longest padded résumé) and section tables, a 6-block pre-norm transformer (width 384, 6 heads) under a key mask; BIO tagging of 19 entity types (39 tags) with pads ignored and a 7-level seniority head on the first token; AdamW, clipping, bf16 autocast, 425 steps; the losses read back every 20 steps and every 100 steps a no-grad evaluation of 48 résumés of 512 tokens with the tagging accuracy read back")
def resume_entity_tagging_train(rng):
    vocab, d, heads, layers = _smoke(32000, 500), _smoke(384, 32), _smoke(6, 2), _smoke(6, 1)
    max_tok, n_sec, n_tags, n_levels = _smoke(512, 64), 12, 2 * 19 + 1, 7
    model = _ResumeEncoder(vocab, d, heads, layers, max_tok, n_sec, n_tags, n_levels).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.01)

    def resumes(lengths):
        b, t = len(lengths), -(-max(lengths) // 32) * 32
        keep = keep_mask(lengths, t)
        ids = torch.randint(2, vocab, (b, t), device="cuda").masked_fill(~keep, 0)
        # sections run in order down the résumé: a sorted draw of section indices per token
        sec = torch.randint(0, n_sec, (b, t), device="cuda").sort(-1).values * keep
        tags = torch.randint(0, n_tags, (b, t), device="cuda").masked_fill(~keep, -100)
        level = torch.randint(0, n_levels, (b,), device="cuda")
        return ids, sec, keep[:, None, None, :], tags, level

    steps = _smoke(425, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(8, 2), _smoke(32, 4))
        lengths = [rng.randint(_smoke(64, 8), max_tok) for _ in range(b)]
        ids, sec, key, tags, level = resumes(lengths)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            tag_log, level_log = model(ids, sec, key)
        l_t = _F.cross_entropy(tag_log.float().flatten(0, 1), tags.flatten(), ignore_index=-100)
        l_l = _F.cross_entropy(level_log.float(), level)
        loss = l_t + 0.3 * l_l
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_t.detach(), l_l.detach()]).tolist()
        del ids, sec, key, tags, level, tag_log, level_log, l_t, l_l, loss
        if (step + 1) % _smoke(100, 2) == 0:
            model.eval()
            with torch.no_grad():
                ids, sec, key, tags, level = resumes([max_tok] * _smoke(48, 3))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    tag_log, _ = model(ids, sec, key)
                acc = (tag_log.argmax(-1) == tags).float().mean()
            acc.item()
            del ids, sec, key, tags, level, tag_log, acc


# ---------------------------------------------------------------- candidate-job two-tower matching


class _TextTower(_nn.Module):
    """Token and position embeddings, pre-norm blocks under a key mask, masked mean pooling, categorical side
    features (one offset table), a projection to the shared space, L2-normalised."""

    def __init__(self, vocab, d, heads, layers, max_pos, cards, out):
        super().__init__()
        self.tok, self.pos = _nn.Embedding(vocab, d), _nn.Embedding(max_pos, d)
        self.register_buffer("offsets", torch.tensor([0] + list(cards[:-1])).cumsum(0))
        self.side = _nn.Embedding(sum(cards), d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.proj = mlp(2 * d, d, out, act=_nn.GELU)

    def forward(self, ids, keep, cat):
        t = ids.shape[1]
        x = self.tok(ids) + self.pos(torch.arange(t, device=ids.device))[None]
        key = keep[:, None, None, :]
        for blk in self.blocks:
            x = blk(x, mask=key)
        w = keep[..., None].to(x.dtype)
        pooled = (self.norm(x) * w).sum(1) / w.sum(1).clamp(min=1)
        side = self.side(cat + self.offsets).mean(1)
        return _F.normalize(self.proj(torch.cat([pooled, side.to(pooled.dtype)], -1)).float(), dim=-1)


@_workload("candidate-job matching training (random init, a two-tower retrieval model): 32-128 candidate-posting pairs a step (log-uniform, a multiple of 16), each pair with one extra negative posting (drawn at random like the others); the candidate tower over résumé texts of 32-256 tokens and the posting tower over job postings of 32-256 tokens (drawn per text over a 30,000-token vocabulary, padded to the step's longest rounded up to a multiple of 16, position tables of 256 rows), each a 3-block pre-norm transformer (width 256, 4 heads) under a key mask with masked mean pooling and categorical side features (candidate: 3 fields of 500, 10 and 8 codes; posting: 4 fields of 500, 60, 7 and 3 codes; one offset table each), projected to 128 by a 2-layer MLP and L2-normalised; an InfoNCE loss of each candidate against every posting and extra negative of the step with a learned temperature, and the symmetric posting-to-candidate loss; AdamW, clipping, bf16 autocast, 265 steps; the losses and the temperature read back every 20 steps and every 66 steps recall@10 of 1,024 candidates against 8,192 postings (both encoded in chunks of 512) read back")
def candidate_job_two_tower_train(rng):
    vocab, d, heads, layers, out = _smoke(30000, 500), _smoke(256, 32), _smoke(4, 2), _smoke(3, 1), _smoke(128, 16)
    max_tok = _smoke(256, 32)
    cand_cards, post_cards = [500, 10, 8], [500, 60, 7, 3]
    cand = _TextTower(vocab, d, heads, layers, max_tok, cand_cards, out).cuda()
    post = _TextTower(vocab, d, heads, layers, max_tok, post_cards, out).cuda()
    log_temp = _nn.Parameter(torch.tensor(2.3, device="cuda"))
    params = list(cand.parameters()) + list(post.parameters()) + [log_temp]
    opt = torch.optim.AdamW(params, lr=3e-4, weight_decay=0.01)

    def texts(lengths, cards):
        b, t = len(lengths), -(-max(lengths) // 16) * 16
        keep = keep_mask(lengths, t)
        ids = torch.randint(2, vocab, (b, t), device="cuda").masked_fill(~keep, 0)
        cat = torch.stack([torch.randint(0, c, (b,), device="cuda") for c in cards], 1)
        return ids, keep, cat

    def draw(n, cards):
        return texts([rng.randint(_smoke(32, 4), max_tok) for _ in range(n)], cards)

    steps = _smoke(265, 3)
    for step in range(steps):
        cand.train(), post.train()
        b = _loguniform(rng, _smoke(32, 4), _smoke(128, 8), _smoke(16, 4))
        c_in, p_in, n_in = draw(b, cand_cards), draw(b, post_cards), draw(b, post_cards)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            qc = cand(*c_in)
            qp = post(*p_in)
            qn = post(*n_in)
        scale = log_temp.exp().clamp(max=100.0)
        logits = scale * qc @ torch.cat([qp, qn]).t()
        target = torch.arange(b, device="cuda")
        l_c = _F.cross_entropy(logits, target)
        l_p = _F.cross_entropy(logits[:, :b].t(), target)
        loss = 0.5 * (l_c + l_p)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_c.detach(), l_p.detach(), scale.detach()]).tolist()
        del c_in, p_in, n_in, qc, qp, qn, scale, logits, target, l_c, l_p, loss
        if (step + 1) % _smoke(66, 2) == 0:
            cand.eval(), post.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                nc, npost, chunk = _smoke(1024, 8), _smoke(8192, 32), _smoke(512, 8)
                qc = torch.cat([cand(*draw(chunk, cand_cards)) for _ in range(nc // chunk)])
                qp = torch.cat([post(*draw(chunk, post_cards)) for _ in range(npost // chunk)])
                top = (qc @ qp.t()).topk(10, -1).indices
                hit = (top == torch.arange(nc, device="cuda")[:, None]).any(-1).float().mean()
            hit.item()
            del qc, qp, top, hit


# ---------------------------------------------------------------- interview speech analysis (conformer)


class _ConformerBlock(_nn.Module):
    """Macaron feed-forward halves, self-attention under a key mask, a depthwise convolution module (pads zeroed
    before it), a final LayerNorm."""

    def __init__(self, d, heads, kernel):
        super().__init__()
        self.ff1, self.ff2 = (_nn.Sequential(_nn.LayerNorm(d), _nn.Linear(d, 4 * d), _nn.SiLU(), _nn.Linear(4 * d, d))
                              for _ in range(2))
        self.n_att, self.qkv, self.o = _nn.LayerNorm(d), _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.n_conv, self.pw1 = _nn.LayerNorm(d), _nn.Linear(d, 2 * d)
        self.dw = _nn.Conv1d(d, d, kernel, padding=kernel // 2, groups=d)
        self.bn, self.pw2 = _nn.BatchNorm1d(d), _nn.Linear(d, d)
        self.n_out = _nn.LayerNorm(d)
        self.h = heads

    def forward(self, x, keep):
        b, t, d = x.shape
        x = x + 0.5 * self.ff1(x)
        q, k, v = self.qkv(self.n_att(x)).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        a = _F.scaled_dot_product_attention(q, k, v, attn_mask=keep[:, None, None, :])
        x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
        c = _F.glu(self.pw1(self.n_conv(x)), -1) * keep[..., None].to(x.dtype)
        c = _F.silu(self.bn(self.dw(c.transpose(1, 2)))).transpose(1, 2)
        x = x + self.pw2(c)
        x = x + 0.5 * self.ff2(x)
        return self.n_out(x)


class _InterviewConformer(_nn.Module):
    def __init__(self, mels, d, heads, layers, kernel, n_comp, n_frame):
        super().__init__()
        self.sub = _nn.Sequential(_nn.Conv2d(1, d // 4, 3, 2, 1), _nn.SiLU(), _nn.Conv2d(d // 4, d // 4, 3, 2, 1),
                                  _nn.SiLU())
        self.lin = _nn.Linear(d // 4 * (-(-mels // 4)), d)
        self.blocks = _nn.ModuleList(_ConformerBlock(d, heads, kernel) for _ in range(layers))
        self.att_pool = _nn.Linear(d, 1)
        self.comp = mlp(d, d, n_comp, act=_nn.GELU)
        self.frame = _nn.Linear(d, n_frame)

    def forward(self, feats, keep):
        x = self.sub(feats[:, None])  # (B, C, T/4, mels/4)
        x = self.lin(x.permute(0, 2, 1, 3).flatten(2))
        for blk in self.blocks:
            x = blk(x, keep)
        w = self.att_pool(x)[..., 0].float().masked_fill(~keep, -1e4).softmax(-1)
        pooled = (w[..., None].to(x.dtype) * x).sum(1)
        return self.comp(pooled).float(), self.frame(x).float()


def _sub4(n):
    """Frames left after two stride-2 convolutions (kernel 3, padding 1)."""
    for _ in range(2):
        n = (n - 1) // 2 + 1
    return n


@_workload("interview speech analysis training (random init, a conformer): 8-24 answers a step (drawn), each of 3-15 s (drawn per answer) of 80-band log-mel features at 100 frames a second drawn on the device, padded to the step's longest and masked; a 4x convolutional subsampler (two stride-2 3x3 convolutions of 64 channels), 6 conformer blocks (width 256, 4 heads, depthwise kernel 15 with batch norm, pads zeroed before the convolution) under a key mask; masked attention pooling into 6 competency scores (regression, MSE) and frame-level tagging into 4 classes (pads ignored); AdamW, clipping, bf16 autocast, 210 steps; the losses read back every 20 steps and every 52 steps a no-grad evaluation of 16 answers of 15 s with the per-competency mean absolute score error read back")
def interview_speech_conformer_train(rng):
    mels, d, heads, layers, kernel = 80, _smoke(256, 16), _smoke(4, 2), _smoke(6, 1), 15
    n_comp, n_frame, fps = 6, 4, 100
    lo_s, hi_s = 3, _smoke(15, 4)
    model = _InterviewConformer(mels, d, heads, layers, kernel, n_comp, n_frame).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)

    def answers(frames):
        b, t = len(frames), max(frames)
        keep_in = keep_mask(frames, t)
        feats = torch.randn(b, t, mels, device="cuda") * keep_in[..., None]
        sub = [_sub4(f) for f in frames]
        keep = keep_mask(sub, _sub4(t))
        scores = torch.rand(b, n_comp, device="cuda") * 4 + 1
        ftag = torch.randint(0, n_frame, keep.shape, device="cuda").masked_fill(~keep, -100)
        return feats, keep, scores, ftag

    steps = _smoke(210, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(8, 2), _smoke(24, 3))
        frames = [int(rng.uniform(lo_s, hi_s) * fps) for _ in range(b)]
        feats, keep, scores, ftag = answers(frames)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            comp, frame = model(feats, keep)
        l_s = _F.mse_loss(comp, scores)
        l_f = _F.cross_entropy(frame.flatten(0, 1), ftag.flatten(), ignore_index=-100)
        loss = l_s + l_f
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_s.detach(), l_f.detach()]).tolist()
        del feats, keep, scores, ftag, comp, frame, l_s, l_f, loss
        if (step + 1) % _smoke(52, 2) == 0:
            model.eval()
            with torch.no_grad():
                feats, keep, scores, ftag = answers([hi_s * fps] * _smoke(16, 2))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    comp, _ = model(feats, keep)
                err = (comp - scores).abs().mean(0)
            err.tolist()
            del feats, keep, scores, ftag, comp, err


# ---------------------------------------------------------------- employee attrition (competing-risk survival)


class _TenureGRU(_nn.Module):
    """Static embeddings added to a projection of each month's features, a GRU written out month by month (the input
    projection for all months at once, the recurrent matmul and gates per month, as a custom-cell model does),
    competing-risk hazard logits (stay, voluntary exit, involuntary exit) on every month."""

    def __init__(self, n_feat, d, hidden, n_dept, n_level, n_loc):
        super().__init__()
        self.inp = _nn.Linear(n_feat, d)
        self.dept, self.level, self.loc = _nn.Embedding(n_dept, 32), _nn.Embedding(n_level, 8), _nn.Embedding(n_loc, 24)
        self.static = _nn.Linear(64, d)
        self.w_ih, self.w_hh = _nn.Linear(d, 3 * hidden), _nn.Linear(hidden, 3 * hidden)
        self.head = mlp(hidden + d, hidden, 3, act=_nn.GELU)

    def forward(self, x, dept, level, loc):
        s = self.static(torch.cat([self.dept(dept), self.level(level), self.loc(loc)], -1))
        gx = self.w_ih(_F.dropout(self.inp(x) + s[:, None], 0.1, self.training))
        h = torch.zeros(x.shape[0], self.w_hh.in_features, device=x.device, dtype=gx.dtype)
        outs = []
        for t in range(x.shape[1]):
            xr, xz, xn = gx[:, t].chunk(3, -1)
            hr, hz, hn = self.w_hh(h).chunk(3, -1)
            r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
            h = (1 - z) * torch.tanh(xn + r * hn) + z * h
            outs.append(h)
        h_seq = torch.stack(outs, 1)
        z = torch.cat([h_seq, s[:, None].expand(-1, h_seq.shape[1], -1).to(h_seq.dtype)], -1)
        return self.head(z).float()


@_workload("employee attrition survival training (random init, a competing-risk discrete-time survival model): 256-1,536 employees a step (log-uniform, a multiple of 64), each with its own tenure of 3-48 months (drawn per employee) and 24 random monthly features drawn for the step's longest tenure (no padding mask: the tenure only bounds the drawn event month); department (60), job level (12) and location (200) embeddings, a 1-layer GRU (hidden 320) written out month by month (the input projection for all months at once, the recurrent matmul and gates per month); per-month logits of staying, a voluntary and an involuntary exit; the likelihood of each employee's event month (drawn on the device within the tenure) and cause (censored, voluntary or involuntary, drawn 70/22/8%) built by masks of month indices; AdamW, clipping, bf16 autocast, 178 steps; the loss read back every 20 steps and every 44 steps the cumulative incidence of voluntary exits of 2,048 employees over 48 months (a cumulative product of the staying probability) with its 10/50/90% quantiles at 6, 12, 24 and 36 months read back")
def attrition_survival_train(rng):
    n_feat, d, hidden = 24, _smoke(128, 16), _smoke(320, 16)
    n_dept, n_level, n_loc, max_m = 60, 12, 200, _smoke(48, 12)
    model = _TenureGRU(n_feat, d, hidden, n_dept, n_level, n_loc).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)

    def cohort(lengths):
        b, t = len(lengths), max(lengths)
        x = torch.randn(b, t, n_feat, device="cuda")
        st = [torch.randint(0, n, (b,), device="cuda") for n in (n_dept, n_level, n_loc)]
        ln = torch.tensor(lengths, device="cuda")
        months = torch.arange(t, device="cuda")[None]
        return x, st, ln, months

    steps = _smoke(178, 3)
    for step in range(steps):
        model.train()
        b = _loguniform(rng, _smoke(256, 4), _smoke(1536, 8), _smoke(64, 4))
        lengths = [rng.randint(3, max_m) for _ in range(b)]
        x, st, ln, months = cohort(lengths)
        event_t = (torch.rand(b, device="cuda") * ln).long()
        # cause 0: censored at event_t (still employed), 1: voluntary exit, 2: involuntary exit
        cause = torch.multinomial(torch.tensor([0.7, 0.22, 0.08], device="cuda"), b, replacement=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x, *st)
        logp = logits.log_softmax(-1)
        before = (months < event_t[:, None]).float()
        at = (months == event_t[:, None]).float()
        at_lp = logp.gather(-1, cause[:, None, None].expand(-1, logp.shape[1], 1))[..., 0]
        nll = -((before * logp[..., 0]).sum(1) + (at * at_lp).sum(1))
        loss = nll.mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.detach().item()
        del x, st, ln, months, event_t, cause, logits, logp, before, at, at_lp, nll, loss
        if (step + 1) % _smoke(44, 2) == 0:
            model.eval()
            with torch.no_grad():
                x, st, ln, months = cohort([max_m] * _smoke(2048, 8))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    p = model(x, *st).softmax(-1)
                stay = torch.cumprod(p[..., 0], 1)
                prev = torch.cat([torch.ones_like(stay[:, :1]), stay[:, :-1]], 1)
                cif = torch.cumsum(prev * p[..., 1], 1)
                pts = [min(m, max_m) - 1 for m in (6, 12, 24, 36)]
                q = cif[:, pts].quantile(torch.tensor([0.1, 0.5, 0.9], device="cuda"), 0)
            q.tolist()
            del x, st, ln, months, p, stay, prev, cif, q

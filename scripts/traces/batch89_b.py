"""The eighty-ninth batch of held-out workloads for record.py, second half (see batch89.py): human resources,
recruiting and workplace analytics, written in torch alone. A job-recommendation service (a user tower over each
job seeker's recent applications and profile fields, arriving in requests of drawn sizes, scored against an on-device
catalogue of job embeddings, already-applied jobs masked, a re-ranking MLP over the top candidates), a video-interview
expression service (a small residual convnet over face crops of interview clips of drawn frame counts and a temporal
transformer, per-frame expression probabilities and an engagement score), shift-roster policy training (an attention
model over drawn numbers of workers and shifts, assignments sampled per shift, REINFORCE against the mean of several
samples, a reward of skill coverage, overtime, availability and fairness penalties) and skill-graph link prediction
training (a relational message-passing network over a drawn subgraph of skills and job titles, edges by index_select
and index_add with degree normalisation, DistMult scoring of held-out links against sampled negatives).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the two services), `rng` the workload's random.Random for every shape, count and sampled choice,
sizes through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or
masked_fill; no boolean-mask indexing; results read back only at logging points or once per request.
job_recommend_serve and interview_expression_serve upload their inputs on a side stream (two reused pinned host
buffers, one request ahead, the main stream waiting on an event, the tensors record_stream'ed, as
workload_helpers.SideUploads does); the other two are single-stream. Models run under bf16 autocast. Every table is
sized for the largest index that can be drawn.
"""

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


# ---------------------------------------------------------------- job recommendation service


class _SeekerTower(_nn.Module):
    """Recent applications as rows of the job table (row `n_jobs` the pad), attention pooling under a mask, profile
    fields from one offset table, an MLP to the query space."""

    def __init__(self, n_jobs, cards, d):
        super().__init__()
        self.jobs = _nn.Embedding(n_jobs + 1, d)
        self.register_buffer("offsets", torch.tensor([0] + list(cards[:-1])).cumsum(0))
        self.prof = _nn.Embedding(sum(cards), d)
        self.att = _nn.Linear(d, 1)
        self.out = mlp(2 * d, 2 * d, d, act=_nn.GELU)

    def forward(self, hist, keep, prof):
        h = self.jobs(hist)
        w = self.att(h)[..., 0].float().masked_fill(~keep, -1e4).softmax(-1)
        pooled = (w[..., None].to(h.dtype) * h).sum(1)
        return self.out(torch.cat([pooled, self.prof(prof + self.offsets).mean(1).to(pooled.dtype)], -1))


@_workload("job-recommendation serving (random init, a two-stage recommender): 6,700-6,900 requests (drawn) of 1-512 job seekers each (log-uniform); each seeker's 50 recent application slots (job ids, with 0-50 filled: shorter histories padded with -1 in the host data, masked on the device by torch.where) and 8 profile fields (4-300 codes each) as int32, uploaded on a side stream from two reused pinned host buffers (filled once) one request ahead (two spans of one buffer, waited on by event, record_stream'ed); a seeker tower (a 150,001-row job table, the last row the pad, attention pooling under the history mask, one offset profile table of 624 rows, an MLP to width 128) under bf16 autocast scored against an on-device catalogue of 150,000 bf16 job embeddings; the seeker's own applications masked out by scatter; top-200, a 3-layer re-ranking MLP over each seeker-job pair (seeker, job, product and retrieval score), top-20; each request's job ids and scores read back")
def job_recommend_serve(rng):
    n_jobs, d, hist_len = _smoke(150000, 500), _smoke(128, 16), _smoke(50, 6)
    cards = [300, 200, 60, 12, 10, 8, 30, 4]
    n_prof, k1, k2 = len(cards), _smoke(200, 20), _smoke(20, 5)
    tower = _SeekerTower(n_jobs, cards, d).cuda().eval()
    rerank = mlp(3 * d + 1, 2 * d, 1, layers=3, act=_nn.GELU).cuda().eval()
    tower.requires_grad_(False), rerank.requires_grad_(False)
    catalogue = torch.randn(n_jobs, d, device="cuda").to(torch.bfloat16)
    maxb = _smoke(512, 8)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = []
    for _ in range(2):
        hist = torch.randint(0, n_jobs, (maxb, hist_len), dtype=torch.int32, generator=gen)
        filled = torch.randint(0, hist_len + 1, (maxb, 1), generator=gen)
        hist = torch.where(torch.arange(hist_len)[None] < filled, hist, torch.full_like(hist, -1))
        prof = torch.stack([torch.randint(0, c, (maxb,), dtype=torch.int32, generator=gen) for c in cards], 1)
        host.append(torch.cat([hist.flatten(), prof.flatten()]).pin_memory())
    up = SideUploads(host)
    nreq = rng.randint(_smoke(6700, 3), _smoke(6900, 4))
    plan = [_loguniform(rng, 1, maxb) for _ in range(nreq)]

    def spans(i):
        b = plan[i]
        return b * hist_len, slice(maxb * hist_len, maxb * hist_len + b * n_prof)

    nxt = up.upload(0, *spans(0))
    for i in range(nreq):
        b = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, *spans(i + 1))
        raw_hist, raw_prof, ev = item
        SideUploads.ready(ev, raw_hist, raw_prof)
        with torch.no_grad():
            hist = raw_hist.view(b, hist_len).long()
            keep = hist >= 0
            hist = torch.where(keep, hist, torch.full_like(hist, n_jobs))  # the pad row
            prof = raw_prof.view(b, n_prof).long()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                q = tower(hist, keep, prof)
                scores = (q.to(torch.bfloat16) @ catalogue.t()).float()
            # applied jobs masked: the pad index lands in an extra column that is dropped
            scores = torch.cat([scores, scores.new_zeros(b, 1)], 1).scatter_(1, hist, -1e4)[:, :n_jobs]
            s1, i1 = scores.topk(k1, -1)
            cand = catalogue[i1]  # (b, k1, d)
            qe = q.to(torch.bfloat16)[:, None].expand(-1, k1, -1)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                r = rerank(torch.cat([qe, cand, qe * cand, s1[..., None].to(torch.bfloat16)], -1))[..., 0].float()
            s2, j2 = r.topk(k2, -1)
            out = torch.stack([i1.gather(1, j2).float(), s2], -1)
        out.tolist()
        del item, raw_hist, raw_prof, hist, keep, prof, q, scores, s1, i1, cand, qe, r, s2, j2, out


# ---------------------------------------------------------------- video-interview expression service


def _cbr(cin, cout, stride=1):
    return _nn.Sequential(_nn.Conv2d(cin, cout, 3, stride, 1, bias=False), _nn.BatchNorm2d(cout), _nn.ReLU())


class _FaceBlock(_nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.a, self.b = _cbr(cin, cout, stride), _nn.Sequential(_nn.Conv2d(cout, cout, 3, 1, 1, bias=False),
                                                                  _nn.BatchNorm2d(cout))
        self.sc = _nn.Sequential(_nn.Conv2d(cin, cout, 1, stride, bias=False), _nn.BatchNorm2d(cout))

    def forward(self, x):
        return _F.relu(self.b(self.a(x)) + self.sc(x))


class _ExpressionNet(_nn.Module):
    """A residual convnet over each face crop, global pooling, a learned frame-position table, temporal pre-norm
    blocks over each clip's frames under a key mask, expression and engagement heads."""

    def __init__(self, widths, d, heads, layers, max_frames, n_expr):
        super().__init__()
        self.stem = _cbr(3, widths[0], 2)
        blocks, c = [], widths[0]
        for w in widths:
            blocks.append(_FaceBlock(c, w, 2))
            c = w
        self.cnn = _nn.Sequential(*blocks)
        self.proj = _nn.Linear(c, d)
        self.pos = _nn.Embedding(max_frames, d)
        self.temporal = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.expr, self.engage = _nn.Linear(d, n_expr), mlp(d, d, 1)

    def forward(self, x, clips, frames, key):
        f = self.cnn(self.stem(x)).mean((2, 3))
        t = self.proj(f).view(clips, frames, -1) + self.pos(torch.arange(frames, device=x.device))[None]
        for blk in self.temporal:
            t = blk(t, mask=key)
        t = self.norm(t)
        w = key[:, 0, 0, :, None].to(t.dtype)
        return self.expr(t).float(), self.engage((t * w).sum(1) / w.sum(1))[:, 0].float()


@_workload("video-interview expression serving (random init, a residual convnet and a temporal transformer over face-crop clips): 1,700-1,800 requests (drawn) of 1-6 clips each (drawn), each clip sampled at 8-48 frames (the request's frame count drawn, each clip's own count drawn between half of it, at least 2, and it, and masked) of 112 x 112 uint8 face crops; the pixels uploaded on a side stream from two reused pinned host buffers (filled once) one request ahead (one span, waited on by event, record_stream'ed), normalised on the device; a channels-last residual convnet (stem 32, four stride-2 stages of 32/64/128/192 channels) over every frame, padded frames included, global pooling, a 48-row frame-position table (the most frames a clip can have), 2 temporal pre-norm blocks (width 192, 4 heads) under a key mask, bf16 autocast; 8 expression probabilities per frame averaged over each clip's valid frames and a masked-mean engagement score; each request's per-clip summaries read back")
def interview_expression_serve(rng):
    widths, d, heads, layers = _smoke([32, 64, 128, 192], [8, 8, 16, 16]), _smoke(192, 16), _smoke(4, 2), _smoke(2, 1)
    max_frames, max_clips, res, n_expr = _smoke(48, 6), _smoke(6, 2), _smoke(112, 32), 8
    model = _ExpressionNet(widths, d, heads, layers, max_frames, n_expr).cuda().eval()
    model = model.to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    per = 3 * res * res
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_clips * max_frames * per,), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    mean = torch.tensor([0.5, 0.4, 0.35], device="cuda").view(1, 3, 1, 1) * 255
    std = torch.tensor([0.25, 0.22, 0.22], device="cuda").view(1, 3, 1, 1) * 255
    nreq = rng.randint(_smoke(1700, 3), _smoke(1800, 4))
    plan = []
    for _ in range(nreq):
        clips, frames = rng.randint(1, max_clips), rng.randint(_smoke(8, 2), max_frames)
        plan.append((clips, frames, [rng.randint(max(2, frames // 2), frames) for _ in range(clips)]))

    nxt = up.upload(0, plan[0][0] * plan[0][1] * per)
    for i in range(nreq):
        clips, frames, counts = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, plan[i + 1][0] * plan[i + 1][1] * per)
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            x = raw.view(clips * frames, 3, res, res).float().sub_(mean).div_(std)
            x = x.contiguous(memory_format=torch.channels_last)
            keep = torch.arange(frames, device="cuda")[None] < torch.tensor(counts, device="cuda")[:, None]
            with torch.autocast("cuda", dtype=torch.bfloat16):
                expr, engage = model(x, clips, frames, keep[:, None, None, :])
            w = keep[..., None].float()
            probs = (expr.softmax(-1) * w).sum(1) / w.sum(1)
            out = torch.cat([probs, torch.sigmoid(engage)[:, None]], 1)
        out.tolist()
        del item, raw, x, keep, expr, engage, w, probs, out


# ---------------------------------------------------------------- shift-roster policy (REINFORCE)


class _RosterPolicy(_nn.Module):
    """Worker and shift encoders, blocks of worker self-attention, shift self-attention and shift-to-worker
    cross-attention under key masks; compatibility logits of every shift for every worker."""

    def __init__(self, f_w, f_s, d, heads, layers):
        super().__init__()
        self.enc_w, self.enc_s = mlp(f_w, d, d), mlp(f_s, d, d)
        self.w_blocks = _nn.ModuleList(PreNormBlock(d, heads, 2 * d) for _ in range(layers))
        self.s_blocks = _nn.ModuleList(PreNormBlock(d, heads, 2 * d) for _ in range(layers))
        self.cross = _nn.ModuleList(_nn.MultiheadAttention(d, heads, batch_first=True) for _ in range(layers))
        self.cross_norm = _nn.ModuleList(_nn.LayerNorm(d) for _ in range(layers))
        self.q, self.k = _nn.Linear(d, d), _nn.Linear(d, d)
        self.d = d

    def forward(self, fw, fs, keep_w, keep_s):
        hw, hs = self.enc_w(fw), self.enc_s(fs)
        mw, ms = keep_w[:, None, None, :], keep_s[:, None, None, :]
        for bw, bs, ca, cn in zip(self.w_blocks, self.s_blocks, self.cross, self.cross_norm):
            hw = bw(hw, mask=mw)
            hs = bs(hs, mask=ms)
            a, _ = ca(cn(hs), hw, hw, key_padding_mask=~keep_w, need_weights=False)
            hs = hs + a
        return 10 * torch.tanh(self.q(hs) @ self.k(hw).transpose(1, 2) / self.d ** 0.5).float()  # (B, S, W)


@_workload("shift-roster policy training (random init, an attention policy trained by REINFORCE): 8-32 sites a step (drawn), each with its own 20-120 workers and 40-240 shifts (drawn per site, padded to the step's largest and masked), workers with 16 input features and shifts with 12 drawn on the device, and for the reward each worker's set of 6 skills and maximum hours (16-48, contracted 60% of it) and each shift's required skills, length (4-12 h), night flag and per-worker availability (85%) drawn on the device; worker and shift encoders and 3 layers of worker self-attention, shift self-attention and shift-to-worker cross-attention (width 128, 8 heads) under key masks; tanh-capped logits of each shift for each worker with padded and unavailable workers masked out, 8 rosters sampled per site by Gumbel-max per shift; reward from skill coverage, overtime beyond each worker's maximum (one-hot loads), unfilled contracted hours, night-shift fairness and unavailability; REINFORCE against the mean of the 8 samples with an entropy bonus, AdamW, clipping, bf16 autocast, 290 steps; the policy loss, entropy and mean reward read back every 20 steps and every 58 steps a greedy roster of 64 sites with its mean reward read back")
def shift_roster_policy_train(rng):
    f_w, f_s, d, heads, layers = 16, 12, _smoke(128, 16), _smoke(8, 2), _smoke(3, 1)
    n_samp, n_skill = _smoke(8, 2), 6
    model = _RosterPolicy(f_w, f_s, d, heads, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)

    def sites(ws, ss):
        b, nw, ns = len(ws), max(ws), max(ss)
        keep_w = torch.arange(nw, device="cuda")[None] < torch.tensor(ws, device="cuda")[:, None]
        keep_s = torch.arange(ns, device="cuda")[None] < torch.tensor(ss, device="cuda")[:, None]
        fw = torch.randn(b, nw, f_w, device="cuda")
        fs = torch.randn(b, ns, f_s, device="cuda")
        skills_w = (torch.rand(b, nw, n_skill, device="cuda") < 0.4).float()
        need_s = (torch.rand(b, ns, n_skill, device="cuda") < 0.2).float()
        hours = torch.randint(4, 13, (b, ns), device="cuda").float()
        night = (torch.rand(b, ns, device="cuda") < 0.25).float()
        max_h = torch.randint(16, 49, (b, nw), device="cuda").float()
        contract = max_h * 0.6
        avail = (torch.rand(b, ns, nw, device="cuda") < 0.85) & keep_w[:, None]
        return fw, fs, keep_w, keep_s, skills_w, need_s, hours, night, max_h, contract, avail

    def reward(assign, keep_w, keep_s, skills_w, need_s, hours, night, max_h, contract, avail):
        """assign (K, B, S) worker indices -> (K, B) rewards."""
        k, b, s = assign.shape
        nw = keep_w.shape[1]
        onehot = _F.one_hot(assign, nw).float() * keep_s[None, :, :, None]  # (K, B, S, W)
        load = (onehot * hours[None, :, :, None]).sum(2)  # (K, B, W)
        nights = (onehot * night[None, :, :, None]).sum(2)
        got = torch.einsum("kbsw,bwc->kbsc", onehot, skills_w)
        miss = (need_s[None] * (1 - got.clamp(max=1))).sum((2, 3))
        over = _F.relu(load - max_h[None]).sum(-1)
        under = (_F.relu(contract[None] - load) * keep_w[None]).sum(-1)
        wn = keep_w[None].float()
        mean_n = (nights * wn).sum(-1, keepdim=True) / wn.sum(-1, keepdim=True)
        unfair = (((nights - mean_n) ** 2) * wn).sum(-1) / wn.sum(-1)
        unavail = (onehot * (~avail)[None].float()).sum((2, 3))
        return -(2.0 * miss + 0.5 * over + 0.1 * under + 0.5 * unfair + 5.0 * unavail) / keep_s.sum(-1)[None]

    steps = _smoke(290, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(8, 2), _smoke(32, 3))
        ws = [rng.randint(_smoke(20, 3), _smoke(120, 6)) for _ in range(b)]
        ss = [rng.randint(_smoke(40, 4), _smoke(240, 8)) for _ in range(b)]
        fw, fs, keep_w, keep_s, skills_w, need_s, hours, night, max_h, contract, avail = sites(ws, ss)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(fw, fs, keep_w, keep_s)
        logp = logits.masked_fill(~avail, -1e4).log_softmax(-1)  # (B, S, W)
        gumbel = -torch.log(-torch.log(torch.rand(n_samp, *logp.shape, device="cuda").clamp(1e-9, 1 - 1e-9)))
        assign = (logp.detach()[None] + gumbel).argmax(-1)  # (K, B, S)
        lp = logp[None].expand(n_samp, -1, -1, -1).gather(-1, assign[..., None])[..., 0]
        lp = (lp * keep_s[None]).sum(-1)  # (K, B)
        with torch.no_grad():
            r = reward(assign, keep_w, keep_s, skills_w, need_s, hours, night, max_h, contract, avail)
            adv = r - r.mean(0, keepdim=True)
        ent = -((logp.exp() * logp).sum(-1) * keep_s).sum() / keep_s.sum()
        l_pg = -(adv * lp).mean()
        loss = l_pg - 0.01 * ent
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_pg.detach(), ent.detach(), r.mean()]).tolist()
        del fw, fs, keep_w, keep_s, skills_w, need_s, hours, night, max_h, contract, avail
        del logits, logp, gumbel, assign, lp, r, adv, ent, l_pg, loss
        if (step + 1) % _smoke(58, 2) == 0:
            model.eval()
            nb = _smoke(64, 2)
            ws = [rng.randint(_smoke(20, 3), _smoke(120, 6)) for _ in range(nb)]
            ss = [rng.randint(_smoke(40, 4), _smoke(240, 8)) for _ in range(nb)]
            with torch.no_grad():
                fw, fs, keep_w, keep_s, skills_w, need_s, hours, night, max_h, contract, avail = sites(ws, ss)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = model(fw, fs, keep_w, keep_s)
                assign = logits.masked_fill(~avail, -1e4).argmax(-1)[None]
                r = reward(assign, keep_w, keep_s, skills_w, need_s, hours, night, max_h, contract, avail)
            r.mean().item()
            del fw, fs, keep_w, keep_s, skills_w, need_s, hours, night, max_h, contract, avail, logits, assign, r


# ---------------------------------------------------------------- skill-graph link prediction (R-GCN)


class _RelLayer(_nn.Module):
    """One relational message-passing layer: per relation a linear map of the source nodes, gathered along the
    edges by index_select, summed into the destinations by index_add and divided by their in-degree; a self loop."""

    def __init__(self, d, n_rel):
        super().__init__()
        self.rel = _nn.ModuleList(_nn.Linear(d, d, bias=False) for _ in range(n_rel))
        self.self_loop = _nn.Linear(d, d)
        self.norm = _nn.LayerNorm(d)

    def forward(self, h, edges, degs):
        out = self.self_loop(h)
        for lin, (src, dst), deg in zip(self.rel, edges, degs):
            m = lin(h).index_select(0, src)
            out = out + torch.zeros_like(out).index_add_(0, dst, m.to(out.dtype)) / deg[:, None].to(out.dtype)
        return _F.relu(self.norm(out)) + h


@_workload("skill-graph link prediction training (random init, a relational GCN): a catalogue of 120,000 skills and 30,000 job titles (one 150,000-row node table, width 128); each step a subgraph of 20,000-60,000 sampled nodes (drawn, a fifth of them titles, node ids drawn on the device from the catalogue) with 5 relations (skill co-occurs-with skill, title requires skill and its reverse, skill broader-than skill and its reverse; 2-6 co-occurrence and 2-6 broader-than edges per skill and 2-6 requires edges per title on average, each multiplier drawn per step, endpoints drawn on the device); a 3-layer relational GCN (a linear map per relation, messages by index_select and index_add, in-degree normalisation, self loops, LayerNorm, residuals) under bf16 autocast; 8,192-32,768 positive links (drawn, random heads, tails and relations among the subgraph's nodes) per step scored by DistMult with per-relation diagonals against 4 random corrupted tails each, binary cross-entropy; AdamW, clipping, 815 steps; the loss read back every 20 steps and every 163 steps, on a fresh subgraph, the mean reciprocal rank of 1,024 random links against 1,000 sampled tails shared by all of them read back")
def skill_graph_linkpred_train(rng):
    n_skill, n_title, d, layers = _smoke(120000, 300), _smoke(30000, 100), _smoke(128, 16), _smoke(3, 1)
    n_rel, n_neg = 5, 4
    n_nodes = n_skill + n_title
    emb = _nn.Embedding(n_nodes, d).cuda()
    gnn = _nn.ModuleList(_RelLayer(d, n_rel) for _ in range(layers)).cuda()
    diag = _nn.Parameter(torch.randn(n_rel, d, device="cuda") * 0.1 + 1)
    params = list(emb.parameters()) + list(gnn.parameters()) + [diag]
    opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=1e-5)

    def subgraph():
        n = rng.randint(_smoke(20000, 60), _smoke(60000, 120))
        n_t = n // 5  # a fifth of the sampled nodes are titles
        ids = torch.cat([torch.randint(0, n_skill, (n - n_t,), device="cuda"),
                         torch.randint(n_skill, n_nodes, (n_t,), device="cuda")])
        # local indices: skills 0 .. n - n_t - 1, titles n - n_t .. n - 1
        ns = n - n_t
        e_co = ns * rng.randint(2, 6)
        e_req = n_t * rng.randint(2, 6)
        e_br = ns * rng.randint(2, 6)
        co_a, co_b = torch.randint(0, ns, (e_co,), device="cuda"), torch.randint(0, ns, (e_co,), device="cuda")
        rq_t, rq_s = torch.randint(ns, n, (e_req,), device="cuda"), torch.randint(0, ns, (e_req,), device="cuda")
        br_a, br_b = torch.randint(0, ns, (e_br,), device="cuda"), torch.randint(0, ns, (e_br,), device="cuda")
        edges = [(co_a, co_b), (rq_t, rq_s), (rq_s, rq_t), (br_a, br_b), (br_b, br_a)]
        degs = [torch.zeros(n, device="cuda").index_add_(0, dst, torch.ones(dst.shape[0], device="cuda")).clamp(min=1)
                for _, dst in edges]
        return n, ns, ids, edges, degs

    def encode(ids, edges, degs):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = emb(ids)
            for layer in gnn:
                h = layer(h, edges, degs)
        return h.float()

    steps = _smoke(815, 3)
    for step in range(steps):
        gnn.train()
        n, ns, ids, edges, degs = subgraph()
        p = rng.randint(_smoke(8192, 16), _smoke(32768, 32))
        rel = torch.randint(0, n_rel, (p,), device="cuda")
        head = torch.randint(0, n, (p,), device="cuda")
        tail = torch.randint(0, n, (p,), device="cuda")
        neg = torch.randint(0, n, (p, n_neg), device="cuda")
        h = encode(ids, edges, degs)
        hd = h[head] * diag[rel]
        pos_s = (hd * h[tail]).sum(-1)
        neg_s = (hd[:, None] * h[neg]).sum(-1)
        loss = _F.binary_cross_entropy_with_logits(pos_s, torch.ones_like(pos_s)) + \
            _F.binary_cross_entropy_with_logits(neg_s, torch.zeros_like(neg_s))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if step % 20 == 0:
            loss.detach().item()
        del ids, edges, degs, rel, head, tail, neg, h, hd, pos_s, neg_s, loss
        if (step + 1) % _smoke(163, 2) == 0:
            gnn.eval()
            with torch.no_grad():
                n, ns, ids, edges, degs = subgraph()
                q, c = _smoke(1024, 8), _smoke(1000, 10)
                h = encode(ids, edges, degs)
                rel = torch.randint(0, n_rel, (q,), device="cuda")
                hd = h[torch.randint(0, n, (q,), device="cuda")] * diag[rel]
                pos_s = (hd * h[torch.randint(0, n, (q,), device="cuda")]).sum(-1)
                cand_s = hd @ h[torch.randint(0, n, (c,), device="cuda")].t()
                rank = 1 + (cand_s > pos_s[:, None]).sum(-1)
                mrr = (1.0 / rank.float()).mean()
            mrr.item()
            del ids, edges, degs, h, rel, hd, pos_s, cand_s, rank, mrr

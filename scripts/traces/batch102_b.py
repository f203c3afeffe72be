"""The hundred-and-second batch of held-out workloads for record.py, second half (the first is batch102.py): software
engineering and developer tools, written in torch alone. Program-repair training (an encoder-decoder transformer
from buggy functions of drawn lengths to fixing patches of drawn lengths, a greedy-decoding evaluation), a
trace-anomaly service (a dilated temporal convolutional autoencoder over per-service windows of distributed-trace
latency and error metrics of drawn lengths, reconstruction-error scores against per-service running statistics),
test-prioritisation training (a set transformer over each commit's candidate tests, attending to the commit's changed
files, a listwise ranking loss) and code-infill diffusion sampling (a Diffusion-LM-style transformer denoiser over
continuous token embeddings, DDIM steps with the context tokens clamped, rounding to the nearest token). Same
conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned host
buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths,
sizes and batch sizes are fixed on the host, padding handled by masks multiplied in or by torch.where / masked_fill,
no boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
trace_anomaly_serve uploads its metric windows on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new102.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and for
which of them the CPU smoke run (RECORD_SMOKE=1) ran.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import CrossDecoderBlock, PreNormBlock, SideUploads, _mha, _sincos, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _loguniform(rng, lo, hi, mult=1):
    return _b.rec._loguniform(rng, lo, hi, mult)


# ---------------------------------------------------------------- program repair (encoder-decoder transformer)


class _RepairModel(_nn.Module):
    def __init__(self, vocab, d, heads, enc_layers, dec_layers, max_src, max_tgt):
        super().__init__()
        self.tok = _nn.Embedding(vocab, d)
        self.src_pos, self.tgt_pos = _nn.Embedding(max_src, d), _nn.Embedding(max_tgt, d)
        self.enc = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(enc_layers))
        self.enc_norm = _nn.LayerNorm(d)
        self.dec = _nn.ModuleList(CrossDecoderBlock(d, heads) for _ in range(dec_layers))
        self.dec_norm = _nn.LayerNorm(d)

    def encode(self, src, keep):
        x = self.tok(src) + self.src_pos(torch.arange(src.shape[1], device=src.device))[None]
        for blk in self.enc:
            x = blk(x, mask=keep[:, None, None, :])
        return self.enc_norm(x)

    def decode(self, tgt, mem, keep):
        y = self.tok(tgt) + self.tgt_pos(torch.arange(tgt.shape[1], device=tgt.device))[None]
        for blk in self.dec:
            y = blk(y, mem, keep[:, None, None, :])
        return self.dec_norm(y) @ self.tok.weight.T  # tied output projection


@_workload("program-repair training (random init, an encoder-decoder transformer from buggy functions to patches): 6-32 bug-fix pairs a step (drawn, then the last dropped until at most 8,192 padded source tokens a step), each buggy function of 64-512 tokens and its patch of 17-192 tokens (both lengths drawn per pair, every token drawn over a 32,000-token shared vocabulary, no start token in training: the patch's first 16-191 tokens fed to the decoder and its last 16-191 predicted; padded to the step's longest rounded up to a multiple of 32, position tables of 512 and 192 rows); a 6-block pre-norm encoder (width 512, 8 heads) under a key mask and a 6-block decoder with causal self-attention and cross-attention under the source key mask, tied output embeddings; label-smoothed (0.1) cross-entropy on the patch tokens (padding masked out); AdamW with a 100-step linear warm-up, clipping, bf16 autocast, 150 steps; the loss read back every 20 steps and every 50 steps a no-grad greedy decoding of 16 patches of 32 tokens from a start token and functions of 256 tokens (the encoder run once, the decoder re-run over the growing prefix) with the exact-match rate against drawn references read back")
def program_repair_seq2seq_train(rng):
    vocab, d, heads = _smoke(32000, 300), _smoke(512, 32), _smoke(8, 2)
    enc_l, dec_l, max_src, max_tgt = _smoke(6, 1), _smoke(6, 1), _smoke(512, 64), _smoke(192, 32)
    budget = _smoke(8192, 512)
    model = _RepairModel(vocab, d, heads, enc_l, dec_l, max_src, max_tgt).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 100))

    def padded(lengths):
        t = -(-max(lengths) // 32) * 32
        keep = keep_mask(lengths, t)
        return torch.randint(3, vocab, (len(lengths), t), device="cuda").masked_fill(~keep, 0), keep

    steps = _smoke(150, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(6, 2), _smoke(32, 4))
        src_len = [rng.randint(_smoke(64, 8), max_src) for _ in range(b)]
        while len(src_len) > 1 and len(src_len) * (-(-max(src_len) // 32) * 32) > budget:
            src_len.pop()
        tgt_len = [rng.randint(_smoke(16, 4), max_tgt - 1) + 1 for _ in src_len]
        src, s_keep = padded(src_len)
        tgt, t_keep = padded(tgt_len)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model.decode(tgt[:, :-1], model.encode(src, s_keep), s_keep)
        ce = _F.cross_entropy(logits.float().transpose(1, 2), tgt[:, 1:], reduction="none", label_smoothing=0.1)
        w = t_keep[:, 1:].float()
        loss = (ce * w).sum() / w.sum().clamp(min=1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            loss.detach().item()
        del src, s_keep, tgt, t_keep, logits, ce, w, loss
        if (step + 1) % _smoke(50, 2) == 0:
            model.eval()
            with torch.no_grad():
                nb, n_new = _smoke(16, 2), _smoke(32, 4)
                src, s_keep = padded([_smoke(256, 32)] * nb)
                ref = torch.randint(3, vocab, (nb, n_new), device="cuda")
                out = torch.ones(nb, 1, dtype=torch.long, device="cuda")  # the start token
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    mem = model.encode(src, s_keep)
                    for _ in range(n_new):
                        nxt = model.decode(out, mem, s_keep)[:, -1].argmax(-1)
                        out = torch.cat([out, nxt[:, None]], 1)
                exact = (out[:, 1:] == ref).all(1).float().mean()
            exact.item()
            del src, s_keep, ref, out, mem, nxt, exact


# ---------------------------------------------------------------- trace anomaly service (temporal conv autoencoder)


class _TCNAutoencoder(_nn.Module):
    """Dilated residual temporal convolutions down to a bottleneck (two stride-2 stages), transposed convolutions
    back up, a reconstruction of every metric at every timestamp."""

    def __init__(self, c_in, width, dilations):
        super().__init__()
        self.inp = _nn.Conv1d(c_in, width, 1)
        self.enc = _nn.ModuleList(_nn.Conv1d(width, width, 3, 1, dl, dilation=dl) for dl in dilations)
        self.norms = _nn.ModuleList(_nn.GroupNorm(8, width) for _ in dilations)
        self.down = _nn.Sequential(_nn.Conv1d(width, 2 * width, 4, 2, 1), _nn.GELU(),
                                   _nn.Conv1d(2 * width, 2 * width, 4, 2, 1), _nn.GELU())
        self.up = _nn.Sequential(_nn.ConvTranspose1d(2 * width, 2 * width, 4, 2, 1), _nn.GELU(),
                                 _nn.ConvTranspose1d(2 * width, width, 4, 2, 1), _nn.GELU())
        self.out = _nn.Conv1d(width, c_in, 1)

    def forward(self, x):
        h = self.inp(x)
        for conv, norm in zip(self.enc, self.norms):
            h = h + conv(_F.gelu(norm(h)))
        return self.out(self.up(self.down(h)))


@_workload("distributed-trace anomaly serving (random init, a dilated temporal convolutional autoencoder): 4,000-4,100 requests (drawn) of 1-16 service windows each (drawn, each window's service of 200 drawn), all windows of a request of 64-512 timestamps (drawn per request, a multiple of 16) with 24 metrics (latency percentiles, span and error counts, queue depths) as fp16, uploaded on a side stream from two reused pinned host buffers (filled once, sized for 16 windows of 512 x 24) one request ahead through SideUploads.ahead (one span, waited on by event, record_stream'ed); standardised per window and metric over the timestamps on the device; an input 1x1 convolution to width 128, 6 dilated residual convolutions (dilations 1-32, group norm), two stride-2 convolutions down and two transposed convolutions back up, a 1x1 reconstruction under bf16 autocast; per-timestamp reconstruction errors, a per-window score (the mean of the top 5% of timestamps by topk), z-scored against each service's running mean and variance (exponential averages kept on the device, gathered and written back by index_copy_), anomalous windows flagged by torch.where; each request's scores, z-scores, flags and worst metric per window read back")
def trace_anomaly_serve(rng):
    c_in, width = 24, _smoke(128, 16)
    dil = _smoke([1, 2, 4, 8, 16, 32], [1, 2])
    model = _TCNAutoencoder(c_in, width, dil).cuda().eval()
    model.requires_grad_(False)
    n_svc, max_w, max_t, min_t = _smoke(200, 8), _smoke(16, 3), _smoke(512, 64), _smoke(64, 16)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [(torch.randn(max_w * max_t * c_in, generator=gen) * 2 + 5).half().pin_memory() for _ in range(2)]
    up = SideUploads(host)
    mean = torch.zeros(n_svc, device="cuda")
    var = torch.ones(n_svc, device="cuda")
    nreq = rng.randint(_smoke(4000, 3), _smoke(4100, 4))
    plan = []
    for _ in range(nreq):
        nw = rng.randint(1, max_w)
        plan.append(([rng.randrange(n_svc) for _ in range(nw)], rng.randint(min_t // 16, max_t // 16) * 16))

    for (svcs, t), raw in up.ahead(plan, lambda p: (len(p[0]) * p[1] * c_in,)):
        nw = len(svcs)
        with torch.no_grad():
            x = raw.view(nw, t, c_in).float().transpose(1, 2)
            mu, sd = x.mean(2, keepdim=True), x.std(2, keepdim=True).clamp(min=1e-3)
            xs = (x - mu) / sd
            with torch.autocast("cuda", dtype=torch.bfloat16):
                rec = model(xs).float()
            err = (rec - xs).pow(2)  # (nw, c_in, t)
            per_t = err.mean(1)
            score = per_t.topk(max(1, t // 20), dim=1).values.mean(1)
            worst = err.mean(2).argmax(1)
            idx = torch.tensor(svcs, device="cuda")
            m, v = mean.index_select(0, idx), var.index_select(0, idx)
            z = (score - m) / v.sqrt()
            flag = torch.where(z > 3.0, 1.0, 0.0)
            m_new = 0.95 * m + 0.05 * score
            mean.index_copy_(0, idx, m_new)
            var.index_copy_(0, idx, 0.95 * v + 0.05 * (score - m_new).pow(2))
            out = torch.stack([score, z, flag, worst.float()], -1)
        out.tolist()
        del raw, x, mu, sd, xs, rec, err, per_t, score, worst, idx, m, v, z, flag, m_new, out


# ---------------------------------------------------------------- test prioritisation (listwise set transformer)


class _TestRanker(_nn.Module):
    """Each candidate test: its id embedding plus projected history features; it attends to the commit's changed
    files (path-token bags plus change statistics) under the files' key mask, then set-transformer blocks over the
    commit's tests under the tests' key mask; a scalar score per test."""

    def __init__(self, n_tests, vocab, d, heads, layers, n_hist, n_chg):
        super().__init__()
        self.test, self.path = _nn.Embedding(n_tests, d), _nn.Embedding(vocab, d)
        self.hist, self.chg = mlp(n_hist, d, d), mlp(n_chg, d, d)
        self.q, self.kv, self.o = _nn.Linear(d, d), _nn.Linear(d, 2 * d), _nn.Linear(d, d)
        self.nq = _nn.LayerNorm(d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.head = mlp(d, d, 1, act=_nn.GELU)
        self.h = heads

    def forward(self, tests, hist, t_keep, paths, chg, f_keep):
        x = self.test(tests) + self.hist(hist)
        f = self.path(paths).mean(2) + self.chg(chg)  # (B, F, d)
        k, v = self.kv(f).chunk(2, -1)
        x = x + self.o(_mha(self.q(self.nq(x)), k, v, self.h, attn_mask=f_keep[:, None, None, :]))
        for blk in self.blocks:
            x = blk(x, mask=t_keep[:, None, None, :])
        return self.head(x)[..., 0].float()


@_workload("test-prioritisation training (random init, a listwise set-transformer ranker over CI test candidates): 4-32 commits a step (drawn), each with 20-600 candidate tests (drawn per commit, padded to the step's longest rounded up to a multiple of 16) and 1-48 changed files (drawn per commit, padded likewise to a multiple of 8); each test's id embedding (of 60,000) plus a 2-layer MLP of 14 history features (failure rates, durations, recency), each changed file the mean of 10 path-token embeddings (a 12,000-token vocabulary) plus a 2-layer MLP of 6 change statistics; one cross-attention from tests to changed files under the files' key mask and 3 pre-norm set-transformer blocks (width 256, 8 heads) over the tests under their key mask, a 2-layer score head; a ListNet loss (softmax cross-entropy of masked scores against the normalised drawn failure labels, failures at a 4% rate plus one per commit at a drawn position within the step's shortest commit) and a pairwise hinge (margin 1, weighted 0.5) of each failure against the top-scored pass; AdamW, clipping, bf16 autocast, 570 steps; the loss read back every 20 steps and every 114 steps a no-grad evaluation of 16 commits of 600 tests and one drawn count of 1-48 changed files with an APFD-style rank metric (the failures' normalised ranks by argsort of masked scores) read back")
def test_prioritization_rank_train(rng):
    n_tests, vocab, d, heads, layers = _smoke(60000, 500), _smoke(12000, 200), _smoke(256, 16), _smoke(8, 2), \
        _smoke(3, 1)
    n_hist, n_chg, n_path = 14, 6, 10
    model = _TestRanker(n_tests, vocab, d, heads, layers, n_hist, n_chg).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    max_t, max_f = _smoke(600, 48), _smoke(48, 8)

    def commits(t_len, f_len):
        b = len(t_len)
        tt, ft = -(-max(t_len) // 16) * 16, -(-max(f_len) // 8) * 8
        t_keep, f_keep = keep_mask(t_len, tt), keep_mask(f_len, ft)
        tests = torch.randint(0, n_tests, (b, tt), device="cuda")
        hist = torch.rand(b, tt, n_hist, device="cuda")
        paths = torch.randint(0, vocab, (b, ft, n_path), device="cuda")
        chg = torch.randn(b, ft, n_chg, device="cuda")
        fail = (torch.rand(b, tt, device="cuda") < 0.04).float()
        first = torch.nn.functional.one_hot(torch.randint(0, min(t_len), (b,), device="cuda"), tt).float()
        fail = torch.maximum(fail, first) * t_keep.float()
        return tests, hist, t_keep, paths, chg, f_keep, fail

    steps = _smoke(570, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(4, 2), _smoke(32, 4))
        t_len = [rng.randint(_smoke(20, 4), max_t) for _ in range(b)]
        f_len = [rng.randint(1, max_f) for _ in range(b)]
        tests, hist, t_keep, paths, chg, f_keep, fail = commits(t_len, f_len)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            s = model(tests, hist, t_keep, paths, chg, f_keep)
        s = s.masked_fill(~t_keep, -1e4)
        target = fail / fail.sum(1, keepdim=True).clamp(min=1)
        listnet = -(target * _F.log_softmax(s, -1)).sum(1).mean()
        top_pass = s.masked_fill(fail > 0, -1e4).amax(1, keepdim=True)
        hinge = ((_F.relu(1.0 - s + top_pass) * fail).sum(1) / fail.sum(1).clamp(min=1)).mean()
        loss = listnet + 0.5 * hinge
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.detach().item()
        del tests, hist, t_keep, paths, chg, f_keep, fail, s, target, listnet, top_pass, hinge, loss
        if (step + 1) % _smoke(114, 2) == 0:
            model.eval()
            with torch.no_grad():
                nb = _smoke(16, 2)
                tests, hist, t_keep, paths, chg, f_keep, fail = commits([max_t] * nb, [rng.randint(1, max_f)] * nb)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    s = model(tests, hist, t_keep, paths, chg, f_keep).masked_fill(~t_keep, -1e4)
                rank = s.argsort(1, descending=True).argsort(1).float()  # each test's 0-based position
                n = t_keep.float().sum(1)
                apfd = 1 - (rank * fail).sum(1) / (fail.sum(1).clamp(min=1) * n) + 1 / (2 * n)
            apfd.mean().item()
            del tests, hist, t_keep, paths, chg, f_keep, fail, s, rank, n, apfd


# ---------------------------------------------------------------- code infill by diffusion (Diffusion-LM sampling)


class _Denoiser(_nn.Module):
    """Continuous token embeddings (width e) projected up to width d with positions and a timestep embedding, pre-norm
    blocks, projected back to a predicted clean embedding."""

    def __init__(self, e, d, heads, layers, max_pos):
        super().__init__()
        self.inp, self.out = _nn.Linear(e, d), _nn.Linear(d, e)
        self.pos = _nn.Embedding(max_pos, d)
        self.temb = mlp(d, 4 * d, d, act=_nn.SiLU)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.d = d

    def forward(self, x, t):
        n = x.shape[1]
        h = self.inp(x) + self.pos(torch.arange(n, device=x.device))[None] + self.temb(_sincos(t, self.d))[:, None]
        for blk in self.blocks:
            h = blk(h)
        return self.out(self.norm(h))


@_workload("code-infill diffusion sampling (random init, a Diffusion-LM-style transformer denoiser over continuous token embeddings): 66-70 requests (drawn) of 1-16 code sequences each (drawn), all of a request of 64-256 tokens (drawn per request, a multiple of 32, position table of 256 rows) of random context tokens over a 16,000-token vocabulary with a fixed random table of 64-wide token embeddings; each sequence's infill span (start and length drawn per sequence) generated from Gaussian noise while the context tokens are clamped to their noised embeddings at every step by torch.where; an 8-block pre-norm transformer denoiser (width 512, 8 heads) with a sinusoidal-MLP timestep embedding predicting the clean embeddings, 8-24 DDIM steps (drawn per request, a 1,000-step cosine schedule, the timesteps on the host) under bf16 autocast; the final embeddings rounded to the nearest token by a matmul with the embedding table and argmax, with the mean max-softmax confidence over the span; each request's tokens and confidences read back")
def code_infill_diffusion_sample(rng):
    vocab, e, d, heads, layers = _smoke(16000, 200), _smoke(64, 8), _smoke(512, 32), _smoke(8, 2), _smoke(8, 1)
    max_len, min_len, max_b = _smoke(256, 64), _smoke(64, 32), _smoke(16, 2)
    model = _Denoiser(e, d, heads, layers, max_len).cuda().eval()
    model.requires_grad_(False)
    emb = torch.randn(vocab, e, device="cuda") / math.sqrt(e)
    n_t = 1000
    abar = [math.cos((s / n_t + 0.008) / 1.008 * math.pi / 2) ** 2 for s in range(n_t + 1)]
    abar = [a / abar[0] for a in abar]
    nreq = rng.randint(_smoke(66, 2), _smoke(70, 3))
    for _ in range(nreq):
        b = rng.randint(1, max_b)
        n = rng.randint(min_len // 32, max_len // 32) * 32
        k = rng.randint(_smoke(8, 2), _smoke(24, 3))
        spans = []
        for _ in range(b):
            s = rng.randint(0, n - 8)
            spans.append((s, rng.randint(s + 4, n)))
        ts = [int(n_t * (1 - i / k)) for i in range(k)] + [0]
        with torch.no_grad():
            ids = torch.randint(0, vocab, (b, n), device="cuda")
            pos = torch.arange(n, device="cuda")[None]
            lo = torch.tensor([a for a, _ in spans], device="cuda")[:, None]
            hi = torch.tensor([c for _, c in spans], device="cuda")[:, None]
            gen_mask = ((pos >= lo) & (pos < hi))[..., None]
            x0_ctx = emb[ids]
            x = torch.randn(b, n, e, device="cuda")
            for t_now, t_next in zip(ts[:-1], ts[1:]):
                a_now, a_next = abar[t_now], abar[t_next]
                ctx_noised = math.sqrt(a_now) * x0_ctx + math.sqrt(1 - a_now) * torch.randn_like(x0_ctx)
                x = torch.where(gen_mask, x, ctx_noised)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    x0 = model(x, torch.full((b,), t_now, device="cuda")).float()
                eps = (x - math.sqrt(a_now) * x0) / math.sqrt(1 - a_now)
                x = math.sqrt(a_next) * x0 + math.sqrt(1 - a_next) * eps
            x = torch.where(gen_mask, x, x0_ctx)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = (x @ emb.T).float()
            tok = logits.argmax(-1)
            conf = (logits.softmax(-1).amax(-1) * gen_mask[..., 0]).sum(1) / gen_mask[..., 0].sum(1)
            out = torch.cat([tok.float(), conf[:, None]], 1)
        out.tolist()
        del ids, pos, lo, hi, gen_mask, x0_ctx, x, ctx_noised, x0, eps, logits, tok, conf, out

"""The sixty-seventh batch of held-out workloads for record.py, second half (batch67.py has the first): multilingual
and low-resource language technology, written in torch alone. Transliteration between scripts with a transducer (a
character transformer encoder over the source script, a stateless prediction network over the last two target
characters, a joint network over the whole (source position, target position) lattice and the RNN-T loss written
by hand, its forward variables computed one source position at a time with logcumsumexp; greedy transducer decoding
of a dev batch with a fixed number of symbols a frame), multilingual sentence-embedding distillation (a frozen
teacher encoder of English sentences, a smaller student trained to map both the sentence and its translation onto
the teacher's embedding, with an in-batch contrastive term; bitext retrieval with margin scoring evaluated now and
then), a code-switched language-identification and named-entity service (a character-CNN plus word-embedding
transformer tagger with a CRF over NER tags, trained briefly by the CRF's forward algorithm, then requests of drawn
size decoded by Viterbi, each request's word and character ids uploaded from two reused pinned host buffers on a
side stream one request ahead), and unsupervised bilingual lexicon induction (MUSE-style adversarial training of a
linear map between two languages' word embeddings with a discriminator and orthogonalisation, CSLS model selection,
then Procrustes refinement on mutual-nearest-neighbour dictionaries solved by SVD). Same conventions as the earlier
batches: nothing downloaded, data drawn at random on the device (or, for the tagging service, from a few reused
pinned host buffers), `rng` the workload's random.Random for every shape, count and sampled choice, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: the loss's
recursion, decoding and Viterbi run fixed counts set on the host, masks are multiplied or selected with
torch.where, no boolean-mask indexing (the mutual-nearest-neighbour dictionary is a weight, not a selection);
losses, accuracies and decoded outputs are read back only at logging points. codeswitch_lid_ner_serve uses a side
stream (uploads waited on by event, the tensors record_stream'ed); the others are single-stream. The transformers
run under bf16 autocast; the transducer loss, the CRF and the lexicon induction's mapping and solves are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after batch67.py's. This file never
imports record.py; the plumbing is batch_common.py's.

Real sizes checked before recording: see record_new67.sh's header for each workload's op outputs and peak live
bytes counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with
scripts/traces/meta_run.py, and the CPU smoke run (RECORD_SMOKE=1) of all four.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads

_b = Batch()
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register

_F = torch.nn.functional
_nn = torch.nn


def _lengths_mask(lens, s):
    """(B,) lengths on the device -> (B, s) boolean, True inside each row."""
    return torch.arange(s, device=lens.device)[None] < lens[:, None]


def _rand_rows(lo, hi, lengths, pad=0):
    """Right-padded random ids in [lo, hi) for rows of the given (host) lengths, and the (B,) lengths tensor."""
    s = max(lengths)
    lens = torch.tensor(lengths, device="cuda")
    ids = torch.randint(lo, hi, (len(lengths), s), device="cuda")
    return torch.where(_lengths_mask(lens, s), ids, pad), lens


# ---------------------------------------------------------------- transliteration with a stateless transducer


class _Transliterator(_nn.Module):
    """A character transformer encoder over the source script, a stateless prediction network (an embedding of
    the previous two target characters mixed by a width-2 causal Conv1d), and an additive joint network."""

    def __init__(self, vsrc, vtgt, d, layers, joint, maxlen):
        super().__init__()
        self.d = d
        self.emb, self.pos = _nn.Embedding(vsrc, d), _nn.Embedding(maxlen, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, 4, 4 * d) for _ in range(layers))
        self.norm, self.enc_proj = _nn.LayerNorm(d), _nn.Linear(d, joint)
        self.pemb = _nn.Embedding(vtgt, d)
        self.pconv = _nn.Conv1d(d, d, 2, groups=d // 4)
        self.pred_proj = _nn.Linear(d, joint)
        self.out = _nn.Linear(joint, vtgt)

    def encode(self, src, slen):
        x = self.emb(src) * math.sqrt(self.d) + self.pos(torch.arange(src.shape[1], device=src.device))
        m = _lengths_mask(slen, src.shape[1])[:, None, None]
        for blk in self.blocks:
            x = blk(x, m)
        return self.enc_proj(self.norm(x))

    def predict(self, ctx):
        """ctx (B, U + 1) target characters with blank (0) before the first: the prediction for each position from
        it and the one before."""
        e = self.pemb(_F.pad(ctx, (1, 0))).transpose(1, 2)
        return self.pred_proj(_F.relu(self.pconv(e)).transpose(1, 2))

    def joint(self, enc, pred):
        return self.out(torch.tanh(enc + pred))


def _rnnt_loss(logp, targets, tlen, ulen):
    """The RNN-T loss of log-probs (B, T, U + 1, V) (blank 0) for targets (B, U), by its forward variables: for
    each source position t, alpha_t[u] = c_t[u] + logcumsumexp_u(alpha_{t-1}[u] + blank_{t-1}[u] - c_t[u]) with
    c_t the cumulative emission log-probs along u. Per-row lengths by gathering the final variable."""
    b, t, u1, _ = logp.shape
    blank = logp[..., 0]
    emit = logp[:, :, : u1 - 1].gather(-1, targets[:, None, :, None].expand(b, t, u1 - 1, 1)).squeeze(-1)
    c = _F.pad(emit.cumsum(-1), (1, 0))
    a = c[:, 0]
    rows = [a]
    for i in range(1, t):
        a = c[:, i] + torch.logcumsumexp(a + blank[:, i - 1] - c[:, i], -1)
        rows.append(a)
    final = (torch.stack(rows, 1) + blank).flatten(1)
    ll = final.gather(1, ((tlen - 1) * u1 + ulen)[:, None])[:, 0]
    return -(ll / ulen.float()).mean()


def _transducer_greedy(model, enc, slen, max_sym, vocab):
    """Greedy transducer decoding: at each source position up to max_sym symbols (a fixed count), a symbol
    emitted only where the argmax is not blank and the position is inside the row; the prediction network's
    context (the last two characters) updated by torch.where. Returns (B, T * max_sym) ids, -1 where none."""
    b, t, _ = enc.shape
    ctx = torch.zeros(b, 2, dtype=torch.long, device=enc.device)
    out = []
    for i in range(t):
        inside = i < slen
        for _ in range(max_sym):
            pred = model.pred_proj(_F.relu(model.pconv(model.pemb(ctx).transpose(1, 2))).transpose(1, 2))[:, -1]
            k = model.joint(enc[:, i], pred).float().argmax(-1)
            emit = (k != 0) & inside
            ctx = torch.where(emit[:, None], torch.stack([ctx[:, 1], k], 1), ctx)
            out.append(torch.where(emit, k, -1))
    return torch.stack(out, 1)


@_workload("transliteration between scripts with a stateless transducer (random init, e.g. romanised to native script): a character transformer encoder (6 layers of width 256, 4 heads) over 3-30 source characters (drawn per word), a stateless prediction network over the previous two target characters (a width-2 grouped Conv1d), an additive joint network of width 320 over the whole (source position x target position) lattice to 96 target characters plus blank, the RNN-T loss written by hand (forward variables one source position at a time by logcumsumexp over target positions, in fp32), 256 words a batch, AdamW with warmup, bf16 autocast for the encoder and joint, gradient clipping; the loss read back every 10 steps, every 50 steps 2 dev batches of 512 words greedily decoded (2 symbols at most a source position, fixed) and read back")
def translit_transducer_train(rng):
    vsrc, vtgt = 64, 97
    d, joint = _smoke(256, 32), _smoke(320, 32)
    model = _Transliterator(vsrc, vtgt, d, _smoke(6, 2), joint, 40).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    warm = 30
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warm))
    bsz, dev_b = _smoke(256, 4), _smoke(512, 4)
    maxsrc = _smoke(30, 8)

    def words(n):
        slens = [rng.randint(3, maxsrc) for _ in range(n)]
        ulens = [max(1, s + rng.randint(-3, 4)) for s in slens]
        src, slen = _rand_rows(1, vsrc, slens)
        tgt, ulen = _rand_rows(1, vtgt, ulens)
        return src, slen, tgt, ulen

    steps = _smoke(190, 3)
    for step in range(steps):
        model.train()
        src, slen, tgt, ulen = words(bsz)
        ctx = _F.pad(tgt, (1, 0))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            enc = model.encode(src, slen)
            pred = model.predict(ctx)
            logits = model.joint(enc[:, :, None], pred[:, None])
        logp = logits.float().log_softmax(-1)
        loss = _rnnt_loss(logp, tgt, slen, ulen)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        sched.step()
        if step % 10 == 0:
            float(loss)
        del src, slen, tgt, ulen, ctx, enc, pred, logits, logp, loss
        if (step + 1) % _smoke(50, 2) == 0:
            model.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for _ in range(2):
                    src, slen, tgt, ulen = words(dev_b)
                    hyp = _transducer_greedy(model, model.encode(src, slen), slen, 2, vtgt)
                    hyp.tolist()
                    del src, slen, tgt, ulen, hyp


# ---------------------------------------------------------------- multilingual sentence-embedding distillation


class _SentEncoder(_nn.Module):
    def __init__(self, vocab, d, heads, layers, out_dim=None, maxlen=128):
        super().__init__()
        self.d = d
        self.emb, self.pos = _nn.Embedding(vocab, d), _nn.Embedding(maxlen, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.proj = _nn.Linear(d, out_dim) if out_dim else None

    def forward(self, ids, lens):
        m = _lengths_mask(lens, ids.shape[1])
        x = self.emb(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
        for blk in self.blocks:
            x = blk(x, m[:, None, None])
        x = self.norm(x)
        mf = m[..., None].to(x.dtype)
        pooled = (x * mf).sum(1) / mf.sum(1)
        return self.proj(pooled) if self.proj is not None else pooled


@_workload("multilingual sentence-embedding distillation for retrieval (random init): a frozen teacher encoder (12 layers of width 768, 12 heads, a 120,000-piece vocabulary) embedding English sentences, a student (6 layers of width 384, projected to 768) trained so that both the English sentence and its translation map onto the teacher's mean-pooled embedding (two MSE terms) plus an in-batch contrastive term between the translation and the teacher, 128 pairs a batch of 8-64 pieces each (drawn per sentence), AdamW with warmup, bf16 autocast; the loss read back every 10 steps, every 40 steps a bitext-retrieval evaluation (2,048 pairs encoded in chunks of 256, cosine similarities, ratio-margin scores over 4 nearest neighbours each way, top-1 accuracy read back)")
def xling_sentence_embed_distill_train(rng):
    vocab = _smoke(120000, 500)
    dt, ds = _smoke(768, 64), _smoke(384, 32)
    teacher = _SentEncoder(vocab, dt, dt // 64, _smoke(12, 2)).cuda().eval().requires_grad_(False)
    student = _SentEncoder(vocab, ds, ds // 64 if ds >= 64 else 2, _smoke(6, 2), out_dim=dt).cuda()
    opt = torch.optim.AdamW(student.parameters(), lr=2e-4, weight_decay=0.01)
    warm = 20
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warm))
    bsz, lo, hi = _smoke(128, 4), 8, _smoke(64, 12)

    def pairs(n):
        en = [_loguniform(rng, lo, hi) for _ in range(n)]
        xx = [max(lo, min(hi, int(e * rng.uniform(0.8, 1.4)))) for e in en]
        src, slen = _rand_rows(5, vocab, en)
        tgt, tlen = _rand_rows(5, vocab, xx)
        return src, slen, tgt, tlen

    steps = _smoke(200, 3)
    for step in range(steps):
        student.train()
        src, slen, tgt, tlen = pairs(bsz)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            with torch.no_grad():
                t_emb = teacher(src, slen).float()
            s_src = student(src, slen).float()
            s_tgt = student(tgt, tlen).float()
        logits = _F.normalize(s_tgt, dim=-1) @ _F.normalize(t_emb, dim=-1).t() / 0.05
        loss = _F.mse_loss(s_src, t_emb) + _F.mse_loss(s_tgt, t_emb) + \
            0.1 * _F.cross_entropy(logits, torch.arange(bsz, device="cuda"))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(student.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 10 == 0:
            float(loss)
        del src, slen, tgt, tlen, t_emb, s_src, s_tgt, logits, loss
        if (step + 1) % _smoke(40, 2) == 0:
            student.eval()
            npair, chunk, k = _smoke(2048, 8), _smoke(256, 4), _smoke(4, 2)
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                xs, ys = [], []
                for _ in range(0, npair, chunk):
                    src, slen, tgt, tlen = pairs(chunk)
                    xs.append(_F.normalize(student(src, slen).float(), dim=-1))
                    ys.append(_F.normalize(student(tgt, tlen).float(), dim=-1))
                    del src, slen, tgt, tlen
                x, y = torch.cat(xs), torch.cat(ys)
                sim = x @ y.t()
                knn_x = sim.topk(k, 1).values.mean(1)
                knn_y = sim.topk(k, 0).values.mean(0)
                margin = 2 * sim / (knn_x[:, None] + knn_y[None])
                acc = (margin.argmax(1) == torch.arange(npair, device="cuda")).float().mean()
                acc.item()
            del xs, ys, x, y, sim, knn_x, knn_y, margin, acc


# ---------------------------------------------------------------- code-switched LID and NER service


class _CsTagger(_nn.Module):
    """Words as a hashed word embedding and a character CNN (max-pooled), a transformer over the sentence, a
    token language-ID head and an NER emission head with CRF transitions."""

    def __init__(self, nword, nchar, d, layers, nlid, ntag):
        super().__init__()
        self.wemb, self.cemb = _nn.Embedding(nword, d - 128), _nn.Embedding(nchar, 48)
        self.cconv = _nn.Conv1d(48, 128, 3, padding=1)
        self.pos = _nn.Embedding(128, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, 4) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.lid, self.ner = _nn.Linear(d, nlid), _nn.Linear(d, ntag)
        self.trans = _nn.Parameter(0.01 * torch.randn(ntag, ntag))
        self.start, self.end = _nn.Parameter(torch.zeros(ntag)), _nn.Parameter(torch.zeros(ntag))

    def forward(self, words, chars, m):
        b, l, c = chars.shape
        ce = self.cemb(chars).view(b * l, c, -1).transpose(1, 2)
        ce = _F.relu(self.cconv(ce)).amax(-1).view(b, l, -1)
        x = torch.cat([self.wemb(words), ce], -1) + self.pos(torch.arange(l, device=words.device))
        for blk in self.blocks:
            x = blk(x, m[:, None, None])
        x = self.norm(x)
        return self.lid(x), self.ner(x)


def _crf_nll(em, tags, mf, trans, start, end, lens):
    """The linear-chain CRF's negative log-likelihood: the forward algorithm over positions (fixed count, padded
    positions keep the previous variables by torch.where) minus the gold path's score."""
    b, l, k = em.shape
    gold = em.gather(-1, tags[..., None])[..., 0] * mf
    tr = trans[tags[:, :-1], tags[:, 1:]] * mf[:, 1:]
    last = tags.gather(1, (lens - 1)[:, None])[:, 0]
    score = gold.sum(1) + tr.sum(1) + start[tags[:, 0]] + end[last]
    alpha = start + em[:, 0]
    for i in range(1, l):
        nxt = torch.logsumexp(alpha[:, :, None] + trans[None] + em[:, i, None, :], 1)
        alpha = torch.where(mf[:, i, None] > 0, nxt, alpha)
    return (torch.logsumexp(alpha + end, 1) - score).mean()


def _viterbi(em, mf, trans, start, end):
    """Viterbi decoding of (B, L, K) emissions: max-product over positions, backpointers of padded positions
    made the identity, the best path recovered by gathers from the end."""
    b, l, k = em.shape
    ident = torch.arange(k, device=em.device)[None].expand(b, k)
    score = start + em[:, 0]
    bps = []
    for i in range(1, l):
        best, bp = (score[:, :, None] + trans[None]).max(1)
        inside = mf[:, i, None] > 0
        score = torch.where(inside, best + em[:, i], score)
        bps.append(torch.where(inside, bp, ident))
    tag = (score + end).argmax(-1)
    path = [tag]
    for bp in reversed(bps):
        tag = bp.gather(1, tag[:, None])[:, 0]
        path.append(tag)
    return torch.stack(path[::-1], 1)


@_workload("code-switched language identification and NER service (random init): a tagger of hashed word embeddings (60,000 buckets) and a character CNN (16 characters a word, max-pooled), 4 transformer layers of width 320, a token language-ID head (lang1, lang2, mixed, other) and NER emissions (9 BIO tags) with CRF transitions; trained first for 70 steps of 64 sentences of 5-60 words (CRF forward-algorithm NLL plus language-ID cross-entropy, AdamW, bf16 autocast for the encoder); then 340-390 requests (drawn) of 1-256 sentences of 3-60 words (log-uniform), each request's word ids and character ids (int32) uploaded from 2 reused pinned host buffers on a side stream one request ahead (waited on by event, record_stream'ed), the encoder under bf16 autocast, Viterbi decoding in fp32 (a fixed number of positions, backpointers gathered back), per-sentence code-mixing index from the language-ID argmax; each request's tags and summary read back")
def codeswitch_lid_ner_serve(rng):
    nword, nchar, nlid, ntag, cw = _smoke(60000, 500), 300, 4, 9, _smoke(16, 6)
    d = _smoke(320, 160)
    model = _CsTagger(nword, nchar, d, _smoke(4, 1), nlid, ntag).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    maxl = _smoke(60, 8)

    def sentences(lengths):
        words, lens = _rand_rows(1, nword, lengths)
        chars = torch.randint(1, nchar, (len(lengths), words.shape[1], cw), device="cuda")
        wl = torch.randint(2, cw + 1, (len(lengths), words.shape[1], 1), device="cuda")
        chars = torch.where(torch.arange(cw, device="cuda") < wl, chars, 0)
        return words, chars, lens

    for step in range(_smoke(70, 3)):
        model.train()
        lengths = [rng.randint(5, maxl) for _ in range(_smoke(64, 4))]
        words, chars, lens = sentences(lengths)
        m = _lengths_mask(lens, words.shape[1])
        mf = m.float()
        tags = torch.randint(0, ntag, words.shape, device="cuda")
        lid = torch.randint(0, nlid, words.shape, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            lid_logits, em = model(words, chars, m)
        nll = _crf_nll(em.float(), tags, mf, model.trans, model.start, model.end, lens)
        lid_loss = (_F.cross_entropy(lid_logits.float().transpose(1, 2), lid, reduction="none") * mf).sum() / mf.sum()
        loss = nll + lid_loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        if step % 10 == 0:
            float(loss)
        del words, chars, lens, m, mf, tags, lid, lid_logits, em, nll, lid_loss, loss
    model.eval().requires_grad_(False)

    max_n = _smoke(256, 4)
    wcap = max_n * maxl
    host = [torch.randint(1, nword, (wcap * (1 + cw),), dtype=torch.int32).pin_memory() for _ in range(2)]
    up = SideUploads(host)

    def draw():
        n = _loguniform(rng, 1, max_n)
        return n, [_loguniform(rng, 3, maxl) for _ in range(n)]

    def fetch(i, n, lmax):
        return up.upload(i, n * lmax, slice(wcap, wcap + n * lmax * cw))

    nreq = rng.randint(_smoke(340, 2), _smoke(390, 3))
    plan = [draw() for _ in range(nreq)]
    nxt = fetch(0, plan[0][0], max(plan[0][1]))
    with torch.no_grad():
        for i in range(nreq):
            n, lengths = plan[i]
            lmax = max(lengths)
            zw, zc, ev = nxt
            if i + 1 < nreq:
                nxt = fetch(i + 1, plan[i + 1][0], max(plan[i + 1][1]))
            cur = torch.cuda.current_stream()
            cur.wait_event(ev)
            zw.record_stream(cur)
            zc.record_stream(cur)
            lens = torch.tensor(lengths, device="cuda")
            m = _lengths_mask(lens, lmax)
            words = torch.where(m, zw.view(n, lmax).long(), 0)
            chars = zc.view(n, lmax, cw).long() % (nchar - 1) + 1
            with torch.autocast("cuda", dtype=torch.bfloat16):
                lid_logits, em = model(words, chars, m)
            mf = m.float()
            path = _viterbi(em.float(), mf, model.trans, model.start, model.end)
            lid = lid_logits.float().argmax(-1)
            counts = (_F.one_hot(lid, nlid).float() * mf[..., None]).sum(1)  # (n, nlid)
            cmi = 1 - counts[:, :2].amax(1) / lens.float()
            path.tolist()
            torch.stack([cmi, counts[:, 2] / lens.float()], 1).tolist()
            del zw, zc, lens, m, words, chars, lid_logits, em, mf, path, lid, counts, cmi


# ---------------------------------------------------------------- unsupervised bilingual lexicon induction


def _csls_chunks(q, keys, r_keys, r_q, chunk, k_best=1):
    """CSLS of each query row against the keys, in chunks of rows: 2 cos - r_keys - r_q; the best key per row."""
    best = []
    for j in range(0, q.shape[0], chunk):
        s = 2 * (q[j: j + chunk] @ keys.t()) - r_keys[None] - r_q[j: j + chunk, None]
        best.append(s.topk(k_best, 1).indices[:, 0] if k_best > 1 else s.argmax(1))
    return torch.cat(best)


def _knn_mean(q, keys, k, chunk):
    """The mean cosine of each query row's k nearest keys, in chunks of rows."""
    out = []
    for j in range(0, q.shape[0], chunk):
        out.append((q[j: j + chunk] @ keys.t()).topk(k, 1).values.mean(1))
    return torch.cat(out)


@_workload("unsupervised bilingual lexicon induction (MUSE-style, no learning from data beyond the embeddings): two languages' word embeddings (200,000 words x 300, the target a noisy rotation of the source, centred and length-normalised) drawn on the device, a linear map trained adversarially against a discriminator (2 hidden layers of 2,048, leaky ReLU, input dropout, smoothed labels) on the 75,000 most frequent words, 5 discriminator steps a map step, batches of 32, SGD, the map orthogonalised after each step; 3 epochs of 400-460 iterations (drawn), after each the unsupervised CSLS criterion (mean cosine of 10,000 source words' CSLS translations, nearest-neighbour radii over 50,000 words in chunks of 1,024) read back; then 5 Procrustes refinements (CSLS dictionaries both ways over 15,000 words, mutual nearest neighbours as weights, SVD of the weighted cross-covariance) and word-translation precision@1 on 1,500 drawn test pairs read back, all fp32")
def muse_adversarial_lexicon_opt(rng):
    nvocab, dim = _smoke(200000, 2000), _smoke(300, 16)
    nfreq, ncrit, nknn, nref, ntest = (_smoke(75000, 800), _smoke(10000, 100), _smoke(50000, 1000),
                                       _smoke(15000, 300), _smoke(1500, 50))
    chunk, knn, bs = _smoke(1024, 64), 10, 32

    def norm(e):
        e = _F.normalize(e, dim=1)
        e = e - e.mean(0, keepdim=True)
        return _F.normalize(e, dim=1)

    with torch.no_grad():
        x = torch.randn(nvocab, dim, device="cuda")
        q, _ = torch.linalg.qr(torch.randn(dim, dim, device="cuda"))
        y = x @ q + 0.3 * torch.randn(nvocab, dim, device="cuda")
        x, y = norm(x), norm(y)
        del q

    mapping = _nn.Linear(dim, dim, bias=False).cuda()
    with torch.no_grad():
        mapping.weight.copy_(torch.eye(dim, device="cuda"))
    hid = _smoke(2048, 64)
    disc = _nn.Sequential(_nn.Dropout(0.1), _nn.Linear(dim, hid), _nn.LeakyReLU(0.2), _nn.Linear(hid, hid),
                          _nn.LeakyReLU(0.2), _nn.Linear(hid, 1)).cuda()
    map_opt = torch.optim.SGD(mapping.parameters(), lr=0.1)
    dis_opt = torch.optim.SGD(disc.parameters(), lr=0.1)
    smooth, beta = 0.1, 0.001
    labels = torch.cat([torch.full((bs,), 1 - smooth, device="cuda"), torch.full((bs,), smooth, device="cuda")])

    def batch():
        si = torch.randint(0, nfreq, (bs,), device="cuda")
        ti = torch.randint(0, nfreq, (bs,), device="cuda")
        return x.index_select(0, si), y.index_select(0, ti)

    def criterion():
        with torch.no_grad():
            mx = _F.normalize(mapping(x[:nknn]), dim=1)
            yk = y[:nknn]
            r_src = _knn_mean(mx, yk, knn, chunk)  # mapped source words' radii in the target space
            r_tgt = _knn_mean(yk, mx, knn, chunk)
            best = _csls_chunks(mx[:ncrit], yk, r_tgt, r_src[:ncrit], chunk)
            return (mx[:ncrit] * yk.index_select(0, best)).sum(1).mean(), mx, r_src, r_tgt

    epochs = 3
    for ep in range(epochs):
        iters = rng.randint(_smoke(400, 2), _smoke(460, 3))
        for it in range(iters):
            disc.train()
            for _ in range(5):
                xs, yt = batch()
                with torch.no_grad():
                    feats = torch.cat([mapping(xs), yt])
                loss = _F.binary_cross_entropy_with_logits(disc(feats)[:, 0], labels)
                dis_opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(disc.parameters(), 5.0)
                dis_opt.step()
                del xs, yt, feats
            disc.eval()
            xs, yt = batch()
            feats = torch.cat([mapping(xs), yt])
            mloss = _F.binary_cross_entropy_with_logits(disc(feats)[:, 0], 1 - labels)
            map_opt.zero_grad(set_to_none=True)
            mloss.backward()
            map_opt.step()
            with torch.no_grad():
                w = mapping.weight
                w.copy_((1 + beta) * w - beta * w @ (w.t() @ w))
            if it % 50 == 0:
                torch.stack([loss.detach(), mloss.detach()]).tolist()
            del xs, yt, feats, loss, mloss
        crit = criterion()
        crit[0].item()
        del crit

    # Procrustes refinement on mutual-nearest-neighbour dictionaries
    test_src = torch.tensor([rng.randrange(nref) for _ in range(ntest)], device="cuda")
    for _ in range(_smoke(5, 2)):
        with torch.no_grad():
            c, mx, r_src, r_tgt = criterion()
            yk = y[:nknn]
            fwd = _csls_chunks(mx[:nref], yk, r_tgt, r_src[:nref], chunk)  # source -> target
            bwd = _csls_chunks(yk[:nref], mx, r_src, r_tgt[:nref], chunk)  # target -> source
            mutual = (bwd.index_select(0, fwd.clamp_max(nref - 1)) == torch.arange(nref, device="cuda")) & \
                (fwd < nref)
            wts = mutual.float()[:, None]
            cov = (yk.index_select(0, fwd) * wts).t() @ x[:nref]
            u, _, vh = torch.linalg.svd(cov)
            mapping.weight.copy_(u @ vh)
            # precision@1 on the test pairs (the planted translation of source word i is target word i)
            mx = _F.normalize(mapping(x[:nknn]), dim=1)
            pred = _csls_chunks(mx.index_select(0, test_src), yk, r_tgt, r_src.index_select(0, test_src), chunk)
            torch.stack([c, wts.mean(), (pred == test_src).float().mean()]).tolist()
            del c, mx, r_src, r_tgt, yk, fwd, bwd, mutual, wts, cov, u, vh, pred

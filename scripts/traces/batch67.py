"""The sixty-seventh batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch65_b.py are): multilingual and low-resource language technology, byte-level and character models, morphology,
speech translation and transliteration, written in torch alone, first half. Tokenizer-free byte-level language-model
pretraining (an hourglass byte model: windowed causal local layers over raw UTF-8 bytes, bytes pooled into patches
for a causal global transformer and upsampled back, sequence length drawn per step with a fixed byte budget,
gradient accumulation, bits per byte evaluated now and then), character-level morphological inflection (a
SIGMORPHON-style transformer seq2seq from lemma characters and morphosyntactic tag tokens to the inflected form,
trained with label smoothing, the dev set decoded now and then by beam search with a fixed number of steps, caches
reordered by index_select and length-normalised scores), a massively multilingual translation service (a deep
encoder and a shallow decoder shared by 48 languages, a target-language tag prepended, requests of drawn size whose
sentences are sorted by length into token-budgeted sub-batches, greedy decoding with a KV cache restricted to each
target language's vocabulary; each request's token ids uploaded from two reused pinned host buffers on a side stream
one request ahead), and end-to-end speech translation (a convolutional subsampler and transformer encoder over
log-mel features with SpecAugment masks built on the device, a transformer text decoder, batches by frame budget,
greedy decoding of a dev batch now and then). Same conventions as the earlier batches: nothing downloaded, data
drawn at random on the device (or, for the translation service, from a few reused pinned host buffers), `rng` the
workload's random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)` so that
RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: decoding runs a fixed number of steps set on
the host (finished hypotheses kept by torch.where), masks are multiplied or selected with torch.where, no
boolean-mask indexing; losses, accuracies and decoded outputs are read back only at logging points.
multilingual_nmt_tagged_serve uses a side stream (uploads waited on by event, the tensors record_stream'ed); the
others are single-stream. The models run under bf16 autocast; losses, beam scores and optimiser states are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch67_b.py's header says the same of its half): see record_new67.sh's header
for each workload's op outputs and peak live bytes counted on PyTorch's meta device at its final real sizes
(RECORD_SMOKE unset) with scripts/traces/meta_run.py (smoke_cpu.py's patching with "cuda" mapped to "meta",
readbacks answered with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking a math path, streams,
events and pinned memory no-ops), and the CPU smoke run (RECORD_SMOKE=1) of all four.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, _sincos

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn

PAD, BOS, EOS = 0, 1, 2


# ---------------------------------------------------------------- shared: a transformer decoder with a KV cache


class _DecBlock(_nn.Module):
    """A pre-norm decoder block: causal self-attention (a KV cache when decoding step by step), cross-attention
    over the encoder's memory (its keys and values computed once by `memory`), a GELU MLP."""

    def __init__(self, d, heads, hidden):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.n1, self.n2, self.n3 = _nn.LayerNorm(d), _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.o = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.q_x, self.kv_x, self.o_x = _nn.Linear(d, d), _nn.Linear(d, 2 * d), _nn.Linear(d, d)
        self.fc1, self.fc2 = _nn.Linear(d, hidden), _nn.Linear(hidden, d)
        self.drop = _nn.Dropout(0.1)

    def memory(self, mem):
        b, s, d = mem.shape
        k, v = self.kv_x(mem).view(b, s, 2, self.h, self.dh).permute(2, 0, 3, 1, 4)
        return k, v

    def forward(self, x, mkv, mmask, cache=None):
        b, u, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, u, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)
        if cache is None:
            a = _F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            if cache[0] is not None:
                k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
            a = _F.scaled_dot_product_attention(q, k, v)
        x = x + self.drop(self.o(a.transpose(1, 2).reshape(b, u, d)))
        q = self.q_x(self.n2(x)).view(b, u, self.h, self.dh).transpose(1, 2)
        a = _F.scaled_dot_product_attention(q, mkv[0], mkv[1], attn_mask=mmask)
        x = x + self.drop(self.o_x(a.transpose(1, 2).reshape(b, u, d)))
        x = x + self.drop(self.fc2(_F.gelu(self.fc1(self.n3(x)))))
        return x, (k, v)


class _Decoder(_nn.Module):
    """Token embedding (scaled) and learned positions, decoder blocks, a final norm and an output projection."""

    def __init__(self, vocab, d, heads, hidden, layers, maxlen):
        super().__init__()
        self.d = d
        self.emb, self.pos = _nn.Embedding(vocab, d), _nn.Embedding(maxlen, d)
        self.blocks = _nn.ModuleList(_DecBlock(d, heads, hidden) for _ in range(layers))
        self.norm, self.out = _nn.LayerNorm(d), _nn.Linear(d, vocab)

    def memory(self, mem):
        return [blk.memory(mem) for blk in self.blocks]

    def forward(self, tgt_in, mkv, mmask):
        u = tgt_in.shape[1]
        x = self.emb(tgt_in) * math.sqrt(self.d) + self.pos(torch.arange(u, device=tgt_in.device))
        for blk, kv in zip(self.blocks, mkv):
            x, _ = blk(x, kv, mmask)
        return self.out(self.norm(x))

    def step(self, tok, t, mkv, mmask, caches):
        """One decoding step of (N,) tokens at position t; `caches` a list of (k, v) per block (None at t = 0),
        replaced in place. Returns the (N, vocab) logits."""
        x = self.emb(tok)[:, None] * math.sqrt(self.d) + self.pos.weight[t]
        for i, (blk, kv) in enumerate(zip(self.blocks, mkv)):
            x, caches[i] = blk(x, kv, mmask, cache=caches[i])
        return self.out(self.norm(x[:, 0]))


class _TextEncoder(_nn.Module):
    """Token embedding (scaled) and learned positions, pre-norm blocks under a key-padding mask, a final norm."""

    def __init__(self, vocab, d, heads, hidden, layers, maxlen):
        super().__init__()
        self.d = d
        self.emb, self.pos = _nn.Embedding(vocab, d), _nn.Embedding(maxlen, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads, hidden) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)

    def forward(self, ids, kmask):
        x = self.emb(ids) * math.sqrt(self.d) + self.pos(torch.arange(ids.shape[1], device=ids.device))
        for blk in self.blocks:
            x = blk(x, kmask)
        return self.norm(x)


def _key_mask(lengths, s):
    """(B,) lengths on the device -> a boolean (B, 1, 1, s) key mask, True where a key may be attended."""
    return (torch.arange(s, device=lengths.device)[None] < lengths[:, None])[:, None, None]


def _ids_of_lengths(lo, hi, lengths):
    """Right-padded random ids in [lo, hi) for rows of the given (host) lengths, with EOS after each row's last
    id, and the (B,) lengths tensor (EOS included)."""
    s = max(lengths) + 1
    lens = torch.tensor([n + 1 for n in lengths], device="cuda")
    ar = torch.arange(s, device="cuda")[None]
    ids = torch.randint(lo, hi, (len(lengths), s), device="cuda")
    ids = torch.where(ar == lens[:, None] - 1, EOS, ids)
    return torch.where(ar < lens[:, None], ids, PAD), lens


def _greedy(dec, mkv, mmask, n, steps, first, vocab_bias=None):
    """Greedy decoding of n hypotheses for a fixed number of steps with a KV cache: the first token `first` (N,),
    finished hypotheses keep emitting PAD (torch.where). Returns the (N, steps) tokens."""
    caches = [None] * len(dec.blocks)
    tok = first
    done = torch.zeros(n, dtype=torch.bool, device=first.device)
    out = []
    for t in range(steps):
        logits = dec.step(tok, t, mkv, mmask, caches).float()
        if vocab_bias is not None:
            logits = logits + vocab_bias
        nxt = logits.argmax(-1)
        nxt = torch.where(done, PAD, nxt)
        done = done | (nxt == EOS)
        out.append(nxt)
        tok = nxt
    return torch.stack(out, 1)


# ---------------------------------------------------------------- byte-level hourglass language model


class _ByteHourglass(_nn.Module):
    """A tokenizer-free byte model: windowed causal local layers over bytes, bytes shifted by one patch and pooled
    into patches for a causal global transformer, upsampled and added back, more local layers, a 259-way head
    (256 bytes and 3 specials)."""

    def __init__(self, dl, dg, patch, nl, ng, window, max_patches):
        super().__init__()
        self.p, self.w = patch, window
        self.emb, self.lpos = _nn.Embedding(259, dl), _nn.Embedding(window, dl)
        self.gpos = _nn.Embedding(max_patches, dg)
        self.pre = _nn.ModuleList(PreNormBlock(dl, dl // 64) for _ in range(nl))
        self.down = _nn.Linear(patch * dl, dg)
        self.glob = _nn.ModuleList(PreNormBlock(dg, dg // 64) for _ in range(ng))
        self.up = _nn.Linear(dg, patch * dl)
        self.post = _nn.ModuleList(PreNormBlock(dl, dl // 64) for _ in range(nl))
        self.norm, self.head = _nn.LayerNorm(dl), _nn.Linear(dl, 259)

    def local(self, blocks, x):
        b, t, d = x.shape
        w = self.w
        causal = torch.ones(w, w, dtype=torch.bool, device=x.device).tril()
        x = x.reshape(b * t // w, w, d)
        for blk in blocks:
            x = blk(x, causal)
        return x.reshape(b, t, d)

    def forward(self, ids):
        b, t = ids.shape
        x = self.emb(ids) + self.lpos.weight.repeat(t // self.w, 1)
        x = self.local(self.pre, x)
        d, p = x.shape[-1], self.p
        # shifted by one patch: global position j sees only bytes before j * p
        g = _F.pad(x, (0, 0, p, 0))[:, :t].reshape(b, t // p, p * d)
        g = self.down(g) + self.gpos.weight[: t // p]
        causal = torch.ones(t // p, t // p, dtype=torch.bool, device=x.device).tril()
        for blk in self.glob:
            g = blk(g, causal)
        x = x + self.up(g).reshape(b, t, d)
        x = self.local(self.post, x)
        return self.head(self.norm(x))


@_workload("tokenizer-free byte-level language-model pretraining (random init): an hourglass byte model over raw UTF-8 bytes (2 windowed causal local layers of width 384 over 256-byte windows, bytes shifted by one patch and pooled 4 to a patch into 6 causal global layers of width 768, upsampled and added back, 2 more local layers, a 259-way head), 16,384 bytes a micro-batch at a sequence length drawn each step (1,024-4,096 bytes, so 4-16 rows) from a skewed byte distribution with a multilingual share of multi-byte lead and continuation bytes, 2 micro-batches accumulated, AdamW with warmup and cosine decay, bf16 autocast, gradient clipping; the loss read back every 10 steps, bits per byte on 2 held-out batches every 40")
def byte_hourglass_lm_train(rng):
    dl, dg, patch, window = _smoke(384, 64), _smoke(768, 128), 4, _smoke(256, 16)
    lens = _smoke([1024, 2048, 4096], [32, 64])
    budget = _smoke(16384, 128)
    model = _ByteHourglass(dl, dg, patch, 2, _smoke(6, 2), window, max(lens) // patch).cuda()
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=6e-4, betas=(0.9, 0.95))
    steps = _smoke(165, 3)
    warm = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * 0.5 * (1 + math.cos(math.pi * min(1.0, s / steps))))
    # a skewed byte distribution: ASCII letters and spaces common, UTF-8 lead (0xC2-0xF4) and continuation
    # (0x80-0xBF) bytes for the non-Latin scripts
    w = torch.full((256,), 0.02, device="cuda")
    w[32] = 8.0
    w[97:123] = 1.5
    w[65:91] = 0.3
    w[0x80:0xC0] = 0.9
    w[0xD0:0xE1] = 0.6
    probs = w / w.sum()

    def batch(t):
        rows = budget // t
        return torch.multinomial(probs, rows * (t + 1), replacement=True).view(rows, t + 1)

    accum = 2
    for step in range(steps):
        model.train()
        t = rng.choice(lens)
        for _ in range(accum):
            ids = batch(t)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(ids[:, :-1])
            loss = _F.cross_entropy(logits.float().reshape(-1, 259), ids[:, 1:].reshape(-1)) / accum
            loss.backward()
            del ids, logits
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        if step % 10 == 0:
            float(loss)
        del loss
        if (step + 1) % _smoke(40, 2) == 0:
            model.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                tot = torch.zeros((), device="cuda")
                for _ in range(2):
                    ids = batch(max(lens))
                    tot = tot + _F.cross_entropy(model(ids[:, :-1]).float().reshape(-1, 259),
                                                 ids[:, 1:].reshape(-1))
                (tot / 2 / math.log(2)).item()  # bits per byte
            del ids, tot


# ---------------------------------------------------------------- character-level morphological inflection


class _CharSeq2Seq(_nn.Module):
    def __init__(self, vsrc, vtgt, d, heads, hidden, layers, maxlen):
        super().__init__()
        self.enc = _TextEncoder(vsrc, d, heads, hidden, layers, maxlen)
        self.dec = _Decoder(vtgt, d, heads, hidden, layers, maxlen)


def _beam_search(model, src, slen, beam, steps, vocab, alpha=0.6):
    """Beam search of a fixed number of steps; finished hypotheses may only extend with EOS at no cost. Returns
    the best (B, steps) hypothesis per source by length-normalised score."""
    b, s = src.shape
    mem = model.enc(src, _key_mask(slen, s))
    sel0 = torch.arange(b, device=src.device).repeat_interleave(beam)
    mem = mem.index_select(0, sel0)
    mmask = _key_mask(slen.index_select(0, sel0), s)
    mkv = model.dec.memory(mem)
    scores = torch.full((b, beam), -1e9, device=src.device)
    scores[:, 0] = 0.0
    scores = scores.view(-1)
    eos_row = torch.full((1, vocab), -1e9, device=src.device)
    eos_row[0, EOS] = 0.0
    tok = torch.full((b * beam,), BOS, dtype=torch.long, device=src.device)
    fin = torch.zeros(b * beam, dtype=torch.bool, device=src.device)
    seq = torch.zeros(b * beam, 0, dtype=torch.long, device=src.device)
    base = (torch.arange(b, device=src.device) * beam)[:, None]
    caches = [None] * len(model.dec.blocks)
    for t in range(steps):
        logp = model.dec.step(tok, t, mkv, mmask, caches).float().log_softmax(-1)
        logp = torch.where(fin[:, None], eos_row, logp)
        top, idx = (scores[:, None] + logp).view(b, beam * vocab).topk(beam, -1)
        sel = (idx // vocab + base).view(-1)
        tok = (idx % vocab).view(-1)
        caches = [(k.index_select(0, sel), v.index_select(0, sel)) for k, v in caches]
        seq = torch.cat([seq.index_select(0, sel), tok[:, None]], 1)
        fin = fin.index_select(0, sel) | (tok == EOS)
        scores = top.view(-1)
    length = ((seq == EOS).long().cumsum(1) == 0).sum(1) + 1
    normed = (scores / length.float().pow(alpha)).view(b, beam)
    best = normed.argmax(1) + base[:, 0]
    return seq.index_select(0, best)


@_workload("character-level morphological inflection (SIGMORPHON-style, random init): a transformer seq2seq (4 encoder and 4 decoder layers of width 256, 4 heads, FFN 1,024, dropout) from lemma characters (3-18) plus 2-7 morphosyntactic tag tokens to the inflected form's characters, 400 words a batch, label-smoothed cross-entropy, Adam with inverse-square-root warmup, bf16 autocast, gradient clipping; every 40 steps 2 dev batches of 384 words decoded by beam search of width 5 for a fixed 24 steps (KV caches and hypotheses reordered by index_select, finished beams extended only by EOS via torch.where, length-normalised final scores) and exact-match accuracy read back")
def morph_inflection_beam_train(rng):
    nchar, ntag = 120, 180
    vsrc, vtgt = 3 + nchar + ntag, 3 + nchar
    d = _smoke(256, 32)
    model = _CharSeq2Seq(vsrc, vtgt, d, 4, 4 * d, _smoke(4, 2), 64).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98))
    warm = 40
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min((s + 1) / warm, math.sqrt(warm / (s + 1))))
    bsz, dev_b = _smoke(400, 6), _smoke(384, 4)
    beam, steps_dec = _smoke(5, 3), _smoke(24, 5)

    def words(n):
        lemma = [rng.randint(3, 18) for _ in range(n)]
        ntags = [rng.randint(2, 7) for _ in range(n)]
        src, slen = _ids_of_lengths(3, 3 + nchar, [a + c for a, c in zip(lemma, ntags)])
        # the tag tokens after the lemma's characters, before EOS
        ar = torch.arange(src.shape[1], device="cuda")[None]
        lem = torch.tensor(lemma, device="cuda")[:, None]
        is_tag = (ar >= lem) & (ar < slen[:, None] - 1)
        src = torch.where(is_tag, torch.randint(3 + nchar, vsrc, src.shape, device="cuda"), src)
        tgt, tlen = _ids_of_lengths(3, vtgt, [max(2, a + rng.randint(-2, 4)) for a in lemma])
        return src, slen, tgt, tlen

    nsteps = _smoke(200, 3)
    for step in range(nsteps):
        model.train()
        src, slen, tgt, tlen = words(bsz)
        tgt_in = _F.pad(tgt[:, :-1], (1, 0), value=BOS)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            mem = model.enc(src, _key_mask(slen, src.shape[1]))
            logits = model.dec(tgt_in, model.dec.memory(mem), _key_mask(slen, src.shape[1]))
        loss = _F.cross_entropy(logits.float().reshape(-1, vtgt), tgt.reshape(-1), ignore_index=PAD,
                                label_smoothing=0.1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 10 == 0:
            float(loss)
        del src, slen, tgt, tlen, tgt_in, mem, logits, loss
        if (step + 1) % _smoke(40, 2) == 0:
            model.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for _ in range(2):
                    src, slen, tgt, tlen = words(dev_b)
                    hyp = _beam_search(model, src, slen, beam, steps_dec, vtgt)
                    w = min(hyp.shape[1], tgt.shape[1])
                    match = ((hyp[:, :w] == tgt[:, :w]) | (tgt[:, :w] == PAD)).all(1)
                    match.float().mean().item()
                    del src, slen, tgt, tlen, hyp, match


# ---------------------------------------------------------------- massively multilingual translation service


@_workload("massively multilingual translation service (random init): one transformer shared by 48 languages (a deep encoder of 8 layers and a shallow decoder of 2, width 512, 8 heads, FFN 2,048, a 32,000-token shared vocabulary with the target-language tag prepended to the source and used as the decoder's first token), 24-30 requests (drawn) of 1-96 sentences of 3-120 tokens (log-uniform) each with a drawn target language, each request's padded int32 token ids uploaded from 2 reused pinned host buffers on a side stream one request ahead (waited on by event, record_stream'ed), sentences sorted by length into sub-batches of at most 3,072 source tokens, greedy decoding with a KV cache for 1.2x the sub-batch's longest source plus 6 steps, each sentence's logits restricted to its target language's vocabulary by an additive bias row, under bf16 autocast; each sub-batch's output ids read back")
def multilingual_nmt_tagged_serve(rng):
    vocab, nlang, nspecial = _smoke(32000, 400), 48, 4
    d = _smoke(512, 32)
    enc = _TextEncoder(vocab, d, 8 if d >= 64 else 2, 4 * d, _smoke(8, 2), 160).cuda().eval()
    dec = _Decoder(vocab, d, 8 if d >= 64 else 2, 4 * d, 2, 160).cuda().eval()
    dec.emb.weight = enc.emb.weight  # shared embeddings
    dec.out.weight = enc.emb.weight
    # each language's allowed output vocabulary (its scripts' pieces and the shared ones), as an additive bias
    allowed = torch.rand(nlang, vocab, device="cuda") < 0.35
    allowed[:, :nspecial + nlang] = True
    lang_bias = torch.where(allowed, 0.0, -1e4)
    del allowed
    max_n, max_len = _smoke(96, 4), _smoke(120, 12)
    budget = _smoke(3072, 48)
    cap = max_n * max_len
    host = [torch.randint(nspecial + nlang, vocab, (cap,), dtype=torch.int32).pin_memory() for _ in range(2)]
    up = SideUploads(host)

    def draw():
        n = _loguniform(rng, 1, max_n)
        lengths = [_loguniform(rng, 3, max_len) for _ in range(n)]
        langs = [rng.randrange(nlang) for _ in range(n)]
        return n, lengths, langs

    nreq = rng.randint(_smoke(24, 2), _smoke(30, 3))
    plan = [draw() for _ in range(nreq)]
    nxt = up.upload(0, plan[0][0] * max(plan[0][1]))
    with torch.no_grad():
        for i in range(nreq):
            n, lengths, langs = plan[i]
            lmax = max(lengths)
            z, ev = nxt
            if i + 1 < nreq:
                nxt = up.upload(i + 1, plan[i + 1][0] * max(plan[i + 1][1]))
            cur = torch.cuda.current_stream()
            cur.wait_event(ev)
            z.record_stream(cur)
            ids_all = z.view(n, lmax).long()
            order = sorted(range(n), key=lambda j: -lengths[j])
            # sub-batches of sorted sentences within the source-token budget (padding included)
            groups, g = [], []
            for j in order:
                if g and (len(g) + 1) * lengths[g[0]] > budget:
                    groups.append(g)
                    g = []
                g.append(j)
            groups.append(g)
            for g in groups:
                lb = lengths[g[0]] + 1
                rows = torch.tensor(g, device="cuda")
                lens = torch.tensor([lengths[j] + 1 for j in g], device="cuda")
                tags = torch.tensor([nspecial + langs[j] for j in g], device="cuda")
                src = ids_all.index_select(0, rows)[:, : lb - 1]
                src = torch.cat([tags[:, None], src], 1)
                src = torch.where(torch.arange(lb, device="cuda")[None] < lens[:, None], src, PAD)
                kmask = _key_mask(lens, lb)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    mem = enc(src, kmask)
                    mkv = dec.memory(mem)
                    out = _greedy(dec, mkv, kmask, len(g), int(1.2 * lb) + 6, tags,
                                  vocab_bias=lang_bias.index_select(0, tags - nspecial))
                out.tolist()
                del rows, lens, tags, src, kmask, mem, mkv, out
            del z, ids_all


# ---------------------------------------------------------------- end-to-end speech translation


class _SpeechTranslator(_nn.Module):
    """A convolutional subsampler (two stride-2 Conv1d with GLU, 4x fewer frames), sinusoidal positions, pre-norm
    transformer encoder layers, and a transformer text decoder (as fairseq's S2T transformer)."""

    def __init__(self, nmel, d, heads, hidden, enc_layers, dec_layers, vocab):
        super().__init__()
        self.d = d
        self.conv1 = _nn.Conv1d(nmel, 2 * 2 * d, 5, stride=2, padding=2)
        self.conv2 = _nn.Conv1d(2 * d, 2 * d, 5, stride=2, padding=2)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads, hidden) for _ in range(enc_layers))
        self.norm = _nn.LayerNorm(d)
        self.dec = _Decoder(vocab, d, heads, hidden, dec_layers, 256)

    def encode(self, feats, flen):
        x = _F.glu(self.conv1(feats.transpose(1, 2)), 1)
        x = _F.glu(self.conv2(x), 1).transpose(1, 2)
        t = x.shape[1]
        olen = (flen - 1) // 2 + 1
        olen = (olen - 1) // 2 + 1
        x = x * math.sqrt(self.d) + _sincos(torch.arange(t, device=x.device), self.d).to(x.dtype)
        kmask = _key_mask(olen, t)
        for blk in self.blocks:
            x = blk(x, kmask)
        return self.norm(x), kmask


def _spec_augment(feats, flen, nfreq=2, fwidth=27, ntime=2, tmax=40):
    """SpecAugment masks drawn on the device: nfreq frequency bands of width < fwidth and ntime time spans of
    width < min(tmax, 20% of the utterance), zeroed by multiplying."""
    b, t, m = feats.shape
    fa = torch.arange(m, device=feats.device)[None, None]
    f0 = torch.randint(0, m - fwidth, (b, nfreq, 1), device=feats.device)
    fw = torch.randint(0, fwidth, (b, nfreq, 1), device=feats.device)
    fmask = ((fa >= f0) & (fa < f0 + fw)).any(1)  # (B, M)
    ta = torch.arange(t, device=feats.device)[None, None]
    span = torch.clamp(0.2 * flen.float(), max=tmax)[:, None, None]
    tw = (torch.rand(b, ntime, 1, device=feats.device) * span).long()
    t0 = (torch.rand(b, ntime, 1, device=feats.device) * (flen[:, None, None] - tw).clamp_min(1)).long()
    tmask = ((ta >= t0) & (ta < t0 + tw)).any(1)  # (B, T)
    keep = (~fmask[:, None, :] & ~tmask[:, :, None]).to(feats.dtype)
    return feats * keep


@_workload("end-to-end speech translation (fairseq S2T-style, random init): log-mel features (80 bins) of utterances of 150-1,500 frames (log-uniform), batched by a 40,000-frame budget, utterance-level mean and variance normalisation and SpecAugment (2 frequency and 2 time masks drawn on the device), a convolutional subsampler (two stride-2 Conv1d with GLU), 12 pre-norm encoder layers and a 6-layer text decoder (width 256, 4 heads, FFN 2,048, an 8,000-piece target vocabulary), label-smoothed cross-entropy, Adam with inverse-square-root warmup, bf16 autocast, gradient clipping; the loss read back every 10 steps, every 25 steps a dev batch of 24 utterances greedily decoded for 64 steps with a KV cache")
def speech_translation_s2t_train(rng):
    nmel, vocab = 80, _smoke(8000, 300)
    d = _smoke(256, 32)
    model = _SpeechTranslator(nmel, d, 4, _smoke(2048, 64), _smoke(12, 2), _smoke(6, 2), vocab).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3, betas=(0.9, 0.98))
    warm = 30
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min((s + 1) / warm, math.sqrt(warm / (s + 1))))
    budget = _smoke(40000, 400)
    lo, hi = _smoke(150, 16), _smoke(1500, 64)

    def batch(nrows=None):
        tmax = _loguniform(rng, lo, hi)
        b = nrows or max(1, budget // tmax)
        flens = [rng.randint(max(lo, tmax // 2), tmax) for _ in range(b - 1)] + [tmax]
        flen = torch.tensor(flens, device="cuda")
        fmask = (torch.arange(tmax, device="cuda")[None] < flen[:, None]).float()[..., None]
        feats = torch.randn(b, tmax, nmel, device="cuda") * 2.0 - 4.0
        n = fmask.sum(1, keepdim=True)
        mean = (feats * fmask).sum(1, keepdim=True) / n
        var = ((feats - mean) ** 2 * fmask).sum(1, keepdim=True) / n
        feats = (feats - mean) / (var + 1e-5).sqrt() * fmask
        # about 12 target pieces a second of speech (100 frames a second)
        tgt, tlen = _ids_of_lengths(3, vocab, [max(2, min(200, f // 8 + rng.randint(-4, 4))) for f in flens])
        return feats, flen, tgt, tlen

    steps = _smoke(95, 3)
    for step in range(steps):
        model.train()
        feats, flen, tgt, tlen = batch()
        feats = _spec_augment(feats, flen)
        tgt_in = _F.pad(tgt[:, :-1], (1, 0), value=BOS)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            mem, kmask = model.encode(feats, flen)
            logits = model.dec(tgt_in, model.dec.memory(mem), kmask)
        loss = _F.cross_entropy(logits.float().reshape(-1, vocab), tgt.reshape(-1), ignore_index=PAD,
                                label_smoothing=0.1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
        opt.step()
        sched.step()
        if step % 10 == 0:
            float(loss)
        del feats, flen, tgt, tlen, tgt_in, mem, kmask, logits, loss
        if (step + 1) % _smoke(25, 2) == 0:
            model.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                feats, flen, tgt, tlen = batch(_smoke(24, 2))
                mem, kmask = model.encode(feats, flen)
                first = torch.full((feats.shape[0],), BOS, dtype=torch.long, device="cuda")
                hyp = _greedy(model.dec, model.dec.memory(mem), kmask, feats.shape[0], _smoke(64, 4), first)
                hyp.tolist()
            del feats, flen, tgt, tlen, mem, kmask, first, hyp

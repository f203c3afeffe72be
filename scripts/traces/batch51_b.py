"""The fifty-first batch of held-out workloads, second half (batch51.py holds the first): security and
network-traffic analysis on the GPU, written in torch alone. An encrypted-traffic classification service (a
two-branch 1-D CNN over the first packets' sizes, inter-arrival times and directions and over the first payload
bytes, as in FS-Net / Deep Packet style classifiers; request batches of drawn size with flows truncated to drawn
lengths, uploaded from pinned host buffers on a side stream, the model replaced by a retrained one of another width
every so often), a URL and DGA-domain classifier (eXpose, Saxe and Berlin 2017: a character embedding and parallel
convolutions of widths 2-5 with sum pooling, a malicious head and a DGA-family head, trained on length-bucketed
batches, then a scoring sweep with AUC by rank), learned password guessing (PassGPT, Rando et al. 2023: a small
GPT over password characters trained on length-bucketed batches, then guesses sampled in large batches with a KV
cache and top-k, deduplicated by hash and sort, matched against a held-out set by searchsorted, the guess set
growing round by round), and neural program smoothing for fuzzing (NEUZZ, She et al. 2019: an MLP from input
bytes to edge coverage trained on a corpus, gradient-guided mutations at the top-k bytes of the gradient for
chosen edges, mutants run through a synthetic coverage oracle, the most novel added to the corpus, retraining as
the corpus grows). Same conventions as batch51.py: nothing downloaded, data drawn on the device, `rng` the
workload's random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)`. No control
flow reads a tensor's value (novelty, dedup and matching are sorts, topk, gathers and masks multiplied in; counts
fixed on the host); losses, hit rates and scores are read back only at logging points (the traffic service returns
each request's classes). etc_flow_cnn_serve uses a side stream (uploads waited on by event, the tensors
record_stream'ed); the others are single-stream. The networks run under bf16 autocast (PassGPT's KV cache is bf16);
the fuzzing oracle and the losses are fp32.

Real sizes checked before recording, as batch51.py's header says (the same meta-device runner, op outputs counted,
peak live bytes tracked), each run whole at its final sizes: etc_flow_cnn_serve 320,018 op outputs, peak 0.14 GB;
expose_url_charcnn_train 306,914, 2.34 GB; passgpt_guess_sample 324,521, 5.10 GB; neuzz_smooth_fuzz 328,489, 1.03 GB
(peaks in fp32 where autocast would take bf16). record_new51.sh's header has the figures, with the first runs that
led to resizes. The CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- encrypted-traffic classification service


class _ResBlock1d(_nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = _nn.Conv1d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = _nn.BatchNorm1d(cout)
        self.c2 = _nn.Conv1d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = _nn.BatchNorm1d(cout)
        self.skip = _nn.Conv1d(cin, cout, 1, stride, bias=False) if (stride != 1 or cin != cout) else None

    def forward(self, x):
        h = self.b2(self.c2(_F.relu(self.b1(self.c1(x)))))
        return _F.relu(h + (x if self.skip is None else self.skip(x)))


class _EtcNet(_nn.Module):
    """Two branches: the packet sequence (3 channels: signed size, log inter-arrival, direction) through a 1-D
    ResNet (4 stages, strides 1,2,2,2), average and max pooled; the first 784 payload bytes embedded (16) through
    two strided convolutions and max pooled; concatenated to an MLP over the application classes."""

    def __init__(self, w, ncls):
        super().__init__()
        self.stem = _nn.Conv1d(3, w, 5, 1, 2)
        chans = [w, w, 2 * w, 2 * w, 4 * w]
        self.stages = _nn.Sequential(*[_ResBlock1d(chans[i], chans[i + 1], 1 if i == 0 else 2) for i in range(4)])
        self.bemb = _nn.Embedding(256, 16)
        self.bc1 = _nn.Conv1d(16, 2 * w, 9, 3)
        self.bc2 = _nn.Conv1d(2 * w, 2 * w, 9, 3)
        self.fc = _nn.Sequential(_nn.Linear(8 * w + 2 * w, 4 * w), _nn.ReLU(), _nn.Linear(4 * w, ncls))

    def forward(self, seq, payload):
        h = self.stages(_F.relu(self.stem(seq)))
        p = _F.relu(self.bc2(_F.relu(self.bc1(self.bemb(payload.long()).transpose(1, 2)))))
        z = torch.cat([h.mean(2), h.amax(2), p.amax(2)], 1)
        return self.fc(z)


@_workload("encrypted-traffic classification service written by hand (random init, bf16 autocast, eval mode): a two-branch 1-D CNN (a 1-D ResNet of 4 stages over the first packets' signed sizes, log inter-arrival times and directions, average and max pooled; the first 784 payload bytes embedded and through two strided convolutions, max pooled; an MLP over 40-120 application classes); 5,320 requests, each 1-256 flows (drawn) truncated to 16-1024 packets (drawn, cut to 64k packets), the sequence features and payload bytes uploaded from reused pinned host buffers on a side stream one request ahead (waited on by event, record_stream'ed), signed sizes normalised and inter-arrival times log-scaled on the device; softmax, the top-3 classes and an energy score for open-set rejection read back per request; every 760 requests the model replaced by a retrained one of width 32-96 and 40-120 classes (drawn)")
def etc_flow_cnn_serve(rng):
    fmax, tmax, nbytes = _smoke(256, 4), _smoke(1024, 32), _smoke(784, 96)
    cap = _smoke(65536, 256)
    host_seq = [torch.randn(3 * cap).pin_memory() for _ in range(2)]
    host_pay = [torch.randint(0, 256, (fmax * nbytes,), dtype=torch.uint8).pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    done = [None, None]

    def fetch(i):
        b = rng.choice(_smoke([1, 4, 16, 32, 64, 128, 256], [1, 2, 4]))
        t = rng.choice(_smoke([16, 32, 64, 128, 256, 512, 1024], [16, 32]))
        b = max(1, min(b, cap // t))
        s = i % 2
        if done[s] is not None:
            done[s].synchronize()
        with torch.cuda.stream(side):
            seq = host_seq[s][:3 * b * t].view(b, 3, t).to("cuda", non_blocking=True)
            pay = host_pay[s][:b * nbytes].view(b, nbytes).to("cuda", non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        done[s] = ev
        return seq, pay, ev

    model = None
    nxt = fetch(0)
    for req in range(_smoke(5320, 4)):
        if req % _smoke(760, 2) == 0:
            del model
            ncls = rng.randint(40, 120)
            model = _EtcNet(rng.choice(_smoke([32, 48, 64, 96], [8])), ncls).cuda().eval()
        seq, pay, ev = nxt
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        seq.record_stream(cur)
        pay.record_stream(cur)
        nxt = fetch(req + 1)
        with torch.inference_mode():
            x = torch.stack([seq[:, 0] * 400, torch.log1p(seq[:, 1].abs() * 1e3), seq[:, 2].sign()], 1)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(x, pay).float()
            prob = logits.softmax(-1)
            top = prob.topk(3, -1)
            energy = -torch.logsumexp(logits, -1)
            torch.cat([top.values, top.indices.float(), energy[:, None]], 1).cpu()
        del seq, pay, x, logits, prob, top, energy


# ---------------------------------------------------------------- URL / DGA classifier


class _Expose(_nn.Module):
    """eXpose: a character embedding (32), parallel convolutions of widths 2-5 (256 filters each), sum pooling
    over the valid positions, layer-normalised dense layers (1024) with dropout, a malicious logit and a DGA-family
    head."""

    def __init__(self, nchar, filters, dense, nfam):
        super().__init__()
        self.emb = _nn.Embedding(nchar + 1, 32, padding_idx=0)
        self.convs = _nn.ModuleList([_nn.Conv1d(32, filters, k, padding=k // 2) for k in (2, 3, 4, 5)])
        self.d1, self.n1 = _nn.Linear(4 * filters, dense), _nn.LayerNorm(dense)
        self.d2, self.n2 = _nn.Linear(dense, dense), _nn.LayerNorm(dense)
        self.mal, self.fam = _nn.Linear(dense, 1), _nn.Linear(dense, nfam)

    def forward(self, chars, keep):
        e = self.emb(chars).transpose(1, 2)
        t = chars.shape[1]
        w = keep.to(e.dtype)[:, None]
        z = torch.cat([(_F.relu(c(e)[..., :t]) * w).sum(2) for c in self.convs], 1)
        z = _F.dropout(self.n1(_F.relu(self.d1(z))), 0.5, self.training)
        z = _F.dropout(self.n2(_F.relu(self.d2(z))), 0.5, self.training)
        return self.mal(z)[:, 0], self.fam(z)


def _urls(b, t, nchar, nfam):
    """Synthetic URLs and domains: characters drawn with a per-sample character bias (DGA families draw from
    narrower alphabets), per-sample lengths, padding 0. Returns (chars, keep, malicious label, family)."""
    fam = torch.randint(0, nfam, (b,), device="cuda")
    mal = (fam > 0).float()
    base = torch.randint(1, nchar + 1, (b, 1), device="cuda")
    spread = torch.where(fam > 0, 8 + fam % 16, nchar)[:, None]
    chars = (base + (torch.rand(b, t, device="cuda") * spread).long()) % nchar + 1
    lens = torch.randint(max(4, t // 3), t + 1, (b, 1), device="cuda")
    keep = torch.arange(t, device="cuda")[None] < lens
    return chars * keep, keep, mal, fam


@_workload("URL and DGA-domain classifier, eXpose (Saxe and Berlin 2017) written by hand (random init): a character embedding of 32 over 96 characters, parallel convolutions of widths 2-5 with 256 filters each, sum pooling over valid positions, two dense layers of 1024 with LayerNorm and dropout, a malicious logit and a 40-way DGA-family head; synthetic URLs and domains made on the device (per-family alphabets, per-sample lengths, padded) in length buckets of 24-256 characters (drawn per batch) and batches of 256-4096 (drawn, cut to 256k characters); 1,900 steps under bf16 autocast, binary cross-entropy plus family cross-entropy, Adam with a step decay; every 380 steps a scoring sweep without grad over buckets 32-256 (4 batches of 4,096 each), AUC by rank from a sort and family accuracy read back")
def expose_url_charcnn_train(rng):
    nchar, nfam = 96, 40
    model = _Expose(nchar, _smoke(256, 16), _smoke(1024, 32), nfam).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    steps = _smoke(1900, 4)
    sched = torch.optim.lr_scheduler.StepLR(opt, max(1, steps // 3), 0.3)
    for step in range(steps):
        t = rng.choice(_smoke([24, 32, 48, 64, 96, 128, 192, 256], [8, 16]))
        b = min(rng.choice(_smoke([256, 512, 1024, 2048, 4096], [4, 8])), _smoke(262144, 128) // t)
        chars, keep, mal, fam = _urls(b, t, nchar, nfam)
        model.train()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            lm, lf = model(chars, keep)
        loss = _F.binary_cross_entropy_with_logits(lm.float(), mal) + 0.5 * _F.cross_entropy(lf.float(), fam)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        del chars, keep, mal, fam, lm, lf, loss
        if (step + 1) % _smoke(380, 2) == 0:
            model.eval()
            out = []
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for t in _smoke([32, 64, 128, 256], [16]):
                    scores, labels, acc = [], [], []
                    for _ in range(_smoke(4, 1)):
                        chars, keep, mal, fam = _urls(_smoke(4096, 16), t, nchar, nfam)
                        lm, lf = model(chars, keep)
                        scores.append(lm.float())
                        labels.append(mal)
                        acc.append((lf.argmax(-1) == fam).float().mean())
                    s, y = torch.cat(scores), torch.cat(labels)
                    rank = torch.empty_like(s).scatter_(0, s.argsort(), torch.arange(1, s.shape[0] + 1, device="cuda",
                                                                                     dtype=s.dtype))
                    npos = y.sum()
                    auc = ((rank * y).sum() - npos * (npos + 1) / 2) / (npos * (s.shape[0] - npos)).clamp_min(1)
                    out.append(torch.stack([auc, torch.stack(acc).mean()]))
                    del chars, keep, mal, fam, lm, lf, scores, labels, acc, s, y, rank
            torch.stack(out).cpu()
            del out


# ---------------------------------------------------------------- PassGPT password guessing


class _PassGpt(_nn.Module):
    """A small GPT-2 over password characters: token and position embeddings, pre-norm causal blocks, a tied
    output; decode() runs one position against a bf16 KV cache."""

    def __init__(self, vocab, d, layers, heads, maxlen):
        super().__init__()
        self.h, self.d = heads, d
        self.tok = _nn.Embedding(vocab, d)
        self.pos = _nn.Parameter(torch.randn(1, maxlen, d) * 0.02)
        self.n1 = _nn.ModuleList([_nn.LayerNorm(d) for _ in range(layers)])
        self.n2 = _nn.ModuleList([_nn.LayerNorm(d) for _ in range(layers)])
        self.qkv = _nn.ModuleList([_nn.Linear(d, 3 * d) for _ in range(layers)])
        self.proj = _nn.ModuleList([_nn.Linear(d, d) for _ in range(layers)])
        self.fc1 = _nn.ModuleList([_nn.Linear(d, 4 * d) for _ in range(layers)])
        self.fc2 = _nn.ModuleList([_nn.Linear(4 * d, d) for _ in range(layers)])
        self.norm = _nn.LayerNorm(d)

    def forward(self, ids):
        b, t = ids.shape
        x = self.tok(ids) + self.pos[:, :t]
        for i in range(len(self.qkv)):
            q, k, v = self.qkv[i](self.n1[i](x)).view(b, t, 3, self.h, self.d // self.h).permute(2, 0, 3, 1, 4)
            a = _F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj[i](a.transpose(1, 2).reshape(b, t, self.d))
            x = x + self.fc2[i](_F.gelu(self.fc1[i](self.n2[i](x))))
        return self.norm(x) @ self.tok.weight.T

    def decode(self, ids, pos, cache):
        """One position for every sequence: ids (B,), cache (layers, 2, B, heads, maxlen, dh) bf16, written at
        `pos`; attention over positions 0..pos."""
        b = ids.shape[0]
        x = self.tok(ids)[:, None] + self.pos[:, pos:pos + 1]
        for i in range(len(self.qkv)):
            q, k, v = self.qkv[i](self.n1[i](x)).view(b, 1, 3, self.h, self.d // self.h).permute(2, 0, 3, 1, 4)
            cache[i, 0, :, :, pos:pos + 1] = k
            cache[i, 1, :, :, pos:pos + 1] = v
            a = _F.scaled_dot_product_attention(q.to(cache.dtype), cache[i, 0, :, :, :pos + 1],
                                                cache[i, 1, :, :, :pos + 1])
            x = x + self.proj[i](a.to(x.dtype).transpose(1, 2).reshape(b, 1, self.d))
            x = x + self.fc2[i](_F.gelu(self.fc1[i](self.n2[i](x))))
        return (self.norm(x) @ self.tok.weight.T)[:, 0]


def _passwords(b, t, nchar, bos, eos, pad):
    """Synthetic passwords: a lowercase stem, digits and symbols at the end for some, per-password lengths 4..t-2;
    BOS first, EOS after, padding. Returns ids (b, t)."""
    lens = torch.randint(4, t - 1, (b, 1), device="cuda")
    pos = torch.arange(t, device="cuda")[None]
    stem = torch.randint(0, 26, (b, t), device="cuda")
    tail = torch.randint(26, nchar, (b, t), device="cuda")
    cut = lens - torch.randint(0, 4, (b, 1), device="cuda")
    chars = torch.where(pos < cut, stem, tail)
    ids = torch.where(pos < lens, chars, pad)
    ids = torch.where(pos == lens, eos, ids)
    return torch.cat([torch.full((b, 1), bos, device="cuda"), ids[:, :t - 1]], 1)


def _hash(ids):
    """A 31-bit polynomial hash of each row of character ids (int64 arithmetic modulo 2^31-1)."""
    h = torch.zeros(ids.shape[0], dtype=torch.int64, device="cuda")
    for i in range(ids.shape[1]):
        h = (h * 131 + ids[:, i] + 1) % (2 ** 31 - 1)
    return h


@_workload("learned password guessing, PassGPT (Rando et al. 2023) written by hand (random init): a GPT-2 of width 256, 6 layers, 8 heads over 94 password characters plus BOS, EOS and padding (tied output, 18 positions); 340 training steps under bf16 autocast on synthetic passwords in length buckets of 10-18 (drawn) and batches of 512-4096 (drawn, cut to 48k tokens), cross-entropy ignoring padding, AdamW with cosine; then 32 guessing rounds, each 8k-32k guesses (drawn) sampled with top-k (10-50 drawn) and temperature position by position against a bf16 KV cache (6 x 2 x B x 8 x 18 x 32), guesses hashed (a 31-bit polynomial hash), deduplicated against the growing sorted set of all earlier guesses by sort and adjacent comparison, matched against a held-out set of 1M passwords by searchsorted; new and matched counts read back per round, the guess set growing to about 0.6M hashes")
def passgpt_guess_sample(rng):
    nchar, maxlen = 94, _smoke(18, 10)
    bos, eos, pad = nchar, nchar + 1, nchar + 2
    vocab = nchar + 3
    d, layers, heads = _smoke(256, 32), _smoke(6, 2), _smoke(8, 2)
    model = _PassGpt(vocab, d, layers, heads, maxlen).cuda()
    steps = _smoke(340, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=6e-4, weight_decay=0.1)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    for step in range(steps):
        t = rng.choice(_smoke([10, 12, 14, 16, 18], [8, 10]))
        b = min(rng.choice(_smoke([512, 1024, 2048, 4096], [4, 8])), _smoke(49152, 64) // t)
        ids = _passwords(b, t, nchar, bos, eos, pad)
        model.train()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(ids[:, :-1])
        lab = torch.where(ids[:, 1:] == pad, -100, ids[:, 1:])
        loss = _F.cross_entropy(logits.float().reshape(-1, vocab), lab.reshape(-1), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if (step + 1) % 85 == 0:
            loss.detach().cpu()
        del ids, logits, lab, loss
    model.eval()
    test = _hash(_passwords(_smoke(1_000_000, 500), maxlen, nchar, bos, eos, pad)).sort().values
    seen = torch.empty(0, dtype=torch.int64, device="cuda")
    dh = d // heads
    for rnd in range(_smoke(32, 2)):
        b = rng.choice(_smoke([8192, 16384, 32768], [16, 32]))
        k, temp = rng.randint(10, 50), rng.uniform(0.8, 1.2)
        cache = torch.empty(layers, 2, b, heads, maxlen, dh, device="cuda", dtype=torch.bfloat16)
        with torch.no_grad():
            tok = torch.full((b,), bos, device="cuda")
            out = [tok]
            for pos in range(maxlen - 1):
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = model.decode(tok, pos, cache).float()
                val, idx = (logits / temp).topk(k, -1)
                pick = torch.multinomial(val.softmax(-1), 1)
                tok = idx.gather(1, pick)[:, 0]
                out.append(tok)
                del logits, val, idx, pick
            guesses = torch.stack(out, 1)
            del cache, out
            # everything after the first EOS becomes padding
            ended = (guesses == eos).long().cumsum(1) - (guesses == eos).long()
            guesses = torch.where(ended > 0, pad, guesses)
            h = _hash(guesses[:, 1:]).sort().values
            fresh = torch.ones_like(h, dtype=torch.bool)
            fresh[1:] = h[1:] != h[:-1]
            if seen.shape[0] > 0:
                j = torch.searchsorted(seen, h).clamp_max(seen.shape[0] - 1)
                fresh &= seen[j] != h
            j = torch.searchsorted(test, h).clamp_max(test.shape[0] - 1)
            hit = (test[j] == h) & fresh
            seen = torch.cat([seen, h]).sort().values
            torch.stack([fresh.sum(), hit.sum()]).cpu()
            del guesses, ended, h, fresh, j, hit


# ---------------------------------------------------------------- NEUZZ neural program smoothing


class _Neuzz(_nn.Module):
    """NEUZZ's smoothing network: normalised input bytes to one hidden layer (4096, ReLU) to an edge-coverage
    logit per edge."""

    def __init__(self, nbytes, hidden, edges):
        super().__init__()
        self.l1, self.l2 = _nn.Linear(nbytes, hidden), _nn.Linear(hidden, edges)

    def forward(self, x):
        return self.l2(_F.relu(self.l1(x)))


def _oracle(x, prog_w, prog_b):
    """The program under test, a synthetic one: edge e is covered when a fixed sparse random linear function of the
    input bytes crosses its threshold (M, edges) as float 0/1."""
    return ((x / 255) @ prog_w > prog_b).float()


@_workload("neural program smoothing for fuzzing, NEUZZ (She et al. 2019) written by hand (random init): a synthetic program under test (inputs of 4-8 KB drawn, 2k-6k edges drawn, each edge covered when a fixed sparse random linear function of the bytes crosses its threshold), an initial corpus of 2,048 seeds; 14 rounds, each retraining the smoothing MLP (bytes/255 to 4096 ReLU to an edge logit each; bf16 autocast, Adam, binary cross-entropy) for 240-320 steps of batches of 64-256 seeds from the whole current corpus, then gradient-guided mutation: 48-96 batches of 64 seeds each paired with a chosen edge, the gradient of that edge's logit with respect to the input bytes by autograd, the top-k bytes by gradient magnitude for k of 2 to 512 (doubling), mutants stepping those bytes both ways to the bounds, run through the oracle, novelty against the global coverage bitmap, the 96-256 most novel mutants (drawn) per round appended to the corpus with their coverage; coverage counts read back per round")
def neuzz_smooth_fuzz(rng):
    nbytes = _smoke(rng.choice([4096, 6144, 8192]), 64)
    edges = _smoke(rng.randint(2000, 6000), 32)
    hidden = _smoke(4096, 32)
    dens = torch.rand(nbytes, edges, device="cuda") < 0.01
    prog_w = torch.randn(nbytes, edges, device="cuda") * dens
    del dens
    prog_b = torch.rand(edges, device="cuda") * 3 + 0.5
    corpus = torch.randint(0, 256, (_smoke(2048, 64), nbytes), device="cuda").float()
    cov = _oracle(corpus, prog_w, prog_b)
    seen = cov.amax(0)
    model = _Neuzz(nbytes, hidden, edges).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    ks = [2 ** i for i in range(1, _smoke(10, 3))]
    for rnd in range(_smoke(14, 2)):
        n = corpus.shape[0]
        model.train()
        for step in range(_smoke(rng.randint(240, 320), 2)):
            b = rng.choice(_smoke([64, 128, 256], [8]))
            idx = torch.randint(0, n, (b,), device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logit = model(corpus[idx] / 255)
            loss = _F.binary_cross_entropy_with_logits(logit.float(), cov[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            del idx, logit, loss
        model.eval()
        pool, pcov, pnov = [], [], []
        for _ in range(_smoke(rng.randint(48, 96), 2)):
            sidx = torch.randint(0, n, (_smoke(64, 4),), device="cuda")
            eidx = torch.tensor([rng.randrange(edges) for _ in range(_smoke(64, 4))], device="cuda")
            x = (corpus[sidx] / 255).requires_grad_(True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = model(x).float().gather(1, eidx[:, None]).sum()
            (g,) = torch.autograd.grad(out, x)
            with torch.no_grad():
                order = g.abs().topk(ks[-1], 1).indices
                sign = g.gather(1, order).sign()
                base = corpus[sidx]
                for k in ks:
                    for direction in (1.0, -1.0):
                        step = torch.zeros_like(base).scatter_(1, order[:, :k], direction * 255 * sign[:, :k])
                        mut = (base + step).clamp(0, 255)
                        c = _oracle(mut, prog_w, prog_b)
                        nov = (c * (1 - seen)).sum(1)
                        pool.append(mut)
                        pcov.append(c)
                        pnov.append(nov)
                        del step
            del sidx, eidx, x, out, g, order, sign, base
            if len(pool) >= 16:
                # keep the pool bounded: the most novel of what has been tried so far
                keep = torch.cat(pnov).topk(_smoke(256, 4)).indices
                pool, pcov, pnov = [torch.cat(pool)[keep]], [torch.cat(pcov)[keep]], [torch.cat(pnov)[keep]]
        with torch.no_grad():
            m = _smoke(rng.randint(96, 256), 4)
            best = torch.cat(pnov).topk(m).indices
            newx, newc = torch.cat(pool)[best], torch.cat(pcov)[best]
            corpus = torch.cat([corpus, newx])
            cov = torch.cat([cov, newc])
            seen = torch.maximum(seen, newc.amax(0))
            torch.stack([seen.sum(), cov.sum(1).mean()]).cpu()
            del pool, pcov, pnov, best, newx, newc

"""The fifty-first batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch50_b.py are): security and network-traffic analysis on the GPU, written in torch alone, first half. A
network intrusion detector over flow records (a transformer over the packets of each flow, flows truncated to
drawn lengths with padding masks, twelve imbalanced classes, class-weighted or focal loss, an evaluation sweep over
truncation lengths with a confusion matrix), MalConv2-style malware detection over raw executable bytes (Raff et
al. 2018 and 2021: a byte embedding, a gated strided convolution and a global max pool, the max found without grad
over chunks of files of 0.25-4 MB and only the winning windows recomputed with grad, long held-out files scored in
chunks), LogBERT log anomaly detection (Guo et al. 2021: masked log-key prediction and a hypersphere loss over
sessions of drawn length, then a scoring service over a stream of session batches uploaded on a side stream, top-g
misses per session, periodic online updates), and provenance-graph intrusion detection in the style of ThreatTrace
(Wang et al. 2022: GraphSAGE over typed system-call provenance graphs of drawn size, node-type prediction, nodes
whose type is mispredicted flagged, a large held-out host graph scored). Same conventions as the earlier batches:
nothing downloaded, data drawn at random on the device (flows, bytes, sessions, graphs), `rng` the workload's
random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)` so that
RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: step counts, lengths and batch sizes are
fixed on the host, decisions made on the device are torch.where, masks multiplied in, topk and argmax
(boolean-mask indexing is avoided); losses and detection results are read back only at logging points (the
LogBERT service returns each request's flags, as a service must). logbert_session_serve uses a side stream
(uploads waited on by event, the tensors record_stream'ed); the others are single-stream. The transformers and the
GNN run under bf16 autocast; MalConv2's convolutions too, its max search and the losses in fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch51_b.py's header says the same of its half): every workload of this half
was run whole at its final real sizes (RECORD_SMOKE unset) on PyTorch's meta device with the helper's runner
(/tmp/b51/meta_run.py, not committed, a copy of /work/notes/meta_run.py: smoke_cpu.py's patching with "cuda" mapped
to "meta", readbacks answered with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking a math
path, streams, events and pinned memory no-ops; boolean-mask indexing, which the meta device cannot size, is
avoided), its op outputs counted there (events about 1.8x that count) and its peak live bytes tracked:
flow_ids_transformer_train 324,987 op outputs, peak 3.48 GB; malconv2_bytes_train 318,298, 0.49 GB;
logbert_session_serve 315,818, 2.63 GB; provenance_sage_detect_train 335,347, 6.34 GB (peaks in fp32 where autocast
would take bf16; provenance_sage_detect_train's is the held-out 3M-edge graph's edge messages). record_new51.sh's
header has them too, with the first runs that led to resizes. The CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock as _Block

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- flow-level intrusion detection


class _FlowTx(_nn.Module):
    """Per-packet features (16) to width d, learned positions, pre-norm blocks with a key-padding mask, masked mean
    pooling, a classifier."""

    def __init__(self, nfeat, d, layers, heads, ncls, maxlen):
        super().__init__()
        self.inp = _nn.Linear(nfeat, d)
        self.pos = _nn.Parameter(torch.randn(1, maxlen, d) * 0.02)
        self.blocks = _nn.ModuleList([_Block(d, heads) for _ in range(layers)])
        self.norm = _nn.LayerNorm(d)
        self.head = _nn.Linear(d, ncls)

    def forward(self, x, keep):
        t = x.shape[1]
        h = self.inp(x) + self.pos[:, :t]
        m = keep[:, None, None, :]
        for blk in self.blocks:
            h = blk(h, m)
        w = keep.to(h.dtype)[..., None]
        pooled = (h * w).sum(1) / w.sum(1).clamp_min(1)
        return self.head(self.norm(pooled))


def _flows(bsz, t, prior, proto, freq, nfeat):
    """A batch of synthetic flows: labels drawn from the imbalanced prior, per-flow lengths (the rest padding),
    per-packet features (size, inter-arrival, direction, flag bits, window ...) around the class prototype with a
    class-dependent periodic pattern. Returns (x, keep mask, labels)."""
    y = torch.multinomial(prior, bsz, replacement=True)
    lens = torch.randint(max(2, t // 4), t + 1, (bsz,), device="cuda")
    keep = torch.arange(t, device="cuda")[None] < lens[:, None]
    pos = torch.arange(t, device="cuda", dtype=torch.float32)
    x = proto[y][:, None] + 0.8 * torch.randn(bsz, t, nfeat, device="cuda")
    x = x + torch.sin(pos[None, :, None] * freq[y][:, None, :])
    return x * keep[..., None], keep, y


@_workload("network intrusion detection over flow records written by hand (random init): a transformer over each flow's packets (16 features per packet: size, inter-arrival, direction, flag bits ...; width 256, 4 pre-norm layers, 8 heads, learned positions, key-padding masks, masked mean pooling) classifying 12 classes (benign plus 11 attacks, an imbalanced prior with benign near 70%); synthetic flows made on the device around class prototypes, flows truncated to 16-256 packets (drawn per batch, per-flow lengths drawn below that, padded) in batches of 64-512 (drawn, cut to 32k packets); 630 steps under bf16 autocast, the loss class-weighted cross-entropy or focal (gamma 2, drawn), AdamW with warmup and cosine; every 126 steps an evaluation sweep without grad over truncation lengths 16-512 (2 batches of up to 512 flows each, cut to 64k packets), a confusion matrix by one-hot matmul, per-class recall and precision read back")
def flow_ids_transformer_train(rng):
    nfeat, ncls = 16, 12
    d, layers, heads, maxlen = _smoke(256, 32), _smoke(4, 1), _smoke(8, 2), _smoke(512, 32)
    model = _FlowTx(nfeat, d, layers, heads, ncls, maxlen).cuda()
    attack = [rng.uniform(0.2, 3.0) for _ in range(ncls - 1)]
    prior = torch.tensor([0.7] + [0.3 * a / sum(attack) for a in attack], device="cuda")
    weight = prior.rsqrt()
    weight = weight / weight.mean()
    proto = torch.randn(ncls, nfeat, device="cuda")
    freq = torch.rand(ncls, nfeat, device="cuda") * 0.5
    focal = rng.random() < 0.5
    steps = _smoke(630, 4)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.05)
    warm = _smoke(50, 1)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    for step in range(steps):
        t = rng.choice(_smoke([16, 32, 64, 128, 256], [8, 16]))
        bsz = min(rng.choice(_smoke([64, 128, 256, 512], [4, 8])), _smoke(32768, 64) // t)
        x, keep, y = _flows(bsz, t, prior, proto, freq, nfeat)
        model.train()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x, keep)
        if focal:
            ce = _F.cross_entropy(logits.float(), y, reduction="none")
            loss = ((1 - torch.exp(-ce)) ** 2 * ce * weight[y]).mean()
        else:
            loss = _F.cross_entropy(logits.float(), y, weight=weight)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        del x, keep, y, logits, loss
        if (step + 1) % _smoke(126, 2) == 0:
            model.eval()
            out = []
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for t in _smoke([16, 32, 64, 128, 256, 512], [8, 32]):
                    conf = torch.zeros(ncls, ncls, device="cuda")
                    for _ in range(_smoke(2, 1)):
                        x, keep, y = _flows(min(_smoke(512, 8), _smoke(65536, 128) // t), t, prior, proto, freq,
                                            nfeat)
                        pred = model(x, keep).argmax(-1)
                        conf += _F.one_hot(y, ncls).float().T @ _F.one_hot(pred, ncls).float()
                        del x, keep, y, pred
                    diag = conf.diagonal()
                    out.append(torch.stack([diag / conf.sum(1).clamp_min(1), diag / conf.sum(0).clamp_min(1)]))
            torch.stack(out).cpu()
            del out, conf


# ---------------------------------------------------------------- MalConv2 over raw bytes


class _MalConv(_nn.Module):
    """MalConv: a byte embedding (256 values and padding), a gated convolution of window and stride `win`, a
    global max pool over positions, two dense layers to a logit."""

    def __init__(self, ch, win, emb):
        super().__init__()
        self.win = win
        self.emb = _nn.Embedding(257, emb, padding_idx=0)
        self.conv = _nn.Conv1d(emb, ch, win, stride=win)
        self.gate = _nn.Conv1d(emb, ch, win, stride=win)
        self.fc1, self.fc2 = _nn.Linear(ch, ch), _nn.Linear(ch, 1)

    def feats(self, x):
        e = self.emb(x.long()).transpose(1, 2)
        return self.conv(e) * torch.sigmoid(self.gate(e))

    def head(self, z):
        return self.fc2(_F.relu(self.fc1(z)))[:, 0]


def _max_search(model, x, chunk):
    """MalConv2's fixed-memory max pool, without grad: each chunk of positions through the gated convolution, the
    running maximum and its window index per file and channel (B, ch)."""
    best, arg = None, None
    for c0 in range(0, x.shape[1], chunk):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            f = model.feats(x[:, c0:c0 + chunk]).float()
        m, i = f.max(2)
        i = i + c0 // model.win
        if best is None:
            best, arg = m, i
        else:
            better = m > best
            best, arg = torch.where(better, m, best), torch.where(better, i, arg)
        del f, m, i
    return best, arg


def _malconv_logits(model, x, arg, ch):
    """The winning window of every (file, channel) gathered from the bytes and recomputed with grad; channel c's
    activation taken from window c (a diagonal gather): the pooled features (B, ch), then the head."""
    b = x.shape[0]
    idx = arg[..., None] * model.win + torch.arange(model.win, device="cuda")
    xb = x.gather(1, idx.reshape(b, -1)).view(b * ch, model.win)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        f = model.feats(xb).view(b, ch, ch)
    r = torch.arange(ch, device="cuda")
    return model.head(f[:, r, r].float())


def _exe_batch(b, length):
    """A batch of synthetic executables: bytes 1..256 (0 is padding) as int16, each file's length drawn between a
    quarter of the batch length and all of it, the rest padding; labels half malicious."""
    x = torch.randint(1, 257, (b, length), device="cuda", dtype=torch.int16)
    lens = torch.randint(length // 4, length + 1, (b, 1), device="cuda")
    x = x * (torch.arange(length, device="cuda")[None] < lens)
    return x, torch.randint(0, 2, (b,), device="cuda").float()


@_workload("MalConv2-style malware detection over raw executable bytes written by hand (random init; Raff et al. 2018, 2021): a byte embedding of 8, a gated convolution of window and stride 512 with 128 channels, a global max pool and two dense layers; synthetic executables (bytes as int16 made on the device, files of 256 KB-4 MB drawn per batch with per-file lengths below that, padded) in batches cut to 16M bytes; MalConv2's fixed-memory training: the max over positions found without grad in chunks of 4M bytes (running max and window index per file and channel, bf16 autocast), then only the winning windows gathered and recomputed with grad, the pooled channel taken diagonally; binary cross-entropy, Adam with gradient clipping, 2,650 steps; every 530 steps 48 held-out files of 4-16 MB scored in chunks without grad, scores read back")
def malconv2_bytes_train(rng):
    ch, win = _smoke(128, 8), _smoke(512, 16)
    model = _MalConv(ch, win, 8).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    budget, chunk_bytes = _smoke(16 * 2 ** 20, 8192), _smoke(4 * 2 ** 20, 2048)
    for step in range(_smoke(2650, 4)):
        length = rng.choice(_smoke([2 ** 18, 2 ** 19, 2 ** 20, 2 ** 21, 2 ** 22], [1024, 2048]))
        b = max(1, min(rng.choice([8, 16, 32, 64]), budget // length))
        x, y = _exe_batch(b, length)
        model.train()
        with torch.no_grad():
            _, arg = _max_search(model, x, max(win, chunk_bytes // b // win * win))
        logit = _malconv_logits(model, x, arg, ch)
        loss = _F.binary_cross_entropy_with_logits(logit, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        del x, y, arg, logit, loss
        if (step + 1) % _smoke(530, 2) == 0:
            model.eval()
            scores = []
            with torch.no_grad():
                for _ in range(_smoke(12, 1)):
                    length = rng.choice(_smoke([2 ** 22, 2 ** 23, 2 ** 24], [4096]))
                    x, _ = _exe_batch(4, length)
                    _, arg = _max_search(model, x, max(win, chunk_bytes // 4 // win * win))
                    scores.append(torch.sigmoid(_malconv_logits(model, x, arg, ch)))
                    del x, arg
            torch.cat(scores).cpu()
            del scores


# ---------------------------------------------------------------- LogBERT session scoring service


class _LogBert(_nn.Module):
    """LogBERT: log-key embeddings plus positions, a [DIST] token first, pre-norm blocks with a padding mask, a
    masked-key prediction head; the [DIST] token's output is the session's hypersphere embedding."""

    def __init__(self, vocab, d, layers, heads, maxlen):
        super().__init__()
        self.emb = _nn.Embedding(vocab + 3, d)  # keys, then [PAD], [MASK], [DIST]
        self.pos = _nn.Parameter(torch.randn(1, maxlen + 1, d) * 0.02)
        self.blocks = _nn.ModuleList([_Block(d, heads) for _ in range(layers)])
        self.norm = _nn.LayerNorm(d)
        self.head = _nn.Linear(d, vocab)

    def forward(self, keys, keep):
        b, t = keys.shape
        dist = torch.full((b, 1), self.emb.num_embeddings - 1, device=keys.device, dtype=keys.dtype)
        h = self.emb(torch.cat([dist, keys], 1)) + self.pos[:, :t + 1]
        m = torch.cat([torch.ones(b, 1, dtype=torch.bool, device=keys.device), keep], 1)[:, None, None, :]
        for blk in self.blocks:
            h = blk(h, m)
        h = self.norm(h)
        return self.head(h[:, 1:]), h[:, 0]


def _sessions(b, t, vocab, trans):
    """Synthetic log sessions: key sequences of a workflow (a walk over workflow states, each state emitting one
    of four keys from `trans` (vocab, 4)), per-session lengths, padding elsewhere."""
    start = torch.randint(0, vocab, (b, 1), device="cuda")
    walk = (start + (torch.randint(0, 4, (b, t), device="cuda") + 1).cumsum(1)) % vocab
    keys = trans[walk, torch.randint(0, 4, (b, t), device="cuda")]
    lens = torch.randint(max(2, t // 3), t + 1, (b, 1), device="cuda")
    keep = torch.arange(t, device="cuda")[None] < lens
    return torch.where(keep, keys, vocab), keep


def _mask_keys(keys, keep, vocab, frac):
    """LogBERT's masking: a fraction of the real keys replaced by [MASK]; labels elsewhere -100."""
    hide = (torch.rand(keys.shape, device="cuda") < frac) & keep
    return torch.where(hide, vocab + 1, keys), torch.where(hide, keys, -100), hide


def _logbert_step(model, opt, center, keys, keep, vocab, nu):
    inp, lab, _ = _mask_keys(keys, keep, vocab, 0.15)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits, emb = model(inp, keep)
    mlkp = _F.cross_entropy(logits.float().reshape(-1, vocab), lab.reshape(-1), ignore_index=-100)
    vhm = ((emb.float() - center) ** 2).sum(1).mean()
    loss = mlkp + nu * vhm
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    with torch.no_grad():
        center.mul_(0.99).add_(0.01 * emb.float().mean(0))
    return loss.detach()


@_workload("LogBERT log anomaly detection (Guo et al. 2021) written by hand (random init) then served: log keys of a vocabulary of 200-800 (drawn) from a synthetic workflow made on the device, a BERT of width 256, 4 pre-norm layers, 8 heads with a [DIST] token; training 260 steps under bf16 autocast on sessions of 32-512 keys (drawn per batch, per-session lengths below that, padded) in batches cut to 16k keys, masked log-key prediction on 15% of keys plus the hypersphere (VHM) loss around an EMA center, Adam; then a scoring service of 540 requests, each 16-256 sessions of 32-512 keys (drawn, cut to 32k keys) uploaded from reused pinned host buffers on a side stream one request ahead (waited on by event, record_stream'ed), two masking passes under no_grad, the rank of every masked key among the predictions, top-g misses (g 5-15 drawn) counted per session and the distance to the center, each request's flags and scores read back; every 90 requests an online update of 6 steps on sessions marked normal")
def logbert_session_serve(rng):
    vocab = _smoke(rng.randint(200, 800), 16)
    d, layers, heads, maxlen = _smoke(256, 32), _smoke(4, 1), _smoke(8, 2), _smoke(512, 32)
    model = _LogBert(vocab, d, layers, heads, maxlen).cuda()
    trans = torch.randint(0, vocab, (vocab, 4), device="cuda")
    center = torch.zeros(d, device="cuda")
    opt = torch.optim.Adam(model.parameters(), lr=2e-4)
    nu = 0.1
    lengths = _smoke([32, 64, 128, 256, 512], [8, 16, 32])
    for step in range(_smoke(260, 3)):
        t = rng.choice(lengths)
        keys, keep = _sessions(min(rng.choice([32, 64, 128, 256]), _smoke(16384, 64) // t), t, vocab, trans)
        model.train()
        loss = _logbert_step(model, opt, center, keys, keep, vocab, nu)
        del keys, keep
        if (step + 1) % 50 == 0:
            loss.cpu()

    # the service: requests' sessions arrive as int32 key tables in pinned host buffers, uploaded one ahead
    smax, tmax = _smoke(256, 8), maxlen
    cap = _smoke(32768, 256)
    host_keys = [torch.randint(0, vocab, (cap,), dtype=torch.int32).pin_memory() for _ in range(2)]
    host_lens = [torch.randint(1, tmax + 1, (smax,), dtype=torch.int32).pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    done = [None, None]

    def fetch(i):
        t = rng.choice(lengths)
        b = min(rng.choice(_smoke([16, 32, 64, 128, 256], [2, 4])), cap // t)
        s = i % 2
        if done[s] is not None:
            done[s].synchronize()
        with torch.cuda.stream(side):
            keys = host_keys[s][:b * t].view(b, t).to("cuda", non_blocking=True)
            lens = host_lens[s][:b].to("cuda", non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        done[s] = ev
        return keys, lens, ev

    nxt = fetch(0)
    for req in range(_smoke(540, 4)):
        raw, lens, ev = nxt
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        raw.record_stream(cur)
        lens.record_stream(cur)
        nxt = fetch(req + 1)
        g = rng.randint(5, 15)
        model.eval()
        with torch.no_grad():
            b, t = raw.shape
            keep = torch.arange(t, device="cuda")[None] < lens[:, None].clamp(1, t)
            keys = torch.where(keep, raw.long(), vocab)
            misses = torch.zeros(b, device="cuda")
            dist = None
            for _ in range(2):
                inp, lab, hide = _mask_keys(keys, keep, vocab, 0.15)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits, emb = model(inp, keep)
                logits = logits.float()
                true = logits.gather(2, keys.clamp_max(vocab - 1)[..., None])
                rank = (logits > true).sum(-1)
                misses += ((rank >= g) & hide).float().sum(1)
                dist = ((emb.float() - center) ** 2).sum(1)
                del inp, lab, hide, logits, emb, true, rank
            flags = (misses > 2) | (dist > dist.mean() * 3)
            torch.stack([flags.float(), misses, dist], 1).cpu()
        if (req + 1) % _smoke(90, 2) == 0:
            model.train()
            for _ in range(_smoke(6, 1)):
                t = rng.choice(lengths)
                k2, kp2 = _sessions(min(64, _smoke(16384, 64) // t), t, vocab, trans)
                _logbert_step(model, opt, center, k2, kp2, vocab, nu)
                del k2, kp2
        del raw, lens, keep, keys, misses, dist, flags


# ---------------------------------------------------------------- provenance-graph intrusion detection


class _ProvSage(_nn.Module):
    """GraphSAGE with edge-type-aware messages (ThreatTrace-style): node features are per-edge-type in and out
    degree histograms; each layer a self transform plus the mean of neighbour messages (source state times the
    edge type's vector), LayerNorm and ReLU; a node-type classifier."""

    def __init__(self, nrel, d, layers, ntype):
        super().__init__()
        self.inp = _nn.Linear(2 * nrel, d)
        self.rel = _nn.Parameter(torch.randn(layers, nrel, d) * 0.5 + 1)
        self.self_l = _nn.ModuleList([_nn.Linear(d, d) for _ in range(layers)])
        self.nei_l = _nn.ModuleList([_nn.Linear(d, d, bias=False) for _ in range(layers)])
        self.norms = _nn.ModuleList([_nn.LayerNorm(d) for _ in range(layers)])
        self.head = _nn.Linear(d, ntype)

    def forward(self, feat, src, dst, etype, inv_deg):
        h = self.inp(feat)
        for i in range(len(self.self_l)):
            msg = h[src] * self.rel[i][etype]
            agg = msg.new_zeros(h.shape).index_add_(0, dst, msg) * inv_deg
            h = _F.relu(self.norms[i](self.self_l[i](h) + self.nei_l[i](agg)))
            del msg, agg
        return self.head(h)


def _prov_graph(n, e, nrel, ntype):
    """A synthetic provenance graph: node types (process, file, socket, pipe, registry, module ...), typed edges
    (read, write, exec, fork, connect ...) whose type depends on the endpoints' types, in/out degree histograms
    per edge type as features. Returns (features, src, dst, edge type, 1/in-degree, node type)."""
    ntyp = torch.randint(0, ntype, (n,), device="cuda")
    src = torch.randint(0, n, (e,), device="cuda")
    dst = torch.randint(0, n, (e,), device="cuda")
    etype = (ntyp[src] * 3 + ntyp[dst] + torch.randint(0, 2, (e,), device="cuda")) % nrel
    oh = _F.one_hot(etype, nrel).float()
    feat = torch.cat([torch.zeros(n, nrel, device="cuda").index_add_(0, dst, oh),
                      torch.zeros(n, nrel, device="cuda").index_add_(0, src, oh)], 1).log1p()
    deg = torch.zeros(n, device="cuda").index_add_(0, dst, torch.ones(e, device="cuda"))
    return feat, src, dst, etype, (1 / deg.clamp_min(1))[:, None], ntyp


@_workload("provenance-graph intrusion detection in the style of ThreatTrace (Wang et al. 2022) written by hand (random init): GraphSAGE with edge-type-aware mean aggregation (index_add over edges, 3 layers of width 128, LayerNorm) over typed system-call provenance graphs (8 node types, 16 edge types; node features the per-edge-type in/out degree histograms); each step a host window graph of 20k-160k nodes and 4-12 edges per node (drawn, cut to 1M edges) made on the device, node-type prediction by cross-entropy under bf16 autocast, Adam with gradient clipping, 1,700 steps; every 340 steps a held-out host graph of 600k nodes and 3M edges scored without grad, nodes whose type is mispredicted flagged, the 1,000 most anomalous by topk and the flagged fraction read back")
def provenance_sage_detect_train(rng):
    nrel, ntype = 16, 8
    d, layers = _smoke(128, 16), _smoke(3, 2)
    model = _ProvSage(nrel, d, layers, ntype).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(_smoke(1700, 4)):
        n = _smoke(rng.randint(20_000, 160_000), rng.randint(100, 300))
        e = min(n * rng.choice([4, 6, 8, 12]), _smoke(1_000_000, 3000))
        feat, src, dst, etype, inv_deg, ntyp = _prov_graph(n, e, nrel, ntype)
        model.train()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(feat, src, dst, etype, inv_deg)
        loss = _F.cross_entropy(logits.float(), ntyp)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        del feat, src, dst, etype, inv_deg, ntyp, logits, loss
        if (step + 1) % _smoke(340, 2) == 0:
            model.eval()
            with torch.no_grad():
                feat, src, dst, etype, inv_deg, ntyp = _prov_graph(_smoke(600_000, 500), _smoke(3_000_000, 3000),
                                                                   nrel, ntype)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    prob = model(feat, src, dst, etype, inv_deg).float().softmax(-1)
                score = 1 - prob.gather(1, ntyp[:, None])[:, 0]
                flagged = (prob.argmax(-1) != ntyp).float().mean()
                top = score.topk(_smoke(1000, 10))
                torch.cat([top.values, top.indices.float(), flagged[None]]).cpu()
                del feat, src, dst, etype, inv_deg, ntyp, prob, score, flagged, top

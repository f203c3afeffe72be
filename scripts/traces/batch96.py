"""The ninety-sixth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch95_b.py are): speech technology, call centres and voice assistants, written in torch alone, first half.
Attention-decoder speech recognition training (a Conformer encoder over log-mel features of drawn utterance lengths
with SpecAugment masks, a transformer decoder over subword targets of drawn lengths under teacher forcing), speaker
identification training (a 2-d residual convnet over log-mel crops of a drawn length, attentive statistics pooling
and an additive-angular-margin softmax over the training speakers), diarization segment-graph training (a
message-passing network by index_select and index_add over k-nearest-neighbour and temporal graphs of speech
segments of drawn recordings, same-speaker edge classification) and a spoken-intent service (int16 audio uploaded on
a side stream, a log-mel front end on the device, a convolutional subsampler and a transformer encoder, intent and
domain heads). Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in
reused pinned host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled
choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's
value: utterance, target and recording lengths and batch sizes are fixed on the host, padding handled by masks
multiplied in or by torch.where / masked_fill, no boolean-mask indexing; losses and metrics are read back only at
logging points or once per request. spoken_intent_serve uploads its audio on a side stream (two reused pinned host
buffers, one request ahead, the main stream waiting on an event, the tensors record_stream'ed, through
workload_helpers.SideUploads); the other three are single-stream. The models run under bf16 autocast (the front
end's Fourier transform in fp32). Every position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new96.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and for
which of them the CPU smoke run (RECORD_SMOKE=1) ran.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, _mha, _sincos, keep_mask, mlp, rfftfreq

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _time_freq_masks(x, lengths, n_freq_masks, max_f, n_time_masks, max_t):
    """SpecAugment on (B, T, F) features: bands of frequency and spans of time zeroed, their starts and widths
    drawn on the device per utterance (time spans within each utterance's length)."""
    b, t, f = x.shape
    fr = torch.arange(f, device=x.device)[None, None, :]
    tr = torch.arange(t, device=x.device)[None, :, None]
    lens = torch.tensor(lengths, device=x.device, dtype=torch.float32)[:, None, None]
    drop = torch.zeros(b, t, f, dtype=torch.bool, device=x.device)
    for _ in range(n_freq_masks):
        w = torch.randint(0, max_f + 1, (b, 1, 1), device=x.device)
        f0 = (torch.rand(b, 1, 1, device=x.device) * (f - w)).long()
        drop = drop | ((fr >= f0) & (fr < f0 + w))
    for _ in range(n_time_masks):
        w = torch.randint(0, max_t + 1, (b, 1, 1), device=x.device)
        t0 = (torch.rand(b, 1, 1, device=x.device) * (lens - w).clamp(min=1)).long()
        drop = drop | ((tr >= t0) & (tr < t0 + w))
    return x.masked_fill(drop, 0.0)


# ---------------------------------------------------------------- attention-decoder ASR (Conformer encoder)


class _ConformerBlock(_nn.Module):
    """Macaron feed-forward halves around self-attention under a key mask and a convolution module (pointwise
    convolution, GLU, depthwise convolution over time with padded frames zeroed first, batch norm, SiLU, pointwise);
    a final LayerNorm."""

    def __init__(self, d, heads, kernel):
        super().__init__()
        self.h = heads
        self.ff1 = _nn.Sequential(_nn.LayerNorm(d), mlp(d, 4 * d, d, act=_nn.SiLU))
        self.ff2 = _nn.Sequential(_nn.LayerNorm(d), mlp(d, 4 * d, d, act=_nn.SiLU))
        self.n_att, self.qkv, self.o = _nn.LayerNorm(d), _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.n_conv = _nn.LayerNorm(d)
        self.pw1, self.pw2 = _nn.Conv1d(d, 2 * d, 1), _nn.Conv1d(d, d, 1)
        self.dw = _nn.Conv1d(d, d, kernel, padding=kernel // 2, groups=d)
        self.bn = _nn.BatchNorm1d(d)
        self.n_out = _nn.LayerNorm(d)

    def forward(self, x, keep, key):
        x = x + 0.5 * self.ff1(x)
        q, k, v = self.qkv(self.n_att(x)).chunk(3, -1)
        x = x + self.o(_mha(q, k, v, self.h, attn_mask=key))
        c = self.n_conv(x).masked_fill(~keep[..., None], 0.0).transpose(1, 2)
        c = self.pw2(_F.silu(self.bn(self.dw(_F.glu(self.pw1(c), dim=1)))))
        x = x + c.transpose(1, 2)
        x = x + 0.5 * self.ff2(x)
        return self.n_out(x)


class _DecoderBlock(_nn.Module):
    """Pre-norm causal self-attention, cross-attention to the encoder output under its key mask, a GELU MLP."""

    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.n1, self.n2, self.n3 = _nn.LayerNorm(d), _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.sa, self.sa_o = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.ca_q, self.ca_kv, self.ca_o = _nn.Linear(d, d), _nn.Linear(d, 2 * d), _nn.Linear(d, d)
        self.ff = mlp(d, 4 * d, d, act=_nn.GELU)

    def forward(self, y, self_mask, mem, mem_key):
        q, k, v = self.sa(self.n1(y)).chunk(3, -1)
        y = y + self.sa_o(_mha(q, k, v, self.h, attn_mask=self_mask))
        k, v = self.ca_kv(mem).chunk(2, -1)
        y = y + self.ca_o(_mha(self.ca_q(self.n2(y)), k, v, self.h, attn_mask=mem_key))
        return y + self.ff(self.n3(y))


class _ConformerAED(_nn.Module):
    def __init__(self, n_mels, c_sub, d, heads, enc_layers, kernel, dec_layers, vocab, max_tgt):
        super().__init__()
        self.sub = _nn.Sequential(_nn.Conv2d(1, c_sub, 3, 2, 1), _nn.ReLU(), _nn.Conv2d(c_sub, c_sub, 3, 2, 1),
                                  _nn.ReLU())
        self.sub_proj = _nn.Linear(c_sub * ((n_mels + 3) // 4), d)
        self.enc = _nn.ModuleList(_ConformerBlock(d, heads, kernel) for _ in range(enc_layers))
        self.tok, self.pos = _nn.Embedding(vocab, d), _nn.Embedding(max_tgt, d)
        self.dec = _nn.ModuleList(_DecoderBlock(d, heads) for _ in range(dec_layers))
        self.n_dec, self.out = _nn.LayerNorm(d), _nn.Linear(d, vocab)
        self.d = d

    def encode(self, feats, keep):
        s = self.sub(feats[:, None])  # (B, C, T/4, F/4)
        x = self.sub_proj(s.permute(0, 2, 1, 3).flatten(2))
        t = x.shape[1]
        x = x * math.sqrt(self.d) + _sincos(torch.arange(t, device=x.device), self.d).to(x.dtype)[None]
        x = _F.dropout(x, 0.1, self.training)
        key = keep[:, None, None, :]
        for blk in self.enc:
            x = blk(x, keep, key)
        return x, key

    def decode(self, ids, dec_keep, mem, mem_key):
        u = ids.shape[1]
        y = self.tok(ids) + self.pos(torch.arange(u, device=ids.device))[None]
        causal = torch.ones(u, u, dtype=torch.bool, device=ids.device).tril()
        mask = causal[None, None] & dec_keep[:, None, None, :]
        for blk in self.dec:
            y = blk(y, mask, mem, mem_key)
        return self.out(self.n_dec(y)).float()


@_workload("attention-decoder speech recognition training (random init, a Conformer encoder and a transformer decoder): 6-32 utterances a step (drawn; the last ones dropped, at least 2 kept, until the count times the longest is at most 16,000 frames), each of 300-1,600 frames of 80 log-mel features (drawn per utterance, padded to the step's longest rounded up to a multiple of 16, drawn on the device) with SpecAugment (2 frequency bands of up to 27 bins and 2 time spans of up to 40 frames, drawn on the device); two stride-2 3x3 convolutions (144 channels) to a quarter of the frames, sinusoidal positions, 8 Conformer blocks (width 256, 4 heads, macaron feed-forward halves of 1,024, depthwise convolution of kernel 15, batch norm) under a key mask; a 4-block transformer decoder (causal self-attention and cross-attention) over 8-120 subword targets per utterance (drawn, a 5,000-token vocabulary, a begin mark, padded to the longest plus one rounded up to a multiple of 8, a 128-row position table) under teacher forcing; cross-entropy with label smoothing 0.1, pads ignored; AdamW, clipping, bf16 autocast, 120 steps; the loss read back every 10 steps and every 30 steps a no-grad teacher-forced evaluation of 8 utterances of 1,600 frames and 120 tokens with the token accuracy read back")
def conformer_aed_asr_train(rng):
    n_mels, c_sub, d, heads = 80, _smoke(144, 8), _smoke(256, 32), _smoke(4, 2)
    enc_layers, dec_layers, kernel = _smoke(8, 1), _smoke(4, 1), _smoke(15, 5)
    vocab, max_tok, max_frames = _smoke(5000, 200), _smoke(120, 12), _smoke(1600, 96)
    max_tgt = -(-(max_tok + 1) // 8) * 8
    model = _ConformerAED(n_mels, c_sub, d, heads, enc_layers, kernel, dec_layers, vocab, max_tgt).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-3)
    budget = _smoke(16000, 200)

    def batch(frames, toks, augment):
        t = -(-max(frames) // 16) * 16
        feats = torch.randn(len(frames), t, n_mels, device="cuda") * keep_mask(frames, t)[..., None]
        if augment:
            feats = _time_freq_masks(feats, frames, 2, _smoke(27, 8), 2, _smoke(40, 8))
        keep = keep_mask([-(-f // 4) for f in frames], t // 4)
        u = -(-(max(toks) + 1) // 8) * 8
        seq = torch.randint(3, vocab, (len(toks), u), device="cuda")
        pos = torch.arange(u, device="cuda")[None]
        lens = torch.tensor(toks, device="cuda")[:, None]
        inp = torch.cat([torch.ones_like(seq[:, :1]), seq[:, :-1]], 1).masked_fill(pos > lens, 0)
        tgt = torch.where(pos < lens, seq, torch.where(pos == lens, 2, -100))
        return feats, keep, inp, pos <= lens, tgt

    steps = _smoke(120, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(6, 2), _smoke(32, 3))
        frames = [rng.randint(_smoke(300, 40), max_frames) for _ in range(b)]
        while len(frames) > 2 and len(frames) * max(frames) > budget:
            frames.pop()
        toks = [rng.randint(_smoke(8, 3), max_tok) for _ in frames]
        feats, keep, inp, dkeep, tgt = batch(frames, toks, True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            mem, key = model.encode(feats, keep)
            logits = model.decode(inp, dkeep, mem, key)
        loss = _F.cross_entropy(logits.flatten(0, 1), tgt.flatten(), ignore_index=-100, label_smoothing=0.1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        if step % 10 == 0:
            loss.detach().item()
        del feats, keep, inp, dkeep, tgt, mem, key, logits, loss
        if (step + 1) % _smoke(30, 2) == 0:
            model.eval()
            with torch.no_grad():
                n = _smoke(8, 2)
                feats, keep, inp, dkeep, tgt = batch([max_frames] * n, [max_tok] * n, False)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    mem, key = model.encode(feats, keep)
                    logits = model.decode(inp, dkeep, mem, key)
                ok = (tgt >= 0).float()
                acc = ((logits.argmax(-1) == tgt).float() * ok).sum() / ok.sum()
            acc.item()
            del feats, keep, inp, dkeep, tgt, mem, key, logits, ok, acc


# ---------------------------------------------------------------- speaker identification (2-d ResNet, AAM softmax)


class _SpkBlock(_nn.Module):
    """A basic residual block: two 3x3 convolutions with batch norm, a strided 1x1 shortcut when the shape changes."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1, self.b1 = _nn.Conv2d(cin, cout, 3, stride, 1, bias=False), _nn.BatchNorm2d(cout)
        self.c2, self.b2 = _nn.Conv2d(cout, cout, 3, 1, 1, bias=False), _nn.BatchNorm2d(cout)
        self.sc = None
        if stride != 1 or cin != cout:
            self.sc = _nn.Sequential(_nn.Conv2d(cin, cout, 1, stride, bias=False), _nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.b2(self.c2(_F.relu(self.b1(self.c1(x)))))
        return _F.relu(y + (x if self.sc is None else self.sc(x)))


class _SpeakerResNet(_nn.Module):
    """A 3x3 stem, four stages of basic blocks (the last three stride 2), attentive statistics pooling over time of
    the channel-by-frequency features, a linear embedding with batch norm."""

    def __init__(self, widths, blocks, n_mels, d_emb):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(1, widths[0], 3, 1, 1, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU())
        layers, c = [], widths[0]
        for i, (w, n) in enumerate(zip(widths, blocks)):
            for j in range(n):
                layers.append(_SpkBlock(c, w, 2 if (i > 0 and j == 0) else 1))
                c = w
        self.body = _nn.Sequential(*layers)
        feat = c * (n_mels // 2 ** (len(widths) - 1))
        self.att = _nn.Sequential(_nn.Conv1d(feat, 128, 1), _nn.Tanh(), _nn.Conv1d(128, feat, 1))
        self.emb, self.bn = _nn.Linear(2 * feat, d_emb), _nn.BatchNorm1d(d_emb)

    def forward(self, x):
        h = self.body(self.stem(x[:, None]))  # (B, C, F', T')
        h = h.flatten(1, 2)
        w = torch.softmax(self.att(h).float(), -1)
        hf = h.float()
        mu = (hf * w).sum(-1)
        sd = ((hf * hf * w).sum(-1) - mu * mu).clamp(min=1e-5).sqrt()
        return self.bn(self.emb(torch.cat([mu, sd], -1)))


@_workload("speaker identification training (random init, a 2-d residual convnet with an additive-angular-margin softmax): 32-80 crops a step (drawn from 32 up to the most that fit in 16,000 frames: 80 at 200 frames, 40 at 400), one crop length of 200-400 frames a step (drawn, a multiple of 8) of 80 log-mel features drawn on the device with per-utterance mean normalisation and one random time span of up to 40 frames zeroed; a 3x3 stem of 32 channels at full resolution and four stages of 2/2/2/2 basic residual blocks (32/64/128/256 channels, the last three stride 2), attentive statistics pooling (softmax attention weights over time per channel, weighted mean and standard deviation in fp32), a 192-wide embedding with batch norm; an additive-angular-margin softmax (scale 30, margin 0.2) over 6,000 training speakers; SGD with Nesterov momentum and weight decay, a cosine learning rate, bf16 autocast, 575 steps; the loss and training accuracy read back every 10 steps and every 115 steps a no-grad verification check of 64 trial pairs of 400 frames with the mean cosine score read back")
def speaker_resnet_aam_train(rng):
    widths, blocks = _smoke([32, 64, 128, 256], [4, 4, 8, 8]), _smoke([2, 2, 2, 2], [1, 1, 1, 1])
    n_mels, d_emb, n_spk = _smoke(80, 16), _smoke(192, 16), _smoke(6000, 50)
    model = _SpeakerResNet(widths, blocks, n_mels, d_emb).cuda().to(memory_format=torch.channels_last)
    head = _nn.Parameter(torch.randn(n_spk, d_emb, device="cuda") * 0.01)
    opt = torch.optim.SGD(list(model.parameters()) + [head], lr=0.1, momentum=0.9, nesterov=True, weight_decay=2e-5)
    scale, margin = 30.0, 0.2
    budget, lo_t, hi_t = _smoke(16000, 128), _smoke(200, 16), _smoke(400, 32)

    def crops(b, t):
        x = torch.randn(b, t, n_mels, device="cuda")
        x = x - x.mean(1, keepdim=True)
        w = torch.randint(0, _smoke(40, 4) + 1, (b, 1, 1), device="cuda")
        t0 = (torch.rand(b, 1, 1, device="cuda") * (t - w)).long()
        tr = torch.arange(t, device="cuda")[None, :, None]
        return x.masked_fill((tr >= t0) & (tr < t0 + w), 0.0).transpose(1, 2).contiguous()

    steps = _smoke(575, 3)
    for step in range(steps):
        model.train()
        for g in opt.param_groups:
            g["lr"] = 0.1 * 0.5 * (1 + math.cos(math.pi * step / steps))
        t = rng.randint(lo_t // 8, hi_t // 8) * 8
        b = rng.randint(_smoke(32, 2), max(_smoke(32, 2), min(_smoke(96, 4), budget // t)))
        x = crops(b, t)
        y = torch.randint(0, n_spk, (b,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            e = model(x)
        cos = _F.normalize(e.float(), dim=-1) @ _F.normalize(head, dim=-1).t()
        sin = (1 - cos * cos).clamp(min=1e-6).sqrt()
        phi = cos * math.cos(margin) - sin * math.sin(margin)
        phi = torch.where(cos > math.cos(math.pi - margin), phi, cos - math.sin(math.pi - margin) * margin)
        onehot = _F.one_hot(y, n_spk).bool()
        logits = scale * torch.where(onehot, phi, cos)
        loss = _F.cross_entropy(logits, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 10 == 0:
            torch.stack([loss.detach(), (cos.argmax(-1) == y).float().mean()]).tolist()
        del x, y, e, cos, sin, phi, onehot, logits, loss
        if (step + 1) % _smoke(115, 2) == 0:
            model.eval()
            with torch.no_grad():
                n = _smoke(64, 2)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    ea, eb = model(crops(n, hi_t)), model(crops(n, hi_t))
                score = (_F.normalize(ea.float(), dim=-1) * _F.normalize(eb.float(), dim=-1)).sum(-1).mean()
            score.item()
            del ea, eb, score


# ---------------------------------------------------------------- diarization over segment graphs (GNN)


class _SegEdgeLayer(_nn.Module):
    """Messages from both endpoints and the edge state, weighted by the edge's validity, index_add'ed into the
    targets and divided by the weighted in-degree; a residual node update with LayerNorm and an edge-state update."""

    def __init__(self, d, de):
        super().__init__()
        self.msg = mlp(2 * d + de, d, d, act=_nn.SiLU)
        self.upd = mlp(2 * d, d, d, act=_nn.SiLU)
        self.norm = _nn.LayerNorm(d)
        self.edge = mlp(2 * d + de, d, de, act=_nn.SiLU)

    def forward(self, h, e, src, dst, ew, deg):
        hs, hd = h.index_select(0, src), h.index_select(0, dst)
        z = torch.cat([hs, hd, e.to(hs.dtype)], -1)
        m = self.msg(z) * ew[:, None].to(hs.dtype)
        agg = torch.zeros(h.shape[0], m.shape[1], device=h.device, dtype=m.dtype).index_add_(0, dst, m)
        agg = agg / deg[:, None].to(m.dtype)
        h = self.norm(h + self.upd(torch.cat([h, agg.to(h.dtype)], -1)))
        e = e + self.edge(z)
        return h, e


class _SegGraphNet(_nn.Module):
    def __init__(self, d_in, d, de, layers):
        super().__init__()
        self.inp = _nn.Sequential(_nn.Linear(d_in + 2, d), _nn.LayerNorm(d))
        self.einp = mlp(3, de, de, act=_nn.SiLU)
        self.layers = _nn.ModuleList(_SegEdgeLayer(d, de) for _ in range(layers))
        self.cls = mlp(2 * d + de, d, 1, act=_nn.SiLU)

    def forward(self, xn, xe, src, dst, ew, deg):
        h, e = self.inp(xn), self.einp(xe)
        for layer in self.layers:
            h, e = layer(h, e, src, dst, ew, deg)
        return self.cls(torch.cat([h.index_select(0, src), h.index_select(0, dst), e.to(h.dtype)], -1))[:, 0].float()


@_workload("speaker diarization segment-graph training (random init, a message-passing network by index_select and index_add): 4-12 recordings a step (drawn), each of 100-600 speech segments (drawn per recording, padded to the step's longest rounded up to a multiple of 8) and 2-8 speakers (drawn per recording); each segment's speaker drawn on the device, its 192-wide speaker embedding a drawn speaker centroid plus noise, L2-normalised, with duration and relative-position features; edges to each segment's 10 most cosine-similar segments of its recording (a batched similarity matrix with pads and itself masked, topk) and to its two temporal neighbours, edge features of similarity, time gap and kind; edges touching pads weighted out; 5 layers (width 192, edge state 64) of messages from both endpoints and the edge state, index_add into the targets normalised by the weighted in-degree, residual node updates with LayerNorm and edge-state updates; a same-speaker logit per edge, binary cross-entropy over valid edges; AdamW, clipping, bf16 autocast, 485 steps; the loss read back every 10 steps and every 97 steps a no-grad evaluation on 12 recordings of 600 segments with the same-speaker edge accuracy read back")
def diarization_segment_gnn_train(rng):
    d_emb, d, de, layers, k = _smoke(192, 16), _smoke(192, 16), _smoke(64, 8), _smoke(5, 1), _smoke(10, 3)
    max_spk = 8
    model = _SegGraphNet(d_emb, d, de, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    lo_s, hi_s = _smoke(100, 12), _smoke(600, 24)

    def graphs(segs, spks):
        r, s = len(segs), -(-max(segs) // 8) * 8
        keep = keep_mask(segs, s)
        nspk = torch.tensor(spks, device="cuda", dtype=torch.float32)[:, None]
        lab = (torch.rand(r, s, device="cuda") * nspk).long()
        cent = _F.normalize(torch.randn(r, max_spk, d_emb, device="cuda"), dim=-1)
        emb = torch.gather(cent, 1, lab[..., None].expand(r, s, d_emb)) + 0.7 * torch.randn(r, s, d_emb, device="cuda")
        emb = _F.normalize(emb, dim=-1) * keep[..., None]
        nseg = torch.tensor(segs, device="cuda", dtype=torch.float32)[:, None]
        rel = torch.arange(s, device="cuda")[None].float() / nseg
        dur = torch.rand(r, s, device="cuda") * 3 + 0.3
        xn = torch.cat([emb, rel[..., None], dur[..., None]], -1).flatten(0, 1)
        sim = emb @ emb.transpose(1, 2)
        eye = torch.eye(s, dtype=torch.bool, device="cuda")[None]
        sim = sim.masked_fill(~keep[:, None, :] | eye, -4.0)
        val, idx = sim.topk(k, -1)  # (r, s, k)
        base = (torch.arange(r, device="cuda") * s)[:, None, None]
        node = torch.arange(r * s, device="cuda").view(r, s)
        src_k, dst_k = (idx + base).flatten(), node[..., None].expand(r, s, k).flatten()
        a, bb = node[:, :-1].flatten(), node[:, 1:].flatten()
        src = torch.cat([src_k, a, bb])
        dst = torch.cat([dst_k, bb, a])
        rels, keepf, labf = rel.flatten(), keep.flatten().float(), lab.flatten()
        tsim = (emb[:, :-1] * emb[:, 1:]).sum(-1).flatten()
        esim = torch.cat([val.flatten(), tsim, tsim])
        gap = (rels.index_select(0, src) - rels.index_select(0, dst)).abs()
        kind = torch.cat([torch.zeros_like(src_k), torch.ones_like(a), torch.ones_like(a)]).float()
        xe = torch.stack([esim, gap, kind], -1)
        ew = keepf.index_select(0, src) * keepf.index_select(0, dst)
        deg = torch.zeros(r * s, device="cuda").index_add_(0, dst, ew).clamp(min=1)
        same = (labf.index_select(0, src) == labf.index_select(0, dst)).float()
        return xn, xe, src, dst, ew, deg, same

    steps = _smoke(485, 3)
    for step in range(steps):
        model.train()
        r = rng.randint(_smoke(4, 2), _smoke(12, 3))
        segs = [rng.randint(lo_s, hi_s) for _ in range(r)]
        spks = [rng.randint(2, max_spk) for _ in range(r)]
        xn, xe, src, dst, ew, deg, same = graphs(segs, spks)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logit = model(xn, xe, src, dst, ew, deg)
        loss = (_F.binary_cross_entropy_with_logits(logit, same, reduction="none") * ew).sum() / ew.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            loss.detach().item()
        del xn, xe, src, dst, ew, deg, same, logit, loss
        if (step + 1) % _smoke(97, 2) == 0:
            model.eval()
            with torch.no_grad():
                n = _smoke(12, 2)
                xn, xe, src, dst, ew, deg, same = graphs([hi_s] * n, [rng.randint(2, max_spk) for _ in range(n)])
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logit = model(xn, xe, src, dst, ew, deg)
                acc = (((logit > 0).float() == same).float() * ew).sum() / ew.sum()
            acc.item()
            del xn, xe, src, dst, ew, deg, same, logit, acc


# ---------------------------------------------------------------- spoken-intent service (side-stream uploads)


def _mel_filters(n_fft, n_mels, sr):
    """(n_fft // 2 + 1, n_mels) triangular mel filters (HTK mel scale), made on the device."""
    top = 2595.0 * math.log10(1 + sr / 2 / 700)
    hz = 700 * (10 ** (torch.linspace(0, top, n_mels + 2, device="cuda") / 2595) - 1)
    f = rfftfreq(n_fft, 1.0 / sr)[:, None]
    up = (f - hz[None, :-2]) / (hz[1:-1] - hz[:-2])[None]
    down = (hz[None, 2:] - f) / (hz[2:] - hz[1:-1])[None]
    return torch.minimum(up, down).clamp(min=0)


class _IntentEncoder(_nn.Module):
    def __init__(self, n_mels, d, heads, layers, n_intent, n_domain):
        super().__init__()
        self.sub = _nn.Sequential(_nn.Conv1d(n_mels, d, 3, 2, 1), _nn.GELU(), _nn.Conv1d(d, d, 3, 2, 1), _nn.GELU())
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.intent, self.domain = mlp(d, d, n_intent, act=_nn.GELU), _nn.Linear(d, n_domain)
        self.d = d

    def forward(self, feats, keep):
        x = self.sub(feats.transpose(1, 2)).transpose(1, 2)
        t = x.shape[1]
        x = x + _sincos(torch.arange(t, device=x.device), self.d).to(x.dtype)[None]
        key = keep[:, None, None, :]
        for blk in self.blocks:
            x = blk(x, mask=key)
        w = keep[..., None].to(x.dtype)
        pooled = (self.norm(x) * w).sum(1) / w.sum(1).clamp(min=1)
        return self.intent(pooled).float(), self.domain(pooled).float()


@_workload("spoken-intent serving (random init, a log-mel front end and a transformer encoder): 1,120-1,170 requests (drawn) of 1-8 utterances each (drawn), each utterance of 100-600 frames of 10 ms (drawn per utterance, 16 kHz, padded to the request's longest rounded up to a multiple of 4); int16 audio uploaded on a side stream from two reused pinned host buffers (filled once, sized for 8 utterances of 600 frames) one request ahead (one span, waited on by event, record_stream'ed); on the device, in fp32: scaling, pre-emphasis, 25 ms frames by unfold with a Hann window, a 512-point rfft, power, 80 mel filters (made on the device), log, per-utterance masked mean and variance normalisation; under bf16 autocast two stride-2 convolutions (width 256) to a quarter of the frames, sinusoidal positions, 6 pre-norm transformer blocks (4 heads) under a key mask, masked mean pooling; 96 intents (a 2-layer head) and 14 domains; per request the top-3 intent probabilities and indices and the domain probabilities read back")
def spoken_intent_serve(rng):
    n_mels, d, heads, layers = _smoke(80, 16), _smoke(256, 32), _smoke(4, 2), _smoke(6, 1)
    n_intent, n_domain = 96, 14
    model = _IntentEncoder(n_mels, d, heads, layers, n_intent, n_domain).cuda().eval()
    model.requires_grad_(False)
    win, hop, n_fft, sr = 400, 160, 512, 16000
    max_utt, lo_f, hi_f = _smoke(8, 2), _smoke(100, 8), _smoke(600, 16)
    max_samples = hop * (hi_f + 3) + win
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [(torch.randn(max_utt * max_samples, generator=gen) * 3000).to(torch.int16).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    fb = _mel_filters(n_fft, n_mels, sr)
    window = torch.hann_window(win, device="cuda")
    nreq = rng.randint(_smoke(1120, 3), _smoke(1170, 4))
    plan = []
    for _ in range(nreq):
        frames = [rng.randint(lo_f, hi_f) for _ in range(rng.randint(1, max_utt))]
        t = -(-max(frames) // 4) * 4
        plan.append((frames, t, hop * (t - 1) + win))

    def span(p):
        return len(p[0]) * p[2]

    nxt = up.upload(0, span(plan[0]))
    for i in range(nreq):
        frames, t, samples = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, span(plan[i + 1]))
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            wav = raw.view(len(frames), samples).float() / 32768.0
            wav = torch.cat([wav[:, :1], wav[:, 1:] - 0.97 * wav[:, :-1]], 1)
            fr = wav.unfold(1, win, hop) * window
            power = torch.fft.rfft(fr, n=n_fft).abs().pow(2)
            keep = keep_mask(frames, t)
            w = keep[..., None].float()
            feats = torch.log(power @ fb + 1e-6)
            mu = (feats * w).sum(1, keepdim=True) / w.sum(1, keepdim=True)
            var = (((feats - mu) * w) ** 2).sum(1, keepdim=True) / w.sum(1, keepdim=True)
            feats = ((feats - mu) / (var + 1e-5).sqrt()) * w
            sub_keep = keep_mask([-(-f // 4) for f in frames], t // 4)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                il, dl = model(feats, sub_keep)
            top = torch.softmax(il, -1).topk(3, -1)
            out = torch.cat([top.values, top.indices.float(), torch.softmax(dl, -1)], -1)
        out.tolist()
        del item, raw, wav, fr, power, keep, w, feats, mu, var, sub_keep, il, dl, top, out

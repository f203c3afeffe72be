"""The ninety-sixth batch of held-out workloads for record.py, second half (the first is batch96.py): speech
technology, call centres and voice assistants, written in torch alone. Call-analytics training over conversation
turns (a convolutional turn encoder over each turn's tokens with prosody features and a GRU over the turns written
out step by step, per-turn sentiment and escalation and an end-of-call satisfaction head), diffusion text-to-speech
training (a transformer phoneme encoder with a duration predictor, frame alignment from drawn durations by
comparisons, a conditional DDPM U-Net over random crops of the mel spectrogram), a chunked streaming recognition
service (a transformer encoder over 640 ms chunks of concurrent call streams with per-layer left-context key and value
caches, greedy CTC-style decoding collapsed on the device) and a neural vocoder service (a HiFi-GAN-style generator
from mel spectrograms uploaded on a side stream to 16-bit audio). Same conventions as the earlier batches: nothing
downloaded, data drawn at random on the device (or in reused pinned host buffers for the vocoder service), `rng` the
workload's random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)` so that
RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: turn, token, phoneme, frame, chunk and sentence
counts and batch sizes are fixed on the host (or, for the tokens of a turn and the phoneme durations, drawn on the
device and handled by masks), padding handled by masks multiplied in or by torch.where / masked_fill, no boolean-mask
indexing; losses and metrics are read back only at logging points or once per request. mel_vocoder_serve uploads its
mel spectrograms on a side stream (two reused pinned host buffers, one request ahead, the main stream waiting on an
event, the tensors record_stream'ed, through workload_helpers.SideUploads); the other three are single-stream. The
models run under bf16 autocast. Every position table is sized for the longest padded length that can be drawn.

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
from workload_helpers import PreNormBlock, SideUploads, TimeResBlock, _sincos, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- call analytics over turns (step-by-step GRU)


class _TurnGRU(_nn.Module):
    """Token and token-position embeddings, a 1-d convolution over each turn's tokens, masked max and mean pooling,
    the speaker role, a turn-position table and prosody features; a GRU over the turns written out step by step
    (a finished call's state held by torch.where); per-turn sentiment and escalation heads and a satisfaction head on
    the final state."""

    def __init__(self, vocab, max_tok, max_turns, n_prosody, d, hidden, n_sent, n_csat):
        super().__init__()
        self.tok, self.tpos = _nn.Embedding(vocab, d), _nn.Embedding(max_tok, d)
        self.conv = _nn.Conv1d(d, d, 3, 1, 1)
        self.role, self.turn_pos = _nn.Embedding(2, d), _nn.Embedding(max_turns, d)
        self.turn = _nn.Sequential(_nn.Linear(2 * d + n_prosody, d), _nn.LayerNorm(d), _nn.GELU())
        self.wx, self.wh = _nn.Linear(d, 3 * hidden), _nn.Linear(hidden, 3 * hidden)
        self.sent, self.esc = _nn.Linear(hidden + d, n_sent), _nn.Linear(hidden + d, 1)
        self.csat = mlp(hidden, hidden, n_csat, act=_nn.GELU)
        self.hidden = hidden

    def forward(self, ids, tok_keep, role, prosody, turn_keep):
        b, t, n = ids.shape
        x = self.tok(ids) + self.tpos(torch.arange(n, device=ids.device))[None, None]
        x = _F.gelu(self.conv(x.flatten(0, 1).transpose(1, 2))).transpose(1, 2).view(b, t, n, -1)
        w = tok_keep[..., None].to(x.dtype)
        mx = x.masked_fill(~tok_keep[..., None], -1e4).max(2).values
        mean = (x * w).sum(2) / w.sum(2).clamp(min=1)
        u = self.turn(torch.cat([mx, mean, prosody.to(x.dtype)], -1))
        u = u + self.role(role) + self.turn_pos(torch.arange(t, device=ids.device))[None]
        gx = self.wx(u)
        h = torch.zeros(b, self.hidden, device=ids.device)
        outs = []
        for i in range(t):
            xr, xz, xn = gx[:, i].chunk(3, -1)
            hr, hz, hn = self.wh(h).chunk(3, -1)
            r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
            cand = torch.tanh(xn + r * hn)
            h = torch.where(turn_keep[:, i, None], (1 - z) * cand + z * h, h)
            outs.append(h)
        hs = torch.stack(outs, 1)
        z = torch.cat([hs.to(u.dtype), u], -1)
        return self.sent(z).float(), self.esc(z)[..., 0].float(), self.csat(h).float()


@_workload("call-centre conversation analytics training (random init, a convolutional turn encoder and a GRU over turns written out step by step): 16-64 calls a step (drawn), each of 8-48 turns (drawn per call, padded to the step's longest and masked), the step's turn length of 16-64 tokens (drawn, a multiple of 8) with each turn's own token count drawn on the device (masked) over a 20,000-token vocabulary, alternating agent and customer roles, 12 prosody features per turn (pitch, energy, speaking rate and others) drawn on the device; token embeddings with a 64-row token-position table, a 1-d convolution of width 256, masked max and mean pooling, a 48-row turn-position table; a GRU of 384 units over the turns, one step per turn (gates by two linear maps, finished calls held by torch.where); per-turn sentiment of 5 (cross-entropy on customer turns only) and escalation (binary cross-entropy) heads and an end-of-call satisfaction head of 5 on the final state; AdamW, clipping, bf16 autocast, 150 steps; the losses read back every 10 steps and every 37 steps a no-grad evaluation of 64 calls of 48 turns of 64 tokens with the sentiment accuracy read back")
def call_turn_gru_train(rng):
    vocab, d, hidden = _smoke(20000, 300), _smoke(256, 16), _smoke(384, 16)
    max_tok, max_turns, n_prosody, n_sent, n_csat = _smoke(64, 16), _smoke(48, 6), 12, 5, 5
    model = _TurnGRU(vocab, max_tok, max_turns, n_prosody, d, hidden, n_sent, n_csat).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)

    def calls(turns, n):
        b, t = len(turns), max(turns)
        turn_keep = keep_mask(turns, t)
        ntok = torch.randint(2, n + 1, (b, t, 1), device="cuda")
        tok_keep = (torch.arange(n, device="cuda")[None, None] < ntok) & turn_keep[..., None]
        ids = torch.randint(1, vocab, (b, t, n), device="cuda").masked_fill(~tok_keep, 0)
        role = (torch.arange(t, device="cuda") % 2)[None].expand(b, t)
        prosody = torch.randn(b, t, n_prosody, device="cuda")
        sent = torch.randint(0, n_sent, (b, t), device="cuda")
        esc = (torch.rand(b, t, device="cuda") < 0.1).float()
        csat = torch.randint(0, n_csat, (b,), device="cuda")
        return ids, tok_keep, role, prosody, turn_keep, sent, esc, csat

    steps = _smoke(150, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(16, 2), _smoke(64, 3))
        turns = [rng.randint(_smoke(8, 2), max_turns) for _ in range(b)]
        n = rng.randint(_smoke(16, 8) // 8, max_tok // 8) * 8
        ids, tok_keep, role, prosody, turn_keep, sent, esc, csat = calls(turns, n)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            s_log, e_log, c_log = model(ids, tok_keep, role, prosody, turn_keep)
        cust = (turn_keep & (role == 1)).float()
        l_s = (_F.cross_entropy(s_log.transpose(1, 2), sent, reduction="none") * cust).sum() / cust.sum().clamp(min=1)
        tk = turn_keep.float()
        l_e = (_F.binary_cross_entropy_with_logits(e_log, esc, reduction="none") * tk).sum() / tk.sum()
        l_c = _F.cross_entropy(c_log, csat)
        loss = l_s + l_e + 0.5 * l_c
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_s.detach(), l_e.detach(), l_c.detach()]).tolist()
        del ids, tok_keep, role, prosody, turn_keep, sent, esc, csat, s_log, e_log, c_log, cust, l_s, tk, l_e, l_c, loss
        if (step + 1) % _smoke(37, 2) == 0:
            model.eval()
            with torch.no_grad():
                ids, tok_keep, role, prosody, turn_keep, sent, esc, csat = calls([max_turns] * _smoke(64, 2), max_tok)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    s_log, _, _ = model(ids, tok_keep, role, prosody, turn_keep)
                cust = (turn_keep & (role == 1)).float()
                acc = ((s_log.argmax(-1) == sent).float() * cust).sum() / cust.sum()
            acc.item()
            del ids, tok_keep, role, prosody, turn_keep, sent, esc, csat, s_log, cust, acc


# ---------------------------------------------------------------- diffusion text-to-speech (Grad-TTS style)


class _PhonemeEncoder(_nn.Module):
    """Phoneme embeddings, a masked 1-d convolutional prenet, sinusoidal positions, pre-norm blocks under a key mask;
    the per-phoneme mel mean and a log-duration predictor on the detached encoder output."""

    def __init__(self, vocab, d, heads, layers, n_mels):
        super().__init__()
        self.emb = _nn.Embedding(vocab, d)
        self.pre = _nn.ModuleList(_nn.Conv1d(d, d, 5, 1, 2) for _ in range(3))
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.mu = _nn.Linear(d, n_mels)
        self.dur = _nn.Sequential(_nn.Conv1d(d, d, 3, 1, 1), _nn.ReLU(), _nn.Conv1d(d, d, 3, 1, 1), _nn.ReLU(),
                                  _nn.Conv1d(d, 1, 1))
        self.d = d

    def forward(self, ph, keep):
        w = keep[..., None].to(torch.float32)
        x = self.emb(ph) * w
        for conv in self.pre:
            x = x + _F.relu(conv(x.transpose(1, 2))).transpose(1, 2) * w.to(x.dtype)
        n = ph.shape[1]
        x = x + _sincos(torch.arange(n, device=ph.device), self.d).to(x.dtype)[None]
        key = keep[:, None, None, :]
        for blk in self.blocks:
            x = blk(x, mask=key)
        x = self.norm(x)
        logd = self.dur(x.detach().transpose(1, 2))[:, 0]
        return self.mu(x).float(), logd.float()


class _MelUNet(_nn.Module):
    """A noise-prediction U-Net over (B, 2, mels, frames) (the noisy mel and the aligned encoder mean): a 3x3 input
    convolution, a TimeResBlock and a stride-2 convolution per level, two middle blocks, nearest upsampling with
    skips and a TimeResBlock per level, a 3x3 output convolution; sinusoidal timestep embeddings through an MLP."""

    def __init__(self, widths, temb):
        super().__init__()
        self.temb = temb
        self.t_mlp = mlp(temb, 4 * temb, 4 * temb, act=_nn.SiLU)
        te = 4 * temb
        self.inp = _nn.Conv2d(2, widths[0], 3, 1, 1)
        self.down = _nn.ModuleList(TimeResBlock(a, b, te) for a, b in zip([widths[0]] + widths[:-1], widths))
        self.pool = _nn.ModuleList(_nn.Conv2d(w, w, 3, 2, 1) for w in widths[:-1])
        self.mid = _nn.ModuleList([TimeResBlock(widths[-1], widths[-1], te), TimeResBlock(widths[-1], widths[-1], te)])
        self.up = _nn.ModuleList(TimeResBlock(a + b, b, te) for a, b in zip(widths[:0:-1], widths[-2::-1]))
        self.out = _nn.Sequential(_nn.GroupNorm(8, widths[0]), _nn.SiLU(), _nn.Conv2d(widths[0], 1, 3, 1, 1))

    def forward(self, x, mu, t, keep):
        te = self.t_mlp(_sincos(t * 1000, self.temb))
        m = keep[:, None, None, :].to(x.dtype)
        h = self.inp(torch.cat([x, mu], 1))
        skips = []
        for i, blk in enumerate(self.down):
            h = blk(h, te)
            if i < len(self.pool):
                skips.append(h)
                h = self.pool[i](h)
        for blk in self.mid:
            h = blk(h, te)
        for blk, s in zip(self.up, skips[::-1]):
            h = blk(torch.cat([_F.interpolate(h, scale_factor=2, mode="nearest"), s], 1), te)
        return self.out(h).float() * m


@_workload("diffusion text-to-speech training (random init, Grad-TTS style: a transformer phoneme encoder with a duration predictor and a conditional DDPM U-Net decoder): 8-24 utterances a step (drawn), each of 20-150 phonemes (drawn per utterance over a 180-symbol inventory, padded to the step's longest) and 200-900 mel frames (drawn per utterance, padded to the longest rounded up to a multiple of 4) of 80 mel bins drawn on the device; phoneme durations drawn on the device as random proportions of the utterance's frames, a hard frame-to-phoneme alignment by comparing frame centres with the cumulative durations; a 3-layer masked convolutional prenet and 6 pre-norm blocks (width 192, 2 heads) under a key mask with sinusoidal positions, the per-phoneme mel mean expanded to frames by the alignment (a batched matmul) with a masked prior MSE, a convolutional log-duration predictor (masked MSE); the decoder on one crop of 128-192 frames a step (drawn, a multiple of 4; each utterance's offset drawn); a cosine noise schedule with continuous timesteps drawn per utterance, a U-Net (widths 64/128/256, one TimeResBlock and a stride-2 convolution per level, two middle blocks, GroupNorm, sinusoidal timestep embeddings) over the noisy mel and the aligned mean predicting the noise, MSE; AdamW, clipping, bf16 autocast, 210 steps; the losses read back every 10 steps and every 42 steps a no-grad 10-step DDIM synthesis of 2 utterances of 100 phonemes and 400 frames with the mean and spread of the mel read back")
def grad_tts_diffusion_train(rng):
    vocab, d, heads, layers, n_mels = 180, _smoke(192, 16), _smoke(2, 2), _smoke(6, 1), _smoke(80, 16)
    widths, temb = _smoke([64, 128, 256], [8, 8, 16]), _smoke(64, 8)
    enc = _PhonemeEncoder(vocab, d, heads, layers, n_mels).cuda()
    dec = _MelUNet(widths, temb).cuda()
    opt = torch.optim.AdamW(list(enc.parameters()) + list(dec.parameters()), lr=2e-4, weight_decay=0.01)
    lo_p, hi_p, lo_f, hi_f = _smoke(20, 4), _smoke(150, 10), _smoke(200, 24), _smoke(900, 40)

    def utterances(phones, frames):
        b, n, t = len(phones), max(phones), -(-max(frames) // 4) * 4
        pkeep, fkeep = keep_mask(phones, n), keep_mask(frames, t)
        ph = torch.randint(1, vocab, (b, n), device="cuda").masked_fill(~pkeep, 0)
        dw = (torch.rand(b, n, device="cuda") + 0.3) * pkeep
        tot = torch.tensor(frames, device="cuda", dtype=torch.float32)[:, None]
        cum = dw.cumsum(1) / dw.sum(1, keepdim=True) * tot
        prev = cum - dw / dw.sum(1, keepdim=True) * tot
        centre = torch.arange(t, device="cuda").float()[None, :, None] + 0.5
        align = ((centre >= prev[:, None]) & (centre < cum[:, None]) & pkeep[:, None] & fkeep[..., None]).float()
        mel = torch.randn(b, t, n_mels, device="cuda") * fkeep[..., None]
        return ph, pkeep, fkeep, align, mel

    def abar(t):
        return torch.cos((t + 0.008) / 1.008 * math.pi / 2) ** 2

    steps = _smoke(210, 3)
    for step in range(steps):
        enc.train()
        dec.train()
        b = rng.randint(_smoke(8, 2), _smoke(24, 3))
        phones = [rng.randint(lo_p, hi_p) for _ in range(b)]
        frames = [rng.randint(lo_f, hi_f) for _ in range(b)]
        crop = rng.randint(_smoke(128, 16) // 4, _smoke(192, 20) // 4) * 4
        offs = [rng.randint(0, f - crop) for f in frames]
        ph, pkeep, fkeep, align, mel = utterances(phones, frames)
        idx = (torch.tensor(offs, device="cuda")[:, None] + torch.arange(crop, device="cuda")[None])
        idx = idx[..., None].expand(b, crop, n_mels)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            mu_ph, logd = enc(ph, pkeep)
            mu = torch.bmm(align, mu_ph)
            x0 = torch.gather(mel, 1, idx).transpose(1, 2)[:, None]
            mu_c = torch.gather(mu, 1, idx).transpose(1, 2)[:, None]
            t = torch.rand(b, device="cuda") * 0.999 + 0.001
            a = abar(t)[:, None, None, None]
            eps = torch.randn_like(x0)
            xt = a.sqrt() * x0 + (1 - a).sqrt() * eps
            pred = dec(xt, mu_c, t, torch.ones(b, crop, dtype=torch.bool, device="cuda"))
        fk = fkeep[..., None].float()
        l_prior = (((mu - mel) ** 2) * fk).sum() / (fk.sum() * n_mels)
        pk = pkeep.float()
        dur = align.sum(1)
        l_dur = (((logd - torch.log1p(dur)) ** 2) * pk).sum() / pk.sum()
        l_diff = _F.mse_loss(pred, eps.float())
        loss = l_diff + l_prior + l_dur
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(enc.parameters()) + list(dec.parameters()), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_diff.detach(), l_prior.detach(), l_dur.detach()]).tolist()
        del ph, pkeep, fkeep, align, mel, idx, mu_ph, logd, mu, x0, mu_c, t, a, eps, xt, pred, fk, l_prior, pk, dur
        del l_dur, l_diff, loss
        if (step + 1) % _smoke(42, 2) == 0:
            enc.eval()
            dec.eval()
            with torch.no_grad():
                n = _smoke(2, 1)
                ph, pkeep, fkeep, align, mel = utterances([_smoke(100, 8)] * n, [_smoke(400, 24)] * n)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    mu = torch.bmm(align, enc(ph, pkeep)[0]).transpose(1, 2)[:, None].float()
                    x = mu + torch.randn_like(mu)
                    grid = [1.0 - i / _smoke(10, 2) for i in range(_smoke(10, 2) + 1)]
                    for t_now, t_next in zip(grid[:-1], grid[1:]):
                        tt = torch.full((n,), max(t_now, 1e-3), device="cuda")
                        a_now = abar(tt)[:, None, None, None]
                        a_next = abar(torch.full((n,), max(t_next, 1e-3), device="cuda"))[:, None, None, None]
                        e = dec(x, mu, tt, fkeep)
                        x0 = (x - (1 - a_now).sqrt() * e) / a_now.sqrt()
                        x = a_next.sqrt() * x0 + (1 - a_next).sqrt() * e
                stats = torch.stack([x.mean(), x.std()])
            stats.tolist()
            del ph, pkeep, fkeep, align, mel, mu, x, tt, a_now, a_next, e, x0, stats


# ---------------------------------------------------------------- chunked streaming recognition service


class _StreamLayer(_nn.Module):
    """A pre-norm block whose attention reaches the cached keys and values of earlier chunks; the cache kept to the
    last `ctx` frames."""

    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.n1, self.n2 = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.o = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.ff = mlp(d, 4 * d, d, act=_nn.GELU)

    def forward(self, x, kc, vc, ctx):
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).chunk(3, -1)
        if kc is not None:
            k, v = torch.cat([kc, k], 1), torch.cat([vc, v], 1)

        def split(z):
            return z.view(b, -1, self.h, d // self.h).transpose(1, 2)

        a = _F.scaled_dot_product_attention(split(q), split(k), split(v))
        x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
        x = x + self.ff(self.n2(x))
        return x, k[:, -ctx:], v[:, -ctx:]


class _StreamEncoder(_nn.Module):
    def __init__(self, n_mels, d, heads, layers, vocab):
        super().__init__()
        self.sub = _nn.Sequential(_nn.Conv1d(n_mels, d, 3, 2, 1), _nn.GELU(), _nn.Conv1d(d, d, 3, 2, 1), _nn.GELU())
        self.layers = _nn.ModuleList(_StreamLayer(d, heads) for _ in range(layers))
        self.norm, self.head = _nn.LayerNorm(d), _nn.Linear(d, vocab)
        self.d = d

    def forward(self, feats, start, cache, ctx):
        x = self.sub(feats.transpose(1, 2)).transpose(1, 2)
        x = x + _sincos(torch.arange(start, start + x.shape[1], device=x.device), self.d).to(x.dtype)[None]
        new = []
        for i, layer in enumerate(self.layers):
            kc, vc = cache[i] if cache else (None, None)
            x, k, v = layer(x, kc, vc, ctx)
            new.append((k, v))
        return torch.log_softmax(self.head(self.norm(x)).float(), -1), new


@_workload("chunked streaming speech recognition serving (random init, a transformer encoder with left-context caches and greedy CTC-style decoding): 49-53 requests (drawn), each a batch of 1-16 concurrent call streams (drawn) of 4-24 chunks each (drawn per stream; the request runs to its longest, finished streams masked); each chunk 640 ms, 64 frames of 80 log-mel features drawn on the device; two stride-2 convolutions (width 256) to 16 frames, sinusoidal positions at the absolute frame index, 8 pre-norm layers (4 heads, MLP 1,024) attending over the chunk and the cached keys and values of up to 4 earlier chunks (64 frames, the cache cut per layer after every chunk), a 1,024-symbol output layer with blank, log-softmax; per chunk a greedy argmax, emissions where the symbol is not blank and differs from the previous frame's (carried across chunks per stream), finished streams masked by torch.where, a per-stream endpoint flag when the last 8 frames are blank with probability above 0.9; bf16 autocast; each request's emitted symbols, frame confidences and endpoint flags read back once at its end")
def chunked_asr_stream_serve(rng):
    n_mels, d, heads, layers, vocab = _smoke(80, 16), _smoke(256, 32), _smoke(4, 2), _smoke(8, 1), _smoke(1024, 40)
    chunk, sub_chunk, ctx_chunks = _smoke(64, 8), _smoke(16, 2), 4
    ctx = ctx_chunks * sub_chunk
    model = _StreamEncoder(n_mels, d, heads, layers, vocab).cuda().eval()
    model.requires_grad_(False)
    nreq = rng.randint(_smoke(49, 2), _smoke(53, 3))
    for _ in range(nreq):
        b = rng.randint(1, _smoke(16, 3))
        lens = [rng.randint(_smoke(4, 2), _smoke(24, 4)) for _ in range(b)]
        n_chunks = max(lens)
        lens_t = torch.tensor(lens, device="cuda")[:, None]
        with torch.no_grad():
            last = torch.zeros(b, dtype=torch.long, device="cuda")
            cache, syms, confs, blanks = None, [], [], []
            for c in range(n_chunks):
                feats = torch.randn(b, chunk, n_mels, device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logp, cache = model(feats, c * sub_chunk, cache, ctx)
                conf, tok = logp.max(-1)
                prev = torch.cat([last[:, None], tok[:, :-1]], 1)
                live = c < lens_t
                emit = (tok != 0) & (tok != prev) & live
                syms.append(torch.where(emit, tok, -1))
                confs.append(conf.exp() * live)
                blanks.append(logp[..., 0].exp())
                last = torch.where(live[:, 0], tok[:, -1], last)
            ends = (torch.cat(blanks, 1)[:, -8:] > 0.9).all(1)
            out = torch.cat([torch.cat(syms, 1).float(), torch.cat(confs, 1), ends.float()[:, None]], 1)
        out.tolist()
        del lens_t, last, cache, syms, confs, blanks, feats, logp, conf, tok, prev, live, emit, ends, out


# ---------------------------------------------------------------- neural vocoder service (side-stream uploads)


class _MRFBlock(_nn.Module):
    """HiFi-GAN's residual block: for each dilation a leaky ReLU, a dilated convolution, a leaky ReLU, a plain
    convolution, added back."""

    def __init__(self, c, kernel, dilations):
        super().__init__()
        self.c1 = _nn.ModuleList(_nn.Conv1d(c, c, kernel, 1, dil * (kernel - 1) // 2, dilation=dil)
                                 for dil in dilations)
        self.c2 = _nn.ModuleList(_nn.Conv1d(c, c, kernel, 1, (kernel - 1) // 2) for _ in dilations)

    def forward(self, x):
        for a, b in zip(self.c1, self.c2):
            x = x + b(_F.leaky_relu(a(_F.leaky_relu(x, 0.1)), 0.1))
        return x


class _Generator(_nn.Module):
    def __init__(self, n_mels, c0, rates, kernels, mrf_kernels, dilations):
        super().__init__()
        self.pre = _nn.Conv1d(n_mels, c0, 7, 1, 3)
        self.ups, self.mrfs = _nn.ModuleList(), _nn.ModuleList()
        c = c0
        for r, k in zip(rates, kernels):
            self.ups.append(_nn.ConvTranspose1d(c, c // 2, k, r, (k - r) // 2))
            c //= 2
            self.mrfs.append(_nn.ModuleList(_MRFBlock(c, mk, dilations) for mk in mrf_kernels))
        self.post = _nn.Conv1d(c, 1, 7, 1, 3)

    def forward(self, mel):
        x = self.pre(mel)
        for up, mrf in zip(self.ups, self.mrfs):
            x = up(_F.leaky_relu(x, 0.1))
            x = sum(blk(x) for blk in mrf) / len(mrf)
        return torch.tanh(self.post(_F.leaky_relu(x, 0.01)))[:, 0]


@_workload("neural vocoder serving for text-to-speech (random init, a HiFi-GAN-style generator): 1,400-1,450 requests (drawn) of 1-4 sentences each (drawn), each of 80-600 mel frames (drawn per sentence, 80 bins, padded to the request's longest rounded up to a multiple of 8); the fp16 mel spectrograms uploaded on a side stream from two reused pinned host buffers (filled once, sized for 4 sentences of 600 frames) one request ahead (one span, waited on by event, record_stream'ed); a 7-tap input convolution to 256 channels, four transposed-convolution upsamplings (rates 8/8/2/2, kernels 16/16/4/4, halving the channels to 16) each followed by three multi-receptive-field residual blocks (kernels 3/7/11, dilations 1/3/5) averaged, a 7-tap output convolution and tanh, 256 samples per frame, under bf16 autocast; samples past each sentence's length zeroed, 16-bit quantisation; each request's per-sentence peak, RMS level and clipped fraction read back")
def mel_vocoder_serve(rng):
    n_mels, c0 = _smoke(80, 8), _smoke(256, 32)
    rates, kernels = [8, 8, 2, 2], [16, 16, 4, 4]
    model = _Generator(n_mels, c0, rates, kernels, _smoke([3, 7, 11], [3]), _smoke([1, 3, 5], [1, 3])).cuda().eval()
    model.requires_grad_(False)
    hop = 256
    max_sent, lo_f, hi_f = _smoke(4, 2), _smoke(80, 4), _smoke(600, 16)
    max_t = -(-hi_f // 8) * 8
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randn(max_sent * n_mels * max_t, generator=gen).to(torch.float16).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    nreq = rng.randint(_smoke(1400, 3), _smoke(1450, 4))
    plan = []
    for _ in range(nreq):
        frames = [rng.randint(lo_f, hi_f) for _ in range(rng.randint(1, max_sent))]
        plan.append((frames, -(-max(frames) // 8) * 8))

    def span(p):
        return len(p[0]) * n_mels * p[1]

    nxt = up.upload(0, span(plan[0]))
    for i in range(nreq):
        frames, t = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, span(plan[i + 1]))
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            mel = raw.view(len(frames), n_mels, t).float()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                wav = model(mel).float()
            keep = keep_mask([f * hop for f in frames], t * hop)
            wav = wav * keep
            pcm = (wav * 32767).round().clamp(-32768, 32767).to(torch.int16)
            n = keep.float().sum(1)
            level = pcm.float() / 32768
            peak = level.abs().max(1).values
            rms = ((level ** 2).sum(1) / n).sqrt()
            clip = ((wav.abs() > 0.99).float() * keep).sum(1) / n
            out = torch.stack([peak, rms, clip], 1)
        out.tolist()
        del item, raw, mel, wav, keep, pcm, n, level, peak, rms, clip, out

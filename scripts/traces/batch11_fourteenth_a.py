"""The workloads of the fourteenth batch (held out; part 1 of 2), moved verbatim from record.py; how record.py
registers them: batch_common.py."""

import torch

from batch_common import Batch
from workload_helpers import _loguniform, _mha

_b = Batch()  # this module's workloads, and record.py's module object once register() has run
workload = _b.workload
_smoke = _b.smoke
register = _b.register  # what record.py calls


# ------------------------------------------------ fourteenth batch (held out)


@workload("retrieval-augmented generation serving (inference, two CUDA streams): a BERT-base query encoder (HF BertModel, 12 layers, width 768, random init) and an HF LlamaForCausalLM generator (hidden 1024, 16 layers, GQA 16/4 heads, MLP 2816, vocab 32000, random init), both bf16 under inference_mode, and a passage index of 1M unit-norm 768-wide bf16 embeddings kept on the device; 24 requests of 1-32 questions (log-uniform) of 8-64 tokens, each request retrieving its top 3-10 passages per question (a passage 32-256 tokens, log-uniform); the next request's encoding (masked mean pooling), scoring against the whole index and top-k run on a side stream while the current request generates, the passage ids copied back to pinned memory and the prompts (passages, then the question) built on the host and left-padded to the longest; HF generate (greedy, KV cache grown token by token) of 8-64 new tokens")
def rag_generate(rng):
    from transformers import BertConfig, BertModel, LlamaConfig, LlamaForCausalLM

    enc_cfg = BertConfig(num_hidden_layers=_smoke(12, 2), hidden_size=_smoke(768, 64), num_attention_heads=_smoke(12, 4),
                         intermediate_size=_smoke(3072, 128))
    encoder = BertModel(enc_cfg, add_pooling_layer=False).to("cuda", torch.bfloat16).eval()
    cfg = LlamaConfig(hidden_size=_smoke(1024, 64), intermediate_size=_smoke(2816, 128), num_hidden_layers=_smoke(16, 2),
                      num_attention_heads=16, num_key_value_heads=4, vocab_size=_smoke(32000, 1000),
                      max_position_embeddings=4096)
    generator = LlamaForCausalLM(cfg).to("cuda", torch.bfloat16).eval()
    n_passages, width = _smoke(1_000_000, 4000), enc_cfg.hidden_size
    index = torch.nn.functional.normalize(torch.randn(n_passages, width, device="cuda"), dim=-1).to(torch.bfloat16)
    passage_len = [_loguniform(rng, *_smoke((32, 256), (8, 24))) for _ in range(n_passages)]
    side = torch.cuda.Stream()
    main = torch.cuda.current_stream()

    def retrieve():
        """Questions drawn and encoded on the side stream; returns them, k, an event and the pinned top-k ids."""
        b, k = _loguniform(rng, 1, _smoke(32, 4)), rng.randint(3, 10)
        qlen = [rng.randint(*_smoke((8, 64), (4, 12))) for _ in range(b)]
        s = max(qlen)
        questions = [[rng.randrange(3, cfg.vocab_size) for _ in range(n)] for n in qlen]
        host_ids = torch.tensor([q + [0] * (s - len(q)) for q in questions]).pin_memory()
        host_mask = torch.tensor([[1] * n + [0] * (s - n) for n in qlen]).pin_memory()
        with torch.cuda.stream(side):
            side.wait_stream(main)
            ids = host_ids.to("cuda", non_blocking=True).clamp_(max=enc_cfg.vocab_size - 1)
            mask = host_mask.to("cuda", non_blocking=True)
            h = encoder(input_ids=ids, attention_mask=mask).last_hidden_state
            m = mask[..., None].to(h.dtype)
            q = torch.nn.functional.normalize((h * m).sum(1) / m.sum(1), dim=-1)
            top = (q @ index.T).topk(k, dim=-1).indices
            out = torch.empty(top.shape, dtype=top.dtype).pin_memory()
            out.copy_(top, non_blocking=True)
            done = side.record_event()
            del ids, mask, h, m, q, top
        return questions, done, out

    # About 635 tensors a generated token with 16 layers (counted on CPU): 24
    # requests of 36 new tokens on average make about 1.1M events.
    with torch.inference_mode():
        nxt = retrieve()
        for i in range(_smoke(24, 3)):
            questions, done, top = nxt
            done.synchronize()
            rows = []
            for q, hits in zip(questions, top.tolist()):
                ctx = [rng.randrange(3, cfg.vocab_size) for p in hits for _ in range(passage_len[p])]
                rows.append(ctx + [2] + q)
            s = max(map(len, rows))
            ids = torch.tensor([[0] * (s - len(r)) + r for r in rows]).pin_memory().to("cuda", non_blocking=True)
            mask = torch.tensor([[0] * (s - len(r)) + [1] * len(r) for r in rows]).pin_memory().to("cuda", non_blocking=True)
            if i + 1 < _smoke(24, 3):
                nxt = retrieve()  # queued on the side stream, overlapping this request's generation
            n = rng.randint(*_smoke((8, 64), (2, 4)))
            out = generator.generate(ids, attention_mask=mask, max_new_tokens=n, min_new_tokens=n, pad_token_id=0, do_sample=False)
            out[:, s:].cpu()
            del ids, mask, out, top
    torch.cuda.synchronize()


class _ConformerBlock(torch.nn.Module):
    """A Conformer block (Gulati et al., as in ESPnet/torchaudio, absolute positions): half-step macaron FFNs
    (4x, SiLU), self-attention with a key padding mask, the convolution module (pointwise GLU, depthwise conv,
    BatchNorm, SiLU, pointwise), final LayerNorm; dropout 0.1."""

    def __init__(self, d, heads, kernel):
        super().__init__()
        nn = torch.nn

        def ffn():
            return nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(), nn.Dropout(0.1), nn.Linear(4 * d, d),
                                 nn.Dropout(0.1))

        self.ff1, self.ff2, self.heads = ffn(), ffn(), heads
        self.ln_att, self.qkv, self.o = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ln_conv, self.pw1 = nn.LayerNorm(d), nn.Conv1d(d, 2 * d, 1)
        self.dw, self.bn = nn.Conv1d(d, d, kernel, padding=kernel // 2, groups=d), nn.BatchNorm1d(d)
        self.pw2, self.ln_out, self.drop = nn.Conv1d(d, d, 1), nn.LayerNorm(d), nn.Dropout(0.1)

    def forward(self, x, pad):
        f = torch.nn.functional
        x = x + 0.5 * self.ff1(x)
        q, k, v = self.qkv(self.ln_att(x)).chunk(3, -1)
        x = x + self.drop(self.o(_mha(q, k, v, self.heads, attn_mask=~pad[:, None, None, :])))
        c = self.ln_conv(x).masked_fill(pad[..., None], 0).transpose(1, 2)
        c = self.pw2(f.silu(self.bn(self.dw(f.glu(self.pw1(c), 1)))))
        x = x + self.drop(c.transpose(1, 2))
        return self.ln_out(x + 0.5 * self.ff2(x))


def _rnnt_nll(blank, label, t_lens, u_lens):
    """RNN-T negative log-likelihood in pure PyTorch: the forward variable over frames, each frame's row along the
    labels solved with a log-cumsum-exp (alpha[t, u] = c[t, u] + logcumsumexp_k(alpha[t-1, k] + blank[t-1, k] - c[t, k]),
    c the exclusive cumulative sum of the label log-probabilities along u). blank (B, T, U+1), label (B, T, U)."""
    b, t_max, _ = blank.shape
    c = torch.cat([label.new_zeros(b, t_max, 1), label.cumsum(-1)], -1)
    alphas = [c[:, 0]]
    for t in range(1, t_max):
        alphas.append(c[:, t] + torch.logcumsumexp(alphas[-1] + blank[:, t - 1] - c[:, t], -1))
    alpha = torch.stack(alphas, 1)
    rows = torch.arange(b, device=blank.device)
    return -(alpha[rows, t_lens - 1, u_lens] + blank[rows, t_lens - 1, u_lens])


@workload("transducer speech recognition training, Conformer-M RNN-T (ESPnet/torchaudio-style, random init): conv2d subsampling x4 of 80 log-mel bands, 16 Conformer blocks of width 256 (4 heads, FFN 1024, depthwise conv kernel 31, BatchNorm), an LSTM prediction network (640, run in fp32) over 1024 word pieces plus blank, a joint network (tanh of the projected encoder and predictor outputs, 640, to 1025 logits) over the full (B, T, U+1) lattice, log-softmax in fp32 and the RNN-T loss in pure PyTorch (a loop over frames with logcumsumexp along the labels); utterances of 1.5-17 s (LibriSpeech-like, uniform) with 2-4 word pieces a second, batches filled up to 200 s of audio (so 11-130 utterances), padded to the longest, SpecAugment (2 frequency masks of 27 bands, 2 time masks of 5%), 70 steps, gradient clipping 5, AdamW with warmup, bf16 autocast")
def conformer_rnnt(rng):
    nn = torch.nn
    f = nn.functional
    d, vocab, joint = _smoke(256, 64), 1024, _smoke(640, 64)
    sub = nn.Sequential(nn.Conv2d(1, d, 3, 2), nn.ReLU(), nn.Conv2d(d, d, 3, 2), nn.ReLU()).cuda()
    sub_out = nn.Linear(d * 19, d).cuda()
    blocks = nn.ModuleList([_ConformerBlock(d, 4, 31) for _ in range(_smoke(16, 2))]).cuda()
    embed = nn.Embedding(vocab + 1, joint).cuda()
    predictor = nn.LSTM(joint, joint, batch_first=True).cuda()
    enc_proj, pred_proj, out = nn.Linear(d, joint).cuda(), nn.Linear(joint, joint).cuda(), nn.Linear(joint, vocab + 1).cuda()
    modules = [sub, sub_out, blocks, embed, predictor, enc_proj, pred_proj, out]
    params = [p for m in modules for p in m.parameters()]
    for m in modules:
        m.train()
    # About 4.6k tensors a step besides the loss's loop (16 blocks, counted on
    # CPU), which adds some 10 a frame: 8-9k a step, 70 steps about 1.2M events.
    steps = _smoke(70, 2)
    opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=1e-3)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: min(1.0, (i + 1) / 20))
    for _ in range(steps):
        secs, total = [], 0.0
        while True:
            s = rng.uniform(*_smoke((1.5, 17.0), (0.5, 1.5)))
            if total + s > _smoke(200, 3) and secs:
                break
            secs.append(s)
            total += s
        frames = [int(s * 100) for s in secs]
        tokens = [max(1, int(s * rng.uniform(2, 4))) for s in secs]
        b, t_in, u_max = len(secs), max(frames), max(tokens)
        fl = torch.tensor(frames, device="cuda")
        mel = torch.randn(b, 1, t_in, 80, device="cuda") * (torch.arange(t_in, device="cuda")[None, :] < fl[:, None])[:, None, :, None]
        for _ in range(2):  # SpecAugment
            f0, w = rng.randrange(0, 80 - 27), rng.randint(0, 27)
            mel[:, :, :, f0:f0 + w] = 0
            w = rng.randint(0, int(0.05 * t_in))
            t0 = rng.randrange(0, t_in - w + 1)
            mel[:, :, t0:t0 + w] = 0
        labels = torch.randint(1, vocab + 1, (b, u_max), device="cuda")
        t_lens = torch.tensor([((n - 3) // 2 + 1 - 3) // 2 + 1 for n in frames], device="cuda")
        u_lens = torch.tensor(tokens, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            x = sub(mel)
            x = sub_out(x.transpose(1, 2).flatten(2))
            pad = torch.arange(x.size(1), device="cuda")[None, :] >= t_lens[:, None]
            for blk in blocks:
                x = blk(x, pad)
            y = embed(f.pad(labels, (1, 0)))  # blank (0) first
            with torch.autocast("cuda", enabled=False):
                y = predictor(y.float())[0]
            h = torch.tanh(enc_proj(x)[:, :, None] + pred_proj(y)[:, None])
            logp = out(h).float().log_softmax(-1)
        del h
        blank = logp[..., 0]
        lab = logp[:, :, :-1].gather(-1, labels[:, None, :, None].expand(-1, logp.size(1), -1, 1)).squeeze(-1)
        loss = (_rnnt_nll(blank, lab, t_lens, u_lens) / u_lens).mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 5.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        del fl, mel, labels, t_lens, u_lens, x, pad, y, logp, blank, lab, loss


@workload("sequential recommendation training, BERT4Rec-style (random init): 100k items, a 4-layer bidirectional post-norm transformer of width 256 (4 heads, FFN 1024, GELU, dropout 0.1) over item and learned position embeddings, user histories of 3-200 items (log-uniform, the most recent kept), batch 256 left-padded to the batch's longest, the cloze task masking 20% of each history (at least one item), the masked positions gathered (so their count varies), a transform head (dense, GELU, LayerNorm) and the full softmax over the item table (tied), cross-entropy; 600 steps, AdamW with linear decay, bf16 autocast; every 100 steps an evaluation of 4 batches of 512 users (the last item masked for prediction, scores over all items with the history's items excluded by scatter, top-10 hit rate copied back)")
def bert4rec_train(rng):
    nn = torch.nn
    f = nn.functional
    items, d, max_len = _smoke(100_000, 3000), _smoke(256, 64), 200
    pad_id, mask_id = 0, items + 1
    emb = nn.Embedding(items + 2, d, padding_idx=0).cuda()
    pos = nn.Embedding(max_len + 1, d).cuda()
    layer = nn.TransformerEncoderLayer(d, 4, 4 * d, 0.1, activation="gelu", batch_first=True)
    encoder = nn.TransformerEncoder(layer, _smoke(4, 2), enable_nested_tensor=False).cuda()
    norm, drop = nn.LayerNorm(d).cuda(), nn.Dropout(0.1)
    head = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.LayerNorm(d)).cuda()
    bias = nn.Parameter(torch.zeros(items + 2, device="cuda"))
    modules = [emb, pos, encoder, norm, head]
    params = [p for m in modules for p in m.parameters()] + [bias]
    # About 640 tensors a step with 4 layers (counted on CPU): 600 steps and 6
    # evaluations make about 0.8M events.
    steps = _smoke(600, 3)
    opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: max(0.0, 1 - i / steps))

    def histories(b):
        lengths = [_loguniform(rng, 3, _smoke(max_len, 24)) for _ in range(b)]
        s = max(lengths)
        seq = torch.randint(1, items + 1, (b, s), device="cuda")
        lt = torch.tensor(lengths, device="cuda")
        valid = torch.arange(s, device="cuda")[None, :] >= (s - lt)[:, None]
        return seq.masked_fill(~valid, pad_id), valid, s

    def encode(seq, valid, s):
        x = drop(norm(emb(seq) + pos(torch.arange(max_len + 1 - s, max_len + 1, device="cuda"))[None]))
        return encoder(x, src_key_padding_mask=~valid)

    for step in range(steps):
        for m in modules:
            m.train()
        seq, valid, s = histories(_smoke(256, 8))
        masked = (torch.rand(seq.shape, device="cuda") < 0.2) & valid
        masked[:, -1] |= ~masked.any(1)  # the most recent item when nothing else was drawn
        inp = seq.masked_fill(masked, mask_id)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = head(encode(inp, valid, s)[masked])
            logits = h @ emb.weight.T + bias
            loss = f.cross_entropy(logits.float(), seq[masked])
        loss.backward()
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        del seq, valid, masked, inp, h, logits, loss
        if (step + 1) % _smoke(100, 3) == 0:
            for m in modules:
                m.eval()
            hits = []
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for _ in range(_smoke(4, 1)):
                    seq, valid, s = histories(_smoke(512, 8))
                    target = seq[:, -1].clone()
                    inp = seq.clone()
                    inp[:, -1] = mask_id
                    scores = (head(encode(inp, valid, s)[:, -1]) @ emb.weight.T + bias).float()
                    scores.scatter_(1, seq[:, :-1], -float("inf"))
                    scores[:, [pad_id, mask_id]] = -float("inf")
                    hits.append((scores.topk(10, -1).indices == target[:, None]).any(1).float().mean())
                    del seq, valid, target, inp, scores
            torch.stack(hits).mean().item()
            del hits


class _TftGrn(torch.nn.Module):
    """The TFT's gated residual network: dense, optional static context, ELU, dense, dropout, GLU, add and norm."""

    def __init__(self, din, d, dout=None, context=False):
        super().__init__()
        nn = torch.nn
        dout = dout or d
        self.skip = nn.Linear(din, dout) if din != dout else None
        self.fc1, self.fc2 = nn.Linear(din, d), nn.Linear(d, d)
        self.ctx = nn.Linear(d, d, bias=False) if context else None
        self.glu, self.ln, self.drop = nn.Linear(d, 2 * dout), nn.LayerNorm(dout), nn.Dropout(0.1)

    def forward(self, x, c=None):
        f = torch.nn.functional
        h = self.fc1(x)
        if c is not None:
            h = h + self.ctx(c)
        h = f.glu(self.glu(self.drop(self.fc2(f.elu(h)))), -1)
        return self.ln((x if self.skip is None else self.skip(x)) + h)


class _TftVsn(torch.nn.Module):
    """The TFT's variable selection network: a GRN per variable, softmax weights from a GRN over them all."""

    def __init__(self, n, d, context=True):
        super().__init__()
        self.flat = _TftGrn(n * d, d, n, context)
        self.grns = torch.nn.ModuleList([_TftGrn(d, d) for _ in range(n)])

    def forward(self, x, c=None):  # x (B, T, n, d)
        w = torch.softmax(self.flat(x.flatten(-2), c), -1)
        h = torch.stack([g(x[..., i, :]) for i, g in enumerate(self.grns)], -1)
        return (h * w[..., None, :]).sum(-1)


class _Tft(torch.nn.Module):
    """A Temporal Fusion Transformer as in pytorch-forecasting: static, encoder and decoder variable selection, static
    contexts, LSTM encoder and decoder (packed by length), gated skips, static enrichment, interpretable multi-head
    attention (shared values, heads averaged) of the decoder steps over every valid earlier step, quantile outputs."""

    def __init__(self, d=160, heads=4, series=370, past_real=6, fut_real=2, cats=(24, 7, 12), quantiles=7):
        super().__init__()
        nn = torch.nn
        self.heads, self.n_cats = heads, len(cats)
        self.series, self.static_real = nn.Embedding(series, d), nn.Linear(1, d)
        self.past_real = nn.ModuleList([nn.Linear(1, d) for _ in range(past_real)])
        self.fut_real = nn.ModuleList([nn.Linear(1, d) for _ in range(fut_real)])
        self.cat_emb = nn.ModuleList([nn.Embedding(n, d) for n in cats])
        self.static_vsn = _TftVsn(2, d, context=False)
        self.static_ctx = nn.ModuleList([_TftGrn(d, d) for _ in range(4)])
        self.past_vsn, self.fut_vsn = _TftVsn(past_real + len(cats), d), _TftVsn(fut_real + len(cats), d)
        self.enc_lstm, self.dec_lstm = nn.LSTM(d, d, batch_first=True), nn.LSTM(d, d, batch_first=True)
        self.lstm_glu, self.lstm_ln = nn.Linear(d, 2 * d), nn.LayerNorm(d)
        self.enrich = _TftGrn(d, d, context=True)
        self.q, self.k, self.v, self.att_o = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d // heads), nn.Linear(d // heads, d)
        self.att_glu, self.att_ln = nn.Linear(d, 2 * d), nn.LayerNorm(d)
        self.pos_grn = _TftGrn(d, d)
        self.out_glu, self.out_ln = nn.Linear(d, 2 * d), nn.LayerNorm(d)
        self.out = nn.Linear(d, quantiles)
        self.drop = nn.Dropout(0.1)

    def _inputs(self, reals, cats, real_layers):
        return torch.stack([lin(reals[..., i:i + 1]) for i, lin in enumerate(real_layers)]
                           + [e(cats[..., i]) for i, e in enumerate(self.cat_emb)], 2)

    def forward(self, series, scale, past_real, past_cat, fut_real, fut_cat, enc_lens, dec_lens):
        f = torch.nn.functional
        pack, unpack = torch.nn.utils.rnn.pack_padded_sequence, torch.nn.utils.rnn.pad_packed_sequence
        static = self.static_vsn(torch.stack([self.series(series), self.static_real(scale)], 1)[:, None])
        c_sel, c_enr, c_h, c_c = (g(static) for g in self.static_ctx)
        xe = self.past_vsn(self._inputs(past_real, past_cat, self.past_real), c_sel)
        xd = self.fut_vsn(self._inputs(fut_real, fut_cat, self.fut_real), c_sel)
        te, td = xe.size(1), xd.size(1)
        with torch.autocast("cuda", enabled=False):  # the LSTMs in fp32
            state = (c_h.transpose(0, 1).float().contiguous(), c_c.transpose(0, 1).float().contiguous())
            oe, state = self.enc_lstm(pack(xe.float(), enc_lens, batch_first=True, enforce_sorted=False), state)
            od, _ = self.dec_lstm(pack(xd.float(), dec_lens, batch_first=True, enforce_sorted=False), state)
        oe, od = unpack(oe, batch_first=True, total_length=te)[0], unpack(od, batch_first=True, total_length=td)[0]
        skip = self.lstm_ln(torch.cat([xe, xd], 1) + f.glu(self.lstm_glu(self.drop(torch.cat([oe, od], 1))), -1))
        x = self.enrich(skip, c_enr)
        q = self.q(x[:, te:]).unflatten(-1, (self.heads, -1)).transpose(1, 2)
        k = self.k(x).unflatten(-1, (self.heads, -1)).transpose(1, 2)
        dev = x.device
        enc_ok = torch.arange(te, device=dev)[None, :] < torch.as_tensor(enc_lens, device=dev)[:, None]
        causal = torch.ones(td, td, dtype=torch.bool, device=dev).tril()
        allowed = torch.cat([enc_ok[:, None, :].expand(-1, td, -1), causal[None].expand(x.size(0), -1, -1)], 2)
        score = (q @ k.transpose(-1, -2) / q.size(-1) ** 0.5).masked_fill(~allowed[:, None], -1e4)
        att = (self.drop(torch.softmax(score.float(), -1)).to(q.dtype) @ self.v(x)[:, None]).mean(1)
        y = self.att_ln(x[:, te:] + f.glu(self.att_glu(self.drop(self.att_o(att))), -1))
        y = self.pos_grn(y)
        y = self.out_ln(skip[:, te:] + f.glu(self.out_glu(y), -1))
        return self.out(y)


@workload("multi-horizon forecasting training, Temporal Fusion Transformer as in pytorch-forecasting (hidden 160, 4 heads, dropout 0.1, random init) on an electricity-like set of 370 hourly series of 26k steps (three random walks per series kept on the device: the load and two weather covariates); each step a batch of 64-256 windows (capped at 48k time steps) from a length bucket of 48, 96, 168 or 336 encoder steps (each window's own encoder length between half the bucket and all of it) and 24 or 48 decoder steps (each window 1 to all of them), the series embedding and scale as statics, 6 past reals and 2 known future reals plus hour, weekday and month embeddings, encoder and decoder LSTMs (fp32) packed by length, the quantile loss over 7 quantiles masked to the valid steps; 200 steps, gradient clipping 0.1, Adam, bf16 autocast; every 50 steps a validation of 8 batches under no_grad")
def tft_forecast(rng):
    series, horizon = 370, _smoke(26_000, 2000)
    model = _Tft(d=_smoke(160, 32)).cuda()
    quantiles = torch.tensor([0.02, 0.1, 0.25, 0.5, 0.75, 0.9, 0.98], device="cuda")
    walks = (torch.randn(3, series, horizon, device="cuda") * 0.01).cumsum(-1).exp() * (torch.rand(3, series, 1, device="cuda") * 10 + 5)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def batch():
        enc_max, dec_max = rng.choice(_smoke((48, 96, 168, 336), (12, 24))), rng.choice(_smoke((24, 48), (6, 8)))
        b = min(rng.randint(*_smoke((64, 256), (4, 8))), _smoke(48_000, 4000) // (enc_max + dec_max))
        enc_lens = [rng.randint(enc_max // 2, enc_max) for _ in range(b)]
        dec_lens = [rng.randint(1, dec_max) for _ in range(b)]
        te, td = max(enc_lens), max(dec_lens)
        sid = torch.randint(0, series, (b,), device="cuda")
        start = torch.randint(0, horizon - te - td, (b,), device="cuda")
        el = torch.tensor(enc_lens, device="cuda")
        # Each window's encoder ends at start + its length; its decoder follows directly.
        t = start[:, None] + torch.arange(te + td, device="cuda")[None, :]
        t = torch.cat([t[:, :te], (start + el)[:, None] + torch.arange(td, device="cuda")[None, :]], 1)
        load, temp, hum = (w[sid[:, None], t] for w in walks)
        enc_valid = torch.arange(te, device="cuda")[None, :] < el[:, None]
        scale = ((load[:, :te] * enc_valid).sum(1) / el).clamp_min(1e-3)[:, None]
        target = load / scale
        rel = (t - start[:, None] - el[:, None]).float() / 336
        cats = torch.stack([t % 24, t // 24 % 7, t // 720 % 12], -1)
        past_real = torch.stack([target[:, :te], temp[:, :te], hum[:, :te], rel[:, :te], target[:, :te].log(),
                                 scale.expand(-1, te)], -1) * enc_valid[..., None]
        fut_real = torch.stack([temp[:, te:], rel[:, te:]], -1)
        dec_valid = torch.arange(td, device="cuda")[None, :] < torch.tensor(dec_lens, device="cuda")[:, None]
        return (sid, scale.log(), past_real, cats[:, :te], fut_real, cats[:, te:], enc_lens, dec_lens), target[:, te:], dec_valid

    def loss_of(pred, target, valid):
        err = target[..., None] - pred.float()
        q = torch.maximum(quantiles * err, (quantiles - 1) * err).mean(-1)
        return (q * valid).sum() / valid.sum()

    # About 3k tensors a step (counted on CPU: 30 GRNs and their many small
    # parameters), so 200 steps and 4 validations make about 1.3M events.
    for step in range(_smoke(200, 3)):
        model.train()
        inputs, target, valid = batch()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = loss_of(model(*inputs), target, valid)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del inputs, target, valid, loss
        if (step + 1) % _smoke(50, 3) == 0:
            model.eval()
            total = []
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for _ in range(_smoke(8, 2)):
                    inputs, target, valid = batch()
                    total.append(loss_of(model(*inputs), target, valid))
                    del inputs, target, valid
            torch.stack(total).mean().item()
            del total

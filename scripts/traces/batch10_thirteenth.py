"""The workloads of the thirteenth batch (held out), moved verbatim from record.py; how record.py registers them:
batch_common.py.
The bodies that read record.py's SMOKE flag directly read it as `_b.rec.SMOKE` (the one change made to them)."""

import math

import torch

from batch_common import Batch
from workload_models import _RrdbNet
from workload_helpers import llama_config, _loguniform, randint

_b = Batch()  # this module's workloads, and record.py's module object once register() has run
workload = _b.workload
_smoke = _b.smoke
register = _b.register  # what record.py calls


# ------------------------------------------------ thirteenth batch (held out)


@workload("optical-flow training, RAFT as in torchvision's reference recipe: torchvision raft_large (feature and context encoders, a 4-level all-pairs correlation pyramid, a ConvGRU update block with convex upsampling; random init), pairs of random frames cropped to 368-512 x 496-960 px (multiples of 8), batch 2-8 capped at 1.5M pixels, 12 flow updates, RAFT's sequence loss (gamma 0.8) against random flow with a validity mask (magnitude under 400), 120 steps, gradient clipping 1.0, AdamW with the one-cycle schedule, fp32")
def raft_flow(rng):
    import torchvision

    model = torchvision.models.optical_flow.raft_large(weights=None).cuda().train()
    steps = _smoke(120, 2)
    opt = torch.optim.AdamW(model.parameters(), lr=4e-4, weight_decay=1e-4, eps=1e-8)
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=4e-4, total_steps=steps + 100, pct_start=0.05, cycle_momentum=False, anneal_strategy="linear")
    for _ in range(steps):
        h = randint(rng, *_smoke((368, 512), (128, 136)), 8)  # RAFT needs 128 px at least
        w = randint(rng, *_smoke((496, 960), (128, 160)), 8)
        b = max(1, min(rng.randint(2, 8), 1_500_000 // (h * w)))
        img1 = torch.rand(b, 3, h, w, device="cuda") * 2 - 1
        img2 = torch.rand(b, 3, h, w, device="cuda") * 2 - 1
        flow_gt = torch.randn(b, 2, h, w, device="cuda") * 20
        valid = (flow_gt ** 2).sum(1).sqrt() < 400
        preds = model(img1, img2, num_flow_updates=12)
        loss = 0
        for i, pred in enumerate(preds):
            err = (pred - flow_gt).abs().sum(1)
            loss = loss + 0.8 ** (len(preds) - i - 1) * err[valid].mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        del img1, img2, flow_gt, valid, preds, loss, err, pred


@workload("long-document classification with sparse (sliding-window plus global) attention: HF LongformerForSequenceClassification (Longformer-base-sized: 12 layers, width 768, 12 heads, attention window 512, global attention on the first token, 4098 positions, vocab 50265, 8 classes, random init), documents of 256-4096 tokens (log-uniform) padded to the batch's longest (Longformer pads further to a multiple of 512), batch 1-16 capped at 8192 tokens after that padding, 120 steps, linear warmup and decay, gradient clipping, AdamW, bf16 autocast")
def longformer_doc(rng):
    from transformers import LongformerConfig, LongformerForSequenceClassification

    cfg = LongformerConfig(
        vocab_size=50265, hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
        attention_window=512, max_position_embeddings=4098, pad_token_id=1, bos_token_id=0, eos_token_id=2,
        type_vocab_size=1, num_labels=8,
    )
    model = LongformerForSequenceClassification(cfg).cuda().train()
    steps = _smoke(120, 2)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-5, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: min((i + 1) / 12, max(0.0, (steps - i) / steps)))
    for _ in range(steps):
        lengths = [_loguniform(rng, *_smoke((256, 4096), (64, 600))) for _ in range(rng.randint(1, 16))]
        while len(lengths) > 1 and len(lengths) * -(-max(lengths) // 512) * 512 > _smoke(8192, 1024):
            lengths.pop()
        s = max(lengths)
        ids = torch.randint(3, cfg.vocab_size, (len(lengths), s), device="cuda")
        mask = (torch.arange(s, device="cuda")[None, :] < torch.tensor(lengths, device="cuda")[:, None]).long()
        ids = ids.masked_fill(mask == 0, cfg.pad_token_id)
        ids[:, 0] = cfg.bos_token_id
        labels = torch.randint(0, 8, (len(lengths),), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        del ids, mask, labels, loss


@workload("optimizer-state offload on one GPU, ZeRO-Offload-style (DeepSpeed's stage-2 CPU offload, written by hand): an HF LlamaForCausalLM (hidden 1024, 20 layers, GQA 16/4 heads, MLP 2816, vocab 32000: 0.29B, random init) with bf16 weights on the GPU, fp32 master weights, gradients and AdamW moments on the host; each parameter's gradient copied to a pinned host buffer as soon as the backward has accumulated it (post-accumulate-grad hooks) and freed on the device at once, then clipping and a fused CPU AdamW step on the fp32 masters, and the updated weights copied back into the bf16 parameters through pinned buffers; batch 1-8 x seq 256-2048 (multiple of 64) capped at 8192 tokens, 40 steps, bf16 weights (no autocast)")
def zero_offload(rng):
    from transformers import LlamaForCausalLM

    cfg = llama_config(20, 4, 2048)
    if _b.rec.SMOKE:
        cfg.num_hidden_layers = 2
    model = LlamaForCausalLM(cfg)  # built in fp32 on the host: the masters
    masters = [torch.nn.Parameter(p.detach().clone()) for p in model.parameters()]
    for m in masters:
        m.grad = torch.zeros_like(m)
    host_grads = [torch.empty(m.shape, dtype=torch.bfloat16).pin_memory() for m in masters]
    staging = [torch.empty(m.shape, dtype=torch.bfloat16).pin_memory() for m in masters]
    model = model.to("cuda", torch.bfloat16).train()
    params = list(model.parameters())
    # Fused on the host, as DeepSpeed's CPUAdam is (foreach would take several seconds a step).
    opt = torch.optim.AdamW(masters, lr=3e-4, weight_decay=0.1, fused=True)

    def offload(i):
        def hook(p):
            host_grads[i].copy_(p.grad, non_blocking=True)
            p.grad = None

        return hook

    for i, p in enumerate(params):
        p.register_post_accumulate_grad_hook(offload(i))
    # 442 tensors a step with 2 layers on CPU (about 190 a layer): some 4k a
    # step with 20, so 40 steps make about 320k events; the host step (about
    # 1-2 s) sets the time.
    for _ in range(_smoke(40, 2)):
        s = randint(rng, *_smoke((256, 2048), (64, 128)), 64)
        b = max(1, min(rng.randint(1, 8), 8192 // s))
        ids = torch.randint(0, cfg.vocab_size, (b, s), device="cuda")
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        torch.cuda.synchronize()  # every gradient is on the host
        for m, g in zip(masters, host_grads):
            m.grad.copy_(g)
        torch.nn.utils.clip_grad_norm_(masters, 1.0)
        opt.step()
        for p, m, st in zip(params, masters, staging):
            st.copy_(m.detach())
            p.data.copy_(st, non_blocking=True)
        del ids, loss


class _Tacotron2(torch.nn.Module):
    """NVIDIA's Tacotron 2: character embedding, 3 convs and a BiLSTM encoder; an autoregressive decoder (prenet, attention
    LSTMCell, location-sensitive attention, decoder LSTMCell, mel and stop-gate projections) run frame by frame with
    teacher forcing; a 5-conv PostNet."""

    def __init__(self, symbols=148, mels=80):
        super().__init__()
        nn = torch.nn
        self.emb = nn.Embedding(symbols, 512)
        self.enc_convs = nn.ModuleList([nn.Sequential(nn.Conv1d(512, 512, 5, padding=2), nn.BatchNorm1d(512)) for _ in range(3)])
        self.enc_lstm = nn.LSTM(512, 256, batch_first=True, bidirectional=True)
        self.prenet = nn.ModuleList([nn.Linear(mels, 256, bias=False), nn.Linear(256, 256, bias=False)])
        self.att_rnn = nn.LSTMCell(256 + 512, 1024)
        self.query = nn.Linear(1024, 128, bias=False)
        self.memory_proj = nn.Linear(512, 128, bias=False)
        self.v = nn.Linear(128, 1, bias=False)
        self.loc_conv = nn.Conv1d(2, 32, 31, padding=15, bias=False)
        self.loc_dense = nn.Linear(32, 128, bias=False)
        self.dec_rnn = nn.LSTMCell(1024 + 512, 1024)
        self.proj = nn.Linear(1024 + 512, mels)
        self.gate = nn.Linear(1024 + 512, 1)
        chans = [mels, 512, 512, 512, 512, mels]
        self.postnet = nn.ModuleList([
            nn.Sequential(nn.Conv1d(chans[i], chans[i + 1], 5, padding=2), nn.BatchNorm1d(chans[i + 1])) for i in range(5)])

    def forward(self, text, text_lens, mels):
        f = torch.nn.functional
        x = self.emb(text).transpose(1, 2)
        for conv in self.enc_convs:
            x = f.dropout(f.relu(conv(x)), 0.5, self.training)
        packed = torch.nn.utils.rnn.pack_padded_sequence(x.transpose(1, 2), text_lens.cpu(), batch_first=True)
        memory, _ = torch.nn.utils.rnn.pad_packed_sequence(self.enc_lstm(packed)[0], batch_first=True)
        keys = self.memory_proj(memory)
        b, t_text = memory.shape[:2]
        pad = torch.arange(t_text, device=text.device)[None, :] >= text_lens[:, None]
        frames = torch.cat([mels.new_zeros(b, mels.size(1), 1), mels[:, :, :-1]], 2).transpose(1, 2)
        for lin in self.prenet:  # the prenet's dropout stays on, as Tacotron 2 does
            frames = f.dropout(f.relu(lin(frames)), 0.5, True)
        ah, ac, dh, dc = (memory.new_zeros(b, 1024) for _ in range(4))
        aw, awc = memory.new_zeros(b, t_text), memory.new_zeros(b, t_text)
        ctx = memory.new_zeros(b, 512)
        outs, gates = [], []
        for t in range(frames.size(1)):
            ah, ac = self.att_rnn(torch.cat([frames[:, t], ctx], -1), (ah, ac))
            ah = f.dropout(ah, 0.1, self.training)
            loc = self.loc_dense(self.loc_conv(torch.stack([aw, awc], 1)).transpose(1, 2))
            energy = self.v(torch.tanh(self.query(ah)[:, None] + loc + keys)).squeeze(-1)
            aw = torch.softmax(energy.masked_fill(pad, -float("inf")), 1)
            ctx = torch.bmm(aw[:, None], memory).squeeze(1)
            awc = awc + aw
            dh, dc = self.dec_rnn(torch.cat([ah, ctx], -1), (dh, dc))
            dh = f.dropout(dh, 0.1, self.training)
            hc = torch.cat([dh, ctx], -1)
            outs.append(self.proj(hc))
            gates.append(self.gate(hc))
        mel = torch.stack(outs, 2)
        post = mel
        for i, conv in enumerate(self.postnet):
            post = conv(post)
            post = f.dropout(torch.tanh(post) if i < 4 else post, 0.5, self.training)
        return mel, mel + post, torch.cat(gates, 1)


@workload("autoregressive text-to-speech training: Tacotron 2 as in NVIDIA's implementation (148 symbols, 512-wide character embedding, 3 encoder convs and a BiLSTM of 2 x 256, prenet 2 x 256 with dropout always on, attention LSTMCell of 1024, location-sensitive attention (128 wide, 32 filters of 31), decoder LSTMCell of 1024, one 80-band mel frame per decoder step, stop gate, 5-conv PostNet; random init), batches of 8-32 utterances of 20-180 characters sorted by length, 4.5-7.5 mel frames per character (at most 1000), padded to the longest; teacher-forced decoder loop frame by frame, masked mel MSE before and after the PostNet plus the gate BCE, 8 steps, gradient clipping 1.0, Adam (weight decay 1e-6), fp32")
def tacotron2_train(rng):
    f = torch.nn.functional
    model = _Tacotron2().cuda().train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-6)
    # About 134 tensors per decoder frame (45 forward, 89 backward; counted on
    # CPU, where LSTMCell is not fused): a step of about 1000 frames makes
    # some 200k events, 8 steps about 1.6M.
    for _ in range(_smoke(8, 2)):
        b = rng.randint(*_smoke((8, 32), (2, 4)))
        text_lens = sorted((rng.randint(*_smoke((20, 180), (5, 20))) for _ in range(b)), reverse=True)
        mel_lens = [min(1000, int(n * rng.uniform(4.5, 7.5))) for n in text_lens]
        t_text, t_mel = text_lens[0], max(mel_lens)
        text = torch.randint(1, 148, (b, t_text), device="cuda")
        tl = torch.tensor(text_lens, device="cuda")
        ml = torch.tensor(mel_lens, device="cuda")
        text = text.masked_fill(torch.arange(t_text, device="cuda")[None, :] >= tl[:, None], 0)
        valid = torch.arange(t_mel, device="cuda")[None, :] < ml[:, None]
        mels = torch.randn(b, 80, t_mel, device="cuda") * valid[:, None]
        gate_target = (torch.arange(t_mel, device="cuda")[None, :] >= ml[:, None] - 1).float()
        mel, post, gate = model(text, tl, mels)
        m = valid[:, None].float()
        denom = m.sum() * 80
        loss = (((mel - mels) ** 2 * m).sum() + ((post - mels) ** 2 * m).sum()) / denom
        loss = loss + f.binary_cross_entropy_with_logits(gate, gate_target)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del text, tl, ml, valid, mels, gate_target, mel, post, gate, m, loss


class _TxlLayer(torch.nn.Module):
    """A Transformer-XL layer: relative multi-head attention over [memory; segment] (content and position biases, the
    relative-shift trick), post-norm, ReLU FFN."""

    def __init__(self, d, heads, d_head, d_inner, drop=0.1, dropatt=0.0):
        super().__init__()
        nn = torch.nn
        self.heads, self.d_head = heads, d_head
        self.qkv = nn.Linear(d, 3 * heads * d_head, bias=False)
        self.r_net = nn.Linear(d, heads * d_head, bias=False)
        self.o = nn.Linear(heads * d_head, d, bias=False)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, d_inner), nn.ReLU(), nn.Dropout(drop), nn.Linear(d_inner, d), nn.Dropout(drop))
        self.drop, self.dropatt = nn.Dropout(drop), nn.Dropout(dropatt)

    def forward(self, w, r, r_w_bias, r_r_bias, mask, mem):
        qlen, b = w.shape[:2]
        n, dh = self.heads, self.d_head
        cat = torch.cat([mem, w], 0)
        klen = cat.size(0)
        q, k, v = self.qkv(cat).chunk(3, -1)
        q = q[-qlen:].reshape(qlen, b, n, dh)
        k, v = k.reshape(klen, b, n, dh), v.reshape(klen, b, n, dh)
        rk = self.r_net(r).reshape(klen, n, dh)
        ac = torch.einsum("ibnd,jbnd->ijbn", q + r_w_bias, k)
        bd = torch.einsum("ibnd,jnd->ijbn", q + r_r_bias, rk)
        # The relative shift: pad one column of zeros, view as (klen + 1, qlen), drop the first row.
        bd = torch.cat([bd.new_zeros(qlen, 1, b, n), bd], 1).view(klen + 1, qlen, b, n)[1:].view(qlen, klen, b, n)
        score = ((ac + bd) * dh ** -0.5).float().masked_fill(mask[:, :, None, None], -float("inf"))
        prob = self.dropatt(torch.softmax(score, 1)).to(v.dtype)
        vec = torch.einsum("ijbn,jbnd->ibnd", prob, v).reshape(qlen, b, n * dh)
        out = self.ln1(w + self.drop(self.o(vec)))
        return self.ln2(out + self.ff(out))


class _TransfoXL(torch.nn.Module):
    def __init__(self, vocab, d=410, layers=16, heads=10, d_head=41, d_inner=2100, cutoffs=(20000, 40000, 200000)):
        super().__init__()
        nn = torch.nn
        self.d = d
        self.emb = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList([_TxlLayer(d, heads, d_head, d_inner) for _ in range(layers)])
        self.r_w_bias = nn.Parameter(torch.zeros(heads, d_head))
        self.r_r_bias = nn.Parameter(torch.zeros(heads, d_head))
        self.drop = nn.Dropout(0.1)
        self.crit = nn.AdaptiveLogSoftmaxWithLoss(d, vocab, list(cutoffs), div_value=1.0)
        self.register_buffer("inv_freq", 1 / (10000 ** (torch.arange(0.0, d, 2.0) / d)), persistent=False)

    def forward(self, inp, target, mems, mem_len):
        qlen, b = inp.shape
        mlen = mems[0].size(0)
        klen = mlen + qlen
        h = self.drop(self.emb(inp) * self.d ** 0.5)
        mask = torch.triu(torch.ones(qlen, klen, dtype=torch.bool, device=inp.device), diagonal=1 + mlen)
        pos = torch.arange(klen - 1, -1, -1.0, device=inp.device)
        sinusoid = pos[:, None] * self.inv_freq[None, :]
        r = self.drop(torch.cat([sinusoid.sin(), sinusoid.cos()], -1))
        hids = [h]
        for layer, mem in zip(self.layers, mems):
            h = layer(h, r, self.r_w_bias, self.r_r_bias, mask, mem)
            hids.append(h)
        h = self.drop(h)
        with torch.no_grad():
            new_mems = [torch.cat([m, x.to(m.dtype)], 0)[-mem_len:].detach() for m, x in zip(mems, hids)]
        with torch.autocast("cuda", enabled=False):  # the adaptive softmax in fp32
            loss = self.crit(h.reshape(-1, self.d).float(), target.reshape(-1)).loss
        return loss, new_mems


@workload("recurrence-memory LM training, Transformer-XL as in its WikiText-103 base recipe (16 layers, width 410, 10 heads of 41, FFN 2100, relative positional attention with the relative shift, adaptive softmax over 267735 words with cutoffs 20k/40k/200k, run in fp32; random init), batch 32 of word streams (Zipf-like ids, log-uniform over the vocabulary), segments of variable length (the recipe's varlen: 150 tokens, or 75 one time in twenty, plus gaussian noise of 5), the hidden states of every layer carried as a detached memory of 150 tokens; every 80 segments an evaluation of 8 segments of 128 under no_grad with a 640-token memory; 240 training segments, gradient clipping 0.25, cosine schedule, Adam, bf16 autocast")
def transfo_xl(rng):
    vocab, layers, d = 267735, 16, 410
    model = _TransfoXL(vocab).cuda().train()
    # About 2.9k tensors a training segment on CPU (3.4k with foreach Adam on
    # the GPU), so 240 segments make about 1.65M events.
    steps = _smoke(240, 3)
    opt = torch.optim.Adam(model.parameters(), lr=2.5e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    b = _smoke(32, 4)
    tgt_len, mem_len = _smoke((150, 150), (24, 24))

    def fresh_mems():
        return [torch.zeros(0, b, d, device="cuda") for _ in range(layers + 1)]

    def segment(n):
        # Zipf-like (exponent 1): ids log-uniform over the vocabulary, about 79% in the head cluster.
        ids = ((torch.rand(n + 1, b, device="cuda") * math.log(vocab)).exp().long() - 1).clamp_(0, vocab - 1)
        return ids[:-1], ids[1:]

    mems = fresh_mems()
    for step in range(steps):
        bptt = tgt_len if rng.random() < 0.95 else tgt_len // 2
        n = max(5, min(tgt_len + 20, int(rng.gauss(bptt, 5))))
        inp, tgt = segment(n)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss, mems = model(inp, tgt, mems, mem_len)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        del inp, tgt, loss
        if (step + 1) % _smoke(80, 3) == 0:
            model.eval()
            eval_mems = fresh_mems()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for _ in range(_smoke(8, 2)):
                    inp, tgt = segment(_smoke(128, 16))
                    loss, eval_mems = model(inp, tgt, eval_mems, _smoke(640, 48))
                    del inp, tgt, loss
            del eval_mems
            model.train()


@workload("super-resolution serving with tiling, Real-ESRGAN-style (inference): the RRDBNet x4 generator (64 channels, 23 RRDB blocks, random weights) in fp16 under inference_mode, 70 requests of one image of 128-2048 x 128-2048 px (log-uniform each side); uint8 HWC pixels copied from a pinned host buffer, converted and reflect-padded by 10 px; an image at most 512 px per side upscaled whole, a larger one in tiles of 400 px with 10 px of overlap written into a preallocated 4x output canvas (Real-ESRGAN's tile_process); the output cropped, clamped, converted to uint8 HWC and copied back")
def sr_tile_serve(rng):
    f = torch.nn.functional
    model = _RrdbNet(_smoke(23, 1)).cuda().half().eval()
    tile, tile_pad, pre_pad, scale = _smoke(400, 48), 10, 10, 4
    with torch.inference_mode():
        for _ in range(_smoke(70, 3)):
            h, w = (_loguniform(rng, *_smoke((128, 2048), (32, 160))) for _ in range(2))
            host = torch.randint(0, 256, (h, w, 3), dtype=torch.uint8).pin_memory()
            img = host.to("cuda", non_blocking=True).permute(2, 0, 1)[None].half() / 255
            img = f.pad(img, (0, pre_pad, 0, pre_pad), mode="reflect")
            ph, pw = img.shape[2:]
            if max(h, w) <= _smoke(512, 64):
                out = model(img)
            else:
                out = img.new_zeros(1, 3, ph * scale, pw * scale)
                for ty in range(math.ceil(ph / tile)):
                    for tx in range(math.ceil(pw / tile)):
                        y0, x0 = ty * tile, tx * tile
                        y1, x1 = min(y0 + tile, ph), min(x0 + tile, pw)
                        py0, px0 = max(y0 - tile_pad, 0), max(x0 - tile_pad, 0)
                        py1, px1 = min(y1 + tile_pad, ph), min(x1 + tile_pad, pw)
                        piece = model(img[:, :, py0:py1, px0:px1])
                        oy, ox = (y0 - py0) * scale, (x0 - px0) * scale
                        out[:, :, y0 * scale:y1 * scale, x0 * scale:x1 * scale] = \
                            piece[:, :, oy:oy + (y1 - y0) * scale, ox:ox + (x1 - x0) * scale]
                        del piece
            out = out[:, :, :h * scale, :w * scale]
            pixels = (out.float().clamp_(0, 1) * 255).round().to(torch.uint8)[0].permute(1, 2, 0).contiguous()
            pixels.cpu()
            del host, img, out, pixels


@workload("multi-task fine-tuning, MT-DNN-style: one shared HF BertModel (BERT-base: 12 layers, width 768, random init) with a head per task, each step one task's batch drawn in proportion to its dataset's size: MNLI-like pairs (3 classes, batch 32, 24-256 tokens), QQP-like pairs (2 classes, 32, 16-200), STS-B-like regression (32, 16-128), CoNLL-like NER (9 tags per token, 32, 8-180), SQuAD-like extractive QA (start and end logits, 24 windows of 384 tokens) and SWAG-like multiple choice (16 questions x 4 choices of 48-128 tokens); lengths log-uniform, padded to the batch's longest (multiple of 8), segment ids for pairs, 250 steps, linear warmup and decay, gradient clipping, AdamW, bf16 autocast")
def mtdnn_multitask(rng):
    from transformers import BertConfig, BertModel

    f = torch.nn.functional
    nn = torch.nn
    cfg = BertConfig()
    encoder = BertModel(cfg, add_pooling_layer=True).cuda().train()
    # (name, dataset size in thousands, batch, length range, head outputs)
    tasks = [("mnli", 393, 32, (24, 256), 3), ("qqp", 364, 32, (16, 200), 2), ("sts", 6, 32, (16, 128), 1),
             ("ner", 14, 32, (8, 180), 9), ("squad", 88, 24, (384, 384), 2), ("swag", 73, 16, (48, 128), 1)]
    heads = nn.ModuleDict({name: nn.Sequential(nn.Dropout(0.1), nn.Linear(768, out)) for name, _, _, _, out in tasks}).cuda()
    params = list(encoder.parameters()) + list(heads.parameters())
    steps = _smoke(250, 6)
    opt = torch.optim.AdamW(params, lr=5e-5, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: min((i + 1) / 30, max(0.0, (steps - i) / steps)))
    for step in range(steps):
        name, _, b, (lo, hi), _ = tasks[step] if _b.rec.SMOKE else rng.choices(tasks, weights=[t[1] for t in tasks])[0]
        if _b.rec.SMOKE:
            b, lo, hi = 2, min(lo, 16), min(hi, 32)
        rows = b * 4 if name == "swag" else b
        lengths = [_loguniform(rng, lo, hi) for _ in range(rows)]
        s = -(-max(lengths) // 8) * 8
        lt = torch.tensor(lengths, device="cuda")
        pos = torch.arange(s, device="cuda")[None, :]
        mask = (pos < lt[:, None]).long()
        ids = torch.randint(1000, cfg.vocab_size, (rows, s), device="cuda") * mask
        # Pairs: the second segment starts at a random point of each row.
        split = (lt * torch.empty(rows, device="cuda").uniform_(0.3, 0.7)).long()
        types = ((pos >= split[:, None]) & (mask > 0)).long() if name != "ner" else torch.zeros_like(ids)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = encoder(input_ids=ids, attention_mask=mask, token_type_ids=types)
            if name in ("mnli", "qqp"):
                loss = f.cross_entropy(heads[name](out.pooler_output), torch.randint(0, 3 if name == "mnli" else 2, (b,), device="cuda"))
            elif name == "sts":
                loss = f.mse_loss(heads[name](out.pooler_output).squeeze(-1).float(), torch.rand(b, device="cuda") * 5)
            elif name == "swag":
                logits = heads[name](out.pooler_output).view(b, 4)
                loss = f.cross_entropy(logits, torch.randint(0, 4, (b,), device="cuda"))
            elif name == "ner":
                tags = torch.randint(0, 9, (b, s), device="cuda").masked_fill(mask == 0, -100)
                loss = f.cross_entropy(heads[name](out.last_hidden_state).flatten(0, 1), tags.flatten())
            else:
                start, end = heads[name](out.last_hidden_state).float().unbind(-1)
                a = torch.randint(0, s // 2, (b,), device="cuda")
                loss = (f.cross_entropy(start, a) + f.cross_entropy(end, (a + torch.randint(0, 30, (b,), device="cuda")).clamp(max=s - 1))) / 2
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        del lt, pos, mask, ids, split, types, out, loss


class _WideBlock(torch.nn.Module):
    """A pre-activation wide-ResNet block with GroupNorm (batch statistics would break per-example privacy)."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        nn = torch.nn
        self.n1, self.c1 = nn.GroupNorm(16, cin), nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.n2, self.c2 = nn.GroupNorm(16, cout), nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.short = nn.Conv2d(cin, cout, 1, stride, bias=False) if stride != 1 or cin != cout else None

    def forward(self, x):
        f = torch.nn.functional
        o = f.relu(self.n1(x))
        y = self.c2(f.relu(self.n2(self.c1(o))))
        return y + (self.short(o) if self.short is not None else x)


@workload("differentially private training, DP-SGD as in Opacus and De et al.: a WRN-16-4 (GroupNorm, 2.7M parameters, random init) on a CIFAR-sized set of 50000 32x32 uint8 images kept on the device; Poisson sampling (each image taken with probability 2048/50000, so the logical batch varies), physical micro-batches of at most 256 (Opacus's BatchMemoryManager); per-example gradients by torch.func (vmap of grad over functional_call), each clipped to norm 1 and summed; Gaussian noise (sigma 1.5) added once per logical batch, averaged by the expected batch size; random flips, 60 steps, SGD with momentum, fp32")
def dpsgd_wrn(rng):
    from torch.func import functional_call, grad, vmap

    f = torch.nn.functional
    nn = torch.nn
    widths = (16, 64, 128, 256)
    blocks = [_WideBlock(widths[0], widths[1], 1), _WideBlock(widths[1], widths[1], 1),
              _WideBlock(widths[1], widths[2], 2), _WideBlock(widths[2], widths[2], 1),
              _WideBlock(widths[2], widths[3], 2), _WideBlock(widths[3], widths[3], 1)]
    model = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False), *blocks, nn.GroupNorm(16, 256), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(256, 10)).cuda().train()
    params = {k: v.detach() for k, v in model.named_parameters()}
    opt = torch.optim.SGD(model.parameters(), lr=2.0, momentum=0.9)
    n_data = _smoke(50000, 2000)
    data = torch.randint(0, 256, (n_data, 3, 32, 32), dtype=torch.uint8, device="cuda")
    labels = torch.randint(0, 10, (n_data,), device="cuda")
    mean = torch.tensor([0.49, 0.48, 0.45], device="cuda")[:, None, None]
    std = torch.tensor([0.25, 0.24, 0.26], device="cuda")[:, None, None]
    expected, micro, clip, sigma = _smoke(2048, 40), _smoke(256, 16), 1.0, 1.5

    def loss_one(p, x, y):
        return f.cross_entropy(functional_call(model, p, (x[None],)), y[None])

    per_example = vmap(grad(loss_one), in_dims=(None, 0, 0))
    for _ in range(_smoke(60, 2)):
        idx = (torch.rand(n_data, device="cuda") < expected / n_data).nonzero().squeeze(1)
        summed = {k: torch.zeros_like(v) for k, v in params.items()}
        for i in range(0, idx.numel(), micro):
            sel = idx[i:i + micro]
            x = (data[sel].float() / 255 - mean) / std
            flip = torch.rand(sel.numel(), device="cuda") < 0.5
            x = torch.where(flip[:, None, None, None], x.flip(3), x)
            g = per_example(params, x, labels[sel])
            norms = torch.stack([t.reshape(t.size(0), -1).norm(2, dim=1) for t in g.values()], 1).norm(2, dim=1)
            factor = (clip / (norms + 1e-6)).clamp(max=1.0)
            for k, t in g.items():
                summed[k] += torch.einsum("i,i...->...", factor, t)
            del sel, x, flip, g, norms, factor
        for (k, p) in model.named_parameters():
            p.grad = (summed[k] + torch.randn_like(p) * sigma * clip) / expected
        opt.step()
        opt.zero_grad(set_to_none=True)
        del idx, summed

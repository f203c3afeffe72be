"""The workloads of the ninth recording (seven held-out families), moved verbatim from record.py; how record.py
registers them: batch_common.py."""

import math

import torch

from batch_common import Batch
from workload_models import _GptBlock
from workload_helpers import llama_config, _llama_layers, _mha

_b = Batch()  # this module's workloads, and record.py's module object once register() has run
workload = _b.workload
register = _b.register  # what record.py calls


# ------------------------------ held out, the ninth recording: seven families
#
# Seven more families the corpus did not have (extractive question-answering
# serving, image captioning with beam search, segment-anything-style serving,
# hand-written continuous batching with growing per-request KV buffers,
# torch.compile training, time-series forecasting, sampled GNN inference),
# written as fresh held-out traces to judge the allocator's frozen default:
# none was in view when its rules were chosen, and no allocator figure was
# looked at while writing them.


@workload("extractive QA serving: HF BertForQuestionAnswering (BERT-base: 12 layers, width 768, random init) fp16 under inference_mode; requests of 64-512 tokens (log-uniform; a question of 8-64, then the context) arrive between batches, 0-4 at a time or, one time in five, a burst of 1-64, and are served first come first served in batches of at most 48, padded to the longest (multiple of 8); start/end logits reduced on the GPU to the best span of at most 30 context tokens, spans copied back; 800 batches")
def qa_serving(rng):
    from transformers import BertConfig, BertForQuestionAnswering

    cfg = BertConfig()
    model = BertForQuestionAnswering(cfg).to("cuda", torch.float16).eval()
    band = torch.ones(512, 512, dtype=torch.bool, device="cuda").triu().tril(29)  # start <= end < start + 30
    queue, batches = [], 0
    with torch.inference_mode():
        while batches < 800:
            for _ in range(rng.randint(1, 64) if rng.random() < 0.2 else rng.randint(0, 4)):
                queue.append((int(64 * 8 ** rng.random()), rng.randint(8, 64)))
            if not queue:
                continue
            batch, queue = queue[:48], queue[48:]
            b, s = len(batch), -(-max(n for n, _ in batch) // 8) * 8
            ids = torch.randint(1, cfg.vocab_size, (b, s)).to("cuda")
            lengths, questions = torch.tensor(batch).to("cuda").unbind(1)
            pos = torch.arange(s, device="cuda")[None, :]
            mask = pos < lengths[:, None]
            types = mask & (pos >= questions[:, None])  # [CLS] question [SEP] | context [SEP]
            out = model(input_ids=ids, attention_mask=mask.long(), token_type_ids=types.long())
            context = types & (pos < lengths[:, None] - 1)
            start = out.start_logits.float().masked_fill(~context, -1e4)
            end = out.end_logits.float().masked_fill(~context, -1e4)
            scores = (start[:, :, None] + end[:, None, :]).masked_fill(~band[:s, :s], -1e4)
            best = scores.flatten(1).argmax(1)
            torch.stack([best // s, best % s], 1).cpu()
            batches += 1
            del ids, lengths, questions, pos, mask, types, out, context, start, end, scores, best


@workload("image captioning inference: HF VisionEncoderDecoderModel (ViT-B/16 encoder at 224 px and a GPT-2-small decoder with cross-attention, random init) bf16, generate with 1-4 beams (greedy at 1), 40 requests of 1-32 images, exactly 8-40 new tokens each")
def caption_generate(rng):
    from transformers import GPT2Config, VisionEncoderDecoderConfig, VisionEncoderDecoderModel, ViTConfig

    cfg = VisionEncoderDecoderConfig.from_encoder_decoder_configs(ViTConfig(), GPT2Config(add_cross_attention=True))
    model = VisionEncoderDecoderModel(cfg).to("cuda", torch.bfloat16).eval()
    gen = model.generation_config
    gen.decoder_start_token_id = gen.bos_token_id = gen.eos_token_id = gen.pad_token_id = 50256  # GPT-2's <|endoftext|>
    with torch.inference_mode():
        for _ in range(40):
            b, beams, n = rng.randint(1, 32), rng.randint(1, 4), rng.randint(8, 40)
            pixels = torch.randn(b, 3, 224, 224, device="cuda", dtype=torch.bfloat16)
            model.generate(pixel_values=pixels, num_beams=beams, max_new_tokens=n, min_new_tokens=n, do_sample=False)
            del pixels


class _SamLayerNorm2d(torch.nn.Module):
    """SAM's LayerNorm over the channels of (B, C, H, W), written out as SAM writes it."""

    def __init__(self, c):
        super().__init__()
        self.weight, self.bias = torch.nn.Parameter(torch.ones(c)), torch.nn.Parameter(torch.zeros(c))

    def forward(self, x):
        u = x.mean(1, keepdim=True)
        s = (x - u).pow(2).mean(1, keepdim=True)
        return self.weight[:, None, None] * ((x - u) / torch.sqrt(s + 1e-6)) + self.bias[:, None, None]


class _SamBlock(torch.nn.Module):
    """SAM's ViT block on (B, H, W, C): pre-norm attention, within 14x14 windows (the grid padded to a
    multiple of 14) or global (window 0), then a 4x MLP."""

    def __init__(self, d, heads, window):
        super().__init__()
        nn = torch.nn
        self.n1, self.qkv, self.proj = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.n2, self.mlp = nn.LayerNorm(d), nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.heads, self.window = heads, window

    def forward(self, x):
        b, h, w, c = x.shape
        y, win = self.n1(x), self.window or max(h, w)
        hp, wp = -(-h // win) * win, -(-w // win) * win
        y = torch.nn.functional.pad(y, (0, 0, 0, wp - w, 0, hp - h))
        y = y.view(b, hp // win, win, wp // win, win, c).transpose(2, 3).reshape(-1, win * win, c)
        y = self.proj(_mha(*self.qkv(y).chunk(3, -1), self.heads))
        y = y.view(b, hp // win, wp // win, win, win, c).transpose(2, 3).reshape(b, hp, wp, c)[:, :h, :w]
        x = x + y
        return x + self.mlp(self.n2(x))


class _SamEncoder(torch.nn.Module):
    """SAM's ViT-B image encoder at 1024 px: 16x16 patches to width 768, absolute positions, 12 blocks
    (global attention in blocks 3, 6, 9, 12; no relative position terms), a conv neck to 256 x 64 x 64."""

    def __init__(self, d=768):
        super().__init__()
        nn = torch.nn
        self.patch = nn.Conv2d(3, d, 16, 16)
        self.pos = nn.Parameter(torch.zeros(1, 64, 64, d))
        self.blocks = nn.Sequential(*[_SamBlock(d, 12, 0 if i % 3 == 2 else 14) for i in range(12)])
        self.neck = nn.Sequential(
            nn.Conv2d(d, 256, 1, bias=False), _SamLayerNorm2d(256),
            nn.Conv2d(256, 256, 3, padding=1, bias=False), _SamLayerNorm2d(256),
        )

    def forward(self, x):
        x = self.blocks(self.patch(x).permute(0, 2, 3, 1) + self.pos)
        return self.neck(x.permute(0, 3, 1, 2))


class _SamAttn(torch.nn.Module):
    """SAM's decoder attention: 8 heads over projections downsampled by `down`."""

    def __init__(self, d, down):
        super().__init__()
        nn = torch.nn
        self.q, self.k, self.v = (nn.Linear(d, d // down) for _ in range(3))
        self.out = nn.Linear(d // down, d)

    def forward(self, q, k, v):
        return self.out(_mha(self.q(q), self.k(k), self.v(v), 8))


class _SamTwoWay(torch.nn.Module):
    """SAM's two-way transformer layer: token self-attention, tokens to image, token MLP, image to tokens."""

    def __init__(self, d):
        super().__init__()
        nn = torch.nn
        self.self_attn, self.t2i, self.i2t = _SamAttn(d, 1), _SamAttn(d, 2), _SamAttn(d, 2)
        self.mlp = nn.Sequential(nn.Linear(d, 2048), nn.ReLU(), nn.Linear(2048, d))
        self.norms = nn.ModuleList([nn.LayerNorm(d) for _ in range(4)])

    def forward(self, q, keys, q_pe, k_pe):
        n = self.norms
        q = n[0](q + self.self_attn(q + q_pe, q + q_pe, q))
        q = n[1](q + self.t2i(q + q_pe, keys + k_pe, keys))
        q = n[2](q + self.mlp(q))
        keys = n[3](keys + self.i2t(keys + k_pe, q + q_pe, q))
        return q, keys


class _SamDecoder(torch.nn.Module):
    """SAM's prompt encoder (random Fourier positions plus a learned embedding per point label, no mask
    prompt) and mask decoder (IoU and 4 mask tokens, two two-way layers, final token-to-image attention,
    transposed convs up to 256 x 256, hypernetwork MLPs, IoU head): 3 masks and their scores per prompt."""

    def __init__(self, d=256):
        super().__init__()
        nn = torch.nn
        self.register_buffer("freqs", torch.randn(2, d // 2))
        self.labels = nn.Parameter(torch.randn(5, d))  # padding, negative, positive point, box corners
        self.no_mask, self.tokens = nn.Parameter(torch.randn(d)), nn.Parameter(torch.randn(5, d))
        self.layers = nn.ModuleList([_SamTwoWay(d), _SamTwoWay(d)])
        self.final, self.norm = _SamAttn(d, 2), nn.LayerNorm(d)
        self.up = nn.Sequential(
            nn.ConvTranspose2d(d, 64, 2, 2), _SamLayerNorm2d(64), nn.GELU(), nn.ConvTranspose2d(64, 32, 2, 2), nn.GELU(),
        )

        def mlp(out):
            return nn.Sequential(nn.Linear(d, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, out))

        self.hyper, self.iou = nn.ModuleList([mlp(32) for _ in range(4)]), mlp(4)

    def _pe(self, xy):
        c = (2 * xy - 1) @ self.freqs * (2 * math.pi)
        return torch.cat([c.sin(), c.cos()], -1)

    def forward(self, emb, points, labels):
        # emb (1, 256, 64, 64); points (k, 2, 2) in [0, 1] of the 1024 frame; labels (k, 2) in -1..3
        k, d = points.shape[0], emb.shape[1]
        sparse = torch.where(labels[..., None] < 0, 0, self._pe(points)) + self.labels[labels + 1]
        tokens = torch.cat([self.tokens.expand(k, -1, -1), sparse], 1)
        grid = (torch.arange(64, device=emb.device, dtype=emb.dtype) + 0.5) / 64
        key_pe = self._pe(torch.stack(torch.meshgrid(grid, grid, indexing="xy"), -1)).flatten(0, 1)
        src = torch.repeat_interleave(emb, k, 0) + self.no_mask[:, None, None]
        q, keys = tokens, src.flatten(2).transpose(1, 2)
        for layer in self.layers:
            q, keys = layer(q, keys, tokens, key_pe)
        q = self.norm(q + self.final(q + tokens, keys + key_pe, keys))
        up = self.up(keys.transpose(1, 2).reshape(k, d, 64, 64))
        hyper = torch.stack([mlp(q[:, 1 + i]) for i, mlp in enumerate(self.hyper)], 1)
        masks = (hyper @ up.flatten(2)).view(k, 4, 256, 256)
        return masks[:, 1:], self.iou(q[:, 0])[:, 1:]


@workload("segment-anything-style serving: a SAM ViT-B image encoder (12 blocks of width 768, 14x14 windowed attention with global attention in every third block, no relative position terms, conv neck to 256 x 64 x 64) and SAM's prompt encoder and two-way mask decoder (random weights) in bf16 under inference_mode; 48 images of camera sizes 480x640 to 3000x4000 (either orientation) uploaded as uint8 from a pinned buffer, resized to a longest side of 1024, normalized and padded; one embedding per image, then 1-64 point or box prompts in chunks of 16, three masks and IoU scores per prompt, upsampled to 1024 and to the image's size, thresholded, the best per prompt copied back")
def sam_serving(rng):
    f = torch.nn.functional
    enc = _SamEncoder().to("cuda", torch.bfloat16).eval()
    dec = _SamDecoder().to("cuda", torch.bfloat16).eval()
    sizes = [(480, 640), (768, 1024), (1080, 1920), (1536, 2048), (2268, 4032), (3000, 4000)]
    host = torch.randint(0, 256, (3000 * 4000 * 3,), dtype=torch.uint8).pin_memory()
    mean = torch.tensor([123.675, 116.28, 103.53], device="cuda").view(1, 3, 1, 1)
    std = torch.tensor([58.395, 57.12, 57.375], device="cuda").view(1, 3, 1, 1)
    with torch.inference_mode():
        for _ in range(48):
            h, w = rng.choice(sizes)
            if rng.random() < 0.3:
                h, w = w, h
            nh, nw = round(h * 1024 / max(h, w)), round(w * 1024 / max(h, w))
            img = host[: h * w * 3].view(1, h, w, 3).to("cuda", non_blocking=True).permute(0, 3, 1, 2).float()
            x = f.interpolate(img, (nh, nw), mode="bilinear", antialias=True)
            emb = enc(f.pad((x - mean) / std, (0, 1024 - nw, 0, 1024 - nh)).to(torch.bfloat16))
            del img, x
            prompts, boxes = rng.randint(1, 64), rng.random() < 0.4
            scale = torch.tensor([nw / 1024, nh / 1024], device="cuda")
            for i in range(0, prompts, 16):
                k = min(16, prompts - i)
                if boxes:  # two corners, top-left then bottom-right
                    points, labels = torch.rand(k, 2, 2, device="cuda").sort(1).values, torch.tensor([2, 3], device="cuda")
                else:  # one positive point and SAM's padding point
                    points, labels = torch.rand(k, 2, 2, device="cuda"), torch.tensor([1, -1], device="cuda")
                masks, iou = dec(emb, (points * scale).to(torch.bfloat16), labels.expand(k, 2))
                masks = f.interpolate(masks.float(), (1024, 1024), mode="bilinear")[..., :nh, :nw]
                masks = f.interpolate(masks, (h, w), mode="bilinear") > 0
                masks[torch.arange(k, device="cuda"), iou.argmax(1)].cpu()
                del points, labels, masks, iou
            del emb, scale


@workload("LLM serving with hand-written continuous batching (no HF generate): the weights of an HF LlamaForCausalLM (hidden 1024, 24 layers, GQA 16/4 heads, MLP 2816, vocab 32000: 0.34B, random init) run by a hand-written forward in bf16 under inference_mode; 0-2 requests arrive per step (prompt 16-1500, 8-256 new tokens), admitted up to 32 running and 4096 prompt tokens a step; each step prefills the newly admitted one by one, then decodes one token for every running request (batched projections and MLP, attention per request), greedy tokens copied back; one KV buffer per request for all layers, sized to the prompt rounded up to 128, reallocated at twice the size and copied when full, freed when its request ends; 400 steps")
def llm_continuous_batching(rng):
    from transformers import LlamaForCausalLM

    cfg = llama_config(24, 4, 4096)
    lm = LlamaForCausalLM(cfg).to("cuda", torch.bfloat16).eval()
    layers, heads, kv_heads, dh = cfg.num_hidden_layers, 16, 4, 64
    cos, sin = (t[0] for t in lm.model.rotary_emb(lm.lm_head.weight, torch.arange(4096, device="cuda")[None]))
    sdpa = torch.nn.functional.scaled_dot_product_attention

    def forward(x, positions, attend):
        """The final hidden states of x (T, 1024), T new tokens at `positions`; attend(layer, q, k, v)
        writes k, v to the caches and returns the attention output (T, heads, dh)."""
        c, s = cos[positions][:, None], sin[positions][:, None]
        return _llama_layers(lm, x, c, s, heads, kv_heads, dh, attend)

    def decode(i, q, k, v):
        outs = []
        for j, (kv, n, _, _) in enumerate(running):
            kv[i, 0, :, n], kv[i, 1, :, n] = k[j], v[j]
            outs.append(sdpa(q[j][None, :, None], kv[i, 0, :, : n + 1][None], kv[i, 1, :, : n + 1][None], enable_gqa=True))
        return torch.cat(outs)[:, :, 0]

    waiting, running = [], []  # running: [kv (layers, 2, kv_heads, capacity, dh), length, tokens left, last token]
    with torch.inference_mode():
        for _ in range(400):
            for _ in range(rng.choice([0, 0, 0, 0, 0, 0, 0, 1, 1, 2])):
                waiting.append((rng.randint(16, 1500), rng.randint(8, 256)))
            budget = 4096
            while waiting and len(running) < 32 and waiting[0][0] <= budget:
                p, n = waiting.pop(0)
                budget -= p
                kv = torch.empty(layers, 2, kv_heads, -(-p // 128) * 128, dh, device="cuda", dtype=torch.bfloat16)

                def prefill(i, q, k, v, kv=kv, p=p):
                    kv[i, 0, :, :p], kv[i, 1, :, :p] = k.transpose(0, 1), v.transpose(0, 1)
                    k, v = kv[i, 0, :, :p][None], kv[i, 1, :, :p][None]
                    return sdpa(q.transpose(0, 1)[None], k, v, is_causal=True, enable_gqa=True)[0].transpose(0, 1)

                prompt = torch.randint(0, cfg.vocab_size, (p,)).to("cuda")
                h = forward(lm.model.embed_tokens(prompt), torch.arange(p, device="cuda"), prefill)
                running.append([kv, p, n - 1, lm.lm_head(h[-1]).argmax().item()])
                del prompt, h
            if not running:
                continue
            for r in running:
                if r[1] == r[0].shape[3]:
                    grown = torch.empty(*r[0].shape[:3], 2 * r[1], dh, device="cuda", dtype=torch.bfloat16)
                    grown[:, :, :, : r[1]] = r[0]
                    r[0] = grown
                    del grown
            tokens = torch.tensor([r[3] for r in running]).to("cuda")
            positions = torch.tensor([r[1] for r in running]).to("cuda")
            logits = lm.lm_head(forward(lm.model.embed_tokens(tokens), positions, decode))
            for r, t in zip(running, logits.argmax(-1).tolist()):
                r[1], r[2], r[3] = r[1] + 1, r[2] - 1, t
            running = [r for r in running if r[2] > 0]  # finished requests leave, their KV buffers freed
            del tokens, positions, logits


class _Gpt(torch.nn.Module):
    """nanoGPT's GPT-2: token and learned position embeddings, blocks, final LayerNorm, a head tied to
    the token embedding, and the cross-entropy loss."""

    def __init__(self, layers=12, d=768, heads=12, vocab=50304, block=1024):
        super().__init__()
        nn = torch.nn
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(block, d)
        self.blocks = nn.Sequential(*[_GptBlock(d, heads) for _ in range(layers)])
        self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)
        self.head.weight = self.wte.weight

    def forward(self, ids, targets):
        x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1], device=ids.device))
        logits = self.head(self.ln(self.blocks(x)))
        return torch.nn.functional.cross_entropy(logits.flatten(0, 1).float(), targets.flatten())


@workload("compiled training: a nanoGPT-style GPT-2 small (12 layers, width 768, 12 heads, vocab 50304, tied head, random init) under torch.compile (default mode, whole model, PyTorch's automatic dynamic shapes after the first recompile), each step a batch of 16 x 256, 8 x 512 or 4 x 1024 tokens (length buckets), 80 steps, gradient clipping, fused AdamW, bf16 autocast")
def compiled_gpt_train(rng):
    model = _Gpt().cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95), weight_decay=0.1, fused=True)
    compiled = torch.compile(model)
    for _ in range(80):
        b, s = rng.choice([(16, 256), (8, 512), (4, 1024)])
        x, y = torch.randint(0, 50304, (2, b, s), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = compiled(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, y, loss


class _TstLayer(torch.nn.Module):
    """PatchTST's encoder layer: attention (16 heads), then a GELU FFN, each with dropout, a residual
    and BatchNorm over the width."""

    def __init__(self, d, heads=16, ff=256):
        super().__init__()
        nn = torch.nn
        self.qkv, self.out, self.heads = nn.Linear(d, 3 * d), nn.Linear(d, d), heads
        self.ff = nn.Sequential(nn.Linear(d, ff), nn.GELU(), nn.Dropout(0.2), nn.Linear(ff, d))
        self.bn1, self.bn2, self.drop = nn.BatchNorm1d(d), nn.BatchNorm1d(d), nn.Dropout(0.2)

    def forward(self, h):
        h = self.bn1((h + self.drop(self.out(_mha(*self.qkv(h).chunk(3, -1), self.heads)))).transpose(1, 2)).transpose(1, 2)
        return self.bn2((h + self.drop(self.ff(h))).transpose(1, 2)).transpose(1, 2)


class _PatchTst(torch.nn.Module):
    """PatchTST, channel-independent with RevIN: each channel's `lookback` steps, normalized, padded at the
    end by repeating the last value 8 times and cut into patches of 16 with stride 8, projected to 128
    with learned positions, 3 encoder layers, flattened and mapped linearly to `horizon` steps."""

    def __init__(self, lookback, horizon, d=128):
        super().__init__()
        nn = torch.nn
        n = (lookback - 16) // 8 + 2
        self.embed, self.pos = nn.Linear(16, d), nn.Parameter(torch.empty(n, d).uniform_(-0.02, 0.02))
        self.layers = nn.Sequential(*[_TstLayer(d) for _ in range(3)])
        self.drop, self.head = nn.Dropout(0.2), nn.Linear(n * d, horizon)

    def forward(self, x):  # (B, lookback, C) -> (B, horizon, C)
        b, _, c = x.shape
        mean, std = x.mean(1, keepdim=True), (x.var(1, keepdim=True, unbiased=False) + 1e-5).sqrt()
        x = ((x - mean) / std).transpose(1, 2).reshape(b * c, -1)
        x = torch.cat([x, x[:, -1:].expand(-1, 8)], 1).unfold(1, 16, 8)
        h = self.layers(self.drop(self.embed(x) + self.pos))
        return self.head(h.flatten(1)).view(b, c, -1).transpose(1, 2) * std + mean


@workload("time-series forecasting training: a sweep of 10 PatchTST runs (channel-independent, RevIN, patches of 16 with stride 8 projected to 128, 3 encoder layers of 16 heads with BatchNorm and FFN 256, dropout 0.2, flatten-linear head; a fresh model and Adam per run), each drawing a dataset of 7, 21, 137 or 321 channels (a random walk of 20k steps kept on the GPU), a lookback of 336, 512 or 720 and a horizon of 96, 192, 336 or 720; 40 training steps of 128 random windows (fewer when that passes 512k patches), MSE loss, then 8 validation batches; fp32")
def patchtst_train(rng):
    f = torch.nn.functional
    for _ in range(10):
        c, lookback, horizon = rng.choice([7, 21, 137, 321]), rng.choice([336, 512, 720]), rng.choice([96, 192, 336, 720])
        series = torch.randn(20_000, c, device="cuda").cumsum(0)
        model = _PatchTst(lookback, horizon).cuda()
        opt = torch.optim.Adam(model.parameters(), lr=1e-4)
        b = min(128, 2**19 // (c * ((lookback - 16) // 8 + 2)))
        span = torch.arange(lookback + horizon, device="cuda")

        def windows():
            w = series[torch.randint(0, 20_000 - lookback - horizon, (b, 1), device="cuda") + span]
            return w[:, :lookback], w[:, lookback:]

        model.train()
        for _ in range(40):
            x, y = windows()
            loss = f.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            del x, y, loss
        model.eval()
        with torch.no_grad():
            sum(f.mse_loss(model(x), y) for x, y in (windows() for _ in range(8))).item()
        del series, model, opt, span


def _sample_hop(rowptr, col, nodes, fanout):
    """Up to `fanout` in-neighbours of each of `nodes` (all of them when fewer, else uniform draws with
    replacement): the frontier (`nodes` first, then the new nodes in order of first appearance) and the
    sampled edges as (source position in the frontier, target position in `nodes`)."""
    dev = nodes.device
    start = rowptr[nodes]
    deg = rowptr[nodes + 1] - start
    slot = torch.arange(fanout, device=dev)
    offset = torch.where(deg[:, None] > fanout, (torch.rand(len(nodes), fanout, device=dev) * deg[:, None]).long(), slot)
    keep = slot < deg[:, None]
    neighbours = col[(start[:, None] + offset)[keep]]
    targets = torch.arange(len(nodes), device=dev)[:, None].expand(-1, fanout)[keep]
    frontier, inverse = torch.unique(torch.cat([nodes, neighbours]), return_inverse=True)
    first = torch.full((len(frontier),), len(inverse), device=dev)
    first.scatter_reduce_(0, inverse, torch.arange(len(inverse), device=dev), "amin")
    order = first.argsort()
    rank = torch.empty_like(order)
    rank[order] = torch.arange(len(order), device=dev)
    return frontier[order], rank[inverse[len(nodes):]], targets


@workload("sampled GNN inference: a 3-layer GraphSAGE (mean aggregation by index_add_, widths 128-256-256-172, random weights, no PyG) fp16 under inference_mode on a random power-law graph of 2M nodes and 20M edges (CSR of in-edges kept on the GPU, 128-wide fp16 node features); 500 mini-batches of 1k-16k random seed nodes, neighbours sampled on the GPU with fan-outs 15, 10, 5 (all of them below the fan-out, else uniform draws with replacement), each hop's frontier de-duplicated with its targets first, then the layers from the outermost hop inwards, predicted classes copied back")
def gnn_sampled_inference(rng):
    nn = torch.nn
    nodes, edges = 2_000_000, 20_000_000
    # In-degrees Zipf-like (a few hubs with ~1e5 in-edges), node ids shuffled; sources uniform.
    dst = torch.randperm(nodes, device="cuda")[(torch.rand(edges, device="cuda") ** 3 * nodes).long()]
    dst, order = dst.sort()
    col = torch.randint(0, nodes, (edges,), device="cuda")[order]
    rowptr = torch.zeros(nodes + 1, dtype=torch.long, device="cuda")
    rowptr[1:] = torch.bincount(dst, minlength=nodes).cumsum(0)
    del dst, order
    feats = torch.randn(nodes, 128, device="cuda", dtype=torch.half)
    widths = [128, 256, 256, 172]
    lin_self = nn.ModuleList([nn.Linear(a, b) for a, b in zip(widths, widths[1:])]).to("cuda", torch.half)
    lin_neigh = nn.ModuleList([nn.Linear(a, b, bias=False) for a, b in zip(widths, widths[1:])]).to("cuda", torch.half)
    with torch.inference_mode():
        for _ in range(500):
            hops, hop_edges = [torch.randperm(nodes, device="cuda")[: rng.randint(1000, 16000)]], []
            for fanout in (15, 10, 5):
                frontier, src, tgt = _sample_hop(rowptr, col, hops[-1], fanout)
                hops.append(frontier)
                hop_edges.append((src, tgt))
            h = feats[hops[-1]]
            for i in range(3):
                src, tgt = hop_edges[2 - i]
                n = len(hops[2 - i])
                agg = torch.zeros(n, h.shape[1], device="cuda", dtype=h.dtype).index_add_(0, tgt, h[src])
                count = torch.bincount(tgt, minlength=n).clamp_(min=1)[:, None]
                h = lin_self[i](h[:n]) + lin_neigh[i](agg / count)
                h = torch.relu(h) if i < 2 else h
                del agg, count
            h.argmax(1).cpu()
            del hops, hop_edges, frontier, src, tgt, h

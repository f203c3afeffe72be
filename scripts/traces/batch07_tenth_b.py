"""The workloads of the tenth recording (eight held-out families) (part 2 of 2), moved verbatim from record.py;
how record.py registers them: batch_common.py."""

import math

import torch

from batch_common import Batch
from workload_models import _VaeAttn, _VaeResBlock
from workload_helpers import _llama_layers, _loguniform, _mha

_b = Batch()  # this module's workloads, and record.py's module object once register() has run
workload = _b.workload
register = _b.register  # what record.py calls


class _WLayerNorm(torch.nn.LayerNorm):
    """openai-whisper's LayerNorm: computed in fp32, cast back."""

    def forward(self, x):
        return super().forward(x.float()).type(x.dtype)


class _WAttn(torch.nn.Module):
    """openai-whisper's attention (query, value and output biased, key not). With a cache (a dict),
    self-attention appends this call's keys and values to the cached ones by concatenation; cross-
    attention computes the audio's keys and values on its first call and reuses them after."""

    def __init__(self, d, heads):
        super().__init__()
        nn = torch.nn
        self.query, self.key, self.value, self.out = nn.Linear(d, d), nn.Linear(d, d, bias=False), nn.Linear(d, d), nn.Linear(d, d)
        self.heads = heads

    def forward(self, x, xa=None, cache=None):
        q = self.query(x)
        if xa is not None and cache is not None and self in cache:
            k, v = cache[self]
        else:
            k, v = self.key(x if xa is None else xa), self.value(x if xa is None else xa)
            if cache is not None:
                if xa is None and self in cache:
                    k, v = torch.cat([cache[self][0], k], 1), torch.cat([cache[self][1], v], 1)
                cache[self] = (k, v)
        causal = xa is None and q.shape[1] > 1
        return self.out(_mha(q, k, v, self.heads, is_causal=causal))


class _WBlock(torch.nn.Module):
    def __init__(self, d, heads, cross):
        super().__init__()
        nn = torch.nn
        self.attn, self.attn_ln = _WAttn(d, heads), _WLayerNorm(d)
        self.cross, self.cross_ln = (_WAttn(d, heads), _WLayerNorm(d)) if cross else (None, None)
        self.mlp, self.mlp_ln = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d)), _WLayerNorm(d)

    def forward(self, x, xa=None, cache=None):
        x = x + self.attn(self.attn_ln(x), cache=cache)
        if self.cross is not None:
            x = x + self.cross(self.cross_ln(x), xa, cache=cache)
        return x + self.mlp(self.mlp_ln(x))


class _Whisper(torch.nn.Module):
    """openai-whisper's model at the 'small' size: 80 log-mel bins x 3000 frames (30 s) through two
    convolutions (the second of stride 2) and sinusoidal positions into 12 encoder blocks of width
    768; a 12-block decoder over 51865 tokens with learned positions (448) and cross-attention;
    logits against the token embedding."""

    def __init__(self, d=768, heads=12, layers=12, vocab=51865, text_ctx=448):
        super().__init__()
        nn = torch.nn
        self.conv1, self.conv2 = nn.Conv1d(80, d, 3, padding=1), nn.Conv1d(d, d, 3, stride=2, padding=1)
        t = torch.exp(-math.log(10000) / (d // 2 - 1) * torch.arange(d // 2))[None] * torch.arange(1500)[:, None]
        self.register_buffer("audio_pos", torch.cat([t.sin(), t.cos()], 1))
        self.enc = nn.ModuleList([_WBlock(d, heads, False) for _ in range(layers)])
        self.enc_ln = _WLayerNorm(d)
        self.tok = nn.Embedding(vocab, d)
        self.text_pos = nn.Parameter(torch.randn(text_ctx, d) * 0.01)
        self.dec = nn.ModuleList([_WBlock(d, heads, True) for _ in range(layers)])
        self.dec_ln = _WLayerNorm(d)

    def encode(self, mel):
        f = torch.nn.functional
        x = f.gelu(self.conv2(f.gelu(self.conv1(mel)))).permute(0, 2, 1)
        x = (x + self.audio_pos).to(x.dtype)
        for blk in self.enc:
            x = blk(x)
        return self.enc_ln(x)

    def decode(self, tokens, audio, cache, offset):
        x = self.tok(tokens) + self.text_pos[offset : offset + tokens.shape[1]]
        for blk in self.dec:
            x = blk(x, audio, cache)
        return (self.dec_ln(x) @ self.tok.weight.to(x.dtype).t()).float()


@workload("speech transcription inference, openai-whisper-style: a Whisper-small-sized model (12+12 layers, width 768, vocab 51865, random init) in fp16 (layer norms in fp32) under inference_mode; 14 requests, each a recording of 5 s to 8 min cut into 30-s windows (the last padded with silence; 80 log-mel bins x 3000 frames each), up to 16 windows a batch; the 4-token start sequence, then greedy or 5-beam search (beams kept as rows, the audio features repeated per beam) for 2-4.5 tokens per second of the longest window's speech (at most 224), with suppressed tokens masked; a KV cache grown by concatenation at every token, every cached key and value (cross-attention's too) re-gathered by the beams' sources at each beam step, as openai-whisper's decoder does; tokens copied back")
def whisper_generate(rng):
    model = _Whisper().to("cuda", torch.half).eval()
    for m in model.modules():
        if isinstance(m, _WLayerNorm):
            m.float()
    suppress = torch.tensor(sorted(rng.sample(range(50257), 88)) + [50257, 50358, 50359, 50360, 50361], device="cuda")
    sot = torch.tensor([50258, 50259, 50359, 50363], device="cuda")  # start, English, transcribe, no timestamps
    with torch.inference_mode():
        for _ in range(14):
            seconds = rng.uniform(5, 480)
            windows = [min(30.0, seconds - 30 * i) for i in range(math.ceil(seconds / 30))]
            for i in range(0, len(windows), 16):
                batch = windows[i : i + 16]
                m, beams = len(batch), rng.choice([1, 5])
                n = min(224, int(max(batch) * rng.uniform(2, 4.5)) + 1)
                mel = torch.randn(m, 80, 3000, device="cuda", dtype=torch.half)
                for j, s in enumerate(batch):
                    mel[j, :, int(s * 100) :] = -1.5  # the padded silence
                audio = model.encode(mel).repeat_interleave(beams, 0)
                tokens = sot.repeat(m * beams, 1)
                scores = torch.zeros(m, beams, device="cuda")
                cache = {}
                for t in range(n):
                    logits = model.decode(tokens if t == 0 else tokens[:, -1:], audio, cache, 0 if t == 0 else tokens.shape[1] - 1)[:, -1]
                    logits[:, suppress] = -math.inf
                    if beams == 1:
                        tokens = torch.cat([tokens, logits.argmax(-1, keepdim=True)], 1)
                    else:
                        logp = logits.log_softmax(-1).view(m, beams, -1)
                        if t == 0:
                            logp[:, 1:] = -math.inf  # all beams start as one
                        top = (scores[:, :, None] + logp).flatten(1).topk(beams)
                        scores = top.values
                        source = (torch.arange(m, device="cuda")[:, None] * beams + top.indices // logp.shape[-1]).flatten()
                        tokens = torch.cat([tokens[source], (top.indices % logp.shape[-1]).flatten()[:, None]], 1)
                        for key, (k, v) in cache.items():
                            cache[key] = (k[source], v[source])
                        del logp, top, source
                    del logits
                best = tokens.view(m, beams, -1)[torch.arange(m, device="cuda"), scores.argmax(1)]
                best[:, 4:].cpu()
                del mel, audio, tokens, scores, cache, best


@workload("LLM serving with a paged KV cache, vLLM-style, written by hand (no HF generate): the weights of an HF LlamaForCausalLM (hidden 2048, 16 layers, GQA 16/4 heads of 128, MLP 5632, vocab 32000: 0.86B, random init) in bf16 under inference_mode, run by a hand-written forward; one KV pool preallocated at start (3072 blocks of 16 tokens for all layers, 1.6 GB), per-request block tables, a free-block list; 0-2 requests arrive per step (0.3 on average; prompt 16-2000 tokens log-uniform, 16-512 new tokens); a step either prefills the waiting requests that fit (at most 8192 prompt tokens and 64 running; one flattened batch for the projections and MLP, causal attention per request, K and V scattered into the pool by slot) or decodes one token for every running request (K and V written to their slots, each request's blocks gathered through the padded block table for a length-masked attention); a request needing a block when none is free preempts the latest admitted one (its blocks freed, recomputed later with what it generated); greedy tokens copied back every step; 800 steps")
def paged_kv_serving(rng):
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(
        hidden_size=2048, intermediate_size=5632, num_hidden_layers=16, num_attention_heads=16, num_key_value_heads=4,
        vocab_size=32000, max_position_embeddings=4096,
    )
    lm = LlamaForCausalLM(cfg).to("cuda", torch.bfloat16).eval()
    layers, heads, kv_heads = cfg.num_hidden_layers, cfg.num_attention_heads, cfg.num_key_value_heads
    dh, bs, blocks = cfg.hidden_size // heads, 16, 3072
    sdpa = torch.nn.functional.scaled_dot_product_attention
    inv = 1.0 / 10000 ** (torch.arange(0, dh, 2, device="cuda").float() / dh)
    angles = torch.arange(4096, device="cuda").float()[:, None] * inv
    cos, sin = (torch.cat([a, a], -1).to(torch.bfloat16) for a in (angles.cos(), angles.sin()))
    pool = torch.zeros(layers, 2, blocks * bs, kv_heads, dh, device="cuda", dtype=torch.bfloat16)
    free = list(range(blocks))

    def forward(ids, positions, attend):
        """Last hidden states of the flattened new tokens ids (T,) at positions (T,)."""
        x = lm.model.embed_tokens(ids)
        c, s = cos[positions][:, None], sin[positions][:, None]
        return _llama_layers(lm, x, c, s, heads, kv_heads, dh, attend)

    class Request:
        def __init__(self, prompt, new):
            self.tokens, self.prompt, self.left, self.blocks = prompt, len(prompt), new, []

    waiting, running = [], []
    with torch.inference_mode():
        for _ in range(800):
            for _ in range(rng.choice([0, 0, 0, 0, 0, 0, 0, 0, 1, 2])):
                waiting.append(Request([rng.randrange(cfg.vocab_size) for _ in range(_loguniform(rng, 16, 2000))], rng.randint(16, 512)))
            admitted, budget = [], 8192
            while waiting and len(running) + len(admitted) < 64 and len(waiting[0].tokens) <= budget:
                need = -(-(len(waiting[0].tokens) + 1) // bs)
                if need > len(free):
                    break
                r = waiting.pop(0)
                r.blocks, free[:] = free[:need], free[need:]
                budget -= len(r.tokens)
                admitted.append(r)
            if admitted:
                lens = [len(r.tokens) for r in admitted]
                ids = torch.tensor([t for r in admitted for t in r.tokens]).to("cuda", non_blocking=True)
                positions = torch.cat([torch.arange(n) for n in lens]).to("cuda", non_blocking=True)
                slots = torch.tensor([r.blocks[j // bs] * bs + j % bs for r in admitted for j in range(len(r.tokens))])
                slots = slots.to("cuda", non_blocking=True)

                def prefill(i, q, k, v):
                    pool[i, 0, slots], pool[i, 1, slots] = k, v
                    outs = []
                    for qq, kk, vv in zip(q.split(lens), k.split(lens), v.split(lens)):
                        t = lambda z: z.transpose(0, 1)[None]
                        outs.append(sdpa(t(qq), t(kk), t(vv), is_causal=True, enable_gqa=True)[0].transpose(0, 1))
                    return torch.cat(outs)

                h = forward(ids, positions, prefill)
                last = torch.tensor(lens).cumsum(0).to("cuda", non_blocking=True) - 1
                for r, t in zip(admitted, lm.lm_head(h[last]).argmax(-1).tolist()):
                    r.tokens.append(t)
                    r.left -= 1
                running += admitted
                del ids, positions, slots, h, last
            elif running:
                # Every running request needs a slot for the token it decodes now.
                for r in list(running):
                    if r in running and len(r.tokens) > len(r.blocks) * bs:
                        while not free and running[-1] is not r:
                            victim = running.pop()
                            free += victim.blocks
                            victim.blocks = []
                            waiting.insert(0, victim)
                        if not free:
                            running.remove(r)
                            free += r.blocks
                            r.blocks = []
                            waiting.insert(0, r)
                            continue
                        r.blocks.append(free.pop())
                if not running:
                    continue
                lens = [len(r.tokens) for r in running]
                width = max(len(r.blocks) for r in running)
                table = torch.tensor([r.blocks + [0] * (width - len(r.blocks)) for r in running]).to("cuda", non_blocking=True)
                ids = torch.tensor([r.tokens[-1] for r in running]).to("cuda", non_blocking=True)
                pos = torch.tensor(lens).to("cuda", non_blocking=True) - 1
                slots = table.gather(1, (pos // bs)[:, None])[:, 0] * bs + pos % bs
                span = (table[:, :, None] * bs + torch.arange(bs, device="cuda")).flatten(1)  # (B, width * bs)
                visible = (torch.arange(width * bs, device="cuda")[None] <= pos[:, None])[:, None, None]

                def decode(i, q, k, v):
                    pool[i, 0, slots], pool[i, 1, slots] = k, v
                    kk, vv = pool[i, 0][span].transpose(1, 2), pool[i, 1][span].transpose(1, 2)  # (B, kv_heads, L, dh)
                    return sdpa(q[:, :, None], kk, vv, attn_mask=visible, enable_gqa=True)[:, :, 0]

                h = forward(ids, pos, decode)
                for r, t in zip(running, lm.lm_head(h).argmax(-1).tolist()):
                    r.tokens.append(t)
                    r.left -= 1
                del table, ids, pos, slots, span, visible, h
            for r in [r for r in running if r.left <= 0]:
                running.remove(r)
                free += r.blocks


class _ArBlock(torch.nn.Module):
    """A LlamaGen-style block (RMSNorm, fused QKV, rotary positions applied as a complex product,
    SwiGLU MLP) decoding against a static KV cache (batch, heads, max length, head dim) that it
    writes at the given positions, attending over the whole cache under a mask."""

    def __init__(self, d=768, heads=12, ff=2048):
        super().__init__()
        nn = torch.nn
        self.n1, self.n2 = nn.RMSNorm(d, eps=1e-5), nn.RMSNorm(d, eps=1e-5)
        self.qkv, self.o = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d, bias=False)
        self.w1, self.w3, self.w2 = nn.Linear(d, ff, bias=False), nn.Linear(d, ff, bias=False), nn.Linear(ff, d, bias=False)
        self.heads = heads

    @staticmethod
    def _rotate(x, freqs):
        z = torch.view_as_complex(x.float().unflatten(-1, (-1, 2)))
        return torch.view_as_real(z * freqs).flatten(-2).type_as(x)

    def forward(self, x, freqs, cache, pos, mask):
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, t, 3, self.heads, -1).unbind(2)
        q, k = self._rotate(q, freqs), self._rotate(k, freqs)
        cache[0].index_copy_(2, pos, k.transpose(1, 2))
        cache[1].index_copy_(2, pos, v.transpose(1, 2))
        a = torch.nn.functional.scaled_dot_product_attention(q.transpose(1, 2), cache[0], cache[1], attn_mask=mask)
        x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
        h = self.n2(x)
        return x + self.w2(torch.nn.functional.silu(self.w1(h)) * self.w3(h))


class _VqDecoder(torch.nn.Module):
    """A VQGAN decoder as in LlamaGen's VQ-16 (random weights): 8-dim codes, a 1x1 conv to 256, a conv
    to 512, a mid-block of two ResBlocks around attention, five levels of three ResBlocks (512-256-256-
    128-128 channels) with four nearest 2x upsamplings and a conv between them, GroupNorm, SiLU, RGB:
    16x the token grid."""

    def __init__(self, ch=(512, 256, 256, 128, 128)):
        super().__init__()
        nn = torch.nn
        self.post_quant, self.inp = nn.Conv2d(8, 256, 1), nn.Conv2d(256, ch[0], 3, padding=1)
        self.mid = nn.Sequential(_VaeResBlock(ch[0], ch[0]), _VaeAttn(ch[0]), _VaeResBlock(ch[0], ch[0]))
        levels, c = [], ch[0]
        for i, co in enumerate(ch):
            blocks = [_VaeResBlock(c if j == 0 else co, co) for j in range(3)]
            if i < len(ch) - 1:
                blocks += [nn.Upsample(scale_factor=2.0, mode="nearest"), nn.Conv2d(co, co, 3, padding=1)]
            levels.append(nn.Sequential(*blocks))
            c = co
        self.up = nn.Sequential(*levels)
        self.out = nn.Sequential(nn.GroupNorm(32, c, eps=1e-6), nn.SiLU(), nn.Conv2d(c, 3, 3, padding=1))

    def forward(self, z):
        return self.out(self.up(self.mid(self.inp(self.post_quant(z)))))


@workload("autoregressive image generation, LlamaGen-style (inference): a class-conditional GPT-B over VQ tokens (12 layers, width 768, 12 heads, SwiGLU 2048, 2D rotary positions, vocab 16384, 1000 classes + a null class; random weights) and a VQGAN decoder (codebook 16384 x 8, 16x upsampling, 128-512 channels), both bf16 under inference_mode; requests of batch 1-16 at a token grid of 16, 24 or 32 (256-1024 tokens, 256-512 px) until 2600 decoding steps in all; per request a static KV cache and causal mask sized to the request (batch doubled for classifier-free guidance, scale 4), the class token prefilled, then one token per step: logits of the conditional and unconditional halves mixed, top-k 2000 sampling, the token fed to both halves; codes looked up, normalized and decoded to uint8 pixels copied back")
def vq_image_gen(rng):
    f = torch.nn.functional
    nn = torch.nn
    d, heads, layers, vocab = 768, 12, 12, 16384
    dh = d // heads
    tok, cls = nn.Embedding(vocab, d), nn.Embedding(1001, d)
    blocks = nn.ModuleList([_ArBlock(d, heads) for _ in range(layers)])
    norm, head = nn.RMSNorm(d, eps=1e-5), nn.Linear(d, vocab, bias=False)
    gpt = nn.ModuleList([tok, cls, blocks, norm, head]).to("cuda", torch.bfloat16).eval()
    codebook = f.normalize(torch.randn(vocab, 8, device="cuda"), dim=-1).to(torch.bfloat16)
    vq = _VqDecoder().to("cuda", torch.bfloat16).eval()

    def rope_2d(grid):
        """The rotary factors of the class token (none) and of each grid position: half the pairs by row, half by column."""
        inv = 1.0 / 10000 ** (torch.arange(0, dh // 2, 2, device="cuda").float() / (dh // 2))
        t = torch.arange(grid, device="cuda").float()[:, None] * inv
        rows, cols = t[:, None].expand(grid, grid, -1), t[None].expand(grid, grid, -1)
        angles = torch.cat([rows, cols], -1).flatten(0, 1)
        angles = torch.cat([torch.zeros_like(angles[:1]), angles])
        return torch.polar(torch.ones_like(angles), angles)

    steps = 0
    with torch.inference_mode():
        while steps < 2600:
            b, grid = rng.randint(1, 16), rng.choice([16, 16, 24, 32])
            n = grid * grid
            freqs = rope_2d(grid)[:, None]  # (1 + n, 1, dh / 2)
            cache = [torch.zeros(2, 2 * b, heads, n + 1, dh, device="cuda", dtype=torch.bfloat16) for _ in range(layers)]
            causal = torch.ones(n + 1, n + 1, dtype=torch.bool, device="cuda").tril()
            labels = torch.randint(0, 1000, (b,), device="cuda")
            x = cls(torch.cat([labels, torch.full_like(labels, 1000)]))[:, None]
            out = torch.empty(b, n, dtype=torch.long, device="cuda")
            for i in range(n):
                pos = torch.tensor([i], device="cuda")
                mask = causal[None, None, pos]
                for blk, c in zip(blocks, cache):
                    x = blk(x, freqs[pos], c, pos, mask)
                cond, uncond = head(norm(x[:, -1])).float().chunk(2)
                logits = uncond + 4.0 * (cond - uncond)
                logits[logits < logits.topk(2000).values[:, -1:]] = -math.inf
                nxt = torch.multinomial(logits.softmax(-1), 1)
                out[:, i] = nxt[:, 0]
                x = tok(torch.cat([nxt, nxt]))
                del pos, mask, cond, uncond, logits, nxt
            steps += n
            z = codebook[out].view(b, grid, grid, 8).permute(0, 3, 1, 2)
            pixels = ((vq(z).float().clamp(-1, 1) + 1) * 127.5).round().to(torch.uint8)
            pixels.cpu()
            del freqs, cache, causal, labels, x, out, z, pixels


@workload("compiled vision serving: torchvision ResNet-50 (random init, bf16, channels-last) under torch.compile(dynamic=True) (default mode) with the preprocessing and top-5 in the compiled function, under inference_mode; 3000 requests of 1-128 images (log-uniform: most small) at 224 px, or one time in five at 288, 320 or 384 px, uint8 images copied from a pinned host buffer, normalized on the device, top-5 classes and scores copied back")
def compiled_vision_serving(rng):
    import torchvision

    model = torchvision.models.resnet50().to("cuda", torch.bfloat16).to(memory_format=torch.channels_last).eval()
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1) * 255
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1) * 255
    host = torch.randint(0, 256, (128 * 3 * 384 * 384,), dtype=torch.uint8).pin_memory()

    def serve(images):
        x = ((images.float() - mean) / std).to(torch.bfloat16).contiguous(memory_format=torch.channels_last)
        return model(x).float().softmax(-1).topk(5)

    compiled = torch.compile(serve, dynamic=True)
    with torch.inference_mode():
        for _ in range(3000):
            b = min(128, int(2 ** rng.uniform(0, 7.1)))
            r = 224 if rng.random() < 0.8 else rng.choice([288, 320, 384])
            images = host[: b * 3 * r * r].view(b, 3, r, r).to("cuda", non_blocking=True)
            scores, classes = compiled(images)
            scores.cpu(), classes.cpu()
            del images, scores, classes

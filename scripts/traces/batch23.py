"""The twenty-third batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch22_b.py are). Same conventions: models built from configs (transformers, torchvision or hand-written
torch) with random weights, nothing downloaded, `rng` the workload's random.Random, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny.

record.py calls `register(<its own module object>)` once, just before main(), after batch22_b's: every workload
below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it reaches
record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import _rope_tables

_b = Batch()  # this batch's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- SFT with a chunked fused linear cross-entropy


def _liger_chunk(bt, vocab, hidden):
    """Liger-Kernel's chunk size for its fused linear cross-entropy: the next power of two of
    ceil(BT / ceil(V / H)) tokens, so that a chunk's logits are about as large as the hidden states."""
    inc = -(-vocab // hidden)
    return 1 << max(0, (-(-bt // inc) - 1).bit_length())


class _ChunkedLinearCE(torch.autograd.Function):
    """The mean cross-entropy of (h @ w.T) against labels (-100 ignored) without the (N, V) logits: the tokens in
    Liger's chunks, each chunk's logits made in bf16, its softmax in fp32, its gradients with respect to h and w
    computed in the forward (w's accumulated by addmm into an fp32 buffer) and the logits freed; the backward only
    scales them."""

    @staticmethod
    def forward(ctx, h, w, labels):
        n, d = h.shape
        chunk = _liger_chunk(n, w.shape[0], d)
        wb = w.to(torch.bfloat16)
        gh = torch.empty_like(h)
        gw = torch.zeros_like(w)
        valid = labels != -100
        count = valid.sum().clamp_min(1).float()
        loss = torch.zeros((), device=h.device)
        for i in range(0, n, chunk):
            hc, lc, vc = h[i: i + chunk].to(torch.bfloat16), labels[i: i + chunk], valid[i: i + chunk]
            logits = (hc @ wb.t()).float()
            lse = logits.logsumexp(-1)
            tgt = lc.clamp_min(0)[:, None]
            loss += ((lse - logits.gather(1, tgt)[:, 0]) * vc).sum()
            g = logits.sub_(lse[:, None]).exp_()  # the softmax, in place of the logits
            g.scatter_add_(1, tgt, -torch.ones_like(tgt, dtype=g.dtype))
            g = (g * (vc[:, None] / count)).to(torch.bfloat16)
            gh[i: i + chunk] = g @ wb
            gw.addmm_(g.t().float(), hc.float())
            del logits, lse, g, hc
        ctx.save_for_backward(gh, gw)
        return loss / count

    @staticmethod
    def backward(ctx, grad):
        gh, gw = ctx.saved_tensors
        return gh * grad, gw * grad, None


@_workload("supervised fine-tuning with a chunked fused linear cross-entropy, Liger-Kernel-style (its chunking and math written in PyTorch: the (tokens, 128256) logits never whole, each chunk's logits made and freed in the forward with the hidden states' and the tied head's gradients computed there, Liger's chunk size next_pow2(ceil(BT / ceil(V/H))), 64-128 chunks a step): an HF LlamaModel with a Llama-3 tokenizer's vocabulary (128256, tied embeddings; hidden 1024, 10 layers, GQA 16/4 heads, MLP 2816, random init, sdpa) with HF gradient checkpointing (non-reentrant), bf16 autocast; conversations of a 32-1024-token prompt and a 16-1024-token response (log-uniform) right-padded to the batch's longest, batches of 1-16 capped at 8192 padded tokens, prompt and padding labelled -100; AdamW (lr 2e-5, cosine after 8 warmup steps), gradient clipping 1.0, 70 steps, the loss read back every step")
def chunked_ce_sft(rng):
    from transformers import LlamaConfig, LlamaModel

    vocab = _smoke(128256, 4000)
    cfg = LlamaConfig(hidden_size=_smoke(1024, 64), intermediate_size=_smoke(2816, 128), num_hidden_layers=10,
                      num_attention_heads=16, num_key_value_heads=4, vocab_size=vocab, max_position_embeddings=4096,
                      tie_word_embeddings=True)
    lm = LlamaModel(cfg).cuda().train()
    lm.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    opt = torch.optim.AdamW(lm.parameters(), lr=2e-5, weight_decay=0.0)
    steps, warm, cap = _smoke(70, 3), 8, _smoke(8192, 512)
    # About 4.5k tensors a step (counted on CPU: about 2.7k the checkpointed model with its recomputation, backward
    # and AdamW, 17 a loss chunk; the real rows average 7.3k tokens in 105 chunks): 70 steps make about 0.32M
    # tensors, 0.63M events.
    for step in range(steps):
        lr = 2e-5 * min(1.0, (step + 1) / warm) * 0.5 * (1 + math.cos(math.pi * step / steps))
        opt.param_groups[0]["lr"] = lr
        rows = []
        while len(rows) < 16:
            p, r = _loguniform(rng, 32, _smoke(1024, 96)), _loguniform(rng, 16, _smoke(1024, 96))
            if (len(rows) + 1) * max([p + r] + [a + c for a, c in rows]) > cap:
                break
            rows.append((p, r))
        rows = rows or [(min(p, cap // 2), min(r, cap // 2))]
        b, t = len(rows), max(p + r for p, r in rows)
        pos = torch.arange(t, device="cuda")[None]
        plen = torch.tensor([p for p, _ in rows], device="cuda")[:, None]
        tlen = torch.tensor([p + r for p, r in rows], device="cuda")[:, None]
        ids = torch.randint(0, vocab, (b, t), device="cuda")
        mask = (pos < tlen).long()
        labels = torch.roll(ids, -1, 1).masked_fill((pos < plen - 1) | (pos >= tlen - 1), -100)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = lm(input_ids=ids, attention_mask=mask, use_cache=False).last_hidden_state
        loss = _ChunkedLinearCE.apply(h.flatten(0, 1), lm.embed_tokens.weight, labels.flatten())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(lm.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        float(loss.detach())
        del ids, mask, labels, h, loss, pos, plen, tlen
    torch.cuda.synchronize()


# ---------------------------------------------------------------- 8-bit AdamW (blockwise quantized states)


def _dynamic_map(signed):
    """A 256-entry quantization map in the spirit of bitsandbytes' dynamic map (log-spaced magnitudes, 0
    included), sorted: signed for Adam's first moment, unsigned for its second."""
    if signed:
        pos = torch.logspace(-6, 0, 128)
        return torch.cat([-pos[1:].flip(0), torch.zeros(1), pos])
    return torch.cat([torch.zeros(1), torch.logspace(-7, 0, 255)])


def _quantize8(x, code, block=2048):
    """bitsandbytes' blockwise 8-bit quantization of x: blocks of `block` values (the last zero-padded), each
    scaled by its absmax and rounded to the nearest entry of `code`: (codes (blocks, block) uint8, absmax)."""
    flat = x.flatten()
    xb = torch.nn.functional.pad(flat, (0, (-flat.numel()) % block)).view(-1, block)
    absmax = xb.abs().amax(1).clamp_min(1e-12)
    xn = xb / absmax[:, None]
    idx = torch.searchsorted(code, xn).clamp_(1, code.numel() - 1)
    lo, hi = code[idx - 1], code[idx]
    q = torch.where(xn - lo < hi - xn, idx - 1, idx).to(torch.uint8)
    return q, absmax


def _dequantize8(q, absmax, code, shape):
    n = math.prod(shape)
    return (code[q.int()] * absmax[:, None]).flatten()[:n].view(shape)


class _AdamW8bit(torch.optim.Optimizer):
    """bitsandbytes' AdamW8bit (blockwise, block 2048) written in PyTorch: each step a parameter's 8-bit moments
    are dequantized, updated, applied and quantized again; parameters of fewer than 4096 values keep fp32
    moments (its min_8bit_size)."""

    def __init__(self, params, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))
        self.codes = None

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                if self.codes is None:
                    self.codes = (_dynamic_map(True).to(p.device), _dynamic_map(False).to(p.device))
                c1, c2 = self.codes
                st = self.state[p]
                big = p.numel() >= 4096
                if not st:
                    st["step"] = 0
                    if big:
                        st["m"], st["ma"] = _quantize8(torch.zeros_like(p), c1)
                        st["v"], st["va"] = _quantize8(torch.zeros_like(p), c2)
                    else:
                        st["m"], st["v"] = torch.zeros_like(p), torch.zeros_like(p)
                st["step"] += 1
                g = p.grad
                m = _dequantize8(st["m"], st["ma"], c1, p.shape) if big else st["m"]
                v = _dequantize8(st["v"], st["va"], c2, p.shape) if big else st["v"]
                m.mul_(b1).add_(g, alpha=1 - b1)
                v.mul_(b2).addcmul_(g, g, value=1 - b2)
                p.mul_(1 - lr * wd)
                p.addcdiv_(m, v.sqrt().div_(math.sqrt(1 - b2 ** st["step"])).add_(eps),
                           value=-lr / (1 - b1 ** st["step"]))
                if big:
                    st["m"], st["ma"] = _quantize8(m, c1)
                    st["v"], st["va"] = _quantize8(v, c2)
                del m, v


@_workload("masked-LM pretraining with an 8-bit optimizer, bitsandbytes AdamW8bit (Dettmers et al. 2022) written in PyTorch: blockwise 8-bit moments (blocks of 2048, absmax scales, nearest entry of a signed and an unsigned 256-value dynamic map by searchsorted), each step every parameter's moments dequantized, updated, applied and quantized again, parameters under 4096 values with fp32 moments; an HF RobertaForMaskedLM (roberta-base-sized: 12 layers, width 768, 12 heads, vocab 50265, random init, sdpa) under bf16 autocast; batches of 8-64 rows of 64-512 tokens (drawn, at most 8192 tokens), 15% masked (80/10/10), gradient clipping 1.0, lr 3e-4 after 6 warmup steps, 64 steps, the loss read back every step")
def adam8bit_mlm(rng):
    from transformers import RobertaConfig, RobertaForMaskedLM

    cfg = RobertaConfig(vocab_size=50265, hidden_size=_smoke(768, 64), num_hidden_layers=12,
                        num_attention_heads=12 if _smoke(1, 0) else 4, intermediate_size=_smoke(3072, 128),
                        max_position_embeddings=514, attn_implementation="sdpa")
    model = RobertaForMaskedLM(cfg).cuda().train()
    opt = _AdamW8bit(model.parameters(), lr=3e-4)
    cap = _smoke(8192, 1024)
    # About 4.8k tensors a step (counted on CPU: about 37 a parameter of 4096 values or more, 8 a smaller one,
    # the model's forward and backward about 1.5k): 64 steps make about 0.31M tensors, 0.62M events.
    for step in range(_smoke(64, 3)):
        for g in opt.param_groups:
            g["lr"] = 3e-4 * min(1.0, (step + 1) / 6)
        t = rng.choice([64, 128, 256, 384, 512]) if _smoke(1, 0) else 64
        b = max(1, min(rng.randint(8, 64), cap // t))
        ids = torch.randint(3, cfg.vocab_size, (b, t), device="cuda")
        r = torch.rand(b, t, device="cuda")
        labels = ids.masked_fill(r >= 0.15, -100)
        inp = ids.masked_fill(r < 0.12, 50264)  # <mask>
        swap = (r >= 0.12) & (r < 0.135)
        inp = torch.where(swap, torch.randint_like(ids, 3, cfg.vocab_size), inp)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=inp, labels=labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        float(loss.detach())
        del ids, r, labels, inp, swap, loss
    torch.cuda.synchronize()


# ---------------------------------------------------------------- masked-diffusion LM sampling (LLaDA)


def _llada_schedule(block, steps):
    """LLaDA's get_num_transfer_tokens for a block of `block` masked tokens unmasked over `steps` steps: as even
    a split as can be, the remainder to the first steps."""
    base, rem = divmod(block, steps)
    return [base + (1 if i < rem else 0) for i in range(steps)]


@_workload("masked-diffusion language-model sampling, LLaDA-style (Nie et al. 2025) as its generate() runs it, written by hand over an HF LlamaForCausalLM's weights used bidirectionally (no causal mask; hidden 1024, 12 layers, GQA 16/4 heads of 64, MLP 2816, LLaDA's vocabulary of 126464 with mask id 126336, random init) in bf16 under inference_mode, no KV cache: 6 batches one after another of 1-4 prompts of 32-512 tokens (log-uniform, left-padded, a key-padding mask; at most 1536 tokens a batch) and a 64, 128 or 256-token answer of mask tokens, semi-autoregressive blocks of 32 (drawn 1 or 2 tokens unmasked a step), every step the whole sequence through the model (classifier-free guidance on half the batches: the batch doubled with the prompt masked, scale 1-2), greedy x0, its float64 softmax confidence (as LLaDA computes it), positions after the block set to -inf, per row the top-k most confident masked positions unmasked (low-confidence remasking); the answers read back per batch")
def llada_sample(rng):
    from transformers import LlamaConfig, LlamaForCausalLM

    f = torch.nn.functional
    d, heads, kvh, vocab, mask_id = _smoke(1024, 64), 16, 4, _smoke(126464, 2000), _smoke(126336, 1999)
    dh = d // heads
    cfg = LlamaConfig(hidden_size=d, intermediate_size=_smoke(2816, 128), num_hidden_layers=12,
                      num_attention_heads=heads, num_key_value_heads=kvh, vocab_size=vocab,
                      max_position_embeddings=4096)
    lm = LlamaForCausalLM(cfg).to("cuda", torch.bfloat16).eval()
    rope = _b.rec._rope
    cos, sin = _rope_tables(dh, 1024, 10000.0)
    block = _smoke(32, 8)

    def logits_of(x, keep):
        """x (b, T) ids, keep (b, T) the key-padding mask: (b, T, V) logits."""
        b, t = x.shape
        h = lm.model.embed_tokens(x)
        c, s = cos[:t][None, :, None], sin[:t][None, :, None]
        am = keep[:, None, None, :]
        for layer in lm.model.layers:
            a = layer.self_attn
            y = layer.input_layernorm(h)
            q = rope(a.q_proj(y).view(b, t, heads, dh), c, s).transpose(1, 2)
            k = rope(a.k_proj(y).view(b, t, kvh, dh), c, s).transpose(1, 2)
            v = a.v_proj(y).view(b, t, kvh, dh).transpose(1, 2)
            o = f.scaled_dot_product_attention(q, k, v, attn_mask=am, enable_gqa=True)
            h = h + a.o_proj(o.transpose(1, 2).reshape(b, t, d))
            h = h + layer.mlp(layer.post_attention_layernorm(h))
        return lm.lm_head(lm.model.norm(h))

    # About 430 tensors a model step (counted on CPU: about 30 a layer, the guidance and sampling the rest): the 6
    # batches' draws make 736 steps, about 0.32M tensors, 0.63M events.
    with torch.inference_mode():
        for _ in range(_smoke(6, 2)):
            b = rng.randint(1, 4)
            plens = [_loguniform(rng, 32, _smoke(512, 24)) for _ in range(b)]
            gen = rng.choice([64, 128, 256]) if _smoke(1, 0) else 16
            per_step = rng.choice([1, 2])
            cfg_scale = rng.uniform(1.0, 2.0) if rng.random() < 0.5 else 0.0
            p = max(plens)
            t = p + gen
            b = max(1, min(b, _smoke(1536, 4096) // t))  # the float64 softmax: at most 1536 x 126464 x 8 bytes
            plens = plens[:b]
            p = max(plens)
            t = p + gen
            pad = torch.tensor([p - n for n in plens], device="cuda")[:, None]
            pos = torch.arange(t, device="cuda")[None]
            keep = pos >= pad
            x = torch.full((b, t), mask_id, dtype=torch.long, device="cuda")
            x[:, :p] = torch.randint(0, mask_id, (b, p), device="cuda").masked_fill(~keep[:, :p], 126081 % vocab)
            prompt = (pos < p) & keep
            for blk in range(gen // block):
                end = p + (blk + 1) * block
                for k in _llada_schedule(block, block // per_step):
                    masked = x == mask_id
                    if cfg_scale > 0:
                        un = x.masked_fill(prompt, mask_id)
                        both = logits_of(torch.cat([x, un]), torch.cat([keep, keep]))
                        cond, unc = both.chunk(2)
                        logits = unc + (cfg_scale + 1) * (cond - unc)
                        del un, both, cond, unc
                    else:
                        logits = logits_of(x, keep)
                    x0 = logits.argmax(-1)
                    prob = f.softmax(logits.to(torch.float64), -1)
                    x0_p = prob.gather(-1, x0[..., None])[..., 0]
                    del prob, logits
                    x0_p[:, end:] = -math.inf
                    x0 = torch.where(masked, x0, x)
                    conf = torch.where(masked, x0_p, torch.full_like(x0_p, -math.inf))
                    transfer = torch.zeros_like(x0, dtype=torch.bool)
                    for j in range(b):
                        transfer[j, conf[j].topk(k).indices] = True
                    x[transfer] = x0[transfer]
                    del masked, x0, x0_p, conf, transfer
            x[:, p:].tolist()
            del x, keep, pos, pad, prompt
    torch.cuda.synchronize()


# ---------------------------------------------------------------- progressive growing GAN with WGAN-GP


class _EqConv(torch.nn.Module):
    """ProGAN's equalized-learning-rate convolution: N(0, 1) weights scaled by He's constant at every call."""

    def __init__(self, cin, cout, k, pad=None):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(cout, cin, k, k))
        self.bias = torch.nn.Parameter(torch.zeros(cout))
        self.scale, self.pad = math.sqrt(2 / (cin * k * k)), k // 2 if pad is None else pad

    def forward(self, x):
        return torch.nn.functional.conv2d(x, self.weight * self.scale, self.bias, padding=self.pad)


def _pixnorm(x):
    return x * (x.pow(2).mean(1, keepdim=True) + 1e-8).rsqrt()


def _lrelu(x):
    return torch.nn.functional.leaky_relu(x, 0.2)


class _ProGan(torch.nn.Module):
    """ProGAN (Karras et al. 2018) for 128 px: a generator of pixel-normalized equalized convolutions doubling
    4 -> 128 px (512 channels to 32 px, then 256, 128) with a toRGB per resolution, a mirrored discriminator with
    fromRGB per resolution and a minibatch-stddev layer (groups of 4); the newest block faded in by alpha."""

    def __init__(self, chans=(512, 512, 512, 512, 256, 128), z=512):
        super().__init__()
        nn = torch.nn
        self.z, self.chans = z, chans
        self.g_in = nn.Parameter(torch.randn(z, chans[0] * 16))
        self.g0 = _EqConv(chans[0], chans[0], 3)
        self.g_blocks = nn.ModuleList(nn.ModuleList([_EqConv(chans[i - 1], chans[i], 3),
                                                     _EqConv(chans[i], chans[i], 3)]) for i in range(1, len(chans)))
        self.to_rgb = nn.ModuleList(_EqConv(c, 3, 1) for c in chans)
        self.from_rgb = nn.ModuleList(_EqConv(3, c, 1) for c in chans)
        self.d_blocks = nn.ModuleList(nn.ModuleList([_EqConv(chans[i], chans[i], 3),
                                                     _EqConv(chans[i], chans[i - 1], 3)]) for i in range(1, len(chans)))
        self.d_final = nn.ModuleList([_EqConv(chans[0] + 1, chans[0], 3), _EqConv(chans[0], chans[0], 4, 0)])
        self.d_out = nn.Parameter(torch.randn(1, chans[0]))

    def generate(self, z, level, alpha):
        f = torch.nn.functional
        x = (_pixnorm(z) @ (self.g_in * math.sqrt(2 / self.z) / 4)).view(z.shape[0], -1, 4, 4)
        x = _pixnorm(_lrelu(self.g0(_pixnorm(_lrelu(x)))))
        prev = x
        for i in range(level):
            prev = x
            x = f.interpolate(x, scale_factor=2.0, mode="nearest")
            for conv in self.g_blocks[i]:
                x = _pixnorm(_lrelu(conv(x)))
        out = self.to_rgb[level](x)
        if level > 0 and alpha < 1:
            out = torch.lerp(f.interpolate(self.to_rgb[level - 1](prev), scale_factor=2.0, mode="nearest"), out, alpha)
        return out

    def discriminate(self, img, level, alpha):
        f = torch.nn.functional
        x = _lrelu(self.from_rgb[level](img))
        for i in reversed(range(level)):
            for conv in self.d_blocks[i]:
                x = _lrelu(conv(x))
            x = f.avg_pool2d(x, 2)
            if i == level - 1 and alpha < 1:
                x = torch.lerp(_lrelu(self.from_rgb[level - 1](f.avg_pool2d(img, 2))), x, alpha)
        b, c, h, w = x.shape
        g = x.view(4, b // 4, c, h, w)
        sd = (g.var(0, unbiased=False) + 1e-8).sqrt().mean((1, 2, 3)).view(-1, 1, 1, 1).repeat(4, 1, h, w)
        x = _lrelu(self.d_final[0](torch.cat([x, sd], 1)))
        x = _lrelu(self.d_final[1](x)).flatten(1)
        return x @ (self.d_out * math.sqrt(2 / c)).t()


@_workload("progressive-growing GAN training, ProGAN (Karras et al. 2018) with WGAN-GP as in its CelebA-HQ recipe to 128 px, written by hand (random init, fp32): equalized learning rate (weights scaled at every call), pixel norm, minibatch stddev, nearest upsampling and average pooling; resolutions 4 -> 128 px one after another, each new one faded in (alpha rising linearly over its fade phase) and then stabilized, 20-40 iterations a phase (drawn), batches of 128/128/128/64/32/16 by resolution; each iteration a discriminator step (real images made on the device, fakes without grad, the WGAN loss, a gradient penalty (lambda 10) on random interpolates by autograd.grad with create_graph (double backward), drift 0.001) and a generator step; Adam (lr 1e-3, betas 0/0.99) each; the losses read back every iteration")
def progan_train(rng):
    chans = tuple(_smoke(c, c // 32) for c in (512, 512, 512, 512, 256, 128))
    gan = _ProGan(chans, _smoke(512, 16)).cuda().train()
    gp = [p for n, p in gan.named_parameters() if n.startswith(("g_", "g0", "to_rgb"))]
    dp = [p for n, p in gan.named_parameters() if not n.startswith(("g_", "g0", "to_rgb"))]
    opt_g = torch.optim.Adam(gp, lr=1e-3, betas=(0.0, 0.99))
    opt_d = torch.optim.Adam(dp, lr=1e-3, betas=(0.0, 0.99))
    batches = (128, 128, 128, 64, 32, 16) if _smoke(1, 0) else (8, 8, 8, 8, 8, 8)
    phases = [(0, False)] + [(lvl, fade) for lvl in range(1, 6) for fade in (True, False)]
    # About 900 tensors an iteration on average over the 11 phases (counted on CPU, one iteration a phase: from
    # about 250 at 4 px to 1.5k at 128 px): 11 phases of 30 iterations on average make about 0.3M tensors, 0.6M
    # events.
    for level, fade in phases[: _smoke(len(phases), 4)]:
        iters, b, hw = rng.randint(_smoke(20, 2), _smoke(40, 2)), batches[level], 4 * 2 ** level
        for it in range(iters):
            alpha = (it + 1) / iters if fade else 1.0
            real = torch.rand(b, 3, hw, hw, device="cuda") * 2 - 1
            with torch.no_grad():
                fake = gan.generate(torch.randn(b, gan.z, device="cuda"), level, alpha)
            d_real, d_fake = gan.discriminate(real, level, alpha), gan.discriminate(fake, level, alpha)
            eps = torch.rand(b, 1, 1, 1, device="cuda")
            mix = torch.lerp(fake, real, eps).requires_grad_(True)
            grad = torch.autograd.grad(gan.discriminate(mix, level, alpha).sum(), mix, create_graph=True)[0]
            penalty = (grad.flatten(1).norm(dim=1) - 1).pow(2).mean()
            d_loss = d_fake.mean() - d_real.mean() + 10 * penalty + 0.001 * d_real.pow(2).mean()
            opt_d.zero_grad(set_to_none=True)
            d_loss.backward()
            opt_d.step()
            del real, fake, d_real, d_fake, eps, mix, grad, penalty
            g_loss = -gan.discriminate(gan.generate(torch.randn(b, gan.z, device="cuda"), level, alpha),
                                       level, alpha).mean()
            opt_g.zero_grad(set_to_none=True)
            g_loss.backward()
            opt_g.step()
            torch.stack([d_loss.detach(), g_loss.detach()]).tolist()
            del d_loss, g_loss
    torch.cuda.synchronize()

"""The seventeenth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py is).
Same conventions: models built from configs with random weights, nothing downloaded, `rng` the workload's
random.Random, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny.

record.py calls `register(<its own module object>)` once, just before main(), after batch16's: every workload
below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it reaches
record.py's helpers through the module object it was given. The plumbing (the registration, `_smoke`,
`_loguniform`, `_upload`) is batch_common.py's, shared with the other batch files.
"""

import math

import torch

from batch_common import Batch, upload as _upload

_b = Batch()  # this batch's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- Llama sampling with a growing KV cache


@_workload("LLM generation with top-p sampling and a KV cache grown by concatenation, Llama-style, written by hand over an HF LlamaForCausalLM's weights (hidden 2048, 16 layers, GQA 16/4 heads of 128, MLP 5632, vocab 32000: 1.1B, random init) in bf16 under inference_mode: 8 batches of 1, 2, 4, 8, 16, 32 or 64 prompts (batch x longest prompt capped at 32k tokens), prompts of 16-2048 tokens (log-uniform) left-padded with an attention mask (positions from the mask's cumsum); prefill with a causal and padding mask, then one token a step: temperature 0.8, top-p 0.9 (sort, cumsum, multinomial), the tokens copied to the host every step; each row stops after its own 8-192 new tokens (log-uniform, standing in for its end of sequence) and finished rows are dropped from the batch (the KV cache, mask and positions index_selected, TGI's filter) while the others keep decoding; per layer the keys and values (B, 4, T, 128) grown by torch.cat every step")
def llama_topp_sample(rng):
    from transformers import LlamaConfig, LlamaForCausalLM

    d, layers, heads, kv_heads = _smoke(2048, 128), _smoke(16, 2), 16, 4
    dh = d // heads
    cfg = LlamaConfig(hidden_size=d, intermediate_size=_smoke(5632, 352), num_hidden_layers=layers, num_attention_heads=heads,
                      num_key_value_heads=kv_heads, vocab_size=32000, max_position_embeddings=4096)
    lm = LlamaForCausalLM(cfg).to("cuda", torch.bfloat16).eval()
    inv = 1.0 / 10000 ** (torch.arange(0, dh, 2, device="cuda").float() / dh)
    sdpa = torch.nn.functional.scaled_dot_product_attention

    def forward(ids, pos, mask, cache):
        """Logits of the last position of ids (B, T) at positions pos; mask (B, 1, T, S) over cache + new."""
        x = lm.model.embed_tokens(ids)
        b, t = ids.shape
        ang = pos[:, None, :, None].float() * inv  # the rotary tables, once a forward (B, 1, T, dh)
        ang = torch.cat([ang, ang], -1)
        cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
        for i, layer in enumerate(lm.model.layers):
            a = layer.self_attn
            h = layer.input_layernorm(x)
            q = _b.rec._rope(a.q_proj(h).view(b, t, heads, dh).transpose(1, 2), cos, sin)
            k = _b.rec._rope(a.k_proj(h).view(b, t, kv_heads, dh).transpose(1, 2), cos, sin)
            v = a.v_proj(h).view(b, t, kv_heads, dh).transpose(1, 2)
            if cache[i] is not None:
                k, v = torch.cat([cache[i][0], k], 2), torch.cat([cache[i][1], v], 2)
            cache[i] = (k, v)
            o = sdpa(q, k, v, attn_mask=mask, enable_gqa=True)
            x = x + a.o_proj(o.transpose(1, 2).reshape(b, t, d))
            x = x + layer.mlp(layer.post_attention_layernorm(x))
            del h, q, k, v, o
        return lm.lm_head(lm.model.norm(x[:, -1]))

    def sample(logits):
        probs = torch.softmax(logits.float() / 0.8, -1)
        p, idx = probs.sort(-1, descending=True)
        p = p.masked_fill(p.cumsum(-1) - p > 0.9, 0)
        return idx.gather(-1, torch.multinomial(p, 1))  # (B, 1)

    # About 500 tensors a decoding step (counted on CPU at 16 layers), about 1k steps: about 1M events.
    with torch.inference_mode():
        for _ in range(_smoke(8, 2)):
            b = rng.choice((1, 2, 4, 8, 16, 32, 64))
            lens = [_loguniform(rng, 16, _smoke(2048, 64)) for _ in range(b)]
            while b > 1 and b * max(lens) > _smoke(32768, 1024):
                b //= 2
                lens = lens[:b]
            new = [_loguniform(rng, 8, _smoke(192, 24)) for _ in range(b)]
            width = max(lens)
            keep = (torch.arange(width)[None] >= width - torch.tensor(lens)[:, None])  # left padding
            ids = _upload(torch.randint(0, cfg.vocab_size, (b, width)) * keep)
            keep = _upload(keep)
            pos = (keep.long().cumsum(-1) - 1).clamp(min=0)
            causal = torch.ones(width, width, dtype=torch.bool, device="cuda").tril()
            # Causal and padding; a padding position sees itself, so that no row of the mask is empty.
            mask = causal[None, None] & keep[:, None, None] | torch.eye(width, dtype=torch.bool, device="cuda")
            cache = [None] * layers
            tok = sample(forward(ids, pos, mask, cache))
            pos = pos[:, -1:] + 1
            rows = list(range(b))  # the original row of each batch row
            done = 1
            del ids, causal, mask
            while rows:
                tok.cpu()  # the tokens go back every step (detokenization, stop strings)
                alive = [j for j, r in enumerate(rows) if new[r] > done]
                if len(alive) < len(rows):  # finished rows leave the batch
                    if not alive:
                        break
                    sel = torch.tensor(alive, device="cuda")
                    cache = [(k.index_select(0, sel), v.index_select(0, sel)) for k, v in cache]
                    keep, pos, tok = keep.index_select(0, sel), pos.index_select(0, sel), tok.index_select(0, sel)
                    rows = [rows[j] for j in alive]
                    del sel
                keep = torch.cat([keep, keep.new_ones(len(rows), 1)], 1)
                tok = sample(forward(tok, pos, keep[:, None, None], cache))
                pos = pos + 1
                done += 1
            del cache, keep, pos, tok
    torch.cuda.synchronize()


# ---------------------------------------------------------------- FourCastNet-style AFNO weather forecasting


class _AfnoBlock(torch.nn.Module):
    """FourCastNet's AFNO block: LayerNorm, a 2D real FFT over the patch grid (ortho), a block-diagonal complex
    two-layer MLP over channels (8 blocks, ReLU, softshrink 0.01) on the kept modes, the inverse FFT, a
    residual; then LayerNorm, a GELU MLP of 4x and a second residual. The FFT runs in fp32."""

    def __init__(self, d, blocks=8, ratio=4):
        super().__init__()
        nn = torch.nn
        self.blocks, bs = blocks, d // blocks
        self.w1 = nn.Parameter(0.02 * torch.randn(2, blocks, bs, bs))
        self.b1 = nn.Parameter(0.02 * torch.randn(2, blocks, bs))
        self.w2 = nn.Parameter(0.02 * torch.randn(2, blocks, bs, bs))
        self.b2 = nn.Parameter(0.02 * torch.randn(2, blocks, bs))
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, ratio * d), nn.GELU(), nn.Linear(ratio * d, d))

    def filter(self, x):  # (B, h, w, d) fp32
        f = torch.nn.functional
        b, h, w, d = x.shape
        z = torch.fft.rfft2(x, dim=(1, 2), norm="ortho").reshape(b, h, w // 2 + 1, self.blocks, d // self.blocks)
        mul = lambda zr, zi, wt, bias: (torch.einsum("...bi,bio->...bo", zr, wt[0]) - torch.einsum("...bi,bio->...bo", zi, wt[1]) + bias[0],  # noqa: E731
                                        torch.einsum("...bi,bio->...bo", zi, wt[0]) + torch.einsum("...bi,bio->...bo", zr, wt[1]) + bias[1])
        r, i = mul(z.real, z.imag, self.w1, self.b1)
        r, i = mul(f.relu(r), f.relu(i), self.w2, self.b2)
        z = torch.complex(f.softshrink(r, 0.01), f.softshrink(i, 0.01)).reshape(b, h, w // 2 + 1, d)
        return torch.fft.irfft2(z, s=(h, w), dim=(1, 2), norm="ortho")

    def forward(self, x):
        with torch.autocast("cuda", enabled=False):
            x = x + self.filter(self.ln1(x.float()))
        return x + self.mlp(self.ln2(x))


@_workload("weather forecasting training, FourCastNet-style AFNO (Pathak et al. 2022), written by hand: 20 ERA5-like variables on a 0.5-degree 360x720 grid, patches of 8 (45x90 tokens), width 768, 12 AFNO blocks (2D rFFT over the token grid in fp32, block-diagonal complex MLP with 8 blocks, softshrink, inverse FFT; GELU MLP of 4x), a linear head back to 8x8x20 pixels; random fields copied from pinned memory; pretraining on one-step targets for 80 steps, batch 1-3; then autoregressive fine-tuning with rollouts of 2 or 3 steps (the loss summed over the rollout, backpropagated through it), the batch size picked so that batch x rollout is at most 3; a no_grad validation rollout of 12-20 steps every 60 steps; latitude-weighted MSE, 220 steps, gradient clipping, AdamW with cosine decay, bf16 autocast")
def afno_weather(rng):
    nn = torch.nn
    chans, h, w, p = 20, _smoke(360, 32), _smoke(720, 64), 8
    d, depth = _smoke(768, 64), _smoke(12, 2)
    model = nn.Module()
    model.embed = nn.Linear(chans * p * p, d)
    model.pos = nn.Parameter(0.02 * torch.randn(1, h // p, w // p, d))
    model.blocks = nn.ModuleList(_AfnoBlock(d) for _ in range(depth))
    model.head = nn.Linear(d, chans * p * p, bias=False)
    model = model.cuda().train()
    steps = _smoke(220, 5)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    lat = torch.cos(torch.linspace(-math.pi / 2, math.pi / 2, h, device="cuda"))
    lat = (lat / lat.mean())[None, None, :, None]
    pool = torch.randn(6, chans, h, w).pin_memory()  # random fields, drawn once

    def step(x):  # (B, chans, h, w) -> the next state
        b = x.shape[0]
        t = x.view(b, chans, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5).reshape(b, h // p, w // p, -1)
        t = model.embed(t) + model.pos
        for blk in model.blocks:
            t = blk(t)
        t = model.head(t).view(b, h // p, w // p, chans, p, p).permute(0, 3, 1, 4, 2, 5).reshape(b, chans, h, w)
        return t

    def fields(b, n):  # the initial state and n targets, each (b, chans, h, w)
        out = []
        for _ in range(n + 1):
            start = rng.randrange(pool.shape[0] - b + 1)
            out.append(pool[start: start + b].to("cuda", non_blocking=True))
        return out

    # About 1.7k tensors a rollout step with grad and 0.7k without (counted on CPU at 12 blocks): 80 one-step and 140
    # rollout steps of 2.33 on average make about 1.45M events.
    for i in range(steps):
        rollout = 1 if i < _smoke(80, 2) else rng.choice((2, 2, 3))
        b = rng.randint(1, 3 // rollout)
        states = fields(b, rollout)
        x, loss = states[0], 0.0
        with torch.autocast("cuda", dtype=torch.bfloat16):
            for target in states[1:]:
                x = step(x)
                loss = loss + ((x.float() - target) ** 2 * lat).mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        del states, x, loss
        if (i + 1) % _smoke(60, 3) == 0:
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                x = fields(1, 0)[0]
                for _ in range(rng.randint(12, 20)):
                    x = step(x)
                float(x.float().std())
                del x
    torch.cuda.synchronize()


# ---------------------------------------------------------------- FT-Transformer tabular benchmark sweep


class _FtTransformer(torch.nn.Module):
    """FT-Transformer (Gorishniy et al. 2021): a feature tokenizer (per numeric feature a weight and a bias
    vector, per categorical feature an embedding from one offset table, plus a bias), a [CLS] token, pre-norm
    Transformer blocks (the first without its attention LayerNorm) with ReGLU FFNs of 4/3 width, and a head
    (LayerNorm, ReLU, Linear) on [CLS]."""

    def __init__(self, n_num, cards, d, depth, heads, out):
        super().__init__()
        nn = torch.nn
        self.num_w = nn.Parameter(0.1 * torch.randn(n_num, d))
        self.num_b = nn.Parameter(0.1 * torch.randn(n_num, d))
        self.cat = nn.Embedding(max(1, sum(cards)), d)
        self.cat_b = nn.Parameter(0.1 * torch.randn(len(cards), d))
        self.register_buffer("offsets", torch.tensor([0] + cards[:-1]).cumsum(0) if cards else torch.zeros(0, dtype=torch.long))
        self.cls = nn.Parameter(0.1 * torch.randn(1, 1, d))
        self.heads = heads
        self.blocks = nn.ModuleList()
        ffn = d * 4 // 3
        for i in range(depth):
            b = nn.Module()
            b.ln1 = nn.LayerNorm(d) if i else nn.Identity()
            b.qkv, b.o = nn.Linear(d, 3 * d), nn.Linear(d, d)
            b.ln2, b.fc1, b.fc2 = nn.LayerNorm(d), nn.Linear(d, 2 * ffn), nn.Linear(ffn, d)
            self.blocks.append(b)
        self.head = nn.Sequential(nn.LayerNorm(d), nn.ReLU(), nn.Linear(d, out))

    def forward(self, num, cat):
        f = torch.nn.functional
        x = num[..., None] * self.num_w + self.num_b
        if cat is not None:
            x = torch.cat([x, self.cat(cat + self.offsets) + self.cat_b], 1)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], 1)
        b, t, d = x.shape
        for blk in self.blocks:
            q, k, v = blk.qkv(blk.ln1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
            a = f.scaled_dot_product_attention(q, k, v, dropout_p=0.2 if self.training else 0.0)
            x = x + blk.o(a.transpose(1, 2).reshape(b, t, d))
            a, g = blk.fc1(blk.ln2(x)).chunk(2, -1)
            x = x + f.dropout(blk.fc2(a * f.relu(g)), 0.1 if self.training else 0.0)
        return self.head(x[:, 0])


@_workload("tabular deep learning benchmark sweep, FT-Transformer (the rtdl recipe): 7 datasets trained one after another, each with a model of its own (built, trained, freed): 4k-400k rows (log-uniform), 5-120 numeric features, 0-40 categorical features of 2-1000 categories, regression, binary or 2-100-class targets; the whole table kept on the device (as rtdl does), split 64/16/20; the model 96, 128, 192 or 256 wide with 8 heads, 2-4 blocks, attention dropout 0.2, FFN dropout 0.1, ReGLU 4/3; batches of 256, 512 or 1024 by dataset size from a fresh permutation every epoch (the last batch partial), the validation split scored after every epoch in chunks of 8192 under no_grad; each dataset stops after 120-600 steps; AdamW (no weight decay on tokenizer, norms and biases), fp32")
def ft_transformer_tab(rng):
    f = torch.nn.functional
    # About 270 tensors a training step at 3 blocks (estimated from the CPU smoke count): about 2.5k steps make about
    # 1.4M events.
    for _ in range(_smoke(7, 2)):
        rows = _loguniform(rng, _smoke(4000, 300), _smoke(400_000, 900))
        n_num, n_cat = rng.randint(5, 120), rng.choice((0, 0, rng.randint(1, 40)))
        cards = [_loguniform(rng, 2, 1000) for _ in range(n_cat)]
        kind = rng.choice(("regression", "binary", "multiclass"))
        classes = {"regression": 1, "binary": 1, "multiclass": rng.randint(3, 100)}[kind]
        d = rng.choice((96, 128, 192, 256))
        model = _FtTransformer(n_num, cards, d, rng.randint(2, 4), 8, classes).cuda()
        no_decay = [p for n, p in model.named_parameters() if p.dim() < 2 or n.startswith(("num_", "cat", "cls"))]
        decay = [p for n, p in model.named_parameters() if not (p.dim() < 2 or n.startswith(("num_", "cat", "cls")))]
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": 1e-5}, {"params": no_decay, "weight_decay": 0.0}], lr=1e-4)
        num = _upload(torch.randn(rows, n_num))
        cat = _upload(torch.stack([torch.randint(0, c, (rows,)) for c in cards], 1)) if cards else None
        y = _upload(torch.randn(rows) if kind == "regression" else torch.randint(0, max(2, classes), (rows,)))
        n_train, n_val = int(rows * 0.64), int(rows * 0.16)
        batch = 256 if rows < 30_000 else 512 if rows < 150_000 else 1024
        budget = rng.randint(_smoke(120, 3), _smoke(600, 6))
        done = 0
        while done < budget:
            model.train()
            perm = torch.randperm(n_train, device="cuda")
            for lo in range(0, n_train, batch):
                idx = perm[lo: lo + batch]
                out = model(num[idx], cat[idx] if cat is not None else None)
                if kind == "multiclass":
                    loss = f.cross_entropy(out, y[idx])
                elif kind == "binary":
                    loss = f.binary_cross_entropy_with_logits(out[:, 0], y[idx].float())
                else:
                    loss = f.mse_loss(out[:, 0], y[idx])
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
                del idx, out, loss
                done += 1
                if done >= budget:
                    break
            del perm
            model.eval()
            with torch.no_grad():
                scores = []
                for lo in range(n_train, n_train + n_val, 8192):
                    hi = min(lo + 8192, n_train + n_val)
                    scores.append(model(num[lo:hi], cat[lo:hi] if cat is not None else None))
                float(torch.cat(scores).float().mean())
                del scores
        del model, opt, num, cat, y, decay, no_decay
    torch.cuda.synchronize()


# ---------------------------------------------------------------- OCR-free document parsing


@_workload("OCR-free document parsing, Donut-style (inference): an HF DonutSwinModel encoder (Donut-base's Swin-B layout: embed 128, depths 2-2-14-2, heads 4-8-16-32, window 10; random init) over document pages of 960-1600 x 720-1280 px (multiples of 32, portrait and landscape scans), 1-8 pages a batch, and an HF MBartForCausalLM decoder with cross-attention (4 layers, width 1024, 16 heads, FFN 4096, vocab 57525, random init), both fp16 under inference_mode; each page's task prompt of 1-4 tokens, then greedy decoding with HF's KV cache (self-attention grown every step, cross-attention keys and values computed once) until the page's longest output of 32-768 tokens (log-uniform, standing in for the end token: finished rows pad on, as HF generate does); the tokens copied back every step; 10 batches")
def donut_parse(rng):
    from transformers import DonutSwinConfig, DonutSwinModel, MBartConfig, MBartForCausalLM

    ecfg = DonutSwinConfig(embed_dim=_smoke(128, 16), depths=[2, 2, _smoke(14, 2), 2], num_heads=[4, 8, 16, 32],
                           window_size=_smoke(10, 4), image_size=[_smoke(1280, 128), _smoke(960, 96)])
    enc = DonutSwinModel(ecfg, add_pooling_layer=False).to("cuda", torch.float16).eval()
    width = ecfg.embed_dim * 8
    dcfg = MBartConfig(vocab_size=57525, d_model=width, decoder_layers=_smoke(4, 2), decoder_attention_heads=16,
                       decoder_ffn_dim=4 * width, is_decoder=True, add_cross_attention=True, max_position_embeddings=1536,
                       scale_embedding=True)
    dec = MBartForCausalLM(dcfg).to("cuda", torch.float16).eval()
    mean = torch.tensor([0.5, 0.5, 0.5], device="cuda")[None, :, None, None]
    scale = _smoke(1, 0.25)
    # About 160 tensors a decoding step and 800 an encoder pass (counted on CPU at 4 and 2-2-14-2 layers): about
    # 4k steps make about 1.3M events.
    with torch.inference_mode():
        for _ in range(_smoke(10, 2)):
            b = _loguniform(rng, 1, 8)
            long, short = rng.randrange(960, 1601, 32), rng.randrange(720, 1281, 32)
            hh, ww = (long, short) if rng.random() < 0.8 else (short, long)
            hh, ww = int(hh * scale) // 32 * 32, int(ww * scale) // 32 * 32
            pages = _upload(torch.randint(0, 256, (b, 3, hh, ww), dtype=torch.uint8))
            x = ((pages.half() / 255 - mean) / 0.5).half()
            states = enc(pixel_values=x).last_hidden_state  # (b, hh/32 * ww/32, 1024)
            prompt = rng.randint(1, 4)
            ids = _upload(torch.randint(4, dcfg.vocab_size, (b, prompt)))
            n = max(_loguniform(rng, 32, _smoke(768, 24)) for _ in range(b))
            out = dec(input_ids=ids, encoder_hidden_states=states, use_cache=True)
            cache = out.past_key_values
            tok = out.logits[:, -1].argmax(-1, keepdim=True)
            del pages, x, out
            for _ in range(n - 1):
                tok.cpu()
                out = dec(input_ids=tok, encoder_hidden_states=states, past_key_values=cache, use_cache=True)
                cache = out.past_key_values
                tok = out.logits[:, -1].argmax(-1, keepdim=True)
                del out
            del states, ids, cache, tok
    torch.cuda.synchronize()


# ---------------------------------------------------------------- physics-informed neural network


@_workload("physics-informed neural network training (Raissi et al. 2019 style) of 2D incompressible Navier-Stokes around a cylinder: an MLP (x, y, t) -> (psi, p) of 8 hidden layers of 256, tanh, fp32, velocities from the stream function (u = psi_y, v = -psi_x) and the momentum residuals needing second derivatives, all by torch.autograd.grad with create_graph (third-order graph in backward); collocation mini-batches of 4k-32k points (log-uniform) drawn each step from a pool that residual-based adaptive refinement grows (every 40 steps 100k candidates scored in chunks of 20k, the 2k worst added: 20k -> 30k points), plus 1-4k boundary and initial points with data loss; 200 Adam steps with exponential decay, then 2 L-BFGS steps (torch.optim.LBFGS, 20 iterations, history 50, strong Wolfe line search) on a fixed 8k batch")
def pinn_train(rng):
    nn = torch.nn
    width, depth = _smoke(256, 32), _smoke(8, 3)
    layers = [nn.Linear(3, width), nn.Tanh()]
    for _ in range(depth - 1):
        layers += [nn.Linear(width, width), nn.Tanh()]
    net = nn.Sequential(*layers, nn.Linear(width, 2)).cuda()
    lo = torch.tensor([-1.0, -2.0, 0.0], device="cuda")
    span = torch.tensor([8.0, 4.0, 20.0], device="cuda")
    nu = 0.01

    def points(n):
        return lo + span * torch.rand(n, 3, device="cuda")

    def grad(y, x):
        return torch.autograd.grad(y, x, torch.ones_like(y), create_graph=True)[0]

    def residual(xyt):
        xyt = xyt.detach().requires_grad_()
        out = net(xyt)
        psi, p = out[:, 0:1], out[:, 1:2]
        dpsi = grad(psi, xyt)
        u, v = dpsi[:, 1:2], -dpsi[:, 0:1]
        du, dv, dp = grad(u, xyt), grad(v, xyt), grad(p, xyt)
        du_x, dv_x = grad(du[:, 0:1], xyt), grad(dv[:, 0:1], xyt)
        du_y, dv_y = grad(du[:, 1:2], xyt), grad(dv[:, 1:2], xyt)
        fu = du[:, 2:3] + u * du[:, 0:1] + v * du[:, 1:2] + dp[:, 0:1] - nu * (du_x[:, 0:1] + du_y[:, 1:2])
        fv = dv[:, 2:3] + u * dv[:, 0:1] + v * dv[:, 1:2] + dp[:, 1:2] - nu * (dv_x[:, 0:1] + dv_y[:, 1:2])
        return fu, fv

    def data_loss(n):
        # Inflow, walls and the initial state: points on the domain's faces with random target velocities.
        xyt = points(n)
        face = torch.randint(0, 3, (n,), device="cuda")
        xyt = torch.where((face == 0)[:, None], torch.stack([lo[0].expand(n), xyt[:, 1], xyt[:, 2]], 1), xyt)
        xyt = torch.where((face == 1)[:, None], torch.stack([xyt[:, 0], (lo[1] + span[1] * (xyt[:, 1] > 0)), xyt[:, 2]], 1), xyt)
        xyt = torch.where((face == 2)[:, None], torch.stack([xyt[:, 0], xyt[:, 1], lo[2].expand(n)], 1), xyt)
        xyt = xyt.requires_grad_()
        dpsi = grad(net(xyt)[:, 0:1], xyt)
        target = torch.tanh(xyt.detach()[:, :2])
        return ((dpsi[:, 1] - target[:, 0]) ** 2).mean() + ((dpsi[:, 0] + target[:, 1]) ** 2).mean()

    pool = points(_smoke(20_000, 400))
    steps = _smoke(200, 4)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, 0.99)
    # About 3k tensors an Adam step or an L-BFGS function evaluation and 1.5k a refinement chunk (counted on CPU at
    # 8 layers): 200 steps and about 50 evaluations make about 1.6M events.
    for i in range(steps):
        n = _loguniform(rng, _smoke(4096, 64), _smoke(32768, 256))
        batch = pool[torch.randint(0, pool.shape[0], (n,), device="cuda")]
        fu, fv = residual(batch)
        loss = (fu ** 2).mean() + (fv ** 2).mean() + data_loss(rng.randint(_smoke(1024, 32), _smoke(4096, 64)))
        loss.backward()
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        del batch, fu, fv, loss
        if (i + 1) % _smoke(40, 2) == 0:  # residual-based adaptive refinement
            cand = points(_smoke(100_000, 600))
            score = []
            for c in cand.split(_smoke(20_000, 200)):
                fu, fv = residual(c)
                score.append((fu.abs() + fv.abs()).detach()[:, 0])
                del fu, fv
            worst = torch.cat(score).topk(_smoke(2000, 40)).indices
            pool = torch.cat([pool, cand[worst]])
            del cand, score, worst
    fixed = pool[torch.randperm(pool.shape[0], device="cuda")[: _smoke(8192, 128)]]
    lbfgs = torch.optim.LBFGS(net.parameters(), lr=1.0, max_iter=_smoke(20, 3), history_size=50, line_search_fn="strong_wolfe")

    def closure():
        lbfgs.zero_grad(set_to_none=True)
        fu, fv = residual(fixed)
        loss = (fu ** 2).mean() + (fv ** 2).mean() + data_loss(1024)
        loss.backward()
        return loss.detach()

    for _ in range(_smoke(2, 1)):
        lbfgs.step(closure)
    torch.cuda.synchronize()


# ---------------------------------------------------------------- AudioMAE pretraining


@_workload("self-supervised audio pretraining, AudioMAE-style (Huang et al. 2022) with on-GPU feature extraction (two CUDA streams): int16 16 kHz clips in pinned memory, batches bucketed by duration (2-10 s: 60% full 10 s AudioSet clips, the rest uniform, as a length-bucketed sampler gives), batch size from a budget of 320 s of audio (32-160 clips); on a side stream the next batch is copied, converted, STFT'd (400-point Hann window, hop 160), turned into 128 log-mel bands and normalized while the current batch trains (record_stream to the compute stream); 16x16 spectrogram patches (8 x frames/16), 80% masked at random per clip; a ViT-B encoder (12 pre-norm layers of 768, 12 heads, torch.nn.TransformerEncoderLayer) over the visible 20%, a decoder (8 layers of 512, 16 heads, global attention) over all patches with mask tokens, MSE on the masked patches' normalized pixels; 250 steps, gradient clipping, AdamW with warmup and cosine decay, bf16 autocast")
def audio_mae(rng):
    nn = torch.nn
    f = torch.nn.functional
    d, dd, depth, ddepth = _smoke(768, 64), _smoke(512, 32), _smoke(12, 2), _smoke(8, 1)
    mels, patch, sr, hop = 128, 16, 16000, 160
    max_frames = 1024
    layer = lambda w, h: nn.TransformerEncoderLayer(w, h, 4 * w, dropout=0.0, activation="gelu", batch_first=True, norm_first=True)  # noqa: E731
    model = nn.Module()
    model.embed = nn.Linear(patch * patch, d)
    model.pos = nn.Parameter(0.02 * torch.randn(1, (max_frames // patch) * (mels // patch), d))
    model.enc = nn.ModuleList(layer(d, _smoke(12, 4)) for _ in range(depth))
    model.ln = nn.LayerNorm(d)
    model.dec_embed = nn.Linear(d, dd)
    model.mask_token = nn.Parameter(torch.zeros(1, 1, dd))
    model.dec_pos = nn.Parameter(0.02 * torch.randn(1, (max_frames // patch) * (mels // patch), dd))
    model.dec = nn.ModuleList(layer(dd, _smoke(16, 4)) for _ in range(ddepth))
    model.dec_ln, model.pred = nn.LayerNorm(dd), nn.Linear(dd, patch * patch)
    model = model.cuda().train()
    steps = _smoke(250, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.05, betas=(0.9, 0.95))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min((s + 1) / 30, 0.5 * (1 + math.cos(math.pi * s / steps))))
    # The mel filterbank (201 x 128, triangular on the mel scale) and the window.
    n_fft = 400
    hz = torch.linspace(0, sr / 2, n_fft // 2 + 1)
    mel = lambda x: 2595 * torch.log10(1 + x / 700)  # noqa: E731
    edges = 700 * (10 ** (torch.linspace(0, float(mel(torch.tensor(sr / 2.0))), mels + 2) / 2595) - 1)
    lo_, mid, hi_ = edges[:-2], edges[1:-1], edges[2:]
    fbank = torch.clamp(torch.minimum((hz[:, None] - lo_) / (mid - lo_), (hi_ - hz[:, None]) / (hi_ - mid)), min=0).cuda()
    window = torch.hann_window(n_fft).cuda()
    audio = torch.randint(-8000, 8000, (_smoke(64, 4), 10 * sr), dtype=torch.int16).pin_memory()  # clips drawn once
    side, main = torch.cuda.Stream(), torch.cuda.current_stream()
    budget = _smoke(320, 12)

    def prepare():
        secs = 10 if rng.random() < 0.6 else rng.randint(2, 9)
        b = min(160, budget // secs)
        frames = min(max_frames, secs * sr // hop // patch * patch)
        rows = torch.tensor([rng.randrange(audio.shape[0]) for _ in range(b)])
        host = audio[rows, : secs * sr].pin_memory()
        with torch.cuda.stream(side):
            side.wait_stream(main)
            wav = host.to("cuda", non_blocking=True).float() / 32768
            spec = torch.stft(wav, n_fft, hop, window=window, return_complex=True).abs() ** 2  # (b, 201, frames+1)
            logmel = torch.log(spec[..., :frames].transpose(1, 2) @ fbank + 1e-6)  # (b, frames, 128)
            logmel = (logmel + 4.27) / 4.57
            ready = side.record_event()
            del wav, spec
        return logmel, ready

    # About 2.7k tensors a step (counted on CPU at 12 + 8 layers): 250 steps make about 1.35M events.
    nxt = prepare()
    for i in range(steps):
        x, ready = nxt
        main.wait_event(ready)
        x.record_stream(main)
        if i + 1 < steps:
            nxt = prepare()
        b, frames = x.shape[0], x.shape[1]
        n = (frames // patch) * (mels // patch)
        patches = x.view(b, frames // patch, patch, mels // patch, patch).permute(0, 1, 3, 2, 4).reshape(b, n, patch * patch)
        keep = max(1, int(n * 0.2))
        order = torch.rand(b, n, device="cuda").argsort(1)
        visible, masked = order[:, :keep], order[:, keep:]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = model.embed(patches) + model.pos[:, :n]
            h = h.gather(1, visible[..., None].expand(-1, -1, d))
            for blk in model.enc:
                h = blk(h)
            h = model.dec_embed(model.ln(h))
            full = torch.cat([h, model.mask_token.expand(b, n - keep, -1).to(h.dtype)], 1)
            full = full.scatter(1, order[..., None].expand(-1, -1, dd), full) + model.dec_pos[:, :n]
            for blk in model.dec:
                full = blk(full)
            pred = model.pred(model.dec_ln(full))
        target = patches
        target = (target - target.mean(-1, keepdim=True)) / (target.var(-1, keepdim=True) + 1e-6).sqrt()
        idx = masked[..., None].expand(-1, -1, patch * patch)
        loss = f.mse_loss(pred.float().gather(1, idx), target.gather(1, idx))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        del x, patches, order, visible, masked, h, full, pred, target, idx, loss
    torch.cuda.synchronize()


# ---------------------------------------------------------------- multi-dataset pose estimation


def _bottleneck_up(cin, cout):
    nn = torch.nn
    return nn.Sequential(nn.ConvTranspose2d(cin, cout, 4, 2, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


@_workload("multi-dataset top-down human pose estimation training, SimpleBaseline-style (Xiao et al. 2018) with per-dataset heads (two CUDA streams): an HF ResNetModel backbone (ResNet-50, random init) and a shared neck of 3 deconvolutions (256 channels, BatchNorm, ReLU) to stride 4, then a 1x1 head per dataset: COCO (17 keypoints, 256x192 crops, batch 64), MPII (16, 256x256, batch 48), a hand set (21, 256x256, batch 48), COCO-WholeBody (133, 384x288, batch 24), drawn 4:2:1:2 per step; on a side stream the next batch's uint8 crops are copied, flipped (half of the rows) and normalized, and its Gaussian target heatmaps (sigma 2, 1/4 of the input) rendered from per-person keypoints (some invisible, weight 0) while the current batch trains (record_stream to the compute stream); target-weighted MSE, 400 steps, Adam with step decay, bf16 autocast, channels_last")
def pose_multi(rng):
    from transformers import ResNetConfig, ResNetModel

    nn = torch.nn
    cfg = ResNetConfig(depths=[3, 4, 6, 3] if _smoke(1, 0) else [1, 1, 1, 1],
                       hidden_sizes=[256, 512, 1024, 2048] if _smoke(1, 0) else [32, 64, 64, 128],
                       embedding_size=_smoke(64, 16))
    backbone = ResNetModel(cfg)
    ch = _smoke(256, 16)
    neck = nn.Sequential(_bottleneck_up(cfg.hidden_sizes[-1], ch), _bottleneck_up(ch, ch), _bottleneck_up(ch, ch))
    sets = {"coco": (17, 256, 192, 64, 4), "mpii": (16, 256, 256, 48, 2), "hand": (21, 256, 256, 48, 1), "wholebody": (133, 384, 288, 24, 2)}
    heads = nn.ModuleDict({k: nn.Conv2d(ch, v[0], 1) for k, v in sets.items()})
    model = nn.ModuleDict({"backbone": backbone, "neck": neck, "heads": heads}).cuda().to(memory_format=torch.channels_last).train()
    steps = _smoke(400, 4)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, [int(steps * 0.7), int(steps * 0.9)], 0.1)
    side, main = torch.cuda.Stream(), torch.cuda.current_stream()
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda")[None, :, None, None] * 255
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda")[None, :, None, None] * 255
    scale = _smoke(1, 0.25)
    size = lambda n: max(32, int(n * scale) // 32 * 32)  # noqa: E731  the real sizes are multiples of 32 already
    pools = {k: torch.randint(0, 256, (2 * _smoke(v[3], 2), size(v[1]), size(v[2]), 3), dtype=torch.uint8).pin_memory()
             for k, v in sets.items()}
    names, weights = list(sets), [v[4] for v in sets.values()]

    def prepare():
        name = rng.choices(names, weights)[0]
        k, hh, ww, b, _ = sets[name]
        b = _smoke(b, 2)
        hh, ww = size(hh), size(ww)
        start = rng.randrange(pools[name].shape[0] - b + 1)
        oh, ow = hh // 32 * 8, ww // 32 * 8  # the heatmaps' size: the backbone's stride 32, the neck's 8x
        kp = torch.rand(b, k, 2) * torch.tensor([ow, oh])
        vis = (torch.rand(b, k) < 0.8).float()
        flip = torch.rand(b) < 0.5
        host = [kp.pin_memory(), vis.pin_memory(), flip.pin_memory()]
        with torch.cuda.stream(side):
            side.wait_stream(main)
            img = pools[name][start: start + b].to("cuda", non_blocking=True).permute(0, 3, 1, 2).float()
            kp_d, vis_d, flip_d = (t.to("cuda", non_blocking=True) for t in host)
            img = torch.where(flip_d[:, None, None, None], img.flip(-1), img)
            img = ((img - mean) / std).contiguous(memory_format=torch.channels_last)
            xs = torch.arange(ow, device="cuda").float()
            ys = torch.arange(oh, device="cuda").float()
            gx = torch.exp(-((xs - kp_d[..., 0:1]) ** 2) / 8)[:, :, None, :]
            gy = torch.exp(-((ys - kp_d[..., 1:2]) ** 2) / 8)[:, :, :, None]
            heat = gy * gx  # (b, k, hh/4, ww/4)
            ready = side.record_event()
            del kp_d, flip_d, gx, gy, xs, ys
        return name, img, heat, vis_d, ready

    # About 1.2k tensors a step (counted on CPU at ResNet-50's depth): 400 steps make about 1M events.
    nxt = prepare()
    for i in range(steps):
        name, img, heat, vis, ready = nxt
        main.wait_event(ready)
        for t in (img, heat, vis):
            t.record_stream(main)
        if i + 1 < steps:
            nxt = prepare()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            feat = model["backbone"](pixel_values=img).last_hidden_state
            pred = model["heads"][name](model["neck"](feat))
        loss = (((pred.float() - heat) ** 2).mean((2, 3)) * vis).mean()
        loss.backward()
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        del img, heat, vis, feat, pred, loss
    torch.cuda.synchronize()


# ---------------------------------------------------------------- probabilistic time-series forecasting serving


@_workload("probabilistic time-series forecasting serving, Chronos-style (Ansari et al. 2024): an HF T5ForConditionalGeneration (Chronos-T5-small: width 512, 6 + 6 layers, 8 heads, FFN 2048, vocab 4096, random init) in bf16 under inference_mode; 60 requests of 1-64 series (log-uniform) with contexts of 32-512 steps (log-uniform, left-padded with a mask), each series mean-scaled and quantized into 4094 uniform bins on [-15, 15] on the device; HF generate sampling 20 paths a series (top-k 50, num_return_sequences 20) for a horizon of 8-64 steps (exactly that many new tokens), then the tokens dequantized and rescaled, the 0.1/0.5/0.9 quantiles and the mean over the paths taken and copied back")
def chronos_forecast(rng):
    from transformers import T5Config, T5ForConditionalGeneration

    cfg = T5Config(vocab_size=4096, d_model=_smoke(512, 32), d_ff=_smoke(2048, 64), num_layers=_smoke(6, 1),
                   num_decoder_layers=_smoke(6, 1), num_heads=_smoke(8, 2), d_kv=64, pad_token_id=0, eos_token_id=1,
                   decoder_start_token_id=0)
    model = T5ForConditionalGeneration(cfg).to("cuda", torch.bfloat16).eval()
    edges = torch.linspace(-15, 15, 4093, device="cuda")
    centres = torch.cat([edges[:1], (edges[1:] + edges[:-1]) / 2, edges[-1:]])
    quantiles = torch.tensor([0.1, 0.5, 0.9], device="cuda")
    paths = _smoke(20, 3)
    # About 300 tensors a decoding step of 6 + 6 layers (counted on CPU, generate's own included), about 2.2k steps:
    # about 1.3M events.
    with torch.inference_mode():
        for _ in range(_smoke(60, 3)):
            b = _loguniform(rng, 1, 64)
            lens = [_loguniform(rng, 32, _smoke(512, 48)) for _ in range(b)]
            horizon = rng.randint(_smoke(8, 2), _smoke(64, 6))
            width = max(lens)
            mask = torch.arange(width)[None] >= width - torch.tensor(lens)[:, None]
            series = _upload(torch.randn(b, width).cumsum(-1) * mask)
            mask = _upload(mask)
            scale = (series.abs() * mask).sum(-1, keepdim=True) / mask.sum(-1, keepdim=True)
            scale = torch.where(scale > 0, scale, 1.0)
            ids = (torch.bucketize(series / scale, edges) + 2).masked_fill(~mask, 0)
            ids = torch.cat([ids, torch.ones_like(ids[:, :1])], 1)  # the end-of-sequence token
            attn = torch.cat([mask, torch.ones_like(mask[:, :1])], 1).long()
            out = model.generate(input_ids=ids, attention_mask=attn, do_sample=True, top_k=50, num_return_sequences=paths,
                                 max_new_tokens=horizon, min_new_tokens=horizon, eos_token_id=None, pad_token_id=0)
            tokens = out[:, 1:].view(b, paths, -1)
            values = centres[(tokens - 2).clamp(0, centres.shape[0] - 1)] * scale[:, None]
            summary = torch.cat([torch.quantile(values.float(), quantiles, dim=1).permute(1, 0, 2), values.float().mean(1, keepdim=True)], 1)
            host = torch.empty(summary.shape).pin_memory()
            host.copy_(summary, non_blocking=True)
            del series, mask, scale, ids, attn, out, tokens, values, summary
    torch.cuda.synchronize()

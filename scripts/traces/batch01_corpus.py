"""The workloads of the first corpus (generation, training, vision, diffusion, mixture of experts, serving,
curriculum), moved verbatim from record.py; how record.py registers them: batch_common.py."""

import torch

from batch_common import Batch
from workload_models import _UNet
from workload_helpers import _generate, llama_config, randint, _train_lm, _train_vision

_b = Batch()  # this module's workloads, and record.py's module object once register() has run
workload = _b.workload
register = _b.register  # what record.py calls


# --------------------------------------------------------------- generation


@workload("LLM generation: HF generate, Llama-style (GQA) 0.4B bf16, batch 1-64, prompt 32-1500, 8-64 new tokens")
def gen_llama(rng):
    from transformers import LlamaForCausalLM

    cfg = llama_config(16, 4, 4096)
    model = LlamaForCausalLM(cfg).to("cuda", torch.bfloat16)
    _generate(model, cfg.vocab_size, rng, 14, [1, 2, 4, 8, 16, 32, 64], (32, 1500), (8, 64))


@workload("LLM generation: HF generate, GPT-2 medium bf16, batch 1-32, prompt 16-800, 16-80 new tokens")
def gen_gpt2(rng):
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(n_layer=24, n_embd=1024, n_head=16, n_positions=1024)
    model = GPT2LMHeadModel(cfg).to("cuda", torch.bfloat16)
    _generate(model, cfg.vocab_size, rng, 10, [1, 2, 4, 8, 16, 32], (16, 800), (16, 80))


# ------------------------------------------------------------------ training


@workload("decoder-only training: Llama-style 0.3B, activation checkpointing, AdamW, bf16 autocast, batch 2-16 x seq 128-2048")
def train_llama_ckpt(rng):
    from transformers import LlamaForCausalLM

    cfg = llama_config(12, 16, 2048)
    model = LlamaForCausalLM(cfg).cuda()
    model.gradient_checkpointing_enable()
    model.config.use_cache = False
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    _train_lm(model, cfg.vocab_size, rng, 24, (2, 16), (128, 2048), opt)


@workload("LoRA fine-tuning (peft, r=16) of a GPT-2 medium, bf16 weights, batch 1-16 x seq 64-1024")
def lora_gpt2(rng):
    from peft import LoraConfig, get_peft_model
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(n_layer=24, n_embd=1024, n_head=16, n_positions=1024)
    base = GPT2LMHeadModel(cfg).to("cuda", torch.bfloat16)
    model = get_peft_model(base, LoraConfig(r=16, lora_alpha=32, target_modules=["c_attn", "c_proj"], lora_dropout=0.05))
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    _train_lm(model, cfg.vocab_size, rng, 40, (1, 16), (64, 1024), opt)


@workload("encoder fine-tuning: BERT-base classifier, dynamic padding (batch 8-64, length = longest of random 16-512), AdamW, bf16 autocast")
def bert_dynpad(rng):
    from transformers import BertConfig, BertForSequenceClassification

    cfg = BertConfig(num_labels=4)
    model = BertForSequenceClassification(cfg).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-5)
    for _ in range(40):
        b = rng.randint(8, 64)
        lengths = [rng.randint(16, 512) for _ in range(b)]
        s = max(lengths)
        ids = torch.randint(0, cfg.vocab_size, (b, s), device="cuda")
        mask = (torch.arange(s, device="cuda")[None, :] < torch.tensor(lengths, device="cuda")[:, None]).long()
        labels = torch.randint(0, 4, (b,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, mask, labels, loss


@workload("seq2seq training: T5-base-sized encoder-decoder, AdamW, bf16 autocast, source 32-512 and target 8-256 tokens, batch 4-32")
def t5_seq2seq(rng):
    from transformers import T5Config, T5ForConditionalGeneration

    cfg = T5Config(
        d_model=768, d_ff=3072, num_layers=8, num_decoder_layers=8, num_heads=12, vocab_size=32128,
        decoder_start_token_id=0, pad_token_id=0, eos_token_id=1,
    )
    model = T5ForConditionalGeneration(cfg).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for _ in range(30):
        b = rng.randint(4, 32)
        src = torch.randint(0, cfg.vocab_size, (b, randint(rng, 32, 512, 8)), device="cuda")
        tgt = torch.randint(0, cfg.vocab_size, (b, randint(rng, 8, 256, 8)), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=src, labels=tgt).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del src, tgt, loss


@workload("long run: 6-layer GPT-2-style LM, 400 steps, AdamW, bf16 autocast, batch 1-32 x seq 32-1024")
def long_gpt2(rng):
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(n_layer=6, n_embd=768, n_head=12, n_positions=1024)
    model = GPT2LMHeadModel(cfg).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    _train_lm(model, cfg.vocab_size, rng, 400, (1, 32), (32, 1024), opt)


# -------------------------------------------------------------------- vision


@workload("vision transformer training: ViT-B/16 with dynamic image size 160-384, batch 8-64, AdamW, bf16 autocast")
def vit_varres(rng):
    import timm

    model = timm.create_model("vit_base_patch16_224", pretrained=False, dynamic_img_size=True).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    _train_vision(model, rng, 25, (8, 64), (160, 384), opt, mult=16)


@workload("convolutional training: ConvNeXt-T, channels-last, SGD, bf16 autocast, batch 16-96 x image 128-320")
def convnext_varres(rng):
    import torchvision

    model = torchvision.models.convnext_tiny().cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    _train_vision(model, rng, 25, (16, 96), (128, 320), opt)


@workload("progressive resizing (curriculum): ResNet-101, image 96 -> 320 over 60 steps with batch shrinking 192 -> 24, SGD, bf16 autocast")
def cnn_progressive(rng):
    import torchvision

    model = torchvision.models.resnet101().cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def schedule(step):
        r = 96 + (320 - 96) * step // 59 // 16 * 16
        b = max(24, int(192 * (96 / r) ** 2))
        return b, r

    _train_vision(model, rng, 60, None, None, opt, schedule=schedule)


@workload("side-stream data prefetch: ResNet-50 training, batches copied on a side stream from pinned memory with record_stream, batch 16-128 x image 128-256")
def prefetch_streams(rng):
    import torchvision

    model = torchvision.models.resnet50().cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    side = torch.cuda.Stream()
    main = torch.cuda.current_stream()

    def load():
        b, r = rng.randint(16, 128), randint(rng, 128, 256, 32)
        host = torch.randn(b, 3, r, r).pin_memory()
        labels = torch.randint(0, 1000, (b,)).pin_memory()
        with torch.cuda.stream(side):
            x = host.cuda(non_blocking=True).contiguous(memory_format=torch.channels_last)
            y = labels.cuda(non_blocking=True)
        return x, y

    nxt = load()
    for _ in range(30):
        main.wait_stream(side)
        x, y = nxt
        x.record_stream(main)
        y.record_stream(main)
        nxt = load()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, y, loss
    torch.cuda.synchronize()


# ----------------------------------------------------------------- diffusion


@workload("diffusion: UNet (128-256-512 channels, attention at the bottom) trained on random 64-128 px batches of 8-48, then 40 sampling steps at batch 8-32")
def unet_diffusion(rng):
    model = _UNet().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model.train()
    for _ in range(24):
        b, r = rng.randint(8, 48), randint(rng, 64, 128, 16)
        x0 = torch.randn(b, 3, r, r, device="cuda")
        t = torch.randint(0, 1000, (b,), device="cuda")
        noise = torch.randn_like(x0)
        a = (1 - t.float() / 1000)[:, None, None, None]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.mse_loss(model(a.sqrt() * x0 + (1 - a).sqrt() * noise, t), noise)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x0, t, noise, a, loss
    model.eval()
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        for _ in range(2):
            b, r = rng.randint(8, 32), randint(rng, 64, 128, 16)
            x = torch.randn(b, 3, r, r, device="cuda")
            for step in range(20):
                t = torch.full((b,), 999 - step * 50, device="cuda")
                x = x - 0.05 * model(x, t)
            del x


# ------------------------------------------------------- mixture of experts


class _MoE(torch.nn.Module):
    def __init__(self, d, ff, experts, k):
        super().__init__()
        self.k = k
        self.router = torch.nn.Linear(d, experts)
        self.w1 = torch.nn.ModuleList([torch.nn.Linear(d, ff) for _ in range(experts)])
        self.w2 = torch.nn.ModuleList([torch.nn.Linear(ff, d) for _ in range(experts)])

    def forward(self, x):
        flat = x.reshape(-1, x.shape[-1])
        gate = self.router(flat).softmax(-1)
        w, idx = gate.topk(self.k, dim=-1)
        out = torch.zeros_like(flat)
        for e in range(len(self.w1)):
            rows, slot = (idx == e).nonzero(as_tuple=True)
            if rows.numel() == 0:
                continue
            h = self.w2[e](torch.nn.functional.gelu(self.w1[e](flat[rows])))
            out.index_add_(0, rows, h * w[rows, slot, None])
        return out.reshape(x.shape)


@workload("mixture of experts: 6 layers, 8 experts top-2 with a skewed router, expert batches vary per step, tokens 2k-24k per step, AdamW, bf16 autocast")
def moe_train(rng):
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.n1, self.attn = nn.LayerNorm(768), nn.MultiheadAttention(768, 12, batch_first=True)
            self.n2, self.moe = nn.LayerNorm(768), _MoE(768, 3072, 8, 2)

        def forward(self, x):
            h = self.n1(x)
            x = x + self.attn(h, h, h, need_weights=False)[0]
            return x + self.moe(self.n2(x))

    model = nn.Sequential(*[Block() for _ in range(6)]).cuda()
    with torch.no_grad():
        for blk in model:
            blk.moe.router.weight.mul_(8.0)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for _ in range(30):
        s = randint(rng, 128, 1024, 64)
        b = max(1, rng.randint(2048, 24576) // s)
        x = torch.randn(b, s, 768, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(x).float().pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, loss


# ------------------------------------------------------------------ serving


@workload("inference serving: continuous batching of a 16-layer decoder, requests arriving and leaving (prompt 16-1024, output 8-256), per-request KV caches grown by concatenation")
def serving(rng):
    nn = torch.nn
    d, heads, layers = 1024, 16, 16
    dh = d // heads
    qkv = [nn.Linear(d, 3 * d).cuda().half() for _ in range(layers)]
    proj = [nn.Linear(d, d).cuda().half() for _ in range(layers)]
    ff1 = [nn.Linear(d, 4 * d).cuda().half() for _ in range(layers)]
    ff2 = [nn.Linear(4 * d, d).cuda().half() for _ in range(layers)]

    def layer_step(i, x, caches):
        # x: (batch, new, d); caches: per request [k, v] of (heads, len, dh)
        b, n, _ = x.shape
        q, k, v = qkv[i](x).reshape(b, n, 3, heads, dh).permute(2, 0, 3, 1, 4)
        outs = []
        for j, c in enumerate(caches):
            c[i][0] = torch.cat([c[i][0], k[j]], dim=1) if c[i][0] is not None else k[j].contiguous()
            c[i][1] = torch.cat([c[i][1], v[j]], dim=1) if c[i][1] is not None else v[j].contiguous()
            outs.append(torch.nn.functional.scaled_dot_product_attention(q[j : j + 1], c[i][0][None], c[i][1][None]))
        a = torch.cat(outs, 0).transpose(1, 2).reshape(b, n, d)
        x = x + proj[i](a)
        return x + ff2[i](torch.nn.functional.gelu(ff1[i](x)))

    active = []  # [caches, remaining]
    with torch.no_grad():
        for tick in range(120):
            for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
                if len(active) >= 32:
                    break
                p = rng.randint(16, 1024)
                caches = [[None, None] for _ in range(layers)]
                x = torch.randn(1, p, d, device="cuda", dtype=torch.half)
                for i in range(layers):
                    x = layer_step(i, x, [caches])
                del x
                active.append([caches, rng.randint(8, 256)])
            if active:
                x = torch.randn(len(active), 1, d, device="cuda", dtype=torch.half)
                for i in range(layers):
                    x = layer_step(i, x, [r[0] for r in active])
                del x
                for r in active:
                    r[1] -= 1
                active = [r for r in active if r[1] > 0]


# ------------------------------------------------------------- curriculum


@workload("curriculum MLP: 4 residual blocks 1024-4096-1024, tokens per step growing from 256 by 150-250, 80 steps, AdamW, fp32")
def mlp_curriculum(rng):
    nn = torch.nn
    blocks = nn.ModuleList(
        [nn.Sequential(nn.LayerNorm(1024), nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)) for _ in range(4)]
    ).cuda()
    opt = torch.optim.AdamW(blocks.parameters(), lr=1e-4)
    tokens = 256
    for _ in range(80):
        x = torch.randn(tokens, 1024, device="cuda")
        for blk in blocks:
            x = x + blk(x)
        x.pow(2).mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x
        tokens += rng.randint(150, 250)

"""The twenty-second batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch21.py are). Same conventions: models built from configs (transformers, torchvision or hand-written
torch) with random weights, nothing downloaded, `rng` the workload's random.Random, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny.

record.py calls `register(<its own module object>)` once, just before main(), after batch21_b's: every workload
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


# ---------------------------------------------------------------- Medusa decoding with tree attention


def _medusa_tree(ks, nodes):
    """Medusa's sparse candidate tree: the `nodes` rank tuples (rank of head 0's top-k, of head 1's, ...) with the
    highest product of 1/(rank+1), prefix-closed, each at most len(ks) deep with rank i < ks[i]."""
    import itertools

    tuples = [t for depth in range(1, len(ks) + 1) for t in itertools.product(*(range(k) for k in ks[:depth]))]
    tuples.sort(key=lambda t: (-math.prod(1 / (r + 1) for r in t), len(t), t))
    return tuples[:nodes]


@_workload("LLM generation with Medusa heads and tree attention (Cai et al. 2024, Medusa-1), written by hand over an HF LlamaForCausalLM's weights (hidden 1024, 12 layers, GQA 16/4 heads of 64, MLP 2816, vocab 32000, random init) and 4 Medusa heads (a residual SiLU block and an lm_head of their own each) in bf16 under inference_mode, batch 1 as Medusa's reference runs it: 8 requests one after another with prompts of 256-4096 tokens (log-uniform) and 96-288 new tokens (uniform); a KV cache preallocated per request to prompt + new + 64 positions per layer; the prefill by causal SDPA; each decoding step the 4 heads' top-8 tokens, a 64-node candidate tree (the root and the 63 rank tuples of highest product of 1/(rank+1), at most 4 deep), the tree run through the model at positions past + depth with a mask of the whole past plus the tree's ancestor mask (SDPA, GQA), its KV written into the cache; the candidates' paths checked against the model's greedy tokens on the device, and the accepted prefix's KV copied into place (index_select per layer); the accepted length per step drawn (1-5 tokens, weighted 30/30/20/12/8, as a trained Medusa-1's acceptance; random heads accept nothing), the best path among those long enough picked on the device; the tokens read back every step")
def medusa_decode(rng):
    from transformers import LlamaConfig, LlamaForCausalLM

    sdpa = torch.nn.functional.scaled_dot_product_attention
    d, heads, kvh = _smoke(1024, 128), 16, 4
    dh = d // heads
    cfg = LlamaConfig(hidden_size=d, intermediate_size=_smoke(2816, 256), num_hidden_layers=12,
                      num_attention_heads=heads, num_key_value_heads=kvh, vocab_size=32000,
                      max_position_embeddings=8192)
    lm = LlamaForCausalLM(cfg).to("cuda", torch.bfloat16).eval()
    nn = torch.nn
    medusa = nn.ModuleList(nn.ModuleDict({"res": nn.Linear(d, d), "head": nn.Linear(d, cfg.vocab_size, bias=False)})
                           for _ in range(4)).to("cuda", torch.bfloat16).eval()
    rope = _b.rec._rope
    cos, sin = _rope_tables(dh, _smoke(4096, 256) + 512, 10000.0)

    # The tree: node 0 the root (the model's own next token), nodes 1-63 one rank tuple each.
    tree = _medusa_tree((8, 4, 3, 2), 63)
    index = {t: i + 1 for i, t in enumerate(tree)}
    depth = torch.tensor([0] + [len(t) for t in tree], device="cuda")
    # Where each node's token sits in cat([root], topk.flatten()) (topk: 4 heads x 8).
    pick = torch.tensor([0] + [1 + (len(t) - 1) * 8 + t[-1] for t in tree], device="cuda")
    anc = torch.eye(64, dtype=torch.bool)
    for t, i in index.items():
        for j in range(1, len(t)):
            anc[i, index[t[:j]]] = True
        anc[i, 0] = True
    anc = anc.to("cuda")
    leaves = [t for t in tree if not any(u[: len(t)] == t and len(u) > len(t) for u in tree)]
    paths = torch.tensor([[0] + [index[t[:j]] for j in range(1, len(t) + 1)] + [-1] * (4 - len(t)) for t in leaves],
                         device="cuda")  # (P, 5), padded with -1
    path_len = (paths >= 0).sum(1)

    def run(x, pos, past, mask, caches):
        """x (1, n, d) at positions pos (n,) after `past` cached ones: the final hidden states; k and v written into
        the caches at past .. past + n."""
        n = x.shape[1]
        c, s = cos[pos][:, None], sin[pos][:, None]
        for layer, (kc, vc) in zip(lm.model.layers, caches):
            a = layer.self_attn
            h = layer.input_layernorm(x)
            q = rope(a.q_proj(h).view(1, n, heads, dh), c, s).transpose(1, 2)
            kc[:, :, past: past + n] = rope(a.k_proj(h).view(1, n, kvh, dh), c, s).transpose(1, 2)
            vc[:, :, past: past + n] = a.v_proj(h).view(1, n, kvh, dh).transpose(1, 2)
            k, v = kc[:, :, : past + n], vc[:, :, : past + n]
            o = sdpa(q, k, v, is_causal=True, enable_gqa=True) if mask is None else \
                sdpa(q, k, v, attn_mask=mask, enable_gqa=True)
            x = x + a.o_proj(o.transpose(1, 2).reshape(1, n, d))
            x = x + layer.mlp(layer.post_attention_layernorm(x))
        return lm.model.norm(x)

    def heads_topk(hid):
        """The 4 Medusa heads' top-8 tokens at hidden state hid (1, d): (4, 8)."""
        outs = [m["head"](hid + torch.nn.functional.silu(m["res"](hid))).topk(8, -1).indices for m in medusa]
        return torch.cat(outs)

    # About 490 tensors a decoding step (counted on CPU at 12 layers: about 38 a layer, the tree and heads the rest)
    # and 720 a prefill: 8 requests of 192 new tokens on average at 2.38 tokens a step (about 650 steps) make about
    # 0.32M tensors, 0.64M events.
    weights = (30, 30, 20, 12, 8)
    with torch.inference_mode():
        for _ in range(_smoke(8, 2)):
            t = _loguniform(rng, _smoke(256, 16), _smoke(4096, 128))
            new = rng.randint(_smoke(96, 6), _smoke(288, 12))
            total = t + new + 64
            caches = [(torch.zeros(1, kvh, total, dh, dtype=torch.bfloat16, device="cuda"),
                       torch.zeros(1, kvh, total, dh, dtype=torch.bfloat16, device="cuda")) for _ in range(12)]
            ids = torch.randint(0, cfg.vocab_size, (1, t), device="cuda")
            hid = run(lm.model.embed_tokens(ids), torch.arange(t, device="cuda"), 0, None, caches)[:, -1]
            root = lm.lm_head(hid).argmax(-1)
            past, done = t, 0
            while done < new:
                acc = min(rng.choices(range(1, 6), weights)[0], new - done)
                cand = torch.cat([root, heads_topk(hid).flatten()])[pick]  # (64,)
                mask = torch.cat([torch.ones(64, past, dtype=torch.bool, device="cuda"), anc], 1)
                out = run(lm.model.embed_tokens(cand[None]), past + depth, past, mask, caches)
                greedy = lm.lm_head(out[0]).argmax(-1)  # (64,)
                safe = paths.clamp_min(0)
                ok = (cand[safe[:, 1:]] == greedy[safe[:, :-1]]) & (paths[:, 1:] >= 0)
                score = ok.int().cumprod(1).sum(1) + (path_len >= acc) * 16
                sel = safe[score.argmax()][:acc]  # the accepted nodes, root first
                for kc, vc in caches:
                    kc[:, :, past: past + acc] = kc[:, :, past:].index_select(2, sel)
                    vc[:, :, past: past + acc] = vc[:, :, past:].index_select(2, sel)
                hid, root = out[:, sel[-1]], greedy[sel[-1]][None]
                torch.cat([cand[sel], root]).tolist()
                past, done = past + acc, done + acc
                del cand, mask, out, greedy, safe, ok, score, sel
            del caches, ids, hid, root
    torch.cuda.synchronize()


# ---------------------------------------------------------------- ViT serving with token merging (ToMe)


class _ToMeBlock(torch.nn.Module):
    """A timm ViT block with ToMe (Bolya et al. 2023): proportional attention (log token size added to the
    scores), then bipartite soft matching on the keys' head mean merging r tokens (size-weighted average) before
    the MLP."""

    def __init__(self, d, heads):
        super().__init__()
        nn = torch.nn
        self.heads = heads
        self.norm1, self.qkv, self.proj = nn.LayerNorm(d, eps=1e-6), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.norm2, self.fc1, self.fc2 = nn.LayerNorm(d, eps=1e-6), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x, size, r):
        b, n, c = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        bias = size.log()[:, None, None, :, 0].to(x.dtype)
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        x = x + self.proj(a.transpose(1, 2).reshape(b, n, c))
        r = min(r, (n - 1) // 2)
        if r > 0:
            metric = k.mean(1)
            metric = metric / metric.norm(dim=-1, keepdim=True)
            sa, sb = metric[:, ::2], metric[:, 1::2]
            scores = sa @ sb.transpose(-1, -2)
            scores[:, 0, :] = -math.inf  # the class token is never merged
            node_max, node_idx = scores.max(-1)
            edge = node_max.argsort(-1, descending=True)[..., None]
            unm, src = edge[:, r:].sort(1).values, edge[:, :r]
            dst = node_idx[..., None].gather(1, src)

            def merge(t):
                ta, tb = t[:, ::2], t[:, 1::2]
                ch = t.shape[-1]
                kept = ta.gather(1, unm.expand(-1, -1, ch))
                moved = ta.gather(1, src.expand(-1, -1, ch))
                return torch.cat([kept, tb.scatter_reduce(1, dst.expand(-1, -1, ch), moved, reduce="sum")], 1)

            x = merge(x * size)
            size = merge(size)
            x = x / size
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.norm2(x)))), size


class _ToMeVit(torch.nn.Module):
    """ViT/16 with a class token and learned positions for 224 px, bicubically resized to each request's grid."""

    def __init__(self, d, depth, heads, classes=1000):
        super().__init__()
        nn = torch.nn
        self.patch = nn.Conv2d(3, d, 16, 16)
        self.cls, self.pos = nn.Parameter(torch.zeros(1, 1, d)), nn.Parameter(torch.randn(1, 197, d) * 0.02)
        self.blocks = nn.ModuleList(_ToMeBlock(d, heads) for _ in range(depth))
        self.norm, self.head = nn.LayerNorm(d, eps=1e-6), nn.Linear(d, classes)

    def forward(self, img, r):
        x = self.patch(img)
        b, d, gh, gw = x.shape
        grid = self.pos[:, 1:].reshape(1, 14, 14, d).permute(0, 3, 1, 2)
        pos = torch.nn.functional.interpolate(grid.float(), size=(gh, gw), mode="bicubic", align_corners=False)
        pos = torch.cat([self.pos[:, :1], pos.to(x.dtype).flatten(2).transpose(1, 2)], 1)
        x = torch.cat([self.cls.expand(b, -1, -1), x.flatten(2).transpose(1, 2)], 1) + pos
        size = torch.ones(b, x.shape[1], 1, dtype=x.dtype, device=x.device)
        for blk in self.blocks:
            x, size = blk(x, size, r)
        return self.head(self.norm(x[:, 0]))


@_workload("vision transformer serving with token merging, ToMe (Bolya et al. 2023) as its timm patch runs it, written by hand: a ViT-B/16 (12 blocks of width 768, 12 heads) and a ViT-L/16 (24 blocks of width 1024, 16 heads), random init, fp16 under inference_mode behind one queue; 640 requests, each for one model (ViT-B 70%), a batch of 1-64 images (log-uniform) made on the device at 224-448 px (multiples of 32, square or 3:4/4:3, drawn), the learned 14x14 position table bicubically resized to the request's grid every forward; per block proportional attention (SDPA with the log token sizes as a float mask), then bipartite soft matching on the keys' head mean (cosine scores of alternate tokens, the class token protected, argsort, gather, scatter_reduce sum weighted by the token sizes) merging r tokens, r drawn per request as 4%, 6% or 8% of the initial tokens (capped at half the tokens left), so that the token count shrinks block by block; the top-5 classes read back per request")
def tome_vit_serve(rng):
    small = _smoke(0, 1)
    models = {"b": _ToMeVit(_smoke(768, 64), 12, _smoke(12, 4)), "l": _ToMeVit(_smoke(1024, 64), 24, _smoke(16, 4))}
    models = {k: m.to("cuda", torch.float16).eval() for k, m in models.items()}
    # About 380 tensors a ViT-B request and 640-760 a ViT-L one (counted on CPU at 224 and 448 px: about 30 a block
    # while tokens are merged, 16 once too few are left): 640 requests, 30% ViT-L, make about 0.31M tensors, 0.61M
    # events.
    with torch.inference_mode():
        for _ in range(_smoke(640, 6)):
            which = "b" if rng.random() < 0.7 else "l"
            side = rng.choice(range(224, 449, 32)) if not small else 64
            h, w = rng.choice(((side, side), (side, side * 3 // 4 // 16 * 16), (side * 3 // 4 // 16 * 16, side)))
            b = _loguniform(rng, 1, _smoke(64, 4))
            img = torch.randn(b, 3, h, w, device="cuda", dtype=torch.float16)
            r = int(rng.choice((0.04, 0.06, 0.08)) * (h // 16) * (w // 16))
            models[which](img, r).topk(5, -1).indices.tolist()
            del img
    torch.cuda.synchronize()


# ---------------------------------------------------------------- kNN-LM with a growing datastore


@_workload("retrieval-augmented LM evaluation, kNN-LM (Khandelwal et al. 2020) with the datastore built online as the text streams past (a dynamic array, its capacity doubled when full): an HF GPT2LMHeadModel (GPT-2 small: 12 layers, width 768, 12 heads, vocab 50257, random init) in fp16 under inference_mode over a stream of random token windows, 1050 steps of 256-2048 tokens (1-8 windows of 256, 1-4 of 512 or 1-2 of 1024, the window drawn, the count log-uniform); per step the final hidden states as queries, searched exhaustively against the datastore so far in chunks of 131072 keys (one addmm of -2 q k^T plus the keys' squared norms per chunk, fp16, top-64 per chunk, the chunks' candidates merged by a second top-64), the kNN distribution (softmax of negative distances, temperature 1) scattered over the vocabulary and interpolated with the LM's (lambda 0.25, logaddexp of log-probabilities in fp32), the targets' log-probabilities gathered and the perplexity read back; then the step's keys (fp16, 768), their squared norms and next-token values (int64) appended, the capacity starting at 65536 and doubled (new buffers, copy, old freed) to 2M entries (about 1.2M used at the end)")
def knn_lm_datastore(rng):
    from transformers import GPT2Config, GPT2LMHeadModel

    f = torch.nn.functional
    d = _smoke(768, 64)
    cfg = GPT2Config(n_layer=12, n_embd=d, n_head=12 if d % 12 == 0 else 4, vocab_size=50257, n_positions=2048)
    lm = GPT2LMHeadModel(cfg).to("cuda", torch.float16).eval()
    chunk, k, lam = _smoke(131072, 512), 64, 0.25
    cap, n = _smoke(65536, 256), 0
    keys = torch.empty(cap, d, dtype=torch.float16, device="cuda")
    norms = torch.empty(cap, dtype=torch.float16, device="cuda")
    vals = torch.empty(cap, dtype=torch.long, device="cuda")
    unit = _smoke(256, 32)
    # About 300 tensors a step (counted on CPU: the GPT-2 forward about 230, the search 4 a chunk, the mixture and
    # the append the rest): 1050 steps of about 1150 tokens (1.2M entries at the end) make about 0.32M tensors,
    # 0.64M events.
    with torch.inference_mode():
        for _ in range(_smoke(1050, 8)):
            w = rng.choice((1, 2, 4))
            rows = _loguniform(rng, 1, 8 // w)
            ids = torch.randint(0, cfg.vocab_size, (rows, w * unit + 1), device="cuda")
            out = lm.transformer(ids[:, :-1]).last_hidden_state
            q = out.flatten(0, 1)  # (T, d)
            lm_lp = f.log_softmax(lm.lm_head(out).float(), -1).flatten(0, 1)
            target = ids[:, 1:].flatten()
            lp = lm_lp.gather(1, target[:, None])[:, 0]
            if n >= k:
                cd, ci = [], []
                for lo in range(0, n, chunk):
                    hi = min(n, lo + chunk)
                    dist = torch.addmm(norms[lo:hi][None], q, keys[lo:hi].T, alpha=-2)
                    top = dist.topk(min(k, hi - lo), -1, largest=False)
                    cd.append(top.values)
                    ci.append(top.indices + lo)
                    del dist, top
                cd, ci = torch.cat(cd, 1), torch.cat(ci, 1)
                top = cd.topk(k, -1, largest=False)
                dist = top.values.float() + q.float().pow(2).sum(-1, keepdim=True)
                idx = ci.gather(1, top.indices)
                knn = torch.zeros_like(lm_lp).scatter_add_(1, vals[idx], (-dist).softmax(-1))
                mix = torch.logaddexp(lm_lp + math.log(1 - lam), knn.clamp_min(1e-30).log() + math.log(lam))
                lp = mix.gather(1, target[:, None])[:, 0]
                del cd, ci, top, dist, idx, knn, mix
            float(lp.mean().neg().exp())
            t = q.shape[0]
            if n + t > cap:
                while n + t > cap:
                    cap *= 2
                grown = [torch.empty(cap, *x.shape[1:], dtype=x.dtype, device="cuda") for x in (keys, norms, vals)]
                for new, old in zip(grown, (keys, norms, vals)):
                    new[:n] = old[:n]
                keys, norms, vals = grown
                del grown, new, old
            keys[n: n + t] = q
            norms[n: n + t] = q.float().pow(2).sum(-1)
            vals[n: n + t] = target
            n += t
            del ids, out, q, lm_lp, target, lp
    torch.cuda.synchronize()


# ---------------------------------------------------------------- QLoRA fine-tuning with NF4 written by hand


_NF4 = [-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635,
        -0.18477343022823334, -0.09105003625154495, 0.0, 0.07958029955625534, 0.16093020141124725,
        0.24611230194568634, 0.33791524171829224, 0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0]


class _Nf4Weight:
    """A bf16 (out, in) weight quantized as QLoRA stores it: NF4 codes of blocks of 64 packed two a byte, the
    blocks' absmax double-quantized (int8 in blocks of 256 about their mean, an fp32 scale a block)."""

    def __init__(self, w, table):
        self.shape, self.table = w.shape, table
        blocks = w.float().view(-1, 64)
        absmax = blocks.abs().amax(1)
        # split: bounded memory while quantizing (each part divided by its own blocks' absmax)
        codes = torch.cat([(part / amax[:, None])[..., None].sub(table).abs().argmin(-1).to(torch.uint8)
                           for part, amax in zip(blocks.split(16384), absmax.split(16384))]).view(-1)
        self.packed = (codes[0::2] << 4) | codes[1::2]
        self.offset = absmax.mean()
        centred = (absmax - self.offset).view(-1, 256)
        self.scale = centred.abs().amax(1) / 127
        self.qabs = (centred / self.scale[:, None]).round().to(torch.int8)

    def dequant(self):
        absmax = (self.qabs.float() * self.scale[:, None]).view(-1) + self.offset
        codes = torch.stack([self.packed >> 4, self.packed & 15], -1).view(-1).long()
        return (self.table[codes].view(-1, 64) * absmax[:, None]).to(torch.bfloat16).view(self.shape)


class _Nf4Matmul(torch.autograd.Function):
    """x @ W^T with W dequantized from NF4 in the forward and again in the backward (bitsandbytes' MatMul4Bit)."""

    @staticmethod
    def forward(ctx, x, q):
        ctx.q = q
        return x.to(torch.bfloat16) @ q.dequant().T

    @staticmethod
    def backward(ctx, g):
        return g.to(torch.bfloat16) @ ctx.q.dequant(), None


class _QLoraLinear(torch.nn.Module):
    """peft's LoRA Linear4bit: the frozen NF4 base plus dropout, A (fp32, kaiming), B (fp32, zero) scaled by
    alpha / r."""

    def __init__(self, linear, table, r, alpha):
        super().__init__()
        self.q = _Nf4Weight(linear.weight.data, table)
        self.drop = torch.nn.Dropout(0.05)
        self.a = torch.nn.Linear(linear.in_features, r, bias=False, device=table.device)
        self.b = torch.nn.Linear(r, linear.out_features, bias=False, device=table.device)
        torch.nn.init.zeros_(self.b.weight)
        self.scaling = alpha / r

    def forward(self, x):
        return _Nf4Matmul.apply(x, self.q) + self.b(self.a(self.drop(x))) * self.scaling


@_workload("QLoRA fine-tuning (Dettmers et al. 2023) with the NF4 quantization written by hand (bitsandbytes' layout: codes of blocks of 64 packed two a byte, absmax double-quantized to int8 in blocks of 256): an HF LlamaForCausalLM (hidden 2048, 16 layers, GQA 32/4 heads of 64, MLP 5632, vocab 32000, 0.8B parameters, random init) built in bf16 and its 112 projection weights quantized on the device one by one at load (the bf16 weights freed); LoRA r 64, alpha 16, dropout 0.05 on all seven projections of every layer (fp32 adapters), each base matmul dequantizing its weight to bf16 in the forward and again in the backward (a torch.autograd.Function); embeddings, norms and head frozen; HF gradient checkpointing per layer (non-reentrant), bf16 autocast; instruction-tuning batches of 4-16 examples of 64-1024 tokens (log-uniform), right-padded to the longest, at most 8192 tokens with padding, the prompt part (20-50%) and the padding labelled -100; AdamW on the adapters (lr 2e-4, constant after 4 warmup steps), gradient clipping 0.3, 32 steps, the loss read back every step")
def qlora_train(rng):
    from transformers import LlamaConfig, LlamaForCausalLM

    d = _smoke(2048, 256)
    cfg = LlamaConfig(hidden_size=d, intermediate_size=_smoke(5632, 512), num_hidden_layers=_smoke(16, 4),
                      num_attention_heads=32 if d >= 2048 else 8, num_key_value_heads=4, vocab_size=32000,
                      max_position_embeddings=2048, use_cache=False)
    lm = LlamaForCausalLM(cfg).to("cuda", torch.bfloat16)
    lm.requires_grad_(False)
    table = torch.tensor(_NF4, device="cuda")
    adapters = []
    with torch.no_grad():
        for layer in lm.model.layers:
            for mod, names in ((layer.self_attn, ("q_proj", "k_proj", "v_proj", "o_proj")),
                               (layer.mlp, ("gate_proj", "up_proj", "down_proj"))):
                for name in names:
                    ql = _QLoraLinear(getattr(mod, name), table, 64, 16)
                    setattr(mod, name, ql)
                    adapters += [ql.a.weight, ql.b.weight]
            for norm in (layer.input_layernorm, layer.post_attention_layernorm):
                norm.float()
    lm.model.norm.float()
    lm.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    lm.train()
    opt = torch.optim.AdamW(adapters, lr=2e-4, weight_decay=0.0)
    steps, warm, cap = _smoke(32, 3), 4, _smoke(8192, 512)
    # About 10.7k tensors a step (counted on CPU at 2 and 4 layers: 663 a layer, its forward, recomputation and
    # backward with 7 dequantizations each thrice, and 80 besides): 32 steps make about 0.34M tensors, 0.69M events.
    for step in range(steps):
        opt.param_groups[0]["lr"] = 2e-4 * min(1.0, (step + 1) / warm)
        b = rng.randint(4, 16)
        lengths = [_loguniform(rng, _smoke(64, 8), _smoke(1024, 96)) for _ in range(b)]
        while len(lengths) > 1 and len(lengths) * max(lengths) > cap:
            lengths.pop()
        ids, mask = _b.rec._padded_ids(cfg.vocab_size, lengths, mult=8)
        labels = ids.masked_fill(mask == 0, -100)
        for i, n in enumerate(lengths):
            labels[i, : int(n * rng.uniform(0.2, 0.5))] = -100
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = lm(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(adapters, 0.3)
        opt.step()
        opt.zero_grad(set_to_none=True)
        float(loss.detach())
        del ids, mask, labels, loss
    torch.cuda.synchronize()

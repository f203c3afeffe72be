"""The eighteenth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py and
batch17.py are). Same conventions: models built from configs (transformers, torchvision or hand-written
torch) with random weights, nothing downloaded, `rng` the workload's random.Random, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny.

record.py calls `register(<its own module object>)` once, just before main(), after batch17's: every workload
below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it reaches
record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.
"""

import math

import torch

from batch_common import Batch, upload as _upload
from workload_helpers import _repeat_kv, _rope_tables

_b = Batch()  # this batch's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- multi-turn chat serving with a prefix cache


@_workload("multi-turn chat serving with a radix-tree prefix KV cache, SGLang-RadixAttention-style, written by hand over an HF LlamaForCausalLM's weights (Llama-3.2-1B-shaped: hidden 2048, 16 layers, GQA 32/8 heads of 64, MLP 8192, vocab 128256, tied embeddings: 1.24B, random init) in bf16 under inference_mode; 6 system prompts of 150-1500 tokens (log-uniform) shared by the conversations (Zipf-like popularity), conversations of 2-8 turns (user messages 8-512 tokens, replies 8-128, log-uniform, at most 8k tokens of context); 11 waves of 2-24 requests (log-uniform, a new conversation 30% of the time, else the next turn of an open one), batch x cache length capped at 96k tokens; per request the longest cached prefix (the system prompt node, then the conversation's turn nodes) is matched and copied into the wave's static KV cache (per layer (B, 8, longest + new rounded up to 128, 64), zero-initialized, rows right-aligned, HF StaticCache-like), the rest of the history and the new message prefilled row by row against it (explicit causal mask), then one token a step for the whole wave (temperature 0.7, top-k 20; keys and values repeated to 32 heads for SDPA with a padding mask, as HF does; rows that finished pad on) until its longest reply; the tokens copied back every step; afterwards each request's new segment (and an evicted system prompt, recomputed) copied out of the static cache into a node tensor of its own (16, 2, 8, tokens, 64) and inserted; least recently used leaves evicted down to 10k cached tokens (0.33 GB)")
def prefix_cache_chat(rng):
    from transformers import LlamaConfig, LlamaForCausalLM

    d, layers, heads, kvh = _smoke(2048, 128), _smoke(16, 2), 32, 8
    dh = d // heads
    cfg = LlamaConfig(hidden_size=d, intermediate_size=_smoke(8192, 256), num_hidden_layers=layers, num_attention_heads=heads,
                      num_key_value_heads=kvh, vocab_size=128256, max_position_embeddings=131072, tie_word_embeddings=True)
    lm = LlamaForCausalLM(cfg).to("cuda", torch.bfloat16).eval()
    ctx = _smoke(8192, 768)
    cos, sin = _rope_tables(dh, ctx + 256, 500000.0)
    sdpa = torch.nn.functional.scaled_dot_product_attention
    rope = _b.rec._rope
    budget, wave_cap = _smoke(10_000, 250), _smoke(96_000, 6000)
    sys_len = [_loguniform(rng, _smoke(150, 16), _smoke(1500, 120)) for _ in range(6)]

    def forward(ids, pos, ks, vs, write, read, mask):
        """Logits of the last position of ids (B, T) at positions pos (B, T); each layer's keys and values written
        into its cache buffers ks[l], vs[l] (B, 8, cap, 64) at columns `write`, attention over columns `read`."""
        x = lm.model.embed_tokens(ids)
        b, t = ids.shape
        c, s = cos[pos][:, None], sin[pos][:, None]  # (B, 1, T, dh)
        for layer, kb, vb in zip(lm.model.layers, ks, vs):
            a = layer.self_attn
            h = layer.input_layernorm(x)
            q = rope(a.q_proj(h).view(b, t, heads, dh).transpose(1, 2), c, s)
            kb[:, :, write] = rope(a.k_proj(h).view(b, t, kvh, dh).transpose(1, 2), c, s)
            vb[:, :, write] = a.v_proj(h).view(b, t, kvh, dh).transpose(1, 2)
            o = sdpa(q, _repeat_kv(kb[:, :, read], heads // kvh), _repeat_kv(vb[:, :, read], heads // kvh), attn_mask=mask)
            x = x + a.o_proj(o.transpose(1, 2).reshape(b, t, d))
            x = x + layer.mlp(layer.post_attention_layernorm(x))
            del h, q, o
        return lm.lm_head(lm.model.norm(x[:, -1]))

    def sample(logits):
        top = (logits.float() / 0.7).topk(20, -1)
        return top.indices.gather(-1, torch.multinomial(torch.softmax(top.values, -1), 1))  # (B, 1)

    # The radix tree: key -> [kv (layers, 2, kvh, n, dh), n, last use, parent key, cached children]. A conversation is
    # its list of (key, tokens) segments from its system prompt on; a segment whose node is gone is recomputed.
    nodes, convs, clock, serial = {}, [], 0, 0

    def insert(key, parent, kbuf, vbuf, row, col, n):
        kv = kbuf[0].new_empty(layers, 2, kvh, n, dh)
        for i in range(layers):
            kv[i, 0].copy_(kbuf[i][row, :, col: col + n])
            kv[i, 1].copy_(vbuf[i][row, :, col: col + n])
        nodes[key] = [kv, n, clock, parent, 0]
        if parent is not None:
            nodes[parent][4] += 1

    # About 520 tensors a forward at 16 layers (counted on CPU, less the CPU's unfused attention): the waves' draws
    # make 1145 forwards (replayed in Python: 9.9 prefills and 94 decoding steps a wave on average), about 1.2M events;
    # the tree outgrows its budget from the seventh wave on.
    with torch.inference_mode():
        for _ in range(_smoke(11, 4)):
            clock += 1
            want = _loguniform(rng, 2, _smoke(24, 4))
            reqs, taken = [], set()
            for _ in range(want):
                open_ = [c for c in convs if id(c) not in taken]
                if open_ and rng.random() > 0.3:
                    conv = rng.choice(open_)
                else:
                    k = min(int(rng.paretovariate(1.0)) - 1, 5)
                    conv = {"segs": [(("sys", k), sys_len[k])], "len": sys_len[k], "turns": rng.randint(2, 8)}
                    convs.append(conv)
                user, reply = _loguniform(rng, 8, _smoke(512, 48)), _loguniform(rng, 8, _smoke(128, 12))
                if conv["len"] + user + reply > ctx:  # out of context: the conversation ends
                    convs.remove(conv)
                    continue
                total = conv["len"] + user
                longest = max([total] + [r[1] for r in reqs])
                new = max([reply] + [r[3] for r in reqs])
                if (len(reqs) + 1) * (longest + new) > wave_cap:
                    break
                taken.add(id(conv))
                reqs.append([conv, total, user, reply])
            if not reqs:
                continue
            b = len(reqs)
            longest, new = max(r[1] for r in reqs), max(r[3] for r in reqs)
            cap = -(-(longest + new) // 128) * 128
            kbuf = [torch.zeros(b, kvh, cap, dh, dtype=torch.bfloat16, device="cuda") for _ in range(layers)]
            vbuf = [torch.zeros(b, kvh, cap, dh, dtype=torch.bfloat16, device="cuda") for _ in range(layers)]
            offs = [longest - r[1] for r in reqs]
            valid = torch.arange(cap, device="cuda")[None] >= torch.tensor(offs, device="cuda")[:, None]  # (B, cap)
            toks, plan = [], []
            for row, (conv, total, user, reply) in enumerate(reqs):
                hit = 0
                while hit < len(conv["segs"]) and conv["segs"][hit][0] in nodes:
                    hit += 1
                col = offs[row]
                for key, n in conv["segs"][:hit]:  # the cached prefix, copied into the row
                    kv = nodes[key][0]
                    nodes[key][2] = clock
                    for i in range(layers):
                        kbuf[i][row, :, col: col + n] = kv[i, 0]
                        vbuf[i][row, :, col: col + n] = kv[i, 1]
                    col += n
                cached = col - offs[row]
                plan.append((hit, cached))
                ids = _upload(torch.randint(0, cfg.vocab_size, (1, total - cached)))
                pos = torch.arange(cached, total, device="cuda")[None]
                mask = (torch.arange(total, device="cuda")[None] <= pos[0][:, None])[None, None]  # (1, 1, S, L)
                logits = forward(ids, pos, [k[row: row + 1] for k in kbuf], [v[row: row + 1] for v in vbuf],
                                 slice(col, longest), slice(offs[row], longest), mask)
                toks.append(sample(logits))
                del ids, pos, mask, logits
            tok = torch.cat(toks)
            pos = torch.tensor([r[1] for r in reqs], device="cuda")[:, None]
            del toks
            for t in range(new):
                col = longest + t
                tok = sample(forward(tok, pos, kbuf, vbuf, slice(col, col + 1), slice(0, col + 1), valid[:, None, None, : col + 1]))
                tok.cpu()  # detokenization, stop strings
                pos = pos + 1
            for row, (conv, total, user, reply) in enumerate(reqs):  # the new segments into the tree
                hit, cached = plan[row]
                segs, rest = conv["segs"][:hit], conv["segs"][hit:]
                col = offs[row] + cached
                if rest and rest[0][0][0] == "sys":  # the shared system prompt had been evicted: re-inserted on its own
                    key, n = rest[0]
                    if key not in nodes:
                        insert(key, None, kbuf, vbuf, row, col, n)
                    segs, rest, col = segs + [rest[0]], rest[1:], col + n
                n = sum(m for _, m in rest) + user + reply
                key = ("turn", serial)
                serial += 1
                insert(key, segs[-1][0], kbuf, vbuf, row, col, n)
                conv["segs"], conv["len"] = segs + [(key, n)], conv["len"] + user + reply
                conv["turns"] -= 1
                if conv["turns"] == 0:
                    convs.remove(conv)
            del kbuf, vbuf, valid, tok, pos
            cached = sum(v[1] for v in nodes.values())
            while cached > budget:  # LRU eviction of leaves
                key = min((k for k, v in nodes.items() if v[4] == 0), key=lambda k: nodes[k][2])
                _, n, _, parent, _ = nodes.pop(key)
                cached -= n
                if parent in nodes:
                    nodes[parent][4] -= 1
    torch.cuda.synchronize()


# ---------------------------------------------------------------- generation with weights streamed from the host


@_workload("throughput-oriented LLM batch generation with part of the weights offloaded (two CUDA streams): a hand-written Llama-style decoder (hidden 2560, 32 layers, GQA 32/8 heads of 80, SwiGLU MLP 6912, vocab 32000, untied head: 2.7B, random weights) in bf16 under inference_mode; accelerate device_map-style under a GPU memory budget, the first 24 layers resident and the last 8 kept in pinned host memory, streamed onto the GPU one layer ahead on a copy stream, FlexGen/ZeRO-Inference-style (each streamed layer's 9 tensors copied with non_blocking, an event waited on by the compute stream, record_stream to it, freed after the layer; the first streamed layer of the next pass prefetched during the last one); 9 batches of 8-64 prompts (log-uniform) of 32-1024 tokens (log-uniform, left-padded with a mask, positions from its cumsum, batch x (longest + new) capped at 48k tokens), a KV cache preallocated per batch for prompt + new tokens (per layer (B, 8, T, 80), written in place), keys and values repeated to 32 heads for SDPA with the padding mask; prefill, then greedy decoding of 24-96 new tokens (uniform; one pass a token, the whole batch), the tokens copied back every step")
def layer_offload_gen(rng):
    f = torch.nn.functional
    d, layers, heads, kvh, ffn, vocab = _smoke(2560, 128), _smoke(32, 4), 32, 8, _smoke(6912, 344), 32000
    dh = d // heads
    resident = _smoke(24, 2)
    bf = torch.bfloat16
    shapes = {"ln1": (d,), "q": (d, d), "k": (kvh * dh, d), "v": (kvh * dh, d), "o": (d, d), "ln2": (d,),
              "gate": (ffn, d), "up": (ffn, d), "down": (d, ffn)}

    def weights():
        return {k: torch.ones(s, dtype=bf, device="cuda") if k.startswith("ln") else
                torch.empty(s, dtype=bf, device="cuda").normal_(0, 0.02) for k, s in shapes.items()}

    emb = torch.empty(vocab, d, dtype=bf, device="cuda").normal_(0, 0.02)
    head = torch.empty(vocab, d, dtype=bf, device="cuda").normal_(0, 0.02)
    norm = torch.ones(d, dtype=bf, device="cuda")
    res = [weights() for _ in range(resident)]
    # The streamed layers' weights in pinned host memory: every streamed layer's tensors are views of one pinned pool
    # of random values (the values do not matter; their sizes and copies do).
    pool = torch.empty(sum(math.prod(s) for s in shapes.values()), dtype=bf).normal_(0, 0.02).pin_memory()
    host, o = {}, 0
    for k, s in shapes.items():
        host[k] = pool[o: o + math.prod(s)].view(s)
        o += math.prod(s)
    cos, sin = _rope_tables(dh, 1024 + 96, 10000.0)
    rope = _b.rec._rope
    copy_stream, main = torch.cuda.Stream(), torch.cuda.current_stream()

    def fetch():
        with torch.cuda.stream(copy_stream):
            w = {k: t.to("cuda", non_blocking=True) for k, t in host.items()}
            ready = copy_stream.record_event()
        return w, ready

    def layer(w, x, c, s, kc, vc, write, read, mask):
        b, t, _ = x.shape
        h = f.rms_norm(x, (d,), w["ln1"], 1e-5)
        q = rope(f.linear(h, w["q"]).view(b, t, heads, dh).transpose(1, 2), c, s)
        kc[:, :, write] = rope(f.linear(h, w["k"]).view(b, t, kvh, dh).transpose(1, 2), c, s)
        vc[:, :, write] = f.linear(h, w["v"]).view(b, t, kvh, dh).transpose(1, 2)
        o = f.scaled_dot_product_attention(q, _repeat_kv(kc[:, :, read], heads // kvh), _repeat_kv(vc[:, :, read], heads // kvh), attn_mask=mask)
        x = x + f.linear(o.transpose(1, 2).reshape(b, t, d), w["o"])
        h = f.rms_norm(x, (d,), w["ln2"], 1e-5)
        return x + f.linear(f.silu(f.linear(h, w["gate"])) * f.linear(h, w["up"]), w["down"])

    pending = fetch()

    def forward(ids, pos, kv, write, read, mask):
        nonlocal pending
        x = f.embedding(ids, emb)
        c, s = cos[pos][:, None], sin[pos][:, None]
        for i in range(layers):
            if i < resident:
                w = res[i]
            else:
                w, ready = pending
                main.wait_event(ready)
                for t in w.values():
                    t.record_stream(main)
                pending = fetch()  # the next streamed layer (after the last, the first one of the next pass)
            x = layer(w, x, c, s, kv[i][0], kv[i][1], write, read, mask)
            del w
        return f.linear(f.rms_norm(x[:, -1], (d,), norm, 1e-5), head)

    # About 910 tensors a pass at 32 layers (counted on CPU, plus the 8 x 9 weight copies): 9 batches of about 60
    # passes make about 1.0M events.
    with torch.inference_mode():
        for _ in range(_smoke(9, 2)):
            b = _loguniform(rng, 8, _smoke(64, 4))
            new = rng.randint(_smoke(24, 3), _smoke(96, 5))
            lens = [_loguniform(rng, 32, _smoke(1024, 40)) for _ in range(b)]
            while b > 1 and b * (max(lens) + new) > _smoke(48_000, 200):
                b //= 2
                lens = lens[:b]
            width = max(lens)
            keep = torch.arange(width)[None] >= width - torch.tensor(lens)[:, None]
            ids = _upload(torch.randint(0, vocab, (b, width)) * keep)
            keep = _upload(keep)
            pos = (keep.long().cumsum(-1) - 1).clamp(min=0)
            causal = torch.ones(width, width, dtype=torch.bool, device="cuda").tril()
            mask = causal[None, None] & keep[:, None, None] | torch.eye(width, dtype=torch.bool, device="cuda")
            kv = [(torch.zeros(b, kvh, width + new, dh, dtype=bf, device="cuda"),
                   torch.zeros(b, kvh, width + new, dh, dtype=bf, device="cuda")) for _ in range(layers)]
            tok = forward(ids, pos, kv, slice(0, width), slice(0, width), mask).argmax(-1, keepdim=True)
            valid = torch.cat([keep, keep.new_ones(b, new)], 1)
            pos = pos[:, -1:] + 1
            del ids, causal, mask, keep
            for t in range(new - 1):
                tok.cpu()
                col = width + t
                tok = forward(tok, pos, kv, slice(col, col + 1), slice(0, col + 1), valid[:, None, None, : col + 1]).argmax(-1, keepdim=True)
                pos = pos + 1
            tok.cpu()
            del kv, valid, pos, tok
        del pending
    torch.cuda.synchronize()


# ---------------------------------------------------------------- BasicVSR video super-resolution training


def _flow_warp(x, flow, padding="zeros"):
    """mmedit's flow_warp: x (N, C, H, W) sampled at the pixel grid plus flow (N, H, W, 2), bilinear."""
    f = torch.nn.functional
    n, _, h, w = x.shape
    gy, gx = torch.meshgrid(torch.arange(h, device=x.device, dtype=flow.dtype), torch.arange(w, device=x.device, dtype=flow.dtype), indexing="ij")
    grid = torch.stack((gx, gy), 2) + flow
    gx = 2.0 * grid[..., 0] / max(w - 1, 1) - 1.0
    gy = 2.0 * grid[..., 1] / max(h - 1, 1) - 1.0
    return f.grid_sample(x, torch.stack((gx, gy), 3), mode="bilinear", padding_mode=padding, align_corners=True)


class _SpyNet(torch.nn.Module):
    """SPyNet (Ranjan and Black 2017) as BasicVSR uses it: a 6-level pyramid (average pooling), at each level a
    basic module of five 7x7 convolutions (8-32-64-32-16-2) refining the upsampled flow from the reference, the
    warped support frame and the flow; inputs resized to multiples of 32 and the flow resized back."""

    def __init__(self):
        super().__init__()
        nn = torch.nn
        chans = [8, 32, 64, 32, 16, 2]

        def basic():
            mods = []
            for a, b in zip(chans[:-1], chans[1:]):
                mods += [nn.Conv2d(a, b, 7, 1, 3), nn.ReLU()]
            return nn.Sequential(*mods[:-1])

        self.basic = nn.ModuleList(basic() for _ in range(6))
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1))

    def forward(self, ref, supp):
        f = torch.nn.functional
        n, _, h, w = ref.shape
        hu, wu = -(-h // 32) * 32, -(-w // 32) * 32
        refs = [(f.interpolate(ref, (hu, wu), mode="bilinear", align_corners=False) - self.mean) / self.std]
        supps = [(f.interpolate(supp, (hu, wu), mode="bilinear", align_corners=False) - self.mean) / self.std]
        for _ in range(5):
            refs.append(f.avg_pool2d(refs[-1], 2, 2, count_include_pad=False))
            supps.append(f.avg_pool2d(supps[-1], 2, 2, count_include_pad=False))
        refs, supps = refs[::-1], supps[::-1]
        flow = refs[0].new_zeros(n, 2, hu // 32, wu // 32)
        for lvl, net in enumerate(self.basic):
            up = flow if lvl == 0 else f.interpolate(flow, scale_factor=2, mode="bilinear", align_corners=True) * 2.0
            flow = up + net(torch.cat([refs[lvl], _flow_warp(supps[lvl], up.permute(0, 2, 3, 1), "border"), up], 1))
        flow = f.interpolate(flow, (h, w), mode="bilinear", align_corners=False)
        flow[:, 0] *= w / wu
        flow[:, 1] *= h / hu
        return flow


class _ResTrunk(torch.nn.Module):
    """BasicVSR's propagation trunk: a 3x3 convolution from the frame and the warped features to 64 channels,
    LeakyReLU 0.1, then residual blocks without BatchNorm (conv, ReLU, conv, identity + out x 1.0)."""

    def __init__(self, cin, mid, blocks):
        super().__init__()
        nn = torch.nn
        self.head = nn.Conv2d(cin, mid, 3, 1, 1)
        self.blocks = nn.ModuleList(nn.Sequential(nn.Conv2d(mid, mid, 3, 1, 1), nn.ReLU(inplace=True), nn.Conv2d(mid, mid, 3, 1, 1))
                                    for _ in range(blocks))

    def forward(self, x):
        x = torch.nn.functional.leaky_relu(self.head(x), 0.1, inplace=True)
        for blk in self.blocks:
            x = x + blk(x) * 1.0
        return x


class _BasicVsr(torch.nn.Module):
    """BasicVSR (Chan et al. 2021), as mmedit's BasicVSRNet: SPyNet flows between neighbouring frames in both
    directions, a backward then a forward recurrent propagation (features warped by the flow, concatenated with
    the frame, a residual trunk), per frame a 1x1 fusion of both, two pixel-shuffle x2 upsamplings, two 3x3
    convolutions and the bilinear x4 upsampled frame added."""

    def __init__(self, mid=64, blocks=30):
        super().__init__()
        nn = torch.nn
        self.mid = mid
        self.spynet = _SpyNet()
        self.backward_trunk = _ResTrunk(mid + 3, mid, blocks)
        self.forward_trunk = _ResTrunk(mid + 3, mid, blocks)
        self.fusion = nn.Conv2d(mid * 2, mid, 1)
        self.up1, self.up2 = nn.Conv2d(mid, mid * 4, 3, 1, 1), nn.Conv2d(mid, 64 * 4, 3, 1, 1)
        self.conv_hr, self.conv_last = nn.Conv2d(64, 64, 3, 1, 1), nn.Conv2d(64, 3, 3, 1, 1)

    def forward(self, lrs):
        f = torch.nn.functional
        lrelu = lambda x: f.leaky_relu(x, 0.1, inplace=True)  # noqa: E731
        n, t, c, h, w = lrs.shape
        a, b = lrs[:, :-1].reshape(-1, c, h, w), lrs[:, 1:].reshape(-1, c, h, w)
        flows_backward = self.spynet(a, b).view(n, t - 1, 2, h, w)
        flows_forward = self.spynet(b, a).view(n, t - 1, 2, h, w)
        outputs = []
        feat = lrs.new_zeros(n, self.mid, h, w)
        for i in range(t - 1, -1, -1):
            if i < t - 1:
                feat = _flow_warp(feat, flows_backward[:, i].permute(0, 2, 3, 1))
            feat = self.backward_trunk(torch.cat([lrs[:, i], feat], 1))
            outputs.append(feat)
        outputs = outputs[::-1]
        feat = torch.zeros_like(feat)
        for i in range(t):
            if i > 0:
                feat = _flow_warp(feat, flows_forward[:, i - 1].permute(0, 2, 3, 1))
            feat = self.forward_trunk(torch.cat([lrs[:, i], feat], 1))
            out = lrelu(self.fusion(torch.cat([outputs[i], feat], 1)))
            out = lrelu(f.pixel_shuffle(self.up1(out), 2))
            out = lrelu(f.pixel_shuffle(self.up2(out), 2))
            out = self.conv_last(lrelu(self.conv_hr(out)))
            outputs[i] = out + f.interpolate(lrs[:, i], scale_factor=4, mode="bilinear", align_corners=False)
        return torch.stack(outputs, 1)


@_workload("video super-resolution training, BasicVSR x4 as in mmedit's REDS recipe, written by hand (SPyNet flow estimator of 6 levels, random init; bidirectional recurrent propagation with flow warping by grid_sample, two trunks of 30 residual blocks of 64 channels, pixel-shuffle upsampling; 6.3M parameters, random init): clips of 7, 10, 15, 20 or 30 frames and LR patches of 48-128 px each side (multiples of 16, HR x4), the batch sized to at most 8 x 10 frames of 64x64 (1-16 clips), uint8 LR and HR crops from pinned memory with random flips and transposes on the device; Charbonnier loss on the x4 frames, Adam (SPyNet at 1/8 of the rate and frozen for the first 25% of the steps), cosine decay, bf16 autocast, 30 steps; every 10 steps a no_grad validation pass over a whole Vid4-like clip (30-50 frames at 120-144 x 176-180 LR)")
def basicvsr_train(rng):
    model = _BasicVsr(blocks=_smoke(30, 2)).cuda().train()
    steps = _smoke(30, 3)
    spy = list(model.spynet.parameters())
    rest = [p for n, p in model.named_parameters() if not n.startswith("spynet.")]
    opt = torch.optim.Adam([{"params": rest, "lr": 2e-4}, {"params": spy, "lr": 2.5e-5}], betas=(0.9, 0.99))
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps, eta_min=1e-7)
    sides = [s for s in range(_smoke(48, 16), _smoke(128, 32) + 1, 16)]
    big = _smoke(128, 32)
    # Decoded REDS-like frames, drawn once: LR and their HR x4 in pinned memory.
    lr_pool = torch.randint(0, 256, (_smoke(40, 4), 3, big, big), dtype=torch.uint8).pin_memory()
    hr_pool = torch.randint(0, 256, (_smoke(40, 4), 3, 4 * big, 4 * big), dtype=torch.uint8).pin_memory()
    budget = _smoke(8 * 10 * 64 * 64, 2 * 3 * 16 * 16)
    # About 2.9k + 1.06k a frame tensors a training step at 30 blocks (counted on CPU, backward and Adam included:
    # 18.8k at 15 frames) and 300 a validation frame: 30 steps of 16.2 frames on average and 3 validation clips of 40
    # make about 1.25M events.
    for i in range(steps):
        for p in spy:
            p.requires_grad_(i >= steps // 4)
        t = rng.choice((7, 10, 15, 15, 20, 30)) if _smoke(1, 0) else rng.choice((2, 3))
        h, w = rng.choice(sides), rng.choice(sides)
        b = max(1, min(16, budget // (t * h * w)))
        frames = torch.tensor([rng.randrange(lr_pool.shape[0]) for _ in range(b * t)])
        y, x = rng.randrange(big - h + 1), rng.randrange(big - w + 1)
        lr = _upload(lr_pool[frames, :, y: y + h, x: x + w]).view(b, t, 3, h, w)
        hr = _upload(hr_pool[frames, :, 4 * y: 4 * (y + h), 4 * x: 4 * (x + w)]).view(b, t, 3, 4 * h, 4 * w)
        if rng.random() < 0.5:
            lr, hr = lr.flip(-1), hr.flip(-1)
        if rng.random() < 0.5:
            lr, hr = lr.flip(-2), hr.flip(-2)
        if h == w and rng.random() < 0.5:
            lr, hr = lr.transpose(-1, -2), hr.transpose(-1, -2)
        lr, hr = lr.float() / 255, hr.float() / 255
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(lr)
        loss = torch.sqrt((out.float() - hr) ** 2 + 1e-12).mean()
        loss.backward()
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        del lr, hr, out, loss
        if (i + 1) % _smoke(10, 2) == 0:
            model.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                t = rng.randint(_smoke(30, 2), _smoke(50, 3))
                h, w = rng.choice(((144, 180), (144, 176), (120, 180))) if _smoke(1, 0) else (16, 20)
                lr = _upload(torch.randint(0, 256, (1, t, 3, h, w), dtype=torch.uint8)).float() / 255
                gt = _upload(torch.randint(0, 256, (1, t, 3, 4 * h, 4 * w), dtype=torch.uint8)).float() / 255
                out = model(lr).float().clamp(0, 1)
                float(10 * torch.log10(1 / ((out - gt) ** 2).mean((2, 3, 4))).mean())  # PSNR
                del lr, gt, out
            model.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- successive-halving hyperparameter sweep


class _CifarBlock(torch.nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        nn = torch.nn
        self.c1, self.b1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout)
        self.c2, self.b2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout)
        self.short = None
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        f = torch.nn.functional
        out = self.b2(self.c2(f.relu(self.b1(self.c1(x)), inplace=True)))
        return f.relu(out + (x if self.short is None else self.short(x)), inplace=True)


class _CifarResNet(torch.nn.Module):
    """He et al.'s CIFAR ResNet-(6n+2) with a width multiplier k: a 3x3 stem of 16k, three stages of n basic blocks
    (16k, 32k, 64k channels, stride 2 into the last two, 1x1 projection shortcuts), a global pool, a linear head."""

    def __init__(self, n, k, classes=10):
        super().__init__()
        nn = torch.nn
        widths = [16 * k, 32 * k, 64 * k]
        mods = [nn.Conv2d(3, widths[0], 3, 1, 1, bias=False), nn.BatchNorm2d(widths[0]), nn.ReLU(inplace=True)]
        cin = widths[0]
        for s, wd in enumerate(widths):
            for j in range(n):
                mods.append(_CifarBlock(cin, wd, 2 if s and not j else 1))
                cin = wd
        self.body = nn.Sequential(*mods)
        self.head = nn.Linear(cin, classes)

    def forward(self, x):
        return self.head(torch.nn.functional.adaptive_avg_pool2d(self.body(x), 1).flatten(1))


@_workload("hyperparameter search with synchronous successive halving (SHA, reduction factor 3; ASHA's rungs run in order), then evaluation and export of the winner: 27 trials of CIFAR-10 ResNets (depth 6n+2 for n 1-4, width x1, x2 or x4: 16-256 channels), batch 128, 256 or 512, SGD with Nesterov momentum (learning rate 0.02-0.4 and weight decay 5e-5 to 5e-3 log-uniform, label smoothing 0 or 0.1, cosine schedule over the largest budget), bf16 autocast, channels_last; the 60k uint8 images kept on the device (45k train, 5k validation, 10k test), per-sample reflect-pad-4 random crops and flips on the device, a fresh permutation every epoch (its last batch partial); rungs of 16, 48 and 144 more steps: after each a trial is scored on the validation split (chunks of 1000, no_grad), its model and optimizer state copied to the host and the model freed; the best third resumed (rebuilt, state loaded back) in the next rung; the winner then evaluated, its BatchNorms folded into the convolutions (torch.nn.utils.fusion), cast to fp16 and scored on the test split with flip test-time augmentation in chunks of 500")
def asha_sweep_cifar(rng):
    f = torch.nn.functional
    n_train, n_val, n_test = _smoke(45_000, 600), _smoke(5_000, 100), _smoke(10_000, 100)
    images = torch.randint(0, 256, (n_train + n_val + n_test, 32, 32, 3), dtype=torch.uint8, device="cuda")
    labels = torch.randint(0, 10, (n_train + n_val + n_test,), device="cuda")
    mean = torch.tensor([0.4914, 0.4822, 0.4465], device="cuda")[None, :, None, None]
    std = torch.tensor([0.2470, 0.2435, 0.2616], device="cuda")[None, :, None, None]
    ar = torch.arange(32, device="cuda")

    def augment(idx):
        u8 = images[idx]
        b = u8.shape[0]
        x = f.pad(u8.permute(0, 3, 1, 2).float(), (4, 4, 4, 4), mode="reflect")
        dy, dx = torch.randint(0, 9, (b, 1, 1), device="cuda"), torch.randint(0, 9, (b, 1, 1), device="cuda")
        x = x.permute(0, 2, 3, 1)[torch.arange(b, device="cuda")[:, None, None], dy + ar[None, :, None], dx + ar[None, None, :]]
        x = torch.where(torch.rand(b, 1, 1, 1, device="cuda") < 0.5, x.flip(2), x)  # (b, 32, 32, 3)
        return ((x.permute(0, 3, 1, 2) / 255 - mean) / std).contiguous(memory_format=torch.channels_last)

    def plain(lo, hi):
        return ((images[lo:hi].permute(0, 3, 1, 2).float() / 255 - mean) / std).contiguous(memory_format=torch.channels_last)

    rungs = [_smoke(16, 2), _smoke(48, 3), _smoke(144, 4)]
    horizon = sum(rungs)
    trials = []
    for _ in range(_smoke(27, 9)):
        trials.append({"n": rng.randint(1, 4), "k": rng.choice((1, 2, 4)), "batch": rng.choice((128, 256, 512)) if _smoke(1, 0) else 32,
                       "lr": math.exp(rng.uniform(math.log(0.02), math.log(0.4))), "wd": math.exp(rng.uniform(math.log(5e-5), math.log(5e-3))),
                       "smooth": rng.choice((0.0, 0.1)), "step": 0, "perm": None, "at": 0, "ckpt": None})

    def build(tr):
        model = _CifarResNet(tr["n"], tr["k"]).cuda().to(memory_format=torch.channels_last)
        opt = torch.optim.SGD(model.parameters(), lr=tr["lr"], momentum=0.9, nesterov=True, weight_decay=tr["wd"])
        if tr["ckpt"] is not None:
            model.load_state_dict(tr["ckpt"][0])
            opt.load_state_dict(tr["ckpt"][1])
        return model, opt

    def validate(model, lo, hi, chunk):
        model.eval()
        total = 0.0
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            for s in range(lo, hi, chunk):
                e = min(s + chunk, hi)
                total += float(f.cross_entropy(model(plain(s, e)).float(), labels[s:e], reduction="sum"))
        return total / (hi - lo)

    # About 94 + 120 n tensors a training step of ResNet-(6n+2) plus 20 for the crops (counted on CPU, SGD included):
    # 27 x 16 + 9 x 48 + 3 x 144 = 1296 steps of n 2.5 on average make about 1.1M events.
    alive = trials
    for r, budget in enumerate(rungs):
        for tr in alive:
            model, opt = build(tr)
            model.train()
            for _ in range(budget):
                if tr["perm"] is None or tr["at"] >= n_train:
                    tr["perm"], tr["at"] = torch.randperm(n_train, device="cuda"), 0
                idx = tr["perm"][tr["at"]: tr["at"] + tr["batch"]]
                tr["at"] += tr["batch"]
                for g in opt.param_groups:
                    g["lr"] = tr["lr"] * 0.5 * (1 + math.cos(math.pi * tr["step"] / horizon))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = f.cross_entropy(model(augment(idx)), labels[idx], label_smoothing=tr["smooth"])
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
                tr["step"] += 1
                del idx, loss
            tr["score"] = validate(model, n_train, n_train + n_val, 1000)
            state = opt.state_dict()
            state["state"] = {i: {k: v.cpu() for k, v in s.items()} for i, s in state["state"].items()}
            tr["ckpt"] = ({k: v.cpu() for k, v in model.state_dict().items()}, state)
            del model, opt, state
        alive = sorted(alive, key=lambda tr: tr["score"])[: max(1, len(alive) // 3)]
        for tr in trials:
            if tr not in alive:
                tr["ckpt"] = tr["perm"] = None
    best = alive[0]
    model, _ = build(best)
    validate(model, n_train, n_train + n_val, 1000)
    model.eval()
    fuse = torch.nn.utils.fusion.fuse_conv_bn_eval
    body = list(model.body)
    body[0:2] = [fuse(body[0], body[1]), torch.nn.Identity()]
    for blk in body:
        if isinstance(blk, _CifarBlock):
            blk.c1, blk.b1 = fuse(blk.c1, blk.b1), torch.nn.Identity()
            blk.c2, blk.b2 = fuse(blk.c2, blk.b2), torch.nn.Identity()
            if blk.short is not None:
                blk.short = fuse(blk.short[0], blk.short[1])
    model.body = torch.nn.Sequential(*body)
    model = model.half()
    correct = 0
    with torch.inference_mode():
        lo = n_train + n_val
        for s in range(lo, lo + n_test, 500):
            x = plain(s, min(s + 500, lo + n_test)).half()
            logits = model(x).float().softmax(-1) + model(x.flip(3)).float().softmax(-1)
            correct += int((logits.argmax(-1) == labels[s: s + x.shape[0]]).sum())
            del x, logits
    torch.cuda.synchronize()


# ---------------------------------------------------------------- AlphaZero self-play and training

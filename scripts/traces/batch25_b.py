"""The twenty-fifth batch's second half (batch25.py holds the first; written in two to keep files small):
ELECTRA replaced-token-detection pretraining, Switch-style mixture-of-experts generation with capacity buffers
and token dropping, neural radiance caching with a hash-grid encoding trained and queried every frame, and
PSMNet stereo-matching training over a 4-D cost volume. Same conventions and plumbing as batch25.py; record.py
registers this module right after it, so that the batch's workloads keep their order. All four are
single-stream.

Real sizes checked as batch25.py's header says: every workload run whole at its real sizes on the meta device
(every step's shapes: ELECTRA's shared embeddings between a 256-wide generator and a 768-wide discriminator,
the masked positions' gathered (B, k, 30522) logits for rows of 128-512 tokens; the Switch model's (tokens,
experts, capacity) dispatch and combine tensors for prefills of up to 8192 tokens and decode steps of 1-32;
the hash grid's dense and hashed levels for 65536 training records and render queries of up to 2M pixels in
chunks of 2^20; PSMNet's SPP pooling, the (B, 64, 48, H/4, W/4) cost volume and its hourglasses' stride-2
down and transposed-conv up paths for 256-320 x 512-640 crops and the 544 x 960 evaluation), its op outputs
counted there for the event estimates: electra_pretrain 301k op outputs (about 0.6M events; 8.4 GB live
counted in fp32, about 5 GB under bf16 autocast on the GPU); switch_capacity_serve 167k with 20 requests (36
now: about 0.6M); nrc_render 205k with 42 frames a scene (60 now: about 0.59M); psmnet_stereo 310k (0.62M,
about 5 GB in fp32).
"""

import copy
import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- ELECTRA replaced-token-detection pretraining


@_workload("replaced-token-detection pretraining, ELECTRA-base (Clark et al. 2020) as its pretraining recipe runs it: an HF ElectraForMaskedLM generator (hidden 256, 12 layers, 4 heads, FFN 1024, vocab 30522) and an HF ElectraForPreTraining discriminator (hidden 768, 12 layers, 12 heads, FFN 3072), random init, sdpa, sharing one embedding module (768-wide token, position and type embeddings; the generator projects them to 256 and ties its MLM head to them), bf16 autocast; batches of rows of at most 128-512 tokens (drawn per step, multiples of 8; a fifth of the rows shorter, document ends, padded) up to 4096 tokens and 32 rows, 15% of the positions (a fixed count a row, chosen by random scores on the device) masked for the generator's MLM loss, its logits at the masked positions gathered and sampled by Gumbel-max (no grad) into the corrupted input, the discriminator's per-token binary loss (padding excluded) weighted 50; AdamW (lr 2e-4 after 10 warmup steps, linear decay, weight decay 0.01), gradient clipping 1.0, 84 steps, the loss read back every step")
def electra_pretrain(rng):
    from transformers import ElectraConfig, ElectraForMaskedLM, ElectraForPreTraining

    f = torch.nn.functional
    vocab = _smoke(30522, 1000)
    common = dict(vocab_size=vocab, embedding_size=_smoke(768, 64), num_hidden_layers=_smoke(12, 2),
                  max_position_embeddings=512, attn_implementation="sdpa")
    gen = ElectraForMaskedLM(ElectraConfig(hidden_size=_smoke(256, 32), num_attention_heads=4,
                                           intermediate_size=_smoke(1024, 64), **common)).cuda().train()
    disc = ElectraForPreTraining(ElectraConfig(hidden_size=_smoke(768, 64), num_attention_heads=_smoke(12, 4),
                                               intermediate_size=_smoke(3072, 128), **common)).cuda().train()
    disc.electra.embeddings = gen.electra.embeddings  # ELECTRA's shared embeddings
    params = list({id(p): p for m in (gen, disc) for p in m.parameters()}.values())
    decay = [p for p in params if p.dim() >= 2]
    no_decay = [p for p in params if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=2e-4)
    steps, warm = _smoke(84, 3), _smoke(10, 1)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm))))
    cap, mask_id = _smoke(4096, 256), 103
    for step in range(steps):
        t = _b.rec._loguniform(rng, _smoke(128, 16), _smoke(512, 64), 8)
        b = min(32, cap // t)
        lens = [t if rng.random() < 0.8 else rng.randint(t // 4, t) for _ in range(b)]
        ids = torch.randint(1000 % vocab, vocab, (b, t), device="cuda")
        att = torch.zeros(b, t, dtype=torch.long, device="cuda")
        for i, n in enumerate(lens):
            att[i, :n] = 1
        ids = ids * att
        k = max(1, int(0.15 * t))
        idx = (torch.rand(b, t, device="cuda") + att).topk(k, -1).indices  # valid positions first
        picked_ok = att.gather(1, idx).bool()
        masked = ids.scatter(1, idx, torch.full_like(idx, mask_id))
        labels = torch.full_like(ids, -100).scatter(1, idx, torch.where(picked_ok, ids.gather(1, idx), -100))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            g = gen(input_ids=masked, attention_mask=att, labels=labels)
            with torch.no_grad():
                lg = g.logits.detach().gather(1, idx[..., None].expand(-1, -1, vocab)).float()
                u = torch.rand_like(lg).clamp_(1e-9, 1 - 1e-9)
                sampled = (lg - (-u.log()).log()).argmax(-1)
                corrupted = ids.scatter(1, idx, torch.where(picked_ok, sampled, ids.gather(1, idx)))
                rtd = (corrupted != ids).float()
                del lg, u, sampled
            d = disc(input_ids=corrupted, attention_mask=att).logits
            per = f.binary_cross_entropy_with_logits(d.float(), rtd, reduction="none")
            loss_d = (per * att).sum() / att.sum()
            loss = g.loss + 50.0 * loss_d
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        float(loss.detach())
        del ids, att, idx, picked_ok, masked, labels, g, corrupted, rtd, d, per, loss_d, loss
    torch.cuda.synchronize()


# ---------------------------------------------------------------- Switch-style MoE generation with capacity buffers


class _SwitchLayer(torch.nn.Module):
    """A pre-norm decoder layer with a static KV cache; its FFN either dense or a Switch mixture of experts
    (top-1 router, GShard/Mesh-TF dispatch into (experts, capacity, d) buffers, tokens over capacity dropped)."""

    def __init__(self, d, heads, ff, experts):
        super().__init__()
        nn = torch.nn
        self.d, self.h, self.e = d, heads, experts
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.o = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d, bias=False)
        if experts:
            self.router = nn.Linear(d, experts, bias=False)
            self.w1 = nn.Parameter(torch.randn(experts, d, ff) * d ** -0.5)
            self.w2 = nn.Parameter(torch.randn(experts, ff, d) * ff ** -0.5)
        else:
            self.fc1, self.fc2 = nn.Linear(d, ff), nn.Linear(ff, d)

    def _heads(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.h, -1).transpose(1, 2)

    def moe(self, x, cf):
        f = torch.nn.functional
        t, e = x.shape[0], self.e
        cap = max(1, math.ceil(cf * t / e))
        gate, ex = self.router(x).float().softmax(-1).max(-1)
        oh = f.one_hot(ex, e)  # (T, E)
        pos = ((oh.cumsum(0) - 1) * oh).sum(-1)  # each token's place in its expert's buffer
        keep = pos < cap
        slot = f.one_hot(torch.where(keep, pos, cap), cap + 1)[:, :cap].bool()  # dropped tokens: no slot
        dispatch = (oh.bool()[:, :, None] & slot[:, None, :]).to(x.dtype)  # (T, E, C)
        xe = torch.einsum("tec,tm->ecm", dispatch, x)
        ye = torch.bmm(f.gelu(torch.bmm(xe, self.w1)), self.w2)
        return torch.einsum("tec,ecm->tm", dispatch * gate.to(x.dtype)[:, None, None], ye)

    def forward(self, x, kc, vc, t0, mask, cf):
        b, n, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).chunk(3, -1)
        kc[:, :, t0:t0 + n] = self._heads(k)
        vc[:, :, t0:t0 + n] = self._heads(v)
        a = torch.nn.functional.scaled_dot_product_attention(self._heads(q), kc[:, :, :t0 + n], vc[:, :, :t0 + n],
                                                             attn_mask=mask)
        x = x + self.o(a.transpose(1, 2).reshape(b, n, self.d))
        h = self.ln2(x)
        if self.e:
            return x + self.moe(h.reshape(b * n, self.d), cf).view(b, n, self.d)
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(h)))


@_workload("mixture-of-experts generation with expert capacity and token dropping, Switch-Transformer-style (Fedus et al. 2022) as Mesh-TF/GShard dispatch runs it, written by hand: a 12-layer pre-norm decoder (width 768, 12 heads, learned positions, vocab 32000, tied head; random init) whose every other FFN is a Switch layer of 16 experts (FFN 3072, GELU) with a top-1 router, in bf16 under inference_mode with a static KV cache per layer; each MoE layer builds one-hot expert assignments, each token's place in its expert's buffer by a cumulative sum, (tokens, experts, capacity) dispatch and combine tensors, the (16, capacity, 768) expert batches by einsum, two batched matmuls over the stacked expert weights, and the gated combine back, tokens over capacity dropped (their residual passed on); capacity factor 1.25 in the prefill and 2.0 in decoding; 36 requests one after another of 1-32 prompts of 32-1024 tokens (log-uniform, left-padded with a key-padding mask, at most 8192 prompt tokens), a prefill, then 16-64 new tokens (drawn) decoded greedily; the answers read back per request")
def switch_capacity_serve(rng):
    d, nl, heads, vocab = _smoke(768, 64), _smoke(12, 4), _smoke(12, 4), _smoke(32000, 512)
    ff, experts = _smoke(3072, 128), _smoke(16, 4)
    nn = torch.nn
    emb, pos = nn.Embedding(vocab, d).cuda().to(torch.bfloat16), nn.Embedding(2048, d).cuda().to(torch.bfloat16)
    layers = nn.ModuleList(_SwitchLayer(d, heads, ff, experts if i % 2 else 0) for i in range(nl))
    layers = layers.cuda().to(torch.bfloat16).eval()
    norm = nn.LayerNorm(d).cuda().to(torch.bfloat16)
    for _ in range(_smoke(36, 2)):
        b = _loguniform(rng, 1, _smoke(32, 3))
        lens = [_loguniform(rng, _smoke(32, 8), _smoke(1024, 40)) for _ in range(b)]
        while b > 1 and b * max(lens) > _smoke(8192, 96):
            b -= 1
            lens = lens[:b]
        n0, new = max(lens), rng.randint(_smoke(16, 3), _smoke(64, 5))
        total = n0 + new
        with torch.inference_mode():
            ids = torch.randint(0, vocab, (b, n0), device="cuda")
            valid = torch.ones(b, total, dtype=torch.bool, device="cuda")
            for i, n in enumerate(lens):
                valid[i, :n0 - n] = False
            kcs = [torch.zeros(b, heads, total, d // heads, dtype=torch.bfloat16, device="cuda") for _ in range(nl)]
            vcs = [torch.zeros_like(k) for k in kcs]
            causal = torch.ones(n0, n0, dtype=torch.bool, device="cuda").tril()
            eye = torch.eye(n0, dtype=torch.bool, device="cuda")
            mask = ((causal[None] & valid[:, None, :n0]) | eye)[:, None]
            h = emb(ids) + pos(torch.arange(n0, device="cuda"))
            for layer, kc, vc in zip(layers, kcs, vcs):
                h = layer(h, kc, vc, 0, mask, 1.25)
            tok = (norm(h[:, -1:]) @ emb.weight.t()).argmax(-1)
            out = [tok]
            del h, mask, causal, eye, ids
            for t in range(n0, total - 1):
                h = emb(tok) + pos.weight[t][None, None]
                m = valid[:, None, None, :t + 1]
                for layer, kc, vc in zip(layers, kcs, vcs):
                    h = layer(h, kc, vc, t, m, 2.0)
                tok = (norm(h) @ emb.weight.t()).argmax(-1)
                out.append(tok)
                del h, m
            ans = torch.cat(out, 1)
        ans.cpu()
        del kcs, vcs, valid, out, ans, tok
    torch.cuda.synchronize()


# ---------------------------------------------------------------- neural radiance caching (hash grid, online training)


class _HashGrid(torch.nn.Module):
    """Instant-NGP's multiresolution hash encoding in plain PyTorch (one level at a time, as the torch-only
    reimplementations run it): 16 levels from 16 to 2048 cells a side, 2 features an entry, tables of at most
    2^19 entries (dense indexing where a level fits), the 8 corners gathered and trilinearly weighted."""

    def __init__(self, levels=16, feats=2, log2_t=19, base=16, finest=2048):
        super().__init__()
        self.t = 2 ** log2_t
        growth = math.exp((math.log(finest) - math.log(base)) / (levels - 1))
        self.res = [int(base * growth ** lv) for lv in range(levels)]
        self.tables = torch.nn.ParameterList(
            torch.nn.Parameter(torch.empty(min(self.t, (r + 1) ** 3), feats).uniform_(-1e-4, 1e-4)) for r in self.res)
        self.register_buffer("offs", torch.tensor([[i >> 2 & 1, i >> 1 & 1, i & 1] for i in range(8)]))

    def forward(self, x):
        outs = []
        for r, table in zip(self.res, self.tables):
            p = x * r
            p0 = p.floor()
            fr = p - p0
            c = p0.long()[:, None, :] + self.offs  # (N, 8, 3)
            if (r + 1) ** 3 <= self.t:
                c = c.clamp(max=r)
                idx = c[..., 0] + (r + 1) * (c[..., 1] + (r + 1) * c[..., 2])
            else:
                idx = (c[..., 0] ^ (c[..., 1] * 2654435761) ^ (c[..., 2] * 805459861)) & (self.t - 1)
            w = torch.where(self.offs.bool(), fr[:, None, :], 1 - fr[:, None, :]).prod(-1)  # (N, 8)
            outs.append((table[idx] * w[..., None]).sum(1))
        return torch.cat(outs, -1)


class _Nrc(torch.nn.Module):
    """The neural radiance cache (Mueller et al. 2021): position through the hash grid, direction, normal and
    roughness one-blob encoded (4 bins each), diffuse and specular albedo raw, padded to 64; an MLP of 5 hidden
    layers of 64 (ReLU, no biases) to RGB radiance, fp16."""

    def __init__(self, levels=16, log2_t=19, width=64):
        super().__init__()
        nn = torch.nn
        self.grid = _HashGrid(levels, 2, log2_t)
        self.width = width
        layers = [nn.Linear(width, width, bias=False), nn.ReLU()]
        for _ in range(4):
            layers += [nn.Linear(width, width, bias=False), nn.ReLU()]
        self.mlp = nn.Sequential(*layers, nn.Linear(width, 3, bias=False))
        self.register_buffer("centres", (torch.arange(4) + 0.5) / 4)

    def forward(self, x):
        blob = torch.exp(-(x[:, 3:8, None] - self.centres).pow(2) * 8.0).flatten(1)
        enc = torch.cat((self.grid(x[:, :3]), blob, x[:, 8:14]), -1)
        enc = torch.nn.functional.pad(enc, (0, self.width - enc.shape[1]))
        with torch.autocast("cuda", dtype=torch.float16):
            return self.mlp(enc)


@_workload("real-time neural radiance caching, NRC (Mueller et al. 2021) as a path tracer drives it every frame, in plain PyTorch: a multiresolution hash-grid encoding (16 levels of 16-2048 cells, 2^19-entry tables, 8 corners gathered and trilinearly weighted level by level) of the path vertex position plus one-blob encodings of direction, normal and roughness and raw albedos, into a 64-wide MLP of 5 hidden layers (fp16 autocast), random init; per frame (the path tracer's buffers made on the device): a self-training pass (the cache queried without grad at 65536 training-path tails, targets = emitted radiance + throughput x the cache's prediction), 4 training steps of 16384 records with the relative L2 loss, Adam (lr 1e-2, betas 0.9/0.99, eps 1e-15) and an EMA copy of the weights (0.99) updated after each; then the render query of every pixel through the EMA cache in chunks of 2^20 at a dynamic resolution of 50-100% of 1920x1080 (drawn per frame, multiples of 8), radiance times throughput plus emission, tone-mapped to an RGBA8 frame on the device; 2 scenes of 60 frames one after another (cache, optimizer and EMA rebuilt per scene); a 1-in-20 frame read back")
def nrc_render(rng):
    levels, log2_t = _smoke(16, 4), _smoke(19, 10)
    rec, batch, chunk = _smoke(65536, 512), _smoke(16384, 128), _smoke(2 ** 20, 2048)
    for _ in range(2):
        model = _Nrc(levels, log2_t).cuda()
        ema = copy.deepcopy(model)
        for p in ema.parameters():
            p.requires_grad_(False)
        opt = torch.optim.Adam(model.parameters(), lr=1e-2, betas=(0.9, 0.99), eps=1e-15)
        params, eparams = list(model.parameters()), list(ema.parameters())
        for frame in range(_smoke(60, 2)):
            # self-training records from the path tracer: inputs at the vertices and at the paths' tails
            x = torch.rand(rec, 14, device="cuda")
            tails = torch.rand(rec, 14, device="cuda")
            emitted, thru = torch.rand(rec, 3, device="cuda"), torch.rand(rec, 3, device="cuda")
            with torch.no_grad():
                target = emitted + thru * model(tails).float().clamp_min(0)
            del tails
            for i in range(0, rec, batch):
                pred = model(x[i:i + batch]).float()
                loss = ((pred - target[i:i + batch]).pow(2) / (pred.detach().pow(2) + 0.01)).mean()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                with torch.no_grad():
                    torch._foreach_lerp_(eparams, params, 0.01)
                del pred, loss
            del x, emitted, thru, target
            # the render query of every pixel through the EMA cache
            scale = rng.uniform(0.5, 1.0)
            w, h = _smoke(int(1920 * scale) // 8 * 8, 64), _smoke(int(1080 * scale) // 8 * 8, 32)
            frame_rgba = torch.empty(h * w, 4, dtype=torch.uint8, device="cuda")
            with torch.no_grad():
                for i in range(0, h * w, chunk):
                    n = min(chunk, h * w - i)
                    q = torch.rand(n, 14, device="cuda")
                    thru, emit = torch.rand(n, 3, device="cuda"), torch.rand(n, 3, device="cuda")
                    rgb = emit + thru * ema(q).float().clamp_min(0)
                    rgb = (rgb / (1 + rgb)).pow(1 / 2.2)  # Reinhard, gamma
                    frame_rgba[i:i + n, :3] = (rgb * 255).to(torch.uint8)
                    frame_rgba[i:i + n, 3] = 255
                    del q, thru, emit, rgb
            if frame % 20 == 19:
                frame_rgba.cpu()
            del frame_rgba
        del model, ema, opt, params, eparams
    torch.cuda.synchronize()


# ---------------------------------------------------------------- PSMNet stereo matching


def _convbn(i, o, k, s, p, dil=1):
    nn = torch.nn
    return nn.Sequential(nn.Conv2d(i, o, k, s, dil if dil > 1 else p, dilation=dil, bias=False), nn.BatchNorm2d(o))


def _convbn3d(i, o, k, s, p):
    nn = torch.nn
    return nn.Sequential(nn.Conv3d(i, o, k, s, p, bias=False), nn.BatchNorm3d(o))


class _PsmBlock(torch.nn.Module):
    def __init__(self, i, o, s, dil):
        super().__init__()
        self.c1 = torch.nn.Sequential(_convbn(i, o, 3, s, 1, dil), torch.nn.ReLU())
        self.c2 = _convbn(o, o, 3, 1, 1, dil)
        self.down = _convbn(i, o, 1, s, 0) if (s != 1 or i != o) else None

    def forward(self, x):
        return self.c2(self.c1(x)) + (x if self.down is None else self.down(x))


class _PsmFeatures(torch.nn.Module):
    """PSMNet's feature extraction: a 3-conv stem (stride 2), 3+16+3+3 basic blocks (stride 2 at layer2,
    dilation 2 at layer4), SPP branches of 64/32/16/8 average pooling, 320 -> 128 -> 32 channels at 1/4."""

    def __init__(self, blocks=(3, 16, 3, 3), pools=(64, 32, 16, 8)):
        super().__init__()
        nn = torch.nn
        self.stem = nn.Sequential(_convbn(3, 32, 3, 2, 1), nn.ReLU(), _convbn(32, 32, 3, 1, 1), nn.ReLU(),
                                  _convbn(32, 32, 3, 1, 1), nn.ReLU())

        def layer(i, o, n, s, dil):
            return nn.Sequential(_PsmBlock(i, o, s, dil), *(_PsmBlock(o, o, 1, dil) for _ in range(n - 1)))

        self.l1, self.l2 = layer(32, 32, blocks[0], 1, 1), layer(32, 64, blocks[1], 2, 1)
        self.l3, self.l4 = layer(64, 128, blocks[2], 1, 1), layer(128, 128, blocks[3], 1, 2)
        self.pools = pools
        self.branches = nn.ModuleList(nn.Sequential(_convbn(128, 32, 1, 1, 0), nn.ReLU()) for _ in self.pools)
        self.last = nn.Sequential(_convbn(320, 128, 3, 1, 1), nn.ReLU(), nn.Conv2d(128, 32, 1, bias=False))

    def forward(self, x):
        f = torch.nn.functional
        raw = self.l2(self.l1(self.stem(x)))
        skip = self.l4(self.l3(raw))
        size = skip.shape[-2:]
        br = [f.interpolate(b(f.avg_pool2d(skip, k, k)), size, mode="bilinear", align_corners=False)
              for k, b in zip(self.pools, self.branches)]
        return self.last(torch.cat([raw, skip] + br[::-1], 1))


class _Hourglass(torch.nn.Module):
    def __init__(self, c=32):
        super().__init__()
        nn = torch.nn
        self.c1 = nn.Sequential(_convbn3d(c, 2 * c, 3, 2, 1), nn.ReLU())
        self.c2 = _convbn3d(2 * c, 2 * c, 3, 1, 1)
        self.c3 = nn.Sequential(_convbn3d(2 * c, 2 * c, 3, 2, 1), nn.ReLU())
        self.c4 = nn.Sequential(_convbn3d(2 * c, 2 * c, 3, 1, 1), nn.ReLU())
        self.c5 = nn.Sequential(nn.ConvTranspose3d(2 * c, 2 * c, 3, 2, 1, output_padding=1, bias=False),
                                nn.BatchNorm3d(2 * c))
        self.c6 = nn.Sequential(nn.ConvTranspose3d(2 * c, c, 3, 2, 1, output_padding=1, bias=False),
                                nn.BatchNorm3d(c))

    def forward(self, x, presqu, postsqu):
        out = self.c1(x)
        pre = self.c2(out)
        pre = torch.relu(pre + postsqu) if postsqu is not None else torch.relu(pre)
        out = self.c4(self.c3(pre))
        post = torch.relu(self.c5(out) + (presqu if presqu is not None else pre))
        return self.c6(post), pre, post


class _PsmNet(torch.nn.Module):
    """PSMNet stacked hourglass (Chang & Chen 2018), max disparity 192."""

    def __init__(self, maxdisp=192, blocks=(3, 16, 3, 3), pools=(64, 32, 16, 8)):
        super().__init__()
        nn = torch.nn
        self.maxdisp = maxdisp
        self.feat = _PsmFeatures(blocks, pools)
        self.dres0 = nn.Sequential(_convbn3d(64, 32, 3, 1, 1), nn.ReLU(), _convbn3d(32, 32, 3, 1, 1), nn.ReLU())
        self.dres1 = nn.Sequential(_convbn3d(32, 32, 3, 1, 1), nn.ReLU(), _convbn3d(32, 32, 3, 1, 1))
        self.hg = nn.ModuleList(_Hourglass(32) for _ in range(3))
        self.cls = nn.ModuleList(nn.Sequential(_convbn3d(32, 32, 3, 1, 1), nn.ReLU(),
                                               nn.Conv3d(32, 1, 3, 1, 1, bias=False)) for _ in range(3))
        self.register_buffer("disp", torch.arange(maxdisp, dtype=torch.float32)[None, :, None, None])

    def regress(self, cost, size):
        f = torch.nn.functional
        cost = f.interpolate(cost, (self.maxdisp,) + tuple(size), mode="trilinear", align_corners=False)[:, 0]
        return (f.softmax(cost, 1) * self.disp).sum(1)

    def forward(self, left, right):
        ref, tgt = self.feat(left), self.feat(right)
        b, c, h, w = ref.shape
        d4 = self.maxdisp // 4
        cost = ref.new_zeros(b, 2 * c, d4, h, w)
        for i in range(d4):
            if i > 0:
                cost[:, :c, i, :, i:] = ref[:, :, :, i:]
                cost[:, c:, i, :, i:] = tgt[:, :, :, :-i]
            else:
                cost[:, :c, i] = ref
                cost[:, c:, i] = tgt
        cost0 = self.dres0(cost)
        cost0 = self.dres1(cost0) + cost0
        out1, pre1, post1 = self.hg[0](cost0, None, None)
        out1 = out1 + cost0
        out2, _, post2 = self.hg[1](out1, pre1, post1)
        out2 = out2 + cost0
        out3, _, _ = self.hg[2](out2, pre1, post2)
        out3 = out3 + cost0
        c1 = self.cls[0](out1)
        c2 = self.cls[1](out2) + c1
        c3 = self.cls[2](out3) + c2
        size = left.shape[-2:]
        if self.training:
            return self.regress(c1, size), self.regress(c2, size), self.regress(c3, size)
        return self.regress(c3, size)


@_workload("stereo matching training, PSMNet (Chang & Chen 2018) as its SceneFlow recipe trains it, written by hand (random init, fp32): a shared feature extractor (3-conv stem, 3+16+3+3 residual blocks with dilation in the last, spatial pyramid pooling of 64/32/16/8, 32 channels at 1/4 resolution) run on the left and right images, a 4-D concatenation cost volume (batch x 64 x 48 disparities x H/4 x W/4) filled by 48 shifted slice copies, 2 3-D conv stems and 3 stacked 3-D hourglasses (stride-2 Conv3d down, transposed Conv3d up, BatchNorm3d) with 3 classifiers, each cost upsampled trilinearly to 192 disparities at full resolution, softmax and soft-argmin disparity regression; random crops of 256-320 x 512-640 px (multiples of 32, drawn) made on the device, batch 2 at 256 x 512 and 1 at larger crops, ground-truth disparities 0-250 px, smooth L1 over pixels below 192 (a mask, no indexing) weighted 0.5/0.7/1.0; Adam (lr 1e-3, betas 0.9/0.999), 100 steps, the loss read back every step; every 25 steps an evaluation (no_grad, eval mode) of one 544 x 960 pair and its end-point error")
def psmnet_stereo(rng):
    f = torch.nn.functional
    maxdisp = _smoke(192, 32)
    blocks, pools = _smoke((3, 16, 3, 3), (1, 1, 1, 1)), _smoke((64, 32, 16, 8), (32, 16, 8, 4))
    model = _PsmNet(maxdisp, blocks, pools).cuda().train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999))
    sc = _smoke(1, 2)  # smoke: crops halved
    for step in range(_smoke(100, 3)):
        hh, ww = rng.choice((256, 288, 320)) // sc, rng.choice((512, 576, 640)) // sc
        b = 2 if hh * ww <= 256 * 512 // (sc * sc) else 1
        left, right = torch.rand(b, 3, hh, ww, device="cuda"), torch.rand(b, 3, hh, ww, device="cuda")
        gt = torch.rand(b, hh, ww, device="cuda") * (250.0 * maxdisp / 192)
        valid = (gt < maxdisp).float()
        outs = model(left, right)
        loss = sum(wt * (f.smooth_l1_loss(o, gt, reduction="none") * valid).sum() / valid.sum().clamp_min(1)
                   for wt, o in zip((0.5, 0.7, 1.0), outs))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        float(loss.detach())
        del left, right, gt, valid, outs, loss
        if step % _smoke(25, 2) == _smoke(24, 1):
            model.eval()
            with torch.no_grad():
                hh, ww = 544 // sc, 960 // sc
                left, right = torch.rand(1, 3, hh, ww, device="cuda"), torch.rand(1, 3, hh, ww, device="cuda")
                gt = torch.rand(1, hh, ww, device="cuda") * (250.0 * maxdisp / 192)
                pred = model(left, right)
                valid = (gt < maxdisp).float()
                float(((pred - gt).abs() * valid).sum() / valid.sum().clamp_min(1))
                del left, right, gt, pred, valid
            model.train()
    torch.cuda.synchronize()

"""The twenty-first batch's second half (batch21.py holds the first; split only to keep files small): Shampoo LM
training, SAM 2-style video object tracking, a temporal graph network and neural style transfer by L-BFGS. Same
conventions and plumbing as batch21.py; record.py registers this module right after it, so that the batch's
workloads keep their order.
"""

import collections
import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

# ---------------------------------------------------------------- Shampoo


def _newton_inv_root(a, root=4, eps=1e-12, tol=1e-5, max_iter=40):
    """(a + eps I)^(-1/root) by Distributed Shampoo's coupled Newton iteration (its CoupledNewtonConfig), the error
    read back every iteration."""
    eye = torch.eye(a.shape[0], device=a.device)
    a = a + eps * eye
    alpha = -1.0 / root
    z = (root + 1) / (2 * torch.linalg.norm(a))
    x, m = z.pow(-alpha) * eye, z * a
    for _ in range(max_iter):
        if float(torch.dist(m, eye, p=float("inf"))) <= tol:
            break
        mp = m.mul(alpha).add_(eye, alpha=1 - alpha)
        x = x @ mp
        m = torch.linalg.matrix_power(mp, root) @ m
    return x


class _Shampoo:
    """Distributed Shampoo (Shi et al. 2023) for 2-D weights on one GPU: each weight cut into blocks of at most
    block x block, per block the factor matrices L = EMA(G G^T) and R = EMA(G^T G) updated every step and their
    inverse 4th roots recomputed every `freq` steps from step `start`; the preconditioned block L^-1/4 G R^-1/4
    grafted to Adam's step norm (Adam alone before `start`), momentum 0.9, decoupled weight decay."""

    def __init__(self, params, lr, block, wd=0.01, start=40, freq=20, betas=(0.9, 0.999)):
        self.lr, self.wd, self.start, self.freq, self.betas, self.t, self.blocks = lr, wd, start, freq, betas, 0, []
        for p in params:
            for r in range(0, p.shape[0], block):
                for c in range(0, p.shape[1], block):
                    sl = (slice(r, r + block), slice(c, c + block))
                    m, n = p[sl].shape
                    st = {"L": torch.zeros(m, m, device=p.device), "R": torch.zeros(n, n, device=p.device),
                          "Li": None, "Ri": None, "v": torch.zeros(m, n, device=p.device),
                          "mom": torch.zeros(m, n, device=p.device)}
                    self.blocks.append((p, sl, st))

    @torch.no_grad()
    def step(self):
        self.t += 1
        b1, b2 = self.betas
        if self.t >= self.start and (self.t - self.start) % self.freq == 0:
            for _, _, st in self.blocks:
                st["Li"], st["Ri"] = _newton_inv_root(st["L"]), _newton_inv_root(st["R"])
        for p, sl, st in self.blocks:
            g = p.grad[sl].float()
            st["L"].mul_(b2).add_(g @ g.T, alpha=1 - b2)
            st["R"].mul_(b2).add_(g.T @ g, alpha=1 - b2)
            st["v"].mul_(b2).addcmul_(g, g, value=1 - b2)
            d = g / (st["v"] / (1 - b2 ** self.t)).sqrt().add_(1e-8)
            if st["Li"] is not None:
                pre = st["Li"] @ g @ st["Ri"]
                d = pre * (d.norm() / pre.norm().clamp_min(1e-16))
            st["mom"].mul_(b1).add_(d)
            p[sl].mul_(1 - self.lr * self.wd).add_(st["mom"], alpha=-self.lr)
            del g, d


@_workload("LM training with a second-order optimizer, Distributed Shampoo (Shi et al. 2023) on one GPU, written by hand: an HF GPT2LMHeadModel (6 layers, width 768, 12 heads, vocab 32000, 1024 positions, tied head, random init), bf16 autocast; its 24 2-D block weights (c_attn, attn c_proj, c_fc, mlp c_proj) cut into 60 blocks of at most 1024 x 1024, per block fp32 factor matrices L = EMA(G G^T) and R = EMA(G^T G) (beta2 0.999) updated every step, their inverse 4th roots by the coupled Newton iteration (eps 1e-12, tolerance 1e-5 on the max-norm error, at most 40 iterations, the error read back every iteration) every 20 steps from step 40, the preconditioned gradient grafted to Adam's step norm (Adam alone before), momentum 0.9, decoupled weight decay 0.01; embeddings, LayerNorms and biases by AdamW; sequences of 256, 512 or 1024 tokens (drawn per step), 8192 tokens a step, gradient clipping 1.0, 160 steps with linear warmup and cosine decay; every 80 steps a no_grad evaluation of 4 batches of 8 x 1024 (loss read back)")
def shampoo_train(rng):
    from transformers import GPT2Config, GPT2LMHeadModel

    d = _smoke(768, 64)
    cfg = GPT2Config(n_layer=6, n_embd=d, n_head=12 if d % 12 == 0 else 4, vocab_size=32000, n_positions=1024,
                     bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(cfg).cuda().train()
    mats = [p for n, p in model.named_parameters() if p.ndim == 2 and "wte" not in n and "wpe" not in n]
    others = [p for n, p in model.named_parameters() if not (p.ndim == 2 and "wte" not in n and "wpe" not in n)]
    steps, lr = _smoke(160, 4), 3e-4
    shampoo = _Shampoo(mats, lr, _smoke(1024, 86), start=_smoke(40, 1), freq=_smoke(20, 2))
    adamw = torch.optim.AdamW(others, lr=lr, weight_decay=0.01)
    tokens, warm = _smoke(8192, 256), _smoke(14, 1)

    def loss_of(ids):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return model(input_ids=ids, labels=ids).loss

    # About 1.3k tensors a step (counted on CPU at 6 layers and 60 blocks, the blocks' updates, AdamW and clipping
    # included) and 9 + 6.5 an iteration for each of the 120 roots (16-18 iterations for 256-1024-wide factors built
    # like these, counted on CPU at full size with eps 1e-12): 160 steps and 7 recomputations of about 14k make about
    # 0.31M tensors, 0.62M events.
    for step in range(steps):
        scale = min(1.0, (step + 1) / warm) * 0.5 * (1 + math.cos(math.pi * step / steps))
        shampoo.lr = adamw.param_groups[0]["lr"] = lr * scale
        n = rng.choice((256, 512, 1024)) if not _smoke(0, 1) else 64
        ids = torch.randint(0, cfg.vocab_size, (tokens // n, n), device="cuda")
        loss = loss_of(ids)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        shampoo.step()
        adamw.step()
        model.zero_grad(set_to_none=True)
        del ids, loss
        if (step + 1) % _smoke(80, 2) == 0:
            with torch.no_grad():
                sum(float(loss_of(torch.randint(0, cfg.vocab_size, (8, _smoke(1024, 64)), device="cuda")))
                    for _ in range(4))
    torch.cuda.synchronize()


# ---------------------------------------------------------------- SAM 2-style video object tracking


def _mlp(*dims):
    layers = []
    for a, b in zip(dims[:-1], dims[1:]):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers[:-1])


class _S2Attn(torch.nn.Module):
    """SAM's attention: queries, keys and values projected to `inner` (keys and values from kv_dim), heads split for
    SDPA, projected back."""

    def __init__(self, d, heads, kv_dim=None, inner=None):
        super().__init__()
        nn, inner, kv_dim = torch.nn, inner or d, kv_dim or d
        self.q, self.k, self.v, self.o = nn.Linear(d, inner), nn.Linear(kv_dim, inner), nn.Linear(kv_dim, inner), \
            nn.Linear(inner, d)
        self.heads = heads

    def forward(self, q, k, v):
        return self.o(_b.rec._mha(self.q(q), self.k(k), self.v(v), self.heads))


class _S2Encoder(torch.nn.Module):
    """A plain ViT standing in for SAM 2's Hiera (patch 16, absolute positions, pre-norm blocks, MLP 4x) with SAM 2's
    FPN-neck outputs: stride-16 features projected to d, stride-4 and stride-8 ones (d/8 and d/4 channels) by
    transposed convs."""

    def __init__(self, width, depth, heads, d, grid):
        super().__init__()
        nn = torch.nn
        self.patch, self.pos = nn.Conv2d(3, width, 16, 16), nn.Parameter(torch.zeros(1, grid * grid, width))
        self.heads, w = heads, width
        self.blocks = nn.ModuleList(nn.ModuleList([nn.LayerNorm(w), nn.Linear(w, 3 * w), nn.Linear(w, w),
                                                   nn.LayerNorm(w), _mlp(w, 4 * w, w)]) for _ in range(depth))
        self.neck, self.s1, self.s0 = nn.Conv2d(width, d, 1), nn.ConvTranspose2d(width, d // 4, 2, 2), \
            nn.ConvTranspose2d(width, d // 8, 4, 4)

    def forward(self, x):
        x = self.patch(x)
        g = x.shape[-1]
        t = x.flatten(2).transpose(1, 2) + self.pos
        for n1, qkv, proj, n2, mlp in self.blocks:
            t = t + proj(_b.rec._mha(*qkv(n1(t)).chunk(3, -1), self.heads))
            t = t + mlp(n2(t))
        fmap = t.transpose(1, 2).reshape(1, -1, g, g)
        return self.neck(fmap), self.s0(fmap), self.s1(fmap)


class _S2Decoder(torch.nn.Module):
    """SAM's mask decoder with SAM 2's additions: an object-score token, high-resolution skips in the upscaling, a
    two-way transformer of 2 blocks (8 heads, MLP 2048, cross attention at half width), 4 mask tokens with
    hypernetwork MLPs, an IoU head and an object-score head."""

    def __init__(self, d):
        super().__init__()
        nn = torch.nn
        self.tokens = nn.Parameter(torch.randn(6, d))  # object score, IoU, 4 masks
        self.blocks = nn.ModuleList(nn.ModuleList([_S2Attn(d, 8), _S2Attn(d, 8, inner=d // 2), _mlp(d, 2048, d),
                                                   _S2Attn(d, 8, inner=d // 2)] + [nn.LayerNorm(d) for _ in range(4)])
                                    for _ in range(2))
        self.final, self.norm = _S2Attn(d, 8, inner=d // 2), nn.LayerNorm(d)
        self.up1, self.up_n, self.up2 = nn.ConvTranspose2d(d, d // 4, 2, 2), nn.GroupNorm(1, d // 4), \
            nn.ConvTranspose2d(d // 4, d // 8, 2, 2)
        self.hyper = nn.ModuleList(_mlp(d, d, d, d // 8) for _ in range(4))
        self.iou, self.obj = _mlp(d, d, d, 4), _mlp(d, d, d, 1)

    def forward(self, img, img_pe, sparse, dense, s0, s1):
        n, d, g = img.shape[0], img.shape[1], img.shape[2]
        tok = torch.cat([self.tokens.expand(n, -1, -1), sparse], 1)
        src = (img + dense).flatten(2).transpose(1, 2)
        pe = img_pe.flatten(2).transpose(1, 2)
        h = tok
        for sa, t2i, mlp, i2t, n1, n2, n3, n4 in self.blocks:
            h = n1(h + sa(h + tok, h + tok, h))
            h = n2(h + t2i(h + tok, src + pe, src))
            h = n3(h + mlp(h))
            src = n4(src + i2t(src + pe, h + tok, h))
        h = self.norm(h + self.final(h + tok, src + pe, src))
        up = torch.nn.functional.gelu(self.up_n(self.up1(src.transpose(1, 2).reshape(n, d, g, g)) + s1))
        up = torch.nn.functional.gelu(self.up2(up) + s0)
        hyper = torch.stack([mlp(h[:, 2 + i]) for i, mlp in enumerate(self.hyper)], 1)
        masks = (hyper @ up.flatten(2)).view(n, 4, up.shape[-2], up.shape[-1])
        return masks, self.iou(h[:, 1]), h[:, 2], self.obj(h[:, 0])


class _S2MemLayer(torch.nn.Module):
    """SAM 2's memory-attention layer: self-attention, cross-attention to the memory (64-wide keys and values, one
    head), MLP 2048, pre-norm (its rotary encodings left out)."""

    def __init__(self, d, mem):
        super().__init__()
        nn = torch.nn
        self.sa, self.ca, self.mlp = _S2Attn(d, 1), _S2Attn(d, 1, kv_dim=mem), _mlp(d, 2048, d)
        self.n1, self.n2, self.n3 = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)

    def forward(self, x, pos, memory, memory_pos):
        h = self.n1(x)
        x = x + self.sa(h, h, h)
        x = x + self.ca(self.n2(x) + pos, memory + memory_pos, memory)
        return x + self.mlp(self.n3(x))


class _S2MemEncoder(torch.nn.Module):
    """SAM 2's memory encoder: the mask downsampled 16x by 4 stride-2 convs (LayerNorm, GELU), added to the projected
    frame features, 2 ConvNeXt blocks (7x7 depthwise), projected to the memory width."""

    def __init__(self, d, mem):
        super().__init__()
        nn, ch = torch.nn, (1, 4, 16, 64, d)
        self.down = nn.Sequential(*[m for i in range(4) for m in (nn.Conv2d(ch[i], ch[i + 1], 3, 2, 1),
                                                                    nn.GroupNorm(1, ch[i + 1]), nn.GELU())],
                                  nn.Conv2d(d, d, 1))
        self.pix = nn.Conv2d(d, d, 1)
        self.cx = nn.ModuleList(nn.ModuleList([nn.Conv2d(d, d, 7, padding=3, groups=d), nn.LayerNorm(d),
                                               _mlp(d, 4 * d, d)]) for _ in range(2))
        self.out = nn.Conv2d(d, mem, 1)

    def forward(self, pix, mask):
        x = self.pix(pix) + self.down(mask)
        for dw, norm, mlp in self.cx:
            x = x + mlp(norm(dw(x).permute(0, 2, 3, 1))).permute(0, 3, 1, 2)
        return self.out(x)


@_workload("video object segmentation and tracking (inference), SAM 2-style (Ravi et al. 2024) with a frame-prefetch stream (two CUDA streams), written by hand (random weights, bf16 autocast under inference_mode): a ViT image encoder standing in for Hiera (1024 px, patch 16: 4096 tokens, 12 blocks of width 384, 6 heads) with FPN-like outputs (256 channels at stride 16, 64 at 8, 32 at 4), SAM 2's memory attention (4 layers: self-attention, one-head cross-attention to the memory bank with 64-wide keys and values, MLP 2048), SAM's prompt encoder (random Fourier positions) and two-way mask decoder (2 blocks, 4 mask tokens, IoU and object-score heads, high-resolution skips), SAM 2's memory encoder (the 1024 px mask logits' sigmoid downsampled 16x by convs, fused with the frame features by 2 ConvNeXt blocks, projected to 64) and object pointers (an MLP of the output token, 4 tokens of 64 each); 12 videos one after another of 40-100 frames (uniform) at 480p, 720p or 1080p with 1-6 objects (uniform) clicked with 1-3 points each on the first frame (multimask output, the best of 3 by predicted IoU); the objects tracked as one batch, each frame attending to a memory bank of the conditioning frame plus the 6 most recent frames (4096 tokens each, temporal position embeddings; rebuilt by concatenation every frame, so growing for 6 frames and then rolling) and up to 15 object pointers; each next frame's uint8 pixels made, resized to 1024 and normalized on the prefetch stream (an event waited on, record_stream), the masks upsampled to the video's size, thresholded and copied back every frame")
def sam2_video_track(rng):
    f = torch.nn.functional
    res, d, mem, width = _smoke(1024, 128), _smoke(256, 32), _smoke(64, 16), _smoke(384, 48)
    grid = res // 16
    nn = torch.nn
    enc, dec, menc = _S2Encoder(width, 12, 6, d, grid), _S2Decoder(d), _S2MemEncoder(d, mem)
    mattn, mnorm = nn.ModuleList(_S2MemLayer(d, mem) for _ in range(4)), nn.LayerNorm(d)
    ptr_mlp, ptr_tpos = _mlp(d, d, d, d), nn.Linear(d, mem)
    shapes = {"tpos": (7, 1, mem), "no_mem": (1, 1, d), "no_ptr": (1, d), "labels": (3, d), "no_mask": (1, d, 1, 1),
              "gauss": (2, d // 2)}  # temporal positions, no-memory, no-object, point labels, no-mask, Fourier matrix
    extra = nn.ParameterDict({k: nn.Parameter(torch.randn(*v)) for k, v in shapes.items()})
    for m in (enc, dec, menc, mattn, mnorm, ptr_mlp, ptr_tpos, extra):
        m.cuda().eval()
    sincos = _b.rec._sincos
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda")[None, :, None, None]
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda")[None, :, None, None]
    prep, main = torch.cuda.Stream(), torch.cuda.current_stream()
    sizes = ((480, 854), (720, 1280), (1080, 1920)) if not _smoke(0, 1) else ((48, 80), (72, 128))

    def fourier(xy):
        """SAM's PositionEmbeddingRandom of points in [0, 1]^2 (..., 2): (..., d)."""
        a = 2 * math.pi * (2 * xy - 1) @ extra["gauss"]
        return torch.cat([a.sin(), a.cos()], -1)

    def prefetch(h, w):
        prep.wait_stream(main)
        with torch.cuda.stream(prep):
            u8 = torch.randint(0, 256, (h, w, 3), dtype=torch.uint8, device="cuda")
            x = f.interpolate(u8.permute(2, 0, 1)[None].float() / 255, size=(res, res), mode="bilinear")
            x = (x - mean) / std
            return x, prep.record_event()

    with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
        ar = (torch.arange(grid, device="cuda").float() + 0.5) / grid
        cell = torch.stack(torch.meshgrid(ar, ar, indexing="xy"), -1)  # (grid, grid, 2) as (x, y)
        img_pe = fourier(cell).permute(2, 0, 1)[None]
        yx = cell.flatten(0, 1) * grid
        pix_pos = torch.cat([sincos(yx[:, 1], d // 2), sincos(yx[:, 0], d // 2)], -1)[None]
        mem_pos = torch.cat([sincos(yx[:, 1], mem // 2), sincos(yx[:, 0], mem // 2)], -1)[None]
        # About 400 tensors a frame (counted on CPU over videos of 20 frames, the encoder, memory attention, decoder,
        # memory encoder, bank and prefetch included): 12 videos of 70 frames on average make about 0.33M tensors,
        # 0.67M events.
        for _ in range(_smoke(12, 2)):
            h, w = rng.choice(sizes)
            frames, n = rng.randint(_smoke(40, 8), _smoke(100, 10)), rng.randint(1, 6)
            clicks = [rng.randint(1, 3) for _ in range(n)]
            pts = torch.rand(n, 3, 2, device="cuda")
            lab = torch.tensor([[1 if j < c else -1 for j in range(3)] for c in clicks], device="cuda")
            cond, recent, ptrs = None, collections.deque(maxlen=6), collections.deque(maxlen=15)
            nxt = prefetch(h, w)
            for t in range(frames):
                x, ready = nxt
                main.wait_event(ready)
                x.record_stream(main)
                if t + 1 < frames:
                    nxt = prefetch(h, w)
                pix, s0, s1 = enc(x)
                cur = pix.flatten(2).transpose(1, 2)
                if t == 0:
                    cur = (cur + extra["no_mem"]).expand(n, -1, -1)
                    emb = torch.where(lab[..., None] >= 0, fourier(pts) + extra["labels"][lab.clamp(min=0)],
                                      extra["labels"][2].expand(n, 3, -1))
                    sparse = torch.cat([emb, extra["labels"][2].expand(n, 1, -1)], 1)
                else:
                    bank = [cond] + list(recent)[::-1]
                    memory = torch.cat(bank + [torch.stack(list(ptrs), 1).flatten(1, 2).unflatten(1, (-1, mem))], 1)
                    tp = [extra["tpos"][6 - j] + mem_pos for j in range(len(bank))]
                    dist = torch.arange(1, len(ptrs) + 1, device="cuda").float() / 15
                    tp.append(ptr_tpos(sincos(dist, d)).repeat_interleave(d // mem, 0)[None])
                    memory_pos = torch.cat([p.expand(1, -1, -1) for p in tp], 1)
                    q = cur.expand(n, -1, -1) + 0.1 * pix_pos
                    for layer in mattn:
                        q = layer(q, pix_pos, memory, memory_pos)
                    cur = mnorm(q)
                    sparse = extra["labels"][2].expand(n, 1, -1)
                    del bank, memory, memory_pos, tp, q
                img = cur.transpose(1, 2).reshape(n, d, grid, grid)
                masks, iou, tok, obj = dec(img, img_pe, sparse, extra["no_mask"], s0, s1)
                if t == 0:
                    low = masks[torch.arange(n, device="cuda"), iou[:, 1:].argmax(-1) + 1][:, None]
                else:
                    low = masks[:, :1]
                present = (obj > 0).to(tok.dtype)
                ptrs.append((present * ptr_mlp(tok) + (1 - present) * extra["no_ptr"]).to(torch.bfloat16))
                high = f.interpolate(low.float(), size=(res, res), mode="bilinear")
                entry = menc(pix.expand(n, -1, -1, -1), torch.sigmoid(high) * 20 - 10).flatten(2).transpose(1, 2)
                if t == 0:
                    cond = entry
                else:
                    recent.append(entry)
                (f.interpolate(low.float(), size=(h, w), mode="bilinear") > 0).cpu()
                del x, pix, s0, s1, cur, img, masks, iou, tok, obj, low, high, entry
    torch.cuda.synchronize()


# ---------------------------------------------------------------- temporal graph network


@_workload("temporal graph learning, TGN (Rossi et al. 2020) as in PyG's TGN example, written by hand: a JODIE-Wikipedia-sized bipartite event stream made on the device (8227 users, 1000 pages, 157k timestamped edits with 172 features, power-law activity and popularity), split 70/15/15 in time; node memory of 100 (a GRUCell over the last pending message per node: both memories, the edge features and a cosine time encoding of 100), the 10 most recent neighbours per node in on-device ring buffers, embeddings by one TransformerConv-style graph attention layer (2 heads of 50, edge features and encoded time gaps as edge attributes, softmax per node by scatter_reduce amax and index_add_, dropout 0.1, a root weight), a link predictor MLP; batches of 200 events in time order with one random negative destination each, the batch's nodes and their neighbours deduplicated by torch.unique (sizes vary batch to batch), BCE loss, Adam (lr 1e-4), fp32; after each batch the memory written back, the pending messages replaced by each node's last event in the batch (scatter_reduce amax over event order) and the events inserted into the neighbour buffers; 2 epochs (memory and buffers reset), each followed by a validation pass, then a test pass (no_grad, memory updated as they go, average precision computed on the device and read back per pass)")
def tgn_temporal(rng):
    f, nn = torch.nn.functional, torch.nn
    users, items = _smoke(8227, 200), _smoke(1000, 50)
    n_nodes, n_ev, fd, md, nk, heads = users + items, _smoke(157_474, 2400), 172, 100, 10, 2
    src = (torch.rand(n_ev, device="cuda").pow(3) * users).long()
    dst = users + (torch.rand(n_ev, device="cuda").pow(2) * items).long()
    ts = torch.sort(torch.rand(n_ev, device="cuda") * 2.6e6).values
    efeat = torch.randn(n_ev, fd, device="cuda")
    time_w, gru = nn.Linear(1, md).cuda(), nn.GRUCell(3 * md + fd, md).cuda()
    lin = nn.ModuleDict({"q": nn.Linear(md, md), "k": nn.Linear(md, md), "v": nn.Linear(md, md),
                         "e": nn.Linear(md + fd, md, bias=False), "skip": nn.Linear(md, md),
                         "src": nn.Linear(md, md), "dst": nn.Linear(md, md), "out": nn.Linear(md, 1)}).cuda()
    params = list(time_w.parameters()) + list(gru.parameters()) + list(lin.parameters())
    opt = torch.optim.Adam(params, lr=1e-4)
    state = {}

    def reset():
        z = (lambda *shape, dt=torch.long: torch.zeros(*shape, dtype=dt, device="cuda"))
        state.update(mem=z(n_nodes, md, dt=torch.float32), last=z(n_nodes, dt=torch.float32), other=z(n_nodes),
                     mt=z(n_nodes, dt=torch.float32), me=z(n_nodes), has=z(n_nodes, dt=torch.bool),
                     nbr=z(n_nodes, nk), nbr_e=z(n_nodes, nk), nbr_t=z(n_nodes, nk, dt=torch.float32),
                     nbr_ok=z(n_nodes, nk, dt=torch.bool), cnt=z(n_nodes))

    def tenc(dt):
        return torch.cos(time_w(dt[:, None]))

    def memory_of(ids):
        """The memory of ids with each one's pending message applied by the GRU, and their last-update times."""
        s = state
        m, todo = s["mem"][ids], s["has"][ids].nonzero()[:, 0]
        node = ids[todo]
        if node.shape[0] == 0:  # nothing pending (the first batch after a reset)
            return m, s["last"][ids]
        msg = torch.cat([s["mem"][node], s["mem"][s["other"][node]], efeat[s["me"][node]],
                         tenc(s["mt"][node] - s["last"][node])], 1)
        return m.index_put((todo,), gru(msg, s["mem"][node])), s["last"][ids].index_put((todo,), s["mt"][node])

    def embed(ids):
        s, n = state, ids.shape[0]
        rows, cols = s["nbr_ok"][ids].nonzero(as_tuple=True)
        nb = s["nbr"][ids][rows, cols]
        all_ids, inv = torch.unique(torch.cat([ids, nb]), return_inverse=True)
        m, lu = memory_of(all_ids)
        centre, nbp = inv[:n], inv[n:]
        gap = lu[nbp] - s["nbr_t"][ids][rows, cols]
        eattr = lin["e"](torch.cat([tenc(gap), efeat[s["nbr_e"][ids][rows, cols]]], 1))
        q = lin["q"](m[centre])[rows].view(-1, heads, md // heads)
        k = (lin["k"](m[nbp]) + eattr).view(-1, heads, md // heads)
        v = (lin["v"](m[nbp]) + eattr).view(-1, heads, md // heads)
        a = (q * k).sum(-1) / math.sqrt(md // heads)
        top = torch.full((n, heads), -1e9, device="cuda").scatter_reduce(0, rows[:, None].expand(-1, heads),
                                                                          a.detach(), "amax")
        a = (a - top[rows]).exp()
        a = f.dropout(a / torch.zeros(n, heads, device="cuda").index_add(0, rows, a)[rows], 0.1, lin.training)
        out = torch.zeros(n, heads, md // heads, device="cuda").index_add(0, rows, a[..., None] * v).flatten(1)
        return out + lin["skip"](m[centre]), all_ids, m, lu

    def score(zs, zd):
        return lin["out"](torch.relu(lin["src"](zs) + lin["dst"](zd)))[:, 0]

    @torch.no_grad()
    def update(all_ids, m, lu, s_, d_, t, e):
        s, b = state, s_.shape[0]
        s["mem"][all_ids], s["last"][all_ids], s["has"][all_ids] = m.detach(), lu, False
        nodes, other = torch.cat([s_, d_]), torch.cat([d_, s_])
        order = torch.arange(2 * b, device="cuda") % b
        last = torch.full((n_nodes,), -1, device="cuda").scatter_reduce_(0, nodes, order, "amax")
        hit = (last >= 0).nonzero()[:, 0]
        j = last[hit]
        s["other"][hit] = torch.where(s_[j] == hit, d_[j], s_[j])
        s["mt"][hit], s["me"][hit], s["has"][hit] = t[j], e[j], True
        sn, perm = torch.sort(nodes, stable=True)
        slot = (s["cnt"][sn] + torch.arange(2 * b, device="cuda") - torch.searchsorted(sn, sn)) % nk
        s["nbr"][sn, slot], s["nbr_e"][sn, slot] = other[perm], e.repeat(2)[perm]
        s["nbr_t"][sn, slot], s["nbr_ok"][sn, slot] = t.repeat(2)[perm], True
        s["cnt"].index_add_(0, nodes, torch.ones_like(nodes))

    def run(lo, hi, train):
        aps = []
        for a in range(lo, hi, 200):
            s_, d_, t = src[a: min(hi, a + 200)], dst[a: min(hi, a + 200)], ts[a: min(hi, a + 200)]
            e = torch.arange(a, a + s_.shape[0], device="cuda")
            neg = users + torch.randint(0, items, s_.shape, device="cuda")
            ids = torch.unique(torch.cat([s_, d_, neg]))
            with torch.set_grad_enabled(train):
                z, all_ids, m, lu = embed(ids)
                zs = z[torch.searchsorted(ids, s_)]
                pos, negs = score(zs, z[torch.searchsorted(ids, d_)]), score(zs, z[torch.searchsorted(ids, neg)])
            if train:
                (f.binary_cross_entropy_with_logits(pos, torch.ones_like(pos))
                 + f.binary_cross_entropy_with_logits(negs, torch.zeros_like(negs))).backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
            else:
                y = torch.cat([torch.ones_like(pos), torch.zeros_like(negs)])
                y = y[torch.cat([pos, negs]).argsort(descending=True)]
                aps.append((y * y.cumsum(0) / torch.arange(1, y.shape[0] + 1, device="cuda")).sum() / y.sum())
            update(all_ids, m, lu, s_, d_, t, e)
            del z, m, lu, pos, negs
        if aps:
            float(torch.stack(aps).mean())

    train_end, val_end = int(0.7 * n_ev), int(0.85 * n_ev)
    # About 300 tensors a training batch and 150 an evaluation batch (counted on CPU, the state update included):
    # 2 epochs of 552 training and 119 validation batches, then 119 test batches, make about 0.38M tensors, 0.77M
    # events.
    for _ in range(2):
        reset()
        lin.train()
        run(0, train_end, True)
        lin.eval()
        run(train_end, val_end, False)
    run(val_end, n_ev, False)
    torch.cuda.synchronize()


# ---------------------------------------------------------------- neural style transfer by L-BFGS


@_workload("neural style transfer serving, Gatys et al. (2016) as jcjohnson/neural-style and the PyTorch tutorial run it: torchvision VGG-19 features up to relu5_1 (max-pools replaced by average pools, random init, frozen, fp32, eval), content loss at relu4_2, style losses on the Gram matrices of relu1_1-relu5_1 (weight 1e6, as the PyTorch tutorial), total-variation loss, the sum scaled at each scale so that it starts at 1e5 (a random VGG's features are far smaller than a pretrained one's, for which those weights are tuned); 5 requests one after another, each a content and a style image of camera sizes (uint8 made on the device: the content smooth, the style tinted noise; 480x640 to 1080x1920 and square), optimized coarse to fine at 256 and 512 px on the long side and, for half the requests, 768 px (antialiased bilinear resizes and ImageNet normalization on the device, the result upsampled to the next scale), the image itself the only parameter: torch.optim.LBFGS (lr 1, history 50, strong-Wolfe line search, tolerances off) for 100, 60 and 30 iterations at the three scales (one call each with a closure; LBFGS's cap of 1.25 evaluations an iteration ends some calls a few iterations early); the Gram targets recomputed per scale; the result denormalized and copied back as uint8")
def style_transfer_lbfgs(rng):
    import torchvision

    f = torch.nn.functional
    vgg = torchvision.models.vgg19().features[:30]
    for i, m in enumerate(vgg):
        if isinstance(m, torch.nn.MaxPool2d):
            vgg[i] = torch.nn.AvgPool2d(2, 2)
    vgg.cuda().eval().requires_grad_(False)
    style_at, content_at = (1, 6, 11, 20, 29), 22
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda")[None, :, None, None]
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda")[None, :, None, None]
    sizes = ((480, 640), (720, 1280), (1080, 1920), (768, 1024), (1024, 1024))
    iters = {256: 100, 512: 60, 768: 30}

    def feats(x):
        out = {}
        for i, m in enumerate(vgg):
            x = m(x)
            if i in style_at or i == content_at:
                out[i] = x
        return out

    def gram(x):
        c = x.shape[1]
        x = x.view(c, -1)
        return x @ x.T / x.numel()

    def load(u8, long):
        h, w = u8.shape[:2]
        size = (max(16, round(h * long / max(h, w))), max(16, round(w * long / max(h, w))))
        x = f.interpolate(u8.permute(2, 0, 1)[None].float() / 255, size=size, mode="bilinear", antialias=True)
        return (x - mean) / std

    # About 60k tensors a request (counted on CPU at the full iteration counts: 59.6k and 67.5k; an iteration about
    # 120 tensors for the VGG passes, the losses and the line search, and 6 for each entry of the history of 50 in
    # the two-loop recursion): 5 requests make about 0.32M tensors, 0.64M events.
    for _ in range(_smoke(5, 2)):
        (h, w), (sh, sw) = rng.choice(sizes), rng.choice(sizes)
        content = f.interpolate(torch.rand(1, 3, h // 32, w // 32, device="cuda"), size=(h, w), mode="bilinear")
        content = (content[0].permute(1, 2, 0) * 255).byte()
        tint = torch.rand(3, device="cuda") * 128
        style = (torch.randint(0, 128, (sh, sw, 3), device="cuda") + tint).byte()
        img = None
        for long in (256, 512) + ((768,) if rng.random() < 0.5 else ()):
            c = load(content, _smoke(long, long // 8))
            with torch.no_grad():
                target = feats(c)[content_at]
                grams = [gram(v) for i, v in feats(load(style, _smoke(long, long // 8))).items() if i in style_at]
            img = (c if img is None else f.interpolate(img.detach(), size=c.shape[-2:], mode="bilinear")).clone()
            img.requires_grad_(True)
            opt = torch.optim.LBFGS([img], lr=1, max_iter=_smoke(iters[long], 4), history_size=50,
                                    tolerance_grad=-1, tolerance_change=-1, line_search_fn="strong_wolfe")

            def total(x):
                fs = feats(x)
                loss = f.mse_loss(fs[content_at], target)
                loss = loss + 1e6 * sum(f.mse_loss(gram(fs[i]), g) for i, g in zip(style_at, grams))
                tv = (x[..., 1:, :] - x[..., :-1, :]).abs().mean() + (x[..., 1:] - x[..., :-1]).abs().mean()
                return loss + 1e-3 * tv

            with torch.no_grad():
                norm = 1e5 / float(total(img))

            def closure():
                opt.zero_grad()
                loss = norm * total(img)
                loss.backward()
                return loss

            opt.step(closure)
        ((img.detach() * std + mean).clamp(0, 1) * 255).byte()[0].permute(1, 2, 0).cpu()
        del content, style
    torch.cuda.synchronize()

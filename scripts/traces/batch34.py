"""The thirty-fourth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch32_b.py are): open-vocabulary object detection serving (OWL-ViT-style) with images at varying resolutions and
per-image text queries, video instance segmentation training (Mask2Former-VIS-style) on clips of varying length,
resolution and instance count, masked-token text-to-image generation (MaskGIT/Muse-style parallel decoding) at
varying token grids and refinement schedules, and SuperGlue-style keypoint matching training with varying keypoint
counts and a log-space Sinkhorn. Same conventions: models built from configs (hand-written torch here) with random
weights, nothing downloaded, `rng` the workload's random.Random for every shape, sizes through `_smoke(real, small)`
so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value. owlvit_opendet_serve uploads every
request batch's images from reused pinned host buffers on a side stream (the compute stream waiting on the batch's
event, the uploaded tensor record_stream'ed); the other three are single-stream. owlvit_opendet_serve,
vis_instseg_train and maskgit_t2i_sample run under bf16 autocast, superglue_match_train in fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch34_b.py's header says the same of its half): every workload of this
half was run whole, at its real sizes (RECORD_SMOKE unset), on PyTorch's meta device (a runner like
/tmp/b34/meta_run.py, not committed: smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered
with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking its math path; boolean-mask indexing,
which the meta device cannot size, is avoided) and its op outputs counted there (events about 1.8x that count);
the counts and peaks are in record_new34.sh's header. The CPU smoke run (RECORD_SMOKE=1) finished for all four.
"""

import math

import torch

from batch_common import Batch, upload

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


class _Enc(torch.nn.Module):
    """A pre-norm transformer layer: self-attention (optional additive/boolean mask or causal), optional
    cross-attention to a memory with an optional key mask, GELU MLP."""

    def __init__(self, d, heads, cross=False, mlp=4):
        super().__init__()
        nn = torch.nn
        self.h = heads
        self.n1, self.qkv, self.o = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        if cross:
            self.nc, self.q, self.kv, self.oc = nn.LayerNorm(d), nn.Linear(d, d), nn.Linear(d, 2 * d), nn.Linear(d, d)
        self.cross = cross
        self.n2, self.fc1, self.fc2 = nn.LayerNorm(d), nn.Linear(d, mlp * d), nn.Linear(mlp * d, d)

    def _heads(self, t):
        return t.unflatten(-1, (self.h, -1)).transpose(1, 2)

    def forward(self, x, mask=None, causal=False, mem=None, mem_mask=None):
        sdpa = torch.nn.functional.scaled_dot_product_attention
        q, k, v = (self._heads(t) for t in self.qkv(self.n1(x)).chunk(3, -1))
        x = x + self.o(sdpa(q, k, v, attn_mask=mask, is_causal=causal).transpose(1, 2).flatten(2))
        if self.cross and mem is not None:
            q = self._heads(self.q(self.nc(x)))
            k, v = (self._heads(t) for t in self.kv(mem).chunk(2, -1))
            x = x + self.oc(sdpa(q, k, v, attn_mask=mem_mask).transpose(1, 2).flatten(2))
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.n2(x))))


# ---------------------------------------------------------------- open-vocabulary detection serving


@_workload("open-vocabulary object detection serving (OWL-ViT-style) with models written by hand: a ViT image encoder (8 layers of 768, 12 heads, 16-pixel patches, learned 24x24 positions interpolated bicubically to each batch's grid) and a causal CLIP-style text encoder (6 layers of 512, 8 heads, 49408-token vocabulary, 16-token names, the embedding read at each name's last token by gather); request batches of 1-4 images (drawn; 1-2 above 576 pixels) at a resolution drawn from 384-768 in steps of 64, uploaded as uint8 from two reused pinned host buffers on a side stream (the compute stream waits on the batch's event, the upload record_stream'ed) and normalized on the device; every image brings its own query set of 1-30 class names of 2-16 tokens, drawn from a pool of 120 query sets whose text embeddings are kept in an LRU cache of 24 sets (misses encoded together, padded to the longest name); per-patch class embeddings scored against each image's queries (padded to the batch's most, an additive mask) with learned logit shift and scale, per-patch boxes from an MLP plus the patch-grid prior, top-100 patches by best score gathered and converted to xyxy pixels, then read back; 630 request batches, bf16 autocast, no grad")
def owlvit_opendet_serve(rng):
    nn, f = torch.nn, torch.nn.functional
    d, heads, nl = _smoke(768, 32), _smoke(12, 2), _smoke(8, 1)
    dt, th, tl, vocab = _smoke(512, 32), _smoke(8, 2), _smoke(6, 1), _smoke(49408, 300)
    patch, nbatches, maxq, ntok = 16, _smoke(630, 3), _smoke(30, 4), _smoke(16, 6)
    sizes = _smoke(list(range(384, 769, 64)), [32, 48, 64])
    embed = nn.Conv2d(3, d, patch, patch)
    pos = nn.Parameter(torch.randn(1, d, 24, 24) * 0.02)
    vblocks = nn.ModuleList(_Enc(d, heads) for _ in range(nl))
    tok, tpos = nn.Embedding(vocab, dt), nn.Embedding(ntok, dt)
    tblocks = nn.ModuleList(_Enc(dt, th) for _ in range(tl))
    vnorm, tnorm, tproj = nn.LayerNorm(d), nn.LayerNorm(dt), nn.Linear(dt, dt, bias=False)
    cls_proj, shift, scale = nn.Linear(d, dt), nn.Linear(d, 1), nn.Linear(d, 1)
    box = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, d), nn.GELU(), nn.Linear(d, 4))
    model = nn.ModuleList([embed, vblocks, tok, tpos, tblocks, vnorm, tnorm, tproj, cls_proj, shift, scale, box])
    model = model.cuda().eval()
    pos = pos.detach().cuda()
    mean = torch.tensor([0.481, 0.458, 0.408], device="cuda").view(1, 3, 1, 1) * 255
    std = torch.tensor([0.269, 0.261, 0.276], device="cuda").view(1, 3, 1, 1) * 255
    hosts = [torch.randint(0, 256, (4 * 3 * sizes[-1] * sizes[-1],), dtype=torch.uint8).pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    pool = [[rng.randint(2, ntok) for _ in range(rng.randint(1, maxq))] for _ in range(_smoke(120, 6))]
    cache, lru_cap = {}, _smoke(24, 2)

    def stage(k, n, s):
        hosts[k][:3 * s * s].random_(0, 256)  # the batch's first image decoded into the buffer (the rest reused)
        with torch.cuda.stream(side):
            x = upload(hosts[k][:n * 3 * s * s].view(n, 3, s, s))
            ev = side.record_event()
        return x, ev

    def encode_text(qids):
        lens = [n for q in qids for n in pool[q]]
        L = max(lens)
        ids = torch.randint(1, vocab, (len(lens), L), device="cuda")
        x = tok(ids) + tpos(torch.arange(L, device="cuda"))
        for blk in tblocks:
            x = blk(x, causal=True)
        ln = torch.tensor(lens, device="cuda")
        x = x.gather(1, (ln - 1)[:, None, None].expand(len(lens), 1, dt)).squeeze(1)
        e = f.normalize(tproj(tnorm(x)), dim=-1)
        out, o = [], 0
        for q in qids:
            out.append(e[o:o + len(pool[q])])
            o += len(pool[q])
        return out

    def detect(img, qsets):
        n, _, s, _ = img.shape
        g = s // patch
        x = (img.float() - mean) / std
        x = embed(x)
        x = (x + f.interpolate(pos, size=(g, g), mode="bicubic", align_corners=False)).flatten(2).transpose(1, 2)
        for blk in vblocks:
            x = blk(x)
        x = vnorm(x)
        ce = f.normalize(cls_proj(x), dim=-1)
        nq = max(q.shape[0] for q in qsets)
        qpad = torch.stack([f.pad(q, (0, 0, 0, nq - q.shape[0])) for q in qsets])
        qmask = torch.tensor([[0.0] * q.shape[0] + [-1e4] * (nq - q.shape[0]) for q in qsets], device="cuda")
        logits = torch.einsum("btd,bnd->btn", ce, qpad.to(ce.dtype))
        logits = (logits + shift(x)) * (f.elu(scale(x)) + 1) + qmask[:, None]
        score, label = logits.sigmoid().max(-1)
        ys, xs = torch.meshgrid(torch.arange(g, device="cuda"), torch.arange(g, device="cuda"), indexing="ij")
        prior = torch.stack([(xs + 0.5) / g, (ys + 0.5) / g], -1).flatten(0, 1).clamp(1e-4, 1 - 1e-4)
        prior = torch.cat([torch.logit(prior), torch.full_like(prior, math.log(1 / g / (1 - 1 / g)))], -1)
        b = (box(x) + prior).sigmoid()
        k = min(_smoke(100, 8), g * g)
        sc, idx = score.topk(k, dim=1)
        b = b.gather(1, idx[..., None].expand(n, k, 4))
        xyxy = torch.cat([b[..., :2] - b[..., 2:] / 2, b[..., :2] + b[..., 2:] / 2], -1).clamp(0, 1) * s
        return torch.cat([xyxy.float(), sc[..., None].float(), label.gather(1, idx)[..., None].float()], -1)

    def draw():
        s = rng.choice(sizes)
        n = rng.randint(1, 4 if s <= sizes[len(sizes) // 2] else 2)
        return n, s, [rng.randrange(len(pool)) for _ in range(n)]

    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        nxt = draw()
        staged = stage(0, nxt[0], nxt[1])
        for bi in range(nbatches):
            n, s, qids = nxt
            img, ev = staged
            torch.cuda.current_stream().wait_event(ev)
            img.record_stream(torch.cuda.current_stream())
            if bi + 1 < nbatches:
                nxt = draw()
                staged = stage((bi + 1) % 2, nxt[0], nxt[1])
            miss = sorted(set(q for q in qids if q not in cache))
            if miss:
                for q, e in zip(miss, encode_text(miss)):
                    cache[q] = e
            for q in qids:
                cache[q] = cache.pop(q)  # most recently used last
            qsets = [cache[q] for q in qids]
            while len(cache) > lru_cap:
                cache.pop(next(iter(cache)))
            detect(img, qsets).cpu()
            del img, ev, qsets
    torch.cuda.synchronize()


# ---------------------------------------------------------------- video instance segmentation training


class _Res(torch.nn.Module):
    """A ResNet basic block (two 3x3 conv-BN, ReLU) with a strided 1x1 shortcut where the shape changes."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        nn = torch.nn
        self.c1, self.b1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout)
        self.c2, self.b2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout)
        self.sc = None if stride == 1 and cin == cout else nn.Sequential(
            nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.b2(self.c2(torch.relu(self.b1(self.c1(x)))))
        return torch.relu(y + (x if self.sc is None else self.sc(x)))


@_workload("video instance segmentation training (Mask2Former-VIS-style) with a model written by hand: a ResNet-18-shaped backbone run on every frame of the clips, an FPN pixel decoder giving 128-channel stride-4 mask features and stride-8/16/32 memories (flattened over all the clip's frames, with level embeddings), a transformer decoder of 6 layers (cross-attention round-robin over the three levels, self-attention, MLP) over 60 learned instance queries per clip, class logits (40 classes plus no-object) and per-frame mask logits (query x mask-feature einsum) after every layer; batches of 1-2 clips of 2-6 frames (drawn, at most 8 frames a batch) at a resolution drawn from 288-448 in steps of 32; 1-10 ground-truth instances per clip (drawn), assigned to queries by a drawn permutation standing in for Hungarian matching; losses at every layer: weighted cross-entropy over all queries and, for the matched queries gathered by index_select, mask BCE and dice on 4096 random points per frame sampled with grid_sample; AdamW with weight decay, grad-norm clipping to 1, 135 steps, bf16 autocast")
def vis_instseg_train(rng):
    nn, f = torch.nn, torch.nn.functional
    c, nq, ncls, nl = _smoke(128, 16), _smoke(60, 6), 40, _smoke(6, 2)
    nsteps, npts = _smoke(135, 2), _smoke(4096, 16)
    sizes = _smoke(list(range(288, 449, 32)), [64, 96])
    w = _smoke([64, 128, 256, 512], [8, 16, 16, 16])
    stem = nn.Sequential(nn.Conv2d(3, w[0], 7, 2, 3, bias=False), nn.BatchNorm2d(w[0]), nn.ReLU(), nn.MaxPool2d(3, 2, 1))
    stages = nn.ModuleList([
        nn.Sequential(_Res(w[0], w[0], 1), _Res(w[0], w[0], 1)),
        nn.Sequential(_Res(w[0], w[1], 2), _Res(w[1], w[1], 1)),
        nn.Sequential(_Res(w[1], w[2], 2), _Res(w[2], w[2], 1)),
        nn.Sequential(_Res(w[2], w[3], 2), _Res(w[3], w[3], 1)),
    ])
    lat = nn.ModuleList(nn.Conv2d(wi, c, 1) for wi in w)
    outc = nn.ModuleList(nn.Sequential(nn.Conv2d(c, c, 3, 1, 1), nn.GroupNorm(8, c), nn.ReLU()) for _ in w)
    mask_feat = nn.Conv2d(c, c, 1)
    level = nn.Embedding(3, c)
    queries, qpos = nn.Embedding(nq, c), nn.Embedding(nq, c)
    dec = nn.ModuleList(_Enc(c, 8, cross=True, mlp=8) for _ in range(nl))
    dnorm = nn.LayerNorm(c)
    cls_head = nn.Linear(c, ncls + 1)
    mask_mlp = nn.Sequential(nn.Linear(c, c), nn.ReLU(), nn.Linear(c, c), nn.ReLU(), nn.Linear(c, c))
    model = nn.ModuleList([stem, stages, lat, outc, mask_feat, level, queries, qpos, dec, dnorm, cls_head,
                           mask_mlp]).cuda()
    dec_params = [p for m in (dec, dnorm, cls_head, mask_mlp, queries, qpos, level) for p in m.parameters()]
    ids = set(id(p) for p in dec_params)
    opt = torch.optim.AdamW([
        {"params": [p for p in model.parameters() if id(p) not in ids], "lr": 1e-5},
        {"params": dec_params, "lr": 1e-4},
    ], weight_decay=0.05)
    cw = torch.ones(ncls + 1, device="cuda")
    cw[-1] = 0.1

    def predict(q, mf):
        qn = dnorm(q)
        return cls_head(qn), torch.einsum("bqc,btchw->bqthw", mask_mlp(qn), mf)

    with torch.autocast("cuda", dtype=torch.bfloat16):
        for step in range(nsteps):
            s = rng.choice(sizes)
            t = rng.randint(2, _smoke(6, 3))
            b = rng.randint(1, 2) if 2 * t <= _smoke(8, 6) else 1
            x = torch.randn(b * t, 3, s, s, device="cuda")
            feats = []
            y = stem(x)
            for st in stages:
                y = st(y)
                feats.append(y)
            p = None
            outs = [None] * 4
            for i in range(3, -1, -1):
                li = lat[i](feats[i])
                p = li if p is None else li + f.interpolate(p, size=li.shape[-2:], mode="nearest")
                outs[i] = outc[i](p)
            del feats, y, p
            mf = mask_feat(outs[0]).unflatten(0, (b, t))
            mems = [(outs[3 - j].unflatten(0, (b, t)).permute(0, 1, 3, 4, 2).flatten(1, 3) + level.weight[j])
                    for j in range(3)]
            q = queries.weight[None].expand(b, nq, c) + qpos.weight
            # ground truth: instances per clip, matched to drawn queries (Hungarian matching stood in for)
            nins = [rng.randint(1, _smoke(10, 3)) for _ in range(b)]
            match = [rng.sample(range(nq), k) for k in nins]
            tgt = [[ncls] * nq for _ in range(b)]
            flat = []
            for bi in range(b):
                for qi in match[bi]:
                    tgt[bi][qi] = rng.randrange(ncls)
                    flat.append(bi * nq + qi)
            tgt = torch.tensor(tgt, device="cuda")
            flat = torch.tensor(flat, device="cuda")
            m = sum(nins)
            gt = (torch.rand(m, t, mf.shape[-2], mf.shape[-1], device="cuda") > 0.5).float()
            pts = torch.rand(m, npts, 1, 2, device="cuda") * 2 - 1
            gpt = f.grid_sample(gt, pts, align_corners=False).squeeze(-1)
            loss = 0.0
            for li in range(nl + 1):
                if li > 0:
                    q = dec[li - 1](q, mem=mems[(li - 1) % 3])
                cl, ml = predict(q, mf)
                lc = f.cross_entropy(cl.float().flatten(0, 1), tgt.flatten(), weight=cw)
                sel = ml.flatten(0, 1).index_select(0, flat).float()  # (m, t, h, w)
                pl = f.grid_sample(sel, pts, align_corners=False).squeeze(-1)
                lb = f.binary_cross_entropy_with_logits(pl, gpt)
                pr = pl.sigmoid().flatten(1)
                g2 = gpt.flatten(1)
                ld = (1 - (2 * (pr * g2).sum(1) + 1) / (pr.sum(1) + g2.sum(1) + 1)).mean()
                loss = loss + 2 * lc + 5 * lb + 5 * ld
                del cl, ml, sel, pl, pr
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            if (step + 1) % _smoke(25, 2) == 0:
                loss.detach().float().cpu()
            del x, outs, mf, mems, q, loss, gt, gpt, pts, tgt, flat
    torch.cuda.synchronize()


# ---------------------------------------------------------------- masked-token text-to-image generation


@_workload("text-to-image generation serving by masked-token parallel decoding (MaskGIT/Muse-style) with models written by hand: a text encoder (4 layers of 512, 8 heads, 32128-token vocabulary, key-padding mask) for prompts of 6-64 tokens (drawn log-uniform), a bidirectional image-token transformer (12 layers of 768, 12 heads, self-attention over the token grid, cross-attention to the text, 8192-entry codebook plus a mask token, learned 32x32 positions sliced to the grid), classifier-free guidance by a doubled batch with an empty prompt (guidance scale drawn 2-6), a VQGAN-style conv decoder (3 nearest-upsample stages, 8x) from codebook embeddings to pixels; request batches of 1-6 prompts (drawn; at most 3 on the 32x32 grid) on a token grid drawn from 16x16, 20x20, 24x24 and 32x32 with 8-16 refinement steps (drawn); every step the guided logits sampled by Gumbel-max, confidences of newly sampled tokens noised with a decaying temperature and the lowest re-masked per a cosine schedule (topk of the negated confidences, scatter into the mask, torch.where); images decoded to uint8 and read back; 32 batches, bf16 autocast, no grad")
def maskgit_t2i_sample(rng):
    nn, f = torch.nn, torch.nn.functional
    dt, d, heads, nl = _smoke(512, 32), _smoke(768, 32), _smoke(12, 2), _smoke(12, 1)
    tlayers, vocab, ncode = _smoke(4, 1), _smoke(32128, 300), _smoke(8192, 64)
    nbatches = _smoke(32, 2)
    grids = _smoke([16, 20, 24, 32], [4, 6])
    tok, tpos = nn.Embedding(vocab, dt), nn.Embedding(64, dt)
    tenc = nn.ModuleList(_Enc(dt, 8 if dt >= 64 else 2) for _ in range(tlayers))
    tnorm, tproj = nn.LayerNorm(dt), nn.Linear(dt, d)
    itok, ipos = nn.Embedding(ncode + 1, d), nn.Parameter(torch.randn(1, 32, 32, d) * 0.02)
    blocks = nn.ModuleList(_Enc(d, heads, cross=True) for _ in range(nl))
    norm, head = nn.LayerNorm(d), nn.Linear(d, ncode)
    cd = _smoke(256, 16)
    codebook = nn.Embedding(ncode, cd)
    up = []
    ch = [cd, _smoke(256, 16), _smoke(128, 8), _smoke(64, 8)]
    for i in range(3):
        up += [nn.Conv2d(ch[i], ch[i + 1], 3, 1, 1), nn.GroupNorm(8, ch[i + 1]), nn.SiLU(),
               nn.Upsample(scale_factor=2, mode="nearest"), nn.Conv2d(ch[i + 1], ch[i + 1], 3, 1, 1), nn.SiLU()]
    decoder = nn.Sequential(nn.Conv2d(cd, cd, 3, 1, 1), *up, nn.GroupNorm(8, ch[-1]), nn.Conv2d(ch[-1], 3, 3, 1, 1))
    model = nn.ModuleList([tok, tpos, tenc, tnorm, tproj, itok, blocks, norm, head, codebook, decoder]).cuda().eval()
    ipos = ipos.detach().cuda()
    mask_id = ncode

    def gumbel(shape):
        return -torch.log(-torch.log(torch.rand(shape, device="cuda").clamp_(1e-9, 1 - 1e-9)))

    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        for _ in range(nbatches):
            g = rng.choice(grids)
            b = rng.randint(1, 3 if g == grids[-1] else _smoke(6, 2))
            nsteps = rng.randint(_smoke(8, 2), _smoke(16, 3))
            cfg = rng.uniform(2.0, 6.0)
            lens = [_loguniform(rng, _smoke(6, 2), _smoke(64, 8)) for _ in range(b)]
            L = max(lens)
            ids = torch.randint(1, vocab, (b, L), device="cuda")
            ids = torch.cat([ids, torch.zeros(b, L, dtype=torch.long, device="cuda")])  # the empty prompts
            ln = torch.tensor(lens + [1] * b, device="cuda")
            kmask = (torch.arange(L, device="cuda")[None] < ln[:, None])[:, None, None, :]
            x = tok(ids) + tpos(torch.arange(L, device="cuda"))
            for blk in tenc:
                x = blk(x, mask=kmask)
            text = tproj(tnorm(x))
            del x, ids
            n = g * g
            cur = torch.full((b, n), mask_id, dtype=torch.long, device="cuda")
            pe = ipos[:, :g, :g].flatten(1, 2)
            for s in range(nsteps):
                h = itok(cur.repeat(2, 1)) + pe
                for blk in blocks:
                    h = blk(h, mem=text, mem_mask=kmask)
                logits = head(norm(h)).float()
                del h
                lc, lu = logits.chunk(2)
                guided = (lu + cfg * (lc - lu)).log_softmax(-1)
                del logits, lc, lu
                sampled = (guided + gumbel(guided.shape)).argmax(-1)
                conf = guided.gather(-1, sampled[..., None]).squeeze(-1)
                del guided
                masked = cur == mask_id
                sampled = torch.where(masked, sampled, cur)
                ratio = math.cos(math.pi / 2 * (s + 1) / nsteps)
                k = int(n * ratio)
                if k < 1:
                    cur = sampled
                    break
                temp = 4.5 * (1 - (s + 1) / nsteps)
                conf = conf + temp * gumbel(conf.shape)
                conf = torch.where(masked, conf, torch.full_like(conf, float("inf")))
                low = (-conf).topk(k, dim=-1).indices
                remask = torch.zeros(b, n, dtype=torch.bool, device="cuda").scatter_(1, low, True)
                cur = torch.where(remask, torch.full_like(sampled, mask_id), sampled)
                del conf, low, remask, sampled, masked
            z = codebook(cur).transpose(1, 2).unflatten(2, (g, g))
            img = decoder(z).float().clamp(-1, 1)
            ((img + 1) * 127.5).to(torch.uint8).cpu()
            del text, kmask, cur, z, img
    torch.cuda.synchronize()


# ---------------------------------------------------------------- SuperGlue keypoint matching training


class _Prop(torch.nn.Module):
    """SuperGlue's attentional propagation: multi-head attention of x over a source, then an MLP of [x, message]
    added back to x."""

    def __init__(self, d, heads):
        super().__init__()
        nn = torch.nn
        self.h = heads
        self.q, self.kv, self.o = nn.Linear(d, d), nn.Linear(d, 2 * d), nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(2 * d, 2 * d), nn.LayerNorm(2 * d), nn.ReLU(), nn.Linear(2 * d, d))

    def forward(self, x, src):
        q = self.q(x).unflatten(-1, (self.h, -1)).transpose(1, 2)
        k, v = (t.unflatten(-1, (self.h, -1)).transpose(1, 2) for t in self.kv(src).chunk(2, -1))
        msg = self.o(torch.nn.functional.scaled_dot_product_attention(q, k, v).transpose(1, 2).flatten(2))
        return x + self.mlp(torch.cat([x, msg], -1))


@_workload("learned feature matching training (SuperGlue-style) with a model written by hand: a keypoint encoder MLP (x, y, detection score -> 32-64-128-256-256) added to 256-d descriptors, an attentional graph network of 9 self/cross layer pairs (4 heads, an MLP of [x, message]), final projections, a score matrix with a learned dustbin, and 30 log-space Sinkhorn iterations (logsumexp over rows and columns); batches of 1-4 image pairs (drawn, the pair count capped by score-matrix size) whose two images have 256-1024 keypoints each (drawn log-uniform, independently for the two sides, padded per batch as SuperGlue trains); synthetic normalized keypoints, scores and descriptors, a drawn fraction (25-75%) of keypoints matched through randperm, the rest assigned to the dustbin; loss the negative log assignment gathered at the ground truth of both sides; Adam at 1e-4, 84 steps (the loss read back every 20), fp32")
def superglue_match_train(rng):
    nn, f = torch.nn, torch.nn.functional
    d, heads, nl, iters = _smoke(256, 16), 4, _smoke(9, 1), _smoke(30, 3)
    nsteps = _smoke(84, 2)
    lo, hi = _smoke(256, 6), _smoke(1024, 12)
    dims = [3, 32, 64, 128, d, d] if d >= 128 else [3, 8, d]
    kl = []
    for i in range(len(dims) - 1):
        kl.append(nn.Linear(dims[i], dims[i + 1]))
        if i < len(dims) - 2:
            kl += [nn.LayerNorm(dims[i + 1]), nn.ReLU()]
    kenc = nn.Sequential(*kl)
    gnn = nn.ModuleList(_Prop(d, heads) for _ in range(2 * nl))
    proj = nn.Linear(d, d)
    bin_score = nn.Parameter(torch.tensor(1.0))
    model = nn.ModuleList([kenc, gnn, proj]).cuda()
    bin_score = nn.Parameter(bin_score.detach().cuda())
    opt = torch.optim.Adam(list(model.parameters()) + [bin_score], lr=1e-4)

    def sinkhorn(scores):
        b, m, n = scores.shape
        zc = bin_score.expand(b, m, 1)
        zr = bin_score.expand(b, 1, n + 1)
        z = torch.cat([torch.cat([scores, zc], -1), zr], 1)
        norm = -math.log(m + n)
        log_mu = torch.cat([torch.full((m,), norm, device="cuda"), torch.full((1,), math.log(n) + norm, device="cuda")])
        log_nu = torch.cat([torch.full((n,), norm, device="cuda"), torch.full((1,), math.log(m) + norm, device="cuda")])
        u = torch.zeros(b, m + 1, device="cuda")
        v = torch.zeros(b, n + 1, device="cuda")
        for _ in range(iters):
            u = log_mu - torch.logsumexp(z + v[:, None, :], 2)
            v = log_nu - torch.logsumexp(z + u[:, :, None], 1)
        return z + u[:, :, None] + v[:, None, :] - norm

    for step in range(nsteps):
        m, n = _loguniform(rng, lo, hi), _loguniform(rng, lo, hi)
        b = max(1, min(4, (_smoke(2 * 1024 * 1024, 400)) // (m * n)))
        b = rng.randint(1, b)
        kp0, kp1 = torch.rand(b, m, 2, device="cuda"), torch.rand(b, n, 2, device="cuda")
        s0, s1 = torch.rand(b, m, 1, device="cuda"), torch.rand(b, n, 1, device="cuda")
        x0 = f.normalize(torch.randn(b, m, d, device="cuda"), dim=-1) + kenc(torch.cat([kp0 * 2 - 1, s0], -1))
        x1 = f.normalize(torch.randn(b, n, d, device="cuda"), dim=-1) + kenc(torch.cat([kp1 * 2 - 1, s1], -1))
        for i in range(nl):
            sa, ca = gnn[2 * i], gnn[2 * i + 1]
            x0, x1 = sa(x0, x0), sa(x1, x1)
            x0, x1 = ca(x0, x1), ca(x1, x0)
        scores = torch.einsum("bmd,bnd->bmn", proj(x0), proj(x1)) / d ** 0.5
        z = sinkhorn(scores)
        nm = int(min(m, n) * rng.uniform(0.25, 0.75))
        pa = torch.stack([torch.randperm(m, device="cuda") for _ in range(b)])
        pb = torch.stack([torch.randperm(n, device="cuda") for _ in range(b)])
        ta = torch.full((b, m), n, dtype=torch.long, device="cuda").scatter_(1, pa[:, :nm], pb[:, :nm])
        tb = torch.full((b, n), m, dtype=torch.long, device="cuda").scatter_(1, pb[:, :nm], pa[:, :nm])
        la = z[:, :m].gather(2, ta[..., None]).mean()
        lb = z[:, :, :n].gather(1, tb[:, None, :]).mean()
        loss = -(la + lb) / 2
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if (step + 1) % _smoke(20, 2) == 0:
            loss.detach().cpu()
        del x0, x1, scores, z, loss, la, lb, ta, tb, pa, pb
    torch.cuda.synchronize()

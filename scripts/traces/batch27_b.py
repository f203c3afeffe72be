"""The twenty-seventh batch's second half (batch27.py holds the first; written in two to keep files small):
RIFE-style video frame interpolation training, GraphCL contrastive graph pretraining, image-captioning training
with a ViT encoder and a GPT-2 decoder, and Perceiver IO optical flow training. Same conventions and plumbing as
batch27.py; record.py registers this module right after it, so that the batch's workloads keep their order. All
four are single-stream; graphcl_pretrain builds its augmented graph views on the host (as GraphCL's dataset
transforms do in the DataLoader) and uploads them through pinned memory.

Real sizes checked as batch27.py's header says: every workload run whole at its real sizes on the meta device,
its op outputs counted there for the event estimates in record_new27.sh's header. None of these four was
checked that way in time: they passed the CPU smoke run only and are left out of record_new27.sh until checked.
"""

import math

import torch

from batch_common import Batch, upload

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- RIFE video frame interpolation


def _warp(img, flow):
    """Backward warping of img (B, C, H, W) by flow (B, 2, H, W) in pixels, by grid_sample, as RIFE's warplayer."""
    b, _, h, w = flow.shape
    gy, gx = torch.meshgrid(torch.linspace(-1, 1, h, device="cuda"), torch.linspace(-1, 1, w, device="cuda"),
                            indexing="ij")
    grid = torch.stack([gx, gy], 0)[None]
    norm = torch.tensor([2 / max(w - 1, 1), 2 / max(h - 1, 1)], device="cuda").view(1, 2, 1, 1)
    g = (grid + flow * norm).permute(0, 2, 3, 1)
    return torch.nn.functional.grid_sample(img, g.to(img.dtype), mode="bilinear", padding_mode="border",
                                           align_corners=True)


class _IFBlock(torch.nn.Module):
    def __init__(self, cin, c):
        super().__init__()
        nn = torch.nn

        def conv(a, b, s=1):
            return nn.Sequential(nn.Conv2d(a, b, 3, s, 1), nn.PReLU(b))

        self.conv0 = nn.Sequential(conv(cin, c // 2, 2), conv(c // 2, c, 2))
        self.convblock = nn.Sequential(*[conv(c, c) for _ in range(8)])
        self.last = nn.ConvTranspose2d(c, 5, 4, 2, 1)

    def forward(self, x, flow, scale):
        f = torch.nn.functional
        x = f.interpolate(x, scale_factor=1 / scale, mode="bilinear", align_corners=False)
        if flow is not None:
            flow = f.interpolate(flow, scale_factor=1 / scale, mode="bilinear", align_corners=False) / scale
            x = torch.cat([x, flow], 1)
        x = self.conv0(x)
        x = self.convblock(x) + x
        tmp = f.interpolate(self.last(x), scale_factor=scale * 2, mode="bilinear", align_corners=False)
        return tmp[:, :4] * scale * 2, tmp[:, 4:5]


@_workload("video frame interpolation training, RIFE v4-style (Huang et al. 2022) as its Vimeo90K recipe trains it, written by hand: an IFNet of three IFBlocks (192, 128 and 96 channels, 2 stride-2 convs and 8 conv+PReLU layers each, a transposed-conv head of bidirectional flow and fusion mask) run coarse to fine at scales 4, 2, 1, each refining the flows from the two frames warped by the previous estimate (grid_sample backward warping), the timestep given as an input plane; the frame blended by the sigmoid mask, an L1 plus a Laplacian-pyramid L1 loss against the ground-truth middle frame at every scale; batches of 12-24 triplets of 192-384 px random crops (drawn per step, multiples of 32), timesteps drawn per sample, bf16 autocast with the warps in fp32, AdamW with cosine decay, 300 steps, the loss read back every step; every 100 steps a 4x interpolation (t = 0.25, 0.5, 0.75) of 2 frame pairs at 720 x 1280 (padded to 736 x 1280)")
def rife_interp_train(rng):
    f = torch.nn.functional
    cs = [_smoke(192, 16), _smoke(128, 16), _smoke(96, 16)]
    blocks = torch.nn.ModuleList([_IFBlock(7, cs[0]), _IFBlock(7 + 6 + 1 + 4, cs[1]),
                                  _IFBlock(7 + 6 + 1 + 4, cs[2])]).cuda()
    opt = torch.optim.AdamW(blocks.parameters(), lr=3e-4, weight_decay=1e-4)
    steps = _smoke(300, 2)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * s / steps)) + 0.01)
    gk = torch.tensor([1., 4., 6., 4., 1.], device="cuda")
    gk = (gk[:, None] * gk[None] / 256).expand(3, 1, 5, 5).contiguous()

    def lap(x, levels=4):
        out = []
        for _ in range(levels):
            low = f.conv2d(f.pad(x, (2, 2, 2, 2), mode="reflect"), gk, groups=3)
            down = low[:, :, ::2, ::2]
            up = f.interpolate(down, size=x.shape[-2:], mode="bilinear", align_corners=False)
            out.append(x - up)
            x = down
        return out

    def ifnet(i0, i1, t):
        tplane = t.expand(-1, 1, i0.shape[2], i0.shape[3])
        flow, mask, preds = None, None, []
        w0, w1 = i0, i1
        for k, (blk, scale) in enumerate(zip(blocks, (4, 2, 1))):
            if flow is None:
                flow, mask = blk(torch.cat([i0, i1, tplane], 1), None, scale)
            else:
                df, dm = blk(torch.cat([i0, i1, tplane, w0, w1, mask], 1), flow, scale)
                flow, mask = flow + df, mask + dm
            with torch.autocast("cuda", enabled=False):
                w0, w1 = _warp(i0.float(), flow[:, :2].float()), _warp(i1.float(), flow[:, 2:4].float())
            m = torch.sigmoid(mask)
            preds.append(w0 * m + w1 * (1 - m))
        return preds

    for step in range(steps):
        b = rng.randint(_smoke(12, 2), _smoke(24, 2))
        h, w = (32 * rng.randint(_smoke(6, 2), _smoke(12, 3)) for _ in range(2))
        trip = torch.rand(b, 3, 3, h, w, device="cuda")
        t = torch.rand(b, 1, 1, 1, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            preds = ifnet(trip[:, 0], trip[:, 2], t)
            gt = trip[:, 1]
            loss = sum((p.float() - gt).abs().mean() for p in preds)
            loss = loss + sum((a - c).abs().mean() for a, c in zip(lap(preds[-1].float()), lap(gt)))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        float(loss.detach())
        del trip, t, preds, gt, loss
        if (step + 1) % _smoke(100, 2) == 0:
            blocks.eval()
            eh, ew = _smoke(720, 64), _smoke(1280, 96)
            ph = -(-eh // 32) * 32
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for _ in range(2):
                    pair = torch.rand(1, 2, 3, eh, ew, device="cuda")
                    i0, i1 = (f.pad(pair[:, k], (0, 0, 0, ph - eh)) for k in (0, 1))
                    for tt in (0.25, 0.5, 0.75):
                        out = ifnet(i0, i1, torch.full((1, 1, 1, 1), tt, device="cuda"))[-1][:, :, :eh]
                        out.clamp(0, 1).mul(255).byte().cpu()
                        del out
                    del pair, i0, i1
            blocks.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- GraphCL contrastive graph pretraining


def _graph_views(gen, n):
    """One synthetic graph of n nodes (a ring plus 1.5n random chords, both directions) and GraphCL's two augmented
    views of it made on the host: node dropping (20%) and edge perturbation (20% of edges dropped, as many added).
    Returns [(kept node ids, src, dst)] for the two views, node ids local to the graph."""
    a = torch.arange(n)
    chords = torch.randint(0, n, (2, n * 3 // 2), generator=gen)
    src = torch.cat([a, (a + 1) % n, chords[0], chords[1]])
    dst = torch.cat([(a + 1) % n, a, chords[1], chords[0]])
    k = max(2, n * 4 // 5)
    keep = torch.randperm(n, generator=gen)[:k].sort().values
    remap = torch.full((n,), -1, dtype=torch.long)
    remap[keep] = torch.arange(k)
    s1, d1 = remap[src], remap[dst]
    ok = (s1 >= 0) & (d1 >= 0)
    v1 = (keep, s1[ok], d1[ok])
    e = src.shape[0]
    kept = torch.randperm(e, generator=gen)[: e * 4 // 5]
    add = torch.randint(0, n, (2, e // 5), generator=gen)
    v2 = (a, torch.cat([src[kept], add[0]]), torch.cat([dst[kept], add[1]]))
    return v1, v2


class _Gin(torch.nn.Module):
    def __init__(self, din, h, layers):
        super().__init__()
        nn = torch.nn
        self.inp = nn.Linear(din, h)
        self.mlps = nn.ModuleList(nn.Sequential(nn.Linear(h, h), nn.BatchNorm1d(h), nn.ReLU(), nn.Linear(h, h))
                                  for _ in range(layers))
        self.bns = nn.ModuleList(nn.BatchNorm1d(h) for _ in range(layers))
        self.eps = nn.Parameter(torch.zeros(layers))

    def forward(self, x, src, dst, graph, ngraph):
        x = self.inp(x)
        pooled = []
        for i, (mlp, bn) in enumerate(zip(self.mlps, self.bns)):
            agg = torch.zeros_like(x).index_add_(0, dst, x[src])
            x = torch.relu(bn(mlp((1 + self.eps[i]) * x + agg)))
            pooled.append(torch.zeros(ngraph, x.shape[1], device=x.device, dtype=x.dtype).index_add_(0, graph, x))
        return torch.cat(pooled, 1)


@_workload("contrastive graph pretraining, GraphCL (You et al. 2020) as its unsupervised TU-dataset recipe runs it on larger graphs: a 5-layer GIN encoder (hidden 256, BatchNorm, sum pooling of every layer concatenated to a 1280-d graph embedding, random init) and a 2-layer projection head, NT-Xent loss (temperature 0.2) between two augmented views of every graph in the batch; each batch 64-192 synthetic graphs (drawn) of 20-1200 nodes each (log-uniform, a ring plus random chords, 64-d node features), the two views made on the host in the collate step (node dropping 20%, edge perturbation 20%), concatenated into one disjoint graph per view with per-node graph ids, uploaded through pinned memory; fp32, Adam, 420 steps, the loss read back every step; every 140 steps the embeddings of 8 evaluation batches computed without grad and a linear probe (logistic regression on 10 classes, 100 LBFGS-free Adam steps) fitted on them")
def graphcl_pretrain(rng):
    nn, f = torch.nn, torch.nn.functional
    din, h, nl = 64, _smoke(256, 32), 5
    enc = _Gin(din, h, nl).cuda()
    proj = nn.Sequential(nn.Linear(h * nl, h * nl // 2), nn.ReLU(), nn.Linear(h * nl // 2, 128)).cuda()
    opt = torch.optim.Adam(list(enc.parameters()) + list(proj.parameters()), lr=1e-3)
    gen = torch.Generator().manual_seed(rng.randrange(2 ** 31))

    def collate(ngraph, views=True):
        sizes = [_loguniform(rng, _smoke(20, 6), _smoke(1200, 40)) for _ in range(ngraph)]
        out = [[], []]
        for n in sizes:
            for v, view in enumerate(_graph_views(gen, n)):
                out[v].append(view)
        batches = []
        for v in range(2 if views else 1):
            off, srcs, dsts, gids, nn_ = 0, [], [], [], 0
            for g, (nodes, s, d) in enumerate(out[v]):
                srcs.append(s + off)
                dsts.append(d + off)
                gids.append(torch.full((nodes.shape[0],), g))
                off += nodes.shape[0]
            feats = torch.randn(off, din, generator=gen)
            batches.append((upload(feats), upload(torch.cat(srcs)), upload(torch.cat(dsts)), upload(torch.cat(gids))))
        return batches

    def nt_xent(z1, z2, tau=0.2):
        z1, z2 = f.normalize(z1, dim=-1), f.normalize(z2, dim=-1)
        sim = z1 @ z2.T / tau
        lab = torch.arange(z1.shape[0], device="cuda")
        return 0.5 * (f.cross_entropy(sim, lab) + f.cross_entropy(sim.T, lab))

    steps = _smoke(420, 2)
    for step in range(steps):
        ng = rng.randint(_smoke(64, 4), _smoke(192, 6))
        (x1, s1, d1, g1), (x2, s2, d2, g2) = collate(ng)
        z1, z2 = proj(enc(x1, s1, d1, g1, ng)), proj(enc(x2, s2, d2, g2, ng))
        loss = nt_xent(z1, z2)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        float(loss.detach())
        del x1, s1, d1, g1, x2, s2, d2, g2, z1, z2, loss
        if (step + 1) % _smoke(140, 2) == 0:
            enc.eval()
            embs = []
            with torch.no_grad():
                for _ in range(_smoke(8, 1)):
                    ng = _smoke(128, 4)
                    (x, s, d, g), = collate(ng, views=False)
                    embs.append(enc(x, s, d, g, ng))
                    del x, s, d, g
            e = torch.cat(embs)
            y = torch.randint(0, 10, (e.shape[0],), device="cuda")
            probe = nn.Linear(e.shape[1], 10).cuda()
            popt = torch.optim.Adam(probe.parameters(), lr=1e-2)
            for _ in range(_smoke(100, 2)):
                pl = f.cross_entropy(probe(e), y)
                popt.zero_grad(set_to_none=True)
                pl.backward()
                popt.step()
            float((probe(e).argmax(-1) == y).float().mean())
            del embs, e, y, probe, popt, pl
            enc.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- image captioning training


@_workload("image-captioning training with captions of many lengths, as a COCO-captions fine-tune with HF VisionEncoderDecoderModel runs it: a ViT-B/16 encoder (224 px, random init, its first 8 layers frozen) and a GPT-2-small decoder with cross-attention (6 layers, 50257 vocabulary, random init), SDPA attention; batches of 24-56 images (drawn per step), each with one caption of 8-72 tokens (drawn, log-uniform around 14), right-padded to the batch's longest with pad positions set to -100 in the labels and masked in the decoder; bf16 autocast, AdamW (separate learning rates for the encoder and the decoder), linear warmup and decay, gradient clipping, 150 steps, the loss read back every step; every 50 steps a validation pass over 4 batches of 64 with 5 reference captions a image (the image features computed once and repeated to the captions)")
def caption_train(rng):
    from transformers import GPT2Config, ViTConfig, VisionEncoderDecoderConfig, VisionEncoderDecoderModel

    img = _smoke(224, 32)
    vit = ViTConfig(image_size=img, patch_size=16, hidden_size=_smoke(768, 64), num_hidden_layers=_smoke(12, 2),
                    num_attention_heads=_smoke(12, 4), intermediate_size=_smoke(3072, 128))
    vocab = _smoke(50257, 500)
    gpt = GPT2Config(vocab_size=vocab, n_embd=_smoke(768, 64), n_layer=_smoke(6, 2), n_head=_smoke(12, 4),
                     add_cross_attention=True, is_decoder=True, bos_token_id=vocab - 1, eos_token_id=vocab - 1)
    cfg = VisionEncoderDecoderConfig.from_encoder_decoder_configs(vit, gpt)
    cfg.decoder_start_token_id, cfg.pad_token_id = vocab - 1, vocab - 1
    model = VisionEncoderDecoderModel(config=cfg).cuda()
    frozen = _smoke(8, 1)
    for p in model.encoder.embeddings.parameters():
        p.requires_grad_(False)
    vit_layers = model.encoder.layers if hasattr(model.encoder, "layers") else model.encoder.encoder.layer
    for layer in vit_layers[:frozen]:
        for p in layer.parameters():
            p.requires_grad_(False)
    enc_p = [p for p in model.encoder.parameters() if p.requires_grad]
    dec_p = list(model.decoder.parameters())
    opt = torch.optim.AdamW([{"params": enc_p, "lr": 2e-5}, {"params": dec_p, "lr": 1e-4}], weight_decay=0.01)
    steps = _smoke(150, 2)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 15) * max(0.0, 1 - s / steps))

    def captions(n):
        lens = [max(_smoke(8, 3), min(_smoke(72, 10), int(rng.lognormvariate(math.log(_smoke(14, 5)), 0.4))))
                for _ in range(n)]
        s = max(lens)
        ids = torch.randint(0, vocab - 1, (n, s), device="cuda")
        mask = torch.arange(s, device="cuda")[None] < torch.tensor(lens, device="cuda")[:, None]
        return ids.masked_fill(~mask, vocab - 1), mask.long(), ids.masked_fill(~mask, -100)

    model.train()
    for step in range(steps):
        b = rng.randint(_smoke(24, 2), _smoke(56, 3))
        px = torch.randn(b, 3, img, img, device="cuda")
        ids, mask, labels = captions(b)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(pixel_values=px, decoder_input_ids=ids, decoder_attention_mask=mask, labels=labels)
        opt.zero_grad(set_to_none=True)
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(enc_p + dec_p, 1.0)
        opt.step()
        sched.step()
        float(out.loss.detach())
        del px, ids, mask, labels, out
        if (step + 1) % _smoke(50, 2) == 0:
            model.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for _ in range(_smoke(4, 1)):
                    nb = _smoke(64, 2)
                    px = torch.randn(nb, 3, img, img, device="cuda")
                    feats = model.encoder(pixel_values=px).last_hidden_state.repeat_interleave(5, 0)
                    ids, mask, labels = captions(nb * 5)
                    out = model(encoder_outputs=(feats,), decoder_input_ids=ids, decoder_attention_mask=mask,
                                labels=labels)
                    float(out.loss)
                    del px, feats, ids, mask, labels, out
            model.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- Perceiver IO optical flow


class _PBlock(torch.nn.Module):
    """A pre-LayerNorm attention block: queries x attend to kv (itself when kv is None), then an MLP."""

    def __init__(self, dq, dkv, heads, width, mlp):
        super().__init__()
        nn = torch.nn
        self.h = heads
        self.nq, self.nkv, self.n2 = nn.LayerNorm(dq), nn.LayerNorm(dkv), nn.LayerNorm(dq)
        self.q, self.kv, self.o = nn.Linear(dq, width), nn.Linear(dkv, 2 * width), nn.Linear(width, dq)
        self.mlp = nn.Sequential(nn.Linear(dq, mlp * dq), nn.GELU(), nn.Linear(mlp * dq, dq))

    def forward(self, x, kv=None, residual=True):
        q = self.q(self.nq(x))
        k, v = self.kv(self.nkv(x if kv is None else kv)).chunk(2, -1)
        a = self.o(_b.rec._mha(q, k, v, self.h))
        x = x + a if residual else a
        return x + self.mlp(self.n2(x))


@_workload("optical flow training with Perceiver IO (Jaegle et al. 2022) as its AutoFlow/Sintel recipe runs it, written by hand: every pixel's input the 3x3 patches of both frames (54 values) concatenated with 2-D Fourier position features (64 bands) computed for the crop's size, a linear projection to 256, one cross-attention into 2048 latents of 512, 24 latent self-attention layers (8 heads), and a decoder cross-attention with one query per pixel (the same pixel features) back out of the latents to 2-channel flow; batches of 2-4 crops of 256-368 x 320-496 (drawn per step, multiples of 16), bf16 autocast, the endpoint error as loss, AdamW (LAMB-like clipping at 1.0) with cosine decay, 230 steps, the loss read back every step; every 75 steps an evaluation of one 436 x 1024 Sintel-sized frame pair by overlapping 368 x 496 tiles (stride 248 x 264) with blending weights")
def perceiver_io_flow(rng):
    nn, f = torch.nn, torch.nn.functional
    nlat, dl, din, bands = _smoke(2048, 64), _smoke(512, 64), _smoke(256, 32), _smoke(64, 4)
    depth, heads = _smoke(24, 2), _smoke(8, 2)
    feat = 54 + 2 + 4 * bands
    inp = nn.Linear(feat, din).cuda()
    latents = nn.Parameter(torch.randn(nlat, dl, device="cuda") * 0.02)
    enc = _PBlock(dl, din, 1, dl, 1).cuda()
    proc = nn.ModuleList(_PBlock(dl, dl, heads, dl, 1) for _ in range(depth)).cuda()
    dec = _PBlock(din, dl, 1, dl, 1).cuda()
    out = nn.Linear(din, 2).cuda()
    mods = nn.ModuleList([inp, enc, proc, dec, out])
    params = list(mods.parameters()) + [latents]
    opt = torch.optim.AdamW(params, lr=4e-4, weight_decay=1e-4)
    steps = _smoke(230, 2)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * s / steps)))

    def fourier(h, w):
        ys, xs = torch.linspace(-1, 1, h, device="cuda"), torch.linspace(-1, 1, w, device="cuda")
        pos = torch.stack(torch.meshgrid(ys, xs, indexing="ij"), -1).view(-1, 2)
        fr = torch.linspace(1, max(h, w) / 2, bands, device="cuda")
        ang = math.pi * pos[:, :, None] * fr
        return torch.cat([pos, ang.sin().flatten(1), ang.cos().flatten(1)], -1)

    def forward(pair):
        b, _, _, h, w = pair.shape
        patches = f.unfold(pair.flatten(1, 2), 3, padding=1)  # (B, 6*9, H*W)
        x = torch.cat([patches.transpose(1, 2), fourier(h, w)[None].expand(b, -1, -1)], -1)
        x = inp(x)
        z = enc(latents[None].expand(b, -1, -1), x)
        for blk in proc:
            z = blk(z)
        y = dec(x, z, residual=False)
        return out(y).transpose(1, 2).view(b, 2, h, w)

    for step in range(steps):
        b = rng.randint(2, 4)
        h, w = 16 * rng.randint(_smoke(16, 2), _smoke(23, 3)), 16 * rng.randint(_smoke(20, 2), _smoke(31, 3))
        pair = torch.rand(b, 2, 3, h, w, device="cuda")
        gt = torch.randn(b, 2, h, w, device="cuda") * 5
        with torch.autocast("cuda", dtype=torch.bfloat16):
            flow = forward(pair).float()
        loss = (flow - gt).norm(dim=1).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        float(loss.detach())
        del pair, gt, flow, loss
        if (step + 1) % _smoke(75, 2) == 0:
            mods.eval()
            H, W = _smoke(436, 48), _smoke(1024, 80)
            th, tw = _smoke(368, 32), _smoke(496, 48)
            ys = sorted({min(y, H - th) for y in range(0, H, _smoke(248, 16))})
            xs = sorted({min(x, W - tw) for x in range(0, W, _smoke(264, 24))})
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                frames = torch.rand(1, 2, 3, H, W, device="cuda")
                acc = torch.zeros(1, 2, H, W, device="cuda")
                wsum = torch.zeros(1, 1, H, W, device="cuda")
                wy = torch.minimum(torch.arange(th, device="cuda") + 1, th - torch.arange(th, device="cuda")).float()
                wx = torch.minimum(torch.arange(tw, device="cuda") + 1, tw - torch.arange(tw, device="cuda")).float()
                wt = (wy[:, None] * wx[None])[None, None]
                for y in ys:
                    for x in xs:
                        fl = forward(frames[..., y:y + th, x:x + tw]).float()
                        acc[..., y:y + th, x:x + tw] += fl * wt
                        wsum[..., y:y + th, x:x + tw] += wt
                        del fl
                (acc / wsum).cpu()
                del frames, acc, wsum, wt
            mods.train()
    torch.cuda.synchronize()

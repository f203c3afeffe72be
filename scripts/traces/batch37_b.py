"""The thirty-seventh batch's second half (batch37.py holds the first; written in two to keep files small):
retrieval-augmented generation with reusable passage KV caches, video captioning with a Q-Former and LoRA,
instruction-guided image editing, and interleaved image-text training. A RAG server that keeps precomputed
per-passage KV caches in a device tier (LRU, evicted to a byte budget) over a pinned host tier (passages uploaded
on a side stream on a device miss) and concatenates the 2-10 retrieved passages' caches for each request before
the question's prefill and decoding; video captioning training (BLIP-2/Video-LLaMA-style: a frozen ViT on every
frame, a frame Q-Former and a video Q-Former, a frozen LM decoder with LoRA adapters) on clips of varying frame
counts and caption lengths, frames uploaded from a reused pinned host buffer on a side stream; InstructPix2Pix
editing serving with dual classifier-free guidance over requests of varying sizes and step counts; and
OpenFlamingo-style training (a perceiver resampler and gated cross-attention into a frozen LM) on interleaved
documents with 1-5 images and varying text lengths. Same conventions and plumbing as batch37.py (whose blocks it
imports); record.py registers this module right after it, so that the batch's workloads keep their order.
turborag_kv_serve and videoqformer_caption_train use a side stream (the compute stream waits on the upload's
event, every uploaded tensor record_stream'ed on the compute stream); the other two are single-stream.
videoqformer_caption_train and flamingo_interleaved_train run under bf16 autocast, turborag_kv_serve and
ip2p_edit_serve with bf16 weights under inference_mode.

Real sizes checked as batch37.py's header says: every workload run whole at its real sizes on the meta device,
its op outputs counted there for the estimates in record_new37.sh's header, and the CPU smoke run on all four.
"""

import math

import torch

from batch37 import _Blk, _causal, _LdmUnet, _Lm, _TextEnc, _vae_dec, _vae_enc, _ViT
from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- RAG with reusable passage KV caches


@_workload("retrieval-augmented generation serving with precomputed per-passage KV caches, TurboRAG/CacheBlend-style (written by hand, random weights; two CUDA streams): a 12-layer decoder LM (width 1024, 16 heads, vocab 32000) and a corpus of 600 passages of 48-256 tokens (drawn) with Zipf-like popularity; each request retrieves 2-10 passages (drawn); a passage's per-layer KV cache is taken from a device tier (LRU, evicted to a 1.2 GB budget), else uploaded from a pinned host tier on a side stream (the compute stream waits on its event, the tensors record_stream'ed), else computed by a prefill and downloaded into its host-tier slot (round-robin); the retrieved caches are concatenated per layer, the question (16-96 tokens) prefilled over them, and 16-80 tokens (drawn) decoded greedily with the caches grown by concatenation, the answer read back; bf16 weights under inference_mode")
def turborag_kv_serve(rng):
    d, layers, heads = _smoke(1024, 64), _smoke(12, 2), _smoke(16, 2)
    vocab, npass = _smoke(32000, 100), _smoke(600, 12)
    lm = _Lm(vocab, d, layers, heads, maxpos=4096).cuda().to(torch.bfloat16).eval()
    plen = [rng.randint(_smoke(48, 2), _smoke(256, 8)) for _ in range(npass)]
    budget = _smoke(1.2e9, 2e5)
    per_tok = layers * 2 * d * 2
    host_slots = _smoke(120, 4)
    host = torch.empty(host_slots, _smoke(256, 8), layers, 2, d, dtype=torch.bfloat16, pin_memory=True)
    host_of, host_next = {}, 0  # passage -> slot
    dev, used = {}, 0  # passage -> [(k, v)] (LRU order by dict order)
    side = torch.cuda.Stream()
    main = torch.cuda.current_stream()
    weights = [1.0 / (i + 1) ** 0.9 for i in range(npass)]
    with torch.inference_mode():
        for _ in range(_smoke(40, 2)):
            pids = set()
            for _r in range(rng.randint(2, 10)):
                pids.add(rng.choices(range(npass), weights)[0])
            caches = []
            for p in pids:
                n = plen[p]
                if p in dev:
                    kv = dev.pop(p)
                elif p in host_of:
                    side.wait_stream(main)  # the slot's download, if still in flight, lands first
                    with torch.cuda.stream(side):
                        blob = host[host_of[p], :n].to("cuda", non_blocking=True)  # (n, layers, 2, d)
                    ev = side.record_event()
                    main.wait_event(ev)
                    blob.record_stream(main)
                    kv = [(blob[:, i, 0].view(1, n, heads, -1).transpose(1, 2),
                           blob[:, i, 1].view(1, n, heads, -1).transpose(1, 2)) for i in range(layers)]
                    used += n * per_tok
                else:
                    ids = torch.randint(0, vocab, (1, n), device="cuda")
                    _, kv = lm.run(lm.emb(ids), 0, causal=True)
                    slot = host_next % host_slots
                    for q in [q for q, s in host_of.items() if s == slot]:
                        del host_of[q]
                    host_of[p], host_next = slot, host_next + 1
                    stacked = torch.stack([torch.stack([k, v]) for k, v in kv])[:, :, 0].permute(3, 0, 1, 2, 4)
                    host[slot, :n].copy_(stacked.flatten(-2).cpu())  # written back to the host tier
                    used += n * per_tok
                    del stacked
                dev[p] = kv
                caches.append(kv)
            while used > budget and len(dev) > len(pids):
                old = next(q for q in dev if q not in pids)
                used -= plen[old] * per_tok
                del dev[old]
            ctx = [(torch.cat([c[i][0] for c in caches], 2), torch.cat([c[i][1] for c in caches], 2))
                   for i in range(layers)]
            P = ctx[0][0].shape[2]
            q = rng.randint(_smoke(16, 2), _smoke(96, 4))
            h, ctx = lm.run(lm.emb(torch.randint(0, vocab, (1, q), device="cuda")), P, ctx, mask=_causal(q, P + q))
            tok = lm.logits(h[:, -1:]).argmax(-1)
            out = [tok]
            for s in range(rng.randint(_smoke(16, 2), _smoke(80, 3))):
                h, ctx = lm.run(lm.emb(tok), P + q + s, ctx)
                tok = lm.logits(h).argmax(-1)
                out.append(tok)
            torch.cat(out, 1).cpu()
            del ctx, caches, h, tok, out
    torch.cuda.synchronize()


# ---------------------------------------------------------------- video captioning with Q-Former and LoRA


class _LoraLinear(torch.nn.Module):
    """A frozen linear layer with a LoRA adapter (rank r, alpha 2r, dropout 0.05)."""

    def __init__(self, base, r):
        super().__init__()
        nn = torch.nn
        self.base = base.requires_grad_(False)
        self.a, self.b = nn.Linear(base.in_features, r, bias=False), nn.Linear(r, base.out_features, bias=False)
        nn.init.zeros_(self.b.weight)
        self.drop = nn.Dropout(0.05)

    def forward(self, x):
        return self.base(x) + 2.0 * self.b(self.a(self.drop(x)))


class _QFormer(torch.nn.Module):
    """A Q-Former: learned queries, blocks of self-attention, cross-attention to the visual tokens and MLP."""

    def __init__(self, nq, d, layers, heads, vis):
        super().__init__()
        self.q = torch.nn.Parameter(torch.randn(1, nq, d) * 0.02)
        self.blocks = torch.nn.ModuleList(_Blk(d, heads, 4 * d, cross=vis) for _ in range(layers))

    def forward(self, mem, extra=None):
        x = self.q.expand(mem.shape[0], -1, -1)
        if extra is not None:
            x = x + extra
        for blk in self.blocks:
            x = blk(x, mem=mem)[0]
        return x


@_workload("video captioning training, Video-LLaMA/BLIP-2-style with LoRA (written by hand, random weights; two CUDA streams): a frozen ViT (12 layers of width 768, patch 16 at 224 px) on every frame, a frozen frame Q-Former (32 queries, 4 layers of 768 with cross-attention), a trainable video Q-Former (32 queries, 2 layers) over the frames' query tokens with frame-position embeddings, a linear projection into a frozen 12-layer decoder LM (width 1024, 16 heads, vocab 32000) with LoRA (rank 16) on its attention and MLP input projections; clips of 4-24 frames (drawn per clip) in batches of 2-8 (a frame budget), frames uint8 in one reused pinned host buffer uploaded on a side stream while the previous step computes (the compute stream waits on the upload's event, the frames record_stream'ed), normalized on the device; captions of 8-64 tokens (drawn, right-padded, loss masked), AdamW on the adapters and Q-Former; every 30 steps greedy captioning of 2-4 clips for 24 tokens with KV caches; bf16 autocast")
def videoqformer_caption_train(rng):
    nn, f = torch.nn, torch.nn.functional
    res, vd, ld = _smoke(224, 32), _smoke(768, 32), _smoke(1024, 64)
    vocab, nq = _smoke(32000, 100), _smoke(32, 4)
    vit = _ViT(vd, _smoke(12, 1), _smoke(12, 2), 16, res)
    fq = _QFormer(nq, vd, _smoke(4, 1), _smoke(12, 2), vd)
    vq = _QFormer(nq, vd, _smoke(2, 1), _smoke(12, 2), vd)
    fpos = nn.Embedding(64, vd)
    proj = nn.Linear(vd, ld)
    lm = _Lm(vocab, ld, _smoke(12, 2), _smoke(16, 2), maxpos=256)
    for p in list(vit.parameters()) + list(fq.parameters()) + list(lm.parameters()):
        p.requires_grad_(False)
    for blk in lm.blocks:
        blk.qkv = _LoraLinear(blk.qkv, 16)
        blk.ff[0] = _LoraLinear(blk.ff[0], 16)
    model = nn.ModuleList([vit, fq, vq, fpos, proj, lm]).cuda()
    vit.eval(), fq.eval()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4, foreach=True)
    fmax = _smoke(96, 8)
    host = torch.randint(0, 256, (fmax, res, res, 3), dtype=torch.uint8).pin_memory()
    side, main = torch.cuda.Stream(), torch.cuda.current_stream()
    mean = torch.tensor([0.48, 0.46, 0.41], device="cuda")[:, None, None]

    def draw():
        counts = []
        while sum(counts) < fmax - 24 and len(counts) < 8:
            counts.append(rng.randint(_smoke(4, 1), _smoke(24, 3)))
            if len(counts) >= 2 and rng.random() < 0.3:
                break
        counts = counts if len(counts) >= 2 else counts + [rng.randint(_smoke(4, 1), _smoke(8, 2))]
        with torch.cuda.stream(side):
            fr = host[:sum(counts)].to("cuda", non_blocking=True)
        return counts, fr, side.record_event()

    def visual(counts, fr, ev):
        main.wait_event(ev)
        fr.record_stream(main)
        x = (fr.permute(0, 3, 1, 2).float() / 255 - mean) / 0.27
        with torch.no_grad():
            tq = fq(vit(x))  # (frames, nq, vd)
        nf = max(counts)
        per, start = [], 0
        for c in counts:
            t = tq[start:start + c] + fpos(torch.arange(c, device="cuda"))[:, None]
            per.append(f.pad(t.flatten(0, 1), (0, 0, 0, (nf - c) * nq)))
            start += c
        mem = torch.stack(per)
        return proj(vq(mem))  # (b, nq, ld)

    pending = draw()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        for step in range(_smoke(127, 2)):
            counts, fr, ev = pending
            pending = draw()  # the next clips upload while this step computes
            b = len(counts)
            vis = visual(counts, fr, ev)
            lens = [rng.randint(_smoke(8, 2), _smoke(64, 6)) for _ in range(b)]
            T = max(lens)
            ids = torch.randint(0, vocab, (b, T + 1), device="cuda")
            keep = (torch.arange(T, device="cuda")[None] < torch.tensor(lens, device="cuda")[:, None]).long()
            tgt = ids[:, 1:] * keep - 100 * (1 - keep)
            x = torch.cat([vis, lm.emb(ids[:, :-1])], 1)
            h, _ = lm.run(x, 0, causal=True)
            loss = f.cross_entropy(lm.logits(h[:, nq:]).float().flatten(0, 1), tgt.flatten(), ignore_index=-100)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            del fr, vis, ids, keep, tgt, x, h, loss
            if (step + 1) % _smoke(30, 2) == 0:
                with torch.no_grad():
                    counts, fr, ev = pending
                    pending = draw()
                    vis = visual(counts, fr, ev)
                    h, caches = lm.run(vis, 0, causal=True)
                    tok = lm.logits(h[:, -1:]).argmax(-1)
                    out = [tok]
                    for s in range(_smoke(24, 2)):
                        h, caches = lm.run(lm.emb(tok), nq + s, caches)
                        tok = lm.logits(h).argmax(-1)
                        out.append(tok)
                    torch.cat(out, 1).cpu()
                    del fr, vis, h, caches, tok, out
    torch.cuda.synchronize()


# ---------------------------------------------------------------- instruction-guided image editing


@_workload("instruction-guided image editing serving, InstructPix2Pix-style (Brooks et al. 2023; written by hand, random weights): a text-conditioned latent UNet (128-256-384 channels, spatial transformers with cross-attention) taking 8 input channels (the noisy latent and the input image's latent), a 6-layer CLIP-style text encoder for the edit instruction (6-60 tokens), an x8 VAE encoder and decoder; requests of 1-4 images (drawn) at 256-768 px (each side drawn, multiples of 64), 10-30 Euler-ancestral-style steps (drawn per request) with dual classifier-free guidance (text and image scales drawn; the batch tripled: full, image-only and unconditional), the edited images decoded and read back as uint8; bf16 weights under inference_mode")
def ip2p_edit_serve(rng):
    ch = (128, 256, 384) if _smoke(1, 0) else (32, 32, 32)
    ctxd, vocab = _smoke(512, 32), _smoke(49408, 100)
    text = _TextEnc(vocab, ctxd, _smoke(6, 1), _smoke(8, 2))
    enc = _vae_enc((64, 128, 256) if _smoke(1, 0) else (32, 32, 32))
    dec = _vae_dec((256, 128, 64) if _smoke(1, 0) else (32, 32, 32))
    unet = _LdmUnet(8, ch, ctxd, _smoke(512, 32))
    model = torch.nn.ModuleList([text, enc, dec, unet]).cuda().to(torch.bfloat16).eval()
    with torch.inference_mode():
        for _ in range(_smoke(46, 2)):
            n = rng.randint(1, 4)
            hh, ww = rng.randrange(_smoke(256, 32), _smoke(769, 65), _smoke(64, 32)), rng.randrange(
                _smoke(256, 32), _smoke(769, 65), _smoke(64, 32))
            img = torch.rand(n, 3, hh, ww, device="cuda", dtype=torch.bfloat16) * 2 - 1
            zi = enc(img)
            c = text(torch.randint(0, vocab, (n, rng.randint(6, _smoke(60, 8))), device="cuda"))
            u = text(torch.zeros(n, c.shape[1], dtype=torch.long, device="cuda"))
            ctx = torch.cat([c, u, u], 0)
            zimg = torch.cat([zi, zi, torch.zeros_like(zi)], 0)
            steps = rng.randint(_smoke(10, 2), _smoke(30, 3))
            st, si = rng.uniform(5.0, 9.0), rng.uniform(1.0, 2.0)
            sigmas = [float(14.6 * (0.03 / 14.6) ** (i / (steps - 1))) for i in range(steps)] + [0.0]
            x = torch.randn_like(zi) * sigmas[0]
            for i in range(steps):
                s, sn = sigmas[i], sigmas[i + 1]
                xin = torch.cat([x, x, x], 0) / math.sqrt(s * s + 1)
                t = torch.full((3 * n,), 999 * i / steps, device="cuda")
                e = unet(torch.cat([xin, zimg], 1), t, ctx)
                ef, ei, eu = e.chunk(3)
                eps = eu + st * (ef - ei) + si * (ei - eu)
                x0 = x - s * eps
                up = min(sn, (sn * sn * (s * s - sn * sn) / (s * s)) ** 0.5)
                down = (sn * sn - up * up) ** 0.5
                x = x0 + (x - x0) / s * down + torch.randn_like(x) * up
            out = dec(x / 0.18215)
            ((out.float().clamp(-1, 1) + 1) * 127.5).to(torch.uint8).cpu()
            del img, zi, c, u, ctx, zimg, x, xin, t, e, ef, ei, eu, eps, x0, out
    torch.cuda.synchronize()


# ---------------------------------------------------------------- interleaved image-text training


class _Resampler(torch.nn.Module):
    """Flamingo's perceiver resampler: learned latents cross-attending to (latents + visual tokens)."""

    def __init__(self, d, nlat, layers, heads):
        super().__init__()
        nn = torch.nn
        self.lat = nn.Parameter(torch.randn(1, nlat, d) * 0.02)
        self.blocks = nn.ModuleList(_Blk(d, heads, 4 * d, cross=d) for _ in range(layers))
        self.norm = nn.LayerNorm(d)

    def forward(self, v):
        x = self.lat.expand(v.shape[0], -1, -1)
        for blk in self.blocks:
            x = blk(x, mem=torch.cat([v, x], 1))[0]
        return self.norm(x)


@_workload("interleaved image-text training, OpenFlamingo-style (Alayrac et al. 2022; Awadalla et al. 2023; written by hand, random weights): a frozen ViT (12 layers of width 768, patch 16 at 224 px), a trainable perceiver resampler (64 latents, 4 layers), and a frozen 12-layer decoder LM (width 1024, 16 heads, vocab 32000) with trainable tanh-gated cross-attention into every second layer; MMC4-style documents of 1-5 images (drawn) and 64-512 text tokens (drawn), batches of 2-8 documents (a budget of about 2k tokens), each text token cross-attending only to the latents of the latest image before it (a boolean media mask built from the image positions), right padding with the loss masked, AdamW on the trainable parts with a cosine schedule, gradient clipping; bf16 autocast")
def flamingo_interleaved_train(rng):
    nn, f = torch.nn, torch.nn.functional
    res, vd, ld = _smoke(224, 32), _smoke(768, 32), _smoke(1024, 64)
    vocab, nlat = _smoke(32000, 100), _smoke(64, 4)
    vit = _ViT(vd, _smoke(12, 1), _smoke(12, 2), 16, res).requires_grad_(False)
    rs = _Resampler(vd, nlat, _smoke(4, 1), _smoke(12, 2))
    lm = _Lm(vocab, ld, _smoke(12, 2), _smoke(16, 2), maxpos=1024, cross=vd, cross_every=2)
    for name, p in lm.named_parameters():
        p.requires_grad_(".x" in name or "gate" in name or ".nx" in name)
    model = nn.ModuleList([vit, rs, lm]).cuda()
    vit.eval()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-4, weight_decay=0.1, foreach=True)
    nsteps = _smoke(135, 2)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        for step in range(nsteps):
            for g in opt.param_groups:
                g["lr"] = 1e-4 * 0.5 * (1 + math.cos(math.pi * step / nsteps))
            docs, total = [], 0
            while total < _smoke(2048, 60) and len(docs) < 8:
                n = rng.randint(_smoke(64, 6), _smoke(512, 20))
                m = rng.randint(1, 5)
                docs.append((n, sorted(rng.sample(range(n - 1), min(m, n - 1)))))
                total += n
            if len(docs) < 2:
                docs.append((rng.randint(_smoke(64, 6), _smoke(128, 8)), [0]))
            b, T, M = len(docs), max(n for n, _ in docs), max(len(p) for _, p in docs)
            imgs = torch.rand(b * M, 3, res, res, device="cuda")
            with torch.no_grad():
                v = vit(imgs)
            lat = rs(v).view(b, M * nlat, vd)
            # media index for every token: which image (0..M-1) precedes it, M = none yet
            owner = []
            for n, pos in docs:
                row, j = [], -1
                for t in range(T):
                    while j + 1 < len(pos) and pos[j + 1] <= t:
                        j += 1
                    row.append(j if j >= 0 else M)
                owner.append(row)
            own = torch.tensor(owner, device="cuda")
            img_of = torch.arange(M * nlat, device="cuda") // nlat
            mm = (own[:, :, None] == img_of[None, None]) | (own[:, :, None] == M)  # no image yet: attend all
            ids = torch.randint(0, vocab, (b, T + 1), device="cuda")
            keep = (torch.arange(T, device="cuda")[None] < torch.tensor([n for n, _ in docs], device="cuda")[:, None]).long()
            h, _ = lm.run(lm.emb(ids[:, :-1]), 0, causal=True, mem=lat, mem_mask=mm[:, None])
            tgt = ids[:, 1:] * keep - 100 * (1 - keep)
            loss = f.cross_entropy(lm.logits(h).float().flatten(0, 1), tgt.flatten(), ignore_index=-100)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            if (step + 1) % 20 == 0:
                loss.item()
            del imgs, v, lat, own, img_of, mm, ids, keep, h, tgt, loss
    torch.cuda.synchronize()

"""The thirty-seventh batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch36_b.py are): multimodal and generative inference and fine-tuning. A small vision-language model answering
questions about 1-3 images per request with AnyRes tiling (a varying number of tiles per image) and a KV cache
grown by concatenation, self-speculative decoding with layer skipping (LayerSkip-style: the first layers and the
shared head draft, the rest verify, the draft length adapted to a drawn acceptance), inpainting fine-tuning of a
latent diffusion UNet (9 input channels: noisy latent, masked-image latent, float mask) at varying resolutions
with periodic masked sampling, and a conditional-flow-matching text-to-speech model (Matcha-TTS-style) trained on
utterances of varying phoneme and frame counts with periodic ODE synthesis. Same conventions: models built from
configs (hand-written torch here) with random weights, nothing downloaded, `rng` the workload's random.Random for
every shape, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a
tensor's value (speculative acceptance lengths and phoneme durations are drawn with `rng`, as an aligner or the
verifier would hand them over). All four are single-stream; vlm_anyres_serve and layerskip_selfspec run bf16
weights under inference_mode, sd_inpaint_finetune runs under bf16 autocast, matcha_cfm_tts_train in fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch37_b.py's header says the same of its half): every workload of this
half was run whole, at its real sizes (RECORD_SMOKE unset), on PyTorch's meta device (a runner like
/tmp/b37/meta_run.py, not committed: smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered
with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking its math path; boolean-mask indexing,
which the meta device cannot size, is avoided) and its op outputs counted there (events about 1.8x that count);
the counts and peaks are in record_new37.sh's header. The CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch
from workload_models import _ResBlock

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_sdpa = torch.nn.functional.scaled_dot_product_attention


# ---------------------------------------------------------------- shared blocks


def _causal(lq, lk, device="cuda"):
    """A boolean mask for lq new queries attending over lk keys (the last lq of which are the queries')."""
    return torch.arange(lk, device=device)[None] <= torch.arange(lq, device=device)[:, None] + (lk - lq)


class _Blk(torch.nn.Module):
    """A pre-norm transformer block: self-attention (optionally over a KV cache, which it returns grown),
    optionally a tanh-gated cross-attention to a memory, and a GELU MLP."""

    def __init__(self, d, h, ff, cross=0):
        super().__init__()
        nn = torch.nn
        self.h = h
        self.n1, self.qkv, self.o = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.cross = cross
        if cross:
            self.nx, self.xq, self.xkv, self.xo = nn.LayerNorm(d), nn.Linear(d, d), nn.Linear(cross, 2 * d), nn.Linear(d, d)
            self.gate = nn.Parameter(torch.full((1,), 0.1))
        self.n2, self.ff = nn.LayerNorm(d), nn.Sequential(nn.Linear(d, ff), nn.GELU(), nn.Linear(ff, d))

    def split(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.h, -1).transpose(1, 2)

    def forward(self, x, cache=None, mask=None, causal=False, mem=None, mem_mask=None):
        q, k, v = map(self.split, self.qkv(self.n1(x)).chunk(3, -1))
        if cache is not None:
            k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
        a = _sdpa(q, k, v, attn_mask=mask, is_causal=causal and mask is None)
        x = x + self.o(a.transpose(1, 2).flatten(2))
        if mem is not None and self.cross:
            xk, xv = map(self.split, self.xkv(mem).chunk(2, -1))
            a = _sdpa(self.split(self.xq(self.nx(x))), xk, xv, attn_mask=mem_mask)
            x = x + torch.tanh(self.gate) * self.xo(a.transpose(1, 2).flatten(2))
        return x + self.ff(self.n2(x)), (k, v)


class _ViT(torch.nn.Module):
    """A ViT image tower at a fixed tile size: patch embedding, learned positions, pre-norm blocks."""

    def __init__(self, d, layers, heads, patch, img):
        super().__init__()
        nn = torch.nn
        self.patch = nn.Conv2d(3, d, patch, patch)
        self.pos = nn.Parameter(torch.randn(1, (img // patch) ** 2, d) * 0.02)
        self.blocks = nn.ModuleList(_Blk(d, heads, 4 * d) for _ in range(layers))
        self.norm = nn.LayerNorm(d)

    def forward(self, img):
        x = self.patch(img).flatten(2).transpose(1, 2) + self.pos
        for blk in self.blocks:
            x = blk(x)[0]
        return self.norm(x)


class _Lm(torch.nn.Module):
    """A decoder-only LM (learned positions, pre-norm blocks, an untied head) run on embeddings with per-layer
    KV caches."""

    def __init__(self, vocab, d, layers, heads, maxpos=4096, cross=0, cross_every=0):
        super().__init__()
        nn = torch.nn
        self.emb, self.pos = nn.Embedding(vocab, d), nn.Embedding(maxpos, d)
        self.blocks = nn.ModuleList(_Blk(d, heads, 4 * d, cross if cross_every and i % cross_every == 0 else 0)
                                    for i in range(layers))
        self.norm, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

    def run(self, x, start, caches=None, mask=None, causal=False, lo=0, hi=None, **kw):
        if lo == 0:
            x = x + self.pos(torch.arange(start, start + x.shape[1], device=x.device))
        new = []
        for i, blk in enumerate(self.blocks[lo:hi]):
            x, kv = blk(x, caches[i] if caches else None, mask, causal, **kw)
            new.append(kv)
        return x, new

    def logits(self, x):
        return self.head(self.norm(x))


class _SpatialTf(torch.nn.Module):
    """Stable Diffusion's SpatialTransformer, one block: self-attention over pixels, cross-attention to the
    text context, a GELU MLP."""

    def __init__(self, c, ctx):
        super().__init__()
        nn = torch.nn
        self.n, self.pin, self.pout = nn.GroupNorm(32, c), nn.Conv2d(c, c, 1), nn.Conv2d(c, c, 1)
        self.blk = _Blk(c, max(1, c // 64), 4 * c, cross=ctx)

    def forward(self, x, ctx):
        b, c, hh, ww = x.shape
        h = self.pin(self.n(x)).flatten(2).transpose(1, 2)
        h = self.blk(h, mem=ctx)[0]
        return x + self.pout(h.transpose(1, 2).reshape(b, c, hh, ww))


class _LdmUnet(torch.nn.Module):
    """A text-conditioned latent-diffusion UNet (SD-1.x layout, narrower): widths ch, two ResBlocks a level,
    spatial transformers on all but the first level, strided-conv down and nearest up."""

    def __init__(self, cin, ch=(128, 256, 384), ctx=512, tdim=512, cout=4):
        super().__init__()
        nn = torch.nn
        self.tdim = tdim
        self.temb = nn.Sequential(nn.Linear(tdim // 2, tdim), nn.SiLU(), nn.Linear(tdim, tdim))
        self.inp = nn.Conv2d(cin, ch[0], 3, padding=1)
        self.down, self.up, c = nn.ModuleList(), nn.ModuleList(), ch[0]
        for i, co in enumerate(ch):
            tf = (lambda: _SpatialTf(co, ctx)) if i else (lambda: nn.Identity())
            self.down.append(nn.ModuleList([_ResBlock(c, co, tdim), tf(), _ResBlock(co, co, tdim), tf(),
                                            nn.Conv2d(co, co, 3, 2, 1) if i < len(ch) - 1 else nn.Identity()]))
            c = co
        self.mid = nn.ModuleList([_ResBlock(c, c, tdim), _SpatialTf(c, ctx), _ResBlock(c, c, tdim)])
        for i, co in reversed(list(enumerate(ch))):
            tf = (lambda: _SpatialTf(co, ctx)) if i else (lambda: nn.Identity())
            self.up.append(nn.ModuleList([_ResBlock(c + co, co, tdim), tf(), _ResBlock(co, co, tdim), tf()]))
            c = co
        self.out = nn.Sequential(nn.GroupNorm(32, c), nn.SiLU(), nn.Conv2d(c, cout, 3, padding=1))

    @staticmethod
    def _tf(m, h, ctx):
        return h if isinstance(m, torch.nn.Identity) else m(h, ctx)

    def forward(self, x, t, ctx):
        half = self.tdim // 4
        e = t[:, None].float() * torch.exp(-torch.arange(half, device=x.device) * (9.21 / half))[None]
        temb = self.temb(torch.cat([e.sin(), e.cos()], 1).to(self.inp.weight.dtype))
        h, skips = self.inp(x), []
        for r1, t1, r2, t2, ds in self.down:
            h = self._tf(t2, r2(self._tf(t1, r1(h, temb), ctx), temb), ctx)
            skips.append(h)
            h = ds(h)
        h = self.mid[2](self.mid[1](self.mid[0](h, temb), ctx), temb)
        for r1, t1, r2, t2 in self.up:
            s = skips.pop()
            if h.shape[-1] != s.shape[-1] or h.shape[-2] != s.shape[-2]:
                h = torch.nn.functional.interpolate(h, size=s.shape[-2:], mode="nearest")
            h = self._tf(t2, r2(self._tf(t1, r1(torch.cat([h, s], 1), temb), ctx), temb), ctx)
        return self.out(h)


def _vae_enc(c=(64, 128, 256), zc=4):
    """A small VAE encoder, x8 down (conv, GroupNorm, SiLU), giving the latent mean."""
    nn, layers, cin = torch.nn, [], 3
    for co in c:
        layers += [nn.Conv2d(cin, co, 3, 2, 1), nn.GroupNorm(32, co), nn.SiLU(), nn.Conv2d(co, co, 3, padding=1),
                   nn.GroupNorm(32, co), nn.SiLU()]
        cin = co
    return nn.Sequential(*layers, nn.Conv2d(cin, zc, 1))


def _vae_dec(c=(256, 128, 64), zc=4):
    """The matching decoder, x8 up by nearest upsampling and convs."""
    nn, layers, cin = torch.nn, [torch.nn.Conv2d(zc, c[0], 3, padding=1)], c[0]
    for co in c:
        layers += [nn.Upsample(scale_factor=2.0, mode="nearest"), nn.Conv2d(cin, co, 3, padding=1),
                   nn.GroupNorm(32, co), nn.SiLU(), nn.Conv2d(co, co, 3, padding=1), nn.GroupNorm(32, co), nn.SiLU()]
        cin = co
    return nn.Sequential(*layers, nn.Conv2d(cin, 3, 3, padding=1))


class _TextEnc(torch.nn.Module):
    """A CLIP-style causal text encoder: token and position embeddings, pre-norm blocks, final norm."""

    def __init__(self, vocab, d, layers, heads, maxlen=77):
        super().__init__()
        nn = torch.nn
        self.emb, self.pos = nn.Embedding(vocab, d), nn.Parameter(torch.randn(maxlen, d) * 0.01)
        self.blocks = nn.ModuleList(_Blk(d, heads, 4 * d) for _ in range(layers))
        self.norm = nn.LayerNorm(d)

    def forward(self, ids):
        x = self.emb(ids) + self.pos[:ids.shape[1]]
        for blk in self.blocks:
            x = blk(x, causal=True)[0]
        return self.norm(x)


# ---------------------------------------------------------------- VLM serving with AnyRes tiles


@_workload("vision-language model serving with AnyRes tiling (LLaVA-NeXT-style, written by hand, random weights): a ViT image tower (12 layers of width 768, 12 heads, patch 14 at 336 px tiles, 576 patches a tile) run on every tile, patch features pooled 2x2 to 144 tokens a tile and projected by a 2-layer GELU MLP into a 12-layer decoder LM (width 1024, 16 heads, vocab 32000); requests carry 1-3 images (drawn) whose aspect ratio picks a tile grid of 1x1 to 2x3 plus a downscaled base tile (2-7 tiles an image), a question of 16-160 tokens; static batches of 1-4 requests (drawn) left-padded to the longest prompt (padding by a key mask), prefill then greedy decoding of 12-64 new tokens (drawn per batch) with per-layer KV caches grown by concatenation, the answers read back at the end of each batch; bf16 weights under inference_mode")
def vlm_anyres_serve(rng):
    nn = torch.nn
    tile, patch = _smoke(336, 28), 14
    vd, vl, ld, ll = _smoke(768, 32), _smoke(12, 1), _smoke(1024, 64), _smoke(12, 2)
    vocab = _smoke(32000, 100)
    vit = _ViT(vd, vl, _smoke(12, 2), patch, tile)
    proj = nn.Sequential(nn.Linear(4 * vd, ld), nn.GELU(), nn.Linear(ld, ld))
    lm = _Lm(vocab, ld, ll, _smoke(16, 2), maxpos=8192)
    model = nn.ModuleList([vit, proj, lm]).cuda().to(torch.bfloat16).eval()
    grids = [(1, 1), (1, 2), (2, 1), (2, 2), (1, 3), (3, 1), (2, 3), (3, 2)]
    g = tile // patch
    with torch.inference_mode():
        for _ in range(_smoke(47, 2)):
            nb = rng.randint(1, 4)
            prompts = []
            for _r in range(nb):
                parts = []
                for _i in range(rng.randint(1, 3)):
                    gh, gw = rng.choice(grids)
                    img = torch.rand(1 + gh * gw, 3, tile, tile, device="cuda", dtype=torch.bfloat16)
                    f = vit(img).view(-1, g // 2, 2, g // 2, 2, vd).permute(0, 1, 3, 2, 4, 5).flatten(3).flatten(1, 2)
                    parts.append(proj(f).flatten(0, 1))  # (tiles*144, ld)
                    parts.append(lm.emb(torch.randint(0, vocab, (2,), device="cuda")))  # image separator
                q = rng.randint(_smoke(16, 2), _smoke(160, 6))
                parts.append(lm.emb(torch.randint(0, vocab, (q,), device="cuda")))
                prompts.append(torch.cat(parts, 0))
            lens = [p.shape[0] for p in prompts]
            L = max(lens)
            x = torch.stack([nn.functional.pad(p, (0, 0, L - p.shape[0], 0)) for p in prompts])
            valid = torch.arange(L, device="cuda")[None] >= torch.tensor([L - n for n in lens], device="cuda")[:, None]
            mask = (_causal(L, L)[None] & valid[:, None])[:, None]
            h, caches = lm.run(x, 0, mask=mask)
            tok = lm.logits(h[:, -1:]).argmax(-1)
            out = [tok]
            del x, h, prompts
            for s in range(rng.randint(_smoke(12, 2), _smoke(64, 3))):
                valid = torch.cat([valid, valid.new_ones(nb, 1)], 1)
                h, caches = lm.run(lm.emb(tok), L + s, caches, mask=valid[:, None, None])
                tok = lm.logits(h).argmax(-1)
                out.append(tok)
            torch.cat(out, 1).cpu()
            del caches, h, valid, mask, out, tok
    torch.cuda.synchronize()


# ---------------------------------------------------------------- self-speculative decoding with layer skip


@_workload("self-speculative decoding with early exit, LayerSkip-style (Elhoushi et al. 2024), written by hand (random weights): one 16-layer decoder LM (width 1024, 16 heads, vocab 32000, a shared LM head) whose first 4 layers plus the head draft tokens autoregressively and whose remaining 12 layers verify the draft in one pass, reusing the draft's KV cache of the early layers; batches of 1-6 requests (drawn) with prompts of 64-1024 tokens (left-padded, key mask), 48-160 new tokens each; each round drafts k tokens (k adapted between 2 and 8 as the HF heuristic does: +2 when the whole draft was accepted, -1 otherwise), verifies k+1 positions, computes the acceptance by argmax comparison and a cumulative product on the device, and the accepted count (drawn, as the verifier would hand it over) trims every layer's KV cache by slicing before the next round grows it by concatenation; bf16 weights under inference_mode")
def layerskip_selfspec(rng):
    d, layers, exit_l = _smoke(1024, 64), _smoke(16, 4), _smoke(4, 2)
    vocab = _smoke(32000, 100)
    lm = _Lm(vocab, d, layers, _smoke(16, 2), maxpos=2048).cuda().to(torch.bfloat16).eval()
    with torch.inference_mode():
        for _ in range(_smoke(16, 2)):
            nb = rng.randint(1, 6)
            lens = [_loguniform(rng, _smoke(64, 4), _smoke(1024, 12)) for _ in range(nb)]
            L = max(lens)
            ids = torch.randint(0, vocab, (nb, L), device="cuda")
            valid = torch.arange(L, device="cuda")[None] >= torch.tensor([L - n for n in lens], device="cuda")[:, None]
            h, caches = lm.run(lm.emb(ids), 0, mask=(_causal(L, L)[None] & valid[:, None])[:, None])
            tok = lm.logits(h[:, -1:]).argmax(-1)
            del h, ids
            pos, k, target, out = L, 4, rng.randint(_smoke(48, 3), _smoke(160, 6)), [tok]
            while pos - L < target:
                # draft k tokens with the first exit_l layers (their KV caches grow), keeping their hidden states
                early, late = caches[:exit_l], caches[exit_l:]
                draft, hs, x = [], [], tok
                for j in range(k + 1):
                    m = torch.cat([valid, valid.new_ones(nb, j + 1)], 1)[:, None, None]
                    h, early = lm.run(lm.emb(x), pos + j, early, mask=m, hi=exit_l)
                    hs.append(h)
                    if j < k:
                        x = lm.logits(h).argmax(-1)
                        draft.append(x)
                # verify: the remaining layers on the k+1 positions (last token + draft), from the early states
                h_early = torch.cat(hs, 1)
                vmask = (_causal(k + 1, pos + k + 1)[None] & torch.cat([valid, valid.new_ones(nb, k + 1)], 1)[:, None])[:, None]
                hv, late = lm.run(h_early, pos, late, mask=vmask, lo=exit_l)
                ver = lm.logits(hv).argmax(-1)  # (nb, k+1)
                ok = (ver[:, :k] == torch.cat(draft, 1)).long().cumprod(1).sum(1)  # accepted per row, on the device
                acc = min(k, max(0, int(rng.triangular(0, k + 1, 0.6 * k))))  # as the verifier hands it over
                keep = pos + acc + 1
                caches = [(c[0][:, :, :keep], c[1][:, :, :keep]) for c in early + late]
                tok = ver[:, acc:acc + 1]
                out += [ver[:, :acc + 1], ok[:, None]]
                valid = torch.cat([valid, valid.new_ones(nb, acc + 1)], 1)
                pos = keep
                k = min(8, k + 2) if acc == k else max(2, k - 1)
                del early, late, draft, hs, h_early, hv, ver, ok, h, x
            torch.cat(out, 1).cpu()
            del caches, valid, out, tok
    torch.cuda.synchronize()


# ---------------------------------------------------------------- inpainting latent diffusion fine-tuning


def _float_masks(rng, b, hh, ww):
    """Inpainting masks as float tensors (1 = to fill): per image a few soft rectangles and Gaussian blobs
    (brush-stroke-like), each placed and sized with rng, combined by max."""
    ys = torch.linspace(0, 1, hh, device="cuda")[:, None]
    xs = torch.linspace(0, 1, ww, device="cuda")[None]
    masks = []
    for _ in range(b):
        m = torch.zeros(hh, ww, device="cuda")
        for _s in range(rng.randint(1, 4)):
            cy, cx, ry, rx = rng.random(), rng.random(), rng.uniform(0.05, 0.35), rng.uniform(0.05, 0.35)
            if rng.random() < 0.5:
                s = torch.sigmoid(40 * (ry - (ys - cy).abs())) * torch.sigmoid(40 * (rx - (xs - cx).abs()))
            else:
                s = torch.exp(-((ys - cy) / ry) ** 2 - ((xs - cx) / rx) ** 2)
            m = torch.maximum(m, s)
        masks.append(m)
    return torch.stack(masks)[:, None]


@_workload("inpainting fine-tuning of a latent diffusion model, SD-inpainting-style (written by hand, random weights): a text-conditioned UNet (128-256-384 channels, two ResBlocks a level, spatial transformers with cross-attention to a 6-layer CLIP-style text encoder's tokens of 8-77 tokens) taking 9 input channels (noisy latent, the masked image's latent, the float mask downsampled to the latent grid), a frozen x8 VAE encoder (64-128-256) making the latents; images of 256-640 px (each side drawn, multiples of 64) with the batch sized to a pixel budget (1-12), masks as float tensors (soft rectangles and Gaussian brush blobs, 1-4 a image) plus 10% full masks, epsilon-prediction MSE over 1000 noise levels, AdamW with warmup; every 25 steps an inpainting sample for 1-4 images at a drawn resolution: 20 DDIM steps with classifier-free guidance (batch doubled), the known region pasted back at each step, a frozen VAE decoder, the image read back as uint8; bf16 autocast")
def sd_inpaint_finetune(rng):
    f = torch.nn.functional
    ch = (128, 256, 384) if _smoke(1, 0) else (32, 32, 32)
    ctxd, vocab = _smoke(512, 32), _smoke(49408, 100)
    text = _TextEnc(vocab, ctxd, _smoke(6, 1), _smoke(8, 2)).cuda().eval().requires_grad_(False)
    enc = _vae_enc((64, 128, 256) if _smoke(1, 0) else (32, 32, 32)).cuda().eval().requires_grad_(False)
    dec = _vae_dec((256, 128, 64) if _smoke(1, 0) else (32, 32, 32)).cuda().eval().requires_grad_(False)
    unet = _LdmUnet(9, ch, ctxd, _smoke(512, 32)).cuda()
    opt = torch.optim.AdamW(unet.parameters(), lr=5e-5, weight_decay=1e-2, foreach=True)
    T = 1000
    abar = torch.cumprod(1 - torch.linspace(1e-4 ** 0.5, 0.02 ** 0.5, T, device="cuda") ** 2, 0)
    nsteps = _smoke(85, 2)

    def cond(b):
        return text(torch.randint(0, vocab, (b, rng.randint(8, _smoke(77, 10))), device="cuda"))

    with torch.autocast("cuda", dtype=torch.bfloat16):
        for step in range(nsteps):
            for gr in opt.param_groups:
                gr["lr"] = 5e-5 * min(1.0, (step + 1) / 20)
            hh, ww = rng.randrange(_smoke(256, 32), _smoke(641, 65), _smoke(64, 32)), rng.randrange(
                _smoke(256, 32), _smoke(641, 65), _smoke(64, 32))
            b = max(1, min(12, int(_smoke(1.6e6, 4e3) // (hh * ww))))
            img = torch.rand(b, 3, hh, ww, device="cuda") * 2 - 1
            mask = _float_masks(rng, b, hh, ww)
            if rng.random() < 0.1:
                mask = torch.ones_like(mask)
            with torch.no_grad():
                z = enc(img) * 0.18215
                zm = enc(img * (1 - mask)) * 0.18215
                ctx = cond(b)
            ml = f.interpolate(mask, size=z.shape[-2:], mode="bilinear", align_corners=False)
            t = torch.randint(0, T, (b,), device="cuda")
            a = abar[t][:, None, None, None]
            noise = torch.randn_like(z)
            pred = unet(torch.cat([a.sqrt() * z + (1 - a).sqrt() * noise, zm, ml], 1), t, ctx)
            loss = f.mse_loss(pred.float(), noise.float())
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            del img, mask, z, zm, ctx, ml, t, a, noise, pred, loss
            if (step + 1) % _smoke(25, 2) == 0:
                with torch.no_grad():
                    hh, ww = rng.randrange(_smoke(256, 32), _smoke(641, 65), _smoke(64, 32)), rng.randrange(
                        _smoke(256, 32), _smoke(641, 65), _smoke(64, 32))
                    n = rng.randint(1, 4)
                    img = torch.rand(n, 3, hh, ww, device="cuda") * 2 - 1
                    mask = _float_masks(rng, n, hh, ww)
                    z0 = enc(img) * 0.18215
                    zm = enc(img * (1 - mask)) * 0.18215
                    ml = f.interpolate(mask, size=z0.shape[-2:], mode="bilinear", align_corners=False)
                    c1 = cond(n)
                    c0 = text(torch.zeros(n, c1.shape[1], dtype=torch.long, device="cuda"))
                    ctx = torch.cat([c1, c0], 0)
                    x = torch.randn_like(z0)
                    ts = list(range(T - 1, -1, -T // _smoke(20, 2)))
                    for i, tt in enumerate(ts):
                        tp = ts[i + 1] if i + 1 < len(ts) else -1
                        inp = torch.cat([x, zm, ml], 1)
                        e = unet(torch.cat([inp, inp], 0), torch.full((2 * n,), tt, device="cuda"), ctx).float()
                        eps = e[n:] + 7.5 * (e[:n] - e[n:])
                        a_t = abar[tt]
                        a_p = abar[tp] if tp >= 0 else torch.ones((), device="cuda")
                        x0 = (x - (1 - a_t).sqrt() * eps) / a_t.sqrt()
                        x = a_p.sqrt() * x0 + (1 - a_p).sqrt() * eps
                        known = a_p.sqrt() * z0 + (1 - a_p).sqrt() * torch.randn_like(z0)
                        x = ml * x + (1 - ml) * known
                    out = dec(x / 0.18215).float()
                    ((out.clamp(-1, 1) + 1) * 127.5).to(torch.uint8).cpu()
                    del img, mask, z0, zm, ml, ctx, c1, c0, x, e, eps, x0, known, out
    torch.cuda.synchronize()


# ---------------------------------------------------------------- conditional flow matching TTS


class _Res1dT(torch.nn.Module):
    """A 1-D ResBlock with a time embedding (Matcha-TTS's decoder block): conv-GroupNorm-Mish twice."""

    def __init__(self, cin, cout, tdim):
        super().__init__()
        nn = torch.nn
        self.b1 = nn.Sequential(nn.Conv1d(cin, cout, 3, padding=1), nn.GroupNorm(8, cout), nn.Mish())
        self.t = nn.Sequential(nn.Mish(), nn.Linear(tdim, cout))
        self.b2 = nn.Sequential(nn.Conv1d(cout, cout, 3, padding=1), nn.GroupNorm(8, cout), nn.Mish())
        self.res = nn.Conv1d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, t, m):
        h = self.b1(x * m) + self.t(t)[:, :, None]
        return self.b2(h * m) + self.res(x * m)


class _CfmDecoder(torch.nn.Module):
    """Matcha-TTS's flow-matching decoder: a 1-D UNet over mel frames (input: x_t, mu stacked; two levels of
    256 channels, a ResBlock and a transformer block per level, two mid blocks), time embedding by sinusoids."""

    def __init__(self, nmel, c, heads, tdim=256):
        super().__init__()
        nn = torch.nn
        self.tdim = tdim
        self.temb = nn.Sequential(nn.Linear(tdim, 4 * tdim), nn.SiLU(), nn.Linear(4 * tdim, tdim))
        self.d1, self.t1 = _Res1dT(2 * nmel, c, tdim), _Blk(c, heads, 4 * c)
        self.down = nn.Conv1d(c, c, 3, 2, 1)
        self.d2, self.t2 = _Res1dT(c, c, tdim), _Blk(c, heads, 4 * c)
        self.mid = nn.ModuleList([_Res1dT(c, c, tdim) for _ in range(2)])
        self.midt = nn.ModuleList([_Blk(c, heads, 4 * c) for _ in range(2)])
        self.u2, self.ut2 = _Res1dT(2 * c, c, tdim), _Blk(c, heads, 4 * c)
        self.up = nn.ConvTranspose1d(c, c, 4, 2, 1)
        self.u1, self.ut1 = _Res1dT(2 * c, c, tdim), _Blk(c, heads, 4 * c)
        self.out = nn.Conv1d(c, nmel, 1)

    @staticmethod
    def _tf(blk, x, key):
        return blk(x.transpose(1, 2), mask=key)[0].transpose(1, 2)

    def forward(self, x, mu, t, m, m2):
        half = self.tdim // 2
        e = 1000 * t[:, None] * torch.exp(-torch.arange(half, device=x.device) * (9.21 / half))[None]
        te = self.temb(torch.cat([e.sin(), e.cos()], 1))
        k1, k2 = m[:, None].bool(), m2[:, None].bool()
        h1 = self._tf(self.t1, self.d1(torch.cat([x, mu], 1), te, m), k1)
        h = self.down(h1 * m)
        h2 = self._tf(self.t2, self.d2(h, te, m2), k2)
        h = h2
        for r, tb in zip(self.mid, self.midt):
            h = self._tf(tb, r(h, te, m2), k2)
        h = self._tf(self.ut2, self.u2(torch.cat([h, h2], 1), te, m2), k2)
        h = self.up(h * m2)
        h = self._tf(self.ut1, self.u1(torch.cat([h, h1], 1), te, m), k1)
        return self.out(h * m) * m


@_workload("text-to-speech training with conditional flow matching, Matcha-TTS-style (Mehta et al. 2024), written by hand (random init, fp32): a phoneme text encoder (vocabulary 178, conv prenet, 6 transformer blocks of width 192, 2 heads) projecting to 80-band mel means, a duration predictor (2 convs) trained on log durations, the phoneme-to-frame alignment built as a one-hot matrix from durations drawn per phoneme (1-12 frames, as a forced aligner would give them) and applied by bmm, an OT-CFM loss on a 1-D UNet decoder (256 channels, ResBlocks and transformer blocks, time embedding) over mel frames; utterances of 20-180 phonemes (drawn per utterance), batches sized to a budget of about 16k frames (4-32 utterances), padded with key and frame masks, prior and duration losses added, Adam; every 30 steps synthesis for 2-8 utterances by 10 Euler steps of the ODE with a drawn length scale, the mels read back; fp32")
def matcha_cfm_tts_train(rng):
    nn, f = torch.nn, torch.nn.functional
    nmel, d, c = 80, _smoke(192, 16), _smoke(256, 16)
    emb = nn.Embedding(178, d)
    pre = nn.Sequential(*[nn.Sequential(nn.Conv1d(d, d, 5, padding=2), nn.ReLU()) for _ in range(3)])
    tenc = nn.ModuleList(_Blk(d, 2, 4 * d) for _ in range(_smoke(6, 1)))
    tmu = nn.Linear(d, nmel)
    dur = nn.Sequential(nn.Conv1d(d, 256, 3, padding=1), nn.ReLU(), nn.Conv1d(256, 256, 3, padding=1), nn.ReLU(),
                        nn.Conv1d(256, 1, 1))
    dec = _CfmDecoder(nmel, c, 2)
    model = nn.ModuleList([emb, pre, tenc, tmu, dur, dec]).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, foreach=True)

    def encode(ids, pmask):
        x = pre(emb(ids).transpose(1, 2) * pmask[:, None]).transpose(1, 2)
        for blk in tenc:
            x = blk(x, mask=pmask[:, None, None].bool())[0]
        return x, tmu(x).transpose(1, 2)  # (b, P, d), (b, nmel, P)

    def batch(b, scale=1.0):
        P = [rng.randint(_smoke(20, 3), _smoke(180, 8)) for _ in range(b)]
        durs = [[max(1, int(rng.randint(1, 12) * scale)) for _ in range(p)] for p in P]
        F = [sum(dd) for dd in durs]
        Pm, Fm = max(P), max(F)
        Fm += (-Fm) % 2
        ids = torch.randint(0, 178, (b, Pm), device="cuda")
        pmask = (torch.arange(Pm, device="cuda")[None] < torch.tensor(P, device="cuda")[:, None]).float()
        fmask = (torch.arange(Fm, device="cuda")[None] < torch.tensor(F, device="cuda")[:, None]).float()
        idx = [sum(([i] * k for i, k in enumerate(dd)), []) + [Pm] * (Fm - fl) for dd, fl in zip(durs, F)]
        align = f.one_hot(torch.tensor(idx, device="cuda"), Pm + 1)[..., :Pm].float()  # (b, F, P)
        logd = torch.tensor([dd + [1] * (Pm - len(dd)) for dd in durs], device="cuda").float().log()
        return ids, pmask, fmask, align, logd

    def masks(fmask):
        return fmask[:, None], fmask[:, None, ::2]

    for step in range(_smoke(175, 2)):
        b = rng.randint(_smoke(4, 1), _smoke(32, 2))
        ids, pmask, fmask, align, logd = batch(b)
        b = ids.shape[0]
        h, mu_p = encode(ids, pmask)
        mu = torch.bmm(mu_p, align.transpose(1, 2))  # (b, nmel, F)
        ld = dur(h.transpose(1, 2).detach() * pmask[:, None]).squeeze(1)
        m, m2 = masks(fmask)
        x1 = torch.randn_like(mu)  # target mels
        x0 = torch.randn_like(mu)
        t = torch.rand(b, device="cuda")
        xt = (1 - (1 - 1e-4) * t[:, None, None]) * x0 + t[:, None, None] * x1
        u = x1 - (1 - 1e-4) * x0
        v = dec(xt, mu, t, m, m2)
        loss = ((v - u * m) ** 2).sum() / (m.sum() * nmel) + ((ld - logd) ** 2 * pmask).sum() / pmask.sum() \
            + (0.5 * (x1 - mu) ** 2 * m).sum() / (m.sum() * nmel)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        del ids, pmask, fmask, align, logd, h, mu_p, mu, ld, m, m2, x1, x0, t, xt, u, v, loss
        if (step + 1) % _smoke(30, 2) == 0:
            with torch.no_grad():
                n = rng.randint(2, 8)
                ids, pmask, fmask, align, _ = batch(n, rng.uniform(0.8, 1.3))
                h, mu_p = encode(ids, pmask)
                mu = torch.bmm(mu_p, align.transpose(1, 2))
                m, m2 = masks(fmask)
                x = torch.randn_like(mu) * 0.667
                for i in range(10):
                    t = torch.full((n,), i / 10, device="cuda")
                    x = x + 0.1 * dec(x, mu, t, m, m2)
                (x * m).cpu()
                del ids, pmask, fmask, align, h, mu_p, mu, m, m2, x
    torch.cuda.synchronize()

"""The forty-sixth batch of held-out workloads, second half (batch46.py holds the first): computational biology,
genomics, single-cell and chemistry. A HyenaDNA-style DNA language model (implicit long convolutions through
FFTs) pretrained with sequence-length warm-up (1k to 32k nucleotides, the batch shrinking as the length grows), a
Cellpose-style cell segmentation U-Net trained on crops and run on whole microscopy images of varying size (uint16
images uploaded on a side stream, percentile normalisation, overlapping tiles through unfold and fold, the flow
field followed by grid_sample to count cell seeds), an MSA Transformer (tied row attention and column attention
over alignments of varying depth and length, masked language modelling, contact prediction from the row
attention maps), and REINVENT-style molecular design (a SMILES GPT agent sampling batches with a growing KV cache,
trained against a frozen prior by augmented likelihood with an experience replay buffer). Same conventions as
batch46.py: models written by hand with random weights, nothing downloaded, `rng` the workload's random.Random for
every shape, length and sampled choice, sizes through `_smoke(real, small)`. No control flow reads a tensor's
value: sampling lengths are drawn by `rng` on the host and sequences end by an EOS mask computed on the device;
scores and losses are read back only at logging points. cellpose_tile_seg uses a side stream (uploads waited on by
event, the tensors record_stream'ed); the others are single-stream. hyenadna_seqwarm_train, msa_transformer_mlm
and smiles_reinvent_sample run under bf16 autocast (the FFT convolutions in fp32), cellpose_tile_seg trains in
fp32 and infers in bf16.

Real sizes checked before recording, as batch46.py's header says (the same meta-device runner, op outputs
counted, peak live bytes tracked): msa_transformer_mlm 310,535 op outputs, peak 7.14 GB, hyenadna_seqwarm_train
311,702, 6.83 GB, and smiles_reinvent_sample 340,916, 2.97 GB, each run whole at its final sizes;
cellpose_tile_seg was run whole at 150 training steps (6 serving passes): 86,956 op outputs, peak 2.51 GB, then
lengthened to 555 steps (22 serving passes, the same per-step work and caps), about 322k op outputs by scaling,
its peak that of the shorter run (the longer run draws more image sizes from the same range, so it may be
somewhat higher). record_new46.sh's header has the figures. The CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import copy
import math

import torch

from batch_common import Batch
from workload_helpers import _mha

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- HyenaDNA


def _fftconv(u, k, d):
    """Causal long convolution of u (B, D, L) with filters k (D, L) through rFFTs of length 2L, plus u * d."""
    n = u.shape[-1]
    kf = torch.fft.rfft(k.float(), n=2 * n) / (2 * n)
    uf = torch.fft.rfft(u.float(), n=2 * n)
    y = torch.fft.irfft(uf * kf, n=2 * n, norm="forward")[..., :n]
    return y + u.float() * d[:, None]


class _HyenaFilter(torch.nn.Module):
    """Hyena's implicit filter: an MLP with sine activations over positional features, times an exponential
    decay window (per-channel rates), evaluated at the sequence's length."""

    def __init__(self, d, emb=5, width=64):
        super().__init__()
        nn = torch.nn
        self.freq = nn.Parameter(torch.ones(1, width))
        self.l1, self.l2, self.l3 = nn.Linear(emb, width), nn.Linear(width, width), nn.Linear(width, d, bias=False)
        self.decay = nn.Parameter(torch.linspace(math.log(1e-2) / 1.5, math.log(1e-2) / 0.3, d).neg().exp().log())
        self.bias = nn.Parameter(torch.randn(d))
        self.emb = emb

    def forward(self, n, device):
        t = torch.linspace(0, 1, n, device=device)[:, None]
        bands = (self.emb - 1) // 2
        w = torch.linspace(1e-4, bands - 1, bands, device=device)[None]
        z = torch.cat([t, torch.cos(2 * math.pi * w * t), torch.sin(2 * math.pi * w * t)], -1)
        h = torch.sin(self.freq * self.l1(z))
        h = torch.sin(self.freq * self.l2(h))
        h = self.l3(h) * torch.exp(-t * self.decay.exp().abs()[None])
        return h.t()


class _HyenaBlock(torch.nn.Module):
    """A pre-norm block: the order-2 Hyena operator (in projection to 3d, a depthwise short conv of 3, two gates
    around one implicit long convolution, out projection), then a GELU MLP 4x."""

    def __init__(self, d):
        super().__init__()
        nn = torch.nn
        self.ln1, self.inp, self.short = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Conv1d(3 * d, 3 * d, 3, padding=2, groups=3 * d)
        self.filt, self.dskip, self.out = _HyenaFilter(d), nn.Parameter(torch.randn(d)), nn.Linear(d, d)
        self.ln2, self.fc1, self.fc2 = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        n = x.shape[1]
        u = self.inp(self.ln1(x)).transpose(1, 2)
        u = self.short(u)[..., :n]
        x1, x2, v = u.chunk(3, 1)
        z = _fftconv(v * x1, self.filt(n, x.device), self.dskip)
        y = (z.to(x2.dtype) * x2).transpose(1, 2)
        x = x + self.out(y)
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))


class _HyenaDna(torch.nn.Module):
    def __init__(self, d=192, layers=8, vocab=12):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d)
        self.blocks = torch.nn.ModuleList([_HyenaBlock(d) for _ in range(layers)])
        self.ln = torch.nn.LayerNorm(d)

    def forward(self, ids, hidden=False):
        h = self.embed(ids)
        for blk in self.blocks:
            h = blk(h)
        h = self.ln(h)
        return h if hidden else h @ self.embed.weight.t()


@_workload("DNA language model pretraining, HyenaDNA (Nguyen et al. 2023) written by hand (random init): character-level nucleotides (12-token vocabulary), 8 blocks of width 192 each an order-2 Hyena operator (a depthwise short conv, two multiplicative gates, an implicit long-convolution filter generated by a sine MLP over positional features with an exponential decay window, applied through rFFT/irFFT of twice the length in fp32) and a GELU MLP, tied head, next-nucleotide loss; sequence-length warm-up over 6 stages (1024, 2048, ... 32,768 nucleotides, the batch shrinking from 32 to 1 sequence so a batch stays at 32k tokens; 134 steps), AdamW with cosine decay and gradient clipping, bf16 autocast; after each stage a held-out perplexity at that stage's length (4 batches, no grad), and at the end a downstream fine-tune of 60 steps: sequences of 200-4000 nucleotides (drawn per batch, 16-64 of them, capped at 32k tokens) mean-pooled into a 2-class head with the backbone trained too")
def hyenadna_seqwarm_train(rng):
    f = torch.nn.functional
    vocab = 12
    model = (_HyenaDna() if _smoke(1, 0) else _HyenaDna(d=32, layers=2)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95), weight_decay=0.1)
    stages = _smoke([(1024, 32), (2048, 16), (4096, 8), (8192, 4), (16384, 2), (32768, 1)], [(64, 4), (128, 2)])
    per_stage = _smoke([30, 26, 24, 20, 18, 16], [2, 2])
    total, step = sum(per_stage), 0
    for (length, b), ns in zip(stages, per_stage):
        for _ in range(ns):
            for g in opt.param_groups:
                g["lr"] = 6e-4 * 0.5 * (1 + math.cos(math.pi * step / total))
            ids = torch.randint(0, vocab, (b, length + 1), device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(ids[:, :-1])
                loss = f.cross_entropy(logits.float().view(-1, vocab), ids[:, 1:].reshape(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            step += 1
            del ids, logits, loss
        model.eval()
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            ev = 0
            for _ in range(_smoke(4, 1)):
                ids = torch.randint(0, vocab, (b, length + 1), device="cuda")
                ev = ev + f.cross_entropy(model(ids[:, :-1]).float().view(-1, vocab), ids[:, 1:].reshape(-1))
        model.train()
        ev.exp().item()
        del ids, ev
    head = torch.nn.Linear(model.ln.normalized_shape[0], 2).cuda()
    ft = torch.optim.AdamW(list(model.parameters()) + list(head.parameters()), lr=1e-4, weight_decay=0.01)
    for _ in range(_smoke(60, 2)):
        n = rng.randint(_smoke(200, 16), _smoke(4000, 64))
        b = max(2, min(rng.choice([16, 32, 64]), _smoke(32768, 128) // n))
        ids = torch.randint(0, vocab, (b, n), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = head(model(ids, hidden=True).mean(1)).float()
        loss = f.cross_entropy(logits, torch.randint(0, 2, (ids.shape[0],), device="cuda"))
        ft.zero_grad(set_to_none=True)
        loss.backward()
        ft.step()
        del ids, logits, loss


# ---------------------------------------------------------------- Cellpose


class _CpRes(torch.nn.Module):
    """Cellpose's residual block pair: BN-ReLU-conv twice with a 1x1 projection shortcut; the style vector is
    added (through a linear layer) before the second conv on the upsampling path."""

    def __init__(self, cin, cout, style=None):
        super().__init__()
        nn = torch.nn
        self.bn1, self.c1 = nn.BatchNorm2d(cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.bn2, self.c2 = nn.BatchNorm2d(cout), nn.Conv2d(cout, cout, 3, padding=1)
        self.proj = nn.Conv2d(cin, cout, 1)
        self.style = nn.Linear(style, cout) if style else None

    def forward(self, x, s=None, skip=None):
        f = torch.nn.functional
        h = self.c1(f.relu(self.bn1(x)))
        if skip is not None:
            h = h + skip
        if self.style is not None:
            h = h + self.style(s)[:, :, None, None]
        return self.proj(x) + self.c2(f.relu(self.bn2(h)))


class _Cellpose(torch.nn.Module):
    """Cellpose's U-Net (Stringer et al. 2021): 2 input channels (cytoplasm, nucleus), levels of 32-64-128-256
    channels with max pooling, a style vector (the bottleneck's global mean, L2-normalised) added on every
    upsampling block, nearest upsampling with skips added after each upsampling block's first conv, 3 outputs (Y flow, X flow, cell probability)."""

    def __init__(self, nbase=(32, 64, 128, 256)):
        super().__init__()
        nn = torch.nn
        self.down, c = nn.ModuleList(), 2
        for w in nbase:
            self.down.append(_CpRes(c, w))
            c = w
        self.up = nn.ModuleList([_CpRes(nbase[i + 1] if i + 1 < len(nbase) else nbase[-1], nbase[i], nbase[-1])
                                 for i in range(len(nbase))])
        self.out = nn.Conv2d(nbase[0], 3, 1)

    def forward(self, x):
        f = torch.nn.functional
        skips = []
        for i, blk in enumerate(self.down):
            x = blk(x if i == 0 else f.max_pool2d(x, 2))
            skips.append(x)
        style = f.normalize(x.mean((2, 3)), dim=1)
        for i in reversed(range(len(self.up))):
            if i < len(self.up) - 1:
                x = f.interpolate(x, scale_factor=2, mode="nearest")
            x = self.up[i](x, style, skips[i] if i < len(self.up) - 1 else None)
        return self.out(x)


@_workload("cell segmentation of microscopy images, Cellpose (Stringer et al. 2021) written by hand (random init): a residual U-Net on 2-channel images (32-256 channels, a style vector from the bottleneck added on the upsampling path) predicting Y/X flows and a cell probability; 555 training steps on batches of 8-16 random 224 px crops with random rot90/flips (fp32, flows regressed with MSE x5, cell probability with BCE, SGD momentum); every 25 steps a serving pass over 2-4 whole images of 512-2048 px a side (drawn; uint16, uploaded one image ahead on a side stream from reused pinned host buffers, waited on by event, record_stream'ed): percentile (1-99) normalisation by a sort, padding, overlapping 224 px tiles (10% overlap) cut by unfold and run 16 a batch in bf16 under inference_mode, stitched back by fold with a cosine taper, optionally averaged with a flipped pass, then Cellpose's flow dynamics (200 Euler steps of every foreground pixel's position through grid_sample) and a histogram of the converged positions (scatter_add_) max-pooled into seeds, the seed count read back")
def cellpose_tile_seg(rng):
    f = torch.nn.functional
    nsteps = _smoke(555, 3)
    model = (_Cellpose() if _smoke(1, 0) else _Cellpose((8, 16, 16, 32))).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-5)
    tile, smax = _smoke(224, 32), _smoke(2048, 96)
    side = torch.cuda.Stream()
    host = [torch.empty(2 * smax * smax, dtype=torch.int16).pin_memory() for _ in range(2)]
    done = [None, None]

    def fetch(i):
        hh, ww = rng.randrange(_smoke(512, 48), smax + 1, 64 if _smoke(1, 0) else 16), rng.randrange(
            _smoke(512, 48), smax + 1, 64 if _smoke(1, 0) else 16)
        s = i % 2
        if done[s] is not None:
            done[s].synchronize()
        buf = host[s][: 2 * hh * ww]
        buf[: hh * ww].random_(0, 30000)
        with torch.cuda.stream(side):
            xd = buf.to("cuda", non_blocking=True).view(1, 2, hh, ww)
            ev = torch.cuda.Event()
            ev.record(side)
        done[s] = ev
        return xd, ev

    ramp = torch.cos(torch.linspace(-math.pi / 2, math.pi / 2, tile, device="cuda")).clamp(min=0.05)
    taper = (ramp[:, None] * ramp[None, :]).view(1, 1, tile * tile)
    nimg = 0
    nxt = fetch(0)
    for step in range(nsteps):
        b = rng.randint(8, 16)
        x = torch.randn(b, 2, tile, tile, device="cuda")
        flows = torch.randn(b, 2, tile, tile, device="cuda")
        prob = (torch.rand(b, 1, tile, tile, device="cuda") > 0.6).float()
        k = rng.randrange(4)
        x, flows, prob = (torch.rot90(t, k, (2, 3)) for t in (x, flows, prob))
        if rng.random() < 0.5:
            x, flows, prob = (t.flip(3) for t in (x, flows, prob))
        out = model(x)
        loss = 5 * f.mse_loss(out[:, :2], flows * 5) / 5 + f.binary_cross_entropy_with_logits(out[:, 2:], prob)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del x, flows, prob, out, loss
        if (step + 1) % _smoke(25, 2) == 0:
            model.eval()
            with torch.inference_mode():
                for _ in range(rng.randint(2, 4)):
                    xd, ev = nxt
                    cur = torch.cuda.current_stream()
                    cur.wait_event(ev)
                    xd.record_stream(cur)
                    nimg += 1
                    nxt = fetch(nimg)
                    img = xd.float()
                    _, _, hh, ww = img.shape
                    srt = img.flatten(2).sort(-1).values
                    lo = srt[..., int(0.01 * hh * ww)][..., None, None]
                    hi = srt[..., int(0.99 * hh * ww)][..., None, None]
                    img = (img - lo) / (hi - lo + 1e-3)
                    del srt
                    stride = tile * 9 // 10
                    ph = math.ceil(max(0, hh - tile) / stride) * stride + tile
                    pw = math.ceil(max(0, ww - tile) / stride) * stride + tile
                    img = f.pad(img, (0, pw - ww, 0, ph - hh), mode="reflect")
                    tiles = f.unfold(img, tile, stride=stride)
                    nt = tiles.shape[-1]
                    tiles = tiles.transpose(1, 2).reshape(nt, 2, tile, tile)
                    passes = [False, True] if rng.random() < 0.5 else [False]
                    acc = 0
                    for flip in passes:
                        outs = []
                        with torch.autocast("cuda", dtype=torch.bfloat16):
                            for t0 in range(0, nt, 16):
                                tb = tiles[t0:t0 + 16]
                                o = model(tb.flip(3) if flip else tb).float()
                                if flip:
                                    o = o.flip(3) * torch.tensor([1.0, -1.0, 1.0], device="cuda").view(1, 3, 1, 1)
                                outs.append(o)
                        o = torch.cat(outs).view(nt, 3 * tile * tile).t()[None] * taper.repeat(1, 3, 1).view(1, -1, 1)
                        acc = acc + f.fold(o, (ph, pw), tile, stride=stride)
                        del outs, o
                    norm = f.fold(taper.view(1, -1, 1).expand(1, -1, nt), (ph, pw), tile, stride=stride)
                    y = (acc / (norm * len(passes)))[:, :, :hh, :ww]
                    fg = (y[:, 2:] > 0).float()
                    gy, gx = torch.meshgrid(torch.linspace(-1, 1, hh, device="cuda"),
                                            torch.linspace(-1, 1, ww, device="cuda"), indexing="ij")
                    p = torch.stack([gx, gy], -1)[None]
                    dp = torch.stack([y[:, 1] * 2 / ww, y[:, 0] * 2 / hh], -1) * fg[:, 0, :, :, None]
                    field = dp.permute(0, 3, 1, 2)
                    for _ in range(_smoke(200, 4)):
                        step_ = f.grid_sample(field, p, align_corners=True).permute(0, 2, 3, 1)
                        p = (p + step_).clamp(-1, 1)
                        del step_
                    iy = ((p[..., 1] + 1) * 0.5 * (hh - 1)).round().long()
                    ix = ((p[..., 0] + 1) * 0.5 * (ww - 1)).round().long()
                    hist = torch.zeros(hh * ww, device="cuda").scatter_add_(0, (iy * ww + ix).flatten(), fg.flatten())
                    hist = hist.view(1, 1, hh, ww)
                    seeds = ((f.max_pool2d(hist, 5, 1, 2) == hist).float() * (hist > 10).float()).sum()
                    seeds.item()
                    del xd, img, tiles, acc, norm, y, fg, gy, gx, p, dp, field, iy, ix, hist, seeds
            model.train()


# ---------------------------------------------------------------- MSA Transformer


class _MsaLayer(torch.nn.Module):
    """The MSA Transformer's layer (Rao et al. 2021): tied row attention (logits summed over the alignment's rows,
    scaled by 1/sqrt(rows)), column attention (each column over its rows), a GELU FFN; pre-norm."""

    def __init__(self, d, heads):
        super().__init__()
        nn = torch.nn
        self.ln_r, self.qkv_r, self.o_r = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ln_c, self.qkv_c, self.o_c = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ln_f, self.fc1, self.fc2 = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.heads = heads

    def forward(self, x):
        r, c, d = x.shape
        h, dh = self.heads, d // self.heads
        q, k, v = self.qkv_r(self.ln_r(x)).view(r, c, 3, h, dh).unbind(2)
        logits = torch.einsum("rihd,rjhd->hij", q * (dh ** -0.5 / math.sqrt(r)), k)
        attn = logits.float().softmax(-1).to(v.dtype)
        x = x + self.o_r(torch.einsum("hij,rjhd->rihd", attn, v).reshape(r, c, d))
        q, k, v = self.qkv_c(self.ln_c(x)).transpose(0, 1).reshape(c, r, 3, h, dh).permute(2, 0, 3, 1, 4)
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        x = x + self.o_c(a.permute(2, 0, 1, 3).reshape(r, c, d))
        x = x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln_f(x))))
        return x, attn


class _MsaTransformer(torch.nn.Module):
    def __init__(self, d=512, layers=10, heads=8, vocab=33, max_cols=1026):
        super().__init__()
        nn = torch.nn
        self.embed, self.col_pos, self.row_pos = nn.Embedding(vocab, d), nn.Embedding(max_cols, d), nn.Embedding(1024, d)
        self.layers = nn.ModuleList([_MsaLayer(d, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)
        self.contact = nn.Linear(layers * heads, 1)

    def forward(self, msa, contacts=False):
        r, c = msa.shape
        x = self.embed(msa) + self.col_pos(torch.arange(c, device=msa.device))[None] + \
            self.row_pos(torch.arange(r, device=msa.device))[:, None]
        maps = []
        for layer in self.layers:
            x, attn = layer(x)
            if contacts:
                maps.append(attn)
            del attn
        logits = self.ln(x) @ self.embed.weight.t()
        if not contacts:
            return logits
        a = torch.cat(maps).float()
        a = a + a.transpose(-1, -2)
        apc = a.sum(-1, keepdim=True) * a.sum(-2, keepdim=True) / a.sum((-1, -2), keepdim=True)
        return logits, torch.sigmoid(self.contact((a - apc).permute(1, 2, 0))[..., 0])


@_workload("protein MSA language modelling, the MSA Transformer (Rao et al. 2021) written by hand (random init): 10 layers of width 512 (8 heads) each with tied row attention (one attention map per head over the alignment's columns, logits summed over rows and scaled by 1/sqrt(rows)), column attention (every column over its sequences, SDPA) and a GELU FFN; alignments of 16-256 sequences by 64-512 columns drawn per step, capped at 12,288 tokens by subsampling rows (as ESM-MSA's training does), 15% of tokens masked (80/10/10 by a torch.where chain) and the loss taken over all positions weighted by the mask (no boolean indexing), bf16 autocast, AdamW with warm-up, gradient accumulation over 2 alignments; every 40 steps contact prediction without grad on 4 alignments: the row attention maps of all layers symmetrised, APC-corrected and combined by a logistic-regression head into an L x L contact map, top-L/5 long-range precision read back")
def msa_transformer_mlm(rng):
    f = torch.nn.functional
    nsteps = _smoke(115, 3)
    model = (_MsaTransformer() if _smoke(1, 0) else _MsaTransformer(d=32, layers=2, heads=2)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
    cap = _smoke(12_288, 256)

    def alignment():
        c = rng.randrange(_smoke(64, 8), _smoke(512, 32) + 1, 8 if _smoke(1, 0) else 1)
        r = min(rng.randint(_smoke(16, 2), _smoke(256, 8)), max(1, cap // c))
        return torch.randint(4, 24, (r, c), device="cuda")

    for step in range(nsteps):
        for g in opt.param_groups:
            g["lr"] = 1e-4 * min(1.0, (step + 1) / 16)
        for _ in range(2):
            msa = alignment()
            u = torch.rand(msa.shape, device="cuda")
            masked = (u < 0.15).float()
            inp = torch.where(u < 0.12, torch.full_like(msa, 32),
                              torch.where(u < 0.135, torch.randint_like(msa, 4, 24), msa))
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(inp)
                ce = f.cross_entropy(logits.float().view(-1, 33), msa.view(-1), reduction="none")
            loss = (ce * masked.view(-1)).sum() / (masked.sum() + 1) / 2
            loss.backward()
            del msa, u, masked, inp, logits, ce, loss
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if (step + 1) % _smoke(40, 2) == 0:
            model.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                precs = []
                for _ in range(_smoke(4, 1)):
                    msa = alignment()
                    c = msa.shape[1]
                    _, contacts = model(msa, contacts=True)
                    sep = (torch.arange(c, device="cuda")[None] - torch.arange(c, device="cuda")[:, None]).abs()
                    scored = contacts * (sep >= 24).float()
                    top = scored.flatten().topk(max(1, c // 5)).indices
                    truth = (torch.rand(c * c, device="cuda") < 0.02).float()
                    precs.append(truth[top].mean())
                    del msa, contacts, sep, scored, top, truth
            model.train()
            torch.stack(precs).mean().item()
            del precs


# ---------------------------------------------------------------- REINVENT molecular design


class _SmilesGpt(torch.nn.Module):
    """A SMILES GPT: token and learned position embeddings, pre-norm causal blocks, an untied head; `step` runs
    one token through a per-layer KV cache that grows by concatenation."""

    def __init__(self, vocab=64, d=384, layers=6, heads=6, ctx=160):
        super().__init__()
        nn = torch.nn
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        self.ln1 = nn.ModuleList([nn.LayerNorm(d) for _ in range(layers)])
        self.qkv = nn.ModuleList([nn.Linear(d, 3 * d) for _ in range(layers)])
        self.o = nn.ModuleList([nn.Linear(d, d) for _ in range(layers)])
        self.ln2 = nn.ModuleList([nn.LayerNorm(d) for _ in range(layers)])
        self.mlp = nn.ModuleList([nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d)) for _ in range(layers)])
        self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab)
        self.heads = heads

    def forward(self, ids):
        x = self.tok(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))[None]
        for ln1, qkv, o, ln2, mlp in zip(self.ln1, self.qkv, self.o, self.ln2, self.mlp):
            x = x + o(_mha(*qkv(ln1(x)).chunk(3, -1), self.heads, is_causal=True))
            x = x + mlp(ln2(x))
        return self.head(self.ln(x))

    def step(self, tok, pos, cache):
        x = self.tok(tok) + self.pos.weight[pos][None, None]
        for i, (ln1, qkv, o, ln2, mlp) in enumerate(zip(self.ln1, self.qkv, self.o, self.ln2, self.mlp)):
            q, k, v = qkv(ln1(x)).chunk(3, -1)
            if cache[i] is not None:
                k, v = torch.cat([cache[i][0], k], 1), torch.cat([cache[i][1], v], 1)
            cache[i] = (k, v)
            x = x + o(_mha(q, k, v, self.heads))
            x = x + mlp(ln2(x))
        return self.head(self.ln(x))[:, 0]


_BOS, _EOS, _PAD = 1, 2, 0


def _sample_smiles(model, b, steps, temp=1.0):
    """Samples b SMILES of `steps` tokens after BOS (multinomial from the softmax), the KV cache growing."""
    seqs = torch.full((b, steps + 1), _BOS, dtype=torch.long, device="cuda")
    cache = [None] * len(model.qkv)
    tok = seqs[:, :1]
    for t in range(steps):
        logits = model.step(tok, t, cache).float()
        tok = torch.multinomial((logits / temp).softmax(-1), 1)
        seqs[:, t + 1:t + 2] = tok
    del cache
    return seqs


def _alive(seqs):
    """1 up to and including each sequence's first EOS (the BOS position counted), 0 after."""
    eos = (seqs == _EOS).long().cumsum(1)
    return ((eos - (seqs == _EOS).long()) == 0).float()


def _seq_ll(model, seqs):
    logp = model(seqs[:, :-1]).float().log_softmax(-1).gather(2, seqs[:, 1:, None])[..., 0]
    return (logp * _alive(seqs)[:, 1:]).sum(1)


@_workload("de novo molecular design by reinforcement learning, REINVENT (Olivecrona et al. 2017; Blaschke et al. 2020) written by hand with a SMILES GPT in place of the GRU (6 layers of 384, 64-token vocabulary; random init): a frozen prior and an agent initialised as its copy; each of 14 RL steps samples 64-128 SMILES of 60-128 tokens (lengths drawn per step, multinomial sampling with a per-layer KV cache that grows by concatenation, bf16 autocast), masks each after its first EOS on the device, scores them with a frozen stand-in property model (bag-of-tokens counts by scatter_add_ and an MLP) and trains the agent on the augmented-likelihood loss (prior log-likelihood + sigma x score - agent log-likelihood, squared) plus 16-32 sequences drawn from an experience replay buffer of 256 (kept as padded tensors, merged with each batch and cut back by topk on score, gathered), Adam; every 5 steps a library of 256 molecules of 80-128 tokens sampled without grad by both prior and agent and their mean log-likelihoods and scores read back")
def smiles_reinvent_sample(rng):
    vocab, ctx = 64, _smoke(160, 24)
    prior = (_SmilesGpt(vocab, ctx=ctx) if _smoke(1, 0) else _SmilesGpt(vocab, 32, 2, 2, ctx)).cuda().eval()
    prior.requires_grad_(False)
    agent = copy.deepcopy(prior).train().requires_grad_(True)
    opt = torch.optim.Adam(agent.parameters(), lr=1e-4)
    scorer = torch.nn.Sequential(torch.nn.Linear(vocab, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1)).cuda()
    scorer.requires_grad_(False)
    width = _smoke(129, 20)
    cap = _smoke(256, 8)
    buf_seq = torch.full((cap, width), _PAD, dtype=torch.long, device="cuda")
    buf_score = torch.full((cap,), -1.0, device="cuda")
    sigma = 120.0

    def score(seqs):
        counts = torch.zeros(seqs.shape[0], vocab, device="cuda").scatter_add_(1, seqs, _alive(seqs))
        return torch.sigmoid(scorer(counts / counts.sum(1, keepdim=True))[:, 0])

    def pad(seqs):
        return torch.nn.functional.pad(seqs, (0, width - seqs.shape[1]), value=_PAD)

    for step in range(_smoke(14, 2)):
        b = rng.randint(_smoke(64, 2), _smoke(128, 4))
        steps = rng.randint(_smoke(60, 4), _smoke(128, 12))
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            seqs = _sample_smiles(agent, b, steps)
            prior_ll = _seq_ll(prior, seqs)
            sc = score(seqs)
        nrep = rng.randint(_smoke(16, 1), _smoke(32, 2))
        ridx = torch.randint(0, cap, (nrep,), device="cuda")
        rseq = buf_seq[ridx]
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            r_prior, r_sc = _seq_ll(prior, rseq), buf_score[ridx].clamp(min=0)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            agent_ll = _seq_ll(agent, seqs)
            r_agent = _seq_ll(agent, rseq)
        loss = ((prior_ll + sigma * sc - agent_ll) ** 2).mean() + ((r_prior + sigma * r_sc - r_agent) ** 2).mean()
        loss = loss - 5e3 * (1 / agent_ll.neg().clamp(min=1)).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        all_seq = torch.cat([buf_seq, pad(seqs)])
        all_sc = torch.cat([buf_score, sc])
        keep = all_sc.topk(cap).indices
        buf_seq, buf_score = all_seq[keep], all_sc[keep]
        del seqs, prior_ll, sc, ridx, rseq, r_prior, r_sc, agent_ll, r_agent, loss, all_seq, all_sc, keep
        if (step + 1) % _smoke(5, 2) == 0:
            stats = []
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for m in (prior, agent):
                    m.eval()
                    lib = _sample_smiles(m, _smoke(256, 4), rng.randint(_smoke(80, 4), _smoke(128, 12)))
                    stats += [_seq_ll(m, lib).mean(), score(lib).mean()]
                    del lib
                agent.train()
            torch.stack(stats).cpu()
            del stats

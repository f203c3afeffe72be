"""The seventy-fifth batch of held-out workloads for record.py, second half (the first is batch75.py): education
technology and accessibility, written in torch alone. Isolated sign recognition from pose landmarks (130 face, hand
and body landmarks a frame with missing hands as NaNs, affine, temporal-resampling, landmark-dropout and time-mask
augmentation on the device, normalisation, motion and hand-distance features, a stack of depthwise causal convolution
blocks with efficient channel attention and transformer blocks, an EMA of the weights evaluated at evaluation points),
gloss-free sign language translation from video (a small residual CNN over every frame of padded clips, temporal
convolutions with pooling, a transformer encoder, a transformer decoder of spoken-language tokens with cross-attention
under a key-padding mask, greedy decoding at evaluation points), an alt-text image captioning service (images of drawn
sizes uploaded as uint8 on a side stream, resized and normalised on the device, a ViT encoder with interpolated
position embeddings, beam search with a KV cache reordered by index_select and a length penalty) and text
simplification fine-tuning with ACCESS-style control tokens (a 6 + 6 layer encoder-decoder with tied embeddings,
label-smoothed cross-entropy, KV-cached greedy decoding at evaluation points with compression and unigram keep/add
statistics computed from device histograms). Same conventions as the earlier batches: nothing downloaded, data drawn
at random on the device (or, for the captioning service, from two reused pinned host buffers), `rng` the workload's
random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1
runs are tiny. No control flow reads a tensor's value: clip lengths, resampling ratios, decoding lengths and request
sizes are fixed on the host, masks multiplied in or selected with torch.where, no boolean-mask indexing; losses,
accuracies, decoded tokens and captions are read back only at logging points. alt_text_caption_beam_serve uses a side
stream (uploads waited on by event, the tensors record_stream'ed); the others are single-stream. Everything runs under
bf16 autocast except the landmark preprocessing and the beam scores (fp32).

record.py calls `register(<its own module object>)` once, just before main(), after batch75.py's: every workload
below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it reaches
record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new75.sh's header (as batch75.py says).
"""

import copy
import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, randint

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


class _DecBlock(_nn.Module):
    """A pre-norm decoder block: causal self-attention (with a KV cache dict when decoding one token at a time),
    cross-attention to a memory under an optional additive key mask (its keys and values cached too), a GELU MLP."""

    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.n1, self.n2, self.n3 = _nn.LayerNorm(d), _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.proj = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.q, self.kv, self.o = _nn.Linear(d, d), _nn.Linear(d, 2 * d), _nn.Linear(d, d)
        self.fc1, self.fc2 = _nn.Linear(d, 4 * d), _nn.Linear(4 * d, d)

    def _split(self, t):
        return t.unflatten(-1, (self.h, -1)).transpose(1, 2)

    def forward(self, x, mem, mem_mask=None, cache=None):
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        if cache is not None:
            if "k" in cache:
                k, v = torch.cat([cache["k"], k], 2), torch.cat([cache["v"], v], 2)
            cache["k"], cache["v"] = k, v
        a = _F.scaled_dot_product_attention(q, k, v, is_causal=cache is None)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        if cache is not None and "mk" in cache:
            mk, mv = cache["mk"], cache["mv"]
        else:
            mk, mv = (self._split(z) for z in self.kv(mem).chunk(2, -1))
            if cache is not None:
                cache["mk"], cache["mv"] = mk, mv
        a = _F.scaled_dot_product_attention(self._split(self.q(self.n2(x))), mk, mv, attn_mask=mem_mask)
        x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(_F.gelu(self.fc1(self.n3(x))))


class _TextDecoder(_nn.Module):
    def __init__(self, vocab, d, heads, layers, maxlen, tie=None):
        super().__init__()
        self.emb = tie if tie is not None else _nn.Embedding(vocab, d)
        self.pos = _nn.Embedding(maxlen, d)
        self.blocks = _nn.ModuleList(_DecBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)

    def forward(self, ids, mem, mem_mask=None, caches=None, start=0):
        h = self.emb(ids) + self.pos(torch.arange(start, start + ids.shape[1], device=ids.device))
        for i, blk in enumerate(self.blocks):
            h = blk(h, mem, mem_mask, None if caches is None else caches[i])
        return self.norm(h) @ self.emb.weight.T


def _key_mask(valid, dtype=torch.float32):
    """An additive key mask (B, 1, 1, L) from a float valid mask (B, L)."""
    return ((1 - valid) * -1e4)[:, None, None, :].to(dtype)


# ---------------------------------------------------------------- isolated sign recognition from pose landmarks

_LIPS, _LHAND, _RHAND = slice(0, 40), slice(40, 61), slice(61, 82)
_NLM = 130


class _ECA(_nn.Module):
    def __init__(self, k=5):
        super().__init__()
        self.conv = _nn.Conv1d(1, 1, k, padding=k // 2, bias=False)

    def forward(self, x, valid):
        """x (B, T, C), valid (B, T, 1)."""
        s = (x * valid).sum(1) / valid.sum(1).clamp(min=1)
        return x * torch.sigmoid(self.conv(s[:, None])[:, 0])[:, None]


class _ConvBlock(_nn.Module):
    """Expand, depthwise causal convolution, batch norm, efficient channel attention, project, residual."""

    def __init__(self, d, k=17, expand=2):
        super().__init__()
        self.norm = _nn.LayerNorm(d)
        self.up = _nn.Linear(d, d * expand)
        self.dw = _nn.Conv1d(d * expand, d * expand, k, groups=d * expand, bias=False)
        self.bn = _nn.BatchNorm1d(d * expand, momentum=0.05)
        self.eca = _ECA()
        self.down = _nn.Linear(d * expand, d)
        self.k = k

    def forward(self, x, valid):
        h = _F.silu(self.up(self.norm(x))) * valid
        h = self.bn(self.dw(_F.pad(h.transpose(1, 2), (self.k - 1, 0)))).transpose(1, 2)
        h = self.eca(_F.silu(h), valid)
        return x + _F.dropout(self.down(h), 0.2, self.training)


class _SignPoseNet(_nn.Module):
    def __init__(self, feats, d, heads, classes, stacks):
        super().__init__()
        self.stem, self.stem_norm = _nn.Linear(feats, d, bias=False), _nn.LayerNorm(d)
        self.stacks = _nn.ModuleList()
        for _ in range(stacks):
            self.stacks.append(_nn.ModuleList([_ConvBlock(d), _ConvBlock(d), _ConvBlock(d),
                                               PreNormBlock(d, heads, 2 * d)]))
        self.top = _nn.Linear(d, 2 * d)
        self.cls = _nn.Linear(2 * d, classes)

    def forward(self, feats, valid):
        v = valid[..., None]
        x = self.stem_norm(self.stem(feats))
        mask = _key_mask(valid)
        for stack in self.stacks:
            for blk in stack[:3]:
                x = blk(x, v)
            x = stack[3](x, mask=mask.to(x.dtype)) * v
        x = _F.silu(self.top(x))
        pooled = (x * v).sum(1) / v.sum(1).clamp(min=1)
        return self.cls(_F.dropout(pooled, 0.4, self.training))


def _sign_clips(b, t, template):
    """b landmark clips (b, t, 130, 3) with NaNs where a hand was not detected, and the valid-frame mask (b, t)."""
    lens = torch.randint(max(4, t // 3), t + 1, (b, 1), device="cuda")
    valid = (torch.arange(t, device="cuda")[None] < lens).float()
    drift = torch.randn(b, t, _NLM, 3, device="cuda").mul(0.004).cumsum(1)
    x = template[None, None] + drift + torch.randn(b, 1, 1, 3, device="cuda") * 0.05
    hand_id = torch.arange(_NLM, device="cuda")
    left = ((hand_id >= _LHAND.start) & (hand_id < _LHAND.stop)).float()
    right = ((hand_id >= _RHAND.start) & (hand_id < _RHAND.stop)).float()
    miss_l = (torch.rand(b, t, 1, device="cuda") < 0.3).float()
    miss_r = (torch.rand(b, t, 1, device="cuda") < 0.15).float()
    missing = (miss_l * left + miss_r * right)[..., None]
    x = torch.where(missing > 0, torch.full_like(x, float("nan")), x)
    return x, valid


def _sign_augment(x, valid, ratio_t):
    """Affine jitter of x and y, temporal resampling to ratio_t frames, landmark dropout, a time mask."""
    b = x.shape[0]
    ang = (torch.rand(b, device="cuda") - 0.5) * (math.pi / 6)
    sc = 0.8 + 0.4 * torch.rand(b, device="cuda")
    sh = (torch.rand(b, device="cuda") - 0.5) * 0.3
    a = torch.stack([torch.stack([ang.cos() * sc, -ang.sin() * sc + sh], -1),
                     torch.stack([ang.sin() * sc, ang.cos() * sc], -1)], -2)  # (b, 2, 2)
    shift = (torch.rand(b, 1, 1, 2, device="cuda") - 0.5) * 0.1
    xy = torch.einsum("btlc,bdc->btld", x[..., :2] - 0.5, a) + 0.5 + shift
    x = torch.cat([xy, x[..., 2:]], -1)
    x = _F.interpolate(x.flatten(2).transpose(1, 2), size=ratio_t, mode="linear", align_corners=False)
    x = x.transpose(1, 2).unflatten(2, (_NLM, 3))
    valid = _F.interpolate(valid[:, None], size=ratio_t, mode="nearest")[:, 0]
    keep = (torch.rand(b, 1, _NLM, 1, device="cuda") > 0.05).float()
    x = x * keep
    start = torch.randint(0, max(1, ratio_t // 2), (b, 1), device="cuda")
    span = torch.randint(0, max(2, ratio_t // 8), (b, 1), device="cuda")
    pos = torch.arange(ratio_t, device="cuda")[None]
    valid = valid * (1 - ((pos >= start) & (pos < start + span)).float())
    return x, valid


def _sign_features(x, valid, triu):
    """Normalised x, y coordinates, their first and second differences and both hands' pairwise distances:
    (b, t, 130 x 2 x 3 + 2 x 210)."""
    finite = (~torch.isnan(x)).float() * valid[..., None, None]
    x0 = torch.nan_to_num(x, 0.0)
    n = finite.sum((1, 2), keepdim=True).clamp(min=1)
    mean = (x0 * finite).sum((1, 2), keepdim=True) / n
    std = (((x0 - mean) * finite).pow(2).sum((1, 2), keepdim=True) / n).sqrt().clamp(min=1e-3)
    xy = ((x0 - mean) / std * finite)[..., :2]
    dx = _F.pad(xy[:, 1:] - xy[:, :-1], (0, 0, 0, 0, 0, 1))
    dx2 = _F.pad(xy[:, 2:] - xy[:, :-2], (0, 0, 0, 0, 0, 2))
    out = [xy.flatten(2), dx.flatten(2), dx2.flatten(2)]
    for hand in (_LHAND, _RHAND):
        h = xy[:, :, hand]
        dist = (h[:, :, :, None] - h[:, :, None]).pow(2).sum(-1).add(1e-6).sqrt()
        out.append(dist.flatten(2).index_select(2, triu))
    return torch.cat(out, -1) * valid[..., None]


@_workload("isolated sign recognition from pose landmarks (random init, the Kaggle ASL-signs design): clips of 130 lip, hand and body landmarks (x, y, z) a frame drawn on the device as drifting templates, a hand missing in a frame as NaNs, 64-128 clips (drawn) padded to 32-256 frames (drawn, a multiple of 8) at per-clip lengths; on the device an affine jitter, temporal resampling by 0.8-1.2 (drawn) with linear interpolation, landmark dropout and a time mask, then NaN-aware normalisation, first and second differences and both hands' 210 pairwise distances (1,200 features); two stacks of three depthwise causal convolution blocks (kernel 17, expansion 2, batch norm, efficient channel attention) and a transformer block (width 192, 4 heads, key-padding mask), masked mean pooling, 250 signs, label smoothing 0.25, AdamW with a cosine schedule, clipping, bf16 autocast, an EMA of the weights by _foreach_lerp_, 310 steps; the loss read back every 20 steps and every 60 steps the EMA model evaluated on 4 batches of 128 clips x 128 frames with top-1 and top-5 accuracy read back")
def sign_pose_isolated_train(rng):
    d, heads, classes = _smoke(192, 16), _smoke(4, 2), _smoke(250, 10)
    triu = torch.triu_indices(21, 21, 1, device="cuda")
    triu = triu[0] * 21 + triu[1]
    feats = _NLM * 2 * 3 + 2 * 210
    template = torch.rand(_NLM, 3, device="cuda") * 0.6 + 0.2
    model = _SignPoseNet(feats, d, heads, classes, 2).cuda()
    ema = copy.deepcopy(model).eval()
    ema.requires_grad_(False)
    params, ema_params = list(model.parameters()), list(ema.parameters())
    opt = torch.optim.AdamW(params, lr=5e-4, weight_decay=0.05)
    steps = _smoke(310, 3)
    for step in range(steps):
        model.train()
        for g in opt.param_groups:
            g["lr"] = 5e-4 * min(1.0, (step + 1) / 15) * 0.5 * (1 + math.cos(math.pi * step / steps))
        b = rng.randint(_smoke(64, 3), _smoke(128, 5))
        t = randint(rng, _smoke(32, 8), _smoke(256, 16), 8)
        rt = max(8, int(t * rng.uniform(0.8, 1.2)) // 8 * 8)
        with torch.no_grad():
            x, valid = _sign_clips(b, t, template)
            x, valid = _sign_augment(x, valid, rt)
            f = _sign_features(x, valid, triu)
            y = torch.randint(0, classes, (b,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(f, valid)
        loss = _F.cross_entropy(logits.float(), y, label_smoothing=0.25)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        with torch.no_grad():
            torch._foreach_lerp_(ema_params, params, 1 - 0.995)
        if step % 20 == 0:
            loss.item()
        del x, valid, f, y, logits, loss
        if (step + 1) % _smoke(60, 2) == 0:
            hits = []
            with torch.no_grad():
                for _ in range(_smoke(4, 1)):
                    x, valid = _sign_clips(_smoke(128, 4), _smoke(128, 16), template)
                    f = _sign_features(x, valid, triu)
                    y = torch.randint(0, classes, (x.shape[0],), device="cuda")
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        logits = ema(f, valid).float()
                    top5 = logits.topk(5, -1).indices
                    hits.append(torch.stack([(top5[:, 0] == y).float().mean(),
                                             (top5 == y[:, None]).any(-1).float().mean()]))
                    del x, valid, f, y, logits, top5
            torch.stack(hits).mean(0).tolist()
            del hits


# ---------------------------------------------------------------- sign language translation from video


class _BasicBlock(_nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1, self.b1 = _nn.Conv2d(cin, cout, 3, stride, 1, bias=False), _nn.BatchNorm2d(cout)
        self.c2, self.b2 = _nn.Conv2d(cout, cout, 3, 1, 1, bias=False), _nn.BatchNorm2d(cout)
        self.sc = _nn.Sequential(_nn.Conv2d(cin, cout, 1, stride, bias=False), _nn.BatchNorm2d(cout))

    def forward(self, x):
        return _F.relu(self.b2(self.c2(_F.relu(self.b1(self.c1(x))))) + self.sc(x))


class _SignVideoNet(_nn.Module):
    def __init__(self, vocab, d, heads, layers, maxlen):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, 32, 3, 2, 1, bias=False), _nn.BatchNorm2d(32), _nn.ReLU())
        self.cnn = _nn.Sequential(_BasicBlock(32, 64, 2), _BasicBlock(64, 128, 2), _BasicBlock(128, 256, 2))
        self.tconv = _nn.Sequential(_nn.Conv1d(256, 512, 5, padding=2), _nn.BatchNorm1d(512), _nn.ReLU(),
                                    _nn.MaxPool1d(2), _nn.Conv1d(512, 512, 5, padding=2), _nn.BatchNorm1d(512),
                                    _nn.ReLU(), _nn.MaxPool1d(2))
        self.tpos = _nn.Embedding(64, 512)
        self.temporal = _nn.ModuleList(PreNormBlock(512, heads) for _ in range(2))
        self.tnorm, self.bridge = _nn.LayerNorm(512), _nn.Linear(512, d)
        self.dec = _TextDecoder(vocab, d, heads, layers, maxlen)
        self.out_bias = _nn.Parameter(torch.zeros(vocab))

    def encode(self, video, mem_valid):
        """video (B, T, 3, H, W), mem_valid (B, T // 4): memory (B, T // 4, d)."""
        b, t = video.shape[:2]
        f = self.cnn(self.stem(video.flatten(0, 1).contiguous(memory_format=torch.channels_last)))
        f = f.mean((2, 3)).view(b, t, -1)
        h = self.tconv(f.transpose(1, 2)).transpose(1, 2)
        h = h + self.tpos(torch.arange(h.shape[1], device=h.device))
        mask = _key_mask(mem_valid, h.dtype)
        for blk in self.temporal:
            h = blk(h, mask=mask)
        return self.bridge(self.tnorm(h))

    def forward(self, video, mem_valid, ids):
        mem = self.encode(video, mem_valid)
        return self.dec(ids, mem, _key_mask(mem_valid, mem.dtype)) + self.out_bias


@_workload("gloss-free sign language translation from video (random init, PHOENIX-2014T-like): 2-4 signing clips (drawn) of 48-112 frames each (drawn, padded to the longest, a multiple of 4) at 112 x 112 drawn on the device, a small residual CNN (stem 32 channels, three basic blocks to 256, channels-last) over every frame, two temporal convolutions (kernel 5, 512 channels, batch norm) each with max-pooling by 2, a 2-block transformer encoder over the quarter-rate features (width 512, key-padding mask), a 3-block transformer decoder (width 512, 8 heads, vocabulary 2,887 with tied embeddings) cross-attending under a key-padding mask of the valid quarter-rate frames; sentences of 8-30 tokens (drawn per clip), label-smoothed cross-entropy ignoring padding, AdamW, clipping, bf16 autocast, 235 steps; the loss read back every 10 steps and every 50 steps greedy decoding of 30 tokens (full recompute) for 4 held-out clips of 96 frames with the token accuracy read back")
def sign_video_translation_train(rng):
    vocab, d, heads, layers = _smoke(2887, 40), _smoke(512, 32), _smoke(8, 2), _smoke(3, 1)
    res, maxtok = _smoke(112, 32), _smoke(32, 8)
    model = _SignVideoNet(vocab, d, heads, layers, maxtok + 2).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    steps = _smoke(235, 3)

    def batch(nclip, frames, toks):
        t = max(frames)
        video = torch.rand(nclip, t, 3, res, res, device="cuda").sub_(0.45).div_(0.225)
        fl = torch.tensor(frames, device="cuda")
        video = video * (torch.arange(t, device="cuda")[None] < fl[:, None]).float()[:, :, None, None, None]
        mem_valid = (torch.arange(t // 4, device="cuda")[None] < (fl // 4)[:, None]).float()
        s = max(toks) + 2
        tl = torch.tensor(toks, device="cuda")
        pos = torch.arange(s, device="cuda")[None]
        ids = torch.randint(3, vocab, (nclip, s), device="cuda")
        ids = torch.where(pos == 0, torch.ones_like(ids),
                          torch.where(pos == tl[:, None] + 1, torch.full_like(ids, 2), ids))
        ids = ids * (pos <= tl[:, None] + 1).long()
        return video, mem_valid, ids

    for step in range(steps):
        model.train()
        for g in opt.param_groups:
            g["lr"] = 3e-4 * min(1.0, (step + 1) / 10)
        nclip = rng.randint(2, _smoke(4, 2))
        frames = [randint(rng, _smoke(48, 8), _smoke(112, 16), 4) for _ in range(nclip)]
        toks = [rng.randint(_smoke(8, 2), maxtok - 2) for _ in range(nclip)]
        video, mem_valid, ids = batch(nclip, frames, toks)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(video, mem_valid, ids[:, :-1])
        tgt = torch.where(ids[:, 1:] > 0, ids[:, 1:], torch.full_like(ids[:, 1:], -100))
        loss = _F.cross_entropy(logits.float().flatten(0, 1), tgt.flatten(), ignore_index=-100, label_smoothing=0.1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            loss.item()
        del video, mem_valid, ids, logits, tgt, loss
        if (step + 1) % _smoke(50, 2) == 0:
            model.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                n = _smoke(4, 2)
                video, mem_valid, ids = batch(n, [_smoke(96, 16)] * n, [maxtok - 2] * n)
                mem = model.encode(video, mem_valid)
                mask = _key_mask(mem_valid, mem.dtype)
                out = ids[:, :1]
                for _t in range(maxtok - 2):
                    nxt = (model.dec(out, mem, mask)[:, -1] + model.out_bias).argmax(-1)
                    out = torch.cat([out, nxt[:, None]], 1)
                acc = (out[:, 1:] == ids[:, 1:maxtok - 1]).float().mean()
            acc.item()
            del video, mem_valid, ids, mem, mask, out, nxt, acc


# ---------------------------------------------------------------- alt-text captioning service


class _ViT(_nn.Module):
    def __init__(self, d, heads, layers, patch, grid):
        super().__init__()
        self.patch = _nn.Conv2d(3, d, patch, patch)
        self.cls = _nn.Parameter(torch.zeros(1, 1, d))
        self.pos = _nn.Parameter(torch.randn(1, grid * grid + 1, d) * 0.02)
        self.grid = grid
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)

    def forward(self, x):
        p = self.patch(x)
        b, d, gh, gw = p.shape
        pos = self.pos[:, 1:].view(1, self.grid, self.grid, d).permute(0, 3, 1, 2)
        pos = _F.interpolate(pos, size=(gh, gw), mode="bicubic", align_corners=False).flatten(2).transpose(1, 2)
        h = torch.cat([self.cls.expand(b, 1, d) + self.pos[:, :1], p.flatten(2).transpose(1, 2) + pos], 1)
        for blk in self.blocks:
            h = blk(h)
        return self.norm(h)


@_workload("alt-text image captioning service for screen-reader users (random init, a ViT-S/16 encoder and a 4-block caption decoder): 48-54 requests (drawn) of 1-8 images (log-uniform) at 256-512 pixels square (drawn), the uint8 pixels of each request uploaded on a side stream from two reused pinned host buffers one request ahead (waited on by event, record_stream'ed); on the device bilinear resizing to 224 or 384 (drawn, the detailed mode), normalisation, the ViT (12 blocks, width 384, 6 heads, position embeddings interpolated bicubically to the grid) under bf16 autocast; beam search of width 4 for 16-32 tokens (drawn) over a vocabulary of 16,384 with a KV cache (self-attention keys and values concatenated a step, reordered by index_select across beams; cross-attention keys and values cached once), finished beams held by an EOS-only row, a length penalty; each request's best captions and scores read back")
def alt_text_caption_beam_serve(rng):
    d, heads, layers, dec_layers = _smoke(384, 16), _smoke(6, 2), _smoke(12, 1), _smoke(4, 1)
    vocab, beam, patch = _smoke(16384, 64), _smoke(4, 2), 16
    bos, eos = 1, 2
    maxres = _smoke(512, 64)
    enc = _ViT(d, heads, layers, patch, _smoke(24, 4)).cuda().eval()
    dec = _TextDecoder(vocab, d, heads, dec_layers, _smoke(40, 12)).cuda().eval()
    enc.requires_grad_(False)
    dec.requires_grad_(False)
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1) * 255
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1) * 255
    maxb = 8
    host = [torch.randint(0, 256, (maxb * 3 * maxres * maxres,), dtype=torch.uint8).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    eos_row = torch.full((vocab,), -1e9, device="cuda")
    eos_row[eos] = 0.0

    def draw():
        return (_loguniform(rng, 1, maxb), rng.choice(_smoke([256, 320, 384, 448, 512], [32, 48])),
                rng.choice(_smoke([224, 384], [32, 48])), rng.randint(_smoke(16, 3), _smoke(32, 5)))

    nreq = rng.randint(_smoke(48, 3), _smoke(54, 4))
    plan = [draw() for _ in range(nreq)]
    nxt = up.upload(0, plan[0][0] * 3 * plan[0][1] ** 2)
    for i in range(nreq):
        b, rin, rmodel, ntok = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, plan[i + 1][0] * 3 * plan[i + 1][1] ** 2)
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            img = raw.view(b, 3, rin, rin).float()
            img = _F.interpolate(img, size=(rmodel, rmodel), mode="bilinear", align_corners=False)
            img = (img - mean) / std
            with torch.autocast("cuda", dtype=torch.bfloat16):
                mem = enc(img).repeat_interleave(beam, 0)
            nb = b * beam
            scores = torch.full((b, beam), -1e9, device="cuda")
            scores[:, 0] = 0.0
            scores = scores.flatten()
            fin = torch.zeros(nb, device="cuda")
            length = torch.zeros(nb, device="cuda")
            ids = torch.full((nb, 1), bos, dtype=torch.long, device="cuda")
            caches = [{} for _ in range(dec_layers)]
            base = (torch.arange(b, device="cuda") * beam)[:, None]
            for t in range(ntok):
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = dec(ids[:, -1:], mem, caches=caches, start=t)[:, 0]
                logp = torch.log_softmax(logits.float(), -1)
                logp = torch.where(fin[:, None] > 0, eos_row[None], logp)
                cand = (scores[:, None] + logp).view(b, beam * vocab)
                top_s, top_i = cand.topk(beam, -1)
                src = (base + top_i // vocab).flatten()
                tok = (top_i % vocab).flatten()
                for c in caches:
                    c["k"], c["v"] = c["k"].index_select(0, src), c["v"].index_select(0, src)
                ids = torch.cat([ids.index_select(0, src), tok[:, None]], 1)
                fin = fin.index_select(0, src)
                length = length.index_select(0, src) + (1 - fin)
                fin = torch.maximum(fin, (tok == eos).float())
                scores = top_s.flatten()
                del logits, logp, cand, top_s, top_i, src, tok
            final = (scores / length.clamp(min=1)).view(b, beam)
            best_s, best = final.max(-1)
            caption = ids.view(b, beam, -1).gather(1, best[:, None, None].expand(b, 1, ids.shape[1]))[:, 0]
        caption.tolist()
        best_s.tolist()
        del item, raw, img, mem, scores, fin, length, ids, caches, final, best_s, best, caption


# ---------------------------------------------------------------- text simplification with control tokens


class _Seq2Seq(_nn.Module):
    def __init__(self, vocab, d, heads, layers, maxlen):
        super().__init__()
        self.emb = _nn.Embedding(vocab, d)
        self.pos = _nn.Embedding(maxlen, d)
        self.enc = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.enc_norm = _nn.LayerNorm(d)
        self.dec = _TextDecoder(vocab, d, heads, layers, maxlen, tie=self.emb)

    def encode(self, src, src_valid):
        h = self.emb(src) + self.pos(torch.arange(src.shape[1], device=src.device))
        mask = _key_mask(src_valid)
        for blk in self.enc:
            h = blk(h, mask=mask.to(h.dtype))
        return self.enc_norm(h), mask


def _simplification_pairs(b, slen, tlen, vocab, nctrl, bins):
    """b complex sentences (with 4 ACCESS control tokens in front) of up to slen tokens and their simplifications
    of up to tlen tokens (BOS ... EOS): src, src_valid (float), tgt ids (0 padding)."""
    sl = torch.randint(max(4, slen // 3), slen + 1, (b, 1), device="cuda")
    spos = torch.arange(slen, device="cuda")[None]
    src_valid = (spos < sl).float()
    words = torch.randint(4 + nctrl * bins, vocab, (b, slen), device="cuda")
    src = words * src_valid.long()
    ctrl = 4 + torch.arange(nctrl, device="cuda")[None] * bins + torch.randint(0, bins, (b, nctrl), device="cuda")
    src = torch.cat([ctrl, src], 1)
    src_valid = torch.cat([torch.ones(b, nctrl, device="cuda"), src_valid], 1)
    ratio = 0.5 + 0.5 * torch.rand(b, 1, device="cuda")
    tl = (sl.float() * ratio).long().clamp(2, tlen - 2)
    tpos = torch.arange(tlen, device="cuda")[None]
    keep = torch.rand(b, tlen, device="cuda") < 0.7
    body = torch.where(keep, words[:, :tlen] if slen >= tlen else torch.cat(
        [words, words[:, :tlen - slen]], 1), torch.randint(4 + nctrl * bins, vocab, (b, tlen), device="cuda"))
    tgt = torch.where(tpos == 0, torch.ones_like(body), torch.where(tpos == tl + 1, torch.full_like(body, 2), body))
    tgt = tgt * (tpos <= tl + 1).long()
    return src, src_valid, tgt


def _histogram(ids, valid, vocab):
    """Per-row token counts (B, vocab) of ids (B, L) weighted by valid."""
    return torch.zeros(ids.shape[0], vocab, device=ids.device).scatter_add_(1, ids, valid)


@_workload("text simplification fine-tuning with ACCESS-style control tokens (random init, a BART-base-like 6 + 6 layer encoder-decoder, width 512, 8 heads, vocabulary 32,000 with tied embeddings): complex sentences of 32-112 tokens (drawn a batch, per-sentence lengths on the device) prefixed by 4 control tokens (character-length ratio, Levenshtein similarity, word rank, dependency depth; 20 bins each), simplifications of 24-96 tokens sharing most of their words, 24-56 pairs a step (drawn); label-smoothed cross-entropy ignoring padding, AdamW with warmup and inverse-square-root decay, clipping, bf16 autocast, 130 steps; the loss read back every 10 steps and every 30 steps KV-cached greedy decoding of 64 held-out sentences for 48 tokens with compression ratios and unigram keep, add and overlap statistics from device histograms over the vocabulary read back")
def text_simplification_control_finetune(rng):
    vocab, d, heads, layers = _smoke(32000, 200), _smoke(512, 16), _smoke(8, 2), _smoke(6, 1)
    nctrl, bins = 4, _smoke(20, 4)
    maxlen = _smoke(128, 40)
    model = _Seq2Seq(vocab, d, heads, layers, maxlen).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01, betas=(0.9, 0.98))
    steps = _smoke(130, 3)
    for step in range(steps):
        model.train()
        for g in opt.param_groups:
            g["lr"] = 3e-4 * min((step + 1) / 10, math.sqrt(10 / (step + 1)))
        b = rng.randint(_smoke(24, 2), _smoke(56, 4))
        slen = randint(rng, _smoke(32, 8), _smoke(112, 16), 8)
        tlen = randint(rng, _smoke(24, 8), min(slen, _smoke(96, 16)), 8)
        src, src_valid, tgt = _simplification_pairs(b, slen, tlen, vocab, nctrl, bins)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            mem, mask = model.encode(src, src_valid)
            logits = model.dec(tgt[:, :-1], mem, mask.to(mem.dtype))
        lab = torch.where(tgt[:, 1:] > 0, tgt[:, 1:], torch.full_like(tgt[:, 1:], -100))
        loss = _F.cross_entropy(logits.float().flatten(0, 1), lab.flatten(), ignore_index=-100, label_smoothing=0.1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            loss.item()
        del src, src_valid, tgt, mem, mask, logits, lab, loss
        if (step + 1) % _smoke(30, 2) == 0:
            model.eval()
            n, ntok = _smoke(64, 3), _smoke(48, 6)
            with torch.no_grad():
                src, src_valid, tgt = _simplification_pairs(n, _smoke(96, 12), _smoke(64, 10), vocab, nctrl, bins)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    mem, mask = model.encode(src, src_valid)
                    mask = mask.to(mem.dtype)
                    caches = [{} for _ in range(layers)]
                    out = torch.ones(n, 1, dtype=torch.long, device="cuda")
                    done = torch.zeros(n, 1, device="cuda")
                    glen = torch.zeros(n, device="cuda")
                    for t in range(ntok):
                        nxt = model.dec(out[:, -1:], mem, mask, caches=caches, start=t)[:, -1].argmax(-1, keepdim=True)
                        nxt = torch.where(done > 0, torch.zeros_like(nxt), nxt)
                        glen = glen + (1 - done[:, 0])
                        done = torch.maximum(done, (nxt == 2).float())
                        out = torch.cat([out, nxt], 1)
                gvalid = (out[:, 1:] > 2).float()
                hg = _histogram(out[:, 1:], gvalid, vocab)
                hs = _histogram(src, (src > 4 + nctrl * bins - 1).float() * src_valid, vocab)
                hr = _histogram(tgt, (tgt > 2).float(), vocab)
                keep = torch.minimum(torch.minimum(hg, hs), hr).sum(1) / torch.minimum(hs, hr).sum(1).clamp(min=1)
                add = (torch.minimum(hg, hr) - torch.minimum(torch.minimum(hg, hr), hs)).sum(1) \
                    / (hr - torch.minimum(hr, hs)).sum(1).clamp(min=1)
                overlap = torch.minimum(hg, hr).sum(1) / hg.sum(1).clamp(min=1)
                comp = glen / src_valid.sum(1)
                stats = torch.stack([keep, add, overlap, comp]).mean(1)
            stats.tolist()
            del src, src_valid, tgt, mem, mask, caches, out, done, glen, nxt, gvalid, hg, hs, hr, keep, add
            del overlap, comp, stats

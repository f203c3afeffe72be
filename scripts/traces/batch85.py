"""The eighty-fifth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch83_b.py are): logistics, warehousing and supply chain, written in torch alone, first half. Vehicle routing
training (an attention-model encoder over a depot and a drawn number of customer stops with drawn demands, a pointer
decoder that builds capacitated routes stop by stop under a feasibility mask, REINFORCE against a greedy-rollout
baseline), warehouse picking-robot grasp generation training (a convolutional encoder over RGB-D bin images with a
segmentation head and a diffusion transformer that denoises a drawn number of 6-DoF grasp poses per bin under a mask,
DDIM sampling at evaluation points), parcel label reading training (a convolutional and transformer recogniser over
grayscale label crops of drawn widths padded per batch, an autoregressive character decoder over tracking numbers and
addresses of drawn lengths, greedy decoding at evaluation points) and SKU demand forecasting training (a patch
transformer over daily sales histories of drawn lengths per series, masked at the start, with static SKU, store and
category embeddings and a horizon decoder over known future prices and promotions, quantile loss). Same conventions as
the earlier batches: nothing downloaded, data drawn at random on the device, `rng` the workload's random.Random for
every shape, count and sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No
control flow reads a tensor's value: stop counts, decode lengths, grasp counts, label lengths, history lengths and
batch sizes are fixed on the host, padding and feasibility handled by masks multiplied in or by torch.where /
masked_fill, no boolean-mask indexing; losses and metrics are read back only at logging points. All four are
single-stream. The models run under bf16 autocast. Every position table is sized for the longest padded length that
can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new85.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and for
which of them the CPU smoke run (RECORD_SMOKE=1) ran.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, _mha, _sincos, mlp, randint

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _loguniform(rng, lo, hi, mult=1):
    return _b.rec._loguniform(rng, lo, hi, mult)


# ---------------------------------------------------------------- capacitated vehicle routing by policy gradient


class _Router(_nn.Module):
    """Kool et al.'s attention model for the CVRP: a transformer encoder over the depot and the stops, a decoder
    whose context (graph mean, current stop, remaining capacity) glimpses the stops and points at the next one."""

    def __init__(self, d, heads, layers):
        super().__init__()
        self.d, self.heads = d, heads
        self.depot_in, self.node_in = _nn.Linear(2, d), _nn.Linear(3, d)
        self.enc = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.kvl = _nn.Linear(d, 3 * d, bias=False)
        self.ctx = _nn.Linear(2 * d + 1, d, bias=False)
        self.out = _nn.Linear(d, d, bias=False)

    def encode(self, depot, stops, demand):
        h = torch.cat([self.depot_in(depot)[:, None], self.node_in(torch.cat([stops, demand[:, :, None]], -1))], 1)
        for blk in self.enc:
            h = blk(h)
        return h


def _route(model, depot, stops, demand, steps, greedy):
    """Routes for a batch of instances decoded for `steps` steps: (sum of log-probabilities, cost). demand (B, n)
    is a share of the vehicle's capacity; visiting the depot refills it. Stops left unvisited cost a penalty."""
    b, n = demand.shape
    with torch.autocast("cuda", dtype=torch.bfloat16):
        h = model.encode(depot, stops, demand)
        gk, gv, lk = model.kvl(h).chunk(3, -1)
    graph = h.mean(1)
    coords = torch.cat([depot[:, None], stops], 1)
    dem = torch.cat([torch.zeros(b, 1, device="cuda"), demand], 1)
    visited = torch.zeros(b, n + 1, dtype=torch.bool, device="cuda")
    hit = torch.ones(b, 1, dtype=torch.bool, device="cuda")
    cur = torch.zeros(b, dtype=torch.long, device="cuda")
    rem = torch.ones(b, device="cuda")
    logp, length = torch.zeros(b, device="cuda"), torch.zeros(b, device="cuda")
    is_depot = torch.arange(n + 1, device="cuda")[None] == 0
    for _ in range(steps):
        cur_h = h.gather(1, cur[:, None, None].expand(-1, 1, h.shape[-1]))[:, 0]
        done = visited[:, 1:].all(1)
        infeas = torch.where(is_depot, ((cur != 0) | done)[:, None].logical_not(),
                             visited | (dem > rem[:, None] + 1e-6))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            q = model.ctx(torch.cat([graph, cur_h, rem[:, None].to(h.dtype)], -1))
            g = model.out(_mha(q[:, None], gk, gv, model.heads, attn_mask=infeas.logical_not()[:, None, None, :]))
            compat = (g * lk).sum(-1).float()
        logits = (10 * torch.tanh(compat / math.sqrt(model.d))).masked_fill(infeas, -1e9)
        lp = torch.log_softmax(logits, -1)
        nxt = lp.argmax(-1) if greedy else torch.multinomial(lp.exp(), 1)[:, 0]
        logp = logp + lp.gather(1, nxt[:, None])[:, 0]
        pc = coords.gather(1, cur[:, None, None].expand(-1, 1, 2))[:, 0]
        nc = coords.gather(1, nxt[:, None, None].expand(-1, 1, 2))[:, 0]
        length = length + (nc - pc).norm(dim=-1)
        rem = torch.where(nxt == 0, torch.ones_like(rem), rem - dem.gather(1, nxt[:, None])[:, 0])
        visited = visited.scatter(1, nxt[:, None], hit)
        cur = nxt
    length = length + (coords.gather(1, cur[:, None, None].expand(-1, 1, 2))[:, 0] - depot).norm(dim=-1)
    unserved = visited[:, 1:].logical_not().float().sum(1)
    return logp, length + 2.0 * unserved


@_workload("capacitated vehicle routing training (random init, Kool et al.'s attention model for last-mile dispatch): 20-60 customer stops a step (drawn) with demands of 1-9 units against a vehicle capacity of 30-50 (drawn per step), 64-256 instances a step (log-uniform, a multiple of 16); a 3-layer transformer encoder (width 128, 8 heads) over the depot and the stops, a pointer decoder run for n + n/4 + 2 steps whose context of the graph mean, the current stop and the remaining capacity glimpses the stops by SDPA under a feasibility mask (visited stops, demands above the remaining capacity, the depot twice in a row), sampled next stops, capacity refilled at the depot by torch.where, unserved stops penalised; REINFORCE with a greedy rollout of the same model as the baseline, Adam, clipping, bf16 autocast, 44 steps; the costs read back every 10 steps and every 22 steps a greedy evaluation of 512 instances of 50 stops with the mean route length read back")
def vrp_attention_reinforce_train(rng):
    d, heads, layers = _smoke(128, 16), _smoke(8, 2), _smoke(3, 1)
    model = _Router(d, heads, layers).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)

    def instances(b, n):
        cap = rng.randint(30, 50)
        depot = torch.rand(b, 2, device="cuda")
        stops = torch.rand(b, n, 2, device="cuda")
        demand = torch.randint(1, 10, (b, n), device="cuda").float() / cap
        return depot, stops, demand

    steps = _smoke(44, 3)
    for step in range(steps):
        model.train()
        n = rng.randint(_smoke(20, 4), _smoke(60, 7))
        b = _loguniform(rng, _smoke(64, 4), _smoke(256, 8), _smoke(16, 4))
        depot, stops, demand = instances(b, n)
        dec = n + n // 4 + 2
        logp, cost = _route(model, depot, stops, demand, dec, greedy=False)
        with torch.no_grad():
            model.eval()
            _, base = _route(model, depot, stops, demand, dec, greedy=True)
        loss = ((cost - base) * logp).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([cost.mean(), base.mean(), loss.detach()]).tolist()
        del depot, stops, demand, logp, cost, base, loss
        if (step + 1) % _smoke(22, 2) == 0:
            model.eval()
            with torch.no_grad():
                depot, stops, demand = instances(_smoke(512, 8), _smoke(50, 6))
                _, cost = _route(model, depot, stops, demand, _smoke(50, 6) + _smoke(50, 6) // 4 + 2, greedy=True)
            cost.mean().item()
            del depot, stops, demand, cost


# ---------------------------------------------------------------- picking-robot grasp pose diffusion


def _cbr(cin, cout, stride=1):
    return _nn.Sequential(_nn.Conv2d(cin, cout, 3, stride, 1, bias=False), _nn.BatchNorm2d(cout), _nn.ReLU())


class _BinEncoder(_nn.Module):
    """RGB-D bin image to stride-16 features (tokens) and a stride-4 segmentation of background, items and tote."""

    def __init__(self, widths, d, classes):
        super().__init__()
        self.stages, c = _nn.ModuleList(), 4
        for w in widths:
            self.stages.append(_nn.Sequential(_cbr(c, w, 2), _cbr(w, w)))
            c = w
        self.lat = _nn.ModuleList(_nn.Conv2d(w, 64, 1) for w in widths[1:])
        self.seg = _nn.Sequential(_cbr(64, 64), _nn.Conv2d(64, classes, 1))
        self.tok = _nn.Conv2d(widths[-1], d, 1)

    def forward(self, x):
        feats = []
        for s in self.stages:
            x = s(x)
            feats.append(x)
        top = self.lat[-1](feats[-1])
        for lat, f in zip(reversed(self.lat[:-1]), reversed(feats[1:-1])):
            top = lat(f) + _F.interpolate(top, size=f.shape[-2:], mode="nearest")
        return self.tok(feats[-1]).flatten(2).transpose(1, 2), self.seg(top)


class _GraspDenoiser(_nn.Module):
    def __init__(self, pose, d, heads, layers):
        super().__init__()
        self.inp, self.t_mlp = _nn.Linear(pose, d), mlp(d, d, d, act=_nn.SiLU)
        self.kind = _nn.Parameter(torch.zeros(2, d))
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm, self.out = _nn.LayerNorm(d), _nn.Linear(d, pose)

    def forward(self, poses, t, img_tok, img_pos, key):
        g = self.inp(poses) + self.t_mlp(_sincos(t, self.inp.out_features).to(poses.dtype))[:, None] + self.kind[1]
        x = torch.cat([img_tok + img_pos + self.kind[0], g], 1)
        for blk in self.blocks:
            x = blk(x, mask=key)
        return self.out(self.norm(x[:, img_tok.shape[1]:]))


@_workload("picking-robot grasp generation training (random init, a diffusion grasp sampler for a warehouse bin-picking cell): 8-24 RGB-D bin images a step (drawn) at 128-256 pixels (a multiple of 32, drawn per step), each with 1-32 annotated grasps (drawn per image, padded to the step's longest and masked) as 10-d poses (position, 6-d rotation, gripper width); a 4-stage convolutional encoder (48-96-192-384 channels, batch norm) with an FPN segmentation head (background, item, tote wall) at stride 4 and stride-16 image tokens with 2-d sine positions; a 6-block diffusion transformer (width 256, 8 heads) over the image tokens and the noised grasps under a key mask, 1,000-step cosine schedule, epsilon loss masked to the real grasps plus the segmentation cross-entropy; AdamW, clipping, bf16 autocast, 290 steps; the losses read back every 20 steps and every 72 steps 16 grasps for each of 8 bins sampled by 20 DDIM steps and read back")
def bin_grasp_diffusion_train(rng):
    widths, d, heads, layers = _smoke([48, 96, 192, 384], [4, 8, 8, 16]), _smoke(256, 16), _smoke(8, 2), _smoke(6, 1)
    pose, classes, max_g, T = 10, 3, _smoke(32, 4), 1000
    enc = _BinEncoder(widths, d, classes).cuda().to(memory_format=torch.channels_last)
    den = _GraspDenoiser(pose, d, heads, layers).cuda()
    params = list(enc.parameters()) + list(den.parameters())
    opt = torch.optim.AdamW(params, lr=2e-4, weight_decay=0.01)
    s = torch.arange(T + 1, device="cuda").float() / T
    abar = (torch.cos((s + 0.008) / 1.008 * math.pi / 2) ** 2)
    abar = (abar[1:] / abar[0]).clamp(1e-5, 1.0)

    def img_pos(hw):
        hh, ww = hw
        ys = _sincos(torch.arange(hh, device="cuda").repeat_interleave(ww), d // 2)
        xs = _sincos(torch.arange(ww, device="cuda").repeat(hh), d // 2)
        return torch.cat([ys, xs], -1)[None]

    def images(b, r):
        x = torch.randn(b, 4, r, r, device="cuda").contiguous(memory_format=torch.channels_last)
        return x, torch.randint(0, classes, (b, r // 4, r // 4), device="cuda")

    steps = _smoke(290, 3)
    for step in range(steps):
        enc.train()
        den.train()
        b, r = rng.randint(_smoke(8, 2), _smoke(24, 3)), randint(rng, _smoke(128, 64), _smoke(256, 96), 32)
        counts = [rng.randint(1, max_g) for _ in range(b)]
        g = max(counts)
        x, seg_t = images(b, r)
        gmask = (torch.arange(g, device="cuda")[None] < torch.tensor(counts, device="cuda")[:, None]).float()
        poses = torch.randn(b, g, pose, device="cuda")
        t = torch.randint(0, T, (b,), device="cuda")
        noise = torch.randn_like(poses)
        a = abar[t][:, None, None]
        noisy = a.sqrt() * poses + (1 - a).sqrt() * noise
        with torch.autocast("cuda", dtype=torch.bfloat16):
            tok, seg = enc(x)
            n_tok = tok.shape[1]
            key = torch.cat([torch.zeros(b, n_tok, device="cuda"), (1 - gmask) * -1e4], 1)[:, None, None, :]
            pred = den(noisy, t, tok, img_pos((r // 16, r // 16)).to(tok.dtype), key.to(tok.dtype))
        eps = ((pred.float() - noise).pow(2).mean(-1) * gmask).sum() / gmask.sum()
        seg_loss = _F.cross_entropy(seg.float(), seg_t)
        loss = eps + 0.5 * seg_loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([eps.detach(), seg_loss.detach()]).tolist()
        del x, seg_t, gmask, poses, t, noise, a, noisy, tok, seg, key, pred, eps, seg_loss, loss
        if (step + 1) % _smoke(72, 2) == 0:
            enc.eval()
            den.eval()
            nb, ng, r = _smoke(8, 2), _smoke(16, 3), _smoke(256, 96)
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                x, _ = images(nb, r)
                tok, _ = enc(x)
                pos = img_pos((r // 16, r // 16)).to(tok.dtype)
                p = torch.randn(nb, ng, pose, device="cuda")
                n_ddim = _smoke(20, 3)
                ts = [round((T - 1) * (1 - i / (n_ddim - 1))) for i in range(n_ddim)]  # on the host
                for i in range(n_ddim):
                    tt = torch.full((nb,), ts[i], dtype=torch.long, device="cuda")
                    a = abar[tt][:, None, None]
                    a_prev = abar[ts[i + 1]].expand(nb)[:, None, None] if i + 1 < n_ddim else torch.ones_like(a)
                    e = den(p.to(tok.dtype), tt, tok, pos, None).float()
                    x0 = (p - (1 - a).sqrt() * e) / a.sqrt()
                    p = a_prev.sqrt() * x0 + (1 - a_prev).sqrt() * e
                    del tt, a, a_prev, e, x0
            p.cpu()
            del x, tok, pos, p, ts


# ---------------------------------------------------------------- parcel label reading (OCR)


class _LabelReader(_nn.Module):
    """A VGG-style backbone collapsing a 48-pixel-high crop to a width/4 sequence, a transformer encoder with a
    learned position table, and an autoregressive transformer decoder over characters."""

    def __init__(self, widths, d, heads, enc_layers, dec_layers, vocab, max_src, max_tgt):
        super().__init__()
        mods, c = [], 1
        for i, w in enumerate(widths):
            stride = (2, 2) if i < 2 else (2, 1)
            mods += [_nn.Conv2d(c, w, 3, 1, 1, bias=False), _nn.BatchNorm2d(w), _nn.ReLU(),
                     _nn.Conv2d(w, w, 3, stride, 1, bias=False), _nn.BatchNorm2d(w), _nn.ReLU()]
            c = w
        self.cnn = _nn.Sequential(*mods)
        self.proj = _nn.Linear(c, d)
        self.src_pos, self.tgt_pos = _nn.Embedding(max_src, d), _nn.Embedding(max_tgt, d)
        self.enc = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(enc_layers))
        self.tok = _nn.Embedding(vocab, d)
        self.heads = heads
        self.dec = _nn.ModuleList(_nn.ModuleDict(dict(
            n1=_nn.LayerNorm(d), qkv=_nn.Linear(d, 3 * d), o1=_nn.Linear(d, d), n2=_nn.LayerNorm(d),
            q=_nn.Linear(d, d), kv=_nn.Linear(d, 2 * d), o2=_nn.Linear(d, d), n3=_nn.LayerNorm(d),
            ff=mlp(d, 4 * d, d, act=_nn.GELU))) for _ in range(dec_layers))
        self.norm, self.head = _nn.LayerNorm(d), _nn.Linear(d, vocab)

    def encode(self, img, key):
        f = self.cnn(img).mean(2).transpose(1, 2)  # (B, W/4, C)
        x = self.proj(f) + self.src_pos(torch.arange(f.shape[1], device=img.device))[None]
        for blk in self.enc:
            x = blk(x, mask=key)
        return x

    def decode(self, ids, mem, key):
        x = self.tok(ids) + self.tgt_pos(torch.arange(ids.shape[1], device=ids.device))[None]
        for L in self.dec:
            q, k, v = L["qkv"](L["n1"](x)).chunk(3, -1)
            x = x + L["o1"](_mha(q, k, v, self.heads, is_causal=True))
            k2, v2 = L["kv"](mem).chunk(2, -1)
            x = x + L["o2"](_mha(L["q"](L["n2"](x)), k2, v2, self.heads, attn_mask=key))
            x = x + L["ff"](L["n3"](x))
        return self.head(self.norm(x))


@_workload("parcel label reading training (random init, a transformer OCR for shipping labels): 32-96 grayscale label-line crops a step (drawn) 48 pixels high, each of its own width of 96-512 pixels (drawn per crop, padded to the step's widest, a multiple of 32) with a tracking number, postcode or address line of 4-30 characters (drawn per crop, 96 symbols plus pad, BOS and EOS, padded to the step's longest); a 4-stage VGG-style backbone (64-128-256-256 channels, batch norm) collapsed to a width/4 sequence, a 4-block transformer encoder (width 256, 8 heads) under the width mask with a 128-row position table (the widest padded crop's 128 columns), a 3-layer autoregressive decoder (causal self-attention, cross-attention under the width mask) with a 32-row position table (30 characters plus BOS and EOS); cross-entropy ignoring pads, AdamW, clipping, bf16 autocast, 236 steps; the loss read back every 20 steps and every 59 steps 64 crops at 384 pixels read by greedy decoding of 32 steps with the character accuracy read back")
def parcel_label_ocr_train(rng):
    widths, d, heads = _smoke([64, 128, 256, 256], [4, 8, 8, 16]), _smoke(256, 16), _smoke(8, 2)
    enc_l, dec_l, n_sym, max_chars = _smoke(4, 1), _smoke(3, 1), 96, _smoke(30, 8)
    max_w, min_w, vocab = _smoke(512, 64), _smoke(96, 32), n_sym + 3
    pad, bos, eos = 0, 1, 2
    model = _LabelReader(widths, d, heads, enc_l, dec_l, vocab, max_w // 4, max_chars + 2).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.02)

    def batch(b, ws, lens):
        w = -(-max(ws) // 32) * 32
        img = torch.rand(b, 1, 48, w, device="cuda")
        cols = torch.arange(w, device="cuda")[None]
        wmask = (cols < torch.tensor(ws, device="cuda")[:, None]).float()
        img = (img * wmask[:, None, None, :]).contiguous(memory_format=torch.channels_last)
        valid = (torch.arange(w // 4, device="cuda")[None] * 4 < torch.tensor(ws, device="cuda")[:, None]).float()
        key = ((1 - valid) * -1e4)[:, None, None, :]
        s = max(lens) + 2
        pos = torch.arange(s, device="cuda")[None]
        ln = torch.tensor(lens, device="cuda")[:, None]
        chars = torch.randint(3, vocab, (b, s), device="cuda")
        seq = torch.where(pos == 0, bos, torch.where(pos <= ln, chars, torch.where(pos == ln + 1, eos, pad)))
        return img, key, seq

    steps = _smoke(236, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(32, 2), _smoke(96, 4))
        ws = [rng.randint(min_w, max_w) for _ in range(b)]
        lens = [rng.randint(4, max_chars) for _ in range(b)]
        img, key, seq = batch(b, ws, lens)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            mem = model.encode(img, key)
            logits = model.decode(seq[:, :-1], mem, key.to(mem.dtype))
        loss = _F.cross_entropy(logits.float().flatten(0, 1), seq[:, 1:].flatten(), ignore_index=pad)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.item()
        del img, key, seq, mem, logits, loss
        if (step + 1) % _smoke(59, 2) == 0:
            model.eval()
            nb = _smoke(64, 3)
            lens = [rng.randint(4, max_chars) for _ in range(nb)]
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                img, key, seq = batch(nb, [_smoke(384, 48)] * nb, lens)
                mem = model.encode(img, key)
                key = key.to(mem.dtype)
                out = torch.full((nb, 1), bos, device="cuda")
                for _ in range(max_chars + 1):
                    nxt = model.decode(out, mem, key)[:, -1].argmax(-1)
                    out = torch.cat([out, nxt[:, None]], 1)
                s = min(out.shape[1], seq.shape[1])
                real = (seq[:, 1:s] != pad).float()
                acc = ((out[:, 1:s] == seq[:, 1:s]).float() * real).sum() / real.sum()
            acc.item()
            del img, key, seq, mem, out, nxt, real, acc


# ---------------------------------------------------------------- SKU demand forecasting


class _PatchForecaster(_nn.Module):
    def __init__(self, d, heads, enc_layers, dec_layers, patch, feats, horizon, max_patches, n_sku, n_store, n_cat):
        super().__init__()
        self.patch, self.heads = patch, heads
        self.dow = _nn.Embedding(7, 8)
        self.patch_in = _nn.Linear(patch * (feats + 8), d)
        self.sku, self.store, self.cat = _nn.Embedding(n_sku, d), _nn.Embedding(n_store, d), _nn.Embedding(n_cat, d)
        self.pos = _nn.Embedding(max_patches + 1, d)
        self.enc = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(enc_layers))
        self.fut_in = _nn.Linear(2 + 8, d)
        self.h_pos = _nn.Embedding(horizon, d)
        self.dec = _nn.ModuleList(_nn.ModuleDict(dict(
            n1=_nn.LayerNorm(d), q=_nn.Linear(d, d), kv=_nn.Linear(d, 2 * d), o=_nn.Linear(d, d),
            n2=_nn.LayerNorm(d), ff=mlp(d, 4 * d, d, act=_nn.GELU))) for _ in range(dec_layers))
        self.norm, self.head = _nn.LayerNorm(d), _nn.Linear(d, 3)

    def forward(self, hist, hist_dow, fut, fut_dow, static, key):
        b, L, _ = hist.shape
        x = torch.cat([hist, self.dow(hist_dow)], -1).view(b, L // self.patch, -1)
        x = self.patch_in(x)
        s = self.sku(static[:, 0]) + self.store(static[:, 1]) + self.cat(static[:, 2])
        x = torch.cat([s[:, None], x], 1)
        x = x + self.pos(torch.arange(x.shape[1], device=x.device))[None]
        for blk in self.enc:
            x = blk(x, mask=key)
        h = self.fut_in(torch.cat([fut, self.dow(fut_dow)], -1)) + self.h_pos(
            torch.arange(fut.shape[1], device=x.device))[None] + s[:, None]
        for L_ in self.dec:
            k, v = L_["kv"](x).chunk(2, -1)
            h = h + L_["o"](_mha(L_["q"](L_["n1"](h)), k, v, self.heads, attn_mask=key))
            h = h + L_["ff"](L_["n2"](h))
        return self.head(self.norm(h))


@_workload("SKU demand forecasting training (random init, a PatchTST-style transformer for replenishment): 256-1024 series a step (log-uniform, a multiple of 64) of (SKU, store) pairs from 40,000 SKUs, 400 stores and 150 categories, a history window of 84-364 days (drawn per step, a multiple of 28) with each series' own history of 14 days up to the window (new products, drawn per series, the start masked); daily log sales, price ratio and promotion flag with a day-of-week embedding, in 7-day patches (up to 52, plus a static token: a 53-row position table), a 4-block encoder (width 192, 6 heads) under the history mask, a 2-layer horizon decoder over 28 future days of known prices and promotions cross-attending to the history; 10/50/90% quantile (pinball) loss on scaled sales masked to each series' real horizon of 7-28 days; AdamW, clipping, bf16 autocast, 400 steps; the loss read back every 25 steps and every 100 steps an evaluation of 2,048 series at 364 days with the weighted quantile loss read back")
def sku_demand_patch_forecast_train(rng):
    d, heads, enc_l, dec_l = _smoke(192, 16), _smoke(6, 2), _smoke(4, 1), _smoke(2, 1)
    patch, horizon, max_l = 7, 28, _smoke(364, 56)
    n_sku, n_store, n_cat = _smoke(40_000, 100), _smoke(400, 10), _smoke(150, 8)
    model = _PatchForecaster(d, heads, enc_l, dec_l, patch, 3, horizon, max_l // patch, n_sku, n_store, n_cat).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    qs = torch.tensor([0.1, 0.5, 0.9], device="cuda")

    def batch(b, L, hist_lens, hor_lens):
        level = torch.rand(b, 1, device="cuda") * 20
        sales = torch.poisson(level.expand(b, L + horizon) * (0.5 + torch.rand(b, L + horizon, device="cuda")))
        price = 0.7 + 0.6 * torch.rand(b, L + horizon, device="cuda")
        promo = (torch.rand(b, L + horizon, device="cuda") < 0.1).float()
        start = torch.tensor([L - n for n in hist_lens], device="cuda")[:, None]
        days = torch.arange(L, device="cuda")[None]
        live = (days >= start).float()
        hist = torch.stack([torch.log1p(sales[:, :L]) * live, price[:, :L] * live, promo[:, :L] * live], -1)
        dow0 = torch.randint(0, 7, (b, 1), device="cuda")
        all_dow = (dow0 + torch.arange(L + horizon, device="cuda")[None]) % 7
        pvalid = torch.cat([torch.ones(b, 1, device="cuda"), live.view(b, L // patch, patch).amax(-1)], 1)
        key = ((1 - pvalid) * -1e4)[:, None, None, :]
        fut = torch.stack([price[:, L:], promo[:, L:]], -1)
        scale = (sales[:, :L] * live).sum(1, keepdim=True) / live.sum(1, keepdim=True) + 1
        target = sales[:, L:] / scale
        hmask = (torch.arange(horizon, device="cuda")[None] < torch.tensor(hor_lens, device="cuda")[:, None]).float()
        static = torch.stack([torch.randint(0, n_sku, (b,), device="cuda"),
                              torch.randint(0, n_store, (b,), device="cuda"),
                              torch.randint(0, n_cat, (b,), device="cuda")], -1)
        return hist, all_dow[:, :L], fut, all_dow[:, L:], static, key, target, hmask

    def pinball(pred, target, hmask):
        diff = target[..., None] - pred
        pl = torch.maximum(qs * diff, (qs - 1) * diff).sum(-1)
        return (pl * hmask).sum() / hmask.sum()

    steps = _smoke(400, 3)
    for step in range(steps):
        model.train()
        b = _loguniform(rng, _smoke(256, 4), _smoke(1024, 8), _smoke(64, 4))
        L = randint(rng, _smoke(84, 28), max_l, 28)
        hist_lens = [rng.randint(14, L) for _ in range(b)]
        hor_lens = [rng.randint(7, horizon) for _ in range(b)]
        hist, hdow, fut, fdow, static, key, target, hmask = batch(b, L, hist_lens, hor_lens)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(hist, hdow, fut, fdow, static, key)
        loss = pinball(pred.float(), target, hmask)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 25 == 0:
            loss.item()
        del hist, hdow, fut, fdow, static, key, target, hmask, pred, loss
        if (step + 1) % _smoke(100, 2) == 0:
            model.eval()
            nb = _smoke(2048, 8)
            with torch.no_grad():
                hist, hdow, fut, fdow, static, key, target, hmask = batch(
                    nb, max_l, [rng.randint(14, max_l) for _ in range(nb)], [horizon] * nb)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pred = model(hist, hdow, fut, fdow, static, key).float()
                wql = pinball(pred, target, hmask) / target.abs().mean().clamp(min=1e-6)
            wql.item()
            del hist, hdow, fut, fdow, static, key, target, hmask, pred, wql

"""The hundred-and-thirty-fifth batch of held-out workloads for record.py, second half (see batch135.py): fire and
rescue services, written in torch alone. Fire and smoke spread training in buildings (a message-passing graph network
over the rooms of floor plans of drawn sizes, doors and stairs as edges drawn on the device, the time to untenable
conditions, the peak temperature and the untenable flag of each room and each building's egress time), hydrant and
equipment inspection fine-tuning (a residual convnet over inspection photos of drawn resolutions, its stem and first
stage frozen; the equipment kind, its defects and the pressure gauge's needle where there is one), an incident report
sampler (a decoder-only transformer with a key-value cache, prompts of drawn lengths left-padded under a key mask,
top-k sampling by Gumbel-max for a drawn number of tokens) and a breathing-apparatus telemetry service (a dilated
causal temporal convnet over each firefighter's recent readings; the air time left, the distress and man-down risks,
the air use by a masked least-squares slope and each crew's riskiest members).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the telemetry service), `rng` the workload's random.Random for every shape, count and sampled
choice, sizes through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or
masked_fill; no boolean-mask indexing; results read back only at logging points or once per request.
scba_telemetry_tcn_serve uploads its readings on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every embedding and position table is sized for the longest padded length that can be drawn.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, SideUploads, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- fire and smoke spread in buildings (graph network)


class _RoomLayer(_nn.Module):
    """A message-passing layer: a message MLP on the two rooms and the edge, summed into each room by index_add_
    (in the messages' dtype) and divided by its degree, a residual update MLP and a layer norm."""

    def __init__(self, d, e):
        super().__init__()
        self.msg = mlp(2 * d + e, d, d, act=_nn.SiLU)
        self.upd = mlp(2 * d, d, d, act=_nn.SiLU)
        self.norm = _nn.LayerNorm(d)

    def forward(self, h, src, dst, ef, inv_deg):
        m = self.msg(torch.cat([h.index_select(0, src), h.index_select(0, dst), ef], -1))
        agg = m.new_zeros(h.shape[0], m.shape[1]).index_add_(0, dst, m)
        return self.norm(h + self.upd(torch.cat([h, agg.to(h.dtype) * inv_deg.to(h.dtype)], -1)))


class _BuildingNet(_nn.Module):
    def __init__(self, fin, n_room, ein, d, layers):
        super().__init__()
        self.inp = mlp(fin, d, d, act=_nn.SiLU)
        self.room = _nn.Embedding(n_room, d)
        self.edge = mlp(ein, d // 2, d // 2, act=_nn.SiLU)
        self.layers = _nn.ModuleList(_RoomLayer(d, d // 2) for _ in range(layers))
        self.node_head = mlp(d, d, 3, act=_nn.SiLU)
        self.bld_head = mlp(d, d, 1, act=_nn.SiLU)

    def forward(self, x, rtype, src, dst, ea, inv_deg, bid, n_bld, inv_size):
        h = self.inp(x) + self.room(rtype)
        ef = self.edge(ea)
        for layer in self.layers:
            h = layer(h, src, dst, ef, inv_deg)
        pooled = h.new_zeros(n_bld, h.shape[1]).index_add_(0, bid, h) * inv_size[:, None].to(h.dtype)
        return self.node_head(h).float(), self.bld_head(pooled).float()[:, 0]


@_workload("fire and smoke spread training in buildings (random init, a message-passing graph network over rooms): 8-24 buildings a step (drawn), each of 20-120 rooms (drawn per building) with 9 features (floor area, ceiling height, floor, fuel load, openings, sprinklers, detectors, the fire's origin, the stairs' distance) and a room type (of 10, by a table), 3 edges a room (doors, corridors and stairs, both ends drawn on the device within the building, made both ways) with 4 features; the rooms of a step flattened into one graph; 6 message-passing layers of width 128 (message MLPs on both rooms and the edge, index_add_ into each room in the messages' dtype, divided by the degree, residual update MLPs and layer norms); targets made on the device from 4 hops of reach from each building's origin (by index_add_ over the edges) and noise: each room's log time to untenable conditions and peak temperature by Huber losses, untenable within 10 minutes by BCE, each building's egress time from its mean room state (index_add_ over the rooms) by MSE; AdamW, clipping, bf16 autocast, 490 steps; the losses read back every 10 steps and every 70 steps a no-grad pass over 16 buildings of 120 rooms with the untenable accuracy read back")
def building_smoke_gnn_train(rng):
    fin, n_room, ein, d, layers = 9, 10, 4, _smoke(128, 16), _smoke(6, 2)
    r_lo, r_hi, per_room = _smoke(20, 4), _smoke(120, 10), 3
    model = _BuildingNet(fin, n_room, ein, d, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    steps, every = _smoke(490, 3), _smoke(70, 2)

    def graph(sizes):
        nb, n = len(sizes), sum(sizes)
        offs = [0]
        for s in sizes[:-1]:
            offs.append(offs[-1] + s)
        e_size = torch.tensor([s for s in sizes for _ in range(per_room * s)], device="cuda").float()
        e_off = torch.tensor([o for o, s in zip(offs, sizes) for _ in range(per_room * s)], device="cuda")
        e = e_size.shape[0]
        a = (torch.rand(e, device="cuda") * e_size).long().clamp_max(e_size.long() - 1) + e_off
        c = (torch.rand(e, device="cuda") * e_size).long().clamp_max(e_size.long() - 1) + e_off
        src, dst = torch.cat([a, c]), torch.cat([c, a])
        bid = torch.tensor([i for i, s in enumerate(sizes) for _ in range(s)], device="cuda")
        origin = torch.zeros(n, device="cuda")
        origin[torch.tensor([o + rng.randrange(s) for o, s in zip(offs, sizes)], device="cuda")] = 1.0
        x = torch.rand(n, fin, device="cuda")
        x[:, 7] = origin
        rtype = torch.randint(0, n_room, (n,), device="cuda")
        ea = torch.rand(2 * e, ein, device="cuda")
        deg = torch.zeros(n, device="cuda").index_add_(0, dst, torch.ones(2 * e, device="cuda"))
        inv_deg = 1.0 / deg.clamp_min(1.0)[:, None]
        inv_size = 1.0 / torch.tensor(sizes, device="cuda").float()
        reach, hops = origin, origin
        for _ in range(4):
            reach = (reach + torch.zeros(n, device="cuda").index_add_(0, dst, reach.index_select(0, src))).clamp(0, 1)
            hops = hops + reach
        t_unt = torch.log(60.0 + 150.0 * (5.0 - hops) + 30.0 * torch.rand(n, device="cuda"))
        peak = (hops * 150.0 + 20.0 + 20.0 * torch.randn(n, device="cuda")) / 100.0
        unt = (hops > 1.5).float()
        egress = torch.zeros(nb, device="cuda").index_add_(0, bid, t_unt) * inv_size
        return (x, rtype, src, dst, ea, inv_deg, bid, nb, inv_size), (t_unt, peak, unt, egress)

    for step in range(steps):
        model.train()
        sizes = [rng.randint(r_lo, r_hi) for _ in range(rng.randint(_smoke(8, 2), _smoke(24, 3)))]
        with torch.no_grad():
            inputs, (t_unt, peak, unt, egress) = graph(sizes)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            node, bld = model(*inputs)
        l_t = _F.huber_loss(node[:, 0], t_unt)
        l_p = _F.huber_loss(node[:, 1], peak)
        l_u = _F.binary_cross_entropy_with_logits(node[:, 2], unt)
        l_e = _F.mse_loss(bld, egress)
        loss = l_t + l_p + l_u + 0.5 * l_e
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_t.detach(), l_p.detach(), l_u.detach(), l_e.detach()]).tolist()
        del inputs, t_unt, peak, unt, egress, node, bld, l_t, l_p, l_u, l_e, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                inputs, (t_unt, peak, unt, egress) = graph([r_hi] * _smoke(16, 2))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    node, bld = model(*inputs)
                acc = ((node[:, 2] > 0).float() == unt).float().mean()
            acc.item()
            del inputs, t_unt, peak, unt, egress, node, bld, acc


# ---------------------------------------------------------------- hydrant and equipment inspection (fine-tuned)


class _InspectNet(_nn.Module):
    """A residual convnet (a 7x7 strided stem with max pooling, four stages of two basic blocks), pooled; heads for
    the equipment kind, its defects and the gauge (the needle's sine and cosine and whether it is legible)."""

    def __init__(self, w, n_kind, n_def):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, w[0], 7, 2, 3, bias=False), _nn.BatchNorm2d(w[0]), _nn.ReLU(),
                                   _nn.MaxPool2d(3, 2, 1))
        stages, cin = [], w[0]
        for i, c in enumerate(w):
            stages.append(_nn.Sequential(BasicResBlock(cin, c, 1 if i == 0 else 2), BasicResBlock(c, c, 1)))
            cin = c
        self.stages = _nn.ModuleList(stages)
        self.kind = _nn.Linear(cin, n_kind)
        self.defects = mlp(cin, cin, n_def, act=_nn.ReLU)
        self.gauge = mlp(cin, cin // 2, 3, act=_nn.ReLU)

    def forward(self, x):
        x = self.stem(x)
        for s in self.stages:
            x = s(x)
        f = x.mean((2, 3))
        return self.kind(f).float(), self.defects(f).float(), self.gauge(f).float()


@_workload("hydrant and equipment inspection fine-tuning (random init standing in for a pretrained backbone, a residual convnet): 16-40 inspection photos a step (drawn) at 224 x 224, 256 x 320, 320 x 256 or 288 x 384 px (drawn per step), drawn on the device in channels_last; a 7x7 strided stem (32 channels) with max pooling and four stages of two basic blocks (32, 64, 128, 256), the stem and first stage frozen in eval mode; from the pooled features the equipment kind (of 6: hydrant, extinguisher, hose, breathing-apparatus cylinder, ladder, valve) by cross-entropy, 14 defects (corrosion, leaks, missing caps, damaged threads, obstruction, paint ...) by BCE, and for the kinds with a gauge (looked up from a table by the drawn kind) the needle's sine and cosine by masked MSE and its legibility by masked BCE; SGD with Nesterov momentum in three parameter groups (stages 2, stages 3-4, heads) with a cosine schedule set by hand, bf16 autocast, 720 steps; the losses read back every 20 steps and every 180 steps a no-grad pass over 48 photos of 288 x 384 with the kind accuracy and the defects' F1 read back")
def hydrant_inspection_resnet_finetune(rng):
    widths = (_smoke(32, 8), _smoke(64, 8), _smoke(128, 16), _smoke(256, 16))
    n_kind, n_def = 6, 14
    res = [(224, 224), (256, 320), (320, 256), (288, 384)] if _smoke(1, 0) else [(64, 64), (64, 96)]
    model = _InspectNet(widths, n_kind, n_def).cuda().to(memory_format=torch.channels_last)
    frozen = [model.stem, model.stages[0]]
    for m in frozen:
        m.requires_grad_(False)
    heads = list(model.kind.parameters()) + list(model.defects.parameters()) + list(model.gauge.parameters())
    groups = [dict(params=list(model.stages[1].parameters()), lr=0.002),
              dict(params=list(model.stages[2].parameters()) + list(model.stages[3].parameters()), lr=0.005),
              dict(params=heads, lr=0.02)]
    base = [g["lr"] for g in groups]
    opt = torch.optim.SGD(groups, lr=0.01, momentum=0.9, nesterov=True, weight_decay=1e-4)
    has_gauge = torch.tensor([1.0, 1.0, 0.0, 1.0, 0.0, 1.0], device="cuda")
    steps, every, log_every = _smoke(720, 3), _smoke(180, 2), _smoke(20, 1)

    def batch(b, h, w):
        x = torch.randn(b, 3, h, w, device="cuda").contiguous(memory_format=torch.channels_last)
        kind = torch.randint(0, n_kind, (b,), device="cuda")
        defects = (torch.rand(b, n_def, device="cuda") < 0.1).float()
        ang = torch.rand(b, device="cuda") * (1.5 * math.pi)
        legible = (torch.rand(b, device="cuda") < 0.8).float()
        return x, kind, defects, torch.stack([ang.sin(), ang.cos()], -1), legible

    for step in range(steps):
        model.train()
        for m in frozen:
            m.eval()
        for g, lr in zip(opt.param_groups, base):
            g["lr"] = lr * 0.5 * (1.0 + math.cos(math.pi * step / steps))
        b = rng.randint(_smoke(16, 2), _smoke(40, 3))
        h, w = rng.choice(res)
        x, kind, defects, needle, legible = batch(b, h, w)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            k_out, d_out, g_out = model(x)
        gm = has_gauge[kind]
        l_kind = _F.cross_entropy(k_out, kind, label_smoothing=0.05)
        l_def = _F.binary_cross_entropy_with_logits(d_out, defects)
        n_g = gm.sum().clamp_min(1.0)
        l_needle = ((g_out[:, :2] - needle).pow(2).sum(-1) * gm * legible).sum() / n_g
        l_leg = (_F.binary_cross_entropy_with_logits(g_out[:, 2], legible, reduction="none") * gm).sum() / n_g
        loss = l_kind + l_def + 0.5 * l_needle + 0.5 * l_leg
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % log_every == 0:
            torch.stack([l_kind.detach(), l_def.detach(), l_needle.detach(), l_leg.detach()]).tolist()
        del x, kind, defects, needle, legible, k_out, d_out, g_out, gm, l_kind, l_def, n_g, l_needle, l_leg, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                h, w = res[-1]
                x, kind, defects, needle, legible = batch(_smoke(48, 2), h, w)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    k_out, d_out, g_out = model(x)
                acc = (k_out.argmax(-1) == kind).float().mean()
                pred = (d_out > 0).float()
                tp = (pred * defects).sum()
                f1 = 2 * tp / (pred.sum() + defects.sum()).clamp_min(1.0)
            torch.stack([acc, f1]).tolist()
            del x, kind, defects, needle, legible, k_out, d_out, g_out, acc, pred, tp, f1


# ---------------------------------------------------------------- incident report sampler (decoder, KV cache)


class _ReportBlock(_nn.Module):
    """A pre-norm decoder block whose keys and values are written into a cache at host-known slots."""

    def __init__(self, d, heads):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.n1, self.n2 = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.proj = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.ff = mlp(d, 4 * d, d, act=_nn.GELU)

    def forward(self, x, kc, vc, start, mask):
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, t, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)
        kc[:, :, start:start + t] = k.to(kc.dtype)
        vc[:, :, start:start + t] = v.to(vc.dtype)
        end = start + t
        a = _F.scaled_dot_product_attention(q.to(kc.dtype), kc[:, :, :end], vc[:, :, :end], attn_mask=mask)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.ff(self.n2(x))


@_workload("incident report sampling (random init, a decoder-only transformer with a key-value cache): 16-18 requests (drawn) of 1-8 reports (drawn), each prompt (an incident-type token of 32 and the call's notes) 16-96 tokens (drawn per report, left-padded to the request's longest rounded up to 8) of a 6,000-token vocabulary, 32-160 new tokens (drawn per request); 6 pre-norm blocks of width 384, 6 heads, a 256-row position table (positions counted from each report's first real token), bf16 caches of keys and values per layer sized for the request; the prompt in one pass under a causal mask and the padding's key mask (each slot also seeing itself), then one token a step, its keys and values written at the next slot and attention over the cache so far under the key mask; temperature 0.8 and top-k 40 sampling by Gumbel-max over the topk values, in eval mode under bf16 autocast; each request's tokens and mean log-probability read back once")
def incident_report_kv_sample(rng):
    vocab, n_type, d, heads, layers = 6000, 32, _smoke(384, 32), _smoke(6, 2), _smoke(6, 2)
    p_lo, p_hi, n_lo, n_hi, max_b = _smoke(16, 4), _smoke(96, 16), _smoke(32, 3), _smoke(160, 6), _smoke(8, 2)
    n_pos, top, temp = p_hi + n_hi, _smoke(40, 8), 0.8
    tok, pos = _nn.Embedding(vocab, d).cuda(), _nn.Embedding(n_pos, d).cuda()
    blocks = _nn.ModuleList(_ReportBlock(d, heads) for _ in range(layers)).cuda()
    norm = _nn.LayerNorm(d).cuda()
    lm = _nn.Linear(d, vocab, bias=False).cuda()
    mods = _nn.ModuleList([tok, pos, blocks, norm, lm]).eval()
    mods.requires_grad_(False)
    dh = d // heads

    def step_logits(x, caches, start, mask):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            for blk, (kc, vc) in zip(blocks, caches):
                x = blk(x, kc, vc, start, mask)
            return lm(norm(x[:, -1])).float() / temp

    def sample(logits):
        val, ix = logits.topk(top, -1)
        g = -torch.log(-torch.log(torch.rand_like(val).clamp(1e-6, 1.0 - 1e-6)))
        choice = (val + g).argmax(-1, keepdim=True)
        return ix.gather(1, choice)[:, 0], (val.log_softmax(-1).gather(1, choice))[:, 0]

    nreq = rng.randint(_smoke(16, 2), _smoke(18, 2))
    for _ in range(nreq):
        b = rng.randint(1, max_b)
        lens = [rng.randint(p_lo, p_hi) for _ in range(b)]
        p = min(p_hi, -(-max(lens) // 8) * 8)
        n = rng.randint(n_lo, n_hi)
        with torch.no_grad():
            pad = torch.tensor([p - ln for ln in lens], device="cuda")
            slot = torch.arange(p, device="cuda")
            keep = slot[None] >= pad[:, None]
            ids = torch.randint(n_type, vocab, (b, p), device="cuda")
            ids = torch.where(slot[None] == pad[:, None], torch.randint(0, n_type, (b, 1), device="cuda"), ids)
            ids = ids.masked_fill(~keep, 0)
            positions = (slot[None] - pad[:, None]).clamp_min(0)
            caches = [(torch.zeros(b, heads, p + n, dh, device="cuda", dtype=torch.bfloat16),
                       torch.zeros(b, heads, p + n, dh, device="cuda", dtype=torch.bfloat16)) for _ in blocks]
            eye = torch.eye(p, dtype=torch.bool, device="cuda")
            causal = torch.ones(p, p, dtype=torch.bool, device="cuda").tril()
            mask = ((causal[None] & keep[:, None, :]) | eye[None])[:, None]
            with torch.autocast("cuda", dtype=torch.bfloat16):
                x = tok(ids) + pos(positions)
            nxt, lp = sample(step_logits(x, caches, 0, mask))
            keep_all = torch.cat([keep, torch.ones(b, n, dtype=torch.bool, device="cuda")], 1)
            cur = torch.tensor(lens, device="cuda")
            out, lps = [nxt], [lp]
            for s in range(n - 1):
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    x = tok(nxt[:, None]) + pos(cur + s)[:, None]
                nxt, lp = sample(step_logits(x, caches, p + s, keep_all[:, None, None, :p + s + 1]))
                out.append(nxt)
                lps.append(lp)
            toks = torch.stack(out, 1)
            mean_lp = torch.stack(lps, 1).mean()
        toks.tolist()
        mean_lp.item()
        del pad, slot, keep, ids, positions, caches, eye, causal, mask, x, nxt, lp, keep_all, cur, out, lps, toks
        del mean_lp


# ---------------------------------------------------------------- breathing-apparatus telemetry (temporal convnet)


class _TCN(_nn.Module):
    """A dilated causal temporal convnet: a 1x1 input convolution, residual blocks of a left-padded dilated 3-tap
    convolution, GELU and a 1x1 convolution with group norm, then per-step and per-firefighter heads."""

    def __init__(self, cin, d, dils):
        super().__init__()
        self.inp = _nn.Conv1d(cin, d, 1)
        self.dils = dils
        self.conv = _nn.ModuleList(_nn.Conv1d(d, d, 3, dilation=k) for k in dils)
        self.mix = _nn.ModuleList(_nn.Conv1d(d, d, 1) for _ in dils)
        self.norm = _nn.ModuleList(_nn.GroupNorm(8, d) for _ in dils)
        self.step_head = _nn.Conv1d(d, 1, 1)
        self.ff_head = mlp(2 * d, d, 2, act=_nn.GELU)

    def forward(self, x, w):
        h = self.inp(x)
        for k, conv, mix, norm in zip(self.dils, self.conv, self.mix, self.norm):
            h = norm(h + mix(_F.gelu(conv(_F.pad(h, (2 * k, 0))))))
        hf = h.float() * w[:, None]
        pooled = torch.cat([hf.sum(-1) / w.sum(-1, keepdim=True), h[..., -1].float()], -1)
        return self.step_head(h).float()[:, 0], self.ff_head(pooled).float()


@_workload("breathing-apparatus telemetry serving (random init, a dilated causal temporal convnet): 2,720-2,760 requests (drawn) of one incident's crews, 4-32 firefighters (drawn) with the last 64-256 one-second readings (drawn per request in steps of 16; each firefighter's own 32-to-all readings drawn, left-padded under a mask) of 8 channels (cylinder pressure, breathing rate, heart rate, skin and ambient temperature, motion, the PASS alarm, radio signal), fp16 uploaded on a side stream from two reused pinned host buffers (filled once, sized for 32 x 256 x 8) one request ahead (one span, through SideUploads.ahead); with the mask as a channel, a 1x1 input convolution to 96 channels and 6 residual blocks of left-padded 3-tap convolutions dilated 1-32 with 1x1 mixing and group norm, in eval mode under bf16 autocast; each step's man-down risk (masked, its maximum over the last 30 readings), from the masked mean and the last step the distress risk and the air time left (softplus); the air use by a masked least-squares slope of the pressure, the minutes to the 55-bar whistle from it; each crew's mean and worst risk and its 3 riskiest members by topk; each request's figures read back once")
def scba_telemetry_tcn_serve(rng):
    cin, d, max_n, unit = 8, _smoke(96, 16), _smoke(32, 4), 16
    t_lo, t_hi = _smoke(64, 32), _smoke(256, 48)
    dils = (1, 2, 4, 8, 16, 32) if _smoke(1, 0) else (1, 2)
    model = _TCN(cin + 1, d, dils).cuda().eval()
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randn(max_n * t_hi * cin, generator=gen).half().pin_memory() for _ in range(2)]
    up = SideUploads(host)

    nreq = rng.randint(_smoke(2720, 3), _smoke(2760, 4))
    plan = []
    for _ in range(nreq):
        n = rng.randint(_smoke(4, 2), max_n)
        t = rng.randint(t_lo // unit, t_hi // unit) * unit
        plan.append((n, t, [rng.randint(32, t) for _ in range(n)]))

    for (n, t, lens), raw in up.ahead(plan, lambda p: (p[0] * p[1] * cin,)):
        with torch.no_grad():
            x = raw.view(n, t, cin).float().transpose(1, 2)
            keep = keep_mask(lens, t).flip(-1)
            w = keep.float()
            x = torch.cat([x * w[:, None], w[:, None]], 1)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                step_out, ff = model(x, w)
            down = step_out.sigmoid().masked_fill(~keep, 0.0)[:, -30:].amax(-1)
            distress = ff[:, 0].sigmoid()
            air_left = _F.softplus(ff[:, 1]) * 10.0
            press = 300.0 + 20.0 * x[:, 0] - torch.arange(t, device="cuda").float() * 0.1
            tt = torch.arange(t, device="cuda").float()[None].expand(n, t)
            cnt = w.sum(-1)
            mt, mp = (tt * w).sum(-1) / cnt, (press * w).sum(-1) / cnt
            slope = (((tt - mt[:, None]) * (press - mp[:, None]) * w).sum(-1)
                     / (((tt - mt[:, None]).pow(2) * w).sum(-1) + 1e-3))
            whistle = ((press[:, -1] - 55.0) / (-slope).clamp_min(1e-3) / 60.0).clamp(0.0, 120.0)
            risk = torch.maximum(down, distress)
            worst, who = risk.topk(min(3, n))
            figs = torch.cat([down, distress, air_left, slope, whistle, worst, who.float(),
                              torch.stack([risk.mean(), risk.amax()])])
        figs.tolist()
        del raw, x, keep, w, step_out, ff, down, distress, air_left, press, tt, cnt, mt, mp, slope, whistle, risk
        del worst, who, figs

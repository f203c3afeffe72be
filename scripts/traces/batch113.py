"""The hundred-and-thirteenth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch111_b.py are): waste management and recycling, written in torch alone, first half. Sorting-line material
segmentation training (a two-branch convnet fusing an RGB camera's frames with a lower-resolution hyperspectral
cube of the same belt strip: residual RGB stages, a per-pixel spectral MLP, fusion at stride 8 and a decoder to
stride 4 with per-pixel material classes, belt-edge columns masked), bin fill-level forecasting training (strided 1-d
convolutions and an LSTM written out step by step over each bin's hourly fill-sensor history of drawn length, static
bin-type and district embeddings, quantile forecasts of the fill over a drawn horizon and an overflow logit),
collection-route policy training (an attention-model pointer policy for capacitated waste collection: bins of
drawn counts, the truck's remaining capacity, returns to the depot, REINFORCE against a greedy rollout of the same
policy as the baseline) and e-waste circuit-board component detection fine-tuning (a ViT over patches of
disassembled-board photographs of drawn heights and widths with row and column position tables, a per-patch
objectness, component class and box head; the patch embedding and the first half of the blocks frozen for the first
part of the run, then trained at a tenth of the head's learning rate).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device, `rng` the
workload's random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)` so that
RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths, resolutions and batch sizes are fixed
on the host, padding handled by masks or by torch.where / masked_fill, no boolean-mask indexing; losses and metrics
are read back only at logging points or once per evaluation. All four are single-stream. The models run under bf16
autocast. Every position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new113.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and
for the CPU smoke run (RECORD_SMOKE=1).
"""

import math

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, PreNormBlock, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- sorting-line material segmentation (RGB + HSI)


def _cbr(cin, cout, k=3, stride=1):
    return _nn.Sequential(_nn.Conv2d(cin, cout, k, stride, k // 2, bias=False), _nn.BatchNorm2d(cout), _nn.ReLU())


class _SortFusionNet(_nn.Module):
    """RGB: a stride-2 stem and residual stages to strides 4 and 8. Hyperspectral (at a quarter of the RGB
    resolution): a per-pixel spectral MLP of 1x1 convolutions, a strided 3x3 to stride 8. The two fused by two
    residual blocks at stride 8, upsampled and merged with both stride-4 maps, per-pixel material logits."""

    def __init__(self, bands, widths, d, n_cls):
        super().__init__()
        w0, w1, w2 = widths
        self.stem = _cbr(3, w0, 3, 2)
        self.s4 = _nn.Sequential(BasicResBlock(w0, w1, 2), BasicResBlock(w1, w1, 1))
        self.s8 = _nn.Sequential(BasicResBlock(w1, w2, 2), BasicResBlock(w2, w2, 1))
        self.spec = _nn.Sequential(_nn.Conv2d(bands, d, 1), _nn.GELU(), _nn.Conv2d(d, d, 1), _nn.GELU())
        self.spec_down = _cbr(d, d, 3, 2)
        self.fuse = _nn.Sequential(BasicResBlock(w2 + d, w2, 1), BasicResBlock(w2, w2, 1))
        self.up = _cbr(w2 + w1 + d, d)
        self.seg = _nn.Conv2d(d, n_cls, 1)

    def forward(self, rgb, hsi):
        f4 = self.s4(self.stem(rgb))
        f8 = self.s8(f4)
        h4 = self.spec(hsi)
        z = self.fuse(torch.cat([f8, self.spec_down(h4)], 1))
        z = self.up(torch.cat([_F.interpolate(z, scale_factor=2, mode="nearest"), f4, h4], 1))
        return self.seg(z).float()


@_workload("sorting-line material segmentation training (random init, a two-branch RGB + hyperspectral convnet): belt strips of 256-512 x 256-768 px (drawn per step, multiples of 64), 2-16 strips a step (drawn, at most 6 x 512^2 pixels), an RGB frame per strip and a 64-band hyperspectral cube at a quarter of its resolution, drawn on the device in channels-last; RGB: a stride-2 stem (32) and residual stages of 64 (stride 4) and 128 (stride 8); hyperspectral: a per-pixel spectral MLP of two 1x1 convolutions (width 64) and a strided 3x3 to stride 8; fusion by two residual blocks at stride 8, nearest upsampling merged with both stride-4 maps, per-pixel logits of 12 materials (PET, HDPE, PP, PS, PVC, film, paper, cardboard, glass, ferrous, aluminium, residue) at stride 4; labels drawn on the device, each strip's belt-edge columns past its own drawn belt width (75-100% of the strip) masked out of a class-weighted cross-entropy; AdamW, clipping, bf16 autocast, 690 steps; the loss read back every 25 steps and every 115 steps a no-grad pass over 4 strips of 512 x 768 with the per-material pixel fractions and the mean top-class confidence read back")
def waste_sort_fusion_seg_train(rng):
    bands, widths, d, n_cls = _smoke(64, 8), _smoke([32, 64, 128], [8, 16, 16]), _smoke(64, 16), 12
    model = _SortFusionNet(bands, widths, d, n_cls).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    cls_w = torch.linspace(0.5, 2.0, n_cls, device="cuda")
    h_lo, h_hi, w_lo, w_hi, mult = _smoke(256, 64), _smoke(512, 128), _smoke(256, 64), _smoke(768, 192), \
        _smoke(64, 32)
    budget = _smoke(6 * 512 * 512, 4 * 128 * 128)

    def strips(b, h, w):
        rgb = torch.rand(b, 3, h, w, device="cuda").contiguous(memory_format=torch.channels_last)
        hsi = torch.rand(b, bands, h // 4, w // 4, device="cuda").contiguous(memory_format=torch.channels_last)
        return rgb, hsi

    steps = _smoke(690, 3)
    for step in range(steps):
        model.train()
        h, w = rng.randint(h_lo // mult, h_hi // mult) * mult, rng.randint(w_lo // mult, w_hi // mult) * mult
        b = rng.randint(2, max(2, min(_smoke(16, 3), budget // (h * w))))
        belt = [rng.randint(int(0.75 * (w // 4)), w // 4) for _ in range(b)]
        rgb, hsi = strips(b, h, w)
        labels = torch.randint(0, n_cls, (b, h // 4, w // 4), device="cuda")
        valid = keep_mask(belt, w // 4)[:, None, :].expand(b, h // 4, w // 4).float()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(rgb, hsi)
        ce = _F.cross_entropy(logits, labels, weight=cls_w, reduction="none")
        loss = (ce * valid).sum() / valid.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0)
        opt.step()
        if step % 25 == 0:
            loss.detach().item()
        del rgb, hsi, labels, valid, logits, ce, loss
        if (step + 1) % _smoke(115, 2) == 0:
            model.eval()
            with torch.no_grad():
                rgb, hsi = strips(_smoke(4, 2), h_hi, w_hi)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    prob = model(rgb, hsi).softmax(1)
                frac = _F.one_hot(prob.argmax(1), n_cls).float().mean((0, 1, 2))
                out = torch.cat([frac, prob.amax(1).mean()[None]])
            out.tolist()
            del rgb, hsi, prob, frac, out


# ---------------------------------------------------------------- bin fill-level forecasting (LSTM)


class _BinFillLstm(_nn.Module):
    """Hourly sensor features and static bin-type and district embeddings, two stride-4 1-d convolutions (16 hours a
    recurrent step), an LSTM cell written out step by step (padded steps keep the state by torch.where); quantiles
    of the cumulative fill at each forecast hour and an overflow logit from the last state and the static context."""

    def __init__(self, n_feat, n_type, n_dist, d, hid, max_h, n_q):
        super().__init__()
        self.inp = _nn.Linear(n_feat, d)
        self.btype, self.dist = _nn.Embedding(n_type, d), _nn.Embedding(n_dist, d)
        self.conv = _nn.Sequential(_nn.Conv1d(d, d, 5, 4, 2), _nn.GELU(), _nn.Conv1d(d, hid, 5, 4, 2), _nn.GELU())
        self.cell = _nn.Linear(2 * hid, 4 * hid)
        self.q = _nn.Sequential(_nn.LayerNorm(hid + d), _nn.Linear(hid + d, hid), _nn.GELU(),
                                _nn.Linear(hid, max_h * n_q))
        self.over = _nn.Linear(hid + d, 1)
        self.hid, self.max_h, self.n_q = hid, max_h, n_q

    def forward(self, feats, btype, dist, keep16):
        static = self.btype(btype) + self.dist(dist)
        x = self.inp(feats) + static[:, None]
        y = self.conv(x.transpose(1, 2)).transpose(1, 2)
        b = feats.shape[0]
        h = feats.new_zeros(b, self.hid)
        c = feats.new_zeros(b, self.hid)
        for t in range(y.shape[1]):
            i, f, g, o = self.cell(torch.cat([y[:, t], h.to(y.dtype)], -1)).float().chunk(4, -1)
            c2 = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h2 = torch.sigmoid(o) * torch.tanh(c2)
            m = keep16[:, t, None]
            c, h = torch.where(m, c2, c), torch.where(m, h2, h)
        ctx = torch.cat([h.to(static.dtype), static], -1)
        q = self.q(ctx).float().view(b, self.max_h, self.n_q)
        return q, self.over(ctx).float()[:, 0]


@_workload("bin fill-level forecasting training (random init, strided 1-d convolutions and an LSTM written out step by step): 64-256 bins a step (drawn), each with an hourly history of 168-672 hours (drawn per bin, padded to the step's longest rounded up to a multiple of 48) of 6 sensor features (fill level, fill increment, lid openings, temperature, hour and weekday phases), a bin type (of 8) and a district (of 64) per bin, drawn on the device; a linear input (width 128) plus the static embeddings, two stride-4 1-d convolutions (128, then 192) to one recurrent step per 16 hours (at most 42 steps), an LSTM cell (hidden 192) written out step by step with padded steps keeping the state by torch.where; quantiles 0.1/0.5/0.9 of the cumulative fill at each hour of a horizon of 12-48 hours (drawn per step, a multiple of 6; a 48-hour head sliced) by a pinball loss, and an overflow-within-the-horizon logit by binary cross-entropy; AdamW, clipping, bf16 autocast, 160 steps; the loss read back every 20 steps and every 55 steps a no-grad evaluation over 128 bins of 672 hours with the mean pinball loss and the 0.1-0.9 interval coverage read back")
def bin_fill_lstm_train(rng):
    n_feat, n_type, n_dist, n_q = 6, 8, _smoke(64, 4), 3
    d, hid, max_h = _smoke(128, 16), _smoke(192, 16), _smoke(48, 12)
    model = _BinFillLstm(n_feat, n_type, n_dist, d, hid, max_h, n_q).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    qs = torch.tensor([0.1, 0.5, 0.9], device="cuda")
    l_lo, l_hi = _smoke(168, 48), _smoke(672, 96)

    def bins(lengths, horizon):
        b, t = len(lengths), -(-max(lengths) // 48) * 48
        keep = keep_mask(lengths, t)
        keep16 = keep_mask([-(-n // 16) for n in lengths], t // 16)
        feats = torch.randn(b, t, n_feat, device="cuda") * keep[..., None]
        btype = torch.randint(0, n_type, (b,), device="cuda")
        dist = torch.randint(0, n_dist, (b,), device="cuda")
        fill = (0.02 * torch.rand(b, horizon, device="cuda")).cumsum(1)
        over = torch.where(fill[:, -1] + torch.rand(b, device="cuda") > 1.0, 1.0, 0.0)
        return feats, btype, dist, keep16, fill, over

    def losses(q, over_logit, fill, over, horizon):
        err = fill[..., None] - q[:, :horizon]
        pin = torch.maximum(qs * err, (qs - 1) * err).mean()
        return pin, _F.binary_cross_entropy_with_logits(over_logit, over)

    steps = _smoke(160, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(64, 2), _smoke(256, 4))
        horizon = rng.randint(2, max_h // 6) * 6
        lengths = [rng.randint(l_lo, l_hi) for _ in range(b)]
        feats, btype, dist, keep16, fill, over = bins(lengths, horizon)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            q, ol = model(feats, btype, dist, keep16)
        pin, bce = losses(q, ol, fill, over, horizon)
        loss = pin + 0.2 * bce
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([pin.detach(), bce.detach()]).tolist()
        del feats, btype, dist, keep16, fill, over, q, ol, pin, bce, loss
        if (step + 1) % _smoke(55, 2) == 0:
            model.eval()
            with torch.no_grad():
                nb = _smoke(128, 3)
                feats, btype, dist, keep16, fill, over = bins([l_hi] * nb, max_h)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    q, ol = model(feats, btype, dist, keep16)
                pin, _ = losses(q, ol, fill, over, max_h)
                cover = ((fill >= q[..., 0]) & (fill <= q[..., 2])).float().mean()
                out = torch.stack([pin, cover])
            out.tolist()
            del feats, btype, dist, keep16, fill, over, q, ol, pin, cover, out


# ---------------------------------------------------------------- collection-route policy (capacitated pointer)


class _RoutePolicy(_nn.Module):
    """The attention model for capacitated routing: the depot and the bins embedded (their own linear maps),
    pre-norm blocks under a key mask; each decoding step a context of the graph mean, the last node and the remaining
    capacity, a multi-head glimpse over the nodes and a tanh-capped pointer over them, masked."""

    def __init__(self, d, heads, layers):
        super().__init__()
        self.depot_in, self.node_in = _nn.Linear(2, d), _nn.Linear(4, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.ctx, self.kv, self.out = _nn.Linear(2 * d + 1, d), _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.h = heads

    def encode(self, depot, nodes, keep):
        x = torch.cat([self.depot_in(depot)[:, None], self.node_in(nodes)], 1)
        for blk in self.blocks:
            x = blk(x, mask=keep[:, None, None, :])
        x = self.norm(x)
        b, n1, d = x.shape
        gk, gv, pk = self.kv(x).chunk(3, -1)
        kh = gk.reshape(b, n1, self.h, d // self.h).transpose(1, 2)
        vh = gv.reshape(b, n1, self.h, d // self.h).transpose(1, 2)
        w = keep[..., None].to(x.dtype)
        return x, kh, vh, pk, (x * w).sum(1) / w.sum(1)

    def step(self, enc, last, cap, forbid):
        x, kh, vh, pk, mean = enc
        b, n1, d = x.shape
        last_h = x.gather(1, last[:, None, None].expand(b, 1, d))[:, 0]
        q = self.ctx(torch.cat([mean, last_h, cap[:, None]], -1))
        qh = q.view(b, self.h, 1, d // self.h)
        att = (qh @ kh.transpose(-1, -2)).float() / math.sqrt(d // self.h)
        att = att.masked_fill(forbid[:, None, None], -1e9).softmax(-1).to(vh.dtype)
        g = self.out((att @ vh).reshape(b, d))
        logits = 10.0 * torch.tanh((pk @ g[:, :, None])[..., 0].float() / math.sqrt(d))
        return logits.masked_fill(forbid, -1e9)


def _route_rollout(model, inst, rounds, greedy):
    """One collection tour per instance: each step the next node (a bin, or the depot to empty the truck) by
    Gumbel-max or argmax over the masked pointer logits; served bins, bins heavier than the remaining capacity and a
    second depot visit in a row (unless every bin is served) masked. Returns the summed log-probabilities and the
    cost (tour length plus a penalty of 2 per bin left unserved)."""
    depot, coords, demand, keep = inst
    b, n1 = keep.shape
    enc = model.encode(depot, torch.cat([coords[:, 1:], demand[:, 1:, None], keep[:, 1:, None].float()], -1), keep)
    served = ~keep
    cap = torch.ones(b, device=coords.device)
    last = torch.zeros(b, dtype=torch.long, device=coords.device)
    logp = torch.zeros(b, device=coords.device)
    length = torch.zeros(b, device=coords.device)
    idx = torch.arange(n1, device=coords.device)
    for _ in range(rounds):
        done = served[:, 1:].all(1)
        heavy = demand > cap[:, None]
        forbid = torch.cat([((last == 0) & ~done)[:, None], (served | heavy)[:, 1:]], 1)
        logits = model.step(enc, last, cap, forbid)
        lp = torch.log_softmax(logits, -1)
        if greedy:
            a = logits.argmax(-1)
        else:
            gumbel = -torch.log(-torch.log(torch.rand_like(logits).clamp(1e-9, 1 - 1e-9)))
            a = (logits.detach() + gumbel).argmax(-1)
        logp = logp + lp.gather(1, a[:, None])[:, 0]
        prev = coords.gather(1, last[:, None, None].expand(b, 1, 2))[:, 0]
        nxt = coords.gather(1, a[:, None, None].expand(b, 1, 2))[:, 0]
        length = length + (nxt - prev).norm(dim=-1)
        cap = torch.where(a == 0, 1.0, cap - demand.gather(1, a[:, None])[:, 0])
        served = served | ((idx[None] == a[:, None]) & (a[:, None] > 0))
        last = a
    length = length + (coords.gather(1, last[:, None, None].expand(b, 1, 2))[:, 0] - coords[:, 0]).norm(dim=-1)
    return logp, length + 2.0 * (~served[:, 1:]).float().sum(1), length


@_workload("capacitated waste-collection routing policy training (random init, an attention-model pointer policy trained by REINFORCE with a greedy-rollout baseline): 64-192 instances a step (drawn), 16-40 bin slots a step (drawn) with each instance's own 10 to that many bins (drawn per instance, masked), coordinates in the unit square and the depot, bin loads of 5-35% of the truck's capacity, drawn on the device; depot and bin linear embeddings and 3 pre-norm blocks (width 128, 8 heads) under a key mask; 1.5 decoding steps a bin slot: a context of the graph mean, the last node's embedding and the remaining capacity, an 8-head glimpse and a tanh-capped pointer over the nodes with served bins, bins over the remaining capacity and a repeated depot visit masked by masked_fill, the next node sampled by Gumbel-max, capacity reset at the depot by torch.where, served flags kept by an index comparison and tour length by gather; cost the tour length plus 2 per unserved bin; the baseline a no-grad greedy rollout of the same policy on the same instances; AdamW, clipping, bf16 autocast, 55 steps; the mean sampled and greedy costs read back every 5 steps and every 11 steps a no-grad greedy rollout of 256 instances of 40 bins with the mean tour length and unserved count read back")
def collection_route_pointer_train(rng):
    d, heads, layers = _smoke(128, 16), _smoke(8, 2), _smoke(3, 1)
    model = _RoutePolicy(d, heads, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.0)

    def instances(counts, n):
        b = len(counts)
        keep = torch.cat([torch.ones(b, 1, dtype=torch.bool, device="cuda"), keep_mask(counts, n)], 1)
        coords = torch.rand(b, n + 1, 2, device="cuda")
        demand = (torch.rand(b, n + 1, device="cuda") * 0.3 + 0.05) * keep[:, :].float()
        demand = torch.cat([demand.new_zeros(b, 1), demand[:, 1:]], 1)
        return coords[:, 0], coords, demand, keep

    steps = _smoke(55, 2)
    for step in range(steps):
        model.train()
        b, n = rng.randint(_smoke(64, 2), _smoke(192, 4)), rng.randint(_smoke(16, 5), _smoke(40, 7))
        inst = instances([rng.randint(_smoke(10, 3), n) for _ in range(b)], n)
        rounds = n + n // 2
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logp, cost, _ = _route_rollout(model, inst, rounds, False)
            model.eval()
            with torch.no_grad():
                _, base, _ = _route_rollout(model, inst, rounds, True)
            model.train()
        loss = ((cost - base).detach() * logp).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 5 == 0:
            torch.stack([cost.mean(), base.mean()]).tolist()
        del inst, logp, cost, base, loss
        if (step + 1) % _smoke(11, 2) == 0:
            model.eval()
            with torch.no_grad():
                nb, nn_ = _smoke(256, 3), _smoke(40, 7)
                depot, coords, demand, keep = instances([nn_] * nb, nn_)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    _, cost, length = _route_rollout(model, (depot, coords, demand, keep), nn_ + nn_ // 2, True)
                out = torch.stack([length.mean(), (cost - length).mean() / 2.0])
            out.tolist()
            del depot, coords, demand, keep, cost, length, out


# ---------------------------------------------------------------- e-waste circuit-board component detection (ViT)


class _BoardVit(_nn.Module):
    """A 16 x 16 patch embedding, row and column position tables, pre-norm blocks, and per patch an objectness
    logit, component class logits and a box (centre offset, log width and height)."""

    def __init__(self, patch, d, heads, layers, max_gh, max_gw, n_cls):
        super().__init__()
        self.patch = _nn.Conv2d(3, d, patch, patch)
        self.row, self.col = _nn.Embedding(max_gh, d), _nn.Embedding(max_gw, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.head = mlp(d, d, 1 + n_cls + 4, act=_nn.GELU)

    def forward(self, x):
        t = self.patch(x)
        gh, gw = t.shape[2], t.shape[3]
        pos = self.row(torch.arange(gh, device=x.device))[:, None] + self.col(torch.arange(gw, device=x.device))[None]
        y = t.flatten(2).transpose(1, 2) + pos.flatten(0, 1)[None]
        for blk in self.blocks:
            y = blk(y)
        return self.head(self.norm(y)).float()


@_workload("e-waste circuit-board component detection fine-tuning (random init standing in for a pretrained ViT, a per-patch detection head): photographs of disassembled boards of 256-512 x 256-512 px (height and width drawn per step, multiples of 32), 2-16 a step (drawn, at most 4,096 patch tokens), drawn on the device; a 16 x 16 patch embedding (width 384), row and column position tables of 32 rows each, 6 pre-norm blocks (6 heads) and an MLP head per patch: objectness, 8 component classes (capacitor, resistor, IC, connector, battery, inductor, transistor, relay) and a box (centre offset, log width and height); targets drawn on the device (about 8% of patches hold a component); binary cross-entropy on objectness, cross-entropy on the class and L1 on the box at the occupied patches; the patch embedding, the position tables and the first 3 blocks frozen for the first 120 steps, then trained at a tenth of the head's learning rate (two AdamW parameter groups), clipping, bf16 autocast, 460 steps; the losses read back every 20 steps and every 75 steps a no-grad pass over 2 boards of 512 x 512 with the mean of each board's top 50 objectness scores and how many exceed 0.5 read back")
def ewaste_board_vit_finetune(rng):
    patch, n_cls = 16, 8
    d, heads, layers = _smoke(384, 32), _smoke(6, 2), _smoke(6, 2)
    lo, hi, mult = _smoke(256, 64), _smoke(512, 96), 32
    model = _BoardVit(patch, d, heads, layers, hi // patch, hi // patch, n_cls).cuda()
    frozen = [model.patch, model.row, model.col] + list(model.blocks[:layers // 2])
    early = [p for m in frozen for p in m.parameters()]
    early_ids = {id(p) for p in early}
    late = [p for p in model.parameters() if id(p) not in early_ids]
    opt = torch.optim.AdamW([{"params": early, "lr": 2e-5}, {"params": late, "lr": 2e-4}], weight_decay=0.05)
    for p in early:
        p.requires_grad_(False)
    budget, thaw = _smoke(4096, 96), _smoke(120, 1)

    steps = _smoke(460, 3)
    for step in range(steps):
        if step == thaw:
            for p in early:
                p.requires_grad_(True)
        model.train()
        h, w = rng.randint(lo // mult, hi // mult) * mult, rng.randint(lo // mult, hi // mult) * mult
        tokens = (h // patch) * (w // patch)
        b = rng.randint(2, max(2, min(16, budget // tokens)))
        x = torch.rand(b, 3, h, w, device="cuda")
        obj = torch.where(torch.rand(b, tokens, device="cuda") < 0.08, 1.0, 0.0)
        cls = torch.randint(0, n_cls, (b, tokens), device="cuda")
        box = torch.randn(b, tokens, 4, device="cuda") * 0.5
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(x)
        l_obj = _F.binary_cross_entropy_with_logits(out[..., 0], obj)
        n_obj = obj.sum().clamp(min=1)
        l_cls = (_F.cross_entropy(out[..., 1:1 + n_cls].transpose(1, 2), cls, reduction="none") * obj).sum() / n_obj
        l_box = ((out[..., 1 + n_cls:] - box).abs().sum(-1) * obj).sum() / n_obj
        loss = l_obj + l_cls + l_box
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_obj.detach(), l_cls.detach(), l_box.detach()]).tolist()
        del x, obj, cls, box, out, l_obj, n_obj, l_cls, l_box, loss
        if (step + 1) % _smoke(75, 2) == 0:
            model.eval()
            with torch.no_grad():
                x = torch.rand(2, 3, hi, hi, device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    score = torch.sigmoid(model(x)[..., 0])
                top = score.topk(_smoke(50, 4), dim=1).values
                res = torch.cat([top.mean(1), (top > 0.5).float().sum(1)])
            res.tolist()
            del x, score, top, res

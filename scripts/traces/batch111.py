"""The hundred-and-eleventh batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch109_b.py are): maritime shipping and ports, written in torch alone, first half. AIS vessel-trajectory
forecasting training (a transformer encoder over each vessel's past AIS messages of drawn lengths with a ship-type
embedding, a transformer decoder over the future displacements under teacher forcing, a Gaussian negative
log-likelihood, autoregressive evaluations), SAR ship detection training (a CenterNet-style residual convnet with a
top-down path over dual-polarisation SAR chips of drawn resolutions, Gaussian centre heatmaps with a focal loss,
size, orientation and offset regressed at the object centres), berth allocation policy training (an attention policy
over the vessels calling at a container terminal, assigning one vessel to one berth a round by Gumbel-max sampling,
berth ready times and turnaround costs kept by gather and scatter, REINFORCE against the batch mean) and a hull
sonar inspection service (an imaging sonar's polar frames of drawn beam and range counts scan-converted by
grid_sample, a residual U-Net segmenting fouling, corrosion and cracks, per-zone coverage kept on the device by
index_add). Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in
reused pinned host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled
choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's
value: lengths, resolutions and batch sizes are fixed on the host, padding handled by masks or by torch.where /
masked_fill, no boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
hull_sonar_inspect_serve uploads its frames on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new111.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and
for the CPU smoke run (RECORD_SMOKE=1).
"""

import math

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, CrossDecoderBlock, PreNormBlock, SideUploads, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- AIS vessel-trajectory forecasting


class _AisForecaster(_nn.Module):
    """AIS messages (numeric fields, a navigational status per message, the ship type per track) and a position
    table into pre-norm encoder blocks under a key mask; learned horizon positions plus the previous displacement into
    decoder blocks (causal self-attention, cross-attention over the encoded track); a Gaussian mean and log-scale of
    each future displacement."""

    def __init__(self, n_num, n_type, n_status, d, heads, enc_layers, dec_layers, max_hist, max_horizon):
        super().__init__()
        self.inp = _nn.Linear(n_num, d)
        self.vtype, self.status = _nn.Embedding(n_type, d), _nn.Embedding(n_status, d)
        self.pos = _nn.Embedding(max_hist, d)
        self.enc = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(enc_layers))
        self.enc_norm = _nn.LayerNorm(d)
        self.step_in, self.qpos = _nn.Linear(2, d), _nn.Embedding(max_horizon, d)
        self.dec = _nn.ModuleList(CrossDecoderBlock(d, heads) for _ in range(dec_layers))
        self.out = _nn.Sequential(_nn.LayerNorm(d), _nn.Linear(d, 4))

    def encode(self, num, vtype, status, keep):
        t = num.shape[1]
        x = self.inp(num) + self.status(status) + self.vtype(vtype)[:, None]
        x = x + self.pos(torch.arange(t, device=num.device))[None]
        key = keep[:, None, None, :]
        for blk in self.enc:
            x = blk(x, mask=key)
        return self.enc_norm(x)

    def decode(self, mem, keep, prev):
        h = prev.shape[1]
        y = self.step_in(prev) + self.qpos(torch.arange(h, device=prev.device))[None]
        key = keep[:, None, None, :]
        for blk in self.dec:
            y = blk(y, mem, key)
        mu, log_s = self.out(y).float().chunk(2, -1)
        return mu, log_s.clamp(-6.0, 3.0)


@_workload("AIS vessel-trajectory forecasting training (random init, a transformer encoder-decoder): 32-128 vessel tracks a step (drawn), each with a history of 24-256 AIS messages (drawn per track, padded to the step's longest rounded up to a multiple of 16, a 256-row position table) of 8 numeric fields (position deltas, speed and course over ground, heading, time gap) and a navigational status (of 16) per message, a ship type (of 24) per track, drawn on the device; a 4-block pre-norm encoder (width 256, 8 heads) under a key mask; a 3-block decoder (causal self-attention, cross-attention under the key mask) over a forecast horizon of 12-36 steps (drawn per step, a multiple of 4, a 36-row horizon table) fed the previous displacement (teacher forcing); a Gaussian negative log-likelihood of each future displacement, each track's own horizon of 4 to the step's drawn (masked); AdamW, clipping, bf16 autocast, 260 steps; the loss read back every 20 steps and every 65 steps a no-grad 24-step autoregressive rollout of 64 tracks of 256 messages with the average and final displacement errors read back")
def ais_trajectory_transformer_train(rng):
    n_num, n_type, n_status = 8, 24, 16
    d, heads, enc_l, dec_l = _smoke(256, 32), _smoke(8, 2), _smoke(4, 1), _smoke(3, 1)
    max_hist, max_h = _smoke(256, 32), _smoke(36, 8)
    model = _AisForecaster(n_num, n_type, n_status, d, heads, enc_l, dec_l, max_hist, max_h).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)

    def tracks(lengths, horizon, fut_lengths):
        b, t = len(lengths), -(-max(lengths) // 16) * 16
        keep = keep_mask(lengths, t)
        num = torch.randn(b, t, n_num, device="cuda") * keep[..., None]
        vtype = torch.randint(0, n_type, (b,), device="cuda")
        status = torch.randint(0, n_status, (b, t), device="cuda").masked_fill(~keep, 0)
        fut = (0.05 * torch.randn(b, horizon, 2, device="cuda")).cumsum(1)  # displacement from the last fix
        return num, vtype, status, keep, fut, keep_mask(fut_lengths, horizon)

    steps = _smoke(260, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(32, 2), _smoke(128, 4))
        horizon = rng.randint(_smoke(12, 4) // 4, max_h // 4) * 4
        lengths = [rng.randint(_smoke(24, 4), max_hist) for _ in range(b)]
        num, vtype, status, keep, fut, fkeep = tracks(lengths, horizon, [rng.randint(4, horizon) for _ in range(b)])
        prev = torch.cat([fut.new_zeros(b, 1, 2), fut[:, :-1]], 1)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            mu, log_s = model.decode(model.encode(num, vtype, status, keep), keep, prev)
        nll = (0.5 * (fut - mu).pow(2) * torch.exp(-2 * log_s) + log_s).sum(-1)
        w = fkeep.float()
        loss = (nll * w).sum() / w.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.detach().item()
        del num, vtype, status, keep, fut, fkeep, prev, mu, log_s, nll, w, loss
        if (step + 1) % _smoke(65, 2) == 0:
            model.eval()
            with torch.no_grad():
                nb, nh = _smoke(64, 2), _smoke(24, 4)
                num, vtype, status, keep, fut, _ = tracks([max_hist] * nb, nh, [nh] * nb)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    mem = model.encode(num, vtype, status, keep)
                    prev = fut.new_zeros(nb, 1, 2)
                    for _ in range(nh):
                        mu, _ = model.decode(mem, keep, prev)
                        prev = torch.cat([prev, mu[:, -1:]], 1)
                err = (prev[:, 1:] - fut).norm(dim=-1)
                out = torch.stack([err.mean(), err[:, -1].mean()])
            out.tolist()
            del num, vtype, status, keep, fut, mem, prev, mu, err, out


# ---------------------------------------------------------------- SAR ship detection (CenterNet-style)


class _ShipCenterNet(_nn.Module):
    """A stride-2 stem and four stages of two residual blocks (strides 2, 4, 8, 16), a top-down path of 1x1
    laterals and nearest upsampling to stride 4, a 3x3 smoothing convolution; heatmap, box (log width, log length,
    sin and cos of twice the heading) and sub-cell offset heads."""

    def __init__(self, c_in, widths, d, n_cls):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(c_in, widths[0], 3, 2, 1, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU())
        cins = [widths[0]] + widths[:-1]
        self.stages = _nn.ModuleList(
            _nn.Sequential(BasicResBlock(a, w, 1 if i == 0 else 2), BasicResBlock(w, w, 1))
            for i, (a, w) in enumerate(zip(cins, widths)))
        self.lat = _nn.ModuleList(_nn.Conv2d(w, d, 1) for w in widths[1:])
        self.smooth = _nn.Sequential(_nn.Conv2d(d, d, 3, 1, 1, bias=False), _nn.BatchNorm2d(d), _nn.ReLU())

        def head(n):
            return _nn.Sequential(_nn.Conv2d(d, d, 3, 1, 1), _nn.ReLU(), _nn.Conv2d(d, n, 1))

        self.hm, self.box, self.off = head(n_cls), head(4), head(2)
        self.hm[-1].bias.data.fill_(-2.19)

    def forward(self, x):
        feats, y = [], self.stem(x)
        for st in self.stages:
            y = st(y)
            feats.append(y)
        top = self.lat[-1](feats[-1])
        for lat, f in zip(self.lat[-2::-1], feats[-2:0:-1]):
            top = lat(f) + _F.interpolate(top, scale_factor=2, mode="nearest")
        z = self.smooth(top)
        return self.hm(z).float(), self.box(z).float(), self.off(z).float()


def _center_focal(logit, target):
    """CenterNet's penalty-reduced focal loss of heatmap logits against Gaussian targets (peaks of 1)."""
    p = torch.sigmoid(logit).clamp(1e-4, 1 - 1e-4)
    pos = torch.where(target > 0.999, 1.0, 0.0)
    pos_l = torch.log(p) * (1 - p).pow(2) * pos
    neg_l = torch.log(1 - p) * p.pow(2) * (1 - target).pow(4) * (1 - pos)
    return -(pos_l + neg_l).sum() / pos.sum().clamp(min=1)


@_workload("SAR ship detection training (random init, a CenterNet-style residual convnet): dual-polarisation (VV, VH) SAR chips of 256-640 px (drawn per step, a multiple of 64), 2-16 chips a step (drawn, at most 8 x 512^2 pixels), drawn on the device in channels-last; a stride-2 stem and four stages of two residual blocks (32/64/128/256 channels, strides 2 to 16), 1x1 laterals and a nearest-upsampling top-down path to stride 4 (width 128); 0-40 ships per chip (drawn per chip, 40 slots masked) of 3 classes with centres, lengths, widths and headings drawn on the device; Gaussian centre heatmaps (sigma from the ship size, the maximum over ships) with CenterNet's focal loss, and L1 losses on log width and length, sin and cos of twice the heading and the sub-cell offset gathered at each ship's centre cell; AdamW, clipping, bf16 autocast, 450 steps; the losses read back every 20 steps and every 90 steps a no-grad pass over 4 chips of 640 px with 3 x 3 max-pool peak picking, the mean score of each chip's top 100 peaks and how many of those exceed 0.3 read back")
def sar_ship_centernet_train(rng):
    widths, d, n_cls, slots = _smoke([32, 64, 128, 256], [16, 16, 32, 32]), _smoke(128, 16), 3, _smoke(40, 4)
    model = _ShipCenterNet(2, widths, d, n_cls).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=1e-4)
    budget, mult = _smoke(8 * 512 * 512, 2 * 64 * 64), _smoke(64, 32)
    lo, hi = _smoke(256, 64), _smoke(640, 128)

    def chips(b, res, counts):
        x = torch.randn(b, 2, res, res, device="cuda").abs().contiguous(memory_format=torch.channels_last)
        g = res // 4
        okeep = keep_mask(counts, slots)
        cyx = torch.rand(b, slots, 2, device="cuda") * (g - 1)
        cell = cyx.floor()
        size = torch.exp(torch.randn(b, slots, 2, device="cuda") * 0.5 + 1.0)  # width, length in output cells
        head = torch.rand(b, slots, device="cuda") * math.pi
        cls = torch.randint(0, n_cls, (b, slots), device="cuda")
        sigma = (size.mean(-1) / 3).clamp(min=0.8)
        ar = torch.arange(g, device="cuda").float()
        dy = (ar[None, None, :] - cell[..., 0, None]).pow(2)
        dx = (ar[None, None, :] - cell[..., 1, None]).pow(2)
        gauss = torch.exp(-(dy[..., :, None] + dx[..., None, :]) / (2 * sigma.pow(2))[..., None, None])
        gauss = gauss * okeep[..., None, None]
        onehot = _F.one_hot(cls, n_cls).float()
        target = (gauss[:, :, None] * onehot[..., None, None]).amax(1)
        idx = (cell[..., 0] * g + cell[..., 1]).long()
        box_t = torch.stack([size[..., 0].log(), size[..., 1].log(), torch.sin(2 * head), torch.cos(2 * head)], 1)
        return x, okeep, target, idx, box_t, (cyx - cell).transpose(1, 2)

    def at(maps, idx):
        return maps.flatten(2).gather(2, idx[:, None].expand(-1, maps.shape[1], -1))

    steps = _smoke(450, 3)
    for step in range(steps):
        model.train()
        res = rng.randint(lo // mult, hi // mult) * mult
        b = rng.randint(2, max(2, min(_smoke(16, 2), budget // (res * res))))
        x, okeep, target, idx, box_t, off_t = chips(b, res, [rng.randint(0, slots) for _ in range(b)])
        with torch.autocast("cuda", dtype=torch.bfloat16):
            hm, box, off = model(x)
        l_hm = _center_focal(hm, target)
        w = okeep.float()[:, None]
        n_obj = w.sum().clamp(min=1)
        l_box = ((at(box, idx) - box_t).abs() * w).sum() / n_obj
        l_off = ((at(off, idx) - off_t).abs() * w).sum() / n_obj
        loss = l_hm + 0.1 * l_box + l_off
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_hm.detach(), l_box.detach(), l_off.detach()]).tolist()
        del x, okeep, target, idx, box_t, off_t, hm, box, off, l_hm, w, n_obj, l_box, l_off, loss
        if (step + 1) % _smoke(90, 2) == 0:
            model.eval()
            with torch.no_grad():
                nb = _smoke(4, 2)
                x = torch.randn(nb, 2, hi, hi, device="cuda").abs().contiguous(memory_format=torch.channels_last)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    hm, _, _ = model(x)
                heat = torch.sigmoid(hm)
                peaks = torch.where(heat == _F.max_pool2d(heat, 3, 1, 1), heat, 0.0)
                top = peaks.flatten(1).topk(_smoke(100, 8), dim=1).values
                out = torch.cat([top.mean(1), (top > 0.3).float().sum(1)])
            out.tolist()
            del x, hm, heat, peaks, top, out


# ---------------------------------------------------------------- berth allocation policy (container terminal)


class _BerthPolicy(_nn.Module):
    """Vessels encoded by pre-norm blocks under a key mask; each round the berths (static features and ready
    time) embedded, the context the mean of the unassigned vessels; a bilinear score for every vessel-berth pair,
    tanh-capped."""

    def __init__(self, f_v, f_b, d, heads, layers):
        super().__init__()
        self.v_in, self.b_in = mlp(f_v, d, d, act=_nn.GELU), mlp(f_b + 1, d, d, act=_nn.GELU)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.q, self.k = _nn.Linear(2 * d, d), _nn.Linear(d, d)
        self.scale = 1.0 / math.sqrt(d)

    def encode(self, vf, keep):
        x = self.v_in(vf)
        for blk in self.blocks:
            x = blk(x, mask=keep[:, None, None, :])
        return self.norm(x)

    def scores(self, hv, bfeat, ready, free):
        hb = self.b_in(torch.cat([bfeat, ready[..., None] / 24.0], -1))
        w = free[..., None].to(hv.dtype)
        ctx = (hv * w).sum(1) / w.sum(1).clamp(min=1)
        q = self.q(torch.cat([hv, ctx[:, None].expand_as(hv)], -1))
        return 10.0 * torch.tanh((q @ self.k(hb).transpose(1, 2)).float() * self.scale)


def _berth_rollout(model, inst, greedy, rounds):
    """One allocation episode per instance: each round one vessel-berth pair (or a no-op once every vessel is
    placed) by Gumbel-max or argmax over the masked pair scores. Returns the summed log-probabilities, the mean
    entropy, the priority-weighted turnaround cost and the total waiting time."""
    vf, keep, bfeat, fits, arrival, moves, prio, cranes = inst
    b, n = keep.shape
    m = bfeat.shape[1]
    hv = model.encode(vf, keep)
    assigned = ~keep
    ready = torch.zeros(b, m, device=vf.device)
    logp_sum = torch.zeros(b, device=vf.device)
    ent, cost, wait = 0.0, 0.0, 0.0
    vidx = torch.arange(n, device=vf.device)
    for _ in range(rounds):
        done = assigned.all(1)
        logits = model.scores(hv, bfeat, ready, ~assigned)
        ok = (~assigned)[:, :, None] & fits
        flat = torch.cat([logits.masked_fill(~ok, -1e9).flatten(1), torch.where(done, 0.0, -1e9)[:, None]], 1)
        logp = torch.log_softmax(flat, -1)
        if greedy:
            a = flat.argmax(-1)
        else:
            gumbel = -torch.log(-torch.log(torch.rand_like(flat).clamp(1e-9, 1 - 1e-9)))
            a = (flat.detach() + gumbel).argmax(-1)
        logp_sum = logp_sum + logp.gather(1, a[:, None])[:, 0]
        ent = ent + (-(logp.exp() * logp).sum(-1)).mean()
        is_op = a < n * m
        v, berth = torch.div(a, m, rounding_mode="floor").clamp(max=n - 1), a % m
        arr_v, mov_v, pri_v = (t.gather(1, v[:, None])[:, 0] for t in (arrival, moves, prio))
        start = torch.maximum(ready.gather(1, berth[:, None])[:, 0], arr_v)
        finish = start + mov_v / (cranes.gather(1, berth[:, None])[:, 0] * 28.0)
        cost = cost + torch.where(is_op, pri_v * (finish - arr_v), 0.0)
        wait = wait + torch.where(is_op, start - arr_v, 0.0)
        ready = torch.where(is_op[:, None], ready.scatter(1, berth[:, None], finish[:, None]), ready)
        assigned = assigned | ((vidx[None] == v[:, None]) & is_op[:, None])
    return logp_sum, ent / rounds, cost, wait


@_workload("container-terminal berth allocation policy training (random init, an attention policy trained by REINFORCE): 64-256 terminal instances a step (drawn), 12-32 vessel slots a step (drawn) with each instance's own 6 to that many calling vessels (drawn per instance, masked) and 4-8 berths (drawn per step); vessel features (arrival within 48 h, length, draft, container moves of 200-3,000, priority of 1-3, reefer share) and berth features (length, depth, 2-6 quay cranes; the first berth long and deep enough for any vessel) drawn on the device; a vessel MLP and 3 pre-norm blocks (width 128, 4 heads) under a key mask; one round per vessel slot: berth embeddings from the static features and ready time, the mean of the unassigned vessels as context, bilinear tanh-capped scores of every vessel-berth pair with assigned, padded and non-fitting pairs masked by masked_fill, a no-op allowed once every vessel is placed, one pair sampled by Gumbel-max; start, finish and waiting times by gather, berth ready times updated by scatter and torch.where; cost the priority-weighted turnaround; REINFORCE with the cost's batch-normalised advantage (minus the mean, over the standard deviation) and an entropy bonus; AdamW, clipping, bf16 autocast, 100 steps; the mean cost and waiting time read back every 10 steps and every 20 steps a no-grad greedy rollout of 128 instances of 32 vessels on 8 berths with its mean cost and waiting read back")
def berth_allocation_policy_train(rng):
    d, heads, layers = _smoke(128, 16), _smoke(4, 2), _smoke(3, 1)
    model = _BerthPolicy(6, 3, d, heads, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)

    def instances(counts, n, m):
        b = len(counts)
        keep = keep_mask(counts, n)
        arrival = torch.rand(b, n, device="cuda") * 48.0
        length = torch.rand(b, n, device="cuda") * 0.8 + 0.1
        draft = torch.rand(b, n, device="cuda") * 0.8 + 0.1
        moves = torch.randint(200, 3001, (b, n), device="cuda").float()
        prio = torch.randint(1, 4, (b, n), device="cuda").float()
        vf = torch.stack([arrival / 48.0, length, draft, moves / 3000.0, prio / 3.0,
                          torch.rand(b, n, device="cuda")], -1) * keep[..., None]
        b_len = torch.cat([torch.ones(b, 1, device="cuda"), torch.rand(b, m - 1, device="cuda") * 0.7 + 0.3], 1)
        b_dep = torch.cat([torch.ones(b, 1, device="cuda"), torch.rand(b, m - 1, device="cuda") * 0.7 + 0.3], 1)
        cranes = torch.randint(2, 7, (b, m), device="cuda").float()
        bfeat = torch.stack([b_len, b_dep, cranes / 6.0], -1)
        fits = (length[:, :, None] <= b_len[:, None]) & (draft[:, :, None] <= b_dep[:, None])
        return vf, keep, bfeat, fits, arrival, moves, prio, cranes

    steps = _smoke(100, 3)
    for step in range(steps):
        model.train()
        b, n, m = rng.randint(_smoke(64, 2), _smoke(256, 4)), rng.randint(_smoke(12, 6), _smoke(32, 8)), \
            rng.randint(_smoke(4, 2), _smoke(8, 3))
        inst = instances([rng.randint(6, n) for _ in range(b)], n, m)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logp, ent, cost, wait = _berth_rollout(model, inst, False, n)
        adv = (cost - cost.mean()) / (cost.std() + 1e-6)
        loss = (adv.detach() * logp).mean() - 0.01 * ent
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([cost.mean(), wait.mean()]).tolist()
        del inst, logp, ent, cost, wait, adv, loss
        if (step + 1) % _smoke(20, 2) == 0:
            model.eval()
            with torch.no_grad():
                nb, nv, nm = _smoke(128, 3), _smoke(32, 8), _smoke(8, 3)
                inst = instances([nv] * nb, nv, nm)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    _, _, cost, wait = _berth_rollout(model, inst, True, nv)
                out = torch.stack([cost.mean(), wait.mean()])
            out.tolist()
            del inst, cost, wait, out


# ---------------------------------------------------------------- hull sonar inspection service


class _SonarUNet(_nn.Module):
    """A residual U-Net (a full-resolution stem, stride-2 residual blocks, nearest-upsampling decoder stages with
    skips) over scan-converted sonar frames; per-pixel defect classes and a frame anomaly logit from the pooled
    deepest features."""

    def __init__(self, widths, n_cls):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(1, widths[0], 3, 1, 1, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU())
        self.down = _nn.ModuleList(BasicResBlock(a, w, 2) for a, w in zip(widths[:-1], widths[1:]))
        self.up = _nn.ModuleList(
            _nn.Sequential(_nn.Conv2d(a + w, w, 3, 1, 1, bias=False), _nn.BatchNorm2d(w), _nn.ReLU())
            for a, w in zip(widths[:0:-1], widths[-2::-1]))
        self.seg, self.anom = _nn.Conv2d(widths[0], n_cls, 1), _nn.Linear(widths[-1], 1)

    def forward(self, x):
        feats = [self.stem(x)]
        for blk in self.down:
            feats.append(blk(feats[-1]))
        y = feats[-1]
        anom = self.anom(y.mean((2, 3)))
        for up, skip in zip(self.up, feats[-2::-1]):
            y = up(torch.cat([_F.interpolate(y, scale_factor=2, mode="nearest"), skip], 1))
        return self.seg(y).float(), anom.float()[:, 0]


@_workload("hull sonar inspection serving (random init, a residual U-Net over imaging-sonar frames): 2,700-2,800 requests (drawn) of 1-6 frames each (drawn) from an ROV's forward-looking imaging sonar, 256 or 512 beams over a 130-degree fan (drawn per request) and 256-640 range bins (drawn per request, a multiple of 64), uint8 intensities uploaded on a side stream from two reused pinned host buffers (filled once, sized for 6 frames of 640 x 512) one request ahead (one span, through SideUploads.ahead), a range-gain ramp and log compression on the device; scan conversion to a Cartesian fan of (range bins / 2) x (3/4 range bins) pixels by grid_sample (the sampling grid and fan mask built on the device once per output size); a channels-last residual U-Net (stem 32 at full resolution, stride-2 residual blocks of 64/128/192, nearest-upsampling decoder with skips) under bf16 autocast; 4 classes (clean hull, fouling, corrosion, crack) and a frame anomaly logit; per frame the class fractions over the fan, the anomaly probability and a crack flag by torch.where; the hull zone's (one of 96 per request, drawn) coverage and frame count kept on the device by index_add; each request's fractions, anomaly probabilities, flags and zone coverage read back")
def hull_sonar_inspect_serve(rng):
    widths, n_cls = _smoke([32, 64, 128, 192], [16, 16, 32]), 4
    model = _SonarUNet(widths, n_cls).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    beam_opts, max_f = _smoke([256, 512], [32, 64]), _smoke(6, 2)
    r_lo, r_hi, r_mult = _smoke(256, 64), _smoke(640, 128), _smoke(64, 32)
    n_zone = _smoke(96, 4)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_f * r_hi * max(beam_opts),), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    coverage = torch.zeros(n_zone, n_cls, device="cuda")
    frames_seen = torch.zeros(n_zone, device="cuda")
    half_fov = math.radians(65.0)
    grids = {}

    def fan(hc, wc):
        """The grid_sample grid (beam, range in -1..1) of an hc x wc Cartesian fan, the sonar at the top centre,
        and the mask of pixels inside the fan."""
        if (hc, wc) not in grids:
            yy = torch.linspace(0, 1, hc, device="cuda")[:, None].expand(hc, wc)
            xx = torch.linspace(-math.sin(half_fov), math.sin(half_fov), wc, device="cuda")[None].expand(hc, wc)
            r, th = torch.sqrt(xx * xx + yy * yy), torch.atan2(xx, yy) / half_fov
            inside = ((r <= 1) & (th.abs() <= 1)).float()
            grids[(hc, wc)] = (torch.stack([th, 2 * r - 1], -1)[None], inside)
        return grids[(hc, wc)]

    nreq = rng.randint(_smoke(2700, 3), _smoke(2800, 4))
    plan = []
    for _ in range(nreq):
        rb = rng.randint(r_lo // r_mult, r_hi // r_mult) * r_mult
        plan.append((rng.randint(1, max_f), rb, rng.choice(beam_opts), rng.randrange(n_zone)))

    for (f, rb, beams, zone), raw in up.ahead(plan, lambda p: (p[0] * p[1] * p[2],)):
        with torch.no_grad():
            hc, wc = rb // 2, rb * 3 // 4
            grid, inside = fan(hc, wc)
            gain = torch.linspace(1.0, 3.0, rb, device="cuda").view(1, 1, rb, 1)
            x = torch.log1p(raw.view(f, 1, rb, beams).float().mul_(gain / 255.0 * 20.0)) / math.log(61.0)
            cart = _F.grid_sample(x, grid.expand(f, -1, -1, -1), mode="bilinear", padding_mode="zeros",
                                  align_corners=False).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                seg, anom = model(cart)
            frac = (seg.softmax(1) * inside).sum((2, 3)) / inside.sum()
            p_anom = torch.sigmoid(anom)
            crack = torch.where(frac[:, 3] > 0.02, 1.0, 0.0)
            zone_t = torch.full((1,), zone, device="cuda", dtype=torch.long)
            coverage.index_add_(0, zone_t, frac.sum(0, keepdim=True))
            frames_seen.index_add_(0, zone_t, torch.full((1,), float(f), device="cuda"))
            zone_cov = coverage.index_select(0, zone_t) / frames_seen.index_select(0, zone_t)[:, None]
            out = torch.cat([frac.flatten(), p_anom, crack, zone_cov.flatten()])
        out.tolist()
        del raw, gain, x, cart, seg, anom, frac, p_anom, crack, zone_t, zone_cov, out

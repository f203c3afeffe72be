"""The hundred-and-tenth batch of held-out workloads for record.py, second half (see batch110.py): forestry, timber
and wood products, written in torch alone. Log-bucking policy training for sawmill and harvester cutting
optimisation (a transformer encoder over scanned stem profiles of drawn lengths, then up to 8 cutting decisions
taken round by round: a product chosen by Gumbel-max sampling among those that fit, the log's value from its volume,
small-end diameter and worst quality grade gathered from precomputed windows, advantage actor-critic), a
canopy-height sampling service (a conditional diffusion U-Net with timestep-embedded residual blocks and attention at
the lowest level, DDIM sampling with classifier-free guidance for drawn numbers of tiles, resolutions, step counts
and guidance scales per request, stand statistics of the samples), a log CT-scanning service (a 3-d residual
encoder-decoder convnet over stacks of CT cross-sections of logs of drawn lengths: knot and heartwood segmentation,
the pith by a soft-argmax, knots per length zone and angular sector, the best sawing rotation) and individual-tree
growth training (a message-passing network over each plot's 8-nearest-neighbour competition graph, messages summed
by index_add_ and averaged, rolled out over a drawn number of five-year periods, diameter, height, survival fed back).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the CT service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or masked_fill;
no boolean-mask indexing; results read back only at logging points or once per request. log_ct_knot_serve uploads
its scans on a side stream (workload_helpers.SideUploads, one request ahead); the other three are single-stream. The
models run under bf16 autocast. Every position table is sized for the longest padded length that can be drawn.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, TimeResBlock, _sincos, _square_distance, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _loguniform(rng, lo, hi, mult=1):
    return _b.rec._loguniform(rng, lo, hi, mult)


# ---------------------------------------------------------------- log-bucking policy (actor-critic)


class _BuckingPolicy(_nn.Module):
    """Stem sections (diameter, sweep, relative position, rot, a quality-grade embedding) and a position table
    through pre-norm blocks under a key mask; per round, the section at the cutting pointer, the pooled stem, the
    remaining length and a round embedding give product logits and a value."""

    def __init__(self, d, heads, layers, max_pos, n_grade, n_act, rounds):
        super().__init__()
        self.inp, self.grade = _nn.Linear(4, d), _nn.Embedding(n_grade, d)
        self.pos, self.round = _nn.Embedding(max_pos, d), _nn.Embedding(rounds, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.state = mlp(3 * d + 1, d, d, act=_nn.GELU)
        self.pi, self.v = _nn.Linear(d, n_act), _nn.Linear(d, 1)

    def encode(self, feats, grade, keep):
        t = feats.shape[1]
        x = self.inp(feats) + self.grade(grade) + self.pos(torch.arange(t, device=feats.device))[None]
        for blk in self.blocks:
            x = blk(x, mask=keep[:, None, None, :])
        x = self.norm(x)
        w = keep[..., None].to(x.dtype)
        return x, (x * w).sum(1) / w.sum(1)

    def act(self, enc, pooled, ptr, rem, r):
        here = enc.gather(1, ptr[:, None, None].expand(-1, 1, enc.shape[-1]))[:, 0]
        rnd = self.round.weight[r][None].expand_as(pooled)
        h = self.state(torch.cat([here, pooled, rnd, rem[:, None].to(here.dtype)], -1))
        return self.pi(h).float(), self.v(h)[:, 0].float()


@_workload("log-bucking policy training for cutting optimisation (random init, a transformer encoder and an advantage actor-critic): 96-384 scanned stems a step (drawn), each of 24-64 half-metre sections (drawn per stem, padded to the step's longest rounded up to a multiple of 8, a 64-row position table) with a tapering diameter, sweep, rot near the butt and a quality grade (of 4, a clamped random walk) drawn on the device; 3 pre-norm blocks (width 192, 6 heads) under a key mask; 6 sawlog products of 6-11 sections with minimum small-end diameters plus a pulpwood action that takes the rest; the window volume (cumulative sums), small-end diameter and worst grade (max-pooling) of every product at every start precomputed; up to 8 cutting rounds, each a product drawn by Gumbel-max sampling among those that fit (masked_fill), the log's value from a price table by product and grade (pulp price under the minimum diameter) gathered at the pointer, the pointer advanced by torch.where (to the stem's end on pulp), finished stems masked by an active flag and the remainder after the last round priced as pulp; returns-to-go, a value baseline, policy-gradient, value and entropy losses; Adam, clipping, bf16 autocast, 235 steps; the mean stem value read back every 20 steps and every 47 steps a no-grad greedy bucking of 512 stems of 64 sections with the mean value and pulp share read back")
def log_bucking_policy_train(rng):
    d, heads, layers, n_grade = _smoke(192, 32), _smoke(6, 2), _smoke(3, 1), 4
    max_sec, lo = _smoke(64, 16), _smoke(24, 12)
    lengths_k = [6, 7, 8, 9, 10, 11] if max_sec >= 64 else [4, 5]
    n_prod, rounds = len(lengths_k), _smoke(8, 3)
    model = _BuckingPolicy(d, heads, layers, max_sec, n_grade, n_prod + 1, rounds).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    min_sed = torch.tensor([0.14, 0.16, 0.18, 0.20, 0.24, 0.28][:n_prod], device="cuda")
    price = torch.rand(n_prod, n_grade, device="cuda").sort(1, descending=True).values * 60 + 60  # per m3
    pulp = 35.0
    prod_len = torch.tensor(lengths_k, device="cuda")

    def stems(lengths):
        b, t = len(lengths), -(-max(lengths) // 8) * 8
        keep = keep_mask(lengths, t)
        n = torch.tensor(lengths, device="cuda")
        rel = torch.arange(t, device="cuda")[None].float() / n[:, None]
        d0 = torch.rand(b, 1, device="cuda") * 0.3 + 0.2
        diam = (d0 * (1 - rel).clamp(min=0.02) ** 0.7 * (1 + 0.03 * torch.randn(b, t, device="cuda"))) * keep
        sweep = torch.rand(b, t, device="cuda") * 0.02
        rot = (torch.rand(b, 1, device="cuda") < 0.1).float() * (rel < 0.15).float()
        grade = (torch.randint(-1, 2, (b, t), device="cuda").cumsum(1) // 3 + 1).clamp(0, n_grade - 1)
        grade = grade.masked_fill(~keep, 0)
        feats = torch.stack([diam * 4, sweep * 50, rel, rot], -1)
        # per product and start section: window volume, small-end diameter and worst grade
        vol = math.pi / 4 * diam ** 2 * 0.5
        csum = _F.pad(vol.cumsum(1), (1, 12))
        worst = torch.maximum(grade.float(), rot * (n_grade - 1))
        starts = torch.arange(t, device="cuda")[None]
        wvol, wsed, wgrade = [], [], []
        for ln in lengths_k:
            wvol.append(csum[:, ln:ln + t] - csum[:, :t])
            wsed.append(_F.pad(diam, (0, 12))[:, ln - 1:ln - 1 + t])
            wgrade.append(_F.max_pool1d(_F.pad(worst, (0, ln - 1))[:, None], ln, 1)[:, 0])
        tail = csum.gather(1, n[:, None]) - csum[:, :t + 1]  # volume from each start (0..t) to the stem's end
        return feats, grade, keep, n, starts, torch.stack(wvol, 1), torch.stack(wsed, 1), \
            torch.stack(wgrade, 1).long(), tail

    def bucking(lengths, greedy):
        feats, grade, keep, n, starts, wvol, wsed, wgrade, tail = stems(lengths)
        b = len(lengths)
        ar = torch.arange(b, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            enc, pooled = model.encode(feats, grade, keep)
        ptr = torch.zeros(b, dtype=torch.long, device="cuda")
        active = torch.ones(b, device="cuda")
        logps, values, ents, rewards, acts, pulps = [], [], [], [], [], []
        for r in range(rounds):
            rem = (n - ptr).float()
            pc = ptr.clamp(max=enc.shape[1] - 1)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logit, value = model.act(enc, pooled, pc, rem / max_sec, r)
            fits = torch.cat([(ptr[:, None] + prod_len[None]) <= n[:, None], torch.ones(b, 1, dtype=torch.bool,
                                                                                        device="cuda")], 1)
            logit = logit.masked_fill(~fits, -1e4)
            logp_all = logit.log_softmax(-1)
            if greedy:
                a = logit.argmax(-1)
            else:
                a = (logit - torch.log(-torch.log(torch.rand_like(logit).clamp(1e-9, 1 - 1e-9)))).argmax(-1)
            is_pulp = a == n_prod
            k = a.clamp(max=n_prod - 1)
            v = wvol[ar, k, pc]
            sed = wsed[ar, k, pc]
            g = wgrade[ar, k, pc]
            saw = torch.where(sed >= min_sed[k], price[k, g], pulp) * v
            rest = tail[ar, ptr] * pulp
            reward = torch.where(is_pulp, rest, saw) * active
            logps.append(logp_all.gather(1, a[:, None])[:, 0] * active)
            ents.append(-(logp_all.exp() * logp_all).sum(-1) * active)
            values.append(value)
            rewards.append(reward)
            acts.append(active)
            pulps.append(is_pulp.float() * active)
            ptr = torch.where(is_pulp, n, ptr + prod_len[k])
            done = is_pulp | ((n - ptr) < min(lengths_k))
            active = active * (~done).float()
        # what is left after the last round goes to pulp
        rewards[-1] = rewards[-1] + active * tail[ar, ptr] * pulp
        return (torch.stack(logps, 1), torch.stack(values, 1), torch.stack(ents, 1), torch.stack(rewards, 1),
                torch.stack(acts, 1), torch.stack(pulps, 1))

    steps = _smoke(235, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(96, 4), _smoke(384, 8))
        lengths = [rng.randint(lo, max_sec) for _ in range(b)]
        logp, value, ent, reward, act, _ = bucking(lengths, False)
        ret = reward.flip(1).cumsum(1).flip(1) / 100
        adv = (ret - value).detach()
        n_act = act.sum().clamp(min=1)
        l_pi = -(adv * logp).sum() / n_act
        l_v = (((value - ret) ** 2) * act).sum() / n_act
        l_e = -ent.sum() / n_act
        loss = l_pi + 0.5 * l_v + 0.01 * l_e
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            reward.sum(1).mean().item()
        del logp, value, ent, reward, act, ret, adv, n_act, l_pi, l_v, l_e, loss
        if (step + 1) % _smoke(47, 2) == 0:
            model.eval()
            with torch.no_grad():
                _, _, _, reward, act, pulps = bucking([max_sec] * _smoke(512, 4), True)
                out = torch.stack([reward.sum(1).mean(), pulps.sum() / act.sum().clamp(min=1)])
            out.tolist()
            del reward, act, pulps, out


# ---------------------------------------------------------------- canopy-height diffusion sampling


class _CanopyUNet(_nn.Module):
    """A conditional diffusion U-Net: the noisy canopy-height model and a terrain raster in, a timestep embedding
    plus forest-type (with a null class) and stand-age embeddings, one TimeResBlock a level down and up with skips,
    a middle TimeResBlock, a pre-norm attention block over the lowest level and another TimeResBlock."""

    def __init__(self, widths, d_t, n_types, heads):
        super().__init__()
        self.d_t = d_t
        self.temb = mlp(d_t, 4 * d_t, 4 * d_t, act=_nn.SiLU)
        self.kind = _nn.Embedding(n_types + 1, 4 * d_t)
        self.age = _nn.Linear(1, 4 * d_t)
        te = 4 * d_t
        self.inp = _nn.Conv2d(2, widths[0], 3, 1, 1)
        self.down = _nn.ModuleList(TimeResBlock(a, b, te) for a, b in zip([widths[0]] + widths[:-1], widths))
        self.pool = _nn.ModuleList(_nn.Conv2d(w, w, 3, 2, 1) for w in widths[:-1])
        self.mid1, self.mid2 = TimeResBlock(widths[-1], widths[-1], te), TimeResBlock(widths[-1], widths[-1], te)
        self.attn = PreNormBlock(widths[-1], heads)
        self.up = _nn.ModuleList(TimeResBlock(2 * b, a, te) for a, b in zip(widths[-2::-1] + [widths[0]],
                                                                             widths[::-1]))
        self.out = _nn.Sequential(_nn.GroupNorm(8, widths[0]), _nn.SiLU(), _nn.Conv2d(widths[0], 1, 3, 1, 1))

    def forward(self, x, terrain, t, kind, age):
        te = self.temb(_sincos(t, self.d_t)) + self.kind(kind) + self.age(age[:, None])
        te = _F.silu(te)
        h = self.inp(torch.cat([x, terrain], 1))
        skips = []
        for i, blk in enumerate(self.down):
            h = blk(h, te)
            skips.append(h)
            if i < len(self.pool):
                h = self.pool[i](h)
        h = self.mid1(h, te)
        b, c, hh, ww = h.shape
        h = self.attn(h.flatten(2).transpose(1, 2)).transpose(1, 2).reshape(b, c, hh, ww)
        h = self.mid2(h, te)
        for i, blk in enumerate(self.up):
            if i > 0:
                h = _F.interpolate(h, scale_factor=2, mode="nearest")
            h = blk(torch.cat([h, skips[-1 - i]], 1), te)
        return self.out(h)


@_workload("canopy-height-model sampling service (random init, a conditional diffusion U-Net, DDIM with classifier-free guidance): 88-92 requests (drawn) of 1-8 tiles each (drawn) at 64, 96 or 128 cells a side (drawn per request), 10-30 DDIM steps (drawn per request) over a 1,000-step cosine schedule (computed on the host) and a guidance scale of 1.5-4.0 (drawn); each request's terrain raster, forest type (of 16) and stand age (10-150 years) drawn on the device; conditional and unconditional (null type, zero age) halves run as one batch; a U-Net of widths 64/128/256 (one timestep-embedded residual block with GroupNorm a level down and up, skips, strided 3x3 downsampling, nearest upsampling), a middle residual block, a pre-norm attention block (4 heads) over the lowest level and another residual block, bf16 autocast; the sampled heights scaled to metres (0-45 m); per tile the mean and 95th-percentile height (torch.quantile), canopy cover (over 2 m) and gap fraction (under 0.5 m) read back per request")
def canopy_height_ddim_sample(rng):
    widths, d_t, n_types, heads = _smoke([64, 128, 256], [16, 32, 32]), _smoke(64, 16), 16, _smoke(4, 2)
    model = _CanopyUNet(widths, d_t, n_types, heads).cuda().eval()
    model.requires_grad_(False)
    t_max = 1000
    acp = [math.cos((i / t_max + 0.008) / 1.008 * math.pi / 2) ** 2 for i in range(t_max + 1)]
    acp = [a / acp[0] for a in acp]
    sizes, max_tiles = _smoke([64, 96, 128], [32]), _smoke(8, 2)
    nreq = rng.randint(_smoke(88, 2), _smoke(92, 3))
    for _ in range(nreq):
        n, res, k, scale = rng.randint(1, max_tiles), rng.choice(sizes), rng.randint(_smoke(10, 2), _smoke(30, 3)), \
            rng.uniform(1.5, 4.0)
        ts = [int(round(t_max * (1 - i / k))) for i in range(k)] + [0]
        with torch.no_grad():
            terrain = _F.avg_pool2d(torch.randn(n, 1, res, res, device="cuda"), 9, 1, 4)
            kind = torch.randint(0, n_types, (n,), device="cuda")
            age = torch.rand(n, device="cuda") * 140 + 10
            kinds = torch.cat([kind, torch.full_like(kind, n_types)])
            ages = torch.cat([age / 150, torch.zeros_like(age)])
            terr2 = torch.cat([terrain, terrain])
            x = torch.randn(n, 1, res, res, device="cuda")
            for t, t_next in zip(ts[:-1], ts[1:]):
                a, a_next = acp[min(t, t_max - 1)], acp[t_next]
                tt = torch.full((2 * n,), t, device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    eps2 = model(torch.cat([x, x]), terr2, tt, kinds, ages).float()
                cond, unc = eps2[:n], eps2[n:]
                eps = unc + scale * (cond - unc)
                x0 = ((x - math.sqrt(1 - a) * eps) / math.sqrt(a)).clamp(-1, 1)
                x = math.sqrt(a_next) * x0 + math.sqrt(1 - a_next) * eps
            height = (x[:, 0] + 1) * 22.5
            flat = height.flatten(1)
            out = torch.stack([flat.mean(1), torch.quantile(flat, 0.95, dim=1), (flat > 2).float().mean(1),
                               (flat < 0.5).float().mean(1)], 1)
        out.tolist()
        del terrain, kind, age, kinds, ages, terr2, x, tt, eps2, cond, unc, eps, x0, height, flat, out


# ---------------------------------------------------------------- log CT scanning service (3-d convnet)


def _cbr3(cin, cout, stride=1):
    return _nn.Sequential(_nn.Conv3d(cin, cout, 3, stride, 1, bias=False), _nn.BatchNorm3d(cout), _nn.ReLU())


class _Res3d(_nn.Module):
    """A 3-d residual block: a strided 3x3x3 convolution and an unstrided one, the shortcut a strided 1x1x1."""

    def __init__(self, cin, cout):
        super().__init__()
        self.a = _cbr3(cin, cout, 2)
        self.b = _nn.Sequential(_nn.Conv3d(cout, cout, 3, 1, 1, bias=False), _nn.BatchNorm3d(cout))
        self.sc = _nn.Conv3d(cin, cout, 1, 2, bias=False)

    def forward(self, x):
        return _F.relu(self.b(self.a(x)) + self.sc(x))


class _LogCTNet(_nn.Module):
    """A stem strided across the cross-section only, two 3-d residual stages, a decoder with skips back to the
    stem's resolution; knot, heartwood and pith-heatmap logits."""

    def __init__(self, widths):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv3d(1, widths[0], 3, (1, 2, 2), 1, bias=False),
                                   _nn.BatchNorm3d(widths[0]), _nn.ReLU())
        self.enc = _nn.ModuleList(_Res3d(a, b) for a, b in zip(widths[:-1], widths[1:]))
        self.dec = _nn.ModuleList(_cbr3(a + b, b) for a, b in zip(widths[:0:-1], widths[-2::-1]))
        self.head = _nn.Conv3d(widths[0], 3, 1)

    def forward(self, x):
        feats = [self.stem(x)]
        for e in self.enc:
            feats.append(e(feats[-1]))
        y = feats[-1]
        for d, skip in zip(self.dec, feats[-2::-1]):
            y = d(torch.cat([_F.interpolate(y, size=skip.shape[-3:], mode="nearest"), skip], 1))
        return self.head(y).float()


@_workload("log CT-scanning service at a sawmill intake (random init, a 3-d residual encoder-decoder convnet): 3,480-3,620 requests (drawn) of 1-2 logs each (drawn), each log a stack of 48-160 CT cross-sections (drawn per request, a multiple of 16) of 96 x 96 int16 Hounsfield values, uploaded on a side stream from two reused pinned host buffers (filled once, sized for 2 logs of 160 slices) one request ahead (SideUploads.ahead, one span), normalised on the device; a 3-d stem (16 channels, strided across the cross-section only), two 3-d residual stages (32 and 64, stride 2), a decoder with skips back to the stem's resolution (48 x 48 a slice) and three logits: knots, heartwood and a pith heatmap, bf16 autocast; the wood mask from the Hounsfield values (max-pooled to the output grid), the pith per slice by a soft-argmax, knot probability summed per 8 angular sectors (a matmul with a fixed sector map), averaged over 8 length zones (adaptive average pooling) and summed over the sectors, the sawing rotation (of 4) with the least knot area on the two opposite faces; per log the knot volume, heartwood fraction of the wood, rotation, mean and maximum pith eccentricity and the 8 zone values read back per request")
def log_ct_knot_serve(rng):
    widths = _smoke([16, 32, 64], [16, 16, 32])
    model = _LogCTNet(widths).cuda().eval()
    model.requires_grad_(False)
    side, lo, hi, mult = _smoke(96, 32), _smoke(48, 8), _smoke(160, 16), _smoke(16, 8)
    max_logs, sectors, zones = 2, 8, _smoke(8, 2)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(-1000, 1500, (max_logs * hi * side * side,), dtype=torch.int16, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    g = side // 2
    yy, xx = torch.meshgrid(torch.arange(g, device="cuda").float() - (g - 1) / 2,
                            torch.arange(g, device="cuda").float() - (g - 1) / 2, indexing="ij")
    angle = torch.atan2(yy, xx)
    sector_map = _F.one_hot(((angle + math.pi) / (2 * math.pi) * sectors).long().clamp(max=sectors - 1),
                            sectors).float().flatten(0, 1)  # (g*g, sectors)
    gx, gy = xx.flatten() / g, yy.flatten() / g
    nreq = rng.randint(_smoke(3480, 3), _smoke(3620, 4))
    plan = [(rng.randint(1, max_logs), rng.randint(lo // mult, hi // mult) * mult) for _ in range(nreq)]

    for (n, depth), raw in up.ahead(plan, lambda p: (p[0] * p[1] * side * side,)):
        with torch.no_grad():
            hu = raw.view(n, 1, depth, side, side).float()
            x = (hu + 200) / 600
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logit = model(x)
            wood = (_F.max_pool3d(hu, (1, 2, 2)) > -500).float()[:, 0]  # (n, D, g, g)
            knot = torch.sigmoid(logit[:, 0]) * wood
            heart = torch.sigmoid(logit[:, 1]) * wood
            pith = logit[:, 2].flatten(2).softmax(-1)  # (n, D, g*g)
            px, py = (pith * gx).sum(-1), (pith * gy).sum(-1)
            ecc = (px ** 2 + py ** 2).sqrt()
            per_sector = knot.flatten(2) @ sector_map  # (n, D, sectors)
            zoned = _F.adaptive_avg_pool1d(per_sector.transpose(1, 2), zones)  # (n, sectors, zones)
            faces = per_sector.sum(1)
            faces = faces[:, :sectors // 2] + faces[:, sectors // 2:]
            rot = faces.argmin(-1)
            wood_sum = wood.sum((1, 2, 3)).clamp(min=1)
            out = torch.cat([knot.sum((1, 2, 3))[:, None], (heart.sum((1, 2, 3)) / wood_sum)[:, None],
                             rot.float()[:, None], ecc.mean(1)[:, None], ecc.amax(1)[:, None], zoned.sum(1)], 1)
        out.tolist()
        del raw, hu, x, logit, wood, knot, heart, pith, px, py, ecc, per_sector, zoned, faces, rot, wood_sum, out


# ---------------------------------------------------------------- individual-tree growth (competition graph)


class _GrowthGNN(_nn.Module):
    """Tree nodes (diameter, height, crown ratio, survival, site index, a species embedding) and edges to each
    tree's k nearest neighbours (offsets, distance, log diameter ratio, height difference); message-passing layers
    with messages summed by index_add_ and divided by k; diameter and height increments (softplus) and a mortality
    logit per tree."""

    def __init__(self, n_species, d, layers):
        super().__init__()
        self.species = _nn.Embedding(n_species, 16)
        self.node = mlp(5 + 16, d, d, act=_nn.SiLU)
        self.edge = mlp(5, d, d, act=_nn.SiLU)
        self.msg = _nn.ModuleList(mlp(3 * d, d, d, act=_nn.SiLU) for _ in range(layers))
        self.upd = _nn.ModuleList(mlp(2 * d, d, d, act=_nn.SiLU) for _ in range(layers))
        self.norms = _nn.ModuleList(_nn.LayerNorm(d) for _ in range(layers))
        self.head = mlp(d, d, 3, act=_nn.SiLU)

    def forward(self, dyn, sp, e, src, dst, k):
        h = self.node(torch.cat([dyn, self.species(sp)], -1))
        ef = self.edge(e)
        for msg, upd, norm in zip(self.msg, self.upd, self.norms):
            m = msg(torch.cat([h[src], h[dst], ef], -1))
            # m is bf16 under autocast while h is fp32 after the first LayerNorm: sum in m's dtype.
            agg = m.new_zeros(h.shape[0], m.shape[1]).index_add_(0, dst, m) / k
            h = norm(h + upd(torch.cat([h, agg], -1)))
        out = self.head(h).float()
        return _F.softplus(out[:, 0]), _F.softplus(out[:, 1]), out[:, 2]


@_workload("individual-tree growth training (random init, a message-passing network over plot competition graphs): 8-24 inventory plots a step (drawn), each of 40-300 trees (drawn per plot, padded to the step's longest rounded up to a multiple of 16, masked) with positions in a 30 m square, diameter, height, crown ratio, species (of 12) and the plot's site index drawn on the device; each tree's 8 nearest neighbours in its plot by topk over squared distances (padded trees and itself pushed to infinity by masked_fill), flattened to one edge list with plot offsets; 4 message-passing layers (width 128, edge MLPs over both ends and the edge features, messages summed per tree by index_add_ and divided by 8, residual updates with LayerNorm); rolled out over 2-5 five-year periods (drawn per step), each period's edge features (offsets, distance, log diameter ratio and height difference) recomputed from the current sizes, the predicted diameter and height increments added and the survival multiplied by one minus the mortality probability; smooth L1 on the increments and binary cross-entropy on mortality against drawn targets over real trees (masked), backpropagated through the rollout; AdamW, clipping, bf16 autocast, 220 steps; the losses read back every 20 steps and every 44 steps a no-grad 10-period projection of 16 plots of 300 trees with the basal area per hectare per period read back")
def tree_growth_gnn_train(rng):
    n_species, d, layers, k = 12, _smoke(128, 16), _smoke(4, 2), _smoke(8, 4)
    model = _GrowthGNN(n_species, d, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    lo, hi = _smoke(40, 12), _smoke(300, 20)

    def plots(lengths):
        p, n = len(lengths), -(-max(lengths) // 16) * 16
        keep = keep_mask(lengths, n)
        xy = torch.rand(p, n, 2, device="cuda") * 30
        xyz = torch.cat([xy, torch.zeros(p, n, 1, device="cuda")], -1)
        d2 = _square_distance(xyz, xyz).masked_fill(~keep[:, None, :], float("inf"))
        d2 = d2.masked_fill(torch.eye(n, dtype=torch.bool, device="cuda")[None], float("inf"))
        idx = d2.topk(k, dim=-1, largest=False).indices  # (p, n, k)
        offs = (torch.arange(p, device="cuda") * n)[:, None, None]
        src = (idx + offs).flatten()
        dst = torch.arange(p * n, device="cuda")[:, None].expand(-1, k).flatten()
        dbh = (torch.rand(p, n, device="cuda") * 40 + 5).flatten()
        height = dbh * 0.6 + torch.rand(p * n, device="cuda") * 5
        crown = torch.rand(p * n, device="cuda") * 0.6 + 0.2
        sp = torch.randint(0, n_species, (p * n,), device="cuda")
        site = (torch.rand(p, 1, device="cuda") * 20 + 15).expand(p, n).flatten()
        return keep.flatten().float(), xy.flatten(0, 1), src, dst, dbh, height, crown, sp, site

    def features(xy, src, dst, dbh, height, crown, surv, site):
        off = (xy[src] - xy[dst]) / 10
        dist = off.norm(dim=-1, keepdim=True)
        e = torch.cat([off, dist, (dbh[src] / dbh[dst]).log()[:, None], ((height[src] - height[dst]) / 10)[:, None]],
                      -1)
        dyn = torch.stack([dbh / 50, height / 30, crown, surv, site / 30], -1)
        return dyn, e

    steps = _smoke(220, 3)
    for step in range(steps):
        model.train()
        lengths = [rng.randint(lo, hi) for _ in range(rng.randint(_smoke(8, 2), _smoke(24, 3)))]
        periods = rng.randint(2, 5)
        keep, xy, src, dst, dbh, height, crown, sp, site = plots(lengths)
        surv = torch.ones_like(dbh)
        l_inc, l_m = 0.0, 0.0
        for _ in range(periods):
            dyn, e = features(xy, src, dst, dbh, height, crown, surv, site)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                d_inc, h_inc, mort = model(dyn, sp, e, src, dst, k)
            t_d = torch.rand_like(dbh) * 3
            t_h = torch.rand_like(dbh) * 2
            dead = (torch.rand_like(dbh) < 0.05).float()
            l_inc = l_inc + ((_F.smooth_l1_loss(d_inc, t_d, reduction="none")
                              + _F.smooth_l1_loss(h_inc, t_h, reduction="none")) * keep).sum() / keep.sum()
            l_m = l_m + (_F.binary_cross_entropy_with_logits(mort, dead, reduction="none") * keep).sum() / keep.sum()
            dbh, height = dbh + d_inc, height + h_inc
            surv = surv * (1 - torch.sigmoid(mort))
        loss = (l_inc + l_m) / periods
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_inc.detach(), l_m.detach()]).tolist()
        del keep, xy, src, dst, dbh, height, crown, sp, site, surv, dyn, e, d_inc, h_inc, mort, t_d, t_h, dead
        del l_inc, l_m, loss
        if (step + 1) % _smoke(44, 2) == 0:
            model.eval()
            n_plots = _smoke(16, 2)
            with torch.no_grad():
                keep, xy, src, dst, dbh, height, crown, sp, site = plots([hi] * n_plots)
                surv = torch.ones_like(dbh)
                ba = []
                for _ in range(_smoke(10, 2)):
                    dyn, e = features(xy, src, dst, dbh, height, crown, surv, site)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        d_inc, h_inc, mort = model(dyn, sp, e, src, dst, k)
                    dbh, height = dbh + d_inc, height + h_inc
                    surv = surv * (1 - torch.sigmoid(mort))
                    area = math.pi * (dbh / 200) ** 2 * surv * keep
                    ba.append(area.view(n_plots, -1).sum(1) / 0.09)
                out = torch.stack(ba, 1)
            out.tolist()
            del keep, xy, src, dst, dbh, height, crown, sp, site, surv, ba, dyn, e, d_inc, h_inc, mort, area, out

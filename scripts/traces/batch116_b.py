"""The hundred-and-sixteenth batch of held-out workloads for record.py, second half (see batch116.py): dentistry and
oral health, written in torch alone. Cone-beam CT tooth and canal segmentation fine-tuning (a 3-d residual U-Net over
CBCT patches of drawn sizes, the encoder frozen for the first steps and then trained at a lower learning rate),
orthodontic aligner staging policy training (a transformer policy over the teeth of an arch moving each tooth a
bounded step a stage towards its planned pose, Gaussian actions, collision and movement penalties between neighbours,
an advantage actor-critic over the stages), a crown-design point diffusion sampler (a DiT-style transformer with
adaptive layer norm over the points of a crown, cross-attention to the encoded preparation and neighbouring teeth,
classifier-free guidance by tooth type, DDIM with drawn point counts, step counts and guidance scales) and a
periapical lesion triage service (a ConvNeXt-style convnet over periapical films of the three sensor sizes, a PAI
score, a bone-loss estimate and the top lesion locations per film).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the triage service), `rng` the workload's random.Random for every shape, count and sampled choice,
sizes through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or
masked_fill; no boolean-mask indexing; results read back only at logging points or once per request.
periapical_lesion_triage_serve uploads its films on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, _mha, _sincos, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- CBCT tooth and canal segmentation (3-d U-Net)


class _Res3d(_nn.Module):
    """A 3-d residual block: two 3x3x3 convolutions with instance norm and LeakyReLU, strided by `stride`, a 1x1x1
    strided shortcut where the shape changes."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1, self.n1 = _nn.Conv3d(cin, cout, 3, stride, 1, bias=False), _nn.InstanceNorm3d(cout, affine=True)
        self.c2, self.n2 = _nn.Conv3d(cout, cout, 3, 1, 1, bias=False), _nn.InstanceNorm3d(cout, affine=True)
        self.sc = (_nn.Conv3d(cin, cout, 1, stride, bias=False) if stride != 1 or cin != cout else _nn.Identity())

    def forward(self, x):
        act = _F.leaky_relu
        return act(self.n2(self.c2(act(self.n1(self.c1(x)), 0.01))) + self.sc(x), 0.01)


class _CbctUNet(_nn.Module):
    def __init__(self, widths, n_cls):
        super().__init__()
        self.enc = _nn.ModuleList(_Res3d(a, w, 1 if i == 0 else 2)
                                  for i, (a, w) in enumerate(zip([1] + widths[:-1], widths)))
        self.dec = _nn.ModuleList(_Res3d(a + w, w, 1) for a, w in zip(widths[:0:-1], widths[-2::-1]))
        self.seg = _nn.Conv3d(widths[0], n_cls, 1)

    def forward(self, x):
        feats = []
        for blk in self.enc:
            x = blk(x)
            feats.append(x)
        for blk, skip in zip(self.dec, feats[-2::-1]):
            x = blk(torch.cat([_F.interpolate(x, scale_factor=2, mode="nearest"), skip], 1))
        return self.seg(x).float()


@_workload("cone-beam CT tooth and canal segmentation fine-tuning (random init standing in for a pre-trained 3-d residual U-Net): 1-4 CBCT patches a step (drawn, at most 2 x 96^3 voxels), each a cube of 48-112 voxels a side (drawn per step, a multiple of 16) of Hounsfield-like values drawn on the device and windowed; an encoder of 3-d residual blocks (16/32/64/128 channels, instance norm, LeakyReLU, strides 1, 2, 2, 2) and a decoder of nearest upsampling, skips and residual blocks back to full resolution; 35 labels per voxel (background, 32 teeth by FDI number, mandibular canal, alveolar bone) drawn as blocky maps (labels drawn at 1/8 and upsampled by nearest); cross-entropy plus a soft Dice over the foreground classes; the encoder frozen (requires_grad off) for the first 25% of the steps, then trained at a tenth of the decoder's learning rate (AdamW parameter groups); clipping, bf16 autocast, 730 steps; the loss read back every 10 steps and every 146 steps a no-grad pass over 1 patch of 112^3 with the voxel counts of the canal and of the teeth and the mean foreground probability read back")
def cbct_tooth_seg_finetune(rng):
    widths, n_cls = _smoke([16, 32, 64, 128], [4, 8, 8]), 35
    model = _CbctUNet(widths, n_cls).cuda()
    enc_params = list(model.enc.parameters())
    head_params = list(model.dec.parameters()) + list(model.seg.parameters())
    opt = torch.optim.AdamW([{"params": enc_params, "lr": 2e-5}, {"params": head_params, "lr": 2e-4}],
                            weight_decay=1e-4)
    lo, hi, mult, budget = _smoke(48, 16), _smoke(112, 32), _smoke(16, 16), _smoke(2 * 96 ** 3, 2 * 32 ** 3)

    def patches(b, s):
        hu = torch.randn(b, 1, s, s, s, device="cuda") * 800.0 + 400.0
        x = ((hu + 1000.0) / 4000.0).clamp(0, 1)
        lab = torch.randint(0, n_cls, (b, 1, s // 8, s // 8, s // 8), device="cuda").float()
        lab = _F.interpolate(lab, size=(s, s, s), mode="nearest")[:, 0].long()
        return x, lab

    steps, frozen = _smoke(730, 4), _smoke(182, 1)
    model.enc.requires_grad_(False)
    for step in range(steps):
        if step == frozen:
            model.enc.requires_grad_(True)
        model.train()
        s = rng.randint(lo // mult, hi // mult) * mult
        b = rng.randint(1, max(1, min(_smoke(4, 2), budget // s ** 3)))
        x, lab = patches(b, s)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logit = model(x)
        ce = _F.cross_entropy(logit, lab)
        p = logit.softmax(1)[:, 1:]
        t = _F.one_hot(lab, n_cls).permute(0, 4, 1, 2, 3)[:, 1:].float()
        dice = 1 - (2 * (p * t).sum((0, 2, 3, 4)) + 1) / (p.sum((0, 2, 3, 4)) + t.sum((0, 2, 3, 4)) + 1)
        loss = ce + dice.mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            loss.detach().item()
        del x, lab, logit, ce, p, t, dice, loss
        if (step + 1) % _smoke(146, 2) == 0:
            model.eval()
            with torch.no_grad():
                x, _ = patches(1, hi)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logit = model(x)
                cls = logit.argmax(1)
                out = torch.stack([(cls == 33).sum().float(), ((cls >= 1) & (cls <= 32)).sum().float(),
                                   (1 - logit.softmax(1)[:, 0]).mean()])
            out.tolist()
            del x, logit, cls, out


# ---------------------------------------------------------------- orthodontic aligner staging policy (actor-critic)


class _StagingPolicy(_nn.Module):
    """Per tooth its FDI number (a 32-row table), current and planned pose (translation in mm, rotation in degrees),
    the remaining movement and the stage fraction, through pre-norm blocks under a key mask; a Gaussian mean per
    tooth and pose axis (learned log standard deviations) and a value from the masked mean."""

    def __init__(self, d, heads, layers, n_teeth):
        super().__init__()
        self.fdi = _nn.Embedding(n_teeth, d)
        self.inp = mlp(6 * 3 + 1, d, d, act=_nn.GELU)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.mu, self.value = _nn.Linear(d, 6), mlp(d, d, 1, act=_nn.GELU)
        self.log_std = _nn.Parameter(torch.full((6,), -0.5))

    def forward(self, pose, goal, frac, keep):
        b, n, _ = pose.shape
        x = self.inp(torch.cat([pose, goal, goal - pose, frac[:, None, None].expand(b, n, 1)], -1))
        x = x + self.fdi.weight[None, :n]
        for blk in self.blocks:
            x = blk(x, mask=keep[:, None, None, :])
        x = self.norm(x)
        w = keep[..., None].to(x.dtype)
        pooled = (x * w).sum(1) / w.sum(1).clamp(min=1)
        return self.mu(x).float(), self.value(pooled)[:, 0].float()


@_workload("orthodontic aligner staging policy training (random init, a transformer policy trained by advantage actor-critic): 64-256 treatment cases a step (drawn), each an arch of 28 tooth slots with 22-28 teeth present (drawn per case, the rest masked), current poses (3 translations in mm, 3 rotations in degrees) and planned final poses drawn on the device; 3 pre-norm blocks (width 128, 4 heads, a 28-row FDI table) under a key mask; 12-30 aligner stages an episode (drawn per step), each stage a Gaussian action per tooth and axis (tanh-squashed to at most 0.25 mm and 2 degrees a stage, learned log standard deviations), reward the reduction in the weighted distance to the planned pose minus penalties for neighbouring teeth (adjacent slots by shifted slices) closer than 0.1 mm after the move and for intrusion, padded teeth masked; returns-to-go, the value as a baseline (advantages normalised over the batch), policy-gradient, value and entropy losses; AdamW, clipping, bf16 autocast, 38 steps; the mean return and final remaining distance read back every 5 steps and every 13 steps a no-grad deterministic staging of 256 cases of 28 teeth over 30 stages with the final remaining distance and the collision count read back")
def ortho_aligner_staging_train(rng):
    n_teeth, d, heads, layers = _smoke(28, 8), _smoke(128, 16), _smoke(4, 2), _smoke(3, 1)
    model = _StagingPolicy(d, heads, layers, n_teeth).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    limit = torch.tensor([0.25, 0.25, 0.25, 2.0, 2.0, 2.0], device="cuda")
    scale = torch.tensor([1.0, 1.0, 1.0, 0.1, 0.1, 0.1], device="cuda")

    def cases(present):
        b = len(present)
        keep = keep_mask(present, n_teeth)
        pose = torch.randn(b, n_teeth, 6, device="cuda") * torch.tensor([1.5, 1.5, 1.0, 10.0, 10.0, 15.0],
                                                                         device="cuda")
        goal = torch.randn(b, n_teeth, 6, device="cuda") * 0.2
        return pose * keep[..., None], goal * keep[..., None], keep

    def gap(pose):
        """The contact clearance of neighbouring slots: 0.5 mm at the planned spacing, changed by the difference of
        their mesio-distal translations."""
        return 0.5 + pose[:, 1:, 0] - pose[:, :-1, 0]

    def episode(pose, goal, keep, stages, greedy):
        w = keep[..., None].float()
        pair = (keep[:, 1:] & keep[:, :-1]).float()
        logps, ents, rewards, values = [], [], [], []
        collisions = pose.new_zeros(pose.shape[0])
        for st in range(stages):
            frac = torch.full((pose.shape[0],), st / stages, device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                mu, value = model(pose, goal, frac, keep)
            std = model.log_std.exp()
            raw = mu if greedy else (mu + std * torch.randn_like(mu)).detach()
            logp = (-0.5 * ((raw - mu) / std).pow(2) - model.log_std - 0.5 * math.log(2 * math.pi))
            logps.append((logp * w).sum((1, 2)))
            ents.append((model.log_std + 0.5 * math.log(2 * math.pi * math.e)).sum().expand(pose.shape[0]))
            move = torch.tanh(raw) * limit * w
            before = ((goal - pose).abs() * scale).sum((1, 2))
            pose = pose + move
            after = ((goal - pose).abs() * scale).sum((1, 2))
            hit = (torch.where(gap(pose) < 0.1, 1.0, 0.0) * pair).sum(1)
            intrude = (torch.relu(-move[..., 2]) * w[..., 0]).sum(1)
            rewards.append(before - after - 0.5 * hit - 0.2 * intrude)
            values.append(value)
            collisions = collisions + hit
        return torch.stack(logps, 1), torch.stack(ents, 1), torch.stack(rewards, 1), torch.stack(values, 1), \
            ((goal - pose).abs() * scale).sum((1, 2)), collisions

    steps = _smoke(38, 3)
    for step in range(steps):
        model.train()
        b, stages = rng.randint(_smoke(64, 2), _smoke(256, 4)), rng.randint(_smoke(12, 2), _smoke(30, 4))
        pose, goal, keep = cases([rng.randint(_smoke(22, 5), n_teeth) for _ in range(b)])
        logp, ent, rew, val, remain, _ = episode(pose, goal, keep, stages, False)
        ret = rew.flip(1).cumsum(1).flip(1)
        adv = (ret - val).detach()
        adv = (adv - adv.mean()) / (adv.std() + 1e-6)
        loss = -(adv * logp).mean() + 0.5 * (ret - val).pow(2).mean() - 0.001 * ent.mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 5 == 0:
            torch.stack([ret[:, 0].mean(), remain.mean()]).tolist()
        del pose, goal, keep, logp, ent, rew, val, remain, ret, adv, loss
        if (step + 1) % _smoke(13, 2) == 0:
            model.eval()
            with torch.no_grad():
                pose, goal, keep = cases([n_teeth] * _smoke(256, 3))
                *_, remain, coll = episode(pose, goal, keep, _smoke(30, 3), True)
                out = torch.stack([remain.mean(), coll.sum()])
            out.tolist()
            del pose, goal, keep, remain, coll, out


# ---------------------------------------------------------------- crown-design point diffusion sampler (DiT-style)


class _AdaBlock(_nn.Module):
    """A DiT block with cross-attention: adaptive layer norm (shift, scale, gate from the conditioning vector)
    around self-attention and the MLP, a plain pre-norm cross-attention over the context tokens in between."""

    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.n1 = _nn.LayerNorm(d, elementwise_affine=False)
        self.n2, self.n3 = _nn.LayerNorm(d), _nn.LayerNorm(d, elementwise_affine=False)
        self.qkv, self.o1 = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.q, self.kv, self.o2 = _nn.Linear(d, d), _nn.Linear(d, 2 * d), _nn.Linear(d, d)
        self.ff = mlp(d, 4 * d, d, act=_nn.GELU)
        self.ada = _nn.Linear(d, 6 * d)

    def forward(self, x, ctx, c):
        s1, g1, a1, s2, g2, a2 = self.ada(_F.silu(c))[:, None].chunk(6, -1)
        q, k, v = self.qkv(self.n1(x) * (1 + g1) + s1).chunk(3, -1)
        x = x + a1 * self.o1(_mha(q, k, v, self.h))
        k, v = self.kv(ctx).chunk(2, -1)
        x = x + self.o2(_mha(self.q(self.n2(x)), k, v, self.h))
        return x + a2 * self.ff(self.n3(x) * (1 + g2) + s2)


class _CrownDenoiser(_nn.Module):
    """The context (preparation and neighbouring-tooth points) through an MLP and pre-norm blocks once per request;
    crown points through an MLP and DiT blocks conditioned on the timestep and tooth type (a null row for guidance);
    the predicted noise per point."""

    def __init__(self, d, heads, ctx_layers, layers, n_type):
        super().__init__()
        self.d = d
        self.ctx_in = mlp(4, d, d, act=_nn.GELU)
        self.ctx = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(ctx_layers))
        self.inp = mlp(3, d, d, act=_nn.GELU)
        self.temb = _nn.Sequential(_nn.Linear(d, d), _nn.SiLU(), _nn.Linear(d, d))
        self.ttype = _nn.Embedding(n_type + 1, d)
        self.blocks = _nn.ModuleList(_AdaBlock(d, heads) for _ in range(layers))
        self.out = _nn.Sequential(_nn.LayerNorm(d), _nn.Linear(d, 3))

    def encode(self, pts):
        c = self.ctx_in(pts)
        for blk in self.ctx:
            c = blk(c)
        return c

    def forward(self, x, t, ttype, ctx):
        c = self.temb(_sincos(t, self.d)) + self.ttype(ttype)
        h = self.inp(x)
        for blk in self.blocks:
            h = blk(h, ctx, c)
        return self.out(h)


@_workload("crown-design point diffusion sampling (random init, a DiT-style transformer denoiser with cross-attention and classifier-free guidance, DDIM): 19-20 design requests (drawn) from a dental lab's CAD service, each of 1-4 crowns (drawn) of 512-1,536 surface points (drawn per request, a multiple of 256) with 20-50 DDIM steps (drawn per request) over a 1,000-step cosine schedule (timesteps and coefficients on the host) and a guidance scale of 1.5-4 (drawn per request); each crown's context of 768 points (the preparation, both neighbours and the antagonist, xyz and a part label) and a tooth type (of 32) drawn on the device, the context encoded once per request by an MLP and 2 pre-norm blocks (width 256, 8 heads); the conditional and null-type halves in one doubled batch; 6 DiT blocks (adaptive layer-norm shift, scale and gate from the timestep and tooth-type embedding, self-attention over the crown points, cross-attention over the context) predicting the noise under bf16 autocast; the clipped x0 estimate and DDIM update per step; per crown the bounding-box extents, mean radius from the centroid and the occlusal height (the 95th-percentile z by torch.quantile) read back per request")
def crown_point_diffusion_sample(rng):
    d, heads, ctx_l, layers, n_type = _smoke(256, 32), _smoke(8, 2), _smoke(2, 1), _smoke(6, 1), 32
    model = _CrownDenoiser(d, heads, ctx_l, layers, n_type).cuda().eval()
    model.requires_grad_(False)
    n_ctx, p_lo, p_hi, mult, t_total = _smoke(768, 32), _smoke(512, 64), _smoke(1536, 128), _smoke(256, 64), 1000

    def abar(t):
        s = 0.008
        f = math.cos((t / t_total + s) / (1 + s) * math.pi / 2) ** 2
        return f / math.cos(s / (1 + s) * math.pi / 2) ** 2

    nreq = rng.randint(_smoke(19, 2), _smoke(20, 3))
    for _ in range(nreq):
        n, p = rng.randint(1, _smoke(4, 2)), rng.randint(p_lo // mult, p_hi // mult) * mult
        n_steps, gscale = rng.randint(_smoke(20, 2), _smoke(50, 3)), rng.uniform(1.5, 4.0)
        ts = [int(round((t_total - 1) * (1 - i / n_steps))) for i in range(n_steps)]
        with torch.no_grad():
            ctx_pts = torch.cat([torch.randn(n, n_ctx, 3, device="cuda"),
                                 torch.randint(0, 4, (n, n_ctx, 1), device="cuda").float() / 3.0], -1)
            ttype = torch.randint(0, n_type, (n,), device="cuda")
            cond = torch.cat([ttype, torch.full_like(ttype, n_type)])
            with torch.autocast("cuda", dtype=torch.bfloat16):
                ctx = model.encode(ctx_pts)
                ctx = torch.cat([ctx, ctx])
            x = torch.randn(n, p, 3, device="cuda")
            for i, t in enumerate(ts):
                a_t = abar(t)
                a_prev = abar(ts[i + 1]) if i + 1 < n_steps else 1.0
                tt = torch.full((2 * n,), t, device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    eps = model(torch.cat([x, x]), tt, cond, ctx).float()
                e_c, e_u = eps.chunk(2)
                eps = e_u + gscale * (e_c - e_u)
                x0 = ((x - math.sqrt(1 - a_t) * eps) / math.sqrt(a_t)).clamp(-3, 3)
                x = math.sqrt(a_prev) * x0 + math.sqrt(1 - a_prev) * eps
                del tt, eps, e_c, e_u, x0
            mm = x * 4.0  # millimetres
            ext = mm.amax(1) - mm.amin(1)
            rad = (mm - mm.mean(1, keepdim=True)).norm(dim=-1).mean(1)
            occ = torch.quantile(mm[..., 2], 0.95, dim=1)
            out = torch.cat([ext.flatten(), rad, occ])
        out.tolist()
        del ctx_pts, ttype, cond, ctx, x, mm, ext, rad, occ, out


# ---------------------------------------------------------------- periapical lesion triage service (ConvNeXt-style)


class _CnxBlock(_nn.Module):
    """A ConvNeXt block: a 7x7 depthwise convolution, LayerNorm over channels, a 4x pointwise MLP, layer scale."""

    def __init__(self, c):
        super().__init__()
        self.dw = _nn.Conv2d(c, c, 7, 1, 3, groups=c)
        self.norm = _nn.LayerNorm(c)
        self.fc1, self.fc2 = _nn.Linear(c, 4 * c), _nn.Linear(4 * c, c)
        self.gamma = _nn.Parameter(torch.full((c,), 1e-2))

    def forward(self, x):
        y = self.dw(x).permute(0, 2, 3, 1)
        y = self.fc2(_F.gelu(self.fc1(self.norm(y)))) * self.gamma
        return x + y.permute(0, 3, 1, 2)


class _ChanNorm(_nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm = _nn.LayerNorm(c)

    def forward(self, x):
        return self.norm(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class _PeriapicalNet(_nn.Module):
    """A 4x4 stride-4 stem, four ConvNeXt stages with LayerNorm and 2x2 stride-2 downsampling between; a PAI score
    and a bone-loss value from the pooled last stage, a lesion heatmap from the third stage (1/16)."""

    def __init__(self, widths, depths, n_pai):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(1, widths[0], 4, 4), _ChanNorm(widths[0]))
        self.stages = _nn.ModuleList(_nn.Sequential(*[_CnxBlock(w) for _ in range(dp)])
                                     for w, dp in zip(widths, depths))
        self.downs = _nn.ModuleList(_nn.Sequential(_ChanNorm(a), _nn.Conv2d(a, w, 2, 2))
                                    for a, w in zip(widths[:-1], widths[1:]))
        self.heat = _nn.Conv2d(widths[2], 1, 1)
        self.head = _nn.Sequential(_nn.LayerNorm(widths[-1]), _nn.Linear(widths[-1], n_pai + 1))

    def forward(self, x):
        x = self.stem(x)
        heat = None
        for i, st in enumerate(self.stages):
            if i > 0:
                x = self.downs[i - 1](x)
            x = st(x)
            if i == 2:
                heat = self.heat(x)
        return self.head(x.mean((2, 3))).float(), heat.float()


@_workload("periapical lesion triage serving (random init, a ConvNeXt-style convnet): 2,800-2,900 requests (drawn) of 1-8 periapical films each (drawn), the request's sensor size drawn of three (size 0: 384 x 256 px, size 1: 480 x 320, size 2: 512 x 384), 12-bit values as int16 uploaded on a side stream from two reused pinned host buffers (filled once, sized for 8 films of 512 x 384) one request ahead (one span, through SideUploads.ahead), windowed and normalised on the device; a 4x4 stride-4 stem (48) and four ConvNeXt stages (48/96/192/384 channels, 1/1/3/1 blocks of 7x7 depthwise convolutions, LayerNorm and 4x MLPs with layer scale, no channels-last) with LayerNorm and 2x2 stride-2 downsampling between, under bf16 autocast; a periapical index score (of 5) and a bone-loss fraction (sigmoid) from the pooled last stage, a lesion heatmap at 1/16 from the third stage; per film the PAI probabilities, the expected score, the bone loss, a referral flag (PAI 3 or more above 0.5, by torch.where) and the 3 hottest heatmap cells (topk, row and column) read back per request")
def periapical_lesion_triage_serve(rng):
    widths, depths, n_pai = _smoke([48, 96, 192, 384], [8, 16, 16, 32]), _smoke([1, 1, 3, 1], [1, 1, 1, 1]), 5
    model = _PeriapicalNet(widths, depths, n_pai).cuda().eval()
    model.requires_grad_(False)
    sizes = _smoke([(384, 256), (480, 320), (512, 384)], [(64, 64), (96, 64), (128, 64)])
    max_f = _smoke(8, 2)
    max_px = max(h * w for h, w in sizes)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 4096, (max_f * max_px,), dtype=torch.int16, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    pai_vals = torch.arange(1, n_pai + 1, device="cuda").float()

    nreq = rng.randint(_smoke(2800, 3), _smoke(2900, 4))
    plan = [(rng.randint(1, max_f), *rng.choice(sizes)) for _ in range(nreq)]
    for (f, h, w), raw in up.ahead(plan, lambda p: (p[0] * p[1] * p[2],)):
        with torch.no_grad():
            x = ((raw.view(f, 1, h, w).float() - 2048.0) / 1024.0).clamp(-2, 2)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                y, heat = model(x)
            pai = y[:, :n_pai].softmax(-1)
            score = (pai * pai_vals).sum(-1)
            bone = torch.sigmoid(y[:, n_pai])
            refer = torch.where(pai[:, 2:].sum(-1) > 0.5, 1.0, 0.0)
            top = heat.flatten(1).topk(3, dim=1)
            wc = heat.shape[-1]
            cells = torch.stack([torch.div(top.indices, wc, rounding_mode="floor"), top.indices % wc], -1).float()
            out = torch.cat([pai.flatten(), score, bone, refer, top.values.flatten(), cells.flatten()])
        out.tolist()
        del raw, x, y, heat, pai, score, bone, refer, top, cells, out

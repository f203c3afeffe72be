"""The thirtieth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch29_b.py are): hierarchical VAE training at variable resolutions, top-down human keypoint training with
varying person counts per image, class-incremental continual learning with a growing replay buffer (DER++),
and Instant-NGP-style hash-grid radiance-field training with variable ray and sample counts. Same conventions:
models built from configs (hand-written torch here) with random weights, nothing downloaded, `rng` the
workload's random.Random for every shape, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are
tiny. No control flow reads a tensor's value. All four are single-stream; hashgrid_ngp_train and
er_continual_replay run in fp32 and stay under 1 GB requested, the other two run under bf16 autocast.

record.py calls `register(<its own module object>)` once, just before main(), after batch29_b's: every workload
below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it reaches
record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch30_b.py's header says the same of its half): every workload of this
half was run whole, at its real sizes (RECORD_SMOKE unset), on PyTorch's meta device (a runner like
/tmp/b28/meta_run.py, not committed: smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered
with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking its math path; boolean-mask indexing,
which the meta device cannot size, is avoided: masked means are weighted sums) and its op outputs counted there
(events about 1.8x that count); the counts and peaks are in record_new30.sh's header.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this batch's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- hierarchical VAE (NVAE-style), variable resolution


class _HvCell(torch.nn.Module):
    """An NVAE residual cell: BN, SiLU, 3x3 conv, BN, SiLU, 3x3 conv, squeeze-and-excitation, scaled residual."""

    def __init__(self, c):
        super().__init__()
        nn = torch.nn
        self.b1, self.c1 = nn.BatchNorm2d(c), nn.Conv2d(c, c, 3, padding=1)
        self.b2, self.c2 = nn.BatchNorm2d(c), nn.Conv2d(c, c, 3, padding=1)
        self.se1, self.se2 = nn.Linear(c, c // 4), nn.Linear(c // 4, c)

    def forward(self, x):
        silu = torch.nn.functional.silu
        h = self.c2(silu(self.b2(self.c1(silu(self.b1(x))))))
        s = torch.sigmoid(self.se2(torch.relu(self.se1(h.mean((2, 3))))))
        return x + 0.1 * h * s[:, :, None, None]


@_workload("hierarchical VAE training, NVAE-style (Vahdat & Kautz 2020) written by hand and small: images at 32, 48 or 64 px (drawn per step, as a progressive or multi-dataset run mixes them) in batches of 12-64 set by a pixel budget; a bottom-up encoder (stem conv, residual cells with BatchNorm, SiLU and squeeze-and-excitation, stride-2 convs to 1/2, 1/4 and 1/8 scale) and a top-down decoder from a learned constant at 1/8 scale with 3 latent groups per scale (prior and posterior Gaussians from 1x1/3x3 convs, reparameterized samples, analytic KL per group, the sample merged back into the decoder state), transposed-conv upsampling between scales, a Bernoulli pixel likelihood; KL warmup and KL balancing across groups (coefficients from the detached per-group KL), bf16 autocast, Adamax with cosine decay, gradient clipping at 200, 140 steps, the ELBO read back every step; every 50 steps 36 samples drawn from the prior at temperature 0.8 at 64 px (no grad)")
def hvae_ladder_train(rng):
    nn, f = torch.nn, torch.nn.functional
    c, zc, groups = _smoke(96, 8), _smoke(20, 4), _smoke(3, 2)
    stem = nn.Conv2d(3, c, 3, padding=1)
    enc_cells = nn.ModuleList(_HvCell(c) for _ in range(3))
    downs = nn.ModuleList(nn.Conv2d(c, c, 3, stride=2, padding=1) for _ in range(3))
    enc_top = nn.ModuleList(_HvCell(c) for _ in range(3))
    priors = nn.ModuleList(nn.Conv2d(c, 2 * zc, 3, padding=1) for _ in range(3 * groups))
    posts = nn.ModuleList(nn.Conv2d(2 * c, 2 * zc, 3, padding=1) for _ in range(3 * groups))
    zproj = nn.ModuleList(nn.Conv2d(zc, c, 1) for _ in range(3 * groups))
    dec_cells = nn.ModuleList(_HvCell(c) for _ in range(3 * groups))
    ups = nn.ModuleList(nn.ConvTranspose2d(c, c, 4, stride=2, padding=1) for _ in range(3))
    out_cell, out = _HvCell(c), nn.Conv2d(c, 3, 3, padding=1)
    model = nn.ModuleList([stem, enc_cells, downs, enc_top, priors, posts, zproj, dec_cells, ups, out_cell, out]).cuda()
    const = nn.Parameter(torch.randn(1, c, 1, 1, device="cuda") * 0.1)
    params = list(model.parameters()) + [const]
    steps = _smoke(140, 3)
    opt = torch.optim.Adamax(params, lr=8e-3, weight_decay=3e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    budget = _smoke(32 * 48 * 48, 4 * 16 * 16)

    def decode(b, r, feats=None, temp=1.0):
        """The top-down pass; feats: the encoder's features per scale (coarsest first), or None to sample the prior."""
        h = const.expand(b, c, r // 8, r // 8)
        kls, gi = [], 0
        for s in range(3):
            for _ in range(groups):
                pm, pl = priors[gi](h).chunk(2, 1)
                pl = pl.clamp(-6, 3)
                if feats is None:
                    z = pm + temp * torch.randn_like(pm) * torch.exp(0.5 * pl)
                else:
                    qm, ql = posts[gi](torch.cat([h, feats[s]], 1)).chunk(2, 1)
                    qm, ql = pm + qm, pl + ql.clamp(-6, 3)  # residual posterior, as NVAE parameterizes it
                    z = qm + torch.randn_like(qm) * torch.exp(0.5 * ql)
                    kl = 0.5 * (pl - ql + (torch.exp(ql) + (qm - pm) ** 2) / torch.exp(pl) - 1)
                    kls.append(kl.float().sum((1, 2, 3)))
                h = dec_cells[gi](h + zproj[gi](z))
                gi += 1
            h = ups[s](h)
        return out(out_cell(h)), kls

    for step in range(steps):
        r = rng.choice([32, 48, 64]) if _smoke(1, 0) else 16
        b = max(_smoke(12, 2), min(_smoke(64, 4), budget // (r * r) + rng.randint(-4, 4)))
        x = torch.rand(b, 3, r, r, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = stem(2 * x - 1)
            feats = []
            for s in range(3):
                h = downs[s](enc_cells[s](h))
                feats.append(enc_top[s](h))
            logits, kls = decode(b, r, feats[::-1])
            rec = f.binary_cross_entropy_with_logits(logits.float(), x, reduction="none").sum((1, 2, 3))
        kl_all = torch.stack(kls, 1)  # (B, groups)
        warm = min(1.0, (step + 1) / (0.3 * steps))
        with torch.no_grad():  # KL balancing: groups with more KL get more weight, normalized
            m = kl_all.mean(0) + 0.01
            coeff = m / m.mean()
        loss = (rec + warm * (kl_all * coeff).sum(1)).mean() / (r * r)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 200.0)
        opt.step()
        sched.step()
        float((rec + kl_all.sum(1)).mean().detach())
        del x, h, feats, logits, kls, rec, kl_all, loss, m, coeff
        if (step + 1) % _smoke(50, 2) == 0:
            model.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                logits, _ = decode(_smoke(36, 2), _smoke(64, 16), None, temp=0.8)
                torch.sigmoid(logits).float().mean().tolist()
                del logits
            model.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- top-down keypoint detection, varying person counts


class _Basic(torch.nn.Module):
    """A ResNet basic block."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        nn = torch.nn
        self.c1, self.b1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout)
        self.c2, self.b2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout)
        self.sc = None
        if stride != 1 or cin != cout:
            self.sc = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        h = self.b2(self.c2(torch.relu(self.b1(self.c1(x)))))
        return torch.relu(h + (x if self.sc is None else self.sc(x)))


def _resnet18(width, stem_stride=2, pool=True):
    nn = torch.nn
    w = [width, 2 * width, 4 * width, 8 * width]
    layers = [nn.Conv2d(3, w[0], 7 if stem_stride == 2 else 3, stem_stride, 3 if stem_stride == 2 else 1, bias=False),
              nn.BatchNorm2d(w[0]), nn.ReLU()]
    if pool:
        layers.append(nn.MaxPool2d(3, 2, 1))
    cin = w[0]
    for i, cout in enumerate(w):
        layers += [_Basic(cin, cout, 1 if i == 0 else 2), _Basic(cout, cout, 1)]
        cin = cout
    return nn.Sequential(*layers)


@_workload("top-down human pose estimation training, SimpleBaseline (Xiao et al. 2018) on a ResNet-18 written by hand: COCO-style batches of 6-16 images of 384x512 (drawn) holding 1-12 people each (drawn per image, so 8-96 person crops a step), every person box jittered, scaled and rotated (+-30 degrees) then cropped to 256x192 by affine_grid and grid_sample from its own image, random horizontal flips with the left/right keypoints swapped; the backbone, three 4x4 transposed convs of 256 to 1/4 resolution and a 1x1 conv to 17 heatmaps of 64x48; Gaussian target heatmaps (sigma 2) built on the device from keypoint coordinates by arange comparisons, an MSE loss weighted by keypoint visibility; bf16 autocast, Adam with step decay, 600 steps, the loss read back every 10 steps; every 150 steps a flip-test evaluation over 4 batches of 64 crops (heatmaps of the flipped crop flipped back and averaged, argmax decoding, the keypoint accuracy within 6 px read back)")
def keypoint_topdown_train(rng):
    nn, f = torch.nn, torch.nn.functional
    width, nk = _smoke(64, 8), 17
    hh, hw = _smoke(256, 64), _smoke(192, 32)
    mh, mw = hh // 4, hw // 4
    body = _resnet18(width)
    deconv = []
    cin = 8 * width
    for _ in range(3):
        deconv += [nn.ConvTranspose2d(cin, _smoke(256, 16), 4, 2, 1, bias=False), nn.BatchNorm2d(_smoke(256, 16)),
                   nn.ReLU()]
        cin = _smoke(256, 16)
    model = nn.Sequential(body, *deconv, nn.Conv2d(cin, nk, 1)).cuda()
    steps = _smoke(600, 3)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, [int(steps * 0.7), int(steps * 0.9)], 0.1)
    flip_perm = torch.tensor([0, 2, 1, 4, 3, 6, 5, 8, 7, 10, 9, 12, 11, 14, 13, 16, 15], device="cuda")
    ys = torch.arange(mh, device="cuda").float()[None, None, :, None]
    xs = torch.arange(mw, device="cuda").float()[None, None, None, :]
    ih, iw = _smoke(384, 48), _smoke(512, 64)

    def crops(nimg, counts):
        images = torch.rand(nimg, 3, ih, iw, device="cuda")
        img_idx = torch.tensor([i for i, n in enumerate(counts) for _ in range(n)], device="cuda")
        p = img_idx.shape[0]
        ctr = torch.rand(p, 2, device="cuda") * 0.6 + 0.2
        scale = torch.rand(p, 1, device="cuda") * 0.6 + 0.3
        ang = (torch.rand(p, device="cuda") * 2 - 1) * math.pi / 6
        cos, sin = torch.cos(ang)[:, None], torch.sin(ang)[:, None]
        sx, sy = scale * (hw / hh) * (ih / iw), scale
        theta = torch.stack([torch.cat([cos * sx, -sin * sy, ctr[:, :1] * 2 - 1], 1),
                             torch.cat([sin * sx, cos * sy, ctr[:, 1:] * 2 - 1], 1)], 1)
        grid = f.affine_grid(theta, (p, 3, hh, hw), align_corners=False)
        x = f.grid_sample(images.index_select(0, img_idx), grid, align_corners=False)
        return x, p

    def heatmaps(p):
        kp = torch.rand(p, nk, 2, device="cuda") * torch.tensor([mw - 1.0, mh - 1.0], device="cuda")
        vis = (torch.rand(p, nk, device="cuda") < 0.8).float()
        g = torch.exp(-((xs - kp[..., 0, None, None]) ** 2 + (ys - kp[..., 1, None, None]) ** 2) / 8.0)
        return g, vis, kp

    for step in range(steps):
        nimg = rng.randint(_smoke(6, 1), _smoke(16, 2))
        counts = [rng.randint(1, _smoke(12, 2)) for _ in range(nimg)]
        while sum(counts) > _smoke(96, 6):
            counts[counts.index(max(counts))] -= 1
        with torch.no_grad():
            x, p = crops(nimg, counts)
            target, vis, _ = heatmaps(p)
            flip = torch.rand(p, device="cuda") < 0.5
            x = torch.where(flip[:, None, None, None], x.flip(3), x)
            target = torch.where(flip[:, None, None, None], target[:, flip_perm].flip(3), target)
            vis = torch.where(flip[:, None], vis[:, flip_perm], vis)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(x)
        loss = (((pred.float() - target) ** 2).mean((2, 3)) * vis).sum() / vis.sum().clamp(min=1) * 1000
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        if step % 10 == 0:
            float(loss.detach())
        del x, target, vis, flip, pred, loss
        if (step + 1) % _smoke(150, 2) == 0:
            model.eval()
            hits = torch.zeros((), device="cuda")
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for _ in range(_smoke(4, 1)):
                    x, p = crops(_smoke(8, 1), [_smoke(8, 2)] * _smoke(8, 1))
                    _, vis, kp = heatmaps(p)
                    hm = (model(x).float() + model(x.flip(3)).float()[:, flip_perm].flip(3)) / 2
                    am = hm.flatten(2).argmax(-1)
                    px, py = (am % mw).float(), torch.div(am, mw, rounding_mode="floor").float()
                    d = ((px - kp[..., 0]) ** 2 + (py - kp[..., 1]) ** 2).sqrt()
                    hits += ((d < 1.5).float() * vis).sum()
                    del x, vis, kp, hm, am, px, py, d
            float(hits)
            model.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- class-incremental learning with a replay buffer


@_workload("class-incremental continual learning with Dark Experience Replay++ (Buzzega et al. 2020) on a split CIFAR-100-style stream (10 tasks of 10 classes), fp32 as the reference code runs: a reduced ResNet-18 (width 32, 3x3 stem, no max-pool) on 32x32 images, stream batches of 16-48 (drawn per step) from the current task with on-device augmentation (random translations by affine_grid and grid_sample, random flips by torch.where); a replay buffer on the device grown by torch.cat with every stream batch's images, labels and logits until it holds 2000 examples, then reservoir sampling (slots drawn on the host) writing into it by index_copy_; two replay batches a step sampled by torch.randint indices (one for the logit-matching MSE, one for cross-entropy); SGD at 0.03, 28-36 steps a task (drawn), the loss read back every 10 steps; after every task an evaluation (no grad) of 3 batches of 256 per task seen so far, the accuracy per task read back")
def er_continual_replay(rng):
    nn, f = torch.nn, torch.nn.functional
    width, ncls, ntasks, per_task = _smoke(32, 4), 100, _smoke(10, 2), 10
    body = _resnet18(width, stem_stride=1, pool=False)
    model = nn.Sequential(body, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8 * width, ncls)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.03)
    cap, res = _smoke(2000, 24), _smoke(32, 8)
    buf_x = buf_y = buf_z = None
    seen = 0

    def augment(x):
        b = x.shape[0]
        shift = (torch.randint(-4, 5, (b, 2), device="cuda").float() * 2 / res)
        theta = torch.zeros(b, 2, 3, device="cuda")
        theta[:, 0, 0] = 1.0
        theta[:, 1, 1] = 1.0
        theta[:, :, 2] = shift
        x = f.grid_sample(x, f.affine_grid(theta, x.shape, align_corners=False), padding_mode="zeros",
                          align_corners=False)
        flip = torch.rand(b, 1, 1, 1, device="cuda") < 0.5
        return torch.where(flip, x.flip(3), x)

    for task in range(ntasks):
        lo = task * per_task
        for step in range(rng.randint(_smoke(28, 2), _smoke(36, 3))):
            b = rng.randint(_smoke(16, 2), _smoke(48, 4))
            x = torch.rand(b, 3, res, res, device="cuda")
            y = torch.randint(lo, lo + per_task, (b,), device="cuda")
            logits = model(augment(x))
            loss = f.cross_entropy(logits, y)
            if buf_x is not None:
                n = buf_x.shape[0]
                i1 = torch.randint(0, n, (min(b, n),), device="cuda")
                loss = loss + 0.3 * f.mse_loss(model(augment(buf_x[i1])), buf_z[i1])
                i2 = torch.randint(0, n, (min(b, n),), device="cuda")
                loss = loss + 0.8 * f.cross_entropy(model(augment(buf_x[i2])), buf_y[i2])
                del i1, i2
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if step % 10 == 0:
                float(loss.detach())
            # reservoir sampling into the buffer: the non-augmented inputs and the logits seen now
            z = logits.detach()
            if buf_x is None:
                buf_x, buf_y, buf_z = x, y, z
            elif buf_x.shape[0] < cap:
                room = cap - buf_x.shape[0]
                buf_x, buf_y = torch.cat([buf_x, x[:room]]), torch.cat([buf_y, y[:room]])
                buf_z = torch.cat([buf_z, z[:room]])
            else:
                slots, rows = [], []
                for i in range(b):
                    j = rng.randint(0, seen + i)
                    if j < cap:
                        slots.append(j)
                        rows.append(i)
                if slots:
                    si = torch.tensor(slots, device="cuda")
                    ri = torch.tensor(rows, device="cuda")
                    buf_x.index_copy_(0, si, x[ri])
                    buf_y.index_copy_(0, si, y[ri])
                    buf_z.index_copy_(0, si, z[ri])
                    del si, ri
            seen += b
            del x, y, logits, loss, z
        model.eval()
        with torch.no_grad():
            accs = []
            for t in range(task + 1):
                correct = torch.zeros((), device="cuda")
                for _ in range(_smoke(3, 1)):
                    x = torch.rand(_smoke(256, 8), 3, res, res, device="cuda")
                    y = torch.randint(t * per_task, (t + 1) * per_task, (x.shape[0],), device="cuda")
                    out = model(x)[:, : (task + 1) * per_task]
                    correct += (out.argmax(-1) == y).float().sum()
                    del x, y, out
                accs.append(correct)
            torch.stack(accs).tolist()
        model.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- hash-grid radiance field (Instant-NGP style)


@_workload("radiance-field training with a multiresolution hash encoding, Instant-NGP (Mueller et al. 2022) written in plain torch (as nerfacc/torch-ngp fallbacks do) and small (under 1 GB, fp32): 16 levels of 2^17 two-feature entries in one table (resolutions 16 to 2048), each sample's 8 corners per level hashed by the spatial-hash primes and XOR, looked up by embedding and trilinearly weighted, all levels at once; a 64-wide density MLP and a 64-wide color MLP with degree-4 spherical harmonics of the view direction, exp density, volume rendering by an exclusive cumsum of optical depth; a ray batch set per step by a 2^15-sample budget over 24-128 samples per ray (drawn, as occupancy-grid pruning changes the count), so 256-1365 rays; Huber loss on the pixel colors, Adam (eps 1e-15) with exponential decay, 1500 steps, the loss read back every 50 steps; every 16 steps the 64^3 occupancy grid refreshed by density queries in chunks of 32768 (no grad, EMA by torch.maximum), every 500 steps a 96x96 view rendered in chunks of 512 rays (no grad)")
def hashgrid_ngp_train(rng):
    nn, f = torch.nn, torch.nn.functional
    levels, tsize, nf = _smoke(16, 4), _smoke(2 ** 17, 2 ** 8), 2
    growth = math.exp(math.log(2048 / 16) / (levels - 1))
    res = torch.tensor([math.floor(16 * growth ** i) for i in range(levels)], device="cuda").float()
    table = nn.Parameter((torch.rand(levels * tsize, nf) * 2e-4 - 1e-4).cuda())
    offs = torch.tensor([[i >> 2 & 1, i >> 1 & 1, i & 1] for i in range(8)], device="cuda")
    lvl_off = (torch.arange(levels, device="cuda") * tsize)[None, :, None]
    primes = [1, 2654435761, 805459861]
    hid = _smoke(64, 8)
    sigma_net = nn.Sequential(nn.Linear(levels * nf, hid), nn.ReLU(), nn.Linear(hid, 16)).cuda()
    color_net = nn.Sequential(nn.Linear(15 + 16, hid), nn.ReLU(), nn.Linear(hid, hid), nn.ReLU(),
                              nn.Linear(hid, 3)).cuda()
    steps = _smoke(1500, 4)
    opt = torch.optim.Adam([{"params": [table]},
                            {"params": list(sigma_net.parameters()) + list(color_net.parameters()),
                             "weight_decay": 1e-6}], lr=1e-2, betas=(0.9, 0.99), eps=1e-15)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, 0.33 ** (1 / steps))
    occ_res = _smoke(64, 8)
    occ = torch.ones(occ_res ** 3, device="cuda")
    budget = _smoke(2 ** 15, 256)

    def encode(p):  # p: (N, 3) in [0, 1]
        xs = p[:, None, :] * res[None, :, None]  # (N, L, 3)
        x0 = xs.floor()
        w = xs - x0
        x0 = x0.long()
        h = None
        for d in range(3):
            cd = (x0[:, :, None, d] + offs[None, None, :, d]) * primes[d]  # (N, L, 8)
            h = cd if h is None else torch.bitwise_xor(h, cd)
        idx = torch.remainder(h, tsize) + lvl_off
        feats = f.embedding(idx, table)  # (N, L, 8, F)
        ob = offs.bool()[None, None]
        wc = torch.where(ob, w[:, :, None, :], 1 - w[:, :, None, :]).prod(-1)
        return (feats * wc[..., None]).sum(2).flatten(1)

    def sh4(d):
        x, y, z = d.unbind(-1)
        xx, yy, zz = x * x, y * y, z * z
        return torch.stack([y, z, x, x * y, y * z, 3 * zz - 1, x * z, xx - yy, y * (3 * xx - yy), x * y * z,
                            y * (5 * zz - 1), z * (5 * zz - 3), x * (5 * zz - 1), z * (xx - yy),
                            x * (xx - 3 * yy)], -1)

    def render(nr, ns):
        orig = torch.rand(nr, 3, device="cuda") * 0.2 + 0.4
        dirs = f.normalize(torch.randn(nr, 3, device="cuda"), dim=-1)
        t = torch.linspace(0.05, 0.75, ns, device="cuda")[None] + torch.rand(nr, ns, device="cuda") * (0.7 / ns)
        pts = (orig[:, None] + dirs[:, None] * t[..., None]).clamp(0, 1)  # (R, S, 3)
        g = sigma_net(encode(pts.reshape(-1, 3)))
        sigma = torch.exp(g[:, 0].clamp(max=15)).view(nr, ns)
        sh = sh4(dirs)[:, None].expand(nr, ns, 15).reshape(-1, 15)
        rgb = torch.sigmoid(color_net(torch.cat([sh, g], -1))).view(nr, ns, 3)
        delta = torch.cat([t[:, 1:] - t[:, :-1], torch.full((nr, 1), 1e-3, device="cuda")], 1)
        tau = sigma * delta
        trans = torch.exp(-(torch.cumsum(tau, 1) - tau))
        wts = (1 - torch.exp(-tau)) * trans
        return (wts[..., None] * rgb).sum(1) + (1 - wts.sum(1, keepdim=True))  # white background

    for step in range(steps):
        ns = rng.randint(_smoke(24, 4), _smoke(128, 8))
        nr = budget // ns
        target = torch.rand(nr, 3, device="cuda")
        loss = f.huber_loss(render(nr, ns), target, delta=0.1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        if step % 50 == 0:
            float(loss.detach())
        del target, loss
        if step % 16 == 15:
            with torch.no_grad():
                chunk = _smoke(32768, 128)
                parts = []
                for s in range(0, occ_res ** 3, chunk):
                    n = min(chunk, occ_res ** 3 - s)
                    cell = torch.arange(s, s + n, device="cuda")
                    ijk = torch.stack([cell // (occ_res * occ_res), cell // occ_res % occ_res, cell % occ_res], -1)
                    p = (ijk.float() + torch.rand(n, 3, device="cuda")) / occ_res
                    parts.append(torch.exp(sigma_net(encode(p))[:, 0].clamp(max=15)))
                    del cell, ijk, p
                occ = torch.maximum(occ * 0.95, torch.cat(parts))
                del parts
        if (step + 1) % _smoke(500, 2) == 0:
            with torch.no_grad():
                px = _smoke(96 * 96, 64)
                img = torch.cat([render(min(512, px - s), 96 if _smoke(1, 0) else 8)
                                 for s in range(0, px, 512)])
                img.mean().tolist()
                del img
    float(occ.mean())
    torch.cuda.synchronize()

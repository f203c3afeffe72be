"""The hundred-and-twenty-ninth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py
to batch127_b.py are): horses, equestrian sport and horse racing, written in torch alone, first half. Gait encoder
fine-tuning for lameness grading (a dilated residual temporal convnet over wearable inertial sensors on the poll,
withers, pelvis and four limbs, clips of drawn lengths padded under a mask, its first blocks frozen; footfall events
per hoof, each limb's lameness grade and the gait), race outcome ranking training (a transformer over the runners of
a race with horse, jockey, trainer and stall tables and a race conditioning token, a Plackett-Luce loss over the
finishing order, the market's win probabilities and the beaten distances), a video gait keypoint service (a residual
heatmap network over the frames of trot-up clips of drawn lengths and resolutions, soft-argmax keypoints, the head
and pelvis nod's harmonics by rfft, joint ranges of motion) and a show-jumping path sampler (a transformer denoiser
over the rider's path, cross-attending to a course of a drawn number of fences under a key mask, ancestral DDPM
sampling, then the path's length, time and the fences' clearances).
Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths,
resolutions and batch sizes are fixed on the host, padding handled by masks or by torch.where / masked_fill, no
boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
gait_video_keypoint_serve uploads its frames on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every embedding and position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new129.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and
for the CPU smoke run (RECORD_SMOKE=1).
"""

import math

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, PreNormBlock, SideUploads, _mha, _sincos, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- gait lameness grading (temporal convnet)


class _DilBlock(_nn.Module):
    """A residual block of two dilated 3-tap convolutions (full, not depthwise) with batch norm and GELU."""

    def __init__(self, c, dil):
        super().__init__()
        self.c1, self.b1 = _nn.Conv1d(c, c, 3, 1, dil, dilation=dil, bias=False), _nn.BatchNorm1d(c)
        self.c2, self.b2 = _nn.Conv1d(c, c, 3, 1, dil, dilation=dil, bias=False), _nn.BatchNorm1d(c)

    def forward(self, x):
        return x + self.b2(self.c2(_F.gelu(self.b1(self.c1(x)))))


class _GaitTCN(_nn.Module):
    """A strided stem over the sensors' channels and dilated residual blocks; the first `frozen` blocks (with the
    stem) are the pretrained encoder, the rest and the heads are fine-tuned."""

    def __init__(self, cin, c, dils, frozen, n_hoof, n_limb, n_grade, n_gait):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv1d(cin, c, 7, 2, 3, bias=False), _nn.BatchNorm1d(c), _nn.GELU())
        self.blocks = _nn.ModuleList(_DilBlock(c, d) for d in dils)
        self.frozen = frozen
        self.hoof = _nn.Conv1d(c, n_hoof, 1)
        self.clip = mlp(c, c, n_limb * n_grade + n_gait, act=_nn.GELU)

    def encode(self, x):
        h = self.stem(x)
        for blk in self.blocks[:self.frozen]:
            h = blk(h)
        return h

    def forward(self, h, keep):
        for blk in self.blocks[self.frozen:]:
            h = blk(h * keep[:, None].to(h.dtype))
        w = keep[:, None].to(h.dtype)
        pooled = (h * w).sum(-1) / w.sum(-1).clamp_min(1.0)
        return self.hoof(h).float(), self.clip(pooled).float()


@_workload("gait encoder fine-tuning for lameness grading (random init, a dilated residual temporal convnet over wearable inertial sensors): 7 sensors (poll, withers, pelvis, four limbs) of 6 channels each (42 inputs) at 200 Hz, 16-64 clips a step (drawn) of 4-12 s each (800-2,400 samples, drawn per clip in steps of 200, padded to the step's longest under a mask); a strided stem (128 channels) and 8 residual blocks of two dilated 3-tap convolutions (dilations 1, 2, 4, 8, 1, 2, 4, 8) with batch norm, the stem and first 4 blocks frozen (run under no_grad in eval mode), the last 4 and the heads trained; footfall events of the 4 hooves per half-rate sample by masked BCE, each limb's lameness grade (0-5 of the AAEP scale) and the gait (of 5: walk, trot, canter, gallop, tolt) by cross-entropy from masked mean pooling; AdamW, clipping, bf16 autocast, 940 steps; the losses read back every 20 steps and every 188 steps a no-grad pass over 48 clips of 2,400 samples with the gait and grade accuracies read back")
def gait_lameness_tcn_finetune(rng):
    cin, c = 42, _smoke(128, 16)
    dils = _smoke([1, 2, 4, 8, 1, 2, 4, 8], [1, 2, 1, 2])
    frozen = len(dils) // 2
    n_hoof, n_limb, n_grade, n_gait = 4, 4, 6, 5
    model = _GaitTCN(cin, c, dils, frozen, n_hoof, n_limb, n_grade, n_gait).cuda()
    model.stem.requires_grad_(False)
    for blk in model.blocks[:frozen]:
        blk.requires_grad_(False)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=2e-4, weight_decay=0.01)
    steps, every = _smoke(940, 3), _smoke(188, 2)
    unit = _smoke(200, 16)

    def batch(lens):
        b, t = len(lens), max(lens)
        keep = keep_mask(lens, t)
        x = torch.randn(b, cin, t, device="cuda") * keep[:, None].float()
        hk = keep[:, ::2]
        hoof = (torch.rand(b, n_hoof, hk.shape[1], device="cuda") < 0.08).float()
        grade = torch.randint(0, n_grade, (b, n_limb), device="cuda")
        gait = torch.randint(0, n_gait, (b,), device="cuda")
        return x, hk, hoof, grade, gait

    def run(x, hk):
        with torch.no_grad():
            model.stem.eval()
            for blk in model.blocks[:frozen]:
                blk.eval()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                h = model.encode(x)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return model(h, hk)

    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(16, 2), _smoke(64, 3))
        lens = [rng.randint(4, 12) * unit for _ in range(b)]
        x, hk, hoof, grade, gait = batch(lens)
        ev, cl = run(x, hk)
        w = hk[:, None].float().expand_as(ev)
        l_hoof = (_F.binary_cross_entropy_with_logits(ev, hoof, reduction="none") * w).sum() / w.sum()
        l_grade = _F.cross_entropy(cl[:, :n_limb * n_grade].reshape(-1, n_grade), grade.flatten())
        l_gait = _F.cross_entropy(cl[:, n_limb * n_grade:], gait)
        loss = l_hoof + l_grade + 0.5 * l_gait
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_hoof.detach(), l_grade.detach(), l_gait.detach()]).tolist()
        del x, hk, hoof, grade, gait, ev, cl, w, l_hoof, l_grade, l_gait, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                x, hk, hoof, grade, gait = batch([12 * unit] * _smoke(48, 2))
                ev, cl = run(x, hk)
                acc_g = (cl[:, n_limb * n_grade:].argmax(-1) == gait).float().mean()
                acc_l = (cl[:, :n_limb * n_grade].view(-1, n_limb, n_grade).argmax(-1) == grade).float().mean()
            torch.stack([acc_g, acc_l]).tolist()
            del x, hk, hoof, grade, gait, ev, cl, acc_g, acc_l


# ---------------------------------------------------------------- race outcome ranking (transformer, Plackett-Luce)


class _RaceNet(_nn.Module):
    """Each runner a token (horse, jockey, trainer and stall tables and its form features), a race token in front
    (track, going, class and the distance), pre-norm blocks under the runners' key mask; a score per runner and its
    beaten distance."""

    def __init__(self, n_horse, n_jockey, n_trainer, max_field, n_feat, d, heads, layers):
        super().__init__()
        self.horse, self.jockey = _nn.Embedding(n_horse, d), _nn.Embedding(n_jockey, d)
        self.trainer, self.stall = _nn.Embedding(n_trainer, d), _nn.Embedding(max_field, d)
        self.feat = mlp(n_feat, d, d, act=_nn.GELU)
        self.track, self.going, self.cls = _nn.Embedding(60, d), _nn.Embedding(7, d), _nn.Embedding(7, d)
        self.dist = _nn.Linear(1, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.head = mlp(d, d, 2, act=_nn.GELU)

    def forward(self, horse, jockey, trainer, feat, keep, track, going, cls, dist):
        t = horse.shape[1]
        tok = (self.horse(horse) + self.jockey(jockey) + self.trainer(trainer) + self.feat(feat)
               + self.stall(torch.arange(t, device=horse.device))[None])
        r = self.track(track) + self.going(going) + self.cls(cls) + self.dist(dist[:, None])
        z = torch.cat([r[:, None], tok], 1)
        km = torch.cat([torch.ones_like(keep[:, :1]), keep], 1)[:, None, None]
        for blk in self.blocks:
            z = blk(z, km)
        return self.head(self.norm(z[:, 1:])).float()


@_workload("race outcome ranking training (random init, a transformer over the runners of a race): 96-320 races a step (drawn), each of 5-20 runners (drawn per race, padded to the step's longest), each runner a token from a 50,000-row horse table, a 2,000-row jockey table, a 1,500-row trainer table, a 20-row stall table and 24 form features (an MLP), a race token in front (track of 60, going of 7, class of 7, the distance); 6 pre-norm blocks (width 256, 8 heads) under the runners' key mask; a score per runner trained by a Plackett-Luce loss over a finishing order drawn on the device (argsort of random keys with the padded runners last, the order's log-likelihood by gather and a reversed logcumsumexp, masked), a KL divergence of the masked softmax of the scores to the market's implied win probabilities (drawn on the device), the beaten distances by masked MSE; AdamW on a cosine schedule with a warm-up, clipping, bf16 autocast, 350 steps; the losses read back every 20 steps and every 70 steps a no-grad pass over 512 races of 20 runners with the winner accuracy and the Brier score read back")
def race_field_ranking_train(rng):
    n_horse, n_jockey, n_trainer = _smoke(50000, 64), _smoke(2000, 16), _smoke(1500, 16)
    max_field, n_feat = 20, 24
    d, heads, layers = _smoke(256, 16), _smoke(8, 2), _smoke(6, 1)
    model = _RaceNet(n_horse, n_jockey, n_trainer, max_field, n_feat, d, heads, layers).cuda()
    steps, every = _smoke(350, 3), _smoke(70, 2)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.05)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / 30) * 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))

    def races(fields):
        b, t = len(fields), max(fields)
        keep = keep_mask(fields, t)
        horse = torch.randint(0, n_horse, (b, t), device="cuda")
        jockey = torch.randint(0, n_jockey, (b, t), device="cuda")
        trainer = torch.randint(0, n_trainer, (b, t), device="cuda")
        feat = torch.randn(b, t, n_feat, device="cuda") * keep[..., None].float()
        track, going = torch.randint(0, 60, (b,), device="cuda"), torch.randint(0, 7, (b,), device="cuda")
        cls, dist = torch.randint(0, 7, (b,), device="cuda"), torch.rand(b, device="cuda") * 2.0 + 0.5
        order = (torch.rand(b, t, device="cuda") + (~keep).float() * 2.0).argsort(-1)
        market = (torch.randn(b, t, device="cuda") * 1.5).masked_fill(~keep, -1e4).softmax(-1)
        beaten = torch.rand(b, t, device="cuda") * 20.0
        return (horse, jockey, trainer, feat, keep, track, going, cls, dist), (order, market, beaten, keep)

    def losses(out, tgt):
        order, market, beaten, keep = tgt
        score = out[..., 0].masked_fill(~keep, -1e4)
        s_ord = score.gather(1, order)
        k_ord = keep.gather(1, order)
        tail = s_ord.flip(-1).logcumsumexp(-1).flip(-1)
        l_pl = -((s_ord - tail) * k_ord.float()).sum() / k_ord.float().sum()
        logp = score.log_softmax(-1)
        l_kl = (market * (market.clamp_min(1e-8).log() - logp) * keep.float()).sum(-1).mean()
        w = keep.float()
        l_bt = ((out[..., 1] * 5.0 - beaten).pow(2) * w).sum() / w.sum() / 25.0
        return l_pl, l_kl, l_bt

    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(96, 3), _smoke(320, 6))
        fields = [rng.randint(5, max_field) for _ in range(b)]
        inp, tgt = races(fields)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(*inp)
        l_pl, l_kl, l_bt = losses(out, tgt)
        loss = l_pl + l_kl + 0.5 * l_bt
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            torch.stack([l_pl.detach(), l_kl.detach(), l_bt.detach()]).tolist()
        del inp, tgt, out, l_pl, l_kl, l_bt, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                inp, tgt = races([max_field] * _smoke(512, 4))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    out = model(*inp)
                p = out[..., 0].softmax(-1)
                win = tgt[0][:, 0]
                acc = (p.argmax(-1) == win).float().mean()
                brier = (p - _F.one_hot(win, max_field).float()).pow(2).sum(-1).mean()
            torch.stack([acc, brier]).tolist()
            del inp, tgt, out, p, win, acc, brier


# ---------------------------------------------------------------- video gait keypoints (heatmap network)


class _UpSkip(_nn.Module):
    """Bilinear upsampling to the skip's size, the skip concatenated, a 3x3 convolution with batch norm and ReLU."""

    def __init__(self, cin, cskip, cout):
        super().__init__()
        self.conv = _nn.Sequential(_nn.Conv2d(cin + cskip, cout, 3, 1, 1, bias=False), _nn.BatchNorm2d(cout),
                                   _nn.ReLU())

    def forward(self, x, skip):
        x = _F.interpolate(x, size=skip.shape[-2:], mode="bilinear", align_corners=False)
        return self.conv(torch.cat([x, skip.to(x.dtype)], 1))


class _KeypointNet(_nn.Module):
    """A strided stem, four residual stages (the last three strided), two upsamplings with skips back to 1/4
    resolution, a 1x1 to one heatmap per anatomical keypoint."""

    def __init__(self, widths, n_kp):
        super().__init__()
        c0, c1, c2, c3 = widths
        self.stem = _nn.Sequential(_nn.Conv2d(3, c0, 5, 2, 2, bias=False), _nn.BatchNorm2d(c0), _nn.ReLU())
        self.s1, self.s2 = BasicResBlock(c0, c1, 2), BasicResBlock(c1, c2, 2)
        self.s3 = BasicResBlock(c2, c3, 2)
        self.u2, self.u1 = _UpSkip(c3, c2, c2), _UpSkip(c2, c1, c1)
        self.out = _nn.Conv2d(c1, n_kp, 1)

    def forward(self, x):
        f1 = self.s1(self.stem(x))
        f2 = self.s2(f1)
        return self.out(self.u1(self.u2(self.s3(f2), f2), f1)).float()


@_workload("video gait keypoint serving (random init, a residual heatmap network over trot-up clips): 2,400-2,440 requests (drawn) of 8-32 frames (drawn) at 256 x 320, 320 x 448 or 384 x 512 px (drawn per request), uint8 RGB frames uploaded on a side stream from two reused pinned host buffers (filled once, sized for 32 x 3 x 384 x 512) one request ahead (one span, through SideUploads.ahead), normalised on the device in channels_last; a strided stem (32 channels), three strided residual stages (64, 96, 128) and two bilinear upsamplings with skips back to 1/4 resolution, a 1x1 to 22 keypoint heatmaps, in eval mode under bf16 autocast; per frame each keypoint by soft-argmax (a spatial softmax) with its peak confidence; over the clip the poll's and the tuber sacrale's vertical paths by rfft (the stride frequency as the argmax harmonic, the first-to-second harmonic ratio as the nod asymmetry), the 12 joint angles (at the carpus or hock, the fetlock and the coronet of each of the four limbs) by atan2 with their ranges of motion, and the left-right asymmetry of the ranges; each request's figures read back once")
def gait_video_keypoint_serve(rng):
    widths, n_kp = _smoke([32, 64, 96, 128], [8, 8, 16, 16]), 22
    max_n = _smoke(32, 5)
    res_opts = _smoke([(256, 320), (320, 448), (384, 512)], [(32, 48), (48, 64)])
    max_px = max(h * w for h, w in res_opts)
    model = _KeypointNet(widths, n_kp).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_n * 3 * max_px,), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1) * 255.0
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1) * 255.0
    # keypoints: the poll, the tuber sacrale, then 5 down each limb (elbow or stifle, carpus or hock, fetlock,
    # coronet, hoof); the angle at each limb's second, third and fourth keypoint (12 angles)
    tri = torch.tensor([[2 + 5 * limb + j, 3 + 5 * limb + j, 4 + 5 * limb + j] for limb in range(4) for j in range(3)],
                       device="cuda")

    nreq = rng.randint(_smoke(2400, 3), _smoke(2440, 4))
    plan = [(rng.randint(_smoke(8, 4), max_n), *rng.choice(res_opts)) for _ in range(nreq)]

    for (n, hh, ww), raw in up.ahead(plan, lambda p: (p[0] * 3 * p[1] * p[2],)):
        with torch.no_grad():
            x = ((raw.view(n, 3, hh, ww).float() - mean) / std).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                heat = model(x)
            hq, wq = heat.shape[-2:]
            p = heat.flatten(2).softmax(-1).view(n, n_kp, hq, wq)
            ys = (p.sum(-1) * torch.arange(hq, device="cuda").float()).sum(-1) / hq
            xs = (p.sum(-2) * torch.arange(wq, device="cuda").float()).sum(-1) / wq
            conf = heat.flatten(2).amax(-1).sigmoid().mean(0)
            vert = torch.stack([ys[:, 0], ys[:, 1]], 0)
            spec = torch.fft.rfft(vert - vert.mean(-1, keepdim=True), dim=-1).abs()
            k = spec[:, 1:].argmax(-1).float() + 1.0
            ratio = spec[:, 1] / spec[:, 2].clamp_min(1e-6)
            pts = torch.stack([xs, ys], -1)
            a, bb, cc = pts[:, tri[:, 0]], pts[:, tri[:, 1]], pts[:, tri[:, 2]]
            u, v = a - bb, cc - bb
            ang = torch.atan2(u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0], (u * v).sum(-1))
            rom = ang.amax(0) - ang.amin(0)
            asym = (rom.view(4, 3)[[0, 2]] - rom.view(4, 3)[[1, 3]]).abs().flatten()
            res = torch.cat([conf, k, ratio, rom, asym])
        res.tolist()
        del raw, x, heat, p, ys, xs, conf, vert, spec, k, ratio, pts, a, bb, cc, u, v, ang, rom, asym, res


# ---------------------------------------------------------------- show-jumping path sampler (transformer, DDPM)


class _PathBlock(_nn.Module):
    """A pre-norm block: self-attention over the path's points, cross-attention to the fences under their key mask,
    a GELU MLP; the timestep embedding added before each."""

    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.n1, self.n2, self.n3 = _nn.LayerNorm(d), _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.o1 = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.q, self.kv, self.o2 = _nn.Linear(d, d), _nn.Linear(d, 2 * d), _nn.Linear(d, d)
        self.ff = mlp(d, 4 * d, d, act=_nn.GELU)
        self.t = _nn.Linear(d, d)

    def forward(self, x, te, mem, mem_mask):
        x = x + self.t(te)[:, None]
        q, k, v = self.qkv(self.n1(x)).chunk(3, -1)
        x = x + self.o1(_mha(q, k, v, self.h))
        k, v = self.kv(mem).chunk(2, -1)
        x = x + self.o2(_mha(self.q(self.n2(x)), k, v, self.h, attn_mask=mem_mask))
        return x + self.ff(self.n3(x))


class _PathDenoiser(_nn.Module):
    """The noisy path's points (x, y, speed, lead) with a position table sized for the longest path, the fences
    (position, angle, height and a type table) as memory, blocks of _PathBlock; the predicted noise."""

    def __init__(self, ch, d, heads, layers, max_len, n_type):
        super().__init__()
        self.inp, self.pos = _nn.Linear(ch, d), _nn.Embedding(max_len, d)
        self.fence, self.ftype = mlp(5, d, d, act=_nn.GELU), _nn.Embedding(n_type, d)
        self.t_mlp = mlp(d, d, d, act=_nn.SiLU)
        self.blocks = _nn.ModuleList(_PathBlock(d, heads) for _ in range(layers))
        self.norm, self.out = _nn.LayerNorm(d), _nn.Linear(d, ch)
        self.d = d

    def forward(self, x, t, fences, ftype, fmask):
        te = self.t_mlp(_sincos(t, self.d))
        h = self.inp(x) + self.pos(torch.arange(x.shape[1], device=x.device))[None]
        mem = self.fence(fences) + self.ftype(ftype)
        for blk in self.blocks:
            h = blk(h, te, mem, fmask)
        return self.out(self.norm(h)).float()


@_workload("show-jumping path sampling (random init, a transformer denoiser with ancestral DDPM): 19-21 requests (drawn) of 4-24 paths (drawn) of 64, 96, 128, 160 or 192 points (drawn per request) with 4 channels (x, y, speed, canter lead), over a course of 8-16 fences (drawn per request, padded to 16 under a key mask) each with its position, angle, height, spread and a type (of 6: vertical, oxer, triple bar, wall, water, combination) drawn on the device; 6 pre-norm blocks (width 256, 8 heads) of self-attention over the points (a 192-row position table), cross-attention to the fences and a GELU MLP, the timestep by sine features, under bf16 autocast; ancestral DDPM (eta 1) over 20-50 of 1,000 linear-schedule timesteps (drawn per request); then each path's length, its time from the speeds, the time faults against a time allowed of 60-90 s (drawn per request), each fence's clearance (the path's nearest point by cdist, the padded fences masked) and the lead changes; each request's figures read back once")
def showjump_path_ddpm_sample(rng):
    ch, n_type, max_f = 4, 6, 16
    d, heads, layers = _smoke(256, 16), _smoke(8, 2), _smoke(6, 1)
    l_opts = _smoke([64, 96, 128, 160, 192], [16, 24])
    model = _PathDenoiser(ch, d, heads, layers, max(l_opts), n_type).cuda().eval()
    model.requires_grad_(False)
    n_t = 1000
    betas = torch.linspace(1e-4, 0.02, n_t, dtype=torch.float64)
    alpha_bar = torch.cumprod(1.0 - betas, 0).tolist()

    nreq = rng.randint(_smoke(19, 2), _smoke(21, 3))
    for _ in range(nreq):
        n, length = rng.randint(_smoke(4, 1), _smoke(24, 3)), rng.choice(l_opts)
        n_f, n_steps = rng.randint(8, max_f), rng.randint(_smoke(20, 2), _smoke(50, 3))
        allowed = rng.uniform(60.0, 90.0)
        seq = [int(i * (n_t - 1) / (n_steps - 1)) for i in range(n_steps)][::-1]
        with torch.no_grad():
            fkeep = keep_mask([n_f] * n, max_f)
            fences = torch.rand(n, max_f, 5, device="cuda") * fkeep[..., None].float()
            ftype = torch.randint(0, n_type, (n, max_f), device="cuda")
            fmask = fkeep[:, None, None]
            x = torch.randn(n, length, ch, device="cuda")
            for i, t in enumerate(seq):
                a_t = alpha_bar[t]
                a_prev = alpha_bar[seq[i + 1]] if i + 1 < len(seq) else 1.0
                tt = torch.full((n,), float(t), device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    e = model(x, tt, fences, ftype, fmask)
                x0 = ((x - math.sqrt(1.0 - a_t) * e) / math.sqrt(a_t)).clamp(-4.0, 4.0)
                sigma = math.sqrt((1.0 - a_prev) / (1.0 - a_t) * (1.0 - a_t / a_prev))
                dir_x = math.sqrt(max(1.0 - a_prev - sigma ** 2, 0.0)) * e
                x = math.sqrt(a_prev) * x0 + dir_x + sigma * torch.randn_like(x)
                del tt, e, x0, dir_x
            xy = x[..., :2] * 40.0
            speed = 4.0 + 3.0 * torch.sigmoid(x[..., 2])
            seg = (xy[:, 1:] - xy[:, :-1]).norm(dim=-1)
            plen = seg.sum(-1)
            time = (seg / speed[:, 1:]).sum(-1)
            faults = (time - allowed).clamp_min(0.0).ceil()
            near = torch.cdist(fences[..., :2] * 40.0, xy).amin(-1)
            clear = torch.sigmoid(near - 1.0).masked_fill(~fkeep, 0.0).sum(-1)
            lead = (x[..., 3] > 0).float()
            changes = (lead[:, 1:] - lead[:, :-1]).abs().sum(-1)
            res = torch.cat([plen, time, faults, clear, changes])
        res.tolist()
        del fkeep, fences, ftype, fmask, x, xy, speed, seg, plen, time, faults, near, clear, lead, changes, res

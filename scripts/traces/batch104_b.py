"""The hundred-and-fourth batch of held-out workloads for record.py, second half: augmented and virtual reality and
spatial computing, written in torch alone. Room-scan semantic segmentation training (an edge-convolution graph net
over k-nearest-neighbour graphs of scanned point clouds of drawn sizes, messages by index_select and index_add),
avatar motion diffusion training (a transformer denoiser generating full-body motion from the headset's and hand
controllers' sparse tracking signals over sequences of drawn lengths, DDIM sampling at evaluation), a lip-sync and
facial-expression service (a mouth-camera convnet and audio features into a two-layer GRU written out step by step,
per-user recurrent state kept on the device) and self-supervised monocular depth and pose training (a depth U-Net and
a pose convnet, source frames warped into the target by grid_sample, an SSIM and L1 photometric loss with a per-pixel
minimum and auto-masking). Same conventions as batch104.py: nothing downloaded, data drawn at random on the device,
`rng` the workload's random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)`, no
control flow reading a tensor's value (padding by masks and torch.where / masked_fill), losses and metrics read back
only at logging points or once per request, bf16 autocast. All four are single-stream. Every position table is sized
for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(); this file never imports record.py.
Real sizes checked before recording: see record_new104.sh's header.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, _sincos, _square_distance, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- room-scan point-cloud segmentation (edge-conv graph)


class _EdgeLayer(_nn.Module):
    """One edge convolution: a message MLP over (h_i, h_j - h_i, p_j - p_i) for each of a point's k neighbours,
    summed into the point by index_add and averaged, a LayerNorm'ed residual update."""

    def __init__(self, c):
        super().__init__()
        self.msg = mlp(2 * c + 3, c, c, act=_nn.GELU)
        self.upd = mlp(2 * c, c, c, act=_nn.GELU)
        self.norm = _nn.LayerNorm(c)

    def forward(self, h, pos, src, dst, k):
        e = self.msg(torch.cat([h.index_select(0, dst), h.index_select(0, src) - h.index_select(0, dst),
                                (pos.index_select(0, src) - pos.index_select(0, dst)).to(h.dtype)], -1))
        agg = torch.zeros(h.shape[0], e.shape[1], device=h.device, dtype=e.dtype).index_add_(0, dst, e) / k
        return h + self.upd(torch.cat([self.norm(h), agg.to(h.dtype)], -1))


class _RoomGNN(_nn.Module):
    def __init__(self, c, layers, classes):
        super().__init__()
        self.embed = mlp(6, c, c, act=_nn.GELU)
        self.layers = _nn.ModuleList(_EdgeLayer(c) for _ in range(layers))
        self.norm = _nn.LayerNorm(c)
        self.sem, self.normal, self.offset = _nn.Linear(c, classes), _nn.Linear(c, 3), _nn.Linear(c, 3)

    def forward(self, feats, pos, src, dst, k):
        h = self.embed(feats)
        for layer in self.layers:
            h = layer(h, pos, src, dst, k)
        h = self.norm(h)
        return self.sem(h).float(), self.normal(h).float(), self.offset(h).float()


@_workload("room-scan semantic segmentation training (random init, an edge-convolution graph net over scanned point clouds): 1-4 room scans a step (drawn, at most 32,768 padded points in all) of 4,096-16,384 points each (drawn per scan, padded to the step's longest rounded up to a multiple of 512, padding points moved 1,000 m away and masked), xyz in a drawn room of 3-10 m x 3-10 m x 2.4-3.2 m and RGB drawn on the device; a k-nearest-neighbour graph (k 12) from the squared-distance matrix by topk, flattened to global edge indices; a 4-layer edge-convolution net (width 96, GELU message and update MLPs, messages by index_select, summed by index_add_ and averaged); 20-way semantic logits (cross-entropy), normals (1 - cosine, weight 0.5) and instance-centre offsets (L1, weight 0.5), all over real points only (masks multiplied in); AdamW, clipping, bf16 autocast, 620 steps; the three losses read back every 20 steps and every 155 steps a no-grad evaluation of 2 scans of 16,384 points with the semantic accuracy and mean IoU over 20 classes (by one-hot sums) read back")
def room_scan_pointgnn_train(rng):
    c, layers, classes, k = _smoke(96, 16), _smoke(4, 2), 20, _smoke(12, 4)
    model = _RoomGNN(c, layers, classes).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    lo, hi, budget, mult = _smoke(4096, 64), _smoke(16384, 256), _smoke(32768, 512), _smoke(512, 64)

    def scans(counts):
        b, n = len(counts), -(-max(counts) // mult) * mult
        keep = keep_mask(counts, n)
        room = torch.cat([3 + 7 * torch.rand(b, 1, 2, device="cuda"), 2.4 + 0.8 * torch.rand(b, 1, 1, device="cuda")],
                         -1)
        pos = (torch.rand(b, n, 3, device="cuda") * room).masked_fill(~keep[..., None], 1000.0)
        rgb = torch.rand(b, n, 3, device="cuda")
        knn = _square_distance(pos, pos).topk(k, dim=-1, largest=False).indices  # (b, n, k)
        src = (knn + (torch.arange(b, device="cuda") * n)[:, None, None]).flatten()
        dst = torch.arange(b * n, device="cuda")[:, None].expand(b * n, k).flatten()
        feats = torch.cat([pos / room, rgb], -1).flatten(0, 1)
        sem = torch.randint(0, classes, (b * n,), device="cuda")
        nrm = _F.normalize(torch.randn(b * n, 3, device="cuda"), dim=-1)
        off = 0.3 * torch.randn(b * n, 3, device="cuda")
        return feats, pos.flatten(0, 1), src, dst, keep.flatten().float(), sem, nrm, off

    steps = _smoke(620, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(1, 4)
        counts = [rng.randint(lo, hi) for _ in range(b)]
        while len(counts) > 1 and len(counts) * (-(-max(counts) // mult) * mult) > budget:
            counts.pop()
        feats, pos, src, dst, w, sem, nrm, off = scans(counts)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            s_log, p_n, p_o = model(feats, pos, src, dst, k)
        den = w.sum().clamp(min=1)
        l_s = (_F.cross_entropy(s_log, sem, reduction="none") * w).sum() / den
        l_n = ((1 - _F.cosine_similarity(p_n, nrm, dim=-1)) * w).sum() / den
        l_o = ((p_o - off).abs().sum(-1) * w).sum() / den
        loss = l_s + 0.5 * l_n + 0.5 * l_o
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_s.detach(), l_n.detach(), l_o.detach()]).tolist()
        del feats, pos, src, dst, w, sem, nrm, off, s_log, p_n, p_o, den, l_s, l_n, l_o, loss
        if (step + 1) % _smoke(155, 2) == 0:
            model.eval()
            with torch.no_grad():
                feats, pos, src, dst, w, sem, nrm, off = scans([hi] * 2)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    s_log, _, _ = model(feats, pos, src, dst, k)
                pred = _F.one_hot(s_log.argmax(-1), classes).float() * w[:, None]
                true = _F.one_hot(sem, classes).float() * w[:, None]
                inter, union = (pred * true).sum(0), (pred + true - pred * true).sum(0)
                out = torch.stack([inter.sum() / w.sum(), (inter / union.clamp(min=1)).mean()])
            out.tolist()
            del feats, pos, src, dst, w, sem, nrm, off, s_log, pred, true, inter, union, out


# ---------------------------------------------------------------- avatar motion diffusion from sparse tracking


class _MotionDenoiser(_nn.Module):
    """The noisy full-body pose sequence and the sparse tracking signals projected together, a position table and
    the timestep's sine features through an MLP added, pre-norm blocks under a key mask, a projection back to the
    pose."""

    def __init__(self, pose, track, d, heads, layers, max_pos):
        super().__init__()
        self.inp = _nn.Linear(pose + track, d)
        self.pos = _nn.Embedding(max_pos, d)
        self.temb = mlp(d, d, d, act=_nn.SiLU)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm, self.out = _nn.LayerNorm(d), _nn.Linear(d, pose)
        self.d = d

    def forward(self, x, cond, t, keep):
        n = x.shape[1]
        h = self.inp(torch.cat([x, cond], -1)) + self.pos(torch.arange(n, device=x.device))[None]
        h = h + self.temb(_sincos(t, self.d))[:, None]
        key = keep[:, None, None, :]
        for blk in self.blocks:
            h = blk(h, mask=key)
        return self.out(self.norm(h)).float()


def _abar(t):
    """The cosine schedule's cumulative alpha at integer timesteps of 1,000 (a tensor on the device, or a float)."""
    if isinstance(t, torch.Tensor):
        return torch.cos((t.float() / 1000 + 0.008) / 1.008 * math.pi / 2) ** 2
    return math.cos((t / 1000 + 0.008) / 1.008 * math.pi / 2) ** 2


@_workload("avatar motion diffusion training (random init, a transformer denoiser for full-body motion from sparse VR tracking, AGRoL-style): 16-64 sequences a step (drawn) of 32-196 frames each (drawn per sequence, padded to the step's longest rounded up to a multiple of 16, a 208-row position table), 22 joints' 6-d rotations (132 values a frame) drawn on the device, conditioned on the head and two hand trackers' rotation, position, angular and linear velocity (54 values a frame); a cosine noise schedule of 1,000 steps, timesteps drawn per sequence; input and condition projected together (width 384), sine timestep features through a SiLU MLP, 6 pre-norm blocks (6 heads) under a key mask, predicting the clean motion; loss the masked MSE plus 0.5 x the masked MSE of frame-to-frame velocities; AdamW, clipping, bf16 autocast, 380 steps; the two losses read back every 20 steps and every 95 steps a no-grad 10-step DDIM sampling of 8 sequences of 196 frames padded to 208 (timesteps and schedule on the host) with the mean absolute error of the sampled 6-d rotations against the drawn ground truth over all 208 frames, padding included, read back")
def avatar_motion_diffusion_train(rng):
    pose, track = 132, 54
    d, heads, layers = _smoke(384, 32), _smoke(6, 2), _smoke(6, 1)
    lo, hi, mult = _smoke(32, 8), _smoke(196, 24), 16
    max_pos = -(-hi // mult) * mult
    model = _MotionDenoiser(pose, track, d, heads, layers, max_pos).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.01)

    def batch(lengths):
        n = -(-max(lengths) // mult) * mult
        keep = keep_mask(lengths, n)
        x0 = torch.cumsum(0.05 * torch.randn(len(lengths), n, pose, device="cuda"), 1).tanh()
        cond = torch.randn(len(lengths), n, track, device="cuda")
        return x0, cond, keep

    steps = _smoke(380, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(16, 2), _smoke(64, 4))
        x0, cond, keep = batch([rng.randint(lo, hi) for _ in range(b)])
        t = torch.randint(0, 1000, (b,), device="cuda")
        ab = _abar(t)[:, None, None]
        xt = ab.sqrt() * x0 + (1 - ab).sqrt() * torch.randn_like(x0)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(xt, cond, t, keep)
        m = keep[..., None].float()
        l_x = (((pred - x0) ** 2) * m).sum() / (m.sum() * pose)
        mv = m[:, 1:] * m[:, :-1]
        l_v = ((((pred[:, 1:] - pred[:, :-1]) - (x0[:, 1:] - x0[:, :-1])) ** 2) * mv).sum() / (mv.sum() * pose)
        loss = l_x + 0.5 * l_v
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_x.detach(), l_v.detach()]).tolist()
        del x0, cond, keep, t, ab, xt, pred, m, l_x, mv, l_v, loss
        if (step + 1) % _smoke(95, 2) == 0:
            model.eval()
            with torch.no_grad():
                nb = _smoke(8, 2)
                x0, cond, keep = batch([hi] * nb)
                x = torch.randn_like(x0)
                ts = [999 - i * 100 for i in range(_smoke(10, 2))]
                for i, tv in enumerate(ts):
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        p0 = model(x, cond, torch.full((nb,), tv, device="cuda"), keep)
                    a, a_prev = _abar(tv), (_abar(ts[i + 1]) if i + 1 < len(ts) else 1.0)
                    eps = (x - math.sqrt(a) * p0) / math.sqrt(1 - a)
                    x = math.sqrt(a_prev) * p0 + math.sqrt(1 - a_prev) * eps
                err = (x - x0).abs().mean()
            err.item()
            del x0, cond, keep, x, p0, eps, err


# ---------------------------------------------------------------- lip-sync and facial-expression service (GRU by hand)


class _MouthEncoder(_nn.Module):
    """Four stride-2 3x3 convolutions with batch norm over a 64 x 64 infrared mouth crop, pooled; the frame's
    audio features projected and fused."""

    def __init__(self, widths, audio, d):
        super().__init__()
        mods, c = [], 1
        for w in widths:
            mods += [_nn.Conv2d(c, w, 3, 2, 1, bias=False), _nn.BatchNorm2d(w), _nn.ReLU(inplace=True)]
            c = w
        self.conv = _nn.Sequential(*mods)
        self.audio = _nn.Linear(audio, c)
        self.fuse = _nn.Linear(2 * c, d)

    def forward(self, img, mel):
        v = self.conv(img).mean((2, 3))
        return self.fuse(torch.cat([v, self.audio(mel)], -1))


class _GruStack(_nn.Module):
    """Stacked GRU layers as weight matrices, the input projection of the first layer batched over the chunk, every
    step written out."""

    def __init__(self, d, hid, layers):
        super().__init__()
        self.wx = _nn.ModuleList(_nn.Linear(d if i == 0 else hid, 3 * hid) for i in range(layers))
        self.wh = _nn.ModuleList(_nn.Linear(hid, 3 * hid, bias=False) for _ in range(layers))

    def forward(self, x, h):
        """x (B, T, d), h (layers, B, hid): the last layer's outputs (B, T, hid) and the new states."""
        h = list(h.unbind(0))
        xp = self.wx[0](x)
        outs = []
        for t in range(x.shape[1]):
            inp = None
            for i in range(len(h)):
                gx = xp[:, t] if i == 0 else self.wx[i](inp)
                gh = self.wh[i](h[i])
                xr, xz, xn = gx.chunk(3, -1)
                hr, hz, hn = gh.chunk(3, -1)
                r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
                h[i] = (1 - z) * torch.tanh(xn + r * hn) + z * h[i]
                inp = h[i]
            outs.append(inp)
        return torch.stack(outs, 1), torch.stack(h)


@_workload("lip-sync and facial-expression serving (random init, a mouth-camera convnet and a GRU written out step by step, driving an avatar's blendshapes): 620-660 requests (drawn) of 1-8 user streams each (drawn, distinct users of 512) with a chunk of 8-24 frames (drawn per request); per frame a 64 x 64 infrared mouth crop and 2 x 80 mel features drawn on the device; a convnet (four stride-2 3x3 convolutions of 32/64/128/128 channels with batch norm, pooled) and an audio projection fused to 256; a 2-layer GRU (hidden 256) run frame by frame, each user's hidden states gathered from an on-device table by index_select and written back by index_copy_; 52 blendshape weights (sigmoid) and 6 jaw and head values (tanh) from a 2-layer head on each stream's last GRU output of the chunk only, smoothed by an exponential average against each user's previous output (an on-device table, index_select and index_copy_); bf16 autocast; each request's last-frame blendshapes and jaw and head values read back once")
def lipsync_expression_serve(rng):
    d, hid, layers, n_users = _smoke(256, 16), _smoke(256, 16), 2, _smoke(512, 8)
    enc = _MouthEncoder(_smoke([32, 64, 128, 128], [4, 8]), 160, d).cuda().eval()
    gru = _GruStack(d, hid, layers).cuda().eval()
    head = mlp(hid, hid, 58).cuda().eval()
    for m in (enc, gru, head):
        m.requires_grad_(False)
    state = torch.zeros(n_users, layers, hid, device="cuda")
    last = torch.zeros(n_users, 58, device="cuda")
    nreq = rng.randint(_smoke(620, 3), _smoke(660, 4))
    for _ in range(nreq):
        users = rng.sample(range(n_users), rng.randint(1, min(8, n_users)))
        b, t = len(users), rng.randint(_smoke(8, 2), _smoke(24, 4))
        with torch.no_grad():
            ids = torch.tensor(users, device="cuda")
            img = torch.randn(b * t, 1, 64, 64, device="cuda")
            mel = torch.randn(b * t, 160, device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                feat = enc(img, mel).view(b, t, -1)
                h0 = state.index_select(0, ids).transpose(0, 1).to(feat.dtype)
                y, hn = gru(feat, h0)
                raw = head(y[:, -1]).float()
            out = torch.cat([torch.sigmoid(raw[:, :52]), torch.tanh(raw[:, 52:])], -1)
            out = 0.7 * out + 0.3 * last.index_select(0, ids)
            state.index_copy_(0, ids, hn.transpose(0, 1).float())
            last.index_copy_(0, ids, out)
        out.tolist()
        del ids, img, mel, feat, h0, y, hn, raw, out


# ---------------------------------------------------------------- self-supervised monocular depth and pose


def _cbe(cin, cout, stride=1):
    return _nn.Sequential(_nn.Conv2d(cin, cout, 3, stride, 1, bias=False), _nn.BatchNorm2d(cout), _nn.ELU())


class _DepthUNet(_nn.Module):
    """Stride-2 encoder stages of 32/64/128/256 (two convolutions each) to 1/16, a nearest-upsampling decoder with
    skips back to full resolution, a sigmoid disparity."""

    def __init__(self, widths):
        super().__init__()
        self.enc = _nn.ModuleList()
        c = 3
        for w in widths:
            self.enc.append(_nn.Sequential(_cbe(c, w, 2), _cbe(w, w)))
            c = w
        dec = widths[::-1][1:] + [widths[0] // 2]
        self.dec = _nn.ModuleList()
        skips = widths[::-1][1:] + [3]
        for w, s in zip(dec, skips):
            self.dec.append(_cbe(c + s, w))
            c = w
        self.disp = _nn.Conv2d(c, 1, 3, 1, 1)

    def forward(self, x):
        feats = [x]
        for e in self.enc:
            feats.append(e(feats[-1]))
        y = feats[-1]
        for dec, skip in zip(self.dec, feats[-2::-1]):
            y = dec(torch.cat([_F.interpolate(y, scale_factor=2, mode="nearest"), skip], 1))
        return torch.sigmoid(self.disp(y)).float()


class _PoseNet(_nn.Module):
    def __init__(self, widths):
        super().__init__()
        mods, c = [], 6
        for w in widths:
            mods += [_nn.Conv2d(c, w, 3, 2, 1), _nn.ReLU(inplace=True)]
            c = w
        self.body = _nn.Sequential(*mods)
        self.out = _nn.Conv2d(c, 6, 1)

    def forward(self, a, b):
        return 0.01 * self.out(self.body(torch.cat([a, b], 1))).float().mean((2, 3))


def _rodrigues(aa):
    """Rotation matrices (B, 3, 3) from axis-angle vectors (B, 3)."""
    theta = aa.norm(dim=-1, keepdim=True).clamp(min=1e-8)
    k = aa / theta
    zero = torch.zeros_like(k[:, 0])
    kx = torch.stack([zero, -k[:, 2], k[:, 1], k[:, 2], zero, -k[:, 0], -k[:, 1], k[:, 0], zero], -1).view(-1, 3, 3)
    s, c = theta.sin()[..., None], theta.cos()[..., None]
    return torch.eye(3, device=aa.device)[None] + s * kx + (1 - c) * (kx @ kx)


def _ssim_loss(x, y):
    """(1 - SSIM) / 2 over 3 x 3 reflected windows by average pooling, clamped to 0-1."""
    x, y = _F.pad(x, (1, 1, 1, 1), mode="reflect"), _F.pad(y, (1, 1, 1, 1), mode="reflect")
    mx, my = _F.avg_pool2d(x, 3, 1), _F.avg_pool2d(y, 3, 1)
    sx = _F.avg_pool2d(x * x, 3, 1) - mx * mx
    sy = _F.avg_pool2d(y * y, 3, 1) - my * my
    sxy = _F.avg_pool2d(x * y, 3, 1) - mx * my
    c1, c2 = 0.01 ** 2, 0.03 ** 2
    s = (2 * mx * my + c1) * (2 * sxy + c2) / ((mx * mx + my * my + c1) * (sx + sy + c2))
    return ((1 - s) / 2).clamp(0, 1)


@_workload("self-supervised monocular depth and pose training (random init, Monodepth2-style, for headset scene reconstruction): 4-12 snippets a step (drawn) of a target frame and two source frames at one of 192 x 256, 224 x 320 and 256 x 352 (drawn per step), drawn on the device, intrinsics drawn per step (focal 0.5-0.7 of the width); a depth U-Net (stride-2 encoder stages of 32/64/128/256 with two 3x3 convolutions each, batch norm and ELU, a nearest-upsampling decoder of 128/64/32/16 with skips to full resolution, sigmoid disparity mapped to depth 0.1-100); a pose convnet (five stride-2 convolutions of 16/32/64/128/256 over each target-source pair, axis-angle and translation scaled by 0.01); each source warped into the target by back-projection, Rodrigues rotation, projection and grid_sample; photometric error 0.85 x (1 - SSIM) / 2 (3 x 3 average pooling over reflection-padded frames, clamped to 0-1) + 0.15 x L1, the per-pixel minimum over the warped sources and the unwarped sources (auto-masking, the identity errors with 1e-5 noise); plus 1e-3 x edge-aware smoothness of the mean-normalised disparity; Adam, bf16 autocast, 345 steps; the two losses read back every 20 steps and every 86 steps a no-grad depth of 8 frames of 256 x 352 with the mean and median depth read back")
def mono_depth_pose_train(rng):
    depth_net = _DepthUNet(_smoke([32, 64, 128, 256], [4, 8, 8, 8])).cuda()
    pose_net = _PoseNet(_smoke([16, 32, 64, 128, 256], [4, 8])).cuda()
    opt = torch.optim.Adam(list(depth_net.parameters()) + list(pose_net.parameters()), lr=1e-4)
    sizes = _smoke([(192, 256), (224, 320), (256, 352)], [(32, 48), (48, 64)])

    def to_depth(disp):
        lo, hi = 1 / 100, 1 / 0.1
        return 1 / (lo + (hi - lo) * disp)

    steps = _smoke(345, 3)
    for step in range(steps):
        depth_net.train()
        pose_net.train()
        b = rng.randint(_smoke(4, 1), _smoke(12, 2))
        h, w = rng.choice(sizes)
        f = w * rng.uniform(0.5, 0.7)
        kmat = torch.tensor([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1]], device="cuda")
        kinv = torch.tensor([[1 / f, 0, -w / (2 * f)], [0, 1 / f, -h / (2 * f)], [0, 0, 1]], device="cuda")
        tgt = torch.rand(b, 3, h, w, device="cuda")
        srcs = [(tgt + 0.1 * torch.randn_like(tgt)).clamp(0, 1) for _ in range(2)]
        gy, gx = torch.meshgrid(torch.arange(h, device="cuda").float(), torch.arange(w, device="cuda").float(),
                                indexing="ij")
        pix = torch.stack([gx, gy, torch.ones_like(gx)]).view(3, -1)  # (3, h * w)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            disp = depth_net(tgt)
            poses = [pose_net(tgt, s) for s in srcs]
        depth = to_depth(disp)
        cam = (kinv @ pix)[None] * depth.view(b, 1, -1)  # (b, 3, h * w)
        errs = []
        for s, p in zip(srcs, poses):
            rot = _rodrigues(p[:, :3])
            pc = kmat[None] @ (rot @ cam + p[:, 3:, None])
            uv = pc[:, :2] / pc[:, 2:].clamp(min=1e-3)
            grid = torch.stack([uv[:, 0] / (w - 1) * 2 - 1, uv[:, 1] / (h - 1) * 2 - 1], -1).view(b, h, w, 2)
            warped = _F.grid_sample(s, grid, padding_mode="border", align_corners=True)
            errs.append(0.85 * _ssim_loss(warped, tgt).mean(1, keepdim=True)
                        + 0.15 * (warped - tgt).abs().mean(1, keepdim=True))
        for s in srcs:
            ident = 0.85 * _ssim_loss(s, tgt).mean(1, keepdim=True) + 0.15 * (s - tgt).abs().mean(1, keepdim=True)
            errs.append(ident + 1e-5 * torch.randn_like(ident))
        l_photo = torch.cat(errs, 1).min(1).values.mean()
        nd = disp / disp.mean((2, 3), keepdim=True).clamp(min=1e-7)
        dx, dy = (nd[..., 1:] - nd[..., :-1]).abs(), (nd[..., 1:, :] - nd[..., :-1, :]).abs()
        ix = (tgt[..., 1:] - tgt[..., :-1]).abs().mean(1, keepdim=True)
        iy = (tgt[..., 1:, :] - tgt[..., :-1, :]).abs().mean(1, keepdim=True)
        l_smooth = (dx * torch.exp(-ix)).mean() + (dy * torch.exp(-iy)).mean()
        loss = l_photo + 1e-3 * l_smooth
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 20 == 0:
            torch.stack([l_photo.detach(), l_smooth.detach()]).tolist()
        del kmat, kinv, tgt, srcs, gy, gx, pix, disp, poses, depth, cam, errs, l_photo, nd, dx, dy, ix, iy
        del l_smooth, loss, s, p, rot, pc, uv, grid, warped, ident
        if (step + 1) % _smoke(86, 2) == 0:
            depth_net.eval()
            with torch.no_grad():
                eh, ew = sizes[-1]
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    disp = depth_net(torch.rand(_smoke(8, 2), 3, eh, ew, device="cuda"))
                depth = to_depth(disp)
                out = torch.stack([depth.mean(), depth.flatten().median()])
            out.tolist()
            del disp, depth, out

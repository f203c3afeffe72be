"""The hundred-and-fourth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch103_b.py are): augmented and virtual reality and spatial computing, written in torch alone, first half. Hand-pose
training (a residual convnet over egocentric hand crops of drawn resolutions, 21 keypoint heatmaps with soft-argmax,
3-d joints refined by a message-passing net over the hand skeleton by index_add), an eye-tracking service (a small
convnet over both eyes' infrared frames from headsets of drawn camera resolutions, per-headset calibration, vergence
depth, blink hold and foveation shading-rate tiles), NeRF training (coarse and fine MLPs over drawn numbers of rays and
samples, volume rendering by cumprod, inverse-CDF resampling by searchsorted) and a foveated neural upscaling service
(a small U-Net run frame by frame over low-resolution renders with motion vectors and depth, the history warped by
grid_sample, a gaze-weighted periphery blur). Same conventions as the earlier batches: nothing downloaded, data drawn
at random on the device (or in reused pinned host buffers for the services), `rng` the workload's random.Random for
every shape, count and sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No
control flow reads a tensor's value: shapes and counts are fixed on the host, choices made by torch.where; losses and
metrics are read back only at logging points or once per request. eye_gaze_serve and foveated_upscale_serve upload
their inputs on a side stream (two reused pinned host buffers, one request ahead, through workload_helpers.SideUploads'
`ahead`); the other two are single-stream. The models run under bf16 autocast.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new104.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and for
which of them the CPU smoke run (RECORD_SMOKE=1) ran.
"""

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, SideUploads, _posenc, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- hand-pose estimation (heatmaps + skeleton graph)

# The parent of each of the 21 hand joints (wrist, then four joints for each finger from the thumb).
_HAND_PARENT = [-1, 0, 1, 2, 3, 0, 5, 6, 7, 0, 9, 10, 11, 0, 13, 14, 15, 0, 17, 18, 19]


class _HandNet(_nn.Module):
    """Stem (stride 2), four residual stages (two blocks each) to 1/16, two transposed convolutions back to 1/4:
    21 heatmaps and 21 relative-depth maps; pooled features to 21 x 3 joints; a skeleton message-passing refiner."""

    def __init__(self, widths, head, gdim, rounds):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, widths[0], 3, 2, 1, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU())
        stages, c = [], widths[0]
        for i, w in enumerate(widths):
            stages += [BasicResBlock(c, w, 1 if i == 0 else 2), BasicResBlock(w, w, 1)]
            c = w
        self.stages = _nn.Sequential(*stages)
        self.up = _nn.Sequential(_nn.ConvTranspose2d(c, head, 4, 2, 1, bias=False), _nn.BatchNorm2d(head), _nn.ReLU(),
                                 _nn.ConvTranspose2d(head, head, 4, 2, 1, bias=False), _nn.BatchNorm2d(head),
                                 _nn.ReLU(), _nn.Conv2d(head, 42, 1))
        self.joints = mlp(c, 256, 63)
        src = [j for j, p in enumerate(_HAND_PARENT) if p >= 0]
        dst = [p for p in _HAND_PARENT if p >= 0]
        self.register_buffer("src", torch.tensor(src + dst))
        self.register_buffer("dst", torch.tensor(dst + src))
        self.node_in, self.node_id = _nn.Linear(3 + 2 + 1 + c, gdim), _nn.Embedding(21, gdim)
        self.msg = _nn.ModuleList(mlp(2 * gdim, gdim, gdim) for _ in range(rounds))
        self.upd = _nn.ModuleList(_nn.Linear(2 * gdim, gdim) for _ in range(rounds))
        self.out = _nn.Linear(gdim, 3)

    def forward(self, x):
        f = self.stages(self.stem(x))
        maps = self.up(f).float()
        heat, rel = maps[:, :21], maps[:, 21:]
        b, _, h, w = heat.shape
        prob = torch.softmax(heat.flatten(2) * 8.0, -1)  # (B, 21, h * w)
        gy, gx = torch.meshgrid(torch.linspace(0, 1, h, device=x.device), torch.linspace(0, 1, w, device=x.device),
                                indexing="ij")
        uv = torch.stack([(prob * gx.flatten()).sum(-1), (prob * gy.flatten()).sum(-1)], -1)
        z = (prob * rel.flatten(2)).sum(-1, keepdim=True)
        pooled = f.mean((2, 3))
        j3 = self.joints(pooled).float().view(b, 21, 3)
        node = torch.cat([j3, uv, z, pooled.float()[:, None].expand(b, 21, -1)], -1)
        hdn = self.node_in(node) + self.node_id.weight[None]
        for msg, upd in zip(self.msg, self.upd):
            m = msg(torch.cat([hdn.index_select(1, self.src), hdn.index_select(1, self.dst)], -1))
            agg = torch.zeros_like(hdn).index_add(1, self.dst, m.to(hdn.dtype))
            hdn = hdn + torch.relu(upd(torch.cat([hdn, agg], -1)))
        return heat, uv, j3, j3 + self.out(hdn).float()


@_workload("hand-pose estimation training (random init, a residual heatmap convnet with a skeleton graph refiner): egocentric RGB hand crops of 128-256 px (drawn per step, a multiple of 32), 16-64 crops a step (drawn from 16 up to the most that fit in 32 x 224^2 pixels, at most 64); a channels-last residual convnet (stem 32 at 1/2, stages 32/64/128/256 of two basic blocks each to 1/16), two transposed convolutions (width 128) back to 1/4 with 21 keypoint heatmaps and 21 relative-depth maps; soft-argmax (softmax of 8 x the heatmap) to 2-d keypoints and their depth; pooled features to 21 x 3 joints by an MLP; a 3-round message-passing refiner (width 64) over the 40 directed bone edges by index_select and index_add; targets drawn on the device (keypoints in 0.1-0.9 of the crop, Gaussian heatmaps of sigma 2 cells, 3-d joints drawn as 0.05 x standard normal noise, visibility at 85%); loss 10 x visibility-weighted heatmap MSE + visibility-weighted keypoint L1 + joint L1 + refined joint L1; AdamW, clipping, bf16 autocast, 360 steps; the four losses read back every 20 steps and every 90 steps a no-grad evaluation of 32 crops of 256 px with the mean refined-joint and keypoint errors read back")
def hand_pose_heatmap_train(rng):
    widths, head, gdim = _smoke([32, 64, 128, 256], [8, 8, 16, 16]), _smoke(128, 8), _smoke(64, 8)
    model = _HandNet(widths, head, gdim, 3).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=1e-4)
    lo, hi, budget = _smoke(128, 32), _smoke(256, 64), _smoke(32 * 224 * 224, 4 * 64 * 64)

    def crops(b, r):
        x = torch.randn(b, 3, r, r, device="cuda").contiguous(memory_format=torch.channels_last)
        uv = 0.1 + 0.8 * torch.rand(b, 21, 2, device="cuda")
        m = r // 4
        g = torch.linspace(0, 1, m, device="cuda")
        sig = 2.0 / m
        hm = torch.exp(-((g[None, None, None, :] - uv[..., 0, None, None]) ** 2
                         + (g[None, None, :, None] - uv[..., 1, None, None]) ** 2) / (2 * sig * sig))
        j3 = 0.05 * torch.randn(b, 21, 3, device="cuda")
        vis = (torch.rand(b, 21, device="cuda") < 0.85).float()
        return x, uv, hm, j3, vis

    steps = _smoke(360, 3)
    for step in range(steps):
        model.train()
        r = rng.randint(lo // 32, hi // 32) * 32
        b = rng.randint(_smoke(16, 2), max(_smoke(16, 2), min(_smoke(64, 4), budget // (r * r))))
        x, uv, hm, j3, vis = crops(b, r)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            heat, p_uv, p_j3, p_ref = model(x)
        l_hm = ((heat - hm) ** 2).mean((2, 3)).mul(vis).sum() / vis.sum().clamp(min=1)
        l_uv = ((p_uv - uv).abs().sum(-1) * vis).sum() / vis.sum().clamp(min=1)
        l_j = (p_j3 - j3).abs().mean()
        l_r = (p_ref - j3).abs().mean()
        loss = 10 * l_hm + l_uv + l_j + l_r
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_hm.detach(), l_uv.detach(), l_j.detach(), l_r.detach()]).tolist()
        del x, uv, hm, j3, vis, heat, p_uv, p_j3, p_ref, l_hm, l_uv, l_j, l_r, loss
        if (step + 1) % _smoke(90, 2) == 0:
            model.eval()
            with torch.no_grad():
                x, uv, hm, j3, vis = crops(_smoke(32, 2), hi)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    _, p_uv, _, p_ref = model(x)
                err = torch.stack([(p_ref - j3).norm(dim=-1).mean(), (p_uv - uv).norm(dim=-1).mean()])
            err.tolist()
            del x, uv, hm, j3, vis, p_uv, p_ref, err


# ---------------------------------------------------------------- eye-tracking service


class _EyeNet(_nn.Module):
    """Five stride-2 3x3 convolutions with batch norm over one infrared eye image, global average pooling; yaw,
    pitch, a blink logit and a pupil diameter per eye."""

    def __init__(self, widths):
        super().__init__()
        mods, c = [], 1
        for w in widths:
            mods += [_nn.Conv2d(c, w, 3, 2, 1, bias=False), _nn.BatchNorm2d(w), _nn.ReLU(inplace=True)]
            c = w
        self.body = _nn.Sequential(*mods)
        self.head = mlp(c, c, 4)

    def forward(self, x):
        return self.head(self.body(x).mean((2, 3))).float()


@_workload("eye-tracking serving (random init, a small convnet over both eyes' infrared frames): 3,700-3,850 requests (drawn) of 1-8 frame pairs each (drawn) from one headset each (of 64, drawn), the headset's eye-camera resolution one of 120 x 160, 160 x 200 and 200 x 256 (fixed per headset, drawn once); uint8 frames of both eyes uploaded on a side stream from two reused pinned host buffers (filled once, sized for 8 pairs at 200 x 256) one request ahead through SideUploads.ahead (one span, waited on by event, record_stream'ed), normalised on the device; a channels-last convnet (five stride-2 3x3 convolutions of 16/32/64/96/128 channels with batch norm, global pooling, a 2-layer head) to yaw, pitch, blink logit and pupil diameter per eye under bf16 autocast; each headset's per-eye 2 x 3 calibration (an on-device table gathered by index_select) applied to yaw and pitch; unit gaze vectors, vergence depth from the angle between the eyes (64 mm baseline), the fixation point on the image plane held at the headset's previous fixation while blinking (torch.where, the running fixation kept per headset and written back by index_copy_); shading rates (1, 2 or 4) of an 8 x 10 tile grid by distance from the fixation (torch.where at 0.15 and 0.35); each request's fixations, vergence depths, blink probabilities, pupil sizes and shading-rate tile counts read back")
def eye_gaze_serve(rng):
    model = _EyeNet(_smoke([16, 32, 64, 96, 128], [4, 8])).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    sizes = _smoke([(120, 160), (160, 200), (200, 256)], [(24, 32), (32, 40)])
    n_head, max_f = _smoke(64, 4), _smoke(8, 2)
    head_size = [rng.choice(sizes) for _ in range(n_head)]
    big = max(h * w for h, w in sizes) * 2
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_f * big,), dtype=torch.uint8, generator=gen).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    calib = torch.eye(2, 3, device="cuda").repeat(n_head, 2, 1, 1) + 0.05 * torch.randn(n_head, 2, 2, 3, device="cuda")
    fix_state = torch.zeros(n_head, 2, device="cuda")
    ty, tx = torch.meshgrid(torch.linspace(-0.9, 0.9, 8, device="cuda"), torch.linspace(-0.9, 0.9, 10, device="cuda"),
                            indexing="ij")
    tiles = torch.stack([tx.flatten(), ty.flatten()], -1)  # (80, 2)
    nreq = rng.randint(_smoke(3700, 3), _smoke(3850, 4))
    plan = []
    for _ in range(nreq):
        hd = rng.randrange(n_head)
        plan.append((hd, rng.randint(1, max_f), *head_size[hd]))

    for (hd, f, h, w), raw in up.ahead(plan, lambda p: (p[1] * 2 * p[2] * p[3],)):
        with torch.no_grad():
            x = raw.view(f * 2, 1, h, w).float().div_(255).sub_(0.5).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = model(x).view(f, 2, 4)
            hd_t = torch.tensor([hd], device="cuda")
            cal = calib.index_select(0, hd_t)[0]  # (2, 2, 3)
            ang = torch.cat([out[..., :2], torch.ones(f, 2, 1, device="cuda")], -1)
            yp = torch.einsum("eij,fej->fei", cal, ang)
            yaw, pitch = yp[..., 0], yp[..., 1]
            vec = torch.stack([pitch.cos() * yaw.sin(), pitch.sin(), pitch.cos() * yaw.cos()], -1)
            cosang = (vec[:, 0] * vec[:, 1]).sum(-1).clamp(-1, 1)
            verg = 0.064 / (2 * torch.tan(torch.acos(cosang) / 2).clamp(min=1e-3))
            g = _F.normalize(vec.mean(1), dim=-1)
            fix = g[:, :2] / g[:, 2:].clamp(min=0.1)
            blink = torch.sigmoid(out[..., 2]).mean(1)
            prev = fix_state.index_select(0, hd_t)
            fix = torch.where(blink[:, None] > 0.5, prev, fix)
            fix_state.index_copy_(0, hd_t, fix[-1:])
            dist = torch.cdist(fix, tiles)  # (f, 80)
            rate = torch.where(dist < 0.15, 1.0, torch.where(dist < 0.35, 2.0, 4.0))
            counts = torch.stack([(rate == r).float().sum(1) for r in (1.0, 2.0, 4.0)], 1)
            pupil = out[..., 3].mean(1)
            res = torch.cat([fix.flatten(), verg, blink, pupil, counts.flatten()])
        res.tolist()
        del raw, x, out, hd_t, cal, ang, yp, yaw, pitch, vec, cosang, verg, g, fix, blink, prev, dist, rate, counts
        del pupil, res


# ---------------------------------------------------------------- NeRF training (coarse + fine)


class _RadianceMLP(_nn.Module):
    """NeRF's MLP: 8 layers of `w` with the encoded position concatenated again before the fifth, density from
    the trunk, colour from a feature layer and the encoded view direction."""

    def __init__(self, w, fx, fd):
        super().__init__()
        self.fx, self.fd = fx, fd
        ix, idr = 3 + 6 * fx, 3 + 6 * fd
        self.trunk = _nn.ModuleList(_nn.Linear(ix if i == 0 else (w + ix if i == 4 else w), w) for i in range(8))
        self.sigma, self.feat = _nn.Linear(w, 1), _nn.Linear(w, w)
        self.rgb = mlp(w + idr, w // 2, 3)

    def forward(self, pts, dirs):
        ex = _posenc(pts, self.fx)
        h = ex
        for i, lin in enumerate(self.trunk):
            if i == 4:
                h = torch.cat([h, ex], -1)
            h = torch.relu(lin(h))
        ed = _posenc(dirs, self.fd)[:, None].expand(-1, pts.shape[1], -1)
        rgb = torch.sigmoid(self.rgb(torch.cat([self.feat(h), ed.to(h.dtype)], -1)))
        return rgb.float(), self.sigma(h)[..., 0].float()


def _composite(rgb, sigma, t, dirs):
    """Volume rendering along each ray: alphas from densities and sample spacings, transmittance by cumprod,
    colour over a white background, expected depth and the weights."""
    delta = torch.cat([t[:, 1:] - t[:, :-1], torch.full_like(t[:, :1], 1e10)], 1) * dirs.norm(dim=-1, keepdim=True)
    alpha = 1 - torch.exp(-torch.relu(sigma) * delta)
    trans = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1 - alpha + 1e-10], 1), 1)[:, :-1]
    wts = alpha * trans
    acc = wts.sum(1, keepdim=True)
    color = (wts[..., None] * rgb).sum(1) + (1 - acc)
    return color, (wts * t).sum(1), wts


def _resample(t, wts, n, near, far):
    """Inverse-CDF sampling of n more depths per ray from the coarse weights (searchsorted over the CDF built on
    the midpoints between coarse samples), detached."""
    mids = 0.5 * (t[:, 1:] + t[:, :-1])
    pdf = wts[:, 1:-1].detach() + 1e-5
    pdf = pdf / pdf.sum(1, keepdim=True)
    cdf = torch.cat([torch.zeros_like(pdf[:, :1]), torch.cumsum(pdf, 1)], 1)
    u = torch.rand(t.shape[0], n, device=t.device)
    idx = torch.searchsorted(cdf.contiguous(), u, right=True)
    lo, hi = (idx - 1).clamp(min=0), idx.clamp(max=cdf.shape[1] - 1)
    c0, c1 = cdf.gather(1, lo), cdf.gather(1, hi)
    b0, b1 = mids.gather(1, lo), mids.gather(1, hi)
    frac = (u - c0) / (c1 - c0).clamp(min=1e-5)
    return (b0 + frac * (b1 - b0)).clamp(near, far)


@_workload("NeRF training (random init, coarse and fine radiance MLPs, the original hierarchical sampler): 512-2,048 rays a step (drawn, a multiple of 256) from cameras on a sphere of radius 4 looking at the origin with jitter, near 2 and far 6; 32-64 stratified coarse samples (drawn per step, a multiple of 8) and 32-64 fine samples (drawn) by inverse-CDF sampling of the coarse weights with searchsorted, the fine MLP run on coarse and fine samples sorted together; each MLP 8 layers of 256 with the position's 10-frequency encoding concatenated again before the fifth, density from the trunk, colour from a feature layer and the 4-frequency view-direction encoding; volume rendering by cumprod of transmittance over a white background; loss the MSE of coarse and of fine colours against drawn target colours; Adam with exponential learning-rate decay (LambdaLR), bf16 autocast, 640 steps; both losses read back every 20 steps and every 160 steps a no-grad render of 4,096 rays in chunks of 1,024 (64 coarse and 64 fine samples) with the fine PSNR and mean depth read back")
def nerf_volume_render_train(rng):
    w, fx, fd = _smoke(256, 16), _smoke(10, 2), _smoke(4, 2)
    coarse, fine = _RadianceMLP(w, fx, fd).cuda(), _RadianceMLP(w, fx, fd).cuda()
    params = list(coarse.parameters()) + list(fine.parameters())
    opt = torch.optim.Adam(params, lr=5e-4)
    steps = _smoke(640, 3)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.1 ** (s / max(1, steps)))
    near, far = 2.0, 6.0

    def rays(n):
        o = _F.normalize(torch.randn(n, 3, device="cuda"), dim=-1) * 4
        d = _F.normalize(-o + 0.3 * torch.randn(n, 3, device="cuda"), dim=-1)
        return o, d, torch.rand(n, 3, device="cuda")

    def render(o, d, nc, nf):
        edges = torch.linspace(near, far, nc + 1, device="cuda")
        t = edges[:-1] + (edges[1:] - edges[:-1]) * torch.rand(o.shape[0], nc, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            rgb, sig = coarse(o[:, None] + d[:, None] * t[..., None], d)
        c_col, _, wts = _composite(rgb, sig, t, d)
        t_all = torch.sort(torch.cat([t, _resample(t, wts, nf, near, far)], 1), 1).values
        with torch.autocast("cuda", dtype=torch.bfloat16):
            rgb, sig = fine(o[:, None] + d[:, None] * t_all[..., None], d)
        f_col, depth, _ = _composite(rgb, sig, t_all, d)
        return c_col, f_col, depth

    for step in range(steps):
        coarse.train()
        fine.train()
        n = rng.randint(_smoke(2, 1), _smoke(8, 1)) * _smoke(256, 64)
        nc, nf = rng.randint(4, 8) * _smoke(8, 2), rng.randint(_smoke(32, 4), _smoke(64, 8))
        o, d, target = rays(n)
        c_col, f_col, _ = render(o, d, nc, nf)
        l_c = _F.mse_loss(c_col, target)
        l_f = _F.mse_loss(f_col, target)
        loss = l_c + l_f
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        if step % 20 == 0:
            torch.stack([l_c.detach(), l_f.detach()]).tolist()
        del o, d, target, c_col, f_col, l_c, l_f, loss
        if (step + 1) % _smoke(160, 2) == 0:
            coarse.eval()
            fine.eval()
            with torch.no_grad():
                se, dep = [], []
                for _ in range(_smoke(4, 2)):
                    o, d, target = rays(_smoke(1024, 32))
                    _, f_col, depth = render(o, d, _smoke(64, 8), _smoke(64, 8))
                    se.append(((f_col - target) ** 2).mean())
                    dep.append(depth.mean())
                psnr = -10 * torch.log10(torch.stack(se).mean())
                out = torch.stack([psnr, torch.stack(dep).mean()])
            out.tolist()
            del o, d, target, f_col, depth, se, dep, psnr, out


# ---------------------------------------------------------------- foveated neural upscaling service


class _UpscaleUNet(_nn.Module):
    """A three-level U-Net (full, 1/2, 1/4 resolution) over the upsampled frame, the warped history, depth and the
    foveal weight; a residual colour and a history blend logit."""

    def __init__(self, c):
        super().__init__()

        def conv(a, b, s=1):
            return _nn.Sequential(_nn.Conv2d(a, b, 3, s, 1), _nn.ReLU(inplace=True))

        self.e0 = _nn.Sequential(conv(8, c), conv(c, c))
        self.e1 = _nn.Sequential(conv(c, 2 * c, 2), conv(2 * c, 2 * c))
        self.e2 = _nn.Sequential(conv(2 * c, 4 * c, 2), conv(4 * c, 4 * c))
        self.d1 = conv(6 * c, 2 * c)
        self.d0 = conv(3 * c, c)
        self.out = _nn.Conv2d(c, 4, 3, 1, 1)

    def forward(self, x):
        a = self.e0(x)
        b = self.e1(a)
        c = self.e2(b)
        y = self.d1(torch.cat([_F.interpolate(c, scale_factor=2, mode="nearest"), b], 1))
        y = self.d0(torch.cat([_F.interpolate(y, scale_factor=2, mode="nearest"), a], 1))
        return self.out(y).float()


@_workload("foveated neural upscaling serving (random init, a small recurrent U-Net run frame by frame): 1,750-1,850 requests (drawn) of 2-6 stereo frames each (drawn) from one headset session each (of 32, drawn), the session's output resolution per eye one of 320 x 352, 384 x 416 and 448 x 480 (fixed per session, drawn once), rendered at half resolution; each frame's two eyes' colour (3), motion vectors (2) and depth (1) as float16 uploaded on a side stream from two reused pinned host buffers (filled once, sized for 6 stereo frames at half of the largest size) one request ahead through SideUploads.ahead (one span, waited on by event, record_stream'ed); per frame, in order: bilinear 2x upsampling, the previous output warped by grid_sample along the upsampled motion vectors (the first frame's history the upsampled frame), a foveal weight map from the distance to a drawn gaze point per eye, a channels-last three-level U-Net (24/48/96 channels) under bf16 autocast to a residual colour and a history blend; the blended output becomes the next history, and the shown frame mixes it with a 4x average-pooled and upsampled periphery by the foveal weight; each request's per-frame mean blend weight and mean shown luminance read back once")
def foveated_upscale_serve(rng):
    model = _UpscaleUNet(_smoke(24, 4)).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    sizes = _smoke([(320, 352), (384, 416), (448, 480)], [(32, 48), (48, 64)])
    n_sess, max_f = _smoke(32, 3), _smoke(6, 3)
    sess_size = [rng.choice(sizes) for _ in range(n_sess)]
    big = max(h * w for h, w in sizes) // 4 * 2 * 6
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.rand(max_f * big, generator=gen).half().pin_memory() for _ in range(2)]
    up = SideUploads(host)
    nreq = rng.randint(_smoke(1750, 3), _smoke(1850, 4))
    plan = []
    for _ in range(nreq):
        s = rng.randrange(n_sess)
        plan.append((s, rng.randint(2, max_f), *sess_size[s]))

    for (s, f, h, w), raw in up.ahead(plan, lambda p: (p[1] * 2 * 6 * (p[2] // 2) * (p[3] // 2),)):
        with torch.no_grad():
            frames = raw.view(f, 2, 6, h // 2, w // 2).float()
            gy, gx = torch.meshgrid(torch.linspace(-1, 1, h, device="cuda"), torch.linspace(-1, 1, w, device="cuda"),
                                    indexing="ij")
            base = torch.stack([gx, gy], -1)[None]  # (1, h, w, 2)
            gaze = 0.6 * (torch.rand(f, 2, 2, device="cuda") - 0.5)
            hist, stats = None, []
            for i in range(f):
                fr = frames[i]
                upc = _F.interpolate(fr, size=(h, w), mode="bilinear", align_corners=False)
                color, mv, depth = upc[:, :3], upc[:, 3:5] - 0.5, upc[:, 5:]
                prev = upc[:, :3] if hist is None else hist
                warped = _F.grid_sample(prev, base + 0.02 * mv.permute(0, 2, 3, 1), mode="bilinear",
                                        padding_mode="border", align_corners=False)
                dist = (base - gaze[i][:, None, None]).pow(2).sum(-1)[:, None]
                fw = torch.exp(-dist / 0.05)
                x = torch.cat([color, warped, depth, fw], 1).contiguous(memory_format=torch.channels_last)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    o = model(x)
                a = torch.sigmoid(o[:, 3:])
                hist = (a * warped + (1 - a) * (color + o[:, :3])).clamp(0, 1)
                blur = _F.interpolate(_F.avg_pool2d(hist, 4), size=(h, w), mode="bilinear", align_corners=False)
                shown = fw * hist + (1 - fw) * blur
                stats.append(torch.stack([a.mean(), (shown * torch.tensor([0.299, 0.587, 0.114], device="cuda")
                                                     .view(1, 3, 1, 1)).sum(1).mean()]))
                del fr, upc, color, mv, depth, prev, warped, dist, fw, x, o, a, blur, shown
            out = torch.stack(stats)
        out.tolist()
        del raw, frames, gy, gx, base, gaze, hist, stats, out

"""The fifty-sixth batch of held-out workloads, second half (batch56.py holds the first): neuroscience and
brain-computer interfaces on the GPU, written in torch alone. Calcium-imaging source extraction (CaImAn-style:
two-photon movies of 1,000-2,000 frames and fields of view of 256-384 pixels (drawn) synthesised on the device from
neurons' Gaussian footprints, calcium traces of Poisson spikes through a double-exponential kernel, a neuropil
background, noise and rigid motion jitter; rigid motion correction by FFT phase correlation against a running
template with sub-pixel shifts applied as Fourier phase ramps; then overlapping patches, each fitted by a rank-1
background plus non-negative matrix factorisation of 8-20 components (drawn) with HALS updates component by
component, and a non-negative deconvolution of every trace by projected gradient), connectomics segmentation of
electron-microscopy volumes (synthetic anisotropic volumes of Voronoi cells with membranes, a 3D affinity UNet
trained on patches of drawn size against short- and long-range affinities with class-balanced BCE, then
sliding-window inference over a larger volume with blending and an agglomeration by iterative label propagation
across affinities above threshold), a DeepLabCut-style pose-estimation service for animal-behaviour video (frames of
drawn resolution from several cameras uploaded as uint8 from reused pinned host buffers on a side stream one batch
ahead; a ResNet-50 backbone at output stride 16 with transposed-convolution heads for keypoint score maps and
location refinement, peaks by argmax and refined coordinates read back, a per-video temporal smoother kept on the
device), and a conductance-based biophysical network simulation (Hodgkin-Huxley excitatory and inhibitory neurons
with exponential-Euler gating, conductance synapses by matmul over drawn random connectivity, Poisson drive;
networks of 2,000-10,000 neurons (drawn) simulated one after another, spike rasters kept per window, then rates,
population spectra by FFT and pairwise spike-count correlations). Same conventions as batch56.py: nothing
downloaded, data drawn on the device (or, for the pose service, from a few reused pinned host buffers), `rng` the
workload's random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)`. No control
flow reads a tensor's value: masks are multiplied or filled in, counts fixed on the host, no boolean-mask indexing;
losses, fits and keypoints are read back only at logging points (the service returns each batch's keypoints, as a
service must). dlc_pose_behavior_serve uses a side stream (uploads waited on by event, the tensors
record_stream'ed); the others are single-stream. The UNet and the ResNet run under bf16 autocast; the motion
correction, the factorisation, the simulation and the losses are fp32.

Real sizes checked before recording, as batch56.py's header says (the same meta-device runner, op outputs counted,
peak live bytes tracked), each run whole at its final sizes:
calcium_cnmf_hals_extract 329,773 op outputs, peak 3.35 GB; em_affinity_unet_train 317,698, 2.76 GB;
dlc_pose_behavior_serve 293,191, 1.90 GB; hh_conductance_network_sim 317,212, 0.51 GB (peaks in fp32 where autocast
would take bf16).
record_new56.sh's header has the figures. The CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- calcium-imaging motion correction and CNMF


def _hann(n, periodic=True):
    i = torch.arange(n, device="cuda", dtype=torch.float32)
    return 0.5 - 0.5 * torch.cos(2 * math.pi * i / (n if periodic else n - 1))


def _fftfreq(n):
    """torch.fft.fftfreq(n) made on the device by arange (cycles per sample)."""
    i = torch.arange(n, device="cuda", dtype=torch.float32)
    return torch.where(i < (n + 1) // 2, i, i - n) / n


def _movie(t, h, w, k):
    """A two-photon movie (t, h, w): k neurons' Gaussian footprints times calcium traces (Poisson spikes through a
    double-exponential kernel by conv1d), a neuropil background, shot noise, and rigid sub-pixel motion jitter."""
    dev = "cuda"
    cy, cx = torch.rand(k, 1, 1, device=dev) * h, torch.rand(k, 1, 1, device=dev) * w
    sig = 2.0 + 2.0 * torch.rand(k, 1, 1, device=dev)
    yy = torch.arange(h, device=dev, dtype=torch.float32)[None, :, None]
    xx = torch.arange(w, device=dev, dtype=torch.float32)[None, None, :]
    foot = torch.exp(-((yy - cy).pow(2) + (xx - cx).pow(2)) / (2 * sig ** 2))  # (k, h, w)
    spikes = torch.poisson(torch.full((k, 1, t), 0.03, device=dev))
    tau = torch.arange(100, device=dev, dtype=torch.float32)
    kern = (torch.exp(-tau / 20.0) - torch.exp(-tau / 2.0)).flip(0).view(1, 1, -1)
    trace = _F.conv1d(_F.pad(spikes, (99, 0)), kern)[:, 0]  # (k, t)
    bg = 0.5 + 0.3 * torch.sin(yy / h * 3.0 + xx / w * 2.0)
    shifts = torch.randn(t, 2, device=dev).cumsum(0) * 0.1
    frames = []
    for f0 in range(0, t, 250):  # frames made in chunks of 250 to bound the FFTs' memory
        tr = trace[:, f0:f0 + 250]
        mov = (tr.T @ foot.view(k, -1)).view(-1, h, w)
        mov = mov + bg * (1.0 + 0.1 * torch.sin(torch.arange(f0, f0 + tr.shape[1], device=dev)[:, None, None]
                                                / 300.0))
        frames.append(_shift(mov, shifts[f0:f0 + 250]) + 0.2 * torch.randn_like(mov))
        del mov
    return torch.cat(frames), foot, trace


def _shift(frames, shifts):
    """Sub-pixel rigid shifts (t, 2) applied as phase ramps in the Fourier domain."""
    t, h, w = frames.shape
    fy = _fftfreq(h)[None, :, None]
    fx = (torch.arange(w // 2 + 1, device=frames.device, dtype=torch.float32) / w)[None, None, :]  # rfftfreq
    ramp = torch.exp(-2j * math.pi * (fy * shifts[:, 0, None, None] + fx * shifts[:, 1, None, None]))
    return torch.fft.irfft2(torch.fft.rfft2(frames) * ramp, s=(h, w))


def _hals(y, k, iters):
    """Rank-1 background plus k non-negative components of a patch y (p, t) by HALS, component by component."""
    p, t = y.shape
    dev = y.device
    a = torch.rand(p, k, device=dev)
    c = torch.rand(k, t, device=dev)
    b = y.mean(1, keepdim=True)
    f = torch.ones(1, t, device=dev)
    for _ in range(iters):
        r = y - b @ f
        u, v = a.T @ r, a.T @ a  # temporal update
        for j in range(k):
            c[j] = (c[j] + (u[j] - v[j] @ c) / (v[j, j] + 1e-6)).clamp_min(0)
        u, v = r @ c.T, c @ c.T  # spatial update
        for j in range(k):
            a[:, j] = (a[:, j] + (u[:, j] - a @ v[:, j]) / (v[j, j] + 1e-6)).clamp_min(0)
        a = a / (a.norm(dim=0, keepdim=True) + 1e-6)
        res = y - a @ c
        b = (res @ f.T) / t
        f = (b.T @ res / (b.pow(2).sum() + 1e-6)).clamp_min(0)
    return a, c, b, f


@_workload("calcium-imaging motion correction and CNMF source extraction written by hand: 4 two-photon movies of 1,000-2,000 frames at 256^2-384^2 pixels (drawn) synthesised on the device (Gaussian footprints of 150-400 neurons, Poisson spikes through a double-exponential kernel by conv1d, neuropil, noise, rigid jitter by Fourier phase ramps); rigid motion correction in batches of 200 frames by rfft2 phase correlation against a running template, a soft-argmax shift and a phase-ramp correction; then overlapping 64^2 patches (stride 48), each a rank-1 background plus 8-20 non-negative components (drawn) fitted by 10 HALS iterations updated component by component, and 40 projected-gradient steps of non-negative deconvolution of the traces against an AR(2) kernel; per-movie component counts and residuals read back; fp32")
def calcium_cnmf_hals_extract(rng):
    dev = "cuda"
    patch, stride = _smoke(64, 12), _smoke(48, 8)
    for movie in range(_smoke(4, 1)):
        t = rng.randint(_smoke(1000, 20), _smoke(2000, 30))
        hw = rng.choice(_smoke([256, 320, 384], [20, 28]))
        with torch.no_grad():
            mov, _, _ = _movie(t, hw, hw, rng.randint(_smoke(150, 4), _smoke(400, 8)))
            template = mov[:_smoke(100, 5)].mean(0)
            corrected = []
            hann = _hann(hw)
            win2 = hann[:, None] * hann[None, :]
            yy = _fftfreq(hw) * hw
            for f0 in range(0, t, _smoke(200, 8)):
                fr = mov[f0:f0 + _smoke(200, 8)]
                xc = torch.fft.irfft2(torch.fft.rfft2(fr * win2) * torch.fft.rfft2(template * win2).conj(),
                                      s=(hw, hw))
                n = fr.shape[0]
                p = torch.softmax(xc.view(n, -1) / (xc.view(n, -1).std(1, keepdim=True) + 1e-6) * 4.0, 1)
                p = p.view(n, hw, hw)
                shift = torch.stack([(p.sum(2) * yy).sum(1), (p.sum(1) * yy).sum(1)], 1)
                fixed = _shift(fr, -shift)
                corrected.append(fixed)
                template = 0.8 * template + 0.2 * fixed.mean(0)
                del xc, p, fr
            mov = torch.cat(corrected)
            del corrected
            comps, resid = [], []
            starts = list(range(0, hw - patch + 1, stride))
            for y0 in starts:
                for x0 in starts:
                    y = mov[:, y0:y0 + patch, x0:x0 + patch].reshape(t, -1).T.contiguous()  # (p, t)
                    k = rng.randint(_smoke(8, 2), _smoke(20, 3))
                    a, c, b, f = _hals(y, k, _smoke(10, 2))
                    # non-negative deconvolution of each trace: c ~ conv(s, AR(2) kernel), s >= 0
                    s = c.clone()
                    kern = (0.95 ** torch.arange(60, device=dev, dtype=torch.float32)
                            - 0.6 ** torch.arange(60, device=dev, dtype=torch.float32)).flip(0).view(1, 1, -1)
                    for _ in range(_smoke(40, 2)):
                        fit = _F.conv1d(_F.pad(s[:, None], (59, 0)), kern)[:, 0]
                        g = _F.conv_transpose1d((fit - c)[:, None], kern)[:, 0, 59:]
                        s = (s - 0.05 * g - 0.01).clamp_min(0)
                    comps.append(torch.stack([a.sum(), c.sum(), s.sum()]))
                    resid.append((y - a @ c - b @ f).pow(2).mean())
                    del y, a, c, b, f, s
            torch.stack([torch.stack(comps).sum(0).sum(), torch.stack(resid).mean()]).tolist()
            del mov, template


# ---------------------------------------------------------------- connectomics: 3D affinity UNet and agglomeration


def _em_volume(d, h, w, ncell):
    """An anisotropic EM-like volume (d, h, w) of Voronoi cells (labels by nearest seed, chunked over the voxels)
    with dark membranes at label boundaries, texture and noise; returns the image and the labels."""
    dev = "cuda"
    seeds = torch.rand(ncell, 3, device=dev) * torch.tensor([d * 4.0, h, w], device=dev)  # z 4x anisotropic
    zz, yy, xx = torch.meshgrid(torch.arange(d, device=dev) * 4.0, torch.arange(h, device=dev).float(),
                                torch.arange(w, device=dev).float(), indexing="ij")
    pts = torch.stack([zz, yy, xx], -1).view(-1, 3)
    lab = torch.cat([torch.cdist(pts[i:i + 65536], seeds).argmin(1) for i in range(0, pts.shape[0], 65536)])
    lab = lab.view(d, h, w)
    lf = lab.float()[None, None]
    edge = ((_F.max_pool3d(lf, 3, 1, 1) != lf) | (-_F.max_pool3d(-lf, 3, 1, 1) != lf)).float()[0, 0]
    tex = _F.avg_pool3d(torch.randn(1, 1, d, h, w, device=dev), 3, 1, 1)[0, 0]
    img = 0.7 - 0.5 * edge + 0.3 * tex + 0.05 * torch.randn(d, h, w, device=dev)
    img = img + 0.1 * torch.sin(lab.float() * 1.7)
    return img, lab


_OFFSETS = [(1, 0, 0), (0, 1, 0), (0, 0, 1), (2, 0, 0), (0, 3, 0), (0, 0, 3), (0, 9, 0), (0, 0, 9)]


def _affinities(lab):
    """Affinity targets for each offset: 1 where a voxel and its neighbour at -offset share a label (and the neighbour
    exists), with a validity mask; (n_off, d, h, w)."""
    affs, valid = [], []
    d, h, w = lab.shape
    for oz, oy, ox in _OFFSETS:
        shifted = _F.pad(lab, (ox, 0, oy, 0, oz, 0), value=-1)[:d, :h, :w]
        affs.append((shifted == lab).float())
        valid.append((shifted >= 0).float())
    return torch.stack(affs), torch.stack(valid)


class _AffUnet(_nn.Module):
    def __init__(self, w, nout):
        super().__init__()

        def blk(a, b):
            return _nn.Sequential(_nn.Conv3d(a, b, (1, 3, 3), padding=(0, 1, 1)), _nn.GroupNorm(4, b), _nn.ELU(),
                                  _nn.Conv3d(b, b, 3, padding=1), _nn.GroupNorm(4, b), _nn.ELU())

        self.e1, self.e2, self.e3, self.e4 = blk(1, w), blk(w, 2 * w), blk(2 * w, 4 * w), blk(4 * w, 8 * w)
        self.u3 = _nn.ConvTranspose3d(8 * w, 4 * w, (1, 2, 2), (1, 2, 2))
        self.u2 = _nn.ConvTranspose3d(4 * w, 2 * w, (1, 2, 2), (1, 2, 2))
        self.u1 = _nn.ConvTranspose3d(2 * w, w, (1, 2, 2), (1, 2, 2))
        self.d3, self.d2, self.d1 = blk(8 * w, 4 * w), blk(4 * w, 2 * w), blk(2 * w, w)
        self.out = _nn.Conv3d(w, nout, 1)

    def forward(self, x):
        f1 = self.e1(x)
        f2 = self.e2(_F.max_pool3d(f1, (1, 2, 2)))
        f3 = self.e3(_F.max_pool3d(f2, (1, 2, 2)))
        f4 = self.e4(_F.max_pool3d(f3, (1, 2, 2)))
        u = self.d3(torch.cat([self.u3(f4), f3], 1))
        u = self.d2(torch.cat([self.u2(u), f2], 1))
        u = self.d1(torch.cat([self.u1(u), f1], 1))
        return self.out(u)


@_workload("connectomics segmentation of electron-microscopy volumes written by hand (random init): synthetic anisotropic volumes of Voronoi cells (labels by chunked cdist to 150-400 seeds, drawn) with membranes by 3D max-pooling, texture and noise; a 3D affinity UNet (width 16, four levels pooling in-plane only, GroupNorm) trained for 700 steps on batches of 1-2 patches of 16-24 x 96-160^2 voxels (drawn) against 8 short- and long-range affinities with class-balanced BCE; bf16 autocast, Adam; every 175 steps a fresh volume of 32 x 288^2 segmented: sliding-window inference over overlapping 16 x 128^2 tiles with Hann blending, then agglomeration by 40 iterations of label propagation (max over the six neighbours where the affinity exceeds 0.5), segment sizes by index_add and the adapted Rand error of the short-range affinities read back")
def em_affinity_unet_train(rng):
    dev = "cuda"
    nout = len(_OFFSETS)
    model = _AffUnet(_smoke(16, 4), nout).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    pool = []
    for _ in range(_smoke(6, 1)):  # a pool of training volumes, refreshed as training goes
        pool.append(_em_volume(_smoke(40, 6), _smoke(320, 24), _smoke(320, 24), rng.randint(150, 400)))

    def crop(vol, dz, hw):
        img, lab = vol
        d, h, w = img.shape
        z0, y0, x0 = rng.randrange(d - dz + 1), rng.randrange(h - hw + 1), rng.randrange(w - hw + 1)
        return img[z0:z0 + dz, y0:y0 + hw, x0:x0 + hw], lab[z0:z0 + dz, y0:y0 + hw, x0:x0 + hw]

    def segment():
        d, hw, tz, txy = _smoke(32, 6), _smoke(288, 24), _smoke(16, 4), _smoke(128, 16)
        img, lab = _em_volume(d, hw, hw, rng.randint(150, 400))
        acc = torch.zeros(nout, d, hw, hw, device=dev)
        norm = torch.zeros(1, d, hw, hw, device=dev)
        wz, wxy = _hann(tz + 2, periodic=False)[1:-1], _hann(txy + 2, periodic=False)[1:-1]
        blend = wz[:, None, None] * wxy[None, :, None] * wxy[None, None, :]
        zs = sorted(set(list(range(0, d - tz + 1, tz // 2)) + [d - tz]))
        xs = sorted(set(list(range(0, hw - txy + 1, txy // 2)) + [hw - txy]))
        model.eval()
        with torch.no_grad():
            for z0 in zs:
                for y0 in xs:
                    for x0 in xs:
                        tile = img[None, None, z0:z0 + tz, y0:y0 + txy, x0:x0 + txy]
                        with torch.autocast("cuda", dtype=torch.bfloat16):
                            p = torch.sigmoid(model(tile).float())[0]
                        acc[:, z0:z0 + tz, y0:y0 + txy, x0:x0 + txy] += p * blend
                        norm[:, z0:z0 + tz, y0:y0 + txy, x0:x0 + txy] += blend
            aff = acc / norm.clamp_min(1e-6)
            del acc, norm
            ids = torch.arange(d * hw * hw, device=dev, dtype=torch.float32).view(d, hw, hw)
            seg = ids * (aff[:3].min(0).values > 0.5).float()  # boundary voxels start at 0
            link = (aff[:3] > 0.5).float()
            for _ in range(_smoke(40, 3)):
                best = seg
                for ax in range(3):  # pull the largest id across each linked edge, both directions
                    fwd = torch.roll(seg, 1, ax) * link[ax]
                    bwd = torch.roll(seg * link[ax], -1, ax)
                    best = torch.maximum(best, torch.maximum(fwd, bwd))
                seg = best
            sizes = torch.zeros(d * hw * hw, device=dev).index_add_(0, seg.long().view(-1),
                                                                 torch.ones(d * hw * hw, device=dev))
            target, valid = _affinities(lab)
            pred = (aff > 0.5).float()
            tp = (pred * target * valid).sum()
            prec, rec = tp / ((pred * valid).sum() + 1), tp / ((target * valid).sum() + 1)
            torch.stack([1 - 2 * prec * rec / (prec + rec + 1e-6), (sizes > 0).float().sum()]).tolist()
        model.train()

    for step in range(_smoke(700, 3)):
        if step % 65 == 64:
            pool[rng.randrange(len(pool))] = _em_volume(_smoke(40, 6), _smoke(320, 24), _smoke(320, 24),
                                                        rng.randint(150, 400))
        dz, hw = rng.choice(_smoke([16, 20, 24], [4])), rng.choice(_smoke([96, 128, 160], [16]))
        imgs, targets, valids = [], [], []
        for _ in range(rng.randint(1, 2)):
            img, lab = crop(rng.choice(pool), dz, hw)
            if rng.random() < 0.5:
                img, lab = img.flip(-1), lab.flip(-1)
            a, v = _affinities(lab)
            imgs.append(img)
            targets.append(a)
            valids.append(v)
        x = torch.stack(imgs)[:, None]
        tgt, val = torch.stack(targets), torch.stack(valids)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logit = model(x)
        pos = (tgt * val).sum((0, 2, 3, 4), keepdim=True)
        neg = ((1 - tgt) * val).sum((0, 2, 3, 4), keepdim=True)
        wgt = val * (tgt * neg / (pos + neg + 1) + (1 - tgt) * pos / (pos + neg + 1))
        loss = (_F.binary_cross_entropy_with_logits(logit.float(), tgt, reduction="none") * wgt).sum() / (
            wgt.sum() + 1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del x, tgt, val, logit, wgt, imgs, targets, valids
        if (step + 1) % _smoke(175, 3) == 0:
            segment()
            float(loss)


# ---------------------------------------------------------------- DeepLabCut-style pose estimation service


class _Bottleneck(_nn.Module):
    def __init__(self, cin, mid, cout, stride, dilation=1):
        super().__init__()
        self.c1, self.b1 = _nn.Conv2d(cin, mid, 1, bias=False), _nn.BatchNorm2d(mid)
        self.c2 = _nn.Conv2d(mid, mid, 3, stride, padding=dilation, dilation=dilation, bias=False)
        self.b2 = _nn.BatchNorm2d(mid)
        self.c3, self.b3 = _nn.Conv2d(mid, cout, 1, bias=False), _nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = _nn.Sequential(_nn.Conv2d(cin, cout, 1, stride, bias=False), _nn.BatchNorm2d(cout))

    def forward(self, x):
        y = _F.relu(self.b1(self.c1(x)))
        y = _F.relu(self.b2(self.c2(y)))
        y = self.b3(self.c3(y))
        return _F.relu(y + (x if self.down is None else self.down(x)))


class _PoseNet(_nn.Module):
    """ResNet-50 at output stride 16 (the last stage dilated), transposed-conv heads for score maps and locref."""

    def __init__(self, w, nkp, blocks):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, w, 7, 2, 3, bias=False), _nn.BatchNorm2d(w), _nn.ReLU(),
                                   _nn.MaxPool2d(3, 2, 1))
        layers, cin = [], w
        for i, n in enumerate(blocks):
            mid, cout = w * 2 ** i, w * 4 * 2 ** i
            stride = 1 if i in (0, 3) else 2
            for j in range(n):
                layers.append(_Bottleneck(cin, mid, cout, stride if j == 0 else 1, 2 if i == 3 else 1))
                cin = cout
        self.body = _nn.Sequential(*layers)
        self.score = _nn.ConvTranspose2d(cin, nkp, 4, 2, 1)
        self.locref = _nn.ConvTranspose2d(cin, 2 * nkp, 4, 2, 1)

    def forward(self, x):
        h = self.body(self.stem(x))
        return self.score(h), self.locref(h)


@_workload("DeepLabCut-style pose-estimation service for animal-behaviour video written by hand (random init): 6 videos (cameras) of 368x480 to 540x720 frames (drawn per video), each request a batch of 4-16 consecutive frames (drawn) of one video uploaded as uint8 from reused pinned host buffers on a side stream one request ahead (waited on by event, record_stream'ed), normalised on the device; a ResNet-50 backbone (bottlenecks 3-4-6-3, last stage dilated, output stride 16) and transposed-convolution heads for 16 keypoints' score maps and location refinement at stride 8, bf16 autocast without grad; peaks by argmax over each map, locref gathered, coordinates and confidences, a per-video exponential temporal smoother kept on the device; 700 requests, each request's keypoints read back")
def dlc_pose_behavior_serve(rng):
    dev = "cuda"
    nkp, stride = 16, 8
    net = _PoseNet(_smoke(64, 4), nkp, _smoke([3, 4, 6, 3], [1, 1, 1, 1])).cuda().eval()
    sizes = _smoke([(368, 480), (432, 576), (480, 640), (540, 720)], [(32, 48), (48, 64)])
    videos = [rng.choice(sizes) for _ in range(6)]
    bmax = _smoke(16, 2)
    hmax = max(h * w for h, w in videos)
    host = [torch.randint(0, 256, (bmax * hmax * 3,), dtype=torch.uint8).pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    done = [None, None]
    mean = torch.tensor([0.485, 0.456, 0.406], device=dev).view(1, 3, 1, 1) * 255
    std = torch.tensor([0.229, 0.224, 0.225], device=dev).view(1, 3, 1, 1) * 255
    smooth = {}

    def fetch(i):
        v = rng.randrange(len(videos))
        h, w = videos[v]
        b = rng.randint(_smoke(4, 1), bmax)
        s = i % 2
        if done[s] is not None:
            done[s].synchronize()
        with torch.cuda.stream(side):
            x = host[s][:b * h * w * 3].view(b, h, w, 3).to("cuda", non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        done[s] = ev
        return x, ev, v

    nreq = _smoke(700, 3)
    nxt = fetch(0)
    for req in range(nreq):
        x, ev, v = nxt
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        x.record_stream(cur)
        if req + 1 < nreq:
            nxt = fetch(req + 1)
        with torch.no_grad():
            img = (x.permute(0, 3, 1, 2).float() - mean) / std
            with torch.autocast("cuda", dtype=torch.bfloat16):
                score, loc = net(img)
            prob = torch.sigmoid(score.float())
            b, _, gh, gw = prob.shape
            conf, idx = prob.view(b, nkp, -1).max(-1)
            gy, gx = (idx // gw).float(), (idx % gw).float()
            loc = loc.float().view(b, nkp, 2, -1)
            off = loc.gather(3, idx[:, :, None, None].expand(-1, -1, 2, 1))[..., 0] * 7.2801  # locref std
            xy = torch.stack([gx * stride + stride / 2 + off[:, :, 0], gy * stride + stride / 2 + off[:, :, 1]], -1)
            prev = smooth.get(v)
            out = []
            for i in range(b):  # the temporal smoother runs frame by frame, weighted by confidence
                cur_xy = xy[i]
                if prev is not None:
                    a = (0.3 + 0.6 * conf[i])[:, None]
                    cur_xy = a * cur_xy + (1 - a) * prev
                out.append(cur_xy)
                prev = cur_xy
            smooth[v] = prev
            torch.cat([torch.stack(out), conf[..., None]], -1).cpu()
        del x, img, score, loc, prob, out


# ---------------------------------------------------------------- conductance-based Hodgkin-Huxley network


def _rates(v):
    """Hodgkin-Huxley (Traub-Miles) rate functions at membrane potential v (mV)."""
    vt = v + 63.0
    am = 0.32 * (13.0 - vt) / (torch.exp((13.0 - vt) / 4.0) - 1.0 + 1e-6)
    bm = 0.28 * (vt - 40.0) / (torch.exp((vt - 40.0) / 5.0) - 1.0 + 1e-6)
    ah = 0.128 * torch.exp((17.0 - vt) / 18.0)
    bh = 4.0 / (1.0 + torch.exp((40.0 - vt) / 5.0))
    an = 0.032 * (15.0 - vt) / (torch.exp((15.0 - vt) / 5.0) - 1.0 + 1e-6)
    bn = 0.5 * torch.exp((10.0 - vt) / 40.0)
    return am, bm, ah, bh, an, bn


@_workload("conductance-based Hodgkin-Huxley network simulation written in torch: 3 networks of 2,000-10,000 neurons (drawn; 80% excitatory, 20% inhibitory) with random connectivity of probability 2-5% (drawn) as dense weight matrices, simulated one after another for 800-1,200 steps of 0.1 ms (drawn): Traub-Miles rate functions, exponential-Euler gating of m, h, n, conductance synapses (excitatory and inhibitory conductances decaying exponentially, incremented by matmul of the spike vector with the weights), Poisson external drive; spike rasters kept per window of 100 steps; then firing rates, the population-rate spectrum by rfft, spike-count correlations of 500 sampled neurons by matmul, and the CV of the population rate read back; fp32")
def hh_conductance_network_sim(rng):
    dev = "cuda"
    dt = 0.1
    for net in range(_smoke(3, 1)):
        n = rng.randint(_smoke(2000, 20), _smoke(10000, 40))
        ne = int(n * 0.8)
        p = rng.uniform(0.02, 0.05)
        with torch.no_grad():
            conn = (torch.rand(n, n, device=dev) < p).float()
            wmat = conn * torch.rand(n, n, device=dev) * (6.0 / (p * n))
            del conn
            we, wi = wmat[:ne], wmat[ne:] * 4.0  # presynaptic rows
            del wmat
            v = -65.0 + 5.0 * torch.randn(n, device=dev)
            am, bm, ah, bh, an, bn = _rates(v)
            m, h, k = am / (am + bm), ah / (ah + bh), an / (an + bn)
            ge, gi = torch.zeros(n, device=dev), torch.zeros(n, device=dev)
            rate_ext = rng.uniform(2.0, 6.0) * dt / 1000.0 * 200  # 200 inputs at a few Hz
            raster, window = [], []
            for step in range(rng.randint(_smoke(800, 20), _smoke(1200, 30))):
                am, bm, ah, bh, an, bn = _rates(v)
                for gate, a, b_ in ((0, am, bm), (1, ah, bh), (2, an, bn)):
                    tau = 1.0 / (a + b_)
                    inf = a * tau
                    g = (m, h, k)[gate]
                    g = inf + (g - inf) * torch.exp(-dt / tau)
                    if gate == 0:
                        m = g
                    elif gate == 1:
                        h = g
                    else:
                        k = g
                ina = 100.0 * m.pow(3) * h * (v - 50.0)
                ik = 30.0 * k.pow(4) * (v + 90.0)
                il = 0.1 * (v + 65.0)
                isyn = ge * v + gi * (v + 80.0)
                vnew = v + dt * (-(ina + ik + il + isyn))
                spk = ((v < 0.0) & (vnew >= 0.0)).float()
                v = vnew.clamp(-100.0, 60.0)
                drive = torch.poisson(torch.full((n,), rate_ext, device=dev))
                ge = ge * math.exp(-dt / 5.0) + spk[:ne] @ we + 0.05 * drive
                gi = gi * math.exp(-dt / 10.0) + spk[ne:] @ wi
                window.append(spk)
                if len(window) == 100:
                    raster.append(torch.stack(window).to(torch.bool))
                    window = []
            if window:
                raster.append(torch.stack(window).to(torch.bool))
            r = torch.cat(raster).float()  # (steps, n)
            pop = r.mean(1)
            spec = torch.fft.rfft(pop - pop.mean()).abs().pow(2)
            sample = torch.randperm(n, device=dev)[:_smoke(500, 10)]
            counts = r[:, sample].view(-1, 20, sample.shape[0]).sum(1) if r.shape[0] % 20 == 0 else \
                r[:r.shape[0] // 20 * 20, sample].view(-1, 20, sample.shape[0]).sum(1)
            cz = (counts - counts.mean(0)) / (counts.std(0) + 1e-6)
            corr = cz.T @ cz / counts.shape[0]
            torch.stack([r.sum() / (n * r.shape[0] * dt / 1000.0), spec.argmax().float(),
                         corr.mean(), pop.std() / (pop.mean() + 1e-6)]).tolist()
            del r, we, wi, raster, corr

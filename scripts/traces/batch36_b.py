"""The thirty-sixth batch's second half (batch36.py holds the first; written in two to keep files small): remote
sensing, medical imaging, large-scale ranking and particle physics. Multispectral satellite-image segmentation
trained on tiles of varying size with whole-scene inference by overlapping tiles (scene strips uploaded on a side
stream), an unrolled variational network for accelerated multi-coil MRI reconstruction at varying matrix sizes,
coil counts and accelerations, a listwise transformer reranker trained with a LambdaLoss over candidate lists of
varying length, and a graph-network particle simulator (Learning to Simulate) trained on scenes of varying
particle counts with rollouts. Same conventions and plumbing as batch36.py; record.py registers this module right
after it, so that the batch's workloads keep their order. Three are single-stream; sat_tile_seg uploads every
scene in row strips from one reused pinned host buffer on a side stream (the compute stream waits on each
strip's event, the strip record_stream'ed). sat_tile_seg, listwise_rerank_train and gns_particle_sim run under
bf16 autocast; varnet_mri_recon runs in fp32.

Real sizes checked as batch36.py's header says: every workload run whole at its real sizes on the meta device,
its op outputs counted there for the estimates in record_new36.sh's header, and the CPU smoke run on all four.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- satellite tile segmentation


def _cbr(cin, cout):
    nn = torch.nn
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(True),
                         nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(True))


class _SatUnet(torch.nn.Module):
    """A UNet for multispectral tiles: 4 encoder levels (64-128-256-512), a 1024 bottleneck, bilinear
    upsampling with skip concatenation, a per-pixel classifier."""

    def __init__(self, cin, ncls, w=64):
        super().__init__()
        nn = torch.nn
        ws = [w, 2 * w, 4 * w, 8 * w]
        self.enc = nn.ModuleList()
        c = cin
        for x in ws:
            self.enc.append(_cbr(c, x))
            c = x
        self.mid = _cbr(c, 2 * c)
        self.dec = nn.ModuleList()
        c = 2 * c
        for x in reversed(ws):
            self.dec.append(_cbr(c + x, x))
            c = x
        self.head = nn.Conv2d(c, ncls, 1)

    def forward(self, x):
        f = torch.nn.functional
        skips = []
        for e in self.enc:
            x = e(x)
            skips.append(x)
            x = f.max_pool2d(x, 2)
        x = self.mid(x)
        for d in self.dec:
            s = skips.pop()
            x = d(torch.cat([f.interpolate(x, size=s.shape[-2:], mode="bilinear"), s], 1))
        return self.head(x)


@_workload("multispectral satellite-image segmentation (land cover, Sentinel-2-style 12 bands, 10 classes) with a UNet written by hand (4 levels of 64-512 channels, BatchNorm, bilinear upsampling): training on tiles of 128-512 px (drawn per step, multiples of 32) with the batch sized to a pixel budget of 0.5-1M pixels (2-24 tiles), int16 reflectances normalized per band on the device, random flips and 90-degree rotations, band dropout, cross-entropy with a cloud mask as per-pixel weights plus a Dice term, AdamW with a one-cycle schedule; every 60 steps a whole-scene inference of a 1024-2560 px scene (each side drawn, multiple of 64) by overlapping 512-px tiles (stride 448, edge tiles shifted inward): the scene, kept on the host in HWC int16 in one reused pinned buffer, is uploaded one 512-row strip at a time on a side stream while the previous strip's tiles run (the compute stream waits on the strip's event, the strip record_stream'ed), tile logits blended into a scene accumulator with a Gaussian window and the class map read back as uint8; bf16 autocast")
def sat_tile_seg(rng):
    nn, f = torch.nn, torch.nn.functional
    bands, ncls = 12, 10
    nsteps = _smoke(880, 2)
    model = _SatUnet(bands, ncls, _smoke(64, 4)).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4, foreach=True)
    tile, stride = _smoke(512, 32), _smoke(448, 24)
    smax = _smoke(2560, 96)
    host = torch.randint(0, 10000, (smax, smax, bands), dtype=torch.int16).pin_memory()
    flat = host.view(-1)  # a scene of width W lies row-major at the buffer's start, so each strip is contiguous
    mean = torch.full((bands,), 1500.0, device="cuda")
    std = torch.full((bands,), 800.0, device="cuda")
    side = torch.cuda.Stream()
    yy = torch.exp(-((torch.arange(tile, device="cuda") - tile / 2) / (tile / 4)).pow(2))
    gauss = (yy[:, None] * yy[None]) + 1e-3

    def norm(raw):  # (B, H, W, C) int16 -> (B, C, H, W) float, channels-last memory
        return ((raw.float() - mean) / std).permute(0, 3, 1, 2)

    def starts(n):
        s = list(range(0, max(n - tile, 0) + 1, stride))
        if s[-1] + tile < n:
            s.append(n - tile)
        return s

    def scene(H, W):
        ys, xs = starts(H), starts(W)
        host[:1, :W].random_(0, 10000)  # the scene's first row read in (the rest of the buffer reused)
        acc = torch.zeros(ncls, H, W, device="cuda")
        wsum = torch.zeros(1, H, W, device="cuda")

        def stage(y0):
            with torch.cuda.stream(side):
                strip = flat[y0 * W * bands:(y0 + tile) * W * bands].to("cuda", non_blocking=True)
                ev = side.record_event()
            return strip, ev

        nxt = stage(ys[0])
        for i, y0 in enumerate(ys):
            strip, ev = nxt
            torch.cuda.current_stream().wait_event(ev)
            strip.record_stream(torch.cuda.current_stream())
            if i + 1 < len(ys):
                nxt = stage(ys[i + 1])
            strip = strip.view(tile, W, bands)
            tiles = torch.stack([strip[:, x0:x0 + tile] for x0 in xs])
            logits = model(norm(tiles).contiguous(memory_format=torch.channels_last)).float().softmax(1)
            for j, x0 in enumerate(xs):
                acc[:, y0:y0 + tile, x0:x0 + tile] += logits[j] * gauss
                wsum[:, y0:y0 + tile, x0:x0 + tile] += gauss
            del strip, tiles, logits
        (acc / wsum).argmax(0).to(torch.uint8).cpu()

    for step in range(nsteps):
        lr = 1e-3 * min(1.0, (step + 1) / 15) * 0.5 * (1 + math.cos(math.pi * step / nsteps))
        for g in opt.param_groups:
            g["lr"] = lr
        r = rng.randrange(128, 513, 32) if _smoke(1, 0) else 32
        b = max(2, min(24, (_smoke(1 << 19, 4096) + rng.randint(0, 1 << 19)) // (r * r)))
        raw = torch.randint(0, 10000, (b, r, r, bands), dtype=torch.int16, device="cuda")
        x = norm(raw)
        if rng.random() < 0.5:
            x = x.flip(-1)
        k = rng.randrange(4)
        if k:
            x = torch.rot90(x, k, (2, 3))
        keep = (torch.rand(b, bands, 1, 1, device="cuda") > 0.1).float()
        x = (x * keep).contiguous(memory_format=torch.channels_last)
        y = torch.randint(0, ncls, (b, r, r), device="cuda")
        w = (torch.rand(b, r, r, device="cuda") > 0.15).float()  # cloud-free pixels
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x)
        logits = logits.float()
        ce = (f.cross_entropy(logits, y, reduction="none") * w).sum() / w.sum().clamp(min=1)
        p = logits.softmax(1)
        oh = f.one_hot(y, ncls).permute(0, 3, 1, 2).float()
        dice = 1 - (2 * (p * oh).sum((0, 2, 3)) + 1) / (p.sum((0, 2, 3)) + oh.sum((0, 2, 3)) + 1)
        loss = ce + dice.mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del raw, x, keep, y, w, logits, ce, p, oh, dice, loss
        if (step + 1) % _smoke(60, 2) == 0:
            model.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                H = rng.randrange(_smoke(1024, 48), smax + 1, _smoke(64, 8))
                W = rng.randrange(_smoke(1024, 48), smax + 1, _smoke(64, 8))
                scene(H, W)
            model.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- VarNet MRI reconstruction


class _NormUnet(torch.nn.Module):
    """fastMRI's NormUnet: a 2-channel (real, imaginary) UNet with instance norm and LeakyReLU, 4 pooling
    levels, inputs normalized by their mean and std and padded to a multiple of 16."""

    def __init__(self, chans, pools, cin=2, cout=2):
        super().__init__()
        nn = torch.nn

        def block(a, b):
            return nn.Sequential(nn.Conv2d(a, b, 3, padding=1, bias=False), nn.InstanceNorm2d(b), nn.LeakyReLU(0.2),
                                 nn.Conv2d(b, b, 3, padding=1, bias=False), nn.InstanceNorm2d(b), nn.LeakyReLU(0.2))

        self.down = nn.ModuleList([block(cin, chans)])
        ch = chans
        for _ in range(pools - 1):
            self.down.append(block(ch, 2 * ch))
            ch *= 2
        self.mid = block(ch, 2 * ch)
        self.up_t, self.up_c = nn.ModuleList(), nn.ModuleList()
        for _ in range(pools):
            self.up_t.append(nn.ConvTranspose2d(2 * ch, ch, 2, 2, bias=False))
            self.up_c.append(block(2 * ch, ch))
            ch //= 2
        self.out = nn.Conv2d(chans, cout, 1)

    def forward(self, x):  # (N, H, W, 2)
        f = torch.nn.functional
        x = x.permute(0, 3, 1, 2)
        mean = x.mean((2, 3), keepdim=True)
        std = x.std((2, 3), keepdim=True)
        x = (x - mean) / (std + 1e-6)
        h, w = x.shape[-2:]
        ph, pw = (-h) % 16, (-w) % 16
        x = f.pad(x, (pw // 2, pw - pw // 2, ph // 2, ph - ph // 2))
        skips = []
        for d in self.down:
            x = d(x)
            skips.append(x)
            x = f.avg_pool2d(x, 2)
        x = self.mid(x)
        for t, c in zip(self.up_t, self.up_c):
            x = c(torch.cat([t(x), skips.pop()], 1))
        x = self.out(x)[..., ph // 2:ph // 2 + h, pw // 2:pw // 2 + w]
        return (x * std + mean).permute(0, 2, 3, 1)


def _fft2(x):
    return torch.view_as_real(torch.fft.fftshift(torch.fft.fft2(torch.fft.ifftshift(
        torch.view_as_complex(x.contiguous()), dim=(-2, -1)), norm="ortho"), dim=(-2, -1)))


def _ifft2(x):
    return torch.view_as_real(torch.fft.fftshift(torch.fft.ifft2(torch.fft.ifftshift(
        torch.view_as_complex(x.contiguous()), dim=(-2, -1)), norm="ortho"), dim=(-2, -1)))


def _cmul(a, b):
    return torch.stack([a[..., 0] * b[..., 0] - a[..., 1] * b[..., 1], a[..., 0] * b[..., 1] + a[..., 1] * b[..., 0]], -1)


def _cconj_mul(a, b):  # conj(a) * b
    return torch.stack([a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1], a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]], -1)


@_workload("accelerated multi-coil MRI reconstruction training, E2E-VarNet (Sriram et al. 2020) as fastMRI trains it, written by hand: a sensitivity-map network (a NormUnet of 8 channels on each coil's low-frequency ACS region, maps normalized by their root-sum-of-squares) and 8 unrolled cascades, each a NormUnet (18 channels, 4 pools) on the coil-combined image with soft data consistency in k-space (orthonormal centered 2-D FFTs over complex tensors); every step one slice of a protocol drawn from several (4-16 coils, matrices of 256-384 x 256-400, 4x or 8x equispaced Cartesian undersampling with 8% or 4% centre lines, the sampling mask built on the host and uploaded), SSIM loss (7x7 uniform windows by avg_pool) on the root-sum-of-squares image cropped to 320 x 320 or smaller, Adam with grad clipping; every 15 steps a validation volume of 4-10 slices (drawn) reconstructed without grad, its NMSE read back; fp32")
def varnet_mri_recon(rng):
    nn, f = torch.nn, torch.nn.functional
    ncasc = _smoke(8, 2)
    nsteps = _smoke(86, 2)
    sens_net = _NormUnet(_smoke(8, 2), _smoke(4, 2))
    cascades = nn.ModuleList(_NormUnet(_smoke(18, 2), _smoke(4, 2)) for _ in range(ncasc))
    model = nn.ModuleList([sens_net, cascades]).cuda()
    dc_w = nn.Parameter(torch.ones(ncasc, device="cuda"))
    opt = torch.optim.Adam(list(model.parameters()) + [dc_w], lr=3e-4, foreach=True)
    protocols = [(16, 320, 368), (15, 384, 320), (8, 256, 256), (4, 320, 320), (12, 384, 400)]
    if not _smoke(1, 0):
        protocols = [(2, 32, 32), (3, 32, 48)]

    def make_mask(W, acc):
        center = int(round(W * (0.08 if acc == 4 else 0.04)))
        off = rng.randrange(acc)
        m = [1.0 if (i - off) % acc == 0 or abs(i - W // 2) < center // 2 + 1 else 0.0 for i in range(W)]
        return torch.tensor(m).cuda().view(1, 1, W, 1), center

    def recon(kspace, mask, center):
        # kspace (S, C, H, W, 2) masked
        S, C, H, W, _ = kspace.shape
        lo = (W - center) // 2
        acs = f.pad(kspace[:, :, :, lo:lo + center], (0, 0, lo, W - lo - center))
        im = _ifft2(acs).flatten(0, 1)
        sens = sens_net(im).view(S, C, H, W, 2)
        sens = sens / (sens.pow(2).sum((1, 4), keepdim=True).sqrt()[:, :1] + 1e-6)
        k = kspace
        for i, casc in enumerate(cascades):
            img = _cconj_mul(sens, _ifft2(k)).sum(1)  # coil combine (S, H, W, 2)
            reg = _fft2(_cmul(sens, casc(img)[:, None]))
            k = k - dc_w[i] * mask * (k - kspace) - reg
        return _ifft2(k).pow(2).sum((1, 4)).sqrt()  # RSS (S, H, W)

    def ssim_loss(x, y):
        x, y = x[:, None], y[:, None]
        rng_ = y.amax((1, 2, 3), keepdim=True)
        c1, c2 = (0.01 * rng_) ** 2, (0.03 * rng_) ** 2
        mx, my = f.avg_pool2d(x, 7, 1), f.avg_pool2d(y, 7, 1)
        sxx = f.avg_pool2d(x * x, 7, 1) - mx * mx
        syy = f.avg_pool2d(y * y, 7, 1) - my * my
        sxy = f.avg_pool2d(x * y, 7, 1) - mx * my
        s = ((2 * mx * my + c1) * (2 * sxy + c2)) / ((mx * mx + my * my + c1) * (sxx + syy + c2))
        return 1 - s.mean()

    def crop(x):
        H, W = x.shape[-2:]
        ch, cw = min(H, _smoke(320, 24)), min(W, _smoke(320, 24))
        return x[..., (H - ch) // 2:(H - ch) // 2 + ch, (W - cw) // 2:(W - cw) // 2 + cw]

    def draw(S):
        C, H, W = rng.choice(protocols)
        acc = rng.choice([4, 8])
        mask, center = make_mask(W, acc)
        full = torch.randn(S, C, H, W, 2, device="cuda")
        target = _ifft2(full).pow(2).sum((1, 4)).sqrt()
        return full * mask, mask, center, target

    for step in range(nsteps):
        k, mask, center, target = draw(1)
        out = recon(k, mask, center)
        loss = ssim_loss(crop(out), crop(target))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(model.parameters()) + [dc_w], 1.0)
        opt.step()
        del k, mask, target, out, loss
        if (step + 1) % _smoke(15, 2) == 0:
            with torch.no_grad():
                nslices = rng.randint(_smoke(4, 1), _smoke(10, 2))
                k, mask, center, target = draw(nslices)
                out = recon(k, mask, center)
                ((out - target).pow(2).sum() / target.pow(2).sum()).tolist()
                del k, mask, target, out
    torch.cuda.synchronize()


# ---------------------------------------------------------------- listwise reranking


@_workload("listwise re-ranking training for large-scale recommendation, PRM-style (Pei et al. 2019) written by hand: candidate lists of 10-200 items (drawn log-uniform per query) from a first-stage ranker, each item a 2M x 64 item-id embedding, 32 dense features and a personalized vector from a user tower (an EmbeddingBag mean over 20-300 history items drawn per user plus a 500k x 64 user-id table), the list padded to the batch's longest with a key-padding mask and encoded by a 4-layer transformer (width 256, 8 heads, initial-rank position embeddings) into per-item scores; a LambdaLoss (NDCG-weighted pairwise logistic over all (L x L) item pairs of each list, ranks from argsort, padding pairs zeroed by multiplicative masks) on graded relevance labels 0-4; query batches of 24-160 lists (drawn, more lists when they are short, under a 12k-item budget), AdamW; every 50 steps an evaluation of 8 batches without grad, NDCG@10 read back; bf16 autocast")
def listwise_rerank_train(rng):
    nn, f = torch.nn, torch.nn.functional
    d, dm, heads, nl = _smoke(64, 8), _smoke(256, 16), _smoke(8, 2), _smoke(4, 1)
    n_items, n_users, ndense = _smoke(2_000_000, 1000), _smoke(500_000, 500), 32
    nsteps = _smoke(550, 2)
    budget = _smoke(12000, 200)
    item_emb = nn.Embedding(n_items, d)
    hist_bag = nn.EmbeddingBag(n_items, d, mode="mean")
    user_emb = nn.Embedding(n_users, d)
    user_mlp = nn.Sequential(nn.Linear(2 * d, 128), nn.ReLU(), nn.Linear(128, d))
    proj = nn.Linear(2 * d + ndense + d, dm)
    pos = nn.Embedding(256, dm)
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(dm, heads, 4 * dm, 0.1, batch_first=True, norm_first=True),
                                nl, enable_nested_tensor=False)
    head = nn.Sequential(nn.Linear(dm, 128), nn.ReLU(), nn.Linear(128, 1))
    model = nn.ModuleList([item_emb, hist_bag, user_emb, user_mlp, proj, pos, enc, head]).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=1e-5, foreach=True)

    def draw():
        lens = []
        total = 0
        while len(lens) < _smoke(160, 4):
            n = _loguniform(rng, _smoke(10, 2), _smoke(200, 12))
            if lens and (len(lens) + 1) * max(max(lens), n) > budget:
                break
            lens.append(n)
            total += n
        return lens

    def forward(lens):
        B, L = len(lens), max(lens)
        hl = [rng.randint(_smoke(20, 2), _smoke(300, 10)) for _ in range(B)]
        hist = torch.randint(0, n_items, (sum(hl),), device="cuda")
        offs = torch.tensor([0] + hl[:-1], device="cuda").cumsum(0)
        u = torch.cat([hist_bag(hist, offs), user_emb(torch.randint(0, n_users, (B,), device="cuda"))], -1)
        pv = user_mlp(u)  # (B, d)
        ids = torch.randint(0, n_items, (B, L), device="cuda")
        dense = torch.randn(B, L, ndense, device="cuda")
        x = torch.cat([item_emb(ids), pv[:, None].expand(B, L, d), dense, item_emb(ids) * pv[:, None]], -1)
        x = proj(x) + pos(torch.arange(L, device="cuda"))
        valid = torch.arange(L, device="cuda")[None] < torch.tensor(lens, device="cuda")[:, None]
        h = enc(x, src_key_padding_mask=~valid)
        return head(h).squeeze(-1).float(), valid.float()

    def lambda_loss(s, y, valid):
        B, L = s.shape
        s = s * valid - 1e4 * (1 - valid)
        order = s.argsort(-1, descending=True)
        rank = torch.empty_like(order).scatter_(1, order, torch.arange(L, device="cuda").expand(B, L))
        gain = (2 ** y - 1) * valid
        disc = 1 / torch.log2(rank.float() + 2)
        ideal = (gain.sort(-1, descending=True).values / torch.log2(torch.arange(L, device="cuda").float() + 2)).sum(-1)
        dg = (gain[:, :, None] - gain[:, None, :]).abs()
        dd = (disc[:, :, None] - disc[:, None, :]).abs()
        w = dg * dd / ideal.clamp(min=1e-6)[:, None, None]
        pm = ((y[:, :, None] > y[:, None, :]).float() * valid[:, :, None] * valid[:, None, :])
        pair = f.softplus(-(s[:, :, None] - s[:, None, :]))
        return (w * pm * pair).sum() / pm.sum().clamp(min=1), disc, gain, ideal

    for step in range(nsteps):
        lens = draw()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            s, valid = forward(lens)
        y = torch.randint(0, 5, s.shape, device="cuda").float()
        loss = lambda_loss(s, y, valid)[0]
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del s, valid, y, loss
        if (step + 1) % _smoke(50, 2) == 0:
            model.eval()
            nd = []
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for _ in range(_smoke(8, 1)):
                    s, valid = forward(draw())
                    y = torch.randint(0, 5, s.shape, device="cuda").float()
                    _, disc, gain, ideal = lambda_loss(s, y, valid)
                    top = (disc >= 1 / math.log2(11.5)).float()
                    nd.append(((gain * disc * top).sum(-1) / ideal.clamp(min=1e-6)).mean())
                    del s, valid, y, disc, gain, ideal, top
            torch.stack(nd).tolist()
            model.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- particle simulation


def _gmlp(din, dout, width=128, ln=True):
    nn = torch.nn
    layers = [nn.Linear(din, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, dout)]
    if ln:
        layers.append(nn.LayerNorm(dout))
    return nn.Sequential(*layers)


@_workload("learned particle simulation, GNS / Learning to Simulate (Sanchez-Gonzalez et al. 2020) as its WaterDrop-style fluid recipe trains it, written by hand: an encode-process-decode graph network (node and edge MLPs of 2 hidden layers of 128 with LayerNorm, 10 message-passing steps with index_add_ sum aggregation and residuals, no parameter sharing) over fixed-degree neighbour graphs (the 16 nearest particles by cdist + topk within each scene, rebuilt every step, edge features of relative displacement and distance); node inputs are the last 5 normalized velocities, distances to the box walls and a particle-type embedding; every step 1-3 scenes (drawn) of 800-5000 particles each (drawn log-uniform) batched as one graph, random-walk noise added to the input velocities, MSE on normalized accelerations, Adam with exponential lr decay; every 45 steps a rollout of one scene of 1500-4000 particles for 40 steps without grad (positions integrated semi-implicitly, the graph rebuilt each step), the final positions' error read back; bf16 autocast")
def gns_particle_sim(rng):
    nn, f = torch.nn, torch.nn.functional
    lat, nmp, knn, hist = _smoke(128, 16), _smoke(10, 2), _smoke(16, 4), 5
    nsteps = _smoke(270, 2)
    type_emb = nn.Embedding(9, 16)
    node_enc = _gmlp(hist * 2 + 4 + 16, lat, lat)
    edge_enc = _gmlp(3, lat, lat)
    edge_mlps = nn.ModuleList(_gmlp(3 * lat, lat, lat) for _ in range(nmp))
    node_mlps = nn.ModuleList(_gmlp(2 * lat, lat, lat) for _ in range(nmp))
    dec = _gmlp(lat, 2, lat, ln=False)
    model = nn.ModuleList([type_emb, node_enc, edge_enc, edge_mlps, node_mlps, dec]).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, foreach=True)

    def graph(pos, sizes):
        snd, rcv = [], []
        off = 0
        for n in sizes:
            p = pos[off:off + n]
            nb = torch.cdist(p, p).topk(knn + 1, -1, largest=False).indices[:, 1:]  # (n, k), self dropped
            snd.append(nb.flatten() + off)
            rcv.append(torch.arange(n, device="cuda").repeat_interleave(knn) + off)
            off += n
        return torch.cat(snd), torch.cat(rcv)

    def step_fn(pos, vel_hist, types, sizes):
        s, r = graph(pos.float(), sizes)
        rel = (pos[s] - pos[r]) / 0.015
        e = edge_enc(torch.cat([rel, rel.norm(dim=-1, keepdim=True)], -1))
        walls = torch.cat([pos - 0.1, 0.9 - pos], -1).clamp(-1, 1)
        v = node_enc(torch.cat([vel_hist.flatten(1), walls, type_emb(types)], -1))
        for em, nm in zip(edge_mlps, node_mlps):
            e = e + em(torch.cat([e, v[s], v[r]], -1))
            agg = torch.zeros(v.shape[0], lat, device="cuda", dtype=e.dtype).index_add_(0, r, e)
            v = v + nm(torch.cat([v, agg.to(v.dtype)], -1))
        return dec(v)

    def scenes(k, lo, hi):
        sizes = [_loguniform(rng, lo, hi) for _ in range(k)]
        n = sum(sizes)
        pos = torch.rand(n, 2, device="cuda") * 0.8 + 0.1
        vel = torch.randn(n, hist, 2, device="cuda") * 0.01
        types = torch.randint(0, 9, (n,), device="cuda")
        return sizes, pos, vel, types

    for step in range(nsteps):
        for g in opt.param_groups:
            g["lr"] = 1e-6 + (1e-4 - 1e-6) * 0.1 ** (step / 5000)
        sizes, pos, vel, types = scenes(rng.randint(1, 3), _smoke(800, 20), _smoke(5000, 60))
        noisy = vel + torch.randn_like(vel).cumsum(1) * (3e-4 / math.sqrt(hist))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            acc = step_fn(pos, noisy, types, sizes)
        loss = f.mse_loss(acc.float(), torch.randn(acc.shape, device="cuda"))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del pos, vel, types, noisy, acc, loss
        if (step + 1) % _smoke(45, 2) == 0:
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                sizes, pos, vel, types = scenes(1, _smoke(1500, 20), _smoke(4000, 40))
                start = pos.clone()
                for _ in range(_smoke(40, 3)):
                    a = step_fn(pos, vel, types, sizes).float() * 1e-4
                    v_new = vel[:, -1] + a
                    pos = (pos + v_new).clamp(0.0, 1.0)
                    vel = torch.cat([vel[:, 1:], v_new[:, None]], 1)
                (pos - start).pow(2).mean().tolist()
                del sizes, pos, vel, types, start
    torch.cuda.synchronize()

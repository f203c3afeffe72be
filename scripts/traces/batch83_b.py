"""The eighty-third batch of held-out workloads for record.py, second half (the first is batch83.py): fashion, design
and creative tools, written in torch alone. A garment drape simulation surrogate (a MeshGraphNet-style learned
simulator rolled out over cloth meshes of drawn grid sizes hanging on a body of drawn spheres, message passing by
index_select and index_add over the mesh's structural and shear edges, semi-implicit integration with the pinned
vertices held, collisions resolved by pushing vertices out of the nearest sphere with torch.where), sketch-to-image
training (a pix2pix-style U-Net generator over an edge sketch with sparse colour hints and a PatchGAN discriminator,
hinge adversarial and L1 losses, alternating updates) at drawn resolutions, a palette recolouring service (uint8 images
and target palettes uploaded on a side stream, a k-means palette extraction of fixed iterations, a palette-conditioned
recolouring U-Net, harmony scores, the recoloured images read back) and session-based fashion recommendation training
(a hand-written two-layer GRU over click sessions of drawn lengths with item, category, colour and brand embeddings,
the hidden state held at padded steps by torch.where, a sampled softmax with popularity negatives and logQ correction,
recall and MRR over the whole catalogue at evaluation points). Same conventions as the earlier batches: nothing
downloaded, data drawn at random on the device (or, for the palette service, from two reused pinned host buffers),
`rng` the workload's random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)` so
that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: mesh sizes, rollout lengths, session
lengths and batch sizes are fixed on the host, padding handled by masks multiplied in or by torch.where /
masked_fill, no boolean-mask indexing; losses, metrics and results are read back only at logging points.
palette_recolor_serve uses a side stream (uploads waited on by event, the tensors record_stream'ed); the others are
single-stream. The networks run under bf16 autocast.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new83.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and for
which of them the CPU smoke run (RECORD_SMOKE=1) ran.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import SideUploads, mlp, randint

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- garment drape simulation surrogate


class _MeshGNN(_nn.Module):
    def __init__(self, node_in, edge_in, d, steps):
        super().__init__()
        self.node_enc = _nn.Sequential(mlp(node_in, d, d), _nn.LayerNorm(d))
        self.edge_enc = _nn.Sequential(mlp(edge_in, d, d), _nn.LayerNorm(d))
        self.edge_mlps = _nn.ModuleList(_nn.Sequential(mlp(3 * d, d, d), _nn.LayerNorm(d)) for _ in range(steps))
        self.node_mlps = _nn.ModuleList(_nn.Sequential(mlp(2 * d, d, d), _nn.LayerNorm(d)) for _ in range(steps))
        self.dec = mlp(d, d, 3)

    def forward(self, nodes, edges, snd, rcv):
        v, e = self.node_enc(nodes), self.edge_enc(edges)
        for em, nm in zip(self.edge_mlps, self.node_mlps):
            e = e + em(torch.cat([e, v.index_select(0, snd), v.index_select(0, rcv)], -1))
            agg = torch.zeros(v.shape[0], e.shape[1], device=v.device, dtype=e.dtype).index_add_(0, rcv, e)
            v = v + nm(torch.cat([v, agg], -1))
        return self.dec(v).float()


@_workload("garment drape simulation surrogate (random init, a MeshGraphNet-style learned cloth simulator): 15 garments in turn (skirts, shirts and capes as rectangular cloth meshes of 64-160 x 64-160 vertices, drawn per garment, up to 25,600 vertices and about 203,000 directed structural and shear edges), each hung from its pinned top row over a body of 20 spheres (centres and radii drawn per garment) and rolled out for 80-120 steps (drawn); node features of velocity, displacement from rest, the pinned flag and the nearest sphere's signed distance and normal, edge features of world and rest-space offsets and lengths; an encoder, 8 message-passing steps (edge MLPs over sender and receiver latents by index_select, index_add aggregation, node MLPs, width 128, layer norm, residuals) and an acceleration decoder under bf16 autocast, semi-implicit integration with gravity and damping, pinned vertices held and penetrating vertices pushed out along the nearest sphere's normal by torch.where; the kinetic energy and penetration count read back every 20 steps and each garment's final vertex positions copied back")
def garment_drape_rollout_sim(rng):
    d, mp, n_sph = _smoke(128, 16), _smoke(8, 2), _smoke(20, 4)
    model = _MeshGNN(11, 8, d, mp).cuda().eval()
    model.requires_grad_(False)
    dt, gravity = 0.01, torch.tensor([0.0, -9.81, 0.0], device="cuda")
    for _g in range(_smoke(15, 2)):
        nx, ny = rng.randint(_smoke(64, 5), _smoke(160, 8)), rng.randint(_smoke(64, 5), _smoke(160, 8))
        steps = rng.randint(_smoke(80, 3), _smoke(120, 5))
        width, length = rng.uniform(0.6, 1.2), rng.uniform(0.5, 1.1)
        with torch.no_grad():
            idx = torch.arange(nx * ny, device="cuda").view(ny, nx)
            pairs = [(idx[:, :-1], idx[:, 1:]), (idx[:-1, :], idx[1:, :]), (idx[:-1, :-1], idx[1:, 1:]),
                     (idx[:-1, 1:], idx[1:, :-1])]
            a = torch.cat([p[0].flatten() for p in pairs])
            c = torch.cat([p[1].flatten() for p in pairs])
            snd, rcv = torch.cat([a, c]), torch.cat([c, a])
            gy, gx = torch.meshgrid(torch.linspace(0, length, ny, device="cuda"),
                                    torch.linspace(-width / 2, width / 2, nx, device="cuda"), indexing="ij")
            rest = torch.stack([gx, 1.5 - gy, torch.zeros_like(gx) + 0.15], -1).view(-1, 3)
            pinned = (torch.arange(nx * ny, device="cuda") < nx).float()[:, None]
            centres = torch.rand(n_sph, 3, device="cuda") * torch.tensor([0.6, 1.4, 0.3], device="cuda") \
                + torch.tensor([-0.3, 0.0, -0.15], device="cuda")
            radii = torch.rand(n_sph, device="cuda") * 0.1 + 0.08
            rest_rel = rest[rcv] - rest[snd]
            rest_feat = torch.cat([rest_rel, rest_rel.norm(dim=-1, keepdim=True)], -1)
            pos, vel = rest.clone(), torch.zeros_like(rest)
            for step in range(steps):
                off = pos[:, None] - centres[None]
                dist = off.norm(dim=-1)
                sdf = dist - radii[None]
                near_d, near_i = sdf.min(-1)
                normal = off.gather(1, near_i[:, None, None].expand(-1, 1, 3))[:, 0] \
                    / dist.gather(1, near_i[:, None]).clamp(min=1e-6)
                nodes = torch.cat([vel, pos - rest, pinned, near_d[:, None], normal], -1)
                rel = pos[rcv] - pos[snd]
                edges = torch.cat([rel, rel.norm(dim=-1, keepdim=True), rest_feat], -1)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    acc = model(nodes, edges, snd, rcv)
                vel = (vel + dt * (acc * 0.1 + gravity)) * 0.995 * (1 - pinned)
                pos = pos + dt * vel
                pen = (near_d < 0)[:, None]
                pos = torch.where(pen, pos - near_d[:, None] * normal, pos)
                vel = torch.where(pen, vel - (vel * normal).sum(-1, keepdim=True).clamp(max=0) * normal, vel)
                if step % 20 == 0:
                    torch.stack([0.5 * vel.pow(2).sum(), pen.float().sum()]).tolist()
                del off, dist, sdf, near_d, near_i, normal, nodes, rel, edges, acc, pen
        pos.cpu()
        del idx, pairs, a, c, snd, rcv, gy, gx, rest, pinned, centres, radii, rest_rel, rest_feat, pos, vel


# ---------------------------------------------------------------- sketch-to-image (pix2pix)


class _Pix2PixG(_nn.Module):
    def __init__(self, cin, widths):
        super().__init__()
        self.down, c = _nn.ModuleList(), cin
        for i, w in enumerate(widths):
            self.down.append(_nn.Sequential(_nn.Conv2d(c, w, 4, 2, 1, bias=False),
                                            _nn.Identity() if i == 0 else _nn.BatchNorm2d(w), _nn.LeakyReLU(0.2)))
            c = w
        self.up = _nn.ModuleList()
        rev = list(reversed(widths[:-1]))
        for i, w in enumerate(rev):
            cin_u = c if i == 0 else 2 * c
            self.up.append(_nn.Sequential(_nn.ConvTranspose2d(cin_u, w, 4, 2, 1, bias=False), _nn.BatchNorm2d(w),
                                          _nn.Dropout(0.5 if i < 2 else 0.0), _nn.ReLU()))
            c = w
        self.out = _nn.ConvTranspose2d(2 * c, 3, 4, 2, 1)

    def forward(self, x):
        skips = []
        for dn in self.down:
            x = dn(x)
            skips.append(x)
        skips.pop()
        for i, u in enumerate(self.up):
            x = u(x if i == 0 else torch.cat([x, skips.pop()], 1))
        return torch.tanh(self.out(torch.cat([x, skips.pop()], 1)))


def _patch_d(cin, widths):
    layers, c = [], cin
    for i, w in enumerate(widths):
        layers += [_nn.Conv2d(c, w, 4, 2 if i < len(widths) - 1 else 1, 1), _nn.Identity() if i == 0
                   else _nn.InstanceNorm2d(w, affine=True), _nn.LeakyReLU(0.2)]
        c = w
    layers.append(_nn.Conv2d(c, 1, 4, 1, 1))
    return _nn.Sequential(*layers)


@_workload("sketch-to-image training (random init, pix2pix-style for fashion illustration): 4-16 sketches a step (drawn) at 128, 192 or 256 pixels (drawn per step), the input an edge sketch with sparse colour-hint strokes (a hint density drawn per step) and their mask (5 channels); a 6-level U-Net generator (64-128-256-512-512-512 channels, batch norm, dropout in the first two up levels, skip connections) and a 4-layer PatchGAN discriminator over the sketch and the image (instance norm); hinge losses, the generator's adversarial loss plus 100 x L1; Adam for each (2e-4, betas 0.5 and 0.999), alternating discriminator and generator updates, bf16 autocast, 630 steps; the losses read back every 20 steps and every 105 steps an evaluation of 4 x 8 sketches at 256 with the L1 and the hint-colour error at the hinted pixels read back")
def sketch_to_image_gan_train(rng):
    gw, dw = _smoke([64, 128, 256, 512, 512, 512], [4, 8, 8, 16, 16, 16]), _smoke([64, 128, 256, 512], [4, 8, 8, 16])
    sizes = _smoke([128, 192, 256], [64, 128])
    gen = _Pix2PixG(5, gw).cuda().to(memory_format=torch.channels_last)
    disc = _patch_d(8, dw).cuda().to(memory_format=torch.channels_last)
    opt_g = torch.optim.Adam(gen.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(disc.parameters(), lr=2e-4, betas=(0.5, 0.999))

    def batch(b, r, density):
        edges = (torch.rand(b, 1, r, r, device="cuda") > 0.9).float()
        real = torch.rand(b, 3, r, r, device="cuda") * 2 - 1
        hmask = _F.max_pool2d((torch.rand(b, 1, r, r, device="cuda") < density).float(), 5, 1, 2)
        x = torch.cat([edges, real * hmask, hmask], 1).contiguous(memory_format=torch.channels_last)
        return x, real.contiguous(memory_format=torch.channels_last), hmask

    steps = _smoke(630, 3)
    for step in range(steps):
        gen.train()
        disc.train()
        b, r = rng.randint(_smoke(4, 2), _smoke(16, 3)), rng.choice(sizes)
        x, real, hmask = batch(b, r, rng.uniform(0.0005, 0.005))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            fake = gen(x)
            d_real = disc(torch.cat([x, real], 1))
            d_fake = disc(torch.cat([x, fake.detach()], 1))
        loss_d = _F.relu(1 - d_real.float()).mean() + _F.relu(1 + d_fake.float()).mean()
        opt_d.zero_grad(set_to_none=True)
        loss_d.backward()
        opt_d.step()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            g_adv = -disc(torch.cat([x, fake], 1)).float().mean()
        loss_g = g_adv + 100 * _F.l1_loss(fake.float(), real)
        opt_g.zero_grad(set_to_none=True)
        loss_g.backward()
        opt_g.step()
        if step % 20 == 0:
            torch.stack([loss_d.detach(), loss_g.detach()]).tolist()
        del x, real, hmask, fake, d_real, d_fake, loss_d, g_adv, loss_g
        if (step + 1) % _smoke(105, 2) == 0:
            gen.eval()
            l1s, hints = [], []
            with torch.no_grad():
                for _ in range(_smoke(4, 1)):
                    x, real, hmask = batch(_smoke(8, 2), max(sizes), 0.002)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        fake = gen(x).float()
                    l1s.append((fake - real).abs().mean())
                    hints.append(((fake - real).abs() * hmask).sum() / (3 * hmask.sum()).clamp(min=1))
                    del x, real, hmask, fake
                metrics = torch.stack([torch.stack(l1s).mean(), torch.stack(hints).mean()])
            metrics.tolist()
            del l1s, hints, metrics


# ---------------------------------------------------------------- palette recolouring service


class _Recolor(_nn.Module):
    """A PaletteNet-like U-Net: image features, the source and target palettes injected at every decoder level."""

    def __init__(self, widths, k):
        super().__init__()
        self.down, c = _nn.ModuleList(), 3
        for w in widths:
            self.down.append(_nn.Sequential(_nn.Conv2d(c, w, 3, 2, 1), _nn.InstanceNorm2d(w, affine=True),
                                            _nn.ReLU(), _nn.Conv2d(w, w, 3, 1, 1), _nn.ReLU()))
            c = w
        self.pal = mlp(2 * k * 4, 128, 128, layers=2)
        self.inj, self.up = _nn.ModuleList(), _nn.ModuleList()
        for w in reversed(widths[:-1]):
            self.inj.append(_nn.Linear(128, c))
            self.up.append(_nn.Sequential(_nn.Conv2d(c + w, w, 3, 1, 1), _nn.InstanceNorm2d(w, affine=True),
                                          _nn.ReLU(), _nn.Conv2d(w, w, 3, 1, 1), _nn.ReLU()))
            c = w
        self.out = _nn.Conv2d(c, 3, 3, 1, 1)

    def forward(self, x, pal):
        size = x.shape[-2:]
        skips = []
        h = x
        for dn in self.down:
            h = dn(h)
            skips.append(h)
        skips.pop()
        p = self.pal(pal)
        for inj, up in zip(self.inj, self.up):
            s = skips.pop()
            h = h + inj(p)[:, :, None, None]
            h = up(torch.cat([_F.interpolate(h, size=s.shape[-2:], mode="bilinear", align_corners=False), s], 1))
        return x + torch.tanh(_F.interpolate(self.out(h), size=size, mode="bilinear", align_corners=False))


@_workload("colour palette extraction and recolouring service (random init, PaletteNet-like, for design assets): 870-940 requests (drawn) of 1-12 images (log-uniform) at 192, 256, 320 or 384 pixels (drawn per request) with a 6-colour target palette each; the uint8 pixels and target palettes uploaded on a side stream from two reused pinned host buffers one request ahead (two spans of one buffer, waited on by event, record_stream'ed); conversion to YCbCr, a 64 x 64 area-pooled copy, k-means of 6 colours by 10 fixed iterations (distances, argmin, one-hot sums by bmm, empty clusters kept by torch.where), the palette sorted by luminance with its weights; a recolouring U-Net (4 levels, 32-64-128-256 channels, instance norm) with the source and target palettes and their weights injected at every decoder level, a residual output clamped and quantised to uint8; hue-harmony scores of the target palette; each request's palettes, weights and harmony read back and the recoloured images copied back")
def palette_recolor_serve(rng):
    widths, k, iters = _smoke([32, 64, 128, 256], [4, 8, 8, 16]), 6, _smoke(10, 3)
    maxb, resolutions, work = _smoke(12, 3), _smoke([192, 256, 320, 384], [32, 48]), _smoke(64, 16)
    maxr = max(resolutions)
    model = _Recolor(widths, k).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    to_ycc = torch.tensor([[0.299, 0.587, 0.114], [-0.1687, -0.3313, 0.5], [0.5, -0.4187, -0.0813]], device="cuda")
    from_ycc = torch.linalg.inv(to_ycc)
    npix = maxb * 3 * maxr * maxr
    host = [torch.randint(0, 256, (npix + maxb * k * 3,), dtype=torch.uint8).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    nreq = rng.randint(_smoke(870, 3), _smoke(940, 4))
    plan = [(_loguniform(rng, 1, maxb), rng.choice(resolutions)) for _ in range(nreq)]

    def spans(i):
        b, r = plan[i]
        return b * 3 * r * r, slice(npix, npix + b * k * 3)

    nxt = up.upload(0, *spans(0))
    for i in range(nreq):
        b, r = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, *spans(i + 1))
        raw, tpal, ev = item
        SideUploads.ready(ev, raw, tpal)
        with torch.no_grad():
            rgb = raw.view(b, 3, r, r).float() / 255
            ycc = torch.einsum("ij,bjhw->bihw", to_ycc, rgb)
            pix = _F.adaptive_avg_pool2d(ycc, work).flatten(2).transpose(1, 2)
            cent = pix[:, ::(work * work) // k][:, :k].clone()
            for _ in range(iters):
                dist = pix.pow(2).sum(-1, keepdim=True) - 2 * pix @ cent.transpose(1, 2) + cent.pow(2).sum(-1)[:, None]
                onehot = _F.one_hot(dist.argmin(-1), k).float()
                counts = onehot.sum(1)
                sums = onehot.transpose(1, 2) @ pix
                cent = torch.where(counts[..., None] > 0, sums / counts[..., None].clamp(min=1), cent)
            weights = counts / counts.sum(-1, keepdim=True)
            order = cent[..., 0].argsort(-1)
            src = cent.gather(1, order[..., None].expand(-1, -1, 3))
            sw = weights.gather(1, order)
            tgt = torch.einsum("ij,bkj->bki", to_ycc, tpal.view(b, k, 3).float() / 255)
            tgt = tgt.gather(1, tgt[..., 0].argsort(-1)[..., None].expand(-1, -1, 3))
            pal = torch.cat([src, sw[..., None], tgt, sw[..., None]], -1).flatten(1)
            x = (rgb * 2 - 1).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                outp = model(x, pal).float()
            out = ((outp.clamp(-1, 1) + 1) * 127.5).round().to(torch.uint8)
            hue = torch.atan2(tgt[..., 2], tgt[..., 1])
            diff = (hue[:, :, None] - hue[:, None]).remainder(2 * math.pi)
            harmony = torch.stack([torch.cos(diff).mean((1, 2)), torch.cos(3 * diff).mean((1, 2)),
                                   tgt[..., 0].std(-1)], -1)
            src_rgb = torch.einsum("ij,bkj->bki", from_ycc, src).clamp(0, 1)
            summary = torch.cat([src_rgb.flatten(1), sw, harmony], 1)
        summary.tolist()
        out.cpu()
        del item, raw, tpal, rgb, ycc, pix, cent, dist, onehot, counts, sums, weights, order, src, sw, tgt, pal, x
        del outp, out, hue, diff, harmony, src_rgb, summary


# ---------------------------------------------------------------- session-based fashion recommendation


class _SessionGRU(_nn.Module):
    def __init__(self, n_items, n_cat, n_col, n_brand, d, hidden, layers):
        super().__init__()
        self.item = _nn.Embedding(n_items, d)
        self.cat, self.col, self.brand = _nn.Embedding(n_cat, 32), _nn.Embedding(n_col, 16), _nn.Embedding(n_brand, 32)
        self.mix = _nn.Linear(d + 80, d)
        self.w_ih = _nn.ModuleList(_nn.Linear(d if i == 0 else hidden, 3 * hidden) for i in range(layers))
        self.w_hh = _nn.ModuleList(_nn.Linear(hidden, 3 * hidden) for _ in range(layers))
        self.out = _nn.Linear(hidden, d)

    def item_vec(self, ids, attrs):
        a = attrs[ids]
        return self.mix(torch.cat([self.item(ids), self.cat(a[..., 0]), self.col(a[..., 1]), self.brand(a[..., 2])],
                                  -1))

    def forward(self, ids, attrs, mask):
        """ids (B, T), mask (B, T): the output vectors at every step (B, T, d)."""
        x = _F.dropout(self.item_vec(ids, attrs), 0.25, self.training)
        for wi, wh in zip(self.w_ih, self.w_hh):
            gx = wi(x)
            h = torch.zeros(x.shape[0], wh.in_features, device=x.device, dtype=gx.dtype)
            outs = []
            for t in range(x.shape[1]):
                xr, xz, xn = gx[:, t].chunk(3, -1)
                hr, hz, hn = wh(h).chunk(3, -1)
                r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
                new = (1 - z) * torch.tanh(xn + r * hn) + z * h
                h = torch.where(mask[:, t, None] > 0, new.to(h.dtype), h)
                outs.append(h)
            x = torch.stack(outs, 1)
        return self.out(x)


@_workload("session-based fashion recommendation training (random init, GRU4Rec-like over an apparel catalogue): 300,000 items with category (60), colour (24) and brand (3,000) attributes, click sessions drawn with Zipf popularity, 128-320 sessions a step (drawn, a multiple of 32) of 3-30 clicks (drawn per session, the step padded to its longest); item vectors of an id embedding (128) and attribute embeddings mixed by a linear layer, a hand-written 2-layer GRU (hidden 256) run step by step with the hidden state held at padded steps by torch.where, an output projection to 128; a sampled softmax of each real next click against 8,192 popularity-sampled negatives shared by the step, with logQ correction; Adam, clipping, bf16 autocast, 120 steps; the loss read back every 10 steps and every 40 steps an evaluation of 256 sessions scored against the whole catalogue with recall@20 and MRR@20 of their last clicks read back")
def fashion_session_gru_train(rng):
    n_items, d, hidden, layers = _smoke(300_000, 500), _smoke(128, 16), _smoke(256, 16), 2
    n_cat, n_col, n_brand, maxlen = 60, 24, _smoke(3000, 40), _smoke(30, 6)
    attrs = torch.stack([torch.randint(0, n_cat, (n_items,), device="cuda"),
                         torch.randint(0, n_col, (n_items,), device="cuda"),
                         torch.randint(0, n_brand, (n_items,), device="cuda")], -1)
    pop = (torch.arange(n_items, device="cuda").float() + 10).pow(-0.8)
    pop = pop / pop.sum()
    model = _SessionGRU(n_items, n_cat, n_col, n_brand, d, hidden, layers).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    n_neg = _smoke(8192, 64)

    def sessions(b, lens):
        t = max(lens)
        ids = torch.multinomial(pop, b * (t + 1), replacement=True).view(b, t + 1)
        mask = (torch.arange(t + 1, device="cuda")[None] < torch.tensor(lens, device="cuda")[:, None]).float()
        return ids, mask

    steps = _smoke(120, 3)
    for step in range(steps):
        model.train()
        b = randint(rng, _smoke(128, 4), _smoke(320, 8), _smoke(32, 4))
        lens = [rng.randint(3, maxlen) for _ in range(b)]
        ids, mask = sessions(b, lens)
        inp, tgt, m_in, m_t = ids[:, :-1], ids[:, 1:], mask[:, :-1], mask[:, 1:]
        neg = torch.multinomial(pop, n_neg, replacement=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            hs = model(inp, attrs, m_in)
            pos_v = model.item_vec(tgt, attrs)
            neg_v = model.item_vec(neg, attrs)
            pos_s = (hs * pos_v).sum(-1).float() - pop[tgt].log()
            neg_s = (hs @ neg_v.T).float() - pop[neg].log()
        neg_s = neg_s.masked_fill(neg[None, None] == tgt[..., None], -1e4)
        logits = torch.cat([pos_s[..., None], neg_s], -1)
        nll = -torch.log_softmax(logits, -1)[..., 0]
        loss = (nll * m_t).sum() / m_t.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        if step % 10 == 0:
            loss.item()
        del ids, mask, inp, tgt, m_in, m_t, neg, hs, pos_v, neg_v, pos_s, neg_s, logits, nll, loss
        if (step + 1) % _smoke(40, 2) == 0:
            model.eval()
            nb = _smoke(256, 8)
            lens = [rng.randint(3, maxlen) for _ in range(nb)]
            with torch.no_grad():
                ids, mask = sessions(nb, lens)
                last = torch.tensor([n - 2 for n in lens], device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    hs = model(ids[:, :-1], attrs, mask[:, :-1])
                    q = hs.gather(1, last[:, None, None].expand(-1, 1, hs.shape[-1]))[:, 0]
                    cat_v = model.item_vec(torch.arange(n_items, device="cuda"), attrs)
                    scores = (q @ cat_v.T).float()
                target = ids.gather(1, (last + 1)[:, None])
                top = scores.topk(20, -1)[1]
                hit = (top == target).float()
                rank = torch.arange(1, 21, device="cuda").float()
                metrics = torch.stack([hit.sum(1).mean(), (hit / rank).sum(1).mean()])
            metrics.tolist()
            del ids, mask, last, hs, q, cat_v, scores, target, top, hit, rank, metrics

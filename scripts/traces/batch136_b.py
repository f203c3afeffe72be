"""The hundred-and-thirty-sixth batch of held-out workloads for record.py, second half (see batch136.py): quarries and
stone and aggregate production, written in torch alone. Crushing and screening circuit training (a graph attention
network over the units of plant flowsheets of drawn sizes, conveyors as edges drawn on the device; each unit's
throughput, whether it is the bottleneck and its product's size distribution, each circuit's saleable output), a
muckpile fragmentation service on drone photos (a vision transformer over 16-pixel patches with row and column tables;
each patch's size fractions and whether it is rock, each photo's P20, P50 and P80 by interpolation of the cumulative
curve, its oversize share and the patches to break), a stockpile survey service on drone tiles (a DeepLabv3+-style
convnet with atrous spatial pyramid pooling over RGB and surface heights; each material's volume and tonnage above a
ground estimated from a min-filter, and the piles counted by max-pool peaks) and an aggregate texture sampler for
synthetic training data (a small U-Net denoiser with self-attention at its lowest level, DDIM with classifier-free
guidance over drawn step counts and resolutions).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the two services), `rng` the workload's random.Random for every shape, count and sampled choice,
sizes through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or
masked_fill; no boolean-mask indexing; results read back only at logging points or once per request.
muckpile_sizing_vit_serve and stockpile_volume_aspp_serve upload their inputs on a side stream (two reused pinned host
buffers, one request ahead, through workload_helpers.SideUploads.ahead); the other two are single-stream. The models
run under bf16 autocast. Every embedding and position table is sized for the largest index that can be drawn.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, PreNormBlock, SideUploads, TimeResBlock, _sincos, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- crushing and screening circuits (graph attention)


class _GatLayer(_nn.Module):
    """Multi-head attention over each unit's incoming edges: the edge's features added to the keys, the softmax
    over each unit's edges by exp and index_add_ (fp32 throughout the scatter), a residual output projection and a
    pre-norm MLP."""

    def __init__(self, d, e, heads):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.q, self.k, self.v, self.ek, self.o = (_nn.Linear(d, d), _nn.Linear(d, d), _nn.Linear(d, d),
                                                   _nn.Linear(e, d), _nn.Linear(d, d))
        self.n1, self.n2 = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.ff = mlp(d, 2 * d, d, act=_nn.GELU)

    def forward(self, h, src, dst, ef):
        n = h.shape[0]
        x = self.n1(h)
        q = self.q(x).index_select(0, dst).view(-1, self.h, self.dh).float()
        k = (self.k(x).index_select(0, src) + self.ek(ef)).view(-1, self.h, self.dh).float()
        v = self.v(x).index_select(0, src).view(-1, self.h, self.dh).float()
        logit = (q * k).sum(-1) / math.sqrt(self.dh)
        e = (logit - logit.detach().amax(0, keepdim=True)).exp()
        den = e.new_zeros(n, self.h).index_add_(0, dst, e)
        alpha = e / den.index_select(0, dst).clamp_min(1e-9)
        agg = v.new_zeros(n, self.h, self.dh).index_add_(0, dst, alpha[..., None] * v)
        h = h + self.o(agg.flatten(1).to(x.dtype))
        return h + self.ff(self.n2(h))


class _CircuitNet(_nn.Module):
    def __init__(self, fin, n_type, ein, d, heads, layers, n_bin):
        super().__init__()
        self.inp, self.kind = _nn.Linear(fin, d), _nn.Embedding(n_type, d)
        self.layers = _nn.ModuleList(_GatLayer(d, ein, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.unit_head = mlp(d, d, 2 + n_bin, act=_nn.GELU)
        self.circ_head = mlp(d, d, 1, act=_nn.GELU)

    def forward(self, x, utype, src, dst, ef, cid, n_circ, inv_size):
        h = self.inp(x) + self.kind(utype)
        for layer in self.layers:
            h = layer(h, src, dst, ef)
        h = self.norm(h)
        pooled = h.new_zeros(n_circ, h.shape[1]).index_add_(0, cid, h) * inv_size[:, None].to(h.dtype)
        return self.unit_head(h).float(), self.circ_head(pooled).float()[:, 0]


@_workload("crushing and screening circuit training (random init, a graph attention network over plant flowsheets): 8-32 circuits a step (drawn), each of 12-48 units (drawn per circuit) with 8 features (capacity, closed-side setting or aperture, power, liner wear, moisture, feed top size, utilisation, online) and a unit type (of 10: feeder, jaw, cone, VSI, double- and triple-deck screens, conveyor, surge bin, stockpile, wash screen; by a table); conveyors as edges: the chain from the feeder plus one for every 3 units with both ends drawn on the device within the circuit (recirculating loads and bypasses), made both ways with 4 features (length, speed, capacity, direction); the circuits of a step flattened into one graph; 4 attention layers of width 128, 4 heads (edge features added to the keys, the softmax over each unit's incoming edges by exp and index_add_ in fp32, residual projections and pre-norm MLPs); targets made on the device by pushing each circuit's feed along the forward edges for 5 hops (split by out-degree, capped by capacity, by index_add_): each unit's log throughput by a Huber loss, whether it runs at its cap by BCE, its product's 8 size fractions (centred on its setting) by soft cross-entropy, each circuit's log stockpiled output from its mean unit state by a Huber loss; AdamW, clipping, bf16 autocast, 420 steps; the losses read back every 10 steps and every 70 steps a no-grad pass over 32 circuits of 48 units with the bottleneck accuracy read back")
def crushing_circuit_gat_train(rng):
    fin, n_type, ein, d, heads, layers, n_bin = 8, 10, 4, _smoke(128, 16), _smoke(4, 2), _smoke(4, 1), 8
    u_lo, u_hi = _smoke(12, 4), _smoke(48, 8)
    model = _CircuitNet(fin, n_type, ein, d, heads, layers, n_bin).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    steps, every = _smoke(420, 3), _smoke(70, 2)
    bins = torch.arange(n_bin, device="cuda").float()

    def graph(sizes):
        nc, n = len(sizes), sum(sizes)
        offs = [0]
        for s in sizes[:-1]:
            offs.append(offs[-1] + s)
        chain_s = torch.tensor([o + i for o, s in zip(offs, sizes) for i in range(s - 1)], device="cuda")
        extra = [(o, s) for o, s in zip(offs, sizes) for _ in range(s // 3)]
        e_size = torch.tensor([s for _, s in extra], device="cuda").float()
        e_off = torch.tensor([o for o, _ in extra], device="cuda")
        a = (torch.rand(len(extra), device="cuda") * e_size).long().clamp_max(e_size.long() - 1) + e_off
        c = (torch.rand(len(extra), device="cuda") * e_size).long().clamp_max(e_size.long() - 1) + e_off
        fs, fd = torch.cat([chain_s, a]), torch.cat([chain_s + 1, c])
        nf = fs.shape[0]
        src, dst = torch.cat([fs, fd]), torch.cat([fd, fs])
        ef = torch.rand(2 * nf, ein, device="cuda")
        ef[:, 3] = torch.cat([torch.ones(nf, device="cuda"), torch.zeros(nf, device="cuda")])
        cid = torch.tensor([i for i, s in enumerate(sizes) for _ in range(s)], device="cuda")
        x = torch.rand(n, fin, device="cuda")
        utype = torch.randint(0, n_type, (n,), device="cuda")
        first = torch.tensor(offs, device="cuda")
        utype[first] = 0
        inv_size = 1.0 / torch.tensor(sizes, device="cuda").float()
        cap = 0.5 + 1.5 * x[:, 0]
        feed = torch.zeros(n, device="cuda").index_copy_(0, first, 1.0 + torch.rand(nc, device="cuda"))
        out_deg = torch.zeros(n, device="cuda").index_add_(0, fs, torch.ones(nf, device="cuda"))
        split = 1.0 / out_deg.clamp_min(1.0)
        flow = feed
        for _ in range(5):
            inflow = torch.zeros(n, device="cuda").index_add_(0, fd, (flow * split).index_select(0, fs))
            flow = torch.minimum(cap, feed + inflow)
        at_cap = ((feed + inflow) >= cap).float()
        grad = (-(bins[None] - 7.0 * x[:, 1:2]).pow(2) / 2.0).softmax(-1)
        piled = (utype == 8).float() * flow
        out = torch.zeros(nc, device="cuda").index_add_(0, cid, piled)
        return (x, utype, src, dst, ef, cid, nc, inv_size), (flow.log1p(), at_cap, grad, out.log1p())

    for step in range(steps):
        model.train()
        sizes = [rng.randint(u_lo, u_hi) for _ in range(rng.randint(_smoke(8, 2), _smoke(32, 3)))]
        with torch.no_grad():
            inputs, (l_flow, at_cap, grad, l_out) = graph(sizes)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            unit, circ = model(*inputs)
        l_f = _F.huber_loss(unit[:, 0], l_flow)
        l_c = _F.binary_cross_entropy_with_logits(unit[:, 1], at_cap)
        l_g = -(grad * unit[:, 2:].log_softmax(-1)).sum(-1).mean()
        l_o = _F.huber_loss(circ, l_out)
        loss = l_f + l_c + l_g + 0.5 * l_o
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_f.detach(), l_c.detach(), l_g.detach(), l_o.detach()]).tolist()
        del inputs, l_flow, at_cap, grad, l_out, unit, circ, l_f, l_c, l_g, l_o, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                inputs, (l_flow, at_cap, grad, l_out) = graph([u_hi] * _smoke(32, 2))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    unit, circ = model(*inputs)
                acc = ((unit[:, 1] > 0).float() == at_cap).float().mean()
            acc.item()
            del inputs, l_flow, at_cap, grad, l_out, unit, circ, acc


# ---------------------------------------------------------------- muckpile fragmentation from drone photos (ViT)


class _PatchViT(_nn.Module):
    """16-pixel patches by a strided convolution, row and column position tables, pre-norm blocks, a per-patch head
    of the size fractions and a not-rock logit."""

    def __init__(self, d, heads, layers, p, max_r, max_c, n_out):
        super().__init__()
        self.embed = _nn.Conv2d(3, d, p, p)
        self.row, self.col = _nn.Embedding(max_r, d), _nn.Embedding(max_c, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.head = _nn.Linear(d, n_out)

    def forward(self, x):
        z = self.embed(x)
        b, d, r, c = z.shape
        pe = self.row(torch.arange(r, device=x.device))[:, None] + self.col(torch.arange(c, device=x.device))[None]
        z = z.flatten(2).transpose(1, 2) + pe.reshape(r * c, d)[None]
        for blk in self.blocks:
            z = blk(z)
        return self.head(self.norm(z)).float()


@_workload("muckpile fragmentation serving on drone photos (random init, a vision transformer): 1,040-1,060 requests (drawn) of 1-6 photos (drawn) at 224 x 224, 256 x 384, 320 x 448 or 384 x 512 px (drawn per request), uint8 uploaded on a side stream from two reused pinned host buffers (filled once, sized for 6 x 3 x 384 x 512) one request ahead (one span, through SideUploads.ahead), scaled and normalised on the device; 16-pixel patches by a strided convolution to width 256, row and column position tables of 24 and 32 rows (the largest grid), 6 pre-norm blocks, 8 heads, in eval mode under bf16 autocast; each patch's 10 size fractions (2-250 cm) by softmax and whether it is rock (not fines, dust or sky); each photo's size distribution as the rock-weighted mean over its patches, its P20, P50 and P80 by linear interpolation of the cumulative curve (the crossing bin counted and gathered, no host branch), its oversize share above 100 cm, the patches over half oversize counted and its 5 worst patches for the rock breaker by topk; each request's figures read back once")
def muckpile_sizing_vit_serve(rng):
    d, heads, layers, p, n_bin = _smoke(256, 32), _smoke(8, 2), _smoke(6, 1), 16, 10
    res = [(224, 224), (256, 384), (320, 448), (384, 512)] if _smoke(1, 0) else [(32, 32), (32, 48)]
    max_n, (max_h, max_w) = _smoke(6, 2), res[-1]
    model = _PatchViT(d, heads, layers, p, max_h // p, max_w // p, n_bin + 1).cuda().eval()
    model.requires_grad_(False)
    edges = torch.tensor([2.0, 5, 10, 20, 35, 50, 75, 100, 150, 250], device="cuda")
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_n * 3 * max_h * max_w,), generator=gen, dtype=torch.uint8).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)

    nreq = rng.randint(_smoke(1040, 3), _smoke(1060, 4))
    plan = [(rng.randint(1, max_n), *rng.choice(res)) for _ in range(nreq)]

    def pct(cum, q):
        idx = (cum < q).sum(-1, keepdim=True).clamp_max(n_bin - 1)
        prev_i = (idx - 1).clamp_min(0)
        has_prev = idx > 0
        prev = torch.where(has_prev, cum.gather(1, prev_i), torch.zeros_like(cum[:, :1]))
        lo = torch.where(has_prev, edges[prev_i], torch.zeros_like(cum[:, :1]))
        frac = ((q - prev) / (cum.gather(1, idx) - prev).clamp_min(1e-6)).clamp(0.0, 1.0)
        return (lo + frac * (edges[idx] - lo))[:, 0]

    for (n, h, w), raw in up.ahead(plan, lambda r: (r[0] * 3 * r[1] * r[2],)):
        with torch.no_grad():
            x = (raw.view(n, 3, h, w).float() / 255.0 - 0.45) / 0.25
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = model(x)
            probs = out[..., :n_bin].softmax(-1)
            rock = 1.0 - torch.sigmoid(out[..., n_bin])
            dist = (probs * rock[..., None]).sum(1) / rock.sum(1, keepdim=True).clamp_min(1e-6)
            cum = dist.cumsum(-1)
            over_patch = probs[..., 8:].sum(-1) * rock
            worst, where = over_patch.topk(min(5, over_patch.shape[1]), -1)
            figs = torch.cat([pct(cum, 0.2), pct(cum, 0.5), pct(cum, 0.8), dist[:, 8:].sum(-1),
                              (over_patch > 0.5).float().sum(-1), worst.flatten(), where.float().flatten()])
        figs.tolist()
        del raw, x, out, probs, rock, dist, cum, over_patch, worst, where, figs


# ---------------------------------------------------------------- stockpile survey from drone tiles (ASPP convnet)


class _PileNet(_nn.Module):
    """A DeepLabv3+-style convnet: a stride-2 stem and two strided residual blocks (1/8), atrous spatial pyramid
    pooling (3x3 convolutions dilated 1, 3, 6 and 12 and an image-pooled branch), a decoder joining the 1/4
    features, a head of the classes and a ground correction upsampled bilinearly."""

    def __init__(self, cin, w, a, n_out):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(cin, w[0], 3, 2, 1, bias=False), _nn.BatchNorm2d(w[0]), _nn.ReLU())
        self.s1, self.s2 = BasicResBlock(w[0], w[1], 2), BasicResBlock(w[1], w[2], 2)
        self.aspp = _nn.ModuleList(_nn.Conv2d(w[2], a, 3, 1, r, dilation=r) for r in (1, 3, 6, 12))
        self.gp = _nn.Conv2d(w[2], a, 1)
        self.fuse = _nn.Sequential(_nn.Conv2d(5 * a, w[2], 1, bias=False), _nn.BatchNorm2d(w[2]), _nn.ReLU())
        self.low = _nn.Conv2d(w[1], 48, 1)
        self.dec = _nn.Sequential(_nn.Conv2d(w[2] + 48, w[1], 3, 1, 1, bias=False), _nn.BatchNorm2d(w[1]), _nn.ReLU())
        self.head = _nn.Conv2d(w[1], n_out, 1)

    def forward(self, x):
        f4 = self.s1(self.stem(x))
        f8 = self.s2(f4)
        g = self.gp(f8.mean((2, 3), keepdim=True)).expand(-1, -1, f8.shape[2], f8.shape[3])
        y = self.fuse(torch.cat([conv(f8) for conv in self.aspp] + [g], 1))
        y = _F.interpolate(y, size=f4.shape[-2:], mode="bilinear", align_corners=False)
        y = self.dec(torch.cat([y, self.low(f4)], 1))
        return _F.interpolate(self.head(y), scale_factor=4, mode="bilinear", align_corners=False).float()


@_workload("stockpile survey serving on drone tiles (random init, a DeepLabv3+-style convnet with atrous spatial pyramid pooling): 3,240-3,280 requests (drawn) of 1-4 orthomosaic tiles (drawn) at 256 x 256, 384 x 384, 512 x 512 or 384 x 640 px (drawn per request) of 4 channels (RGB and the surface height), fp16 uploaded on a side stream from two reused pinned host buffers (filled once, sized for 4 x 4 x 512 x 512) one request ahead (one span, through SideUploads.ahead); in channels_last, a stride-2 stem (32 channels) and two strided residual blocks (64, 128), pyramid pooling of 3x3 convolutions dilated 1, 3, 6 and 12 (64 each) and an image-pooled branch, a decoder joining the 1/4 features, a head of 7 classes (ground and 6 products: 20 mm and 10 mm aggregate, sand, scalpings, sub-base, rip-rap) and a ground-height correction upsampled to the full resolution, in eval mode under bf16 autocast; the ground as a 9 x 9 min-filter (a negated max-pool) of the surface plus the correction, each product's volume as the class-weighted height above the ground summed at 5 cm ground sampling and its tonnage by a density table, the piles counted by 15 x 15 max-pool peaks over 2 m, the mean confidence; each request's figures read back once")
def stockpile_volume_aspp_serve(rng):
    cin, n_cls, a = 4, 7, _smoke(64, 8)
    widths = (_smoke(32, 8), _smoke(64, 8), _smoke(128, 16))
    res = [(256, 256), (384, 384), (512, 512), (384, 640)] if _smoke(1, 0) else [(32, 32), (32, 64)]
    max_n, max_px = _smoke(4, 2), max(h * w for h, w in res)
    model = _PileNet(cin, widths, a, n_cls + 1).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    density = torch.tensor([1.55, 1.5, 1.6, 1.7, 2.0, 1.8], device="cuda")
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randn(max_n * cin * max_px, generator=gen).half().pin_memory() for _ in range(2)]
    up = SideUploads(host)

    nreq = rng.randint(_smoke(3240, 3), _smoke(3280, 4))
    plan = [(rng.randint(1, max_n), *rng.choice(res)) for _ in range(nreq)]

    for (n, h, w), raw in up.ahead(plan, lambda r: (r[0] * cin * r[1] * r[2],)):
        with torch.no_grad():
            x = raw.view(n, cin, h, w).float().contiguous(memory_format=torch.channels_last)
            dsm = 2.0 + 3.0 * x[:, 3].abs()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = model(x)
            prob = out[:, :n_cls].softmax(1)
            ground = -_F.max_pool2d(-dsm[:, None], 9, 1, 4)[:, 0] + 0.1 * out[:, n_cls]
            height = (dsm - ground).clamp_min(0.0)
            vol = (height[:, None] * prob[:, 1:]).sum((2, 3)) * 0.0025
            tonnes = vol * density
            peak = (height == _F.max_pool2d(height[:, None], 15, 1, 7)[:, 0]) & (height > 2.0)
            figs = torch.cat([vol.flatten(), tonnes.flatten(), peak.float().sum((1, 2)),
                              prob.amax(1).mean((1, 2))])
        figs.tolist()
        del raw, x, dsm, out, prob, ground, height, vol, tonnes, peak, figs


# ---------------------------------------------------------------- aggregate texture sampler (DDIM, U-Net)


class _TexUNet(_nn.Module):
    """A small U-Net denoiser: the timestep's sine features, the rock type (a null row for the unconditional pass)
    and the requested grading added into one embedding; time-conditioned residual blocks at full, 1/2 and 1/4
    resolution, a pre-norm self-attention block at 1/4, nearest upsampling with skips."""

    def __init__(self, c, n_cls, temb, heads):
        super().__init__()
        self.tdim = temb
        self.temb = mlp(temb, temb, temb, act=_nn.SiLU)
        self.cls, self.grading = _nn.Embedding(n_cls + 1, temb), _nn.Linear(1, temb)
        self.inp = _nn.Conv2d(3, c[0], 3, 1, 1)
        self.d1, self.down1 = TimeResBlock(c[0], c[0], temb), _nn.Conv2d(c[0], c[0], 3, 2, 1)
        self.d2, self.down2 = TimeResBlock(c[0], c[1], temb), _nn.Conv2d(c[1], c[1], 3, 2, 1)
        self.mid1, self.attn = TimeResBlock(c[1], c[2], temb), PreNormBlock(c[2], heads)
        self.mid2 = TimeResBlock(c[2], c[1], temb)
        self.up2, self.up1 = TimeResBlock(2 * c[1], c[1], temb), TimeResBlock(c[1] + c[0], c[0], temb)
        self.out = _nn.Sequential(_nn.GroupNorm(8, c[0]), _nn.SiLU(), _nn.Conv2d(c[0], 3, 3, 1, 1))

    def forward(self, x, t, y, grading):
        te = self.temb(_sincos(t, self.tdim)) + self.cls(y) + self.grading(grading[:, None])
        h0 = self.d1(self.inp(x), te)
        h1 = self.d2(self.down1(h0), te)
        m = self.mid1(self.down2(h1), te)
        b, c, hh, ww = m.shape
        m = self.attn(m.flatten(2).transpose(1, 2)).transpose(1, 2).reshape(b, c, hh, ww)
        m = self.mid2(m, te)
        u = self.up2(torch.cat([_F.interpolate(m, scale_factor=2, mode="nearest"), h1], 1), te)
        u = self.up1(torch.cat([_F.interpolate(u, scale_factor=2, mode="nearest"), h0], 1), te)
        return self.out(u).float()


@_workload("aggregate texture sampling for synthetic training data (random init, a U-Net denoiser with DDIM): 54-56 requests (drawn) of 1-8 images (drawn) at 64 x 64, 96 x 96 or 128 x 128 px (drawn per request), each of a rock type (of 8: limestone, granite, sandstone, basalt, gritstone, dolomite, gneiss, greywacke; drawn on the device) and a grading value; a U-Net of 64/128/192 channels (time-conditioned residual blocks with group norm at full, 1/2 and 1/4 resolution, a pre-norm self-attention block of 4 heads at 1/4, nearest upsampling with skips), the timestep's sine features, a rock-type table with a null row and the grading added into one embedding; 20-50 deterministic DDIM steps (drawn per request) on a 1,000-step cosine schedule computed on the host, classifier-free guidance at scale 3 (the conditional and null passes in one doubled batch), the predicted clean image clamped; in eval mode under bf16 autocast; each request's images quantised to uint8 and their per-image mean and spread read back once")
def aggregate_texture_ddim_sample(rng):
    chans = (_smoke(64, 8), _smoke(128, 16), _smoke(192, 16))
    n_cls, temb, heads, guide, t_train = 8, _smoke(256, 32), _smoke(4, 2), 3.0, 1000
    res = [64, 96, 128] if _smoke(1, 0) else [16, 32]
    model = _TexUNet(chans, n_cls, temb, heads).cuda().eval()
    model.requires_grad_(False)

    def abar(t):
        f = lambda s: math.cos((s / t_train + 0.008) / 1.008 * math.pi / 2) ** 2  # noqa: E731
        return max(1e-4, f(t) / f(0))

    nreq = rng.randint(_smoke(54, 2), _smoke(56, 2))
    for _ in range(nreq):
        n, r, k = rng.randint(1, _smoke(8, 2)), rng.choice(res), rng.randint(_smoke(20, 2), _smoke(50, 3))
        ts = [int(t_train - 1 - i * t_train / k) for i in range(k)]
        with torch.no_grad():
            y = torch.randint(0, n_cls, (n,), device="cuda")
            y2 = torch.cat([y, torch.full((n,), n_cls, device="cuda", dtype=torch.long)])
            grading = torch.rand(n, device="cuda").repeat(2)
            x = torch.randn(n, 3, r, r, device="cuda")
            for i, t in enumerate(ts):
                a, a_prev = abar(t), (abar(ts[i + 1]) if i + 1 < k else 1.0)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    eps2 = model(torch.cat([x, x]), torch.full((2 * n,), t, device="cuda"), y2, grading)
                e_c, e_u = eps2[:n], eps2[n:]
                eps = e_u + guide * (e_c - e_u)
                x0 = ((x - math.sqrt(1.0 - a) * eps) / math.sqrt(a)).clamp(-1.0, 1.0)
                x = math.sqrt(a_prev) * x0 + math.sqrt(1.0 - a_prev) * eps
            img = ((x.clamp(-1.0, 1.0) + 1.0) * 127.5).round().to(torch.uint8).float()
            stats = torch.stack([img.mean((1, 2, 3)), img.std((1, 2, 3))])
        stats.tolist()
        del y, y2, grading, x, eps2, e_c, e_u, eps, x0, img, stats

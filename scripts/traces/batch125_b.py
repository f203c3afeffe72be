"""The hundred-and-twenty-fifth batch of held-out workloads for record.py, second half (see batch125.py): elevators,
escalators and vertical transport in buildings, written in torch alone. Lobby crowd counting fine-tuning (a CSRNet-style
convnet over lobby camera frames of drawn resolutions, a VGG-style front end whose lower stages are frozen and a dilated
back end, density maps from people drawn at random and blurred on the device, the zone counts in front of the elevator
banks), building circulation training (an interaction network with edge and node updates over circulation graphs of
drawn campuses of floors and zones joined by lifts, escalators, stairs and corridors, batched into one graph and
aggregated by index_add, waiting times, congestion and link flows), a lift traffic scenario sampler (a transformer
denoiser with adaptive layer norm over floors' daily up and down demand profiles, conditioned on the building and day
kind, an EDM Heun sampler with classifier-free guidance) and an elevator door obstruction service (a 3-d residual
convnet over door-zone camera clips of drawn lengths and resolutions, an obstruction probability, the object class and
per-frame probabilities).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the door service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or masked_fill; no
boolean-mask indexing; results read back only at logging points or once per request.
elevator_door_obstruction_serve uploads its clips on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every embedding and position table is sized for the longest padded length that can be drawn.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import SideUploads, _mha, _sincos, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- lobby crowd counting (CSRNet-style convnet)


def _vgg(cfg, cin):
    mods = []
    for v in cfg:
        if v == "M":
            mods.append(_nn.MaxPool2d(2))
        else:
            mods += [_nn.Conv2d(cin, v, 3, 1, 1), _nn.ReLU()]
            cin = v
    return _nn.Sequential(*mods), cin


class _CrowdNet(_nn.Module):
    """A VGG-style front end to 1/8 (its lower stages frozen, its last stage fine-tuned), a back end of dilated 3x3
    convolutions (dilation 2) with batch norm, a 1x1 convolution to the density map at 1/8."""

    def __init__(self, low, tail, back):
        super().__init__()
        self.low, c = _vgg(low, 3)
        self.tail, c = _vgg(tail, c)
        mods = []
        for v in back:
            mods += [_nn.Conv2d(c, v, 3, 1, 2, dilation=2, bias=False), _nn.BatchNorm2d(v), _nn.ReLU()]
            c = v
        self.back = _nn.Sequential(*mods)
        self.out = _nn.Conv2d(c, 1, 1)

    def forward(self, x):
        return _F.softplus(self.out(self.back(self.tail(self.low(x)))).float())


@_workload("lobby crowd counting fine-tuning (random init standing in for a pretrained CSRNet-style convnet): 4-16 lobby camera frames a step (drawn, at most 8 x 384 x 512 pixels a step) of 288 x 384, 384 x 512 or 480 x 640 px (drawn per step) drawn on the device in channels-last; a VGG-style front end (64, 64, pool, 128, 128, pool, 256 x 3, pool, 384 x 3) whose stages up to the third pooling are frozen, a back end of five dilated 3x3 convolutions (256, 256, 256, 128, 64, dilation 2) with batch norm and a 1x1 to a softplus density at 1/8; targets from people drawn at 1/8 with a crowd level of 0.2-5 % (drawn per step) blurred by a fixed 7x7 Gaussian on the device; a pixel MSE on the density, an L1 on each frame's count and on its 2 x 4 zone counts (by adaptive average pooling, the queues in front of the elevator banks); AdamW on the unfrozen parameters with a warm-up, clipping, bf16 autocast, 1,400 steps; the losses read back every 25 steps and every 280 steps a no-grad pass over 8 frames of 384 x 512 with the count MAE and the zone MAE read back")
def lobby_crowd_density_finetune(rng):
    low = _smoke([64, 64, "M", 128, 128, "M", 256, 256, 256, "M"], [4, "M", 8, "M", 8, "M"])
    tail, back = _smoke([384, 384, 384], [8]), _smoke([256, 256, 256, 128, 64], [8, 8])
    model = _CrowdNet(low, tail, back).cuda().to(memory_format=torch.channels_last)
    model.low.requires_grad_(False)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 30))
    res_opts = _smoke([(288, 384), (384, 512), (480, 640)], [(32, 48), (48, 64)])
    budget = _smoke(8 * 384 * 512, 3 * 48 * 64)
    g = torch.exp(-(torch.arange(7, device="cuda").float() - 3.0).pow(2) / (2 * 1.5 ** 2))
    kern = (g[:, None] * g[None]) / (g.sum() ** 2)
    kern = kern.view(1, 1, 7, 7)

    def frames(b, hh, ww, level):
        x = torch.randn(b, 3, hh, ww, device="cuda").contiguous(memory_format=torch.channels_last)
        people = (torch.rand(b, 1, hh // 8, ww // 8, device="cuda") < level).float()
        dens = _F.conv2d(people, kern, padding=3)
        return x, dens

    def losses(pred, dens):
        l_px = _F.mse_loss(pred * 100.0, dens * 100.0)
        l_cnt = _F.l1_loss(pred.sum((1, 2, 3)), dens.sum((1, 2, 3)))
        area = pred.shape[2] * pred.shape[3] / 8.0
        l_zone = _F.l1_loss(_F.adaptive_avg_pool2d(pred, (2, 4)) * area, _F.adaptive_avg_pool2d(dens, (2, 4)) * area)
        return l_px, l_cnt, l_zone

    steps = _smoke(1400, 3)
    for step in range(steps):
        model.train()
        model.low.eval()
        hh, ww = rng.choice(res_opts)
        b = min(rng.randint(_smoke(4, 2), _smoke(16, 4)), budget // (hh * ww))
        x, dens = frames(b, hh, ww, rng.uniform(0.002, 0.05))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(x)
        l_px, l_cnt, l_zone = losses(pred, dens)
        loss = l_px + 0.01 * l_cnt + 0.01 * l_zone
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], 1.0)
        opt.step()
        sched.step()
        if step % 25 == 0:
            torch.stack([l_px.detach(), l_cnt.detach(), l_zone.detach()]).tolist()
        del x, dens, pred, l_px, l_cnt, l_zone, loss
        if (step + 1) % _smoke(280, 2) == 0:
            model.eval()
            with torch.no_grad():
                hh, ww = res_opts[1]
                x, dens = frames(_smoke(8, 2), hh, ww, 0.02)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pred = model(x)
                _, l_cnt, l_zone = losses(pred, dens)
            torch.stack([l_cnt, l_zone]).tolist()
            del x, dens, pred, l_cnt, l_zone


# ---------------------------------------------------------------- building circulation (interaction network)


class _Interaction(_nn.Module):
    """An interaction-network layer: each link updated from itself and its two ends, the updated links averaged
    into their receiving node by index_add (in the links' dtype), each node updated from itself and that average;
    residuals and layer norms on both."""

    def __init__(self, d):
        super().__init__()
        self.edge = mlp(3 * d, d, d, act=_nn.GELU)
        self.node = mlp(2 * d, d, d, act=_nn.GELU)
        self.ne, self.nn = _nn.LayerNorm(d), _nn.LayerNorm(d)

    def forward(self, x, e, src, dst, deg):
        e_new = self.edge(torch.cat([e, x[src], x[dst]], -1))
        agg = e_new.new_zeros(x.shape[0], e_new.shape[-1]).index_add_(0, dst, e_new) / deg
        x = self.nn(x + self.node(torch.cat([x, agg.to(x.dtype)], -1)).to(x.dtype))
        e = self.ne(e + e_new.to(e.dtype))
        return x, e


class _CirculationNet(_nn.Module):
    def __init__(self, n_kind, max_floor, n_node, n_link, n_edge, d, layers, n_cong):
        super().__init__()
        self.kind, self.floor = _nn.Embedding(n_kind, d), _nn.Embedding(max_floor, d)
        self.node_in = _nn.Linear(n_node, d)
        self.link, self.edge_in = _nn.Embedding(n_link, d), _nn.Linear(n_edge, d)
        self.layers = _nn.ModuleList(_Interaction(d) for _ in range(layers))
        self.node_out = mlp(d, d, 1 + n_cong, act=_nn.GELU)
        self.edge_out = mlp(d, d, 1, act=_nn.GELU)
        self.bld_out = mlp(d, d, 1, act=_nn.GELU)

    def forward(self, kind, floor, nf, link, ef, src, dst, deg, bld, n_bld, counts):
        x = self.kind(kind) + self.floor(floor) + self.node_in(nf).float()
        e = self.link(link) + self.edge_in(ef).float()
        for layer in self.layers:
            x, e = layer(x, e, src, dst, deg)
        pooled = x.new_zeros(n_bld, x.shape[-1]).index_add_(0, bld, x) / counts[:, None]
        return self.node_out(x).float(), self.edge_out(e).float()[:, 0], self.bld_out(pooled).float()[:, 0]


@_workload("building circulation training (random init, an interaction network over one batched graph): 4-12 buildings a step (drawn), each of 10-60 floors and 2-4 zones per floor (drawn per building), a node per floor zone (of 6 kinds: lobby, office, retail, parking, sky lobby, residential) with 5 features, a 64-row floor table, and 6 links into each node drawn on the device: 4 vertical ones from the same zone on a random floor (a lift, an escalator or stairs, drawn) and 2 corridors from a random zone of the same floor, with 3 link features; 6 interaction layers (width 160: each link updated from itself and its two ends by an MLP, the links averaged into their receiving node by index_add in the links' dtype, the node updated by an MLP, residuals and layer norms); each node's log waiting time by a Huber loss and its congestion level (of 3) by cross-entropy, each link's log passenger flow by MSE, each building's 5-minute handling capacity from mean pooling by index_add by MSE; AdamW on a cosine schedule, clipping, bf16 autocast, 440 steps; the losses read back every 20 steps and every 88 steps a no-grad pass over 8 buildings of 60 floors and 4 zones with the congestion accuracy read back")
def building_circulation_gnn_train(rng):
    n_kind, max_floor, n_node, n_link, n_edge = 6, _smoke(64, 8), 5, 4, 3
    d, layers, n_cong = _smoke(160, 16), _smoke(6, 2), 3
    n_vert, n_corr = _smoke(4, 2), _smoke(2, 1)
    deg = n_vert + n_corr
    model = _CirculationNet(n_kind, max_floor, n_node, n_link, n_edge, d, layers, n_cong).cuda()
    steps = _smoke(440, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))

    def campus(shapes):
        nb = len(shapes)
        sizes = [f * z for f, z in shapes]
        n = sum(sizes)
        starts = [0]
        for s in sizes[:-1]:
            starts.append(starts[-1] + s)
        bld = torch.repeat_interleave(torch.arange(nb, device="cuda"), torch.tensor(sizes, device="cuda"),
                                      output_size=n)
        base = torch.tensor(starts, device="cuda")[bld]
        nfl = torch.tensor([f for f, _ in shapes], device="cuda")[bld]
        nz = torch.tensor([z for _, z in shapes], device="cuda")[bld]
        local = torch.arange(n, device="cuda") - base
        floor, zone = local // nz, local % nz
        v_fl = (torch.rand(n, n_vert, device="cuda") * nfl[:, None]).long()
        v_src = base[:, None] + v_fl * nz[:, None] + zone[:, None]
        c_z = (torch.rand(n, n_corr, device="cuda") * nz[:, None]).long()
        c_src = base[:, None] + floor[:, None] * nz[:, None] + c_z
        src = torch.cat([v_src, c_src], 1).flatten()
        dst = torch.arange(n, device="cuda").repeat_interleave(deg)
        link = torch.cat([torch.randint(0, 3, (n, n_vert), device="cuda"),
                          torch.full((n, n_corr), 3, device="cuda")], 1).flatten()
        dfl = torch.cat([(v_fl - floor[:, None]).abs(), torch.zeros_like(c_z)], 1).flatten().float()
        ef = torch.stack([dfl / 60.0, torch.rand(n * deg, device="cuda"), torch.randn(n * deg, device="cuda")], -1)
        kind = torch.randint(0, n_kind, (n,), device="cuda")
        nf = torch.cat([(floor.float() / nfl.float())[:, None], torch.randn(n, n_node - 1, device="cuda")], -1)
        counts = torch.tensor(sizes, device="cuda").float()
        wait = torch.randn(n, device="cuda") * 0.5 + 3.0
        cong = torch.randint(0, n_cong, (n,), device="cuda")
        flow = torch.randn(n * deg, device="cuda")
        cap = torch.rand(nb, device="cuda") * 0.1 + 0.08
        return (kind, floor, nf, link, ef, src, dst, deg, bld, nb, counts), (wait, cong, flow, cap)

    def losses(out, tgt):
        node, edge, bcap = out
        wait, cong, flow, cap = tgt
        return (_F.huber_loss(node[:, 0], wait), _F.cross_entropy(node[:, 1:], cong), _F.mse_loss(edge, flow),
                _F.mse_loss(bcap, cap * 10.0))

    for step in range(steps):
        model.train()
        nb = rng.randint(_smoke(4, 2), _smoke(12, 3))
        shapes = [(rng.randint(_smoke(10, 2), _smoke(60, 8)), rng.randint(2, 4)) for _ in range(nb)]
        inp, tgt = campus(shapes)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(*inp)
        l_wait, l_cong, l_flow, l_cap = losses(out, tgt)
        loss = l_wait + l_cong + l_flow + l_cap
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            torch.stack([l_wait.detach(), l_cong.detach(), l_flow.detach(), l_cap.detach()]).tolist()
        del inp, tgt, out, l_wait, l_cong, l_flow, l_cap, loss
        if (step + 1) % _smoke(88, 2) == 0:
            model.eval()
            with torch.no_grad():
                inp, tgt = campus([(_smoke(60, 8), 4)] * _smoke(8, 2))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    out = model(*inp)
                acc = (out[0][:, 1:].argmax(-1) == tgt[1]).float().mean()
            acc.tolist()
            del inp, tgt, out, acc


# ---------------------------------------------------------------- lift traffic scenario sampler (adaLN transformer)


class _AdaBlock(_nn.Module):
    """A transformer block with adaptive layer norm (DiT's adaLN): shift, scale and gate of both sublayers from the
    conditioning vector."""

    def __init__(self, d, heads):
        super().__init__()
        self.n1 = _nn.LayerNorm(d, elementwise_affine=False)
        self.n2 = _nn.LayerNorm(d, elementwise_affine=False)
        self.qkv, self.proj = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.ff = mlp(d, 4 * d, d, act=_nn.GELU)
        self.mod = _nn.Linear(d, 6 * d)
        self.h = heads

    def forward(self, x, c):
        s1, g1, a1, s2, g2, a2 = self.mod(_F.silu(c))[:, None].chunk(6, -1)
        q, k, v = self.qkv(self.n1(x) * (1 + g1) + s1).chunk(3, -1)
        x = x + a1 * self.proj(_mha(q, k, v, self.h))
        return x + a2 * self.ff(self.n2(x) * (1 + g2) + s2)


class _TrafficDit(_nn.Module):
    """Each floor's day profile (96 quarter hours of up and down demand) as a token with the floor's position
    embedding; the noise level, the building kind and the day kind (index 0 of both tables the null condition)
    summed to the conditioning vector; adaLN blocks, an adaLN final layer back to the profile."""

    def __init__(self, n_prof, d, heads, layers, max_floor, n_bkind, n_day):
        super().__init__()
        self.inp, self.pos = _nn.Linear(n_prof, d), _nn.Embedding(max_floor, d)
        self.t_mlp = mlp(d, d, d, act=_nn.SiLU)
        self.bkind, self.day = _nn.Embedding(n_bkind + 1, d), _nn.Embedding(n_day + 1, d)
        self.blocks = _nn.ModuleList(_AdaBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d, elementwise_affine=False)
        self.mod = _nn.Linear(d, 2 * d)
        self.out = _nn.Linear(d, n_prof)
        self.d = d

    def forward(self, x, c_noise, bkind, day):
        f = x.shape[1]
        c = self.t_mlp(_sincos(c_noise * 1000.0, self.d)) + self.bkind(bkind) + self.day(day)
        h = self.inp(x) + self.pos(torch.arange(f, device=x.device))[None]
        for blk in self.blocks:
            h = blk(h, c)
        s, g = self.mod(_F.silu(c))[:, None].chunk(2, -1)
        return self.out(self.norm(h) * (1 + g) + s).float()


@_workload("lift traffic scenario sampling (random init, a DiT-style transformer denoiser with adaptive layer norm and classifier-free guidance): 28-30 requests (drawn) of 1-16 buildings (drawn) of 12-80 floors (drawn per request), each floor a token of its day profile (96 quarter hours of up and down demand, 192 values) with an 80-row floor position table, a building kind (of 6) and a day kind (weekday, Saturday or Sunday) drawn per building; 8 adaLN blocks (width 256, 4 heads) under bf16 autocast with the noise level's sinusoidal embedding and the two condition embeddings summed to the conditioning vector; EDM preconditioning (sigma_data 0.5) and Heun's second-order sampler over 8-24 Karras noise levels (drawn per request, sigma 0.002-80, rho 7), a guidance scale of 1.5-4 (drawn per request), the conditional and the null-condition pass in one doubled batch; each request's profiles through softplus, with each floor's daily up and down totals and its peak quarter hour by argmax, read back once")
def lift_traffic_dit_sample(rng):
    n_prof, d, heads, layers = 192, _smoke(256, 16), _smoke(4, 2), _smoke(8, 2)
    n_bkind, n_day, max_floor = 6, 3, _smoke(80, 8)
    model = _TrafficDit(n_prof, d, heads, layers, max_floor, n_bkind, n_day).cuda().eval()
    model.requires_grad_(False)
    sd, s_min, s_max, rho = 0.5, 0.002, 80.0, 7.0
    max_n = _smoke(16, 2)

    def denoise(x, s, cond, scale):
        c_in, c_skip = 1.0 / math.sqrt(s * s + sd * sd), sd * sd / (s * s + sd * sd)
        c_out = s * sd / math.sqrt(s * s + sd * sd)
        c_noise = torch.full((2 * x.shape[0],), math.log(s) / 4.0, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            f = model(torch.cat([x, x]) * c_in, c_noise, *cond)
        f_c, f_u = f.chunk(2)
        return c_skip * x + c_out * (f_u + scale * (f_c - f_u))

    nreq = rng.randint(_smoke(28, 2), _smoke(30, 3))
    for _ in range(nreq):
        n, f = rng.randint(1, max_n), rng.randint(_smoke(12, 4), max_floor)
        n_steps, scale = rng.randint(_smoke(8, 2), _smoke(24, 3)), rng.uniform(1.5, 4.0)
        sig = [(s_max ** (1 / rho) + i / (n_steps - 1) * (s_min ** (1 / rho) - s_max ** (1 / rho))) ** rho
               for i in range(n_steps)] + [0.0]
        with torch.no_grad():
            bkind = torch.randint(1, n_bkind + 1, (n,), device="cuda")
            day = torch.randint(1, n_day + 1, (n,), device="cuda")
            null = torch.zeros(n, dtype=torch.long, device="cuda")
            cond = (torch.cat([bkind, null]), torch.cat([day, null]))
            x = torch.randn(n, f, n_prof, device="cuda") * s_max
            for i in range(n_steps):
                s, s_next = sig[i], sig[i + 1]
                dx = (x - denoise(x, s, cond, scale)) / s
                x_next = x + (s_next - s) * dx
                if s_next > 0:
                    dx2 = (x_next - denoise(x_next, s_next, cond, scale)) / s_next
                    x_next = x + (s_next - s) * 0.5 * (dx + dx2)
                    del dx2
                x = x_next
                del dx, x_next
            prof = _F.softplus(x).view(n, f, 2, 96)
            tot = prof.sum(-1).flatten()
            peak = prof.sum(2).argmax(-1).float().flatten()
            res = torch.cat([tot, peak])
        res.tolist()
        del bkind, day, null, cond, x, prof, tot, peak, res


# ---------------------------------------------------------------- elevator door obstruction service (3-d convnet)


class _Res3d(_nn.Module):
    """A 3-d residual block: two 3x3x3 convolutions with batch norm and ReLU, strided by `stride` (time, height,
    width), a strided 1x1x1 convolution with batch norm on the shortcut."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1, self.b1 = _nn.Conv3d(cin, cout, 3, stride, 1, bias=False), _nn.BatchNorm3d(cout)
        self.c2, self.b2 = _nn.Conv3d(cout, cout, 3, 1, 1, bias=False), _nn.BatchNorm3d(cout)
        self.sc = _nn.Sequential(_nn.Conv3d(cin, cout, 1, stride, bias=False), _nn.BatchNorm3d(cout))

    def forward(self, x):
        return _F.relu(self.b2(self.c2(_F.relu(self.b1(self.c1(x))))) + self.sc(x))


class _DoorNet(_nn.Module):
    """A (3, 5, 5) stem strided in space over RGB and a frame-difference channel, four residual 3-d stages (time
    strided twice), heads on the global mean (obstruction, object class, door gap) and per-frame obstruction logits
    from the spatial mean."""

    def __init__(self, widths, n_obj):
        super().__init__()
        c0 = widths[0]
        self.stem = _nn.Sequential(_nn.Conv3d(4, c0, (3, 5, 5), (1, 2, 2), (1, 2, 2), bias=False),
                                   _nn.BatchNorm3d(c0), _nn.ReLU())
        strides = [(1, 2, 2), (2, 2, 2), (2, 2, 2), (1, 2, 2)]
        self.stages = _nn.Sequential(*[_Res3d(a, b, s) for a, b, s in zip(widths[:-1], widths[1:], strides)])
        c = widths[-1]
        self.head = mlp(c, c, 2 + n_obj, act=_nn.ReLU)
        self.frame = _nn.Linear(c, 1)

    def forward(self, x):
        f = self.stages(self.stem(x))
        return self.head(f.mean((2, 3, 4))).float(), self.frame(f.mean((3, 4)).transpose(1, 2)).float()[..., 0]


@_workload("elevator door obstruction serving (random init, a 3-d residual convnet over door-zone clips): 2,780-2,860 requests (drawn) of 1-6 landing doors (drawn) with a clip of 8, 12 or 16 frames (drawn per request) at 96 x 128, 112 x 144 or 128 x 160 px (drawn per request), uint8 RGB clips uploaded on a side stream from two reused pinned host buffers (filled once, sized for 6 x 3 x 16 x 128 x 160) one request ahead (one span, through SideUploads.ahead), normalised on the device with a frame-difference channel added; a (3, 5, 5) stem of 24 channels strided in space and four residual 3-d stages (32, 64, 96, 128 channels; time strided at the second and third) in eval mode under bf16 autocast; the obstruction probability, the object class (of 6: none, person, hand, trolley, luggage, pet) by softmax, the door gap in mm and per-frame obstruction probabilities (a quarter of the frames), the hold-open decision from the clip and the worst frame; each request's probabilities, classes, gaps and decisions read back once")
def elevator_door_obstruction_serve(rng):
    widths, n_obj = _smoke([24, 32, 64, 96, 128], [4, 8, 8, 8, 8]), 6
    max_n, t_opts = _smoke(6, 2), _smoke([8, 12, 16], [4, 8])
    res_opts = _smoke([(96, 128), (112, 144), (128, 160)], [(32, 32), (32, 48)])
    model = _DoorNet(widths, n_obj).cuda().eval()
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    big = max(t_opts) * max(h * w for h, w in res_opts)
    host = [torch.randint(0, 256, (max_n * 3 * big,), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    mean = torch.tensor([0.45, 0.45, 0.45], device="cuda").view(1, 3, 1, 1, 1) * 255.0
    std = torch.tensor([0.225, 0.225, 0.225], device="cuda").view(1, 3, 1, 1, 1) * 255.0

    nreq = rng.randint(_smoke(2780, 3), _smoke(2860, 4))
    plan = [(rng.randint(1, max_n), rng.choice(t_opts), rng.choice(res_opts)) for _ in range(nreq)]

    for (n, t, (hh, ww)), raw in up.ahead(plan, lambda p: (p[0] * 3 * p[1] * p[2][0] * p[2][1],)):
        with torch.no_grad():
            x = (raw.view(n, 3, t, hh, ww).float() - mean) / std
            diff = _F.pad((x[:, :, 1:] - x[:, :, :-1]).abs().mean(1, keepdim=True), (0, 0, 0, 0, 1, 0))
            with torch.autocast("cuda", dtype=torch.bfloat16):
                clip, frame = model(torch.cat([x, diff], 1))
            p_obs = torch.sigmoid(clip[:, 0])
            p_obj, obj = clip[:, 2:].softmax(-1).max(-1)
            gap = 20.0 + 80.0 * torch.sigmoid(clip[:, 1])
            p_fr = torch.sigmoid(frame)
            hold = ((p_obs > 0.5) | (p_fr.amax(-1) > 0.7)).float()
            res = torch.cat([p_obs, p_obj, obj.float(), gap, hold, p_fr.flatten()])
        res.tolist()
        del raw, x, diff, clip, frame, p_obs, p_obj, obj, gap, p_fr, hold, res

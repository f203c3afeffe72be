"""The hundred-and-twenty-first batch of held-out workloads for record.py, second half (see batch121.py): cycling, bike
sharing and micromobility, written in torch alone. A ride map-matching service (a transformer over GPS traces of drawn
lengths scoring a fixed number of candidate road segments a point, a learned transition score between consecutive
candidates, Viterbi decoding written out point by point with back-pointers and a back-trace), bike-fit pose
fine-tuning (a two-stack hourglass network with intermediate supervision over rider-on-trainer photos of drawn
resolutions, its stem frozen, visibility-masked heatmap and soft-argmax keypoint losses, knee and hip angles), a
ride-trajectory diffusion sampler (a 1-d U-Net denoiser with self-attention at its bottom over waypoint sequences of
drawn lengths, conditioned on origin, destination and hour, classifier-free guidance in one doubled batch, DDIM with
drawn step counts and guidance scales) and bike-share station network demand training (an encode-process-decode
message-passing network over station graphs of drawn sizes, edge and node updates with messages summed by index_add,
departures and arrivals by a Poisson likelihood, empty and full docks by BCE).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the map-matching service), `rng` the workload's random.Random for every shape, count and sampled
choice, sizes through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or
masked_fill; no boolean-mask indexing; results read back only at logging points or once per request.
ride_mapmatch_viterbi_serve uploads its traces on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every position table is sized for the longest padded length that can be drawn.
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


# ---------------------------------------------------------------- ride map matching (transformer and Viterbi)


class _MatchNet(_nn.Module):
    """GPS points (position, speed, heading, time step) through a linear embedding and a position table,
    pre-norm blocks under the point mask; each candidate segment's features through an MLP, emission scores by an
    MLP over the point's and the candidate's encodings; transition scores by a bilinear form between consecutive
    points' candidate encodings plus a route-distance term."""

    def __init__(self, n_pt, n_cand, d, heads, layers, max_pts):
        super().__init__()
        self.inp, self.pos = _nn.Linear(n_pt, d), _nn.Embedding(max_pts, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.cand = mlp(n_cand, d, d, act=_nn.GELU)
        self.emit = mlp(2 * d, d, 1, act=_nn.GELU)
        self.trans = _nn.Linear(d, d, bias=False)
        self.route = _nn.Parameter(torch.tensor(1.0))

    def forward(self, pts, keep, cand, route_gap):
        b, t, _ = pts.shape
        x = self.inp(pts) + self.pos(torch.arange(t, device=pts.device))[None]
        mask = keep[:, None, None, :]
        for blk in self.blocks:
            x = blk(x, mask=mask)
        x = self.norm(x)
        c = self.cand(cand)
        k = c.shape[2]
        emit = self.emit(torch.cat([x[:, :, None].expand(-1, -1, k, -1), c], -1))[..., 0].float()
        trans = (self.trans(c[:, :-1]) @ c[:, 1:].transpose(-1, -2)).float() / math.sqrt(c.shape[-1])
        return emit, trans - self.route.float() * route_gap


@_workload("ride map-matching serving (random init, a transformer emission model and Viterbi decoding): 290-300 requests (drawn) of 2-24 GPS traces (drawn) of 32-128 points each (drawn per trace, padded to the request's longest rounded up to a multiple of 16, a 128-row position table) with 6 features a point (projected x and y, speed, heading sine and cosine, time step), float traces uploaded on a side stream from two reused pinned host buffers (filled once, sized for 24 x 128 points) one request ahead (one span, through SideUploads.ahead); 8 candidate road segments a point with 7 features (distance, heading difference, road class, bike-lane flag, ...) and the route-distance gaps between consecutive candidates drawn on the device; 4 pre-norm blocks (width 192, 6 heads) under the point mask and bf16 autocast, candidate encodings by an MLP, emission scores by an MLP over point and candidate encodings, transition scores by a bilinear form minus a learned route-gap weight; Viterbi decoding written out point by point over the padded length (max-plus with back-pointers, padded points keeping the state by torch.where) and a back-trace by gather; per trace the matched segment ids, the path score and the mean emission probability of the matched candidates; each request's results read back once")
def ride_mapmatch_viterbi_serve(rng):
    n_pt, n_cand, k = 6, 7, 8
    d, heads, layers = _smoke(192, 32), _smoke(6, 2), _smoke(4, 1)
    max_tr, max_pts = _smoke(24, 3), _smoke(128, 32)
    model = _MatchNet(n_pt, n_cand, d, heads, layers, max_pts).cuda().eval()
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randn(max_tr * max_pts * n_pt, generator=gen).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    states = torch.arange(k, device="cuda")

    nreq = rng.randint(_smoke(290, 3), _smoke(300, 4))
    plan = []
    for _ in range(nreq):
        lengths = [rng.randint(_smoke(32, 8), max_pts) for _ in range(rng.randint(_smoke(2, 1), max_tr))]
        plan.append((lengths, min(max_pts, -(-max(lengths) // 16) * 16)))

    for (lengths, t), raw in up.ahead(plan, lambda p: (len(p[0]) * p[1] * n_pt,)):
        with torch.no_grad():
            n = len(lengths)
            keep = keep_mask(lengths, t)
            pts = raw.view(n, t, n_pt) * keep[..., None]
            cand = torch.randn(n, t, k, n_cand, device="cuda")
            gap = torch.rand(n, t - 1, k, k, device="cuda") * 2.0
            with torch.autocast("cuda", dtype=torch.bfloat16):
                emit, trans = model(pts, keep, cand, gap)
            emit = emit.log_softmax(-1)
            delta = emit[:, 0]
            ptrs = []
            for i in range(1, t):
                score = delta[:, :, None] + trans[:, i - 1]
                best, arg = score.max(1)
                on = keep[:, i, None]
                delta = torch.where(on, best + emit[:, i], delta)
                ptrs.append(torch.where(on, arg, states))
            last = delta.argmax(-1)
            path = [last]
            for ptr in reversed(ptrs):
                last = ptr.gather(1, last[:, None])[:, 0]
                path.append(last)
            path = torch.stack(path[::-1], 1)
            e_match = emit.gather(2, path[..., None])[..., 0].exp() * keep
            mean_e = e_match.sum(1) / keep.sum(1).clamp_min(1)
            out = torch.cat([path.flatten().float(), delta.amax(-1), mean_e])
        out.tolist()
        del raw, keep, pts, cand, gap, emit, trans, delta, ptrs, last, path, e_match, mean_e, out


# ---------------------------------------------------------------- bike-fit pose fine-tuning (stacked hourglass)


class _Residual(_nn.Module):
    """A bottleneck residual module of the hourglass network (batch norm, ReLU, 1x1, 3x3, 1x1)."""

    def __init__(self, ch):
        super().__init__()
        mid = ch // 2
        self.body = _nn.Sequential(_nn.BatchNorm2d(ch), _nn.ReLU(), _nn.Conv2d(ch, mid, 1),
                                   _nn.BatchNorm2d(mid), _nn.ReLU(), _nn.Conv2d(mid, mid, 3, 1, 1),
                                   _nn.BatchNorm2d(mid), _nn.ReLU(), _nn.Conv2d(mid, ch, 1))

    def forward(self, x):
        return x + self.body(x)


class _Hourglass(_nn.Module):
    """A recursive hourglass: a skip branch, max-pool, a residual, the inner hourglass (or a residual at the
    bottom), a residual, nearest upsampling and the sum."""

    def __init__(self, depth, ch):
        super().__init__()
        self.skip, self.down, self.up = _Residual(ch), _Residual(ch), _Residual(ch)
        self.inner = _Hourglass(depth - 1, ch) if depth > 1 else _Residual(ch)

    def forward(self, x):
        y = self.up(self.inner(self.down(_F.max_pool2d(x, 2))))
        return self.skip(x) + _F.interpolate(y, scale_factor=2.0, mode="nearest")


class _BikeFitNet(_nn.Module):
    """A stem to 1/4 (a stride-2 7x7 convolution, a residual, max-pool), hourglass stacks with a heatmap head each
    and the heatmaps and features fed back between stacks."""

    def __init__(self, ch, depth, stacks, n_kp):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, ch, 7, 2, 3), _nn.BatchNorm2d(ch), _nn.ReLU(), _Residual(ch),
                                   _nn.MaxPool2d(2))
        self.hg = _nn.ModuleList(_Hourglass(depth, ch) for _ in range(stacks))
        self.feat = _nn.ModuleList(_nn.Sequential(_Residual(ch), _nn.Conv2d(ch, ch, 1), _nn.BatchNorm2d(ch),
                                                  _nn.ReLU()) for _ in range(stacks))
        self.heat = _nn.ModuleList(_nn.Conv2d(ch, n_kp, 1) for _ in range(stacks))
        self.back_f = _nn.ModuleList(_nn.Conv2d(ch, ch, 1) for _ in range(stacks - 1))
        self.back_h = _nn.ModuleList(_nn.Conv2d(n_kp, ch, 1) for _ in range(stacks - 1))

    def forward(self, x):
        x = self.stem(x)
        outs = []
        for i, hg in enumerate(self.hg):
            f = self.feat[i](hg(x))
            h = self.heat[i](f)
            outs.append(h.float())
            if i < len(self.back_f):
                x = x + self.back_f[i](f) + self.back_h[i](h)
        return outs


def _soft_argmax(heat):
    n, k, h, w = heat.shape
    p = heat.flatten(2).softmax(-1).view(n, k, h, w)
    xs = torch.linspace(0, 1, w, device=heat.device)
    ys = torch.linspace(0, 1, h, device=heat.device)
    return torch.stack([(p.sum(2) * xs).sum(-1), (p.sum(3) * ys).sum(-1)], -1)


def _joint_angle(a, b, c):
    u, v = a - b, c - b
    cos = (u * v).sum(-1) / (u.norm(dim=-1) * v.norm(dim=-1)).clamp_min(1e-6)
    return torch.rad2deg(torch.acos(cos.clamp(-1.0, 1.0)))


@_workload("bike-fit pose fine-tuning (random init standing in for a pretrained stacked hourglass network): 6-24 side-view photos of riders on trainers a step (drawn, at most 12 x 256^2 pixels) of 192, 256 or 320 px (drawn per step, a multiple of 64 for the hourglass's four halvings at 1/4) drawn on the device, target Gaussian heatmaps at 1/4 for 18 keypoints (rider joints plus saddle, handlebar, crank centre and both pedal spindles) at keypoints drawn uniformly, about 15 % marked invisible; a stem (a stride-2 7x7 convolution, a bottleneck residual, max-pool, 128 channels) frozen in eval mode, two stacked hourglasses of depth 4 (bottleneck residual modules, max-pool down, nearest upsampling) with a heatmap head each and feedback between stacks; a visibility-masked heatmap MSE on both stacks plus an L1 loss on soft-argmax keypoints and on the knee angle at the last stack; AdamW, clipping, bf16 autocast, 122 steps; the losses read back every 10 steps and every 30 steps a no-grad pass over 8 photos of 320 px with the mean keypoint error, PCK at 0.05 and the knee- and hip-angle errors read back")
def bikefit_hourglass_finetune(rng):
    ch, depth, stacks, n_kp = _smoke(128, 16), _smoke(4, 2), 2, 18
    model = _BikeFitNet(ch, depth, stacks, n_kp).cuda()
    model.stem.requires_grad_(False)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=2e-4, weight_decay=1e-4)
    res_opts, budget = _smoke([192, 256, 320], [32, 64]), _smoke(12 * 256 * 256, 3 * 64 * 64)
    knee, hip, ankle, shoulder = (11, 13, 15, 5)

    def photos(b, r):
        x = torch.randn(b, 3, r, r, device="cuda")
        kp = torch.rand(b, n_kp, 2, device="cuda") * 0.9 + 0.05
        vis = (torch.rand(b, n_kp, device="cuda") > 0.15).float()
        g = r // 4
        grid = torch.linspace(0, 1, g, device="cuda")
        gx = (-(grid[None, None] - kp[..., 0:1]).pow(2) / (2 * 0.02**2)).exp()
        gy = (-(grid[None, None] - kp[..., 1:2]).pow(2) / (2 * 0.02**2)).exp()
        return x, kp, vis, gy[..., :, None] * gx[..., None, :]

    def losses(outs, kp, vis, target):
        l_h = sum(((o - target).pow(2).mean((2, 3)) * vis).sum() / vis.sum().clamp_min(1.0) for o in outs)
        est = _soft_argmax(outs[-1])
        l_kp = ((est - kp).abs().sum(-1) * vis).sum() / vis.sum().clamp_min(1.0)
        a_est = _joint_angle(est[:, hip], est[:, knee], est[:, ankle])
        a_true = _joint_angle(kp[:, hip], kp[:, knee], kp[:, ankle])
        return 1000.0 * l_h, l_kp, (a_est - a_true).abs().mean() / 90.0

    steps = _smoke(122, 3)
    for step in range(steps):
        model.train()
        model.stem.eval()
        r = rng.choice(res_opts)
        b = min(rng.randint(_smoke(6, 1), _smoke(24, 3)), max(1, budget // (r * r)))
        x, kp, vis, target = photos(b, r)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            outs = model(x)
        l_h, l_kp, l_ang = losses(outs, kp, vis, target)
        loss = l_h + l_kp + 0.1 * l_ang
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_h.detach(), l_kp.detach(), l_ang.detach()]).tolist()
        del x, kp, vis, target, outs, l_h, l_kp, l_ang, loss
        if (step + 1) % _smoke(30, 2) == 0:
            model.eval()
            with torch.no_grad():
                r = max(res_opts)
                x, kp, vis, target = photos(_smoke(8, 2), r)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    outs = model(x)
                est = _soft_argmax(outs[-1])
                dist = (est - kp).norm(dim=-1)
                k_err = (_joint_angle(est[:, hip], est[:, knee], est[:, ankle])
                         - _joint_angle(kp[:, hip], kp[:, knee], kp[:, ankle])).abs().mean()
                h_err = (_joint_angle(est[:, shoulder], est[:, hip], est[:, knee])
                         - _joint_angle(kp[:, shoulder], kp[:, hip], kp[:, knee])).abs().mean()
                out = torch.stack([(dist * vis).sum() / vis.sum().clamp_min(1.0),
                                   ((dist < 0.05).float() * vis).sum() / vis.sum().clamp_min(1.0), k_err, h_err])
            out.tolist()
            del x, kp, vis, target, outs, est, dist, k_err, h_err, out


# ---------------------------------------------------------------- ride-trajectory diffusion sampler (1-d U-Net)


class _Res1d(_nn.Module):
    """A 1-d residual block with group norm, SiLU and the conditioning embedding added per channel."""

    def __init__(self, cin, cout, temb):
        super().__init__()
        self.n1, self.c1 = _nn.GroupNorm(8, cin), _nn.Conv1d(cin, cout, 3, 1, 1)
        self.t = _nn.Linear(temb, cout)
        self.n2, self.c2 = _nn.GroupNorm(8, cout), _nn.Conv1d(cout, cout, 3, 1, 1)
        self.skip = _nn.Conv1d(cin, cout, 1) if cin != cout else _nn.Identity()

    def forward(self, x, te):
        h = self.c1(_F.silu(self.n1(x))) + self.t(te)[:, :, None]
        return self.skip(x) + self.c2(_F.silu(self.n2(h)))


class _TrajUnet(_nn.Module):
    """A 1-d U-Net over waypoint sequences: residual blocks at three resolutions (stride-2 convolutions down,
    nearest upsampling with skips up), self-attention at the bottom; the timestep's sine features plus the
    condition (origin, destination and hour features through an MLP) as the block embedding."""

    def __init__(self, widths, temb, n_cond, heads):
        super().__init__()
        c0, c1, c2 = widths
        self.temb = mlp(c0, temb, temb, act=_nn.SiLU)
        self.cond = mlp(n_cond, temb, temb, act=_nn.SiLU)
        self.inp = _nn.Conv1d(2, c0, 3, 1, 1)
        self.e0 = _Res1d(c0, c0, temb)
        self.d1, self.e1 = _nn.Conv1d(c0, c0, 3, 2, 1), _Res1d(c0, c1, temb)
        self.d2, self.e2 = _nn.Conv1d(c1, c1, 3, 2, 1), _Res1d(c1, c2, temb)
        self.an, self.qkv, self.ao = _nn.GroupNorm(8, c2), _nn.Linear(c2, 3 * c2), _nn.Linear(c2, c2)
        self.m = _Res1d(c2, c2, temb)
        self.u2, self.u1, self.u0 = _Res1d(2 * c2, c1, temb), _Res1d(2 * c1, c0, temb), _Res1d(2 * c0, c0, temb)
        self.out = _nn.Sequential(_nn.GroupNorm(8, c0), _nn.SiLU(), _nn.Conv1d(c0, 2, 3, 1, 1))
        self.c0, self.heads = c0, heads

    def forward(self, x, cond, t):
        te = self.temb(_sincos(t, self.c0)) + self.cond(cond)
        h0 = self.e0(self.inp(x), te)
        h1 = self.e1(self.d1(h0), te)
        h2 = self.e2(self.d2(h1), te)
        a = self.an(h2).transpose(1, 2)
        q, k, v = self.qkv(a).chunk(3, -1)
        m = self.m(h2 + self.ao(_mha(q, k, v, self.heads)).transpose(1, 2), te)
        u = self.u2(torch.cat([m, h2], 1), te)
        u = self.u1(torch.cat([_F.interpolate(u, scale_factor=2.0, mode="nearest"), h1], 1), te)
        u = self.u0(torch.cat([_F.interpolate(u, scale_factor=2.0, mode="nearest"), h0], 1), te)
        return self.out(u)


@_workload("ride-trajectory diffusion sampling (random init, a 1-d U-Net denoiser with classifier-free guidance): 75-78 requests (drawn) of 4-32 synthetic rides (drawn) of 64-256 waypoints (drawn per request, a multiple of 16), each conditioned on an origin and a destination (drawn on the device) and an hour of day (drawn per request) by 14 features (coordinates, their difference and distance, hour sine and cosine, weekday flag, e-bike flag, ...) through an MLP; a 1-d U-Net (widths 96/192/256, residual blocks with group norm, stride-2 convolutions down to 1/4, one self-attention layer of 8 heads at the bottom, nearest upsampling with skips) with a timestep MLP; 12-40 DDIM steps (drawn per request) over a 1,000-step cosine schedule with a guidance scale of 1.5-5 (drawn per request), the conditional and unconditional (condition zeroed) passes in one doubled batch under bf16 autocast; waypoints anchored to the origin and the destination by a linear ramp; per ride the path length, the detour ratio over the straight line and the maximum turning angle; each request's results read back once")
def ride_trajectory_diffusion_sample(rng):
    widths, temb, heads, n_cond = _smoke([96, 192, 256], [16, 16, 32]), _smoke(256, 32), _smoke(8, 2), 14
    model = _TrajUnet(widths, temb, n_cond, heads).cuda().eval()
    model.requires_grad_(False)
    s = torch.arange(1001, dtype=torch.float64) / 1000
    f = torch.cos((s + 0.008) / 1.008 * math.pi / 2) ** 2
    abar = (f[1:] / f[0]).clamp(1e-5, 1.0).tolist()
    lo, hi = _smoke(64, 16), _smoke(256, 32)
    nreq = rng.randint(_smoke(75, 2), _smoke(78, 3))
    for _ in range(nreq):
        b, n = rng.randint(_smoke(4, 1), _smoke(32, 2)), rng.randint(lo // 16, hi // 16) * 16
        n_steps, g, hour = rng.randint(_smoke(12, 2), _smoke(40, 3)), rng.uniform(1.5, 5.0), rng.randint(0, 23)
        ts = [int(round(999 * (1 - i / n_steps))) for i in range(n_steps)] + [-1]
        with torch.no_grad():
            o, dst = torch.rand(b, 2, device="cuda"), torch.rand(b, 2, device="cuda")
            ang = torch.full((b, 1), 2 * math.pi * hour / 24, device="cuda")
            cond = torch.cat([o, dst, dst - o, (dst - o).norm(dim=-1, keepdim=True), ang.sin(), ang.cos(),
                              torch.rand(b, 5, device="cuda")], -1)
            cond2 = torch.cat([cond, torch.zeros_like(cond)], 0)
            ramp = torch.linspace(0, 1, n, device="cuda")
            line = o[:, :, None] + (dst - o)[:, :, None] * ramp
            x = torch.randn(b, 2, n, device="cuda")
            for t, t_next in zip(ts[:-1], ts[1:]):
                a, a_next = abar[t], (abar[t_next] if t_next >= 0 else 1.0)
                tt = torch.full((2 * b,), float(t), device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    eps = model(torch.cat([x, x], 0), cond2, tt).float()
                e_c, e_u = eps.chunk(2, 0)
                e = e_u + g * (e_c - e_u)
                x0 = ((x - math.sqrt(1 - a) * e) / math.sqrt(a)).clamp(-3.0, 3.0)
                x = math.sqrt(a_next) * x0 + math.sqrt(1 - a_next) * e
                del tt, eps, e_c, e_u, e, x0
            path = line + 0.05 * x * (ramp * (1 - ramp) * 4)
            seg = path[:, :, 1:] - path[:, :, :-1]
            length = seg.norm(dim=1).sum(-1)
            head = torch.atan2(seg[:, 1], seg[:, 0])
            turn = torch.remainder(head[:, 1:] - head[:, :-1] + math.pi, 2 * math.pi) - math.pi
            out = torch.stack([length, length / (dst - o).norm(dim=-1).clamp_min(1e-3), turn.abs().amax(-1)], -1)
        out.tolist()
        del o, dst, ang, cond, cond2, ramp, line, x, path, seg, length, head, turn, out


# ---------------------------------------------------------------- bike-share station network demand (message passing)


class _StationMpnn(_nn.Module):
    """Encode-process-decode message passing: node and edge encoders, layers of an edge update (an MLP over the edge
    and its two end nodes) and a node update (an MLP over the node and the sum of its incoming messages by index_add),
    residual with layer norm; a decoder to log-rates and dock-state logits."""

    def __init__(self, n_node, n_edge, d, layers, horizon):
        super().__init__()
        self.node_in, self.edge_in = mlp(n_node, d, d, act=_nn.SiLU), mlp(n_edge, d, d, act=_nn.SiLU)
        self.edge_up = _nn.ModuleList(mlp(3 * d, d, d, act=_nn.SiLU) for _ in range(layers))
        self.node_up = _nn.ModuleList(mlp(2 * d, d, d, act=_nn.SiLU) for _ in range(layers))
        self.en = _nn.ModuleList(_nn.LayerNorm(d) for _ in range(layers))
        self.nn_ = _nn.ModuleList(_nn.LayerNorm(d) for _ in range(layers))
        self.dec = mlp(d, d, 2 * horizon + 2, act=_nn.SiLU)

    def forward(self, node, edge, src, dst):
        h, e = self.node_in(node), self.edge_in(edge)
        for eu, nu, en, nn_ in zip(self.edge_up, self.node_up, self.en, self.nn_):
            e = en(e + eu(torch.cat([e, h.index_select(0, src), h.index_select(0, dst)], -1)))
            agg = e.new_zeros(h.shape[0], e.shape[-1]).index_add_(0, dst, e)
            h = nn_(h + nu(torch.cat([h, agg.to(h.dtype)], -1)))
        return self.dec(h).float()


@_workload("bike-share station network demand training (random init, an encode-process-decode message-passing network): one city graph a step of 200-1,200 stations (drawn) with 16 features each (bikes, docks, capacity, last 6 hours of departures and arrivals, weather, hour) and 10 incoming edges a station from stations drawn at random (8 edge features: distance, elevation gain, bike-lane share, typical trip count, ...), drawn on the device; node and edge MLP encoders (width 160), 8 message-passing layers (an edge MLP over the edge and both end nodes by index_select, messages summed into their stations by index_add in the edges' dtype, a node MLP, residuals with layer norm), a decoder to log-rates of departures and arrivals for each of the next 3 hours and empty- and full-dock logits; a Poisson likelihood on counts drawn by torch.poisson and BCE on the dock states; AdamW, clipping, bf16 autocast, 400 steps; the losses read back every 20 steps and every 80 steps a no-grad pass over a graph of 1,200 stations with the departure mean absolute error and the empty-dock accuracy read back")
def station_mpnn_demand_train(rng):
    n_node, n_edge, k, horizon = 16, 8, 10, 3
    d, layers = _smoke(160, 16), _smoke(8, 2)
    model = _StationMpnn(n_node, n_edge, d, layers, horizon).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    lo, hi = _smoke(200, 8), _smoke(1200, 24)

    def city(n):
        node = torch.randn(n, n_node, device="cuda")
        dst = torch.arange(n, device="cuda").repeat_interleave(k)
        src = torch.randint(0, n, (n * k,), device="cuda")
        edge = torch.randn(n * k, n_edge, device="cuda")
        counts = torch.poisson(torch.rand(n, 2 * horizon, device="cuda") * 5.0)
        state = (torch.rand(n, 2, device="cuda") < 0.1).float()
        return node, edge, src, dst, counts, state

    steps = _smoke(400, 3)
    for step in range(steps):
        model.train()
        n = rng.randint(lo, hi)
        node, edge, src, dst, counts, state = city(n)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(node, edge, src, dst)
        l_cnt = _F.poisson_nll_loss(out[:, :2 * horizon], counts, log_input=True)
        l_dock = _F.binary_cross_entropy_with_logits(out[:, 2 * horizon:], state)
        loss = l_cnt + l_dock
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_cnt.detach(), l_dock.detach()]).tolist()
        del node, edge, src, dst, counts, state, out, l_cnt, l_dock, loss
        if (step + 1) % _smoke(80, 2) == 0:
            model.eval()
            with torch.no_grad():
                node, edge, src, dst, counts, state = city(hi)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    out = model(node, edge, src, dst)
                res = torch.stack([(out[:, :horizon].exp() - counts[:, :horizon]).abs().mean(),
                                   ((out[:, 2 * horizon] > 0).float() == state[:, 0]).float().mean()])
            res.tolist()
            del node, edge, src, dst, counts, state, out, res

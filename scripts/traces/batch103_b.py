"""The hundred-and-third batch of held-out workloads for record.py, second half (see batch103.py): automotive
engineering and in-vehicle systems, written in torch alone. Crash-mesh graph-network training (a MeshGraphNet-style
encode-process-decode network by index_select and index_add over body-panel shell meshes of drawn sizes, per-node
acceleration and plastic-strain targets, a no-grad rollout in its evaluations), powertrain calibration surrogate
training (a deep ensemble of heteroscedastic MLPs written as batched matrix products over engine operating points,
bootstrap batches, and a gradient search over the calibration knobs of a drawn set of operating points against a NOx
and knock-margin constraint), an in-cabin radar gesture service (range, Doppler and angle FFTs of int16 FMCW radar
frames of a drawn sensor configuration, a convnet per frame and a causal dilated temporal convolution, per-frame gesture
decisions) and cabin-occupant LoRA fine-tuning (a frozen vision transformer over RGB-IR cabin images of drawn
resolutions with low-rank adapters on its attention, per-seat queries for occupancy, seatbelt and posture). Same
conventions as batch103.py: nothing downloaded, data drawn at random on the device (or in reused pinned host buffers
for the service), `rng` for every shape, count and sampled choice, sizes through `_smoke(real, small)`; no control
flow reads a tensor's value, no boolean-mask indexing; losses and metrics read back only at logging points or once per
request. radar_gesture_serve uploads its radar frames on a side stream (workload_helpers.SideUploads.ahead); the other
three are single-stream. The graph network, the convnets and the transformer run under bf16 autocast (the radar FFTs
in fp32; the ensemble in fp32). The position table is sized for the largest patch grid that can be drawn.

Real sizes checked before recording: see record_new103.sh's header.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, _mha, mlp

_b = Batch()
_workload, _smoke = _b.workload, _b.smoke
register = _b.register

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- crash-mesh graph network (MeshGraphNet-style)


class _ShellGN(_nn.Module):
    def __init__(self, n_node_in, n_edge_in, d, layers, n_mat, n_out):
        super().__init__()
        self.node_enc = mlp(n_node_in, d, d, act=_nn.SiLU, norm=True)
        self.edge_enc = mlp(n_edge_in, d, d, act=_nn.SiLU, norm=True)
        self.mat = _nn.Embedding(n_mat, d)
        self.edge_mlp = _nn.ModuleList(mlp(3 * d, d, d, act=_nn.SiLU, norm=True) for _ in range(layers))
        self.node_mlp = _nn.ModuleList(mlp(2 * d, d, d, act=_nn.SiLU, norm=True) for _ in range(layers))
        self.dec = mlp(d, d, n_out, act=_nn.SiLU)

    def forward(self, nodes, mat, edges, snd, rcv):
        h = self.node_enc(nodes) + self.mat(mat)
        e = self.edge_enc(edges)
        for em, nm in zip(self.edge_mlp, self.node_mlp):
            e = e + em(torch.cat([e, h.index_select(0, snd), h.index_select(0, rcv)], -1))
            agg = h.new_zeros(h.shape).index_add(0, rcv, e.to(h.dtype))
            h = h + nm(torch.cat([h, agg], -1))
        return self.dec(h).float()


def _shell_mesh(n, cols, spacing):
    """A quad shell mesh of n nodes in rows of `cols`: edges to the right, down and diagonal neighbours, both ways
    (clamped into range at the last row), and the nodes' rest coordinates (n, 3) with a drawn out-of-plane bulge."""
    idx = torch.arange(n, device="cuda")
    rest = torch.stack([(idx % cols).float() * spacing, (idx // cols).float() * spacing,
                        0.02 * torch.randn(n, device="cuda")], -1)
    snd = idx.repeat(3)
    rcv = torch.cat([idx + 1, idx + cols, idx + cols + 1]).clamp(max=n - 1)
    return rest, torch.cat([snd, rcv]), torch.cat([rcv, snd])


def _edge_features(pos, rest, snd, rcv):
    dw = pos.index_select(0, rcv) - pos.index_select(0, snd)
    dm = rest.index_select(0, rcv) - rest.index_select(0, snd)
    return torch.cat([dw, dw.norm(dim=-1, keepdim=True), dm, dm.norm(dim=-1, keepdim=True)], -1)


@_workload("crash-mesh graph-network training (random init, a MeshGraphNet-style crash-simulation surrogate): one body-panel shell mesh a step of 4,000-14,000 nodes (drawn) in rows of 60-160 (drawn), edges to the right, lower and diagonal neighbours both ways (6 per node: a row's last node links to the next row's first, indices past the last node clamped to it), rest coordinates from the grid (spacing 0.01, a random out-of-plane offset), deformed positions, two frames of velocity history with injected noise, a 4-way node type, a shell thickness and a 12-way material drawn on the device; node and edge encoders (width 128, LayerNorm), 8 message-passing layers (edge MLP on edge and both end nodes by index_select, sum aggregation by index_add, node MLP, residual), a decoder to 3 acceleration components and a plastic-strain increment; MSE against random targets on nodes not of the fixed type (a float mask multiplied in); Adam with exponential learning-rate decay set on the host, clipping, bf16 autocast, 360 steps; the loss read back every 25 steps and every 90 steps a no-grad 12-step rollout of a 14,000-node mesh (positions and velocities integrated, fixed nodes held by torch.where) with the maximum displacement per step and the total plastic strain read back")
def crash_mesh_gnn_train(rng):
    d, layers, n_mat, n_types = _smoke(128, 16), _smoke(8, 2), 12, 4
    model = _ShellGN(6 + n_types + 1, 8, d, layers, n_mat, 4).cuda()
    base_lr = 1e-3
    opt = torch.optim.Adam(model.parameters(), lr=base_lr)
    lo_n, hi_n = _smoke(4000, 200), _smoke(14000, 400)

    def mesh(n, cols):
        rest, snd, rcv = _shell_mesh(n, cols, 0.01)
        pos = rest + 0.05 * torch.randn(n, 3, device="cuda").cumsum(0) / math.sqrt(n)
        vel = 0.01 * torch.randn(n, 6, device="cuda")
        ntype = torch.randint(0, n_types, (n,), device="cuda")
        thick = torch.rand(n, 1, device="cuda") * 2 + 0.5
        mat = torch.randint(0, n_mat, (n,), device="cuda")
        return rest, snd, rcv, pos, vel, ntype, thick, mat

    def node_in(vel, ntype, thick):
        return torch.cat([vel, _F.one_hot(ntype, n_types).float(), thick], -1)

    steps = _smoke(360, 3)
    for step in range(steps):
        model.train()
        for g in opt.param_groups:
            g["lr"] = base_lr * 0.1 ** (step / steps)
        n, cols = rng.randint(lo_n, hi_n), rng.randint(_smoke(60, 10), _smoke(160, 20))
        rest, snd, rcv, pos, vel, ntype, thick, mat = mesh(n, cols)
        noisy = vel + 0.003 * torch.randn_like(vel)
        target = torch.randn(n, 4, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(node_in(noisy, ntype, thick), mat, _edge_features(pos, rest, snd, rcv), snd, rcv)
        free = (ntype != 1).float()[:, None]
        loss = ((pred - target).pow(2) * free).sum() / (4 * free.sum())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 25 == 0:
            loss.detach().tolist()
        del rest, snd, rcv, pos, vel, ntype, thick, mat, noisy, target, pred, free, loss
        if (step + 1) % _smoke(90, 2) == 0:
            model.eval()
            with torch.no_grad():
                rest, snd, rcv, pos, vel, ntype, thick, mat = mesh(hi_n, rng.randint(_smoke(60, 10), _smoke(160, 20)))
                fixed = (ntype == 1)[:, None]
                strain = torch.zeros(hi_n, device="cuda")
                peaks = []
                for _ in range(_smoke(12, 2)):
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        out = model(node_in(vel, ntype, thick), mat, _edge_features(pos, rest, snd, rcv), snd, rcv)
                    v_new = torch.where(fixed, torch.zeros_like(vel[:, 3:]), vel[:, 3:] + 0.001 * out[:, :3])
                    pos = pos + v_new
                    vel = torch.cat([vel[:, 3:], v_new], -1)
                    strain = strain + _F.softplus(out[:, 3]) * 1e-3
                    peaks.append((pos - rest).norm(dim=-1).max())
                res = torch.cat([torch.stack(peaks), strain.sum()[None]])
            res.tolist()
            del rest, snd, rcv, pos, vel, ntype, thick, mat, fixed, strain, peaks, out, v_new, res


# ---------------------------------------------------------------- powertrain calibration (deep-ensemble surrogate)


class _Ensemble(_nn.Module):
    """m independent MLPs evaluated together: each layer one baddbmm over (m, n, width), SiLU between; each member
    outputs a mean and a log-variance per target."""

    def __init__(self, m, din, hidden, layers, dout):
        super().__init__()
        dims = [din] + [hidden] * layers + [2 * dout]
        self.w = _nn.ParameterList(_nn.Parameter(torch.randn(m, a, c) / math.sqrt(a)) for a, c in zip(dims, dims[1:]))
        self.b = _nn.ParameterList(_nn.Parameter(torch.zeros(m, 1, c)) for c in dims[1:])

    def forward(self, x):
        for i, (w, b) in enumerate(zip(self.w, self.b)):
            x = torch.baddbmm(b, x, w)
            if i < len(self.w) - 1:
                x = _F.silu(x)
        mu, logvar = x.chunk(2, -1)
        return mu, logvar.clamp(-8, 4)


@_workload("powertrain calibration surrogate training (random init, a deep ensemble of heteroscedastic MLPs over engine test-bench data, fp32): a device-resident table of 200,000 operating points with 10 inputs (speed, load and 8 calibration knobs: spark advance, EGR rate, intake and exhaust cam phasing, rail pressure, injection timing, boost, lambda) and 7 responses (BSFC, NOx, soot, CO, HC, exhaust temperature, knock margin) from a fixed random smooth function plus noise; 8 members of 4 hidden layers of 256 (SiLU) evaluated together by baddbmm, each member on its own bootstrap batch of 256-2,048 rows (drawn per step, gathered by drawn indices), Gaussian negative log-likelihood; AdamW, 3,450 steps, the loss read back every 50 steps; every 150 steps a calibration search with the ensemble frozen: 32-128 operating points (drawn) of drawn speed and load, the 8 knobs as sigmoid logits optimised by Adam for 30 steps against the ensemble's mean BSFC plus hinge penalties of weight 10 on NOx's upper confidence bound above 0.5 and knock margin's lower confidence bound below 0 (mean plus or minus 2 standard deviations over members and noise), the final objective, NOx bound and knobs read back once")
def powertrain_calib_ensemble_train(rng):
    m, hidden, layers, din, dout = _smoke(8, 3), _smoke(256, 16), _smoke(4, 2), 10, 7
    n_data = _smoke(200000, 2000)
    model = _Ensemble(m, din, hidden, layers, dout).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    proj = torch.randn(din, 32, device="cuda")
    mix = torch.randn(64, dout, device="cuda") / 8
    xs = torch.rand(n_data, din, device="cuda")
    feat = xs @ proj
    ys = torch.cat([feat.sin(), feat.cos()], -1) @ mix + 0.05 * torch.randn(n_data, dout, device="cuda")
    del feat
    nox, knock = 1, 6

    steps = _smoke(3450, 4)
    for step in range(steps):
        bsz = rng.randint(_smoke(256, 8), _smoke(2048, 32))
        idx = torch.randint(0, n_data, (m, bsz), device="cuda")
        x, y = xs[idx], ys[idx]
        mu, lv = model(x)
        loss = (0.5 * (lv + (y - mu).pow(2) * torch.exp(-lv))).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 50 == 0:
            loss.detach().tolist()
        del idx, x, y, mu, lv, loss
        if (step + 1) % _smoke(150, 2) == 0:
            k = rng.randint(_smoke(32, 2), _smoke(128, 4))
            model.requires_grad_(False)
            op = torch.rand(k, 2, device="cuda")
            z = torch.zeros(k, din - 2, device="cuda", requires_grad=True)
            search = torch.optim.Adam([z], lr=0.05)
            for _ in range(_smoke(30, 2)):
                x = torch.cat([op, torch.sigmoid(z)], -1)
                mu, lv = model(x[None].expand(m, k, din))
                spread = (mu.var(0) + lv.exp().mean(0)).sqrt()
                mean = mu.mean(0)
                nox_ucb = mean[:, nox] + 2 * spread[:, nox]
                knock_lcb = mean[:, knock] - 2 * spread[:, knock]
                obj = mean[:, 0] + 10 * _F.relu(nox_ucb - 0.5) + 10 * _F.relu(-knock_lcb)
                search.zero_grad(set_to_none=True)
                obj.sum().backward()
                search.step()
            out = torch.cat([obj.detach(), nox_ucb.detach(), torch.sigmoid(z.detach()).flatten()])
            out.tolist()
            model.requires_grad_(True)
            del op, z, search, x, mu, lv, spread, mean, nox_ucb, knock_lcb, obj, out


# ---------------------------------------------------------------- in-cabin radar gestures (side-stream service)


class _CausalTCN(_nn.Module):
    """Dilated 1-d convolutions (kernel 3) padded on the left only, residual, over per-frame features."""

    def __init__(self, d, dilations):
        super().__init__()
        self.dil = dilations
        self.convs = _nn.ModuleList(_nn.Conv1d(d, d, 3, dilation=r) for r in dilations)
        self.norms = _nn.ModuleList(_nn.BatchNorm1d(d) for _ in dilations)

    def forward(self, x):
        for conv, norm, r in zip(self.convs, self.norms, self.dil):
            x = x + _F.relu(norm(conv(_F.pad(x, (2 * r, 0)))))
        return x


class _GestureNet(_nn.Module):
    def __init__(self, cin, widths, dilations, n_cls):
        super().__init__()
        mods, c = [], cin
        for i, w in enumerate(widths):
            mods += [_nn.Conv2d(c, w, 3, 1 if i == 0 else 2, 1, bias=False), _nn.BatchNorm2d(w), _nn.ReLU()]
            c = w
        self.cnn = _nn.Sequential(*mods)
        self.tcn = _CausalTCN(c, dilations)
        self.head = _nn.Conv1d(c, n_cls, 1)

    def forward(self, maps, n, f):
        z = self.cnn(maps).mean((2, 3)).view(n, f, -1).transpose(1, 2)
        return self.head(self.tcn(z)).float()  # (n, classes, frames)


@_workload("in-cabin radar gesture service (random init, a 60 GHz FMCW gesture recogniser, no grad): 3,400-3,500 requests (drawn), each 1-4 sequences (drawn) of 16-48 radar frames (drawn) from a car whose sensor configuration is drawn from (chirps, samples) = (32, 64), (64, 64) or (32, 128) with 4 receive antennas, int16 ADC samples uploaded as one span from two reused pinned host buffers on a side stream one request ahead (workload_helpers.SideUploads.ahead); on the device in fp32: Hann windows, a range rfft over the samples, a Doppler fft over the chirps rolled to centre zero velocity, the log magnitude averaged over antennas (range-Doppler map) and an angle fft over the antennas zero-padded to 16 (range-angle map, the log of the magnitude's max over Doppler), both resized bilinearly to 32 x 32; under bf16 autocast a channels-last convnet of 32/64/128/128 (strides 1, 2, 2, 2, batch norm) per frame, mean pooling, a causal dilated temporal convolution (dilations 1/2/4/8, residual) and 13 per-frame classes (12 gestures and none); softmax probabilities smoothed by a causal 8-frame moving average (zero-padded at the start), the last frame's class and confidence and each sequence's strongest frame (the frame of the highest smoothed probability of classes 1-12) read back once per request")
def radar_gesture_serve(rng):
    configs = _smoke([(32, 64), (64, 64), (32, 128)], [(8, 16), (16, 16)])
    rx, n_cls, max_seq, max_f = 4, 13, _smoke(4, 2), _smoke(48, 6)
    model = _GestureNet(2, _smoke([32, 64, 128, 128], [8, 8]), _smoke([1, 2, 4, 8], [1, 2]), n_cls)
    model = model.cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    big = max(c * s for c, s in configs) * rx
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(-2048, 2048, (max_seq * max_f * big,), dtype=torch.int16, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    windows = {n: torch.hann_window(n, device="cuda") for n in sorted({v for cfg in configs for v in cfg})}
    plan = []
    for _ in range(rng.randint(_smoke(3400, 3), _smoke(3500, 4))):
        chirps, samples = rng.choice(configs)
        plan.append((rng.randint(1, max_seq), rng.randint(_smoke(16, 3), max_f), chirps, samples))

    for (n, f, chirps, samples), raw in up.ahead(plan, lambda p: (p[0] * p[1] * rx * p[2] * p[3],)):
        with torch.no_grad():
            cube = raw.view(n * f, rx, chirps, samples).float() / 2048
            rng_fft = torch.fft.rfft(cube * windows[samples], dim=-1)[..., :samples // 2]
            dop = torch.fft.fft(rng_fft * windows[chirps][:, None], dim=2).roll(chirps // 2, 2)
            rd = dop.abs().add(1e-3).log().mean(1, keepdim=True)
            ang = torch.fft.fft(dop, n=16, dim=1).abs().amax(2)[:, None]
            maps = torch.cat([_F.interpolate(rd, size=(32, 32), mode="bilinear", align_corners=False),
                              _F.interpolate(ang.add(1e-3).log(), size=(32, 32), mode="bilinear",
                                             align_corners=False)], 1).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(maps, n, f)
            prob = _F.avg_pool1d(_F.pad(logits.softmax(1), (7, 0)), 8, 1)
            conf, cls = prob[:, :, -1].max(1)
            strongest = prob[:, 1:].amax(1).argmax(-1)
            out = torch.cat([cls.float(), conf, strongest.float()])
        out.tolist()
        del raw, cube, rng_fft, dop, rd, ang, maps, logits, prob, conf, cls, strongest, out


# ---------------------------------------------------------------- cabin occupants (ViT with LoRA adapters)


class _LoRA(_nn.Module):
    """A frozen linear layer plus a trainable low-rank update (B A x, B zero at the start, scaled alpha / r)."""

    def __init__(self, base, r, alpha):
        super().__init__()
        self.base, self.scale = base, alpha / r
        self.down = _nn.Linear(base.in_features, r, bias=False)
        self.up = _nn.Linear(r, base.out_features, bias=False)
        _nn.init.zeros_(self.up.weight)

    def forward(self, x):
        return self.base(x) + self.up(self.down(x)) * self.scale


class _CabinViT(_nn.Module):
    def __init__(self, cin, patch, d, heads, layers, grid, seats, n_occ, n_pose):
        super().__init__()
        self.heads = heads
        self.patch = _nn.Conv2d(cin, d, patch, patch)
        self.pos = _nn.Parameter(0.02 * torch.randn(grid[0], grid[1], d))
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.seat_q = _nn.Parameter(0.02 * torch.randn(seats, d))
        self.kv = _nn.Linear(d, 2 * d)
        self.occ, self.belt, self.pose = _nn.Linear(d, n_occ), _nn.Linear(d, 1), _nn.Linear(d, n_pose)
        self.child = mlp(d, d, 1, act=_nn.GELU)

    def adapt(self, r, alpha):
        """Freezes everything so far and puts LoRA adapters on every block's qkv and output projections."""
        self.requires_grad_(False)
        for blk in self.blocks:
            blk.qkv, blk.proj = _LoRA(blk.qkv, r, alpha), _LoRA(blk.proj, r, alpha)
        for mod in (self.norm, self.kv, self.occ, self.belt, self.pose, self.child):
            mod.requires_grad_(True)
        self.seat_q.requires_grad_(True)

    def forward(self, img):
        x = self.patch(img)
        b, d, gh, gw = x.shape
        x = x.flatten(2).transpose(1, 2) + self.pos[:gh, :gw].reshape(1, gh * gw, d)
        for blk in self.blocks:
            x = blk(x)
        x = self.norm(x)
        k, v = self.kv(x).chunk(2, -1)
        s = _mha(self.seat_q[None].expand(b, -1, -1).to(k.dtype), k, v, self.heads)
        return (self.occ(s).float(), self.belt(s)[..., 0].float(), self.pose(s).float(),
                self.child(x.mean(1))[:, 0].float())


@_workload("cabin-occupant LoRA fine-tuning (random init standing in for a pretrained backbone, a vision transformer with low-rank adapters): 8-32 RGB-IR cabin images a step (drawn, at most 9,600 patches a step) of 192-320 x 256-448 px (drawn per step, multiples of 32), 4 channels drawn on the device; 16-px patches, a 20 x 28 position table sliced to the step's grid, 8 frozen pre-norm blocks (width 384, 6 heads) with rank-8 LoRA adapters (alpha 16) on the qkv and output projections; 5 learned seat queries attending over the patches (keys and values from one trainable projection), per seat a 5-way occupancy class, a seatbelt-fastened logit and a 4-way posture (out-of-position) class, and a child-present logit from the mean patch; cross-entropy for occupancy and posture (posture weighted 0.5) and binary cross-entropy for the belt (70% fastened) and child (20% present) logits, summed; only the adapters, the final LayerNorm, the seat queries, the key-value projection and the heads trained (AdamW, clipping), bf16 autocast, 360 steps; the losses read back every 20 steps and every 90 steps a no-grad evaluation of 16 images of 320 x 448 with occupancy and belt accuracy read back")
def cabin_occupant_vit_lora_train(rng):
    d, heads, layers, patch = _smoke(384, 32), _smoke(6, 2), _smoke(8, 1), _smoke(16, 8)
    seats, n_occ, n_pose = 5, 5, 4
    hmax, wmax, mult = _smoke(320, 48), _smoke(448, 64), _smoke(32, 16)
    model = _CabinViT(4, patch, d, heads, layers, (hmax // patch, wmax // patch), seats, n_occ, n_pose).cuda()
    model.adapt(8, 16)
    model.cuda()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3, weight_decay=0.01)
    budget = _smoke(9600, 64)

    def images(b, h, w):
        img = torch.randn(b, 4, h, w, device="cuda")
        occ = torch.randint(0, n_occ, (b, seats), device="cuda")
        belt = (torch.rand(b, seats, device="cuda") < 0.7).float()
        pose = torch.randint(0, n_pose, (b, seats), device="cuda")
        child = (torch.rand(b, device="cuda") < 0.2).float()
        return img, occ, belt, pose, child

    steps = _smoke(360, 3)
    for step in range(steps):
        model.train()
        h = rng.randint(_smoke(192, 32) // mult, hmax // mult) * mult
        w = rng.randint(_smoke(256, 32) // mult, wmax // mult) * mult
        b = rng.randint(_smoke(8, 2), max(_smoke(8, 2), min(_smoke(32, 4), budget // ((h // patch) * (w // patch)))))
        img, occ, belt, pose, child = images(b, h, w)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            o_log, b_log, p_log, c_log = model(img)
        l_o = _F.cross_entropy(o_log.flatten(0, 1), occ.flatten())
        l_b = _F.binary_cross_entropy_with_logits(b_log, belt)
        l_p = _F.cross_entropy(p_log.flatten(0, 1), pose.flatten())
        l_c = _F.binary_cross_entropy_with_logits(c_log, child)
        loss = l_o + l_b + 0.5 * l_p + l_c
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_o.detach(), l_b.detach(), l_p.detach(), l_c.detach()]).tolist()
        del img, occ, belt, pose, child, o_log, b_log, p_log, c_log, l_o, l_b, l_p, l_c, loss
        if (step + 1) % _smoke(90, 2) == 0:
            model.eval()
            with torch.no_grad():
                img, occ, belt, pose, child = images(_smoke(16, 2), hmax, wmax)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    o_log, b_log, p_log, c_log = model(img)
                acc = torch.stack([(o_log.argmax(-1) == occ).float().mean(),
                                   ((b_log > 0).float() == belt).float().mean()])
            acc.tolist()
            del img, occ, belt, pose, child, o_log, b_log, p_log, c_log, acc

"""The eighteenth batch's second half (batch18.py holds the first): AlphaZero self-play, PointPillars,
PaiNN molecular dynamics and ColBERT reranking (split only to keep files small, moved verbatim). Same conventions and plumbing as
batch18.py; record.py registers this module right after it, so that the batch's workloads keep their order.
"""

import copy
import math

import torch

from batch_common import Batch, upload as _upload

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


class _AzNet(torch.nn.Module):
    """AlphaZero's network for 9x9 Go, narrower: a 3x3 stem from 17 feature planes to 128 channels, 10 residual
    blocks (conv, BN, ReLU, conv, BN, skip, ReLU), a policy head (1x1 conv to 2, BN, ReLU, linear to 82 moves) and a
    value head (1x1 conv to 1, BN, ReLU, linear 81-128, ReLU, linear to 1, tanh)."""

    def __init__(self, ch=128, blocks=10, board=9, planes=17):
        super().__init__()
        nn = torch.nn
        conv = lambda a, b, k: nn.Conv2d(a, b, k, 1, k // 2, bias=False)  # noqa: E731
        self.stem = nn.Sequential(conv(planes, ch, 3), nn.BatchNorm2d(ch), nn.ReLU(inplace=True))
        self.blocks = nn.ModuleList(nn.Sequential(conv(ch, ch, 3), nn.BatchNorm2d(ch), nn.ReLU(inplace=True), conv(ch, ch, 3), nn.BatchNorm2d(ch))
                                    for _ in range(blocks))
        self.policy = nn.Sequential(conv(ch, 2, 1), nn.BatchNorm2d(2), nn.ReLU(inplace=True), nn.Flatten(), nn.Linear(2 * board * board, board * board + 1))
        self.value = nn.Sequential(conv(ch, 1, 1), nn.BatchNorm2d(1), nn.ReLU(inplace=True), nn.Flatten(), nn.Linear(board * board, ch),
                                   nn.ReLU(inplace=True), nn.Linear(ch, 1), nn.Tanh())

    def forward(self, x):
        x = self.stem(x)
        for blk in self.blocks:
            x = torch.relu_(x + blk(x))
        return self.policy(x), self.value(x)[:, 0]


@_workload("reinforcement learning by self-play, AlphaZero-style on 9x9 Go with batched MCTS (as alpha-zero-general/minigo batch leaf evaluations): a residual policy-value network (17 input planes, 10 blocks of 128 channels, policy over 82 moves, tanh value; random init); 5 generations, each: the current weights copied into a bf16 eval replica for self-play under inference_mode, 128-384 games played at once, each game 30-110 moves long (uniform), every move searched with virtual loss in waves of 8 leaves a game (playout-cap randomization: a quarter of the moves a full search of 6 waves, the others a fast one of 2), the leaves' feature planes written by the CPU tree search into a pinned staging buffer and copied in, priors (softmax) and values copied back every wave; the fully searched positions and their visit distributions added to a replay buffer in host memory (the last 4 generations kept); then 150 training steps of batch 512 sampled from it (copied in through pinned memory), a random dihedral symmetry applied to the planes and the policy targets on the device, cross-entropy on the visit distribution plus MSE on the game outcome, SGD with Nesterov momentum and weight decay, bf16 autocast")
def alphazero_selfplay(rng):
    f = torch.nn.functional
    board, planes, moves = 9, 17, 82
    net = _AzNet(ch=_smoke(128, 16), blocks=_smoke(10, 2)).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.02, momentum=0.9, nesterov=True, weight_decay=1e-4)
    leaves = 8
    # The tree search's staging buffer (pinned), refilled every wave; its contents do not matter.
    staging = torch.randint(0, 2, (_smoke(384, 8) * leaves, planes, board, board), dtype=torch.uint8).pin_memory()
    replay = []  # per generation: (states uint8, visit distributions, outcomes) on the host
    # About 80 tensors a leaf evaluation and 330 a training step at 10 blocks (counted on CPU): 5 generations of about
    # 600 evaluations and 150 steps make about 1.0M events.
    for _ in range(_smoke(5, 2)):
        actor = copy.deepcopy(net).to(torch.bfloat16).eval()
        games = rng.choice((128, 192, 256, 384)) if _smoke(1, 0) else 6
        length = [rng.randint(_smoke(30, 2), _smoke(110, 5)) for _ in range(games)]
        samples = 0
        with torch.inference_mode():
            for move in range(max(length)):
                active = sum(1 for n in length if n > move)
                full = sum(1 for _ in range(active) if rng.random() < 0.25)
                for wave in range(6):
                    n = (active if wave < 2 else full) * leaves
                    if n == 0:
                        break
                    logits, value = actor(staging[:n].to("cuda", non_blocking=True).to(torch.bfloat16))
                    torch.cat([torch.softmax(logits.float(), -1), value.float()[:, None]], 1).cpu()
                    del logits, value
                samples += full
        del actor
        samples = max(1, samples)
        replay.append((torch.randint(0, 2, (samples, planes, board, board), dtype=torch.uint8),
                       torch.distributions.Dirichlet(torch.full((moves,), 0.3)).sample((samples,)),
                       torch.randint(0, 2, (samples,)).float() * 2 - 1))
        replay = replay[-4:]
        states, pis, zs = (torch.cat(t) for t in zip(*replay))
        net.train()
        for _ in range(_smoke(150, 3)):
            idx = torch.randint(0, states.shape[0], (_smoke(512, 16),))
            x, pi, z = _upload(states[idx]), _upload(pis[idx]), _upload(zs[idx])
            k, flip = rng.randrange(4), rng.random() < 0.5
            x = torch.rot90(x, k, (2, 3))
            grid = torch.rot90(pi[:, :-1].reshape(-1, board, board), k, (1, 2))
            if flip:
                x, grid = x.flip(3), grid.flip(2)
            pi = torch.cat([grid.reshape(-1, board * board), pi[:, -1:]], 1)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits, v = net(x.float())
            loss = -(pi * f.log_softmax(logits.float(), -1)).sum(-1).mean() + f.mse_loss(v.float(), z)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            del x, pi, z, grid, logits, v, loss
        del states, pis, zs
    torch.cuda.synchronize()


# ---------------------------------------------------------------- PointPillars LiDAR detection training


class _PointPillars(torch.nn.Module):
    """PointPillars (Lang et al. 2019) as mmdet3d's KITTI 3-class config: a pillar feature net (9 point features:
    x y z r, offsets to the pillar's mean and to its centre; linear to 64, BatchNorm, ReLU, max over the 32 points),
    the pillars scattered to a 496x432 BEV canvas, SECOND's backbone (3 blocks of 3, 5, 5 convolutions after a
    stride-2 one: 64, 128, 256 channels), SECONDFPN (transposed convolutions of stride 1, 2, 4 to 128 each,
    concatenated), and an anchor head (6 anchors a cell: 3 sizes x 2 rotations; 3 classes, 7 box deltas, 2
    direction bins)."""

    def __init__(self):
        super().__init__()
        nn = torch.nn
        bn = lambda c: nn.BatchNorm2d(c, eps=1e-3, momentum=0.01)  # noqa: E731
        self.pfn = nn.Linear(9, 64, bias=False)
        self.pfn_bn = nn.BatchNorm1d(64, eps=1e-3, momentum=0.01)

        def block(cin, cout, n):
            mods = [nn.Conv2d(cin, cout, 3, 2, 1, bias=False), bn(cout), nn.ReLU(inplace=True)]
            for _ in range(n):
                mods += [nn.Conv2d(cout, cout, 3, 1, 1, bias=False), bn(cout), nn.ReLU(inplace=True)]
            return nn.Sequential(*mods)

        self.blocks = nn.ModuleList([block(64, 64, 3), block(64, 128, 5), block(128, 256, 5)])
        self.ups = nn.ModuleList(nn.Sequential(nn.ConvTranspose2d(c, 128, s, s, bias=False), bn(128), nn.ReLU(inplace=True))
                                 for c, s in ((64, 1), (128, 2), (256, 4)))
        self.cls, self.reg, self.dir = nn.Conv2d(384, 18, 1), nn.Conv2d(384, 42, 1), nn.Conv2d(384, 12, 1)

    def forward(self, feats, where, b, ny, nx):
        """feats (P, 32, 9) of all frames' pillars, where: per frame its pillars' flat BEV indices."""
        f = torch.nn.functional
        x = self.pfn(feats)
        x = f.relu(self.pfn_bn(x.permute(0, 2, 1)).permute(0, 2, 1)).max(1).values  # (P, 64)
        canvases, o = [], 0
        for idx in where:
            c = x.new_zeros(64, ny * nx)
            c[:, idx] = x[o: o + idx.numel()].t()
            canvases.append(c)
            o += idx.numel()
        x = torch.stack(canvases).view(b, 64, ny, nx)
        ups = []
        for blk, up in zip(self.blocks, self.ups):
            x = blk(x)
            ups.append(up(x))
        x = torch.cat(ups, 1)
        return self.cls(x), self.reg(x), self.dir(x)


@_workload("LiDAR 3-D object detection training, PointPillars as mmdet3d's KITTI 3-class recipe, written by hand (random init, fp32): batches of 6 frames of 8k-32k points (log-uniform, denser near the sensor) from the loader's pinned memory, already augmented; per frame hard pillar voxelization on the device (0.16 m pillars over 69.12 x 79.36 m: torch.unique over pillar ids, at most 12000 pillars (a random subset kept) and 32 points a pillar, points sorted by pillar and scattered into a (P, 32, 9) tensor); the pillar feature net, a per-frame scatter to the 496x432 canvas, SECOND backbone and FPN neck, anchor head over 248x216x6 anchors; per frame 1-40 ground-truth boxes (log-uniform) of 3 classes assigned to anchors by nearest-BEV IoU (torchvision box_iou, per-class thresholds, each box's best anchor forced positive), targets encoded as in SECOND (diagonal-normalized offsets, log sizes, sine-difference angles); sigmoid focal loss, smooth L1 (beta 1/9) x 2 and direction cross-entropy x 0.2 over the positives; AdamW with one-cycle, gradient clipping 35, 450 steps; every 150 steps an evaluation of 20 frames one at a time under no_grad: sigmoid scores, the top 1000 anchors decoded, per-class BEV NMS (torchvision batched_nms, IoU 0.01), 50 boxes kept and copied back")
def pointpillars_train(rng):
    import torchvision

    f = torch.nn.functional
    model = _PointPillars().cuda().train()
    steps = _smoke(450, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.95, 0.99), weight_decay=0.01)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, 1e-3, total_steps=steps, pct_start=0.4, div_factor=10)
    scale = _smoke(1, 2)  # the smoke run's grid is 2x coarser each side (it must stay a multiple of 8 cells)
    vs = 0.16 * scale
    lo = torch.tensor([0.0, -39.68, -3.0], device="cuda")
    nx, ny = round(69.12 / vs), round(79.36 / vs)  # 432 x 496
    max_pillars, max_pts = _smoke(12000, 200), 32
    # Anchors (ny/2, nx/2, 3 sizes, 2 rotations, 7), in the head's output order: pedestrian, cyclist, car.
    sizes = torch.tensor([[0.8, 0.6, 1.73], [1.76, 0.6, 1.73], [3.9, 1.6, 1.56]], device="cuda")
    zc = torch.tensor([-0.6, -0.6, -1.78], device="cuda")
    ys = (torch.arange(ny // 2, device="cuda").float() + 0.5) * 2 * vs + lo[1]
    xs = (torch.arange(nx // 2, device="cuda").float() + 0.5) * 2 * vs + lo[0]
    gy, gx = torch.meshgrid(ys, xs, indexing="ij")
    anchors = torch.cat([gx[:, :, None, None, None].expand(-1, -1, 3, 2, 1), gy[:, :, None, None, None].expand(-1, -1, 3, 2, 1),
                         zc[None, None, :, None, None].expand(ny // 2, nx // 2, 3, 2, 1),
                         sizes[None, None, :, None, :].expand(ny // 2, nx // 2, 3, 2, 3),
                         torch.tensor([0.0, math.pi / 2], device="cuda")[None, None, None, :, None].expand(ny // 2, nx // 2, 3, 2, 1)], -1).reshape(-1, 7)
    anchor_cls = torch.arange(3, device="cuda")[None, None, :, None].expand(ny // 2, nx // 2, 3, 2).reshape(-1)
    pos_thr = torch.tensor([0.5, 0.5, 0.6], device="cuda")[anchor_cls]
    neg_thr = torch.tensor([0.35, 0.35, 0.45], device="cuda")[anchor_cls]

    def bev(boxes):  # nearest axis-aligned BEV boxes (x1, y1, x2, y2), as mmdet3d's BboxOverlapsNearest3D
        swap = (torch.remainder(boxes[:, 6] + math.pi / 4, math.pi) >= math.pi / 2)[:, None]
        lw = torch.where(swap, boxes[:, [4, 3]], boxes[:, 3:5])
        return torch.cat([boxes[:, :2] - lw / 2, boxes[:, :2] + lw / 2], 1)

    anchor_bev = bev(anchors)
    diag = torch.sqrt(anchors[:, 3] ** 2 + anchors[:, 4] ** 2)

    def voxelize(pts):  # (N, 4) -> pillar features (P, 32, 9), their flat BEV indices (P,)
        ij = ((pts[:, :2] - lo[:2]) / vs).long()
        pid = ij[:, 1] * nx + ij[:, 0]
        uniq, inv, counts = torch.unique(pid, return_inverse=True, return_counts=True)
        if uniq.numel() > max_pillars:  # a random subset of the pillars, as the training config's max_voxels
            sel = torch.randperm(uniq.numel(), device="cuda")[:max_pillars]
            remap = torch.full((uniq.numel(),), -1, dtype=torch.long, device="cuda")
            remap[sel] = torch.arange(max_pillars, device="cuda")
            inv = remap[inv]
            ok = inv >= 0
            pts, inv, uniq, counts = pts[ok], inv[ok], uniq[sel], counts[sel]
        order = torch.argsort(inv, stable=True)
        inv_s = inv[order]
        slot = torch.arange(inv_s.numel(), device="cuda") - (counts.cumsum(0) - counts)[inv_s]
        ok = slot < max_pts
        vox = pts.new_zeros(uniq.numel(), max_pts, 4)
        vox[inv_s[ok], slot[ok]] = pts[order[ok]]
        n = counts.clamp(max=max_pts)
        mean = vox[..., :3].sum(1) / n[:, None]
        centre = torch.stack([(uniq % nx).float() * vs + vs / 2 + lo[0], (uniq // nx).float() * vs + vs / 2 + lo[1]], 1)
        feat = torch.cat([vox, vox[..., :3] - mean[:, None], vox[..., :2] - centre[:, None]], -1)
        return feat * (torch.arange(max_pts, device="cuda")[None] < n[:, None])[..., None], uniq

    def frame():  # one frame from the loader: points (N, 4) and boxes (M, 7) with labels, pinned then copied
        n = _loguniform(rng, _smoke(8000, 300), _smoke(32000, 900))
        u = torch.rand(n, 4)
        pts = torch.stack([69.12 * u[:, 0] ** 2 * 0.999, (u[:, 1] - 0.5) * 79.3, u[:, 2] * 3.9 - 2.95, u[:, 3]], 1)
        m = _loguniform(rng, 1, 40)
        lab = torch.randint(0, 3, (m,))
        sz = torch.tensor([[0.8, 0.6, 1.73], [1.76, 0.6, 1.73], [3.9, 1.6, 1.56]])[lab] * (0.8 + 0.4 * torch.rand(m, 3))
        ctr = torch.rand(m, 3) * torch.tensor([60.0, 70.0, 1.0]) + torch.tensor([4.0, -35.0, -2.0])
        boxes = torch.cat([ctr, sz, torch.rand(m, 1) * 2 * math.pi - math.pi], 1)
        return _upload(pts), _upload(boxes), _upload(lab)

    def targets(boxes, lab):
        iou = torchvision.ops.box_iou(anchor_bev, bev(boxes))  # (A, M)
        iou = iou * (anchor_cls[:, None] == lab[None])
        best, arg = iou.max(1)
        pos = best >= pos_thr
        force = iou.argmax(0)
        pos[force] = True
        arg[force] = torch.arange(boxes.shape[0], device="cuda")
        cls = torch.where(pos, lab[arg], 3)
        weight = (pos | (best < neg_thr)).float()
        g, a = boxes[arg], anchors
        reg = torch.cat([(g[:, :2] - a[:, :2]) / diag[:, None], (g[:, 2:3] - a[:, 2:3]) / a[:, 5:6], torch.log(g[:, 3:6] / a[:, 3:6]), g[:, 6:] - a[:, 6:]], 1)
        dirs = (torch.remainder(g[:, 6] - 0.78539, 2 * math.pi) >= math.pi).long()
        return cls, weight, reg, dirs, pos

    def batch(b):
        feats, where, gts = [], [], []
        for _ in range(b):
            pts, boxes, lab = frame()
            feat, uniq = voxelize(pts)
            feats.append(feat)
            where.append(uniq)
            gts.append((boxes, lab))
            del pts
        return torch.cat(feats), where, gts

    # About 690 + 110 a frame tensors a step (counted on CPU at the real grid, backward included, less the loader's
    # host-side tensors): 450 steps of 6 frames and 3 evaluations of 20 frames make about 1.2M events.
    for i in range(steps):
        b = _smoke(6, 2)
        feats, where, gts = batch(b)
        cls, reg, dirs = model(feats, where, b, ny, nx)
        cls = cls.permute(0, 2, 3, 1).reshape(b, -1, 3)
        reg = reg.permute(0, 2, 3, 1).reshape(b, -1, 7)
        dirs = dirs.permute(0, 2, 3, 1).reshape(b, -1, 2)
        t = [targets(*g) for g in gts]
        t_cls, t_w, t_reg, t_dir, t_pos = (torch.stack(x) for x in zip(*t))
        npos = t_pos.sum().clamp(min=1).float()
        onehot = f.one_hot(t_cls, 4)[..., :3].float()
        l_cls = (torchvision.ops.sigmoid_focal_loss(cls, onehot, 0.25, 2.0, "none").sum(-1) * t_w).sum() / npos
        p_reg, g_reg = reg[t_pos], t_reg[t_pos]
        sin_d = torch.sin(p_reg[:, 6:]) * torch.cos(g_reg[:, 6:]) - torch.cos(p_reg[:, 6:]) * torch.sin(g_reg[:, 6:])  # SECOND's sine difference
        l_reg = f.smooth_l1_loss(torch.cat([p_reg[:, :6] - g_reg[:, :6], sin_d], 1), torch.zeros_like(p_reg), beta=1 / 9, reduction="sum") / npos
        l_dir = f.cross_entropy(dirs[t_pos], t_dir[t_pos], reduction="sum") / npos
        loss = l_cls + 2.0 * l_reg + 0.2 * l_dir
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 35)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        del feats, where, gts, cls, reg, dirs, t, t_cls, t_w, t_reg, t_dir, t_pos, onehot, p_reg, g_reg, sin_d, loss, l_cls, l_reg, l_dir
        if (i + 1) % _smoke(150, 3) == 0:
            model.eval()
            with torch.no_grad():
                for _ in range(_smoke(20, 2)):
                    feats, where, _ = batch(1)
                    cls, reg, _ = model(feats, where, 1, ny, nx)
                    scores = cls.permute(0, 2, 3, 1).reshape(-1, 3).sigmoid()
                    top, idx = scores.max(1).values.topk(_smoke(1000, 50))
                    a, d = anchors[idx], reg.permute(0, 2, 3, 1).reshape(-1, 7)[idx]
                    boxes = torch.cat([a[:, :2] + d[:, :2] * diag[idx, None], a[:, 2:3] + d[:, 2:3] * a[:, 5:6], a[:, 3:6] * d[:, 3:6].exp(), a[:, 6:] + d[:, 6:]], 1)
                    keep = torchvision.ops.batched_nms(bev(boxes), top, scores[idx].argmax(1), 0.01)[:50]
                    boxes[keep].cpu()
                    del feats, where, cls, reg, scores, top, idx, a, d, boxes, keep
            model.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- molecular dynamics with a learned potential


class _PaiNN(torch.nn.Module):
    """PaiNN (Schuett et al. 2021): scalar and vector features of 128 per atom, 20 sinc radial functions with a cosine
    cutoff of 5 A, message blocks (phi(s)[j] x W(rbf) split into a scalar message and the gates of v[j] and of the
    edge direction, summed into each atom by index_add) and update blocks (U v, V v, an MLP of s and |V v| gating
    them), a 2-layer readout summed per molecule."""

    def __init__(self, f=128, layers=3, rbf=20, cutoff=5.0, elements=10):
        super().__init__()
        nn = torch.nn
        self.f, self.cutoff, self.nrbf = f, cutoff, rbf
        self.embed = nn.Embedding(elements, f)
        self.phi = nn.ModuleList(nn.Sequential(nn.Linear(f, f), nn.SiLU(), nn.Linear(f, 3 * f)) for _ in range(layers))
        self.w = nn.ModuleList(nn.Linear(rbf, 3 * f) for _ in range(layers))
        self.u = nn.ModuleList(nn.Linear(f, f, bias=False) for _ in range(layers))
        self.v = nn.ModuleList(nn.Linear(f, f, bias=False) for _ in range(layers))
        self.mlp = nn.ModuleList(nn.Sequential(nn.Linear(2 * f, f), nn.SiLU(), nn.Linear(f, 3 * f)) for _ in range(layers))
        self.out = nn.Sequential(nn.Linear(f, f // 2), nn.SiLU(), nn.Linear(f // 2, 1))

    def forward(self, z, vec, src, dst, mol, n_mol):
        """Energies (n_mol,) from atom types z, edge vectors vec (E, 3) from src to dst."""
        r = vec.norm(dim=-1, keepdim=True)
        unit = vec / r
        k = torch.arange(1, self.nrbf + 1, device=vec.device, dtype=vec.dtype)
        rbf = torch.sin(k * (math.pi / self.cutoff) * r) / r
        fcut = 0.5 * (torch.cos(r * (math.pi / self.cutoff)) + 1) * (r < self.cutoff)
        s = self.embed(z)
        v = s.new_zeros(s.shape[0], 3, self.f)
        for phi, w, u, vv, mlp in zip(self.phi, self.w, self.u, self.v, self.mlp):
            x = phi(s)[src] * (w(rbf) * fcut)
            ds, dvv, dvs = x.split(self.f, -1)
            dv = v[src] * dvv[:, None] + dvs[:, None] * unit[..., None]
            s = s.index_add(0, dst, ds)
            v = v.index_add(0, dst, dv)
            uv, vv_ = u(v), vv(v)
            a = mlp(torch.cat([s, torch.sqrt((vv_ ** 2).sum(1) + 1e-8)], -1))
            avv, asv, ass = a.split(self.f, -1)
            s = s + asv * (uv * vv_).sum(1) + ass
            v = v + avv[:, None] * uv
        return torch.zeros(n_mol, device=vec.device, dtype=vec.dtype).index_add(0, mol, self.out(s)[:, 0])


@_workload("molecular dynamics with a machine-learned interatomic potential (inference with forces), TorchMD/ASE-calculator-style: a PaiNN model (3 interaction layers of 128 scalar and 128x3 vector features, 20 radial functions, cutoff 5 A; random weights, frozen, fp32); 4 simulation jobs one after another, each a periodic cubic box of 300-3000 atoms (log-uniform, 0.1 atoms per cubic angstrom, H/C/N/O/S-like masses, a jittered lattice start) replicated 1-8 times (at most 3000 atoms a job) and batched as one graph; a Verlet neighbour list (cutoff + 0.5 A skin, minimum image, built from the replicas' full (N, N) distance matrices and nonzero) rebuilt when an atom has moved more than half the skin (checked every 10 steps); 500 velocity-Verlet steps of 0.5 fs with a Langevin thermostat at 300 K, forces as the negative gradient of the energy (torch.autograd.grad, no graph kept), edge vectors recomputed every step under the minimum image; the temperature read back every 20 steps, a trajectory frame copied to the host every 50")
def painn_md(rng):
    model = _PaiNN(f=_smoke(128, 16), layers=3).cuda().eval()
    for p in model.parameters():
        p.requires_grad_(False)
    masses = torch.tensor([1.008, 12.011, 14.007, 15.999, 32.06, 1.008, 12.011, 15.999, 1.008, 1.008], device="cuda")
    cutoff, skin, dt, kt = 5.0, 0.5, 0.5, 0.025852  # A, A, fs, eV at 300 K
    conv = 0.009648  # eV / A / amu -> A / fs^2
    # About 320 tensors an MD step (counted on CPU, the force backward included): 4 jobs of 500 steps make about 1.3M
    # events.
    for _ in range(_smoke(4, 2)):
        n = _loguniform(rng, _smoke(300, 60), _smoke(3000, 120))
        reps = max(1, min(8, _smoke(3000, 240) // n))
        side = (n / 0.1) ** (1 / 3)
        per = math.ceil(n ** (1 / 3))
        lattice = torch.stack(torch.meshgrid(*[torch.arange(per, device="cuda").float()] * 3, indexing="ij"), -1).reshape(-1, 3)[:n] * (side / per)
        pos = (lattice[None] + 0.1 * torch.randn(reps, n, 3, device="cuda")).reshape(-1, 3)
        z = torch.randint(0, 10, (n,), device="cuda").repeat(reps)
        m = masses[z][:, None]
        vel = torch.randn(reps * n, 3, device="cuda") * torch.sqrt(kt * conv / m)
        mol = torch.arange(reps, device="cuda").repeat_interleave(n)
        c1 = math.exp(-0.01 * dt)  # Langevin friction 0.01 / fs
        c2 = math.sqrt(1 - c1 * c1)

        def neighbours(pos):
            p = pos.view(reps, n, 3)
            d = p[:, None] - p[:, :, None]  # (reps, i, j, 3): j - i
            d = d - side * torch.round(d / side)
            close = (d.norm(dim=-1) < cutoff + skin) & ~torch.eye(n, dtype=torch.bool, device="cuda")
            rep, i, j = close.nonzero(as_tuple=True)
            return rep * n + j, rep * n + i  # src, dst

        def forces(pos, src, dst):
            with torch.enable_grad():
                pos = pos.detach().requires_grad_()
                vec = pos[src] - pos[dst]
                vec = vec - side * torch.round(vec / side)
                energy = model(z, vec, src, dst, mol, reps)
                grad, = torch.autograd.grad(energy.sum(), pos)
            return -grad, energy.detach()

        src, dst = neighbours(pos)
        ref = pos.clone()
        force, energy = forces(pos, src, dst)
        frames = []
        for step in range(_smoke(500, 12)):
            vel = vel + (0.5 * dt * conv) * force / m
            pos = pos + dt * vel
            if (step + 1) % 10 == 0 and float((pos - ref).norm(dim=-1).max()) > skin / 2:
                src, dst = neighbours(pos)
                ref = pos.clone()
            force, energy = forces(pos, src, dst)
            vel = vel + (0.5 * dt * conv) * force / m
            vel = c1 * vel + c2 * torch.sqrt(kt * conv / m) * torch.randn_like(vel)
            if (step + 1) % 20 == 0:
                float((m * vel ** 2).sum() / (3 * reps * n * kt * conv))  # the temperature, as a fraction of 300 K
            if (step + 1) % 50 == 0:
                frames.append(torch.remainder(pos, side).cpu())
        del pos, vel, force, energy, src, dst, ref, m, lattice, frames
    torch.cuda.synchronize()


# ---------------------------------------------------------------- late-interaction reranking serving


@_workload("late-interaction retrieval reranking serving, ColBERTv2-style (inference): an HF BertModel (BERT-base: 12 layers, width 768, no pooler, random init) and a 768-to-128 linear projection in fp16 under inference_mode, token embeddings L2-normalized; 250 requests of 1-8 queries (log-uniform), each query 32 tokens ([Q] marker, padded with [MASK] for query augmentation, attending to all 32), each with 50-1000 candidate passages (log-uniform) of 16-300 tokens (log-uniform, truncated at doc_maxlen 180, [D] marker); per query the passages sorted by length and encoded in batches of 128 padded to each batch's longest, punctuation tokens masked (a skiplist lookup), their embeddings put back in candidate order into one zero-padded (candidates, longest, 128) tensor with its mask, MaxSim scores (D @ Q^T, padding at -9999, max over passage tokens, sum over query tokens), the top 10-100 scores and indices copied back")
def colbert_rerank(rng):
    from transformers import BertConfig, BertModel

    f = torch.nn.functional
    cfg = BertConfig(hidden_size=_smoke(768, 64), num_hidden_layers=_smoke(12, 2), num_attention_heads=_smoke(12, 4),
                     intermediate_size=_smoke(3072, 128), vocab_size=30522, max_position_embeddings=512)
    bert = BertModel(cfg, add_pooling_layer=False).to("cuda", torch.float16).eval()
    proj = torch.nn.Linear(cfg.hidden_size, 128, bias=False).to("cuda", torch.float16)
    skip = torch.zeros(cfg.vocab_size, dtype=torch.bool)
    skip[999:1031] = True  # punctuation ids
    skip = skip.cuda()
    qlen, maxlen, bsize = 32, 180, _smoke(128, 8)

    def encode(ids, mask):
        return f.normalize(proj(bert(input_ids=ids, attention_mask=mask).last_hidden_state), dim=-1)

    # About 245 tensors an encoder batch (counted on CPU at 12 layers): 250 requests of about 2.9 queries of about 3
    # passage batches, and their query batches, make about 1.2M events.
    with torch.inference_mode():
        for _ in range(_smoke(250, 3)):
            nq = _loguniform(rng, 1, 8)
            q = torch.randint(1000, cfg.vocab_size, (nq, qlen))
            q[:, 0], q[:, 1] = 101, 1
            for row in range(nq):
                q[row, rng.randint(4, qlen):] = 103
            queries = encode(_upload(q), torch.ones(nq, qlen, dtype=torch.long, device="cuda"))  # (nq, 32, 128)
            for qi in range(nq):
                n = _loguniform(rng, _smoke(50, 5), _smoke(1000, 20))
                lens = [min(maxlen, _loguniform(rng, 16, 300)) for _ in range(n)]
                order = sorted(range(n), key=lens.__getitem__)
                longest = max(lens)
                docs = queries.new_zeros(n, longest, 128)
                dmask = torch.zeros(n, longest, dtype=torch.bool, device="cuda")
                for lo in range(0, n, bsize):
                    rows = order[lo: lo + bsize]
                    w = max(lens[r] for r in rows)
                    mask = torch.arange(w)[None] < torch.tensor([lens[r] for r in rows])[:, None]
                    ids = torch.randint(1000, cfg.vocab_size, (len(rows), w)) * mask
                    ids[:, 0], ids[:, 1] = 101, 2
                    ids, mask = _upload(ids), _upload(mask)
                    emb = encode(ids, mask.long())
                    keep = mask & ~skip[ids]
                    where = torch.tensor(rows, device="cuda")
                    docs[where, :w] = emb * keep[..., None]
                    dmask[where, :w] = keep
                    del ids, mask, emb, keep, where
                scores = docs @ queries[qi].T  # (n, longest, 32)
                scores = scores.masked_fill(~dmask[..., None], -9999).max(1).values.sum(-1)
                top = scores.float().topk(min(n, rng.randint(10, 100)))
                top.values.cpu(), top.indices.cpu()
                del docs, dmask, scores, top
            del queries
    torch.cuda.synchronize()

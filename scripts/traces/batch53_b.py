"""The fifty-third batch of held-out workloads, second half (batch53.py holds the first): robotics and embodied
control on the GPU, written in torch alone. A vision-language-action policy fine-tuned on robot episodes with
varying numbers of camera views (OpenVLA / RT-2-style: a small ViT over each view, a transformer language encoder
over the instruction, a fusion transformer over language, image and proprioception tokens, actions discretised into
256 bins per dimension and predicted for a chunk of future steps; the first half of the ViT frozen; views, batch and
instruction lengths drawn per batch, cut to an image budget; held-out evaluation of the binned-action accuracy), a
grasp-pose network over point clouds of varying size (Contact-GraspNet-style on a PointNet++ backbone written by
hand: farthest-point sampling as a loop, ball queries by masked index top-k, grouped MLPs with max pooling, feature
propagation by three-nearest-neighbour interpolation, per-point graspness, approach and baseline directions and
binned widths; trained, then served on scenes with the best grasps checked for collisions against the scene; every
scene's points uploaded from reused pinned host buffers on a side stream one scene ahead), CHOMP / TrajOpt-style
trajectory optimisation by gradient through a learned collision checker (a neural signed-distance field conditioned
on a set encoding of the scene's obstacles, trained on analytic distances, then batches of seeded trajectories of a
7-DoF arm with hand-written forward kinematics and link spheres optimised against collision, smoothness and goal
costs; waypoints, seeds and obstacle counts drawn per problem), and DAgger for multi-robot navigation with a
graph-attention policy (scenes of a drawn number of robots and obstacles, neighbours within a sensing radius by
attention masks, an expert of attraction and repulsion fields relabelling the visited states, the aggregated dataset
growing every round, evaluation rollouts counting collisions and arrivals). Same conventions as batch53.py: nothing
downloaded, data drawn on the device (or, for the grasp network, from a few reused pinned host buffers), `rng` the
workload's random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)`. No control
flow reads a tensor's value: radii and masks are multiplied or filled in, counts fixed on the host, no boolean-mask
indexing; losses and scores are read back only at logging points (the grasp service returns each scene's grasps, as
a service must). pointnet_grasp_train_serve uses a side stream (uploads waited on by event, the tensors
record_stream'ed); the others are single-stream. The transformers and the point-set networks run under bf16 autocast;
farthest-point sampling, ball queries, kinematics, the simulator, the expert and the losses are fp32.

Real sizes checked before recording, as batch53.py's header says (the same meta-device runner, op outputs counted,
peak live bytes tracked), each run whole at its final sizes:
vla_multiview_finetune 311,791 op outputs, peak 4.27 GB; pointnet_grasp_train_serve 302,632, 1.02 GB;
chomp_traj_collision_opt 323,330, 1.08 GB; gat_swarm_dagger_train 329,037, 0.80 GB (peaks in fp32 where autocast
would take bf16). record_new53.sh's header has the figures, with the first runs that led to resizes. The CPU smoke
run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock as _Block
from workload_helpers import _farthest_points as _fps

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- VLA fine-tuning over varying camera views


class _Vla(_nn.Module):
    def __init__(self, d, heads, vit_depth, lang_depth, fuse_depth, vocab, patch, img, nview_max, dq, da, chunk, bins):
        super().__init__()
        self.d, self.patch, self.da, self.chunk, self.bins = d, patch, da, chunk, bins
        ntok = (img // patch) ** 2
        self.patch_emb = _nn.Conv2d(3, d, patch, patch)
        self.pos = _nn.Parameter(torch.randn(1, ntok, d) * 0.02)
        self.view_emb = _nn.Parameter(torch.randn(nview_max, 1, d) * 0.02)
        self.vit = _nn.ModuleList([_Block(d, heads) for _ in range(vit_depth)])
        self.tok = _nn.Embedding(vocab, d)
        self.lang_pos = _nn.Parameter(torch.randn(1, 64, d) * 0.02)
        self.lang = _nn.ModuleList([_Block(d, heads) for _ in range(lang_depth)])
        self.proprio = _nn.Linear(dq, d)
        self.act_q = _nn.Parameter(torch.randn(1, chunk * da, d) * 0.02)
        self.fuse = _nn.ModuleList([_Block(d, heads) for _ in range(fuse_depth)])
        self.norm = _nn.LayerNorm(d)
        self.head = _nn.Linear(d, bins)

    def forward(self, images, text, text_mask, qpos):
        b, nv = images.shape[:2]
        x = self.patch_emb(images.flatten(0, 1)).flatten(2).transpose(1, 2) + self.pos
        for blk in self.vit:
            x = blk(x)
        x = (x.view(b, nv, -1, self.d) + self.view_emb[:nv]).flatten(1, 2)
        lmask = torch.zeros(b, 1, 1, text.shape[1], device=text.device).masked_fill(~text_mask[:, None, None],
                                                                                       float("-inf"))
        t = self.tok(text) + self.lang_pos[:, :text.shape[1]]
        for blk in self.lang:
            t = blk(t, lmask)
        h = torch.cat([t, x, self.proprio(qpos)[:, None], self.act_q.expand(b, -1, -1)], 1)
        fmask = torch.cat([lmask, torch.zeros(b, 1, 1, h.shape[1] - text.shape[1], device=text.device)], -1)
        for blk in self.fuse:
            h = blk(h, fmask)
        return self.head(self.norm(h[:, -self.chunk * self.da:]))


@_workload("vision-language-action policy fine-tuned on robot episodes with varying camera views, written by hand (random init; OpenVLA / RT-2-style): a ViT of width 384 and 8 blocks over 224 x 224 views (patch 16, 196 tokens a view, the first 4 blocks frozen), a 4-block language encoder over instructions of 8-40 tokens (drawn, padded and masked) from a 32k vocabulary, a 4-block fusion transformer over language, 1-3 views (drawn per batch), proprioception and 28 action queries (7-dim actions, a chunk of 4 steps), each action dimension discretised into 256 bins and trained by cross-entropy; 200 steps under bf16 autocast, batches of 8-32 (drawn) cut to 48 images, AdamW with warmup and cosine decay, clipping; every 40 steps an evaluation of 4 held-out batches without grad, binned-action accuracy and L1 error of the decoded actions read back")
def vla_multiview_finetune(rng):
    d, heads = _smoke(384, 32), _smoke(6, 2)
    img, patch = _smoke(224, 32), 16
    vocab, dq, da, chunk, bins = _smoke(32000, 100), 8, 7, 4, _smoke(256, 16)
    vit_depth = _smoke(8, 2)
    model = _Vla(d, heads, vit_depth, _smoke(4, 1), _smoke(4, 1), vocab, patch, img, 3, dq, da, chunk, bins).cuda()
    for blk in model.vit[:vit_depth // 2]:
        blk.requires_grad_(False)
    model.patch_emb.requires_grad_(False)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-4, weight_decay=0.01)
    steps = _smoke(200, 4)
    warm = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    budget = _smoke(48, 4)
    centers = torch.linspace(-1, 1, bins, device="cuda")

    def batch():
        nv = rng.choice([1, 2, 3])
        b = max(1, min(rng.choice(_smoke([8, 16, 24, 32], [2, 3])), budget // nv))
        lt = rng.randint(_smoke(8, 3), _smoke(40, 6))
        lens = torch.tensor([rng.randint(max(1, lt // 2), lt) for _ in range(b)], device="cuda")
        text = torch.randint(0, vocab, (b, lt), device="cuda")
        tmask = torch.arange(lt, device="cuda")[None] < lens[:, None]
        images = torch.rand(b, nv, 3, img, img, device="cuda")
        qpos = torch.randn(b, dq, device="cuda")
        target = (torch.tanh(qpos[:, :da, None] + 0.1 * torch.arange(chunk, device="cuda")) * 0.99)
        target = target.transpose(1, 2).reshape(b, chunk * da)
        ybin = ((target + 1) / 2 * (bins - 1)).round().long()
        return images, text, tmask, qpos, target, ybin

    for step in range(steps):
        images, text, tmask, qpos, target, ybin = batch()
        model.train()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(images, text, tmask, qpos)
        loss = _F.cross_entropy(logits.float().reshape(-1, bins), ybin.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        del images, text, tmask, qpos, target, ybin, logits, loss
        if (step + 1) % _smoke(40, 2) == 0:
            model.eval()
            stats = []
            with torch.no_grad():
                for _ in range(_smoke(4, 1)):
                    images, text, tmask, qpos, target, ybin = batch()
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        logits = model(images, text, tmask, qpos).float()
                    pred = logits.argmax(-1)
                    stats.append(torch.stack([(pred == ybin).float().mean(), (centers[pred] - target).abs().mean()]))
                    del images, text, tmask, qpos, target, ybin, logits, pred
                torch.stack(stats).cpu()
            del stats


# ---------------------------------------------------------------- grasp poses over point clouds (PointNet++)


def _ball_query(xyz, new_xyz, radius, k):
    """The first k points within radius of each centre (by index), padded with the first one found: the squared
    distances, indices beyond the radius replaced by n, the k smallest kept by top-k."""
    b, n, _ = xyz.shape
    d2 = (new_xyz * new_xyz).sum(-1)[..., None] - 2 * new_xyz @ xyz.transpose(1, 2) + (xyz * xyz).sum(-1)[:, None]
    ar = torch.arange(n, device=xyz.device).expand_as(d2)
    cand = torch.where(d2 > radius * radius, torch.full_like(ar, n), ar)
    grp = cand.topk(k, -1, largest=False, sorted=True).values
    first = grp[..., :1].expand_as(grp)
    grp = torch.where(grp == n, first, grp)
    return grp.clamp(max=n - 1)


def _gather(x, idx):
    """x (b, n, c), idx (b, ...) -> (b, ..., c)."""
    b = x.shape[0]
    flat = idx.reshape(b, -1)
    out = x.gather(1, flat[..., None].expand(-1, -1, x.shape[-1]))
    return out.view(*idx.shape, x.shape[-1])


class _SA(_nn.Module):
    def __init__(self, npoint, radius, k, cin, mlp):
        super().__init__()
        self.npoint, self.radius, self.k = npoint, radius, k
        layers, c = [], cin + 3
        for m in mlp:
            layers += [_nn.Linear(c, m), _nn.LayerNorm(m), _nn.ReLU()]
            c = m
        self.mlp = _nn.Sequential(*layers)

    def forward(self, xyz, feat):
        with torch.autocast("cuda", enabled=False):
            cidx = _fps(xyz, self.npoint)
            new_xyz = _gather(xyz, cidx)
            grp = _ball_query(xyz, new_xyz, self.radius, self.k)
            rel = (_gather(xyz, grp) - new_xyz[:, :, None]) / self.radius
        h = rel if feat is None else torch.cat([rel.to(feat.dtype), _gather(feat, grp)], -1)
        return new_xyz, self.mlp(h).max(2).values


class _FP(_nn.Module):
    def __init__(self, cin, mlp):
        super().__init__()
        layers, c = [], cin
        for m in mlp:
            layers += [_nn.Linear(c, m), _nn.LayerNorm(m), _nn.ReLU()]
            c = m
        self.mlp = _nn.Sequential(*layers)

    def forward(self, xyz1, xyz2, f1, f2):
        with torch.autocast("cuda", enabled=False):
            d2 = ((xyz1 * xyz1).sum(-1)[..., None] - 2 * xyz1 @ xyz2.transpose(1, 2)
                  + (xyz2 * xyz2).sum(-1)[:, None]).clamp_min(0)
            dd, ii = d2.topk(3, -1, largest=False)
            w = 1.0 / (dd + 1e-8)
            w = w / w.sum(-1, keepdim=True)
        interp = (_gather(f2, ii) * w[..., None].to(f2.dtype)).sum(2)
        h = interp if f1 is None else torch.cat([interp, f1.to(interp.dtype)], -1)
        return self.mlp(h)


class _GraspNet(_nn.Module):
    def __init__(self, w, wbins):
        super().__init__()
        self.sa1 = _SA(_smoke(512, 32), 0.04, _smoke(32, 4), 0, [w, w, 2 * w])
        self.sa2 = _SA(_smoke(128, 16), 0.1, _smoke(32, 4), 2 * w, [2 * w, 2 * w, 4 * w])
        self.sa3 = _SA(_smoke(32, 8), 0.2, _smoke(32, 4), 4 * w, [4 * w, 4 * w, 8 * w])
        self.fp3 = _FP(8 * w + 4 * w, [4 * w, 4 * w])
        self.fp2 = _FP(4 * w + 2 * w, [2 * w, 2 * w])
        self.head = _nn.Sequential(_nn.Linear(2 * w, 2 * w), _nn.ReLU(), _nn.Linear(2 * w, 1 + 3 + 3 + wbins))
        self.wbins = wbins

    def forward(self, xyz):
        x1, f1 = self.sa1(xyz, None)
        x2, f2 = self.sa2(x1, f1)
        x3, f3 = self.sa3(x2, f2)
        g2 = self.fp3(x2, x3, f2, f3)
        g1 = self.fp2(x1, x2, f1, g2)
        return x1, self.head(g1)


@_workload("Contact-GraspNet-style grasp-pose network over point clouds on a PointNet++ backbone written by hand (random init): three set-abstraction levels (512, 128 and 32 centres by farthest-point sampling written as a loop, ball queries of radius 4, 10 and 20 cm with 32 neighbours by masked index top-k, grouped MLPs with LayerNorm and max pooling), two feature-propagation levels by inverse-distance three-nearest-neighbour interpolation, a per-point head of graspness, approach and baseline directions and 10 width bins; scenes of 8k-20k points (drawn, batches of 2-8 drawn cut to 64k points) uploaded from reused pinned host buffers on a side stream one batch ahead (waited on by event, record_stream'ed); 32 training steps under bf16 autocast (BCE on graspness, cosine losses on the directions weighted by the contact labels, width cross-entropy), Adam with clipping; then 36 scenes served one at a time without grad: the top 64 grasps by score, the gripper's 96 points posed for each and checked against the scene's points by a distance matrix, the grasps and collision-free flags read back")
def pointnet_grasp_train_serve(rng):
    w, wbins = _smoke(64, 4), 10
    model = _GraspNet(w, wbins).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sizes = _smoke([8192, 12288, 16384, 20480], [256, 384])
    budget = _smoke(65536, 1024)
    nmax = max(sizes)
    host = [torch.randn(budget * 3).pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    done = [None, None]

    def fetch(i, train):
        n = rng.choice(sizes)
        b = max(1, min(rng.choice(_smoke([2, 4, 6, 8], [2])), budget // n)) if train else 1
        s = i % 2
        if done[s] is not None:
            done[s].synchronize()
        with torch.cuda.stream(side):
            xyz = host[s][:b * n * 3].view(b, n, 3).to("cuda", non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        done[s] = ev
        return xyz, ev

    def take(nxt):
        xyz, ev = nxt
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        xyz.record_stream(cur)
        return xyz * torch.tensor([0.3, 0.3, 0.15], device="cuda")  # to a tabletop-sized scene

    steps = _smoke(32, 2)
    nserve = _smoke(36, 2)
    nxt = fetch(0, True)
    for step in range(steps):
        xyz = take(nxt)
        nxt = fetch(step + 1, step + 1 < steps)
        model.train()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pts, out = model(xyz)
        out = out.float()
        # synthetic contact labels from geometry: points near the top of objects are graspable
        label = (pts[..., 2] > 0.05).float()
        appr = _F.normalize(-pts + torch.tensor([0.0, 0.0, 0.5], device="cuda"), dim=-1)
        base = _F.normalize(torch.cross(appr, torch.tensor([1.0, 0.0, 0.0], device="cuda").expand_as(appr),
                                        dim=-1), dim=-1)
        wlab = ((pts[..., 0].abs() * 50).long()).clamp(max=wbins - 1)
        l_score = _F.binary_cross_entropy_with_logits(out[..., 0], label)
        l_dir = (label * (2 - (_F.normalize(out[..., 1:4], dim=-1) * appr).sum(-1)
                          - (_F.normalize(out[..., 4:7], dim=-1) * base).sum(-1))).sum() / (label.sum() + 1)
        l_w = (_F.cross_entropy(out[..., 7:].reshape(-1, wbins), wlab.reshape(-1), reduction="none")
               * label.reshape(-1)).sum() / (label.sum() + 1)
        loss = l_score + l_dir + l_w
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        del xyz, pts, out, label, appr, base, wlab, l_score, l_dir, l_w, loss
        if (step + 1) % _smoke(11, 1) == 0:
            torch.zeros(1, device="cuda").cpu()
    model.eval()
    gripper = torch.randn(_smoke(96, 8), 3, device="cuda") * torch.tensor([0.04, 0.01, 0.05], device="cuda")
    topk = _smoke(64, 4)
    for sc in range(nserve):
        xyz = take(nxt)
        if sc + 1 < nserve:
            nxt = fetch(steps + sc + 1, False)
        with torch.no_grad():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                pts, out = model(xyz)
            out = out.float()[0]
            pts = pts[0]
            score, best = torch.sigmoid(out[:, 0]).topk(topk)
            a = _F.normalize(out[best, 1:4], dim=-1)
            bvec = _F.normalize(out[best, 4:7] - (out[best, 4:7] * a).sum(-1, keepdim=True) * a, dim=-1)
            rot = torch.stack([bvec, torch.cross(a, bvec, dim=-1), a], -1)  # (k, 3, 3)
            wid = out[best, 7:].argmax(-1).float() * 0.01
            gp = gripper[None] @ rot.transpose(1, 2) + pts[best][:, None]  # (k, g, 3)
            gp = gp.reshape(-1, 3)
            scene = xyz[0]
            d2 = ((gp * gp).sum(-1)[:, None] - 2 * gp @ scene.T + (scene * scene).sum(-1)[None]).amin(-1)
            free = (d2.view(topk, -1) > 1e-4).all(-1).float()
            torch.cat([rot.flatten(1), pts[best], wid[:, None], score[:, None], free[:, None]], -1).cpu()
        del xyz, pts, out, score, best, a, bvec, rot, wid, gp, d2, free


# ---------------------------------------------------------------- trajectory optimisation through a learned SDF


class _SceneSdf(_nn.Module):
    """A neural signed-distance field conditioned on the scene: obstacles (sphere or box: centre, half-extents, type)
    encoded by a set transformer layer and pooled, the pooled code and Fourier features of the query point through
    an MLP."""

    def __init__(self, d, hidden, layers, nfreq):
        super().__init__()
        self.obs_in = _nn.Linear(7, d)
        self.set_blk = _nn.TransformerEncoderLayer(d, 4, 2 * d, 0.0, batch_first=True)
        self.freq = _nn.Parameter(torch.randn(3, nfreq) * 3.0, requires_grad=False)
        dims = [d + 3 + 2 * nfreq] + [hidden] * layers
        self.mlp = _nn.ModuleList([_nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:])])
        self.out = _nn.Linear(hidden, 1)

    def encode(self, obst):
        return self.set_blk(self.obs_in(obst)).max(1).values  # (s, d)

    def forward(self, code, x):  # code (s, d), x (s, n, 3)
        proj = x @ self.freq
        h = torch.cat([code[:, None].expand(-1, x.shape[1], -1), x, torch.sin(proj), torch.cos(proj)], -1)
        for lin in self.mlp:
            h = _F.softplus(lin(h), beta=10)
        return self.out(h)[..., 0]


def _analytic_sdf(obst, x):
    """Exact distances to a scene of spheres (type 0) and boxes (type 1): obst (s, m, 7), x (s, n, 3)."""
    c, half, typ = obst[..., :3], obst[..., 3:6], obst[..., 6]
    rel = x[:, :, None] - c[:, None]  # (s, n, m, 3)
    sph = rel.norm(dim=-1) - half[:, None, :, 0]
    q = rel.abs() - half[:, None]
    box = q.clamp_min(0).norm(dim=-1) + q.amax(-1).clamp_max(0)
    d = torch.where(typ[:, None] > 0.5, box, sph)
    return d.amin(-1)


def _scene(s, m):
    c = torch.rand(s, m, 3, device="cuda") * torch.tensor([1.2, 1.6, 1.0], device="cuda") + torch.tensor(
        [0.0, -0.8, 0.0], device="cuda")
    half = 0.04 + 0.12 * torch.rand(s, m, 3, device="cuda")
    typ = (torch.rand(s, m, 1, device="cuda") > 0.5).float()
    return torch.cat([c, half, typ], -1)


def _fk_spheres(q, dh, offs):
    """Hand-written forward kinematics of a 7-DoF arm (standard DH, a chain of 4x4 transforms by batched matmul) and
    the world positions of 4 collision spheres per link: q (..., 7) -> (..., 28, 3)."""
    shp = q.shape[:-1]
    qf = q.reshape(-1, 7)
    n = qf.shape[0]
    t = torch.eye(4, device=q.device).expand(n, 4, 4)
    pts = []
    for j in range(7):
        a, alpha, d = dh[j, 0], dh[j, 1], dh[j, 2]
        ct, st = torch.cos(qf[:, j]), torch.sin(qf[:, j])
        ca, sa = torch.cos(alpha), torch.sin(alpha)
        zero, one = torch.zeros_like(ct), torch.ones_like(ct)
        m = torch.stack([ct, -st * ca, st * sa, a * ct, st, ct * ca, -ct * sa, a * st,
                         zero, sa * one, ca * one, d * one, zero, zero, zero, one], -1).view(n, 4, 4)
        t = t @ m
        pts.append(offs[j] @ t[:, :3, :3].transpose(1, 2) + t[:, None, :3, 3])  # (n, 4, 3)
    return torch.cat(pts, 1).view(*shp, 28, 3)


@_workload("CHOMP / TrajOpt-style trajectory optimisation by gradient through a learned collision checker, written by hand (random init): a neural signed-distance field conditioned on the scene (obstacles, spheres or boxes, encoded by a set-transformer layer and max-pooled; Fourier features of the query; a 4-layer softplus MLP of width 256) trained for 300 steps on analytic distances over batches of 8 scenes of 4-32 obstacles (drawn) and 4,096 query points each, Adam; then 6 planning problems, each a scene of 4-32 obstacles and 32-128 seeded trajectories (drawn) of 24-64 waypoints (drawn) for a 7-DoF arm, hand-written DH forward kinematics with 28 collision spheres, costs of collision (the learned distance against each sphere's radius, hinged), smoothness (finite-difference velocities and accelerations), joint limits and a goal pose, 85 Adam iterations on the waypoints (fp32 kinematics, the distance field under bf16 autocast); the best trajectory picked by a final cost, its cost terms and waypoints read back")
def chomp_traj_collision_opt(rng):
    d, hidden = _smoke(128, 16), _smoke(256, 16)
    sdf = _SceneSdf(d, hidden, 4, _smoke(16, 4)).cuda()
    opt = torch.optim.Adam(sdf.parameters(), lr=1e-3)
    for step in range(_smoke(300, 3)):
        m = rng.randint(4, 32)
        obst = _scene(_smoke(8, 2), m)
        x = torch.rand(obst.shape[0], _smoke(4096, 64), 3, device="cuda") * torch.tensor(
            [1.6, 2.0, 1.4], device="cuda") + torch.tensor([-0.2, -1.0, -0.2], device="cuda")
        target = _analytic_sdf(obst, x)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = sdf(sdf.encode(obst), x)
        w = 1.0 + 4.0 * torch.exp(-target.abs() * 20)  # near-surface points weighted up
        loss = (w * (pred.float() - target).abs()).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del obst, x, target, pred, w, loss
        if (step + 1) % _smoke(100, 1) == 0:
            torch.zeros(1, device="cuda").cpu()
    sdf.eval()
    sdf.requires_grad_(False)
    dh = torch.tensor([[0.0, -1.57, 0.333], [0.0, 1.57, 0.0], [0.0825, 1.57, 0.316], [-0.0825, -1.57, 0.0],
                       [0.0, 1.57, 0.384], [0.088, 1.57, 0.0], [0.0, 0.0, 0.107]], device="cuda")
    offs = torch.randn(7, 4, 3, device="cuda") * 0.05
    radii = torch.full((28,), 0.06, device="cuda")
    lo = torch.tensor([-2.9, -1.8, -2.9, -3.0, -2.9, 0.0, -2.9], device="cuda")
    hi = -lo + torch.tensor([0.0, 0.0, 0.0, 2.9, 0.0, 3.75, 0.0], device="cuda")
    for prob in range(_smoke(6, 2)):
        m = rng.randint(4, 32)
        nseed = rng.choice(_smoke([32, 64, 96, 128], [4]))
        T = rng.choice(_smoke([24, 32, 48, 64], [6]))
        obst = _scene(1, m)
        with torch.no_grad():
            code = sdf.encode(obst)
        q0 = torch.zeros(7, device="cuda")
        goal = torch.tensor([rng.uniform(-1.5, 1.5) for _ in range(7)], device="cuda")
        goal_ee = _fk_spheres(goal[None], dh, offs)[0, -1]
        s = torch.linspace(0, 1, T, device="cuda")[None, :, None]
        init = q0 + s * (goal - q0) + 0.3 * torch.randn(nseed, 1, 7, device="cuda") * torch.sin(math.pi * s)
        mid = init[:, 1:-1].clone().requires_grad_(True)
        popt = torch.optim.Adam([mid], lr=0.02)

        def costs(mid):
            traj = torch.cat([q0.expand(nseed, 1, 7), mid, goal.expand(nseed, 1, 7)], 1)
            sph = _fk_spheres(traj, dh, offs)  # (nseed, T, 28, 3)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                dist = sdf(code, sph.reshape(1, -1, 3)).float().view(nseed, T, 28)
            coll = _F.relu(radii + 0.03 - dist).pow(2).sum((1, 2))
            vel = traj[:, 1:] - traj[:, :-1]
            acc = vel[:, 1:] - vel[:, :-1]
            smooth = (vel ** 2).sum((1, 2)) * T + (acc ** 2).sum((1, 2)) * T * T * 0.1
            lim = (_F.relu(traj - hi) + _F.relu(lo - traj)).pow(2).sum((1, 2))
            reach = ((sph[:, -1, -1] - goal_ee) ** 2).sum(-1)
            return coll, smooth, lim, reach

        for it in range(_smoke(85, 3)):
            coll, smooth, lim, reach = costs(mid)
            total = (10.0 * coll + 0.1 * smooth + 10.0 * lim + reach).sum()
            popt.zero_grad(set_to_none=True)
            total.backward()
            popt.step()
            del coll, smooth, lim, reach, total
        with torch.no_grad():
            coll, smooth, lim, reach = costs(mid)
            final = 10.0 * coll + 0.1 * smooth + 10.0 * lim + reach
            best = final.argmin().view(1)
            torch.cat([torch.cat([coll[best], smooth[best], lim[best], reach[best]]), mid[best].flatten()]).cpu()
        del obst, code, init, mid, popt, coll, smooth, lim, reach, final, best


# ---------------------------------------------------------------- DAgger for multi-robot navigation with a GAT


class _GatLayer(_nn.Module):
    """Graph attention over the robots of each scene: keys from neighbour features plus an edge encoding of the
    relative position and velocity, robots beyond the sensing radius masked out (fill, not boolean indexing)."""

    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.q, self.k, self.v = _nn.Linear(d, d), _nn.Linear(d, d), _nn.Linear(d, d)
        self.edge = _nn.Sequential(_nn.Linear(5, d), _nn.ReLU(), _nn.Linear(d, d))
        self.out = _nn.Linear(d, d)
        self.norm = _nn.LayerNorm(d)
        self.ff = _nn.Sequential(_nn.Linear(d, 2 * d), _nn.GELU(), _nn.Linear(2 * d, d))
        self.n2 = _nn.LayerNorm(d)

    def forward(self, h, rel, mask):  # h (b, a, d), rel (b, a, a, 5), mask (b, 1, a, a) additive
        b, a, d = h.shape
        dh = d // self.h
        e = self.edge(rel)  # (b, a, a, d)
        q = self.q(h).view(b, a, self.h, dh).transpose(1, 2)  # (b, H, a, dh)
        k = (self.k(h)[:, None] + e).view(b, a, a, self.h, dh).permute(0, 3, 1, 2, 4)  # (b, H, i, j, dh)
        v = (self.v(h)[:, None] + e).view(b, a, a, self.h, dh).permute(0, 3, 1, 2, 4)
        att = ((q[..., None, :] * k).sum(-1) / math.sqrt(dh) + mask).softmax(-1)  # (b, H, i, j)
        msg = (att[..., None] * v).sum(-2).transpose(1, 2).reshape(b, a, d)
        h = self.norm(h + self.out(msg))
        return self.n2(h + self.ff(h))


class _NavPolicy(_nn.Module):
    def __init__(self, d, heads, layers):
        super().__init__()
        self.inp = _nn.Linear(5 + 16, d)
        self.layers = _nn.ModuleList([_GatLayer(d, heads) for _ in range(layers)])
        self.out = _nn.Sequential(_nn.Linear(d, d), _nn.ReLU(), _nn.Linear(d, 2))

    def forward(self, own, rel, mask):
        h = self.inp(own)
        for layer in self.layers:
            h = layer(h, rel, mask)
        return torch.tanh(self.out(h))


def _nav_features(pos, vel, goal, obst, radius):
    """Per-robot features (velocity, goal direction and distance, a 16-ray range scan to the obstacles), pairwise
    relative position, velocity and distance, and the additive attention mask of the sensing radius."""
    b, a, _ = pos.shape
    to_goal = goal - pos
    gd = to_goal.norm(dim=-1, keepdim=True)
    ang = torch.linspace(0, 2 * math.pi, 17, device=pos.device)[:-1]
    rays = torch.stack([torch.cos(ang), torch.sin(ang)], -1)  # (16, 2)
    ro = obst[:, None, :, :2] - pos[:, :, None]  # (b, a, m, 2)
    proj = ro @ rays.T  # (b, a, m, 16)
    perp2 = (ro * ro).sum(-1, keepdim=True) - proj ** 2
    hit = torch.where((proj > 0) & (perp2 < obst[:, None, :, 2:3] ** 2), proj, torch.full_like(proj, 3.0))
    scan = hit.amin(2).clamp_max(3.0) / 3.0
    own = torch.cat([vel, to_goal / (gd + 1e-6), gd.clamp_max(5.0), scan], -1)
    dp = pos[:, None] - pos[:, :, None]  # (b, i, j, 2): j relative to i
    dv = vel[:, None] - vel[:, :, None]
    dist = dp.norm(dim=-1, keepdim=True)
    rel = torch.cat([dp, dv, dist], -1)
    eye = torch.eye(a, device=pos.device, dtype=torch.bool)
    far = (dist[..., 0] > radius) | eye
    mask = torch.zeros(b, a, a, device=pos.device).masked_fill(far, -1e4)[:, None]
    return own, rel, mask


def _expert(pos, vel, goal, obst):
    """An attraction-repulsion expert (goal attraction, repulsion from robots and obstacles inside 1 m, a damping
    term), saturated to unit speed."""
    to_goal = goal - pos
    f = to_goal / (to_goal.norm(dim=-1, keepdim=True).clamp_min(0.3))
    dp = pos[:, :, None] - pos[:, None]
    d = dp.norm(dim=-1, keepdim=True) + torch.eye(pos.shape[1], device=pos.device)[None, ..., None] * 1e3
    f = f + (dp / d ** 3 * (d < 1.0).float()).sum(2) * 0.05
    do = pos[:, :, None] - obst[:, None, :, :2]
    dd = (do.norm(dim=-1, keepdim=True) - obst[:, None, :, 2:3]).clamp_min(0.02)
    f = f + (do / (dd ** 2 * do.norm(dim=-1, keepdim=True).clamp_min(1e-3)) * (dd < 1.0).float()).sum(2) * 0.05
    f = f - 0.2 * vel
    return f / f.norm(dim=-1, keepdim=True).clamp_min(1.0)


@_workload("DAgger for multi-robot navigation with a graph-attention policy, written by hand (random init): scenes of 8-64 robots (drawn per round) with 4-16 disc obstacles in a 10 m arena, each robot's features (velocity, goal direction and distance, a 16-ray range scan) and pairwise edges (relative position, velocity, distance) within a 3 m sensing radius by additive attention masks, 3 graph-attention layers of width 128 with edge-conditioned keys and values (4 heads), a 2-d velocity action; an attraction-repulsion expert; 9 rounds, each 60 steps of rollouts in 32-256 scenes (drawn, cut to 4,096 robots) with the policy mixed with the expert (beta decaying), the visited states (every third step) relabelled by the expert and appended to the aggregated dataset on the device (growing every round), then 34 training steps, each a minibatch of 32 scene states drawn from all the data so far of one scene configuration (drawn), under bf16 autocast, MSE, Adam with clipping; every third round an evaluation rollout of 80 steps without grad, arrival and collision rates read back")
def gat_swarm_dagger_train(rng):
    d, heads, layers = _smoke(128, 16), _smoke(4, 2), _smoke(3, 1)
    policy = _NavPolicy(d, heads, layers).cuda()
    opt = torch.optim.Adam(policy.parameters(), lr=5e-4)
    radius, dt, arena = 3.0, 0.1, 10.0
    data = {}  # robots per scene -> list of (pos, vel, goal, obst, expert action) chunks

    def reset(nsc, a, m):
        pos = torch.rand(nsc, a, 2, device="cuda") * arena
        goal = torch.rand(nsc, a, 2, device="cuda") * arena
        obst = torch.cat([torch.rand(nsc, m, 2, device="cuda") * arena, 0.2 + 0.5 * torch.rand(nsc, m, 1,
                                                                                                device="cuda")], -1)
        return pos, torch.zeros_like(pos), goal, obst

    def rollout(nsc, a, m, steps, beta, record):
        pos, vel, goal, obst = reset(nsc, a, m)
        coll = torch.zeros(nsc, a, device="cuda")
        rec = []
        with torch.no_grad():
            for t in range(steps):
                own, rel, mask = _nav_features(pos, vel, goal, obst, radius)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    act = policy(own, rel, mask).float()
                exp = _expert(pos, vel, goal, obst)
                if record and t % 3 == 0:
                    rec.append(torch.cat([pos, vel, goal, exp], -1))
                mix = (torch.rand(nsc, a, 1, device="cuda") < beta).float()
                cmd = mix * exp + (1 - mix) * act
                vel = 0.7 * vel + 0.3 * cmd
                pos = (pos + dt * vel).clamp(0, arena)
                dp = (pos[:, :, None] - pos[:, None]).norm(dim=-1) + torch.eye(a, device="cuda") * 1e3
                coll = coll + (dp.amin(-1) < 0.3).float()
        arrived = ((goal - pos).norm(dim=-1) < 0.5).float().mean()
        return rec, obst, arrived, (coll > 0).float().mean()

    rounds = _smoke(9, 2)
    for rnd in range(rounds):
        a = rng.choice(_smoke([8, 16, 32, 48, 64], [4, 6]))
        m = rng.randint(4, 16)
        nsc = max(1, min(rng.choice(_smoke([32, 64, 128, 256], [2])), _smoke(4096, 16) // a))
        beta = 0.5 ** rnd
        policy.eval()
        rec, obst, _, _ = rollout(nsc, a, m, _smoke(60, 4), beta, True)
        chunk = torch.stack(rec, 1).flatten(0, 1)  # (nsc * steps/3, a, 8)
        obst_rep = obst[:, None].expand(-1, len(rec), -1, -1).flatten(0, 1)
        data.setdefault((a, m), []).append((chunk, obst_rep))
        del rec, obst
        keys = list(data)
        policy.train()
        for step in range(_smoke(34, 2)):
            key = rng.choice(keys)
            states = torch.cat([c for c, _ in data[key]]) if len(data[key]) > 1 else data[key][0][0]
            obsts = torch.cat([o for _, o in data[key]]) if len(data[key]) > 1 else data[key][0][1]
            idx = torch.randint(0, states.shape[0], (_smoke(32, 2),), device="cuda")
            s, ob = states[idx], obsts[idx]
            own, rel, mask = _nav_features(s[..., 0:2], s[..., 2:4], s[..., 4:6], ob, radius)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                act = policy(own, rel, mask)
            loss = _F.mse_loss(act.float(), s[..., 6:8])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
            opt.step()
            del states, obsts, idx, s, ob, own, rel, mask, act, loss
        if (rnd + 1) % 3 == 0:
            policy.eval()
            _, _, arrived, coll = rollout(_smoke(64, 2), _smoke(32, 4), 8, _smoke(80, 4), 0.0, False)
            torch.stack([arrived, coll]).cpu()

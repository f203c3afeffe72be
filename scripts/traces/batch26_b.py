"""The twenty-sixth batch's second half (batch26.py holds the first; written in two to keep files small):
multi-task dense prediction with GradNorm loss balancing, PCN point-cloud completion with a Chamfer loss, and
DeepVO visual odometry training. Same conventions and plumbing as batch26.py; record.py registers this module
right after it, so that the batch's workloads keep their order. Two are single-stream; deepvo_train uploads its
frame sequences from 3 reused pinned host buffers on a side stream (a DataLoader-style prefetch), the compute
stream waiting on its event and the uploaded tensors record_stream'ed.

Real sizes checked as batch26.py's header says: every workload run whole at its real sizes on the meta device
(every step's shapes: mtl_dense_gradnorm's dilated ResNet-50 at output stride 8, the ASPP-style neck, four heads
upsampled to the crop and the create_graph gradient norms of the neck's last conv; pcn_completion's PointNet
encoder over 2048 resampled partial points, the 1024 coarse and 16384 folded points and the chunked (chunk,
16384, 16384) distance matrices of the Chamfer nearest neighbours; deepvo_train's FlowNetS encoder on 6-channel
frame pairs of 192 x 640, the 256 x 832 evaluation windows and the 2-layer LSTM over 5-7 step sequences), its op
outputs counted there for the event estimates: mtl_dense_gradnorm 173k op outputs with 60 steps (96 now: about
0.55M events; 15.8 GB of live outputs counted in fp32 at batches of 8 crops up to 480 x 640, now 4 crops up to
384 x 512: about 5 GB); pcn_completion 63k with 240 steps of 16 (1000 steps of 8 now: about 0.52M; 7.8 GB
counted with 4-sample distance chunks, now 2 and half the batch: about 3 GB); deepvo_train 181k with 300 steps
(450 now: about 0.54M; 5.5 GB counted in fp32, about 3.5 GB under bf16 autocast).
"""

import torch

from batch_common import Batch, upload

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- multi-task dense prediction with GradNorm


@_workload("multi-task dense prediction on NYUv2-style scenes (semantic segmentation of 40 classes, depth, surface normals, edges) with GradNorm loss balancing (Chen et al. 2018): a torchvision ResNet-50 backbone (random init, dilated at output stride 8), a shared 3x3-conv neck with ASPP-style dilated branches, four task heads upsampled bilinearly to the crop; the task weights learned by GradNorm: every step the gradient norm of each weighted task loss with respect to the neck's last conv weight taken by autograd.grad with create_graph, the L1 gap to the mean norm times the relative inverse training rates (alpha 1.5) differentiated into the weights only, then renormalized; batches of 4 crops of 256-384 x 320-512 (drawn per step, multiples of 32), fp32, SGD with momentum and poly decay, 96 steps, the per-task losses read back every step")
def mtl_dense_gradnorm(rng):
    import torchvision

    nn, f = torch.nn, torch.nn.functional
    w = _smoke(64, 8)
    net = torchvision.models.resnet50(weights=None, width_per_group=w, replace_stride_with_dilation=[False, True, True])
    backbone = nn.Sequential(*list(net.children())[:-2]).cuda()
    cin, cn = 2048, _smoke(256, 32)
    neck_branches = nn.ModuleList(nn.Sequential(nn.Conv2d(cin, cn, 3 if r else 1, padding=r, dilation=max(r, 1),
                                                          bias=False), nn.BatchNorm2d(cn), nn.ReLU())
                                  for r in (0, 6, 12, 18)).cuda()
    neck = nn.Conv2d(4 * cn, cn, 3, padding=1, bias=False).cuda()
    neck_bn = nn.BatchNorm2d(cn).cuda()
    outs = {"seg": 40, "depth": 1, "normal": 3, "edge": 1}
    heads = nn.ModuleDict({k: nn.Sequential(nn.Conv2d(cn, cn, 3, padding=1, bias=False), nn.BatchNorm2d(cn),
                                            nn.ReLU(), nn.Conv2d(cn, c, 1)) for k, c in outs.items()}).cuda()
    model = nn.ModuleList([backbone, neck_branches, neck, neck_bn, heads])
    tw = nn.Parameter(torch.ones(4, device="cuda"))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    wopt = torch.optim.Adam([tw], lr=0.025)
    steps, alpha = _smoke(96, 2), 1.5
    init_losses = None
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = 0.01 * (1 - step / steps) ** 0.9
        h, wd = 32 * rng.randint(_smoke(8, 2), _smoke(12, 3)), 32 * rng.randint(_smoke(10, 2), _smoke(16, 3))
        bsz = 4 if w >= 32 else 2
        img = torch.randn(bsz, 3, h, wd, device="cuda")
        seg = torch.randint(0, 40, (bsz, h, wd), device="cuda")
        seg[:, : h // 16] = 255  # unlabelled band
        depth = torch.rand(bsz, 1, h, wd, device="cuda") * 10
        normal = f.normalize(torch.randn(bsz, 3, h, wd, device="cuda"), dim=1)
        edge = (torch.rand(bsz, 1, h, wd, device="cuda") < 0.05).float()
        feat = backbone(img)
        x = f.relu(neck_bn(neck(torch.cat([br(feat) for br in neck_branches], 1))))
        preds = {k: f.interpolate(hd(x), size=(h, wd), mode="bilinear", align_corners=False) for k, hd in heads.items()}
        valid = (depth > 0).float()
        losses = torch.stack([
            f.cross_entropy(preds["seg"], seg, ignore_index=255),
            (f.l1_loss(preds["depth"], depth, reduction="none") * valid).sum() / valid.sum(),
            (1 - f.cosine_similarity(f.normalize(preds["normal"], dim=1), normal, dim=1)).mean(),
            f.binary_cross_entropy_with_logits(preds["edge"], edge, pos_weight=torch.tensor(19.0, device="cuda")),
        ])
        if init_losses is None:
            init_losses = losses.detach()
        weighted = tw * losses
        gnorms = torch.stack([torch.autograd.grad(weighted[i], neck.weight, retain_graph=True, create_graph=True)[0].norm()
                              for i in range(4)])
        ratio = losses.detach() / init_losses
        target = (gnorms.mean() * (ratio / ratio.mean()) ** alpha).detach()
        gn_loss = (gnorms - target).abs().sum()
        opt.zero_grad(set_to_none=True)
        wopt.zero_grad(set_to_none=True)
        tw.grad = torch.autograd.grad(gn_loss, tw, retain_graph=True)[0]
        weighted.sum().backward(inputs=list(model.parameters()))
        opt.step()
        wopt.step()
        with torch.no_grad():
            tw.mul_(4 / tw.sum())
        losses.detach().tolist()
        del img, seg, depth, normal, edge, feat, x, preds, valid, losses, weighted, gnorms, ratio, target, gn_loss
    torch.cuda.synchronize()


# ---------------------------------------------------------------- PCN point-cloud completion


def _chamfer(a, b, chunk):
    """Symmetric Chamfer-L1 distance (PCN's CD-T) of (B, N, 3) and (B, M, 3): nearest neighbours found on chunks of
    the batch by cdist without grad (as the CUDA kernel returns indices), the distances recomputed with grad."""
    ia, ib = [], []
    with torch.no_grad():
        for s in range(0, a.shape[0], chunk):
            dm = torch.cdist(a[s:s + chunk], b[s:s + chunk])
            ia.append(dm.argmin(2))
            ib.append(dm.argmin(1))
            del dm
    ia, ib = torch.cat(ia), torch.cat(ib)
    da = (a - b.gather(1, ia[..., None].expand(-1, -1, 3))).norm(dim=-1)
    db = (b - a.gather(1, ib[..., None].expand(-1, -1, 3))).norm(dim=-1)
    return 0.5 * (da.mean() + db.mean())


@_workload("point-cloud completion, PCN (Yuan et al. 2018) as trained on ShapeNet-style partial scans: a two-stage PointNet encoder (shared MLPs 3-128-256, max-pooled global feature concatenated back to every point, 512-1024, max-pool to a 1024-d code), a fully connected decoder to 1024 coarse points and a folding decoder (a 4x4 grid per coarse point, code and point concatenated, 3-layer MLP of 512) to 16384 fine points, random init; partial inputs of 600-2048 observed points (drawn per sample) resampled with repetition to 2048 on the device, 16384-point complete targets; Chamfer-L1 on the coarse output plus an annealed weight on the fine output, nearest neighbours by chunked cdist without grad; batches of 8 (a few of 4), fp32, Adam with step decay, 1000 steps, an evaluation every 250 steps over 4 batches of 16 partial scans with the fine Chamfer distance read back")
def pcn_completion(rng):
    nn = torch.nn
    ncoarse, grid = _smoke(1024, 32), 4
    nfine = ncoarse * grid * grid
    code = _smoke(1024, 64)
    m1 = nn.Sequential(nn.Conv1d(3, 128, 1), nn.BatchNorm1d(128), nn.ReLU(), nn.Conv1d(128, 256, 1)).cuda()
    m2 = nn.Sequential(nn.Conv1d(512, 512, 1), nn.BatchNorm1d(512), nn.ReLU(), nn.Conv1d(512, code, 1)).cuda()
    fc = nn.Sequential(nn.Linear(code, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                       nn.Linear(1024, 3 * ncoarse)).cuda()
    fold = nn.Sequential(nn.Conv1d(code + 2 + 3, 512, 1), nn.BatchNorm1d(512), nn.ReLU(), nn.Conv1d(512, 512, 1),
                         nn.BatchNorm1d(512), nn.ReLU(), nn.Conv1d(512, 3, 1)).cuda()
    model = nn.ModuleList([m1, m2, fc, fold])
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    sched = torch.optim.lr_scheduler.StepLR(opt, 200, 0.7)
    g = torch.linspace(-0.05, 0.05, grid, device="cuda")
    seed = torch.stack(torch.meshgrid(g, g, indexing="ij"), 0).view(2, -1)  # (2, grid*grid)
    npart = _smoke(2048, 128)

    def forward(part):
        b = part.shape[0]
        x = m1(part.transpose(1, 2))
        x = torch.cat([x, x.max(2, keepdim=True).values.expand(-1, -1, x.shape[2])], 1)
        gfeat = m2(x).max(2).values
        coarse = fc(gfeat).view(b, ncoarse, 3)
        pts = coarse[:, :, None].expand(-1, -1, grid * grid, -1).reshape(b, nfine, 3)
        feat = torch.cat([gfeat[:, :, None].expand(-1, -1, nfine), seed.repeat(1, ncoarse)[None].expand(b, -1, -1),
                          pts.transpose(1, 2)], 1)
        fine = fold(feat).transpose(1, 2) + pts
        return coarse, fine

    def batch(b):
        obs = [rng.randint(npart * 3 // 10, npart) for _ in range(b)]
        full = torch.rand(b, nfine, 3, device="cuda") - 0.5
        pick = torch.stack([torch.randint(0, n, (npart,), device="cuda") for n in obs])  # resampled to npart
        part = full.gather(1, pick[..., None].expand(-1, -1, 3))
        return part, full

    steps = _smoke(1000, 3)
    for step in range(steps):
        bsz = 8 if rng.random() < 0.85 else 4
        part, full = batch(bsz if ncoarse >= 256 else 2)
        alpha = min(1.0, 0.01 * 10 ** (step // 250)) if ncoarse >= 256 else 0.5
        coarse, fine = forward(part)
        loss = _chamfer(coarse, full, 2) + alpha * _chamfer(fine, full, 2)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        float(loss.detach())
        del part, full, coarse, fine, loss
        if (step + 1) % _smoke(250, 3) == 0:
            model.eval()
            with torch.no_grad():
                for _ in range(_smoke(4, 1)):
                    part, full = batch(16 if ncoarse >= 256 else 2)
                    float(_chamfer(forward(part)[1], full, 2))
                    del part, full
            model.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- DeepVO visual odometry training


class _DeepVO(torch.nn.Module):
    """FlowNetS-style encoder over stacked consecutive frames (6 channels), a 2-layer LSTM, a 6-DoF pose head."""

    def __init__(self, w, hid):
        super().__init__()
        nn = torch.nn
        spec = [(6, w, 7, 2), (w, 2 * w, 5, 2), (2 * w, 4 * w, 5, 2), (4 * w, 4 * w, 3, 1), (4 * w, 8 * w, 3, 2),
                (8 * w, 8 * w, 3, 1), (8 * w, 8 * w, 3, 2), (8 * w, 8 * w, 3, 1), (8 * w, 16 * w, 3, 2)]
        self.enc = nn.Sequential(*[nn.Sequential(nn.Conv2d(a, b, k, s, k // 2, bias=False), nn.BatchNorm2d(b),
                                                 nn.LeakyReLU(0.1), nn.Dropout(0.2 if i == len(spec) - 1 else 0.0))
                                   for i, (a, b, k, s) in enumerate(spec)])
        self.lstm = nn.LSTM(16 * w * 3 * 10, hid, 2, batch_first=True, dropout=0.5)
        self.head = nn.Linear(hid, 6)

    def forward(self, frames):  # (B, T+1, 3, H, W)
        b, t1 = frames.shape[:2]
        pairs = torch.cat([frames[:, :-1], frames[:, 1:]], 2).flatten(0, 1)
        x = self.enc(pairs)
        x = torch.nn.functional.adaptive_avg_pool2d(x, (3, 10)).view(b, t1 - 1, -1)
        return self.head(self.lstm(x)[0])


@_workload("monocular visual odometry, DeepVO (Wang et al. 2017) trained on KITTI-style sequences: a FlowNetS-style encoder (9 conv+BN+LeakyReLU layers, 64-1024 channels, random init) on consecutive frame pairs stacked to 6 channels, pooled to 3x10, a 2-layer LSTM of 1000 (cuDNN), a 6-DoF relative-pose head, MSE with the rotation term weighted 100; batches of 8 sequences of 5-7 frame pairs (drawn per step) at 192 x 640, uploaded from 3 reused pinned host buffers on a side stream (the compute stream waiting on its event, the tensors record_stream'ed), with a random horizontal flip and brightness jitter on the device; bf16 autocast, Adagrad (lr 5e-4), 450 steps, the loss read back every step; every 150 steps an evaluation over a 64-pair trajectory at 256 x 832 in windows of 8 pairs carrying the LSTM state")
def deepvo_train(rng):
    w, hid = _smoke(64, 4), _smoke(1000, 32)
    h, wd = _smoke(192, 96), _smoke(640, 320)
    model = _DeepVO(w, hid).cuda()
    opt = torch.optim.Adagrad(model.parameters(), lr=5e-4)
    side = torch.cuda.Stream()
    bsz, maxt = _smoke(8, 2), 8
    hosts = [torch.empty(bsz, maxt, 3, h, wd, dtype=torch.uint8).pin_memory() for _ in range(3)]
    for hb in hosts:
        hb.random_(0, 256)
    steps = _smoke(450, 3)
    for step in range(steps):
        t1 = rng.randint(6, 8)
        with torch.cuda.stream(side):
            raw = upload(hosts[step % 3][:, :t1])
            done = side.record_event()
        torch.cuda.current_stream().wait_event(done)
        raw.record_stream(torch.cuda.current_stream())
        frames = raw.float() / 255 - 0.5
        if rng.random() < 0.5:
            frames = frames.flip(-1)
        frames = frames * (1 + 0.2 * (torch.rand(bsz, 1, 1, 1, 1, device="cuda") - 0.5))
        pose = torch.randn(bsz, t1 - 1, 6, device="cuda") * 0.1
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(frames).float()
        loss = 100 * torch.nn.functional.mse_loss(pred[..., :3], pose[..., :3]) + \
            torch.nn.functional.mse_loss(pred[..., 3:], pose[..., 3:])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        float(loss.detach())
        del raw, frames, pose, pred, loss
        if (step + 1) % _smoke(150, 3) == 0:
            model.eval()
            eh, ew = _smoke(256, 96), _smoke(832, 320)
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                traj = torch.rand(1, _smoke(65, 9), 3, eh, ew, device="cuda") - 0.5
                state = None
                for s in range(0, traj.shape[1] - 1, 8):
                    win = traj[:, s:s + 9]
                    pairs = torch.cat([win[:, :-1], win[:, 1:]], 2).flatten(0, 1)
                    x = torch.nn.functional.adaptive_avg_pool2d(model.enc(pairs), (3, 10)).view(1, win.shape[1] - 1, -1)
                    y, state = model.lstm(x, state)
                    model.head(y).float().cpu()
                    del win, pairs, x, y
                del traj, state
            model.train()
    torch.cuda.synchronize()

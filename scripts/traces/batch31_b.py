"""The thirty-first batch's second half (batch31.py holds the first; written in two to keep files small): a
mixture-of-depths vision transformer serving requests with per-request token budgets, SiamRPN-style visual
object tracking over batches of videos with varying search-region sizes and frames uploaded on a side stream,
knowledge distillation of a small audio tagger from a larger frozen one on variable clip lengths, and
prototypical-network few-shot training with varying way and shot. Same conventions and plumbing as batch31.py;
record.py registers this module right after it, so that the batch's workloads keep their order. Three are
single-stream; siamrpn_track uploads every frame from reused pinned host buffers on a side stream (the compute
stream waiting on the frame's event, the uploaded tensor record_stream'ed). mod_vit_serve, siamrpn_track and
audio_kd_train run under bf16 autocast; protonet_fewshot_train runs in fp32 and stays under 1 GB requested.

Real sizes checked as batch31.py's header says, where time allowed: workloads run whole at their real sizes on
the meta device, op outputs counted there for the estimates in record_new31.sh's header (which says which).
"""

import math

import torch

from batch_common import Batch, upload

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- mixture-of-depths ViT serving, token budgets


class _VitBlk(torch.nn.Module):
    """A pre-norm ViT block (SDPA attention, GELU MLP)."""

    def __init__(self, d, heads):
        super().__init__()
        nn = torch.nn
        self.h = heads
        self.n1, self.qkv, self.o = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.n2, self.fc1, self.fc2 = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def delta(self, x):
        """The block's residual update (attention and MLP), without adding x back."""
        b, n, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, n, 3, self.h, -1).permute(2, 0, 3, 1, 4).unbind(0)
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, d)
        y = x + self.o(a)
        return y + self.fc2(torch.nn.functional.gelu(self.fc1(self.n2(y)))) - x


@_workload("image classification serving with a mixture-of-depths vision transformer (Raposo et al. 2024 applied to a ViT-S/16, written by hand): requests of 1-12 images (drawn) at 160-320 px on a side (drawn per image) resized on the device to 224 (bilinear) and normalized, each request carrying a service tier whose token budget (25%, 50%, 75% or 100% of the 196 patch tokens, drawn) sets the capacity of the 6 routed layers (every other of 12); requests queued per tier and batched up to 32 images; in a routed layer a linear router scores the tokens, torch.topk keeps the budget's tokens (sorted back into order), the block runs on the gathered tokens only and its update is scaled by the router's sigmoid and scattered back by scatter_add, the other tokens skipping the layer; the class token always kept; bf16 autocast, eval mode, no grad, SDPA attention; top-5 labels and probabilities read back per batch; 1600 requests")
def mod_vit_serve(rng):
    nn, f = torch.nn, torch.nn.functional
    d, heads, nl, ncls = _smoke(384, 16), _smoke(6, 2), _smoke(12, 4), _smoke(1000, 10)
    res, p = _smoke(224, 32), 16
    ntok = (res // p) ** 2
    patch = nn.Conv2d(3, d, p, p)
    cls = nn.Parameter(torch.randn(1, 1, d) * 0.02)
    pos = nn.Parameter(torch.randn(1, ntok + 1, d) * 0.02)
    blocks = nn.ModuleList(_VitBlk(d, heads) for _ in range(nl))
    routers = nn.ModuleList(nn.Linear(d, 1) for _ in range(nl // 2))
    norm, head = nn.LayerNorm(d), nn.Linear(d, ncls)
    model = nn.ModuleList([patch, blocks, routers, norm, head]).cuda().eval()
    cls, pos = cls.cuda(), pos.cuda()
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda")[:, None, None]
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda")[:, None, None]
    fracs = [0.25, 0.5, 0.75, 1.0]
    queues = {fr: [] for fr in fracs}
    nreq, bmax = _smoke(1600, 4), _smoke(32, 4)

    def run(fr, imgs):
        b = len(imgs)
        x = torch.cat(imgs)
        x = patch((x - mean) / std).flatten(2).transpose(1, 2)
        x = torch.cat([cls.expand(b, 1, d), x], 1) + pos
        cap = max(1, int(fr * ntok))
        for i, blk in enumerate(blocks):
            if i % 2 == 0 or cap >= ntok:
                x = x + blk.delta(x)
                continue
            r = routers[i // 2](x[:, 1:]).squeeze(-1)  # (B, N)
            top = torch.topk(r, cap, -1).indices.sort(-1).values + 1  # token positions, class token excluded
            idx = torch.cat([torch.zeros(b, 1, dtype=top.dtype, device="cuda"), top], 1)
            g = x.gather(1, idx[..., None].expand(b, cap + 1, d))
            w = torch.cat([torch.ones(b, 1, device="cuda", dtype=r.dtype), torch.sigmoid(r.gather(1, top - 1))], 1)
            x = x.scatter_add(1, idx[..., None].expand(b, cap + 1, d), blk.delta(g) * w[..., None].to(x.dtype))
            del r, top, idx, g, w
        probs = torch.softmax(head(norm(x[:, 0])).float(), -1)
        pv, pi = probs.topk(5, -1)
        pv.tolist()
        pi.tolist()

    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        for req in range(nreq):
            fr = rng.choice(fracs)
            for _ in range(rng.randint(1, _smoke(12, 3))):
                s = rng.randint(_smoke(160, 24), _smoke(320, 48))
                img = torch.randint(0, 256, (1, 3, s, s + rng.randint(-s // 4, s // 4)), device="cuda",
                                    dtype=torch.uint8)
                queues[fr].append(f.interpolate(img.float() / 255, size=(res, res), mode="bilinear",
                                                align_corners=False))
                del img
            if len(queues[fr]) >= bmax or (req + 1) % 16 == 0:  # a full batch, or the tier's timeout
                for k in fracs if (req + 1) % 16 == 0 else [fr]:
                    while queues[k]:
                        run(k, queues[k][:bmax])
                        queues[k] = queues[k][bmax:]
        for k in fracs:
            while queues[k]:
                run(k, queues[k][:bmax])
                queues[k] = queues[k][bmax:]
    torch.cuda.synchronize()


# ---------------------------------------------------------------- SiamRPN tracking, varying search regions


@_workload("visual object tracking with SiamRPN (Li et al. 2018) written by hand, the inference loop: batches of 4-12 videos (drawn) tracked together, 60-240 frames each (drawn per batch) of 360x640, every frame uploaded as uint8 from one of two reused pinned host buffers on a side stream (the compute stream waiting on the frame's event, the tensor record_stream'ed); the template (127 px, crop around the first box by affine_grid and grid_sample) embedded once a video by an AlexNet-style backbone (five convs with BatchNorm, two max-pools) and turned into classification and regression kernels of 5 anchors; each frame's search region cropped around the previous box's center at a size drawn per batch (255-383 px, as a long-term tracker enlarges its search when the target is uncertain) with the crop scale following the box on the device, the search embedding correlated with the template kernels by a grouped conv (the batch folded into the groups), the anchor scores softmaxed, the boxes decoded from the regression, the scale- and ratio-change penalty and a cosine window applied, the best anchor chosen by argmax and gathered, the box updated with a learning-rate blend, all on the device; the boxes and scores read back every frame; bf16 autocast, eval mode, no grad; 16 batches")
def siamrpn_track(rng):
    nn, f = torch.nn, torch.nn.functional
    w = [_smoke(96, 8), _smoke(256, 16), _smoke(384, 16), _smoke(384, 16), _smoke(256, 16)]
    backbone = nn.Sequential(
        nn.Conv2d(3, w[0], 11, 2), nn.BatchNorm2d(w[0]), nn.MaxPool2d(3, 2), nn.ReLU(),
        nn.Conv2d(w[0], w[1], 5), nn.BatchNorm2d(w[1]), nn.MaxPool2d(3, 2), nn.ReLU(),
        nn.Conv2d(w[1], w[2], 3), nn.BatchNorm2d(w[2]), nn.ReLU(),
        nn.Conv2d(w[2], w[3], 3), nn.BatchNorm2d(w[3]), nn.ReLU(),
        nn.Conv2d(w[3], w[4], 3), nn.BatchNorm2d(w[4]))
    na, c = 5, w[4]
    t_cls, t_reg = nn.Conv2d(c, c * 2 * na, 3), nn.Conv2d(c, c * 4 * na, 3)
    s_cls, s_reg = nn.Conv2d(c, c, 3), nn.Conv2d(c, c, 3)
    adjust = nn.Conv2d(4 * na, 4 * na, 1)
    model = nn.ModuleList([backbone, t_cls, t_reg, s_cls, s_reg, adjust]).cuda().eval()
    fh, fw = _smoke(360, 96), _smoke(640, 128)
    tsz = 127
    vmax = _smoke(12, 2)
    hosts = [torch.randint(0, 256, (vmax, 3, fh, fw), dtype=torch.uint8).pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    ratios = torch.tensor([0.33, 0.5, 1.0, 2.0, 3.0], device="cuda")
    nbatch = _smoke(16, 2)

    def crop(frames, box, out, ctx):
        """Crops a square around each box (cx, cy, w, h in pixels) of side ctx * sqrt((w+p)(h+p)), resized to out."""
        b = frames.shape[0]
        pad = (box[:, 2] + box[:, 3]) / 2
        side_px = torch.sqrt((box[:, 2] + pad) * (box[:, 3] + pad)) * ctx
        theta = torch.zeros(b, 2, 3, device="cuda")
        theta[:, 0, 0] = side_px / fw
        theta[:, 1, 1] = side_px / fh
        theta[:, 0, 2] = box[:, 0] / fw * 2 - 1
        theta[:, 1, 2] = box[:, 1] / fh * 2 - 1
        grid = f.affine_grid(theta, (b, 3, out, out), align_corners=False)
        return f.grid_sample(frames, grid, padding_mode="border", align_corners=False), side_px

    def stage(k, n):
        hosts[k][:n, :, :8].random_(0, 256)  # the decoder writes the new frame (the rest reused)
        with torch.cuda.stream(side):
            x = upload(hosts[k][:n])
            ev = side.record_event()
        return x, ev

    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        for bi in range(nbatch):
            n = rng.randint(_smoke(4, 1), vmax)
            nf = rng.randint(_smoke(60, 2), _smoke(240, 4))
            ssz = rng.choice([255, 287, 319, 351, 383]) if _smoke(1, 0) else 159
            nxt = stage(0, n)
            frames, ev = nxt
            torch.cuda.current_stream().wait_event(ev)
            frames.record_stream(torch.cuda.current_stream())
            fr = frames.float()
            box = torch.stack([torch.rand(n, device="cuda") * fw * 0.5 + fw * 0.25,
                               torch.rand(n, device="cuda") * fh * 0.5 + fh * 0.25,
                               torch.rand(n, device="cuda") * 80 + 20, torch.rand(n, device="cuda") * 80 + 20], 1)
            z, _ = crop(fr, box, tsz, 1.0)
            zf = backbone(z)
            kc = t_cls(zf).view(n * 2 * na, c, zf.shape[2] - 2, zf.shape[3] - 2)
            kr = t_reg(zf).view(n * 4 * na, c, zf.shape[2] - 2, zf.shape[3] - 2)
            del frames, fr, z, zf
            nxt = stage(1, n)
            win = None
            for t in range(1, nf):
                frames, ev = nxt
                torch.cuda.current_stream().wait_event(ev)
                frames.record_stream(torch.cuda.current_stream())
                if t + 1 < nf:
                    nxt = stage((t + 1) % 2, n)
                x, side_px = crop(frames.float(), box, ssz, ssz / tsz)
                xf = backbone(x)
                sc, sr = s_cls(xf), s_reg(xf)
                hs, ws = sc.shape[2], sc.shape[3]
                cls = f.conv2d(sc.reshape(1, n * c, hs, ws), kc, groups=n)
                reg = adjust(f.conv2d(sr.reshape(1, n * c, hs, ws), kr, groups=n).view(n, 4 * na, *cls.shape[2:]))
                gh, gw = cls.shape[2], cls.shape[3]
                score = torch.softmax(cls.view(n, 2, na, gh, gw).float(), 1)[:, 1].flatten(1)  # (n, A)
                if win is None:
                    hw = torch.hann_window(gh, periodic=False).cuda()
                    win = (hw[:, None] * torch.hann_window(gw, periodic=False).cuda()[None]).flatten()
                    win = win.repeat(na)
                    ay, ax = torch.meshgrid(torch.arange(gh, device="cuda").float() - gh // 2,
                                            torch.arange(gw, device="cuda").float() - gw // 2, indexing="ij")
                    stride = 8.0
                    aw = (64.0 / ratios.sqrt())[:, None].expand(na, gh * gw).flatten()
                    ah = (64.0 * ratios.sqrt())[:, None].expand(na, gh * gw).flatten()
                    acx, acy = (ax.flatten() * stride).repeat(na), (ay.flatten() * stride).repeat(na)
                r = reg.float().view(n, 4, na * gh * gw)
                px, py = r[:, 0] * aw + acx, r[:, 1] * ah + acy
                pw, ph = torch.exp(r[:, 2].clamp(max=4)) * aw, torch.exp(r[:, 3].clamp(max=4)) * ah
                scale_z = (ssz / side_px)[:, None]
                tw, th = box[:, 2:3] * scale_z, box[:, 3:4] * scale_z

                def sz(a, b_):
                    p_ = (a + b_) / 2
                    return torch.sqrt((a + p_) * (b_ + p_))

                s_c = torch.maximum(sz(pw, ph) / sz(tw, th), sz(tw, th) / sz(pw, ph))
                r_c = torch.maximum((tw / th) / (pw / ph), (pw / ph) / (tw / th))
                penalty = torch.exp(-(r_c * s_c - 1) * 0.05)
                pscore = (penalty * score) * 0.56 + win[None] * 0.44
                best = pscore.argmax(1, keepdim=True)
                lr = (penalty.gather(1, best) * score.gather(1, best) * 0.3).squeeze(1)
                bx = torch.cat([px.gather(1, best), py.gather(1, best), pw.gather(1, best), ph.gather(1, best)], 1)
                bx = bx / scale_z
                new = torch.stack([box[:, 0] + bx[:, 0], box[:, 1] + bx[:, 1],
                                   box[:, 2] * (1 - lr) + bx[:, 2] * lr, box[:, 3] * (1 - lr) + bx[:, 3] * lr], 1)
                lo = torch.tensor([0.0, 0.0, 10.0, 10.0], device="cuda")
                hi = torch.tensor([float(fw), float(fh), float(fw), float(fh)], device="cuda")
                box = torch.minimum(torch.maximum(new, lo), hi)
                box.tolist()
                score.gather(1, best).tolist()
                del frames, x, xf, sc, sr, cls, reg, score, r, px, py, pw, ph, scale_z, tw, th, s_c, r_c, penalty
                del pscore, best, lr, bx, new, lo, hi, side_px
            del nxt, kc, kr, box, win
    torch.cuda.synchronize()


# ---------------------------------------------------------------- audio tagging knowledge distillation


def _convnet(widths, pool_every=1, dw=False):
    """A CNN over log-mel (B, 1, T, F): 3x3 conv blocks with BatchNorm and ReLU (depthwise-separable when dw),
    2x2 average pooling after each stage."""
    nn = torch.nn
    layers, cin = [], 1
    for i, c in enumerate(widths):
        if dw and cin > 1:
            layers += [nn.Conv2d(cin, cin, 3, padding=1, groups=cin, bias=False), nn.BatchNorm2d(cin), nn.ReLU(),
                       nn.Conv2d(cin, c, 1, bias=False), nn.BatchNorm2d(c), nn.ReLU()]
        else:
            layers += [nn.Conv2d(cin, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU(),
                       nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU()]
        if i < len(widths) - 1:
            layers.append(nn.AvgPool2d(2))
        cin = c
    return nn.Sequential(*layers)


@_workload("knowledge distillation of an audio tagger on AudioSet-style clips of variable length: a frozen CNN10-style teacher (PANNs, Kong et al. 2020, four stages of paired 3x3 convs, 64-512 channels, eval mode, no grad) and a depthwise-separable student (six stages, 32-256 channels) written by hand; clips of 1-10 s of 32 kHz audio (drawn per step) in batches set by a 160 s budget (16-64 clips), the log-mel spectrogram (1024-point Hann STFT, hop 320, 64 mel bands) computed on the device; SpecAugment on the student's input only (two time masks of up to 64 frames and two frequency masks of up to 8 bands, positions drawn on the device and applied by arange comparisons) and mixup within the batch (a permutation and a drawn lambda, targets mixed the same way); both networks pool time by mean plus max over frequency-averaged features, 527 sigmoid outputs; the loss a 0.5/0.5 blend of BCE on the mixed labels and BCE against the teacher's temperature-2 sigmoid outputs; bf16 autocast, AdamW with a cosine schedule, 790 steps, the loss read back every 10 steps; every 260 steps an evaluation (no grad) of 3 batches of 10 s clips with the student, the teacher agreement read back")
def audio_kd_train(rng):
    nn, f = torch.nn, torch.nn.functional
    sr, nfft, hop, nmel, ncls = 32000, _smoke(1024, 256), _smoke(320, 160), _smoke(64, 32), 527
    tw = [_smoke(64, 4), _smoke(128, 8), _smoke(256, 8), _smoke(512, 16)]
    sw = [_smoke(32, 4), _smoke(48, 4), _smoke(64, 8), _smoke(128, 8), _smoke(192, 8), _smoke(256, 16)]
    teacher = nn.Sequential(_convnet(tw), nn.Identity()).cuda().eval()
    t_fc = nn.Linear(tw[-1], ncls).cuda().eval()
    for p in list(teacher.parameters()) + list(t_fc.parameters()):
        p.requires_grad_(False)
    student = _convnet(sw, dw=True)
    s_fc = nn.Linear(sw[-1], ncls)
    smodel = nn.ModuleList([student, s_fc]).cuda()
    window = torch.hann_window(nfft).cuda()
    melmat = torch.rand(nfft // 2 + 1, nmel, device="cuda") * 0.01
    bn0 = nn.BatchNorm2d(nmel).cuda()
    steps = _smoke(790, 3)
    opt = torch.optim.AdamW(list(smodel.parameters()) + list(bn0.parameters()), lr=1e-3, weight_decay=1e-2)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    budget = _smoke(160 * sr, 6 * sr)

    def logmel(audio):
        spec = torch.stft(audio, nfft, hop, nfft, window, center=True, return_complex=True)
        mel = (spec.real ** 2 + spec.imag ** 2).transpose(1, 2) @ melmat
        x = torch.log10(mel.clamp(min=1e-10))[:, None]  # (B, 1, T, F)
        return bn0(x.transpose(1, 3)).transpose(1, 3)

    def pool_head(net, fc, x):
        h = net(x).mean(3)  # (B, C, T')
        return fc(h.mean(2) + h.amax(2))

    def specaug(x):
        b, _, t, fq = x.shape
        ar_t = torch.arange(t, device="cuda")[None]
        ar_f = torch.arange(fq, device="cuda")[None]
        keep = torch.ones(b, t, fq, device="cuda")
        for _ in range(2):
            t0 = torch.randint(0, max(1, t - 64), (b, 1), device="cuda")
            tl = torch.randint(0, 65, (b, 1), device="cuda")
            keep = keep * (~((ar_t >= t0) & (ar_t < t0 + tl))).float()[:, :, None]
            f0 = torch.randint(0, fq - 8, (b, 1), device="cuda")
            fl = torch.randint(0, 9, (b, 1), device="cuda")
            keep = keep * (~((ar_f >= f0) & (ar_f < f0 + fl))).float()[:, None, :]
        return x * keep[:, None]

    for step in range(steps):
        secs = rng.uniform(1, 10) if _smoke(1, 0) else rng.uniform(1, 2)
        b = max(_smoke(16, 2), min(_smoke(64, 4), int(budget // (secs * sr))))
        audio = torch.randn(b, int(secs * sr), device="cuda") * 0.1
        labels = (torch.rand(b, ncls, device="cuda") < 0.01).float()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            x = logmel(audio)
            lam = rng.betavariate(0.4, 0.4) if _smoke(1, 0) else 0.5
            perm = torch.randperm(b, device="cuda")
            x = lam * x + (1 - lam) * x[perm]
            y = lam * labels + (1 - lam) * labels[perm]
            with torch.no_grad():
                soft = torch.sigmoid(pool_head(teacher, t_fc, x).float() / 2)
            logits = pool_head(student, s_fc, specaug(x)).float()
            loss = 0.5 * f.binary_cross_entropy_with_logits(logits, y) \
                + 0.5 * f.binary_cross_entropy_with_logits(logits / 2, soft)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        if step % 10 == 0:
            float(loss.detach())
        del audio, labels, x, perm, y, soft, logits, loss
        if (step + 1) % _smoke(260, 2) == 0:
            smodel.eval()
            bn0.eval()
            agree = torch.zeros((), device="cuda")
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for _ in range(_smoke(3, 1)):
                    x = logmel(torch.randn(_smoke(16, 2), _smoke(10, 1) * sr, device="cuda") * 0.1)
                    ps = torch.sigmoid(pool_head(student, s_fc, x).float())
                    pt = torch.sigmoid(pool_head(teacher, t_fc, x).float())
                    agree += ((ps > 0.5) == (pt > 0.5)).float().mean()
                    del x, ps, pt
            float(agree)
            smodel.train()
            bn0.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- prototypical networks, varying way and shot


@_workload("few-shot classification training with prototypical networks (Snell et al. 2017) on Omniglot-style 28x28 grayscale characters, fp32 and small as the reference code runs: episodes of 5-60 ways and 1-5 shots (drawn per episode, 5 queries a class, at most 600 images), characters rotated by multiples of 90 degrees as new classes (torch.rot90 per class group) and lightly shifted by affine_grid and grid_sample; a Conv-4 embedding (four blocks of 3x3 conv of 64, BatchNorm, ReLU, 2x2 max-pool) to 64-d; class prototypes as the mean of the support embeddings, squared Euclidean distances from every query to every prototype, cross-entropy on the negative distances; Adam at 1e-3 halved every 500 episodes, 2150 episodes, the loss and accuracy read back every 25; every 500 episodes a validation of 30 5-way 5-shot and 30 20-way 1-shot episodes (no grad), the mean accuracy read back")
def protonet_fewshot_train(rng):
    nn, f = torch.nn, torch.nn.functional
    c, res = _smoke(64, 8), _smoke(28, 12)
    layers, cin = [], 1
    for _ in range(4):
        layers += [nn.Conv2d(cin, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU(), nn.MaxPool2d(2, ceil_mode=True)]
        cin = c
    net = nn.Sequential(*layers, nn.Flatten()).cuda()
    episodes = _smoke(2150, 4)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, 500, 0.5)
    nq = 5

    def episode(way, shot):
        n = way * (shot + nq)
        x = torch.rand(way, shot + nq, 1, res, res, device="cuda")
        rots = [rng.randrange(4) for _ in range(way)]
        groups = []
        for r in range(4):
            idx = [i for i in range(way) if rots[i] == r]
            if idx:
                groups.append(torch.rot90(x[idx], r, (3, 4)) if r else x[idx])
        x = torch.cat(groups).flatten(0, 1)
        theta = torch.zeros(n, 2, 3, device="cuda")
        theta[:, 0, 0] = 1.0
        theta[:, 1, 1] = 1.0
        theta[:, :, 2] = (torch.rand(n, 2, device="cuda") - 0.5) * 0.2
        x = f.grid_sample(x, f.affine_grid(theta, x.shape, align_corners=False), align_corners=False)
        emb = net(x).view(way, shot + nq, -1)
        proto = emb[:, :shot].mean(1)  # (way, D)
        q = emb[:, shot:].flatten(0, 1)  # (way * nq, D)
        dist = (q[:, None] - proto[None]).pow(2).sum(-1)
        y = torch.arange(way, device="cuda").repeat_interleave(nq)
        loss = f.cross_entropy(-dist, y)
        acc = (dist.argmin(-1) == y).float().mean()
        return loss, acc

    for ep in range(episodes):
        way = rng.randint(5, _smoke(60, 8))
        shot = rng.randint(1, _smoke(5, 2))
        loss, acc = episode(way, shot)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        if ep % 25 == 0:
            torch.stack([loss.detach(), acc]).tolist()
        del loss, acc
        if (ep + 1) % _smoke(500, 2) == 0:
            net.eval()
            with torch.no_grad():
                accs = []
                for way, shot in [(5, 5), (20, 1)]:
                    for _ in range(_smoke(30, 2)):
                        _, acc = episode(way if _smoke(1, 0) else 5, shot)
                        accs.append(acc)
                torch.stack(accs).mean().tolist()
                del accs
            net.train()
    torch.cuda.synchronize()

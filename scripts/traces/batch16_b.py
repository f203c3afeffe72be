"""The sixteenth batch's second half (batch16.py holds the first): Gaussian splatting, mixture-of-depths
training, GradCache embeddings and an IVF index build (split only to keep files small, moved verbatim). Same conventions and plumbing as
batch16.py; record.py registers this module right after it, so that the batch's workloads keep their order.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


_SH = (0.28209479177387814, 0.4886025119029199,
       (1.0925484305920792, -1.0925484305920792, 0.31539156525252005, -1.0925484305920792, 0.5462742152960396),
       (-0.5900435899266435, 2.890611442640554, -0.4570457994644658, 0.3731763325901154, -0.4570457994644658,
        1.445305721320277, -0.5900435899266435))


def _sh_colors(sh, dirs):
    """Degree-3 spherical harmonics (N, 16, 3) evaluated at unit directions (N, 3), as 3DGS's eval_sh."""
    c0, c1, c2, c3 = _SH
    x, y, z = (t[:, None] for t in dirs.unbind(-1))
    xx, yy, zz, xy, yz, xz = x * x, y * y, z * z, x * y, y * z, x * z
    out = c0 * sh[:, 0] - c1 * y * sh[:, 1] + c1 * z * sh[:, 2] - c1 * x * sh[:, 3]
    out = (out + c2[0] * xy * sh[:, 4] + c2[1] * yz * sh[:, 5] + c2[2] * (2 * zz - xx - yy) * sh[:, 6]
           + c2[3] * xz * sh[:, 7] + c2[4] * (xx - yy) * sh[:, 8])
    return (out + c3[0] * y * (3 * xx - yy) * sh[:, 9] + c3[1] * xy * z * sh[:, 10] + c3[2] * y * (4 * zz - xx - yy) * sh[:, 11]
            + c3[3] * z * (2 * zz - 3 * xx - 3 * yy) * sh[:, 12] + c3[4] * x * (4 * zz - xx - yy) * sh[:, 13]
            + c3[5] * z * (xx - yy) * sh[:, 14] + c3[6] * x * (xx - 3 * yy) * sh[:, 15])


def _quat_rot(q):
    """Rotation matrices (N, 3, 3) of unit quaternions (N, 4), w first."""
    w, x, y, z = q.unbind(-1)
    return torch.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                        2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                        2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1).view(-1, 3, 3)


def _ssim(x, y, win):
    """SSIM of images (1, 3, H, W) with an 11x11 gaussian window (3, 1, 11, 11), as 3DGS's loss computes it."""
    f = torch.nn.functional
    conv = lambda t: f.conv2d(t, win, padding=5, groups=3)  # noqa: E731
    mx, my = conv(x), conv(y)
    sxx, syy, sxy = conv(x * x) - mx * mx, conv(y * y) - my * my, conv(x * y) - mx * my
    c1, c2 = 0.01 ** 2, 0.03 ** 2
    return ((2 * mx * my + c1) * (2 * sxy + c2) / ((mx * mx + my * my + c1) * (sxx + syy + c2))).mean()


@_workload("3D Gaussian splatting training with a pure-PyTorch tile rasterizer (as the torch-only reimplementations do it): 3DGS's parametrization (means, log-scales, quaternions, opacity logits, degree-3 SH colours) from 50k random points, a per-attribute Adam (3DGS learning rates, eps 1e-15); each step one of 64 training views (480x320 uint8 images kept on the device, cameras at 3-6 units around the scene, 60 degree field of view): projection to 2D covariances through the Jacobian, 3-sigma radii, binning into 32x32 tiles (a tile x Gaussian overlap mask, the front-most Gaussians by depth per tile by top-k, at most 1024), tiles rendered 25 at a time (K the group's fullest tile) (pixel x Gaussian alphas, exclusive cumprod transmittance, alpha blending on a black background), L1 x 0.8 + D-SSIM x 0.2 loss; 3DGS's adaptive density control every 50 steps from step 50 to 400 (the top 30% by accumulated screen-space gradient cloned when small or split in two when large, low-opacity Gaussians pruned, at most 600k), the parameters and Adam moments rebuilt by concatenation and masking each time, opacity reset at step 300; 450 steps, fp32")
def gsplat_train(rng):
    f = torch.nn.functional
    n0, cap, k_cap = _smoke(50_000, 600), _smoke(600_000, 3000), _smoke(1024, 64)
    height, width, tile, group = _smoke(320, 64), _smoke(480, 96), _smoke(32, 16), _smoke(25, 8)
    views = _smoke(64, 4)
    images = torch.randint(0, 256, (views, 3, height, width), dtype=torch.uint8).pin_memory().to("cuda")
    g = torch.Generator().manual_seed(rng.randrange(2**31))
    pts = torch.randn(n0, 3, generator=g)
    pts = pts / pts.norm(dim=-1, keepdim=True) * torch.rand(n0, 1, generator=g) ** (1 / 3) * 1.5
    init = {
        "means": pts, "scales": torch.full((n0, 3), math.log(0.03)) + 0.1 * torch.randn(n0, 3, generator=g),
        "quats": torch.cat([torch.ones(n0, 1), torch.zeros(n0, 3)], 1), "opac": torch.full((n0, 1), math.log(0.1 / 0.9)),
        "sh0": torch.randn(n0, 1, 3, generator=g) * 0.3, "shN": torch.zeros(n0, 15, 3),
    }
    lrs = {"means": 1.6e-4 * 3, "scales": 5e-3, "quats": 1e-3, "opac": 0.05, "sh0": 2.5e-3, "shN": 2.5e-3 / 20}
    params = {k: torch.nn.Parameter(v.cuda()) for k, v in init.items()}
    opt = torch.optim.Adam([{"params": [params[k]], "name": k, "lr": lrs[k]} for k in params], eps=1e-15)
    ty, tx = height // tile, width // tile
    yy, xx = torch.meshgrid(torch.arange(height, device="cuda"), torch.arange(width, device="cuda"), indexing="ij")
    pix = torch.stack([xx, yy], -1).float().add(0.5).view(ty, tile, tx, tile, 2).permute(0, 2, 1, 3, 4).reshape(ty * tx, tile * tile, 2)
    t0 = torch.stack(torch.meshgrid(torch.arange(ty, device="cuda"), torch.arange(tx, device="cuda"), indexing="ij"), -1).view(-1, 2) * tile
    gauss = torch.exp(-((torch.arange(11, device="cuda") - 5.0) ** 2) / (2 * 1.5 ** 2))
    win = (gauss[:, None] * gauss[None]).div(gauss.sum() ** 2).expand(3, 1, 11, 11).contiguous()
    focal = 0.5 * width / math.tan(math.radians(30))
    grad_acc = torch.zeros(n0, device="cuda")
    seen = torch.zeros(n0, device="cuda")

    def rebuild(fn):
        """Every parameter and its Adam moments replaced by fn(tensor, name, is_moment), as 3DGS's
        cat_tensors_to_optimizer and _prune_optimizer do."""
        for grp in opt.param_groups:
            old, name = grp["params"][0], grp["name"]
            state = opt.state.pop(old, None)
            new = torch.nn.Parameter(fn(old.detach(), name, False))
            if state:
                state["exp_avg"], state["exp_avg_sq"] = fn(state["exp_avg"], name, True), fn(state["exp_avg_sq"], name, True)
                opt.state[new] = state
            grp["params"][0] = params[name] = new

    # About 1.4k tensors a step (counted on CPU at the real sizes): 450 steps make about 1.3M events.
    steps = _smoke(450, 8)
    for step in range(1, steps + 1):
        # A camera on a sphere around the scene, looking at its centre.
        theta, phi, dist = rng.uniform(0, 2 * math.pi), rng.uniform(-1.2, 1.2), rng.uniform(3, 6)
        eye = torch.tensor([dist * math.cos(phi) * math.cos(theta), dist * math.sin(phi), dist * math.cos(phi) * math.sin(theta)])
        fwd = -eye / eye.norm()
        right = torch.linalg.cross(fwd, torch.tensor([0.0, 1.0, 0.0]))
        right = right / right.norm()
        rot = torch.stack([right, torch.linalg.cross(fwd, right), fwd]).cuda()  # world to camera
        trans, eye = (-rot.cpu() @ eye).cuda(), eye.cuda()
        target = images[rng.randrange(views)].float()[None] / 255
        means, n = params["means"], params["means"].shape[0]
        p = means @ rot.T + trans
        z = p[:, 2].clamp(min=0.2)
        scale = torch.exp(params["scales"])
        m = _quat_rot(f.normalize(params["quats"], dim=-1)) * scale[:, None, :]
        cov3 = m @ m.transpose(1, 2)
        lim = 1.3 * math.tan(math.radians(30))
        px, py = (p[:, 0] / z).clamp(-lim * width / height, lim * width / height) * z, (p[:, 1] / z).clamp(-lim, lim) * z
        zero = torch.zeros_like(z)
        jac = torch.stack([focal / z, zero, -focal * px / (z * z), zero, focal / z, -focal * py / (z * z)], -1).view(-1, 2, 3)
        w = jac @ rot
        cov2 = w @ cov3 @ w.transpose(1, 2) + 0.3 * torch.eye(2, device="cuda")
        a, b, c = cov2[:, 0, 0], cov2[:, 0, 1], cov2[:, 1, 1]
        det = a * c - b * b
        conic = torch.stack([c / det, -b / det, a / det], -1)
        mean2d = torch.stack([focal * p[:, 0] / z + width / 2, focal * p[:, 1] / z + height / 2], -1)
        mean2d.retain_grad()
        dirs = f.normalize(means - eye, dim=-1)
        color = (_sh_colors(torch.cat([params["sh0"], params["shN"]], 1), dirs) + 0.5).clamp(min=0)
        opacity = torch.sigmoid(params["opac"])[:, 0]
        with torch.no_grad():
            mid = 0.5 * (a + c)
            radius = torch.ceil(3 * torch.sqrt(mid + (mid * mid - det).clamp(min=0.1).sqrt())) * (p[:, 2] > 0.2)
            lo, hi = mean2d - radius[:, None], mean2d + radius[:, None]
            overlap = ((lo[None, :, 0] < t0[:, None, 1] + tile) & (hi[None, :, 0] > t0[:, None, 1])
                       & (lo[None, :, 1] < t0[:, None, 0] + tile) & (hi[None, :, 1] > t0[:, None, 0]) & (radius > 0))
            key = torch.where(overlap, p[None, :, 2], torch.inf)
            counts = overlap.sum(1).clamp(min=1, max=k_cap).tolist()
            depth, order = key.topk(max(counts), 1, largest=False)
            valid = depth < torch.inf
            del lo, hi, overlap, key, depth
        rgb = []
        for g0 in range(0, ty * tx, group):
            k = max(counts[g0: g0 + group])  # this group's K: its fullest tile's count
            ix, ok = order[g0: g0 + group, :k], valid[g0: g0 + group, :k]
            m2, cn, op, col = mean2d[ix], conic[ix], opacity[ix], color[ix]
            d = pix[g0: g0 + group, :, None] - m2[:, None]  # (G, pixels, K, 2)
            dx, dy = d[..., 0], d[..., 1]
            power = -0.5 * (cn[:, None, :, 0] * dx * dx + cn[:, None, :, 2] * dy * dy) - cn[:, None, :, 1] * dx * dy
            alpha = (op[:, None] * torch.exp(power)).clamp(max=0.99)
            alpha = alpha * ((power <= 0) & (alpha >= 1 / 255) & ok[:, None])
            t = torch.cumprod(1 - alpha, -1)
            t = torch.cat([torch.ones_like(t[..., :1]), t[..., :-1]], -1)
            rgb.append((alpha * t) @ col)
            del ix, ok, m2, cn, op, col, d, dx, dy, power, alpha, t
        img = torch.cat(rgb).view(ty, tx, tile, tile, 3).permute(4, 0, 2, 1, 3).reshape(1, 3, height, width)
        loss = 0.8 * (img - target).abs().mean() + 0.2 * (1 - _ssim(img, target, win))
        loss.backward()
        with torch.no_grad():
            seen_now = radius > 0
            grad_acc += mean2d.grad.norm(dim=-1) * seen_now
            seen += seen_now
        opt.step()
        opt.zero_grad(set_to_none=True)
        del p, z, scale, m, cov3, px, py, zero, jac, w, cov2, a, b, c, det, conic, mean2d, dirs, color, opacity
        del radius, order, valid, rgb, img, loss, target, rot, trans, eye
        if step % _smoke(50, 2) == 0 and step <= _smoke(400, 6):
            with torch.no_grad():
                avg = grad_acc / seen.clamp(min=1)
                thr = avg.kthvalue(max(1, int(0.7 * n))).values
                high = (avg >= thr) & (seen > 0)
                room = max(0, cap - n)
                if int(high.sum()) > room // 2:  # at most `cap` Gaussians: the largest gradients first
                    high = avg >= avg.topk(max(1, room // 2)).values[-1]
                big = torch.exp(params["scales"]).max(-1).values > 0.02
                clone, split = (high & ~big).nonzero()[:, 0], (high & big).nonzero()[:, 0]
                s_split = torch.exp(params["scales"][split]).repeat(2, 1)
                offset = (_quat_rot(f.normalize(params["quats"][split], dim=-1)).repeat(2, 1, 1) @ (torch.randn_like(s_split) * s_split)[..., None])[..., 0]
                extra = {}
                for name, prm in params.items():
                    extra[name] = torch.cat([prm[clone], prm[split].repeat(2, *([1] * (prm.dim() - 1)))])
                extra["means"][clone.shape[0]:] += offset
                extra["scales"][clone.shape[0]:] = torch.log(s_split / 1.6)
                keep = torch.ones(n, dtype=torch.bool, device="cuda")
                keep[split] = False  # the split originals go
                keep &= torch.sigmoid(params["opac"][:, 0]) >= 0.005
                rebuild(lambda t, name, moment: torch.cat([t[keep], torch.zeros_like(extra[name]) if moment else extra[name]]))
                n = params["means"].shape[0]
                grad_acc, seen = torch.zeros(n, device="cuda"), torch.zeros(n, device="cuda")
                del avg, thr, high, big, clone, split, s_split, offset, extra, keep
        if step == _smoke(300, 4):
            with torch.no_grad():
                reset = torch.minimum(params["opac"], torch.full_like(params["opac"], math.log(0.01 / 0.99)))
                rebuild(lambda t, name, moment: (torch.zeros_like(t) if moment else reset) if name == "opac" else t)
                del reset
    torch.cuda.synchronize()


# ---------------------------------------------------------------- mixture-of-depths training


class _ModBlock(torch.nn.Module):
    """A pre-norm GPT block (causal SDPA attention, GELU MLP of 4x); delta() is its residual branch."""

    def __init__(self, d, heads):
        super().__init__()
        nn = torch.nn
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.heads = heads

    def delta(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        h = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return h - x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(h))))


@_workload("mixture-of-depths LM training (Raposo et al. 2024): a 12-layer GPT-style decoder (width 1024, 16 heads, MLP 4096, learned positions, vocab 32000, untied head, random init) whose every other block is routed: a linear router scores each token, the top 12.5% of each sequence (capacity C = T/8) are gathered in order, run through the block (causal attention among them) and scattered back added to the residual stream weighted by their router scores, the others skip it; a small MLP predictor (on the detached stream) learns the top-k membership with BCE for causal sampling; batches of 2-32 sequences of 256-4096 tokens (multiple of 256) capped at 16k tokens, 250 steps, gradient clipping, AdamW with cosine decay, bf16 autocast")
def mod_train(rng):
    f = torch.nn.functional
    nn = torch.nn
    d, layers, heads, vocab = _smoke(1024, 64), _smoke(12, 4), _smoke(16, 4), 32000
    model = nn.Module()
    model.emb, model.pos = nn.Embedding(vocab, d), nn.Embedding(4096, d)
    model.blocks = nn.ModuleList(_ModBlock(d, heads) for _ in range(layers))
    model.routers = nn.ModuleList(nn.Linear(d, 1) for _ in range(layers // 2))
    model.predictors = nn.ModuleList(nn.Sequential(nn.Linear(d, d // 8), nn.SiLU(), nn.Linear(d // 8, 1)) for _ in range(layers // 2))
    model.ln, model.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)
    model = model.cuda().train()
    steps = _smoke(250, 4)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, betas=(0.9, 0.95))
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    max_tokens, longest = _smoke(16384, 512), _smoke(4096, 256)

    # About 1.8k tensors a step (counted on CPU at 12 layers, the optimizer's and clipping's included): 250
    # steps make about 0.9M events.
    for _ in range(steps):
        t = rng.randrange(256, longest + 1, 256)
        b = max(1, min(rng.randint(2, 32), max_tokens // t))
        ids = torch.randint(0, vocab, (b, t + 1), dtype=torch.int32).pin_memory().to("cuda", non_blocking=True).long()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            x = model.emb(ids[:, :-1]) + model.pos.weight[:t]
            aux = 0.0
            for i, blk in enumerate(model.blocks):
                if i % 2 == 0:
                    x = x + blk.delta(x)
                    continue
                cap = t // 8
                score = model.routers[i // 2](x).squeeze(-1).float()  # (b, t)
                top = score.topk(cap, -1).indices.sort(-1).values  # kept in causal order
                gather = top[..., None].expand(-1, -1, d)
                sel = x.gather(1, gather)
                upd = blk.delta(sel) * torch.sigmoid(score.gather(1, top))[..., None].to(sel.dtype)
                x = x.scatter_add(1, gather, upd.to(x.dtype))
                member = torch.zeros_like(score).scatter_(1, top, 1.0)
                aux = aux + f.binary_cross_entropy_with_logits(model.predictors[i // 2](x.detach()).squeeze(-1).float(), member)
                del score, top, gather, sel, upd, member
            logits = model.head(model.ln(x))
        loss = f.cross_entropy(logits.float().flatten(0, 1), ids[:, 1:].flatten()) + 0.01 * aux
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        del ids, x, aux, logits, loss
    torch.cuda.synchronize()


# ---------------------------------------------------------------- GradCache contrastive embedding training


@_workload("sentence-embedding training with GradCache, as sentence-transformers' CachedMultipleNegativesRankingLoss does it: an HF BertModel (BERT-base: 12 layers, width 768, random init, no pooler) with mean pooling; a round-robin of four datasets in proportion to their sizes (query-passage pairs of 4-32 and 32-256 tokens, NLI triplets of 6-48 tokens each, title-abstract pairs of 8-32 and 96-256, question-answer pairs of 8-64 and 16-192; log-uniform), batches of 512 rows, each column padded to its longest over the batch (the collator tokenizes whole columns) and cut into mini-batches of 128; per step: every mini-batch embedded under no_grad with its RNG state saved, the in-batch-negatives loss (cosine similarity x 20 against every candidate of the batch, cross-entropy) computed on the cached embeddings mini-batch by mini-batch to get their gradients, then every mini-batch embedded again with grad under its restored RNG state and backpropagated with its cached gradient (a dot-product surrogate); gradient clipping, 25 steps, linear warmup, AdamW, bf16 autocast")
def gradcache_embed(rng):
    from torch.utils.checkpoint import get_device_states, set_device_states
    from transformers import BertConfig, BertModel

    f = torch.nn.functional
    cfg = BertConfig(hidden_size=_smoke(768, 64), num_hidden_layers=_smoke(12, 2), num_attention_heads=_smoke(12, 4),
                     intermediate_size=_smoke(3072, 128), max_position_embeddings=512)
    model = BertModel(cfg, add_pooling_layer=False).cuda().train()
    steps, batch, mini = _smoke(25, 3), _smoke(512, 16), _smoke(128, 4)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-5, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 10))
    top = _smoke(256, 32)
    datasets = [  # (weight, token ranges of its columns)
        (5, ((4, 32), (32, top))), (3, ((6, 48), (6, 48), (6, 48))), (1, ((8, 32), (96, top))), (2, ((8, 64), (16, 192 if top > 192 else top))),
    ]

    def column(lo, hi):
        lens = [_loguniform(rng, lo, hi) for _ in range(batch)]
        ids = torch.randint(1000, cfg.vocab_size, (batch, max(lens)), dtype=torch.int32)
        mask = (torch.arange(max(lens))[None] < torch.tensor(lens)[:, None]).to(torch.int32)
        ids = ids * mask
        return ids.pin_memory().to("cuda", non_blocking=True), mask.pin_memory().to("cuda", non_blocking=True)

    def embed(ids, mask):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = model(input_ids=ids, attention_mask=mask).last_hidden_state
        m = mask[..., None].float()
        return (h.float() * m).sum(1) / m.sum(1).clamp(min=1)

    # About 2.6k tensors a mini-batch, embedded twice, forward and backward (counted on CPU at 12 layers), and
    # 2.3 columns of 4 mini-batches a step on average: 25 steps make about 1.2M events.
    weights = [w for w, _ in datasets]
    for _ in range(steps):
        _, ranges = rng.choices(datasets, weights)[0]
        cols = [column(lo, hi) for lo, hi in ranges]
        # 1. embed every mini-batch without grad, keeping its RNG state (sentence-transformers' RandContext)
        reps, states = [], []
        for ids, mask in cols:
            r, s = [], []
            for lo in range(0, batch, mini):
                s.append((torch.get_rng_state(), get_device_states(ids)))
                with torch.no_grad():
                    r.append(embed(ids[lo: lo + mini], mask[lo: lo + mini]).detach().requires_grad_())
            reps.append(r)
            states.append(s)
        # 2. the loss on the cached embeddings, mini-batch by mini-batch, for their gradients
        anchors = torch.cat(reps[0])
        cands = torch.cat([torch.cat(r) for r in reps[1:]])
        labels = torch.arange(batch, device="cuda")
        total = 0.0
        for lo in range(0, batch, mini):
            scores = f.normalize(anchors[lo: lo + mini], dim=-1) @ f.normalize(cands, dim=-1).T * 20.0
            part = f.cross_entropy(scores, labels[lo: lo + mini]) * scores.shape[0] / batch
            part.backward()
            total += part.detach()
            del scores, part
        grads = [[r.grad for r in rs] for rs in reps]
        del anchors, cands, labels, reps
        # 3. embed again with grad under the saved RNG states; backpropagate the cached gradients
        for (ids, mask), s, g in zip(cols, states, grads):
            for j, lo in enumerate(range(0, batch, mini)):
                cpu_state, (devices, dev_states) = s[j]
                with torch.random.fork_rng(devices=devices):
                    torch.set_rng_state(cpu_state)
                    set_device_states(devices, dev_states)
                    rep = embed(ids[lo: lo + mini], mask[lo: lo + mini])
                    torch.dot(rep.flatten(), g[j].flatten()).backward()
                del rep
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        float(total)
        del cols, states, grads, total
    torch.cuda.synchronize()


# ---------------------------------------------------------------- image-text retrieval index build


@_workload("image-text retrieval index build and search, faiss-IVF-style in pure PyTorch (two CUDA streams): CLIP ViT-B/32 towers (HF CLIPVisionModelWithProjection at 224 px and CLIPTextModelWithProjection, 12 layers each, 512-wide embeddings; random weights) in fp16 under inference_mode; a corpus of about 300k images in shards of 2k-20k (log-uniform), batches of 512 (each shard's last one partial), uint8 HWC images of the next batch copied from pinned memory, converted and normalized on a side stream while the current batch is encoded; the first 64k unit-norm embeddings staged in a device buffer grown by doubling, then spherical k-means (1024 lists, 20 Lloyd iterations in chunks of 16k points, empty lists reseeded) and every embedding, staged or new, added to its nearest list: one vector and one id buffer per list, each grown by doubling from 32 rows as vectors arrive (faiss-GPU's per-list device vectors); the lists then compacted into one CSR array; 500 query batches of 1-256 texts (log-uniform) of 5-77 tokens encoded, the nearest 8-64 lists probed per query, their members gathered (padded to the longest candidate list, chunked at 512k candidates), scored, top 10-100 ids and scores copied back")
def ivf_index_build(rng):
    from transformers import CLIPTextConfig, CLIPTextModelWithProjection, CLIPVisionConfig, CLIPVisionModelWithProjection

    f = torch.nn.functional
    vcfg = CLIPVisionConfig(hidden_size=_smoke(768, 64), intermediate_size=_smoke(3072, 128), num_hidden_layers=_smoke(12, 2),
                            num_attention_heads=_smoke(12, 4), image_size=_smoke(224, 64), patch_size=32, projection_dim=_smoke(512, 32))
    tcfg = CLIPTextConfig(hidden_size=_smoke(512, 64), intermediate_size=_smoke(2048, 128), num_hidden_layers=_smoke(12, 2),
                          num_attention_heads=_smoke(8, 4), projection_dim=_smoke(512, 32), max_position_embeddings=77)
    vis = CLIPVisionModelWithProjection(vcfg).to("cuda", torch.float16).eval()
    txt = CLIPTextModelWithProjection(tcfg).to("cuda", torch.float16).eval()
    dim, res, batch = vcfg.projection_dim, vcfg.image_size, _smoke(512, 16)
    nlist, n_train, corpus = _smoke(1024, 16), _smoke(65536, 128), _smoke(300_000, 400)
    side, main = torch.cuda.Stream(), torch.cuda.current_stream()
    mean = torch.tensor([0.48145466, 0.4578275, 0.40821073], device="cuda")[None, :, None, None]
    std = torch.tensor([0.26862954, 0.26130258, 0.27577711], device="cuda")[None, :, None, None]
    # Decoded images land in a pinned host buffer (random bytes drawn once: drawing them per batch is slow).
    pool = torch.randint(0, 256, (2 * batch, res, res, 3), dtype=torch.uint8).pin_memory()
    sizes = []
    while sum(sizes) < corpus:
        shard = _loguniform(rng, _smoke(2000, 20), _smoke(20000, 60))
        sizes += [batch] * (shard // batch) + ([shard % batch] if shard % batch else [])

    def upload(n):
        host = pool[rng.randrange(pool.shape[0] - n + 1):][:n]
        with torch.cuda.stream(side):
            side.wait_stream(main)
            x = host.to("cuda", non_blocking=True).permute(0, 3, 1, 2).float().div_(255)
            x = ((x - mean) / std).half()
            ready = side.record_event()
        return x, ready

    store, count = torch.empty(_smoke(8192, 32), dim, device="cuda", dtype=torch.float16), 0
    centroids, lists = None, []  # lists: [vectors (capacity, dim), ids (capacity,), size]

    def add(x, ids):
        assign = (x @ centroids.T.half()).argmax(1)
        order = assign.argsort()
        xs, ids = x[order], ids[order]
        o = 0
        for l, c in enumerate(torch.bincount(assign, minlength=nlist).tolist()):
            if c == 0:
                continue
            vecs, idv, size = lists[l]
            if size + c > vecs.shape[0]:
                capacity = max(32, vecs.shape[0])
                while capacity < size + c:
                    capacity *= 2
                grown, grown_ids = x.new_empty(capacity, dim), ids.new_empty(capacity)
                grown[:size], grown_ids[:size] = vecs[:size], idv[:size]
                vecs, idv = lists[l][0], lists[l][1] = grown, grown_ids
            vecs[size: size + c], idv[size: size + c] = xs[o: o + c], ids[o: o + c]
            lists[l][2] = size + c
            o += c
        del assign, order, xs, ids

    def kmeans(data):
        c = data[torch.randperm(data.shape[0], device="cuda")[:nlist]].clone()
        for _ in range(20):
            sums, counts = torch.zeros_like(c), torch.zeros(nlist, device="cuda")
            for lo in range(0, data.shape[0], 16384):
                chunk = data[lo: lo + 16384]
                a = (chunk @ c.T).argmax(1)
                sums.index_add_(0, a, chunk)
                counts += torch.bincount(a, minlength=nlist)
                del chunk, a
            reseed = data[torch.randint(0, data.shape[0], (nlist,), device="cuda")]
            c = f.normalize(torch.where(counts[:, None] > 0, sums / counts.clamp(min=1)[:, None], reseed), dim=-1)
            del sums, counts, reseed
        return c

    # About 230 tensors an image batch, 250 a query batch and a few thousand list growths (counted on CPU at
    # 12 layers): about 0.6M events.
    with torch.inference_mode():
        nxt, seen = upload(sizes[0]), 0
        for i, n in enumerate(sizes):
            x, ready = nxt
            main.wait_event(ready)
            x.record_stream(main)
            if i + 1 < len(sizes):
                nxt = upload(sizes[i + 1])
            emb = f.normalize(vis(pixel_values=x).image_embeds.float(), dim=-1).half()
            ids = torch.arange(seen, seen + n, device="cuda")
            seen += n
            if centroids is None:
                if count + n > store.shape[0]:
                    grown = store.new_empty(2 * store.shape[0], dim)
                    grown[:count] = store[:count]
                    store = grown
                    del grown
                store[count: count + n] = emb
                count += n
                if count >= n_train:  # train the coarse quantizer, then add what was staged
                    centroids = kmeans(store[:count].float())
                    lists = [[store.new_empty(0, dim), ids.new_empty(0), 0] for _ in range(nlist)]
                    add(store[:count], torch.arange(count, device="cuda"))
                    store = None
            else:
                add(emb, ids)
            del x, emb, ids
        # The index compacted into one CSR array, the per-list buffers freed.
        flat = torch.cat([v[:s] for v, _, s in lists])
        flat_ids = torch.cat([d[:s] for _, d, s in lists])
        list_sizes = torch.tensor([s for _, _, s in lists], device="cuda")
        offsets = list_sizes.cumsum(0) - list_sizes
        lists = None
        for _ in range(_smoke(500, 4)):
            q = _loguniform(rng, 1, 256)
            lens = [rng.randint(5, 77) for _ in range(q)]
            tokens = torch.randint(1, tcfg.vocab_size - 1, (q, max(lens)))
            mask = (torch.arange(max(lens))[None] < torch.tensor(lens)[:, None]).long()
            tokens, mask = tokens.pin_memory().to("cuda", non_blocking=True), mask.pin_memory().to("cuda", non_blocking=True)
            qe = f.normalize(txt(input_ids=tokens, attention_mask=mask).text_embeds.float(), dim=-1)
            nprobe, k = rng.choice((8, 16, 32, 64)), rng.choice((10, 50, 100))
            probe = (qe @ centroids.T).topk(min(nprobe, nlist), -1).indices
            plen, pstart = list_sizes[probe], offsets[probe]
            ends = plen.cumsum(1)
            cmax = max(1, int(ends[:, -1].max()))
            step = max(1, _smoke(512 * 1024, 256) // cmax)
            found = []
            for q0 in range(0, q, step):
                e, ln, st = ends[q0: q0 + step], plen[q0: q0 + step], pstart[q0: q0 + step]
                j = torch.arange(cmax, device="cuda").expand(e.shape[0], -1).contiguous()
                slot = torch.searchsorted(e, j, right=True).clamp(max=e.shape[1] - 1)
                valid = j < e[:, -1:]
                pos = torch.where(valid, st.gather(1, slot) + j - (e - ln).gather(1, slot), 0)
                scores = (flat[pos] @ qe[q0: q0 + step, :, None].half()).squeeze(-1).float().masked_fill(~valid, -torch.inf)
                top = scores.topk(min(k, cmax), -1)
                found.append((flat_ids[pos.gather(1, top.indices)], top.values))
                del e, ln, st, j, slot, valid, pos, scores, top
            out_ids, out_scores = torch.cat([a for a, _ in found]), torch.cat([b for _, b in found])
            host = (torch.empty(out_ids.shape, dtype=torch.int64).pin_memory(), torch.empty(out_scores.shape).pin_memory())
            host[0].copy_(out_ids, non_blocking=True)
            host[1].copy_(out_scores, non_blocking=True)
            del tokens, mask, qe, probe, plen, pstart, ends, found, out_ids, out_scores
    torch.cuda.synchronize()

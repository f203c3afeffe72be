"""The hundred-and-twenty-seventh batch of held-out workloads for record.py, second half (see batch127.py): ceramics,
pottery and glassmaking, written in torch alone. Fired-ware crack inspection fine-tuning (a vision transformer whose
weights are frozen, low-rank adapters on its attention and its MLP's first layer, over photographs of fired ware of
drawn resolutions, the defect class and per-patch crack masks), glassblowing process monitoring training (a
convolutional LSTM cell written out frame by frame over thermal video clips of drawn lengths and resolutions, the next
thermal frame, a wall-thickness map, the working stage and the gather temperature), kiln load training (a graph
attention network written by hand over the ware on a kiln's shelves, k-nearest-neighbour edges by topk over each
kiln's distances, attention softmax over each piece's neighbours and messages summed by index_add; each piece's
temperature deviation, warping risk and glaze defect, each kiln's uniformity) and a thrown-pot scan service (a
PointNet over 3-d scans of drawn point counts, the form, the defect flags and the symmetry, with the radial profile
and the ovality by height measured on the device).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the scan service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or masked_fill; no
boolean-mask indexing; results read back only at logging points or once per request.
thrown_pot_scan_serve uploads its scans on a side stream (two reused pinned host buffers, one request ahead, through
workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every embedding and position table is sized for the longest padded length that can be drawn.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import SideUploads, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- fired-ware crack inspection (ViT with LoRA)


class _Lora(_nn.Module):
    """A frozen linear layer plus a trained low-rank update (B A x, B zero at the start, scaled by alpha / r)."""

    def __init__(self, din, dout, r, alpha):
        super().__init__()
        self.base = _nn.Linear(din, dout)
        self.base.requires_grad_(False)
        self.a, self.b = _nn.Linear(din, r, bias=False), _nn.Linear(r, dout, bias=False)
        _nn.init.zeros_(self.b.weight)
        self.scale = alpha / r

    def forward(self, x):
        return self.base(x) + self.b(self.a(x)) * self.scale


class _LoraBlock(_nn.Module):
    """A pre-norm ViT block, frozen, with low-rank adapters on qkv, the output projection and the MLP's first layer."""

    def __init__(self, d, heads, r, alpha):
        super().__init__()
        self.h = heads
        self.n1, self.n2 = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.proj = _Lora(d, 3 * d, r, alpha), _Lora(d, d, r, alpha)
        self.fc1, self.fc2 = _Lora(d, 4 * d, r, alpha), _nn.Linear(4 * d, d)
        self.n1.requires_grad_(False)
        self.n2.requires_grad_(False)
        self.fc2.requires_grad_(False)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        a = _F.scaled_dot_product_attention(q, k, v)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(_F.gelu(self.fc1(self.n2(x))))


class _CrackVit(_nn.Module):
    """16-pixel patches, row and column position tables (sized for the largest image's side), a class token, the
    blocks, a final norm; the defect class from the class token, a crack logit per patch."""

    def __init__(self, d, heads, layers, max_side, r, alpha, n_cls):
        super().__init__()
        self.patch = _nn.Conv2d(3, d, 16, 16)
        self.row, self.col = _nn.Embedding(max_side, d), _nn.Embedding(max_side, d)
        self.cls = _nn.Parameter(torch.zeros(1, 1, d))
        for m in (self.patch, self.row, self.col):
            m.requires_grad_(False)
        self.cls.requires_grad_(False)
        self.blocks = _nn.ModuleList(_LoraBlock(d, heads, r, alpha) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.head, self.seg = _nn.Linear(d, n_cls), _nn.Linear(d, 1)

    def forward(self, x):
        p = self.patch(x)
        gh, gw = p.shape[-2:]
        pos = self.row(torch.arange(gh, device=x.device))[:, None] + self.col(torch.arange(gw, device=x.device))[None]
        z = p.flatten(2).transpose(1, 2) + pos.flatten(0, 1)[None]
        z = torch.cat([self.cls.expand(x.shape[0], -1, -1).to(z.dtype), z], 1)
        for blk in self.blocks:
            z = blk(z)
        z = self.norm(z)
        return self.head(z[:, 0]).float(), self.seg(z[:, 1:]).float()[..., 0]


@_workload("fired-ware crack inspection fine-tuning (random init standing in for a pretrained ViT, low-rank adapters): 8-48 photographs of fired ware a step (drawn, at most 24 x 320 x 320 pixels a step) of 224, 256, 320 or 384 px square (drawn per step) drawn on the device, flipped horizontally on half the steps (drawn) and brightness-jittered; a ViT of 16-pixel patches, width 384, 8 blocks, 6 heads, row and column position tables of 24 rows and a class token, all frozen, with rank-8 adapters (alpha 16) on qkv, the output projection and the MLP's first layer of every block, the final norm and two heads trained; the defect class (of 6: sound, hairline crack, dunting crack, crazing, chip, glaze crawl) by cross-entropy with label smoothing and per-patch crack masks (drawn at a 2-10 % rate per step) by BCE with a positive weight of 5; AdamW on the trained parameters with a warm-up, clipping, bf16 autocast, 330 steps; the losses read back every 20 steps and every 66 steps a no-grad pass over 16 photographs of 320 px with the class accuracy and the patch precision and recall read back")
def fired_ware_crack_vit_lora_finetune(rng):
    d, heads, layers, n_cls = _smoke(384, 32), _smoke(6, 2), _smoke(8, 2), 6
    r, alpha = _smoke(8, 2), 16.0
    res_opts = _smoke([224, 256, 320, 384], [32, 48])
    max_side = max(res_opts) // 16
    budget = _smoke(24 * 320 * 320, 3 * 48 * 48)
    model = _CrackVit(d, heads, layers, max_side, r, alpha, n_cls).cuda()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=5e-4, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 25))
    mean = torch.tensor([0.5, 0.45, 0.4], device="cuda").view(1, 3, 1, 1)
    pw = torch.tensor(5.0, device="cuda")

    def photos(b, res, rate, flip):
        x = (torch.rand(b, 3, res, res, device="cuda") - mean) / 0.25
        x = x * (1.0 + 0.2 * (torch.rand(b, 1, 1, 1, device="cuda") - 0.5))
        if flip:
            x = torch.flip(x, [3])
        g = res // 16
        y = torch.randint(0, n_cls, (b,), device="cuda")
        mask = (torch.rand(b, g * g, device="cuda") < rate).float()
        return x, y, mask

    steps = _smoke(330, 3)
    for step in range(steps):
        model.train()
        res = rng.choice(res_opts)
        b = min(rng.randint(_smoke(8, 2), _smoke(48, 4)), budget // (res * res))
        x, y, mask = photos(b, res, rng.uniform(0.02, 0.1), rng.random() < 0.5)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits, seg = model(x)
        l_cls = _F.cross_entropy(logits, y, label_smoothing=0.1)
        l_seg = _F.binary_cross_entropy_with_logits(seg, mask, pos_weight=pw)
        loss = l_cls + l_seg
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            torch.stack([l_cls.detach(), l_seg.detach()]).tolist()
        del x, y, mask, logits, seg, l_cls, l_seg, loss
        if (step + 1) % _smoke(66, 2) == 0:
            model.eval()
            with torch.no_grad():
                x, y, mask = photos(_smoke(16, 2), _smoke(320, 32), 0.05, False)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits, seg = model(x)
                acc = (logits.argmax(-1) == y).float().mean()
                hit = (seg > 0).float()
                tp = (hit * mask).sum()
                prec, rec = tp / hit.sum().clamp_min(1.0), tp / mask.sum().clamp_min(1.0)
            torch.stack([acc, prec, rec]).tolist()
            del x, y, mask, logits, seg, acc, hit, tp, prec, rec


# ---------------------------------------------------------------- glassblowing thermal video (ConvLSTM written out)


class _ThermalConvLstm(_nn.Module):
    """A strided convolutional encoder to 1/4, a ConvLSTM cell (one 3x3 convolution to the four gates) written out
    frame by frame with its cell state in fp32, padded frames keeping the state by torch.where; a transposed
    convolution decoder of the next frame, a wall-thickness map at 1/4, the working stage and the gather temperature
    from the hidden state's spatial mean."""

    def __init__(self, c_enc, hid, n_stage):
        super().__init__()
        c1, c2 = c_enc
        self.enc = _nn.Sequential(_nn.Conv2d(1, c1, 3, 2, 1), _nn.GELU(), _nn.Conv2d(c1, c2, 3, 2, 1), _nn.GELU())
        self.gates = _nn.Conv2d(c2 + hid, 4 * hid, 3, 1, 1)
        self.dec = _nn.Sequential(_nn.ConvTranspose2d(hid, c1, 4, 2, 1), _nn.GELU(),
                                  _nn.ConvTranspose2d(c1, 1, 4, 2, 1))
        self.thick = _nn.Conv2d(hid, 1, 1)
        self.head = mlp(hid, hid, n_stage + 1, act=_nn.GELU)
        self.hid = hid

    def forward(self, clip, keep):
        b, t, hh, ww = clip.shape
        feats = self.enc(clip.reshape(b * t, 1, hh, ww)).unflatten(0, (b, t))
        h = feats.new_zeros(b, self.hid, hh // 4, ww // 4).float()
        c = torch.zeros_like(h)
        nxt, thick, heads = [], [], []
        for i in range(t):
            g = self.gates(torch.cat([feats[:, i], h.to(feats.dtype)], 1)).float()
            gi, gf, go, gg = g.chunk(4, 1)
            c_new = torch.sigmoid(gf) * c + torch.sigmoid(gi) * torch.tanh(gg)
            h_new = torch.sigmoid(go) * torch.tanh(c_new)
            k = keep[:, i, None, None, None]
            c, h = torch.where(k, c_new, c), torch.where(k, h_new, h)
            nxt.append(self.dec(h))
            thick.append(self.thick(h))
            heads.append(self.head(h.mean((2, 3))))
        return (torch.stack(nxt, 1)[:, :, 0].float(), torch.stack(thick, 1)[:, :, 0].float(),
                torch.stack(heads, 1).float())


@_workload("glassblowing process monitoring training (random init, a convolutional LSTM cell written out frame by frame): 4-16 thermal video clips a step (drawn) of 6-14 frames each (drawn per clip, padded to the step's longest) at 64 x 80, 96 x 128 or 128 x 160 px (drawn per step), frames drawn on the device as smooth temperature fields (low-resolution noise upsampled bilinearly with a hot gather drawn at a random place); a strided convolutional encoder (32, 48 channels) to 1/4, a ConvLSTM cell of 64 channels (one 3x3 convolution to the four gates, the cell state in fp32, padded frames keeping the state by torch.where), a transposed-convolution decoder; the next thermal frame by masked MSE, a wall-thickness map at 1/4 by masked L1, the working stage (of 5: gathering, marvering, blowing, shaping, transfer to the annealer) by masked cross-entropy and the gather temperature by masked MSE from the hidden state's spatial mean; AdamW on a cosine schedule, clipping, bf16 autocast, 250 steps; the losses read back every 15 steps and every 50 steps a no-grad pass over 8 clips of 14 frames at 96 x 128 with the stage accuracy read back")
def glassblowing_thermal_convlstm_train(rng):
    c_enc, hid, n_stage = _smoke([32, 48], [4, 8]), _smoke(64, 8), 5
    model = _ThermalConvLstm(c_enc, hid, n_stage).cuda()
    steps = _smoke(250, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    res_opts = _smoke([(64, 80), (96, 128), (128, 160)], [(16, 16), (16, 24)])
    lo_t, hi_t = _smoke(6, 2), _smoke(14, 3)

    def clips(lens, hh, ww):
        b, t = len(lens), max(lens) + 1
        keep = torch.arange(t - 1, device="cuda")[None] < torch.tensor(lens, device="cuda")[:, None]
        low = torch.randn(b * t, 1, hh // 8, ww // 8, device="cuda")
        field = _F.interpolate(low, size=(hh, ww), mode="bilinear", align_corners=False).view(b, t, hh, ww)
        yy = torch.linspace(-1.0, 1.0, hh, device="cuda")[:, None]
        xx = torch.linspace(-1.0, 1.0, ww, device="cuda")[None]
        cy, cx = torch.rand(b, 1, 1, 1, device="cuda") * 2 - 1, torch.rand(b, 1, 1, 1, device="cuda") * 2 - 1
        hot = torch.exp(-((yy - cy).pow(2) + (xx - cx).pow(2)) / 0.1)
        frames = 0.3 * field + 2.0 * hot
        thick = torch.rand(b, t - 1, hh // 4, ww // 4, device="cuda")
        stage = torch.randint(0, n_stage, (b, t - 1), device="cuda")
        temp = torch.randn(b, t - 1, device="cuda")
        return frames[:, :-1], frames[:, 1:], keep, thick, stage, temp

    def losses(out, tgt, keep):
        nxt, thick, heads = out
        y, th, stage, temp = tgt
        kf = keep.float()
        n = kf.sum()
        l_next = ((nxt - y).pow(2).mean((2, 3)) * kf).sum() / n
        l_thick = ((thick - th).abs().mean((2, 3)) * kf).sum() / n
        ce = _F.cross_entropy(heads[..., :n_stage].flatten(0, 1), stage.flatten(), reduction="none")
        l_stage = (ce * kf.flatten()).sum() / n
        l_temp = ((heads[..., n_stage] - temp).pow(2) * kf).sum() / n
        return l_next, l_thick, l_stage, l_temp

    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(4, 2), _smoke(16, 3))
        hh, ww = rng.choice(res_opts)
        lens = [rng.randint(lo_t, hi_t) for _ in range(b)]
        x, y, keep, th, stage, temp = clips(lens, hh, ww)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(x, keep)
        l_next, l_thick, l_stage, l_temp = losses(out, (y, th, stage, temp), keep)
        loss = l_next + l_thick + l_stage + 0.5 * l_temp
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 15 == 0:
            torch.stack([l_next.detach(), l_thick.detach(), l_stage.detach(), l_temp.detach()]).tolist()
        del x, y, keep, th, stage, temp, out, l_next, l_thick, l_stage, l_temp, loss
        if (step + 1) % _smoke(50, 2) == 0:
            model.eval()
            with torch.no_grad():
                hh, ww = res_opts[1]
                x, y, keep, th, stage, temp = clips([hi_t] * _smoke(8, 2), hh, ww)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    out = model(x, keep)
                acc = (out[2][..., :n_stage].argmax(-1) == stage).float().mean()
            acc.tolist()
            del x, y, keep, th, stage, temp, out, acc


# ---------------------------------------------------------------- kiln load (graph attention network)


class _GatLayer(_nn.Module):
    """Graph attention over each piece's k incoming neighbour edges: per-head scores from both ends and the edge
    features, a leaky ReLU, a softmax over the k neighbours (the edges are grouped by receiver), the weighted
    messages summed into the receiver by index_add in the messages' dtype; a residual, layer norms and an MLP."""

    def __init__(self, d, heads, n_edge):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.lin = _nn.Linear(d, d)
        self.a_src, self.a_dst = _nn.Parameter(torch.randn(heads, d // heads) * 0.1), _nn.Parameter(
            torch.randn(heads, d // heads) * 0.1)
        self.edge = _nn.Linear(n_edge, heads)
        self.out = _nn.Linear(d, d)
        self.n1, self.n2 = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.ff = mlp(d, 2 * d, d, act=_nn.GELU)

    def forward(self, x, src, dst, ef, k):
        n = x.shape[0]
        hx = self.lin(self.n1(x)).view(n, self.h, self.dh)
        s_src, s_dst = (hx * self.a_src.to(hx.dtype)).sum(-1), (hx * self.a_dst.to(hx.dtype)).sum(-1)
        e = _F.leaky_relu(s_src[src] + s_dst[dst] + self.edge(ef), 0.2).float()
        alpha = e.view(n, k, self.h).softmax(1).view(-1, self.h)
        msg = hx[src] * alpha[..., None].to(hx.dtype)
        agg = msg.new_zeros(n, self.h, self.dh).index_add_(0, dst, msg)
        x = x + self.out(agg.flatten(1)).float()
        return x + self.ff(self.n2(x)).float()


class _KilnGat(_nn.Module):
    def __init__(self, n_feat, n_body, n_kiln, d, heads, layers, n_edge, n_glaze):
        super().__init__()
        self.inp, self.body, self.kiln = _nn.Linear(n_feat, d), _nn.Embedding(n_body, d), _nn.Embedding(n_kiln, d)
        self.layers = _nn.ModuleList(_GatLayer(d, heads, n_edge) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.node_out = mlp(d, d, 2 + n_glaze, act=_nn.GELU)
        self.kiln_out = mlp(d, d, 1, act=_nn.GELU)

    def forward(self, feat, body, kiln, src, dst, ef, k, keep):
        nk, npc = keep.shape
        x = self.inp(feat).float() + self.body(body) + self.kiln(kiln).repeat_interleave(npc, 0)
        for layer in self.layers:
            x = layer(x, src, dst, ef, k)
        x = self.norm(x)
        kf = keep.float().flatten()[:, None]
        pooled = (x.float() * kf).view(nk, npc, -1).sum(1) / kf.view(nk, npc, 1).sum(1)
        return self.node_out(x).float(), self.kiln_out(pooled).float()[:, 0]


@_workload("kiln load training (random init, a graph attention network written by hand): 4-12 kiln loads a step (drawn), each of 24-160 pieces of ware (drawn per kiln, padded to the step's longest) placed at random on the shelves of a kiln of 4 kinds (electric, gas, wood, anagama), with 8 piece features (its position and 5 drawn ones: mass, wall thickness, glazed, height, foot area) and a clay body (of 12) drawn on the device; 8 incoming edges per piece to its nearest neighbours by topk over each kiln's distance matrix (padded pieces and the piece itself masked out by masked_fill), with 4 edge features (distance and offsets); 5 graph attention layers (width 192, 6 heads: per-head scores from both ends and the edge, a leaky ReLU, a softmax over the 8 neighbours, messages summed into the receiver by index_add in the messages' dtype, residuals, layer norms and an MLP); each piece's peak temperature deviation by masked MSE, its warping risk by masked BCE and its glaze defect (of 4) by masked cross-entropy, each kiln's firing uniformity from masked mean pooling by MSE; AdamW on a cosine schedule, clipping, bf16 autocast, 420 steps; the losses read back every 20 steps and every 84 steps a no-grad pass over 8 kilns of 160 pieces with the defect accuracy read back")
def kiln_shelf_gat_train(rng):
    n_feat, n_body, n_kiln, n_edge, n_glaze = 8, 12, 4, 4, 4
    d, heads, layers, k = _smoke(192, 16), _smoke(6, 2), _smoke(5, 2), _smoke(8, 3)
    model = _KilnGat(n_feat, n_body, n_kiln, d, heads, layers, n_edge, n_glaze).cuda()
    steps = _smoke(420, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    lo_p, hi_p = _smoke(24, 5), _smoke(160, 8)

    def loads(sizes):
        nk, npc = len(sizes), max(sizes)
        keep = torch.arange(npc, device="cuda")[None] < torch.tensor(sizes, device="cuda")[:, None]
        dims = torch.rand(nk, 1, 3, device="cuda") + torch.tensor([1.0, 1.0, 1.5], device="cuda")
        pos = torch.rand(nk, npc, 3, device="cuda") * dims
        dist = torch.cdist(pos, pos)
        eye = torch.eye(npc, dtype=torch.bool, device="cuda")[None]
        dist = dist.masked_fill(~keep[:, None, :] | eye, 1e4)
        nb = dist.topk(k, -1, largest=False).indices
        off = (torch.arange(nk, device="cuda") * npc)[:, None, None]
        src = (nb + off).flatten()
        n = nk * npc
        dst = torch.arange(n, device="cuda").repeat_interleave(k)
        pf = pos.flatten(0, 1)
        rel = pf[src] - pf[dst]
        ef = torch.cat([rel.norm(dim=-1, keepdim=True), rel], -1)
        feat = torch.cat([pos.flatten(0, 1) / 2.0, torch.randn(n, n_feat - 3, device="cuda")], -1)
        body = torch.randint(0, n_body, (n,), device="cuda")
        kiln = torch.randint(0, n_kiln, (nk,), device="cuda")
        dev = torch.randn(n, device="cuda")
        warp = (torch.rand(n, device="cuda") < 0.1).float()
        glaze = torch.randint(0, n_glaze, (n,), device="cuda")
        unif = torch.rand(nk, device="cuda")
        return (feat, body, kiln, src, dst, ef, k, keep), (dev, warp, glaze, unif)

    def losses(out, tgt, keep):
        node, kl = out
        dev, warp, glaze, unif = tgt
        kf = keep.float().flatten()
        n = kf.sum()
        l_dev = ((node[:, 0] - dev).pow(2) * kf).sum() / n
        l_warp = (_F.binary_cross_entropy_with_logits(node[:, 1], warp, reduction="none") * kf).sum() / n
        l_glaze = (_F.cross_entropy(node[:, 2:], glaze, reduction="none") * kf).sum() / n
        return l_dev, l_warp, l_glaze, _F.mse_loss(kl, unif)

    for step in range(steps):
        model.train()
        nk = rng.randint(_smoke(4, 2), _smoke(12, 3))
        sizes = [rng.randint(lo_p, hi_p) for _ in range(nk)]
        inp, tgt = loads(sizes)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(*inp)
        l_dev, l_warp, l_glaze, l_unif = losses(out, tgt, inp[-1])
        loss = l_dev + l_warp + l_glaze + l_unif
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            torch.stack([l_dev.detach(), l_warp.detach(), l_glaze.detach(), l_unif.detach()]).tolist()
        del inp, tgt, out, l_dev, l_warp, l_glaze, l_unif, loss
        if (step + 1) % _smoke(84, 2) == 0:
            model.eval()
            with torch.no_grad():
                inp, tgt = loads([hi_p] * _smoke(8, 2))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    out = model(*inp)
                acc = (out[0][:, 2:].argmax(-1) == tgt[2]).float().mean()
            acc.tolist()
            del inp, tgt, out, acc


# ---------------------------------------------------------------- thrown-pot scan service (PointNet)


class _PotNet(_nn.Module):
    """A PointNet: a shared MLP of 1x1 convolutions with batch norm (4 -> 64 -> 128 -> 256) over the points, a max
    over them, joined with the measured radial profile and ovality by height; the form, defect flags and symmetry."""

    def __init__(self, widths, n_bin, n_form, n_flag):
        super().__init__()
        mods, c = [], 4
        for w in widths:
            mods += [_nn.Conv1d(c, w, 1, bias=False), _nn.BatchNorm1d(w), _nn.ReLU()]
            c = w
        self.shared = _nn.Sequential(*mods)
        self.head = mlp(c + 2 * n_bin, c, n_form + n_flag + 1, layers=3, act=_nn.ReLU)

    def forward(self, pts, prof):
        f = self.shared(pts.transpose(1, 2)).amax(-1)
        return self.head(torch.cat([f, prof.to(f.dtype)], -1)).float()


@_workload("thrown-pot scan serving (random init, a PointNet with measured profiles): 4,280-4,360 requests (drawn) of 1-8 pots (drawn) scanned on the wheel with 2,048-8,192 points each (drawn per request in steps of 512; x, y, z and intensity), fp16 points uploaded on a side stream from two reused pinned host buffers (filled once, sized for 8 x 8,192 x 4) one request ahead (one span, through SideUploads.ahead); on the device each pot centred on its axis, its height and its radial profile over 32 height bins (the mean radius and its spread, the ovality, by one_hot binning), a PointNet (1x1 convolutions with batch norm of 64, 128, 256 channels, a max over the points) joined with the profile in an MLP, in eval mode under bf16 autocast; the form (of 8) by softmax, 3 defect flags (warping, S-crack risk, uneven wall) by sigmoid, a symmetry score, the worst ovality and the height; each request's figures read back once")
def thrown_pot_scan_serve(rng):
    widths, n_bin, n_form, n_flag = _smoke([64, 128, 256], [8, 8, 16]), _smoke(32, 4), 8, 3
    max_n, max_p = _smoke(8, 2), _smoke(8192, 256)
    model = _PotNet(widths, n_bin, n_form, n_flag).cuda().eval()
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randn(max_n * max_p * 4, generator=gen).half().pin_memory() for _ in range(2)]
    up = SideUploads(host)
    step = _smoke(512, 64)

    nreq = rng.randint(_smoke(4280, 3), _smoke(4360, 4))
    plan = [(rng.randint(1, max_n), rng.randint(_smoke(4, 2), max_p // step) * step) for _ in range(nreq)]

    for (n, p), raw in up.ahead(plan, lambda q: (q[0] * q[1] * 4,)):
        with torch.no_grad():
            pts = raw.view(n, p, 4).float()
            xy = pts[..., :2] - pts[..., :2].mean(1, keepdim=True)
            z = pts[..., 2]
            zmin, zmax = z.amin(1, keepdim=True), z.amax(1, keepdim=True)
            height = (zmax - zmin)[:, 0]
            rad = xy.norm(dim=-1)
            bins = ((z - zmin) / (zmax - zmin).clamp_min(1e-6) * n_bin).long().clamp(0, n_bin - 1)
            oh = _F.one_hot(bins, n_bin).float()
            cnt = oh.sum(1).clamp_min(1.0)
            mean_r = (oh * rad[..., None]).sum(1) / cnt
            spread = ((oh * rad[..., None].pow(2)).sum(1) / cnt - mean_r.pow(2)).clamp_min(0.0).sqrt()
            oval = spread / mean_r.clamp_min(1e-3)
            prof = torch.cat([mean_r / mean_r.amax(-1, keepdim=True).clamp_min(1e-3), oval], -1)
            inp = torch.cat([xy, (z - zmin)[..., None], pts[..., 3:]], -1)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = model(inp, prof)
            p_form, form = out[:, :n_form].softmax(-1).max(-1)
            flags = torch.sigmoid(out[:, n_form:n_form + n_flag])
            sym = torch.sigmoid(out[:, -1])
            res = torch.cat([p_form, form.float(), flags.flatten(), sym, oval.amax(-1), height])
        res.tolist()
        del raw, pts, xy, z, zmin, zmax, height, rad, bins, oh, cnt, mean_r, spread, oval, prof, inp, out
        del p_form, form, flags, sym, res

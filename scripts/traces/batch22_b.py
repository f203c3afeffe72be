"""The twenty-second batch's second half (batch22.py holds the first; written in two to keep files small):
Deformable-DETR training, Demucs-style music source separation, an AlphaFold-2-style structure module and
rectified-flow MMDiT sampling. Same conventions and plumbing as batch22.py; record.py registers this module right
after it, so that the batch's workloads keep their order.
"""

import math

import torch

from batch07_tenth_a import _box_xyxy, _match
from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- Deformable DETR


def _ms_deform_attn(value, shapes, loc, attw):
    """Deformable DETR's ms_deform_attn_core_pytorch: value (b, S, heads, dh) over the levels' `shapes`, sampling
    locations loc (b, Lq, heads, levels, points, 2) in [0, 1], weights attw (b, Lq, heads, levels, points):
    (b, Lq, heads * dh), one grid_sample a level."""
    b, _, h, dh = value.shape
    lq, levels, points = loc.shape[1], loc.shape[3], loc.shape[4]
    grids = 2 * loc - 1
    outs = []
    for lvl, v in enumerate(value.split([hh * ww for hh, ww in shapes], 1)):
        hh, ww = shapes[lvl]
        v = v.flatten(2).transpose(1, 2).reshape(b * h, dh, hh, ww)
        g = grids[:, :, :, lvl].transpose(1, 2).flatten(0, 1)  # (b h, Lq, points, 2)
        outs.append(torch.nn.functional.grid_sample(v, g, mode="bilinear", padding_mode="zeros", align_corners=False))
    attw = attw.transpose(1, 2).reshape(b * h, 1, lq, levels * points)
    out = (torch.stack(outs, -2).flatten(-2) * attw).sum(-1).view(b, h * dh, lq)
    return out.transpose(1, 2)


class _MsDeformAttn(torch.nn.Module):
    def __init__(self, d=256, heads=8, levels=4, points=4):
        super().__init__()
        nn = torch.nn
        self.h, self.l, self.p = heads, levels, points
        self.offsets, self.weights = nn.Linear(d, heads * levels * points * 2), nn.Linear(d, heads * levels * points)
        self.value, self.out = nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, query, ref, src, shapes):
        """ref: (b, Lq, 2) points or (b, Lq, 4) boxes, normalized."""
        b, lq, d = query.shape
        value = self.value(src).view(b, src.shape[1], self.h, d // self.h)
        off = self.offsets(query).view(b, lq, self.h, self.l, self.p, 2)
        attw = self.weights(query).view(b, lq, self.h, self.l * self.p).softmax(-1).view(b, lq, self.h, self.l, self.p)
        if ref.shape[-1] == 2:
            norm = torch.tensor([[ww, hh] for hh, ww in shapes], dtype=query.dtype, device=query.device)
            loc = ref[:, :, None, None, None, :] + off / norm[None, None, None, :, None, :]
        else:
            loc = ref[:, :, None, None, None, :2] + off / self.p * ref[:, :, None, None, None, 2:] * 0.5
        return self.out(_ms_deform_attn(value, shapes, loc, attw))


class _DefDetr(torch.nn.Module):
    """Deformable DETR with iterative box refinement: ResNet-50 (frozen BatchNorm) C3-C5 and a stride-2 C6, each
    projected to 256 with GroupNorm; 6 encoder layers of multi-scale deformable self-attention; 6 decoder layers
    (self-attention, deformable cross-attention, FFN 1024) over 300 queries, a class and a box head per layer."""

    def __init__(self, classes=91, d=256, queries=300):
        super().__init__()
        import torchvision
        from torchvision.ops.misc import FrozenBatchNorm2d

        nn = torch.nn
        r = torchvision.models.resnet50(norm_layer=FrozenBatchNorm2d)
        self.stem = nn.Sequential(r.conv1, r.bn1, r.relu, r.maxpool, r.layer1)
        self.stages = nn.ModuleList([r.layer2, r.layer3, r.layer4])
        self.proj = nn.ModuleList([nn.Sequential(nn.Conv2d(c, d, 1), nn.GroupNorm(32, d)) for c in (512, 1024, 2048)]
                                  + [nn.Sequential(nn.Conv2d(2048, d, 3, 2, 1), nn.GroupNorm(32, d))])
        self.level = nn.Parameter(torch.randn(4, d) * 0.02)
        self.enc = nn.ModuleList(nn.ModuleDict({
            "attn": _MsDeformAttn(d), "n1": nn.LayerNorm(d), "n2": nn.LayerNorm(d),
            "ffn": nn.Sequential(nn.Linear(d, 1024), nn.ReLU(), nn.Linear(1024, d))}) for _ in range(6))
        self.dec = nn.ModuleList(nn.ModuleDict({
            "self": nn.MultiheadAttention(d, 8, batch_first=True), "cross": _MsDeformAttn(d), "n1": nn.LayerNorm(d),
            "n2": nn.LayerNorm(d), "n3": nn.LayerNorm(d),
            "ffn": nn.Sequential(nn.Linear(d, 1024), nn.ReLU(), nn.Linear(1024, d)),
            "cls": nn.Linear(d, classes), "box": nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d), nn.ReLU(),
                                                               nn.Linear(d, 4))}) for _ in range(6))
        self.query = nn.Embedding(queries, 2 * d)
        self.ref = nn.Linear(d, 2)

    def forward(self, img):
        from torch.utils.checkpoint import checkpoint

        x = self.stem(img)
        feats = []
        for stage in self.stages:
            x = stage(x)
            feats.append(x)
        maps = [p(f) for p, f in zip(self.proj, feats + [feats[-1]])]
        shapes = [tuple(m.shape[-2:]) for m in maps]
        b, d = img.shape[0], maps[0].shape[1]
        pos, refs = [], []
        for lvl, (hh, ww) in enumerate(shapes):
            ys, xs = torch.meshgrid(torch.linspace(0.5 / hh, 1 - 0.5 / hh, hh, device=img.device),
                                    torch.linspace(0.5 / ww, 1 - 0.5 / ww, ww, device=img.device), indexing="ij")
            refs.append(torch.stack([xs.flatten(), ys.flatten()], -1))
            sincos = _b.rec._sincos
            pe = torch.cat([sincos(xs.flatten() * 6.283, d // 2), sincos(ys.flatten() * 6.283, d // 2)], -1)
            pos.append(pe + self.level[lvl])
        src = torch.cat([m.flatten(2).transpose(1, 2) for m in maps], 1)
        pos, ref = torch.cat(pos)[None], torch.cat(refs)[None].expand(b, -1, -1)

        def enc_layer(layer, src):
            src = layer["n1"](src + layer["attn"](src + pos, ref, src, shapes))
            return layer["n2"](src + layer["ffn"](src))

        for layer in self.enc:  # checkpointed: the pure-PyTorch sampling would keep GBs for the backward
            src = checkpoint(enc_layer, layer, src, use_reentrant=False)
        qpos, tgt = self.query.weight.split(d, 1)
        qpos, tgt = qpos[None].expand(b, -1, -1), tgt[None].expand(b, -1, -1)
        box = self.ref(qpos).sigmoid()
        box = torch.cat([box, torch.full_like(box, 0.1)], -1)
        outs = []
        for layer in self.dec:
            q = tgt + qpos
            tgt = layer["n1"](tgt + layer["self"](q, q, tgt, need_weights=False)[0])
            tgt = layer["n2"](tgt + layer["cross"](tgt + qpos, box, src, shapes))
            tgt = layer["n3"](tgt + layer["ffn"](tgt))
            new = (layer["box"](tgt) + torch.logit(box, eps=1e-5)).sigmoid()
            outs.append((layer["cls"](tgt), new))
            box = new.detach()
        return outs


@_workload("multi-scale deformable-attention detection training, Deformable DETR with iterative box refinement (Zhu et al. 2021) in pure PyTorch (its ms_deform_attn_core_pytorch: one grid_sample a level), random init: torchvision ResNet-50 (frozen BatchNorm) C3-C5 and a stride-2 C6 projected to 256 with GroupNorm, sine positions plus level embeddings, 6 encoder layers of deformable self-attention (8 heads, 4 levels, 4 points) checkpointed (non-reentrant), 6 decoder layers (self-attention, deformable cross-attention around the previous layer's boxes, FFN 1024) over 300 queries, 91 classes; batches of 1-4 images of one size (shorter side 384-640 step 32, longer side 1-1.6x it, at most 1.2M pixels a batch) made on the device, 1-30 boxes an image; Hungarian matching per image and decoder layer on the host (scipy if installed, else greedy) with focal-class, L1 and GIoU costs, sigmoid focal loss x2, L1 x5 and GIoU x2 on all 6 layers; AdamW (lr 2e-4, backbone 2e-5, weight decay 1e-4), gradient clipping 0.1, fp32, 64 steps, the loss read back every step")
def deformable_detr_train(rng):
    from torchvision.ops import generalized_box_iou, sigmoid_focal_loss

    model = _DefDetr().cuda().train()
    backbone = [p for n, p in model.named_parameters() if n.startswith(("stem", "stages"))]
    rest = [p for n, p in model.named_parameters() if not n.startswith(("stem", "stages"))]
    opt = torch.optim.AdamW([{"params": backbone, "lr": 2e-5}, {"params": rest}], lr=2e-4, weight_decay=1e-4)
    small = _smoke(0, 1)
    # About 5.1k tensors a step (counted on CPU, 5.3k less the host-side matching's): 64 steps make about 0.33M
    # tensors, 0.65M events.
    for _ in range(_smoke(64, 2)):
        short = rng.randrange(384, 641, 32) if not small else 128
        long_ = int(short * rng.uniform(1.0, 1.6)) // 32 * 32
        h, w = (short, long_) if rng.random() < 0.5 else (long_, short)
        b = max(1, min(rng.randint(1, 4), _smoke(1_200_000, 40_000) // (h * w)))
        img = torch.randn(b, 3, h, w, device="cuda")
        counts = [rng.randint(1, 30) for _ in range(b)]
        cxy = torch.rand(sum(counts), 2, device="cuda") * 0.8 + 0.1
        tboxes = torch.cat([cxy, torch.rand(sum(counts), 2, device="cuda") * 0.18 + 0.02], -1)
        tcls = torch.randint(0, 91, (sum(counts),), device="cuda")
        loss = 0
        for logits, boxes in model(img):
            with torch.no_grad():
                prob = logits.flatten(0, 1).sigmoid()
                pos_c = 0.25 * (1 - prob) ** 2 * -(prob + 1e-8).log()
                neg_c = 0.75 * prob ** 2 * -(1 - prob + 1e-8).log()
                cost = (pos_c - neg_c)[:, tcls] + 5 * torch.cdist(boxes.flatten(0, 1), tboxes, p=1) - \
                    2 * generalized_box_iou(_box_xyxy(boxes.flatten(0, 1)), _box_xyxy(tboxes))
                idx = _match(cost.view(b, -1, sum(counts)).cpu(), counts)
            rows = torch.cat([r + i * logits.shape[1] for i, (r, _) in enumerate(idx)]).cuda()
            cols = torch.cat([c + sum(counts[:i]) for i, (_, c) in enumerate(idx)]).cuda()
            onehot = torch.zeros_like(logits.flatten(0, 1))
            onehot[rows, tcls[cols]] = 1
            nb = max(1, sum(counts))
            pb, tb = boxes.flatten(0, 1)[rows], tboxes[cols]
            loss = loss + 2 * sigmoid_focal_loss(logits.flatten(0, 1), onehot, reduction="sum") / nb + \
                5 * (pb - tb).abs().sum() / nb + \
                2 * (1 - generalized_box_iou(_box_xyxy(pb), _box_xyxy(tb)).diagonal()).sum() / nb
            del prob, pos_c, neg_c, cost, rows, cols, onehot, pb, tb
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        opt.step()
        opt.zero_grad(set_to_none=True)
        float(loss.detach())
        del img, cxy, tboxes, tcls, loss
    torch.cuda.synchronize()


# ---------------------------------------------------------------- Demucs source separation


class _Demucs(torch.nn.Module):
    """Demucs v2 (Defossez et al. 2019), the waveform U-Net: 6 encoder layers (Conv1d kernel 8 stride 4, ReLU,
    1x1 Conv1d to twice the width, GLU), a 2-layer bidirectional LSTM at the bottleneck with a linear back to its
    width, 6 decoder layers (Conv1d kernel 3 to twice the width, GLU, ConvTranspose1d kernel 8 stride 4, ReLU but
    the last) with the encoder's outputs added as skips; 4 stereo sources out."""

    def __init__(self, sources=4, audio=2, ch=48, depth=6):
        super().__init__()
        nn = torch.nn
        self.sources, self.audio, self.depth = sources, audio, depth
        self.enc, self.dec = nn.ModuleList(), nn.ModuleList()
        cin = audio
        for i in range(depth):
            self.enc.append(nn.Sequential(nn.Conv1d(cin, ch, 8, 4), nn.ReLU(), nn.Conv1d(ch, 2 * ch, 1), nn.GLU(1)))
            out = sources * audio if i == 0 else cin
            self.dec.insert(0, nn.Sequential(nn.Conv1d(ch, 2 * ch, 3), nn.GLU(1), nn.ConvTranspose1d(ch, out, 8, 4),
                                             *([nn.ReLU()] if i > 0 else [])))
            cin, ch = ch, 2 * ch
        self.lstm = nn.LSTM(cin, cin, 2, bidirectional=True)
        self.lstm_out = nn.Linear(2 * cin, cin)

    def valid_length(self, n):
        for _ in range(self.depth):
            n = max(1, math.ceil((n - 8) / 4) + 1) + 2
        for _ in range(self.depth):
            n = (n - 1) * 4 + 8
        return n

    def forward(self, x):
        skips = []
        for layer in self.enc:
            x = layer(x)
            skips.append(x)
        y = self.lstm(x.permute(2, 0, 1).float())[0]  # fp16 again under CUDA autocast (cuDNN RNN)
        x = self.lstm_out(y).permute(1, 2, 0)
        for layer in self.dec:
            skip = skips.pop()
            trim = (skip.shape[-1] - x.shape[-1]) // 2
            x = layer(x + skip[..., trim: trim + x.shape[-1]])
        return x.view(x.shape[0], self.sources, self.audio, -1)


@_workload("music source separation serving, Demucs v2-style (Defossez et al. 2019) as demucs.apply_model runs it (split into overlapping segments, random shifts), with a track-upload stream (two CUDA streams): the Demucs waveform U-Net (6 layers from 48 channels, kernel 8 stride 4, GLU, a 2-layer BiLSTM of 1536 at the bottleneck, 4 stereo sources; random init) under fp16 autocast and inference_mode; 96 stereo 44.1 kHz tracks of 40-300 s (log-uniform), their int16 PCM copied from one pinned host buffer (made once) on a side stream while the previous track separates (record_stream, the main stream waiting before use), converted to float and normalized by the mono mix's mean and std; each track padded by 0.5 s a side and separated 1, 2 or 5 times (demucs --shifts, drawn per track) at a random shift, each pass split into 8 s segments with 25% overlap, each segment zero-padded to the model's valid length, separated one at a time, trimmed, weighted by a triangular window and added into a (4, 2, length) fp32 output with the window sums, then divided by them; the sources denormalized, their peaks read back and converted to int16 per track")
def demucs_separate(rng):
    f = torch.nn.functional
    ch = _smoke(48, 4)
    model = _Demucs(ch=ch).cuda().eval()
    rate = _smoke(44100, 2000)
    seg, shift_max = 8 * rate, rate // 2
    stride = seg * 3 // 4
    valid = model.valid_length(seg)
    half = seg // 2
    window = torch.cat([torch.arange(1, half + 1, device="cuda"), torch.arange(seg - half, 0, -1, device="cuda")])
    window = window.float() / half
    longest = 300 * rate
    host = torch.randint(-8000, 8000, (longest, 2), dtype=torch.int16).pin_memory()  # interleaved, as decoded
    copy = torch.cuda.Stream()
    main = torch.cuda.current_stream()
    lengths = [_loguniform(rng, 40, 300) * rate for _ in range(_smoke(96, 2))]

    def upload(n):
        with torch.cuda.stream(copy):
            pcm = host[:n].to("cuda", non_blocking=True)
        return pcm

    # About 60 tensors a segment (counted on CPU: the model under autocast, padding, trimming and the overlap-add)
    # and 40 a track besides: 96 tracks of 129 s on average, 2.67 passes of 21.6 segments (about 5.5k segments),
    # make about 0.34M tensors, 0.67M events.
    with torch.inference_mode():
        nxt = upload(lengths[0])
        for i, n in enumerate(lengths):
            main.wait_stream(copy)
            pcm = nxt
            pcm.record_stream(main)
            if i + 1 < len(lengths):
                nxt = upload(lengths[i + 1])
            mix = pcm.T.float() / 32768
            mono = mix.mean(0)
            mean, std = mono.mean(), mono.std()
            mix = (mix - mean) / std
            padded = f.pad(mix, (shift_max, shift_max))
            out = torch.zeros(4, 2, n, device="cuda")
            shifts = rng.choice((1, 2, 5))
            for _ in range(shifts):
                off = rng.randint(0, shift_max)
                x = padded[:, off: off + n + shift_max]
                total = x.shape[-1]
                acc = torch.zeros(4, 2, total, device="cuda")
                wsum = torch.zeros(total, device="cuda")
                for lo in range(0, total, stride):
                    chunk = x[:, lo: lo + seg]
                    m = chunk.shape[-1]
                    pad = valid - m
                    with torch.autocast("cuda", dtype=torch.float16):
                        y = model(f.pad(chunk, (pad // 2, pad - pad // 2))[None])[0]
                    trim = (y.shape[-1] - m) // 2
                    acc[..., lo: lo + m] += window[:m] * y[..., trim: trim + m].float()
                    wsum[lo: lo + m] += window[:m]
                    del chunk, y
                out += (acc / wsum)[..., shift_max - off: shift_max - off + n]
                del x, acc, wsum
            out = (out / shifts) * std + mean
            out.abs().amax((1, 2)).tolist()
            [(s.clamp(-1, 1) * 32767).to(torch.int16) for s in out]
            del pcm, mix, mono, padded, out
    torch.cuda.synchronize()


# ---------------------------------------------------------------- AlphaFold-2-style structure module (IPA)


def _quat_rot(q):
    """Rotation matrices (..., 3, 3) of unnormalized quaternions (..., 4) (w, x, y, z)."""
    w, x, y, z = (q / q.norm(dim=-1, keepdim=True)).unbind(-1)
    return torch.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                        2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                        2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1).unflatten(-1, (3, 3))


class _Ipa(torch.nn.Module):
    """Invariant point attention (AlphaFold 2, supplement Algorithm 22) as OpenFold writes it: 12 heads of 16
    scalar channels, 4 query points and 8 value points a head, pair bias and pair output from the (b, L, L, c_z)
    pair representation."""

    def __init__(self, cs=384, cz=128, h=12, c=16, qp=4, vp=8):
        super().__init__()
        nn = torch.nn
        self.h, self.c, self.qp, self.vp = h, c, qp, vp
        self.q, self.kv = nn.Linear(cs, h * c), nn.Linear(cs, 2 * h * c)
        self.q_pts, self.kv_pts = nn.Linear(cs, h * qp * 3), nn.Linear(cs, h * (qp + vp) * 3)
        self.bias, self.head_w = nn.Linear(cz, h), nn.Parameter(torch.full((h,), 0.541324854612918))
        self.out = nn.Linear(h * (c + cz + vp * 4), cs)

    def forward(self, s, z, rot, trans):
        b, n, _ = s.shape
        h, c = self.h, self.c
        q = self.q(s).view(b, n, h, c)
        k, v = self.kv(s).view(b, n, h, 2 * c).split(c, -1)

        def to_global(p):  # (b, n, m, 3) local points to global by each residue's frame
            return torch.einsum("bnij,bnmj->bnmi", rot, p) + trans[:, :, None]

        qp = to_global(self.q_pts(s).view(b, n, -1, 3)).view(b, n, h, self.qp, 3)
        kvp = to_global(self.kv_pts(s).view(b, n, -1, 3)).view(b, n, h, self.qp + self.vp, 3)
        kp, vp = kvp.split([self.qp, self.vp], 3)
        a = torch.einsum("bihc,bjhc->bhij", q, k) * math.sqrt(1 / (3 * c))
        a = a + math.sqrt(1 / 3) * self.bias(z).permute(0, 3, 1, 2)
        d2 = (qp[:, :, None] - kp[:, None]).pow(2).sum((-1, -2))  # (b, i, j, h)
        w = torch.nn.functional.softplus(self.head_w) * math.sqrt(1 / (3 * self.qp * 9 / 2))
        a = (a - 0.5 * math.sqrt(1 / 3) * w[:, None, None] * d2.permute(0, 3, 1, 2)).softmax(-1)
        o = torch.einsum("bhij,bjhc->bihc", a, v).flatten(2)
        op = torch.einsum("bhij,bjhpx->bihpx", a, vp).flatten(2, 3) - trans[:, :, None]
        op = torch.einsum("bnji,bnmj->bnmi", rot, op)  # back to local frames
        opair = torch.einsum("bhij,bijc->bihc", a, z).flatten(2)
        feats = [o, op.flatten(2), (op.pow(2).sum(-1) + 1e-8).sqrt(), opair]
        return self.out(torch.cat(feats, -1))


def _fape(rot, trans, rot_t, trans_t, clamp=10.0):
    """Frame-aligned point error of the CA positions under every frame (b, L, L), clamped at 10 A, in units of
    10 A."""
    def local(r, t):
        return torch.einsum("bikj,bmk->bimj", r, t) - torch.einsum("bikj,bik->bij", r, t)[:, :, None]

    err = (local(rot, trans) - local(rot_t, trans_t)).pow(2).sum(-1).add(1e-8).sqrt()
    return err.clamp(max=clamp).mean() / clamp


@_workload("protein structure-module training, ESMFold/AlphaFold-2-style (OpenFold's StructureModule written by hand, random init, fp32): ESM-2-150M-like residue embeddings (640 wide, made on the device as a frozen language model's cached outputs) projected to the single representation (384) and, ESMFold's way, to a pair representation (128) by an outer product and difference of projections plus relative-position embeddings (65 bins); 8 iterations of invariant point attention with shared weights (12 heads, 16 channels, 4 query and 8 value points, pair bias and pair output), dropout 0.1, LayerNorm, a 3-layer transition, a backbone update (quaternion and translation from the single representation, composed onto each residue's frame, the rotation's gradient stopped between iterations), and per iteration the backbone FAPE (clamped at 10 A) against a random chain's true frames (a 3.8 A random walk, frames by Gram-Schmidt of neighbouring CA vectors); a torsion-angle head (7 sin/cos pairs, normalized) and a pLDDT head (50 bins, cross-entropy against the CA lDDT of the final structure over L x L distances); crops of 64-448 residues (log-uniform, multiples of 8), batches of 1-8 chains at most 256^2 x 2 residue pairs; AdamW (lr 1e-3 after 10 warmup steps), gradient clipping 0.1, 96 steps, the loss read back every step")
def ipa_structure_train(rng):
    nn, f = torch.nn, torch.nn.functional
    cs, cz, emb = _smoke(384, 32), _smoke(128, 16), _smoke(640, 32)
    m = nn.ModuleDict({
        "s_in": nn.Sequential(nn.LayerNorm(emb), nn.Linear(emb, cs)), "z_a": nn.Linear(emb, cz // 2),
        "z_b": nn.Linear(emb, cz // 2), "z_out": nn.Linear(cz, cz), "relpos": nn.Embedding(65, cz),
        "ln_s": nn.LayerNorm(cs), "ln_z": nn.LayerNorm(cz), "lin_in": nn.Linear(cs, cs),
        "ipa": _Ipa(cs, cz, 12 if cs >= 192 else 4, 16 if cs >= 192 else 4), "ln_ipa": nn.LayerNorm(cs),
        "trans": nn.Sequential(nn.Linear(cs, cs), nn.ReLU(), nn.Linear(cs, cs), nn.ReLU(), nn.Linear(cs, cs)),
        "ln_tr": nn.LayerNorm(cs), "bb": nn.Linear(cs, 6), "drop": nn.Dropout(0.1),
        "ang": nn.Sequential(nn.ReLU(), nn.Linear(2 * cs, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                             nn.Linear(128, 14)),
        "plddt": nn.Sequential(nn.LayerNorm(cs), nn.Linear(cs, 128), nn.ReLU(), nn.Linear(128, 50)),
    }).cuda().train()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
    steps, warm, pairs = _smoke(96, 3), 10, _smoke(2 * 256 * 256, 2 * 48 * 48)

    def true_frames(b, n):
        step = torch.nn.functional.normalize(torch.randn(b, n, 3, device="cuda"), dim=-1) * 3.8
        ca = step.cumsum(1)
        e1 = f.normalize(torch.roll(ca, -1, 1) - ca, dim=-1)
        u = torch.roll(ca, 1, 1) - ca
        e2 = f.normalize(u - (u * e1).sum(-1, keepdim=True) * e1, dim=-1)
        return torch.stack([e1, e2, torch.cross(e1, e2, dim=-1)], -1), ca

    # About 3.4k tensors a step (counted on CPU: an iteration about 360 with its backward, the pair
    # representation, heads and losses the rest): 96 steps make about 0.33M tensors, 0.66M events.
    for step in range(steps):
        opt.param_groups[0]["lr"] = 1e-3 * min(1.0, (step + 1) / warm)
        n = _loguniform(rng, _smoke(64, 16), _smoke(448, 48)) // 8 * 8
        b = max(1, min(rng.randint(1, 8), pairs // (n * n)))
        x = torch.randn(b, n, emb, device="cuda")
        rot_t, ca_t = true_frames(b, n)
        s0 = m["s_in"](x)
        pos = torch.arange(n, device="cuda")
        rel = (pos[None] - pos[:, None]).clamp(-32, 32) + 32
        za, zb = m["z_a"](x), m["z_b"](x)
        z = m["z_out"](torch.cat([za[:, :, None] * za[:, None], zb[:, :, None] - zb[:, None]], -1)) + m["relpos"](rel)
        z = m["ln_z"](z)
        s_init = m["ln_s"](s0)
        s = m["lin_in"](s_init)
        rot = torch.eye(3, device="cuda").expand(b, n, 3, 3)
        trans = torch.zeros(b, n, 3, device="cuda")
        fape = 0
        for _ in range(8):
            s = m["ln_ipa"](m["drop"](s + m["ipa"](s, z, rot, trans)))
            s = m["ln_tr"](m["drop"](s + m["trans"](s)))
            upd = m["bb"](s)
            r_upd = _quat_rot(torch.cat([torch.ones_like(upd[..., :1]), upd[..., :3]], -1))
            trans = torch.einsum("bnij,bnj->bni", rot, upd[..., 3:]) + trans
            rot = rot @ r_upd
            fape = fape + _fape(rot, trans * 10, rot_t, ca_t)  # translations in nm, as AlphaFold scales them
            rot = rot.detach()
        ang = m["ang"](torch.cat([s, s_init], -1)).view(b, n, 7, 2)
        ang_loss = (ang / ang.norm(dim=-1, keepdim=True).clamp_min(1e-6) - f.normalize(
            torch.randn(b, n, 7, 2, device="cuda"), dim=-1)).pow(2).sum(-1).mean()
        with torch.no_grad():
            dp, dt = torch.cdist(trans * 10, trans * 10), torch.cdist(ca_t, ca_t)
            near = (dt < 15) & ~torch.eye(n, dtype=torch.bool, device="cuda")
            diff = (dp - dt).abs()
            score = sum((diff < c).float() for c in (0.5, 1.0, 2.0, 4.0)) / 4
            lddt = (score * near).sum(-1) / near.sum(-1).clamp_min(1)
            bins = (lddt * 50).long().clamp(max=49)
            del dp, dt, near, diff, score, lddt
        plddt = f.cross_entropy(m["plddt"](s).flatten(0, 1), bins.flatten())
        loss = fape / 8 + 0.5 * ang_loss + 0.01 * plddt
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 0.1)
        opt.step()
        opt.zero_grad(set_to_none=True)
        float(loss.detach())
        del x, rot_t, ca_t, s0, z, s, s_init, rot, trans, fape, ang, ang_loss, bins, plddt, loss, za, zb, rel, pos
    torch.cuda.synchronize()


# ---------------------------------------------------------------- MMDiT rectified-flow sampling (SD3-style)


class _MmBlock(torch.nn.Module):
    """An SD3 MMDiT block: image and text streams with weights of their own (adaLN-Zero modulation from the
    conditioning vector, LayerNorm without affine, qkv with RMS-normalized queries and keys, GELU-tanh MLP of
    4x), one joint attention over the text tokens followed by the image tokens."""

    def __init__(self, d, heads):
        super().__init__()
        nn = torch.nn
        self.heads = heads
        self.s = nn.ModuleList(nn.ModuleDict({
            "mod": nn.Linear(d, 6 * d), "qkv": nn.Linear(d, 3 * d), "qn": nn.RMSNorm(d // heads, eps=1e-6),
            "kn": nn.RMSNorm(d // heads, eps=1e-6), "proj": nn.Linear(d, d),
            "mlp": nn.Sequential(nn.Linear(d, 4 * d), nn.GELU("tanh"), nn.Linear(4 * d, d))}) for _ in range(2))

    def forward(self, ctx, x, c):
        f = torch.nn.functional
        mods, qkv = [], []
        for st, t in zip(self.s, (ctx, x)):
            mod = st["mod"](f.silu(c))[:, None].chunk(6, -1)
            h = f.layer_norm(t, t.shape[-1:]) * (1 + mod[1]) + mod[0]
            q, k, v = st["qkv"](h).unflatten(-1, (3, self.heads, -1)).unbind(2)
            qkv.append((st["qn"](q), st["kn"](k), v))
            mods.append(mod)
        q, k, v = (torch.cat(p, 1).transpose(1, 2) for p in zip(*qkv))
        a = f.scaled_dot_product_attention(q, k, v).transpose(1, 2).flatten(2).split([ctx.shape[1], x.shape[1]], 1)
        outs = []
        for st, t, mod, o in zip(self.s, (ctx, x), mods, a):
            t = t + mod[2] * st["proj"](o)
            outs.append(t + mod[5] * st["mlp"](f.layer_norm(t, t.shape[-1:]) * (1 + mod[4]) + mod[3]))
        return outs


@_workload("text-to-image sampling with a multimodal diffusion transformer and rectified flow, SD3-style (inference): an MMDiT (16 joint blocks of width 1024, 16 heads, qk RMSNorm, adaLN-Zero, patch 2 over 16-channel latents, 2-D sin-cos positions computed per resolution; random init) in bf16 under inference_mode, conditioned by a T5-base-sized HF T5EncoderModel (12 layers, width 768, random init) over 256-token prompts and a pooled vector (the encoder output's mean through an MLP, standing in for CLIP's) added to the timestep embedding; 16 requests one after another of 1-4 images (drawn) at SDXL/SD3 aspect buckets from 512x512 to 1344x768 (1024-4096 latent tokens a image), each with its prompt and an empty negative prompt encoded (the batch doubled for classifier-free guidance, scale 5-7), 20-32 Euler steps (drawn) on the shifted rectified-flow schedule (shift 3.0); the final latents' statistics read back per request")
def mmdit_rectflow_sample(rng):
    from transformers import T5Config, T5EncoderModel

    f, nn = torch.nn.functional, torch.nn
    d, depth, heads, lat = _smoke(1024, 64), _smoke(16, 2), _smoke(16, 4), 16
    t5cfg = T5Config(vocab_size=32128, d_model=_smoke(768, 64), d_kv=64, d_ff=_smoke(3072, 128), num_layers=12,
                     num_heads=12 if d >= 512 else 2)
    t5 = T5EncoderModel(t5cfg).to("cuda", torch.bfloat16).eval()
    tw = t5cfg.d_model
    m = nn.ModuleDict({
        "patch": nn.Conv2d(lat, d, 2, 2), "ctx": nn.Linear(tw, d),
        "t": nn.Sequential(nn.Linear(256, d), nn.SiLU(), nn.Linear(d, d)),
        "y": nn.Sequential(nn.Linear(tw, d), nn.SiLU(), nn.Linear(d, d)),
        "blocks": nn.ModuleList(_MmBlock(d, heads) for _ in range(depth)),
        "final_mod": nn.Linear(d, 2 * d), "final": nn.Linear(d, 4 * lat),
    }).to("cuda", torch.bfloat16).eval()
    sincos = _b.rec._sincos
    buckets = [(512, 512), (768, 768), (1024, 1024), (1152, 896), (896, 1152), (1216, 832), (832, 1216),
               (1344, 768), (768, 1344)]

    def velocity(x, ctx, pooled, sigma):
        b, _, hh, ww = x.shape
        gy, gx = torch.meshgrid(torch.arange(hh // 2, device="cuda"), torch.arange(ww // 2, device="cuda"),
                                indexing="ij")
        pos = torch.cat([sincos(gy.flatten(), d // 2), sincos(gx.flatten(), d // 2)], -1).to(torch.bfloat16)
        tok = m["patch"](x).flatten(2).transpose(1, 2) + pos
        c = m["t"](sincos(sigma * 1000, 256).to(torch.bfloat16).expand(b, -1)) + pooled
        for blk in m["blocks"]:
            ctx, tok = blk(ctx, tok, c)
        shift, scale = m["final_mod"](f.silu(c))[:, None].chunk(2, -1)
        out = m["final"](f.layer_norm(tok, tok.shape[-1:]) * (1 + scale) + shift)
        out = out.view(b, hh // 2, ww // 2, lat, 2, 2).permute(0, 3, 1, 4, 2, 5)
        return out.reshape(b, lat, hh, ww)

    # About 780 tensors a sampling step (counted on CPU at 2 and 16 blocks: 46 a block, 40 besides) and 400 a
    # request's prompt encoding: 16 requests of 26 steps on average make about 0.33M tensors, 0.66M events.
    with torch.inference_mode():
        for _ in range(_smoke(16, 2)):
            b = rng.randint(1, 4)
            h, w = rng.choice(buckets) if not _smoke(0, 1) else (64, 48)
            steps, cfg = rng.randint(_smoke(20, 2), _smoke(32, 3)), rng.uniform(5.0, 7.0)
            ids = torch.cat([torch.randint(1, t5cfg.vocab_size, (b, 256), device="cuda"),
                             torch.zeros(b, 256, dtype=torch.long, device="cuda")])
            ids[b:, 0] = 1  # the empty negative prompt: end-of-sequence and padding
            mask = torch.ones_like(ids)
            mask[b:, 1:] = 0
            enc = t5(input_ids=ids, attention_mask=mask).last_hidden_state
            ctx, pooled = m["ctx"](enc), m["y"](enc.mean(1))
            x = torch.randn(b, lat, h // 8, w // 8, device="cuda", dtype=torch.bfloat16)
            t = torch.linspace(1, 0, steps + 1, device="cuda")
            sigmas = 3.0 * t / (1 + 2.0 * t)
            for i in range(steps):
                v = velocity(torch.cat([x, x]), ctx, pooled, sigmas[i: i + 1])
                cond, uncond = v.chunk(2)
                x = x + (sigmas[i + 1] - sigmas[i]) * (uncond + cfg * (cond - uncond))
                del v, cond, uncond
            torch.stack([x.float().mean(), x.float().std()]).tolist()
            del ids, mask, enc, ctx, pooled, x, t, sigmas
    torch.cuda.synchronize()

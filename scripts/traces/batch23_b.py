"""The twenty-third batch's second half (batch23.py holds the first; written in two to keep files small): SPLADE
sparse-retrieval training, Glow normalizing-flow training, reversible-ViT training with activations recomputed
by inversion, and clustering speaker diarization serving. Same conventions and plumbing as batch23.py;
record.py registers this module right after it, so that the batch's workloads keep their order.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- SPLADE sparse retrieval training


@_workload("learned sparse retrieval training, SPLADE++-style (Formal et al. 2022): an HF BertForMaskedLM (BERT-base-sized: 12 layers, width 768, vocab 30522, random init, sdpa) shared by queries and documents, each text's representation the max over its tokens of log(1 + ReLU(MLM logits)) over the whole vocabulary (the (tokens, 30522) logits kept for the backward), bf16 autocast; batches of 8-48 queries of 6-32 tokens with a positive and a hard-negative passage each of 48-256 tokens (padded to the batch's longest, at most 8192 passage tokens a batch), in-batch-negative InfoNCE over all passages plus MarginMSE against cross-encoder margins (random, made on the device), FLOPS regularization of queries (3e-4) and documents (1e-4) with SPLADE's quadratic warmup of the weights over 40 steps; AdamW (lr 2e-5), 82 steps, the loss read back every step")
def splade_train(rng):
    from transformers import BertConfig, BertForMaskedLM

    f = torch.nn.functional
    cfg = BertConfig(hidden_size=_smoke(768, 64), num_hidden_layers=12, num_attention_heads=12 if _smoke(1, 0) else 4,
                     intermediate_size=_smoke(3072, 128), attn_implementation="sdpa")
    model = BertForMaskedLM(cfg).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-5, weight_decay=0.01)
    cap = _smoke(8192, 1024)

    def encode(lengths):
        ids, mask = _b.rec._padded_ids(cfg.vocab_size, lengths)
        logits = model(input_ids=ids, attention_mask=mask).logits
        return (torch.log1p(torch.relu(logits)) * mask[..., None]).amax(1)

    # About 3.8k tensors a step (counted on CPU: two passes through BERT and their backward, the MLM head's
    # vocabulary-wide activations, the losses and AdamW): 82 steps make about 0.31M tensors, 0.62M events.
    steps = _smoke(82, 3)
    for step in range(steps):
        lengths = [rng.randint(_smoke(48, 8), _smoke(256, 24)) for _ in range(48)]
        b = max(1, min(rng.randint(8, 48), cap // (2 * max(lengths))))
        dl = lengths[:b] + [rng.randint(_smoke(48, 8), _smoke(256, 24)) for _ in range(b)]
        ql = [rng.randint(6, 32) for _ in range(b)]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            q = encode(ql)
            docs = encode(dl)  # b positives, then b hard negatives
            scores = q.float() @ docs.float().t()
            nce = f.cross_entropy(scores, torch.arange(b, device="cuda"))
            margin = scores.diagonal() - scores[:, b:].diagonal()
            mse = f.mse_loss(margin, torch.randn(b, device="cuda") * 3 + 5)
            warm = min(1.0, ((step + 1) / 40) ** 2)
            flops = 3e-4 * warm * q.float().mean(0).pow(2).sum() + 1e-4 * warm * docs.float().mean(0).pow(2).sum()
            loss = nce + mse + flops
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        float(loss.detach())
        del q, docs, scores, nce, margin, mse, flops, loss
    torch.cuda.synchronize()


# ---------------------------------------------------------------- Glow


class _ActNorm(torch.nn.Module):
    """Glow's activation normalization: a per-channel affine initialized from the first batch's statistics."""

    def __init__(self, c):
        super().__init__()
        self.loc, self.logs = torch.nn.Parameter(torch.zeros(1, c, 1, 1)), torch.nn.Parameter(torch.zeros(1, c, 1, 1))
        self.inited = False

    def forward(self, x, reverse=False):
        if not self.inited:
            with torch.no_grad():
                self.loc.copy_(-x.mean((0, 2, 3), keepdim=True))
                self.logs.copy_(-(x.std((0, 2, 3), keepdim=True) + 1e-6).log())
            self.inited = True
        hw = x.shape[2] * x.shape[3]
        if reverse:
            return x * self.logs.neg().exp() - self.loc
        return (x + self.loc) * self.logs.exp(), self.logs.sum() * hw


class _InvConv(torch.nn.Module):
    """Glow's invertible 1x1 convolution in its LU-decomposed form: W = P L (U + diag(sign(s) exp(log|s|)))."""

    def __init__(self, c):
        super().__init__()
        w = torch.linalg.qr(torch.randn(c, c))[0]
        p, lo, up = torch.linalg.lu(w)
        s = up.diagonal()
        self.register_buffer("p", p)
        self.register_buffer("sign", s.sign())
        self.register_buffer("lmask", torch.tril(torch.ones(c, c), -1))
        self.register_buffer("eye", torch.eye(c))
        self.lo, self.up = torch.nn.Parameter(lo), torch.nn.Parameter(torch.triu(up, 1))
        self.logs = torch.nn.Parameter(s.abs().log())

    def weight(self):
        lo = self.lo * self.lmask + self.eye
        up = self.up * self.lmask.t() + torch.diag(self.sign * self.logs.exp())
        return self.p @ lo @ up

    def forward(self, x, reverse=False):
        w = self.weight()
        if reverse:
            return torch.nn.functional.conv2d(x, w.inverse()[:, :, None, None])
        return torch.nn.functional.conv2d(x, w[:, :, None, None]), self.logs.sum() * x.shape[2] * x.shape[3]


class _ZeroConv(torch.nn.Module):
    """Glow's zero-initialized 3x3 convolution with a learned log-scale (x3) on its output."""

    def __init__(self, cin, cout):
        super().__init__()
        self.conv = torch.nn.Conv2d(cin, cout, 3, padding=1)
        torch.nn.init.zeros_(self.conv.weight)
        torch.nn.init.zeros_(self.conv.bias)
        self.logs = torch.nn.Parameter(torch.zeros(1, cout, 1, 1))

    def forward(self, x):
        return self.conv(x) * (self.logs * 3).exp()


class _FlowStep(torch.nn.Module):
    """ActNorm, invertible 1x1 convolution, affine coupling (a 3x3-1x1-zero-3x3 network of `hidden` channels
    on one half giving the other half's shift and sigmoid(s + 2) scale)."""

    def __init__(self, c, hidden):
        super().__init__()
        nn = torch.nn
        self.norm, self.inv = _ActNorm(c), _InvConv(c)
        self.net = nn.Sequential(nn.Conv2d(c // 2, hidden, 3, padding=1), nn.ReLU(), nn.Conv2d(hidden, hidden, 1),
                                 nn.ReLU(), _ZeroConv(hidden, c))

    def forward(self, x, reverse=False):
        if reverse:
            xa, yb = x.chunk(2, 1)
            h = self.net(xa)
            x = torch.cat([xa, yb / torch.sigmoid(h[:, 1::2] + 2) - h[:, 0::2]], 1)
            return self.norm(self.inv(x, True), True)
        x, ld1 = self.norm(x)
        x, ld2 = self.inv(x)
        xa, xb = x.chunk(2, 1)
        h = self.net(xa)
        scale = torch.sigmoid(h[:, 1::2] + 2)
        return torch.cat([xa, (xb + h[:, 0::2]) * scale], 1), ld1 + ld2 + scale.log().flatten(1).sum(1)


def _squeeze(x):
    b, c, h, w = x.shape
    return x.view(b, c, h // 2, 2, w // 2, 2).permute(0, 1, 3, 5, 2, 4).reshape(b, c * 4, h // 2, w // 2)


def _unsqueeze(x):
    b, c, h, w = x.shape
    return x.view(b, c // 4, 2, 2, h, w).permute(0, 1, 4, 2, 5, 3).reshape(b, c // 4, h * 2, w * 2)


def _gauss_logp(x, mean, logs):
    return (-0.5 * (math.log(2 * math.pi) + 2 * logs + (x - mean) ** 2 * (-2 * logs).exp())).flatten(1).sum(1)


class _Glow(torch.nn.Module):
    """Glow (Kingma & Dhariwal 2018): `levels` levels of squeeze and `depth` flow steps, half the channels split
    off after each level but the last with a learned conditional prior (a zero-initialized convolution of the
    kept half), the top prior from a zero-initialized convolution of zeros."""

    def __init__(self, levels=3, depth=16, hidden=512):
        super().__init__()
        nn = torch.nn
        self.levels, self.flows, self.priors = levels, nn.ModuleList(), nn.ModuleList()
        c = 3
        for i in range(levels):
            c *= 4
            self.flows.append(nn.ModuleList(_FlowStep(c, hidden) for _ in range(depth)))
            self.priors.append(_ZeroConv(c // 2 if i < levels - 1 else c, c if i < levels - 1 else 2 * c))
            c = c // 2 if i < levels - 1 else c

    def forward(self, x):
        """x (b, 3, H, W) in [-0.5, 0.5]: log p(x) up to the dequantization constant, (b,)."""
        logp = 0
        for i in range(self.levels):
            x = _squeeze(x)
            for step in self.flows[i]:
                x, ld = step(x)
                logp = logp + ld
            if i < self.levels - 1:
                x, z = x.chunk(2, 1)
                mean, logs = self.priors[i](x).chunk(2, 1)
            else:
                z = x
                mean, logs = self.priors[i](torch.zeros_like(x)).chunk(2, 1)
            logp = logp + _gauss_logp(z, mean, logs)
        return logp

    def sample(self, b, hw, temp):
        c = 3 * 4 ** self.levels // 2 ** (self.levels - 1)
        s = hw // 2 ** self.levels
        zeros = torch.zeros(b, c, s, s, device=self.priors[0].logs.device)
        mean, logs = self.priors[-1](zeros).chunk(2, 1)
        x = mean + logs.exp() * temp * torch.randn_like(mean)
        for i in reversed(range(self.levels)):
            if i < self.levels - 1:
                mean, logs = self.priors[i](x).chunk(2, 1)
                x = torch.cat([x, mean + logs.exp() * temp * torch.randn_like(mean)], 1)
            for step in reversed(self.flows[i]):
                x = step(x, True)
            x = _unsqueeze(x)
        return x


@_workload("normalizing-flow image density training, Glow (Kingma & Dhariwal 2018) as in its CelebA-64 recipe, written by hand (random init, fp32): 3 levels of squeeze and 16 flow steps each (ActNorm initialized from the first batch, LU-decomposed invertible 1x1 convolution, affine coupling with a 512-channel 3x3-1x1-zero-3x3 network and sigmoid(s + 2) scales), half the channels split off after each level with a learned conditional prior; uint8 images made on the device at 32 or 64 px (drawn), dequantized by uniform noise, batches of 16-64 capped at 24 images of 64 px, bits-per-dimension loss; Adam (lr 1e-3 after 10 warmup steps), gradient clipping by norm 50, 52 steps, the loss read back every step; every 12 steps 16 samples at temperature 0.7 drawn through the inverse flow (the 1x1 convolutions' inverses)")
def glow_train(rng):
    model = _Glow(3, _smoke(16, 2), _smoke(512, 16)).cuda().train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    cap = _smoke(24 * 64 * 64, 8 * 16 * 16)
    # About 5.9k tensors a step (counted on CPU at 16 flow steps a level: about 120 a flow step with its
    # backward) and 1.2k a sampling: 52 steps make about 0.31M tensors, 0.62M events.
    for step in range(_smoke(52, 3)):
        opt.param_groups[0]["lr"] = 1e-3 * min(1.0, (step + 1) / 10)
        hw = rng.choice([32, 64]) if _smoke(1, 0) else 16
        b = max(1, min(rng.randint(16, 64), cap // (hw * hw)))
        img = torch.randint(0, 256, (b, 3, hw, hw), dtype=torch.uint8, device="cuda")
        x = (img.float() + torch.rand(b, 3, hw, hw, device="cuda")) / 256 - 0.5
        dims = 3 * hw * hw
        loss = (-(model(x) - dims * math.log(256)) / (dims * math.log(2))).mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 50.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        float(loss.detach())
        del img, x, loss
        if step % 12 == 11 or _smoke(0, step == 1):
            with torch.no_grad():
                out = model.sample(16, hw, 0.7)
                out.clamp(-0.5, 0.5).add(0.5).mul(255).to(torch.uint8).float().mean().item()
                del out
    torch.cuda.synchronize()


# ---------------------------------------------------------------- reversible ViT


class _RevBlock(torch.nn.Module):
    """A reversible ViT block (Mangalam et al. 2022): Y1 = X1 + F(X2) (attention), Y2 = X2 + G(Y1) (MLP)."""

    def __init__(self, d, heads):
        super().__init__()
        nn = torch.nn
        self.heads = heads
        self.n1, self.qkv, self.proj = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.n2, self.fc1, self.fc2 = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def F(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        return self.proj(a.transpose(1, 2).reshape(b, n, d))

    def G(self, x):
        return self.fc2(torch.nn.functional.gelu(self.fc1(self.n2(x))))


class _RevBackProp(torch.autograd.Function):
    """PySlowFast's RevBackProp: the blocks run without saving activations; the backward rebuilds each block's
    inputs from its outputs (X2 = Y2 - G(Y1), X1 = Y1 - F(X2)) while back-propagating through a local graph."""

    @staticmethod
    def forward(ctx, x, blocks):
        x1, x2 = x.chunk(2, -1)
        with torch.no_grad():
            for blk in blocks:
                x1 = x1 + blk.F(x2)
                x2 = x2 + blk.G(x1)
        ctx.blocks = blocks
        ctx.save_for_backward(x1.detach(), x2.detach())
        return torch.cat([x1, x2], -1)

    @staticmethod
    def backward(ctx, dy):
        y1, y2 = ctx.saved_tensors
        dy1, dy2 = dy.chunk(2, -1)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            for blk in reversed(ctx.blocks):
                with torch.enable_grad():
                    y1 = y1.detach().requires_grad_(True)
                    g = blk.G(y1)
                    g.backward(dy2.to(g.dtype))
                with torch.no_grad():
                    x2 = y2 - g
                    dy1 = dy1 + y1.grad
                    del g
                with torch.enable_grad():
                    x2 = x2.detach().requires_grad_(True)
                    fx = blk.F(x2)
                    fx.backward(dy1.to(fx.dtype))
                with torch.no_grad():
                    x1 = y1 - fx
                    dy2 = dy2 + x2.grad
                    del fx
                y1, y2 = x1.detach(), x2.detach()
        ctx.blocks = None
        return torch.cat([dy1, dy2], -1), None


@_workload("memory-efficient training with reversible layers, Rev-ViT-B (Mangalam et al. 2022) as PySlowFast trains it, written by hand (random init): patch-16 embedding duplicated into two residual streams of width 768, 12 reversible blocks (attention F, MLP G of 3072, 12 heads, SDPA) run without saving activations, the backward rebuilding every block's inputs from its outputs and back-propagating through each sublayer's local graph (a custom autograd.Function calling backward inside backward), the streams averaged, LayerNorm and a 1000-class head; bf16 autocast; images of 160-256 px (multiples of 32, learned 14x14 positions resized bicubically) made on the device, batches of 32-256 capped at 256 images of 224 px, label smoothing 0.1; AdamW (lr 1e-3 after 10 warmup steps, weight decay 0.05), gradient clipping 1.0, 180 steps, the loss read back every step")
def revvit_train(rng):
    nn, f = torch.nn, torch.nn.functional
    d, heads = _smoke(768, 64), _smoke(12, 4)
    m = nn.ModuleDict({
        "patch": nn.Conv2d(3, d, 16, 16), "pos": nn.ParameterList([nn.Parameter(torch.randn(1, d, 14, 14) * 0.02)]),
        "cls": nn.ParameterList([nn.Parameter(torch.zeros(1, 1, d))]),
        "blocks": nn.ModuleList(_RevBlock(d, heads) for _ in range(12)),
        "norm": nn.LayerNorm(2 * d), "head": nn.Linear(2 * d, 1000)}).cuda().train()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3, weight_decay=0.05)
    cap = _smoke(256 * 197, 4 * 17)
    # About 1.7k tensors a step (counted on CPU: the blocks' forward without saving, their rebuilding backward
    # and AdamW): 180 steps make about 0.3M tensors, 0.61M events.
    for step in range(_smoke(180, 3)):
        opt.param_groups[0]["lr"] = 1e-3 * min(1.0, (step + 1) / 10)
        hw = rng.randrange(160, 257, 32) if _smoke(1, 0) else 64
        n = (hw // 16) ** 2 + 1
        b = max(1, min(rng.randint(32, 256), cap // n))
        img = torch.randn(b, 3, hw, hw, device="cuda")
        labels = torch.randint(0, 1000, (b,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pos = f.interpolate(m["pos"][0], size=(hw // 16, hw // 16), mode="bicubic", align_corners=False)
            x = (m["patch"](img) + pos).flatten(2).transpose(1, 2)
            x = torch.cat([m["cls"][0].expand(b, -1, -1), x], 1).float()
            x = _RevBackProp.apply(torch.cat([x, x], -1), m["blocks"])
            loss = f.cross_entropy(m["head"](m["norm"](x[:, 0])), labels, label_smoothing=0.1)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        float(loss.detach())
        del img, labels, pos, x, loss
    torch.cuda.synchronize()


# ---------------------------------------------------------------- speaker diarization (ECAPA-TDNN + spectral)


class _SeRes2Block(torch.nn.Module):
    """ECAPA-TDNN's SE-Res2Net block (speechbrain's): 1x1 TDNN, a Res2Net of 8 scales (dilated convolutions),
    1x1 TDNN, squeeze-excitation (128), residual."""

    def __init__(self, c, k, dil, scale=8):
        super().__init__()
        nn = torch.nn

        def tdnn(cin, cout, kk=1, dd=1):
            return nn.Sequential(nn.Conv1d(cin, cout, kk, dilation=dd, padding=dd * (kk - 1) // 2), nn.ReLU(),
                                 nn.BatchNorm1d(cout))

        self.scale = scale
        self.t1, self.t2 = tdnn(c, c), tdnn(c, c)
        self.res2 = nn.ModuleList(tdnn(c // scale, c // scale, k, dil) for _ in range(scale - 1))
        self.se = nn.Sequential(nn.Conv1d(c, 128, 1), nn.ReLU(), nn.Conv1d(128, c, 1), nn.Sigmoid())

    def forward(self, x):
        h = self.t1(x).chunk(self.scale, 1)
        ys = [h[0]]
        for i, conv in enumerate(self.res2):
            ys.append(conv(h[i + 1] if i == 0 else h[i + 1] + ys[-1]))
        h = self.t2(torch.cat(ys, 1))
        return x + h * self.se(h.mean(2, keepdim=True))


class _Ecapa(torch.nn.Module):
    """ECAPA-TDNN (Desplanques et al. 2020, speechbrain's 1024-channel layout): a 5-wide TDNN, 3 SE-Res2Net
    blocks (kernel 3, dilations 2-3-4), multi-layer feature aggregation to 3072, attentive statistics pooling
    with global context, BatchNorm and a 192-wide embedding."""

    def __init__(self, c=1024, mels=80, emb=192):
        super().__init__()
        nn = torch.nn
        self.l1 = nn.Sequential(nn.Conv1d(mels, c, 5, padding=2), nn.ReLU(), nn.BatchNorm1d(c))
        self.blocks = nn.ModuleList(_SeRes2Block(c, 3, dil) for dil in (2, 3, 4))
        self.mfa = nn.Sequential(nn.Conv1d(3 * c, 3 * c, 1), nn.ReLU(), nn.BatchNorm1d(3 * c))
        self.att = nn.Sequential(nn.Conv1d(9 * c, 128, 1), nn.ReLU(), nn.BatchNorm1d(128), nn.Tanh(),
                                 nn.Conv1d(128, 3 * c, 1))
        self.bn, self.fc = nn.BatchNorm1d(6 * c), nn.Linear(6 * c, emb)

    def forward(self, x):
        x = self.l1(x)
        outs = []
        for blk in self.blocks:
            x = blk(x)
            outs.append(x)
        x = self.mfa(torch.cat(outs, 1))
        t = x.shape[2]
        mean, std = x.mean(2, keepdim=True), x.std(2, keepdim=True).clamp_min(1e-5)
        w = self.att(torch.cat([x, mean.expand(-1, -1, t), std.expand(-1, -1, t)], 1)).float().softmax(2)
        mu = (w * x).sum(2)
        sg = ((w * x.float() ** 2).sum(2) - mu ** 2).clamp_min(1e-5).sqrt()
        return self.fc(self.bn(torch.cat([mu, sg], 1)))


def _windows(frames, win, hop):
    """Start frames of the windows of `win` frames every `hop` over `frames` frames (at least one)."""
    return list(range(0, max(1, frames - win + 1), hop))


def _map_to_finest(starts, win, fine_starts, fine_win, hop):
    """NeMo's multiscale mapping: for each finest-scale segment, the index of the segment of this scale whose
    centre is nearest (segments every `hop` frames)."""
    centre = [s + fine_win / 2 for s in fine_starts]
    return [min(len(starts) - 1, max(0, round((c - win / 2) / hop))) for c in centre]


def _nme_sc(aff, p_fracs, speakers, init, iters=20):
    """NME-SC spectral clustering (Park et al. 2019, NeMo's): for each p the affinity binarized to its p largest
    entries a row and symmetrized, the p whose Laplacian has the lowest p / (largest eigengap) kept (chosen on
    the device), its `speakers` smallest eigenvectors row-normalized and clustered by k-means (Lloyd,
    `iters` iterations from the rows `init`): the labels."""
    n = aff.shape[0]
    cands, ratios = [], []
    for frac in p_fracs:
        p = max(2, min(n, int(n * frac)))
        bin_ = torch.zeros_like(aff).scatter_(1, aff.topk(p, 1).indices, 1.0)
        bin_ = (bin_ + bin_.t()) / 2
        lap = torch.diag(bin_.sum(1)) - bin_
        ev = torch.linalg.eigvalsh(lap)[: min(n, 9)]
        ratios.append(p / n / ((ev[1:] - ev[:-1]).max() + 1e-10))
        cands.append(lap)
    lap = torch.stack(cands)[torch.stack(ratios).argmin()]
    vec = torch.linalg.eigh(lap)[1][:, :speakers]
    x = vec / vec.norm(dim=1, keepdim=True).clamp_min(1e-10)
    cent = x[torch.tensor(init, device=x.device)]
    for _ in range(iters):
        lab = torch.cdist(x, cent).argmin(1)
        onehot = torch.nn.functional.one_hot(lab, speakers).float()
        cent = (onehot.t() @ x) / onehot.sum(0)[:, None].clamp_min(1)
    return lab


@_workload("speaker diarization serving by clustering, NeMo-ClusteringDiarizer-style (multiscale, NME-SC), written by hand: 16 kHz recordings of 1-8 minutes (log-uniform), their int16 PCM copied from one pinned host buffer (made once), 80-band log-mel filterbanks (torch.stft, 25 ms windows every 10 ms) on the device; segments at three scales (1.5/0.75, 1.0/0.5 and 0.5/0.25 s window/shift), mean-normalized, embedded by an ECAPA-TDNN (speechbrain's 1024-channel layout, 192-wide embeddings, random init, eval) in fp16 autocast under inference_mode 64 segments at a time; each scale's cosine affinity mapped onto the finest scale's segments and averaged (an N x N matrix, N up to 1900); NME-SC: for 4 values of p the affinity binarized to its p largest entries a row, the Laplacian's eigenvalues (eigvalsh), the p of lowest p / eigengap picked on the device, the eigenvectors (eigh) of its Laplacian for 2-8 speakers (drawn, standing in for the eigengap estimate), k-means of 20 Lloyd iterations; the labels read back per recording; 64 recordings one after another")
def diarize_serve(rng):
    f = torch.nn.functional
    model = _Ecapa(_smoke(1024, 64)).cuda().eval()
    rate = 16000
    longest = _smoke(8 * 60, 20) * rate
    host = torch.randint(-6000, 6000, (longest,), dtype=torch.int16).pin_memory()
    window = 0.5 - 0.5 * torch.cos(2 * math.pi * torch.arange(400, device="cuda") / 400)  # periodic Hann
    mel = torch.randn(257, 80, device="cuda").abs()  # a stand-in for the mel filterbank's matrix (its shape)
    scales = [(150, 75), (100, 50), (50, 25)]  # window and shift, in 10 ms frames
    chunk = 64
    # About 1.5k tensors a minute of audio (counted on CPU: about 170 a chunk of 64 segments, 437 segments a
    # minute; the clustering about 200 a recording): 64 recordings of 3.8 minutes on average make about 0.33M
    # tensors, 0.65M events.
    with torch.inference_mode():
        for _ in range(_smoke(64, 2)):
            n = _loguniform(rng, _smoke(60, 8), _smoke(8 * 60, 20)) * rate
            pcm = host[:n].to("cuda", non_blocking=True)
            spec = torch.stft(pcm.float() / 32768, 512, 160, 400, window, return_complex=True).abs().pow(2)
            fb = (spec.t() @ mel).clamp_min(1e-6).log()  # (frames, 80)
            frames = fb.shape[0]
            embs, starts = [], []
            for win, hop in scales:
                st = _windows(frames, win, hop)
                out = []
                for i in range(0, len(st), chunk):
                    idx = torch.tensor(st[i: i + chunk], device="cuda")[:, None] + torch.arange(win, device="cuda")
                    seg = fb[idx]  # (n, win, 80)
                    seg = (seg - seg.mean(1, keepdim=True)).transpose(1, 2)
                    with torch.autocast("cuda", dtype=torch.float16):
                        out.append(model(seg).float())
                    del idx, seg
                embs.append(f.normalize(torch.cat(out), dim=1))
                starts.append(st)
                del out
            fine_st, (fine_win, _) = starts[-1], scales[-1]
            aff = 0
            for (win, hop), st, e in zip(scales, starts, embs):
                idx = torch.tensor(_map_to_finest(st, win, fine_st, fine_win, hop), device="cuda")
                aff = aff + (e @ e.t())[idx][:, idx] / len(scales)
                del idx
            aff = (aff + 1) / 2
            k = min(rng.randint(2, 8), len(fine_st))
            init = rng.sample(range(len(fine_st)), k)
            labels = _nme_sc(aff, (0.05, 0.1, 0.15, 0.25), k, init)
            labels.tolist()
            del pcm, spec, fb, embs, aff, labels
    torch.cuda.synchronize()

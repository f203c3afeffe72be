"""The hundred-and-nineteenth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch117_b.py are): snow, ice and mountain environments, written in torch alone, first half. Avalanche danger
forecasting training (a transformer over snowpack profiles of drawn layer counts and the preceding days of station
weather, an ordinal danger level by cumulative logits, avalanche problem types and a pointer to the critical weak
layer), glacier and debris-cover segmentation fine-tuning (a U-Net with its first two encoder levels frozen, over
multispectral satellite tiles with elevation of drawn resolutions, a cross-entropy and a soft Dice loss under a
no-data mask), snowfall nowcasting training (a strided convolutional encoder, a convolutional GRU written out frame by
frame over drawn context lengths and lead times, a transposed-convolution decoder, a rate-weighted error) and a ski-jump
pose video service (a per-frame residual convnet with a deconvolution to keypoint heatmaps, soft-argmax keypoints, a
temporal convolution over the keypoint tracks for jump phases, knee angles and the ski V-angle per clip). Same
conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned host
buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths,
resolutions and batch sizes are fixed on the host, padding handled by masks or by torch.where / masked_fill, no
boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
skijump_pose_video_serve uploads its frames on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new119.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and
for the CPU smoke run (RECORD_SMOKE=1).
"""

import math

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, PreNormBlock, SideUploads, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- avalanche danger forecasting (transformer)


class _SnowpackNet(_nn.Module):
    """Snowpack layer tokens (measured features and a grain-type embedding, a layer position table) and station
    weather tokens (a stride-6 1-d convolution over hourly channels, a weather position table), a type embedding for
    each kind, a class token with aspect and elevation-band embeddings; pre-norm blocks under the layer mask; danger
    cumulative logits and problem types from the class token, a weak-layer logit per layer."""

    def __init__(self, n_feat, n_grain, n_wx, d, heads, layers, max_layers, max_wx, n_aspect, n_band, n_prob):
        super().__init__()
        self.layer_in, self.grain = _nn.Linear(n_feat, d), _nn.Embedding(n_grain, d)
        self.wx = _nn.Conv1d(n_wx, d, 6, 6)
        self.lpos, self.wpos, self.kind = _nn.Embedding(max_layers, d), _nn.Embedding(max_wx, d), _nn.Embedding(2, d)
        self.cls = _nn.Parameter(torch.zeros(1, 1, d))
        self.aspect, self.band = _nn.Embedding(n_aspect, d), _nn.Embedding(n_band, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.danger, self.problem = _nn.Linear(d, 4), _nn.Linear(d, n_prob)
        self.weak = mlp(d, d, 1, act=_nn.GELU)

    def forward(self, feat, grain, wx, aspect, band, keep):
        b, n_l, _ = feat.shape
        dev = feat.device
        t = self.layer_in(feat) + self.grain(grain) + self.lpos(torch.arange(n_l, device=dev))[None]
        t = t + self.kind.weight[0]
        w = self.wx(wx).transpose(1, 2)
        n_w = w.shape[1]
        w = w + self.wpos(torch.arange(n_w, device=dev))[None] + self.kind.weight[1]
        c = self.cls.expand(b, -1, -1) + (self.aspect(aspect) + self.band(band))[:, None]
        x = torch.cat([c, w.to(t.dtype), t], 1)
        mask = torch.cat([torch.ones(b, 1 + n_w, dtype=torch.bool, device=dev), keep], 1)[:, None, None, :]
        for blk in self.blocks:
            x = blk(x, mask=mask)
        x = self.norm(x)
        z = x[:, 0]
        weak = self.weak(x[:, 1 + n_w:])[..., 0].float().masked_fill(~keep, -1e4)
        return self.danger(z).float(), self.problem(z).float(), weak


@_workload("avalanche danger forecasting training (random init, a transformer over snowpack profiles and station weather): 64-256 snowpack profiles a step (drawn), each of 4-40 layers (drawn per profile, padded to the step's longest rounded up to a multiple of 8, a 40-row layer position table) with 10 measured features (depth, thickness, density, grain size, hand hardness, temperature, ...) and a grain type (of 9) and 3-7 days (drawn per step) of hourly station weather in 14 channels (air temperature, wind speed and direction, new snow, radiation, ...) drawn on the device; a stride-6 convolution to 12-28 weather tokens (a 28-row table), a class token with aspect (of 8) and elevation-band (of 3) embeddings, 6 pre-norm blocks (width 256, 8 heads) under the layer mask; the danger level (1-5) by 4 cumulative logits and BCE, 6 avalanche problem types (new snow, wind slab, persistent slab, deep persistent slab, wet loose, gliding) by multi-label BCE and the critical weak layer (drawn within each profile) by a cross-entropy over its own layers (padded layers masked_fill'ed); AdamW with a warm-up, clipping, bf16 autocast, 380 steps; the losses read back every 20 steps and every 95 steps a no-grad pass over 256 profiles of 40 layers and 7 days with the danger accuracy, the within-one accuracy and the weak-layer hit rate read back")
def avalanche_danger_snowpack_train(rng):
    n_feat, n_grain, n_wx, n_aspect, n_band, n_prob = 10, 9, 14, 8, 3, 6
    d, heads, layers = _smoke(256, 32), _smoke(8, 2), _smoke(6, 1)
    max_layers, max_days = _smoke(40, 8), _smoke(7, 2)
    max_wx = max_days * 24 // 6
    model = _SnowpackNet(n_feat, n_grain, n_wx, d, heads, layers, max_layers, max_wx, n_aspect, n_band, n_prob).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.05)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 25))
    cut = torch.arange(4, device="cuda")

    def profiles(lengths, n_pad, days):
        b = len(lengths)
        keep = keep_mask(lengths, n_pad)
        feat = torch.randn(b, n_pad, n_feat, device="cuda") * keep[..., None]
        grain = torch.randint(0, n_grain, (b, n_pad), device="cuda")
        wx = torch.randn(b, n_wx, days * 24, device="cuda")
        aspect = torch.randint(0, n_aspect, (b,), device="cuda")
        band = torch.randint(0, n_band, (b,), device="cuda")
        level = torch.randint(0, 5, (b,), device="cuda")
        prob = (torch.rand(b, n_prob, device="cuda") < 0.25).float()
        n_t = torch.tensor(lengths, device="cuda", dtype=torch.float32)
        weak = (torch.rand(b, device="cuda") * n_t).long()
        return feat, grain, wx, aspect, band, keep, level, prob, weak

    steps = _smoke(380, 3)
    for step in range(steps):
        model.train()
        b, days = rng.randint(_smoke(64, 2), _smoke(256, 4)), rng.randint(_smoke(3, 1), max_days)
        lengths = [rng.randint(4, max_layers) for _ in range(b)]
        n_pad = min(max_layers, -(-max(lengths) // 8) * 8)
        feat, grain, wx, aspect, band, keep, level, prob, weak = profiles(lengths, n_pad, days)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            cum, p_logit, w_logit = model(feat, grain, wx, aspect, band, keep)
        l_dng = _F.binary_cross_entropy_with_logits(cum, (level[:, None] > cut).float())
        l_prb = _F.binary_cross_entropy_with_logits(p_logit, prob)
        l_weak = _F.cross_entropy(w_logit, weak)
        loss = l_dng + l_prb + 0.5 * l_weak
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            torch.stack([l_dng.detach(), l_prb.detach(), l_weak.detach()]).tolist()
        del feat, grain, wx, aspect, band, keep, level, prob, weak, cum, p_logit, w_logit, l_dng, l_prb, l_weak, loss
        if (step + 1) % _smoke(95, 2) == 0:
            model.eval()
            with torch.no_grad():
                nb = _smoke(256, 3)
                feat, grain, wx, aspect, band, keep, level, prob, weak = profiles([max_layers] * nb, max_layers,
                                                                                  max_days)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    cum, p_logit, w_logit = model(feat, grain, wx, aspect, band, keep)
                pred = (torch.sigmoid(cum) > 0.5).sum(-1)
                out = torch.stack([(pred == level).float().mean(), ((pred - level).abs() <= 1).float().mean(),
                                   (w_logit.argmax(-1) == weak).float().mean()])
            out.tolist()
            del feat, grain, wx, aspect, band, keep, level, prob, weak, cum, p_logit, w_logit, pred, out


# ---------------------------------------------------------------- glacier segmentation fine-tuning (U-Net)


def _double_conv(cin, cout):
    return _nn.Sequential(_nn.Conv2d(cin, cout, 3, 1, 1, bias=False), _nn.BatchNorm2d(cout), _nn.ReLU(),
                          _nn.Conv2d(cout, cout, 3, 1, 1, bias=False), _nn.BatchNorm2d(cout), _nn.ReLU())


class _GlacierUNet(_nn.Module):
    """Double 3x3 convolutions a level, max-pooling down, 2x2 transposed convolutions up with skip concatenation,
    a 1x1 class head at full resolution."""

    def __init__(self, bands, widths, n_cls):
        super().__init__()
        cins = [bands] + widths[:-1]
        self.enc = _nn.ModuleList(_double_conv(a, w) for a, w in zip(cins, widths))
        self.up = _nn.ModuleList(_nn.ConvTranspose2d(widths[i + 1], widths[i], 2, 2)
                                 for i in reversed(range(len(widths) - 1)))
        self.dec = _nn.ModuleList(_double_conv(2 * widths[i], widths[i]) for i in reversed(range(len(widths) - 1)))
        self.head = _nn.Conv2d(widths[0], n_cls, 1)

    def forward(self, x):
        skips = []
        for i, enc in enumerate(self.enc):
            x = enc(x if i == 0 else _F.max_pool2d(x, 2))
            skips.append(x)
        x = skips.pop()
        for up, dec in zip(self.up, self.dec):
            x = dec(torch.cat([up(x), skips.pop()], 1))
        return self.head(x).float()


@_workload("glacier and debris-cover segmentation fine-tuning (random init standing in for a pretrained U-Net): satellite tiles of 128-384 px (drawn per step, a multiple of 32) in 9 channels (7 multispectral bands, elevation and slope), 4-24 tiles a step (drawn, at most 12 x 256^2 pixels), drawn on the device in channels-last with class maps drawn at 1/16 resolution and upsampled (nearest) and a no-data mask (about 5 % of pixels); a 5-level U-Net (double 3x3 convolutions of 32/64/128/256/384 channels with batch norm, max-pool down, 2x2 transposed convolutions up with skips) whose first two encoder levels are frozen (eval-mode batch norm, no gradients); 6 classes (clean ice, debris-covered ice, snow, rock, water, cloud) by a masked cross-entropy plus a masked soft Dice loss; AdamW on a cosine schedule, bf16 autocast, 800 steps; the losses read back every 20 steps and every 160 steps a no-grad pass over 8 tiles of 384 px with the 6 per-class IoUs read back")
def glacier_debris_unet_finetune(rng):
    bands, n_cls = 9, 6
    widths = _smoke([32, 64, 128, 256, 384], [8, 16, 16, 16, 32])
    model = _GlacierUNet(bands, widths, n_cls).cuda().to(memory_format=torch.channels_last)
    frozen = [model.enc[0], model.enc[1]]
    for m in frozen:
        m.requires_grad_(False)
    params = [p for p in model.parameters() if p.requires_grad]
    steps = _smoke(800, 3)
    opt = torch.optim.AdamW(params, lr=5e-4, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    lo, hi, budget = _smoke(128, 32), _smoke(384, 64), _smoke(12 * 256 * 256, 3 * 64 * 64)

    def tiles(b, r):
        x = torch.randn(b, bands, r, r, device="cuda").contiguous(memory_format=torch.channels_last)
        coarse = torch.randint(0, n_cls, (b, 1, r // 16, r // 16), device="cuda").float()
        y = _F.interpolate(coarse, scale_factor=16, mode="nearest")[:, 0].long()
        valid = (torch.rand(b, r, r, device="cuda") > 0.05).float()
        return x, y, valid

    def losses(logit, y, valid):
        ce = (_F.cross_entropy(logit, y, reduction="none") * valid).sum() / valid.sum().clamp_min(1.0)
        p = logit.softmax(1) * valid[:, None]
        oh = _F.one_hot(y, n_cls).permute(0, 3, 1, 2).float() * valid[:, None]
        inter, denom = (p * oh).sum((0, 2, 3)), (p + oh).sum((0, 2, 3))
        dice = 1 - ((2 * inter + 1) / (denom + 1)).mean()
        return ce, dice

    for step in range(steps):
        model.train()
        for m in frozen:
            m.eval()
        r = rng.randint(lo // 32, hi // 32) * 32
        b = min(rng.randint(_smoke(4, 1), _smoke(24, 3)), max(1, budget // (r * r)))
        x, y, valid = tiles(b, r)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logit = model(x)
        ce, dice = losses(logit, y, valid)
        loss = ce + dice
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        if step % 20 == 0:
            torch.stack([ce.detach(), dice.detach()]).tolist()
        del x, y, valid, logit, ce, dice, loss
        if (step + 1) % _smoke(160, 2) == 0:
            model.eval()
            with torch.no_grad():
                x, y, valid = tiles(_smoke(8, 2), hi)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logit = model(x)
                pred = _F.one_hot(logit.argmax(1), n_cls).float() * valid[..., None]
                oh = _F.one_hot(y, n_cls).float() * valid[..., None]
                inter, union = (pred * oh).sum((0, 1, 2)), ((pred + oh) > 0).float().sum((0, 1, 2))
                iou = inter / union.clamp_min(1.0)
            iou.tolist()
            del x, y, valid, logit, pred, oh, inter, union, iou


# ---------------------------------------------------------------- snowfall nowcasting (convolutional GRU)


class _ConvGruCell(_nn.Module):
    """A convolutional GRU cell: the input's gate terms come in precomputed, the hidden state's by a 3x3
    convolution; reset, update and candidate as in a GRU."""

    def __init__(self, ch):
        super().__init__()
        self.h2h = _nn.Conv2d(ch, 3 * ch, 3, 1, 1, bias=False)

    def forward(self, xg, h):
        xr, xz, xn = xg.chunk(3, 1)
        hr, hz, hn = self.h2h(h).chunk(3, 1)
        r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
        n = torch.tanh(xn + r * hn)
        return (1 - z) * n + z * h


class _SnowNowcast(_nn.Module):
    """Frames and the elevation map through two stride-2 convolutions to 1/4, a ConvGRU over the context frames
    (input gates for all frames at once) and on over the lead times (gates from the hidden state and a lead-time
    embedding), a transposed-convolution decoder over all lead times at once."""

    def __init__(self, c1, hid, max_lead):
        super().__init__()
        self.hid = hid
        self.enc = _nn.Sequential(_nn.Conv2d(2, c1, 3, 2, 1), _nn.GELU(), _nn.Conv2d(c1, hid, 3, 2, 1), _nn.GELU())
        self.x2h = _nn.Conv2d(hid, 3 * hid, 3, 1, 1)
        self.f2h = _nn.Conv2d(hid, 3 * hid, 1)
        self.lead = _nn.Embedding(max_lead, 3 * hid)
        self.cell = _ConvGruCell(hid)
        self.dec = _nn.Sequential(_nn.ConvTranspose2d(hid, c1, 4, 2, 1), _nn.GELU(),
                                  _nn.ConvTranspose2d(c1, 1, 4, 2, 1))

    def forward(self, frames, dem, n_lead):
        b, t, r, _ = frames.shape
        x = torch.stack([frames, dem[:, None].expand(b, t, r, r)], 2).flatten(0, 1)
        g = self.x2h(self.enc(x))
        g = g.view(b, t, *g.shape[1:])
        h = g.new_zeros(b, self.hid, r // 4, r // 4)
        for s in range(t):
            h = self.cell(g[:, s], h)
        lead = self.lead(torch.arange(n_lead, device=frames.device))
        outs = []
        for s in range(n_lead):
            h = self.cell(self.f2h(h) + lead[s][None, :, None, None], h)
            outs.append(h)
        y = self.dec(torch.stack(outs, 1).flatten(0, 1))
        return y.float().view(b, n_lead, r, r)


@_workload("snowfall nowcasting training (random init, a convolutional GRU written out frame by frame): 4-16 sequences a step (drawn, at most 12 x 128^2 pixels a frame), radar snowfall-rate fields of 64-160 px (drawn per step, a multiple of 32) with 4-10 context frames and 3-8 lead times (each drawn per step, an 8-row lead-time table) and a static elevation map, drawn on the device (rates cubed uniform); two stride-2 convolutions (32 and 96 channels) to 1/4 per frame, a ConvGRU cell (3x3 hidden convolution, 96 channels) over the context frames then on over the lead times with gates from a 1x1 convolution of the state and a lead-time embedding, a 2-layer transposed-convolution decoder over all lead times at once; a rate-weighted (1 + 4 x heavy snowfall) mean squared plus absolute error; Adam, clipping, bf16 autocast, 580 steps; the loss read back every 20 steps and every 116 steps a no-grad forecast of 12 sequences of 160 px with 10 context frames and 8 lead times with the critical success index at 0.3 and the mean absolute error read back")
def snowfall_convgru_nowcast_train(rng):
    c1, hid, max_lead = _smoke(32, 8), _smoke(96, 8), _smoke(8, 3)
    max_ctx = _smoke(10, 3)
    model = _SnowNowcast(c1, hid, max_lead).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    lo, hi, budget = _smoke(64, 32), _smoke(160, 64), _smoke(12 * 128 * 128, 3 * 64 * 64)

    def sequences(b, r, n_ctx, n_lead):
        frames = torch.rand(b, n_ctx + n_lead, r, r, device="cuda").pow(3)
        dem = torch.rand(b, r, r, device="cuda")
        return frames[:, :n_ctx], frames[:, n_ctx:], dem

    steps = _smoke(580, 3)
    for step in range(steps):
        model.train()
        r = rng.randint(lo // 32, hi // 32) * 32
        b = min(rng.randint(_smoke(4, 1), _smoke(16, 3)), max(1, budget // (r * r)))
        n_ctx, n_lead = rng.randint(_smoke(4, 2), max_ctx), rng.randint(_smoke(3, 1), max_lead)
        ctx, fut, dem = sequences(b, r, n_ctx, n_lead)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(ctx, dem, n_lead)
        w = 1 + 4 * (fut > 0.3).float()
        err = pred - fut
        loss = (w * (err.pow(2) + err.abs())).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.detach().item()
        del ctx, fut, dem, pred, w, err, loss
        if (step + 1) % _smoke(116, 2) == 0:
            model.eval()
            with torch.no_grad():
                ctx, fut, dem = sequences(_smoke(12, 2), hi, max_ctx, max_lead)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pred = model(ctx, dem, max_lead)
                hp, ho = pred > 0.3, fut > 0.3
                hits = (hp & ho).float().sum()
                csi = hits / ((hp | ho).float().sum()).clamp_min(1.0)
                out = torch.stack([csi, (pred - fut).abs().mean()])
            out.tolist()
            del ctx, fut, dem, pred, hp, ho, hits, csi, out


# ---------------------------------------------------------------- ski-jump pose video service


class _JumpPose(_nn.Module):
    """A per-frame residual convnet to 1/8 (stride-2 stem, two stride-2 residual blocks, one more), a stride-2
    deconvolution to 1/4 and a 1x1 heatmap head; soft-argmax keypoints; a temporal convolution over each clip's
    keypoint tracks (padded frames zeroed) for jump-phase logits per frame."""

    def __init__(self, widths, n_kp, n_phase):
        super().__init__()
        self.body = _nn.Sequential(
            _nn.Conv2d(3, widths[0], 3, 2, 1, bias=False), _nn.BatchNorm2d(widths[0]), _nn.ReLU(),
            BasicResBlock(widths[0], widths[1], 2), BasicResBlock(widths[1], widths[2], 2),
            BasicResBlock(widths[2], widths[2], 1))
        self.up = _nn.Sequential(_nn.ConvTranspose2d(widths[2], widths[1], 4, 2, 1, bias=False),
                                 _nn.BatchNorm2d(widths[1]), _nn.ReLU(), _nn.Conv2d(widths[1], n_kp, 1))
        self.temporal = _nn.Sequential(_nn.Conv1d(3 * n_kp, 128, 5, 1, 2), _nn.GELU(), _nn.Conv1d(128, 128, 5, 1, 2),
                                       _nn.GELU(), _nn.Conv1d(128, n_phase, 3, 1, 1))

    def forward(self, frames, n_clip, n_pad, keep):
        heat = self.up(self.body(frames)).float()
        n, k, h, w = heat.shape
        p = heat.flatten(2).softmax(-1).view(n, k, h, w)
        ys = torch.linspace(0, 1, h, device=frames.device)
        xs = torch.linspace(0, 1, w, device=frames.device)
        kx, ky = (p.sum(2) * xs).sum(-1), (p.sum(3) * ys).sum(-1)
        conf = heat.flatten(2).amax(-1)
        kp = torch.stack([kx, ky], -1).view(n_clip, n_pad, k, 2)
        feat = torch.cat([kp.flatten(2), conf.view(n_clip, n_pad, k)], -1)
        feat = torch.where(keep[..., None], feat, 0.0)
        phase = self.temporal(feat.transpose(1, 2).to(frames.dtype)).float().transpose(1, 2)
        return kp, phase


def _angle(a, b, c):
    """The angle at b of the triangle a-b-c (..., 2) in degrees."""
    u, v = a - b, c - b
    cos = (u * v).sum(-1) / (u.norm(dim=-1) * v.norm(dim=-1)).clamp_min(1e-6)
    return torch.rad2deg(torch.acos(cos.clamp(-1.0, 1.0)))


@_workload("ski-jump pose video serving (random init, a heatmap convnet and a temporal convolution): 2,250-2,350 requests (drawn) of 1-3 jump clips (drawn) of 8-32 frames each (drawn per clip, padded to the request's longest rounded up to a multiple of 4) at 192 or 256 px (drawn per request), uint8 RGB frames uploaded on a side stream from two reused pinned host buffers (filled once, sized for 3 x 32 frames of 3 x 256^2) one request ahead (one span, through SideUploads.ahead), normalised on the device in channels-last; a per-frame residual convnet (3x3 stride-2 stem of 32, stride-2 residual blocks of 64 and 128, one more of 128) and a stride-2 deconvolution to 21 keypoint heatmaps at 1/4 (17 body joints and both skis' tips and tails) under bf16 autocast, soft-argmax keypoints and peak confidences, a 3-layer temporal convolution (width 128) over each clip's keypoint tracks (padded frames zeroed by torch.where) for 5 jump phases (in-run, take-off, flight, landing, out-run); per clip the knee and hip angles by acos and the ski V-angle by atan2, averaged over the flight-phase probability of its own frames, and the take-off frame by argmax; each request's results read back once")
def skijump_pose_video_serve(rng):
    widths, n_kp, n_phase = _smoke([32, 64, 128], [8, 16, 16]), 21, 5
    max_f, max_c = _smoke(32, 4), _smoke(3, 2)
    res_opts = _smoke([192, 256], [32, 64])
    model = _JumpPose(widths, n_kp, n_phase).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_c * max_f * 3 * max(res_opts) ** 2,), dtype=torch.uint8, generator=gen)
            .pin_memory() for _ in range(2)]
    up = SideUploads(host)
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1) * 255.0
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1) * 255.0

    nreq = rng.randint(_smoke(2250, 3), _smoke(2350, 4))
    plan = []
    for _ in range(nreq):
        c = rng.randint(1, max_c)
        lengths = [rng.randint(_smoke(8, 2), max_f) for _ in range(c)]
        plan.append((lengths, min(max_f, -(-max(lengths) // 4) * 4), rng.choice(res_opts)))

    for (lengths, n_pad, r), raw in up.ahead(plan, lambda p: (len(p[0]) * p[1] * 3 * p[2] * p[2],)):
        with torch.no_grad():
            c = len(lengths)
            keep = keep_mask(lengths, n_pad)
            x = ((raw.view(c * n_pad, 3, r, r).float() - mean) / std).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                kp, phase = model(x, c, n_pad, keep)
            knee = _angle(kp[:, :, 11], kp[:, :, 13], kp[:, :, 15])
            hip = _angle(kp[:, :, 5], kp[:, :, 11], kp[:, :, 13])
            left, right = kp[:, :, 18] - kp[:, :, 17], kp[:, :, 20] - kp[:, :, 19]
            vang = torch.rad2deg(torch.atan2(left[..., 1], left[..., 0]) - torch.atan2(right[..., 1], right[..., 0]))
            flight = torch.where(keep, phase.softmax(-1)[..., 2], 0.0)
            wsum = flight.sum(1).clamp_min(1e-6)
            stats = torch.stack([(knee * flight).sum(1), (hip * flight).sum(1), (vang.abs() * flight).sum(1)], -1)
            takeoff = phase[..., 1].masked_fill(~keep, -1e4).argmax(1).float()
            out = torch.cat([(stats / wsum[:, None]).flatten(), takeoff])
        out.tolist()
        del raw, keep, x, kp, phase, knee, hip, left, right, vang, flight, wsum, stats, takeoff, out

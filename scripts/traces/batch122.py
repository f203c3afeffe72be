"""The hundred-and-twenty-second batch of held-out workloads for record.py, kept in a file of their own (as batch16.py
to batch121_b.py are): beekeeping, apiculture and pollination, written in torch alone, first half. Queen-state
fine-tuning on hive acoustics (a 2-d convolution subsampling front end over mel spectrograms of drawn durations and a
transformer, the front end, the position table and the lower blocks frozen, the queen state, piping frames and colony
strength), a varroa-mite sticky-board counting service (a U-Net over board photos of drawn resolutions, mite, debris
and background masks, mites counted by max-pooled peaks), forager flight-track training (a GRU cell written out frame
by frame over entrance-camera tracks of drawn lengths, the next displacement by a Gaussian likelihood and the track's
outcome: leaving, returning with or without pollen, orientation flight) and colony weight forecasting training (an
N-BEATS network of trend, seasonality and generic stacks over hive-scale histories of drawn lengths resampled to a
fixed lookback, the next 14 days' weight change and the season's honey yield).
Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths,
resolutions and batch sizes are fixed on the host, padding handled by masks or by torch.where / masked_fill, no
boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
varroa_board_count_serve uploads its photos on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new122.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and
for the CPU smoke run (RECORD_SMOKE=1).
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- queen-state fine-tuning on hive acoustics


class _HiveAudioNet(_nn.Module):
    """Mel spectrograms through two stride-2 3x3 convolutions (1/4 in time and frequency), the frequency rows
    flattened into a linear projection, a position table over subsampled frames, pre-norm blocks under the frame
    mask; the queen state and colony strength from the masked mean, a piping/tooting logit per subsampled frame."""

    def __init__(self, n_mel, ch, d, heads, layers, max_tok, n_state):
        super().__init__()
        self.sub = _nn.Sequential(_nn.Conv2d(1, ch, 3, 2, 1), _nn.GELU(), _nn.Conv2d(ch, ch, 3, 2, 1), _nn.GELU())
        self.proj = _nn.Linear(ch * (n_mel // 4), d)
        self.pos = _nn.Embedding(max_tok, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.state = mlp(d, d, n_state + 1, act=_nn.GELU)
        self.pipe = _nn.Linear(d, 1)

    def forward(self, mel, keep):
        h = self.sub(mel[:, None])
        b, c, f, t = h.shape
        x = self.proj(h.permute(0, 3, 1, 2).reshape(b, t, c * f))
        x = x + self.pos(torch.arange(t, device=mel.device))[None]
        mask = keep[:, None, None, :]
        for blk in self.blocks:
            x = blk(x, mask=mask)
        x = self.norm(x)
        kf = keep[..., None].to(x.dtype)
        pooled = (x * kf).sum(1) / kf.sum(1).clamp_min(1.0)
        return self.state(pooled).float(), self.pipe(x)[..., 0].float()


@_workload("hive-acoustics queen-state fine-tuning (random init standing in for a pretrained audio transformer): 24-96 hive recordings a step (drawn) of 4-20 s each (drawn per clip at 32 mel frames a second, 128-640 frames, padded to the step's longest rounded up to a multiple of 32) of 64 mel bands drawn on the device with padded frames zeroed; two stride-2 3x3 convolutions (64 channels, 1/4 in time and frequency), a linear projection of the 16 frequency rows to width 256, a 160-row position table over subsampled frames, 6 pre-norm blocks (8 heads) under the frame mask, of which the convolutions, the projection, the position table and the lower 3 blocks are frozen; the queen state (queenright, queenless, virgin queen, pre-swarm, laying workers) by cross-entropy and the colony strength (frames of bees) by MSE from the masked mean, a piping/tooting logit per subsampled frame by BCE (about 5 % positives) masked to real frames; AdamW on the unfrozen parameters with a warm-up, clipping, bf16 autocast, 580 steps; the losses read back every 20 steps and every 145 steps a no-grad pass over 64 clips of 20 s with the state accuracy and the piping-frame recall numerator and denominator read back")
def hive_queen_state_finetune(rng):
    n_mel, n_state = _smoke(64, 16), 5
    ch, d, heads, layers = _smoke(64, 4), _smoke(256, 32), _smoke(8, 2), _smoke(6, 2)
    fps, max_s = 32, _smoke(20, 2)
    max_t = fps * max_s
    model = _HiveAudioNet(n_mel, ch, d, heads, layers, max_t // 4, n_state).cuda()
    frozen = [model.sub, model.proj, model.pos] + list(model.blocks[:layers // 2])
    for m in frozen:
        m.requires_grad_(False)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=2e-4, weight_decay=0.05)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 25))

    def clips(lengths, t):
        b = len(lengths)
        keep_f = keep_mask(lengths, t)
        mel = torch.randn(b, n_mel, t, device="cuda") * keep_f[:, None]
        keep = keep_mask([-(-n // 4) for n in lengths], t // 4)
        state = torch.randint(0, n_state, (b,), device="cuda")
        strength = torch.rand(b, device="cuda") * 20.0
        pipe = (torch.rand(b, t // 4, device="cuda") < 0.05).float()
        return mel, keep, state, strength, pipe

    steps = _smoke(580, 3)
    for step in range(steps):
        model.train()
        for m in frozen:
            m.eval()
        b = rng.randint(_smoke(24, 2), _smoke(96, 4))
        lengths = [rng.randint(_smoke(4, 1), max_s) * fps for _ in range(b)]
        t = min(max_t, -(-max(lengths) // 32) * 32)
        mel, keep, state, strength, pipe = clips(lengths, t)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out, pipe_logit = model(mel, keep)
        l_state = _F.cross_entropy(out[:, :n_state], state)
        l_str = _F.mse_loss(out[:, n_state] * 5.0 + 10.0, strength)
        kf = keep.float()
        l_pipe = (_F.binary_cross_entropy_with_logits(pipe_logit, pipe, reduction="none") * kf).sum() / kf.sum()
        loss = l_state + 0.01 * l_str + l_pipe
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            torch.stack([l_state.detach(), l_str.detach(), l_pipe.detach()]).tolist()
        del mel, keep, state, strength, pipe, out, pipe_logit, l_state, l_str, kf, l_pipe, loss
        if (step + 1) % _smoke(145, 2) == 0:
            model.eval()
            with torch.no_grad():
                nb = _smoke(64, 3)
                mel, keep, state, strength, pipe = clips([max_t] * nb, max_t)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    out, pipe_logit = model(mel, keep)
                hit = (pipe_logit > 0).float() * pipe
                res = torch.stack([(out[:, :n_state].argmax(-1) == state).float().mean(), hit.sum(), pipe.sum()])
            res.tolist()
            del mel, keep, state, strength, pipe, out, pipe_logit, hit, res


# ---------------------------------------------------------------- varroa sticky-board counting service (U-Net)


def _double_conv(cin, cout):
    return _nn.Sequential(_nn.Conv2d(cin, cout, 3, 1, 1, bias=False), _nn.BatchNorm2d(cout), _nn.ReLU(),
                          _nn.Conv2d(cout, cout, 3, 1, 1, bias=False), _nn.BatchNorm2d(cout), _nn.ReLU())


class _BoardUnet(_nn.Module):
    """A U-Net: double 3x3 convolutions with batch norm at four widths, max-pool down, bilinear upsampling with
    concatenated skips; logits for background, mite and debris at full resolution."""

    def __init__(self, widths, n_cls):
        super().__init__()
        self.down = _nn.ModuleList()
        cin = 3
        for w in widths:
            self.down.append(_double_conv(cin, w))
            cin = w
        self.up = _nn.ModuleList(_double_conv(widths[i + 1] + widths[i], widths[i])
                                 for i in reversed(range(len(widths) - 1)))
        self.head = _nn.Conv2d(widths[0], n_cls, 1)

    def forward(self, x):
        skips = []
        for i, blk in enumerate(self.down):
            x = blk(x if i == 0 else _F.max_pool2d(x, 2))
            skips.append(x)
        for blk, s in zip(self.up, reversed(skips[:-1])):
            x = blk(torch.cat([_F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=False), s], 1))
        return self.head(x).float()


@_workload("varroa-mite sticky-board counting serving (random init, a U-Net): 2,450-2,550 requests (drawn) of 1-4 bottom-board photos (drawn) of 256 x 384, 384 x 512 or 512 x 512 px (drawn per request), uint8 RGB photos uploaded on a side stream from two reused pinned host buffers (filled once, sized for 4 x 3 x 512^2) one request ahead (one span, through SideUploads.ahead), normalised on the device in channels-last; a U-Net (double 3x3 convolutions with batch norm at 24/48/96/160 channels, max-pool down, bilinear upsampling with concatenated skips) under bf16 autocast to background, mite and debris logits at full resolution; mites as 7x7 max-pooled peaks of the mite probability above 0.5, counted per photo, the 32 strongest peaks' coordinates by top-k, the debris cover fraction and a mites-per-day estimate for a drawn 1-7 day board exposure; each request's counts, cover, estimates and the top-32 peak scores and coordinates read back once")
def varroa_board_count_serve(rng):
    widths, n_cls, top = _smoke([24, 48, 96, 160], [4, 8]), 3, _smoke(32, 4)
    max_n, res_opts = _smoke(4, 2), _smoke([(256, 384), (384, 512), (512, 512)], [(32, 48), (48, 64)])
    model = _BoardUnet(widths, n_cls).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    big = max(h * w for h, w in res_opts)
    host = [torch.randint(0, 256, (max_n * 3 * big,), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1) * 255.0
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1) * 255.0

    nreq = rng.randint(_smoke(2450, 3), _smoke(2550, 4))
    plan = [(rng.randint(1, max_n), rng.choice(res_opts), rng.randint(1, 7)) for _ in range(nreq)]

    for (n, (hh, ww), days), raw in up.ahead(plan, lambda p: (p[0] * 3 * p[1][0] * p[1][1],)):
        with torch.no_grad():
            x = ((raw.view(n, 3, hh, ww).float() - mean) / std).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logit = model(x)
            prob = logit.softmax(1)
            mite = prob[:, 1]
            peak = torch.where((mite == _F.max_pool2d(mite[:, None], 7, 1, 3)[:, 0]) & (mite > 0.5), mite, 0.0)
            count = (peak > 0).float().sum((1, 2))
            best, idx = peak.flatten(1).topk(top, -1)
            yx = torch.stack([idx // ww, idx % ww], -1).float()
            debris = (logit.argmax(1) == 2).float().mean((1, 2))
            res = torch.cat([count, debris, count / days, best.flatten(), yx.flatten()])
        res.tolist()
        del raw, x, logit, prob, mite, peak, count, best, idx, yx, debris, res


# ---------------------------------------------------------------- forager flight-track training (GRU written out)


class _TrackGru(_nn.Module):
    """Per-frame detections through an MLP into a GRU cell written out with linear gates; per frame the mean and
    log-variance of the next displacement; the track's outcome from the last real hidden state and the masked
    mean of the hidden states."""

    def __init__(self, n_in, d, n_out):
        super().__init__()
        self.enc = mlp(n_in, d, d, act=_nn.GELU)
        self.x2h, self.h2h = _nn.Linear(d, 3 * d), _nn.Linear(d, 3 * d)
        self.motion = mlp(d, d, 4, act=_nn.GELU)
        self.cls = mlp(2 * d, d, n_out, act=_nn.GELU)
        self.d = d

    def forward(self, det, keep):
        b, t, _ = det.shape
        xs = self.x2h(self.enc(det))
        h = det.new_zeros(b, self.d)
        hs = []
        for i in range(t):
            xr, xz, xn = xs[:, i].chunk(3, -1)
            hr, hz, hn = self.h2h(h).chunk(3, -1)
            r, u = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
            hnew = (1 - u) * torch.tanh(xn + r * hn) + u * h
            h = torch.where(keep[:, i, None], hnew.to(h.dtype), h)
            hs.append(h)
        hs = torch.stack(hs, 1)
        kf = keep[..., None].to(hs.dtype)
        pooled = (hs * kf).sum(1) / kf.sum(1).clamp_min(1.0)
        return self.motion(hs).float(), self.cls(torch.cat([h, pooled], -1)).float()


@_workload("forager flight-track training at the hive entrance (random init, a GRU written out frame by frame): 96-384 bee tracks a step (drawn) of 12-40 frames each (drawn per track, padded to the step's longest), each frame a detection of 9 features (position, box size, heading sine and cosine, speed, pollen-load score, frame gap) drawn on the device; an MLP encoder and a GRU cell written out with linear gates (width 192, padded frames keeping the state by torch.where); per frame the mean and log-variance of the next 2-d displacement by a Gaussian negative log-likelihood masked to real frames with a successor, and the track's outcome (leaving, returning with pollen, returning without, orientation flight, guarding) by cross-entropy from the last real state and the masked mean; AdamW, clipping, bf16 autocast, 175 steps; the losses read back every 10 steps and every 35 steps a no-grad pass over 384 tracks of 40 frames with the outcome accuracy and the mean displacement error read back")
def forager_flight_track_train(rng):
    n_in, d, n_out = 9, _smoke(192, 16), 5
    model = _TrackGru(n_in, d, n_out).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    lo, hi = _smoke(12, 3), _smoke(40, 5)

    def tracks(lengths, t):
        b = len(lengths)
        keep = keep_mask(lengths, t)
        det = torch.randn(b, t, n_in, device="cuda") * keep[..., None]
        step = torch.randn(b, t, 2, device="cuda")
        nxt = keep_mask([n - 1 for n in lengths], t).float()
        outcome = torch.randint(0, n_out, (b,), device="cuda")
        return det, keep, step, nxt, outcome

    def losses(motion, cls, step, nxt, outcome):
        mu, logv = motion[..., :2], motion[..., 2:].clamp(-6.0, 6.0)
        nll = (0.5 * (logv + (step - mu) ** 2 * torch.exp(-logv))).sum(-1)
        return (nll * nxt).sum() / nxt.sum().clamp_min(1.0), _F.cross_entropy(cls, outcome)

    steps = _smoke(175, 3)
    for step_i in range(steps):
        model.train()
        b = rng.randint(_smoke(96, 2), _smoke(384, 4))
        lengths = [rng.randint(lo, hi) for _ in range(b)]
        det, keep, step, nxt, outcome = tracks(lengths, max(lengths))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            motion, cls = model(det, keep)
        l_nll, l_cls = losses(motion, cls, step, nxt, outcome)
        loss = l_nll + l_cls
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step_i % 10 == 0:
            torch.stack([l_nll.detach(), l_cls.detach()]).tolist()
        del det, keep, step, nxt, outcome, motion, cls, l_nll, l_cls, loss
        if (step_i + 1) % _smoke(35, 2) == 0:
            model.eval()
            with torch.no_grad():
                nb = _smoke(384, 3)
                det, keep, step, nxt, outcome = tracks([hi] * nb, hi)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    motion, cls = model(det, keep)
                err = ((motion[..., :2] - step).norm(dim=-1) * nxt).sum() / nxt.sum()
                res = torch.stack([(cls.argmax(-1) == outcome).float().mean(), err])
            res.tolist()
            del det, keep, step, nxt, outcome, motion, cls, err, res


# ---------------------------------------------------------------- colony weight forecasting (N-BEATS)


class _NBeatsBlock(_nn.Module):
    """Four fully connected layers, then backcast and forecast coefficients expanded on a fixed basis (a
    polynomial, a Fourier or an identity basis)."""

    def __init__(self, n_in, width, back_basis, fore_basis):
        super().__init__()
        self.fc = mlp(n_in, width, width, layers=4)
        self.theta_b, self.theta_f = _nn.Linear(width, back_basis.shape[0]), _nn.Linear(width, fore_basis.shape[0])
        self.register_buffer("bb", back_basis)
        self.register_buffer("fb", fore_basis)

    def forward(self, x, exo):
        h = _F.relu(self.fc(torch.cat([x, exo], -1)))
        return self.theta_b(h) @ self.bb.to(h.dtype), self.theta_f(h) @ self.fb.to(h.dtype)


def _poly_basis(deg, n):
    t = torch.arange(n).float() / n
    return torch.stack([t ** i for i in range(deg + 1)])


def _fourier_basis(harm, n):
    t = torch.arange(n).float() / n
    k = torch.arange(1, harm + 1).float()[:, None]
    return torch.cat([torch.ones(1, n), torch.cos(2 * math.pi * k * t), torch.sin(2 * math.pi * k * t)])


class _NBeats(_nn.Module):
    """Trend, seasonality and generic stacks of N-BEATS blocks with doubly residual stacking; exogenous weather
    forecasts through an MLP fed to every block; the summed forecast, and the season's yield from the last
    residual and the forecast."""

    def __init__(self, lookback, horizon, n_exo, width, per_stack, harm):
        super().__init__()
        self.exo = mlp(n_exo * horizon, width, 64, act=_nn.GELU)
        n_in = lookback + 64
        blocks = [_NBeatsBlock(n_in, width, _poly_basis(3, lookback), _poly_basis(3, horizon))
                  for _ in range(per_stack)]
        blocks += [_NBeatsBlock(n_in, width, _fourier_basis(harm, lookback), _fourier_basis(harm, horizon))
                   for _ in range(per_stack)]
        blocks += [_NBeatsBlock(n_in, width, torch.eye(lookback), torch.eye(horizon)) for _ in range(per_stack)]
        self.blocks = _nn.ModuleList(blocks)
        self.yld = mlp(lookback + horizon, width, 2, act=_nn.GELU)

    def forward(self, x, exo):
        e = self.exo(exo.flatten(1))
        fore = 0.0
        for blk in self.blocks:
            back, f = blk(x, e)
            x = x - back
            fore = fore + f
        return fore.float(), self.yld(torch.cat([x, fore], -1)).float()


@_workload("colony weight and honey-yield forecasting training (random init, an N-BEATS network): 128-1,024 hives a step (drawn) with 7-28 days of hourly hive-scale weight (drawn per step, 168-672 hours) drawn on the device as a random walk with a daily cycle, resampled by linear interpolation to a 336-point lookback and standardised per hive, and 14 days of 6 daily weather-forecast features (temperature, rain, wind, sunshine, humidity, forage index) through an MLP; 3 stacks (trend: a cubic polynomial basis, seasonality: 8 Fourier harmonics, generic: identity) of 4 blocks each, every block 4 fully connected layers of width 512 with backcast and forecast heads, doubly residual; the next 14 days' daily weight change by a smooth L1 loss and the season's honey yield by a Gaussian negative log-likelihood (written out) from the last residual and the forecast; Adam on a cosine schedule, clipping, bf16 autocast, 290 steps; the loss read back every 25 steps and every 58 steps a no-grad pass over 1,024 hives of 28 days with the forecast's mean absolute error and the yield's absolute error read back")
def colony_weight_nbeats_train(rng):
    lookback, horizon, n_exo = _smoke(336, 24), 14, 6
    width, per_stack, harm = _smoke(512, 32), _smoke(4, 1), _smoke(8, 2)
    model = _NBeats(lookback, horizon, n_exo, width, per_stack, harm).cuda()
    steps = _smoke(290, 3)
    opt = torch.optim.Adam(model.parameters(), lr=5e-4)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    lo_d, hi_d = _smoke(7, 2), _smoke(28, 3)

    def hives(b, hours):
        walk = torch.randn(b, hours, device="cuda").cumsum(-1) * 0.05
        day = torch.sin(torch.arange(hours, device="cuda").float() * (2 * math.pi / 24))[None]
        w = walk + 0.3 * day + torch.rand(b, 1, device="cuda") * 60.0 + 20.0
        x = _F.interpolate(w[:, None], size=lookback, mode="linear", align_corners=False)[:, 0]
        mu, sd = x.mean(-1, keepdim=True), x.std(-1, keepdim=True).clamp_min(1e-3)
        exo = torch.randn(b, horizon, n_exo, device="cuda")
        delta = torch.randn(b, horizon, device="cuda")
        yld = torch.rand(b, device="cuda") * 40.0
        return (x - mu) / sd, exo, delta, yld

    for step in range(steps):
        model.train()
        b, days = rng.randint(_smoke(128, 2), _smoke(1024, 4)), rng.randint(lo_d, hi_d)
        x, exo, delta, yld = hives(b, days * 24)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            fore, y = model(x, exo)
        l_fore = _F.smooth_l1_loss(fore, delta)
        var = _F.softplus(y[:, 1]) * 10.0 + 1e-3
        l_yld = 0.5 * (var.log() + (y[:, 0] * 10.0 + 20.0 - yld) ** 2 / var).mean()
        loss = l_fore + 0.1 * l_yld
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 25 == 0:
            loss.detach().item()
        del x, exo, delta, yld, fore, y, var, l_fore, l_yld, loss
        if (step + 1) % _smoke(58, 2) == 0:
            model.eval()
            with torch.no_grad():
                x, exo, delta, yld = hives(_smoke(1024, 3), hi_d * 24)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    fore, y = model(x, exo)
                res = torch.stack([(fore - delta).abs().mean(), (y[:, 0] * 10.0 + 20.0 - yld).abs().mean()])
            res.tolist()
            del x, exo, delta, yld, fore, y, res

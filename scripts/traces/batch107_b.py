"""The hundred-and-seventh batch of held-out workloads for record.py, second half (see batch107.py): water utilities
and wastewater treatment, written in torch alone. Water-quality forecasting training (a patch transformer encoder over
multi-sensor station histories of drawn lengths with missing readings masked, a cross-attending decoder over a drawn
forecast horizon with known future covariates, quantile heads), an acoustic leak-correlator service (GCC-PHAT time
delay between the two sensors of each pipe pair in band-limited spectra, leak positions along the pipe, a 1-d conv
classifier of the spectra; requests of drawn pair counts and durations), a demand-scenario diffusion sampler (a
conditional U-Net with timestep embeddings and a self-attention middle block, DDIM sampling of district demand curves
with classifier-free guidance, drawn zone counts, days, sample counts and step counts per request) and a
contamination-event Monte Carlo simulation (a contaminant and chlorine advected along a drawn pipe network by
index_select and index_add, injected by scatter_add, reacting, detected by candidate sensor layouts, consumption
up to detection summed per layout).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or masked_fill;
no boolean-mask indexing; results read back only at logging points, once per request or once per batch.
leak_correlator_serve uploads its waveforms on a side stream (workload_helpers.SideUploads, its `ahead` loop); the
other three are single-stream. The models run under bf16 autocast (the correlator's FFTs and the simulation in fp32).
Every position table is sized for the longest padded length that can be drawn.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import CrossDecoderBlock, PreNormBlock, SideUploads, TimeResBlock, keep_mask, mlp, rfftfreq

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- water-quality forecasting (encoder-decoder)


class _QualityForecaster(_nn.Module):
    """History patches (sensor values and their observed flags) with station, time-of-day and day-of-week
    embeddings, pre-norm encoder blocks under a patch key mask; decoder queries from a horizon-position table and
    the known future covariates, cross-attending decoder blocks; quantiles of each target per horizon step."""

    def __init__(self, n_sens, patch, d, heads, enc, dec, max_patches, max_h, n_cov, n_stat, n_tgt, n_q):
        super().__init__()
        self.patch = patch
        self.inp = _nn.Linear(2 * n_sens * patch, d)
        self.pos, self.hpos = _nn.Embedding(max_patches, d), _nn.Embedding(max_h, d)
        self.station, self.tod, self.dow = _nn.Embedding(n_stat, d), _nn.Embedding(96, d), _nn.Embedding(7, d)
        self.enc = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(enc))
        self.enc_norm = _nn.LayerNorm(d)
        self.cov = mlp(n_cov, d, d, act=_nn.GELU)
        self.dec = _nn.ModuleList(CrossDecoderBlock(d, heads) for _ in range(dec))
        self.out = _nn.Sequential(_nn.LayerNorm(d), _nn.Linear(d, n_tgt * n_q))
        self.n_tgt = n_tgt

    def forward(self, vals, seen, keep, station, tod, dow, cov):
        b, t, _ = vals.shape
        p = t // self.patch
        x = self.inp(torch.cat([vals * seen, seen], -1).view(b, p, -1))
        x = x + self.pos(torch.arange(p, device=x.device))[None] + self.tod(tod) + self.dow(dow)
        x = x + self.station(station)[:, None]
        for blk in self.enc:
            x = blk(x, mask=keep[:, None, None, :])
        mem = self.enc_norm(x)
        h = cov.shape[1]
        y = self.cov(cov) + self.hpos(torch.arange(h, device=x.device))[None] + self.station(station)[:, None]
        for blk in self.dec:
            y = blk(y, mem, keep[:, None, None, :])
        return self.out(y).float().unflatten(-1, (self.n_tgt, -1))


@_workload("water-quality forecasting training (random init, a patch-transformer encoder-decoder): 32-128 station series a step (drawn), each with a history of 96-672 fifteen-minute readings (drawn per series, the step padded to its longest rounded up to a multiple of 32) of 8 sensors (turbidity, free chlorine, pH, conductivity, temperature, dissolved oxygen, ORP, flow) with 10 percent of readings missing (drawn, zeroed and flagged); patches of 8 readings (values and observed flags) to width 256 with an 84-row patch-position table, station (of 240), time-of-day (96) and day-of-week embeddings; 4 pre-norm encoder blocks (8 heads) under a patch key mask; a forecast horizon of 24-96 steps (drawn per step; each series' own valid horizon drawn between 12 and it) of decoder queries from a 96-row horizon-position table plus 3 known covariates (rain forecast, planned flow, dosing set-point) through a 2-layer MLP, 3 cross-attending decoder blocks (causal self-attention, cross-attention under the patch key mask); 10th/50th/90th-percentile forecasts of 4 targets, pinball loss masked by the valid horizon; AdamW with a warm-up and cosine learning-rate schedule, clipping, bf16 autocast, 265 steps; the loss read back every 20 steps and every 66 steps a no-grad evaluation of 64 series of 672 readings and a 96-step horizon with the median's absolute error read back")
def water_quality_forecast_train(rng):
    n_sens, patch, d, heads = 8, _smoke(8, 4), _smoke(256, 32), _smoke(8, 2)
    enc, dec, n_cov, n_stat, n_tgt = _smoke(4, 1), _smoke(3, 1), 3, _smoke(240, 10), 4
    lo, hi, h_lo, h_hi = _smoke(96, 8), _smoke(672, 40), _smoke(24, 4), _smoke(96, 8)
    quantiles = torch.tensor([0.1, 0.5, 0.9], device="cuda")
    max_t = -(-hi // 32) * 32  # the longest padded history
    model = _QualityForecaster(n_sens, patch, d, heads, enc, dec, max_t // patch, h_hi, n_cov, n_stat, n_tgt,
                               3).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=4e-4, weight_decay=0.05)
    steps, warm = _smoke(265, 3), _smoke(15, 1)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))

    def series(lengths, horizons, h):
        b, t = len(lengths), -(-max(lengths) // 32) * 32
        p = t // patch
        vals = torch.randn(b, t, n_sens, device="cuda")
        seen = (torch.rand(b, t, n_sens, device="cuda") > 0.1).float() * keep_mask(lengths, t)[..., None].float()
        keep = keep_mask([-(-ln // patch) for ln in lengths], p)
        station = torch.randint(0, n_stat, (b,), device="cuda")
        start = torch.randint(0, 96 * 7, (b, 1), device="cuda") + torch.arange(p, device="cuda")[None] * patch
        tod, dow = start % 96, (start // 96) % 7
        cov = torch.randn(b, h, n_cov, device="cuda")
        target = torch.randn(b, h, n_tgt, device="cuda")
        valid = keep_mask(horizons, h).float()
        return vals, seen, keep, station, tod, dow, cov, target, valid

    for step in range(steps):
        model.train()
        b, h = rng.randint(_smoke(32, 2), _smoke(128, 4)), rng.randint(h_lo, h_hi)
        batch = series([rng.randint(lo, hi) for _ in range(b)], [rng.randint(min(12, h), h) for _ in range(b)], h)
        vals, seen, keep, station, tod, dow, cov, target, valid = batch
        with torch.autocast("cuda", dtype=torch.bfloat16):
            q = model(vals, seen, keep, station, tod, dow, cov)  # (b, h, targets, quantiles)
        diff = target[..., None] - q
        pin = torch.maximum(quantiles * diff, (quantiles - 1) * diff).mean((-1, -2))
        loss = (pin * valid).sum() / valid.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            loss.detach().item()
        del batch, vals, seen, keep, station, tod, dow, cov, target, valid, q, diff, pin, loss
        if (step + 1) % _smoke(66, 2) == 0:
            model.eval()
            with torch.no_grad():
                n = _smoke(64, 2)
                vals, seen, keep, station, tod, dow, cov, target, valid = series([hi] * n, [h_hi] * n, h_hi)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    q = model(vals, seen, keep, station, tod, dow, cov)
                mae = (q[..., 1] - target).abs().mean()
            mae.item()
            del vals, seen, keep, station, tod, dow, cov, target, valid, q, mae


# ---------------------------------------------------------------- acoustic leak-correlator service


class _SpectrumClassifier(_nn.Module):
    """1-d convolutions over both sensors' pooled log spectra, a global mean, a leak logit."""

    def __init__(self, widths):
        super().__init__()
        mods, c = [], 2
        for w in widths:
            mods += [_nn.Conv1d(c, w, 5, 2, 2), _nn.BatchNorm1d(w), _nn.GELU()]
            c = w
        self.body = _nn.Sequential(*mods)
        self.head = mlp(c, c, 1, act=_nn.GELU)

    def forward(self, x):
        return self.head(self.body(x).mean(-1))[..., 0].float()


@_workload("acoustic leak-correlator serving (GCC-PHAT time-delay estimation and a random-init 1-d conv classifier): 4,550-4,750 requests (drawn) of 1-16 sensor pairs each (drawn), each pair on a pipe of drawn length (20-400 m), wave speed (metal 1,100-1,400 m/s or plastic 300-500 m/s, drawn) and band (200-1,500 Hz for metal, 40-400 Hz for plastic), the request's recordings 0.5-2 s at 4,096 Hz (drawn, a multiple of 1,024 samples); int16 samples uploaded on a side stream from two reused pinned host buffers (filled once, sized for 16 pairs x 2 sensors x 8,192 samples) one request ahead through SideUploads.ahead (one span, waited on by event, record_stream'ed); on the device in fp32: mean removed, a Hann window, real FFTs zero-padded to twice the length, the cross-spectrum phase-normalised and band-limited per pair (a frequency mask), an inverse FFT, lags of -1,024..1,024 samples with those beyond each pair's travel time masked by torch.where, the peak lag, the peak's sharpness and the leak position from the first sensor; the two sensors' log magnitude spectra pooled to 256 bins into a 1-d convnet (32/64/128 channels, kernel 5, stride 2, batch norm, GELU) with a leak logit under bf16 autocast; each request's positions, delays, sharpness and leak probabilities read back")
def leak_correlator_serve(rng):
    fs, max_p, max_n, max_lag = 4096, _smoke(16, 3), _smoke(8192, 512), _smoke(1024, 64)
    model = _SpectrumClassifier(_smoke([32, 64, 128], [8, 8])).cuda().eval()
    model.requires_grad_(False)
    n_bins = _smoke(256, 32)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(-8000, 8000, (max_p * 2 * max_n,), dtype=torch.int16, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    lags = torch.cat([torch.arange(max_lag + 1, device="cuda"), torch.arange(-max_lag, 0, device="cuda")]).float()
    unit = _smoke(1024, 128)
    windows = {k * unit: torch.hann_window(k * unit, device="cuda") for k in range(2, max_n // unit + 1)}
    freqs = {n: rfftfreq(2 * n, 1.0 / fs) for n in windows}
    nreq = rng.randint(_smoke(4550, 3), _smoke(4750, 4))
    plan = []
    for _ in range(nreq):
        n, pairs = rng.randint(2, max_n // unit) * unit, []
        for _ in range(rng.randint(1, max_p)):
            metal = rng.random() < 0.5
            pairs.append((rng.uniform(20, 400), rng.uniform(1100, 1400) if metal else rng.uniform(300, 500),
                          200.0 if metal else 40.0, 1500.0 if metal else 400.0))
        plan.append((n, pairs))

    def spans(item):
        return (len(item[1]) * 2 * item[0],)

    for (n, pairs), raw in up.ahead(plan, spans):
        p = len(pairs)
        with torch.no_grad():
            geo = torch.tensor(pairs, device="cuda")  # (p, 4): length, speed, band low, band high
            x = raw.view(p, 2, n).float() / 32768
            x = (x - x.mean(-1, keepdim=True)) * windows[n]
            spec = torch.fft.rfft(x, n=2 * n)  # (p, 2, n + 1)
            f = freqs[n]
            band = ((f[None] >= geo[:, 2:3]) & (f[None] <= geo[:, 3:4])).float()
            cross = spec[:, 0] * spec[:, 1].conj()
            cc = torch.fft.irfft(cross / cross.abs().clamp(min=1e-9) * band, n=2 * n)
            cc = torch.cat([cc[:, :max_lag + 1], cc[:, -max_lag:]], -1)  # lags 0..max, then -max..-1
            reach = geo[:, :1] / geo[:, 1:2] * fs  # the largest physical delay in samples
            cc = torch.where(lags[None].abs() <= reach, cc, torch.full_like(cc, -1e9))
            peak, at = cc.max(-1)
            tau = lags[at] / fs
            sharp = peak / cc.clamp(min=0).mean(-1).clamp(min=1e-9)
            pos = ((geo[:, 0] - geo[:, 1] * tau) / 2).clamp(min=0).minimum(geo[:, 0])
            mag = _F.adaptive_avg_pool1d(torch.log(spec.abs() + 1e-6), n_bins)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                prob = torch.sigmoid(model(mag))
            out = torch.stack([pos, tau, sharp, prob], -1)
        out.tolist()
        del raw, geo, x, spec, band, cross, cc, reach, peak, at, tau, sharp, pos, mag, prob, out


# ---------------------------------------------------------------- demand-scenario diffusion sampler


class _DemandUNet(_nn.Module):
    """A conditional U-Net over (zones x time) demand maps: the noisy map plus two conditioning planes (each zone's
    base demand and the time of day), residual blocks with the timestep and condition embedding at three widths,
    average-pool down and nearest up, a self-attention block at the lowest level."""

    def __init__(self, widths, temb, heads, n_weather, n_day, n_season):
        super().__init__()
        self.temb = temb
        self.t_mlp = mlp(temb, temb, temb, act=_nn.SiLU)
        self.weather, self.day = _nn.Embedding(n_weather + 1, temb), _nn.Embedding(n_day + 1, temb)
        self.season = _nn.Embedding(n_season + 1, temb)
        self.inp = _nn.Conv2d(3, widths[0], 3, 1, 1)
        self.down = _nn.ModuleList()
        c, skips = widths[0], []
        for w in widths:
            self.down.append(_nn.ModuleList([TimeResBlock(c, w, temb), TimeResBlock(w, w, temb)]))
            skips.append(w)
            c = w
        self.mid = PreNormBlock(c, heads)
        self.up = _nn.ModuleList()
        for w in reversed(widths):
            self.up.append(_nn.ModuleList([TimeResBlock(c + skips.pop(), w, temb), TimeResBlock(w, w, temb)]))
            c = w
        self.out = _nn.Sequential(_nn.GroupNorm(8, c), _nn.SiLU(), _nn.Conv2d(c, 1, 3, 1, 1))

    def forward(self, x, cond, t, weather, day, season):
        te = self.t_mlp(_b.rec._sincos(t, self.temb)) + self.weather(weather) + self.day(day) + self.season(season)
        h = self.inp(torch.cat([x, cond], 1))
        skips = []
        for i, (r1, r2) in enumerate(self.down):
            h = r2(r1(h, te), te)
            skips.append(h)
            if i < len(self.down) - 1:
                h = _F.avg_pool2d(h, 2)
        b, c, zh, zw = h.shape
        h = self.mid(h.flatten(2).transpose(1, 2)).transpose(1, 2).reshape(b, c, zh, zw)
        for i, (r1, r2) in enumerate(self.up):
            if i > 0:
                h = _F.interpolate(h, scale_factor=2, mode="nearest")
            h = r2(r1(torch.cat([h, skips.pop()], 1), te), te)
        return self.out(h)


@_workload("demand-scenario diffusion sampling (random init, a conditional U-Net, DDIM with classifier-free guidance): 60-64 requests (drawn), each for 2-24 scenarios (drawn) of a district's demand over 16, 32, 48 or 64 metered zones (drawn) and 1 or 2 days of 96 fifteen-minute intervals (drawn), conditioned on weather (of 8), day type (of 3) and season (of 4) drawn per scenario and on two planes (each zone's drawn base demand, the time of day); a U-Net of widths 64/128/192 (two timestep-conditioned residual blocks a level, GroupNorm, average-pool down, nearest up, skips) with a pre-norm self-attention block (4 heads) over the lowest level's cells, sinusoidal timestep embedding; 10, 16, 20, 25 or 32 DDIM steps (drawn) over a 1,000-step cosine schedule computed on the host, conditional and unconditional (null-label) halves in one batch, guidance scale 1.5-4 (drawn); bf16 autocast; per request the zones' daily peaks and the scenarios' total volumes (softplus of the sample times the base demand) read back")
def demand_scenario_diffusion_sample(rng):
    widths, temb, heads = _smoke([64, 128, 192], [16, 16]), _smoke(256, 32), _smoke(4, 2)
    n_weather, n_day, n_season = 8, 3, 4
    model = _DemandUNet(widths, temb, heads, n_weather, n_day, n_season).cuda().eval()
    model.requires_grad_(False)
    total = 1000
    abar = [math.cos((i / total + 0.008) / 1.008 * math.pi / 2) ** 2 for i in range(total)]
    zones, day_len = _smoke([16, 32, 48, 64], [8, 16]), _smoke(96, 16)
    nreq = rng.randint(_smoke(60, 2), _smoke(64, 3))
    for _ in range(nreq):
        b, z, days = rng.randint(2, _smoke(24, 3)), rng.choice(zones), rng.randint(1, 2)
        n_steps, scale = rng.choice(_smoke([10, 16, 20, 25, 32], [2, 3])), rng.uniform(1.5, 4.0)
        w = days * day_len
        with torch.no_grad():
            base = torch.rand(b, 1, z, 1, device="cuda") * 2 + 0.2
            tod = torch.sin(torch.arange(w, device="cuda").float() * (2 * math.pi / day_len))
            cond = torch.cat([base.expand(b, 1, z, w), tod.view(1, 1, 1, w).expand(b, 1, z, w)], 1)
            cond2 = torch.cat([cond, cond])
            labels = [torch.randint(0, k, (b,), device="cuda") for k in (n_weather, n_day, n_season)]
            nulls = (n_weather, n_day, n_season)
            labels2 = [torch.cat([lab, torch.full_like(lab, k)]) for lab, k in zip(labels, nulls)]
            x = torch.randn(b, 1, z, w, device="cuda")
            ts = [int(total - 1 - i * (total // n_steps)) for i in range(n_steps)]
            for i, t in enumerate(ts):
                a_t = abar[t]
                a_prev = abar[ts[i + 1]] if i + 1 < len(ts) else 1.0
                tt = torch.full((2 * b,), t, device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    eps = model(torch.cat([x, x]), cond2, tt, *labels2).float()
                e_c, e_u = eps.chunk(2)
                e = e_u + scale * (e_c - e_u)
                x0 = (x - math.sqrt(1 - a_t) * e) / math.sqrt(a_t)
                x = math.sqrt(a_prev) * x0 + math.sqrt(1 - a_prev) * e
            demand = _F.softplus(x) * base
            peaks = demand.view(b, z, days, day_len).amax(-1).mean((0, 2))
            volume = demand.sum((1, 2, 3)) * 0.25
            out = torch.cat([peaks, volume])
        out.tolist()
        del base, tod, cond, cond2, labels, labels2, x, tt, eps, e_c, e_u, e, x0, demand, peaks, volume, out


# ---------------------------------------------------------------- contamination-event Monte Carlo simulation


@_workload("contamination-event Monte Carlo simulation (fp32, no model): one drawn pipe network of 25,000 nodes and 31,250 pipes (each pipe from a node to one 1-63 places further on, wrapping), node volumes, consumer demands and pipe flows for 4 demand periods drawn once on the device, up to 4 reservoir nodes (4 drawn) holding chlorine at 1.0; 60 batches of 64-384 scenarios (drawn), each batch simulated for 96-192 fifteen-minute steps (drawn); per scenario an injection node, start step, duration (4-16 steps) and mass rate drawn on the device; every step the contaminant and chlorine (stacked, one tensor) advected upwind along the pipes by index_select and index_add, injection by scatter_add under a start/stop mask, second-order reaction (chlorine decay and contaminant-chlorine consumption), reservoirs reset by torch.where, clamped at zero; 16 candidate sensor layouts of 12 nodes each read by index_select, each sensor's first detection step kept by torch.where; the contaminant consumed per step summed into a list; at the end of a batch each layout's detection step taken (the minimum over its sensors), the contaminant consumed up to it (cumulative sum, gathered at the detection step, the whole run's when undetected) averaged over the scenarios, with the detected fraction, and these two read back once per batch")
def contamination_event_mc_sim(rng):
    n = _smoke(25000, 300)
    e = n * 5 // 4
    src = torch.randint(0, n, (e,), device="cuda")
    dst = (src + torch.randint(1, 64, (e,), device="cuda")) % n
    volume = torch.rand(n, device="cuda") * 4 + 1
    use = torch.rand(n, device="cuda") * 0.05
    flow = torch.rand(4, e, device="cuda") * 0.3 + 0.02  # per-period fraction of the upstream node moved a step
    reservoir = torch.zeros(n, dtype=torch.bool, device="cuda")
    reservoir[torch.randint(0, n, (4,), device="cuda")] = True  # up to 4 (drawn nodes may repeat)
    n_lay, per_lay = 16, 12
    sensors = torch.randint(0, n, (n_lay * per_lay,), device="cuda")
    kb, kx, kr, dt, thresh = 0.02, 0.5, 0.3, 1.0, 0.05
    batches = _smoke(60, 2)
    for _ in range(batches):
        s, steps = rng.randint(_smoke(64, 2), _smoke(384, 4)), rng.randint(_smoke(96, 4), _smoke(192, 6))
        with torch.no_grad():
            inj = torch.randint(0, n, (s, 1), device="cuda")
            start = torch.randint(0, steps // 2, (s,), device="cuda")
            stop = start + torch.randint(4, 17, (s,), device="cuda")
            rate = torch.rand(s, device="cuda") * 5 + 0.5
            inj_vol = volume[inj[:, 0]]
            state = torch.cat([torch.zeros(s, n, device="cuda"), torch.full((s, n), 0.8, device="cuda")])
            never = float(steps + 1)
            det = torch.full((s, n_lay * per_lay), never, device="cuda")
            consumed = []
            for t in range(steps):
                q = flow[(t // 24) % 4]
                moved = state.index_select(1, src) * q
                state = state + (torch.zeros_like(state).index_add_(1, dst, moved)
                                 - torch.zeros_like(state).index_add_(1, src, moved)) / volume
                on = ((start <= t) & (t < stop)).float()
                x, c = state.chunk(2)
                x = x.scatter_add(1, inj, (on * rate * dt / inj_vol)[:, None])
                react = kr * c * x
                x = (x - dt * kx * react).clamp(min=0)
                c = (c - dt * (kb * c + react)).clamp(min=0)
                c = torch.where(reservoir[None], torch.ones_like(c), c)
                hit = x.index_select(1, sensors) > thresh
                det = torch.where(hit & (det == never), torch.full_like(det, float(t)), det)
                consumed.append((x * use).sum(1))
                state = torch.cat([x, c])
            first = det.view(s, n_lay, per_lay).amin(-1)  # (s, layouts)
            cum = torch.stack(consumed, 1).cumsum(1)  # (s, steps)
            idx = first.clamp(max=steps - 1).long()
            before = torch.gather(cum, 1, idx)
            out = torch.cat([before.mean(0), (first < never).float().mean(0)])
        out.tolist()
        del inj, start, stop, rate, inj_vol, state, det, consumed, q, moved, on, x, c, react, hit, first, cum, idx
        del before, out

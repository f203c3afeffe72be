"""The hundred-and-twenty-fifth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py
to batch123_b.py are): elevators, escalators and vertical transport in buildings, written in torch alone, first half.
Elevator group dispatching training (an attention policy over a building's cars and its pending hall calls, each call
assigned to a car by a pointer over the cars, trained by PPO on rollouts of drawn numbers of buildings, cars and calls
with generalised advantage estimation), passenger traffic forecasting training (a strided 1-d convolution and a GRU
cell written out block by block over each floor's hourly history of drawn length, the next day's up and down
passengers by hour by a Poisson likelihood and the building's totals by index_add over its floors), lift fault
detection training (a transformer over log-magnitude spectrograms, framed and transformed on the device, of drive,
rope and door sensor recordings of drawn durations, six fault flags, per-frame fault onsets and a severity) and an
escalator step-chain vibration anomaly service (a 1-d convolutional autoencoder over 3-axis accelerometer windows of
drawn durations, the reconstruction error, the step-chain meshing band's energy by an FFT, a latent distance against a
reference, the kurtosis and an envelope spectrum).
Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths,
resolutions and batch sizes are fixed on the host, padding handled by masks or by torch.where / masked_fill, no
boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
escalator_chain_vibration_serve uploads its recordings on a side stream (two reused pinned host buffers, one request
ahead, through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16
autocast. Every embedding and position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new125.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and
for the CPU smoke run (RECORD_SMOKE=1).
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, _mha, keep_mask, mlp, rfftfreq

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- elevator group dispatching (attention policy, PPO)


class _CrossAttn(_nn.Module):
    """Pre-norm cross-attention of the calls over the cars under the cars' key mask, with a residual."""

    def __init__(self, d, heads):
        super().__init__()
        self.n, self.q, self.kv, self.o = _nn.LayerNorm(d), _nn.Linear(d, d), _nn.Linear(d, 2 * d), _nn.Linear(d, d)
        self.h = heads

    def forward(self, x, mem, mask):
        k, v = self.kv(mem).chunk(2, -1)
        return x + self.o(_mha(self.q(self.n(x)), k, v, self.h, attn_mask=mask))


class _DispatchPolicy(_nn.Module):
    """Cars (their floor by a floor table, 8 state features) through self-attention blocks; hall calls (their floor,
    6 features) through self-attention over the calls and cross-attention to the cars; a pointer from each call to
    the cars (out-of-service cars masked), a value from masked mean pooling of both."""

    def __init__(self, n_car, n_call, d, heads, layers, max_floor):
        super().__init__()
        self.floor = _nn.Embedding(max_floor, d)
        self.car_in, self.call_in = _nn.Linear(n_car, d), _nn.Linear(n_call, d)
        self.car_blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.call_blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.cross = _nn.ModuleList(_CrossAttn(d, heads) for _ in range(layers))
        self.nc, self.nq = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.pk, self.pq = _nn.Linear(d, d), _nn.Linear(d, d)
        self.value = mlp(2 * d, d, 1, act=_nn.GELU)
        self.d = d

    def forward(self, car_floor, car_feat, car_ok, call_floor, call_feat, call_keep):
        c = self.car_in(car_feat) + self.floor(car_floor)
        km = car_ok[:, None, None]
        for blk in self.car_blocks:
            c = blk(c, km)
        q = self.call_in(call_feat) + self.floor(call_floor)
        qm = call_keep[:, None, None]
        for blk, xa in zip(self.call_blocks, self.cross):
            q = xa(blk(q, qm), c, km)
        c, q = self.nc(c), self.nq(q)
        logits = (self.pq(q) @ self.pk(c).transpose(1, 2)).float() / math.sqrt(self.d)
        logits = logits.masked_fill(~car_ok[:, None], -1e4)
        kc, kq = car_ok.float()[..., None], call_keep.float()[..., None]
        pooled = torch.cat([(c.float() * kc).sum(1) / kc.sum(1), (q.float() * kq).sum(1) / kq.sum(1)], -1)
        return logits, self.value(pooled).float()[:, 0]


@_workload("elevator group dispatching training (random init, an attention policy trained by PPO): 32 updates, each a rollout of 16 decision steps over 48-128 buildings (drawn per update) of 4-12 cars (drawn per update) and up to 6-24 pending hall calls (drawn per update; each call present with probability 0.6, the first always) on 20-80 floors (drawn per update), states drawn on the device (car floors, 8 car features, in-service flags, call floors, 6 call features); an 80-row floor table, 2 pre-norm self-attention blocks over the cars, 2 over the calls each followed by cross-attention to the cars (width 128, 4 heads), a pointer from each call to the cars with out-of-service cars masked, a value head from masked mean pooling; each call's car sampled by Gumbel-max, rewards from the assigned cars' floor distances and loads, generalised advantage estimation (gamma 0.99, lambda 0.95) written out step by step; PPO with a clipped ratio (0.2), value loss, entropy bonus, 3 epochs of 2 minibatches (by randperm and index_select), Adam, clipping, bf16 autocast; the mean reward and the losses read back every 2 updates")
def elevator_dispatch_ppo_train(rng):
    n_car, n_call, d, heads, layers = 8, 6, _smoke(128, 16), _smoke(4, 2), _smoke(2, 1)
    max_floor = _smoke(80, 12)
    model = _DispatchPolicy(n_car, n_call, d, heads, layers, max_floor).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    updates, horizon = _smoke(32, 2), _smoke(16, 3)
    epochs, n_mb, gamma, lam = _smoke(3, 1), 2, 0.99, 0.95

    def states(e, k, c, f):
        car_floor = torch.randint(0, f, (e, k), device="cuda")
        car_feat = torch.randn(e, k, n_car, device="cuda")
        car_ok = torch.rand(e, k, device="cuda") > 0.1
        car_ok[:, 0] = True
        call_floor = torch.randint(0, f, (e, c), device="cuda")
        call_feat = torch.randn(e, c, n_call, device="cuda")
        call_keep = torch.rand(e, c, device="cuda") < 0.6
        call_keep[:, 0] = True
        return car_floor, car_feat, car_ok, call_floor, call_feat, call_keep

    def logp_of(logits, act, keep):
        lp = logits.log_softmax(-1)
        return (lp.gather(-1, act[..., None])[..., 0] * keep.float()).sum(-1), lp

    for upd in range(updates):
        e, k = rng.randint(_smoke(48, 3), _smoke(128, 4)), rng.randint(_smoke(4, 2), _smoke(12, 3))
        c, f = rng.randint(_smoke(6, 2), _smoke(24, 3)), rng.randint(_smoke(20, 6), max_floor)
        buf, vals, rews, dones, acts, olds = [], [], [], [], [], []
        model.eval()
        with torch.no_grad():
            for _ in range(horizon):
                obs = states(e, k, c, f)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits, value = model(*obs)
                g = -torch.log(-torch.log(torch.rand_like(logits).clamp(1e-9, 1.0 - 1e-9)))
                act = (logits + g).argmax(-1)
                logp, _ = logp_of(logits, act, obs[5])
                kf = obs[5].float()
                dist = (obs[0].gather(1, act) - obs[3]).abs().float() / f
                load = torch.sigmoid(obs[1][..., 0]).gather(1, act)
                rews.append(-((dist + 0.5 * load) * kf).sum(-1) / kf.sum(-1))
                dones.append((torch.rand(e, device="cuda") < 0.05).float())
                buf.append(obs)
                vals.append(value)
                acts.append(act)
                olds.append(logp)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                _, last = model(*states(e, k, c, f))
            gae, advs = torch.zeros(e, device="cuda"), [None] * horizon
            for t in reversed(range(horizon)):
                nv = last if t == horizon - 1 else vals[t + 1]
                delta = rews[t] + gamma * nv * (1.0 - dones[t]) - vals[t]
                gae = delta + gamma * lam * (1.0 - dones[t]) * gae
                advs[t] = gae
            adv = torch.stack(advs).flatten()
            ret = adv + torch.stack(vals).flatten()
            adv = (adv - adv.mean()) / (adv.std() + 1e-6)
            obs_all = [torch.stack([o[i] for o in buf]).flatten(0, 1) for i in range(6)]
            act_all, old_all = torch.stack(acts).flatten(0, 1), torch.stack(olds).flatten()
        del buf, vals, dones, acts, olds, advs, gae, obs, logits, value, g, act, logp, kf, dist, load, last, delta
        model.train()
        n = horizon * e
        m = n // n_mb
        for _ in range(epochs):
            perm = torch.randperm(n, device="cuda")
            for j in range(n_mb):
                idx = perm[j * m:(j + 1) * m]
                ob = [o.index_select(0, idx) for o in obs_all]
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits, value = model(*ob)
                logp, lp = logp_of(logits, act_all.index_select(0, idx), ob[5])
                a_mb = adv.index_select(0, idx)
                ratio = (logp - old_all.index_select(0, idx)).exp()
                l_pg = -torch.minimum(ratio * a_mb, ratio.clamp(0.8, 1.2) * a_mb).mean()
                l_v = (value - ret.index_select(0, idx)).pow(2).mean()
                kf = ob[5].float()
                ent = (-(lp.exp() * lp).sum(-1) * kf).sum() / kf.sum()
                loss = l_pg + 0.5 * l_v - 0.01 * ent
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
                opt.step()
                del idx, ob, logits, value, logp, lp, a_mb, ratio, kf, loss
        if upd % 2 == 0:
            torch.stack([torch.stack(rews).mean(), l_pg.detach(), l_v.detach(), ent.detach()]).tolist()
        del rews, adv, ret, obs_all, act_all, old_all, perm, l_pg, l_v, ent


# ---------------------------------------------------------------- passenger traffic forecasting (GRU written out)


class _TrafficGru(_nn.Module):
    """A stride-6 1-d convolution from hourly features to 6-hour blocks, a GRU cell written out block by block (its
    initial state from the floor's embedding, padded blocks keeping the state by torch.where), an MLP from the final
    state, the floor and the next day's calendar to 24 hours of log up and down passenger rates."""

    def __init__(self, n_in, d, max_floor, n_kind, n_cal, horizon):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv1d(n_in, d, 6, 6), _nn.GELU())
        self.floor, self.kind = _nn.Embedding(max_floor, d), _nn.Embedding(n_kind, d)
        self.x2h, self.h2h = _nn.Linear(d, 3 * d), _nn.Linear(d, 3 * d)
        self.head = mlp(2 * d + n_cal, d, 2 * horizon, act=_nn.GELU)

    def forward(self, x, keep, floor, kind, cal):
        z = self.stem(x).transpose(1, 2)
        xs = self.x2h(z + self.kind(kind)[:, None])
        fe = self.floor(floor)
        h = torch.tanh(fe).float()
        for i in range(xs.shape[1]):
            xr, xz, xn = xs[:, i].float().chunk(3, -1)
            hr, hz, hn = self.h2h(h).float().chunk(3, -1)
            r, zg = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
            h_new = (1 - zg) * torch.tanh(xn + r * hn) + zg * h
            h = torch.where(keep[:, i, None], h_new, h)
        return self.head(torch.cat([h.to(fe.dtype), fe, cal.to(fe.dtype)], -1)).float()


@_workload("passenger traffic forecasting training (random init, a GRU cell written out over 6-hour blocks): 3-10 buildings a step (drawn), each of 12-64 floors (drawn per building) and an office, residential, hotel, hospital, mixed-use or campus kind, with 7-14 days of hourly history per building (drawn, padded to the step's longest) of 8 features per floor-hour (log up and down passengers, hall and car calls, hour and weekday phases) drawn on the device; a stride-6 1-d convolution to width 192, a GRU cell written out block by block (28-56 blocks, padded blocks keeping the state by torch.where) starting from the floor's embedding (a 64-row table), an MLP from the final state, the floor and an 8-feature calendar of the next day to 24 hours of log up and down rates; a Poisson likelihood on drawn counts per floor and a log-MSE on each building's hourly totals summed over its floors by index_add; AdamW on a cosine schedule, clipping, bf16 autocast, 135 steps; the losses read back every 10 steps and every 27 steps a no-grad pass over 10 buildings of 48 floors and 14 days with the rate MAE read back")
def floor_traffic_gru_forecast_train(rng):
    n_in, d, n_kind, n_cal, horizon = 8, _smoke(192, 16), 6, 8, 24
    max_floor = _smoke(64, 8)
    model = _TrafficGru(n_in, d, max_floor, n_kind, n_cal, horizon).cuda()
    steps = _smoke(135, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    lo_d, hi_d = _smoke(7, 1), _smoke(14, 2)

    def buildings(floors, days):
        nb = len(floors)
        n, hours = sum(floors), 24 * max(days)
        blocks = [dd * 4 for dd, fl in zip(days, floors) for _ in range(fl)]
        keep = keep_mask(blocks, hours // 6)
        hk = keep.repeat_interleave(6, 1)
        x = torch.randn(n, n_in, hours, device="cuda") * hk[:, None]
        floor = torch.tensor([i for fl in floors for i in range(fl)], device="cuda")
        bld = torch.repeat_interleave(torch.arange(nb, device="cuda"), torch.tensor(floors, device="cuda"),
                                      output_size=n)
        kind = torch.randint(0, n_kind, (nb,), device="cuda")[bld]
        cal = torch.randn(nb, n_cal, device="cuda")[bld]
        counts = torch.randint(0, 40, (n, 2 * horizon), device="cuda").float()
        return x, keep, floor, kind, cal, bld, counts

    def losses(out, bld, counts, nb):
        l_pois = _F.poisson_nll_loss(out, counts, log_input=True)
        rate = out.exp()
        tot = rate.new_zeros(nb, 2 * horizon).index_add_(0, bld, rate)
        true = counts.new_zeros(nb, 2 * horizon).index_add_(0, bld, counts)
        return l_pois, _F.mse_loss(tot.clamp_min(1e-3).log(), (true + 1.0).log())

    for step in range(steps):
        model.train()
        nb = rng.randint(_smoke(3, 2), _smoke(10, 3))
        floors = [rng.randint(_smoke(12, 2), max_floor) for _ in range(nb)]
        days = [rng.randint(lo_d, hi_d) for _ in range(nb)]
        x, keep, floor, kind, cal, bld, counts = buildings(floors, days)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(x, keep, floor, kind, cal)
        l_pois, l_tot = losses(out, bld, counts, nb)
        loss = l_pois + 0.2 * l_tot
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 10 == 0:
            torch.stack([l_pois.detach(), l_tot.detach()]).tolist()
        del x, keep, floor, kind, cal, bld, counts, out, l_pois, l_tot, loss
        if (step + 1) % _smoke(27, 2) == 0:
            model.eval()
            with torch.no_grad():
                ne = _smoke(10, 2)
                x, keep, floor, kind, cal, bld, counts = buildings([_smoke(48, 4)] * ne, [hi_d] * ne)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    out = model(x, keep, floor, kind, cal)
                mae = (out.exp() - counts).abs().mean()
            mae.tolist()
            del x, keep, floor, kind, cal, bld, counts, out, mae


# ---------------------------------------------------------------- lift fault detection (spectrogram transformer)


class _FaultTransformer(_nn.Module):
    """Each frame's log magnitudes of all sensor channels through a linear layer, a frame position table, pre-norm
    blocks under the frames' key mask; fault flags and a severity from masked mean pooling, per-frame onset logits."""

    def __init__(self, n_feat, d, heads, layers, max_frames, n_fault):
        super().__init__()
        self.inp = _nn.Sequential(_nn.LayerNorm(n_feat), _nn.Linear(n_feat, d))
        self.pos = _nn.Embedding(max_frames, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.clip = mlp(d, d, n_fault + 1, act=_nn.GELU)
        self.onset = _nn.Linear(d, n_fault)

    def forward(self, spec, keep):
        t = spec.shape[1]
        z = self.inp(spec) + self.pos(torch.arange(t, device=spec.device))[None]
        for blk in self.blocks:
            z = blk(z, keep[:, None, None])
        z = self.norm(z)
        kf = keep.float()[..., None]
        pooled = (z.float() * kf).sum(1) / kf.sum(1)
        return self.clip(pooled).float(), self.onset(z).float()


@_workload("lift drive, rope and door fault detection training (random init, a transformer over sensor spectrograms): 8-32 recordings a step (drawn) of 4-16 s each (drawn per recording, padded to the step's longest) of 6 sensor channels at 1 kHz (three motor phase currents, rope tension, car vertical acceleration, door motor current) drawn on the device; framed on the device by unfold (128-sample Hann windows, hop 64, at most 249 frames), torch.fft.rfft magnitudes to log features (6 x 65 per frame); a layer norm and linear layer to width 256 with a 249-row frame position table, 6 pre-norm blocks (8 heads) under the frames' key mask; 6 fault flags (door roller wear, door lock misalignment, rope strand break, rope tension imbalance, drive inverter fault, brake drag) by BCE and a severity by MSE from masked mean pooling, per-frame onset logits of the 6 faults by masked BCE; AdamW on a cosine schedule with a warm-up, clipping, bf16 autocast, 400 steps; the losses read back every 20 steps and every 80 steps a no-grad pass over 16 recordings of 16 s with the fault-flag accuracy read back")
def lift_fault_spectro_transformer_train(rng):
    n_ch, sr, win, hop = 6, _smoke(1000, 256), _smoke(128, 32), _smoke(64, 16)
    d, heads, layers, n_fault = _smoke(256, 32), _smoke(8, 2), _smoke(6, 2), 6
    lo, hi = _smoke(4, 1), _smoke(16, 2)
    max_frames = (hi * sr - win) // hop + 1
    n_feat = n_ch * (win // 2 + 1)
    model = _FaultTransformer(n_feat, d, heads, layers, max_frames, n_fault).cuda()
    steps = _smoke(400, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.05)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / 20) * 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    window = torch.hann_window(win, device="cuda")

    def recordings(secs):
        b, n = len(secs), max(secs) * sr
        nfr = (n - win) // hop + 1
        lens = [(s * sr - win) // hop + 1 for s in secs]
        keep = keep_mask(lens, nfr)
        with torch.no_grad():
            wav = torch.randn(b, n_ch, n, device="cuda") * keep_mask([s * sr for s in secs], n)[:, None]
            fr = wav.unfold(-1, win, hop) * window
            mag = torch.fft.rfft(fr, dim=-1).abs()
            spec = torch.log1p(mag).permute(0, 2, 1, 3).reshape(b, nfr, n_feat)
        flags = (torch.rand(b, n_fault, device="cuda") < 0.2).float()
        sev = torch.rand(b, device="cuda")
        onset = (torch.rand(b, nfr, n_fault, device="cuda") < 0.05).float()
        return spec, keep, flags, sev, onset

    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(8, 2), _smoke(32, 3))
        secs = [rng.randint(lo, hi) for _ in range(b)]
        spec, keep, flags, sev, onset = recordings(secs)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            clip, fr_logit = model(spec, keep)
        l_flag = _F.binary_cross_entropy_with_logits(clip[:, :n_fault], flags)
        l_sev = _F.mse_loss(torch.sigmoid(clip[:, n_fault]), sev)
        kf = keep.float()[..., None]
        l_on = (_F.binary_cross_entropy_with_logits(fr_logit, onset, reduction="none") * kf).sum() / (
            kf.sum() * n_fault)
        loss = l_flag + l_sev + l_on
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            torch.stack([l_flag.detach(), l_sev.detach(), l_on.detach()]).tolist()
        del spec, keep, flags, sev, onset, clip, fr_logit, l_flag, l_sev, kf, l_on, loss
        if (step + 1) % _smoke(80, 2) == 0:
            model.eval()
            with torch.no_grad():
                spec, keep, flags, sev, onset = recordings([hi] * _smoke(16, 2))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    clip, fr_logit = model(spec, keep)
                acc = ((clip[:, :n_fault] > 0).float() == flags).float().mean()
            acc.tolist()
            del spec, keep, flags, sev, onset, clip, fr_logit, acc


# ---------------------------------------------------------------- escalator step-chain vibration (1-d autoencoder)


class _ChainAutoencoder(_nn.Module):
    """Three stride-2 1-d convolutions (3 axes to 32, 64, 128 channels) and a 1x1 to a 32-channel latent at 1/8 of
    the sample rate, three stride-2 transposed convolutions back to the 3 axes."""

    def __init__(self, widths, latent):
        super().__init__()
        c1, c2, c3 = widths
        self.enc = _nn.Sequential(_nn.Conv1d(3, c1, 7, 2, 3), _nn.GELU(), _nn.Conv1d(c1, c2, 5, 2, 2), _nn.GELU(),
                                  _nn.Conv1d(c2, c3, 5, 2, 2), _nn.GELU(), _nn.Conv1d(c3, latent, 1))
        self.dec = _nn.Sequential(_nn.Conv1d(latent, c3, 1), _nn.GELU(), _nn.ConvTranspose1d(c3, c2, 4, 2, 1),
                                  _nn.GELU(), _nn.ConvTranspose1d(c2, c1, 4, 2, 1), _nn.GELU(),
                                  _nn.ConvTranspose1d(c1, 3, 4, 2, 1))

    def forward(self, x):
        z = self.enc(x)
        return self.dec(z).float(), z.float()


@_workload("escalator step-chain vibration anomaly serving (random init, a 1-d convolutional autoencoder): 3,700-3,780 requests (drawn) of 1-8 escalators (drawn) with 2-8 s of 3-axis accelerometer data at 2 kHz from the step-chain sprocket each (drawn per request in half seconds), 16-bit samples uploaded on a side stream from two reused pinned host buffers (filled once, sized for 8 x 3 x 8 s) one request ahead (one span, through SideUploads.ahead), scaled and detrended on the device; an autoencoder of three stride-2 convolutions (32, 64, 128 channels) to a 32-channel latent at 250 Hz and three stride-2 transposed convolutions back, under bf16 autocast; per escalator the worst 0.125 s window of reconstruction error (by average pooling), the energy fraction of the vertical axis in the step-chain meshing band and its second harmonic (chain speed 0.5-0.75 m/s drawn per request over a 0.135 m step pitch, by torch.fft.rfft and a frequency mask), a latent distance against a reference mean and scale, each axis's RMS, the worst axis's kurtosis, the peak-to-mean ratio of the vertical axis's envelope spectrum (the analytic signal's magnitude by torch.fft.fft and ifft, then torch.fft.rfft), a combined anomaly score and its flag; each request's scores and flags read back once")
def escalator_chain_vibration_serve(rng):
    widths, latent = _smoke([32, 64, 128], [8, 8, 16]), _smoke(32, 8)
    sr, max_n, max_h = _smoke(2000, 400), _smoke(8, 2), _smoke(16, 4)
    model = _ChainAutoencoder(widths, latent).cuda().eval()
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    half = sr // 2
    host = [torch.randint(-8000, 8000, (max_n * 3 * max_h * half,), dtype=torch.int16, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    ref_mu, ref_sd = torch.randn(latent, device="cuda") * 0.1, torch.rand(latent, device="cuda") + 0.5
    win = sr // 8

    nreq = rng.randint(_smoke(3700, 3), _smoke(3780, 4))
    plan = [(rng.randint(1, max_n), rng.randint(_smoke(4, 2), max_h), rng.uniform(0.5, 0.75)) for _ in range(nreq)]

    for (n, nh, speed), raw in up.ahead(plan, lambda p: (p[0] * 3 * p[1] * half,)):
        with torch.no_grad():
            x = raw.view(n, 3, nh * half).float() / 8192.0
            x = x - x.mean(-1, keepdim=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                rec, z = model(x)
            err = (rec - x).pow(2).mean(1)
            worst = _F.avg_pool1d(err[:, None], win, win)[:, 0].amax(-1)
            spec = torch.fft.rfft(x[:, 2]).abs().pow(2)
            freq = rfftfreq(nh * half, 1.0 / sr)
            f0 = speed / 0.135
            band = ((freq - f0).abs() < 0.5) | ((freq - 2 * f0).abs() < 0.5)
            frac = (spec * band.float()).sum(-1) / spec.sum(-1).clamp_min(1e-9)
            zd = ((z.mean(-1) - ref_mu) / ref_sd).pow(2).mean(-1).sqrt()
            m2 = x.pow(2).mean(-1)
            kurt = (x.pow(4).mean(-1) / m2.pow(2).clamp_min(1e-12)).amax(-1)
            big_n = nh * half
            hil = torch.ones(big_n, device="cuda")
            hil[1:big_n // 2] = 2.0
            hil[big_n // 2 + 1:] = 0.0
            env = torch.fft.ifft(torch.fft.fft(x[:, 2]) * hil).abs()
            env_spec = torch.fft.rfft(env - env.mean(-1, keepdim=True)).abs()
            env_peak = env_spec[:, 1:].amax(-1) / env_spec[:, 1:].mean(-1).clamp_min(1e-9)
            score = 10.0 * worst + 2.0 * frac + 0.5 * zd + 0.1 * kurt + 0.02 * env_peak
            res = torch.cat([worst, frac, zd, m2.sqrt().flatten(), kurt, env_peak, score, (score > 1.0).float()])
        res.tolist()
        del raw, x, rec, z, err, worst, spec, freq, band, frac, zd, m2, kurt, hil, env, env_spec, env_peak, score, res

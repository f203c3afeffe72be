"""The hundred-and-thirty-sixth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py
to batch135_b.py are): quarries and stone and aggregate production, written in torch alone, first half. Blast design
training for fragmentation (a transformer encoder over the drilled holes of a blast as a set under a key mask, pooled
by learned queries; the muckpile's sieve curve against a Kuz-Ram curve computed on the device from the drawn design,
its median size and each hole's flyrock flag), cone crusher control training (a strided convolutional front end and
an LSTM cell written out step by step over the crusher's sensor logs of drawn lengths under a mask; the power a
window ahead, the choke risk and the closed-side setting move), haul truck dispatch training (a dueling double DQN
over quarries simulated on the device, a replay ring on the device and a Polyak-averaged target network) and rock face
hazard fine-tuning on drone imagery (a U-Net with a residual encoder, its stem and first two stages frozen; each
pixel's class, a soft Dice on the cracks and whether the face needs scaling).
Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device, `rng` the workload's
random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1
runs are tiny. No control flow reads a tensor's value: lengths, resolutions and batch sizes are fixed on the host,
padding handled by masks or by torch.where / masked_fill, no boolean-mask indexing; losses and metrics are read back
only at logging points. All four are single-stream. The models run under bf16 autocast. Every embedding table is sized
for the largest index that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new136.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and
for the CPU smoke run (RECORD_SMOKE=1).
"""

import math

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, PreNormBlock, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- blast design and fragmentation (set transformer)


class _QueryPool(_nn.Module):
    """Learned queries attending over the holes under the key mask, concatenated."""

    def __init__(self, d, heads, nq):
        super().__init__()
        self.h, self.nq = heads, nq
        self.q = _nn.Parameter(torch.randn(nq, d) * 0.02)
        self.q_proj, self.kv, self.proj = _nn.Linear(d, d), _nn.Linear(d, 2 * d), _nn.Linear(d, d)

    def forward(self, x, mask):
        b, t, d = x.shape
        k, v = self.kv(x).view(b, t, 2, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        q = self.q_proj(self.q).view(1, self.nq, self.h, d // self.h).transpose(1, 2).expand(b, -1, -1, -1)
        a = _F.scaled_dot_product_attention(q.to(k.dtype), k, v, attn_mask=mask)
        return self.proj(a.transpose(1, 2).reshape(b, self.nq, d)).flatten(1)


@_workload("blast design training for fragmentation (random init, a set transformer over the holes): 16-48 blasts a step (drawn), each of 24-160 drilled holes (drawn per blast, padded to the step's most rounded up to 8, at most 160) with 9 drawn design values (burden 2.5-5 m, spacing 1.1-1.3 burdens, diameter 89-165 mm, depth 10-20 m, stemming 2-4 m, drilling deviation, delay, position in the pattern) and the charge computed from them, the hole's row (of 8, by a table) and 6 rock values a blast; 4 pre-norm blocks of width 192, 6 heads, under a boolean key mask, 4 learned queries pooling by attention; targets computed on the device by the Kuz-Ram model (the median size from the rock factor, powder factor and charge, the uniformity index from burden, diameter, spacing, deviation and charge length, masked means over the holes, the Rosin-Rammler passing at 12 sieve sizes of 1-200 cm): the 13 size fractions by soft cross-entropy, the log median size by a Huber loss and each hole's flyrock flag (stemming under 0.7 burdens, with noise) by masked BCE; AdamW, clipping, bf16 autocast, 450 steps; the losses read back every 10 steps and every 75 steps a no-grad pass over 64 blasts of 160 holes with the median-size error read back")
def blast_kuzram_holeset_train(rng):
    f_raw, n_ctx, d, heads, layers = 9, 6, _smoke(192, 32), _smoke(6, 2), _smoke(4, 1)
    h_lo, h_hi, n_rows, nq = _smoke(24, 4), _smoke(160, 12), 8, 4
    sieve = torch.tensor([1.0, 2, 5, 10, 20, 30, 45, 60, 80, 100, 150, 200], device="cuda")
    n_bin = sieve.numel() + 1
    hole_in, ctx_in, row = _nn.Linear(f_raw + 1, d).cuda(), _nn.Linear(n_ctx, d).cuda(), _nn.Embedding(n_rows, d).cuda()
    blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers)).cuda()
    norm = _nn.LayerNorm(d).cuda()
    pool = _QueryPool(d, heads, nq).cuda()
    hole_head = mlp(d, d, 1, act=_nn.GELU).cuda()
    blast_head = mlp(nq * d, d, n_bin + 1, act=_nn.GELU).cuda()
    mods = _nn.ModuleList([hole_in, ctx_in, row, blocks, norm, pool, hole_head, blast_head])
    opt = torch.optim.AdamW(mods.parameters(), lr=3e-4, weight_decay=0.01)
    steps, every = _smoke(450, 3), _smoke(75, 2)

    def blasts(lens):
        b, t = len(lens), min(h_hi, -(-max(lens) // 8) * 8)
        keep = keep_mask(lens, t)
        w = keep.float()
        u = torch.rand(b, t, f_raw, device="cuda")
        burden, diam = 2.5 + 2.5 * u[..., 0], 0.089 + 0.076 * u[..., 2]
        spacing, depth = burden * (1.1 + 0.2 * u[..., 1]), 10.0 + 10.0 * u[..., 3]
        stem, dev = 2.0 + 2.0 * u[..., 4], 0.1 + 0.4 * u[..., 5]
        charge = (depth - stem) * (math.pi / 4) * diam.pow(2) * 1100.0
        x = torch.cat([u, (charge / 300.0)[..., None]], -1)
        rows = torch.randint(0, n_rows, (b, t), device="cuda")
        rock = torch.rand(b, n_ctx, device="cuda")
        a_fac = 4.0 + 10.0 * rock[:, :1]
        pf = charge / (burden * spacing * depth)
        x50 = a_fac * pf.pow(-0.8) * charge.pow(1.0 / 6.0) * (1.15 ** (19.0 / 30.0))
        n_u = ((2.2 - 14.0 * burden / (diam * 1000.0)) * (1.0 - dev / burden) * ((1.0 + spacing / burden) / 2).sqrt()
               * ((depth - stem) / depth)).clamp(0.5, 2.5)
        x50_b = (x50 * w).sum(1) / w.sum(1)
        n_b = (n_u * w).sum(1) / w.sum(1)
        passing = 1.0 - torch.exp(-0.693 * (sieve[None] / x50_b[:, None]).pow(n_b[:, None]))
        cum = torch.cat([torch.zeros(b, 1, device="cuda"), passing, torch.ones(b, 1, device="cuda")], 1)
        frac = (cum[:, 1:] - cum[:, :-1]).clamp_min(1e-6)
        fly = ((stem / burden + 0.1 * torch.randn(b, t, device="cuda")) < 0.7).float()
        return (x, rows, rock, keep), (frac / frac.sum(1, keepdim=True), x50_b.log(), fly, w)

    def run(x, rows, rock, keep):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = hole_in(x) + row(rows) + ctx_in(rock)[:, None]
            m = keep[:, None, None, :]
            for blk in blocks:
                h = blk(h, m)
            h = norm(h)
            out = blast_head(pool(h, m)).float()
            return hole_head(h).float()[..., 0], out[:, :n_bin], out[:, n_bin]

    for step in range(steps):
        mods.train()
        lens = [rng.randint(h_lo, h_hi) for _ in range(rng.randint(_smoke(16, 2), _smoke(48, 3)))]
        with torch.no_grad():
            inputs, (frac, lx50, fly, w) = blasts(lens)
        hole_out, bins, med = run(*inputs)
        l_frac = -(frac * bins.log_softmax(-1)).sum(-1).mean()
        l_med = _F.huber_loss(med, lx50)
        l_fly = (_F.binary_cross_entropy_with_logits(hole_out, fly, reduction="none") * w).sum() / w.sum()
        loss = l_frac + l_med + 0.5 * l_fly
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(mods.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_frac.detach(), l_med.detach(), l_fly.detach()]).tolist()
        del inputs, frac, lx50, fly, w, hole_out, bins, med, l_frac, l_med, l_fly, loss
        if (step + 1) % every == 0:
            mods.eval()
            with torch.no_grad():
                inputs, (frac, lx50, fly, w) = blasts([h_hi] * _smoke(64, 2))
                _, _, med = run(*inputs)
                err = (med - lx50).abs().mean()
            err.item()
            del inputs, frac, lx50, fly, w, med, err


# ---------------------------------------------------------------- cone crusher control (LSTM written out)


class _CrusherLSTM(_nn.Module):
    """Three strided 1-D convolutions (8x down), an LSTM cell (one Linear on the input and the state) written out
    step by step with the state held where a log has ended, and a per-step head."""

    def __init__(self, cin, d, hidden, n_out):
        super().__init__()
        self.front = _nn.Sequential(_nn.Conv1d(cin, d, 5, 2, 2), _nn.GELU(), _nn.Conv1d(d, d, 5, 2, 2), _nn.GELU(),
                                    _nn.Conv1d(d, d, 5, 2, 2))
        self.cell = _nn.Linear(d + hidden, 4 * hidden)
        self.hidden = hidden
        self.head = mlp(hidden, hidden, n_out, act=_nn.GELU)

    def forward(self, x, keep):
        z = self.front(x).transpose(1, 2)
        b, t, _ = z.shape
        h = torch.zeros(b, self.hidden, device=x.device)
        c = torch.zeros(b, self.hidden, device=x.device)
        outs = []
        for s in range(t):
            i, f, g, o = self.cell(torch.cat([z[:, s], h.to(z.dtype)], -1)).float().chunk(4, -1)
            c2 = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h2 = torch.sigmoid(o) * torch.tanh(c2)
            m = keep[:, s, None]
            c, h = torch.where(m, c2, c), torch.where(m, h2, h)
            outs.append(h2)
        return self.head(torch.stack(outs, 1)).float()


@_workload("cone crusher control training (random init, a strided 1-D convnet and an LSTM cell written out step by step): 32-96 crusher logs a step (drawn) of 192-512 one-second readings (drawn per step in multiples of 64; each log's own length from half to all of it, in multiples of 8, right-padded under a mask) of 8 channels (power, hydraulic pressure, closed-side setting, feed rate, chamber level, motor current, oil temperature, vibration) drawn as random walks on the device; three stride-2 convolutions to 128 channels (24-64 steps), an LSTM cell of 192 (one Linear on the input and the state, the state held by torch.where past each log's end), a per-step MLP head; targets from the logs themselves: the mean power of the next 8-second window by a Huber loss, the choke risk (the next window's mean chamber level above 1) by BCE and the setting move (of 5, from the next window's change of the setting) by cross-entropy, all masked; Adam, clipping, bf16 autocast, 145 steps; the losses read back every 10 steps and every 29 steps a no-grad pass over 128 logs of 512 readings with the move accuracy read back")
def cone_crusher_lstm_train(rng):
    cin, d, hidden, n_move = 8, _smoke(128, 16), _smoke(192, 16), 5
    t_lo, t_hi, unit = _smoke(192, 64), _smoke(512, 128), 64
    model = _CrusherLSTM(cin, d, hidden, 2 + n_move).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    steps, every = _smoke(145, 3), _smoke(29, 2)

    def logs(b, t, lens):
        x = torch.randn(b, cin, t, device="cuda").mul_(0.1).cumsum(-1)
        keep = keep_mask([ln // 8 for ln in lens], t // 8)
        win = _F.avg_pool1d(x, 8)
        ahead = torch.cat([win[..., 1:], win[..., -1:]], -1)
        power = ahead[:, 0]
        choke = (ahead[:, 4] > 1.0).float()
        move = ((ahead[:, 2] - win[:, 2]) / 0.1).round().clamp(-2, 2).long() + 2
        return x, keep, power, choke, move

    def losses(out, keep, power, choke, move):
        w = keep.float()
        n = w.sum()
        l_p = (_F.huber_loss(out[..., 0], power, reduction="none") * w).sum() / n
        l_c = (_F.binary_cross_entropy_with_logits(out[..., 1], choke, reduction="none") * w).sum() / n
        l_m = (_F.cross_entropy(out[..., 2:].transpose(1, 2), move, reduction="none") * w).sum() / n
        return l_p, l_c, l_m

    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(32, 2), _smoke(96, 3))
        t = rng.randint(t_lo // unit, t_hi // unit) * unit
        lens = [rng.randint(t // 16, t // 8) * 8 for _ in range(b)]
        with torch.no_grad():
            x, keep, power, choke, move = logs(b, t, lens)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(x, keep)
        l_p, l_c, l_m = losses(out, keep, power, choke, move)
        loss = l_p + l_c + l_m
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_p.detach(), l_c.detach(), l_m.detach()]).tolist()
        del x, keep, power, choke, move, out, l_p, l_c, l_m, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                x, keep, power, choke, move = logs(_smoke(128, 2), t_hi, [t_hi] * _smoke(128, 2))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    out = model(x, keep)
                acc = (out[..., 2:].argmax(-1) == move).float().mean()
            acc.item()
            del x, keep, power, choke, move, out, acc


# ---------------------------------------------------------------- haul truck dispatch (dueling double DQN)


class _DuelingQ(_nn.Module):
    def __init__(self, f, hidden, n_act):
        super().__init__()
        self.trunk = mlp(f, hidden, hidden, layers=3, act=_nn.SiLU, norm=True)
        self.value, self.adv = _nn.Linear(hidden, 1), _nn.Linear(hidden, n_act)

    def forward(self, obs, down):
        h = _F.silu(self.trunk(obs))
        a = self.adv(h).float()
        q = self.value(h).float() + a - a.mean(-1, keepdim=True)
        return q.masked_fill(down, -1e4)


@_workload("haul truck dispatch training (random init, a dueling double DQN): 256 quarries simulated on the device, each with 6 loading units (service rate and haul time to the crusher drawn once, face grade drifting, breakdowns and repairs drawn each step) and a primary crusher's surge bin; each step the truck that has just tipped is sent to a loading unit; 37 features (each unit's queue, rate, haul time, grade and down flag, the bin level, the truck's size of 3, the shift clock and its sine and cosine); reward the tonnes an hour of the cycle (queue wait, haul, loading) with a penalty while the bin runs low; a 3-layer MLP of 256 with layer norms and SiLU, value and advantage heads, the down units masked_fill'ed; epsilon-greedy actions (epsilon from the host's schedule; the random action by multinomial over the units that are up) by torch.where; 4-12 simulation steps an iteration (drawn) written into a 65,536-transition replay ring on the device at host-known slots, then 2-6 updates (drawn) of 256, 512 or 1,024 transitions (drawn) by randint from the filled part: double-DQN targets (gamma 0.97, the online net's masked argmax valued by the target net), Huber loss, Adam, clipping, a Polyak target update (0.01) per parameter; bf16 autocast, 240 iterations; the mean reward, the loss and the mean greedy Q read back every 20 iterations")
def haul_cycle_dqn_train(rng):
    envs, n_sh, n_size, hidden = _smoke(256, 4), 6, 3, _smoke(256, 16)
    f = 5 * n_sh + 2 + n_size + 2
    cap = envs * _smoke(256, 8)
    online = _DuelingQ(f, hidden, n_sh).cuda()
    target = _DuelingQ(f, hidden, n_sh).cuda()
    target.load_state_dict(online.state_dict())
    target.requires_grad_(False)
    opt = torch.optim.Adam(online.parameters(), lr=5e-4)
    gamma, tau, iters, log_every = 0.97, 0.01, _smoke(240, 3), _smoke(20, 1)
    rate = 0.5 + torch.rand(envs, n_sh, device="cuda")
    haul = 0.2 + torch.rand(envs, n_sh, device="cuda")
    grade = torch.rand(envs, n_sh, device="cuda")
    queue = torch.zeros(envs, n_sh, device="cuda")
    down = torch.zeros(envs, n_sh, dtype=torch.bool, device="cuda")
    bin_lvl = torch.full((envs,), 0.5, device="cuda")
    size = torch.randint(0, n_size, (envs,), device="cuda")
    buf_o = torch.zeros(cap, f, device="cuda")
    buf_d = torch.zeros(cap, n_sh, dtype=torch.bool, device="cuda")
    buf_a = torch.zeros(cap, dtype=torch.long, device="cuda")
    buf_r = torch.zeros(cap, device="cuda")
    buf_n = torch.zeros(cap, f, device="cuda")
    buf_nd = torch.zeros(cap, n_sh, dtype=torch.bool, device="cuda")
    pos, filled, clock, warm = 0, 0, 0, _smoke(4 * 256, 4)

    def observe(clock):
        ang = torch.full((envs, 1), 2 * math.pi * (clock % 96) / 96.0, device="cuda")
        return torch.cat([queue / 5.0, rate, haul, grade, down.float(), bin_lvl[:, None],
                          torch.full((envs, 1), (clock % 96) / 96.0, device="cuda"),
                          _F.one_hot(size, n_size).float(), ang.sin(), ang.cos()], -1)

    obs = observe(clock)
    for it in range(iters):
        eps = max(0.05, 1.0 - it / (0.6 * iters))
        n_sim, n_upd = rng.randint(_smoke(4, 1), _smoke(12, 2)), rng.randint(_smoke(2, 1), _smoke(6, 2))
        rewards = []
        with torch.no_grad():
            for _ in range(n_sim):
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    q = online(obs, down)
                buf_d[pos:pos + envs] = down
                rand_a = torch.multinomial((~down).float() + 1e-6, 1)[:, 0]
                act = torch.where(torch.rand(envs, device="cuda") < eps, rand_a, q.argmax(-1))
                pick = _F.one_hot(act, n_sh).float()
                p_down = (pick * down.float()).sum(-1)
                wait = (pick * queue).sum(-1) / (pick * rate).sum(-1)
                cycle = wait + 2.0 * (pick * haul).sum(-1) + 0.3 + 2.0 * p_down
                load = (size.float() + 1.0) * (1.0 - p_down)
                g = (pick * grade).sum(-1)
                r = load / cycle - 1.0 * (bin_lvl < 0.15).float()
                bin_lvl = (bin_lvl + 0.05 * load * g - 0.04).clamp(0.0, 1.0)
                queue = (queue + pick - rate * 0.4 * torch.rand(envs, n_sh, device="cuda")).clamp_min(0.0)
                grade = (grade + 0.02 * torch.randn(envs, n_sh, device="cuda")).clamp(0.0, 1.0)
                brk = torch.rand(envs, n_sh, device="cuda")
                down = torch.where(down, brk > 0.2, brk < 0.02)
                down[:, 0] = False
                size = torch.randint(0, n_size, (envs,), device="cuda")
                clock += 1
                nobs = observe(clock)
                buf_o[pos:pos + envs] = obs
                buf_a[pos:pos + envs] = act
                buf_r[pos:pos + envs] = r
                buf_n[pos:pos + envs] = nobs
                buf_nd[pos:pos + envs] = down
                pos, filled = (pos + envs) % cap, min(cap, filled + envs)
                rewards.append(r.mean())
                obs = nobs
        for _ in range(n_upd if filled >= warm else 0):
            bs = rng.choice([256, 512, 1024]) if _smoke(1, 0) else 8
            idx = torch.randint(0, filled, (bs,), device="cuda")
            o, nd = buf_o.index_select(0, idx), buf_nd.index_select(0, idx)
            n_o = buf_n.index_select(0, idx)
            with torch.no_grad():
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    a_star = online(n_o, nd).argmax(-1, keepdim=True)
                    q_next = target(n_o, nd).gather(1, a_star)[:, 0]
                y = buf_r.index_select(0, idx) + gamma * q_next
            with torch.autocast("cuda", dtype=torch.bfloat16):
                q_all = online(o, buf_d.index_select(0, idx))
            q_a = q_all.gather(1, buf_a.index_select(0, idx)[:, None])[:, 0]
            loss = _F.huber_loss(q_a, y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(online.parameters(), 10.0)
            opt.step()
            with torch.no_grad():
                for tp, p in zip(target.parameters(), online.parameters()):
                    tp.lerp_(p, tau)
            del idx, o, nd, n_o, a_star, q_next, y, q_all, q_a
        if it % log_every == 0 and filled >= warm:
            torch.stack([torch.stack(rewards).mean(), loss.detach(), q.amax(-1).mean()]).tolist()
        del rewards, q, rand_a, act, pick, p_down, wait, cycle, load, g, r, brk, nobs


# ---------------------------------------------------------------- rock face hazards from drone imagery (U-Net)


class _FaceUNet(_nn.Module):
    """A U-Net: a stride-2 3x3 stem, four residual stages (1/2 to 1/16), a decoder of nearest upsampling, the
    skip concatenated and a 3x3 convolution with batch norm at each level, a 1x1 class head upsampled bilinearly to
    the full resolution, and an image-level head on the pooled deepest features."""

    def __init__(self, w, n_cls):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, w[0], 3, 2, 1, bias=False), _nn.BatchNorm2d(w[0]), _nn.ReLU())
        self.enc = _nn.ModuleList([BasicResBlock(w[0], w[0], 1)] +
                                  [BasicResBlock(w[i - 1], w[i], 2) for i in range(1, len(w))])
        self.dec = _nn.ModuleList(_nn.Sequential(_nn.Conv2d(w[i + 1] + w[i], w[i], 3, 1, 1, bias=False),
                                                 _nn.BatchNorm2d(w[i]), _nn.ReLU()) for i in range(len(w) - 1))
        self.seg = _nn.Conv2d(w[0], n_cls, 1)
        self.scaling = mlp(w[-1], w[-1], 1, act=_nn.ReLU)

    def forward(self, x):
        h, feats = self.stem(x), []
        for e in self.enc:
            h = e(h)
            feats.append(h)
        y = feats[-1]
        for i in reversed(range(len(self.dec))):
            y = self.dec[i](torch.cat([_F.interpolate(y, scale_factor=2, mode="nearest"), feats[i]], 1))
        seg = _F.interpolate(self.seg(y), scale_factor=2, mode="bilinear", align_corners=False)
        return seg.float(), self.scaling(feats[-1].mean((2, 3))).float()[:, 0]


@_workload("rock face hazard fine-tuning on drone imagery (random init standing in for a pretrained encoder, a U-Net): 4-12 drone photos of quarry faces a step (drawn) at 256 x 256, 256 x 384, 320 x 480 or 384 x 512 px (drawn per step), drawn on the device in channels_last; a stride-2 stem (32 channels) and four residual stages of one basic block (32, 64, 128, 256; 1/2 to 1/16), the stem and first two stages frozen in eval mode; a decoder of nearest upsampling, skip concatenation and 3x3 convolutions with batch norm, a 1x1 head of 5 classes (intact rock, crack or open joint, loose block or overhang, vegetation, bench floor and scree) upsampled bilinearly to the full resolution; labels as blobs drawn at 1/16 and upsampled nearest; per-pixel cross-entropy with class weights, a soft Dice loss on the crack class, and from the pooled deepest features whether the face needs scaling by BCE; AdamW in two parameter groups (the trained encoder stages, the decoder and heads) with a linear warm-up set by hand, bf16 autocast, 1,080 steps; the losses read back every 10 steps and every 270 steps a no-grad pass over 8 photos of 384 x 512 with the crack IoU read back")
def rockface_hazard_unet_finetune(rng):
    widths = (_smoke(32, 8), _smoke(64, 8), _smoke(128, 16), _smoke(256, 16))
    n_cls = 5
    res = [(256, 256), (256, 384), (320, 480), (384, 512)] if _smoke(1, 0) else [(64, 64), (64, 96)]
    model = _FaceUNet(widths, n_cls).cuda().to(memory_format=torch.channels_last)
    frozen = [model.stem, model.enc[0], model.enc[1]]
    for m in frozen:
        m.requires_grad_(False)
    enc_p = list(model.enc[2].parameters()) + list(model.enc[3].parameters())
    head_p = list(model.dec.parameters()) + list(model.seg.parameters()) + list(model.scaling.parameters())
    groups = [dict(params=enc_p, lr=1e-4), dict(params=head_p, lr=1e-3)]
    base = [g["lr"] for g in groups]
    opt = torch.optim.AdamW(groups, lr=1e-3, weight_decay=0.01)
    cls_w = torch.tensor([0.5, 3.0, 2.0, 0.5, 0.5], device="cuda")
    steps, every, warm = _smoke(1080, 3), _smoke(270, 2), _smoke(40, 1)

    def photos(b, h, w):
        x = torch.randn(b, 3, h, w, device="cuda").contiguous(memory_format=torch.channels_last)
        coarse = torch.randint(0, n_cls, (b, 1, h // 16, w // 16), device="cuda").float()
        lab = _F.interpolate(coarse, size=(h, w), mode="nearest")[:, 0].long()
        scale = (torch.rand(b, device="cuda") < 0.3).float()
        return x, lab, scale

    for step in range(steps):
        model.train()
        for m in frozen:
            m.eval()
        for g, lr in zip(opt.param_groups, base):
            g["lr"] = lr * min(1.0, (step + 1) / warm)
        b = rng.randint(_smoke(4, 1), _smoke(12, 2))
        h, w = rng.choice(res)
        x, lab, scale = photos(b, h, w)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            seg, sc = model(x)
        l_ce = _F.cross_entropy(seg, lab, weight=cls_w)
        crack = seg.softmax(1)[:, 1]
        tgt = (lab == 1).float()
        l_dice = 1.0 - (2.0 * (crack * tgt).sum((1, 2)) + 1.0) / (crack.sum((1, 2)) + tgt.sum((1, 2)) + 1.0)
        l_dice = l_dice.mean()
        l_sc = _F.binary_cross_entropy_with_logits(sc, scale)
        loss = l_ce + l_dice + 0.3 * l_sc
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 10 == 0:
            torch.stack([l_ce.detach(), l_dice.detach(), l_sc.detach()]).tolist()
        del x, lab, scale, seg, sc, l_ce, crack, tgt, l_dice, l_sc, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                h, w = res[-1]
                x, lab, scale = photos(_smoke(8, 1), h, w)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    seg, sc = model(x)
                pred, tgt = (seg.argmax(1) == 1).float(), (lab == 1).float()
                inter = (pred * tgt).sum()
                iou = inter / (pred.sum() + tgt.sum() - inter + 1.0)
            iou.item()
            del x, lab, scale, seg, sc, pred, tgt, inter, iou

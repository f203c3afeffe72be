"""The hundred-and-seventh batch of held-out workloads for record.py, kept in a file of their own (as batch16.py
onward are): water utilities and wastewater treatment, written in torch alone, first half. Pipe-leak detection
training on acoustic sensor pairs (STFT log-mel spectrograms of two sensors of drawn durations, a convolutional
front end and a transformer under a frame key mask, GCC-PHAT lag features, leak, leak-type and leak-position heads),
distribution-network hydraulic surrogate training (an edge-conditioned message-passing network by index_select and
index_add over drawn sub-networks of junctions, tanks and reservoirs, node heads and pipe flows with continuity and
Hazen-Williams head-loss residuals), activated-sludge aeration control training (a GRU world model written out step by
step over sensor histories of drawn lengths, an actor trained through imagined rollouts of drawn horizons) and a sewer
CCTV defect-inspection service (a residual convnet over crawler-camera frames of drawn resolutions, multi-label defect
codes, severity grades and coarse defect maps, each pipe segment's worst grades kept on the device by scatter_reduce).
Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths,
resolutions and batch sizes are fixed on the host, padding handled by masks multiplied in or by torch.where /
masked_fill, no boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
sewer_cctv_defect_serve uploads its frames on a side stream (workload_helpers.SideUploads, its `ahead` loop); the
other three are single-stream. The models run under bf16 autocast (the STFT and GCC-PHAT in fp32). Every position
table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new107.sh's header.
"""

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, PreNormBlock, SideUploads, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- pipe-leak detection from acoustic sensor pairs


class _LeakNet(_nn.Module):
    """Log-mel spectrograms of both sensors as two channels, convolutions strided along frequency only, the
    remaining frequency bins flattened into each frame's token, a frame-position table, pre-norm blocks under a key
    mask, a masked mean; the GCC-PHAT lag curve through an MLP joined to the pooled frames; leak, leak-type and
    leak-position heads."""

    def __init__(self, n_mel, widths, d, heads, layers, max_frames, n_types, n_lag):
        super().__init__()
        mods, c = [], 2
        for w in widths:
            mods += [_nn.Conv2d(c, w, 3, (2, 1), 1, bias=False), _nn.BatchNorm2d(w), _nn.GELU()]
            c = w
        self.conv = _nn.Sequential(*mods)
        self.proj = _nn.Linear(c * (n_mel // 2 ** len(widths)), d)
        self.pos = _nn.Embedding(max_frames, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.lag = mlp(n_lag, 128, d, act=_nn.GELU)
        self.leak, self.kind = _nn.Linear(2 * d, 1), _nn.Linear(2 * d, n_types)
        self.where = mlp(2 * d, d, 1, act=_nn.GELU)

    def forward(self, spec, keep, gcc):
        z = self.conv(spec)
        b, c, f, t = z.shape
        x = self.proj(z.permute(0, 3, 1, 2).reshape(b, t, c * f)) + self.pos(torch.arange(t, device=z.device))[None]
        for blk in self.blocks:
            x = blk(x, mask=keep[:, None, None, :])
        w = keep[..., None].to(x.dtype)
        pooled = (self.norm(x) * w).sum(1) / w.sum(1).clamp(min=1)
        h = torch.cat([pooled, self.lag(gcc).to(pooled.dtype)], -1)
        return self.leak(h)[..., 0].float(), self.kind(h).float(), torch.sigmoid(self.where(h)[..., 0].float())


@_workload("pipe-leak detection training on acoustic sensor pairs (random init, a conv front end and a transformer): 16-48 recordings a step (drawn), each from two sensors on one pipe at 8 kHz, 64-256 STFT frames long (drawn per recording, 2-8 s; the step padded to its longest rounded up to a multiple of 16 frames, samples past each recording's end zeroed), drawn on the device; a 512-point STFT (hop 256, Hann window, fp32), power through a fixed 64-band non-negative filter bank, log; GCC-PHAT of the two sensors over each recording's frames (cross-spectrum summed under the frame mask, phase-normalised, inverse FFT, lags -32..32); three conv layers (32/64/128 channels, 3x3, stride 2 along frequency only, batch norm, GELU), the 8 remaining bins flattened into a 256-wide frame token with a 256-row position table, 4 pre-norm blocks (4 heads) under a frame key mask, a masked mean joined to a 2-layer MLP of the lag curve; a leak logit (binary cross-entropy), 6 leak types (cross-entropy on leaking pipes only) and the leak position along the pipe (squared error on leaking pipes only); AdamW, clipping, bf16 autocast, 470 steps; the three losses read back every 20 steps and every 118 steps a no-grad evaluation of 32 recordings of 256 frames with leak accuracy read back")
def pipe_leak_acoustic_train(rng):
    n_fft, hop, n_mel, h_lag = _smoke(512, 64), _smoke(256, 32), _smoke(64, 16), _smoke(32, 4)
    widths, d, heads, layers = _smoke([32, 64, 128], [8, 8]), _smoke(256, 32), _smoke(4, 2), _smoke(4, 1)
    lo, hi, n_types = _smoke(64, 8), _smoke(256, 24), 6
    max_frames = -(-hi // 16) * 16  # the longest padded recording
    model = _LeakNet(n_mel, widths, d, heads, layers, max_frames, n_types, 2 * h_lag + 1).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    window = torch.hann_window(n_fft, device="cuda")
    fbank = torch.rand(n_mel, n_fft // 2 + 1, device="cuda") ** 4

    def recordings(lengths):
        b, t = len(lengths), -(-max(lengths) // 16) * 16
        n = (t - 1) * hop
        wave = torch.randn(b, 2, n, device="cuda") * keep_mask([ln * hop for ln in lengths], n)[:, None].float()
        keep = keep_mask(lengths, t)
        spec = torch.stft(wave.flatten(0, 1), n_fft, hop, window=window, return_complex=True)  # (2b, bins, t)
        mel = torch.log(torch.einsum("mf,nft->nmt", fbank, spec.abs() ** 2) + 1e-6).view(b, 2, n_mel, t)
        spec = spec.view(b, 2, n_fft // 2 + 1, t)
        cross = (spec[:, 0] * spec[:, 1].conj() * keep[:, None].float()).sum(-1)
        cc = torch.fft.irfft(cross / cross.abs().clamp(min=1e-8), n=n_fft)
        gcc = torch.cat([cc[:, -h_lag:], cc[:, :h_lag + 1]], -1)
        leak = (torch.rand(b, device="cuda") < 0.4).float()
        kind = torch.randint(0, n_types, (b,), device="cuda")
        where = torch.rand(b, device="cuda")
        return mel, keep, gcc, leak, kind, where

    steps = _smoke(470, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(16, 2), _smoke(48, 4))
        mel, keep, gcc, leak, kind, where = recordings([rng.randint(lo, hi) for _ in range(b)])
        with torch.autocast("cuda", dtype=torch.bfloat16):
            l_log, k_log, w_pred = model(mel, keep, gcc)
        l_leak = _F.binary_cross_entropy_with_logits(l_log, leak)
        n_leak = leak.sum().clamp(min=1)
        l_kind = (_F.cross_entropy(k_log, kind, reduction="none") * leak).sum() / n_leak
        l_where = ((w_pred - where) ** 2 * leak).sum() / n_leak
        loss = l_leak + l_kind + l_where
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_leak.detach(), l_kind.detach(), l_where.detach()]).tolist()
        del mel, keep, gcc, leak, kind, where, l_log, k_log, w_pred, l_leak, n_leak, l_kind, l_where, loss
        if (step + 1) % _smoke(118, 2) == 0:
            model.eval()
            with torch.no_grad():
                mel, keep, gcc, leak, kind, where = recordings([hi] * _smoke(32, 2))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    l_log, _, _ = model(mel, keep, gcc)
                acc = ((l_log > 0).float() == leak).float().mean()
            acc.item()
            del mel, keep, gcc, leak, kind, where, l_log, acc


# ---------------------------------------------------------------- distribution-network hydraulic surrogate (graph net)


class _HydraulicGNN(_nn.Module):
    """Node and pipe encoders, message-passing layers (messages from both ends of each open pipe, summed into both
    end nodes by index_add), node-head and pipe-flow decoders."""

    def __init__(self, d_node, d_edge, d, layers):
        super().__init__()
        self.enc_n, self.enc_e = mlp(d_node, d, d, norm=True), mlp(d_edge, d, d, norm=True)
        self.msg = _nn.ModuleList(mlp(3 * d, d, d, act=_nn.SiLU) for _ in range(layers))
        self.upd = _nn.ModuleList(mlp(2 * d, d, d, act=_nn.SiLU) for _ in range(layers))
        self.norms = _nn.ModuleList(_nn.LayerNorm(d) for _ in range(layers))
        self.head, self.flow = mlp(d, d, 1), mlp(d, d, 1)

    def forward(self, xn, xe, src, dst, open_):
        h, e = self.enc_n(xn), self.enc_e(xe)
        n = h.shape[0]
        for msg, upd, norm in zip(self.msg, self.upd, self.norms):
            m = msg(torch.cat([h.index_select(0, src), h.index_select(0, dst), e], -1))
            m = torch.where(open_[:, None], m, torch.zeros_like(m))  # closed pipes carry nothing
            e = e + m
            mf = m.float()
            agg = torch.zeros(n, m.shape[1], device=h.device).index_add_(0, dst, mf).index_add_(0, src, mf)
            h = h + upd(torch.cat([norm(h), agg.to(h.dtype)], -1))
        return self.head(h)[..., 0].float(), self.flow(e)[..., 0].float()


@_workload("water distribution-network hydraulic surrogate training (random init, an edge-conditioned graph net by index_select and index_add): a drawn sub-network per step of 8,000-40,000 nodes (junctions, tanks and reservoirs, drawn 94/3/3 percent) and 1.1-1.4 pipes per node (drawn), each pipe joining a node to one 1-63 places further on (wrapping), 3 percent closed; 7 node features (elevation, base demand, demand multiplier, fixed head, type one-hot) and 7 pipe features (length, diameter, Hazen-Williams C, minor-loss coefficient, pipe/pump/valve one-hot) drawn on the device; width 128, 6 message-passing layers (2-layer SiLU message MLP over both end nodes and the pipe state, closed pipes masked by torch.where, messages summed into both end nodes by index_add in fp32, a residual node update); node heads and pipe flows against drawn targets (squared error) plus a continuity residual at junctions (inflow minus outflow minus demand, by index_add) and a Hazen-Williams head-loss residual on open pipes of the pipe type (pumps and valves excluded); AdamW, clipping, bf16 autocast, 440 steps; the losses read back every 20 steps and every 110 steps a no-grad evaluation on a 40,000-node network of 1.25 pipes per node with the largest continuity residual read back")
def hydraulic_gnn_surrogate_train(rng):
    d, layers = _smoke(128, 16), _smoke(6, 2)
    model = _HydraulicGNN(7, 7, d, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    lo, hi = _smoke(8000, 100), _smoke(40000, 300)

    def network(n, per_node):
        e = int(n * per_node)
        kind = torch.bucketize(torch.rand(n, device="cuda"), torch.tensor([0.94, 0.97], device="cuda"))
        onehot = _F.one_hot(kind, 3).float()
        fixed = torch.rand(n, 1, device="cuda") * 60 * onehot[:, 2:]
        demand = torch.rand(n, 1, device="cuda") * onehot[:, :1]
        xn = torch.cat([torch.randn(n, 1, device="cuda"), demand, torch.rand(n, 1, device="cuda") + 0.5, fixed,
                        onehot], 1)
        src = torch.randint(0, n, (e,), device="cuda")
        dst = (src + torch.randint(1, 64, (e,), device="cuda")) % n
        length = torch.rand(e, device="cuda") * 4 + 1
        diam = torch.rand(e, device="cuda") * 0.5 + 0.1
        c_hw = torch.rand(e, device="cuda") * 70 + 80
        etype = _F.one_hot(torch.bucketize(torch.rand(e, device="cuda"), torch.tensor([0.96, 0.98], device="cuda")),
                           3).float()
        xe = torch.cat([length[:, None], diam[:, None], c_hw[:, None] / 100, torch.rand(e, 1, device="cuda"), etype], 1)
        open_ = torch.rand(e, device="cuda") > 0.03
        head_t, flow_t = torch.randn(n, device="cuda"), torch.randn(e, device="cuda")
        return xn, xe, src, dst, open_, onehot, demand[:, 0], length, diam, c_hw, etype, head_t, flow_t

    def residuals(head, flow, n, src, dst, open_, onehot, demand, length, diam, c_hw, etype):
        inflow = torch.zeros(n, device="cuda").index_add_(0, dst, flow)
        outflow = torch.zeros(n, device="cuda").index_add_(0, src, flow)
        cont = (inflow - outflow - demand) * onehot[:, 0]
        loss_hw = 0.01 * length * flow.abs().pow(1.852) * flow.sign() / (c_hw / 100).pow(1.852) / diam.pow(4.87)
        pipe = open_.float() * etype[:, 0]
        hl = (head.index_select(0, src) - head.index_select(0, dst) - loss_hw) * pipe
        return cont, hl

    steps = _smoke(440, 3)
    for step in range(steps):
        model.train()
        n = rng.randint(lo, hi)
        xn, xe, src, dst, open_, onehot, demand, length, diam, c_hw, etype, head_t, flow_t = network(
            n, rng.uniform(1.1, 1.4))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            head, flow = model(xn, xe, src, dst, open_)
        cont, hl = residuals(head, flow, n, src, dst, open_, onehot, demand, length, diam, c_hw, etype)
        l_sup = _F.mse_loss(head, head_t) + _F.mse_loss(flow, flow_t)
        l_phys = cont.pow(2).mean() + hl.pow(2).mean()
        loss = l_sup + 0.1 * l_phys
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_sup.detach(), l_phys.detach()]).tolist()
        del xn, xe, src, dst, open_, onehot, demand, length, diam, c_hw, etype, head_t, flow_t, head, flow
        del cont, hl, l_sup, l_phys, loss
        if (step + 1) % _smoke(110, 2) == 0:
            model.eval()
            with torch.no_grad():
                xn, xe, src, dst, open_, onehot, demand, length, diam, c_hw, etype, _, _ = network(hi, 1.25)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    head, flow = model(xn, xe, src, dst, open_)
                cont, _ = residuals(head, flow, hi, src, dst, open_, onehot, demand, length, diam, c_hw, etype)
                worst = cont.abs().max()
            worst.item()
            del xn, xe, src, dst, open_, onehot, demand, length, diam, c_hw, etype, head, flow, cont, worst


# ---------------------------------------------------------------- activated-sludge aeration control (world model)


class _GRUStep(_nn.Module):
    """One GRU update written out: reset and update gates, the candidate state from the reset-gated hidden part."""

    def __init__(self, din, d):
        super().__init__()
        self.x, self.h = _nn.Linear(din, 3 * d), _nn.Linear(d, 3 * d)

    def forward(self, x, h):
        xr, xz, xn = self.x(x).chunk(3, -1)
        hr, hz, hn = self.h(h).chunk(3, -1)
        r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
        return (1 - z) * torch.tanh(xn + r * hn) + z * h


class _PlantModel(_nn.Module):
    """A recurrent world model of a plant's sensors under blower and recycle actions (the next sensor change
    predicted from the state and the action), and an actor giving set-points from the state."""

    def __init__(self, n_obs, n_act, d):
        super().__init__()
        self.cell = _GRUStep(n_obs + n_act, d)
        self.pred = mlp(d + n_act, d, n_obs, act=_nn.SiLU)
        self.actor = mlp(d, d, n_act, layers=3, act=_nn.SiLU)
        self.h0 = _nn.Parameter(torch.zeros(d))

    def predict(self, h, a):
        return self.pred(torch.cat([h, a], -1))


@_workload("activated-sludge aeration control training (random init, a GRU world model written out step by step and an actor trained through imagined rollouts): 128-512 plant histories a step (drawn) of 10 sensor channels (dissolved oxygen in three zones, ammonium, nitrate, inflow, temperature, MLSS, airflow, pH) and 4 actions (three blower set-points and the internal recycle), 16-48 steps long (the step's length drawn, each history's own length drawn between 8 and it, updates past a history's end held by torch.where), drawn on the device; a 256-wide GRU cell (gates written out) over observation and action, a 2-layer SiLU head predicting the next sensor change (masked squared error, teacher forced) trained by Adam; then from each history's final state (detached) an imagined rollout of 4-12 steps (drawn): a 3-layer actor's sigmoid set-points, the predicted sensors fed back through the cell, cost = blower energy times a drawn tariff plus softplus penalties for ammonium above 0.6 and oxygen below 0.3 (standardised units), discounted by 0.97, backpropagated into the actor alone (a second Adam); bf16 autocast, 103 steps; both losses read back every 10 steps")
def aeration_control_mbrl_train(rng):
    n_obs, n_act, d = 10, 4, _smoke(256, 16)
    model = _PlantModel(n_obs, n_act, d).cuda()
    world = list(model.cell.parameters()) + list(model.pred.parameters()) + [model.h0]
    opt_w = torch.optim.Adam(world, lr=3e-4)
    opt_a = torch.optim.Adam(model.actor.parameters(), lr=1e-4)
    steps = _smoke(103, 3)
    for step in range(steps):
        b = rng.randint(_smoke(128, 2), _smoke(512, 4))
        t = rng.randint(_smoke(16, 3), _smoke(48, 5))
        lengths = [rng.randint(min(8, t), t) for _ in range(b)]
        horizon = rng.randint(_smoke(4, 2), _smoke(12, 3))
        obs = torch.randn(b, t + 1, n_obs, device="cuda")
        act = torch.rand(b, t, n_act, device="cuda")
        keep = keep_mask(lengths, t)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = model.h0[None].expand(b, d)
            err = []
            for i in range(t):
                pred = model.predict(h, act[:, i])
                err.append(((pred.float() - (obs[:, i + 1] - obs[:, i])) ** 2).mean(-1))
                h = torch.where(keep[:, i, None], model.cell(torch.cat([obs[:, i], act[:, i]], -1), h), h)
        w = keep.float()
        l_world = (torch.stack(err, 1) * w).sum() / w.sum()
        opt_w.zero_grad(set_to_none=True)
        l_world.backward()
        opt_w.step()
        tariff = torch.rand(b, horizon, device="cuda") + 0.5
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = h.detach()
            o = obs[torch.arange(b, device="cuda"), torch.tensor(lengths, device="cuda")]
            cost = 0.0
            for i in range(horizon):
                a = torch.sigmoid(model.actor(h))
                o = o + model.predict(h, a).float()
                energy = a[:, :3].float().sum(-1) * tariff[:, i]
                penalty = _F.softplus(o[:, 3] - 0.6) * 5 + _F.softplus(0.3 - o[:, :3]).sum(-1) * 2
                cost = cost + 0.97 ** i * (energy + penalty)
                h = model.cell(torch.cat([o, a.float()], -1), h)
        l_actor = cost.mean() / horizon
        opt_a.zero_grad(set_to_none=True)
        l_actor.backward()
        opt_a.step()
        opt_w.zero_grad(set_to_none=True)  # the rollout's gradients in the world model are dropped
        if step % 10 == 0:
            torch.stack([l_world.detach(), l_actor.detach()]).tolist()
        del obs, act, keep, h, err, pred, w, l_world, tariff, o, cost, a, energy, penalty, l_actor


# ---------------------------------------------------------------- sewer CCTV defect-inspection service


class _SewerNet(_nn.Module):
    """A residual convnet (stem with max-pool, four stages of two basic blocks), global pooling; multi-label
    defect-code logits, severity-grade logits per code and a 1/32-resolution defect map per code."""

    def __init__(self, widths, n_codes, n_grades):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, widths[0], 7, 2, 3, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU(), _nn.MaxPool2d(3, 2, 1))
        blocks, c = [], widths[0]
        for i, w in enumerate(widths):
            blocks += [BasicResBlock(c, w, 1 if i == 0 else 2), BasicResBlock(w, w, 1)]
            c = w
        self.body = _nn.Sequential(*blocks)
        self.codes, self.grades = _nn.Linear(c, n_codes), _nn.Linear(c, n_codes * n_grades)
        self.map = _nn.Conv2d(c, n_codes, 1)
        self.n_codes = n_codes

    def forward(self, x):
        f = self.body(self.stem(x))
        g = f.mean((2, 3))
        return self.codes(g).float(), self.grades(g).float().unflatten(1, (self.n_codes, -1)), self.map(f).float()


@_workload("sewer CCTV defect-inspection serving (random init, a residual convnet): 2,100-2,200 requests (drawn) of 1-8 frames each (drawn) from one pipe segment (of 2,000, drawn) filmed by one crawler (of 24, drawn), the crawler's camera resolution one of 288 x 352, 480 x 640 and 576 x 720 (fixed per crawler, drawn once); uint8 frames uploaded on a side stream from two reused pinned host buffers (filled once, sized for 8 frames of 576 x 720) one request ahead through SideUploads.ahead (one span, waited on by event, record_stream'ed), normalised on the device; a channels-last ResNet-style convnet (7x7 stride-2 stem of 32 and max-pool, four stages of two basic blocks of 32/64/128/256 channels) under bf16 autocast; 14 multi-label defect codes (sigmoid), 5 severity grades per code (softmax, expected grade weighted by the code's probability), a 1/32-resolution map per code whose peak cell gives the defect's position in the frame; each segment's worst probability-weighted expected grade per code kept on the device by scatter_reduce (amax) and its inspected-frame count by index_add; each request's per-frame code probabilities, peak positions, the segment's worst grades and frame count read back")
def sewer_cctv_defect_serve(rng):
    widths, n_codes, n_grades = _smoke([32, 64, 128, 256], [8, 8, 16, 16]), 14, 5
    model = _SewerNet(widths, n_codes, n_grades).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    sizes = _smoke([(288, 352), (480, 640), (576, 720)], [(64, 64), (64, 96)])
    n_crawl, n_seg, max_frames = _smoke(24, 3), _smoke(2000, 20), _smoke(8, 2)
    crawl_size = [rng.choice(sizes) for _ in range(n_crawl)]
    big = max(h * w for h, w in sizes) * 3
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_frames * big,), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    mean = torch.tensor([0.38, 0.36, 0.33], device="cuda").view(1, 3, 1, 1) * 255
    std = torch.tensor([0.2, 0.2, 0.19], device="cuda").view(1, 3, 1, 1) * 255
    worst = torch.zeros(n_seg * n_codes, device="cuda")
    frames_seen = torch.zeros(n_seg, device="cuda")
    grade_values = torch.arange(1, n_grades + 1, device="cuda").float()
    code_ids = torch.arange(n_codes, device="cuda")
    nreq = rng.randint(_smoke(2100, 3), _smoke(2200, 4))
    plan = []
    for _ in range(nreq):
        crawler = rng.randrange(n_crawl)
        plan.append((rng.randrange(n_seg), rng.randint(1, max_frames), *crawl_size[crawler]))

    def spans(p):
        return (p[1] * 3 * p[2] * p[3],)

    for (seg, f, h, w), raw in up.ahead(plan, spans):
        with torch.no_grad():
            x = raw.view(f, 3, h, w).float().sub_(mean).div_(std).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                codes, grades, dmap = model(x)
            p = torch.sigmoid(codes)
            expected = (grades.softmax(-1) * grade_values).sum(-1) * p  # (f, codes)
            peak = dmap.flatten(2).argmax(-1).float()  # (f, codes) cell index in the map
            worst.scatter_reduce_(0, code_ids + seg * n_codes, expected.amax(0), "amax")
            seg_t = torch.full((1,), seg, device="cuda", dtype=torch.long)
            frames_seen.index_add_(0, seg_t, torch.full((1,), float(f), device="cuda"))
            out = torch.cat([p.flatten(), peak.flatten(), worst[seg * n_codes:(seg + 1) * n_codes],
                             frames_seen.index_select(0, seg_t)])
        out.tolist()
        del raw, x, codes, grades, dmap, p, expected, peak, seg_t, out

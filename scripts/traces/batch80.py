"""The eightieth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch79_b.py are): aerospace and aviation, written in torch alone, first half. Air-traffic trajectory prediction (a
temporal transformer over each aircraft's track history of drawn length, a social transformer across the aircraft of a
scene masked to the real count, multi-modal future tracks by a winner-takes-all loss), turbofan engine prognostics
(remaining useful life from C-MAPSS-like multivariate sensor windows of drawn lengths cut from a simulated degrading
fleet, a 1D convolution front end and a two-layer LSTM unrolled by hand, an asymmetric RUL loss and the NASA score at
evaluation points), a MeshGraphNets-style aerodynamic surrogate over airfoil meshes of drawn node counts (encoder,
message passing by index_add over the edges, a decoder of velocity and pressure) and a satellite telemetry anomaly
detection service (telemetry windows of drawn sizes uploaded on a side stream, a dilated temporal convolution and
transformer autoencoder, reconstruction errors normalised by running per-channel statistics, persistence of
exceedances by pooling). Same conventions as the earlier batches: nothing downloaded, data drawn at random on the
device (or, for the telemetry service, from two reused pinned host buffers), `rng` the workload's random.Random for
every shape, count and sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No
control flow reads a tensor's value: batch sizes, track lengths, aircraft counts, window lengths and mesh sizes are
fixed on the host, padding handled by masks multiplied in or by torch.where / masked_fill, no boolean-mask indexing;
losses, metrics and anomaly flags are read back only at logging points. sat_telemetry_anomaly_serve uses a side stream
(uploads waited on by event, the tensors record_stream'ed); the others are single-stream. The networks run under bf16
autocast, and every workload that calls scaled_dot_product_attention runs under sdpa_kernel restricted to the flash,
memory-efficient and math backends (never cuDNN's).

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new80.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and for
which of them the CPU smoke run (RECORD_SMOKE=1) ran.
"""

import math

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, mlp, randint

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn
_BACKENDS = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]


def _keybias(mask, dtype):
    """An additive key-padding bias (N, 1, 1, T) from a 0/1 mask (N, T)."""
    return ((1 - mask) * -1e4)[:, None, None, :].to(dtype)


# ---------------------------------------------------------------- air-traffic trajectory prediction


class _TrafficNet(_nn.Module):
    """Per-aircraft temporal encoder, social attention across a scene's aircraft, a multi-modal trajectory decoder."""

    def __init__(self, feats, d, heads, t_layers, s_layers, maxlen, modes, horizon):
        super().__init__()
        self.modes, self.horizon = modes, horizon
        self.inp = mlp(feats, d, d, layers=2, act=_nn.GELU)
        self.pos = _nn.Embedding(maxlen, d)
        self.temporal = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(t_layers))
        self.social = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(s_layers))
        self.ac_emb = _nn.Embedding(6, d)
        self.norm = _nn.LayerNorm(d)
        self.traj = mlp(d, 2 * d, modes * horizon * 3, layers=2, act=_nn.GELU)
        self.conf = _nn.Linear(d, modes)

    def forward(self, tracks, tmask, ac_type, amask):
        """tracks (B, A, T, F), tmask (B, A, T), ac_type (B, A), amask (B, A): trajectories (B, A, M, H, 3), mode
        logits (B, A, M)."""
        b, a, t, _ = tracks.shape
        h = self.inp(tracks.flatten(0, 1)) + self.pos(torch.arange(t, device=tracks.device))
        m = tmask.flatten(0, 1)
        bias = _keybias(m, h.dtype)
        for blk in self.temporal:
            h = blk(h, mask=bias)
        w = m[..., None].to(h.dtype)
        last = (h * w).sum(1) / w.sum(1).clamp(min=1)
        s = last.view(b, a, -1) + self.ac_emb(ac_type)
        sbias = _keybias(amask, s.dtype)
        for blk in self.social:
            s = blk(s, mask=sbias)
        s = self.norm(s)
        traj = self.traj(s).view(b, a, self.modes, self.horizon, 3).float()
        return traj.cumsum(3), self.conf(s).float()


@_workload("air-traffic trajectory prediction training (random init, terminal-area scenes): 8-24 scenes a step (drawn, a multiple of 4) of 8-40 aircraft slots (drawn per step, the real count per scene drawn and masked) with track histories of 16-64 radar/ADS-B updates (drawn per step, each aircraft's real history length drawn and masked, right-aligned) of 8 features (position and altitude relative to the latest update, ground and vertical velocity, heading sine and cosine), an aircraft-type embedding; a 3-block temporal transformer per aircraft (width 192, 6 heads, key-padding mask), masked mean pooling, a 2-block social transformer across the scene's aircraft under the aircraft mask, 6 modes x 30 future displacements (cumulative sum) and mode logits; a winner-takes-all smooth-L1 loss on the best mode plus mode cross-entropy, masked to the real aircraft; AdamW with warmup and cosine decay, clipping, bf16 autocast, 440 steps; the loss read back every 20 steps and every 110 steps an evaluation of 4 x 16 scenes with minADE, minFDE and miss rate read back")
def aircraft_traj_transformer_train(rng):
    with sdpa_kernel(_BACKENDS):
        _aircraft_traj(rng)


def _aircraft_traj(rng):
    feats, d, heads, modes, horizon = 8, _smoke(192, 24), _smoke(6, 2), 6, _smoke(30, 6)
    maxt = _smoke(64, 8)
    model = _TrafficNet(feats, d, heads, 3, 2, maxt, modes, horizon).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=4e-4, weight_decay=0.02)

    def scenes(b, a, t):
        amask = (torch.arange(a, device="cuda")[None] < torch.randint(2, a + 1, (b, 1), device="cuda")).float()
        hl = torch.randint(max(2, t // 4), t + 1, (b, a, 1), device="cuda")
        tmask = (torch.arange(t, device="cuda")[None, None] >= t - hl).float()
        start = torch.randn(b, a, 1, 3, device="cuda") * torch.tensor([20.0, 20.0, 3.0], device="cuda")
        vel = torch.randn(b, a, 1, 3, device="cuda") * torch.tensor([0.25, 0.25, 0.02], device="cuda")
        steps = torch.arange(t + horizon, device="cuda").float()[None, None, :, None]
        turn = torch.randn(b, a, 1, 1, device="cuda") * 0.01
        path = start + vel * steps + torch.cat([torch.sin(turn * steps), 1 - torch.cos(turn * steps),
                                                torch.zeros_like(steps.expand(b, a, -1, 1))], -1) * 10
        path = path + torch.randn_like(path) * 0.02
        hist, fut = path[:, :, :t], path[:, :, t:] - path[:, :, t - 1:t]
        dv = hist[:, :, 1:] - hist[:, :, :-1]
        dv = torch.cat([dv[:, :, :1], dv], 2)
        hdg = torch.atan2(dv[..., 1], dv[..., 0])
        x = torch.cat([hist - hist[:, :, -1:], dv * 10, torch.stack([hdg.sin(), hdg.cos()], -1)], -1)
        x = x * tmask[..., None]
        ac = torch.randint(0, 6, (b, a), device="cuda")
        return x, tmask, ac, amask, fut

    def losses(traj, conf, fut, amask):
        err = (traj - fut[:, :, None]).norm(dim=-1)  # (B, A, M, H)
        ade, fde = err.mean(-1), err[..., -1]
        best = ade.argmin(-1)
        pick = traj.gather(2, best[:, :, None, None, None].expand(-1, -1, 1, horizon, 3))[:, :, 0]
        reg = _F.smooth_l1_loss(pick, fut, reduction="none").mean((-1, -2))
        cls = _F.cross_entropy(conf.flatten(0, 1), best.flatten(), reduction="none").view_as(reg)
        n = amask.sum().clamp(min=1)
        return ((reg + 0.5 * cls) * amask).sum() / n, ade, fde

    steps = _smoke(440, 3)
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = 4e-4 * min(1.0, (step + 1) / 20) * 0.5 * (1 + math.cos(math.pi * step / steps))
        model.train()
        b = randint(rng, _smoke(8, 2), _smoke(24, 4), _smoke(4, 1))
        a = rng.randint(_smoke(8, 2), _smoke(40, 5))
        t = rng.randint(_smoke(16, 4), maxt)
        x, tmask, ac, amask, fut = scenes(b, a, t)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            traj, conf = model(x, tmask, ac, amask)
        loss, _, _ = losses(traj, conf, fut, amask)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.item()
        del x, tmask, ac, amask, fut, traj, conf, loss
        if (step + 1) % _smoke(110, 2) == 0:
            model.eval()
            sums = []
            with torch.no_grad():
                for _ in range(_smoke(4, 1)):
                    x, tmask, ac, amask, fut = scenes(_smoke(16, 2), _smoke(32, 4), maxt)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        traj, conf = model(x, tmask, ac, amask)
                    _, ade, fde = losses(traj, conf, fut, amask)
                    min_ade, min_fde = ade.amin(-1), fde.amin(-1)
                    miss = (min_fde > 2.0).float()
                    sums.append(torch.stack([(min_ade * amask).sum(), (min_fde * amask).sum(), (miss * amask).sum(),
                                             amask.sum()]))
                    del x, tmask, ac, amask, fut, traj, conf, ade, fde, min_ade, min_fde, miss
                tot = torch.stack(sums).sum(0)
                metrics = tot[:3] / tot[3].clamp(min=1)
            metrics.tolist()
            del sums, tot, metrics


# ---------------------------------------------------------------- turbofan remaining useful life


class _RULNet(_nn.Module):
    """A 1D convolution front end, a two-layer LSTM unrolled over the window by hand, attention pooling, a head."""

    def __init__(self, sensors, conv, hidden, settings_emb):
        super().__init__()
        self.cond = _nn.Embedding(6, settings_emb)
        self.conv = _nn.Sequential(_nn.Conv1d(sensors + settings_emb, conv, 5, padding=2), _nn.GELU(),
                                   _nn.Conv1d(conv, conv, 5, padding=2), _nn.GELU())
        self.hidden = hidden
        self.ih = _nn.ModuleList([_nn.Linear(conv, 4 * hidden), _nn.Linear(hidden, 4 * hidden)])
        self.hh = _nn.ModuleList([_nn.Linear(hidden, 4 * hidden, bias=False) for _ in range(2)])
        self.att = _nn.Linear(hidden, 1)
        self.head = mlp(hidden + conv, hidden, 1, layers=3, act=_nn.GELU)

    def forward(self, x, cond, mask):
        """x (B, W, S) normalised sensors, cond (B, W) operating condition ids, mask (B, W): RUL (B,)."""
        b, w, _ = x.shape
        f = self.conv(torch.cat([x, self.cond(cond)], -1).transpose(1, 2)).transpose(1, 2)
        f = f * mask[..., None].to(f.dtype)
        seq = f
        for layer in range(2):
            xs = self.ih[layer](seq)
            h = torch.zeros(b, self.hidden, device=x.device, dtype=xs.dtype)
            c = torch.zeros(b, self.hidden, device=x.device, dtype=torch.float32)
            outs = []
            for t in range(w):
                i, fg, g, o = (xs[:, t] + self.hh[layer](h)).float().chunk(4, -1)
                c_new = torch.sigmoid(fg) * c + torch.sigmoid(i) * torch.tanh(g)
                m = mask[:, t:t + 1]
                c = m * c_new + (1 - m) * c
                h = (torch.sigmoid(o) * torch.tanh(c)).to(xs.dtype)
                outs.append(h)
            seq = torch.stack(outs, 1)
        a = torch.softmax(self.att(seq)[..., 0].float().masked_fill(mask == 0, -1e4), -1)
        pooled = (a[..., None].to(seq.dtype) * seq).sum(1)
        return self.head(torch.cat([pooled, f[:, -1]], -1))[..., 0].float()


@_workload("turbofan engine remaining-useful-life estimation training (random init, C-MAPSS-like): a simulated fleet of 260 training and 100 test engines with lives of 128-360 cycles (drawn per engine on the device), 21 sensors with exponential degradation, six operating conditions and noise, normalised per condition; 128-384 windows a step (drawn, a multiple of 32) of 24-48 cycles (drawn per step) ending at cycles sampled on the device, windows running past an engine's start masked (zero-padded); an embedding of the operating condition, two 1D convolutions (64 channels), a two-layer LSTM (hidden 128) unrolled over the window by hand with the mask held in the cell, attention pooling and an MLP head; the RUL target capped at 125, an asymmetric squared loss penalising late predictions; Adam with step decay, clipping, bf16 autocast, 110 steps; the loss read back every 10 steps and every 27 steps an evaluation over the test engines' last windows with RMSE and the NASA score read back")
def turbofan_rul_lstm_train(rng):
    sensors, conv, hidden, cond_emb = 21, _smoke(64, 8), _smoke(128, 16), 8
    n_train, n_test, max_life, min_life = _smoke(260, 6), _smoke(100, 4), _smoke(360, 40), _smoke(128, 20)
    n_all = n_train + n_test
    life = torch.randint(min_life, max_life + 1, (n_all, 1), device="cuda")
    cyc = torch.arange(max_life, device="cuda")[None]
    frac = (cyc.float() / life.float()).clamp(max=1.0)
    rate = torch.rand(n_all, 1, sensors, device="cuda") * 3 + 1
    sign = torch.where(torch.rand(1, 1, sensors, device="cuda") < 0.5, -1.0, 1.0)
    cond = torch.randint(0, 6, (n_all, max_life), device="cuda")
    offset = torch.randn(6, sensors, device="cuda") * 2
    raw = sign * 0.05 * torch.exp(rate * frac[..., None]) + offset[cond] + torch.randn(n_all, max_life, sensors,
                                                                                       device="cuda") * 0.1
    mean = offset[:, None] + 0.05 * sign
    fleet = ((raw - mean[cond][:, :, 0]) / 0.3).contiguous()
    rul = (life - 1 - cyc).clamp(min=0, max=125).float()
    del frac, rate, raw, mean
    model = _RULNet(sensors, conv, hidden, cond_emb).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def windows(engines, ends, w):
        idx = ends[:, None] - w + 1 + torch.arange(w, device="cuda")[None]
        mask = (idx >= 0).float()
        idx = idx.clamp(min=0)
        x = fleet[engines[:, None], idx] * mask[..., None]
        c = cond[engines[:, None], idx] * mask.long()
        y = rul[engines, ends]
        return x, c, mask, y

    def loss_fn(pred, y):
        d = pred - y / 125
        return torch.where(d > 0, 1.5 * d * d, d * d).mean()

    steps = _smoke(110, 3)
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = 1e-3 * (0.5 ** (step // max(1, steps // 3)))
        model.train()
        b = randint(rng, _smoke(128, 8), _smoke(384, 16), _smoke(32, 8))
        w = rng.randint(_smoke(24, 4), _smoke(48, 8))
        eng = torch.randint(0, n_train, (b,), device="cuda")
        ends = (torch.rand(b, device="cuda") * life[eng, 0].float()).long()
        x, c, mask, y = windows(eng, ends, w)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(x, c, mask)
        loss = loss_fn(pred, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        if step % 10 == 0:
            loss.item()
        del eng, ends, x, c, mask, y, pred, loss
        if (step + 1) % _smoke(27, 2) == 0:
            model.eval()
            with torch.no_grad():
                eng = torch.arange(n_train, n_all, device="cuda")
                cut = (torch.rand(n_test, device="cuda") * 0.6 + 0.3) * life[eng, 0].float()
                x, c, mask, y = windows(eng, cut.long(), _smoke(48, 8))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pred = model(x, c, mask) * 125
                d = pred - y
                score = torch.where(d < 0, torch.exp(-d / 13) - 1, torch.exp(d / 10) - 1).sum()
                metrics = torch.stack([d.pow(2).mean().sqrt(), score])
            metrics.tolist()
            del eng, cut, x, c, mask, y, pred, d, score, metrics


# ---------------------------------------------------------------- MeshGraphNets airfoil surrogate


class _MeshGNN(_nn.Module):
    def __init__(self, node_in, edge_in, d, layers, out):
        super().__init__()
        self.node_enc = mlp(node_in, d, d, layers=2, norm=True)
        self.edge_enc = mlp(edge_in, d, d, layers=2, norm=True)
        self.edge_mlps = _nn.ModuleList(mlp(3 * d, d, d, layers=2) for _ in range(layers))
        self.node_mlps = _nn.ModuleList(mlp(2 * d, d, d, layers=2) for _ in range(layers))
        self.edge_norms = _nn.ModuleList(_nn.LayerNorm(d) for _ in range(layers))
        self.node_norms = _nn.ModuleList(_nn.LayerNorm(d) for _ in range(layers))
        self.dec = mlp(d, d, out, layers=2)

    def forward(self, nodes, edges, src, dst):
        h, e = self.node_enc(nodes), self.edge_enc(edges)
        for em, nm, en, nn_ in zip(self.edge_mlps, self.node_mlps, self.edge_norms, self.node_norms):
            e = e + en(em(torch.cat([e, h[src], h[dst]], -1)))
            agg = torch.zeros(h.shape[0], e.shape[1], device=h.device, dtype=e.dtype).index_add_(0, dst, e)
            h = h + nn_(nm(torch.cat([h, agg.to(h.dtype)], -1)))
        return self.dec(h).float()


@_workload("MeshGraphNets-style aerodynamic surrogate training over airfoil meshes (random init, AirfRANS-like): 1-4 meshes a step (drawn) of 2,500-6,000 nodes each (drawn per mesh) around a drawn NACA-like airfoil (node positions, boundary, wall and far-field types, wall distance, angle of attack and Mach number), 6 directed edges a node (neighbour offsets drawn per mesh, relative position and length as edge features), the meshes concatenated with node offsets fixed on the host; node and edge encoders, 8 message-passing layers (latent 128, edge update from both end nodes, sum aggregation by index_add, residual LayerNorm MLPs) and a decoder of velocity, pressure and turbulent viscosity; a loss weighted per node type (wall nodes up-weighted, the far field masked out by weights multiplied in) against normalised targets from a potential-flow-like field; Adam with exponential decay, clipping, bf16 autocast, 320 steps; the loss read back every 10 steps and every 80 steps an evaluation of 2 meshes of 6,000 nodes with per-field relative errors and the lift coefficient error read back")
def airfoil_mesh_gnn_train(rng):
    d, layers, k = _smoke(128, 16), _smoke(8, 2), 6
    model = _MeshGNN(8, 3, d, layers, 4).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4 * 5)
    field_w = torch.tensor([1.0, 1.0, 2.0, 0.5], device="cuda")

    def mesh(n, base):
        """One airfoil mesh of n nodes: node features (n, 8), edge features (n k, 3), src, dst, targets, weights."""
        aoa, mach = math.radians(rng.uniform(-4, 15)), rng.uniform(0.1, 0.3)
        thick, camber = rng.uniform(0.08, 0.18), rng.uniform(0.0, 0.06)
        r = torch.rand(n, device="cuda")
        theta = torch.rand(n, device="cuda") * 2 * math.pi
        rad = 0.5 + 20 * r.pow(3)
        x = rad * torch.cos(theta)
        y = rad * torch.sin(theta) * (thick * 4) + camber * (1 - x.clamp(-1, 1).pow(2))
        pos = torch.stack([x, y], -1)
        wall = (r < 0.02).float()
        far = (r > 0.97).float()
        kind = torch.stack([1 - wall - far, wall, far], -1)
        dist = (rad - 0.5).clamp(min=0)[:, None]
        flow = torch.tensor([math.cos(aoa), math.sin(aoa)], device="cuda").expand(n, 2) * mach
        nodes = torch.cat([pos / 20, kind, dist.log1p(), flow], -1)
        offs = torch.tensor([rng.randint(1, 40) for _ in range(k)], device="cuda")
        src = torch.arange(n, device="cuda").repeat_interleave(k)
        dst = (src + offs.repeat(n)) % n
        rel = pos[dst] - pos[src]
        edges = torch.cat([rel, rel.norm(dim=-1, keepdim=True)], -1)
        u = flow * (1 - 0.25 / rad.pow(2))[:, None] * (1 - wall[:, None])
        p = 0.5 * (mach ** 2 - u.pow(2).sum(-1, keepdim=True))
        target = torch.cat([u / mach, p / mach ** 2, (dist * (1 + (u.norm(dim=-1, keepdim=True) / mach))).tanh()], -1)
        weight = 1 + 4 * wall - far
        return nodes, edges, src + base, dst + base, target, weight, wall

    def batch(sizes):
        parts, base = [], 0
        for n in sizes:
            parts.append(mesh(n, base))
            base += n
        return [torch.cat(z, 0) for z in zip(*parts)]

    steps = _smoke(320, 3)
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = 5e-4 * 0.1 ** (step / steps)
        model.train()
        sizes = [rng.randint(_smoke(2500, 40), _smoke(6000, 90)) for _ in range(rng.randint(1, 4))]
        nodes, edges, src, dst, target, weight, wall = batch(sizes)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(nodes, edges, src, dst)
        err = (pred - target).pow(2) * field_w
        loss = (err.sum(-1) * weight).sum() / weight.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            loss.item()
        del nodes, edges, src, dst, target, weight, wall, pred, err, loss
        if (step + 1) % _smoke(80, 2) == 0:
            model.eval()
            with torch.no_grad():
                nodes, edges, src, dst, target, weight, wall = batch([_smoke(6000, 90)] * 2)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pred = model(nodes, edges, src, dst)
                rel = (pred - target).norm(dim=0) / target.norm(dim=0).clamp(min=1e-6)
                lift = torch.stack([(pred[:, 2] * wall * nodes[:, 1]).sum(), (target[:, 2] * wall * nodes[:, 1]).sum()])
                metrics = torch.cat([rel, (lift[0] - lift[1]).abs()[None] / lift[1].abs().clamp(min=1e-6)])
            metrics.tolist()
            del nodes, edges, src, dst, target, weight, wall, pred, rel, lift, metrics


# ---------------------------------------------------------------- satellite telemetry anomaly detection service


class _TelemetryAE(_nn.Module):
    """Dilated temporal convolutions down to tokens, a small transformer over them, transposed convolutions back."""

    def __init__(self, ch, width, d, heads, layers):
        super().__init__()
        self.inp = _nn.Conv1d(ch, width, 7, padding=3)
        self.dil = _nn.ModuleList(_nn.Conv1d(width, width, 3, padding=r, dilation=r) for r in (1, 2, 4, 8))
        self.down = _nn.Sequential(_nn.Conv1d(width, d, 4, stride=4), _nn.GELU(), _nn.Conv1d(d, d, 2, stride=2))
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.up = _nn.Sequential(_nn.ConvTranspose1d(d, width, 8, stride=8), _nn.GELU(),
                                 _nn.Conv1d(width, width, 3, padding=1), _nn.GELU(), _nn.Conv1d(width, ch, 1))

    def forward(self, x):
        """x (B, C, L), L a multiple of 8: the reconstruction (B, C, L)."""
        h = _F.gelu(self.inp(x))
        for conv in self.dil:
            h = h + _F.gelu(conv(h))
        z = self.down(h).transpose(1, 2)
        pos = torch.arange(z.shape[1], device=x.device, dtype=torch.float32)[:, None] / \
            (10000 ** (torch.arange(0, z.shape[2], 2, device=x.device).float() / z.shape[2]))[None]
        z = z + torch.cat([pos.sin(), pos.cos()], -1).to(z.dtype)
        for blk in self.blocks:
            z = blk(z)
        return self.up(z.transpose(1, 2)).float()


@_workload("satellite telemetry anomaly detection service (random init, SMAP/MSL-like): 2,300-2,500 requests (drawn) of 1-48 telemetry windows (log-uniform) of 256, 512, 1,024 or 2,048 samples (drawn) x 55 channels, the float32 samples of each request uploaded on a side stream from two reused pinned host buffers one request ahead (waited on by event, record_stream'ed); per-channel standardisation on the device, a convolutional-transformer autoencoder (dilated temporal convolutions of width 96, downsampling by 8 to tokens of width 256, a 2-block transformer with 8 heads, transposed-convolution decoder) under bf16 autocast; per-sample reconstruction errors normalised by running per-channel error statistics kept in tensors and updated by an exponential moving average every request, a smoothed score, exceedances of a per-channel threshold kept only when they persist over 16 samples (average pooling), the top-3 channels per window; each request's per-window flags, peak scores and top channels read back")
def sat_telemetry_anomaly_serve(rng):
    with sdpa_kernel(_BACKENDS):
        _telemetry_serve(rng)


def _telemetry_serve(rng):
    ch, width, d, heads = 55, _smoke(96, 8), _smoke(256, 16), _smoke(8, 2)
    model = _TelemetryAE(ch, width, d, heads, 2).cuda().eval()
    model.requires_grad_(False)
    mu = torch.randn(ch, 1, device="cuda")
    sd = torch.rand(ch, 1, device="cuda") + 0.5
    err_mean = torch.full((ch, 1), 0.5, device="cuda")
    err_var = torch.full((ch, 1), 0.1, device="cuda")
    thresh = torch.rand(ch, 1, device="cuda") + 3.0
    maxb, lengths = _smoke(48, 3), _smoke([256, 512, 1024, 2048], [32, 64])
    maxl = max(lengths)
    host = [torch.randn(maxb * ch * maxl).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    nreq = rng.randint(_smoke(2300, 3), _smoke(2500, 4))
    plan = [(_loguniform(rng, 1, maxb), rng.choice(lengths)) for _ in range(nreq)]

    def span(i):
        b, L = plan[i]
        return slice(0, b * ch * L)

    nxt = up.upload(0, span(0))
    for i in range(nreq):
        b, L = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, span(i + 1))
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            x = (raw.view(b, ch, L) - mu) / sd
            with torch.autocast("cuda", dtype=torch.bfloat16):
                rec = model(x)
            err = (rec - x).pow(2)
            z = (err - err_mean) / err_var.sqrt()
            smooth = _F.avg_pool1d(z, 9, 1, 4, count_include_pad=False)
            over = (smooth > thresh).float()
            persist = _F.avg_pool1d(over, 16, 1, 8)[..., :L] > 0.99
            flags = persist.float().amax(-1)  # (B, C)
            peak = smooth.amax(-1)
            top_s, top_c = peak.topk(3, -1)
            bm = err.mean((0, 2))[:, None]
            err_mean.mul_(0.98).add_(0.02 * bm)
            err_var.mul_(0.98).add_(0.02 * (err - err_mean).pow(2).mean((0, 2))[:, None])
            out = torch.cat([flags.amax(-1, keepdim=True), flags.sum(-1, keepdim=True), top_s, top_c.float()], -1)
        out.tolist()
        del item, raw, x, rec, err, z, smooth, over, persist, flags, peak, top_s, top_c, bm, out

"""The hundred-and-twenty-eighth batch of held-out workloads for record.py, second half (see batch128.py): textiles,
weaving and laundry, written in torch alone. A fibre-blend sorting service for textile recycling (a transformer over
patches of near-infrared spectra of drawn resolutions, uploaded from pinned host buffers, preprocessed on the device
by a derivative filter and standard normal variate; each garment's fibre blend, its contaminant flags and its sort
bin), fabric drape training (a mesh graph network over cloth meshes of drawn sizes, grid and shear edges built on
the device, edge and node updates with messages summed by index_add; each node's acceleration), ring-spinning end
breakage training (a GRU cell written out step by step over spindle sensor windows of drawn lengths encoded by a
strided convolution; the breakage hazard and tension anomaly at each step, the time to doffing) and tunnel-washer
scheduling training (PPO on a shared-trunk policy over an industrial laundry's lot queue and washer states
simulated on the device, GAE and clipped updates on minibatches).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the sorting service), `rng` the workload's random.Random for every shape, count and sampled choice,
sizes through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or
masked_fill; no boolean-mask indexing; results read back only at logging points or once per request.
fibre_blend_nir_serve uploads its spectra on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every embedding and position table is sized for the longest padded length that can be drawn.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- fibre-blend NIR sorting (spectral transformer)


class _NirNet(_nn.Module):
    """16-band patches of the derivative and the normalised spectrum, a position table sized for the finest
    resolution's patches plus a class token, pre-norm blocks; the blend, contaminant flags and a confidence."""

    def __init__(self, patch, d, heads, layers, max_tok, n_fibre, n_flag):
        super().__init__()
        self.patch = patch
        self.emb = _nn.Linear(2 * patch, d)
        self.pos = _nn.Embedding(max_tok + 1, d)
        self.cls = _nn.Parameter(torch.zeros(1, 1, d))
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm, self.head = _nn.LayerNorm(d), mlp(d, d, n_fibre + n_flag + 1, act=_nn.GELU)

    def forward(self, x):
        b, c, l = x.shape
        t = l // self.patch
        z = self.emb(x.view(b, c, t, self.patch).permute(0, 2, 1, 3).flatten(2))
        z = torch.cat([self.cls.expand(b, -1, -1).to(z.dtype), z], 1)
        z = z + self.pos(torch.arange(t + 1, device=x.device))[None].to(z.dtype)
        for blk in self.blocks:
            z = blk(z)
        return self.head(self.norm(z[:, 0])).float()


@_workload("fibre-blend sorting serving for textile recycling (random init, a transformer over near-infrared spectra): 1,800-1,840 requests (drawn) of 8-128 garments (drawn) on the sorting belt, each a spectrum of 256, 512 or 1,024 bands (the instrument's resolution, drawn per request), fp16 spectra uploaded on a side stream from two reused pinned host buffers (filled once, sized for 128 x 1,024) one request ahead (one span, through SideUploads.ahead); on the device standard normal variate per spectrum and a 9-tap first-derivative filter (conv1d), the two stacked and cut into 16-band patches (16-64 tokens) with a class token and a 65-row position table; 4 pre-norm blocks (width 192, 6 heads) in eval mode under bf16 autocast; the fibre blend (of 8: cotton, polyester, wool, viscose, nylon, acrylic, elastane, silk) by softmax, 4 contaminant flags (coating, black dye, metal trim, multilayer) by sigmoid, a confidence; the sort bin (the dominant fibre, or reject when flagged or unsure) by argmax and torch.where and each bin's count by one_hot; each request's blends, flags and bins read back once")
def fibre_blend_nir_serve(rng):
    patch, d, heads, layers = 16, _smoke(192, 16), _smoke(6, 2), _smoke(4, 1)
    n_fibre, n_flag = 8, 4
    l_opts = _smoke([256, 512, 1024], [32, 64])
    max_n = _smoke(128, 4)
    model = _NirNet(patch, d, heads, layers, max(l_opts) // patch, n_fibre, n_flag).cuda().eval()
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randn(max_n * max(l_opts), generator=gen).half().pin_memory() for _ in range(2)]
    up = SideUploads(host)
    deriv = torch.tensor([-4.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0], device="cuda").view(1, 1, 9) / 60.0

    nreq = rng.randint(_smoke(1800, 3), _smoke(1840, 4))
    plan = [(rng.randint(_smoke(8, 1), max_n), rng.choice(l_opts)) for _ in range(nreq)]

    for (n, ln), raw in up.ahead(plan, lambda p: (p[0] * p[1],)):
        with torch.no_grad():
            s = raw.view(n, 1, ln).float()
            snv = (s - s.mean(-1, keepdim=True)) / s.std(-1, keepdim=True).clamp_min(1e-4)
            dv = _F.conv1d(snv, deriv, padding=4)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = model(torch.cat([snv, dv], 1))
            blend = out[:, :n_fibre].softmax(-1)
            flags = torch.sigmoid(out[:, n_fibre:n_fibre + n_flag])
            conf = torch.sigmoid(out[:, -1])
            top, fib = blend.max(-1)
            reject = (flags.amax(-1) > 0.5) | (top * conf < 0.3)
            sort_bin = torch.where(reject, torch.full_like(fib, n_fibre), fib)
            per_bin = _F.one_hot(sort_bin, n_fibre + 1).sum(0)
            res = torch.cat([blend.flatten(), flags.flatten(), sort_bin.float(), per_bin.float()])
        res.tolist()
        del raw, s, snv, dv, out, blend, flags, conf, top, fib, reject, sort_bin, per_bin, res


# ---------------------------------------------------------------- fabric drape (mesh graph network)


class _MeshLayer(_nn.Module):
    """An edge MLP over both ends and the edge's latent, a node MLP over the node and its summed messages (summed by
    index_add in the messages' dtype), residuals and layer norms on both."""

    def __init__(self, d):
        super().__init__()
        self.edge = mlp(3 * d, d, d, act=_nn.SiLU)
        self.node = mlp(2 * d, d, d, act=_nn.SiLU)
        self.ne, self.nn = _nn.LayerNorm(d), _nn.LayerNorm(d)

    def forward(self, x, e, src, dst):
        msg = self.edge(torch.cat([x[src], x[dst], e], -1))
        e = e + self.ne(msg.float())
        agg = msg.new_zeros(x.shape[0], msg.shape[1]).index_add_(0, dst, msg)
        x = x + self.nn(self.node(torch.cat([x, agg.to(x.dtype)], -1)).float())
        return x, e


class _DrapeNet(_nn.Module):
    def __init__(self, n_node, n_edge, n_mat, d, layers):
        super().__init__()
        self.node_in, self.edge_in = mlp(n_node, d, d, act=_nn.SiLU), mlp(n_edge, d, d, act=_nn.SiLU)
        self.mat = _nn.Embedding(n_mat, d)
        self.layers = _nn.ModuleList(_MeshLayer(d) for _ in range(layers))
        self.out = mlp(d, d, 3, act=_nn.SiLU)

    def forward(self, feat, mat, ef, src, dst):
        x = self.node_in(feat).float() + self.mat(mat)
        e = self.edge_in(ef).float()
        for layer in self.layers:
            x, e = layer(x, e, src, dst)
        return self.out(x).float()


def _grid_edges(nc, rows, cols):
    """Both directions of the grid's structural edges (right, down) and shear edges (both diagonals) of nc cloths."""
    idx = torch.arange(nc * rows * cols, device="cuda").view(nc, rows, cols)
    pairs = [(idx[:, :, :-1], idx[:, :, 1:]), (idx[:, :-1], idx[:, 1:]),
             (idx[:, :-1, :-1], idx[:, 1:, 1:]), (idx[:, :-1, 1:], idx[:, 1:, :-1])]
    a = torch.cat([p[0].flatten() for p in pairs])
    b = torch.cat([p[1].flatten() for p in pairs])
    return torch.cat([a, b]), torch.cat([b, a])


@_workload("fabric drape training (random init, a mesh graph network over cloth meshes): 2-8 cloths a step (drawn) on a grid of 16-48 by 16-48 nodes (drawn per step), each cloth of one of 6 fabrics (denim, silk, jersey, linen, fleece, organza) with its rest positions, a current state of rest positions displaced by smooth noise (bilinearly upsampled), a previous state, 1-4 pinned nodes at each top corner (drawn per cloth on the device) and training noise added to the positions; structural and shear edges in both directions built on the device by arange (about 8 per node), edge features the rest and current offsets and their lengths; encoder MLPs, 8 message-passing layers of width 128 (an edge MLP over both ends and the edge, messages summed into the receiver by index_add in the messages' dtype, a node MLP, residuals and layer norms), a decoder to each node's acceleration by MSE masked to the free nodes; Adam with an exponential decay, clipping, bf16 autocast, 350 steps; the loss read back every 20 steps and every 70 steps a no-grad 10-step rollout (explicit integration, the pinned nodes held by torch.where) of 4 cloths of 32 x 32 with the final mean stretch read back")
def fabric_drape_meshgnn_train(rng):
    n_node, n_edge, n_mat, d, layers = 9, 8, 6, _smoke(128, 16), _smoke(8, 2)
    model = _DrapeNet(n_node, n_edge, n_mat, d, layers).cuda()
    steps = _smoke(350, 3)
    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, 0.995)
    lo_g, hi_g = _smoke(16, 4), _smoke(48, 6)

    def cloths(nc, rows, cols):
        yy, xx = torch.meshgrid(torch.linspace(0.0, 1.0, rows, device="cuda"),
                                torch.linspace(0.0, 1.0, cols, device="cuda"), indexing="ij")
        rest = torch.stack([xx, torch.zeros_like(xx), -yy], -1)[None].expand(nc, rows, cols, 3)
        low = torch.randn(nc, 3, 4, 4, device="cuda") * 0.05
        disp = _F.interpolate(low, size=(rows, cols), mode="bilinear", align_corners=True).permute(0, 2, 3, 1)
        pos = rest + disp
        prev = pos - torch.randn_like(pos) * 0.01
        n_pin = torch.randint(1, 5, (nc, 1), device="cuda")
        pin = torch.zeros(nc, rows, cols, device="cuda")
        col = torch.arange(cols, device="cuda")[None]
        pin[:, 0] = ((col < n_pin) | (col >= cols - n_pin)).float()
        mat = torch.randint(0, n_mat, (nc,), device="cuda").repeat_interleave(rows * cols)
        return rest.reshape(-1, 3), pos.reshape(-1, 3), prev.reshape(-1, 3), pin.reshape(-1), mat

    def features(rest, pos, prev, pin, src, dst):
        feat = torch.cat([pos - prev, pin[:, None], _F.one_hot(pin.long(), 2).float(), pos[:, 2:3], rest[:, :2]], -1)
        dr, dp = rest[src] - rest[dst], pos[src] - pos[dst]
        ef = torch.cat([dr, dr.norm(dim=-1, keepdim=True), dp, dp.norm(dim=-1, keepdim=True)], -1)
        return feat, ef

    for step in range(steps):
        model.train()
        nc, rows, cols = rng.randint(_smoke(2, 1), _smoke(8, 2)), rng.randint(lo_g, hi_g), rng.randint(lo_g, hi_g)
        src, dst = _grid_edges(nc, rows, cols)
        rest, pos, prev, pin, mat = cloths(nc, rows, cols)
        noisy = pos + torch.randn_like(pos) * 0.003 * (1.0 - pin[:, None])
        feat, ef = features(rest, noisy, prev, pin, src, dst)
        target = torch.randn_like(pos) * 0.1
        with torch.autocast("cuda", dtype=torch.bfloat16):
            acc = model(feat, mat, ef, src, dst)
        free = 1.0 - pin
        loss = ((acc - target).pow(2).sum(-1) * free).sum() / free.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            loss.detach().tolist()
        del src, dst, rest, pos, prev, pin, mat, noisy, feat, ef, target, acc, free, loss
        if (step + 1) % _smoke(70, 2) == 0:
            model.eval()
            with torch.no_grad():
                g = _smoke(32, 4)
                src, dst = _grid_edges(_smoke(4, 1), g, g)
                rest, pos, prev, pin, mat = cloths(_smoke(4, 1), g, g)
                for _ in range(_smoke(10, 2)):
                    feat, ef = features(rest, pos, prev, pin, src, dst)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        acc = model(feat, mat, ef, src, dst)
                    nxt = 2.0 * pos - prev + acc * 0.01
                    prev, pos = pos, torch.where(pin[:, None] > 0, pos, nxt)
                stretch = ((pos[src] - pos[dst]).norm(dim=-1) / (rest[src] - rest[dst]).norm(dim=-1)).mean()
            stretch.tolist()
            del src, dst, rest, pos, prev, pin, mat, feat, ef, acc, nxt, stretch


# ---------------------------------------------------------------- ring-spinning end breakage (GRU written out)


class _SpindleGru(_nn.Module):
    """A strided 1-d convolution over each window of 1 Hz spindle readings to one vector a step, a GRU cell written
    out step by step (the input projections of every step in one matmul), padded steps keeping the state by
    torch.where; the breakage hazard and tension anomaly at each step, the time to doffing from the last state."""

    def __init__(self, n_feat, win, d, n_mach):
        super().__init__()
        self.enc = _nn.Sequential(_nn.Conv1d(n_feat, d, win, win), _nn.GELU())
        self.mach = _nn.Embedding(n_mach, d)
        self.wx, self.wh = _nn.Linear(d, 3 * d), _nn.Linear(d, 3 * d)
        self.head = mlp(d, d, 2, act=_nn.GELU)
        self.doff = _nn.Linear(d, 1)
        self.d = d

    def forward(self, x, mach, keep):
        b = x.shape[0]
        z = self.enc(x).transpose(1, 2) + self.mach(mach)[:, None].to(x.dtype)
        gx = self.wx(z)
        h = x.new_zeros(b, self.d).float()
        hs = []
        for i in range(gx.shape[1]):
            xr, xz, xn = gx[:, i].float().chunk(3, -1)
            hr, hz, hn = self.wh(h).float().chunk(3, -1)
            r, u = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
            h_new = (1.0 - u) * torch.tanh(xn + r * hn) + u * h
            h = torch.where(keep[:, i, None], h_new, h)
            hs.append(h)
        hs = torch.stack(hs, 1)
        return self.head(hs).float(), self.doff(h).float()[:, 0]


@_workload("ring-spinning end breakage training (random init, a GRU cell written out step by step): 24-96 spindles a step (drawn) from 16 spinning frames (a frame table), each a sensor record of 16-40 one-minute windows (drawn per spindle, padded to the step's longest) of 60 readings at 1 Hz with 10 features (spindle speed, yarn tension, traveller temperature, vibration, humidity, ...) drawn on the device as noise with a drift; a strided convolution (kernel and stride 60) to one 192-wide vector a window, a GRU cell of 192 written out window by window (the input projections of all windows in one matmul, the state in fp32, padded windows keeping the state by torch.where); the end-breakage hazard in the next window by masked BCE with a positive weight of 8 and the tension anomaly score by masked MSE at each window, the time to doffing by MSE from the last state; AdamW, clipping, bf16 autocast, 180 steps; the losses read back every 10 steps and every 36 steps a no-grad pass over 64 spindles of 40 windows with the breakage recall at 0.5 read back")
def spinning_breakage_gru_train(rng):
    n_feat, win, d, n_mach = 10, _smoke(60, 4), _smoke(192, 16), 16
    model = _SpindleGru(n_feat, win, d, n_mach).cuda()
    steps = _smoke(180, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    pw = torch.tensor(8.0, device="cuda")
    lo_t, hi_t = _smoke(16, 3), _smoke(40, 5)

    def records(lens):
        b, t = len(lens), max(lens)
        keep = torch.arange(t, device="cuda")[None] < torch.tensor(lens, device="cuda")[:, None]
        drift = torch.linspace(0.0, 1.0, t * win, device="cuda")[None, None] * torch.randn(b, n_feat, 1,
                                                                                          device="cuda")
        x = torch.randn(b, n_feat, t * win, device="cuda") * 0.5 + drift
        mach = torch.randint(0, n_mach, (b,), device="cuda")
        brk = (torch.rand(b, t, device="cuda") < 0.05).float()
        anom = torch.rand(b, t, device="cuda")
        doff = torch.rand(b, device="cuda")
        return x, mach, keep, brk, anom, doff

    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(24, 2), _smoke(96, 3))
        lens = [rng.randint(lo_t, hi_t) for _ in range(b)]
        x, mach, keep, brk, anom, doff = records(lens)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out, t_doff = model(x, mach, keep)
        kf = keep.float()
        n = kf.sum()
        l_brk = (_F.binary_cross_entropy_with_logits(out[..., 0], brk, pos_weight=pw, reduction="none") * kf).sum() / n
        l_anom = ((out[..., 1] - anom).pow(2) * kf).sum() / n
        l_doff = _F.mse_loss(t_doff, doff)
        loss = l_brk + l_anom + l_doff
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_brk.detach(), l_anom.detach(), l_doff.detach()]).tolist()
        del x, mach, keep, brk, anom, doff, out, t_doff, kf, n, l_brk, l_anom, l_doff, loss
        if (step + 1) % _smoke(36, 2) == 0:
            model.eval()
            with torch.no_grad():
                x, mach, keep, brk, anom, doff = records([hi_t] * _smoke(64, 2))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    out, t_doff = model(x, mach, keep)
                hit = (torch.sigmoid(out[..., 0]) > 0.5).float()
                recall = (hit * brk).sum() / brk.sum().clamp_min(1.0)
            recall.tolist()
            del x, mach, keep, brk, anom, doff, out, t_doff, hit, recall


# ---------------------------------------------------------------- tunnel-washer scheduling (PPO)


class _LaundryPolicy(_nn.Module):
    """A shared MLP trunk with layer norms; logits over the queue's lots, logits over the dosing levels, a value."""

    def __init__(self, s_dim, hidden, n_lot, n_dose):
        super().__init__()
        self.trunk = mlp(s_dim, hidden, hidden, layers=3, act=_nn.Tanh, norm=True)
        self.lot, self.dose, self.v = _nn.Linear(hidden, n_lot), _nn.Linear(hidden, n_dose), _nn.Linear(hidden, 1)

    def forward(self, s):
        h = torch.tanh(self.trunk(s))
        return self.lot(h).float(), self.dose(h).float(), self.v(h).float()[:, 0]


@_workload("tunnel-washer scheduling training for an industrial laundry (random init, PPO on a shared-trunk policy): 58 updates, each a rollout of 24-48 steps (drawn per update) over 256-1,024 laundries (drawn per update) simulated on the device step by step: a queue of 8 soiled-linen lots (weight, soil level, linen type of 6: sheets, towels, table linen, workwear, mops, theatre gowns; drawn on the device) and 4 washers' remaining cycle times; each step the policy (an MLP trunk of 3 layers of 256 with layer norms) picks a lot (categorical over 8) and a chemical dose (of 5) by multinomial, the lot loaded into the washer free soonest (argmin, gated by torch.where when none is free), its cycle time from the soil and dose, its wash quality by a sigmoid of the dose against the soil, the loaded lot replaced by a fresh one; rewards from the clean weight, chemicals and rewash penalties; GAE (gamma 0.99, lambda 0.95) step by step backwards, then 3 epochs of 4 minibatches of clipped PPO (ratio 0.2) with value and entropy terms, Adam, clipping, bf16 autocast; the mean reward and the losses read back every 5 updates")
def tunnel_washer_ppo_train(rng):
    n_lot, n_wash, n_type, n_dose, hidden = 8, 4, 6, 5, _smoke(256, 16)
    s_dim = n_lot * (2 + n_type) + n_wash
    model = _LaundryPolicy(s_dim, hidden, n_lot, n_dose).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    updates, epochs, n_mb, gamma, lam = _smoke(58, 2), _smoke(3, 1), _smoke(4, 2), 0.99, 0.95

    def new_lots(*shape):
        w, s = torch.rand(*shape, 1, device="cuda"), torch.rand(*shape, 1, device="cuda")
        ty = _F.one_hot(torch.randint(0, n_type, shape, device="cuda"), n_type).float()
        return torch.cat([w, s, ty], -1)

    def observe(lots, rem):
        return torch.cat([lots.flatten(1), rem / 10.0], -1)

    for upd in range(updates):
        e, horizon = rng.randint(_smoke(256, 4), _smoke(1024, 8)), rng.randint(_smoke(24, 2), _smoke(48, 3))
        with torch.no_grad():
            lots, rem = new_lots(e, n_lot), torch.rand(e, n_wash, device="cuda") * 5.0
            ss, a1s, a2s, lps, vs, rs = [], [], [], [], [], []
            for _ in range(horizon):
                s = observe(lots, rem)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    l1, l2, v = model(s)
                a1 = torch.multinomial(l1.softmax(-1), 1)[:, 0]
                a2 = torch.multinomial(l2.softmax(-1), 1)[:, 0]
                lp = l1.log_softmax(-1).gather(1, a1[:, None])[:, 0] + l2.log_softmax(-1).gather(1, a2[:, None])[:, 0]
                lot = lots.gather(1, a1[:, None, None].expand(e, 1, 2 + n_type))[:, 0]
                wmin, widx = rem.min(-1)
                free = (wmin <= 0.0).float()
                dose = a2.float() / (n_dose - 1)
                clean = torch.sigmoid(6.0 * (dose - lot[:, 1]) + lot[:, 2:] @ torch.linspace(-0.5, 0.5, n_type,
                                                                                         device="cuda"))
                r = free * (lot[:, 0] * clean - 0.2 * lot[:, 0] * (1.0 - clean) - 0.05 * dose) - 0.01
                cyc = 4.0 + 4.0 * lot[:, 1] + 2.0 * dose
                load = _F.one_hot(widx, n_wash).float() * free[:, None]
                rem = torch.where(load > 0, cyc[:, None], (rem - 1.0).clamp_min(0.0))
                pick = (_F.one_hot(a1, n_lot).float() * free[:, None])[..., None]
                lots = torch.where(pick > 0, new_lots(e, n_lot), lots)
                ss.append(s)
                a1s.append(a1)
                a2s.append(a2)
                lps.append(lp)
                vs.append(v)
                rs.append(r)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                last_v = model(observe(lots, rem))[2]
            adv, gae, nxt = [], torch.zeros(e, device="cuda"), last_v
            for t in reversed(range(horizon)):
                delta = rs[t] + gamma * nxt - vs[t]
                gae = delta + gamma * lam * gae
                adv.append(gae)
                nxt = vs[t]
            adv = torch.stack(adv[::-1]).flatten()
            ret = adv + torch.stack(vs).flatten()
            adv = (adv - adv.mean()) / adv.std().clamp_min(1e-6)
            S, A1, A2 = torch.cat(ss), torch.cat(a1s), torch.cat(a2s)
            LP, mean_r = torch.cat(lps), torch.stack(rs).mean()
        del ss, a1s, a2s, lps, vs, rs, lots, rem, s, l1, l2, v, a1, a2, lp, lot, wmin, widx, free, dose, clean
        del r, cyc, load, pick, last_v, gae, nxt, delta
        n = e * horizon
        mb = n // n_mb
        for _ in range(epochs):
            perm = torch.randperm(n, device="cuda")
            for j in range(n_mb):
                idx = perm[j * mb:(j + 1) * mb]
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    l1, l2, v = model(S[idx])
                lsm1, lsm2 = l1.log_softmax(-1), l2.log_softmax(-1)
                lp = lsm1.gather(1, A1[idx, None])[:, 0] + lsm2.gather(1, A2[idx, None])[:, 0]
                ratio = (lp - LP[idx]).exp()
                a = adv[idx]
                l_pi = -torch.minimum(ratio * a, ratio.clamp(0.8, 1.2) * a).mean()
                l_v = _F.mse_loss(v, ret[idx])
                ent = -((lsm1.exp() * lsm1).sum(-1) + (lsm2.exp() * lsm2).sum(-1)).mean()
                loss = l_pi + 0.5 * l_v - 0.01 * ent
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
                opt.step()
                del idx, l1, l2, v, lsm1, lsm2, lp, ratio, a, ent, loss
            del perm
        if upd % 5 == 0:
            torch.stack([mean_r, l_pi.detach(), l_v.detach()]).tolist()
        del S, A1, A2, LP, adv, ret, mean_r, l_pi, l_v

"""The hundred-and-thirty-fourth batch of held-out workloads for record.py, second half (see batch134.py): public
aquariums and marine exhibits, written in torch alone. Visitor flow training through the galleries (a graph attention
network over aquarium layouts of drawn sizes, galleries joined by drawn corridors, the attention's softmax over each
gallery's incoming corridors by scatter_reduce and index_add_; each gallery's occupancy ahead, the dwell time, each
corridor's flow and each layout's crowding alarm), a rare species image sampler (a diffusion transformer with adaLN
conditioning on the species, flow matching sampled by Euler steps with classifier-free guidance, a convolutional
decoder to the image), life-support world model training (two LSTM cells written out step by step over each loop's
pumps, filters, skimmer, ozone and chillers, contexts of drawn lengths left-padded under a mask, then an open-loop
rollout on its own predictions under the planned setpoints; the sensors and the alarms) and a fish behaviour service
(a (2+1)D convolutional network over tank camera clips of drawn lengths and resolutions; each clip's behaviour and a
stress score per frame).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the behaviour service), `rng` the workload's random.Random for every shape, count and sampled
choice, sizes through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or
masked_fill; no boolean-mask indexing; results read back only at logging points or once per request.
fish_behaviour_clip_serve uploads its clips on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every embedding and position table is sized for the longest padded length that can be drawn.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import SideUploads, _sincos, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- visitor flow through the galleries (GAT)


class _GATLayer(_nn.Module):
    """Graph attention (GATv2-style scores with the corridor's features) over each gallery's incoming corridors: the
    softmax by a scatter_reduce max and index_add_ sums in fp32, messages summed by index_add_, then an MLP."""

    def __init__(self, d, heads, e_dim):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.src, self.dst = _nn.Linear(d, d), _nn.Linear(d, d)
        self.edge = _nn.Linear(e_dim, d)
        self.att = _nn.Parameter(torch.randn(heads, d // heads) / math.sqrt(d // heads))
        self.out, self.n1, self.n2 = _nn.Linear(d, d), _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.ff = mlp(d, 2 * d, d, act=_nn.GELU)

    def forward(self, x, src, dst, ef):
        n, e = x.shape[0], src.shape[0]
        hs = self.src(x).index_select(0, src).view(e, self.h, self.dh)
        hd = self.dst(x).index_select(0, dst).view(e, self.h, self.dh)
        score = (_F.leaky_relu(hs + hd + self.edge(ef).view(e, self.h, self.dh), 0.2) * self.att).sum(-1).float()
        idx = dst[:, None].expand(e, self.h)
        top = score.new_full((n, self.h), -1e4).scatter_reduce(0, idx, score.detach(), "amax", include_self=True)
        w = (score - top.index_select(0, dst)).exp()
        den = w.new_zeros(n, self.h).index_add_(0, dst, w)
        alpha = w / den.index_select(0, dst).clamp_min(1e-9)
        msg = hs.float() * alpha[..., None]
        agg = msg.new_zeros(n, self.h, self.dh).index_add_(0, dst, msg).view(n, -1)
        x = self.n1(x + self.out(agg.to(x.dtype)))
        return self.n2(x + self.ff(x))


class _FlowGAT(_nn.Module):
    def __init__(self, f_in, n_kind, d, heads, layers, e_dim):
        super().__init__()
        self.inp = mlp(f_in, d, d, act=_nn.GELU)
        self.kind = _nn.Embedding(n_kind, d)
        self.layers = _nn.ModuleList(_GATLayer(d, heads, e_dim) for _ in range(layers))
        self.node = mlp(d, d, 4, act=_nn.GELU)
        self.corr = mlp(2 * d + e_dim, d, 1, act=_nn.GELU)
        self.alarm = mlp(d, d, 1, act=_nn.GELU)

    def forward(self, feat, kind, src, dst, ef, graph, n_graph):
        x = self.inp(feat) + self.kind(kind)
        for layer in self.layers:
            x = layer(x, src, dst, ef)
        node = self.node(x).float()
        corr = self.corr(torch.cat([x.index_select(0, src), x.index_select(0, dst), ef.to(x.dtype)], -1)).float()
        xf = x.float()
        pooled = xf.new_zeros(n_graph, xf.shape[1]).index_add_(0, graph, xf)
        cnt = xf.new_zeros(n_graph).index_add_(0, graph, torch.ones_like(xf[:, 0]))
        return node, corr[:, 0], self.alarm(pooled / cnt[:, None]).float()[:, 0]


@_workload("visitor flow training through aquarium galleries (random init, a graph attention network): 4-12 aquarium layouts a step (drawn), each of 24-64 galleries (drawn per layout; tunnels, touch pools, jelly rooms, shark tanks and so on, from a 12-row kind table), every gallery joined to 4 random galleries of its own layout by corridors made on the device (both directions and a self loop, 3 features each: length, width, stairs); each gallery's last 8 quarter-hours of occupancy, its entry rate, the time of day and a show flag (12 features) through an MLP (width 128), 4 graph attention layers of 4 heads (GATv2-style scores with the corridor features, the softmax over incoming corridors by a scatter_reduce amax (of the detached scores) and index_add_ in fp32, messages by index_add_, residual, layer norms and an MLP); each gallery's occupancy 15, 30 and 60 minutes ahead and dwell time by MSE, each corridor's visitor flow by MSE and each layout's crowding alarm (its galleries pooled by index_add_) by BCE; AdamW, clipping, bf16 autocast, 425 steps; the losses read back every 20 steps and every 85 steps a no-grad pass over 12 layouts of 64 galleries with the occupancy MAE read back")
def gallery_visitor_flow_gat_train(rng):
    f_in, n_kind, d, heads, layers, e_dim, k = 12, 12, _smoke(128, 16), 4, _smoke(4, 1), 3, 4
    model = _FlowGAT(f_in, n_kind, d, heads, layers, e_dim).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    steps, every = _smoke(425, 3), _smoke(85, 2)
    g_lo, g_hi, n_lo, n_hi = _smoke(4, 2), _smoke(12, 3), _smoke(24, 5), _smoke(64, 8)

    def layouts(sizes):
        g, n = len(sizes), sum(sizes)
        offs = [0]
        for s in sizes[:-1]:
            offs.append(offs[-1] + s)
        graph = torch.repeat_interleave(torch.arange(g, device="cuda"), torch.tensor(sizes, device="cuda"),
                                        output_size=n)
        off = torch.tensor(offs, device="cuda").index_select(0, graph)
        size = torch.tensor(sizes, device="cuda").index_select(0, graph)
        node = torch.arange(n, device="cuda")
        nbr = off[:, None] + (torch.rand(n, k, device="cuda") * size[:, None]).long().clamp_max(size[:, None] - 1)
        src = torch.cat([nbr.flatten(), node.repeat_interleave(k, output_size=n * k), node])
        dst = torch.cat([node.repeat_interleave(k, output_size=n * k), nbr.flatten(), node])
        ef = torch.rand(src.shape[0], e_dim, device="cuda")
        hist = torch.rand(n, 8, device="cuda").cumsum(-1) / 4.0
        hour = torch.rand(g, device="cuda").index_select(0, graph) * 2 * math.pi
        feat = torch.cat([hist, torch.rand(n, 1, device="cuda"), hour.sin()[:, None], hour.cos()[:, None],
                          (torch.rand(n, 1, device="cuda") < 0.1).float()], -1)
        kind = torch.randint(0, n_kind, (n,), device="cuda")
        occ = hist[:, -1:] + torch.randn(n, 4, device="cuda") * 0.1
        flow = (hist[:, -1].index_select(0, src) - hist[:, -1].index_select(0, dst)) * ef[:, 1]
        crowd = torch.zeros(g, device="cuda").index_add_(0, graph, hist[:, -1]) / torch.tensor(sizes, device="cuda")
        return feat, kind, src, dst, ef, graph, occ, flow, (crowd > 1.0).float()

    def run(sizes):
        feat, kind, src, dst, ef, graph, occ, flow, alarm = layouts(sizes)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            p_node, p_corr, p_alarm = model(feat, kind, src, dst, ef, graph, len(sizes))
        return p_node, p_corr, p_alarm, occ, flow, alarm

    for step in range(steps):
        model.train()
        sizes = [rng.randint(n_lo, n_hi) for _ in range(rng.randint(g_lo, g_hi))]
        p_node, p_corr, p_alarm, occ, flow, alarm = run(sizes)
        l_node = _F.mse_loss(p_node, occ)
        l_corr = _F.mse_loss(p_corr, flow)
        l_alarm = _F.binary_cross_entropy_with_logits(p_alarm, alarm)
        loss = l_node + l_corr + 0.2 * l_alarm
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_node.detach(), l_corr.detach(), l_alarm.detach()]).tolist()
        del p_node, p_corr, p_alarm, occ, flow, alarm, l_node, l_corr, l_alarm, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                p_node, p_corr, p_alarm, occ, flow, alarm = run([n_hi] * g_hi)
                mae = (p_node - occ).abs().mean()
            mae.item()
            del p_node, p_corr, p_alarm, occ, flow, alarm, mae


# ---------------------------------------------------------------- rare species images (diffusion transformer sampler)


class _DiTBlock(_nn.Module):
    """A DiT block: adaLN-zero modulation (shift, scale and gate for attention and MLP from the condition), SDPA."""

    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.n1 = _nn.LayerNorm(d, elementwise_affine=False)
        self.n2 = _nn.LayerNorm(d, elementwise_affine=False)
        self.qkv, self.proj = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.ff = mlp(d, 4 * d, d, act=_nn.GELU)
        self.mod = _nn.Linear(d, 6 * d)

    def forward(self, x, c):
        b, t, d = x.shape
        sh1, sc1, g1, sh2, sc2, g2 = self.mod(_F.silu(c))[:, None].chunk(6, -1)
        h = self.n1(x) * (1 + sc1) + sh1
        q, k, v = self.qkv(h).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        a = _F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, t, d)
        x = x + g1 * self.proj(a)
        return x + g2 * self.ff(self.n2(x) * (1 + sc2) + sh2)


class _SpeciesDiT(_nn.Module):
    def __init__(self, cin, patch, d, heads, layers, rows, cols, n_species):
        super().__init__()
        self.p, self.cin = patch, cin
        self.emb = _nn.Linear(cin * patch * patch, d)
        self.row, self.col = _nn.Embedding(rows, d), _nn.Embedding(cols, d)
        self.species = _nn.Embedding(n_species + 1, d)  # the last row is the unconditional one
        self.t = mlp(256, d, d, act=_nn.SiLU)
        self.blocks = _nn.ModuleList(_DiTBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d, elementwise_affine=False)
        self.mod = _nn.Linear(d, 2 * d)
        self.out = _nn.Linear(d, cin * patch * patch)

    def forward(self, z, t, y):
        b, c, hh, ww = z.shape
        p, gh, gw = self.p, hh // self.p, ww // self.p
        tok = z.view(b, c, gh, p, gw, p).permute(0, 2, 4, 1, 3, 5).reshape(b, gh * gw, c * p * p)
        pos = (self.row(torch.arange(gh, device=z.device))[:, None] + self.col(torch.arange(gw, device=z.device))[None])
        x = self.emb(tok) + pos.reshape(1, gh * gw, -1)
        cond = self.t(_sincos(t * 1000.0, 256)) + self.species(y)
        for blk in self.blocks:
            x = blk(x, cond)
        sh, sc = self.mod(_F.silu(cond))[:, None].chunk(2, -1)
        out = self.out(self.norm(x) * (1 + sc) + sh).float()
        return out.view(b, gh, gw, c, p, p).permute(0, 3, 1, 4, 2, 5).reshape(b, c, hh, ww)


@_workload("rare species image sampling for an aquarium's identification guides (random init, a diffusion transformer with flow matching): 29-31 requests (drawn) of 2-8 images (drawn) of one of 64 species each (drawn per image), latents of 4 channels at 24 x 24, 32 x 32, 24 x 40 or 32 x 48 (drawn per request) in 2 x 2 patches (144-384 tokens) with row and column tables of 16 and 24 rows; 8 DiT blocks of width 384, 6 heads, adaLN-zero modulation from a timestep MLP (sine features of 256) plus a 65-row species table (the last row unconditional); Euler steps of the flow from noise over 16-40 steps (drawn per request) with classifier-free guidance (scale 2-6, drawn; the conditional and unconditional halves in one batch); then a convolutional decoder (3x3 convolutions of 128/96/64 with SiLU and three nearest 2x upsamplings) to RGB at 8x the latent; in eval mode under bf16 autocast; each image's mean colour, contrast and sharpness (a Laplacian's variance) read back once per request")
def rare_species_dit_flow_sample(rng):
    cin, patch, d, heads, layers, n_species = 4, 2, _smoke(384, 32), _smoke(6, 2), _smoke(8, 1), 64
    res_opts = _smoke([(24, 24), (32, 32), (24, 40), (32, 48)], [(8, 8), (8, 12)])
    rows = max(r for r, _ in res_opts) // patch
    cols = max(c for _, c in res_opts) // patch
    model = _SpeciesDiT(cin, patch, d, heads, layers, rows, cols, n_species).cuda().eval()
    dec = _nn.Sequential(_nn.Conv2d(cin, 128, 3, 1, 1), _nn.SiLU(), _nn.Upsample(scale_factor=2.0),
                         _nn.Conv2d(128, 96, 3, 1, 1), _nn.SiLU(), _nn.Upsample(scale_factor=2.0),
                         _nn.Conv2d(96, 64, 3, 1, 1), _nn.SiLU(), _nn.Upsample(scale_factor=2.0),
                         _nn.Conv2d(64, 3, 3, 1, 1)).cuda().eval()
    model.requires_grad_(False)
    dec.requires_grad_(False)
    lap = torch.tensor([[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]], device="cuda").view(1, 1, 3, 3)
    nreq = rng.randint(_smoke(29, 2), _smoke(31, 2))
    for _ in range(nreq):
        b = rng.randint(2, _smoke(8, 3))
        hh, ww = rng.choice(res_opts)
        n_steps = rng.randint(_smoke(16, 2), _smoke(40, 3))
        scale = rng.uniform(2.0, 6.0)
        labels = [rng.randrange(n_species) for _ in range(b)]
        with torch.no_grad():
            y = torch.tensor(labels + [n_species] * b, device="cuda")
            z = torch.randn(b, cin, hh, ww, device="cuda")
            for i in range(n_steps):
                t = torch.full((2 * b,), 1.0 - i / n_steps, device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    v = model(torch.cat([z, z]), t, y)
                vc, vu = v.chunk(2)
                z = z - (vu + scale * (vc - vu)) / n_steps
                del t, v, vc, vu
            with torch.autocast("cuda", dtype=torch.bfloat16):
                img = torch.sigmoid(dec(z).float())
            grey = img.mean(1, keepdim=True)
            sharp = _F.conv2d(grey, lap, padding=1).flatten(1).var(-1)
            figs = torch.cat([img.mean((2, 3)), img.flatten(2).std(-1), sharp[:, None]], -1)
        figs.tolist()
        del y, z, img, grey, sharp, figs


# ---------------------------------------------------------------- life-support world model (LSTM written out)


class _LSTMCell(_nn.Module):
    """An LSTM cell written out: the input's gates given (computed beforehand where the inputs are known), the
    hidden state's here; the cell state kept in fp32."""

    def __init__(self, h):
        super().__init__()
        self.hh = _nn.Linear(h, 4 * h, bias=False)

    def forward(self, gx, h, c):
        g = gx + self.hh(h.to(gx.dtype))
        i, f, gg, o = g.chunk(4, -1)
        c = torch.sigmoid(f).float() * c + (torch.sigmoid(i) * torch.tanh(gg)).float()
        return (torch.sigmoid(o).float() * torch.tanh(c)), c


@_workload("life-support world model training for aquarium tanks (random init, two LSTM cells written out step by step): 48-160 life-support loops a step (drawn), each with 14 sensor channels (flows of the main pumps, sand filter pressures, skimmer, ozone ORP, UV, chiller and heater temperatures, dissolved oxygen and so on) and 8 actuator setpoints every 10 minutes over a context of 24-48 readings (drawn per loop, left-padded to the step's longest under a mask, padded steps keeping zero state by torch.where) and a loop kind from a 6-row table; the sensors, setpoints and the mask flag through an input MLP (width 192) plus the kind's row, the first cell's input gates for the context computed at once, two LSTM cells of 256 step by step, the next reading's change predicted at every context step (teacher forcing, masked MSE); then an open-loop rollout of 12 steps fed its own predicted sensors and the planned setpoints, the rollout's sensors by MSE weighted toward the near steps and 6 alarms (low flow, high pressure, ORP high, temperature out of band, low oxygen, skimmer overflow) per rollout step by BCE; AdamW, clipping, bf16 autocast, 54 steps; the losses read back every 10 steps and every 13 steps a no-grad rollout over 64 loops of 48 readings with the rollout error read back")
def life_support_lstm_world_model_train(rng):
    n_sens, n_act, n_kind, n_alarm = 14, 8, 6, 6
    d, hid, horizon = _smoke(192, 16), _smoke(256, 16), _smoke(12, 3)
    inp = mlp(n_sens + n_act + 1, d, d, act=_nn.GELU).cuda()
    kind_t = _nn.Embedding(n_kind, d).cuda()
    gx1, gx2 = _nn.Linear(d, 4 * hid).cuda(), _nn.Linear(hid, 4 * hid).cuda()
    cell1, cell2 = _LSTMCell(hid).cuda(), _LSTMCell(hid).cuda()
    head = mlp(hid, hid, n_sens + n_alarm, act=_nn.GELU).cuda()
    mods = _nn.ModuleList([inp, kind_t, gx1, gx2, cell1, cell2, head])
    opt = torch.optim.AdamW(mods.parameters(), lr=1e-3, weight_decay=0.01)
    steps, every = _smoke(54, 3), _smoke(13, 2)
    t_lo, t_hi = _smoke(24, 4), _smoke(48, 6)
    w_h = torch.linspace(1.0, 0.4, horizon, device="cuda")

    def data(lens):
        b, t = len(lens), max(lens)
        keep = keep_mask([t - n for n in lens], t).logical_not()  # left padding: the last len steps are real
        sens = (torch.randn(b, t + horizon + 1, n_sens, device="cuda") * 0.05).cumsum(1)
        act = torch.rand(b, t + horizon, n_act, device="cuda")
        kind = torch.randint(0, n_kind, (b,), device="cuda")
        alarm = (sens[:, t + 1:].abs() > 0.35).float()[..., :n_alarm]
        return keep, sens, act, kind, alarm

    def cells(g, h1, c1, h2, c2, k):
        n1, m1 = cell1(g, h1, c1)
        n2, m2 = cell2(gx2(n1), h2, c2)
        if k is None:
            return n1, m1, n2, m2
        return (torch.where(k, n1, h1), torch.where(k, m1, c1), torch.where(k, n2, h2), torch.where(k, m2, c2))

    def run(keep, sens, act, kind):
        b, t = keep.shape
        ke = kind_t(kind)[:, None]
        x = torch.cat([sens[:, :t], act[:, :t], keep[..., None].float()], -1)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            g1 = gx1(inp(x) + ke)
            h1 = c1 = h2 = c2 = torch.zeros(b, hid, device="cuda")
            ctx = []
            for s in range(t):
                h1, c1, h2, c2 = cells(g1[:, s], h1, c1, h2, c2, keep[:, s:s + 1])
                ctx.append(h2)
            out_ctx = head(torch.stack(ctx, 1)).float()
            cur = sens[:, t - 1] + out_ctx[:, -1, :n_sens]
            roll = []
            for s in range(horizon):
                one = torch.ones(b, 1, device="cuda")
                g = gx1(inp(torch.cat([cur, act[:, t + s], one], -1)) + ke[:, 0])
                h1, c1, h2, c2 = cells(g, h1, c1, h2, c2, None)
                o = head(h2).float()
                cur = cur + o[:, :n_sens]
                roll.append(torch.cat([cur, o[:, n_sens:]], -1))
            roll = torch.stack(roll, 1)
        return out_ctx, roll

    for step in range(steps):
        mods.train()
        b = rng.randint(_smoke(48, 2), _smoke(160, 3))
        lens = [rng.randint(t_lo, t_hi) for _ in range(b)]
        keep, sens, act, kind, alarm = data(lens)
        t = keep.shape[1]
        out_ctx, roll = run(keep, sens, act, kind)
        w = keep.float()[..., None]
        l_ctx = ((out_ctx[..., :n_sens] - (sens[:, 1:t + 1] - sens[:, :t])).pow(2) * w).sum() / (w.sum() * n_sens)
        l_roll = ((roll[..., :n_sens] - sens[:, t + 1:]).pow(2).mean(-1) * w_h).mean()
        l_alarm = _F.binary_cross_entropy_with_logits(roll[..., n_sens:], alarm)
        loss = l_ctx + l_roll + 0.3 * l_alarm
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(mods.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_ctx.detach(), l_roll.detach(), l_alarm.detach()]).tolist()
        del keep, sens, act, kind, alarm, out_ctx, roll, w, l_ctx, l_roll, l_alarm, loss
        if (step + 1) % every == 0:
            mods.eval()
            with torch.no_grad():
                keep, sens, act, kind, alarm = data([t_hi] * _smoke(64, 2))
                out_ctx, roll = run(keep, sens, act, kind)
                err = (roll[..., :n_sens] - sens[:, t_hi + 1:]).abs().mean()
            err.item()
            del keep, sens, act, kind, alarm, out_ctx, roll, err


# ---------------------------------------------------------------- fish behaviour on tank cameras ((2+1)D convnet)


class _R21(_nn.Module):
    """A (2+1)D convolution: a spatial 1x3x3 then a temporal 3x1x1, with batch norm and ReLU between."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        mid = (cin * cout * 27) // (cin * 9 + 3 * cout)
        self.s = _nn.Conv3d(cin, mid, (1, 3, 3), (1, stride[1], stride[2]), (0, 1, 1), bias=False)
        self.bn = _nn.BatchNorm3d(mid)
        self.t = _nn.Conv3d(mid, cout, (3, 1, 1), (stride[0], 1, 1), (1, 0, 0), bias=False)

    def forward(self, x):
        return self.t(_F.relu(self.bn(self.s(x))))


class _R21Block(_nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1, self.b1 = _R21(cin, cout, stride), _nn.BatchNorm3d(cout)
        self.c2, self.b2 = _R21(cout, cout, (1, 1, 1)), _nn.BatchNorm3d(cout)
        self.sc = (_nn.Sequential(_nn.Conv3d(cin, cout, 1, stride, bias=False), _nn.BatchNorm3d(cout))
                   if stride != (1, 1, 1) or cin != cout else _nn.Identity())

    def forward(self, x):
        return _F.relu(self.b2(self.c2(_F.relu(self.b1(self.c1(x))))) + self.sc(x))


class _BehaviourNet(_nn.Module):
    def __init__(self, widths, n_cls):
        super().__init__()
        w0 = widths[0]
        self.stem = _nn.Sequential(_nn.Conv3d(3, w0, (1, 7, 7), (1, 2, 2), (0, 3, 3), bias=False),
                                   _nn.BatchNorm3d(w0), _nn.ReLU(),
                                   _nn.Conv3d(w0, w0, (3, 1, 1), 1, (1, 0, 0), bias=False), _nn.BatchNorm3d(w0),
                                   _nn.ReLU())
        strides = [(1, 1, 1), (2, 2, 2), (2, 2, 2), (1, 2, 2)]
        self.stages, c = _nn.ModuleList(), w0
        for w, s in zip(widths, strides):
            self.stages.append(_nn.Sequential(_R21Block(c, w, s), _R21Block(w, w, (1, 1, 1))))
            c = w
        self.cls = _nn.Linear(c, n_cls)
        self.stress = _nn.Conv1d(c, 1, 3, 1, 1)

    def forward(self, x):
        t = x.shape[2]
        h = self.stem(x)
        for stage in self.stages:
            h = stage(h)
        per_t = h.mean((3, 4))
        stress = _F.interpolate(self.stress(per_t).float(), size=t, mode="linear", align_corners=False)[:, 0]
        return self.cls(per_t.mean(-1)).float(), stress


@_workload("fish behaviour serving on tank cameras (random init, a (2+1)D convolutional network): 1,270-1,290 requests (drawn) of 1-6 clips (drawn) of 8, 12 or 16 frames (drawn per request) at 112 x 112, 128 x 160 or 144 x 176 px (drawn per request), uint8 uploaded on a side stream from two reused pinned host buffers (filled once, sized for 6 x 3 x 16 x 144 x 176) one request ahead (one span, through SideUploads.ahead), normalised on the device; a (2+1)D ResNet (a 1x7x7 strided stem and a 3x1x1 convolution, 4 stages of 2 blocks of factored 1x3x3 then 3x1x1 convolutions with batch norm, 32/64/128/256 channels, strided in time and space in stages 2 and 3 and in space in stage 4), in eval mode under bf16 autocast; each clip's behaviour (of 8: normal, gasping, flashing, erratic swimming, lethargy, fin clamping, aggression, spawning) from the pooled features, a per-frame stress score from a temporal convolution interpolated back to the clip's frames; each request's top-3 behaviours, their probabilities and the stress scores read back once")
def fish_behaviour_clip_serve(rng):
    widths, n_cls = _smoke([32, 64, 128, 256], [8, 8, 16, 16]), 8
    max_c, max_t = _smoke(6, 2), _smoke(16, 8)
    res_opts = _smoke([(112, 112), (128, 160), (144, 176)], [(32, 32), (32, 48)])
    max_px = max(h * w for h, w in res_opts)
    model = _BehaviourNet(widths, n_cls).cuda().eval()
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_c * 3 * max_t * max_px,), generator=gen, dtype=torch.uint8).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    mean = torch.tensor([0.25, 0.45, 0.55], device="cuda").view(1, 3, 1, 1, 1)
    std = torch.tensor([0.2, 0.22, 0.25], device="cuda").view(1, 3, 1, 1, 1)

    nreq = rng.randint(_smoke(1270, 3), _smoke(1290, 4))
    plan = []
    for _ in range(nreq):
        hh, ww = rng.choice(res_opts)
        plan.append((rng.randint(1, max_c), rng.choice([8, 12, 16]) if max_t >= 16 else max_t, hh, ww))

    for (c, t, hh, ww), raw in up.ahead(plan, lambda p: (p[0] * 3 * p[1] * p[2] * p[3],)):
        with torch.no_grad():
            x = (raw.view(c, 3, t, hh, ww).float() / 255.0 - mean) / std
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits, stress = model(x)
            top = logits.softmax(-1).topk(3, -1)
            figs = torch.cat([top.values.flatten(), top.indices.float().flatten(), torch.sigmoid(stress).flatten()])
        figs.tolist()
        del raw, x, logits, stress, top, figs

"""The ninety-fourth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch93_b.py are): semiconductor design and fabrication, written in torch alone, first half. Routing congestion
prediction training (a U-Net over placement feature maps of drawn grid sizes, horizontal and vertical overflow maps
and a hotspot mask), a lithography hotspot detection service (a residual convnet over two-layer layout clips of
drawn window sizes, uploaded on a side stream), static timing prediction training over netlist graphs (message
passing by index_select and index_add, then arrival-time propagation level by level through a GRU cell written out)
and wafer defect map diffusion training (a class-conditioned DDPM U-Net over wafer maps of drawn sizes inside the
wafer's disc, DDIM sampling with classifier-free guidance). Same conventions as the earlier batches: nothing
downloaded, data drawn at random on the device (or in reused pinned host buffers for the service), `rng` the
workload's random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)` so that
RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: grid sizes, clip windows, level sizes, fan-ins
and batch sizes are fixed on the host, padding and the wafer disc handled by masks multiplied in or by torch.where,
no boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
litho_hotspot_serve uploads its clips on a side stream (workload_helpers.SideUploads: two reused pinned host buffers,
one request ahead, the main stream waiting on an event, the tensors record_stream'ed); the other three are
single-stream. The models run under bf16 autocast.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new94.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and for
which of them the CPU smoke run (RECORD_SMOKE=1) ran.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, TimeResBlock, _sincos, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- routing congestion prediction (U-Net)


def _conv_bn(cin, cout):
    return [_nn.Conv2d(cin, cout, 3, 1, 1, bias=False), _nn.BatchNorm2d(cout), _nn.ReLU(inplace=True)]


class _CongestionUNet(_nn.Module):
    """Double 3x3 conv-BN-ReLU stages, max-pool down, bilinear up with skips; two overflow maps (horizontal and
    vertical, softplus) and a hotspot logit."""

    def __init__(self, c_in, widths):
        super().__init__()
        self.enc = _nn.ModuleList()
        c = c_in
        for w in widths:
            self.enc.append(_nn.Sequential(*_conv_bn(c, w), *_conv_bn(w, w)))
            c = w
        self.dec = _nn.ModuleList(_nn.Sequential(*_conv_bn(a + b, b), *_conv_bn(b, b))
                                  for a, b in zip(widths[:0:-1], widths[-2::-1]))
        self.head = _nn.Conv2d(widths[0], 3, 1)

    def forward(self, x):
        skips = []
        for i, e in enumerate(self.enc):
            x = e(x if i == 0 else _F.max_pool2d(x, 2))
            skips.append(x)
        for d, s in zip(self.dec, skips[-2::-1]):
            x = d(torch.cat([_F.interpolate(x, size=s.shape[-2:], mode="bilinear", align_corners=False), s], 1))
        out = self.head(x).float()
        return _F.softplus(out[:, :2]), out[:, 2]


@_workload("routing congestion prediction training (random init, a U-Net over placement feature maps, RouteNet-style): placement grids of 128-256 bins a side (drawn per step, a multiple of 32) with 4-16 designs a step (drawn, at most 8 x 256^2 bins per step), 7 feature channels drawn on the device (cell density, pin density, a macro mask from a thresholded coarse random field, horizontal and vertical RUDY, net-crossing counts and a pin-access proxy, each a blurred random field); a channels-last U-Net (double 3x3 conv-BN-ReLU stages of 32/64/128/256, max-pooling, bilinear upsampling with skips) to horizontal and vertical overflow maps (softplus, smooth-L1 against smoothed random targets, weighted off macros) and a hotspot logit (binary cross-entropy against overflow above 1.2); AdamW, clipping, bf16 autocast, 870 steps; the losses read back every 20 steps and every 174 steps a no-grad evaluation of 4 designs of 256 bins with the normalised RMSE and the hotspot precision among the top 2% of scores read back")
def congestion_unet_train(rng):
    widths, c_in = _smoke([32, 64, 128, 256], [8, 16]), 7
    model = _CongestionUNet(c_in, widths).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=1e-4)
    lo, hi, budget = _smoke(128, 32), _smoke(256, 64), _smoke(8 * 256 * 256, 4 * 64 * 64)

    def blur(b, c, n, k):
        return _F.avg_pool2d(torch.rand(b, c, n, n, device="cuda"), k, 1, k // 2)

    def designs(b, n):
        coarse = _F.interpolate(torch.rand(b, 1, n // 16, n // 16, device="cuda"), size=(n, n), mode="nearest")
        macro = (coarse > 0.8).float()
        feats = torch.cat([blur(b, 6, n, 5), macro], 1).contiguous(memory_format=torch.channels_last)
        over = 2.0 * blur(b, 2, n, 7) * (1 - macro)
        hot = (over.amax(1) > 1.2).float()
        return feats, over, hot, 1 - macro[:, 0]

    steps = _smoke(870, 3)
    for step in range(steps):
        model.train()
        n = rng.randint(lo // 32, hi // 32) * 32
        b = rng.randint(_smoke(4, 1), max(_smoke(4, 1), min(_smoke(16, 4), budget // (n * n))))
        feats, over, hot, keep = designs(b, n)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred, h_log = model(feats)
        l_o = (_F.smooth_l1_loss(pred, over, reduction="none").mean(1) * keep).sum() / keep.sum().clamp(min=1)
        l_h = _F.binary_cross_entropy_with_logits(h_log, hot, pos_weight=torch.tensor(4.0, device="cuda"))
        loss = l_o + 0.5 * l_h
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_o.detach(), l_h.detach()]).tolist()
        del feats, over, hot, keep, pred, h_log, l_o, l_h, loss
        if (step + 1) % _smoke(174, 2) == 0:
            model.eval()
            with torch.no_grad():
                feats, over, hot, keep = designs(_smoke(4, 2), hi)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pred, h_log = model(feats)
                nrmse = (pred - over).pow(2).mean().sqrt() / over.std().clamp(min=1e-6)
                k = max(1, h_log.numel() // 50)
                prec = hot.flatten()[h_log.flatten().topk(k).indices].mean()
                out = torch.stack([nrmse, prec])
            out.tolist()
            del feats, over, hot, keep, pred, h_log, nrmse, prec, out


# ---------------------------------------------------------------- lithography hotspot detection service


class _BasicBlock(_nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1, self.b1 = _nn.Conv2d(cin, cout, 3, stride, 1, bias=False), _nn.BatchNorm2d(cout)
        self.c2, self.b2 = _nn.Conv2d(cout, cout, 3, 1, 1, bias=False), _nn.BatchNorm2d(cout)
        self.sc = (_nn.Sequential(_nn.Conv2d(cin, cout, 1, stride, bias=False), _nn.BatchNorm2d(cout))
                   if stride != 1 or cin != cout else _nn.Identity())

    def forward(self, x):
        return _F.relu(self.b2(self.c2(_F.relu(self.b1(self.c1(x))))) + self.sc(x))


class _HotspotNet(_nn.Module):
    """A 5x5 stride-2 stem, residual stages (stride 2 from the second), global average and max pooling; hotspot
    logits (2) and an edge-placement-error severity."""

    def __init__(self, c_in, widths):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(c_in, widths[0], 5, 2, 2, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU(inplace=True))
        blocks, c = [], widths[0]
        for i, w in enumerate(widths):
            blocks += [_BasicBlock(c, w, 1 if i == 0 else 2), _BasicBlock(w, w, 1)]
            c = w
        self.body = _nn.Sequential(*blocks)
        self.cls, self.epe = _nn.Linear(2 * c, 2), _nn.Linear(2 * c, 1)

    def forward(self, x):
        h = self.body(self.stem(x))
        z = torch.cat([h.mean((2, 3)), h.amax((2, 3))], 1)
        return self.cls(z).float(), _F.softplus(self.epe(z)).float()[:, 0]


@_workload("lithography hotspot detection serving (random init, a residual convnet over layout clips): 2,150-2,250 requests (drawn) of 8-64 clips each (drawn), all clips of a request at one window (128, 192 or 256 px a side, drawn per request), two layers per clip (metal and via) as uint8 rasters; uploaded on a side stream from two reused pinned host buffers (filled once with rectangles of 0/255, sized for 64 clips of 2 x 256^2) one request ahead (one span, waited on by event, record_stream'ed), scaled to 0-1 on the device; a channels-last 5x5 stride-2 stem of 32 channels and residual stages of 32/64/128/256 (two basic blocks each, batch norm) under bf16 autocast, global average and max pooling; hotspot probabilities against a per-request threshold of 0.3-0.7 (drawn), an edge-placement-error severity, the hotspot count and the top-4 clips by probability (topk); each request's probabilities, flags, severities and top clips read back")
def litho_hotspot_serve(rng):
    widths = _smoke([32, 64, 128, 256], [8, 16])
    model = _HotspotNet(2, widths).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    windows, max_clips = _smoke([128, 192, 256], [32, 48]), _smoke(64, 6)
    big = max(windows) ** 2 * 2
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = []
    for _ in range(2):
        r = (torch.rand(max_clips * 2, 16, 16, generator=gen) > 0.55).to(torch.uint8) * 255
        r = r.repeat_interleave(max(windows) // 16, 1).repeat_interleave(max(windows) // 16, 2)
        host.append(r.flatten()[:max_clips * big].contiguous().pin_memory())
    up = SideUploads(host)
    nreq = rng.randint(_smoke(2150, 3), _smoke(2250, 4))
    plan = [(rng.randint(_smoke(8, 2), max_clips), rng.choice(windows), rng.uniform(0.3, 0.7)) for _ in range(nreq)]

    def span(p):
        return p[0] * 2 * p[1] * p[1]

    nxt = up.upload(0, span(plan[0]))
    for i in range(nreq):
        n, w, thr = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, span(plan[i + 1]))
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            x = (raw.view(n, 2, w, w).float() / 255.0).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logit, epe = model(x)
            p = logit.softmax(-1)[:, 1]
            flag = torch.where(p > thr, 1.0, 0.0)
            top = p.topk(min(4, n))
            out = torch.cat([p, flag, epe * flag, flag.sum()[None], top.values, top.indices.float()])
        out.tolist()
        del item, raw, x, logit, epe, p, flag, top, out


# ---------------------------------------------------------------- static timing prediction over netlist graphs


class _TimingGNN(_nn.Module):
    """A node encoder (cell type, drive strength, load, position ...), rounds of bidirectional edge-conditioned
    message passing over the whole netlist by index_select and index_add (normalised by degree), then arrival
    propagation level by level: each level's fan-in messages (attention-weighted by a softmax over each sink's fan-in
    edges, exp and index_add) update that level's nodes through a GRU cell written out; per-node arrival and slew, per
    edge delay."""

    def __init__(self, n_type, n_feat, n_edge, d, rounds):
        super().__init__()
        self.cell_type = _nn.Embedding(n_type, d)
        self.node = mlp(n_feat, d, d, act=_nn.SiLU)
        self.edge = mlp(n_edge, d, d, act=_nn.SiLU)
        self.fwd = _nn.ModuleList(mlp(3 * d, d, d, act=_nn.SiLU) for _ in range(rounds))
        self.bwd = _nn.ModuleList(mlp(3 * d, d, d, act=_nn.SiLU) for _ in range(rounds))
        self.upd = _nn.ModuleList(_nn.Linear(3 * d, d) for _ in range(rounds))
        self.norms = _nn.ModuleList(_nn.LayerNorm(d) for _ in range(rounds))
        self.msg = mlp(3 * d, d, d, act=_nn.SiLU)
        self.score = _nn.Linear(d, 1)
        self.gx, self.gh = _nn.Linear(2 * d, 3 * d), _nn.Linear(d, 3 * d)
        self.out = mlp(d, d, 2, act=_nn.SiLU)
        self.delay = mlp(2 * d, d, 1, act=_nn.SiLU)

    def embed(self, typ, feat, efeat, src, dst, deg_in, deg_out):
        h = self.cell_type(typ) + self.node(feat)
        e = self.edge(efeat)
        for f, bw, u, nrm in zip(self.fwd, self.bwd, self.upd, self.norms):
            hs, hd = h.index_select(0, src), h.index_select(0, dst)
            m_in = torch.zeros_like(h).index_add_(0, dst, f(torch.cat([hs, hd, e], -1)).to(h.dtype)) / deg_in
            m_out = torch.zeros_like(h).index_add_(0, src, bw(torch.cat([hd, hs, e], -1)).to(h.dtype)) / deg_out
            h = nrm(h + u(torch.cat([h, m_in, m_out], -1)))
        return h, e

    def gru(self, x, h):
        rx, zx, nx = self.gx(x).chunk(3, -1)
        rh, zh, nh = self.gh(h).chunk(3, -1)
        r, z = torch.sigmoid(rx + rh), torch.sigmoid(zx + zh)
        n = torch.tanh(nx + r * nh)
        return (1 - z) * n + z * h

    def propagate(self, h, e, levels, lsrc, ldst, leid):
        """levels: (start, size) per level on the host; lsrc/ldst/leid: per level > 0, the fan-in edges' global
        source, level-local sink and edge index."""
        s0, n0 = levels[0]
        states = [self.gru(torch.cat([h[s0:s0 + n0], torch.zeros_like(h[s0:s0 + n0])], -1), h[s0:s0 + n0])]
        for (s, n), src, dst, eid in zip(levels[1:], lsrc, ldst, leid):
            prev = torch.cat(states, 0)
            hn = h[s:s + n]
            m = self.msg(torch.cat([prev.index_select(0, src), hn.index_select(0, dst), e.index_select(0, eid)], -1))
            w = torch.exp(self.score(m).float().clamp(-20, 20))
            den = torch.zeros(n, 1, device=h.device).index_add_(0, dst, w)
            agg = torch.zeros(n, m.shape[1], device=h.device, dtype=w.dtype).index_add_(0, dst, w * m.float())
            agg = (agg / den.clamp(min=1e-6)).to(hn.dtype)
            states.append(self.gru(torch.cat([agg, hn], -1), hn))
        return torch.cat(states, 0)


@_workload("static timing prediction training over netlist graphs (random init, a levelised timing GNN): a drawn combinational netlist a step of 16-40 topological levels (drawn), 400-1,600 cells per level (drawn per level), each cell of levels > 0 with a fan-in of 1-3 (drawn per level) from random cells of the earlier levels (the previous level for the first fan-in, any earlier level for the others); 200 cell types (embedded), 8 node features (drive strength, input capacitance, load, position and others) and 5 edge features (wire length, resistance, capacitance, coupling, fan-out) drawn on the device; 3 rounds (width 128) of bidirectional edge-conditioned message passing by index_select and index_add normalised by degree, then arrival propagation level by level: fan-in messages weighted by a softmax over each sink's fan-in (exp and index_add), a GRU cell written out updating each level's nodes; log-MSE on per-node arrival and slew and on per-edge delay against drawn targets, an endpoint loss on the last level; AdamW, clipping, bf16 autocast, 84 steps; the losses read back every 10 steps and every 21 steps a no-grad evaluation on a netlist of 40 levels of 1,600 cells with the endpoint arrival correlation read back")
def timing_levelized_gnn_train(rng):
    n_type, n_feat, n_edge, d, rounds = _smoke(200, 20), 8, 5, _smoke(128, 16), _smoke(3, 1)
    model = _TimingGNN(n_type, n_feat, n_edge, d, rounds).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=1e-4)
    max_lv, lo_n, hi_n = _smoke(40, 4), _smoke(400, 8), _smoke(1600, 24)

    def netlist(sizes, fanins):
        starts = [0]
        for n in sizes[:-1]:
            starts.append(starts[-1] + n)
        levels = list(zip(starts, sizes))
        total = starts[-1] + sizes[-1]
        lsrc, ldst, leid, e0 = [], [], [], 0
        for li in range(1, len(sizes)):
            s, n, k = starts[li], sizes[li], fanins[li]
            ps, pn = levels[li - 1]
            first = torch.randint(ps, ps + pn, (n, 1), device="cuda")
            rest = torch.randint(0, s, (n, k - 1), device="cuda")
            lsrc.append(torch.cat([first, rest], 1).flatten())
            ldst.append(torch.arange(n, device="cuda").repeat_interleave(k))
            leid.append(torch.arange(e0, e0 + n * k, device="cuda"))
            e0 += n * k
        src = torch.cat(lsrc)
        dst = torch.cat([t + starts[li + 1] for li, t in enumerate(ldst)])
        typ = torch.randint(0, n_type, (total,), device="cuda")
        feat = torch.randn(total, n_feat, device="cuda")
        efeat = torch.randn(e0, n_edge, device="cuda")
        ones = torch.ones(e0, 1, device="cuda")
        deg_in = torch.zeros(total, 1, device="cuda").index_add_(0, dst, ones).clamp(min=1)
        deg_out = torch.zeros(total, 1, device="cuda").index_add_(0, src, ones).clamp(min=1)
        tgt = torch.rand(total, 2, device="cuda") * 2 + 0.05
        etgt = torch.rand(e0, device="cuda") * 0.5 + 0.01
        return (typ, feat, efeat, src, dst, deg_in, deg_out), (levels, lsrc, ldst, leid), tgt, etgt

    def run(g, prop):
        h, e = model.embed(*g)
        st = model.propagate(h, e, *prop)
        pred = _F.softplus(model.out(st).float()) + 1e-3
        src, dst = g[3], g[4]
        dl = _F.softplus(model.delay(torch.cat([st.index_select(0, src), st.index_select(0, dst)], -1)).float())
        return pred, dl[:, 0] + 1e-3

    steps = _smoke(84, 3)
    for step in range(steps):
        model.train()
        n_lv = rng.randint(_smoke(16, 3), max_lv)
        sizes = [rng.randint(lo_n, hi_n) for _ in range(n_lv)]
        fanins = [rng.randint(1, 3) for _ in range(n_lv)]
        g, prop, tgt, etgt = netlist(sizes, fanins)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred, dl = run(g, prop)
        l_n = (pred.log() - tgt.log()).pow(2).mean()
        l_e = (dl.log() - etgt.log()).pow(2).mean()
        ls, ln = prop[0][-1]
        l_end = (pred[ls:ls + ln, 0] - tgt[ls:ls + ln, 0]).abs().mean()
        loss = l_n + l_e + 0.5 * l_end
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_n.detach(), l_e.detach(), l_end.detach()]).tolist()
        del g, prop, tgt, etgt, pred, dl, l_n, l_e, l_end, loss
        if (step + 1) % _smoke(21, 2) == 0:
            model.eval()
            with torch.no_grad():
                g, prop, tgt, etgt = netlist([hi_n] * max_lv, [1] + [rng.randint(1, 3) for _ in range(max_lv - 1)])
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pred, dl = run(g, prop)
                ls, ln = prop[0][-1]
                a, t = pred[ls:ls + ln, 0], tgt[ls:ls + ln, 0]
                a, t = a - a.mean(), t - t.mean()
                corr = (a * t).sum() / (a.norm() * t.norm()).clamp(min=1e-6)
            corr.item()
            del g, prop, tgt, etgt, pred, dl, a, t, corr


# ---------------------------------------------------------------- wafer defect map diffusion


class _WaferUNet(_nn.Module):
    """A DDPM U-Net: sinusoidal timestep embedding plus a class embedding (a null class for classifier-free
    guidance), TimeResBlocks at widths w0/w1/w2 with stride-2 convolutions down, two pre-norm attention blocks at the
    lowest level, nearest upsampling with skips."""

    def __init__(self, widths, n_cls, heads):
        super().__init__()
        w0, w1, w2 = widths
        temb = 4 * w0
        self.w0 = w0
        self.t_mlp = mlp(w0, temb, temb, act=_nn.SiLU)
        self.cls = _nn.Embedding(n_cls + 1, temb)
        self.inp = _nn.Conv2d(2, w0, 3, 1, 1)
        self.d0, self.d1, self.d2 = TimeResBlock(w0, w0, temb), TimeResBlock(w1, w1, temb), TimeResBlock(w2, w2, temb)
        self.down0, self.down1 = _nn.Conv2d(w0, w1, 3, 2, 1), _nn.Conv2d(w1, w2, 3, 2, 1)
        self.attn = _nn.ModuleList(PreNormBlock(w2, heads) for _ in range(2))
        self.mid = TimeResBlock(w2, w2, temb)
        self.u1, self.u0 = TimeResBlock(w2 + w1, w1, temb), TimeResBlock(w1 + w0, w0, temb)
        self.out = _nn.Sequential(_nn.GroupNorm(8, w0), _nn.SiLU(), _nn.Conv2d(w0, 1, 3, 1, 1))

    def forward(self, x, disc, t, c):
        te = self.t_mlp(_sincos(t, self.w0)) + self.cls(c)
        h0 = self.d0(self.inp(torch.cat([x, disc], 1)), te)
        h1 = self.d1(self.down0(h0), te)
        h2 = self.d2(self.down1(h1), te)
        b, ch, hh, ww = h2.shape
        z = h2.flatten(2).transpose(1, 2)
        for blk in self.attn:
            z = blk(z)
        h = self.mid(z.transpose(1, 2).reshape(b, ch, hh, ww), te)
        h = self.u1(torch.cat([_F.interpolate(h, scale_factor=2, mode="nearest"), h1], 1), te)
        h = self.u0(torch.cat([_F.interpolate(h, scale_factor=2, mode="nearest"), h0], 1), te)
        return self.out(h).float()


@_workload("wafer defect map diffusion training (random init, a class-conditioned DDPM U-Net, WM-811K-style): 8-42 wafer maps a step (drawn, at most 24 x 64^2 pixels' worth, but never fewer than 8) at 48-112 dies a side (drawn per step, a multiple of 16), each a fail-density map inside the wafer's disc (the disc mask a second input channel, off-wafer pixels zeroed), drawn on the device from one of 9 defect patterns (centre, donut, edge-local, edge-ring, local, near-full, random, scratch, none) as radial, angular and blob fields; a 1,000-step linear noise schedule, timesteps drawn per map; a U-Net (widths 64/128/256, one TimeResBlock per level, stride-2 convolutions, two pre-norm attention blocks of 4 heads at the lowest level, nearest upsampling with skips), the class dropped to a null class for 10% of maps; the noise MSE inside the disc; AdamW, clipping, bf16 autocast, 395 steps; the loss read back every 20 steps and every 79 steps a no-grad 10-step DDIM sample of 9 maps of 64 dies (one per pattern) with classifier-free guidance (scale 2, conditional and null in one batch) and each map's fail fraction inside the disc read back")
def wafer_map_diffusion_train(rng):
    widths, n_cls, heads = _smoke([64, 128, 256], [16, 16, 32]), 9, _smoke(4, 2)
    model = _WaferUNet(widths, n_cls, heads).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.01)
    T = 1000
    betas = torch.linspace(1e-4, 0.02, T, dtype=torch.float64)
    abar_host = torch.cumprod(1 - betas, 0).tolist()
    abar = torch.tensor(abar_host, device="cuda", dtype=torch.float32)
    lo, hi, budget = _smoke(48, 16), _smoke(112, 32), _smoke(24 * 64 * 64, 4 * 16 * 16)

    def wafers(cls, n):
        b = cls.shape[0]
        ax = torch.linspace(-1, 1, n, device="cuda")
        yy, xx = ax[:, None].expand(n, n), ax[None, :].expand(n, n)
        r = (yy * yy + xx * xx).sqrt()[None]
        ang = torch.atan2(yy, xx)[None]
        disc = (r <= 1.0).float()
        c = cls.float()[:, None, None]
        blob = _F.interpolate(torch.rand(b, 1, n // 8, n // 8, device="cuda"), size=(n, n), mode="bilinear",
                              align_corners=False)[:, 0]
        radial = torch.exp(-((r - (c % 4) / 4) ** 2) * 12)
        angular = 0.5 + 0.5 * torch.cos(ang * (1 + c % 3) + c)
        fail = (0.5 * radial * angular + 0.5 * blob) * disc
        return (2 * fail - 1)[:, None] * disc, disc[None].expand(b, 1, n, n)

    steps = _smoke(395, 3)
    for step in range(steps):
        model.train()
        n = rng.randint(lo // 16, hi // 16) * 16
        b = rng.randint(_smoke(8, 2), max(_smoke(8, 2), min(_smoke(48, 4), budget // (n * n))))
        cls = torch.randint(0, n_cls, (b,), device="cuda")
        x0, disc = wafers(cls, n)
        c_in = torch.where(torch.rand(b, device="cuda") < 0.1, torch.full_like(cls, n_cls), cls)
        t = torch.randint(0, T, (b,), device="cuda")
        a = abar[t].view(b, 1, 1, 1)
        eps = torch.randn_like(x0)
        xt = (a.sqrt() * x0 + (1 - a).sqrt() * eps) * disc
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(xt, disc, t, c_in)
        loss = ((pred - eps) ** 2 * disc).sum() / disc.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.detach().item()
        del cls, x0, disc, c_in, t, a, eps, xt, pred, loss
        if (step + 1) % _smoke(79, 2) == 0:
            model.eval()
            with torch.no_grad():
                ns, k = _smoke(64, 16), _smoke(10, 2)
                cls = torch.arange(n_cls, device="cuda")
                _, disc = wafers(cls, ns)
                x = torch.randn(n_cls, 1, ns, ns, device="cuda") * disc
                ts = [int(T - 1 - i * (T // k)) for i in range(k)]
                for i, ti in enumerate(ts):
                    a_t = abar_host[ti]
                    a_p = abar_host[ts[i + 1]] if i + 1 < k else 1.0
                    tt = torch.full((2 * n_cls,), ti, device="cuda")
                    cc = torch.cat([cls, torch.full_like(cls, n_cls)])
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        e_c, e_u = model(torch.cat([x, x]), torch.cat([disc, disc]), tt, cc).chunk(2)
                    e = e_u + 2.0 * (e_c - e_u)
                    x0 = ((x - math.sqrt(1 - a_t) * e) / math.sqrt(a_t)).clamp(-1, 1)
                    x = (math.sqrt(a_p) * x0 + math.sqrt(1 - a_p) * e) * disc
                frac = (((x + 1) / 2).clamp(0, 1) * disc).sum((1, 2, 3)) / disc.sum((1, 2, 3))
            frac.tolist()
            del cls, disc, x, tt, cc, e_c, e_u, e, x0, frac

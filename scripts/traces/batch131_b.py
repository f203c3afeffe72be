"""The hundred-and-thirty-first batch of held-out workloads for record.py, second half (see batch131.py): postal
services and mail sorting, written in torch alone. Delivery route planning training (an attention model over a
round's stops with their time windows, a transformer encoder and a pointer decoder written out stop by stop, the
visited stops masked, trained by REINFORCE against the batch's mean cost), a parcel label image sampler (a small
U-Net denoiser with a mid-level attention block, conditioned on the label kind, DDIM with classifier-free guidance,
then each label's ink coverage, contrast, text lines and barcode band), a mail piece facing service (a residual
convolutional network over the sorting machine's camera images of drawn sizes, the piece's class, facing, indicia
and barcode, the address block by soft-argmax) and carrier delivery time fine-tuning (two GRU cells written out stop
by stop over each walk's stops of drawn lengths, the first frozen; each stop's dwell time and failed-delivery risk,
each walk's completion time and returns).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the facing service), `rng` the workload's random.Random for every shape, count and sampled choice,
sizes through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or
masked_fill; no boolean-mask indexing; results read back only at logging points or once per request.
mail_piece_facing_serve uploads its images on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every embedding and position table is sized for the longest padded length that can be drawn.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, PreNormBlock, SideUploads, TimeResBlock, _sincos, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- delivery route planning (attention model, REINFORCE)


class _RouteNet(_nn.Module):
    """The depot and the stops (position, time window, service time, parcels, signature) embedded, pre-norm blocks,
    and a pointer decoder: a context of the graph's mean, the current stop and the depot to a query, its compatibility
    with each stop's key, tanh-clipped at 10."""

    def __init__(self, n_feat, d, heads, layers):
        super().__init__()
        self.depot, self.stop = _nn.Linear(n_feat, d), _nn.Linear(n_feat, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.ctx, self.key = _nn.Linear(3 * d, d), _nn.Linear(d, d)
        self.d = d

    def encode(self, feat):
        h = torch.cat([self.depot(feat[:, :1]), self.stop(feat[:, 1:])], 1)
        for blk in self.blocks:
            h = blk(h)
        h = self.norm(h)
        return h, self.key(h), h.mean(1)

    def decode(self, h, k, gmean, greedy):
        b, n1, d = h.shape
        visited = (torch.arange(n1, device=h.device) == 0)[None].expand(b, -1)
        cur = torch.zeros(b, dtype=torch.long, device=h.device)
        depot = h[:, 0]
        logps, tour = [], []
        for _ in range(n1 - 1):
            cur_h = h.gather(1, cur[:, None, None].expand(-1, 1, d))[:, 0]
            q = self.ctx(torch.cat([gmean, cur_h, depot], -1))
            u = torch.bmm(k, q[:, :, None])[..., 0] / math.sqrt(d)
            logp = (10.0 * torch.tanh(u.float())).masked_fill(visited, -1e9).log_softmax(-1)
            a = logp.argmax(-1) if greedy else torch.multinomial(logp.exp(), 1)[:, 0]
            logps.append(logp.gather(1, a[:, None])[:, 0])
            visited = visited | _F.one_hot(a, n1).bool()
            tour.append(a)
            cur = a
        return torch.stack(tour, 1), torch.stack(logps, 1).sum(1)


@_workload("delivery route planning training (random init, an attention model with a pointer decoder, REINFORCE): 64-256 delivery rounds a step (drawn) of 20-50 stops (drawn per step) and a depot, each stop with its position, a time window (start and end), a service time, a parcel count and a signature flag drawn on the device; 3 pre-norm blocks (width 128, 8 heads) over the depot and the stops, then a pointer decoder written out stop by stop (a context of the mean embedding, the current stop and the depot to a query, its compatibility with each stop's key clipped by 10 tanh, the visited stops masked by masked_fill, the next stop sampled by multinomial, the visited mask updated by one_hot); the round's cost from the stops gathered in tour order: the distance from and back to the depot plus half the lateness against the time windows (arrival times by cumsum of the travel and service times); REINFORCE of the tour's log-probability against the batch's mean cost, Adam, clipping, bf16 autocast, 180 steps; the mean cost read back every 10 steps and every 36 steps a greedy (argmax) no-grad decode of 256 rounds of 50 stops with its mean distance and lateness read back")
def delivery_route_pointer_train(rng):
    n_feat, d, heads, layers = 7, _smoke(128, 16), _smoke(8, 2), _smoke(3, 1)
    model = _RouteNet(n_feat, d, heads, layers).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    steps, every = _smoke(180, 3), _smoke(36, 2)
    max_stops = _smoke(50, 6)

    def rounds(b, n):
        xy = torch.rand(b, n + 1, 2, device="cuda")
        tw0 = torch.rand(b, n + 1, 1, device="cuda") * 6.0
        tw1 = tw0 + 1.0 + torch.rand(b, n + 1, 1, device="cuda") * 3.0
        serv = torch.rand(b, n + 1, 1, device="cuda") * 0.05
        parcels = torch.randint(0, 6, (b, n + 1, 1), device="cuda").float()
        sig = (torch.rand(b, n + 1, 1, device="cuda") < 0.1).float()
        return torch.cat([xy, tw0 / 8.0, tw1 / 8.0, serv * 10.0, parcels / 5.0, sig], -1), xy, tw1[..., 0], serv[..., 0]

    def cost(tour, xy, tw1, serv):
        b = tour.shape[0]
        pts = xy.gather(1, tour[..., None].expand(-1, -1, 2))
        path = torch.cat([xy[:, :1], pts, xy[:, :1]], 1)
        seg = (path[:, 1:] - path[:, :-1]).norm(dim=-1)
        dist = seg.sum(-1)
        arrive = (seg[:, :-1] * 4.0 + torch.cat([torch.zeros(b, 1, device="cuda"), serv.gather(1, tour)[:, :-1]], 1)
                  ).cumsum(-1)
        late = (arrive - tw1.gather(1, tour)).clamp_min(0.0).sum(-1)
        return dist, late

    for step in range(steps):
        model.train()
        b, n = rng.randint(_smoke(64, 2), _smoke(256, 4)), rng.randint(_smoke(20, 4), max_stops)
        feat, xy, tw1, serv = rounds(b, n)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h, k, gm = model.encode(feat)
            tour, logp = model.decode(h, k, gm, False)
        dist, late = cost(tour, xy, tw1, serv)
        c = (dist + 0.5 * late).detach()
        loss = ((c - c.mean()) * logp).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            c.mean().item()
        del feat, xy, tw1, serv, h, k, gm, tour, logp, dist, late, c, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                feat, xy, tw1, serv = rounds(_smoke(256, 4), max_stops)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    h, k, gm = model.encode(feat)
                    tour, logp = model.decode(h, k, gm, True)
                dist, late = cost(tour, xy, tw1, serv)
            torch.stack([dist.mean(), late.mean()]).tolist()
            del feat, xy, tw1, serv, h, k, gm, tour, logp, dist, late


# ---------------------------------------------------------------- parcel label image sampler (U-Net, DDIM, guidance)


class _LabelUNet(_nn.Module):
    """Two levels down by strided convolutions, two residual blocks and a pre-norm attention block at 1/4, two levels
    up with skips; the timestep by sine features and the label kind from a table (its last row the unconditional)."""

    def __init__(self, widths, temb, n_kind, heads):
        super().__init__()
        c0, c1, c2 = widths
        self.c0 = c0
        self.t_mlp = mlp(c0, temb, temb, act=_nn.SiLU)
        self.kind = _nn.Embedding(n_kind + 1, temb)
        self.inp = _nn.Conv2d(1, c0, 3, 1, 1)
        self.d0, self.down0 = TimeResBlock(c0, c0, temb), _nn.Conv2d(c0, c0, 3, 2, 1)
        self.d1, self.down1 = TimeResBlock(c0, c1, temb), _nn.Conv2d(c1, c1, 3, 2, 1)
        self.m1, self.m2 = TimeResBlock(c1, c2, temb), TimeResBlock(c2, c2, temb)
        self.attn = PreNormBlock(c2, heads)
        self.u1, self.u0 = TimeResBlock(c2 + c1, c1, temb), TimeResBlock(c1 + c0, c0, temb)
        self.out = _nn.Sequential(_nn.GroupNorm(8, c0), _nn.SiLU(), _nn.Conv2d(c0, 1, 3, 1, 1))

    def forward(self, x, t, kind):
        te = self.t_mlp(_sincos(t, self.c0)) + self.kind(kind)
        h0 = self.d0(self.inp(x), te)
        h1 = self.d1(self.down0(h0), te)
        m = self.m1(self.down1(h1), te)
        b, c, hh, ww = m.shape
        m = self.attn(m.flatten(2).transpose(1, 2)).transpose(1, 2).reshape(b, c, hh, ww)
        m = self.m2(m, te)
        u = self.u1(torch.cat([_F.interpolate(m, scale_factor=2.0, mode="nearest"), h1.to(m.dtype)], 1), te)
        u = self.u0(torch.cat([_F.interpolate(u, scale_factor=2.0, mode="nearest"), h0.to(u.dtype)], 1), te)
        return self.out(u).float()


@_workload("parcel label image sampling (random init, a U-Net denoiser with DDIM and classifier-free guidance): 98-102 requests (drawn) of 4-16 grey label images (drawn) of 64 x 128, 64 x 192 or 64 x 256 px (drawn per request), each of a label kind drawn on the device (of 5: domestic, international, registered, express, customs declaration); a U-Net of 64/128/192 channels (time-conditioned residual blocks with group norm, two strided downsamplings, a pre-norm attention block of 4 heads over the 1/4-resolution positions, nearest upsamplings with skips), the timestep by sine features and a 6-row kind table whose last row is the unconditional, in eval mode under bf16 autocast; deterministic DDIM (eta 0) over 10-30 of 1,000 linear-schedule timesteps (drawn per request), the conditional and unconditional halves in one batch of twice the images, guided by a scale of 1.5-4.0 (drawn per request); then each label's ink coverage, contrast, the text lines counted from the row profile's threshold crossings and the barcode band's strongest column frequency by rfft; each request's figures read back once")
def parcel_label_ddim_sample(rng):
    widths, temb, n_kind, heads = _smoke([64, 128, 192], [8, 16, 16]), _smoke(256, 16), 5, _smoke(4, 2)
    height, w_opts = _smoke(64, 16), _smoke([128, 192, 256], [16, 32])
    model = _LabelUNet(widths, temb, n_kind, heads).cuda().eval()
    model.requires_grad_(False)
    n_t = 1000
    alpha_bar = torch.cumprod(1.0 - torch.linspace(1e-4, 0.02, n_t, dtype=torch.float64), 0).tolist()

    nreq = rng.randint(_smoke(98, 2), _smoke(102, 3))
    for _ in range(nreq):
        n, width = rng.randint(_smoke(4, 1), _smoke(16, 2)), rng.choice(w_opts)
        n_steps, scale = rng.randint(_smoke(10, 2), _smoke(30, 3)), rng.uniform(1.5, 4.0)
        seq = [int(i * (n_t - 1) / (n_steps - 1)) for i in range(n_steps)][::-1]
        with torch.no_grad():
            kind = torch.randint(0, n_kind, (n,), device="cuda")
            kind2 = torch.cat([kind, torch.full_like(kind, n_kind)])
            x = torch.randn(n, 1, height, width, device="cuda")
            for i, t in enumerate(seq):
                a_t = alpha_bar[t]
                a_prev = alpha_bar[seq[i + 1]] if i + 1 < len(seq) else 1.0
                tt = torch.full((2 * n,), float(t), device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    ec, eu = model(torch.cat([x, x]), tt, kind2).chunk(2)
                e = eu + scale * (ec - eu)
                x0 = ((x - math.sqrt(1.0 - a_t) * e) / math.sqrt(a_t)).clamp(-1.0, 1.0)
                x = math.sqrt(a_prev) * x0 + math.sqrt(1.0 - a_prev) * e
                del tt, ec, eu, e, x0
            img = x[:, 0]
            ink = (img < 0.0).float().mean((-1, -2))
            contrast = img.std((-1, -2))
            rows = (img.mean(-1) < 0.0).float()
            lines = (rows[:, 1:] - rows[:, :-1]).clamp_min(0.0).sum(-1)
            band = img[:, -height // 4:].mean(1)
            spec = torch.fft.rfft(band - band.mean(-1, keepdim=True), dim=-1).abs()
            freq = spec[:, 1:].argmax(-1).float() + 1.0
            res = torch.cat([ink, contrast, lines, freq])
        res.tolist()
        del kind, kind2, x, img, ink, contrast, rows, lines, band, spec, freq, res


# ---------------------------------------------------------------- mail piece facing (residual convnet)


class _FacingNet(_nn.Module):
    """A strided stem and four strided residual stages over a grey camera image; the address block heatmap from the
    1/16 features, the class, facing, indicia and barcode from the pooled 1/32 features."""

    def __init__(self, widths, n_out):
        super().__init__()
        c0, c1, c2, c3, c4 = widths
        self.stem = _nn.Sequential(_nn.Conv2d(1, c0, 5, 2, 2, bias=False), _nn.BatchNorm2d(c0), _nn.ReLU())
        self.s1, self.s2 = BasicResBlock(c0, c1, 2), BasicResBlock(c1, c2, 2)
        self.s3, self.s4 = BasicResBlock(c2, c3, 2), BasicResBlock(c3, c4, 2)
        self.addr = _nn.Conv2d(c3, 1, 1)
        self.head = mlp(c4, c4, n_out, act=_nn.ReLU)

    def forward(self, x):
        f3 = self.s3(self.s2(self.s1(self.stem(x))))
        f4 = self.s4(f3)
        return self.addr(f3).float(), self.head(f4.mean((-1, -2))).float()


@_workload("mail piece facing serving (random init, a residual convolutional network over sorting machine camera images): 2,580-2,620 requests (drawn) of 8-48 mail pieces (drawn) imaged at 192 x 384, 256 x 512 or 320 x 640 px (drawn per request), uint8 grey images uploaded on a side stream from two reused pinned host buffers (filled once, sized for 48 x 320 x 640) one request ahead (one span, through SideUploads.ahead), normalised on the device in channels_last; a strided stem (32 channels) and four strided residual stages (48, 96, 160, 224), in eval mode under bf16 autocast; per piece its class (of 5: letter, large letter, flat, small parcel, packet), its facing (of 8: four rotations, each flipped or not), its indicia (of 4: stamp, franking meter, permit, none) and the barcode's presence from the pooled features, the address block's centre by soft-argmax of a 1/16 heatmap with its spread, and the stamp corner's ink from the image; each request's figures read back once")
def mail_piece_facing_serve(rng):
    widths = _smoke([32, 48, 96, 160, 224], [8, 8, 16, 16, 16])
    n_cls, n_face, n_ind = 5, 8, 4
    res_opts = _smoke([(192, 384), (256, 512), (320, 640)], [(32, 64), (64, 128)])
    max_n = _smoke(48, 3)
    max_px = max(h * w for h, w in res_opts)
    model = _FacingNet(widths, n_cls + n_face + n_ind + 1).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_n * max_px,), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)

    nreq = rng.randint(_smoke(2580, 3), _smoke(2620, 4))
    plan = [(rng.randint(_smoke(8, 2), max_n), *rng.choice(res_opts)) for _ in range(nreq)]

    for (n, hh, ww), raw in up.ahead(plan, lambda p: (p[0] * p[1] * p[2],)):
        with torch.no_grad():
            x = ((raw.view(n, 1, hh, ww).float() - 128.0) / 64.0).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                heat, out = model(x)
            hq, wq = heat.shape[-2:]
            p = heat.flatten(1).softmax(-1).view(n, hq, wq)
            ry, rx = torch.arange(hq, device="cuda").float() / hq, torch.arange(wq, device="cuda").float() / wq
            py, px = p.sum(-1), p.sum(-2)
            cy, cx = (py * ry).sum(-1), (px * rx).sum(-1)
            sy = ((py * (ry - cy[:, None]).pow(2)).sum(-1)).sqrt()
            sx = ((px * (rx - cx[:, None]).pow(2)).sum(-1)).sqrt()
            cls = out[:, :n_cls].softmax(-1)
            face = out[:, n_cls:n_cls + n_face].softmax(-1)
            ind = out[:, n_cls + n_face:-1].softmax(-1)
            bar = torch.sigmoid(out[:, -1])
            stamp = (x[:, 0, :hh // 4, -ww // 4:] < -0.5).float().mean((-1, -2))
            conf, fidx = face.max(-1)
            res = torch.cat([cls.flatten(), fidx.float(), conf, ind.argmax(-1).float(), bar, cx, cy, sx, sy, stamp])
        res.tolist()
        del raw, x, heat, out, p, ry, rx, py, px, cy, cx, sy, sx, cls, face, ind, bar, stamp, conf, fidx, res


# ---------------------------------------------------------------- carrier delivery times (GRU cells written out)


class _GRUCell(_nn.Module):
    """A GRU cell written out: the input's projection to the three gates made for every step at once outside the
    loop, the hidden state's projection each step."""

    def __init__(self, din, h):
        super().__init__()
        self.x, self.h = _nn.Linear(din, 3 * h), _nn.Linear(h, 3 * h, bias=False)

    def step(self, xp, h):
        xr, xz, xn = xp.float().chunk(3, -1)
        hr, hz, hn = self.h(h.to(xp.dtype)).float().chunk(3, -1)
        r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
        return (1.0 - z) * torch.tanh(xn + r * hn) + z * h


@_workload("carrier delivery time fine-tuning (random init, two GRU cells written out stop by stop, the first frozen): 32-128 carrier walks a step (drawn) of 16-40 stops each (drawn per walk, padded to the step's longest), each stop with 10 features (distance and walking time from the previous stop, letters, flats, parcels, signature, floor, the time of day, weather, a redelivery flag), an 8-row building type table and a 40-row stop position table; the embedding and the first GRU cell (256) the pretrained encoder, run under no_grad in eval mode, the second GRU cell (256) and the heads fine-tuned, each written out step by step with padded stops keeping the state by torch.where; each stop's log dwell time by masked MSE and its failed-delivery risk by masked BCE, each walk's completion time by MSE and its parcels returned to the depot by a Poisson NLL from the final state; AdamW (heads at twice the rate), clipping, bf16 autocast, 145 steps; the losses read back every 10 steps and every 29 steps a no-grad pass over 128 walks of 40 stops with the dwell error read back")
def carrier_eta_gru_finetune(rng):
    n_feat, n_bld, hid = 10, 8, _smoke(256, 16)
    max_stops = _smoke(40, 6)
    emb_f, emb_b, emb_p = _nn.Linear(n_feat, hid).cuda(), _nn.Embedding(n_bld, hid).cuda(), _nn.Embedding(
        max_stops, hid).cuda()
    cell1, cell2 = _GRUCell(hid, hid).cuda(), _GRUCell(hid, hid).cuda()
    frozen = _nn.ModuleList([emb_f, emb_b, emb_p, cell1])
    frozen.requires_grad_(False)
    stop_head, walk_head = mlp(hid, hid, 2).cuda(), mlp(hid, hid, 2).cuda()
    opt = torch.optim.AdamW([{"params": cell2.parameters(), "lr": 3e-4},
                             {"params": list(stop_head.parameters()) + list(walk_head.parameters()), "lr": 6e-4}],
                            weight_decay=0.01)
    trained = list(cell2.parameters()) + list(stop_head.parameters()) + list(walk_head.parameters())
    steps, every = _smoke(145, 3), _smoke(29, 2)

    def run(lens):
        b, t = len(lens), max(lens)
        keep = keep_mask(lens, t)
        feat = torch.randn(b, t, n_feat, device="cuda")
        bld = torch.randint(0, n_bld, (b, t), device="cuda")
        frozen.eval()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            with torch.no_grad():
                e = emb_f(feat) + emb_b(bld) + emb_p(torch.arange(t, device="cuda"))[None]
                xp1 = cell1.x(e)
                h1 = torch.zeros(b, hid, device="cuda")
                hs1 = []
                for s in range(t):
                    h1 = torch.where(keep[:, s:s + 1], cell1.step(xp1[:, s], h1), h1)
                    hs1.append(h1)
                hs1 = torch.stack(hs1, 1)
            xp2 = cell2.x(hs1)
            h2 = torch.zeros(b, hid, device="cuda")
            outs = []
            for s in range(t):
                h2 = torch.where(keep[:, s:s + 1], cell2.step(xp2[:, s], h2), h2)
                outs.append(h2)
            per_stop = stop_head(torch.stack(outs, 1)).float()
            per_walk = walk_head(h2).float()
        return keep, per_stop, per_walk

    for step in range(steps):
        cell2.train()
        b = rng.randint(_smoke(32, 2), _smoke(128, 3))
        lens = [rng.randint(_smoke(16, 3), max_stops) for _ in range(b)]
        keep, per_stop, per_walk = run(lens)
        w = keep.float()
        dwell = torch.randn(b, keep.shape[1], device="cuda") * 0.5 + 0.3
        fail = (torch.rand(b, keep.shape[1], device="cuda") < 0.06).float()
        total = torch.rand(b, device="cuda") * 3.0 + 2.0
        returned = torch.poisson(torch.full((b,), 1.5, device="cuda"))
        l_dwell = ((per_stop[..., 0] - dwell).pow(2) * w).sum() / w.sum()
        l_fail = (_F.binary_cross_entropy_with_logits(per_stop[..., 1], fail, reduction="none") * w).sum() / w.sum()
        l_total = _F.mse_loss(per_walk[:, 0], total)
        l_ret = _F.poisson_nll_loss(per_walk[:, 1], returned)
        loss = l_dwell + l_fail + 0.2 * l_total + 0.5 * l_ret
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trained, 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_dwell.detach(), l_fail.detach(), l_total.detach(), l_ret.detach()]).tolist()
        del keep, per_stop, per_walk, w, dwell, fail, total, returned, l_dwell, l_fail, l_total, l_ret, loss
        if (step + 1) % every == 0:
            cell2.eval()
            with torch.no_grad():
                keep, per_stop, per_walk = run([max_stops] * _smoke(128, 2))
                dwell = torch.randn(keep.shape, device="cuda") * 0.5 + 0.3
                err = (per_stop[..., 0] - dwell).abs().mean()
            err.item()
            del keep, per_stop, per_walk, dwell, err

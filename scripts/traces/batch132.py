"""The hundred-and-thirty-second batch of held-out workloads for record.py, kept in a file of their own (as batch16.py
to batch129_b.py are): amusement parks, theme parks and rides, written in torch alone, first half. Queue-time
forecasting training (a GRU encoder-decoder written out step by step over each ride's 15-minute history of drawn
length, padded steps keeping the state by torch.where, the decoder teacher-forced over the next two hours with the
known covariates; the 10th, 50th and 90th percentile waits by a pinball loss), roller-coaster vibration and wheel
wear training (tri-axial accelerometer signals of drawn lengths from the wheel assemblies turned into log spectrograms
by torch.stft on the device, a residual 2D convnet in channels_last; the wear fault, the remaining useful life and
the axle), an on-ride photo service (a strided residual convnet over the photos of each ride vehicle, each seat's
features cropped by affine_grid and grid_sample from boxes drawn on the device, matched against a gallery of
wristband guest embeddings by cosine similarity and top-k, with each photo's blur and exposure measured) and crowd
flow training (an edge-conditioned message-passing network written by hand over batches of park path graphs of drawn
sizes, messages gated by the paths' features and summed by index_add in the messages' dtype; the next half-hour's
occupancy per node, the flow per path and the park's congestion level).
Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the photo service), `rng` the workload's random.Random for every shape, count and sampled choice,
sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value:
lengths, resolutions and batch sizes are fixed on the host, padding handled by masks or by torch.where /
masked_fill, no boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
onride_photo_match_serve uploads its photos on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every embedding and position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new132.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and
for the CPU smoke run (RECORD_SMOKE=1).
"""

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, SideUploads, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- queue-time forecasting (GRU encoder-decoder)


class _GRUCell(_nn.Module):
    """A GRU cell written out: one linear of the input and one of the hidden state to the reset, update and new
    gates."""

    def __init__(self, din, h):
        super().__init__()
        self.x, self.h = _nn.Linear(din, 3 * h), _nn.Linear(h, 3 * h)

    def forward(self, x, h):
        xr, xz, xn = self.x(x).float().chunk(3, -1)
        hr, hz, hn = self.h(h.to(x.dtype)).float().chunk(3, -1)
        r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
        n = torch.tanh(xn + r * hn)
        return (1.0 - z) * n + z * h


@_workload("queue-time forecasting training (random init, a GRU encoder-decoder written out step by step): 64-256 ride-days a step (drawn), each a ride from a 150-row ride table with 16-48 past 15-minute steps (drawn per ride-day, padded to the step's longest) of 12 features (posted and actual wait, riders per hour, vehicles running, attendance, downtime flag, temperature, rain, hour and weekday by sine and cosine) with the ride's 32-d embedding through an MLP to 256; an encoder of two GRU cells of 256 written out step by step, padded steps keeping each ride's state by torch.where; a decoder GRU cell of 256 over the next 8 steps (two hours), teacher-forced with the previous actual wait and 6 known covariates (hour, weekday, forecast weather, a parade flag) and the ride's embedding, the 10th, 50th and 90th percentile waits by a pinball loss, and from the encoder's final state whether the ride goes down in the next two hours by BCE; AdamW, clipping, bf16 autocast, 64 steps; the losses read back every 8 steps and every 16 steps a no-grad pass over 128 ride-days of 48 steps with the median's mean absolute error and the 10-90 coverage read back")
def ride_queue_seq2seq_train(rng):
    n_ride, n_feat, n_cov, horizon = _smoke(150, 8), 12, 6, _smoke(8, 3)
    d_ride, hid = _smoke(32, 8), _smoke(256, 16)
    max_hist = _smoke(48, 6)
    ride_tab = _nn.Embedding(n_ride, d_ride).cuda()
    inp = mlp(n_feat + d_ride, hid, hid, act=_nn.GELU).cuda()
    enc1, enc2 = _GRUCell(hid, hid).cuda(), _GRUCell(hid, hid).cuda()
    dec_in = _nn.Linear(1 + n_cov + d_ride, hid).cuda()
    dec = _GRUCell(hid, hid).cuda()
    quant, down = _nn.Linear(hid, 3).cuda(), mlp(2 * hid, hid, 1).cuda()
    mods = _nn.ModuleList([ride_tab, inp, enc1, enc2, dec_in, dec, quant, down])
    opt = torch.optim.AdamW(mods.parameters(), lr=1e-3, weight_decay=0.01)
    steps, every = _smoke(64, 3), _smoke(16, 2)
    qs = torch.tensor([0.1, 0.5, 0.9], device="cuda")

    def run(lens):
        b, t = len(lens), max(lens)
        keep = keep_mask(lens, t)
        ride = torch.randint(0, n_ride, (b,), device="cuda")
        x = torch.randn(b, t, n_feat, device="cuda") * keep[..., None].float()
        cov = torch.randn(b, horizon, n_cov, device="cuda")
        wait = torch.rand(b, horizon, device="cuda") * 3.0  # hours / 30 min units
        prev = torch.cat([torch.rand(b, 1, device="cuda") * 3.0, wait[:, :-1]], 1)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            e = ride_tab(ride)
            f = inp(torch.cat([x, e[:, None].expand(b, t, -1)], -1))
            h1 = h2 = torch.zeros(b, hid, device="cuda")
            for s in range(t):
                k = keep[:, s:s + 1]
                h1 = torch.where(k, enc1(f[:, s], h1), h1)
                h2 = torch.where(k, enc2(h1.to(f.dtype), h2), h2)
            p_down = down(torch.cat([h1, h2], -1)).float()[:, 0]
            g = dec_in(torch.cat([prev[..., None], cov, e[:, None].expand(b, horizon, -1)], -1))
            h, outs = h2, []
            for s in range(horizon):
                h = dec(g[:, s], h)
                outs.append(h)
            q = quant(torch.stack(outs, 1)).float()
        return q, p_down, wait

    def pinball(q, y):
        err = y[..., None] - q
        return torch.maximum(qs * err, (qs - 1.0) * err).mean()

    for step in range(steps):
        mods.train()
        b = rng.randint(_smoke(64, 2), _smoke(256, 4))
        lens = [rng.randint(_smoke(16, 2), max_hist) for _ in range(b)]
        q, p_down, wait = run(lens)
        went_down = (torch.rand(b, device="cuda") < 0.1).float()
        l_q = pinball(q, wait)
        l_d = _F.binary_cross_entropy_with_logits(p_down, went_down)
        loss = l_q + 0.2 * l_d
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(mods.parameters(), 1.0)
        opt.step()
        if step % 8 == 0:
            torch.stack([l_q.detach(), l_d.detach()]).tolist()
        del q, p_down, wait, went_down, l_q, l_d, loss
        if (step + 1) % every == 0:
            mods.eval()
            with torch.no_grad():
                q, p_down, wait = run([max_hist] * _smoke(128, 2))
                mae = (q[..., 1] - wait).abs().mean()
                cover = ((wait >= q[..., 0]) & (wait <= q[..., 2])).float().mean()
            torch.stack([mae, cover]).tolist()
            del q, p_down, wait, mae, cover


# ---------------------------------------------------------------- coaster vibration and wheel wear (STFT + 2D convnet)


class _SpecNet(_nn.Module):
    """A strided stem over the three axes' log spectrograms, four residual stages (the last three strided), mean and
    max pooling, heads for the wear fault, the remaining useful life and the axle."""

    def __init__(self, widths, n_fault, n_axle):
        super().__init__()
        c0, c1, c2, c3 = widths
        self.stem = _nn.Sequential(_nn.Conv2d(3, c0, 5, 2, 2, bias=False), _nn.BatchNorm2d(c0), _nn.ReLU())
        self.stages = _nn.Sequential(BasicResBlock(c0, c0, 1), BasicResBlock(c0, c1, 2), BasicResBlock(c1, c2, 2),
                                     BasicResBlock(c2, c3, 2))
        self.head = mlp(2 * c3, c3, n_fault + 1 + n_axle, act=_nn.GELU)

    def forward(self, x):
        h = self.stages(self.stem(x))
        pooled = torch.cat([h.mean((2, 3)), h.amax((2, 3))], 1)
        return self.head(pooled).float()


@_workload("roller-coaster vibration and wheel wear training (random init, a residual 2D convnet over log spectrograms): 16-48 wheel-assembly recordings a step (drawn) of tri-axial accelerometer signals at 2 kHz, 4,096-16,384 samples a step (drawn in steps of 1,024, all recordings of a step the same length), turned into log-magnitude spectrograms on the device by torch.stft (n_fft 256, hop 64, a Hann window, 129 bins) in fp32 and normalised per bin; in channels_last under bf16 autocast a strided stem (32 channels) and four residual stages (32, 64, 128, 192, the last three strided), mean and max pooling; the wear fault (of 6: none, flat spot, bearing, loose bolt, cracked wheel, guide-wheel wear) by cross-entropy, the remaining useful life in days by a Huber loss, the axle (of 8 on the train) by cross-entropy; AdamW on a one-cycle schedule, clipping, 920 steps; the losses read back every 25 steps and every 184 steps a no-grad pass over 48 recordings of 16,384 samples with the fault accuracy read back")
def coaster_vibration_wear_train(rng):
    widths = _smoke([32, 64, 128, 192], [8, 8, 16, 16])
    n_fault, n_axle = 6, 8
    model = _SpecNet(widths, n_fault, n_axle).cuda().to(memory_format=torch.channels_last)
    steps, every = _smoke(920, 3), _smoke(184, 2)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=2e-3, total_steps=steps + 1)
    unit = _smoke(1024, 256)
    n_fft, hop = _smoke(256, 64), _smoke(64, 16)
    window = torch.hann_window(n_fft, device="cuda")

    def spectrograms(b, n):
        sig = torch.randn(b * 3, n, device="cuda")
        spec = torch.stft(sig, n_fft, hop_length=hop, window=window, return_complex=True).abs()
        s = torch.log1p(spec).view(b, 3, spec.shape[-2], spec.shape[-1])
        s = (s - s.mean(-1, keepdim=True)) / s.std(-1, keepdim=True).clamp_min(1e-3)
        return s.contiguous(memory_format=torch.channels_last)

    for step in range(steps):
        model.train()
        b, n = rng.randint(_smoke(16, 2), _smoke(48, 3)), rng.randint(4, 16) * unit
        x = spectrograms(b, n)
        fault = torch.randint(0, n_fault, (b,), device="cuda")
        life = torch.rand(b, device="cuda") * 365.0
        axle = torch.randint(0, n_axle, (b,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(x)
        l_f = _F.cross_entropy(out[:, :n_fault], fault)
        l_life = _F.huber_loss(out[:, n_fault], life / 100.0)
        l_axle = _F.cross_entropy(out[:, n_fault + 1:], axle)
        loss = l_f + l_life + 0.3 * l_axle
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 25 == 0:
            torch.stack([l_f.detach(), l_life.detach(), l_axle.detach()]).tolist()
        del x, fault, life, axle, out, l_f, l_life, l_axle, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                nb = _smoke(48, 2)
                x = spectrograms(nb, 16 * unit)
                fault = torch.randint(0, n_fault, (nb,), device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    out = model(x)
                acc = (out[:, :n_fault].argmax(-1) == fault).float().mean()
            acc.item()
            del x, fault, out, acc


# ---------------------------------------------------------------- on-ride photo matching (convnet, grid_sample crops)


class _PhotoNet(_nn.Module):
    """A strided stem and four residual stages (the last three strided) to 1/16, with the 1/8 map kept for the
    seat crops."""

    def __init__(self, widths):
        super().__init__()
        c0, c1, c2, c3 = widths
        self.stem = _nn.Sequential(_nn.Conv2d(3, c0, 5, 2, 2, bias=False), _nn.BatchNorm2d(c0), _nn.ReLU())
        self.s1, self.s2 = BasicResBlock(c0, c1, 2), BasicResBlock(c1, c2, 2)
        self.s3 = BasicResBlock(c2, c3, 2)
        self.lat = _nn.Conv2d(c3, c2, 1)

    def forward(self, x):
        f2 = self.s2(self.s1(self.stem(x)))
        f3 = self.s3(f2)
        up = _F.interpolate(self.lat(f3), size=f2.shape[-2:], mode="bilinear", align_corners=False)
        return f2 + up, f3


@_workload("on-ride photo serving (random init, a strided residual convnet with seat crops by grid_sample): 2,900-2,940 requests (drawn) of 1-6 photos (drawn, one per ride vehicle) at 384 x 640, 448 x 768 or 512 x 896 px (drawn per request), uint8 RGB uploaded on a side stream from two reused pinned host buffers (filled once, sized for 6 x 3 x 512 x 896) one request ahead (one span, through SideUploads.ahead), normalised on the device in channels_last; a strided stem (32 channels) and three strided residual stages (64, 128, 192) with a lateral 1x1 upsampled back onto the 1/8 map, in eval mode under bf16 autocast; 8-24 seats a photo (drawn per request), each seat's box drawn on the device, its features cropped at 7 x 7 by affine_grid and grid_sample in fp32, an MLP to a 128-d unit embedding and an eyes-open score; each seat matched by cosine similarity against a gallery of 20,000 wristband guest embeddings (made once on the device), the top 5 by topk; each photo's blur as the variance of a Laplacian filter over its luminance, its exposure as the luminance mean and clipped fractions; each request's figures read back once")
def onride_photo_match_serve(rng):
    widths = _smoke([32, 64, 128, 192], [8, 16, 16, 16])
    d_emb, n_gal, crop = _smoke(128, 16), _smoke(20000, 64), 7
    max_n = _smoke(6, 2)
    res_opts = _smoke([(384, 640), (448, 768), (512, 896)], [(64, 96), (96, 128)])
    max_px = max(h * w for h, w in res_opts)
    model = _PhotoNet(widths).cuda().eval().to(memory_format=torch.channels_last)
    seat = mlp(widths[2] * crop * crop, 256, d_emb + 1, act=_nn.GELU).cuda().eval()
    model.requires_grad_(False)
    seat.requires_grad_(False)
    gallery = _F.normalize(torch.randn(n_gal, d_emb, device="cuda"), dim=-1).to(torch.bfloat16)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_n * 3 * max_px,), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1) * 255.0
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1) * 255.0
    lum_w = torch.tensor([0.299, 0.587, 0.114], device="cuda").view(1, 3, 1, 1)
    lap = torch.tensor([[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]], device="cuda").view(1, 1, 3, 3)

    nreq = rng.randint(_smoke(2900, 3), _smoke(2940, 4))
    plan = [(rng.randint(1, max_n), *rng.choice(res_opts), rng.randint(8, 24)) for _ in range(nreq)]

    for (n, hh, ww, seats), raw in up.ahead(plan, lambda p: (p[0] * 3 * p[1] * p[2],)):
        with torch.no_grad():
            img = raw.view(n, 3, hh, ww).float()
            x = ((img - mean) / std).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                fmap, _ = model(x)
            ctr = torch.rand(n * seats, 2, device="cuda") * 1.6 - 0.8
            size = 0.08 + torch.rand(n * seats, 2, device="cuda") * 0.12
            theta = torch.zeros(n * seats, 2, 3, device="cuda")
            theta[:, 0, 0], theta[:, 1, 1] = size[:, 0], size[:, 1]
            theta[:, :, 2] = ctr
            grid = _F.affine_grid(theta, [n * seats, 1, crop, crop], align_corners=False)
            grid = grid.view(n, seats * crop, crop, 2)
            crops = _F.grid_sample(fmap.float(), grid, mode="bilinear", align_corners=False)
            crops = crops.view(n, -1, seats, crop, crop).transpose(1, 2).reshape(n * seats, -1)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = seat(crops)
            emb = _F.normalize(out[:, :d_emb].float(), dim=-1)
            eyes = torch.sigmoid(out[:, d_emb].float())
            sim = emb.to(torch.bfloat16) @ gallery.T
            top, idx = sim.float().topk(5, dim=-1)
            lum = (img * lum_w).sum(1, keepdim=True) / 255.0
            blur = _F.conv2d(lum, lap, padding=1).flatten(1).var(-1)
            expo = torch.stack([lum.flatten(1).mean(-1), (lum > 0.98).float().flatten(1).mean(-1),
                                (lum < 0.02).float().flatten(1).mean(-1)], -1)
            res = torch.cat([top.flatten(), idx.float().flatten(), eyes, blur, expo.flatten()])
        res.tolist()
        del raw, img, x, fmap, ctr, size, theta, grid, crops, out, emb, eyes, sim, top, idx, lum, blur, expo, res


# ---------------------------------------------------------------- park crowd flow (edge-conditioned message passing)


class _FlowLayer(_nn.Module):
    """One message-passing step: a message from each path's source node and the path's features, gated by a sigmoid
    of the path's features, summed into the destination by index_add in the messages' dtype and scaled by the
    in-degree; a residual MLP update with a layer norm."""

    def __init__(self, d, de):
        super().__init__()
        self.msg = mlp(2 * d + de, d, d, act=_nn.GELU)
        self.gate = _nn.Linear(de, d)
        self.upd = mlp(2 * d, 2 * d, d, act=_nn.GELU)
        self.norm = _nn.LayerNorm(d)

    def forward(self, h, e, src, dst, inv_deg):
        m = self.msg(torch.cat([h.index_select(0, src), h.index_select(0, dst), e], -1))
        m = m * torch.sigmoid(self.gate(e)).to(m.dtype)
        agg = m.new_zeros(h.shape[0], m.shape[1]).index_add_(0, dst, m) * inv_deg[:, None].to(m.dtype)
        return self.norm(h + self.upd(torch.cat([h, agg.to(h.dtype)], -1)))


class _CrowdNet(_nn.Module):
    def __init__(self, n_type, n_feat, de_in, d, de, layers, n_level):
        super().__init__()
        self.ntype = _nn.Embedding(n_type, d)
        self.node = mlp(n_feat, d, d, act=_nn.GELU)
        self.edge = mlp(de_in, de, de, act=_nn.GELU)
        self.layers = _nn.ModuleList(_FlowLayer(d, de) for _ in range(layers))
        self.occ = mlp(d, d, 1, act=_nn.GELU)
        self.flow = mlp(2 * d + de, d, 2, act=_nn.GELU)
        self.attn = _nn.Linear(d, 1)
        self.level = mlp(2 * d, d, n_level, act=_nn.GELU)

    def forward(self, ntype, feat, efeat, src, dst, inv_deg, gid, n_graph, inv_size):
        h = self.ntype(ntype) + self.node(feat)
        e = self.edge(efeat)
        for layer in self.layers:
            h = layer(h, e, src, dst, inv_deg)
        pooled = h.new_zeros(n_graph, h.shape[1]).index_add_(0, gid, h) * inv_size[:, None].to(h.dtype)
        gated = h * torch.sigmoid(self.attn(h))
        top = gated.new_zeros(n_graph, h.shape[1]).index_add_(0, gid, gated)
        occ = self.occ(h).float()[:, 0]
        flow = self.flow(torch.cat([h.index_select(0, src), h.index_select(0, dst), e], -1)).float()
        return occ, flow, self.level(torch.cat([pooled, top], -1)).float()


@_workload("park crowd flow training (random init, an edge-conditioned message-passing network written by hand): 4-16 park snapshots a step (drawn) of 150-400 nodes each (drawn per snapshot: gates, path junctions, rides, shows, food and shops from an 8-row type table, batched flat with per-snapshot offsets), each node joined by a footpath to an earlier node of its snapshot and by 1-2 more paths (the count drawn per step) to random nodes of its snapshot, drawn on the device, each path both ways, 6 path features (length, width, slope, covered, one-way, crowding); node features of 14 (the occupancy of the last 4 half-hours, queue time, capacity, hour, weather, show flags); 6 layers (width 192, path width 64) of a message from both ends and the path, gated by the path's features, summed by index_add in the messages' dtype and scaled by the in-degree, a residual MLP update and a layer norm; each node's next half-hour occupancy by MSE, each path's flow both ways by a Huber loss, each snapshot's congestion level (of 4) by cross-entropy from mean pooling and sigmoid-gated sum pooling (both by index_add); AdamW, clipping, bf16 autocast, 420 steps; the losses read back every 20 steps and every 84 steps a no-grad pass over 16 snapshots of 400 nodes with the level accuracy read back")
def park_crowd_flow_gnn_train(rng):
    n_type, n_feat, de_in, n_level = 8, 14, 6, 4
    d, de, layers = _smoke(192, 16), _smoke(64, 8), _smoke(6, 2)
    model = _CrowdNet(n_type, n_feat, de_in, d, de, layers, n_level).cuda()
    steps, every = _smoke(420, 3), _smoke(84, 2)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)

    def snapshots(sizes, extra):
        g, n = len(sizes), sum(sizes)
        local, gid, off, size = [], [], [], []
        start = 0
        for i, s in enumerate(sizes):
            local += range(s)
            gid += [i] * s
            off += [start] * s
            size += [s] * s
            start += s
        local = torch.tensor(local, device="cuda")
        gid = torch.tensor(gid, device="cuda")
        off = torch.tensor(off, device="cuda")
        size = torch.tensor(size, device="cuda")
        node = torch.arange(n, device="cuda")
        tree = off + (torch.rand(n, device="cuda") * local.float()).long()  # node 0 of a snapshot: itself
        ex_a = node.repeat(extra)
        ex_b = off.repeat(extra) + (torch.rand(n * extra, device="cuda") * size.repeat(extra).float()).long()
        a, b = torch.cat([node, ex_a]), torch.cat([tree, ex_b])
        src, dst = torch.cat([a, b]), torch.cat([b, a])
        deg = torch.zeros(n, device="cuda").index_add_(0, dst, torch.ones(src.shape[0], device="cuda"))
        inv_deg = 1.0 / deg.clamp_min(1.0)
        inv_size = 1.0 / torch.tensor([float(s) for s in sizes], device="cuda")
        ef = torch.rand(a.shape[0], de_in, device="cuda")
        efeat = torch.cat([ef, ef * torch.tensor([1.0, 1.0, -1.0, 1.0, 1.0, 1.0], device="cuda")])
        ntype = torch.randint(0, n_type, (n,), device="cuda")
        feat = torch.randn(n, n_feat, device="cuda")
        occ = torch.rand(n, device="cuda")
        flow = torch.rand(src.shape[0], 2, device="cuda") * 3.0
        level = torch.randint(0, n_level, (g,), device="cuda")
        return (ntype, feat, efeat, src, dst, inv_deg, gid, g, inv_size), (occ, flow, level)

    for step in range(steps):
        model.train()
        g = rng.randint(_smoke(4, 2), _smoke(16, 3))
        sizes = [rng.randint(_smoke(150, 10), _smoke(400, 20)) for _ in range(g)]
        inp, (occ, flow, level) = snapshots(sizes, rng.randint(1, 2))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            p_occ, p_flow, p_level = model(*inp)
        l_occ = _F.mse_loss(torch.sigmoid(p_occ), occ)
        l_flow = _F.huber_loss(p_flow, flow)
        l_level = _F.cross_entropy(p_level, level)
        loss = l_occ + l_flow + 0.5 * l_level
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_occ.detach(), l_flow.detach(), l_level.detach()]).tolist()
        del inp, occ, flow, level, p_occ, p_flow, p_level, l_occ, l_flow, l_level, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                inp, (occ, flow, level) = snapshots([_smoke(400, 20)] * _smoke(16, 2), 2)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    p_occ, p_flow, p_level = model(*inp)
                acc = (p_level.argmax(-1) == level).float().mean()
            acc.item()
            del inp, occ, flow, level, p_occ, p_flow, p_level, acc

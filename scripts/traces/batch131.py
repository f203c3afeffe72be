"""The hundred-and-thirty-first batch of held-out workloads for record.py, kept in a file of their own (as batch16.py
to batch129_b.py are): postal services and mail sorting, written in torch alone, first half. Address line reading
training (a residual convolutional line encoder over scanned address lines of drawn widths under a column mask and
a transformer decoder of the characters, teacher-forced, with a postcode-area head), a parcel dimensioning service
(a PointNet over the depth-camera point clouds of the parcels on the belt, a parcel-or-belt label per point, each
parcel's length, width and height from the labelled points' weighted moments, its volume, dimensional weight and
size band), sorting centre flow training (a graph attention network written by hand over conveyor, merge, diverter
and chute graphs of drawn sizes, softmax over each node's incoming edges by index_add; each node's queue and jam
risk, each chute's destination, each centre's throughput) and mail volume forecasting training (an N-BEATS stack of
fully connected blocks with backcast and forecast residuals over each delivery office's letter, flat and parcel
volumes, lookbacks of drawn lengths padded under a mask, quantile forecasts four weeks ahead).
Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the dimensioning service), `rng` the workload's random.Random for every shape, count and sampled
choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's
value: lengths, resolutions and batch sizes are fixed on the host, padding handled by masks or by torch.where /
masked_fill, no boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
parcel_pointcloud_dimension_serve uploads its point clouds on a side stream (two reused pinned host buffers, one
request ahead, through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under
bf16 autocast. Every embedding and position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new131.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and
for the CPU smoke run (RECORD_SMOKE=1).
"""

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, CrossDecoderBlock, SideUploads, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- address line reading (conv encoder, decoder)


class _LineEncoder(_nn.Module):
    """A stem and three strided residual stages over a grey address line, the height averaged away, one token per
    8-pixel column with a column position table sized for the widest line."""

    def __init__(self, widths, d, max_cols):
        super().__init__()
        c0, c1, c2 = widths
        self.stem = _nn.Sequential(_nn.Conv2d(1, c0, 3, 1, 1, bias=False), _nn.BatchNorm2d(c0), _nn.ReLU())
        self.s1, self.s2, self.s3 = BasicResBlock(c0, c1, 2), BasicResBlock(c1, c2, 2), BasicResBlock(c2, d, 2)
        self.pos = _nn.Embedding(max_cols, d)

    def forward(self, x):
        f = self.s3(self.s2(self.s1(self.stem(x)))).mean(2).transpose(1, 2)
        return f + self.pos(torch.arange(f.shape[1], device=x.device))[None]


class _AddressReader(_nn.Module):
    """The line encoder as memory, a character table and a position table sized for the longest line (and its start
    token), pre-norm decoder blocks (causal self-attention, cross-attention under the columns' key mask); the next
    character's logits and the postcode area from the masked mean of the columns."""

    def __init__(self, widths, d, heads, layers, vocab, max_chars, max_cols, n_area):
        super().__init__()
        self.enc = _LineEncoder(widths, d, max_cols)
        self.tok, self.tpos = _nn.Embedding(vocab, d), _nn.Embedding(max_chars + 1, d)
        self.blocks = _nn.ModuleList(CrossDecoderBlock(d, heads) for _ in range(layers))
        self.norm, self.out = _nn.LayerNorm(d), _nn.Linear(d, vocab)
        self.area = mlp(d, d, n_area, act=_nn.GELU)

    def forward(self, img, ckeep, ids):
        mem = self.enc(img)
        w = ckeep[..., None].to(mem.dtype)
        area = self.area((mem * w).sum(1) / w.sum(1).clamp_min(1.0))
        h = self.tok(ids) + self.tpos(torch.arange(ids.shape[1], device=ids.device))[None]
        mm = ckeep[:, None, None]
        for blk in self.blocks:
            h = blk(h, mem, mm)
        return self.out(self.norm(h)).float(), area.float()


@_workload("address line reading training (random init, a residual convolutional line encoder and a transformer decoder): 32-96 scanned address lines a step (drawn) of 32 px height and 256-768 px width (drawn per line in steps of 64, padded to the step's widest, the padding zeroed and masked); a stem (32 channels) and three strided residual stages (64, 128, 256) with the height averaged away, one token per 8 columns with a 96-row column position table; 3 pre-norm decoder blocks (width 256, 8 heads) of causal self-attention over the characters and cross-attention to the columns under their key mask, a 100-symbol character table and a 61-row position table; each line 12-60 characters (drawn per line, padded to the step's longest plus the start token), teacher-forced cross-entropy of the next character with the padding ignored (-100 by torch.where), the postcode area (of 120) from the masked mean of the columns by cross-entropy; AdamW, clipping, bf16 autocast, 360 steps; the losses read back every 20 steps and every 72 steps a no-grad pass over 64 lines of 768 px and 60 characters with the character and area accuracies read back")
def address_line_reader_train(rng):
    widths, d, heads, layers = _smoke([32, 64, 128], [8, 8, 16]), _smoke(256, 16), _smoke(8, 2), _smoke(3, 1)
    vocab, n_area = 100, 120
    max_w, unit, height = _smoke(768, 96), _smoke(64, 32), _smoke(32, 16)
    max_chars = _smoke(60, 12)
    model = _AddressReader(widths, d, heads, layers, vocab, max_chars, max_w // 8, n_area).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    steps, every = _smoke(360, 3), _smoke(72, 2)

    def lines(widths_px, lens):
        b, w, t = len(widths_px), max(widths_px), max(lens) + 1
        pkeep = keep_mask(widths_px, w)
        img = torch.randn(b, 1, height, w, device="cuda") * pkeep[:, None, None].float()
        ckeep = keep_mask([x // 8 for x in widths_px], w // 8)
        chars = torch.randint(3, vocab, (b, t), device="cuda")
        pos = torch.arange(t, device="cuda")[None]
        ln = torch.tensor(lens, device="cuda")[:, None]
        eos, pad = torch.full_like(chars, 2), torch.full_like(chars, -100)
        tgt = torch.where(pos < ln, chars, torch.where(pos == ln, eos, pad))
        ids = torch.cat([torch.ones_like(chars[:, :1]), chars[:, :-1]], 1).masked_fill(pos > ln, 0)
        area = torch.randint(0, n_area, (b,), device="cuda")
        return img, ckeep, ids, tgt, area

    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(32, 2), _smoke(96, 3))
        wpx = [rng.randint(max_w // unit // 3, max_w // unit) * unit for _ in range(b)]
        lens = [rng.randint(_smoke(12, 4), max_chars) for _ in range(b)]
        img, ckeep, ids, tgt, area = lines(wpx, lens)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits, alog = model(img, ckeep, ids)
        l_chr = _F.cross_entropy(logits.flatten(0, 1), tgt.flatten(), ignore_index=-100)
        l_area = _F.cross_entropy(alog, area)
        loss = l_chr + 0.3 * l_area
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_chr.detach(), l_area.detach()]).tolist()
        del img, ckeep, ids, tgt, area, logits, alog, l_chr, l_area, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                n = _smoke(64, 2)
                img, ckeep, ids, tgt, area = lines([max_w] * n, [max_chars] * n)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits, alog = model(img, ckeep, ids)
                valid = (tgt >= 0).float()
                acc_c = ((logits.argmax(-1) == tgt).float() * valid).sum() / valid.sum()
                acc_a = (alog.argmax(-1) == area).float().mean()
            torch.stack([acc_c, acc_a]).tolist()
            del img, ckeep, ids, tgt, area, logits, alog, valid, acc_c, acc_a


# ---------------------------------------------------------------- parcel dimensioning (PointNet over depth points)


class _ParcelPointNet(_nn.Module):
    """Shared per-point layers (1x1 convolutions with batch norm), a global feature by max pooling, a per-point
    segmentation head over the point's and the global features, and the parcel type from the global feature."""

    def __init__(self, cin, widths, g, n_type):
        super().__init__()
        c0, c1, c2 = widths

        def pw(a, b):
            return [_nn.Conv1d(a, b, 1, bias=False), _nn.BatchNorm1d(b), _nn.ReLU()]

        self.local = _nn.Sequential(*pw(cin, c0), *pw(c0, c1))
        self.glob = _nn.Sequential(*pw(c1, c2), *pw(c2, g))
        self.seg = _nn.Sequential(*pw(c1 + g, c2), *pw(c2, c1), _nn.Conv1d(c1, 2, 1))
        self.cls = mlp(g, c2, n_type + 1, act=_nn.ReLU)

    def forward(self, x):
        f = self.local(x)
        gf = self.glob(f).amax(-1)
        seg = self.seg(torch.cat([f, gf[:, :, None].expand(-1, -1, f.shape[-1])], 1))
        return seg.float(), self.cls(gf).float()


@_workload("parcel dimensioning serving (random init, a PointNet over depth-camera point clouds): 2,700-2,740 requests (drawn) of 2-12 parcel scans (drawn) of 2,048, 4,096, 6,144 or 8,192 points (drawn per request) with 4 channels (x, y, z, intensity), fp16 uploaded on a side stream from two reused pinned host buffers (filled once, sized for 12 x 4 x 8,192) one request ahead (one span, through SideUploads.ahead); shared per-point 1x1 convolutions (64, 128) with batch norm, a global feature (256, 512) by max pooling, a per-point parcel-or-belt head over the point's and the global features, the parcel type (of 5: box, flat, roll, bag, irregular) and a damage flag from the global feature, in eval mode under bf16 autocast; per scan the parcel points' weighted centroid and second moments, the footprint's orientation by atan2, the length and width along it as the extents of the points labelled parcel (torch.where against +-1e4), the height above the belt's weighted mean, the volume, the dimensional weight (over 5,000) and the size band by bucketize; each request's figures read back once")
def parcel_pointcloud_dimension_serve(rng):
    cin, widths, g, n_type = 4, _smoke([64, 128, 256], [8, 8, 16]), _smoke(512, 16), 5
    max_s, n_opts = _smoke(12, 3), _smoke([2048, 4096, 6144, 8192], [64, 128])
    max_n = max(n_opts)
    model = _ParcelPointNet(cin, widths, g, n_type).cuda().eval()
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randn(max_s * cin * max_n, generator=gen).half().pin_memory() for _ in range(2)]
    up = SideUploads(host)
    bands = torch.tensor([0.002, 0.01, 0.05, 0.2], device="cuda")  # m^3: small packet, small, medium, large, bulky
    scale = torch.tensor([0.6, 0.4, 0.3, 1.0], device="cuda").view(1, 4, 1)

    nreq = rng.randint(_smoke(2700, 3), _smoke(2740, 4))
    plan = [(rng.randint(2, max_s), rng.choice(n_opts)) for _ in range(nreq)]

    for (s, n), raw in up.ahead(plan, lambda p: (p[0] * cin * p[1],)):
        with torch.no_grad():
            x = raw.view(s, cin, n).float() * scale
            with torch.autocast("cuda", dtype=torch.bfloat16):
                seg, cls = model(x)
            p = seg.softmax(1)[:, 1]
            xx, yy, zz = x[:, 0], x[:, 1], x[:, 2].abs()
            sw = p.sum(-1).clamp_min(1e-3)
            mx, my = (p * xx).sum(-1) / sw, (p * yy).sum(-1) / sw
            dx, dy = xx - mx[:, None], yy - my[:, None]
            cxx, cyy, cxy = (p * dx * dx).sum(-1) / sw, (p * dy * dy).sum(-1) / sw, (p * dx * dy).sum(-1) / sw
            theta = 0.5 * torch.atan2(2.0 * cxy, cxx - cyy)
            ct, st = theta.cos()[:, None], theta.sin()[:, None]
            u, v = dx * ct + dy * st, dy * ct - dx * st
            inside = p > 0.5
            big = torch.full_like(u, 1e4)
            length = (torch.where(inside, u, -big).amax(-1) - torch.where(inside, u, big).amin(-1)).clamp_min(0.0)
            width = (torch.where(inside, v, -big).amax(-1) - torch.where(inside, v, big).amin(-1)).clamp_min(0.0)
            q = 1.0 - p
            belt = (q * zz).sum(-1) / q.sum(-1).clamp_min(1e-3)
            height = (torch.where(inside, zz, -big).amax(-1) - belt).clamp_min(0.0)
            vol = length * width * height
            dimw = vol * 1e6 / 5000.0
            band = torch.bucketize(vol, bands).float()
            ptype = cls[:, :n_type].softmax(-1)
            dmg = torch.sigmoid(cls[:, n_type])
            res = torch.cat([length, width, height, vol, dimw, band, theta, dmg, ptype.flatten()])
        res.tolist()
        del raw, x, seg, cls, p, xx, yy, zz, sw, mx, my, dx, dy, cxx, cyy, cxy, theta, ct, st, u, v, inside, big
        del length, width, q, belt, height, vol, dimw, band, ptype, dmg, res


# ---------------------------------------------------------------- sorting centre flow (graph attention network)


class _GATLayer(_nn.Module):
    """Graph attention written by hand: per-head logits from the source and destination nodes and an edge-type
    table, exponentiated against each head's global maximum, normalised over each node's incoming edges by
    index_add (in fp32, the destinations made from the sources by new_zeros), a residual, a layer norm and an MLP."""

    def __init__(self, d, heads, n_etype):
        super().__init__()
        self.h = heads
        self.lin = _nn.Linear(d, d, bias=False)
        self.a_src = _nn.Parameter(torch.randn(heads, d // heads) * 0.1)
        self.a_dst = _nn.Parameter(torch.randn(heads, d // heads) * 0.1)
        self.etype = _nn.Embedding(n_etype, heads)
        self.out, self.n1 = _nn.Linear(d, d), _nn.LayerNorm(d)
        self.ff, self.n2 = mlp(d, 2 * d, d, act=_nn.GELU), _nn.LayerNorm(d)

    def forward(self, h, src, dst, et):
        n, d = h.shape
        z = self.lin(h).view(n, self.h, d // self.h)
        s, t = (z * self.a_src.to(z.dtype)).sum(-1), (z * self.a_dst.to(z.dtype)).sum(-1)
        e = _F.leaky_relu(s.index_select(0, src) + t.index_select(0, dst) + self.etype(et).to(s.dtype), 0.2).float()
        e = (e - e.amax(0, keepdim=True).detach()).exp()
        den = e.new_zeros(n, self.h).index_add_(0, dst, e)
        m = z.index_select(0, src).float() * e[..., None]
        agg = m.new_zeros(n, self.h, d // self.h).index_add_(0, dst, m) / den.clamp_min(1e-6)[..., None]
        h = self.n1(h + self.out(agg.flatten(1)))
        return self.n2(h + self.ff(h))


class _SortFlowNet(_nn.Module):
    def __init__(self, n_ntype, n_feat, d, heads, layers, n_etype, n_dest):
        super().__init__()
        self.ntype = _nn.Embedding(n_ntype, d)
        self.feat = mlp(n_feat, d, d, act=_nn.GELU)
        self.layers = _nn.ModuleList(_GATLayer(d, heads, n_etype) for _ in range(layers))
        self.node = mlp(d, d, 2 + n_dest, act=_nn.GELU)
        self.graph = mlp(d, d, 1, act=_nn.GELU)

    def forward(self, ntype, feat, src, dst, et, gid, inv_cnt):
        h = self.ntype(ntype) + self.feat(feat)
        for layer in self.layers:
            h = layer(h, src, dst, et)
        pooled = h.new_zeros(inv_cnt.shape[0], h.shape[1]).index_add_(0, gid, h) * inv_cnt[:, None].to(h.dtype)
        return self.node(h).float(), self.graph(pooled).float()


@_workload("sorting centre flow training (random init, a graph attention network written by hand): 4-16 sorting centre graphs a step (drawn) of 150-600 nodes each (drawn per graph, batched flat with per-graph offsets), each node of 7 kinds (induction, conveyor, merge, diverter, scanner, chute, recirculation) with 10 load features, each node after the first fed by an upstream node drawn among the earlier ones and 2 cross links (merges and recirculation) drawn within its graph on the device, 5 edge types (flow, back-flow, cross link each way, self loop); 4 attention layers (width 128, 4 heads) with per-head logits from source, destination and an edge-type table, normalised over each node's incoming edges by index_add in fp32, a residual, layer norms and a GELU MLP; each node's queue length by MSE, its jam risk by BCE, each chute's destination region (of 16) by cross-entropy masked to the chutes, each centre's throughput by MSE from mean pooling by index_add; AdamW, clipping, bf16 autocast, 480 steps; the losses read back every 20 steps and every 96 steps a no-grad pass over 16 centres of 600 nodes with the destination accuracy read back")
def sorting_centre_gat_train(rng):
    n_ntype, n_feat, n_etype, n_dest, chute = 7, 10, 5, 16, 5
    d, heads, layers = _smoke(128, 16), _smoke(4, 2), _smoke(4, 2)
    model = _SortFlowNet(n_ntype, n_feat, d, heads, layers, n_etype, n_dest).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    steps, every = _smoke(480, 3), _smoke(96, 2)

    def centres(sizes):
        g, n = len(sizes), sum(sizes)
        local, gid, off, cnt = [], [], [], []
        start = 0
        for i, s in enumerate(sizes):
            local += range(s)
            gid += [i] * s
            off += [start] * s
            cnt += [s] * s
            start += s
        local = torch.tensor(local, device="cuda")
        gid = torch.tensor(gid, device="cuda")
        off = torch.tensor(off, device="cuda")
        cnt = torch.tensor(cnt, device="cuda").float()
        node = torch.arange(n, device="cuda")
        up = off + (torch.rand(n, device="cuda") * local.float()).long()
        x1 = off + (torch.rand(n, device="cuda") * cnt).long()
        x2 = off + (torch.rand(n, device="cuda") * cnt).long()
        src = torch.cat([up, node, x1, node, x2, node, node])
        dst = torch.cat([node, up, node, x1, node, x2, node])
        et = torch.cat([torch.full((n,), k, device="cuda") for k in (0, 1, 2, 3, 2, 3, 4)])
        inv_cnt = 1.0 / torch.tensor(sizes, device="cuda").float()
        ntype = torch.randint(0, n_ntype, (n,), device="cuda")
        feat = torch.rand(n, n_feat, device="cuda")
        queue = torch.rand(n, device="cuda") * 3.0
        jam = (torch.rand(n, device="cuda") < 0.05).float()
        dest = torch.randint(0, n_dest, (n,), device="cuda")
        thr = torch.rand(g, device="cuda")
        return (ntype, feat, src, dst, et, gid, inv_cnt), (queue, jam, dest, thr, ntype == chute)

    for step in range(steps):
        model.train()
        g = rng.randint(_smoke(4, 2), _smoke(16, 3))
        sizes = [rng.randint(_smoke(150, 10), _smoke(600, 20)) for _ in range(g)]
        inp, (queue, jam, dest, thr, is_chute) = centres(sizes)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            node, graph = model(*inp)
        w = is_chute.float()
        l_q = _F.mse_loss(_F.softplus(node[:, 0]), queue)
        l_jam = _F.binary_cross_entropy_with_logits(node[:, 1], jam)
        l_dest = (_F.cross_entropy(node[:, 2:], dest, reduction="none") * w).sum() / w.sum().clamp_min(1.0)
        l_thr = _F.mse_loss(torch.sigmoid(graph[:, 0]), thr)
        loss = l_q + l_jam + l_dest + l_thr
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_q.detach(), l_jam.detach(), l_dest.detach(), l_thr.detach()]).tolist()
        del inp, queue, jam, dest, thr, is_chute, node, graph, w, l_q, l_jam, l_dest, l_thr, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                inp, (queue, jam, dest, thr, is_chute) = centres([_smoke(600, 20)] * _smoke(16, 2))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    node, graph = model(*inp)
                w = is_chute.float()
                acc = ((node[:, 2:].argmax(-1) == dest).float() * w).sum() / w.sum().clamp_min(1.0)
            acc.item()
            del inp, queue, jam, dest, thr, is_chute, node, graph, w, acc


# ---------------------------------------------------------------- mail volume forecasting (N-BEATS)


class _NBeatsBlock(_nn.Module):
    """Fully connected layers over the residual history and the conditioning (the history mask, the horizon's
    holidays, the weekday and the office type), a linear backcast and a linear forecast."""

    def __init__(self, dback, dcond, hidden, dfore, layers):
        super().__init__()
        self.fc = mlp(dback + dcond, hidden, hidden, layers=layers, act=_nn.ReLU)
        self.back, self.fore = _nn.Linear(hidden, dback), _nn.Linear(hidden, dfore)

    def forward(self, resid, cond):
        h = _F.relu(self.fc(torch.cat([resid, cond.to(resid.dtype)], -1)))
        return self.back(h), self.fore(h)


class _NBeats(_nn.Module):
    def __init__(self, n_series, max_l, horizon, n_q, hidden, blocks, layers, n_office):
        super().__init__()
        self.office = _nn.Embedding(n_office, 16)
        dcond = max_l + horizon + 7 + 16
        self.blocks = _nn.ModuleList(_NBeatsBlock(n_series * max_l, dcond, hidden, n_series * horizon * n_q, layers)
                                     for _ in range(blocks))
        self.shape = (n_series, horizon, n_q)

    def forward(self, hist, keep, hol, dow, office):
        b = hist.shape[0]
        cond = torch.cat([keep.float(), hol, _F.one_hot(dow, 7).float(), self.office(office)], -1)
        kf = keep.float().repeat(1, self.shape[0])
        resid, fc = hist.flatten(1), 0.0
        for blk in self.blocks:
            back, fore = blk(resid, cond)
            resid = (resid - back) * kf.to(back.dtype)
            fc = fc + fore
        return fc.float().view(b, *self.shape)


@_workload("mail volume forecasting training (random init, an N-BEATS stack of fully connected blocks): 256-1,024 delivery offices a step (drawn) with daily letter, flat and parcel volumes (3 series each) over a lookback of 56, 84, 112, 168 or 224 days (drawn per step, padded at the front to 224 under a mask), drawn on the device (a level, a weekly pattern, a trend, noise and holidays), normalised by each series' masked mean; 9 generic blocks of 4 fully connected layers of 512 with ReLU over the residual history and the conditioning (the history mask, the 28-day horizon's holiday flags, the weekday one-hot and a 6-row office type table), a linear backcast subtracted under the mask and a linear forecast summed; the 10/50/90% quantiles of the 3 series 28 days ahead by the pinball loss; Adam, clipping, bf16 autocast, 420 steps; the loss read back every 20 steps and every 84 steps a no-grad pass over 2,048 offices of 224 days with the median's scaled absolute error and the 10-90% band's coverage read back")
def mail_volume_nbeats_train(rng):
    n_series, horizon, n_office = 3, _smoke(28, 7), 6
    l_opts = _smoke([56, 84, 112, 168, 224], [14, 21])
    max_l = max(l_opts)
    hidden, blocks, layers = _smoke(512, 16), _smoke(9, 2), _smoke(4, 2)
    qs = torch.tensor([0.1, 0.5, 0.9], device="cuda")
    model = _NBeats(n_series, max_l, horizon, 3, hidden, blocks, layers, n_office).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=5e-4)
    steps, every = _smoke(420, 3), _smoke(84, 2)
    t_all = torch.arange(max_l + horizon, device="cuda")

    def offices(b, look):
        level = torch.exp(torch.randn(b, n_series, 1, device="cuda") * 0.8 + 6.0)
        weekly = 1.0 + 0.4 * torch.rand(b, n_series, 7, device="cuda")
        dow0 = torch.randint(0, 7, (b,), device="cuda")
        day = (t_all[None] + dow0[:, None]) % 7
        wk = weekly.gather(2, day[:, None].expand(-1, n_series, -1))
        trend = 1.0 + torch.randn(b, n_series, 1, device="cuda") * 0.1 * t_all / 365.0
        hol = (torch.rand(b, max_l + horizon, device="cuda") < 0.03).float()
        y = level * wk * trend * (1.0 + 0.1 * torch.randn(b, n_series, max_l + horizon, device="cuda"))
        y = y * (1.0 - 0.8 * hol[:, None])
        keep = (t_all[:max_l] >= max_l - look)[None].expand(b, -1)
        hist = y[..., :max_l] * keep[:, None].float()
        sc = hist.sum(-1, keepdim=True) / keep.float().sum(-1)[:, None, None] + 1.0
        dow = (dow0 + max_l) % 7
        office = torch.randint(0, n_office, (b,), device="cuda")
        return (hist / sc, keep, hol[:, max_l:], dow, office), y[..., max_l:] / sc

    def pinball(pred, fut):
        diff = fut[..., None] - pred
        return torch.maximum(qs * diff, (qs - 1.0) * diff).mean()

    for step in range(steps):
        model.train()
        b, look = rng.randint(_smoke(256, 4), _smoke(1024, 8)), rng.choice(l_opts)
        inp, fut = offices(b, look)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(*inp)
        loss = pinball(pred, fut)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.item()
        del inp, fut, pred, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                inp, fut = offices(_smoke(2048, 8), max_l)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pred = model(*inp)
                hist = inp[0]
                naive = (hist[..., 7:] - hist[..., :-7]).abs().mean(-1, keepdim=True).clamp_min(1e-3)
                mase = ((pred[..., 1] - fut).abs() / naive).mean()
                cover = ((fut >= pred[..., 0]) & (fut <= pred[..., 2])).float().mean()
            torch.stack([mase, cover]).tolist()
            del inp, fut, pred, hist, naive, mase, cover


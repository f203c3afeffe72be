"""The hundred-and-thirty-seventh batch of held-out workloads for record.py, kept in a file of their own (as batch16.py
to batch135_b.py are): newspapers and news publishing, written in torch alone, first half. Headline writing training
(a transformer encoder-decoder over articles of drawn lengths under a key mask, the headline teacher-forced under a
causal mask with cross-attention, the article's section from the encoder), a press photo selection and cropping
service (an inverted-residual convnet with a saliency map at 1/8 resolution, candidate crops of four aspect ratios
scored by an integral image of the saliency, each photo's quality and sharpness and near-duplicates among a story's
photos by their embeddings), reader churn training (a GRU written out week by week over each subscriber's history of
drawn length, left-padded steps keeping the state by torch.where; next week's visits, churn, conversion to a paid plan
and lifetime revenue) and newspaper delivery route training (an attention model over the stops of drawn routes, a
pointer decoder written out stop by stop with the visited stops masked, trained by REINFORCE against the mean cost of
several sampled routes of the same instance, lateness against each stop's deadline counted).
Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths,
resolutions and batch sizes are fixed on the host, padding handled by masks or by torch.where / masked_fill, no
boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
press_photo_crop_serve uploads its photos on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every embedding and position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new137.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and
for the CPU smoke run (RECORD_SMOKE=1).
"""

import math

import torch

from batch_common import Batch
from workload_helpers import CrossDecoderBlock, PreNormBlock, SideUploads, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- headline writing (transformer encoder-decoder)


@_workload("headline writing training (random init, a transformer encoder-decoder): 8-24 articles a step (drawn), each 128-512 tokens (drawn per article, padded to the step's longest rounded up to 16, at most 512) of a 16,000-token vocabulary with a 512-row position table, each headline 8-48 tokens (drawn per article) and an end token, right-padded, with a 49-row position table; 4 pre-norm encoder blocks of width 256, 8 heads, under the articles' key mask, 3 pre-norm decoder blocks (causal self-attention, cross-attention under the key mask, a GELU MLP), the output tied to the token table; the headline by masked cross-entropy with label smoothing 0.1 and the section (of 16) by cross-entropy from the masked mean of the encoder; AdamW, clipping, bf16 autocast, 280 steps; the losses read back every 10 steps and every 56 steps a no-grad pass over 32 articles of 512 tokens with 48-token headlines, the token accuracy read back")
def headline_seq2seq_train(rng):
    vocab, d, heads, n_sec = 16000, _smoke(256, 32), _smoke(8, 2), 16
    enc_l, dec_l = _smoke(4, 1), _smoke(3, 1)
    a_lo, a_hi, h_lo, h_hi = _smoke(128, 8), _smoke(512, 32), _smoke(8, 3), _smoke(48, 8)
    tok, enc_pos = _nn.Embedding(vocab, d).cuda(), _nn.Embedding(a_hi, d).cuda()
    dec_pos = _nn.Embedding(h_hi + 1, d).cuda()
    enc = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(enc_l)).cuda()
    dec = _nn.ModuleList(CrossDecoderBlock(d, heads) for _ in range(dec_l)).cuda()
    enc_norm, dec_norm = _nn.LayerNorm(d).cuda(), _nn.LayerNorm(d).cuda()
    sec_head = mlp(d, d, n_sec, act=_nn.GELU).cuda()
    mods = _nn.ModuleList([tok, enc_pos, dec_pos, enc, dec, enc_norm, dec_norm, sec_head])
    opt = torch.optim.AdamW(mods.parameters(), lr=3e-4, weight_decay=0.01)
    steps, every = _smoke(280, 3), _smoke(56, 2)

    def run(a_lens, h_lens):
        b, t = len(a_lens), min(a_hi, -(-max(a_lens) // 16) * 16)
        u = max(h_lens) + 1
        keep = keep_mask(a_lens, t)
        ids = torch.randint(3, vocab, (b, t), device="cuda").masked_fill(~keep, 0)
        keep_y = keep_mask([h + 1 for h in h_lens], u)
        slot = torch.arange(u, device="cuda")
        y = torch.randint(3, vocab, (b, u), device="cuda")
        y = torch.where(slot[None] == torch.tensor(h_lens, device="cuda")[:, None], 2, y).masked_fill(~keep_y, 0)
        y_in = torch.cat([torch.ones(b, 1, dtype=torch.long, device="cuda"), y[:, :-1]], 1)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            x = tok(ids) + enc_pos(torch.arange(t, device="cuda"))[None]
            m = keep[:, None, None, :]
            for blk in enc:
                x = blk(x, m)
            mem = enc_norm(x)
            w = keep.float()
            pooled = (mem.float() * w[..., None]).sum(1) / w.sum(1, keepdim=True)
            sec = sec_head(pooled).float()
            z = tok(y_in) + dec_pos(slot)[None]
            for blk in dec:
                z = blk(z, mem, m)
            logits = _F.linear(dec_norm(z), tok.weight).float()
        return y, keep_y, logits, sec

    for step in range(steps):
        mods.train()
        b = rng.randint(_smoke(8, 2), _smoke(24, 3))
        a_lens = [rng.randint(a_lo, a_hi) for _ in range(b)]
        h_lens = [rng.randint(h_lo, h_hi) for _ in range(b)]
        y, keep_y, logits, sec = run(a_lens, h_lens)
        sec_y = torch.randint(0, n_sec, (b,), device="cuda")
        wy = keep_y.float()
        l_tok = (_F.cross_entropy(logits.transpose(1, 2), y, reduction="none", label_smoothing=0.1) * wy).sum()
        l_tok = l_tok / wy.sum()
        l_sec = _F.cross_entropy(sec, sec_y)
        loss = l_tok + 0.3 * l_sec
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(mods.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_tok.detach(), l_sec.detach()]).tolist()
        del y, keep_y, logits, sec, sec_y, wy, l_tok, l_sec, loss
        if (step + 1) % every == 0:
            mods.eval()
            with torch.no_grad():
                nb = _smoke(32, 2)
                y, keep_y, logits, sec = run([a_hi] * nb, [h_hi] * nb)
                wy = keep_y.float()
                acc = ((logits.argmax(-1) == y).float() * wy).sum() / wy.sum()
            acc.item()
            del y, keep_y, logits, sec, wy, acc


# ---------------------------------------------------------------- press photo selection and cropping (service)


class _InvRes(_nn.Module):
    """A MobileNetV2 inverted residual: a 1x1 expansion, a 3x3 depthwise convolution (strided), a 1x1 projection,
    batch norm and ReLU6; the input added back where the shape is kept."""

    def __init__(self, cin, cout, stride, expand=4):
        super().__init__()
        mid = cin * expand
        self.body = _nn.Sequential(
            _nn.Conv2d(cin, mid, 1, bias=False), _nn.BatchNorm2d(mid), _nn.ReLU6(),
            _nn.Conv2d(mid, mid, 3, stride, 1, groups=mid, bias=False), _nn.BatchNorm2d(mid), _nn.ReLU6(),
            _nn.Conv2d(mid, cout, 1, bias=False), _nn.BatchNorm2d(cout))
        self.res = stride == 1 and cin == cout

    def forward(self, x):
        y = self.body(x)
        return x + y if self.res else y


class _CropNet(_nn.Module):
    """An inverted-residual backbone (1/2 .. 1/32), a saliency map at 1/8 from 1x1 laterals of the 1/8, 1/16 and
    1/32 maps, a quality head (news value, technical quality, faces) and a 128-d embedding from the pooled 1/32 map."""

    def __init__(self, w):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, w[0], 3, 2, 1, bias=False), _nn.BatchNorm2d(w[0]), _nn.ReLU6())
        stages, cin = [], w[0]
        for c in w[1:]:
            stages.append(_nn.Sequential(_InvRes(cin, c, 2), _InvRes(c, c, 1)))
            cin = c
        self.stages = _nn.ModuleList(stages)
        f = w[2]
        self.l3, self.l4, self.l5 = _nn.Conv2d(w[2], f, 1), _nn.Conv2d(w[3], f, 1), _nn.Conv2d(w[4], f, 1)
        self.sal = _nn.Sequential(_nn.Conv2d(f, f, 3, 1, 1), _nn.ReLU(), _nn.Conv2d(f, 1, 1))
        self.quality = mlp(w[4], w[4], 3, act=_nn.ReLU)
        self.emb = _nn.Linear(w[4], 128)

    def forward(self, x):
        x = self.stem(x)
        c2 = self.stages[0](x)
        c3 = self.stages[1](c2)
        c4 = self.stages[2](c3)
        c5 = self.stages[3](c4)
        p = (self.l3(c3) + _F.interpolate(self.l4(c4), scale_factor=2.0, mode="nearest")
             + _F.interpolate(self.l5(c5), scale_factor=4.0, mode="nearest"))
        f = c5.mean((2, 3))
        return self.sal(p).float()[:, 0], self.quality(f).float(), self.emb(f).float()


def _crop_table(hf, wf, aspects, scales, grid):
    """Candidate crops on an hf x wf map: for each aspect (width over height), scale and grid position, the flat
    indices of the four corners in the (hf + 1) x (wf + 1) integral image, and the box (x1, y1, x2, y2) and area as
    fractions of the photo. Built on the host, once per resolution."""
    corners, boxes, areas = [], [], []
    for a in aspects:
        bw, bh = (wf, wf / a) if wf / a <= hf else (hf * a, hf)
        for s in scales:
            cw, ch = max(1, int(round(bw * s))), max(1, int(round(bh * s)))
            for gy in range(grid):
                for gx in range(grid):
                    y1, x1 = (hf - ch) * gy // (grid - 1), (wf - cw) * gx // (grid - 1)
                    y2, x2 = y1 + ch, x1 + cw
                    corners.append((y2 * (wf + 1) + x2, y1 * (wf + 1) + x2, y2 * (wf + 1) + x1, y1 * (wf + 1) + x1))
                    boxes.append((x1 / wf, y1 / hf, x2 / wf, y2 / hf))
                    areas.append(cw * ch / (hf * wf))
    idx = torch.tensor(corners, device="cuda").t().contiguous().flatten()
    return idx, torch.tensor(boxes, device="cuda"), torch.tensor(areas, device="cuda")


@_workload("press photo selection and cropping serving (random init, an inverted-residual convnet with a saliency map): 1,440-1,480 requests (drawn) of one story's 2-12 candidate photos (drawn) at 320 x 480, 384 x 576, 480 x 640 or 576 x 384 px (drawn per request), uint8 RGB uploaded on a side stream from two reused pinned host buffers (filled once, sized for 12 x 3 x 480 x 640) one request ahead (one span, through SideUploads.ahead), normalised on the device; a MobileNetV2-style backbone (a strided stem of 24 channels and four stages of two inverted residuals, 32/64/96/160 channels, expansion 4, depthwise 3x3, in NCHW), 1x1 laterals of the 1/8, 1/16 and 1/32 maps summed at 1/8 into a saliency map, in eval mode under bf16 autocast; the saliency softmaxed over each photo and summed into an integral image by two cumsums, 300 candidate crops (4 aspect ratios 16:9, 4:3, 1:1, 4:5 x 3 scales x a 5 x 5 grid, a corner table made on the host once per resolution) scored by their saliency mass (index_select of the four corners) less a size term, the best crop of each aspect by max and its box gathered; each photo's quality (news value, technical quality, faces) from the pooled features, its sharpness by the variance of a 3x3 Laplacian of the luminance, a near-duplicate penalty from the cosine of its 128-d embedding with the better-scored photos of the story, and the story's best 3 (or 2) photos by topk; each request's figures read back once")
def press_photo_crop_serve(rng):
    widths = (_smoke(24, 8), _smoke(32, 8), _smoke(64, 16), _smoke(96, 16), _smoke(160, 16))
    res = [(320, 480), (384, 576), (480, 640), (576, 384)] if _smoke(1, 0) else [(64, 96), (96, 64)]
    max_n = _smoke(12, 3)
    aspects, scales, grid = (16 / 9, 4 / 3, 1.0, 0.8), (0.6, 0.8, 1.0), 5
    per_aspect = len(scales) * grid * grid
    model = _CropNet(widths).cuda().eval()
    model.requires_grad_(False)
    mean = torch.tensor([0.47, 0.45, 0.41], device="cuda").view(1, 3, 1, 1) * 255.0
    std = torch.tensor([0.24, 0.23, 0.23], device="cuda").view(1, 3, 1, 1) * 255.0
    lap = torch.tensor([[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]], device="cuda").view(1, 1, 3, 3)
    tables = {}
    big = max(h * w for h, w in res)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_n * 3 * big,), generator=gen, dtype=torch.uint8).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)

    nreq = rng.randint(_smoke(1440, 3), _smoke(1480, 4))
    plan = []
    for _ in range(nreq):
        h, w = rng.choice(res)
        plan.append((rng.randint(2, max_n), h, w))

    for (n, h, w), raw in up.ahead(plan, lambda p: (p[0] * 3 * p[1] * p[2],)):
        hf, wf = h // 8, w // 8
        if (hf, wf) not in tables:
            tables[(hf, wf)] = _crop_table(hf, wf, aspects, scales, grid)
        corners, boxes, areas = tables[(hf, wf)]
        k = areas.shape[0]
        with torch.no_grad():
            img = raw.view(n, 3, h, w).float()
            lum = img[:, 0:1] * 0.299 + img[:, 1:2] * 0.587 + img[:, 2:3] * 0.114
            sharp = _F.conv2d(lum / 255.0, lap).flatten(1).var(-1)
            x = (img - mean) / std
            with torch.autocast("cuda", dtype=torch.bfloat16):
                sal, qual, emb = model(x)
            p = sal.flatten(1).softmax(-1).view(n, hf, wf)
            integral = _F.pad(p.cumsum(1).cumsum(2), (1, 0, 1, 0)).flatten(1)
            c = integral.index_select(1, corners).view(n, 4, k)
            mass = c[:, 0] - c[:, 1] - c[:, 2] + c[:, 3]
            score = mass - 0.35 * areas[None]
            best, arg = score.view(n, len(aspects), per_aspect).max(-1)
            pick = arg + torch.arange(len(aspects), device="cuda")[None] * per_aspect
            crop = boxes.index_select(0, pick.flatten()).view(n, len(aspects), 4)
            e = _F.normalize(emb, dim=-1)
            q = qual[:, 0] + 0.5 * qual[:, 1] + 0.2 * torch.log1p(sharp * 100.0)
            sim = (e @ e.t()).masked_fill(torch.eye(n, dtype=torch.bool, device="cuda"), -1.0)
            better = q[None, :] > q[:, None]
            dup = sim.masked_fill(~better, -1.0).amax(-1).clamp_min(0.0)
            final = q - 2.0 * dup
            top, who = final.topk(min(3, n))
            figs = torch.cat([crop.flatten(), best.flatten(), qual.flatten(), sharp, dup, top, who.float()])
        figs.tolist()
        del raw, img, lum, sharp, x, sal, qual, emb, p, integral, c, mass, score, best, arg, pick, crop, e, q, sim
        del better, dup, final, top, who, figs


# ---------------------------------------------------------------- reader churn (GRU written out week by week)


class _ChurnGRU(_nn.Module):
    """A GRU written out week by week (the input gates of all weeks at once, the hidden gates step by step), the
    first state from the reader's plan and region, padded weeks keeping the state by torch.where; a per-week head
    (next week's visits) and a reader head from the last state and the masked mean of the states."""

    def __init__(self, fin, n_plan, n_region, d):
        super().__init__()
        self.inp = _nn.Linear(fin + 1, d)
        self.plan, self.region = _nn.Embedding(n_plan, d), _nn.Embedding(n_region, d)
        self.wx, self.wh = _nn.Linear(d, 3 * d), _nn.Linear(d, 3 * d, bias=False)
        self.week_head = _nn.Linear(d, 1)
        self.head = mlp(2 * d, d, 3, act=_nn.GELU)

    def forward(self, x, keep, plan, region):
        t = x.shape[1]
        gx_all = self.wx(_F.gelu(self.inp(torch.cat([x, keep[..., None].to(x.dtype)], -1))))
        h = torch.tanh(self.plan(plan) + self.region(region))
        outs = []
        for s in range(t):
            xr, xz, xn = gx_all[:, s].chunk(3, -1)
            hr, hz, hn = self.wh(h).chunk(3, -1)
            r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
            cand = torch.tanh(xn + r * hn)
            h = torch.where(keep[:, s, None], (1 - z) * cand + z * h, h)
            outs.append(h)
        hs = torch.stack(outs, 1)
        w = keep.float()
        pooled = (hs.float() * w[..., None]).sum(1) / w.sum(1, keepdim=True)
        return self.week_head(hs).float()[..., 0], self.head(torch.cat([h.float(), pooled], -1)).float()


@_workload("reader churn and subscription training (random init, a GRU written out week by week): 64-256 readers a step (drawn), each with 12-52 weeks of history (the step's length drawn; each reader's own 4-to-all weeks drawn, left-padded under a mask) of 12 features (visits, articles read, minutes, newsletter opens, paywall hits, devices, comments, shares, app sessions, the sections read, discount, payment failures) and the mask, the plan (of 5) and region (of 48) by tables as the first state; an input projection and GRU gates of width 192, the hidden gates step by step, padded weeks keeping the state by torch.where; next week's visits at every week by a masked Poisson loss, from the last state and the masked mean of the states the churn within 90 days by BCE, conversion to a paid plan by BCE masked to the free plan, and the log lifetime revenue by a Huber loss; Adam, clipping, bf16 autocast, 230 steps; the losses read back every 10 steps and every 46 steps a no-grad pass over 256 readers of 52 weeks with the churn accuracy read back")
def reader_churn_gru_train(rng):
    fin, n_plan, n_region, d = 12, 5, 48, _smoke(192, 16)
    t_lo, t_hi = _smoke(12, 4), _smoke(52, 8)
    model = _ChurnGRU(fin, n_plan, n_region, d).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    steps, every = _smoke(230, 3), _smoke(46, 2)

    def batch(b, t, lens):
        keep = keep_mask(lens, t).flip(-1)
        x = torch.randn(b, t, fin, device="cuda") * keep[..., None].float()
        plan = torch.randint(0, n_plan, (b,), device="cuda")
        region = torch.randint(0, n_region, (b,), device="cuda")
        visits = torch.poisson(torch.rand(b, t, device="cuda") * 6.0)
        churn = (torch.rand(b, device="cuda") < 0.2).float()
        convert = (torch.rand(b, device="cuda") < 0.1).float()
        revenue = torch.log1p(torch.rand(b, device="cuda") * 400.0)
        return keep, x, plan, region, visits, churn, convert, revenue

    for step in range(steps):
        model.train()
        b, t = rng.randint(_smoke(64, 2), _smoke(256, 3)), rng.randint(t_lo, t_hi)
        lens = [rng.randint(min(4, t), t) for _ in range(b)]
        keep, x, plan, region, visits, churn, convert, revenue = batch(b, t, lens)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            week, out = model(x, keep, plan, region)
        wk = keep[:, 1:].float()
        l_vis = (_F.poisson_nll_loss(week[:, :-1], visits[:, 1:], reduction="none") * wk).sum() / wk.sum()
        l_churn = _F.binary_cross_entropy_with_logits(out[:, 0], churn)
        free = (plan == 0).float()
        l_conv = (_F.binary_cross_entropy_with_logits(out[:, 1], convert, reduction="none") * free).sum()
        l_conv = l_conv / free.sum().clamp_min(1.0)
        l_rev = _F.huber_loss(out[:, 2], revenue)
        loss = l_vis + l_churn + l_conv + 0.5 * l_rev
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_vis.detach(), l_churn.detach(), l_conv.detach(), l_rev.detach()]).tolist()
        del keep, x, plan, region, visits, churn, convert, revenue, week, out, wk, l_vis, l_churn, free, l_conv
        del l_rev, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                nb = _smoke(256, 2)
                keep, x, plan, region, visits, churn, convert, revenue = batch(nb, t_hi, [t_hi] * nb)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    week, out = model(x, keep, plan, region)
                acc = ((out[:, 0] > 0).float() == churn).float().mean()
            acc.item()
            del keep, x, plan, region, visits, churn, convert, revenue, week, out, acc


# ---------------------------------------------------------------- newspaper delivery routes (attention model)


class _RouteModel(_nn.Module):
    """An attention model for routing: the stops and the depot embedded and encoded by pre-norm transformer blocks;
    a pointer decoder whose query is made from the mean of the stops, the last stop, the clock and the bundles left,
    a multi-head glimpse over the unvisited stops, then logits clipped by 10 tanh with the visited stops masked."""

    def __init__(self, fin, d, heads, layers):
        super().__init__()
        self.h = heads
        self.stop, self.depot = _nn.Linear(fin, d), _nn.Linear(fin, d)
        self.enc = _nn.ModuleList(PreNormBlock(d, heads, 2 * d) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.ctx = _nn.Linear(2 * d + 2, d)
        self.keys = _nn.Linear(d, 3 * d, bias=False)
        self.out = _nn.Linear(d, d)

    def encode(self, feats):
        e = torch.cat([self.depot(feats[:, :1]), self.stop(feats[:, 1:])], 1)
        for blk in self.enc:
            e = blk(e)
        e = self.norm(e)
        gk, gv, lk = self.keys(e).chunk(3, -1)
        return e, gk, gv, lk

    def step(self, graph, last, clock, left, gk, gv, lk, visited):
        bp, n, d = gk.shape
        q = self.ctx(torch.cat([graph, last, clock[:, None], left[:, None]], -1))

        def split(t):
            return t.view(bp, -1, self.h, d // self.h).transpose(1, 2)

        a = _F.scaled_dot_product_attention(split(q[:, None]), split(gk), split(gv), attn_mask=~visited[:, None, None])
        g = self.out(a.transpose(1, 2).reshape(bp, d))
        logits = (lk @ g[..., None])[..., 0].float() / math.sqrt(d)
        return (10.0 * torch.tanh(logits)).masked_fill(visited, -1e4)


@_workload("newspaper delivery route training (random init, an attention model with a pointer decoder, REINFORCE): 24-48 route instances a step (drawn), each a depot and 20-50 stops (drawn per step) with 8 features (position, bundles of papers, the delivery deadline, the kind of 4: house, apartment block, shop, honesty box), 8 routes sampled per instance; 3 pre-norm encoder blocks of width 128, 8 heads, an MLP of 256; the decoder written out stop by stop: a query from the mean of the stops, the last stop, the clock and the bundles left, a multi-head glimpse by SDPA over the unvisited stops (a boolean mask), logits clipped by 10 tanh with the visited stops masked_fill'ed, the next stop by Gumbel-max, its log-probability gathered, the visited mask updated by one_hot; the cost the distance driven back to the depot plus twice the lateness past each stop's deadline (the clock advanced by the distance and a service time by the bundles); REINFORCE with each instance's mean cost over its 8 routes as the baseline; Adam, clipping, bf16 autocast, 82 steps; the mean cost and the loss read back every 5 steps and every 16 steps a no-grad greedy pass over 64 instances of 50 stops with the mean cost read back")
def paper_route_pointer_train(rng):
    fin, d, heads, layers, n_kind = 8, _smoke(128, 16), _smoke(8, 2), _smoke(3, 1), 4
    s_lo, s_hi, samples = _smoke(20, 4), _smoke(50, 6), _smoke(8, 2)
    model = _RouteModel(fin, d, heads, layers).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    steps, every, log_every = _smoke(82, 3), _smoke(16, 2), _smoke(5, 1)

    def instances(b, n):
        xy = torch.rand(b, n + 1, 2, device="cuda")
        bundles = torch.randint(1, 41, (b, n + 1), device="cuda").float() / 40.0
        deadline = 0.5 + 1.5 * torch.rand(b, n + 1, device="cuda")
        kind = _F.one_hot(torch.randint(0, n_kind, (b, n + 1), device="cuda"), n_kind).float()
        feats = torch.cat([xy, bundles[..., None], deadline[..., None], kind], -1)
        return feats, xy, bundles, deadline

    def rollout(feats, xy, bundles, deadline, p, greedy):
        b, n1 = xy.shape[0], xy.shape[1]
        bp = b * p
        with torch.autocast("cuda", dtype=torch.bfloat16):
            e, gk, gv, lk = model.encode(feats)
        rep = [t[:, None].expand(b, p, *t.shape[1:]).reshape(bp, *t.shape[1:]) for t in (e, gk, gv, lk, xy)]
        e, gk, gv, lk, xy_r = rep
        bun = bundles[:, None].expand(b, p, n1).reshape(bp, n1)
        dl = deadline[:, None].expand(b, p, n1).reshape(bp, n1)
        graph = e[:, 1:].mean(1)
        visited = torch.zeros(bp, n1, dtype=torch.bool, device="cuda")
        visited[:, 0] = True
        last_i = torch.zeros(bp, dtype=torch.long, device="cuda")
        pos = xy_r[:, 0]
        clock = torch.zeros(bp, device="cuda")
        left = bun[:, 1:].sum(1)
        dist, late, logp = torch.zeros(bp, device="cuda"), torch.zeros(bp, device="cuda"), []
        for _ in range(n1 - 1):
            last = e.gather(1, last_i[:, None, None].expand(bp, 1, e.shape[2]))[:, 0]
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model.step(graph, last, clock, left, gk, gv, lk, visited)
            if greedy:
                act = logits.argmax(-1)
            else:
                g = -torch.log(-torch.log(torch.rand_like(logits).clamp(1e-6, 1.0 - 1e-6)))
                act = (logits + g).argmax(-1)
                logp.append(logits.log_softmax(-1).gather(1, act[:, None])[:, 0])
            nxt = xy_r.gather(1, act[:, None, None].expand(bp, 1, 2))[:, 0]
            step_d = (nxt - pos).pow(2).sum(-1).sqrt()
            drop = bun.gather(1, act[:, None])[:, 0]
            clock = clock + step_d + 0.02 * drop
            late = late + (clock - dl.gather(1, act[:, None])[:, 0]).clamp_min(0.0)
            dist, pos, left, last_i = dist + step_d, nxt, left - drop, act
            visited = visited | _F.one_hot(act, n1).bool()
        cost = (dist + (pos - xy_r[:, 0]).pow(2).sum(-1).sqrt() + 2.0 * late).view(b, p)
        return cost, (torch.stack(logp, 1).sum(1).view(b, p) if logp else None)

    for step in range(steps):
        model.train()
        b, n = rng.randint(_smoke(24, 2), _smoke(48, 3)), rng.randint(s_lo, s_hi)
        with torch.no_grad():
            feats, xy, bundles, deadline = instances(b, n)
        cost, logp = rollout(feats, xy, bundles, deadline, samples, False)
        adv = (cost - cost.mean(1, keepdim=True)).detach()
        loss = (adv * logp).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % log_every == 0:
            torch.stack([cost.detach().mean(), loss.detach()]).tolist()
        del feats, xy, bundles, deadline, cost, logp, adv, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                feats, xy, bundles, deadline = instances(_smoke(64, 2), s_hi)
                cost, _ = rollout(feats, xy, bundles, deadline, 1, True)
                mean_cost = cost.mean()
            mean_cost.item()
            del feats, xy, bundles, deadline, cost, mean_cost

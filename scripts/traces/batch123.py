"""The hundred-and-twenty-third batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch121_b.py are): jewellery, gemstones and watchmaking, written in torch alone, first half. Gemstone grading
training (a residual convnet over loose-stone photos of drawn resolutions, colour, clarity, cut and fluorescence grades
by cross-entropy and the carat weight by regression), rough-diamond cut planning training (an edge-convolution network
over rough-stone point clouds of drawn sizes with k-nearest-neighbour graphs, the cut shape, the proportions, the
expected yield and which points the planned stone keeps), a watch timegrapher service (a dilated 1-d convnet over
microphone recordings of drawn durations, tick and tock event probabilities, the beat rate by an FFT autocorrelation,
the beat error by an FFT cross-correlation, the balance amplitude) and a jewellery design diffusion sampler (a 2-d
U-Net denoiser conditioned on piece type, metal and gemstone, classifier-free guidance in one doubled batch, DDIM with
drawn step counts and guidance scales).
Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths,
resolutions and batch sizes are fixed on the host, padding handled by masks or by torch.where / masked_fill, no
boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
watch_timegrapher_serve uploads its recordings on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new123.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and
for the CPU smoke run (RECORD_SMOKE=1).
"""

import math

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, SideUploads, TimeResBlock, _mha, _sincos, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- gemstone grading (residual convnet)


class _GradeNet(_nn.Module):
    """A 3x3 stride-2 stem and four stages of two residual blocks (stride 2 at the first of each), global average and
    max pooling, heads for colour, clarity, cut and fluorescence grades and the carat weight."""

    def __init__(self, widths, n_heads):
        super().__init__()
        c0 = widths[0]
        self.stem = _nn.Sequential(_nn.Conv2d(3, c0, 3, 2, 1, bias=False), _nn.BatchNorm2d(c0), _nn.ReLU())
        stages, cin = [], c0
        for c in widths[1:]:
            stages += [BasicResBlock(cin, c, 2), BasicResBlock(c, c, 1)]
            cin = c
        self.stages = _nn.Sequential(*stages)
        self.head = mlp(2 * cin, cin, sum(n_heads) + 1, act=_nn.GELU)
        self.n_heads = n_heads

    def forward(self, x):
        f = self.stages(self.stem(x))
        z = torch.cat([f.mean((2, 3)), f.amax((2, 3))], -1)
        out = self.head(z).float()
        return out[:, :-1].split(self.n_heads, -1), out[:, -1]


@_workload("gemstone grading training (random init, a residual convnet): 16-48 loose-stone photos a step (drawn, at most 48 x 192^2 pixels a step) of 160, 192, 224 or 256 px (drawn per step) drawn on the device in channels-last; a 3x3 stride-2 stem of 32 channels and four stages of two residual blocks at 64, 128, 256 and 320 channels (stride 2 at the first of each), global mean and max pooling, an MLP to four grade heads (colour of 23 grades D-Z, clarity of 11 grades FL-I3, cut of 5, fluorescence of 5) and the carat weight; cross-entropy with label smoothing 0.1 on the four grades and a Huber loss on log carats; SGD with Nesterov momentum on a cosine schedule with a warm-up, bf16 autocast, 600 steps; the losses read back every 20 steps and every 120 steps a no-grad pass over 48 stones of 192 px with the four grade accuracies read back")
def gemstone_grade_resnet_train(rng):
    widths = _smoke([32, 64, 128, 256, 320], [8, 8, 16, 16, 16])
    n_heads = [23, 11, 5, 5]
    model = _GradeNet(widths, n_heads).cuda().to(memory_format=torch.channels_last)
    steps = _smoke(600, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4)
    warm = 20
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    res_opts = _smoke([160, 192, 224, 256], [32, 48])
    budget = _smoke(48 * 192 * 192, 3 * 48 * 48)

    def stones(b, r):
        x = torch.randn(b, 3, r, r, device="cuda").contiguous(memory_format=torch.channels_last)
        ys = [torch.randint(0, k, (b,), device="cuda") for k in n_heads]
        carat = torch.rand(b, device="cuda") * 4.0 + 0.2
        return x, ys, carat

    for step in range(steps):
        model.train()
        r = rng.choice(res_opts)
        b = min(rng.randint(_smoke(16, 2), _smoke(48, 4)), budget // (r * r))
        x, ys, carat = stones(b, r)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits, w = model(x)
        l_grade = sum(_F.cross_entropy(lg, y, label_smoothing=0.1) for lg, y in zip(logits, ys))
        l_carat = _F.huber_loss(w, carat.log())
        loss = l_grade + l_carat
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        if step % 20 == 0:
            torch.stack([l_grade.detach(), l_carat.detach()]).tolist()
        del x, ys, carat, logits, w, l_grade, l_carat, loss
        if (step + 1) % _smoke(120, 2) == 0:
            model.eval()
            with torch.no_grad():
                x, ys, carat = stones(_smoke(48, 3), _smoke(192, 32))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits, w = model(x)
                acc = torch.stack([(lg.argmax(-1) == y).float().mean() for lg, y in zip(logits, ys)])
            acc.tolist()
            del x, ys, carat, logits, w, acc


# ---------------------------------------------------------------- rough-diamond cut planning (edge convolutions)


class _EdgeConv(_nn.Module):
    """DGCNN's edge convolution over a fixed neighbour index: [x_i, x_j - x_i] through two 1x1 layers, max over the
    k neighbours."""

    def __init__(self, cin, cout):
        super().__init__()
        self.net = _nn.Sequential(_nn.Linear(2 * cin, cout), _nn.LayerNorm(cout), _nn.GELU(), _nn.Linear(cout, cout))

    def forward(self, x, idx):
        b, n, c = x.shape
        k = idx.shape[-1]
        nb = x.gather(1, idx.reshape(b, n * k, 1).expand(-1, -1, c)).view(b, n, k, c)
        xi = x[:, :, None].expand(-1, -1, k, -1)
        return self.net(torch.cat([xi, nb - xi], -1)).amax(2)


class _CutPlanner(_nn.Module):
    """Three edge convolutions on the coordinates' k-nearest-neighbour graph, their concatenation to a 512-wide
    point feature, max and mean pooling to a stone feature; the cut shape, proportions and yield from the stone
    feature, a per-point keep logit from the point and stone features."""

    def __init__(self, widths, emb, n_shape, n_prop):
        super().__init__()
        cins = [6] + widths[:-1]
        self.convs = _nn.ModuleList(_EdgeConv(a, b) for a, b in zip(cins, widths))
        self.fuse = _nn.Linear(sum(widths), emb)
        self.stone = mlp(2 * emb, emb // 2, n_shape + n_prop + 1, act=_nn.GELU)
        self.point = mlp(emb + sum(widths), 128, 1, act=_nn.GELU)
        self.n_shape = n_shape

    def forward(self, pts, idx):
        feats, x = [], pts
        for conv in self.convs:
            x = conv(x, idx)
            feats.append(x)
        f = torch.cat(feats, -1)
        g = self.fuse(f)
        z = torch.cat([g.amax(1), g.mean(1)], -1)
        s = self.stone(z).float()
        keep = self.point(torch.cat([f, g.amax(1, keepdim=True).expand(-1, f.shape[1], -1)], -1))[..., 0].float()
        return s[:, :self.n_shape], s[:, self.n_shape:-1], s[:, -1], keep


@_workload("rough-diamond cut planning training (random init, an edge-convolution network in the style of DGCNN): 4-32 rough stones a step (drawn, at most 32,768 points a step) scanned to 512-2,048 surface points each (drawn per step, a multiple of 256) with coordinates and normals drawn on the device; a k-nearest-neighbour graph (k 16, by cdist and top-k on the coordinates, no gradient), three edge convolutions (widths 64, 64, 128; [x_i, x_j - x_i] through linear, layer norm, GELU, linear, max over neighbours), a fused 512-wide point feature, max and mean pooling; the cut shape (of 10: round brilliant, princess, oval, cushion, emerald, pear, marquise, radiant, asscher, heart) by cross-entropy, 6 proportions (table, crown angle, pavilion angle, girdle, culet, depth) by MSE, the expected yield by BCE on a drawn fraction and a per-point keep logit (inside the planned stone) by BCE; AdamW on a cosine schedule, clipping, bf16 autocast, 1,100 steps; the losses read back every 10 steps and every 220 steps a no-grad pass over 16 stones of 2,048 points with the shape accuracy and the keep accuracy read back")
def rough_diamond_cut_plan_train(rng):
    widths, emb, k = _smoke([64, 64, 128], [8, 8, 16]), _smoke(512, 16), _smoke(16, 4)
    n_shape, n_prop = 10, 6
    model = _CutPlanner(widths, emb, n_shape, n_prop).cuda()
    steps = _smoke(1100, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    lo, hi, budget, mult = _smoke(512, 64), _smoke(2048, 128), _smoke(32768, 256), _smoke(256, 64)

    def stones(b, n):
        xyz = torch.randn(b, n, 3, device="cuda")
        xyz = xyz / xyz.norm(dim=-1, keepdim=True) * (1.0 + 0.2 * torch.rand(b, n, 1, device="cuda"))
        nrm = _F.normalize(xyz + 0.1 * torch.randn_like(xyz), dim=-1)
        with torch.no_grad():
            idx = torch.cdist(xyz, xyz).topk(k, -1, largest=False).indices
        shape = torch.randint(0, n_shape, (b,), device="cuda")
        prop = torch.rand(b, n_prop, device="cuda")
        yld = torch.rand(b, device="cuda") * 0.5 + 0.2
        keep = (torch.rand(b, n, device="cuda") < 0.45).float()
        return torch.cat([xyz, nrm], -1), idx, shape, prop, yld, keep

    for step in range(steps):
        model.train()
        n = rng.randint(lo // mult, hi // mult) * mult
        b = min(rng.randint(_smoke(4, 2), _smoke(32, 3)), budget // n)
        pts, idx, shape, prop, yld, keep = stones(b, n)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            s_logit, p_out, y_logit, k_logit = model(pts, idx)
        l_shape = _F.cross_entropy(s_logit, shape)
        l_prop = _F.mse_loss(torch.sigmoid(p_out), prop)
        l_yld = _F.binary_cross_entropy_with_logits(y_logit, yld)
        l_keep = _F.binary_cross_entropy_with_logits(k_logit, keep)
        loss = l_shape + l_prop + l_yld + l_keep
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 10 == 0:
            torch.stack([l_shape.detach(), l_prop.detach(), l_yld.detach(), l_keep.detach()]).tolist()
        del pts, idx, shape, prop, yld, keep, s_logit, p_out, y_logit, k_logit, l_shape, l_prop, l_yld, l_keep, loss
        if (step + 1) % _smoke(220, 2) == 0:
            model.eval()
            with torch.no_grad():
                pts, idx, shape, prop, yld, keep = stones(_smoke(16, 2), hi)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    s_logit, p_out, y_logit, k_logit = model(pts, idx)
                acc = torch.stack([(s_logit.argmax(-1) == shape).float().mean(),
                                   ((k_logit > 0).float() == keep).float().mean()])
            acc.tolist()
            del pts, idx, shape, prop, yld, keep, s_logit, p_out, y_logit, k_logit, acc


# ---------------------------------------------------------------- watch timegrapher service (dilated 1-d convnet)


class _TickNet(_nn.Module):
    """A strided 1-d convolution front end (stride 4), three stride-2 stages of two dilated residual convolutions
    each (to 1/32 of the sample rate), frame heads for tick and tock event logits and the balance amplitude."""

    def __init__(self, widths, dils):
        super().__init__()
        self.front = _nn.Sequential(_nn.Conv1d(1, widths[0], 31, 4, 15), _nn.GELU())
        self.stages = _nn.ModuleList()
        cin = widths[0]
        for c in widths[1:]:
            down = _nn.Conv1d(cin, c, 4, 2, 1)
            blocks = _nn.ModuleList(_nn.Sequential(_nn.Conv1d(c, c, 3, 1, d, dilation=d), _nn.GroupNorm(8, c),
                                                   _nn.GELU()) for d in dils)
            self.stages.append(_nn.ModuleList([down, blocks]))
            cin = c
        self.head = _nn.Conv1d(cin, 3, 1)

    def forward(self, x):
        h = self.front(x)
        for down, blocks in self.stages:
            h = down(h)
            for blk in blocks:
                h = h + blk(h)
        return self.head(h).float()


@_workload("watch timegrapher serving (random init, a dilated 1-d convnet over microphone recordings): 3,400-3,500 requests (drawn) of 1-8 watches on the test stand (drawn) with 2-10 s of 16 kHz contact-microphone audio each (drawn per request in half seconds), 16-bit PCM uploaded on a side stream from two reused pinned host buffers (filled once, sized for 8 x 10 s) one request ahead (one span, through SideUploads.ahead), scaled on the device; a stride-4 convolution front end to 32 channels and three stride-2 stages (64, 96, 128 channels) of two dilated residual convolutions (dilations 1 and 4, group norm) to 500 frames a second, under bf16 autocast, heads for tick and tock event logits and the balance amplitude; per watch the beat rate by an FFT autocorrelation of the summed event probabilities (argmax over the 5-10 Hz band of 18,000-36,000 beats an hour, by torch.fft.rfft and irfft), the rate deviation in seconds a day against a drawn nominal rate (21,600, 28,800 or 36,000 bph), the beat error from the lag of the tick-tock cross-correlation's peak against half a beat, the mean amplitude in degrees over frames weighted by the event probabilities; each request's rates, deviations, beat errors and amplitudes read back once")
def watch_timegrapher_serve(rng):
    widths, dils = _smoke([32, 64, 96, 128], [8, 8, 16, 16]), _smoke([1, 4], [1, 2])
    sr, max_n, max_h = _smoke(16000, 1600), _smoke(8, 2), _smoke(20, 4)
    model = _TickNet(widths, dils).cuda().eval()
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    half = sr // 2
    host = [torch.randint(-6000, 6000, (max_n * max_h * half,), dtype=torch.int16, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    fps = sr / 32.0

    nreq = rng.randint(_smoke(3400, 3), _smoke(3500, 4))
    plan = [(rng.randint(1, max_n), rng.randint(_smoke(4, 2), max_h), rng.choice([21600, 28800, 36000]))
            for _ in range(nreq)]

    for (n, nh, bph), raw in up.ahead(plan, lambda p: (p[0] * p[1] * half,)):
        with torch.no_grad():
            wav = raw.view(n, 1, nh * half).float() / 32768.0
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = model(wav)
            prob = torch.sigmoid(out[:, :2])
            t = prob.shape[-1]
            ev = prob.sum(1)
            ev = ev - ev.mean(-1, keepdim=True)
            spec = torch.fft.rfft(ev, n=2 * t)
            ac = torch.fft.irfft(spec * spec.conj(), n=2 * t)[:, :t]
            lo_lag, hi_lag = int(fps / 10.0), int(fps / 5.0) + 1
            lag = ac[:, lo_lag:hi_lag].argmax(-1).float() + lo_lag
            rate = 3600.0 * fps / lag
            dev = (rate - bph) / bph * 86400.0
            tick, tock = prob[:, 0] - prob[:, 0].mean(-1, keepdim=True), prob[:, 1] - prob[:, 1].mean(-1, keepdim=True)
            xc = torch.fft.irfft(torch.fft.rfft(tock, n=2 * t) * torch.fft.rfft(tick, n=2 * t).conj(), n=2 * t)
            shift = xc[:, :hi_lag].argmax(-1).float()
            beat_err = (shift - lag / 2.0).abs() / fps * 1000.0
            wgt = prob.sum(1)
            amp = 200.0 + 120.0 * torch.tanh(out[:, 2])
            amp = (amp * wgt).sum(-1) / wgt.sum(-1).clamp_min(1e-6)
            res = torch.cat([rate, dev, beat_err, amp])
        res.tolist()
        del raw, wav, out, prob, ev, spec, ac, lag, rate, dev, tick, tock, xc, shift, beat_err, wgt, amp, res


# ---------------------------------------------------------------- jewellery design diffusion sampler (2-d U-Net)


class _DesignUNet(_nn.Module):
    """A 2-d U-Net of time-conditioned residual blocks over three levels, self-attention at the bottom, the timestep
    and the design condition (piece type, metal, gemstone; index 0 of each table is the null condition) added to the
    time embedding."""

    def __init__(self, widths, temb, heads, n_piece, n_metal, n_gem):
        super().__init__()
        c0, c1, c2 = widths
        self.temb = temb
        self.t_mlp = mlp(temb, temb, temb, act=_nn.SiLU)
        self.piece, self.metal = _nn.Embedding(n_piece + 1, temb), _nn.Embedding(n_metal + 1, temb)
        self.gem = _nn.Embedding(n_gem + 1, temb)
        self.inp = _nn.Conv2d(3, c0, 3, 1, 1)
        self.d0, self.d1, self.d2 = TimeResBlock(c0, c0, temb), TimeResBlock(c0, c1, temb), TimeResBlock(c1, c2, temb)
        self.down0, self.down1 = _nn.Conv2d(c0, c0, 3, 2, 1), _nn.Conv2d(c1, c1, 3, 2, 1)
        self.attn_norm, self.qkv, self.proj = _nn.GroupNorm(8, c2), _nn.Linear(c2, 3 * c2), _nn.Linear(c2, c2)
        self.mid = TimeResBlock(c2, c2, temb)
        self.u2, self.u1 = TimeResBlock(2 * c2, c1, temb), TimeResBlock(2 * c1, c0, temb)
        self.u0 = TimeResBlock(2 * c0, c0, temb)
        self.out = _nn.Sequential(_nn.GroupNorm(8, c0), _nn.SiLU(), _nn.Conv2d(c0, 3, 3, 1, 1))
        self.heads = heads

    def forward(self, x, t, piece, metal, gem):
        te = self.t_mlp(_sincos(t, self.temb)) + self.piece(piece) + self.metal(metal) + self.gem(gem)
        h0 = self.d0(self.inp(x), te)
        h1 = self.d1(self.down0(h0), te)
        h2 = self.d2(self.down1(h1), te)
        b, c, hh, ww = h2.shape
        a = self.attn_norm(h2).flatten(2).transpose(1, 2)
        q, k, v = self.qkv(a).chunk(3, -1)
        h2 = h2 + self.proj(_mha(q, k, v, self.heads)).transpose(1, 2).reshape(b, c, hh, ww)
        m = self.mid(h2, te)
        u = self.u2(torch.cat([m, h2], 1), te)
        u = self.u1(torch.cat([_F.interpolate(u, scale_factor=2.0, mode="nearest"), h1], 1), te)
        u = self.u0(torch.cat([_F.interpolate(u, scale_factor=2.0, mode="nearest"), h0], 1), te)
        return self.out(u)


@_workload("jewellery design diffusion sampling (random init, a 2-d U-Net denoiser with classifier-free guidance): 66-68 requests (drawn) of 1-8 design sketches (drawn) at 64, 96 or 128 px (drawn per request), each with a piece type (of 6: ring, pendant, earring, brooch, bracelet, watch case), a metal (of 5) and a gemstone (of 10) drawn; a U-Net of three levels (64, 128, 192 channels, one time-conditioned residual block each way, strided-convolution downsampling, nearest upsampling, skip concatenations) with 4-head self-attention at the 1/4 level and the condition embeddings added to the sinusoidal time embedding, under bf16 autocast; 12-40 DDIM steps (drawn per request, eta 0) on a cosine schedule of 1,000 steps and a guidance scale of 2-6 (drawn per request), the conditional and the null-condition pass in one doubled batch; each request's designs clamped, quantised to uint8 and read back once with the mean metal-tone colour of each design")
def jewellery_design_diffusion_sample(rng):
    widths, temb, heads = _smoke([64, 128, 192], [8, 16, 16]), _smoke(256, 16), _smoke(4, 2)
    n_piece, n_metal, n_gem = 6, 5, 10
    model = _DesignUNet(widths, temb, heads, n_piece, n_metal, n_gem).cuda().eval()
    model.requires_grad_(False)
    big_t = 1000
    s = torch.arange(big_t + 1, device="cuda").float() / big_t
    abar = torch.cos((s + 0.008) / 1.008 * math.pi / 2) ** 2
    abar = (abar / abar[0])[1:].clamp(1e-5, 1.0)
    max_n, res_opts = _smoke(8, 2), _smoke([64, 96, 128], [16, 32])

    nreq = rng.randint(_smoke(66, 2), _smoke(68, 3))
    for _ in range(nreq):
        n, r = rng.randint(1, max_n), rng.choice(res_opts)
        n_steps, scale = rng.randint(_smoke(12, 2), _smoke(40, 3)), rng.uniform(2.0, 6.0)
        ts = [int(big_t - 1 - i * (big_t - 1) / max(n_steps - 1, 1)) for i in range(n_steps)]
        with torch.no_grad():
            piece = torch.randint(1, n_piece + 1, (n,), device="cuda")
            metal = torch.randint(1, n_metal + 1, (n,), device="cuda")
            gem = torch.randint(1, n_gem + 1, (n,), device="cuda")
            null = torch.zeros(n, dtype=torch.long, device="cuda")
            cond = [torch.cat([piece, null]), torch.cat([metal, null]), torch.cat([gem, null])]
            x = torch.randn(n, 3, r, r, device="cuda")
            for i, t in enumerate(ts):
                tt = torch.full((2 * n,), t, device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    eps = model(torch.cat([x, x]), tt, *cond).float()
                e_c, e_u = eps.chunk(2)
                e = e_u + scale * (e_c - e_u)
                a_t = abar[t]
                a_p = abar[ts[i + 1]] if i + 1 < len(ts) else torch.ones((), device="cuda")
                x0 = ((x - (1 - a_t).sqrt() * e) / a_t.sqrt()).clamp(-1.0, 1.0)
                x = a_p.sqrt() * x0 + (1 - a_p).sqrt() * e
                del tt, eps, e_c, e_u, e, a_t, a_p, x0
            img = ((x.clamp(-1.0, 1.0) + 1.0) * 127.5).to(torch.uint8)
            tone = x.mean((2, 3))
        img.cpu()
        tone.tolist()
        del piece, metal, gem, null, cond, x, img, tone

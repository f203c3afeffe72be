"""The hundred-and-thirty-third batch of held-out workloads for record.py, second half (see batch133.py): sailing,
yachting and regattas, written in torch alone. Hull resistance fine-tuning (a PointNet encoder over hull surface
point clouds of drawn sizes under a point mask, its first layers frozen; the resistance components, side force, sink
and trim at drawn speeds, heels and leeways, and the hull pressure per point), a course wind-field sampler (a
convolutional U-Net denoiser with timestep-conditioned residual blocks, DDIM with classifier-free guidance from the
readings of a drawn number of wind stations, then the mean direction, the shift range and the favoured side), a sail
shape service (a vision transformer over masthead camera frames of drawn resolutions, row and column position tables,
the draft stripes' heatmaps and by soft-argmax each stripe's camber, draft position and twist) and leg tactics
training (an encoder-decoder transformer from the leg's wind and current forecast to the sequence of manoeuvres, the
forecast and the manoeuvres both of drawn lengths under masks, teacher forcing, and the leg time).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the sail shape service), `rng` the workload's random.Random for every shape, count and sampled
choice, sizes through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or
masked_fill; no boolean-mask indexing; results read back only at logging points or once per request.
sail_shape_vit_serve uploads its frames on a side stream (two reused pinned host buffers, one request ahead, through
workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast. Every
embedding and position table is sized for the longest padded length that can be drawn.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import CrossDecoderBlock, PreNormBlock, SideUploads, TimeResBlock, _sincos, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- hull resistance (PointNet, fine-tuned)


class _HullNet(_nn.Module):
    """A shared per-point MLP (1x1 convolutions with batch norm), masked max pooling, the sailing condition by an MLP;
    heads for the hull's forces and for each point's pressure from its feature and the pooled one."""

    def __init__(self, cin, widths, n_cond, d, n_out):
        super().__init__()
        layers, c = [], cin
        for w in widths:
            layers.append(_nn.Sequential(_nn.Conv1d(c, w, 1, bias=False), _nn.BatchNorm1d(w), _nn.ReLU()))
            c = w
        self.point = _nn.ModuleList(layers)
        self.cond = mlp(n_cond, d, d, act=_nn.GELU)
        self.glob = mlp(c + d, d, n_out, layers=3, act=_nn.GELU)
        self.press = _nn.Sequential(_nn.Conv1d(widths[1] + c + d, d, 1), _nn.GELU(), _nn.Conv1d(d, 1, 1))
        self.c = c

    def forward(self, feats, keep, cond):
        local, h = feats
        for layer in self.point[len(self.point) - 1:]:
            h = layer(h)
        pooled = h.masked_fill(~keep[:, None], -1e4).amax(-1)
        cz = self.cond(cond)
        g = torch.cat([pooled.to(cz.dtype), cz], -1)
        forces = self.glob(g).float()
        t = local.shape[-1]
        p = self.press(torch.cat([local, g[:, :, None].expand(-1, -1, t).to(local.dtype)], 1)).float()[:, 0]
        return forces, p

    def encode(self, x):
        h, local = x, None
        for i, layer in enumerate(self.point[:len(self.point) - 1]):
            h = layer(h)
            if i == 1:
                local = h
        return local, h


@_workload("hull resistance fine-tuning (random init, a PointNet encoder over hull surface point clouds): 12-40 hulls a step (drawn), each of 1,024-4,096 surface points (drawn per hull in steps of 512, padded to the step's largest under a mask) with 7 features (position, normal and the panel area) drawn on the device; a shared per-point MLP of 1x1 convolutions (64, 128, 256, 512 channels with batch norm), its first three layers frozen (run under no_grad in eval mode), masked max pooling, the sailing condition (speed as a Froude number of 0.1-0.6, heel of 0-30 degrees, leeway of 0-6 degrees, trim and displacement; 5 features drawn on the device) by an MLP (width 256); the last point layer and the heads trained: 6 outputs (frictional, residuary and induced resistance, side force, sink and trim) by MSE and each point's pressure coefficient from its 128-channel feature and the pooled one by masked MSE; AdamW, clipping, bf16 autocast, 1,800 steps; the losses read back every 20 steps and every 360 steps a no-grad pass over 32 hulls of 4,096 points with the total resistance error read back")
def hull_resistance_pointnet_finetune(rng):
    cin, n_cond, n_out = 7, 5, 6
    widths, d = _smoke([64, 128, 256, 512], [8, 16, 16, 32]), _smoke(256, 16)
    model = _HullNet(cin, widths, n_cond, d, n_out).cuda()
    for layer in model.point[:len(widths) - 1]:
        layer.requires_grad_(False)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=2e-4, weight_decay=0.01)
    steps, every = _smoke(1800, 3), _smoke(360, 2)
    unit, n_lo, n_hi = _smoke(512, 16), 2, 8

    def hulls(sizes):
        b, t = len(sizes), max(sizes)
        keep = keep_mask(sizes, t)
        x = torch.randn(b, cin, t, device="cuda") * keep[:, None].float()
        cond = torch.stack([torch.rand(b, device="cuda") * 0.5 + 0.1, torch.rand(b, device="cuda") * 0.52,
                            torch.rand(b, device="cuda") * 0.1, torch.randn(b, device="cuda") * 0.02,
                            torch.rand(b, device="cuda")], -1)
        forces = torch.randn(b, n_out, device="cuda")
        cp = torch.randn(b, t, device="cuda") * 0.3
        return x, keep, cond, forces, cp

    def run(x, keep, cond):
        with torch.no_grad():
            for layer in model.point[:len(widths) - 1]:
                layer.eval()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                feats = model.encode(x)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return model(feats, keep, cond)

    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(12, 2), _smoke(40, 3))
        sizes = [rng.randint(n_lo, n_hi) * unit for _ in range(b)]
        x, keep, cond, forces, cp = hulls(sizes)
        out, p = run(x, keep, cond)
        w = keep.float()
        l_force = _F.mse_loss(out, forces)
        l_cp = ((p - cp).pow(2) * w).sum() / w.sum()
        loss = l_force + l_cp
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_force.detach(), l_cp.detach()]).tolist()
        del x, keep, cond, forces, cp, out, p, w, l_force, l_cp, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                x, keep, cond, forces, cp = hulls([n_hi * unit] * _smoke(32, 2))
                out, p = run(x, keep, cond)
                err = (out[:, :3].sum(-1) - forces[:, :3].sum(-1)).abs().mean()
            err.item()
            del x, keep, cond, forces, cp, out, p, err


# ---------------------------------------------------------------- course wind field sampler (U-Net, DDIM)


class _WindUNet(_nn.Module):
    """A three-level U-Net of TimeResBlocks (two per level down, two up with the skips), average pooling down and
    nearest upsampling, the timestep by sine features and an MLP; the noisy field and the conditioning channels in,
    the predicted noise out."""

    def __init__(self, cin, cout, widths, temb):
        super().__init__()
        self.temb = temb
        self.t_mlp = mlp(temb, temb, temb, act=_nn.SiLU)
        self.inp = _nn.Conv2d(cin, widths[0], 3, 1, 1)
        self.down = _nn.ModuleList()
        c = widths[0]
        for w in widths:
            self.down.append(_nn.ModuleList([TimeResBlock(c, w, temb), TimeResBlock(w, w, temb)]))
            c = w
        self.mid = TimeResBlock(c, c, temb)
        self.up = _nn.ModuleList()
        for w in reversed(widths):
            self.up.append(_nn.ModuleList([TimeResBlock(c + w, w, temb), TimeResBlock(w, w, temb)]))
            c = w
        self.norm, self.out = _nn.GroupNorm(8, c), _nn.Conv2d(c, cout, 3, 1, 1)

    def forward(self, x, t):
        te = self.t_mlp(_sincos(t, self.temb))
        h = self.inp(x)
        skips = []
        for i, (b1, b2) in enumerate(self.down):
            if i > 0:
                h = _F.avg_pool2d(h, 2)
            h = b2(b1(h, te), te)
            skips.append(h)
        h = self.mid(h, te)
        for i, (b1, b2) in enumerate(self.up):
            skip = skips[-1 - i]
            if h.shape[-1] != skip.shape[-1]:
                h = _F.interpolate(h, size=skip.shape[-2:], mode="nearest")
            h = b2(b1(torch.cat([h, skip.to(h.dtype)], 1), te), te)
        return self.out(_F.silu(self.norm(h))).float()


@_workload("course wind-field sampling (random init, a convolutional U-Net denoiser with DDIM and classifier-free guidance): 68-72 requests (drawn) of 4-16 wind fields (drawn) over the race area on a grid of 32 x 32, 48 x 48 or 64 x 64 cells (drawn per request), 2 channels (the wind's east and north components), conditioned on the readings of 4-16 wind stations (drawn per request) scattered on the grid (a reading and a mask channel, 3 channels, drawn on the device); a U-Net of three levels (64, 128, 192 channels) of two timestep-conditioned residual blocks each way (group norm, SiLU) and a middle block, average pooling and nearest upsampling, under bf16 autocast; deterministic DDIM over 12-30 of 1,000 linear-schedule timesteps (drawn per request), the conditioned and the unconditioned (readings zeroed) passes batched together with a guidance scale of 1.5-4 (drawn per request); then per field the mean wind direction and speed, the direction's range across the course (the shift range), the speed on the left third against the right third (the favoured side) and the fit to the stations' readings; each request's figures read back once")
def course_windfield_ddim_sample(rng):
    widths, temb = _smoke([64, 128, 192], [8, 16, 16]), _smoke(128, 16)
    model = _WindUNet(5, 2, widths, temb).cuda().eval()
    model.requires_grad_(False)
    n_t = 1000
    betas = torch.linspace(1e-4, 0.02, n_t, dtype=torch.float64)
    alpha_bar = torch.cumprod(1.0 - betas, 0).tolist()
    res_opts = _smoke([32, 48, 64], [8, 16])

    nreq = rng.randint(_smoke(68, 2), _smoke(72, 3))
    for _ in range(nreq):
        n, g = rng.randint(_smoke(4, 1), _smoke(16, 3)), rng.choice(res_opts)
        n_st, n_steps = rng.randint(4, 16), rng.randint(_smoke(12, 2), _smoke(30, 3))
        scale = rng.uniform(1.5, 4.0)
        seq = [int(i * (n_t - 1) / (n_steps - 1)) for i in range(n_steps)][::-1]
        with torch.no_grad():
            cell = torch.randint(0, g * g, (n, n_st), device="cuda")
            obs = torch.zeros(n, g * g, device="cuda").scatter_(1, cell, torch.ones(n, n_st, device="cuda"))
            reading = torch.randn(n, 2, g * g, device="cuda") * obs[:, None]
            cond = torch.cat([reading, obs[:, None]], 1).view(n, 3, g, g)
            cond2 = torch.cat([cond, torch.zeros_like(cond)])
            x = torch.randn(n, 2, g, g, device="cuda")
            for i, t in enumerate(seq):
                a_t = alpha_bar[t]
                a_prev = alpha_bar[seq[i + 1]] if i + 1 < len(seq) else 1.0
                tt = torch.full((2 * n,), float(t), device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    e2 = model(torch.cat([torch.cat([x, x]), cond2], 1), tt)
                ec, eu = e2.chunk(2)
                e = eu + scale * (ec - eu)
                x0 = ((x - math.sqrt(1.0 - a_t) * e) / math.sqrt(a_t)).clamp(-4.0, 4.0)
                x = math.sqrt(a_prev) * x0 + math.sqrt(1.0 - a_prev) * e
                del tt, e2, ec, eu, e, x0
            u, v = x[:, 0] * 3.0 + 2.0, x[:, 1] * 3.0 + 10.0
            spd = (u.pow(2) + v.pow(2)).sqrt()
            ang = torch.atan2(u, v)
            mean_dir = torch.atan2(u.mean((1, 2)), v.mean((1, 2)))
            rng_dir = ang.flatten(1).amax(-1) - ang.flatten(1).amin(-1)
            third = g // 3
            side = spd[:, :, :third].mean((1, 2)) - spd[:, :, -third:].mean((1, 2))
            fit = ((x.flatten(2) - reading).pow(2).sum(1) * obs).sum(-1) / obs.sum(-1)
            res = torch.cat([mean_dir, spd.mean((1, 2)), rng_dir, side, fit])
        res.tolist()
        del cell, obs, reading, cond, cond2, x, u, v, spd, ang, mean_dir, rng_dir, side, fit, res


# ---------------------------------------------------------------- sail shape (vision transformer)


class _SailViT(_nn.Module):
    """A patch embedding (a strided convolution), row and column position tables sized for the largest grid, a class
    token, pre-norm blocks; stripe heatmap logits per patch (upsampled by a linear to 4 x 4 sub-patches) and the
    frame's trim figures from the class token."""

    def __init__(self, patch, d, heads, layers, max_rows, max_cols, n_stripe, n_fig):
        super().__init__()
        self.patch, self.n_stripe = patch, n_stripe
        self.embed = _nn.Conv2d(3, d, patch, patch)
        self.row, self.col = _nn.Embedding(max_rows, d), _nn.Embedding(max_cols, d)
        self.cls = _nn.Parameter(torch.zeros(1, 1, d))
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.stripe = _nn.Linear(d, n_stripe * 16)
        self.fig = mlp(d, d, n_fig, act=_nn.GELU)

    def forward(self, x):
        n = x.shape[0]
        f = self.embed(x)
        gh, gw = f.shape[-2:]
        pos = (self.row(torch.arange(gh, device=x.device))[:, None] + self.col(torch.arange(gw, device=x.device))[None])
        z = f.flatten(2).transpose(1, 2) + pos.flatten(0, 1)[None]
        z = torch.cat([self.cls.expand(n, -1, -1).to(z.dtype), z], 1)
        for blk in self.blocks:
            z = blk(z)
        z = self.norm(z)
        heat = self.stripe(z[:, 1:]).view(n, gh, gw, self.n_stripe, 4, 4)
        heat = heat.permute(0, 3, 1, 4, 2, 5).reshape(n, self.n_stripe, gh * 4, gw * 4)
        return heat.float(), self.fig(z[:, 0]).float()


@_workload("sail shape serving (random init, a vision transformer over masthead camera frames of the mainsail and jib): 1,230-1,260 requests (drawn) of 2-12 frames (drawn) at 224 x 224, 256 x 320 or 320 x 384 px (drawn per request), uint8 RGB frames uploaded on a side stream from two reused pinned host buffers (filled once, sized for 12 x 3 x 320 x 384) one request ahead (one span, through SideUploads.ahead), normalised on the device; 16 px patches (196-480 of them) embedded by a strided convolution, row and column position tables of 20 and 24 rows (the largest grid), a class token, 6 pre-norm blocks (width 256, 8 heads), in eval mode under bf16 autocast; per patch the heatmaps of 3 draft stripes at 4 x 4 sub-patches, per frame 9 trim figures from the class token; each stripe's curve by soft-argmax down each column (a softmax over the rows), its chord from the first to the last column, its camber (the largest offset from the chord over the chord's length) and draft position (where that offset peaks, by a softmax-weighted mean), the twist from the stripes' chord angles (atan2), averaged over the frames with the frames' spread; each request's figures read back once")
def sail_shape_vit_serve(rng):
    patch, d, heads, layers = _smoke(16, 8), _smoke(256, 16), _smoke(8, 2), _smoke(6, 1)
    res_opts = _smoke([(224, 224), (256, 320), (320, 384)], [(16, 16), (24, 32)])
    max_h, max_w = max(h for h, _ in res_opts), max(w for _, w in res_opts)
    n_stripe, n_fig, max_n = 3, 9, _smoke(12, 3)
    model = _SailViT(patch, d, heads, layers, max_h // patch, max_w // patch, n_stripe, n_fig).cuda().eval()
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_n * 3 * max_h * max_w,), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1) * 255.0
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1) * 255.0

    nreq = rng.randint(_smoke(1230, 3), _smoke(1260, 4))
    plan = [(rng.randint(2, max_n), *rng.choice(res_opts)) for _ in range(nreq)]

    for (n, hh, ww), raw in up.ahead(plan, lambda p: (p[0] * 3 * p[1] * p[2],)):
        with torch.no_grad():
            x = (raw.view(n, 3, hh, ww).float() - mean) / std
            with torch.autocast("cuda", dtype=torch.bfloat16):
                heat, fig = model(x)
            rows = heat.shape[2]
            p = heat.softmax(2)
            ys = (p * torch.arange(rows, device="cuda").float()[None, None, :, None]).sum(2) / rows
            cols = ys.shape[-1]
            xs = torch.arange(cols, device="cuda").float() / cols
            y0, y1 = ys[..., :1], ys[..., -1:]
            chord_y = y0 + (y1 - y0) * xs
            off = ys - chord_y
            length = ((y1 - y0).pow(2) + (xs[-1] - xs[0]) ** 2).sqrt()[..., 0]
            camber = off.abs().amax(-1) / length
            wgt = (off.abs() * 20.0).softmax(-1)
            draft = (wgt * xs).sum(-1)
            angle = torch.atan2((y1 - y0)[..., 0], (xs[-1] - xs[0]).expand_as(length))
            twist = angle[:, -1] - angle[:, 0]
            per = torch.cat([camber, draft, twist[:, None], fig], -1)
            res = torch.cat([per.mean(0), per.std(0)])
        res.tolist()
        del raw, x, heat, fig, p, ys, xs, y0, y1, chord_y, off, length, camber, wgt, draft, angle, twist, per, res


# ---------------------------------------------------------------- leg tactics (encoder-decoder transformer)


class _TacticsNet(_nn.Module):
    """The forecast's steps as encoder tokens (a position table of the longest forecast) with a leg token in front,
    pre-norm encoder blocks under the key mask; the manoeuvre tokens (a position table of the longest sequence with
    its start token) through causal decoder blocks cross-attending to the forecast; the next token and the leg time."""

    def __init__(self, n_feat, vocab, d, heads, enc_layers, dec_layers, max_enc, max_dec, n_leg):
        super().__init__()
        self.feat = mlp(n_feat, d, d, act=_nn.GELU)
        self.epos, self.leg = _nn.Embedding(max_enc, d), _nn.Embedding(n_leg, d)
        self.enc = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(enc_layers))
        self.tok, self.dpos = _nn.Embedding(vocab, d), _nn.Embedding(max_dec, d)
        self.dec = _nn.ModuleList(CrossDecoderBlock(d, heads) for _ in range(dec_layers))
        self.norm, self.out = _nn.LayerNorm(d), _nn.Linear(d, vocab)
        self.time = mlp(d, d, 1, act=_nn.GELU)

    def forward(self, feat, ekeep, leg, toks):
        te = feat.shape[1]
        h = self.feat(feat) + self.epos(torch.arange(te, device=feat.device))[None]
        h = torch.cat([self.leg(leg)[:, None].to(h.dtype), h], 1)
        km = torch.cat([torch.ones_like(ekeep[:, :1]), ekeep], 1)
        for blk in self.enc:
            h = blk(h, km[:, None, None])
        td = toks.shape[1]
        y = self.tok(toks) + self.dpos(torch.arange(td, device=toks.device))[None]
        for blk in self.dec:
            y = blk(y, h, km[:, None, None])
        return self.out(self.norm(y)).float(), self.time(h[:, 0]).float()[:, 0]


@_workload("leg tactics training (random init, an encoder-decoder transformer from the leg's forecast to its manoeuvres): 48-160 legs a step (drawn), each a forecast of 12-48 steps (drawn per leg, padded to the step's longest under a key mask) of 10 features (the wind's direction and speed on the left, middle and right of the course, the current's two components, the mark's bearing and distance) with a leg-type token in front (of 4: beat, run, reach, the start) and a manoeuvre sequence of 8-40 tokens (drawn per leg, padded) from a 64-token vocabulary (tack, gybe, hold on each tack for a drawn duration bin, sail changes, mark roundings, the end), a start token in front; a 4-block pre-norm encoder and a 4-block decoder of causal self-attention and cross-attention to the forecast under its key mask (width 256, 8 heads, position tables of 48 and 41 rows), under bf16 autocast; the next token by cross-entropy ignoring the padding, the leg time from the leg token by smooth L1; AdamW on a cosine schedule with a warm-up, clipping, 230 steps; the losses read back every 20 steps and every 46 steps a no-grad pass over 128 legs of 48 forecast steps and 40 manoeuvres with the token accuracy read back")
def leg_tactics_seq2seq_train(rng):
    n_feat, vocab, n_leg = 10, 64, 4
    d, heads, n_enc, n_dec = _smoke(256, 16), _smoke(8, 2), _smoke(4, 1), _smoke(4, 1)
    e_lo, e_hi, m_lo, m_hi = _smoke(12, 4), _smoke(48, 8), _smoke(8, 3), _smoke(40, 6)
    model = _TacticsNet(n_feat, vocab, d, heads, n_enc, n_dec, e_hi, m_hi + 1, n_leg).cuda()
    steps, every = _smoke(230, 3), _smoke(46, 2)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.05)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / 20) * 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    pad, bos = 0, 1

    def legs(elens, mlens):
        b, te, tm = len(elens), max(elens), max(mlens)
        ekeep = keep_mask(elens, te)
        feat = torch.randn(b, te, n_feat, device="cuda") * ekeep[..., None].float()
        leg = torch.randint(0, n_leg, (b,), device="cuda")
        mkeep = keep_mask(mlens, tm)
        seq = torch.randint(2, vocab, (b, tm), device="cuda").masked_fill(~mkeep, pad)
        inp = torch.cat([torch.full((b, 1), bos, device="cuda", dtype=torch.long), seq[:, :-1]], 1)
        leg_time = torch.rand(b, device="cuda") * 3.0 + 0.5
        return feat, ekeep, leg, inp, seq, leg_time

    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(48, 2), _smoke(160, 3))
        elens = [rng.randint(e_lo, e_hi) for _ in range(b)]
        mlens = [rng.randint(m_lo, m_hi) for _ in range(b)]
        feat, ekeep, leg, inp, seq, leg_time = legs(elens, mlens)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits, tpred = model(feat, ekeep, leg, inp)
        l_tok = _F.cross_entropy(logits.flatten(0, 1), seq.flatten(), ignore_index=pad)
        l_time = _F.smooth_l1_loss(tpred, leg_time)
        loss = l_tok + l_time
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            torch.stack([l_tok.detach(), l_time.detach()]).tolist()
        del feat, ekeep, leg, inp, seq, leg_time, logits, tpred, l_tok, l_time, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                nb = _smoke(128, 2)
                feat, ekeep, leg, inp, seq, leg_time = legs([e_hi] * nb, [m_hi] * nb)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits, tpred = model(feat, ekeep, leg, inp)
                acc = (logits.argmax(-1) == seq).float().mean()
            acc.item()
            del feat, ekeep, leg, inp, seq, leg_time, logits, tpred, acc

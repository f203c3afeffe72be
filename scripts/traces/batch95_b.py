"""The ninety-fifth batch of held-out workloads for record.py, second half (see batch95.py): public health and
epidemiology, written in torch alone. Incidence-map diffusion training (a conditional denoising U-Net over gridded
weekly incidence maps of drawn sizes, conditioned on the previous weeks, population density and climate, with
classifier-free guidance and a few-step DDIM sampling evaluation), a malaria blood-smear detection service (a
CenterNet-style encoder-decoder convnet over microscope fields of drawn resolutions, heat-map peaks decoded by max
pooling and top-k, per-class cell counts and parasitaemia), a syndromic-surveillance service (a transformer classifier
over emergency-department chief complaints of drawn lengths, syndrome counts per county kept on the device and
EARS-C2 aberration flags at each day's end) and metapopulation SEIR calibration training (a network mapping patch
covariates to daily transmission rates, a differentiable SEIR model over drawn numbers of patches coupled by
commuting matrices, rolled out day by day and fitted to weekly reported cases through the whole rollout).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or masked_fill;
no boolean-mask indexing; results read back only at logging points or once per request (and once per simulated day
for the surveillance service's flags). malaria_smear_detect_serve uploads its fields on a side stream (two reused
pinned host buffers, one request ahead, the main stream waiting on an event, the tensors record_stream'ed, through
workload_helpers.SideUploads); the other three are single-stream. The networks run under bf16 autocast (the SEIR
dynamics in fp32). Every table is sized for the largest index that can be drawn.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, TimeResBlock, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- incidence-map diffusion (conditional U-Net)


class _IncidenceUNet(_nn.Module):
    """A DDPM U-Net: two timestep residual blocks a level, stride-2 convolutions down, a transformer block over the
    lowest level's cells, skips concatenated on the way up with nearest upsampling and a 3x3 convolution."""

    def __init__(self, c_x, c_cond, widths, temb):
        super().__init__()
        self.w0 = widths[0]
        self.temb = mlp(widths[0], temb, temb, act=_nn.SiLU)
        self.inp = _nn.Conv2d(c_x + c_cond, widths[0], 3, 1, 1)
        self.down = _nn.ModuleList()
        c = widths[0]
        for w in widths:
            self.down.append(_nn.ModuleList([TimeResBlock(c, w, temb), TimeResBlock(w, w, temb)]))
            c = w
        self.pool = _nn.ModuleList(_nn.Conv2d(w, w, 3, 2, 1) for w in widths[:-1])
        self.mid1, self.mid2 = TimeResBlock(c, c, temb), TimeResBlock(c, c, temb)
        self.attn = PreNormBlock(c, 4)
        self.up = _nn.ModuleList(TimeResBlock(2 * w, w, temb) for w in widths)
        self.lift = _nn.ModuleList(_nn.Conv2d(b, a, 3, 1, 1) for a, b in zip(widths[:-1], widths[1:]))
        self.out = _nn.Sequential(_nn.GroupNorm(8, widths[0]), _nn.SiLU(), _nn.Conv2d(widths[0], c_x, 3, 1, 1))

    def forward(self, x, cond, t):
        te = self.temb(_b.rec._sincos(t, self.w0))
        h, skips = self.inp(torch.cat([x, cond], 1)), []
        for i, (r1, r2) in enumerate(self.down):
            h = r2(r1(h, te), te)
            skips.append(h)
            if i < len(self.pool):
                h = self.pool[i](h)
        h = self.mid1(h, te)
        b, c, hh, ww = h.shape
        h = self.attn(h.flatten(2).transpose(1, 2)).transpose(1, 2).reshape(b, c, hh, ww)
        h = self.mid2(h, te)
        for i in reversed(range(len(self.up))):
            h = self.up[i](torch.cat([h, skips[i]], 1), te)
            if i > 0:
                h = self.lift[i - 1](_F.interpolate(h, scale_factor=2, mode="nearest"))
        return self.out(h).float()


@_workload("incidence-map diffusion training (random init, a conditional DDPM U-Net over gridded weekly incidence): 8-32 maps a step (drawn) on grids of 32-96 cells a side (drawn per step, a multiple of 16), 4 target weeks of log-incidence and 7 conditioning channels (the 4 previous weeks, population density, rainfall, temperature) drawn on the device, the conditioning zeroed for 10% of the maps (classifier-free guidance); a channels-last U-Net of widths 64/128/192 with two timestep residual blocks a level (GroupNorm, SiLU), stride-2 convolutions down, a pre-norm transformer block (4 heads) over the lowest level's cells between two more residual blocks, one residual block a level on the way up over the concatenated skip, nearest upsampling and a 3x3 convolution; 1,000-step cosine noise schedule, timesteps drawn on the device, noise-prediction MSE; AdamW, clipping, bf16 autocast, 305 steps; the loss read back every 20 steps and every 61 steps a no-grad 10-step DDIM sample of 4 maps of 64 cells with guidance scale 2 (conditioned and unconditioned passes batched together) and the per-map mean incidence read back")
def incidence_map_diffusion_train(rng):
    c_x, c_cond = 4, 7
    widths, temb = _smoke([64, 128, 192], [16, 16, 32]), _smoke(256, 32)
    model = _IncidenceUNet(c_x, c_cond, widths, temb).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.01)
    n_t = 1000
    s = torch.arange(n_t + 1, device="cuda").float() / n_t
    f = torch.cos((s + 0.008) / 1.008 * math.pi / 2) ** 2
    abar = (f[1:] / f[0]).clamp(1e-5, 0.9999)
    mult = _smoke(16, 8)

    def maps(b, n):
        x = torch.randn(b, c_x, n, n, device="cuda").contiguous(memory_format=torch.channels_last)
        cond = torch.randn(b, c_cond, n, n, device="cuda")
        drop = (torch.rand(b, 1, 1, 1, device="cuda") > 0.1).float()
        return x, (cond * drop).contiguous(memory_format=torch.channels_last)

    steps = _smoke(305, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(8, 2), _smoke(32, 3))
        n = rng.randint(_smoke(32, 16) // mult, _smoke(96, 32) // mult) * mult
        x0, cond = maps(b, n)
        t = torch.randint(0, n_t, (b,), device="cuda")
        a = abar.index_select(0, t)[:, None, None, None]
        eps = torch.randn_like(x0)
        xt = a.sqrt() * x0 + (1 - a).sqrt() * eps
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(xt, cond, t)
        loss = _F.mse_loss(pred, eps)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.detach().item()
        del x0, cond, t, a, eps, xt, pred, loss
        if (step + 1) % _smoke(61, 2) == 0:
            model.eval()
            with torch.no_grad():
                k, n = _smoke(4, 2), _smoke(64, 16)
                _, cond = maps(k, n)
                cond2 = torch.cat([cond, torch.zeros_like(cond)])
                x = torch.randn(k, c_x, n, n, device="cuda")
                ts = [int(n_t - 1 - i * (n_t // _smoke(10, 2))) for i in range(_smoke(10, 2))]
                for j, tt in enumerate(ts):
                    a = abar[tt]
                    a_prev = abar[ts[j + 1]] if j + 1 < len(ts) else torch.ones((), device="cuda")
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        e_c, e_u = model(torch.cat([x, x]), cond2, torch.full((2 * k,), tt, device="cuda")).chunk(2)
                    e = e_u + 2.0 * (e_c - e_u)
                    x0 = (x - (1 - a).sqrt() * e) / a.sqrt()
                    x = a_prev.sqrt() * x0 + (1 - a_prev).sqrt() * e
                mean = x.mean((1, 2, 3))
            mean.tolist()
            del cond, cond2, x, a, a_prev, e_c, e_u, e, x0, mean


# ---------------------------------------------------------------- malaria blood-smear detection service (CenterNet)


def _conv_bn(cin, cout, stride=1):
    return _nn.Sequential(_nn.Conv2d(cin, cout, 3, stride, 1, bias=False), _nn.BatchNorm2d(cout), _nn.ReLU())


class _SmearCenterNet(_nn.Module):
    """A stride-2 encoder of four stages (1/2 .. 1/16), a top-down decoder with 1x1 lateral connections back to 1/4
    resolution, and CenterNet heads: per-class centre heat-maps, box sizes and sub-cell offsets."""

    def __init__(self, widths, n_cls):
        super().__init__()
        self.stages = _nn.ModuleList()
        c = 3
        for w in widths:
            self.stages.append(_nn.Sequential(_conv_bn(c, w, 2), _conv_bn(w, w)))
            c = w
        d = widths[1]
        self.lat = _nn.ModuleList(_nn.Conv2d(w, d, 1) for w in widths[1:])
        self.smooth = _nn.ModuleList(_conv_bn(d, d) for _ in widths[2:])
        self.heat = _nn.Sequential(_conv_bn(d, d), _nn.Conv2d(d, n_cls, 1))
        self.box = _nn.Sequential(_conv_bn(d, d), _nn.Conv2d(d, 4, 1))

    def forward(self, x):
        feats = []
        for st in self.stages:
            x = st(x)
            feats.append(x)
        y = self.lat[-1](feats[-1])
        for i in range(len(self.lat) - 2, -1, -1):
            y = self.smooth[i](_F.interpolate(y, scale_factor=2, mode="nearest") + self.lat[i](feats[i + 1]))
        return torch.sigmoid(self.heat(y).float()), self.box(y).float()


@_workload("malaria blood-smear detection serving (random init, a CenterNet-style convnet over thin-smear microscope fields): 2,950-3,050 requests (drawn) of 1-6 fields each (drawn) from one of 24 microscopes (drawn), each microscope's camera field one of 512 x 512, 640 x 640 and 768 x 768 px (fixed per microscope, drawn once); uint8 RGB pixels uploaded on a side stream from two reused pinned host buffers (filled once, sized for 6 fields of 768 x 768) one request ahead (one span, waited on by event, record_stream'ed), normalised on the device; a channels-last encoder of four stride-2 stages (32/64/128/256 channels, two 3x3 convolutions each) and a top-down decoder with 1x1 laterals to 1/4 resolution (64 channels) under bf16 autocast; heat-maps of 3 classes (uninfected red cell, infected red cell, white cell), box sizes and offsets; peaks kept where the heat-map equals its 3x3 max-pool (torch.where), the top 300 peaks per field by topk, their boxes gathered, per-class counts above 0.3 by scatter_add and the parasitaemia (infected over all red cells); each request's counts, parasitaemia and top-300 boxes read back")
def malaria_smear_detect_serve(rng):
    widths, n_cls = _smoke([32, 64, 128, 256], [8, 8, 16, 16]), 3
    model = _SmearCenterNet(widths, n_cls).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    sizes = _smoke([512, 640, 768], [64, 96])
    n_scope, max_fields, k = _smoke(24, 3), _smoke(6, 2), _smoke(300, 20)
    scope_res = [rng.choice(sizes) for _ in range(n_scope)]
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_fields * 3 * max(sizes) ** 2,), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    mean = torch.tensor([0.75, 0.55, 0.65], device="cuda").view(1, 3, 1, 1) * 255
    std = torch.tensor([0.15, 0.2, 0.15], device="cuda").view(1, 3, 1, 1) * 255
    nreq = rng.randint(_smoke(2950, 3), _smoke(3050, 4))
    plan = []
    for _ in range(nreq):
        scope = rng.randrange(n_scope)
        plan.append((rng.randint(1, max_fields), scope_res[scope]))

    def span(p):
        return p[0] * 3 * p[1] * p[1]

    nxt = up.upload(0, span(plan[0]))
    for i in range(nreq):
        f, res = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, span(plan[i + 1]))
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            x = raw.view(f, 3, res, res).float().sub_(mean).div_(std).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                heat, box = model(x)
            hw = heat.shape[2] * heat.shape[3]
            peaks = torch.where(_F.max_pool2d(heat, 3, 1, 1) == heat, heat, 0.0)
            score, idx = peaks.flatten(1).topk(k, 1)
            cls, cell = idx // hw, idx % hw
            boxes = box.flatten(2).gather(2, cell[:, None].expand(f, 4, k))
            counts = torch.zeros(f, n_cls, device="cuda").scatter_add_(1, cls, (score > 0.3).float())
            para = counts[:, 1] / (counts[:, 0] + counts[:, 1]).clamp(min=1)
            out = torch.cat([counts.flatten(), para, score.flatten(), cls.float().flatten(), cell.float().flatten(),
                             boxes.flatten()])
        out.tolist()
        del item, raw, x, heat, box, peaks, score, idx, cls, cell, boxes, counts, para, out


# ---------------------------------------------------------------- syndromic surveillance service (transformer)


class _ComplaintClassifier(_nn.Module):
    """Token and position embeddings plus age-band and sex embeddings, pre-norm blocks under a key mask, masked mean
    pooling, syndrome logits."""

    def __init__(self, vocab, d, heads, layers, max_pos, n_syn):
        super().__init__()
        self.tok, self.pos = _nn.Embedding(vocab, d), _nn.Embedding(max_pos, d)
        self.age, self.sex = _nn.Embedding(10, d), _nn.Embedding(3, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm, self.head = _nn.LayerNorm(d), _nn.Linear(d, n_syn)

    def forward(self, ids, keep, age, sex):
        t = ids.shape[1]
        x = self.tok(ids) + self.pos(torch.arange(t, device=ids.device))[None]
        x = x + (self.age(age) + self.sex(sex))[:, None]
        key = keep[:, None, None, :]
        for blk in self.blocks:
            x = blk(x, mask=key)
        w = keep[..., None].to(x.dtype)
        return self.head((self.norm(x) * w).sum(1) / w.sum(1).clamp(min=1)).float()


@_workload("syndromic surveillance serving (random init, a transformer classifier over emergency-department chief complaints): 1,800-1,860 requests (drawn) of 64-512 visits each (drawn), each chief complaint of 4-48 tokens (drawn per visit over a 16,000-token vocabulary, padded to the request's longest rounded up to a multiple of 8, position table of 48 rows) with an age band (10), sex (3) and county (of 300); 4 pre-norm blocks (width 256, 4 heads) under a key mask, masked mean pooling, 12 syndromes, under bf16 autocast; each request's argmax syndromes counted into a county x syndrome table kept on the device by index_add and the request's syndrome counts read back; a simulated day ends every 40-80 requests (drawn), its table copied into a 28-day ring buffer by index_copy and, from the tenth day, EARS-C2 z-scores against the mean and deviation of days t-9 to t-3 (index_select of host-made slots), flags by torch.where, the flag count per syndrome and the 10 largest z-scores read back, then the table zeroed")
def syndromic_surveillance_serve(rng):
    vocab, d, heads, layers = _smoke(16000, 300), _smoke(256, 32), _smoke(4, 2), _smoke(4, 1)
    max_tok, n_syn, n_county, ring = _smoke(48, 16), 12, _smoke(300, 20), 28
    model = _ComplaintClassifier(vocab, d, heads, layers, max_tok, n_syn).cuda().eval()
    model.requires_grad_(False)
    today = torch.zeros(n_county * n_syn, device="cuda")
    history = torch.zeros(ring, n_county * n_syn, device="cuda")
    nreq = rng.randint(_smoke(1800, 6), _smoke(1860, 8))
    day, left = 0, rng.randint(_smoke(40, 2), _smoke(80, 3))
    for _ in range(nreq):
        lengths = [rng.randint(_smoke(4, 2), max_tok) for _ in range(rng.randint(_smoke(64, 2), _smoke(512, 6)))]
        b, t = len(lengths), -(-max(lengths) // 8) * 8
        with torch.no_grad():
            keep = keep_mask(lengths, t)
            ids = torch.randint(2, vocab, (b, t), device="cuda").masked_fill(~keep, 0)
            age, sex = torch.randint(0, 10, (b,), device="cuda"), torch.randint(0, 3, (b,), device="cuda")
            county = torch.randint(0, n_county, (b,), device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                syn = model(ids, keep, age, sex).argmax(-1)
            ones = torch.ones(b, device="cuda")
            today.index_add_(0, county * n_syn + syn, ones)
            per_req = torch.zeros(n_syn, device="cuda").index_add_(0, syn, ones)
        per_req.tolist()
        del keep, ids, age, sex, county, syn, ones, per_req
        left -= 1
        if left == 0:
            with torch.no_grad():
                history.index_copy_(0, torch.tensor([day % ring], device="cuda"), today[None])
                if day >= _smoke(9, 1):
                    slots = torch.tensor([(day - j) % ring for j in range(3, 10)], device="cuda")
                    base = history.index_select(0, slots)
                    z = (today - base.mean(0)) / base.std(0).clamp(min=0.5)
                    flags = torch.where(z > 3, 1.0, 0.0).view(n_county, n_syn).sum(0)
                    out = torch.cat([flags, z.topk(10).values])
                    out.tolist()
                    del slots, base, z, flags, out
                today.zero_()
            day, left = day + 1, rng.randint(_smoke(40, 2), _smoke(80, 3))


# ---------------------------------------------------------------- metapopulation SEIR calibration (differentiable)


class _TransmissionNet(_nn.Module):
    """Daily transmission rates from patch covariates, the day's seasonal features and a patch embedding (softplus),
    a per-patch ascertainment rate (sigmoid) and a per-patch initial exposed fraction."""

    def __init__(self, n_cov, n_patch, d):
        super().__init__()
        self.patch = _nn.Embedding(n_patch, 16)
        self.net = mlp(n_cov + 2 + 16, d, 1, layers=3, act=_nn.GELU, norm=True)
        self.asc = _nn.Embedding(n_patch, 1)
        self.seed = _nn.Embedding(n_patch, 1)

    def forward(self, cov, season, patches):
        s, days, p, _ = cov.shape
        e = self.patch(patches)[None, None].expand(s, days, p, 16)
        z = torch.cat([cov, season[None, :, None].expand(s, days, p, 2), e], -1)
        beta = _F.softplus(self.net(z)[..., 0].float()) * 0.3
        return beta, torch.sigmoid(self.asc(patches)[:, 0] - 1.5), torch.sigmoid(self.seed(patches)[:, 0] - 7)


def _seir_rollout(beta, mob, pop, seed, sigma=1 / 3, gamma=1 / 5):
    """A deterministic metapopulation SEIR model day by day (fractions per patch): the force of infection in patch i
    is its rate times the commuting-weighted infectious share of the patches its residents visit. Returns the daily
    new infectious counts (S, days, P)."""
    s_, e_, i_ = 1 - seed, seed, torch.zeros_like(seed)
    new = []
    for day in range(beta.shape[1]):
        lam = beta[:, day] * torch.bmm(mob, i_[..., None])[..., 0]
        inf = s_ * (1 - torch.exp(-lam))
        onset = sigma * e_
        s_, e_, i_ = s_ - inf, e_ + inf - onset, i_ + onset - gamma * i_
        new.append(onset * pop)
    return torch.stack(new, 1)


@_workload("metapopulation SEIR calibration training (random init, a transmission-rate network inside a differentiable SEIR model): 4-16 scenarios a step (drawn) over 50-400 patches (drawn per step, a random subset of 400 sampled on the host) and 28-70 days (drawn per step, a multiple of 7); 8 daily covariates per patch (mobility index, school term, temperature, humidity and others) drawn on the device, a row-stochastic commuting matrix per scenario (softmax of drawn logits with the home patch boosted) and patch populations; a 3-layer MLP (width 128, LayerNorm, GELU, a patch embedding of 16) under bf16 autocast maps covariates and seasonal features to daily transmission rates (softplus), with per-patch ascertainment and initial exposed fractions; an fp32 SEIR model rolled out day by day (force of infection by a batched matmul with the commuting matrix), weekly reported cases summed from the daily onsets times ascertainment, Poisson negative log-likelihood against drawn weekly counts, backpropagated through the whole rollout; Adam, clipping, 150 steps; the loss read back every 10 steps and every 30 steps a no-grad 112-day projection of 4 scenarios over all 400 patches with each scenario's peak week (argmax) and total cases read back")
def metapop_seir_calibrate_train(rng):
    n_cov, n_patch, d = 8, _smoke(400, 24), _smoke(128, 16)
    model = _TransmissionNet(n_cov, n_patch, d).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)

    def scenarios(s, patches, days):
        p = len(patches)
        idx = torch.tensor(patches, device="cuda")
        cov = torch.randn(s, days, p, n_cov, device="cuda")
        doy = (torch.randint(0, 365, (1,), device="cuda") + torch.arange(days, device="cuda")).float()
        season = torch.stack([torch.sin(doy * (6.2832 / 365)), torch.cos(doy * (6.2832 / 365))], -1)
        mob = torch.softmax(torch.randn(s, p, p, device="cuda") + 4 * torch.eye(p, device="cuda"), -1)
        pop = torch.exp(torch.randn(s, p, device="cuda") + 11)
        return idx, cov, season, mob, pop

    steps = _smoke(150, 3)
    for step in range(steps):
        model.train()
        s, p = rng.randint(_smoke(4, 2), _smoke(16, 3)), rng.randint(_smoke(50, 6), n_patch)
        days = rng.randint(_smoke(4, 2), _smoke(10, 3)) * 7
        idx, cov, season, mob, pop = scenarios(s, sorted(rng.sample(range(n_patch), p)), days)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            beta, asc, seed = model(cov, season, idx)
        daily = _seir_rollout(beta.float(), mob, pop, seed.float().expand(s, p))
        weekly = (daily * asc.float()).view(s, days // 7, 7, p).sum(2)
        obs = torch.floor(torch.rand_like(weekly) * 200)
        loss = _F.poisson_nll_loss(weekly + 1e-3, obs, log_input=False)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            loss.detach().item()
        del idx, cov, season, mob, pop, beta, asc, seed, daily, weekly, obs, loss
        if (step + 1) % _smoke(30, 2) == 0:
            model.eval()
            with torch.no_grad():
                s, days = _smoke(4, 2), _smoke(112, 14)
                idx, cov, season, mob, pop = scenarios(s, list(range(n_patch)), days)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    beta, asc, seed = model(cov, season, idx)
                daily = _seir_rollout(beta.float(), mob, pop, seed.float().expand(s, n_patch))
                weekly = (daily * asc.float()).view(s, days // 7, 7, n_patch).sum((2, 3))
                out = torch.cat([weekly.argmax(1).float(), weekly.sum(1)])
            out.tolist()
            del idx, cov, season, mob, pop, beta, asc, seed, daily, weekly, out

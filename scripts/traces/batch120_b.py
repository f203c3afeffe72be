"""The hundred-and-twentieth batch of held-out workloads for record.py, second half (see batch120.py): performing arts,
concerts and live events, written in torch alone. A live-mix stem separation service (a Conv-TasNet-style separator:
a learned strided 1-d convolution encoder, stacks of dilated depthwise-separable convolution blocks, four sigmoid
stem masks and a transposed-convolution decoder over mixing-desk bus audio of drawn lengths, per-stem loudness, peaks
and gain suggestions), setlist recommendation training (a causal transformer over artists' past setlists of drawn
lengths, a large song table, a sampled softmax over shared drawn negatives), venue crowd-flow training (message
passing over venue zone graphs of drawn sizes with a fixed number of drawn neighbours per zone, aggregation by
index_add, zone occupancy forecasts, corridor flows and venue egress times) and a choreography diffusion sampler (a
transformer denoiser over multi-dancer motion sequences conditioned on music features and a dance style,
classifier-free guidance in one doubled batch, DDIM with drawn dancer counts, lengths, step counts and guidance scales
per request).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the separation service), `rng` the workload's random.Random for every shape, count and sampled
choice, sizes through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or
masked_fill; no boolean-mask indexing; results read back only at logging points or once per request.
live_mix_stem_separation_serve uploads its audio on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, _sincos, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- live-mix stem separation service (Conv-TasNet)


class _SepBlock(_nn.Module):
    """A 1x1 convolution up, PReLU and global layer norm, a dilated depthwise convolution, PReLU and norm, a 1x1
    convolution back, added to the input."""

    def __init__(self, c, hid, dil):
        super().__init__()
        self.up, self.down = _nn.Conv1d(c, hid, 1), _nn.Conv1d(hid, c, 1)
        self.dw = _nn.Conv1d(hid, hid, 3, 1, dil, dilation=dil, groups=hid)
        self.a1, self.a2 = _nn.PReLU(), _nn.PReLU()
        self.n1, self.n2 = _nn.GroupNorm(1, hid), _nn.GroupNorm(1, hid)

    def forward(self, x):
        h = self.n1(self.a1(self.up(x)))
        h = self.n2(self.a2(self.dw(h)))
        return x + self.down(h)


class _TasNet(_nn.Module):
    """A strided 1-d convolution encoder, a bottleneck, repeats of dilated blocks, sigmoid masks per stem over the
    encoder's features and a transposed-convolution decoder per stem."""

    def __init__(self, n_filt, kernel, c, hid, n_block, n_rep, n_stem):
        super().__init__()
        self.enc = _nn.Conv1d(1, n_filt, kernel, kernel // 2, bias=False)
        self.norm, self.bott = _nn.GroupNorm(1, n_filt), _nn.Conv1d(n_filt, c, 1)
        self.blocks = _nn.Sequential(*[_SepBlock(c, hid, 2 ** i) for _ in range(n_rep) for i in range(n_block)])
        self.mask = _nn.Conv1d(c, n_stem * n_filt, 1)
        self.dec = _nn.ConvTranspose1d(n_filt, 1, kernel, kernel // 2, bias=False)
        self.s, self.f = n_stem, n_filt

    def forward(self, wav):
        n, _, length = wav.shape
        e = _F.relu(self.enc(wav))
        m = torch.sigmoid(self.mask(self.blocks(self.bott(self.norm(e)))))
        src = (m.view(n, self.s, self.f, -1) * e[:, None]).flatten(0, 1)
        return self.dec(src).float().view(n, self.s, -1)[..., :length]


@_workload("live-mix stem separation serving (random init, a Conv-TasNet-style separator): 1,750-1,800 requests (drawn) of 1-4 mixing-desk buses (drawn) of 1-4 s of 16 kHz audio (drawn per request in quarter seconds), 16-bit PCM uploaded on a side stream from two reused pinned host buffers (filled once, sized for 4 x 4 s) one request ahead (one span, through SideUploads.ahead), scaled on the device; a strided 1-d convolution encoder (256 filters of 16 samples, stride 8), a group-norm bottleneck to 128, 2 repeats of 6 dilated blocks (1x1 to 256, PReLU, global norm, dilated depthwise convolution of dilations 1-32, 1x1 back), sigmoid masks for 4 stems (vocals, drums, bass, other) and a transposed-convolution decoder, under bf16 autocast; per bus and stem the RMS level in dB, the peak, the share of the mix's energy and a gain suggestion toward a drawn target level (-23 to -14 dB) clamped to +-12 dB by torch.clamp, and the residual between the mix and the stems' sum; each request's results read back once")
def live_mix_stem_separation_serve(rng):
    n_filt, kernel, c, hid = _smoke(256, 16), 16, _smoke(128, 16), _smoke(256, 16)
    n_block, n_rep, n_stem = _smoke(6, 2), _smoke(2, 1), 4
    sr, max_b, max_q = _smoke(16000, 800), _smoke(4, 2), _smoke(16, 4)
    model = _TasNet(n_filt, kernel, c, hid, n_block, n_rep, n_stem).cuda().eval()
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    q = sr // 4
    host = [torch.randint(-8000, 8000, (max_b * max_q * q,), dtype=torch.int16, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)

    nreq = rng.randint(_smoke(1750, 3), _smoke(1800, 4))
    plan = [(rng.randint(1, max_b), rng.randint(_smoke(4, 1), max_q), rng.uniform(-23.0, -14.0)) for _ in range(nreq)]

    for (n, nq, target), raw in up.ahead(plan, lambda p: (p[0] * p[1] * q,)):
        with torch.no_grad():
            wav = raw.view(n, 1, nq * q).float() / 32768.0
            with torch.autocast("cuda", dtype=torch.bfloat16):
                stems = model(wav)
            energy = stems.pow(2).mean(-1)
            rms_db = 10 * torch.log10(energy.clamp_min(1e-10))
            peak = stems.abs().amax(-1)
            share = energy / wav.pow(2).mean(-1).clamp_min(1e-10)
            gain = torch.clamp(target - rms_db, -12.0, 12.0)
            resid = (wav[:, 0] - stems.sum(1)).pow(2).mean(-1)
            out = torch.cat([rms_db.flatten(), peak.flatten(), share.flatten(), gain.flatten(), resid])
        out.tolist()
        del raw, wav, stems, energy, rms_db, peak, share, gain, resid, out


# ---------------------------------------------------------------- setlist recommendation (causal transformer)


class _SetlistNet(_nn.Module):
    """Song tokens (a song table), a position table, the show's context (tour leg, venue size, weekday) as a prefix
    token; causal pre-norm blocks under the pad mask; the next song's score against song embeddings (tied table)."""

    def __init__(self, n_song, d, heads, layers, max_len, n_leg, n_size):
        super().__init__()
        self.song, self.pos = _nn.Embedding(n_song, d), _nn.Embedding(max_len + 1, d)
        self.leg, self.size, self.day = _nn.Embedding(n_leg, d), _nn.Embedding(n_size, d), _nn.Embedding(7, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)

    def forward(self, ids, leg, size, day, keep):
        b, t = ids.shape
        dev = ids.device
        ctx = (self.leg(leg) + self.size(size) + self.day(day))[:, None]
        x = torch.cat([ctx, self.song(ids)], 1) + self.pos(torch.arange(t + 1, device=dev))[None]
        k = torch.cat([torch.ones(b, 1, dtype=torch.bool, device=dev), keep], 1)
        causal = torch.ones(t + 1, t + 1, dtype=torch.bool, device=dev).tril()
        mask = causal[None, None] & k[:, None, None, :]
        for blk in self.blocks:
            x = blk(x, mask=mask)
        return self.norm(x[:, :-1])


@_workload("setlist recommendation training (random init, a causal transformer with a sampled softmax): 128-384 past setlists a step (drawn) of 8-48 songs each (drawn per setlist, padded to the step's longest rounded up to a multiple of 8, a 49-row position table with the context token) from a catalogue of 50,000 songs drawn on the device, the show's tour leg (of 40), venue size class (of 6) and weekday as a prefix token; 4 causal pre-norm blocks (width 256, 8 heads) under the causal and pad mask; the next song scored against the tied song table over the true song and 1,024 negatives shared by the step (drawn uniformly) by a cross-entropy masked to real positions; AdamW with a warm-up, clipping, bf16 autocast, 600 steps; the loss read back every 25 steps and every 120 steps a no-grad pass over 256 setlists of 48 songs with recall at 10 against the full catalogue (top-k over all 50,000 scores) read back")
def setlist_sequence_recommend_train(rng):
    n_song, n_leg, n_size, n_neg = _smoke(50000, 300), 40, 6, _smoke(1024, 32)
    d, heads, layers, max_len = _smoke(256, 32), _smoke(8, 2), _smoke(4, 1), _smoke(48, 8)
    model = _SetlistNet(n_song, d, heads, layers, max_len, n_leg, n_size).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 40))

    def setlists(lengths, t):
        b = len(lengths)
        keep = keep_mask(lengths, t)
        ids = torch.randint(0, n_song, (b, t + 1), device="cuda")
        ctx = [torch.randint(0, m, (b,), device="cuda") for m in (n_leg, n_size, 7)]
        return ids, keep, ctx

    steps = _smoke(600, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(128, 2), _smoke(384, 4))
        lengths = [rng.randint(_smoke(8, 2), max_len) for _ in range(b)]
        t = min(max_len, -(-max(lengths) // 8) * 8)
        ids, keep, (leg, size, day) = setlists(lengths, t)
        neg = torch.randint(0, n_song, (n_neg,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = model(ids[:, :-1], leg, size, day, keep)
            tgt = ids[:, :t]
            pos = (h * model.song(tgt)).sum(-1, keepdim=True)
            negs = h @ model.song(neg).t()
        logits = torch.cat([pos, negs], -1).float()
        ce = _F.cross_entropy(logits.flatten(0, 1), torch.zeros(b * t, dtype=torch.long, device="cuda"),
                              reduction="none").view(b, t)
        w = keep.float()
        loss = (ce * w).sum() / w.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 25 == 0:
            loss.detach().item()
        del ids, keep, leg, size, day, neg, h, tgt, pos, negs, logits, ce, w, loss
        if (step + 1) % _smoke(120, 2) == 0:
            model.eval()
            with torch.no_grad():
                nb = _smoke(256, 3)
                ids, keep, (leg, size, day) = setlists([max_len] * nb, max_len)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    h = model(ids[:, :-1], leg, size, day, keep)
                    scores = h[:, -1] @ model.song.weight.t()
                top = scores.float().topk(10, -1).indices
                out = (top == ids[:, max_len - 1:max_len]).any(-1).float().mean()
            out.item()
            del ids, keep, leg, size, day, h, scores, top, out


# ---------------------------------------------------------------- venue crowd flow (message passing)


class _FlowGNN(_nn.Module):
    """Zone features (an MLP over the past intervals' counts, a zone-type embedding, static features), message
    passing over the drawn neighbour edges (an edge MLP over both ends and the edge's features, index_add into the
    receiving zone in the messages' dtype), a gated update; zone occupancy forecasts, edge flows and venue egress
    times from index_add pooling."""

    def __init__(self, hist, n_type, n_static, n_edge, d, layers, ahead):
        super().__init__()
        self.inp = mlp(hist, d, d, act=_nn.SiLU)
        self.zone_type, self.static = _nn.Embedding(n_type, d), _nn.Linear(n_static, d)
        self.edge_in = _nn.Linear(n_edge, d)
        self.msg = _nn.ModuleList(mlp(3 * d, d, d, act=_nn.SiLU) for _ in range(layers))
        self.upd = _nn.ModuleList(_nn.Linear(2 * d, 2 * d) for _ in range(layers))
        self.norm = _nn.ModuleList(_nn.LayerNorm(d) for _ in range(layers))
        self.occ = mlp(d, d, ahead, act=_nn.SiLU)
        self.flow = mlp(3 * d, d, 1, act=_nn.SiLU)
        self.egress = mlp(d, d, 1, act=_nn.SiLU)

    def forward(self, hist, kind, static, src, dst, efeat, venue, n_venue, sizes):
        n = hist.shape[0]
        h = self.inp(hist) + self.zone_type(kind) + self.static(static)
        e = self.edge_in(efeat)
        for msg, upd, norm in zip(self.msg, self.upd, self.norm):
            z = norm(h)
            m = msg(torch.cat([z.index_select(0, src), z.index_select(0, dst), e.to(z.dtype)], -1))
            agg = m.new_zeros(n, m.shape[-1]).index_add_(0, dst, m)
            g, c = upd(torch.cat([z, agg.to(z.dtype)], -1)).chunk(2, -1)
            h = h + torch.sigmoid(g) * torch.tanh(c)
        occ = self.occ(h).float()
        flow = self.flow(torch.cat([h.index_select(0, src), h.index_select(0, dst), e.to(h.dtype)], -1))[:, 0]
        pooled = h.new_zeros(n_venue, h.shape[-1]).index_add_(0, venue, h) / sizes[:, None].to(h.dtype)
        return occ, flow.float(), self.egress(pooled)[:, 0].float()


@_workload("venue crowd-flow training (random init, message passing over venue zone graphs): 4-16 venues a step (drawn) of 40-240 zones each (drawn per venue: stands, concourses, gates, bars, stairs; venues past 1,600 zones a step dropped), each zone with 12 past 5-minute occupancy counts, a zone type (of 8) and 6 static features (area, capacity, level, ...), drawn on the device; 6 corridor edges per zone to zones drawn within its own venue (offsets and sizes by index_select) with 4 edge features (width, length, stairs, one-way); an MLP encoder and 6 message-passing layers (width 192, an edge MLP over both ends and the edge, index_add into the receiving zone in the messages' dtype, a gated update); occupancy for the next 6 intervals per zone by a Huber loss, each corridor's flow by MSE and venue egress minutes (index_add pooling, sizes cast to the pooled dtype) by L1; AdamW, clipping, bf16 autocast, 520 steps; the losses read back every 20 steps and every 104 steps a no-grad pass over 16 venues of 100 zones with the occupancy and egress errors read back")
def venue_crowd_flow_gnn_train(rng):
    hist, n_type, n_static, n_edge, ahead, k = 12, 8, 6, 4, 6, 6
    d, layers = _smoke(192, 16), _smoke(6, 2)
    model = _FlowGNN(hist, n_type, n_static, n_edge, d, layers, ahead).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    lo, hi, budget = _smoke(40, 3), _smoke(240, 8), _smoke(1600, 24)

    def venues(sizes):
        v, n = len(sizes), sum(sizes)
        sz = torch.tensor(sizes, device="cuda")
        venue = torch.repeat_interleave(torch.arange(v, device="cuda"), sz, output_size=n)
        offs = torch.cumsum(sz, 0) - sz
        base, size = offs.index_select(0, venue), sz.index_select(0, venue)
        dst = torch.arange(n, device="cuda").repeat_interleave(k)
        src = (base[:, None] + (torch.rand(n, k, device="cuda") * size[:, None]).long()).flatten()
        x = torch.rand(n, hist, device="cuda")
        kind = torch.randint(0, n_type, (n,), device="cuda")
        static = torch.randn(n, n_static, device="cuda")
        efeat = torch.rand(n * k, n_edge, device="cuda")
        occ = torch.rand(n, ahead, device="cuda")
        flow = torch.randn(n * k, device="cuda")
        egress = torch.rand(v, device="cuda") * 20.0
        return x, kind, static, src, dst, efeat, venue, sz.float(), occ, flow, egress

    steps = _smoke(520, 3)
    for step in range(steps):
        model.train()
        sizes = [rng.randint(lo, hi) for _ in range(rng.randint(_smoke(4, 2), _smoke(16, 3)))]
        while sum(sizes) > budget:
            sizes.pop()
        x, kind, static, src, dst, efeat, venue, sz, occ, flow, egress = venues(sizes)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            p_occ, p_flow, p_eg = model(x, kind, static, src, dst, efeat, venue, len(sizes), sz)
        l_occ = _F.huber_loss(p_occ, occ, delta=0.5)
        l_flow = _F.mse_loss(p_flow, flow)
        l_eg = _F.l1_loss(p_eg, egress)
        loss = l_occ + 0.5 * l_flow + 0.1 * l_eg
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_occ.detach(), l_flow.detach(), l_eg.detach()]).tolist()
        del x, kind, static, src, dst, efeat, venue, sz, occ, flow, egress, p_occ, p_flow, p_eg
        del l_occ, l_flow, l_eg, loss
        if (step + 1) % _smoke(104, 2) == 0:
            model.eval()
            with torch.no_grad():
                sizes = [_smoke(100, 6)] * _smoke(16, 2)
                x, kind, static, src, dst, efeat, venue, sz, occ, flow, egress = venues(sizes)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    p_occ, p_flow, p_eg = model(x, kind, static, src, dst, efeat, venue, len(sizes), sz)
                out = torch.stack([(p_occ - occ).abs().mean(), (p_eg - egress).abs().mean()])
            out.tolist()
            del x, kind, static, src, dst, efeat, venue, sz, occ, flow, egress, p_occ, p_flow, p_eg, out


# ---------------------------------------------------------------- choreography diffusion sampler (transformer)


class _MotionDenoiser(_nn.Module):
    """Noisy pose frames and the frame's music feature projected and summed, a frame position table, a dancer-slot
    embedding, the timestep's sine features and the style through an MLP added to every token; pre-norm blocks over
    all dancers' frames of the request; the predicted noise."""

    def __init__(self, n_pose, n_mus, d, heads, layers, max_t, max_dancer, n_style):
        super().__init__()
        self.pose, self.mus = _nn.Linear(n_pose, d), _nn.Linear(n_mus, d)
        self.pos, self.dancer = _nn.Embedding(max_t, d), _nn.Embedding(max_dancer, d)
        self.style = _nn.Embedding(n_style + 1, d)
        self.temb = mlp(d, d, d, act=_nn.SiLU)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm, self.out = _nn.LayerNorm(d), _nn.Linear(d, n_pose)
        self.d = d

    def forward(self, x, mus, style, t):
        b, n_d, n_t, _ = x.shape
        dev = x.device
        h = self.pose(x) + self.mus(mus)[:, None] + self.pos(torch.arange(n_t, device=dev))[None, None]
        h = h + self.dancer(torch.arange(n_d, device=dev))[None, :, None]
        c = self.temb(_sincos(t, self.d)) + self.style(style)
        h = h.flatten(1, 2) + c[:, None]
        for blk in self.blocks:
            h = blk(h)
        return self.out(self.norm(h)).view(b, n_d, n_t, -1)


@_workload("choreography diffusion sampling (random init, a transformer denoiser with classifier-free guidance): 64-68 requests (drawn) of 1-4 dancers (drawn) for 2-6 s of motion (drawn per request, 60-180 frames at 30 frames a second in steps of 30, a 180-row position table, a 4-row dancer table) with 24 joints in the 6-d rotation form and the root (147 values) and music features (80 mel bands and 4 beat features a frame) drawn on the device, one of 10 dance styles (drawn per request, an eleventh row for the unconditional pass); 6 pre-norm blocks (width 256, 8 heads) over all dancers' frames of a request, the timestep and style added to every token; 10-30 DDIM steps (drawn per request) over a 1,000-step cosine schedule with a guidance scale of 1.5-5 (drawn per request), the conditional and unconditional (music zeroed, null style) passes in one doubled batch under bf16 autocast; per dancer the mean joint speed, a foot-skating measure, the correlation of the speed with the music's beat channel and the root's travel; each request's results read back once")
def choreography_motion_diffusion_sample(rng):
    n_pose, n_mus, n_style = 147, 84, 10
    d, heads, layers = _smoke(256, 32), _smoke(8, 2), _smoke(6, 1)
    max_sec, max_dancer, fps = _smoke(6, 2), 4, _smoke(30, 4)
    max_t = max_sec * fps
    model = _MotionDenoiser(n_pose, n_mus, d, heads, layers, max_t, max_dancer, n_style).cuda().eval()
    model.requires_grad_(False)
    s = torch.arange(1001, dtype=torch.float64) / 1000
    f = torch.cos((s + 0.008) / 1.008 * math.pi / 2) ** 2
    abar = (f[1:] / f[0]).clamp(1e-5, 1.0).tolist()

    nreq = rng.randint(_smoke(64, 2), _smoke(68, 3))
    for _ in range(nreq):
        n_d, t = rng.randint(1, max_dancer), rng.randint(_smoke(2, 1), max_sec) * fps
        n_steps, g, style = rng.randint(_smoke(10, 2), _smoke(30, 3)), rng.uniform(1.5, 5.0), rng.randrange(n_style)
        ts = [int(round(999 * (1 - i / n_steps))) for i in range(n_steps)] + [-1]
        with torch.no_grad():
            mus = torch.randn(1, t, n_mus, device="cuda")
            mus2 = torch.cat([mus, torch.zeros_like(mus)], 0)
            sty = torch.tensor([style, n_style], device="cuda")
            x = torch.randn(1, n_d, t, n_pose, device="cuda")
            for tc, tn in zip(ts[:-1], ts[1:]):
                a, a_next = abar[tc], (abar[tn] if tn >= 0 else 1.0)
                tt = torch.full((2,), float(tc), device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    eps = model(torch.cat([x, x], 0), mus2, sty, tt).float()
                e_c, e_u = eps.chunk(2, 0)
                e = e_u + g * (e_c - e_u)
                x0 = ((x - math.sqrt(1 - a) * e) / math.sqrt(a)).clamp(-4.0, 4.0)
                x = math.sqrt(a_next) * x0 + math.sqrt(1 - a_next) * e
                del tt, eps, e_c, e_u, e, x0
            vel = x[0, :, 1:] - x[0, :, :-1]
            speed = vel[..., :144].norm(dim=-1)
            foot = vel[..., 60:72].abs().mean(-1)
            beat = mus[0, 1:, -1]
            sc, bc = speed - speed.mean(-1, keepdim=True), beat - beat.mean()
            corr = (sc * bc).sum(-1) / (sc.norm(dim=-1) * bc.norm()).clamp_min(1e-6)
            travel = (x[0, :, -1, 144:] - x[0, :, 0, 144:]).norm(dim=-1)
            out = torch.stack([speed.mean(-1), foot.mean(-1), corr, travel], -1)
        out.tolist()
        del mus, mus2, sty, x, vel, speed, foot, beat, sc, bc, corr, travel, out

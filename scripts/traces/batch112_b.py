"""The hundred-and-twelfth batch of held-out workloads for record.py, second half (see batch112.py): video games and
esports, written in torch alone. A procedural dungeon-level sampler (a MaskGIT-style bidirectional transformer over
tile maps of drawn sizes, biome- and difficulty-conditioned with classifier-free guidance, iterative parallel
decoding that keeps the most confident sampled tiles on a cosine schedule and never remasks a designer's sketched
tiles), tileable game-texture GAN training (a StyleGAN2-style generator of modulated, demodulated grouped
convolutions with circular padding and per-pixel noise, a residual discriminator with a minibatch standard
deviation, the non-saturating loss, textures of drawn resolutions and batch sizes), a replay highlight service (a
residual convnet over each replay clip's frames with a separately pooled minimap corner, a dilated temporal
convolution network over the frames, highlight scores and event classes, peak picking of the top moments) and a
lobby anti-cheat graph fine-tuning (a message-passing network over the damage events between the players of many
matches of drawn lobby sizes, the first layers frozen as a pre-trained encoder, the last layers and new cheater and
suspicious-hit heads trained with their own learning rates).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the replay service), `rng` the workload's random.Random for every shape, count and sampled choice,
sizes through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or
masked_fill; no boolean-mask indexing; results read back only at logging points or once per request.
replay_highlight_serve uploads its frames on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, PreNormBlock, SideUploads, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- procedural dungeon levels (MaskGIT sampler)


class _TileMaskGit(_nn.Module):
    """Tile tokens (a mask token added) with row and column tables, one conditioning token in front (a biome
    embedding, a `null` biome for the unconditional half, plus the difficulty through a linear layer);
    bidirectional pre-norm blocks; logits over the tiles."""

    def __init__(self, n_tile, n_biome, d, heads, layers, max_side):
        super().__init__()
        self.tok = _nn.Embedding(n_tile + 1, d)
        self.row, self.col = _nn.Embedding(max_side, d), _nn.Embedding(max_side, d)
        self.biome, self.diff = _nn.Embedding(n_biome + 1, d), _nn.Linear(1, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm, self.out = _nn.LayerNorm(d), _nn.Linear(d, n_tile)

    def forward(self, tokens, h, w, biome, diff):
        dev = tokens.device
        rows, cols = self.row(torch.arange(h, device=dev)), self.col(torch.arange(w, device=dev))
        pos = (rows[:, None] + cols[None]).flatten(0, 1)
        x = self.tok(tokens) + pos[None]
        c = self.biome(biome) + self.diff(diff[:, None])
        x = torch.cat([c[:, None], x], 1)
        for blk in self.blocks:
            x = blk(x)
        return self.out(self.norm(x[:, 1:])).float()


@_workload("procedural dungeon-level sampling (random init, a MaskGIT-style bidirectional transformer over tile maps): 102-108 requests (drawn) of 4-16 levels (drawn) of 16-32 x 16-32 tiles (height and width drawn per request, multiples of 4; 32-row row and column tables) over 32 tile kinds, a biome (of 8) and a difficulty per request (drawn), 0-20% of the tiles fixed from a designer's sketch (fraction drawn per request, tiles drawn on the device); 6 pre-norm blocks (width 256, 8 heads) with a conditioning token in front, classifier-free guidance (the conditional and null-biome halves in one doubled batch, a scale of 1.5-4 drawn per request); 8-16 parallel decoding iterations (drawn per request): tiles sampled by Gumbel-max at a temperature of 1, confidences from their log-probabilities plus annealed Gumbel noise (already-decided tiles kept), the least confident cosine-schedule count re-masked by topk and scatter, sketched tiles never re-masked (torch.where); bf16 autocast; each request's tile histogram (one-hot means) and mean final confidence read back")
def dungeon_maskgit_sample(rng):
    n_tile, n_biome = 32, 8
    d, heads, layers, max_side = _smoke(256, 32), _smoke(8, 2), _smoke(6, 1), _smoke(32, 8)
    model = _TileMaskGit(n_tile, n_biome, d, heads, layers, max_side).cuda().eval()
    model.requires_grad_(False)
    side_lo = _smoke(16, 4)
    nreq = rng.randint(_smoke(102, 2), _smoke(108, 3))
    for _ in range(nreq):
        b = rng.randint(_smoke(4, 1), _smoke(16, 2))
        h, w = rng.randint(side_lo // 4, max_side // 4) * 4, rng.randint(side_lo // 4, max_side // 4) * 4
        n = h * w
        iters = rng.randint(_smoke(8, 2), _smoke(16, 3))
        scale, frac = rng.uniform(1.5, 4.0), rng.uniform(0.0, 0.2)
        biome_id, difficulty = rng.randrange(n_biome), rng.random()
        with torch.no_grad():
            fixed = torch.rand(b, n, device="cuda") < frac
            sketch = torch.randint(0, n_tile, (b, n), device="cuda")
            tokens = torch.where(fixed, sketch, n_tile)
            biome = torch.cat([torch.full((b,), biome_id, device="cuda"), torch.full((b,), n_biome, device="cuda")])
            diff = torch.full((2 * b,), difficulty, device="cuda")
            conf = None
            for i in range(iters):
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = model(tokens.repeat(2, 1), h, w, biome, diff)
                cond, unc = logits.chunk(2)
                logits = unc + scale * (cond - unc)
                logp = torch.log_softmax(logits, -1)
                g = -torch.log(-torch.log(torch.rand_like(logp).clamp(1e-9, 1 - 1e-9)))
                sampled = (logp + g).argmax(-1)
                known = tokens != n_tile
                cand = torch.where(known, tokens, sampled)
                lp = logp.gather(2, sampled[..., None])[..., 0]
                noise = -torch.log(-torch.log(torch.rand(b, n, device="cuda").clamp(1e-9, 1 - 1e-9)))
                conf = (lp + 4.5 * (1 - (i + 1) / iters) * noise).masked_fill(known, 1e9)
                n_mask = int(n * math.cos(math.pi / 2 * (i + 1) / iters))
                if n_mask > 0:
                    low = conf.topk(n_mask, dim=1, largest=False).indices
                    remask = torch.zeros(b, n, dtype=torch.bool, device="cuda").scatter(1, low, True)
                    tokens = torch.where(remask & ~fixed, n_tile, cand)
                    del low, remask
                else:
                    tokens = cand
                del logits, cond, unc, logp, g, sampled, known, cand, lp, noise
            hist = _F.one_hot(tokens.clamp(max=n_tile - 1), n_tile).float().mean((0, 1))
            out = torch.cat([hist, conf.clamp(max=0.0).mean()[None]])
        out.tolist()
        del fixed, sketch, tokens, biome, diff, conf, hist, out


# ---------------------------------------------------------------- tileable game textures (StyleGAN2-style GAN)


class _ModConv(_nn.Module):
    """A StyleGAN2 modulated convolution: the style scales the weight's input channels per sample, demodulated
    (unless `demod` is off), run as one grouped convolution (groups = batch) after circular padding so that the
    texture tiles."""

    def __init__(self, cin, cout, k, w_dim, demod=True):
        super().__init__()
        self.weight = _nn.Parameter(torch.randn(cout, cin, k, k) / math.sqrt(cin * k * k))
        self.bias = _nn.Parameter(torch.zeros(cout))
        self.affine = _nn.Linear(w_dim, cin)
        self.k, self.demod = k, demod

    def forward(self, x, w):
        b, cin, hh, ww = x.shape
        s = self.affine(w) + 1.0
        wt = self.weight[None] * s[:, None, :, None, None]
        if self.demod:
            wt = wt * torch.rsqrt(wt.pow(2).sum((2, 3, 4), keepdim=True) + 1e-8)
        p = self.k // 2
        if p:
            x = _F.pad(x, (p, p, p, p), mode="circular")
        y = _F.conv2d(x.reshape(1, b * cin, x.shape[2], x.shape[3]), wt.reshape(-1, cin, self.k, self.k).to(x.dtype),
                      groups=b)
        return y.view(b, -1, hh, ww) + self.bias.to(y.dtype)[None, :, None, None]


class _TexGenerator(_nn.Module):
    """A mapping MLP to w; a learned 4 x 4 constant, blocks of bilinear upsampling and two modulated 3x3
    convolutions with per-pixel noise and leaky ReLU; modulated 1x1 to-RGB layers summed with the upsampled
    RGB skip."""

    def __init__(self, z_dim, w_dim, widths):
        super().__init__()
        self.mapping = mlp(z_dim, w_dim, w_dim, layers=4, act=lambda: _nn.LeakyReLU(0.2))
        self.const = _nn.Parameter(torch.randn(1, widths[0], 4, 4))
        self.convs = _nn.ModuleList(
            _nn.ModuleList([_ModConv(a, c, 3, w_dim), _ModConv(c, c, 3, w_dim)]) for a, c in zip(widths, widths[1:]))
        self.noise_w = _nn.ParameterList(_nn.Parameter(torch.zeros(2)) for _ in widths[1:])
        self.rgb = _nn.ModuleList(_ModConv(c, 3, 1, w_dim, demod=False) for c in widths[1:])

    def forward(self, z, blocks, w_avg=None, psi=1.0):
        w = self.mapping(z)
        if w_avg is not None:
            w = w_avg.to(w.dtype) + psi * (w - w_avg.to(w.dtype))
        x = self.const.expand(z.shape[0], -1, -1, -1).to(w.dtype)
        rgb = None
        for i in range(blocks):
            x = _F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
            for j, conv in enumerate(self.convs[i]):
                x = conv(x, w)
                x = x + self.noise_w[i][j].to(x.dtype) * torch.randn(x.shape[0], 1, x.shape[2], x.shape[3],
                                                                      device=x.device, dtype=x.dtype)
                x = _F.leaky_relu(x, 0.2)
            y = self.rgb[i](x, w)
            rgb = y if rgb is None else y + _F.interpolate(rgb, scale_factor=2, mode="bilinear", align_corners=False)
        return rgb, w


class _TexDiscriminator(_nn.Module):
    """A 1x1 from-RGB layer at the input resolution, residual blocks (two 3x3 convolutions with leaky ReLU, a 2x
    average pool, a 1x1 skip, summed over sqrt 2) down to 4 x 4, a minibatch standard deviation channel, a 3x3
    convolution and two linear layers."""

    def __init__(self, widths):
        super().__init__()
        self.widths = widths  # from the highest resolution down to 4 x 4
        self.from_rgb = _nn.ModuleList(_nn.Conv2d(3, c, 1) for c in widths[:-1])
        self.blocks = _nn.ModuleList(
            _nn.ModuleList([_nn.Conv2d(a, a, 3, 1, 1), _nn.Conv2d(a, c, 3, 1, 1), _nn.Conv2d(a, c, 1, bias=False)])
            for a, c in zip(widths, widths[1:]))
        c = widths[-1]
        self.final = _nn.Conv2d(c + 1, c, 3, 1, 1)
        self.fc1, self.fc2 = _nn.Linear(c * 16, c), _nn.Linear(c, 1)

    def forward(self, img, blocks):
        start = len(self.blocks) - blocks
        x = _F.leaky_relu(self.from_rgb[start](img), 0.2)
        for c1, c2, sk in self.blocks[start:]:
            y = _F.leaky_relu(c2(_F.leaky_relu(c1(x), 0.2)), 0.2)
            x = (_F.avg_pool2d(y, 2) + _F.avg_pool2d(sk(x), 2)) / math.sqrt(2)
        std = torch.sqrt(x.float().var(0, unbiased=False) + 1e-8).mean().to(x.dtype)
        x = torch.cat([x, std.expand(x.shape[0], 1, 4, 4)], 1)
        x = _F.leaky_relu(self.final(x), 0.2)
        return self.fc2(_F.leaky_relu(self.fc1(x.flatten(1)), 0.2)).float()[:, 0]


@_workload("tileable game-texture GAN training (random init, a StyleGAN2-style generator and a residual discriminator): 64 or 128 px textures (drawn per step) in batches of 8-32 (drawn, at most 16 x 128^2 pixels); a 4-layer mapping MLP (z and w of 128) and a learned 4 x 4 constant, 4 or 5 synthesis blocks (256/128/64/32/32 channels) of bilinear upsampling and two modulated, demodulated 3x3 convolutions run as grouped convolutions (groups = batch) after circular padding, per-pixel noise, modulated 1x1 to-RGB layers with an upsampled skip; a discriminator of a 1x1 from-RGB layer and residual down blocks (32/64/128/256/256) to 4 x 4, a minibatch standard deviation channel, a 3x3 convolution and two linear layers; 'real' textures drawn on the device as four octaves of bilinearly upsampled noise with a periodic stripe; per step one discriminator update (non-saturating logistic loss, generator run without grad) and one generator update; Adam (betas 0, 0.99) for each, bf16 autocast, 195 steps, a w average tracked by lerp; the losses read back every 10 steps and every 65 steps a no-grad batch of 16 textures of 128 px with truncation (psi 0.7) with each texture's channel means, standard deviations and seam error (first against last row and column) read back")
def texture_stylegan_train(rng):
    z_dim = _smoke(128, 16)
    g_widths, d_widths = _smoke([256, 256, 128, 64, 32, 32], [16, 16, 16, 8]), _smoke([32, 64, 128, 256, 256, 256],
                                                                                     [8, 16, 16, 16])
    gen, disc = _TexGenerator(z_dim, z_dim, g_widths).cuda(), _TexDiscriminator(d_widths).cuda()
    g_opt = torch.optim.Adam(gen.parameters(), lr=2e-3, betas=(0.0, 0.99))
    d_opt = torch.optim.Adam(disc.parameters(), lr=2e-3, betas=(0.0, 0.99))
    w_avg = torch.zeros(z_dim, device="cuda")
    max_blocks = len(g_widths) - 1
    budget = _smoke(16 * 128 * 128, 4 * 32 * 32)

    def reals(b, res):
        x = torch.zeros(b, 3, res, res, device="cuda")
        for o in range(4):
            r = max(2, res >> (o + 2))
            x = x + _F.interpolate(torch.randn(b, 3, r, r, device="cuda"), size=(res, res), mode="bilinear",
                                   align_corners=False) * 0.5 ** o
        ramp = torch.linspace(0, 2 * math.pi * 4, res, device="cuda")
        return torch.tanh(x + 0.3 * torch.sin(ramp)[None, None, None])

    steps = _smoke(195, 3)
    for step in range(steps):
        blocks = rng.choice([max_blocks - 1, max_blocks])
        res = 4 << blocks
        b = rng.randint(_smoke(8, 2), max(_smoke(8, 2), min(_smoke(32, 4), budget // (res * res))))
        real = reals(b, res)
        with torch.no_grad():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                fake, _ = gen(torch.randn(b, z_dim, device="cuda"), blocks)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            d_real, d_fake = disc(real, blocks), disc(fake.float(), blocks)
        d_loss = _F.softplus(d_fake).mean() + _F.softplus(-d_real).mean()
        d_opt.zero_grad(set_to_none=True)
        d_loss.backward()
        d_opt.step()
        del real, fake, d_real, d_fake
        with torch.autocast("cuda", dtype=torch.bfloat16):
            fake, w = gen(torch.randn(b, z_dim, device="cuda"), blocks)
            g_loss = _F.softplus(-disc(fake.float(), blocks)).mean()
        g_opt.zero_grad(set_to_none=True)
        g_loss.backward()
        g_opt.step()
        with torch.no_grad():
            w_avg.lerp_(w.detach().float().mean(0), 0.005)
        if step % 10 == 0:
            torch.stack([d_loss.detach(), g_loss.detach()]).tolist()
        del fake, w, d_loss, g_loss
        if (step + 1) % _smoke(65, 2) == 0:
            with torch.no_grad():
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    img, _ = gen(torch.randn(_smoke(16, 2), z_dim, device="cuda"), max_blocks, w_avg, 0.7)
                img = img.float()
                seam = ((img[:, :, 0] - img[:, :, -1]).abs().mean((1, 2))
                        + (img[..., 0] - img[..., -1]).abs().mean((1, 2)))
                out = torch.cat([img.mean((2, 3)).flatten(), img.std((2, 3)).flatten(), seam])
            out.tolist()
            del img, seam, out


# ---------------------------------------------------------------- replay highlight service


class _HighlightNet(_nn.Module):
    """Per frame: a stride-2 stem and stride-2 residual blocks, global average pooling of the whole frame and
    of the minimap corner (the bottom-right quarter) separately; over the frames a dilated temporal convolution
    network (residual, kernel 3, dilations 1, 2, 4, 8); a highlight logit and event-class logits per frame."""

    def __init__(self, widths, d_t, n_evt):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, widths[0], 3, 2, 1, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU())
        self.blocks = _nn.Sequential(*(BasicResBlock(a, c, 2) for a, c in zip(widths, widths[1:])))
        self.t_in = _nn.Conv1d(2 * widths[-1], d_t, 1)
        self.tcn = _nn.ModuleList(_nn.Conv1d(d_t, d_t, 3, 1, dl, dilation=dl) for dl in (1, 2, 4, 8))
        self.norms = _nn.ModuleList(_nn.GroupNorm(8, d_t) for _ in range(4))
        self.score, self.evt = _nn.Conv1d(d_t, 1, 1), _nn.Conv1d(d_t, n_evt, 1)

    def forward(self, x):
        y = self.blocks(self.stem(x))
        hh, ww = y.shape[2], y.shape[3]
        feat = torch.cat([y.mean((2, 3)), y[:, :, hh * 3 // 4:, ww * 3 // 4:].mean((2, 3))], 1)
        z = self.t_in(feat.t()[None])
        for conv, norm in zip(self.tcn, self.norms):
            z = z + _F.gelu(norm(conv(z)))
        return self.score(z).float()[0, 0], self.evt(z).float()[0]


@_workload("replay highlight detection serving (random init, a residual frame convnet and a dilated temporal convolution network): 2,700-2,750 requests (drawn), each a replay clip of 16-64 frames (drawn) at 144 x 256 or 180 x 320 (drawn per request), uint8 RGB frames uploaded on a side stream from two reused pinned host buffers (filled once, sized for 64 frames of 180 x 320) one request ahead (one span, through SideUploads.ahead), scaled and normalised on the device into channels-last; a stride-2 stem (32) and stride-2 residual blocks (64/128/192), the frame and its minimap corner (the last quarter of each side) average-pooled separately; a 1-d convolution to 256 and four residual dilated convolutions (kernel 3, dilations 1, 2, 4, 8, group norm) over the clip's frames; a highlight logit and 5 event-class logits (none, kill, multi-kill, objective, team fight) per frame under bf16 autocast; the scores smoothed by a 5-frame average pool, peaks kept by a 9-frame max-pool and torch.where, the top 3 moments by topk and their event classes by gather; each request's top moments, their scores and classes and the clip's event-class histogram read back")
def replay_highlight_serve(rng):
    widths, d_t, n_evt = _smoke([32, 64, 128, 192], [8, 16, 16]), _smoke(256, 16), 5
    model = _HighlightNet(widths, d_t, n_evt).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    sizes = _smoke([(144, 256), (180, 320)], [(32, 48), (48, 64)])
    f_lo, f_hi = _smoke(16, 9), _smoke(64, 12)
    h_max, w_max = max(s[0] for s in sizes), max(s[1] for s in sizes)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (f_hi * h_max * w_max * 3,), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    mean = torch.tensor([0.45, 0.45, 0.45], device="cuda").view(1, 3, 1, 1)
    k_top = 3

    nreq = rng.randint(_smoke(2700, 3), _smoke(2750, 4))
    plan = [(rng.randint(f_lo, f_hi), rng.choice(sizes)) for _ in range(nreq)]

    for (f, (hh, ww)), raw in up.ahead(plan, lambda p: (p[0] * p[1][0] * p[1][1] * 3,)):
        with torch.no_grad():
            x = ((raw.view(f, hh, ww, 3).permute(0, 3, 1, 2).float() / 255.0 - mean) / 0.25).contiguous(
                memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                score, evt = model(x)
            s = _F.avg_pool1d(torch.sigmoid(score)[None, None], 5, 1, 2, count_include_pad=False)[0, 0]
            peaks = torch.where(s == _F.max_pool1d(s[None, None], 9, 1, 4)[0, 0], s, 0.0)
            top = peaks.topk(k_top)
            cls = evt.argmax(0)
            top_cls = cls.gather(0, top.indices)
            hist = _F.one_hot(cls, n_evt).float().sum(0)
            out = torch.cat([top.values, top.indices.float(), top_cls.float(), hist])
        out.tolist()
        del raw, x, score, evt, s, peaks, top, cls, top_cls, hist, out


# ---------------------------------------------------------------- lobby anti-cheat graph (fine-tuning)


class _LobbyLayer(_nn.Module):
    """Edge update from both endpoints and the edge state; messages summed into the victims (damage taken) and
    the shooters (damage dealt) separately by index_add, normalised by degree; a node update from the node, both
    sums and its lobby's mean; residual with LayerNorm."""

    def __init__(self, d):
        super().__init__()
        self.edge, self.node = mlp(3 * d, d, d, act=_nn.SiLU), mlp(4 * d, d, d, act=_nn.SiLU)
        self.ne, self.nn = _nn.LayerNorm(d), _nn.LayerNorm(d)

    def forward(self, h, e, snd, rcv, inv_in, inv_out, lobby, inv_lobby, n_lobby):
        e = self.ne(e + self.edge(torch.cat([h.index_select(0, snd), h.index_select(0, rcv), e], -1)))
        m_in = e.new_zeros(h.shape[0], e.shape[1]).index_add_(0, rcv, e) * inv_in
        m_out = e.new_zeros(h.shape[0], e.shape[1]).index_add_(0, snd, e) * inv_out
        ctx = h.new_zeros(n_lobby, h.shape[1]).index_add_(0, lobby, h) * inv_lobby
        h = self.nn(h + self.node(torch.cat([h, m_in.to(h.dtype), m_out.to(h.dtype), ctx.index_select(0, lobby)], -1)))
        return h, e


class _LobbyGnn(_nn.Module):
    def __init__(self, f_node, f_edge, d, layers):
        super().__init__()
        self.n_in, self.e_in = mlp(f_node, d, d, act=_nn.SiLU), mlp(f_edge, d, d, act=_nn.SiLU)
        self.layers = _nn.ModuleList(_LobbyLayer(d) for _ in range(layers))
        self.cheat, self.hit = mlp(d, d, 1, act=_nn.SiLU), mlp(3 * d, d, 1, act=_nn.SiLU)

    def forward(self, x, ef, snd, rcv, lobby, n_lobby):
        n = x.shape[0]
        ones = torch.ones(snd.shape[0], device=x.device)
        inv_in = 1.0 / ones.new_zeros(n).index_add_(0, rcv, ones).clamp(min=1)
        inv_out = 1.0 / ones.new_zeros(n).index_add_(0, snd, ones).clamp(min=1)
        inv_lobby = 1.0 / ones.new_zeros(n_lobby).index_add_(0, lobby, torch.ones(n, device=x.device)).clamp(min=1)
        h, e = self.n_in(x), self.e_in(ef)
        for layer in self.layers:
            h, e = layer(h, e, snd, rcv, inv_in[:, None].to(h.dtype), inv_out[:, None].to(h.dtype), lobby,
                         inv_lobby[:, None].to(h.dtype), n_lobby)
        hit = self.hit(torch.cat([h.index_select(0, snd), h.index_select(0, rcv), e], -1))
        return self.cheat(h).float()[:, 0], hit.float()[:, 0]


@_workload("lobby anti-cheat graph network fine-tuning (random init standing in for a pre-trained encoder, a message-passing network over damage events): 8-32 matches a step (drawn), each lobby of 10-64 players (drawn per match) with 3-8 damage events per player (drawn per match), senders and receivers drawn on the device within each lobby (self-hits moved on by one), 24 player features (accuracy, headshot rate, time to kill, snap speed, kills, deaths, account age, reports) and 8 event features (distance, visibility through walls, reaction time, headshot, weapon) drawn on the device, about 3% of players cheaters (drawn) and their events flagged suspicious with probability 0.6; node and edge encoder MLPs and 4 message-passing layers (width 128: edge updates from both endpoints, messages summed into victims and shooters separately by index_add and normalised by degree, a lobby mean by index_add, node updates, LayerNorm); the encoders and the first 2 layers frozen (requires_grad off), the last 2 layers trained at 1e-4 and new cheater and suspicious-hit heads at 1e-3 (AdamW parameter groups); a binary cross-entropy per player (positive weight 20) and per event; clipping, bf16 autocast, 840 steps; the losses read back every 20 steps and every 168 steps a no-grad evaluation of 32 lobbies of 64 players with the precision of the top 1% of cheater scores (topk and gather) read back")
def lobby_cheat_gnn_finetune(rng):
    f_node, f_edge, d, layers, frozen = 24, 8, _smoke(128, 16), _smoke(4, 2), _smoke(2, 1)
    model = _LobbyGnn(f_node, f_edge, d, layers).cuda()
    for mod in [model.n_in, model.e_in, *model.layers[:frozen]]:
        mod.requires_grad_(False)
    opt = torch.optim.AdamW([
        {"params": [p for lay in model.layers[frozen:] for p in lay.parameters()], "lr": 1e-4},
        {"params": [*model.cheat.parameters(), *model.hit.parameters()], "lr": 1e-3}], weight_decay=0.01)
    p_lo, p_hi = _smoke(10, 3), _smoke(64, 6)

    def lobbies(sizes, per):
        m, n = len(sizes), sum(sizes)
        counts = [s * k for s, k in zip(sizes, per)]
        e = sum(counts)
        size_t = torch.tensor(sizes, device="cuda")
        off = torch.cumsum(size_t, 0) - size_t
        mid = torch.repeat_interleave(torch.arange(m, device="cuda"), torch.tensor(counts, device="cuda"),
                                      output_size=e)
        lobby = torch.repeat_interleave(torch.arange(m, device="cuda"), size_t, output_size=n)
        n_e, o_e = size_t.index_select(0, mid), off.index_select(0, mid)
        loc_s = (torch.rand(e, device="cuda") * n_e).long().clamp(max=n_e - 1)
        loc_r = (torch.rand(e, device="cuda") * n_e).long().clamp(max=n_e - 1)
        loc_r = torch.where(loc_r == loc_s, (loc_r + 1) % n_e, loc_r)
        snd, rcv = o_e + loc_s, o_e + loc_r
        x = torch.randn(n, f_node, device="cuda")
        ef = torch.randn(e, f_edge, device="cuda")
        cheater = torch.where(torch.rand(n, device="cuda") < 0.03, 1.0, 0.0)
        sus = cheater.index_select(0, snd) * torch.where(torch.rand(e, device="cuda") < 0.6, 1.0, 0.0)
        return x, ef, snd, rcv, lobby, cheater, sus

    pos_w = torch.tensor(20.0, device="cuda")
    steps = _smoke(840, 3)
    for step in range(steps):
        model.train()
        m = rng.randint(_smoke(8, 2), _smoke(32, 3))
        sizes = [rng.randint(p_lo, p_hi) for _ in range(m)]
        x, ef, snd, rcv, lobby, cheater, sus = lobbies(sizes, [rng.randint(3, 8) for _ in range(m)])
        with torch.autocast("cuda", dtype=torch.bfloat16):
            c_logit, h_logit = model(x, ef, snd, rcv, lobby, m)
        l_node = _F.binary_cross_entropy_with_logits(c_logit, cheater, pos_weight=pos_w)
        l_edge = _F.binary_cross_entropy_with_logits(h_logit, sus)
        loss = l_node + l_edge
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p for g in opt.param_groups for p in g["params"]], 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_node.detach(), l_edge.detach()]).tolist()
        del x, ef, snd, rcv, lobby, cheater, sus, c_logit, h_logit, l_node, l_edge, loss
        if (step + 1) % _smoke(168, 2) == 0:
            model.eval()
            with torch.no_grad():
                nm = _smoke(32, 3)
                x, ef, snd, rcv, lobby, cheater, sus = lobbies([p_hi] * nm, [6] * nm)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    c_logit, _ = model(x, ef, snd, rcv, lobby, nm)
                top = c_logit.topk(max(1, nm * p_hi // 100)).indices
                prec = cheater.gather(0, top).mean()
            prec.item()
            del x, ef, snd, rcv, lobby, cheater, sus, c_logit, top, prec

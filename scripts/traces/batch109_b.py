"""The hundred-and-ninth batch of held-out workloads for record.py, second half (the first is batch109.py):
printing, packaging and paper manufacturing, written in torch alone. Packaging-artwork diffusion training (a
conditional DDPM U-Net of TimeResBlocks over artwork of drawn sizes conditioned on a dieline mask, a box style and a
brand palette, with classifier-free guidance in its DDIM evaluations), paper fibre-network mechanics surrogate
training (a message-passing graph network by index_select and index_add over drawn fibre-bond networks of several
sheets, per-bond stresses and a per-sheet tensile strength), packaging-layout generation serving (a decoder-only
transformer with a key-value cache sampling layout elements, five tokens each, under a per-slot grammar mask) and an
inline print register and colour inspection service (a siamese residual convnet with a correlation volume between
live and reference press-camera tiles, per-separation register offsets and colour-bar delta E). Same conventions as
the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned host buffers for the
service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths,
resolutions and batch sizes are fixed on the host, padding handled by masks multiplied in or by torch.where /
masked_fill, no boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
print_register_colour_serve uploads its camera tiles on a side stream (workload_helpers.SideUploads, one request
ahead); the other three are single-stream. The models run under bf16 autocast. Every position table is sized for the
longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's. This file
never imports record.py. The plumbing is batch_common.py's; the sizes checked are in record_new109.sh's header.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, PreNormBlock, SideUploads, TimeResBlock, _sincos, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- packaging-artwork diffusion


class _ArtUNet(_nn.Module):
    """A three-level U-Net of TimeResBlocks (strided-convolution downsampling, nearest upsampling and concatenated
    skips), a pre-norm attention block at the lowest level; the timestep, box-style and palette embeddings summed."""

    def __init__(self, c, temb, styles, palette, heads):
        super().__init__()
        c0, c1, c2 = c
        self.temb = temb
        self.t_mlp = mlp(temb, temb, temb, act=_nn.SiLU)
        self.style = _nn.Embedding(styles + 1, temb)  # the last row is the dropped condition
        self.pal = _nn.Linear(palette, temb)
        self.inp = _nn.Conv2d(4, c0, 3, 1, 1)
        self.e0, self.d1 = TimeResBlock(c0, c0, temb), _nn.Conv2d(c0, c1, 3, 2, 1)
        self.e1, self.d2 = TimeResBlock(c1, c1, temb), _nn.Conv2d(c1, c2, 3, 2, 1)
        self.m1, self.attn, self.m2 = TimeResBlock(c2, c2, temb), PreNormBlock(c2, heads), TimeResBlock(c2, c2, temb)
        self.u2, self.dec1 = _nn.Conv2d(c2, c1, 3, 1, 1), TimeResBlock(2 * c1, c1, temb)
        self.u1, self.dec0 = _nn.Conv2d(c1, c0, 3, 1, 1), TimeResBlock(2 * c0, c0, temb)
        self.out = _nn.Sequential(_nn.GroupNorm(8, c0), _nn.SiLU(), _nn.Conv2d(c0, 3, 3, 1, 1))

    def forward(self, x, die, t, style, pal):
        te = self.t_mlp(_sincos(t, self.temb)) + self.style(style) + self.pal(pal)
        h0 = self.e0(self.inp(torch.cat([x, die], 1)), te)
        h1 = self.e1(self.d1(h0), te)
        m = self.m1(self.d2(h1), te)
        b, c, hh, ww = m.shape
        m = self.attn(m.flatten(2).transpose(1, 2)).transpose(1, 2).reshape(b, c, hh, ww)
        m = self.m2(m, te)
        y = self.dec1(torch.cat([self.u2(_F.interpolate(m, scale_factor=2, mode="nearest")), h1], 1), te)
        y = self.dec0(torch.cat([self.u1(_F.interpolate(y, scale_factor=2, mode="nearest")), h0], 1), te)
        return self.out(y).float()


@_workload("packaging-artwork diffusion training (random init, a conditional DDPM U-Net): artwork of 64-160 px a side (drawn per step, a multiple of 16), 8-32 designs a step (drawn, at most 16 x 128^2 pixels), 3-band artwork and a 1-band dieline mask (a thresholded upsampled random field) drawn on the device, a box style of 12 and a 5-colour brand palette (15 values) per design, both dropped with probability 0.1 (a null style row by torch.where, the palette zeroed by masked_fill) for classifier-free guidance; a U-Net of TimeResBlocks at widths 64/128/192 (GroupNorm, sinusoidal timestep embedding of 256 through a SiLU MLP, style and palette embeddings added), strided downsampling, nearest upsampling with skips, a pre-norm attention block (6 heads) over the lowest level's tokens; epsilon-prediction MSE over 1,000 cosine-schedule timesteps drawn on the device; AdamW, clipping, bf16 autocast, 460 steps; the loss read back every 20 steps and every 153 steps a no-grad 12-step DDIM sampling of 4 designs of 128 px with guidance scale 3 (conditional and null halves in one batch, the timesteps on the host), the mean ink coverage inside and outside the dieline read back")
def packaging_artwork_diffusion_train(rng):
    c, temb, styles, pal_n, heads = _smoke((64, 128, 192), (16, 16, 32)), _smoke(256, 32), 12, 15, _smoke(6, 2)
    model = _ArtUNet(c, temb, styles, pal_n, heads).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.01)
    T = 1000
    s = torch.arange(T + 1, device="cuda").float() / T
    f = torch.cos((s + 0.008) / 1.008 * math.pi / 2) ** 2
    abar = (f[1:] / f[0]).clamp(min=1e-5, max=0.9999)
    budget, mult = _smoke(16 * 128 * 128, 4 * 32 * 32), 16

    def designs(b, r):
        art = torch.rand(b, 3, r, r, device="cuda") * 2 - 1
        die = (_F.interpolate(torch.randn(b, 1, r // 8, r // 8, device="cuda"), size=(r, r), mode="bilinear",
                              align_corners=False) > 0).float()
        style = torch.randint(0, styles, (b,), device="cuda")
        pal = torch.rand(b, pal_n, device="cuda")
        return art * die, die, style, pal

    steps = _smoke(460, 3)
    for step in range(steps):
        model.train()
        r = rng.randint(_smoke(64, 32) // mult, _smoke(160, 48) // mult) * mult
        b = rng.randint(_smoke(8, 2), max(_smoke(8, 2), min(_smoke(32, 4), budget // (r * r))))
        art, die, style, pal = designs(b, r)
        drop = torch.rand(b, device="cuda") < 0.1
        style = torch.where(drop, torch.full_like(style, styles), style)
        pal = pal.masked_fill(drop[:, None], 0.0)
        t = torch.randint(0, T, (b,), device="cuda")
        a = abar[t].view(b, 1, 1, 1)
        eps = torch.randn_like(art)
        noisy = a.sqrt() * art + (1 - a).sqrt() * eps
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(noisy, die, t, style, pal)
        loss = _F.mse_loss(pred, eps)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.detach().item()
        del art, die, style, pal, drop, t, a, eps, noisy, pred, loss
        if (step + 1) % _smoke(153, 2) == 0:
            model.eval()
            nb, r, n_s, g = _smoke(4, 2), _smoke(128, 32), _smoke(12, 2), 3.0
            ts = [int(T - 1 - i * (T // n_s)) for i in range(n_s)]
            with torch.no_grad():
                _, die, style, pal = designs(nb, r)
                die2 = torch.cat([die, die])
                style2 = torch.cat([style, torch.full_like(style, styles)])
                pal2 = torch.cat([pal, torch.zeros_like(pal)])
                x = torch.randn(nb, 3, r, r, device="cuda")
                for i, tt in enumerate(ts):
                    tv = torch.full((2 * nb,), tt, device="cuda", dtype=torch.long)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        e_c, e_u = model(torch.cat([x, x]), die2, tv, style2, pal2).chunk(2)
                    e = e_u + g * (e_c - e_u)
                    a_t = abar[tt]
                    a_n = abar[ts[i + 1]] if i + 1 < n_s else torch.ones((), device="cuda")
                    x0 = ((x - (1 - a_t).sqrt() * e) / a_t.sqrt()).clamp(-1, 1)
                    x = a_n.sqrt() * x0 + (1 - a_n).sqrt() * e
                ink = (1 - x.mean(1, keepdim=True)) / 2
                cov = torch.stack([(ink * die).sum() / die.sum().clamp(min=1),
                                   (ink * (1 - die)).sum() / (1 - die).sum().clamp(min=1)])
            cov.tolist()
            del die, style, pal, die2, style2, pal2, x, tv, e_c, e_u, e, a_t, a_n, x0, ink, cov


# ---------------------------------------------------------------- paper fibre-network mechanics (graph net)


class _FibreGNN(_nn.Module):
    """Encode-process-decode: node and bond encoders, message-passing layers (a bond update from both ends gathered
    by index_select, summed onto the receiving node by index_add, a node update), residual; a per-bond-node stress
    decoder and a per-sheet tensile decoder over sheet means (index_add by sheet id)."""

    def __init__(self, dn, de, d, layers):
        super().__init__()
        self.enc_n, self.enc_e = mlp(dn, d, d, norm=True), mlp(de, d, d, norm=True)
        self.edge = _nn.ModuleList(mlp(3 * d, d, d, norm=True) for _ in range(layers))
        self.node = _nn.ModuleList(mlp(2 * d, d, d, norm=True) for _ in range(layers))
        self.stress, self.tensile = mlp(d, d, 3), mlp(d, d, 1)

    def forward(self, xn, xe, src, dst, sheet, counts):
        h, e = self.enc_n(xn), self.enc_e(xe)
        for fe, fn in zip(self.edge, self.node):
            e = e + fe(torch.cat([e, h.index_select(0, src), h.index_select(0, dst)], -1))
            agg = torch.zeros(h.shape[0], e.shape[1], device=h.device, dtype=e.dtype).index_add_(0, dst, e)
            h = h + fn(torch.cat([h, agg.to(h.dtype)], -1))
        pooled = torch.zeros(counts.shape[0], h.shape[1], device=h.device, dtype=h.dtype).index_add_(0, sheet, h)
        pooled = pooled / counts[:, None].to(h.dtype)
        return self.stress(h).float(), self.tensile(pooled)[:, 0].float()


@_workload("paper fibre-network mechanics surrogate training (random init, a message-passing graph network by index_select and index_add): 1-3 handsheets a step (drawn), each a fibre-bond network of 4,000-20,000 nodes (drawn per sheet) with 3-6 bonds per node (drawn per sheet) to nodes within 64 places (a local window, drawn on the device), 9 node features (position, fibre orientation as cosine and sine, length, coarseness, moisture, bond strength and the sheet's applied strain, drawn per sheet) and 4 bond features (relative position, distance, orientation agreement); node and bond encoders to width 128, 6 processor layers (bond update from both ends by index_select, sum aggregation by index_add, node update, LayerNorm MLPs, residual), a per-node decoder of 3 stress components and a per-sheet tensile-strength decoder over sheet means (index_add by sheet id); MSE against drawn targets; AdamW, clipping, bf16 autocast, 445 steps; the losses read back every 20 steps and every 111 steps a no-grad evaluation of 2 sheets of 20,000 nodes with the stress and tensile mean absolute errors read back")
def paper_fibre_network_gnn_train(rng):
    d, layers = _smoke(128, 16), _smoke(6, 2)
    model = _FibreGNN(9, 4, d, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    lo, hi, window = _smoke(4000, 40), _smoke(20000, 80), _smoke(64, 8)

    def sheets(sizes, degrees):
        xs, srcs, dsts, ids, off = [], [], [], [], 0
        for i, (n, k) in enumerate(zip(sizes, degrees)):
            pos = torch.rand(n, 2, device="cuda")
            ang = torch.rand(n, device="cuda") * math.pi
            props = torch.rand(n, 4, device="cuda")
            strain = torch.full((n, 1), 0.0, device="cuda") + torch.rand(1, device="cuda") * 0.03
            xs.append(torch.cat([pos, ang.cos()[:, None], ang.sin()[:, None], props, strain], 1))
            s = torch.arange(n, device="cuda").repeat_interleave(k)
            srcs.append(s + off)
            dsts.append((s + torch.randint(1, window, (n * k,), device="cuda")) % n + off)
            ids.append(torch.full((n,), i, device="cuda", dtype=torch.long))
            off += n
        xn, src, dst, sheet = torch.cat(xs), torch.cat(srcs), torch.cat(dsts), torch.cat(ids)
        rel = xn[:, :2].index_select(0, dst) - xn[:, :2].index_select(0, src)
        agree = (xn[:, 2:4].index_select(0, dst) * xn[:, 2:4].index_select(0, src)).sum(1, keepdim=True).abs()
        xe = torch.cat([rel, rel.norm(dim=1, keepdim=True), agree], 1)
        counts = torch.tensor(sizes, device="cuda", dtype=torch.float32)
        return xn, xe, src, dst, sheet, counts

    steps = _smoke(445, 3)
    for step in range(steps):
        model.train()
        ns = rng.randint(1, 3)
        sizes = [rng.randint(lo, hi) for _ in range(ns)]
        xn, xe, src, dst, sheet, counts = sheets(sizes, [rng.randint(3, 6) for _ in range(ns)])
        t_s = torch.randn(xn.shape[0], 3, device="cuda")
        t_t = torch.rand(ns, device="cuda") * 50
        with torch.autocast("cuda", dtype=torch.bfloat16):
            p_s, p_t = model(xn, xe, src, dst, sheet, counts)
        l_s, l_t = _F.mse_loss(p_s, t_s), _F.mse_loss(p_t, t_t)
        loss = l_s + 0.01 * l_t
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_s.detach(), l_t.detach()]).tolist()
        del xn, xe, src, dst, sheet, counts, t_s, t_t, p_s, p_t, l_s, l_t, loss
        if (step + 1) % _smoke(111, 2) == 0:
            model.eval()
            with torch.no_grad():
                ne = _smoke(2, 1)
                xn, xe, src, dst, sheet, counts = sheets([hi] * ne, [rng.randint(3, 6) for _ in range(ne)])
                t_s, t_t = torch.randn(xn.shape[0], 3, device="cuda"), torch.rand(ne, device="cuda") * 50
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    p_s, p_t = model(xn, xe, src, dst, sheet, counts)
                mae = torch.stack([(p_s - t_s).abs().mean(), (p_t - t_t).abs().mean()])
            mae.tolist()
            del xn, xe, src, dst, sheet, counts, t_s, t_t, p_s, p_t, mae


# ---------------------------------------------------------------- packaging-layout generation (KV cache)


class _LayoutLayer(_nn.Module):
    """A pre-norm decoder layer whose keys and values go into a preallocated cache: `prefill` causal over the prompt
    (making the layer's cache of `total` rows), `step` one new token against the cache's first `pos + 1` rows."""

    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.n1, self.n2 = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.o = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.ff = mlp(d, 4 * d, d, act=_nn.GELU)  # keys and values go into a cache made by prefill, per layer

    def _split(self, x):
        b, t, d3 = x.shape
        return x.view(b, t, 3, self.h, d3 // (3 * self.h)).permute(2, 0, 3, 1, 4)

    def prefill(self, x, total):
        q, k, v = self._split(self.qkv(self.n1(x)))
        b, h, t, dh = k.shape
        cache = torch.zeros(2, b, h, total, dh, device=x.device, dtype=k.dtype)
        cache[0, :, :, :t] = k
        cache[1, :, :, :t] = v
        a = _F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).flatten(2))
        return x + self.ff(self.n2(x)), cache

    def step(self, x, cache, pos):
        q, k, v = self._split(self.qkv(self.n1(x)))
        cache[0, :, :, pos:pos + 1] = k
        cache[1, :, :, pos:pos + 1] = v
        a = _F.scaled_dot_product_attention(q, cache[0, :, :, :pos + 1], cache[1, :, :, :pos + 1])
        x = x + self.o(a.transpose(1, 2).flatten(2))
        return x + self.ff(self.n2(x))


@_workload("packaging-layout generation serving (random init, a decoder-only transformer with a key-value cache): 14-15 requests (drawn) of 1-8 layouts each (drawn), a prompt of a start token, a box style (of 12), a panel count (of 6) and 0-6 given elements (drawn per request), each element 5 tokens (an element type of 16, then x, y, width and height quantised to 128 bins, a 548-token vocabulary), 8-32 new elements generated per request (drawn, 40-160 tokens); 8 pre-norm layers (width 384, 6 heads, GELU MLP of 1,536), learned positions (a table of 193 rows, the longest prompt plus the longest generation), the prompt prefilled causally into a preallocated per-layer cache of the request's full length, then one token a step against the cache's filled rows; each step's logits restricted to the current slot's token range by a per-slot mask (masked_fill), divided by a temperature drawn per request (0.7-1.1), top-20 kept and one token drawn per layout by Gumbel-max; bf16 autocast; each request's generated tokens read back once")
def packaging_layout_gen_sample(rng):
    d, heads, layers = _smoke(384, 32), _smoke(6, 2), _smoke(8, 2)
    styles, panels, types, bins = 12, 6, 16, _smoke(128, 16)
    st0, pn0, ty0 = 2, 2 + styles, 2 + styles + panels
    co0 = ty0 + types
    vocab = co0 + 4 * bins
    max_given, gen_lo, gen_hi = _smoke(6, 1), _smoke(8, 1), _smoke(32, 2)
    max_len = 3 + 5 * max_given + 5 * gen_hi
    tok, posemb = _nn.Embedding(vocab, d).cuda(), _nn.Embedding(max_len, d).cuda()
    blocks = _nn.ModuleList(_LayoutLayer(d, heads) for _ in range(layers)).cuda()
    norm, head = _nn.LayerNorm(d).cuda(), _nn.Linear(d, vocab).cuda()
    for m in (tok, posemb, blocks, norm, head):
        m.eval().requires_grad_(False)
    slot_lo = [ty0] + [co0 + i * bins for i in range(4)]
    slot_n = [types] + [bins] * 4
    ar = torch.arange(vocab, device="cuda")
    slot_block = torch.stack([(ar < lo) | (ar >= lo + n) for lo, n in zip(slot_lo, slot_n)])  # (5, V) True = banned

    def logits_of(x):
        return head(norm(x[:, -1])).float()

    nreq = rng.randint(_smoke(14, 2), _smoke(15, 3))
    for _ in range(nreq):
        b, given, new = rng.randint(1, _smoke(8, 2)), rng.randint(0, max_given), rng.randint(gen_lo, gen_hi) * 5
        temp, topk = rng.uniform(0.7, 1.1), _smoke(20, 4)
        lo = [1, st0, pn0] + [slot_lo[j] for _ in range(given) for j in range(5)]
        span = [1, styles, panels] + [slot_n[j] for _ in range(given) for j in range(5)]
        p = len(lo)
        with torch.no_grad():
            lo_t, span_t = torch.tensor(lo, device="cuda"), torch.tensor(span, device="cuda")
            ids = lo_t[None] + (torch.rand(b, p, device="cuda") * span_t[None]).long()
            cache = []
            with torch.autocast("cuda", dtype=torch.bfloat16):
                x = tok(ids) + posemb(torch.arange(p, device="cuda"))[None]
                for blk in blocks:
                    x, kv = blk.prefill(x, p + new)
                    cache.append(kv)
                lg = logits_of(x)
            out = []
            for j in range(new):
                pos = p + j
                lg = lg.masked_fill(slot_block[j % 5][None], float("-inf")) / temp
                kth = lg.topk(topk, -1).values[:, -1:]
                lg = lg.masked_fill(lg < kth, float("-inf"))
                g = -torch.log(-torch.log(torch.rand_like(lg).clamp(1e-9, 1 - 1e-9)))
                nxt = (lg + g).argmax(-1)
                out.append(nxt)
                if j + 1 == new:
                    break
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    x = tok(nxt)[:, None] + posemb.weight[pos][None, None]
                    for i, blk in enumerate(blocks):
                        x = blk.step(x, cache[i], pos)
                    lg = logits_of(x)
            gen = torch.stack(out, 1)
        gen.tolist()
        del lo_t, span_t, ids, cache, x, lg, out, kth, g, nxt, gen


# ---------------------------------------------------------------- inline print register and colour inspection


class _RegisterNet(_nn.Module):
    """A shared residual encoder to 1/16 resolution over the live and reference tiles, a 9 x 9 correlation volume
    (unfold), a convolutional head over correlation and live features to 4 separations' (x, y) register offsets."""

    def __init__(self, widths, disp, seps):
        super().__init__()
        self.disp = disp
        self.stem = _nn.Sequential(_nn.Conv2d(3, widths[0], 3, 2, 1, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU())
        self.body = _nn.Sequential(*[BasicResBlock(a, b, 2 if i else 1)
                                     for i, (a, b) in enumerate(zip(widths[:-1], widths[1:]))])
        nd = (2 * disp + 1) ** 2
        self.head = _nn.Sequential(_nn.Conv2d(nd + widths[-1], 128, 3, 1, 1), _nn.ReLU(),
                                   _nn.Conv2d(128, 64, 3, 1, 1), _nn.ReLU())
        self.off = _nn.Linear(64, 2 * seps)

    def forward(self, live, ref):
        n = live.shape[0]
        f = self.body(self.stem(torch.cat([live, ref])))
        fl, fr = f[:n], f[n:]
        b, c, h, w = fl.shape
        k = 2 * self.disp + 1
        unf = _F.unfold(fr, k, padding=self.disp).view(b, c, k * k, h * w)
        corr = (unf * fl.reshape(b, c, 1, h * w)).sum(1).view(b, k * k, h, w) / math.sqrt(c)
        y = self.head(torch.cat([corr, fl], 1))
        return self.off(y.mean((2, 3))).float(), corr.float()


def _srgb_lab(rgb):
    """CIE Lab (D65) of (..., 3) sRGB values in [0, 1]."""
    lin = torch.where(rgb > 0.04045, ((rgb + 0.055) / 1.055).clamp(min=1e-6).pow(2.4), rgb / 12.92)
    m = torch.tensor([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]],
                     device=rgb.device)
    xyz = (lin @ m.T) / torch.tensor([0.9505, 1.0, 1.089], device=rgb.device)
    f = torch.where(xyz > 0.008856, xyz.clamp(min=1e-6).pow(1.0 / 3.0), 7.787 * xyz + 16.0 / 116.0)
    return torch.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], -1)


@_workload("inline print register and colour inspection serving (random init, a siamese residual convnet with a correlation volume): 2,000-2,100 requests (drawn) of 1-4 press-camera tiles across the web (drawn), the camera mode drawn per request from 224 x 448, 320 x 640 and 384 x 768 px; each request's uint8 live tiles and golden reference tiles uploaded on a side stream as two spans of two reused pinned host buffers (filled once, sized for 4 live and 4 reference tiles of 384 x 768 x 3) one request ahead (workload_helpers.SideUploads.ahead); a channels-last stride-2 stem of 32 and BasicResBlocks 32-64-96-128 (the first of stride 1, the others of stride 2) to 1/16 resolution over live and reference together under bf16 autocast, a 9 x 9 correlation volume by unfold, a convolutional head over correlation and live features to (x, y) offsets of 4 colour separations, a soft-argmax shift of the mean correlation; the bottom 32 rows' colour bar pooled into 24 patches, sRGB to CIE Lab, delta E 1976 against the reference's patches; out-of-register and out-of-tolerance flags by torch.where; each request's offsets, shifts, delta E maxima and flag counts read back")
def print_register_colour_serve(rng):
    widths, disp, seps = _smoke([32, 32, 64, 96, 128], [16, 16, 16, 16, 16]), _smoke(4, 1), 4
    model = _RegisterNet(widths, disp, seps).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    modes = _smoke([(224, 448), (320, 640), (384, 768)], [(64, 128), (96, 160)])
    max_n, patches, bar = _smoke(4, 2), _smoke(24, 8), _smoke(32, 8)
    big = max(h * w for h, w in modes) * 3
    half = max_n * big
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (2 * half,), dtype=torch.uint8, generator=gen).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    k = 2 * disp + 1
    grid = torch.arange(k, device="cuda").float() - disp
    gy, gx = grid[:, None].expand(k, k).flatten(), grid[None, :].expand(k, k).flatten()
    mean = torch.tensor([0.5, 0.5, 0.5], device="cuda").view(1, 3, 1, 1)
    nreq = rng.randint(_smoke(2000, 3), _smoke(2100, 4))
    plan = []
    for _ in range(nreq):
        h, w = rng.choice(modes)
        plan.append((rng.randint(1, max_n), h, w))

    def spans(p):
        n = p[0] * 3 * p[1] * p[2]
        return n, slice(half, half + n)

    for (n, h, w), live_raw, ref_raw in up.ahead(plan, spans):
        with torch.no_grad():
            live = live_raw.view(n, 3, h, w).float().div_(255.0)
            ref = ref_raw.view(n, 3, h, w).float().div_(255.0)
            li = ((live - mean) / 0.25).contiguous(memory_format=torch.channels_last)
            rf = ((ref - mean) / 0.25).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                off, corr = model(li, rf)
            prob = corr.mean((2, 3)).softmax(-1)
            shift = torch.stack([(prob * gx).sum(-1), (prob * gy).sum(-1)], -1)
            pl = _F.adaptive_avg_pool2d(live[:, :, -bar:], (1, patches))[:, :, 0].transpose(1, 2)
            pr = _F.adaptive_avg_pool2d(ref[:, :, -bar:], (1, patches))[:, :, 0].transpose(1, 2)
            de = (_srgb_lab(pl) - _srgb_lab(pr)).norm(dim=-1)
            mis = torch.where(off.view(n, seps, 2).norm(dim=-1) > 2.0, 1.0, 0.0).sum(1)
            bad = torch.where(de > 3.0, 1.0, 0.0).sum(1)
            out = torch.cat([off.flatten(), shift.flatten(), de.amax(1), mis, bad])
        out.tolist()
        del live_raw, ref_raw, live, ref, li, rf, off, corr, prob, shift, pl, pr, de, mis, bad, out

"""The hundred-and-thirty-seventh batch of held-out workloads for record.py, second half (see batch137.py): newspapers
and news publishing, written in torch alone. Article section and tag training (a gated message-passing graph network
over the articles of a news day, each article a bag of tokens of drawn length, links between articles drawn on the
device; the section, the tags, breaking or evergreen, and the links themselves against drawn negatives), a news
illustration sampler (a small convolutional U-Net with self-attention at its lowest resolution, DDIM over a drawn
number of steps with classifier-free guidance by the section), summary writing fine-tuning (a decoder-only transformer
with rotary positions and frozen weights, low-rank adapters on its query and value projections, the loss on the
summary tokens only) and a print-run planning service (an N-BEATS style stack of fully connected blocks over each
outlet's sales history of drawn length, quantile forecasts of the next two weeks, summed into each depot's print run
and van loads).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the print-run service), `rng` the workload's random.Random for every shape, count and sampled
choice, sizes through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or
masked_fill; no boolean-mask indexing; results read back only at logging points or once per request.
newsstand_print_run_serve uploads its sales histories on a side stream (two reused pinned host buffers, one request
ahead, through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16
autocast. Every embedding and position table is sized for the longest padded length that can be drawn.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import SideUploads, TimeResBlock, _sincos, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- article sections and tags (graph network)


class _LinkLayer(_nn.Module):
    """A gated message-passing layer: each link's message the source article's projection times a sigmoid gate on
    both articles, summed into each article by index_add_ (in the messages' dtype) and divided by its degree, a
    residual GELU update and a layer norm."""

    def __init__(self, d):
        super().__init__()
        self.gate, self.msg = _nn.Linear(2 * d, d), _nn.Linear(d, d)
        self.upd = mlp(2 * d, 2 * d, d, act=_nn.GELU)
        self.norm = _nn.LayerNorm(d)

    def forward(self, h, src, dst, inv_deg):
        hs, hd = h.index_select(0, src), h.index_select(0, dst)
        m = torch.sigmoid(self.gate(torch.cat([hs, hd], -1))) * self.msg(hs)
        agg = m.new_zeros(h.shape[0], m.shape[1]).index_add_(0, dst, m)
        return self.norm(h + self.upd(torch.cat([h, agg.to(h.dtype) * inv_deg.to(h.dtype)], -1)))


class _ArticleGraph(_nn.Module):
    def __init__(self, vocab, n_author, d, layers, n_sec, n_tag):
        super().__init__()
        self.tok, self.author = _nn.Embedding(vocab, d), _nn.Embedding(n_author, d)
        self.inp = mlp(d + 3, d, d, act=_nn.GELU)
        self.layers = _nn.ModuleList(_LinkLayer(d) for _ in range(layers))
        self.sec, self.tags, self.kind = _nn.Linear(d, n_sec), _nn.Linear(d, n_tag), _nn.Linear(d, 1)
        self.link = _nn.Linear(d, d, bias=False)

    def forward(self, ids, keep, author, meta, src, dst, inv_deg):
        w = keep.to(torch.float32)
        bag = (self.tok(ids).float() * w[..., None]).sum(1) / w.sum(1, keepdim=True)
        h = self.inp(torch.cat([bag + self.author(author), meta], -1))
        for layer in self.layers:
            h = layer(h, src, dst, inv_deg)
        return h, self.sec(h).float(), self.tags(h).float(), self.kind(h).float()[:, 0]

    def link_score(self, h, a, c):
        return (self.link(h.index_select(0, a)) * h.index_select(0, c)).sum(-1).float()


@_workload("article section and tag training on a news day's link graph (random init, a gated message-passing graph network): 256-1,024 articles a step (drawn), each a bag of 16-64 tokens (lengths drawn on the device, padded to 64 under a mask) of a 30,000-token vocabulary averaged by a table, its author (of 600) by a table, the hour as sine and cosine and a drawn feature; 4 links an article drawn on the device, made both ways; 3 gated message-passing layers of width 192 (a sigmoid gate on both articles times the source's projection, index_add_ into each article in the messages' dtype, divided by the degree, residual GELU updates and layer norms); the section (of 16) by cross-entropy, 300 tags (up to 3 positives an article scattered on the device) by BCE, breaking against evergreen by BCE, and the links by BCE on a bilinear score against as many negative pairs drawn on the device; AdamW, clipping, bf16 autocast, 750 steps; the losses read back every 10 steps and every 125 steps a no-grad pass over 1,024 articles with the section accuracy and the tags' precision at 5 (topk, gather) read back")
def article_tagging_gnn_train(rng):
    vocab, n_author, d, layers, n_sec, n_tag = 30000, 600, _smoke(192, 16), _smoke(3, 1), 16, 300
    t_max, t_min, links = _smoke(64, 8), _smoke(16, 2), 4
    model = _ArticleGraph(vocab, n_author, d, layers, n_sec, n_tag).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    steps, every = _smoke(750, 3), _smoke(125, 2)

    def graph(n):
        lens = torch.randint(t_min, t_max + 1, (n,), device="cuda")
        keep = torch.arange(t_max, device="cuda")[None] < lens[:, None]
        ids = torch.randint(1, vocab, (n, t_max), device="cuda").masked_fill(~keep, 0)
        author = torch.randint(0, n_author, (n,), device="cuda")
        hour = torch.rand(n, device="cuda") * (2 * math.pi)
        meta = torch.stack([hour.sin(), hour.cos(), torch.rand(n, device="cuda")], -1)
        a = torch.arange(n, device="cuda").repeat_interleave(links)
        c = torch.randint(0, n, (n * links,), device="cuda")
        src, dst = torch.cat([a, c]), torch.cat([c, a])
        deg = torch.zeros(n, device="cuda").index_add_(0, dst, torch.ones(src.shape[0], device="cuda"))
        inv_deg = 1.0 / deg.clamp_min(1.0)[:, None]
        sec = torch.randint(0, n_sec, (n,), device="cuda")
        tags = torch.zeros(n, n_tag, device="cuda").scatter_(1, torch.randint(0, n_tag, (n, 3), device="cuda"), 1.0)
        kind = (torch.rand(n, device="cuda") < 0.3).float()
        neg_a = torch.randint(0, n, (n * links,), device="cuda")
        neg_c = torch.randint(0, n, (n * links,), device="cuda")
        return (ids, keep, author, meta, src, dst, inv_deg), (a, c, neg_a, neg_c), (sec, tags, kind)

    for step in range(steps):
        model.train()
        n = rng.randint(_smoke(256, 8), _smoke(1024, 12))
        with torch.no_grad():
            inputs, (a, c, neg_a, neg_c), (sec, tags, kind) = graph(n)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h, s_out, t_out, k_out = model(*inputs)
            pos_s, neg_s = model.link_score(h, a, c), model.link_score(h, neg_a, neg_c)
        l_sec = _F.cross_entropy(s_out, sec)
        l_tag = _F.binary_cross_entropy_with_logits(t_out, tags)
        l_kind = _F.binary_cross_entropy_with_logits(k_out, kind)
        l_link = (_F.binary_cross_entropy_with_logits(pos_s, torch.ones_like(pos_s))
                  + _F.binary_cross_entropy_with_logits(neg_s, torch.zeros_like(neg_s)))
        loss = l_sec + 5.0 * l_tag + l_kind + 0.5 * l_link
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_sec.detach(), l_tag.detach(), l_kind.detach(), l_link.detach()]).tolist()
        del inputs, a, c, neg_a, neg_c, sec, tags, kind, h, s_out, t_out, k_out, pos_s, neg_s
        del l_sec, l_tag, l_kind, l_link, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                inputs, _, (sec, tags, kind) = graph(_smoke(1024, 12))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    h, s_out, t_out, k_out = model(*inputs)
                acc = (s_out.argmax(-1) == sec).float().mean()
                prec = tags.gather(1, t_out.topk(5, -1)[1]).mean()
            torch.stack([acc, prec]).tolist()
            del inputs, sec, tags, kind, h, s_out, t_out, k_out, acc, prec


# ---------------------------------------------------------------- news illustration sampler (U-Net, DDIM)


class _MidAttention(_nn.Module):
    """Self-attention over the positions of a feature map: group norm, a 1x1 qkv convolution, SDPA, a 1x1 output."""

    def __init__(self, c, heads):
        super().__init__()
        self.h = heads
        self.norm, self.qkv, self.out = _nn.GroupNorm(8, c), _nn.Conv2d(c, 3 * c, 1), _nn.Conv2d(c, c, 1)

    def forward(self, x):
        b, c, hh, ww = x.shape
        q, k, v = self.qkv(self.norm(x)).view(b, 3, self.h, c // self.h, hh * ww).transpose(3, 4).unbind(1)
        a = _F.scaled_dot_product_attention(q, k, v)
        return x + self.out(a.transpose(2, 3).reshape(b, c, hh, ww))


class _IllusUNet(_nn.Module):
    """A two-level U-Net: residual blocks with the timestep and section embedding, strided downsampling, a middle of
    two residual blocks around self-attention, nearest upsampling with skip concatenations."""

    def __init__(self, c, n_sec, temb):
        super().__init__()
        self.temb = temb
        self.t_mlp = mlp(temb, temb, temb, act=_nn.SiLU)
        self.sec = _nn.Embedding(n_sec + 1, temb)
        self.inp = _nn.Conv2d(3, c, 3, 1, 1)
        self.d1, self.down1 = TimeResBlock(c, c, temb), _nn.Conv2d(c, c, 3, 2, 1)
        self.d2, self.down2 = TimeResBlock(c, 2 * c, temb), _nn.Conv2d(2 * c, 2 * c, 3, 2, 1)
        self.m1, self.attn, self.m2 = TimeResBlock(2 * c, 4 * c, temb), _MidAttention(4 * c, 4), \
            TimeResBlock(4 * c, 4 * c, temb)
        self.up2, self.u2 = _nn.Conv2d(4 * c, 4 * c, 3, 1, 1), TimeResBlock(6 * c, 2 * c, temb)
        self.up1, self.u1 = _nn.Conv2d(2 * c, 2 * c, 3, 1, 1), TimeResBlock(3 * c, c, temb)
        self.out = _nn.Sequential(_nn.GroupNorm(8, c), _nn.SiLU(), _nn.Conv2d(c, 3, 3, 1, 1))

    def forward(self, x, t, sec):
        te = self.t_mlp(_sincos(t, self.temb)) + self.sec(sec)
        h1 = self.d1(self.inp(x), te)
        h2 = self.d2(self.down1(h1), te)
        m = self.m2(self.attn(self.m1(self.down2(h2), te)), te)
        u = self.u2(torch.cat([self.up2(_F.interpolate(m, scale_factor=2.0, mode="nearest")), h2], 1), te)
        u = self.u1(torch.cat([self.up1(_F.interpolate(u, scale_factor=2.0, mode="nearest")), h1], 1), te)
        return self.out(u).float()


@_workload("news illustration sampling (random init, a convolutional U-Net with DDIM and classifier-free guidance): 74-76 requests (drawn) of 1-6 images (drawn) at 64 x 64, 64 x 96 or 96 x 128 px (drawn per request) for a section (of 12, drawn per image) with a guidance scale of 2-6 (drawn per request), 20-40 DDIM steps (drawn per request, eta 0, spread evenly over a 1,000-step cosine schedule computed on the host); a two-level U-Net of 96/192/384 channels (residual blocks with group norm and the timestep and section embedding, strided downsampling, 4-head self-attention over the lowest map between two residual blocks, nearest upsampling with skip concatenations), the conditional and unconditional halves in one doubled batch, in eval mode under bf16 autocast; each request's images as uint8 read back once")
def news_illustration_ddim_sample(rng):
    c, n_sec, temb = _smoke(96, 16), 12, _smoke(256, 32)
    res = [(64, 64), (64, 96), (96, 128)] if _smoke(1, 0) else [(16, 16), (16, 24)]
    max_b, s_lo, s_hi = _smoke(6, 2), _smoke(20, 2), _smoke(40, 3)
    model = _IllusUNet(c, n_sec, temb).cuda().eval()
    model.requires_grad_(False)
    big_t = 1000
    abar = [math.cos((i / big_t + 0.008) / 1.008 * math.pi / 2) ** 2 for i in range(big_t + 1)]
    abar = [a / abar[0] for a in abar[1:]]

    nreq = rng.randint(_smoke(74, 2), _smoke(76, 2))
    for _ in range(nreq):
        b, (h, w) = rng.randint(1, max_b), rng.choice(res)
        n_steps, scale = rng.randint(s_lo, s_hi), rng.uniform(2.0, 6.0)
        ts = [int(round((big_t - 1) * (1 - i / n_steps))) for i in range(n_steps)]
        sec = [rng.randrange(n_sec) for _ in range(b)]
        with torch.no_grad():
            labels = torch.tensor(sec + [n_sec] * b, device="cuda")
            x = torch.randn(b, 3, h, w, device="cuda")
            for i, t in enumerate(ts):
                a_t = abar[t]
                a_prev = abar[ts[i + 1]] if i + 1 < len(ts) else 1.0
                tt = torch.full((2 * b,), float(t), device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    eps = model(torch.cat([x, x]), tt, labels)
                e_c, e_u = eps.chunk(2)
                e = e_u + scale * (e_c - e_u)
                x0 = ((x - math.sqrt(1.0 - a_t) * e) / math.sqrt(a_t)).clamp(-1.0, 1.0)
                x = math.sqrt(a_prev) * x0 + math.sqrt(1.0 - a_prev) * e
            img = (x.clamp(-1.0, 1.0) * 127.5 + 127.5).to(torch.uint8)
        img.cpu()
        del labels, x, tt, eps, e_c, e_u, e, x0, img


# ---------------------------------------------------------------- summary writing (LoRA fine-tuning of a decoder)


class _LoRA(_nn.Module):
    """A frozen linear layer with a trainable low-rank update (B A, B zero at the start, scaled by alpha / r)."""

    def __init__(self, din, dout, r, alpha):
        super().__init__()
        self.base = _nn.Linear(din, dout, bias=False)
        self.base.requires_grad_(False)
        self.a = _nn.Parameter(torch.randn(r, din) / math.sqrt(din))
        self.b = _nn.Parameter(torch.zeros(dout, r))
        self.scale = alpha / r

    def forward(self, x):
        return self.base(x) + _F.linear(_F.linear(x, self.a), self.b) * self.scale


class _RMSNorm(_nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = _nn.Parameter(torch.ones(d))

    def forward(self, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * self.w).to(x.dtype)


class _LoRABlock(_nn.Module):
    """A Llama-style block: RMS norms, rotary queries and keys, causal SDPA, a SwiGLU MLP; LoRA on q and v."""

    def __init__(self, d, heads, hidden, r, alpha):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.n1, self.n2 = _RMSNorm(d), _RMSNorm(d)
        self.q, self.v = _LoRA(d, d, r, alpha), _LoRA(d, d, r, alpha)
        self.k, self.o = _nn.Linear(d, d, bias=False), _nn.Linear(d, d, bias=False)
        self.gate, self.up = _nn.Linear(d, hidden, bias=False), _nn.Linear(d, hidden, bias=False)
        self.down = _nn.Linear(hidden, d, bias=False)

    def forward(self, x, cos, sin):
        b, t, d = x.shape
        y = self.n1(x)

        def heads(z):
            return z.view(b, t, self.h, self.dh).transpose(1, 2)

        def rope(z):
            z1, z2 = z.chunk(2, -1)
            return z * cos + torch.cat([-z2, z1], -1) * sin

        q, k, v = rope(heads(self.q(y))), rope(heads(self.k(y))), heads(self.v(y))
        a = _F.scaled_dot_product_attention(q.to(v.dtype), k.to(v.dtype), v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
        y = self.n2(x)
        return x + self.down(_F.silu(self.gate(y)) * self.up(y))


@_workload("summary writing fine-tuning (random init standing in for a pretrained decoder, low-rank adapters): 4-12 sequences a step (drawn), each an article of 96-384 tokens (drawn per sequence), a separator, its summary of 24-96 tokens (drawn per sequence) and an end token, right-padded to the step's longest rounded up to 16 (at most 496) of a 24,000-token vocabulary; a frozen decoder of 6 Llama-style blocks of width 512, 8 heads (RMS norms, rotary positions from a 512-row table, causal SDPA, a SwiGLU MLP of 1,376), the output tied to the frozen token table; LoRA of rank 16 (alpha 32) on the query and value projections, the only parameters trained; next-token cross-entropy on the summary and end tokens only (a mask from the drawn lengths); AdamW on the adapters, clipping, bf16 autocast, 310 steps; the loss read back every 10 steps and every 62 steps a no-grad pass over 8 sequences of 384 + 96 tokens with the summary loss read back")
def summary_lora_finetune(rng):
    vocab, d, heads, layers, hidden = 24000, _smoke(512, 32), _smoke(8, 2), _smoke(6, 1), _smoke(1376, 64)
    r, alpha = _smoke(16, 4), 32.0
    a_lo, a_hi, s_lo, s_hi = _smoke(96, 8), _smoke(384, 24), _smoke(24, 4), _smoke(96, 8)
    t_max = -(-(a_hi + s_hi + 2) // 16) * 16
    n_pos = _smoke(512, t_max)
    tok = _nn.Embedding(vocab, d).cuda()
    tok.requires_grad_(False)
    blocks = _nn.ModuleList(_LoRABlock(d, heads, hidden, r, alpha) for _ in range(layers)).cuda()
    norm = _RMSNorm(d).cuda()
    norm.requires_grad_(False)
    for blk in blocks:
        for m in (blk.n1, blk.n2, blk.k, blk.o, blk.gate, blk.up, blk.down):
            m.requires_grad_(False)
    train = [p for p in blocks.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(train, lr=2e-4, weight_decay=0.0)
    dh = d // heads
    inv = 1.0 / 10000.0 ** (torch.arange(0, dh, 2, device="cuda").float() / dh)
    ang = torch.arange(n_pos, device="cuda").float()[:, None] * inv
    cos_t, sin_t = torch.cat([ang, ang], -1).cos(), torch.cat([ang, ang], -1).sin()
    steps, every = _smoke(310, 3), _smoke(62, 2)

    def run(a_lens, s_lens):
        b = len(a_lens)
        full = [a + s + 2 for a, s in zip(a_lens, s_lens)]
        t = -(-max(full) // 16) * 16
        slot = torch.arange(t, device="cuda")
        a_t, f_t = torch.tensor(a_lens, device="cuda")[:, None], torch.tensor(full, device="cuda")[:, None]
        ids = torch.randint(3, vocab, (b, t), device="cuda")
        ids = torch.where(slot[None] == a_t, 1, ids)
        ids = torch.where(slot[None] == f_t - 1, 2, ids)
        ids = ids.masked_fill(slot[None] >= f_t, 0)
        # position i predicts token i + 1: the loss counts the targets from the summary's first token to the end
        tgt = slot[None, :-1] + 1
        w = ((tgt > a_t) & (tgt < f_t)).float()
        cos, sin = cos_t[:t].to(torch.bfloat16), sin_t[:t].to(torch.bfloat16)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            x = tok(ids)
            for blk in blocks:
                x = blk(x, cos, sin)
            logits = _F.linear(norm(x[:, :-1]), tok.weight).float()
        ce = _F.cross_entropy(logits.transpose(1, 2), ids[:, 1:], reduction="none")
        return (ce * w).sum() / w.sum()

    for step in range(steps):
        blocks.train()
        b = rng.randint(_smoke(4, 2), _smoke(12, 3))
        loss = run([rng.randint(a_lo, a_hi) for _ in range(b)], [rng.randint(s_lo, s_hi) for _ in range(b)])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(train, 1.0)
        opt.step()
        if step % 10 == 0:
            loss.detach().item()
        del loss
        if (step + 1) % every == 0:
            blocks.eval()
            with torch.no_grad():
                nb = _smoke(8, 2)
                loss = run([a_hi] * nb, [s_hi] * nb)
            loss.item()
            del loss


# ---------------------------------------------------------------- print-run planning (N-BEATS style service)


class _NBeats(_nn.Module):
    """An N-BEATS style stack: each block a 4-layer ReLU MLP over the residual history, its mask and the outlet's
    covariates, a backcast taken off the residual (masked) and a forecast of three quantiles added up."""

    def __init__(self, lb, fh, width, blocks, cov, nq):
        super().__init__()
        self.fh, self.nq = fh, nq
        self.fc = _nn.ModuleList(mlp(2 * lb + cov, width, width, layers=4, act=_nn.ReLU) for _ in range(blocks))
        self.back = _nn.ModuleList(_nn.Linear(width, lb) for _ in range(blocks))
        self.fore = _nn.ModuleList(_nn.Linear(width, fh * nq) for _ in range(blocks))

    def forward(self, x, w, cov):
        res, fore = x, 0.0
        for fc, back, fo in zip(self.fc, self.back, self.fore):
            hdn = _F.relu(fc(torch.cat([res, w.to(res.dtype), cov.to(res.dtype)], -1)))
            res = res - back(hdn).float() * w
            fore = fore + fo(hdn).float()
        return fore.view(x.shape[0], self.fh, self.nq)


@_workload("print-run and delivery planning serving (random init, an N-BEATS style stack of fully connected blocks): 2,460-2,500 requests (drawn) of one region's 64-512 outlets (drawn), each outlet's last 28-112 days of copies sold (drawn per request in steps of 7; each outlet's own 14-to-all days drawn, left-padded to 112 under a mask), fp16 uploaded on a side stream from two reused pinned host buffers (filled once, sized for 512 x 112) one request ahead (one span, through SideUploads.ahead); each history scaled by its masked mean; covariates the outlet kind (of 6: newsstand, supermarket, petrol station, kiosk, honesty box, hotel, drawn on the device) by a 16-d table, the first forecast day's weekday (drawn per request) one-hot and a drawn event flag; 6 blocks of 4 ReLU layers of width 512, backcasts taken off the masked residual, forecasts of 14 days in 3 quantiles (median, 80th and 95th by cumulative softplus) added up, in eval mode under bf16 autocast; each depot's (4-16 depots drawn, outlets assigned on the host) print run per day from the outlets' 80th percentiles by index_add_ in fp32 plus 2% spoilage, its expected returns, its van loads (ceil of 4,000 copies) and the region's totals; each request's figures read back once")
def newsstand_print_run_serve(rng):
    lb, fh, nq, width, n_blocks = _smoke(112, 28), 14, 3, _smoke(512, 32), _smoke(6, 2)
    n_kind, kind_d, unit = 6, 16, 7
    n_lo, n_hi, t_lo = _smoke(64, 4), _smoke(512, 8), _smoke(28, 14)
    cov = kind_d + 7 + 1
    model = _NBeats(lb, fh, width, n_blocks, cov, nq).cuda().eval()
    kind_tab = _nn.Embedding(n_kind, kind_d).cuda()
    model.requires_grad_(False)
    kind_tab.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [(torch.rand(n_hi * lb, generator=gen) * 80.0).half().pin_memory() for _ in range(2)]
    up = SideUploads(host)

    nreq = rng.randint(_smoke(2460, 3), _smoke(2500, 4))
    plan = []
    for _ in range(nreq):
        n = rng.randint(n_lo, n_hi)
        t = rng.randint(t_lo // unit, lb // unit) * unit
        n_dep = rng.randint(4, 16)
        plan.append((n, t, [rng.randint(min(14, t), t) for _ in range(n)], [rng.randrange(n_dep) for _ in range(n)],
                     n_dep, rng.randrange(7), rng.random() < 0.15))

    for (n, t, lens, depot, n_dep, weekday, event), raw in up.ahead(plan, lambda p: (p[0] * p[1],)):
        with torch.no_grad():
            w = _F.pad(keep_mask(lens, t).flip(-1).float(), (lb - t, 0))
            sales = _F.pad(raw.view(n, t).float(), (lb - t, 0)) * w
            scale = (sales.sum(-1) / w.sum(-1)).clamp_min(1.0)
            x = sales / scale[:, None]
            kind = torch.randint(0, n_kind, (n,), device="cuda")
            day = _F.one_hot(torch.full((n,), weekday, device="cuda"), 7).float()
            flag = torch.full((n, 1), 1.0 if event else 0.0, device="cuda")
            covs = torch.cat([kind_tab(kind), day, flag], -1)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = model(x, w, covs)
            q = torch.cat([out[..., :1], _F.softplus(out[..., 1:])], -1).cumsum(-1)
            q = q.clamp_min(0.0) * scale[:, None, None]
            dep = torch.tensor(depot, device="cuda")
            run = torch.zeros(n_dep, fh, device="cuda").index_add_(0, dep, q[..., 1].float()) * 1.02
            returns = torch.zeros(n_dep, fh, device="cuda").index_add_(0, dep, (q[..., 1] - q[..., 0]).float())
            vans = torch.ceil(run / 4000.0)
            totals = torch.stack([run.sum(0), returns.sum(0), vans.sum(0)])
            figs = torch.cat([run.flatten(), returns.flatten(), vans.flatten(), totals.flatten(), q[:, 0].flatten()])
        figs.tolist()
        del raw, w, sales, scale, x, kind, day, flag, covs, out, q, dep, run, returns, vans, totals, figs

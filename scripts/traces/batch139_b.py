"""The hundred-and-thirty-ninth batch of held-out workloads for record.py, second half (see batch139.py): pharmacies
and drug dispensing, written in torch alone. A stock reorder planning service (a dilated causal temporal convnet over
each product's dispensing history of drawn length, quantile forecasts of the next four weeks, order-up-to quantities
over the lead time and review period in whole packs, summed into each store's order), prescription verification
fine-tuning (a bidirectional transformer encoder over the prescription's text and the patient's active medicines,
its lower blocks and tables frozen; field tags on the text, the verification flags and each active medicine's
interaction with the new prescription), a patient directions sampler (a decoder-only transformer with a key-value
cache, prompts of drawn length left-padded under a mask, top-k sampling by Gumbel-max with a temperature and a
presence penalty) and a restocking policy trained by PPO (a set transformer over a pharmacy's drugs acting in a
simulated inventory written on the device: Poisson demand, a lead-time pipeline, holding, lost-sale, ordering and
expiry costs, GAE, clipped policy updates over minibatches).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the reorder service), `rng` the workload's random.Random for every shape, count and sampled choice,
sizes through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or
masked_fill; no boolean-mask indexing; results read back only at logging points or once per request.
pharmacy_reorder_tcn_serve uploads its dispensing histories on a side stream (two reused pinned host buffers, one
request ahead, through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under
bf16 autocast. Every embedding and position table is sized for the longest padded length that can be drawn.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- stock reorder planning (temporal convnet service)


class _TCN(_nn.Module):
    """A dilated causal temporal convnet: a 1x1 input convolution, residual blocks of a left-padded dilated
    convolution of width 3, GELU and a 1x1 convolution (dilations doubling), then quantile forecasts from the last
    day's features and the product category, made monotone by cumulative softplus."""

    def __init__(self, fin, c, dilations, n_cat, fh, nq):
        super().__init__()
        self.fh, self.nq, self.dil = fh, nq, dilations
        self.inp = _nn.Conv1d(fin, c, 1)
        self.dconv = _nn.ModuleList(_nn.Conv1d(c, c, 3, dilation=dl) for dl in dilations)
        self.mix = _nn.ModuleList(_nn.Conv1d(c, c, 1) for _ in dilations)
        self.cat = _nn.Embedding(n_cat, c)
        self.head = mlp(2 * c, 2 * c, fh * nq, act=_nn.GELU)

    def forward(self, x, cat):
        h = self.inp(x)
        for dl, conv, mix in zip(self.dil, self.dconv, self.mix):
            h = h + mix(_F.gelu(conv(_F.pad(h, (2 * dl, 0)))))
        out = self.head(torch.cat([h[:, :, -1], self.cat(cat).to(h.dtype)], -1)).float()
        out = out.view(x.shape[0], self.fh, self.nq)
        return torch.cat([out[..., :1], _F.softplus(out[..., 1:])], -1).cumsum(-1)


@_workload("pharmacy stock reorder planning serving (random init, a dilated causal temporal convnet): 3,290-3,330 requests (drawn) of one region's 128-1,024 product-store series (drawn), each series' last 56-364 days of units dispensed (drawn per request in steps of 7; each series' own 28-to-all days drawn, left-padded under a mask), fp16 uploaded on a side stream from two reused pinned host buffers (filled once, sized for 1,024 x 364) one request ahead (one span, through SideUploads.ahead); each history scaled by its masked mean, the mask and the weekday as sine and cosine (the request's first weekday drawn) as input channels; a 1x1 input convolution to 128 channels, 6 residual blocks of a left-padded dilated convolution of width 3 (dilations 1-32) and a 1x1 convolution, the last day's features with the product category (of 30, drawn on the device) by a table into 28 days of 3 quantiles (median, 80th, 95th by cumulative softplus), in eval mode under bf16 autocast; each series' order-up-to level over the lead time (2-7 days, drawn per request) plus a 7-day review period from the 95th percentile, less the stock on hand and on order (drawn on the device), rounded up to whole packs (1, 10, 28, 30 or 100 units, gathered by a drawn index), each store's (8-40 drawn) order value by index_add_ in fp32, the region's totals; each request's figures read back once")
def pharmacy_reorder_tcn_serve(rng):
    lb, fh, nq, c, n_cat, unit = _smoke(364, 28), 28, 3, _smoke(128, 16), 30, 7
    dilations = (1, 2, 4, 8, 16, 32) if _smoke(1, 0) else (1, 2)
    n_lo, n_hi, t_lo = _smoke(128, 4), _smoke(1024, 8), _smoke(56, 14)
    model = _TCN(4, c, dilations, n_cat, fh, nq).cuda().eval()
    model.requires_grad_(False)
    packs = torch.tensor([1.0, 10.0, 28.0, 30.0, 100.0], device="cuda")
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [(torch.rand(n_hi * lb, generator=gen) * 30.0).half().pin_memory() for _ in range(2)]
    up = SideUploads(host)

    nreq = rng.randint(_smoke(3290, 3), _smoke(3330, 4))
    plan = []
    for _ in range(nreq):
        n, t = rng.randint(n_lo, n_hi), rng.randint(t_lo // unit, lb // unit) * unit
        plan.append((n, t, [rng.randint(min(28, t), t) for _ in range(n)], rng.randrange(7), rng.randint(2, 7),
                     rng.randint(8, 40)))

    for (n, t, lens, weekday, lead, n_store), raw in up.ahead(plan, lambda p: (p[0] * p[1],)):
        with torch.no_grad():
            w = keep_mask(lens, t).flip(-1).float()
            sales = raw.view(n, t).float() * w
            scale = (sales.sum(-1) / w.sum(-1)).clamp_min(0.1)
            day = (torch.arange(t, device="cuda") + weekday).float() * (2 * math.pi / 7)
            x = torch.stack([sales / scale[:, None], w, day.sin()[None].expand(n, t), day.cos()[None].expand(n, t)], 1)
            cat = torch.randint(0, n_cat, (n,), device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                q = model(x, cat)
            q = q.clamp_min(0.0) * scale[:, None, None]
            need = q[:, :lead + 7, 2].sum(1)
            expect = q[:, :lead + 7, 0].sum(1)
            on_hand = torch.rand(n, device="cuda") * scale * 20.0
            on_order = torch.rand(n, device="cuda") * scale * 5.0
            pack = packs[torch.randint(0, packs.shape[0], (n,), device="cuda")]
            n_packs = torch.ceil((need - on_hand - on_order).clamp_min(0.0) / pack)
            cost = 2.0 + 40.0 * torch.rand(n, device="cuda")
            store = torch.randint(0, n_store, (n,), device="cuda")
            value = torch.zeros(n_store, device="cuda").index_add_(0, store, (n_packs * pack * cost).float())
            short = (expect - on_hand).clamp_min(0.0)
            totals = torch.stack([value.sum(), n_packs.sum(), (n_packs > 0).float().mean(), short.sum()])
            figs = torch.cat([value, totals, n_packs, q[:, :7, 1].flatten()])
        figs.tolist()
        del raw, w, sales, scale, day, x, cat, q, need, expect, on_hand, on_order, pack, n_packs, cost, store, value
        del short, totals, figs


# ---------------------------------------------------------------- prescription verification (encoder fine-tuning)


class _RxEncoder(_nn.Module):
    """A bidirectional pre-norm transformer over [CLS], the prescription's text tokens and the patient's active
    medicines (a drug table), with a position and a segment table; heads for the text's field tags, the
    prescription's verification flags (from CLS) and each active medicine's interaction with the prescription."""

    def __init__(self, vocab, n_drug, d, heads, layers, n_pos, n_tag, n_flag):
        super().__init__()
        self.tok, self.drug = _nn.Embedding(vocab, d), _nn.Embedding(n_drug, d)
        self.pos, self.seg = _nn.Embedding(n_pos, d), _nn.Embedding(3, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.tag, self.flag = _nn.Linear(d, n_tag), mlp(d, d, n_flag, act=_nn.GELU)
        self.inter = mlp(2 * d, d, 1, act=_nn.GELU)

    def forward(self, text, meds, keep, seg):
        t1 = text.shape[1]
        x = torch.cat([self.tok(text), self.drug(meds)], 1)
        x = x + self.pos(torch.arange(x.shape[1], device=x.device))[None] + self.seg(seg)
        m = keep[:, None, None, :]
        for blk in self.blocks:
            x = blk(x, m)
        x = self.norm(x)
        cls, med = x[:, 0], x[:, t1:]
        inter = self.inter(torch.cat([med, cls[:, None].expand_as(med)], -1)).float()[..., 0]
        return self.tag(x[:, 1:t1]).float(), self.flag(cls).float(), inter


@_workload("prescription verification fine-tuning (random init standing in for a pretrained encoder, the lower blocks frozen): 8-32 prescriptions a step (drawn), each [CLS], 48-256 text tokens (drawn per prescription, padded to the step's longest rounded up to 16) of a 12,000-token vocabulary and 0-12 of the patient's active medicines (drawn per prescription, padded to 12) of a 2,500-drug table, a 272-row position table and 3 segments, under a key mask; 6 pre-norm blocks of width 384, 6 heads, an MLP of 1,536, the tables and the lower 4 blocks frozen, the top 2 blocks and the final norm (lr 3e-5) and the heads (lr 1e-3) trained; 11 BIO field tags (drug, strength, dose, route, frequency) on the text by masked cross-entropy, 6 verification flags (dose out of range, interaction, allergy, duplicate therapy, wrong route, illegible) from CLS by BCE, and each active medicine's interaction with the prescription by BCE masked to the medicines present; AdamW, clipping, bf16 autocast, 620 steps; the losses read back every 10 steps and every 124 steps a no-grad pass over 32 prescriptions of 256 tokens and 12 medicines with the tag accuracy read back")
def rx_verify_encoder_finetune(rng):
    vocab, n_drug, d, heads, layers = 12000, 2500, _smoke(384, 32), _smoke(6, 2), _smoke(6, 2)
    frozen, n_tag, n_flag, n_med = _smoke(4, 1), 11, 6, _smoke(12, 3)
    t_lo, t_hi = _smoke(48, 6), _smoke(256, 16)
    n_pos = _smoke(272, 1 + t_hi + n_med)
    model = _RxEncoder(vocab, n_drug, d, heads, layers, n_pos, n_tag, n_flag).cuda()
    for m in (model.tok, model.drug, model.pos, model.seg, *model.blocks[:frozen]):
        m.requires_grad_(False)
    top = [p for blk in model.blocks[frozen:] for p in blk.parameters()] + list(model.norm.parameters())
    heads_p = [p for m in (model.tag, model.flag, model.inter) for p in m.parameters()]
    opt = torch.optim.AdamW([{"params": top, "lr": 3e-5}, {"params": heads_p, "lr": 1e-3}], weight_decay=0.01)
    train = top + heads_p
    steps, every = _smoke(620, 3), _smoke(124, 2)

    def batch(t_lens, m_lens):
        b, t = len(t_lens), -(-max(t_lens) // 16) * 16
        keep_t = keep_mask([n + 1 for n in t_lens], t + 1)
        keep_m = keep_mask(m_lens, n_med)
        keep = torch.cat([keep_t, keep_m], 1)
        text = torch.randint(3, vocab, (b, t + 1), device="cuda").masked_fill(~keep_t, 0)
        text[:, 0] = 1
        meds = torch.randint(1, n_drug, (b, n_med), device="cuda").masked_fill(~keep_m, 0)
        seg = torch.cat([torch.zeros(b, 1, dtype=torch.long, device="cuda"),
                         torch.ones(b, t, dtype=torch.long, device="cuda"),
                         torch.full((b, n_med), 2, dtype=torch.long, device="cuda")], 1)
        tags = torch.randint(0, n_tag, (b, t), device="cuda")
        flags = (torch.rand(b, n_flag, device="cuda") < 0.1).float()
        inter = (torch.rand(b, n_med, device="cuda") < 0.2).float()
        return text, meds, keep, seg, keep_t[:, 1:].float(), keep_m.float(), tags, flags, inter

    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(8, 2), _smoke(32, 3))
        t_lens = [rng.randint(t_lo, t_hi) for _ in range(b)]
        m_lens = [rng.randint(0, n_med) for _ in range(b)]
        text, meds, keep, seg, w_t, w_m, tags, flags, inter = batch(t_lens, m_lens)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            tag_out, flag_out, inter_out = model(text, meds, keep, seg)
        l_tag = (_F.cross_entropy(tag_out.transpose(1, 2), tags, reduction="none") * w_t).sum() / w_t.sum()
        l_flag = _F.binary_cross_entropy_with_logits(flag_out, flags)
        l_int = (_F.binary_cross_entropy_with_logits(inter_out, inter, reduction="none") * w_m).sum()
        l_int = l_int / w_m.sum().clamp_min(1.0)
        loss = l_tag + l_flag + l_int
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(train, 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_tag.detach(), l_flag.detach(), l_int.detach()]).tolist()
        del text, meds, keep, seg, w_t, w_m, tags, flags, inter, tag_out, flag_out, inter_out, l_tag, l_flag, l_int
        del loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                nb = _smoke(32, 2)
                text, meds, keep, seg, w_t, w_m, tags, flags, inter = batch([t_hi] * nb, [n_med] * nb)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    tag_out, flag_out, inter_out = model(text, meds, keep, seg)
                acc = ((tag_out.argmax(-1) == tags).float() * w_t).sum() / w_t.sum()
            acc.item()
            del text, meds, keep, seg, w_t, w_m, tags, flags, inter, tag_out, flag_out, inter_out, acc


# ---------------------------------------------------------------- patient directions (decoder sampling, KV cache)


class _CachedBlock(_nn.Module):
    """A pre-norm decoder block whose keys and values go into a preallocated cache at the given slots; attention
    by SDPA under a boolean mask."""

    def __init__(self, d, heads):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.n1, self.n2 = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.proj = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.ff = mlp(d, 4 * d, d, act=_nn.GELU)

    def forward(self, x, kc, vc, start, mask):
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, t, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)
        kc[:, :, start:start + t] = k
        vc[:, :, start:start + t] = v
        end = start + t
        a = _F.scaled_dot_product_attention(q, kc[:, :, :end].to(q.dtype), vc[:, :, :end].to(q.dtype), attn_mask=mask)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.ff(self.n2(x))


@_workload("patient directions sampling (random init, a decoder-only transformer with a key-value cache): 50-52 requests (drawn) of 1-8 prescriptions (drawn), each a prompt of 16-96 tokens (drawn per prescription: the drug, strength, the prescriber's sig codes, the patient's language and reading level) of an 8,000-token vocabulary, left-padded to the request's longest under a key mask, then 24-64 new tokens (drawn per request) of plain-language directions; 4 pre-norm blocks of width 384, 6 heads, an MLP of 1,536, a 160-row position table, the output tied to the token table, in eval mode under bf16 autocast; a prefill of the prompt under a causal and key mask, then one token at a time with keys and values written into a preallocated bf16 cache; each token by top-40 sampling with a temperature (0.6-1.0, drawn per request) by Gumbel-max over the top-k values, a presence penalty from a count of the tokens drawn (scatter_add_ in fp32); each request's tokens read back once")
def patient_directions_sample(rng):
    vocab, d, heads, layers = 8000, _smoke(384, 32), _smoke(6, 2), _smoke(4, 1)
    p_lo, p_hi, g_lo, g_hi, top_k = _smoke(16, 3), _smoke(96, 8), _smoke(24, 2), _smoke(64, 4), 40
    n_pos = p_hi + g_hi
    tok, pos = _nn.Embedding(vocab, d).cuda(), _nn.Embedding(n_pos, d).cuda()
    blocks = _nn.ModuleList(_CachedBlock(d, heads) for _ in range(layers)).cuda()
    norm = _nn.LayerNorm(d).cuda()
    mods = _nn.ModuleList([tok, pos, blocks, norm]).eval()
    mods.requires_grad_(False)
    dh = d // heads

    nreq = rng.randint(_smoke(50, 2), _smoke(52, 2))
    for _ in range(nreq):
        b, n_new, temp = rng.randint(1, 8), rng.randint(g_lo, g_hi), rng.uniform(0.6, 1.0)
        lens = [rng.randint(p_lo, p_hi) for _ in range(b)]
        p = max(lens)
        with torch.no_grad():
            keep_p = keep_mask(lens, p).flip(-1)
            keep = torch.cat([keep_p, torch.ones(b, n_new, dtype=torch.bool, device="cuda")], 1)
            ids = torch.randint(3, vocab, (b, p), device="cuda").masked_fill(~keep_p, 0)
            caches = [(torch.zeros(b, heads, p + n_new, dh, dtype=torch.bfloat16, device="cuda"),
                       torch.zeros(b, heads, p + n_new, dh, dtype=torch.bfloat16, device="cuda"))
                      for _ in range(layers)]
            causal = torch.ones(p, p, dtype=torch.bool, device="cuda").tril()
            eye = torch.eye(p, dtype=torch.bool, device="cuda")
            mask = ((causal[None] & keep_p[:, None, :]) | eye[None])[:, None]
            counts = torch.zeros(b, vocab, device="cuda")
            out = torch.zeros(b, n_new, dtype=torch.long, device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                x = tok(ids) + pos(torch.arange(p, device="cuda"))[None]
                for blk, (kc, vc) in zip(blocks, caches):
                    x = blk(x, kc, vc, 0, mask)
                last = norm(x[:, -1:])
            for i in range(n_new):
                logits = _F.linear(last[:, 0].float(), tok.weight) / temp - 1.5 * counts.clamp_max(1.0)
                vals, idx = logits.topk(top_k, -1)
                g = -torch.log(-torch.log(torch.rand_like(vals).clamp(1e-6, 1.0 - 1e-6)))
                nxt = idx.gather(1, (vals + g).argmax(-1, keepdim=True))
                counts.scatter_add_(1, nxt, torch.ones(b, 1, device="cuda"))
                out[:, i] = nxt[:, 0]
                if i + 1 == n_new:
                    break
                s = p + i
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    x = tok(nxt) + pos.weight[s][None, None]
                    m = keep[:, None, None, :s + 1]
                    for blk, (kc, vc) in zip(blocks, caches):
                        x = blk(x, kc, vc, s, m)
                    last = norm(x)
        out.tolist()
        del keep_p, keep, ids, caches, causal, eye, mask, counts, out, x, last, logits, vals, idx, g, nxt


# ---------------------------------------------------------------- restocking policy (PPO in a simulated pharmacy)


class _RestockPolicy(_nn.Module):
    """A set transformer over one pharmacy's drugs: each drug's state and identity embedded, pre-norm blocks, a
    categorical order size per drug and the pharmacy's value from the mean."""

    def __init__(self, fin, n_drug, d, heads, layers, n_act):
        super().__init__()
        self.inp, self.ident = _nn.Linear(fin, d), _nn.Embedding(n_drug, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads, 2 * d) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.pi, self.v = _nn.Linear(d, n_act), mlp(d, d, 1, act=_nn.Tanh)

    def forward(self, obs):
        x = self.inp(obs) + self.ident.weight[None]
        for blk in self.blocks:
            x = blk(x)
        x = self.norm(x)
        return self.pi(x).float(), self.v(x.mean(1)).float()[:, 0]


@_workload("pharmacy restocking policy training (random init, a set transformer actor-critic trained by PPO in a simulated inventory): 128-384 simulated pharmacies an iteration (drawn) of 24 drugs each, 30-60 days a rollout (drawn per iteration); the simulator written on the device: each drug's demand rate and each pharmacy's weekday pattern drawn, Poisson demand, a 3-day lead-time pipeline shifted each day, sales capped by stock, costs of holding, lost sales, ordering (fixed and per pack) and a daily expiry fraction; the observation 9 features a drug (stock, the pipeline, the demand rate, yesterday's demand and lost sales, the weekday as sine and cosine); the policy 2 pre-norm blocks of width 128, 4 heads, an MLP of 256 over the drugs with a drug identity table, 8 order sizes (0-24 packs) per drug sampled by Gumbel-max, the value from the mean; GAE (gamma 0.99, lambda 0.95) written out day by day backwards; PPO with a clipped ratio of 0.2, value and entropy terms, 3 epochs of 4 minibatches (a randperm on the device, index_select) per iteration; Adam, clipping, bf16 autocast, 30 iterations; the mean reward and the losses read back every iteration and every 10 iterations a greedy 60-day rollout of 256 pharmacies with the mean cost read back")
def pharmacy_restock_ppo_train(rng):
    n_drug, fin, d, heads, layers, lead = _smoke(24, 4), 9, _smoke(128, 16), _smoke(4, 2), _smoke(2, 1), 3
    sizes = torch.tensor([0.0, 1.0, 2.0, 4.0, 8.0, 12.0, 16.0, 24.0], device="cuda")
    n_act = sizes.shape[0]
    model = _RestockPolicy(fin, n_drug, d, heads, layers, n_act).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    iters, every, epochs, n_mb = _smoke(30, 2), _smoke(10, 1), _smoke(3, 1), _smoke(4, 2)
    gamma, lam, clip = 0.99, 0.95, 0.2

    def reset(e):
        rate = 0.5 + 6.0 * torch.rand(e, n_drug, device="cuda")
        dow = 0.7 + 0.6 * torch.rand(e, 7, device="cuda")
        stock = torch.poisson(rate * 5.0)
        pipe = torch.zeros(e, n_drug, lead, device="cuda")
        return rate, dow, stock, pipe, torch.zeros(e, n_drug, device="cuda"), torch.zeros(e, n_drug, device="cuda")

    def observe(day, rate, stock, pipe, dem, lost):
        e = rate.shape[0]
        ang = torch.full((e, n_drug, 1), day * 2 * math.pi / 7, device="cuda")
        return torch.cat([(stock / 20.0)[..., None], pipe / 20.0, (rate / 5.0)[..., None], (dem / 10.0)[..., None],
                          (lost / 10.0)[..., None], ang.sin(), ang.cos()], -1)

    def env_step(day, act, rate, dow, stock, pipe):
        order = sizes[act]
        stock = stock + pipe[..., 0]
        pipe = torch.cat([pipe[..., 1:], order[..., None]], -1)
        dem = torch.poisson(rate * dow[:, day % 7, None])
        sold = torch.minimum(stock, dem)
        lost = dem - sold
        stock = stock - sold
        waste = torch.floor(stock * 0.01)
        stock = stock - waste
        cost = 0.02 * stock + 1.0 * lost + 0.3 * (order > 0).float() + 0.05 * order + 0.5 * waste
        return stock, pipe, dem, lost, -cost.mean(-1)

    for it in range(iters):
        e, horizon = rng.randint(_smoke(128, 3), _smoke(384, 4)), rng.randint(_smoke(30, 3), _smoke(60, 4))
        model.eval()
        obs_l, act_l, logp_l, val_l, rew_l = [], [], [], [], []
        with torch.no_grad():
            rate, dow, stock, pipe, dem, lost = reset(e)
            for day in range(horizon):
                obs = observe(day, rate, stock, pipe, dem, lost)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits, v = model(obs)
                g = -torch.log(-torch.log(torch.rand_like(logits).clamp(1e-6, 1.0 - 1e-6)))
                act = (logits + g).argmax(-1)
                logp = logits.log_softmax(-1).gather(-1, act[..., None])[..., 0].sum(-1)
                stock, pipe, dem, lost, r = env_step(day, act, rate, dow, stock, pipe)
                obs_l.append(obs)
                act_l.append(act)
                logp_l.append(logp)
                val_l.append(v)
                rew_l.append(r)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                _, v_last = model(observe(horizon, rate, stock, pipe, dem, lost))
            adv_l, gae, nxt_v = [], torch.zeros(e, device="cuda"), v_last
            for day in reversed(range(horizon)):
                delta = rew_l[day] + gamma * nxt_v - val_l[day]
                gae = delta + gamma * lam * gae
                adv_l.append(gae)
                nxt_v = val_l[day]
            adv = torch.stack(adv_l[::-1]).flatten()
            ret = adv + torch.stack(val_l).flatten()
            adv = (adv - adv.mean()) / (adv.std() + 1e-6)
            obs_a, act_a = torch.stack(obs_l).flatten(0, 1), torch.stack(act_l).flatten(0, 1)
            logp_a, rew_mean = torch.stack(logp_l).flatten(), torch.stack(rew_l).mean()
        del obs_l, act_l, logp_l, val_l, rew_l, adv_l
        model.train()
        n, mb = obs_a.shape[0], obs_a.shape[0] // n_mb
        for _ in range(epochs):
            perm = torch.randperm(n, device="cuda")
            for j in range(n_mb):
                ix = perm[j * mb:(j + 1) * mb]
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits, v = model(obs_a.index_select(0, ix))
                lp_all = logits.log_softmax(-1)
                lp = lp_all.gather(-1, act_a.index_select(0, ix)[..., None])[..., 0].sum(-1)
                ratio = torch.exp(lp - logp_a.index_select(0, ix))
                a_mb = adv.index_select(0, ix)
                l_pi = -torch.minimum(ratio * a_mb, ratio.clamp(1.0 - clip, 1.0 + clip) * a_mb).mean()
                l_v = _F.mse_loss(v, ret.index_select(0, ix))
                ent = -(lp_all.exp() * lp_all).sum(-1).mean()
                loss = l_pi + 0.5 * l_v - 0.01 * ent
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
                opt.step()
        torch.stack([rew_mean, l_pi.detach(), l_v.detach(), ent.detach()]).tolist()
        del obs_a, act_a, logp_a, adv, ret, rew_mean, perm, ix, logits, v, lp_all, lp, ratio, a_mb, l_pi, l_v, ent
        del loss, rate, dow, stock, pipe, dem, lost, obs, act, logp, r, g, gae, nxt_v, v_last, delta
        if (it + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                ne, total = _smoke(256, 2), torch.zeros((), device="cuda")
                rate, dow, stock, pipe, dem, lost = reset(ne)
                for day in range(_smoke(60, 3)):
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        logits, _ = model(observe(day, rate, stock, pipe, dem, lost))
                    stock, pipe, dem, lost, r = env_step(day, logits.argmax(-1), rate, dow, stock, pipe)
                    total = total - r.mean()
            total.item()
            del rate, dow, stock, pipe, dem, lost, logits, r, total

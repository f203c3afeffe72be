"""The hundred-and-eighteenth batch of held-out workloads for record.py, second half (see batch118.py): cosmetics,
beauty and personal care, written in torch alone. A virtual lipstick try-on diffusion sampler (a 2-d U-Net denoiser
over lip-region crops conditioned on the lipstick's colour and finish, classifier-free guidance in one doubled batch,
DDIM with drawn batch sizes, resolutions, step counts and guidance scales per request), a beauty product
recommendation service (a causal transformer over shoppers' interaction histories of drawn lengths, candidate
products of drawn counts scored against the last state, the top 20 by topk), cosmetic formulation property training
(a two-layer GRU written out step by step over ingredient lists in INCI order of drawn lengths, viscosity, pH,
emulsion stability, irritation risk and an SPF for the sunscreens) and skincare regimen policy training (an
actor-critic choosing a daily cleanser, serum, moisturiser and sunscreen by Gumbel-max over simulated skin dynamics
of drawn horizons, rewards discounted backwards on the device).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the recommendation service), `rng` the workload's random.Random for every shape, count and sampled
choice, sizes through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where
or masked_fill; no boolean-mask indexing; results read back only at logging points or once per request.
beauty_product_rec_serve uploads its histories and candidates on a side stream (two reused pinned host buffers, one
request ahead, through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under
bf16 autocast. Every position table is sized for the longest padded length that can be drawn.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, TimeResBlock, _sincos, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- virtual lipstick try-on diffusion sampler


class _LipUnet(_nn.Module):
    """A 2-d U-Net over the lip crop and its conditioning (the source crop and the lip mask, 4 channels, concatenated
    to the noisy residual): one conditioned residual block a level, stride-2 convolutions down, nearest upsampling
    with skips up; the timestep's sine features, the shade's CIELAB colour by a linear layer and the finish embedding
    (the last row the null label) summed into the conditioning."""

    def __init__(self, widths, n_finish):
        super().__init__()
        te = 4 * widths[0]
        self.temb = mlp(widths[0], te, te, act=_nn.SiLU)
        self.color, self.finish = _nn.Linear(3, te), _nn.Embedding(n_finish + 1, te)
        self.inp = _nn.Conv2d(3 + 4, widths[0], 3, 1, 1)
        self.enc = _nn.ModuleList(TimeResBlock(a, w, te) for a, w in zip([widths[0]] + widths[:-1], widths))
        self.down = _nn.ModuleList(_nn.Conv2d(w, w, 3, 2, 1) for w in widths[:-1])
        self.dec = _nn.ModuleList(TimeResBlock(a + w, w, te) for a, w in zip(widths[:0:-1], widths[-2::-1]))
        self.out = _nn.Sequential(_nn.GroupNorm(8, widths[0]), _nn.SiLU(), _nn.Conv2d(widths[0], 3, 3, 1, 1))
        self.w0 = widths[0]

    def forward(self, x, cond, t, color, finish):
        te = self.temb(_sincos(t, self.w0)) + self.color(color) + self.finish(finish)
        h, skips = self.inp(torch.cat([x, cond], 1)), []
        for i, blk in enumerate(self.enc):
            h = blk(h, te)
            if i < len(self.down):
                skips.append(h)
                h = self.down[i](h)
        for blk, skip in zip(self.dec, skips[::-1]):
            h = blk(torch.cat([_F.interpolate(h, scale_factor=2, mode="nearest"), skip], 1), te)
        return self.out(h)


@_workload("virtual lipstick try-on diffusion sampling (random init, a conditioned 2-d U-Net with classifier-free guidance): 152-158 requests (drawn) of 2-12 lip-region crops (drawn) at 64, 96 or 128 px square (drawn per request), each with a source crop and a soft lip mask (4 conditioning channels) drawn on the device and a lipstick shade (a CIELAB colour drawn per crop, a finish of 5: matte, satin, gloss, metallic, sheer); a U-Net of widths 64/128/192 (one conditioned residual block a level, stride-2 convolutions, nearest upsampling with skips), timestep, colour and finish embeddings summed, the null finish and a zero colour in the second half of one doubled batch; DDIM (eta 0) over a 1,000-step cosine schedule with 8-30 steps and a guidance scale of 2-6 (drawn per request) under bf16 autocast on the residual added to the source; the try-on composited by the lip mask (torch.where off the lips), per crop the mean CIELAB-proxy colour error inside the lips and the share of lip pixels changed by more than a threshold read back once per request")
def lip_tryon_ddim_sample(rng):
    n_finish = 5
    widths = _smoke([64, 128, 192], [16, 16])
    model = _LipUnet(widths, n_finish).cuda().eval()
    model.requires_grad_(False)
    n_train = 1000
    s_ = torch.arange(n_train + 1, dtype=torch.float64) / n_train
    abar = torch.cos((s_ + 0.008) / 1.008 * math.pi / 2) ** 2
    abar = (abar[1:] / abar[0]).clamp(1e-5, 1.0).tolist()
    res_opts = _smoke([64, 96, 128], [16, 32])

    nreq = rng.randint(_smoke(152, 2), _smoke(158, 3))
    for _ in range(nreq):
        b, r = rng.randint(_smoke(2, 1), _smoke(12, 2)), rng.choice(res_opts)
        n_steps, scale = rng.randint(_smoke(8, 2), _smoke(30, 3)), rng.uniform(2.0, 6.0)
        finishes = [rng.randrange(n_finish) for _ in range(b)]
        ts = [int(round(n_train - 1 - i * (n_train - 1) / n_steps)) for i in range(n_steps)]
        with torch.no_grad():
            src = torch.rand(b, 3, r, r, device="cuda") * 2 - 1
            mask = torch.sigmoid((torch.rand(b, 1, r, r, device="cuda") - 0.6) * 12.0)
            cond = torch.cat([src, mask], 1).repeat(2, 1, 1, 1)
            color = torch.cat([torch.rand(b, 3, device="cuda") * 2 - 1, torch.zeros(b, 3, device="cuda")])
            finish = torch.tensor(finishes + [n_finish] * b, device="cuda")
            x = torch.randn(b, 3, r, r, device="cuda")
            for i, t in enumerate(ts):
                a_t = abar[t]
                a_prev = abar[ts[i + 1]] if i + 1 < len(ts) else 1.0
                tt = torch.full((2 * b,), t, device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    eps = model(torch.cat([x, x]), cond, tt, color, finish).float()
                e_c, e_u = eps.chunk(2)
                e = e_u + scale * (e_c - e_u)
                x0 = ((x - math.sqrt(1 - a_t) * e) / math.sqrt(a_t)).clamp(-2.0, 2.0)
                x = math.sqrt(a_prev) * x0 + math.sqrt(1 - a_prev) * e
            tryon = torch.where(mask > 0.5, (src + x).clamp(-1.0, 1.0), src)
            inside = (mask > 0.5).float()
            err = ((tryon - color[:b, :, None, None]).abs().mean(1, keepdim=True) * inside).sum((1, 2, 3))
            err = err / (inside.sum((1, 2, 3)) + 1.0)
            changed = (((tryon - src).abs().amax(1, keepdim=True) > 0.2).float() * inside).sum((1, 2, 3))
            out = torch.cat([err, changed / (inside.sum((1, 2, 3)) + 1.0)])
        out.tolist()
        del src, mask, cond, color, finish, x, tt, eps, e_c, e_u, e, x0, tryon, inside, err, changed, out


# ---------------------------------------------------------------- beauty product recommendation service


class _ShopperTransformer(_nn.Module):
    """Product, event-kind and rating embeddings with a learned position table, causal pre-norm blocks under a key
    mask; the state at each history's last event scores the candidate products by a dot product with their
    embeddings plus a category bias and a price-band term."""

    def __init__(self, n_item, n_event, n_cat, d, heads, layers, max_len):
        super().__init__()
        self.item, self.event = _nn.Embedding(n_item, d), _nn.Embedding(n_event, d)
        self.pos = _nn.Embedding(max_len, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.cat_bias = _nn.Embedding(n_cat, 1)
        self.q = _nn.Linear(d, d)
        self.n_cat = n_cat

    def forward(self, items, events, last, keep, cand):
        b, t = items.shape
        x = self.item(items) + self.event(events) + self.pos(torch.arange(t, device=items.device))[None]
        causal = torch.ones(t, t, dtype=torch.bool, device=items.device).tril()
        mask = causal[None, None] & keep[:, None, None, :]
        for blk in self.blocks:
            x = blk(x, mask=mask)
        x = self.norm(x)
        u = self.q(x.gather(1, last[:, None, None].expand(b, 1, x.shape[-1]))[:, 0])
        ce = self.item(cand)
        score = (ce @ u[:, :, None])[..., 0].float() / math.sqrt(u.shape[-1])
        return score + self.cat_bias(torch.remainder(cand, self.n_cat))[..., 0].float()


@_workload("beauty product recommendation serving (random init, a causal transformer over shoppers' histories): 2,000-2,080 requests (drawn) of 4-48 shoppers (drawn), each with a history of 8-160 interactions (drawn per shopper, padded to the request's longest rounded up to a multiple of 8, a 160-row position table) of products (of 40,000 skincare, make-up, hair and fragrance products) and event kinds (of 8: view, add to cart, purchase, wishlist, review 1-5 stars folded in), and 100-600 candidate products (drawn per request); int32 product and event ids uploaded on a side stream from two reused pinned host buffers (filled once, sized for 48 x 160 events and 48 x 600 candidates) one request ahead (two spans, through SideUploads.ahead), widened and wrapped into the tables' ranges on the device; 3 causal pre-norm blocks (width 128, 4 heads) under the key mask, the state at each history's last event gathered; candidates scored by a dot product with their embeddings plus a category bias (of 64), already-purchased candidates demoted by masked_fill against the history (a broadcast comparison); the top 20 products and scores by topk; each request's results read back once")
def beauty_product_rec_serve(rng):
    n_item, n_event, n_cat = _smoke(40000, 500), 8, 64
    d, heads, layers = _smoke(128, 16), _smoke(4, 2), _smoke(3, 1)
    lo_h, max_h, max_b = _smoke(8, 4), _smoke(160, 16), _smoke(48, 3)
    lo_c, hi_c, top = _smoke(100, 24), _smoke(600, 32), _smoke(20, 5)
    model = _ShopperTransformer(n_item, n_event, n_cat, d, heads, layers, max_h).cuda().eval()
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    span_h = max_b * max_h * 2
    host = [torch.randint(0, 2**30, (span_h + max_b * hi_c,), dtype=torch.int32, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)

    nreq = rng.randint(_smoke(2000, 3), _smoke(2080, 4))
    plan = []
    for _ in range(nreq):
        b = rng.randint(_smoke(4, 1), max_b)
        lengths = [rng.randint(lo_h, max_h) for _ in range(b)]
        plan.append((lengths, min(max_h, -(-max(lengths) // 8) * 8), rng.randint(lo_c, hi_c)))

    def spans(p):
        b, t, c = len(p[0]), p[1], p[2]
        return slice(0, b * t * 2), slice(span_h, span_h + b * c)

    for (lengths, t, c), hist, cand in up.ahead(plan, spans):
        with torch.no_grad():
            b = len(lengths)
            ids = hist.view(b, t, 2).long()
            keep = keep_mask(lengths, t)
            items = torch.remainder(ids[..., 0], n_item).masked_fill(~keep, 0)
            events = torch.remainder(ids[..., 1], n_event).masked_fill(~keep, 0)
            cands = torch.remainder(cand.view(b, c).long(), n_item)
            last = torch.tensor([n - 1 for n in lengths], device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                score = model(items, events, last, keep, cands)
            bought = ((cands[:, :, None] == items[:, None, :]) & (events == 2)[:, None, :]).any(-1)
            score = score.masked_fill(bought, -1e4)
            top_s, top_i = score.topk(top, -1)
            top_item = cands.gather(1, top_i)
            out = torch.cat([top_s.flatten(), top_item.float().flatten()])
        out.tolist()
        del hist, cand, ids, keep, items, events, cands, last, score, bought, top_s, top_i, top_item, out


# ---------------------------------------------------------------- cosmetic formulation property training (GRU)


class _FormulaGru(_nn.Module):
    """Ingredient, phase and function embeddings with the log concentration, a two-layer GRU written out step by
    step (each layer's input and hidden projections, reset, update and candidate gates), padded steps keeping the
    state by torch.where; the product category embedding joined to the last state for the property heads."""

    def __init__(self, n_ingr, n_phase, n_func, n_cat, d, hidden, layers):
        super().__init__()
        self.ingr, self.phase, self.func = (_nn.Embedding(n_ingr, d), _nn.Embedding(n_phase, d),
                                            _nn.Embedding(n_func, d))
        self.conc = _nn.Linear(2, d)
        self.wx = _nn.ModuleList(_nn.Linear(d if i == 0 else hidden, 3 * hidden) for i in range(layers))
        self.wh = _nn.ModuleList(_nn.Linear(hidden, 3 * hidden) for _ in range(layers))
        self.cat = _nn.Embedding(n_cat, hidden)
        self.trunk = mlp(2 * hidden, hidden, hidden, act=_nn.GELU)
        self.reg, self.stab, self.spf = _nn.Linear(hidden, 3), _nn.Linear(hidden, 3), _nn.Linear(hidden, 1)
        self.hidden = hidden

    def forward(self, ingr, phase, func, conc, keep, cat):
        b, t = ingr.shape
        pct = torch.stack([torch.log1p(conc), conc / 10.0], -1)
        x = self.ingr(ingr) + self.phase(phase) + self.func(func) + self.conc(pct)
        hs = [x.new_zeros(b, self.hidden, dtype=torch.float32) for _ in self.wx]
        for i in range(t):
            inp, k = x[:, i], keep[:, i, None]
            for j, (wx, wh) in enumerate(zip(self.wx, self.wh)):
                xr, xz, xn = wx(inp).chunk(3, -1)
                hr, hz, hn = wh(hs[j]).chunk(3, -1)
                r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
                h_new = (1 - z) * torch.tanh(xn + r * hn) + z * hs[j]
                hs[j] = torch.where(k, h_new.float(), hs[j])
                inp = hs[j]
        g = self.trunk(torch.cat([hs[-1], self.cat(cat)], -1))
        return self.reg(g).float(), self.stab(g).float(), self.spf(g)[:, 0].float()


@_workload("cosmetic formulation property training (random init, a two-layer GRU written out step by step): 96-384 formulations a step (drawn) of 6-36 ingredients each (drawn per formulation, padded to the step's longest) in INCI order, each ingredient an id (of 4,000), a phase (of 5: water, oil, emulsifier, powder, active), a function (of 16) and a concentration drawn on the device (sorted descending), a product category (of 12: cream, serum, foundation, sunscreen, shampoo, ...); the GRU (hidden 256) written out with each layer's input and hidden projections and gates, padded steps keeping the state by torch.where; log viscosity, pH and an irritation score by a Huber loss, emulsion stability after a 12-week test (of 3) by cross-entropy and an SPF by a masked L1 loss on the sunscreens only; AdamW, clipping, bf16 autocast, 88 steps; the losses read back every 20 steps and every 22 steps a no-grad evaluation of 512 formulations of 36 ingredients with the pH error and stability accuracy read back")
def formulation_property_gru_train(rng):
    n_ingr, n_phase, n_func, n_cat = _smoke(4000, 100), 5, 16, 12
    d, hidden, layers = _smoke(192, 16), _smoke(256, 16), _smoke(2, 1)
    model = _FormulaGru(n_ingr, n_phase, n_func, n_cat, d, hidden, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    lo, hi = _smoke(6, 3), _smoke(36, 6)

    def formulas(lengths, t):
        b = len(lengths)
        keep = keep_mask(lengths, t)
        conc = (torch.rand(b, t, device="cuda") ** 3 * 60.0).sort(-1, descending=True).values * keep
        ingr = torch.randint(0, n_ingr, (b, t), device="cuda")
        phase = torch.randint(0, n_phase, (b, t), device="cuda")
        func = torch.randint(0, n_func, (b, t), device="cuda")
        cat = torch.randint(0, n_cat, (b,), device="cuda")
        reg = torch.stack([torch.randn(b, device="cuda") * 1.5 + 8.0, torch.rand(b, device="cuda") * 4 + 4.0,
                           torch.rand(b, device="cuda") * 3], -1)
        stab = torch.randint(0, 3, (b,), device="cuda")
        spf = torch.rand(b, device="cuda") * 45 + 5
        return ingr, phase, func, conc, keep, cat, reg, stab, spf

    steps = _smoke(88, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(96, 2), _smoke(384, 4))
        lengths = [rng.randint(lo, hi) for _ in range(b)]
        ingr, phase, func, conc, keep, cat, reg, stab, spf = formulas(lengths, max(lengths))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            p_reg, p_stab, p_spf = model(ingr, phase, func, conc, keep, cat)
        sun = (cat == 3).float()
        l_reg = _F.huber_loss(p_reg, reg / torch.tensor([8.0, 7.0, 3.0], device="cuda"))
        l_stab = _F.cross_entropy(p_stab, stab)
        l_spf = ((p_spf - spf / 30.0).abs() * sun).sum() / (sun.sum() + 1.0)
        loss = l_reg + 0.5 * l_stab + 0.3 * l_spf
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_reg.detach(), l_stab.detach(), l_spf.detach()]).tolist()
        del ingr, phase, func, conc, keep, cat, reg, stab, spf, p_reg, p_stab, p_spf, sun, l_reg, l_stab, l_spf, loss
        if (step + 1) % _smoke(22, 2) == 0:
            model.eval()
            with torch.no_grad():
                nb = _smoke(512, 3)
                ingr, phase, func, conc, keep, cat, reg, stab, spf = formulas([hi] * nb, hi)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    p_reg, p_stab, p_spf = model(ingr, phase, func, conc, keep, cat)
                out = torch.stack([(p_reg[:, 1] * 7.0 - reg[:, 1]).abs().mean(),
                                   (p_stab.argmax(-1) == stab).float().mean()])
            out.tolist()
            del ingr, phase, func, conc, keep, cat, reg, stab, spf, p_reg, p_stab, p_spf, out


# ---------------------------------------------------------------- skincare regimen policy (actor-critic)


class _RegimenPolicy(_nn.Module):
    """An MLP trunk over the skin state, the day's UV index and humidity, the skin-type embedding and the last
    day's choices; one categorical head per product slot and a value head."""

    def __init__(self, n_state, n_type, slots, d):
        super().__init__()
        self.skin_type = _nn.Embedding(n_type, d)
        self.inp = _nn.Linear(n_state + 2 + sum(slots), d)
        self.trunk = mlp(d, d, d, layers=3, act=_nn.SiLU, norm=True)
        self.heads = _nn.ModuleList(_nn.Linear(d, k) for k in slots)
        self.value = mlp(d, d // 2, 1, act=_nn.SiLU)

    def forward(self, state, env, prev, skin_type):
        h = _F.silu(self.inp(torch.cat([state, env, prev], -1)) + self.skin_type(skin_type))
        h = self.trunk(h)
        return [hd(h).float() for hd in self.heads], self.value(h)[:, 0].float()


@_workload("skincare regimen policy training (random init, an MLP actor-critic over simulated skin dynamics): 256-1,024 simulated users a step (drawn) over a horizon of 14-42 days (drawn per step); an 8-dimensional skin state (hydration, sebum, acne, pigmentation, redness, barrier integrity, fine lines, sensitivity) with a skin type (of 5) drawn on the device, a daily UV index and humidity drawn; each day 4 product slots (cleanser of 4, serum of 10 actives, moisturiser of 5, sunscreen of 3 SPF levels) chosen by Gumbel-max from the policy's heads, their effects gathered from fixed random effect tables and added to a fixed random linear drift with noise, an irritation penalty by torch.where when a retinoid or acid serum meets a sensitised barrier, a product cost; an MLP trunk (width 256, LayerNorm, SiLU) and a value head; discounted returns (0.97) computed backwards on the device, advantage actor-critic with normalised advantages, a value loss and an entropy bonus; AdamW, clipping, bf16 autocast, 41 steps; the mean return read back every 5 steps and every 10 steps a no-grad greedy rollout of 1,024 users over 42 days with the mean final acne and pigmentation read back")
def skincare_regimen_policy_train(rng):
    n_state, n_type, slots, d = 8, 5, [4, 10, 5, 3], _smoke(256, 16)
    model = _RegimenPolicy(n_state, n_type, slots, d).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    drift = (torch.eye(n_state) * 0.95 + torch.randn(n_state, n_state, generator=gen) * 0.02).cuda()
    effects = [(torch.randn(k, n_state, generator=gen) * 0.05).cuda() for k in slots]
    costs = [(torch.rand(k, generator=gen) * 0.05).cuda() for k in slots]
    bad = torch.tensor([0.0, 0.0, 0.5, 0.4, 0.6, -0.5, 0.2, 0.3], device="cuda")
    harsh = torch.zeros(slots[1], device="cuda")
    harsh[[2, 3, 7]] = 1.0  # retinoid, glycolic and salicylic acid serums
    gamma = 0.97

    def rollout(n, days, greedy):
        state = torch.rand(n, n_state, device="cuda")
        skin_type = torch.randint(0, n_type, (n,), device="cuda")
        prev = torch.zeros(n, sum(slots), device="cuda")
        logps, ents, values, rewards = [], [], [], []
        for _ in range(days):
            env = torch.stack([torch.rand(n, device="cuda") * 10, torch.rand(n, device="cuda")], -1)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits, value = model(state, env / torch.tensor([10.0, 1.0], device="cuda"), prev, skin_type)
            step_eff = state @ drift + torch.randn_like(state) * 0.02
            lp_sum, ent, picks, cost = 0.0, 0.0, [], 0.0
            for k, (lg, eff, cst) in enumerate(zip(logits, effects, costs)):
                lp = lg.log_softmax(-1)
                if greedy:
                    a = lg.argmax(-1)
                else:
                    u = torch.rand_like(lg).clamp(1e-6, 1 - 1e-6)
                    a = (lg.detach() - torch.log(-torch.log(u))).argmax(-1)
                lp_sum = lp_sum + lp.gather(1, a[:, None])[:, 0]
                ent = ent - (lp.exp() * lp).sum(-1)
                step_eff = step_eff + eff.index_select(0, a)
                cost = cost + cst.index_select(0, a)
                picks.append(_F.one_hot(a, slots[k]).float())
                if k == 1:
                    irritated = torch.where((harsh.index_select(0, a) > 0) & (state[:, 7] > 0.6), 1.0, 0.0)
            uv_harm = env[:, 0] * 0.004 * (1 - picks[3][:, 1:].sum(-1) * 0.4)
            state = (step_eff + irritated[:, None] * 0.05).clamp(0.0, 1.0)
            state = torch.cat([state[:, :3], state[:, 3:4] + uv_harm[:, None], state[:, 4:]], -1).clamp(0.0, 1.0)
            rewards.append(-(state * bad).sum(-1) - cost - 0.3 * irritated)
            prev = torch.cat(picks, -1)
            logps.append(lp_sum)
            ents.append(ent)
            values.append(value)
        return state, torch.stack(logps, 1), torch.stack(ents, 1), torch.stack(values, 1), rewards

    steps = _smoke(41, 3)
    for step in range(steps):
        model.train()
        n, days = rng.randint(_smoke(256, 4), _smoke(1024, 8)), rng.randint(_smoke(14, 2), _smoke(42, 4))
        _, logp, ent, value, rewards = rollout(n, days, False)
        ret, rets = torch.zeros(n, device="cuda"), []
        for r in rewards[::-1]:
            ret = r + gamma * ret
            rets.append(ret)
        ret = torch.stack(rets[::-1], 1)
        adv = ret - value.detach()
        adv = (adv - adv.mean()) / (adv.std() + 1e-6)
        loss = -(adv * logp).mean() + 0.5 * _F.mse_loss(value, ret) - 0.01 * ent.mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 5 == 0:
            ret[:, 0].mean().item()
        del logp, ent, value, rewards, ret, rets, adv, loss
        if (step + 1) % _smoke(10, 2) == 0:
            model.eval()
            with torch.no_grad():
                state, _, _, _, rewards = rollout(_smoke(1024, 8), _smoke(42, 4), True)
                out = torch.stack([state[:, 2].mean(), state[:, 3].mean()])
            out.tolist()
            del state, rewards, out

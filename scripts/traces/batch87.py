"""The eighty-seventh batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch85_b.py are): insurance, claims and actuarial work, written in torch alone, first half. Vehicle damage
segmentation training (a residual encoder with an FPN decoder over claim photographs of drawn sizes and aspect
ratios, damage-type and car-part segmentation and a per-photo severity head), claims fraud detection training (a
heterogeneous message-passing network over a drawn graph of claims, policy-holders, repair shops and clinics, edges by
index_select and index_add with degree normalisation), policy lapse survival training (a GRU over quarterly policy
histories of drawn lengths per policy, discrete-time hazards masked to each history, static product, channel and
region embeddings, survival curves at evaluation points) and claim-form understanding training (a layout-aware
transformer over the tokens of scanned claim forms of drawn token counts with their 2-d boxes, field tagging and form
type classification). Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device,
`rng` the workload's random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)` so
that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: history lengths, token counts, graph sizes
and batch sizes are fixed on the host, padding handled by masks multiplied in or by torch.where / masked_fill, no
boolean-mask indexing; losses and metrics are read back only at logging points. All four are single-stream. The
models run under bf16 autocast. Every position and coordinate table is sized for the longest padded length or the
largest coordinate that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new87.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and for
which of them the CPU smoke run (RECORD_SMOKE=1) ran.
"""

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, mlp, randint

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _loguniform(rng, lo, hi, mult=1):
    return _b.rec._loguniform(rng, lo, hi, mult)


# ---------------------------------------------------------------- vehicle damage segmentation


class _Res(_nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1, self.b1 = _nn.Conv2d(cin, cout, 3, stride, 1, bias=False), _nn.BatchNorm2d(cout)
        self.c2, self.b2 = _nn.Conv2d(cout, cout, 3, 1, 1, bias=False), _nn.BatchNorm2d(cout)
        self.sc = None if stride == 1 and cin == cout else _nn.Sequential(
            _nn.Conv2d(cin, cout, 1, stride, bias=False), _nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.b2(self.c2(_F.relu(self.b1(self.c1(x)))))
        return _F.relu(y + (x if self.sc is None else self.sc(x)))


class _DamageSeg(_nn.Module):
    def __init__(self, widths, fpn, n_damage, n_parts):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, widths[0], 7, 2, 3, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU(), _nn.MaxPool2d(3, 2, 1))
        self.stages, c = _nn.ModuleList(), widths[0]
        for i, w in enumerate(widths):
            self.stages.append(_nn.Sequential(_Res(c, w, 1 if i == 0 else 2), _Res(w, w, 1)))
            c = w
        self.lat = _nn.ModuleList(_nn.Conv2d(w, fpn, 1) for w in widths)
        self.smooth = _nn.Sequential(_nn.Conv2d(fpn, fpn, 3, 1, 1, bias=False), _nn.BatchNorm2d(fpn), _nn.ReLU())
        self.damage, self.parts = _nn.Conv2d(fpn, n_damage, 1), _nn.Conv2d(fpn, n_parts, 1)
        self.severity = mlp(widths[-1], 128, 4)

    def forward(self, x):
        x = self.stem(x)
        feats = []
        for s in self.stages:
            x = s(x)
            feats.append(x)
        top = self.lat[-1](feats[-1])
        for lat, f in zip(reversed(self.lat[:-1]), reversed(feats[:-1])):
            top = lat(f) + _F.interpolate(top, size=f.shape[-2:], mode="nearest")
        top = self.smooth(top)
        return self.damage(top), self.parts(top), self.severity(feats[-1].mean((2, 3)))


@_workload("vehicle damage segmentation training (random init, a motor-claims photo assessor): 6-16 claim photographs a step (drawn) of 256-512 x 256-640 pixels (height and width drawn per step, multiples of 32, so aspect ratios vary); a ResNet-18-style encoder (64-128-256-512 channels, batch norm) with an FPN decoder (128 channels) to stride 4, per-pixel heads for 8 damage types (the last one undamaged) and 24 car parts, and a per-photo severity head (4 grades) from pooled features; cross-entropy with 10% of the damage pixels unlabelled and ignored (-1 filled by torch.where), AdamW, clipping, bf16 autocast, 530 steps; the losses read back every 20 steps and every 132 steps a no-grad evaluation of 8 photos at 512 x 512 with the pixel accuracy and mean damaged area read back")
def vehicle_damage_seg_train(rng):
    widths, fpn = _smoke([64, 128, 256, 512], [4, 8, 8, 16]), _smoke(128, 8)
    n_damage, n_parts = 8, 24
    model = _DamageSeg(widths, fpn, n_damage, n_parts).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)

    def photos(b, h, w):
        x = torch.randn(b, 3, h, w, device="cuda").contiguous(memory_format=torch.channels_last)
        dmg = torch.randint(0, n_damage, (b, h // 4, w // 4), device="cuda")
        unl = torch.rand(b, h // 4, w // 4, device="cuda") < 0.1
        dmg = torch.where(unl, torch.full_like(dmg, -1), dmg)
        part = torch.randint(0, n_parts, (b, h // 4, w // 4), device="cuda")
        sev = torch.randint(0, 4, (b,), device="cuda")
        return x, dmg, part, sev

    steps = _smoke(530, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(6, 2), _smoke(16, 3))
        h, w = randint(rng, _smoke(256, 64), _smoke(512, 96), 32), randint(rng, _smoke(256, 64), _smoke(640, 128), 32)
        x, dmg, part, sev = photos(b, h, w)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            d_log, p_log, s_log = model(x)
        l_d = _F.cross_entropy(d_log.float(), dmg, ignore_index=-1)
        l_p = _F.cross_entropy(p_log.float(), part)
        l_s = _F.cross_entropy(s_log.float(), sev)
        loss = l_d + 0.5 * l_p + 0.2 * l_s
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_d.detach(), l_p.detach(), l_s.detach()]).tolist()
        del x, dmg, part, sev, d_log, p_log, s_log, l_d, l_p, l_s, loss
        if (step + 1) % _smoke(132, 2) == 0:
            model.eval()
            r = _smoke(512, 96)
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                x, dmg, _, _ = photos(_smoke(8, 2), r, r)
                d_log, _, s_log = model(x)
                pred = d_log.argmax(1)
                acc = ((pred == dmg).float() * (dmg >= 0).float()).sum() / (dmg >= 0).float().sum()
                area = (pred != n_damage - 1).float().mean()
            torch.stack([acc, area]).tolist()
            del x, dmg, d_log, s_log, pred, acc, area


# ---------------------------------------------------------------- claims fraud graph network


class _HeteroLayer(_nn.Module):
    """One R-GCN-style step: for each relation, source states transformed, gathered along the edges by index_select,
    summed into the targets by index_add and divided by the target's degree; a GRU-like gated update per node type."""

    def __init__(self, d, relations, types):
        super().__init__()
        self.rel = _nn.ModuleDict({r: _nn.Linear(d, d, bias=False) for r in relations})
        self.self_ = _nn.ModuleDict({t: _nn.Linear(d, d) for t in types})
        self.gate = _nn.ModuleDict({t: _nn.Linear(2 * d, d) for t in types})
        self.norm = _nn.ModuleDict({t: _nn.LayerNorm(d) for t in types})

    def forward(self, h, edges, degs):
        agg = {t: self.self_[t](x) for t, x in h.items()}
        for r, (src_t, dst_t, src, dst) in edges.items():
            m = self.rel[r](h[src_t]).index_select(0, src)
            agg[dst_t] = agg[dst_t].index_add(0, dst, m / degs[r].index_select(0, dst)[:, None].to(m.dtype))
        out = {}
        for t, x in h.items():
            a = _F.relu(agg[t])
            g = torch.sigmoid(self.gate[t](torch.cat([x, a], -1)))
            out[t] = self.norm[t](x + g * a)
        return out


@_workload("claims fraud detection training (random init, a heterogeneous graph network over an insurer's claims network): a region drawn each step of 20,000-60,000 claims, 12,000-40,000 policy-holders, 800-3,000 repair shops and 400-1,500 clinics (drawn per step), each claim linked to its policy-holder, with 1-2 repair-shop and 0-3 clinic edges per claim on average, 0.5-2 holder-to-holder shared-attribute edges per holder and 1-4 clinic edges per repair shop (edge counts drawn per step, endpoints drawn on the device); 24-48 input features per node type, a 3-layer heterogeneous message-passing network (width 128, 5 relations and their reverses, index_select and index_add aggregation divided by degree, gated residual updates, layer norm); weighted binary cross-entropy (positive weight 10) for fraud on a 60% labelled share of the claims (a mask multiplied in) and a provider-collusion head on the repair shops; AdamW, clipping, bf16 autocast, 290 steps; the losses read back every 20 steps and every 58 steps a no-grad scoring of a freshly drawn region with the top-200 claim scores read back")
def claim_fraud_hetero_gnn_train(rng):
    d, layers = _smoke(128, 16), _smoke(3, 1)
    feats = dict(claim=48, holder=32, shop=24, clinic=24)
    types = list(feats)
    relations = ["filed_by", "files", "repaired_at", "repairs", "treated_at", "treats", "shares", "shares_rev",
                 "shop_clinic", "clinic_shop"]
    enc = _nn.ModuleDict({t: mlp(f, d, d) for t, f in feats.items()}).cuda()
    gnn = _nn.ModuleList(_HeteroLayer(d, relations, types) for _ in range(layers)).cuda()
    fraud_head, collusion_head = mlp(d, d, 1).cuda(), mlp(d, d, 1).cuda()
    params = [p for m in (enc, gnn, fraud_head, collusion_head) for p in m.parameters()]
    opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=1e-4)

    def region():
        n = dict(claim=rng.randint(_smoke(20000, 60), _smoke(60000, 120)),
                 holder=rng.randint(_smoke(12000, 40), _smoke(40000, 80)),
                 shop=rng.randint(_smoke(800, 5), _smoke(3000, 10)),
                 clinic=rng.randint(_smoke(400, 4), _smoke(1500, 8)))
        x = {t: torch.randn(n[t], feats[t], device="cuda") for t in types}
        nc = n["claim"]
        e_shop = int(nc * rng.uniform(1.0, 2.0))
        e_clin = int(nc * rng.uniform(0.0, 3.0)) + 1
        e_share = int(n["holder"] * rng.uniform(0.5, 2.0)) + 1
        e_sc = int(n["shop"] * rng.uniform(1.0, 4.0)) + 1
        ar = torch.arange(nc, device="cuda")
        owner = torch.randint(0, n["holder"], (nc,), device="cuda")
        sc_c, sc_s = torch.randint(0, nc, (e_shop,), device="cuda"), torch.randint(0, n["shop"], (e_shop,), device="cuda")
        cc_c, cc_k = torch.randint(0, nc, (e_clin,), device="cuda"), torch.randint(0, n["clinic"], (e_clin,), device="cuda")
        sh_a, sh_b = (torch.randint(0, n["holder"], (e_share,), device="cuda") for _ in range(2))
        ss_s, ss_k = torch.randint(0, n["shop"], (e_sc,), device="cuda"), torch.randint(0, n["clinic"], (e_sc,), device="cuda")
        edges = {"filed_by": ("holder", "claim", owner, ar), "files": ("claim", "holder", ar, owner),
                 "repaired_at": ("shop", "claim", sc_s, sc_c), "repairs": ("claim", "shop", sc_c, sc_s),
                 "treated_at": ("clinic", "claim", cc_k, cc_c), "treats": ("claim", "clinic", cc_c, cc_k),
                 "shares": ("holder", "holder", sh_a, sh_b), "shares_rev": ("holder", "holder", sh_b, sh_a),
                 "shop_clinic": ("shop", "clinic", ss_s, ss_k), "clinic_shop": ("clinic", "shop", ss_k, ss_s)}
        degs = {r: torch.zeros(n[dt], device="cuda").index_add_(0, dst, torch.ones(dst.shape[0], device="cuda"))
                .clamp(min=1) for r, (_, dt, _, dst) in edges.items()}
        y = (torch.rand(nc, device="cuda") < 0.04).float()
        lab = (torch.rand(nc, device="cuda") < 0.6).float()
        y_shop = (torch.rand(n["shop"], device="cuda") < 0.02).float()
        return x, edges, degs, y, lab, y_shop

    def forward(x, edges, degs):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = {t: enc[t](v) for t, v in x.items()}
            for layer in gnn:
                h = layer(h, edges, degs)
            return fraud_head(h["claim"])[:, 0].float(), collusion_head(h["shop"])[:, 0].float()

    steps = _smoke(290, 3)
    pos_w = torch.tensor(10.0, device="cuda")
    for step in range(steps):
        gnn.train()
        x, edges, degs, y, lab, y_shop = region()
        f, c = forward(x, edges, degs)
        l_f = (_F.binary_cross_entropy_with_logits(f, y, pos_weight=pos_w, reduction="none") * lab).sum() / lab.sum()
        l_c = _F.binary_cross_entropy_with_logits(c, y_shop, pos_weight=pos_w)
        loss = l_f + 0.3 * l_c
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_f.detach(), l_c.detach()]).tolist()
        del x, edges, degs, y, lab, y_shop, f, c, l_f, l_c, loss
        if (step + 1) % _smoke(58, 2) == 0:
            gnn.eval()
            with torch.no_grad():
                x, edges, degs, y, lab, y_shop = region()
                f, _ = forward(x, edges, degs)
                top = torch.sigmoid(f).topk(min(_smoke(200, 10), f.shape[0]))
            top.values.cpu(), top.indices.cpu()
            del x, edges, degs, y, lab, y_shop, f, top


# ---------------------------------------------------------------- policy lapse survival model


class _LapseGRU(_nn.Module):
    """Static embeddings added to a projection of each quarter's features, a stacked GRU written out step by step
    (each layer's input projection for all quarters at once, then the recurrent matmul and gates per quarter, as a
    custom-cell model does), hazard and claim-count heads on every quarter."""

    def __init__(self, n_feat, d, hidden, layers, n_prod, n_chan, n_reg):
        super().__init__()
        self.inp = _nn.Linear(n_feat, d)
        self.prod, self.chan, self.reg = _nn.Embedding(n_prod, 32), _nn.Embedding(n_chan, 8), _nn.Embedding(n_reg, 24)
        self.static = _nn.Linear(64, d)
        self.w_ih = _nn.ModuleList(_nn.Linear(d if i == 0 else hidden, 3 * hidden) for i in range(layers))
        self.w_hh = _nn.ModuleList(_nn.Linear(hidden, 3 * hidden) for _ in range(layers))
        self.hazard = mlp(hidden + d, hidden, 1, act=_nn.GELU)
        self.claims = mlp(hidden + d, hidden, 1, act=_nn.GELU)

    def forward(self, x, prod, chan, reg):
        s = self.static(torch.cat([self.prod(prod), self.chan(chan), self.reg(reg)], -1))
        h_seq = self.inp(x) + s[:, None]
        for wi, wh in zip(self.w_ih, self.w_hh):
            gx = wi(_F.dropout(h_seq, 0.1, self.training))
            h = torch.zeros(x.shape[0], wh.in_features, device=x.device, dtype=gx.dtype)
            outs = []
            for t in range(x.shape[1]):
                xr, xz, xn = gx[:, t].chunk(3, -1)
                hr, hz, hn = wh(h).chunk(3, -1)
                r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
                h = (1 - z) * torch.tanh(xn + r * hn) + z * h
                outs.append(h)
            h_seq = torch.stack(outs, 1)
        z = torch.cat([h_seq, s[:, None].expand(-1, h_seq.shape[1], -1).to(h_seq.dtype)], -1)
        return self.hazard(z)[..., 0].float(), self.claims(z)[..., 0].float()


@_workload("policy lapse survival training (random init, a deep discrete-time survival model for policy retention): 512-2,048 policies a step (log-uniform, a multiple of 64), each with its own quarterly history of 2-40 quarters (drawn per policy, padded to the step's longest) of 28 features; product (40), channel (8) and region (120) embeddings, a 2-layer GRU (hidden 256) written out quarter by quarter (input projections for all quarters at once, the recurrent matmul and gates per quarter), per-quarter lapse hazards and a Poisson claim-count head; the survival likelihood of each policy's lapse or censoring quarter (drawn on the device within its history) built by masks of quarter indices, Poisson loss on the claims masked to the history, AdamW, clipping, bf16 autocast, 106 steps; the losses read back every 20 steps and every 26 steps survival curves of 4,096 policies over 40 quarters by a cumulative product with the 10/50/90% quantiles of their 1-, 3- and 5-year survival read back")
def policy_lapse_survival_train(rng):
    n_feat, d, hidden, layers = 28, _smoke(128, 16), _smoke(256, 16), _smoke(2, 1)
    n_prod, n_chan, n_reg, max_m = 40, 8, 120, _smoke(40, 12)
    model = _LapseGRU(n_feat, d, hidden, layers, n_prod, n_chan, n_reg).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)

    def cohort(lengths):
        b, t = len(lengths), max(lengths)
        x = torch.randn(b, t, n_feat, device="cuda")
        st = [torch.randint(0, n, (b,), device="cuda") for n in (n_prod, n_chan, n_reg)]
        ln = torch.tensor(lengths, device="cuda")
        months = torch.arange(t, device="cuda")[None]
        valid = (months < ln[:, None]).float()
        return x, st, ln, months, valid

    steps = _smoke(106, 3)
    for step in range(steps):
        model.train()
        b = _loguniform(rng, _smoke(512, 4), _smoke(2048, 8), _smoke(64, 4))
        lengths = [rng.randint(2, max_m) for _ in range(b)]
        x, st, ln, months, valid = cohort(lengths)
        event_t = (torch.rand(b, device="cuda") * ln).long()
        lapsed = (torch.rand(b, device="cuda") < 0.25).float()
        counts = (torch.rand(x.shape[:2], device="cuda") < 0.05).float() + (torch.rand(x.shape[:2], device="cuda") < 0.01).float()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            haz, lam = model(x, *st)
        before = (months < event_t[:, None]).float()
        at = (months == event_t[:, None]).float()
        logh, log1mh = _F.logsigmoid(haz), _F.logsigmoid(-haz)
        nll = -((before * log1mh).sum(1) + at.mul(lapsed[:, None] * logh + (1 - lapsed[:, None]) * log1mh).sum(1))
        l_s = nll.mean()
        l_c = (_F.poisson_nll_loss(lam, counts, reduction="none") * valid).sum() / valid.sum()
        loss = l_s + 0.5 * l_c
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_s.detach(), l_c.detach()]).tolist()
        del x, st, ln, months, valid, event_t, lapsed, counts, haz, lam, before, at, logh, log1mh, nll, l_s, l_c, loss
        if (step + 1) % _smoke(26, 2) == 0:
            model.eval()
            with torch.no_grad():
                x, st, ln, months, valid = cohort([max_m] * _smoke(4096, 8))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    haz, _ = model(x, *st)
                surv = torch.cumprod(1 - torch.sigmoid(haz), 1)
                q = surv[:, [min(q_, max_m - 1) for q_ in (3, 11, 19)]].quantile(torch.tensor([0.1, 0.5, 0.9], device="cuda"), 0)
            q.tolist()
            del x, st, ln, months, valid, haz, surv, q


# ---------------------------------------------------------------- claim-form layout understanding


class _LayoutEncoder(_nn.Module):
    """LayoutLM-style embeddings (word, 1-d position, x0/y0/x1/y1, width and height tables over 0..1000, page segment)
    and pre-norm transformer blocks under a key mask; a token tagging head and a form-type head on the first token."""

    def __init__(self, vocab, d, heads, layers, max_pos, coord, n_tags, n_types):
        super().__init__()
        self.word, self.pos = _nn.Embedding(vocab, d), _nn.Embedding(max_pos, d)
        self.x, self.y = _nn.Embedding(coord, d), _nn.Embedding(coord, d)
        self.w, self.h = _nn.Embedding(coord, d), _nn.Embedding(coord, d)
        self.page = _nn.Embedding(4, d)
        self.norm_in = _nn.LayerNorm(d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.tag, self.kind = _nn.Linear(d, n_tags), mlp(d, d, n_types, act=_nn.Tanh)

    def forward(self, ids, box, page, key):
        t = ids.shape[1]
        x = self.word(ids) + self.pos(torch.arange(t, device=ids.device))[None] + self.page(page)
        x = x + self.x(box[..., 0]) + self.y(box[..., 1]) + self.x(box[..., 2]) + self.y(box[..., 3])
        x = x + self.w(box[..., 2] - box[..., 0]) + self.h(box[..., 3] - box[..., 1])
        x = _F.dropout(self.norm_in(x), 0.1, self.training)
        for blk in self.blocks:
            x = blk(x, mask=key)
        x = self.norm(x)
        return self.tag(x), self.kind(x[:, 0])


@_workload("claim-form understanding training (random init, a LayoutLM-style model for scanned claim forms): 8-32 forms a step (drawn), each with its own OCR token count of 48-512 (drawn per form, padded to the step's longest, a multiple of 32) over a 30,000-word vocabulary, each token with a 2-d box (x0 < x1, y0 < y1 on a 0-1000 grid, drawn on the device) and a page index (0-3); word, 1-d position (512 rows, the longest padded form), x, y, width and height tables (1,001 rows each) and a page table, a 6-block pre-norm transformer (width 384, 6 heads) under a key mask; BIO tagging of 25 claim fields (51 tags) with pads ignored, and the form type (14 types) from the first token; AdamW, clipping, bf16 autocast, 400 steps; the losses read back every 20 steps and every 100 steps a no-grad evaluation of 48 forms of 512 tokens with the tagging accuracy read back")
def claim_form_layout_train(rng):
    vocab, d, heads, layers = _smoke(30000, 500), _smoke(384, 32), _smoke(6, 2), _smoke(6, 1)
    max_tok, coord, n_tags, n_types = _smoke(512, 64), 1001, 2 * 25 + 1, 14
    model = _LayoutEncoder(vocab, d, heads, layers, max_tok, coord, n_tags, n_types).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.01)

    def forms(lengths):
        b, t = len(lengths), -(-max(lengths) // 32) * 32
        keep = torch.arange(t, device="cuda")[None] < torch.tensor(lengths, device="cuda")[:, None]
        ids = torch.randint(2, vocab, (b, t), device="cuda").masked_fill(~keep, 0)
        x0 = torch.randint(0, 900, (b, t), device="cuda")
        y0 = torch.randint(0, 980, (b, t), device="cuda")
        x1 = x0 + torch.randint(1, 101, (b, t), device="cuda")  # at most 1000
        y1 = y0 + torch.randint(1, 21, (b, t), device="cuda")  # at most 999
        box = torch.stack([x0, y0, x1, y1], -1) * keep[..., None]
        page = torch.randint(0, 4, (b, t), device="cuda") * keep
        tags = torch.randint(0, n_tags, (b, t), device="cuda").masked_fill(~keep, -100)
        kind = torch.randint(0, n_types, (b,), device="cuda")
        key = keep[:, None, None, :]
        return ids, box, page, key, tags, kind

    steps = _smoke(400, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(8, 2), _smoke(32, 4))
        lengths = [rng.randint(_smoke(48, 8), max_tok) for _ in range(b)]
        ids, box, page, key, tags, kind = forms(lengths)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            tag_log, kind_log = model(ids, box, page, key)
        l_t = _F.cross_entropy(tag_log.float().flatten(0, 1), tags.flatten(), ignore_index=-100)
        l_k = _F.cross_entropy(kind_log.float(), kind)
        loss = l_t + 0.3 * l_k
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_t.detach(), l_k.detach()]).tolist()
        del ids, box, page, key, tags, kind, tag_log, kind_log, l_t, l_k, loss
        if (step + 1) % _smoke(100, 2) == 0:
            model.eval()
            with torch.no_grad():
                ids, box, page, key, tags, kind = forms([max_tok] * _smoke(48, 3))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    tag_log, kind_log = model(ids, box, page, key)
                acc = (tag_log.argmax(-1) == tags).float().mean()
            acc.item()
            del ids, box, page, key, tags, kind, tag_log, kind_log, acc

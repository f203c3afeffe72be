"""The ninety-fifth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch93_b.py are): public health and epidemiology, written in torch alone, first half. Outbreak-report tagging
training (a transformer encoder over disease-surveillance reports of drawn lengths, per-token entity tags and a
report-level disease class), regional outbreak forecasting training (a GRU written out step by step over left-padded
weekly surveillance histories of drawn lengths, decoded autoregressively into quantile forecasts for a drawn
horizon), contact-network epidemic surrogate training (a stochastic SIR epidemic simulated on the device over a drawn
contact network by index_select and index_add, and a message-passing network trained to predict who is infected in
the following week) and a chest X-ray tuberculosis screening service (a ResNet-style convnet over grey-scale studies
of drawn resolutions, multi-label findings, a TB score, class-activation peaks and per-site positive counts). Same
conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned host
buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths, graph
sizes, horizons, resolutions and batch sizes are fixed on the host, padding handled by masks multiplied in or by
torch.where / masked_fill, no boolean-mask indexing; losses and metrics are read back only at logging points or once
per request. chest_xray_tb_screen_serve uploads its studies on a side stream (two reused pinned host buffers, one
request ahead, the main stream waiting on an event, the tensors record_stream'ed, through workload_helpers.SideUploads);
the other three are single-stream. The tagger, the graph network and the screening convnet run under bf16 autocast;
the forecaster runs in fp32. Every position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new95.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and for
which of them the CPU smoke run (RECORD_SMOKE=1) ran.
"""

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- outbreak-report tagging (transformer encoder)


class _ReportTagger(_nn.Module):
    """Token, position and report-source embeddings, pre-norm blocks under a key mask; per-token entity-tag logits
    and, from attention pooling over the kept tokens, disease-class logits."""

    def __init__(self, vocab, d, heads, layers, max_pos, n_src, n_tags, n_dis):
        super().__init__()
        self.tok, self.pos, self.src = _nn.Embedding(vocab, d), _nn.Embedding(max_pos, d), _nn.Embedding(n_src, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.tag, self.pool, self.dis = mlp(d, d, n_tags, act=_nn.GELU), _nn.Linear(d, 1), _nn.Linear(d, n_dis)

    def forward(self, ids, keep, src):
        t = ids.shape[1]
        x = self.tok(ids) + self.pos(torch.arange(t, device=ids.device))[None] + self.src(src)[:, None]
        x = _F.dropout(x, 0.1, self.training)
        key = keep[:, None, None, :]
        for blk in self.blocks:
            x = blk(x, mask=key)
        x = self.norm(x)
        score = self.pool(x)[..., 0].float().masked_fill(~keep, -1e4)
        pooled = (torch.softmax(score, -1)[..., None].to(x.dtype) * x).sum(1)
        return self.tag(x).float(), self.dis(pooled).float()


@_workload("outbreak-report tagging training (random init, a transformer encoder over disease-surveillance reports): 8-32 reports a step (drawn), each of 64-512 tokens (drawn per report over a 30,000-token vocabulary, padded to the step's longest rounded up to a multiple of 64, position table of 512 rows) with a report source (of 40) added to every token; a 6-block pre-norm transformer (width 384, 6 heads) under a key mask; per-token tags of 9 BIO labels (B and I of disease, pathogen, location and case count, and O) by a 2-layer head, cross-entropy with pads ignored, and a 60-way disease class from attention pooling over the kept tokens; AdamW, clipping, bf16 autocast, 400 steps; the two losses read back every 20 steps and every 100 steps a no-grad evaluation of 32 reports of 512 tokens with token-tag and disease accuracy read back")
def outbreak_report_tagging_train(rng):
    vocab, d, heads, layers = _smoke(30000, 500), _smoke(384, 32), _smoke(6, 2), _smoke(6, 1)
    max_tok, n_src, n_tags, n_dis = _smoke(512, 64), 40, 9, 60
    model = _ReportTagger(vocab, d, heads, layers, max_tok, n_src, n_tags, n_dis).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.01)
    mult = _smoke(64, 16)

    def reports(lengths):
        b, t = len(lengths), -(-max(lengths) // mult) * mult
        keep = keep_mask(lengths, t)
        ids = torch.randint(2, vocab, (b, t), device="cuda").masked_fill(~keep, 0)
        src = torch.randint(0, n_src, (b,), device="cuda")
        tags = torch.randint(0, n_tags, (b, t), device="cuda").masked_fill(~keep, -100)
        dis = torch.randint(0, n_dis, (b,), device="cuda")
        return ids, keep, src, tags, dis

    steps = _smoke(400, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(8, 2), _smoke(32, 4))
        ids, keep, src, tags, dis = reports([rng.randint(_smoke(64, 8), max_tok) for _ in range(b)])
        with torch.autocast("cuda", dtype=torch.bfloat16):
            t_log, d_log = model(ids, keep, src)
        l_t = _F.cross_entropy(t_log.flatten(0, 1), tags.flatten(), ignore_index=-100)
        l_d = _F.cross_entropy(d_log, dis)
        loss = l_t + 0.5 * l_d
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_t.detach(), l_d.detach()]).tolist()
        del ids, keep, src, tags, dis, t_log, d_log, l_t, l_d, loss
        if (step + 1) % _smoke(100, 2) == 0:
            model.eval()
            with torch.no_grad():
                ids, keep, src, tags, dis = reports([max_tok] * _smoke(32, 3))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    t_log, d_log = model(ids, keep, src)
                w = keep.float()
                tok_acc = ((t_log.argmax(-1) == tags).float() * w).sum() / w.sum()
                acc = torch.stack([tok_acc, (d_log.argmax(-1) == dis).float().mean()])
            acc.tolist()
            del ids, keep, src, tags, dis, t_log, d_log, w, tok_acc, acc


# ---------------------------------------------------------------- regional outbreak forecasting (GRU by hand)


def _gru_step(gx, h, hh):
    """One GRU update of h from the input part gx (precomputed, 3 gates) and the recurrent layer hh."""
    xr, xz, xn = gx.chunk(3, -1)
    hr, hz, hn = hh(h).chunk(3, -1)
    r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
    n = torch.tanh(xn + r * hn)
    return n + z * (h - n)


class _QuantileForecaster(_nn.Module):
    """An encoder GRU over the history (input gates for all weeks in one matmul, the recurrence step by step, pads
    kept out by torch.where), then a decoder GRU fed its previous median, the target week's seasonal features and the
    region embedding, a quantile head at every horizon week."""

    def __init__(self, n_feat, n_region, d, n_q):
        super().__init__()
        self.region = _nn.Embedding(n_region, 32)
        self.enc_in, self.enc_hh = _nn.Linear(n_feat + 32, 3 * d), _nn.Linear(d, 3 * d)
        self.dec_in, self.dec_hh = _nn.Linear(1 + 2 + 32, 3 * d), _nn.Linear(d, 3 * d)
        self.head = mlp(d, d, n_q)
        self.d, self.mid = d, n_q // 2

    def forward(self, x, keep, region, season):
        b, t, _ = x.shape
        emb = self.region(region)
        gx = self.enc_in(torch.cat([x, emb[:, None].expand(b, t, 32)], -1))
        h = x.new_zeros(b, self.d)
        for i in range(t):
            h = torch.where(keep[:, i, None], _gru_step(gx[:, i], h, self.enc_hh), h)
        prev, out = x[:, -1, :1], []
        for k in range(season.shape[1]):
            h = _gru_step(self.dec_in(torch.cat([prev, season[:, k], emb], -1)), h, self.dec_hh)
            q = self.head(h)
            out.append(q)
            prev = q[:, self.mid:self.mid + 1]
        return torch.stack(out, 1)


@_workload("regional outbreak forecasting training (random init, a GRU encoder-decoder written out step by step, in fp32): 64-256 regions a step (drawn) over a window of 26-104 weeks (drawn per step), each region's reporting history 13 weeks to the whole window (drawn per region, left-padded, the recurrence held by torch.where on pads), 6 weekly features (log cases, ILI share, test positivity, log tests, week-of-year sine and cosine) drawn on the device and a region embedding (of 3,000, width 32); an encoder GRU of width 256 (input gates for all weeks in one matmul), then a decoder GRU for a horizon of 4-12 weeks (drawn per step) fed its previous median, the target week's seasonal features and the region embedding, 7 quantiles (2.5-97.5%) per week from a 2-layer head; pinball loss; Adam, clipping, 110 steps; the loss read back every 20 steps and every 36 steps a no-grad evaluation of 512 regions over 104 weeks and a 12-week horizon with the pinball loss and the 80% interval coverage read back")
def outbreak_forecast_gru_train(rng):
    n_feat, n_region, d = 6, 3000, _smoke(256, 32)
    levels = [0.025, 0.1, 0.25, 0.5, 0.75, 0.9, 0.975]
    model = _QuantileForecaster(n_feat, n_region, d, len(levels)).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    q = torch.tensor(levels, device="cuda")
    max_t, max_h = _smoke(104, 12), _smoke(12, 3)

    def regions(b, t, lengths, horizon):
        keep = torch.arange(t, device="cuda")[None] >= (t - torch.tensor(lengths, device="cuda"))[:, None]
        x = torch.randn(b, t, n_feat, device="cuda") * keep[..., None]
        region = torch.randint(0, n_region, (b,), device="cuda")
        week = (torch.randint(0, 52, (b, 1), device="cuda") + torch.arange(horizon, device="cuda")[None]).float()
        season = torch.stack([torch.sin(week * (6.2832 / 52)), torch.cos(week * (6.2832 / 52))], -1)
        y = torch.randn(b, horizon, device="cuda")
        return x, keep, region, season, y

    def pinball(pred, y):
        err = y[..., None] - pred
        return torch.maximum(q * err, (q - 1) * err).mean()

    steps = _smoke(110, 3)
    for step in range(steps):
        model.train()
        b, t = rng.randint(_smoke(64, 4), _smoke(256, 8)), rng.randint(_smoke(26, 6), max_t)
        lengths = [rng.randint(min(_smoke(13, 3), t), t) for _ in range(b)]
        x, keep, region, season, y = regions(b, t, lengths, rng.randint(_smoke(4, 2), max_h))
        loss = pinball(model(x, keep, region, season), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.detach().item()
        del x, keep, region, season, y, loss
        if (step + 1) % _smoke(36, 2) == 0:
            model.eval()
            with torch.no_grad():
                n = _smoke(512, 8)
                x, keep, region, season, y = regions(n, max_t, [max_t] * n, max_h)
                pred = model(x, keep, region, season)
                cover = ((y >= pred[..., 1]) & (y <= pred[..., 5])).float().mean()
                out = torch.stack([pinball(pred, y), cover])
            out.tolist()
            del x, keep, region, season, y, pred, cover, out


# ---------------------------------------------------------------- contact-network epidemic surrogate (SIR + GNN)


class _ContactGnn(_nn.Module):
    """Node features (S/I/R state, log degree, the step's transmission and recovery rates) and an age-group embedding;
    message-passing layers: a projection of each node gated per edge by its contact duration, gathered by
    index_select, summed into the receivers by index_add and normalised by degree, a residual MLP update with
    LayerNorm; a per-node infection logit."""

    def __init__(self, n_in, n_age, d, layers):
        super().__init__()
        self.inp, self.age = _nn.Linear(n_in, d), _nn.Embedding(n_age, d)
        self.msg = _nn.ModuleList(_nn.Linear(d, d) for _ in range(layers))
        self.gate = _nn.ModuleList(_nn.Linear(2, d) for _ in range(layers))
        self.upd = _nn.ModuleList(mlp(2 * d, d, d, act=_nn.GELU) for _ in range(layers))
        self.norm = _nn.ModuleList(_nn.LayerNorm(d) for _ in range(layers))
        self.head = mlp(d, d, 1, act=_nn.GELU)

    def forward(self, feat, age, src, dst, ew, inv_deg):
        h = self.inp(feat) + self.age(age)
        for msg, gate, upd, norm in zip(self.msg, self.gate, self.upd, self.norm):
            m = msg(h).index_select(0, src) * torch.sigmoid(gate(ew))
            agg = h.new_zeros(h.shape).index_add_(0, dst, m.to(h.dtype))
            h = norm(h + upd(torch.cat([h, agg * inv_deg.to(h.dtype)], -1)))
        return self.head(h)[..., 0].float()


def _sir_days(state, days, src, dst, w, beta, gamma):
    """`days` days of a discrete-time stochastic SIR epidemic: each susceptible node infected with probability
    1 - exp(-beta * its infectious contact-hours), each infectious node recovering with probability gamma."""
    s, i, r = state
    n = s.shape[0]
    for _ in range(days):
        press = torch.zeros(n, device="cuda").index_add_(0, dst, i.index_select(0, src) * w)
        new = s * (torch.rand(n, device="cuda") < 1 - torch.exp(-beta * press)).float()
        rec = i * (torch.rand(n, device="cuda") < gamma).float()
        s, i, r = s - new, i + new - rec, r + rec
    return s, i, r


@_workload("contact-network epidemic surrogate training (random init, a message-passing network over a simulated SIR epidemic): each step a contact network of 5,000-30,000 people (drawn), each linked to 4 neighbours on a ring (households and workplaces) plus 2-6 random contacts on average (the multiplier drawn per step), both directions, contact hours (0-8) drawn on the device; a stochastic SIR epidemic (transmission rate 0.02-0.08 per contact-hour and recovery probability 0.1-0.25 a day drawn per step, 0.2% seeded) simulated without gradients for 5-25 days (drawn) by index_select and index_add, then 7 more days for the labels (infected during the next week); 4 layers (width 96) of contact-gated messages by index_select and index_add with degree normalisation, residual MLP updates with LayerNorm, 9 age groups embedded; binary cross-entropy with a positive weight of 10 on the nodes still susceptible; AdamW, clipping, bf16 autocast, 400 steps; the loss read back every 20 steps and every 100 steps, on a fresh network of 30,000 people after 15 days, the share of next-week infections among the top 5% of scores read back")
def contact_network_sir_gnn_train(rng):
    d, layers, n_age = _smoke(96, 16), _smoke(4, 1), 9
    model = _ContactGnn(6, n_age, d, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-5)
    pos_weight = torch.tensor(10.0, device="cuda")

    def epidemic(n, mult, days, beta, gamma):
        i = torch.arange(n, device="cuda")
        ring_dst = torch.cat([(i + 1) % n, (i + 2) % n])
        r_src, r_dst = torch.randint(0, n, (n * mult // 2,), device="cuda"), torch.randint(0, n, (n * mult // 2,),
                                                                                          device="cuda")
        src = torch.cat([i, i, r_src, ring_dst, r_dst])
        dst = torch.cat([ring_dst, r_dst, i, i, r_src])
        half = torch.rand(src.shape[0] // 2, device="cuda") * 8
        w = torch.cat([half, half])
        deg = torch.zeros(n, device="cuda").index_add_(0, dst, torch.ones_like(w))
        seed = (torch.rand(n, device="cuda") < 0.002).float()
        with torch.no_grad():
            s, inf, r = _sir_days((1 - seed, seed, torch.zeros_like(seed)), days, src, dst, w, beta, gamma)
            s2, _, _ = _sir_days((s, inf, r), 7, src, dst, w, beta, gamma)
        y = s - s2
        rates = torch.tensor([beta, gamma], device="cuda").expand(n, 2)
        feat = torch.cat([s[:, None], inf[:, None], r[:, None], torch.log1p(deg)[:, None], rates], 1)
        age = torch.randint(0, n_age, (n,), device="cuda")
        ew = torch.stack([w / 8, (w > 4).float()], 1)
        return (feat, age, src, dst, ew, (1 / deg.clamp(min=1))[:, None]), y, s

    def draw(n, days):
        return epidemic(n, rng.randint(2, 6), days, rng.uniform(0.02, 0.08), rng.uniform(0.1, 0.25))

    steps = _smoke(400, 3)
    for step in range(steps):
        model.train()
        g, y, sus = draw(rng.randint(_smoke(5000, 60), _smoke(30000, 120)), rng.randint(_smoke(5, 2), _smoke(25, 4)))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logit = model(*g)
        bce = _F.binary_cross_entropy_with_logits(logit, y, pos_weight=pos_weight, reduction="none")
        loss = (bce * sus).sum() / sus.sum().clamp(min=1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.detach().item()
        del g, y, sus, logit, bce, loss
        if (step + 1) % _smoke(100, 2) == 0:
            model.eval()
            with torch.no_grad():
                n = _smoke(30000, 120)
                g, y, sus = draw(n, _smoke(15, 3))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    score = model(*g).masked_fill(sus == 0, -1e4)
                top = score.topk(max(1, n // 20)).indices
                share = y.index_select(0, top).sum() / y.sum().clamp(min=1)
            share.item()
            del g, y, sus, score, top, share


# ---------------------------------------------------------------- chest X-ray TB screening service (ResNet-style)


class _Basic(_nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1, self.b1 = _nn.Conv2d(cin, cout, 3, stride, 1, bias=False), _nn.BatchNorm2d(cout)
        self.c2, self.b2 = _nn.Conv2d(cout, cout, 3, 1, 1, bias=False), _nn.BatchNorm2d(cout)
        self.sc = _nn.Identity() if stride == 1 and cin == cout else _nn.Sequential(
            _nn.Conv2d(cin, cout, 1, stride, bias=False), _nn.BatchNorm2d(cout))

    def forward(self, x):
        return _F.relu(self.b2(self.c2(_F.relu(self.b1(self.c1(x))))) + self.sc(x))


class _XrayScreenNet(_nn.Module):
    """A grey-scale ResNet-18-style trunk, generalised-mean pooling, 14 finding logits and a TB logit; the TB head's
    weights applied to the final feature map give the class-activation map."""

    def __init__(self, widths, n_find):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(1, widths[0], 7, 2, 3, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU(), _nn.MaxPool2d(3, 2, 1))
        blocks, c = [], widths[0]
        for i, w in enumerate(widths):
            blocks += [_Basic(c, w, 1 if i == 0 else 2), _Basic(w, w, 1)]
            c = w
        self.trunk = _nn.Sequential(*blocks)
        self.p = _nn.Parameter(torch.tensor(3.0))
        self.find, self.tb = _nn.Linear(c, n_find), _nn.Linear(c, 1)

    def forward(self, x):
        f = self.trunk(self.stem(x))
        pooled = f.float().clamp(min=1e-6).pow(self.p).mean((2, 3)).pow(1 / self.p)
        cam = torch.einsum("bchw,c->bhw", f.float(), self.tb.weight[0].float())
        return self.find(pooled).float(), self.tb(pooled)[:, 0].float(), cam


@_workload("chest X-ray tuberculosis screening serving (random init, a ResNet-18-style convnet over grey-scale radiographs): 2,050-2,150 requests (drawn) of 1-8 studies each (drawn) from one of 32 screening sites (drawn), each site's digitiser resolution one of 384, 448 and 512 px square (fixed per site, drawn once); uint8 pixels uploaded on a side stream from two reused pinned host buffers (filled once, sized for 8 studies of 512 x 512) one request ahead (one span, waited on by event, record_stream'ed), normalised on the device; a channels-last trunk (7x7 stem of 64, max-pool, two basic blocks per stage of 64/128/256/512) under bf16 autocast, generalised-mean pooling, 14 finding probabilities and a TB probability, a class-activation map from the TB head and its peak cell by argmax, finding flags by torch.where against per-finding thresholds and a TB flag at 0.5, each site's positive count kept on the device by index_add; each request's probabilities, flags and peaks read back")
def chest_xray_tb_screen_serve(rng):
    widths, n_find = _smoke([64, 128, 256, 512], [8, 8, 16, 16]), 14
    model = _XrayScreenNet(widths, n_find).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    sizes = _smoke([384, 448, 512], [64, 96])
    n_site, max_studies = _smoke(32, 3), _smoke(8, 2)
    site_res = [rng.choice(sizes) for _ in range(n_site)]
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_studies * max(sizes) ** 2,), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    thresholds = torch.rand(n_find, device="cuda") * 0.4 + 0.4
    site_pos = torch.zeros(n_site, device="cuda")
    nreq = rng.randint(_smoke(2050, 3), _smoke(2150, 4))
    plan = []
    for _ in range(nreq):
        site = rng.randrange(n_site)
        plan.append((site, rng.randint(1, max_studies), site_res[site]))

    nxt = up.upload(0, plan[0][1] * plan[0][2] ** 2)
    for i in range(nreq):
        site, n, res = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, plan[i + 1][1] * plan[i + 1][2] ** 2)
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            x = raw.view(n, 1, res, res).float().div_(255).sub_(0.5).div_(0.25)
            x = x.contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                f_log, tb_log, cam = model(x)
            p_find, p_tb = torch.sigmoid(f_log), torch.sigmoid(tb_log)
            flags = torch.where(p_find > thresholds, 1.0, 0.0)
            tb_flag = torch.where(p_tb > 0.5, 1.0, 0.0)
            peak = cam.flatten(1).argmax(1).float()
            site_pos.index_add_(0, torch.full((n,), site, device="cuda"), tb_flag)
            out = torch.cat([p_find.flatten(), p_tb, flags.flatten(), tb_flag, peak, site_pos[site:site + 1]])
        out.tolist()
        del item, raw, x, f_log, tb_log, cam, p_find, p_tb, flags, tb_flag, peak, out

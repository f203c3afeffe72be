"""The seventy-fourth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch73_b.py are): social science, economics and public policy, written in torch alone, first half. Deep multiple
imputation of census microdata (a column-token transformer over categorical and continuous person-record fields,
trained to reconstruct cells hidden on top of MCAR and MAR missingness drawn on the device from a latent-factor
generator, multiple imputations at evaluation points combined by Rubin's rules), small-area estimation by a BYM2
logistic multilevel model fitted with variational inference (a k-nearest-neighbour area graph, an ICAR prior over its
edges, minibatches of survey respondents, multilevel regression and poststratification over census cells with
posterior intervals by sorting draws), causal inference and uplift modelling with DragonNet plus a weighted MMD
balance penalty (observational data with confounded treatment drawn on the device, targeted regularisation, PEHE, an
AIPW estimate with bootstrap resamples and a Qini curve by sorting at evaluation points), and a regional
unemployment-claims forecasting service (a patch transformer over weekly indicator panels with region embeddings and
monotone quantile heads trained by pinball loss, then requests of region windows uploaded on a side stream and run
under policy-shock scenarios, aggregated to national quantiles). Same conventions as the earlier batches: nothing
downloaded, data drawn at random on the device (or, for the forecasting service, from two reused pinned host
buffers), `rng` the workload's random.Random for every shape, count and sampled choice, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: missingness is a
multiplied-in or torch.where'd mask, step and sample counts are fixed on the host, no boolean-mask indexing; losses,
imputation estimates, area estimates, treatment-effect errors and forecasts are read back only at logging points.
regional_claims_quantile_forecast_serve uses a side stream (uploads waited on by event, the tensors
record_stream'ed); the others are single-stream. The transformers and DragonNet run under bf16 autocast; the
variational small-area model is fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new74.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py
(smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered with dummies, autocast a no-op so that fp32
sizes are counted, streams, events and pinned memory no-ops), and for which of them the CPU smoke run
(RECORD_SMOKE=1) ran.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- deep multiple imputation of census microdata


class _TabImputer(_nn.Module):
    """One token per column: categorical values (global ids, offset per column) embedded, continuous values scaled
    into a per-column vector; hidden cells replaced by a per-column mask embedding; a column embedding added; pre-norm
    blocks; a categorical head over all columns' values and a per-column Gaussian head (mean, log-variance)."""

    def __init__(self, ncat, ncont, vcat, d, heads, layers):
        super().__init__()
        self.ncat, self.vcat = ncat, vcat
        self.cat_emb = _nn.Embedding(vcat + ncat, d)
        self.cont_w = _nn.Parameter(torch.randn(ncont, d) * 0.02)
        self.cont_b = _nn.Parameter(torch.zeros(ncont, d))
        self.cont_mask = _nn.Parameter(torch.randn(ncont, d) * 0.02)
        self.col = _nn.Parameter(torch.randn(ncat + ncont, d) * 0.02)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.cat_head = _nn.Linear(d, vcat)
        self.cont_head = _nn.Parameter(torch.randn(ncont, d, 2) * 0.02)

    def forward(self, cat, cont, hide_cat, hide_cont):
        mask_ids = self.vcat + torch.arange(self.ncat, device=cat.device)
        ec = self.cat_emb(torch.where(hide_cat > 0, mask_ids[None], cat))
        en = cont[..., None] * self.cont_w + self.cont_b
        en = torch.where(hide_cont[..., None] > 0, self.cont_mask.expand_as(en), en)
        h = torch.cat([ec, en], 1) + self.col
        for blk in self.blocks:
            h = blk(h)
        h = self.norm(h)
        return self.cat_head(h[:, :self.ncat]), torch.einsum("bjd,jdk->bjk", h[:, self.ncat:], self.cont_head)


@_workload("deep multiple imputation of census person records (random init): 24 categorical fields (2-60 values each, drawn once) and 12 continuous fields generated on the device from an 8-factor latent model (Gumbel-max categories, tanh-warped Gaussians), missingness MCAR at a drawn 5-30% plus MAR driven by an income-like field; a column-token transformer imputer (6 pre-norm blocks of width 192, 8 heads, 36 tokens, a categorical head over all 24 fields' values with a per-column additive mask, per-column Gaussian heads) trained 380 AdamW steps with cosine decay under bf16 autocast on 512-2,048 records (drawn) with 15-40% (drawn) of the observed cells hidden again and reconstructed (masked cross-entropy plus Gaussian NLL); the loss read back every 25 steps and every 75 steps 5 multiple imputations of 4,096 held-out records (categories by multinomial sampling, continuous fields by Gaussian draws) combined by Rubin's rules for a mean and a proportion, read back")
def census_tabular_imputation_train(rng):
    ncat, ncont, r = 24, 12, 8
    cards = [rng.randint(2, 60) for _ in range(ncat)]
    offs = [0]
    for c in cards:
        offs.append(offs[-1] + c)
    vcat = offs[-1]
    d, heads, layers = _smoke(192, 16), _smoke(8, 2), _smoke(6, 1)
    model = _TabImputer(ncat, ncont, vcat, d, heads, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=4e-4, weight_decay=0.02, betas=(0.9, 0.98))
    colmask = torch.full((ncat, vcat), -1e4, device="cuda")
    for j in range(ncat):
        colmask[j, offs[j]:offs[j + 1]] = 0.0
    gen_c = torch.randn(r, vcat, device="cuda") * 1.5
    gen_n = torch.randn(r, ncont, device="cuda")
    gen_m = torch.randn(r, device="cuda")

    def records(b):
        z = torch.randn(b, r, device="cuda")
        g = -torch.log(-torch.log(torch.rand(b, ncat, vcat, device="cuda").clamp_min(1e-9)))
        cat = ((z @ gen_c)[:, None, :] + colmask[None] + g).argmax(-1)
        cont = torch.tanh(z @ gen_n) * 1.5 + 0.3 * torch.randn(b, ncont, device="cuda")
        cont = cont + 0.5 * cont[:, :1] * torch.arange(ncont, device="cuda") / ncont
        rate = rng.uniform(0.05, 0.3)
        mar = torch.sigmoid(2.0 * cont[:, :1] + z @ gen_m[:, None] - 1.5) * 0.4
        miss_cat = (torch.rand(b, ncat, device="cuda") < rate + mar).float()
        miss_cont = (torch.rand(b, ncont, device="cuda") < rate + mar).float()
        miss_cont[:, 0] = 0.0  # the driver of the MAR mechanism is always observed
        del z, g, mar
        return cat, cont, miss_cat, miss_cont

    steps = _smoke(380, 3)
    for step in range(steps):
        for grp in opt.param_groups:
            grp["lr"] = 4e-4 * 0.5 * (1 + math.cos(math.pi * step / steps))
        model.train()
        b = _b.rec._loguniform(rng, _smoke(512, 4), _smoke(2048, 8), _smoke(64, 1))
        hide = rng.uniform(0.15, 0.4)
        with torch.no_grad():
            cat, cont, mc, mn = records(b)
            ac = (torch.rand(b, ncat, device="cuda") < hide).float() * (1 - mc)
            an = (torch.rand(b, ncont, device="cuda") < hide).float() * (1 - mn)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            cl, cn = model(cat, cont * (1 - mn), torch.maximum(mc, ac), torch.maximum(mn, an))
        ce = _F.cross_entropy((cl.float() + colmask[None]).flatten(0, 1), cat.flatten(), reduction="none")
        mu, lv = cn.float().unbind(-1)
        nll = 0.5 * (lv + (cont - mu) ** 2 * torch.exp(-lv))
        loss = (ce * ac.flatten()).sum() / ac.sum().clamp_min(1) + (nll * an).sum() / an.sum().clamp_min(1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 25 == 0:
            loss.item()
        del cat, cont, mc, mn, ac, an, cl, cn, ce, mu, lv, nll, loss
        if (step + 1) % _smoke(75, 3) == 0:
            model.eval()
            n, m_imp = _smoke(4096, 6), 5
            ests, wvars = [], []
            with torch.no_grad():
                cat, cont, mc, mn = records(n)
                for _m in range(m_imp):
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        cl, cn = model(cat, cont * (1 - mn), mc, mn)
                    probs = torch.softmax(cl.float() + colmask[None], -1)
                    draw = torch.multinomial(probs.flatten(0, 1), 1).view(n, ncat)
                    mu, lv = cn.float().unbind(-1)
                    cont_i = mu + torch.exp(0.5 * lv) * torch.randn_like(mu)
                    cat_f = torch.where(mc > 0, draw, cat)
                    cont_f = torch.where(mn > 0, cont_i, cont)
                    prop = (cat_f[:, 1] == offs[1]).float()
                    ests.append(torch.stack([cont_f[:, 3].mean(), prop.mean()]))
                    wvars.append(torch.stack([cont_f[:, 3].var() / n, prop.var() / n]))
                    del cl, cn, probs, draw, mu, lv, cont_i, cat_f, cont_f, prop
                q, w = torch.stack(ests), torch.stack(wvars)
                qbar, wbar, bvar = q.mean(0), w.mean(0), q.var(0)
                total = wbar + (1 + 1 / m_imp) * bvar
                torch.stack([qbar, total.sqrt(), bvar / total.clamp_min(1e-12)]).tolist()
            del cat, cont, mc, mn, ests, wvars, q, w, qbar, wbar, bvar, total


# ---------------------------------------------------------------- small-area estimation: BYM2 VI and MRP


@_workload("small-area estimation of a poverty rate for 3,142 areas (synthetic survey): areas placed at random, a 6-nearest-neighbour graph from their squared distances, 400,000 respondents allotted to areas by multinomial draws on lognormal area weights, 12 covariates, outcomes from a logistic model with a smooth spatial effect; a BYM2 logistic multilevel model (structured ICAR effect over the graph's edges with a soft sum-to-zero constraint, an unstructured effect, mixing weight and scale) fitted by mean-field variational inference in fp32: 1,100 Adam steps on minibatches of 16,384-131,072 respondents (drawn) with 4 reparameterised draws each; the ELBO read back every 100 steps, and every 250 steps a multilevel regression and poststratification over 24 census cells per area with 100 posterior draws, area estimates and 90% intervals by sorting the draws, compared with the direct estimates (index_add) and the truth, summaries read back")
def small_area_bym2_vi_opt(rng):
    A, p, N, k = _smoke(3142, 24), 12, _smoke(400000, 600), 6
    S, ndraw, cells = 4, _smoke(100, 5), 24
    xy = torch.rand(A, 2, device="cuda")
    d2 = (xy[:, None, :] - xy[None, :, :]).pow(2).sum(-1) + torch.eye(A, device="cuda") * 1e9
    nbr = d2.topk(k, dim=1, largest=False).indices
    src, dst = torch.arange(A, device="cuda").repeat_interleave(k), nbr.flatten()
    del d2
    area_w = torch.exp(1.2 * torch.randn(A, device="cuda"))
    area = torch.multinomial(area_w / area_w.sum(), N, replacement=True)
    X = torch.randn(N, p, device="cuda")
    beta_true = torch.randn(p, device="cuda") * 0.4
    phi_true = torch.randn(A, device="cuda")
    for _ in range(4):  # smoothing over the graph: a spatially correlated truth
        phi_true = 0.5 * phi_true + 0.5 * torch.zeros(A, device="cuda").index_add_(0, src, phi_true[dst]) / k
    u_true = 0.8 * phi_true / phi_true.std() + 0.3 * torch.randn(A, device="cuda")
    y = (torch.rand(N, device="cuda") < torch.sigmoid(X @ beta_true - 1.0 + u_true[area])).float()
    census_x = torch.randn(A, cells, p, device="cuda") * 0.8 + 0.1 * torch.randn(A, 1, p, device="cuda")
    census_n = torch.exp(torch.randn(A, cells, device="cuda") + 5.0)
    truth = (torch.sigmoid(census_x @ beta_true - 1.0 + u_true[:, None]) * census_n).sum(1) / census_n.sum(1)
    direct_num = torch.zeros(A, device="cuda").index_add_(0, area, y)
    direct_den = torch.zeros(A, device="cuda").index_add_(0, area, torch.ones(N, device="cuda"))
    direct = direct_num / direct_den.clamp_min(1)

    names = {"beta": (p,), "b0": (1,), "theta": (A,), "phi": (A,), "log_sigma": (1,), "logit_rho": (1,)}
    loc = {n: torch.zeros(s, device="cuda", requires_grad=True) for n, s in names.items()}
    raw = {n: torch.full(s, -3.0, device="cuda", requires_grad=True) for n, s in names.items()}
    opt = torch.optim.Adam(list(loc.values()) + list(raw.values()), lr=0.03)

    def draw(n):
        return {k_: loc[k_] + _F.softplus(raw[k_]) * torch.randn(n, *names[k_], device="cuda") for k_ in names}

    def effects(z):
        rho, sigma = torch.sigmoid(z["logit_rho"]), torch.exp(z["log_sigma"])
        return sigma * (rho.sqrt() * z["phi"] + (1 - rho).sqrt() * z["theta"])

    steps = _smoke(1100, 4)
    for step in range(steps):
        bsz = rng.choice(_smoke([16384, 32768, 65536, 131072], [64, 128]))
        idx = torch.randint(0, N, (bsz,), device="cuda")
        z = draw(S)
        u = effects(z)
        eta = X[idx] @ z["beta"].T + z["b0"].T + u[:, area[idx]].T
        ll = -_F.binary_cross_entropy_with_logits(eta, y[idx][:, None].expand(-1, S), reduction="sum") * (N / bsz)
        phi = z["phi"]
        icar = -0.5 * (phi[:, src] - phi[:, dst]).pow(2).sum() / 2 - 0.5 * (phi.sum(1) / (0.001 * A)).pow(2).sum()
        lp = icar - 0.5 * (z["theta"] ** 2).sum() - 0.5 * (z["beta"] ** 2).sum() / 6.25 - 0.5 * (z["b0"] ** 2).sum() / 25
        sig = torch.exp(z["log_sigma"])
        lp = lp + (-0.5 * sig ** 2 + z["log_sigma"]).sum()
        lr_ = z["logit_rho"]
        lp = lp + (-0.5 * _F.softplus(-lr_) - 0.5 * _F.softplus(lr_) + torch.log(torch.sigmoid(lr_) * torch.sigmoid(-lr_))).sum()
        ent = sum(torch.log(_F.softplus(raw[k_])).sum() for k_ in names)
        loss = -((ll + lp) / S + ent) / N
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 100 == 0:
            loss.item()
        del idx, z, u, eta, ll, phi, icar, lp, sig, lr_, ent, loss
        if (step + 1) % _smoke(250, 2) == 0:
            with torch.no_grad():
                z = draw(ndraw)
                u = effects(z)
                prev = torch.sigmoid(torch.einsum("acp,sp->sac", census_x, z["beta"]) + z["b0"][:, :, None]
                                     + u[:, :, None])
                est = (prev * census_n).sum(-1) / census_n.sum(-1)
                srt = est.sort(0).values
                lo, hi, mean = srt[int(0.05 * ndraw)], srt[int(0.95 * ndraw) - 1], est.mean(0)
                cover = ((truth >= lo) & (truth <= hi)).float().mean()
                rmse = (mean - truth).pow(2).mean().sqrt()
                rmse_d = (direct - truth).pow(2).mean().sqrt()
                torch.stack([rmse, rmse_d, (hi - lo).mean(), cover]).tolist()
            del z, u, prev, est, srt, lo, hi, mean, cover, rmse, rmse_d


# ---------------------------------------------------------------- causal inference: DragonNet with a balance penalty


class _DragonNet(_nn.Module):
    def __init__(self, dx, rep, hid):
        super().__init__()
        self.rep = _nn.Sequential(_nn.Linear(dx, rep), _nn.ELU(), _nn.Linear(rep, rep), _nn.ELU(),
                                  _nn.Linear(rep, rep), _nn.ELU())
        self.h0 = _nn.Sequential(_nn.Linear(rep, hid), _nn.ELU(), _nn.Linear(hid, hid), _nn.ELU(), _nn.Linear(hid, 1))
        self.h1 = _nn.Sequential(_nn.Linear(rep, hid), _nn.ELU(), _nn.Linear(hid, hid), _nn.ELU(), _nn.Linear(hid, 1))
        self.prop = _nn.Linear(rep, 1)
        self.eps = _nn.Parameter(torch.zeros(1))

    def forward(self, x):
        z = self.rep(x)
        return z, self.h0(z)[:, 0], self.h1(z)[:, 0], self.prop(z)[:, 0]


@_workload("causal inference and uplift modelling (random init): observational data drawn on the device (64 correlated covariates, 16 of them binarised; confounded treatment from a nonlinear propensity clipped to [0.03, 0.97]; control outcome from a fixed random MLP, a heterogeneous effect 1 + tanh of a projection), a DragonNet (3-layer ELU representation of width 256, two 3-layer outcome heads of width 128, a propensity head, the targeted-regularisation epsilon) with an inverse-propensity-weighted RBF MMD balance penalty between treated and control representations (a b x b kernel), trained 1,250 AdamW steps on 256-4,096 units (drawn) under bf16 autocast; the loss read back every 50 steps, and every 250 steps 65,536 held-out units scored in chunks of 16,384: PEHE, ATE error, an AIPW estimate with 200 bootstrap resamples of 8,192 and a Qini coefficient from sorting by predicted uplift, read back")
def dragonnet_uplift_train(rng):
    dx, nbin = 64, 16
    model = _DragonNet(dx, _smoke(256, 16), _smoke(128, 8)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=1e-4)
    chol = torch.linalg.cholesky_ex(0.5 * torch.eye(dx, device="cuda") + 0.5 / dx * torch.ones(dx, dx, device="cuda")
                                    + 0.1 * torch.diag(torch.rand(dx, device="cuda"))).L
    wp, wp2, wt = (torch.randn(dx, device="cuda") / math.sqrt(dx) for _ in range(3))
    g1, g2 = torch.randn(dx, 64, device="cuda") / math.sqrt(dx), torch.randn(64, device="cuda") / 8

    def units(n):
        x = torch.randn(n, dx, device="cuda") @ chol.T
        x = torch.cat([(x[:, :nbin] > 0).float(), x[:, nbin:]], 1)
        e = torch.sigmoid(x @ wp + 0.7 * torch.sin(2 * (x @ wp2))).clamp(0.03, 0.97)
        t = (torch.rand(n, device="cuda") < e).float()
        mu0 = torch.relu(x @ g1) @ g2
        tau = 1.0 + torch.tanh(x @ wt)
        y = mu0 + t * tau + 0.5 * torch.randn(n, device="cuda")
        return x, t, y, e, tau

    steps = _smoke(1250, 3)
    for step in range(steps):
        model.train()
        b = _b.rec._loguniform(rng, _smoke(256, 8), _smoke(4096, 16), _smoke(64, 1))
        with torch.no_grad():
            x, t, y, e, tau = units(b)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            z, q0, q1, pl = model(x)
        z, q0, q1, pl = z.float(), q0.float(), q1.float(), pl.float()
        qt = torch.where(t > 0, q1, q0)
        ph = torch.sigmoid(pl).clamp(0.01, 0.99)
        h = t / ph - (1 - t) / (1 - ph)
        treg = ((y - (qt + model.eps * h)) ** 2).mean()
        sq = z.pow(2).sum(1)
        kern = torch.exp(-(sq[:, None] + sq[None] - 2 * z @ z.T).clamp_min(0) / z.shape[1])
        wtr = (t / ph.detach())
        wco = ((1 - t) / (1 - ph.detach()))
        wtr, wco = wtr / wtr.sum().clamp_min(1e-6), wco / wco.sum().clamp_min(1e-6)
        mmd = wtr @ kern @ wtr + wco @ kern @ wco - 2 * wtr @ kern @ wco
        loss = ((y - qt) ** 2).mean() + _F.binary_cross_entropy_with_logits(pl, t) + 0.5 * treg + 0.3 * mmd
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 50 == 0:
            loss.item()
        del x, t, y, e, tau, z, q0, q1, pl, qt, ph, h, treg, sq, kern, wtr, wco, mmd, loss
        if (step + 1) % _smoke(250, 3) == 0:
            model.eval()
            n, chunk = _smoke(65536, 32), _smoke(16384, 16)
            with torch.no_grad():
                x, t, y, e, tau = units(n)
                parts = []
                for s in range(0, n, chunk):
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        _z, q0, q1, pl = model(x[s:s + chunk])
                    parts.append(torch.stack([q0.float(), q1.float(), torch.sigmoid(pl.float())], 1))
                    del _z, q0, q1, pl
                pr = torch.cat(parts)
                q0, q1, ph = pr[:, 0], pr[:, 1], pr[:, 2].clamp(0.02, 0.98)
                uplift = q1 - q0
                pehe = (uplift - tau).pow(2).mean().sqrt()
                ate_err = (uplift.mean() - tau.mean()).abs()
                psi = uplift + t * (y - q1) / ph - (1 - t) * (y - q0) / (1 - ph)
                boot = psi[torch.randint(0, n, (200, _smoke(8192, 16)), device="cuda")].mean(1)
                order = uplift.argsort(descending=True)
                ts, ys = t[order], y[order]
                n1, n0 = ts.cumsum(0), (1 - ts).cumsum(0)
                y1, y0 = (ts * ys).cumsum(0), ((1 - ts) * ys).cumsum(0)
                qini = y1 - y0 * n1 / n0.clamp_min(1)
                frac = torch.arange(1, n + 1, device="cuda").float() / n
                qcoef = (qini - frac * qini[-1]).mean()
                torch.stack([pehe, ate_err, psi.mean(), boot.std(), qcoef]).tolist()
            del x, t, y, e, tau, parts, pr, q0, q1, ph, uplift, pehe, ate_err, psi, boot, order, ts, ys, n1, n0, y1, y0
            del qini, frac, qcoef


# ---------------------------------------------------------------- regional claims forecasting service (side stream)


class _PanelForecaster(_nn.Module):
    """Patches of `patch` weeks of F indicators projected to width d, learned patch positions and a region
    embedding added, pre-norm blocks, the last patch's state mapped to H x Q monotone quantiles (cumulative
    softplus increments)."""

    def __init__(self, F, nreg, d, heads, layers, patch, H, Q):
        super().__init__()
        self.patch, self.H, self.Q = patch, H, Q
        self.proj = _nn.Linear(F * patch, d)
        self.pos, self.reg = _nn.Embedding(64, d), _nn.Embedding(nreg, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm, self.head = _nn.LayerNorm(d), _nn.Linear(d, H * Q)

    def forward(self, x, reg):
        b, L, F = x.shape
        mean, std = x[:, :, :1].mean(1, keepdim=True), x[:, :, :1].std(1, keepdim=True) + 1e-3
        xn = torch.cat([(x[:, :, :1] - mean) / std, x[:, :, 1:]], -1)
        h = self.proj(xn.reshape(b, L // self.patch, self.patch * F))
        h = h + self.pos(torch.arange(L // self.patch, device=x.device)) + self.reg(reg)[:, None]
        for blk in self.blocks:
            h = blk(h)
        out = self.head(self.norm(h[:, -1])).float().view(b, self.H, self.Q)
        q = torch.cat([out[..., :1], _F.softplus(out[..., 1:])], -1).cumsum(-1)
        return q * std + mean


def _claims_panel(b, L, H, F):
    """Weekly indicator panels: the target (claims) a log-level with trend, annual seasonality, an AR(1) component
    and occasional shocks; the other indicators noisy leading transforms of it. (b, L + H, F)."""
    T = L + H
    t = torch.arange(T, device="cuda").float()
    phase = torch.rand(b, 1, device="cuda") * 6.283
    season = 0.3 * torch.sin(6.283 * t / 52 + phase) + 0.1 * torch.sin(12.566 * t / 52 + 2 * phase)
    trend = 0.002 * torch.randn(b, 1, device="cuda") * t
    shocks = (torch.rand(b, T, device="cuda") < 0.01).float() * torch.rand(b, T, device="cuda") * 1.5
    ar = torch.randn(b, T, device="cuda") * 0.05
    level = 5 + torch.randn(b, 1, device="cuda") + season + trend + (ar + shocks).cumsum(1) * 0.3
    lead = level[:, None, :] + 0.1 * torch.randn(b, F - 1, T, device="cuda")
    lead = torch.cat([lead[:, :, 2:], lead[:, :, -1:].expand(-1, -1, 2)], 2)
    return torch.cat([level[:, None], lead], 1).transpose(1, 2)


@_workload("regional unemployment-claims forecasting service (random init): a patch transformer (4-week patches of 16 weekly indicators, 4 pre-norm blocks of width 256, 8 heads, a 3,142-region embedding, instance normalisation of the target, 13-week-ahead monotone heads for 9 quantiles) trained 240 AdamW steps by pinball loss under bf16 autocast on panels of 128-512 regions (drawn) with 52, 104 or 156 weeks of history (drawn) simulated on the device (trend, seasonality, AR noise, shocks); then 1,040-1,090 requests (drawn) of 8-256 regions (drawn) with 52-156 weeks (drawn), each request's fp32 windows and region codes uploaded from 2 reused pinned host buffers on a side stream one request ahead (waited on by event, record_stream'ed), run under 1, 4 or 8 policy-shock scenarios (drawn; a ramped shift of the benefit-generosity indicator) and aggregated to national quantiles by labour-force weights, read back per request")
def regional_claims_quantile_forecast_serve(rng):
    F, nreg, H, Q, patch = 16, _smoke(3142, 50), 13, 9, 4
    d, heads, layers = _smoke(256, 16), _smoke(8, 2), _smoke(4, 1)
    model = _PanelForecaster(F, nreg, d, heads, layers, patch, H, Q).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    qs = torch.tensor([0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95], device="cuda")
    lengths = _smoke([52, 104, 156], [12, 24])
    for step in range(_smoke(240, 3)):
        model.train()
        b, L = rng.randint(_smoke(128, 2), _smoke(512, 4)), rng.choice(lengths)
        with torch.no_grad():
            panel = _claims_panel(b, L, H, F)
            reg = torch.randint(0, nreg, (b,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(panel[:, :L], reg)
        err = panel[:, L:, 0][..., None] - pred
        loss = torch.maximum(qs * err, (qs - 1) * err).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.item()
        del panel, reg, pred, err, loss
    model.eval().requires_grad_(False)

    maxr, maxl = _smoke(256, 4), max(lengths)
    host = [torch.randn(maxr * maxl * F + maxr).pin_memory() for _ in range(2)]
    for h_ in host:
        h_[maxr * maxl * F:] = torch.randint(0, nreg, (maxr,)).float()
    up = SideUploads(host)
    labour = torch.exp(torch.randn(nreg, device="cuda"))
    tail = maxr * maxl * F

    def draw():
        return rng.randint(_smoke(8, 1), maxr), rng.choice(lengths), rng.choice([1, 4, 8])

    def spans(g, L):
        return g * L * F, slice(tail, tail + g)

    nreq = rng.randint(_smoke(1040, 3), _smoke(1090, 4))
    plan = [draw() for _ in range(nreq)]
    nxt = up.upload(0, *spans(plan[0][0], plan[0][1]))
    for i in range(nreq):
        g, L, S = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, *spans(plan[i + 1][0], plan[i + 1][1]))
        feats, codes, ev = item
        SideUploads.ready(ev, feats, codes)
        with torch.no_grad():
            x = feats.view(g, L, F)
            reg = codes.long()
            shock = torch.linspace(0.0, 0.5, S, device="cuda")
            ramp = (torch.arange(L, device="cuda") - (L - 13)).clamp(min=0).float() / 13
            xs = x[None].repeat(S, 1, 1, 1)
            xs[..., 3] += shock[:, None, None] * ramp
            with torch.autocast("cuda", dtype=torch.bfloat16):
                q = model(xs.view(S * g, L, F), reg.repeat(S))
            w = labour[reg] / labour[reg].sum()
            nat = (q.view(S, g, H, Q) * w[None, :, None, None]).sum(1)
            torch.stack([nat[:, :, 4], nat[:, :, 0], nat[:, :, -1]]).tolist()
        del item, feats, codes, x, reg, shock, ramp, xs, q, w, nat

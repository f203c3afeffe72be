"""The seventy-fourth batch of held-out workloads for record.py, second half (batch74.py has the first): social
science, economics and public policy, written in torch alone. Text-based ideal points for legislators (Vafa et al.'s
TBIP: Poisson factorisation of speech word counts with ideological topic adjustments exp(x_author * eta), fitted
jointly with a two-parameter item-response model of roll-call votes by reparameterised variational inference; a
Poisson-factorisation warm start, minibatches of documents turned into dense count rows by scatter_add), stance
detection fine-tuning of a BERT-base style encoder on (target, post) pairs with fast-gradient-method adversarial
training on the word embeddings, layer-wise learning-rate decay and a macro-F1 evaluation from a confusion matrix
built by scatter_add, an agent-based financial market (fundamentalist, chartist and noise traders switching
strategies by a Brock-Hommes discrete choice with Gumbel-max, a market maker's price impact, a thousand markets
simulated in parallel) calibrated by sequential neural posterior estimation with a mixture-density network on
summary statistics (return moments, autocorrelations, a Hill tail index from sorting), and a neural topic-model
service (ProdLDA trained on documents sampled on the device from a random LDA, then requests of documents' token ids
uploaded on a side stream, turned into bag-of-words rows by scatter_add and inferred by the amortised encoder plus
gradient refinement of the local variational parameters). Same conventions as the earlier batches: nothing
downloaded, data drawn at random on the device (or, for the topic service, from two reused pinned host buffers),
`rng` the workload's random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)` so
that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: simulation lengths, refinement steps and
round counts are fixed on the host, strategy switches and padding handled with torch.where and multiplied-in masks,
no boolean-mask indexing; ELBOs, losses, F1 scores, posterior summaries and topic assignments are read back only at
logging points. prodlda_topic_infer_serve uses a side stream (uploads waited on by event, the tensors
record_stream'ed); the others are single-stream. The encoder fine-tuning runs under bf16 autocast; the variational
models, the market simulation and the topic model are fp32.

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
from workload_helpers import SideUploads

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- text-based ideal points with roll-call votes


@_workload("text-based ideal points (TBIP) for 1,024 legislators fitted jointly with a roll-call IRT model (synthetic corpus drawn on the device: 60,000 speeches of up to 96 distinct words from a 5,000-word vocabulary with Zipf-like skew and counts 1-4, 1,500 roll calls with 10% abstentions): lognormal variational factors for document intensities (60,000 x 40) and neutral topics (40 x 5,000), Gaussian ideological topics (40 x 5,000) and ideal points, Gaussian bill discriminations and difficulties; 150 Adam steps of Poisson factorisation as a warm start, then 1,250 reparameterised TBIP steps, each on 256, 384 or 512 documents (drawn) made dense by scatter_add, Poisson rates summed over the (docs, topics, words) product theta * beta * exp(x * eta), Gamma and Gaussian priors, the vote likelihood by masked logistic loss over all 1,024 x 1,500 votes; the ELBO read back every 100 steps, and at the end the 10 most partisan words of each topic in both directions by topk and the correlation of the fitted ideal points with the truth")
def tbip_vote_ideal_point_opt(rng):
    A, D, V, K, R, W = _smoke(1024, 8), _smoke(60000, 64), _smoke(5000, 50), _smoke(40, 4), _smoke(1500, 20), 96
    author = torch.randint(0, A, (D,), device="cuda")
    words = (torch.rand(D, W, device="cuda").pow(3) * V).long().clamp(max=V - 1)
    nword = torch.randint(W // 4, W + 1, (D, 1), device="cuda")
    counts = torch.randint(1, 5, (D, W), device="cuda").float() * (torch.arange(W, device="cuda")[None] < nword)
    x_true = torch.randn(A, device="cuda")
    a_true, b_true = torch.randn(R, device="cuda"), torch.randn(R, device="cuda") * 1.5
    votes = (torch.rand(A, R, device="cuda") < torch.sigmoid(a_true + x_true[:, None] * b_true)).float()
    present = (torch.rand(A, R, device="cuda") > 0.1).float()

    def param(*shape, init=0.0):
        return torch.full(shape, init, device="cuda").add_(0.1 * torch.randn(*shape, device="cuda")).requires_grad_()

    q = {"theta": (param(D, K, init=-1.0), param(D, K, init=-2.0)), "beta": (param(K, V, init=-2.0), param(K, V, init=-2.0)),
         "eta": (param(K, V), param(K, V, init=-2.0)), "x": (param(A), param(A, init=-2.0)),
         "alpha": (param(R), param(R, init=-2.0)), "disc": (param(R), param(R, init=-2.0))}
    flat = [t for pair in q.values() for t in pair]
    opt = torch.optim.Adam(flat, lr=0.01)
    ga, gb = 0.3, 0.3

    def sample(name, rows=None):
        loc, ls = q[name]
        if rows is not None:
            loc, ls = loc[rows], ls[rows]
        sd = _F.softplus(ls)
        return loc + sd * torch.randn_like(loc), torch.log(sd).sum()

    warm, steps = _smoke(150, 2), _smoke(1400, 4)
    for step in range(steps):
        b = rng.choice(_smoke([256, 384, 512], [8, 16]))
        idx = torch.randint(0, D, (b,), device="cuda")
        dense = torch.zeros(b, V, device="cuda").scatter_add_(1, words[idx], counts[idx])
        lt, et = sample("theta", idx)
        lb, eb = sample("beta")
        theta, beta = torch.exp(lt), torch.exp(lb)
        if step < warm:
            rate = theta @ beta
            ent, lp = et * D / b + eb, 0.0
        else:
            eta, ee = sample("eta")
            x, ex = sample("x")
            al, ea = sample("alpha")
            di, ed = sample("disc")
            xa = x[author[idx]]
            rate = (theta[:, :, None] * beta[None] * torch.exp(xa[:, None, None] * eta[None])).sum(1)
            logit = al + x[:, None] * di
            vll = -(_F.binary_cross_entropy_with_logits(logit, votes, reduction="none") * present).sum()
            lp = vll - 0.5 * (eta ** 2).sum() - 0.5 * (x ** 2).sum() - 0.5 * (al ** 2).sum() / 4 - 0.5 * (di ** 2).sum() / 4
            ent = et * D / b + eb + ee + ex + ea + ed
        pll = (dense * torch.log(rate + 1e-8) - rate).sum() * (D / b)
        gam = ((ga - 1) * lt - gb * theta + lt).sum() * (D / b) + ((ga - 1) * lb - gb * beta + lb).sum()
        loss = -(pll + gam + lp + ent) / D
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 100 == 0:
            loss.item()
        del idx, dense, lt, et, lb, eb, theta, beta, rate, ent, lp, pll, gam, loss
        if step >= warm:
            del eta, ee, x, ex, al, ea, di, ed, xa, logit, vll
    with torch.no_grad():
        eta, x = q["eta"][0], q["x"][0]
        right, left = eta.topk(10, dim=1).indices, (-eta).topk(10, dim=1).indices
        xc, tc = x - x.mean(), x_true - x_true.mean()
        corr = (xc * tc).sum() / (xc.norm() * tc.norm())
        torch.cat([right.flatten().float(), left.flatten().float(), corr[None]]).tolist()


# ---------------------------------------------------------------- stance detection fine-tuning with FGM


class _BertLayer(_nn.Module):
    def __init__(self, d, heads, ff):
        super().__init__()
        self.h = heads
        self.qkv, self.o = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.ln1, self.ln2 = _nn.LayerNorm(d, eps=1e-12), _nn.LayerNorm(d, eps=1e-12)
        self.fc1, self.fc2 = _nn.Linear(d, ff), _nn.Linear(ff, d)
        self.drop = _nn.Dropout(0.1)

    def forward(self, x, bias):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        a = _F.scaled_dot_product_attention(q, k, v, attn_mask=bias.to(q.dtype),
                                           dropout_p=0.1 if self.training else 0.0)
        x = self.ln1(x + self.drop(self.o(a.transpose(1, 2).reshape(b, t, d))))
        return self.ln2(x + self.drop(self.fc2(_F.gelu(self.fc1(x)))))


class _StanceBert(_nn.Module):
    def __init__(self, vocab, d, heads, layers, ff, classes):
        super().__init__()
        self.word, self.pos, self.ttype = _nn.Embedding(vocab, d), _nn.Embedding(512, d), _nn.Embedding(2, d)
        self.ln, self.drop = _nn.LayerNorm(d, eps=1e-12), _nn.Dropout(0.1)
        self.layers = _nn.ModuleList(_BertLayer(d, heads, ff) for _ in range(layers))
        self.pool, self.cls = _nn.Linear(d, d), _nn.Linear(d, classes)

    def forward(self, ids, types, mask):
        t = ids.shape[1]
        h = self.word(ids) + self.pos(torch.arange(t, device=ids.device)) + self.ttype(types)
        h = self.drop(self.ln(h))
        bias = ((1.0 - mask[:, None, None, :].to(h.dtype)) * -1e4)
        for layer in self.layers:
            h = layer(h, bias)
        return self.cls(self.drop(torch.tanh(self.pool(h[:, 0]))))


def _stance_batch(rng, b, vocab, tlen, plen):
    """b (target, post) pairs: [CLS] target [SEP] post [SEP], target 3-12 and post lengths drawn per row within
    [plen[0], plen[1]], right-padded to a multiple of 8; token types, attention mask and 3-way labels."""
    tl = [rng.randint(3, tlen) for _ in range(b)]
    pl = [rng.randint(*plen) for _ in range(b)]
    lens = [1 + a + 1 + c + 1 for a, c in zip(tl, pl)]
    s = -(-max(lens) // 8) * 8
    ids = torch.randint(1000, vocab, (b, s), device="cuda")
    pos = torch.arange(s, device="cuda")[None]
    tlt = torch.tensor(tl, device="cuda")[:, None]
    lt = torch.tensor(lens, device="cuda")[:, None]
    mask = (pos < lt).long()
    types = ((pos > tlt + 1) & (pos < lt)).long()
    ids = torch.where(pos == 0, 101, torch.where((pos == tlt + 1) | (pos == lt - 1), 102, ids)) * mask
    return ids, types, mask, torch.randint(0, 3, (b,), device="cuda")


@_workload("stance detection fine-tuning (random init): a BERT-base style post-norm encoder (12 layers of width 768, 12 heads, FFN 3,072, vocabulary 30,522, token types, padding masks) with a pooled 3-way head (favour / against / neither), fine-tuned 125 AdamW steps under bf16 autocast with layer-wise learning-rate decay 0.9 (14 parameter groups), linear warm-up and decay, class-weighted cross-entropy and FGM adversarial training (a second forward and backward with the word-embedding table perturbed along its normalised gradient, then restored), on batches of 16, 32, 48 or 64 (target, post) pairs (drawn) of 3-12 target and 12-96 post tokens (drawn per row, padded to a multiple of 8); the loss read back every 10 steps, and every 30 steps 1,536 held-out pairs scored in batches of 128 with a confusion matrix built by scatter_add and the macro-F1 read back")
def stance_fgm_encoder_finetune(rng):
    vocab, d, heads, layers, ff = 30522, _smoke(768, 32), _smoke(12, 2), _smoke(12, 2), _smoke(3072, 64)
    model = _StanceBert(vocab, d, heads, layers, ff, 3).cuda()
    groups = [{"params": list(model.word.parameters()) + list(model.pos.parameters()) + list(model.ttype.parameters())
               + list(model.ln.parameters()), "scale": 0.9 ** layers}]
    for i, layer in enumerate(model.layers):
        groups.append({"params": list(layer.parameters()), "scale": 0.9 ** (layers - 1 - i)})
    groups.append({"params": list(model.pool.parameters()) + list(model.cls.parameters()), "scale": 1.0})
    opt = torch.optim.AdamW(groups, lr=3e-5, weight_decay=0.01)
    cw = torch.tensor([1.0, 1.3, 0.8], device="cuda")
    plen = (_smoke(12, 3), _smoke(96, 6))
    steps, warm = _smoke(125, 3), _smoke(12, 1)
    for step in range(steps):
        lr = 3e-5 * min((step + 1) / warm, (steps - step) / (steps - warm))
        for g in opt.param_groups:
            g["lr"] = lr * g["scale"]
        model.train()
        b = rng.choice(_smoke([16, 32, 48, 64], [2, 3]))
        ids, types, mask, y = _stance_batch(rng, b, vocab, 12, plen)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = _F.cross_entropy(model(ids, types, mask).float(), y, weight=cw)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        emb = model.word.weight
        with torch.no_grad():
            r = 1.0 * emb.grad / emb.grad.norm().clamp_min(1e-12)
            emb.add_(r)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            adv = _F.cross_entropy(model(ids, types, mask).float(), y, weight=cw)
        adv.backward()
        with torch.no_grad():
            emb.sub_(r)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            loss.item()
        del ids, types, mask, y, loss, r, adv
        if (step + 1) % _smoke(30, 3) == 0:
            model.eval()
            conf = torch.zeros(9, device="cuda")
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for _e in range(_smoke(12, 1)):
                    ids, types, mask, y = _stance_batch(rng, _smoke(128, 4), vocab, 12, plen)
                    pred = model(ids, types, mask).argmax(-1)
                    conf.scatter_add_(0, y * 3 + pred, torch.ones_like(pred, dtype=torch.float32))
                    del ids, types, mask, y, pred
            cm = conf.view(3, 3)
            tp = cm.diagonal()
            f1 = 2 * tp / (cm.sum(0) + cm.sum(1)).clamp_min(1)
            torch.cat([f1, f1.mean()[None]]).tolist()
            del conf, cm, tp, f1


# ---------------------------------------------------------------- agent-based market calibrated by SNPE


def _abm_simulate(theta, n_agents, T):
    """Parallel markets of fundamentalist, chartist and noise traders (theta columns: fundamentalist reaction,
    chartist extrapolation, switching intensity, noise scale, price impact); each step a tenth of the agents
    re-choose a strategy by Gumbel-max over beta times the strategies' smoothed profits. Returns (M, T) returns and
    the mean chartist share."""
    M = theta.shape[0]
    phi, chi, beta, sig, lam = theta.unbind(1)
    hf = torch.exp(0.3 * torch.randn(M, n_agents, device="cuda"))
    strat = torch.randint(0, 3, (M, n_agents), device="cuda")
    p = torch.zeros(M, device="cuda")
    p_prev = torch.zeros(M, device="cuda")
    pf = torch.zeros(M, device="cuda")
    util = torch.zeros(M, 3, device="cuda")
    rets, share = [], []
    for _t in range(T):
        pf = pf + 0.01 * torch.randn(M, device="cuda")
        dem_f = (phi * (pf - p))[:, None] * hf
        dem_c = (chi * (p - p_prev))[:, None] * hf
        dem_n = sig[:, None] * torch.randn(M, n_agents, device="cuda")
        dem = torch.stack([dem_f, dem_c, dem_n], -1).gather(-1, strat[..., None])[..., 0]
        r = lam * dem.mean(1) + 0.002 * torch.randn(M, device="cuda")
        p_prev, p = p, p + r
        util = 0.9 * util + 100 * torch.stack([dem_f.mean(1), dem_c.mean(1), dem_n.mean(1)], 1) * r[:, None]
        g = -torch.log(-torch.log(torch.rand(M, n_agents, 3, device="cuda").clamp_min(1e-9)))
        choice = (beta[:, None, None] * util[:, None, :] + g).argmax(-1)
        strat = torch.where(torch.rand(M, n_agents, device="cuda") < 0.1, choice, strat)
        rets.append(r)
        share.append((strat == 1).float().mean(1))
        del dem_f, dem_c, dem_n, dem, g, choice
    return torch.stack(rets, 1), torch.stack(share, 1).mean(1)


def _abm_stats(r, share):
    """20 summary statistics of (M, T) returns: moments, autocorrelations of returns (lags 1-5) and of absolute
    returns (lags 1, 2, 5, 10, 20), a Hill tail index from the top 5% of absolute returns, the chartist share."""
    T = r.shape[1]
    rc = r - r.mean(1, keepdim=True)
    sd = rc.std(1) + 1e-8
    z = rc / sd[:, None]
    out = [torch.log(sd), (z ** 3).mean(1), torch.log((z ** 4).mean(1))]
    for lag in range(1, 6):
        out.append((z[:, lag:] * z[:, :-lag]).mean(1))
    a = r.abs()
    az = (a - a.mean(1, keepdim=True)) / (a.std(1, keepdim=True) + 1e-8)
    for lag in (1, 2, 5, 10, 20):
        out.append((az[:, lag:] * az[:, :-lag]).mean(1))
    top = a.sort(1, descending=True).values
    kk = max(2, T // 20)
    hill = torch.log(top[:, :kk] + 1e-10).mean(1) - torch.log(top[:, kk] + 1e-10)
    out += [hill, share, torch.log(a.mean(1) + 1e-8), (r.sum(1)), (a[:, T // 2:].mean(1) / (a[:, :T // 2].mean(1) + 1e-8)),
            torch.log(a.max(1).values + 1e-8), (az[:, 1:] * az[:, :-1]).mean(1) - (z[:, 1:] * z[:, :-1]).mean(1)]
    return torch.stack(out, 1)


class _MDN(_nn.Module):
    def __init__(self, dstat, dtheta, hidden, comps):
        super().__init__()
        self.k, self.d = comps, dtheta
        self.net = _nn.Sequential(_nn.Linear(dstat, hidden), _nn.GELU(), _nn.Linear(hidden, hidden), _nn.GELU(),
                                  _nn.Linear(hidden, hidden), _nn.GELU())
        self.head = _nn.Linear(hidden, comps * (1 + 2 * dtheta))

    def forward(self, s):
        o = self.head(self.net(s))
        logit, mu, ls = o.split([self.k, self.k * self.d, self.k * self.d], -1)
        return logit.log_softmax(-1), mu.view(-1, self.k, self.d), ls.view(-1, self.k, self.d).clamp(-7, 3)

    def log_prob(self, s, u):
        lw, mu, ls = self(s)
        comp = (-0.5 * ((u[:, None] - mu) * torch.exp(-ls)) ** 2 - ls - 0.5 * math.log(2 * math.pi)).sum(-1)
        return torch.logsumexp(lw + comp, -1)

    def sample(self, s, n):
        lw, mu, ls = self(s)
        c = torch.multinomial(lw.exp(), n, replacement=True)[0]
        return mu[0, c] + torch.exp(ls[0, c]) * torch.randn(n, self.d, device=s.device)


@_workload("agent-based financial market calibrated by sequential neural posterior estimation: 1,024 markets of 2,000 heterogeneous agents (fundamentalist, chartist and noise traders; a tenth re-choose a strategy each step by a Brock-Hommes discrete choice with Gumbel-max over smoothed strategy profits; a market maker's price impact) simulated in parallel for 180-260 steps (drawn) per round, 5 parameters (reaction, extrapolation, switching intensity, noise, impact) in a box prior; 20 summary statistics (return moments, autocorrelations of returns and absolute returns, a Hill tail index by sorting, chartist share), standardised; 18 rounds, each drawing parameters half from the prior and half from the current posterior given an observed market (truncated to the box), appending to a device buffer, and training a mixture-density network (8 Gaussian components, 3 GELU layers of 256) 80 Adam steps on 512 buffer pairs (fp32); the posterior mean and spread of 4,096 samples read back each round, losses every 20 steps")
def abm_market_snpe_sim(rng):
    M, N = _smoke(1024, 4), _smoke(2000, 16)
    lo = torch.tensor([0.01, 0.01, 0.1, 0.005, 0.1], device="cuda")
    hi = torch.tensor([0.5, 1.0, 5.0, 0.05, 1.0], device="cuda")
    dth, dst = 5, 20
    mdn = _MDN(dst, dth, _smoke(256, 16), 8).cuda()
    opt = torch.optim.Adam(mdn.parameters(), lr=1e-3)
    rounds = _smoke(18, 2)
    cap = rounds * M
    buf_s = torch.zeros(cap, dst, device="cuda")
    buf_u = torch.zeros(cap, dth, device="cuda")

    def to_u(theta):
        f = ((theta - lo) / (hi - lo)).clamp(1e-4, 1 - 1e-4)
        return torch.log(f) - torch.log1p(-f)

    def to_theta(u):
        return lo + (hi - lo) * torch.sigmoid(u)

    theta_obs = (lo + (hi - lo) * torch.tensor([0.3, 0.6, 0.4, 0.5, 0.4], device="cuda"))[None].repeat(8, 1)
    r_obs, sh_obs = _abm_simulate(theta_obs, N, _smoke(220, 24))
    s_obs_raw = torch.nan_to_num(_abm_stats(r_obs, sh_obs), 0.0, 10.0, -10.0).mean(0, keepdim=True)
    del r_obs, sh_obs
    stat_mean, stat_std = None, None
    filled = 0
    for rnd in range(rounds):
        T = rng.randint(_smoke(180, 24), _smoke(260, 26))
        with torch.no_grad():
            prior = lo + (hi - lo) * torch.rand(M, dth, device="cuda")
            if rnd == 0:
                theta = prior
            else:
                post = to_theta(mdn.sample((s_obs_raw - stat_mean) / stat_std, M))
                theta = torch.where((torch.arange(M, device="cuda") < M // 2)[:, None], prior, post)
                del post
            r, share = _abm_simulate(theta, N, T)
            stats = torch.nan_to_num(_abm_stats(r, share), 0.0, 10.0, -10.0)
            buf_s[filled:filled + M] = stats
            buf_u[filled:filled + M] = to_u(theta)
            filled += M
            if stat_mean is None:
                stat_mean, stat_std = stats.mean(0, keepdim=True), stats.std(0, keepdim=True) + 1e-6
            del prior, theta, r, share, stats
        for step in range(_smoke(80, 3)):
            idx = torch.randint(0, filled, (_smoke(512, 8),), device="cuda")
            s = (buf_s[idx] - stat_mean) / stat_std
            loss = -mdn.log_prob(s, buf_u[idx]).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(mdn.parameters(), 5.0)
            opt.step()
            if step % 20 == 0:
                loss.item()
            del idx, s, loss
        with torch.no_grad():
            smp = to_theta(mdn.sample((s_obs_raw - stat_mean) / stat_std, _smoke(4096, 16)))
            torch.stack([smp.mean(0), smp.std(0)]).tolist()
            del smp


# ---------------------------------------------------------------- neural topic-model service (side stream)


class _ProdLDA(_nn.Module):
    def __init__(self, V, H, K, alpha=0.02):
        super().__init__()
        self.enc = _nn.Sequential(_nn.Linear(V, H), _nn.Softplus(), _nn.Linear(H, H), _nn.Softplus(), _nn.Dropout(0.2))
        self.mu, self.lv = _nn.Linear(H, K), _nn.Linear(H, K)
        self.bn_mu, self.bn_lv = _nn.BatchNorm1d(K, affine=False), _nn.BatchNorm1d(K, affine=False)
        self.beta = _nn.Linear(K, V, bias=False)
        self.bn_dec = _nn.BatchNorm1d(V, affine=False)
        self.drop = _nn.Dropout(0.2)
        a = torch.full((K,), alpha)
        self.register_buffer("pmu", a.log() - a.log().mean())
        self.register_buffer("pvar", (1 / a) * (1 - 2 / K) + (1 / a).sum() / K ** 2)

    def encode(self, bow):
        h = self.enc(bow)
        return self.bn_mu(self.mu(h)), self.bn_lv(self.lv(h))

    def elbo_terms(self, bow, mu, lv):
        theta = self.drop(torch.softmax(mu + torch.exp(0.5 * lv) * torch.randn_like(mu), -1))
        recon = -(bow * torch.log_softmax(self.bn_dec(self.beta(theta)), -1)).sum(1)
        var = torch.exp(lv)
        kl = 0.5 * ((var / self.pvar) + (mu - self.pmu) ** 2 / self.pvar - 1 + torch.log(self.pvar) - lv).sum(1)
        return recon, kl


@_workload("neural topic-model service (random init): ProdLDA (vocabulary 20,000, encoder 2 softplus layers of 512, 64 topics with a logistic-normal Laplace approximation of a Dirichlet prior, batch-normalised product-of-experts decoder) trained 300 Adam steps in fp32 on 256-1,024 documents (drawn) of 40-400 tokens (drawn) sampled on the device from a random 50-topic LDA by multinomial draws and turned into bag-of-words rows by scatter_add; then 415-435 requests (drawn) of 1-64 documents (drawn) of 32-384 tokens (drawn, padded to the request's longest), each request's int32 token ids uploaded from 2 reused pinned host buffers on a side stream one request ahead (waited on by event, record_stream'ed): bag-of-words by scatter_add, the amortised encoder's posterior refined by 8-16 (drawn) gradient steps on the local means and log-variances with the decoder frozen, each document's top 3 topics and weights and its perplexity bound read back per request")
def prodlda_topic_infer_serve(rng):
    V, H, K, Kt = _smoke(20000, 64), _smoke(512, 16), _smoke(64, 4), _smoke(50, 4)
    model = _ProdLDA(V, H, K).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3, betas=(0.99, 0.999))
    phi_true = torch.softmax(3.0 * torch.randn(Kt, V, device="cuda"), -1)
    for step in range(_smoke(300, 3)):
        model.train()
        b, L = rng.randint(_smoke(256, 3), _smoke(1024, 6)), rng.randint(_smoke(40, 4), _smoke(400, 8))
        with torch.no_grad():
            mix = torch.softmax(2.0 * torch.randn(b, Kt, device="cuda"), -1) @ phi_true
            ids = torch.multinomial(mix, L, replacement=True)
            bow = torch.zeros(b, V, device="cuda").scatter_add_(1, ids, torch.ones(b, L, device="cuda"))
        mu, lv = model.encode(bow)
        recon, kl = model.elbo_terms(bow, mu, lv)
        loss = (recon + kl).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 25 == 0:
            loss.item()
        del mix, ids, bow, mu, lv, recon, kl, loss
    model.eval().requires_grad_(False)

    maxd, maxl = _smoke(64, 3), _smoke(384, 8)
    host = [torch.randint(0, V, (maxd * maxl,), dtype=torch.int32).pin_memory() for _ in range(2)]
    up = SideUploads(host)

    def draw():
        return rng.randint(1, maxd), rng.randint(_smoke(32, 2), maxl), rng.randint(_smoke(8, 1), _smoke(16, 2))

    nreq = rng.randint(_smoke(415, 3), _smoke(435, 4))
    plan = [draw() for _ in range(nreq)]
    nxt = up.upload(0, plan[0][0] * plan[0][1])
    for i in range(nreq):
        g, L, refine = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, plan[i + 1][0] * plan[i + 1][1])
        raw, ev = item
        SideUploads.ready(ev, raw)
        ids = raw.view(g, L).long()
        lens = torch.randint(max(1, L // 4), L + 1, (g, 1), device="cuda")
        valid = (torch.arange(L, device="cuda")[None] < lens).float()
        bow = torch.zeros(g, V, device="cuda").scatter_add_(1, ids, valid)
        with torch.no_grad():
            mu0, lv0 = model.encode(bow)
        mu, lv = mu0.clone().requires_grad_(), lv0.clone().requires_grad_()
        for _r in range(refine):
            with torch.enable_grad():
                recon, kl = model.elbo_terms(bow, mu, lv)
                gm, gl = torch.autograd.grad((recon + kl).sum(), [mu, lv])
            with torch.no_grad():
                mu = (mu - 0.05 * gm).requires_grad_()
                lv = (lv - 0.05 * gl).clamp(-8, 4).requires_grad_()
            del recon, kl, gm, gl
        with torch.no_grad():
            recon, kl = model.elbo_terms(bow, mu, lv)
            ppl = torch.exp((recon + kl) / bow.sum(1).clamp_min(1))
            w, top = torch.softmax(mu, -1).topk(3, dim=1)
            torch.cat([top.float(), w, ppl[:, None]], 1).tolist()
        del item, raw, ids, lens, valid, bow, mu0, lv0, mu, lv, recon, kl, ppl, w, top

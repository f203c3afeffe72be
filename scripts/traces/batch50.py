"""The fiftieth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch49_b.py are): quantitative finance, trading and risk on the GPU, written in torch alone, first half. Deep
hedging of an options book (Buehler et al. 2019: a policy network trading the underlying over Monte Carlo paths of
a Heston model, books, maturities and path counts drawn per phase, a CVaR loss in the Rockafellar-Uryasev form, a
Black-Scholes delta-hedge baseline in the evaluation), a Monte Carlo pricing service for exotic options (Asian,
barrier, basket and lookback contracts in request batches whose contract terms and market snapshots are uploaded
from pinned host buffers on a side stream, correlated GBM paths in chunks, control variates with closed-form
means, pathwise greeks by autograd on the first chunk), a limit-order-book model (DeepLOB's convolution and
inception front, Zhang et al. 2019, with a transformer over time as in TransLOB, trained on synthetic order-book
days on mid-price movement at four horizons, windows and batches drawn), and a rolling mean-CVaR portfolio
backtest (a factor-model return panel, per rebalance date a drawn universe and lookback, Ledoit-Wolf shrinkage,
scenarios by Cholesky, mean-CVaR and risk-parity weights by gradient, a minimum-variance baseline by solve,
out-of-sample returns read back). Same conventions as the earlier batches: nothing downloaded, data drawn at
random on the device (paths, books, snapshots), `rng` the workload's random.Random for every shape, count and
sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a
tensor's value: step counts, path counts and universes are fixed on the host, decisions made on the device are
torch.where, clamps, sorts and argmax (boolean-mask indexing is avoided); losses, prices and risk figures are read
back only at logging points (the pricing service returns each request's prices, as a service must).
exotic_mc_price_serve uses a side stream (uploads waited on by event, the tensors record_stream'ed); the others
are single-stream. deeplob_transformer_train and the deep-hedging policy run under bf16 autocast; the simulations,
the pricing and the portfolio optimisation are fp32, as they are usually run.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch50_b.py's header says the same of its half): every workload of this half
was run whole at its final real sizes (RECORD_SMOKE unset) on PyTorch's meta device with the helper's runner
(/tmp/b50/meta_run.py, not committed, a copy of batch 47's: smoke_cpu.py's patching with "cuda" mapped to "meta",
readbacks answered with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking a math path, streams,
events and pinned memory no-ops; boolean-mask indexing, which the meta device cannot size, is avoided), its op
outputs counted there (events about 1.8x that count) and its peak live bytes tracked: deep_hedging_heston_train
324,984 op outputs, peak 3.21 GB; exotic_mc_price_serve 322,345, 1.62 GB; deeplob_transformer_train 315,844, 2.23
GB; mean_cvar_backtest 320,094, 1.16 GB (peaks in fp32 where autocast would take bf16). record_new50.sh's header has
them too, with the first runs that led to resizes. The CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional


def _ncdf(x):
    """The standard normal CDF from erf."""
    return 0.5 * (1 + torch.erf(x / math.sqrt(2)))


def _bs_call(s, k, t, vol, r):
    """Black-Scholes call price and delta (tensors broadcast)."""
    sd = vol * t.sqrt() if isinstance(t, torch.Tensor) else vol * math.sqrt(t)
    d1 = (torch.log(s / k) + r * t) / sd + 0.5 * sd
    disc = torch.exp(-r * t) if isinstance(t, torch.Tensor) else math.exp(-r * t)
    return s * _ncdf(d1) - k * disc * _ncdf(d1 - sd), _ncdf(d1)


# ---------------------------------------------------------------- deep hedging under Heston


def _heston_paths(n, steps, dt, kappa, theta, xi, rho, v0):
    """Heston paths by full-truncation Euler (log-Euler for the price), spot 1: (n, steps+1) prices and
    variances."""
    v = torch.full((n,), v0, device="cuda")
    logs = torch.zeros(n, device="cuda")
    ss, vs = [torch.ones(n, device="cuda")], [v]
    z = torch.randn(2, steps, n, device="cuda")
    for t in range(steps):
        z2 = rho * z[0, t] + math.sqrt(1 - rho * rho) * z[1, t]
        vp = v.clamp_min(0)
        sq = (vp * dt).sqrt()
        logs = logs - 0.5 * vp * dt + sq * z[0, t]
        v = v + kappa * (theta - vp) * dt + xi * sq * z2
        ss.append(logs.exp())
        vs.append(v.clamp_min(0))
    return torch.stack(ss, 1), torch.stack(vs, 1)


def _book_payoff(s, book):
    """The book's payoff over paths s (n, steps+1): a sum of (kind, strike, notional) positions."""
    pay = torch.zeros(s.shape[0], device="cuda")
    for kind, k, q in book:
        if kind == "call":
            pay = pay + q * _F.relu(s[:, -1] - k)
        elif kind == "put":
            pay = pay + q * _F.relu(k - s[:, -1])
        elif kind == "asian":
            pay = pay + q * _F.relu(s[:, 1:].mean(1) - k)
        else:  # down-and-out put, barrier 0.8k, smoothed indicator on the running minimum
            alive = torch.sigmoid((s.amin(1) - 0.8 * k) * 200)
            pay = pay + q * alive * _F.relu(k - s[:, -1])
    return pay


class _HedgePolicy(torch.nn.Module):
    """A policy shared over time steps (features: log price, variance, time to maturity, the previous holding):
    an MLP to the new holding of the underlying."""

    def __init__(self, width, depth):
        super().__init__()
        layers, cin = [], 4
        for _ in range(depth):
            layers += [torch.nn.Linear(cin, width), torch.nn.SiLU()]
            cin = width
        self.body = torch.nn.Sequential(*layers, torch.nn.Linear(cin, 1))

    def forward(self, x):
        return self.body(x)[..., 0]


def _hedge_pnl(policy, s, v, tmat, cost, book):
    """Terminal P&L of the hedged short book over paths: holdings chosen step by step by the policy (autocast),
    gains from the price moves, proportional transaction costs, minus the book's payoff."""
    n, t1 = s.shape
    steps = t1 - 1
    delta = torch.zeros(n, device="cuda")
    gains = torch.zeros(n, device="cuda")
    for t in range(steps):
        feat = torch.stack([s[:, t].log(), v[:, t] * 10, torch.full_like(delta, tmat * (1 - t / steps)), delta], 1)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            nd = policy(feat).float()
        gains = gains + nd * (s[:, t + 1] - s[:, t]) - cost * (nd - delta).abs() * s[:, t]
        delta = nd
    gains = gains - cost * delta.abs() * s[:, -1]
    return gains - _book_payoff(s, book)


@_workload("deep hedging (Buehler et al. 2019) of an options book under a Heston model written by hand: 3 phases, each a Heston parameter set (kappa, theta, vol-of-vol, correlation -0.9 to -0.3, v0), a maturity (21, 42 or 63 daily steps), a transaction-cost rate and a book of 2-4 positions (calls, puts, arithmetic Asian calls, down-and-out puts with a smoothed barrier) drawn, a fresh policy MLP (width 64-128, 3-4 layers, SiLU; features log price, variance, time left, previous holding) applied step by step under bf16 autocast; a pool of 131k-262k paths simulated per phase (full-truncation Euler) and minibatches of 8k-32k paths (drawn, cut to 1M path-steps) gathered from it; loss the CVaR at 95% in the Rockafellar-Uryasev form with a learned threshold; Adam; 31-39 steps a phase; after each phase an evaluation without grad on 65k fresh paths in chunks: CVaR and mean of the hedged P&L by sort, against a Black-Scholes delta hedge at the instantaneous volatility, read back")
def deep_hedging_heston_train(rng):
    for phase in range(_smoke(3, 1)):
        kappa, theta = rng.uniform(1.0, 4.0), rng.uniform(0.02, 0.09)
        xi, rho, v0 = rng.uniform(0.3, 1.0), rng.uniform(-0.9, -0.3), rng.uniform(0.02, 0.09)
        steps = _smoke(rng.choice([21, 42, 63]), 5)
        tmat, dt = steps / 252, 1 / 252
        cost = rng.choice([0.0, 0.0005, 0.001, 0.002])
        book = [(rng.choice(["call", "put", "asian", "dop"]), rng.uniform(0.9, 1.1), rng.choice([-1.0, 1.0]) *
                 rng.uniform(0.5, 2.0)) for _ in range(rng.randint(2, 4))]
        policy = _HedgePolicy(rng.choice(_smoke([64, 96, 128], [8])), rng.randint(3, 4)).cuda()
        w = torch.nn.Parameter(torch.zeros((), device="cuda"))
        opt = torch.optim.Adam(list(policy.parameters()) + [w], lr=2e-3)
        pool_n = rng.choice(_smoke([131072, 196608, 262144], [512]))
        chunks = [_heston_paths(min(65536, pool_n), steps, dt, kappa, theta, xi, rho, v0)
                  for _ in range(max(1, pool_n // 65536))]
        pool_s = torch.cat([c[0] for c in chunks])
        pool_v = torch.cat([c[1] for c in chunks])
        del chunks
        alpha = 0.95
        for step in range(_smoke(rng.randint(31, 39), 2)):
            n = min(rng.choice(_smoke([8192, 16384, 32768], [64, 128])), _smoke(1_000_000, 2000) // steps)
            idx = torch.randint(0, pool_s.shape[0], (n,), device="cuda")
            pnl = _hedge_pnl(policy, pool_s[idx], pool_v[idx], tmat, cost, book)
            loss = w + _F.relu(-pnl - w).mean() / (1 - alpha)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            del idx, pnl, loss
            if (step + 1) % 10 == 0:
                w.detach().cpu()
        del pool_s, pool_v
        stats = []
        with torch.no_grad():
            for _ in range(_smoke(2, 1)):
                s, v = _heston_paths(_smoke(32768, 256), steps, dt, kappa, theta, xi, rho, v0)
                pnl = _hedge_pnl(policy, s, v, tmat, cost, book)
                delta = torch.zeros(s.shape[0], device="cuda")
                gains = torch.zeros_like(delta)
                for t in range(steps):
                    tl = torch.full_like(delta, tmat * (1 - t / steps))
                    nd = torch.zeros_like(delta)
                    for kind, k, q in book:
                        _, d = _bs_call(s[:, t], torch.full_like(delta, k), tl, v[:, t].clamp_min(1e-4).sqrt(), 0.0)
                        nd = nd + q * (d if kind in ("call", "asian") else d - 1)
                    gains = gains + nd * (s[:, t + 1] - s[:, t]) - cost * (nd - delta).abs() * s[:, t]
                    delta = nd
                bs_pnl = gains - _book_payoff(s, book)
                for p in (pnl, bs_pnl):
                    srt = p.sort().values
                    tail = srt[: max(1, int(0.05 * srt.shape[0]))]
                    stats.append(torch.stack([p.mean(), -tail.mean()]))
                del s, v, pnl, delta, gains, bs_pnl, srt, tail
        torch.stack(stats).cpu()
        del policy, w, opt, stats


# ---------------------------------------------------------------- exotic option Monte Carlo pricing service


_PRODUCTS = ["asian", "barrier", "basket", "lookback"]


def _price_chunk(prod, terms, chol, npath, steps, d, dt, greeks):
    """One chunk of correlated GBM paths for every contract of a request (C, npath, steps, d) and the payoff Y and
    control variate X per path (discounted). terms: (C, 24) per contract: spots (8), vols (8), rate, dividend,
    strike, barrier, maturity, basket weight scale, and two spare. With greeks, spots and vols are leaves and the
    mean payoff's gradients (pathwise delta and vega) are returned too."""
    c = terms.shape[0]
    s0 = terms[:, :d]
    vol = terms[:, 8:8 + d]
    if greeks:
        s0 = s0.detach().requires_grad_(True)
        vol = vol.detach().requires_grad_(True)
    r, q, k, bar, mat = (terms[:, 16 + i] for i in range(5))
    z = torch.randn(c, npath, steps, d, device="cuda")
    if d > 1:
        z = z @ chol.T
    drift = ((r - q)[:, None] - 0.5 * vol * vol) * dt[:, None]
    inc = drift[:, None, None] + (vol * dt.sqrt()[:, None])[:, None, None] * z
    s = s0[:, None, None] * inc.cumsum(2).exp()
    disc = torch.exp(-r * mat)[:, None]
    if prod == "asian":
        avg = s[..., 0].mean(2)
        y = _F.relu(avg - k[:, None])
        x = _F.relu(torch.exp(s[..., 0].log().mean(2)) - k[:, None])  # geometric Asian: the control
    elif prod == "barrier":
        alive = torch.sigmoid((bar[:, None] - s[..., 0].amax(2)) * 50 / bar[:, None])
        y = alive * _F.relu(s[:, :, -1, 0] - k[:, None])
        x = _F.relu(s[:, :, -1, 0] - k[:, None])  # the vanilla call: the control
    elif prod == "basket":
        wts = torch.full((d,), 1.0 / d, device="cuda")
        basket = (s[:, :, -1] * wts).sum(-1)
        y = _F.relu(basket - k[:, None])
        x = basket  # the basket forward: the control
    else:
        y = s[:, :, -1, 0] - s[..., 0].amin(2).clamp_max(s0[:, None, 0])
        x = s[:, :, -1, 0]
    y, x = y * disc, x * disc
    out = [y.sum(1), x.sum(1), (y * y).sum(1), (x * x).sum(1), (y * x).sum(1)]
    g = None
    if greeks:
        dl, vg = torch.autograd.grad(y.mean(1).sum(), [s0, vol])
        g = torch.cat([dl[:, :1], vg[:, :1]], 1)
    return torch.stack(out, 1).detach(), g


def _control_mean(prod, terms, d, steps):
    """The controls' exact discounted expectations: the geometric Asian call (discrete monitoring), the
    Black-Scholes call, the basket forward and the terminal forward."""
    s0, vol = terms[:, 0], terms[:, 8]
    r, q, k, mat = terms[:, 16], terms[:, 17], terms[:, 18], terms[:, 20]
    if prod == "asian":
        n = steps
        vg = vol * math.sqrt((n + 1) * (2 * n + 1) / (6 * n * n))
        mu = (r - q - 0.5 * vol * vol) * (n + 1) / (2 * n) + 0.5 * vg * vg
        fwd = s0 * torch.exp(mu * mat)
        sd = vg * mat.sqrt()
        d1 = (torch.log(fwd / k) + 0.5 * sd * sd) / sd
        return torch.exp(-r * mat) * (fwd * _ncdf(d1) - k * _ncdf(d1 - sd))
    if prod == "barrier":
        return _bs_call(s0 * torch.exp(-q * mat), k, mat, vol, r)[0]
    if prod == "basket":
        return (terms[:, :d] * torch.exp(-terms[:, 17:18] * mat[:, None])).mean(1)
    return s0 * torch.exp(-q * mat)


@_workload("Monte Carlo pricing service for exotic options written by hand (fp32): 1,400 request batches, each one product drawn (arithmetic Asian call with the discrete geometric Asian as control variate, up-and-out call with a smoothed barrier and the vanilla call as control, basket call of 2-8 correlated assets with the basket forward as control, floating lookback with the forward as control), 4-32 contracts, 12-252 monitoring dates and 16k-131k paths per contract (drawn, the total cut to 134M path-date-assets); each request's contract terms and the market snapshot (spots, vols, rates, a correlation matrix) uploaded from reused pinned host buffers on a side stream one request ahead (waited on by event, record_stream'ed); correlated GBM paths by Cholesky and cumsum in chunks of up to 33M path-date-assets under no_grad, control-variate sums accumulated over chunks, the optimal coefficient, price and standard error per contract, closed-form control means; pathwise delta and vega by autograd on the first chunk; each request's prices, errors and greeks read back")
def exotic_mc_price_serve(rng):
    cmax, dmax = _smoke(32, 4), 8
    host_terms = [torch.rand(cmax * 24).pin_memory() for _ in range(2)]
    host_corr = [torch.rand(dmax * dmax).pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    done = [None, None]

    def fetch(i):
        prod = rng.choice(_PRODUCTS)
        c = rng.choice(_smoke([4, 8, 16, 32], [2, 4]))
        s = i % 2
        if done[s] is not None:
            done[s].synchronize()
        with torch.cuda.stream(side):
            terms = host_terms[s][:c * 24].view(c, 24).to("cuda", non_blocking=True)
            corr = host_corr[s].view(dmax, dmax).to("cuda", non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        done[s] = ev
        return prod, terms, corr, ev

    budget, chunk_budget = _smoke(134_217_728, 200_000), _smoke(33_554_432, 50_000)
    nxt = fetch(0)
    for req in range(_smoke(1400, 4)):
        prod, raw, corr, ev = nxt
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        raw.record_stream(cur)
        corr.record_stream(cur)
        nxt = fetch(req + 1)
        c = raw.shape[0]
        d = rng.randint(2, dmax) if prod == "basket" else 1
        steps = rng.choice(_smoke([12, 52, 126, 252], [4, 8]))
        paths = rng.choice(_smoke([16384, 32768, 65536, 131072], [64, 128]))
        paths = max(_smoke(2048, 32), min(paths, budget // (c * steps * d)))
        with torch.no_grad():
            # raw uniforms to contract terms: spots 80-120, vols 10-50%, rate 0-5%, dividend 0-3%, strike 85-115%
            # of spot, barrier 115-150% of spot, maturity 0.25-2 years
            terms = torch.cat([80 + 40 * raw[:, :8], 0.1 + 0.4 * raw[:, 8:16], 0.05 * raw[:, 16:17],
                               0.03 * raw[:, 17:18], (0.85 + 0.3 * raw[:, 18:19]) * (80 + 40 * raw[:, :1]),
                               (1.15 + 0.35 * raw[:, 19:20]) * (80 + 40 * raw[:, :1]), 0.25 + 1.75 * raw[:, 20:21],
                               raw[:, 21:]], 1)
            a = corr[:d, :d] * 0.6 - 0.3
            cm = (a + a.T) / 2
            cm = cm - torch.diag_embed(cm.diagonal()) + torch.eye(d, device="cuda")
            cm = cm @ cm.T / d + torch.eye(d, device="cuda") * 0.5
            sd = cm.diagonal().sqrt()
            chol = torch.linalg.cholesky(cm / sd[:, None] / sd[None])
            dt = terms[:, 20] / steps
            per = max(_smoke(1024, 16), min(paths, chunk_budget // (c * steps * d)))
            sums = torch.zeros(c, 5, device="cuda")
            greeks = None
            for p0 in range(0, paths, per):
                np_ = min(per, paths - p0)
                if p0 == 0:
                    with torch.enable_grad():
                        part, greeks = _price_chunk(prod, terms, chol, min(np_, _smoke(8192, 32)), steps, d, dt, True)
                    sums += part
                    rest = np_ - min(np_, _smoke(8192, 32))
                    if rest > 0:
                        sums += _price_chunk(prod, terms, chol, rest, steps, d, dt, False)[0]
                else:
                    sums += _price_chunk(prod, terms, chol, np_, steps, d, dt, False)[0]
            my, mx = sums[:, 0] / paths, sums[:, 1] / paths
            vy, vx = sums[:, 2] / paths - my * my, sums[:, 3] / paths - mx * mx
            cov = sums[:, 4] / paths - my * mx
            beta = cov / vx.clamp_min(1e-12)
            price = my - beta * (mx - _control_mean(prod, terms, d, steps))
            err = ((vy - beta * cov).clamp_min(0) / paths).sqrt()
            torch.cat([torch.stack([price, err], 1), greeks], 1).cpu()
            del terms, chol, sums, greeks, price, err, cm, a, sd
        del raw, corr


# ---------------------------------------------------------------- limit-order-book model


def _lob_day(events, levels, tick):
    """A synthetic order-book day: a mid price as a random walk with volatility clustering in ticks, level prices
    every tick either side of the half-spread, level sizes log-normal with an imbalance that leads the next moves.
    Returns (events, 4*levels) features (ask price, ask size, bid price, bid size per level) and the mid."""
    volc = (torch.randn(events, device="cuda") * 0.1).cumsum(0).sin().abs() + 0.3
    imb = torch.randn(events, device="cuda")
    imb = imb + 0.9 * torch.roll(imb, 1)
    moves = (torch.randn(events, device="cuda") * volc + 0.15 * torch.roll(imb, 3)).round() * tick
    mid = 100 + moves.cumsum(0)
    half = tick * (1 + (torch.rand(events, device="cuda") < 0.3).float()) / 2
    lv = torch.arange(levels, device="cuda") * tick
    ask_p = mid[:, None] + half[:, None] + lv
    bid_p = mid[:, None] - half[:, None] - lv
    base = torch.exp(torch.randn(events, 2, levels, device="cuda") * 0.5 + 5)
    ask_s = base[:, 0] * torch.exp(-0.3 * imb)[:, None]
    bid_s = base[:, 1] * torch.exp(0.3 * imb)[:, None]
    feats = torch.stack([ask_p, ask_s, bid_p, bid_s], 2).reshape(events, 4 * levels)
    return feats, mid


def _lob_labels(mid, horizons, thr):
    """DeepLOB's smoothed labels: the mean of the next k mids against the mean of the previous k, down / flat /
    up by a threshold, for every horizon (events, H) (the ends padded flat)."""
    cs = torch.cat([torch.zeros(1, device="cuda"), mid.cumsum(0)])
    n = mid.shape[0]
    out = []
    for k in horizons:
        i = torch.arange(n, device="cuda").clamp(k, n - k - 1)
        prev = (cs[i + 1] - cs[i + 1 - k]) / k
        nxt = (cs[i + 1 + k] - cs[i + 1]) / k
        ch = (nxt - prev) / prev
        out.append(torch.where(ch > thr, 2, torch.where(ch < -thr, 0, 1)))
    return torch.stack(out, 1)


class _DeepLobT(torch.nn.Module):
    """DeepLOB's front (three convolution blocks collapsing the level axis: (1,2) stride-2 convs pairing price
    and size, then ask and bid, then a (1,levels) conv; each with (4,1) temporal convs, leaky ReLU and batch norm),
    its inception module (1x1 then 3x1, 1x1 then 5x1, max-pool then 1x1; 192 channels), then a transformer
    encoder over time (learned positions) and one head per horizon on the last step."""

    def __init__(self, levels, ch, d, layers, heads, horizons, maxlen):
        super().__init__()

        def blk(cin, k, s):
            return torch.nn.ModuleList([
                torch.nn.Conv2d(cin, ch, k, stride=s), torch.nn.BatchNorm2d(ch),
                torch.nn.Conv2d(ch, ch, (4, 1), padding="same"), torch.nn.BatchNorm2d(ch),
                torch.nn.Conv2d(ch, ch, (4, 1), padding="same"), torch.nn.BatchNorm2d(ch)])

        self.blocks = torch.nn.ModuleList([blk(1, (1, 2), (1, 2)), blk(ch, (1, 2), (1, 2)),
                                           blk(ch, (1, levels), (1, 1))])
        self.inc = torch.nn.ModuleList([
            torch.nn.Sequential(torch.nn.Conv2d(ch, 64, 1), torch.nn.LeakyReLU(0.01),
                                torch.nn.Conv2d(64, 64, (3, 1), padding="same"), torch.nn.LeakyReLU(0.01)),
            torch.nn.Sequential(torch.nn.Conv2d(ch, 64, 1), torch.nn.LeakyReLU(0.01),
                                torch.nn.Conv2d(64, 64, (5, 1), padding="same"), torch.nn.LeakyReLU(0.01)),
            torch.nn.Sequential(torch.nn.MaxPool2d((3, 1), 1, (1, 0)), torch.nn.Conv2d(ch, 64, 1),
                                torch.nn.LeakyReLU(0.01))])
        self.inp = torch.nn.Linear(192, d)
        self.pos = torch.nn.Parameter(torch.randn(1, maxlen, d) * 0.02)
        self.enc = torch.nn.TransformerEncoder(
            torch.nn.TransformerEncoderLayer(d, heads, 4 * d, 0.1, batch_first=True, norm_first=True), layers,
            enable_nested_tensor=False)
        self.heads = torch.nn.Linear(d, 3 * len(horizons))

    def forward(self, x):
        h = x[:, None]  # (B, 1, T, F)
        for blk in self.blocks:
            for i in range(0, 6, 2):
                h = blk[i + 1](_F.leaky_relu(blk[i](h), 0.01))
        h = torch.cat([m(h) for m in self.inc], 1)[..., 0].transpose(1, 2)  # (B, T, 192)
        t = h.shape[1]
        z = self.enc(self.inp(h) + self.pos[:, :t])
        return self.heads(z[:, -1]).view(x.shape[0], -1, 3)


@_workload("limit-order-book mid-price movement model written by hand (random init): DeepLOB's convolution blocks and inception module (Zhang et al. 2019; 32 channels, leaky ReLU, batch norm) with a 2-layer transformer encoder over time (width 128, 4 heads, as in TransLOB) and heads for 4 horizons (10, 20, 50, 100 events; down/flat/up from smoothed mid changes, DeepLOB's labels); synthetic order-book days of 100k-250k events at 10 levels made on the device (a clustered-volatility mid in ticks, level sizes log-normal with an imbalance that leads the moves), a new day every 64 steps, z-scored by the previous day's statistics; 525 training steps under bf16 autocast, each a batch of 32-256 windows (drawn) of 50, 100 or 200 events (drawn, cut to 25.6k window-events) gathered at random starts, cross-entropy over the horizons, AdamW with a cosine rate; every 105 steps an evaluation without grad over 8 batches of 256 windows of 100 events from a held-out day, accuracy per horizon by argmax read back")
def deeplob_transformer_train(rng):
    levels, horizons = _smoke(10, 2), [10, 20, 50, 100]
    maxlen = _smoke(200, 16)
    model = _DeepLobT(levels, _smoke(32, 4), _smoke(128, 16), _smoke(2, 1), 4, horizons, maxlen).cuda()
    steps = _smoke(525, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    hz = [_smoke(h, 2) for h in horizons]

    def new_day():
        feats, mid = _lob_day(_smoke(rng.randint(100_000, 250_000), 600), levels, 0.01)
        return feats, _lob_labels(mid, hz, 2e-5)

    def windows(feats, labels, mu, sd, bsz, t):
        start = torch.randint(0, feats.shape[0] - t, (bsz,), device="cuda")
        idx = start[:, None] + torch.arange(t, device="cuda")
        x = (feats[idx] - mu) / sd
        return x, labels[start + t - 1]

    feats, labels = new_day()
    mu, sd = feats.mean(0), feats.std(0) + 1e-6
    held, held_lab = new_day()
    for step in range(steps):
        if step % _smoke(64, 2) == 0 and step > 0:
            mu, sd = feats.mean(0), feats.std(0) + 1e-6
            del feats, labels
            feats, labels = new_day()
        t = rng.choice(_smoke([50, 100, 200], [8, 16]))
        bsz = min(rng.choice(_smoke([32, 64, 128, 256], [2, 4])), _smoke(25_600, 64) // t)
        x, y = windows(feats, labels, mu, sd, bsz, t)
        model.train()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x)
        loss = _F.cross_entropy(logits.float().reshape(-1, 3), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        del x, y, logits, loss
        if (step + 1) % _smoke(105, 3) == 0:
            model.eval()
            accs = []
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for _ in range(_smoke(8, 1)):
                    x, y = windows(held, held_lab, mu, sd, _smoke(256, 4), _smoke(100, 8))
                    accs.append((model(x).argmax(-1) == y).float().mean(0))
                    del x, y
            torch.stack(accs).mean(0).cpu()
            del accs


# ---------------------------------------------------------------- rolling mean-CVaR backtest


def _return_panel(days, assets, factors):
    """Daily returns (days, assets) from a factor model with fat tails: factor returns with GARCH-like volatility
    clustering, loadings drawn, idiosyncratic Student-t noise (5 degrees of freedom from squared normals)."""
    fvol = 0.01 * (1 + 0.5 * torch.sin(torch.arange(days, device="cuda")[:, None] / 40 +
                                       torch.rand(1, factors, device="cuda") * 6))
    f = torch.randn(days, factors, device="cuda") * fvol + 0.0002
    load = torch.randn(assets, factors, device="cuda") * 0.4 + torch.cat(
        [torch.ones(assets, 1, device="cuda"), torch.zeros(assets, factors - 1, device="cuda")], 1)
    chi = torch.randn(5, days, assets, device="cuda").pow(2).sum(0) / 5
    eps = torch.randn(days, assets, device="cuda") / chi.sqrt() * 0.012
    alpha = torch.randn(assets, device="cuda") * 0.0002
    return f @ load.T + eps + alpha


@_workload("rolling portfolio-optimisation backtest written by hand (fp32): a return panel of 3,000 days x 3,000 assets from a 20-factor model with volatility clustering and Student-t idiosyncratic noise made on the device; 38 rebalance dates a month or two apart, each a universe of 250-3,000 assets (a random subset gathered) and a lookback of 250-750 days (drawn): Ledoit-Wolf shrinkage of the sample covariance toward a scaled identity (intensity computed on the device), its Cholesky factor, 20k-100k scenarios (drawn, cut to 120M scenario-assets) of Student-t returns; long-only mean-CVaR weights (softmax of logits, the 95% CVaR in the Rockafellar-Uryasev form with a learned threshold, a smoothed turnover penalty against the previous date's weights; universes nested) by Adam for 150 iterations; risk-parity weights by Adam on Spinu's convex formulation for 100 iterations; minimum-variance weights by linalg.solve; the next 21 days' out-of-sample returns of the three portfolios read back")
def mean_cvar_backtest(rng):
    days, nmax = _smoke(3000, 400), _smoke(3000, 64)
    panel = _return_panel(days, nmax, _smoke(20, 4))
    perm = torch.randperm(nmax, device="cuda")
    w_last = None
    t = _smoke(760, 260)
    for date in range(_smoke(38, 2)):
        n = rng.choice(_smoke([250, 500, 1000, 2000, 3000], [16, 32, 64]))
        look = rng.choice(_smoke([250, 500, 750], [100, 200]))
        nscen = min(rng.choice(_smoke([20000, 50000, 100000], [128, 256])), _smoke(120_000_000, 8192) // n)
        idx = perm[:n]  # nested universes: the n largest names of the day
        x = panel[t - look:t][:, idx]
        mu = x.mean(0)
        xc = x - mu
        samp = xc.T @ xc / look
        m = samp.diagonal().mean()
        eye = torch.eye(n, device="cuda")
        delta = (samp - m * eye).pow(2).sum()
        pi = xc.pow(2).sum(1).pow(2).mean() - samp.pow(2).sum()
        shrink = (pi / delta / look).clamp(0, 1)
        cov = shrink * m * eye + (1 - shrink) * samp
        chol = torch.linalg.cholesky(cov + 1e-8 * eye)
        chi = torch.randn(5, nscen, 1, device="cuda").pow(2).sum(0) / 5
        scen = mu + (torch.randn(nscen, n, device="cuda") @ chol.T) / chi.sqrt() * math.sqrt(3 / 5) * math.sqrt(21)
        del chi, xc, samp
        # mean-CVaR
        w_prev = None
        if w_last is not None:  # the previous weights on this universe (names that left dropped, new names at 0)
            m_ = min(n, w_last.shape[0])
            w_prev = torch.cat([w_last[:m_], torch.zeros(n - m_, device="cuda")])
        logits = torch.nn.Parameter(torch.zeros(n, device="cuda"))
        thr = torch.nn.Parameter(torch.zeros((), device="cuda"))
        opt = torch.optim.Adam([logits, thr], lr=0.05)
        lam, kappa = rng.choice([0.5, 1.0, 2.0]), 0.002
        for it in range(_smoke(150, 3)):
            w = torch.softmax(logits, 0)
            loss_port = -(scen @ w)
            cvar = thr + _F.relu(loss_port - thr).mean() / 0.05
            obj = -lam * 21 * (mu @ w) + cvar
            if w_prev is not None:
                obj = obj + kappa * ((w - w_prev).pow(2) + 1e-8).sqrt().sum()
            opt.zero_grad(set_to_none=True)
            obj.backward()
            opt.step()
            del w, loss_port, cvar, obj
        w_cvar = torch.softmax(logits.detach(), 0)
        # risk parity (Spinu): minimise 0.5 y'Sy - b'log y over y > 0, weights y / sum(y)
        ly = torch.nn.Parameter(torch.zeros(n, device="cuda"))
        opt = torch.optim.Adam([ly], lr=0.05)
        for it in range(_smoke(100, 3)):
            y = ly.exp()
            obj = 0.5 * y @ (cov @ y) * 1e4 - ly.sum() / n
            opt.zero_grad(set_to_none=True)
            obj.backward()
            opt.step()
            del y, obj
        w_rp = ly.detach().exp()
        w_rp = w_rp / w_rp.sum()
        w_mv = torch.linalg.solve(cov, torch.ones(n, 1, device="cuda"))[:, 0]
        w_mv = w_mv / w_mv.sum()
        oos = panel[t:t + 21][:, idx]
        res = torch.stack([(oos @ w).add(1).prod() - 1 for w in (w_cvar, w_rp, w_mv)])
        res.cpu()
        w_last = w_cvar
        t += 21 * rng.randint(1, 2) if t + 130 < days else 0
        del x, mu, cov, chol, scen, logits, thr, opt, ly, w_rp, w_mv, oos, res, eye, idx

"""The fiftieth batch of held-out workloads, second half (batch50.py holds the first): quantitative finance,
trading and risk on the GPU, written in torch alone. A neural-SDE market generator (Kidger et al. 2021: drift and
diffusion networks integrated by Euler-Maruyama, trained by a signature-kernel MMD, Chevyrev and Oberhauser 2022,
against multi-asset return paths of a stochastic-volatility model with jumps, path lengths and batches drawn per
step, depth-3 signatures of the time-augmented paths computed by hand with cumsum), an arbitrage-penalised
implied-volatility-surface fitter (a network of total variance fitted day after day to quotes on strike and
maturity grids of drawn sizes, warm-started from the previous day, calendar and butterfly conditions, Gatheral's
g(k), penalised on collocation grids through first and second derivatives by autograd with create_graph, Dupire
local volatility at the day's end), a portfolio VaR/ES service (request batches of portfolios of drawn size whose
position tables and market-data snapshots are uploaded from pinned host buffers on a side stream, factor-model
scenarios by Cholesky, full revaluation of options by Black-Scholes in scenario chunks, VaR and ES per book by
sort, a large end-of-day run every so often), and a PPO market maker (Avellaneda-Stoikov-style quoting in a
vectorised order-book simulator on the device, episodes of drawn length, GAE, clipped PPO epochs, deterministic
evaluations). Same conventions as batch50.py: nothing downloaded, data drawn on the device, `rng` the workload's
random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)`. No control flow
reads a tensor's value (fills are multiplied indicators, clamps and torch.where; iteration counts fixed on the
host); losses, risk figures and returns are read back only at logging points (the risk service returns each
request's figures). var_es_risk_serve uses a side stream (uploads waited on by event, the tensors
record_stream'ed); the others are single-stream. ppo_market_maker_train's networks run under bf16 autocast in the
rollouts; the SDE generator, the surface fitter (second derivatives) and the risk service are fp32.

Real sizes checked before recording, as batch50.py's header says (the same meta-device runner, op outputs counted,
peak live bytes tracked), each run whole at its final sizes: neural_sde_siggen_train 317,354 op outputs, peak 0.41
GB; ivsurface_arbfree_fit 329,976, 0.15 GB; var_es_risk_serve 316,020, 0.74 GB; ppo_market_maker_train 342,380, 0.38
GB. record_new50.sh's header has the figures, with the first runs that led to resizes. The CPU smoke run
(RECORD_SMOKE=1) ran all four.
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


# ---------------------------------------------------------------- neural SDE market generator


def _svj_returns(n, steps, d, dt):
    """Daily log returns (n, steps, d) of d correlated assets under a Heston-type stochastic volatility with
    Merton jumps (a shared variance factor per path plus per-asset ones)."""
    v = torch.full((n, d), 0.04, device="cuda") * (0.5 + torch.rand(n, d, device="cuda"))
    corr = torch.full((d, d), 0.5, device="cuda") + 0.5 * torch.eye(d, device="cuda")
    chol = torch.linalg.cholesky(corr)
    z = torch.randn(steps, n, d, device="cuda") @ chol.T
    zv = torch.randn(steps, n, d, device="cuda")
    jumps = (torch.rand(steps, n, d, device="cuda") < 0.02 * 252 * dt).float() * (
        torch.randn(steps, n, d, device="cuda") * 0.04 - 0.02)
    out = []
    for t in range(steps):
        sq = (v * dt).sqrt()
        out.append(-0.5 * v * dt + sq * z[t] + jumps[t])
        v = (v + 2.0 * (0.04 - v) * dt + 0.5 * sq * (-0.7 * z[t] + 0.71 * zv[t])).clamp_min(1e-4)
    return torch.stack(out, 1)


def _signature3(path):
    """The depth-3 signature of piecewise-linear paths (B, L+1, c) by Chen's relation in closed cumulative form:
    levels 1, 2, 3 flattened and concatenated, each level scaled by the factorial of its depth."""
    b, l1, c = path.shape
    dx = path[:, 1:] - path[:, :-1]  # (B, L, c)
    s1 = dx.cumsum(1)
    s1p = s1 - dx  # level 1 before each step
    inc2 = s1p[..., :, None] * dx[..., None, :] + 0.5 * dx[..., :, None] * dx[..., None, :]
    s2 = inc2.cumsum(1)
    s2p = s2 - inc2
    inc3 = (s2p[..., None] * dx[:, :, None, None, :] +
            0.5 * s1p[..., :, None, None] * (dx[..., :, None] * dx[..., None, :])[:, :, None] +
            (dx[..., :, None, None] * dx[..., None, :, None] * dx[..., None, None, :]) / 6)
    s3 = inc3.sum(1)
    return torch.cat([s1[:, -1], s2[:, -1].reshape(b, -1) * 2, s3.reshape(b, -1) * 6], 1)


def _mmd_rbf(x, y, scales):
    """The (biased) MMD^2 between two samples under a sum of RBF kernels."""
    xy = torch.cat([x, y])
    d2 = torch.cdist(xy, xy).pow(2)
    k = sum(torch.exp(-d2 / (2 * s * s)) for s in scales)
    n = x.shape[0]
    return k[:n, :n].mean() + k[n:, n:].mean() - 2 * k[:n, n:].mean()


class _NeuralSde(torch.nn.Module):
    """A neural SDE generator: an initial hidden state from noise, drift and diffusion MLPs of (t, h) with tanh
    output layers (Lipschitz, bounded), Euler-Maruyama with m-dimensional Brownian increments, a linear readout
    to the assets' log prices."""

    def __init__(self, d, hid, width, m, noise):
        super().__init__()
        self.hid, self.m, self.noise = hid, m, noise
        self.init = torch.nn.Sequential(torch.nn.Linear(noise, width), torch.nn.SiLU(), torch.nn.Linear(width, hid))
        self.drift = torch.nn.Sequential(torch.nn.Linear(hid + 1, width), torch.nn.SiLU(),
                                         torch.nn.Linear(width, width), torch.nn.SiLU(),
                                         torch.nn.Linear(width, hid), torch.nn.Tanh())
        self.diff = torch.nn.Sequential(torch.nn.Linear(hid + 1, width), torch.nn.SiLU(),
                                        torch.nn.Linear(width, width), torch.nn.SiLU(),
                                        torch.nn.Linear(width, hid * m), torch.nn.Tanh())
        self.read = torch.nn.Linear(hid, d)

    def forward(self, n, steps, dt):
        h = self.init(torch.randn(n, self.noise, device="cuda"))
        xs = [self.read(h)]
        for t in range(steps):
            th = torch.cat([h, torch.full((n, 1), t * dt, device="cuda")], 1)
            dw = torch.randn(n, self.m, 1, device="cuda") * math.sqrt(dt)
            h = h + self.drift(th) * dt + torch.bmm(self.diff(th).view(n, self.hid, self.m), dw)[..., 0]
            xs.append(self.read(h))
        x = torch.stack(xs, 1)
        return x - x[:, :1]  # log prices from 0


@_workload("neural-SDE market generator (Kidger et al. 2021) trained by signature MMD written by hand (fp32): a pool of 65k three-asset daily log-return paths of 60 steps from a correlated stochastic-volatility model with jumps made on the device; a generator of hidden size 32 (drift and diffusion MLPs of width 64 with tanh outputs, 8 Brownian dimensions, Euler-Maruyama, a linear readout to log prices); 108 training steps, each a path length of 20, 40 or 60 days and a batch of 256-1024 paths (drawn), depth-3 signatures of the time-augmented and scaled paths (84 terms, computed by hand from cumsums of the level increments, the data's under no_grad), the MMD^2 under a sum of 3 RBF kernels on the signatures, Adam; every 27 steps an evaluation without grad on 8,192 generated and 8,192 data paths of 60 days: quantiles of the 1-, 5- and 20-day returns by sort, autocorrelation of absolute returns, read back")
def neural_sde_siggen_train(rng):
    d, dt = 3, 1 / 252
    lmax = _smoke(60, 8)
    pool = _svj_returns(_smoke(65536, 512), lmax, d, dt)
    gen = _NeuralSde(d, _smoke(32, 8), _smoke(64, 8), 8, 8).cuda()
    opt = torch.optim.Adam(gen.parameters(), lr=1e-3)
    scales = [0.5, 1.0, 2.0]

    def augment(lp, steps):
        t = torch.linspace(0, 1, steps + 1, device="cuda")[None, :, None].expand(lp.shape[0], steps + 1, 1)
        return torch.cat([t, lp * 10], 2)

    for step in range(_smoke(108, 3)):
        steps = rng.choice(_smoke([20, 40, 60], [4, 8]))
        bsz = rng.choice(_smoke([256, 512, 1024], [16, 32]))
        with torch.no_grad():
            idx = torch.randint(0, pool.shape[0], (bsz,), device="cuda")
            lp = torch.cat([torch.zeros(bsz, 1, d, device="cuda"), pool[idx, :steps].cumsum(1)], 1)
            sig_real = _signature3(augment(lp, steps))
        fake = gen(bsz, steps, dt)
        sig_fake = _signature3(augment(fake, steps))
        loss = _mmd_rbf(sig_fake, sig_real, scales)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(gen.parameters(), 1.0)
        opt.step()
        del idx, lp, sig_real, fake, sig_fake, loss
        if (step + 1) % _smoke(27, 3) == 0:
            stats = []
            with torch.no_grad():
                n = _smoke(8192, 64)
                fake = gen(n, lmax, dt)
                real = torch.cat([torch.zeros(n, 1, d, device="cuda"),
                                  pool[torch.randint(0, pool.shape[0], (n,), device="cuda")].cumsum(1)], 1)
                qs = torch.tensor([0.01, 0.05, 0.5, 0.95, 0.99], device="cuda")
                for x in (fake, real):
                    for h in _smoke((1, 5, 20), (1, 2, 4)):
                        r = (x[:, h:] - x[:, :-h]).reshape(-1)
                        srt = r.sort().values
                        stats.append(srt[(qs * (srt.shape[0] - 1)).long()])
                    a = (x[:, 1:] - x[:, :-1]).abs()
                    a = a - a.mean(1, keepdim=True)
                    stats.append(torch.stack([(a[:, k:] * a[:, :-k]).mean() / a.pow(2).mean()
                                              for k in _smoke((1, 2, 5, 10, 20), (1, 2, 3))]))
                del fake, real, r, srt, a
            torch.cat(stats).cpu()
            del stats


# ---------------------------------------------------------------- arbitrage-free implied volatility surface


def _ssvi_w(k, t, theta_scale, rho, eta, gamma):
    """SSVI total implied variance (Gatheral and Jacquier 2014) at log-moneyness k and maturity t."""
    th = theta_scale * t * (1 + 0.3 * torch.exp(-t * 4))
    phi = eta / (th.pow(gamma) * (1 + th).pow(1 - gamma))
    return th / 2 * (1 + rho * phi * k + ((phi * k + rho) ** 2 + 1 - rho * rho).sqrt())


class _SurfaceNet(torch.nn.Module):
    """Total implied variance w(k, T) = T * softplus(MLP(k, sqrt T, k^2)) (zero at T = 0), softplus layers so
    that the second derivative in k exists."""

    def __init__(self, width, depth):
        super().__init__()
        layers, cin = [], 3
        for _ in range(depth):
            layers += [torch.nn.Linear(cin, width), torch.nn.Softplus()]
            cin = width
        self.body = torch.nn.Sequential(*layers, torch.nn.Linear(cin, 1))

    def forward(self, k, t):
        x = torch.stack([k, t.sqrt(), k * k], -1)
        return t * _F.softplus(self.body(x)[..., 0] - 2)


def _arb_terms(net, k, t):
    """Calendar (dw/dT) and butterfly (Gatheral's g(k)) conditions on a collocation set by autograd, with the
    graph kept so that the penalties train the network."""
    k = k.detach().requires_grad_(True)
    t = t.detach().requires_grad_(True)
    w = net(k, t)
    wk, wt = torch.autograd.grad(w.sum(), [k, t], create_graph=True)
    wkk = torch.autograd.grad(wk.sum(), k, create_graph=True)[0]
    wc = w.clamp_min(1e-6)
    g = (1 - k * wk / (2 * wc)).pow(2) - wk * wk / 4 * (1 / wc + 0.25) + wkk / 2
    return w, wk, wkk, wt, g


@_workload("implied-volatility surface fitting with no-arbitrage penalties written by hand (fp32): 10 trading days one after another, each a quote grid of 15-61 strikes (log-moneyness) by 6-20 maturities (7 days to 3 years; drawn) from a day's SSVI surface (parameters drifting day to day) with bid-ask noise, vega weights from Black-Scholes; a total-variance network (w = T softplus(MLP), width 64-128 drawn once, 4 softplus layers) fitted per day by Adam, 140 iterations the first day and 34-54 (drawn) on later days warm-started from the previous day's weights: vega-weighted squared implied-vol error plus penalties on a collocation grid (32-96 x 16-48 points, drawn per day, including extrapolated wings) of negative calendar derivative dw/dT and negative Gatheral g(k) (butterfly), both from first and second derivatives by autograd with create_graph; at each day's end Dupire local volatility from the derivatives on a 128 x 64 grid and Black-Scholes prices of the fit, the fit RMSE and the count of violating points read back")
def ivsurface_arbfree_fit(rng):
    width = rng.choice(_smoke([64, 96, 128], [8]))
    net = _SurfaceNet(width, _smoke(4, 2)).cuda()
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    theta, rho, eta, gamma = 0.04, -0.6, 1.2, 0.4
    for day in range(_smoke(10, 2)):
        theta = min(0.12, max(0.015, theta * math.exp(rng.gauss(0, 0.08))))
        rho = min(-0.1, max(-0.9, rho + rng.gauss(0, 0.04)))
        eta = min(2.5, max(0.4, eta * math.exp(rng.gauss(0, 0.05))))
        nk, nt = rng.choice(_smoke([15, 25, 41, 61], [5])), rng.choice(_smoke([6, 10, 14, 20], [3]))
        mats = torch.exp(torch.linspace(math.log(7 / 365), math.log(3.0), nt, device="cuda"))
        kk = torch.linspace(-1, 1, nk, device="cuda")[None] * (0.15 + 0.35 * mats.sqrt())[:, None]
        tt = mats[:, None].expand(nt, nk)
        w_mkt = _ssvi_w(kk, tt, theta, rho, eta, gamma)
        iv_mkt = (w_mkt / tt).sqrt() * (1 + 0.01 * torch.randn(nt, nk, device="cuda"))
        sd = iv_mkt * tt.sqrt()
        vega = torch.exp(-kk / 2) * torch.exp(-0.5 * (-kk / sd + 0.5 * sd).pow(2)) * tt.sqrt()
        wts = vega / vega.mean()
        ck, ct = rng.choice(_smoke([32, 64, 96], [6])), rng.choice(_smoke([16, 32, 48], [4]))
        gk = torch.linspace(-2.5, 2.5, ck, device="cuda")[None].expand(ct, ck).reshape(-1)
        gt = torch.exp(torch.linspace(math.log(3 / 365), math.log(5.0), ct, device="cuda"))[:, None].expand(
            ct, ck).reshape(-1)
        iters = _smoke(140, 3) if day == 0 else _smoke(rng.randint(34, 54), 2)
        for it in range(iters):
            w = net(kk.reshape(-1), tt.reshape(-1)).view(nt, nk)
            iv = (w / tt).clamp_min(1e-8).sqrt()
            fit = (wts * (iv - iv_mkt).pow(2)).mean()
            _, _, _, wt, g = _arb_terms(net, gk, gt)
            pen = _F.relu(-wt).pow(2).mean() * 100 + _F.relu(-g).pow(2).mean() * 10
            loss = fit * 1e3 + pen
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            del w, iv, fit, wt, g, pen, loss
        lk = torch.linspace(-1.5, 1.5, _smoke(128, 8), device="cuda")[None].expand(_smoke(64, 4), -1).reshape(-1)
        lt = torch.exp(torch.linspace(math.log(14 / 365), math.log(3.0), _smoke(64, 4), device="cuda"))[:, None]
        lt = lt.expand(-1, _smoke(128, 8)).reshape(-1)
        w, wk, wkk, wt, g = _arb_terms(net, lk, lt)
        with torch.no_grad():
            lv = (wt / g.clamp_min(1e-6)).clamp(0, 4).sqrt()
            sdv = w.clamp_min(1e-8).sqrt()
            d1 = -lk / sdv + 0.5 * sdv
            price = _ncdf(d1) - torch.exp(lk) * _ncdf(d1 - sdv)
            wfit = net(kk.reshape(-1), tt.reshape(-1)).view(nt, nk)
            rmse = ((wfit / tt).sqrt() - iv_mkt).pow(2).mean().sqrt()
            viol = (g < 0).float().sum() + (wt < 0).float().sum()
            torch.stack([rmse, viol, lv.mean(), price.mean()]).cpu()
        del w, wk, wkk, wt, g, lv, sdv, d1, price, wfit, rmse, viol, lk, lt, gk, gt, kk, tt, w_mkt, iv_mkt, vega, wts


# ---------------------------------------------------------------- portfolio VaR / ES service


def _bs_price(s, k, t, vol, r, is_call):
    """Black-Scholes prices of calls (is_call 1) and puts (0) by put-call parity, tensors broadcast."""
    sd = vol * t.sqrt()
    d1 = (torch.log(s / k) + r * t) / sd + 0.5 * sd
    call = s * _ncdf(d1) - k * torch.exp(-r * t) * _ncdf(d1 - sd)
    return call - (1 - is_call) * (s - k * torch.exp(-r * t))


@_workload("portfolio market-risk service, VaR and expected shortfall by full revaluation written by hand (fp32): 1,350 requests under inference mode, each a portfolio of 500-20,000 option and forward positions (drawn) on a universe of 2,000 underlyings in 8-32 books, and a market-data snapshot (spots, at-the-money vols, rates, a 2,000 x 64 factor-loading matrix), the position table and the snapshot uploaded from reused pinned host buffers on a side stream one request ahead (waited on by event, record_stream'ed); 2k-10k 10-day scenarios (drawn, cut to 67M scenario-positions) from a 64-factor model by Cholesky plus idiosyncratic and volatility shocks; positions revalued by Black-Scholes in scenario chunks of up to 16M scenario-positions (underlying spots and vols gathered per position), P&L per book by index_add, portfolio VaR and ES at 99% and 97.5% by sort, per-book VaR by sort along scenarios; each request's figures read back; every 150 requests an end-of-day run of 50k scenarios on a 20,000-position portfolio in chunks with the P&L vector sorted and the tail scenarios' book contributions (Euler allocation by gather)")
def var_es_risk_serve(rng):
    univ, fac = _smoke(2000, 64), _smoke(64, 8)
    pmax = _smoke(20000, 256)
    host_pos = [torch.rand(pmax * 6).pin_memory() for _ in range(2)]
    host_mkt = [torch.rand(univ * (fac + 3)).pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    done = [None, None]
    fcov_l = torch.linalg.cholesky(torch.eye(fac, device="cuda") * 0.6 + 0.4 / fac *
                                   torch.ones(fac, fac, device="cuda")) * 0.012 * math.sqrt(10)

    def fetch(i, npos):
        s = i % 2
        if done[s] is not None:
            done[s].synchronize()
        with torch.cuda.stream(side):
            pos = host_pos[s][:npos * 6].view(npos, 6).to("cuda", non_blocking=True)
            mkt = host_mkt[s].view(univ, fac + 3).to("cuda", non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        done[s] = ev
        return pos, mkt, ev

    def draw():
        return rng.choice(_smoke([500, 1000, 2000, 5000, 10000, 20000], [32, 64, 256]))

    def revalue(pos, mkt, nscen, books, chunk):
        """Scenario P&L per book (nscen, books) and per scenario, positions revalued chunk by chunk."""
        npos = pos.shape[0]
        und = (pos[:, 0] * (univ - 1)).long()
        kind = (pos[:, 1] * 3).floor()  # 0 put, 1 call, 2 forward
        strike = 0.8 + 0.4 * pos[:, 2]
        mat = 0.05 + 2 * pos[:, 3]
        qty = (pos[:, 4] - 0.5) * 200
        book = (pos[:, 5] * (books - 1)).long()
        spot0 = 50 + 100 * mkt[:, 0]
        vol0 = 0.15 + 0.35 * mkt[:, 1]
        r = 0.01 + 0.03 * mkt[:, 2].mean()
        load = mkt[:, 3:] - 0.5
        k_abs = strike * spot0[und]
        is_call = (kind >= 1).float()
        fwd = (kind >= 2).float()
        base = _bs_price(spot0[und], k_abs, mat, vol0[und], r, is_call)
        base = fwd * (spot0[und] - k_abs) + (1 - fwd) * base
        book_pnl = torch.zeros(nscen, books, device="cuda")
        per = max(1, chunk // npos)
        for s0 in range(0, nscen, per):
            ns = min(per, nscen - s0)
            f = torch.randn(ns, fac, device="cuda") @ fcov_l.T
            ret = f @ load.T + 0.01 * torch.randn(ns, univ, device="cuda")
            spot = spot0 * ret.exp()
            vol = vol0 * (1 + 0.3 * torch.randn(ns, 1, device="cuda") * 0.1 - ret * 0.5).clamp(0.3, 3)
            s_p, v_p = spot[:, und], vol[:, und]
            px = _bs_price(s_p, k_abs, (mat - 10 / 252).clamp_min(1 / 252), v_p, r, is_call)
            px = fwd * (s_p - k_abs) + (1 - fwd) * px
            pnl = (px - base) * qty
            book_pnl[s0:s0 + ns] = torch.zeros(ns, books, device="cuda").index_add_(1, book, pnl)
            del f, ret, spot, vol, s_p, v_p, px, pnl
        return book_pnl

    npos = draw()
    nxt = fetch(0, npos)
    for req in range(_smoke(1350, 4)):
        pos, mkt, ev = nxt
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        pos.record_stream(cur)
        mkt.record_stream(cur)
        npos = draw()
        nxt = fetch(req + 1, npos)
        books = rng.choice([8, 16, 32])
        nscen = min(rng.choice(_smoke([2000, 5000, 10000], [64, 128])), _smoke(67_108_864, 20000) // pos.shape[0])
        with torch.inference_mode():
            bp = revalue(pos, mkt, nscen, books, _smoke(16_777_216, 4096))
            tot = bp.sum(1)
            srt = tot.sort().values
            i99, i975 = max(1, int(0.01 * nscen)), max(1, int(0.025 * nscen))
            var99, es99, es975 = -srt[i99 - 1], -srt[:i99].mean(), -srt[:i975].mean()
            bvar = -bp.sort(0).values[i99 - 1]
            torch.cat([torch.stack([var99, es99, es975]), bvar]).cpu()
            del bp, tot, srt, bvar
        del pos, mkt
        if (req + 1) % _smoke(150, 2) == 0:
            with torch.inference_mode():
                big = torch.rand(pmax, 6, device="cuda")
                mk = torch.rand(univ, fac + 3, device="cuda")
                n_eod = _smoke(50000, 256)
                bp = revalue(big, mk, n_eod, 32, _smoke(16_777_216, 4096))
                tot = bp.sum(1)
                order = tot.sort()
                tail = order.indices[: n_eod // 100]
                contrib = bp[tail].mean(0)
                torch.cat([-order.values[n_eod // 100 - 1:n_eod // 100], contrib]).cpu()
                del big, mk, bp, tot, order, tail, contrib


# ---------------------------------------------------------------- PPO market maker


class _MmEnv:
    """A vectorised market-making simulator (Avellaneda and Stoikov 2008 style): a mid price with Brownian moves
    and order-flow-driven drift, an AR(1) order-flow imbalance, market orders arriving at the agent's quotes with
    intensity A exp(-k * distance) (fills as multiplied Bernoulli indicators), inventory limits by clamping, a
    running-inventory penalty and liquidation at the end."""

    def __init__(self, n, horizon, hist):
        self.n, self.horizon, self.hist = n, horizon, hist
        self.mid = torch.full((n,), 100.0, device="cuda")
        self.inv = torch.zeros(n, device="cuda")
        self.cash = torch.zeros(n, device="cuda")
        self.imb = torch.zeros(n, device="cuda")
        self.rets = torch.zeros(n, hist, device="cuda")
        self.t = 0

    def obs(self):
        return torch.cat([self.inv[:, None] / 10, torch.full((self.n, 1), 1 - self.t / self.horizon, device="cuda"),
                          self.imb[:, None], self.rets * 100], 1)

    def step(self, act):
        """act (n, 2): bid and ask distances in ticks (softplus of the policy's output)."""
        db, da = act[:, 0] * 0.01, act[:, 1] * 0.01
        lam_b = 1.5 * torch.exp(-30 * db) * (1 - 0.3 * self.imb)
        lam_a = 1.5 * torch.exp(-30 * da) * (1 + 0.3 * self.imb)
        fb = (torch.rand(self.n, device="cuda") < lam_b * 0.2).float() * (self.inv < 10).float()
        fa = (torch.rand(self.n, device="cuda") < lam_a * 0.2).float() * (self.inv > -10).float()
        self.cash = self.cash - fb * (self.mid - db) + fa * (self.mid + da)
        self.inv = self.inv + fb - fa
        old = self.mid
        self.imb = 0.9 * self.imb + 0.3 * torch.randn(self.n, device="cuda")
        self.mid = self.mid + 0.02 * torch.randn(self.n, device="cuda") + 0.005 * self.imb
        self.rets = torch.cat([self.rets[:, 1:], ((self.mid - old) / old)[:, None]], 1)
        self.t += 1
        rew = self.inv * (self.mid - old) + fa * da + fb * db - 0.002 * self.inv * self.inv
        if self.t == self.horizon:
            rew = rew - 0.01 * self.inv.abs() - 0.005 * self.inv * self.inv
        return rew * 10


class _ActorCritic(torch.nn.Module):
    def __init__(self, obs, width):
        super().__init__()
        self.pi = torch.nn.Sequential(torch.nn.Linear(obs, width), torch.nn.Tanh(), torch.nn.Linear(width, width),
                                      torch.nn.Tanh(), torch.nn.Linear(width, 2))
        self.v = torch.nn.Sequential(torch.nn.Linear(obs, width), torch.nn.Tanh(), torch.nn.Linear(width, width),
                                     torch.nn.Tanh(), torch.nn.Linear(width, 1))
        self.logstd = torch.nn.Parameter(torch.full((2,), -0.5))

    def forward(self, o):
        return self.pi(o).float(), self.v(o).float()[..., 0]


def _logp(mean, logstd, a):
    return (-0.5 * ((a - mean) / logstd.exp()).pow(2) - logstd - 0.5 * math.log(2 * math.pi)).sum(-1)


@_workload("reinforcement-learning market maker, PPO (clipped, GAE) over a vectorised order-book simulator written by hand: 2,048 environments on the device (Avellaneda-Stoikov-style: Brownian mid with order-flow drift, an AR(1) imbalance, fills at the agent's bid and ask with intensity decaying exponentially in the quoted distance, inventory limits, a running-inventory penalty and liquidation at the end; observations inventory, time left, imbalance and the last 10 returns); actor and critic MLPs (width 128, tanh, Gaussian policy over the two quote distances through softplus) under bf16 autocast in the rollouts; 11 iterations, each an episode length drawn (120, 240 or 390 steps), the rollout stored, GAE (gamma 0.999, lambda 0.95) by a reverse loop, 4 epochs over 8 shuffled minibatches of the clipped surrogate, value loss and entropy, Adam with gradient clipping; after iterations 6 and 11 a deterministic evaluation over 4,096 environments for a 390-step day, mean P&L and inventory spread read back")
def ppo_market_maker_train(rng):
    hist, nenv = _smoke(10, 4), _smoke(2048, 16)
    obs_dim = 3 + hist
    net = _ActorCritic(obs_dim, _smoke(128, 16)).cuda()
    opt = torch.optim.Adam(net.parameters(), lr=3e-4)
    iters = _smoke(11, 2)
    for it in range(iters):
        horizon = rng.choice(_smoke([120, 240, 390], [6, 10]))
        env = _MmEnv(nenv, horizon, hist)
        obs_b, act_b, logp_b, val_b, rew_b = [], [], [], [], []
        with torch.no_grad():
            for t in range(horizon):
                o = env.obs()
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    mean, v = net(o)
                a = mean + net.logstd.exp() * torch.randn_like(mean)
                r = env.step(_F.softplus(a) + 0.5)
                obs_b.append(o)
                act_b.append(a)
                logp_b.append(_logp(mean, net.logstd, a))
                val_b.append(v)
                rew_b.append(r)
            obs, acts, logps = torch.stack(obs_b), torch.stack(act_b), torch.stack(logp_b)
            vals, rews = torch.stack(val_b), torch.stack(rew_b)
            del obs_b, act_b, logp_b, val_b, rew_b
            adv = torch.zeros_like(rews)
            last = torch.zeros(nenv, device="cuda")
            for t in reversed(range(horizon)):
                nv = vals[t + 1] if t + 1 < horizon else torch.zeros(nenv, device="cuda")
                dlt = rews[t] + 0.999 * nv - vals[t]
                last = dlt + 0.999 * 0.95 * last
                adv[t] = last
            ret = adv + vals
        n = horizon * nenv
        flat = [x.reshape(n, *x.shape[2:]) for x in (obs, acts, logps, adv, ret)]
        del obs, acts, logps, vals, rews, adv, ret, env
        mb = n // 8
        for epoch in range(_smoke(4, 1)):
            perm = torch.randperm(n, device="cuda")
            for i in range(0, n - mb + 1, mb):
                j = perm[i:i + mb]
                o, a, lp0, ad, rt = (x[j] for x in flat)
                ad = (ad - ad.mean()) / (ad.std() + 1e-8)
                mean, v = net(o)
                lp = _logp(mean, net.logstd, a)
                ratio = (lp - lp0).exp()
                pg = -torch.min(ratio * ad, ratio.clamp(0.8, 1.2) * ad).mean()
                vl = (v - rt).pow(2).mean()
                ent = net.logstd.sum()
                loss = pg + 0.5 * vl - 0.001 * ent
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
                opt.step()
                del o, a, lp0, ad, rt, mean, v, lp, ratio, pg, vl, loss
            del perm
        del flat
        if (it + 1) % _smoke(6, 2) == 0 or it == iters - 1:
            env = _MmEnv(_smoke(4096, 32), _smoke(390, 8), hist)
            total = torch.zeros(env.n, device="cuda")
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for t in range(env.horizon):
                    mean, _ = net(env.obs())
                    total = total + env.step(_F.softplus(mean) + 0.5)
            torch.stack([total.mean(), total.std(), env.inv.abs().mean()]).cpu()
            del env, total

"""The twenty-fourth batch's second half (batch24.py holds the first; written in two to keep files small):
Conv-TasNet speech separation training, TabDDPM tabular diffusion, a Latent ODE on irregular time series, and
CLIP4Clip video-text contrastive training. Same conventions and plumbing as batch24.py; record.py registers this
module right after it, so that the batch's workloads keep their order. All four are single-stream.

Real sizes checked as batch24.py's header says: every workload run whole at its real sizes on the meta device
(every step's shapes: Conv-TasNet's encoder and transposed-conv decoder lengths for the 4 s segments and the
2-10 s validation utterances padded to 16 + 8k samples; TabDDPM's per-feature one-hot slices of each dataset's
cardinalities; the Latent ODE's union time grids; CLIP4Clip's packed frames scattered into (videos, 12) slots
under the frame masks), its op outputs counted there for the event estimates.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- Conv-TasNet speech separation


class _TcnBlock(torch.nn.Module):
    """Conv-TasNet's 1-D conv block: 1x1 conv B -> H, PReLU, gLN, dilated depthwise conv, PReLU, gLN, then a 1x1
    residual and a 1x1 skip conv back to B."""

    def __init__(self, b, h, p, dil):
        super().__init__()
        nn = torch.nn
        self.c1, self.a1, self.n1 = nn.Conv1d(b, h, 1), nn.PReLU(), nn.GroupNorm(1, h, eps=1e-8)
        self.dw = nn.Conv1d(h, h, p, padding=dil * (p - 1) // 2, dilation=dil, groups=h)
        self.a2, self.n2 = nn.PReLU(), nn.GroupNorm(1, h, eps=1e-8)
        self.res, self.skip = nn.Conv1d(h, b, 1), nn.Conv1d(h, b, 1)

    def forward(self, x):
        y = self.n2(self.a2(self.dw(self.n1(self.a1(self.c1(x))))))
        return x + self.res(y), self.skip(y)


class _ConvTasNet(torch.nn.Module):
    """Conv-TasNet (Luo & Mesgarani 2019), its best configuration: N=512 filters of L=16 (stride 8), B=Sc=128,
    H=512, P=3, X=8 blocks, R=3 repeats, sigmoid masks for `sources` sources, a transposed-conv decoder."""

    def __init__(self, n=512, b=128, h=512, x=8, r=3, sources=2):
        super().__init__()
        nn = torch.nn
        self.sources, self.n = sources, n
        self.enc = nn.Conv1d(1, n, 16, stride=8, bias=False)
        self.ln, self.bottleneck = nn.GroupNorm(1, n, eps=1e-8), nn.Conv1d(n, b, 1)
        self.blocks = nn.ModuleList(_TcnBlock(b, h, 3, 2 ** i) for _ in range(r) for i in range(x))
        self.out = nn.Sequential(nn.PReLU(), nn.Conv1d(b, sources * n, 1))
        self.dec = nn.ConvTranspose1d(n, 1, 16, stride=8, bias=False)

    def forward(self, mix):
        w = torch.relu(self.enc(mix[:, None]))  # (B, N, frames)
        x = self.bottleneck(self.ln(w))
        skips = 0
        for blk in self.blocks:
            x, s = blk(x)
            skips = skips + s
        masks = torch.sigmoid(self.out(skips)).view(mix.shape[0], self.sources, self.n, -1)
        est = (masks * w[:, None]).flatten(0, 1)
        return self.dec(est).view(mix.shape[0], self.sources, -1)


def _pit_si_snr(est, ref):
    """Negative utterance-level PIT SI-SNR for two sources: (B, 2, T) each, the better of the two pairings."""
    est = est - est.mean(-1, keepdim=True)
    ref = ref - ref.mean(-1, keepdim=True)
    dot = torch.einsum("bit,bjt->bij", est, ref)  # (B, est, ref)
    rr = ref.pow(2).sum(-1)[:, None, :]
    ee = est.pow(2).sum(-1)[:, :, None]
    tgt = dot.pow(2) / (rr + 1e-8)  # |s_target|^2 for each pairing
    snr = 10 * torch.log10(tgt / (ee - tgt).clamp_min(1e-8) + 1e-8)
    straight = (snr[:, 0, 0] + snr[:, 1, 1]) / 2
    swapped = (snr[:, 0, 1] + snr[:, 1, 0]) / 2
    return -torch.maximum(straight, swapped).mean()


def _tasnet_len(t):
    """The smallest length >= t that the encoder (16, stride 8) and decoder map back to itself: 16 + 8k."""
    return 16 + -(-max(0, t - 16) // 8) * 8


@_workload("speech separation training, Conv-TasNet (Luo & Mesgarani 2019) as Asteroid's WHAM! noisy recipe trains it, written by hand (random init, fp32): a 512-filter encoder (length 16, stride 8), a TCN separator of 3 repeats of 8 dilated depthwise blocks (bottleneck 128, hidden 512, PReLU, global layer norm, residual and skip 1x1 convs), sigmoid masks for 2 speakers, a transposed-conv decoder; 8 kHz mixtures of two speakers and noise made on the device (4 s segments, batch 4), utterance-level PIT SI-SNR loss (both pairings, the better one per mixture); Adam (lr 1e-3, halved at steps 75 and 120), gradient clipping 5, 150 steps, the loss read back every step; every 50 steps a validation on 6 whole utterances of 2-10 s (uniform) one at a time, each padded to the model's valid length (16 + 8k samples), under no_grad")
def convtasnet_sep(rng):
    model = _ConvTasNet(n=_smoke(512, 32), b=_smoke(128, 16), h=_smoke(512, 32)).cuda().train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sr, batch, seg = 8000, 4, _smoke(32000, 4000)
    steps = _smoke(150, 3)

    def mixture(b, t):
        src = torch.randn(b, 2, t, device="cuda") * torch.rand(b, 2, 1, device="cuda").add_(0.3)
        noise = torch.randn(b, t, device="cuda") * 0.3 * torch.rand(b, 1, device="cuda")
        return src.sum(1) + noise, src

    # About 1.9k tensors a step (counted on the meta device at the real sizes: the 24 blocks' forward and backward,
    # clipping and Adam's foreach), a validated utterance about 0.6k: 150 steps and 18 utterances make about 0.3M
    # tensors, 0.6M events.
    for step in range(steps):
        if step in (75, 120):
            opt.param_groups[0]["lr"] *= 0.5
        mix, src = mixture(batch, seg)
        loss = _pit_si_snr(model(mix), src)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        float(loss.detach())
        del mix, src, loss
        if step % 50 == 49 or step == steps - 1:
            model.eval()
            scores = []
            with torch.no_grad():
                for _ in range(_smoke(6, 1)):
                    t = int(rng.uniform(2.0, 10.0) * sr) if _smoke(1, 0) else rng.randint(3000, 5000)
                    full = _tasnet_len(t)
                    mix, src = mixture(1, t)
                    est = model(torch.nn.functional.pad(mix, (0, full - t)))[..., :t]
                    scores.append(_pit_si_snr(est, src))
                    del mix, src, est
            torch.stack(scores).tolist()
            model.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- TabDDPM: tabular diffusion


# TabDDPM's benchmark-like datasets: (rows, numerical features, categorical cardinalities, classes).
_TAB_SETS = [
    (26048, 6, (9, 16, 7, 15, 6, 5, 2, 42), 2),  # adult
    (6400, 7, (3, 2, 2, 2), 2),  # churn
    (44800, 5, (3, 3, 2, 2, 2), 2),  # cardio
    (62751, 28, (), 2),  # higgs-small
    (13209, 8, (), 1),  # house (regression: no label classes)
    (11000, 16, (2, 4, 3, 12, 2, 2, 5), 2),  # buddy-like
    (150000, 10, (26, 7, 3, 2, 2, 12), 7),  # covertype-like
]


class _TabMlp(torch.nn.Module):
    """TabDDPM's MLPDiffusion: input projection to 128, a sinusoidal timestep embedding through an MLP plus a
    label embedding, an MLP of the given widths with ReLU and dropout, out to the input width."""

    def __init__(self, d_in, widths, classes, d_t=128, dropout=0.1):
        super().__init__()
        nn = torch.nn
        self.d_t = d_t
        self.proj = nn.Linear(d_in, d_t)
        self.time = nn.Sequential(nn.Linear(d_t, d_t), nn.SiLU(), nn.Linear(d_t, d_t))
        self.label = nn.Embedding(max(1, classes), d_t)
        layers, prev = [], d_t
        for w in widths:
            layers += [nn.Linear(prev, w), nn.ReLU(), nn.Dropout(dropout)]
            prev = w
        self.mlp = nn.Sequential(*layers, nn.Linear(prev, d_in))

    def forward(self, x, t, y):
        half = self.d_t // 2
        freqs = torch.exp(-math.log(10000) * torch.arange(half, device=x.device).float() / half)
        a = t.float()[:, None] * freqs[None]
        emb = self.time(torch.cat([a.cos(), a.sin()], -1)) + torch.nn.functional.silu(self.label(y))
        return self.mlp(self.proj(x) + emb)


@_workload("tabular diffusion, TabDDPM (Kotelnikov et al. 2023) as its tuning runs train and sample it, written by hand: 3 datasets one after another (drawn from 7 benchmark-like shapes: 6k-150k rows, 5-28 quantile-normalized numerical features, 0-8 categorical features of 2-42 classes, labels of 1-7 classes), kept on the device; per dataset an MLPDiffusion (widths drawn from 256-1024, 2-6 layers, timestep MLP and label embedding of 128, random init, fp32) trained for 150 steps with batch 4096 on Gaussian diffusion of the numerical features (epsilon MSE) and multinomial diffusion of the one-hot categorical ones (the KL of the posteriors in log space, per-feature log-softmax and logsumexp over each feature's slice, as TabDDPM's loops do), 100 diffusion steps (cosine schedule), AdamW (lr 1e-3 to 2e-3, drawn), the loss read back every 25 steps; then a synthetic table as large as the training set (at most 32768 rows) sampled in batches of 8192 through the 100 reverse steps (Gaussian steps and Gumbel-max categorical draws per feature), its rows copied to the host")
def tabddpm_train(rng):
    f = torch.nn.functional
    T = 100
    s = torch.linspace(0, 1, T + 1, device="cuda")
    abar = torch.cos((s + 0.008) / 1.008 * math.pi / 2) ** 2
    abar = (abar / abar[0]).clamp(1e-5, 1)
    alphas = (abar[1:] / abar[:-1]).clamp(1e-4, 0.9999)
    abar = torch.cumprod(alphas, 0)
    abar_prev = torch.cat([torch.ones(1, device="cuda"), abar[:-1]])
    log_a, log_1ma = alphas.log(), torch.log1p(-alphas + 1e-40)
    log_ab, log_1mab = abar.log(), torch.log1p(-abar + 1e-40)
    post_c1 = abar_prev.sqrt() * (1 - alphas) / (1 - abar)
    post_c2 = alphas.sqrt() * (1 - abar_prev) / (1 - abar)
    post_var = ((1 - alphas) * (1 - abar_prev) / (1 - abar)).clamp_min(1e-20)

    def ex(v, t):
        return v[t][:, None]

    # About 0.32M tensors in all (counted on the meta device at the real sizes over the drawn datasets: a training
    # step about 200 + 25 a categorical feature, a reverse step about 25 + 12 a categorical feature): 0.64M events.
    for _ in range(_smoke(3, 2)):
        rows, n_num, cards, classes = rng.choice(_TAB_SETS)
        rows = _smoke(rows, 512)
        cards = list(cards)
        off = [0]
        for c in cards:
            off.append(off[-1] + c)
        d_cat = off[-1]
        widths = [rng.choice([256, 512, 1024]) for _ in range(rng.randint(2, 6))]
        model = _TabMlp(n_num + d_cat, [_smoke(w, 32) for w in widths], classes).cuda().train()
        opt = torch.optim.AdamW(model.parameters(), lr=rng.uniform(1e-3, 2e-3), weight_decay=1e-5)
        x_num = torch.randn(rows, n_num, device="cuda")
        x_cat = torch.stack([torch.randint(0, c, (rows,), device="cuda") for c in cards], 1) if cards else None
        y_all = torch.randint(0, max(1, classes), (rows,), device="cuda")
        log_k = torch.tensor([math.log(c) for c in cards for _ in range(c)], device="cuda") if cards else None

        def q_pred(log_x0, t):  # log q(x_t | x_0), each feature's slice
            return torch.logaddexp(log_x0 + ex(log_ab, t), ex(log_1mab, t) - log_k)

        def q_post(log_x0, log_xt, t):  # log q(x_{t-1} | x_t, x_0), normalized per feature's slice
            tm1 = (t - 1).clamp_min(0)
            fact1 = torch.logaddexp(log_xt + ex(log_a, t), ex(log_1ma, t) - log_k)  # q(x_t | x_{t-1})
            prior = torch.where((t == 0)[:, None], log_x0, q_pred(log_x0, tm1))
            u = fact1 + prior
            return u - torch.cat([u[:, a:b].logsumexp(1, keepdim=True).expand(-1, b - a)
                                  for a, b in zip(off[:-1], off[1:])], 1)

        def log_softmax_slices(out):
            return torch.cat([f.log_softmax(out[:, a:b], 1) for a, b in zip(off[:-1], off[1:])], 1)

        def gumbel_onehot(logp):
            g = -torch.log(-torch.log(torch.rand_like(logp).clamp_(1e-30, 1)))
            idx = torch.stack([(logp[:, a:b] + g[:, a:b]).argmax(1) for a, b in zip(off[:-1], off[1:])], 1)
            return idx, torch.cat([f.one_hot(idx[:, i], c) for i, c in enumerate(cards)], 1).float().clamp_min(
                1e-30).log()

        for step in range(_smoke(150, 3)):
            bsz = min(_smoke(4096, 128), rows)
            pick = torch.randint(0, rows, (bsz,), device="cuda")
            t = torch.randint(0, T, (bsz,), device="cuda")
            xn, y = x_num[pick], y_all[pick]
            noise = torch.randn_like(xn)
            xn_t = ex(abar, t).sqrt() * xn + ex(1 - abar, t).sqrt() * noise
            parts = [xn_t]
            if cards:
                log_x0 = torch.cat([f.one_hot(x_cat[pick, i], c) for i, c in enumerate(cards)], 1).float() \
                    .clamp_min(1e-30).log()
                _, log_xt = gumbel_onehot(q_pred(log_x0, t))
                parts.append(log_xt.exp())
            out = model(torch.cat(parts, 1), t, y)
            loss = f.mse_loss(out[:, :n_num], noise)
            if cards:
                log_x0_hat = log_softmax_slices(out[:, n_num:])
                true_post, model_post = q_post(log_x0, log_xt, t), q_post(log_x0_hat, log_xt, t)
                kl = (true_post.exp() * (true_post - model_post)).sum(1)
                nll = -(log_x0.exp() * log_x0_hat).sum(1)
                loss = loss + torch.where(t == 0, nll, kl).mean() / len(cards)
                del log_x0, log_xt, log_x0_hat, true_post, model_post, kl, nll
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if step % 25 == 24:
                float(loss.detach())
            del pick, t, xn, y, noise, xn_t, parts, out, loss
        # sampling a synthetic table as large as the training set (at most 32768 rows) in batches of 8192
        model.eval()
        with torch.no_grad():
            left = min(rows, _smoke(32768, 256))
            while left > 0:
                bsz = min(left, _smoke(8192, 128))
                left -= bsz
                y = torch.randint(0, max(1, classes), (bsz,), device="cuda")
                xn = torch.randn(bsz, n_num, device="cuda")
                if cards:
                    uni = -log_k.expand(bsz, -1)
                    _, log_xt = gumbel_onehot(uni)
                for i in reversed(range(T)):
                    t = torch.full((bsz,), i, device="cuda", dtype=torch.long)
                    parts = [xn] + ([log_xt.exp()] if cards else [])
                    out = model(torch.cat(parts, 1), t, y)
                    eps = out[:, :n_num]
                    x0 = ((xn - ex(1 - abar, t).sqrt() * eps) / ex(abar, t).sqrt()).clamp(-5, 5)
                    mean = ex(post_c1, t) * x0 + ex(post_c2, t) * xn
                    xn = mean + (ex(post_var, t).sqrt() * torch.randn_like(xn) if i > 0 else 0)
                    if cards:
                        log_x0_hat = log_softmax_slices(out[:, n_num:])
                        idx, log_xt = gumbel_onehot(q_post(log_x0_hat, log_xt, t))
                    del t, parts, out, eps, x0, mean
                table = torch.cat([xn] + ([idx.float()] if cards else []), 1)
                table.cpu()
                del table, xn, y
                if cards:
                    del log_xt, idx
        del model, opt, x_num, x_cat, y_all
    torch.cuda.synchronize()


# ---------------------------------------------------------------- Latent ODE with an ODE-RNN encoder


class _OdeFunc(torch.nn.Module):
    def __init__(self, d, units):
        super().__init__()
        nn = torch.nn
        self.net = nn.Sequential(nn.Linear(d, units), nn.Tanh(), nn.Linear(units, units), nn.Tanh(),
                                 nn.Linear(units, d))

    def forward(self, y):
        return self.net(y)


def _rk4(func, y, dt):
    """One classical Runge-Kutta step (torchdiffeq's fixed-grid 'rk4' with one step an interval)."""
    k1 = func(y)
    k2 = func(y + dt * k1 / 2)
    k3 = func(y + dt * k2 / 2)
    k4 = func(y + dt * k3)
    return y + dt * (k1 + 2 * k2 + 2 * k3 + k4) / 6


class _GruUnit(torch.nn.Module):
    """The Latent ODE's GRU_unit: gates from (mean, std, observation with mask), a new (mean, std), and the update
    kept only where the patient has an observation at that time."""

    def __init__(self, latent, d_in, units):
        super().__init__()
        nn = torch.nn
        self.update = nn.Sequential(nn.Linear(2 * latent + d_in, units), nn.Tanh(), nn.Linear(units, latent),
                                    nn.Sigmoid())
        self.reset = nn.Sequential(nn.Linear(2 * latent + d_in, units), nn.Tanh(), nn.Linear(units, latent),
                                   nn.Sigmoid())
        self.new = nn.Sequential(nn.Linear(2 * latent + d_in, units), nn.Tanh(), nn.Linear(units, 2 * latent))

    def forward(self, mean, std, x, observed):
        yc = torch.cat([mean, std, x], -1)
        u, r = self.update(yc), self.reset(yc)
        new_mean, new_std = self.new(torch.cat([mean * r, std * r, x], -1)).chunk(2, -1)
        new_std = new_std.abs()
        nm, ns = (1 - u) * new_mean + u * mean, (1 - u) * new_std + u * std
        return torch.where(observed, nm, mean), torch.where(observed, ns, std).abs()


@_workload("irregularly-sampled time-series modelling, Latent ODE with an ODE-RNN encoder (Rubanova et al. 2019) as its PhysioNet recipe trains it, written by hand (random init, fp32): 41 features (values and observation masks), 48 hours quantized to 0.5 h; batches of 32 patients, each with 8-48 observation times (log-uniform, drawn on the host) and about 30% of features observed at each, run on the union of the batch's times; the encoder backwards in time (from the last time to the first: one RK4 step of a 40-wide ODE MLP (units 100) between consecutive times, then the masked GRU unit of mean and std), z0 of 20 sampled 3 times (IWAE-style), the decoder ODE (MLP of 100) solved forwards by one RK4 step a union interval, a linear readout, the masked Gaussian log-likelihood (std 0.01), KL to N(0, 1) and an in-hospital-mortality classifier on z0 (BCE x100); Adamax (lr 1e-2, decayed 0.999 a step), 9 steps, the loss read back every step; then 2 evaluation batches of 64 without grad")
def latent_ode(rng):
    f = torch.nn.functional
    feats, latent, rec, units = 41, 20, 40, 100
    grid = _smoke(97, 40)  # 48 h in steps of 0.5 h
    enc_ode = _OdeFunc(rec, units).cuda()
    gru = _GruUnit(rec, 2 * feats, units).cuda()
    to_z0 = torch.nn.Sequential(torch.nn.Linear(2 * rec, 100), torch.nn.Tanh(), torch.nn.Linear(100, 2 * latent)).cuda()
    dec_ode = _OdeFunc(latent, units).cuda()
    readout = torch.nn.Linear(latent, feats).cuda()
    clf = torch.nn.Sequential(torch.nn.Linear(latent, 300), torch.nn.ReLU(), torch.nn.Linear(300, 300),
                              torch.nn.ReLU(), torch.nn.Linear(300, 1)).cuda()
    params = [p for m in (enc_ode, gru, to_z0, dec_ode, readout, clf) for p in m.parameters()]
    opt = torch.optim.Adamax(params, lr=1e-2)
    k = 3

    def batch(b):
        """Union time indices (a Python list) and (b, T) observation flags, values and masks on the device."""
        per = [sorted(rng.sample(range(grid), _loguniform(rng, 8, _smoke(48, 12)))) for _ in range(b)]
        union = sorted(set(i for p in per for i in p))
        pos = {g: j for j, g in enumerate(union)}
        flags = torch.zeros(b, len(union), dtype=torch.bool)
        for r, p in enumerate(per):
            flags[r, [pos[i] for i in p]] = True
        observed = flags.to("cuda")
        mask = (torch.rand(b, len(union), feats, device="cuda") < 0.3) & observed[..., None]
        vals = torch.randn(b, len(union), feats, device="cuda") * mask
        return union, observed, vals, mask.float()

    def run(b, train):
        union, observed, vals, mask = batch(b)
        n = len(union)
        dts = [(union[i + 1] - union[i]) * 0.5 / 48 for i in range(n - 1)]  # the grid's steps, known on the host
        mean = torch.zeros(b, rec, device="cuda")
        std = torch.zeros(b, rec, device="cuda")
        xs = torch.cat([vals, mask], -1)
        for i in reversed(range(n)):
            if i < n - 1:
                mean = _rk4(enc_ode, mean, -dts[i])
            mean, std = gru(mean, std, xs[:, i], observed[:, i, None])
        mu, sd = to_z0(torch.cat([mean, std], -1)).chunk(2, -1)
        sd = f.softplus(sd) + 1e-4
        z = (mu + sd * torch.randn(k, b, latent, device="cuda")).flatten(0, 1)  # (k * b, latent)
        zs = [z]
        for i in range(n - 1):
            z = _rk4(dec_ode, z, dts[i])
            zs.append(z)
        pred = readout(torch.stack(zs, 1)).view(k, b, n, feats)
        ll = (-0.5 * ((vals - pred) / 0.01) ** 2 * mask).sum((2, 3)) / mask.sum((1, 2)).clamp_min(1)
        kl = (-sd.log() + (sd ** 2 + mu ** 2) / 2 - 0.5).sum(-1)
        elbo = torch.logsumexp(ll - kl, 0) - math.log(k)
        logits = clf(zs[0].view(k, b, latent)).squeeze(-1)
        bce = f.binary_cross_entropy_with_logits(logits, torch.randint(0, 2, (k, b), device="cuda").float())
        return -elbo.mean() + 100 * bce

    # About 32k tensors a training step (counted on the meta device at the real sizes: about 330 a union time in the
    # encoder and decoder, forward and backward, and about 95 union times of the 97), the two evaluations about
    # 25k: 9 steps make about 0.31M tensors, 0.63M events.
    for step in range(_smoke(9, 2)):
        loss = run(_smoke(32, 4), True)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        opt.param_groups[0]["lr"] = 1e-2 * 0.999 ** (step + 1)
        float(loss.detach())
        del loss
    with torch.no_grad():
        for _ in range(_smoke(2, 1)):
            float(run(_smoke(64, 4), False))
    torch.cuda.synchronize()


# ---------------------------------------------------------------- CLIP4Clip video-text contrastive training


@_workload("video-text retrieval training, CLIP4Clip (Luo et al. 2022, seqTransf similarity) as its MSR-VTT recipe trains it: an HF CLIPModel (ViT-B/32 image tower at 224 px, 12-layer text tower of width 512, projection 512, random init, sdpa) with HF gradient checkpointing in both towers (non-reentrant), bf16 autocast; batches of 32 videos of 4-12 frames sampled at 1 fps (drawn per video: clips of 4-30 s) made on the device as uint8 and normalized, only the real frames through the image tower (packed), scattered into (32, 12) frame slots, plus frame position embeddings, a 4-layer temporal transformer of width 512 (8 heads) with the frame mask, residual, masked mean pooling; captions of 8-32 tokens padded to the batch's longest; symmetric InfoNCE over the batch with CLIP's learned temperature; AdamW (lr 1e-7 for the CLIP towers, 1e-4 for the temporal transformer, cosine after 8 warmup steps, weight decay 0.2), gradient clipping 1.0, 65 steps, the loss read back every step")
def clip4clip_train(rng):
    from transformers import CLIPConfig, CLIPModel

    f = torch.nn.functional
    width, tw = _smoke(768, 64), _smoke(512, 64)
    cfg = CLIPConfig(
        text_config=dict(hidden_size=tw, intermediate_size=4 * tw, num_hidden_layers=12,
                         num_attention_heads=8 if _smoke(1, 0) else 4, max_position_embeddings=77),
        vision_config=dict(hidden_size=width, intermediate_size=4 * width, num_hidden_layers=12,
                           num_attention_heads=12 if _smoke(1, 0) else 4, image_size=_smoke(224, 64), patch_size=32),
        projection_dim=tw)
    cfg._attn_implementation = "sdpa"
    clip = CLIPModel(cfg).cuda().train()
    clip.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    max_frames, res = 12, _smoke(224, 64)
    frame_pos = torch.nn.Embedding(max_frames, tw).cuda()
    layer = torch.nn.TransformerEncoderLayer(tw, 8 if _smoke(1, 0) else 4, 4 * tw, dropout=0.1, batch_first=True)
    temporal = torch.nn.TransformerEncoder(layer, 4, enable_nested_tensor=False).cuda().train()
    opt = torch.optim.AdamW([{"params": clip.parameters(), "lr": 1e-7},
                             {"params": list(frame_pos.parameters()) + list(temporal.parameters()), "lr": 1e-4}],
                            weight_decay=0.2)
    base = [g["lr"] for g in opt.param_groups]
    mean = torch.tensor([0.481, 0.458, 0.408], device="cuda")[:, None, None]
    stdv = torch.tensor([0.269, 0.261, 0.276], device="cuda")[:, None, None]
    steps, batch = _smoke(65, 3), _smoke(32, 4)
    # About 4.8k tensors a step (counted on the meta device at the real sizes: the checkpointed towers with their
    # recomputation and backward, clipping and AdamW's foreach over 200-odd tensors): 65 steps make about 0.31M
    # tensors, 0.62M events.
    for step in range(steps):
        scale = min(1.0, (step + 1) / 8) * 0.5 * (1 + math.cos(math.pi * step / steps))
        for g, lr in zip(opt.param_groups, base):
            g["lr"] = lr * scale
        nframes = [min(max_frames, max(4, rng.randint(4, 30))) for _ in range(batch)]
        total = sum(nframes)
        slot = torch.tensor([v * max_frames + j for v, n in enumerate(nframes) for j in range(n)], device="cuda")
        frame_mask = torch.zeros(batch * max_frames, dtype=torch.bool, device="cuda")
        frame_mask[slot] = True
        frame_mask = frame_mask.view(batch, max_frames)
        raw = torch.randint(0, 256, (total, 3, res, res), dtype=torch.uint8, device="cuda")
        pixels = (raw.float() / 255 - mean) / stdv
        lengths = [rng.randint(8, 32) for _ in range(batch)]
        ids, amask = _b.rec._padded_ids(cfg.text_config.vocab_size, lengths)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            img = clip.visual_projection(clip.vision_model(pixel_values=pixels).pooler_output)  # (total, tw)
            seq = img.new_zeros(batch * max_frames, tw).index_copy(0, slot, img).view(batch, max_frames, tw)
            x = seq + frame_pos.weight[None]
            x = temporal(x, src_key_padding_mask=~frame_mask) + seq
            m = frame_mask[..., None].to(x.dtype)
            video = f.normalize((x * m).sum(1) / m.sum(1), dim=-1)
            text = clip.text_projection(clip.text_model(input_ids=ids, attention_mask=amask).pooler_output)
            text = f.normalize(text, dim=-1)
            sim = clip.logit_scale.exp() * text.float() @ video.float().t()
            labels = torch.arange(batch, device="cuda")
            loss = (f.cross_entropy(sim, labels) + f.cross_entropy(sim.t(), labels)) / 2
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(clip.parameters()) + list(temporal.parameters()) +
                                       list(frame_pos.parameters()), 1.0)
        opt.step()
        float(loss.detach())
        del slot, frame_mask, raw, pixels, ids, amask, img, seq, x, m, video, text, sim, labels, loss
    torch.cuda.synchronize()

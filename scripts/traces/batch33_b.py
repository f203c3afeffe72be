"""The thirty-third batch's second half (batch33.py holds the first; written in two to keep files small):
session-based recommendation training with GRU4Rec's session-parallel mini-batches (sessions ending and starting in
every slot, the batch shrinking at each epoch's tail), an N-HiTS forecasting sweep over horizons and lookback
windows of varying length, TabPFN-style in-context tabular classification serving over datasets of varying rows,
features and classes, and DeepAR probabilistic forecasting serving with ancestral sampling of many paths
(histories uploaded on a side stream). Same conventions and plumbing as batch33.py; record.py registers this
module right after it, so that the batch's workloads keep their order. Three are single-stream;
deepar_sample_serve uploads every request batch's histories from reused pinned host buffers on a side stream (the
compute stream waiting on the batch's event, the uploaded tensor record_stream'ed). tabpfn_icl_serve and
deepar_sample_serve run under bf16 autocast; gru4rec_session_train and nhits_horizon_sweep run in fp32
(nhits_horizon_sweep and deepar_sample_serve stay under 1 GB requested).

Real sizes checked as batch33.py's header says: every workload run whole at its real sizes on the meta device,
its op outputs counted there for the estimates in record_new33.sh's header, and all four run through the CPU smoke
run (RECORD_SMOKE=1).
"""

import math

import torch

from batch_common import Batch, upload

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- GRU4Rec, session-parallel mini-batches


@_workload("session-based recommendation training, GRU4Rec (Hidasi et al. 2016; Hidasi & Karatzoglou 2018) with session-parallel mini-batches as its official PyTorch port trains it, written by hand: a 200000-item catalogue, input item embeddings of 128, one GRU layer of 256 (nn.GRUCell, no backprop through time: the hidden state detached every step), output item weights and biases (256 wide) scored against the batch's targets plus 2048 shared negatives sampled by popularity (a power law, drawn on the device), cross-entropy over those 256 + 2048 scores with the in-batch target on the diagonal; 256 session slots, each slot fed its session's next click, a session of 2-60 clicks (drawn log-uniform on the host) ending and a new one starting in its slot with its hidden state zeroed (a reset mask uploaded per step); each of 8 epochs a fresh day of 5000-9000 sessions (drawn), and at its tail the slots whose sessions ran out dropped (the hidden state compacted by index_select, the batch shrinking to 1); Adam (lr 5e-4 after warmup) on every weight, dense; after each epoch a next-click evaluation of 400 held-out sessions run session-parallel in 256 slots, every click scored against the whole catalogue (topk 20, recall and MRR by comparison, read back at the end); fp32")
def gru4rec_session_train(rng):
    nn, f = torch.nn, torch.nn.functional
    nitems, de, dh = _smoke(200000, 400), _smoke(128, 16), _smoke(256, 16)
    slots, nneg, nepochs = _smoke(256, 8), _smoke(2048, 32), _smoke(8, 1)
    emb = nn.Embedding(nitems, de)
    gru = nn.GRUCell(de, dh)
    wy, by = nn.Embedding(nitems, dh), nn.Embedding(nitems, 1)
    model = nn.ModuleList([emb, gru, wy, by]).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=5e-4)
    lognit = math.log(nitems)

    def popular(n):  # power-law item ids (popular items first), as GRU4Rec's popularity sampling draws them
        return torch.exp(torch.rand(n, device="cuda") * lognit).long().clamp(max=nitems - 1)

    def sessions(n):
        return [_loguniform(rng, 2, _smoke(60, 6)) - 1 for _ in range(n)]  # transitions per session

    def run_epoch(pool, train):
        left = [pool.pop() for _ in range(min(slots, len(pool)))]  # transitions left in each slot's session
        h = torch.zeros(len(left), dh, device="cuda")
        hits, rr = [], []
        step = 0
        while left:
            B = len(left)
            reset = [1.0] * B
            x, y = popular(B), popular(B)
            if train:
                neg = popular(nneg)
                h = gru(emb(x), h.detach())
                tgt = torch.cat([y, neg])
                scores = h @ wy(tgt).t() + by(tgt).squeeze(-1)
                loss = f.cross_entropy(scores, torch.arange(B, device="cuda"))
                loss.backward()
                for g in opt.param_groups:
                    g["lr"] = 5e-4 * min(1.0, (step + 1) / 100)
                opt.step()
                opt.zero_grad(set_to_none=True)
                del neg, tgt, scores, loss
            else:
                h = gru(emb(x), h)
                scores = h @ wy.weight.t() + by.weight.squeeze(-1)
                top = scores.topk(20, -1).indices
                hit = (top == y[:, None])
                hits.append(hit.any(-1).float().sum())
                rr.append((hit.float() / torch.arange(1, 21, device="cuda")).sum())
                del scores, top, hit
            step += 1
            keep = []
            for i in range(B):
                left[i] -= 1
                if left[i] <= 0:
                    reset[i] = 0.0
                    if pool:
                        left[i] = pool.pop()
                if left[i] > 0:
                    keep.append(i)
            h = h * torch.tensor(reset, device="cuda")[:, None]
            if len(keep) < B:
                h = h.index_select(0, torch.tensor(keep, dtype=torch.long, device="cuda"))
                left = [left[i] for i in keep]
            del x, y
        if not train and hits:
            torch.stack([torch.stack(hits).sum(), torch.stack(rr).sum()]).tolist()

    for _ in range(nepochs):
        run_epoch(sessions(rng.randint(_smoke(5000, 20), _smoke(9000, 30))), True)
        with torch.no_grad():
            run_epoch(sessions(_smoke(400, 10)), False)
    torch.cuda.synchronize()


# ---------------------------------------------------------------- N-HiTS horizon sweep


class _NHitsBlock(torch.nn.Module):
    """An N-HiTS block (Challu et al. 2023): max-pool the input window by k, a 2-layer MLP of 512, coefficients of
    a backcast and a forecast at a reduced rate (expressiveness ratio r), linearly interpolated back to full
    length."""

    def __init__(self, lback, h, k, r, width):
        super().__init__()
        nn = torch.nn
        self.k, self.lback, self.h = k, lback, h
        self.nb, self.nf = max(1, lback // r), max(1, h // r)
        self.mlp = nn.Sequential(nn.Linear(math.ceil(lback / k), width), nn.ReLU(), nn.Linear(width, width),
                                 nn.ReLU(), nn.Linear(width, self.nb + self.nf))

    def forward(self, x):
        f = torch.nn.functional
        p = f.max_pool1d(x[:, None], self.k, self.k, ceil_mode=True)[:, 0]
        theta = self.mlp(p)
        back = f.interpolate(theta[:, None, :self.nb], size=self.lback, mode="linear", align_corners=False)[:, 0]
        fore = f.interpolate(theta[:, None, self.nb:], size=self.h, mode="linear", align_corners=False)[:, 0]
        return back, fore


@_workload("time-series forecasting sweep, N-HiTS (Challu et al. 2023) as neuralforecast trains it on long-horizon benchmarks, one model per run (built, trained, freed), written by hand: 8 runs one after another, each on a dataset of its own drawn from ETTm/electricity/traffic/weather-like shapes (7-862 series of 12k-35k steps made on the device) with a horizon drawn from 24, 48, 96, 192, 336 or 720 and a lookback of 2-5 horizons (capped at 2160); 3 stacks of one block each (max-pool kernels 8/4/1 on the input, MLPs 2 x 512 with ReLU, expressiveness ratios 24/12/1 for the short horizons and 168/24/1 for the long, coefficients linearly interpolated to the backcast and the forecast), doubly residual; windows of 256-1024 (drawn per step) gathered by integer indexing of random series and start points, each window scaled by its lookback's mean and standard deviation; MAE loss, Adam (1e-3, halved three times over the run), 280 steps a run, the loss read back every 30 steps; a validation of 4096 windows (no grad) at each run's end, MAE and MSE read back; fp32, under 1 GB")
def nhits_horizon_sweep(rng):
    f = torch.nn.functional
    width, nruns, nsteps = _smoke(512, 16), _smoke(8, 2), _smoke(280, 3)
    shapes = [(7, 34560), (321, 26304), (862, 17544), (21, 52696)]

    def windows(data, n, lback, h, hi):
        s = torch.randint(0, data.shape[0], (n,), device="cuda")
        t0 = torch.randint(0, hi - lback - h, (n,), device="cuda")
        w = data[s[:, None], t0[:, None] + torch.arange(lback + h, device="cuda")[None]]
        x, y = w[:, :lback], w[:, lback:]
        mu, sd = x.mean(1, keepdim=True), x.std(1, keepdim=True) + 1e-5
        return (x - mu) / sd, (y - mu) / sd

    for _ in range(nruns):
        ns, T = rng.choice(shapes)
        ns, T = _smoke(ns, 3), _smoke(T, 400)
        h = _smoke(rng.choice([24, 48, 96, 192, 336, 720]), rng.choice([4, 8]))
        lback = min(_smoke(2160, 64), h * rng.randint(2, 5))
        data = torch.randn(ns, T, device="cuda").cumsum(1) * 0.05 + torch.sin(
            torch.arange(T, device="cuda") * (2 * math.pi / 24))
        ratios = (24, 12, 1) if h <= 96 else (168, 24, 1)
        blocks = torch.nn.ModuleList(_NHitsBlock(lback, h, k, r, width) for k, r in zip((8, 4, 1), ratios)).cuda()
        opt = torch.optim.Adam(blocks.parameters(), lr=1e-3)
        split = int(T * 0.8)
        for step in range(nsteps):
            for g in opt.param_groups:
                g["lr"] = 1e-3 * 0.5 ** (step * 4 // nsteps)
            x, y = windows(data, rng.randint(_smoke(256, 4), _smoke(1024, 8)), lback, h, split)
            fc = 0
            for blk in blocks:
                back, fore = blk(x)
                x = x - back
                fc = fc + fore
            loss = (fc - y).abs().mean()
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            if (step + 1) % _smoke(30, 1) == 0:
                loss.item()
            del x, y, fc, back, fore, loss
        with torch.no_grad():
            x, y = windows(data, _smoke(4096, 8), lback, h, T)
            fc = 0
            for blk in blocks:
                back, fore = blk(x)
                x = x - back
                fc = fc + fore
            torch.stack([(fc - y).abs().mean(), (fc - y).pow(2).mean()]).tolist()
            del x, y, fc, back, fore
        del blocks, opt, data
    torch.cuda.synchronize()


# ---------------------------------------------------------------- TabPFN-style in-context tabular serving


class _PfnLayer(torch.nn.Module):
    """A TabPFN layer (post-norm): every row (train and test) attends to the train rows only, GELU FFN."""

    def __init__(self, d, heads, ff):
        super().__init__()
        nn = torch.nn
        self.h = heads
        self.qkv, self.o, self.n1 = nn.Linear(d, 3 * d), nn.Linear(d, d), nn.LayerNorm(d)
        self.fc1, self.fc2, self.n2 = nn.Linear(d, ff), nn.Linear(ff, d), nn.LayerNorm(d)

    def forward(self, x, ntr):
        q, k, v = (t.unflatten(-1, (self.h, -1)).transpose(1, 2) for t in self.qkv(x).chunk(3, -1))
        a = torch.nn.functional.scaled_dot_product_attention(q, k[:, :, :ntr], v[:, :, :ntr])
        x = self.n1(x + self.o(a.transpose(1, 2).flatten(2)))
        return self.n2(x + self.fc2(torch.nn.functional.gelu(self.fc1(x))))


@_workload("in-context tabular classification serving, TabPFN-style (Hollmann et al. 2023, the v1 architecture written by hand, random weights): 12 post-norm layers of 512 (4 heads, GELU FFN 1024), features zero-padded to 100 and rescaled by 100 / features, a linear encoder and a label encoder added on the train rows, every row attending to the train rows only (one SDPA call a layer with the keys and values sliced to the train rows), a 2-layer decoder to 10 logits sliced to the dataset's classes; 740 requests, each a dataset of 32-2048 train rows and 8-1024 test rows (drawn log-uniform), 2-100 features and 2-10 classes (drawn), made on the device, z-scored by the train rows; an ensemble of 2-8 members (drawn, rows x members at most 16384) differing in a feature permutation (index_select) and a class shift, run as one batch, their softmaxes shifted back (index_select) and averaged, the test rows' class probabilities read back; bf16 autocast, eval mode, no grad")
def tabpfn_icl_serve(rng):
    f = torch.nn.functional
    d, heads, ff, nl = _smoke(512, 32), _smoke(4, 2), _smoke(1024, 64), _smoke(12, 1)
    nreq, fmax, cmax = _smoke(740, 3), 100, 10
    enc, yenc = torch.nn.Linear(fmax, d), torch.nn.Linear(1, d)
    layers = torch.nn.ModuleList(_PfnLayer(d, heads, ff) for _ in range(nl))
    dec = torch.nn.Sequential(torch.nn.Linear(d, d), torch.nn.GELU(), torch.nn.Linear(d, cmax))
    model = torch.nn.ModuleList([enc, yenc, layers, dec]).cuda().eval()

    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        for _ in range(nreq):
            ntr = _loguniform(rng, _smoke(32, 8), _smoke(2048, 32))
            nte = _loguniform(rng, _smoke(8, 2), _smoke(1024, 16))
            nf, nc = rng.randint(2, fmax), rng.randint(2, cmax)
            E = max(1, min(rng.randint(2, 8), _smoke(16384, 512) // (ntr + nte)))
            X = torch.randn(ntr + nte, nf, device="cuda")
            y = torch.randint(0, nc, (ntr,), device="cuda")
            mu, sd = X[:ntr].mean(0), X[:ntr].std(0) + 1e-6
            X = ((X - mu) / sd).clamp(-100, 100)
            shifts = [rng.randrange(nc) for _ in range(E)]
            perms = torch.stack([torch.randperm(nf, device="cuda") for _ in range(E)])  # (E, nf)
            Xe = X[:, perms].permute(1, 0, 2)  # (E, rows, nf) by integer indexing
            Xe = f.pad(Xe, (0, fmax - nf)) * (fmax / nf)
            ye = (y[None] + torch.tensor(shifts, device="cuda")[:, None]) % nc  # (E, ntr)
            x = enc(Xe)
            x = torch.cat([x[:, :ntr] + yenc(ye[..., None].float()), x[:, ntr:]], 1)
            for layer in layers:
                x = layer(x, ntr)
            p = torch.softmax(dec(x[:, ntr:])[..., :nc].float(), -1)  # (E, nte, nc)
            back = (torch.arange(nc, device="cuda")[None] + torch.tensor(shifts, device="cuda")[:, None]) % nc
            p = torch.stack([p[e].index_select(1, back[e]) for e in range(E)]).mean(0)
            p.cpu()
            del X, y, mu, sd, perms, Xe, ye, x, p, back
    torch.cuda.synchronize()


# ---------------------------------------------------------------- DeepAR sampling serving


@_workload("probabilistic forecasting serving, DeepAR (Salinas et al. 2020) as GluonTS serves it, written by hand (random weights): a 3-layer LSTM of 256 (cells unrolled by hand, fused gate matmuls), inputs of 16 scaled lags (1-7, 23-25, 47-49, 167-169), 4 calendar features, an age feature and a 32-wide embedding of the series id (5000 series), a Gaussian head (mean, softplus scale); request batches of 1-64 series (drawn) with a context of 24-192 steps and a horizon of 12-168 steps (drawn per batch), their histories (context plus 169 steps of lags) written into one of two reused pinned host buffers and uploaded on a side stream (the compute stream waits on the batch's event, the upload record_stream'ed); each series scaled by its mean absolute context, the context encoded with the series rows, the LSTM state repeated for 100 sample paths (repeat_interleave), then ancestral sampling over the horizon, each step's lags gathered from the growing path buffer (samples written in place) and every sample fed back; the 10/50/90% quantiles taken by sorting the paths and read back; 31 batches, bf16 autocast, no grad, under 1 GB")
def deepar_sample_serve(rng):
    nn, f = torch.nn, torch.nn.functional
    hid, nlayer, nser, demb = _smoke(256, 16), 3, _smoke(5000, 50), 32
    nbatch, nsamp = _smoke(31, 2), _smoke(100, 4)
    lags = [1, 2, 3, 4, 5, 6, 7, 23, 24, 25, 47, 48, 49, 167, 168, 169]
    maxlag = 169
    nin = len(lags) + 4 + 1 + demb
    emb = nn.Embedding(nser, demb)
    wih = nn.ModuleList(nn.Linear(nin if i == 0 else hid, 4 * hid) for i in range(nlayer))
    whh = nn.ModuleList(nn.Linear(hid, 4 * hid, bias=False) for _ in range(nlayer))
    head = nn.Linear(hid, 2)
    model = nn.ModuleList([emb, wih, whh, head]).cuda().eval()
    rmax, cmax, hmax = _smoke(64, 3), _smoke(192, 24), _smoke(168, 12)
    hosts = [torch.randn(rmax * (cmax + maxlag)).abs().pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    lag_t = torch.tensor(lags, device="cuda")
    periods = torch.tensor([24.0, 168.0], device="cuda")

    def cell(x, state):
        new = []
        for i in range(nlayer):
            h, c = state[i]
            gi, gf, gg, go = (wih[i](x) + whh[i](h)).chunk(4, -1)
            c = torch.sigmoid(gf) * c + torch.sigmoid(gi) * torch.tanh(gg)
            h = torch.sigmoid(go) * torch.tanh(c)
            new.append((h, c))
            x = h
        return x, new

    def inputs(series, t, tabs, e):  # series: (rows, maxlag + steps) scaled; column t is the step predicted
        lagv = series.index_select(1, t - lag_t)
        ang = (tabs[:, None] + t) * (2 * math.pi / periods)
        cal = torch.stack([ang.sin(), ang.cos()], -1).flatten(-2)
        age = torch.log1p(tabs + t)[:, None] / 10
        return torch.cat([lagv, cal, age, e], -1)

    def stage(k, R, C):
        hosts[k][:R * 8].uniform_(0, 10)  # the newest observations written into the buffer (the rest reused)
        with torch.cuda.stream(side):
            hist = upload(hosts[k][:R * (C + maxlag)].view(R, C + maxlag))
            ev = side.record_event()
        return hist, ev

    def draw():
        return rng.randint(1, rmax), rng.randint(_smoke(24, 3), cmax), rng.randint(_smoke(12, 2), hmax)

    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        shape = draw()
        nxt = stage(0, shape[0], shape[1])
        for bi in range(nbatch):
            (hist, ev), (R, C, H) = nxt, shape
            torch.cuda.current_stream().wait_event(ev)
            hist.record_stream(torch.cuda.current_stream())
            if bi + 1 < nbatch:
                shape = draw()
                nxt = stage((bi + 1) % 2, shape[0], shape[1])
            ids = torch.randint(0, nser, (R,), device="cuda")
            tabs = torch.randint(0, 10000, (R,), device="cuda").float()
            scale = hist[:, maxlag:].abs().mean(1, keepdim=True) + 1.0
            series = hist / scale
            e = emb(ids)
            state = [(torch.zeros(R, hid, device="cuda"), torch.zeros(R, hid, device="cuda")) for _ in range(nlayer)]
            for t in range(maxlag, maxlag + C):
                _, state = cell(inputs(series, t, tabs, e), state)
            S = R * nsamp
            state = [(h.repeat_interleave(nsamp, 0), c.repeat_interleave(nsamp, 0)) for h, c in state]
            paths = torch.cat([series, torch.zeros(R, H, device="cuda")], 1).repeat_interleave(nsamp, 0)
            es, ts = e.repeat_interleave(nsamp, 0), tabs.repeat_interleave(nsamp, 0)
            for t in range(maxlag + C, maxlag + C + H):
                out, state = cell(inputs(paths, t, ts, es), state)
                mu, sg = head(out).float().unbind(-1)
                paths[:, t] = mu + f.softplus(sg) * torch.randn(S, device="cuda")
            fc = paths[:, maxlag + C:].view(R, nsamp, H).sort(1).values
            q = fc[:, [nsamp // 10, nsamp // 2, nsamp * 9 // 10]] * scale[:, :, None]
            q.cpu()
            del hist, ids, tabs, scale, series, e, state, paths, es, ts, out, mu, sg, fc, q
    torch.cuda.synchronize()

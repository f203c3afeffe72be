"""The fifty-fifth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch53_b.py are): particle physics and astronomy on the GPU (collider and detector physics, gravitational waves,
cosmology), written in torch alone, first half. Jet tagging with a Particle Transformer (Qu, Li and Qian 2022: jets
of a drawn number of constituents padded to a bucket and masked, per-particle features and pairwise interaction
features (ln kT, ln z, ln dR, ln m^2) computed from the four-vectors on the device and embedded by pointwise
convolutions into an attention bias for every head, particle-attention blocks then class-attention blocks; batches
cut to a constituent budget; evaluation of the accuracy and background rejection between epochs), charged-particle
track finding with a graph neural network over detector hits (Exa.TrkX-style: events of a drawn number of helical
tracks through ten barrel layers, a metric-learning embedding trained by a hinge loss on true and random pairs, the
graph built by k-nearest-neighbour search in the embedding, chunked distance matrices and top-k, edges beyond the
radius weighted out, then an interaction network of eight message-passing iterations classifying the edges; the hit
and edge counts change every event), a gravitational-wave trigger service (strain of two detectors at 2,048 Hz,
segments of 4-16 s, batches of drawn size uploaded from reused pinned host buffers on a side stream one request
ahead; Welch PSD estimation, whitening and band-passing by FFT, a matched filter over a bank of post-Newtonian
chirp templates made on the device, and a 1D CNN over sliding 1 s windows; each request's triggers read back), and
a particle-mesh N-body simulation with a field-level emulator trained on its output (Gaussian initial conditions of
a power-law spectrum with a transfer-function cut-off, Zel'dovich displacement, leapfrog steps with cloud-in-cell
deposit by index_add, an FFT Poisson solve, the force by spectral gradient and CIC interpolation; meshes of 64^3 to
160^3, drawn per simulation; the power spectrum measured by binned index_add; then a 3D UNet trained on sub-volumes
to map the linear field to the evolved one). Same conventions as the earlier batches: nothing downloaded, data drawn
at random on the device (or, for the trigger service, from a few reused pinned host buffers), `rng` the workload's
random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1
runs are tiny. No control flow reads a tensor's value: masks are multiplied or filled in, counts fixed on the host,
no boolean-mask indexing; losses, rejections and triggers are read back only at logging points (the service returns
each request's triggers, as a service must). gw_strain_trigger_serve uses a side stream (uploads waited on by event,
the tensors record_stream'ed); the others are single-stream. The transformers, the GNN's MLPs, the CNNs and the 3D
UNet run under bf16 autocast; graph construction, FFTs, the matched filter, the N-body integration and the losses
are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch55_b.py's header says the same of its half): every workload of this half
was run whole at its final real sizes (RECORD_SMOKE unset) on PyTorch's meta device with the helper's runner
(/tmp/b55/meta_run.py, not committed, a copy of /work/notes/meta_run.py: smoke_cpu.py's patching with "cuda" mapped
to "meta", readbacks answered with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking a math
path, streams, events and pinned memory no-ops; boolean-mask indexing, which the meta device cannot size, is
avoided), its op outputs counted there (events about 1.8x that count) and its peak live bytes tracked:
particle_transformer_jet_train 319,859 op outputs, peak 3.90 GB; trackml_gnn_edge_train 340,722, 3.56 GB;
gw_strain_trigger_serve 319,243, 0.61 GB; pm_nbody_emulator_train 307,588, 3.18 GB (peaks in fp32 where autocast
would take bf16). record_new55.sh's header has them too, with the first runs that led to resizes. The CPU smoke
run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- Particle Transformer jet tagging


def _jets(b, n, ncls):
    """A batch of b jets padded to n constituents: four-vectors (pt, eta, phi, E) relative to the jet axis, a drawn
    constituent count per jet (mask), particle-ID and track features; labels drawn."""
    dev = "cuda"
    labels = torch.randint(0, ncls, (b,), device=dev)
    cnt = torch.randint(n // 3, n + 1, (b,), device=dev)
    mask = (torch.arange(n, device=dev)[None] < cnt[:, None]).float()
    pt = -20.0 * torch.log(torch.rand(b, n, device=dev).clamp_min(1e-7)) + 0.5  # exponential, mean 20 GeV
    pt = torch.sort(pt, dim=1, descending=True).values * mask
    width = 0.1 + 0.05 * labels.float()[:, None]
    deta = torch.randn(b, n, device=dev) * width
    dphi = torch.randn(b, n, device=dev) * width
    energy = pt * torch.cosh(deta)
    pid = _F.one_hot(torch.randint(0, 5, (b, n), device=dev), 5).float()
    trk = torch.randn(b, n, 8, device=dev) * 0.1  # charge, impact parameters and their errors
    jet_pt = pt.sum(1, keepdim=True) + 1e-3
    jet_e = energy.sum(1, keepdim=True) + 1e-3
    feats = torch.cat([
        torch.stack([deta, dphi, torch.log(pt + 1e-3), torch.log(energy + 1e-3), torch.log(pt / jet_pt + 1e-6),
                     torch.log(energy / jet_e + 1e-6), torch.sqrt(deta ** 2 + dphi ** 2) + 0.0, torch.tanh(deta)],
                    -1), pid, trk], -1) * mask[..., None]
    px, py, pz = pt * torch.cos(dphi), pt * torch.sin(dphi), pt * torch.sinh(deta)
    return feats, torch.stack([px, py, pz, energy], -1), mask, labels


def _pair_features(p4, eps=1e-8):
    """ParT's pairwise interaction features for every pair of constituents: ln dR, ln kT, ln z, ln m^2."""
    px, py, pz, e = p4.unbind(-1)
    pt = torch.sqrt(px ** 2 + py ** 2 + eps)
    rap = 0.5 * torch.log((e + pz + eps) / (e - pz + eps).clamp_min(eps))
    phi = torch.atan2(py, px)
    drap = rap[:, :, None] - rap[:, None, :]
    dphi = torch.remainder(phi[:, :, None] - phi[:, None, :] + math.pi, 2 * math.pi) - math.pi
    dr = torch.sqrt(drap ** 2 + dphi ** 2 + eps)
    ptmin = torch.minimum(pt[:, :, None], pt[:, None, :])
    kt = ptmin * dr
    z = ptmin / (pt[:, :, None] + pt[:, None, :] + eps)
    s = p4[:, :, None] + p4[:, None, :]
    m2 = (s[..., 3] ** 2 - s[..., 0] ** 2 - s[..., 1] ** 2 - s[..., 2] ** 2).clamp_min(eps)
    return torch.log(torch.stack([dr, kt + eps, z + eps, m2], 1))  # (b, 4, n, n)


class _ParTBlock(_nn.Module):
    def __init__(self, d, heads, hidden):
        super().__init__()
        self.heads = heads
        self.n1, self.n2 = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.proj = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.fc1, self.fc2 = _nn.Linear(d, hidden), _nn.Linear(hidden, d)

    def forward(self, x, bias):
        b, n, d = x.shape
        h = self.n1(x)
        q, k, v = self.qkv(h).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = _F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        x = x + self.proj(a.transpose(1, 2).reshape(b, n, d))
        return x + self.fc2(_F.gelu(self.fc1(self.n2(x))))


class _ClassBlock(_nn.Module):
    def __init__(self, d, heads, hidden):
        super().__init__()
        self.heads = heads
        self.n1, self.n2 = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.q, self.kv, self.proj = _nn.Linear(d, d), _nn.Linear(d, 2 * d), _nn.Linear(d, d)
        self.fc1, self.fc2 = _nn.Linear(d, hidden), _nn.Linear(hidden, d)

    def forward(self, cls, x, kmask):
        b, n, d = x.shape
        hd = d // self.heads
        u = self.n1(torch.cat([cls, x], 1))
        q = self.q(u[:, :1]).view(b, 1, self.heads, hd).transpose(1, 2)
        k, v = self.kv(u).view(b, n + 1, 2, self.heads, hd).permute(2, 0, 3, 1, 4)
        a = _F.scaled_dot_product_attention(q, k, v, attn_mask=kmask)
        cls = cls + self.proj(a.transpose(1, 2).reshape(b, 1, d))
        return cls + self.fc2(_F.gelu(self.fc1(self.n2(cls))))


class _ParT(_nn.Module):
    def __init__(self, din, d, heads, depth, cdepth, ncls):
        super().__init__()
        self.heads = heads
        self.embed = _nn.Sequential(_nn.LayerNorm(din), _nn.Linear(din, 128), _nn.GELU(), _nn.Linear(128, 512),
                                    _nn.GELU(), _nn.Linear(512, d))
        self.pair = _nn.Sequential(_nn.BatchNorm2d(4), _nn.Conv2d(4, 64, 1), _nn.GELU(), _nn.Conv2d(64, 64, 1),
                                   _nn.GELU(), _nn.Conv2d(64, 64, 1), _nn.GELU(), _nn.Conv2d(64, heads, 1))
        self.blocks = _nn.ModuleList(_ParTBlock(d, heads, 4 * d) for _ in range(depth))
        self.cblocks = _nn.ModuleList(_ClassBlock(d, heads, 4 * d) for _ in range(cdepth))
        self.cls = _nn.Parameter(torch.zeros(1, 1, d))
        self.norm, self.head = _nn.LayerNorm(d), _nn.Linear(d, ncls)

    def forward(self, feats, p4, mask):
        b, n = mask.shape
        x = self.embed(feats)
        pad = (1.0 - mask) * -1e4
        bias = self.pair(_pair_features(p4)) + pad[:, None, None, :]
        for blk in self.blocks:
            x = blk(x, bias.to(x.dtype))
        cls = self.cls.expand(b, -1, -1)
        kmask = torch.cat([torch.zeros(b, 1, device=mask.device), pad], 1)[:, None, None, :].to(x.dtype)
        for blk in self.cblocks:
            cls = blk(cls, x, kmask)
        return self.head(self.norm(cls[:, 0]))


@_workload("jet tagging with a Particle Transformer written by hand (ParT, random init): jets of 10 classes with a drawn number of constituents padded to a bucket of 48-128 (drawn per batch) and masked, 21 per-particle features and the four pairwise interaction features (ln dR, ln kT, ln z, ln m^2) computed from the four-vectors on the device for every pair, embedded by pointwise convolutions 64-64-64 into an attention bias per head; 8 particle-attention blocks of width 128 (8 heads) then 2 class-attention blocks; batches cut to a budget of 12,288 constituents (96-256 jets); bf16 autocast, AdamW with warm-up and cosine decay, gradient clipping; 240 training steps, every 80 an evaluation of 6 batches without grad, accuracy and background rejection at 50% signal efficiency (by sort) read back")
def particle_transformer_jet_train(rng):
    ncls, din = 10, 21
    d, heads = _smoke(128, 16), _smoke(8, 2)
    model = _ParT(din, d, heads, _smoke(8, 1), _smoke(2, 1), ncls).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    steps, warm = _smoke(240, 3), _smoke(10, 1)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    buckets = _smoke([48, 64, 96, 128], [8, 12])
    budget = _smoke(12288, 64)

    def batch():
        n = rng.choice(buckets)
        return _jets(max(4, min(256, budget // n)), n, ncls)

    for step in range(steps):
        model.train()
        feats, p4, mask, labels = batch()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(feats, p4, mask)
        loss = _F.cross_entropy(logits.float(), labels, label_smoothing=0.1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        del feats, p4, mask, logits
        if (step + 1) % _smoke(80, 3) == 0:
            model.eval()
            correct, rej = [], []
            with torch.no_grad():
                for _ in range(_smoke(6, 1)):
                    feats, p4, mask, labels = batch()
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        prob = model(feats, p4, mask).float().softmax(-1)
                    correct.append((prob.argmax(-1) == labels).float().mean())
                    score = prob[:, 1] / (prob[:, 1] + prob[:, 0] + 1e-6)
                    sig = (labels == 1).float()
                    order = torch.sort(score, descending=True).indices
                    eff = torch.cumsum(sig[order], 0) / (sig.sum() + 1e-6)
                    bkg = torch.cumsum((labels[order] == 0).float(), 0)
                    rej.append(((labels == 0).float().sum() + 1) / (bkg.gather(0, (eff < 0.5).sum().clamp(
                        max=bkg.shape[0] - 1)[None]) + 1))
            float(torch.stack(correct).mean())
            torch.cat(rej).mean().item()
            float(loss)


# ---------------------------------------------------------------- Exa.TrkX-style GNN track finding


def _event(ntrk, nlayer):
    """An event of ntrk helical tracks through nlayer barrel layers: hits (r, phi, z) with noise, each hit's particle,
    and the true edges between consecutive layers; 10% of the hits are noise (particle -1)."""
    dev = "cuda"
    radii = torch.linspace(32.0, 1000.0, nlayer, device=dev)
    phi0 = (torch.rand(ntrk, device=dev) * 2 - 1) * math.pi
    curv = (torch.rand(ntrk, device=dev) * 2 - 1) * 3e-4
    cot = torch.randn(ntrk, device=dev)
    z0 = torch.randn(ntrk, device=dev) * 50
    phi = phi0[:, None] + curv[:, None] * radii[None] + torch.randn(ntrk, nlayer, device=dev) * 1e-3
    z = z0[:, None] + cot[:, None] * radii[None] + torch.randn(ntrk, nlayer, device=dev) * 0.5
    r = radii[None].expand(ntrk, -1)
    pid = torch.arange(ntrk, device=dev)[:, None].expand(-1, nlayer)
    nnoise = ntrk * nlayer // 10
    nr = radii[torch.randint(0, nlayer, (nnoise,), device=dev)]
    hits = torch.cat([torch.stack([r.reshape(-1), phi.reshape(-1), z.reshape(-1)], -1),
                      torch.stack([nr, (torch.rand(nnoise, device=dev) * 2 - 1) * math.pi,
                                   (torch.rand(nnoise, device=dev) * 2 - 1) * 1000], -1)])
    pids = torch.cat([pid.reshape(-1), torch.full((nnoise,), -1, device=dev)])
    idx = torch.arange(ntrk * nlayer, device=dev).view(ntrk, nlayer)
    true_edges = torch.stack([idx[:, :-1].reshape(-1), idx[:, 1:].reshape(-1)])
    cell = torch.randn(hits.shape[0], 5, device=dev) * 0.1
    feats = torch.cat([hits[:, :1] / 1000, torch.cos(hits[:, 1:2]), torch.sin(hits[:, 1:2]), hits[:, 2:] / 1000,
                       cell], -1)
    return feats, pids, true_edges


def _mlp(din, hidden, dout, layers, ln=True):
    mods, d = [], din
    for _ in range(layers):
        mods += [_nn.Linear(d, hidden)] + ([_nn.LayerNorm(hidden)] if ln else []) + [_nn.Tanh()]
        d = hidden
    mods.append(_nn.Linear(d, dout))
    return _nn.Sequential(*mods)


class _InteractionGNN(_nn.Module):
    def __init__(self, din, h, iters):
        super().__init__()
        self.iters = iters
        self.node_enc, self.edge_enc = _mlp(din, h, h, 2), _mlp(2 * din, h, h, 2)
        self.edge_net = _nn.ModuleList(_mlp(3 * h, h, h, 2) for _ in range(iters))
        self.node_net = _nn.ModuleList(_mlp(3 * h, h, h, 2) for _ in range(iters))
        self.out = _mlp(3 * h, h, 1, 2)

    def forward(self, x, src, dst):
        n = x.shape[0]
        h = self.node_enc(x)
        e = self.edge_enc(torch.cat([x[src], x[dst]], -1))
        for it in range(self.iters):
            e = e + self.edge_net[it](torch.cat([h[src], h[dst], e], -1))
            agg_in = torch.zeros(n, e.shape[1], device=x.device, dtype=e.dtype).index_add_(0, dst, e)
            agg_out = torch.zeros(n, e.shape[1], device=x.device, dtype=e.dtype).index_add_(0, src, e)
            h = h + self.node_net[it](torch.cat([h, agg_in, agg_out], -1))
        return self.out(torch.cat([h[src], h[dst], e], -1))[:, 0]


@_workload("charged-particle track finding with a graph neural network written by hand (Exa.TrkX-style, random init): events of 400-1,500 helical tracks (drawn) through 10 barrel layers plus 10% noise hits (4,400-16,500 hits); a metric-learning MLP (4 x 512, LayerNorm, tanh) embedding the hits into 12 dimensions, trained by a hinge loss on the true consecutive-layer pairs and random pairs; the graph built by 10-nearest-neighbour search in the embedding (chunked distance matrices of 4,096 queries, top-k), edges beyond the radius weighted out, candidate truth by particle equality; an interaction network (hidden 64, 8 message-passing iterations, index_add aggregation in both directions) classifying the 44k-165k edges with weighted BCE; bf16 autocast for the MLPs, graph construction fp32; 120 events of embedding training then 220 events of GNN training (embedding frozen), Adam; an evaluation of 4 events (efficiency and purity read back) after each phase")
def trackml_gnn_edge_train(rng):
    nlayer, k, radius = 10, _smoke(10, 4), 0.2
    emb = _mlp(9, _smoke(512, 16), 12, _smoke(4, 1)).cuda()
    gnn = _InteractionGNN(9, _smoke(64, 8), _smoke(8, 1)).cuda()
    chunk = _smoke(4096, 64)

    def draw():
        return _event(rng.randint(_smoke(400, 8), _smoke(1500, 16)), nlayer)

    def build_graph(z):
        n = z.shape[0]
        src, dst, dist = [], [], []
        for s in range(0, n, chunk):
            q = z[s:s + chunk]
            dmat = torch.cdist(q, z)
            val, nbr = torch.topk(dmat, k + 1, dim=1, largest=False)
            src.append(torch.arange(s, s + q.shape[0], device=z.device)[:, None].expand(-1, k).reshape(-1))
            dst.append(nbr[:, 1:].reshape(-1))
            dist.append(val[:, 1:].reshape(-1))
            del dmat
        return torch.cat(src), torch.cat(dst), torch.cat(dist)

    def evaluate():
        stats = []
        with torch.no_grad():
            for _ in range(_smoke(4, 1)):
                x, pids, _true = draw()
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    z = _F.normalize(emb(x).float(), dim=-1)
                src, dst, dist = build_graph(z)
                truth = ((pids[src] == pids[dst]) & (pids[src] >= 0)).float()
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    p = torch.sigmoid(gnn(x, src, dst).float()) * (dist < radius).float()
                sel = (p > 0.5).float()
                hit = (sel * truth).sum()
                stats.append(torch.stack([hit / (truth.sum() + 1), hit / (sel.sum() + 1)]))
        torch.stack(stats).mean(0).tolist()

    opt = torch.optim.Adam(emb.parameters(), lr=1e-3)
    for ev in range(_smoke(120, 2)):
        x, pids, true = draw()
        n = x.shape[0]
        rnd = torch.randint(0, n, (2, true.shape[1] * 3), device="cuda")
        pairs = torch.cat([true, rnd], 1)
        lab = torch.cat([torch.ones(true.shape[1], device="cuda"),
                         ((pids[rnd[0]] == pids[rnd[1]]) & (pids[rnd[0]] >= 0)).float()])
        with torch.autocast("cuda", dtype=torch.bfloat16):
            z = emb(x)
        z = _F.normalize(z.float(), dim=-1)
        d = (z[pairs[0]] - z[pairs[1]]).pow(2).sum(-1).add(1e-8).sqrt()
        loss = (lab * d.pow(2) + (1 - lab) * (radius - d).clamp_min(0).pow(2)).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if ev % 20 == 0:
            float(loss)
    evaluate()
    emb.requires_grad_(False)
    opt = torch.optim.Adam(gnn.parameters(), lr=3e-4)
    for ev in range(_smoke(220, 2)):
        x, pids, _true = draw()
        with torch.no_grad():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                z = _F.normalize(emb(x).float(), dim=-1)
            src, dst, dist = build_graph(z)
            truth = ((pids[src] == pids[dst]) & (pids[src] >= 0)).float()
            keep = (dist < radius).float()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logit = gnn(x, src, dst)
        w = keep * (1.0 + 2.0 * truth)
        loss = (_F.binary_cross_entropy_with_logits(logit.float(), truth, reduction="none") * w).sum() / (w.sum() + 1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(gnn.parameters(), 1.0)
        opt.step()
        del x, pids, src, dst, dist, truth, keep, logit, w
        if ev % 20 == 0:
            float(loss)
    evaluate()


# ---------------------------------------------------------------- gravitational-wave trigger service


def _chirp_bank(ntmp, nfreq, fs, f_lo):
    """Frequency-domain post-Newtonian (0PN amplitude, 1PN phase) inspiral templates for ntmp chirp masses and mass
    ratios, normalised, as (ntmp, nfreq) complex."""
    dev = "cuda"
    f = torch.linspace(0, fs / 2, nfreq, device=dev).clamp_min(f_lo)
    mc = torch.linspace(5.0, 40.0, ntmp, device=dev)[:, None] * 4.925e-6  # seconds
    eta = (0.1 + 0.15 * torch.rand(ntmp, 1, device=dev))
    v = (math.pi * mc / eta.pow(0.6) * f[None]).pow(1.0 / 3.0)
    psi = 3.0 / (128 * eta * v.pow(5)) * (1 + (3715.0 / 756 + 55.0 / 9 * eta) * v * v)
    amp = f[None].pow(-7.0 / 6.0) * (f[None] > f_lo).float()
    h = torch.polar(amp, -psi)
    return h / h.abs().pow(2).sum(-1, keepdim=True).sqrt()


def _hann(n, periodic=True):
    i = torch.arange(n, device="cuda", dtype=torch.float32)
    return 0.5 - 0.5 * torch.cos(2 * math.pi * i / (n if periodic else n - 1))


class _GwCnn(_nn.Module):
    """A 1D CNN over whitened two-detector windows (George and Huerta-style deep filtering)."""

    def __init__(self, w):
        super().__init__()
        layers, c = [], 2
        for cout, k in ((w, 32), (2 * w, 16), (4 * w, 8), (4 * w, 8), (8 * w, 4)):
            layers += [_nn.Conv1d(c, cout, k, padding=k // 2), _nn.BatchNorm1d(cout), _nn.ELU(), _nn.MaxPool1d(4)]
            c = cout
        self.net = _nn.Sequential(*layers, _nn.AdaptiveAvgPool1d(1), _nn.Flatten(), _nn.Linear(c, 64), _nn.ELU(),
                                  _nn.Linear(64, 1))

    def forward(self, x):
        return self.net(x)[:, 0]


@_workload("gravitational-wave trigger service written by hand (random init): requests of 2-16 two-detector strain segments (H1, L1) of 4-16 s at 2,048 Hz (drawn), each request's strain uploaded from reused pinned host buffers on a side stream one request ahead (waited on by event, record_stream'ed); on the device a Welch PSD (Hann-windowed 1 s segments at 50% overlap, rfft, averaged), whitening and a 20-500 Hz band-pass by FFT, a matched filter against a bank of 160 post-Newtonian chirp templates made on the device, in chunks of 32 templates (frequency-domain products, irfft per detector, network SNR time series by quadrature, peak and argmax per template), and a 1D CNN (5 conv stages, width 32) over sliding 1 s windows at 0.25 s stride under bf16 autocast without grad; 2,200 requests, each request's top triggers read back")
def gw_strain_trigger_serve(rng):
    fs = _smoke(2048, 1024)  # the CNN pools by 4^5
    durs = _smoke([4, 8, 12, 16], [2, 4])
    bmax, tmax = _smoke(16, 2), max(durs) * fs
    cnn = _GwCnn(_smoke(32, 4)).cuda().eval()
    ntmp, tchunk = _smoke(160, 4), _smoke(32, 2)
    banks, tapers = {}, {}
    host = [torch.randn(bmax * 2 * tmax).pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    done = [None, None]
    nreq = _smoke(2200, 3)

    def fetch(i):
        b, dur = rng.randint(2, bmax), rng.choice(durs)
        s = i % 2
        if done[s] is not None:
            done[s].synchronize()
        with torch.cuda.stream(side):
            x = host[s][:b * 2 * dur * fs].view(b, 2, dur * fs).to("cuda", non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        done[s] = ev
        return x, ev

    nxt = fetch(0)
    for req in range(nreq):
        x, ev = nxt
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        x.record_stream(cur)
        if req + 1 < nreq:
            nxt = fetch(req + 1)
        b, _, t = x.shape
        nf = t // 2 + 1
        with torch.no_grad():
            seg = x.unfold(-1, fs, fs // 2) * _hann(fs)
            psd = torch.fft.rfft(seg, dim=-1).abs().pow(2).mean(2) / fs  # (b, 2, fs/2+1)
            psd = _F.interpolate(psd, size=nf, mode="linear", align_corners=True)
            if t not in tapers:
                edge = _hann(fs, periodic=False)
                tapers[t] = torch.cat([edge[:fs // 2], torch.ones(t - fs, device="cuda"), edge[fs // 2:]])
            xf = torch.fft.rfft(x * tapers[t], dim=-1)
            f = torch.linspace(0, fs / 2, nf, device="cuda")
            band = ((f > 20) & (f < 500)).float()
            wf = xf / psd.clamp_min(1e-20).sqrt() * band
            white = torch.fft.irfft(wf, n=t, dim=-1)
            if t not in banks:
                banks[t] = _chirp_bank(ntmp, nf, fs, 20.0)
            bank = banks[t]
            peaks, ats = [], []
            for c0 in range(0, ntmp, tchunk):  # template chunks bound the SNR series' memory
                tb = bank[c0:c0 + tchunk].conj()[None]
                snr2 = None
                for det in range(2):
                    corr = torch.fft.irfft(wf[:, det, None, :] * tb, n=t, dim=-1)  # (b, tchunk, t)
                    snr2 = corr.pow(2) if snr2 is None else snr2 + corr.pow(2)
                    del corr
                pk_, at_ = snr2.sqrt().max(-1)
                peaks.append(pk_)
                ats.append(at_)
                del snr2
            peak, at = torch.cat(peaks, 1), torch.cat(ats, 1)
            best, tmpl = peak.max(-1)
            win = white.unfold(-1, fs, fs // 4).permute(0, 2, 1, 3).reshape(-1, 2, fs)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                score = torch.sigmoid(cnn(win).float()).view(b, -1)
            top, where = score.topk(3, dim=-1)
            torch.cat([best[:, None], tmpl[:, None].float(), at.gather(1, tmpl[:, None]).float(), top,
                       where.float()], -1).cpu()
        del x, seg, psd, xf, wf, white, peaks, ats, peak, at, win, score


# ---------------------------------------------------------------- particle-mesh N-body and a field-level emulator


def _kgrid(n, box):
    kf = 2 * math.pi / box
    kx = ((torch.arange(n, device="cuda") + n // 2) % n - n // 2).float() * kf  # fftfreq(n) * n
    kz = torch.arange(n // 2 + 1, device="cuda").float() * kf  # rfftfreq(n) * n
    return kx[:, None, None], kx[None, :, None], kz[None, None, :]


def _cic_weights(pos, n):
    """The eight cloud-in-cell corners of every particle: flat cell indices (8, np) and weights (8, np)."""
    g = pos * n
    i0 = torch.floor(g)
    f = g - i0
    i0 = i0.long()
    idx, wts = [], []
    for dx in (0, 1):
        for dy in (0, 1):
            for dz in (0, 1):
                ix = (i0[:, 0] + dx) % n
                iy = (i0[:, 1] + dy) % n
                iz = (i0[:, 2] + dz) % n
                w = ((f[:, 0] if dx else 1 - f[:, 0]) * (f[:, 1] if dy else 1 - f[:, 1])
                     * (f[:, 2] if dz else 1 - f[:, 2]))
                idx.append((ix * n + iy) * n + iz)
                wts.append(w)
    return torch.stack(idx), torch.stack(wts)


def _pm_run(n, box, nsteps, a0=0.02, a1=1.0):
    """A particle-mesh simulation with n^3 particles on an n^3 mesh (box in Mpc/h): Gaussian initial conditions,
    Zel'dovich displacement, kick-drift-kick leapfrog in the scale factor, CIC deposit, FFT Poisson solve, spectral
    gradient, CIC interpolation. Returns the linear and final density fields (n, n, n)."""
    dev = "cuda"
    kx, ky, kz = _kgrid(n, box)
    k2 = kx ** 2 + ky ** 2 + kz ** 2
    kmag = k2.sqrt()
    pk = kmag.clamp_min(1e-3).pow(0.96) / (1 + (kmag / 0.05).pow(2)).pow(2) * 2e4
    white = torch.fft.rfftn(torch.randn(n, n, n, device=dev))
    delta_k = white * (pk / box ** 3 * n ** 3).sqrt()
    delta_k[0, 0, 0] = 0
    inv_k2 = torch.where(k2 > 0, 1.0 / k2.clamp_min(1e-12), torch.zeros_like(k2))
    phi_k = -delta_k * inv_k2
    disp = torch.stack([torch.fft.irfftn(-1j * kk * phi_k, s=(n, n, n)) for kk in (kx, ky, kz)], -1) * a0
    q = torch.stack(torch.meshgrid(*(torch.arange(n, device=dev, dtype=torch.float32) / n,) * 3, indexing="ij"),
                    -1).reshape(-1, 3)
    pos = (q + disp.reshape(-1, 3) / box) % 1.0
    vel = disp.reshape(-1, 3) / box * a0
    lin = torch.fft.irfftn(delta_k, s=(n, n, n))

    def force(pos):
        idx, w = _cic_weights(pos, n)
        rho = torch.zeros(n ** 3, device=dev).index_add_(0, idx.reshape(-1), w.reshape(-1))
        dk = torch.fft.rfftn(rho.view(n, n, n) - 1.0)
        pk_ = -dk * inv_k2
        acc = []
        for kk in (kx, ky, kz):
            g = torch.fft.irfftn(-1j * kk * pk_, s=(n, n, n)).reshape(-1)
            acc.append((g[idx] * w).sum(0))
        return torch.stack(acc, -1), rho

    a_s = torch.linspace(a0, a1, nsteps + 1).tolist()
    acc, rho = force(pos)
    for i in range(nsteps):
        da = a_s[i + 1] - a_s[i]
        vel = vel + 0.5 * da * 1.5 * acc / a_s[i]
        pos = (pos + da * vel / (a_s[i] + 0.5 * da) ** 2) % 1.0
        acc, rho = force(pos)
        vel = vel + 0.5 * da * 1.5 * acc / a_s[i + 1]
    return lin, rho.view(n, n, n) - 1.0


def _power(field, box, nbins):
    n = field.shape[0]
    kx, ky, kz = _kgrid(n, box)
    kmag = (kx ** 2 + ky ** 2 + kz ** 2).sqrt().reshape(-1)
    p = torch.fft.rfftn(field).abs().pow(2).reshape(-1)
    b = (kmag / kmag.max() * (nbins - 1)).long()
    return torch.zeros(nbins, device="cuda").index_add_(0, b, p) / (
        torch.zeros(nbins, device="cuda").index_add_(0, b, torch.ones_like(p)) + 1)


class _Unet3d(_nn.Module):
    def __init__(self, w):
        super().__init__()

        def blk(a, b):
            return _nn.Sequential(_nn.Conv3d(a, b, 3, padding=1), _nn.GroupNorm(8, b), _nn.GELU(),
                                  _nn.Conv3d(b, b, 3, padding=1), _nn.GroupNorm(8, b), _nn.GELU())

        self.e1, self.e2, self.e3 = blk(1, w), blk(w, 2 * w), blk(2 * w, 4 * w)
        self.d2, self.d1 = blk(6 * w, 2 * w), blk(3 * w, w)
        self.out = _nn.Conv3d(w, 1, 1)

    def forward(self, x):
        f1 = self.e1(x)
        f2 = self.e2(_F.avg_pool3d(f1, 2))
        f3 = self.e3(_F.avg_pool3d(f2, 2))
        u2 = self.d2(torch.cat([_F.interpolate(f3, scale_factor=2, mode="trilinear"), f2], 1))
        u1 = self.d1(torch.cat([_F.interpolate(u2, scale_factor=2, mode="trilinear"), f1], 1))
        return self.out(u1) + x


@_workload("particle-mesh N-body simulation written in torch with a field-level emulator trained on it (random init): 10 simulations (meshes of 64^3 to 160^3 particles and cells, drawn, box 256-512 Mpc/h), Gaussian initial conditions of a tilted power law with a transfer cut-off, Zel'dovich displacement, 60-120 kick-drift-kick steps (drawn) each with a cloud-in-cell deposit by index_add over eight corners, an FFT Poisson solve and three spectral-gradient irfftn, CIC interpolation by gathers, fp32; the power spectrum of the linear and final fields binned by index_add and read back; then a 3D UNet (width 24, GroupNorm) trained for 780 steps under bf16 autocast on batches of 2-6 sub-volumes of 32^3 to 64^3 (drawn) cut from the simulations to map the linear field to the evolved one, AdamW; an evaluation over 4 crops of 64^3 read back every 195 steps")
def pm_nbody_emulator_train(rng):
    sims = []
    for s in range(_smoke(10, 2)):
        n = rng.choice(_smoke([64, 96, 128, 160], [8, 16]))
        box = rng.choice([256.0, 384.0, 512.0])
        with torch.no_grad():
            lin, fin = _pm_run(n, box, rng.randint(_smoke(60, 2), _smoke(120, 3)))
            nb = _smoke(32, 4)
            torch.stack([_power(lin, box, nb), _power(fin, box, nb)]).cpu()
        sims.append((lin / lin.std().clamp_min(1e-6), torch.log1p(fin.clamp_min(-0.99))))
        del lin, fin
    model = _Unet3d(_smoke(24, 8)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=1e-4)

    def crops(b, c):
        xs, ys = [], []
        for _ in range(b):
            lin, fin = rng.choice(sims)
            n = lin.shape[0]
            c_ = min(c, n)
            i, j, k = (rng.randrange(n - c_ + 1) for _ in range(3))
            xs.append(lin[i:i + c_, j:j + c_, k:k + c_])
            ys.append(fin[i:i + c_, j:j + c_, k:k + c_])
        c_ = min(x.shape[0] for x in xs)
        return (torch.stack([x[:c_, :c_, :c_] for x in xs])[:, None],
                torch.stack([y[:c_, :c_, :c_] for y in ys])[:, None])

    for step in range(_smoke(780, 3)):
        c = rng.choice(_smoke([32, 48, 64], [4, 8]))
        x, y = crops(rng.randint(2, 6), c)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(x)
        loss = _F.mse_loss(pred.float(), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del x, y, pred
        if (step + 1) % _smoke(195, 3) == 0:
            with torch.no_grad():
                errs = []
                for _ in range(4):
                    x, y = crops(1, _smoke(64, 8))
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        errs.append(_F.mse_loss(model(x).float(), y))
                torch.stack(errs).tolist()
            float(loss)

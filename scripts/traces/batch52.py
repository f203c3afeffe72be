"""The fifty-second batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch51_b.py are): climate, weather and earth-system science on the GPU, written in torch alone, first half. A
spherical Fourier neural operator forecast model in the style of SFNO / FourCastNet (Bonev et al. 2023: an FFT over
longitude, a projection of the latitudes onto an orthonormal basis, per-degree complex channel mixing, an MLP, over
a 1.5 degree lat-lon grid) trained with autoregressive rollouts whose length grows over training (one step, then
two, then three to six with every rollout step recomputed by activation checkpointing), a GraphCast-style
encode-process-decode GNN (Lam et al. 2023: grid to mesh, message passing on a multi-mesh with gathers and
index_add, mesh back to grid) trained one step ahead and then fine-tuned on rollouts of two to four steps, an
ensemble forecast service (a trained regional emulator rolled out for many perturbed members, members batched in
chunks, ensemble mean, spread and exceedance probabilities reduced on the fly, each request's analysis uploaded on a
side stream one request ahead), and cycled 4D-Var data assimilation through a differentiable emulator (windows of
drawn length, sparse observations gathered from the state, a control variable transformed by a spectral
background-error square root, Adam or a hand-written L-BFGS two-loop recursion on the control variable, each
analysis forecast to give the next cycle's background). Same conventions as the earlier batches: nothing
downloaded, data drawn at random on the device (smooth random fields evolved by a synthetic dynamics), `rng` the
workload's random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)` so that
RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: step counts, rollout lengths, region sizes and
iteration counts are fixed on the host, the L-BFGS recursion keeps its scalars on the device (no line search);
losses, skill scores and forecast products are read back only at logging points (the ensemble service returns each
request's products, as a service must). ens_emulator_forecast_serve uses a side stream (uploads waited on by event,
the tensors record_stream'ed); the others are single-stream. The networks run under bf16 autocast; the spherical
transforms, the 4D-Var cost function and the losses are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch52_b.py's header says the same of its half): every workload of this half
was run whole at its final real sizes (RECORD_SMOKE unset) on PyTorch's meta device with the helper's runner
(/tmp/b52/meta_run.py, not committed, a copy of /work/notes/meta_run.py: smoke_cpu.py's patching with "cuda" mapped
to "meta", readbacks answered with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking a math
path, streams, events and pinned memory no-ops; boolean-mask indexing, which the meta device cannot size, is
avoided), its op outputs counted there (events about 1.8x that count) and its peak live bytes tracked:
sfno_rollout_train 322,735 op outputs, peak 6.73 GB; graphcast_mesh_rollout_train 329,327, 4.19 GB;
ens_emulator_forecast_serve 325,681, 1.07 GB; fourdvar_emulator_assim 315,490, 0.61 GB (peaks in fp32 where autocast
would take bf16; sfno_rollout_train's is the one-step stage at batch 4). record_new52.sh's header has them too, with
the first runs that led to resizes. The CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch
from torch.utils.checkpoint import checkpoint

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _smooth_fields(b, c, h, w, coarse=8):
    """Smooth random fields (b, c, h, w): low-resolution noise upsampled bilinearly plus a little fine noise, the
    stand-in for reanalysis states."""
    lo = torch.randn(b, c, max(2, h // coarse), max(2, w // coarse), device="cuda")
    x = _F.interpolate(lo, size=(h, w), mode="bilinear", align_corners=False)
    return x + 0.1 * torch.randn(b, c, h, w, device="cuda")


def _truth_step(x, shift):
    """The synthetic dynamics the models learn: advection eastward by `shift` cells, damping and a little diffusion
    along latitude."""
    y = torch.roll(x, shifts=shift, dims=-1)
    return 0.97 * y + 0.015 * (torch.roll(y, 1, -2) + torch.roll(y, -1, -2))


def _lat_weights(h):
    lat = torch.linspace(-math.pi / 2, math.pi / 2, h, device="cuda")
    w = torch.cos(lat).clamp_min(1e-3)
    return (w / w.mean())[:, None]


# ---------------------------------------------------------------- SFNO with growing rollouts


class _SpecMix(_nn.Module):
    """SFNO-style spectral mixing over the sphere: an FFT over longitude (the first `modes` zonal wavenumbers
    kept), the latitudes projected onto an orthonormal basis of `modes` functions (a stand-in for the associated
    Legendre transform with quadrature), complex channel mixing per degree, and back. fp32."""

    def __init__(self, e, nlat, modes):
        super().__init__()
        self.modes = modes
        lat = torch.linspace(0, math.pi, nlat)
        basis = torch.stack([torch.cos(l * lat) * torch.sin(lat).clamp_min(0.05).sqrt() for l in range(modes)], 1)
        q, _ = torch.linalg.qr(basis)
        self.register_buffer("q", q.contiguous())
        self.w = _nn.Parameter(torch.randn(modes, e, e, 2) / e)

    def forward(self, x):
        b, e, h, w = x.shape
        spec = torch.view_as_real(torch.fft.rfft(x.float(), dim=-1, norm="ortho")[..., :self.modes])
        coef = torch.einsum("behmc,hl->belmc", spec, self.q)
        coef = torch.einsum("belm,lef->bflm", torch.view_as_complex(coef.contiguous()), torch.view_as_complex(self.w))
        spec = torch.einsum("bflmc,hl->bfhmc", torch.view_as_real(coef), self.q)
        return torch.fft.irfft(torch.view_as_complex(spec.contiguous()), n=w, dim=-1, norm="ortho")


class _SfnoBlock(_nn.Module):
    def __init__(self, e, nlat, modes):
        super().__init__()
        self.n1, self.n2 = _nn.InstanceNorm2d(e, affine=True), _nn.InstanceNorm2d(e, affine=True)
        self.spec = _SpecMix(e, nlat, modes)
        self.skip = _nn.Conv2d(e, e, 1)
        self.fc1, self.fc2 = _nn.Conv2d(e, 2 * e, 1), _nn.Conv2d(2 * e, e, 1)

    def forward(self, x):
        h = self.n1(x)
        with torch.autocast("cuda", enabled=False):
            s = self.spec(h.float())
        x = x + s.to(x.dtype) + self.skip(h)
        return x + self.fc2(_F.gelu(self.fc1(self.n2(x))))


class _Sfno(_nn.Module):
    def __init__(self, cvar, cstat, e, blocks, nlat, modes):
        super().__init__()
        self.enc = _nn.Conv2d(cvar + cstat, e, 1)
        self.blocks = _nn.ModuleList([_SfnoBlock(e, nlat, modes) for _ in range(blocks)])
        self.dec = _nn.Conv2d(e, cvar, 1)

    def forward(self, x, stat):
        h = self.enc(torch.cat([x, stat], 1))
        for blk in self.blocks:
            h = blk(h)
        return x + self.dec(h).float()


@_workload("SFNO / FourCastNet-style global forecast model written by hand (random init; Bonev et al. 2023): 26 prognostic variables (5 upper-air at 4 levels plus 6 surface) and 3 static fields on a 1.5 degree lat-lon grid (120 x 240), embedding 192, 8 blocks of spectral mixing (an FFT over longitude keeping 60 zonal modes, latitudes projected onto 60 orthonormal functions, complex channel mixing per degree, fp32) plus a 1x1 skip and an MLP, instance norms; synthetic smooth states evolved by an advection-damping dynamics; 105 steps of autoregressive training under bf16 autocast with the rollout length growing (1 step at batch 4, 2 steps at batch 2, then 3, 4 and 6 steps at batch 1 with every rollout step under activation checkpointing), a latitude-weighted multi-step MSE, AdamW with cosine decay and clipping; every 21 steps a 12-step evaluation rollout without grad, latitude-weighted RMSE per variable at three leads read back")
def sfno_rollout_train(rng):
    cvar, cstat = 26, 3
    h, w = _smoke(120, 16), _smoke(240, 32)
    e, blocks, modes = _smoke(192, 16), _smoke(8, 2), _smoke(60, 6)
    model = _Sfno(cvar, cstat, e, blocks, h, modes).cuda()
    stat = _smooth_fields(1, cstat, h, w)
    latw = _lat_weights(h)
    steps = _smoke(105, 6)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    stages = [(1, 4), (2, 2), (3, 1), (4, 1), (6, 1)]
    for step in range(steps):
        roll, bsz = stages[min(len(stages) - 1, step * len(stages) // steps)]
        bsz = _smoke(bsz, 1)
        shift = rng.choice([1, 2, 3])
        x = _smooth_fields(bsz, cvar, h, w)
        model.train()
        loss = 0.0
        cur = x
        for r in range(roll):
            tgt = _truth_step(cur if r == 0 else tgt, shift)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                if roll >= 3:
                    cur = checkpoint(model, cur, stat.expand(bsz, -1, -1, -1), use_reentrant=False,
                                     preserve_rng_state=False)
                else:
                    cur = model(cur, stat.expand(bsz, -1, -1, -1))
            loss = loss + ((cur - tgt) ** 2 * latw).mean() / roll
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        del x, cur, tgt, loss
        if (step + 1) % _smoke(21, 3) == 0:
            model.eval()
            out = []
            with torch.no_grad():
                cur = _smooth_fields(1, cvar, h, w)
                tgt = cur
                for r in range(_smoke(12, 2)):
                    tgt = _truth_step(tgt, 2)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        cur = model(cur, stat)
                    if r in (0, 3, _smoke(11, 1)):
                        out.append((((cur - tgt) ** 2 * latw).mean((0, 2, 3))).sqrt())
                torch.stack(out).cpu()
            del out, cur, tgt


# ---------------------------------------------------------------- GraphCast-style encode-process-decode


class _Mlp(_nn.Module):
    def __init__(self, din, d, norm=True):
        super().__init__()
        self.l1, self.l2 = _nn.Linear(din, d), _nn.Linear(d, d)
        self.norm = _nn.LayerNorm(d) if norm else _nn.Identity()

    def forward(self, x):
        return self.norm(self.l2(_F.silu(self.l1(x))))


class _Interaction(_nn.Module):
    """An interaction-network layer: edge update from (edge, source, destination), sum of messages into each
    destination by index_add, node update, residuals."""

    def __init__(self, d):
        super().__init__()
        self.edge, self.node = _Mlp(3 * d, d), _Mlp(2 * d, d)

    def forward(self, hs, hd, e, src, dst):
        e = e + self.edge(torch.cat([e, hs[src], hd[dst]], -1))
        agg = torch.zeros(hd.shape[0], e.shape[1], device=e.device, dtype=e.dtype).index_add(0, dst, e)
        return hd + self.node(torch.cat([hd, agg], -1)), e


class _GraphCast(_nn.Module):
    def __init__(self, cin, cout, d, layers):
        super().__init__()
        self.grid_emb, self.mesh_emb = _Mlp(cin, d), _Mlp(3, d)
        self.g2m_emb, self.mesh_edge_emb, self.m2g_emb = _Mlp(4, d), _Mlp(4, d), _Mlp(4, d)
        self.g2m = _Interaction(d)
        self.grid_up = _Mlp(d, d)
        self.proc = _nn.ModuleList([_Interaction(d) for _ in range(layers)])
        self.m2g = _Interaction(d)
        self.out = _Mlp(d, cout, norm=False)

    def forward(self, feats, g):
        hg = self.grid_emb(feats)
        hm = self.mesh_emb(g["mesh_pos"])
        hm, _ = self.g2m(hg, hm, self.g2m_emb(g["g2m_f"]), g["g2m_src"], g["g2m_dst"])
        hg = hg + self.grid_up(hg)
        e = self.mesh_edge_emb(g["mesh_f"])
        for layer in self.proc:
            hm, e = layer(hm, hm, e, g["mesh_src"], g["mesh_dst"])
        hg, _ = self.m2g(hm, hg, self.m2g_emb(g["m2g_f"]), g["m2g_src"], g["m2g_dst"])
        return self.out(hg)


def _graphs(ng, nm, deg, g2m_k, m2g_k):
    """A stand-in multi-mesh and the grid-mesh bipartite graphs, built on the device: each mesh node receives from
    `deg` neighbours at drawn offsets (several refinement levels), each grid node sends to its `g2m_k` nearest mesh
    nodes and receives from `m2g_k`; edge features are displacement-like random vectors."""
    mdst = torch.arange(nm, device="cuda").repeat_interleave(deg)
    msrc = (mdst + torch.randint(1, nm, (nm * deg,), device="cuda")) % nm
    base = torch.arange(ng, device="cuda") * nm // ng
    g2m_dst = ((base[:, None] + torch.arange(g2m_k, device="cuda")) % nm).reshape(-1)
    m2g_src = ((base[:, None] + torch.arange(m2g_k, device="cuda") - 1) % nm).reshape(-1)
    return {
        "mesh_pos": torch.randn(nm, 3, device="cuda"),
        "mesh_src": msrc, "mesh_dst": mdst, "mesh_f": torch.randn(nm * deg, 4, device="cuda"),
        "g2m_src": torch.arange(ng, device="cuda").repeat_interleave(g2m_k), "g2m_dst": g2m_dst,
        "g2m_f": torch.randn(ng * g2m_k, 4, device="cuda"),
        "m2g_src": m2g_src, "m2g_dst": torch.arange(ng, device="cuda").repeat_interleave(m2g_k),
        "m2g_f": torch.randn(ng * m2g_k, 4, device="cuda"),
    }


@_workload("GraphCast-style encode-process-decode forecast GNN written by hand (random init; Lam et al. 2023): 41 variables (6 upper-air at 6 levels plus 5 surface) at two input times plus 4 static fields on a 1.5 degree grid (28,800 nodes), encoded onto a stand-in level-4 multi-mesh (2,562 nodes, 12 incoming edges each, 30,744 edges) through 2 grid-to-mesh edges per grid node, 8 interaction-network processor layers of width 256 (edge MLP over edge, source and destination gathered, messages summed by index_add, node MLP, LayerNorm, residuals), decoded back through 3 mesh-to-grid edges per grid node; synthetic smooth states with an advection-damping dynamics; 150 steps of one-step training then 40 of rollout fine-tuning over 2-4 steps (drawn) with every rollout step under activation checkpointing, bf16 autocast, latitude-weighted MSE summed over the rollout, Adam with cosine decay and clipping; every 38 steps an 8-step evaluation rollout without grad, RMSE per variable read back")
def graphcast_mesh_rollout_train(rng):
    cvar, cstat = 41, 4
    h, w = _smoke(120, 8), _smoke(240, 16)
    ng, nm = h * w, _smoke(2562, 42)
    d, layers = _smoke(256, 16), _smoke(8, 2)
    g = _graphs(ng, nm, _smoke(12, 4), 2, 3)
    model = _GraphCast(2 * cvar + cstat, cvar, d, layers).cuda()
    stat = torch.randn(ng, cstat, device="cuda")
    latw = _lat_weights(h).expand(h, w).reshape(ng, 1)
    one_step, fine = _smoke(150, 3), _smoke(40, 3)
    steps = one_step + fine
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))

    def flat(x):  # (1, c, h, w) -> (ng, c)
        return x[0].permute(1, 2, 0).reshape(ng, -1)

    def step_fn(prev, cur):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            delta = model(torch.cat([prev, cur, stat], 1), g)
        return cur + delta.float()

    for step in range(steps):
        roll = 1 if step < one_step else rng.choice([2, 3, 4])
        shift = rng.choice([1, 2])
        x = _smooth_fields(1, cvar, h, w)
        states = [x, _truth_step(x, shift)]
        for _ in range(roll):
            states.append(_truth_step(states[-1], shift))
        model.train()
        prev, cur = flat(states[0]), flat(states[1])
        loss = 0.0
        for r in range(roll):
            if roll > 1:
                nxt = checkpoint(step_fn, prev, cur, use_reentrant=False, preserve_rng_state=False)
            else:
                nxt = step_fn(prev, cur)
            loss = loss + ((nxt - flat(states[r + 2])) ** 2 * latw).mean() / roll
            prev, cur = cur, nxt
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        del x, states, prev, cur, nxt, loss
        if (step + 1) % _smoke(38, 3) == 0:
            model.eval()
            out = []
            with torch.no_grad():
                x = _smooth_fields(1, cvar, h, w)
                tx = _truth_step(x, 1)
                prev, cur = flat(x), flat(tx)
                for r in range(_smoke(8, 2)):
                    tx = _truth_step(tx, 1)
                    prev, cur = cur, step_fn(prev, cur)
                    out.append(((cur - flat(tx)) ** 2 * latw).mean(0).sqrt())
                torch.stack(out).cpu()
            del out, x, tx, prev, cur


# ---------------------------------------------------------------- ensemble forecast service


class _ResEmu(_nn.Module):
    """A regional emulator: a 3x3 convolution in, residual blocks (conv, GELU, conv, GroupNorm), a 3x3 out, the
    output added to the input state."""

    def __init__(self, cvar, cstat, e, blocks):
        super().__init__()
        self.inp = _nn.Conv2d(cvar + cstat, e, 3, padding=1)
        self.blocks = _nn.ModuleList([
            _nn.Sequential(_nn.Conv2d(e, e, 3, padding=1), _nn.GELU(), _nn.Conv2d(e, e, 3, padding=1),
                           _nn.GroupNorm(8, e)) for _ in range(blocks)])
        self.out = _nn.Conv2d(e, cvar, 3, padding=1)

    def forward(self, x, stat):
        h = self.inp(torch.cat([x, stat], 1))
        for blk in self.blocks:
            h = h + blk(h)
        return x + self.out(h).float()


@_workload("ensemble forecast service over a trained regional emulator written by hand (random init, briefly trained first: 60 steps of one-step training on 96 x 192 crops, Adam): 24 variables plus 2 static fields, a 3x3 convolution to 64 channels, 6 residual blocks, a residual output; 220 requests, each a region of 64 x 128 to 160 x 320 cells (drawn), a lead of 4-28 six-hour steps and 8-48 perturbed members (drawn), the request's analysis (24 x region, fp32) uploaded from reused pinned host buffers on a side stream one request ahead (waited on by event, record_stream'ed); members made as the analysis plus smooth perturbations, rolled out under bf16 autocast without grad in chunks cut to 512k grid cells, the ensemble sum and sum of squares and the exceedance counts of two thresholds for 4 output variables accumulated on the fly at every other lead; ensemble mean, spread and probabilities of the output variables read back per request")
def ens_emulator_forecast_serve(rng):
    cvar, cstat, e = 24, 2, _smoke(64, 8)
    model = _ResEmu(cvar, cstat, e, _smoke(6, 1)).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    th, tw = _smoke(96, 16), _smoke(192, 32)
    for step in range(_smoke(60, 2)):
        x = _smooth_fields(8 if step % 2 else 4, cvar, th, tw)
        stat = _smooth_fields(x.shape[0], cstat, th, tw)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(x, stat)
        loss = _F.mse_loss(pred, _truth_step(x, 1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del x, stat, pred, loss
    del opt
    model.eval()

    regions = _smoke([(64, 128), (96, 192), (128, 256), (160, 320)], [(16, 32), (24, 48)])
    hmax = max(r[0] for r in regions)
    wmax = max(r[1] for r in regions)
    cap = cvar * hmax * wmax
    host = [torch.randn(cap).pin_memory() for _ in range(2)]
    host_stat = torch.randn(cstat, hmax, wmax)
    gstat = host_stat.to("cuda")
    side = torch.cuda.Stream()
    done = [None, None]
    budget = _smoke(2 ** 19, 4096)
    outv = [0, 5, 12, 23]
    thresh = torch.tensor([1.0, 2.0], device="cuda")[:, None, None, None]

    def fetch(i):
        hh, ww = rng.choice(regions)
        s = i % 2
        if done[s] is not None:
            done[s].synchronize()
        with torch.cuda.stream(side):
            a = host[s][:cvar * hh * ww].view(cvar, hh, ww).to("cuda", non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        done[s] = ev
        return a, ev

    nxt = fetch(0)
    for req in range(_smoke(220, 3)):
        ana, ev = nxt
        cur_s = torch.cuda.current_stream()
        cur_s.wait_event(ev)
        ana.record_stream(cur_s)
        nxt = fetch(req + 1)
        _, hh, ww = ana.shape
        lead = rng.randint(_smoke(4, 1), _smoke(28, 3))
        members = rng.choice(_smoke([8, 16, 24, 32, 48], [2, 3]))
        chunk = max(1, min(members, budget // (hh * ww)))
        nout = (lead + 1) // 2
        s1 = torch.zeros(nout, len(outv), hh, ww, device="cuda")
        s2 = torch.zeros_like(s1)
        exc = torch.zeros(nout, 2, hh, ww, device="cuda")
        st = gstat[:, :hh, :ww][None]
        with torch.no_grad():
            for m0 in range(0, members, chunk):
                mb = min(chunk, members - m0)
                x = ana[None] + 0.3 * _smooth_fields(mb, cvar, hh, ww, coarse=16)
                for t in range(lead):
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        x = model(x, st.expand(mb, -1, -1, -1))
                    if t % 2 == 0:
                        v = x[:, outv]
                        s1[t // 2] += v.sum(0)
                        s2[t // 2] += (v * v).sum(0)
                        exc[t // 2] += (v[:, 0][None] > thresh).float().sum(1)
                        del v
                del x
            mean = s1 / members
            spread = (s2 / members - mean * mean).clamp_min(0).sqrt()
            prob = exc / members
            torch.cat([mean, spread, prob], 1).to(torch.bfloat16).cpu()
        del ana, s1, s2, exc, mean, spread, prob, st


# ---------------------------------------------------------------- 4D-Var through a differentiable emulator


class _ConvEmu(_nn.Module):
    def __init__(self, c, e, layers):
        super().__init__()
        mods = [_nn.Conv2d(c, e, 3, padding=1, padding_mode="circular"), _nn.GELU()]
        for _ in range(layers - 2):
            mods += [_nn.Conv2d(e, e, 3, padding=1, padding_mode="circular"), _nn.GELU()]
        mods.append(_nn.Conv2d(e, c, 3, padding=1, padding_mode="circular"))
        self.net = _nn.Sequential(*mods)

    def forward(self, x):
        return x + self.net(x)


def _lbfgs_direction(g, hist):
    """The L-BFGS two-loop recursion on one tensor, every scalar kept on the device."""
    q = g
    alphas = []
    for s, y, rho in reversed(hist):
        a = rho * (s * q).sum()
        alphas.append(a)
        q = q - a * y
    if hist:
        s, y, _ = hist[-1]
        q = q * ((s * y).sum() / (y * y).sum().clamp_min(1e-12))
    else:
        q = q * 0.05
    for (s, y, rho), a in zip(hist, reversed(alphas)):
        q = q + s * (a - rho * (y * q).sum())
    return -q


@_workload("cycled 4D-Var data assimilation through a differentiable emulator written by hand (random init, briefly trained first: 80 steps, Adam): a 16-variable state on a 96 x 192 periodic grid, a convolutional emulator (circular padding, width 96, 5 layers) frozen; 20 assimilation cycles, each a window of 2-8 steps (drawn) with 4k-32k observations per step (drawn) of a synthetic truth run, the observation operator a gather at flat indices of the state; the control variable mapped through a spectral background-error square root (rfft2, a wavenumber-decaying amplitude, irfft2), the cost the background term plus the observation misfits along the window; 12-30 iterations (drawn) of Adam or of a hand-written L-BFGS two-loop recursion with memory 6 and unit steps (drawn per cycle), every scalar on the device; each analysis forecast one window ahead without grad to the next cycle's start, that forecast the next cycle's background, cost and analysis and forecast RMSE read back per cycle")
def fourdvar_emulator_assim(rng):
    c, h, w = 16, _smoke(96, 16), _smoke(192, 32)
    emu = _ConvEmu(c, _smoke(96, 8), _smoke(5, 3)).cuda()
    opt = torch.optim.Adam(emu.parameters(), lr=1e-3)
    for step in range(_smoke(80, 2)):
        x = _smooth_fields(8, c, h, w)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = emu(x)
        loss = _F.mse_loss(pred.float(), _truth_step(x, 1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del x, pred, loss
    del opt
    emu.eval()
    emu.requires_grad_(False)

    ky = torch.arange(h, device="cuda")
    ky = (torch.where(ky < (h + 1) // 2, ky, ky - h).float() / h)[:, None]  # fftfreq
    kx = (torch.arange(w // 2 + 1, device="cuda").float() / w)[None, :]  # rfftfreq
    amp = (1.0 / (1.0 + (ky ** 2 + kx ** 2) * 400.0)).expand(c, -1, -1).contiguous()
    sigma_b, sigma_o = 0.5, 0.2

    def bsqrt(v):
        return torch.fft.irfft2(torch.fft.rfft2(v) * amp, s=(h, w)) * sigma_b

    def model_step(x):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return emu(x[None])[0].float()

    with torch.no_grad():
        truth = _smooth_fields(1, c, h, w)[0]
        xb = truth + bsqrt(torch.randn(c, h, w, device="cuda"))
    for cycle in range(_smoke(20, 2)):
        win = rng.choice(_smoke([2, 4, 6, 8], [2]))
        nobs = rng.choice(_smoke([4096, 8192, 16384, 32768], [64]))
        idx, obs = [], []
        with torch.no_grad():
            tx = truth
            for k in range(win):
                tx = model_step(tx) if k else tx
                ik = torch.randint(0, c * h * w, (nobs,), device="cuda")
                idx.append(ik)
                obs.append(tx.reshape(-1)[ik] + sigma_o * torch.randn(nobs, device="cuda"))
            truth_end = model_step(tx)
        v = torch.zeros(c, h, w, device="cuda", requires_grad=True)
        iters = rng.randint(_smoke(12, 2), _smoke(30, 3))
        use_lbfgs = rng.random() < 0.5
        adam = None if use_lbfgs else torch.optim.Adam([v], lr=0.05)
        hist, prev = [], None

        def cost(v):
            x = xb + bsqrt(v)
            j = 0.5 * (v * v).sum()
            for k in range(win):
                if k:
                    x = model_step(x)
                j = j + 0.5 * (((x.reshape(-1)[idx[k]] - obs[k]) / sigma_o) ** 2).sum()
            return j

        for it in range(iters):
            j = cost(v)
            g, = torch.autograd.grad(j, v)
            if adam is not None:
                v.grad = g
                adam.step()
                v.grad = None
            else:
                with torch.no_grad():
                    if prev is not None:
                        s, y = v.detach() - prev[0], g - prev[1]
                        hist.append((s, y, 1.0 / (s * y).sum().clamp_min(1e-10)))
                        hist = hist[-6:]
                    prev = (v.detach().clone(), g)
                    v += _lbfgs_direction(g, hist)
            del j, g
        with torch.no_grad():
            xa = xb + bsqrt(v)
            err_a = ((xa - truth) ** 2).mean().sqrt()
            xf = xa
            for k in range(win):
                xf = model_step(xf)
            torch.stack([cost(v.detach()), err_a, ((xf - truth_end) ** 2).mean().sqrt()]).cpu()
            xb, truth = xf, truth_end
        del v, adam, hist, prev, idx, obs, xa, xf, tx

"""The sixty-fifth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch63_b.py are): engineering simulation and design on the GPU, written in torch alone, first half. SIMP topology
optimisation of 2D cantilever and bridge structures (a matrix-free bilinear-quadrilateral FEM operator applied by
gathering element corner displacements, a fixed number of Jacobi-preconditioned conjugate-gradient iterations per
solve warm-started from the last, several load cases in turn, a density filter by convolution and the
optimality-criteria update with its Lagrange-multiplier bisection at a fixed iteration count), airfoil shape
optimisation through a learned surrogate (CST-parameterised airfoils sampled as point clouds at drawn resolutions, a
PointNet-style surrogate of lift, drag and moment trained on a thin-airfoil-plus-drag-polar reference, then
gradient-based design of a batch of airfoils by Adam on the CST weights with thickness and moment penalties), a
lattice-Boltzmann D2Q9 channel flow past drawn cylinders at several resolutions and Reynolds numbers (BGK collision,
streaming by roll, bounce-back walls, an equilibrium inlet, drag by momentum exchange), and a design-of-experiments
service answering batched surrogate queries (a multi-output MLP surrogate trained first; then requests of drawn size
and kind, plain predictions, sensitivities by autograd and Saltelli Sobol-index batches, their design parameters
uploaded from reused pinned host buffers on a side stream one request ahead). Same conventions as the earlier
batches: nothing downloaded, data drawn at random on the device (or, for the query service, from a few reused pinned
host buffers), `rng` the workload's random.Random for every shape, count and sampled choice, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: iteration
counts are fixed on the host (CG iterations, bisection steps, LBM steps, design iterations), masks are multiplied or
selected with torch.where, no boolean-mask indexing; compliances, drags and metrics are read back only at logging
points. doe_surrogate_query_serve uses a side stream (uploads waited on by event, the tensors record_stream'ed); the
others are single-stream. The airfoil surrogate and the query service's predictions run under bf16 autocast; the FEM
solves, the lattice-Boltzmann arithmetic, the design updates and the losses are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch65_b.py's header says the same of its half): see record_new65.sh's header
for each workload's op outputs and peak live bytes counted on PyTorch's meta device at its final real sizes
(RECORD_SMOKE unset) with the helper's runner (now scripts/traces/meta_run.py:
smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered with dummies, autocast a no-op so that fp32
sizes are counted, SDPA taking a math path, streams, events and pinned memory no-ops; boolean-mask indexing, which
the meta device cannot size, is avoided), its op outputs counted there (events about 1.8x that count) and its peak
live bytes tracked: simp_topopt_cg_multiload 293,833 op outputs, 0.01 GB; airfoil_cst_surrogate_design
295,297, 2.89 GB; lbm_cylinder_multires 304,919, 0.16 GB; doe_surrogate_query_serve 309,522, 0.09 GB. The CPU
smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import SideUploads, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- SIMP topology optimisation, matrix-free FEM


def _q4_stiffness(nu, dev="cuda"):
    """The 8x8 plane-stress stiffness of a unit bilinear square element (E = 1), dofs ordered corner by corner
    counter-clockwise from the lower left, (ux, uy) at each."""
    k = [0.5 - nu / 6, 0.125 + nu / 8, -0.25 - nu / 12, -0.125 + 3 * nu / 8, -0.25 + nu / 12, -0.125 - nu / 8,
         nu / 6, 0.125 - 3 * nu / 8]
    i = [[0, 1, 2, 3, 4, 5, 6, 7], [1, 0, 7, 6, 5, 4, 3, 2], [2, 7, 0, 5, 6, 3, 4, 1], [3, 6, 5, 0, 7, 2, 1, 4],
         [4, 5, 6, 7, 0, 1, 2, 3], [5, 4, 3, 2, 1, 0, 7, 6], [6, 3, 4, 1, 2, 7, 0, 5], [7, 2, 1, 4, 3, 6, 5, 0]]
    ke = torch.tensor([[k[j] for j in row] for row in i], device=dev)
    return ke / (1 - nu * nu)


def _corners(u):
    """u (2, ny+1, nx+1) nodal displacements -> (8, ny, nx) element dof values, corners LL, LR, UR, UL."""
    ll, lr, ur, ul = u[:, 1:, :-1], u[:, 1:, 1:], u[:, :-1, 1:], u[:, :-1, :-1]
    return torch.cat([ll, lr, ur, ul], 0)


def _scatter_corners(fe, ny, nx):
    """(8, ny, nx) element forces summed back onto the (2, ny+1, nx+1) nodes."""
    out = torch.zeros(2, ny + 1, nx + 1, device=fe.device, dtype=fe.dtype)
    out[:, 1:, :-1] += fe[0:2]
    out[:, 1:, 1:] += fe[2:4]
    out[:, :-1, 1:] += fe[4:6]
    out[:, :-1, :-1] += fe[6:8]
    return out


def _apply_k(u, stiff, ke, free):
    ny, nx = stiff.shape
    ue = _corners(u)
    fe = torch.einsum("ij,jyx->iyx", ke, ue) * stiff
    return _scatter_corners(fe, ny, nx) * free


@_workload("SIMP topology optimisation of 2D structures written by hand in torch (no learning): 3 problems in turn (cantilever, MBB half-beam or bridge, drawn) on grids of 120x60 to 320x160 elements (drawn), a matrix-free bilinear-quadrilateral plane-stress FEM operator (element corner displacements gathered, an 8x8 element stiffness by einsum, scattered back by slice-adds), 2-3 load cases per problem (drawn) each solved by 40 Jacobi-preconditioned conjugate-gradient iterations warm-started from its last solution, compliance sensitivities, a cone density filter by conv2d, the optimality-criteria update with a 24-step Lagrange-multiplier bisection (fixed count, torch.where), penalisation 3 with continuation, 36-44 design iterations a problem (drawn), fp32; compliance and volume read back every 10 iterations")
def simp_topopt_cg_multiload(rng):
    ke = _q4_stiffness(0.3)
    emin, penal_final, volfrac = 1e-3, 3.0, 0.4
    cg_iters, bis_iters = _smoke(40, 3), _smoke(24, 3)
    for _ in range(_smoke(3, 1)):
        kind = rng.choice(["cantilever", "mbb", "bridge"])
        nx = rng.choice(_smoke([120, 160, 200, 240, 320], [12, 16]))
        ny = nx // 2 if kind != "bridge" else nx // 3
        rmin = rng.choice([1.5, 2.0, 3.0])
        r = int(math.ceil(rmin))
        ax = torch.arange(-r, r + 1, device="cuda", dtype=torch.float32)
        cone = (rmin - torch.sqrt(ax[:, None] ** 2 + ax[None] ** 2)).clamp_min(0)[None, None]
        hs = _F.conv2d(torch.ones(1, 1, ny, nx, device="cuda"), cone, padding=r)[0, 0]
        free = torch.ones(2, ny + 1, nx + 1, device="cuda")
        if kind == "cantilever":
            free[:, :, 0] = 0
        elif kind == "mbb":
            free[0, :, 0] = 0
            free[1, -1, -1] = 0
        else:
            free[:, -1, :2] = 0
            free[:, -1, -2:] = 0
        nload = rng.randint(2, 3)
        loads = []
        for _ in range(nload):
            f = torch.zeros(2, ny + 1, nx + 1, device="cuda")
            if kind == "cantilever":
                f[1, rng.randint(0, ny), nx] = -1.0
            elif kind == "mbb":
                f[1, 0, rng.randint(0, nx // 3)] = -1.0
            else:
                f[1, 0, rng.randint(nx // 4, 3 * nx // 4)] = -1.0
            loads.append(f * free)
        sols = [torch.zeros(2, ny + 1, nx + 1, device="cuda") for _ in range(nload)]
        x = torch.full((ny, nx), volfrac, device="cuda")
        iters = rng.randint(_smoke(36, 2), _smoke(44, 3))
        for it in range(iters):
            penal = min(penal_final, 1.0 + 0.1 * it)
            xphys = _F.conv2d(x[None, None], cone, padding=r)[0, 0] / hs
            stiff = emin + xphys ** penal * (1 - emin)
            # Jacobi preconditioner: the diagonal of K, assembled from the element diagonal
            diag = _scatter_corners(torch.diagonal(ke)[:, None, None] * stiff, ny, nx)
            minv = free / diag.clamp_min(1e-9)
            dc = torch.zeros_like(x)
            comp = torch.zeros((), device="cuda")
            for li in range(nload):
                f = loads[li]
                u = sols[li]
                rres = f - _apply_k(u, stiff, ke, free)
                z = minv * rres
                p = z
                rz = (rres * z).sum()
                for _ in range(cg_iters):
                    ap = _apply_k(p, stiff, ke, free)
                    alpha = rz / (p * ap).sum().clamp_min(1e-30)
                    u = u + alpha * p
                    rres = rres - alpha * ap
                    z = minv * rres
                    rz_new = (rres * z).sum()
                    p = z + (rz_new / rz.clamp_min(1e-30)) * p
                    rz = rz_new
                sols[li] = u
                ue = _corners(u)
                ce = (ue * torch.einsum("ij,jyx->iyx", ke, ue)).sum(0)
                comp = comp + (stiff * ce).sum()
                dc = dc - penal * xphys ** (penal - 1) * (1 - emin) * ce
                del rres, z, p, rz, ue, ce
            dc = _F.conv2d((dc / hs)[None, None], cone, padding=r)[0, 0]
            dv = _F.conv2d((torch.ones_like(x) / hs)[None, None], cone, padding=r)[0, 0]
            # optimality criteria with a bisection on the volume multiplier, a fixed number of halvings
            l1 = torch.zeros((), device="cuda")
            l2 = torch.full((), 1e9, device="cuda")
            move = 0.2
            xnew = x
            for _ in range(bis_iters):
                lmid = 0.5 * (l1 + l2)
                be = (-dc / (dv * lmid)).clamp_min(0).sqrt()
                xnew = torch.maximum(torch.maximum(x - move, torch.zeros_like(x)),
                                     torch.minimum(torch.minimum(x + move, torch.ones_like(x)), x * be))
                vol = _F.conv2d(xnew[None, None], cone, padding=r)[0, 0].div(hs).mean()
                over = vol > volfrac
                l1 = torch.where(over, lmid, l1)
                l2 = torch.where(over, l2, lmid)
            x = xnew
            del xphys, stiff, diag, minv, dc, dv, l1, l2
            if (it + 1) % 10 == 0:
                torch.stack([comp, x.mean()]).tolist()
        del x, sols, loads, free, hs, cone


# ---------------------------------------------------------------- airfoil shape optimisation through a surrogate


def _bernstein(n, x):
    k = torch.arange(n + 1, device=x.device, dtype=x.dtype)
    logc = torch.lgamma(torch.tensor(n + 1.0, device=x.device)) - torch.lgamma(k + 1) - torch.lgamma(n - k + 1)
    xc = x[..., None].clamp(1e-6, 1 - 1e-6)
    return torch.exp(logc) * xc ** k * (1 - xc) ** (n - k)  # (..., n+1)


def _cst_airfoil(wu, wl, npts):
    """CST airfoils: wu, wl (B, n+1) -> upper and lower surfaces at cosine-spaced x, points (B, 2 npts, 2), the
    camber and thickness lines (B, npts)."""
    n = wu.shape[1] - 1
    beta = torch.linspace(0, math.pi, npts, device=wu.device)
    x = 0.5 * (1 - torch.cos(beta))
    cls = x.sqrt() * (1 - x)
    bern = _bernstein(n, x)  # (npts, n+1)
    yu = cls * (wu @ bern.t())
    yl = cls * (wl @ bern.t())
    xb = x.expand_as(yu)
    pts = torch.cat([torch.stack([xb, yu], -1), torch.stack([xb, yl], -1)], 1)
    return pts, 0.5 * (yu + yl), yu - yl, x


def _polar_reference(camber, thick, x, alpha, mach):
    """A thin-airfoil lift with a camber integral, a quadratic drag polar with thickness and compressibility terms,
    a quarter-chord moment: (B, 3)."""
    dx = x[1:] - x[:-1]
    slope = (camber[:, 1:] - camber[:, :-1]) / dx
    xm = 0.5 * (x[1:] + x[:-1])
    theta = torch.acos((1 - 2 * xm).clamp(-1, 1))
    a0 = -(slope * (1 - torch.cos(theta)) * dx * math.pi / 2).sum(1) * 2 / math.pi
    beta = (1 - mach ** 2).clamp_min(0.1).sqrt()
    cl = 2 * math.pi * (alpha - a0) / beta
    tmax = thick.amax(1)
    cd = 0.006 + 0.01 * tmax + 2.0 * tmax ** 2 + 0.012 * cl ** 2 + 0.05 * _F.relu(mach - 0.7) ** 2
    cm = -(slope * (torch.cos(2 * theta) - torch.cos(theta)) * dx).sum(1) * 0.5
    return torch.stack([cl, cd * 100, cm * 10], -1)


class _AirfoilNet(_nn.Module):
    """PointNet-style surrogate: shared per-point MLP over (x, y, side, Fourier features), max and mean pooling,
    the flow conditions concatenated, a head to (CL, 100 CD, 10 CM)."""

    def __init__(self, width):
        super().__init__()
        self.freqs = 2.0 ** torch.arange(6).float() * math.pi
        self.point = mlp(3 + 24, width, 2 * width, layers=3, act=_nn.GELU)
        self.head = mlp(4 * width + 2, 2 * width, 3, layers=3, act=_nn.GELU)

    def forward(self, pts, side, alpha, mach):
        f = pts[..., None] * self.freqs.to(pts.device)
        feat = torch.cat([pts, side, torch.sin(f).flatten(-2), torch.cos(f).flatten(-2)], -1)
        h = self.point(feat)
        g = torch.cat([h.amax(1), h.mean(1), alpha[:, None], mach[:, None]], -1)
        return self.head(g)


@_workload("airfoil shape optimisation through a learned surrogate (random init): CST-parameterised airfoils (Bernstein order 7, upper and lower weights drawn around a NACA-like baseline) sampled as point clouds of 96-256 cosine-spaced points a surface (drawn per batch) at drawn angles of attack and Mach numbers, batches of 256-1,024 (drawn); a PointNet-style surrogate (Fourier point features, a 3-layer shared point MLP of width 128, max and mean pooling, a 3-layer head) trained on a thin-airfoil lift, drag-polar and moment reference, bf16 autocast, AdamW with cosine decay, 1,000 steps, a validation batch every 80; then 4 design campaigns (48-128 airfoils each, drawn) of 140-180 Adam iterations (drawn) on the CST weights maximising lift over drag with thickness and moment penalties through the surrogate, the reference polar of the designs read back every 25 iterations")
def airfoil_cst_surrogate_design(rng):
    width = _smoke(128, 16)
    model = _AirfoilNet(width).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    steps = _smoke(1000, 3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    order = 7
    base_u = torch.tensor([0.17, 0.16, 0.15, 0.14, 0.13, 0.12, 0.11, 0.10], device="cuda")
    base_l = -torch.tensor([0.14, 0.12, 0.10, 0.09, 0.08, 0.07, 0.06, 0.05], device="cuda")

    def sample(b, npts):
        wu = base_u + 0.05 * torch.randn(b, order + 1, device="cuda")
        wl = base_l + 0.05 * torch.randn(b, order + 1, device="cuda")
        alpha = (torch.rand(b, device="cuda") * 14 - 4) * math.pi / 180
        mach = torch.rand(b, device="cuda") * 0.6 + 0.1
        return wu, wl, alpha, mach

    def side_feature(b, npts):
        return torch.cat([torch.ones(b, npts, 1, device="cuda"), -torch.ones(b, npts, 1, device="cuda")], 1)

    for step in range(steps):
        model.train()
        b = rng.choice(_smoke([256, 384, 512, 768, 1024], [4, 6]))
        npts = rng.choice(_smoke([96, 128, 160, 192, 256], [8, 12]))
        wu, wl, alpha, mach = sample(b, npts)
        pts, camber, thick, x = _cst_airfoil(wu, wl, npts)
        target = _polar_reference(camber, thick, x, alpha, mach)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(pts, side_feature(b, npts), alpha, mach)
        loss = _F.smooth_l1_loss(pred.float(), target, beta=0.1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        del wu, wl, alpha, mach, pts, camber, thick, x, target, pred
        if step % 20 == 0:
            float(loss)
        if (step + 1) % _smoke(80, 3) == 0:
            model.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                wu, wl, alpha, mach = sample(_smoke(2048, 8), 192)
                pts, camber, thick, x = _cst_airfoil(wu, wl, _smoke(192, 8))
                err = (model(pts, side_feature(wu.shape[0], _smoke(192, 8)), alpha, mach).float()
                       - _polar_reference(camber, thick, x, alpha, mach)).abs().mean(0)
                err.tolist()
            del wu, wl, alpha, mach, pts, camber, thick, x, err

    # gradient-based design through the frozen surrogate
    model.eval().requires_grad_(False)
    for _ in range(_smoke(4, 1)):
        nd = rng.randint(_smoke(48, 2), _smoke(128, 4))
        npts = rng.choice(_smoke([128, 192, 256], [8]))
        wu = (base_u + 0.02 * torch.randn(nd, order + 1, device="cuda")).requires_grad_(True)
        wl = (base_l + 0.02 * torch.randn(nd, order + 1, device="cuda")).requires_grad_(True)
        alpha = torch.full((nd,), rng.uniform(2, 6) * math.pi / 180, device="cuda")
        mach = torch.full((nd,), rng.uniform(0.2, 0.72), device="cuda")
        dopt = torch.optim.Adam([wu, wl], lr=2e-3)
        iters = rng.randint(_smoke(140, 2), _smoke(180, 4))
        for it in range(iters):
            pts, camber, thick, x = _cst_airfoil(wu, wl, npts)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = model(pts, side_feature(nd, npts), alpha, mach).float()
            cl, cd, cm = out.unbind(-1)
            tmax = thick.amax(1)
            obj = -(cl / cd.clamp_min(0.3)) + 50 * _F.relu(0.12 - tmax) ** 2 + 20 * _F.relu(-thick).sum(1) \
                + 5 * cm.pow(2)
            dopt.zero_grad(set_to_none=True)
            obj.sum().backward()
            dopt.step()
            del pts, camber, thick, x, out, cl, cd, cm, tmax, obj
            if (it + 1) % 25 == 0:
                with torch.no_grad():
                    pts, camber, thick, x = _cst_airfoil(wu, wl, npts)
                    _polar_reference(camber, thick, x, alpha, mach).mean(0).tolist()
                del pts, camber, thick, x
        del wu, wl, alpha, mach, dopt
    model.requires_grad_(True)


# ---------------------------------------------------------------- lattice-Boltzmann D2Q9 flow past cylinders


_D2Q9_C = [(0, 0), (1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1)]
_D2Q9_W = [4 / 9] + [1 / 9] * 4 + [1 / 36] * 4
_D2Q9_OPP = [0, 3, 4, 1, 2, 7, 8, 5, 6]


def _lbm_equilibrium(rho, ux, uy, cx, cy, w):
    """rho, ux, uy (B, ny, nx) -> feq (B, 9, ny, nx)."""
    cu = 3 * (cx * ux[:, None] + cy * uy[:, None])
    usq = 1.5 * (ux * ux + uy * uy)[:, None]
    return w * rho[:, None] * (1 + cu + 0.5 * cu * cu - usq)


@_workload("lattice-Boltzmann D2Q9 channel flow written by hand in torch (no learning): 3 runs in turn at drawn resolutions (400x100 to 1,200x300 lattice nodes), each a batch of 2-4 flows (drawn) at drawn Reynolds numbers past 1-3 cylinders of drawn position and radius (obstacle masks built on the device); BGK collision, streaming by torch.roll over the 9 directions, full-way bounce-back at the obstacles and the channel walls by torch.where, an equilibrium inlet with a parabolic profile and a zero-gradient outlet; 2,400-3,100 steps a run (drawn), fp32; drag and lift on the obstacles by momentum exchange and the velocity magnitude's maximum read back every 250 steps, a vorticity field kept every 500")
def lbm_cylinder_multires(rng):
    cx = torch.tensor([c[0] for c in _D2Q9_C], device="cuda", dtype=torch.float32)[None, :, None, None]
    cy = torch.tensor([c[1] for c in _D2Q9_C], device="cuda", dtype=torch.float32)[None, :, None, None]
    w = torch.tensor(_D2Q9_W, device="cuda")[None, :, None, None]
    opp = torch.tensor(_D2Q9_OPP, device="cuda")
    for _ in range(_smoke(3, 1)):
        ny = rng.choice(_smoke([100, 150, 200, 250, 300], [12, 16]))
        nx = 4 * ny
        b = rng.randint(2, 4)
        re = torch.tensor([rng.uniform(60, 220) for _ in range(b)], device="cuda")
        u_in = 0.08
        yy = torch.arange(ny, device="cuda", dtype=torch.float32)[:, None]
        xx = torch.arange(nx, device="cuda", dtype=torch.float32)[None]
        solid = torch.zeros(b, ny, nx, device="cuda")
        diam = torch.zeros(b, device="cuda")
        for i in range(b):
            for _ in range(rng.randint(1, 3)):
                rad = rng.uniform(0.06, 0.12) * ny
                cxo, cyo = rng.uniform(0.15, 0.4) * nx, rng.uniform(0.35, 0.65) * ny
                solid[i] = torch.maximum(solid[i], (((xx - cxo) ** 2 + (yy - cyo) ** 2) < rad * rad).float())
            diam[i] = 2 * rad
        solid[:, 0] = 1.0
        solid[:, -1] = 1.0
        wall = solid > 0.5
        nu = u_in * diam / re
        omega = (1.0 / (3 * nu + 0.5))[:, None, None, None]
        profile = 4 * u_in * yy[:, 0] * (ny - 1 - yy[:, 0]) / (ny - 1) ** 2
        rho_in = torch.ones(b, ny, 1, device="cuda")
        feq_in = _lbm_equilibrium(rho_in, profile[None, :, None].expand(b, ny, 1), torch.zeros(b, ny, 1, device="cuda"),
                                  cx, cy, w)
        f = _lbm_equilibrium(torch.ones(b, ny, nx, device="cuda"), profile[None, :, None].expand(b, ny, nx) *
                             (1 - solid), torch.zeros(b, ny, nx, device="cuda"), cx, cy, w)
        nsteps = rng.randint(_smoke(2400, 3), _smoke(3100, 5))
        snaps = []
        with torch.no_grad():
            for t in range(nsteps):
                rho = f.sum(1)
                ux = (f * cx).sum(1) / rho
                uy = (f * cy).sum(1) / rho
                feq = _lbm_equilibrium(rho, ux, uy, cx, cy, w)
                fpost = f + omega * (feq - f)
                # bounce-back: at solid nodes the populations are reversed instead of relaxed
                fpost = torch.where(wall[:, None], f.index_select(1, opp), fpost)
                f = torch.stack([torch.roll(fpost[:, i], shifts=_D2Q9_C[i], dims=(2, 1)) for i in range(9)], 1)
                f = torch.cat([feq_in, f[..., 1:-1], f[..., -2:-1]], -1)  # inlet equilibrium, outlet copy
                if (t + 1) % _smoke(250, 2) == 0:
                    # momentum exchange: populations hitting the obstacle from fluid nodes
                    fluid = (1 - solid)[:, None]
                    hit = (fpost * fluid).index_select(1, opp) * solid[:, None]
                    force = torch.stack([(hit * cx).sum((1, 2, 3)), (hit * cy).sum((1, 2, 3))], -1)
                    umax = (ux * ux + uy * uy).sqrt().amax((1, 2))
                    torch.cat([force, umax[:, None]], -1).tolist()
                    del fluid, hit, force, umax
                if (t + 1) % _smoke(500, 2) == 0:
                    vort = (torch.roll(uy, -1, 2) - torch.roll(uy, 1, 2) - torch.roll(ux, -1, 1)
                            + torch.roll(ux, 1, 1)) * 0.5
                    snaps.append(vort.to(torch.bfloat16))
                del rho, ux, uy, feq, fpost
        torch.stack(snaps).float().abs().mean().item()
        del f, snaps, solid, wall, feq_in, omega


# ---------------------------------------------------------------- design-of-experiments surrogate service


def _test_function(x):
    """A multi-output engineering test response on the unit cube (borehole-, piston- and beam-like terms):
    x (N, 12) -> (N, 4)."""
    rw, r, tu, hu, tl, hl, l, kw = [x[:, i] for i in range(8)]
    rw = 0.05 + 0.1 * rw
    r = 100 + 50000 * r
    lnr = torch.log(r / rw)
    flow = 2 * math.pi * (63070 + 52000 * tu) * (990 + 120 * hu - 700 - 120 * hl) / (
        lnr * (1 + 2 * (1120 + 560 * l) * (63070 + 52000 * tu) / (lnr * rw ** 2 * (9855 + 2190 * kw)) +
               (63070 + 52000 * tu) / (63.1 + 52 * tl)))
    m, s, v0, k = 30 + 30 * x[:, 8], 0.005 + 0.015 * x[:, 9], 0.002 + 0.008 * x[:, 10], 1000 + 4000 * x[:, 11]
    cyc = 2 * math.pi * torch.sqrt(m / (k + s * s * 1e5 * v0 / 0.3))
    defl = (1 + 3 * x[:, 0]) * (2 + x[:, 5]) ** 3 / ((1 + x[:, 6]) * (0.5 + x[:, 7]) ** 3)
    stress = torch.sin(3 * x[:, 1]) * torch.cos(2 * x[:, 2]) + x[:, 3] * x[:, 4]
    return torch.stack([flow / 100, cyc * 10, defl / 10, stress], -1)


@_workload("design-of-experiments service answering batched surrogate queries (random init): a multi-output MLP surrogate (12 design parameters to 4 responses, 5 layers of width 384, SiLU, LayerNorm) trained first on Latin-hypercube-like samples of an engineering test function (borehole-, piston- and beam-like responses), fp32 AdamW, 700 steps of 4,096; then 3,900-4,400 requests (drawn) of drawn kind: plain predictions of 64-16,384 design points (log-uniform), local sensitivities of 32-1,024 points by autograd, and Saltelli Sobol-index batches of 256-2,048 base samples (14 matrices, up to 28,672 rows) evaluated in chunks, each request's design parameters uploaded as fp32 from 2 reused pinned host buffers on a side stream one request ahead (waited on by event, record_stream'ed), predictions under bf16 autocast; each request's summary read back")
def doe_surrogate_query_serve(rng):
    d, nout = 12, 4
    width = _smoke(384, 16)
    model = _nn.Sequential(_nn.Linear(d, width), _nn.LayerNorm(width), _nn.SiLU(),
                           *[m for _ in range(3) for m in (_nn.Linear(width, width), _nn.LayerNorm(width), _nn.SiLU())],
                           _nn.Linear(width, nout)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-5)
    mu = torch.tensor([1.0, 7.0, 3.0, 0.5], device="cuda")
    sd = torch.tensor([1.0, 4.0, 2.0, 0.6], device="cuda")
    bt = _smoke(4096, 16)
    for step in range(_smoke(700, 3)):
        # Latin-hypercube-like: a random permutation of strata per dimension, jittered
        strata = torch.argsort(torch.rand(d, bt, device="cuda"), dim=1).t().float()
        x = (strata + torch.rand(bt, d, device="cuda")) / bt
        y = (_test_function(x) - mu) / sd
        loss = _F.mse_loss(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del strata, x, y
        if step % 25 == 0:
            float(loss)
    model.eval().requires_grad_(False)

    cap = _smoke(16384, 64) * d
    host = [torch.rand(cap).pin_memory() for _ in range(2)]
    up = SideUploads(host)

    def draw():
        kind = rng.choices(["predict", "sens", "sobol"], [0.6, 0.25, 0.15])[0]
        if kind == "predict":
            n = _loguniform(rng, 64, _smoke(16384, 64))
        elif kind == "sens":
            n = _loguniform(rng, 32, _smoke(1024, 16))
        else:
            n = 2 * _loguniform(rng, 128, _smoke(1024, 16))  # base matrices A and B
        return kind, n

    def fetch(i, n):
        z, ev = up.upload(i, n * d)
        return z, ev

    def take(item, n):
        z, ev = item
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        z.record_stream(cur)
        return z.view(n, d)

    def predict(x):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return model(x).float() * sd + mu

    nreq = rng.randint(_smoke(3900, 3), _smoke(4400, 5))
    plan = [draw() for _ in range(nreq)]
    nxt = fetch(0, plan[0][1])
    chunk = _smoke(8192, 64)
    for i in range(nreq):
        kind, n = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = fetch(i + 1, plan[i + 1][1])
        x = take(item, n)
        if kind == "predict":
            with torch.no_grad():
                y = predict(x)
                torch.cat([y.mean(0), y.amax(0)]).tolist()
        elif kind == "sens":
            xg = x.clone().requires_grad_(True)
            with torch.enable_grad():
                y = model(xg) * sd + mu
                grads = [torch.autograd.grad(y[:, j].sum(), xg, retain_graph=j < nout - 1)[0] for j in range(nout)]
            s = torch.stack(grads, 1).abs().mean(0)
            s.flatten().tolist()
            del xg, grads, s
        else:
            with torch.no_grad():
                half = n // 2
                a, bm = x[:half], x[half:]
                # the Saltelli matrices AB_i: A with column i taken from B
                ab = a[None].repeat(d, 1, 1)
                eye = torch.eye(d, device="cuda")[:, None, :]
                ab = ab * (1 - eye) + bm[None] * eye
                rows = torch.cat([a, bm, ab.reshape(-1, d)], 0)
                outs = [predict(rows[j: j + chunk]) for j in range(0, rows.shape[0], chunk)]
                y = torch.cat(outs, 0)
                ya, yb, yab = y[:half], y[half: 2 * half], y[2 * half:].view(d, half, nout)
                var = torch.cat([ya, yb], 0).var(0)
                first = (yb[None] * (yab - ya[None])).mean(1) / var
                total = 0.5 * ((ya[None] - yab) ** 2).mean(1) / var
                torch.stack([first, total]).flatten().tolist()
                del a, bm, ab, eye, rows, outs, ya, yb, yab, var, first, total
        del item, x, y
    model.requires_grad_(True)

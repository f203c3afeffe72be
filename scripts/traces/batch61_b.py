"""The sixty-first batch of held-out workloads for record.py, second half (batch61.py has the first): computer
graphics, games and character animation on the GPU, written in torch alone. Inverse rendering with a soft
rasteriser in the manner of SoftRas (UV-sphere meshes of drawn triangle count deformed toward hidden target shapes
and their vertex colours from multi-view renders at drawn resolution, every pixel's coverage of every triangle a
sigmoid of its signed edge distance, depth-aware softmax aggregation of colour and silhouettes, Laplacian and edge
regularisers; several objects in a run, one after another), neural BRDF fitting in the manner of Sztrajman et al.
(groups of 8-32 materials, drawn, each its own small MLP over half and difference vectors, run as batched matrix
products, fitted to a GGX microfacet teacher on directions sampled on the device, the widths drawn per group; then
each material rendered on a sphere under a few lights), skinning-weight prediction over character meshes in the
manner of RigNet (meshes of 1,000-12,000 vertices drawn around skeletons of 16-52 joints, k-nearest-neighbour
graphs built on the device in chunks, EdgeConv layers with per-mesh pooling, a vertex-joint pair head, a KL loss to
bone-distance weights and a linear-blend-skinning loss under random poses), and speech-driven facial animation in
the manner of Audio2Face / FaceFormer (mel features of 2-12 s clips, drawn, uploaded from reused pinned host buffers
on a side stream one batch ahead, a strided convolution front end and a transformer with padding masks predicting
52 blendshape weights at 50 fps with an emotion embedding; L1 and velocity losses; evaluations that stream a long
clip in overlapping windows). Same conventions as the earlier batches: nothing downloaded, data drawn at random on
the device (or, for the facial animation, from a few reused pinned host buffers), `rng` the workload's random.Random
for every shape, count and sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny.
No control flow reads a tensor's value: counts are fixed on the host (meshes, views, windows, neighbours), masks
multiplied or added in, no boolean-mask indexing; losses and metrics are read back only at logging points.
audio2face_blendshape_train uses a side stream (uploads waited on by event, the tensors record_stream'ed); the others
are single-stream. The skinning GNN and the facial animation transformer run under bf16 autocast; the rasteriser,
the BRDF fits (whose dynamic range wants fp32), the skinning arithmetic and the losses are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch61.py's header says the same of its half): every workload of this half was
run on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with the helper's runner
(/tmp/b61/meta_run.py, not committed, a copy of /work/notes/meta_run.py: smoke_cpu.py's patching with "cuda" mapped to
"meta", readbacks answered with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking a math path,
streams, events and pinned memory no-ops; boolean-mask indexing, which the meta device cannot size, is avoided), its
op outputs counted there (events about 1.8x that count) and its peak live bytes tracked: softras_inverse_render_opt
299,496 op outputs, peak 3.97 GB; neural_brdf_material_fit 315,605, 1.39 GB; skinning_weight_gnn_train 315,741, 4.50
GB; audio2face_blendshape_train 299,217, 3.34 GB; all four run whole (peaks in fp32 where autocast would take bf16;
the facial animation transformer's peak mostly the attention matrices of the math path). record_new61.sh's header has
them too, with the runs that led to resizes. The CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- soft rasteriser for inverse rendering (SoftRas)


def _uv_sphere(lat, lon, dev="cuda"):
    """A UV sphere of (lat + 1) rows of lon vertices (the poles' rows degenerate); faces (2 lat lon, 3) and edges."""
    th = torch.linspace(0, math.pi, lat + 1, device=dev)
    ph = torch.arange(lon, device=dev) * (2 * math.pi / lon)
    v = torch.stack([torch.sin(th)[:, None] * torch.cos(ph)[None], torch.cos(th)[:, None].expand(-1, lon),
                     torch.sin(th)[:, None] * torch.sin(ph)[None]], -1).reshape(-1, 3)
    i = torch.arange(lat, device=dev)[:, None]
    j = torch.arange(lon, device=dev)[None]
    a, b = i * lon + j, i * lon + (j + 1) % lon
    c, d = a + lon, b + lon
    faces = torch.cat([torch.stack([a, c, b], -1).reshape(-1, 3), torch.stack([b, c, d], -1).reshape(-1, 3)])
    edges = torch.cat([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]])
    return v, faces, edges


def _rot(yaw, pitch, dev="cuda"):
    cy, sy, cp, sp = math.cos(yaw), math.sin(yaw), math.cos(pitch), math.sin(pitch)
    ry = [[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]]
    rx = [[1, 0, 0], [0, cp, -sp], [0, sp, cp]]
    r = [[sum(rx[i][k] * ry[k][j] for k in range(3)) for j in range(3)] for i in range(3)]
    return r


def _soft_render(verts, faces, colors, rots, res, sigma, gamma, dist=2.7, fov=0.6):
    """SoftRas-style rendering of one mesh from n views (rots (n, 3, 3)): returns images (n, 3, P) and silhouettes
    (n, P) for P = res^2 pixels. Every pixel against every triangle: the sigmoid of the signed distance to the
    triangle's nearest edge, barycentric depth and colour, softmax aggregation over depth with a background."""
    dev = verts.device
    p = verts[None] @ rots.transpose(1, 2)  # (n, V, 3)
    z = p[..., 2] + dist
    xy = p[..., :2] / (z[..., None] * math.tan(fov / 2))
    fxy = xy[:, faces]  # (n, F, 3, 2)
    fz = z[:, faces]  # (n, F, 3)
    fc = colors[faces]  # (F, 3, 3)
    lin = torch.linspace(-1 + 1.0 / res, 1 - 1.0 / res, res, device=dev)
    pix = torch.stack(torch.meshgrid(lin, -lin, indexing="xy"), -1).reshape(-1, 2)  # (P, 2)
    a, b, c = fxy[:, :, 0], fxy[:, :, 1], fxy[:, :, 2]  # (n, F, 2)
    area = ((b - a)[..., 0] * (c - a)[..., 1] - (b - a)[..., 1] * (c - a)[..., 0])  # (n, F) signed, x2
    sgn = torch.where(area >= 0, 1.0, -1.0)
    area = area.abs().clamp_min(1e-8)
    ws, ds = [], []
    for (s, e) in ((b, c), (c, a), (a, b)):
        ev = e - s  # (n, F, 2)
        ln = ev.norm(dim=-1).clamp_min(1e-6)
        # edge function of every pixel against every triangle edge: (n, P, F)
        ef = (ev[:, None, :, 0] * (pix[None, :, None, 1] - s[:, None, :, 1])
              - ev[:, None, :, 1] * (pix[None, :, None, 0] - s[:, None, :, 0])) * sgn[:, None]
        ws.append(ef / area[:, None])
        ds.append(ef / ln[:, None])
    dmin = torch.minimum(torch.minimum(ds[0], ds[1]), ds[2])
    D = torch.sigmoid(dmin / sigma)  # (n, P, F) coverage
    w = torch.stack(ws, -1).clamp(0, 1)
    w = w / w.sum(-1, keepdim=True).clamp_min(1e-6)  # (n, P, F, 3)
    zp = (w * fz[:, None]).sum(-1)
    zn = ((dist + 1.5) - zp) / 3.0  # near 1, far 0
    logit = zn / gamma
    m = torch.maximum(logit.amax(-1, keepdim=True), torch.full_like(logit[..., :1], 1e-3 / gamma)).detach()
    wt = D * torch.exp(logit - m)
    wbg = torch.exp(1e-3 / gamma - m)
    col = torch.einsum("npfk,fkc->npfc", w, fc)  # barycentric vertex colours
    img = ((wt[..., None] * col).sum(2) + wbg) / (wt.sum(-1, keepdim=True) + wbg)
    sil = 1 - torch.exp(torch.log1p(-D.clamp(max=1 - 1e-6)).sum(-1))
    return img, sil


def _laplacian(v, edges, nv):
    nb = torch.zeros_like(v).index_add_(0, edges[:, 0], v[edges[:, 1]])
    deg = torch.zeros(nv, 1, device=v.device).index_add_(0, edges[:, 0], torch.ones(edges.shape[0], 1, device=v.device))
    return nb / deg.clamp_min(1) - v


@_workload("inverse rendering with a soft rasteriser written by hand in the manner of SoftRas: 4 objects one after another, each a UV-sphere template of drawn tessellation (320-3,200 triangles) deformed toward a hidden target shape (the sphere displaced by random low-frequency functions, with vertex colours) from 32 target views rendered at a drawn resolution (48-96 pixels); every pixel against every triangle (signed edge distances, sigmoid coverage with sigma annealed, barycentric depth and vertex colour, depth-aware softmax aggregation with a background, silhouettes as 1 - prod(1 - D)), 2-6 views a step (drawn within a budget of 24M pixel-triangle pairs); image MSE, silhouette IoU, Laplacian and edge-length regularisers; fp32, Adam on vertex offsets and colours, 170 steps an object; silhouette IoU on all views read back at the end of each object")
def softras_inverse_render_opt(rng):
    budget = _smoke(24 << 20, 1 << 14)
    for obj in range(_smoke(4, 2)):
        lat = rng.choice(_smoke([8, 12, 16, 20, 28, 40], [3, 4]))
        lon = rng.choice(_smoke([20, 28, 40], [5, 6]))
        res = rng.choice(_smoke([48, 64, 80, 96], [8, 12]))
        v0, faces, edges = _uv_sphere(lat, lon)
        nv, nf = v0.shape[0], faces.shape[0]
        nview_all = _smoke(32, 3)
        rots_all = torch.tensor([_rot(rng.uniform(0, 2 * math.pi), rng.uniform(-0.6, 0.6)) for _ in range(nview_all)],
                                device="cuda")
        with torch.no_grad():  # the hidden target: low-frequency displacement and colours
            dirs = torch.randn(3, 6, device="cuda")
            disp = (torch.sin(v0 @ dirs * 2.5) * torch.rand(6, device="cuda") * 0.12).sum(-1, keepdim=True)
            tv = v0 * (1 + disp) * torch.tensor([1.0, rng.uniform(0.7, 1.3), 1.0], device="cuda")
            tc = torch.sigmoid(torch.sin(v0 @ torch.randn(3, 3, device="cuda") * 2) * 2)
            timgs, tsils = [], []
            for c0 in range(0, nview_all, 4):
                ti, ts = _soft_render(tv, faces, tc, rots_all[c0:c0 + 4], res, 1e-3, 1e-2)
                timgs.append(ti), tsils.append(ts)
            timg, tsil = torch.cat(timgs), torch.cat(tsils)
            del timgs, tsils, tv, tc, disp
        offset = torch.zeros_like(v0, requires_grad=True)
        colors = torch.full_like(v0, 0.5).requires_grad_(True)
        opt = torch.optim.Adam([offset, colors], lr=5e-3)
        steps = _smoke(170, 3)
        nmax = max(1, min(6, budget // (res * res * nf)))
        el0 = (v0[edges[:, 0]] - v0[edges[:, 1]]).norm(dim=-1).mean()
        for step in range(steps):
            n = rng.randint(min(2, nmax), nmax)
            vi = torch.tensor([rng.randrange(nview_all) for _ in range(n)], device="cuda")
            sigma = 3e-2 * (1 - step / steps) + 2e-3
            v = v0 + offset
            img, sil = _soft_render(v, faces, torch.sigmoid((colors - 0.5) * 4), rots_all[vi], res, sigma, 1e-2)
            ti, ts = timg[vi], tsil[vi]
            iou = 1 - (sil * ts).sum(1) / (sil + ts - sil * ts).sum(1).clamp_min(1e-6)
            el = (v[edges[:, 0]] - v[edges[:, 1]]).norm(dim=-1)
            loss = (((img - ti) ** 2).mean() + iou.mean() + 0.3 * _laplacian(v, edges, nv).pow(2).sum(1).mean()
                    + 0.1 * ((el - el0) ** 2).mean())
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            del vi, v, img, sil, ti, ts, iou, el
            if step % 50 == 0:
                float(loss)
        with torch.no_grad():
            ious = []
            for c0 in range(0, nview_all, 4):
                _, sil = _soft_render(v0 + offset, faces, colors, rots_all[c0:c0 + 4], res, 1e-3, 1e-2)
                ts = tsil[c0:c0 + 4]
                ious.append((sil * ts).sum(1) / (sil + ts - sil * ts).sum(1).clamp_min(1e-6))
            torch.cat(ious).tolist()
        del offset, colors, opt, timg, tsil, v0, faces, edges, rots_all


# ---------------------------------------------------------------- neural BRDFs fitted per material


def _ggx_brdf(params, wi, wo):
    """GGX microfacet BRDF with Schlick Fresnel and a Lambertian lobe per material: params (M, 8) = diffuse rgb,
    specular rgb, roughness, F0; wi, wo (M, N, 3) in the local frame (z the normal). Returns (M, N, 3)."""
    h = _F.normalize(wi + wo, dim=-1)
    nl, nv, nh = wi[..., 2:3].clamp_min(1e-4), wo[..., 2:3].clamp_min(1e-4), h[..., 2:3].clamp_min(0)
    vh = (wo * h).sum(-1, keepdim=True).clamp_min(0)
    kd, ks = params[:, None, 0:3], params[:, None, 3:6]
    a = params[:, None, 6:7].clamp_min(0.02) ** 2
    f0 = params[:, None, 7:8]
    d = a * a / (math.pi * (nh * nh * (a * a - 1) + 1) ** 2)
    k = a / 2
    g = (nl / (nl * (1 - k) + k)) * (nv / (nv * (1 - k) + k))
    fr = f0 + (1 - f0) * (1 - vh) ** 5
    return kd / math.pi + ks * d * g * fr / (4 * nl * nv)


def _hemisphere(m, n, dev="cuda"):
    u1, u2 = torch.rand(m, n, device=dev), torch.rand(m, n, device=dev)
    r, phi = torch.sqrt(u1), 2 * math.pi * u2
    return torch.stack([r * torch.cos(phi), r * torch.sin(phi), torch.sqrt((1 - u1).clamp_min(0))], -1)


def _half_diff(wi, wo):
    """Rusinkiewicz-style half and difference vectors in Cartesian form, the network's 6 inputs."""
    h = _F.normalize(wi + wo, dim=-1)
    # rotate wi into the half vector's frame: the difference vector
    t = _F.normalize(torch.stack([h[..., 2], torch.zeros_like(h[..., 0]), -h[..., 0]], -1) + 1e-6, dim=-1)
    bt = torch.cross(h, t, dim=-1)
    d = torch.stack([(wi * t).sum(-1), (wi * bt).sum(-1), (wi * h).sum(-1)], -1)
    return torch.cat([h, d], -1)


class _BatchedMLP(_nn.Module):
    """One small MLP a material (6 -> h -> h -> 3), all M run at once by baddbmm."""

    def __init__(self, m, h):
        super().__init__()
        dims = [(6, h), (h, h), (h, 3)]
        self.w = _nn.ParameterList(_nn.Parameter(torch.randn(m, a, b) * math.sqrt(2.0 / a)) for a, b in dims)
        self.b = _nn.ParameterList(_nn.Parameter(torch.zeros(m, 1, b)) for _, b in dims)

    def forward(self, x):
        for i, (w, b) in enumerate(zip(self.w, self.b)):
            x = torch.baddbmm(b, x, w)
            if i < 2:
                x = _F.leaky_relu(x, 0.01)
        return torch.exp(x.clamp(max=10)) - 1


@_workload("neural BRDF fitting of many materials written by hand in the manner of Sztrajman et al.'s neural BRDFs (random init): 5 groups of 8-32 materials (drawn), each material a GGX microfacet teacher with a Lambertian lobe and Schlick Fresnel (drawn parameters) and its own 6-h-h-3 MLP (h drawn per group: 21, 32, 64 or 128) over half and difference vectors, the group's MLPs run as batched matrix products; each step 2^19 direction pairs a group cosine-sampled on the device, loss on log(1 + rho cos) ; fp32, Adam with step decay, 360-480 steps a group (drawn); then each material rendered on a sphere at 192x192 under 4 directional lights in chunks (no grad) and the images' relative error against the teacher read back")
def neural_brdf_material_fit(rng):
    for group in range(_smoke(5, 2)):
        m = rng.choice(_smoke([8, 16, 24, 32], [2, 3]))
        h = rng.choice(_smoke([21, 32, 64, 128], [8]))
        params = torch.cat([torch.rand(m, 3, device="cuda") * 0.6, torch.rand(m, 3, device="cuda"),
                            0.05 + 0.9 * torch.rand(m, 1, device="cuda"), 0.02 + 0.2 * torch.rand(m, 1, device="cuda")], 1)
        net = _BatchedMLP(m, h).cuda()
        opt = torch.optim.Adam(net.parameters(), lr=5e-3)
        steps = rng.randint(_smoke(360, 2), _smoke(480, 3))
        sched = torch.optim.lr_scheduler.StepLR(opt, max(1, steps // 3), 0.5)
        n = _smoke(1 << 19, 256) // m
        for step in range(steps):
            wi, wo = _hemisphere(m, n), _hemisphere(m, n)
            with torch.no_grad():
                rho = _ggx_brdf(params, wi, wo)
            pred = net(_half_diff(wi, wo))
            cos = wi[..., 2:3]
            loss = (torch.log1p(pred.clamp_min(0) * cos) - torch.log1p(rho * cos)).abs().mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            del wi, wo, rho, pred, cos
            if step % 60 == 0:
                float(loss)
        with torch.no_grad():
            res, chunk = _smoke(192, 8), _smoke(8192, 16)
            lin = torch.linspace(-1, 1, res, device="cuda")
            yy, xx = torch.meshgrid(lin, lin, indexing="ij")
            r2 = (xx * xx + yy * yy).reshape(-1)
            nrm = torch.stack([xx.reshape(-1), yy.reshape(-1), torch.sqrt((1 - r2).clamp_min(0))], -1)
            inside = (r2 < 1).float()
            wo = torch.tensor([0.0, 0.0, 1.0], device="cuda")
            errs = []
            for li in range(4):
                ld = _F.normalize(torch.tensor([rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(0.3, 1)],
                                               device="cuda"), dim=0)
                img_p, img_t = [], []
                for c0 in range(0, res * res, chunk):
                    nc = nrm[c0:c0 + chunk]
                    # build a local frame per pixel: light and view in the frame of the sphere's normal
                    t = _F.normalize(torch.cross(nc, torch.tensor([0.0, 1.0, 0.0], device="cuda").expand_as(nc),
                                                 dim=-1) + 1e-6, dim=-1)
                    bt = torch.cross(nc, t, dim=-1)
                    frame = torch.stack([t, bt, nc], 1)  # (c, 3, 3)
                    wl = (frame @ ld)[None].expand(m, -1, -1)
                    wv = (frame @ wo)[None].expand(m, -1, -1)
                    cos = wl[..., 2:3].clamp_min(0)
                    img_p.append(net(_half_diff(wl, wv)).clamp_min(0) * cos)
                    img_t.append(_ggx_brdf(params, wl, wv) * cos)
                    del nc, t, bt, frame, wl, wv, cos
                ip, it = torch.cat(img_p, 1), torch.cat(img_t, 1)
                errs.append((((ip - it) ** 2).sum(-1) * inside).sum(1) / ((it ** 2).sum(-1) * inside).sum(1).clamp_min(1e-6))
                del ip, it, img_p, img_t
            torch.stack(errs).tolist()
        del net, opt, sched, params


# ---------------------------------------------------------------- skinning-weight prediction (RigNet-style)


def _character(rng, nv, nj, dev="cuda"):
    """A random skeleton of nj joints (a tree grown on the host) and nv surface points on capsules around its
    bones; returns vertex positions, normals, joint positions (nj, 3), parents and each vertex's bone."""
    pos = [(0.0, 1.0, 0.0)]
    parents = [0]
    for j in range(1, nj):
        p = rng.randrange(j)
        d = [rng.gauss(0, 1) for _ in range(3)]
        nrm = math.sqrt(sum(x * x for x in d)) + 1e-6
        ln = rng.uniform(0.08, 0.25)
        pos.append(tuple(pos[p][k] + ln * d[k] / nrm for k in range(3)))
        parents.append(p)
    joints = torch.tensor(pos, device=dev)
    par = torch.tensor(parents, device=dev)
    bone = torch.randint(1, nj, (nv,), device=dev)
    a, b = joints[par[bone]], joints[bone]
    t = torch.rand(nv, 1, device=dev)
    axis = _F.normalize(b - a + 1e-6, dim=-1)
    rnd = _F.normalize(torch.randn(nv, 3, device=dev), dim=-1)
    nrm = _F.normalize(rnd - (rnd * axis).sum(-1, keepdim=True) * axis, dim=-1)
    radius = 0.02 + 0.04 * torch.rand(nj, device=dev)[bone][:, None]
    v = a + t * (b - a) + radius * nrm
    return v, nrm, joints, par, bone


def _knn(v, k, chunk):
    out = []
    for c0 in range(0, v.shape[0], chunk):
        d = torch.cdist(v[c0:c0 + chunk], v)
        out.append(d.topk(k + 1, largest=False).indices[:, 1:])
        del d
    return torch.cat(out)


def _bone_dist(v, joints, par):
    a, b = joints[par][None], joints[None]  # (1, J, 3)
    ab = b - a
    t = (((v[:, None] - a) * ab).sum(-1) / (ab * ab).sum(-1).clamp_min(1e-8)).clamp(0, 1)
    return (v[:, None] - (a + t[..., None] * ab)).norm(dim=-1)  # (N, J)


class _EdgeConv(_nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.mlp = _nn.Sequential(_nn.Linear(2 * cin, cout), _nn.LayerNorm(cout), _nn.GELU(), _nn.Linear(cout, cout))

    def forward(self, x, nbr):
        xj = x[nbr]  # (N, k, C)
        xi = x[:, None].expand_as(xj)
        return self.mlp(torch.cat([xi, xj - xi], -1)).amax(1)


class _SkinNet(_nn.Module):
    def __init__(self, widths, dpair):
        super().__init__()
        self.convs = _nn.ModuleList(_EdgeConv(a, b) for a, b in zip(widths[:-1], widths[1:]))
        c = sum(widths[1:])
        self.glob = _nn.Linear(c, c)
        self.vproj = _nn.Linear(2 * c, dpair)
        self.jproj = _nn.Sequential(_nn.Linear(4, dpair), _nn.GELU(), _nn.Linear(dpair, dpair))
        self.pair = _nn.Sequential(_nn.GELU(), _nn.Linear(dpair, dpair), _nn.GELU(), _nn.Linear(dpair, 1))

    def forward(self, x, nbr, mesh, nmesh, jpos, vpos, jmask):
        feats = []
        for conv in self.convs:
            x = conv(x, nbr)
            feats.append(x)
        h = torch.cat(feats, -1)
        g = torch.zeros(nmesh, h.shape[1], device=h.device, dtype=h.dtype).scatter_reduce(
            0, mesh[:, None].expand_as(h), h, "amax", include_self=False)
        h = torch.cat([h, self.glob(g)[mesh]], -1)
        rel = vpos[:, None] - jpos[mesh]  # (N, J, 3)
        jf = self.jproj(torch.cat([rel, rel.norm(dim=-1, keepdim=True)], -1))
        logits = self.pair(self.vproj(h)[:, None] + jf)[..., 0].float()
        return logits + (jmask[mesh] - 1) * 1e4


def _rodrigues(aa):
    th = aa.norm(dim=-1, keepdim=True).clamp_min(1e-6)
    k = aa / th
    kx, ky, kz = k.unbind(-1)
    z = torch.zeros_like(kx)
    K = torch.stack([z, -kz, ky, kz, z, -kx, -ky, kx, z], -1).view(*aa.shape[:-1], 3, 3)
    eye = torch.eye(3, device=aa.device).expand_as(K)
    s, c = torch.sin(th)[..., None], torch.cos(th)[..., None]
    return eye + s * K + (1 - c) * (K @ K)


def _lbs(v, w, jpos, rot, mesh):
    """Linear blend skinning with per-joint rotations about the joints: v (N, 3), w (N, J), jpos, rot per mesh."""
    jp, r = jpos[mesh], rot[mesh]  # (N, J, 3), (N, J, 3, 3)
    moved = (r @ (v[:, None] - jp)[..., None])[..., 0] + jp
    return (w[..., None] * moved).sum(1)


@_workload("skinning-weight prediction over character meshes written by hand in the manner of RigNet (random init): 56 characters, each a random skeleton of 16-52 joints (drawn) and 1,000-12,000 surface vertices (drawn) on capsules around its bones, 16-nearest-neighbour graphs built on the device by chunked cdist and topk; batches of 2-6 meshes (drawn within 24,000 vertices) concatenated with padded joints; 3 EdgeConv layers (64, 64, 128) with per-mesh max pooling, a vertex-joint pair head (64) over vertex features and relative joint positions, padded joints masked; KL to softmax(-bone distance^2) weights plus a linear-blend-skinning loss under random poses (Rodrigues rotations); bf16 autocast for the network, fp32 skinning, AdamW, 900 steps; every 225 an evaluation on 8 held-out characters one at a time (no grad), the deformation error read back")
def skinning_weight_gnn_train(rng):
    k, chunk = _smoke(16, 4), _smoke(4096, 64)
    jmax = _smoke(52, 6)

    def make(n):
        chars = []
        for _ in range(n):
            nv = rng.randint(_smoke(1000, 30), _smoke(12000, 60))
            nj = rng.randint(_smoke(16, 3), jmax)
            v, nrm, joints, par, bone = _character(rng, nv, nj)
            nbr = _knn(v, k, chunk)
            with torch.no_grad():
                w = torch.softmax(-_bone_dist(v, joints, par) ** 2 / 0.003, -1)
            chars.append((v, nrm, joints, par, nbr, w, nv, nj))
        return chars

    train, test = make(_smoke(56, 4)), make(_smoke(8, 2))
    net = _SkinNet([6, _smoke(64, 8), _smoke(64, 8), _smoke(128, 16)], _smoke(64, 16)).cuda()
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=1e-4)

    def batch(chars):
        vs, ns, nbrs, ws, jpos, jmask, mesh = [], [], [], [], [], [], []
        off = 0
        for i, (v, nrm, joints, par, nbr, w, nv, nj) in enumerate(chars):
            vs.append(v), ns.append(nrm), nbrs.append(nbr + off)
            ws.append(_F.pad(w, (0, jmax - nj)))
            jpos.append(_F.pad(joints, (0, 0, 0, jmax - nj)))
            jmask.append(_F.pad(torch.ones(nj, device="cuda"), (0, jmax - nj)))
            mesh.append(torch.full((nv,), i, device="cuda", dtype=torch.long))
            off += nv
        return (torch.cat(vs), torch.cat(ns), torch.cat(nbrs), torch.cat(ws), torch.stack(jpos), torch.stack(jmask),
                torch.cat(mesh))

    def run(chars):
        v, nrm, nbr, w, jpos, jmask, mesh = batch(chars)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = net(torch.cat([v, nrm], -1), nbr, mesh, len(chars), jpos, v, jmask)
        rot = _rodrigues(torch.randn(len(chars), jmax, 3, device="cuda") * 0.4)
        return logits, w, v, jpos, rot, mesh

    steps = _smoke(900, 3)
    for step in range(steps):
        net.train()
        chosen, total = [], 0
        for _ in range(rng.randint(2, 6)):
            c = train[rng.randrange(len(train))]
            if total + c[6] <= _smoke(24000, 400):
                chosen.append(c)
                total += c[6]
        logits, w, v, jpos, rot, mesh = run(chosen)
        logp = torch.log_softmax(logits, -1)
        kl = (w * (torch.log(w.clamp_min(1e-8)) - logp)).sum(-1).mean()
        pred_v = _lbs(v, logp.exp(), jpos, rot, mesh)
        with torch.no_grad():
            ref_v = _lbs(v, w, jpos, rot, mesh)
        loss = kl + 10 * (pred_v - ref_v).norm(dim=-1).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
        del logits, w, v, jpos, rot, mesh, logp, kl, pred_v, ref_v
        if step % 40 == 0:
            float(loss)
        if (step + 1) % _smoke(225, 3) == 0:
            net.eval()
            errs = []
            with torch.no_grad():
                for c in test:
                    logits, w, v, jpos, rot, mesh = run([c])
                    d = (_lbs(v, torch.softmax(logits, -1), jpos, rot, mesh) - _lbs(v, w, jpos, rot, mesh))
                    errs.append(d.norm(dim=-1).mean())
                    del logits, w, v, jpos, rot, mesh, d
            torch.stack(errs).tolist()


# ---------------------------------------------------------------- speech-driven facial animation (blendshapes)


class _Audio2Face(_nn.Module):
    def __init__(self, nmel, d, depth, heads, nblend, nemo):
        super().__init__()
        self.front = _nn.Sequential(_nn.Conv1d(nmel, d, 5, stride=2, padding=2), _nn.GELU(),
                                    _nn.Conv1d(d, d, 3, padding=1), _nn.GELU())
        self.emo = _nn.Embedding(nemo, d)
        self.pos = _nn.Parameter(torch.randn(1, 4096, d) * 0.02)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(depth))
        self.out = _nn.Sequential(_nn.LayerNorm(d), _nn.Linear(d, nblend))

    def forward(self, mel, emo, valid):
        h = self.front(mel.transpose(1, 2)).transpose(1, 2)  # 100 fps -> 50 fps
        h = h + self.emo(emo)[:, None] + self.pos[:, : h.shape[1]]
        mask = ((valid - 1.0) * 1e4)[:, None, None, :].to(h.dtype)
        for blk in self.blocks:
            h = blk(h, mask)
        return torch.sigmoid(self.out(h).float())


@_workload("speech-driven facial animation written by hand in the manner of Audio2Face and FaceFormer (random init): clips of 2-12 s (drawn per clip) of 80-bin mel features at 100 fps in batches of 8-32 (drawn), padded to the batch's longest and uploaded from reused pinned host buffers on a side stream one batch ahead (waited on by event, record_stream'ed); a strided 1-D convolution front end to 50 fps, an emotion embedding (8 styles) and a 6-layer pre-norm transformer (width 256, 4 heads, key-padding masks) predicting 52 ARKit blendshape weights; targets from a fixed random teacher convolution of the mel; masked L1 plus a velocity loss; bf16 autocast, AdamW with warmup, 400 steps; every 100 an evaluation streaming a 60 s clip in 4 s windows with 1 s overlaps (cross-faded, no grad), the jitter read back")
def audio2face_blendshape_train(rng):
    nmel, d, nblend, nemo = 80, _smoke(256, 32), 52, 8
    bmax, tmax = _smoke(32, 3), _smoke(1200, 64)
    model = _Audio2Face(nmel, d, _smoke(6, 2), _smoke(4, 2), nblend, nemo).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=1e-2)
    steps = _smoke(400, 4)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 20))
    teacher = torch.randn(nblend, nmel, 9, device="cuda") / math.sqrt(nmel * 9)
    host = [torch.randn(bmax * tmax * nmel).pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    done = [None, None]

    def fetch(i, b, t):
        slot = i % 2
        if done[slot] is not None:
            done[slot].synchronize()
        with torch.cuda.stream(side):
            z = host[slot][: b * t * nmel].to("cuda", non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        done[slot] = ev
        return z, ev, b, t

    def targets(mel):
        y = _F.conv1d(mel.transpose(1, 2), teacher, padding=4)[..., ::2]
        return torch.sigmoid(y.transpose(1, 2) * 2)

    def draw():
        b = rng.randint(_smoke(8, 2), bmax)
        lens = [rng.randint(_smoke(200, 16), tmax) // 2 * 2 for _ in range(b)]
        return b, lens

    plan = [draw() for _ in range(steps)]
    nxt = fetch(0, plan[0][0], max(plan[0][1]))
    counter = 1
    for step in range(steps):
        model.train()
        z, ev, b, t = nxt
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        z.record_stream(cur)
        if step + 1 < steps:
            nxt = fetch(counter, plan[step + 1][0], max(plan[step + 1][1]))
            counter += 1
        lens = plan[step][1]
        mel = z.view(b, t, nmel)
        valid = (torch.arange(t // 2, device="cuda")[None] < torch.tensor(lens, device="cuda")[:, None] // 2).float()
        mel = mel * _F.interpolate(valid[:, None], size=t, mode="nearest")[:, 0, :, None]
        emo = torch.randint(0, nemo, (b,), device="cuda")
        y = targets(mel)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(mel, emo, valid)
        m = valid[..., None]
        l1 = ((pred - y).abs() * m).sum() / (m.sum() * nblend)
        vm = m[:, 1:] * m[:, :-1]
        vel = (((pred[:, 1:] - pred[:, :-1]) - (y[:, 1:] - y[:, :-1])).abs() * vm).sum() / (vm.sum() * nblend)
        loss = l1 + 0.5 * vel
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        del z, mel, valid, y, pred, m, vm, l1, vel
        if step % 25 == 0:
            float(loss)
        if (step + 1) % _smoke(100, 2) == 0:
            model.eval()
            total, win, hop = _smoke(6000, 96), _smoke(400, 32), _smoke(300, 24)
            starts = list(range(0, total - win + 1, hop))
            with torch.no_grad():
                emo = torch.randint(0, nemo, (1,), device="cuda")
                out = torch.zeros(1, total // 2, nblend, device="cuda")
                wsum = torch.zeros(1, total // 2, 1, device="cuda")
                ramp = torch.minimum(torch.linspace(0.05, 1, win // 2, device="cuda"),
                                     torch.linspace(1, 0.05, win // 2, device="cuda")).clamp_max(0.5) * 2
                for s0 in starts:
                    z, ev, _, _ = fetch(counter, 1, win)
                    counter += 1
                    cur = torch.cuda.current_stream()
                    cur.wait_event(ev)
                    z.record_stream(cur)
                    mel = z.view(1, win, nmel)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        p = model(mel, emo, torch.ones(1, win // 2, device="cuda"))
                    out[:, s0 // 2: s0 // 2 + win // 2] += p * ramp[None, :, None]
                    wsum[:, s0 // 2: s0 // 2 + win // 2] += ramp[None, :, None]
                    del z, mel, p
                anim = out / wsum.clamp_min(1e-6)
                (anim[:, 2:] - 2 * anim[:, 1:-1] + anim[:, :-2]).abs().mean().item()
            del out, wsum, anim

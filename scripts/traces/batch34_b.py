"""The thirty-fourth batch's second half (batch34.py holds the first; written in two to keep files small):
MeshGraphNets-style cloth simulation training on batches of meshes of varying size (with rollout evaluations),
ProteinMPNN-style inverse-folding training on length-varying protein batches under a token budget, DeepONet
operator learning with a varying number of query points per function (the next batch's queries prefetched on a side
stream), and learned primal-dual CT reconstruction trained at varying image sizes and projection-angle counts.
Same conventions and plumbing as batch34.py; record.py registers this module right after it, so that the batch's
workloads keep their order. Three are single-stream; deeponet_query_train uploads every next batch's sensors,
query coordinates and targets from reused pinned host buffers on a side stream while the current batch trains (the
compute stream waiting on the batch's event, the uploaded tensors record_stream'ed). proteinmpnn_train runs under
bf16 autocast; meshgraphnet_cloth_train, deeponet_query_train and ct_primaldual_train run in fp32.

Real sizes checked as batch34.py's header says: every workload run whole at its real sizes on the meta device, its
op outputs counted there for the estimates in record_new34.sh's header; the CPU smoke run (RECORD_SMOKE=1)
finished for all four.
"""

import math

import torch

from batch_common import Batch, upload

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


def _mlp(i, h, o, ln=True, layers=2, act=torch.nn.ReLU):
    nn = torch.nn
    mods = [nn.Linear(i, h), act()]
    for _ in range(layers - 1):
        mods += [nn.Linear(h, h), act()]
    mods.append(nn.Linear(h, o))
    if ln:
        mods.append(nn.LayerNorm(o))
    return nn.Sequential(*mods)


# ---------------------------------------------------------------- MeshGraphNets cloth simulation


@_workload("mesh-based physics simulation training (MeshGraphNets-style, cloth) with a model written by hand: encode-process-decode with 128-wide two-hidden-layer MLPs and LayerNorm, node features (velocity from noisy world positions, a 9-way node-type one-hot) and edge features (relative mesh-space and world-space positions and their norms), 15 message-passing steps (edge update from [edge, sender, receiver] gathered by index_select, messages summed into receivers by index_add_, node update from [node, aggregated], both residual), a decoder to per-node accelerations; batches of 1-3 meshes (drawn) of 300-2500 nodes each (drawn log-uniform) with about 6 directed edges a node (random local connectivity, both directions), concatenated with node offsets; training noise added to the positions, MSE on normalized accelerations, Adam with exponential decay, 200 steps; every 50 steps a no-grad rollout of 12 steps on one mesh of 500-4000 nodes (positions integrated, the loss read back at the end); fp32")
def meshgraphnet_cloth_train(rng):
    nn = torch.nn
    d, nmp, nsteps = _smoke(128, 16), _smoke(15, 2), _smoke(200, 2)
    lo, hi = _smoke(300, 6), _smoke(2500, 20)
    node_enc, edge_enc = _mlp(12, d, d), _mlp(7, d, d)
    edge_up = nn.ModuleList(_mlp(3 * d, d, d) for _ in range(nmp))
    node_up = nn.ModuleList(_mlp(2 * d, d, d) for _ in range(nmp))
    decoder = _mlp(d, d, 3, ln=False)
    model = nn.ModuleList([node_enc, edge_enc, edge_up, node_up, decoder]).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, 0.995)

    def build(sizes):
        srcs, dsts, off = [], [], 0
        for n in sizes:
            e = 3 * n
            s = torch.randint(0, n, (e,), device="cuda")
            t = (s + torch.randint(1, min(n, 40), (e,), device="cuda")) % n
            srcs += [s + off, t + off]
            dsts += [t + off, s + off]
            off += n
        ntype = torch.nn.functional.one_hot(torch.randint(0, 9, (off,), device="cuda"), 9).float()
        return torch.cat(srcs), torch.cat(dsts), torch.rand(off, 2, device="cuda"), ntype

    def step_fn(src, dst, mesh, ntype, world, prev):
        vel = world - prev
        h = node_enc(torch.cat([vel, ntype], -1))
        dm = mesh.index_select(0, src) - mesh.index_select(0, dst)
        dw = world.index_select(0, src) - world.index_select(0, dst)
        e = edge_enc(torch.cat([dm, dm.norm(dim=-1, keepdim=True), dw, dw.norm(dim=-1, keepdim=True)], -1))
        for eu, nu in zip(edge_up, node_up):
            e = e + eu(torch.cat([e, h.index_select(0, src), h.index_select(0, dst)], -1))
            agg = torch.zeros_like(h).index_add_(0, dst, e)
            h = h + nu(torch.cat([h, agg], -1))
        return decoder(h)

    for step in range(nsteps):
        sizes = [_loguniform(rng, lo, hi) for _ in range(rng.randint(1, 3))]
        src, dst, mesh, ntype = build(sizes)
        n = mesh.shape[0]
        world = torch.cat([mesh, torch.zeros(n, 1, device="cuda")], -1) + 0.01 * torch.randn(n, 3, device="cuda")
        prev = world - 0.001 * torch.randn(n, 3, device="cuda")
        noise = 0.003 * torch.randn(n, 3, device="cuda")
        target = torch.randn(n, 3, device="cuda") - noise
        pred = step_fn(src, dst, mesh, ntype, world + noise, prev)
        loss = (pred - target).pow(2).sum(-1).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % 5 == 4:
            sched.step()
        del pred, loss, src, dst, mesh, ntype, world, prev, noise, target
        if (step + 1) % _smoke(50, 2) == 0:
            with torch.no_grad():
                src, dst, mesh, ntype = build([_loguniform(rng, _smoke(500, 8), _smoke(4000, 24))])
                n = mesh.shape[0]
                world = torch.cat([mesh, torch.zeros(n, 1, device="cuda")], -1)
                prev = world.clone()
                for _ in range(_smoke(12, 2)):
                    acc = step_fn(src, dst, mesh, ntype, world, prev)
                    world, prev = 2 * world - prev + 1e-4 * acc, world
                world.pow(2).mean().cpu()
                del src, dst, mesh, ntype, world, prev, acc
    torch.cuda.synchronize()


# ---------------------------------------------------------------- ProteinMPNN inverse folding


class _MPNNLayer(torch.nn.Module):
    """A ProteinMPNN message-passing layer: messages from [h_i, h_E, h_j] over the K neighbours (3-layer GELU MLP),
    summed with a neighbour mask and scaled by 1/30, LayerNorm, a position-wise FFN; optionally an edge update."""

    def __init__(self, d, edge_update):
        super().__init__()
        nn = torch.nn
        self.msg = nn.Sequential(nn.Linear(3 * d, d), nn.GELU(), nn.Linear(d, d), nn.GELU(), nn.Linear(d, d))
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.eup = nn.Sequential(nn.Linear(3 * d, d), nn.GELU(), nn.Linear(d, d), nn.GELU(),
                                 nn.Linear(d, d)) if edge_update else None
        self.n3 = nn.LayerNorm(d) if edge_update else None

    def forward(self, hv, he, hj_fn, mask_attend, mask, ev=None):
        """hj_fn(hv) gives [h_E-side features, h_j] (B, L, K, 2d); ev, where given, replaces them (decoder)."""
        k = he.shape[2]
        hev = torch.cat([hv[:, :, None].expand(-1, -1, k, -1), hj_fn(hv) if ev is None else ev], -1)
        m = self.msg(hev) * mask_attend[..., None]
        hv = self.n1(hv + m.sum(2) / 30.0)
        hv = self.n2(hv + self.ffn(hv)) * mask[..., None]
        if self.eup is not None:
            hev = torch.cat([hv[:, :, None].expand(-1, -1, k, -1), hj_fn(hv)], -1)
            he = self.n3(he + self.eup(hev))
        return hv, he


@_workload("protein inverse-folding training (ProteinMPNN-style) with a model written by hand: backbone N/CA/C/O coordinates plus a virtual C-beta, a k-nearest-neighbour graph of 30 neighbours by CA distance (cdist, padding pushed away, topk), edge features from 16 radial basis functions of the 25 backbone atom-pair distances gathered over the neighbours plus a one-hot relative-position embedding, 3 encoder layers (message MLP over [h_i, h_E, h_j], edge updates) and 3 decoder layers with a random autoregressive decoding order (neighbours decoded earlier see their sequence embedding, the rest only encoder features), 21-way output with label-smoothed NLL over real residues; proteins of 50-500 residues (drawn log-uniform) packed into batches under a 4000-token budget (padded length x rows) with float residue masks, synthetic coordinates and sequences; Adam with Noam warmup, 280 steps, every 60 steps a no-grad evaluation of 4 batches (loss and accuracy read back); bf16 autocast")
def proteinmpnn_train(rng):
    nn, f = torch.nn, torch.nn.functional
    d, K, nsteps = _smoke(128, 16), _smoke(30, 4), _smoke(280, 2)
    nl, nrbf, budget = _smoke(3, 1), 16, _smoke(4000, 60)
    lo, hi = _smoke(50, 6), _smoke(500, 20)
    edge_in = nn.Linear(25 * nrbf + 16, d)
    pos_emb = nn.Linear(66, 16)
    enorm = nn.LayerNorm(d)
    w_v, w_e, w_s = nn.Linear(d, d), nn.Linear(d, d), nn.Embedding(21, d)
    enc = nn.ModuleList(_MPNNLayer(d, True) for _ in range(nl))
    dec = nn.ModuleList(_MPNNLayer(d, False) for _ in range(nl))
    out = nn.Linear(d, 21)
    model = nn.ModuleList([edge_in, pos_emb, enorm, w_v, w_e, w_s, enc, dec, out]).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=0.0, betas=(0.9, 0.98), eps=1e-9)
    mu = torch.linspace(2.0, 22.0, nrbf, device="cuda")
    sigma = (22.0 - 2.0) / nrbf

    def draw_batch():
        lens = []
        while True:
            n = _loguniform(rng, lo, hi)
            if lens and (len(lens) + 1) * max(lens + [n]) > budget:
                break
            lens.append(n)
        return lens

    def gather_nb(x, idx):
        """x (B, L, C), idx (B, L, K) -> (B, L, K, C)."""
        b, L, k = idx.shape
        return x.gather(1, idx.flatten(1)[..., None].expand(-1, -1, x.shape[-1])).view(b, L, k, -1)

    def run(lens):
        b, L = len(lens), max(lens)
        ln = torch.tensor(lens, device="cuda")
        mask = (torch.arange(L, device="cuda")[None] < ln[:, None]).float()
        ca = torch.cumsum(torch.randn(b, L, 3, device="cuda") * 2.2, 1)
        X = ca[:, :, None] + torch.randn(b, L, 4, 3, device="cuda")  # N, CA, C, O around the trace
        bv, cv = X[:, :, 1] - X[:, :, 0], X[:, :, 2] - X[:, :, 1]
        cb = -0.58273431 * torch.cross(bv, cv, dim=-1) + 0.56802827 * bv - 0.54067466 * cv + X[:, :, 1]
        atoms = torch.cat([X, cb[:, :, None]], 2)  # (B, L, 5, 3)
        dca = torch.cdist(atoms[:, :, 1], atoms[:, :, 1])
        m2 = mask[:, :, None] * mask[:, None, :]
        dca = dca + (1 - m2) * 1e4
        k = min(K, L)
        _, eidx = dca.topk(k, dim=-1, largest=False)
        feats = []
        for a in range(5):
            nb = gather_nb(atoms.flatten(2), eidx).unflatten(-1, (5, 3))
            for c in range(5):
                dist = (atoms[:, :, a][:, :, None] - nb[:, :, :, c]).pow(2).sum(-1).add(1e-6).sqrt()
                feats.append(torch.exp(-((dist[..., None] - mu) / sigma) ** 2))
        off = (eidx - torch.arange(L, device="cuda")[None, :, None]).clamp(-32, 32) + 32
        feats.append(pos_emb(f.one_hot(off, 66).float()))
        he = w_e(enorm(edge_in(torch.cat(feats, -1))))
        del feats, nb, dca
        mask_attend = gather_nb(mask[..., None], eidx).squeeze(-1) * mask[..., None]
        hv = torch.zeros(b, L, d, device="cuda")
        hv = w_v(hv)
        for layer in enc:
            hv, he = layer(hv, he, lambda h: torch.cat([he, gather_nb(h, eidx)], -1), mask_attend, mask)
        seq = torch.randint(0, 20, (b, L), device="cuda")
        hs = w_s(seq)
        hes = torch.cat([he, gather_nb(hs, eidx)], -1)
        order = (torch.randn(b, L, device="cuda") + (1 - mask) * 1e4).argsort(-1).argsort(-1).float()
        earlier = (gather_nb(order[..., None], eidx).squeeze(-1) < order[..., None]).float()
        bw = (earlier * mask_attend)[..., None]
        fw = ((1 - earlier) * mask_attend)[..., None]
        hex_enc = fw * torch.cat([he, gather_nb(hv, eidx)], -1)
        for layer in dec:
            ev = bw * torch.cat([hes[..., :d], gather_nb(hv, eidx)], -1) + hex_enc
            ev = ev + bw * torch.cat([torch.zeros_like(he), gather_nb(hs, eidx)], -1)
            hv, _ = layer(hv, he, None, mask_attend, mask, ev=ev)
        logp = out(hv).float().log_softmax(-1)
        onehot = f.one_hot(seq, 21).float()
        smooth = (onehot + 0.1 / 21) / (1 + 0.1)
        nll = -(smooth * logp).sum(-1)
        loss = (nll * mask).sum() / 2000.0
        acc = ((logp.argmax(-1) == seq).float() * mask).sum() / mask.sum()
        return loss, acc

    with torch.autocast("cuda", dtype=torch.bfloat16):
        for step in range(nsteps):
            lr = 2.0 * d ** -0.5 * min((step + 1) ** -0.5, (step + 1) * 400 ** -1.5)
            for g in opt.param_groups:
                g["lr"] = lr
            loss, acc = run(draw_batch())
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            del loss, acc
            if (step + 1) % _smoke(60, 2) == 0:
                with torch.no_grad():
                    vals = []
                    for _ in range(_smoke(4, 1)):
                        vals += list(run(draw_batch()))
                    torch.stack(vals).float().cpu()
                    del vals
    torch.cuda.synchronize()


# ---------------------------------------------------------------- DeepONet operator learning


@_workload("neural operator training (DeepONet, unstacked) with a model written by hand: a branch MLP (4 hidden layers of 256, GELU) on each input function sampled at 128 fixed sensors, a trunk on query coordinates (x, t) lifted by 64 random Fourier features then 5 hidden layers of 256 (tanh), 2 outputs x 128 basis functions combined by einsum plus a bias; batches of 8-48 functions (drawn) with 256-8192 query points each (drawn log-uniform, at most 160k points a batch); each next batch's sensor values, query coordinates and targets written into one of two reused pinned host buffers and uploaded on a side stream while the current batch trains (the compute stream waits on the batch's event, the uploads record_stream'ed); MSE loss, Adam with a step learning-rate decay, 2300 steps; every 400 steps a no-grad evaluation of 16 functions on a dense 64x64-128x128 grid (drawn) with the relative L2 error read back; fp32")
def deeponet_query_train(rng):
    nn = torch.nn
    m, p, w, nout = 128, _smoke(128, 8), _smoke(256, 16), 2
    nsteps, cap = _smoke(2300, 3), _smoke(160_000, 400)
    nff = _smoke(64, 4)
    branch = _mlp(m, w, p * nout, ln=False, layers=4, act=nn.GELU)
    trunk = _mlp(2 * nff, w, p * nout, ln=False, layers=5, act=nn.Tanh)
    bias = nn.Parameter(torch.zeros(nout))
    model = nn.ModuleList([branch, trunk]).cuda()
    bias = nn.Parameter(bias.detach().cuda())
    bff = torch.randn(2, nff, device="cuda") * 4.0
    opt = torch.optim.Adam(list(model.parameters()) + [bias], lr=1e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=_smoke(600, 1), gamma=0.5)
    hosts = [(torch.randn(48, m).pin_memory(), torch.rand(cap, 2).pin_memory(), torch.randn(cap, nout).pin_memory())
             for _ in range(2)]
    side = torch.cuda.Stream()

    def draw():
        b = rng.randint(_smoke(8, 1), _smoke(48, 3))
        q = min(_loguniform(rng, _smoke(256, 4), _smoke(8192, 64)), cap // b)
        return b, q

    def stage(k, b, q):
        hs, hx, hy = hosts[k]
        hs[:1].normal_()  # the batch's first function written into the buffer (the rest reused)
        hx[:q].uniform_()
        with torch.cuda.stream(side):
            u = upload(hs[:b])
            x = upload(hx[:b * q].view(b, q, 2))
            y = upload(hy[:b * q].view(b, q, nout))
            ev = side.record_event()
        return (u, x, y), ev

    def forward(u, x):
        br = branch(u).unflatten(-1, (nout, p))
        z = x @ bff
        tr = trunk(torch.cat([torch.sin(z), torch.cos(z)], -1)).unflatten(-1, (nout, p))
        return torch.einsum("bop,bqop->bqo", br, tr) + bias

    nxt = draw()
    staged = stage(0, *nxt)
    for step in range(nsteps):
        (u, x, y), ev = staged
        torch.cuda.current_stream().wait_event(ev)
        for t in (u, x, y):
            t.record_stream(torch.cuda.current_stream())
        if step + 1 < nsteps:
            nxt = draw()
            staged = stage((step + 1) % 2, *nxt)
        loss = (forward(u, x) - y).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        sched.step()
        del u, x, y, ev, loss
        if (step + 1) % _smoke(400, 3) == 0:
            with torch.no_grad():
                g = rng.choice(_smoke([64, 96, 128], [4, 6]))
                ys, xs = torch.meshgrid(torch.linspace(0, 1, g, device="cuda"), torch.linspace(0, 1, g, device="cuda"),
                                        indexing="ij")
                grid = torch.stack([xs, ys], -1).flatten(0, 1)[None].expand(16, -1, -1)
                u = torch.randn(16, m, device="cuda")
                truth = torch.randn(16, g * g, nout, device="cuda")
                pred = forward(u, grid)
                ((pred - truth).norm(dim=(1, 2)) / truth.norm(dim=(1, 2))).mean().cpu()
                del grid, u, truth, pred
    torch.cuda.synchronize()


# ---------------------------------------------------------------- learned primal-dual CT reconstruction


@_workload("computed-tomography reconstruction training by a learned primal-dual network (Adler & Oktem-style) written by hand: a differentiable parallel-beam projector (the image repeated over the angles, rotated by affine_grid + grid_sample, summed over rows) and its back-projector (each view smeared over the image and rotated back, summed over angles), 10 unrolled iterations each with a dual CNN on [dual (5 channels), projection of the primal, measured sinogram] and a primal CNN on [primal (5 channels), back-projection of the dual] (3 convs of 32, PReLU, residual updates); batches of 1-6 phantoms (drawn, capped by angles x pixels) at an image size drawn from 64-192 in steps of 32 with 30-180 projection angles (drawn, the rotation grids built per batch), smooth random phantoms from bicubically upsampled noise, sinograms with drawn Gaussian noise; MSE to the phantom, Adam with cosine decay and grad-norm clipping to 1, 265 steps, every 60 steps a no-grad evaluation (PSNR read back); fp32")
def ct_primaldual_train(rng):
    nn, f = torch.nn, torch.nn.functional
    ch, niter, nsteps = _smoke(32, 4), _smoke(10, 2), _smoke(265, 2)
    sizes = _smoke([64, 96, 128, 160, 192], [12, 16])
    cap = _smoke(4 * 120 * 128 * 128, 6 * 8 * 16 * 16)

    def cnn(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, ch, 3, 1, 1), nn.PReLU(ch), nn.Conv2d(ch, ch, 3, 1, 1), nn.PReLU(ch),
                             nn.Conv2d(ch, cout, 3, 1, 1))

    dual_nets = nn.ModuleList(cnn(7, 5) for _ in range(niter))
    primal_nets = nn.ModuleList(cnn(6, 5) for _ in range(niter))
    model = nn.ModuleList([dual_nets, primal_nets]).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.99))

    def grids(b, a, s):
        th = torch.linspace(0, math.pi, a + 1, device="cuda")[:-1]
        c, sn, z = torch.cos(th), torch.sin(th), torch.zeros_like(th)
        rot = torch.stack([torch.stack([c, -sn, z], -1), torch.stack([sn, c, z], -1)], 1)
        inv = rot.clone()
        inv[:, 0, 1], inv[:, 1, 0] = sn, -sn
        fw = f.affine_grid(rot.repeat(b, 1, 1), (b * a, 1, s, s), align_corners=False)
        bw = f.affine_grid(inv.repeat(b, 1, 1), (b * a, 1, s, s), align_corners=False)
        return fw, bw

    def project(x, fw, a):
        b, _, s, _ = x.shape
        r = f.grid_sample(x.expand(b, a, s, s).reshape(b * a, 1, s, s), fw, align_corners=False)
        return r.sum(2).view(b, 1, a, s) / s

    def backproject(y, bw):
        b, _, a, s = y.shape
        sm = y.reshape(b * a, 1, 1, s).expand(b * a, 1, s, s)
        r = f.grid_sample(sm, bw, align_corners=False)
        return r.view(b, a, s, s).sum(1, keepdim=True) * (math.pi / a)

    def reconstruct(g, fw, bw, a):
        b, _, _, s = g.shape
        primal = torch.zeros(b, 5, s, s, device="cuda")
        dual = torch.zeros(b, 5, a, s, device="cuda")
        for dn, pn in zip(dual_nets, primal_nets):
            dual = dual + dn(torch.cat([dual, project(primal[:, 1:2], fw, a), g], 1))
            primal = primal + pn(torch.cat([primal, backproject(dual[:, :1], bw)], 1))
        return primal[:, :1]

    def draw():
        s = rng.choice(sizes)
        a = rng.randint(_smoke(30, 4), _smoke(180, 10))
        b = rng.randint(1, max(1, min(6, cap // (a * s * s))))
        with torch.no_grad():
            phantom = f.interpolate(torch.randn(b, 1, 8, 8, device="cuda"), size=(s, s), mode="bicubic",
                                    align_corners=False).clamp(0, None)
            fw, bw = grids(b, a, s)
            g = project(phantom, fw, a)
            g = g + rng.uniform(0.005, 0.05) * torch.randn_like(g)
        return phantom, g, fw, bw, a

    for step in range(nsteps):
        lr = 1e-3 * 0.5 * (1 + math.cos(math.pi * step / nsteps))
        for gr in opt.param_groups:
            gr["lr"] = lr
        phantom, g, fw, bw, a = draw()
        loss = f.mse_loss(reconstruct(g, fw, bw, a), phantom)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del phantom, g, fw, bw, loss
        if (step + 1) % _smoke(60, 2) == 0:
            with torch.no_grad():
                phantom, g, fw, bw, a = draw()
                mse = f.mse_loss(reconstruct(g, fw, bw, a), phantom)
                (10 * torch.log10(phantom.amax().pow(2) / mse)).cpu()
                del phantom, g, fw, bw, mse
    torch.cuda.synchronize()

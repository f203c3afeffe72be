"""The forty-eighth batch of held-out workloads, second half (batch48.py holds the first): combinatorial
optimization, operations research and optimal transport on the GPU, written in torch alone. A job-shop scheduling
agent trained with PPO over disjunctive-graph states (Zhang et al. 2020, L2D: a GIN over the dense adjacency of
the operations, the environment stepped on the device for a batch of instances, instance sizes drawn per
iteration, a greedy evaluation on larger held-out instances), unsupervised neural solvers for maximum independent
set and max-cut on random graphs of varying size (Karalias and Loukas 2020, "Erdos goes neural": a GNN over edge
lists giving node probabilities, the probabilistic-penalty losses, decoding by rounds of local-maximum selection
and by greedy flips), decision-focused learning with differentiable optimization layers (a mean-variance portfolio
QP solved by unrolled batched ADMM with sort-based simplex projections inside the training loop, then Warcraft-style
shortest paths learned through a perturbed optimizer and the Fenchel-Young loss, the solver a vectorised
Bellman-Ford), and a capacitated vehicle-routing inference service (an attention-model policy answering batches of
requests of different sizes by beam search or by multi-sample decoding, the requests uploaded on a side stream).
Same conventions as batch48.py: nothing downloaded, data drawn on the device, `rng` the workload's random.Random
for every shape, count and sampled choice, sizes through `_smoke(real, small)`. No control flow reads a tensor's
value (episode lengths, solver iterations and decoding steps fixed on the host, finished tours continuing with
zero-cost depot moves; masks are additive or multiply, boolean-mask indexing is avoided); rewards, losses,
objective values and costs are read back only at logging points. am_cvrp_beam_serve uses a side stream (uploads
waited on by event, the tensors record_stream'ed); the others are single-stream. l2d_jobshop_ppo's rollouts and
am_cvrp_beam_serve run under bf16 autocast; erdos_gnn_mis_maxcut and dfl_admm_shortpath are fp32.

Real sizes checked before recording, as batch48.py's header says (the same meta-device runner, op outputs
counted, peak live bytes tracked), each run whole at its final sizes: l2d_jobshop_ppo 305,277 op outputs, peak
0.81 GB; erdos_gnn_mis_maxcut 318,036, 3.06 GB; dfl_admm_shortpath 299,765, 2.40 GB; am_cvrp_beam_serve 324,488,
0.20 GB. record_new48.sh's header has the figures, with the first runs that led to resizes. The CPU smoke run
(RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional


# ---------------------------------------------------------------- job-shop scheduling by PPO (L2D)


class _JsspEnv:
    """A batch of job-shop instances (J jobs of M operations each, every job visiting the machines in a random
    order) scheduled on the device, one operation a step, each appended to its machine (non-delay): the state is
    the disjunctive graph (job-chain edges plus the machine order so far) and per-operation features (lower bound
    of the completion time, scheduled flag)."""

    def __init__(self, bsz, jobs, machines):
        self.b, self.j, self.m = bsz, jobs, machines
        n = jobs * machines
        self.n = n
        self.proc = torch.randint(1, 100, (bsz, jobs, machines), device="cuda").float()
        self.mach = torch.rand(bsz, jobs, machines, device="cuda").argsort(2).view(bsz, n)
        self.ptr = torch.zeros(bsz, jobs, dtype=torch.long, device="cuda")
        self.job_ready = torch.zeros(bsz, jobs, device="cuda")
        self.mach_ready = torch.zeros(bsz, machines, device="cuda")
        self.last_on = torch.full((bsz, machines), -1, dtype=torch.long, device="cuda")
        self.end = torch.zeros(bsz, n, device="cuda")
        self.sched = torch.zeros(bsz, n, device="cuda")
        eye = torch.eye(n, device="cuda")
        chain = torch.diag(torch.ones(n - 1, device="cuda"), -1)
        chain = chain * (torch.arange(n, device="cuda") % machines != 0).float()[:, None]
        self.adj = (eye + chain)[None].expand(bsz, n, n).contiguous()
        self.scale = self.proc.sum((1, 2)).max() / jobs
        self.lb = self.lower_bound()

    def lower_bound(self):
        """Completion-time lower bounds: actual end times where scheduled, else the job's ready time plus the
        processing times of the job's unscheduled operations up to this one."""
        sched = self.sched.view(self.b, self.j, self.m)
        rest = torch.cumsum(self.proc * (1 - sched), 2) + self.job_ready[..., None]
        return torch.where(sched > 0, self.end.view_as(rest), rest).view(self.b, self.n)

    def observe(self):
        feat = torch.stack([self.lb / self.scale, self.sched], -1)
        cand = torch.arange(self.j, device="cuda")[None] * self.m + self.ptr.clamp_max(self.m - 1)
        mask = torch.where(self.ptr >= self.m, torch.full_like(self.job_ready, float("-inf")),
                           torch.zeros_like(self.job_ready))
        return feat, self.adj, cand, mask

    def step(self, job, cand):
        op = cand.gather(1, job[:, None])[:, 0]
        mc = self.mach.gather(1, op[:, None])
        p = self.proc.view(self.b, self.n).gather(1, op[:, None])
        st = torch.maximum(self.job_ready.gather(1, job[:, None]), self.mach_ready.gather(1, mc))
        en = st + p
        self.job_ready = self.job_ready.scatter(1, job[:, None], en)
        self.mach_ready = self.mach_ready.scatter(1, mc, en)
        self.end = self.end.scatter(1, op[:, None], en)
        self.sched = self.sched.scatter(1, op[:, None], torch.ones_like(en))
        self.ptr = self.ptr + _F.one_hot(job, self.j)
        prev = self.last_on.gather(1, mc)[:, 0]
        flat = op * self.n + prev.clamp_min(0)
        add = (prev >= 0).float()[:, None]
        self.adj = self.adj.view(self.b, -1).scatter_add(1, flat[:, None], add).view(self.b, self.n, self.n)
        self.last_on = self.last_on.scatter(1, mc, op[:, None])
        old = self.lb.amax(1)
        self.lb = self.lower_bound()
        return (old - self.lb.amax(1)) / self.scale


class _L2dPolicy(torch.nn.Module):
    """A GIN over the disjunctive graph (sum aggregation by batched matmul with the adjacency), an actor scoring
    each job's next operation with the graph's mean embedding and a critic on the mean embedding."""

    def __init__(self, d, layers):
        super().__init__()
        self.inp = torch.nn.Linear(2, d)
        self.gin = torch.nn.ModuleList([torch.nn.Sequential(torch.nn.Linear(d, d), torch.nn.BatchNorm1d(d),
                                                            torch.nn.ReLU(), torch.nn.Linear(d, d))
                                        for _ in range(layers)])
        self.actor = torch.nn.Sequential(torch.nn.Linear(2 * d, d), torch.nn.Tanh(), torch.nn.Linear(d, 1))
        self.critic = torch.nn.Sequential(torch.nn.Linear(d, d), torch.nn.Tanh(), torch.nn.Linear(d, 1))

    def forward(self, feat, adj, cand, mask):
        h = self.inp(feat)
        b, n, d = h.shape
        for layer in self.gin:
            h = torch.relu(layer((torch.bmm(adj.to(h.dtype), h) + h).view(b * n, d)).view(b, n, d)) + h
        g = h.mean(1)
        hc = h.gather(1, cand[..., None].expand(b, cand.shape[1], d))
        logits = self.actor(torch.cat([hc, g[:, None].expand_as(hc)], -1))[..., 0].float() + mask
        return torch.log_softmax(logits, -1), self.critic(g)[:, 0].float()


@_workload("scheduling by deep reinforcement learning, L2D (Zhang et al. 2020) for the job-shop problem written by hand (random init): a 4-layer GIN (width 64, BatchNorm) over the dense disjunctive-graph adjacency of the operations (bmm aggregation), an actor over each job's next operation and a critic; 22 PPO iterations, each at an instance size drawn from 6x6 to 15x10 jobs x machines (36-150 operations), 24-64 environments (drawn) stepped on the device (non-delay dispatch, machine and job ready times by gather/scatter, the machine-order edge added to each adjacency by scatter_add, reward the decrease of the makespan lower bound), a rollout of one step per operation without grad under bf16 autocast (actions sampled by multinomial, every state's adjacency kept in fp16), GAE (gamma 1, lambda 0.95), then 3 PPO epochs over minibatches of 512-1024 stored states (clipped ratio 0.2, value loss, entropy bonus) with Adam and gradient clipping 0.5; every 7 iterations a greedy evaluation on 32 held-out 15x10 or 20x10 instances, the mean makespan read back")
def l2d_jobshop_ppo(rng):
    pol = _L2dPolicy(_smoke(64, 8), 4).cuda()
    opt = torch.optim.Adam(pol.parameters(), lr=2e-4)
    sizes = _smoke([(6, 6), (8, 8), (10, 5), (10, 10), (15, 5), (15, 10)], [(3, 3), (4, 3)])
    for it in range(_smoke(22, 2)):
        jobs, machines = rng.choice(sizes)
        bsz = rng.choice(_smoke([24, 32, 48, 64], [2, 3]))
        env = _JsspEnv(bsz, jobs, machines)
        feats, adjs, cands, masks, acts, logps, vals, rews = [], [], [], [], [], [], [], []
        pol.eval()
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            for _ in range(env.n):
                feat, adj, cand, mask = env.observe()
                lp, v = pol(feat, adj, cand, mask)
                a = torch.multinomial(lp.exp(), 1)[:, 0]
                feats.append(feat)
                adjs.append(adj.half())
                cands.append(cand)
                masks.append(mask)
                acts.append(a)
                logps.append(lp.gather(1, a[:, None])[:, 0])
                vals.append(v)
                rews.append(env.step(a, cand))
        t = env.n
        rew, val = torch.stack(rews), torch.stack(vals)
        adv = torch.zeros_like(rew)
        last = torch.zeros(bsz, device="cuda")
        for k in reversed(range(t)):
            nv = val[k + 1] if k + 1 < t else torch.zeros_like(last)
            last = rew[k] + nv - val[k] + 0.95 * last
            adv[k] = last
        ret = (adv + val).reshape(-1)
        adv = ((adv - adv.mean()) / (adv.std() + 1e-8)).reshape(-1)
        feat_all, adj_all = torch.cat(feats), torch.cat(adjs)
        cand_all, mask_all = torch.cat(cands), torch.cat(masks)
        act_all, lp_all = torch.cat(acts), torch.cat(logps)
        del feats, adjs, cands, masks, acts, logps, vals, rews, rew, val, env
        pol.train()
        total = t * bsz
        mb = rng.choice(_smoke([512, 1024], [8]))
        for _ in range(3):
            perm = torch.randperm(total, device="cuda")
            for s0 in range(0, total, mb):
                idx = perm[s0:s0 + mb]
                lp, v = pol(feat_all[idx], adj_all[idx], cand_all[idx], mask_all[idx])
                nlp = lp.gather(1, act_all[idx][:, None])[:, 0]
                ratio = (nlp - lp_all[idx]).exp()
                a = adv[idx]
                pl = -torch.minimum(ratio * a, ratio.clamp(0.8, 1.2) * a).mean()
                vl = _F.mse_loss(v, ret[idx])
                ent = -(lp.exp() * torch.nan_to_num(lp, neginf=0.0)).sum(1).mean()
                loss = pl + 0.5 * vl - 0.01 * ent
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(pol.parameters(), 0.5)
                opt.step()
                del idx, lp, v, nlp, ratio, a, pl, vl, ent, loss
            del perm
        del feat_all, adj_all, cand_all, mask_all, act_all, lp_all, adv, ret
        if (it + 1) % _smoke(7, 2) == 0:
            jobs, machines = rng.choice(_smoke([(15, 10), (20, 10)], [(5, 3)]))
            env = _JsspEnv(_smoke(32, 2), jobs, machines)
            pol.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for _ in range(env.n):
                    feat, adj, cand, mask = env.observe()
                    lp, _ = pol(feat, adj, cand, mask)
                    env.step(lp.argmax(1), cand)
            env.mach_ready.amax(1).mean().cpu()
            del env


# ---------------------------------------------------------------- Erdos goes neural: MIS and max-cut


def _graph_batch(rng, ngraphs, nmin, nmax, deg_lo, deg_hi):
    """A batch of random graphs as one disconnected graph: sizes and mean degrees drawn on the host, edges of
    each graph drawn on the device at once (Erdos-Renyi, or skewed endpoints for a heavy-tailed degree
    distribution), both directions kept. Returns src, dst, the graph of every node and the node counts."""
    sizes = [int(_loguniform(rng, nmin, nmax)) for _ in range(ngraphs)]
    degs = [rng.uniform(deg_lo, deg_hi) for _ in range(ngraphs)]
    medges = [max(1, int(n * dg / 2)) for n, dg in zip(sizes, degs)]
    offs = [0]
    for n in sizes[:-1]:
        offs.append(offs[-1] + n)
    gid = torch.repeat_interleave(torch.arange(ngraphs, device="cuda"), torch.tensor(medges, device="cuda"),
                                  output_size=sum(medges))  # the size given: no device-to-host sync
    nsz = torch.tensor(sizes, device="cuda", dtype=torch.float32)[gid]
    off = torch.tensor(offs, device="cuda")[gid]
    skew = rng.choice([1.0, 2.0])
    u = (torch.rand(gid.shape[0], device="cuda").pow(skew) * nsz).long() + off
    v = (torch.rand(gid.shape[0], device="cuda") * nsz).long() + off
    src, dst = torch.cat([u, v]), torch.cat([v, u])
    node_g = torch.repeat_interleave(torch.arange(ngraphs, device="cuda"), torch.tensor(sizes, device="cuda"),
                                     output_size=sum(sizes))
    del gid, nsz, off, u, v
    return src, dst, node_g, sizes


class _ErdosGnn(torch.nn.Module):
    """GIN layers with residuals and layer norms over an edge list (sum aggregation by index_add_), node features
    from degrees and random values, a sigmoid head giving each node's probability of being in the set."""

    def __init__(self, d, layers):
        super().__init__()
        self.inp = torch.nn.Linear(3, d)
        self.layers = torch.nn.ModuleList([torch.nn.Sequential(torch.nn.Linear(d, d), torch.nn.ReLU(),
                                                               torch.nn.Linear(d, d)) for _ in range(layers)])
        self.norms = torch.nn.ModuleList([torch.nn.LayerNorm(d) for _ in range(layers)])
        self.head = torch.nn.Sequential(torch.nn.Linear(d, d), torch.nn.ReLU(), torch.nn.Linear(d, 1))

    def forward(self, src, dst, nnodes):
        deg = torch.zeros(nnodes, device="cuda").index_add_(0, dst, torch.ones_like(dst, dtype=torch.float32))
        x = torch.stack([deg / 10, deg.log1p(), torch.rand(nnodes, device="cuda")], 1)
        h = self.inp(x)
        for layer, norm in zip(self.layers, self.norms):
            agg = torch.zeros_like(h).index_add_(0, dst, h[src])
            h = norm(h + layer(h + agg))
        return torch.sigmoid(self.head(h)[:, 0])


def _mis_decode(p, src, dst, nnodes, rounds):
    """Rounds of selection: every undecided node whose probability is the largest among its undecided neighbours
    joins the set and its neighbours are removed (scatter_reduce amax, index_add_)."""
    und = torch.ones(nnodes, device="cuda")
    sel = torch.zeros(nnodes, device="cuda")
    for _ in range(rounds):
        s = p * und - (1 - und)
        nb = torch.full((nnodes,), -2.0, device="cuda").scatter_reduce(0, dst, s[src], "amax")
        pick = ((s > nb) & (und > 0)).float()
        hit = torch.zeros(nnodes, device="cuda").index_add_(0, dst, pick[src])
        sel = sel + pick
        und = und * (1 - pick) * (hit == 0).float()
        del s, nb, pick, hit
    return sel


def _cut_decode(p, src, dst, nnodes, rounds):
    """Threshold at 1/2, then rounds of greedy local search: nodes whose flip gains the most among their
    neighbours flip together (gains by index_add_, the local maxima by scatter_reduce amax)."""
    side = (p > 0.5).float() * 2 - 1
    for _ in range(rounds):
        gain = torch.zeros(nnodes, device="cuda").index_add_(0, dst, side[src]) * side
        nb = torch.full((nnodes,), -1e9, device="cuda").scatter_reduce(0, dst, gain[src], "amax")
        flip = ((gain > 0) & (gain > nb)).float()
        side = side * (1 - 2 * flip)
        del gain, nb, flip
    return side


@_workload("unsupervised neural combinatorial optimization, Erdos goes neural (Karalias and Loukas 2020) written by hand (random init, fp32): two tasks one after another, maximum independent set (8 GIN layers of width 128) then max-cut (6 layers of width 96); 390 training steps each on batches of 32-128 random graphs of 50-1500 nodes (drawn per graph, mean degree 3-12 drawn, Erdos-Renyi or heavy-tailed endpoints, one disconnected edge list made on the device at once): node features from degrees, sum aggregation by index_add_ over the edges, residual layer norms, node probabilities by sigmoid; the probabilistic-penalty losses (MIS: minus the expected set size plus beta 2 times the expected violated edges, per graph by index_add_; max-cut: minus the expected cut), Adam, gradient clipping 1; every 65 steps an evaluation without grad on 64 larger held-out graphs (500-5000 nodes): MIS decoded by 40 rounds of local-maximum selection (scatter_reduce amax over neighbours, neighbours removed by index_add_), the cut by thresholding and 25 rounds of greedy local-search flips, set sizes, violations and cut values per graph read back")
def erdos_gnn_mis_maxcut(rng):
    for task, d, layers in (("mis", _smoke(128, 16), 8), ("maxcut", _smoke(96, 16), 6)):
        model = _ErdosGnn(d, layers).cuda()
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        for step in range(_smoke(390, 3)):
            src, dst, node_g, sizes = _graph_batch(rng, rng.randint(_smoke(32, 2), _smoke(128, 4)),
                                                   _smoke(50, 5), _smoke(1500, 20), 3, 12)
            nn_ = len(sizes)
            nnodes = node_g.shape[0]
            p = model(src, dst, nnodes)
            pe = p[src] * p[dst]
            eg = node_g[src]
            if task == "mis":
                size = torch.zeros(nn_, device="cuda").index_add_(0, node_g, p)
                viol = torch.zeros(nn_, device="cuda").index_add_(0, eg, pe) / 2
                per = -size + 2.0 * viol
            else:
                per = -torch.zeros(nn_, device="cuda").index_add_(0, eg, p[src] + p[dst] - 2 * pe) / 4
            loss = (per / torch.tensor(sizes, device="cuda", dtype=torch.float32)).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            del src, dst, node_g, p, pe, eg, per, loss
            if (step + 1) % _smoke(65, 2) == 0:
                with torch.no_grad():
                    src, dst, node_g, sizes = _graph_batch(rng, _smoke(64, 2), _smoke(500, 10), _smoke(5000, 30),
                                                           3, 12)
                    nnodes = node_g.shape[0]
                    p = model(src, dst, nnodes)
                    if task == "mis":
                        sel = _mis_decode(p, src, dst, nnodes, _smoke(40, 3))
                        out = torch.stack([torch.zeros(len(sizes), device="cuda").index_add_(0, node_g, sel),
                                           torch.zeros(len(sizes), device="cuda").index_add_(
                                               0, node_g[src], sel[src] * sel[dst])])
                    else:
                        side = _cut_decode(p, src, dst, nnodes, _smoke(25, 3))
                        out = torch.zeros(len(sizes), device="cuda").index_add_(
                            0, node_g[src], (1 - side[src] * side[dst]) / 4)
                    out.cpu()
                    del src, dst, node_g, p, out
        del model, opt


# ---------------------------------------------------------------- decision-focused learning


def _proj_simplex(v):
    """Euclidean projection of each row onto the probability simplex (Duchi et al. 2008, sort-based)."""
    n = v.shape[-1]
    s = v.sort(-1, descending=True).values
    css = s.cumsum(-1) - 1
    ind = torch.arange(1, n + 1, device=v.device, dtype=v.dtype)
    cond = (s - css / ind > 0).float()
    rho = cond.sum(-1, keepdim=True).long().clamp_min(1) - 1
    theta = css.gather(-1, rho) / (rho + 1).to(v.dtype)
    return (v - theta).clamp_min(0)


def _admm_portfolio(mu, chol, rho, gamma, iters):
    """min_w gamma/2 w^T S w - mu^T w over the simplex by ADMM (x: the quadratic step, a Cholesky solve with
    gamma S + rho I factored once; z: the simplex projection; u: the scaled dual), unrolled so gradients flow."""
    bsz, n = mu.shape
    z = torch.full((bsz, n), 1.0 / n, device="cuda")
    u = torch.zeros_like(z)
    for _ in range(iters):
        x = torch.cholesky_solve((mu + rho * (z - u))[..., None], chol)[..., 0]
        z = _proj_simplex(x + u)
        u = u + x - z
    return z


def _bellman_ford(theta, src_corner, iters):
    """Vertex-weighted shortest-path distances on a k x k 8-connected grid from one corner, by iters rounds of
    relaxation against the 8 shifted copies of the distance map (padding with a large value)."""
    b, k, _ = theta.shape
    big = 1e6
    dist = torch.full_like(theta, big)
    if src_corner == 0:
        dist[:, 0, 0] = theta[:, 0, 0]
    else:
        dist[:, -1, -1] = theta[:, -1, -1]
    for _ in range(iters):
        pd = _F.pad(dist[:, None], (1, 1, 1, 1), value=big)[:, 0]
        nb = torch.stack([pd[:, i:i + k, j:j + k] for i in range(3) for j in range(3) if (i, j) != (1, 1)]).amin(0)
        dist = torch.minimum(dist, nb + theta)
        del pd, nb
    return dist


def _shortest_path(theta, iters):
    """The indicator of the top-left to bottom-right shortest path: the vertices where the forward and backward
    distances add up (less the vertex's own cost) to the optimum."""
    df = _bellman_ford(theta, 0, iters)
    db = _bellman_ford(theta, 1, iters)
    tot = df[:, -1:, -1:]
    return ((df + db - theta - tot).abs() < 1e-3 * tot.abs().clamp_min(1)).float()


@_workload("decision-focused learning with differentiable optimization layers, written by hand in torch (fp32): first predict-then-optimize portfolios (2 asset universes of 50-250 assets drawn one after another, a factor-model covariance, an MLP from 64-128 market features to predicted returns, a mean-variance QP over the simplex solved by 30-60 unrolled ADMM iterations drawn (batched Cholesky solves with gamma S + rho I factored once, sort-based simplex projections), the realised-return-and-risk loss of the decision back-propagated through the iterations; 40 steps of 128-512 samples each with Adam, the regret against the decisions of the true returns read back every 10 steps); then Warcraft-style shortest paths (Berthet et al. 2020, perturbed optimizers): terrain images of k x k tiles (k drawn from 12, 18, 24, 30 per phase, 8 x 8 pixels a tile) encoded by a small CNN to positive vertex costs, 3 phases of 32 steps of 16-64 images, the true paths from hidden costs, 4-8 Gaussian perturbations of the predicted costs solved together by a vectorised Bellman-Ford (2k rounds of relaxation against the 8 shifted distance maps, forward and backward distances, the path's vertices where they add up to the optimum), the Fenchel-Young loss's gradient through a surrogate, Adam; the held-out regret read back per phase")
def dfl_admm_shortpath(rng):
    for _ in range(_smoke(2, 1)):
        n = rng.randint(_smoke(50, 5), _smoke(250, 8))
        nf = rng.choice(_smoke([64, 96, 128], [8]))
        fac = torch.randn(n, 8, device="cuda") * 0.1
        cov = fac @ fac.t() + torch.diag(torch.rand(n, device="cuda") * 0.01 + 0.005)
        gamma, rho = rng.uniform(1, 10), 1.0
        chol = torch.linalg.cholesky(gamma * cov + rho * torch.eye(n, device="cuda"))
        hidden = torch.randn(nf, n, device="cuda") / math.sqrt(nf)
        net = torch.nn.Sequential(torch.nn.Linear(nf, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                                  torch.nn.ReLU(), torch.nn.Linear(256, n)).cuda()
        opt = torch.optim.Adam(net.parameters(), lr=1e-3)
        iters = rng.randint(_smoke(30, 2), _smoke(60, 3))
        for step in range(_smoke(40, 2)):
            bsz = rng.choice(_smoke([128, 256, 512], [4]))
            feat = torch.randn(bsz, nf, device="cuda")
            ret = torch.tanh(feat @ hidden) * 0.05 + 0.02 * torch.randn(bsz, n, device="cuda")
            w = _admm_portfolio(net(feat), chol, rho, gamma, iters)
            risk = ((w @ cov) * w).sum(1)
            loss = (-(w * ret).sum(1) + 0.5 * gamma * risk).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if (step + 1) % _smoke(10, 2) == 0:
                with torch.no_grad():
                    wt = _admm_portfolio(ret, chol, rho, gamma, iters)
                    ((wt - w) * ret).sum(1).mean().cpu()
                    del wt
            del feat, ret, w, risk, loss
        del fac, cov, chol, hidden, net, opt

    cnn = torch.nn.Sequential(torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
                              torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.BatchNorm2d(64), torch.nn.ReLU(),
                              torch.nn.Conv2d(64, 64, 3, padding=1), torch.nn.BatchNorm2d(64), torch.nn.ReLU(),
                              torch.nn.Conv2d(64, 1, 1)).cuda()
    opt = torch.optim.Adam(cnn.parameters(), lr=5e-4)
    tiles = torch.randn(16, 3, 8, 8, device="cuda")
    for _ in range(_smoke(3, 1)):
        k = rng.choice(_smoke([12, 18, 24, 30], [4, 5]))
        rounds = 2 * k
        nsamp = rng.randint(4, 8)

        def batch(bsz):
            terr = torch.randint(0, 16, (bsz, k, k), device="cuda")
            img = tiles[terr].permute(0, 2, 3, 1, 4, 5).reshape(bsz, 3, k * 8, k * 8)
            img = img + 0.1 * torch.randn_like(img)
            true_cost = (terr.float() % 5 + 1) * (1 + 0.1 * torch.rand(bsz, k, k, device="cuda"))
            return img, true_cost

        for step in range(_smoke(32, 2)):
            bsz = min(rng.choice(_smoke([16, 32, 64], [2])), _smoke(40_000, 10 ** 6) // (k * k))
            img, true_cost = batch(bsz)
            with torch.no_grad():
                y_true = _shortest_path(true_cost, rounds)
            theta = _F.softplus(_F.adaptive_avg_pool2d(cnn(img), k)[:, 0]) + 0.1
            with torch.no_grad():
                pert = theta[None] + 0.5 * torch.randn(nsamp, bsz, k, k, device="cuda")
                y_hat = _shortest_path(pert.reshape(nsamp * bsz, k, k).clamp_min(0.01), rounds).view(
                    nsamp, bsz, k, k).mean(0)
            loss = (theta * (y_true - y_hat)).sum((1, 2)).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            del img, true_cost, y_true, theta, pert, y_hat, loss
        with torch.no_grad():
            img, true_cost = batch(_smoke(64, 2))
            theta = _F.softplus(_F.adaptive_avg_pool2d(cnn(img), k)[:, 0]) + 0.1
            y = _shortest_path(theta, rounds)
            y_true = _shortest_path(true_cost, rounds)
            ((y - y_true) * true_cost).sum((1, 2)).mean().cpu()
            del img, true_cost, theta, y, y_true


# ---------------------------------------------------------------- CVRP inference service


class _AmCvrp(torch.nn.Module):
    """The attention model for the CVRP (Kool et al. 2019): depot and customers (coordinates, demand) embedded
    separately, a 3-layer encoder, a decoder whose context is the graph embedding, the current node and the
    remaining capacity, a masked 8-head glimpse and a single-head compatibility clipped by 10 tanh."""

    def __init__(self, d, layers, heads):
        super().__init__()
        self.heads = heads
        self.dep = torch.nn.Linear(2, d)
        self.cus = torch.nn.Linear(3, d)
        self.qkv = torch.nn.ModuleList([torch.nn.Linear(d, 3 * d, bias=False) for _ in range(layers)])
        self.out = torch.nn.ModuleList([torch.nn.Linear(d, d) for _ in range(layers)])
        self.n1 = torch.nn.ModuleList([torch.nn.BatchNorm1d(d) for _ in range(layers)])
        self.ff = torch.nn.ModuleList([torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.ReLU(),
                                                           torch.nn.Linear(4 * d, d)) for _ in range(layers)])
        self.n2 = torch.nn.ModuleList([torch.nn.BatchNorm1d(d) for _ in range(layers)])
        self.ctx = torch.nn.Linear(2 * d + 1, d, bias=False)
        self.wkv = torch.nn.Linear(d, 3 * d, bias=False)
        self.comb = torch.nn.Linear(d, d, bias=False)

    def encode(self, xy, dem):
        h = torch.cat([self.dep(xy[:, :1]), self.cus(torch.cat([xy[:, 1:], dem[..., None]], -1))], 1)
        b, n, d = h.shape
        for qkv, out, n1, ff, n2 in zip(self.qkv, self.out, self.n1, self.ff, self.n2):
            q, k, v = qkv(h).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
            a = _F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, d)
            h = n1((h + out(a)).view(b * n, d)).view(b, n, d)
            h = n2((h + ff(h)).view(b * n, d)).view(b, n, d)
        k, v, lk = self.wkv(h).split(d, -1)
        k = k.view(b, n, self.heads, d // self.heads).transpose(1, 2)
        v = v.view(b, n, self.heads, d // self.heads).transpose(1, 2)
        return h, h.mean(1), k, v, lk

    def step(self, enc, cur, cap, mask):
        """cur, cap, mask: per instance and beam (b, w), (b, w), (b, w, n); returns log-probs (b, w, n)."""
        h, g, k, v, lk = enc
        b, n, d = h.shape
        w = cur.shape[1]
        hc = h.gather(1, cur[..., None].expand(b, w, d))
        q = self.ctx(torch.cat([g[:, None].expand(b, w, d), hc, cap[..., None].to(hc.dtype)], -1))
        q = q.view(b, w, self.heads, d // self.heads).transpose(1, 2)
        gl = _F.scaled_dot_product_attention(q, k, v, attn_mask=mask[:, None].to(q.dtype))
        mh = self.comb(gl.transpose(1, 2).reshape(b, w, d))
        score = torch.matmul(mh, lk.transpose(1, 2)) / math.sqrt(d)
        return torch.log_softmax((10 * torch.tanh(score)).float() + mask, -1)


def _cvrp_mask(visited, dem, cap, cur):
    """Customers visited or heavier than the remaining capacity masked; the depot masked right after a depot
    visit unless every customer is served (then only the depot is left, a zero-cost self-loop)."""
    bad = (visited[..., 1:] > 0) | (dem[:, None] > cap[..., None] + 1e-6)
    all_done = (visited[..., 1:].sum(-1) >= dem.shape[1]).float()
    dep_bad = ((cur == 0).float() * (1 - all_done)) > 0
    inf = torch.full_like(visited, float("-inf"))
    return torch.where(torch.cat([dep_bad[..., None], bad], -1), inf, torch.zeros_like(visited))


@_workload("vehicle-routing inference service, an attention-model CVRP policy (Kool et al. 2019; embedding 128, 3 encoder layers, 8 heads, random init) answering 45 request batches of 8-64 instances (drawn), each of 20-200 customers (drawn per batch; coordinates and demands from reused pinned host buffers uploaded on a side stream one batch ahead, waited on by event and record_stream'ed; capacity 30-50 by size) under bf16 autocast and inference mode: the encoder once a batch, then either beam search of width 4-32 (drawn; cumulative log-probs, topk over beams x nodes, the parents' visited masks, loads, positions and route lengths gathered by index) or 16-64 sampled rollouts (multinomial) per instance, for a fixed 1.3N + 8 steps (capacity and visited masks made each step, the depot refilling the load, finished tours idling at the depot), the best route cost per instance read back per batch")
def am_cvrp_beam_serve(rng):
    model = _AmCvrp(_smoke(128, 16), 3, 8).cuda().eval()
    nmax, bmax = _smoke(200, 12), _smoke(64, 4)
    host_xy = [torch.rand(bmax * (nmax + 1) * 2).pin_memory() for _ in range(2)]
    host_dem = [torch.randint(1, 10, (bmax * nmax,)).float().pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    done = [None, None]

    def fetch(i):
        n = rng.randint(_smoke(20, 5), nmax)
        bsz = rng.choice(_smoke([8, 16, 32, 64], [2, 4]))
        s = i % 2
        if done[s] is not None:
            done[s].synchronize()
        with torch.cuda.stream(side):
            xy = host_xy[s][:bsz * (n + 1) * 2].view(bsz, n + 1, 2).to("cuda", non_blocking=True)
            dem = host_dem[s][:bsz * n].view(bsz, n).to("cuda", non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        done[s] = ev
        return xy, dem, ev

    nxt = fetch(0)
    for req in range(_smoke(45, 3)):
        xy, dem, ev = nxt
        cur_s = torch.cuda.current_stream()
        cur_s.wait_event(ev)
        xy.record_stream(cur_s)
        dem.record_stream(cur_s)
        nxt = fetch(req + 1)
        bsz, n1, _ = xy.shape
        n = n1 - 1
        capacity = 30.0 if n < 50 else (40.0 if n < 100 else 50.0)
        demn = dem / capacity
        beam = rng.random() < 0.5
        w = rng.choice(_smoke([4, 8, 16, 32], [2, 3])) if beam else rng.choice(_smoke([16, 32, 64], [2, 4]))
        with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
            enc = model.encode(xy, demn)
            cur = torch.zeros(bsz, w, dtype=torch.long, device="cuda")
            cap = torch.ones(bsz, w, device="cuda")
            visited = torch.zeros(bsz, w, n1, device="cuda")
            length = torch.zeros(bsz, w, device="cuda")
            score = torch.zeros(bsz, w, device="cuda")
            if beam:  # all beams start identical: only the first one is live
                score = score + torch.cat([torch.zeros(bsz, 1, device="cuda"),
                                           torch.full((bsz, w - 1), float("-inf"), device="cuda")], 1)
            pos = xy[:, :1].expand(bsz, w, 2)
            for _ in range(int(1.3 * n) + 8):
                mask = _cvrp_mask(visited, demn, cap, cur)
                lp = model.step(enc, cur, cap, mask)
                if beam:
                    tot = (score[..., None] + lp).view(bsz, w * n1)
                    score, flat = tot.topk(w, 1)
                    parent, nxt_node = flat // n1, flat % n1
                    visited = visited.gather(1, parent[..., None].expand(bsz, w, n1))
                    cap = cap.gather(1, parent)
                    length = length.gather(1, parent)
                    pos = pos.gather(1, parent[..., None].expand(bsz, w, 2))
                    del tot, flat, parent
                else:
                    nxt_node = torch.multinomial(lp.exp().view(bsz * w, n1), 1).view(bsz, w)
                npos = xy.gather(1, nxt_node[..., None].expand(bsz, w, 2))
                length = length + (npos - pos).norm(dim=-1)
                d = torch.cat([torch.zeros(bsz, 1, device="cuda"), demn], 1).gather(1, nxt_node)
                cap = torch.where(nxt_node == 0, torch.ones_like(cap), cap - d)
                visited = visited.scatter(2, nxt_node[..., None], 1.0)
                cur, pos = nxt_node, npos
                del mask, lp, npos, d
            best = (length + torch.where(torch.isinf(score), torch.full_like(length, 1e9),
                                         torch.zeros_like(length))).amin(1)
            best.cpu()
            del enc, cur, cap, visited, length, score, pos, best
        del xy, dem, demn

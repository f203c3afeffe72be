"""The thirty-sixth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch34_b.py are): control and scientific ML. A multi-task diffusion policy for robot manipulation trained on
action chunks of varying horizon and camera count, MuZero-style batched tree search in a learned latent space
(tree arrays sized by a varying simulation budget and a varying number of live games) alternated with unrolled
training, a neural-SDE GAN on time series of varying length, and flow-based sampling of a phi^4 lattice field
theory over a sweep of lattice sizes. Same conventions: models built from configs (hand-written torch here) with
random weights, nothing downloaded, `rng` the workload's random.Random for every shape, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value (the tree
search's selection and backup are done with tensor ops over fixed depth loops). All four are single-stream;
diffusion_policy_train runs under bf16 autocast, muzero_latent_search, sde_gan_train and lattice_flow_phi4 in
fp32 (lattice_flow_phi4 and muzero_latent_search stay under about 1 GB requested).

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch36_b.py's header says the same of its half): every workload of this
half was run whole, at its real sizes (RECORD_SMOKE unset), on PyTorch's meta device (a runner like
/tmp/b36/meta_run.py, not committed: smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered
with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking its math path; boolean-mask indexing,
which the meta device cannot size, is avoided) and its op outputs counted there (events about 1.8x that count);
the counts and peaks are in record_new36.sh's header. The CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- diffusion policy


class _Res1d(torch.nn.Module):
    """Diffusion Policy's ConditionalResidualBlock1D: two Conv1d-GroupNorm-Mish blocks, FiLM (scale and bias)
    from the conditioning vector between them, a 1x1 residual projection when the width changes."""

    def __init__(self, cin, cout, cond, k=5, groups=8):
        super().__init__()
        nn = torch.nn
        self.b1 = nn.Sequential(nn.Conv1d(cin, cout, k, padding=k // 2), nn.GroupNorm(groups, cout), nn.Mish())
        self.b2 = nn.Sequential(nn.Conv1d(cout, cout, k, padding=k // 2), nn.GroupNorm(groups, cout), nn.Mish())
        self.film = nn.Sequential(nn.Mish(), nn.Linear(cond, 2 * cout))
        self.res = nn.Conv1d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, c):
        h = self.b1(x)
        s, b = self.film(c)[:, :, None].chunk(2, 1)
        return self.b2(h * (1 + s) + b) + self.res(x)


class _Unet1d(torch.nn.Module):
    """Diffusion Policy's ConditionalUnet1D (down widths 256-512-1024, two residual blocks a level, strided-conv
    downsampling and transposed-conv upsampling over the action horizon), conditioned on a sinusoidal embedding
    of the diffusion step and the observation features."""

    def __init__(self, adim, obs_dim, dims=(256, 512, 1024), demb=128):
        super().__init__()
        nn = torch.nn
        self.demb = demb
        self.step_mlp = nn.Sequential(nn.Linear(demb, 4 * demb), nn.Mish(), nn.Linear(4 * demb, demb))
        cond = demb + obs_dim
        io = list(zip((adim,) + dims[:-1], dims))
        self.down = nn.ModuleList()
        for i, (a, b) in enumerate(io):
            last = i == len(io) - 1
            self.down.append(nn.ModuleList([_Res1d(a, b, cond), _Res1d(b, b, cond),
                                            nn.Conv1d(b, b, 3, 2, 1) if not last else nn.Identity()]))
        self.mid = nn.ModuleList([_Res1d(dims[-1], dims[-1], cond), _Res1d(dims[-1], dims[-1], cond)])
        self.up = nn.ModuleList()
        for i, (a, b) in enumerate(reversed(io[1:])):
            self.up.append(nn.ModuleList([_Res1d(2 * b, a, cond), _Res1d(a, a, cond),
                                          nn.ConvTranspose1d(a, a, 4, 2, 1)]))
        self.final = nn.Sequential(nn.Conv1d(dims[0], dims[0], 5, padding=2), nn.GroupNorm(8, dims[0]), nn.Mish(),
                                   nn.Conv1d(dims[0], adim, 1))

    def forward(self, x, t, obs):
        half = self.demb // 2
        fr = torch.exp(torch.arange(half, device=x.device) * (-math.log(10000.0) / (half - 1)))
        e = t.float()[:, None] * fr[None]
        c = torch.cat([self.step_mlp(torch.cat([e.sin(), e.cos()], -1)), obs], -1)
        x = x.transpose(1, 2)
        skips = []
        for r1, r2, ds in self.down:
            x = r2(r1(x, c), c)
            skips.append(x)
            x = ds(x)
        for m in self.mid:
            x = m(x, c)
        for r1, r2, us in self.up:
            x = us(r2(r1(torch.cat([x, skips.pop()], 1), c), c))
        return self.final(x).transpose(1, 2)


class _ObsEnc(torch.nn.Module):
    """A per-camera conv encoder (GroupNorm in place of BatchNorm as in the Diffusion Policy recipe) with
    spatial-softmax keypoints, shared over cameras and observation steps, concatenated with the robot state."""

    def __init__(self, feat=64, width=64):
        super().__init__()
        nn = torch.nn
        layers, cin = [], 3
        for i, cout in enumerate((width, width, 2 * width, 2 * width)):
            layers += [nn.Conv2d(cin, cout, 3, 2 if i else 1, 1), nn.GroupNorm(8, cout), nn.ReLU()]
            cin = cout
        self.conv = nn.Sequential(*layers, nn.Conv2d(cin, feat, 1))
        self.proj = nn.Linear(2 * feat, feat)

    def forward(self, img):  # (N, 3, H, W) -> (N, feat)
        h = self.conv(img)
        n, c, hh, ww = h.shape
        att = h.flatten(2).softmax(-1)
        ys = torch.linspace(-1, 1, hh, device=img.device)[:, None].expand(hh, ww).flatten()
        xs = torch.linspace(-1, 1, ww, device=img.device)[None].expand(hh, ww).flatten()
        kp = torch.cat([(att * xs).sum(-1), (att * ys).sum(-1)], -1)
        return self.proj(kp)


@_workload("multi-task diffusion policy training for robot manipulation, Diffusion Policy-style (Chi et al. 2023, the CNN variant) written by hand: a ConditionalUnet1D (widths 256-512-1024, kernel 5, GroupNorm, Mish, FiLM from the diffusion-step embedding and the observation features) denoising action chunks, and a shared per-camera conv encoder with spatial-softmax keypoints over 2 observation steps plus the robot state; three task configurations (1, 2 or 3 cameras at 84-96 px, action dims 7-10, prediction horizons of 16, 32 or 64 steps) and a batch of 32-128 windows (drawn) each step; DDPM epsilon-prediction MSE over 100 noise levels, AdamW with warmup and cosine decay, an EMA copy of the weights updated every step with foreach ops; every 30 steps a DDIM rollout of 16 denoising steps with the EMA weights for 8-48 environments (drawn) without grad, the first 8 actions read back; bf16 autocast")
def diffusion_policy_train(rng):
    nn, f = torch.nn, torch.nn.functional
    feat, sdim = _smoke(64, 8), 14
    nsteps = _smoke(250, 2)
    tasks = [dict(cams=1, res=_smoke(96, 16), adim=7, hor=_smoke(16, 4)),
             dict(cams=2, res=_smoke(84, 16), adim=10, hor=_smoke(32, 8)),
             dict(cams=3, res=_smoke(84, 16), adim=10, hor=_smoke(64, 8))]
    adim_max, obs_steps = 10, 2
    enc = _ObsEnc(feat, _smoke(64, 8))
    obs_dim = obs_steps * (3 * feat + sdim)
    dims = (256, 512, 1024) if _smoke(1, 0) else (16, 32, 64)
    unet = _Unet1d(adim_max, obs_dim, dims, demb=_smoke(128, 16))
    model = nn.ModuleList([enc, unet]).cuda()
    ema = [p.detach().clone() for p in model.parameters()]
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=1e-6, foreach=True)
    T = 100
    betas = torch.linspace(1e-4, 0.02, T, device="cuda")
    abar = torch.cumprod(1 - betas, 0)

    def encode(task, b):
        cams, res = task["cams"], task["res"]
        img = torch.rand(b * obs_steps * cams, 3, res, res, device="cuda")
        fe = enc(img).view(b, obs_steps, cams * feat)
        if cams < 3:  # missing cameras as zero features
            fe = f.pad(fe, (0, (3 - cams) * feat))
        state = torch.randn(b, obs_steps, sdim, device="cuda")
        return torch.cat([fe, state], -1).flatten(1)

    with torch.autocast("cuda", dtype=torch.bfloat16):
        for step in range(nsteps):
            lr = 1e-4 * min(1.0, (step + 1) / 20) * 0.5 * (1 + math.cos(math.pi * step / nsteps))
            for g in opt.param_groups:
                g["lr"] = lr
            task = rng.choice(tasks)
            b = rng.randint(_smoke(32, 2), _smoke(128, 4))
            obs = encode(task, b)
            act = torch.randn(b, task["hor"], adim_max, device="cuda")
            if task["adim"] < adim_max:
                act = act * (torch.arange(adim_max, device="cuda") < task["adim"]).float()
            t = torch.randint(0, T, (b,), device="cuda")
            a = abar[t][:, None, None]
            noise = torch.randn_like(act)
            pred = unet(a.sqrt() * act + (1 - a).sqrt() * noise, t, obs)
            loss = f.mse_loss(pred.float(), noise)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            with torch.no_grad():
                params = [p.detach() for p in model.parameters()]
                torch._foreach_mul_(ema, 0.995)
                torch._foreach_add_(ema, params, alpha=0.005)
            del obs, act, t, a, noise, pred, loss
            if (step + 1) % _smoke(30, 2) == 0:
                with torch.no_grad():
                    live = [p.detach().clone() for p in model.parameters()]
                    for p, e in zip(model.parameters(), ema):
                        p.data.copy_(e)
                    task = rng.choice(tasks)
                    n = rng.randint(_smoke(8, 1), _smoke(48, 2))
                    obs = encode(task, n)
                    x = torch.randn(n, task["hor"], adim_max, device="cuda")
                    ts = list(range(T - 1, -1, -T // 16))
                    for i, tt in enumerate(ts):
                        tp = ts[i + 1] if i + 1 < len(ts) else -1
                        tv = torch.full((n,), tt, device="cuda", dtype=torch.long)
                        eps = unet(x, tv, obs).float()
                        a_t = abar[tt]
                        a_p = abar[tp] if tp >= 0 else torch.ones((), device="cuda")
                        x0 = (x - (1 - a_t).sqrt() * eps) / a_t.sqrt()
                        x = a_p.sqrt() * x0.clamp(-1, 1) + (1 - a_p).sqrt() * eps
                    x[:, :8, :task["adim"]].cpu()
                    for p, l in zip(model.parameters(), live):
                        p.data.copy_(l)
                    del live, obs, x, eps, x0
    torch.cuda.synchronize()


# ---------------------------------------------------------------- MuZero-style latent search


class _ResBlock2d(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        nn = torch.nn
        self.c1, self.n1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
        self.c2, self.n2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)

    def forward(self, x):
        return torch.relu(x + self.n2(self.c2(torch.relu(self.n1(self.c1(x))))))


class _MuZero(torch.nn.Module):
    """MuZero's three functions on a board-game latent: representation h (obs planes -> latent), dynamics g
    (latent + one-hot action plane -> next latent + reward), prediction f (latent -> policy logits + value);
    latents min-max normalized per sample as in the paper."""

    def __init__(self, cin, c, nblocks, board, nact):
        super().__init__()
        nn = torch.nn
        self.board, self.nact = board, nact
        self.h = nn.Sequential(nn.Conv2d(cin, c, 3, padding=1), nn.ReLU(), *[_ResBlock2d(c) for _ in range(nblocks)])
        self.g_in = nn.Conv2d(c + 1, c, 3, padding=1)
        self.g = nn.Sequential(*[_ResBlock2d(c) for _ in range(nblocks)])
        self.g_r = nn.Sequential(nn.Conv2d(c, 4, 1), nn.Flatten(), nn.Linear(4 * board * board, 1))
        self.f = nn.Sequential(_ResBlock2d(c), nn.Conv2d(c, 8, 1), nn.ReLU(), nn.Flatten())
        self.f_p = nn.Linear(8 * board * board, nact)
        self.f_v = nn.Sequential(nn.Linear(8 * board * board, 64), nn.ReLU(), nn.Linear(64, 1), nn.Tanh())

    @staticmethod
    def norm(s):
        lo = s.flatten(1).amin(1)[:, None, None, None]
        hi = s.flatten(1).amax(1)[:, None, None, None]
        return (s - lo) / (hi - lo + 1e-5)

    def represent(self, obs):
        return self.norm(self.h(obs))

    def dynamics(self, s, a):
        plane = torch.nn.functional.one_hot(a, self.nact).float()[:, :self.board * self.board]
        plane = torch.nn.functional.pad(plane, (0, self.board * self.board - plane.shape[1]))
        x = torch.relu(self.g_in(torch.cat([s, plane.view(-1, 1, self.board, self.board)], 1)))
        x = self.g(x)
        return self.norm(x), self.g_r(x).squeeze(-1)

    def predict(self, s):
        h = self.f(s)
        return self.f_p(h), self.f_v(h).squeeze(-1)


@_workload("model-based RL by search in a learned latent space, MuZero-style (Schrittwieser et al. 2020) with the search written as batched tensor ops as DeepMind's mctx does it (no host round-trips): representation, dynamics and prediction networks (64-channel ResNet trunks of 4 blocks on a 9x9 board, 82 actions); self-play of 16-64 live games (drawn per move, games ending and new ones joining) where each move runs a search with a budget of 8-40 simulations (drawn per move): tree arrays (latents, child indices, visit counts, value sums, priors, rewards) sized by the budget, PUCT selection down a fixed-depth loop with torch.where masks, one dynamics expansion per simulation written into the tree by index_put, backup up the path with discounting; root Dirichlet-style noise, visit-count policy targets and root values appended to a replay list; every 2 moves a training step on 64-192 positions (drawn) unrolled 5 steps through the dynamics (policy cross-entropy, value and reward MSE, gradient scaled by 1/2 at each unroll), SGD with momentum; fp32, under 1 GB")
def muzero_latent_search(rng):
    nn, f = torch.nn, torch.nn.functional
    board, nact, c = _smoke(9, 3), _smoke(82, 10), _smoke(64, 8)
    nmoves, unroll, depth_max = _smoke(40, 3), _smoke(5, 2), _smoke(6, 3)
    net = _MuZero(4, c, _smoke(4, 1), board, nact).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.02, momentum=0.9, weight_decay=1e-4, foreach=True)
    replay = []  # (obs, policy target, value target, actions, rewards)
    disc, c1 = 0.997, 1.25

    def search(obs, sims):
        B = obs.shape[0]
        N = sims + 1
        ar = torch.arange(B, device="cuda")
        lat = torch.zeros(B, N, c, board, board, device="cuda")
        child = torch.full((B, N, nact), -1, dtype=torch.long, device="cuda")
        visits = torch.zeros(B, N, device="cuda")
        vsum = torch.zeros(B, N, device="cuda")
        prior = torch.zeros(B, N, nact, device="cuda")
        rew = torch.zeros(B, N, device="cuda")
        s0 = net.represent(obs)
        logits, v0 = net.predict(s0)
        p0 = logits.softmax(-1)
        noise = -torch.rand(B, nact, device="cuda").clamp(min=1e-6).log()  # Dirichlet(1) as normalized exponentials
        p0 = 0.75 * p0 + 0.25 * noise / noise.sum(-1, keepdim=True)
        lat[:, 0] = s0
        prior[:, 0] = p0
        visits[:, 0] = 1
        vsum[:, 0] = v0
        for sim in range(sims):
            node = torch.zeros(B, dtype=torch.long, device="cuda")
            path, acts = [node], []
            done = torch.zeros(B, dtype=torch.bool, device="cuda")
            leaf_parent, leaf_act = node, torch.zeros(B, dtype=torch.long, device="cuda")
            for d in range(min(sim + 1, depth_max)):
                n_vis = visits[ar, node]
                ch = child[ar, node]  # (B, A)
                chc = ch.clamp(min=0)
                cv = visits[ar[:, None], chc] * (ch >= 0)
                q = (rew[ar[:, None], chc] + disc * vsum[ar[:, None], chc] / cv.clamp(min=1)) * (ch >= 0)
                u = q + c1 * prior[ar, node] * n_vis.sqrt()[:, None] / (1 + cv)
                a = u.argmax(-1)
                nxt = ch[ar, a]
                stop = (nxt < 0) & ~done
                leaf_parent = torch.where(stop, node, leaf_parent)
                leaf_act = torch.where(stop, a, leaf_act)
                done = done | stop
                node = torch.where(done, node, nxt.clamp(min=0))
                path.append(node)
                acts.append(a)
            # expand one new node per game at slot sim + 1 (games whose walk hit the depth cap expand there too)
            leaf_parent = torch.where(done, leaf_parent, node)
            leaf_act = torch.where(done, leaf_act, acts[-1])
            s, r = net.dynamics(lat[ar, leaf_parent], leaf_act)
            logit, v = net.predict(s)
            slot = torch.full((B,), sim + 1, dtype=torch.long, device="cuda")
            lat.index_put_((ar, slot), s)
            prior.index_put_((ar, slot), logit.softmax(-1))
            rew.index_put_((ar, slot), r)
            child.index_put_((ar, leaf_parent, leaf_act), slot)
            visits.index_put_((ar, slot), torch.ones(B, device="cuda"))
            vsum.index_put_((ar, slot), v)
            g = v
            for nd in reversed(path):  # backup (nodes past the leaf repeat it; only their count is off)
                g = rew[ar, nd] + disc * g
                visits.index_put_((ar, nd), torch.ones(B, device="cuda"), accumulate=True)
                vsum.index_put_((ar, nd), g, accumulate=True)
        root_ch = child[:, 0].clamp(min=0)
        pol = visits[ar[:, None], root_ch] * (child[:, 0] >= 0)
        pol = pol / pol.sum(-1, keepdim=True).clamp(min=1)
        return pol, vsum[:, 0] / visits[:, 0]

    def train_step():
        bsz = rng.randint(_smoke(64, 2), _smoke(192, 4))
        idx = [rng.randrange(len(replay)) for _ in range(bsz)]
        rows = [replay[i] for i in idx]
        obs = torch.cat([r[0][None] for r in rows])
        pol_t = torch.cat([r[1][None] for r in rows])
        val_t = torch.cat([r[2][None] for r in rows])
        acts = torch.randint(0, nact, (bsz, unroll), device="cuda")
        rew_t = torch.randn(bsz, unroll, device="cuda") * 0.1
        s = net.represent(obs)
        logits, v = net.predict(s)
        loss = -(pol_t * logits.log_softmax(-1)).sum(-1).mean() + f.mse_loss(v, val_t)
        for k in range(unroll):
            s, r = net.dynamics(s, acts[:, k])
            s.register_hook(lambda gr: gr * 0.5)
            logits, v = net.predict(s)
            loss = loss + (f.cross_entropy(logits, pol_t.argmax(-1)) + f.mse_loss(v, val_t)
                           + f.mse_loss(r, rew_t[:, k])) / unroll
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    for move in range(nmoves):
        games = rng.randint(_smoke(16, 2), _smoke(64, 3))
        sims = rng.randint(_smoke(8, 2), _smoke(40, 4))
        obs = torch.rand(games, 4, board, board, device="cuda").round()
        net.eval()
        with torch.no_grad():
            pol, root_v = search(obs, sims)
        net.train()
        for i in range(games):
            replay.append((obs[i], pol[i], root_v[i]))
        if len(replay) > 4000:
            del replay[:len(replay) - 4000]
        if move % 2 == 1:
            train_step()
        if (move + 1) % _smoke(20, 2) == 0:
            root_v.mean().tolist()
        del obs, pol, root_v
    torch.cuda.synchronize()


# ---------------------------------------------------------------- neural SDE GAN


class _Lip(torch.nn.Module):
    def forward(self, x):
        return 0.909 * torch.nn.functional.silu(x)


def _mlp(din, dout, width, depth, final=None):
    nn = torch.nn
    layers, cin = [], din
    for _ in range(depth):
        layers += [nn.Linear(cin, width), _Lip()]
        cin = width
    layers.append(nn.Linear(cin, dout))
    if final is not None:
        layers.append(final)
    return nn.Sequential(*layers)


@_workload("neural SDE GAN training on time series, Kidger et al. 2021 (as torchsde's sde_gan example) written by hand: a generator SDE (initial noise of 8 mapped to a 64-wide hidden state, drift and diffusion MLPs of 2 layers of 128 with LipSwish on [t, x], diagonal-free diffusion of 64 x 16 Brownian channels, a linear readout to 3 observed channels) solved by the reversible-Heun-free midpoint scheme as explicit Euler-Heun steps, and a neural-CDE discriminator (hidden 64, vector field MLP to 64 x (1+3) driven by the path's increments) run over the same grid; every step a sequence length of 24-120 points (drawn log-uniform) and a batch of 128-768 series (drawn), real series from random Ornstein-Uhlenbeck paths built on the device, Wasserstein loss with one backward through both solvers (the generator's gradients negated), Adadelta for both, weight clipping of the discriminator; stochastic weight averaging of the generator in the second half with foreach ops; every 8 steps 512 series sampled without grad, their marginal mean read back; fp32")
def sde_gan_train(rng):
    nn, f = torch.nn, torch.nn.functional
    hid, noise_d, width, dd, init_d = _smoke(64, 8), _smoke(16, 2), _smoke(128, 16), 3, 8
    nsteps = _smoke(22, 2)
    g_init = _mlp(init_d, hid, width, 1)
    g_drift = _mlp(1 + hid, hid, width, 2, nn.Tanh())
    g_diff = _mlp(1 + hid, hid * noise_d, width, 2, nn.Tanh())
    g_read = nn.Linear(hid, dd)
    d_init = _mlp(1 + dd, hid, width, 1)
    d_field = _mlp(1 + hid, hid * (1 + dd), width, 2, nn.Tanh())
    d_read = nn.Linear(hid, 1)
    gen = nn.ModuleList([g_init, g_drift, g_diff, g_read]).cuda()
    disc = nn.ModuleList([d_init, d_field, d_read]).cuda()
    opt_g = torch.optim.Adadelta(gen.parameters(), lr=1.0, foreach=True)
    opt_d = torch.optim.Adadelta(disc.parameters(), lr=1.0, foreach=True)
    swa = None

    def generate(b, L):
        ts = torch.linspace(0, 1, L, device="cuda")
        dt = 1.0 / (L - 1)
        x = g_init(torch.randn(b, init_d, device="cuda"))
        ys = [g_read(x)]
        for i in range(L - 1):
            tt = ts[i].expand(b, 1)
            dw = torch.randn(b, noise_d, 1, device="cuda") * math.sqrt(dt)
            inp = torch.cat([tt, x], -1)
            f0 = g_drift(inp)
            g0 = torch.bmm(g_diff(inp).view(b, hid, noise_d), dw).squeeze(-1)
            xp = x + f0 * dt + g0  # predictor
            inp2 = torch.cat([tt + dt, xp], -1)
            x = x + 0.5 * (f0 + g_drift(inp2)) * dt + 0.5 * (g0 + torch.bmm(
                g_diff(inp2).view(b, hid, noise_d), dw).squeeze(-1))
            ys.append(g_read(x))
        return torch.stack(ys, 1), ts  # (b, L, dd)

    def discriminate(y, ts):
        b, L, _ = y.shape
        path = torch.cat([ts[None, :, None].expand(b, L, 1), y], -1)  # (b, L, 1+dd)
        h = d_init(path[:, 0])
        dY = path[:, 1:] - path[:, :-1]
        for i in range(L - 1):
            fld = d_field(torch.cat([ts[i].expand(b, 1), h], -1)).view(b, hid, 1 + dd)
            h = h + torch.bmm(fld, dY[:, i, :, None]).squeeze(-1)
        return d_read(h).mean()

    def real(b, L):
        dt = 1.0 / (L - 1)
        x = torch.randn(b, dd, device="cuda") * 0.3
        ys = [x]
        eps = torch.randn(L - 1, b, dd, device="cuda")
        for i in range(L - 1):
            x = x - 2.0 * x * dt + 0.4 * math.sqrt(dt) * eps[i]
            ys.append(x)
        return torch.stack(ys, 1)

    for step in range(nsteps):
        L = _loguniform(rng, _smoke(24, 3), _smoke(120, 6))
        b = rng.randint(_smoke(128, 2), _smoke(768, 4))
        fake, ts = generate(b, L)
        loss = discriminate(fake, ts) - discriminate(real(b, L), ts)
        opt_g.zero_grad(set_to_none=True)
        opt_d.zero_grad(set_to_none=True)
        loss.backward()
        for p in gen.parameters():
            p.grad.neg_()
        opt_g.step()
        opt_d.step()
        with torch.no_grad():
            for m in disc.modules():
                if isinstance(m, nn.Linear):
                    m.weight.clamp_(-1 / m.in_features, 1 / m.in_features)
            if step >= nsteps // 2:
                params = [p.detach() for p in gen.parameters()]
                if swa is None:
                    swa = [p.clone() for p in params]
                    nswa = 1
                else:
                    nswa += 1
                    torch._foreach_mul_(swa, (nswa - 1) / nswa)
                    torch._foreach_add_(swa, params, alpha=1.0 / nswa)
        del fake, ts, loss
        if (step + 1) % _smoke(8, 2) == 0:
            with torch.no_grad():
                y, _ = generate(_smoke(512, 4), _smoke(64, 4))
                y.mean((0, 2)).tolist()
                del y
    torch.cuda.synchronize()


# ---------------------------------------------------------------- flow-based lattice sampling


class _Coupling(torch.nn.Module):
    """An affine coupling layer on a checkerboard mask (Albergo, Kanwar & Shanahan 2019): a CNN with circular
    padding reads the frozen sites and gives the log-scale and shift of the active ones."""

    def __init__(self, parity, hidden, k=3):
        super().__init__()
        nn = torch.nn
        self.parity = parity
        self.net = nn.Sequential(
            nn.Conv2d(1, hidden, k, padding=k // 2, padding_mode="circular"), nn.LeakyReLU(),
            nn.Conv2d(hidden, hidden, k, padding=k // 2, padding_mode="circular"), nn.LeakyReLU(),
            nn.Conv2d(hidden, 2, k, padding=k // 2, padding_mode="circular"), nn.Tanh())

    def forward(self, x, mask):  # x (B, L, L); returns y, log|det J|
        m = mask if self.parity == 0 else 1 - mask
        frozen = x * m
        s, t = self.net(frozen[:, None]).unbind(1)
        y = frozen + (1 - m) * (x * torch.exp(s) + t)
        return y, ((1 - m) * s).sum((1, 2))


@_workload("flow-based sampling for lattice field theory (Albergo, Kanwar & Shanahan 2019; the phi^4 tutorial recipe) written by hand: real-NVP affine coupling layers on checkerboard masks (16 layers, each a 3-layer CNN of 32 channels with circular padding and tanh-bounded outputs) trained by the reverse KL divergence against the Euclidean phi^4 action (kinetic term by torch.roll in both directions, mass and quartic terms) with samples drawn from the flow; a sweep over 5 physics points (lattice sizes 8, 12, 16, 24, 32 and couplings m^2, lambda) run one after another, each with a fresh model and Adam optimizer, 26-36 steps (drawn) at a batch of 64-512 configurations (drawn per step, fewer on larger lattices); after each point's training an independence-Metropolis MCMC of 6 batched proposal rounds (acceptance by torch.where on a uniform draw, no host round-trips), the acceptance rate and the effective sample size read back; fp32, under 1 GB")
def lattice_flow_phi4(rng):
    nn = torch.nn
    hidden, nlayers = _smoke(32, 4), _smoke(16, 2)
    points = [(8, -4.0, 8.0), (12, -4.0, 6.0), (16, -4.0, 8.0), (24, -4.0, 7.0), (32, -4.0, 8.0)]
    if not _smoke(1, 0):
        points = [(4, -4.0, 8.0), (6, -4.0, 6.0)]

    def action(phi, m2, lam):
        kin = sum((phi - torch.roll(phi, 1, d)).pow(2) for d in (1, 2))
        return (0.5 * kin + 0.5 * m2 * phi.pow(2) + lam * phi.pow(4)).sum((1, 2))

    for L, m2, lam in points:
        mask = ((torch.arange(L)[:, None] + torch.arange(L)[None]) % 2).float().cuda()
        flow = nn.ModuleList(_Coupling(i % 2, hidden) for i in range(nlayers)).cuda()
        opt = torch.optim.Adam(flow.parameters(), lr=1e-3, foreach=True)

        def sample(b):
            z = torch.randn(b, L, L, device="cuda")
            logq = -0.5 * z.pow(2).sum((1, 2)) - 0.5 * L * L * math.log(2 * math.pi)
            x = z
            for layer in flow:
                x, ld = layer(x, mask)
                logq = logq - ld
            return x, logq

        bmax = max(64, 512 * 64 // (L * L) * 4) if _smoke(1, 0) else 8
        for step in range(rng.randint(_smoke(26, 2), _smoke(36, 3))):
            b = rng.randint(min(64, bmax), min(512, bmax))
            x, logq = sample(b)
            loss = (logq + action(x, m2, lam)).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            del x, logq, loss
        with torch.no_grad():
            nch = min(256, bmax)
            cur, cur_lq = sample(nch)
            cur_lp = -action(cur, m2, lam)
            acc = torch.zeros(nch, device="cuda")
            for _ in range(_smoke(6, 2)):
                prop, lq = sample(nch)
                lp = -action(prop, m2, lam)
                ok = torch.rand(nch, device="cuda").log() < (lp - lq) - (cur_lp - cur_lq)
                cur = torch.where(ok[:, None, None], prop, cur)
                cur_lp, cur_lq = torch.where(ok, lp, cur_lp), torch.where(ok, lq, cur_lq)
                acc = acc + ok.float()
            w = (cur_lp - cur_lq).softmax(0)
            torch.stack([acc.mean() / _smoke(6, 2), 1.0 / (w.pow(2).sum() * nch)]).tolist()
            del cur, cur_lq, cur_lp, acc, prop, lq, lp, w
        del flow, opt
    torch.cuda.synchronize()

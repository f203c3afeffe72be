"""The fifty-third batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch52_b.py are): robotics and embodied control on the GPU (perception, planning and policy learning), written in
torch alone, first half. Massively parallel PPO for a quadruped in a GPU-vectorised physics simulator written in
torch (in the style of legged_gym / Isaac Gym: thousands of environments of a 12-joint legged robot stepped together
with PD joint control, penalty contacts and semi-implicit Euler integration, observation normalisation, rollout
buffers, GAE, clipped PPO; the number of environments changed by a curriculum, buffers rebuilt at each stage,
deterministic evaluation rollouts between stages), an ACT-style action-chunking transformer trained by behaviour
cloning (Zhao et al. 2023: a CVAE encoder over the proprioception and the action chunk, a convolutional backbone
over 2-4 cameras, a transformer encoder-decoder predicting 50 future actions, L1 masked at the episode's end plus a
KL term; demonstrations of drawn length; closed-loop evaluation with temporal ensembling), sampling-based MPC
(MPPI) over a learned dynamics ensemble for a 7-DoF arm (the ensemble trained on random-action data, thousands of
rollouts a control step through the ensemble, horizons changed per task, the ensemble refitted on the data each
episode adds), and a robot-perception service (segmentation and 6-DoF pose estimation of objects in RGB-D frames of
varying resolution: a UNet over RGB-D, soft object centroids, crops by grid_sample, a pose regressor, and a few
iterations of weighted point-to-model Kabsch refinement; each request's frames uploaded on a side stream one
request ahead). Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or,
for the service, from a few reused pinned host buffers), `rng` the workload's random.Random for every shape, count
and sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads
a tensor's value: resets are torch.where over the environments, counts and horizons are drawn on the host, no
boolean-mask indexing; losses, returns and poses are read back only at logging points (the service returns each
request's poses, as a service must). rgbd_pose_perception_serve uses a side stream (uploads waited on by event, the
tensors record_stream'ed); the others are single-stream. The networks run under bf16 autocast where real code
would (the ACT policy, the perception networks); the simulator, PPO's MLPs, the dynamics ensemble, the Kabsch
refinement and the losses are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch53_b.py's header says the same of its half): every workload of this half
was run whole at its final real sizes (RECORD_SMOKE unset) on PyTorch's meta device with the helper's runner
(/tmp/b53/meta_run.py, not committed, a copy of /work/notes/meta_run.py: smoke_cpu.py's patching with "cuda" mapped
to "meta", readbacks answered with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking a math
path, streams, events and pinned memory no-ops; boolean-mask indexing, which the meta device cannot size, is
avoided), its op outputs counted there (events about 1.8x that count) and its peak live bytes tracked:
isaac_legged_ppo_train 326,006 op outputs, peak 1.22 GB; act_chunk_bc_train 306,088, 5.18 GB;
mppi_ensemble_mpc 322,624, 0.03 GB; rgbd_pose_perception_serve 299,725, 1.00 GB (peaks in fp32 where autocast would
take bf16). record_new53.sh's header has them too, with the first runs that led to resizes. The CPU smoke run
(RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- massively parallel PPO for a quadruped


class _LeggedSim:
    """A GPU-vectorised quadruped simulator written in torch: a floating base (position, roll-pitch-yaw, linear and
    angular velocity) and 12 joints (hip, thigh, calf per leg), PD control toward targets set by the actions,
    feet placed by planar leg kinematics, penalty contact forces with viscous friction, semi-implicit Euler at
    dt 5 ms with 4 substeps per policy step. Resets are torch.where over the environments."""

    def __init__(self, n):
        self.n = n
        dev = "cuda"
        self.q0 = torch.tensor([0.0, 0.8, -1.5] * 4, device=dev)
        self.hip = torch.tensor([[0.19, 0.05], [0.19, -0.05], [-0.19, 0.05], [-0.19, -0.05]], device=dev)
        self.kp, self.kd, self.dt, self.dec = 20.0, 0.5, 0.005, 4
        self.l1, self.l2, self.mass = 0.21, 0.21, 12.0
        self.p = torch.zeros(n, 3, device=dev)
        self.r = torch.zeros(n, 3, device=dev)
        self.v = torch.zeros(n, 3, device=dev)
        self.w = torch.zeros(n, 3, device=dev)
        self.q = torch.zeros(n, 12, device=dev)
        self.dq = torch.zeros(n, 12, device=dev)
        self.cmd = torch.zeros(n, 3, device=dev)
        self.last_a = torch.zeros(n, 12, device=dev)
        self.t = torch.zeros(n, device=dev)
        self.init_p = torch.tensor([0.0, 0.0, 0.34], device=dev)
        self.cmd_lo = torch.tensor([-1.0, -0.6, -1.0], device=dev)
        self.cmd_hi = torch.tensor([1.5, 0.6, 1.0], device=dev)
        self.g = torch.tensor([0.0, 0.0, -9.81], device=dev)
        self.inertia = torch.tensor([0.1, 0.25, 0.3], device=dev)
        self.reset(torch.ones(n, dtype=torch.bool, device=dev))

    def reset(self, done):
        n, dev = self.n, "cuda"
        m = done[:, None]
        self.p = torch.where(m, self.init_p + 0.02 * torch.randn(n, 3, device=dev),
                             self.p)
        self.r = torch.where(m, 0.05 * torch.randn(n, 3, device=dev), self.r)
        self.v = torch.where(m, torch.zeros_like(self.v), self.v)
        self.w = torch.where(m, torch.zeros_like(self.w), self.w)
        self.q = torch.where(m, self.q0 + 0.1 * torch.randn(n, 12, device=dev), self.q)
        self.dq = torch.where(m, torch.zeros_like(self.dq), self.dq)
        lo, hi = self.cmd_lo, self.cmd_hi
        self.cmd = torch.where(m, lo + (hi - lo) * torch.rand(n, 3, device=dev), self.cmd)
        self.last_a = torch.where(m, torch.zeros_like(self.last_a), self.last_a)
        self.t = torch.where(done, torch.zeros_like(self.t), self.t)

    def gravity(self):
        cr, sr, cp, sp = torch.cos(self.r[:, 0]), torch.sin(self.r[:, 0]), torch.cos(self.r[:, 1]), torch.sin(
            self.r[:, 1])
        return torch.stack([sp, -sr * cp, -cr * cp], -1)

    def obs(self):
        return torch.cat([self.v * 2.0, self.w * 0.25, self.gravity(), self.cmd, self.q - self.q0, self.dq * 0.05,
                          self.last_a], -1)

    def step(self, a):
        target = self.q0 + 0.25 * a
        hx, hy = self.hip[:, 0], self.hip[:, 1]
        for _ in range(self.dec):
            tau = (self.kp * (target - self.q) - self.kd * self.dq).clamp(-33.5, 33.5)
            q = self.q.view(-1, 4, 3)
            dq = self.dq.view(-1, 4, 3)
            th, kn = q[..., 1], q[..., 1] + q[..., 2]
            fx_rel = self.l1 * torch.sin(th) + self.l2 * torch.sin(kn)
            fz_rel = -(self.l1 * torch.cos(th) + self.l2 * torch.cos(kn))
            vx_rel = self.l1 * torch.cos(th) * dq[..., 1] + self.l2 * torch.cos(kn) * (dq[..., 1] + dq[..., 2])
            foot_z = (self.p[:, 2:3] + fz_rel + hx * torch.sin(-self.r[:, 1:2]) + hy * torch.sin(self.r[:, 0:1]))
            pen = (-foot_z).clamp_min(0.0)
            fz = 4000.0 * pen - 60.0 * pen.sign() * (self.v[:, 2:3])
            fz = fz.clamp_min(0.0)
            foot_vx = self.v[:, 0:1] + vx_rel
            foot_vy = self.v[:, 1:2] - self.w[:, 2:3] * hx
            fx = -0.8 * fz * torch.tanh(foot_vx * 10.0)
            fy = -0.8 * fz * torch.tanh(foot_vy * 10.0)
            force = torch.stack([fx.sum(1), fy.sum(1), fz.sum(1)], -1)
            acc = force / self.mass + self.g
            torque = torch.stack([(fz * hy).sum(1), -(fz * hx).sum(1) + (fx * fz_rel).sum(1),
                                  (fy * hx - fx * hy).sum(1)], -1)
            wacc = torque / self.inertia - 0.5 * self.w
            jtau = torch.stack([torch.zeros_like(fz), -fx * fz_rel + fz * fx_rel, fz * self.l2 * torch.sin(kn)], -1)
            ddq = (tau - 0.02 * jtau.reshape(-1, 12) - 0.05 * self.dq) / 0.05
            self.dq = self.dq + self.dt * ddq
            self.q = self.q + self.dt * self.dq
            self.v = self.v + self.dt * acc
            self.w = self.w + self.dt * wacc
            self.p = self.p + self.dt * self.v
            self.r = self.r + self.dt * self.w
        self.t = self.t + 1
        lin_err = ((self.cmd[:, :2] - self.v[:, :2]) ** 2).sum(-1)
        yaw_err = (self.cmd[:, 2] - self.w[:, 2]) ** 2
        rew = (torch.exp(-lin_err / 0.25) + 0.5 * torch.exp(-yaw_err / 0.25) - 2.0 * self.v[:, 2] ** 2
               - 0.05 * (self.w[:, :2] ** 2).sum(-1) - 1e-4 * (tau ** 2).sum(-1)
               - 0.01 * ((a - self.last_a) ** 2).sum(-1) - 1.0 * (self.gravity()[:, :2] ** 2).sum(-1)) * 0.02
        self.last_a = a
        fallen = (self.p[:, 2] < 0.2) | (self.r[:, :2].abs() > 1.0).any(-1)
        timeout = self.t >= 1000
        done = fallen | timeout
        self.reset(done)
        return rew, done.float()


class _RunNorm:
    """Running mean and variance of the observations, updated from each batch (parallel Welford)."""

    def __init__(self, d):
        self.mean = torch.zeros(d, device="cuda")
        self.var = torch.ones(d, device="cuda")
        self.count = 1e-4

    def update(self, x):
        bm, bv, bc = x.mean(0), x.var(0, unbiased=False), x.shape[0]
        delta = bm - self.mean
        tot = self.count + bc
        self.mean = self.mean + delta * bc / tot
        self.var = (self.var * self.count + bv * bc + delta ** 2 * self.count * bc / tot) / tot
        self.count = tot

    def __call__(self, x):
        return ((x - self.mean) / (self.var + 1e-8).sqrt()).clamp(-5, 5)


class _ActorCritic(_nn.Module):
    def __init__(self, dobs, dact, hidden):
        super().__init__()

        def mlp(dout):
            layers, d = [], dobs
            for h in hidden:
                layers += [_nn.Linear(d, h), _nn.ELU()]
                d = h
            layers.append(_nn.Linear(d, dout))
            return _nn.Sequential(*layers)

        self.actor, self.critic = mlp(dact), mlp(1)
        self.log_std = _nn.Parameter(torch.zeros(dact))

    def dist(self, obs):
        return torch.distributions.Normal(self.actor(obs), self.log_std.exp(), validate_args=False)


@_workload("massively parallel PPO for a quadruped in a GPU-vectorised simulator written in torch (legged_gym / Isaac Gym-style, random init): a 12-joint legged robot with a floating base, PD joint control, planar leg kinematics, penalty contacts with friction, semi-implicit Euler at 5 ms with 4 substeps per policy step, velocity commands, a reward of command tracking and penalties, resets by torch.where; a curriculum of environment counts (2,048 to 12,288 over four stages, order drawn), each stage rebuilding the simulator and the rollout buffers; observation normalisation by running statistics; actor and critic MLPs 512-256-128 ELU, fp32; 14 PPO iterations (4, 4, 3 and 3 in the stages), each 24-step rollouts, GAE, clipped PPO with value clipping and entropy bonus, 5 epochs of 4 minibatches, Adam with clipping; after each stage a 40-step deterministic evaluation rollout over 4,096 fresh environments without grad, mean return and fall rate read back")
def isaac_legged_ppo_train(rng):
    dobs, dact = 48, 12
    hidden = _smoke([512, 256, 128], [32, 16])
    model = _ActorCritic(dobs, dact, hidden).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    norm = _RunNorm(dobs)
    rest = _smoke([4096, 8192, 12288], [128])
    rng.shuffle(rest)
    stages = [_smoke(2048, 64)] + rest
    iters_per_stage = _smoke([4, 4, 3, 3], [1, 1])
    horizon, epochs, nmb = _smoke(24, 4), _smoke(5, 2), _smoke(4, 2)
    gamma, lam, clip = 0.99, 0.95, 0.2
    for stage, nenv in enumerate(stages):
        sim = _LeggedSim(nenv)
        buf_obs = torch.zeros(horizon, nenv, dobs, device="cuda")
        buf_act = torch.zeros(horizon, nenv, dact, device="cuda")
        buf_logp = torch.zeros(horizon, nenv, device="cuda")
        buf_val = torch.zeros(horizon + 1, nenv, device="cuda")
        buf_rew = torch.zeros(horizon, nenv, device="cuda")
        buf_done = torch.zeros(horizon, nenv, device="cuda")
        for it in range(iters_per_stage[stage]):
            model.eval()
            with torch.no_grad():
                obs = sim.obs()
                for t in range(horizon):
                    norm.update(obs)
                    o = norm(obs)
                    d = model.dist(o)
                    a = d.sample()
                    buf_obs[t] = o
                    buf_act[t] = a
                    buf_logp[t] = d.log_prob(a).sum(-1)
                    buf_val[t] = model.critic(o)[:, 0]
                    rew, done = sim.step(a.clamp(-4, 4))
                    buf_rew[t] = rew
                    buf_done[t] = done
                    obs = sim.obs()
                buf_val[horizon] = model.critic(norm(obs))[:, 0]
                adv = torch.zeros(horizon, nenv, device="cuda")
                last = torch.zeros(nenv, device="cuda")
                for t in reversed(range(horizon)):
                    nonterm = 1.0 - buf_done[t]
                    delta = buf_rew[t] + gamma * buf_val[t + 1] * nonterm - buf_val[t]
                    last = delta + gamma * lam * nonterm * last
                    adv[t] = last
                ret = adv + buf_val[:horizon]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            model.train()
            total = horizon * nenv
            f_obs, f_act = buf_obs.view(total, dobs), buf_act.view(total, dact)
            f_logp, f_val = buf_logp.view(total), buf_val[:horizon].reshape(total)
            f_adv, f_ret = adv.view(total), ret.view(total)
            mb = total // nmb
            for ep in range(epochs):
                perm = torch.randperm(total, device="cuda")
                for k in range(nmb):
                    idx = perm[k * mb:(k + 1) * mb]
                    o, a_ = f_obs[idx], f_act[idx]
                    d = model.dist(o)
                    logp = d.log_prob(a_).sum(-1)
                    ratio = torch.exp(logp - f_logp[idx])
                    adv_b = f_adv[idx]
                    pg = torch.max(-adv_b * ratio, -adv_b * ratio.clamp(1 - clip, 1 + clip)).mean()
                    v = model.critic(o)[:, 0]
                    vold = f_val[idx]
                    vclip = vold + (v - vold).clamp(-clip, clip)
                    vl = torch.max((v - f_ret[idx]) ** 2, (vclip - f_ret[idx]) ** 2).mean()
                    loss = pg + 1.0 * vl - 0.01 * d.entropy().sum(-1).mean()
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                    opt.step()
                    del o, a_, d, logp, ratio, adv_b, pg, v, vold, vclip, vl, loss
            torch.stack([buf_rew.sum(0).mean(), buf_done.mean()]).cpu()
            del adv, ret, f_obs, f_act, f_logp, f_val, f_adv, f_ret, perm
        del sim, buf_obs, buf_act, buf_logp, buf_val, buf_rew, buf_done
        model.eval()
        ev = _LeggedSim(_smoke(4096, 32))
        with torch.no_grad():
            ret_e = torch.zeros(ev.n, device="cuda")
            falls = torch.zeros(ev.n, device="cuda")
            for t in range(_smoke(40, 3)):
                a = model.actor(norm(ev.obs()))
                rew, done = ev.step(a.clamp(-4, 4))
                ret_e = ret_e + rew
                falls = falls + done
            torch.stack([ret_e.mean(), falls.mean()]).cpu()
        del ev, ret_e, falls


# ---------------------------------------------------------------- ACT: action-chunking transformer, behaviour cloning


class _ConvBackbone(_nn.Module):
    """A ResNet-like backbone at stride 16: a stride-2 stem then residual stages with BatchNorm."""

    def __init__(self, widths):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, widths[0], 7, 2, 3, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU())
        stages, cin = [], widths[0]
        for wd in widths[1:]:
            stages.append(_nn.ModuleDict({
                "c1": _nn.Conv2d(cin, wd, 3, 2, 1, bias=False), "b1": _nn.BatchNorm2d(wd),
                "c2": _nn.Conv2d(wd, wd, 3, 1, 1, bias=False), "b2": _nn.BatchNorm2d(wd),
                "sc": _nn.Conv2d(cin, wd, 1, 2, bias=False)}))
            cin = wd
        self.stages = _nn.ModuleList(stages)

    def forward(self, x):
        x = self.stem(x)
        for s in self.stages:
            x = _F.relu(s["b2"](s["c2"](_F.relu(s["b1"](s["c1"](x))))) + s["sc"](x))
        return x


class _Act(_nn.Module):
    def __init__(self, dq, da, d, heads, n_enc, n_dec, n_cvae, chunk, zdim, ncam_max, feat):
        super().__init__()
        self.chunk, self.zdim, self.d = chunk, zdim, d
        self.backbone = _ConvBackbone(feat)
        self.proj = _nn.Conv2d(feat[-1], d, 1)
        self.cam_emb = _nn.Parameter(torch.randn(ncam_max, 1, d) * 0.02)
        self.qpos_in, self.act_in = _nn.Linear(dq, d), _nn.Linear(da, d)
        self.cls = _nn.Parameter(torch.randn(1, 1, d) * 0.02)
        self.cvae = _nn.TransformerEncoder(_nn.TransformerEncoderLayer(d, heads, 4 * d, 0.1, batch_first=True,
                                                                       norm_first=True), n_cvae,
                                          enable_nested_tensor=False)
        self.latent = _nn.Linear(d, 2 * zdim)
        self.z_in, self.qpos_tok = _nn.Linear(zdim, d), _nn.Linear(dq, d)
        self.enc = _nn.TransformerEncoder(_nn.TransformerEncoderLayer(d, heads, 4 * d, 0.1, batch_first=True,
                                                                      norm_first=True), n_enc,
                                         enable_nested_tensor=False)
        self.dec = _nn.TransformerDecoder(_nn.TransformerDecoderLayer(d, heads, 4 * d, 0.1, batch_first=True,
                                                                      norm_first=True), n_dec)
        self.queries = _nn.Parameter(torch.randn(1, chunk, d) * 0.02)
        self.head = _nn.Linear(d, da)

    def posterior(self, qpos, actions, pad):
        b = qpos.shape[0]
        x = torch.cat([self.cls.expand(b, -1, -1), self.qpos_in(qpos)[:, None], self.act_in(actions)], 1)
        mask = torch.cat([torch.zeros(b, 2, dtype=torch.bool, device=pad.device), pad], 1)
        h = self.cvae(x, src_key_padding_mask=mask)
        mu, logvar = self.latent(h[:, 0]).chunk(2, -1)
        return mu, logvar

    def forward(self, images, qpos, z):
        b, ncam = images.shape[:2]
        f = self.proj(self.backbone(images.flatten(0, 1)))  # (b*ncam, d, h, w)
        f = f.flatten(2).transpose(1, 2).view(b, ncam, -1, self.d) + self.cam_emb[:ncam]
        pos = _sincos(f.shape[2], self.d, f.device)
        tok = (f + pos).flatten(1, 2)
        tok = torch.cat([self.z_in(z)[:, None], self.qpos_tok(qpos)[:, None], tok], 1)
        mem = self.enc(tok)
        out = self.dec(self.queries.expand(b, -1, -1), mem)
        return self.head(out)


def _sincos(n, d, dev):
    pos = torch.arange(n, device=dev, dtype=torch.float32)[:, None]
    freq = torch.exp(torch.arange(0, d, 2, device=dev, dtype=torch.float32) * (-math.log(10000.0) / d))
    return torch.cat([torch.sin(pos * freq), torch.cos(pos * freq)], -1)


@_workload("ACT-style action-chunking transformer trained by behaviour cloning, written by hand (random init; Zhao et al. 2023, ALOHA bimanual): a ResNet-like backbone at stride 16 over 2-4 cameras of 192 x 256 (the camera set drawn per task), width 256, a 4-layer CVAE encoder over [CLS, joint positions, 50-step action chunk] with padding masks, a 4-layer transformer encoder over the latent, proprioception and 192 tokens per camera, a 7-layer decoder with 50 action queries, 14-dim actions; demonstrations of 300-700 steps (drawn), chunks near an episode's end padded and masked; three tasks in turn with 2, 3 and 4 cameras (order drawn), 34 steps each at batch 8-16 (drawn, cut to 48 images) under bf16 autocast, L1 plus 10x KL, AdamW with clipping; after each task a closed-loop evaluation of 24 steps without grad at batch 1 with temporal ensembling of the overlapping chunks, the executed actions read back")
def act_chunk_bc_train(rng):
    dq = da = 14
    d, heads = _smoke(256, 32), _smoke(8, 2)
    chunk, zdim = _smoke(50, 6), 32
    hh, ww = _smoke(192, 32), _smoke(256, 48)
    feat = _smoke([64, 64, 128, 256], [8, 8, 16])
    model = _Act(dq, da, d, heads, _smoke(4, 1), _smoke(7, 1), _smoke(4, 1), chunk, zdim, 4, feat).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=1e-4)
    tasks = [2, 3, 4]
    rng.shuffle(tasks)
    for ncam in tasks:
        ep_len = rng.randint(_smoke(300, 8), _smoke(700, 12))
        # one task's demonstration set: joint trajectories on the device, images made per batch
        demos = torch.cumsum(0.02 * torch.randn(_smoke(50, 2), ep_len + chunk, dq, device="cuda"), 1)
        for step in range(_smoke(34, 2)):
            bsz = min(rng.choice(_smoke([8, 12, 16], [2])), _smoke(48, 4) // ncam)
            ep = torch.randint(0, demos.shape[0], (bsz,), device="cuda")
            t0 = [rng.randrange(ep_len) for _ in range(bsz)]
            tix = torch.tensor(t0, device="cuda")[:, None] + torch.arange(chunk, device="cuda")
            pad = tix >= ep_len
            traj = demos[ep[:, None], tix.clamp(max=ep_len - 1)]
            qpos = demos[ep, tix[:, 0]]
            actions = traj + 0.01 * torch.randn_like(traj)
            images = torch.rand(bsz, ncam, 3, hh, ww, device="cuda")
            model.train()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                mu, logvar = model.posterior(qpos, actions, pad)
                z = mu + (0.5 * logvar).exp() * torch.randn_like(mu)
                pred = model(images, qpos, z)
            l1 = ((pred.float() - actions).abs() * (~pad)[..., None]).mean()
            kl = (-0.5 * (1 + logvar.float() - mu.float() ** 2 - logvar.float().exp())).sum(-1).mean()
            loss = l1 + 10.0 * kl
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
            opt.step()
            if (step + 1) % _smoke(17, 1) == 0:
                torch.stack([l1.detach(), kl.detach()]).cpu()
            del ep, tix, pad, traj, qpos, actions, images, mu, logvar, z, pred, l1, kl, loss
        del demos
        model.eval()
        with torch.no_grad():
            steps = _smoke(24, 3)
            plan = torch.zeros(steps + chunk, steps, da, device="cuda")
            wts = torch.zeros(steps + chunk, steps, 1, device="cuda")
            qpos = torch.zeros(1, dq, device="cuda")
            z = torch.zeros(1, zdim, device="cuda")
            k = torch.exp(-0.01 * torch.arange(chunk, device="cuda", dtype=torch.float32))[:, None]
            executed = []
            for t in range(steps):
                images = torch.rand(1, ncam, 3, hh, ww, device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    a = model(images, qpos, z)[0].float()
                plan[t:t + chunk, t] = a
                wts[t:t + chunk, t] = k
                act = (plan[t] * wts[t]).sum(0) / wts[t].sum(0)
                qpos = qpos + 0.1 * act[None]
                executed.append(act)
            torch.stack(executed).cpu()
        del plan, wts, qpos, z, executed


# ---------------------------------------------------------------- MPPI over a learned dynamics ensemble


class _Ensemble(_nn.Module):
    """E dynamics MLPs in one module, weights stacked (E, in, out) and applied by baddbmm; Gaussian outputs (mean
    and log-variance of the state change), inputs normalised by stored statistics."""

    def __init__(self, e, din, dout, hidden, layers):
        super().__init__()
        dims = [din] + [hidden] * layers + [2 * dout]
        self.w = _nn.ParameterList([_nn.Parameter(torch.randn(e, a, b) / math.sqrt(a)) for a, b in
                                    zip(dims[:-1], dims[1:])])
        self.b = _nn.ParameterList([_nn.Parameter(torch.zeros(e, 1, b)) for b in dims[1:]])
        self.register_buffer("mu", torch.zeros(din))
        self.register_buffer("sd", torch.ones(din))
        self.dout = dout

    def forward(self, x):  # x (E, n, din)
        h = (x - self.mu) / self.sd
        for i, (w, b) in enumerate(zip(self.w, self.b)):
            h = torch.baddbmm(b, h, w)
            if i < len(self.w) - 1:
                h = _F.silu(h)
        mean, logvar = h.split(self.dout, -1)
        return mean, logvar.clamp(-10, 2)


def _arm_true_step(s, a, dt=0.05):
    """The 'real' 7-DoF arm the ensemble learns: joint positions and velocities, torque-limited actions, gravity
    and coupling terms, damping."""
    q, dq = s[..., :7], s[..., 7:]
    grav = 0.6 * torch.sin(q + 0.3 * torch.roll(q, 1, -1))
    ddq = 4.0 * a.clamp(-1, 1) - grav - 0.3 * dq + 0.2 * torch.sin(torch.roll(dq, -1, -1))
    dq = dq + dt * ddq
    return torch.cat([q + dt * dq, dq], -1)


def _arm_ee(q, ln):
    """Planar-chain forward kinematics of the end effector (link lengths ln), fp32 (for the reaching cost)."""
    ang = torch.cumsum(q, -1)
    x = (ln * torch.cos(ang)).sum(-1)
    y = (ln * torch.sin(ang)).sum(-1)
    z = 0.2 * torch.sin(q[..., 0]) + 0.1 * torch.cos(q[..., 3])
    return torch.stack([x, y, z], -1)


@_workload("sampling-based model-predictive control (MPPI) over a learned dynamics ensemble, written by hand (random init; PETS / MPPI-style): a 7-DoF torque-controlled arm (14-dim state) as the 'real' system, a 5-member probabilistic ensemble of MLPs (3 hidden layers of 256, SiLU, Gaussian state-change outputs, weights stacked and applied by baddbmm), fp32; first trained on 8 random-action episodes (Gaussian NLL, 300 steps, Adam); then 4 reaching episodes of 35 control steps, each with its own horizon (12-30, drawn), rollout count (1,000-4,000, drawn) and obstacle set, each control step 2 MPPI iterations of sampled action sequences (warm-started, smoothed noise) rolled through the ensemble with trajectory sampling (each rollout propagated by one member), a reach, obstacle and action cost, softmax weights; the first action applied to the real arm, the transition stored; after each episode the ensemble refitted for 150 steps on all data so far (the dataset growing), the episode's final distance read back")
def mppi_ensemble_mpc(rng):
    ns, na, ens = 14, 7, 5
    hidden = _smoke(256, 16)
    model = _Ensemble(ens, ns + na, ns, hidden, 3).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    links = torch.tensor([0.3, 0.3, 0.25, 0.2, 0.15, 0.1, 0.08], device="cuda")

    def collect_random(n_ep, length):
        s = 0.3 * torch.randn(n_ep, ns, device="cuda")
        xs, ys = [], []
        for t in range(length):
            a = torch.randn(n_ep, na, device="cuda")
            s2 = _arm_true_step(s, a)
            xs.append(torch.cat([s, a], -1))
            ys.append(s2 - s)
            s = s2
        return torch.cat(xs), torch.cat(ys)

    data_x, data_y = collect_random(_smoke(8, 2), _smoke(200, 8))

    def fit(steps):
        nonlocal data_x, data_y
        model.mu = data_x.mean(0)
        model.sd = data_x.std(0) + 1e-3
        n = data_x.shape[0]
        for step in range(steps):
            idx = torch.randint(0, n, (ens, min(_smoke(256, 8), n)), device="cuda")  # bootstrap per member
            mean, logvar = model(data_x[idx])
            err = (mean - data_y[idx]) ** 2
            loss = (err * torch.exp(-logvar) + logvar).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        return loss.detach()

    fit(_smoke(300, 3)).cpu()
    for episode in range(_smoke(4, 1)):
        horizon = rng.randint(_smoke(12, 2), _smoke(30, 3))
        k = rng.choice(_smoke([1000, 2000, 4000], [15]))
        nobs = rng.randint(2, 6)
        goal = torch.tensor([rng.uniform(0.3, 1.0), rng.uniform(-0.6, 0.6), rng.uniform(-0.1, 0.2)], device="cuda")
        obst = torch.randn(nobs, 3, device="cuda") * 0.4
        s = 0.2 * torch.randn(1, ns, device="cuda")
        plan = torch.zeros(horizon, na, device="cuda")
        new_x, new_y = [], []
        lam, sigma = 0.5, 0.6
        with torch.no_grad():
            for t in range(_smoke(35, 3)):
                for it in range(_smoke(2, 1)):
                    noise = sigma * torch.randn(k, horizon, na, device="cuda")
                    noise = 0.5 * noise + 0.5 * torch.roll(noise, 1, 1)  # smoothed in time
                    acts = (plan[None] + noise).clamp(-1, 1)
                    st = s.expand(k, -1)
                    cost = torch.zeros(k, device="cuda")
                    for h in range(horizon):
                        # trajectory sampling: rollout j propagated by member j // (k / ens) throughout
                        mean, logvar = model(torch.cat([st, acts[:, h]], -1).view(ens, k // ens, ns + na))
                        st = st + mean.reshape(k, ns) + 0.1 * torch.randn_like(st) * (0.5 * logvar).exp().reshape(
                            k, ns)
                        ee = _arm_ee(st[:, :7], links)
                        dist_o = ((ee[:, None] - obst) ** 2).sum(-1)
                        cost = cost + ((ee - goal) ** 2).sum(-1) + 0.5 * torch.exp(-dist_o / 0.01).sum(-1) \
                            + 0.01 * (acts[:, h] ** 2).sum(-1)
                    w = torch.softmax(-(cost - cost.min()) / lam, 0)
                    plan = (w[:, None, None] * acts).sum(0)
                a = plan[0:1]
                s2 = _arm_true_step(s, a)
                new_x.append(torch.cat([s, a], -1))
                new_y.append(s2 - s)
                s = s2
                plan = torch.cat([plan[1:], plan[-1:]], 0)
            ((_arm_ee(s[:, :7], links) - goal) ** 2).sum().sqrt().cpu()
        data_x = torch.cat([data_x] + new_x)
        data_y = torch.cat([data_y] + new_y)
        del new_x, new_y, plan, obst
        fit(_smoke(150, 2)).cpu()


# ---------------------------------------------------------------- RGB-D segmentation and 6-DoF pose service


class _SegNet(_nn.Module):
    """A small UNet over RGB-D: three downsampling stages, two upsampling stages with skips, per-pixel logits for
    the object classes plus background at half resolution; the decoder's features also returned for the pose
    head."""

    def __init__(self, ncls, w):
        super().__init__()

        def cbr(a, b, s=1):
            return _nn.Sequential(_nn.Conv2d(a, b, 3, s, 1, bias=False), _nn.BatchNorm2d(b), _nn.ReLU())

        self.e1 = _nn.Sequential(cbr(4, w, 2), cbr(w, w))
        self.e2 = _nn.Sequential(cbr(w, 2 * w, 2), cbr(2 * w, 2 * w))
        self.e3 = _nn.Sequential(cbr(2 * w, 4 * w, 2), cbr(4 * w, 4 * w))
        self.d2 = cbr(6 * w, 2 * w)
        self.d1 = cbr(3 * w, w)
        self.cls = _nn.Conv2d(w, ncls + 1, 1)

    def forward(self, x):
        f1 = self.e1(x)
        f2 = self.e2(f1)
        f3 = self.e3(f2)
        u2 = self.d2(torch.cat([_F.interpolate(f3, size=f2.shape[-2:], mode="bilinear"), f2], 1))
        u1 = self.d1(torch.cat([_F.interpolate(u2, size=f1.shape[-2:], mode="bilinear"), f1], 1))
        return self.cls(u1), u1


class _PoseHead(_nn.Module):
    """Per-object crops (RGB-D plus decoder features) to a 6D rotation and a translation offset."""

    def __init__(self, cin, w):
        super().__init__()
        self.net = _nn.Sequential(
            _nn.Conv2d(cin, w, 3, 2, 1), _nn.ReLU(), _nn.Conv2d(w, 2 * w, 3, 2, 1), _nn.ReLU(),
            _nn.Conv2d(2 * w, 4 * w, 3, 2, 1), _nn.ReLU(), _nn.AdaptiveAvgPool2d(1), _nn.Flatten())
        self.rot, self.trans = _nn.Linear(4 * w, 6), _nn.Linear(4 * w, 3)

    def forward(self, x):
        h = self.net(x)
        return self.rot(h), self.trans(h)


def _rot6d(r):
    a, b = r[..., :3], r[..., 3:]
    x = _F.normalize(a, dim=-1)
    y = _F.normalize(b - (x * b).sum(-1, keepdim=True) * x, dim=-1)
    return torch.stack([x, y, torch.cross(x, y, dim=-1)], -1)


def _kabsch(p, q, w):
    """Weighted rigid alignment of p onto q (batched (n, m, 3)), by SVD of the 3x3 covariance."""
    ws = w / (w.sum(1, keepdim=True) + 1e-8)
    pc, qc = (ws * p).sum(1, keepdim=True), (ws * q).sum(1, keepdim=True)
    cov = ((p - pc) * ws).transpose(1, 2) @ (q - qc)
    u, _, vh = torch.linalg.svd(cov)
    dsign = torch.sign(torch.linalg.det(vh.transpose(1, 2) @ u.transpose(1, 2)))
    diag = torch.stack([torch.ones_like(dsign), torch.ones_like(dsign), dsign], -1)
    rot = vh.transpose(1, 2) @ torch.diag_embed(diag) @ u.transpose(1, 2)
    return rot, qc[:, 0] - (rot @ pc[:, 0, :, None])[..., 0]


@_workload("robot-perception service for RGB-D frames written by hand (random init): a small UNet over RGB-D (width 32, three stages) giving per-pixel logits for 21 object classes plus background, a pose head over 64 x 64 crops (RGB-D plus decoder features, cut by grid_sample around each object's soft centroid) regressing a 6D rotation and a translation, then 6 iterations of weighted point-to-model refinement (the crop's back-projected depth points against the object model's 512 points, nearest neighbours by a distance matrix, a weighted Kabsch by batched 3x3 SVD); 700 requests of 1-4 frames from cameras of 240 x 320 to 480 x 848 (drawn) with 2-12 objects of interest each (drawn), each request's RGB (uint8) and depth (fp16) uploaded from reused pinned host buffers on a side stream one request ahead (waited on by event, record_stream'ed), normalised on the device; networks under bf16 autocast without grad, refinement fp32; each request's poses and per-object mask scores read back")
def rgbd_pose_perception_serve(rng):
    ncls, w = 21, _smoke(32, 4)
    seg = _SegNet(ncls, w).cuda().eval()
    pose = _PoseHead(4 + w, _smoke(64, 4)).cuda().eval()
    models = torch.randn(ncls, _smoke(512, 16), 3, device="cuda") * 0.05
    res = _smoke([(240, 320), (360, 640), (480, 640), (480, 848)], [(24, 32), (32, 48)])
    hmax, wmax = max(r[0] for r in res), max(r[1] for r in res)
    fmax = 4
    host_rgb = [torch.randint(0, 256, (fmax * 3 * hmax * wmax,), dtype=torch.uint8).pin_memory() for _ in range(2)]
    host_d = [(torch.rand(fmax * hmax * wmax) * 2).half().pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    done = [None, None]
    crop = _smoke(64, 8)
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda")[:, None, None]
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda")[:, None, None]

    def fetch(i):
        hh, ww = rng.choice(res)
        nf = rng.randint(1, 4)
        s = i % 2
        if done[s] is not None:
            done[s].synchronize()
        with torch.cuda.stream(side):
            rgb = host_rgb[s][:nf * 3 * hh * ww].view(nf, 3, hh, ww).to("cuda", non_blocking=True)
            dep = host_d[s][:nf * hh * ww].view(nf, 1, hh, ww).to("cuda", non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        done[s] = ev
        return (rgb, dep), ev

    nxt = fetch(0)
    nreq = _smoke(700, 3)
    gy, gx = torch.meshgrid(torch.linspace(-1, 1, crop, device="cuda"), torch.linspace(-1, 1, crop, device="cuda"),
                            indexing="ij")
    base_grid = torch.stack([gx, gy], -1)
    for req in range(nreq):
        (rgb, dep), ev = nxt
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        rgb.record_stream(cur)
        dep.record_stream(cur)
        if req + 1 < nreq:
            nxt = fetch(req + 1)
        nf, _, hh, ww = rgb.shape
        nobj = rng.randint(2, 12)
        cls_ids = torch.tensor([rng.randrange(ncls) for _ in range(nf * nobj)], device="cuda")
        with torch.no_grad():
            x = torch.cat([(rgb.float() / 255.0 - mean) / std, dep.float()], 1)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits, feat = seg(x)
            hq, wq = feat.shape[-2:]
            prob = torch.softmax(logits.float(), 1)[:, 1:]  # (nf, ncls, hq, wq)
            pobj = prob.view(nf, ncls, -1)[torch.arange(nf, device="cuda").repeat_interleave(nobj), cls_ids]
            pobj = pobj.view(nf * nobj, hq, wq)
            ys = torch.linspace(-1, 1, hq, device="cuda")[:, None]
            xs = torch.linspace(-1, 1, wq, device="cuda")[None, :]
            mass = pobj.sum((1, 2)) + 1e-6
            cy = (pobj * ys).sum((1, 2)) / mass
            cx = (pobj * xs).sum((1, 2)) / mass
            scale = 0.15 + 0.1 * torch.rand(nf * nobj, device="cuda")
            grid = base_grid[None] * scale[:, None, None, None] + torch.stack([cx, cy], -1)[:, None, None]
            src_i = torch.arange(nf, device="cuda").repeat_interleave(nobj)
            full = torch.cat([_F.interpolate(x, size=(hq, wq), mode="bilinear"), feat.float()], 1)
            crops = _F.grid_sample(full[src_i], grid, align_corners=False)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                r6, tr = pose(crops)
            rot = _rot6d(r6.float())
            trans = tr.float() + torch.stack([cx, cy, torch.ones_like(cx)], -1)
            # back-projected depth points inside each crop (a 32 x 32 subgrid), weighted by the object's mask
            sub = crops[:, :, ::2, ::2]
            d = sub[:, 3].reshape(nf * nobj, -1, 1)
            uv = grid[:, ::2, ::2].reshape(nf * nobj, -1, 2)
            pts = torch.cat([uv * d, d], -1)
            wgt = _F.grid_sample(pobj[:, None], grid[:, ::2, ::2], align_corners=False).reshape(nf * nobj, -1, 1)
            mp = models[cls_ids]
            for it in range(_smoke(6, 2)):
                tp = mp @ rot.transpose(1, 2) + trans[:, None]
                dmat = (pts * pts).sum(-1, keepdim=True) - 2 * pts @ tp.transpose(1, 2) + (tp * tp).sum(-1)[:, None]
                nn_i = dmat.argmin(-1)
                match = tp.gather(1, nn_i[..., None].expand(-1, -1, 3))
                dr, dt = _kabsch(match, pts, wgt)
                rot = dr @ rot
                trans = (dr @ trans[..., None])[..., 0] + dt
                del tp, dmat, nn_i, match
            score = mass / (hq * wq)
            torch.cat([rot.flatten(1), trans, score[:, None]], -1).cpu()
        del rgb, dep, x, logits, feat, prob, pobj, crops, full, grid, pts, wgt, mp, rot, trans

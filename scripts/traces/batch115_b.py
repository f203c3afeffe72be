"""The hundred-and-fifteenth batch of held-out workloads for record.py, second half (see batch115.py): brewing,
winemaking, coffee and beverages, written in torch alone. Coffee roast-profile control training (a Gaussian
actor-critic trained by PPO against a drum-roaster heat-transfer model written in torch: gas and airflow set each
control interval, bean and environment temperatures, moisture and the development time tracked per roast, GAE and
clipped PPO updates over shuffled minibatches), hop and wine aroma-compound odour training (a message-passing network
over molecular graphs of drawn atom counts, bonds drawn on the device, messages by index_select and index_add,
per-molecule readout by index_add, multi-label odour descriptors, odour thresholds and retention indices), a beer
recipe sampler (a decoder-only transformer with a key-value cache written by slice copies, prompts and generation
lengths, temperatures and top-k drawn per request, a recipe grammar mask looked up on the device) and a fermenter
fleet anomaly service (a patch transformer over the raw ADC windows of drawn tanks and lengths, patch reconstruction
anomaly scores, gravity and temperature forecasts, a per-tank running baseline kept on the device by index_copy).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the fermenter service), `rng` the workload's random.Random for every shape, count and sampled
choice, sizes through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or
masked_fill; no boolean-mask indexing; results read back only at logging points or once per request.
fermenter_fleet_anomaly_serve uploads its windows on a side stream (two reused pinned host buffers, one request
ahead, through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16
autocast except the roast-control actor-critic, which stays in fp32 (small MLPs, PPO's probability ratios).
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- coffee roast-profile control (PPO)


class _RoastActorCritic(_nn.Module):
    """A LayerNorm MLP actor (the mean of gas and airflow pre-squash, a learned log standard deviation) and a
    separate LayerNorm MLP critic over the roast's observation."""

    def __init__(self, n_obs, hidden, n_act):
        super().__init__()
        self.actor = mlp(n_obs, hidden, n_act, layers=3, act=_nn.Tanh, norm=True)
        self.critic = mlp(n_obs, hidden, 1, layers=3, act=_nn.Tanh, norm=True)
        self.log_std = _nn.Parameter(torch.full((n_act,), -0.5))

    def dist(self, obs):
        return self.actor(obs), self.log_std.clamp(-3.0, 1.0)

    def value(self, obs):
        return self.critic(obs)[..., 0]


def _gauss_logp(a, mu, log_std):
    return (-0.5 * ((a - mu) / log_std.exp()).pow(2) - log_std - 0.5 * math.log(2 * math.pi)).sum(-1)


def _roast_rollout(model, n, horizon, deterministic):
    """`horizon` control intervals of 15 s for `n` roasts (batch size, charge temperature, roast level and target
    curve drawn per roast). Returns the observations, pre-squash actions, log-probabilities, rewards and values
    stacked over time, and the final bean-temperature error and development ratio."""
    dt = 0.25  # minutes
    mass = torch.rand(n, device="cuda") * 0.6 + 0.7  # charge mass, relative to the drum's rating
    level = torch.randint(0, 3, (n,), device="cuda")
    end_t = 196.0 + 8.0 * level.float() + 2.0 * torch.randn(n, device="cuda")  # drop temperature, deg C
    dev_t = 0.18 + 0.03 * level.float()  # development-time ratio target
    bt = torch.full((n,), 20.0, device="cuda") + 5.0 * torch.rand(n, device="cuda")
    et = torch.full((n,), 210.0, device="cuda") + 20.0 * torch.rand(n, device="cuda")
    moist = 0.10 + 0.03 * torch.rand(n, device="cuda")
    crack_time = torch.zeros(n, device="cuda")
    prev_a = torch.zeros(n, 2, device="cuda")
    onehot = _F.one_hot(level, 3).float()
    obs_l, act_l, logp_l, rew_l, val_l = [], [], [], [], []
    for s in range(horizon):
        frac = (s + 1) / horizon
        target = 20.0 + (end_t - 20.0) * math.sqrt(frac)  # the roast's target bean-temperature curve
        obs = torch.cat([torch.stack([bt / 200.0, et / 250.0, moist * 10.0, mass, end_t / 200.0, dev_t,
                                      torch.full_like(bt, frac), crack_time / horizon, (target - bt) / 50.0], -1),
                         onehot, prev_a], -1)
        mu, log_std = model.dist(obs)
        a = mu if deterministic else mu + log_std.exp() * torch.randn_like(mu)
        logp = _gauss_logp(a, mu, log_std)
        gas, air = torch.sigmoid(a).unbind(-1)
        et = et + dt * (120.0 * gas - 0.35 * (et - 20.0) - 25.0 * air * (et - bt) / 100.0)
        evap = 0.04 * moist * torch.sigmoid((bt - 100.0) / 8.0)
        bt = bt + dt * (0.9 * (et - bt) / mass - 900.0 * evap)
        moist = (moist - dt * evap).clamp(min=0.0)
        crack_time = crack_time + torch.where(bt > end_t - 20.0, 1.0, 0.0)
        rew = -(bt - target).abs() / 50.0 - 0.05 * (torch.sigmoid(a) - torch.sigmoid(prev_a)).abs().sum(-1)
        if s == horizon - 1:
            rew = rew - (bt - end_t).abs() / 10.0 - 20.0 * (crack_time / horizon - dev_t).abs()
        obs_l.append(obs)
        act_l.append(a)
        logp_l.append(logp)
        rew_l.append(rew)
        val_l.append(model.value(obs))
        prev_a = a
    stacked = [torch.stack(t, 1) for t in (obs_l, act_l, logp_l, rew_l, val_l)]
    return (*stacked, (bt - end_t).abs().mean(), (crack_time / horizon).mean())


@_workload("coffee roast-profile control training (random init, a Gaussian actor-critic trained by PPO, fp32): 256-1,024 simulated drum roasts an iteration (drawn) of 32-56 control intervals of 15 s (drawn per iteration); per roast a charge mass, starting bean and environment temperatures, green-bean moisture and a roast level (of 3) drawn on the device, setting the drop temperature, a square-root target bean-temperature curve and a development-time ratio target; each interval the actor (a 3-layer LayerNorm MLP, hidden 256, tanh) sets gas and airflow by a sampled Gaussian squashed by sigmoid, a heat-transfer model in torch updates environment and bean temperatures, moisture evaporation and the time past first crack (by torch.where); rewards from the curve error and action changes, a terminal penalty on the drop temperature and development ratio; a 3-layer LayerNorm MLP critic, GAE (gamma 0.99, lambda 0.95) by a backward loop over the intervals; 4 PPO epochs of 4 minibatches over the flattened roasts and intervals (a randperm on the device), clipped ratio 0.2, value loss and entropy bonus; Adam, clipping, 41 iterations; the mean return, drop-temperature error and development ratio read back every 5 iterations and every 20 iterations a deterministic rollout of 1,024 roasts of 48 intervals with its return, error and development ratio read back")
def roast_profile_ppo_train(rng):
    n_obs, hidden, n_act = 9 + 3 + 2, _smoke(256, 16), 2
    model = _RoastActorCritic(n_obs, hidden, n_act).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    gamma, lam, clip = 0.99, 0.95, 0.2
    epochs, n_mb = _smoke(4, 1), _smoke(4, 2)

    iters = _smoke(41, 3)
    for it in range(iters):
        model.train()
        n, horizon = rng.randint(_smoke(256, 4), _smoke(1024, 8)), rng.randint(_smoke(32, 4), _smoke(56, 6))
        with torch.no_grad():
            obs, act, logp_old, rew, val, err, dev = _roast_rollout(model, n, horizon, False)
            adv_l, gae = [], torch.zeros(n, device="cuda")
            for s in range(horizon - 1, -1, -1):
                nxt = val[:, s + 1] if s + 1 < horizon else torch.zeros_like(gae)
                gae = rew[:, s] + gamma * nxt - val[:, s] + gamma * lam * gae
                adv_l.append(gae)
            adv = torch.stack(adv_l[::-1], 1)
            ret = adv + val
            adv = (adv - adv.mean()) / (adv.std() + 1e-6)
            flat = [t.flatten(0, 1) for t in (obs, act, logp_old, adv, ret)]
            perm_all = [torch.randperm(n * horizon, device="cuda") for _ in range(epochs)]
        mb = n * horizon // n_mb
        for e in range(epochs):
            for j in range(n_mb):
                idx = perm_all[e][j * mb:(j + 1) * mb]
                o, a, lp_old, ad, rt = (t.index_select(0, idx) for t in flat)
                mu, log_std = model.dist(o)
                lp = _gauss_logp(a, mu, log_std)
                ratio = torch.exp(lp - lp_old)
                pg = -torch.minimum(ratio * ad, ratio.clamp(1 - clip, 1 + clip) * ad).mean()
                v_loss = (model.value(o) - rt).pow(2).mean()
                ent = (log_std + 0.5 * math.log(2 * math.pi * math.e)).sum()
                loss = pg + 0.5 * v_loss - 0.001 * ent
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
                opt.step()
                del idx, o, a, lp_old, ad, rt, mu, log_std, lp, ratio, pg, v_loss, ent, loss
        if it % 5 == 0:
            torch.stack([rew.sum(1).mean(), err, dev]).tolist()
        del obs, act, logp_old, rew, val, err, dev, adv_l, gae, adv, ret, flat, perm_all
        if (it + 1) % _smoke(20, 2) == 0:
            model.eval()
            with torch.no_grad():
                _, _, _, rew, _, err, dev = _roast_rollout(model, _smoke(1024, 8), _smoke(48, 6), True)
                out = torch.stack([rew.sum(1).mean(), err, dev])
            out.tolist()
            del rew, err, dev, out


# ---------------------------------------------------------------- aroma-compound odour prediction (MPNN)


class _AromaLayer(_nn.Module):
    """One message-passing layer: edge messages from both atoms and the bond embedding, weighted by the edge's
    validity, summed into the receiving atom by index_add; a residual LayerNorm MLP update."""

    def __init__(self, d):
        super().__init__()
        self.msg = mlp(3 * d, d, d, act=_nn.SiLU)
        self.upd = mlp(2 * d, 2 * d, d, act=_nn.SiLU)
        self.norm = _nn.LayerNorm(d)

    def forward(self, h, e, src, dst, w):
        m = self.msg(torch.cat([h.index_select(0, src), h.index_select(0, dst), e], -1))
        m = m * w[:, None].to(m.dtype)
        agg = m.new_zeros(h.shape[0], m.shape[1]).index_add_(0, dst, m)
        return h + self.upd(torch.cat([self.norm(h), agg.to(h.dtype)], -1))


class _AromaMPNN(_nn.Module):
    def __init__(self, n_elem, n_hyb, n_bond, d, layers, n_odour):
        super().__init__()
        self.elem, self.hyb, self.bond = _nn.Embedding(n_elem, d), _nn.Embedding(n_hyb, d), _nn.Embedding(n_bond, d)
        self.atom_in = _nn.Linear(4, d)
        self.layers = _nn.ModuleList(_AromaLayer(d) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.odour = mlp(2 * d, d, n_odour, act=_nn.SiLU)
        self.phys = mlp(2 * d, d, 2, act=_nn.SiLU)

    def forward(self, elem, hyb, afeat, bond, src, dst, w, mol, counts, n_mol):
        h = self.elem(elem) + self.hyb(hyb) + self.atom_in(afeat)
        e = self.bond(bond)
        for layer in self.layers:
            h = layer(h, e, src, dst, w)
        h = self.norm(h)
        summed = h.new_zeros(n_mol, h.shape[1]).index_add_(0, mol, h)
        pooled = torch.cat([summed / counts[:, None], summed / 10.0], -1)
        return self.odour(pooled).float(), self.phys(pooled).float()


def _aroma_batch(counts, n_elem, n_hyb, n_bond, rings):
    """Molecules of the given atom counts (a host list) packed atom after atom: atom types and features drawn on the
    device, chain bonds between consecutive atoms of a molecule and `rings` closure/branch bonds per molecule drawn
    within it; both directions; bonds across molecules or onto the same atom weighted 0."""
    n_mol, n_atom = len(counts), sum(counts)
    cnt = torch.tensor(counts, device="cuda")
    offs = torch.tensor([0] + counts[:-1], device="cuda").cumsum(0)
    mol = torch.repeat_interleave(torch.arange(n_mol, device="cuda"), cnt, output_size=n_atom)
    elem = torch.randint(0, n_elem, (n_atom,), device="cuda")
    hyb = torch.randint(0, n_hyb, (n_atom,), device="cuda")
    afeat = torch.randn(n_atom, 4, device="cuda")
    a = torch.arange(n_atom - 1, device="cuda")
    ring_s = offs[:, None] + (torch.rand(n_mol, rings, device="cuda") * cnt[:, None]).long()
    ring_d = offs[:, None] + (torch.rand(n_mol, rings, device="cuda") * cnt[:, None]).long()
    s0, d0 = torch.cat([a, ring_s.flatten()]), torch.cat([a + 1, ring_d.flatten()])
    w0 = torch.where((mol.index_select(0, s0) == mol.index_select(0, d0)) & (s0 != d0), 1.0, 0.0)
    bond0 = torch.randint(0, n_bond, (s0.shape[0],), device="cuda")
    src, dst = torch.cat([s0, d0]), torch.cat([d0, s0])
    return elem, hyb, afeat, bond0.repeat(2), src, dst, w0.repeat(2), mol, cnt.float()


@_workload("hop and wine aroma-compound odour training (random init, a message-passing network over molecular graphs): 64-256 molecules a step (drawn), each of 6-40 heavy atoms (drawn per molecule; molecules dropped from the end until the step holds at most 6,144 atoms) packed atom after atom, element (of 10) and hybridisation (of 5) types and 4 atom features drawn on the device; chain bonds between consecutive atoms and 3 ring-closure or branch bonds per molecule drawn within it (both directions; bonds across molecules or onto the same atom weighted 0 by torch.where) with a bond type (of 4); 5 message-passing layers (width 192): SiLU MLP messages from both atoms' states and the bond embedding by index_select, summed by index_add into a destination of the messages' dtype, residual LayerNorm MLP updates; per-molecule mean and scaled-sum readout by index_add; a BCE on 32 odour descriptors (citrus, floral, piney, tropical, resinous, ... drawn per molecule at 12%) and an MSE on the log odour threshold and retention index; AdamW, clipping, bf16 autocast, 600 steps; the losses read back every 25 steps and every 150 steps a no-grad pass over 256 molecules of 40 atoms with the descriptor hit rate and the threshold error read back")
def aroma_compound_mpnn_train(rng):
    n_elem, n_hyb, n_bond, n_odour, rings = 10, 5, 4, 32, 3
    d, layers = _smoke(192, 16), _smoke(5, 2)
    model = _AromaMPNN(n_elem, n_hyb, n_bond, d, layers, n_odour).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    lo, hi, budget = 6, _smoke(40, 10), _smoke(6144, 40)

    def targets(b):
        odour = torch.where(torch.rand(b, n_odour, device="cuda") < 0.12, 1.0, 0.0)
        phys = torch.randn(b, 2, device="cuda")
        return odour, phys

    steps = _smoke(600, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(64, 2), _smoke(256, 4))
        counts = [rng.randint(lo, hi) for _ in range(b)]
        while sum(counts) > budget:
            counts.pop()
        graph = _aroma_batch(counts, n_elem, n_hyb, n_bond, rings)
        odour, phys = targets(len(counts))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            p_odour, p_phys = model(*graph, len(counts))
        l_odour = _F.binary_cross_entropy_with_logits(p_odour, odour)
        l_phys = _F.mse_loss(p_phys, phys)
        loss = l_odour + 0.5 * l_phys
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 25 == 0:
            torch.stack([l_odour.detach(), l_phys.detach()]).tolist()
        del graph, odour, phys, p_odour, p_phys, l_odour, l_phys, loss
        if (step + 1) % _smoke(150, 2) == 0:
            model.eval()
            with torch.no_grad():
                nb = _smoke(256, 3)
                graph = _aroma_batch([hi] * nb, n_elem, n_hyb, n_bond, rings)
                odour, phys = targets(nb)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    p_odour, p_phys = model(*graph, nb)
                hit = (torch.where(p_odour > 0, 1.0, 0.0) == odour).float().mean()
                out = torch.stack([hit, (p_phys[:, 0] - phys[:, 0]).abs().mean()])
            out.tolist()
            del graph, odour, phys, p_odour, p_phys, hit, out


# ---------------------------------------------------------------- beer recipe sampler (decoder with a KV cache)


class _RecipeDecoder(_nn.Module):
    """A decoder-only transformer (token and learned position embeddings, pre-norm blocks with a GELU MLP of 4 d,
    tied output projection) run with a key-value cache of `max_len` positions per layer."""

    def __init__(self, vocab, d, heads, layers, max_len):
        super().__init__()
        self.tok, self.pos = _nn.Embedding(vocab, d), _nn.Embedding(max_len, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.h, self.dh = heads, d // heads

    def step(self, ids, p0, kc, vc):
        """Tokens ids (B, T) at positions p0 .. p0 + T - 1: their keys and values written into the caches (slice
        copies), attention over positions 0 .. p0 + T - 1 (causal within the new tokens); the last position's
        logits."""
        b, t = ids.shape
        x = self.tok(ids) + self.pos(torch.arange(p0, p0 + t, device=ids.device))[None]
        for i, blk in enumerate(self.blocks):
            q, k, v = blk.qkv(blk.n1(x)).view(b, t, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)
            kc[i, :, :, p0:p0 + t].copy_(k)
            vc[i, :, :, p0:p0 + t].copy_(v)
            kv = kc[i, :, :, :p0 + t].to(q.dtype), vc[i, :, :, :p0 + t].to(q.dtype)  # a no-op under autocast
            a = _F.scaled_dot_product_attention(q, *kv, is_causal=t > 1)
            x = x + blk.proj(a.transpose(1, 2).reshape(b, t, -1))
            x = x + blk.fc2(_F.gelu(blk.fc1(blk.n2(x))))
        return self.norm(x[:, -1]) @ self.tok.weight.t()


@_workload("beer recipe sampling (random init, a decoder-only transformer with a key-value cache): 17-19 requests (drawn), each 1-16 recipes (drawn) from a prompt of 8-48 tokens (drawn per request: style, target gravity and bitterness, constraints) over a 2,048-token recipe vocabulary, generating 32-160 new tokens (drawn per request; a 256-row position table covers the longest, 208) with a temperature of 0.6-1.1 and a top-k of 16-128 (drawn per request); 6 pre-norm blocks (width 384, 6 heads, a tied output projection) under bf16 autocast, a per-layer key-value cache of 256 positions written by slice copies, the prompt prefilled in one causal pass, then one token a step; each step a recipe grammar mask (each token's section class of 8 looked up on the device, an 8 x 8 transition table drawn once) and the top-k threshold applied by masked_fill, the next token by Gumbel-max; each request's tokens read back once at its end")
def beer_recipe_decoder_sample(rng):
    vocab, d, heads, layers, max_len = _smoke(2048, 64), _smoke(384, 32), _smoke(6, 2), _smoke(6, 1), _smoke(256, 32)
    n_cls = 8
    model = _RecipeDecoder(vocab, d, heads, layers, max_len).cuda().eval()
    model.requires_grad_(False)
    tok_cls = torch.randint(0, n_cls, (vocab,), device="cuda")
    allowed = (torch.rand(n_cls, n_cls, device="cuda") < 0.5) | torch.eye(n_cls, dtype=torch.bool, device="cuda")
    p_lo, p_hi, n_lo, n_hi = _smoke(8, 4), _smoke(48, 8), _smoke(32, 4), _smoke(160, 12)

    nreq = rng.randint(_smoke(17, 2), _smoke(19, 3))
    for _ in range(nreq):
        b, p, n = rng.randint(1, _smoke(16, 3)), rng.randint(p_lo, p_hi), rng.randint(n_lo, n_hi)
        temp, top_k = rng.uniform(0.6, 1.1), rng.randint(_smoke(16, 4), _smoke(128, 8))
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            kc = torch.zeros(layers, b, heads, max_len, d // heads, device="cuda", dtype=torch.bfloat16)
            vc = torch.zeros_like(kc)
            ids = torch.randint(0, vocab, (b, p), device="cuda")
            logits = model.step(ids, 0, kc, vc)
            prev, out = ids[:, -1], []
            for s in range(n):
                lg = logits.float() / temp
                ok = allowed.index_select(0, tok_cls.index_select(0, prev)).index_select(1, tok_cls)
                lg = lg.masked_fill(~ok, -1e9)
                kth = lg.topk(top_k, -1).values[:, -1:]
                lg = lg.masked_fill(lg < kth, -1e9)
                gumbel = -torch.log(-torch.log(torch.rand_like(lg).clamp(1e-9, 1 - 1e-9)))
                prev = (lg + gumbel).argmax(-1)
                out.append(prev)
                if s + 1 < n:
                    logits = model.step(prev[:, None], p + s, kc, vc)
            toks = torch.stack(out, 1)
        toks.tolist()
        del kc, vc, ids, logits, prev, out, lg, ok, kth, gumbel, toks


# ---------------------------------------------------------------- fermenter fleet anomaly service


class _FermenterPatchNet(_nn.Module):
    """Windows of 8 channels cut into 16-sample patches, a linear patch embedding, position and tank embeddings,
    pre-norm blocks; a per-patch reconstruction head, and forecast and state heads on the mean token."""

    def __init__(self, n_ch, patch, d, heads, layers, max_patches, n_tank, horizon, n_state):
        super().__init__()
        self.inp = _nn.Linear(n_ch * patch, d)
        self.pos, self.tank = _nn.Embedding(max_patches, d), _nn.Embedding(n_tank, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.recon = _nn.Linear(d, n_ch * patch)
        self.fc, self.state = mlp(d, d, 2 * horizon, act=_nn.GELU), _nn.Linear(d, n_state)

    def forward(self, patches, tank):
        n, m, _ = patches.shape
        x = self.inp(patches) + self.pos(torch.arange(m, device=patches.device))[None] + self.tank(tank)[:, None]
        for blk in self.blocks:
            x = blk(x)
        x = self.norm(x)
        g = x.mean(1)
        return self.recon(x).float(), self.fc(g).float(), self.state(g).float()


@_workload("fermenter fleet anomaly serving (random init, a patch transformer over raw fermenter sensor windows): 1,750-1,800 requests (drawn), each 1-8 tanks (drawn, distinct) of a brewery's 64 fermenters with a window of 256-1,024 samples (drawn per request, a multiple of 64) of 8 channels (gravity, temperature top and bottom, pressure, CO2 flow, pH, glycol valve, level) as int16 ADC counts, uploaded on a side stream from two reused pinned host buffers (filled once, sized for 8 windows of 1,024 x 8) one request ahead (one span, through SideUploads.ahead); per-channel calibration and per-window standardisation on the device, 16-sample patches (16-64 a window, a 64-row position table) and a tank embedding, 4 pre-norm blocks (width 192, 6 heads) under bf16 autocast; a per-patch reconstruction whose worst patch error is the anomaly score, a 12-hour gravity and temperature forecast (24 values) and a fermentation state (of 4: lag, active, conditioning, stalled); each tank's running score baseline (an exponential average) and seen flag read by index_select and written back by index_copy, an alert flag by torch.where at 3x the baseline; each request's scores, alerts, forecasts and state probabilities read back")
def fermenter_fleet_anomaly_serve(rng):
    n_ch, patch, n_tank, horizon, n_state = 8, 16, _smoke(64, 8), 12, 4
    d, heads, layers = _smoke(192, 32), _smoke(6, 2), _smoke(4, 1)
    max_t, lo, mult, max_n = _smoke(1024, 128), _smoke(256, 64), 64, _smoke(8, 2)
    model = _FermenterPatchNet(n_ch, patch, d, heads, layers, max_t // patch, n_tank, horizon, n_state).cuda().eval()
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(-32768, 32767, (max_n * max_t * n_ch,), dtype=torch.int16, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    gain = torch.rand(n_ch, device="cuda") * 1e-3 + 5e-4
    offset = torch.randn(n_ch, device="cuda")
    baseline = torch.zeros(n_tank, device="cuda")
    seen = torch.zeros(n_tank, device="cuda")

    nreq = rng.randint(_smoke(1750, 3), _smoke(1800, 4))
    plan = []
    for _ in range(nreq):
        n = rng.randint(1, max_n)
        plan.append((n, rng.randint(lo // mult, max_t // mult) * mult, rng.sample(range(n_tank), n)))

    for (n, t, tanks), raw in up.ahead(plan, lambda p: (p[0] * p[1] * n_ch,)):
        with torch.no_grad():
            x = raw.view(n, t, n_ch).float() * gain + offset
            x = (x - x.mean(1, keepdim=True)) / (x.std(1, keepdim=True) + 1e-6)
            patches = x.view(n, t // patch, patch * n_ch)
            tank = torch.tensor(tanks, device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                recon, fc, state = model(patches, tank)
            score = (recon - patches).pow(2).mean(-1).amax(-1)
            base, was = baseline.index_select(0, tank), seen.index_select(0, tank)
            alert = torch.where((was > 0) & (score > 3.0 * base), 1.0, 0.0)
            baseline.index_copy_(0, tank, torch.where(was > 0, 0.95 * base + 0.05 * score, score))
            seen.index_copy_(0, tank, torch.ones_like(score))
            out = torch.cat([score, alert, fc.flatten(), state.softmax(-1).flatten()])
        out.tolist()
        del raw, x, patches, tank, recon, fc, state, score, base, was, alert, out

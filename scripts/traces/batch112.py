"""The hundred-and-twelfth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch111_b.py are): video games and esports, written in torch alone, first half. An arcade game-playing agent trained
by PPO on rendered frames (an IMPALA-style residual convnet over stacked grayscale frames of drawn resolutions, a
rollout's old log-probabilities and values, generalised advantage estimation, clipped policy updates over shuffled
minibatches), esports win-probability forecasting training (a player-set attention block per game minute pooled by
team, a causal transformer over the minutes of matches of drawn lengths, a win logit and a gold-lead forecast per
minute), player skill-rating forecasting training (a two-layer GRU written out step by step over each player's
match history of drawn lengths, the next match's win probability and rating change) and a toxic chat moderation
service (a byte-level convnet with parallel kernel widths and masked max- and mean-pooling over chat messages of
drawn lengths, six moderation labels, per-channel tallies and per-user strikes kept on the device by index_add).
Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths,
resolutions and batch sizes are fixed on the host, padding handled by masks or by torch.where / masked_fill, no
boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
toxic_chat_bytecnn_serve uploads its messages on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every embedding and position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new112.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and
for the CPU smoke run (RECORD_SMOKE=1).
"""

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- arcade agent trained by PPO on rendered frames


class _ImpalaRes(_nn.Module):
    """IMPALA's residual block: ReLU, 3x3 convolution, ReLU, 3x3 convolution, added to the input."""

    def __init__(self, c):
        super().__init__()
        self.c1, self.c2 = _nn.Conv2d(c, c, 3, 1, 1), _nn.Conv2d(c, c, 3, 1, 1)

    def forward(self, x):
        return x + self.c2(_F.relu(self.c1(_F.relu(x))))


class _ImpalaAgent(_nn.Module):
    """IMPALA-style stages (a 3x3 convolution, a stride-2 3x3 max-pool, two residual blocks), an adaptive average
    pool to 6 x 6 (so any frame size gives the same width), a 256-wide dense layer; policy logits and a value."""

    def __init__(self, frames, widths, hidden, n_act):
        super().__init__()
        stages, c = [], frames
        for w in widths:
            stages += [_nn.Conv2d(c, w, 3, 1, 1), _nn.MaxPool2d(3, 2, 1), _ImpalaRes(w), _ImpalaRes(w)]
            c = w
        self.body = _nn.Sequential(*stages)
        self.fc = _nn.Linear(c * 36, hidden)
        self.pi, self.v = _nn.Linear(hidden, n_act), _nn.Linear(hidden, 1)

    def forward(self, x):
        z = _F.adaptive_avg_pool2d(_F.relu(self.body(x)), 6).flatten(1)
        z = _F.relu(self.fc(z))
        return self.pi(z).float(), self.v(z).float()[:, 0]


@_workload("arcade game-playing agent training by PPO on rendered frames (random init, an IMPALA-style residual convnet): 70 iterations, each a rollout of 16-64 environments (drawn) x 16-32 steps (drawn, at most 2,048 frames) of 4 stacked grayscale frames of 64, 72, 84 or 96 px (drawn per iteration) drawn on the device as uint8 and scaled, with rewards (sparse, 5% of steps) and episode ends (2%) drawn on the device; a no-grad pass of the agent (stages of 16/32/32 channels, each a 3x3 convolution, a stride-2 max-pool and two residual blocks, an adaptive pool to 6 x 6, a 256-wide dense layer, 18 action logits and a value) giving the rollout's actions (sampled by Gumbel-max), old log-probabilities and values; generalised advantage estimation (gamma 0.99, lambda 0.95) written out backwards over the rollout's steps; 3 epochs of 4 shuffled minibatches (a randperm on the device) of the clipped PPO objective (clip 0.2), a clipped value loss and an entropy bonus; Adam, clipping, bf16 autocast; the losses, approximate KL and clip fraction read back after each iteration's last minibatch and every 14 iterations the mean return of the rollout read back")
def arcade_frame_ppo_train(rng):
    frames, n_act = 4, 18
    widths, hidden = _smoke([16, 32, 32], [8, 8]), _smoke(256, 16)
    model = _ImpalaAgent(frames, widths, hidden, n_act).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=2.5e-4, eps=1e-5)
    res_opts = _smoke([64, 72, 84, 96], [24, 32])
    gamma, lam, clip = 0.99, 0.95, 0.2
    iters, epochs, n_mb = _smoke(70, 2), _smoke(3, 1), _smoke(4, 2)
    for it in range(iters):
        n_env = rng.randint(_smoke(16, 2), _smoke(64, 4))
        t_len = rng.randint(_smoke(16, 3), min(_smoke(32, 4), _smoke(2048, 16) // n_env))
        res = rng.choice(res_opts)
        n = n_env * t_len
        obs = torch.randint(0, 256, (n, frames, res, res), device="cuda", dtype=torch.uint8)
        rew = torch.where(torch.rand(t_len, n_env, device="cuda") < 0.05, 1.0, 0.0)
        done = torch.rand(t_len, n_env, device="cuda") < 0.02
        model.eval()
        with torch.no_grad():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits, value = model(obs.float() / 255.0)
            gumbel = -torch.log(-torch.log(torch.rand_like(logits).clamp(1e-9, 1 - 1e-9)))
            act = (logits + gumbel).argmax(-1)
            old_logp = torch.log_softmax(logits, -1).gather(1, act[:, None])[:, 0]
            v = value.view(t_len, n_env)
            boot = torch.zeros(n_env, device="cuda")
            adv_steps, gae = [], torch.zeros(n_env, device="cuda")
            for t in range(t_len - 1, -1, -1):
                nxt = v[t + 1] if t + 1 < t_len else boot
                live = torch.where(done[t], 0.0, 1.0)
                delta = rew[t] + gamma * nxt * live - v[t]
                gae = delta + gamma * lam * live * gae
                adv_steps.append(gae)
            adv = torch.stack(adv_steps[::-1]).flatten()
            ret = adv + value
        del logits, gumbel, v, boot, adv_steps, gae
        model.train()
        mb = n // n_mb
        for ep in range(epochs):
            perm = torch.randperm(n, device="cuda")
            for k in range(n_mb):
                idx = perm[k * mb:(k + 1) * mb]
                x = obs.index_select(0, idx).float() / 255.0
                a, olp, av, rt, ov = (t.index_select(0, idx) for t in (act, old_logp, adv, ret, value))
                av = (av - av.mean()) / (av.std() + 1e-8)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits, val = model(x)
                logp_all = torch.log_softmax(logits, -1)
                logp = logp_all.gather(1, a[:, None])[:, 0]
                ratio = torch.exp(logp - olp)
                pg = -torch.minimum(ratio * av, ratio.clamp(1 - clip, 1 + clip) * av).mean()
                v_clip = ov + (val - ov).clamp(-clip, clip)
                vl = 0.5 * torch.maximum((val - rt).pow(2), (v_clip - rt).pow(2)).mean()
                ent = -(logp_all.exp() * logp_all).sum(-1).mean()
                loss = pg + 0.5 * vl - 0.01 * ent
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
                opt.step()
                if ep == epochs - 1 and k == n_mb - 1:
                    with torch.no_grad():
                        kl = (olp - logp).mean()
                        frac = torch.where((ratio - 1).abs() > clip, 1.0, 0.0).mean()
                        out = torch.stack([pg.detach(), vl.detach(), ent.detach(), kl, frac])
                    out.tolist()
                    del kl, frac, out
                del idx, x, a, olp, av, rt, ov, logits, val, logp_all, logp, ratio, pg, v_clip, vl, ent, loss
            del perm
        if (it + 1) % _smoke(14, 1) == 0:
            rew.sum(0).mean().item()
        del obs, rew, done, act, old_logp, value, adv, ret


# ---------------------------------------------------------------- esports win-probability forecasting


class _WinProbNet(_nn.Module):
    """Per game minute: each of the 10 players' stats with hero, role and side embeddings into one player-set
    attention block, mean-pooled by team; the two teams, the objective counts and a minute-position row into the
    model width; causal pre-norm blocks over the minutes (causal and key masks combined); a win logit and a
    five-minute gold-lead forecast per minute."""

    def __init__(self, n_stat, n_obj, n_hero, d_p, d, heads, layers, max_min):
        super().__init__()
        self.p_in = _nn.Linear(n_stat, d_p)
        self.hero, self.role, self.side = _nn.Embedding(n_hero, d_p), _nn.Embedding(5, d_p), _nn.Embedding(2, d_p)
        self.pset = PreNormBlock(d_p, 4)
        self.m_in = _nn.Linear(2 * d_p + n_obj, d)
        self.pos = _nn.Embedding(max_min, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.win, self.gold = _nn.Linear(d, 1), mlp(d, d, 1, act=_nn.GELU)

    def forward(self, stats, heroes, obj, keep):
        b, t, p, _ = stats.shape
        roles = torch.arange(5, device=stats.device).repeat(2)
        sides = torch.arange(2, device=stats.device).repeat_interleave(5)
        x = self.p_in(stats) + self.hero(heroes)[:, None] + (self.role(roles) + self.side(sides))[None, None]
        x = self.pset(x.reshape(b * t, p, -1)).view(b, t, 2, 5, -1).mean(3).flatten(2)
        y = self.m_in(torch.cat([x, obj.to(x.dtype)], -1)) + self.pos(torch.arange(t, device=stats.device))[None]
        causal = torch.ones(t, t, dtype=torch.bool, device=stats.device).tril()
        mask = causal[None, None] & keep[:, None, None, :]
        for blk in self.blocks:
            y = blk(y, mask=mask)
        y = self.norm(y)
        return self.win(y).float()[..., 0], self.gold(y).float()[..., 0]


@_workload("esports win-probability forecasting training (random init, a player-set attention block and a causal transformer over game minutes): 24-96 matches a step (drawn), each match's own length of 15 to the step's drawn 24-64 minutes (drawn per match, padded to the step's longest rounded up to a multiple of 8, a 64-row minute table); per minute 10 players (two teams of five roles) with 16 stats each (gold, experience, kills, deaths, assists, creep score, damage, wards, position) and a hero (of 160) per player per match, plus 12 objective counts (towers, dragons, barons, inhibitors and others per side), drawn on the device; one pre-norm player-set block (width 64, 4 heads) over each minute's 10 players, mean-pooled per team; 4 causal pre-norm blocks (width 192, 6 heads) over the minutes under causal and key masks; a binary cross-entropy of the match result at every played minute (masked) and a Huber loss on the gold lead five minutes on (masked where that minute is past the end); AdamW, clipping, bf16 autocast, 450 steps; the losses read back every 20 steps and every 90 steps a no-grad evaluation of 128 matches of 64 minutes with the Brier score and accuracy at minutes 10, 20 and 30 read back")
def esports_winprob_transformer_train(rng):
    n_stat, n_obj, n_hero = 16, 12, 160
    d_p, d, heads, layers = _smoke(64, 16), _smoke(192, 32), _smoke(6, 2), _smoke(4, 1)
    max_min = _smoke(64, 24)
    model = _WinProbNet(n_stat, n_obj, n_hero, d_p, d, heads, layers, max_min).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)

    def matches(lengths):
        b, t = len(lengths), min(max_min, -(-max(lengths) // 8) * 8)
        keep = keep_mask(lengths, t)
        stats = torch.randn(b, t, 10, n_stat, device="cuda") * keep[..., None, None]
        heroes = torch.randint(0, n_hero, (b, 10), device="cuda")
        obj = torch.randint(0, 4, (b, t, n_obj), device="cuda").float().cumsum(1) / 10.0 * keep[..., None]
        result = torch.randint(0, 2, (b,), device="cuda").float()
        lead = torch.randn(b, t, device="cuda").cumsum(1) * 0.3
        ahead = torch.cat([lead[:, 5:], lead.new_zeros(b, 5)], 1)
        ahead_keep = keep_mask([max(0, n - 5) for n in lengths], t)
        return stats, heroes, obj, keep, result, ahead, ahead_keep

    steps = _smoke(450, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(24, 2), _smoke(96, 4))
        t_hi = rng.randint(_smoke(24, 16), max_min)
        stats, heroes, obj, keep, result, ahead, akeep = matches([rng.randint(_smoke(15, 8), t_hi) for _ in range(b)])
        with torch.autocast("cuda", dtype=torch.bfloat16):
            win, gold = model(stats, heroes, obj, keep)
        w, wa = keep.float(), akeep.float()
        l_win = (_F.binary_cross_entropy_with_logits(win, result[:, None].expand_as(win), reduction="none") * w
                 ).sum() / w.sum()
        l_gold = (_F.huber_loss(gold, ahead, reduction="none") * wa).sum() / wa.sum().clamp(min=1)
        loss = l_win + 0.5 * l_gold
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_win.detach(), l_gold.detach()]).tolist()
        del stats, heroes, obj, keep, result, ahead, akeep, win, gold, w, wa, l_win, l_gold, loss
        if (step + 1) % _smoke(90, 2) == 0:
            model.eval()
            with torch.no_grad():
                stats, heroes, obj, keep, result, _, _ = matches([max_min] * _smoke(128, 3))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    win, _ = model(stats, heroes, obj, keep)
                p = torch.sigmoid(win[:, [min(m, max_min - 1) for m in (10, 20, 30)]])
                brier = (p - result[:, None]).pow(2).mean(0)
                acc = torch.where((p > 0.5) == (result[:, None] > 0.5), 1.0, 0.0).mean(0)
                out = torch.cat([brier, acc])
            out.tolist()
            del stats, heroes, obj, keep, result, win, p, brier, acc, out


# ---------------------------------------------------------------- player skill-rating forecasting (GRU)


class _SkillGru(_nn.Module):
    """Each past match's stats with hero, role and game-mode embeddings and the result into a GRU of `layers`
    layers written out step by step (input gates for all steps at once, padded steps keeping the state by
    torch.where); the next match's win logit from the state and the next opponents' rating gap, and the
    rating change."""

    def __init__(self, n_stat, n_hero, n_mode, d_in, hidden, layers):
        super().__init__()
        self.inp = _nn.Linear(n_stat + 2, d_in)
        self.hero, self.role, self.mode = _nn.Embedding(n_hero, d_in), _nn.Embedding(5, d_in), \
            _nn.Embedding(n_mode, d_in)
        self.ih = _nn.ModuleList(_nn.Linear(d_in if i == 0 else hidden, 3 * hidden) for i in range(layers))
        self.hh = _nn.ModuleList(_nn.Linear(hidden, 3 * hidden) for _ in range(layers))
        self.win = mlp(hidden + 1, hidden, 1, act=_nn.GELU)
        self.delta = mlp(hidden, hidden, 1, act=_nn.GELU)
        self.hidden = hidden

    def forward(self, stats, won, gap, hero, role, mode, keep):
        b, t, _ = stats.shape
        z = self.inp(torch.cat([stats, won[..., None], gap[..., None]], -1))
        z = z + self.hero(hero) + self.role(role) + self.mode(mode)
        for ih, hh in zip(self.ih, self.hh):
            gi = ih(z)
            h = z.new_zeros(b, self.hidden, dtype=torch.float32)
            outs = []
            for s in range(t):
                ir, iz, inn = gi[:, s].chunk(3, -1)
                hr, hz, hn = hh(h).chunk(3, -1)
                r, u = torch.sigmoid(ir + hr), torch.sigmoid(iz + hz)
                cand = torch.tanh(inn + r * hn)
                h = torch.where(keep[:, s, None], cand + u * (h - cand), h)
                outs.append(h)
            z = torch.stack(outs, 1)
        return z

    def heads(self, z, next_gap):
        win = self.win(torch.cat([z, next_gap[..., None].to(z.dtype)], -1))[..., 0].float()
        return win, self.delta(z)[..., 0].float()


@_workload("player skill-rating forecasting training (random init, a GRU written out step by step over match histories): 128-512 players a step (drawn), the step's history length 16-48 matches (drawn) and each player's own length of 8 to it (drawn per player, masked), per match 20 stats (kills, deaths, assists, damage, healing, objective time, accuracy, reaction, economy), the result and the rating gap to the opponents, a hero (of 128), a role (of 5) and a game mode (of 6), drawn on the device; a 2-layer GRU (input width 96, hidden 192) written out step by step with padded steps keeping the state by torch.where; at every match the next match's win logit from the state and the next rating gap (binary cross-entropy) and the next rating change (Huber), both masked to matches with a next one; AdamW, clipping, bf16 autocast, 112 steps; the losses read back every 10 steps and every 56 steps a no-grad evaluation of 512 players of 48 matches with the win log-loss and rating-change mean absolute error read back")
def player_mmr_gru_train(rng):
    n_stat, n_hero, n_mode = 20, 128, 6
    d_in, hidden, layers = _smoke(96, 16), _smoke(192, 16), _smoke(2, 1)
    model = _SkillGru(n_stat, n_hero, n_mode, d_in, hidden, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    lo, hi = _smoke(16, 6), _smoke(48, 8)

    def histories(lengths, t):
        b = len(lengths)
        keep = keep_mask(lengths, t)
        nxt = keep_mask([n - 1 for n in lengths], t)  # matches with a next one in the history
        stats = torch.randn(b, t, n_stat, device="cuda") * keep[..., None]
        won = torch.randint(0, 2, (b, t), device="cuda").float()
        gap = torch.randn(b, t, device="cuda") * 0.5
        hero = torch.randint(0, n_hero, (b, t), device="cuda")
        role = torch.randint(0, 5, (b, t), device="cuda")
        mode = torch.randint(0, n_mode, (b, t), device="cuda")
        delta = torch.randn(b, t, device="cuda") * 0.25
        shift = (torch.cat([won[:, 1:], won[:, :1]], 1), torch.cat([gap[:, 1:], gap[:, :1]], 1),
                 torch.cat([delta[:, 1:], delta[:, :1]], 1))
        return (stats, won, gap, hero, role, mode, keep), nxt, shift

    steps = _smoke(112, 3)
    for step in range(steps):
        model.train()
        b, t = rng.randint(_smoke(128, 2), _smoke(512, 4)), rng.randint(lo, hi)
        inp, nxt, (won_n, gap_n, delta_n) = histories([rng.randint(_smoke(8, 4), t) for _ in range(b)], t)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            z = model(*inp)
            win, delta = model.heads(z, gap_n)
        w = nxt.float()
        l_win = (_F.binary_cross_entropy_with_logits(win, won_n, reduction="none") * w).sum() / w.sum()
        l_delta = (_F.huber_loss(delta, delta_n, reduction="none") * w).sum() / w.sum()
        loss = l_win + l_delta
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_win.detach(), l_delta.detach()]).tolist()
        del inp, nxt, won_n, gap_n, delta_n, z, win, delta, w, l_win, l_delta, loss
        if (step + 1) % _smoke(56, 2) == 0:
            model.eval()
            with torch.no_grad():
                nb = _smoke(512, 3)
                inp, nxt, (won_n, gap_n, delta_n) = histories([hi] * nb, hi)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    win, delta = model.heads(model(*inp), gap_n)
                w = nxt.float()
                ll = (_F.binary_cross_entropy_with_logits(win, won_n, reduction="none") * w).sum() / w.sum()
                mae = ((delta - delta_n).abs() * w).sum() / w.sum()
                out = torch.stack([ll, mae])
            out.tolist()
            del inp, nxt, won_n, gap_n, delta_n, win, delta, w, ll, mae, out


# ---------------------------------------------------------------- toxic chat moderation service


class _ByteCnn(_nn.Module):
    """Byte embeddings, three parallel 1-d convolutions of kernel widths 3, 5 and 7, a second convolution on
    their concatenation, masked max- and mean-pooling over each message's bytes, a highway layer; six
    moderation logits."""

    def __init__(self, d_emb, c, n_lab):
        super().__init__()
        self.emb = _nn.Embedding(256, d_emb)
        self.convs = _nn.ModuleList(_nn.Conv1d(d_emb, c, k, 1, k // 2) for k in (3, 5, 7))
        self.mix = _nn.Conv1d(3 * c, 2 * c, 3, 1, 1)
        self.hw_t, self.hw_h = _nn.Linear(4 * c, 4 * c), _nn.Linear(4 * c, 4 * c)
        self.out = _nn.Linear(4 * c, n_lab)

    def forward(self, ids, keep):
        x = self.emb(ids).transpose(1, 2)
        y = torch.cat([_F.gelu(cv(x)) for cv in self.convs], 1)
        y = _F.gelu(self.mix(y))
        m = keep[:, None, :]
        mx = y.masked_fill(~m, -1e4).amax(2)
        w = m.to(y.dtype)
        mean = (y * w).sum(2) / w.sum(2).clamp(min=1)
        z = torch.cat([mx, mean], 1)
        g = torch.sigmoid(self.hw_t(z))
        z = g * _F.relu(self.hw_h(z)) + (1 - g) * z
        return self.out(z).float()


@_workload("toxic chat moderation serving (random init, a byte-level convnet): 6,500-6,600 requests (drawn) from a game's chat servers, each a batch of 8-64 chat messages (drawn) padded to 32-256 bytes (drawn per request, a multiple of 32) with each message's own length of 4 to that (drawn per message, masked), uint8 bytes uploaded on a side stream from two reused pinned host buffers (filled once, sized for 64 x 256 bytes) one request ahead (one span, through SideUploads.ahead); a 64-wide byte embedding, parallel 1-d convolutions of widths 3, 5 and 7 (128 channels each), a 256-channel mixing convolution, masked max- and mean-pooling, a highway layer, six moderation logits (toxicity, insult, threat, hate, sexual, spam) under bf16 autocast; per message the label probabilities and a mute flag by torch.where (any probability over 0.8); each message's sender (one of 8,192 players, drawn on the device) and the request's channel (one of 512, drawn) given strikes and label tallies by index_add into on-device tables; each request's probabilities, flags, the senders' strike counts (index_select) and the channel's tallies read back")
def toxic_chat_bytecnn_serve(rng):
    d_emb, c, n_lab = _smoke(64, 16), _smoke(128, 16), 6
    model = _ByteCnn(d_emb, c, n_lab).cuda().eval()
    model.requires_grad_(False)
    max_m, l_lo, l_hi, mult = _smoke(64, 4), _smoke(32, 16), _smoke(256, 32), _smoke(32, 16)
    n_user, n_chan = _smoke(8192, 64), _smoke(512, 8)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(32, 127, (max_m * l_hi,), dtype=torch.uint8, generator=gen).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    strikes = torch.zeros(n_user, device="cuda")
    tallies = torch.zeros(n_chan, n_lab, device="cuda")

    nreq = rng.randint(_smoke(6500, 3), _smoke(6600, 4))
    plan = []
    for _ in range(nreq):
        m, ln = rng.randint(_smoke(8, 2), max_m), rng.randint(l_lo // mult, l_hi // mult) * mult
        plan.append((m, ln, [rng.randint(4, ln) for _ in range(m)], rng.randrange(n_chan)))

    for (m, ln, lengths, chan), raw in up.ahead(plan, lambda p: (p[0] * p[1],)):
        with torch.no_grad():
            keep = keep_mask(lengths, ln)
            ids = raw.view(m, ln).long().masked_fill(~keep, 0)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(ids, keep)
            prob = torch.sigmoid(logits)
            flag = torch.where(prob.amax(1) > 0.8, 1.0, 0.0)
            users = torch.randint(0, n_user, (m,), device="cuda")
            strikes.index_add_(0, users, flag)
            chan_t = torch.full((1,), chan, device="cuda", dtype=torch.long)
            tallies.index_add_(0, chan_t, prob.sum(0, keepdim=True))
            out = torch.cat([prob.flatten(), flag, strikes.index_select(0, users),
                             tallies.index_select(0, chan_t).flatten()])
        out.tolist()
        del raw, keep, ids, logits, prob, flag, users, chan_t, out

"""The thirty-third batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch32_b.py are): XLNet-style permutation language-model pretraining with two-stream attention over sequences of
varying length, ECAPA-TDNN speaker-verification training on crops of varying duration, an IMPALA learner with
V-trace over trajectory batches of varying size and unroll length (uploaded on a side stream), and recurrent
multi-agent PPO (MAPPO) on maps of varying agent counts. Same conventions: models built from configs
(hand-written torch here) with random weights, nothing downloaded, `rng` the workload's random.Random for every
shape, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's
value. impala_vtrace uploads every learner batch from two reused pinned host buffers on a side stream (the compute
stream waiting on the batch's event, the uploaded tensors record_stream'ed); the other three are single-stream.
xlnet_perm_train and ecapa_spkver_train run under bf16 autocast (ecapa's filterbank features in fp32),
impala_vtrace and mappo_smac_train in fp32 (mappo_smac_train stays under 1 GB requested).

record.py calls `register(<its own module object>)` once, just before main(), after batch32_b's: every workload
below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it reaches
record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch33_b.py's header says the same of its half): every workload of this
half was run whole, at its real sizes (RECORD_SMOKE unset), on PyTorch's meta device (a runner like
/tmp/b33/meta_run.py, not committed: smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered
with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking its math path; boolean-mask indexing,
which the meta device cannot size, is avoided) and its op outputs counted there (events about 1.8x that count);
the counts and peaks are in record_new33.sh's header. All eight also passed the CPU smoke run (RECORD_SMOKE=1).
"""

import math

import torch

from batch_common import Batch, upload

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- XLNet permutation LM


class _TwoStream(torch.nn.Module):
    """An XLNet layer (post-norm): the content stream h attends to every token at or before it in the factorization
    order, the query stream g (target positions only, no content of their own) to the tokens strictly before its
    target; both streams share the attention and feed-forward weights (the query stream reuses W_q)."""

    def __init__(self, d, heads):
        super().__init__()
        nn = torch.nn
        self.h, self.d = heads, d
        self.qkv, self.o, self.n1 = nn.Linear(d, 3 * d), nn.Linear(d, d), nn.LayerNorm(d)
        self.fc1, self.fc2, self.n2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d), nn.LayerNorm(d)

    def heads_(self, t):
        return t.unflatten(-1, (self.h, -1)).transpose(1, 2)

    def ffn(self, x):
        return self.n2(x + self.fc2(torch.nn.functional.gelu(self.fc1(x))))

    def forward(self, h, g, cmask, qmask):
        sdpa = torch.nn.functional.scaled_dot_product_attention
        q, k, v = (self.heads_(t) for t in self.qkv(h).chunk(3, -1))
        qg = self.heads_(torch.nn.functional.linear(g, self.qkv.weight[:self.d], self.qkv.bias[:self.d]))
        ah = sdpa(q, k, v, attn_mask=cmask).transpose(1, 2).flatten(2)
        ag = sdpa(qg, k, v, attn_mask=qmask).transpose(1, 2).flatten(2)
        h = self.ffn(self.n1(h + self.o(ah)))
        g = self.ffn(self.n1(g + self.o(ag)))
        return h, g


@_workload("permutation language-model pretraining, XLNet-style (Yang et al. 2019) two-stream self-attention written by hand (no recurrence memory): 8 post-norm layers of 768 (12 heads, GELU FFN 3072, learned absolute positions, 32000-token vocabulary tied to the output); every step a sequence length of 64-512 (drawn log-uniform, multiple of 16) and as many rows as fit a 6144-token budget (at most 64), a factorization order drawn per row on the device (argsort of uniform noise) and its ranks (argsort again); the content stream masked by rank <= rank (a boolean mask per row), the query stream started from a learned mask embedding plus the target's position for the last 1/K of each order (partial prediction, K drawn 6 or 7 per step; targets gathered by torch.gather) and masked by rank < target rank; cross-entropy on the query stream's tied-softmax logits; AdamW with warmup and linear decay, gradient clipping at 1, 200 steps, the loss read back every 20 steps; bf16 autocast")
def xlnet_perm_train(rng):
    nn, f = torch.nn, torch.nn.functional
    d, heads, nl, vocab = _smoke(768, 32), _smoke(12, 2), _smoke(8, 1), _smoke(32000, 300)
    nsteps, budget = _smoke(200, 3), _smoke(6144, 96)
    tok, pos = nn.Embedding(vocab, d), nn.Embedding(512, d)
    mask_emb = nn.Parameter(torch.randn(d) * 0.02)
    layers = nn.ModuleList(_TwoStream(d, heads) for _ in range(nl))
    n0 = nn.LayerNorm(d)
    model = nn.ModuleList([tok, pos, layers, n0]).cuda()
    mask_emb = nn.Parameter(mask_emb.detach().cuda())
    params = list(model.parameters()) + [mask_emb]
    opt = torch.optim.AdamW(params, lr=2e-4, weight_decay=0.01)

    with torch.autocast("cuda", dtype=torch.bfloat16):
        for step in range(nsteps):
            lr = 2e-4 * min(1.0, (step + 1) / 20) * (1 - step / nsteps)
            for g_ in opt.param_groups:
                g_["lr"] = lr
            L = _loguniform(rng, _smoke(64, 8), _smoke(512, 32)) // 16 * 16 or 16
            B = min(64, max(1, budget // L))
            K = rng.choice([6, 7])
            P = max(1, L // K)
            ids = torch.randint(0, vocab, (B, L), device="cuda")
            perm = torch.rand(B, L, device="cuda").argsort(1)  # factorization order: perm[r] = r-th token predicted
            rank = perm.argsort(1)  # rank[i]: where token i sits in the order
            cmask = (rank[:, None, :] <= rank[:, :, None])[:, None]  # (B, 1, L, L)
            trank = torch.arange(L - P, L, device="cuda")
            qmask = (rank[:, None, :] < trank[None, :, None])[:, None]  # (B, 1, P, L)
            tgt = perm[:, L - P:]  # the last P tokens of each order are predicted
            h = n0(tok(ids) + pos(torch.arange(L, device="cuda")))
            g = n0(mask_emb + pos(tgt))
            for layer in layers:
                h, g = layer(h, g, cmask, qmask)
            logits = f.linear(g, tok.weight).float()
            loss = f.cross_entropy(logits.flatten(0, 1), ids.gather(1, tgt).flatten())
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            if (step + 1) % _smoke(20, 1) == 0:
                loss.item()
            del ids, perm, rank, cmask, qmask, tgt, h, g, logits, loss
    torch.cuda.synchronize()


# ---------------------------------------------------------------- ECAPA-TDNN speaker verification


class _SERes2(torch.nn.Module):
    """ECAPA-TDNN's SE-Res2Block: 1x1 conv, a Res2Net dilated conv over 8 channel groups (hierarchical, each group
    adding the previous group's output), 1x1 conv, squeeze-excitation, residual."""

    def __init__(self, c, dil, scale=8):
        super().__init__()
        nn = torch.nn
        w = c // scale
        self.scale = scale
        self.c1, self.b1 = nn.Conv1d(c, c, 1), nn.BatchNorm1d(c)
        self.convs = nn.ModuleList(nn.Conv1d(w, w, 3, dilation=dil, padding=dil) for _ in range(scale - 1))
        self.bns = nn.ModuleList(nn.BatchNorm1d(w) for _ in range(scale - 1))
        self.c3, self.b3 = nn.Conv1d(c, c, 1), nn.BatchNorm1d(c)
        self.se1, self.se2 = nn.Conv1d(c, 128, 1), nn.Conv1d(128, c, 1)

    def forward(self, x):
        relu = torch.relu
        y = self.b1(relu(self.c1(x)))
        sp = y.chunk(self.scale, 1)
        outs, prev = [], None
        for i in range(self.scale - 1):
            s = sp[i] if prev is None else sp[i] + prev
            prev = self.bns[i](relu(self.convs[i](s)))
            outs.append(prev)
        outs.append(sp[-1])
        y = self.b3(relu(self.c3(torch.cat(outs, 1))))
        w = torch.sigmoid(self.se2(relu(self.se1(y.mean(2, keepdim=True)))))
        return x + y * w


class _Ecapa(torch.nn.Module):
    def __init__(self, c, nmel=80, emb=192):
        super().__init__()
        nn = torch.nn
        self.c0, self.b0 = nn.Conv1d(nmel, c, 5, padding=2), nn.BatchNorm1d(c)
        self.blocks = nn.ModuleList(_SERes2(c, dil) for dil in (2, 3, 4))
        self.mfa = nn.Conv1d(3 * c, 1536, 1)
        self.att1, self.att2 = nn.Conv1d(3 * 1536, 128, 1), nn.Conv1d(128, 1536, 1)
        self.bn_att = nn.BatchNorm1d(128)
        self.bn_pool, self.fc, self.bn_emb = nn.BatchNorm1d(3072), nn.Linear(3072, emb), nn.BatchNorm1d(emb)

    def forward(self, feats):
        x = self.b0(torch.relu(self.c0(feats)))
        outs = []
        for blk in self.blocks:
            x = blk(x)
            outs.append(x)
        x = torch.relu(self.mfa(torch.cat(outs, 1)))
        T = x.shape[2]
        mu = x.mean(2, keepdim=True)
        sd = (x.var(2, keepdim=True, unbiased=False) + 1e-5).sqrt()
        gx = torch.cat([x, mu.expand(-1, -1, T), sd.expand(-1, -1, T)], 1)  # global context
        w = torch.softmax(self.att2(torch.tanh(self.bn_att(torch.relu(self.att1(gx))))), 2)
        m = (x * w).sum(2)
        s = ((x * x * w).sum(2) - m * m).clamp(min=1e-5).sqrt()
        return self.bn_emb(self.fc(self.bn_pool(torch.cat([m, s], 1))))


def _mel_fbank(n_fft, nmel, sr):
    """A triangular mel filterbank (n_fft // 2 + 1, nmel) on the device."""
    freqs = torch.linspace(0, sr / 2, n_fft // 2 + 1, device="cuda")
    mel = lambda hz: 2595 * math.log10(1 + hz / 700)  # noqa: E731
    pts = torch.linspace(mel(0), mel(sr / 2), nmel + 2, device="cuda")
    hz = 700 * (10 ** (pts / 2595) - 1)
    lo, ce, hi = hz[:-2], hz[1:-1], hz[2:]
    up = (freqs[:, None] - lo) / (ce - lo)
    down = (hi - freqs[:, None]) / (hi - ce)
    return torch.clamp(torch.minimum(up, down), min=0)


@_workload("speaker-verification training, ECAPA-TDNN (Desplanques et al. 2020, the C=512 model) with an additive-angular-margin softmax as the VoxCeleb2 recipes train it, written by hand: 16 kHz waveforms made on the device, random crops of 2-6 s (drawn per step, all clips of a step cropped alike) in batches set by a 240 s audio budget (40-120 clips), 80-band log-mel filterbanks (STFT 512 / hop 160 / 400-sample Hann window, per-utterance mean normalization) in fp32; a 5-wide conv stem, three SE-Res2Blocks (dilations 2, 3, 4, 8 channel groups each, squeeze-excitation of 128), multi-layer feature aggregation to 1536, channel- and context-dependent attentive statistics pooling, a 192-d embedding; AAM-softmax over 5994 speakers (margin 0.2, scale 30); Adam with a triangular cyclic learning rate, weight decay 2e-5, 280 steps, the loss read back every 20 steps; every 70 steps a verification pass (no grad, eval mode) embedding 8 full utterances of 4-20 s one at a time, cosine scores of all pairs read back; bf16 autocast")
def ecapa_spkver_train(rng):
    f = torch.nn.functional
    c, nspk, sr = _smoke(512, 32), _smoke(5994, 50), 16000
    nsteps = _smoke(280, 3)
    model = _Ecapa(c).cuda()
    W = torch.nn.Parameter(torch.randn(nspk, 192, device="cuda") * 0.01)
    params = list(model.parameters()) + [W]
    opt = torch.optim.Adam(params, lr=1e-3, weight_decay=2e-5)
    fb = _mel_fbank(512, 80, sr)
    window = torch.hann_window(400).to("cuda")
    m_, s_ = 0.2, 30.0
    cos_m, sin_m, th, mm = math.cos(m_), math.sin(m_), math.cos(math.pi - m_), math.sin(math.pi - m_) * m_
    budget = _smoke(240.0, 1.0)

    def feats(wav):
        spec = torch.stft(wav, 512, 160, 400, window, center=True, return_complex=True)
        p = spec.abs().pow(2)
        x = torch.log(torch.matmul(p.transpose(1, 2), fb) + 1e-6).transpose(1, 2)
        return x - x.mean(2, keepdim=True)

    def verify():
        model.eval()
        with torch.no_grad():
            embs = []
            for _ in range(_smoke(8, 2)):
                n = int(rng.uniform(_smoke(4.0, 0.3), _smoke(20.0, 0.5)) * sr)
                x = feats(torch.randn(1, n, device="cuda") * 0.1)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    embs.append(f.normalize(model(x).float(), dim=1))
            e = torch.cat(embs)
            (e @ e.t()).cpu()
        model.train()

    for step in range(nsteps):
        cyc = (step % 140) / 70.0
        for g in opt.param_groups:
            g["lr"] = 1e-8 + (1e-3 - 1e-8) * (cyc if cyc <= 1 else 2 - cyc)
        crop = rng.uniform(_smoke(2.0, 0.2), _smoke(6.0, 0.4))
        B = max(2, min(_smoke(120, 4), int(budget / crop)))
        wav = torch.randn(B, int(crop * sr), device="cuda") * 0.1
        labels = torch.randint(0, nspk, (B,), device="cuda")
        x = feats(wav)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            emb = model(x)
        cos = f.linear(f.normalize(emb.float(), dim=1), f.normalize(W, dim=1))
        sine = (1.0 - cos * cos).clamp(1e-6, 1.0).sqrt()
        phi = cos * cos_m - sine * sin_m
        phi = torch.where(cos - th > 0, phi, cos - mm)
        onehot = torch.zeros_like(cos).scatter_(1, labels[:, None], 1.0)
        logits = s_ * (onehot * phi + (1.0 - onehot) * cos)
        loss = f.cross_entropy(logits, labels)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if (step + 1) % _smoke(20, 1) == 0:
            loss.item()
        del wav, labels, x, emb, cos, sine, phi, onehot, logits, loss
        if (step + 1) % _smoke(70, 2) == 0:
            verify()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- IMPALA learner with V-trace


class _ImpalaCnn(torch.nn.Module):
    """The IMPALA deep network (Espeholt et al. 2018): three stacks (16, 32, 32 channels) of a 3x3 conv, a
    stride-2 max-pool and two residual blocks, then a 256-wide linear layer, policy logits and a value."""

    def __init__(self, nact, chans=(16, 32, 32), px=64):
        super().__init__()
        nn = torch.nn
        self.stacks = nn.ModuleList()
        cin = 3
        for ch in chans:
            self.stacks.append(nn.ModuleList([nn.Conv2d(cin, ch, 3, padding=1)]
                                             + [nn.Conv2d(ch, ch, 3, padding=1) for _ in range(4)]))
            cin = ch
            px = (px + 1) // 2
        self.fc = nn.Linear(cin * px * px, 256)
        self.pi, self.v = nn.Linear(256, nact), nn.Linear(256, 1)

    def forward(self, x):
        for convs in self.stacks:
            x = torch.nn.functional.max_pool2d(convs[0](x), 3, 2, 1)
            for r in range(2):
                y = convs[2 + 2 * r](torch.relu(convs[1 + 2 * r](torch.relu(x))))
                x = x + y
        h = torch.relu(self.fc(torch.relu(x).flatten(1)))
        return self.pi(h), self.v(h).squeeze(-1)


@_workload("distributed-RL learner, IMPALA (Espeholt et al. 2018) with V-trace off-policy correction as the Procgen/DMLab recipes run it, the learner side on one GPU (actors on the host): the IMPALA deep CNN (three stacks of 16/32/32 channels with max-pools and residual blocks, 256-wide, 15 actions) on 64x64 RGB uint8 frames; every learner step takes the 8-32 trajectories queued (drawn) with an unroll length of 20-80 (drawn per step, as variable-length unrolls cut at episode ends), (T+1) x B frames at most 1600; the frames, actions, rewards, done flags and behaviour-policy logits written by the actors into one of two reused pinned host buffers and uploaded on a side stream (the compute stream waits on the batch's event, every uploaded tensor record_stream'ed); one forward over all frames, V-trace targets (clipped importance weights rho and c at 1, discount 0.99) computed backwards over time without grad, policy-gradient, baseline (0.5) and entropy (0.01) losses summed; RMSprop (lr 6e-4, alpha 0.99, eps 0.01) with a linearly decaying lr and gradient clipping at 40, 800 steps, the losses read back every 20 steps; fp32")
def impala_vtrace(rng):
    f = torch.nn.functional
    nact, px = 15, _smoke(64, 16)
    tmax, bmax, cap = _smoke(80, 6), _smoke(32, 3), _smoke(1600, 20)
    nsteps = _smoke(800, 3)
    model = _ImpalaCnn(nact, px=px).cuda()
    opt = torch.optim.RMSprop(model.parameters(), lr=6e-4, alpha=0.99, eps=0.01)
    nobs = cap * 3 * px * px
    host_obs = [torch.randint(0, 256, (nobs,), dtype=torch.uint8).pin_memory() for _ in range(2)]
    host_f = [torch.randn(tmax * bmax * (nact + 3)).pin_memory() for _ in range(2)]  # reward, done, action, logits
    side = torch.cuda.Stream()
    gamma = 0.99

    def draw():
        B = rng.randint(_smoke(8, 2), bmax)
        T = rng.randint(_smoke(20, 2), tmax)
        T = min(T, cap // B - 1)
        return T, B

    def stage(k, T, B):
        n = (T + 1) * B * 3 * px * px
        host_obs[k][:4096].random_(0, 256)  # the actors' newest frames written into the buffer (the rest reused)
        host_f[k][:T * B].uniform_(-1, 1)
        with torch.cuda.stream(side):
            obs = upload(host_obs[k][:n].view(T + 1, B, 3, px, px))
            rest = upload(host_f[k][:T * B * (nact + 3)].view(T, B, nact + 3))
            ev = side.record_event()
        return obs, rest, ev, T, B

    nxt = stage(0, *draw())
    for step in range(nsteps):
        for g in opt.param_groups:
            g["lr"] = 6e-4 * (1 - step / nsteps)
        obs, rest, ev, T, B = nxt
        torch.cuda.current_stream().wait_event(ev)
        obs.record_stream(torch.cuda.current_stream())
        rest.record_stream(torch.cuda.current_stream())
        if step + 1 < nsteps:
            nxt = stage((step + 1) % 2, *draw())
        rewards = rest[..., 0].clamp(-1, 1)
        dones = (rest[..., 1] > 0.9).float()
        actions = ((rest[..., 2] + 1) * (nact / 2)).long().clamp(0, nact - 1)
        beh_logits = rest[..., 3:]
        logits, values = model(obs.flatten(0, 1).float() / 255.0)
        logits, values = logits.view(T + 1, B, nact)[:-1], values.view(T + 1, B)
        boot, values = values[-1], values[:-1]
        logp_all = f.log_softmax(logits, -1)
        logp = logp_all.gather(-1, actions[..., None]).squeeze(-1)
        with torch.no_grad():
            beh = f.log_softmax(beh_logits, -1).gather(-1, actions[..., None]).squeeze(-1)
            rho = torch.exp(logp - beh)
            crho, cs = rho.clamp(max=1.0), rho.clamp(max=1.0)
            disc = gamma * (1 - dones)
            v_tp1 = torch.cat([values[1:], boot[None]])
            deltas = crho * (rewards + disc * v_tp1 - values)
            acc = torch.zeros(B, device="cuda")
            out = []
            for t in reversed(range(T)):
                acc = deltas[t] + disc[t] * cs[t] * acc
                out.append(acc)
            vs = torch.stack(out[::-1]) + values
            vs_tp1 = torch.cat([vs[1:], boot[None]])
            adv = crho * (rewards + disc * vs_tp1 - values)
        pg = -(logp * adv).sum()
        base = 0.5 * 0.5 * (vs - values).pow(2).sum()
        ent = (logp_all.exp() * logp_all).sum()
        loss = pg + base + 0.01 * ent
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 40.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if (step + 1) % _smoke(20, 1) == 0:
            torch.stack([pg, base, ent]).tolist()
        del obs, rest, rewards, dones, actions, beh_logits, logits, values, boot, logp_all, logp, beh, rho, crho, cs
        del disc, v_tp1, deltas, acc, out, vs, vs_tp1, adv, pg, base, ent, loss
    torch.cuda.synchronize()


# ---------------------------------------------------------------- recurrent MAPPO on maps of varying size


@_workload("cooperative multi-agent RL, recurrent MAPPO (Yu et al. 2022) as its SMAC recipe trains it, one agent-count-agnostic model over many maps (as multi-map transfer runs do), written by hand: per-agent observations of 96 plus a one-hot agent id of 32, a shared actor (MLP 128, GRU cell 128, 6 + 32 action logits masked to each map's available actions by masked_fill) and a centralized critic over the agents (per-agent MLP 128, one self-attention layer across agents, a value per agent); each iteration a map of 3-27 agents (drawn from SMAC-like sizes), 8-32 parallel environments (drawn, at most 512 agents in all) simulated on the device (a random linear-tanh dynamics, agents dying at random so that an alive mask multiplies observations and rewards) for an episode of 60-180 steps (drawn), actions sampled by Gumbel-max without grad into preallocated rollout buffers; GAE (0.99, 0.95) backwards over time; 5 PPO epochs of 2 minibatches of 10-step recurrent chunks (chunks shuffled by randperm and index_select), the GRU re-run over each chunk from its stored hidden state, clipped surrogate (0.2), clipped Huber value loss, entropy 0.01; Adam (5e-4), gradient clipping at 10, 16 iterations, the mean return read back every iteration; fp32, under 1 GB")
def mappo_smac_train(rng):
    nn, f = torch.nn, torch.nn.functional
    od, nid, hid, nact = _smoke(96, 8), 32, _smoke(128, 16), 6 + 32
    niters = _smoke(16, 2)
    sizes = [3, 5, 8, 10, 12, 25, 27]
    act_in = nn.Sequential(nn.Linear(od + nid, hid), nn.ReLU(), nn.Linear(hid, hid), nn.ReLU())
    gru = nn.GRUCell(hid, hid)
    act_out = nn.Linear(hid, nact)
    cr_in = nn.Sequential(nn.Linear(od + nid, hid), nn.ReLU())
    cr_qkv, cr_o, cr_n = nn.Linear(hid, 3 * hid), nn.Linear(hid, hid), nn.LayerNorm(hid)
    cr_v = nn.Sequential(nn.Linear(hid, hid), nn.ReLU(), nn.Linear(hid, 1))
    model = nn.ModuleList([act_in, gru, act_out, cr_in, cr_qkv, cr_o, cr_n, cr_v]).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=5e-4)
    env_w = torch.randn(od, od, device="cuda") / math.sqrt(od)
    act_emb = torch.randn(nact, od, device="cuda") * 0.3
    eye = torch.eye(nid, device="cuda")

    def critic(x):  # x: (..., N, od + nid)
        lead = x.shape[:-1]
        h = cr_in(x.flatten(0, -3))
        q, k, v = (t.unflatten(-1, (4, -1)).transpose(1, 2) for t in cr_qkv(h).chunk(3, -1))
        a = f.scaled_dot_product_attention(q, k, v).transpose(1, 2).flatten(-2)
        return cr_v(cr_n(h + cr_o(a))).view(lead)

    def policy(x, h, avail):
        h = gru(act_in(x.flatten(0, -2)), h.flatten(0, -2)).view(*x.shape[:-1], hid)
        logits = act_out(h).masked_fill(~avail, -1e9)
        return logits, h

    for it in range(niters):
        N = rng.choice(sizes)
        E = min(rng.randint(_smoke(8, 2), _smoke(32, 3)), max(1, _smoke(512, 24) // N))
        T = rng.randint(_smoke(6, 3), _smoke(18, 4)) * 10
        ids = eye[:N].expand(E, N, nid)
        buf_x = torch.zeros(T, E, N, od + nid, device="cuda")
        buf_h = torch.zeros(T, E, N, hid, device="cuda")
        buf_a = torch.zeros(T, E, N, dtype=torch.long, device="cuda")
        buf_lp = torch.zeros(T, E, N, device="cuda")
        buf_v = torch.zeros(T + 1, E, N, device="cuda")
        buf_r = torch.zeros(T, E, N, device="cuda")
        buf_av = torch.zeros(T, E, N, nact, dtype=torch.bool, device="cuda")
        with torch.no_grad():
            state = torch.randn(E, N, od, device="cuda")
            alive = torch.ones(E, N, device="cuda")
            h = torch.zeros(E, N, hid, device="cuda")
            for t in range(T):
                x = torch.cat([state * alive[..., None], ids], -1)
                avail = torch.rand(E, N, nact, device="cuda") < 0.7
                avail[..., 0] = True  # no-op always available
                avail[..., 6 + N:] = False  # enemies beyond this map's count
                buf_x[t], buf_h[t], buf_av[t] = x, h, avail
                logits, h = policy(x, h, avail)
                gumbel = -torch.log(-torch.log(torch.rand_like(logits).clamp(1e-9, 1 - 1e-9)))
                a = (logits + gumbel).argmax(-1)
                buf_a[t] = a
                buf_lp[t] = f.log_softmax(logits, -1).gather(-1, a[..., None]).squeeze(-1)
                buf_v[t] = critic(x)
                state = torch.tanh(state @ env_w + act_emb[a]) + 0.1 * torch.randn_like(state)
                buf_r[t] = (state[..., 0] * 0.1 + (a >= 6).float() * 0.05) * alive
                alive = alive * (torch.rand(E, N, device="cuda") > 0.005).float()
            buf_v[T] = critic(torch.cat([state * alive[..., None], ids], -1))
            adv = torch.zeros(T, E, N, device="cuda")
            gae = torch.zeros(E, N, device="cuda")
            for t in reversed(range(T)):
                delta = buf_r[t] + 0.99 * buf_v[t + 1] - buf_v[t]
                gae = delta + 0.99 * 0.95 * gae
                adv[t] = gae
            ret = adv + buf_v[:T]
            adv = (adv - adv.mean()) / (adv.std() + 1e-5)
            ret.sum(0).mean().item()
        # recurrent chunks of 10 steps: (T/10 * E chunks, 10, N, ...)
        def chunks(t_):
            return t_.unflatten(0, (T // 10, 10)).transpose(1, 2).flatten(0, 1).transpose(0, 1)  # (10, C, N, ...)
        cx, cav, ca, clp, cv, cadv, cret = (chunks(t_) for t_ in (buf_x, buf_av, buf_a, buf_lp, buf_v[:T], adv, ret))
        ch0 = chunks(buf_h)[0]
        C = cx.shape[1]
        for _ in range(5):
            order = torch.randperm(C, device="cuda")
            for mb in range(2):
                idx = order[mb * C // 2:(mb + 1) * C // 2] if C > 1 else order
                x, av, a, lp0, v0, ad, rt = (t_.index_select(1, idx) for t_ in (cx, cav, ca, clp, cv, cadv, cret))
                h = ch0.index_select(0, idx)
                lps, ents = [], []
                for t in range(10):
                    logits, h = policy(x[t], h, av[t])
                    lsm = f.log_softmax(logits, -1)
                    lps.append(lsm.gather(-1, a[t][..., None]).squeeze(-1))
                    ents.append(-(lsm.exp() * lsm).sum(-1))
                lp, ent = torch.stack(lps), torch.stack(ents)
                ratio = torch.exp(lp - lp0)
                pol = -torch.min(ratio * ad, ratio.clamp(0.8, 1.2) * ad).mean()
                v = critic(x)
                vc = v0 + (v - v0).clamp(-0.2, 0.2)
                vl = torch.max(f.huber_loss(v, rt, reduction="none", delta=10.0),
                               f.huber_loss(vc, rt, reduction="none", delta=10.0)).mean()
                loss = pol + vl - 0.01 * ent.mean()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
                opt.step()
                opt.zero_grad(set_to_none=True)
                del x, av, a, lp0, v0, ad, rt, h, lps, ents, lp, ent, ratio, pol, v, vc, vl, loss
        del buf_x, buf_h, buf_a, buf_lp, buf_v, buf_r, buf_av, adv, ret, cx, cav, ca, clp, cv, cadv, cret, ch0
    torch.cuda.synchronize()

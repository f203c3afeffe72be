"""The twenty-eighth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch27_b.py are): keyword-spotting CNN training, a small policy-gradient RL loop with a GPU-simulated vector
environment, Whisper-style encoder-decoder training with variable audio lengths, and VideoMAE pretraining with
variable frame counts. Same conventions: models built from configs (hand-written torch here) with random weights,
nothing downloaded, `rng` the workload's random.Random for every shape, sizes through `_smoke(real, small)` so
that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value. All four are single-stream;
kws_dscnn_train and reinforce_gru_nav stay well under 1 GB requested.

record.py calls `register(<its own module object>)` once, just before main(), after batch27_b's: every workload
below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it reaches
record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch28_b.py's header says the same of its half): every workload of this
half was run whole, at its real sizes (RECORD_SMOKE unset), on PyTorch's meta device (a runner like
/tmp/b27/meta_run.py, not committed: smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered
with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking its math path; boolean-mask indexing,
which the meta device cannot size, is avoided: masked means are weighted sums) and its op outputs counted there
(events about 1.8x that count); the counts and peaks are in record_new28.sh's header.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this batch's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- keyword spotting: DS-CNN on MFCCs


def _mel_dct(n_fft, mels, coeffs, sr):
    """A triangular mel filterbank (n_fft // 2 + 1, mels) and an orthonormal DCT-II (mels, coeffs), on the device."""
    fmax = 2595 * math.log10(1 + (sr / 2) / 700)
    pts = 700 * (10 ** (torch.linspace(0, fmax, mels + 2, device="cuda") / 2595) - 1)
    freqs = torch.linspace(0, sr / 2, n_fft // 2 + 1, device="cuda")
    lo, mid, hi = pts[:-2], pts[1:-1], pts[2:]
    up = (freqs[:, None] - lo[None]) / (mid - lo)[None]
    down = (hi[None] - freqs[:, None]) / (hi - mid)[None]
    fb = torch.clamp(torch.minimum(up, down), min=0)
    n = torch.arange(mels, device="cuda").float()
    k = torch.arange(coeffs, device="cuda").float()
    dct = torch.cos(math.pi / mels * (n[:, None] + 0.5) * k[None]) * math.sqrt(2.0 / mels)
    return fb, dct


class _DsBlock(torch.nn.Module):
    """A depthwise-separable conv block: 3x3 depthwise conv, BN, ReLU, 1x1 pointwise conv, BN, ReLU."""

    def __init__(self, c):
        super().__init__()
        nn = torch.nn
        self.dw, self.bn1 = nn.Conv2d(c, c, 3, padding=1, groups=c, bias=False), nn.BatchNorm2d(c)
        self.pw, self.bn2 = nn.Conv2d(c, c, 1, bias=False), nn.BatchNorm2d(c)

    def forward(self, x):
        return torch.relu(self.bn2(self.pw(torch.relu(self.bn1(self.dw(x))))))


@_workload("keyword-spotting training, DS-CNN-M (Zhang et al. 2017, Hello Edge) on Speech-Commands-style clips, written by hand and small (well under 1 GB): raw 16 kHz waveforms of 0.6-1.5 s (drawn per batch, as variable-length clips are padded to the batch's longest) mixed with background noise at a drawn SNR, then MFCCs on the device (unfold into 25 ms frames at a 10 ms hop, Hann window, rfft 512, power, a 40-band mel filterbank, log, DCT to 10 coefficients), SpecAugment time and frequency masks built from arange comparisons; a 10x4 stride-2 conv to 172 channels and 4 depthwise-separable blocks (BatchNorm, ReLU), average pooling, a 37-way classifier (35 words, silence, unknown); batches of 64-160 (drawn), label smoothing, bf16 autocast, AdamW with a cosine schedule, 1500 steps, the loss read back every 25 steps; every 375 steps an evaluation over 6 batches of 256 one-second clips (no grad) with the accuracy read back")
def kws_dscnn_train(rng):
    nn, f = torch.nn, torch.nn.functional
    c, ncls, sr = _smoke(172, 16), 37, 16000
    fb, dct = _mel_dct(512, 40, 10, sr)
    window = torch.hann_window(400).cuda()
    model = nn.Sequential(
        nn.Conv2d(1, c, (10, 4), stride=2, padding=(5, 1), bias=False), nn.BatchNorm2d(c), nn.ReLU(),
        *[_DsBlock(c) for _ in range(4)], nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2), nn.Linear(c, ncls),
    ).cuda()
    steps = _smoke(1500, 4)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-2)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)

    def mfcc(wave):
        frames = wave.unfold(1, 400, 160) * window
        spec = torch.fft.rfft(frames, n=512)
        power = spec.real ** 2 + spec.imag ** 2
        return (torch.log(power @ fb + 1e-6) @ dct).transpose(1, 2)[:, None]  # (B, 1, 10, T)

    def clips(b, samples):
        speech = torch.randn(b, samples, device="cuda") * torch.rand(b, 1, device="cuda")
        noise = torch.randn(b, samples, device="cuda")
        snr = torch.empty(b, 1, device="cuda").uniform_(0, 20)
        return speech + noise * 10 ** (-snr / 20)

    for step in range(steps):
        b = rng.randint(_smoke(64, 4), _smoke(160, 8))
        samples = rng.randint(_smoke(96, 8), _smoke(240, 10)) * 100
        with torch.no_grad():
            x = mfcc(clips(b, samples))
            t = x.shape[-1]
            # SpecAugment: one frequency mask (up to 3 of 10) and two time masks (up to 20 frames) per clip
            fi = torch.arange(10, device="cuda")[None, :, None]
            f0 = torch.randint(0, 8, (b, 1, 1), device="cuda")
            fw = torch.randint(0, 4, (b, 1, 1), device="cuda")
            ti = torch.arange(t, device="cuda")[None, None, :]
            mask = (fi >= f0) & (fi < f0 + fw)
            for _ in range(2):
                t0 = torch.randint(0, max(1, t - 20), (b, 1, 1), device="cuda")
                tw = torch.randint(0, 21, (b, 1, 1), device="cuda")
                mask = mask | ((ti >= t0) & (ti < t0 + tw))
            x = x.masked_fill(mask[:, None], 0.0)
            del fi, f0, fw, ti, mask
        y = torch.randint(0, ncls, (b,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = f.cross_entropy(model(x), y, label_smoothing=0.1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        if step % 25 == 0:
            float(loss.detach())
        del x, y, loss
        if (step + 1) % _smoke(375, 2) == 0:
            model.eval()
            correct = torch.zeros((), device="cuda")
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for _ in range(_smoke(6, 1)):
                    x = mfcc(clips(_smoke(256, 8), sr))
                    y = torch.randint(0, ncls, (x.shape[0],), device="cuda")
                    correct += (model(x).argmax(-1) == y).sum()
                    del x, y
            float(correct)
            model.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- policy gradient with a GPU vector environment


class _GruPolicy(torch.nn.Module):
    """A recurrent actor-critic: an observation MLP, a hand-written GRU cell (two linears), policy and value heads."""

    def __init__(self, obs, hid, actions):
        super().__init__()
        nn = torch.nn
        self.enc = nn.Sequential(nn.Linear(obs, hid), nn.Tanh(), nn.Linear(hid, hid), nn.Tanh())
        self.ih, self.hh = nn.Linear(hid, 3 * hid), nn.Linear(hid, 3 * hid)
        self.pi, self.v = nn.Linear(hid, actions), nn.Linear(hid, 1)

    def forward(self, o, h):
        x = self.enc(o)
        ri, zi, ni = self.ih(x).chunk(3, -1)
        rh, zh, nh = self.hh(h).chunk(3, -1)
        r, z = torch.sigmoid(ri + rh), torch.sigmoid(zi + zh)
        h = (1 - z) * torch.tanh(ni + r * nh) + z * h
        return self.pi(h), self.v(h).squeeze(-1), h


@_workload("recurrent policy-gradient RL (A2C with GAE and an entropy bonus, as a single-GPU IsaacGym-style trainer runs it), small (well under 1 GB): a batched 2D point-mass navigation environment simulated on the device in torch (positions, velocities, goals and a few circular obstacles per env, 9 discrete thrust actions, collision penalties, episodes ending on reaching the goal or after a drawn time limit, finished envs reset in place by torch.where), 256-1024 envs (drawn per update) and rollouts of 32-160 steps (drawn); the actor-critic an observation MLP, a hand-written GRU cell of 256 and policy and value heads; acting samples actions by torch.multinomial with the hidden state reset where episodes ended, the rollout's observations, actions, rewards, dones and values kept in lists then stacked; the update replays the rollout through the GRU with backprop through time (hidden states masked at episode ends), GAE(0.95) computed backwards over the steps, policy, value and entropy losses, Adam with gradient clipping at 0.5, 18 updates, the mean return read back each update")
def reinforce_gru_nav(rng):
    f = torch.nn.functional
    obs_dim, hid, nact, nobst = 4 + 2 + 3 * 4, _smoke(256, 16), 9, 4
    policy = _GruPolicy(obs_dim, hid, nact).cuda()
    opt = torch.optim.Adam(policy.parameters(), lr=3e-4, eps=1e-5)
    thrust = torch.tensor([[i, j] for i in (-1.0, 0.0, 1.0) for j in (-1.0, 0.0, 1.0)], device="cuda")

    def reset(n):
        return (torch.rand(n, 2, device="cuda") * 2 - 1, torch.zeros(n, 2, device="cuda"),
                torch.rand(n, 2, device="cuda") * 2 - 1, torch.rand(n, nobst, 3, device="cuda") * 2 - 1,
                torch.zeros(n, device="cuda"))

    def observe(state):
        pos, vel, goal, obst, _ = state
        return torch.cat([pos, vel, goal - pos, (obst[..., :2] - pos[:, None]).flatten(1),
                          obst[..., 2].abs() * 0.2], -1)

    def env_step(state, act, limit):
        pos, vel, goal, obst, t = state
        vel = 0.9 * vel + 0.05 * thrust[act]
        pos = (pos + 0.1 * vel).clamp(-1.5, 1.5)
        d_goal = (goal - pos).norm(dim=-1)
        d_obst = (obst[..., :2] - pos[:, None]).norm(dim=-1) - obst[..., 2].abs() * 0.2
        hit = (d_obst < 0).any(-1)
        reached = d_goal < 0.05
        t = t + 1
        done = reached | (t >= limit)
        reward = -0.01 * d_goal + 10.0 * reached.float() - 1.0 * hit.float()
        fresh = reset(pos.shape[0])
        dn = done[:, None]
        state = (torch.where(dn, fresh[0], pos), torch.where(dn, fresh[1], vel), torch.where(dn, fresh[2], goal),
                 torch.where(dn[..., None], fresh[3], obst), torch.where(done, fresh[4], t))
        return state, reward, done

    for update in range(_smoke(18, 2)):
        n = rng.choice([256, 384, 512, 768, 1024]) if _smoke(1, 0) else 8
        horizon = rng.randint(_smoke(32, 3), _smoke(160, 5))
        limit = float(rng.randint(_smoke(50, 3), _smoke(200, 6)))
        state = reset(n)
        h = torch.zeros(n, hid, device="cuda")
        h0 = h
        obs_l, act_l, rew_l, done_l, val_l = [], [], [], [], []
        with torch.no_grad():
            done = torch.zeros(n, dtype=torch.bool, device="cuda")
            for _ in range(horizon):
                o = observe(state)
                h = h * (~done)[:, None].float()
                logits, v, h = policy(o, h)
                a = torch.multinomial(logits.softmax(-1), 1).squeeze(1)
                state, r, done = env_step(state, a, limit)
                obs_l.append(o)
                act_l.append(a)
                rew_l.append(r)
                done_l.append(done)
                val_l.append(v)
            _, last_v, _ = policy(observe(state), h * (~done)[:, None].float())
        obs, acts, rews = torch.stack(obs_l), torch.stack(act_l), torch.stack(rew_l)
        dones, vals = torch.stack(done_l).float(), torch.stack(val_l)
        del obs_l, act_l, rew_l, done_l, val_l
        adv = torch.zeros_like(rews)
        gae = torch.zeros(n, device="cuda")
        nxt = last_v
        for t in range(horizon - 1, -1, -1):
            delta = rews[t] + 0.99 * nxt * (1 - dones[t]) - vals[t]
            gae = delta + 0.99 * 0.95 * (1 - dones[t]) * gae
            adv[t] = gae
            nxt = vals[t]
        ret = adv + vals
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        # Replay through the GRU with backprop through time.
        h = h0
        logps, ents, vpred = [], [], []
        prev_done = torch.zeros(n, device="cuda")
        for t in range(horizon):
            h = h * (1 - prev_done)[:, None]
            logits, v, h = policy(obs[t], h)
            lp = logits.log_softmax(-1)
            logps.append(lp.gather(1, acts[t][:, None]).squeeze(1))
            ents.append(-(lp.exp() * lp).sum(-1))
            vpred.append(v)
            prev_done = dones[t]
        logp, ent, vp = torch.stack(logps), torch.stack(ents), torch.stack(vpred)
        loss = -(logp * adv).mean() + 0.5 * f.mse_loss(vp, ret) - 0.01 * ent.mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
        opt.step()
        float(rews.sum(0).mean())
        del obs, acts, rews, dones, vals, adv, ret, logps, ents, vpred, logp, ent, vp, loss, state, h, h0, gae, nxt
    torch.cuda.synchronize()


# ---------------------------------------------------------------- Whisper-style ASR training, variable audio lengths


class _WLayer(torch.nn.Module):
    """A pre-norm Whisper layer: self-attention (causal in the decoder), optional cross-attention, GELU MLP."""

    def __init__(self, d, heads, cross):
        super().__init__()
        nn = torch.nn
        self.h = heads
        self.n1, self.qkv, self.o1 = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.cross = cross
        if cross:
            self.n2, self.q, self.kv, self.o2 = nn.LayerNorm(d), nn.Linear(d, d), nn.Linear(d, 2 * d), nn.Linear(d, d)
        self.n3, self.fc1, self.fc2 = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def _split(self, t):
        return t.unflatten(-1, (self.h, -1)).transpose(1, 2)

    def forward(self, x, mem=None, key_mask=None, causal=False, cache=None, mem_kv=None):
        sdpa = torch.nn.functional.scaled_dot_product_attention
        q, k, v = (self._split(t) for t in self.qkv(self.n1(x)).chunk(3, -1))
        if cache is not None:
            if cache[0] is not None:
                k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
            cache[0], cache[1] = k, v
            causal = False
        mask = None if key_mask is None or self.cross else key_mask
        a = sdpa(q, k, v, attn_mask=mask, is_causal=causal)
        x = x + self.o1(a.transpose(1, 2).flatten(2))
        if self.cross:
            q = self._split(self.q(self.n2(x)))
            if mem_kv is None:
                mem_kv = [self._split(t) for t in self.kv(mem).chunk(2, -1)]
            a = sdpa(q, mem_kv[0], mem_kv[1], attn_mask=key_mask)
            x = x + self.o2(a.transpose(1, 2).flatten(2))
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.n3(x))))


@_workload("speech recognition training of a Whisper-base-sized encoder-decoder with variable audio lengths (as a fine-tune that pads each batch to its longest clip instead of 30 s does), written by hand: 80-band log-mel inputs of 2-30 s (100-3000 frames, drawn per utterance, log-uniform) padded to the batch's longest (rounded to 100 frames), utterances per batch set by a 16000-frame budget (so 5-80 a batch), SpecAugment masks; two GELU convs (the second stride 2) then 6 pre-norm encoder layers (512 wide, 8 heads, sinusoidal positions) with a key-padding mask; 6 decoder layers with causal self-attention and cross-attention over the padded encoder output; transcripts of 4-220 tokens (about 7 per second of audio, drawn) over a 51865-token tied vocabulary, teacher forcing, padded targets ignored; bf16 autocast, AdamW with warmup and linear decay, gradient clipping at 1.0, 130 steps, the loss read back every step; every 40 steps greedy decoding of 8 held-out clips of drawn lengths for 48-96 tokens with per-layer self-attention KV caches grown by torch.cat and cross-attention keys and values computed once, the tokens read back")
def whisper_varlen_train(rng):
    nn, f = torch.nn, torch.nn.functional
    d, heads, nl, vocab = _smoke(512, 32), _smoke(8, 2), _smoke(6, 2), _smoke(51865, 300)
    conv1, conv2 = nn.Conv1d(80, d, 3, padding=1).cuda(), nn.Conv1d(d, d, 3, stride=2, padding=1).cuda()
    enc = nn.ModuleList(_WLayer(d, heads, False) for _ in range(nl)).cuda()
    enc_norm = nn.LayerNorm(d).cuda()
    tok = nn.Embedding(vocab, d).cuda()
    dec_pos = nn.Parameter(torch.randn(448, d, device="cuda") * 0.01)
    dec = nn.ModuleList(_WLayer(d, heads, True) for _ in range(nl)).cuda()
    dec_norm = nn.LayerNorm(d).cuda()
    model = nn.ModuleList([conv1, conv2, enc, enc_norm, tok, dec, dec_norm])
    params = list(model.parameters()) + [dec_pos]
    steps = _smoke(130, 3)
    opt = torch.optim.AdamW(params, lr=1e-4, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 20) * max(0.0, 1 - s / steps))
    budget, fmin, fmax = _smoke(16000, 400), _smoke(200, 20), _smoke(3000, 120)
    enc_pos = _b.rec._sincos(torch.arange(-(-fmax // 100) * 50 + 1, device="cuda"), d)

    def encode(mel, frames):
        x = f.gelu(conv2(f.gelu(conv1(mel)))).transpose(1, 2)
        t = x.shape[1]
        x = x + enc_pos[:t]
        valid = torch.arange(t, device="cuda")[None] < (torch.tensor(frames, device="cuda")[:, None] + 1) // 2
        key_mask = valid[:, None, None, :]
        for layer in enc:
            x = layer(x, key_mask=key_mask)
        return enc_norm(x), key_mask

    def batch_of(frames):
        b, t = len(frames), -(-max(frames) // 100) * 100
        mel = torch.randn(b, 80, t, device="cuda")
        valid = torch.arange(t, device="cuda")[None] < torch.tensor(frames, device="cuda")[:, None]
        return mel.masked_fill(~valid[:, None], 0.0)

    for step in range(steps):
        frames = []
        while True:
            n = _loguniform(rng, fmin, fmax)
            if frames and max(frames + [n]) * (len(frames) + 1) > budget:
                break
            frames.append(n)
        b = len(frames)
        mel = batch_of(frames)
        # SpecAugment: two frequency masks of up to 27 bands per utterance
        fi = torch.arange(80, device="cuda")[None, :, None]
        for _ in range(2):
            f0, fw = torch.randint(0, 53, (b, 1, 1), device="cuda"), torch.randint(0, 28, (b, 1, 1), device="cuda")
            mel = mel.masked_fill((fi >= f0) & (fi < f0 + fw), 0.0)
        lens = [max(4, min(220, n * 7 // 100 + rng.randint(-3, 3))) for n in frames]
        s = max(lens) + 1
        ids = torch.randint(3, vocab, (b, s), device="cuda")
        tpad = torch.arange(s, device="cuda")[None] >= torch.tensor(lens, device="cuda")[:, None] + 1
        targets = ids[:, 1:].masked_fill(tpad[:, 1:], -100)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            mem, key_mask = encode(mel, frames)
            y = tok(ids[:, :-1]) + dec_pos[: s - 1]
            for layer in dec:
                y = layer(y, mem=mem, key_mask=key_mask, causal=True)
            logits = f.linear(dec_norm(y), tok.weight)
            loss = f.cross_entropy(logits.float().flatten(0, 1), targets.flatten(), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        float(loss.detach())
        del mel, fi, ids, tpad, targets, mem, key_mask, y, logits, loss
        if (step + 1) % _smoke(40, 3) == 0:
            model.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                frames = [_loguniform(rng, fmin, fmax) for _ in range(_smoke(8, 2))]
                mem, key_mask = encode(batch_of(frames), frames)
                mem_kv = [[layer._split(t) for t in layer.kv(mem).chunk(2, -1)] for layer in dec]
                caches = [[None, None] for _ in dec]
                cur = torch.full((len(frames), 1), 1, device="cuda", dtype=torch.long)
                outs = []
                for i in range(rng.randint(_smoke(48, 2), _smoke(96, 4))):
                    y = tok(cur) + dec_pos[i:i + 1]
                    for layer, cache, kv in zip(dec, caches, mem_kv):
                        y = layer(y, key_mask=key_mask, cache=cache, mem_kv=kv)
                    cur = f.linear(dec_norm(y[:, -1]), tok.weight).argmax(-1, keepdim=True)
                    outs.append(cur)
                torch.cat(outs, 1).tolist()
                del mem, key_mask, mem_kv, caches, cur, outs, y
            model.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- VideoMAE with variable frame counts


class _VitBlock(torch.nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        nn = torch.nn
        self.h = heads
        self.n1, self.qkv, self.proj = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.n2, self.fc1, self.fc2 = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        x = x + self.proj(_b.rec._mha(*self.qkv(self.n1(x)).chunk(3, -1), self.h))
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.n2(x))))


@_workload("video masked-autoencoder pretraining, VideoMAE (Tong et al. 2022) with variable frame counts and resolutions (as a multigrid-style sampler mixes clip shapes), written by hand: clips of 8, 12 or 16 frames at 160, 192 or 224 px (drawn per step, the batch 4-16 set by a token budget), 2x16x16 tubelets embedded by a Conv3d, 90% tube masking (the same spatial mask over every time slice, drawn per clip by argsort of noise); a ViT-S encoder (384 wide, 12 layers, 6 heads) on the visible 10% of tokens with fixed sinusoidal positions, a 4-layer decoder of 192 over all tokens (mask tokens scattered back into place), the loss on the per-patch-normalized pixels of the masked tubelets only; bf16 autocast, AdamW (betas 0.9, 0.95) with warmup and cosine decay, 170 steps, the loss read back every step; every 60 steps a no-grad reconstruction pass over 4 clips of 16 frames at 224 px")
def videomae_varframes(rng):
    nn, f = torch.nn, torch.nn.functional
    d, dd, nl, ndl = _smoke(384, 32), _smoke(192, 32), _smoke(12, 2), _smoke(4, 1)
    heads, dheads, ps = _smoke(6, 2), _smoke(3, 2), 16
    patch = nn.Conv3d(3, d, (2, ps, ps), stride=(2, ps, ps)).cuda()
    enc = nn.ModuleList(_VitBlock(d, heads) for _ in range(nl)).cuda()
    enc_norm, to_dec = nn.LayerNorm(d).cuda(), nn.Linear(d, dd, bias=False).cuda()
    mask_tok = nn.Parameter(torch.zeros(1, 1, dd, device="cuda"))
    dec = nn.ModuleList(_VitBlock(dd, dheads) for _ in range(ndl)).cuda()
    dec_norm, head = nn.LayerNorm(dd).cuda(), nn.Linear(dd, 2 * ps * ps * 3).cuda()
    model = nn.ModuleList([patch, enc, enc_norm, to_dec, dec, dec_norm, head])
    params = list(model.parameters()) + [mask_tok]
    steps = _smoke(170, 3)
    opt = torch.optim.AdamW(params, lr=1.5e-4, betas=(0.9, 0.95), weight_decay=0.05)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / 20) * 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    budget = _smoke(16 * 8 * 196, 2 * 4 * 4)
    sincos = _b.rec._sincos

    def run(video, train):
        b, _, t, r, _ = video.shape
        tt, g = t // 2, r // ps
        n_sp = g * g
        x = patch(video).flatten(2).transpose(1, 2)  # (B, tt * g * g, d)
        n = x.shape[1]
        x = x + sincos(torch.arange(n, device="cuda"), d)[None]
        keep_sp = max(1, n_sp // 10)
        order = torch.rand(b, n_sp, device="cuda").argsort(-1)
        vis_sp = order[:, :keep_sp]
        vis = (torch.arange(tt, device="cuda")[None, :, None] * n_sp + vis_sp[:, None, :]).flatten(1)
        masked = torch.ones(b, n, dtype=torch.bool, device="cuda").scatter_(1, vis, False)
        h = x.gather(1, vis[..., None].expand(-1, -1, d))
        for blk in enc:
            h = blk(h)
        h = to_dec(enc_norm(h))
        full = mask_tok.expand(b, n, dd).to(h.dtype).scatter(1, vis[..., None].expand(-1, -1, dd), h)
        full = full + sincos(torch.arange(n, device="cuda"), dd)[None].to(h.dtype)
        for blk in dec:
            full = blk(full)
        pred = head(dec_norm(full))
        # targets: each tubelet's pixels, normalized per patch
        tgt = video.view(b, 3, tt, 2, g, ps, g, ps).permute(0, 2, 4, 6, 3, 5, 7, 1).reshape(b, n, -1)
        tgt = (tgt - tgt.mean(-1, keepdim=True)) / (tgt.var(-1, keepdim=True) + 1e-6).sqrt()
        mf = masked.float()
        return (((pred.float() - tgt) ** 2).mean(-1) * mf).sum() / mf.sum()

    for step in range(steps):
        t = rng.choice([8, 12, 16]) if _smoke(1, 0) else 4
        r = rng.choice([160, 192, 224]) if _smoke(1, 0) else 32
        b = max(_smoke(4, 1), min(_smoke(16, 2), budget // ((t // 2) * (r // ps) ** 2)))
        video = torch.randn(b, 3, t, r, r, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = run(video, True)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        float(loss.detach())
        del video, loss
        if (step + 1) % _smoke(60, 3) == 0:
            model.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                video = torch.randn(_smoke(4, 1), 3, _smoke(16, 4), _smoke(224, 32), _smoke(224, 32), device="cuda")
                float(run(video, False))
                del video
            model.train()
    torch.cuda.synchronize()

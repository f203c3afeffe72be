"""The hundred-and-thirtieth batch of held-out workloads for record.py, second half (see batch130.py): bakeries,
confectionery and pastry, written in torch alone. Recipe language model fine-tuning (a decoder-only transformer,
its weights frozen, low-rank adapters on the attention projections trained over recipes of drawn lengths padded
under a causal and key mask), dough proofing video training (a small convnet over each time-lapse frame of a proofing
basket and a GRU cell written out frame by frame, padded frames keeping the state by torch.where; the dough's volume
rise per frame, the time to optimal proof and the proof state), shop bake planning training (a dueling double DQN
over bakery shops simulated on the device hour by hour, a replay buffer held on the device, a Polyak-averaged target
network) and a dough mixer torque service (the short-time Fourier spectrograms of each mixing run's torque and motor
current, an MLP-Mixer over their patches with the padded patches masked, the development stage, water absorption,
time to peak and stability, with the peak torque, energy and temperature rise measured on the device).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the mixer service), `rng` the workload's random.Random for every shape, count and sampled choice,
sizes through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or
masked_fill; no boolean-mask indexing; results read back only at logging points or once per request.
dough_mixer_torque_serve uploads its signals on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every embedding and position table is sized for the longest padded length that can be drawn.
"""

import copy

import torch

from batch_common import Batch
from workload_helpers import SideUploads, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- recipe language model (LoRA fine-tuning)


class _LoraLinear(_nn.Module):
    """A frozen linear layer with a trained low-rank update (A random, B zero at the start), scaled by alpha / r."""

    def __init__(self, din, dout, r, alpha):
        super().__init__()
        self.base = _nn.Linear(din, dout)
        self.base.requires_grad_(False)
        self.a = _nn.Parameter(torch.randn(r, din) / din ** 0.5)
        self.b = _nn.Parameter(torch.zeros(dout, r))
        self.scale = alpha / r

    def forward(self, x):
        return self.base(x) + (x @ self.a.t().to(x.dtype)) @ self.b.t().to(x.dtype) * self.scale


class _RecipeBlock(_nn.Module):
    """A pre-norm block: fused qkv and the output projection with LoRA, SDPA under the given boolean mask, a frozen
    GELU MLP of 4 d."""

    def __init__(self, d, heads, r, alpha):
        super().__init__()
        self.h = heads
        self.n1, self.n2 = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.proj = _LoraLinear(d, 3 * d, r, alpha), _LoraLinear(d, d, r, alpha)
        self.ff = mlp(d, 4 * d, d, act=_nn.GELU)
        for m in (self.n1, self.n2, self.ff):
            m.requires_grad_(False)

    def forward(self, x, mask):
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        a = _F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.ff(self.n2(x))


class _RecipeLm(_nn.Module):
    """Token, position (sized for the longest padded recipe) and section (title, ingredients, method, decoration)
    tables, _RecipeBlock layers, a final norm and the head tied to the token table; all but the adapters frozen."""

    def __init__(self, vocab, max_len, d, heads, layers, r, alpha):
        super().__init__()
        self.tok, self.pos, self.sec = _nn.Embedding(vocab, d), _nn.Embedding(max_len, d), _nn.Embedding(4, d)
        self.blocks = _nn.ModuleList(_RecipeBlock(d, heads, r, alpha) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        for m in (self.tok, self.pos, self.sec, self.norm):
            m.requires_grad_(False)

    def forward(self, ids, sec, keep):
        t = ids.shape[1]
        x = self.tok(ids) + self.pos(torch.arange(t, device=ids.device))[None] + self.sec(sec)
        causal = torch.ones(t, t, dtype=torch.bool, device=ids.device).tril()
        mask = causal[None, None] & keep[:, None, None, :]
        for blk in self.blocks:
            x = blk(x, mask)
        return (self.norm(x) @ self.tok.weight.t().to(x.dtype)).float()


@_workload("recipe language model fine-tuning with low-rank adapters (random init, a decoder-only transformer, frozen): 8-32 recipes a step (drawn) of 96-512 tokens each (drawn per recipe, padded to the step's longest rounded up to 32), tokens of an 8,192 vocabulary with section ids (title, ingredients, method, decoration; the boundaries drawn per recipe on the host) drawn on the device; 6 pre-norm blocks (width 384, 6 heads) with token, 512-row position and section tables, the head tied to the token table; everything frozen except rank-8 adapters (alpha 16) on each block's fused qkv and output projections; SDPA under a causal mask combined with the key mask; next-token cross-entropy masked to the real tokens; AdamW, clipping, bf16 autocast, 510 steps; the loss read back every 20 steps and every 102 steps a no-grad pass over 16 recipes of 512 tokens with the loss and the token accuracy read back")
def recipe_lm_lora_finetune(rng):
    vocab, max_len = _smoke(8192, 128), _smoke(512, 64)
    d, heads, layers, r = _smoke(384, 16), _smoke(6, 2), _smoke(6, 1), _smoke(8, 2)
    model = _RecipeLm(vocab, max_len, d, heads, layers, r, 2.0 * r).cuda()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=2e-4, weight_decay=0.0)
    steps, every = _smoke(510, 3), _smoke(102, 2)
    lo = _smoke(96, 12)

    def recipes(lens):
        b, t = len(lens), min(max_len, -(-max(lens) // 32) * 32)
        keep = keep_mask(lens, t)
        ids = torch.randint(1, vocab, (b, t), device="cuda").masked_fill(~keep, 0)
        cuts = []
        for n in lens:
            a = rng.randint(4, max(5, n // 8))
            c = rng.randint(a + 1, max(a + 2, n // 2))
            cuts.append([a, c, rng.randint(c + 1, max(c + 2, n - 1))])
        bounds = torch.tensor(cuts, device="cuda")
        sec = (torch.arange(t, device="cuda")[None, :, None] >= bounds[:, None, :]).sum(-1)
        return ids, sec, keep

    def losses(logits, ids, keep):
        w = keep[:, 1:].float()
        ce = _F.cross_entropy(logits[:, :-1].reshape(-1, vocab), ids[:, 1:].reshape(-1), reduction="none")
        return (ce.view_as(w) * w).sum() / w.sum(), w

    for step in range(steps):
        b = rng.randint(_smoke(8, 2), _smoke(32, 3))
        lens = [rng.randint(lo, max_len) for _ in range(b)]
        ids, sec, keep = recipes(lens)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(ids, sec, keep)
        loss, _ = losses(logits, ids, keep)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if step % 20 == 0:
            loss.item()
        del ids, sec, keep, logits, loss
        if (step + 1) % every == 0:
            with torch.no_grad():
                ids, sec, keep = recipes([max_len] * _smoke(16, 2))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = model(ids, sec, keep)
                loss, w = losses(logits, ids, keep)
                acc = ((logits[:, :-1].argmax(-1) == ids[:, 1:]).float() * w).sum() / w.sum()
            torch.stack([loss, acc]).tolist()
            del ids, sec, keep, logits, loss, w, acc


# ---------------------------------------------------------------- dough proofing video (convnet + GRU written out)


class _ProofNet(_nn.Module):
    """A frame encoder of four strided 3x3 convolutions with batch norm and ReLU and global average pooling, the
    conditions (flour table, hydration, yeast, chamber temperature and humidity) to the initial state, a GRU cell
    written out (the input projections of all frames in one matmul); the volume rise per frame, and from the last
    state the minutes to optimal proof and the proof state."""

    def __init__(self, widths, hid, n_flour, n_state):
        super().__init__()
        layers, cin = [], 3
        for c in widths:
            layers += [_nn.Conv2d(cin, c, 3, 2, 1, bias=False), _nn.BatchNorm2d(c), _nn.ReLU()]
            cin = c
        self.enc = _nn.Sequential(*layers)
        self.flour = _nn.Embedding(n_flour, 32)
        self.cond = mlp(36, hid, hid, act=_nn.GELU)
        self.wi, self.wh = _nn.Linear(cin, 3 * hid), _nn.Linear(hid, 3 * hid)
        self.rise, self.final = _nn.Linear(hid, 1), mlp(hid, hid, 1 + n_state, act=_nn.GELU)
        self.hid = hid

    def forward(self, frames, keep, flour, cond):
        b, t = keep.shape
        f = self.enc(frames.flatten(0, 1)).mean((2, 3)).view(b, t, -1)
        gi = self.wi(f)
        h = torch.tanh(self.cond(torch.cat([self.flour(flour), cond], -1))).float()
        outs = []
        for s in range(t):
            ir, iz, i_n = gi[:, s].float().chunk(3, -1)
            hr, hz, hn = self.wh(h).float().chunk(3, -1)
            rr, zz = torch.sigmoid(ir + hr), torch.sigmoid(iz + hz)
            new = (1.0 - zz) * torch.tanh(i_n + rr * hn) + zz * h
            h = torch.where(keep[:, s:s + 1], new, h)
            outs.append(h)
        hs = torch.stack(outs, 1)
        return self.rise(hs).float()[..., 0], self.final(h).float()


@_workload("dough proofing video training (random init, a frame convnet and a GRU cell written out frame by frame): 16-48 proofing baskets a step (drawn), each a time-lapse of 6-16 frames (drawn per basket, padded to the step's longest) of 96 x 96 RGB drawn on the device; per frame four strided 3x3 convolutions (32, 64, 96, 128 channels) with batch norm and ReLU and global average pooling; the conditions (a 6-row flour table, hydration, yeast, chamber temperature and humidity) to the initial state; a GRU cell of 256 written out frame by frame (the input projections of all frames in one matmul, the state in fp32, padded frames keeping the state by torch.where); the dough's volume rise per frame by masked MSE, the minutes to optimal proof by MSE and the proof state (of 3: under, optimal, over) by cross-entropy from the last state; AdamW, clipping, bf16 autocast, 360 steps; the losses read back every 20 steps and every 72 steps a no-grad pass over 32 baskets of 16 frames with the state accuracy read back")
def dough_proof_video_gru_train(rng):
    widths, hid = _smoke([32, 64, 96, 128], [8, 8, 16, 16]), _smoke(256, 16)
    n_flour, n_state, res, max_t = 6, 3, _smoke(96, 16), _smoke(16, 4)
    model = _ProofNet(widths, hid, n_flour, n_state).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    steps, every = _smoke(360, 3), _smoke(72, 2)

    def baskets(lens):
        b, t = len(lens), max(lens)
        keep = keep_mask(lens, t)
        frames = torch.rand(b, t, 3, res, res, device="cuda") * keep[:, :, None, None, None].float()
        flour = torch.randint(0, n_flour, (b,), device="cuda")
        cond = torch.rand(b, 4, device="cuda")
        rise = torch.rand(b, 1, device="cuda") * torch.linspace(0.0, 1.5, t, device="cuda")[None]
        minutes = torch.rand(b, device="cuda") * 90.0
        state = torch.randint(0, n_state, (b,), device="cuda")
        return (frames, keep, flour, cond), (rise, minutes, state)

    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(16, 2), _smoke(48, 3))
        lens = [rng.randint(_smoke(6, 2), max_t) for _ in range(b)]
        inp, (rise, minutes, state) = baskets(lens)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pr, fin = model(*inp)
        w = inp[1].float()
        l_rise = ((pr - rise).pow(2) * w).sum() / w.sum()
        l_min = _F.mse_loss(fin[:, 0], minutes / 30.0)
        l_state = _F.cross_entropy(fin[:, 1:], state)
        loss = l_rise + l_min + l_state
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_rise.detach(), l_min.detach(), l_state.detach()]).tolist()
        del inp, rise, minutes, state, pr, fin, w, l_rise, l_min, l_state, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                inp, (rise, minutes, state) = baskets([max_t] * _smoke(32, 2))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pr, fin = model(*inp)
                acc = (fin[:, 1:].argmax(-1) == state).float().mean()
            acc.item()
            del inp, rise, minutes, state, pr, fin, acc


# ---------------------------------------------------------------- shop bake planning (dueling double DQN)


class _DuelQ(_nn.Module):
    """A trunk of 3 linear layers with layer norms and ReLU, a value and an advantage head combined as dueling."""

    def __init__(self, s_dim, n_act, hidden):
        super().__init__()
        self.trunk = mlp(s_dim, hidden, hidden, layers=3, norm=True)
        self.v, self.a = _nn.Linear(hidden, 1), _nn.Linear(hidden, n_act)

    def forward(self, s):
        z = torch.relu(self.trunk(s))
        a = self.a(z).float()
        return self.v(z).float() + a - a.mean(-1, keepdim=True)


@_workload("shop bake planning training (random init, a dueling double DQN): 768-1,024 bakery shops (drawn once) simulated on the device hour by hour over a 14-hour trading day, each with 6 products (bread, rolls, croissants, pastries, cakes, cookies), a stock, a per-shop demand level and a fixed hourly profile; 7 actions (idle or bake a batch of 12 of one product), demand drawn on the device, sales capped by the stock, the reward the sales' margin less the baking cost and at closing the waste, finished days reset by torch.where; a 26-feature state (the hour, the 6 stocks, demand averages and levels, a weekday one-hot); 310 iterations, each 4-8 environment steps (drawn) with epsilon-greedy actions (epsilon decaying on the host) written into a 65,536-transition replay buffer on the device by slices, then (once 4,096 transitions are in) 2-4 updates (drawn) on minibatches of 256-1,024 (drawn) sampled by randint; a trunk of 3 layers of 256 with layer norms, value and advantage heads, bf16 autocast; double-DQN targets from a Polyak-averaged (0.005) target network, Huber loss, Adam, clipping; the mean reward and the loss read back every 20 iterations")
def shop_bake_plan_dqn_train(rng):
    n_prod, n_act, s_dim, hours = 6, 7, 26, 14
    hidden = _smoke(256, 16)
    net = _DuelQ(s_dim, n_act, hidden).cuda()
    tgt = copy.deepcopy(net)
    tgt.requires_grad_(False)
    opt = torch.optim.Adam(net.parameters(), lr=3e-4)
    iters, cap = _smoke(310, 4), _smoke(65536, 256)
    e = rng.randint(_smoke(768, 8), _smoke(1024, 12))
    gamma, tau = 0.99, 0.005
    profile = torch.tensor([0.3, 1.2, 1.5, 1.0, 0.7, 0.9, 1.4, 1.3, 0.8, 0.6, 0.7, 1.1, 0.9, 0.4], device="cuda")
    margin = torch.tensor([1.2, 0.5, 0.8, 1.5, 3.0, 0.6], device="cuda")
    cost = torch.tensor([0.6, 0.2, 0.4, 0.7, 1.5, 0.3], device="cuda")
    buf_s, buf_s2 = torch.zeros(cap, s_dim, device="cuda"), torch.zeros(cap, s_dim, device="cuda")
    buf_a = torch.zeros(cap, dtype=torch.long, device="cuda")
    buf_r, buf_d = torch.zeros(cap, device="cuda"), torch.zeros(cap, device="cuda")
    ptr, filled = 0, 0

    def reset(n):
        return dict(hour=torch.zeros(n, 1, device="cuda"), stock=torch.zeros(n, n_prod, device="cuda"),
                    avg=torch.zeros(n, n_prod, device="cuda"),
                    level=torch.exp(torch.randn(n, n_prod, device="cuda") * 0.4 + 1.5),
                    dow=torch.randint(0, 7, (n,), device="cuda"))

    def observe(st):
        return torch.cat([st["hour"] / hours, st["stock"] / 24.0, st["avg"] / 10.0, st["level"] / 10.0,
                          _F.one_hot(st["dow"], 7).float()], -1)

    def write(sl, s, a, r, s2, d):
        buf_s[sl], buf_a[sl], buf_r[sl], buf_s2[sl], buf_d[sl] = s, a, r, s2, d

    st = reset(e)
    for it in range(iters):
        eps = max(0.05, 1.0 - it / (0.6 * iters))
        k = rng.randint(_smoke(4, 1), _smoke(8, 2))
        rews = []
        for _ in range(k):
            with torch.no_grad():
                s = observe(st)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    q = net(s)
                greedy = q.argmax(-1)
                a = torch.where(torch.rand(e, device="cuda") < eps, torch.randint(0, n_act, (e,), device="cuda"),
                                greedy)
                bake = _F.one_hot(a, n_act)[:, 1:].float() * 12.0
                stock = st["stock"] + bake
                hour_i = st["hour"][:, 0].long().clamp_max(hours - 1)
                demand = (st["level"] * profile[hour_i][:, None] * (0.5 + torch.rand(e, n_prod, device="cuda"))).floor()
                sales = torch.minimum(stock, demand)
                stock = stock - sales
                hour = st["hour"] + 1.0
                done = hour >= hours
                r = (sales * margin).sum(-1) - (bake * cost).sum(-1) / 12.0 * 6.0
                r = r - done[:, 0].float() * (stock * cost).sum(-1)
                nst = dict(hour=hour, stock=stock, avg=0.8 * st["avg"] + 0.2 * demand, level=st["level"],
                           dow=st["dow"])
                s2 = observe(nst)
                fresh = reset(e)
                fresh["dow"] = (st["dow"] + 1) % 7
                st = {kk: torch.where(done if nst[kk].dim() == 2 else done[:, 0], fresh[kk], nst[kk]) for kk in nst}
                d = done[:, 0].float()
                if ptr + e <= cap:
                    write(slice(ptr, ptr + e), s, a, r, s2, d)
                else:
                    m = cap - ptr
                    write(slice(ptr, cap), s[:m], a[:m], r[:m], s2[:m], d[:m])
                    write(slice(0, e - m), s[m:], a[m:], r[m:], s2[m:], d[m:])
                ptr, filled = (ptr + e) % cap, min(cap, filled + e)
                rews.append(r.mean())
            del s, q, greedy, a, bake, stock, hour_i, demand, sales, hour, done, r, nst, s2, fresh, d
        mean_r = torch.stack(rews).mean()
        loss = None
        if filled >= _smoke(4096, 16):
            for _ in range(rng.randint(2, 4)):
                mb = rng.randint(_smoke(256, 8), _smoke(1024, 16))
                idx = torch.randint(0, filled, (mb,), device="cuda")
                s, a, r = buf_s.index_select(0, idx), buf_a.index_select(0, idx), buf_r.index_select(0, idx)
                s2, d = buf_s2.index_select(0, idx), buf_d.index_select(0, idx)
                with torch.no_grad():
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        a2 = net(s2).argmax(-1)
                        q2 = tgt(s2).gather(1, a2[:, None])[:, 0]
                    y = r + gamma * (1.0 - d) * q2
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    q = net(s).gather(1, a[:, None])[:, 0]
                loss = _F.smooth_l1_loss(q, y)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), 10.0)
                opt.step()
                with torch.no_grad():
                    for pt, p in zip(tgt.parameters(), net.parameters()):
                        pt.lerp_(p, tau)
                del idx, s, a, r, s2, d, a2, q2, y, q
        if it % 20 == 0:
            vals = [mean_r] + ([loss.detach()] if loss is not None else [])
            torch.stack(vals).tolist()
        del rews, mean_r, loss


# ---------------------------------------------------------------- dough mixer torque (STFT, MLP-Mixer)


class _MixerLayer(_nn.Module):
    """Token mixing (an MLP across the patches, the padded patches zeroed first) and channel mixing, pre-norm."""

    def __init__(self, n_tok, d, tok_hidden, ch_hidden):
        super().__init__()
        self.n1, self.n2 = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.tok = mlp(n_tok, tok_hidden, n_tok, act=_nn.GELU)
        self.ch = mlp(d, ch_hidden, d, act=_nn.GELU)

    def forward(self, x, keep):
        y = self.n1(x) * keep[..., None].to(x.dtype)
        x = x + self.tok(y.transpose(1, 2)).transpose(1, 2)
        return x + self.ch(self.n2(x))


class _MixerNet(_nn.Module):
    def __init__(self, patch_dim, n_tok, d, layers, n_stage):
        super().__init__()
        self.embed = _nn.Linear(patch_dim, d)
        self.layers = _nn.ModuleList(_MixerLayer(n_tok, d, d, 4 * d) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.head = mlp(d, d, n_stage + 3, act=_nn.GELU)

    def forward(self, patches, keep):
        x = self.embed(patches)
        for layer in self.layers:
            x = layer(x, keep)
        w = keep[..., None].to(x.dtype)
        return self.head((self.norm(x) * w).sum(1) / w.sum(1).clamp_min(1.0)).float()


@_workload("dough mixer torque serving (random init, STFT spectrograms and an MLP-Mixer): 1,660-1,700 requests (drawn) of 4-32 mixing runs (drawn) of 3-10 min at 20 Hz (3,600-12,000 samples, drawn per run in steps of 1,200, padded to the request's longest), 3 channels (mixer torque, motor current, dough temperature), fp16 uploaded on a side stream from two reused pinned host buffers (filled once, sized for 32 x 3 x 12,000) one request ahead (one span, through SideUploads.ahead), the samples past each run's length zeroed by a mask; on the device the torque's and current's STFT (n_fft 256, hop 64, Hann window, 128 bins kept) as log magnitudes, padded to 192 frames and cut into 16 x 16 patches of both channels (96 patches, those past each run's frames masked); an MLP-Mixer of 6 layers (width 256, token MLP of 256 over the 96 patches with the padded ones zeroed, channel MLP of 1,024) and masked mean pooling, in eval mode under bf16 autocast; the development stage (of 5: pickup, clean-up, development, peak, breakdown) by softmax, the water absorption, time to peak and stability; from the signals the peak torque and its time (masked amax and argmax), the mixing energy and the dough temperature rise (gather at each run's last sample); each request's figures read back once")
def dough_mixer_torque_serve(rng):
    d, layers, n_stage = _smoke(256, 16), _smoke(6, 1), 5
    n_fft, hop, pf, pt = _smoke(256, 32), _smoke(64, 8), _smoke(16, 4), _smoke(16, 4)
    unit, max_len, max_n = _smoke(1200, 40), _smoke(12000, 160), _smoke(32, 3)
    n_bins = n_fft // 2
    max_fr = -(-(max_len // hop + 1) // pt) * pt
    n_tok = (n_bins // pf) * (max_fr // pt)
    model = _MixerNet(2 * pf * pt, n_tok, d, layers, n_stage).cuda().eval()
    model.requires_grad_(False)
    window = torch.hann_window(n_fft, device="cuda")
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randn(max_n * 3 * max_len, generator=gen).half().pin_memory() for _ in range(2)]
    up = SideUploads(host)

    nreq = rng.randint(_smoke(1660, 3), _smoke(1700, 4))
    plan = []
    for _ in range(nreq):
        n = rng.randint(_smoke(4, 1), max_n)
        plan.append((n, [rng.randint(3, max_len // unit) * unit for _ in range(n)]))

    for (n, lens), raw in up.ahead(plan, lambda p: (p[0] * 3 * max(p[1]),)):
        t = max(lens)
        with torch.no_grad():
            keep = keep_mask(lens, t)
            x = raw.view(n, 3, t).float() * keep[:, None].float()
            spec = torch.stft(x[:, :2].reshape(2 * n, t), n_fft, hop, window=window, return_complex=True)
            mag = torch.log1p(spec.abs()[:, :n_bins]).view(n, 2, n_bins, -1)
            fr = mag.shape[-1]
            mag = _F.pad(mag, (0, max_fr - fr))
            patches = mag.unfold(2, pf, pf).unfold(3, pt, pt).permute(0, 2, 3, 1, 4, 5).reshape(n, n_tok, -1)
            fkeep = keep_mask([ln // hop + 1 for ln in lens], max_fr)[:, ::pt]
            tkeep = fkeep[:, None, :].expand(n, n_bins // pf, max_fr // pt).reshape(n, n_tok)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = model(patches, tkeep)
            stage = out[:, :n_stage].softmax(-1)
            absorb = 55.0 + 10.0 * torch.tanh(out[:, n_stage])
            tpeak, stab = _F.softplus(out[:, n_stage + 1]) * 4.0, _F.softplus(out[:, n_stage + 2]) * 8.0
            torque = (2.0 + x[:, 0]).masked_fill(~keep, -1e4)
            peak, at = torque.amax(-1), torque.argmax(-1).float() / (20.0 * 60.0)
            energy = ((2.0 + x[:, 0]) * keep.float()).sum(-1) / 20.0
            last = torch.tensor([ln - 1 for ln in lens], device="cuda")
            rise = x[:, 2].gather(1, last[:, None])[:, 0] - x[:, 2, 0]
            figs = torch.cat([stage, torch.stack([absorb, tpeak, stab, peak, at, energy, rise], -1)], -1)
        figs.tolist()
        del raw, keep, x, spec, mag, patches, fkeep, tkeep, out, stage, absorb, tpeak, stab, torque, peak, at
        del energy, last, rise, figs

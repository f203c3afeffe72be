"""The twenty-fourth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch23_b.py are). Same conventions: models built from configs (transformers, torchvision or hand-written
torch) with random weights, nothing downloaded, `rng` the workload's random.Random, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. All four are single-stream.

record.py calls `register(<its own module object>)` once, just before main(), after batch23_b's: every workload
below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it reaches
record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch24_b.py's header says the same of its half): every workload of this
batch was run whole, at its real sizes (RECORD_SMOKE unset), on PyTorch's meta device: smoke_cpu.py's patching
with "cuda" mapped to "meta" instead of the CPU, and readbacks (float, tolist, item) answered with dummies. That
runs every reshape, split, chunk, gather and matmul of every step at the real shapes (the frame-stack and
n-step index arithmetic of rainbow_dqn against its 12.5k x 32 ring; slot_attention's 64 -> 8 -> 64 px broadcast
decoder; retro_train's 64-token chunk shifts and (B * chunks, k * 128) neighbour attention for rows of 512-2048;
gmp_prune_bert's global kthvalue over the 85M encoder weights), and counted its op outputs at the real sizes
(the events below are twice that count). The peaks are from sizes (the meta run's live bytes, roughly).
"""

import math

import torch

from batch_common import Batch
from workload_helpers import _rope_tables

_b = Batch()  # this batch's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- Rainbow-style DQN with a prioritized replay on the device


class _DuelingQ(torch.nn.Module):
    """The Nature-DQN torso (84x84x4 -> 3136) with dueling value and advantage heads of 512."""

    def __init__(self, actions=18, hidden=512):
        super().__init__()
        nn = torch.nn
        self.torso = nn.Sequential(nn.Conv2d(4, 32, 8, 4), nn.ReLU(), nn.Conv2d(32, 64, 4, 2), nn.ReLU(),
                                   nn.Conv2d(64, 64, 3, 1), nn.ReLU(), nn.Flatten())
        self.value = nn.Sequential(nn.Linear(3136, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.adv = nn.Sequential(nn.Linear(3136, hidden), nn.ReLU(), nn.Linear(hidden, actions))

    def forward(self, frames):
        h = self.torso(frames.float() / 255.0)
        a = self.adv(h)
        return self.value(h) + a - a.mean(1, keepdim=True)


@_workload("off-policy value-based RL, Rainbow-lite DQN (dueling heads, double-DQN targets, 3-step returns, prioritized replay with alpha 0.5 and beta annealed 0.4 -> 1) with the whole replay on the device, as GPU-emulator setups (cuLE/EnvPool-style) keep it: 32 vectorized Atari-like environments whose 84x84 uint8 frames are made on the device, a ring of 12500 x 32 single frames (2.8 GB, frame stacks of 4 gathered by index arithmetic at sampling time), actions, rewards, dones and priorities beside it; 50k random-policy transitions written first (in slabs), then 1400 iterations of an epsilon-greedy acting step (no_grad, epsilon 1 -> 0.01 over 800 iterations) writing 32 transitions with the running maximum priority, and a learning step: stratified proportional sampling of 256 by cumsum + searchsorted over the ring's priorities (the newest 3 rows masked), importance weights, 3-step returns cut at dones, online argmax and target evaluation of the next stacks, importance-weighted Huber loss, Adam (lr 6.25e-5, eps 1.5e-4), gradient clipping 10, the sampled priorities written back; the target network synced every 250 iterations; every 350 iterations 100 greedy evaluation steps on 64 environments; fp32")
def rainbow_dqn(rng):
    f = torch.nn.functional
    envs, rows, batch, nstep, gamma = _smoke(32, 4), _smoke(12500, 400), _smoke(256, 16), 3, 0.99
    online = _DuelingQ().cuda().train()
    target = _DuelingQ().cuda().eval()
    target.load_state_dict(online.state_dict())
    for p in target.parameters():
        p.requires_grad_(False)
    opt = torch.optim.Adam(online.parameters(), lr=6.25e-5, eps=1.5e-4)
    frames = torch.zeros(rows, envs, 84, 84, dtype=torch.uint8, device="cuda")
    actions = torch.zeros(rows, envs, dtype=torch.long, device="cuda")
    rewards = torch.zeros(rows, envs, device="cuda")
    dones = torch.zeros(rows, envs, device="cuda")
    prio = torch.zeros(rows, envs, device="cuda")
    # The random-policy warm-up: 50k transitions (1563 rows of 32), written in slabs of 64 rows.
    head = _smoke(1563, 120)
    for r0 in range(0, head, 64):
        r1 = min(head, r0 + 64)
        frames[r0:r1] = torch.randint(0, 256, (r1 - r0, envs, 84, 84), dtype=torch.uint8, device="cuda")
        actions[r0:r1] = torch.randint(0, 18, (r1 - r0, envs), device="cuda")
        rewards[r0:r1] = (torch.rand(r1 - r0, envs, device="cuda") < 0.03).float()
        dones[r0:r1] = (torch.rand(r1 - r0, envs, device="cuda") < 0.002).float()
    prio[:head] = 1.0
    max_prio = torch.ones((), device="cuda")
    stack = torch.arange(3, -1, -1, device="cuda")  # frame offsets t-3 .. t
    ahead = torch.arange(nstep, device="cuda")
    disc = gamma ** ahead.float()

    def stacks(t, e):
        """(B,) rows and envs -> (B, 4, 84, 84) uint8 frame stacks ending at those rows."""
        return frames[(t[:, None] - stack) % rows, e[:, None]]

    iters = _smoke(1400, 6)
    # About 210 tensors an iteration (counted on the meta device at the real sizes: acting about 30, the learning
    # step about 180 with Adam), the evaluations about 6k: about 0.3M tensors, 0.6M events.
    for it in range(iters):
        t = head % rows
        # acting: the last 4 frames of every environment, epsilon-greedy
        with torch.no_grad():
            obs = frames[(t - 1 - stack) % rows].transpose(0, 1)
            q = online(obs)
            eps = max(0.01, 1.0 - it / _smoke(800, 4))
            act = torch.where(torch.rand(envs, device="cuda") < eps,
                              torch.randint(0, 18, (envs,), device="cuda"), q.argmax(1))
            # the emulators' step: the next frames, rewards and episode ends (made on the device)
            frames[t] = torch.randint(0, 256, (envs, 84, 84), dtype=torch.uint8, device="cuda")
            actions[t] = act
            rewards[t] = (torch.rand(envs, device="cuda") < 0.03).float()
            dones[t] = (torch.rand(envs, device="cuda") < 0.002).float()
            prio[t] = max_prio
            del obs, q, act
        head += 1
        # learning: proportional prioritized sampling over the filled rows, the newest nstep masked
        filled = min(head, rows)
        beta = 0.4 + 0.6 * it / iters
        with torch.no_grad():
            w = prio[:filled].pow(0.5)
            w[(head - 1 - ahead) % rows] = 0.0
            if head <= rows:  # not wrapped yet: the first rows have no full frame stack
                w[:3] = 0.0
            cdf = w.flatten().cumsum(0)
            total = cdf[-1]
            u = (torch.arange(batch, device="cuda") + torch.rand(batch, device="cuda")) * (total / batch)
            idx = torch.searchsorted(cdf, u).clamp_(max=filled * envs - 1)
            ti, ei = idx // envs, idx % envs
            isw = (w.flatten()[idx] / total * (filled * envs)).clamp_min(1e-12).pow(-beta)
            isw = isw / isw.max()
            st, nx = stacks(ti, ei), stacks((ti + nstep) % rows, ei)
            r = rewards[(ti[:, None] + ahead) % rows, ei[:, None]]
            d = dones[(ti[:, None] + ahead) % rows, ei[:, None]]
            alive = torch.cumprod(1 - d, 1)
            ret = (r * disc * torch.cat([torch.ones(batch, 1, device="cuda"), alive[:, :-1]], 1)).sum(1)
            a2 = online(nx).argmax(1, keepdim=True)
            y = ret + gamma ** nstep * alive[:, -1] * target(nx).gather(1, a2)[:, 0]
            a = actions[ti, ei][:, None]
            del w, cdf, u, r, d, alive, a2, nx
        qa = online(st).gather(1, a)[:, 0]
        td = y - qa
        loss = (isw * f.smooth_l1_loss(qa, y, reduction="none")).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(online.parameters(), 10.0)
        opt.step()
        with torch.no_grad():
            newp = td.abs() + 1e-6
            prio[ti, ei] = newp
            max_prio = torch.maximum(max_prio, newp.max())
        if it % 20 == 19:
            float(loss.detach())
        del st, y, a, qa, td, loss, newp, isw, idx, ti, ei, total
        if it % 250 == 249:
            target.load_state_dict(online.state_dict())
        if it % _smoke(350, 3) == _smoke(349, 2):
            # greedy evaluation on 64 fresh environments for 100 steps, frame stacks kept in a small ring
            ev = _smoke(64, 4)
            ring = torch.randint(0, 256, (ev, 4, 84, 84), dtype=torch.uint8, device="cuda")
            score = torch.zeros(ev, device="cuda")
            with torch.no_grad():
                for _ in range(_smoke(100, 3)):
                    act = online(ring).argmax(1)
                    score += (torch.rand(ev, device="cuda") < 0.03).float() * (act > 0).float()
                    ring = torch.cat([ring[:, 1:], torch.randint(0, 256, (ev, 1, 84, 84), dtype=torch.uint8,
                                                                 device="cuda")], 1)
            float(score.mean())
            del ring, score, act
    torch.cuda.synchronize()


# ---------------------------------------------------------------- Slot Attention object discovery


class _SlotAttention(torch.nn.Module):
    """Slot Attention (Locatello et al. 2020): slots drawn from a learned Gaussian, `iters` rounds of attention
    normalized over the slots, a weighted mean of the values, a GRU update and a residual MLP."""

    def __init__(self, dim=64, hidden=128):
        super().__init__()
        nn = torch.nn
        self.n_in, self.n_slots, self.n_mlp = nn.LayerNorm(dim), nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.q, self.k, self.v = (nn.Linear(dim, dim, bias=False) for _ in range(3))
        self.gru = nn.GRUCell(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, dim))
        self.mu = nn.Parameter(torch.randn(1, 1, dim))
        self.logsigma = nn.Parameter(torch.zeros(1, 1, dim))

    def forward(self, x, slots, iters):
        b, n, d = x.shape
        x = self.n_in(x)
        k, v = self.k(x), self.v(x)
        s = self.mu + self.logsigma.exp() * torch.randn(b, slots, d, device=x.device)
        for _ in range(iters):
            prev = s
            q = self.q(self.n_slots(s)) * d ** -0.5
            attn = torch.einsum("bkd,bnd->bkn", q, k).softmax(1) + 1e-8
            attn = attn / attn.sum(-1, keepdim=True)
            upd = torch.einsum("bkn,bnd->bkd", attn, v)
            s = self.gru(upd.reshape(-1, d), prev.reshape(-1, d)).view(b, slots, d)
            s = s + self.mlp(self.n_mlp(s))
        return s


def _grid(h, w, device):
    """Slot Attention's soft position grid: (1, h, w, 4) of (y, x, 1-y, 1-x)."""
    ys = torch.linspace(0, 1, h, device=device)[:, None].expand(h, w)
    xs = torch.linspace(0, 1, w, device=device)[None, :].expand(h, w)
    return torch.stack([ys, xs, 1 - ys, 1 - xs], -1)[None]


class _SlotAE(torch.nn.Module):
    """The object-discovery autoencoder: a 4-layer 5x5 CNN encoder at full resolution with a soft position
    embedding, an MLP, Slot Attention, and a spatial-broadcast decoder (8x8 -> res by stride-2 transposed convs,
    then two more) giving each slot RGB and an alpha logit, the alphas softmaxed over the slots."""

    def __init__(self, res=64, dim=64):
        super().__init__()
        nn = torch.nn
        self.res, self.dim = res, dim
        self.enc = nn.Sequential(*[m for i in range(4) for m in (nn.Conv2d(3 if i == 0 else dim, dim, 5, padding=2),
                                                                 nn.ReLU())])
        self.enc_pos = nn.Linear(4, dim)
        self.enc_mlp = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))
        self.slot = _SlotAttention(dim)
        self.dec_pos = nn.Linear(4, dim)
        ups = int(math.log2(res // 8))
        layers = []
        for _ in range(ups):
            layers += [nn.ConvTranspose2d(dim, dim, 5, stride=2, padding=2, output_padding=1), nn.ReLU()]
        layers += [nn.ConvTranspose2d(dim, dim, 5, stride=1, padding=2), nn.ReLU(),
                   nn.ConvTranspose2d(dim, 4, 3, stride=1, padding=1)]
        self.dec = nn.Sequential(*layers)

    def forward(self, img, slots, iters):
        b = img.shape[0]
        h = self.enc(img).permute(0, 2, 3, 1)
        h = h + self.enc_pos(_grid(self.res, self.res, img.device))
        s = self.slot(self.enc_mlp(h.flatten(1, 2)), slots, iters)
        z = s.reshape(b * slots, self.dim, 1, 1).expand(-1, -1, 8, 8)
        z = z + self.dec_pos(_grid(8, 8, img.device)).permute(0, 3, 1, 2)
        out = self.dec(z).view(b, slots, 4, self.res, self.res)
        rgb, alpha = out[:, :, :3], out[:, :, 3:].float().softmax(1)
        return (rgb.float() * alpha).sum(1), alpha


@_workload("object-centric representation learning, Slot Attention (Locatello et al. 2020) object discovery as in its CLEVR6 recipe at 64 px, written by hand (random init): a 4-layer 5x5 CNN encoder of 64 channels at full resolution with a soft position embedding and MLP, 7 slots of 64 (learned Gaussian init), 3 iterations of attention softmaxed over slots, GRU and residual MLP, a spatial-broadcast decoder (each slot broadcast to 8x8 with positions, three stride-2 5x5 transposed convs to 64 px, two more, RGB + alpha per slot, alphas softmaxed over slots), MSE reconstruction; bf16 autocast; batches of 64 CLEVR-like images made on the device (a few random coloured discs per image: uint8, normalized); Adam (lr 4e-4, 100 warmup steps, exponential decay), gradient clipping 1.0, 540 steps, the loss read back every 10; every 150 steps an evaluation of 4 batches of 64 with 11 slots and 5 iterations (as the paper tests with more slots) and the foreground ARI of the alpha masks against random ground-truth masks computed on the device by a one-hot contingency einsum")
def slot_attention(rng):
    f = torch.nn.functional
    res, batch = _smoke(64, 16), _smoke(64, 4)
    model = _SlotAE(res, _smoke(64, 16)).cuda().train()
    opt = torch.optim.Adam(model.parameters(), lr=4e-4)
    steps = _smoke(540, 3)
    yy = torch.arange(res, device="cuda").float()[:, None]
    xx = torch.arange(res, device="cuda").float()[None, :]

    def scenes(b, objects):
        """CLEVR-like stand-ins: `objects` random discs on a grey floor: (b, 3, res, res) in [-1, 1] and
        (b, res, res) object ids (0 the background)."""
        cy = torch.rand(b, objects, 1, 1, device="cuda") * res
        cx = torch.rand(b, objects, 1, 1, device="cuda") * res
        rad = (0.06 + 0.08 * torch.rand(b, objects, 1, 1, device="cuda")) * res
        inside = ((yy - cy) ** 2 + (xx - cx) ** 2) < rad ** 2  # (b, objects, res, res)
        ids = (inside * torch.arange(1, objects + 1, device="cuda")[None, :, None, None]).amax(1)
        colours = torch.rand(b, objects + 1, 3, device="cuda")
        colours[:, 0] = 0.5
        img = colours.gather(1, ids.flatten(1)[..., None].expand(-1, -1, 3)).view(b, res, res, 3)
        img8 = (img * 255).to(torch.uint8)
        return img8.permute(0, 3, 1, 2).float() / 127.5 - 1, ids

    # About 520 tensors a step (counted on the meta device at the real sizes: the model and its backward about
    # 330, Adam and clipping about 190), each evaluation about 1.5k: about 0.33M tensors, 0.66M events.
    for step in range(steps):
        lr = 4e-4 * min(1.0, (step + 1) / 100) * 0.5 ** (step / 1000)
        opt.param_groups[0]["lr"] = lr
        img, _ = scenes(batch, rng.randint(3, 6))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            recon, _ = model(img, 7, 3)
            loss = f.mse_loss(recon, img)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 9:
            float(loss.detach())
        del img, recon, loss
        if step % 150 == 149 or step == steps - 1:
            model.eval()
            aris = []
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for _ in range(_smoke(4, 1)):
                    img, ids = scenes(batch, rng.randint(3, 10))
                    _, alpha = model(img, 11, 5)
                    pred = f.one_hot(alpha[:, :, 0].argmax(1).flatten(1), 11).float()  # (b, N, 11)
                    true = f.one_hot(ids.flatten(1), 11).float()
                    fg = (ids.flatten(1) > 0).float()[..., None]
                    nij = torch.einsum("bnc,bnk->bck", true * fg, pred)
                    a, bsum, n = nij.sum(2), nij.sum(1), nij.sum((1, 2))
                    rindex = (nij * (nij - 1)).sum((1, 2))
                    aidx, bidx = (a * (a - 1)).sum(1), (bsum * (bsum - 1)).sum(1)
                    expected = aidx * bidx / (n * (n - 1)).clamp_min(1)
                    ari = (rindex - expected) / ((aidx + bidx) / 2 - expected).clamp_min(1e-6)
                    aris.append(ari.mean())
                    del img, ids, alpha, pred, true, fg, nij
            torch.stack(aris).tolist()
            model.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- RETRO: retrieval-enhanced LM training


class _RetroAttn(torch.nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.q = torch.nn.Linear(d, d, bias=False)
        self.kv = torch.nn.Linear(d, 2 * d, bias=False)
        self.o = torch.nn.Linear(d, d, bias=False)

    def forward(self, x, ctx=None, causal=False, cos=None, sin=None):
        b, t, d = x.shape
        h = self.heads
        ctx = x if ctx is None else ctx
        q = self.q(x).view(b, t, h, d // h)
        k, v = self.kv(ctx).view(b, ctx.shape[1], 2, h, d // h).unbind(2)
        if cos is not None:
            rope = _b.rec._rope
            q, k = rope(q, cos, sin), rope(k, cos, sin)
        o = torch.nn.functional.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                             is_causal=causal)
        return self.o(o.transpose(1, 2).reshape(b, t, d))


class _Ffn(torch.nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.up, self.down = torch.nn.Linear(d, hidden), torch.nn.Linear(hidden, d)

    def forward(self, x):
        return self.down(torch.nn.functional.gelu(self.up(x)))


class _Retro(torch.nn.Module):
    """RETRO (Borgeaud et al. 2022) in the layout of its open reimplementations: a pre-norm decoder with rotary
    self-attention and chunked cross-attention (CCA) to the retrieved neighbours in layers 6, 9 and 12; a 2-layer
    bidirectional neighbour encoder (self-attention within each neighbour, cross-attention to its chunk's decoder
    states at the first CCA layer, FFN); tied embeddings."""

    def __init__(self, vocab, d, layers, heads, ffn, enc_layers=2, cca=(5, 8, 11), chunk=64):
        super().__init__()
        nn = torch.nn
        self.d, self.heads, self.chunk, self.cca = d, heads, chunk, cca
        self.emb = nn.Embedding(vocab, d)
        self.ln = nn.ModuleList(nn.ModuleList(nn.LayerNorm(d) for _ in range(3)) for _ in range(layers))
        self.attn = nn.ModuleList(_RetroAttn(d, heads) for _ in range(layers))
        self.ffn = nn.ModuleList(_Ffn(d, ffn) for _ in range(layers))
        self.cross = nn.ModuleDict({str(i): _RetroAttn(d, heads) for i in cca})
        self.enc_ln = nn.ModuleList(nn.ModuleList(nn.LayerNorm(d) for _ in range(3)) for _ in range(enc_layers))
        self.enc_self = nn.ModuleList(_RetroAttn(d, heads) for _ in range(enc_layers))
        self.enc_cross = nn.ModuleList(_RetroAttn(d, heads) for _ in range(enc_layers))
        self.enc_ffn = nn.ModuleList(_Ffn(d, ffn) for _ in range(enc_layers))
        self.norm = nn.LayerNorm(d)

    def encode(self, nb, h):
        """nb (B, n, k, r) neighbour ids, h (B, L, d) decoder states: (B * n, k * r, d) encoded neighbours."""
        b, n, k, r = nb.shape
        x = self.emb(nb).view(b * n * k, r, self.d)
        ctx = h.view(b * n, self.chunk, self.d).repeat_interleave(k, 0)  # each neighbour sees its chunk
        for ln, sa, ca, ff in zip(self.enc_ln, self.enc_self, self.enc_cross, self.enc_ffn):
            x = x + sa(ln[0](x))
            x = x + ca(ln[1](x), ctx)
            x = x + ff(ln[2](x))
        return x.view(b * n, k * r, self.d)

    def forward(self, ids, nb, cos, sin):
        b, t = ids.shape
        m = self.chunk
        x = self.emb(ids)
        enc = None
        for i, (ln, attn, ffn) in enumerate(zip(self.ln, self.attn, self.ffn)):
            x = x + attn(ln[0](x), causal=True, cos=cos, sin=sin)
            if i in self.cca:
                if enc is None:
                    enc = self.encode(nb, x)
                # CCA: positions m-1 .. shifted into chunks, so that chunk u's neighbours are seen only by the tokens
                # from its last one on (causality), the first m-1 positions attend to nothing
                y = ln[1](x)
                shifted = torch.nn.functional.pad(y[:, m - 1:], (0, 0, 0, m - 1)).reshape(b * (t // m), m, self.d)
                o = self.cross[str(i)](shifted, enc).view(b, t, self.d)
                x = x + torch.nn.functional.pad(o, (0, 0, m - 1, 0))[:, :t]
            x = x + ffn(ln[2](x))
        return self.norm(x) @ self.emb.weight.t()


@_workload("retrieval-enhanced LM training, RETRO (Borgeaud et al. 2022) as its open reimplementations train it, written by hand (random init): a 12-layer pre-norm decoder of width 768 (12 heads, rotary, FFN 3072, vocab 32000, tied embeddings) with chunked cross-attention in layers 6, 9 and 12 to 2 retrieved neighbours per 64-token chunk (each 128 tokens: the neighbour and its continuation, ids precomputed by the retrieval and made on the device), a 2-layer bidirectional neighbour encoder conditioned on each chunk's decoder states at layer 6 (so 4 neighbour tokens per decoder token), bf16 autocast; documents of 512-2048 tokens (multiples of 64, log-uniform) batched by length to at most 3072 tokens (so 12288 neighbour tokens); AdamW (lr 2e-4 after 10 warmup steps, cosine, weight decay 0.1), gradient clipping 1.0, 150 steps, the loss read back every step")
def retro_train(rng):
    f = torch.nn.functional
    vocab, d, heads = 32000, _smoke(768, 64), _smoke(12, 4)
    model = _Retro(vocab, d, 12, heads, _smoke(3072, 128)).cuda().train()
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    rest = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}],
                            lr=2e-4, betas=(0.9, 0.95))
    cos, sin = _rope_tables(d // heads, 2048, 10000.0)
    steps, cap, k, r = _smoke(150, 3), _smoke(3072, 512), 2, _smoke(128, 16)
    # About 2.1k tensors a step (counted on the meta device at the real sizes: the decoder, the CCA layers and
    # encoder and their backward, clipping and AdamW's foreach): 150 steps make about 0.32M tensors, 0.63M events.
    for step in range(steps):
        lr = 2e-4 * min(1.0, (step + 1) / 10) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / steps)))
        for g in opt.param_groups:
            g["lr"] = lr
        t = 64 * _loguniform(rng, _smoke(8, 2), _smoke(32, 4))  # whole 64-token chunks
        b = max(1, cap // t)
        n = t // 64
        ids = torch.randint(0, vocab, (b, t + 1), device="cuda")
        nb = torch.randint(0, vocab, (b, n, k, r), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(ids[:, :-1], nb, cos[:t][None, :, None], sin[:t][None, :, None])
            loss = f.cross_entropy(logits.float().flatten(0, 1), ids[:, 1:].flatten())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        float(loss.detach())
        del ids, nb, logits, loss
    torch.cuda.synchronize()


# ---------------------------------------------------------------- gradual magnitude pruning during fine-tuning


def _gmp_sparsity(step, start, end, final):
    """Zhu & Gupta's cubic schedule: 0 at `start` rising to `final` at `end`."""
    if step < start:
        return 0.0
    x = min(1.0, (step - start) / (end - start))
    return final * (1 - (1 - x) ** 3)


@_workload("sparse fine-tuning with gradual magnitude pruning (Zhu & Gupta 2017), as SparseML/Neural Magic's BERT GMP recipes run it: an HF BertForSequenceClassification (BERT-base: 12 layers, width 768, 3 labels, random init, sdpa) fine-tuned under bf16 autocast on MNLI-like pairs (lengths 24-256 log-uniform, batches of 32 padded to the longest, a multiple of 8); global unstructured magnitude pruning of the 72 encoder Linear weights (85M values): every 10 steps from step 20 to 150 the sparsity target on the cubic schedule to 90%, the threshold the kthvalue of all their magnitudes concatenated (one fp32 vector of 85M), each weight's bool mask rebuilt; after every step the gradients masked before AdamW (lr 5e-5 with linear decay, gradient clipping 1.0) and the weights and Adam moments masked after it; 170 steps, the loss read back every step; every 60 steps an evaluation of 6 batches of 64 and the sparsity read back")
def gmp_prune_bert(rng):
    from transformers import BertConfig, BertForSequenceClassification

    f = torch.nn.functional
    cfg = BertConfig(hidden_size=_smoke(768, 64), num_hidden_layers=12, num_attention_heads=12 if _smoke(1, 0) else 4,
                     intermediate_size=_smoke(3072, 128), num_labels=3, attn_implementation="sdpa")
    model = BertForSequenceClassification(cfg).cuda().train()
    prunable = [m.weight for n, m in model.bert.encoder.named_modules() if isinstance(m, torch.nn.Linear)]
    masks = [torch.ones_like(w, dtype=torch.bool) for w in prunable]
    opt = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.01)
    steps = _smoke(170, 4)
    start, end, every = _smoke(20, 1), _smoke(150, 3), _smoke(10, 1)
    total = sum(w.numel() for w in prunable)

    def batch(b):
        lengths = [_loguniform(rng, 24, _smoke(256, 48)) for _ in range(b)]
        ids, mask = _b.rec._padded_ids(cfg.vocab_size, lengths, mult=8)
        return ids, mask, torch.randint(0, 3, (b,), device="cuda")

    # About 1.8k tensors a step (counted on the meta device at the real sizes: BERT's forward and backward, AdamW's
    # foreach and clipping; the masking is in place), each pruning about 300: 170 steps make about 0.31M tensors,
    # 0.63M events.
    for step in range(steps):
        lr = 5e-5 * (1 - step / steps)
        opt.param_groups[0]["lr"] = lr
        ids, mask, labels = batch(32)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(input_ids=ids, attention_mask=mask).logits
        loss = f.cross_entropy(logits.float(), labels)
        loss.backward()
        with torch.no_grad():
            for w, m in zip(prunable, masks):
                w.grad.mul_(m)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        with torch.no_grad():
            for w, m in zip(prunable, masks):
                w.mul_(m)
                st = opt.state[w]
                st["exp_avg"].mul_(m)
                st["exp_avg_sq"].mul_(m)
        float(loss.detach())
        del ids, mask, labels, logits, loss
        if start <= step <= end and (step - start) % every == 0:
            target = _gmp_sparsity(step, start, end, 0.9)
            kth = max(1, int(target * total))
            with torch.no_grad():
                scores = torch.cat([w.detach().abs().flatten().float() for w in prunable])
                thr = scores.kthvalue(kth).values
                del scores
                masks = [w.detach().abs() > thr for w in prunable]
                for w, m in zip(prunable, masks):
                    w.mul_(m)
            del thr
        if step % 60 == 59:
            model.eval()
            correct = []
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for _ in range(_smoke(6, 1)):
                    ids, mask, labels = batch(64)
                    correct.append((model(input_ids=ids, attention_mask=mask).logits.argmax(-1) == labels).float()
                                   .mean())
                    del ids, mask, labels
            kept = torch.stack([m.sum() for m in masks]).sum()
            torch.stack(correct).tolist()
            float(kept)
            model.train()
    torch.cuda.synchronize()

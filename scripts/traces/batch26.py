"""The twenty-sixth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch25_b.py are). Same conventions: models built from configs (hand-written torch here) with random weights,
nothing downloaded, `rng` the workload's random.Random for every shape, sizes through `_smoke(real, small)` so
that RECORD_SMOKE=1 runs are tiny. All three are single-stream; no control flow reads a tensor's value.

record.py calls `register(<its own module object>)` once, just before main(), after batch25_b's: every workload
below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it reaches
record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch26_b.py's header says the same of its half): every workload of this
batch was run whole, at its real sizes (RECORD_SMOKE unset), on PyTorch's meta device (a runner like
/tmp/b26/meta_run.py, not committed): smoke_cpu.py's patching with "cuda" mapped to "meta" instead of the CPU
(modules' .cuda() moving them to meta), readbacks (float, item, tolist, cpu) answered with dummies, autocast a
no-op there (so fp32 sizes are counted where the GPU autocasts), SDPA taking its math path (so (N, N) attention
matrices are counted that flash attention never makes on the GPU). That runs every reshape, slice, mask, gather
and matmul of every step at the real shapes (text2sql_constrained's static self-attention caches for 8 questions
x 4 beams, encoder inputs of 192-768 tokens, the cross-attention keys expanded to the beams, the beam reorder of
every layer's cache and the grammar and schema masks over the 32128 vocabulary for 40-96 decode steps;
pets_mbrl's (7, 1000, 24) ensemble propagation over the 15-step horizon, the elite refits and the growing replay
buffer; cav_mae_pretrain's 512 audio and 196 video patches, the 75% masks, the joint layer run three ways, the
unshuffled 708-token decoder and the in-batch contrastive matrix), and counted its op outputs (events about
twice that count). Counted there: text2sql_constrained 201k op outputs with 18 batches (23 now: about 0.51M
events; live outputs 0.12 GB beside 0.3 GB of bf16 weights); pets_mbrl 422k with 6 episodes of 30 steps (5 of
22 now: about 0.52M; tiny tensors, well under 0.1 GB); cav_mae_pretrain 268k (0.54M; 30 GB of live outputs
counted at 24-48 clips in fp32 with the math attention path's (B, 16, 708, 708) matrices in the decoder; batches
now 16-32 clips, about 5 GB on the GPU under bf16 autocast with flash attention).
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this batch's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- text-to-SQL with grammar-constrained beam search


class _T5Block(torch.nn.Module):
    """A pre-RMSNorm T5-style block (self-attention, optional cross-attention, gated-GELU FFN), no biases."""

    def __init__(self, d, heads, ff, cross):
        super().__init__()
        nn = torch.nn
        self.d, self.h = d, heads
        self.n1, self.n3 = nn.RMSNorm(d), nn.RMSNorm(d)
        self.qkv, self.o = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d, bias=False)
        if cross:
            self.n2 = nn.RMSNorm(d)
            self.cq, self.ckv, self.co = (nn.Linear(d, d, bias=False), nn.Linear(d, 2 * d, bias=False),
                                          nn.Linear(d, d, bias=False))
        self.wi, self.wo = nn.Linear(d, 2 * ff, bias=False), nn.Linear(ff, d, bias=False)

    def _heads(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.h, -1).transpose(1, 2)

    def _merge(self, a):
        return a.transpose(1, 2).reshape(a.shape[0], a.shape[2], self.d)

    def ffn(self, x):
        g, u = self.wi(self.n3(x)).chunk(2, -1)
        return x + self.wo(torch.nn.functional.gelu(g, approximate="tanh") * u)

    def encode(self, x, mask):
        q, k, v = self.qkv(self.n1(x)).chunk(3, -1)
        a = torch.nn.functional.scaled_dot_product_attention(self._heads(q), self._heads(k), self._heads(v),
                                                             attn_mask=mask)
        return self.ffn(x + self.o(self._merge(a)))

    def cross_kv(self, enc):
        k, v = self.ckv(enc).chunk(2, -1)
        return self._heads(k), self._heads(v)

    def decode(self, x, kc, vc, t, ck, cv, emask):
        q, k, v = self.qkv(self.n1(x)).chunk(3, -1)
        kc[:, :, t:t + 1] = self._heads(k)
        vc[:, :, t:t + 1] = self._heads(v)
        a = torch.nn.functional.scaled_dot_product_attention(self._heads(q), kc[:, :, :t + 1], vc[:, :, :t + 1])
        x = x + self.o(self._merge(a))
        a = torch.nn.functional.scaled_dot_product_attention(self._heads(self.cq(self.n2(x))), ck, cv,
                                                             attn_mask=emask)
        return self.ffn(x + self.co(self._merge(a)))


@_workload("text-to-SQL generation with grammar-constrained beam search (PICARD-style constrained decoding, as a text-to-SQL service runs a T5-base-sized model): a hand-written T5-style encoder-decoder (d 768, 12 heads, 8 encoder and 8 decoder layers, gated-GELU FFN 2048, RMSNorm, tied 32128-token vocabulary, random init), bf16 weights; 23 batches of 8 questions, each encoded with its serialized database schema (192-768 tokens, padded to the batch's longest, a key mask for the padding); beam search with 4 beams over static self-attention KV caches, cross-attention keys and values computed once a batch and expanded to the beams; each step's log-probabilities masked to the tokens that the SQL grammar allows in the current parser state (a device table of 24 states x vocabulary, the state sequence drawn per batch) and, in identifier states, to the batch's schema tokens (a per-question bool mask built by scatter), then the top 2*beams candidates over beams x vocabulary, beam reorder of every layer's caches by index_select, 40-96 decode steps a batch (drawn), the finished hypotheses' tokens read back at the end")
def text2sql_constrained(rng):
    f = torch.nn.functional
    d, heads, ff = _smoke(768, 64), _smoke(12, 4), _smoke(2048, 128)
    vocab, nl = _smoke(32128, 500), _smoke(8, 2)
    emb = torch.nn.Embedding(vocab, d).cuda().to(torch.bfloat16)
    enc = torch.nn.ModuleList(_T5Block(d, heads, ff, False) for _ in range(nl)).cuda().to(torch.bfloat16).eval()
    dec = torch.nn.ModuleList(_T5Block(d, heads, ff, True) for _ in range(nl)).cuda().to(torch.bfloat16).eval()
    enorm, dnorm = torch.nn.RMSNorm(d).cuda().to(torch.bfloat16), torch.nn.RMSNorm(d).cuda().to(torch.bfloat16)
    nstates = 24
    grammar = torch.rand(nstates, vocab, device="cuda") < 0.08  # tokens each parser state allows
    grammar[:, 1] = True  # EOS always allowed
    ident_states = set(rng.sample(range(nstates), 6))
    nb, beams, dh = 8, 4, d // heads
    with torch.inference_mode():
        for _ in range(_smoke(23, 2)):
            lens = [rng.randint(_smoke(192, 16), _smoke(768, 48)) for _ in range(nb)]
            s = max(lens)
            ids = torch.randint(2, vocab, (nb, s), device="cuda")
            valid = torch.arange(s, device="cuda")[None] < torch.tensor(lens, device="cuda")[:, None]
            amask = torch.zeros(nb, 1, 1, s, device="cuda", dtype=torch.bfloat16).masked_fill(
                ~valid[:, None, None], float("-inf"))
            x = emb(ids)
            for blk in enc:
                x = blk.encode(x, amask)
            x = enorm(x)
            # schema tokens: each question's table and column names (ids drawn), allowed in identifier states
            schema = torch.zeros(nb, vocab, dtype=torch.bool, device="cuda")
            schema.scatter_(1, torch.randint(2, vocab, (nb, rng.randint(40, 160)), device="cuda"), True)
            schema = schema.repeat_interleave(beams, 0)
            xe = x.repeat_interleave(beams, 0)
            emask = amask.repeat_interleave(beams, 0)
            cross = [blk.cross_kv(xe) for blk in dec]
            del x, xe
            steps = rng.randint(_smoke(40, 4), _smoke(96, 6))
            rows = nb * beams
            kcs = [torch.zeros(rows, heads, steps, dh, device="cuda", dtype=torch.bfloat16) for _ in dec]
            vcs = [torch.zeros_like(k) for k in kcs]
            tok = torch.zeros(rows, 1, dtype=torch.long, device="cuda")
            score = torch.zeros(nb, beams, device="cuda")
            score[:, 1:] = float("-inf")
            hist = torch.zeros(rows, steps, dtype=torch.long, device="cuda")
            states = [rng.randrange(nstates) for _ in range(steps)]
            for t in range(steps):
                h = emb(tok)
                for i, blk in enumerate(dec):
                    h = blk.decode(h, kcs[i], vcs[i], t, cross[i][0], cross[i][1], emask)
                logits = f.linear(dnorm(h[:, -1]) * d ** -0.5, emb.weight).float()
                allowed = grammar[states[t]][None].expand(rows, -1)
                if states[t] in ident_states:
                    allowed = allowed & schema
                lp = logits.log_softmax(-1).masked_fill(~allowed, float("-inf"))
                cand = (score[..., None] + lp.view(nb, beams, vocab)).view(nb, -1)
                top, idx = cand.topk(2 * beams, -1)
                score = top[:, :beams]
                src = (idx[:, :beams] // vocab + torch.arange(nb, device="cuda")[:, None] * beams).view(-1)
                tok = (idx[:, :beams] % vocab).reshape(rows, 1)
                for i in range(len(dec)):
                    kcs[i][:, :, :t + 1] = kcs[i][:, :, :t + 1].index_select(0, src)
                    vcs[i][:, :, :t + 1] = vcs[i][:, :, :t + 1].index_select(0, src)
                hist = hist.index_select(0, src)
                hist[:, t] = tok[:, 0]
                del h, logits, allowed, lp, cand, top, idx
            hist.view(nb, beams, steps)[:, 0].tolist()
            score.max(-1).values.tolist()
            del kcs, vcs, cross, hist, schema, emask, amask, ids, valid
    torch.cuda.synchronize()


# ---------------------------------------------------------------- PETS: probabilistic ensemble + CEM planning


class _ProbEnsemble(torch.nn.Module):
    """E probabilistic MLPs batched as (E, in, out) weights: each predicts a Gaussian over the state delta."""

    def __init__(self, e, din, dout, width, depth):
        super().__init__()
        dims = [din] + [width] * depth + [2 * dout]
        self.ws = torch.nn.ParameterList(torch.nn.Parameter(torch.randn(e, a, b) * a ** -0.5)
                                         for a, b in zip(dims[:-1], dims[1:]))
        self.bs = torch.nn.ParameterList(torch.nn.Parameter(torch.zeros(e, 1, b)) for b in dims[1:])
        self.max_lv = torch.nn.Parameter(torch.full((1, 1, dout), 0.5))
        self.min_lv = torch.nn.Parameter(torch.full((1, 1, dout), -10.0))

    def forward(self, x):  # x: (E, N, din)
        for i, (w, b) in enumerate(zip(self.ws, self.bs)):
            x = torch.baddbmm(b, x, w)
            if i < len(self.ws) - 1:
                x = torch.nn.functional.silu(x)
        mu, lv = x.chunk(2, -1)
        lv = self.max_lv - torch.nn.functional.softplus(self.max_lv - lv)
        lv = self.min_lv + torch.nn.functional.softplus(lv - self.min_lv)
        return mu, lv


@_workload("model-based reinforcement learning, PETS (Chua et al. 2018) as mbrl-lib runs it on a HalfCheetah-sized task: a probabilistic ensemble of 7 MLPs (4 hidden layers of 200, SiLU, Gaussian heads with learned log-variance bounds, batched as (E, in, out) weights and baddbmm) over 18-d states and 6-d actions, trained on the growing replay buffer (on the device) for 30 minibatch steps of 256 a member after each episode with Gaussian NLL and Adam; acting by CEM trajectory optimization every environment step: 350 candidate action sequences of horizon 15, 5 iterations, 20 TS-inf particles a candidate spread over the members (each CEM iteration propagates (7, 1000, 24) inputs through the ensemble for 15 steps, sampling the next states), rewards summed, the top 35 elites refitting the mean and variance, the first action read back; the environment a fixed random nonlinear system on the device; 5 episodes of 22 steps")
def pets_mbrl(rng):
    ds, da, e = 18, 6, 7
    width = _smoke(200, 32)
    model = _ProbEnsemble(e, ds + da, ds, width, 4).cuda()
    rew_w = torch.randn(ds, device="cuda")
    opt = torch.optim.Adam(model.parameters(), lr=7.5e-4, weight_decay=5e-5)
    env_a = torch.randn(ds, ds, device="cuda") * 0.3
    env_b = torch.randn(da, ds, device="cuda") * 0.3
    buf_s = torch.empty(0, ds, device="cuda")
    buf_a = torch.empty(0, da, device="cuda")
    buf_n = torch.empty(0, ds, device="cuda")
    pop, hor, iters, part = _smoke(350, 21), _smoke(15, 3), _smoke(5, 2), 20
    nelite = max(2, pop // 10)
    state = torch.randn(1, ds, device="cuda")
    for ep in range(_smoke(5, 2)):
        if buf_s.shape[0] >= 64:
            n = buf_s.shape[0]
            for _ in range(_smoke(30, 2)):
                idx = torch.randint(0, n, (e, 256), device="cuda")
                x = torch.cat([buf_s[idx], buf_a[idx]], -1)
                mu, lv = model(x)
                tgt = buf_n[idx] - buf_s[idx]
                loss = (((mu - tgt) ** 2) * torch.exp(-lv) + lv).mean() + 0.01 * (model.max_lv.sum() - model.min_lv.sum())
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                float(loss.detach())
        mean = torch.zeros(hor, da, device="cuda")
        for t in range(_smoke(22, 3)):
            var = torch.full((hor, da), 0.25, device="cuda")
            with torch.no_grad():
                for _ in range(iters):
                    acts = (mean + var.sqrt() * torch.randn(pop, hor, da, device="cuda")).clamp(-1, 1)
                    s = state.expand(pop * part, ds).reshape(e, -1, ds)
                    ret = torch.zeros(e, pop * part // e, device="cuda")
                    a_all = acts.repeat_interleave(part, 0).view(e, -1, hor, da)
                    for k in range(hor):
                        mu, lv = model(torch.cat([s, a_all[:, :, k]], -1))
                        s = s + mu + torch.randn_like(mu) * (0.5 * lv).exp()
                        ret = ret + s @ rew_w - 0.1 * (a_all[:, :, k] ** 2).sum(-1)
                    ret = ret.view(pop, part).mean(-1)
                    elites = acts[ret.topk(nelite).indices]
                    mean = 0.1 * mean + 0.9 * elites.mean(0)
                    var = 0.1 * var + 0.9 * elites.var(0)
                action = mean[0:1]
                action.tolist()
                nxt = state + torch.tanh(state @ env_a + action @ env_b) * 0.1 + 0.01 * torch.randn_like(state)
            buf_s = torch.cat([buf_s, state])
            buf_a = torch.cat([buf_a, action])
            buf_n = torch.cat([buf_n, nxt])
            state = nxt
            mean = torch.cat([mean[1:], torch.zeros(1, da, device="cuda")])
    torch.cuda.synchronize()


# ---------------------------------------------------------------- CAV-MAE audio-visual pretraining


class _VitBlock(torch.nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        nn = torch.nn
        self.h = heads
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, n, 3, self.h, -1).permute(2, 0, 3, 1, 4)
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        x = x + self.proj(a.transpose(1, 2).reshape(b, n, d))
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.n2(x))))


@_workload("audio-visual self-supervised pretraining, CAV-MAE (Gong et al. 2023): modality-specific ViT-B encoders (768 wide, 12 heads, 11 layers each, random init) over 16x16 patches of a 1024-frame x 128-mel log spectrogram (512 patches) and of one 224 px video frame (196 patches), 75% of each modality's patches masked (random scores on the device, argsort, gather), one shared joint layer run three ways (audio alone, video alone, and the concatenated kept tokens), an 8-layer 512-wide decoder reconstructing both modalities' masked patches (mask tokens scattered back by the unshuffle index, per-patch normalized targets), and the InfoNCE loss between the mean-pooled audio and video representations over the batch (temperature 0.05, both directions), total loss = reconstruction + 0.01 x contrastive; batches of 16-32 clips (drawn per step), bf16 autocast, AdamW with cosine decay, 84 steps, the losses read back every step")
def cav_mae_pretrain(rng):
    nn, f = torch.nn, torch.nn.functional
    d, heads, depth = _smoke(768, 64), _smoke(12, 4), _smoke(11, 1)
    dd, ddepth = _smoke(512, 64), _smoke(8, 1)
    mel, frames, img = _smoke(128, 32), _smoke(1024, 64), _smoke(224, 32)
    na, nv = (mel // 16) * (frames // 16), (img // 16) ** 2
    pa, pv = 256, 768
    a_embed, v_embed = nn.Linear(pa, d).cuda(), nn.Linear(pv, d).cuda()
    a_pos, v_pos = nn.Parameter(torch.randn(1, na, d, device="cuda") * 0.02), nn.Parameter(torch.randn(1, nv, d, device="cuda") * 0.02)
    a_mod, v_mod = nn.Parameter(torch.zeros(1, 1, d, device="cuda")), nn.Parameter(torch.zeros(1, 1, d, device="cuda"))
    a_enc = nn.ModuleList(_VitBlock(d, heads) for _ in range(depth)).cuda()
    v_enc = nn.ModuleList(_VitBlock(d, heads) for _ in range(depth)).cuda()
    joint, jn, jna, jnv = _VitBlock(d, heads).cuda(), nn.LayerNorm(d).cuda(), nn.LayerNorm(d).cuda(), nn.LayerNorm(d).cuda()
    dec_embed = nn.Linear(d, dd).cuda()
    mask_tok = nn.Parameter(torch.zeros(1, 1, dd, device="cuda"))
    dec_pos = nn.Parameter(torch.randn(1, na + nv, dd, device="cuda") * 0.02)
    dec = nn.ModuleList(_VitBlock(dd, 16 if dd >= 256 else 4) for _ in range(ddepth)).cuda()
    dn, a_pred, v_pred = nn.LayerNorm(dd).cuda(), nn.Linear(dd, pa).cuda(), nn.Linear(dd, pv).cuda()
    mods = nn.ModuleList([a_embed, v_embed, a_enc, v_enc, joint, jn, jna, jnv, dec_embed, dec, dn, a_pred, v_pred])
    params = list(mods.parameters()) + [a_pos, v_pos, a_mod, v_mod, mask_tok, dec_pos]
    opt = torch.optim.AdamW(params, lr=5e-4, betas=(0.95, 0.999), weight_decay=5e-6)
    steps = _smoke(84, 2)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * s / steps)))

    def patchify(x, p):  # (B, C, H, W) -> (B, N, C*p*p)
        b, c, h, w = x.shape
        return x.view(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5).reshape(b, -1, c * p * p)

    def mask(x, n, keep):
        ids = torch.rand(x.shape[0], n, device="cuda").argsort(-1)
        restore = ids.argsort(-1)
        kept = x.gather(1, ids[:, :keep, None].expand(-1, -1, x.shape[-1]))
        m = torch.ones(x.shape[0], n, device="cuda")
        m[:, :keep] = 0
        return kept, m.gather(1, restore), restore

    def unshuffle(t, restore, n):
        b, k, c = t.shape
        full = torch.cat([t, mask_tok.expand(b, n - k, c).to(t.dtype)], 1)
        return full.gather(1, restore[..., None].expand(-1, -1, c))

    ka, kv = na // 4, nv // 4
    for step in range(steps):
        b = rng.randint(_smoke(16, 2), _smoke(32, 3))
        spec = torch.randn(b, 1, mel, frames, device="cuda")
        frame = torch.randn(b, 3, img, img, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            ap, vp = patchify(spec.transpose(2, 3).contiguous(), 16), patchify(frame, 16)
            xa = a_embed(ap) + a_pos + a_mod
            xv = v_embed(vp) + v_pos + v_mod
            xa, ma, ra = mask(xa, na, ka)
            xv, mv, rv = mask(xv, nv, kv)
            for blk in a_enc:
                xa = blk(xa)
            for blk in v_enc:
                xv = blk(xv)
            x = jn(joint(torch.cat([xa, xv], 1)))
            ca = jna(joint(xa)).mean(1)
            cv = jnv(joint(xv)).mean(1)
            y = dec_embed(x)
            y = torch.cat([unshuffle(y[:, :ka], ra, na), unshuffle(y[:, ka:], rv, nv)], 1) + dec_pos
            for blk in dec:
                y = blk(y)
            y = dn(y)
            ya, yv = a_pred(y[:, :na]).float(), v_pred(y[:, na:]).float()
            ta = (ap - ap.mean(-1, keepdim=True)) / (ap.var(-1, keepdim=True) + 1e-6).sqrt()
            tv = (vp - vp.mean(-1, keepdim=True)) / (vp.var(-1, keepdim=True) + 1e-6).sqrt()
            rec = (((ya - ta) ** 2).mean(-1) * ma).sum() / ma.sum() + (((yv - tv) ** 2).mean(-1) * mv).sum() / mv.sum()
            sim = f.normalize(ca.float(), dim=-1) @ f.normalize(cv.float(), dim=-1).T / 0.05
            lab = torch.arange(b, device="cuda")
            nce = 0.5 * (f.cross_entropy(sim, lab) + f.cross_entropy(sim.T, lab))
            loss = rec + 0.01 * nce
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        float(rec.detach()), float(nce.detach())
        del spec, frame, ap, vp, xa, xv, x, ca, cv, y, ya, yv, ta, tv, rec, sim, nce, loss, ma, mv, ra, rv
    torch.cuda.synchronize()

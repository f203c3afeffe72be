"""The forty-second batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch39_b.py are): training infrastructure on one GPU, first half. A pipeline-parallel 1F1B micro-batch schedule
simulated on one GPU (four stages of a decoder, several micro-batches in flight, activations passed across stage
boundaries as detached leaves and gradients sent back), a decoder LM trained with a hand-written Adafactor
(factored second moments, update clipping, relative step size) with evaluation at other batch shapes interleaved,
an MLP-Mixer trained with a hand-written LAMB (layer-wise trust ratios, foreach ops) under a batch-size ramp by
gradient accumulation, and a small population-based training run (several ViTs trained in one process, the
bottom members copying the top members' weights and optimizer state and perturbing their hyperparameters). Same
conventions: models built from configs (hand-written torch here) with random weights, nothing downloaded, `rng`
the workload's random.Random for every shape, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are
tiny. No control flow reads a tensor's value (the PBT ranking is drawn on the host; evaluation losses are read
back only for logging). All four are single-stream; pipe_1f1b_train, adafactor_lm_eval and lamb_mixer_bsramp run
under bf16 autocast, pbt_vit_population in fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch42_b.py's header says the same of its half): every workload of this
half was run whole, at its real sizes (RECORD_SMOKE unset), on PyTorch's meta device (a runner like
/tmp/b42/meta_run.py, not committed: smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered
with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking its math path; boolean-mask indexing,
which the meta device cannot size, is avoided) and its op outputs counted there (events about 1.8x that count);
the counts and peaks are in record_new42.sh's header. The CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import _mha
from workload_models import _GptBlock

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


class _Stage(torch.nn.Module):
    """One pipeline stage of a nanoGPT-style decoder: the embeddings on the first, the final norm and the
    head on the last, a run of blocks on each."""

    def __init__(self, blocks, d, heads, vocab, first, last, positions=1024):
        super().__init__()
        nn = torch.nn
        self.first, self.last = first, last
        if first:
            self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(positions, d)
        self.blocks = nn.ModuleList(_GptBlock(d, heads) for _ in range(blocks))
        if last:
            self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

    def forward(self, x):
        if self.first:
            x = self.wte(x) + self.wpe(torch.arange(x.shape[1], device=x.device))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x)) if self.last else x


def _one_f_one_b(stages, m):
    """The order in which a 1F1B schedule runs (stage, 'F'|'B', micro-batch) when its stages share one device:
    each stage's own list (min(S - s - 1, m) warm-up forwards, then one forward one backward, then the
    cool-down backwards), interleaved tick by tick as far as the dependencies allow."""
    lists = []
    for s in range(stages):
        w = min(stages - s - 1, m)
        acts = [("F", i) for i in range(w)]
        for i in range(m - w):
            acts += [("F", w + i), ("B", i)]
        acts += [("B", i) for i in range(m - w, m)]
        lists.append(acts)
    done, pos, order = set(), [0] * stages, []
    while any(pos[s] < len(lists[s]) for s in range(stages)):
        tick = []
        for s in range(stages):
            if pos[s] == len(lists[s]):
                continue
            kind, i = lists[s][pos[s]]
            ready = ((s == 0 or (s - 1, "F", i) in done) if kind == "F"
                     else (s == stages - 1 or (s + 1, "B", i) in done))
            if ready:
                tick.append((s, kind, i))
                pos[s] += 1
        done.update(tick)
        order += tick
    return order


@_workload("pipeline-parallel training with a 1F1B micro-batch schedule (PipeDream-Flush / Megatron-style) simulated on one GPU, written by hand: a nanoGPT-style decoder (12 blocks of width 768, 12 heads, vocab 32000, learned positions, untied head, random init) cut into 4 stages of 3 blocks (embeddings on the first, norm and head on the last); every step draws 4-12 micro-batches (the global batch) of 1-8 sequences of 128-768 tokens (multiples of 64, capped at 2048 tokens a micro-batch), and the stages run in the order the 1F1B schedule gives tick by tick (warm-up forwards, one forward one backward, cool-down backwards), so that the first stage holds up to 4 micro-batches' activations; stage inputs are detached leaves, a stage's backward is torch.autograd.backward of its output with the gradient the next stage sent, activations freed after their backward; gradients accumulate over the micro-batches, then gradient clipping and AdamW (foreach); bf16 autocast, single stream")
def pipe_1f1b_train(rng):
    f = torch.nn.functional
    nsteps = _smoke(43, 2)
    d, heads, vocab, per = (768, 12, 32000, 3) if _smoke(1, 0) else (64, 4, 500, 1)
    nst = 4
    stages = [_Stage(per, d, heads, vocab, s == 0, s == nst - 1).cuda() for s in range(nst)]
    params = [p for st in stages for p in st.parameters()]
    opt = torch.optim.AdamW(params, lr=3e-4, weight_decay=0.1, foreach=True)
    cap = _smoke(2048, 256)
    for _ in range(nsteps):
        m = rng.randint(4, 12)
        s = rng.randrange(_smoke(128, 16), _smoke(768, 64) + 1, _smoke(64, 16))
        mb = max(1, min(rng.randint(1, 8), cap // s))
        ids = [torch.randint(0, vocab, (mb, s + 1), device="cuda") for _ in range(m)]
        saved, grads = {}, {}
        with torch.autocast("cuda", dtype=torch.bfloat16):
            for st, kind, i in _one_f_one_b(nst, m):
                if kind == "F":
                    if st == 0:
                        inp, out = None, stages[0](ids[i][:, :-1])
                    else:
                        inp = saved[(st - 1, i)][1].detach().requires_grad_()
                        out = stages[st](inp)
                    if st == nst - 1:
                        out = f.cross_entropy(out.float().flatten(0, 1), ids[i][:, 1:].flatten()) / m
                    saved[(st, i)] = (inp, out)
                else:
                    inp, out = saved.pop((st, i))
                    torch.autograd.backward(out, None if st == nst - 1 else grads.pop((st, i)))
                    if inp is not None:
                        grads[(st - 1, i)] = inp.grad
                    del inp, out
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, saved, grads


# ---------------------------------------------------------------- Adafactor


class _Adafactor:
    """Adafactor (Shazeer & Stern 2018) as fairseq / HF write it, parameter by parameter: factored row and
    column second-moment estimates for matrices (a full one for vectors), decay 1 - t^-0.8, update clipping at
    RMS 1, relative step size min(1e-2, 1/sqrt(t)) scaled by the parameter's RMS, no first moment."""

    def __init__(self, params, eps=(1e-30, 1e-3), clip=1.0, decay=-0.8, wd=0.0):
        self.params, self.eps, self.clip, self.decay, self.wd = list(params), eps, clip, decay, wd
        self.state, self.t = {}, 0

    @torch.no_grad()
    def step(self):
        self.t += 1
        rho = min(1e-2, 1.0 / math.sqrt(self.t))
        beta2 = 1.0 - self.t ** self.decay
        for p in self.params:
            g = p.grad
            if g is None:
                continue
            g = g.float()
            st = self.state.get(p)
            if st is None:
                st = ({"r": torch.zeros(g.shape[:-1], device=g.device),
                       "c": torch.zeros(g.shape[:-2] + g.shape[-1:], device=g.device)} if g.dim() >= 2
                      else {"v": torch.zeros_like(g)})
                self.state[p] = st
            sq = g * g + self.eps[0]
            if "r" in st:
                st["r"].mul_(beta2).add_(sq.mean(-1), alpha=1 - beta2)
                st["c"].mul_(beta2).add_(sq.mean(-2), alpha=1 - beta2)
                rf = (st["r"] / st["r"].mean(-1, keepdim=True)).rsqrt_().unsqueeze(-1)
                cf = st["c"].unsqueeze(-2).rsqrt()
                u = g * rf * cf
            else:
                st["v"].mul_(beta2).add_(sq, alpha=1 - beta2)
                u = g * st["v"].rsqrt()
            u.div_((u.pow(2).mean().sqrt() / self.clip).clamp_(min=1.0))
            lr = p.pow(2).mean().sqrt().clamp_(min=self.eps[1]) * rho
            if self.wd:
                p.mul_(1 - self.wd * rho)
            p.sub_(u * lr)


class _Lm(torch.nn.Module):
    def __init__(self, layers, d, heads, vocab, positions=1024):
        super().__init__()
        nn = torch.nn
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(positions, d)
        self.blocks = nn.ModuleList(_GptBlock(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)

    def forward(self, ids):
        x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1], device=ids.device))
        for blk in self.blocks:
            x = blk(x)
        return self.ln(x) @ self.wte.weight.t()


@_workload("language-model training with the Adafactor optimizer (Shazeer & Stern 2018, as fairseq / HF Transformers write it, parameter by parameter, written by hand): factored row and column second moments for every matrix, a full one for vectors, decay 1 - t^-0.8, update clipping at RMS 1, relative step size scaled by each parameter's RMS, no momentum; a GPT-style decoder (10 blocks of width 1024, 16 heads, vocab 32128, tied embeddings, random init), batches of 2-32 sequences of 64-1024 tokens (multiples of 64, capped at 3072 tokens, drawn per step), bf16 autocast; every 20 steps an evaluation at other shapes (no_grad): 2-4 batches of 16-64 sequences of 256 or 512 tokens (capped at 8192 tokens), the mean loss read back")
def adafactor_lm_eval(rng):
    f = torch.nn.functional
    nsteps = _smoke(120, 3)
    layers, d, heads, vocab = (10, 1024, 16, 32128) if _smoke(1, 0) else (2, 64, 4, 500)
    model = _Lm(layers, d, heads, vocab).cuda()
    opt = _Adafactor(model.parameters())
    cap, smax = _smoke(3072, 512), _smoke(1024, 128)

    def loss_of(ids):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(ids[:, :-1])
        return f.cross_entropy(logits.float().flatten(0, 1), ids[:, 1:].flatten())

    for step in range(nsteps):
        model.train()
        s = rng.randrange(_smoke(64, 16), smax + 1, _smoke(64, 16))
        b = max(2, min(rng.randint(2, 32), cap // s))
        ids = torch.randint(0, vocab, (b, s + 1), device="cuda")
        loss = loss_of(ids)
        loss.backward()
        opt.step()
        for p in model.parameters():
            p.grad = None
        del ids, loss
        if (step + 1) % _smoke(20, 2) == 0:
            model.eval()
            tot = []
            with torch.no_grad():
                for _ in range(rng.randint(2, 4)):
                    es = rng.choice([256, 512]) if _smoke(1, 0) else 64
                    eb = min(rng.randint(16, 64), _smoke(8192, 512) // es)
                    tot.append(loss_of(torch.randint(0, vocab, (eb, es + 1), device="cuda")))
                float(torch.stack(tot).mean())
            del tot


# ---------------------------------------------------------------- LAMB


class _Lamb:
    """LAMB (You et al. 2020) written with foreach ops as NVIDIA's multi-tensor LAMB does it: Adam moments with
    bias correction, decoupled weight decay, then each tensor's update scaled by the trust ratio
    ||w|| / ||update|| (1 where either is zero); gradients pre-normalized by the global norm."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-6, wd=0.01):
        self.params = [p for p in params]
        self.lr, self.b1, self.b2, self.eps, self.wd, self.t = lr, betas[0], betas[1], eps, wd, 0
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]

    @torch.no_grad()
    def step(self, lr):
        self.t += 1
        gs = [p.grad for p in self.params]
        gnorm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(gs))).clamp(min=1.0)
        torch._foreach_div_(gs, gnorm)
        torch._foreach_mul_(self.m, self.b1)
        torch._foreach_add_(self.m, gs, alpha=1 - self.b1)
        torch._foreach_mul_(self.v, self.b2)
        torch._foreach_addcmul_(self.v, gs, gs, value=1 - self.b2)
        mh = torch._foreach_div(self.m, 1 - self.b1 ** self.t)
        vh = torch._foreach_div(self.v, 1 - self.b2 ** self.t)
        torch._foreach_sqrt_(vh)
        torch._foreach_add_(vh, self.eps)
        upd = torch._foreach_div(mh, vh)
        del mh, vh
        torch._foreach_add_(upd, self.params, alpha=self.wd)
        wn = torch._foreach_norm(self.params)
        un = torch._foreach_norm(upd)
        ratio = [torch.where((w > 0) & (u > 0), w / u, torch.ones_like(w)) * -lr for w, u in zip(wn, un)]
        torch._foreach_mul_(upd, ratio)
        torch._foreach_add_(self.params, upd)


class _MixerBlock(torch.nn.Module):
    def __init__(self, tokens, d, dt, dc):
        super().__init__()
        nn = torch.nn
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.tok = nn.Sequential(nn.Linear(tokens, dt), nn.GELU(), nn.Linear(dt, tokens))
        self.ch = nn.Sequential(nn.Linear(d, dc), nn.GELU(), nn.Linear(dc, d))

    def forward(self, x):
        x = x + self.tok(self.ln1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.ch(self.ln2(x))


@_workload("large-batch training with the LAMB optimizer and a batch-size ramp (You et al. 2020's recipe on an image model, written by hand): an MLP-Mixer-S/16 (8 blocks of width 512, token MLP 256, channel MLP 2048, 224 px images in 196 patches, 1000 classes, random init); LAMB with foreach ops (Adam moments, decoupled weight decay, per-tensor trust ratio, gradients pre-normalized by the global norm) and a linear warm-up; the global batch ramps from 256 to 2560 images over the run (rounded to 256), reached by gradient accumulation over micro-batches of 16-128 images drawn per micro-batch (the last one trimmed to fit), mixup of each micro-batch with its flipped self, bf16 autocast, channels-last patches; every 12 optimizer steps an evaluation pass over 3 batches of 64-500 images without grad")
def lamb_mixer_bsramp(rng):
    f = torch.nn.functional
    nn = torch.nn
    nsteps = _smoke(36, 2)
    res, patch, d, depth, classes = (224, 16, 512, 8, 1000) if _smoke(1, 0) else (32, 16, 32, 2, 10)
    tokens = (res // patch) ** 2
    model = nn.ModuleDict({
        "stem": nn.Conv2d(3, d, patch, patch),
        "blocks": nn.Sequential(*[_MixerBlock(tokens, d, d // 2, 4 * d) for _ in range(depth)]),
        "ln": nn.LayerNorm(d), "head": nn.Linear(d, classes)}).cuda()
    opt = _Lamb(model.parameters())
    lo, hi = _smoke(256, 8), _smoke(2560, 24)
    mbmax = _smoke(128, 8)

    def forward(x):
        h = model["stem"](x).flatten(2).transpose(1, 2)
        return model["head"](model["ln"](model["blocks"](h)).mean(1))

    for step in range(nsteps):
        model.train()
        gb = max(lo, int(lo + (hi - lo) * step / max(1, nsteps - 1)) // lo * lo)
        left = gb
        while left > 0:
            b = min(left, rng.randint(max(1, mbmax // 8), mbmax))
            left -= b
            x = torch.randn(b, 3, res, res, device="cuda").contiguous(memory_format=torch.channels_last)
            y = torch.randint(0, classes, (b,), device="cuda")
            lam = rng.uniform(0.3, 0.7)
            x = lam * x + (1 - lam) * x.flip(0)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = forward(x).float()
            loss = (lam * f.cross_entropy(out, y) + (1 - lam) * f.cross_entropy(out, y.flip(0))) * b / gb
            loss.backward()
            del x, y, out, loss
        opt.step(2e-3 * min(1.0, (step + 1) / 6))
        model.zero_grad(set_to_none=True)
        if (step + 1) % _smoke(12, 2) == 0:
            model.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for _ in range(3):
                    eb = rng.randint(_smoke(64, 2), _smoke(500, 8))
                    forward(torch.randn(eb, 3, res, res, device="cuda")).argmax(-1).cpu()


# ---------------------------------------------------------------- population-based training


class _Vit(torch.nn.Module):
    """A small ViT for 32 px images (patch 4, 64 tokens plus a class token), pre-norm blocks, dropout."""

    def __init__(self, d, depth, heads, classes, drop):
        super().__init__()
        nn = torch.nn
        self.patch = nn.Conv2d(3, d, 4, 4)
        self.cls = nn.Parameter(torch.zeros(1, 1, d))
        self.pos = nn.Parameter(torch.randn(1, 65, d) * 0.02)
        self.blocks = nn.ModuleList(nn.TransformerEncoderLayer(d, heads, 4 * d, drop, batch_first=True,
                                                               norm_first=True, activation="gelu")
                                    for _ in range(depth))
        self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, classes)
        self.heads = heads

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], 1) + self.pos
        for blk in self.blocks:
            h = blk.norm1(x)
            qkv = torch.nn.functional.linear(h, blk.self_attn.in_proj_weight, blk.self_attn.in_proj_bias)
            x = x + blk.dropout1(blk.self_attn.out_proj(_mha(*qkv.chunk(3, -1), self.heads)))
            x = x + blk.dropout2(blk.linear2(blk.dropout(blk.activation(blk.linear1(blk.norm2(x))))))
        return self.head(self.ln(x[:, 0]))


@_workload("population-based training (Jaderberg et al. 2017, as Ray Tune's PBT scheduler runs it, all members in one process on one GPU), written by hand: a population of 6 ViTs for 32 px CIFAR-100-style images (patch 4, 65 tokens, width 256, 6 pre-norm blocks, 8 heads, random init), each with its own AdamW (foreach), learning rate, weight decay and batch size (32-512, log-uniform); the members train in turn for 6-14 steps each (drawn) per round, 8 rounds; after every round each member is evaluated on 2048 images in batches of 512 without grad (accuracy read back for logging), the members are ranked by a score drawn on the host, and the bottom two exploit the top two (load_state_dict of model and optimizer state: fresh copies of every moment tensor) and explore (learning rate and batch size perturbed by 0.8 or 1.25); fp32, single stream")
def pbt_vit_population(rng):
    f = torch.nn.functional
    nmem = _smoke(6, 3)
    rounds = _smoke(8, 2)
    d, depth, heads, classes = (256, 6, 8, 100) if _smoke(1, 0) else (32, 1, 4, 10)
    members = []
    for _ in range(nmem):
        model = _Vit(d, depth, heads, classes, rng.choice([0.0, 0.1])).cuda()
        lr = _loguniform(rng, 100, 3000) * 1e-6
        opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=rng.choice([0.01, 0.05, 0.1]),
                                foreach=True)
        members.append({"model": model, "opt": opt, "bs": _loguniform(rng, 32, _smoke(512, 8))})
    neval, ebs = _smoke(2048, 16), _smoke(512, 8)
    for _ in range(rounds):
        for mem in members:
            model, opt = mem["model"], mem["opt"]
            model.train()
            for _ in range(rng.randint(_smoke(6, 1), _smoke(14, 2))):
                b = max(8, int(mem["bs"] * rng.uniform(0.9, 1.0)))
                x = torch.randn(b, 3, 32, 32, device="cuda")
                y = torch.randint(0, classes, (b,), device="cuda")
                loss = f.cross_entropy(model(x), y, label_smoothing=0.1)
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
                del x, y, loss
        for mem in members:
            mem["model"].eval()
            with torch.no_grad():
                hits = []
                for i in range(0, neval, ebs):
                    x = torch.randn(min(ebs, neval - i), 3, 32, 32, device="cuda")
                    y = torch.randint(0, classes, (x.shape[0],), device="cuda")
                    hits.append((mem["model"](x).argmax(-1) == y).float().sum())
                float(torch.stack(hits).sum() / neval)
            del hits
        order = sorted(range(nmem), key=lambda _: rng.random())
        for lo, hi in zip(order[-2:], order[:2]):
            dst, src = members[lo], members[hi]
            dst["model"].load_state_dict(src["model"].state_dict())
            dst["opt"].load_state_dict(src["opt"].state_dict())
            for g in dst["opt"].param_groups:
                g["lr"] = g["lr"] * rng.choice([0.8, 1.25])
            dst["bs"] = max(16, min(_smoke(512, 8), int(src["bs"] * rng.choice([0.8, 1.25]))))

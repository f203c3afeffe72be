"""The twentieth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch19.py are). Same conventions: models built from configs (transformers, torchvision or hand-written
torch) with random weights, nothing downloaded, `rng` the workload's random.Random, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny.

record.py calls `register(<its own module object>)` once, just before main(), after batch19's: every workload
below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it reaches
record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this batch's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


class _Cifar:
    """A CIFAR-10-sized set of random uint8 images (N, 32, 32, 3) and labels kept on the device, with the usual
    augmentation done there: per-sample reflect-pad-4 random crops and horizontal flips, then normalization."""

    def __init__(self, n):
        self.images = torch.randint(0, 256, (n, 32, 32, 3), dtype=torch.uint8, device="cuda")
        self.labels = torch.randint(0, 10, (n,), device="cuda")
        self.mean = torch.tensor([0.4914, 0.4822, 0.4465], device="cuda")[None, :, None, None]
        self.std = torch.tensor([0.2470, 0.2435, 0.2616], device="cuda")[None, :, None, None]
        self.ar = torch.arange(32, device="cuda")

    def augmented(self, idx, normalize=True):
        u8 = self.images[idx]
        b = u8.shape[0]
        x = torch.nn.functional.pad(u8.permute(0, 3, 1, 2).float(), (4, 4, 4, 4), mode="reflect")
        dy, dx = torch.randint(0, 9, (b, 1, 1), device="cuda"), torch.randint(0, 9, (b, 1, 1), device="cuda")
        rows, cols = dy + self.ar[None, :, None], dx + self.ar[None, None, :]
        x = x.permute(0, 2, 3, 1)[torch.arange(b, device="cuda")[:, None, None], rows, cols]
        x = torch.where(torch.rand(b, 1, 1, 1, device="cuda") < 0.5, x.flip(2), x).permute(0, 3, 1, 2) / 255
        return (x - self.mean) / self.std if normalize else x.contiguous()

    def plain(self, idx, normalize=True):
        x = self.images[idx].permute(0, 3, 1, 2).float() / 255
        return (x - self.mean) / self.std if normalize else x.contiguous()


# ---------------------------------------------------------------- MAML few-shot meta-learning


@_workload("few-shot meta-learning, MAML (Finn et al. 2017) with second-order gradients, learn2learn/higher-style through torch.func.functional_call: the Conv-4 backbone of the miniImageNet recipe (4 blocks of 3x3 conv with 32 filters, BatchNorm on batch statistics, ReLU, 2x2 max-pool; random init) and a linear head zeroed at the start of every task (ways vary); a miniImageNet-like pool of 64 classes x 600 uint8 84x84 images kept on the device; meta-batches of 4 tasks, each 5-, 10- or 20-way, 1- or 5-shot, 15 queries a class (at most 150 in all), images gathered and normalized on the device; 5 inner SGD steps (lr 0.01, torch.autograd.grad with create_graph) on the support set, the query loss backpropagated through them task by task, Adam (lr 0.001) on the meta-parameters, 24 meta-iterations, accuracy read back every 6; every 12 meta-iterations a meta-test of 16 tasks (5-way, 1 or 5 shots) from 20 held-out classes with 10 first-order inner steps")
def maml_fewshot(rng):
    from torch.func import functional_call

    f = torch.nn.functional
    nn = torch.nn
    ch, res = _smoke(32, 8), _smoke(84, 28)
    classes, per_class = _smoke(64, 24), _smoke(600, 24)
    pool = torch.randint(0, 256, (classes, per_class, 3, res, res), dtype=torch.uint8, device="cuda")
    test_pool = torch.randint(0, 256, (_smoke(20, 6), per_class, 3, res, res), dtype=torch.uint8, device="cuda")
    mean = torch.tensor([0.47, 0.45, 0.41], device="cuda")[None, :, None, None]
    std = torch.tensor([0.28, 0.27, 0.29], device="cuda")[None, :, None, None]
    layers = []
    for i in range(4):
        layers += [nn.Conv2d(3 if i == 0 else ch, ch, 3, padding=1), nn.BatchNorm2d(ch, track_running_stats=False),
                   nn.ReLU(), nn.MaxPool2d(2)]
    body = nn.Sequential(*layers, nn.Flatten()).cuda()
    feat = ch * (res // 16) ** 2
    opt = torch.optim.Adam(body.parameters(), lr=1e-3)

    def task(src, n, k, q):
        cls = torch.randperm(src.shape[0], device="cuda")[:n]
        idx = torch.randint(0, src.shape[1], (n, k + q), device="cuda")
        x = (src[cls[:, None], idx].float() / 255).flatten(0, 1)  # (n * (k + q), 3, res, res), class-major
        x = ((x - mean) / std).view(n, k + q, 3, res, res)
        xs, xq = x[:, :k].reshape(n * k, 3, res, res), x[:, k:].reshape(n * q, 3, res, res)
        ar = torch.arange(n, device="cuda")
        return xs, ar.repeat_interleave(k), xq, ar.repeat_interleave(q)

    def forward(fast, x):
        w, b = fast["head.weight"], fast["head.bias"]
        return functional_call(body, {k: v for k, v in fast.items() if not k.startswith("head.")}, (x,)) @ w.T + b

    def adapt(n, xs, ys, steps, second_order):
        fast = dict(body.named_parameters())
        fast["head.weight"] = torch.zeros(n, feat, device="cuda", requires_grad=True)
        fast["head.bias"] = torch.zeros(n, device="cuda", requires_grad=True)
        for _ in range(steps):
            loss = f.cross_entropy(forward(fast, xs), ys)
            grads = torch.autograd.grad(loss, list(fast.values()), create_graph=second_order)
            fast = {name: w - 0.01 * g for (name, w), g in zip(fast.items(), grads)}
            if not second_order:
                fast = {name: w.detach().requires_grad_() for name, w in fast.items()}
        return fast

    meta_batch = 4
    # About 11.9k tensors a meta-iteration of 4 tasks (counted on CPU, the double backward and Adam included) and 1.2k
    # a meta-test task: 24 meta-iterations and 2 meta-tests of 16 tasks make about 0.32M tensors, 0.65M events.
    accs = []
    for it in range(_smoke(24, 2)):
        for _ in range(meta_batch):
            n, k = rng.choice((5, 10, 20)), rng.choice((1, 5))
            xs, ys, xq, yq = task(pool, n, k, min(15, 150 // n))
            fast = adapt(n, xs, ys, 5, True)
            logits = forward(fast, xq)
            (f.cross_entropy(logits, yq) / meta_batch).backward()
            accs.append((logits.argmax(-1) == yq).float().mean().detach())
            del xs, ys, xq, yq, fast, logits
        opt.step()
        opt.zero_grad(set_to_none=True)
        if (it + 1) % _smoke(6, 1) == 0:
            float(torch.stack(accs).mean())
            accs = []
        if (it + 1) % _smoke(12, 2) == 0:
            for _ in range(_smoke(16, 2)):
                xs, ys, xq, yq = task(test_pool, 5, rng.choice((1, 5)), 15)
                fast = adapt(5, xs, ys, 10, False)
                with torch.no_grad():
                    float((forward(fast, xq).argmax(-1) == yq).float().mean())
                del xs, ys, xq, yq, fast
    torch.cuda.synchronize()


# ---------------------------------------------------------------- PGD adversarial training


@_workload("adversarial-robustness training, PGD adversarial training (Madry et al. 2018) with a curriculum of attack strengths (Cai et al. 2018): torchvision ResNet-18 adapted to CIFAR (3x3 stem, no max-pool, 10 classes, random init) on a CIFAR-10-sized set of 50k uint8 images kept on the device, per-sample reflect-pad-4 random crops and flips on the device, batch 128 from a fresh permutation every epoch (its last batch partial); L-inf PGD (eps 8/255, step 2.5 eps / k, random start) with k growing from 1 to 10 steps over the run, the attack run with the model in eval mode (input gradients by torch.autograd.grad), then a training step on the adversarial batch: cross-entropy, SGD with momentum 0.9, weight decay 5e-4, bf16 autocast, 180 steps; every 90 steps a robust evaluation of 1000 held-out images with PGD-20 in batches of 500 (clean and robust accuracy read back)")
def pgd_adv_train(rng):
    import torchvision

    f = torch.nn.functional
    n_train, n_test = _smoke(50_000, 300), _smoke(1000, 40)
    data = _Cifar(n_train + n_test)
    model = torchvision.models.resnet18(num_classes=10)
    if _smoke(0, 1):
        model = torchvision.models.ResNet(torchvision.models.resnet.BasicBlock, [1, 1, 1, 1], num_classes=10)
    model.conv1 = torch.nn.Conv2d(3, 64, 3, 1, 1, bias=False)
    model.maxpool = torch.nn.Identity()
    model = model.cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    mean, std = data.mean, data.std
    eps = 8 / 255

    def logits(x01):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return model(((x01 - mean) / std).contiguous(memory_format=torch.channels_last))

    def pgd(x01, y, k):
        """L-inf PGD from a random start: the adversarial images in [0, 1]."""
        alpha = 2.5 * eps / k
        delta = torch.empty_like(x01).uniform_(-eps, eps)
        for _ in range(k):
            delta.requires_grad_(True)
            loss = f.cross_entropy(logits((x01 + delta).clamp(0, 1)), y)
            g, = torch.autograd.grad(loss, delta)
            delta = (delta.detach() + alpha * g.sign()).clamp(-eps, eps)
            del loss, g
        return (x01 + delta).clamp(0, 1).detach()

    steps, batch = _smoke(180, 3), _smoke(128, 32)
    perm, at = None, n_train
    # About 210 tensors a PGD iteration and 460 a training step (counted on CPU at ResNet-18's depth, the input
    # gradients, backward and SGD included): 180 steps of 5.5 PGD iterations on average and 2 evaluations of
    # 2 x 22 passes make about 0.31M tensors, 0.61M events.
    for step in range(steps):
        if at >= n_train:
            perm, at = torch.randperm(n_train, device="cuda"), 0
        idx = perm[at: at + batch]
        at += batch
        x01, y = data.augmented(idx, normalize=False), data.labels[idx]
        k = 1 + (9 * step) // max(1, steps - 1)
        model.eval()
        adv = pgd(x01, y, k)
        model.train()
        loss = f.cross_entropy(logits(adv), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del idx, x01, y, adv, loss
        if (step + 1) % _smoke(90, 3) == 0:
            model.eval()
            clean, robust = [], []
            for lo in range(n_train, n_train + n_test, _smoke(500, 20)):
                idx = torch.arange(lo, min(lo + _smoke(500, 20), n_train + n_test), device="cuda")
                x01, y = data.plain(idx, normalize=False), data.labels[idx]
                with torch.no_grad():
                    clean.append((logits(x01).argmax(-1) == y).sum())
                adv = pgd(x01, y, _smoke(20, 3))
                with torch.no_grad():
                    robust.append((logits(adv).argmax(-1) == y).sum())
                del idx, x01, y, adv
            float(torch.stack(clean).sum()), float(torch.stack(robust).sum())
            model.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- AWQ post-training quantization


def _pseudo_quantize(w, group=128):
    """AutoAWQ's pseudo_quantize_tensor (4 bits, zero point, groups along the input dimension): the fake-quantized
    weight, its scales and zeros (out, in / group)."""
    shape = w.shape
    w = w.reshape(-1, group)
    hi, lo = w.amax(dim=1, keepdim=True), w.amin(dim=1, keepdim=True)
    scales = (hi - lo).clamp(min=1e-5) / 15
    zeros = (-torch.round(lo / scales)).clamp_(0, 15)
    w = (torch.clamp(torch.round(w / scales) + zeros, 0, 15) - zeros) * scales
    return w.reshape(shape), scales.view(shape[0], -1), zeros.view(shape[0], -1)


class _W4Linear(torch.nn.Module):
    """A 4-bit weight-only linear layer (8 weights packed in an int32, fp16 scales and zeros per group of 128),
    dequantized to fp16 at every call and multiplied, as AWQ's GEMM path does for large batches."""

    def __init__(self, linear, group=128):
        super().__init__()
        w, scales, zeros = _pseudo_quantize(linear.weight.data, group)
        q = torch.round(w.view(w.shape[0], -1, group) / scales[..., None] + zeros[..., None]).to(torch.int32)
        q = q.view(w.shape[0], -1, 8) << (4 * torch.arange(8, device=w.device, dtype=torch.int32))
        self.register_buffer("qweight", q.sum(-1, dtype=torch.int32))
        self.register_buffer("scales", scales.half())
        self.register_buffer("zeros", zeros.half())
        self.group = group

    def forward(self, x):
        shifts = 4 * torch.arange(8, device=x.device, dtype=torch.int32)
        q = (self.qweight[..., None] >> shifts) & 15
        w = q.view(q.shape[0], -1, self.group).half() - self.zeros[..., None]
        return x @ (w * self.scales[..., None]).view(q.shape[0], -1).T


@_workload("LLM post-training weight quantization, AWQ (Lin et al. 2024) as AutoAWQ runs it, then evaluation of the int4 model: an HF LlamaForCausalLM (TinyLlama-shaped: hidden 2048, 16 layers, GQA 32/4 heads of 64, MLP 5632, vocab 32000: 0.97B, random init) in fp16, its decoder layers run by hand; 128 calibration blocks of 512 tokens through the embeddings, then layer by layer: one forward of all of them with hooks caching the inputs of q_proj, o_proj, gate_proj and down_proj (the outputs kept as the next layer's inputs); per-channel scale search over a grid of 20 (activation means to the power 0-0.95) for input_layernorm -> q/k/v (the attention block as the module inspected), post_attention_layernorm -> gate/up (the MLP) and up_proj -> down_proj (v_proj -> o_proj skipped, as for GQA), each point: weights scaled and fake-quantized to 4 bits in groups of 128, the block rerun on all 128 blocks, the MSE read back, the original weights restored (kept on the device); best scales folded into the norms and weights; clipping search for v, o, gate, up and down (512 sampled tokens, output channels in batches of 256, 10 shrink ratios); then every linear layer replaced by a packed int4 one dequantized at every call; then a zero-shot multiple-choice evaluation, lm-eval-harness-style: 48 questions of a 32-512-token context (log-uniform) and 4 choices of 4-32 tokens, the 4 rows right-padded into one batch, continuation log-likelihoods read back")
def awq_quantize(rng):
    from transformers import LlamaConfig, LlamaForCausalLM

    from workload_helpers import _repeat_kv, _rope_tables

    d, layers, heads, kvh = _smoke(2048, 512), _smoke(16, 2), _smoke(32, 8), 4
    dh = d // heads
    cfg = LlamaConfig(hidden_size=d, intermediate_size=_smoke(5632, 1024), num_hidden_layers=layers,
                      num_attention_heads=heads, num_key_value_heads=kvh, vocab_size=32000,
                      max_position_embeddings=2048)
    lm = LlamaForCausalLM(cfg).to("cuda", torch.float16).eval()
    cos, sin = (t.half() for t in _rope_tables(dh, 2048, 10000.0))
    rope, sdpa = _b.rec._rope, torch.nn.functional.scaled_dot_product_attention
    group, n_grid = 128, 20

    def attention(layer, h):
        a = layer.self_attn
        b, t, _ = h.shape
        c, s = cos[:t], sin[:t]
        q = rope(a.q_proj(h).view(b, t, heads, dh).transpose(1, 2), c, s)
        k = rope(a.k_proj(h).view(b, t, kvh, dh).transpose(1, 2), c, s)
        v = a.v_proj(h).view(b, t, kvh, dh).transpose(1, 2)
        o = sdpa(q, _repeat_kv(k, heads // kvh), _repeat_kv(v, heads // kvh), is_causal=True)
        return a.o_proj(o.transpose(1, 2).reshape(b, t, d))

    def block(layer, x):
        x = x + attention(layer, layer.input_layernorm(x))
        return x + layer.mlp(layer.post_attention_layernorm(x))

    def search_scale(module, inspect, linears, x):
        """AutoAWQ's _search_best_scale: the best per-input-channel scales for `linears` (which all read x), inspect
        running `module` (whose weights are restored after every grid point)."""
        weight = torch.cat([m.weight for m in linears], 0)
        w_scale = weight.abs().view(-1, group)
        w_scale = (w_scale / (w_scale.amax(dim=1, keepdim=True) + 1e-6)).view(weight.shape)
        del weight, w_scale  # w_mean: unused without duo scaling, computed all the same
        x_mean = x.abs().view(-1, x.shape[-1]).float().mean(0)
        ref = inspect(x)
        saved = {k: v.clone() for k, v in module.state_dict().items()}
        best, best_scales = float("inf"), None
        for r in range(n_grid):
            scales = x_mean.pow(r / n_grid).clamp(min=1e-4)
            scales = scales / (scales.max() * scales.min()).sqrt()
            view = scales.view(1, -1).half()
            for fc in linears:
                fc.weight.mul_(view)
                fc.weight.data = _pseudo_quantize(fc.weight.data, group)[0] / view
            loss = float((ref - inspect(x)).float().pow(2).mean())
            if loss < best:
                best, best_scales = loss, scales.clone()
            module.load_state_dict(saved)
        del ref, saved
        return best_scales.half()

    def search_clip(w, x):
        """AutoAWQ's _compute_best_clip: the best clipping bound per output channel and group of w (out, in)."""
        x = x.reshape(-1, x.shape[-1])
        x = x[:: max(1, x.shape[0] // 512)].reshape(1, -1, x.shape[-1] // group, group)
        w = w.reshape(w.shape[0], 1, -1, group)
        oc = 256 if w.shape[0] % 256 == 0 else 64
        best_all = []
        for i in range(w.shape[0] // oc):
            wb = w[i * oc: (i + 1) * oc]
            org_max = wb.abs().amax(dim=-1, keepdim=True)
            best_max, min_errs = org_max.clone(), torch.ones_like(org_max) * 1e9
            org_out = (x * wb).sum(dim=-1)
            for s in range(int(0.5 * n_grid)):
                max_val = org_max * (1 - s / n_grid)
                cur = _pseudo_quantize(torch.clamp(wb, -max_val, max_val), group)[0]
                err = ((x * cur).sum(dim=-1) - org_out).pow(2).mean(dim=1).view(min_errs.shape)
                better = err < min_errs
                min_errs[better] = err[better]
                best_max[better] = max_val[better]
                del cur, err, better
            best_all.append(best_max)
            del org_out
        return torch.cat(best_all, 0)

    # About 6k tensors a layer at the CPU run's width (counted on CPU: half of them the clipping search's 13
    # output-channel batches of 10 ratios, 225 tensors a batch, half the 60 fake-quantizations and block reruns of the
    # scale search); at full width 61 batches make about 17k a layer, and an evaluation question through the 112
    # dequantizing linears about 1.3k: 16 layers and 48 questions make about 0.33M tensors, 0.67M events.
    with torch.no_grad():
        ids = torch.randint(0, cfg.vocab_size, (_smoke(128, 4), _smoke(512, 64)), device="cuda")
        x = lm.model.embed_tokens(ids)
        del ids
        for layer in lm.model.layers:
            a, mlp = layer.self_attn, layer.mlp
            feats, hooks = {}, []
            for name, mod in (("q", a.q_proj), ("o", a.o_proj), ("gate", mlp.gate_proj), ("down", mlp.down_proj)):
                keep = (lambda m, args, out, name=name: feats.__setitem__(name, args[0]))
                hooks.append(mod.register_forward_hook(keep))
            out = block(layer, x)
            for h in hooks:
                h.remove()
            scales = search_scale(a, lambda h: attention(layer, h), [a.q_proj, a.k_proj, a.v_proj], feats["q"])
            layer.input_layernorm.weight.div_(scales)
            for fc in (a.q_proj, a.k_proj, a.v_proj):
                fc.weight.mul_(scales.view(1, -1))
            feats["q"].div_(scales.view(1, -1))
            scales = search_scale(mlp, mlp, [mlp.gate_proj, mlp.up_proj], feats["gate"])
            layer.post_attention_layernorm.weight.div_(scales)
            for fc in (mlp.gate_proj, mlp.up_proj):
                fc.weight.mul_(scales.view(1, -1))
            feats["gate"].div_(scales.view(1, -1))
            scales = search_scale(mlp.down_proj, mlp.down_proj, [mlp.down_proj], feats["down"])
            mlp.up_proj.weight.div_(scales.view(-1, 1))
            mlp.down_proj.weight.mul_(scales.view(1, -1))
            feats["down"].div_(scales.view(1, -1))
            for fc, inp in ((a.v_proj, feats["q"]), (a.o_proj, feats["o"]), (mlp.gate_proj, feats["gate"]),
                            (mlp.up_proj, feats["gate"]), (mlp.down_proj, feats["down"])):
                bound = search_clip(fc.weight, inp)
                w = fc.weight.reshape(bound.shape[0], 1, -1, group)
                fc.weight.data = torch.clamp(w, -bound, bound).reshape(fc.weight.shape)
                del bound, w
            feats.clear()
            del scales
            for owner, names in ((a, ("q_proj", "k_proj", "v_proj", "o_proj")),
                                 (mlp, ("gate_proj", "up_proj", "down_proj"))):
                for name in names:
                    setattr(owner, name, _W4Linear(getattr(owner, name), group))
            x = out
            del out
        del x

        for _ in range(_smoke(48, 3)):
            ctx = _loguniform(rng, 32, _smoke(512, 64))
            lens = [rng.randint(4, 32) for _ in range(4)]
            ids = torch.randint(0, cfg.vocab_size, (4, ctx + max(lens)), device="cuda")
            h = lm.model.embed_tokens(ids)
            for layer in lm.model.layers:
                h = block(layer, h)
            logp = lm.lm_head(lm.model.norm(h)).float().log_softmax(-1)
            tok = logp[:, ctx - 1: -1].gather(-1, ids[:, ctx:, None])[..., 0]
            mask = torch.arange(max(lens), device="cuda")[None] < torch.tensor(lens, device="cuda")[:, None]
            (tok * mask).sum(1).tolist()
            del ids, h, logp, tok, mask
    torch.cuda.synchronize()


# ---------------------------------------------------------------- FFJORD continuous normalizing flow


class _ConcatSquash(torch.nn.Module):
    """FFJORD's ConcatSquashLinear: a linear layer gated and shifted by functions of the time t."""

    def __init__(self, din, dout):
        super().__init__()
        self.lin, self.gate = torch.nn.Linear(din, dout), torch.nn.Linear(1, dout)
        self.bias = torch.nn.Linear(1, dout, bias=False)

    def forward(self, t, x):
        t = t.view(1, 1)
        return self.lin(x) * torch.sigmoid(self.gate(t)) + self.bias(t)


@_workload("continuous normalizing flow training, FFJORD (Grathwohl et al. 2019) on a MINIBOONE-like tabular set (43 features, 30k rows kept on the device), written by hand: a concat-squash MLP 43-860-860-43 with softplus as the ODE's dynamics (random init), Hutchinson's trace estimator (Rademacher noise, vector-Jacobian products by torch.autograd.grad with create_graph), RNODE's kinetic-energy and Jacobian-Frobenius regularizers (weights 0.01) integrated alongside, an adaptive Dormand-Prince (dopri5) solver written out as torchdiffeq's (FSAL, mixed error norm, rtol and atol 1e-5, step-size control with safety 0.9, accept or reject read back every step) from t 0 to 1, backpropagated through the solver's accepted steps (not the adjoint); batch 1000 from a fresh permutation every epoch, the Gaussian log-likelihood minus the integrated trace, Adam (lr 1e-3), fp32, 80 steps; every 40 steps a no_grad-on-the-weights evaluation of 3 held-out batches of 1000 (the trace still by autograd.grad, without create_graph)")
def ffjord_cnf(rng):
    d, hidden, n = 43, _smoke(860, 64), _smoke(30_000, 500)
    data = torch.randn(n, d, device="cuda") @ (torch.randn(d, d, device="cuda") / math.sqrt(d))
    test = torch.randn(_smoke(3000, 200), d, device="cuda")
    net = torch.nn.ModuleList([_ConcatSquash(d, hidden), _ConcatSquash(hidden, hidden), _ConcatSquash(hidden, d)])
    net = net.cuda()
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    f = torch.nn.functional
    # dopri5's Butcher tableau (torchdiffeq's), the 5th-order weights and the difference to the 4th-order ones.
    alpha = [1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0]
    beta = [[1 / 5], [3 / 40, 9 / 40], [44 / 45, -56 / 15, 32 / 9],
            [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
            [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
            [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84]]
    c_err = [35 / 384 - 1951 / 21600, 0, 500 / 1113 - 22642 / 50085, 125 / 192 - 451 / 720,
             -2187 / 6784 + 12231 / 42400,
             11 / 84 - 649 / 6300, -1 / 60]

    def dynamics(t, state, e, train):
        """d(z, -logp, kinetic, jacobian)/dt: the MLP's output, minus its Hutchinson trace, and RNODE's integrands."""
        z = state[0]
        if not z.requires_grad:
            z = z.requires_grad_(True)
        h = f.softplus(net[0](t, z))
        h = f.softplus(net[1](t, h))
        dz = net[2](t, h)
        ej, = torch.autograd.grad(dz, z, e, create_graph=train)
        return (dz, -(ej * e).sum(1), dz.pow(2).sum(1), ej.pow(2).sum(1))

    def rms(x):
        return x.pow(2).mean().sqrt()

    def solve(z, train):
        """torchdiffeq's dopri5 from 0 to 1: the state at 1 and the number of function evaluations."""
        e = torch.randint(0, 2, z.shape, device="cuda").float() * 2 - 1
        zero = torch.zeros(z.shape[0], device="cuda")
        y, t, dt, nfe = (z, zero, zero, zero), 0.0, 0.1, 1
        k1 = dynamics(torch.tensor(t, device="cuda"), y, e, train)
        while t < 1.0:
            dt = min(dt, 1.0 - t)
            ks = [k1]
            for i in range(6):
                yi = tuple(y[j] + dt * sum(b * k[j] for b, k in zip(beta[i], ks) if b) for j in range(4))
                ks.append(dynamics(torch.tensor(t + alpha[i] * dt, device="cuda"), yi, e, train))
            nfe += 6
            y_new = yi  # the 6th stage's state is the 5th-order solution (FSAL)
            err = [dt * sum(c * k[j] for c, k in zip(c_err, ks) if c) for j in range(4)]
            tol = [1e-5 + 1e-5 * torch.maximum(y[j].abs(), y_new[j].abs()) for j in range(4)]
            ratio = float(torch.stack([rms(a / b) for a, b in zip(err, tol)]).max().detach())
            if ratio <= 1.0:
                y, k1, t = y_new, ks[-1], t + dt
            else:
                del y_new, ks, yi
            dt = dt * min(10.0, max(0.2, 0.9 * ratio ** -0.2)) if ratio > 0 else dt * 10.0
            del err, tol
        return y, nfe

    def loss_of(x, train):
        (z, neg_dlogp, kinetic, jac), nfe = solve(x, train)
        logpz = -0.5 * (z.pow(2).sum(1) + d * math.log(2 * math.pi))
        return -(logpz - neg_dlogp).mean(), kinetic.mean(), jac.mean()

    batch, perm, at = _smoke(1000, 100), None, n
    # About 1.15k tensors a dopri5 step in training (counted on CPU at full width and batch, the double backward through
    # it included; 3 steps, 19 evaluations a solve there, the random-init dynamics being smooth) and 1.6k an evaluation
    # batch: 80 steps and 2 evaluations of 3 batches make about 0.29M tensors, 0.57M events. The solver takes more
    # steps as the flow trains, so this count is the loosest of the batch's.
    for step in range(_smoke(80, 2)):
        if at + batch > n:
            perm, at = torch.randperm(n, device="cuda"), 0
        x = data[perm[at: at + batch]]
        at += batch
        nll, kinetic, jac = loss_of(x, True)
        (nll + 0.01 * kinetic + 0.01 * jac).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, nll, kinetic, jac
        if (step + 1) % _smoke(40, 2) == 0:
            total = 0.0
            for lo in range(0, test.shape[0], batch):
                for p in net.parameters():
                    p.requires_grad_(False)
                nll, _, _ = loss_of(test[lo: lo + batch].clone().requires_grad_(True), False)
                total += float(nll.detach())
                for p in net.parameters():
                    p.requires_grad_(True)
                del nll
    torch.cuda.synchronize()

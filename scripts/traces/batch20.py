"""The twentieth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch19.py are). Same conventions: models built from configs (transformers, torchvision or hand-written
torch) with random weights, nothing downloaded, `rng` the workload's random.Random, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny.

record.py calls `register(<its own module object>)` once, just before main(), after batch19's: every workload
below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it reaches
record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.
"""

import copy
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


# ---------------------------------------------------------------- Hyena long-convolution LM


class _Sin(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.freq = torch.nn.Parameter(torch.ones(1, dim))

    def forward(self, x):
        return torch.sin(self.freq * x)


class _HyenaOperator(torch.nn.Module):
    """safari's HyenaOperator of order 2: an input projection to 3 x width, a short depthwise causal conv (kernel 3),
    gating, and one long convolution by FFT with an implicit filter (an MLP with sine activations over 33 positional
    features, exponentially decaying windows) recomputed for every sequence length."""

    def __init__(self, d, filter_width=64, emb=33):
        super().__init__()
        nn = torch.nn
        self.d, self.emb = d, emb
        self.in_proj, self.out_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.short = nn.Conv1d(3 * d, 3 * d, 3, padding=2, groups=3 * d)
        fw = filter_width
        self.filter = nn.Sequential(nn.Linear(emb, fw), _Sin(fw), nn.Linear(fw, fw), _Sin(fw), nn.Linear(fw, fw),
                                    _Sin(fw), nn.Linear(fw, d, bias=False))
        self.bias = nn.Parameter(torch.randn(d))
        self.register_buffer("deltas", torch.linspace(math.log(1e-2) / 0.3, math.log(1e-2) / 1.5, d).abs())

    def filters(self, n):
        """The long filters for length n: (d, n)."""
        t = torch.linspace(0, 1, n, device=self.deltas.device)[:, None]
        bands = (self.emb - 1) // 2
        w = 2 * math.pi * torch.arange(n, device=t.device)[:, None] / n
        fr = torch.linspace(1e-4, bands - 1, bands, device=t.device)[None]
        z = torch.cat([t, torch.cos(fr * w), -torch.sin(fr * w)], -1)
        return (self.filter(z) * torch.exp(-t * self.deltas)).T

    def forward(self, u):
        n = u.shape[1]
        x0, x1, v = self.short(self.in_proj(u).transpose(1, 2))[..., :n].split(self.d, 1)
        v = v * x1
        k = self.filters(n)
        size = 2 * n
        kf = torch.fft.rfft(k.float(), n=size) / size
        y = torch.fft.irfft(torch.fft.rfft(v.float(), n=size) * kf, n=size, norm="forward")[..., :n]
        y = (y + v.float() * self.bias[:, None]).to(v.dtype)
        return self.out_proj((y * x0).transpose(1, 2))


class _HyenaBlock(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        nn = torch.nn
        self.ln1, self.mixer, self.ln2 = nn.LayerNorm(d), _HyenaOperator(d), nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate="tanh"), nn.Linear(4 * d, d))

    def forward(self, x):
        x = x + self.mixer(self.ln1(x))
        return x + self.mlp(self.ln2(x))


@_workload("long-convolution language-model training, Hyena (Poli et al. 2023) as in HazyResearch's safari, written by hand: 12 blocks of width 768 (Hyena operators of order 2: input projection to 3 x 768, short depthwise conv, an implicit long filter from a 3-layer sine MLP over positional features with exponential decay, recomputed for each length, the long convolution by torch.fft.rfft/irfft at twice the length in fp32; GELU MLP 3072), vocab 50257 with a tied head, random init; sequences of 1024-8192 tokens (log-uniform, multiples of 256), the batch sized to 16384 tokens a step, bf16 autocast, gradient clipping 1.0, AdamW (lr 6e-4, weight decay 0.1), 80 steps; every 40 steps a no_grad evaluation of 4 batches of 4 x 4096 tokens (loss read back)")
def hyena_lm(rng):
    f = torch.nn.functional
    d, layers, vocab = _smoke(768, 64), _smoke(12, 12), 50257
    emb = torch.nn.Embedding(vocab, d).cuda()
    blocks = torch.nn.ModuleList(_HyenaBlock(d) for _ in range(layers)).cuda()
    norm = torch.nn.LayerNorm(d).cuda()
    params = list(emb.parameters()) + list(blocks.parameters()) + list(norm.parameters())
    opt = torch.optim.AdamW(params, lr=6e-4, weight_decay=0.1)
    tokens = _smoke(16384, 512)

    def loss_of(ids):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            x = emb(ids)
            for blk in blocks:
                x = blk(x)
            logits = norm(x) @ emb.weight.T
        return f.cross_entropy(logits[:, :-1].float().reshape(-1, vocab), ids[:, 1:].reshape(-1))

    # About 4.4k tensors a step (counted on CPU at 12 blocks: 11.4k for 2 steps and an evaluation of 4 batches of about
    # 650 each; AdamW and clipping over the 231 parameters included): 80 steps and 2 evaluations make about 0.36M
    # tensors, 0.71M events.
    for step in range(_smoke(80, 2)):
        m = _smoke(256, 64)
        n = _loguniform(rng, _smoke(1024, 64) // m, _smoke(8192, 256) // m) * m
        ids = torch.randint(0, vocab, (max(1, tokens // n), n), device="cuda")
        loss = loss_of(ids)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, loss
        if (step + 1) % _smoke(40, 2) == 0:
            with torch.no_grad():
                total = 0.0
                for _ in range(4):
                    total += float(loss_of(torch.randint(0, vocab, (4, _smoke(4096, 128)), device="cuda")))
    torch.cuda.synchronize()


# ---------------------------------------------------------------- integrated-gradients explanation serving


@_workload("model-explanation serving, Captum-style attributions (inference with input gradients): torchvision ResNet-50 and ViT-B/16 (random init, fp32, eval, weights frozen); 140 requests of 1-8 images (log-uniform) of one of five camera sizes (480x640 to 1080x1920), uint8 made on the device, resized (bilinear, antialiased) to 256 on the short side, centre-cropped to 224 and normalized; the target class from a no_grad forward; then, drawn per request: Integrated Gradients (zero baseline, 16, 32 or 50 Gauss-Legendre steps, internal batches of 32 examples, torch.autograd.grad to the inputs, the convergence delta from two more forwards), SmoothGrad-squared (10 or 20 noisy copies, sigma 0.15 of the range, batches of 32) or, for the ResNet, Grad-CAM on layer4 (a forward hook swapping in a leaf); the saliency maps normalized per image and copied back as uint8 224x224 heatmaps")
def ig_explain(rng):
    import numpy
    import torchvision

    f = torch.nn.functional
    crop, short = _smoke(224, 64), _smoke(256, 72)
    models = {"resnet": torchvision.models.resnet50(), "vit": torchvision.models.vit_b_16(image_size=crop)}
    for m in models.values():
        m.cuda().eval().requires_grad_(False)
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda")[None, :, None, None]
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda")[None, :, None, None]
    sizes = ((480, 640), (600, 800), (768, 1024), (720, 1280), (1080, 1920))
    internal = 32
    grab = {}

    def swap_in_leaf(mod, args, out):
        grab["feat"] = out.detach().requires_grad_(True)
        return grab["feat"]

    def preprocess(u8):
        x = u8.permute(0, 3, 1, 2).float() / 255
        h, w = x.shape[-2:]
        s = short / min(h, w)
        x = f.interpolate(x, size=(max(short, round(h * s)), max(short, round(w * s))), mode="bilinear", antialias=True)
        top, left = (x.shape[-2] - crop) // 2, (x.shape[-1] - crop) // 2
        return ((x[..., top: top + crop, left: left + crop] - mean) / std).contiguous()

    def input_grads(model, inp, target):
        inp = inp.requires_grad_(True)
        score = model(inp).gather(1, target[:, None]).sum()
        g, = torch.autograd.grad(score, inp)
        return g

    # About 2.3k tensors a request (counted on CPU at full depth and 64 px: 9.4k for 4 requests; a chunk of 32 through
    # either model and back to its inputs is about 500, a request 3 chunks and 2 forwards on average): 140 requests
    # make about 0.3M tensors, 0.6M events.
    for _ in range(_smoke(140, 4)):
        name = rng.choice(("resnet", "resnet", "vit"))
        model = models[name]
        b = _loguniform(rng, 1, 8)
        h, w = rng.choice(sizes) if not _smoke(0, 1) else (96, 128)
        x = preprocess(torch.randint(0, 256, (b, h, w, 3), dtype=torch.uint8, device="cuda"))
        with torch.no_grad():
            target = model(x).argmax(-1)
        method = rng.choice(("ig", "ig", "smoothgrad", "gradcam" if name == "resnet" else "ig"))
        if method == "ig":
            steps = rng.choice((16, 32, 50))
            nodes, weights = numpy.polynomial.legendre.leggauss(steps)
            alphas = torch.tensor((nodes + 1) / 2, dtype=torch.float32, device="cuda")
            wts = torch.tensor(weights / 2, dtype=torch.float32, device="cuda")
            total = torch.zeros_like(x)
            per = max(1, internal // b)
            for lo in range(0, steps, per):
                a = alphas[lo: lo + per]
                inp = (a[:, None, None, None, None] * x[None]).flatten(0, 1)
                g = input_grads(model, inp, target.repeat(a.shape[0])).view(a.shape[0], b, *x.shape[1:])
                total += (g * wts[lo: lo + per, None, None, None, None]).sum(0)
                del a, inp, g
            sal = (x * total).sum(1).abs()
            with torch.no_grad():
                at_x = model(x).gather(1, target[:, None])[:, 0]
                delta = at_x - model(torch.zeros_like(x)).gather(1, target[:, None])[:, 0]
                delta = delta - (x * total).sum((1, 2, 3))
            del total
        elif method == "smoothgrad":
            k = rng.choice((10, 20))
            sigma = 0.15 * (x.amax((1, 2, 3)) - x.amin((1, 2, 3)))
            acc = torch.zeros_like(x)
            per = max(1, internal // b)
            for lo in range(0, k, per):
                m = min(per, k - lo)
                noise = torch.randn(m, *x.shape, device="cuda") * sigma[None, :, None, None, None]
                noisy = (x[None] + noise).flatten(0, 1)
                g = input_grads(model, noisy, target.repeat(m)).view(m, *x.shape)
                acc += g.pow(2).sum(0)
                del noisy, g
            sal = (acc / k).sum(1)
            del acc
        else:
            hook = model.layer4.register_forward_hook(swap_in_leaf)
            score = model(x).gather(1, target[:, None]).sum()
            hook.remove()
            feat = grab.pop("feat")
            g, = torch.autograd.grad(score, feat)
            cam = torch.relu((g.mean((2, 3), keepdim=True) * feat).sum(1, keepdim=True))
            sal = f.interpolate(cam, size=(crop, crop), mode="bilinear")[:, 0]
            del score, feat, g, cam
        sal = sal / sal.flatten(1).amax(1).clamp(min=1e-12)[:, None, None]
        (sal * 255).to(torch.uint8).cpu()
        del x, target, sal
    torch.cuda.synchronize()


# ---------------------------------------------------------------- GDAS differentiable architecture search


_DARTS_OPS = ("none", "max_pool_3x3", "avg_pool_3x3", "skip_connect", "sep_conv_3x3", "sep_conv_5x5", "dil_conv_3x3",
              "dil_conv_5x5")


def _relu_conv_bn(cin, cout, k, stride, pad, dilation=1, groups=1, pointwise=None):
    nn = torch.nn
    conv = nn.Conv2d(cin, cin if pointwise else cout, k, stride, pad, dilation=dilation, groups=groups, bias=False)
    layers = [nn.ReLU(), conv]
    if pointwise:
        layers.append(nn.Conv2d(cin, cout, 1, bias=False))
    return layers + [nn.BatchNorm2d(cout, affine=False)]


class _FactorizedReduce(torch.nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        nn = torch.nn
        self.c1, self.c2 = nn.Conv2d(cin, cout // 2, 1, 2, bias=False), nn.Conv2d(cin, cout // 2, 1, 2, bias=False)
        self.bn = nn.BatchNorm2d(cout, affine=False)

    def forward(self, x):
        x = torch.relu(x)
        return self.bn(torch.cat([self.c1(x), self.c2(x[:, :, 1:, 1:])], 1))


class _Zero(torch.nn.Module):
    def __init__(self, stride):
        super().__init__()
        self.stride = stride

    def forward(self, x):
        return x[:, :, :: self.stride, :: self.stride].mul(0.0)


def _darts_op(name, c, stride):
    nn = torch.nn
    if name == "none":
        return _Zero(stride)
    if name.endswith("pool_3x3"):
        if name.startswith("max"):
            pool = nn.MaxPool2d(3, stride, 1)
        else:
            pool = nn.AvgPool2d(3, stride, 1, count_include_pad=False)
        return nn.Sequential(pool, nn.BatchNorm2d(c, affine=False))
    if name == "skip_connect":
        return nn.Identity() if stride == 1 else _FactorizedReduce(c, c)
    k = int(name[-1])
    if name.startswith("sep"):
        return nn.Sequential(*_relu_conv_bn(c, c, k, stride, k // 2, groups=c, pointwise=True),
                             *_relu_conv_bn(c, c, k, 1, k // 2, groups=c, pointwise=True))
    return nn.Sequential(*_relu_conv_bn(c, c, k, stride, k - 1, dilation=2, groups=c, pointwise=True))


class _GdasCell(torch.nn.Module):
    """A DARTS search cell (4 nodes, 14 mixed edges of the 8 DARTS operations) run GDAS's way: on each edge only the
    operation sampled by the hard Gumbel-softmax runs, scaled by its straight-through weight."""

    def __init__(self, c_pp, c_p, c, reduction, reduction_prev):
        super().__init__()
        nn = torch.nn
        self.pre0 = _FactorizedReduce(c_pp, c) if reduction_prev else nn.Sequential(*_relu_conv_bn(c_pp, c, 1, 1, 0))
        self.pre1 = nn.Sequential(*_relu_conv_bn(c_p, c, 1, 1, 0))
        self.edges = nn.ModuleList()
        for i in range(4):
            for j in range(2 + i):
                stride = 2 if reduction and j < 2 else 1
                self.edges.append(nn.ModuleList(_darts_op(name, c, stride) for name in _DARTS_OPS))

    def forward(self, s0, s1, hardwts, index):
        states, e = [self.pre0(s0), self.pre1(s1)], 0
        for i in range(4):
            acc = 0
            for h in states:
                k = index[e]
                # GDAS's sum: the sampled operation times its weight, plus the other (zero-valued) weights so that their
                # gradients reach the architecture parameters.
                acc = acc + self.edges[e][k](h) * hardwts[e, k] + (hardwts[e].sum() - hardwts[e, k])
                e += 1
            states.append(acc)
        return torch.cat(states[2:], 1)


class _GdasNet(torch.nn.Module):
    def __init__(self, c=16, cells=8, classes=10):
        super().__init__()
        nn = torch.nn
        self.stem = nn.Sequential(nn.Conv2d(3, 3 * c, 3, padding=1, bias=False), nn.BatchNorm2d(3 * c))
        self.cells, self.reductions = nn.ModuleList(), []
        c_pp, c_p, cur, reduction_prev = 3 * c, 3 * c, c, False
        for i in range(cells):
            reduction = i in (cells // 3, 2 * cells // 3)
            cur = cur * 2 if reduction else cur
            self.cells.append(_GdasCell(c_pp, c_p, cur, reduction, reduction_prev))
            self.reductions.append(reduction)
            c_pp, c_p, reduction_prev = c_p, 4 * cur, reduction
        self.head = nn.Linear(c_p, classes)
        self.alphas = nn.ParameterList([nn.Parameter(1e-3 * torch.randn(14, len(_DARTS_OPS))) for _ in range(2)])

    def forward(self, x, tau):
        hard, index = [], []
        for a in self.alphas:
            while True:  # GDAS resamples when the Gumbel noise overflows
                gumbels = -torch.empty_like(a).exponential_().log()
                probs = ((a.log_softmax(dim=1) + gumbels) / tau).softmax(dim=1)
                idx = probs.max(-1, keepdim=True)[1]
                hardwts = torch.zeros_like(probs).scatter_(-1, idx, 1.0) - probs.detach() + probs
                if not bool(torch.isinf(gumbels).any() | torch.isnan(probs).any()):
                    break
            hard.append(hardwts)
            index.append(idx[:, 0])
        index = torch.stack(index).tolist()
        s0 = s1 = self.stem(x)
        for cell, red in zip(self.cells, self.reductions):
            s0, s1 = s1, cell(s0, s1, hard[red], index[red])
        return self.head(s1.mean((2, 3)))


@_workload("neural architecture search, GDAS (Dong & Yang 2019) over the DARTS search space, written by hand: a supernet of 8 cells (16 initial channels, reductions at cells 2 and 5, 4 nodes and 14 edges a cell, 8 candidate operations an edge: none, 3x3 max and average pooling, skip, separable convs 3x3 and 5x5, dilated convs 3x3 and 5x5; random init) in which each edge runs only the operation drawn by a hard Gumbel-softmax (straight-through weights, the indices read back once a forward, temperature decayed from 10 to 0.1), so the operations run, and their tensors, change every forward; CIFAR-10 halves of 25k uint8 images kept on the device for the weights and the architecture, per-sample random crops and flips on the device, batch 64; every step a weight step on a training batch (SGD momentum 0.9, weight decay 3e-4, cosine rate from 0.025, gradient clipping 5) and an architecture step on a validation batch (Adam 3e-4, betas 0.5 and 0.999, weight decay 1e-3), fp32, 32 steps; every 16 steps the genotype (top-2 edges a node by softmax of the architecture weights) read back and 1000 validation images scored in batches of 250 with the argmax operations")
def gdas_search(rng):
    f = torch.nn.functional
    n = _smoke(50_000, 400)
    data = _Cifar(n)
    net = _GdasNet(c=_smoke(16, 4)).cuda()
    arch = list(net.alphas.parameters())
    weights = [p for name, p in net.named_parameters() if not name.startswith("alphas")]
    steps, batch = _smoke(32, 3), _smoke(64, 16)
    w_opt = torch.optim.SGD(weights, lr=0.025, momentum=0.9, weight_decay=3e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(w_opt, steps, eta_min=0.001)
    a_opt = torch.optim.Adam(arch, lr=3e-4, betas=(0.5, 0.999), weight_decay=1e-3)
    half = n // 2
    perms, at = None, half
    # About 9.8k tensors a step of two supernet passes (counted on CPU: 31k for 3 steps and an evaluation of 2
    # batches; the 112 edges' sampled operations forward and backward, the Gumbel draws, clipping and both optimizers)
    # and 0.8k an evaluation batch: 32 steps and 2 evaluations of 4 batches make about 0.32M tensors, 0.64M events.
    for step in range(steps):
        if at + batch > half:
            perms, at = (torch.randperm(half, device="cuda"), torch.randperm(half, device="cuda") + half), 0
        tr, va = perms[0][at: at + batch], perms[1][at: at + batch]
        at += batch
        tau = 10 - (10 - 0.1) * step / max(1, steps - 1)
        loss = f.cross_entropy(net(data.augmented(tr), tau), data.labels[tr])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(weights, 5)
        w_opt.step()
        w_opt.zero_grad(set_to_none=True)
        a_opt.zero_grad(set_to_none=True)
        loss = f.cross_entropy(net(data.augmented(va), tau), data.labels[va])
        loss.backward()
        a_opt.step()
        a_opt.zero_grad(set_to_none=True)
        w_opt.zero_grad(set_to_none=True)
        sched.step()
        del tr, va, loss
        if (step + 1) % _smoke(16, 3) == 0:
            with torch.no_grad():
                for a in arch:
                    a.softmax(-1)[:, 1:].topk(2, -1).indices.tolist()  # the genotype, "none" excluded
                correct = []
                for lo in range(half, half + _smoke(1000, 32), _smoke(250, 16)):
                    idx = torch.arange(lo, lo + _smoke(250, 16), device="cuda")
                    correct.append((net(data.plain(idx), 0.1).argmax(-1) == data.labels[idx]).sum())
                float(torch.stack(correct).sum())
                del correct
    torch.cuda.synchronize()


# ---------------------------------------------------------------- federated learning simulation


@_workload("federated learning simulation on one GPU, FedProx (Li et al. 2020) with systems heterogeneity as Flower/FedML simulations run it: McMahan et al.'s CIFAR CNN (two 5x5 convs of 64 channels with max-pools, FC 384 and 192, 10 classes; 1.8M parameters, random init); 50k uint8 CIFAR-10-sized images kept on the device, split over 100 clients of log-normal sizes (20 at least); 16 rounds, each: 10 clients sampled, each given a deep copy of the global model and a fresh SGD optimizer (lr 0.05, momentum 0.9, weight decay 1e-4), 1-3 local epochs (a straggler's draw) over its data in batches of 50 (a fresh permutation an epoch, its last batch partial), cross-entropy plus the proximal term (mu 0.01) to the global weights; the clients' weights summed in proportion to their sizes and averaged into the global model; then 5 other clients evaluating it on their own data (batches of 500, no_grad); every 4 rounds the global model scored on 10k held-out images in chunks of 1000")
def fedavg_sim(rng):
    nn, f = torch.nn, torch.nn.functional
    n_train, n_test, clients = _smoke(50_000, 600), _smoke(10_000, 100), _smoke(100, 10)
    data = _Cifar(n_train + n_test)
    model = nn.Sequential(nn.Conv2d(3, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(3, 2, 1),
                          nn.Conv2d(64, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(3, 2, 1), nn.Flatten(),
                          nn.Linear(64 * 8 * 8, 384), nn.ReLU(), nn.Linear(384, 192), nn.ReLU(),
                          nn.Linear(192, 10)).cuda()
    raw = [rng.lognormvariate(0, 1) for _ in range(clients)]
    sizes = [20 + int((n_train - 20 * clients) * r / sum(raw)) for r in raw]
    perm = torch.randperm(n_train, device="cuda")
    starts = [0]
    for s in sizes:
        starts.append(starts[-1] + s)
    shards = [perm[starts[i]: starts[i + 1]] for i in range(clients)]
    batch, mu = 50, 0.01
    # About 100 tensors a local step (counted on CPU: forward, the proximal term over 10 parameters, backward, SGD)
    # and 20 local steps a client on average: 16 rounds of 10 clients, their copies and the evaluations make about
    # 0.34M tensors, 0.68M events.
    for rnd in range(_smoke(16, 2)):
        agg, total = None, 0
        glob = [p.detach() for p in model.parameters()]
        for c in rng.sample(range(clients), _smoke(10, 3)):
            local = copy.deepcopy(model)
            opt = torch.optim.SGD(local.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
            shard = shards[c]
            for _ in range(rng.randint(1, 3)):
                order = torch.randperm(shard.shape[0], device="cuda")
                for lo in range(0, shard.shape[0], batch):
                    idx = shard[order[lo: lo + batch]]
                    loss = f.cross_entropy(local(data.plain(idx)), data.labels[idx])
                    loss = loss + mu / 2 * sum((w - g).pow(2).sum() for w, g in zip(local.parameters(), glob))
                    loss.backward()
                    opt.step()
                    opt.zero_grad(set_to_none=True)
                    del idx, loss
                del order
            m = shard.shape[0]
            if agg is None:
                agg = [p.detach() * m for p in local.parameters()]
            else:
                torch._foreach_add_(agg, [p.detach() for p in local.parameters()], alpha=m)
            total += m
            del local, opt
        with torch.no_grad():
            for p, a in zip(model.parameters(), agg):
                p.copy_(a / total)
        del agg, glob
        with torch.no_grad():
            correct = []
            for c in rng.sample(range(clients), _smoke(5, 2)):
                for lo in range(0, shards[c].shape[0], 500):
                    idx = shards[c][lo: lo + 500]
                    correct.append((model(data.plain(idx)).argmax(-1) == data.labels[idx]).sum())
            float(torch.stack(correct).sum())
            if (rnd + 1) % _smoke(4, 2) == 0:
                correct = []
                for lo in range(n_train, n_train + n_test, _smoke(1000, 50)):
                    idx = torch.arange(lo, min(lo + _smoke(1000, 50), n_train + n_test), device="cuda")
                    correct.append((model(data.plain(idx)).argmax(-1) == data.labels[idx]).sum())
                float(torch.stack(correct).sum())
            del correct
    torch.cuda.synchronize()

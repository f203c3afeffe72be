"""The workloads of issue 8's fourth batch of eight held-out families (part 1 of 2), moved verbatim from
record.py; how record.py registers them: batch_common.py."""

import math

import torch

from batch_common import Batch
from workload_models import _HifiGenerator
from workload_helpers import (
    _ball_query, _farthest_points, _gather_points, _generate_exactly, llama_config, randint, _square_distance,
)

_b = Batch()  # this module's workloads, and record.py's module object once register() has run
workload = _b.workload
register = _b.register  # what record.py calls


# ------------------------- held out, issue 8's fourth batch of eight families
#
# Eight more families the corpus did not have (speculative decoding, a
# selective state-space LM, long-context training on packed documents,
# point-cloud segmentation, a GAN vocoder, self-supervised multi-crop
# distillation, windowed-attention vision training, high-resolution VAE
# decoding), written as fresh held-out traces to judge the allocator's frozen
# default: none was in view when its rules were chosen, and no allocator
# figure was looked at while writing them.


@workload("speculative decoding: HF assisted generation (greedy, 5 draft tokens to start, HF's heuristic draft-length schedule), a Llama-style 1.1B target (hidden 2048, 16 layers, GQA 32/8 heads, MLP 5632, vocab 32000) and a 2-layer draft of the same width holding copies of the target's embeddings, first two layers, final norm and head, both bf16, batch 1 (as HF's assisted generation requires), 10 requests of prompt 32-2000 and 32-160 new tokens")
def spec_decode(rng):
    from transformers import LlamaConfig, LlamaForCausalLM

    def config(layers):
        return LlamaConfig(
            hidden_size=2048, intermediate_size=5632, num_hidden_layers=layers, num_attention_heads=32,
            num_key_value_heads=8, vocab_size=32000, max_position_embeddings=4096,
        )

    target = LlamaForCausalLM(config(16)).to("cuda", torch.bfloat16).eval()
    with torch.no_grad():
        # A trained draft agrees with its target on most tokens. With random
        # weights each layer writes far more into the residual stream than
        # the embedding holds, so a 2-layer draft would almost never agree:
        # damp what the target's last 14 layers write. Tried on CPU in fp32,
        # tokens gained per verification: 1.5 at 0.1, 2.5-3.2 at 0.04 (about
        # half the drafted tokens accepted, as a good draft gets in real
        # use), 5.6 at 0.03.
        for layer in target.model.layers[2:]:
            layer.self_attn.o_proj.weight.mul_(0.04)
            layer.mlp.down_proj.weight.mul_(0.04)
    draft = LlamaForCausalLM(config(2)).to("cuda", torch.bfloat16).eval()
    draft.load_state_dict(target.state_dict(), strict=False)  # the target's last 14 layers are left out
    gen = draft.generation_config
    gen.num_assistant_tokens, gen.num_assistant_tokens_schedule, gen.assistant_confidence_threshold = 5, "heuristic", 0.0
    with torch.no_grad():
        for _ in range(10):
            p, n = rng.randint(32, 2000), rng.randint(32, 160)
            ids = torch.randint(0, 32000, (1, p), device="cuda")
            _generate_exactly(target, ids, n, assistant_model=draft)
            del ids


@workload("selective state-space LM training: HF MambaForCausalLM (hidden 768, 6 layers, state 16, expand 2, vocab 32000, random init) on PyTorch's own path (no mamba-ssm kernels: the selective scan is a loop over time steps in every layer, forward and backward), 12 steps of batch 1-16 x seq 64-512 capped at 4096 tokens, gradient clipping, AdamW, bf16 autocast")
def mamba_lm(rng):
    from transformers import MambaConfig, MambaForCausalLM

    cfg = MambaConfig(hidden_size=768, num_hidden_layers=6, state_size=16, expand=2, vocab_size=32000)
    model = MambaForCausalLM(cfg).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=6e-4, weight_decay=0.1)
    # About 40 allocation events per time step and layer (20 new tensors,
    # counted on CPU): 12 steps make close to a million.
    for _ in range(12):
        s = randint(rng, 64, 512, 64)
        b = max(1, min(rng.randint(1, 16), 4096 // s))
        ids = torch.randint(0, cfg.vocab_size, (b, s), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, loss


def _pack_documents(rng, rows, length, shortest, longest):
    """Rows of `length` tokens filled with documents of log-uniform lengths
    (the last one of a row cut to fit): the row's position ids, restarting
    at 0 at every document, and the offsets where documents start."""
    positions, starts = [], []
    for r in range(rows):
        row, at = [], 0
        while at < length:
            d = min(length - at, int(math.exp(rng.uniform(math.log(shortest), math.log(longest)))))
            row.extend(range(d))
            starts.append((r, at))
            at += d
        positions.append(row)
    return positions, starts


@workload("long-context training on packed documents: HF LlamaForCausalLM (hidden 1024, 12 layers, GQA 16/4 heads, MLP 2816, vocab 32000, random init, sdpa, activation checkpointing), rows of 4096, 8192 or 16384 tokens (32768 tokens a step) packed with documents of log-uniform lengths 32-16384, position ids restarting at every document (HF's packed-sequence masking, as DataCollatorWithFlattening feeds it), the first label of each document ignored, 24 steps, AdamW, bf16 autocast")
def packed_llama(rng):
    from transformers import LlamaForCausalLM

    cfg = llama_config(12, 4, 16384)
    model = LlamaForCausalLM(cfg).cuda().train()
    model.gradient_checkpointing_enable()
    model.config.use_cache = False
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.1)
    for _ in range(24):
        length = rng.choice([4096, 8192, 16384])
        rows = 32768 // length
        positions, starts = _pack_documents(rng, rows, length, 32, 16384)
        ids = torch.randint(0, cfg.vocab_size, (rows, length), device="cuda")
        pos = torch.tensor(positions, device="cuda")
        labels = ids.clone()
        r, c = zip(*starts)
        labels[torch.tensor(r, device="cuda"), torch.tensor(c, device="cuda")] = -100
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, position_ids=pos, labels=labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, pos, labels, loss


class _SetAbstraction(torch.nn.Module):
    """PointNet++'s set abstraction: sample centres, group a ball of 32
    neighbours around each, a shared MLP (1x1 Conv2d, BatchNorm, ReLU), max-pool."""

    def __init__(self, fraction, radius, cin, widths):
        super().__init__()
        nn = torch.nn
        self.fraction, self.radius = fraction, radius
        layers, c = [], cin + 3
        for w in widths:
            layers += [nn.Conv2d(c, w, 1), nn.BatchNorm2d(w), nn.ReLU()]
            c = w
        self.mlp = nn.Sequential(*layers)

    def forward(self, xyz, feats):
        with torch.no_grad():
            centres = _gather_points(xyz, _farthest_points(xyz, xyz.shape[1] // self.fraction))
            idx = _ball_query(self.radius, 32, xyz, centres)
        grouped = torch.cat([_gather_points(xyz, idx) - centres[:, :, None], _gather_points(feats, idx)], -1)
        h = self.mlp(grouped.permute(0, 3, 2, 1))  # (B, C, k, S)
        return centres, h.max(2)[0].transpose(1, 2)  # (B, S, C)


class _FeaturePropagation(torch.nn.Module):
    """PointNet++'s feature propagation: inverse-distance interpolation from
    the 3 nearest coarse points, concatenated with the skip features, a
    shared MLP (Conv1d, BatchNorm, ReLU)."""

    def __init__(self, cin, widths):
        super().__init__()
        nn = torch.nn
        layers, c = [], cin
        for w in widths:
            layers += [nn.Conv1d(c, w, 1), nn.BatchNorm1d(w), nn.ReLU()]
            c = w
        self.mlp = nn.Sequential(*layers)

    def forward(self, xyz, coarse_xyz, feats, coarse_feats):
        d, idx = _square_distance(xyz, coarse_xyz).topk(3, dim=-1, largest=False)
        w = 1.0 / (d.clamp(min=0) + 1e-8)
        w = w / w.sum(-1, keepdim=True)
        h = (_gather_points(coarse_feats, idx) * w[..., None]).sum(2)
        if feats is not None:
            h = torch.cat([feats, h], -1)
        return self.mlp(h.transpose(1, 2)).transpose(1, 2)


class _PointNet2Seg(torch.nn.Module):
    """PointNet++ (single-scale grouping) for semantic segmentation, S3DIS-style:
    4 set abstractions (1/4, 1/16, 1/64, 1/256 of the points; radius 0.1-0.8),
    4 feature propagations back to every point, 13 classes."""

    def __init__(self, cin=6, classes=13):
        super().__init__()
        nn = torch.nn
        self.sa = nn.ModuleList([
            _SetAbstraction(4, 0.1, cin, (32, 32, 64)), _SetAbstraction(4, 0.2, 64, (64, 64, 128)),
            _SetAbstraction(4, 0.4, 128, (128, 128, 256)), _SetAbstraction(4, 0.8, 256, (256, 256, 512)),
        ])
        self.fp = nn.ModuleList([
            _FeaturePropagation(768, (256, 256)), _FeaturePropagation(384, (256, 256)),
            _FeaturePropagation(320, (256, 128)), _FeaturePropagation(128, (128, 128, 128)),
        ])
        self.head = nn.Sequential(nn.Conv1d(128, 128, 1), nn.BatchNorm1d(128), nn.ReLU(), nn.Dropout(0.5), nn.Conv1d(128, classes, 1))

    def forward(self, xyz, feats):
        levels = [(xyz, feats)]
        for sa in self.sa:
            levels.append(sa(*levels[-1]))
        xyz_c, h = levels.pop()
        for fp in self.fp:
            xyz_f, feats_f = levels.pop()
            h = fp(xyz_f, xyz_c, feats_f if levels else None, h)
            xyz_c = xyz_f
        return self.head(h.transpose(1, 2))  # (B, classes, N)


@workload("point-cloud segmentation training: PointNet++ (single-scale grouping, pure PyTorch as in the popular reimplementation: a farthest-point-sampling loop, ball query by sorting a centre x point index matrix, 3-NN interpolation), 4 set abstractions and 4 feature propagations, xyz + 6 features per point, 13 classes, clouds of 2048-8192 points, batch 4-32 capped by the ball query's size, 30 steps, Adam, fp32")
def pointnet2_seg(rng):
    model = _PointNet2Seg().cuda().train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)
    for _ in range(30):
        n = randint(rng, 2048, 8192, 512)
        b = max(2, min(rng.randint(4, 32), (1 << 28) // (n * n // 4)))
        xyz = torch.rand(b, n, 3, device="cuda")
        feats = torch.rand(b, n, 6, device="cuda")
        y = torch.randint(0, 13, (b, n), device="cuda")
        loss = torch.nn.functional.cross_entropy(model(xyz, feats), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del xyz, feats, y, loss


class _PeriodDisc(torch.nn.Module):
    """HiFi-GAN's multi-period discriminator for one period: the waveform folded to (T/p, p), Conv2d (k, 1)."""

    def __init__(self, period):
        super().__init__()
        nn = torch.nn
        wn = nn.utils.parametrizations.weight_norm
        self.period = period
        chans = (1, 32, 128, 512, 1024)
        self.convs = nn.ModuleList([wn(nn.Conv2d(ci, co, (5, 1), (3, 1), padding=(2, 0))) for ci, co in zip(chans, chans[1:])])
        self.convs.append(wn(nn.Conv2d(1024, 1024, (5, 1), 1, padding=(2, 0))))
        self.post = wn(nn.Conv2d(1024, 1, (3, 1), 1, padding=(1, 0)))

    def forward(self, y):
        f = torch.nn.functional
        b, c, t = y.shape
        if t % self.period:
            y = f.pad(y, (0, self.period - t % self.period), "reflect")
        return _disc_features(self.convs, self.post, y.view(b, c, -1, self.period))


def _disc_features(convs, post, x):
    """A HiFi-GAN discriminator's pass: leaky-ReLU convolutions, then the
    output convolution; the score and every feature map (for the feature
    matching loss)."""
    fmaps = []
    for conv in convs:
        x = torch.nn.functional.leaky_relu(conv(x), 0.1)
        fmaps.append(x)
    x = post(x)
    fmaps.append(x)
    return x.flatten(1), fmaps


class _ScaleDisc(torch.nn.Module):
    """HiFi-GAN's multi-scale discriminator for one scale: grouped strided Conv1d (weight norm for all scales here)."""

    def __init__(self):
        super().__init__()
        nn = torch.nn
        wn = nn.utils.parametrizations.weight_norm
        spec = ((1, 128, 15, 1, 1), (128, 128, 41, 2, 4), (128, 256, 41, 2, 16), (256, 512, 41, 4, 16),
                (512, 1024, 41, 4, 16), (1024, 1024, 41, 1, 16), (1024, 1024, 5, 1, 1))
        self.convs = nn.ModuleList([wn(nn.Conv1d(ci, co, k, s, groups=g, padding=k // 2)) for ci, co, k, s, g in spec])
        self.post = wn(nn.Conv1d(1024, 1, 3, 1, padding=1))

    def forward(self, y):
        return _disc_features(self.convs, self.post, y)


class _HifiDiscs(torch.nn.Module):
    """Periods 2, 3, 5, 7, 11 and scales 1, 1/2, 1/4 (average-pooled): a list of (score, feature maps)."""

    def __init__(self):
        super().__init__()
        self.mpd = torch.nn.ModuleList([_PeriodDisc(p) for p in (2, 3, 5, 7, 11)])
        self.msd = torch.nn.ModuleList([_ScaleDisc() for _ in range(3)])

    def forward(self, y):
        out = [d(y) for d in self.mpd]
        for i, d in enumerate(self.msd):
            if i:
                y = torch.nn.functional.avg_pool1d(y, 4, 2, padding=2)
            out.append(d(y))
        return out


@workload("GAN vocoder training: HiFi-GAN V1 (generator 512 channels, upsampling 8-8-2-2, multi-receptive-field ResBlocks; multi-period and multi-scale discriminators; weight norm), 22 kHz clips of 32-128 mel frames (8192-32768 samples) per step, batch 4-16 capped at 256k samples, log-mel (STFT 1024/256, 80 bands) L1 x45 + feature-matching + least-squares adversarial losses, discriminator then generator step, 40 steps, AdamW (0.8, 0.99), fp32")
def hifigan_gan(rng):
    f = torch.nn.functional
    gen, disc = _HifiGenerator().cuda().train(), _HifiDiscs().cuda().train()
    opt_g = torch.optim.AdamW(gen.parameters(), lr=2e-4, betas=(0.8, 0.99))
    opt_d = torch.optim.AdamW(disc.parameters(), lr=2e-4, betas=(0.8, 0.99))
    window = torch.hann_window(1024, device="cuda")
    # Triangular mel filters (0-8 kHz at 22050 Hz), 80 x 513.
    mel_pts = torch.linspace(0, 2595 * math.log10(1 + 8000 / 700), 82)
    hz = 700 * (10 ** (mel_pts / 2595) - 1)
    bins = torch.linspace(0, 22050 / 2, 513)
    lo, mid, hi = hz[:-2, None], hz[1:-1, None], hz[2:, None]
    fb = torch.clamp(torch.minimum((bins - lo) / (mid - lo), (hi - bins) / (hi - mid)), min=0).cuda()

    def log_mel(y):  # (B, 1, T) -> (B, 80, T / 256)
        y = f.pad(y, (384, 384), mode="reflect").squeeze(1)
        spec = torch.stft(y, 1024, 256, 1024, window, center=False, return_complex=True).abs()
        return torch.log(torch.clamp(fb @ spec, min=1e-5))

    for _ in range(40):
        frames = rng.randint(32, 128)
        b = max(1, min(rng.randint(4, 16), (1 << 18) // (frames * 256)))
        y = torch.randn(b, 1, frames * 256, device="cuda") * 0.3
        mel = log_mel(y)
        fake = gen(mel)
        # Discriminator step.
        loss_d = 0
        for (real_s, _), (fake_s, _) in zip(disc(y), disc(fake.detach())):
            loss_d = loss_d + (1 - real_s).pow(2).mean() + fake_s.pow(2).mean()
        loss_d.backward()
        opt_d.step()
        opt_d.zero_grad(set_to_none=True)
        # Generator step.
        with torch.no_grad():
            real = disc(y)
        loss_g = 45 * f.l1_loss(log_mel(fake), mel)
        for (_, real_f), (fake_s, fake_f) in zip(real, disc(fake)):
            loss_g = loss_g + (1 - fake_s).pow(2).mean()
            loss_g = loss_g + 2 * sum(f.l1_loss(ff, rf) for ff, rf in zip(fake_f, real_f))
        loss_g.backward()
        opt_g.step()
        opt_g.zero_grad(set_to_none=True)
        opt_d.zero_grad(set_to_none=True)
        del y, mel, fake, real, loss_d, loss_g


class _DinoHead(torch.nn.Module):
    """DINO's projection head: MLP 384-2048-2048-256 (GELU), L2-normalized, then a weight-normed 256 -> 65536 layer."""

    def __init__(self, d=384, out=65536):
        super().__init__()
        nn = torch.nn
        self.mlp = nn.Sequential(nn.Linear(d, 2048), nn.GELU(), nn.Linear(2048, 2048), nn.GELU(), nn.Linear(2048, 256))
        self.last = nn.utils.parametrizations.weight_norm(nn.Linear(256, out, bias=False))

    def forward(self, x):
        return self.last(torch.nn.functional.normalize(self.mlp(x), dim=-1))


@workload("self-supervised multi-crop training: DINO with a ViT-S/16 student and an EMA teacher (timm, dynamic image size, random init) and 65536-prototype heads, 2 global crops at 224 px and 4-10 local crops at 96 px per image (each resolution one backbone pass, as DINO's MultiCropWrapper does), batch 32-128, 40 steps, centred and sharpened teacher targets, gradient clipping, AdamW, bf16 autocast")
def dino_multicrop(rng):
    import timm

    f = torch.nn.functional

    def make(drop_path):
        vit = timm.create_model(
            "vit_small_patch16_224", pretrained=False, dynamic_img_size=True, num_classes=0, drop_path_rate=drop_path
        )
        return torch.nn.ModuleDict({"vit": vit, "head": _DinoHead()}).cuda()

    student, teacher = make(0.1).train(), make(0.0).train()
    teacher.load_state_dict(student.state_dict())
    teacher.requires_grad_(False)
    opt = torch.optim.AdamW(student.parameters(), lr=5e-4, weight_decay=0.04)
    center = torch.zeros(1, 65536, device="cuda")

    def run(model, groups):
        feats = torch.cat([model["vit"](torch.cat(g)) for g in groups])
        return model["head"](feats).float()

    for _ in range(40):
        b, local = randint(rng, 32, 128, 8), rng.randint(4, 10)
        globals_ = [torch.randn(b, 3, 224, 224, device="cuda") for _ in range(2)]
        locals_ = [torch.randn(b, 3, 96, 96, device="cuda") for _ in range(local)]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            with torch.no_grad():
                t_out = run(teacher, [globals_])
            s_out = run(student, [globals_, locals_])
        targets = f.softmax((t_out - center) / 0.04, dim=-1).chunk(2)
        preds = [f.log_softmax(s / 0.1, dim=-1) for s in s_out.chunk(2 + local)]
        terms = [-(t * p).sum(-1).mean() for i, t in enumerate(targets) for j, p in enumerate(preds) if i != j]
        loss = sum(terms) / len(terms)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(student.parameters(), 3.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        with torch.no_grad():
            for ps, pt in zip(student.parameters(), teacher.parameters()):
                pt.mul_(0.996).add_((1 - 0.996) * ps.detach())
            center = center * 0.9 + t_out.mean(0, keepdim=True) * 0.1
        del globals_, locals_, t_out, s_out, targets, preds, terms, loss

"""The workloads of issue 8's third batch of eight held-out families, moved verbatim from record.py; how
record.py registers them: batch_common.py."""

import torch

from batch_common import Batch
from workload_helpers import _generate, _posenc, randint

_b = Batch()  # this module's workloads, and record.py's module object once register() has run
workload = _b.workload
register = _b.register  # what record.py calls


# -------------------------- held out, issue 8's third batch of eight families
#
# Eight more families the corpus did not have (CTC speech recognition, BART
# seq2seq, volumetric segmentation, GPT-NeoX with gradient accumulation,
# masked-autoencoder pretraining, mixture-of-experts generation, a neural
# radiance field, PPO reinforcement learning), written as fresh held-out
# traces to judge an allocator policy: none was in view when its rules were
# chosen.


@workload("speech recognition fine-tuning: HF Wav2Vec2ForCTC (base-sized: 12 layers, width 768, vocab 32, random init, conv feature encoder frozen), raw 16 kHz audio of 2-15 s per clip zero-padded to the longest, batch 2-16, CTC loss on random labels of 8-14 per second of audio, AdamW, bf16 autocast")
def wav2vec2_ctc(rng):
    from transformers import Wav2Vec2Config, Wav2Vec2ForCTC

    cfg = Wav2Vec2Config(vocab_size=32, ctc_loss_reduction="mean", ctc_zero_infinity=True)
    model = Wav2Vec2ForCTC(cfg).cuda().train()
    model.freeze_feature_encoder()  # the usual fine-tuning recipe
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    for _ in range(30):
        secs = [rng.uniform(2, 15) for _ in range(rng.randint(2, 16))]
        samples = [int(s * 16000) for s in secs]
        chars = [int(s * rng.uniform(8, 14)) for s in secs]
        audio = torch.zeros(len(secs), max(samples), device="cuda")
        labels = torch.full((len(secs), max(chars)), -100, device="cuda")
        for i, (n, c) in enumerate(zip(samples, chars)):
            audio[i, :n] = torch.randn(n, device="cuda")
            labels[i, :c] = torch.randint(1, cfg.vocab_size, (c,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_values=audio, labels=labels).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del audio, labels, loss


@workload("seq2seq training: HF BartForConditionalGeneration (bart-base-sized: 6+6 layers, d_model 768, 12 heads, FFN 3072, vocab 50265, random init), source 64-1024 and target 16-256 tokens, batch 2-24, AdamW, bf16 autocast")
def bart_train(rng):
    from transformers import BartConfig, BartForConditionalGeneration

    cfg = BartConfig(
        d_model=768, encoder_layers=6, decoder_layers=6, encoder_attention_heads=12, decoder_attention_heads=12,
        encoder_ffn_dim=3072, decoder_ffn_dim=3072, vocab_size=50265, max_position_embeddings=1024,
    )
    model = BartForConditionalGeneration(cfg).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.01)
    for _ in range(30):
        b = rng.randint(2, 24)
        src = torch.randint(4, cfg.vocab_size, (b, randint(rng, 64, 1024, 8)), device="cuda")
        tgt = torch.randint(4, cfg.vocab_size, (b, randint(rng, 16, 256, 8)), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=src, attention_mask=torch.ones_like(src), labels=tgt).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del src, tgt, loss


class _UNet3d(torch.nn.Module):
    """A 3D UNet: 4 levels of two Conv3d-InstanceNorm3d-LeakyReLU layers,
    max-pool down, transposed-conv up, skip connections by concatenation."""

    def __init__(self, ch=(32, 64, 128, 256), cin=1, classes=4):
        super().__init__()
        nn = torch.nn

        def block(ci, co):
            return nn.Sequential(
                nn.Conv3d(ci, co, 3, padding=1, bias=False), nn.InstanceNorm3d(co, affine=True), nn.LeakyReLU(0.01, inplace=True),
                nn.Conv3d(co, co, 3, padding=1, bias=False), nn.InstanceNorm3d(co, affine=True), nn.LeakyReLU(0.01, inplace=True),
            )

        self.enc = nn.ModuleList([block(ci, co) for ci, co in zip((cin,) + ch[:-1], ch)])
        self.up = nn.ModuleList([nn.ConvTranspose3d(ch[i + 1], ch[i], 2, stride=2) for i in reversed(range(len(ch) - 1))])
        self.dec = nn.ModuleList([block(2 * ch[i], ch[i]) for i in reversed(range(len(ch) - 1))])
        self.head = nn.Conv3d(ch[0], classes, 1)

    def forward(self, x):
        skips = []
        for i, blk in enumerate(self.enc):
            if i:
                x = torch.nn.functional.max_pool3d(x, 2)
            x = blk(x)
            skips.append(x)
        skips.pop()
        for up, dec in zip(self.up, self.dec):
            x = dec(torch.cat([up(x), skips.pop()], 1))
        return self.head(x)


@workload("volumetric segmentation training: 3D UNet (4 levels, 32-64-128-256 channels, Conv3d + InstanceNorm3d + LeakyReLU, skip connections), 1-channel volumes of 64-128 voxels per side (each side a multiple of 16), batch 1-4 capped at 6M voxels, 4 classes, Dice + cross-entropy loss, AdamW, bf16 autocast")
def unet3d_seg(rng):
    f = torch.nn.functional
    model = _UNet3d().cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=1e-5)
    for _ in range(30):
        d, h, w = (randint(rng, 64, 128, 16) for _ in range(3))
        b = max(1, min(rng.randint(1, 4), 6_000_000 // (d * h * w)))
        x = torch.randn(b, 1, d, h, w, device="cuda")
        y = torch.randint(0, 4, (b, d, h, w), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x)
        logits = logits.float()
        p = logits.softmax(1)
        onehot = f.one_hot(y, 4).permute(0, 4, 1, 2, 3).float()
        dims = (0, 2, 3, 4)
        dice = 1 - ((2 * (p * onehot).sum(dims) + 1) / (p.sum(dims) + onehot.sum(dims) + 1)).mean()
        loss = f.cross_entropy(logits, y) + dice
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, y, logits, p, onehot, dice, loss


@workload("decoder training with gradient accumulation: HF GPTNeoXForCausalLM (hidden 1024, 12 layers, 16 heads, MLP 4096, vocab 50304, random init, no checkpointing), 20 optimizer steps of 2-4 micro-batches each, micro-batch 1-8 x seq 128-2048 capped at 8192 tokens, gradient clipping, AdamW, bf16 autocast")
def neox_train(rng):
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

    cfg = GPTNeoXConfig(
        hidden_size=1024, num_hidden_layers=12, num_attention_heads=16, intermediate_size=4096, vocab_size=50304,
        max_position_embeddings=2048,
    )
    model = GPTNeoXForCausalLM(cfg).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    for _ in range(20):
        micro = rng.randint(2, 4)
        for _ in range(micro):
            s = randint(rng, 128, 2048, 64)
            b = max(1, min(rng.randint(1, 8), 8192 // s))
            ids = torch.randint(0, cfg.vocab_size, (b, s), device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(input_ids=ids, labels=ids).loss / micro
            loss.backward()
            del ids, loss
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)


@workload("masked-autoencoder pretraining: HF ViTMAEForPreTraining (ViT-B/16 encoder, 8-layer 512-wide decoder, 224 px, normalized-pixel loss, random init), mask ratio drawn 0.5-0.9 per step, batch 16-128, AdamW, bf16 autocast")
def vit_mae(rng):
    from transformers import ViTMAEConfig, ViTMAEForPreTraining

    cfg = ViTMAEConfig(image_size=224, norm_pix_loss=True)
    model = ViTMAEForPreTraining(cfg).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1.5e-4, betas=(0.9, 0.95), weight_decay=0.05)
    for _ in range(30):
        b = rng.randint(16, 128)
        # The embeddings read the ratio from the shared config at every call.
        model.config.mask_ratio = round(rng.uniform(0.5, 0.9), 2)
        x = torch.randn(b, 3, 224, 224, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(pixel_values=x).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, loss


@workload("mixture-of-experts generation: HF generate, Mixtral-style (hidden 768, 8 layers, 12 heads, GQA 4 KV heads, 8 experts of MLP 2048, top-2, vocab 32000, HF's default experts implementation) bf16, greedy, 8 requests of batch 1-32, prompt 32-1500, 16-64 new tokens")
def mixtral_gen(rng):
    from transformers import MixtralConfig, MixtralForCausalLM

    cfg = MixtralConfig(
        hidden_size=768, num_hidden_layers=8, num_attention_heads=12, num_key_value_heads=4, intermediate_size=2048,
        num_local_experts=8, num_experts_per_tok=2, vocab_size=32000, max_position_embeddings=4096,
    )
    model = MixtralForCausalLM(cfg).to("cuda", torch.bfloat16)
    _generate(model, cfg.vocab_size, rng, 8, [1, 2, 4, 8, 16, 32], (32, 1500), (16, 64))


class _NeRF(torch.nn.Module):
    """The original NeRF MLP: 8 layers of 256 over encoded points (10
    frequencies), the input concatenated again after the fifth, density
    out, then a 128-wide layer over features and encoded view directions (4
    frequencies) for colour."""

    def __init__(self, w=256, pos=10, view=4):
        super().__init__()
        nn = torch.nn
        self.pos, self.view = pos, view
        pin, vin = 3 + 6 * pos, 3 + 6 * view
        self.pts = nn.ModuleList([nn.Linear(pin, w)] + [nn.Linear(w + (pin if i == 5 else 0), w) for i in range(1, 8)])
        self.sigma, self.feat = nn.Linear(w, 1), nn.Linear(w, w)
        self.dirs, self.rgb = nn.Linear(w + vin, w // 2), nn.Linear(w // 2, 3)

    def forward(self, x, d):
        f = torch.nn.functional
        ex = _posenc(x, self.pos)
        h = ex
        for i, layer in enumerate(self.pts):
            if i == 5:
                h = torch.cat([ex, h], -1)
            h = f.relu(layer(h))
        sigma = f.relu(self.sigma(h)).squeeze(-1)
        h = f.relu(self.dirs(torch.cat([self.feat(h), _posenc(d, self.view)], -1)))
        return torch.sigmoid(self.rgb(h)), sigma


@workload("neural radiance field training: NeRF MLP (8 layers of 256, positional encoding of points and view directions, skip at layer 4, random rays), 1024-8192 rays x 64-192 stratified samples per ray capped at 1M points, volume rendering (cumprod transmittance), MSE loss, Adam, fp32")
def nerf_mlp(rng):
    model = _NeRF().cuda().train()
    opt = torch.optim.Adam(model.parameters(), lr=5e-4)
    near, far = 2.0, 6.0
    for _ in range(60):
        s = randint(rng, 64, 192, 16)
        r = min(randint(rng, 1024, 8192, 256), (1 << 20) // s)
        origins = torch.randn(r, 3, device="cuda")
        dirs = torch.nn.functional.normalize(torch.randn(r, 3, device="cuda"), dim=-1)
        target = torch.rand(r, 3, device="cuda")
        t = torch.linspace(near, far, s + 1, device="cuda")[:-1] + torch.rand(r, s, device="cuda") * ((far - near) / s)
        pts = origins[:, None] + dirs[:, None] * t[..., None]
        rgb, sigma = model(pts.reshape(-1, 3), dirs[:, None].expand(r, s, 3).reshape(-1, 3))
        rgb, sigma = rgb.view(r, s, 3), sigma.view(r, s)
        delta = torch.cat([t[:, 1:] - t[:, :-1], torch.full((r, 1), 1e10, device="cuda")], -1)
        alpha = 1 - torch.exp(-sigma * delta)
        trans = torch.cumprod(torch.cat([torch.ones(r, 1, device="cuda"), 1 - alpha + 1e-10], -1), -1)[:, :-1]
        color = ((alpha * trans)[..., None] * rgb).sum(1)
        loss = torch.nn.functional.mse_loss(color, target)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del origins, dirs, target, t, pts, rgb, sigma, delta, alpha, trans, color, loss


class _AtariNet(torch.nn.Module):
    """The Nature-DQN encoder over 4 stacked 84x84 uint8 frames, then an MLP head."""

    def __init__(self, out):
        super().__init__()
        nn = torch.nn
        self.enc = nn.Sequential(
            nn.Conv2d(4, 32, 8, stride=4), nn.ReLU(), nn.Conv2d(32, 64, 4, stride=2), nn.ReLU(),
            nn.Conv2d(64, 64, 3, stride=1), nn.ReLU(), nn.Flatten(), nn.Linear(3136, 512), nn.ReLU(),
        )
        self.head = nn.Sequential(nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, out))

    def forward(self, obs):
        return self.head(self.enc(obs.float() / 255))


@workload("reinforcement learning: PPO on random 84x84x4 uint8 frames, a policy (Nature-DQN CNN + MLP head, 18 actions) and a separate value net, 8 iterations of a 128-512 step x 8-64 environment rollout (no_grad, kept in GPU buffers), GAE, then 4 epochs of shuffled minibatches of 256-2048 (at most 32 per epoch) with the clipped loss, gradient clipping, Adam, fp32")
def ppo_rl(rng):
    from torch.distributions import Categorical

    policy, value = _AtariNet(18).cuda(), _AtariNet(1).cuda()
    params = [*policy.parameters(), *value.parameters()]
    opt = torch.optim.Adam(params, lr=2.5e-4, eps=1e-5)
    gamma, lam, clip = 0.99, 0.95, 0.1
    for _ in range(8):
        steps, envs = randint(rng, 128, 512, 32), rng.choice([8, 16, 32, 64])
        n = steps * envs
        mb = max(rng.choice([256, 512, 1024, 2048]), n // 32)
        obs_buf = torch.empty(steps, envs, 4, 84, 84, dtype=torch.uint8, device="cuda")
        act_buf = torch.empty(steps, envs, dtype=torch.long, device="cuda")
        logp_buf, val_buf, rew_buf, done_buf = (torch.empty(steps, envs, device="cuda") for _ in range(4))
        with torch.no_grad():
            obs = torch.randint(0, 256, (envs, 4, 84, 84), dtype=torch.uint8, device="cuda")
            for t in range(steps):
                obs_buf[t] = obs
                dist = Categorical(logits=policy(obs))
                a = dist.sample()
                act_buf[t], logp_buf[t] = a, dist.log_prob(a)
                val_buf[t] = value(obs).squeeze(-1)
                # The environments' step: rewards, episode ends, next frames.
                rew_buf[t] = torch.randn(envs, device="cuda")
                done_buf[t] = (torch.rand(envs, device="cuda") < 0.01).float()
                obs = torch.randint(0, 256, (envs, 4, 84, 84), dtype=torch.uint8, device="cuda")
                del dist, a
            nxt = value(obs).squeeze(-1)
            adv = torch.zeros_like(rew_buf)
            gae = torch.zeros(envs, device="cuda")
            for t in reversed(range(steps)):
                live = 1 - done_buf[t]
                gae = rew_buf[t] + gamma * nxt * live - val_buf[t] + gamma * lam * live * gae
                adv[t] = gae
                nxt = val_buf[t]
            ret = adv + val_buf
            del obs, nxt, gae
        b_obs, b_act, b_logp = obs_buf.flatten(0, 1), act_buf.flatten(), logp_buf.flatten()
        b_adv, b_ret = adv.flatten(), ret.flatten()
        for _ in range(4):
            perm = torch.randperm(n, device="cuda")
            for i in range(0, n, mb):
                idx = perm[i : i + mb]
                dist = Categorical(logits=policy(b_obs[idx]))
                ratio = (dist.log_prob(b_act[idx]) - b_logp[idx]).exp()
                a = b_adv[idx]
                a = (a - a.mean()) / (a.std() + 1e-8)
                pg = -torch.min(ratio * a, ratio.clamp(1 - clip, 1 + clip) * a).mean()
                v = value(b_obs[idx]).squeeze(-1)
                loss = pg + 0.5 * (v - b_ret[idx]).pow(2).mean() - 0.01 * dist.entropy().mean()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, 0.5)
                opt.step()
                opt.zero_grad(set_to_none=True)
                del idx, dist, ratio, a, pg, v, loss
            del perm
        del obs_buf, act_buf, logp_buf, val_buf, rew_buf, done_buf, adv, ret, b_obs, b_act, b_logp, b_adv, b_ret

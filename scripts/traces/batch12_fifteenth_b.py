"""The workloads of the fifteenth batch (held out; part 2 of 2), moved verbatim from record.py; how record.py
registers them: batch_common.py."""

import math

import torch

from batch_common import Batch
from workload_helpers import _loguniform, _sincos

_b = Batch()  # this module's workloads, and record.py's module object once register() has run
workload = _b.workload
_smoke = _b.smoke
register = _b.register  # what record.py calls


class _Cnn14(torch.nn.Module):
    """PANNs' CNN14 audio encoder: batch-norm over the mel bands, six blocks of two 3x3 conv-BN-ReLU (64 to
    2048 channels) with 2x2 average pooling and dropout 0.2 between, mean over frequency, max plus mean over
    time, a 2048-wide linear embedding."""

    def __init__(self, mels=64, width=64):
        super().__init__()
        nn = torch.nn
        self.bn0 = nn.BatchNorm2d(mels)
        chans = [1] + [width * 2**i for i in range(6)]
        self.blocks = nn.ModuleList()
        for ci, co in zip(chans, chans[1:]):
            self.blocks.append(nn.Sequential(nn.Conv2d(ci, co, 3, padding=1, bias=False), nn.BatchNorm2d(co), nn.ReLU(),
                                             nn.Conv2d(co, co, 3, padding=1, bias=False), nn.BatchNorm2d(co), nn.ReLU()))
        self.fc = nn.Linear(chans[-1], chans[-1])

    def forward(self, logmel):  # (B, frames, mels)
        f = torch.nn.functional
        x = self.bn0(logmel.transpose(1, 2)[..., None]).squeeze(-1).transpose(1, 2)[:, None]
        for i, blk in enumerate(self.blocks):
            x = blk(x)
            x = f.dropout(f.avg_pool2d(x, 2 if i < 5 else 1), 0.2, self.training)
        x = x.mean(3)
        x = x.max(2)[0] + x.mean(2)
        return f.relu(self.fc(f.dropout(x, 0.5, self.training)))


def _mel_filters(n_fft, mels, sr, device):
    """Slaney-style triangular mel filters, (n_fft // 2 + 1, mels)."""
    hz = torch.linspace(0, sr / 2, n_fft // 2 + 1, device=device)
    mel = lambda v: 2595 * torch.log10(1 + v / 700)  # noqa: E731
    pts = 700 * (10 ** (torch.linspace(0, float(mel(torch.tensor(sr / 2.0))), mels + 2, device=device) / 2595) - 1)
    lo, mid, hi = pts[:-2], pts[1:-1], pts[2:]
    up, down = (hz[:, None] - lo) / (mid - lo), (hi - hz[:, None]) / (hi - mid)
    return torch.clamp(torch.minimum(up, down), min=0)


@workload("contrastive audio-text pretraining, LAION-CLAP-style (two CUDA streams): a PANNs CNN14 audio encoder (6 conv blocks, 64-2048 channels, random init) on 64-band log-mel spectrograms and a RoBERTa-base text encoder (HF RobertaModel, 12 layers, width 768, random init), each projected by a 2-layer MLP to 512, a symmetric InfoNCE loss with a learnable temperature; batches of 96 AudioCaps/Clotho-like pairs: clips of 1-30 s at 32 kHz (half of them 10 s long), those over 10 s randomly cropped to 10 s, the batch zero-padded to its longest clip, captions of 6-77 tokens padded to the longest; the next batch's int16 waveforms copied from pinned memory and turned into log-mel spectrograms (STFT 1024/320, Hann) on a side stream while the current batch trains; 200 steps, AdamW with cosine decay, bf16 autocast")
def clap_contrastive(rng):
    from transformers import RobertaConfig, RobertaModel

    f = torch.nn.functional
    audio = _Cnn14(width=_smoke(64, 8)).cuda().train()
    tcfg = RobertaConfig(vocab_size=_smoke(50265, 1000), hidden_size=_smoke(768, 64), num_attention_heads=_smoke(12, 4),
                         intermediate_size=_smoke(3072, 128), max_position_embeddings=514)
    text = RobertaModel(tcfg, add_pooling_layer=False).cuda().train()
    da, dt = audio.fc.out_features, tcfg.hidden_size
    proj_a = torch.nn.Sequential(torch.nn.Linear(da, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512)).cuda()
    proj_t = torch.nn.Sequential(torch.nn.Linear(dt, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512)).cuda()
    logit_scale = torch.nn.Parameter(torch.tensor(math.log(1 / 0.07), device="cuda"))
    params = [*audio.parameters(), *text.parameters(), *proj_a.parameters(), *proj_t.parameters(), logit_scale]
    steps = _smoke(200, 3)
    opt = torch.optim.AdamW(params, lr=1e-4, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    sr, batch = 32000, _smoke(96, 4)
    clip_max = _smoke(10 * sr, sr)
    window = torch.hann_window(1024).to("cuda")
    fb = _mel_filters(1024, 64, sr, "cuda")
    side, main = torch.cuda.Stream(), torch.cuda.current_stream()

    def load():
        lengths = [clip_max if rng.random() < 0.5 else min(clip_max, _loguniform(rng, sr // _smoke(1, 2), 3 * clip_max))
                   for _ in range(batch)]
        n = max(lengths)
        wav = torch.zeros(batch, n, dtype=torch.int16)
        for i, length in enumerate(lengths):
            wav[i, :length] = torch.randint(-8000, 8000, (length,), dtype=torch.int16)
        caps = [rng.randint(6, 77) for _ in range(batch)]
        s = max(caps)
        ids = torch.tensor([[0] + [rng.randrange(3, tcfg.vocab_size) for _ in range(c - 2)] + [2] + [1] * (s - c)
                            for c in caps])
        mask = (ids != 1).long()
        wav, ids, mask = wav.pin_memory(), ids.pin_memory(), mask.pin_memory()
        with torch.cuda.stream(side):
            side.wait_stream(main)
            x = wav.to("cuda", non_blocking=True).float() / 32768
            spec = torch.stft(x, 1024, 320, window=window, return_complex=True).abs() ** 2
            logmel = torch.log10(torch.clamp(spec.transpose(1, 2) @ fb, min=1e-10)) * 10
            ids, mask = ids.to("cuda", non_blocking=True), mask.to("cuda", non_blocking=True)
            ready = side.record_event()
            del x, spec
        return logmel, ids, mask, ready

    # About 2.7k tensors a step (counted on CPU): 200 steps make about 1.1M events.
    nxt = load()
    for step in range(steps):
        logmel, ids, mask, ready = nxt
        main.wait_event(ready)
        for t in (logmel, ids, mask):
            t.record_stream(main)
        if step + 1 < steps:
            nxt = load()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            a = f.normalize(proj_a(audio(logmel)).float(), dim=-1)
            t = f.normalize(proj_t(text(input_ids=ids, attention_mask=mask).last_hidden_state[:, 0]).float(), dim=-1)
        logits = logit_scale.clamp(max=math.log(100)).exp() * a @ t.T
        labels = torch.arange(logits.shape[0], device="cuda")
        loss = (f.cross_entropy(logits, labels) + f.cross_entropy(logits.T, labels)) / 2
        loss.backward()
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        del logmel, ids, mask, a, t, logits, labels, loss
    torch.cuda.synchronize()


class _DreamerWm(torch.nn.Module):
    """A DreamerV3-style world model: a conv encoder (4 stride-2 convs, 64-512 channels, channel LayerNorm, SiLU)
    of 64x64 frames, an RSSM (a LayerNorm GRU of 1024, 32 categorical latents of 32 classes with 1% unimix,
    straight-through samples), a transposed-conv decoder, reward (255-bin two-hot over symlog) and continue
    heads; and the actor (18 discrete actions) and critic (255-bin two-hot) MLPs of 512."""

    def __init__(self, actions=18, deter=1024, units=512, depth=64, stoch=32, classes=32):
        super().__init__()
        nn = torch.nn
        self.stoch, self.classes, self.deter = stoch, classes, deter
        enc, c = [], 3
        for i in range(4):
            enc += [nn.Conv2d(c, depth * 2**i, 4, 2, 1), nn.GroupNorm(1, depth * 2**i), nn.SiLU()]
            c = depth * 2**i
        self.enc = nn.Sequential(*enc, nn.Flatten())
        embed, sc, feat = c * 16, stoch * classes, stoch * classes + deter
        self.img_in, self.img_in_n = nn.Linear(sc + actions, units), nn.LayerNorm(units)
        self.gru, self.gru_n = nn.Linear(units + deter, 3 * deter), nn.LayerNorm(3 * deter)
        self.img_out, self.img_out_n, self.img_logits = nn.Linear(deter, units), nn.LayerNorm(units), nn.Linear(units, sc)
        self.obs_out, self.obs_out_n, self.obs_logits = nn.Linear(deter + embed, units), nn.LayerNorm(units), nn.Linear(units, sc)
        self.dec_in = nn.Linear(feat, c * 16)
        dec = []
        for i in range(3, 0, -1):
            dec += [nn.ConvTranspose2d(depth * 2**i, depth * 2 ** (i - 1), 4, 2, 1), nn.GroupNorm(1, depth * 2 ** (i - 1)), nn.SiLU()]
        self.dec = nn.Sequential(nn.Unflatten(1, (c, 4, 4)), *dec, nn.ConvTranspose2d(depth, 3, 4, 2, 1))

        def mlp(out, layers=2):
            mods, d = [], feat
            for _ in range(layers):
                mods += [nn.Linear(d, units), nn.LayerNorm(units), nn.SiLU()]
                d = units
            return nn.Sequential(*mods, nn.Linear(units, out))

        self.reward, self.cont = mlp(255), mlp(1)
        self.actor, self.critic = mlp(actions, 3), mlp(255, 3)

    def sample(self, logits):
        probs = logits.float().view(*logits.shape[:-1], self.stoch, self.classes).softmax(-1) * 0.99 + 0.01 / self.classes
        idx = torch.multinomial(probs.reshape(-1, self.classes), 1).view(probs.shape[:-1])
        hard = torch.nn.functional.one_hot(idx, self.classes).to(probs.dtype)
        return (hard + probs - probs.detach()).flatten(-2)

    def img_step(self, stoch, deter, action):
        f = torch.nn.functional
        x = f.silu(self.img_in_n(self.img_in(torch.cat([stoch, action], -1))))
        reset, cand, update = self.gru_n(self.gru(torch.cat([x, deter], -1))).chunk(3, -1)
        reset, update = torch.sigmoid(reset), torch.sigmoid(update - 1)
        deter = update * torch.tanh(reset * cand) + (1 - update) * deter
        return deter, self.img_logits(f.silu(self.img_out_n(self.img_out(deter))))

    def obs_step(self, deter, embed):
        return self.obs_logits(torch.nn.functional.silu(self.obs_out_n(self.obs_out(torch.cat([deter, embed], -1)))))


def _symlog(x):
    return torch.sign(x) * torch.log1p(x.abs())


def _twohot(y, bins):
    y = _symlog(y).clamp(float(bins[0]), float(bins[-1]))
    hi = torch.bucketize(y, bins).clamp(1, len(bins) - 1)
    lo = hi - 1
    w = ((y - bins[lo]) / (bins[hi] - bins[lo]))[..., None]
    t = torch.zeros(*y.shape, len(bins), device=y.device)
    return t.scatter_(-1, lo[..., None], 1 - w).scatter_add_(-1, hi[..., None], w)


def _twohot_mean(logits, bins):
    x = (logits.float().softmax(-1) * bins).sum(-1)
    return torch.sign(x) * (torch.exp(x.abs()) - 1)


def _kl_cat(p_logits, q_logits, stoch, classes):
    p = p_logits.float().view(*p_logits.shape[:-1], stoch, classes).log_softmax(-1)
    q = q_logits.float().view(*q_logits.shape[:-1], stoch, classes).log_softmax(-1)
    return (p.exp() * (p - q)).sum((-1, -2))


@workload("model-based RL training, DreamerV3-style world model and imagined actor-critic (random init): _DreamerWm (conv encoder and decoder of 64x64 frames, RSSM with a 1024-wide LayerNorm GRU and 32x32 categorical latents, two-hot symlog reward and critic heads, 18 actions); each step 4 policy steps of 16 environments (uint8 frames copied in, an observe step and an actor sample, actions copied back), then a replay batch of 16 sequences of 64 frames (uint8 from pinned memory, episode starts resetting the state) observed step by step, the reconstruction, reward, continue and KL (free bits 1, dynamics 0.5, representation 0.1) losses, then 15-step imagined rollouts from all 1024 posterior states under no_grad, lambda-returns (0.95) of the slow critic, returns normalized by their 5-95% percentile range, a REINFORCE actor loss with an entropy bonus and a two-hot critic loss, three AdamW optimizers with clipping, the slow critic an EMA; 60 steps, bf16 autocast")
def dreamer_train(rng):
    f = torch.nn.functional
    acts = 18
    wm = _DreamerWm(acts, deter=_smoke(1024, 64), units=_smoke(512, 32), depth=_smoke(64, 8), stoch=_smoke(32, 4),
                    classes=_smoke(32, 4)).cuda().train()
    import copy

    slow = copy.deepcopy(wm.critic).requires_grad_(False)
    actor_p, critic_p = list(wm.actor.parameters()), list(wm.critic.parameters())
    model_p = [p for n, p in wm.named_parameters() if not n.startswith(("actor.", "critic."))]
    opt_m = torch.optim.AdamW(model_p, lr=1e-4, eps=1e-8)
    opt_a, opt_c = torch.optim.AdamW(actor_p, lr=3e-5, eps=1e-5), torch.optim.AdamW(critic_p, lr=3e-5, eps=1e-5)
    bins = torch.linspace(-20, 20, 255, device="cuda")
    B, T, H, envs = _smoke(16, 2), 64, 15, _smoke(16, 2)
    S, C, D = wm.stoch, wm.classes, wm.deter
    env = {"deter": torch.zeros(envs, D, device="cuda"), "stoch": torch.zeros(envs, S * C, device="cuda"),
           "act": torch.zeros(envs, acts, device="cuda")}

    def frames(*shape):
        return torch.randint(0, 256, (*shape, 3, 64, 64), dtype=torch.uint8).pin_memory()

    # About 11.5k tensors a step with T=64 and H=15 (counted on CPU): 60 steps
    # make about 1.4M events.
    for _ in range(_smoke(60, 2)):
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            for _ in range(4):
                obs = frames(envs).to("cuda", non_blocking=True).float() / 255 - 0.5
                deter, _ = wm.img_step(env["stoch"], env["deter"], env["act"])
                stoch = wm.sample(wm.obs_step(deter, wm.enc(obs)))
                logits = wm.actor(torch.cat([stoch, deter], -1)).float()
                act = f.one_hot(torch.multinomial(logits.softmax(-1), 1).squeeze(-1), acts).float()
                env.update(deter=deter.float(), stoch=stoch.float(), act=act)
                act.argmax(-1).cpu()
                del obs, deter, stoch, logits, act
        obs = frames(B, T).to("cuda", non_blocking=True).float() / 255 - 0.5
        action = f.one_hot(torch.randint(0, acts, (B, T), device="cuda"), acts).float()
        reward = torch.randn(B, T, device="cuda").relu()
        cont = (torch.rand(B, T, device="cuda") > 0.01).float()
        first = torch.zeros(B, T, device="cuda")
        first[:, 0] = 1
        with torch.autocast("cuda", dtype=torch.bfloat16):
            embed = wm.enc(obs.flatten(0, 1)).view(B, T, -1)
            deter = torch.zeros(B, D, device="cuda")
            stoch = torch.zeros(B, S * C, device="cuda")
            prev = torch.zeros(B, acts, device="cuda")
            posts, priors, deters, stochs = [], [], [], []
            for t in range(T):
                keep = 1 - first[:, t, None]
                deter, prior = wm.img_step(stoch * keep, deter * keep, prev * keep)
                post = wm.obs_step(deter, embed[:, t])
                stoch = wm.sample(post)
                prev = action[:, t]
                posts.append(post)
                priors.append(prior)
                deters.append(deter)
                stochs.append(stoch)
            post, prior = torch.stack(posts, 1), torch.stack(priors, 1)
            feat = torch.cat([torch.stack(stochs, 1), torch.stack(deters, 1).float()], -1)
            recon = wm.dec(wm.dec_in(feat.flatten(0, 1))).float().view_as(obs)
            rew_logits, cont_logits = wm.reward(feat).float(), wm.cont(feat).float().squeeze(-1)
        loss_img = ((recon - obs) ** 2).sum((2, 3, 4)).mean()
        loss_rew = -(_twohot(reward, bins) * rew_logits.log_softmax(-1)).sum(-1).mean()
        loss_cont = f.binary_cross_entropy_with_logits(cont_logits, cont)
        dyn = _kl_cat(post.detach(), prior, S, C).clamp(min=1).mean()
        rep = _kl_cat(post, prior.detach(), S, C).clamp(min=1).mean()
        loss = loss_img + loss_rew + loss_cont + 0.5 * dyn + 0.1 * rep
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model_p, 1000)
        opt_m.step()
        opt_m.zero_grad(set_to_none=True)
        del obs, embed, posts, priors, deters, stochs, post, prior, recon, rew_logits, cont_logits, loss_img, loss_rew
        del loss_cont, dyn, rep, loss, keep, prev
        # Imagination from every posterior state.
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            start = feat.detach().flatten(0, 1)
            stoch, deter = start[:, : S * C].float(), start[:, S * C:].float()
            feats, actions = [start.float()], []
            for _ in range(H):
                logits = wm.actor(feats[-1]).float()
                a = f.one_hot(torch.multinomial(logits.softmax(-1), 1).squeeze(-1), acts).float()
                deter, prior = wm.img_step(stoch, deter, a)
                stoch = wm.sample(prior)
                feats.append(torch.cat([stoch, deter.float()], -1))
                actions.append(a)
                del logits, prior
            feats, actions = torch.stack(feats), torch.stack(actions)
            rew = _twohot_mean(wm.reward(feats[1:]), bins)
            disc = 0.997 * torch.sigmoid(wm.cont(feats[1:]).float().squeeze(-1))
            value = _twohot_mean(slow(feats), bins)
            rets = [value[-1]]
            for h in range(H - 1, -1, -1):
                rets.append(rew[h] + disc[h] * (0.05 * value[h + 1] + 0.95 * rets[-1]))
            ret = torch.stack(rets[::-1][:-1])
            lo, hi = torch.quantile(ret.flatten()[:_smoke(16384, 4096)], torch.tensor([0.05, 0.95], device="cuda"))
            scale = torch.clamp(hi - lo, min=1.0)
            weight = torch.cumprod(torch.cat([torch.ones_like(disc[:1]), disc[:-1]]), 0)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = wm.actor(feats[:-1]).float().log_softmax(-1)
            adv = (ret - value[:-1]) / scale
            ent = -(logits.exp() * logits).sum(-1)
            loss_a = -(weight * ((logits * actions).sum(-1) * adv + 3e-4 * ent)).mean()
            crit = wm.critic(feats[:-1]).float().log_softmax(-1)
            loss_c = -(weight * ((_twohot(ret, bins) * crit).sum(-1) + (_twohot(value[:-1], bins) * crit).sum(-1))).mean()
        (loss_a + loss_c).backward()
        torch.nn.utils.clip_grad_norm_(actor_p, 100)
        torch.nn.utils.clip_grad_norm_(critic_p, 100)
        opt_a.step()
        opt_c.step()
        opt_a.zero_grad(set_to_none=True)
        opt_c.zero_grad(set_to_none=True)
        opt_m.zero_grad(set_to_none=True)
        with torch.no_grad():
            for ps, pc in zip(slow.parameters(), critic_p):
                ps.lerp_(pc, 0.02)
        del feat, start, stoch, deter, feats, actions, rew, disc, value, rets, ret, lo, hi, scale, weight
        del logits, adv, ent, loss_a, crit, loss_c, action, reward, cont, first


class _Ocr(torch.nn.Module):
    """A text-line recognizer in the MASTER/SATRN mould: a VGG-style CNN (64-512 channels) taking 48 px high
    grayscale lines to a sequence of W/4 columns, 3 post-norm transformer encoder layers and 6 decoder layers
    of width 512 (8 heads, FFN 2048) with sinusoidal positions, a linear head over the charset."""

    def __init__(self, vocab, d=512, heads=8, enc=3, dec=6):
        super().__init__()
        nn = torch.nn

        def cbr(ci, co, k=3, p=1):
            return [nn.Conv2d(ci, co, k, padding=p, bias=False), nn.BatchNorm2d(co), nn.ReLU()]

        w = d // 8
        self.cnn = nn.Sequential(*cbr(1, w), nn.MaxPool2d(2), *cbr(w, 2 * w), nn.MaxPool2d(2), *cbr(2 * w, 4 * w),
                                 *cbr(4 * w, 4 * w), nn.MaxPool2d((2, 1)), *cbr(4 * w, d), *cbr(d, d), nn.MaxPool2d((2, 1)),
                                 *cbr(d, d, (3, 1), 0))
        self.register_buffer("pos", _sincos(torch.arange(1024), d), persistent=False)
        self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, heads, 4 * d, 0.1, batch_first=True), enc)
        self.emb = nn.Embedding(vocab, d)
        self.dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(d, heads, 4 * d, 0.1, batch_first=True), dec)
        self.head = nn.Linear(d, vocab)

    def encode(self, img, pad):
        x = self.cnn(img).squeeze(2).transpose(1, 2)
        return self.enc(x + self.pos[: x.shape[1]], src_key_padding_mask=pad)

    def decode(self, mem, pad, tgt):
        n = tgt.shape[1]
        causal = torch.triu(torch.full((n, n), float("-inf"), device=tgt.device), 1)
        y = self.dec(self.emb(tgt) + self.pos[:n], mem, tgt_mask=causal, memory_key_padding_mask=pad, tgt_is_causal=True)
        return self.head(y)


@workload("text-line OCR training with a data-prefetch stream (two CUDA streams): _Ocr (VGG-style CNN to W/4 columns, 3+6 transformer layers of width 512, charset 6625 (a Chinese-plus-Latin set), random init); lines of 2-100 characters (log-uniform) rendered 48 px high and 20-36 px a character wide (at most 2048, multiple of 8), 16-128 lines a batch capped at 96k pixel columns, padded to the widest with a key padding mask; the next batch's uint8 images and target ids copied from pinned memory and normalized on a side stream while the current batch trains; teacher-forced cross-entropy with label smoothing 0.1, 300 steps, gradient clipping, AdamW with one-cycle, bf16 autocast; every 60 steps a greedy decoding evaluation of 32 lines (the decoder rerun over the whole prefix for every character, no cache) under no_grad")
def ocr_train(rng):
    f = torch.nn.functional
    vocab, bos, eos, pad_id = _smoke(6625, 200), 1, 2, 0
    model = _Ocr(vocab, d=_smoke(512, 64), heads=_smoke(8, 4)).cuda().train()
    steps = _smoke(300, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.05)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, 3e-4, total_steps=steps)
    side, main = torch.cuda.Stream(), torch.cuda.current_stream()
    cap, max_len = _smoke(96 * 1024, 4096), _smoke(100, 40)

    def lines(b):
        chars = [_loguniform(rng, 2, max_len) for _ in range(b)]
        widths = [max(48, min(2048, int(c * rng.uniform(20, 36)))) // 8 * 8 for c in chars]
        while len(widths) > 4 and len(widths) * max(widths) > cap:
            i = rng.randrange(len(widths))
            chars.pop(i)
            widths.pop(i)
        wmax, lmax = max(widths), max(chars) + 2
        img = torch.full((len(widths), 1, 48, wmax), 255, dtype=torch.uint8)
        ids = torch.full((len(widths), lmax), pad_id, dtype=torch.long)
        for i, (c, w) in enumerate(zip(chars, widths)):
            img[i, 0, :, :w] = torch.randint(0, 256, (48, w), dtype=torch.uint8)
            ids[i, : c + 2] = torch.tensor([bos] + [rng.randrange(3, vocab) for _ in range(c)] + [eos])
        cols = torch.tensor(widths) // 4
        img, ids, cols = img.pin_memory(), ids.pin_memory(), cols.pin_memory()
        with torch.cuda.stream(side):
            side.wait_stream(main)
            x = (img.to("cuda", non_blocking=True).float() / 255 - 0.5) / 0.5
            ids = ids.to("cuda", non_blocking=True)
            pad = torch.arange(wmax // 4, device="cuda")[None] >= cols.to("cuda", non_blocking=True)[:, None]
            ready = side.record_event()
        return x, ids, pad, ready

    # About 1.2k tensors a step and 370 a decoded character (counted on CPU):
    # about 1.1M events.
    nxt = lines(rng.randint(_smoke(16, 4), _smoke(128, 8)))
    for step in range(steps):
        x, ids, pad, ready = nxt
        main.wait_event(ready)
        for t in (x, ids, pad):
            t.record_stream(main)
        if step + 1 < steps:
            nxt = lines(rng.randint(_smoke(16, 4), _smoke(128, 8)))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model.decode(model.encode(x, pad), pad, ids[:, :-1])
        loss = f.cross_entropy(logits.float().flatten(0, 1), ids[:, 1:].flatten(), ignore_index=pad_id, label_smoothing=0.1)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        del x, ids, pad, logits, loss
        if (step + 1) % _smoke(60, 2) == 0:
            model.eval()
            x, ids, pad, ready = lines(32)
            main.wait_event(ready)
            for t in (x, ids, pad):
                t.record_stream(main)
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                mem = model.encode(x, pad)
                out = torch.full((x.shape[0], 1), bos, device="cuda")
                for _ in range(ids.shape[1] - 1):
                    nxt_id = model.decode(mem, pad, out)[:, -1].argmax(-1)
                    out = torch.cat([out, nxt_id[:, None]], 1)
                out.cpu()
                del x, ids, pad, mem, out, nxt_id
            model.train()
    torch.cuda.synchronize()

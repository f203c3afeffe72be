"""The workloads of the fifteenth batch (held out; part 1 of 2), moved verbatim from record.py; how record.py
registers them: batch_common.py."""

import math

import torch

from batch_common import Batch
from workload_models import _FastSpeech2, _HifiGenerator, _UNet
from workload_helpers import _loguniform, _padded_ids, randint

_b = Batch()  # this module's workloads, and record.py's module object once register() has run
workload = _b.workload
_smoke = _b.smoke
register = _b.register  # what record.py calls


# ------------------------------------------------- fifteenth batch (held out)


@workload("abstractive summarization fine-tuning, HF Seq2SeqTrainer-style: PegasusForConditionalGeneration (pegasus-base-sized: 12+12 layers, d_model 768, 12 heads, FFN 3072, vocab 96103, sinusoidal positions, random init), articles of 128-1024 tokens (log-uniform) and summaries of 16-256, 2-24 articles a micro-batch capped at 12k source tokens, dynamic padding to the batch's longest (multiple of 8) as DataCollatorForSeq2Seq does, labels -100 on padding and the decoder inputs shifted right from them; cross-entropy with label smoothing 0.1 over the fp32 logits, 2 micro-batches a step (gradient accumulation), linear warmup and decay, gradient clipping, AdamW, bf16 autocast; every 40 steps a predict_with_generate evaluation of a batch of 16 articles (beam search of 4, 32-128 new tokens) under no_grad; 80 steps")
def pegasus_summarize(rng):
    from transformers import PegasusConfig, PegasusForConditionalGeneration

    f = torch.nn.functional
    cfg = PegasusConfig(vocab_size=_smoke(96103, 2000), d_model=_smoke(768, 64), encoder_layers=12, decoder_layers=12,
                        encoder_attention_heads=_smoke(12, 4), decoder_attention_heads=_smoke(12, 4),
                        encoder_ffn_dim=_smoke(3072, 128), decoder_ffn_dim=_smoke(3072, 128), max_position_embeddings=1024,
                        pad_token_id=0, eos_token_id=1, decoder_start_token_id=0, forced_eos_token_id=None)
    model = PegasusForConditionalGeneration(cfg).cuda()
    steps, warmup = _smoke(80, 3), _smoke(8, 1)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / (steps - warmup))))
    src_max, tgt_max, cap = _smoke(1024, 96), _smoke(256, 32), _smoke(12288, 512)

    def batch(b):
        src = sorted((_loguniform(rng, _smoke(128, 16), src_max) for _ in range(b)), reverse=True)
        while len(src) > 2 and len(src) * (-(-src[0] // 8) * 8) > cap:
            src.pop(rng.randrange(len(src)))
        ids, mask = _padded_ids(cfg.vocab_size, src, mult=8)
        labels, lmask = _padded_ids(cfg.vocab_size, [_loguniform(rng, 16, tgt_max) for _ in src], mult=8)
        return ids, mask, labels.masked_fill(lmask == 0, -100)

    # About 4.2k tensors a micro-batch with 12 + 12 layers (counted on CPU) and
    # some 600 a generated token (4 beams): about 1.5M events in all.
    for step in range(steps):
        model.train()
        for _ in range(2):
            ids, mask, labels = batch(rng.randint(2, 24))
            dec_in = torch.cat([labels.new_zeros(labels.shape[0], 1), labels[:, :-1]], 1).clamp(min=0)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(input_ids=ids, attention_mask=mask, decoder_input_ids=dec_in).logits
            loss = f.cross_entropy(logits.float().flatten(0, 1), labels.flatten(), ignore_index=-100, label_smoothing=0.1) / 2
            loss.backward()
            del ids, mask, labels, dec_in, logits, loss
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        if (step + 1) % _smoke(40, 2) == 0:
            model.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                ids, mask, _ = batch(16)
                n = rng.randint(*_smoke((32, 128), (4, 8)))
                out = model.generate(ids, attention_mask=mask, num_beams=4, max_new_tokens=n, min_new_tokens=n)
                out.cpu()
                del ids, mask, out


@workload("knowledge-graph embedding training, DGL-KE-style RotatE on one GPU: 2.5M entities (complex embeddings of 2 x 200) and 1300 relations (200 phases), sparse embedding gradients (nn.Embedding(sparse=True)) and sparse Adagrad; batches of 1024 positive triples with entities drawn from a Zipf-like (power-law) degree distribution, chunked negative sampling (chunks of 256 positives share 256 negatives drawn uniformly, heads and tails corrupted on alternate steps), RotatE's self-adversarial negative weighting (temperature 1) with margin 12, N3 regularization; 3000 steps, and every 1000 steps a link-prediction evaluation of 64 test triples ranked against every entity (tail corruption, scored in chunks of 16384 entities, ranks summed on the device)")
def kge_rotate(rng):
    f = torch.nn.functional
    n_ent, n_rel, dim = _smoke(2_500_000, 20_000), _smoke(1300, 60), _smoke(200, 16)
    gamma, eps = 12.0, 2.0
    bound = (gamma + eps) / dim
    ent = torch.nn.Embedding(n_ent, 2 * dim, sparse=True).cuda()
    rel = torch.nn.Embedding(n_rel, dim, sparse=True).cuda()
    with torch.no_grad():
        ent.weight.uniform_(-bound, bound)
        rel.weight.uniform_(-bound, bound)
    opt = torch.optim.Adagrad(list(ent.parameters()) + list(rel.parameters()), lr=0.1)
    batch, chunk, neg = _smoke(1024, 64), _smoke(256, 16), _smoke(256, 16)

    def rotate(e, phase, conj=False):
        re, im = e.chunk(2, -1)
        c, s = torch.cos(phase / (bound / math.pi)), torch.sin(phase / (bound / math.pi))
        if conj:
            s = -s
        return re * c - im * s, re * s + im * c

    def dist(a_re, a_im, b):
        b_re, b_im = b.chunk(2, -1)
        return torch.stack([a_re - b_re, a_im - b_im]).norm(dim=0).sum(-1)

    def entities(n):
        # A power law of degrees: low ids are the hubs.
        return (torch.rand(n, device="cuda") ** 3 * n_ent).long()

    # About 190 tensors a step (counted on CPU) and some 8 a chunk of 16384
    # entities in an evaluation: about 1.15M events.
    steps = _smoke(3000, 6)
    for step in range(steps):
        h, t = entities(batch), entities(batch)
        r = torch.randint(0, n_rel, (batch,), device="cuda")
        negs = torch.randint(0, n_ent, (batch // chunk, neg), device="cuda")
        he, te, rp, ne = ent(h), ent(t), rel(r), ent(negs)
        pos = f.logsigmoid(gamma - dist(*rotate(he, rp), te))
        if step % 2:  # corrupt tails: (h r) against the chunk's negatives
            a_re, a_im = rotate(he, rp)
        else:  # corrupt heads: (t r^-1) against them
            a_re, a_im = rotate(te, rp, conj=True)
        a_re, a_im = a_re.view(-1, chunk, 1, dim), a_im.view(-1, chunk, 1, dim)
        nd = dist(a_re, a_im, ne[:, None])  # (chunks, chunk, neg)
        nscore = gamma - nd
        w = f.softmax(nscore.detach(), -1)
        negl = (w * f.logsigmoid(-nscore)).sum(-1).flatten()
        reg = 1e-7 * (he.abs() ** 3 + te.abs() ** 3).sum() + 1e-7 * (ne.abs() ** 3).sum()
        loss = -(pos.mean() + negl.mean()) / 2 + reg
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del h, t, r, negs, he, te, rp, ne, pos, a_re, a_im, nd, nscore, w, negl, reg, loss
        if (step + 1) % _smoke(1000, 3) == 0:
            with torch.no_grad():
                th, tt = entities(64), entities(64)
                tr = torch.randint(0, n_rel, (64,), device="cuda")
                a_re, a_im = rotate(ent(th), rel(tr))
                true = gamma - dist(a_re, a_im, ent(tt))
                rank = torch.ones(64, device="cuda", dtype=torch.long)
                step_e = _smoke(16384, 4096)
                for lo in range(0, n_ent, step_e):
                    cand = ent.weight[lo: lo + step_e]
                    s = gamma - dist(a_re[:, None], a_im[:, None], cand[None])
                    rank += (s > true[:, None]).sum(1)
                    del cand, s
                mrr = (1.0 / rank.float()).mean().item()
                del th, tt, tr, a_re, a_im, true, rank, mrr


class _ControlNet(torch.nn.Module):
    """ControlNet: a trainable copy of a _UNet's time embedding, input convolution, down path and middle, a
    hint encoder (eight 3x3 convolutions, three of stride 2, from the 8x-resolution condition image to the
    latent grid) added after the input convolution, and a zero-initialized 1x1 convolution per skip and for
    the middle, whose outputs are added to the frozen UNet's."""

    def __init__(self, unet):
        super().__init__()
        import copy

        nn = torch.nn
        self.tdim = unet.tdim
        self.temb, self.inp = copy.deepcopy(unet.temb), copy.deepcopy(unet.inp)
        self.down, self.mid = copy.deepcopy(unet.down), copy.deepcopy(unet.mid)
        c0 = unet.inp.out_channels
        hint = []
        for ci, co, s in ((3, 16, 1), (16, 16, 1), (16, 32, 2), (32, 32, 1), (32, 96, 2), (96, 96, 1), (96, 256, 2)):
            hint += [nn.Conv2d(ci, co, 3, s, 1), nn.SiLU()]
        self.hint = nn.Sequential(*hint, nn.Conv2d(256, c0, 3, padding=1))
        self.zero = nn.ModuleList([nn.Conv2d(r[1].c2.out_channels, r[1].c2.out_channels, 1) for r in self.down])
        self.zero_mid = nn.Conv2d(self.mid[2].c2.out_channels, self.mid[2].c2.out_channels, 1)
        for z in [*self.zero, self.zero_mid, self.hint[-1]]:
            nn.init.zeros_(z.weight)
            nn.init.zeros_(z.bias)

    def forward(self, x, temb_in, cond):
        temb = self.temb(temb_in)
        h = self.inp(x) + self.hint(cond)
        out = []
        for i, (r1, r2) in enumerate(self.down):
            h = r2(r1(h, temb), temb)
            out.append(self.zero[i](h))
            if i < len(self.down) - 1:
                h = torch.nn.functional.avg_pool2d(h, 2)
        h = self.mid[2](self.mid[1](self.mid[0](h, temb)), temb)
        return out, self.zero_mid(h)


def _unet_controlled(unet, x, t, control):
    """_UNet.forward with a ControlNet's residuals added to the skips and the middle's output."""
    half = unet.tdim // 2
    freqs = torch.exp(-torch.arange(half, device=x.device) * (9.21 / half))
    e = t[:, None].float() * freqs[None]
    emb = torch.cat([e.sin(), e.cos()], dim=1)
    res, res_mid = control(x, emb, control.cond)
    temb = unet.temb(emb)
    h = unet.inp(x)
    skips = []
    for i, (r1, r2) in enumerate(unet.down):
        h = r2(r1(h, temb), temb)
        skips.append(h + res[i])
        if i < len(unet.down) - 1:
            h = torch.nn.functional.avg_pool2d(h, 2)
    h = unet.mid[2](unet.mid[1](unet.mid[0](h, temb)), temb) + res_mid
    for r1, r2 in unet.up:
        s = skips.pop()
        if h.shape[-1] != s.shape[-1] or h.shape[-2] != s.shape[-2]:
            h = torch.nn.functional.interpolate(h, size=s.shape[-2:], mode="nearest")
        h = r2(r1(torch.cat([h, s], 1), temb), temb)
    return unet.out(h)


@workload("ControlNet training on a frozen latent diffusion UNet (random init): a _UNet (128-256-512 channels, two ResBlocks a level, attention in the middle) on 4-channel latents kept frozen in bf16, and a ControlNet (a trainable copy of its encoder and middle, a hint encoder from the 8x-resolution edge map, zero convolutions into the UNet's skips and middle) trained with AdamW; cached latents in multi-aspect buckets of 32-96 per side (256-768 px, multiple of 8), batch 4-32 capped at 16 latents of 64 x 64, uint8 edge maps at 8x copied and scaled on the device, the condition dropped (zeroed) 5% of the time, DDPM noise (linear betas, 1000 steps) and the epsilon MSE loss, 300 steps, bf16 autocast; every 100 steps a validation of 2 edge maps sampled with 20 DDIM steps")
def controlnet_train(rng):
    f = torch.nn.functional
    unet = _UNet(ch=_smoke((128, 256, 512), (32, 64, 64)))
    unet.inp = torch.nn.Conv2d(4, unet.inp.out_channels, 3, padding=1)
    unet.out[-1] = torch.nn.Conv2d(unet.out[-1].in_channels, 4, 3, padding=1)
    control = _ControlNet(unet).cuda().train()
    unet = unet.to("cuda", torch.bfloat16).eval().requires_grad_(False)
    opt = torch.optim.AdamW(control.parameters(), lr=1e-5)
    betas = torch.linspace(1e-4, 0.02, 1000, device="cuda")
    abar = torch.cumprod(1 - betas, 0)
    lo, hi, cap = _smoke(32, 8), _smoke(96, 24), _smoke(16 * 64 * 64, 4 * 16 * 16)

    def bucket():
        h, w = randint(rng, lo, hi, 8), randint(rng, lo, hi, 8)
        return h, w, max(1, min(rng.randint(4, 32), cap // (h * w)))

    def edges(b, h, w):
        host = (torch.rand(b, 3, 8 * h, 8 * w) < 0.1).to(torch.uint8).mul_(255).pin_memory()
        return host.to("cuda", non_blocking=True).float() / 255

    # About 1.8k tensors a step and 330 a sampling step (counted on CPU): about
    # 1.15M events.
    for step in range(_smoke(300, 3)):
        h, w, b = bucket()
        x0 = torch.randn(b, 4, h, w, device="cuda") * 0.18215
        cond = edges(b, h, w)
        cond = cond * (torch.rand(b, 1, 1, 1, device="cuda") > 0.05)
        t = torch.randint(0, 1000, (b,), device="cuda")
        noise = torch.randn_like(x0)
        a = abar[t][:, None, None, None]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            control.cond = cond
            pred = _unet_controlled(unet, a.sqrt() * x0 + (1 - a).sqrt() * noise, t, control)
            loss = f.mse_loss(pred.float(), noise)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x0, cond, t, noise, a, pred, loss
        control.cond = None
        if (step + 1) % _smoke(100, 2) == 0:
            control.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                h, w, _ = bucket()
                control.cond = edges(2, h, w)
                x = torch.randn(2, 4, h, w, device="cuda")
                ts = list(range(999, -1, -50))
                for i, tt in enumerate(ts):
                    eps = _unet_controlled(unet, x, torch.full((2,), tt, device="cuda"), control).float()
                    ap = abar[ts[i + 1]] if i + 1 < len(ts) else torch.ones((), device="cuda")
                    x0 = (x - (1 - abar[tt]).sqrt() * eps) / abar[tt].sqrt()
                    x = ap.sqrt() * x0 + (1 - ap).sqrt() * eps
                    del eps, x0
                x.cpu()
                del x
            control.cond = None
            control.train()


@workload("text-to-speech serving, two-stage and pipelined on two CUDA streams: a FastSpeech2 acoustic model (the fastspeech2_train model: 4+6 FFT blocks of width 256, variance predictors, length regulator, PostNet) and a HiFi-GAN V1 vocoder (512 channels, upsampling 8-8-2-2, weight norm removed for inference), random weights, fp16 under inference_mode; 600 requests of 1-16 sentences (log-uniform) of 8-200 phonemes, each request's phonemes copied from pinned memory, durations, pitch and energy predicted (durations rounded from exp of the log-duration, at least 1 frame) and the mel spectrogram made on the acoustic stream, handed by an event to the vocoder stream, where the waveforms of the whole batch (mel padded to its longest, 256 samples a frame) are made, cut to each sentence's length, converted to int16 and copied back to pinned memory, while the acoustic stream starts on the next request; finished requests polled by event query")
def tts_serve(rng):
    from torch.nn.utils import parametrize

    acoustic = _FastSpeech2(d=_smoke(256, 64))
    # The duration predictor's bias set so that phonemes last about 6 frames, as a trained one predicts.
    torch.nn.init.constant_(acoustic.dur.lin.bias, math.log(7))
    acoustic = acoustic.to("cuda", torch.float16).eval()
    vocoder = _HifiGenerator(ch=_smoke(512, 32))
    for m in vocoder.modules():
        if parametrize.is_parametrized(m, "weight"):
            parametrize.remove_parametrizations(m, "weight")
    vocoder = vocoder.to("cuda", torch.float16).eval()
    am_stream, voc_stream = torch.cuda.Stream(), torch.cuda.Stream()
    am_stream.wait_stream(torch.cuda.current_stream())
    voc_stream.wait_stream(torch.cuda.current_stream())
    pending = []

    def synthesize(phones, pad):
        m = acoustic
        x = m.emb(phones) + m.pos[: phones.shape[1]]
        for blk in m.enc:
            x = blk(x, pad)
        dur = torch.clamp(torch.round(torch.exp(m.dur(x, pad).float()) - 1), min=1).long().masked_fill(pad, 0)
        p, e = m.pitch(x, pad), m.energy(x, pad)
        x = x + m.pitch_emb(torch.bucketize(p, m.bins)) + m.energy_emb(torch.bucketize(e, m.bins))
        lengths = dur.sum(1)
        frames = torch.nn.utils.rnn.pad_sequence([xi.repeat_interleave(di, 0) for xi, di in zip(x, dur)], batch_first=True)
        frames = frames[:, : _smoke(2000, 200)]
        lengths = lengths.clamp(max=frames.shape[1])
        mel_pad = torch.arange(frames.shape[1], device=x.device)[None] >= lengths[:, None]
        y = frames + m.pos[: frames.shape[1]]
        for blk in m.dec:
            y = blk(y, mel_pad)
        mel = m.mel(y)
        return mel + m.postnet(mel.transpose(1, 2)).transpose(1, 2), lengths

    # About 600 tensors a request (counted on CPU): 600 requests make about 0.7M events.
    with torch.inference_mode():
        for _ in range(_smoke(600, 6)):
            while pending and pending[0][0].query():
                pending.pop(0)
            if len(pending) >= 3:
                pending.pop(0)[0].synchronize()
            counts = [_loguniform(rng, 8, _smoke(200, 40)) for _ in range(_loguniform(rng, 1, 16))]
            n = max(counts)
            host = torch.zeros(len(counts), n, dtype=torch.int32)
            for i, c in enumerate(counts):
                host[i, :c] = torch.randint(1, 360, (c,), dtype=torch.int32)
            host = host.pin_memory()
            with torch.cuda.stream(am_stream):
                phones = host.to("cuda", non_blocking=True).long()
                mel, lengths = synthesize(phones, phones == 0)
                ready = am_stream.record_event()
                del phones
            with torch.cuda.stream(voc_stream):
                voc_stream.wait_event(ready)
                mel.record_stream(voc_stream)
                lengths.record_stream(voc_stream)
                wav = vocoder(mel.transpose(1, 2)).squeeze(1)
                keep = torch.arange(wav.shape[1], device="cuda")[None] < (lengths * 256)[:, None]
                pcm = (wav.float().clamp(-1, 1) * 32767).to(torch.int16) * keep
                out = torch.empty(pcm.shape, dtype=torch.int16).pin_memory()
                out.copy_(pcm, non_blocking=True)
                pending.append((voc_stream.record_event(), out))
                del mel, lengths, wav, keep, pcm
        torch.cuda.synchronize()


@workload("video action-recognition serving (inference, two CUDA streams): torchvision's Video Swin-T (swin3d_t: patches of 2x4x4, windows of 8x7x7, depths 2-2-6-2, widths 96-768, 400 classes; random weights) in fp16 under inference_mode; 480 videos of 2-60 s (log-uniform) at 30 fps in 240p-720p of 4:3, 16:9 or 9:16; per video Kinetics-style multi-view testing: 1-10 temporal clips (one per 6 s) of 16 frames at stride 2 and 3 spatial crops of 224 px, the clips' uint8 frames of the next video copied from pinned memory, converted, resized to a short side of 224 and normalized on a side stream while the current video's views run in batches of at most 12, the softmaxed views averaged and the top-5 copied back")
def video_action_serve(rng):
    import torchvision

    f = torch.nn.functional
    model = torchvision.models.video.swin3d_t().to("cuda", torch.float16).eval()
    side, main = torch.cuda.Stream(), torch.cuda.current_stream()
    mean = torch.tensor([0.43216, 0.394666, 0.37645], device="cuda")[:, None, None, None]
    std = torch.tensor([0.22803, 0.22145, 0.216989], device="cuda")[:, None, None, None]
    short, frames = _smoke(224, 32), 16
    # Decoded frames land in a pinned host buffer (random bytes drawn once: drawing them per video is slow).
    top = _smoke(720, 48)
    pool = torch.randint(0, 256, (10 * frames * top * (top * 16 // 9) * 3,), dtype=torch.uint8).pin_memory()

    def load():
        seconds = _loguniform(rng, 2, 60)
        clips = max(1, min(10, seconds // 6))
        h = rng.choice(_smoke((240, 360, 480, 720), (40, 48)))
        w = {0: h * 4 // 3, 1: h * 16 // 9, 2: h * 9 // 16}[rng.randrange(3)] // 2 * 2
        host = pool[: clips * frames * h * w * 3].view(clips * frames, h, w, 3)  # the decoder's output, pinned
        with torch.cuda.stream(side):
            side.wait_stream(main)
            x = host.to("cuda", non_blocking=True).permute(3, 0, 1, 2).float() / 255  # (3, T, H, W)
            scale = short / min(h, w)
            x = f.interpolate(x, size=(max(short, round(h * scale)), max(short, round(w * scale))), mode="bilinear",
                              align_corners=False)
            x = ((x - mean) / std).half()
            ready = side.record_event()
        return x, clips, ready

    # About 450 tensors a forward (counted on CPU) and 1.3 forwards a video on
    # average: 480 videos make about 0.6M events.
    with torch.inference_mode():
        nxt = load()
        for v in range(_smoke(480, 3)):
            x, clips, ready = nxt
            main.wait_event(ready)
            x.record_stream(main)
            if v + 1 < _smoke(480, 3):
                nxt = load()
            _, _, hh, ww = x.shape
            views = []
            for c in range(clips):
                clip = x[:, c * frames:(c + 1) * frames]
                for k in range(3):  # left/top, centre, right/bottom crops
                    if hh > ww:
                        oy, ox = (hh - short) * k // 2, (ww - short) // 2
                    else:
                        oy, ox = (hh - short) // 2, (ww - short) * k // 2
                    views.append(clip[:, :, oy:oy + short, ox:ox + short])
            probs = []
            for i in range(0, len(views), 12):
                batch = torch.stack(views[i:i + 12])
                probs.append(model(batch).float().softmax(-1))
                del batch
            p = torch.cat(probs).mean(0)
            top = p.topk(5).indices.cpu()
            del x, views, probs, p, top
        torch.cuda.synchronize()

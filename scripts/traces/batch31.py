"""The thirty-first batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch30_b.py are): CRNN-CTC text-line OCR serving with variable line widths and lines uploaded on a side
stream, Onsets-and-Frames piano transcription training on variable clip lengths, pointer-generator (copy
attention) semantic parsing training with a hand-unrolled GRU decoder, and BigBird-style block-sparse attention
training on long documents of varying length. Same conventions: models built from configs (hand-written torch
here) with random weights, nothing downloaded, `rng` the workload's random.Random for every shape, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value.
crnn_ocr_serve uploads every request's pixels from reused pinned host buffers on a side stream (the compute
stream waiting on the request's event, the uploaded tensor record_stream'ed); the other three are
single-stream. copynet_semparse_train runs in fp32 and stays under 1 GB requested; the other three run under
bf16 autocast.

record.py calls `register(<its own module object>)` once, just before main(), after batch30_b's: every workload
below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it reaches
record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording, where time allowed (record_new31.sh's header says which workloads): a
workload run whole, at its real sizes (RECORD_SMOKE unset), on PyTorch's meta device (a runner like
/tmp/b28/meta_run.py, not committed: smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered
with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking its math path; boolean-mask indexing,
which the meta device cannot size, is avoided) and its op outputs counted there (events about 1.8x that
count; nn.LSTM and nn.GRU run decomposed per time step there, so their counts overstate the GPU's); the counts,
peaks and estimates are in record_new31.sh's header. All eight passed the CPU smoke run.
"""

import math

import torch

from batch_common import Batch, upload

_b = Batch()  # this batch's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- CRNN-CTC text-line OCR serving


@_workload("text-line OCR serving with a CRNN (Shi et al. 2016) and greedy CTC decoding, written by hand: requests of 8-48 text lines (drawn) cropped by an upstream detector, each line grayscale at a height of 24-64 px and 2-24 times as wide (drawn per line), packed as one flat uint8 buffer into one of two reused pinned host buffers and uploaded on a side stream (the compute stream waiting on the request's event, the tensor record_stream'ed); on the device every line cut out of the flat buffer, normalized and resized to a height of 32 keeping its aspect ratio (bilinear interpolate), lines sorted by width on the host and packed into width buckets (padded to a multiple of 16 px, at most 48k pixels a bucket) written into zeroed batches by slice copies; a VGG-style conv stack (64-512 channels, BatchNorm, 2x2 and 2x1 max-pools) to a height-1 feature sequence of width/4 steps, a two-layer bidirectional LSTM of 256, a linear layer to 97 classes; bf16 autocast, eval mode, no grad; greedy CTC decoding on the device (argmax, repeats collapsed against the shifted path, blanks dropped by weights, per-line confidence as the mean max log-probability over its unpadded steps) and the label paths and confidences read back per bucket; 500 requests")
def crnn_ocr_serve(rng):
    nn, f = torch.nn, torch.nn.functional
    chans = [_smoke(64, 4), _smoke(128, 8), _smoke(256, 8), _smoke(256, 8), _smoke(512, 16), _smoke(512, 16)]
    pools = [(2, 2), (2, 2), None, (2, 1), None, (2, 1)]
    layers, cin = [], 1
    for c, p in zip(chans, pools):
        layers += [nn.Conv2d(cin, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU()]
        if p is not None:
            layers.append(nn.MaxPool2d(p, p))
        cin = c
    layers += [nn.Conv2d(cin, cin, (2, 1)), nn.BatchNorm2d(cin), nn.ReLU()]  # height 2 -> 1
    cnn = nn.Sequential(*layers)
    hid, ncls = _smoke(256, 8), 97
    rnn = nn.LSTM(cin, hid, num_layers=2, bidirectional=True, batch_first=True)
    head = nn.Linear(2 * hid, ncls)
    model = nn.ModuleList([cnn, rnn, head]).cuda().eval()
    lmax, hmax, amax = _smoke(48, 4), _smoke(64, 16), 24
    cap = lmax * hmax * hmax * amax // 3  # flat bytes a request may hold
    hosts = [torch.randint(0, 256, (cap,), dtype=torch.uint8).pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    nreq = _smoke(500, 3)
    bucket_px = _smoke(48 * 1024, 4096)

    def draw():
        n = rng.randint(_smoke(8, 2), lmax)
        shapes, used = [], 0
        for _ in range(n):
            h = rng.randint(_smoke(24, 8), hmax)
            w = h * rng.randint(2, amax) if _smoke(1, 0) else h * rng.randint(2, 4)
            if used + h * w > cap:
                break
            shapes.append((h, w))
            used += h * w
        return shapes, used

    def stage(k, shapes, used):
        hosts[k][: min(used, 4096)].random_(0, 256)  # the decoder writes the new pixels (the rest reused)
        with torch.cuda.stream(side):
            x = upload(hosts[k][:used])
            ev = side.record_event()
        return x, ev, shapes

    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        nxt = stage(0, *draw())
        for req in range(nreq):
            flat, ev, shapes = nxt
            torch.cuda.current_stream().wait_event(ev)
            flat.record_stream(torch.cuda.current_stream())
            if req + 1 < nreq:
                nxt = stage((req + 1) % 2, *draw())
            lines, widths, off = [], [], 0
            for h, w in shapes:
                img = flat[off:off + h * w].view(1, 1, h, w).float() / 127.5 - 1
                off += h * w
                nw = max(16, round(w * 32 / h))
                lines.append(f.interpolate(img, size=(32, nw), mode="bilinear", align_corners=False))
                widths.append(nw)
            order = sorted(range(len(lines)), key=lambda i: widths[i])
            buckets, cur = [], []
            for i in order:
                wpad = (widths[i] + 15) // 16 * 16
                if cur and (len(cur) + 1) * wpad > bucket_px // 32:
                    buckets.append(cur)
                    cur = []
                cur.append(i)
            buckets.append(cur)
            for bk in buckets:
                wpad = (max(widths[i] for i in bk) + 15) // 16 * 16
                x = torch.zeros(len(bk), 1, 32, wpad, device="cuda")
                for j, i in enumerate(bk):
                    x[j, :, :, : widths[i]].copy_(lines[i][0])
                feat = cnn(x).squeeze(2).transpose(1, 2)  # (B, W/4, C)
                seq, _ = rnn(feat)
                logp = torch.log_softmax(head(seq).float(), -1)
                steps = torch.tensor([widths[i] // 4 for i in bk], device="cuda")
                valid = (torch.arange(logp.shape[1], device="cuda")[None] < steps[:, None]).float()
                best, path = logp.max(-1)
                prev = torch.cat([torch.full_like(path[:, :1], -1), path[:, :-1]], 1)
                keep = (path != prev).float() * (path != 0).float() * valid
                conf = (best * valid).sum(1) / valid.sum(1)
                torch.where(keep > 0, path, torch.full_like(path, -1)).tolist()
                conf.tolist()
                del x, feat, seq, logp, steps, valid, best, path, prev, keep, conf
            del flat, lines
    torch.cuda.synchronize()


# ---------------------------------------------------------------- Onsets and Frames piano transcription


class _OfStack(torch.nn.Module):
    """Onsets and Frames' acoustic model: three 3x3 conv layers with BatchNorm (two max-pools over frequency),
    then a fully connected layer over the flattened channels x frequency."""

    def __init__(self, nmel, c, fc):
        super().__init__()
        nn = torch.nn
        self.convs = nn.Sequential(
            nn.Conv2d(1, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU(),
            nn.Conv2d(c, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU(), nn.MaxPool2d((1, 2)), nn.Dropout(0.25),
            nn.Conv2d(c, 2 * c, 3, padding=1), nn.BatchNorm2d(2 * c), nn.ReLU(), nn.MaxPool2d((1, 2)),
            nn.Dropout(0.25))
        self.fc = nn.Linear(2 * c * (nmel // 4), fc)

    def forward(self, mel):  # (B, T, F)
        h = self.convs(mel[:, None])  # (B, C, T, F/4)
        return torch.nn.functional.dropout(self.fc(h.transpose(1, 2).flatten(2)), 0.5, self.training)


@_workload("piano transcription training, Onsets and Frames (Hawthorne et al. 2018) written by hand and reduced: MAESTRO-style clips of 2-16 s of 16 kHz audio (drawn per step) in batches set by a 40 s audio budget (2-16 clips), the log-mel spectrogram computed on the device (Hann-windowed STFT of 2048 with hop 512, a 229-band mel matrix, log of the clamped power), pitch-shift augmentation by rolling mel bands by up to 2 (drawn); four heads (onset, offset, frame, velocity), each with its own acoustic stack (three 3x3 convs with BatchNorm, two max-pools over frequency, a fully connected layer), the onset, offset and frame heads with a bidirectional LSTM of 128, the frame head's LSTM fed the frame stack concatenated with the detached onset and offset predictions, 88 sigmoid outputs a frame; piano-roll targets generated on the device at 31.25 frames a second, BCE on onsets, offsets and frames, velocity MSE weighted by the onset targets; bf16 autocast, Adam at 6e-4 with step decay, gradient clipping at 3, 330 steps, the loss read back every 10 steps; every 110 steps an evaluation (no grad) of 2 full 20 s clips with frame and note F1 counts read back")
def onsets_frames_train(rng):
    nn, f = torch.nn, torch.nn.functional
    sr, nfft, hop, nmel, keys = 16000, _smoke(2048, 256), _smoke(512, 128), _smoke(229, 16), 88
    c, fc, hid = _smoke(48, 4), _smoke(768, 16), _smoke(128, 8)
    stacks = nn.ModuleList(_OfStack(nmel, c, fc) for _ in range(4))  # onset, offset, frame, velocity
    on_rnn = nn.LSTM(fc, hid, batch_first=True, bidirectional=True)
    off_rnn = nn.LSTM(fc, hid, batch_first=True, bidirectional=True)
    on_fc, off_fc = nn.Linear(2 * hid, keys), nn.Linear(2 * hid, keys)
    fr_pre = nn.Linear(fc, keys)
    fr_rnn = nn.LSTM(3 * keys, hid, batch_first=True, bidirectional=True)
    fr_fc, vel_fc = nn.Linear(2 * hid, keys), nn.Linear(fc, keys)
    model = nn.ModuleList([stacks, on_rnn, off_rnn, on_fc, off_fc, fr_pre, fr_rnn, fr_fc, vel_fc]).cuda()
    window = torch.hann_window(nfft).cuda()
    melmat = torch.rand(nfft // 2 + 1, nmel, device="cuda") * 0.01
    steps = _smoke(330, 3)
    opt = torch.optim.Adam(model.parameters(), lr=6e-4)
    sched = torch.optim.lr_scheduler.StepLR(opt, max(1, steps // 3), 0.5)
    budget = _smoke(40 * sr, 3 * sr)

    def logmel(audio):
        spec = torch.stft(audio, nfft, hop, nfft, window, center=True, return_complex=True)
        power = spec.real ** 2 + spec.imag ** 2  # (B, F, T)
        return torch.log(torch.clamp(power.transpose(1, 2) @ melmat, min=1e-5))  # (B, T, nmel)

    def forward(mel):
        on = on_fc(on_rnn(stacks[0](mel))[0])
        off = off_fc(off_rnn(stacks[1](mel))[0])
        fr = torch.sigmoid(fr_pre(stacks[2](mel)))
        fr_in = torch.cat([fr, torch.sigmoid(on).detach(), torch.sigmoid(off).detach()], -1)
        fr = fr_fc(fr_rnn(fr_in)[0])
        vel = vel_fc(stacks[3](mel))
        return on, off, fr, vel

    def rolls(b, t):
        frame = (torch.rand(b, t // 8 + 1, keys, device="cuda") < 0.04).float()
        frame = frame.repeat_interleave(8, 1)[:, :t]  # notes held for 8 frames
        onset = frame * (torch.rand(b, t, keys, device="cuda") < 0.15).float()
        offset = frame * (torch.rand(b, t, keys, device="cuda") < 0.15).float()
        vel = torch.rand(b, t, keys, device="cuda") * onset
        return onset, offset, frame, vel

    for step in range(steps):
        secs = rng.uniform(2, 16) if _smoke(1, 0) else rng.uniform(1, 2)
        n = max(1, min(_smoke(16, 3), int(budget // (secs * sr))))
        audio = torch.randn(n, int(secs * sr), device="cuda") * 0.1
        with torch.autocast("cuda", dtype=torch.bfloat16):
            mel = logmel(audio)
            shift = rng.randint(-2, 2)
            if shift:
                mel = mel.roll(shift, 2)
            t = mel.shape[1]
            on_t, off_t, fr_t, vel_t = rolls(n, t)
            on, off, fr, vel = forward(mel)
            loss = (f.binary_cross_entropy_with_logits(on.float(), on_t)
                    + f.binary_cross_entropy_with_logits(off.float(), off_t)
                    + f.binary_cross_entropy_with_logits(fr.float(), fr_t)
                    + (on_t * (torch.sigmoid(vel.float()) - vel_t) ** 2).sum() / on_t.sum().clamp(min=1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 3.0)
        opt.step()
        sched.step()
        if step % 10 == 0:
            float(loss.detach())
        del audio, mel, on_t, off_t, fr_t, vel_t, on, off, fr, vel, loss
        if (step + 1) % _smoke(110, 2) == 0:
            model.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                audio = torch.randn(_smoke(2, 1), _smoke(20, 2) * sr, device="cuda") * 0.1
                mel = logmel(audio)
                _, _, fr_t, _ = rolls(audio.shape[0], mel.shape[1])
                on, off, fr, vel = forward(mel)
                pred = (torch.sigmoid(fr.float()) > 0.5).float()
                onp = (torch.sigmoid(on.float()) > 0.5).float()
                torch.stack([(pred * fr_t).sum(), pred.sum(), fr_t.sum(), onp.sum()]).tolist()
                del audio, mel, fr_t, on, off, fr, vel, pred, onp
            model.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- pointer-generator semantic parsing


@_workload("semantic parsing training, question to logical form (ATIS/GeoQuery-style) with a pointer-generator seq2seq (copy attention, See et al. 2017 / Jia & Liang 2016) written by hand, fp32 and small: batches of 16-64 questions (drawn) of 6-40 tokens (drawn per example, padded to the batch's longest) with an extended vocabulary of per-example source words; a bidirectional GRU encoder (nn.GRU, 256 a direction), a GRU decoder of 512 unrolled by hand over 8-40 target steps (drawn per batch) with teacher forcing: the GRU gates from linear layers, Bahdanau (additive) attention over the padded source (padding by an additive -inf mask), input feeding, a generation probability from a sigmoid gate, the copy distribution scattered into the extended vocabulary by scatter_add over the source ids and mixed with the softmax over the 3000-word output vocabulary, the target's log-probability gathered per step and masked by the target lengths; Adam with gradient clipping at 5, 66 steps, the loss read back every step; every 33 steps greedy decoding (no grad) of 2 batches of 64 for 40 steps each, the argmax fed back, the token matrix read back")
def copynet_semparse_train(rng):
    nn, f = torch.nn, torch.nn.functional
    vin, vout, emb = _smoke(5000, 50), _smoke(3000, 40), _smoke(128, 8)
    eh, dh = _smoke(256, 8), _smoke(512, 16)
    src_emb, tgt_emb = nn.Embedding(vin, emb), nn.Embedding(vout + _smoke(40, 8), emb)
    enc = nn.GRU(emb, eh, batch_first=True, bidirectional=True)
    bridge = nn.Linear(2 * eh, dh)
    wx, wh = nn.Linear(emb + 2 * eh, 3 * dh), nn.Linear(dh, 3 * dh)
    att_h, att_s, att_v = nn.Linear(2 * eh, dh, bias=False), nn.Linear(dh, dh), nn.Linear(dh, 1, bias=False)
    out1, out2 = nn.Linear(dh + 2 * eh, dh), nn.Linear(dh, vout)
    pgen = nn.Linear(dh + 2 * eh + emb, 1)
    model = nn.ModuleList([src_emb, tgt_emb, enc, bridge, wx, wh, att_h, att_s, att_v, out1, out2, pgen]).cuda()
    steps = _smoke(66, 3)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    next_oov = _smoke(40, 8)

    def encode(b):
        lens = [rng.randint(_smoke(6, 2), _smoke(40, 6)) for _ in range(b)]
        s = max(lens)
        ids = torch.randint(1, vin, (b, s), device="cuda")
        ln = torch.tensor(lens, device="cuda")
        pad = torch.arange(s, device="cuda")[None] >= ln[:, None]
        ext = torch.where(torch.rand(b, s, device="cuda") < 0.2,
                          vout + torch.randint(0, next_oov, (b, s), device="cuda"),
                          torch.randint(1, vout, (b, s), device="cuda"))  # source ids in the extended vocabulary
        hs, _ = enc(src_emb(ids))
        hs = hs * (~pad)[..., None]
        h = torch.tanh(bridge(hs.sum(1) / ln[:, None]))
        keys = att_h(hs)
        neg = torch.zeros(b, s, device="cuda").masked_fill(pad, float("-inf"))
        return hs, keys, neg, ext, h

    def step_fn(y_prev, h, ctx, hs, keys, neg, ext):
        x = torch.cat([tgt_emb(y_prev), ctx], -1)
        gx, gh = wx(x).chunk(3, -1), wh(h).chunk(3, -1)
        r, z = torch.sigmoid(gx[0] + gh[0]), torch.sigmoid(gx[1] + gh[1])
        n = torch.tanh(gx[2] + r * gh[2])
        h = (1 - z) * n + z * h
        e = att_v(torch.tanh(keys + att_s(h)[:, None])).squeeze(-1) + neg
        a = torch.softmax(e, -1)
        ctx = torch.bmm(a[:, None], hs).squeeze(1)
        gen = torch.softmax(out2(torch.tanh(out1(torch.cat([h, ctx], -1)))), -1)
        p = torch.sigmoid(pgen(torch.cat([h, ctx, x[:, :emb]], -1)))
        dist = f.pad(p * gen, (0, next_oov)).scatter_add(1, ext, (1 - p) * a)
        return dist, h, ctx

    for step in range(steps):
        b = rng.randint(_smoke(16, 2), _smoke(64, 4))
        hs, keys, neg, ext, h = encode(b)
        tl = rng.randint(_smoke(8, 3), _smoke(40, 6))
        tgt = torch.randint(1, vout + next_oov, (b, tl), device="cuda")
        tlen = torch.tensor([rng.randint(max(1, tl // 2), tl) for _ in range(b)], device="cuda")
        ctx = torch.zeros(b, 2 * eh, device="cuda")
        y = torch.zeros(b, dtype=torch.long, device="cuda")
        nll = []
        for t in range(tl):
            dist, h, ctx = step_fn(y, h, ctx, hs, keys, neg, ext)
            nll.append(-torch.log(dist.gather(1, tgt[:, t:t + 1]).squeeze(1) + 1e-10))
            y = torch.where(tgt[:, t] >= vout, torch.full_like(y, 3), tgt[:, t])  # OOV fed back as <unk>
        mask = (torch.arange(tl, device="cuda")[None] < tlen[:, None]).float()
        loss = (torch.stack(nll, 1) * mask).sum() / mask.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        float(loss.detach())
        del hs, keys, neg, ext, h, tgt, tlen, ctx, y, nll, mask, loss, dist
        if (step + 1) % _smoke(33, 2) == 0:
            model.eval()
            with torch.no_grad():
                for _ in range(_smoke(2, 1)):
                    b = _smoke(64, 4)
                    hs, keys, neg, ext, h = encode(b)
                    ctx = torch.zeros(b, 2 * eh, device="cuda")
                    y = torch.zeros(b, dtype=torch.long, device="cuda")
                    outs = []
                    for t in range(_smoke(40, 4)):
                        dist, h, ctx = step_fn(y, h, ctx, hs, keys, neg, ext)
                        tok = dist.argmax(-1)
                        outs.append(tok)
                        y = torch.where(tok >= vout, torch.full_like(tok, 3), tok)
                    torch.stack(outs, 1).tolist()
                    del hs, keys, neg, ext, h, ctx, y, outs, dist, tok
            model.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- BigBird block-sparse attention, long documents


class _BbLayer(torch.nn.Module):
    """A post-norm BigBird encoder layer with ITC block-sparse attention: every query block attends to its three
    sliding blocks, the two global blocks (first and last) and r random blocks; the global blocks attend to all."""

    def __init__(self, d, heads, bs):
        super().__init__()
        nn = torch.nn
        self.h, self.bs = heads, bs
        self.qkv, self.o = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x, rand_idx, kbias):
        """x: (B, L, D); rand_idx: (nb, r) random key blocks per query block; kbias: (B, L) additive padding bias."""
        b, L, d = x.shape
        nb, bs, h = L // self.bs, self.bs, self.h
        q, k, v = self.qkv(x).view(b, L, 3, h, d // h).permute(2, 0, 3, 1, 4).unbind(0)  # (B, H, L, dh)
        scale = (d // h) ** -0.5
        kb, vb = k.view(b, h, nb, bs, -1), v.view(b, h, nb, bs, -1)
        mb = kbias.view(b, 1, nb, bs)

        def gather(t):
            g = [t.roll(1, 2), t, t.roll(-1, 2), t[:, :, :1].expand_as(t), t[:, :, -1:].expand_as(t),
                 t[:, :, rand_idx].flatten(3, 4)]
            return torch.cat(g, 3)

        ks, vs = gather(kb), gather(vb)  # (B, H, nb, (5 + r) * bs, dh)
        ms = gather(mb[..., None]).squeeze(-1)[:, :, :, None]  # (B, 1, nb, 1, keys)
        qb = q.view(b, h, nb, bs, -1)
        att = torch.softmax((qb @ ks.transpose(-1, -2)) * scale + ms, -1)
        out = (att @ vs).view(b, h, L, -1)
        # the global query blocks (first and last) attend to every key
        gq = torch.cat([qb[:, :, 0], qb[:, :, -1]], 2)  # (B, H, 2 bs, dh)
        ga = torch.softmax((gq @ k.transpose(-1, -2)) * scale + kbias[:, None, None], -1)
        go = ga @ v
        out = torch.cat([go[:, :, :bs], out[:, :, bs:L - bs], go[:, :, bs:]], 2)
        x = self.n1(x + self.o(out.transpose(1, 2).reshape(b, L, d)))
        return self.n2(x + self.fc2(torch.nn.functional.gelu(self.fc1(x))))


@_workload("long-document training with BigBird-style block-sparse attention (Zaheer et al. 2020, ITC variant) written by hand: documents of 1024-4096 tokens (drawn per step, padded to a multiple of the 64-token block, 2-8 documents a batch set by a 8192-token budget, each document's own length drawn below the padded one); a 6-layer post-norm encoder of width 512 with 8 heads, every query block attending to its three sliding blocks, the first and last (global) blocks and 3 random blocks (indices drawn on the host per step and layer, as BigBird's random attention is resampled), gathered by roll, expand and index into key/value tensors; the global blocks attending to every key; padding masked by an additive bias gathered the same way; a joint objective of masked-language modelling (15% of positions, their hidden states gathered by torch.gather at fixed counts, tied 16k-token embedding, label smoothing 0.1) and document classification from the first token (20 labels); bf16 autocast, AdamW with linear warmup and decay, gradient clipping at 1, 260 steps, the loss read back every 10 steps")
def bigbird_doc_train(rng):
    nn, f = torch.nn, torch.nn.functional
    d, heads, nl, bs = _smoke(512, 32), _smoke(8, 2), _smoke(6, 2), _smoke(64, 8)
    vocab, nr, ncls = _smoke(16000, 100), 3, 20
    tok, pos = nn.Embedding(vocab, d), nn.Embedding(_smoke(4096, 128), d)
    layers = nn.ModuleList(_BbLayer(d, heads, bs) for _ in range(nl))
    eln, mlm_t, mlm_ln = nn.LayerNorm(d), nn.Linear(d, d), nn.LayerNorm(d)
    cls_head = nn.Sequential(nn.Linear(d, d), nn.Tanh(), nn.Linear(d, ncls))
    model = nn.ModuleList([tok, pos, layers, eln, mlm_t, mlm_ln, cls_head]).cuda()
    steps = _smoke(260, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    warm = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / (steps - warm))))
    budget = _smoke(8192, 256)

    for step in range(steps):
        L = rng.randrange(_smoke(1024, 64), _smoke(4096, 128) + 1, bs)
        b = max(1, min(_smoke(8, 2), budget // L))
        lens = [rng.randint(L // 2, L) for _ in range(b)]
        nb = L // bs
        rand = [torch.tensor([[rng.randrange(nb) for _ in range(nr)] for _ in range(nb)], device="cuda")
                for _ in range(nl)]
        ids = torch.randint(5, vocab, (b, L), device="cuda")
        ln = torch.tensor(lens, device="cuda")
        kbias = torch.zeros(b, L, device="cuda").masked_fill(torch.arange(L, device="cuda")[None] >= ln[:, None],
                                                           -1e4)
        nm = max(1, int(0.15 * min(lens)))
        mpos = torch.argsort(torch.rand(b, L, device="cuda") * (kbias == 0).float(), 1, descending=True)[:, :nm]
        labels = ids.gather(1, mpos)
        ids = ids.scatter(1, mpos, torch.full_like(mpos, 4))  # [MASK]
        y = torch.randint(0, ncls, (b,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            x = eln(tok(ids) + pos.weight[:L])
            for li, layer in enumerate(layers):
                x = layer(x, rand[li], kbias)
            hm = x.gather(1, mpos[..., None].expand(b, nm, d))
            logits = f.linear(mlm_ln(f.gelu(mlm_t(hm))), tok.weight)
            mlm = f.cross_entropy(logits.float().flatten(0, 1), labels.flatten(), label_smoothing=0.1)
            cl = f.cross_entropy(cls_head(x[:, 0]).float(), y)
            loss = mlm + cl
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 10 == 0:
            float(loss.detach())
        del rand, ids, ln, kbias, mpos, labels, y, x, hm, logits, mlm, cl, loss
    torch.cuda.synchronize()

"""The fifty-fourth batch of held-out workloads for record.py, second half (batch54.py has the first): medicine and
clinical data on the GPU, written in torch alone. An echocardiography service (EchoNet-Dynamic-style: each apical
four-chamber video of 32-240 frames uploaded as uint8 from reused pinned host buffers on a side stream one video
ahead, the left ventricle segmented frame by frame by a UNet in chunks of 64 frames, its area curve giving the end-
diastolic and end-systolic frames, the ejection fraction regressed by an R(2+1)D network over all 32-frame clips of
the video and averaged; the area curve and the EF read back), a BEHRT-style transformer over electronic health
records (patients as sequences of visits of diagnosis, medication and procedure codes with age, visit-segment and
position embeddings; masked-code pretraining with the batch size set by a token budget over drawn lengths, then
fine-tuning for 12-month heart-failure risk with a class-weighted BCE, then scoring a cohort without grad), a
radiology report generator (R2Gen-style: a ViT over the frontal and lateral views, its lower layers frozen, a
transformer decoder with cross-attention trained with teacher forcing on reports of drawn length, and greedy
generation with a KV cache grown by concatenation for each evaluation), and seizure detection over long scalp EEG
recordings (recordings of 20-60 minutes in 19, 21 or 23-channel montages held on the device, 12-second windows
cut by index, STFTs, a per-channel CNN shared across channels, a transformer across channels; seizure windows
oversampled in training; then whole held-out recordings scanned in overlapping windows in chunks, the probabilities
smoothed and the detected events counted). Same conventions as batch54.py: nothing downloaded, data drawn at random
on the device (or, for the echo service, from a few reused pinned host buffers), `rng` the workload's
random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)`. No control flow reads
a tensor's value: the MLM positions are chosen by top-k of random scores, generation runs to its drawn length with
finished sequences padded, ED/ES frames are argmax/argmin tensors, no boolean-mask indexing; losses and metrics are
read back only at logging and evaluation points, the service's results per video. echo_lv_ef_video_serve uses a side
stream (uploads waited on by event, the tensors record_stream'ed); the others are single-stream. The networks run
under bf16 autocast where real code would; the losses, the EEG's STFT and the post-processing are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after batch54.py's.

Real sizes checked before recording, as batch54.py says (the helper's meta runner /tmp/b54/meta_run.py, every
workload of this half run whole at its final real sizes; events about 1.8x the op outputs counted):
echo_lv_ef_video_serve 316,419 op outputs, peak 0.93 GB; behrt_ehr_risk_train 337,630 op outputs, peak 3.71 GB;
cxr_report_gen_train 351,943 op outputs, peak 1.70 GB; eeg_seizure_window_train 305,021 op outputs, peak 2.90 GB
(peaks in fp32 where autocast would take bf16).
record_new54.sh's header has them too. The CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock

_b = Batch()
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- echocardiography service


def _cbr(a, b, s=1):
    return _nn.Sequential(_nn.Conv2d(a, b, 3, s, 1, bias=False), _nn.BatchNorm2d(b), _nn.ReLU())


class _EchoUNet(_nn.Module):
    """A four-level UNet over 112 x 112 frames, one logit a pixel (left ventricle)."""

    def __init__(self, w):
        super().__init__()
        self.e1 = _nn.Sequential(_cbr(3, w), _cbr(w, w))
        self.e2 = _nn.Sequential(_cbr(w, 2 * w, 2), _cbr(2 * w, 2 * w))
        self.e3 = _nn.Sequential(_cbr(2 * w, 4 * w, 2), _cbr(4 * w, 4 * w))
        self.e4 = _nn.Sequential(_cbr(4 * w, 8 * w, 2), _cbr(8 * w, 8 * w))
        self.d3 = _nn.Sequential(_cbr(12 * w, 4 * w), _cbr(4 * w, 4 * w))
        self.d2 = _nn.Sequential(_cbr(6 * w, 2 * w), _cbr(2 * w, 2 * w))
        self.d1 = _nn.Sequential(_cbr(3 * w, w), _cbr(w, w))
        self.out = _nn.Conv2d(w, 1, 1)

    def forward(self, x):
        f1 = self.e1(x)
        f2 = self.e2(f1)
        f3 = self.e3(f2)
        f4 = self.e4(f3)
        u = self.d3(torch.cat([_F.interpolate(f4, scale_factor=2.0), f3], 1))
        u = self.d2(torch.cat([_F.interpolate(u, scale_factor=2.0), f2], 1))
        u = self.d1(torch.cat([_F.interpolate(u, scale_factor=2.0), f1], 1))
        return self.out(u)


class _R21D(_nn.Module):
    """R(2+1)D-lite: each block a spatial (1x3x3) then a temporal (3x1x1) convolution with BN and ReLU; global
    pooling and a regression head (EF in percent)."""

    def __init__(self, w):
        super().__init__()
        chans, blocks, a = [w, 2 * w, 4 * w, 8 * w], [], 3
        for i, b in enumerate(chans):
            s = 1 if i == 0 else 2
            blocks += [_nn.Conv3d(a, b, (1, 3, 3), (1, s, s), (0, 1, 1), bias=False), _nn.BatchNorm3d(b),
                       _nn.ReLU(), _nn.Conv3d(b, b, (3, 1, 1), (s, 1, 1), (1, 0, 0), bias=False),
                       _nn.BatchNorm3d(b), _nn.ReLU()]
            a = b
        self.body = _nn.Sequential(*blocks)
        self.head = _nn.Linear(a, 1)

    def forward(self, x):
        return self.head(self.body(x).mean((2, 3, 4)))[:, 0] * 10 + 55


@_workload("echocardiography service, EchoNet-Dynamic-style, written by hand (random init): 1,020 apical four-chamber videos of 32-240 frames (drawn) at 112 x 112, each uploaded as uint8 from reused pinned host buffers on a side stream one video ahead (waited on by event, record_stream'ed), normalised on the device; the left ventricle segmented frame by frame by a four-level UNet (width 32) in chunks of 64 frames, its area curve smoothed, the end-diastolic and end-systolic frames by argmax and argmin; the ejection fraction regressed by an R(2+1)D network (width 32) over every 32-frame clip (sampling period 2, clips every 32 frames, batched) and averaged; bf16 autocast without grad; each video's area curve, ED/ES frames and EF read back")
def echo_lv_ef_video_serve(rng):
    seg = _EchoUNet(_smoke(32, 4)).cuda().eval()
    reg = _R21D(_smoke(32, 4)).cuda().eval()
    hw = _smoke(112, 16)
    fmin, fmax = _smoke(32, 8), _smoke(240, 20)
    clip, period, stride = _smoke(32, 4), 2, _smoke(32, 4)
    chunk = _smoke(64, 4)
    host = [torch.randint(0, 256, (fmax * 3 * hw * hw,), dtype=torch.uint8).pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    done = [None, None]
    mean = torch.tensor([32.0, 32.0, 33.0], device="cuda")[:, None, None]
    std = torch.tensor([50.0, 50.0, 51.0], device="cuda")[:, None, None]

    def fetch(i):
        nf = rng.randint(fmin, fmax)
        s = i % 2
        if done[s] is not None:
            done[s].synchronize()
        with torch.cuda.stream(side):
            vid = host[s][:nf * 3 * hw * hw].view(nf, 3, hw, hw).to("cuda", non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        done[s] = ev
        return vid, ev

    nvid = _smoke(1020, 3)
    nxt = fetch(0)
    for i in range(nvid):
        vid, ev = nxt
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        vid.record_stream(cur)
        if i + 1 < nvid:
            nxt = fetch(i + 1)
        nf = vid.shape[0]
        with torch.no_grad():
            x = (vid.float() - mean) / std
            areas = []
            for s in range(0, nf, chunk):
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logit = seg(x[s:s + chunk])
                areas.append(torch.sigmoid(logit.float()).sum((1, 2, 3)))
            area = torch.cat(areas)
            sm = _F.avg_pool1d(area[None, None], 5, 1, 2, count_include_pad=False)[0, 0]
            edv, ed = sm.max(0)
            esv, es = sm.min(0)
            span = clip * period
            starts = list(range(0, max(nf - span, 0) + 1, stride))
            fidx = torch.tensor([[min(s0 + j * period, nf - 1) for j in range(clip)] for s0 in starts],
                                device="cuda")
            clips = x[fidx.view(-1)].view(len(starts), clip, 3, hw, hw).permute(0, 2, 1, 3, 4)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                ef = reg(clips).float()
            efm = ef.mean()
            torch.cat([torch.stack([efm, (edv - esv) / edv.clamp_min(1.0) * 100, ed.float(), es.float()]),
                       area]).cpu()
        del vid, x, areas, area, sm, clips, ef, fidx


# ---------------------------------------------------------------- BEHRT over electronic health records


class _BertLayer(_nn.Module):
    """A post-LN BERT layer with a key-padding mask (SDPA)."""

    def __init__(self, d, nh, ff, drop=0.1):
        super().__init__()
        self.nh = nh
        self.qkv, self.out = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.ln1, self.ln2 = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.ff = _nn.Sequential(_nn.Linear(d, ff), _nn.GELU(), _nn.Linear(ff, d))
        self.drop = _nn.Dropout(drop)

    def forward(self, x, mask):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.nh, d // self.nh).permute(2, 0, 3, 1, 4)
        a = _F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = self.ln1(x + self.drop(self.out(a.transpose(1, 2).reshape(b, t, d))))
        return self.ln2(x + self.drop(self.ff(x)))


class _Behrt(_nn.Module):
    def __init__(self, vocab, d, nh, ff, nl, maxlen):
        super().__init__()
        self.code = _nn.Embedding(vocab, d)
        self.age = _nn.Embedding(120, d)
        self.seg = _nn.Embedding(2, d)
        self.pos = _nn.Embedding(maxlen, d)
        self.ln = _nn.LayerNorm(d)
        self.layers = _nn.ModuleList([_BertLayer(d, nh, ff) for _ in range(nl)])

    def forward(self, codes, age, seg, valid):
        b, t = codes.shape
        x = self.code(codes) + self.age(age) + self.seg(seg) + self.pos.weight[:t]
        x = self.ln(x)
        mask = valid[:, None, None, :] > 0.5
        for layer in self.layers:
            x = layer(x, mask)
        return x


@_workload("BEHRT-style transformer over electronic health records, written by hand (random init): patients as code sequences of drawn length (a third to all of the padded length) split into visits (boundaries drawn on the device, about one token in twelve) of diagnosis, medication and procedure codes (a 12,000-code vocabulary), each token with code, age (years), alternating visit-segment and position embeddings; 6 post-LN layers (d 288, 12 heads, FF 512), SDPA with key-padding masks; 280 steps of masked-code pretraining (15% of each sequence's codes chosen by top-k of random scores, gathered, an MLM head over the vocabulary, CE) with sequences padded to 64, 128, 256 or 512 (drawn) and the batch size set by a 12k-token budget; then 90 steps fine-tuning for 12-month heart-failure risk (a fresh pooled head, class-weighted BCE, a lower learning rate), an evaluation every 30 steps on 1,024 held-out patients (256 at each length, batched under the token budget; AUROC by ranks, read back); then a cohort of 16k patients scored without grad in batches by length; AdamW with clipping, bf16 autocast")
def behrt_ehr_risk_train(rng):
    vocab, maxlen = _smoke(12000, 64), _smoke(512, 32)
    d = _smoke(288, 24)
    enc = _Behrt(vocab, d, _smoke(12, 2), _smoke(512, 32), _smoke(6, 1), maxlen).cuda()
    mlm = _nn.Sequential(_nn.Linear(d, d), _nn.GELU(), _nn.LayerNorm(d), _nn.Linear(d, vocab)).cuda()
    lens = _smoke([64, 128, 256, 512], [16, 32])
    budget = _smoke(12288, 64)

    def batch(t, bs):
        vis = torch.randint(1, 13, (bs, t), device="cuda")
        codes = torch.randint(4, vocab, (bs, t), device="cuda")
        fill = [rng.randint(t // 3, t) for _ in range(bs)]
        valid = (torch.arange(t, device="cuda")[None] < torch.tensor(fill, device="cuda")[:, None]).float()
        codes = codes * valid.long()
        age0 = torch.randint(20, 85, (bs, 1), device="cuda")
        age = (age0 + torch.arange(t, device="cuda")[None] // 24).clamp_max(119)
        seg = (torch.cumsum((vis == 1).long(), 1) % 2)
        return codes, age, seg, valid

    params = list(enc.parameters()) + list(mlm.parameters())
    opt = torch.optim.AdamW(params, lr=1e-4, weight_decay=0.01)
    for step in range(_smoke(280, 2)):
        t = rng.choice(lens)
        bs = budget // t
        codes, age, seg, valid = batch(t, bs)
        k = max(1, int(0.15 * t))
        pos = (torch.rand(bs, t, device="cuda") + valid).topk(k, -1).indices
        target = codes.gather(1, pos)
        inp = codes.scatter(1, pos, 3)  # [MASK]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = enc(inp, age, seg, valid)
            logits = mlm(h.gather(1, pos[..., None].expand(-1, -1, d)))
        loss = _F.cross_entropy(logits.float().view(-1, vocab), target.view(-1), ignore_index=0)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if (step + 1) % 10 == 0:
            loss.detach().cpu()
        del codes, age, seg, valid, pos, target, inp, h, logits, loss
    del mlm, opt, params
    head = _nn.Sequential(_nn.Dropout(0.1), _nn.Linear(d, d), _nn.Tanh(), _nn.Linear(d, 1)).cuda()
    params = list(enc.parameters()) + list(head.parameters())
    opt = torch.optim.AdamW(params, lr=3e-5, weight_decay=0.01)
    pos_weight = torch.tensor([6.0], device="cuda")

    def risk(codes, age, seg, valid):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = enc(codes, age, seg, valid)
            pooled = (h * valid[..., None]).sum(1) / valid.sum(1, keepdim=True)
            return head(pooled).float()[:, 0]

    for step in range(_smoke(90, 2)):
        enc.train()
        head.train()
        t = rng.choice(lens)
        bs = min(budget // t, 128)
        codes, age, seg, valid = batch(t, bs)
        y = (torch.rand(bs, device="cuda") < 0.12).float()
        loss = _F.binary_cross_entropy_with_logits(risk(codes, age, seg, valid), y, pos_weight=pos_weight)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        del codes, age, seg, valid, y, loss
        if (step + 1) % _smoke(30, 1) == 0:
            enc.eval()
            head.eval()
            sc, ys = [], []
            with torch.no_grad():
                for t in lens:  # 256 patients at each padded length, in batches under the token budget
                    nb, cb = _smoke(256, 2), budget // t
                    for c0 in range(0, nb, cb):
                        sc.append(torch.sigmoid(risk(*batch(t, min(cb, nb - c0)))))
                    ys.append((torch.rand(nb, device="cuda") < 0.12).float())
                s, yy = torch.cat(sc), torch.cat(ys)
                r = s.argsort().argsort().float() + 1
                npos = yy.sum()
                (((r * yy).sum() - npos * (npos + 1) / 2) / (npos * (s.shape[0] - npos)).clamp_min(1)).cpu()
            del sc, ys
    enc.eval()
    head.eval()
    with torch.no_grad():
        out = []
        remaining = _smoke(16384, 8)
        while remaining > 0:
            t = rng.choice(lens)
            bs = min(budget // t, remaining)
            out.append(torch.sigmoid(risk(*batch(t, bs))))
            remaining -= bs
        torch.cat(out).cpu()


# ---------------------------------------------------------------- radiology report generation


class _DecBlock(_nn.Module):
    """A pre-LN decoder block: causal self-attention (with an optional KV cache), cross-attention to the image
    tokens, MLP."""

    def __init__(self, d, nh, dm):
        super().__init__()
        self.nh, self.d = nh, d
        self.ln1, self.ln2, self.ln3 = _nn.LayerNorm(d), _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.o1 = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.q2, self.kv2, self.o2 = _nn.Linear(d, d), _nn.Linear(dm, 2 * d), _nn.Linear(d, d)
        self.mlp = _nn.Sequential(_nn.Linear(d, 4 * d), _nn.GELU(), _nn.Linear(4 * d, d))

    def heads(self, x):
        b, t, _ = x.shape
        return x.view(b, t, self.nh, -1).transpose(1, 2)

    def mem_kv(self, mem):
        k, v = self.kv2(mem).chunk(2, -1)
        return self.heads(k), self.heads(v)

    def forward(self, x, mkv, mask=None, cache=None):
        b, t, d = x.shape
        q, k, v = (self.heads(z) for z in self.qkv(self.ln1(x)).chunk(3, -1))
        if cache is not None:
            if cache[0] is not None:
                k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
            cache[0], cache[1] = k, v
            a = _F.scaled_dot_product_attention(q, k, v)
        else:
            a = _F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.o1(a.transpose(1, 2).reshape(b, t, d))
        a = _F.scaled_dot_product_attention(self.heads(self.q2(self.ln2(x))), *mkv)
        x = x + self.o2(a.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.ln3(x))


@_workload("radiology report generation, R2Gen-style, written by hand (random init): a ViT (patch 16, d 384, 6 heads, 8 layers, the lower 6 frozen and run without grad) over the frontal and lateral views at 224 x 224 (392 image tokens with view embeddings), a 3-layer transformer decoder (d 512, 8 heads, cross-attention to the image tokens) over an 8,000-token vocabulary; 250 teacher-forced steps of 16 studies with reports padded to a drawn 40-160 tokens (causal plus padding masks, label-smoothed CE ignoring padding), AdamW with clipping, bf16 autocast; every 50 steps greedy generation for 24 studies with a KV cache grown by concatenation per layer (cross-attention keys and values computed once) for a drawn 90-160 tokens, finished reports padded, the tokens read back")
def cxr_report_gen_train(rng):
    dv, dd, vocab = _smoke(384, 32), _smoke(512, 32), _smoke(8000, 100)
    img, patch = _smoke(224, 32), 16
    nlayers, nfrozen = _smoke(8, 2), _smoke(6, 1)
    npatch = (img // patch) ** 2
    patch_embed = _nn.Conv2d(1, dv, patch, patch).cuda()
    vpos = _nn.Parameter(torch.randn(npatch, dv, device="cuda") * 0.02)
    view_emb = _nn.Parameter(torch.randn(2, 1, dv, device="cuda") * 0.02)
    vit = _nn.ModuleList([PreNormBlock(dv, _smoke(6, 2)) for _ in range(nlayers)]).cuda()
    vln = _nn.LayerNorm(dv).cuda()
    dec = _nn.ModuleList([_DecBlock(dd, _smoke(8, 2), dv) for _ in range(_smoke(3, 1))]).cuda()
    tok = _nn.Embedding(vocab, dd).cuda()
    tpos = _nn.Parameter(torch.randn(_smoke(200, 40), dd, device="cuda") * 0.02)
    dln = _nn.LayerNorm(dd).cuda()
    lm = _nn.Linear(dd, vocab).cuda()
    frozen = [patch_embed.weight, patch_embed.bias, vpos] + [p for blk in vit[:nfrozen] for p in blk.parameters()]
    for p in frozen:
        p.requires_grad_(False)
    train = [view_emb, tpos] + [p for blk in vit[nfrozen:] for p in blk.parameters()] + list(vln.parameters()) \
        + list(dec.parameters()) + list(tok.parameters()) + list(dln.parameters()) + list(lm.parameters())
    opt = torch.optim.AdamW(train, lr=1e-4, weight_decay=0.05)

    def encode(bs):
        x = torch.rand(bs * 2, 1, img, img, device="cuda")
        with torch.no_grad():
            h = patch_embed((x - 0.5) / 0.25).flatten(2).transpose(1, 2) + vpos
            for blk in vit[:nfrozen]:
                h = blk(h)
        h = (h.view(2, bs, npatch, dv) + view_emb[:, None]).transpose(0, 1).reshape(bs, 2 * npatch, dv)
        for blk in vit[nfrozen:]:
            h = blk(h)
        return vln(h)

    bs = _smoke(16, 2)
    for step in range(_smoke(250, 2)):
        t = rng.randint(_smoke(40, 6), _smoke(160, 12))
        lens = torch.tensor([rng.randint(t // 3, t) for _ in range(bs)], device="cuda")
        ids = torch.randint(4, vocab, (bs, t + 1), device="cuda")
        valid = torch.arange(t + 1, device="cuda")[None] <= lens[:, None]
        ids = ids * valid.long()
        inp, tgt = ids[:, :-1], ids[:, 1:]
        causal = torch.ones(t, t, dtype=torch.bool, device="cuda").tril()
        mask = causal[None, None] & valid[:, None, None, :-1]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            mem = encode(bs)
            x = tok(inp) + tpos[:t]
            for blk in dec:
                x = blk(x, blk.mem_kv(mem), mask=mask)
            logits = lm(dln(x))
        loss = _F.cross_entropy(logits.float().reshape(-1, vocab), tgt.reshape(-1), ignore_index=0,
                                label_smoothing=0.1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(train, 1.0)
        opt.step()
        if (step + 1) % 10 == 0:
            loss.detach().cpu()
        del ids, valid, inp, tgt, mask, mem, x, logits, loss
        if (step + 1) % _smoke(50, 1) == 0:
            gb = _smoke(24, 2)
            steps = rng.randint(_smoke(90, 4), _smoke(160, 8))
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                mem = encode(gb)
                mkvs = [blk.mem_kv(mem) for blk in dec]
                caches = [[None, None] for _ in dec]
                cur = torch.full((gb, 1), 1, dtype=torch.long, device="cuda")  # [BOS]
                finished = torch.zeros(gb, 1, dtype=torch.bool, device="cuda")
                out = []
                for i in range(steps):
                    x = tok(cur) + tpos[i:i + 1]
                    for blk, mkv, cache in zip(dec, mkvs, caches):
                        x = blk(x, mkv, cache=cache)
                    nxt = lm(dln(x))[:, -1].float().argmax(-1, keepdim=True)
                    nxt = torch.where(finished, torch.zeros_like(nxt), nxt)
                    finished = finished | (nxt == 2)  # [EOS]
                    out.append(nxt)
                    cur = nxt
                torch.cat(out, 1).cpu()
            del mem, mkvs, caches, out


# ---------------------------------------------------------------- EEG seizure detection


class _EegNet(_nn.Module):
    """Per-channel log-STFT images through a small CNN shared across channels, channel embeddings of the montage's
    electrodes, a 2-layer transformer across channels, mean pooling, a seizure logit."""

    def __init__(self, w, d, nelec):
        super().__init__()
        self.cnn = _nn.Sequential(_cbr(1, w, 2), _cbr(w, w), _cbr(w, 2 * w, 2), _cbr(2 * w, 2 * w),
                                  _cbr(2 * w, 4 * w, 2), _cbr(4 * w, 4 * w), _nn.AdaptiveAvgPool2d(1),
                                  _nn.Flatten(), _nn.Linear(4 * w, d))
        self.elec = _nn.Embedding(nelec, d)
        layer = _nn.TransformerEncoderLayer(d, 4, 2 * d, 0.1, batch_first=True, norm_first=True)
        self.tr = _nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = _nn.Linear(d, 1)

    def forward(self, spec, chan_ids):  # spec (b, c, f, t)
        b, c = spec.shape[:2]
        h = self.cnn(spec.reshape(b * c, 1, *spec.shape[2:])).view(b, c, -1) + self.elec(chan_ids)
        return self.head(self.tr(h).mean(1))[:, 0]


def _log_stft(x, nfft, hop, win):
    """x (b, c, n) fp32 -> log-magnitude STFT (b, c, nfft // 2 + 1, frames), per-window standardised."""
    b, c, n = x.shape
    s = torch.stft(x.reshape(b * c, n), nfft, hop, window=win, return_complex=True).abs()
    s = torch.log1p(s).view(b, c, s.shape[-2], s.shape[-1])
    return (s - s.mean((2, 3), keepdim=True)) / (s.std((2, 3), keepdim=True) + 1e-5)


@_workload("seizure detection over long scalp EEG recordings, written by hand (random init; TUH-style): 6 training and 3 held-out recordings of 20-60 minutes (drawn) at 256 Hz in 19, 21 or 23-channel montages (drawn), each held on the device with a few drawn seizure intervals; 12-second windows cut by index gathers, per-channel log-magnitude STFTs (n_fft 256, hop 64), a per-channel CNN (width 32, six conv blocks) shared across channels, electrode embeddings, a 2-layer transformer across channels (d 128), a seizure logit; 680 training steps of 64 windows from one recording at a time, seizure windows oversampled to a third, focal BCE, AdamW, bf16 autocast for the networks; every 170 steps (the last at the end), the held-out recordings scanned whole in 50%-overlapping windows in chunks of 128 without grad, the probabilities smoothed by a moving average, thresholded, onsets counted by differences; the counts and per-recording probability curves read back")
def eeg_seizure_window_train(rng):
    fs, win_s = 256, 12
    n = _smoke(fs * win_s, 256)
    nfft, hop = _smoke(256, 32), _smoke(64, 16)
    window = 0.5 - 0.5 * torch.cos(2 * math.pi * torch.arange(nfft, device="cuda") / nfft)  # periodic Hann
    nelec = 32
    model = _EegNet(_smoke(32, 4), _smoke(128, 16), nelec).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)

    def recording():
        c = rng.choice([19, 21, 23])
        dur = int(rng.uniform(_smoke(20 * 60, 4), _smoke(60 * 60, 8)) * fs)
        sig = torch.randn(c, dur, device="cuda") * 30.0
        chans = sorted(rng.sample(range(nelec), c))
        sz = []
        for _ in range(rng.randint(1, 4)):
            s0 = rng.randrange(0, dur - n)
            sz.append((s0, min(dur - n, s0 + rng.randint(n, 10 * n))))
        return sig, torch.tensor(chans, device="cuda"), sz

    train = [recording() for _ in range(_smoke(6, 2))]
    held = [recording() for _ in range(_smoke(3, 1))]
    offs = torch.arange(n, device="cuda")
    bs, chunk = _smoke(64, 4), _smoke(128, 8)

    def windows(sig, starts):
        idx = starts[:, None] + offs  # (b, n)
        x = sig[:, idx].transpose(0, 1)  # (b, c, n)
        x = (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + 1e-3)
        return _log_stft(x, nfft, hop, window)

    def scan():
        model.eval()
        with torch.no_grad():
            for sig, chans, _ in held:
                dur = sig.shape[1]
                starts = torch.arange(0, dur - n + 1, n // 2, device="cuda")
                probs = []
                for s in range(0, starts.shape[0], chunk):
                    spec = windows(sig, starts[s:s + chunk])
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        logit = model(spec, chans[None].expand(spec.shape[0], -1))
                    probs.append(torch.sigmoid(logit.float()))
                    del spec
                p = torch.cat(probs)
                sm = _F.avg_pool1d(p[None, None], 9, 1, 4, count_include_pad=False)[0, 0]
                on = (sm > 0.5).float()
                onsets = (on[1:] - on[:-1]).clamp_min(0).sum() + on[0]
                torch.cat([onsets[None], sm]).cpu()
        model.train()

    nsteps = _smoke(680, 3)
    for step in range(nsteps):
        sig, chans, sz = train[rng.randrange(len(train))]
        dur = sig.shape[1]
        starts, ys = [], []
        for _ in range(bs):
            if rng.random() < 1 / 3:
                a, b = rng.choice(sz)
                starts.append(rng.randint(a, b))
                ys.append(1.0)
            else:
                starts.append(rng.randrange(0, dur - n))
                ys.append(0.0)
        spec = windows(sig, torch.tensor(starts, device="cuda"))
        y = torch.tensor(ys, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logit = model(spec, chans[None].expand(bs, -1))
        p = torch.sigmoid(logit.float())
        bce = _F.binary_cross_entropy_with_logits(logit.float(), y, reduction="none")
        pt = p * y + (1 - p) * (1 - y)
        loss = ((1 - pt) ** 2 * bce).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if (step + 1) % 20 == 0:
            loss.detach().cpu()
        del spec, y, logit, p, bce, loss
        if (step + 1) % _smoke(170, 2) == 0:
            scan()

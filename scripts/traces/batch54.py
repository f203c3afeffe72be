"""The fifty-fourth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch53_b.py are): medicine and clinical data on the GPU (medical imaging, computational pathology, health records
and clinical text), written in torch alone, first half. Whole-slide pathology by multiple-instance learning
(CLAM-style gated-attention MIL over the tile embeddings of each slide, a few hundred to 16,000 tiles a slide, with
instance-level clustering of the most and least attended tiles; each slide's fp16 tile features uploaded from
reused pinned host buffers on a side stream one slide ahead, as a feature store on disk is read; validation with
attention heatmaps read back), a chest X-ray multi-label classifier (14 findings, a ResNet-34 written by hand over
one-channel radiographs trained progressively at 224, 320 and 448 pixels with the batch shrinking as the resolution
grows, the asymmetric loss for the class imbalance, an EMA of the weights, periodic AUROC per finding computed on the
device by ranks), automated ICD coding of discharge summaries (PLM-ICD / LAAT-style: notes of 300-3,072 tokens cut
into 512-token chunks through a transformer encoder, label-wise attention of 8,922 codes over all of a note's
tokens, BCE; micro-F1 and precision at 8 on held-out notes), and multimodal survival analysis with the Cox partial
likelihood (Pathomic-Fusion-style: a slide embedding, 2,000 gene expressions through a self-normalising network and
clinical variables, fused by a Kronecker product; four cohorts of 1,000 to 30,000 patients, five-fold cross-validation,
a fresh model per fold, the concordance index over all comparable pairs of a fold's held-out patients computed on
the device in row blocks). Same conventions as the earlier batches: nothing downloaded, data drawn at random on the
device (or, for the MIL trainer, from a few reused pinned host buffers), `rng` the workload's random.Random for every
shape, count and sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No
control flow reads a tensor's value: top-k instances, masks and risk sets are tensors, counts are drawn on the host,
no boolean-mask indexing; losses and metrics are read back only at logging and evaluation points.
wsi_mil_feat_stream_train uses a side stream (uploads waited on by event, the tensors record_stream'ed); the others
are single-stream. The CNN and the note encoder run under bf16 autocast, as real code would; the MIL aggregator,
the survival model, the losses and the metrics are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch54_b.py's header says the same of its half): every workload of this half
was run whole at its final real sizes (RECORD_SMOKE unset) on PyTorch's meta device with the helper's runner
(/tmp/b54/meta_run.py, not committed, a copy of /work/notes/meta_run.py: smoke_cpu.py's patching with "cuda" mapped
to "meta", readbacks answered with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking a math
path, streams, events and pinned memory no-ops; boolean-mask indexing, which the meta device cannot size, is
avoided), its op outputs counted there (events about 1.8x that count) and its peak live bytes tracked:
wsi_mil_feat_stream_train 315,473 op outputs, peak 0.44 GB; cxr_multilabel_asl_train 314,297 op outputs, peak 2.56
GB; icd_labelattn_notes_train 313,671 op outputs (about 315,039 since a change of 3 op outputs a batch made after
it, which record_new54.sh describes), peak 5.59 GB; cox_multimodal_survival_cv 311,910 op outputs, peak 0.82 GB
(peaks in fp32 where autocast would take bf16).
record_new54.sh's header has them too. The CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- whole-slide pathology, attention MIL


class _ClamSB(_nn.Module):
    """CLAM-SB: tile features to a hidden size, gated attention (tanh and sigmoid branches) to one score a tile,
    the attention-weighted mean as the slide's embedding, a slide classifier, and one instance classifier a class
    for the clustering loss on the top and bottom attended tiles."""

    def __init__(self, din, h, a, ncls):
        super().__init__()
        self.fc = _nn.Sequential(_nn.Linear(din, h), _nn.ReLU(), _nn.Dropout(0.25))
        self.att_a = _nn.Sequential(_nn.Linear(h, a), _nn.Tanh(), _nn.Dropout(0.25))
        self.att_b = _nn.Sequential(_nn.Linear(h, a), _nn.Sigmoid(), _nn.Dropout(0.25))
        self.att_c = _nn.Linear(a, 1)
        self.cls = _nn.Linear(h, ncls)
        self.inst = _nn.ModuleList([_nn.Linear(h, 2) for _ in range(ncls)])

    def forward(self, x):
        h = self.fc(x)
        att = self.att_c(self.att_a(h) * self.att_b(h)).t()  # (1, n)
        att = torch.softmax(att, -1)
        return self.cls(att @ h), att[0], h


@_workload("whole-slide pathology by attention multiple-instance learning, CLAM-SB-style, written by hand (random init): each slide a bag of precomputed 1,024-dim tile embeddings (a few hundred to 16,000 tiles, log-uniform, fixed per slide), a 512-hidden projection, gated attention (256), the attention-weighted slide embedding, a 3-class slide classifier and per-class instance classifiers trained on the 8 most and 8 least attended tiles (clustering loss, weight 0.3); 340 training slides and 70 validation slides, 8 epochs, one slide a step in a drawn order, Adam, fp32; each slide's fp16 features uploaded from reused pinned host buffers on a side stream one slide ahead (waited on by event, record_stream'ed), as a feature store is read; validation each epoch without grad, the slide probabilities read back, attention heatmaps of 4 slides read back")
def wsi_mil_feat_stream_train(rng):
    din, ncls, k = 1024, 3, _smoke(8, 2)
    model = _ClamSB(din, _smoke(512, 16), _smoke(256, 8), ncls).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=2e-4, weight_decay=1e-5)
    ntr, nva = _smoke(340, 4), _smoke(70, 2)
    lo, hi = _smoke(300, 2 * k + 2), _smoke(16000, 64)
    sizes = [int(_loguniform(rng, lo, hi)) for _ in range(ntr + nva)]
    labels = [rng.randrange(ncls) for _ in range(ntr + nva)]
    nmax = max(sizes)
    host = [(torch.randn(nmax * din) * 0.5).half().pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    done = [None, None]
    counter = [0]

    def fetch(slide):
        s = counter[0] % 2
        counter[0] += 1
        if done[s] is not None:
            done[s].synchronize()
        n = sizes[slide]
        with torch.cuda.stream(side):
            feats = host[s][:n * din].view(n, din).to("cuda", non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        done[s] = ev
        return feats, ev

    def take(item):
        feats, ev = item
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        feats.record_stream(cur)
        return feats

    inst_target = torch.cat([torch.ones(k, dtype=torch.long, device="cuda"),
                             torch.zeros(k, dtype=torch.long, device="cuda")])
    for epoch in range(_smoke(8, 2)):
        order = list(range(ntr))
        rng.shuffle(order)
        model.train()
        nxt = fetch(order[0])
        run = torch.zeros((), device="cuda")
        for i, slide in enumerate(order):
            feats = take(nxt)
            if i + 1 < len(order):
                nxt = fetch(order[i + 1])
            y = labels[slide]
            logits, att, h = model(feats.float())
            top = att.topk(k).indices
            bot = (-att).topk(k).indices
            inst_logits = model.inst[y](h[torch.cat([top, bot])])
            loss = 0.7 * _F.cross_entropy(logits, torch.tensor([y], device="cuda")) \
                + 0.3 * _F.cross_entropy(inst_logits, inst_target)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            run = run + loss.detach()
            if (i + 1) % 50 == 0:
                (run / 50).cpu()
                run = torch.zeros((), device="cuda")
            del feats, logits, att, h, loss
        model.eval()
        probs, heat = [], []
        with torch.no_grad():
            nxt = fetch(ntr)
            for j in range(nva):
                feats = take(nxt)
                if j + 1 < nva:
                    nxt = fetch(ntr + j + 1)
                logits, att, _ = model(feats.float())
                probs.append(torch.softmax(logits, -1))
                if j < 4:
                    heat.append(att)
                del feats
            torch.cat(probs).cpu()
            for a in heat:
                a.cpu()
        del probs, heat


# ---------------------------------------------------------------- chest X-ray multi-label classifier


class _Basic(_nn.Module):
    def __init__(self, a, b, s):
        super().__init__()
        self.c1 = _nn.Conv2d(a, b, 3, s, 1, bias=False)
        self.b1 = _nn.BatchNorm2d(b)
        self.c2 = _nn.Conv2d(b, b, 3, 1, 1, bias=False)
        self.b2 = _nn.BatchNorm2d(b)
        self.down = None
        if s != 1 or a != b:
            self.down = _nn.Sequential(_nn.Conv2d(a, b, 1, s, bias=False), _nn.BatchNorm2d(b))

    def forward(self, x):
        y = _F.relu(self.b1(self.c1(x)))
        y = self.b2(self.c2(y))
        return _F.relu(y + (x if self.down is None else self.down(x)))


class _ResNet(_nn.Module):
    """A ResNet of basic blocks (ResNet-34 with depths 3, 4, 6, 3)."""

    def __init__(self, cin, w, ncls, depths):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(cin, w, 7, 2, 3, bias=False), _nn.BatchNorm2d(w), _nn.ReLU(),
                                   _nn.MaxPool2d(3, 2, 1))
        blocks, a = [], w
        for i, (b, nb) in enumerate(zip([w, 2 * w, 4 * w, 8 * w], depths)):
            blocks += [_Basic(a, b, 1 if i == 0 else 2)] + [_Basic(b, b, 1) for _ in range(nb - 1)]
            a = b
        self.blocks = _nn.Sequential(*blocks)
        self.head = _nn.Linear(a, ncls)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)).mean((2, 3)))


def _asl(logits, y, gneg=4.0, gpos=0.0, clip=0.05, eps=1e-6):
    """Asymmetric loss (Ridnik et al. 2021) for multi-label imbalance, fp32."""
    p = torch.sigmoid(logits.float())
    pm = (p - clip).clamp_min(0)
    lp = y * torch.log(p.clamp_min(eps)) * (1 - p) ** gpos
    ln = (1 - y) * torch.log((1 - pm).clamp_min(eps)) * pm ** gneg
    return -(lp + ln).sum() / logits.shape[0]


def _auroc(scores, labels):
    """AUROC per column by the rank-sum (Mann-Whitney) formula, ties ignored, on the device."""
    n = scores.shape[0]
    ranks = scores.argsort(0).argsort(0).float() + 1
    npos = labels.sum(0)
    nneg = n - npos
    return ((ranks * labels).sum(0) - npos * (npos + 1) / 2) / (npos * nneg).clamp_min(1)


@_workload("chest X-ray multi-label classification written by hand (random init; CheXNet / CheXpert-style): a ResNet-34 over one-channel radiographs, 14 findings with drawn prevalences 1-40%; progressive resizing, 125 steps at 224 x 224 (batch 64), 115 at 320 (batch 32), 100 at 448 (batch 16), each batch augmented on the device (random affine by affine_grid and grid_sample, brightness and contrast jitter); the asymmetric loss (gamma- 4, clip 0.05), AdamW with a one-cycle learning rate and clipping, bf16 autocast, an EMA of the weights (0.999); every 40 steps an evaluation of the EMA model without grad on 384 validation images at the current resolution in batches of 64, AUROC per finding by ranks on the device, read back")
def cxr_multilabel_asl_train(rng):
    ncls = 14
    depths = _smoke([3, 4, 6, 3], [1, 1, 1, 1])
    model = _ResNet(1, _smoke(64, 4), ncls, depths).cuda()
    ema = _ResNet(1, _smoke(64, 4), ncls, depths).cuda()
    ema.load_state_dict(model.state_dict())
    ema.eval()
    for p in ema.parameters():
        p.requires_grad_(False)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=1e-4)
    prev = torch.tensor([rng.uniform(0.01, 0.4) for _ in range(ncls)], device="cuda")
    stages = _smoke([(224, 64, 125), (320, 32, 115), (448, 16, 100)], [(32, 4, 2), (48, 2, 2)])
    total = sum(s[2] for s in stages)
    nval, vbs = _smoke(384, 4), _smoke(64, 2)
    step = 0

    def augment(x):
        b = x.shape[0]
        ang = (torch.rand(b, device="cuda") - 0.5) * 0.35
        sc = 0.9 + 0.2 * torch.rand(b, device="cuda")
        tr = (torch.rand(b, 2, device="cuda") - 0.5) * 0.1
        cos, sin = torch.cos(ang) * sc, torch.sin(ang) * sc
        theta = torch.stack([torch.stack([cos, -sin, tr[:, 0]], -1), torch.stack([sin, cos, tr[:, 1]], -1)], 1)
        grid = _F.affine_grid(theta, list(x.shape), align_corners=False)
        x = _F.grid_sample(x, grid, align_corners=False, padding_mode="border")
        c = 0.8 + 0.4 * torch.rand(b, 1, 1, 1, device="cuda")
        br = (torch.rand(b, 1, 1, 1, device="cuda") - 0.5) * 0.2
        return (x - 0.5) * c + 0.5 + br

    for res, bs, nsteps in stages:
        for _ in range(nsteps):
            lr = 3e-4 * 0.5 * (1 + math.cos(math.pi * step / total)) if step > total // 10 else 3e-4 * (
                step + 1) / (total // 10 + 1)
            for g in opt.param_groups:
                g["lr"] = lr
            x = augment(torch.rand(bs, 1, res, res, device="cuda"))
            y = (torch.rand(bs, ncls, device="cuda") < prev).float()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model((x - 0.5) / 0.25)
            loss = _asl(logits, y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            with torch.no_grad():
                for pe, pm in zip(ema.parameters(), model.parameters()):
                    pe.mul_(0.999).add_(pm.detach(), alpha=0.001)
                for be, bm in zip(ema.buffers(), model.buffers()):
                    be.copy_(bm)
            step += 1
            if step % 20 == 0:
                loss.detach().cpu()
            if step % 40 == 0:
                scores, labs = [], []
                with torch.no_grad():
                    for _ in range(nval // vbs):
                        xv = torch.rand(vbs, 1, res, res, device="cuda")
                        with torch.autocast("cuda", dtype=torch.bfloat16):
                            scores.append(torch.sigmoid(ema((xv - 0.5) / 0.25).float()))
                        labs.append((torch.rand(vbs, ncls, device="cuda") < prev).float())
                    _auroc(torch.cat(scores), torch.cat(labs)).cpu()
                del scores, labs
            del x, y, logits, loss


# ---------------------------------------------------------------- ICD coding of discharge summaries


class _EncLayer(_nn.Module):
    """A pre-LN transformer encoder layer with a key-padding mask, attention by SDPA."""

    def __init__(self, d, nh, ff):
        super().__init__()
        self.nh = nh
        self.ln1, self.ln2 = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.out = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.ff = _nn.Sequential(_nn.Linear(d, ff), _nn.GELU(), _nn.Linear(ff, d))

    def forward(self, x, mask):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.nh, d // self.nh).permute(2, 0, 3, 1, 4)
        a = _F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.out(a.transpose(1, 2).reshape(b, t, d))
        return x + self.ff(self.ln2(x))


class _LaatIcd(_nn.Module):
    """PLM-ICD: the note's chunks through the encoder, all chunks' tokens joined, label-wise attention (a tanh
    projection, one query per code, softmax over the note's tokens), one logit per code."""

    def __init__(self, vocab, d, nh, ff, nl, ncodes, da, chunk):
        super().__init__()
        self.tok = _nn.Embedding(vocab, d)
        self.pos = _nn.Parameter(torch.randn(chunk, d) * 0.02)
        self.layers = _nn.ModuleList([_EncLayer(d, nh, ff) for _ in range(nl)])
        self.ln = _nn.LayerNorm(d)
        self.w = _nn.Linear(d, da)
        self.u = _nn.Parameter(torch.randn(ncodes, da) * 0.02)
        self.wo = _nn.Parameter(torch.randn(ncodes, d) * 0.02)
        self.bo = _nn.Parameter(torch.zeros(ncodes))

    def forward(self, ids, valid):  # ids (b, c, chunk), valid (b, c, chunk) float
        b, c, t = ids.shape
        x = self.tok(ids.view(b * c, t)) + self.pos
        mask = valid.view(b * c, 1, 1, t) > 0.5
        for layer in self.layers:
            x = layer(x, mask)
        h = self.ln(x).view(b, c * t, -1)
        z = torch.tanh(self.w(h))
        s = (z @ self.u.t()).transpose(1, 2)  # (b, codes, tokens)
        s = s + (valid.view(b, 1, c * t) - 1.0) * 1e4
        att = torch.softmax(s.float(), -1).to(h.dtype)
        v = att @ h  # (b, codes, d)
        return (v * self.wo).sum(-1) + self.bo


@_workload("automated ICD coding of discharge summaries (PLM-ICD / LAAT-style, written by hand, random init): notes of 300-3,072 tokens (log-uniform, drawn per note) cut into 512-token chunks, batches of 4 notes padded to the longest note's chunk count, a 6-layer pre-LN transformer encoder (d 512, 8 heads, FF 2,048, key-padding masks, SDPA) over all chunks, the chunks' tokens joined per note, label-wise attention of 8,922 ICD-9 codes over up to 3,072 tokens (softmax over the note's tokens, masked), one logit per code; 5-30 gold codes a note from a long-tailed prior; BCE, AdamW with warm-up and linear decay, clipping, bf16 autocast; 440 steps, every 110 an evaluation without grad on 16 held-out notes (micro-F1 at 0.5 and precision at 8 by top-k, read back)")
def icd_labelattn_notes_train(rng):
    vocab, chunk = 30000, _smoke(512, 16)
    ncodes = _smoke(8922, 50)
    model = _LaatIcd(vocab, _smoke(512, 32), _smoke(8, 2), _smoke(2048, 64), _smoke(6, 1), ncodes,
                     _smoke(512, 16), chunk).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.01)
    bs, maxc = _smoke(4, 2), _smoke(6, 3)
    nsteps, every = _smoke(440, 2), _smoke(110, 2)

    def batch():
        lens = [int(_loguniform(rng, _smoke(300, 8), chunk * maxc)) for _ in range(bs)]
        c = -(-max(lens) // chunk)
        ids = torch.randint(5, vocab, (bs, c, chunk), device="cuda")
        pos = torch.arange(c * chunk, device="cuda").view(1, c, chunk)
        # a chunk's first token ([CLS]) always valid, so that an all-padding chunk has a key to attend to
        valid = ((pos < torch.tensor(lens, device="cuda").view(bs, 1, 1)) | (pos % chunk == 0)).float()
        ids = ids * valid.long()
        y = torch.zeros(bs, ncodes, device="cuda")
        ncode = rng.randint(5, 30)
        idx = (ncodes * torch.rand(bs, ncode, device="cuda") ** 3).long().clamp_max(ncodes - 1)
        y.scatter_(1, idx, 1.0)
        return ids, valid, y

    for step in range(nsteps):
        lr = 5e-5 * min((step + 1) / 20, (nsteps - step) / (nsteps - 20))
        for g in opt.param_groups:
            g["lr"] = lr
        model.train()
        ids, valid, y = batch()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(ids, valid)
        loss = _F.binary_cross_entropy_with_logits(logits.float(), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if (step + 1) % 10 == 0:
            loss.detach().cpu()
        del ids, valid, y, logits, loss
        if (step + 1) % every == 0:
            model.eval()
            tp = torch.zeros((), device="cuda")
            npred = torch.zeros((), device="cuda")
            ngold = torch.zeros((), device="cuda")
            p8 = torch.zeros((), device="cuda")
            with torch.no_grad():
                for _ in range(_smoke(16, 2) // bs):
                    ids, valid, y = batch()
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        prob = torch.sigmoid(model(ids, valid).float())
                    pred = (prob > 0.5).float()
                    tp = tp + (pred * y).sum()
                    npred = npred + pred.sum()
                    ngold = ngold + y.sum()
                    top = prob.topk(min(8, ncodes), -1).indices
                    p8 = p8 + y.gather(1, top).mean(1).sum()
                    del ids, valid, y, prob, pred, top
            torch.stack([2 * tp / (npred + ngold + 1e-8), p8 / _smoke(16, 2)]).cpu()


# ---------------------------------------------------------------- multimodal survival analysis (Cox)


class _SurvFusion(_nn.Module):
    """Pathomic-Fusion-style: a slide embedding (768) through an MLP, 2,000 gene expressions through a
    self-normalising network (SELU, alpha dropout), clinical variables through an MLP, each to g dims, each with a
    1 appended, fused by a Kronecker (outer) product of the three, then an MLP to one log-risk."""

    def __init__(self, dp, dg, dc, g, hid):
        super().__init__()
        self.path = _nn.Sequential(_nn.Linear(dp, 128), _nn.ReLU(), _nn.Dropout(0.25), _nn.Linear(128, g))
        self.gen = _nn.Sequential(_nn.Linear(dg, 256), _nn.SELU(), _nn.AlphaDropout(0.1), _nn.Linear(256, 128),
                                  _nn.SELU(), _nn.AlphaDropout(0.1), _nn.Linear(128, g))
        self.clin = _nn.Sequential(_nn.Linear(dc, 32), _nn.ReLU(), _nn.Linear(32, g))
        self.fuse = _nn.Sequential(_nn.Linear((g + 1) ** 3, hid), _nn.ReLU(), _nn.Dropout(0.25),
                                   _nn.Linear(hid, 64), _nn.ReLU(), _nn.Linear(64, 1))

    def forward(self, xp, xg, xc):
        n = xp.shape[0]
        one = torch.ones(n, 1, device=xp.device)
        a = torch.cat([self.path(xp), one], 1)
        b = torch.cat([self.gen(xg), one], 1)
        c = torch.cat([self.clin(xc), one], 1)
        k = (a[:, :, None, None] * b[:, None, :, None] * c[:, None, None, :]).reshape(n, -1)
        return self.fuse(k)[:, 0]


def _cox_loss(risk, time, event):
    """Negative Cox partial log-likelihood (Breslow, no tie handling), risk sets by a descending sort of time."""
    order = time.argsort(descending=True)
    r, e = risk[order], event[order]
    return -((r - torch.logcumsumexp(r, 0)) * e).sum() / e.sum().clamp_min(1.0)


def _cindex(risk, time, event, block):
    """Harrell's concordance over all comparable pairs (i with an event and an earlier time than j), computed in
    row blocks of the n x n pair matrix on the device."""
    n = risk.shape[0]
    num = torch.zeros((), device=risk.device)
    den = torch.zeros((), device=risk.device)
    for s in range(0, n, block):
        ti, ri, ei = time[s:s + block, None], risk[s:s + block, None], event[s:s + block, None]
        comp = (ti < time[None]).float() * ei
        conc = (ri > risk[None]).float() + 0.5 * (ri == risk[None]).float()
        num = num + (comp * conc).sum()
        den = den + comp.sum()
    return num / den.clamp_min(1.0)


@_workload("multimodal survival analysis with the Cox partial likelihood, Pathomic-Fusion-style, written by hand (random init): a 768-dim slide embedding through an MLP, 2,000 gene expressions through a self-normalising network (SELU, alpha dropout), 24 clinical variables through an MLP, each to 16-32 dims (drawn per cohort) with a 1 appended, fused by their Kronecker product (up to 35,937 dims) and an MLP to a log-risk; 4 cohorts of 1,000-30,000 patients (log-uniform; features, censored survival times and events drawn on the device), five-fold cross-validation with a fresh model and Adam per fold, 80 minibatch steps of 512 patients (Cox loss over the batch's risk sets by a descending sort and logcumsumexp, plus L1 on the fusion weights), fp32; each fold's held-out patients scored without grad and Harrell's concordance over all comparable pairs computed on the device in 2,048-row blocks of the pair matrix, read back")
def cox_multimodal_survival_cv(rng):
    dp, dg, dc = 768, _smoke(2000, 32), 24
    bs, block = _smoke(512, 16), _smoke(2048, 8)
    for cohort in range(_smoke(4, 1)):
        n = int(_loguniform(rng, _smoke(1000, 40), _smoke(30000, 60)))
        g = rng.choice(_smoke([16, 24, 32], [4]))
        hid = rng.choice(_smoke([256, 512], [16]))
        xp = torch.randn(n, dp, device="cuda")
        xg = torch.randn(n, dg, device="cuda")
        xc = torch.randn(n, dc, device="cuda")
        haz = torch.exp(0.3 * xp[:, 0] + 0.2 * xg[:, :4].sum(1) + 0.1 * xc[:, 0])
        tevent = -torch.log(torch.rand(n, device="cuda")) / haz
        tcens = 3.0 * torch.rand(n, device="cuda")
        time = torch.minimum(tevent, tcens)
        event = (tevent <= tcens).float()
        perm = torch.randperm(n, device="cuda")
        fold_size = n // 5
        for fold in range(_smoke(5, 2)):
            va = perm[fold * fold_size:(fold + 1) * fold_size]
            tr = torch.cat([perm[:fold * fold_size], perm[(fold + 1) * fold_size:]])
            ntr = tr.shape[0]
            model = _SurvFusion(dp, dg, dc, g, hid).cuda()
            opt = torch.optim.Adam(model.parameters(), lr=2e-4, weight_decay=4e-4)
            model.train()
            for step in range(_smoke(80, 2)):
                idx = tr[torch.randint(0, ntr, (min(bs, ntr),), device="cuda")]
                risk = model(xp[idx], xg[idx], xc[idx])
                loss = _cox_loss(risk, time[idx], event[idx]) + 1e-5 * model.fuse[0].weight.abs().sum()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                if (step + 1) % 20 == 0:
                    loss.detach().cpu()
                del risk, loss
            model.eval()
            with torch.no_grad():
                risk = torch.cat([model(xp[va[s:s + 2048]], xg[va[s:s + 2048]], xc[va[s:s + 2048]])
                                  for s in range(0, fold_size, 2048)])
                _cindex(risk, time[va], event[va], block).cpu()
            del model, opt, risk, va, tr
        del xp, xg, xc, haz, tevent, tcens, time, event, perm

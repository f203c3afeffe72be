"""The seventy-sixth batch of held-out workloads for record.py, second half (the first is batch76.py): law,
documents and the digital humanities, written in torch alone. Legal judgment prediction with a hierarchical
encoder (ECtHR-style cases of 8-64 paragraphs, the valid paragraphs of a batch packed on the host's counts and
encoded together, scattered back into cases for a paragraph-level transformer, multi-label article prediction with a
violation head, micro and macro F1 from device sums at evaluation points), writer identification and dating of
manuscript patches (a ViT-S-like encoder at drawn resolutions with interpolated position embeddings, an ArcFace
margin over 1,800 writers drawn as writers x patches batches, a date head over 26 quarter-century bins with soft
targets, retrieval top-1 and date error at evaluation points), historical document binarisation and restoration (a
U-Net over grey-level patches at drawn sizes degraded on the device by bleed-through, stains, fading, blur and noise,
restoration and binarisation heads, PSNR and F-measure at evaluation points) and a receipt and invoice key-information
extraction service (Donut-style: each request's uint8 page images uploaded on a side stream, a convolutional and
transformer encoder, a transformer decoder with cross-attention and a self-attention KV cache decoding a field
sequence greedily for a drawn number of tokens). Same conventions as the earlier batches: nothing downloaded, data
drawn at random on the device (or, for the extraction service, from two reused pinned host buffers), `rng` the
workload's random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)` so that
RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: paragraph counts, resolutions, patch sizes,
decoding lengths and request sizes are fixed on the host, masks multiplied in or selected with torch.where, no
boolean-mask indexing; losses, F1 scores, retrieval accuracies, PSNRs and decoded fields are read back only at
logging points. receipt_kie_donut_serve uses a side stream (uploads waited on by event, the tensors
record_stream'ed); the others are single-stream. The networks run under bf16 autocast; the losses, the ArcFace
margin and the metrics are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new76.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and
for which of them the CPU smoke run (RECORD_SMOKE=1) ran.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, randint

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _keymask_bias(keymask, dtype):
    """An additive key-padding mask (B, 1, 1, L) from a float mask (B, L) of valid keys."""
    return ((1 - keymask) * -1e4)[:, None, None, :].to(dtype)


# ---------------------------------------------------------------- hierarchical legal judgment prediction


class _HierLegal(_nn.Module):
    def __init__(self, vocab, d, heads, layers, doc_layers, plen, maxpar, articles):
        super().__init__()
        self.emb, self.pos = _nn.Embedding(vocab, d), _nn.Embedding(plen, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.ppos = _nn.Embedding(maxpar, d)
        self.doc = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(doc_layers))
        self.dnorm = _nn.LayerNorm(d)
        self.articles, self.violation = _nn.Linear(d, articles), _nn.Linear(d, 1)

    def forward(self, ids, tokmask, slot, nslots, parmask):
        """ids, tokmask (N, plen): the packed valid paragraphs; slot (N,) their places in (B * P); parmask (B, P)."""
        h = self.emb(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
        mask = _keymask_bias(tokmask, h.dtype)
        for blk in self.blocks:
            h = blk(h, mask=mask)
        cls = self.norm(h)[:, 0]
        b, p = parmask.shape
        doc = torch.zeros(nslots, cls.shape[1], device=cls.device, dtype=cls.dtype).index_copy(0, slot, cls)
        doc = doc.view(b, p, -1) + self.ppos(torch.arange(p, device=ids.device))
        dmask = _keymask_bias(parmask, doc.dtype)
        for blk in self.doc:
            doc = blk(doc, mask=dmask)
        doc = self.dnorm(doc)
        pooled = (doc + ((parmask - 1) * 1e4)[..., None].to(doc.dtype)).amax(1)
        return self.articles(pooled).float(), self.violation(pooled).float()[:, 0]


def _cases(rng, b, plen, lo, hi, vocab, articles):
    """b cases of lo-hi paragraphs (host-drawn counts), the valid paragraphs packed: ids, token mask, slots,
    paragraph mask (b, P), article labels (b, articles) and the violation label (b,)."""
    counts = [rng.randint(lo, hi) for _ in range(b)]
    p = max(counts)
    slots = [i * p + j for i, c in enumerate(counts) for j in range(c)]
    n = len(slots)
    lens = torch.randint(plen // 8, plen + 1, (n, 1), device="cuda")
    tokmask = (torch.arange(plen, device="cuda")[None] < lens).float()
    ids = torch.randint(5, vocab, (n, plen), device="cuda") * tokmask.long()
    ids[:, 0] = 1
    parmask = (torch.arange(p, device="cuda")[None] < torch.tensor(counts, device="cuda")[:, None]).float()
    rate = torch.linspace(0.35, 0.02, articles, device="cuda")
    labels = (torch.rand(b, articles, device="cuda") < rate).float()
    violation = labels.amax(1)
    return ids, tokmask, torch.tensor(slots, device="cuda"), b * p, parmask, labels, violation


@_workload("legal judgment prediction training (ECtHR-style, a hierarchical LegalBERT-like encoder, random init): cases of 8-64 paragraphs (drawn per case) of up to 128 tokens (lengths drawn on the device), the valid paragraphs of a batch packed by the host's counts and encoded together by 6 pre-norm blocks (width 512, 8 heads, vocabulary 32,000), their [CLS] states placed back into (cases x paragraphs) by index_copy, paragraph positions, 2 paragraph-level blocks under a paragraph mask, masked max-pooling, 10 article logits (multi-label BCE) and a violation logit; AdamW with warmup and linear decay, clipping, bf16 autocast, 2-4 cases a step (drawn), 315 steps; the loss read back every 10 steps and every 50 steps an evaluation over 8 batches of 4 cases with micro and macro F1 of the articles and the violation accuracy from device sums read back")
def ecthr_hierarchical_judgment_train(rng):
    vocab, d, heads = _smoke(32000, 64), _smoke(512, 16), _smoke(8, 2)
    layers, doc_layers, plen, articles = _smoke(6, 1), _smoke(2, 1), _smoke(128, 16), 10
    plo, phi = _smoke(8, 2), _smoke(64, 5)
    model = _HierLegal(vocab, d, heads, layers, doc_layers, plen, phi, articles).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-5, weight_decay=0.01)
    steps = _smoke(315, 3)
    pw = torch.linspace(1.0, 6.0, articles, device="cuda")
    for step in range(steps):
        model.train()
        for g in opt.param_groups:
            g["lr"] = 3e-5 * min(1.0, (step + 1) / 25) * max(0.02, 1 - step / steps)
        b = rng.randint(_smoke(2, 2), _smoke(4, 3))
        ids, tokmask, slot, nslots, parmask, labels, violation = _cases(rng, b, plen, plo, phi, vocab, articles)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            art, vio = model(ids, tokmask, slot, nslots, parmask)
        loss = _F.binary_cross_entropy_with_logits(art, labels, pos_weight=pw) \
            + 0.5 * _F.binary_cross_entropy_with_logits(vio, violation)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            loss.item()
        del ids, tokmask, slot, parmask, labels, violation, art, vio, loss
        if (step + 1) % _smoke(50, 2) == 0:
            model.eval()
            tp = torch.zeros(articles, device="cuda")
            fp, fn, vcorrect = torch.zeros_like(tp), torch.zeros_like(tp), torch.zeros((), device="cuda")
            with torch.no_grad():
                for _ in range(_smoke(8, 1)):
                    ids, tokmask, slot, nslots, parmask, labels, violation = _cases(rng, _smoke(4, 2), plen, plo,
                                                                                  phi, vocab, articles)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        art, vio = model(ids, tokmask, slot, nslots, parmask)
                    pred = (art > 0).float()
                    tp += (pred * labels).sum(0)
                    fp += (pred * (1 - labels)).sum(0)
                    fn += ((1 - pred) * labels).sum(0)
                    vcorrect += ((vio > 0).float() == violation).float().sum()
                    del ids, tokmask, slot, parmask, labels, violation, art, vio, pred
                micro = 2 * tp.sum() / (2 * tp.sum() + fp.sum() + fn.sum()).clamp(min=1)
                macro = (2 * tp / (2 * tp + fp + fn).clamp(min=1)).mean()
                out = torch.stack([micro, macro, vcorrect / (_smoke(8, 1) * _smoke(4, 2))])
            out.tolist()
            del tp, fp, fn, vcorrect, micro, macro, out


# ---------------------------------------------------------------- manuscript writer identification and dating


class _ViT(_nn.Module):
    def __init__(self, patch, d, heads, layers, grid, emb):
        super().__init__()
        self.patch, self.grid = patch, grid
        self.embed = _nn.Conv2d(3, d, patch, patch)
        self.cls = _nn.Parameter(torch.zeros(1, 1, d))
        self.pos = _nn.Parameter(torch.randn(1, grid * grid, d) * 0.02)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.head = _nn.Linear(d, emb)

    def forward(self, x):
        h = self.embed(x)
        gh, gw = h.shape[-2:]
        pos = self.pos
        if (gh, gw) != (self.grid, self.grid):
            pos = _F.interpolate(pos.view(1, self.grid, self.grid, -1).permute(0, 3, 1, 2), size=(gh, gw),
                                 mode="bicubic", align_corners=False).permute(0, 2, 3, 1).flatten(1, 2)
        h = h.flatten(2).transpose(1, 2) + pos
        h = torch.cat([self.cls.expand(h.shape[0], -1, -1).to(h.dtype), h], 1)
        for blk in self.blocks:
            h = blk(h)
        return self.head(self.norm(h)[:, 0])


def _manuscript_patches(writers, k, res, style):
    """k patches of each writer at res x res: ink strokes from smooth noise shaped by a per-writer stroke
    orientation and thickness (style (W, 2)), on a parchment tone; (writers * k, 3, res, res)."""
    b = writers.shape[0] * k
    n = torch.randn(b, 1, res // 8, res // 8, device="cuda")
    n = _F.interpolate(n, size=(res, res), mode="bilinear", align_corners=False)
    st = style[writers].repeat_interleave(k, 0)
    yy = torch.arange(res, device="cuda").float()
    lines = torch.sin(yy[None, :, None] * (0.15 + 0.1 * st[:, :1, None]) + st[:, 1:, None] * 6.0)
    ink = torch.sigmoid((n[:, 0] + 0.8 * lines - 0.7) * (6 + 4 * st[:, :1, None]))
    tone = torch.tensor([0.93, 0.86, 0.72], device="cuda")[None, :, None, None]
    x = tone * (1 - 0.85 * ink[:, None]) + 0.03 * torch.randn(b, 3, res, res, device="cuda")
    return (x - 0.75) / 0.2


@_workload("manuscript writer identification and dating training (a ViT-S-like encoder, random init, on historical handwriting patches): batches of 8-16 writers x 4 patches (drawn writers from 1,800), patches synthesised on the device from per-writer stroke styles at 224, 256 or 288 px (drawn), the 14 x 14 position embeddings interpolated bicubically to the drawn grid; 8 pre-norm blocks, width 384, 6 heads, patch 16, a 512-d embedding with an ArcFace margin head (s 30, m 0.3) over the writers and a date head over 26 quarter-century bins (1000-1650) trained on Gaussian soft targets; AdamW with warmup and cosine decay, clipping, bf16 autocast, 300 steps; the loss read back every 10 steps and every 50 steps an evaluation over 384 patches of 96 writers at 256 px embedded in batches of 64: a cosine similarity matrix with the diagonal excluded, top-1 writer retrieval and the mean absolute date error of the expected year read back")
def manuscript_writer_dating_train(rng):
    nwriters, bins = _smoke(1800, 12), 26
    d, heads, layers, emb = _smoke(384, 16), _smoke(6, 2), _smoke(8, 1), _smoke(512, 8)
    patch = _smoke(16, 8)
    model = _ViT(patch, d, heads, layers, 14 if patch == 16 else 4, emb).cuda()
    arc = _nn.Parameter(torch.randn(nwriters, emb, device="cuda") * 0.01)
    dhead = _nn.Linear(emb, bins).cuda()
    params = list(model.parameters()) + [arc] + list(dhead.parameters())
    opt = torch.optim.AdamW(params, lr=5e-4, weight_decay=0.05)
    style = torch.rand(nwriters, 2, device="cuda")
    wdate = torch.rand(nwriters, device="cuda") * (bins - 1)  # each writer's period, in bins
    centres = torch.arange(bins, device="cuda").float()
    steps, k = _smoke(300, 3), 4
    res_choices = _smoke([224, 256, 288], [32, 40])
    s_arc, m_arc = 30.0, 0.3

    def soft(writers):
        t = wdate[writers].repeat_interleave(k, 0)
        q = torch.exp(-(centres[None] - t[:, None]) ** 2 / 2.0)
        return q / q.sum(1, keepdim=True), t

    for step in range(steps):
        model.train()
        for g in opt.param_groups:
            g["lr"] = 5e-4 * min(1.0, (step + 1) / 20) * 0.5 * (1 + math.cos(math.pi * step / steps))
        nw = rng.randint(_smoke(8, 2), _smoke(16, 3))
        res = rng.choice(res_choices)
        writers = torch.tensor(rng.sample(range(nwriters), nw), device="cuda")
        x = _manuscript_patches(writers, k, res, style)
        labels = writers.repeat_interleave(k, 0)
        target, _ = soft(writers)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            e = model(x)
        e = _F.normalize(e.float(), dim=-1)
        cos = e @ _F.normalize(arc, dim=-1).T
        onehot = _F.one_hot(labels, nwriters).float()
        theta = torch.acos(cos.clamp(-1 + 1e-6, 1 - 1e-6))
        logits = s_arc * torch.where(onehot > 0, torch.cos(theta + m_arc), cos)
        dl = dhead(e)
        loss = _F.cross_entropy(logits, labels) + (-(target * dl.log_softmax(-1)).sum(1)).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 3.0)
        opt.step()
        if step % 10 == 0:
            loss.item()
        del writers, x, labels, target, e, cos, onehot, theta, logits, dl, loss
        if (step + 1) % _smoke(50, 2) == 0:
            model.eval()
            ew = _smoke(96, 4)
            writers = torch.tensor(rng.sample(range(nwriters), ew), device="cuda")
            embs, dates = [], []
            with torch.no_grad():
                per = _smoke(16, 2)  # writers per batch of 64 patches
                for s in range(0, ew, per):
                    x = _manuscript_patches(writers[s:s + per], k, _smoke(256, 32), style)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        e = _F.normalize(model(x).float(), dim=-1)
                    embs.append(e)
                    dates.append((dhead(e).softmax(-1) * centres).sum(1))
                    del x, e
                e, pdate = torch.cat(embs), torch.cat(dates)
                labels = writers.repeat_interleave(k, 0)
                sim = e @ e.T - 10 * torch.eye(e.shape[0], device="cuda")
                nn_i = sim.argmax(1)
                top1 = (labels[nn_i] == labels).float().mean()
                _, t = soft(writers)
                mae = (pdate - t).abs().mean() * 25.0
            torch.stack([top1, mae]).tolist()
            del writers, embs, dates, e, pdate, labels, sim, nn_i, top1, t, mae


# ---------------------------------------------------------------- historical document binarisation and restoration


def _gauss_blur(x, sigma, size):
    """Separable Gaussian blur of (B, 1, H, W) by depthwise convolutions."""
    r = torch.arange(size, device="cuda").float() - size // 2
    k = torch.exp(-r ** 2 / (2 * sigma * sigma))
    k = k / k.sum()
    x = _F.conv2d(x, k.view(1, 1, 1, size), padding=(0, size // 2))
    return _F.conv2d(x, k.view(1, 1, size, 1), padding=(size // 2, 0))


def _degraded_pages(b, res):
    """Clean text (text lines of thresholded smooth noise), its binary ground truth, and the degraded scan:
    parchment background, bleed-through of another page's text (mirrored and blurred), stains, fading, blur and
    noise. Each (B, 1, res, res)."""
    def text():
        n = _F.interpolate(torch.randn(b, 1, res // 4, res // 4, device="cuda"), size=(res, res), mode="bilinear",
                           align_corners=False)
        rows = torch.arange(res, device="cuda").float()
        pitch = 24 + 16 * torch.rand(b, 1, 1, 1, device="cuda")
        band = (torch.sin(rows[None, None, :, None] * 2 * math.pi / pitch) > 0.2).float()
        return ((n - 0.9) * band > 0).float()

    gt = text()
    clean = 1 - 0.9 * gt
    back = _gauss_blur(text().flip(-1), 1.5, 7)
    paper = 0.8 + 0.1 * _F.interpolate(torch.rand(b, 1, 8, 8, device="cuda"), size=(res, res), mode="bicubic",
                                       align_corners=False)
    yy = torch.arange(res, device="cuda").float()
    c = torch.rand(b, 3, 2, device="cuda") * res
    rad = (0.05 + 0.15 * torch.rand(b, 3, 1, 1, device="cuda")) * res
    d2 = (yy[None, None, :, None] - c[..., 1, None, None]) ** 2 + (yy[None, None, None, :] - c[..., 0, None, None]) ** 2
    stain = (0.3 * torch.rand(b, 3, 1, 1, device="cuda") * torch.exp(-d2 / (2 * rad ** 2))).sum(1, keepdim=True)
    fade = 0.5 + 0.5 * torch.rand(b, 1, 1, 1, device="cuda")
    scan = paper * (1 - fade * 0.9 * gt) - 0.25 * back - stain
    scan = _gauss_blur(scan, 0.8, 5) + 0.03 * torch.randn(b, 1, res, res, device="cuda")
    return scan.clamp(0, 1), clean, gt


class _UNet(_nn.Module):
    def __init__(self, base, levels):
        super().__init__()

        def block(i, o):
            return _nn.Sequential(_nn.Conv2d(i, o, 3, padding=1, bias=False), _nn.BatchNorm2d(o), _nn.ReLU(inplace=True),
                                  _nn.Conv2d(o, o, 3, padding=1, bias=False), _nn.BatchNorm2d(o), _nn.ReLU(inplace=True))

        ch = [base * 2 ** i for i in range(levels + 1)]
        self.down = _nn.ModuleList([block(1, ch[0])] + [block(ch[i], ch[i + 1]) for i in range(levels)])
        self.up = _nn.ModuleList(_nn.ConvTranspose2d(ch[i + 1], ch[i], 2, 2) for i in reversed(range(levels)))
        self.dec = _nn.ModuleList(block(2 * ch[i], ch[i]) for i in reversed(range(levels)))
        self.out = _nn.Conv2d(ch[0], 2, 1)

    def forward(self, x):
        skips = []
        h = x
        for i, blk in enumerate(self.down):
            h = blk(h if i == 0 else _F.max_pool2d(h, 2))
            skips.append(h)
        for up, dec, s in zip(self.up, self.dec, reversed(skips[:-1])):
            h = dec(torch.cat([up(h), s], 1))
        o = self.out(h).float()
        return (x + o[:, :1]).clamp(0, 1), o[:, 1:]


@_workload("historical document binarisation and restoration training (DIBCO-style, a U-Net, random init): grey-level patches of 256-512 px (drawn, a multiple of 64) with batch sizes fitted to the size (4-16, drawn), degraded on the device from synthetic text lines: a parchment background, bleed-through of another page's text mirrored and blurred by separable Gaussian depthwise convolutions, three stains, fading, blur and noise; a 4-level U-Net (base 32, conv-BN-ReLU pairs, transposed-convolution upsampling, skip concatenation) with a residual restoration head and a binarisation head; L1 restoration loss, BCE and soft Dice on the binarisation, AdamW with cosine decay, clipping, bf16 autocast, channels-last, 510 steps; the loss read back every 10 steps and every 50 steps an evaluation over 4 batches of 6 patches at 512 px with the PSNR of the restoration and the F-measure of the binarisation from device sums read back")
def historical_doc_binarize_unet_train(rng):
    base, levels = _smoke(32, 4), _smoke(4, 2)
    model = _UNet(base, levels).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    steps = _smoke(510, 3)
    sizes = _smoke({256: (10, 16), 320: (8, 12), 384: (6, 10), 448: (5, 8), 512: (4, 6)}, {32: (2, 3), 64: (1, 2)})

    def loss_of(restored, logit, clean, gt):
        p = torch.sigmoid(logit)
        dice = 1 - (2 * (p * gt).sum((1, 2, 3)) + 1) / (p.sum((1, 2, 3)) + gt.sum((1, 2, 3)) + 1)
        return (restored - clean).abs().mean() + _F.binary_cross_entropy_with_logits(logit, gt) + dice.mean()

    for step in range(steps):
        model.train()
        for g in opt.param_groups:
            g["lr"] = 1e-3 * 0.5 * (1 + math.cos(math.pi * step / steps))
        res = rng.choice(sorted(sizes))
        b = rng.randint(*sizes[res])
        scan, clean, gt = _degraded_pages(b, res)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            restored, logit = model(scan.contiguous(memory_format=torch.channels_last))
        loss = loss_of(restored, logit, clean, gt)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            loss.item()
        del scan, clean, gt, restored, logit, loss
        if (step + 1) % _smoke(50, 2) == 0:
            model.eval()
            sums = torch.zeros(4, device="cuda")
            n = _smoke(4, 1)
            with torch.no_grad():
                for _ in range(n):
                    scan, clean, gt = _degraded_pages(_smoke(6, 2), max(sizes))
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        restored, logit = model(scan.contiguous(memory_format=torch.channels_last))
                    mse = (restored - clean).pow(2).mean((1, 2, 3))
                    pred = (logit > 0).float()
                    sums += torch.stack([(10 * torch.log10(1 / mse.clamp(min=1e-10))).mean(), (pred * gt).sum(),
                                         (pred * (1 - gt)).sum(), ((1 - pred) * gt).sum()])
                    del scan, clean, gt, restored, logit, mse, pred
                fm = 2 * sums[1] / (2 * sums[1] + sums[2] + sums[3]).clamp(min=1)
            torch.stack([sums[0] / n, fm]).tolist()
            del sums, fm


# ---------------------------------------------------------------- receipt / invoice key-information extraction service


class _ConvNeXtBlock(_nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dw = _nn.Conv2d(c, c, 7, padding=3, groups=c)
        self.norm = _nn.LayerNorm(c)
        self.fc1, self.fc2 = _nn.Linear(c, 4 * c), _nn.Linear(4 * c, c)

    def forward(self, x):
        h = self.dw(x).permute(0, 2, 3, 1)
        h = self.fc2(_F.gelu(self.fc1(self.norm(h))))
        return x + h.permute(0, 3, 1, 2)


class _DocEncoder(_nn.Module):
    """A ConvNeXt-like stem and two stages to stride 16, then transformer blocks over the stride-16 tokens."""

    def __init__(self, d, heads, layers):
        super().__init__()
        c1, c2 = d // 4, d // 2
        self.stem = _nn.Sequential(_nn.Conv2d(3, c1, 4, 4), _nn.GroupNorm(1, c1))
        self.s1 = _nn.Sequential(_ConvNeXtBlock(c1), _ConvNeXtBlock(c1))
        self.d1 = _nn.Sequential(_nn.GroupNorm(1, c1), _nn.Conv2d(c1, c2, 2, 2))
        self.s2 = _nn.Sequential(_ConvNeXtBlock(c2), _ConvNeXtBlock(c2))
        self.d2 = _nn.Sequential(_nn.GroupNorm(1, c2), _nn.Conv2d(c2, d, 2, 2))
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)

    def forward(self, x):
        h = self.d2(self.s2(self.d1(self.s1(self.stem(x)))))
        gh, gw = h.shape[-2:]
        yy = torch.arange(gh, device=x.device).float()[:, None].expand(gh, gw).flatten()
        xx = torch.arange(gw, device=x.device).float()[None].expand(gh, gw).flatten()
        dq = h.shape[1] // 4
        f = torch.exp(-math.log(10000) * torch.arange(dq, device=x.device).float() / dq)
        pe = torch.cat([(yy[:, None] * f).sin(), (yy[:, None] * f).cos(), (xx[:, None] * f).sin(),
                        (xx[:, None] * f).cos()], 1)
        h = h.flatten(2).transpose(1, 2) + pe.to(h.dtype)
        for blk in self.blocks:
            h = blk(h)
        return self.norm(h)


class _DecLayer(_nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.n1, self.n2, self.n3 = _nn.LayerNorm(d), _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.o1 = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.q, self.kv, self.o2 = _nn.Linear(d, d), _nn.Linear(d, 2 * d), _nn.Linear(d, d)
        self.fc1, self.fc2 = _nn.Linear(d, 4 * d), _nn.Linear(4 * d, d)

    def split(self, t):
        return t.unflatten(-1, (self.h, -1)).transpose(1, 2)

    def memory(self, mem):
        k, v = self.kv(mem).chunk(2, -1)
        return self.split(k), self.split(v)

    def forward(self, x, cache, cross, causal):
        """x (B, T, d); cache: (k, v) of the earlier positions or None; cross: the memory's (k, v)."""
        q, k, v = (self.split(t) for t in self.qkv(self.n1(x)).chunk(3, -1))
        if cache is not None:
            k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
        a = _F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        x = x + self.o1(a.transpose(1, 2).flatten(2))
        a = _F.scaled_dot_product_attention(self.split(self.q(self.n2(x))), *cross)
        x = x + self.o2(a.transpose(1, 2).flatten(2))
        return x + self.fc2(_F.gelu(self.fc1(self.n3(x)))), (k, v)


class _FieldDecoder(_nn.Module):
    def __init__(self, vocab, d, heads, layers, maxlen):
        super().__init__()
        self.emb, self.pos = _nn.Embedding(vocab, d), _nn.Embedding(maxlen, d)
        self.layers = _nn.ModuleList(_DecLayer(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.out = _nn.Linear(d, vocab, bias=False)

    def step(self, ids, start, caches, crosses):
        x = self.emb(ids) + self.pos(torch.arange(start, start + ids.shape[1], device=ids.device))
        new = []
        for layer, cache, cross in zip(self.layers, caches, crosses):
            x, kv = layer(x, cache, cross, causal=cache is None and ids.shape[1] > 1)
            new.append(kv)
        return self.out(self.norm(x[:, -1])), new


@_workload("receipt and invoice key-information extraction service (Donut-style OCR-free document understanding, random init): 20-23 requests (drawn) of 1-4 scanned documents (drawn) at 640 x 480, 768 x 576 or 960 x 720 px (drawn a request), the uint8 pixels of each request uploaded on a side stream from two reused pinned host buffers one request ahead (waited on by event, record_stream'ed), normalised on the device; an encoder of a ConvNeXt-like stem and two stages to stride 16 (widths 96 and 192, two blocks each) and 4 pre-norm transformer blocks (width 384, 6 heads, 2-D sinusoidal positions) over the stride-16 tokens; a 4-layer transformer decoder (width 384, 6 heads, vocabulary 16,000 of field tags and text pieces) with cross-attention keys and values computed once and a self-attention KV cache grown by concatenation, a task prompt of 3 tokens, greedy decoding of 40-120 field tokens (drawn a request) under bf16 autocast; each request's decoded field ids and mean token confidence read back")
def receipt_kie_donut_serve(rng):
    d, heads, vocab = _smoke(384, 16), _smoke(6, 2), _smoke(16000, 64)
    enc = _DocEncoder(d, heads, _smoke(4, 1)).cuda().eval()
    dec = _FieldDecoder(vocab, d, heads, _smoke(4, 1), _smoke(128, 16)).cuda().eval()
    enc.requires_grad_(False)
    dec.requires_grad_(False)
    sizes = _smoke([(640, 480), (768, 576), (960, 720)], [(64, 48), (96, 64)])
    maxdocs = 4
    hmax, wmax = sizes[-1]
    host = [torch.randint(0, 256, (maxdocs * 3 * hmax * wmax,), dtype=torch.uint8).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda")[None, :, None, None] * 255
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda")[None, :, None, None] * 255

    def draw():
        hh, ww = rng.choice(sizes)
        return rng.randint(1, maxdocs), hh, ww, rng.randint(_smoke(40, 3), _smoke(120, 8))

    nreq = rng.randint(_smoke(20, 2), _smoke(23, 3))
    plan = [draw() for _ in range(nreq)]
    nxt = up.upload(0, plan[0][0] * 3 * plan[0][1] * plan[0][2])
    for i in range(nreq):
        b, hh, ww, ntok = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, plan[i + 1][0] * 3 * plan[i + 1][1] * plan[i + 1][2])
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            x = (raw.view(b, 3, hh, ww).float() - mean) / std
            mem = enc(x)
            crosses = [layer.memory(mem) for layer in dec.layers]
            prompt = torch.tensor([[3, 7, 11]], device="cuda").expand(b, 3)
            logits, caches = dec.step(prompt, 0, [None] * len(dec.layers), crosses)
            toks, confs = [], []
            for t in range(ntok):
                p = logits.float().softmax(-1)
                conf, tok = p.max(-1)
                toks.append(tok)
                confs.append(conf)
                logits, caches = dec.step(tok[:, None], 3 + t, caches, crosses)
                del p
            out = torch.cat([torch.stack(toks, 1).float(), torch.stack(confs, 1).mean(1, keepdim=True)], 1)
        out.tolist()
        del item, raw, x, mem, crosses, prompt, logits, caches, toks, confs, out

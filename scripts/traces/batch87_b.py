"""The eighty-seventh batch of held-out workloads for record.py, second half (see batch87.py): insurance, claims and
actuarial work, written in torch alone. A claim-triage service (an FT-Transformer over the numeric and categorical
fields of first-notice-of-loss claims arriving in requests of drawn sizes, severity, fraud and routing heads, business
rules by torch.where), a vehicle damage detection service (an FCOS-style anchor-free detector over claim photographs
of drawn resolutions, top-k detections with a matrix-NMS decay and repair-cost estimates), call-centre intent
training (a conformer-style encoder over telephony audio of drawn durations per call through an on-device STFT and
mel filterbank, masked pooling, intent, sentiment and escalation heads) and a catastrophe-loss simulation (parametric
hurricane wind fields refined by a Fourier-neural-operator surrogate, a portfolio of exposures of drawn sizes looked up
on the hazard grid, vulnerability curves, policy terms, year loss tables and exceedance-probability quantiles).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the two services), `rng` the workload's random.Random for every shape, count and sampled choice,
sizes through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or
masked_fill; no boolean-mask indexing; results read back only at logging points or once per request.
claim_triage_fttransformer_serve and damage_photo_detect_serve upload their inputs on a side stream (two reused pinned
host buffers, one request ahead, the main stream waiting on an event, the tensors record_stream'ed, as
workload_helpers.SideUploads does); the other two are single-stream. Models run under bf16 autocast. Every table is
sized for the largest index that can be drawn.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _loguniform(rng, lo, hi, mult=1):
    return _b.rec._loguniform(rng, lo, hi, mult)


# ---------------------------------------------------------------- claim triage service (FT-Transformer)


class _FTTransformer(_nn.Module):
    """Numeric fields as per-field linear tokens, categorical fields as rows of one table (per-field offsets), a CLS
    token, pre-norm blocks; severity, fraud and routing heads on the CLS token."""

    def __init__(self, n_num, cards, d, heads, layers, n_queues):
        super().__init__()
        self.w_num, self.b_num = _nn.Parameter(torch.randn(n_num, d) * 0.02), _nn.Parameter(torch.zeros(n_num, d))
        self.register_buffer("offsets", torch.tensor([0] + list(cards[:-1])).cumsum(0))
        self.cat = _nn.Embedding(sum(cards), d)
        self.cls = _nn.Parameter(torch.zeros(1, 1, d))
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads, 2 * d) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.severity, self.fraud, self.route = mlp(d, d, 2), mlp(d, d, 1), mlp(d, d, n_queues)

    def forward(self, num, cat):
        t = torch.cat([self.cls.expand(num.shape[0], -1, -1), num[..., None] * self.w_num + self.b_num,
                       self.cat(cat + self.offsets)], 1)
        for blk in self.blocks:
            t = blk(t)
        c = self.norm(t[:, 0])
        return self.severity(c).float(), self.fraud(c)[:, 0].float(), self.route(c).float()


@_workload("claim-triage serving (random init, an FT-Transformer scoring first-notice-of-loss claims): 1,720-1,820 requests (drawn) of 1-256 claims each (log-uniform), each claim 32 numeric fields (int32 quantities, log-scaled per field and standardised over the request on the device) and 14 categorical fields (4-400 codes each); the int32 fields uploaded on a side stream from two reused pinned host buffers one request ahead (two spans of one buffer, waited on by event, record_stream'ed); per-field numeric tokens and one offset categorical table (1,225 rows, the sum of the fields' code counts), a CLS token, 4 pre-norm blocks (width 192, 8 heads) under bf16 autocast, heads for log-severity mean and spread, fraud probability and 9 handling queues; business rules by torch.where (a reported amount over 90,000 or one code of the second categorical field to queue 7, a fraud probability over 0.8 to queue 8, an amount under 2,000 with another code of that field to queue 0), the reserve estimate from a log-normal mean; each request's queue, fraud score and reserve read back")
def claim_triage_fttransformer_serve(rng):
    n_num, d, heads, layers, n_queues = 32, _smoke(192, 16), _smoke(8, 2), _smoke(4, 1), 9
    cards = [6, 24, 120, 8, 400, 60, 12, 30, 200, 5, 16, 40, 4, 300]
    model = _FTTransformer(n_num, cards, d, heads, layers, n_queues).cuda().eval()
    model.requires_grad_(False)
    maxb, n_cat = _smoke(256, 8), len(cards)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = []
    for _ in range(2):
        num = torch.randint(0, 100000, (maxb * n_num,), dtype=torch.int32, generator=gen)
        cat = torch.stack([torch.randint(0, c, (maxb,), dtype=torch.int32, generator=gen) for c in cards], 1)
        host.append(torch.cat([num, cat.flatten()]).pin_memory())
    up = SideUploads(host)
    scale = torch.logspace(-5, -1, n_num, device="cuda")
    nreq = rng.randint(_smoke(1720, 3), _smoke(1820, 4))
    plan = [_loguniform(rng, 1, maxb) for _ in range(nreq)]

    def spans(i):
        b = plan[i]
        return b * n_num, slice(maxb * n_num, maxb * n_num + b * n_cat)

    nxt = up.upload(0, *spans(0))
    for i in range(nreq):
        b = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, *spans(i + 1))
        raw_num, raw_cat, ev = item
        SideUploads.ready(ev, raw_num, raw_cat)
        with torch.no_grad():
            num = torch.log1p(raw_num.view(b, n_num).float() * scale)
            num = (num - num.mean(0, keepdim=True)) / (num.std(0, keepdim=True, unbiased=False) + 1.0)
            cat = raw_cat.view(b, n_cat).long()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                sev, fraud, route = model(num, cat)
            mu, sigma = sev[:, 0], _F.softplus(sev[:, 1]) + 0.05
            reserve = torch.exp(mu + 0.5 * sigma * sigma).clamp(max=1e7)
            p_fraud = torch.sigmoid(fraud)
            queue = route.argmax(-1)
            reported = raw_num.view(b, n_num)[:, 0].float()
            queue = torch.where((reported > 90000) | (cat[:, 1] == 3), torch.full_like(queue, 7), queue)
            queue = torch.where(p_fraud > 0.8, torch.full_like(queue, 8), queue)
            queue = torch.where((cat[:, 1] == 5) & (reported < 2000), torch.zeros_like(queue), queue)
            out = torch.stack([queue.float(), p_fraud, reserve], 1)
        out.tolist()
        del item, raw_num, raw_cat, num, cat, sev, fraud, route, mu, sigma, reserve, p_fraud, queue, reported, out


# ---------------------------------------------------------------- vehicle damage detection service (FCOS)


def _cbr(cin, cout, stride=1):
    return _nn.Sequential(_nn.Conv2d(cin, cout, 3, stride, 1, bias=False), _nn.BatchNorm2d(cout), _nn.ReLU())


class _DamageDetector(_nn.Module):
    def __init__(self, widths, fpn, classes):
        super().__init__()
        self.stem = _nn.Sequential(_cbr(3, widths[0], 2), _cbr(widths[0], widths[0], 2))
        self.stages, c = _nn.ModuleList(), widths[0]
        for w in widths[1:]:
            self.stages.append(_nn.Sequential(_cbr(c, w, 2), _cbr(w, w), _cbr(w, w)))
            c = w
        self.lat = _nn.ModuleList(_nn.Conv2d(w, fpn, 1) for w in widths[1:])
        self.cls_tower = _nn.Sequential(_cbr(fpn, fpn), _cbr(fpn, fpn))
        self.box_tower = _nn.Sequential(_cbr(fpn, fpn), _cbr(fpn, fpn))
        self.cls, self.box, self.ctr = _nn.Conv2d(fpn, classes, 3, 1, 1), _nn.Conv2d(fpn, 4, 3, 1, 1), \
            _nn.Conv2d(fpn, 1, 3, 1, 1)
        self.cost = _nn.Conv2d(fpn, 1, 3, 1, 1)

    def forward(self, x):
        x = self.stem(x)
        feats = []
        for s in self.stages:
            x = s(x)
            feats.append(x)
        p = [self.lat[-1](feats[-1])]
        for lat, f in zip(reversed(self.lat[:-1]), reversed(feats[:-1])):
            p.insert(0, lat(f) + _F.interpolate(p[0], size=f.shape[-2:], mode="nearest"))
        outs = []
        for lvl in p:
            c, bt = self.cls_tower(lvl), self.box_tower(lvl)
            outs.append((self.cls(c), _F.relu(self.box(bt)), self.ctr(bt), self.cost(bt)))
        return outs


@_workload("vehicle damage detection serving (random init, an FCOS-style anchor-free detector for a motor-claims photo app): 1,200-1,300 requests (drawn) of 1-12 photographs each (log-uniform) at one of 320 x 480, 384 x 512, 480 x 640, 512 x 512 or 448 x 768 (drawn per request); the uint8 pixels uploaded on a side stream from two reused pinned host buffers one request ahead (waited on by event, record_stream'ed); normalisation, a convolutional backbone (a stride-4 stem of 32 channels and 3 stages of 64-128-256 channels, batch norm) under bf16 autocast, an FPN at strides 8, 16 and 32 (128 channels) with shared 2-conv class and box towers, 12 damage classes, box distances, centre-ness and a per-location repair-cost head; the top 100 locations per photo over all levels by score, their boxes and costs gathered, a matrix-NMS decay of same-class overlaps (pairwise IoU, no data-dependent loops), a per-photo repair estimate summed over the kept detections; each request's boxes, classes, scores and estimates read back")
def damage_photo_detect_serve(rng):
    widths, fpn, classes, k = _smoke([32, 64, 128, 256], [4, 4, 8, 8]), _smoke(128, 8), 12, _smoke(100, 8)
    model = _DamageDetector(widths, fpn, classes).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    resolutions = _smoke([(320, 480), (384, 512), (480, 640), (512, 512), (448, 768)], [(64, 96), (96, 64), (64, 64)])
    maxb = _smoke(12, 2)
    npix = maxb * 3 * max(h * w for h, w in resolutions)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (npix,), dtype=torch.uint8, generator=gen).pin_memory() for _ in range(2)]
    up = SideUploads(host)
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1) * 255
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1) * 255
    nreq = rng.randint(_smoke(1200, 3), _smoke(1300, 4))
    plan = [(_loguniform(rng, 1, maxb), rng.choice(resolutions)) for _ in range(nreq)]

    def centres(h, w, stride):
        ys = (torch.arange(h // stride, device="cuda").float() + 0.5) * stride
        xs = (torch.arange(w // stride, device="cuda").float() + 0.5) * stride
        gy, gx = torch.meshgrid(ys, xs, indexing="ij")
        return torch.stack([gx.flatten(), gy.flatten()], -1)

    nxt = up.upload(0, plan[0][0] * 3 * plan[0][1][0] * plan[0][1][1])
    for i in range(nreq):
        b, (h, w) = plan[i]
        item = nxt
        if i + 1 < nreq:
            bn, (hn, wn) = plan[i + 1]
            nxt = up.upload(i + 1, bn * 3 * hn * wn)
        raw, ev = item
        SideUploads.ready(ev, raw)
        with torch.no_grad():
            x = ((raw.view(b, 3, h, w).float() - mean) / std).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                outs = model(x)
            scores, boxes, costs = [], [], []
            for stride, (cl, bx, ct, co) in zip((8, 16, 32), outs):
                pts = centres(h, w, stride)
                s = torch.sigmoid(cl.float()).flatten(2) * torch.sigmoid(ct.float()).flatten(2)
                dist = bx.float().flatten(2).transpose(1, 2) * stride
                boxes.append(torch.cat([pts[None] - dist[..., :2], pts[None] + dist[..., 2:]], -1))
                scores.append(s.transpose(1, 2))
                costs.append(_F.softplus(co.float()).flatten(1))
            scores, boxes, costs = torch.cat(scores, 1), torch.cat(boxes, 1), torch.cat(costs, 1)
            best, cls = scores.max(-1)
            top, idx = best.topk(min(k, best.shape[1]), dim=1)
            tcls = cls.gather(1, idx)
            tbox = boxes.gather(1, idx[..., None].expand(-1, -1, 4))
            tbox = torch.stack([tbox[..., 0].clamp(0, w), tbox[..., 1].clamp(0, h), tbox[..., 2].clamp(0, w),
                                tbox[..., 3].clamp(0, h)], -1)
            tcost = costs.gather(1, idx)
            area = (tbox[..., 2] - tbox[..., 0]) * (tbox[..., 3] - tbox[..., 1])
            lt = torch.maximum(tbox[:, :, None, :2], tbox[:, None, :, :2])
            rb = torch.minimum(tbox[:, :, None, 2:], tbox[:, None, :, 2:])
            inter = (rb - lt).clamp(min=0).prod(-1)
            iou = inter / (area[:, :, None] + area[:, None] - inter + 1e-6)
            same = (tcls[:, :, None] == tcls[:, None]).float()
            iou = (iou * same).triu(1)
            comp = iou.max(1).values
            decay = torch.exp(-(iou.pow(2) - comp[:, :, None].pow(2)) / 0.5).min(1).values
            kept = top * decay
            keep = (kept > 0.05).float()
            estimate = (tcost * kept * keep).sum(1) * 250.0
            res = torch.cat([tbox.flatten(1), tcls.float(), kept], 1)
        torch.cat([res, estimate[:, None]], 1).tolist()
        del item, raw, x, outs, scores, boxes, costs, best, cls, top, idx, tcls, tbox, tcost, area, lt, rb, inter
        del iou, same, comp, decay, kept, keep, estimate, res


# ---------------------------------------------------------------- call-centre intent classification (conformer)


class _ConformerBlock(_nn.Module):
    def __init__(self, d, heads, kernel):
        super().__init__()
        self.ff1, self.ff2 = (_nn.Sequential(_nn.LayerNorm(d), _nn.Linear(d, 4 * d), _nn.SiLU(), _nn.Linear(4 * d, d))
                              for _ in range(2))
        self.attn = PreNormBlock(d, heads, 2 * d)
        self.conv_norm, self.pw1 = _nn.LayerNorm(d), _nn.Conv1d(d, 2 * d, 1)
        self.dw, self.bn, self.pw2 = _nn.Conv1d(d, d, kernel, padding=kernel // 2, groups=d), _nn.BatchNorm1d(d), \
            _nn.Conv1d(d, d, 1)
        self.out = _nn.LayerNorm(d)

    def forward(self, x, key, valid):
        x = x + 0.5 * self.ff1(x)
        x = self.attn(x, mask=key)
        c = (self.conv_norm(x) * valid[..., None]).transpose(1, 2)
        c = _F.glu(self.pw1(c), dim=1)
        c = self.pw2(_F.silu(self.bn(self.dw(c))))
        x = x + c.transpose(1, 2)
        x = x + 0.5 * self.ff2(x)
        return self.out(x)


@_workload("call-centre intent training (random init, a conformer-style classifier for claims-line phone calls): 12-40 caller utterances a step (drawn), each of its own duration of 2-16 s of 8 kHz audio (drawn per utterance, padded to the step's longest and masked), an on-device STFT (256-point Hann window, 80-sample hop) and 64-band mel filterbank with log compression and per-utterance mean normalisation under the frame mask, a 2-layer strided convolutional subsampler (4x, 64 channels), 6 conformer blocks (width 256, 4 heads, half-step feed-forwards, self-attention under a key mask, a depthwise convolution module of kernel 15 over masked frames, batch norm); masked mean pooling, heads for 32 intents, 3 sentiment classes and escalation; AdamW, clipping, bf16 autocast, 180 steps; the losses read back every 20 steps and every 45 steps a no-grad evaluation of 32 utterances of 10 s with the intent accuracy read back")
def call_intent_conformer_train(rng):
    d, heads, layers, kernel = _smoke(256, 16), _smoke(4, 2), _smoke(6, 1), 15
    sr, n_fft, hop, n_mels = 8000, 256, 80, _smoke(64, 16)
    n_int = 32
    sub = _nn.Sequential(_nn.Conv2d(1, 64, 3, 2, 1), _nn.ReLU(), _nn.Conv2d(64, 64, 3, 2, 1), _nn.ReLU()).cuda()
    proj = _nn.Linear(64 * (-(-(-(-n_mels // 2)) // 2)), d).cuda()
    blocks = _nn.ModuleList(_ConformerBlock(d, heads, kernel) for _ in range(layers)).cuda()
    heads_ = _nn.ModuleDict(dict(intent=mlp(d, d, n_int), sent=mlp(d, d, 3), esc=mlp(d, d, 1))).cuda()
    params = [p for m in (sub, proj, blocks, heads_) for p in m.parameters()]
    opt = torch.optim.AdamW(params, lr=3e-4, weight_decay=0.01)
    window = torch.hann_window(n_fft, device="cuda")
    # a triangular mel filterbank (n_fft // 2 + 1 bins -> n_mels bands), built on the device
    mel = lambda f: 2595 * torch.log10(1 + f / 700)  # noqa: E731
    pts = 700 * (10 ** (torch.linspace(0, float(mel(torch.tensor(sr / 2.0))), n_mels + 2, device="cuda") / 2595) - 1)
    freqs = torch.linspace(0, sr / 2, n_fft // 2 + 1, device="cuda")
    lo, ce, hi = pts[:-2, None], pts[1:-1, None], pts[2:, None]
    fbank = torch.minimum((freqs - lo) / (ce - lo), (hi - freqs) / (hi - ce)).clamp(min=0)

    def features(samples):
        b, n = len(samples), max(samples)
        wav = torch.randn(b, n, device="cuda") * 0.1
        wav = wav * (torch.arange(n, device="cuda")[None] < torch.tensor(samples, device="cuda")[:, None]).float()
        spec = torch.stft(wav, n_fft, hop, window=window, return_complex=True).abs().pow(2)
        logmel = torch.log(torch.einsum("mf,bft->btm", fbank, spec) + 1e-6)
        frames = [s // hop + 1 for s in samples]
        t = logmel.shape[1]
        fmask = (torch.arange(t, device="cuda")[None] < torch.tensor(frames, device="cuda")[:, None]).float()
        mu = (logmel * fmask[..., None]).sum(1, keepdim=True) / fmask.sum(1)[:, None, None]
        logmel = (logmel - mu) * fmask[..., None]
        t4 = -(-(-(-t // 2)) // 2)
        f4 = [-(-(-(-f // 2)) // 2) for f in frames]
        valid = (torch.arange(t4, device="cuda")[None] < torch.tensor(f4, device="cuda")[:, None]).float()
        return logmel, valid

    def encode(logmel, valid):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            s = sub(logmel[:, None])
            x = proj(s.permute(0, 2, 1, 3).flatten(2))
            key = valid.bool()[:, None, None, :]
            for blk in blocks:
                x = blk(x, key, valid.to(x.dtype))
            pooled = (x.float() * valid[..., None]).sum(1) / valid.sum(1, keepdim=True)
            return heads_["intent"](pooled).float(), heads_["sent"](pooled).float(), heads_["esc"](pooled)[:, 0].float()

    steps = _smoke(180, 3)
    for step in range(steps):
        for m in (sub, blocks, heads_):
            m.train()
        b = rng.randint(_smoke(12, 2), _smoke(40, 3))
        samples = [rng.randint(_smoke(2 * sr, 800), _smoke(16 * sr, 2400)) for _ in range(b)]
        logmel, valid = features(samples)
        y_i = torch.randint(0, n_int, (b,), device="cuda")
        y_s = torch.randint(0, 3, (b,), device="cuda")
        y_e = (torch.rand(b, device="cuda") < 0.1).float()
        li, ls, le = encode(logmel, valid)
        l_i, l_s = _F.cross_entropy(li, y_i), _F.cross_entropy(ls, y_s)
        l_e = _F.binary_cross_entropy_with_logits(le, y_e)
        loss = l_i + 0.3 * l_s + 0.3 * l_e
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_i.detach(), l_s.detach(), l_e.detach()]).tolist()
        del logmel, valid, y_i, y_s, y_e, li, ls, le, l_i, l_s, l_e, loss
        if (step + 1) % _smoke(45, 2) == 0:
            for m in (sub, blocks, heads_):
                m.eval()
            with torch.no_grad():
                logmel, valid = features([_smoke(10 * sr, 1600)] * _smoke(32, 2))
                li, _, _ = encode(logmel, valid)
                acc = (li.argmax(-1) == torch.randint(0, n_int, (li.shape[0],), device="cuda")).float().mean()
            acc.item()
            del logmel, valid, li, acc


# ---------------------------------------------------------------- catastrophe-loss simulation (FNO surrogate)


class _SpectralConv(_nn.Module):
    def __init__(self, c, modes):
        super().__init__()
        self.modes = modes
        self.w = _nn.Parameter(torch.randn(2, c, c, modes, modes, 2) * (1.0 / (c * c)))

    def forward(self, x):
        b, c, h, w = x.shape
        m = self.modes
        xf = torch.fft.rfft2(x.float())
        wt = torch.view_as_complex(self.w)
        out = torch.zeros(b, c, h, w // 2 + 1, dtype=xf.dtype, device=x.device)
        out[:, :, :m, :m] = torch.einsum("bixy,ioxy->boxy", xf[:, :, :m, :m], wt[0])
        out[:, :, -m:, :m] = torch.einsum("bixy,ioxy->boxy", xf[:, :, -m:, :m], wt[1])
        return torch.fft.irfft2(out, s=(h, w))


class _FNO(_nn.Module):
    def __init__(self, cin, c, modes, layers, cout):
        super().__init__()
        self.lift = _nn.Conv2d(cin + 2, c, 1)
        self.spec = _nn.ModuleList(_SpectralConv(c, modes) for _ in range(layers))
        self.pw = _nn.ModuleList(_nn.Conv2d(c, c, 1) for _ in range(layers))
        self.proj = _nn.Sequential(_nn.Conv2d(c, 64, 1), _nn.GELU(), _nn.Conv2d(64, cout, 1))

    def forward(self, x, grid):
        x = self.lift(torch.cat([x, grid.expand(x.shape[0], -1, -1, -1)], 1))
        for s, p in zip(self.spec, self.pw):
            x = _F.gelu(s(x) + p(x))
        return self.proj(x)


@_workload("catastrophe-loss simulation (random init, a hurricane model with a Fourier-neural-operator surrogate for a property portfolio): 6 portfolios in turn of 60,000-250,000 insured locations (drawn per portfolio; each location's cell on a 128 x 128 hazard grid, construction class of 16, occupancy of 8 and total insured value drawn on the device, a deductible of 2% and a limit of 80% of it), each run for 380-420 batches (drawn) of 16-64 simulated storms (drawn per batch) with track origin, heading, central pressure deficit, radius of maximum winds and forward speed drawn on the device; a Holland-style parametric wind field about a straight track on the grid plus terrain and roughness channels refined by a 4-layer FNO (width 32, 12 x 12 modes, rfft2 / irfft2 in fp32, under bf16 autocast) into gust and surge depth fields; per-location intensities gathered by grid index, damage ratios from logistic vulnerability curves per construction class and occupancy (16 x 8 parameter table lookups), losses under deductibles and limits, event losses summed and added into a 10,000-year year loss table by index_add of each storm's drawn year; the batch's largest event loss read back every 25 batches and each portfolio's AAL and 1-in-100 and 1-in-250 year losses from the sorted table read back")
def cat_loss_fno_sim(rng):
    g, c, modes, layers = _smoke(128, 16), _smoke(32, 4), _smoke(12, 3), _smoke(4, 1)
    n_cls, n_occ, years = 16, 8, _smoke(10000, 200)
    fno = _FNO(3, c, modes, layers, 2).cuda().eval()
    fno.requires_grad_(False)
    ys, xs = torch.meshgrid(torch.linspace(0, 1, g, device="cuda"), torch.linspace(0, 1, g, device="cuda"),
                            indexing="ij")
    grid = torch.stack([xs, ys])[None]
    vul_mid = torch.rand(n_cls, n_occ, 2, device="cuda") * torch.tensor([30.0, 2.0], device="cuda") + \
        torch.tensor([40.0, 1.0], device="cuda")
    vul_scale = torch.rand(n_cls, n_occ, 2, device="cuda") * 5 + 3
    for _p in range(_smoke(6, 2)):
        n_loc = rng.randint(_smoke(60000, 300), _smoke(250000, 600))
        with torch.no_grad():
            cell = torch.randint(0, g * g, (n_loc,), device="cuda")
            cls = torch.randint(0, n_cls, (n_loc,), device="cuda")
            occ = torch.randint(0, n_occ, (n_loc,), device="cuda")
            tiv = torch.exp(torch.randn(n_loc, device="cuda") * 0.8 + 13)
            ded, lim = tiv * 0.02, tiv * 0.8
            terrain = torch.rand(1, 1, g, g, device="cuda")
            rough = torch.rand(1, 1, g, g, device="cuda")
            mid, scl = vul_mid[cls, occ], vul_scale[cls, occ]
            ylt = torch.zeros(years, device="cuda")
        for bi in range(rng.randint(_smoke(380, 2), _smoke(420, 3))):
            n_ev = rng.randint(_smoke(16, 2), _smoke(64, 4))
            with torch.no_grad():
                ox, oy = torch.rand(n_ev, 1, 1, device="cuda"), torch.rand(n_ev, 1, 1, device="cuda")
                head = torch.rand(n_ev, 1, 1, device="cuda") * 2 * math.pi
                dp = torch.rand(n_ev, 1, 1, device="cuda") * 80 + 10
                rmax = torch.rand(n_ev, 1, 1, device="cuda") * 0.08 + 0.02
                fwd = torch.rand(n_ev, 1, 1, device="cuda") * 8 + 2
                # distance of each cell to the straight track through the origin along the heading
                dx, dy = xs[None] - ox, ys[None] - oy
                along = dx * torch.cos(head) + dy * torch.sin(head)
                r = (dx * -torch.sin(head) + dy * torch.cos(head)).abs() + 1e-3
                bh = 1.2 + dp / 100
                v = torch.sqrt(bh * dp * 10 * (rmax / r).pow(bh) * torch.exp(-(rmax / r).pow(bh))) + fwd * 0.5
                v = v * torch.sigmoid(along * 20)
                x = torch.cat([v[:, None] / 50, terrain.expand(n_ev, -1, -1, -1), rough.expand(n_ev, -1, -1, -1)], 1)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    fields = fno(x, grid).float()
                gust = (v[:, None] * (1 + 0.2 * torch.tanh(fields[:, :1])) * (1 - 0.3 * rough)).flatten(1)
                surge = (_F.softplus(fields[:, 1:]) * (1 - terrain) * dp[:, None] / 40).flatten(1)
                w_loc, s_loc = gust[:, cell], surge[:, cell]  # (n_ev, n_loc)
                dr_w = torch.sigmoid((w_loc - mid[:, 0]) / scl[:, 0])
                dr_s = torch.sigmoid((s_loc - mid[:, 1]) / scl[:, 1])
                dr = 1 - (1 - dr_w) * (1 - dr_s)
                gross = (dr * tiv - ded).clamp(min=0).minimum(lim)
                ev_loss = gross.sum(1)
                yr = torch.randint(0, years, (n_ev,), device="cuda")
                ylt.index_add_(0, yr, ev_loss)
            if bi % _smoke(25, 1) == 0:
                ev_loss.max().item()
            del ox, oy, head, dp, rmax, fwd, dx, dy, along, r, bh, v, x, fields, gust, surge, w_loc, s_loc
            del dr_w, dr_s, dr, gross, ev_loss, yr
        with torch.no_grad():
            srt = ylt.sort(descending=True).values
            ep = torch.stack([ylt.mean(), srt[years // 100 - 1], srt[years // 250 - 1]])
        ep.tolist()
        del cell, cls, occ, tiv, ded, lim, terrain, rough, mid, scl, ylt, srt, ep

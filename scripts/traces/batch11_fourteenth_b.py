"""The workloads of the fourteenth batch (held out; part 2 of 2), moved verbatim from record.py; how record.py
registers them: batch_common.py.
The bodies that read record.py's SMOKE flag directly read it as `_b.rec.SMOKE` (the one change made to them)."""

import math
import time

import torch

from batch_common import Batch
from workload_helpers import _farthest_points, _gather_points, _loguniform, randint, _square_distance

_b = Batch()  # this module's workloads, and record.py's module object once register() has run
workload = _b.workload
_smoke = _b.smoke
register = _b.register  # what record.py calls


@workload("semantic segmentation training with fp16 mixed precision and dynamic loss scaling: HF SegformerForSemanticSegmentation at the MiT-B2 size (depths 3-4-6-3, widths 64-128-320-512, sequence reduction 8-4-2-1, all-MLP decoder of 768; random init), 150 ADE20K-like classes with 8% ignored (255) pixels, random square crops of 384-640 px (multiple of 32), batch 2-16 capped at 2.1M pixels, uint8 images copied from pinned memory and normalized on the device; fp16 autocast with torch.amp.GradScaler started at mmcv's dynamic scale of 2^32 (so the first steps overflow, are skipped and halve the scale, and AdamW's state appears only at the first step taken), growth every 1000 steps, gradients unscaled before clipping at 1.0; 250 steps, poly learning-rate decay, AdamW")
def segformer_amp(rng):
    from transformers import SegformerConfig, SegformerForSemanticSegmentation

    if _b.rec.SMOKE:
        cfg = SegformerConfig(depths=[1, 1, 1, 1], decoder_hidden_size=64, num_labels=150, semantic_loss_ignore_index=255)
    else:
        cfg = SegformerConfig(depths=[3, 4, 6, 3], hidden_sizes=[64, 128, 320, 512], num_attention_heads=[1, 2, 5, 8],
                              decoder_hidden_size=768, num_labels=150, semantic_loss_ignore_index=255)
    model = SegformerForSemanticSegmentation(cfg).cuda().train()
    # About 1k tensors a step at depths 1-1-1-1 on CPU, some 1.7k at 3-4-6-3:
    # 250 steps make about 0.85M events.
    steps = _smoke(250, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=6e-5, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: (1 - i / steps) ** 1.0)
    scaler = torch.amp.GradScaler("cuda", init_scale=2.0 ** 32, growth_interval=1000)
    mean = torch.tensor([123.675, 116.28, 103.53], device="cuda")[:, None, None]
    std = torch.tensor([58.395, 57.12, 57.375], device="cuda")[:, None, None]
    for _ in range(steps):
        side = randint(rng, *_smoke((384, 640), (64, 96)), 32)
        b = min(rng.randint(*_smoke((2, 16), (1, 2))), _smoke(2_100_000, 20_000) // (side * side))
        host = torch.randint(0, 256, (b, 3, side, side), dtype=torch.uint8).pin_memory()
        x = (host.to("cuda", non_blocking=True).float() - mean) / std
        labels = torch.randint(0, 150, (b, side, side), device="cuda")
        labels.masked_fill_(torch.rand(b, side, side, device="cuda") < 0.08, 255)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(pixel_values=x, labels=labels).loss
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        sched.step()
        opt.zero_grad(set_to_none=True)
        del host, x, labels, loss


class _DynUnet3d(torch.nn.Module):
    """An nnU-Net-style 3-D UNet (MONAI DynUNet-like): per level two 3x3x3 conv, InstanceNorm, LeakyReLU blocks, strided
    convs down, transposed convs up, skips concatenated, a 1x1x1 head."""

    def __init__(self, chans=(32, 64, 128, 256, 320), classes=14):
        super().__init__()
        nn = torch.nn

        def block(cin, cout, stride):
            return nn.Sequential(nn.Conv3d(cin, cout, 3, stride, 1, bias=False), nn.InstanceNorm3d(cout, affine=True),
                                 nn.LeakyReLU(0.01), nn.Conv3d(cout, cout, 3, 1, 1, bias=False),
                                 nn.InstanceNorm3d(cout, affine=True), nn.LeakyReLU(0.01))

        self.down = nn.ModuleList([block(chans[i - 1] if i else 1, c, 2 if i else 1) for i, c in enumerate(chans)])
        levels = list(reversed(range(len(chans) - 1)))
        self.up = nn.ModuleList([nn.ConvTranspose3d(chans[i + 1], chans[i], 2, 2) for i in levels])
        self.dec = nn.ModuleList([block(2 * chans[i], chans[i], 1) for i in levels])
        self.head = nn.Conv3d(chans[0], classes, 1)

    def forward(self, x):
        skips = []
        for blk in self.down:
            x = blk(x)
            skips.append(x)
        skips.pop()
        for up, dec in zip(self.up, self.dec):
            x = dec(torch.cat([up(x), skips.pop()], 1))
        return self.head(x)


def _gaussian_importance(roi, device):
    """MONAI's gaussian importance map (sigma 0.125 of the window), its smallest value clamped to the least nonzero."""
    g = torch.exp(-0.5 * ((torch.arange(roi, device=device) - (roi - 1) / 2) / (0.125 * roi)) ** 2)
    m = g[:, None, None] * g[None, :, None] * g[None, None, :]
    m = m / m.max()
    return m.clamp_min(m[m > 0].min())


@workload("3-D medical segmentation inference with sliding windows, MONAI sliding_window_inference written out (two CUDA streams): an nnU-Net-style 3-D UNet (5 levels of 32-64-128-256-320 channels, InstanceNorm, LeakyReLU, 14 BTCV-like organ classes; random weights) in fp16 under inference_mode; 30 CT volumes of 64-320 slices x 160-448 x 160-448 voxels (each side log-uniform), the int16 voxels of the next volume copied from pinned memory, clipped to -175..250 HU and normalized on a side stream while the current one is segmented; per volume a window of 96 or 128 voxels, an overlap of 0.25 or 0.5 and 1, 2 or 4 windows per batch; volumes padded to at least one window, windows stacked, nnU-Net's mirroring test-time augmentation in plane (the batch as is and flipped along H, W and both, the flipped logits flipped back, in fp32, averaged), each prediction weighted by the gaussian importance map and added into a 14-class fp32 output volume and a count map, divided, cropped, argmax to uint8 copied back")
def sliding_window_3d(rng):
    f = torch.nn.functional
    classes = 14
    model = _DynUnet3d(_smoke((32, 64, 128, 256, 320), (4, 8, 8, 8, 8)), classes).to("cuda", torch.half).eval()
    side = torch.cuda.Stream()
    main = torch.cuda.current_stream()

    def load():
        d, h, w = _loguniform(rng, *_smoke((64, 320), (16, 48))), *(_loguniform(rng, *_smoke((160, 448), (16, 56))) for _ in range(2))
        host = torch.randint(-1024, 2000, (d, h, w), dtype=torch.int16).pin_memory()
        with torch.cuda.stream(side):
            v = host.to("cuda", non_blocking=True).float().clamp_(-175, 250).add_(175).div_(425).half()[None, None]
            done = side.record_event()
        return v, done

    nxt = load()
    # About 1.4k windows in some 620 batches of 4 passes of about 75 tensors:
    # some 0.4M events.
    volumes = _smoke(30, 2)
    with torch.inference_mode():
        for i in range(volumes):
            vol, done = nxt
            main.wait_event(done)
            vol.record_stream(main)
            if i + 1 < volumes:
                nxt = load()
            roi, overlap, sw = rng.choice(_smoke((96, 128), (32, 48))), rng.choice((0.25, 0.5)), rng.choice((1, 2, 4))
            dims = vol.shape[2:]
            pads = [max(roi - n, 0) for n in dims]
            if any(pads):
                vol = f.pad(vol, [p for n in reversed(pads) for p in (n // 2, n - n // 2)])
            shape = vol.shape[2:]
            step = max(1, int(roi * (1 - overlap)))
            starts = [sorted({min(k * step, n - roi) for k in range(math.ceil((n - roi) / step) + 1)}) for n in shape]
            windows = [(z, y, x) for z in starts[0] for y in starts[1] for x in starts[2]]
            imp = _gaussian_importance(roi, "cuda")
            out = torch.zeros(1, classes, *shape, device="cuda")
            count = torch.zeros(1, 1, *shape, device="cuda")
            for j in range(0, len(windows), sw):
                chunk = windows[j:j + sw]
                batch = torch.cat([vol[:, :, z:z + roi, y:y + roi, x:x + roi] for z, y, x in chunk])
                pred = model(batch).float()
                for axes in ((3,), (4,), (3, 4)):
                    pred += model(batch.flip(axes)).float().flip(axes)
                pred = pred / 4 * imp
                for k, (z, y, x) in enumerate(chunk):
                    out[:, :, z:z + roi, y:y + roi, x:x + roi] += pred[k]
                    count[:, :, z:z + roi, y:y + roi, x:x + roi] += imp
                del batch, pred
            out = out / count
            p0 = [n // 2 for n in pads]
            out = out[:, :, p0[0]:p0[0] + dims[0], p0[1]:p0[1] + dims[1], p0[2]:p0[2] + dims[2]]
            labels = out.argmax(1).to(torch.uint8)
            labels.cpu()
            del vol, done, imp, out, count, labels


@workload("multi-stream inference server (four CUDA streams, one Python thread, asynchronous): a BERT-base text classifier (HF BertForSequenceClassification, 3 labels), a torchvision ResNet-50 (channels-last) and a GPT-2 small (HF GPT2LMHeadModel) scoring candidate continuations, all fp16 under inference_mode with random weights; 3000 requests, each 50% text (1-64 texts of 16-512 tokens, log-uniform, padded to the longest, multiple of 8), 30% images (1-32 uint8 images at 224-384 px) or 20% scoring (1-16 candidates of 32-512 tokens: the log-softmax over the vocabulary in fp32 and the summed log-probabilities of each candidate's tokens); each request dispatched to the stream with the fewest in flight (at most 2 a stream; when all are busy the oldest is waited for), its inputs copied from pinned memory on that stream, its outputs copied back to pinned memory with an event recorded, finished requests polled by event query")
def multistream_server(rng):
    import torchvision
    from transformers import BertConfig, BertForSequenceClassification, GPT2Config, GPT2LMHeadModel

    f = torch.nn.functional
    bcfg = BertConfig(num_labels=3) if not _b.rec.SMOKE else BertConfig(num_labels=3, num_hidden_layers=2, hidden_size=64,
                                                                  num_attention_heads=4, intermediate_size=128)
    bert = BertForSequenceClassification(bcfg).to("cuda", torch.half).eval()
    resnet = (torchvision.models.resnet18() if _b.rec.SMOKE else torchvision.models.resnet50()).to("cuda", torch.half)
    resnet = resnet.to(memory_format=torch.channels_last).eval()
    gcfg = GPT2Config() if not _b.rec.SMOKE else GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=1000)
    gpt = GPT2LMHeadModel(gcfg).to("cuda", torch.half).eval()
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda")[:, None, None] * 255
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda")[:, None, None] * 255
    streams = [torch.cuda.Stream() for _ in range(4)]
    inflight = [[] for _ in streams]  # per stream: (event, pinned outputs)

    def padded(b, lo, hi, vocab):
        lengths = [_loguniform(rng, lo, hi) for _ in range(b)]
        s = -(-max(lengths) // 8) * 8
        ids = torch.randint(0, vocab, (b, s), dtype=torch.int32)
        mask = (torch.arange(s)[None, :] < torch.tensor(lengths)[:, None]).to(torch.int32)
        return ids.pin_memory(), mask.pin_memory()

    def text():
        ids, mask = padded(_loguniform(rng, 1, 64), 16, _smoke(512, 64), bcfg.vocab_size)
        ids, mask = ids.to("cuda", non_blocking=True).long(), mask.to("cuda", non_blocking=True).long()
        return bert(input_ids=ids, attention_mask=mask).logits.float().softmax(-1)

    def image():
        b, r = _loguniform(rng, 1, 32), rng.choice(_smoke((224, 256, 288, 320, 384), (32, 64)))
        host = torch.randint(0, 256, (b, r, r, 3), dtype=torch.uint8).pin_memory()
        x = ((host.to("cuda", non_blocking=True).permute(0, 3, 1, 2).float() - mean) / std).half()
        logits = resnet(x.contiguous(memory_format=torch.channels_last)).float()
        return torch.cat([t.float() for t in logits.softmax(-1).topk(5, -1)], 1)

    def score():
        ids, mask = padded(_loguniform(rng, 1, 16), 32, _smoke(512, 64), gcfg.vocab_size)
        ids, mask = ids.to("cuda", non_blocking=True).long(), mask.to("cuda", non_blocking=True).long()
        logp = gpt(input_ids=ids, attention_mask=mask).logits[:, :-1].float().log_softmax(-1)
        return (logp.gather(-1, ids[:, 1:, None]).squeeze(-1) * mask[:, 1:]).sum(1)

    # About 190 tensors a request on average (BERT-base 181, ResNet-50 110, GPT-2
    # small 262 on CPU, plus the copies): 3000 requests make about 1.1M events.
    with torch.inference_mode():
        for _ in range(_smoke(3000, 12)):
            for q in inflight:
                while q and q[0][0].query():
                    q.pop(0)
            i = min(range(len(streams)), key=lambda j: len(inflight[j]))
            if len(inflight[i]) >= 2:
                i = min(range(len(streams)), key=lambda j: inflight[j][0][2])
                inflight[i].pop(0)[0].synchronize()
            s = streams[i]
            with torch.cuda.stream(s):
                s.wait_stream(torch.cuda.default_stream())  # weights and constants made on the default stream
                u = rng.random()
                out = text() if u < 0.5 else image() if u < 0.8 else score()
                host = torch.empty(out.shape, dtype=out.dtype).pin_memory()
                host.copy_(out, non_blocking=True)
                inflight[i].append((s.record_event(), host, time.monotonic()))
                del out
        torch.cuda.synchronize()


class _PointMae(torch.nn.Module):
    """Point-MAE: a mini-PointNet embedding each group (shared 1x1 convs 3-128-256, max, concat, 512-512-384, max),
    a 12-block pre-norm transformer encoder of width 384 (6 heads) on the visible groups with the centres' MLP
    positions added before every block, a 4-block decoder with mask tokens, a 1x1 conv predicting the 32 points of
    every masked group."""

    def __init__(self, d=384, depth=12, dec_depth=4, heads=6, k=32):
        super().__init__()
        nn = torch.nn
        self.first = nn.Sequential(nn.Conv1d(3, 128, 1), nn.BatchNorm1d(128), nn.ReLU(), nn.Conv1d(128, 256, 1))
        self.second = nn.Sequential(nn.Conv1d(512, 512, 1), nn.BatchNorm1d(512), nn.ReLU(), nn.Conv1d(512, d, 1))

        def pos():
            return nn.Sequential(nn.Linear(3, 128), nn.GELU(), nn.Linear(128, d))

        def blocks(n):
            return nn.ModuleList([nn.TransformerEncoderLayer(d, heads, 4 * d, 0.0, activation="gelu", batch_first=True,
                                                             norm_first=True) for _ in range(n)])

        self.pos, self.dec_pos = pos(), pos()
        self.enc, self.dec = blocks(depth), blocks(dec_depth)
        self.enc_norm, self.dec_norm = nn.LayerNorm(d), nn.LayerNorm(d)
        self.mask_token = nn.Parameter(torch.zeros(1, 1, d))
        self.pred = nn.Conv1d(d, 3 * k, 1)

    def embed(self, groups):  # (BG, k, 3) -> (BG, d)
        k = groups.size(1)
        h = self.first(groups.transpose(1, 2))
        h = self.second(torch.cat([h.max(-1, keepdim=True)[0].expand(-1, -1, k), h], 1))
        return h.max(-1)[0]

    def forward(self, tokens, centres, vis, msk):
        b, g, d = tokens.shape
        take = lambda t, idx: t.gather(1, idx[..., None].expand(-1, -1, t.size(-1)))  # noqa: E731
        cv, cm = take(centres, vis), take(centres, msk)
        x, p = take(tokens, vis), self.pos(cv)
        for blk in self.enc:
            x = blk(x + p)
        x = torch.cat([self.enc_norm(x), self.mask_token.expand(b, msk.size(1), d)], 1)
        p = torch.cat([self.dec_pos(cv), self.dec_pos(cm)], 1)
        for blk in self.dec:
            x = blk(x + p)
        x = self.dec_norm(x[:, -msk.size(1):])
        return self.pred(x.transpose(1, 2)).transpose(1, 2)


@workload("masked point-cloud pretraining, Point-MAE (random init): clouds of 1024, 2048, 4096 or 8192 points per step (objects to scene crops), batch up to 128 capped at 384k points, normalized to the unit sphere, random anisotropic scaling and translation; N/16 group centres by farthest-point sampling (a loop of one point per iteration), 32 nearest neighbours per centre by top-k of the distance matrix, recentred; a mini-PointNet token per group, 60% of the groups masked at random per cloud, the 12-block encoder over the visible tokens, a 4-block decoder over visible and mask tokens, the masked groups' 32 points predicted, Chamfer-L2 loss; 150 steps, AdamW with cosine decay, bf16 autocast")
def point_mae(rng):
    k = 32
    model = _PointMae(depth=_smoke(12, 2), dec_depth=_smoke(4, 1), d=_smoke(384, 48), heads=_smoke(6, 4)).cuda().train()
    # About 2k tensors a step with 12 + 4 blocks (counted on CPU) plus some 6 a
    # sampled centre (240 on average): 150 steps make about 1M events.
    steps = _smoke(150, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    for _ in range(steps):
        n = rng.choice(_smoke((1024, 2048, 4096, 8192), (256, 512)))
        b = min(_smoke(128, 4), _smoke(384 * 1024, 2048) // n)
        g = n // 16
        pts = torch.randn(b, n, 3, device="cuda")
        pts = pts - pts.mean(1, keepdim=True)
        pts = pts / pts.norm(dim=-1).amax(1)[:, None, None]
        pts = pts * torch.empty(b, 1, 3, device="cuda").uniform_(2 / 3, 3 / 2) + torch.empty(b, 1, 3, device="cuda").uniform_(-0.2, 0.2)
        with torch.no_grad():
            centres = _gather_points(pts, _farthest_points(pts, g))
            idx = _square_distance(centres, pts).topk(k, -1, largest=False).indices
            groups = _gather_points(pts, idx) - centres[:, :, None]
            order = torch.rand(b, g, device="cuda").argsort(1)
            vis, msk = order[:, : g - int(0.6 * g)], order[:, g - int(0.6 * g):]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            tokens = model.embed(groups.flatten(0, 1)).view(b, g, -1)
            rec = model(tokens, centres, vis, msk).float().reshape(-1, k, 3)
        gt = groups.gather(1, msk[..., None, None].expand(-1, -1, k, 3)).flatten(0, 1)
        dist = _square_distance(rec, gt)
        loss = dist.min(2)[0].mean() + dist.min(1)[0].mean()
        loss.backward()
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        del pts, centres, idx, groups, order, vis, msk, tokens, rec, gt, dist, loss

"""The workloads of the twelfth recording (eight held-out families), moved verbatim from record.py; how record.py
registers them: batch_common.py."""

import math

import torch

from batch_common import Batch
from workload_helpers import llama_config, _loguniform, _padded_ids, randint

_b = Batch()  # this module's workloads, and record.py's module object once register() has run
workload = _b.workload
register = _b.register  # what record.py calls


# --------------------------- held out, the twelfth recording: eight families


@workload("LLM knowledge distillation: a frozen Llama-style teacher (HF LlamaForCausalLM, hidden 2048, 16 layers, GQA 16/4 heads, MLP 5632, vocab 32000: 1.1B, random init, bf16, eval, no_grad) and a trained student (hidden 1024, 12 layers, GQA 16/4, MLP 2816, same vocab: 0.3B); batches of 1-16 sequences of 128-2048 tokens (log-uniform) right-padded to the longest (multiple of 8) and capped at 12k tokens; loss 0.5 CE + 0.5 KL to the teacher's softened logits (T=2) over the real tokens, 120 steps, gradient clipping, AdamW, bf16 autocast")
def llm_distill(rng):
    from transformers import LlamaConfig, LlamaForCausalLM

    f = torch.nn.functional
    tcfg = LlamaConfig(
        hidden_size=2048, intermediate_size=5632, num_hidden_layers=16, num_attention_heads=16,
        num_key_value_heads=4, vocab_size=32000, max_position_embeddings=2048,
    )
    teacher = LlamaForCausalLM(tcfg).to("cuda", torch.bfloat16).eval()
    student = LlamaForCausalLM(llama_config(12, 4, 2048)).cuda().train()
    student.config.use_cache = False
    opt = torch.optim.AdamW(student.parameters(), lr=3e-4)
    t = 2.0
    for _ in range(120):
        lengths = []
        for _ in range(rng.randint(1, 16)):
            n = _loguniform(rng, 128, 2048)
            if (len(lengths) + 1) * max(lengths + [n]) > 12288:
                break
            lengths.append(n)
        ids, mask = _padded_ids(32000, lengths, mult=8)
        with torch.no_grad():
            t_logits = teacher(input_ids=ids, attention_mask=mask, use_cache=False).logits
        with torch.autocast("cuda", dtype=torch.bfloat16):
            s_logits = student(input_ids=ids, attention_mask=mask).logits
        real = mask[:, 1:].bool()
        s_sel = s_logits[:, :-1][real].float()
        t_sel = t_logits[:, :-1][real].float()
        ce = f.cross_entropy(s_sel, ids[:, 1:][real])
        kl = f.kl_div(f.log_softmax(s_sel / t, -1), f.log_softmax(t_sel / t, -1), log_target=True, reduction="batchmean") * t * t
        loss = 0.5 * ce + 0.5 * kl
        loss.backward()
        torch.nn.utils.clip_grad_norm_(student.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, mask, t_logits, s_logits, real, s_sel, t_sel, ce, kl, loss


@workload("protein language-model pretraining: HF EsmForMaskedLM (ESM-2 150M-sized: 30 layers, width 640, 20 heads, FFN 2560, rotary positions, token dropout, 33-token vocabulary, random init, sdpa), sequences of 50-1024 residues (log-uniform, cropped at 1022 plus cls and eos) batched by a token budget of 16k (sorted into length buckets as ESM's batch sampler does) and padded to the longest, 15% masked (80/10/10), 150 steps, AdamW, bf16 autocast")
def esm_mlm(rng):
    from transformers import EsmConfig, EsmForMaskedLM

    cfg = EsmConfig(
        vocab_size=33, hidden_size=640, num_hidden_layers=30, num_attention_heads=20, intermediate_size=2560,
        position_embedding_type="rotary", token_dropout=True, mask_token_id=32, pad_token_id=1,
        max_position_embeddings=1026, emb_layer_norm_before=False,
    )
    model = EsmForMaskedLM(cfg).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=4e-4, weight_decay=0.01)
    pool = []
    for _ in range(150):
        if not pool:
            # A shuffled chunk of the corpus, sorted so each batch holds similar lengths.
            pool = sorted(_loguniform(rng, 50, 1024) for _ in range(400))
            cuts = []
            while pool:
                s = pool[0] + 2
                k = max(1, min(len(pool), 16384 // min(s, 1024)))
                while k > 1 and min(pool[k - 1] + 2, 1024) * k > 16384:
                    k -= 1
                cuts.append(pool[:k])
                pool = pool[k:]
            rng.shuffle(cuts)
            pool = cuts
        lengths = [min(n, 1022) + 2 for n in pool.pop()]
        ids, mask = _padded_ids(33, lengths, pad=1)
        ids = ids.clamp(4, 29)
        ids[:, 0] = 0
        ids.scatter_(1, (torch.tensor(lengths, device="cuda") - 1)[:, None], 2)
        ids = ids.masked_fill(~mask.bool(), 1)
        pick = (torch.rand(ids.shape, device="cuda") < 0.15) & mask.bool()
        pick[:, 0] = False
        labels = ids.masked_fill(~pick, -100)
        roll = torch.rand(ids.shape, device="cuda")
        inputs = torch.where(pick & (roll < 0.8), 32, ids)
        inputs = torch.where(pick & (roll >= 0.8) & (roll < 0.9), torch.randint_like(ids, 4, 29), inputs)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=inputs, attention_mask=mask, labels=labels).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, mask, pick, labels, roll, inputs, loss


@workload("quantization-aware training, PyTorch eager-mode QAT as in its tutorial: torchvision's quantizable ResNet-50 (random init) with conv-BN-ReLU fused for QAT (fuse_model(is_qat=True)), the default fbgemm QAT qconfig (per-channel weight and per-tensor activation fake quantization with moving-average observers) from prepare_qat; batches of 32-96 images at 224 px, observers disabled after 60 steps and BatchNorm statistics frozen after 80, 140 steps, SGD with momentum, fp32")
def qat_resnet(rng):
    import torchvision.models.quantization as qmodels
    from torch.ao.nn.intrinsic import qat as nniqat
    from torch.ao import quantization as tq

    model = qmodels.resnet50(weights=None, quantize=False)
    model.train()
    model.fuse_model(is_qat=True)
    model.qconfig = tq.get_default_qat_qconfig("fbgemm")
    tq.prepare_qat(model, inplace=True)
    model = model.cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9, weight_decay=1e-4)
    for step in range(140):
        if step == 60:
            model.apply(tq.disable_observer)
        if step == 80:
            model.apply(nniqat.freeze_bn_stats)
        b = rng.randint(32, 96)
        x = torch.randn(b, 3, 224, 224, device="cuda")
        y = torch.randint(0, 1000, (b,), device="cuda")
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, y, loss


class _GraphormerLayer(torch.nn.Module):
    def __init__(self, d, heads, ffn):
        super().__init__()
        nn = torch.nn
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ffn = nn.Sequential(nn.Linear(d, ffn), nn.GELU(), nn.Linear(ffn, d))
        self.drop = nn.Dropout(0.1)

    def forward(self, x, bias):
        b, n, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=bias, dropout_p=0.1 if self.training else 0.0)
        x = x + self.drop(self.out(a.transpose(1, 2).reshape(b, n, d)))
        return x + self.drop(self.ffn(self.norm2(x)))


@workload("graph transformer on molecular graphs, Graphormer-base-style (12 layers of width 768, 32 heads, FFN 768, pre-norm; atom embeddings of 9 features summed, degree (centrality) embeddings, an attention bias per head from embeddings of the shortest-path distance (0-20, computed on the host and copied) and of the mean edge features along the path, a virtual graph token; random init), batches of 64-256 molecules of 6-60 atoms (PCQM4M-like, log-uniform) padded to the batch's largest molecule (dense n x n attention, padding masked in the bias), L1 regression of one target from the graph token, 200 steps, gradient clipping, AdamW, bf16 autocast")
def graphormer_mol(rng):
    nn = torch.nn
    d, heads, layers = 768, 32, 12
    atom = nn.Embedding(9 * 128, d, padding_idx=0).cuda()
    degree = nn.Embedding(64, d, padding_idx=0).cuda()
    spatial = nn.Embedding(24, heads, padding_idx=0).cuda()
    edge = nn.Embedding(3 * 32, heads).cuda()
    token = nn.Parameter(torch.zeros(1, 1, d, device="cuda"))
    token_bias = nn.Parameter(torch.zeros(1, heads, 1, 1, device="cuda"))
    blocks = nn.ModuleList([_GraphormerLayer(d, heads, d) for _ in range(layers)]).cuda()
    final = nn.LayerNorm(d).cuda()
    head = nn.Linear(d, 1).cuda()
    params = [token, token_bias, *atom.parameters(), *degree.parameters(), *spatial.parameters(), *edge.parameters(),
              *blocks.parameters(), *final.parameters(), *head.parameters()]
    opt = torch.optim.AdamW(params, lr=2e-4, weight_decay=0.0)
    for _ in range(200):
        sizes = [_loguniform(rng, 6, 60) for _ in range(rng.randint(64, 256))]
        b, n = len(sizes), max(sizes)
        # The collator's padded host tensors, copied to the device.
        counts = torch.tensor(sizes)
        real = torch.arange(n)[None] < counts[:, None]
        x = torch.randint(1, 9 * 128, (b, n, 9)) * real[:, :, None]
        deg = torch.randint(1, 6, (b, n)) * real
        pair = real[:, :, None] & real[:, None, :]
        spd = torch.randint(1, 21, (b, n, n)) * pair + 1
        spd = torch.where(pair, spd, 0)
        ef = torch.randint(0, 3 * 32, (b, n, n, 3))
        x, deg, spd, ef, real_d = (t.cuda(non_blocking=True) for t in (x, deg, spd, ef, real))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = atom(x).sum(2) + degree(deg)
            h = torch.cat([token.expand(b, 1, d), h], 1)
            bias = (spatial(spd) + edge(ef).mean(3)).permute(0, 3, 1, 2)
            bias = torch.nn.functional.pad(bias, (1, 0, 1, 0)) + torch.nn.functional.pad(token_bias.expand(b, heads, 1, n), (1, 0, 0, n))
            keep = torch.nn.functional.pad(real_d, (1, 0), value=True)
            bias = bias.float().masked_fill(~keep[:, None, None, :], float("-inf")).to(h.dtype)
            for block in blocks:
                h = block(h, bias)
            loss = torch.nn.functional.l1_loss(head(final(h[:, 0])).squeeze(-1).float(), torch.randn(b, device="cuda"))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 5.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, deg, spd, ef, real_d, h, bias, keep, loss


class _CrossAttention(torch.nn.Module):
    def __init__(self, dq, dkv, heads, ffn):
        super().__init__()
        nn = torch.nn
        self.nq, self.nkv, self.n2 = nn.LayerNorm(dq), nn.LayerNorm(dkv), nn.LayerNorm(dq)
        self.attn = nn.MultiheadAttention(dq, heads, kdim=dkv, vdim=dkv, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(dq, ffn), nn.GELU(), nn.Linear(ffn, dq))

    def forward(self, q, kv, pad=None):
        kv = self.nkv(kv)
        x = q + self.attn(self.nq(q), kv, kv, key_padding_mask=pad, need_weights=False)[0]
        return x + self.mlp(self.n2(x))


@workload("Perceiver IO masked language modelling on raw UTF-8 bytes (Perceiver IO language-sized, narrower: inputs of 262 byte ids embedded to 768 with learned positions, 256 latents of 1024, one encoder cross-attention, 16 latent self-attention layers of 8 heads, a decoder cross-attention from every input position's query; random init), batches of 4-64 texts of 128-2048 bytes (log-uniform) padded to the longest (multiple of 8) with a key padding mask, capped at 48k bytes, 15% of bytes masked, 150 steps, gradient clipping, AdamW, bf16 autocast")
def perceiver_bytes(rng):
    nn = torch.nn
    d_in, d_lat, n_lat = 768, 1024, 256
    embed = nn.Embedding(262, d_in).cuda()
    pos = nn.Parameter(0.02 * torch.randn(2048, d_in, device="cuda"))
    latents = nn.Parameter(0.02 * torch.randn(n_lat, d_lat, device="cuda"))
    encode = _CrossAttention(d_lat, d_in, 8, 4 * d_lat).cuda()
    process = nn.ModuleList([
        nn.TransformerEncoderLayer(d_lat, 8, 4 * d_lat, dropout=0.0, activation="gelu", batch_first=True, norm_first=True)
        for _ in range(16)
    ]).cuda()
    decode = _CrossAttention(d_in, d_lat, 8, 4 * d_in).cuda()
    head = nn.Linear(d_in, 262).cuda()
    params = [pos, latents, *embed.parameters(), *encode.parameters(), *process.parameters(), *decode.parameters(), *head.parameters()]
    opt = torch.optim.AdamW(params, lr=1e-4)
    for _ in range(150):
        lengths = []
        for _ in range(rng.randint(4, 64)):
            n = _loguniform(rng, 128, 2048)
            if (len(lengths) + 1) * max(lengths + [n]) > 49152:
                break
            lengths.append(n)
        ids, mask = _padded_ids(262, lengths, mult=8)
        pad = ~mask.bool()
        pick = (torch.rand(ids.shape, device="cuda") < 0.15) & mask.bool()
        labels = ids.masked_fill(~pick, -100)
        inputs = ids.masked_fill(pick, 3)
        b, s = ids.shape
        with torch.autocast("cuda", dtype=torch.bfloat16):
            x = embed(inputs) + pos[:s]
            z = encode(latents.expand(b, n_lat, d_lat), x, pad)
            for layer in process:
                z = layer(z)
            out = decode(pos[:s].expand(b, s, d_in), z)
            loss = torch.nn.functional.cross_entropy(head(out).flatten(0, 1).float(), labels.flatten())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, mask, pad, pick, labels, inputs, x, z, out, loss


class _YConv(torch.nn.Sequential):
    def __init__(self, c1, c2, k=1, s=1):
        nn = torch.nn
        super().__init__(nn.Conv2d(c1, c2, k, s, (k - 1) // 2, bias=False), nn.BatchNorm2d(c2, eps=1e-3, momentum=0.03), nn.SiLU())


class _C3(torch.nn.Module):
    """YOLOv5's CSP bottleneck with 3 convolutions."""

    def __init__(self, c1, c2, n=1, shortcut=True):
        super().__init__()
        h = c2 // 2
        self.cv1, self.cv2, self.cv3 = _YConv(c1, h), _YConv(c1, h), _YConv(2 * h, c2)
        self.m = torch.nn.ModuleList([torch.nn.Sequential(_YConv(h, h), _YConv(h, h, 3)) for _ in range(n)])
        self.shortcut = shortcut

    def forward(self, x):
        y = self.cv1(x)
        for m in self.m:
            y = y + m(y) if self.shortcut else m(y)
        return self.cv3(torch.cat([y, self.cv2(x)], 1))


class _Yolo(torch.nn.Module):
    """YOLOv5s: CSP-Darknet backbone, SPPF, PAN neck, 3 anchors per level at strides 8, 16, 32."""

    def __init__(self, classes=80):
        super().__init__()
        nn = torch.nn
        self.stem = nn.Sequential(_YConv(3, 32, 6, 2), _YConv(32, 64, 3, 2), _C3(64, 64, 1), _YConv(64, 128, 3, 2), _C3(128, 128, 2))
        self.down4 = nn.Sequential(_YConv(128, 256, 3, 2), _C3(256, 256, 3))
        self.down5 = nn.Sequential(_YConv(256, 512, 3, 2), _C3(512, 512, 1))
        self.sppf1, self.sppf2 = _YConv(512, 256), _YConv(1024, 512)
        self.lat5, self.top4 = _YConv(512, 256), _C3(512, 256, 1, False)
        self.lat4, self.top3 = _YConv(256, 128), _C3(256, 128, 1, False)
        self.bot3, self.out4 = _YConv(128, 128, 3, 2), _C3(256, 256, 1, False)
        self.bot4, self.out5 = _YConv(256, 256, 3, 2), _C3(512, 512, 1, False)
        self.detect = nn.ModuleList([nn.Conv2d(c, 3 * (5 + classes), 1) for c in (128, 256, 512)])

    def forward(self, x):
        f = torch.nn.functional
        p3 = self.stem(x)
        p4 = self.down4(p3)
        y = self.sppf1(self.down5(p4))
        y1 = f.max_pool2d(y, 5, 1, 2)
        y2 = f.max_pool2d(y1, 5, 1, 2)
        p5 = self.sppf2(torch.cat([y, y1, y2, f.max_pool2d(y2, 5, 1, 2)], 1))
        h5 = self.lat5(p5)
        h4 = self.lat4(self.top4(torch.cat([f.interpolate(h5, scale_factor=2.0), p4], 1)))
        o3 = self.top3(torch.cat([f.interpolate(h4, scale_factor=2.0), p3], 1))
        o4 = self.out4(torch.cat([self.bot3(o3), h4], 1))
        o5 = self.out5(torch.cat([self.bot4(o4), h5], 1))
        return [d(o) for d, o in zip(self.detect, (o3, o4, o5))]


def _box_giou(a, b):
    """GIoU of matching rows of two (n, 4) centre-size box sets."""
    a1, a2 = a[:, :2] - a[:, 2:] / 2, a[:, :2] + a[:, 2:] / 2
    b1, b2 = b[:, :2] - b[:, 2:] / 2, b[:, :2] + b[:, 2:] / 2
    inter = (torch.min(a2, b2) - torch.max(a1, b1)).clamp(min=0).prod(1)
    union = a[:, 2:].prod(1) + b[:, 2:].prod(1) - inter + 1e-7
    hull = (torch.max(a2, b2) - torch.min(a1, b1)).prod(1) + 1e-7
    iou = inter / union
    return iou - (hull - union) / hull


@workload("single-stage detection training, YOLOv5-style (hand-written YOLOv5s: CSP-Darknet with C3 blocks, SPPF, PAN neck, 3 anchors at strides 8/16/32, 80 classes, random init), mosaic batches (assembled on the host: 0-120 boxes per image) at multi-scale sizes 320-960 px (0.5-1.5 x 640, multiple of 32), batch 16-64 capped at 64 images of 640 px worth of pixels, YOLOv5's target building (anchor-ratio matching, centre cell plus its two nearest neighbours), GIoU box, objectness and class BCE losses, 200 steps, SGD (momentum 0.937, nesterov) with an EMA of the weights, bf16 autocast")
def yolo_mosaic(rng):
    f = torch.nn.functional
    model = _Yolo().cuda().train()
    ema = _Yolo().cuda().eval().requires_grad_(False)
    ema.load_state_dict(model.state_dict())
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.937, nesterov=True, weight_decay=5e-4)
    anchors = torch.tensor([[10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119], [116, 90, 156, 198, 373, 326]], device="cuda").float().view(3, 3, 2)
    strides = (8, 16, 32)
    offsets = torch.tensor([[0, 0], [1, 0], [0, 1], [-1, 0], [0, -1]], device="cuda").float() * 0.5
    for step in range(200):
        size = randint(rng, 320, 960, 32)
        b = min(rng.randint(16, 64), 64 * 640 * 640 // (size * size))
        imgs = torch.randint(0, 256, (b, 3, size, size), dtype=torch.uint8).pin_memory()
        boxes = []
        for i in range(b):
            k = rng.randint(0, 120)
            t = torch.rand(k, 6)
            t[:, 0], t[:, 1] = i, torch.randint(0, 80, (k,)).float()
            t[:, 4:] = t[:, 4:] * 0.3 + 0.01
            boxes.append(t)
        x = imgs.cuda(non_blocking=True).float() / 255
        targets = torch.cat(boxes).cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            preds = model(x)
        lbox = lobj = lcls = torch.zeros((), device="cuda")
        for level, p in enumerate(preds):
            bs, _, h, w = p.shape
            p = p.float().view(bs, 3, 85, h, w).permute(0, 1, 3, 4, 2)
            anc = anchors[level] / strides[level]
            gain = torch.tensor([1, 1, w, h, w, h], device="cuda").float()
            t = (targets * gain)[None].expand(3, -1, -1)
            a = torch.arange(3, device="cuda")[:, None].expand(3, len(targets))
            r = t[..., 4:6] / anc[:, None]
            keep = torch.max(r, 1 / r).max(2)[0] < 4.0
            t, a = t[keep], a[keep]
            gxy = t[:, 2:4]
            gxi = torch.tensor([w, h], device="cuda") - gxy
            j, k = ((gxy % 1 < 0.5) & (gxy > 1)).T
            l, m = ((gxi % 1 < 0.5) & (gxi > 1)).T
            sel = torch.stack((torch.ones_like(j), j, k, l, m))
            t, a = t.repeat(5, 1, 1)[sel], a.repeat(5, 1)[sel]
            off = (torch.zeros_like(gxy)[None] + offsets[:, None])[sel]
            gij = (t[:, 2:4] - off).long()
            gi, gj = gij[:, 0].clamp(0, w - 1), gij[:, 1].clamp(0, h - 1)
            bi, cls = t[:, 0].long(), t[:, 1].long()
            tobj = torch.zeros(p.shape[:4], device="cuda")
            if len(t):
                ps = p[bi, a, gj, gi]
                pxy = ps[:, :2].sigmoid() * 2 - 0.5
                pwh = (ps[:, 2:4].sigmoid() * 2) ** 2 * anc[a]
                giou = _box_giou(torch.cat([pxy, pwh], 1), torch.cat([t[:, 2:4] - gij, t[:, 4:6]], 1))
                lbox = lbox + (1 - giou).mean()
                tobj[bi, a, gj, gi] = giou.detach().clamp(0).to(tobj.dtype)
                lcls = lcls + f.binary_cross_entropy_with_logits(ps[:, 5:], f.one_hot(cls, 80).float())
            lobj = lobj + f.binary_cross_entropy_with_logits(p[..., 4], tobj) * (4.0, 1.0, 0.4)[level]
        loss = (0.05 * lbox + 1.0 * lobj + 0.5 * lcls) * b
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        with torch.no_grad():
            decay = 0.9999 * (1 - math.exp(-(step + 1) / 2000))
            for e, v in zip(ema.state_dict().values(), model.state_dict().values()):
                if e.dtype.is_floating_point:
                    e.mul_(decay).add_(v.detach(), alpha=1 - decay)
        del imgs, boxes, x, targets, preds, lbox, lobj, lcls, loss


@workload("translation serving with beam search: HF MarianMTModel (Marian transformer-base: 6+6 layers, d_model 512, 8 heads, FFN 2048, shared vocab 58101, sinusoidal positions, random init) fp16 under inference_mode, a dynamic batcher taking the queued requests (sentences of 4-128 tokens, log-uniform) up to 64 sentences or 4096 source tokens, sorted by length and right-padded to the batch's longest, generate with 4 beams for exactly 1.1 x the longest source + 4 new tokens (at most 160), 32 batches, best hypotheses copied back")
def marian_beam(rng):
    from transformers import MarianConfig, MarianMTModel

    cfg = MarianConfig(
        vocab_size=58101, d_model=512, encoder_layers=6, decoder_layers=6, encoder_attention_heads=8,
        decoder_attention_heads=8, encoder_ffn_dim=2048, decoder_ffn_dim=2048, max_position_embeddings=512,
        pad_token_id=58100, decoder_start_token_id=58100, eos_token_id=0, scale_embedding=True,
    )
    model = MarianMTModel(cfg).to("cuda", torch.float16).eval()
    queue = []
    with torch.inference_mode():
        for _ in range(32):
            # Requests that arrived while the previous batch was being decoded.
            queue += [_loguniform(rng, 4, 128) for _ in range(_loguniform(rng, 1, 96))]
            queue.sort()
            lengths = []
            while queue and len(lengths) < 64 and (len(lengths) + 1) * queue[0] <= 4096:
                lengths.append(queue.pop(0))
            ids, mask = _padded_ids(58000, lengths, pad=58100)
            n = min(160, int(1.1 * max(lengths)) + 4)
            out = model.generate(
                input_ids=ids, attention_mask=mask, num_beams=4, max_new_tokens=n, min_new_tokens=n, do_sample=False,
            )
            out.cpu()
            del ids, mask, out


def _sentinel_squeeze(ids, drop, sentinel, pad):
    """T5's span corruption, one side: every run of `sentinel`-marked positions
    replaced by one sentinel id (32099 downwards), the `drop` positions removed,
    rows compacted, an EOS (1) appended and padded to the longest."""
    first = sentinel & ~torch.nn.functional.pad(sentinel, (1, 0))[:, :-1]
    ids = torch.where(first, 32100 - torch.cumsum(first.long(), 1), ids)
    keep = ~drop | first
    pos = torch.cumsum(keep.long(), 1) - 1
    lengths = keep.sum(1)
    out = torch.full((ids.shape[0], int(lengths.max()) + 1), pad, dtype=ids.dtype, device=ids.device)
    rows = torch.arange(ids.shape[0], device=ids.device)[:, None].expand_as(ids)
    out[rows[keep], pos[keep]] = ids[keep]
    out[torch.arange(ids.shape[0], device=ids.device), lengths] = 1
    return out


@workload("T5 span-corruption pretraining (T5 v1.1-base-sized: 12+12 layers, d_model 768, 12 heads, gated-GELU FFN 2048, vocab 32128, untied head, random init) on packed rows of 568 tokens corrupted on the device (15% noise in spans of 3 on average, each span one sentinel, T5's inputs of about 512 and targets of about 114 tokens, rows compacted and padded to the batch's longest), 4 micro-batches of 32 rows per step, 40 steps, Adafactor, bf16 autocast")
def t5_span(rng):
    from transformers import T5Config, T5ForConditionalGeneration

    cfg = T5Config(
        d_model=768, d_ff=2048, num_layers=12, num_decoder_layers=12, num_heads=12, vocab_size=32128,
        feed_forward_proj="gated-gelu", tie_word_embeddings=False, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1,
    )
    model = T5ForConditionalGeneration(cfg).cuda().train()
    opt = torch.optim.Adafactor(model.parameters(), lr=1e-2)
    for _ in range(40):
        for _ in range(4):
            raw = torch.randint(2, 32000, (32, 568), device="cuda")
            starts = torch.rand(raw.shape, device="cuda") < 0.05
            noise = torch.nn.functional.max_pool1d(starts[:, None].float(), 3, 1, 1)[:, 0] > 0
            src = _sentinel_squeeze(raw, noise, noise, 0)
            tgt = _sentinel_squeeze(raw, ~noise, ~noise, -100)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(input_ids=src, attention_mask=(src != 0).long(), labels=tgt).loss / 4
            loss.backward()
            del raw, starts, noise, src, tgt, loss
        opt.step()
        opt.zero_grad(set_to_none=True)

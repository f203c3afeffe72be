"""The nineteenth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch18.py are). Same conventions: models built from configs (transformers, torchvision or hand-written
torch) with random weights, nothing downloaded, `rng` the workload's random.Random, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny.

record.py calls `register(<its own module object>)` once, just before main(), after batch18's: every workload
below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it reaches
record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.
"""

import math

import torch

from batch_common import Batch, upload as _upload
from workload_helpers import _repeat_kv, _rope_tables

_b = Batch()  # this batch's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- long-document QA with chunked prefill


@_workload("long-context document QA serving with chunked prefill (inference), vLLM/Sarathi-style chunks written by hand over an HF LlamaForCausalLM's weights (Llama-3.2-1B-shaped: hidden 2048, 16 layers, GQA 32/8 heads of 64, MLP 8192, vocab 128256, tied embeddings, rope theta 500000: 1.24B, random init) in bf16 under inference_mode; 8 requests one after another, each a document of 2k-32k tokens (log-uniform) uploaded from pinned memory and prefilled in chunks of 2048 into a KV cache preallocated for the request (per layer (1, 8, document + 384, 64)), each chunk attending to the cache so far plus itself (explicit (chunk, end) causal mask, keys and values repeated to 32 heads for SDPA, as HF does); then 1-4 questions (log-uniform) against the cached document, each 16-256 tokens (log-uniform) prefilled after it (overwriting the previous question's columns) and answered greedily with 16-128 new tokens (log-uniform), one token a step, the token read back every step; logits of the last position only")
def longdoc_chunked_prefill(rng):
    from transformers import LlamaConfig, LlamaForCausalLM

    d, layers, heads, kvh = _smoke(2048, 128), _smoke(16, 2), 32, 8
    dh = d // heads
    cfg = LlamaConfig(hidden_size=d, intermediate_size=_smoke(8192, 256), num_hidden_layers=layers, num_attention_heads=heads,
                      num_key_value_heads=kvh, vocab_size=128256, max_position_embeddings=131072, tie_word_embeddings=True)
    lm = LlamaForCausalLM(cfg).to("cuda", torch.bfloat16).eval()
    chunk = _smoke(2048, 64)
    doc_lo, doc_hi = _smoke(2048, 100), _smoke(32768, 400)
    extra = 256 + 128
    cos, sin = _rope_tables(dh, doc_hi + extra, 500000.0)
    sdpa = torch.nn.functional.scaled_dot_product_attention
    rope = _b.rec._rope

    def forward(ids, start, ks, vs):
        """Logits of the last of ids (1, T) at positions start .. start+T-1, their keys and values written into the
        cache columns start .. start+T-1, attention over columns 0 .. start+T-1."""
        t = ids.shape[1]
        end = start + t
        x = lm.model.embed_tokens(ids)
        c, s = cos[start:end], sin[start:end]
        mask = None
        if t > 1:
            mask = torch.arange(end, device="cuda")[None] <= torch.arange(start, end, device="cuda")[:, None]
        for layer, kb, vb in zip(lm.model.layers, ks, vs):
            a = layer.self_attn
            h = layer.input_layernorm(x)
            q = rope(a.q_proj(h).view(1, t, heads, dh).transpose(1, 2), c, s)
            kb[:, :, start:end] = rope(a.k_proj(h).view(1, t, kvh, dh).transpose(1, 2), c, s)
            vb[:, :, start:end] = a.v_proj(h).view(1, t, kvh, dh).transpose(1, 2)
            o = sdpa(q, _repeat_kv(kb[:, :, :end], heads // kvh), _repeat_kv(vb[:, :, :end], heads // kvh), attn_mask=mask)
            x = x + a.o_proj(o.transpose(1, 2).reshape(1, t, d))
            x = x + layer.mlp(layer.post_attention_layernorm(x))
            del h, q, o
        return lm.lm_head(lm.model.norm(x[:, -1]))

    # About 40 tensors a layer a forward (counted on CPU at 2 layers), 660 at 16: 8 requests of 5.4 chunks, 2.2
    # questions and 54 new tokens a question on average make about 990 forwards, about 1.3M events.
    with torch.inference_mode():
        for _ in range(_smoke(8, 2)):
            n = _loguniform(rng, doc_lo, doc_hi)
            cap = n + extra
            ks = [torch.empty(1, kvh, cap, dh, dtype=torch.bfloat16, device="cuda") for _ in range(layers)]
            vs = [torch.empty(1, kvh, cap, dh, dtype=torch.bfloat16, device="cuda") for _ in range(layers)]
            doc = torch.randint(0, cfg.vocab_size, (1, n))
            for s in range(0, n, chunk):
                ids = _upload(doc[:, s: s + chunk])
                forward(ids, s, ks, vs)
                del ids
            for _ in range(_loguniform(rng, 1, 4)):
                q = _loguniform(rng, 16, 256)
                tok = forward(_upload(torch.randint(0, cfg.vocab_size, (1, q))), n, ks, vs).argmax(-1, keepdim=True)
                for t in range(_loguniform(rng, 16, _smoke(128, 6)) - 1):
                    int(tok)  # detokenization, stop check
                    tok = forward(tok, n + q + t, ks, vs).argmax(-1, keepdim=True)
                int(tok)
                del tok
            del ks, vs, doc
    torch.cuda.synchronize()


# ---------------------------------------------------------------- instance-segmentation serving


@_workload("instance-segmentation serving (inference): torchvision Mask R-CNN ResNet-50-FPN v2 (91 classes, random init, the class logits' bias drawn so that a few classes score above the 0.05 threshold) under inference_mode and fp16 autocast, its own transform (resize to 800 short side / 1333 long side, normalize, batch padded to multiples of 32); 140 requests of 1-4 images (log-uniform) of 240-1920 px a side (log-uniform each, the width clipped to between a third and three times the height), decoded uint8 uploaded from pinned memory; RPN 1000 proposals, at most 100 detections an image, masks pasted back at the original size, thresholded at 0.5, and boxes, labels, scores and the bool masks copied back to the host")
def maskrcnn_serve(rng):
    import torchvision

    model = torchvision.models.detection.maskrcnn_resnet50_fpn_v2(
        weights=None, weights_backbone=None, num_classes=91, min_size=_smoke(800, 128), max_size=_smoke(1333, 224),
        rpn_pre_nms_top_n_test=_smoke(1000, 100), rpn_post_nms_top_n_test=_smoke(1000, 100), box_detections_per_img=100)
    with torch.no_grad():
        model.roi_heads.box_predictor.cls_score.bias.normal_(0, 2.0)
    model = model.cuda().eval()
    lo, hi = _smoke(240, 48), _smoke(1920, 160)
    # About 2150 tensors an image with its 100 detections (counted on CPU at full size, torchvision pastes the masks
    # one detection at a time): 140 requests of 2 images on average make about 1.2M events.
    with torch.inference_mode(), torch.autocast("cuda", dtype=torch.float16):
        for _ in range(_smoke(140, 3)):
            images = []
            for _ in range(_loguniform(rng, 1, 4)):
                h = _loguniform(rng, lo, hi)
                w = max(h // 3, min(3 * h, _loguniform(rng, lo, hi)))
                images.append(_upload(torch.randint(0, 256, (3, h, w), dtype=torch.uint8)).float() / 255)
            out = model(images)
            for det in out:
                det["boxes"].float().cpu(), det["labels"].cpu(), det["scores"].float().cpu()
                (det["masks"][:, 0] > 0.5).cpu()
            del images, out
    torch.cuda.synchronize()


# ---------------------------------------------------------------- CTC speech recognition serving


@_workload("speech recognition serving with CTC (inference), HF-pipeline-style chunking: an HF Wav2Vec2ForCTC (base-sized: 7-layer conv feature encoder of 512 channels, 12 transformer layers of width 768, 12 heads, stable layer norm and attention masks as wav2vec2-large-lv60, vocab 32; random init) in fp16 under inference_mode; 1000 requests of 1-16 utterances (log-uniform) of 1-60 s at 16 kHz (log-uniform), float32 waveforms uploaded from pinned memory, normalized to zero mean and unit variance over their samples on the device; utterances over 30 s cut into 20 s windows with 2 s of stride on each side (as chunk_length_s=20, stride_length_s=2); the windows sorted by length and batched up to 160 s of padded audio with an attention mask, greedy CTC decoding (argmax over the valid frames, the strides' frames dropped, unique_consecutive, blanks removed), the ids copied back per utterance")
def ctc_asr_serve(rng):
    from transformers import Wav2Vec2Config, Wav2Vec2ForCTC

    cfg = Wav2Vec2Config(hidden_size=_smoke(768, 64), num_hidden_layers=_smoke(12, 2), num_attention_heads=_smoke(12, 4),
                         intermediate_size=_smoke(3072, 128), conv_dim=(_smoke(512, 32),) * 7, feat_extract_norm="layer",
                         do_stable_layer_norm=True, vocab_size=32, num_conv_pos_embeddings=_smoke(128, 16))
    model = Wav2Vec2ForCTC(cfg).to("cuda", torch.float16).eval()
    sr = 16000
    window, stride = 20 * sr, 2 * sr
    budget = _smoke(160, 8) * sr
    ratio = 320  # samples a frame
    # About 300 tensors a batch of windows at 12 layers plus 7 an utterance and 7 a window (estimated from the CPU count
    # at 2 layers): 1000 requests of about 5.4 utterances (7.2 windows) in about 1.6 batches make about 1.15M events.
    with torch.inference_mode():
        for _ in range(_smoke(1000, 3)):
            utts = [_loguniform(rng, sr, _smoke(60, 4) * sr) for _ in range(_loguniform(rng, 1, 16))]
            pieces = []  # (utterance, start sample, length, frames to drop on the left, on the right)
            waves = []
            for u, n in enumerate(utts):
                x = _upload(torch.randn(n))
                waves.append(((x - x.mean()) / (x.std() + 1e-7)).half())
                if n <= 30 * sr or _smoke(0, 1):
                    pieces.append((u, 0, n, 0, 0))
                    continue
                s = 0
                while s < n:
                    e = min(n, s + window)
                    pieces.append((u, s, e - s, 0 if s == 0 else stride // ratio, 0 if e == n else stride // ratio))
                    if e == n:
                        break
                    s = e - 2 * stride
            del x
            pieces.sort(key=lambda p: p[2])
            texts = [[] for _ in utts]
            i = 0
            while i < len(pieces):
                j = i + 1
                while j < len(pieces) and (j + 1 - i) * pieces[j][2] <= budget:
                    j += 1
                group = pieces[i:j]
                width = group[-1][2]
                batch = torch.zeros(len(group), width, dtype=torch.float16, device="cuda")
                mask = torch.zeros(len(group), width, dtype=torch.long, device="cuda")
                for r, (u, s, n, _, _) in enumerate(group):
                    batch[r, :n] = waves[u][s: s + n]
                    mask[r, :n] = 1
                ids = model(batch, attention_mask=mask).logits.argmax(-1)
                frames = model._get_feat_extract_output_lengths(mask.sum(-1)).tolist()
                for r, (u, s, n, left, right) in enumerate(group):
                    seq = torch.unique_consecutive(ids[r, left: frames[r] - right])
                    texts[u].append(seq[seq != 0].cpu())
                del batch, mask, ids, seq
                i = j
            del waves, texts
    torch.cuda.synchronize()


# ---------------------------------------------------------------- model-zoo evaluation, one model after another


@_workload("model-zoo batch scoring (inference), one model after another as a benchmark/eval harness does: 10 torchvision classifiers (ResNet-50, MobileNetV3-Large, EfficientNet-B3 at 300 px, RegNetY-3.2GF, ConvNeXt-S, DenseNet-121, ViT-B/16, Swin-T, Inception-v3 at 299 px, ResNeXt-50 32x4d; random init), each built, cast to fp16 channels_last, warmed up with 3 batches of 64, then 80 scoring requests of 1-256 images (log-uniform, scored in microbatches of 32) under inference_mode: uint8 images of one of five camera sizes (480x640 to 1080x1920) uploaded from pinned memory, resized on the device (bilinear, antialiased) to the model's size + 12.5% on the short side and centre-cropped, normalized; softmax top-5 copied back; the model then freed before the next is built")
def zoo_eval_sweep(rng):
    import torchvision

    f = torch.nn.functional
    zoo = [("resnet50", 224, {}), ("mobilenet_v3_large", 224, {}), ("efficientnet_b3", 300, {}), ("regnet_y_3_2gf", 224, {}),
           ("convnext_small", 224, {}), ("densenet121", 224, {}), ("vit_b_16", 224, {}), ("swin_t", 224, {}),
           ("inception_v3", 299, {"aux_logits": False, "init_weights": False}), ("resnext50_32x4d", 224, {})]
    cams = [(480, 640), (720, 1280), (768, 1024), (1080, 1920), (1080, 1080)]
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1)

    def preprocess(u8, size):
        h, w = u8.shape[-2:]
        short = size * 8 // 7
        x = f.interpolate(u8.float(), (short, w * short // h) if h <= w else (h * short // w, short), mode="bilinear", antialias=True, align_corners=False)
        top, left = (x.shape[-2] - size) // 2, (x.shape[-1] - size) // 2
        x = (x[..., top: top + size, left: left + size] / 255 - mean) / std
        return x.half().contiguous(memory_format=torch.channels_last)

    # About 335 tensors a forward on average over the ten, preprocessing included (counted on CPU): 80 requests a model
    # of 46 images on average, scored in microbatches of 32, make about 163 forwards a model, about 1.1M events.
    for name, size, extra in zoo:
        size = _smoke(size, 80 if size > 224 else 64)
        if name == "vit_b_16":
            extra = {"image_size": size}
        model = getattr(torchvision.models, name)(weights=None, **extra).cuda().half().to(memory_format=torch.channels_last).eval()
        with torch.inference_mode():
            for _ in range(3):
                model(torch.randn(_smoke(64, 2), 3, size, size, device="cuda", dtype=torch.float16).contiguous(memory_format=torch.channels_last))
            # 24 requests a model, not the 80 first written: the recorder did not finish the sweep in 340 s on the
            # H200 (the CPU-side randint of up to 1.6 GB of frames a request is the cost), cut before any of its
            # allocation figures existed (session 16, calls 2-3).
            for _ in range(_smoke(24, 2)):
                n = _loguniform(rng, 1, _smoke(256, 40))
                h, w = rng.choice(cams) if _smoke(1, 0) else (90, 120)
                u8 = _upload(torch.randint(0, 256, (n, 3, h, w), dtype=torch.uint8))
                for s in range(0, n, 32):
                    logits = model(preprocess(u8[s: s + 32], size))
                    top = logits.float().softmax(-1).topk(5)
                    top.values.cpu(), top.indices.cpu()
                    del logits, top
                del u8
        del model
    torch.cuda.synchronize()


# ---------------------------------------------------------------- recommender with host-resident embeddings


@_workload("recommender training with host-resident embedding tables and a side-stream prefetch pipeline (two CUDA streams), TorchRec/HugeCTR-embedding-cache-style: 26 categorical features (Criteo-like, ids power-law skewed within each feature) over one concatenated table of 8M rows x 64 fp32 (2 GB) with a row-wise Adagrad state, both in pinned host memory; per step the next batch's ids deduplicated (torch.unique with inverse) and their rows and states gathered on the host, then copied to the GPU on a copy stream (non_blocking, an event the compute stream waits on, record_stream) while the current batch trains; a DCN-v2 model (13 dense features through a 512-256-64 bottom MLP, 3 full-rank cross layers over the 27 x 64 concatenation, a 1024-512-1 top MLP), BCE loss, Adam on the dense weights; the unique rows' gradients (rows[inverse] backward) applied on the device by row-wise Adagrad (lr 0.05) and the rows and states copied back on the copy stream after it waits on the compute stream, written into the host table one step later (one step of staleness); batches of 1024-8192 (log-uniform), 2500 steps; every 500 steps a no_grad evaluation on 8 batches of 8192 (AUC-like ranking by sort)")
def emb_offload_rec(rng):
    f = torch.nn.functional
    nn = torch.nn
    feats, dim, rows = 26, 64, _smoke(8_000_000, 26_000)
    per = rows // feats
    offsets = torch.arange(feats) * per
    table = torch.empty(rows, dim).normal_(0, 0.01).pin_memory()
    state = torch.zeros(rows).pin_memory()

    class Dcn(nn.Module):
        def __init__(self):
            super().__init__()
            self.bottom = nn.Sequential(nn.Linear(13, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, dim), nn.ReLU())
            w = (feats + 1) * dim
            self.cross = nn.ModuleList(nn.Linear(w, w) for _ in range(3))
            self.top = nn.Sequential(nn.Linear(w, 1024), nn.ReLU(), nn.Linear(1024, 512), nn.ReLU(), nn.Linear(512, 1))

        def forward(self, dense, emb):
            x0 = torch.cat([self.bottom(dense)[:, None], emb], 1).flatten(1)
            x = x0
            for c in self.cross:
                x = x0 * c(x) + x
            return self.top(x)[:, 0]

    model = Dcn().cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    copy, main = torch.cuda.Stream(), torch.cuda.current_stream()

    def draw(b):
        ids = (torch.rand(b, feats) ** 4 * per).long() + offsets  # Zipf-like skew within each feature
        return torch.randn(b, 13), ids, (torch.rand(b) < 0.25).float()

    def prefetch(b):
        """The batch's host tensors gathered, and their device copies started on the copy stream."""
        dense, ids, label = draw(b)
        uniq, inv = torch.unique(ids, return_inverse=True)
        host = [dense.pin_memory(), inv.pin_memory(), label.pin_memory(), table.index_select(0, uniq).pin_memory(), state.index_select(0, uniq).pin_memory()]
        with torch.cuda.stream(copy):
            dev = [t.to("cuda", non_blocking=True) for t in host]
            ready = copy.record_event()
        return uniq, dev, ready

    def writeback(uniq, r, s):
        """Updated rows and states copied to the host on the copy stream; the host table written once they land."""
        copy.wait_stream(main)
        with torch.cuda.stream(copy):
            hr, hs = torch.empty(r.shape, pin_memory=True), torch.empty(s.shape, pin_memory=True)
            hr.copy_(r, non_blocking=True)
            hs.copy_(s, non_blocking=True)
            done = copy.record_event()
        r.record_stream(copy)
        s.record_stream(copy)
        return uniq, hr, hs, done

    # 800 steps, not the 2500 first written: the recorder did not finish in 340 s on the H200, cut before any of
    # its allocation figures existed (session 16, calls 2-3).
    steps = _smoke(800, 4)
    pending_write = None
    nxt = prefetch(_loguniform(rng, 1024, _smoke(8192, 64)))
    # About 180 tensors a step (counted on CPU, backward, Adam, the copies and the Adagrad update included): 2500
    # steps and 5 evaluations make about 0.95M events.
    for step in range(steps):
        uniq, dev, ready = nxt
        main.wait_event(ready)
        for t in dev:
            t.record_stream(main)
        dense, inv, label, r, s = dev
        if pending_write is not None:  # the previous step's rows land in the host table
            wu, hr, hs, done = pending_write
            done.synchronize()
            table.index_copy_(0, wu, hr)
            state.index_copy_(0, wu, hs)
        nxt = prefetch(_loguniform(rng, 1024, _smoke(8192, 64)))
        r.requires_grad_()
        logit = model(dense, r[inv])
        loss = f.binary_cross_entropy_with_logits(logit, label)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        g = r.grad
        with torch.no_grad():
            s = s + (g * g).mean(1)
            r = r.detach() - 0.05 * g / (s.sqrt() + 1e-8)[:, None]
        pending_write = writeback(uniq, r, s)
        del dense, inv, label, r, s, g, logit, loss, dev
        if (step + 1) % _smoke(500, 2) == 0:
            model.eval()
            with torch.no_grad():
                for _ in range(_smoke(8, 2)):
                    dense, ids, label = draw(_smoke(8192, 64))
                    uniq, inv = torch.unique(ids, return_inverse=True)
                    emb = _upload(table.index_select(0, uniq))[_upload(inv)]
                    score = model(_upload(dense), emb)
                    order = score.argsort(descending=True)
                    y = _upload(label)[order]
                    float((y.cumsum(0) * (1 - y)).sum() / (y.sum() * (1 - y).sum()).clamp(min=1))
                    del emb, score, order, y
            model.train()
    main.wait_event(nxt[2])
    del nxt, pending_write
    torch.cuda.synchronize()


# ---------------------------------------------------------------- GAT link prediction


class _GatLayer(torch.nn.Module):
    """A GAT layer (Velickovic et al. 2018) as PyG's GATConv computes it: a linear map to heads x channels, per-edge
    attention logits from source and destination terms, LeakyReLU 0.2, softmax over each node's incoming edges by
    scatter (the max subtracted without gradient, sums by index_add), attention dropout, messages summed by index_add."""

    def __init__(self, cin, heads, ch):
        super().__init__()
        self.heads, self.ch = heads, ch
        self.lin = torch.nn.Linear(cin, heads * ch, bias=False)
        self.att_src = torch.nn.Parameter(torch.randn(1, heads, ch) * 0.1)
        self.att_dst = torch.nn.Parameter(torch.randn(1, heads, ch) * 0.1)
        self.bias = torch.nn.Parameter(torch.zeros(heads * ch))

    def forward(self, x, src, dst):
        f = torch.nn.functional
        n = x.shape[0]
        h = self.lin(x).view(n, self.heads, self.ch)
        e = f.leaky_relu((h * self.att_src).sum(-1)[src] + (h * self.att_dst).sum(-1)[dst], 0.2)  # (E, heads)
        with torch.no_grad():
            m = torch.full((n, self.heads), -1e9, device=x.device, dtype=e.dtype)
            m = m.scatter_reduce(0, dst[:, None].expand(-1, self.heads), e, "amax")
        e = (e - m[dst]).exp()
        den = torch.zeros(n, self.heads, device=x.device, dtype=e.dtype).index_add(0, dst, e)
        alpha = f.dropout(e / (den[dst] + 1e-16), 0.1, self.training)
        out = torch.zeros_like(h).index_add(0, dst, h[src] * alpha[..., None])
        return out.reshape(n, -1) + self.bias


@_workload("graph link-prediction training, full-graph GAT (PyG-GATConv-style, written by hand): a random power-law graph of 200k nodes and 1M directed edges (sources and destinations power-law skewed, self-loops added), 128 random node features; an input linear layer and 3 GAT layers of 4 heads x 32 with ELU and residuals; per step DropEdge keeping 70-95% of the message edges (uniform, so the edge count varies every step), 64k positive training edges and as many negatives with corrupted destinations, dot-product scores, BCE loss, Adam; 2000 steps; every 400 steps a no_grad full-graph evaluation ranking 20k validation edges against 100 random negatives each (MRR, chunks of 2000 edges)")
def gat_linkpred(rng):
    f = torch.nn.functional
    n, e = _smoke(200_000, 800), _smoke(1_000_000, 6000)
    src = (torch.rand(e, device="cuda") ** 2 * n).long()
    dst = (torch.rand(e, device="cuda") ** 1.5 * n).long()
    loops = torch.arange(n, device="cuda")
    x = torch.randn(n, 128, device="cuda")
    n_val = _smoke(20_000, 100)
    val, train = torch.arange(n_val, device="cuda"), torch.arange(n_val, e, device="cuda")

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = torch.nn.Linear(128, 128)
            self.layers = torch.nn.ModuleList(_GatLayer(128, 4, 32) for _ in range(3))

        def forward(self, x, s, d):
            h = self.inp(x)
            for layer in self.layers:
                h = h + f.elu(layer(h, s, d))
            return h

    model = Net().cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    batch = _smoke(65536, 256)
    # About 250 tensors a step (counted on CPU, backward and Adam included): 2000 steps and 5 evaluations make about
    # 1.0M events.
    for step in range(_smoke(2000, 4)):
        keep = torch.rand(train.shape[0], device="cuda") < rng.uniform(0.7, 0.95)
        msg = train[keep]
        s, d = torch.cat([src[msg], loops]), torch.cat([dst[msg], loops])
        pos = train[torch.randint(0, train.shape[0], (batch,), device="cuda")]
        ps, pd = src[pos], dst[pos]
        nd = torch.randint(0, n, (batch,), device="cuda")
        h = model(x, s, d)
        score = torch.cat([(h[ps] * h[pd]).sum(-1), (h[ps] * h[nd]).sum(-1)])
        label = torch.cat([torch.ones(batch, device="cuda"), torch.zeros(batch, device="cuda")])
        loss = f.binary_cross_entropy_with_logits(score, label)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del keep, msg, s, d, pos, ps, pd, nd, h, score, label, loss
        if (step + 1) % _smoke(400, 2) == 0:
            model.eval()
            with torch.no_grad():
                h = model(x, torch.cat([src[train], loops]), torch.cat([dst[train], loops]))
                rr = []
                for lo in range(0, n_val, _smoke(2000, 50)):
                    v = val[lo: lo + _smoke(2000, 50)]
                    cand = torch.cat([dst[v][:, None], torch.randint(0, n, (v.shape[0], 100), device="cuda")], 1)
                    sc = (h[src[v]][:, None] * h[cand]).sum(-1)
                    rr.append(1.0 / ((sc > sc[:, :1]).sum(1) + 1).float())
                float(torch.cat(rr).mean())
                del h, rr, v, cand, sc
            model.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- neural audio codec training


class _ResUnit(torch.nn.Module):
    def __init__(self, ch, dil):
        super().__init__()
        self.c1 = torch.nn.Conv1d(ch, ch, 7, padding=3 * dil, dilation=dil)
        self.c2 = torch.nn.Conv1d(ch, ch, 1)

    def forward(self, x):
        f = torch.nn.functional
        return x + self.c2(f.elu(self.c1(f.elu(x))))


class _Codec(torch.nn.Module):
    """A SoundStream/EnCodec-style codec, written by hand: an encoder (a 7-tap conv to 32 channels, then four blocks of
    three dilated residual units (1, 3, 9) and a strided conv doubling the channels, strides 2, 4, 5, 8: 320 samples a
    frame, then a conv to 128), a residual vector quantizer of 8 codebooks of 1024 x 128 (EMA codebook updates, dead
    codes restarted from the batch, straight-through), and the mirrored decoder with transposed convs."""

    def __init__(self, ch=32, latent=128, codebooks=8, codes=1024):
        super().__init__()
        nn = torch.nn
        enc, dec = [nn.Conv1d(1, ch, 7, padding=3)], []
        c = ch
        for s in (2, 4, 5, 8):
            enc += [_ResUnit(c, 1), _ResUnit(c, 3), _ResUnit(c, 9), nn.ELU(), nn.Conv1d(c, 2 * c, 2 * s, s, padding=math.ceil(s / 2))]
            c *= 2
        enc += [nn.ELU(), nn.Conv1d(c, latent, 3, padding=1)]
        dec = [nn.Conv1d(latent, c, 7, padding=3)]
        for s in (8, 5, 4, 2):
            dec += [nn.ELU(), nn.ConvTranspose1d(c, c // 2, 2 * s, s, padding=math.ceil(s / 2))]
            c //= 2
            dec += [_ResUnit(c, 1), _ResUnit(c, 3), _ResUnit(c, 9)]
        dec += [nn.ELU(), nn.Conv1d(c, 1, 7, padding=3)]
        self.enc, self.dec = nn.Sequential(*enc), nn.Sequential(*dec)
        self.register_buffer("books", torch.randn(codebooks, codes, latent))
        self.register_buffer("ema_sum", self.books.clone())
        self.register_buffer("ema_count", torch.ones(codebooks, codes))

    def quantize(self, z, nq):
        """z (B, latent, T) through the first nq codebooks: the quantized z (straight-through), the commitment loss."""
        f = torch.nn.functional
        flat = z.transpose(1, 2).reshape(-1, z.shape[1]).float()
        res, out, commit = flat, torch.zeros_like(flat), 0.0
        for i in range(nq):
            book = self.books[i]
            dist = (res ** 2).sum(1, keepdim=True) - 2 * res @ book.T + (book ** 2).sum(1)[None]
            idx = dist.argmin(1)
            q = book[idx]
            commit = commit + f.mse_loss(res, q.detach())
            if self.training:
                with torch.no_grad():
                    onehot = f.one_hot(idx, book.shape[0]).float()
                    self.ema_count[i].mul_(0.99).add_(onehot.sum(0), alpha=0.01)
                    self.ema_sum[i].mul_(0.99).add_(onehot.T @ res.detach(), alpha=0.01)
                    book.copy_(self.ema_sum[i] / self.ema_count[i].clamp(min=1e-5)[:, None])
                    dead = self.ema_count[i] < 0.02
                    nd = int(dead.sum())
                    if nd:
                        fresh = res.detach()[torch.randint(0, res.shape[0], (nd,), device=res.device)]
                        book[dead] = fresh
                        self.ema_sum[i][dead] = fresh
                        self.ema_count[i][dead] = 1.0
            out = out + q
            res = res - q.detach()
        out = flat + (out - flat).detach()
        return out.view(z.shape[0], z.shape[2], -1).transpose(1, 2).to(z.dtype), commit


@_workload("neural audio codec training, SoundStream/EnCodec-style (no discriminator), written by hand: a 24 kHz convolutional encoder and decoder (32-512 channels, strides 2-4-5-8: 75 frames a second, latent 128; 9.8M parameters, random init) around a residual vector quantizer of 8 codebooks of 1024 entries (distances by matmul, EMA codebook updates with decay 0.99, dead codes restarted from the batch, straight-through estimator, commitment loss 0.25) with quantizer dropout (1, 2, 4 or 8 codebooks a step, as bandwidths 0.75-6 kbps); bf16 autocast for the convolutions, the quantizer in fp32; batches of random waveforms of 0.5-3 s (log-uniform, the batch sized to 32 s of audio); L1 waveform loss plus a multi-resolution STFT loss (FFT 512, 1024, 2048, hop a quarter, Hann windows: spectral convergence and log-magnitude L1), Adam (betas 0.5, 0.9), 450 steps; every 150 steps a no_grad evaluation of 4 clips of 10 s at each of the four bandwidths")
def rvq_codec_train(rng):
    f = torch.nn.functional
    sr = 24000
    model = _Codec(ch=_smoke(32, 8), codes=_smoke(1024, 64)).cuda().train()
    opt = torch.optim.Adam(model.parameters(), lr=3e-4, betas=(0.5, 0.9))
    windows = {n: torch.hann_window(n).to("cuda") for n in (512, 1024, 2048)}

    def stft_loss(y, x):
        total = 0.0
        for n, win in windows.items():
            sy = torch.stft(y, n, n // 4, window=win, return_complex=True).abs()
            sx = torch.stft(x, n, n // 4, window=win, return_complex=True).abs()
            total = total + (sy - sx).norm() / sy.norm().clamp(min=1e-7) + (torch.log(sy + 1e-5) - torch.log(sx + 1e-5)).abs().mean()
        return total / len(windows)

    def run(wave, nq):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            z = model.enc(wave[:, None])
        q, commit = model.quantize(z, nq)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model.dec(q)
        out = out[:, 0, : wave.shape[1]].float()
        return torch.nn.functional.pad(out, (0, wave.shape[1] - out.shape[1])), commit  # the strides' rounding, padded back

    budget = _smoke(32, 2) * sr
    # About 1.5k tensors a step with 3.75 codebooks on average (counted on CPU, backward and foreach Adam over the 70
    # parameters included) and 300 an evaluation pass: 450 steps and 3 evaluations make about 1.35M events.
    for step in range(_smoke(450, 3)):
        n = _loguniform(rng, sr // 2, _smoke(3, 1) * sr) // 320 * 320
        b = max(1, budget // n)
        wave = _upload(torch.randn(b, n) * 0.1)
        nq = rng.choice((1, 2, 4, 8))
        out, commit = run(wave, nq)
        loss = f.l1_loss(out, wave) + stft_loss(out, wave) + 0.25 * commit
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del wave, out, commit, loss
        if (step + 1) % _smoke(150, 2) == 0:
            model.eval()
            with torch.no_grad():
                wave = _upload(torch.randn(4, _smoke(10, 1) * sr) * 0.1)
                for nq in (1, 2, 4, 8):
                    out, _ = run(wave, nq)
                    float(stft_loss(out, wave))
                    del out
                del wave
            model.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- sparse autoencoder on LM activations


@_workload("sparse-autoencoder training on a language model's activations (interpretability), SAELens/OpenAI-TopK-style: a frozen HF GPT2Model (GPT-2 small: 12 layers, width 768; random init) in fp16 harvesting the layer-8 residual stream (output_hidden_states, no_grad) from batches of 64 x 128 random tokens (BOS dropped) into a 262k x 768 fp32 activation buffer on the device, refilled by half and shuffled (randperm) whenever half has been consumed, activations scaled to norm sqrt(768); a TopK SAE (768 -> 16384 latents, k 32, pre-encoder bias, decoder rows unit-norm with their parallel gradient component removed before each Adam step), AuxK loss (k 256 over latents dead for 1M tokens, weight 1/32), batches of 4096, 2500 steps; every 1000 steps an evaluation splicing the SAE's reconstruction into layer 8 (a forward hook) over 8 batches of 16 x 128 tokens: cross-entropy with and without it (LM head tied to the embeddings)")
def sae_topk_train(rng):
    from transformers import GPT2Config, GPT2Model

    f = torch.nn.functional
    d = _smoke(768, 64)
    cfg = GPT2Config(n_embd=d, n_layer=_smoke(12, 2), n_head=_smoke(12, 4), n_positions=1024, vocab_size=50257)
    lm = GPT2Model(cfg).to("cuda", torch.float16).eval()
    for p in lm.parameters():
        p.requires_grad_(False)
    hook_layer = _smoke(8, 1)
    latents, k, k_aux = _smoke(16384, 512), 32, _smoke(256, 64)
    seqs, ctx = _smoke(64, 4), _smoke(128, 32)
    size = _smoke(262_144, 1024)
    batch = _smoke(4096, 128)
    buf = torch.empty(size, d, device="cuda")
    w_enc = torch.nn.Parameter(torch.randn(d, latents, device="cuda") / math.sqrt(d))
    w_dec = torch.nn.Parameter(w_enc.detach().T.clone())
    b_enc, b_dec = torch.nn.Parameter(torch.zeros(latents, device="cuda")), torch.nn.Parameter(torch.zeros(d, device="cuda"))
    opt = torch.optim.Adam([w_enc, w_dec, b_enc, b_dec], lr=2e-4, betas=(0.9, 0.999))
    last_fired = torch.zeros(latents, dtype=torch.long, device="cuda")
    dead_after = _smoke(1_000_000, 2000)

    def harvest(lo, hi):
        with torch.no_grad():
            at = lo
            while at < hi:
                ids = _upload(torch.randint(0, cfg.vocab_size, (seqs, ctx)))
                acts = lm(input_ids=ids, output_hidden_states=True).hidden_states[hook_layer][:, 1:].reshape(-1, d).float()
                m = min(hi - at, acts.shape[0])
                buf[at: at + m] = acts[:m] * (math.sqrt(d) / acts.norm(dim=-1, keepdim=True).mean())
                at += m
                del ids, acts
            buf[:] = buf[torch.randperm(size, device="cuda")]

    def encode(x):
        pre = (x - b_dec) @ w_enc + b_enc
        top = pre.topk(k, -1)
        z = torch.zeros_like(pre).scatter(-1, top.indices, f.relu(top.values))
        return pre, z, top.indices

    harvest(0, size)
    at, seen = 0, 0
    # About 95 tensors an SAE step (counted on CPU, backward and Adam included) and 290 a harvesting forward at 12
    # layers: 2500 steps and about 1360 forwards (17 a refill, one refill every 32 steps) make about 1.26M events.
    for step in range(_smoke(2500, 6)):
        if at + batch > size // 2:  # half the buffer consumed: refilled with fresh activations, all of it reshuffled
            harvest(0, size // 2)
            at = 0
        x = buf[at: at + batch]
        at += batch
        pre, z, idx = encode(x)
        recon = z @ w_dec + b_dec
        err = x - recon
        loss = (err ** 2).sum(-1).mean()
        seen += batch
        last_fired[idx.flatten()] = seen
        dead = (seen - last_fired) > dead_after
        if bool(dead.any()):
            aux = pre.masked_fill(~dead, -1e9).topk(min(k_aux, latents), -1)
            za = torch.zeros_like(pre).scatter(-1, aux.indices, f.relu(aux.values))
            loss = loss + ((err.detach() - za @ w_dec) ** 2).sum(-1).mean() / 32
            del aux, za
        loss.backward()
        with torch.no_grad():
            unit = w_dec / w_dec.norm(dim=-1, keepdim=True)
            w_dec.grad -= (w_dec.grad * unit).sum(-1, keepdim=True) * unit
        opt.step()
        opt.zero_grad(set_to_none=True)
        with torch.no_grad():
            w_dec /= w_dec.norm(dim=-1, keepdim=True)
        del x, pre, z, idx, recon, err, loss, dead, unit
        if (step + 1) % _smoke(1000, 3) == 0:
            def splice(mod, args, out):
                h = out[0] if isinstance(out, tuple) else out
                _, z, _ = encode(h.float().reshape(-1, d))
                h = (z @ w_dec + b_dec).view(h.shape).to(h.dtype)
                return (h,) + tuple(out[1:]) if isinstance(out, tuple) else h

            with torch.no_grad():
                for _ in range(_smoke(8, 2)):
                    ids = _upload(torch.randint(0, cfg.vocab_size, (16, ctx)))
                    for spliced in (False, True):
                        handle = lm.h[hook_layer - 1].register_forward_hook(splice) if spliced else None
                        hid = lm(input_ids=ids).last_hidden_state
                        logits = hid @ lm.wte.weight.T
                        float(f.cross_entropy(logits[:, :-1].float().reshape(-1, cfg.vocab_size), ids[:, 1:].reshape(-1)))
                        if handle is not None:
                            handle.remove()
                        del hid, logits
                    del ids
    torch.cuda.synchronize()

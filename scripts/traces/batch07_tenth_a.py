"""The workloads of the tenth recording (eight held-out families) (part 1 of 2), moved verbatim from record.py;
how record.py registers them: batch_common.py."""

import math

import torch

from batch_common import Batch
from workload_helpers import llama_config, _loguniform, randint

_b = Batch()  # this module's workloads, and record.py's module object once register() has run
workload = _b.workload
register = _b.register  # what record.py calls


def _token_logps(logits, ids, start=0):
    """log p(ids[:, t]) under logits[:, t - 1] for t >= start + 1, as TRL gathers them: (B, L - 1 - start)."""
    logp = logits[:, start:-1].float().log_softmax(-1)
    return torch.gather(logp, 2, ids[:, start + 1 :, None])[..., 0]


@workload("preference fine-tuning: DPO (sigmoid loss, beta 0.1) of an HF LlamaForCausalLM (hidden 1024, 12 layers, GQA 16/4 heads, MLP 2816, vocab 32000, random init, activation checkpointing) against a frozen copy of it as the reference model, TRL-style: chosen and rejected rows concatenated into one forward, reference log-probabilities first under no_grad; 1-8 pairs per micro-batch, each a prompt of 16-512 tokens and two responses of 8-768 tokens (log-uniform), truncated to 1024 and right-padded to the longest, labels masked over prompt and padding; 2 micro-batches per step, 30 steps, gradient clipping, AdamW, bf16 autocast")
def dpo_train(rng):
    import copy

    from transformers import LlamaForCausalLM

    f = torch.nn.functional
    cfg = llama_config(12, 4, 2048)
    policy = LlamaForCausalLM(cfg).cuda().train()
    policy.config.use_cache = False
    ref = copy.deepcopy(policy).eval().requires_grad_(False)
    policy.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    opt = torch.optim.AdamW(policy.parameters(), lr=5e-7, weight_decay=0.0)
    for _ in range(30):
        for _ in range(2):
            pairs = [(_loguniform(rng, 16, 512), _loguniform(rng, 8, 768), _loguniform(rng, 8, 768)) for _ in range(rng.randint(1, 8))]
            # (prompt, response) lengths: every chosen row, then every rejected one.
            rows = [(p, min(c, 1024 - p)) for p, c, _ in pairs] + [(p, min(r, 1024 - p)) for p, _, r in pairs]
            n = max(p + r for p, r in rows)
            lengths = torch.tensor([p + r for p, r in rows])
            prompts = torch.tensor([p for p, _ in rows])
            pos = torch.arange(n)[None]
            ids = torch.randint(1, cfg.vocab_size, (len(rows), n)) * (pos < lengths[:, None])
            mask = (pos < lengths[:, None]).long()
            keep = (pos >= prompts[:, None]) & (pos < lengths[:, None])  # the response tokens
            ids, mask, keep = ids.cuda(non_blocking=True), mask.cuda(non_blocking=True), keep.cuda(non_blocking=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                with torch.no_grad():
                    ref_logps = (_token_logps(ref(input_ids=ids, attention_mask=mask).logits, ids) * keep[:, 1:]).sum(-1)
                logits = policy(input_ids=ids, attention_mask=mask).logits
            logps = (_token_logps(logits, ids) * keep[:, 1:]).sum(-1)
            chosen, rejected = (logps - ref_logps).chunk(2)
            loss = -f.logsigmoid(0.1 * (chosen - rejected)).mean() / 2
            loss.backward()
            del ids, mask, keep, ref_logps, logits, logps, chosen, rejected, loss
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)


@workload("RLHF in one process, RLOO-style (TRL's RLOOTrainer loop): a policy HF LlamaForCausalLM (hidden 1024, 12 layers, GQA 16/4 heads, MLP 2816, vocab 32000, random init, fp32 weights), a frozen reference copy and a reward model (LlamaForSequenceClassification, 8 layers, one score, called as TRL calls it: backbone, then the score head at the last response token); 6 iterations of: 4-16 prompts of 32-384 tokens, left-padded, 4 completions each sampled by HF generate (temperature 0.7, 48-160 new tokens) under bf16 autocast, each cut at a random end of sequence and padded after it; old and reference log-probabilities and rewards in chunks of 16; per-token KL penalty, leave-one-out baselines, normalized advantages; then 2 epochs of clipped policy-gradient updates on shuffled mini-batches of 8 or 16 sequences, gradient clipping, AdamW, bf16 autocast")
def rlhf_rloo(rng):
    import copy

    from transformers import LlamaForCausalLM, LlamaForSequenceClassification

    cfg = llama_config(12, 4, 2048)
    policy = LlamaForCausalLM(cfg).cuda()
    ref = copy.deepcopy(policy).eval().requires_grad_(False)
    rcfg = llama_config(8, 4, 2048)
    rcfg.num_labels, rcfg.pad_token_id = 1, 0
    reward = LlamaForSequenceClassification(rcfg).cuda().eval().requires_grad_(False)
    opt = torch.optim.AdamW(policy.parameters(), lr=3e-6, eps=1e-5)
    k, beta, clip = 4, 0.05, 0.2

    def forward_logps(model, seq, mask, positions, p):
        """Log-probabilities of the response tokens (positions p.. of seq) under model: (B, L - p)."""
        logits = model(input_ids=seq, attention_mask=mask, position_ids=positions).logits
        return _token_logps(logits, seq, p - 1)

    for _ in range(6):
        b, n = rng.choice([4, 8, 16]), rng.randint(48, 160)
        plens = [rng.randint(32, 384) for _ in range(b)]
        p = max(plens)
        left = torch.tensor([p - x for x in plens])
        prompt = torch.randint(1, cfg.vocab_size, (b, p)) * (torch.arange(p)[None] >= left[:, None])
        prompt_mask = (prompt != 0).long()
        prompt, prompt_mask = prompt.cuda(non_blocking=True), prompt_mask.cuda(non_blocking=True)
        policy.eval()
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            seq = policy.generate(
                prompt, attention_mask=prompt_mask, do_sample=True, temperature=0.7, top_k=0, top_p=1.0,
                max_new_tokens=n, min_new_tokens=n, num_return_sequences=k, pad_token_id=0,
            )
        # Each completion ends at its first end of sequence: the tokens after it become padding.
        ends = torch.tensor([rng.randint(n // 4, n) for _ in range(b * k)], device="cuda")
        live = torch.arange(n, device="cuda")[None] < ends[:, None]
        seq[:, p:] *= live
        mask = torch.cat([prompt_mask.repeat_interleave(k, 0), live.long()], 1)
        positions = (mask.cumsum(1) - mask).clamp(min=0)
        old, refl, scores = [], [], []
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            for i in range(0, b * k, 16):
                s, m, q = seq[i : i + 16], mask[i : i + 16], positions[i : i + 16]
                old.append(forward_logps(policy, s, m, q, p))
                refl.append(forward_logps(ref, s, m, q, p))
                h = reward.model(input_ids=s, attention_mask=m, position_ids=q).last_hidden_state
                last = p + ends[i : i + 16] - 1
                scores.append(reward.score(h[torch.arange(len(s), device="cuda"), last]).float()[:, 0])
                del s, m, q, h, last
            old, refl, scores = torch.cat(old), torch.cat(refl), torch.cat(scores)
            kl = ((old - refl) * live).sum(1)
            r = (scores - beta * kl).view(b, k)
            adv = (r - (r.sum(1, keepdim=True) - r) / (k - 1)).flatten()
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            del kl, r
        policy.train()
        mb = rng.choice([8, 16])
        for _ in range(2):
            order = torch.randperm(b * k, device="cuda")
            for i in range(0, b * k, mb):
                idx = order[i : i + mb]
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    new = forward_logps(policy, seq[idx], mask[idx], positions[idx], p)
                ratio = (new - old[idx]).exp()
                a = adv[idx, None]
                pg = torch.max(-a * ratio, -a * ratio.clamp(1 - clip, 1 + clip))
                loss = (pg * live[idx]).sum() / live[idx].sum()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
                opt.step()
                opt.zero_grad(set_to_none=True)
                del idx, new, ratio, a, pg, loss
            del order
        del prompt, prompt_mask, seq, ends, live, mask, positions, old, refl, scores, adv


@workload("vision-language instruction tuning, LLaVA-style: a frozen CLIP ViT-L/14 image tower at 336 px (HF CLIPVisionModel, 24 layers, width 1024, random init, bf16; the second-to-last layer's 576 patch features), a trained 2-layer GELU projector and a trained TinyLlama-sized HF LlamaForCausalLM (hidden 2048, 22 layers, GQA 32/4 heads, MLP 5632, vocab 32000, random init, activation checkpointing); samples of 0-4 images (most one) and 32-1536 text tokens (log-uniform), the image features spliced into the token embeddings sample by sample as LLaVA does, labels masked over images and the instruction, truncated to 4096 and right-padded to the longest; 4-16 samples per step capped at 16k tokens, 40 steps, gradient clipping, AdamW, bf16 autocast")
def llava_train(rng):
    from transformers import CLIPVisionConfig, CLIPVisionModel, LlamaConfig, LlamaForCausalLM

    nn = torch.nn
    vcfg = CLIPVisionConfig(
        hidden_size=1024, intermediate_size=4096, num_hidden_layers=24, num_attention_heads=16, image_size=336, patch_size=14,
    )
    vision = CLIPVisionModel(vcfg).to("cuda", torch.bfloat16).eval().requires_grad_(False)
    cfg = LlamaConfig(
        hidden_size=2048, intermediate_size=5632, num_hidden_layers=22, num_attention_heads=32, num_key_value_heads=4,
        vocab_size=32000, max_position_embeddings=4096,
    )
    lm = LlamaForCausalLM(cfg).cuda().train()
    lm.config.use_cache = False
    lm.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    proj = nn.Sequential(nn.Linear(1024, 2048), nn.GELU(), nn.Linear(2048, 2048)).cuda()
    params = [*proj.parameters(), *lm.parameters()]
    opt = torch.optim.AdamW(params, lr=2e-5, weight_decay=0.0)
    embed = lm.get_input_embeddings()
    for _ in range(40):
        samples, total = [], 0
        for _ in range(rng.randint(4, 16)):
            images, text = rng.choice([0, 1, 1, 1, 1, 1, 2, 3, 4]), _loguniform(rng, 32, 1536)
            size = min(4096, 576 * images + text)
            if samples and total + size > 16384:
                break
            # Where the images sit in the text, and how much of it is instruction (no loss).
            samples.append((text, sorted(rng.randint(0, text // 2) for _ in range(images)), rng.randint(8, text // 2)))
            total += size
        count = sum(len(s[1]) for s in samples)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            feats = None
            if count:
                pixels = torch.randn(count, 3, 336, 336, device="cuda", dtype=torch.bfloat16)
                with torch.no_grad():
                    hidden = vision(pixel_values=pixels, output_hidden_states=True).hidden_states[-2][:, 1:]
                feats = proj(hidden)
                del pixels, hidden
            seqs, labels, used = [], [], 0
            for text, at, instruction in samples:
                ids = torch.randint(1, cfg.vocab_size, (text,)).cuda(non_blocking=True)
                lab = ids.clone()
                lab[:instruction] = -100
                tok = embed(ids)
                parts, part_labels, prev = [], [], 0
                for a in at:
                    parts += [tok[prev:a], feats[used]]
                    part_labels += [lab[prev:a], torch.full((576,), -100, device="cuda")]
                    prev, used = a, used + 1
                parts.append(tok[prev:])
                part_labels.append(lab[prev:])
                seqs.append(torch.cat(parts)[:4096])
                labels.append(torch.cat(part_labels)[:4096])
                del ids, lab, tok, parts, part_labels
            n = max(len(s) for s in seqs)
            mask = torch.zeros(len(seqs), n, dtype=torch.long, device="cuda")
            for i, s in enumerate(seqs):
                mask[i, : len(s)] = 1
            x = torch.stack([torch.cat([s, s.new_zeros(n - len(s), s.shape[1])]) for s in seqs])
            y = torch.stack([torch.cat([t, t.new_full((n - len(t),), -100)]) for t in labels])
            del seqs, labels, feats
            loss = lm(inputs_embeds=x, attention_mask=mask, labels=y).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del mask, x, y, loss


class _DetrEncoderLayer(torch.nn.Module):
    """DETR's post-norm encoder layer: the positions added to queries and keys of the self-attention."""

    def __init__(self, d=256, heads=8, ff=2048):
        super().__init__()
        nn = torch.nn
        self.attn = nn.MultiheadAttention(d, heads, dropout=0.1)
        self.ff = nn.Sequential(nn.Linear(d, ff), nn.ReLU(), nn.Dropout(0.1), nn.Linear(ff, d))
        self.n1, self.n2, self.drop = nn.LayerNorm(d), nn.LayerNorm(d), nn.Dropout(0.1)

    def forward(self, src, pos, pad):
        q = src + pos
        src = self.n1(src + self.drop(self.attn(q, q, src, key_padding_mask=pad, need_weights=False)[0]))
        return self.n2(src + self.drop(self.ff(src)))


class _DetrDecoderLayer(torch.nn.Module):
    """DETR's post-norm decoder layer: query self-attention, cross-attention to the image features, FFN."""

    def __init__(self, d=256, heads=8, ff=2048):
        super().__init__()
        nn = torch.nn
        self.self_attn = nn.MultiheadAttention(d, heads, dropout=0.1)
        self.cross = nn.MultiheadAttention(d, heads, dropout=0.1)
        self.ff = nn.Sequential(nn.Linear(d, ff), nn.ReLU(), nn.Dropout(0.1), nn.Linear(ff, d))
        self.norms = nn.ModuleList([nn.LayerNorm(d) for _ in range(3)])
        self.drop = nn.Dropout(0.1)

    def forward(self, tgt, memory, pos, query_pos, pad):
        n = self.norms
        q = tgt + query_pos
        tgt = n[0](tgt + self.drop(self.self_attn(q, q, tgt, need_weights=False)[0]))
        a = self.cross(tgt + query_pos, memory + pos, memory, key_padding_mask=pad, need_weights=False)[0]
        tgt = n[1](tgt + self.drop(a))
        return n[2](tgt + self.drop(self.ff(tgt)))


class _Detr(torch.nn.Module):
    """DETR R50: a torchvision ResNet-50 with frozen BatchNorm (stem and layer1 frozen too), a 1x1
    projection to 256, sine positions from the padding mask, 6 encoder and 6 decoder layers, 100
    object queries, class (91 + no object) and box (3-layer MLP, sigmoid) heads on every decoder
    layer's normalized output."""

    def __init__(self, classes=91, queries=100, d=256):
        super().__init__()
        import torchvision

        nn = torch.nn
        r = torchvision.models.resnet50(norm_layer=torchvision.ops.FrozenBatchNorm2d)
        self.backbone = nn.Sequential(r.conv1, r.bn1, r.relu, r.maxpool, r.layer1, r.layer2, r.layer3, r.layer4)
        for m in (r.conv1, r.layer1):
            m.requires_grad_(False)
        self.proj = nn.Conv2d(2048, d, 1)
        self.enc = nn.ModuleList([_DetrEncoderLayer(d) for _ in range(6)])
        self.dec = nn.ModuleList([_DetrDecoderLayer(d) for _ in range(6)])
        self.dec_norm = nn.LayerNorm(d)
        self.queries = nn.Embedding(queries, d)
        self.cls = nn.Linear(d, classes + 1)
        self.box = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d), nn.ReLU(), nn.Linear(d, 4))

    @staticmethod
    def _sine(pad, half=128):
        """DETR's PositionEmbeddingSine (normalized, temperature 10000) of a (B, H, W) padding mask: (B, 2 * half, H, W)."""
        valid = ~pad
        y, x = valid.cumsum(1, dtype=torch.float32), valid.cumsum(2, dtype=torch.float32)
        y = y / (y[:, -1:, :] + 1e-6) * 2 * math.pi
        x = x / (x[:, :, -1:] + 1e-6) * 2 * math.pi
        dim = 10000 ** (2 * (torch.arange(half, device=pad.device) // 2) / half)
        px, py = x[..., None] / dim, y[..., None] / dim
        px = torch.stack([px[..., 0::2].sin(), px[..., 1::2].cos()], 4).flatten(3)
        py = torch.stack([py[..., 0::2].sin(), py[..., 1::2].cos()], 4).flatten(3)
        return torch.cat([py, px], 3).permute(0, 3, 1, 2)

    def forward(self, images, pad):
        feat = self.backbone(images)
        pad = torch.nn.functional.interpolate(pad[None].float(), size=feat.shape[-2:])[0].bool()
        pos = self._sine(pad).flatten(2).permute(2, 0, 1)  # (HW, B, d)
        src = self.proj(feat).flatten(2).permute(2, 0, 1)
        pad = pad.flatten(1)
        for layer in self.enc:
            src = layer(src, pos, pad)
        query_pos = self.queries.weight[:, None].repeat(1, images.shape[0], 1)
        tgt, outs = torch.zeros_like(query_pos), []
        for layer in self.dec:
            tgt = layer(tgt, src, pos, query_pos, pad)
            outs.append(self.dec_norm(tgt))
        h = torch.stack(outs).transpose(1, 2)  # (layers, B, queries, d)
        return self.cls(h), self.box(h).sigmoid()


def _box_xyxy(b):
    cx, cy, w, h = b.unbind(-1)
    return torch.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], -1)


def _match(cost, sizes):
    """One assignment per image i of cost[i], a (queries, all targets) matrix on the host, over
    its own targets: Hungarian (scipy's linear_sum_assignment) where scipy is installed, else
    greedy by the cheapest pair."""
    try:
        from scipy.optimize import linear_sum_assignment
    except ImportError:
        linear_sum_assignment = None
    out = []
    for i, c in enumerate(cost.split(sizes, -1)):
        c = c[i]
        if linear_sum_assignment is not None:
            rows, cols = linear_sum_assignment(c.numpy())
        else:
            c, rows, cols = c.clone(), [], []
            for _ in range(c.shape[1]):
                r, k = divmod(int(c.argmin()), c.shape[1])
                rows.append(r)
                cols.append(k)
                c[r, :], c[:, k] = math.inf, math.inf
        out.append((torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)))
    return out


@workload("set-prediction detection training: DETR R50 (torchvision ResNet-50 with frozen BatchNorm, stem and layer1 frozen; 6+6 post-norm transformer layers of width 256 with sine positions; 100 object queries; 91 classes + no object; random init), images with a shorter side of 480-800 (step 32) and a longer side up to 1333 at random aspect, zero-padded to the batch's largest with a padding mask, batch 2-8 capped at 6M pixels, 1-30 boxes per image; Hungarian matching per image and decoder layer on the host (scipy if installed, else greedy), class (no-object weight 0.1), L1 x5 and GIoU x2 losses on all 6 decoder layers, 50 steps, gradient clipping 0.1, AdamW (backbone lr 1e-5), fp32")
def detr_train(rng):
    from torchvision.ops import generalized_box_iou

    f = torch.nn.functional
    model = _Detr().cuda().train()
    backbone = [p for n, p in model.named_parameters() if n.startswith("backbone") and p.requires_grad]
    rest = [p for n, p in model.named_parameters() if not n.startswith("backbone")]
    opt = torch.optim.AdamW([{"params": rest}, {"params": backbone, "lr": 1e-5}], lr=1e-4, weight_decay=1e-4)
    weight = torch.ones(92, device="cuda")
    weight[-1] = 0.1
    for _ in range(50):
        sizes = []
        for _ in range(rng.randint(2, 8)):
            short = randint(rng, 480, 800, 32)
            long = min(1333, int(short * rng.uniform(1.0, 2.0)))
            sizes.append((short, long) if rng.random() < 0.5 else (long, short))
            if sum(h * w for h, w in sizes) > 6_000_000 and len(sizes) > 2:
                sizes.pop()
                break
        hh, ww = max(h for h, _ in sizes), max(w for _, w in sizes)
        images = torch.zeros(len(sizes), 3, hh, ww, device="cuda")
        pad = torch.ones(len(sizes), hh, ww, dtype=torch.bool, device="cuda")
        boxes, labels = [], []
        for i, (h, w) in enumerate(sizes):
            images[i, :, :h, :w] = torch.randn(3, h, w, device="cuda")
            pad[i, :h, :w] = False
            n = rng.randint(1, 30)
            boxes.append(torch.cat([torch.rand(n, 2) * 0.8 + 0.1, torch.rand(n, 2) * 0.2 + 0.02], 1).cuda(non_blocking=True))
            labels.append(torch.randint(0, 91, (n,)).cuda(non_blocking=True))
        counts = [len(x) for x in labels]
        tgt_boxes, tgt_labels = torch.cat(boxes), torch.cat(labels)
        logits, pred = model(images, pad)
        loss = 0
        for layer in range(6):
            lg, pb = logits[layer], pred[layer]
            with torch.no_grad():
                prob = lg.flatten(0, 1).softmax(-1)
                cost = (
                    -prob[:, tgt_labels]
                    + 5 * torch.cdist(pb.flatten(0, 1), tgt_boxes, p=1)
                    - 2 * generalized_box_iou(_box_xyxy(pb.flatten(0, 1)), _box_xyxy(tgt_boxes))
                )
                cost = cost.view(len(sizes), 100, -1).cpu()
            matched = _match(cost, counts)
            batch = torch.cat([torch.full_like(r, i) for i, (r, _) in enumerate(matched)]).cuda(non_blocking=True)
            src = torch.cat([r for r, _ in matched]).cuda(non_blocking=True)
            tgt = torch.cat([c + sum(counts[:i]) for i, (_, c) in enumerate(matched)]).cuda(non_blocking=True)
            classes = torch.full(lg.shape[:2], 91, dtype=torch.long, device="cuda")
            classes[batch, src] = tgt_labels[tgt]
            loss = loss + f.cross_entropy(lg.transpose(1, 2), classes, weight)
            sb, tb = pb[batch, src], tgt_boxes[tgt]
            loss = loss + 5 * f.l1_loss(sb, tb, reduction="sum") / len(tgt)
            loss = loss + 2 * (1 - torch.diag(generalized_box_iou(_box_xyxy(sb), _box_xyxy(tb)))).sum() / len(tgt)
            del lg, pb, prob, cost, matched, batch, src, tgt, classes, sb, tb
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del images, pad, boxes, labels, tgt_boxes, tgt_labels, logits, pred, loss

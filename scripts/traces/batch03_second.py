"""The workloads of issue 8's second batch of eight held-out families, moved verbatim from record.py; how
record.py registers them: batch_common.py."""

import torch

from batch_common import Batch
from workload_helpers import _generate, randint

_b = Batch()  # this module's workloads, and record.py's module object once register() has run
workload = _b.workload
register = _b.register  # what record.py calls


# ------------------------- held out, issue 8's second batch of eight families
#
# Eight more families the corpus did not have (detection, segmentation,
# recurrent LM, encoder-decoder generation, video, distillation, embedding
# serving, a sliding-window decoder), written as fresh held-out traces to
# judge an allocator policy: none was in view when its rules were chosen.


@workload("object-detection training: torchvision Faster R-CNN ResNet-50-FPN (91 classes, random init), images 320-800 px of random aspect, resized to a shorter side of 480-800 (multi-scale, longer side at most 1024), batch 2-8, 1-20 boxes per image, SGD, fp32")
def detect_frcnn(rng):
    from torchvision.models.detection import fasterrcnn_resnet50_fpn

    model = fasterrcnn_resnet50_fpn(weights=None, weights_backbone=None, num_classes=91, max_size=1024).cuda().train()
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.01, momentum=0.9, weight_decay=1e-4)
    for _ in range(25):
        # Multi-scale training: this step's shorter side, as detectron-style
        # recipes draw it (the model's transform resizes every image to it).
        model.transform.min_size = (randint(rng, 480, 800, 32),)
        images, targets = [], []
        for _ in range(rng.randint(2, 8)):
            h, w = rng.randint(320, 800), rng.randint(320, 800)
            boxes = []
            for _ in range(rng.randint(1, 20)):
                x1, y1 = rng.uniform(0, w - 32), rng.uniform(0, h - 32)
                boxes.append([x1, y1, rng.uniform(x1 + 16, w), rng.uniform(y1 + 16, h)])
            labels = [rng.randint(1, 90) for _ in boxes]
            images.append(torch.rand(3, h, w, device="cuda"))
            targets.append({"boxes": torch.tensor(boxes, device="cuda"), "labels": torch.tensor(labels, device="cuda")})
        losses = model(images, targets)
        loss = sum(losses.values())
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del images, targets, losses, loss


@workload("semantic segmentation training: torchvision DeepLabV3 ResNet-50 (output stride 8, auxiliary head, 21 classes), image 256-640 (multiple of 32), batch 2-16 capped at 2M pixels, 5% ignored pixels, channels-last, SGD, bf16 autocast")
def segment_deeplab(rng):
    from torchvision.models.segmentation import deeplabv3_resnet50

    f = torch.nn.functional
    model = deeplabv3_resnet50(weights=None, weights_backbone=None, num_classes=21, aux_loss=True)
    model = model.cuda().to(memory_format=torch.channels_last).train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    for _ in range(30):
        b, r = rng.randint(2, 16), randint(rng, 256, 640, 32)
        b = min(b, max(2, 2_000_000 // (r * r)))
        x = torch.randn(b, 3, r, r, device="cuda").contiguous(memory_format=torch.channels_last)
        y = torch.randint(0, 21, (b, r, r), device="cuda")
        y = torch.where(torch.rand(b, r, r, device="cuda") < 0.05, 255, y)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(x)
            loss = f.cross_entropy(out["out"], y, ignore_index=255) + 0.5 * f.cross_entropy(out["aux"], y, ignore_index=255)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, y, out, loss


@workload("recurrent LM training: 3-layer LSTM (cuDNN, vocab 32000, embed 512, hidden 1024), truncated BPTT carrying the state over 4 windows of 32-512 tokens per batch of 8-64, 64 steps, gradient clipping, Adam, fp32")
def lstm_lm(rng):
    nn = torch.nn
    emb = nn.Embedding(32000, 512).cuda()
    lstm = nn.LSTM(512, 1024, num_layers=3, dropout=0.1, batch_first=True).cuda()
    head = nn.Linear(1024, 32000).cuda()
    params = [*emb.parameters(), *lstm.parameters(), *head.parameters()]
    opt = torch.optim.Adam(params, lr=1e-3)
    for _ in range(16):
        b = rng.randint(8, 64)
        state = None
        for _ in range(4):
            s = randint(rng, 32, 512, 8)
            ids = torch.randint(0, 32000, (b, s + 1), device="cuda")
            out, state = lstm(emb(ids[:, :-1]), state)
            loss = torch.nn.functional.cross_entropy(head(out).reshape(-1, 32000), ids[:, 1:].reshape(-1))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 0.25)
            opt.step()
            opt.zero_grad(set_to_none=True)
            state = tuple(h.detach() for h in state)
            del ids, out, loss
        del state


@workload("encoder-decoder generation: HF generate, T5-base-sized (12+12 layers, d_model 768) bf16, greedy or beam search (1-4 beams), batch 1-16, source 32-512 tokens, 16-64 new tokens")
def t5_generate(rng):
    from transformers import T5Config, T5ForConditionalGeneration

    cfg = T5Config(
        d_model=768, d_kv=64, d_ff=3072, num_layers=12, num_decoder_layers=12, num_heads=12, vocab_size=32128,
        decoder_start_token_id=0, pad_token_id=0, eos_token_id=1,
    )
    model = T5ForConditionalGeneration(cfg).to("cuda", torch.bfloat16).eval()
    with torch.no_grad():
        for _ in range(10):
            b, beams = rng.randint(1, 16), rng.randint(1, 4)
            s, n = rng.randint(32, 512), rng.randint(16, 64)
            src = torch.randint(2, cfg.vocab_size, (b, s), device="cuda")
            model.generate(
                input_ids=src,
                attention_mask=torch.ones_like(src),
                max_new_tokens=n,
                min_new_tokens=n,
                num_beams=beams,
                do_sample=False,
            )
            del src


@workload("video action-recognition training: torchvision R3D-18 (3D ResNet, 400 classes), clips of 8-16 frames at 112 or 160 px, batch 4-16, SGD, bf16 autocast")
def video_r3d(rng):
    from torchvision.models.video import r3d_18

    model = r3d_18(weights=None).cuda().train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    for _ in range(25):
        b, t, r = rng.randint(4, 16), rng.randint(8, 16), rng.choice([112, 160])
        x = torch.randn(b, 3, t, r, r, device="cuda")
        y = torch.randint(0, 400, (b,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, y, loss


@workload("knowledge distillation: frozen ViT-B/16 teacher (eval, no_grad) and a ViT-S/16 student trained on the teacher's softened logits (KL, T=4) plus labels, image 160-256 px, batch 16-96, AdamW, bf16 autocast")
def distill_vit(rng):
    import timm

    f = torch.nn.functional
    teacher = timm.create_model("vit_base_patch16_224", pretrained=False, dynamic_img_size=True).cuda().eval()
    teacher.requires_grad_(False)
    student = timm.create_model("vit_small_patch16_224", pretrained=False, dynamic_img_size=True).cuda().train()
    opt = torch.optim.AdamW(student.parameters(), lr=5e-4, weight_decay=0.05)
    temp = 4.0
    for _ in range(30):
        b, r = rng.randint(16, 96), randint(rng, 160, 256, 16)
        x = torch.randn(b, 3, r, r, device="cuda")
        y = torch.randint(0, 1000, (b,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            with torch.no_grad():
                soft = f.softmax(teacher(x).float() / temp, dim=-1)
            logits = student(x).float()
        kd = f.kl_div(f.log_softmax(logits / temp, dim=-1), soft, reduction="batchmean") * temp * temp
        loss = 0.9 * kd + 0.1 * f.cross_entropy(logits, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, y, soft, logits, kd, loss


@workload("embedding serving: BERT-base encoder bf16 under inference_mode, 150 requests of batch 1-128 padded to the longest of lengths 8-512, mean-pooled embeddings of the last 16 requests kept")
def embed_serving(rng):
    from collections import deque

    from transformers import BertConfig, BertModel

    cfg = BertConfig()
    model = BertModel(cfg, add_pooling_layer=False).to("cuda", torch.bfloat16).eval()
    window = deque(maxlen=16)  # the answers of the last requests, still held
    with torch.inference_mode():
        for _ in range(150):
            b, cap = rng.randint(1, 128), rng.randint(8, 512)
            lengths = [rng.randint(8, cap) for _ in range(b)]
            s = max(lengths)
            ids = torch.randint(0, cfg.vocab_size, (b, s), device="cuda")
            mask = (torch.arange(s, device="cuda")[None, :] < torch.tensor(lengths, device="cuda")[:, None]).long()
            h = model(input_ids=ids, attention_mask=mask).last_hidden_state
            m = mask[:, :, None].to(h.dtype)
            window.append(torch.nn.functional.normalize((h * m).sum(1) / m.sum(1), dim=-1).float())
            del ids, mask, h, m


@workload("LLM generation: HF generate, Mistral-style 0.3B (GQA 16/8 heads, sliding window 1024) bf16, batch 1-48, prompt 64-2000, 16-96 new tokens")
def gen_mistral(rng):
    from transformers import MistralConfig, MistralForCausalLM

    cfg = MistralConfig(
        hidden_size=1024, intermediate_size=3584, num_hidden_layers=16, num_attention_heads=16,
        num_key_value_heads=8, vocab_size=32000, max_position_embeddings=4096, sliding_window=1024,
    )
    model = MistralForCausalLM(cfg).to("cuda", torch.bfloat16)
    _generate(model, cfg.vocab_size, rng, 8, [1, 2, 4, 8, 16, 32, 48], (64, 2000), (16, 96))

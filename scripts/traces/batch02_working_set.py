"""The workloads of the held-out workloads recorded after the working-set rule, moved verbatim from record.py;
how record.py registers them: batch_common.py."""

import torch

from batch_common import Batch
from workload_models import _UNet
from workload_helpers import _generate_exactly, llama_config, randint

_b = Batch()  # this module's workloads, and record.py's module object once register() has run
workload = _b.workload
register = _b.register  # what record.py calls


# ------------------------------- held out, recorded after the working-set rule
#
# Five families the corpus did not have, written and recorded after
# expanse's default gained the working-set rule (move_reuse_window), so
# that no rule of the default was chosen with them in view.


@workload("LLM generation with beam search: HF generate, 4 beams, GPT-2 medium bf16, batch 1-8, prompt 16-600, 16-64 new tokens")
def gen_gpt2_beam(rng):
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(n_layer=24, n_embd=1024, n_head=16, n_positions=1024)
    model = GPT2LMHeadModel(cfg).to("cuda", torch.bfloat16)
    model.eval()
    with torch.no_grad():
        for _ in range(10):
            b, p, n = rng.choice([1, 2, 4, 8]), rng.randint(16, 600), rng.randint(16, 64)
            ids = torch.randint(0, cfg.vocab_size, (b, p), device="cuda")
            _generate_exactly(model, ids, n, num_beams=4)
            del ids


class _Speech(torch.nn.Module):
    """Whisper-style: a convolutional front-end over log-mel frames (stride
    2), a 6-layer transformer encoder and a 4-layer decoder, width 512."""

    def __init__(self, vocab=8000, d=512):
        super().__init__()
        nn = torch.nn
        self.conv = nn.Sequential(
            nn.Conv1d(80, d, 3, padding=1), nn.GELU(), nn.Conv1d(d, d, 3, stride=2, padding=1), nn.GELU()
        )
        self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 8, 4 * d, batch_first=True, norm_first=True), 6)
        self.emb = nn.Embedding(vocab, d)
        self.dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(d, 8, 4 * d, batch_first=True, norm_first=True), 4)
        self.out = nn.Linear(d, vocab)

    def forward(self, mel, tgt):
        h = self.enc(self.conv(mel).transpose(1, 2))
        t = tgt.shape[1]
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool, device=mel.device), 1)
        return self.out(self.dec(self.emb(tgt), h, tgt_mask=mask))


@workload("speech encoder-decoder training: Whisper-style (conv front-end, 6+4 transformer layers, width 512), log-mel 80 x 400-3000 frames, targets 8-200 tokens, batch 4-32, AdamW, bf16 autocast")
def speech_seq2seq(rng):
    model = _Speech().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model.train()
    for _ in range(30):
        b, frames, t = rng.randint(4, 32), randint(rng, 400, 3000, 8), rng.randint(8, 200)
        mel = torch.randn(b, 80, frames, device="cuda")
        tgt = torch.randint(0, 8000, (b, t + 1), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(mel, tgt[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.float().reshape(-1, 8000), tgt[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del mel, tgt, logits, loss


class _Clip(torch.nn.Module):
    """CLIP-style towers: a ViT-B/32-sized image encoder (224 px, 49
    patches and a class token, 12 layers, width 768) and a 12-layer text
    encoder (width 512), both projected to 512."""

    def __init__(self, vocab=49408):
        super().__init__()
        nn = torch.nn
        self.patch = nn.Conv2d(3, 768, 32, stride=32)
        self.cls = nn.Parameter(torch.zeros(1, 1, 768))
        self.pos = nn.Parameter(torch.zeros(1, 50, 768))
        self.img = nn.TransformerEncoder(nn.TransformerEncoderLayer(768, 12, 3072, batch_first=True, norm_first=True), 12)
        self.tok = nn.Embedding(vocab, 512)
        self.tpos = nn.Parameter(torch.zeros(1, 77, 512))
        self.txt = nn.TransformerEncoder(nn.TransformerEncoderLayer(512, 8, 2048, batch_first=True, norm_first=True), 12)
        self.pi = nn.Linear(768, 512, bias=False)
        self.pt = nn.Linear(512, 512, bias=False)

    def forward(self, images, text):
        x = self.patch(images).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], 1) + self.pos
        i = torch.nn.functional.normalize(self.pi(self.img(x)[:, 0]), dim=-1)
        t = self.txt(self.tok(text) + self.tpos[:, : text.shape[1]])
        t = torch.nn.functional.normalize(self.pt(t.mean(1)), dim=-1)
        return 100.0 * i @ t.t()


@workload("contrastive image-text training: CLIP-style ViT-B/32-sized image tower (224 px) and 12-layer text tower, batch 64-512, text 16-77 tokens, AdamW, bf16 autocast")
def clip_contrastive(rng):
    model = _Clip().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model.train()
    for _ in range(24):
        b, n = rng.choice([64, 128, 192, 256, 384, 512]), rng.randint(16, 77)
        images = torch.randn(b, 3, 224, 224, device="cuda")
        text = torch.randint(0, 49408, (b, n), device="cuda")
        labels = torch.arange(b, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(images, text).float()
        loss = (torch.nn.functional.cross_entropy(logits, labels) + torch.nn.functional.cross_entropy(logits.t(), labels)) / 2
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del images, text, labels, logits, loss


@workload("recommender training: DLRM-style, 8 embedding tables of 1M x 128 (EmbeddingBag sums of 1-40 ids), 13 dense features, MLPs 13-512-256-128 and 1152-1024-512-1, batch 1k-32k, Adagrad")
def dlrm_train(rng):
    nn = torch.nn
    tables = nn.ModuleList([nn.EmbeddingBag(1_000_000, 128, mode="sum") for _ in range(8)]).cuda()
    bottom = nn.Sequential(nn.Linear(13, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 128)).cuda()
    top = nn.Sequential(nn.Linear(128 * 9, 1024), nn.ReLU(), nn.Linear(1024, 512), nn.ReLU(), nn.Linear(512, 1)).cuda()
    params = list(tables.parameters()) + list(bottom.parameters()) + list(top.parameters())
    opt = torch.optim.Adagrad(params, lr=1e-2)
    for _ in range(16):
        b = randint(rng, 1024, 32768, 256)
        dense = torch.randn(b, 13, device="cuda")
        feats = [bottom(dense)]
        for table in tables:
            lengths = torch.randint(1, 41, (b,), device="cuda")
            offsets = torch.cumsum(lengths, 0) - lengths
            ids = torch.randint(0, 1_000_000, (int(lengths.sum()),), device="cuda")
            feats.append(table(ids, offsets))
        y = torch.randint(0, 2, (b, 1), device="cuda").float()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(top(torch.cat(feats, 1)), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del dense, feats, y, loss


@workload("diffusion sampling: the unet_diffusion UNet (random weights) with classifier-free guidance (batch doubled), 8 requests of batch 1-16 at 64-192 px, 25 steps each, bf16 autocast")
def diffusion_sampling(rng):
    model = _UNet().cuda().eval()
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        for _ in range(8):
            b, r = rng.randint(1, 16), randint(rng, 64, 192, 16)
            x = torch.randn(b, 3, r, r, device="cuda")
            for step in range(25):
                t = torch.full((2 * b,), 999 - step * 40, device="cuda")
                cond, uncond = model(torch.cat([x, x]), t).float().chunk(2)
                x = x - 0.04 * (uncond + 7.5 * (cond - uncond))
                del cond, uncond
            del x


@workload("LLM generation with sampling and a static KV cache: HF generate (cache_implementation='static', top-p 0.9), Llama-style (GQA) 0.4B bf16, batch 1-32, prompt 32-1200, 16-96 new tokens")
def gen_llama_static(rng):
    from transformers import LlamaForCausalLM

    cfg = llama_config(16, 4, 4096)
    model = LlamaForCausalLM(cfg).to("cuda", torch.bfloat16)
    model.eval()
    with torch.no_grad():
        for _ in range(10):
            b, p, n = rng.choice([1, 2, 4, 8, 16, 32]), rng.randint(32, 1200), rng.randint(16, 96)
            ids = torch.randint(0, cfg.vocab_size, (b, p), device="cuda")
            _generate_exactly(model, ids, n, do_sample=True, top_p=0.9, cache_implementation="static")
            del ids


@workload("convolutional autoencoder training: VAE-style encoder/decoder (128-256-512 channels, GroupNorm, SiLU), KL + L1 loss, batch 2-16 x image 128-512, AdamW, bf16 autocast")
def vae_train(rng):
    nn = torch.nn

    def block(ci, co):
        return nn.Sequential(nn.GroupNorm(32, ci), nn.SiLU(), nn.Conv2d(ci, co, 3, padding=1))

    enc = nn.Sequential(
        nn.Conv2d(3, 128, 3, padding=1), block(128, 128), nn.Conv2d(128, 128, 3, stride=2, padding=1),
        block(128, 256), nn.Conv2d(256, 256, 3, stride=2, padding=1),
        block(256, 512), nn.Conv2d(512, 512, 3, stride=2, padding=1), block(512, 512), nn.Conv2d(512, 8, 1),
    ).cuda()
    dec = nn.Sequential(
        nn.Conv2d(4, 512, 3, padding=1), block(512, 512), nn.Upsample(scale_factor=2),
        block(512, 256), nn.Upsample(scale_factor=2), block(256, 128), nn.Upsample(scale_factor=2),
        block(128, 128), nn.Conv2d(128, 3, 3, padding=1),
    ).cuda()
    opt = torch.optim.AdamW(list(enc.parameters()) + list(dec.parameters()), lr=1e-4)
    for _ in range(30):
        b, r = rng.randint(2, 16), randint(rng, 128, 512, 64)
        x = torch.randn(b, 3, r, r, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            mean, logvar = enc(x).float().chunk(2, dim=1)
            z = mean + torch.randn_like(mean) * (0.5 * logvar).exp()
            rec = dec(z)
        loss = (rec.float() - x).abs().mean() + 1e-6 * (mean.pow(2) + logvar.exp() - logvar - 1).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, mean, logvar, z, rec, loss


@workload("graph neural network training: 4 message-passing layers (width 256, index_add aggregation) on random graphs of 50k-200k nodes and 4-12 edges per node, AdamW, fp32")
def gnn_train(rng):
    nn = torch.nn

    class Layer(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.msg = nn.Linear(2 * d, d)
            self.upd = nn.Linear(2 * d, d)

        def forward(self, h, src, dst):
            m = torch.relu(self.msg(torch.cat([h[src], h[dst]], 1)))
            agg = torch.zeros_like(h).index_add_(0, dst, m)
            return torch.relu(self.upd(torch.cat([h, agg], 1)))

    inp = nn.Linear(64, 256).cuda()
    layers = nn.ModuleList([Layer(256) for _ in range(4)]).cuda()
    out = nn.Linear(256, 16).cuda()
    opt = torch.optim.AdamW(list(inp.parameters()) + list(layers.parameters()) + list(out.parameters()), lr=1e-3)
    for _ in range(24):
        n = randint(rng, 50_000, 200_000, 1000)
        e = n * rng.randint(4, 12)
        x = torch.randn(n, 64, device="cuda")
        src = torch.randint(0, n, (e,), device="cuda")
        dst = torch.randint(0, n, (e,), device="cuda")
        y = torch.randint(0, 16, (n,), device="cuda")
        h = inp(x)
        for layer in layers:
            h = layer(h, src, dst)
        loss = torch.nn.functional.cross_entropy(out(h), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, src, dst, y, h, loss


@workload("masked-LM pretraining with gradient accumulation: BERT-base MLM, 4 micro-batches of 8-32 x 128-512 tokens per step, 15% masked, AdamW, bf16 autocast")
def bert_mlm_accum(rng):
    from transformers import BertConfig, BertForMaskedLM

    cfg = BertConfig()
    model = BertForMaskedLM(cfg).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for _ in range(12):
        for _ in range(4):
            b, s = rng.randint(8, 32), randint(rng, 128, 512, 64)
            ids = torch.randint(0, cfg.vocab_size, (b, s), device="cuda")
            labels = torch.where(torch.rand(b, s, device="cuda") < 0.15, ids, torch.full_like(ids, -100))
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(input_ids=ids, labels=labels).loss / 4
            loss.backward()
            del ids, labels, loss
        opt.step()
        opt.zero_grad(set_to_none=True)

"""The workloads of the eleventh recording (eight held-out families), moved verbatim from record.py; how
record.py registers them: batch_common.py."""

import math

import torch

from batch_common import Batch
from workload_models import _FastSpeech2, _GptBlock
from workload_helpers import llama_config, _loguniform, _mha, randint, _sincos

_b = Batch()  # this module's workloads, and record.py's module object once register() has run
workload = _b.workload
register = _b.register  # what record.py calls


# --------------------------- held out, the eleventh recording: eight families
#
# Eight more families the corpus did not have (a training loop with periodic
# evaluation that gathers its predictions on the device, Evoformer-style
# protein-structure training with recycling, a diffusion transformer on
# multi-aspect latents with guided sampling, FastSpeech2-style text-to-speech
# training, activation offloading to pinned host memory, GPipe-style
# pipelining over two CUDA streams, batched streaming speech recognition with
# carried caches, an energy-and-force molecule GNN), written as fresh held-out
# traces to judge the allocator's frozen default: none was in view when its
# rules were chosen, and no allocator figure was looked at while writing them.


def _pad_concat(a, b, pad):
    """The rows of `b` after those of `a`, dim 1 padded to the longer with `pad` (transformers' nested_concat)."""
    if a is None:
        return b
    if a.shape[1:] == b.shape[1:]:
        return torch.cat([a, b])
    out = a.new_full((len(a) + len(b), max(a.shape[1], b.shape[1])) + a.shape[2:], pad)
    out[: len(a), : a.shape[1]] = a
    out[len(a) :, : b.shape[1]] = b
    return out


@workload("training with periodic evaluation, HF Trainer-style: token classification (NER, 9 labels) with HF DebertaV2ForTokenClassification (DeBERTa-v3-base-sized: 12 layers, width 768, 12 heads, relative attention with 256 position buckets, vocab 128100, random init); train batches of 8-32 sentences of 8-512 tokens (log-uniform) padded to the longest (multiple of 8) and capped at 8192 tokens, labels -100 on padding, linear warmup and decay, gradient clipping, AdamW, bf16 autocast; every 40 steps an evaluation under no_grad of 12 batches of 64 sentences, the logits and labels of every batch concatenated on the device (padded to the longest with -100, as the Trainer's nested_concat does), then token accuracy and the predictions copied back; 200 steps")
def deberta_eval_loop(rng):
    from transformers import DebertaV2Config, DebertaV2ForTokenClassification

    cfg = DebertaV2Config(
        vocab_size=128100, hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
        relative_attention=True, position_buckets=256, norm_rel_ebd="layer_norm", share_att_key=True,
        pos_att_type=["p2c", "c2p"], position_biased_input=False, max_relative_positions=-1, num_labels=9,
    )
    model = DebertaV2ForTokenClassification(cfg).cuda()
    steps, every = 200, 40
    opt = torch.optim.AdamW(model.parameters(), lr=3e-5, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min((s + 1) / 24, (steps - s) / (steps - 24)))

    def batch(b, cap):
        lengths = [_loguniform(rng, 8, 512) for _ in range(b)]
        lengths = lengths[: max(1, cap // (-(-max(lengths) // 8) * 8))]
        s = -(-max(lengths) // 8) * 8
        mask = (torch.arange(s, device="cuda")[None] < torch.tensor(lengths, device="cuda")[:, None]).long()
        ids = torch.randint(1, cfg.vocab_size, (len(lengths), s), device="cuda") * mask
        labels = torch.randint(0, 9, (len(lengths), s), device="cuda").masked_fill(mask == 0, -100)
        return ids, mask, labels

    def evaluate():
        model.eval()
        preds = labs = None
        with torch.no_grad():
            for _ in range(12):
                ids, mask, labels = batch(64, 64 * 512)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    out = model(input_ids=ids, attention_mask=mask, labels=labels)
                out.loss.item()
                preds, labs = _pad_concat(preds, out.logits, -100), _pad_concat(labs, labels, -100)
                del ids, mask, labels, out
            best = preds.argmax(-1)
            ((best == labs) & (labs != -100)).sum().item() / (labs != -100).sum().item()
            best.cpu(), labs.cpu()
        model.train()
        del preds, labs, best

    model.train()
    for step in range(steps):
        ids, mask, labels = batch(rng.randint(8, 32), 8192)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        del ids, mask, labels, loss
        if (step + 1) % every == 0:
            evaluate()


def _rowwise_dropout(x, p, training):
    """AlphaFold's shared dropout: one mask for every row of dim 0."""
    if not training:
        return x
    return x * torch.nn.functional.dropout(x.new_ones((1,) + x.shape[1:]), p)


class _EvoAttn(torch.nn.Module):
    """AlphaFold's gated multi-head attention (heads of 32) over dim 1 of normalized x (B, L, C),
    with an optional per-head bias (1, H, L, L) added to the logits."""

    def __init__(self, c, heads):
        super().__init__()
        self.qkvg, self.o, self.heads = torch.nn.Linear(c, 4 * heads * 32, bias=False), torch.nn.Linear(heads * 32, c), heads

    def forward(self, x, bias=None):
        q, k, v, g = self.qkvg(x).chunk(4, -1)
        return self.o(torch.sigmoid(g) * _mha(q, k, v, self.heads, attn_mask=bias))


class _TriMul(torch.nn.Module):
    """A triangle multiplicative update of the pair representation (outgoing or incoming edges)."""

    def __init__(self, c, outgoing):
        super().__init__()
        nn = torch.nn
        self.ln_in, self.ab, self.g = nn.LayerNorm(c), nn.Linear(c, 4 * c), nn.Linear(c, c)
        self.ln_out, self.o, self.eq = nn.LayerNorm(c), nn.Linear(c, c), "ikc,jkc->ijc" if outgoing else "kic,kjc->ijc"

    def forward(self, z):
        x = self.ln_in(z)
        pa, ga, pb, gb = self.ab(x).chunk(4, -1)
        t = torch.einsum(self.eq, torch.sigmoid(ga) * pa, torch.sigmoid(gb) * pb)
        return torch.sigmoid(self.g(x)) * self.o(self.ln_out(t))


class _EvoBlock(torch.nn.Module):
    """An Evoformer block: MSA row attention with pair bias, MSA column attention, MSA transition, outer
    product mean, triangle multiplicative updates (outgoing, incoming), triangle attention (starting and
    ending node), pair transition, with AlphaFold's row-wise dropout."""

    def __init__(self, cm=256, cz=128):
        super().__init__()
        nn = torch.nn

        def transition(c):
            return nn.Sequential(nn.LayerNorm(c), nn.Linear(c, 4 * c), nn.ReLU(), nn.Linear(4 * c, c))

        self.ln_row, self.ln_bias, self.pair_bias = nn.LayerNorm(cm), nn.LayerNorm(cz), nn.Linear(cz, 8, bias=False)
        self.row, self.ln_col, self.col = _EvoAttn(cm, 8), nn.LayerNorm(cm), _EvoAttn(cm, 8)
        self.msa_trans, self.ln_opm, self.opm_a, self.opm_b = transition(cm), nn.LayerNorm(cm), nn.Linear(cm, 32), nn.Linear(cm, 32)
        self.opm_o = nn.Linear(32 * 32, cz)
        self.tri_out, self.tri_in = _TriMul(cz, True), _TriMul(cz, False)
        self.ln_start, self.b_start, self.start = nn.LayerNorm(cz), nn.Linear(cz, 4, bias=False), _EvoAttn(cz, 4)
        self.ln_end, self.b_end, self.end = nn.LayerNorm(cz), nn.Linear(cz, 4, bias=False), _EvoAttn(cz, 4)
        self.pair_trans = transition(cz)

    def forward(self, m, z):
        tr = self.training
        bias = self.pair_bias(self.ln_bias(z)).permute(2, 0, 1)[None]
        m = m + _rowwise_dropout(self.row(self.ln_row(m), bias), 0.15, tr)
        m = m + self.col(self.ln_col(m).transpose(0, 1)).transpose(0, 1)
        m = m + self.msa_trans(m)
        x = self.ln_opm(m)
        outer = torch.einsum("sic,sjd->ijcd", self.opm_a(x), self.opm_b(x)).flatten(2) / m.shape[0]
        z = z + self.opm_o(outer)
        z = z + _rowwise_dropout(self.tri_out(z), 0.25, tr)
        z = z + _rowwise_dropout(self.tri_in(z), 0.25, tr)
        x = self.ln_start(z)
        z = z + _rowwise_dropout(self.start(x, self.b_start(x).permute(2, 0, 1)[None]), 0.25, tr)
        x = self.ln_end(z).transpose(0, 1)
        z = z + _rowwise_dropout(self.end(x, self.b_end(x).permute(2, 0, 1)[None]).transpose(0, 1), 0.25, tr)
        return m, z + self.pair_trans(z)


class _Evoformer(torch.nn.Module):
    """AlphaFold-2-style trunk (no structure module): input embedder with relative positions (clipped at
    32), recycling embedder (LayerNorms of the previous MSA first row and pair), Evoformer blocks
    (activation-checkpointed when gradients are on, as OpenFold does), distogram (64 bins) and masked-MSA
    (23 classes) heads."""

    def __init__(self, blocks, cm=256, cz=128):
        super().__init__()
        nn = torch.nn
        self.cm, self.cz = cm, cz
        self.tf, self.msa, self.relpos = nn.Linear(22, 2 * cz + cm), nn.Linear(49, cm), nn.Linear(65, cz)
        self.rec_m, self.rec_z = nn.LayerNorm(cm), nn.LayerNorm(cz)
        self.blocks = nn.ModuleList([_EvoBlock(cm, cz) for _ in range(blocks)])
        self.disto, self.masked = nn.Linear(cz, 64), nn.Linear(cm, 23)

    def forward(self, target, msa, prev_m, prev_z):
        zi, zj, mt = self.tf(target).split([self.cz, self.cz, self.cm], -1)
        idx = torch.arange(len(target), device=target.device)
        rel = torch.nn.functional.one_hot((idx[:, None] - idx[None]).clamp(-32, 32) + 32, 65).float()
        z = zi[:, None] + zj[None] + self.relpos(rel)
        m = self.msa(msa) + mt[None]
        if prev_m is not None:
            m = torch.cat([m[:1] + self.rec_m(prev_m), m[1:]])
            z = z + self.rec_z(prev_z)
        for blk in self.blocks:
            if torch.is_grad_enabled():
                m, z = torch.utils.checkpoint.checkpoint(blk, m, z, use_reentrant=False)
            else:
                m, z = blk(m, z)
        return m, z


@workload("protein-structure training, AlphaFold-2/OpenFold-style Evoformer trunk (random init): 8 Evoformer blocks (MSA 256 wide, pair 128 wide; MSA row attention with pair bias and column attention of 8 heads, outer product mean, triangle multiplicative updates, triangle attention of 4 heads, transitions, row-wise dropout), each activation-checkpointed, relative-position and recycling embedders, distogram and masked-MSA losses; one protein per step, a crop of 64-384 residues (multiple of 16) with 32-128 MSA sequences, 0-3 extra recycling iterations under no_grad first (their outputs fed back), 50 steps, gradient clipping 0.1, Adam, bf16 autocast")
def evoformer_train(rng):
    import torch.utils.checkpoint  # noqa: F401

    f = torch.nn.functional
    model = _Evoformer(8).cuda().train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-6)
    for _ in range(50):
        n, r = randint(rng, 32, 128, 16), randint(rng, 64, 384, 16)
        aa = torch.randint(0, 21, (n, r), device="cuda")
        target = f.one_hot(aa[0], 22).float()
        msa = torch.cat([f.one_hot(aa, 23).float(), torch.rand(n, r, 26, device="cuda")], -1)
        hidden = torch.rand(n, r, device="cuda") < 0.15
        bins = torch.randint(0, 64, (r, r), device="cuda")
        prev_m = prev_z = None
        with torch.autocast("cuda", dtype=torch.bfloat16):
            with torch.no_grad():
                for _ in range(rng.randint(0, 3)):
                    m, z = model(target, msa, prev_m, prev_z)
                    prev_m, prev_z = m[0].float(), z.float()
                    del m, z
            m, z = model(target, msa, prev_m, prev_z)
            disto = model.disto(z + z.transpose(0, 1)).float()
            masked = model.masked(m[hidden]).float()
        loss = f.cross_entropy(disto.flatten(0, 1), bins.flatten()) + 2 * f.cross_entropy(masked, aa[hidden])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del aa, target, msa, hidden, bins, prev_m, prev_z, m, z, disto, masked, loss


class _DitBlock(torch.nn.Module):
    """A DiT block: adaLN-Zero modulation from the conditioning vector, self-attention, a 4x GELU MLP."""

    def __init__(self, d, heads):
        super().__init__()
        nn = torch.nn
        self.n1, self.qkv, self.proj = nn.LayerNorm(d, elementwise_affine=False, eps=1e-6), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.n2, self.fc1, self.fc2 = nn.LayerNorm(d, elementwise_affine=False, eps=1e-6), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.ada, self.heads = nn.Sequential(nn.SiLU(), nn.Linear(d, 6 * d)), heads

    def forward(self, x, c):
        s1, m1, g1, s2, m2, g2 = self.ada(c)[:, None].chunk(6, -1)
        x = x + g1 * self.proj(_mha(*self.qkv(self.n1(x) * (1 + m1) + s1).chunk(3, -1), self.heads))
        h = self.fc1(self.n2(x) * (1 + m2) + s2)
        return x + g2 * self.fc2(torch.nn.functional.gelu(h, approximate="tanh"))


class _Dit(torch.nn.Module):
    """DiT (patch 2 over 4-channel latents, learned sigma: 8 channels out), class-conditional with a null
    class, the fixed 2D sine-cosine positions computed for each latent grid (any aspect)."""

    def __init__(self, d=768, depth=12, heads=12, classes=1000):
        super().__init__()
        nn = torch.nn
        self.d = d
        self.embed = nn.Conv2d(4, d, 2, stride=2)
        self.t = nn.Sequential(nn.Linear(256, d), nn.SiLU(), nn.Linear(d, d))
        self.y = nn.Embedding(classes + 1, d)
        self.blocks = nn.ModuleList([_DitBlock(d, heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(d, elementwise_affine=False, eps=1e-6)
        self.ada, self.out = nn.Sequential(nn.SiLU(), nn.Linear(d, 2 * d)), nn.Linear(d, 2 * 2 * 8)

    def forward(self, x, t, y):
        b, _, hh, ww = x.shape
        gh, gw = hh // 2, ww // 2
        rows, cols = torch.arange(gh, device=x.device), torch.arange(gw, device=x.device)
        pos = torch.cat([_sincos(rows.repeat_interleave(gw), self.d // 2), _sincos(cols.repeat(gh), self.d // 2)], 1)
        h = self.embed(x).flatten(2).transpose(1, 2) + pos
        c = self.t(_sincos(t, 256)) + self.y(y)
        for blk in self.blocks:
            h = blk(h, c)
        shift, scale = self.ada(c)[:, None].chunk(2, -1)
        h = self.out(self.norm(h) * (1 + scale) + shift)
        return h.view(b, gh, gw, 2, 2, 8).permute(0, 5, 1, 3, 2, 4).reshape(b, 8, hh, ww)


@workload("diffusion-transformer training and sampling: DiT-B/2 (12 blocks of width 768, 12 heads, adaLN-Zero, patch 2 over 4-channel latents, learned sigma, 1000 classes + null, random init) on multi-aspect latent buckets (PixArt-style: aspect ratios 1:2 to 2:1 at 256 or 512 px, latents of 22-90 per side, about 256 or 1024 tokens), batch 16-64 at 256 px and 4-16 at 512 px, class labels dropped 10% of the time, 300 steps of the noise-prediction loss, AdamW, an EMA of the weights, bf16 autocast; then 6 class-conditional sampling requests of 2-16 latents of one bucket by the EMA model with classifier-free guidance (batch doubled, scale 4), 50 DDIM steps each")
def dit_train(rng):
    import copy

    f = torch.nn.functional
    model = _Dit().cuda().train()
    ema = copy.deepcopy(model).eval().requires_grad_(False)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0)
    alphas = torch.cumprod(1 - torch.linspace(1e-4, 0.02, 1000, device="cuda"), 0)

    def bucket():
        base, ratio = rng.choice([32, 64]), rng.choice([0.5, 0.57, 0.67, 0.75, 0.86, 1.0, 1.17, 1.33, 1.5, 1.75, 2.0])
        return base, round(base / math.sqrt(ratio) / 2) * 2, round(base * math.sqrt(ratio) / 2) * 2

    for _ in range(300):
        base, h, w = bucket()
        b = rng.randint(16, 64) if base == 32 else rng.randint(4, 16)
        x0 = torch.randn(b, 4, h, w, device="cuda")
        y = torch.randint(0, 1000, (b,), device="cuda")
        y = torch.where(torch.rand(b, device="cuda") < 0.1, 1000, y)
        t = torch.randint(0, 1000, (b,), device="cuda")
        noise = torch.randn_like(x0)
        a = alphas[t][:, None, None, None]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(a.sqrt() * x0 + (1 - a).sqrt() * noise, t, y)
        loss = f.mse_loss(out[:, :4].float(), noise)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        with torch.no_grad():
            torch._foreach_lerp_(list(ema.parameters()), list(model.parameters()), 1e-3)
        del x0, y, t, noise, a, out, loss
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        for _ in range(6):
            _, h, w = bucket()
            b = rng.randint(2, 16)
            x = torch.randn(b, 4, h, w, device="cuda")
            y = torch.cat([torch.randint(0, 1000, (b,), device="cuda"), torch.full((b,), 1000, device="cuda")])
            steps = torch.linspace(999, 0, 50, device="cuda").long().tolist()
            for i, step in enumerate(steps):
                t = torch.full((2 * b,), step, device="cuda")
                cond, uncond = ema(torch.cat([x, x]), t, y)[:, :4].float().chunk(2)
                eps = uncond + 4.0 * (cond - uncond)
                a, a_next = alphas[step], alphas[steps[i + 1]] if i + 1 < len(steps) else torch.ones((), device="cuda")
                x0 = (x - (1 - a).sqrt() * eps) / a.sqrt()
                x = a_next.sqrt() * x0 + (1 - a_next).sqrt() * eps
                del t, cond, uncond, eps, x0
            x.cpu()
            del x, y


@workload("text-to-speech training, FastSpeech2-style (ming024's: phoneme vocabulary 360, 4+6 FFT blocks of width 256 with 2 heads and conv FFNs 1024 wide, duration/pitch/energy predictors, a length regulator by repeat_interleave, 80-band mel output, 5-layer PostNet; random init), batches of 8-48 utterances of 12-160 phonemes with random durations of 1-14 frames each (about 100-1500 mel frames, padded to the batch's longest), masked L1 mel losses before and after the PostNet plus MSE duration (log), pitch and energy losses, 400 steps, gradient clipping, Adam (0.9, 0.98) with the Noam warmup, fp32")
def fastspeech2_train(rng):
    f = torch.nn.functional
    model = _FastSpeech2().cuda().train()
    opt = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 256**-0.5 * min((s + 1) ** -0.5, (s + 1) * 4000**-1.5))
    for _ in range(400):
        b = rng.randint(8, 48)
        counts = [rng.randint(12, 160) for _ in range(b)]
        n = max(counts)
        pad = torch.arange(n, device="cuda")[None] >= torch.tensor(counts, device="cuda")[:, None]
        phones = torch.randint(1, 360, (b, n), device="cuda").masked_fill(pad, 0)
        durations = torch.randint(1, 15, (b, n), device="cuda").masked_fill(pad, 0)
        pitch, energy = torch.randn(b, n, device="cuda").masked_fill(pad, 0), torch.randn(b, n, device="cuda").masked_fill(pad, 0)
        target = torch.randn(b, int(durations.sum(1).max()), 80, device="cuda")
        mel, post, mel_pad, log_dur, p, e = model(phones, pad, durations, pitch, energy)
        keep, kept = ~mel_pad[..., None], ~pad
        loss = (
            (mel - target).abs().masked_select(keep).mean()
            + (post - target).abs().masked_select(keep).mean()
            + f.mse_loss(log_dur.masked_select(kept), torch.log(durations.float() + 1).masked_select(kept))
            + f.mse_loss(p.masked_select(kept), pitch.masked_select(kept))
            + f.mse_loss(e.masked_select(kept), energy.masked_select(kept))
        )
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        del pad, phones, durations, pitch, energy, target, mel, post, mel_pad, log_dur, p, e, keep, kept, loss


@workload("activation offloading: every tensor autograd saves copied to pinned host memory in the forward and back to the device in the backward (torch.autograd.graph.save_on_cpu(pin_memory=True)) while training an HF LlamaForCausalLM (hidden 1024, 16 layers, GQA 16/4 heads, MLP 2816, vocab 32000, random init, sdpa), batch 1-8 x seq 256-4096 (multiple of 128) capped at 6144 tokens, 80 steps, gradient clipping, AdamW, bf16 autocast")
def offload_train(rng):
    from transformers import LlamaForCausalLM

    cfg = llama_config(16, 4, 4096)
    model = LlamaForCausalLM(cfg).cuda().train()
    model.config.use_cache = False
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    for _ in range(80):
        s = randint(rng, 256, 4096, 128)
        b = max(1, min(rng.randint(1, 8), 6144 // s))
        ids = torch.randint(0, cfg.vocab_size, (b, s), device="cuda")
        with torch.autograd.graph.save_on_cpu(pin_memory=True), torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, loss


@workload("pipeline parallelism on one GPU, GPipe-style with two CUDA streams: a nanoGPT-style GPT-2 medium (24 blocks of width 1024, 16 heads, vocab 50304, untied head, random init) cut into two stages of 12 blocks (embeddings with the first; final norm, head and loss with the second), each run on a stream of its own; each step a batch of 8-32 sequences of 256-1024 tokens (multiple of 128) capped at 8192 tokens, cut into 4-8 micro-batches; every micro-batch's forward first (stage 1 on its stream, the activation handed to stage 2 by an event, with record_stream), then the backwards in reverse order (autograd runs each stage's backward on its forward's stream), gradient clipping and AdamW on the default stream after it waits for both; 80 steps, bf16 autocast")
def gpipe_streams(rng):
    nn = torch.nn
    f = nn.functional
    d, heads, vocab = 1024, 16, 50304
    embed = nn.ModuleList([nn.Embedding(vocab, d), nn.Embedding(1024, d)]).cuda()
    stage1 = nn.Sequential(*[_GptBlock(d, heads) for _ in range(12)]).cuda()
    stage2 = nn.Sequential(*[_GptBlock(d, heads) for _ in range(12)], nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)).cuda()
    params = [*embed.parameters(), *stage1.parameters(), *stage2.parameters()]
    opt = torch.optim.AdamW(params, lr=3e-4, weight_decay=0.1)
    main, s1, s2 = torch.cuda.current_stream(), torch.cuda.Stream(), torch.cuda.Stream()
    for _ in range(80):
        s = randint(rng, 256, 1024, 128)
        b = min(rng.randint(8, 32), 8192 // s)
        ids = torch.randint(0, vocab, (b, s + 1), device="cuda")
        s1.wait_stream(main)
        s2.wait_stream(main)
        losses = []
        for mb in ids.tensor_split(min(b, rng.randint(4, 8))):
            with torch.cuda.stream(s1), torch.autocast("cuda", dtype=torch.bfloat16):
                x = stage1(embed[0](mb[:, :-1]) + embed[1](torch.arange(s, device="cuda")))
            handed = torch.cuda.Event()
            handed.record(s1)
            with torch.cuda.stream(s2):
                s2.wait_event(handed)
                x.record_stream(s2)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = stage2(x)
                losses.append(f.cross_entropy(logits.flatten(0, 1).float(), mb[:, 1:].flatten()) / b * len(mb))
            del x, logits
        main.wait_stream(s2)
        for loss in reversed(losses):
            loss.backward()
        main.wait_stream(s1)
        main.wait_stream(s2)
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, losses, loss


class _StreamConformerLayer(torch.nn.Module):
    """A Conformer layer for chunked streaming (WeNet's, absolute positions): half-step FFN, self-attention of
    the chunk over its cached left context and itself, a causal depthwise convolution (kernel 15, LayerNorm)
    fed by its own cache, half-step FFN, LayerNorm. Returns the new caches."""

    def __init__(self, d=256, heads=4, ff=2048, kernel=15):
        super().__init__()
        nn = torch.nn

        def ffn():
            return nn.Sequential(nn.LayerNorm(d), nn.Linear(d, ff), nn.SiLU(), nn.Linear(ff, d))

        self.ff1, self.ff2, self.heads = ffn(), ffn(), heads
        self.ln_att, self.qkv, self.o = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ln_conv, self.pw1, self.dw = nn.LayerNorm(d), nn.Conv1d(d, 2 * d, 1), nn.Conv1d(d, d, kernel, groups=d)
        self.ln_dw, self.pw2, self.ln_out = nn.LayerNorm(d), nn.Conv1d(d, d, 1), nn.LayerNorm(d)

    def forward(self, x, kv_cache, conv_cache, left):
        x = x + 0.5 * self.ff1(x)
        q, k, v = self.qkv(self.ln_att(x)).chunk(3, -1)
        kv = torch.cat([kv_cache, torch.cat([k, v], -1)], 1)
        x = x + self.o(_mha(q, *kv.chunk(2, -1), self.heads))
        h = torch.cat([conv_cache, torch.nn.functional.glu(self.pw1(self.ln_conv(x).transpose(1, 2)), dim=1)], 2)
        new_conv = h[:, :, -(self.dw.kernel_size[0] - 1) :]
        h = self.pw2(torch.nn.functional.silu(self.ln_dw(self.dw(h).transpose(1, 2)).transpose(1, 2)))
        x = x + h.transpose(1, 2)
        x = self.ln_out(x + 0.5 * self.ff2(x))
        return x, (kv if left < 0 else kv[:, -left:]), new_conv


@workload("streaming speech recognition (inference): a WeNet-style chunked Conformer (conv2d subsampling x4 of 80 log-mel bands, 12 layers of width 256, 4 heads, FFN 2048, causal depthwise conv kernel 15, CTC head over 5000 units; random weights) in fp16 under inference_mode; 24 batches of 1-16 streams (log-uniform) of 2-40 s of 16 kHz audio, each batch with a chunk of 8, 16 or 32 output frames (0.32-1.28 s) and a left context of 4, 8 or all previous chunks; per chunk the streams' audio copied from a pinned buffer, STFT and log-mel on the device, subsampled, the layers run with each layer's attention (key/value) and convolution caches carried between chunks (grown by concatenation, trimmed to the left context), streams that ended dropped from the batch and their caches, CTC greedy ids copied back")
def streaming_asr(rng):
    nn = torch.nn
    f = nn.functional
    d, layers = 256, 12
    sub = nn.Sequential(nn.Conv2d(1, d, 3, 2), nn.ReLU(), nn.Conv2d(d, d, 3, 2), nn.ReLU()).to("cuda", torch.half).eval()
    sub_out = nn.Linear(d * 19, d).to("cuda", torch.half)
    blocks = nn.ModuleList([_StreamConformerLayer(d) for _ in range(layers)]).to("cuda", torch.half).eval()
    ctc = nn.Linear(d, 5000).to("cuda", torch.half)
    window = torch.hann_window(400, device="cuda")
    fbank = torch.rand(201, 80, device="cuda")  # a mel filter bank's shape
    host = torch.randn(16 * 32000).pin_memory()
    with torch.inference_mode():
        for _ in range(24):
            secs = [rng.uniform(2, 40) for _ in range(_loguniform(rng, 1, 16))]
            chunk, left_chunks = rng.choice([8, 16, 32]), rng.choice([4, 8, -1])
            left = chunk * left_chunks
            hop = chunk * 4 * 160  # samples per chunk: 4 mel frames (10 ms each) per output frame
            need = 400 + ((chunk - 1) * 4 + 6) * 160  # samples of the 7-frame subsampling context
            remaining = [math.ceil(s * 16000 / hop) for s in secs]
            kv = [torch.zeros(len(secs), 0, 2 * d, device="cuda", dtype=torch.half) for _ in range(layers)]
            conv = [torch.zeros(len(secs), d, 14, device="cuda", dtype=torch.half) for _ in range(layers)]
            while remaining:
                b = len(remaining)
                wave = host[: b * need].view(b, need).to("cuda", non_blocking=True)
                spec = torch.stft(wave, 400, 160, window=window, center=False, return_complex=True).abs().pow(2)
                mel = (spec.transpose(1, 2) @ fbank).clamp_min(1e-10).log().half()
                x = sub(mel[:, None])
                x = sub_out(x.transpose(1, 2).flatten(2))
                for i, blk in enumerate(blocks):
                    x, kv[i], conv[i] = blk(x, kv[i], conv[i], left)
                ctc(x).float().log_softmax(-1).argmax(-1).cpu()
                alive = [i for i, r in enumerate(remaining) if r > 1]
                if 0 < len(alive) < b:
                    keep = torch.tensor(alive, device="cuda")
                    kv, conv = [c[keep] for c in kv], [c[keep] for c in conv]
                    del keep
                remaining = [remaining[i] - 1 for i in alive]
                del wave, spec, mel, x
            del kv, conv


class _SchNetInteraction(torch.nn.Module):
    """SchNet's interaction block: a continuous-filter convolution (filters from 50 Gaussian distance features by
    a 2-layer network, cosine cutoff), then two atom-wise layers with shifted softplus."""

    def __init__(self, d=128, rbf=50):
        super().__init__()
        nn = torch.nn
        self.f1, self.f2 = nn.Linear(rbf, d), nn.Linear(d, d)
        self.lin1, self.lin2, self.lin3 = nn.Linear(d, d, bias=False), nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, h, src, dst, rbf, cut):
        ssp = torch.nn.functional.softplus
        w = self.f2(ssp(self.f1(rbf)) - math.log(2)) * cut[:, None]
        agg = torch.zeros_like(h).index_add_(0, dst, self.lin1(h)[src] * w)
        return self.lin3(ssp(self.lin2(agg)) - math.log(2))


@workload("molecular energy-and-force training: SchNet (atom embeddings of 128 for 100 elements, 6 interaction blocks with continuous-filter convolutions over 50 Gaussian distance features, cutoff 5 A with a cosine envelope; random init), batches of 8-96 molecules of 10-200 atoms (log-uniform, about 0.1 atoms per cubic angstrom) capped at 6000 atoms; the radius graph built per batch on the device (per-molecule padded distance matrices, within the cutoff, then nonzero), energy by a per-atom MLP summed per molecule, forces as minus its gradient with respect to the positions (create_graph, so the loss's backward is a double backward), loss MSE(energy) + 100 MSE(forces), 600 steps, Adam, fp32")
def schnet_forces(rng):
    nn = torch.nn
    f = nn.functional
    d, cutoff = 128, 5.0
    emb = nn.Embedding(100, d).cuda()
    inter = nn.ModuleList([_SchNetInteraction(d) for _ in range(6)]).cuda()
    head = nn.Sequential(nn.Linear(d, d // 2), nn.Softplus(), nn.Linear(d // 2, 1)).cuda()
    params = [*emb.parameters(), *inter.parameters(), *head.parameters()]
    opt = torch.optim.Adam(params, lr=5e-4)
    centres = torch.linspace(0, cutoff, 50, device="cuda")
    for _ in range(600):
        sizes = []
        for _ in range(rng.randint(8, 96)):
            n = _loguniform(rng, 10, 200)
            if sum(sizes) + n > 6000:
                break
            sizes.append(n)
        m, most, atoms = len(sizes), max(sizes), sum(sizes)
        counts = torch.tensor(sizes, device="cuda")
        mol = torch.repeat_interleave(torch.arange(m, device="cuda"), counts)
        slot = torch.arange(atoms, device="cuda") - (torch.cumsum(counts, 0) - counts)[mol]
        # Atoms uniform in a ball of the molecule's volume at 0.1 atoms per cubic angstrom.
        radius = (7.5 * counts.float() / math.pi) ** (1 / 3)
        u = f.normalize(torch.randn(atoms, 3, device="cuda"), dim=1) * torch.rand(atoms, 1, device="cuda") ** (1 / 3)
        pos = (u * radius[mol, None]).requires_grad_()
        z = torch.randint(1, 100, (atoms,), device="cuda")
        with torch.no_grad():
            padded = torch.full((m, most, 3), 1e6, device="cuda")
            padded[mol, slot] = pos
            real = torch.arange(most, device="cuda")[None] < counts[:, None]
            near = (torch.cdist(padded, padded) < cutoff) & real[:, :, None] & real[:, None, :]
            near &= ~torch.eye(most, dtype=torch.bool, device="cuda")
            which, i, j = near.nonzero(as_tuple=True)
            base = torch.cumsum(counts, 0) - counts
            src, dst = base[which] + j, base[which] + i
            del padded, real, near, which, i, j, base
        dist = (pos[src] - pos[dst]).norm(dim=-1)
        rbf = torch.exp(-10.0 * (dist[:, None] - centres) ** 2)
        cut = 0.5 * (torch.cos(dist * math.pi / cutoff) + 1)
        h = emb(z)
        for block in inter:
            h = h + block(h, src, dst, rbf, cut)
        energy = torch.zeros(m, device="cuda").index_add_(0, mol, head(h).squeeze(-1))
        forces = -torch.autograd.grad(energy.sum(), pos, create_graph=True)[0]
        loss = f.mse_loss(energy, torch.randn(m, device="cuda")) + 100 * f.mse_loss(forces, torch.randn_like(forces))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del counts, mol, slot, radius, u, pos, z, src, dst, dist, rbf, cut, h, energy, forces, loss

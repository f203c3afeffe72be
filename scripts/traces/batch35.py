"""The thirty-fifth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch34_b.py are): learned image compression training with a scale hyperprior on crops of varying size (crops
prefetched on a side stream), DiffWave vocoder training on clips of varying length with periodic fast sampling,
GECToR-style iterative grammar-correction serving where sentences change length and drop out between rounds
(uploads on a side stream), and TAPAS-style table question answering training on tables of varying shape. Same
conventions: models built from configs (hand-written torch here) with random weights, nothing downloaded, `rng` the
workload's random.Random for every shape, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny.
No control flow reads a tensor's value. hyperprior_compress_train (fp32) uploads every batch of crops from reused
pinned host buffers on a side stream, and gector_iterative_serve (bf16 autocast) uploads every round's token ids the
same way (the compute stream waiting on the upload's event, the uploaded tensor record_stream'ed); diffwave_train
and tapas_tableqa_train are single-stream under bf16 autocast. gector_iterative_serve stays under 1 GB requested.

record.py calls `register(<its own module object>)` once, just before main(), after batch34_b's: every workload
below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it reaches
record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch35_b.py's header says the same of its half): every workload of this
half was run whole, at its real sizes (RECORD_SMOKE unset), on PyTorch's meta device (a runner like
/tmp/b35/meta_run.py, not committed: smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered
with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking its math path; boolean-mask indexing,
which the meta device cannot size, is avoided) and its op outputs counted there (events about 1.8x that count);
the counts and peaks are in record_new35.sh's header.
"""

import math

import torch

from batch_common import Batch, upload

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


class _Enc(torch.nn.Module):
    """A pre-norm bidirectional transformer layer: self-attention with an optional boolean key mask, GELU MLP."""

    def __init__(self, d, heads):
        super().__init__()
        nn = torch.nn
        self.h = heads
        self.n1, self.qkv, self.o = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.n2, self.fc1, self.fc2 = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x, mask=None):
        q, k, v = (t.unflatten(-1, (self.h, -1)).transpose(1, 2) for t in self.qkv(self.n1(x)).chunk(3, -1))
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.o(a.transpose(1, 2).flatten(2))
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.n2(x))))


# ---------------------------------------------------------------- learned image compression (scale hyperprior)


class _GDN(torch.nn.Module):
    """Generalized divisive normalization (Balle et al. 2016), or its inverse: x / sqrt(beta + gamma * x^2)."""

    def __init__(self, c, inverse=False):
        super().__init__()
        self.inverse = inverse
        self.beta = torch.nn.Parameter(torch.ones(c))
        self.gamma = torch.nn.Parameter(0.1 * torch.eye(c))

    def forward(self, x):
        c = x.shape[1]
        norm = torch.nn.functional.conv2d(x * x, self.gamma.clamp(min=0).view(c, c, 1, 1), self.beta.clamp(min=1e-6))
        return x * norm.sqrt() if self.inverse else x * norm.rsqrt()


@_workload("learned image compression training, a scale-hyperprior model (Balle et al. 2018, as CompressAI's bmshj2018-hyperprior trains it) written by hand, fp32: an analysis transform of four 5x5 stride-2 convs (128 channels, GDN between them) to a 192-channel latent, a hyper-analysis (3x3 then two 5x5 stride-2 convs, ReLU) to 128 channels, a hyper-synthesis of transposed convs predicting the Gaussian scales, a synthesis transform of four transposed convs with inverse GDN; additive uniform noise for quantization in training, the latent's rate from Gaussian CDF differences (erfc) and the hyper-latent's from a learned per-channel logistic prior, loss lambda*255^2*MSE + bits per pixel with lambda drawn per step from the six CompressAI rate points; crops of 128-384 px (drawn per step, multiples of 64) in batches of 2-16 capped at 16 crops of 256 px of pixels, each batch decoded into one of two reused pinned uint8 host buffers and uploaded on a side stream while the previous batch trains (the compute stream waiting on the batch's event, the upload record_stream'ed); Adam with grad-norm clipping, 680 steps; every 60 steps an evaluation on two Kodak-sized images (512x768 or 768x512, drawn) with rounding, bpp and PSNR read back")
def hyperprior_compress_train(rng):
    nn, f = torch.nn, torch.nn.functional
    N, M = _smoke(128, 8), _smoke(192, 12)

    def conv(i, o, k=5, s=2):
        return nn.Conv2d(i, o, k, s, k // 2)

    def deconv(i, o, k=5, s=2):
        return nn.ConvTranspose2d(i, o, k, s, k // 2, output_padding=s - 1)

    g_a = nn.Sequential(conv(3, N), _GDN(N), conv(N, N), _GDN(N), conv(N, N), _GDN(N), conv(N, M))
    h_a = nn.Sequential(conv(M, N, 3, 1), nn.ReLU(), conv(N, N), nn.ReLU(), conv(N, N))
    h_s = nn.Sequential(deconv(N, N), nn.ReLU(), deconv(N, N), nn.ReLU(), conv(N, M, 3, 1), nn.ReLU())
    g_s = nn.Sequential(deconv(M, N), _GDN(N, True), deconv(N, N), _GDN(N, True), deconv(N, N), _GDN(N, True),
                        deconv(N, 3))
    model = nn.ModuleList([g_a, h_a, h_s, g_s]).cuda()
    prior = nn.ParameterList([torch.zeros(N), torch.zeros(N)]).cuda()  # the hyper-latent's logistic prior
    z_loc, z_logs = prior[0], prior[1]
    params = list(model.parameters()) + list(prior.parameters())
    opt = torch.optim.Adam(params, lr=1e-4)
    nsteps = _smoke(680, 3)
    sizes = [_smoke(s, 64) for s in (128, 192, 256, 320, 384)]
    budget = _smoke(16 * 256 * 256, 4 * 64 * 64)
    cap = 3 * budget
    hosts = [torch.randint(0, 256, (cap,), dtype=torch.uint8).pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    lambdas = [0.0018, 0.0035, 0.0067, 0.013, 0.025, 0.0483]
    sqrt2 = math.sqrt(2.0)

    def phi(x):
        return 0.5 * torch.special.erfc(-x / sqrt2)

    def rates(x, train):
        y = g_a(x)
        z = h_a(y.abs())
        if train:
            y_hat, z_hat = y + torch.rand_like(y) - 0.5, z + torch.rand_like(z) - 0.5
        else:
            y_hat, z_hat = torch.round(y), torch.round(z)
        scales = h_s(z_hat).clamp(min=0.11)
        v = y_hat.abs()
        lik_y = (phi((0.5 - v) / scales) - phi((-0.5 - v) / scales)).clamp(min=1e-9)
        loc, s = z_loc.view(1, -1, 1, 1), z_logs.exp().view(1, -1, 1, 1)
        lik_z = (torch.sigmoid((z_hat + 0.5 - loc) / s) - torch.sigmoid((z_hat - 0.5 - loc) / s)).clamp(min=1e-9)
        npx = x.shape[0] * x.shape[2] * x.shape[3]
        bpp = (-lik_y.log2().sum() - lik_z.log2().sum()) / npx
        return g_s(y_hat), bpp

    def draw():
        s = rng.choice(sizes)
        b = max(2, min(16, budget // (s * s) - rng.randint(0, 2)))
        return b, s

    def stage(k, b, s):
        n = b * 3 * s * s
        hosts[k][: min(n, 4096)].random_(0, 256)  # the decoder writes the new crops (the rest reused)
        with torch.cuda.stream(side):
            x = upload(hosts[k][:n])
            ev = side.record_event()
        return x, ev, b, s

    nxt = stage(0, *draw())
    for step in range(nsteps):
        flat, ev, b, s = nxt
        torch.cuda.current_stream().wait_event(ev)
        flat.record_stream(torch.cuda.current_stream())
        if step + 1 < nsteps:
            nxt = stage((step + 1) % 2, *draw())
        x = flat.view(b, 3, s, s).float() / 255.0
        lam = rng.choice(lambdas)
        x_hat, bpp = rates(x, True)
        mse = f.mse_loss(x_hat, x)
        loss = lam * 255 ** 2 * mse + bpp
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del flat, x, x_hat, bpp, mse, loss
        if (step + 1) % _smoke(60, 2) == 0:
            with torch.no_grad():
                out = []
                for _ in range(2):
                    h, w = rng.choice([(512, 768), (768, 512)])
                    h, w = _smoke(h, 64), _smoke(w, 128)
                    img = torch.rand(1, 3, h, w, device="cuda")
                    rec, bpp = rates(img, False)
                    psnr = -10 * torch.log10(f.mse_loss(rec.clamp(0, 1), img))
                    out += [bpp, psnr]
                    del img, rec
                torch.stack(out).tolist()
                del out
    torch.cuda.synchronize()


# ---------------------------------------------------------------- DiffWave vocoder


@_workload("diffusion vocoder training, DiffWave (Kong et al. 2021) as its LJSpeech recipe trains it, written by hand: 20 residual layers of 64 channels (dilations 1-512 in two cycles of 10, gated tanh-sigmoid units, a 1x1 conv to residual and skip), a diffusion-step embedding (sinusoidal 128 -> 512 -> 512, SiLU, a projection per layer), 80-bin mel conditioning upsampled 256x by two transposed 2D convs (leaky ReLU) and projected per layer; T=50 linear noise schedule, the step drawn per clip, a noise-prediction MSE loss; 22 kHz clips of 16-128 mel frames (4k-33k samples, drawn log-uniform per step) in batches of 2-16 capped at 64k samples; AdamW, bf16 autocast, 285 steps; every 80 steps fast sampling with DiffWave's 6-step inference schedule on 1-4 utterances of 1-3 s (drawn), no grad, the waveform's RMS read back")
def diffwave_train(rng):
    nn, f = torch.nn, torch.nn.functional
    C, nl, emb = _smoke(64, 4), _smoke(20, 2), _smoke(512, 16)
    nmel, hop = 80, _smoke(256, 4)

    class Layer(nn.Module):
        def __init__(self, dil):
            super().__init__()
            self.dil = nn.Conv1d(C, 2 * C, 3, padding=dil, dilation=dil)
            self.step = nn.Linear(emb, C)
            self.cond = nn.Conv1d(nmel, 2 * C, 1)
            self.out = nn.Conv1d(C, 2 * C, 1)

        def forward(self, x, d, mel):
            y = self.dil(x + self.step(d)[:, :, None]) + self.cond(mel)
            a, b = y.chunk(2, 1)
            y = self.out(torch.sigmoid(a) * torch.tanh(b))
            res, skip = y.chunk(2, 1)
            return (x + res) / math.sqrt(2.0), skip

    layers = nn.ModuleList(Layer(2 ** (i % 10)) for i in range(nl))
    inp, skip_proj, outp = nn.Conv1d(1, C, 1), nn.Conv1d(C, C, 1), nn.Conv1d(C, 1, 1)
    nn.init.zeros_(outp.weight)
    demb = nn.Sequential(nn.Linear(128, emb), nn.SiLU(), nn.Linear(emb, emb), nn.SiLU())
    up1 = nn.ConvTranspose2d(1, 1, (3, 32 if hop == 256 else 4), (1, 16 if hop == 256 else 2), (1, 8 if hop == 256 else 1))
    up2 = nn.ConvTranspose2d(1, 1, (3, 32 if hop == 256 else 4), (1, 16 if hop == 256 else 2), (1, 8 if hop == 256 else 1))
    model = nn.ModuleList([layers, inp, skip_proj, outp, demb, up1, up2]).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4)
    T = 50
    betas = torch.linspace(1e-4, 0.05, T, device="cuda")
    abar = torch.cumprod(1 - betas, 0)
    half = torch.arange(64, device="cuda")
    freqs = 10.0 ** (half * 4.0 / 63.0)

    def step_embed(t):
        a = t.float()[:, None] * freqs[None]
        return demb(torch.cat([a.sin(), a.cos()], 1))

    def net(x, t, mel):
        m = f.leaky_relu(up1(mel[:, None]), 0.4)
        m = f.leaky_relu(up2(m), 0.4).squeeze(1)
        h = f.relu(inp(x))
        d = step_embed(t)
        skips = None
        for layer in layers:
            h, s = layer(h, d, m)
            skips = s if skips is None else skips + s
        return outp(f.relu(skip_proj(skips / math.sqrt(len(layers)))))

    nsteps = _smoke(285, 2)
    cap = _smoke(65536, 4 * 64)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        for step in range(nsteps):
            frames = _loguniform(rng, _smoke(16, 4), _smoke(128, 16))
            n = frames * hop
            b = max(2, min(rng.randint(2, 16), cap // n))
            audio = torch.randn(b, 1, n, device="cuda") * 0.3
            mel = torch.randn(b, nmel, frames, device="cuda")
            t = torch.randint(0, T, (b,), device="cuda")
            a = abar[t].view(b, 1, 1)
            noise = torch.randn_like(audio)
            pred = net(a.sqrt() * audio + (1 - a).sqrt() * noise, t, mel)
            loss = f.mse_loss(pred.float(), noise)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            del audio, mel, t, a, noise, pred, loss
            if (step + 1) % _smoke(80, 2) == 0:
                with torch.no_grad():
                    fast = torch.tensor([0.0001, 0.001, 0.01, 0.05, 0.2, 0.5], device="cuda")
                    fa = torch.cumprod(1 - fast, 0)
                    # the inference steps aligned to the training schedule (DiffWave's T_align), on the host
                    align = [0.5, 1.3, 3.9, 11.2, 25.1, 37.6]
                    nb = rng.randint(1, 4)
                    frames = rng.randint(_smoke(86, 4), _smoke(258, 12))
                    mel = torch.randn(nb, nmel, frames, device="cuda")
                    x = torch.randn(nb, 1, frames * hop, device="cuda")
                    for i in reversed(range(6)):
                        tt = torch.full((nb,), align[i], device="cuda")
                        eps = net(x, tt, mel).float()
                        c1, c2 = 1 / (1 - fast[i]).sqrt(), fast[i] / (1 - fa[i]).sqrt()
                        x = c1 * (x - c2 * eps)
                        if i > 0:
                            sigma = ((1 - fa[i - 1]) / (1 - fa[i]) * fast[i]).sqrt()
                            x = x + sigma * torch.randn_like(x)
                        del eps
                    x.clamp(-1, 1).pow(2).mean().sqrt().tolist()
                    del x, mel, fast, fa
    torch.cuda.synchronize()


# ---------------------------------------------------------------- GECToR iterative grammar correction


@_workload("grammatical error correction serving by sequence tagging, GECToR (Omelianchuk et al. 2020) as its iterative inference runs it, written by hand: a BERT-base-sized encoder of 8 layers (768 wide, 12 heads, 30522-token vocabulary, learned positions, key-padding mask) with a 5002-way edit-tag head and a 4-way error-detection head; requests of 4-48 sentences of 5-80 tokens (drawn log-uniform each, a $START token prepended), padded on the host to the batch's longest into one of two reused pinned int64 host buffers and uploaded on a side stream (the next request's while the current one corrects; the compute stream waiting on the upload's event, the tensor record_stream'ed); up to 5 correction rounds a request: tag softmax with the keep-confidence bias added, the max tag probability and the sentence's max error probability compared with the thresholds on the device, tags and flags read back, the host applying the edits (sentences that converged leave, as drawn; the others grow or shrink by -2..+3 tokens, drawn) and uploading the shrinking batch of edited sentences for the next round the same way; 215 requests, eval mode, bf16 autocast, no grad")
def gector_iterative_serve(rng):
    nn, f = torch.nn, torch.nn.functional
    d, heads, nl, vocab, ntags = _smoke(768, 32), _smoke(12, 2), _smoke(8, 1), _smoke(30522, 300), _smoke(5002, 50)
    tok, pos = nn.Embedding(vocab, d), nn.Embedding(160, d)
    blocks = nn.ModuleList(_Enc(d, heads) for _ in range(nl))
    norm, tag_head, det_head = nn.LayerNorm(d), nn.Linear(d, ntags), nn.Linear(d, 4)
    model = nn.ModuleList([tok, pos, blocks, norm, tag_head, det_head]).cuda().eval()
    nreq = _smoke(215, 3)
    smax, lmax = _smoke(48, 4), _smoke(80, 10)
    cap = smax * (lmax + 20)
    hosts = [torch.randint(1, vocab, (cap,), dtype=torch.int64).pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    bias = torch.zeros(ntags, device="cuda")
    bias[0] = 0.2  # the keep tag's confidence bias
    k = [0]

    def stage(lens):
        L = max(lens) + 1
        n = len(lens) * L
        buf = hosts[k[0] % 2]
        k[0] += 1
        buf[: min(n, 1024)].random_(1, vocab)  # the tokenizer writes the new ids (the rest reused)
        with torch.cuda.stream(side):
            ids = upload(buf[:n])
            ev = side.record_event()
        return ids, ev, lens

    def draw():
        return [_loguniform(rng, _smoke(5, 2), lmax) for _ in range(rng.randint(_smoke(4, 1), smax))]

    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        nxt = stage(draw())
        for req in range(nreq):
            cur = nxt
            if req + 1 < nreq:
                nxt = stage(draw())
            for rnd in range(5):
                flat, ev, lens = cur
                torch.cuda.current_stream().wait_event(ev)
                flat.record_stream(torch.cuda.current_stream())
                b, L = len(lens), max(lens) + 1
                ids = flat.view(b, L)
                ln = torch.tensor([n + 1 for n in lens], device="cuda")
                valid = torch.arange(L, device="cuda")[None] < ln[:, None]
                x = tok(ids) + pos(torch.arange(L, device="cuda"))
                mask = valid[:, None, None, :]
                for blk in blocks:
                    x = blk(x, mask)
                x = norm(x)
                probs = tag_head(x).float().softmax(-1) + bias
                conf, tags = probs.max(-1)
                err = det_head(x).float().softmax(-1)[..., 1].masked_fill(~valid, 0).max(-1).values
                keep = (conf < 0.5) | (tags == 0)
                tags = tags.masked_fill(keep | ~valid, 0)
                flags = err > 0.7
                tags.cpu()
                flags.cpu()
                del ids, ln, valid, x, mask, probs, conf, tags, err, keep, flags
                left = [max(3, min(lmax + 16, n + rng.randint(-2, 3))) for n in lens if rng.random() > 0.45]
                if not left or rnd == 4:
                    break
                cur = stage(left)
    torch.cuda.synchronize()


# ---------------------------------------------------------------- TAPAS table question answering


@_workload("table question answering training, TAPAS (Herzig et al. 2020) as its WikiTableQuestions weak-supervision recipe fine-tunes it, written by hand: a BERT-base-sized encoder of 8 post-embedding pre-norm layers (768 wide, 12 heads, 30522-token vocabulary) with TAPAS's extra token-type embeddings (segment, column, row, column rank, inverse rank, previous answer) summed on the token embeddings; every example a question of 6-30 tokens and a flattened table of 3-40 rows by 2-10 columns (drawn) with cells of 1-5 tokens, rows truncated to fit 512 tokens, batches of 4-32 tables (drawn, capped at 8192 tokens) padded to the batch's longest; the cell-selection head averages token logits per cell by index_add over cell ids (and per column for the column-selection logits, absent columns masked), a column cross-entropy, a cell BCE restricted to the chosen column, and an aggregation head (4 operators) on the [CLS] token; AdamW with warmup, grad-norm clipping, bf16 autocast, 320 steps; every 50 steps an evaluation of 4 batches without grad, the predicted column and cells read back")
def tapas_tableqa_train(rng):
    nn, f = torch.nn, torch.nn.functional
    d, heads, nl, vocab = _smoke(768, 32), _smoke(12, 2), _smoke(8, 1), _smoke(30522, 300)
    maxlen = _smoke(512, 48)
    tok, pos, seg = nn.Embedding(vocab, d), nn.Embedding(maxlen, d), nn.Embedding(2, d)
    colE, rowE, rankE, irankE, prevE = (nn.Embedding(n, d) for n in (32, 256, 256, 256, 2))
    blocks = nn.ModuleList(_Enc(d, heads) for _ in range(nl))
    norm = nn.LayerNorm(d)
    cell_w, col_w, agg = nn.Linear(d, 1), nn.Linear(d, 1), nn.Linear(d, 4)
    model = nn.ModuleList([tok, pos, seg, colE, rowE, rankE, irankE, prevE, blocks, norm, cell_w, col_w, agg]).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.01)
    nsteps = _smoke(320, 2)
    tok_cap = _smoke(8192, 256)

    def example():
        q = rng.randint(_smoke(6, 2), _smoke(30, 4))
        nr, nc = rng.randint(3, _smoke(40, 4)), rng.randint(2, _smoke(10, 3))
        cells = [[rng.randint(1, _smoke(5, 2)) for _ in range(nc)] for _ in range(nr)]
        while nr > 1 and q + 2 + sum(map(sum, cells)) > maxlen:
            cells.pop()
            nr -= 1
        segs, cols, rows, cid = [0] * (q + 2), [0] * (q + 2), [0] * (q + 2), [0] * (q + 2)
        c = 1
        for r, row in enumerate(cells):
            for j, n in enumerate(row):
                segs += [1] * n
                cols += [j + 1] * n
                rows += [r + 1] * n
                cid += [c] * n
                c += 1
        return segs, cols, rows, cid, nc, c

    def batch():
        exs, total, L = [], 0, 0
        want = rng.randint(_smoke(4, 1), _smoke(32, 3))
        while len(exs) < want:
            e = example()
            L2 = max(L, len(e[0]))
            if exs and L2 * (len(exs) + 1) > tok_cap:
                break
            exs.append(e)
            L = L2
        b = len(exs)
        pad = [lambda e, i=i: e[i] + [0] * (L - len(e[i])) for i in range(4)]
        meta = torch.tensor([sum((p(e) for e in exs), []) for p in pad], device="cuda").view(4, b, L)
        ncell = max(e[5] for e in exs)
        ncols = torch.tensor([e[4] for e in exs], device="cuda")
        return b, L, meta, ncell, ncols, [len(e[0]) for e in exs]

    def forward(b, L, meta, ncell, ncols, lens):
        segs, cols, rows, cid = meta
        ids = torch.randint(1, vocab, (b, L), device="cuda")
        ln = torch.tensor(lens, device="cuda")
        valid = torch.arange(L, device="cuda")[None] < ln[:, None]
        rank = torch.randint(0, 256, (b, L), device="cuda") * (cols > 0)
        x = (tok(ids) + pos(torch.arange(L, device="cuda")) + seg(segs) + colE(cols) + rowE(rows) + rankE(rank)
             + irankE(rank.flip(-1)) + prevE(torch.zeros_like(segs)))
        for blk in blocks:
            x = blk(x, valid[:, None, None, :])
        x = norm(x)
        tl = cell_w(x).float().squeeze(-1)  # (b, L) token logits
        flat = (cid + torch.arange(b, device="cuda")[:, None] * ncell).flatten()
        cnt = torch.zeros(b * ncell, device="cuda").index_add_(0, flat, valid.flatten().float())
        cell = torch.zeros(b * ncell, device="cuda").index_add_(0, flat, tl.flatten() * valid.flatten())
        cell = (cell / cnt.clamp(min=1)).view(b, ncell)
        cf = (cols + torch.arange(b, device="cuda")[:, None] * 32).flatten()
        ccnt = torch.zeros(b * 32, device="cuda").index_add_(0, cf, valid.flatten().float())
        cx = torch.zeros(b * 32, d, device="cuda").index_add_(0, cf, x.float().flatten(0, 1))
        coll = col_w(cx / ccnt.clamp(min=1)[:, None]).squeeze(-1).view(b, 32)
        absent = (torch.arange(32, device="cuda")[None] > ncols[:, None]) | (torch.arange(32, device="cuda")[None] == 0)
        coll = coll.masked_fill(absent, -1e4)
        return cell, coll, agg(x[:, 0]).float(), cnt.view(b, ncell)

    with torch.autocast("cuda", dtype=torch.bfloat16):
        for step in range(nsteps):
            for g in opt.param_groups:
                g["lr"] = 5e-5 * min(1.0, (step + 1) / 20)
            b, L, meta, ncell, ncols, lens = batch()
            cell, coll, aggl, cnt = forward(b, L, meta, ncell, ncols, lens)
            tcol = (torch.rand(b, device="cuda") * ncols).long() + 1
            lab = (torch.rand(b, ncell, device="cuda") < 0.3).float()
            # cells outside the chosen column (approximated by the cell-count pattern) weigh nothing
            w = (cnt > 0).float() * (torch.rand(b, ncell, device="cuda") < 1.0 / ncols[:, None]).float()
            loss = (f.cross_entropy(coll, tcol) + (f.binary_cross_entropy_with_logits(cell, lab, reduction="none")
                    * w).sum() / w.sum().clamp(min=1) + f.cross_entropy(aggl, torch.randint(0, 4, (b,), device="cuda")))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            del meta, ncols, cell, coll, aggl, cnt, tcol, lab, w, loss
            if (step + 1) % _smoke(50, 2) == 0:
                with torch.no_grad():
                    for _ in range(_smoke(4, 1)):
                        cell, coll, aggl, cnt = forward(*batch())
                        coll.argmax(-1).cpu()
                        (cell > 0).cpu()
                        aggl.argmax(-1).cpu()
                        del cell, coll, aggl, cnt
    torch.cuda.synchronize()

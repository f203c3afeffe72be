"""The thirty-second batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch31_b.py are): reward-model training on preference pairs of varying lengths, beam-search code completion
with growing caches and pruned beams, CycleGAN-style unpaired image-to-image translation at varying
resolutions, and ConvLSTM video prediction with varying prediction horizons. Same conventions: models built from
configs (hand-written torch here) with random weights, nothing downloaded, `rng` the workload's random.Random for
every shape, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a
tensor's value. All four are single-stream; rm_pairwise_train and code_beam_complete run under bf16 autocast,
cyclegan_varres and convlstm_video_predict in fp32 (convlstm_video_predict stays under 1 GB requested).

record.py calls `register(<its own module object>)` once, just before main(), after batch31_b's: every workload
below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it reaches
record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch32_b.py's header says the same of its half): every workload of this
half was run whole, at its real sizes (RECORD_SMOKE unset), on PyTorch's meta device (a runner like
/tmp/b32/meta_run.py, not committed: smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered
with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking its math path; boolean-mask indexing,
which the meta device cannot size, is avoided) and its op outputs counted there (events about 1.8x that count);
the counts and peaks are in record_new32.sh's header.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


class _Dec(torch.nn.Module):
    """A pre-norm causal decoder layer (GPT-style): self-attention with an optional mask and an optional KV cache
    grown by torch.cat, GELU MLP."""

    def __init__(self, d, heads):
        super().__init__()
        nn = torch.nn
        self.h = heads
        self.n1, self.qkv, self.o = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.n2, self.fc1, self.fc2 = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x, mask=None, cache=None):
        q, k, v = (t.unflatten(-1, (self.h, -1)).transpose(1, 2) for t in self.qkv(self.n1(x)).chunk(3, -1))
        if cache is not None:
            if cache[0] is not None:
                k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
            cache[0], cache[1] = k, v
        causal = mask is None and q.shape[2] == k.shape[2] and q.shape[2] > 1
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)
        x = x + self.o(a.transpose(1, 2).flatten(2))
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.n2(x))))


# ---------------------------------------------------------------- reward model on preference pairs


@_workload("RLHF reward-model training on preference pairs (InstructGPT/Anthropic-HH-style, Bradley-Terry loss) with a small GPT-style decoder written by hand (8 layers of 640, 10 heads, 32000-token vocabulary, learned positions, causal SDPA) and a scalar head read at each sequence's last real token (gathered by length); every micro-batch holds 2-6 pairs (drawn) of a shared prompt of 16-256 tokens and a chosen and a rejected response of 8-256 tokens each (drawn log-uniform per pair, sequences capped at 384), both sides right-padded to the micro-batch's longest and run as one doubled batch; loss -logsigmoid(r_chosen - r_rejected - margin) with a per-pair margin from the preference strength plus a small reward-centering term, 2 micro-batches accumulated a step, grad-norm clipping to 1, AdamW with warmup and cosine decay over 180 steps; every 40 steps an evaluation of 6 micro-batches without grad (pairwise accuracy and mean reward gap read back); bf16 autocast")
def rm_pairwise_train(rng):
    nn, f = torch.nn, torch.nn.functional
    d, heads, nl, vocab = _smoke(640, 32), _smoke(10, 2), _smoke(8, 1), _smoke(32000, 300)
    nsteps = _smoke(180, 2)
    tok, pos = nn.Embedding(vocab, d), nn.Embedding(384, d)
    blocks = nn.ModuleList(_Dec(d, heads) for _ in range(nl))
    norm, head = nn.LayerNorm(d), nn.Linear(d, 1)
    model = nn.ModuleList([tok, pos, blocks, norm, head]).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, weight_decay=0.01)
    cap = _smoke(384, 24)

    def draw_pairs():
        b = rng.randint(2, _smoke(6, 2))
        rows, margins = [], []
        for _ in range(b):
            p = _loguniform(rng, _smoke(16, 2), _smoke(256, 8))
            c = min(_loguniform(rng, _smoke(8, 2), _smoke(256, 8)), cap - p)
            r = min(_loguniform(rng, _smoke(8, 2), _smoke(256, 8)), cap - p)
            rows.append((p, c, r))
            margins.append(rng.choice([0.0, 0.0, 0.5, 1.0]))
        return rows, margins

    def rewards(rows):
        b = len(rows)
        lens = [p + c for p, c, _ in rows] + [p + r for p, _, r in rows]
        L = max(lens)
        ids = torch.randint(1, vocab, (2 * b, L), device="cuda")
        prompt = ids[:b, :max(p for p, _, _ in rows)]
        ids[b:, :prompt.shape[1]] = prompt  # the rejected side shares the prompt
        ln = torch.tensor(lens, device="cuda")
        ids = ids.masked_fill(torch.arange(L, device="cuda")[None] >= ln[:, None], 0)
        x = tok(ids) + pos(torch.arange(L, device="cuda"))
        for blk in blocks:
            x = blk(x)
        last = x.gather(1, (ln - 1)[:, None, None].expand(2 * b, 1, d)).squeeze(1)
        r = head(norm(last)).float().squeeze(-1)
        return r[:b], r[b:]

    with torch.autocast("cuda", dtype=torch.bfloat16):
        for step in range(nsteps):
            lr = 1e-5 * min(1.0, (step + 1) / 10) * 0.5 * (1 + math.cos(math.pi * step / nsteps))
            for g in opt.param_groups:
                g["lr"] = lr
            for _ in range(2):
                rows, margins = draw_pairs()
                rc, rr = rewards(rows)
                m = torch.tensor(margins, device="cuda")
                loss = -f.logsigmoid(rc - rr - m).mean() + 0.01 * (rc + rr).pow(2).mean()
                (loss / 2).backward()
                del rc, rr, m, loss
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            if (step + 1) % _smoke(40, 2) == 0:
                with torch.no_grad():
                    accs, gaps = [], []
                    for _ in range(_smoke(6, 1)):
                        rc, rr = rewards(draw_pairs()[0])
                        accs.append((rc > rr).float().mean())
                        gaps.append((rc - rr).mean())
                        del rc, rr
                    torch.stack(accs + gaps).tolist()
                    del accs, gaps
    torch.cuda.synchronize()


# ---------------------------------------------------------------- beam-search code completion


@_workload("code-completion serving with beam search (no speculative decoding), a CodeGen/SantaCoder-style decoder written by hand (10 layers of 640, 10 heads, 49152-token code vocabulary, learned positions): request batches of 1-3 files (drawn) with left contexts of 48-1024 tokens (drawn log-uniform), left-padded with a key-padding mask, prefilled once and the per-layer KV caches expanded to 3-8 beams a request (drawn per batch); each step log-softmax scores added to the beams' running scores, top-k over beams x vocabulary per request, the caches, masks and token histories reordered by index_select on the beams' origins and grown by torch.cat; beams pruned as hypotheses finish (at drawn steps the beam width shrinks by one, the finished hypothesis with its length-penalized score moved to a finished list), 16-96 new tokens per batch (drawn), the best hypothesis per request chosen over the finished and live ones and read back; 18 batches, bf16 autocast, no grad")
def code_beam_complete(rng):
    nn, f = torch.nn, torch.nn.functional
    d, heads, nl, vocab = _smoke(640, 32), _smoke(10, 2), _smoke(10, 1), _smoke(49152, 300)
    nbatches = _smoke(18, 2)
    tok, pos = nn.Embedding(vocab, d), nn.Embedding(1200, d)
    blocks = nn.ModuleList(_Dec(d, heads) for _ in range(nl))
    norm = nn.LayerNorm(d)
    model = nn.ModuleList([tok, pos, blocks, norm]).cuda().eval()

    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        for _ in range(nbatches):
            nreq = rng.randint(1, _smoke(3, 2))
            k = rng.randint(3, _smoke(8, 3))
            lens = [_loguniform(rng, _smoke(48, 3), _smoke(1024, 12)) for _ in range(nreq)]
            gen = rng.randint(_smoke(16, 3), _smoke(96, 6))
            L = max(lens)
            ids = torch.randint(1, vocab, (nreq, L), device="cuda")
            start = torch.tensor([L - n for n in lens], device="cuda")
            valid = torch.arange(L, device="cuda")[None] >= start[:, None]  # (R, L), left padding
            causal = torch.ones(L, L, dtype=torch.bool, device="cuda").tril()
            mask = (causal[None] & valid[:, None, :])[:, None] | ~valid[:, None, :, None]
            posn = (torch.arange(L, device="cuda")[None] - start[:, None]).clamp(min=0)
            x = tok(ids) + pos(posn)
            caches = [[None, None] for _ in blocks]
            for blk, cache in zip(blocks, caches):
                x = blk(x, mask=mask, cache=cache)
            logp = f.linear(norm(x[:, -1]), tok.weight).float().log_softmax(-1)  # (R, V)
            del x, mask, causal
            # the first expansion: each request's top-k tokens start its k beams
            scores, nxt = logp.topk(k, -1)  # (R, k)
            scores, nxt = scores.flatten(), nxt.flatten()[:, None]
            rows = torch.arange(nreq, device="cuda").repeat_interleave(k)
            for cache in caches:
                cache[0], cache[1] = cache[0].index_select(0, rows), cache[1].index_select(0, rows)
            kmask = valid.index_select(0, rows)[:, None, None, :]
            hist = nxt
            p = posn[:, -1:].index_select(0, rows) + 1
            finished = []
            width = k
            for step in range(gen - 1):
                kmask = torch.cat([kmask, torch.ones(nreq * width, 1, 1, 1, dtype=torch.bool, device="cuda")], -1)
                y = tok(nxt) + pos(p.clamp(max=1199))
                for blk, cache in zip(blocks, caches):
                    y = blk(y, mask=kmask, cache=cache)
                logp = f.linear(norm(y[:, -1]), tok.weight).float().log_softmax(-1)  # (R*w, V)
                cand = (scores[:, None] + logp).view(nreq, width * logp.shape[-1])
                new_width = width - 1 if width > 1 and rng.random() < 0.08 else width
                if new_width < width:  # a hypothesis finished: the best one leaves with its penalized score
                    fs, fi = cand.max(-1)
                    finished.append((fs / (step + 2) ** 1.0, fi))
                top_s, top_i = cand.topk(new_width, -1)  # (R, w')
                origin = (top_i // logp.shape[-1]) + torch.arange(nreq, device="cuda")[:, None] * width
                origin = origin.flatten()
                nxt = (top_i % logp.shape[-1]).flatten()[:, None]
                scores = top_s.flatten()
                for cache in caches:
                    cache[0], cache[1] = cache[0].index_select(0, origin), cache[1].index_select(0, origin)
                kmask = kmask.index_select(0, origin)
                hist = torch.cat([hist.index_select(0, origin), nxt], 1)
                p = p.index_select(0, origin) + 1
                width = new_width
                del logp, cand, top_s, top_i, origin
            live = (scores / gen).view(nreq, width)
            best = torch.cat([live] + [s[:, None] for s, _ in finished], 1).max(-1)
            bi = best.indices.clamp(max=width - 1) + torch.arange(nreq, device="cuda") * width
            out = hist.index_select(0, bi)
            out.cpu()
            best.values.tolist()
            del ids, start, valid, posn, caches, scores, nxt, rows, kmask, hist, p, finished, live, best, bi, out
    torch.cuda.synchronize()


# ---------------------------------------------------------------- CycleGAN at varying resolutions


class _ResG(torch.nn.Module):
    """CycleGAN's ResNet generator: c7s1-64, d128, d256, n residual blocks, u128, u64, c7s1-3 (instance norm,
    reflection padding, tanh)."""

    def __init__(self, ng, nres):
        super().__init__()
        nn = torch.nn

        def cbr(cin, cout, kk, s=1, p=0):
            return [nn.Conv2d(cin, cout, kk, s, p), nn.InstanceNorm2d(cout, affine=True), nn.ReLU(True)]

        self.stem = nn.Sequential(nn.ReflectionPad2d(3), *cbr(3, ng, 7), *cbr(ng, 2 * ng, 3, 2, 1),
                                  *cbr(2 * ng, 4 * ng, 3, 2, 1))
        self.res = nn.ModuleList(nn.Sequential(nn.ReflectionPad2d(1), *cbr(4 * ng, 4 * ng, 3), nn.ReflectionPad2d(1),
                                               nn.Conv2d(4 * ng, 4 * ng, 3), nn.InstanceNorm2d(4 * ng, affine=True))
                                 for _ in range(nres))
        self.up = nn.Sequential(
            nn.ConvTranspose2d(4 * ng, 2 * ng, 3, 2, 1, output_padding=1), nn.InstanceNorm2d(2 * ng, affine=True),
            nn.ReLU(True), nn.ConvTranspose2d(2 * ng, ng, 3, 2, 1, output_padding=1),
            nn.InstanceNorm2d(ng, affine=True), nn.ReLU(True), nn.ReflectionPad2d(3), nn.Conv2d(ng, 3, 7), nn.Tanh())

    def forward(self, x):
        h = self.stem(x)
        for blk in self.res:
            h = h + blk(h)
        return self.up(h)


def _patch_d(nd):
    """The 70x70 PatchGAN discriminator: C64-C128-C256-C512, LeakyReLU 0.2, instance norm after the first."""
    nn = torch.nn
    layers, cin = [nn.Conv2d(3, nd, 4, 2, 1), nn.LeakyReLU(0.2, True)], nd
    for i, s in enumerate((2, 2, 1)):
        layers += [nn.Conv2d(cin, cin * 2, 4, s, 1), nn.InstanceNorm2d(cin * 2, affine=True), nn.LeakyReLU(0.2, True)]
        cin *= 2
    return nn.Sequential(*layers, nn.Conv2d(cin, 1, 4, 1, 1))


@_workload("unpaired image-to-image translation training, CycleGAN (Zhu et al. 2017) written by hand: two ResNet generators (c7s1-64, two stride-2 downsamplings, 6 residual blocks at 256 channels, two transposed-conv upsamplings, instance norm, reflection padding) and two 70x70 PatchGAN discriminators; every step a crop size of 128, 192 or 256 px (drawn) and a batch of 1-4 (drawn, fewer at the larger crops) from each domain; the generator step runs both cycles and both identity mappings (LSGAN adversarial losses, L1 cycle loss x10, identity x5) with one backward; the discriminator step scores real images against fakes drawn from a 50-image history pool per domain (a python list of detached fakes, half the time a stored fake returned and replaced, stored fakes of another size resized by bilinear interpolation); Adam (lr 2e-4, betas 0.5/0.999) for both, linear lr decay over the second half; every 30 steps a translation of 4 validation images at 256 px without grad, read back as uint8; fp32")
def cyclegan_varres(rng):
    nn, f = torch.nn, torch.nn.functional
    ng, nres = _smoke(64, 8), _smoke(6, 1)
    nsteps = _smoke(105, 2)
    g_ab, g_ba, d_a, d_b = _ResG(ng, nres), _ResG(ng, nres), _patch_d(ng), _patch_d(ng)
    gens, discs = nn.ModuleList([g_ab, g_ba]).cuda(), nn.ModuleList([d_a, d_b]).cuda()
    opt_g = torch.optim.Adam(gens.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(discs.parameters(), lr=2e-4, betas=(0.5, 0.999))
    pools = [[], []]

    def query(pool, fakes, r):
        out = []
        for i in range(fakes.shape[0]):
            im = fakes[i:i + 1].detach()
            if len(pool) < 50:
                pool.append(im)
                out.append(im)
            elif rng.random() < 0.5:
                j = rng.randrange(50)
                old = pool[j]
                pool[j] = im
                out.append(old if old.shape[-1] == r else f.interpolate(old, size=(r, r), mode="bilinear"))
            else:
                out.append(im)
        return torch.cat(out)

    def lsgan(pred, target):
        return (pred - target).pow(2).mean()

    for step in range(nsteps):
        lr = 2e-4 * min(1.0, 2.0 * (1 - step / nsteps))
        for o in (opt_g, opt_d):
            for g in o.param_groups:
                g["lr"] = lr
        r = rng.choice([128, 192, 256]) if _smoke(1, 0) else 32
        b = rng.randint(1, {128: 4, 192: 2, 256: 2}.get(r, 2))
        real_a = torch.rand(b, 3, r, r, device="cuda") * 2 - 1
        real_b = torch.rand(b, 3, r, r, device="cuda") * 2 - 1
        # generators
        for p in discs.parameters():
            p.requires_grad_(False)
        fake_b, fake_a = g_ab(real_a), g_ba(real_b)
        rec_a, rec_b = g_ba(fake_b), g_ab(fake_a)
        idt_a, idt_b = g_ba(real_a), g_ab(real_b)
        loss_g = (lsgan(d_b(fake_b), 1.0) + lsgan(d_a(fake_a), 1.0)
                  + 10 * ((rec_a - real_a).abs().mean() + (rec_b - real_b).abs().mean())
                  + 5 * ((idt_a - real_a).abs().mean() + (idt_b - real_b).abs().mean()))
        opt_g.zero_grad(set_to_none=True)
        loss_g.backward()
        opt_g.step()
        del rec_a, rec_b, idt_a, idt_b, loss_g
        # discriminators
        for p in discs.parameters():
            p.requires_grad_(True)
        pf_b, pf_a = query(pools[1], fake_b, r), query(pools[0], fake_a, r)
        loss_d = 0.5 * (lsgan(d_b(real_b), 1.0) + lsgan(d_b(pf_b), 0.0)) + \
            0.5 * (lsgan(d_a(real_a), 1.0) + lsgan(d_a(pf_a), 0.0))
        opt_d.zero_grad(set_to_none=True)
        loss_d.backward()
        opt_d.step()
        del real_a, real_b, fake_a, fake_b, pf_a, pf_b, loss_d
        if (step + 1) % _smoke(30, 2) == 0:
            with torch.no_grad():
                v = torch.rand(4, 3, _smoke(256, 32), _smoke(256, 32), device="cuda") * 2 - 1
                out = g_ab(v)
                ((out.clamp(-1, 1) + 1) * 127.5).to(torch.uint8).cpu()
                del v, out
    torch.cuda.synchronize()


# ---------------------------------------------------------------- ConvLSTM video prediction


class _ConvLSTMCell(torch.nn.Module):
    """A ConvLSTM cell (Shi et al. 2015): one conv over [input, hidden] gives the four gates."""

    def __init__(self, cin, hid, k):
        super().__init__()
        self.hid = hid
        self.conv = torch.nn.Conv2d(cin + hid, 4 * hid, k, padding=k // 2)
        self.norm = torch.nn.GroupNorm(4, 4 * hid)

    def forward(self, x, h, c):
        i, fg, g, o = self.norm(self.conv(torch.cat([x, h], 1))).chunk(4, 1)
        c = torch.sigmoid(fg) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


@_workload("video prediction training with a stacked ConvLSTM (Shi et al. 2015, trained the PredRNN way) written by hand on Moving-MNIST-like 64x64 sequences: frames folded 4x4 into 16-channel 16x16 patches, three ConvLSTM layers of 64 hidden channels (5x5 gate convs with GroupNorm), a 1x1 output conv; every step a batch of 8-14 sequences (drawn) with 5-10 context frames and a prediction horizon of 5-20 frames (both drawn), the recurrence unrolled over all of them with reverse scheduled sampling (each sequence's input frame chosen between the ground truth and the model's previous prediction by a random per-sequence mask whose probability decays over training); MSE + L1 loss over the predicted frames, Adam with grad clipping; every 25 steps a validation rollout of 16 sequences with 10 context frames and a 20-frame horizon without grad (per-horizon MSE read back); fp32, under 1 GB")
def convlstm_video_predict(rng):
    nn, f = torch.nn, torch.nn.functional
    hid, ps, res = _smoke(64, 8), 4, _smoke(64, 16)
    nsteps = _smoke(135, 2)
    cp = ps * ps
    cells = nn.ModuleList([_ConvLSTMCell(cp, hid, 5), _ConvLSTMCell(hid, hid, 5), _ConvLSTMCell(hid, hid, 5)])
    out_conv = nn.Conv2d(hid, cp, 1)
    model = nn.ModuleList([cells, out_conv]).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    s = res // ps

    def rollout(frames, tin, tout, p_true):
        b = frames.shape[0]
        hs = [torch.zeros(b, hid, s, s, device="cuda") for _ in cells]
        cs = [torch.zeros(b, hid, s, s, device="cuda") for _ in cells]
        preds, prev = [], None
        for t in range(tin + tout - 1):
            x = frames[:, t]
            if t >= tin and prev is not None:
                if p_true > 0:
                    m = (torch.rand(b, 1, 1, 1, device="cuda") < p_true).float()
                    x = m * x + (1 - m) * prev
                else:
                    x = prev
            for li, cell in enumerate(cells):
                hs[li], cs[li] = cell(x if li == 0 else hs[li - 1], hs[li], cs[li])
            prev = torch.sigmoid(out_conv(hs[-1]))
            if t >= tin - 1:
                preds.append(prev)
        return torch.stack(preds, 1)  # (B, tout, cp, s, s)

    def batch(b, t):
        v = torch.rand(b, t, 1, res, res, device="cuda")
        return v.view(b, t, 1, s, ps, s, ps).permute(0, 1, 2, 4, 6, 3, 5).reshape(b, t, cp, s, s)

    for step in range(nsteps):
        b = rng.randint(_smoke(8, 2), _smoke(14, 3))
        tin, tout = rng.randint(5, 10) if _smoke(1, 0) else 2, rng.randint(_smoke(5, 2), _smoke(20, 3))
        frames = batch(b, tin + tout)
        p_true = max(0.0, 1.0 - step / (0.7 * nsteps))
        pred = rollout(frames, tin, tout, p_true)
        tgt = frames[:, tin:]
        loss = f.mse_loss(pred, tgt) + f.l1_loss(pred, tgt)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        del frames, pred, tgt, loss
        if (step + 1) % _smoke(25, 2) == 0:
            with torch.no_grad():
                tin_v, tout_v = _smoke(10, 2), _smoke(20, 3)
                fr = batch(_smoke(16, 2), tin_v + tout_v)
                pv = rollout(fr, tin_v, tout_v, 0.0)
                (pv - fr[:, tin_v:]).pow(2).mean((0, 2, 3, 4)).tolist()
                del fr, pv
    torch.cuda.synchronize()

"""The thirtieth batch's second half (batch30.py holds the first; written in two to keep files small): a
text-to-image latent-diffusion server with classifier-free guidance and variable step counts, video-text
retrieval evaluation with growing gallery embeddings and clips uploaded on a side stream, VALL-E-style TTS
generation over codec tokens with a batch that shrinks as utterances finish, and a Fusion-in-Decoder reader
serving questions with variable passage counts. Same conventions and plumbing as batch30.py; record.py registers
this module right after it, so that the batch's workloads keep their order. Three are single-stream;
vt_retrieval_gallery uploads every shard's frames from reused pinned host buffers on a side stream (the compute
stream waiting on the shard's event, the uploaded tensor record_stream'ed). All four run under bf16 autocast.

Real sizes checked as batch30.py's header says: every workload run whole at its real sizes on the meta device,
its op outputs counted there for the estimates in record_new30.sh's header.
"""

import math

import torch

from batch_common import Batch, upload

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


class _Blk(torch.nn.Module):
    """A pre-norm transformer layer: self-attention (optionally causal, optionally with a growing KV cache),
    optional cross-attention over a context (its keys and values passable precomputed), GELU MLP."""

    def __init__(self, d, heads, cross=False, dctx=None):
        super().__init__()
        nn = torch.nn
        self.h = heads
        self.n1, self.qkv, self.o = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        if cross:
            self.n2, self.q = nn.LayerNorm(d), nn.Linear(d, d)
            self.kv, self.o2 = nn.Linear(dctx or d, 2 * d), nn.Linear(d, d)
        self.n3, self.fc1, self.fc2 = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def split(self, t):
        return t.unflatten(-1, (self.h, -1)).transpose(1, 2)

    def ctx_kv(self, ctx):
        return [self.split(t) for t in self.kv(ctx).chunk(2, -1)]

    def forward(self, x, mask=None, causal=False, cache=None, ctx=None, ctx_kv=None, ctx_mask=None, bias=None):
        sdpa = torch.nn.functional.scaled_dot_product_attention
        q, k, v = (self.split(t) for t in self.qkv(self.n1(x)).chunk(3, -1))
        if cache is not None:
            if cache[0] is not None:
                k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
            cache[0], cache[1] = k, v
        if bias is not None:
            mask = bias if mask is None else bias + mask
        is_causal = causal and mask is None and q.shape[2] == k.shape[2] and q.shape[2] > 1
        a = sdpa(q, k, v, attn_mask=mask, is_causal=is_causal)
        x = x + self.o(a.transpose(1, 2).flatten(2))
        if ctx is not None and ctx_kv is None:
            ctx_kv = self.ctx_kv(ctx)
        if ctx_kv is not None:
            a = sdpa(self.split(self.q(self.n2(x))), ctx_kv[0], ctx_kv[1], attn_mask=ctx_mask)
            x = x + self.o2(a.transpose(1, 2).flatten(2))
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.n3(x))))


# ---------------------------------------------------------------- text-to-image latent sampler with CFG


class _LRes(torch.nn.Module):
    """A latent-UNet residual block: GroupNorm, SiLU, 3x3 conv, the timestep embedding added, again, a skip."""

    def __init__(self, cin, cout, temb):
        super().__init__()
        nn = torch.nn
        self.n1, self.c1 = nn.GroupNorm(32, cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.t = nn.Linear(temb, cout)
        self.n2, self.c2 = nn.GroupNorm(32, cout), nn.Conv2d(cout, cout, 3, padding=1)
        self.sk = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, te):
        silu = torch.nn.functional.silu
        h = self.c1(silu(self.n1(x))) + self.t(te)[:, :, None, None]
        return self.sk(x) + self.c2(silu(self.n2(h)))


class _LAttn(torch.nn.Module):
    """A spatial transformer: GroupNorm, proj in, one self+cross-attention layer over the text, proj out."""

    def __init__(self, c, heads, dctx):
        super().__init__()
        self.n, self.pin, self.pout = torch.nn.GroupNorm(32, c), torch.nn.Conv2d(c, c, 1), torch.nn.Conv2d(c, c, 1)
        self.blk = _Blk(c, heads, cross=True, dctx=dctx)

    def forward(self, x, ctx):
        b, c, h, w = x.shape
        t = self.pin(self.n(x)).flatten(2).transpose(1, 2)
        t = self.blk(t, ctx=ctx)
        return x + self.pout(t.transpose(1, 2).reshape(b, c, h, w))


@_workload("text-to-image serving with a latent-diffusion sampler (Stable-Diffusion-style, written by hand and small, under 1 GB): a CLIP-style causal text encoder (6 layers of 512, 77-token prompts, the empty-prompt embedding for the unconditional branch computed once and kept), a latent UNet (channels 128/256/384, residual blocks with GroupNorm and timestep embeddings, spatial transformers with self- and cross-attention at 1/2 and 1/4 scale, skip concatenation); 21 requests served one after another, each of 1-4 images at 256, 384 or 512 px (32-64 latent), 12-50 DDIM steps and a guidance scale of 3-9 (drawn per request), classifier-free guidance by running the conditional and unconditional halves as one doubled batch; the latents then decoded by a VAE-style conv decoder (three 2x nearest upsamplings, 256 to 64 channels) and converted to uint8 and read back; bf16 autocast, no grad")
def t2i_cfg_serve(rng):
    nn, f = torch.nn, torch.nn.functional
    dt, heads, vocab = _smoke(512, 32), _smoke(8, 2), _smoke(49408, 300)
    ch = [_smoke(128, 32), _smoke(256, 32), _smoke(384, 64)]
    temb = _smoke(512, 32)
    tok, tpos = nn.Embedding(vocab, dt), nn.Parameter(torch.randn(77, dt, device="cuda") * 0.01)
    tenc = nn.ModuleList(_Blk(dt, heads) for _ in range(_smoke(6, 1)))
    tnorm = nn.LayerNorm(dt)
    tmlp = nn.Sequential(nn.Linear(ch[0], temb), nn.SiLU(), nn.Linear(temb, temb))
    cin = nn.Conv2d(4, ch[0], 3, padding=1)
    down_r = nn.ModuleList([_LRes(ch[0], ch[0], temb), _LRes(ch[0], ch[1], temb), _LRes(ch[1], ch[2], temb)])
    down_a = nn.ModuleList([nn.Identity(), _LAttn(ch[1], heads, dt), _LAttn(ch[2], heads, dt)])
    downs = nn.ModuleList([nn.Conv2d(ch[0], ch[0], 3, 2, 1), nn.Conv2d(ch[1], ch[1], 3, 2, 1)])
    mid_r1, mid_a, mid_r2 = _LRes(ch[2], ch[2], temb), _LAttn(ch[2], heads, dt), _LRes(ch[2], ch[2], temb)
    up_r = nn.ModuleList([_LRes(2 * ch[2], ch[1], temb), _LRes(2 * ch[1], ch[0], temb), _LRes(2 * ch[0], ch[0], temb)])
    up_a = nn.ModuleList([_LAttn(ch[1], heads, dt), _LAttn(ch[0], heads, dt), nn.Identity()])
    ups = nn.ModuleList([nn.Conv2d(ch[1], ch[1], 3, padding=1), nn.Conv2d(ch[0], ch[0], 3, padding=1)])
    cout = nn.Sequential(nn.GroupNorm(32, ch[0]), nn.SiLU(), nn.Conv2d(ch[0], 4, 3, padding=1))
    vc = [_smoke(256, 32), _smoke(128, 32), _smoke(64, 32)]
    vae = nn.Sequential(
        nn.Conv2d(4, vc[0], 3, padding=1), nn.SiLU(), nn.Conv2d(vc[0], vc[0], 3, padding=1), nn.SiLU(),
        nn.Upsample(scale_factor=2), nn.Conv2d(vc[0], vc[1], 3, padding=1), nn.SiLU(),
        nn.Upsample(scale_factor=2), nn.Conv2d(vc[1], vc[2], 3, padding=1), nn.SiLU(),
        nn.Upsample(scale_factor=2), nn.Conv2d(vc[2], vc[2], 3, padding=1), nn.GroupNorm(32, vc[2]), nn.SiLU(),
        nn.Conv2d(vc[2], 3, 3, padding=1))
    model = nn.ModuleList([tok, tenc, tnorm, tmlp, cin, down_r, down_a, downs, mid_r1, mid_a, mid_r2, up_r, up_a,
                           ups, cout, vae]).cuda().eval()
    betas = [(0.00085 ** 0.5 + (0.012 ** 0.5 - 0.00085 ** 0.5) * i / 999) ** 2 for i in range(1000)]
    acp, a = [], 1.0
    for bt in betas:
        a *= 1 - bt
        acp.append(a)
    causal = torch.full((77, 77), float("-inf"), device="cuda").triu(1)

    def encode_text(ids):
        x = tok(ids) + tpos
        for blk in tenc:
            x = blk(x, mask=causal)
        return tnorm(x)

    def unet(x, t, ctx):
        half = ch[0] // 2
        freqs = torch.exp(-math.log(10000) * torch.arange(half, device="cuda") / half)
        te = tmlp(torch.cat([torch.cos(t[:, None] * freqs), torch.sin(t[:, None] * freqs)], -1))
        h = cin(x)
        skips = []
        for i in range(3):
            h = down_r[i](h, te)
            if i > 0:
                h = down_a[i](h, ctx)
            skips.append(h)
            if i < 2:
                h = downs[i](h)
        h = mid_r2(mid_a(mid_r1(h, te), ctx), te)
        for i in range(3):
            h = up_r[i](torch.cat([h, skips.pop()], 1), te)
            if i < 2:
                h = up_a[i](h, ctx)
                h = ups[i](f.interpolate(h, scale_factor=2.0, mode="nearest"))
        return cout(h)

    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        empty = torch.zeros(1, 77, dtype=torch.long, device="cuda")
        uncond = encode_text(empty)
        for _ in range(_smoke(21, 2)):
            b = rng.randint(1, _smoke(4, 2))
            r = rng.choice([32, 48, 64]) if _smoke(1, 0) else 8
            nsteps = rng.randint(_smoke(12, 2), _smoke(50, 3))
            scale = rng.uniform(3.0, 9.0)
            lens = [rng.randint(5, 77) for _ in range(b)]
            ids = torch.randint(1, vocab, (b, 77), device="cuda")
            pad = torch.arange(77, device="cuda")[None] >= torch.tensor(lens, device="cuda")[:, None]
            ids = ids.masked_fill(pad, 0)
            ctx = torch.cat([encode_text(ids), uncond.expand(b, -1, -1)])
            x = torch.randn(b, 4, r, r, device="cuda")
            ts = [999 - i * (1000 // nsteps) for i in range(nsteps)]
            for i, t in enumerate(ts):
                tt = torch.full((2 * b,), float(t), device="cuda")
                eps_c, eps_u = unet(torch.cat([x, x]), tt, ctx).float().chunk(2)
                eps = eps_u + scale * (eps_c - eps_u)
                a_t = acp[t]
                a_p = acp[ts[i + 1]] if i + 1 < nsteps else 1.0
                x0 = (x - math.sqrt(1 - a_t) * eps) / math.sqrt(a_t)
                x = math.sqrt(a_p) * x0 + math.sqrt(1 - a_p) * eps
                del tt, eps_c, eps_u, eps, x0
            img = vae(x / 0.18215).float()
            img = ((img.clamp(-1, 1) + 1) * 127.5).to(torch.uint8)
            img.cpu()
            del ids, pad, ctx, x, img
    torch.cuda.synchronize()


# ---------------------------------------------------------------- video-text retrieval evaluation, growing gallery


@_workload("video-text retrieval evaluation (CLIP4Clip-style, MSR-VTT-like, written by hand): the gallery arrives in 330 shards of 8-24 clips (drawn) with 4, 8 or 12 frames each (drawn per shard) at 224 px, decoded into two reused pinned uint8 host buffers and uploaded on a side stream while the previous shard is encoded (the compute stream waits on the shard's event, the upload record_stream'ed), normalized on the device; a ViT-B/32-style frame encoder (12 layers of 512, 50 tokens a frame), a 4-layer temporal transformer over the frames' class tokens, mean pooling and a projection to 256; 5 captions a clip of 6-40 tokens (drawn each) through a 12-layer causal text encoder (512 wide, key-padding mask, the end-of-text token gathered); L2-normalized video and text embeddings appended to the galleries by torch.cat every shard; every 60 shards and at the end a text-to-video and video-to-text evaluation over the whole gallery so far in query chunks of 4096 (similarity chunk, dual-softmax re-ranking against the gallery's column statistics, the ground-truth rank by comparison counts, recall@1/5/10 and median rank read back); bf16 autocast, no grad")
def vt_retrieval_gallery(rng):
    nn, f = torch.nn, torch.nn.functional
    d, heads, nl, emb, vocab = _smoke(512, 32), _smoke(8, 2), _smoke(12, 1), _smoke(256, 16), _smoke(49408, 300)
    res, ps = _smoke(224, 32), 32
    npatch = (res // ps) ** 2
    patch = nn.Conv2d(3, d, ps, ps, bias=False)
    cls = nn.Parameter(torch.randn(d, device="cuda") * 0.02)
    vpos = nn.Parameter(torch.randn(npatch + 1, d, device="cuda") * 0.02)
    vblocks = nn.ModuleList(_Blk(d, heads) for _ in range(nl))
    vnorm = nn.LayerNorm(d)
    tpos_v = nn.Parameter(torch.randn(12, d, device="cuda") * 0.02)
    temporal = nn.ModuleList(_Blk(d, heads) for _ in range(_smoke(4, 1)))
    vproj = nn.Linear(d, emb, bias=False)
    tok, tpos = nn.Embedding(vocab, d), nn.Parameter(torch.randn(40, d, device="cuda") * 0.02)
    tblocks = nn.ModuleList(_Blk(d, heads) for _ in range(nl))
    tnorm, tproj = nn.LayerNorm(d), nn.Linear(d, emb, bias=False)
    model = nn.ModuleList([patch, vblocks, vnorm, temporal, vproj, tok, tblocks, tnorm, tproj]).cuda().eval()
    mean = torch.tensor([0.481, 0.458, 0.408], device="cuda")[:, None, None]
    std = torch.tensor([0.269, 0.261, 0.276], device="cuda")[:, None, None]
    bmax, tmax = _smoke(24, 3), _smoke(12, 4)
    hosts = [torch.randint(0, 256, (bmax, tmax, 3, res, res), dtype=torch.uint8).pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    nshards = _smoke(330, 3)

    def draw():
        return rng.randint(_smoke(8, 1), bmax), rng.choice([4, 8, 12]) if _smoke(1, 0) else 4

    def stage(k, b, t):
        """The decode step: the shard's first clip written into host buffer k (the rest reused as decoded before)."""
        hosts[k][0, :t].random_(0, 256)
        with torch.cuda.stream(side):
            x = upload(hosts[k][:b, :t])
            ev = side.record_event()
        return x, ev, b, t

    def encode_video(frames):  # (B, T, 3, H, W) uint8
        b, t = frames.shape[:2]
        x = ((frames.flatten(0, 1).float() / 255 - mean) / std)
        x = patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([cls.expand(b * t, 1, d).to(x.dtype), x], 1) + vpos
        for blk in vblocks:
            x = blk(x)
        x = vnorm(x[:, 0]).view(b, t, d) + tpos_v[:t]
        for blk in temporal:
            x = blk(x)
        return f.normalize(vproj(x.mean(1)).float(), dim=-1)

    def encode_text(lens):
        n, s = len(lens), max(lens)
        ids = torch.randint(1, vocab, (n, s), device="cuda")
        ln = torch.tensor(lens, device="cuda")
        ar = torch.arange(s, device="cuda")
        keep = (ar[None, :] <= ar[:, None])[None] & (ar[None, :] < ln[:, None])[:, None]  # causal and unpadded
        mask = keep[:, None]
        x = tok(ids) + tpos[:s]
        for blk in tblocks:
            x = blk(x, mask=mask)
        eot = x.gather(1, (ln - 1)[:, None, None].expand(n, 1, d)).squeeze(1)
        return f.normalize(tproj(tnorm(eot)).float(), dim=-1)

    def evaluate(vg, tg):
        nv, nt = vg.shape[0], tg.shape[0]
        gt = torch.arange(nt, device="cuda") // 5
        # column statistics for dual-softmax: the softmax denominator of every video over all captions
        col = torch.zeros(nv, device="cuda")
        for s in range(0, nt, 4096):
            col += torch.exp(100 * (tg[s:s + 4096] @ vg.T - 1)).sum(0)
        ranks = []
        for s in range(0, nt, 4096):
            sim = tg[s:s + 4096] @ vg.T
            ds = sim * torch.softmax(sim * 100, 1) * (torch.exp(100 * (sim - 1)) / col[None])
            g = ds.gather(1, gt[s:s + 4096, None])
            ranks.append((ds > g).sum(1))
            del sim, ds, g
        r = torch.cat(ranks).float()
        vt_sim = vg @ tg[::5].T  # video-to-text against each clip's first caption
        vr = (vt_sim > vt_sim.diagonal()[:, None]).sum(1).float()
        torch.stack([(r < 1).float().mean(), (r < 5).float().mean(), (r < 10).float().mean(), r.median(),
                     (vr < 1).float().mean(), (vr < 5).float().mean()]).tolist()
        del col, ranks, r, vt_sim, vr, gt

    vgal = tgal = None
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        nxt = stage(0, *draw())
        for shard in range(nshards):
            frames, ev, b, t = nxt
            torch.cuda.current_stream().wait_event(ev)
            frames.record_stream(torch.cuda.current_stream())
            if shard + 1 < nshards:
                nxt = stage((shard + 1) % 2, *draw())
            v = encode_video(frames)
            tx = encode_text([rng.randint(6, _smoke(40, 8)) for _ in range(5 * b)])
            vgal = v if vgal is None else torch.cat([vgal, v])
            tgal = tx if tgal is None else torch.cat([tgal, tx])
            del frames, v, tx
            if (shard + 1) % _smoke(60, 2) == 0 or shard + 1 == nshards:
                evaluate(vgal, tgal)
    torch.cuda.synchronize()


# ---------------------------------------------------------------- VALL-E-style TTS over codec tokens


@_workload("zero-shot TTS generation, VALL-E-style (Wang et al. 2023) written by hand: batches of 4-12 requests (drawn), each with a phoneme prompt of 20-150 tokens and a 3 s acoustic prompt (225 frames of 8 codebooks of 1024 at 75 Hz, embeddings summed), left-padded to the batch's longest prefix with a key-padding mask; an autoregressive decoder (8 layers of 512, 8 heads) generates the first codebook with per-layer KV caches grown by torch.cat, top-k 50 sampling at temperature 1; every utterance has its own length (1-3.5 s, drawn, standing in for its end token) and the batch is compacted (index_select of the caches, masks and tokens) whenever utterances finish; then a non-autoregressive decoder (8 layers, full attention, codebook-id embedding) fills codebooks 2-8 one pass each, and an EnCodec-style conv decoder (transposed convs of strides 8, 5, 4, 2 with residual units, ELU) renders 24 kHz waveforms that are read back; 5 batches, bf16 autocast, no grad")
def valle_tts_generate(rng):
    nn, f = torch.nn, torch.nn.functional
    d, heads, nl, ncb, cbs = _smoke(512, 32), _smoke(8, 2), _smoke(8, 1), 8, 1024
    nphon, fps = 512, 75
    phon = nn.Embedding(nphon, d)
    cb_emb = nn.ModuleList(nn.Embedding(cbs + 1, d) for _ in range(ncb))  # +1: the end token of the first codebook
    pos = nn.Embedding(2048, d)
    ar = nn.ModuleList(_Blk(d, heads) for _ in range(nl))
    ar_norm, ar_head = nn.LayerNorm(d), nn.Linear(d, cbs + 1)
    nar = nn.ModuleList(_Blk(d, heads) for _ in range(nl))
    nar_stage = nn.Embedding(ncb, d)
    nar_norm, nar_heads = nn.LayerNorm(d), nn.ModuleList(nn.Linear(d, cbs) for _ in range(ncb - 1))
    cc = _smoke(512, 32)
    layers = [nn.Conv1d(d, cc, 7, padding=3)]
    for s in (8, 5, 4, 2):
        layers += [nn.ELU(), nn.ConvTranspose1d(cc, cc // 2, 2 * s, s, padding=s // 2 + s % 2, output_padding=s % 2),
                   nn.ELU(), nn.Conv1d(cc // 2, cc // 2, 3, padding=1)]
        cc //= 2
    layers += [nn.ELU(), nn.Conv1d(cc, 1, 7, padding=3), nn.Tanh()]
    codec = nn.Sequential(*layers)
    model = nn.ModuleList([phon, cb_emb, pos, ar, ar_norm, ar_head, nar, nar_stage, nar_norm, nar_heads, codec])
    model = model.cuda().eval()
    prompt_frames = _smoke(225, 6)

    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        for _ in range(_smoke(5, 2)):
            b = rng.randint(_smoke(4, 2), _smoke(12, 3))
            plens = [rng.randint(_smoke(20, 2), _smoke(150, 6)) for _ in range(b)]
            glens = [rng.randint(_smoke(75, 2), _smoke(260, 6)) for _ in range(b)]
            pre = max(plens) + prompt_frames
            phones = torch.randint(0, nphon, (b, max(plens)), device="cuda")
            prompt = torch.randint(0, cbs, (b, prompt_frames, ncb), device="cuda")
            ar_in = torch.cat([phon(phones), cb_emb[0](prompt[..., 0])], 1)
            # left padding: row i's phonemes start at max(plens) - plens[i]
            start = torch.tensor([max(plens) - n for n in plens], device="cuda")
            valid = torch.arange(pre, device="cuda")[None] >= start[:, None]  # (B, pre)
            x = ar_in + pos(torch.arange(pre, device="cuda"))
            ar_causal = torch.ones(pre, pre, dtype=torch.bool, device="cuda").tril()
            caches = [[None, None] for _ in ar]
            mask = (ar_causal[None] & valid[:, None, :])[:, None] | ~valid[:, None, :, None]
            for blk, cache in zip(ar, caches):
                x = blk(x, mask=mask, cache=cache)
            logits = ar_head(ar_norm(x[:, -1]))
            rows = list(range(b))  # which original requests are still generating
            outs = [[] for _ in range(b)]
            kmask = valid[:, None, None, :]
            for step in range(max(glens)):
                v, i = logits.float().topk(50, -1)
                nxt = i.gather(1, torch.multinomial(torch.softmax(v, -1), 1))  # (B', 1)
                for j, r in enumerate(rows):
                    outs[r].append(nxt[j:j + 1])
                alive = [j for j, r in enumerate(rows) if glens[r] > step + 1]
                if not alive:
                    break
                if len(alive) < len(rows):  # compact the batch: finished utterances leave
                    keep = torch.tensor(alive, device="cuda")
                    for cache in caches:
                        cache[0], cache[1] = cache[0].index_select(0, keep), cache[1].index_select(0, keep)
                    kmask, nxt = kmask.index_select(0, keep), nxt.index_select(0, keep)
                    rows = [rows[j] for j in alive]
                    del keep
                kmask = torch.cat([kmask, torch.ones(len(rows), 1, 1, 1, dtype=torch.bool, device="cuda")], -1)
                y = cb_emb[0](nxt) + pos(torch.full((1,), min(pre + step, 2047), device="cuda", dtype=torch.long))
                for blk, cache in zip(ar, caches):
                    y = blk(y, mask=kmask, cache=cache)
                logits = ar_head(ar_norm(y[:, -1]))
            del caches, logits, kmask, x, mask
            # non-autoregressive stages over the whole batch, right-padded to the longest generated length
            tl = max(glens)
            first = torch.cat([torch.cat(o + [torch.zeros(1, tl - len(o), dtype=torch.long, device="cuda")], 1)
                               if len(o) < tl else torch.cat(o, 1) for o in outs])  # (B, tl)
            first = first.clamp(max=cbs - 1)
            codes = [first]
            gvalid = torch.arange(tl, device="cuda")[None] < torch.tensor(glens, device="cuda")[:, None]
            full_valid = torch.cat([valid, gvalid], 1)  # (B, pre + tl)
            nmask = full_valid[:, None, None, :]
            for k in range(1, ncb):
                acc = sum(cb_emb[j](codes[j]) for j in range(k))
                pr = sum(cb_emb[j](prompt[..., j]) for j in range(ncb))
                h = torch.cat([phon(phones), pr, acc], 1)
                h = h + pos(torch.arange(h.shape[1], device="cuda").clamp(max=2047)) + nar_stage.weight[k]
                for blk in nar:
                    h = blk(h, mask=nmask)
                codes.append(nar_heads[k - 1](nar_norm(h[:, pre:])).argmax(-1))
                del acc, pr, h
            emb = sum(cb_emb[j](codes[j]) for j in range(ncb))  # (B, tl, d)
            wav = codec(emb.transpose(1, 2)).float() * gvalid.repeat_interleave(320, 1)[:, None].float()
            wav.cpu()
            del phones, prompt, ar_in, start, valid, outs, first, codes, gvalid, full_valid, nmask, emb, wav
    torch.cuda.synchronize()


# ---------------------------------------------------------------- Fusion-in-Decoder reader serving


@_workload("open-domain QA reader serving, Fusion-in-Decoder (Izacard & Grave 2021) on a T5-small-style encoder-decoder written by hand (6+6 layers of 512, 8 heads, T5 relative-position buckets as an additive attention bias, pre-norm LayerNorm, 32128-token vocabulary): request groups of 1-6 questions (drawn) with 10-100 retrieved passages each (drawn log-uniform, capped at 240 passages a group), every 'question: ... context: ...' passage padded to the group's longest (96-250 tokens, drawn) and encoded independently in chunks of 48 passages, the encoder outputs of each question's passages concatenated into one memory (right-padded across the group with a key mask), cross-attention keys and values computed once per layer, greedy decoding of 4-32 answer tokens (drawn per group) with self-attention KV caches grown by torch.cat, the answers read back; 50 groups, bf16 autocast, no grad")
def fid_reader_serve(rng):
    nn, f = torch.nn, torch.nn.functional
    d, heads, nl, vocab = _smoke(512, 32), _smoke(8, 2), _smoke(6, 1), _smoke(32128, 300)
    tok = nn.Embedding(vocab, d)
    enc = nn.ModuleList(_Blk(d, heads) for _ in range(nl))
    dec = nn.ModuleList(_Blk(d, heads, cross=True) for _ in range(nl))
    enc_norm, dec_norm = nn.LayerNorm(d), nn.LayerNorm(d)
    rel_enc, rel_dec = nn.Embedding(32, heads), nn.Embedding(32, heads)
    model = nn.ModuleList([tok, enc, dec, enc_norm, dec_norm, rel_enc, rel_dec]).cuda().eval()

    def rel_bias(q, k, emb, bidirectional):
        """T5's bucketed relative positions (32 buckets, max distance 128) as an additive (1, H, q, k) bias."""
        ctx = torch.arange(k - q, k, device="cuda")[:, None]
        mem = torch.arange(k, device="cuda")[None]
        rel = mem - ctx
        nb = 16 if bidirectional else 32
        if bidirectional:
            bucket = (rel > 0).long() * nb
            rel = rel.abs()
        else:
            bucket = torch.zeros_like(rel)
            rel = (-rel).clamp(min=0)
        exact = nb // 2
        large = exact + (torch.log(rel.float().clamp(min=1) / exact) / math.log(128 / exact) * (nb - exact)).long()
        large = large.clamp(max=nb - 1)
        bucket = bucket + torch.where(rel < exact, rel, large)
        return emb(bucket).permute(2, 0, 1)[None]

    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        for _ in range(_smoke(50, 2)):
            nq = rng.randint(1, _smoke(6, 2))
            nps = [_loguniform(rng, _smoke(10, 2), _smoke(100, 4)) for _ in range(nq)]
            while sum(nps) > _smoke(240, 8):
                nps[nps.index(max(nps))] -= 5
            plen = rng.randint(_smoke(96, 8), _smoke(250, 16))
            tot = sum(nps)
            ids = torch.randint(3, vocab, (tot, plen), device="cuda")
            lens = torch.randint(plen // 2, plen + 1, (tot,), device="cuda")
            pad = torch.arange(plen, device="cuda")[None] < lens[:, None]  # (P, L)
            bias = rel_bias(plen, plen, rel_enc, True)
            outs = []
            for s in range(0, tot, _smoke(48, 4)):
                x = tok(ids[s:s + _smoke(48, 4)])
                m = torch.zeros(pad[s:s + _smoke(48, 4)].shape, device="cuda").masked_fill(
                    ~pad[s:s + _smoke(48, 4)], float("-inf"))[:, None, None, :]
                for blk in enc:
                    x = blk(x, mask=m, bias=bias)
                outs.append(enc_norm(x))
                del x, m
            hid = torch.cat(outs)  # (P, L, d)
            del outs
            # each question's passages concatenated: (nq, max_np * L), right-padded across the group
            mx = max(nps)
            mem = torch.zeros(nq, mx * plen, d, device="cuda", dtype=hid.dtype)
            kvalid = torch.zeros(nq, mx * plen, dtype=torch.bool, device="cuda")
            off = 0
            for qi, n in enumerate(nps):
                mem[qi, : n * plen] = hid[off:off + n].flatten(0, 1)
                kvalid[qi, : n * plen] = pad[off:off + n].flatten()
                off += n
            ctx_mask = kvalid[:, None, None, :]
            ctx_kv = [blk.ctx_kv(mem) for blk in dec]
            del hid, mem
            caches = [[None, None] for _ in dec]
            cur = torch.zeros(nq, 1, dtype=torch.long, device="cuda")
            answer = []
            for i in range(rng.randint(4, _smoke(32, 4))):
                y = tok(cur)
                bias_d = rel_bias(1, i + 1, rel_dec, False)
                for blk, cache, kv in zip(dec, caches, ctx_kv):
                    y = blk(y, cache=cache, ctx_kv=kv, ctx_mask=ctx_mask, bias=bias_d)
                cur = f.linear(dec_norm(y[:, -1]), tok.weight).argmax(-1, keepdim=True)
                answer.append(cur)
            torch.cat(answer, 1).tolist()
            del ids, lens, pad, bias, kvalid, ctx_mask, ctx_kv, caches, cur, answer
    torch.cuda.synchronize()

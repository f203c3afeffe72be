"""The ninety-seventh batch of held-out workloads for record.py, second half (see batch97.py): video platforms and video
understanding, written in torch alone. Video captioning training (a transformer encoder over per-frame features of
videos of drawn lengths and a transformer decoder with cross-attention over captions of drawn lengths), a video-text
retrieval service (a text tower for search queries and a video tower for newly uploaded videos, whose embeddings are
written into a gallery on the device by index_copy, brute-force top-k over the gallery), watch-graph recommendation
training (a message-passing network by index_select and index_add over drawn user-video bipartite subgraphs, BPR
loss) and video latent diffusion sampling (a space-time U-Net with temporal attention, DDIM with classifier-free
guidance over clips of drawn lengths and sizes). Same conventions as batch97.py: nothing downloaded, data drawn at
random on the device (or in reused pinned host buffers for the service), `rng` the workload's random.Random for every
shape, count and sampled choice, sizes through `_smoke(real, small)`; no control flow reads a tensor's value; losses
and metrics read back only at logging points or once per request. video_text_retrieval_serve uploads its frame
features on a side stream (workload_helpers.SideUploads); the other three are single-stream. The models run under
bf16 autocast, except the watch-graph network (fp32 throughout). Every position table is sized for the longest padded
length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(); this file never imports record.py.
Real sizes checked before recording: see record_new97.sh's header.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import CrossDecoderBlock, PreNormBlock, SideUploads, TimeResBlock, _mha, _sincos, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _pad8(lengths):
    return -(-max(lengths) // 8) * 8


def _masked_mean(x, keep):
    w = keep[..., None].to(x.dtype)
    return (x * w).sum(1) / w.sum(1).clamp(min=1)


# ---------------------------------------------------------------- video captioning (encoder-decoder transformer)


class _VideoCaptioner(_nn.Module):
    def __init__(self, feat, d, heads, enc_layers, dec_layers, vocab, max_frames, max_tokens):
        super().__init__()
        self.inp, self.fpos = _nn.Linear(feat, d), _nn.Embedding(max_frames, d)
        self.enc = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(enc_layers))
        self.enc_norm = _nn.LayerNorm(d)
        self.tok, self.tpos = _nn.Embedding(vocab, d), _nn.Embedding(max_tokens, d)
        self.dec = _nn.ModuleList(CrossDecoderBlock(d, heads) for _ in range(dec_layers))
        self.norm, self.lm = _nn.LayerNorm(d), _nn.Linear(d, vocab, bias=False)

    def encode(self, feats, keep):
        s = feats.shape[1]
        x = self.inp(feats) + self.fpos(torch.arange(s, device=feats.device))[None]
        for blk in self.enc:
            x = blk(x, mask=keep[:, None, None, :])
        return self.enc_norm(x)

    def decode(self, ids, mem, mem_keep):
        t = ids.shape[1]
        x = _F.dropout(self.tok(ids) + self.tpos(torch.arange(t, device=ids.device))[None], 0.1, self.training)
        for layer in self.dec:
            x = layer(x, mem, mem_keep)
        return self.lm(self.norm(x))


@_workload("video captioning training (random init, a transformer encoder-decoder over per-frame features, MSR-VTT-style): 16-48 videos a step (drawn), each of 8-64 sampled frames (drawn per video) with 768-d frame features drawn on the device, padded to the step's longest rounded up to a multiple of 8 (frame position table of 64 rows), 1-3 captions per video (drawn per step, the frame memory repeated per caption), each caption of 6-40 tokens (drawn per caption over a 16,000-token vocabulary) between BOS and EOS, padded to the step's longest rounded up to a multiple of 8 (token position table of 48 rows); a 3-block pre-norm encoder (width 512, 8 heads) under a frame key mask and a 4-layer decoder with causal self-attention and cross-attention under the frame mask; teacher-forced cross-entropy with padding ignored and label smoothing 0.1; AdamW, clipping, bf16 autocast, 245 steps; the loss read back every 20 steps and every 61 steps a no-grad greedy decoding of 16 videos of 64 frames for 24 tokens (the whole prefix recomputed each token) with the tokens read back once")
def video_caption_train(rng):
    feat, d, heads = _smoke(768, 16), _smoke(512, 32), _smoke(8, 2)
    enc_layers, dec_layers, vocab = _smoke(3, 1), _smoke(4, 1), _smoke(16000, 200)
    max_frames, max_words = _smoke(64, 16), _smoke(40, 8)
    max_tokens = -(-(max_words + 2) // 8) * 8
    model = _VideoCaptioner(feat, d, heads, enc_layers, dec_layers, vocab, max_frames, max_tokens).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.01)
    bos, eos = 1, 2

    def videos(lengths):
        s = _pad8(lengths)
        keep = keep_mask(lengths, s)
        feats = torch.randn(len(lengths), s, feat, device="cuda") * keep[..., None]
        return feats, keep

    steps = _smoke(245, 3)
    for step in range(steps):
        model.train()
        nv, per = rng.randint(_smoke(16, 2), _smoke(48, 3)), rng.randint(1, 3)
        feats, keep = videos([rng.randint(_smoke(8, 4), max_frames) for _ in range(nv)])
        words = [rng.randint(_smoke(6, 2), max_words) for _ in range(nv * per)]
        lengths = [w + 2 for w in words]
        t = _pad8(lengths)
        tkeep = keep_mask(lengths, t)
        ids = torch.randint(3, vocab, (len(lengths), t), device="cuda")
        ids[:, 0] = bos
        ends = torch.tensor([n - 1 for n in lengths], device="cuda")
        ids = ids.scatter(1, ends[:, None], eos).masked_fill(~tkeep, 0)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            mem = model.encode(feats, keep).repeat_interleave(per, 0)
            logits = model.decode(ids[:, :-1], mem, keep.repeat_interleave(per, 0)[:, None, None, :])
        loss = _F.cross_entropy(logits.float().flatten(0, 1), ids[:, 1:].flatten(), ignore_index=0,
                                label_smoothing=0.1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.detach().item()
        del feats, keep, tkeep, ids, ends, mem, logits, loss
        if (step + 1) % _smoke(61, 2) == 0:
            model.eval()
            with torch.no_grad():
                feats, keep = videos([max_frames] * _smoke(16, 2))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    mem = model.encode(feats, keep)
                    mk = keep[:, None, None, :]
                    ids = torch.full((feats.shape[0], 1), bos, dtype=torch.long, device="cuda")
                    for _ in range(_smoke(24, 3)):
                        nxt = model.decode(ids, mem, mk)[:, -1].argmax(-1, keepdim=True)
                        ids = torch.cat([ids, nxt], 1)
            ids.tolist()
            del feats, keep, mem, mk, ids, nxt


# ---------------------------------------------------------------- video-text retrieval service (dual encoder)


class _Tower(_nn.Module):
    """An input (a token table or a linear map of frame features) plus a position table, pre-norm blocks under a key
    mask, masked mean pooling, a projection to the joint space, L2-normalised."""

    def __init__(self, inp, d, heads, layers, max_len, out):
        super().__init__()
        self.inp, self.pos = inp, _nn.Embedding(max_len, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm, self.proj = _nn.LayerNorm(d), _nn.Linear(d, out)

    def forward(self, x, keep):
        t = x.shape[1]
        z = self.inp(x) + self.pos(torch.arange(t, device=x.device))[None]
        for blk in self.blocks:
            z = blk(z, mask=keep[:, None, None, :])
        return _F.normalize(self.proj(_masked_mean(self.norm(z), keep)).float(), dim=-1)


@_workload("video-text retrieval serving (random init, a dual-encoder service over a video gallery on the device): a gallery of 300,000 L2-normalised 256-d video embeddings in bf16 with a blocked-video flag per entry; 1,150-1,200 requests (drawn), each ingesting 1-6 newly uploaded videos (drawn) of 8-64 frames (drawn per video) whose 512-d fp16 frame features are uploaded on a side stream from two reused pinned host buffers (filled once, sized for 6 videos of 64 frames) one request ahead (one span padded to the request's longest video rounded up to a multiple of 8, waited on by event, record_stream'ed), embedded by a video tower (2 pre-norm blocks, width 384, 6 heads, frame position table of 64 rows, masked mean pooling) and written into the gallery at the next ring-buffer slots by index_copy (their blocked flags cleared by index_fill); and answering 1-32 text queries (drawn) of 4-32 tokens (drawn per query over a 30,000-token vocabulary, padded to a multiple of 8, position table of 32 rows) through a text tower (4 pre-norm blocks, width 384, 6 heads) scored against the whole gallery by one bf16 matrix product, blocked videos removed by torch.where, the top 50 by topk; bf16 autocast; each request's top-50 ids and scores read back")
def video_text_retrieval_serve(rng):
    d, heads, out_d = _smoke(384, 32), _smoke(6, 2), _smoke(256, 16)
    feat, vocab, gallery_n = _smoke(512, 16), _smoke(30000, 200), _smoke(300000, 500)
    max_frames, max_tok, max_videos = _smoke(64, 16), _smoke(32, 16), _smoke(6, 3)
    video = _Tower(_nn.Linear(feat, d), d, heads, _smoke(2, 1), max_frames, out_d).cuda().eval()
    text = _Tower(_nn.Embedding(vocab, d), d, heads, _smoke(4, 1), max_tok, out_d).cuda().eval()
    video.requires_grad_(False)
    text.requires_grad_(False)
    gallery = _F.normalize(torch.randn(gallery_n, out_d, device="cuda"), dim=-1).to(torch.bfloat16)
    blocked = torch.rand(gallery_n, device="cuda") < 0.01
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randn(max_videos * max_frames * feat, generator=gen).to(torch.float16).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    nreq = rng.randint(_smoke(1150, 3), _smoke(1200, 4))
    plan = []
    for _ in range(nreq):
        frames = [rng.randint(_smoke(8, 4), max_frames) for _ in range(rng.randint(1, max_videos))]
        queries = [rng.randint(4, max_tok) for _ in range(rng.randint(1, _smoke(32, 3)))]
        plan.append((frames, queries))

    def span(p):
        return len(p[0]) * _pad8(p[0]) * feat

    slot = 0
    nxt = up.upload(0, span(plan[0]))
    for i in range(nreq):
        frames, queries = plan[i]
        item = nxt
        if i + 1 < nreq:
            nxt = up.upload(i + 1, span(plan[i + 1]))
        raw, ev = item
        SideUploads.ready(ev, raw)
        s, tq = _pad8(frames), _pad8(queries)
        slots = torch.tensor([(slot + j) % gallery_n for j in range(len(frames))], device="cuda")
        slot += len(frames)
        with torch.no_grad():
            fkeep = keep_mask(frames, s)
            x = raw.view(len(frames), s, feat).float()
            qkeep = keep_mask(queries, tq)
            ids = torch.randint(1, vocab, (len(queries), tq), device="cuda").masked_fill(~qkeep, 0)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                v_emb = video(x, fkeep)
                q_emb = text(ids, qkeep)
            gallery.index_copy_(0, slots, v_emb.to(torch.bfloat16))
            blocked.index_fill_(0, slots, False)
            scores = (q_emb.to(torch.bfloat16) @ gallery.t()).float()
            scores = torch.where(blocked[None], float("-inf"), scores)
            top = scores.topk(_smoke(50, 5), -1)
            out = torch.cat([top.indices.float(), top.values], 1)
        out.tolist()
        del item, raw, slots, fkeep, x, qkeep, ids, v_emb, q_emb, scores, top, out


# ---------------------------------------------------------------- watch-graph recommendation (bipartite GNN)


class _BipartiteLayer(_nn.Module):
    """Users gather the completion-weighted mean of their watched videos' states and videos of their viewers' (by
    index_select and index_add, degree-normalised); each side updated by a linear map of [own, aggregate], a
    LayerNorm and a residual."""

    def __init__(self, d):
        super().__init__()
        self.u, self.v = _nn.Linear(2 * d, d), _nn.Linear(2 * d, d)
        self.nu, self.nv = _nn.LayerNorm(d), _nn.LayerNorm(d)

    def forward(self, hu, hv, eu, ev, w, inv_du, inv_dv):
        to_u = hu.new_zeros(hu.shape).index_add_(0, eu, hv.index_select(0, ev) * w[:, None]) * inv_du[:, None]
        to_v = hv.new_zeros(hv.shape).index_add_(0, ev, hu.index_select(0, eu) * w[:, None]) * inv_dv[:, None]
        hu = hu + _F.gelu(self.nu(self.u(torch.cat([hu, to_u], 1))))
        hv = hv + _F.gelu(self.nv(self.v(torch.cat([hv, to_v], 1))))
        return hu, hv


@_workload("watch-graph recommendation training (random init, a bipartite message-passing network, NGCF-style): tables of 400,000 users and 150,000 videos (64-d) plus a 24-d video feature projection; each step a drawn subgraph of 20,000-60,000 users and 8,000-30,000 videos (ids drawn from the tables) with 3-8 times as many watch edges as users (the multiple drawn per step; both endpoints drawn uniformly and completion weights of 0.2-1 drawn on the device), degrees by index_add of ones; 3 layers of completion-weighted, degree-normalised aggregation in both directions by index_select and index_add, a linear update of [own, aggregate], LayerNorm, GELU and a residual, the layer outputs averaged; BPR loss over 4,096-16,384 (user, watched, random video) triples (drawn count; edges picked and negatives drawn uniformly from the subgraph's videos on the device, not checked against the watched ones) plus L2 on the triples' layer-0 embeddings; Adam, 1,000 steps; the loss read back every 25 steps and every 200 steps a no-grad evaluation on a freshly drawn subgraph scoring 512 of its users (drawn) against all of its videos with recall@20 of a drawn held-out video read back")
def watch_graph_rec_train(rng):
    n_users, n_videos, d = _smoke(400000, 500), _smoke(150000, 300), _smoke(64, 16)
    layers, vfeat = _smoke(3, 2), 24
    users, videos = _nn.Embedding(n_users, d).cuda(), _nn.Embedding(n_videos, d).cuda()
    _nn.init.normal_(users.weight, std=0.1)
    _nn.init.normal_(videos.weight, std=0.1)
    feat_table = torch.randn(n_videos, vfeat, device="cuda")
    feat_proj = _nn.Linear(vfeat, d).cuda()
    gnn = _nn.ModuleList(_BipartiteLayer(d) for _ in range(layers)).cuda()
    params = list(users.parameters()) + list(videos.parameters()) + list(feat_proj.parameters()) + \
        list(gnn.parameters())
    opt = torch.optim.Adam(params, lr=1e-3)

    def subgraph():
        nu, nv = rng.randint(_smoke(20000, 40), _smoke(60000, 80)), rng.randint(_smoke(8000, 20), _smoke(30000, 50))
        e = nu * rng.randint(3, 8)
        uid = torch.randint(0, n_users, (nu,), device="cuda")
        vid = torch.randint(0, n_videos, (nv,), device="cuda")
        eu = torch.randint(0, nu, (e,), device="cuda")
        ev = torch.randint(0, nv, (e,), device="cuda")
        w = 0.2 + 0.8 * torch.rand(e, device="cuda")
        inv_du = 1.0 / torch.zeros(nu, device="cuda").index_add_(0, eu, torch.ones(e, device="cuda")).clamp(min=1)
        inv_dv = 1.0 / torch.zeros(nv, device="cuda").index_add_(0, ev, torch.ones(e, device="cuda")).clamp(min=1)
        return nu, nv, uid, vid, eu, ev, w, inv_du, inv_dv

    def embed(uid, vid, eu, ev, w, inv_du, inv_dv):
        hu0 = users(uid)
        hv0 = videos(vid) + feat_proj(feat_table.index_select(0, vid))
        hu, hv, su, sv = hu0, hv0, hu0, hv0
        for layer in gnn:
            hu, hv = layer(hu, hv, eu, ev, w, inv_du, inv_dv)
            su, sv = su + hu, sv + hv
        return su / (len(gnn) + 1), sv / (len(gnn) + 1), hu0, hv0

    steps = _smoke(1000, 3)
    for step in range(steps):
        nu, nv, uid, vid, eu, ev, w, inv_du, inv_dv = subgraph()
        zu, zv, hu0, hv0 = embed(uid, vid, eu, ev, w, inv_du, inv_dv)
        nt = rng.randint(_smoke(4096, 16), _smoke(16384, 64))
        pick = torch.randint(0, eu.shape[0], (nt,), device="cuda")
        tu, tp = eu.index_select(0, pick), ev.index_select(0, pick)
        tn = torch.randint(0, nv, (nt,), device="cuda")
        u = zu.index_select(0, tu)
        margin = (u * zv.index_select(0, tp)).sum(-1) - (u * zv.index_select(0, tn)).sum(-1)
        reg = (hu0.index_select(0, tu).pow(2).sum() + hv0.index_select(0, tp).pow(2).sum() +
               hv0.index_select(0, tn).pow(2).sum()) / nt
        loss = -_F.logsigmoid(margin).mean() + 1e-4 * reg
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 25 == 0:
            loss.detach().item()
        del uid, vid, eu, ev, w, inv_du, inv_dv, zu, zv, hu0, hv0, pick, tu, tp, tn, u, margin, reg, loss
        if (step + 1) % _smoke(200, 2) == 0:
            with torch.no_grad():
                nu, nv, uid, vid, eu, ev, w, inv_du, inv_dv = subgraph()
                zu, zv, _, _ = embed(uid, vid, eu, ev, w, inv_du, inv_dv)
                q = torch.randint(0, nu, (_smoke(512, 8),), device="cuda")
                held = torch.randint(0, nv, (q.shape[0],), device="cuda")
                scores = zu.index_select(0, q) @ zv.t()
                top = scores.topk(20, -1).indices
                recall = (top == held[:, None]).any(-1).float().mean()
            recall.item()
            del uid, vid, eu, ev, w, inv_du, inv_dv, zu, zv, q, held, scores, top, recall


# ---------------------------------------------------------------- video latent diffusion sampling (space-time U-Net)


class _FrameAttention(_nn.Module):
    """Attention across frames at every spatial position: group norm, a frame position table, fused qkv, SDPA over
    the frames, an output projection added back."""

    def __init__(self, c, heads, max_frames):
        super().__init__()
        self.h = heads
        self.norm, self.pos = _nn.GroupNorm(8, c), _nn.Embedding(max_frames, c)
        self.qkv, self.out = _nn.Linear(c, 3 * c), _nn.Linear(c, c)

    def forward(self, x, frames):
        nt, c, h, w = x.shape
        n = nt // frames
        z = self.norm(x).view(n, frames, c, h * w).permute(0, 3, 1, 2).reshape(n * h * w, frames, c)
        z = z + self.pos(torch.arange(frames, device=x.device))[None]
        q, k, v = self.qkv(z).chunk(3, -1)
        a = self.out(_mha(q, k, v, self.h))
        return x + a.view(n, h * w, frames, c).permute(0, 2, 3, 1).reshape(nt, c, h, w)


class _SpaceTimeUNet(_nn.Module):
    """A latent video U-Net: per-frame residual blocks with the timestep-plus-prompt embedding, frame attention at
    the two lower levels, spatial self-attention (a pre-norm block over each frame's positions) at the bottom,
    stride-2 downsampling, nearest upsampling with skips."""

    def __init__(self, cin, widths, temb, cond, heads, max_frames):
        super().__init__()
        self.temb = temb
        self.t_mlp = mlp(temb, temb, temb, act=_nn.SiLU)
        self.c_proj = _nn.Linear(cond, temb)
        self.inp = _nn.Conv2d(cin, widths[0], 3, 1, 1)
        self.down = _nn.ModuleList(TimeResBlock(a, a, temb) for a in widths)
        self.dconv = _nn.ModuleList(_nn.Conv2d(a, b, 3, 2, 1) for a, b in zip(widths[:-1], widths[1:]))
        self.dattn = _nn.ModuleList(_FrameAttention(a, heads, max_frames) for a in widths[1:])
        self.mid = TimeResBlock(widths[-1], widths[-1], temb)
        self.mid_sp = PreNormBlock(widths[-1], heads)
        self.up = _nn.ModuleList(TimeResBlock(2 * a, a, temb) for a in widths[::-1])
        self.uconv = _nn.ModuleList(_nn.Conv2d(b, a, 3, 1, 1) for a, b in zip(widths[-2::-1], widths[:0:-1]))
        self.uattn = _nn.ModuleList(_FrameAttention(a, heads, max_frames) for a in widths[:0:-1])
        self.out = _nn.Sequential(_nn.GroupNorm(8, widths[0]), _nn.SiLU(), _nn.Conv2d(widths[0], cin, 3, 1, 1))

    def forward(self, x, t, cond, frames):
        te = self.t_mlp(_sincos(t, self.temb)) + self.c_proj(cond)
        te = te.repeat_interleave(frames, 0)
        h = self.inp(x)
        skips = []
        for i, blk in enumerate(self.down):
            h = blk(h, te)
            if i > 0:
                h = self.dattn[i - 1](h, frames)
            skips.append(h)
            if i < len(self.dconv):
                h = self.dconv[i](h)
        h = self.mid(h, te)
        nt, c, hh, ww = h.shape
        h = self.mid_sp(h.flatten(2).transpose(1, 2)).transpose(1, 2).reshape(nt, c, hh, ww)
        for i, blk in enumerate(self.up):
            h = blk(torch.cat([h, skips.pop()], 1), te)
            if i < len(self.uconv):
                h = self.uattn[i](h, frames)
                h = self.uconv[i](_F.interpolate(h, scale_factor=2, mode="nearest"))
        return self.out(h)


class _LatentDecoder(_nn.Module):
    """4 latent channels to RGB at 4x: a convolution, two nearest-upsampling convolution stages, tanh."""

    def __init__(self, cin, c):
        super().__init__()
        self.body = _nn.Sequential(_nn.Conv2d(cin, c, 3, 1, 1), _nn.SiLU(), _nn.Upsample(scale_factor=2),
                                   _nn.Conv2d(c, c // 2, 3, 1, 1), _nn.SiLU(), _nn.Upsample(scale_factor=2),
                                   _nn.Conv2d(c // 2, 3, 3, 1, 1), _nn.Tanh())

    def forward(self, z):
        return self.body(z)


@_workload("video latent diffusion sampling (random init, a space-time latent U-Net with DDIM and classifier-free guidance, preview-clip generation): 50-53 requests (drawn) of 1-4 clips (drawn) of 8, 12 or 16 frames (drawn) with 4-channel latents of 24 or 32 rows by 32, 40 or 48 columns (drawn per request), a 512-d prompt embedding per clip drawn on the device; a U-Net of widths 64/128/192 (a TimeResBlock per level down and up, frame attention with a 16-row frame table at the two lower levels, a spatial pre-norm attention block at the bottom, 4 heads) conditioned on sinusoidal timestep plus projected prompt embeddings; 12-30 DDIM steps (drawn per request, timesteps evenly spaced over a 1,000-step linear schedule computed on the host), the conditional and null-prompt batches run together and mixed with a guidance scale of 4-9 (drawn); the latents decoded x4 to RGB frames by a 3-convolution decoder; bf16 autocast; each request's per-clip mean colour and frame-to-frame change read back once")
def video_latent_diffusion_sample(rng):
    cin, widths, temb, cond_d, heads = 4, _smoke([64, 128, 192], [16, 16]), _smoke(256, 32), _smoke(512, 16), \
        _smoke(4, 2)
    frame_choices = _smoke([8, 12, 16], [2, 3])
    model = _SpaceTimeUNet(cin, widths, temb, cond_d, heads, max(frame_choices)).cuda().eval()
    decoder = _LatentDecoder(cin, _smoke(64, 16)).cuda().eval()
    model.requires_grad_(False)
    decoder.requires_grad_(False)
    betas = [1e-4 + (0.02 - 1e-4) * i / 999 for i in range(1000)]
    abar, acc = [], 1.0
    for beta in betas:
        acc *= 1 - beta
        abar.append(acc)
    rows, cols = _smoke([24, 32], [8]), _smoke([32, 40, 48], [8, 16])
    nreq = rng.randint(_smoke(50, 2), _smoke(53, 2))
    for _ in range(nreq):
        b, frames = rng.randint(1, _smoke(4, 2)), rng.choice(frame_choices)
        h, w = rng.choice(rows), rng.choice(cols)
        n_steps, scale = rng.randint(_smoke(12, 2), _smoke(30, 3)), rng.uniform(4.0, 9.0)
        ts = [int(round(999 - k * 999 / n_steps)) for k in range(n_steps)]
        with torch.no_grad():
            prompt = torch.randn(b, cond_d, device="cuda")
            cond = torch.cat([prompt, torch.zeros_like(prompt)])
            x = torch.randn(b * frames, cin, h, w, device="cuda")
            for k, t in enumerate(ts):
                a_t = abar[t]
                a_prev = abar[ts[k + 1]] if k + 1 < n_steps else 1.0
                tt = torch.full((2 * b,), t, device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    eps = model(torch.cat([x, x]), tt, cond, frames).float()
                e_c, e_u = eps.chunk(2)
                e = e_u + scale * (e_c - e_u)
                x0 = (x - math.sqrt(1 - a_t) * e) / math.sqrt(a_t)
                x = math.sqrt(a_prev) * x0 + math.sqrt(1 - a_prev) * e
            with torch.autocast("cuda", dtype=torch.bfloat16):
                rgb = decoder(x).float()
            clips = rgb.view(b, frames, 3, 4 * h, 4 * w)
            colour = clips.mean((1, 3, 4))
            change = (clips[:, 1:] - clips[:, :-1]).abs().mean((1, 2, 3, 4))
            out = torch.cat([colour.flatten(), change])
        out.tolist()
        del prompt, cond, x, tt, eps, e_c, e_u, e, x0, rgb, clips, colour, change, out

"""The hundred-and-twenty-sixth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py
to batch125_b.py are): board games, chess and puzzles, written in torch alone, first half.
Chess policy and value training (an AlphaZero-style residual convnet over 8 x 8 board planes of drawn batches, a
policy over 73 move planes under a legal-move mask trained on soft visit-count targets, a win/draw/loss value and a
moves-left estimate), Go policy and ownership training (a transformer over the points of 9 x 9, 13 x 13 and 19 x 19
boards mixed in one step, padded to the step's largest board under a key mask, with a pass token, policy, ownership,
value and score lead), sudoku solving training (a recurrent relational network: message passing over each cell's 20
peers aggregated by index_add, an LSTM cell written out step by step over a drawn number of steps, a loss at every
step) and a chess game commentary sampler (a board encoder and a cached transformer decoder written out token by token,
nucleus sampling with a drawn temperature, requests of drawn numbers of positions and commentary lengths).
Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device, `rng` the workload's
random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1
runs are tiny. No control flow reads a tensor's value: lengths, resolutions and batch sizes are fixed on the host,
padding handled by masks or by torch.where / masked_fill, no boolean-mask indexing; losses and metrics are read back
only at logging points or once per request.
All four are single-stream (the side-stream uploads of this batch are batch126_b.py's). The models run under bf16
autocast. Every embedding and position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new126.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and
for the CPU smoke run (RECORD_SMOKE=1).
"""

import math

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, PreNormBlock, _mha, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- chess policy and value (AlphaZero-style convnet)


class _ChessNet(_nn.Module):
    """A 3x3 stem, a tower of residual blocks at 8 x 8, a policy head (a 3x3 convolution to 73 move planes, 4,672
    logits), a value head (1x1 to 32 planes, an MLP to win/draw/loss) and a moves-left head."""

    def __init__(self, planes, width, blocks, moves):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(planes, width, 3, 1, 1, bias=False), _nn.BatchNorm2d(width), _nn.ReLU())
        self.tower = _nn.Sequential(*[BasicResBlock(width, width, 1) for _ in range(blocks)])
        self.pol = _nn.Sequential(_nn.Conv2d(width, width, 3, 1, 1, bias=False), _nn.BatchNorm2d(width), _nn.ReLU(),
                                  _nn.Conv2d(width, moves, 3, 1, 1))
        self.val = _nn.Sequential(_nn.Conv2d(width, 32, 1, bias=False), _nn.BatchNorm2d(32), _nn.ReLU())
        self.wdl = mlp(32 * 64, 128, 3)
        self.mlh = mlp(32 * 64, 128, 1)

    def forward(self, x):
        f = self.tower(self.stem(x))
        v = self.val(f).flatten(1)
        return self.pol(f).flatten(1).float(), self.wdl(v).float(), self.mlh(v).float()[:, 0]


@_workload("chess policy and value training (random init, an AlphaZero-style residual convnet): 256-1,024 positions a step (drawn) of 112 input planes at 8 x 8 (piece, history, castling, side-to-move and rule-50 planes, drawn on the device as 0/1 planes) in channels-last; a 3x3 stem and 10 residual blocks of 128 channels with batch norm, a policy head (3x3 convolutions to 73 move planes, 4,672 logits) under a legal-move mask (each move legal with probability 0.02-0.12, drawn per step, the first always) by masked_fill, a win/draw/loss head and a moves-left head; soft visit-count policy targets (a softmax of drawn logits at a temperature of 0.5-1.5 under the mask), a soft cross-entropy on the policy, cross-entropy on the drawn game result and a Huber loss on the moves left; SGD with Nesterov momentum and weight decay on a step schedule, clipping, bf16 autocast, 520 steps; the losses read back every 20 steps and every 104 steps a no-grad pass over 1,024 positions with the policy top-1 agreement read back")
def chess_policy_value_resnet_train(rng):
    planes, width, blocks, moves = 112, _smoke(128, 8), _smoke(10, 2), _smoke(73, 4)
    model = _ChessNet(planes, width, blocks, moves).cuda().to(memory_format=torch.channels_last)
    steps = _smoke(520, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.1 ** (s // max(1, steps // 3)))
    n_mv = moves * 64

    def positions(b, p_legal, temp):
        x = (torch.rand(b, planes, 8, 8, device="cuda") < 0.1).float().contiguous(memory_format=torch.channels_last)
        legal = torch.rand(b, n_mv, device="cuda") < p_legal
        legal[:, 0] = True
        visits = (torch.randn(b, n_mv, device="cuda") / temp).masked_fill(~legal, -1e4).softmax(-1)
        result = torch.randint(0, 3, (b,), device="cuda")
        left = torch.rand(b, device="cuda") * 120.0
        return x, legal, visits, result, left

    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(256, 4), _smoke(1024, 8))
        x, legal, visits, result, left = positions(b, rng.uniform(0.02, 0.12), rng.uniform(0.5, 1.5))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pol, wdl, mlh = model(x)
        logp = pol.masked_fill(~legal, -1e4).log_softmax(-1)
        l_pol = -(visits * logp).sum(-1).mean()
        l_val = _F.cross_entropy(wdl, result)
        l_mlh = _F.huber_loss(mlh, left / 20.0)
        loss = l_pol + l_val + 0.1 * l_mlh
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            torch.stack([l_pol.detach(), l_val.detach(), l_mlh.detach()]).tolist()
        del x, legal, visits, result, left, pol, wdl, mlh, logp, l_pol, l_val, l_mlh, loss
        if (step + 1) % _smoke(104, 2) == 0:
            model.eval()
            with torch.no_grad():
                x, legal, visits, result, left = positions(_smoke(1024, 8), 0.06, 1.0)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pol, wdl, mlh = model(x)
                agree = (pol.masked_fill(~legal, -1e4).argmax(-1) == visits.argmax(-1)).float().mean()
            agree.tolist()
            del x, legal, visits, result, left, pol, wdl, mlh, agree


# ---------------------------------------------------------------- Go policy and ownership (board transformer)


class _GoTransformer(_nn.Module):
    """Point features plus row and column tables (19 rows each) and a learned pass token, pre-norm transformer blocks
    under the padded points' key mask, a policy logit per point and one for pass, ownership per point, a value and a
    score lead from the pass token."""

    def __init__(self, n_feat, d, heads, layers, side):
        super().__init__()
        self.inp = _nn.Linear(n_feat, d)
        self.row, self.col = _nn.Embedding(side, d), _nn.Embedding(side, d)
        self.size = _nn.Embedding(3, d)
        self.pass_tok = _nn.Parameter(torch.zeros(1, 1, d))
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.point = _nn.Linear(d, 2)
        self.glob = mlp(d, d, 3, act=_nn.GELU)

    def forward(self, feat, rows, cols, size_id, keep):
        b = feat.shape[0]
        x = self.inp(feat) + self.row(rows) + self.col(cols)
        g = self.pass_tok.expand(b, 1, -1) + self.size(size_id)[:, None]
        x = torch.cat([g.to(x.dtype), x], 1)
        km = torch.cat([torch.ones(b, 1, dtype=torch.bool, device=keep.device), keep], 1)[:, None, None]
        for blk in self.blocks:
            x = blk(x, km)
        x = self.norm(x)
        pt = self.point(x[:, 1:]).float()
        gl = self.glob(x[:, 0]).float()
        return pt[..., 0], pt[..., 1], gl


@_workload("Go policy and ownership training (random init, a transformer over board points): 16-48 positions a step (drawn), each on a 9 x 9, 13 x 13 or 19 x 19 board (drawn per position), padded to the step's largest board (at most 361 points) with a key mask, 18 features per point (stones, liberties and 8 moves of history, drawn on the device); a linear input, 19-row row and column tables, a board-size table and a pass token, 6 pre-norm blocks (width 256, 8 heads) under the key mask; a policy over the points and pass (padded points masked) by cross-entropy on a drawn move, ownership per point by masked MSE on tanh, a value by BCE and a score lead by Huber from the pass token; AdamW with a warm-up and cosine decay, clipping, bf16 autocast, 400 steps; the losses read back every 15 steps and every 80 steps a no-grad pass over 32 positions on 19 x 19 with the policy accuracy read back")
def go_policy_ownership_transformer_train(rng):
    n_feat, d, heads, layers = 18, _smoke(256, 16), _smoke(8, 2), _smoke(6, 1)
    sizes = _smoke([9, 13, 19], [3, 5])
    side = max(sizes)
    model = _GoTransformer(n_feat, d, heads, layers, side).cuda()
    steps = _smoke(400, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.05)
    warm = max(1, steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))

    def boards(bs):
        b, s = len(bs), max(bs)
        n = s * s
        ar = torch.arange(n, device="cuda")
        rows, cols = (ar // s)[None].expand(b, n), (ar % s)[None].expand(b, n)
        lim = torch.tensor(bs, device="cuda")[:, None]
        keep = (rows < lim) & (cols < lim)
        feat = (torch.rand(b, n, n_feat, device="cuda") < 0.3).float() * keep[..., None]
        size_id = torch.tensor([sizes.index(v) for v in bs], device="cuda")
        move = torch.where(keep, torch.rand(b, n, device="cuda"), torch.zeros(b, n, device="cuda"))
        move = torch.cat([torch.full((b, 1), 0.05, device="cuda"), move], 1).argmax(-1)
        own = torch.rand(b, n, device="cuda") * 2 - 1
        win = (torch.rand(b, device="cuda") < 0.5).float()
        lead = torch.randn(b, device="cuda") * 10.0
        return (feat, rows, cols, size_id, keep), (move, own, win, lead)

    def losses(out, keep, tgt):
        pol, own, gl = out
        move, own_t, win, lead = tgt
        logits = torch.cat([gl[:, 2:3], pol.masked_fill(~keep, -1e4)], 1)
        kf = keep.float()
        l_pol = _F.cross_entropy(logits, move)
        l_own = ((torch.tanh(own) - own_t).pow(2) * kf).sum() / kf.sum()
        l_val = _F.binary_cross_entropy_with_logits(gl[:, 0], win)
        l_lead = _F.huber_loss(gl[:, 1], lead / 10.0)
        return l_pol, l_own, l_val, l_lead, logits

    for step in range(steps):
        model.train()
        bs = [rng.choice(sizes) for _ in range(rng.randint(_smoke(16, 2), _smoke(48, 4)))]
        inp, tgt = boards(bs)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(*inp)
        l_pol, l_own, l_val, l_lead, logits = losses(out, inp[4], tgt)
        loss = l_pol + l_own + l_val + 0.5 * l_lead
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 15 == 0:
            torch.stack([l_pol.detach(), l_own.detach(), l_val.detach(), l_lead.detach()]).tolist()
        del inp, tgt, out, l_pol, l_own, l_val, l_lead, logits, loss
        if (step + 1) % _smoke(80, 2) == 0:
            model.eval()
            with torch.no_grad():
                inp, tgt = boards([side] * _smoke(32, 2))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    out = model(*inp)
                logits = losses(out, inp[4], tgt)[4]
                acc = (logits.argmax(-1) == tgt[0]).float().mean()
            acc.tolist()
            del inp, tgt, out, logits, acc


# ---------------------------------------------------------------- sudoku solving (recurrent relational network)


def _sudoku_edges():
    """(src, dst) of the 1,620 directed peer links of one grid: each cell to the 20 cells sharing its row, column
    or box."""
    src, dst = [], []
    for a in range(81):
        ra, ca = divmod(a, 9)
        for c in range(81):
            rc, cc = divmod(c, 9)
            if a != c and (ra == rc or ca == cc or (ra // 3 == rc // 3 and ca // 3 == cc // 3)):
                src.append(c)
                dst.append(a)
    return src, dst


class _Rrn(_nn.Module):
    """A recurrent relational network: the digit given (or blank) and the row and column tables embedded and mapped
    by an MLP; each step a message MLP on both ends of every peer link, the messages summed into each cell by
    index_add (in the messages' dtype), a node MLP on the input and the sum, an LSTM cell written out, and the
    digit logits from its hidden state."""

    def __init__(self, d):
        super().__init__()
        self.digit, self.row, self.col = _nn.Embedding(10, d), _nn.Embedding(9, d), _nn.Embedding(9, d)
        self.inp = mlp(d, d, d, layers=3)
        self.msg = mlp(2 * d, d, d, layers=3)
        self.node = mlp(2 * d, d, d, layers=2)
        self.x2g, self.h2g = _nn.Linear(d, 4 * d), _nn.Linear(d, 4 * d, bias=False)
        self.out = _nn.Linear(d, 9)
        self.d = d

    def forward(self, digits, rows, cols, src, dst, n_iter):
        x = self.inp(self.digit(digits) + self.row(rows) + self.col(cols))
        h = x
        c = torch.zeros(x.shape, device=x.device)
        outs = []
        for _ in range(n_iter):
            m = self.msg(torch.cat([h.index_select(0, src), h.index_select(0, dst)], -1))
            agg = m.new_zeros(h.shape[0], m.shape[-1]).index_add_(0, dst, m)
            u = self.node(torch.cat([x, agg.to(x.dtype)], -1))
            gi, gf, gg, go = (self.x2g(u) + self.h2g(h)).float().chunk(4, -1)
            c = torch.sigmoid(gf) * c + torch.sigmoid(gi) * torch.tanh(gg)
            h = (torch.sigmoid(go) * torch.tanh(c)).to(u.dtype)
            outs.append(self.out(h).float())
        return outs


@_workload("sudoku solving training (random init, a recurrent relational network): 16-64 grids a step (drawn) with 17-40 givens each (drawn per step, the given cells drawn on the device), one batched graph of 81 cells a grid and the 1,620 directed peer links of each grid (row, column and box); digit, row and column tables (width 96) and a 3-layer input MLP, then 8-14 recurrent steps (drawn per step): a 3-layer message MLP on both ends of every link, the messages summed into each cell by index_add in the messages' dtype, a node MLP and an LSTM cell written out; the cross-entropy of every step's digit logits against a drawn solution, averaged over the steps; Adam with weight decay, clipping, bf16 autocast, 265 steps; the loss read back every 10 steps and every 53 steps a no-grad pass over 64 grids of 17 givens with 16 recurrent steps and the cell accuracy read back")
def sudoku_recurrent_relational_train(rng):
    d = _smoke(96, 16)
    model = _Rrn(d).cuda()
    steps = _smoke(265, 3)
    opt = torch.optim.Adam(model.parameters(), lr=2e-4, weight_decay=1e-4)
    s_host, d_host = _sudoku_edges()
    src1, dst1 = torch.tensor(s_host, device="cuda"), torch.tensor(d_host, device="cuda")
    cell = torch.arange(81, device="cuda")

    def grids(b, givens):
        off = (torch.arange(b, device="cuda") * 81).repeat_interleave(src1.shape[0])
        src, dst = src1.repeat(b) + off, dst1.repeat(b) + off
        sol = torch.randint(0, 9, (b, 81), device="cuda")
        rank = torch.rand(b, 81, device="cuda").argsort(-1).argsort(-1)
        digits = torch.where(rank < givens, sol + 1, torch.zeros_like(sol)).flatten()
        rows, cols = (cell // 9).repeat(b), (cell % 9).repeat(b)
        return digits, rows, cols, src, dst, sol.flatten()

    for step in range(steps):
        model.train()
        b, givens, n_iter = rng.randint(_smoke(16, 2), _smoke(64, 3)), rng.randint(17, 40), rng.randint(
            _smoke(8, 2), _smoke(14, 3))
        digits, rows, cols, src, dst, sol = grids(b, givens)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            outs = model(digits, rows, cols, src, dst, n_iter)
        loss = torch.stack([_F.cross_entropy(o, sol) for o in outs]).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        if step % 10 == 0:
            loss.detach().tolist()
        del digits, rows, cols, src, dst, sol, outs, loss
        if (step + 1) % _smoke(53, 2) == 0:
            model.eval()
            with torch.no_grad():
                digits, rows, cols, src, dst, sol = grids(_smoke(64, 2), 17)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    outs = model(digits, rows, cols, src, dst, _smoke(16, 3))
                acc = (outs[-1].argmax(-1) == sol).float().mean()
            acc.tolist()
            del digits, rows, cols, src, dst, sol, outs, acc


# ---------------------------------------------------------------- chess game commentary (cached decoder, sampling)


class _CommentDecoder(_nn.Module):
    """A board encoder (13 piece kinds and 64 squares embedded, plus a token of 8 game-state features, through
    pre-norm blocks) and a decoder of pre-norm blocks with causal self-attention over a key/value cache and
    cross-attention over the encoded board, run one token at a time."""

    def __init__(self, vocab, d, heads, enc_layers, dec_layers, max_len):
        super().__init__()
        self.piece, self.square = _nn.Embedding(13, d), _nn.Embedding(64, d)
        self.state = _nn.Linear(8, d)
        self.enc = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(enc_layers))
        self.en = _nn.LayerNorm(d)
        self.tok, self.pos = _nn.Embedding(vocab, d), _nn.Embedding(max_len, d)
        self.n1 = _nn.ModuleList(_nn.LayerNorm(d) for _ in range(dec_layers))
        self.qkv = _nn.ModuleList(_nn.Linear(d, 3 * d) for _ in range(dec_layers))
        self.o1 = _nn.ModuleList(_nn.Linear(d, d) for _ in range(dec_layers))
        self.n2 = _nn.ModuleList(_nn.LayerNorm(d) for _ in range(dec_layers))
        self.q = _nn.ModuleList(_nn.Linear(d, d) for _ in range(dec_layers))
        self.kv = _nn.ModuleList(_nn.Linear(d, 2 * d) for _ in range(dec_layers))
        self.o2 = _nn.ModuleList(_nn.Linear(d, d) for _ in range(dec_layers))
        self.n3 = _nn.ModuleList(_nn.LayerNorm(d) for _ in range(dec_layers))
        self.ff = _nn.ModuleList(mlp(d, 4 * d, d, act=_nn.GELU) for _ in range(dec_layers))
        self.nf = _nn.LayerNorm(d)
        self.head = _nn.Linear(d, vocab, bias=False)
        self.h, self.layers = heads, dec_layers

    def encode(self, pieces, state):
        sq = torch.arange(64, device=pieces.device)
        x = torch.cat([self.state(state)[:, None], self.piece(pieces) + self.square(sq)[None]], 1)
        for blk in self.enc:
            x = blk(x)
        x = self.en(x)
        return [self.kv[i](x).chunk(2, -1) for i in range(self.layers)]

    def step(self, tok, t, cache, mem):
        """One token for every row at position t: writes its keys and values into cache (per layer, (B, heads,
        max_len, dh) each) and returns the next-token logits."""
        b = tok.shape[0]
        x = (self.tok(tok) + self.pos.weight[t])[:, None]
        for i in range(self.layers):
            q, k, v = self.qkv[i](self.n1[i](x)).unflatten(-1, (3, self.h, -1)).permute(2, 0, 3, 1, 4)
            kc, vc = cache[i]
            kc[:, :, t:t + 1] = k.to(kc.dtype)
            vc[:, :, t:t + 1] = v.to(vc.dtype)
            a = _F.scaled_dot_product_attention(q.to(kc.dtype), kc[:, :, :t + 1], vc[:, :, :t + 1])
            x = x + self.o1[i](a.transpose(1, 2).reshape(b, 1, -1))
            mk, mv = mem[i]
            x = x + self.o2[i](_mha(self.q[i](self.n2[i](x)), mk, mv, self.h))
            x = x + self.ff[i](self.n3[i](x))
        return self.head(self.nf(x[:, 0])).float()


@_workload("chess game commentary sampling (random init, a board encoder and a cached transformer decoder): 13-14 requests (drawn) of 1-12 positions (drawn) to comment on, each position's 64 squares (13 piece kinds) and 8 game-state features drawn on the device; an encoder of 3 pre-norm blocks (width 384, 6 heads) over the 65 board tokens, a decoder of 6 pre-norm blocks with causal self-attention over a key/value cache (bf16, preallocated for 128 positions, written in place) and cross-attention over the encoded board, a 128-row position table and an 8,000-token vocabulary; 24-120 new tokens per request (drawn) generated one at a time after a start token, nucleus sampling (top-p 0.8-0.95 and temperature 0.6-1.1, drawn per request, by sort, cumsum, scatter and Gumbel-max), rows past their end token kept at padding by torch.where; under bf16 autocast; each request's tokens read back once")
def chess_commentary_decoder_sample(rng):
    vocab, d, heads = _smoke(8000, 64), _smoke(384, 32), _smoke(6, 2)
    enc_layers, dec_layers, max_len = _smoke(3, 1), _smoke(6, 2), _smoke(128, 16)
    model = _CommentDecoder(vocab, d, heads, enc_layers, dec_layers, max_len).cuda().eval()
    model.requires_grad_(False)
    bos, eos, pad = 1, 2, 0
    dh = d // heads
    nreq = rng.randint(_smoke(13, 2), _smoke(14, 3))
    for _ in range(nreq):
        b, n_new = rng.randint(1, _smoke(12, 3)), rng.randint(_smoke(24, 3), max_len - 8)
        top_p, temp = rng.uniform(0.8, 0.95), rng.uniform(0.6, 1.1)
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            pieces = torch.randint(0, 13, (b, 64), device="cuda")
            state = torch.randn(b, 8, device="cuda")
            mem = model.encode(pieces, state)
            cache = [(torch.zeros(b, heads, max_len, dh, device="cuda", dtype=torch.bfloat16),
                      torch.zeros(b, heads, max_len, dh, device="cuda", dtype=torch.bfloat16))
                     for _ in range(dec_layers)]
            tok = torch.full((b,), bos, dtype=torch.long, device="cuda")
            done = torch.zeros(b, dtype=torch.bool, device="cuda")
            out = []
            for t in range(n_new):
                logits = model.step(tok, t, cache, mem) / temp
                srt, idx = logits.sort(-1, descending=True)
                p = srt.softmax(-1)
                drop = (p.cumsum(-1) - p) > top_p
                drop = drop.scatter(1, idx, drop)
                g = -torch.log(-torch.log(torch.rand_like(logits).clamp(1e-9, 1.0 - 1e-9)))
                nxt = (logits.masked_fill(drop, -1e4) + g).argmax(-1)
                nxt = torch.where(done, torch.full_like(nxt, pad), nxt)
                done = done | (nxt == eos)
                out.append(nxt)
                tok = nxt
            res = torch.stack(out, 1)
        res.tolist()
        del pieces, state, mem, cache, tok, done, out, logits, srt, idx, p, drop, g, nxt, res

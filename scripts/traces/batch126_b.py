"""The hundred-and-twenty-sixth batch of held-out workloads for record.py, second half (see batch126.py): board games,
chess and puzzles, written in torch alone. Board-state recognition fine-tuning (a residual convnet over photographs of
chess boards of drawn resolutions, the lower stages frozen, each of the 64 squares' piece classified from the feature
map pooled to 8 x 8 and the board's four corners regressed), a chess position evaluation service (an NNUE-style
network: a sparse feature transformer over the active piece-square features of both perspectives, summed from an
embedding table, incremental accumulator updates for each root's child moves, a clipped-ReLU MLP with output buckets
by piece count, the best child by negamax), a Go game review service (a residual convnet with global pooling bias
blocks over every position of drawn numbers of uploaded game records of drawn lengths on 9 x 9, 13 x 13 or 19 x 19
boards, the win-rate curve, the played move's policy probability and the largest mistakes) and Rubik's cube cost-to-go
training (a DeepCubeA-style residual MLP trained by approximate value iteration on states scrambled on the device by
drawn random walks, each state's 12 children expanded by gather and scored by a target network).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the two services), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or masked_fill; no
boolean-mask indexing; results read back only at logging points or once per request.
nnue_position_eval_serve and go_game_review_serve upload their inputs on a side stream (two reused pinned host
buffers, one request ahead, through workload_helpers.SideUploads.ahead); the other two are single-stream. The models
run under bf16 autocast. Every embedding and position table is sized for the longest padded length that can be drawn.
"""

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, SideUploads, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- board-state recognition from photographs (convnet)


class _BoardReader(_nn.Module):
    """A 7x7 stride-2 stem and max pooling, four stages of residual blocks (the first two frozen in fine-tuning),
    the last feature map pooled to 8 x 8 and a 1x1 convolution head to 13 square classes (empty and 12 pieces) plus
    an occupancy logit, and an MLP from the global mean to the 8 corner coordinates."""

    def __init__(self, widths, depth):
        super().__init__()
        c0 = widths[0]
        self.stem = _nn.Sequential(_nn.Conv2d(3, c0, 7, 2, 3, bias=False), _nn.BatchNorm2d(c0), _nn.ReLU(),
                                   _nn.MaxPool2d(3, 2, 1))
        stages, cin = [], c0
        for i, c in enumerate(widths):
            stages.append(_nn.Sequential(*[BasicResBlock(cin if j == 0 else c, c, 2 if (i > 0 and j == 0) else 1)
                                           for j in range(depth)]))
            cin = c
        self.stages = _nn.ModuleList(stages)
        self.square = _nn.Sequential(_nn.Conv2d(cin, cin, 1), _nn.ReLU(), _nn.Conv2d(cin, 14, 1))
        self.corner = mlp(cin, 256, 8)

    def forward(self, x):
        f = self.stem(x)
        for s in self.stages:
            f = s(f)
        sq = self.square(_F.adaptive_avg_pool2d(f, 8)).float()
        return sq[:, :13], sq[:, 13], torch.sigmoid(self.corner(f.mean((2, 3))).float())


@_workload("board-state recognition fine-tuning (random init standing in for a pretrained residual convnet): 8-32 photographs of chess boards a step (drawn, at most 16 x 384 x 384 pixels a step) at 256 x 256, 320 x 320 or 384 x 384 px (drawn per step) drawn on the device in channels-last with brightness and contrast jitter; a 7x7 stride-2 stem with max pooling, four stages of two residual blocks (64, 128, 256, 384 channels) with the stem and first two stages frozen (batch norm in eval), the last map pooled to 8 x 8 and a 1x1 head to 13 classes per square (empty and 12 pieces, drawn targets) and an occupancy logit, and an MLP from the global mean to the 8 corner coordinates; label-smoothed cross-entropy per square, BCE on occupancy and L1 on the corners; AdamW on the unfrozen parameters with a warm-up, clipping, bf16 autocast, 800 steps; the losses read back every 25 steps and every 160 steps a no-grad pass over 16 boards of 320 x 320 with the square accuracy and the whole-board accuracy read back")
def board_photo_square_recognition_finetune(rng):
    widths, depth = _smoke([64, 128, 256, 384], [4, 8, 8, 8]), _smoke(2, 1)
    model = _BoardReader(widths, depth).cuda().to(memory_format=torch.channels_last)
    frozen = [model.stem, model.stages[0], model.stages[1]]
    for m in frozen:
        m.requires_grad_(False)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=2e-4, weight_decay=0.05)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 40))
    res_opts = _smoke([256, 320, 384], [32, 48])
    budget = _smoke(16 * 384 * 384, 3 * 48 * 48)

    def photos(b, r):
        x = torch.randn(b, 3, r, r, device="cuda")
        x = x * (0.8 + 0.4 * torch.rand(b, 1, 1, 1, device="cuda")) + 0.2 * torch.randn(b, 1, 1, 1, device="cuda")
        x = x.contiguous(memory_format=torch.channels_last)
        occ = torch.rand(b, 8, 8, device="cuda") < 0.4
        piece = torch.where(occ, torch.randint(1, 13, (b, 8, 8), device="cuda"), torch.zeros(b, 8, 8,
                                                                                              dtype=torch.long,
                                                                                              device="cuda"))
        corners = torch.rand(b, 8, device="cuda") * 0.2 + torch.tensor([0.1, 0.1, 0.7, 0.1, 0.7, 0.7, 0.1, 0.7],
                                                                        device="cuda")
        return x, piece, occ.float(), corners

    steps = _smoke(800, 3)
    for step in range(steps):
        model.train()
        for m in frozen:
            m.eval()
        r = rng.choice(res_opts)
        b = min(rng.randint(_smoke(8, 2), _smoke(32, 4)), budget // (r * r))
        x, piece, occ, corners = photos(b, r)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            sq, oc, cor = model(x)
        l_sq = _F.cross_entropy(sq, piece, label_smoothing=0.05)
        l_occ = _F.binary_cross_entropy_with_logits(oc, occ)
        l_cor = _F.l1_loss(cor, corners)
        loss = l_sq + 0.5 * l_occ + l_cor
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        if step % 25 == 0:
            torch.stack([l_sq.detach(), l_occ.detach(), l_cor.detach()]).tolist()
        del x, piece, occ, corners, sq, oc, cor, l_sq, l_occ, l_cor, loss
        if (step + 1) % _smoke(160, 2) == 0:
            model.eval()
            with torch.no_grad():
                x, piece, occ, corners = photos(_smoke(16, 2), res_opts[1])
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    sq, oc, cor = model(x)
                hit = sq.argmax(1) == piece
                acc = torch.stack([hit.float().mean(), hit.flatten(1).all(-1).float().mean()])
            acc.tolist()
            del x, piece, occ, corners, sq, oc, cor, hit, acc


# ---------------------------------------------------------------- chess position evaluation (NNUE-style network)


class _Nnue(_nn.Module):
    """A feature transformer (an embedding table of 41,024 piece-square features plus a zero padding row, summed
    over a perspective's active features, with a bias), a clipped ReLU on both perspectives' accumulators (the side
    to move first), and 8 output buckets of a 512-32-32-1 clipped-ReLU MLP chosen by piece count."""

    def __init__(self, n_feat, acc, hid, buckets):
        super().__init__()
        self.ft = _nn.Embedding(n_feat + 1, acc, padding_idx=n_feat)
        self.ft_bias = _nn.Parameter(torch.zeros(acc))
        self.l1, self.l2, self.l3 = _nn.Linear(2 * acc, hid * buckets), _nn.Linear(hid, hid * buckets), _nn.Linear(
            hid, buckets)
        self.hid, self.buckets = hid, buckets

    def accumulate(self, idx):
        """idx (..., 2, slots): the accumulators (..., 2, acc) of both perspectives."""
        return self.ft(idx).sum(-2) + self.ft_bias

    def evaluate(self, accs, stm, bucket):
        """accs (N, 2, acc), stm (N,) 0 or 1, bucket (N,): the evaluation (N,) in centipawn-like units."""
        us = torch.where(stm[:, None], accs[:, 1], accs[:, 0])
        them = torch.where(stm[:, None], accs[:, 0], accs[:, 1])
        x = torch.cat([us, them], -1).clamp(0.0, 1.0)
        sel = bucket[:, None, None].expand(-1, 1, self.hid)
        x = self.l1(x).unflatten(-1, (self.buckets, self.hid)).gather(1, sel)[:, 0].clamp(0.0, 1.0)
        x = self.l2(x).unflatten(-1, (self.buckets, self.hid)).gather(1, sel)[:, 0].clamp(0.0, 1.0)
        return self.l3(x).gather(1, bucket[:, None])[:, 0].float() * 600.0


@_workload("chess position evaluation serving (random init, an NNUE-style network): 5,200-5,300 requests (drawn) of 16-512 root positions (drawn log-uniformly) with 8-40 child-move slots each (drawn per request; each root's number of real children, 1 up to that, drawn on the device, the rest masked), int32 feature indices uploaded on a side stream from two reused pinned host buffers (filled once with indices of 41,024 HalfKP-style features and the padding row, sized for 512 roots) one request ahead (one span, through SideUploads.ahead): 32 active-feature slots per perspective per root and, per child and perspective, 2 added and 2 removed features; the feature transformer (an embedding table of width 256 summed over the slots) gives each root's accumulators, each child's are the root's plus the added rows minus the removed ones (incremental updates), the side to move and a piece-count bucket (of 8) drawn on the device; a clipped-ReLU 512-32-32-1 MLP with the bucket's output rows chosen by gather, under bf16 autocast; each root's static evaluation, its children's evaluations (padded children masked), the best child by negamax (argmax of the negated evaluations) and its score; each request's evaluations and best moves read back once")
def nnue_position_eval_serve(rng):
    n_feat, acc, hid, buckets = _smoke(41024, 512), _smoke(256, 16), _smoke(32, 8), 8
    slots, max_roots, max_kids = 32, _smoke(512, 8), _smoke(40, 6)
    model = _Nnue(n_feat, acc, hid, buckets).cuda().eval()
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    per_root = 2 * slots + max_kids * 2 * 4
    host = [torch.randint(0, n_feat + 1, (max_roots * per_root,), dtype=torch.int32, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)

    nreq = rng.randint(_smoke(5200, 3), _smoke(5300, 4))
    plan = []
    for _ in range(nreq):
        n = max(_smoke(16, 2), min(max_roots, int(2 ** rng.uniform(4, 9))))
        plan.append((n, rng.randint(_smoke(8, 2), max_kids)))

    for (n, k), raw in up.ahead(plan, lambda p: (p[0] * (2 * slots + p[1] * 8),)):
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            idx = raw.long()
            root_idx = idx[:n * 2 * slots].view(n, 2, slots)
            delta = idx[n * 2 * slots:].view(n, k, 2, 2, 2)
            root_acc = model.accumulate(root_idx)
            kid_acc = root_acc[:, None] + model.ft(delta[:, :, :, 0]).sum(-2) - model.ft(delta[:, :, :, 1]).sum(-2)
            stm = torch.rand(n, device="cuda") < 0.5
            bucket = torch.randint(0, buckets, (n,), device="cuda")
            kid_bucket = (bucket[:, None] - (torch.rand(n, k, device="cuda") < 0.2).long()).clamp_min(0)
            n_kids = torch.randint(1, k + 1, (n,), device="cuda")
            static = model.evaluate(root_acc, stm, bucket)
            kids = model.evaluate(kid_acc.flatten(0, 1), (~stm)[:, None].expand(n, k).flatten(),
                                  kid_bucket.flatten()).view(n, k)
            ok = torch.arange(k, device="cuda")[None] < n_kids[:, None]
            neg = (-kids).masked_fill(~ok, -1e6)
            best_score, best = neg.max(-1)
            res = torch.cat([static, best_score, best.float(), kids.masked_fill(~ok, 0.0).flatten()])
        res.tolist()
        del raw, idx, root_idx, delta, root_acc, kid_acc, stm, bucket, kid_bucket, n_kids, static, kids, ok, neg
        del best_score, best, res


# ---------------------------------------------------------------- Go game review (residual convnet, global pooling)


class _GlobalPoolBlock(_nn.Module):
    """A KataGo-style residual block with global pooling: the first convolution's output split, one part's masked
    mean and max over the board mapped to channel biases for the other part, then a second 3x3 convolution."""

    def __init__(self, c, g):
        super().__init__()
        self.b1, self.c1 = _nn.BatchNorm2d(c), _nn.Conv2d(c, c + g, 3, 1, 1, bias=False)
        self.bg = _nn.BatchNorm2d(g)
        self.fc = _nn.Linear(2 * g, c)
        self.b2, self.c2 = _nn.BatchNorm2d(c), _nn.Conv2d(c, c, 3, 1, 1, bias=False)
        self.c = c

    def forward(self, x, mask, area):
        h = self.c1(_F.relu(self.b1(x)) * mask)
        a, g = h[:, :self.c], _F.relu(self.bg(h[:, self.c:])) * mask
        mean = g.sum((2, 3)) / area[:, None]
        mx = (g - (1.0 - mask) * 1e4).amax((2, 3))
        a = a + self.fc(torch.cat([mean, mx], -1))[:, :, None, None]
        return x + self.c2(_F.relu(self.b2(a)) * mask)


class _PlainBlock(_nn.Module):
    """A pre-activation residual block of two 3x3 convolutions, masked to the board."""

    def __init__(self, c):
        super().__init__()
        self.b1, self.c1 = _nn.BatchNorm2d(c), _nn.Conv2d(c, c, 3, 1, 1, bias=False)
        self.b2, self.c2 = _nn.BatchNorm2d(c), _nn.Conv2d(c, c, 3, 1, 1, bias=False)

    def forward(self, x, mask, area):
        return x + self.c2(_F.relu(self.b2(self.c1(_F.relu(self.b1(x)) * mask))) * mask)


class _GoReviewNet(_nn.Module):
    def __init__(self, planes, c, g, blocks):
        super().__init__()
        self.stem = _nn.Conv2d(planes, c, 5, 1, 2, bias=False)
        self.blocks = _nn.ModuleList(_GlobalPoolBlock(c, g) if i % 3 == 2 else _PlainBlock(c)
                                     for i in range(blocks))
        self.bn = _nn.BatchNorm2d(c)
        self.pol = _nn.Conv2d(c, 1, 1)
        self.val = mlp(2 * c, c, 2)

    def forward(self, x, mask):
        area = mask.sum((1, 2, 3))
        h = self.stem(x) * mask
        for blk in self.blocks:
            h = blk(h, mask, area)
        h = _F.relu(self.bn(h)) * mask
        pooled = torch.cat([h.sum((2, 3)) / area[:, None], (h - (1.0 - mask) * 1e4).amax((2, 3))], -1)
        return self.pol(h).float()[:, 0], self.val(pooled).float()


@_workload("Go game review serving (random init, a KataGo-style residual convnet with global pooling): 1,680-1,720 requests (drawn) of 1-6 game records (drawn) on a 9 x 9, 13 x 13 or 19 x 19 board (drawn per request) of 20-100, 40-180 or 60-280 moves by board size (drawn per game, padded to the request's longest), int8 stone positions (every position of every game) and int16 played moves (as byte pairs of the same int8 buffer) uploaded on a side stream from two reused pinned host buffers (filled once, sized for 6 x 280 x 19 x 19 and 6 x 280) one request ahead (two spans, through SideUploads.ahead); 6 input planes (black, white, empty, the board, the side to move, ones); a 5x5 stem of 96 channels and 6 pre-activation residual blocks, every third with global pooling (32 pooled channels, masked mean and max to channel biases), masked to the board, in eval mode under bf16 autocast; per position a policy over the points (pass at a fixed zero logit), a win probability and a score lead; per game the win-rate curve from black's side, the played move's policy probability by gather, each move's win-rate loss for the mover (padded moves masked) and its 3 largest mistakes by topk, and the mean loss; each request's curves, mistakes and losses read back once")
def go_game_review_serve(rng):
    c, g, blocks = _smoke(96, 8), _smoke(32, 4), _smoke(6, 3)
    sizes = _smoke([9, 13, 19], [5, 7])
    lens = _smoke({9: (20, 100), 13: (40, 180), 19: (60, 280)}, {5: (4, 8), 7: (6, 10)})
    max_g, side = _smoke(6, 2), max(sizes)
    max_m = max(hi for _, hi in lens.values())
    model = _GoReviewNet(6, c, g, blocks).cuda().eval()
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(-1, 2, (max_g * max_m * side * side + 2 * max_g * max_m,), dtype=torch.int8,
                          generator=gen).pin_memory() for _ in range(2)]
    up = SideUploads(host)

    nreq = rng.randint(_smoke(1680, 3), _smoke(1720, 4))
    plan = []
    for _ in range(nreq):
        s = rng.choice(sizes)
        glens = [rng.randint(*lens[s]) for _ in range(rng.randint(1, max_g))]
        plan.append((s, glens))

    def spans(p):
        s, glens = p
        n = len(glens) * max(glens)
        return slice(0, n * s * s), slice(max_g * max_m * side * side, max_g * max_m * side * side + 2 * n)

    for (s, glens), stones, mv_raw in up.ahead(plan, spans):
        ng, m = len(glens), max(glens)
        n = ng * m
        with torch.no_grad():
            st = stones.view(n, 1, s, s).float()
            colour = (torch.arange(m, device="cuda") % 2).float().repeat(ng)
            ones = torch.ones(n, 1, s, s, device="cuda")
            x = torch.cat([(st > 0.5).float(), (st < -0.5).float(), (st.abs() < 0.5).float(), ones,
                           colour.view(n, 1, 1, 1).expand(n, 1, s, s), ones], 1)
            mask = ones
            with torch.autocast("cuda", dtype=torch.bfloat16):
                pol, val = model(x, mask)
            logits = torch.cat([pol.flatten(1), torch.zeros(n, 1, device="cuda")], 1)
            mv = mv_raw.view(torch.int16).long().view(n).remainder(s * s + 1)
            p_played = logits.softmax(-1).gather(1, mv[:, None])[:, 0].view(ng, m)
            win = torch.sigmoid(val[:, 0]).view(ng, m)
            black = torch.where(colour.view(ng, m) > 0.5, 1.0 - win, win)
            keep = torch.arange(m, device="cuda")[None] < torch.tensor(glens, device="cuda")[:, None]
            nxt_keep = keep[:, 1:]
            drop = black[:, :-1] - black[:, 1:]
            loss_mover = torch.where(colour.view(ng, m)[:, :-1] > 0.5, -drop, drop).masked_fill(~nxt_keep, 0.0)
            top, at = loss_mover.topk(3, -1)
            mean_loss = loss_mover.sum(-1) / nxt_keep.float().sum(-1).clamp_min(1.0)
            res = torch.cat([black.masked_fill(~keep, 0.0).flatten(), p_played.flatten(), top.flatten(),
                             at.float().flatten(), mean_loss, val[:, 1].flatten()])
        res.tolist()
        del stones, mv_raw, st, colour, ones, x, mask, pol, val, logits, mv, p_played, win, black, keep, nxt_keep
        del drop, loss_mover, top, at, mean_loss, res


# ---------------------------------------------------------------- Rubik's cube cost-to-go (DeepCubeA-style MLP)


class _CubeNet(_nn.Module):
    """One-hot stickers (54 x 6, by comparison with the 6 colours) through two linear layers with batch norm
    (5,000 then 1,000 wide in DeepCubeA; here as given), residual blocks of two linear layers with batch norm, a
    linear to the cost-to-go."""

    def __init__(self, h1, h2, blocks):
        super().__init__()
        self.inp = _nn.Sequential(_nn.Linear(54 * 6, h1), _nn.BatchNorm1d(h1), _nn.ReLU(), _nn.Linear(h1, h2),
                                  _nn.BatchNorm1d(h2), _nn.ReLU())
        self.blocks = _nn.ModuleList(_nn.Sequential(_nn.Linear(h2, h2), _nn.BatchNorm1d(h2), _nn.ReLU(),
                                                    _nn.Linear(h2, h2), _nn.BatchNorm1d(h2)) for _ in range(blocks))
        self.out = _nn.Linear(h2, 1)

    def forward(self, state):
        x = self.inp((state[..., None] == torch.arange(6, device=state.device)).flatten(1).float())
        for blk in self.blocks:
            x = _F.relu(x + blk(x))
        return self.out(x).float()[:, 0]


@_workload("Rubik's cube cost-to-go training (random init, a DeepCubeA-style residual MLP trained by approximate value iteration): 12 fixed sticker permutations of the 54 stickers standing in for the quarter turns (6 drawn at random with their inverses); 1,000-4,000 states a step (drawn), each scrambled from the solved cube by a random walk of 1 to W moves (W 12-30 drawn per step on the host, each state's length drawn on the device; W moves drawn per state, each applied by gather only while the state's walk lasts, by torch.where); each state's 12 children by gather, scored in one batch by a target network (no grad, eval mode), the target 1 plus the children's minimum, 0 for solved states (by comparison with the goal); one-hot stickers through linear layers of 2,000 and 1,000 with batch norm and 4 residual blocks of 1,000, an MSE on the cost-to-go; Adam, clipping, bf16 autocast, 700 steps, the target network refreshed by load_state_dict every 100 steps; the loss read back every 25 steps and every 140 steps a no-grad pass over 2,000 states at depths 1-30 with the mean predicted cost and its mean absolute difference from the scramble depth read back")
def rubiks_cube_value_iteration_train(rng):
    h1, h2, blocks = _smoke(2000, 32), _smoke(1000, 16), _smoke(4, 1)
    model = _CubeNet(h1, h2, blocks).cuda()
    target = _CubeNet(h1, h2, blocks).cuda().eval()
    target.requires_grad_(False)
    target.load_state_dict(model.state_dict())
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    steps, max_depth = _smoke(700, 3), _smoke(30, 4)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    half = torch.stack([torch.randperm(54, generator=gen) for _ in range(6)])
    perms = torch.cat([half, half.argsort(-1)]).cuda()
    goal = torch.arange(54, device="cuda") // 9

    def scramble(b, walk):
        depth = torch.randint(1, walk + 1, (b,), device="cuda")
        state = goal[None].expand(b, 54).contiguous()
        moves = torch.randint(0, 12, (b, walk), device="cuda")
        for i in range(walk):
            moved = state.gather(1, perms[moves[:, i]])
            state = torch.where((depth > i)[:, None], moved, state)
        return state, depth

    for step in range(steps):
        model.train()
        b, walk = rng.randint(_smoke(1000, 8), _smoke(4000, 16)), rng.randint(_smoke(12, 2), max_depth)
        state, _ = scramble(b, walk)
        with torch.no_grad():
            kids = state[:, None].expand(b, 12, 54).gather(2, perms[None].expand(b, 12, 54)).flatten(0, 1)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                v = target(kids).view(b, 12)
            solved = (kids == goal).all(-1).view(b, 12)
            tgt = (1.0 + torch.where(solved, torch.zeros_like(v), v.clamp_min(0.0))).amin(-1)
            tgt = torch.where((state == goal).all(-1), torch.zeros_like(tgt), tgt)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(state)
        loss = _F.mse_loss(pred, tgt)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 25 == 0:
            loss.detach().tolist()
        if (step + 1) % _smoke(100, 2) == 0:
            target.load_state_dict(model.state_dict())
        del state, kids, v, solved, tgt, pred, loss
        if (step + 1) % _smoke(140, 3) == 0:
            model.eval()
            with torch.no_grad():
                state, depth = scramble(_smoke(2000, 8), max_depth)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pred = model(state)
                res = torch.stack([pred.mean(), (pred - depth.float()).abs().mean()])
            res.tolist()
            del state, depth, pred, res

"""The sixty-fourth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch63_b.py are): sports analytics, fitness and human activity from wearables and video on the GPU, written in torch
alone, first half. A broadcast-video player and ball tracking service (clips of drawn resolution streamed in chunks
of frames, packed uint8 frames uploaded from reused pinned host buffers on a side stream one chunk ahead; a
CenterNet-style detector with heatmap non-maximum suppression by max-pooling, top-k detections, ROI features by
grid_sample into a re-identification head, association against a per-clip track gallery by cosine similarity and
distance with exponential-moving-average updates), team-sport trajectory forecasting (game segments of 22 players and
the ball of drawn length, a factorised transformer alternating attention over time and over agents, the future
masked out and reconstructed; rollouts evaluated by ADE/FDE), human activity recognition from multi-sensor IMU
windows (accelerometer and gyroscope channels of three body-worn sensors at sampling rates drawn per batch, resampled
to a common rate, a residual 1-D CNN and a transformer with a per-window label and per-timestep transitions;
leave-one-subject-out evaluations over long recordings in sliding windows), and expected-goals / pass-success
surfaces from event data (player-influence heatmaps and ball and goal geometry built on a pitch grid of drawn
resolution, a SoccerMap-style multiscale fully convolutional network, loss at the pass destination picked by gather,
an xG head for shots; evaluations computing whole-match surfaces in chunks). Same conventions as the earlier batches:
nothing downloaded, data drawn at random on the device (or, for the tracking service, from a few reused pinned host
buffers), `rng` the workload's random.Random for every shape, count and sampled choice, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: counts are fixed
on the host (chunks, detections per frame, track slots, evaluation windows), masks multiplied or added in, no
boolean-mask indexing; losses and metrics are read back only at logging points.
broadcast_player_reid_track_serve uses a side stream (uploads waited on by event, the tensors record_stream'ed); the
others are single-stream. The detector, the trajectory transformer, the IMU network and the pitch network run under
bf16 autocast; the heatmap construction, the tracking arithmetic and the losses are fp32.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch64_b.py's header says the same of its half): see record_new64.sh's header
for each workload's op outputs and peak live bytes counted on PyTorch's meta device at its final real sizes
(RECORD_SMOKE unset) with the helper's runner (now scripts/traces/meta_run.py:
smoke_cpu.py's patching with "cuda" mapped to "meta", readbacks answered with dummies, autocast a no-op so that fp32
sizes are counted, SDPA taking a math path, streams, events and pinned memory no-ops; boolean-mask indexing, which
the meta device cannot size, is avoided), its op outputs counted there (events about 1.8x that count) and its peak
live bytes tracked: broadcast_player_reid_track_serve 275,676 op outputs, 0.27 GB;
team_traj_masked_forecast_train 301,474, 7.16 GB; imu_har_multirate_train 297,831, 1.84 GB;
pitch_control_xg_train 313,732, 3.85 GB.
The CPU smoke run (RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, SideUploads, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- broadcast player and ball tracking service


def _cbr(a, b, stride=1):
    return _nn.Sequential(_nn.Conv2d(a, b, 3, stride, 1, bias=False), _nn.BatchNorm2d(b), _nn.ReLU(inplace=True))


class _CenterDet(_nn.Module):
    """A small stride-4 CenterNet: a strided backbone to 1/16, upsampled and summed back to 1/4; heatmaps for player
    and ball, box size and sub-pixel offset heads; the 1/4 features kept for the re-identification crops."""

    def __init__(self, w):
        super().__init__()
        self.s1 = _nn.Sequential(_cbr(3, w, 2), _cbr(w, w, 2))  # 1/4
        self.s2 = _nn.Sequential(_cbr(w, 2 * w, 2), _cbr(2 * w, 2 * w))  # 1/8
        self.s3 = _nn.Sequential(_cbr(2 * w, 4 * w, 2), _cbr(4 * w, 4 * w))  # 1/16
        self.l3, self.l2 = _nn.Conv2d(4 * w, w, 1), _nn.Conv2d(2 * w, w, 1)
        self.hm = _nn.Sequential(_cbr(w, w), _nn.Conv2d(w, 2, 1))
        self.wh = _nn.Conv2d(w, 4, 1)

    def forward(self, x):
        f1 = self.s1(x)
        f2 = self.s2(f1)
        f3 = self.s3(f2)
        p = self.l2(f2) + _F.interpolate(self.l3(f3), size=f2.shape[-2:], mode="nearest")
        p = f1 + _F.interpolate(p, size=f1.shape[-2:], mode="bilinear", align_corners=False)
        return torch.sigmoid(self.hm(p)), self.wh(p), p


@_workload("broadcast-video player and ball tracking service written by hand (random init CenterNet-style detector and re-identification head): 3-4 match clips (drawn), each at a drawn broadcast resolution (360x640, 432x768 or 540x960) of 210-270 chunks (drawn) of 8 frames; each chunk's uint8 frames copied into one of two reused pinned host buffers and uploaded on a side stream one chunk ahead (waited on by event, record_stream'ed); a stride-4 detector with player and ball heatmaps, max-pool non-maximum suppression and top-24 players and top-2 ball candidates a frame; 16x8 ROI features by grid_sample into a re-ID head (128-dim, normalised); association frame by frame against a 48-slot track gallery by cosine similarity minus a distance penalty, greedy argmax, gallery embeddings and positions updated by an exponential moving average through index_copy; bf16 autocast, no grad; track counts read back every 30 chunks")
def broadcast_player_reid_track_serve(rng):
    res_choices = _smoke([(360, 640), (432, 768), (540, 960)], [(64, 96)])
    hmax = max(h for h, _ in res_choices)
    wmax = max(w for _, w in res_choices)
    fpc = _smoke(8, 2)
    host = [torch.randint(0, 255, (fpc * 3 * hmax * wmax,), dtype=torch.uint8).pin_memory() for _ in range(2)]
    up = SideUploads(host)

    def fetch(i, h, w):
        z, ev = up.upload(i, fpc * 3 * h * w)
        return z, ev, h, w

    mean = torch.tensor([0.45, 0.45, 0.4], device="cuda")[:, None, None]
    npl, nball, slots, dim = _smoke(24, 4), 2, _smoke(48, 8), _smoke(128, 16)
    for clip in range(rng.randint(_smoke(3, 1), _smoke(4, 1))):
        w = rng.choice(_smoke([24, 32], [8]))
        det = _CenterDet(w).cuda().eval().requires_grad_(False)
        reid = _nn.Sequential(_nn.Conv2d(w, 2 * w, 3, padding=1), _nn.ReLU(), _nn.Conv2d(2 * w, 2 * w, 3, padding=1),
                              _nn.ReLU(), _nn.AdaptiveAvgPool2d((4, 2)), _nn.Flatten(),
                              _nn.Linear(16 * w, dim)).cuda().eval().requires_grad_(False)
        h, wd = rng.choice(res_choices)
        nchunks = rng.randint(_smoke(210, 2), _smoke(270, 3))
        gal = torch.zeros(slots, dim, device="cuda")
        gpos = torch.zeros(slots, 2, device="cuda")
        age = torch.zeros(slots, device="cuda")
        oy = torch.linspace(-1, 1, 16, device="cuda")
        ox = torch.linspace(-1, 1, 8, device="cuda")
        nxt = fetch(0, h, wd)
        with torch.no_grad():
            for c in range(nchunks):
                z, ev, h, wd = nxt
                if c + 1 < nchunks:
                    nxt = fetch(c + 1, h, wd)
                cur = torch.cuda.current_stream()
                cur.wait_event(ev)
                z.record_stream(cur)
                x = (z.view(fpc, h, wd, 3).permute(0, 3, 1, 2).float() / 255.0 - mean) / 0.25
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    hm, wh, feat = det(x)
                hm = hm.float()
                hmax_ = _F.max_pool2d(hm, 3, 1, 1)
                peaks = hm * (hm == hmax_).float()
                H4, W4 = peaks.shape[-2:]
                ps, pi = peaks[:, 0].flatten(1).topk(npl)  # players
                bs, bi = peaks[:, 1].flatten(1).topk(nball)  # ball candidates
                cy, cx = (pi // W4).float(), (pi % W4).float()
                sz = wh.float().flatten(2).gather(2, pi[:, None].expand(-1, 4, -1))  # (f, 4, npl)
                bh = (sz[:, 0].abs() + 4.0) / H4
                bw = (sz[:, 1].abs() + 2.0) / W4
                gy = (cy / H4 * 2 - 1)[..., None, None] + bh[..., None, None] * oy[:, None]
                gx = (cx / W4 * 2 - 1)[..., None, None] + bw[..., None, None] * ox[None, :]
                grid = torch.stack([gx.expand(-1, -1, 16, 8), gy.expand(-1, -1, 16, 8)], -1)
                rois = _F.grid_sample(feat.float(), grid.view(fpc, npl * 16, 8, 2), align_corners=False)
                rois = rois.view(fpc, w, npl, 16, 8).transpose(1, 2).reshape(fpc * npl, w, 16, 8)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    emb = _F.normalize(reid(rois).float(), dim=-1).view(fpc, npl, dim)
                pos = torch.stack([cx / W4, cy / H4], -1)
                for f in range(fpc):
                    sim = emb[f] @ gal.t() - 4.0 * torch.cdist(pos[f], gpos) - 0.05 * age[None]
                    best = sim.argmax(1)
                    conf = ps[f][:, None]
                    upd = 0.8 * gal.index_select(0, best) + 0.2 * emb[f] * conf
                    gal = gal.index_copy(0, best, _F.normalize(upd, dim=-1))
                    gpos = gpos.index_copy(0, best, 0.5 * gpos.index_select(0, best) + 0.5 * pos[f])
                    age = (age + 1).index_fill(0, best, 0.0)
                ball = torch.stack([(bi[:, 0] % W4).float() / W4, (bi[:, 0] // W4).float() / H4, bs[:, 0]], -1)
                del z, x, hm, wh, feat, hmax_, peaks, ps, pi, bs, bi, sz, grid, rois, emb, pos, ball
                if c % 30 == 0:
                    (age < 10).float().sum().item()
        del det, reid, gal, gpos, age


# ---------------------------------------------------------------- team-sport trajectory forecasting


class _FactorisedBlock(_nn.Module):
    """Attention over time for each agent, then over the 23 agents at each time step."""

    def __init__(self, d, heads):
        super().__init__()
        self.t, self.a = PreNormBlock(d, heads), PreNormBlock(d, heads)

    def forward(self, x, tmask):
        B, A, T, d = x.shape
        x = self.t(x.reshape(B * A, T, d), tmask).view(B, A, T, d)
        x = self.a(x.transpose(1, 2).reshape(B * T, A, d)).view(B, T, A, d).transpose(1, 2)
        return x


@_workload("team-sport trajectory forecasting written by hand (random init factorised transformer in the manner of baller2vec and agentformer): game segments of 22 players and the ball at 10 Hz, 60-120 frames (drawn per batch) in batches of 8-16 (drawn); per-agent position, velocity, team and role features, 40-60% of the segment's end masked out as the future (drawn per batch) and replaced by a learned mask token, padded frames an additive key mask; 4 blocks (width 256, 8 heads) each alternating attention over time for each agent and over the 23 agents at each frame; L2 on the masked future positions plus a ball-possession head, bf16 autocast, AdamW with warmup and cosine decay, 300 steps; every 100 steps an evaluation on 64 longer segments (150 frames) with 6 sampled latent modes, min-ADE and min-FDE read back")
def team_traj_masked_forecast_train(rng):
    d, heads, A = _smoke(256, 32), _smoke(8, 2), 23
    blocks = _nn.ModuleList(_FactorisedBlock(d, heads) for _ in range(_smoke(4, 1))).cuda()
    inp = mlp(8, d, d, 2, act=_nn.GELU).cuda()
    role = _nn.Embedding(A, d).cuda()
    mtok = _nn.Parameter(torch.zeros(d, device="cuda"))
    zproj = _nn.Linear(16, d).cuda()
    head = mlp(d, d, 2, 2, act=_nn.GELU).cuda()
    poss = _nn.Linear(d, 1).cuda()
    params = [p for m in (blocks, inp, role, zproj, head, poss) for p in m.parameters()] + [mtok]
    steps = _smoke(300, 3)
    opt = torch.optim.AdamW(params, lr=3e-4, weight_decay=0.05)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / 30) * 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))

    def segment(B, T):
        v = torch.randn(B, A, T, 2, device="cuda").cumsum(2) * 0.02
        v[:, 22] *= 4.0  # the ball moves faster
        p = torch.rand(B, A, 1, 2, device="cuda") * torch.tensor([105.0, 68.0], device="cuda") + v.cumsum(2)
        team = torch.zeros(B, A, T, 2, device="cuda")
        team[:, :11, :, 0] = 1
        team[:, 11:22, :, 1] = 1
        feat = torch.cat([p / 50.0, v * 10, team, torch.ones(B, A, T, 1, device="cuda"),
                          torch.zeros(B, A, T, 1, device="cuda")], -1)
        return p, feat

    def forward(feat, fut, tmask, z):
        B, _, T, _ = feat.shape
        x = inp(feat) + role.weight[None, :, None]
        x = x * (1 - fut) + mtok * fut
        x = x + zproj(z)[:, :, None]
        for blk in blocks:
            x = blk(x, tmask)
        return head(x), poss(x[:, 22]).squeeze(-1)

    for step in range(steps):
        blocks.train()
        B = rng.randint(_smoke(8, 2), _smoke(16, 3))
        T = rng.randint(_smoke(60, 8), _smoke(120, 12))
        obs = int(T * rng.uniform(0.4, 0.6))
        valid = [T - rng.randint(0, T // 10) for _ in range(B)]
        p, feat = segment(B, T)
        tv = (torch.arange(T, device="cuda")[None] < torch.tensor(valid, device="cuda")[:, None]).float()
        tmask = ((tv - 1.0) * 1e4).repeat_interleave(A, 0)[:, None, None, :]
        fut = (torch.arange(T, device="cuda") >= obs).float()[None, None, :, None].expand(B, A, T, 1)
        z = torch.randn(B, A, 16, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred, pl = forward(feat, fut, tmask, z)
        w = fut[..., 0] * tv[:, None]
        loss = (((pred.float() - p / 50.0) ** 2).sum(-1) * w).sum() / w.sum().clamp_min(1.0) + \
            _F.binary_cross_entropy_with_logits(pl.float(), (p[:, 22, :, 0] > 52.5).float())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        del p, feat, tv, tmask, fut, z, pred, pl, w
        if step % 20 == 0:
            float(loss)
        if (step + 1) % _smoke(100, 3) == 0:
            blocks.eval()
            B, T, modes = _smoke(64, 2), _smoke(150, 10), _smoke(6, 2)
            obs = T // 2
            with torch.no_grad():
                p, feat = segment(B, T)
                tmask = torch.zeros(B * A, 1, 1, T, device="cuda")
                fut = (torch.arange(T, device="cuda") >= obs).float()[None, None, :, None].expand(B, A, T, 1)
                errs = []
                for m in range(modes):
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        pred, _ = forward(feat, fut, tmask, torch.randn(B, A, 16, device="cuda"))
                    e = (pred.float() * 50.0 - p).norm(dim=-1)[:, :, obs:]
                    errs.append(torch.stack([e.mean(-1), e[..., -1]], -1))
                    del pred, e
                err = torch.stack(errs).min(0).values.mean((0, 1))
                err.tolist()
            del p, feat, tmask, fut, errs, err


# ---------------------------------------------------------------- human activity recognition from IMU windows


class _ResConv1d(_nn.Module):
    def __init__(self, a, b, stride):
        super().__init__()
        self.c1 = _nn.Conv1d(a, b, 5, stride, 2, bias=False)
        self.n1 = _nn.BatchNorm1d(b)
        self.c2 = _nn.Conv1d(b, b, 5, 1, 2, bias=False)
        self.n2 = _nn.BatchNorm1d(b)
        self.sk = _nn.Conv1d(a, b, 1, stride, bias=False)

    def forward(self, x):
        return _F.relu(self.n2(self.c2(_F.relu(self.n1(self.c1(x))))) + self.sk(x))


class _HarNet(_nn.Module):
    def __init__(self, cin, d, heads, layers, ncls):
        super().__init__()
        self.stem = _nn.Sequential(_ResConv1d(cin, 64, 1), _ResConv1d(64, 96, 2), _ResConv1d(96, d, 2))
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.cls = _nn.Linear(d, ncls)
        self.trans = _nn.Linear(d, 1)
        self.d = d

    def forward(self, x, mask=None):
        h = self.stem(x).transpose(1, 2)
        L = h.shape[1]
        pos = torch.arange(L, device=x.device, dtype=torch.float32)[:, None]
        fr = torch.exp(-math.log(10000) * torch.arange(self.d // 2, device=x.device) / (self.d // 2))
        h = h + torch.cat([torch.sin(pos * fr), torch.cos(pos * fr)], 1).to(h.dtype)
        for blk in self.blocks:
            h = blk(h, mask)
        h = self.norm(h)
        return self.cls(h.mean(1)), self.trans(h).squeeze(-1)


@_workload("human activity recognition from multi-sensor IMU windows written by hand (random init CNN-transformer): 3 body-worn sensors (wrist, hip, ankle), accelerometer and gyroscope each, 18 channels; each batch at a sampling rate drawn from 25, 50, 100 or 200 Hz and a window of 2-10 s (drawn), resampled on the device to 50 Hz by linear interpolation, random rotation of each sensor's axes and sensor dropout (a sensor zeroed) as augmentation, batches of 64-192 (drawn); three residual 1-D conv blocks (stride 4 in all) and a 4-layer pre-norm transformer (width 192, 6 heads); 18 activity classes with label smoothing plus per-timestep transition BCE; bf16 autocast, AdamW, 480 steps; every 160 steps a leave-one-subject-out evaluation over 3 long recordings of 10-30 minutes (drawn) cut into 5 s windows at 50% overlap by unfold, scored in batches of 1,024 windows, the accuracy read back")
def imu_har_multirate_train(rng):
    cin, d, ncls = 18, _smoke(192, 24), 18
    model = _HarNet(cin, d, _smoke(6, 2), _smoke(4, 1), ncls).cuda()
    steps = _smoke(480, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-3, total_steps=steps)

    def rot(b):
        q = _F.normalize(torch.randn(b, 3, 4, device="cuda"), dim=-1)
        w, x, y, z = q.unbind(-1)
        return torch.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                            2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                            2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1).view(b, 3, 3, 3)

    def signal(b, n):
        base = torch.randn(b, cin, max(n // 16, 2), device="cuda")
        x = _F.interpolate(base, size=n, mode="linear", align_corners=False)
        return x + 0.1 * torch.randn(b, cin, n, device="cuda")

    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(64, 2), _smoke(192, 3))
        hz = rng.choice([25, 50, 100, 200])
        sec = rng.randint(2, _smoke(10, 3))
        x = signal(b, hz * sec)
        x = _F.interpolate(x, size=50 * sec, mode="linear", align_corners=False)
        R = rot(b)  # (b, sensor, 3, 3)
        x = x.view(b, 3, 2, 3, -1)
        x = torch.einsum("bsij,bsmjt->bsmit", R, x).reshape(b, cin, -1)
        keep = (torch.rand(b, 3, 1, device="cuda") > 0.15).float().repeat_interleave(6, 1)
        x = x * keep
        y = torch.randint(0, ncls, (b,), device="cuda")
        ytr = (torch.rand(b, (50 * sec + 3) // 4, device="cuda") < 0.05).float()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits, tr = model(x)
        loss = _F.cross_entropy(logits.float(), y, label_smoothing=0.1) + \
            0.5 * _F.binary_cross_entropy_with_logits(tr.float(), ytr)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        del x, R, keep, y, ytr, logits, tr
        if step % 20 == 0:
            float(loss)
        if (step + 1) % _smoke(160, 3) == 0:
            model.eval()
            with torch.no_grad():
                accs = []
                for subj in range(3):
                    mins = rng.randint(_smoke(10, 1), _smoke(30, 1))
                    n = 50 * 60 * mins // _smoke(1, 5)
                    rec = signal(1, n)[0]
                    win = rec.unfold(1, 250, 125).permute(1, 0, 2)  # (windows, 18, 250)
                    lab = torch.randint(0, ncls, (win.shape[0],), device="cuda")
                    correct = torch.zeros((), device="cuda")
                    for s0 in range(0, win.shape[0], _smoke(1024, 8)):
                        blk = win[s0: s0 + _smoke(1024, 8)].contiguous()
                        with torch.autocast("cuda", dtype=torch.bfloat16):
                            lg, _ = model(blk)
                        correct = correct + (lg.argmax(-1) == lab[s0: s0 + blk.shape[0]]).float().sum()
                        del blk, lg
                    accs.append(correct / win.shape[0])
                    del rec, win, lab
                torch.stack(accs).tolist()


# ---------------------------------------------------------------- expected goals and pass-success surfaces


class _SoccerMap(_nn.Module):
    """SoccerMap (Fernandez and Bornn): features at 1, 1/2 and 1/4 scale, a prediction at each, upsampled and fused."""

    def __init__(self, cin, w):
        super().__init__()

        def two(a, b):
            return _nn.Sequential(_nn.Conv2d(a, b, 5, padding=2), _nn.ReLU(), _nn.Conv2d(b, b, 5, padding=2),
                                  _nn.ReLU())

        self.f1, self.f2, self.f3 = two(cin, w), two(w, 2 * w), two(2 * w, 2 * w)
        self.p1, self.p2, self.p3 = (_nn.Conv2d(c, 1, 1) for c in (w, 2 * w, 2 * w))
        self.u2, self.u3 = _nn.Conv2d(2, 1, 3, padding=1), _nn.Conv2d(2, 1, 3, padding=1)
        self.xg = mlp(2 * w + 4, 64, 1, 3)

    def forward(self, x, shot):
        a = self.f1(x)
        b = self.f2(_F.max_pool2d(a, 2))
        c = self.f3(_F.max_pool2d(b, 2))
        y3 = self.p3(c)
        y2 = self.u3(torch.cat([self.p2(b), _F.interpolate(y3, size=b.shape[-2:], mode="bilinear")], 1))
        y1 = self.u2(torch.cat([self.p1(a), _F.interpolate(y2, size=a.shape[-2:], mode="bilinear")], 1))
        g = torch.cat([c.mean((2, 3)), shot], 1)
        return y1[:, 0], self.xg(g).squeeze(-1)


@_workload("expected-goals and pass-success surface model from event data written by hand (random init SoccerMap-style multiscale fully convolutional network): tracking snapshots of 22 players and the ball at passes and shots, batches of 64-192 events (drawn) rasterised on the device on a pitch grid of drawn resolution (52x34, 105x68 or 156x102): per-team Gaussian influence maps summed over players by broadcasting, velocity-projected influence, ball distance, goal distance and angle, 13 channels; SoccerMap at 1, 1/2 and 1/4 scale (width 32 or 48, drawn) fused to a logit surface; BCE at each pass's destination picked by gather plus an xG head on pooled features and shot geometry; bf16 autocast, Adam, 1,400 steps; every 350 steps a whole-match evaluation of 1,800-2,400 events (drawn) in chunks of 256, full pass-success surfaces softmaxed into pitch-control summaries, the mean read back")
def pitch_control_xg_train(rng):
    w = rng.choice(_smoke([32, 48], [8]))
    model = _SoccerMap(13, w).cuda()
    steps = _smoke(1400, 3)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    grids = _smoke([(34, 52), (68, 105), (102, 156)], [(16, 24)])

    def raster(b, H, W):
        pos = torch.rand(b, 23, 2, device="cuda") * torch.tensor([105.0, 68.0], device="cuda")
        vel = torch.randn(b, 23, 2, device="cuda") * 2.0
        gx = torch.linspace(0, 105, W, device="cuda")
        gy = torch.linspace(0, 68, H, device="cuda")
        grid = torch.stack(torch.meshgrid(gy, gx, indexing="ij")[::-1], -1).view(1, 1, H * W, 2)
        dv = grid - pos[:, :, None]
        d2 = (dv ** 2).sum(-1)
        inf = torch.exp(-d2 / 18.0)
        proj = torch.exp(-((dv - vel[:, :, None]) ** 2).sum(-1) / 18.0)
        chans = [inf[:, :11].sum(1), inf[:, 11:22].sum(1), proj[:, :11].sum(1), proj[:, 11:22].sum(1),
                 d2[:, 22].sqrt() / 100.0, inf[:, 22]]
        goal = torch.tensor([105.0, 34.0], device="cuda")
        gd = grid[0, 0] - goal
        gdist = gd.norm(dim=-1) / 100.0
        gang = torch.atan2(gd[:, 1].abs(), gd[:, 0].abs())
        chans += [gdist.expand(b, -1), gang.expand(b, -1), torch.sin(gang).expand(b, -1),
                  (grid[0, 0, :, 0] / 105.0).expand(b, -1), (grid[0, 0, :, 1] / 68.0).expand(b, -1),
                  (vel[:, 22].norm(dim=-1)[:, None] / 5.0).expand(b, H * W),
                  torch.ones(b, H * W, device="cuda")]
        x = torch.stack(chans, 1).view(b, 13, H, W)
        shot = torch.cat([pos[:, 22] / 100.0, (pos[:, 22] - goal).norm(dim=-1, keepdim=True) / 100.0,
                          torch.rand(b, 1, device="cuda")], 1)
        return x, shot

    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(64, 2), _smoke(192, 3))
        H, W = rng.choice(grids)
        x, shot = raster(b, H, W)
        dest = torch.randint(0, H * W, (b,), device="cuda")
        ok = (torch.rand(b, device="cuda") < 0.8).float()
        goal = (torch.rand(b, device="cuda") < 0.1).float()
        isshot = (torch.rand(b, device="cuda") < 0.15).float()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            surf, xg = model(x, shot)
        at = surf.float().flatten(1).gather(1, dest[:, None]).squeeze(1)
        loss = (_F.binary_cross_entropy_with_logits(at, ok, reduction="none") * (1 - isshot)).mean() + \
            (_F.binary_cross_entropy_with_logits(xg.float(), goal, reduction="none") * isshot).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del x, shot, dest, ok, goal, isshot, surf, xg, at
        if step % 25 == 0:
            float(loss)
        if (step + 1) % _smoke(350, 3) == 0:
            model.eval()
            nev = rng.randint(_smoke(1800, 4), _smoke(2400, 6))
            H, W = grids[-1]
            with torch.no_grad():
                acc = torch.zeros(H * W, device="cuda")
                xgs = []
                for s0 in range(0, nev, _smoke(256, 2)):
                    b = min(_smoke(256, 2), nev - s0)
                    x, shot = raster(b, H, W)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        surf, xg = model(x, shot)
                    acc = acc + torch.softmax(surf.float().flatten(1), 1).sum(0)
                    xgs.append(torch.sigmoid(xg.float()))
                    del x, shot, surf, xg
                (acc / nev).mean().item()
                torch.cat(xgs).sum().item()
            del acc, xgs

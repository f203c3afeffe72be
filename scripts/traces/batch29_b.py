"""The twenty-ninth batch's second half (batch29.py holds the first; written in two to keep files small):
time-series anomaly-detection serving with windows uploaded on a side stream, meta-training of a learned LSTM
optimizer (learning to learn by gradient descent by gradient descent), LayoutLM document token classification
with overflowing windows, and Graph WaveNet traffic forecasting on sampled sensor subgraphs. Same conventions and
plumbing as batch29.py; record.py registers this module right after it, so that the batch's workloads keep their
order. Three are single-stream; ts_anomaly_serve uploads every tick's windows from reused pinned host buffers on
a side stream (the compute stream waiting on the tick's event, the uploaded tensors record_stream'ed).
ts_anomaly_serve and layoutlm_funsd run under bf16 autocast; l2o_lstm_meta and graph_wavenet_traffic in fp32.

Real sizes checked as batch29.py's header says: every workload run whole at its real sizes on the meta device,
its op outputs counted there for the estimates in record_new29.sh's header.
"""

import math

import torch

from batch_common import Batch, upload

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


class _EncLayer(torch.nn.Module):
    """A pre-norm transformer encoder layer (SDPA with an optional mask, GELU MLP, dropout)."""

    def __init__(self, d, heads, post=False, drop=0.1):
        super().__init__()
        nn = torch.nn
        self.h, self.post = heads, post
        self.n1, self.qkv, self.o = nn.LayerNorm(d, eps=1e-12), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.n2, self.fc1, self.fc2 = nn.LayerNorm(d, eps=1e-12), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.drop = nn.Dropout(drop)

    def _attn(self, x, mask):
        q, k, v = (t.unflatten(-1, (self.h, -1)).transpose(1, 2) for t in self.qkv(x).chunk(3, -1))
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.drop(self.o(a.transpose(1, 2).flatten(2)))

    def forward(self, x, mask=None):
        gelu = torch.nn.functional.gelu
        if self.post:  # BERT's post-norm
            x = self.n1(x + self._attn(x, mask))
            return self.n2(x + self.drop(self.fc2(gelu(self.fc1(x)))))
        x = x + self._attn(self.n1(x), mask)
        return x + self.drop(self.fc2(gelu(self.fc1(self.n2(x)))))


# ---------------------------------------------------------------- time-series anomaly detection serving


@_workload("multivariate time-series anomaly-detection serving with a transformer reconstruction model (TranAD-style, Tuli et al. 2022, one decoder, no adversarial phase), written by hand, with every tick's windows uploaded on a side stream: a fleet of up to 2048 monitored machines of 38 sensor channels (SMD-style) that join and leave the service (a few arrivals and departures drawn every tick, 64-1600 active); every tick serves one sampling class, 32-512 of the active machines (drawn) with windows of 64, 96, 128, 192 or 256 steps (drawn), copied by the collate step from a host series pool into one of 3 reused pinned buffers (windows and machine ids) and uploaded on the side stream one tick ahead (the compute stream waiting on the tick's event, the tensors record_stream'ed); a linear embedding with sinusoidal positions, 4 encoder layers (128 wide, 4 heads), a linear reconstruction head; per-step scores from the reconstruction error, each machine's latest score written into its row of a 2048 x 512 device ring of past scores, a per-machine 99th-percentile threshold by sorting its row, the alert flags read back every tick; every 150 ticks an online adaptation of 6 AdamW steps on the last 6 served batches (reconstruction loss); bf16 autocast, 2100 ticks")
def ts_anomaly_serve(rng):
    nn, f = torch.nn, torch.nn.functional
    ch, d, heads, nl = 38, _smoke(128, 16), _smoke(4, 2), _smoke(4, 1)
    smax, hist_len = _smoke(2048, 64), _smoke(512, 16)
    wins = [64, 96, 128, 192, 256] if _smoke(1, 0) else [8, 12, 16]
    wmax, nmax = max(wins), _smoke(512, 8)
    embed = nn.Linear(ch, d).cuda()
    layers = nn.ModuleList(_EncLayer(d, heads) for _ in range(nl)).cuda()
    head = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, ch)).cuda()
    model = nn.ModuleList([embed, layers, head])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    pe = _b.rec._sincos(torch.arange(wmax, device="cuda"), d)
    hist = torch.zeros(smax, hist_len, device="cuda")
    side = torch.cuda.Stream()
    # the host series pool: 256 series of 4096 steps; machine s reads series s % 256 at its own phase
    npool, plen = _smoke(256, 8), _smoke(4096, 64)
    gen = torch.Generator().manual_seed(rng.randrange(2 ** 31))
    pool = torch.randn(npool, plen, ch, generator=gen)
    hosts = [(torch.empty(nmax * wmax * ch).pin_memory(), torch.empty(nmax, dtype=torch.long).pin_memory())
             for _ in range(3)]
    active = list(range(rng.randint(_smoke(300, 4), _smoke(900, 20))))
    free = list(range(len(active), smax))

    def stage(k, tick):
        """The collate step: one sampling class's windows into host buffer k."""
        nonlocal active, free
        for _ in range(rng.randint(0, 6)):  # departures
            if len(active) > _smoke(64, 4):
                free.append(active.pop(rng.randrange(len(active))))
        for _ in range(rng.randint(0, 6)):  # arrivals
            if free and len(active) < _smoke(1600, 40):
                active.append(free.pop(rng.randrange(len(free))))
        w = rng.choice(wins)
        n = min(len(active), rng.randint(_smoke(32, 2), nmax))
        ids = rng.sample(active, n)
        hx, hid = hosts[k]
        buf = hx[:n * w * ch].view(n, w, ch)
        off = (tick * 7) % (plen - w)
        torch.index_select(pool[:, off:off + w], 0, torch.tensor([s % npool for s in ids]), out=buf)
        hid[:n] = torch.tensor(ids)
        return buf, hid[:n]

    def upload_tick(spec):
        buf, hid = spec
        with torch.cuda.stream(side):
            out = (upload(buf), upload(hid))
            ev = side.record_event()
        return out, ev

    def recon(x):
        w = x.shape[1]
        h = embed(x) + pe[:w]
        for layer in layers:
            h = layer(h)
        return head(h)

    recent = []
    nticks = _smoke(2100, 6)
    nxt = upload_tick(stage(0, 0))
    model.eval()
    for tick in range(nticks):
        (x, ids), ev = nxt
        torch.cuda.current_stream().wait_event(ev)
        x.record_stream(torch.cuda.current_stream())
        ids.record_stream(torch.cuda.current_stream())
        nxt = upload_tick(stage((tick + 1) % 3, tick + 1))
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            mu, sd = x.mean(1, keepdim=True), x.std(1, keepdim=True) + 1e-4
            xn = (x - mu) / sd
            err = ((recon(xn).float() - xn) ** 2).mean(-1)  # (n, w)
            score = err[:, -8:].mean(-1)
            hist[ids, tick % hist_len] = score
            thr = hist[ids].sort(-1).values[:, int(0.99 * hist_len)]
            flags = (score > 1.5 * thr) & (err.amax(-1) > 3.0)
        flags.tolist()
        recent = (recent + [xn])[-6:]
        del x, ids, ev, mu, sd, err, score, thr, flags
        if (tick + 1) % _smoke(150, 3) == 0:
            model.train()
            for xb in recent:
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = f.mse_loss(recon(xb).float(), xb)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
                del loss
            model.eval()
        del xn
    side.synchronize()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- learned optimizer meta-training


class _CoordLstm(torch.nn.Module):
    """The coordinatewise learned optimizer of Andrychowicz et al. (2016): a 2-layer LSTM of 20 shared by every
    parameter coordinate, on the preprocessed gradient (log magnitude and sign, p = 10), a linear output scaled by 0.1."""

    def __init__(self, hid):
        super().__init__()
        nn = torch.nn
        self.hid = hid
        self.ih1, self.hh1 = nn.Linear(2, 4 * hid), nn.Linear(hid, 4 * hid, bias=False)
        self.ih2, self.hh2 = nn.Linear(hid, 4 * hid), nn.Linear(hid, 4 * hid, bias=False)
        self.out = nn.Linear(hid, 1)

    @staticmethod
    def _cell(x, h, c, ih, hh):
        i, fg, g, o = (ih(x) + hh(h)).chunk(4, -1)
        c = torch.sigmoid(fg) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c

    def forward(self, grad, state):
        g = grad[:, None]
        lg = torch.log(g.abs() + 1e-8) / 10
        big = (lg >= -1).float()
        x = torch.cat([big * lg - (1 - big), big * torch.sign(g) + (1 - big) * math.exp(10) * g], 1)
        h1, c1, h2, c2 = state
        h1, c1 = self._cell(x, h1, c1, self.ih1, self.hh1)
        h2, c2 = self._cell(h1, h2, c2, self.ih2, self.hh2)
        return 0.1 * self.out(h2).squeeze(1), (h1, c1, h2, c2)


@_workload("meta-training a learned optimizer, learning to learn by gradient descent by gradient descent (Andrychowicz et al. 2016), written by hand: a coordinatewise 2-layer LSTM of 20 (gradient preprocessing by log magnitude and sign) that updates every coordinate of an optimizee's flat parameter vector; optimizees are sigmoid MLPs 784-h-10 (h drawn from 20-64 per task, so 16k-51k coordinates) classifying a device-held synthetic MNIST-sized set of 20000 images labeled by a random teacher, minibatches of 128; every task runs 100-200 inner steps (drawn), each computing the optimizee loss, its gradient by torch.autograd.grad (detached: second derivatives dropped, as the paper does) and the LSTM's update added to the parameters, the losses summed over unrolls of 20 steps and backpropagated through the unroll into the LSTM (truncated BPTT: parameters and LSTM states detached between unrolls), Adam at 1e-3 on the LSTM with gradient clipping; 14 tasks, the meta-loss read back every unroll; every 4 tasks a no-grad comparison on a fresh task of 100 steps (the learned optimizer against Adam at 3e-3), both final losses read back")
def l2o_lstm_meta(rng):
    f = torch.nn.functional
    din, ncls, hid, bsz = _smoke(784, 16), 10, _smoke(20, 4), _smoke(128, 8)
    ndata = _smoke(20000, 256)
    opt_net = _CoordLstm(hid).cuda()
    meta_opt = torch.optim.Adam(opt_net.parameters(), lr=1e-3)
    xs = torch.rand(ndata, din, device="cuda")
    teacher = torch.randn(din, ncls, device="cuda") / math.sqrt(din)
    ys = (xs @ teacher + 0.1 * torch.randn(ndata, ncls, device="cuda")).argmax(-1)
    unroll = _smoke(20, 3)

    def shapes(h):
        return [(din, h), (h,), (h, ncls), (ncls,)]

    def init(h):
        parts = [torch.randn(din * h, device="cuda") / math.sqrt(din), torch.zeros(h, device="cuda"),
                 torch.randn(h * ncls, device="cuda") / math.sqrt(h), torch.zeros(ncls, device="cuda")]
        return torch.cat(parts)

    def task_loss(theta, h):
        ps, o = [], 0
        for s in shapes(h):
            n = math.prod(s)
            ps.append(theta[o:o + n].view(s))
            o += n
        idx = torch.randint(0, ndata, (bsz,), device="cuda")
        z = torch.sigmoid(xs[idx] @ ps[0] + ps[1]) @ ps[2] + ps[3]
        return f.cross_entropy(z, ys[idx])

    def zero_state(p):
        return tuple(torch.zeros(p, hid, device="cuda") for _ in range(4))

    ntasks = _smoke(14, 2)
    for task in range(ntasks):
        h = rng.choice([20, 32, 48, 64]) if _smoke(1, 0) else 4
        theta = init(h).requires_grad_()
        state = zero_state(theta.numel())
        inner = rng.randint(_smoke(100, 4), _smoke(200, 6))
        done = 0
        while done < inner:
            k = min(unroll, inner - done)
            meta_loss = 0
            for _ in range(k):
                loss = task_loss(theta, h)
                (g,) = torch.autograd.grad(loss, theta, retain_graph=True)
                upd, state = opt_net(g.detach(), state)
                theta = theta + upd
                meta_loss = meta_loss + loss
                del g, upd, loss
            meta_opt.zero_grad(set_to_none=True)
            (meta_loss / k).backward()
            torch.nn.utils.clip_grad_norm_(opt_net.parameters(), 1.0)
            meta_opt.step()
            float(meta_loss.detach())
            theta = theta.detach().requires_grad_()
            state = tuple(s.detach() for s in state)
            done += k
            del meta_loss
        del theta, state
        if (task + 1) % _smoke(4, 1) == 0:
            h = rng.choice([20, 32, 48, 64]) if _smoke(1, 0) else 4
            theta = init(h)
            state = zero_state(theta.numel())
            base = init(h).requires_grad_()
            adam = torch.optim.Adam([base], lr=3e-3)
            for _ in range(_smoke(100, 3)):
                th = theta.requires_grad_()
                (g,) = torch.autograd.grad(task_loss(th, h), th)
                with torch.no_grad():
                    upd, state = opt_net(g, state)
                    theta = (th + upd).detach()
                adam.zero_grad(set_to_none=True)
                task_loss(base, h).backward()
                adam.step()
                del th, g, upd
            with torch.no_grad():
                float(task_loss(theta, h)), float(task_loss(base, h))
            del theta, state, base, adam
    torch.cuda.synchronize()


# ---------------------------------------------------------------- LayoutLM token classification


@_workload("form-understanding training with LayoutLM-base (Xu et al. 2020) as its FUNSD token-classification recipe fine-tunes it, written by hand: 12 post-norm layers (768 wide, 12 heads, GELU 3072, 30522-token vocabulary, random init) whose embeddings add 2D layout embeddings of every token's box (x0, y0, x1, y1 from shared 1024-entry x and y tables, plus height and width tables) to word, position and type embeddings; scanned pages of 40-1400 subword tokens (drawn per page, log-uniform) with boxes laid out in lines on the device (x sorted within a line by cumsum of drawn widths), pages over 510 tokens split into overflowing windows of 512 at a stride of 384 (as the tokenizer's return_overflowing_tokens does), windows padded to the batch's longest with a key-padding mask, pages added to the batch until a 4096-token budget; 7 BIO labels on the first subword of each word (the others, [CLS], [SEP] and padding ignored); bf16 autocast, AdamW at 5e-5 with warmup and linear decay, gradient clipping at 1.0, 200 steps, the loss read back every step; every 50 steps an evaluation over 8 batches of 8 full windows (no grad), the per-label true-positive, predicted and gold counts read back")
def layoutlm_funsd(rng):
    nn, f = torch.nn, torch.nn.functional
    d, heads, nl, vocab, nlab = _smoke(768, 32), _smoke(12, 2), _smoke(12, 2), _smoke(30522, 300), 7
    smax, stride, budget = _smoke(512, 32), _smoke(384, 24), _smoke(4096, 96)
    word, posn, typ = nn.Embedding(vocab, d).cuda(), nn.Embedding(smax, d).cuda(), nn.Embedding(2, d).cuda()
    xe, ye, he, we = (nn.Embedding(1024, d).cuda() for _ in range(4))
    enorm = nn.LayerNorm(d, eps=1e-12).cuda()
    layers = nn.ModuleList(_EncLayer(d, heads, post=True) for _ in range(nl)).cuda()
    cls = nn.Linear(d, nlab).cuda()
    model = nn.ModuleList([word, posn, typ, xe, ye, he, we, enorm, layers, cls])
    steps = _smoke(200, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 15) * max(0.0, 1 - s / steps))

    def windows():
        """One page's overflowing windows: token counts of each (at most smax - 2 tokens plus [CLS], [SEP])."""
        n = _loguniform(rng, _smoke(40, 4), _smoke(1400, 80))
        out, s0 = [], 0
        while True:
            out.append(min(smax - 2, n - s0) + 2)
            if s0 + smax - 2 >= n:
                return out
            s0 += stride

    def batch(lens):
        b, t = len(lens), -(-max(lens) // 8) * 8
        lt = torch.tensor(lens, device="cuda")
        p = torch.arange(t, device="cuda")[None]
        valid = p < lt[:, None]
        ids = torch.randint(_smoke(1000, 5), vocab, (b, t), device="cuda") * valid
        # boxes in reading order: ~12 tokens a line, x by cumsum of drawn widths within the line
        wid = torch.randint(15, 80, (b, t), device="cuda")
        line = p // 12
        start = (line * 12).expand(b, t)
        cw = wid.cumsum(1)
        x0 = (cw - wid - cw.gather(1, start) + wid.gather(1, start)).clamp(0, 1000 - 80)
        y0 = (line * 22 + 20).clamp(max=980).expand(b, t)
        box = torch.stack([x0, y0, x0 + wid, y0 + torch.randint(10, 20, (b, t), device="cuda")], -1).clamp(0, 1023)
        box = box * valid[..., None]
        first = (torch.rand(b, t, device="cuda") < 0.65) & valid & (p > 0) & (p < lt[:, None] - 1)
        labels = torch.randint(0, nlab, (b, t), device="cuda").masked_fill(~first, -100)
        return ids, box, valid, labels

    def forward(ids, box, valid):
        b, t = ids.shape
        x = word(ids) + posn(torch.arange(t, device="cuda")) + typ(torch.zeros_like(ids))
        x = x + xe(box[..., 0]) + ye(box[..., 1]) + xe(box[..., 2]) + ye(box[..., 3])
        x = x + he(box[..., 3] - box[..., 1]) + we(box[..., 2] - box[..., 0])
        x = f.dropout(enorm(x), 0.1, model.training)
        mask = valid[:, None, None, :]
        for layer in layers:
            x = layer(x, mask)
        return cls(x)

    for step in range(steps):
        lens = []
        while True:
            page = windows()
            if lens and max(lens + page) * (len(lens) + len(page)) > budget:
                break
            lens += page
            if max(lens) * len(lens) > budget:
                break
        ids, box, valid, labels = batch(lens)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = forward(ids, box, valid)
            loss = f.cross_entropy(logits.float().flatten(0, 1), labels.flatten(), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        float(loss.detach())
        del ids, box, valid, labels, logits, loss
        if (step + 1) % _smoke(50, 3) == 0:
            model.eval()
            counts = torch.zeros(3, nlab, device="cuda")
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for _ in range(_smoke(8, 1)):
                    ids, box, valid, labels = batch([smax] * _smoke(8, 2))
                    pred = forward(ids, box, valid).argmax(-1)
                    gw = (labels >= 0).float()
                    oh_p = f.one_hot(pred, nlab).float() * gw[..., None]
                    oh_g = f.one_hot(labels.clamp(min=0), nlab).float() * gw[..., None]
                    counts += torch.stack([(oh_p * oh_g).sum((0, 1)), oh_p.sum((0, 1)), oh_g.sum((0, 1))])
                    del ids, box, valid, labels, pred, gw, oh_p, oh_g
            counts.tolist()
            model.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- Graph WaveNet traffic forecasting


class _GwnLayer(torch.nn.Module):
    """One Graph WaveNet layer: a gated dilated temporal conv, a skip conv of the last step, a diffusion graph conv
    over the supports (2 hops each) and a residual, then BatchNorm."""

    def __init__(self, c, skip, dil, nsup):
        super().__init__()
        nn = torch.nn
        self.filt = nn.Conv2d(c, c, (1, 2), dilation=(1, dil))
        self.gate = nn.Conv2d(c, c, (1, 2), dilation=(1, dil))
        self.skip = nn.Conv2d(c, skip, 1)
        self.mlp = nn.Conv2d(c * (1 + 2 * nsup), c, 1)
        self.bn = nn.BatchNorm2d(c)

    def forward(self, x, supports, train):
        h = torch.tanh(self.filt(x)) * torch.sigmoid(self.gate(x))
        s = self.skip(h[..., -1:])
        outs = [h]
        for a in supports:
            x1 = torch.einsum("ncvl,vw->ncwl", h, a)
            x2 = torch.einsum("ncvl,vw->ncwl", x1, a)
            outs += [x1, x2]
        g = torch.nn.functional.dropout(self.mlp(torch.cat(outs, 1)), 0.3, train)
        return self.bn(g + x[..., -g.shape[-1]:]), s


@_workload("traffic forecasting training with Graph WaveNet (Wu et al. 2019), written by hand, on sampled subgraphs of a large road-sensor network (as LargeST-scale training samples them): 2000 sensors at random 2D positions with a thresholded Gaussian-kernel distance adjacency (dense on the device) and a speed/time-of-day series of 8000 five-minute steps held on the device; every step samples 150-1000 sensors (drawn) and a batch set by a 16000 sensor-window budget (so 16-106 windows), gathers 12 input and 12 target steps per window, builds the subgraph's forward and backward transition matrices and the adaptive adjacency softmax(relu(E1 E2^T)) from 10-dim node embeddings; a 1x1 start conv to 32 channels, 8 layers (4 blocks of dilations 1, 2) of gated dilated temporal convs, diffusion graph convs over the 3 supports (2 hops each, einsum) and residuals with BatchNorm, skip convs to 256 summed, a 2-layer 1x1 output head to the 12-step horizon; masked MAE (zero targets weighted out), Adam at 1e-3 with weight decay, gradient clipping at 5.0, 320 steps, the loss read back every 10 steps; every 80 steps an evaluation over the whole 2000-sensor graph (no grad) for 6 batches of 8 windows, per-horizon MAE read back")
def graph_wavenet_traffic(rng):
    nn, f = torch.nn, torch.nn.functional
    nfull, tlen, c, skip_c, emb_d = _smoke(2000, 60), _smoke(8000, 200), _smoke(32, 8), _smoke(256, 16), 10
    hor, budget = 12, _smoke(16000, 120)
    xy = torch.rand(nfull, 2, device="cuda")
    dist = torch.cdist(xy, xy)
    sigma = dist.std()
    adj = torch.exp(-(dist / sigma) ** 2)
    adj = adj * (adj > 0.9).float()
    del dist
    tod = (torch.arange(tlen, device="cuda") % 288).float() / 288
    speed = (60 + 10 * torch.randn(nfull, tlen, device="cuda")).clamp(min=0)
    speed = speed * (torch.rand(nfull, tlen, device="cuda") > 0.02).float()  # missing readings are zeros
    series = torch.stack([(speed - 55) / 10, tod[None].expand(nfull, tlen)], 0)  # (2, N, T)
    e1 = nn.Parameter(torch.randn(nfull, emb_d, device="cuda"))
    e2 = nn.Parameter(torch.randn(emb_d, nfull, device="cuda"))
    start = nn.Conv2d(2, c, 1).cuda()
    layers = nn.ModuleList(_GwnLayer(c, skip_c, dil, 3) for _ in range(4) for dil in (1, 2)).cuda()
    end1, end2 = nn.Conv2d(skip_c, 512, 1).cuda(), nn.Conv2d(512, hor, 1).cuda()
    model = nn.ModuleList([start, layers, end1, end2])
    params = list(model.parameters()) + [e1, e2]
    opt = torch.optim.Adam(params, lr=1e-3, weight_decay=1e-4)

    def supports(idx):
        a = adj[idx][:, idx]
        fwd = a / a.sum(1, keepdim=True).clamp(min=1e-6)
        bwd = a.t() / a.t().sum(1, keepdim=True).clamp(min=1e-6)
        adp = torch.softmax(torch.relu(e1[idx] @ e2[:, idx]), 1)
        return [fwd, bwd, adp]

    def windows(idx, t0):
        """Inputs (B, 2, N, 13) (left-padded by one step to the receptive field) and targets (B, N, 12)."""
        tt = t0[:, None] + torch.arange(2 * hor, device="cuda")[None]  # (B, 24)
        w = series[:, idx].index_select(2, tt.flatten()).view(2, len(idx), t0.shape[0], 2 * hor)
        w = w.permute(2, 0, 1, 3)  # (B, 2, N, 24)
        x = f.pad(w[..., :hor], (1, 0))
        y = speed[idx].index_select(1, tt[:, hor:].flatten()).view(len(idx), t0.shape[0], hor).permute(1, 0, 2)
        return x, y

    def forward(x, sup, train):
        h = start(x)
        skip = 0
        for layer in layers:
            h, s = layer(h, sup, train)
            skip = s + skip
        out = end2(torch.relu(end1(torch.relu(skip))))  # (B, 12, N, 1)
        return (out.squeeze(-1) * 10 + 55).transpose(1, 2)  # (B, N, 12)

    steps = _smoke(320, 3)
    for step in range(steps):
        n = rng.randint(_smoke(150, 8), _smoke(1000, 30))
        b = max(2, budget // n)
        idx = torch.randperm(nfull, device="cuda")[:n]
        t0 = torch.randint(0, tlen - 2 * hor, (b,), device="cuda")
        x, y = windows(idx, t0)
        sup = supports(idx)
        pred = forward(x, sup, True)
        wgt = (y > 0).float()
        loss = ((pred - y).abs() * wgt).sum() / wgt.sum().clamp(min=1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 5.0)
        opt.step()
        if step % 10 == 0:
            float(loss.detach())
        del idx, t0, x, y, sup, pred, wgt, loss
        if (step + 1) % _smoke(80, 2) == 0:
            model.eval()
            with torch.no_grad():
                idx = torch.arange(nfull, device="cuda")
                sup = supports(idx)
                err = torch.zeros(hor, device="cuda")
                for _ in range(_smoke(6, 1)):
                    t0 = torch.randint(0, tlen - 2 * hor, (_smoke(8, 2),), device="cuda")
                    x, y = windows(idx, t0)
                    wgt = (y > 0).float()
                    err += ((forward(x, sup, False) - y).abs() * wgt).sum((0, 1)) / wgt.sum((0, 1)).clamp(min=1)
                    del t0, x, y, wgt
                err.tolist()
                del idx, sup, err
            model.train()
    torch.cuda.synchronize()

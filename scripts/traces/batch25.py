"""The twenty-fifth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch24_b.py are). Same conventions: models built from configs (transformers, torchvision or hand-written
torch) with random weights, nothing downloaded, `rng` the workload's random.Random, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. All four are single-stream.

record.py calls `register(<its own module object>)` once, just before main(), after batch24_b's: every workload
below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it reaches
record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch25_b.py's header says the same of its half): every workload of this
batch was run whole, at its real sizes (RECORD_SMOKE unset), on PyTorch's meta device: smoke_cpu.py's patching
with "cuda" mapped to "meta" instead of the CPU (modules' .cuda() moving them to meta), readbacks (float, item,
tolist, cpu) answered with dummies, autocast a no-op there (so fp32 sizes are counted where the GPU autocasts).
Two ops with no meta path were stood in there only by same-shaped decompositions: torch.istft (its window check
reads the data) by irfft, window, fold and the envelope division; nn.LSTM (one cuDNN call on the GPU, a
step-at-a-time composite off it) by one projection a layer. That runs every reshape, slice, pad, FFT and matmul
of every step at the real shapes (calm_early_exit's static KV caches for prompts of 64-1024 tokens and its exits
and state propagation at every drawn layer; fno_ns_train's spectral corners at 64, 128 and 256 px and the 512 px
zero-shot evaluation; dccrn_enhance's six stride-2 frequency halvings of 256 bins, the transposed convs' output
padding and the skip concatenations for clips of 2-6 s and 4-12 s validation utterances; lama_inpaint's FFC
blocks at 256 px training crops and the 512-1024 px evaluations), and counted its op outputs at the real sizes
(events about twice that count). Counted there: calm_early_exit 181k op outputs with 16 requests (26 now: about
0.59M events); fno_ns_train 245k with 120 steps (150 now: 0.6M); dccrn_enhance 364k with 360 steps (300 now:
0.61M); lama_inpaint 351k with 100 steps (88 now: 0.62M). Peaks from sizes and the meta run's live bytes,
roughly: 1.5, 2.8, 6 and 5.5 GB.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this batch's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls


# ---------------------------------------------------------------- CALM-style early-exit LM generation


class _CalmLayer(torch.nn.Module):
    """A pre-norm decoder layer (fused QKV, GELU MLP) that reads and writes a static KV cache."""

    def __init__(self, d, heads, ff):
        super().__init__()
        nn = torch.nn
        self.d, self.h = d, heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.o = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d, bias=False)
        self.fc1, self.fc2 = nn.Linear(d, ff), nn.Linear(ff, d)

    def _heads(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.h, -1).transpose(1, 2)

    def write_kv(self, x, kc, vc, t0):
        """CALM's state propagation: an exited token's hidden state gives this (skipped) layer's keys and values."""
        k, v = torch.nn.functional.linear(self.ln1(x), self.qkv.weight[self.d:]).chunk(2, -1)
        kc[:, :, t0:t0 + x.shape[1]] = self._heads(k)
        vc[:, :, t0:t0 + x.shape[1]] = self._heads(v)

    def forward(self, x, kc, vc, t0, mask):
        b, n, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).chunk(3, -1)
        kc[:, :, t0:t0 + n] = self._heads(k)
        vc[:, :, t0:t0 + n] = self._heads(v)
        a = torch.nn.functional.scaled_dot_product_attention(self._heads(q), kc[:, :, :t0 + n], vc[:, :, :t0 + n],
                                                             attn_mask=mask)
        x = x + self.o(a.transpose(1, 2).reshape(b, n, self.d))
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))


class _CalmLM(torch.nn.Module):
    def __init__(self, vocab=32000, d=1024, layers=16, heads=16, ff=4096, max_pos=2048):
        super().__init__()
        nn = torch.nn
        self.emb, self.pos = nn.Embedding(vocab, d), nn.Embedding(max_pos, d)
        self.layers = nn.ModuleList(_CalmLayer(d, heads, ff) for _ in range(layers))
        self.norm = nn.LayerNorm(d)

    def head(self, h):
        """The shared exit head: final norm and the tied embedding matrix, used at every exit point."""
        return self.norm(h) @ self.emb.weight.t()


@_workload("early-exit LM generation, CALM-style (Schuster et al. 2022) confident adaptive decoding, written by hand: a 16-layer pre-norm decoder (width 1024, 16 heads, GELU MLP 4096, learned positions, vocab 32000, tied head; random init) in bf16 under inference_mode with a static KV cache per layer (batch x 16 heads x prompt + answer x 64); exit points after every second layer from layer 4, each a softmax-response test through the shared final norm and head (the full 32000-way softmax, top-2 margin against a threshold decaying over the answer); tokens exit where confident, the batch stops at the layer where its last token exited (drawn per step from the exit points, skewed early, standing in for the data's confidence), and the skipped layers' keys and values are computed from the exited hidden states (CALM's state propagation) and written into their caches; 26 requests one after another of 1-16 prompts of 64-1024 tokens (log-uniform, left-padded to the longest with a key-padding mask, at most 8192 prompt tokens), a full-depth prefill, then 32-128 new tokens (drawn) decoded greedily; the answers read back per request")
def calm_early_exit(rng):
    d, nl, heads, vocab = _smoke(1024, 64), _smoke(16, 8), _smoke(16, 4), _smoke(32000, 512)
    model = _CalmLM(vocab, d, nl, heads, _smoke(4096, 128)).cuda().to(torch.bfloat16).eval()
    exits = list(range(3, nl, 2))  # exit after layers 4, 6, ... (0-based 3, 5, ...); the last is the full depth
    for _ in range(_smoke(26, 2)):
        b = _loguniform(rng, 1, _smoke(16, 3))
        lens = [_loguniform(rng, _smoke(64, 8), _smoke(1024, 40)) for _ in range(b)]
        while b > 1 and b * max(lens) > _smoke(8192, 96):
            b -= 1
            lens = lens[:b]
        n0, new = max(lens), rng.randint(_smoke(32, 3), _smoke(128, 5))
        total = n0 + new
        with torch.inference_mode():
            ids = torch.randint(0, vocab, (b, n0), device="cuda")
            valid = torch.ones(b, total, dtype=torch.bool, device="cuda")
            for i, n in enumerate(lens):
                valid[i, :n0 - n] = False  # left padding
            kcs = [torch.zeros(b, heads, total, d // heads, dtype=torch.bfloat16, device="cuda") for _ in range(nl)]
            vcs = [torch.zeros_like(k) for k in kcs]
            causal = torch.ones(n0, n0, dtype=torch.bool, device="cuda").tril()
            eye = torch.eye(n0, dtype=torch.bool, device="cuda")  # padding rows attend to themselves (no NaN)
            mask = ((causal[None] & valid[:, None, :n0]) | eye)[:, None]
            h = model.emb(ids) + model.pos(torch.arange(n0, device="cuda"))
            for layer, kc, vc in zip(model.layers, kcs, vcs):
                h = layer(h, kc, vc, 0, mask)
            tok = model.head(h[:, -1:]).argmax(-1)  # (b, 1)
            out = [tok]
            del h, mask, causal, eye, ids
            for t in range(n0, total - 1):
                # where the batch's last token exits this step: early exits grow likelier along the answer
                frac = (t - n0) / max(1, new - 1)
                weights = [1.0 + 2.0 * frac * (len(exits) - j) / len(exits) for j in range(len(exits))]
                last = rng.choices(exits, weights)[0]
                thr = 0.9 * math.exp(-4.0 * frac) + 0.1
                h = model.emb(tok) + model.pos.weight[t][None, None]
                m = valid[:, None, None, :t + 1]
                done = torch.zeros(b, 1, dtype=torch.bool, device="cuda")
                kept = torch.zeros_like(h)
                nxt = torch.zeros_like(tok)
                for li in range(last + 1):
                    h = model.layers[li](h, kcs[li], vcs[li], t, m)
                    if li in exits:
                        p = model.head(h)[:, 0].float().softmax(-1)  # (b, vocab) softmax response
                        top = p.topk(2, -1)
                        conf = (top.values[:, 0] - top.values[:, 1])[:, None]
                        now = (conf > thr) & ~done if li < last else ~done  # at `last` every remaining token exits
                        kept = torch.where(now[..., None], h, kept)
                        nxt = torch.where(now, top.indices[:, :1], nxt)
                        done = done | now
                        del p, top, conf, now
                for li in range(last + 1, nl):  # skipped layers: keys and values from the exited states
                    model.layers[li].write_kv(kept, kcs[li], vcs[li], t)
                tok = nxt
                out.append(tok)
                del h, kept, done, m
            ans = torch.cat(out, 1)
        ans.cpu()
        del kcs, vcs, valid, out, ans, tok
    torch.cuda.synchronize()


# ---------------------------------------------------------------- FNO on Navier-Stokes at several resolutions


class _SpectralConv2d(torch.nn.Module):
    """FNO's Fourier layer: rFFT2, the lowest `modes` frequencies of both corners (positive and negative first
    axis) multiplied by complex weights (in, out, m, m), inverse rFFT2 at the input's resolution."""

    def __init__(self, cin, cout, modes):
        super().__init__()
        scale = 1.0 / (cin * cout)
        self.cout, self.m = cout, modes
        self.w1 = torch.nn.Parameter(scale * torch.rand(cin, cout, modes, modes, dtype=torch.cfloat))
        self.w2 = torch.nn.Parameter(scale * torch.rand(cin, cout, modes, modes, dtype=torch.cfloat))

    def forward(self, x):
        b, _, hh, ww = x.shape
        m = self.m
        xf = torch.fft.rfft2(x)
        out = torch.zeros(b, self.cout, hh, ww // 2 + 1, dtype=torch.cfloat, device=x.device)
        out[:, :, :m, :m] = torch.einsum("bixy,ioxy->boxy", xf[:, :, :m, :m], self.w1)
        out[:, :, -m:, :m] = torch.einsum("bixy,ioxy->boxy", xf[:, :, -m:, :m], self.w2)
        return torch.fft.irfft2(out, s=(hh, ww))


class _Fno2d(torch.nn.Module):
    """fourier_2d_time.py's FNO2d: the last 10 vorticity fields and the (x, y) grid lifted to `width`, 4 Fourier
    layers (spectral conv plus a 1x1 conv, GELU between), projected 128 -> 1."""

    def __init__(self, modes=16, width=32, t_in=10):
        super().__init__()
        nn = torch.nn
        self.fc0 = nn.Linear(t_in + 2, width)
        self.spec = nn.ModuleList(_SpectralConv2d(width, width, modes) for _ in range(4))
        self.w = nn.ModuleList(nn.Conv2d(width, width, 1) for _ in range(4))
        self.fc1, self.fc2 = nn.Linear(width, 128), nn.Linear(128, 1)

    def forward(self, x):
        b, s = x.shape[0], x.shape[1]
        gx = torch.linspace(0, 1, s, device=x.device).reshape(1, s, 1, 1).repeat(b, 1, s, 1)
        gy = torch.linspace(0, 1, s, device=x.device).reshape(1, 1, s, 1).repeat(b, s, 1, 1)
        x = self.fc0(torch.cat((x, gx, gy), -1)).permute(0, 3, 1, 2)
        for i in range(4):
            x = self.spec[i](x) + self.w[i](x)
            if i < 3:
                x = torch.nn.functional.gelu(x)
        return self.fc2(torch.nn.functional.gelu(self.fc1(x.permute(0, 2, 3, 1))))


def _rel_l2(pred, y):
    """neuraloperator's LpLoss (relative L2, summed over the batch)."""
    b = pred.shape[0]
    return ((pred.reshape(b, -1) - y.reshape(b, -1)).norm(dim=1) / y.reshape(b, -1).norm(dim=1)).sum()


@_workload("neural-operator PDE training, FNO-2D (Li et al. 2021) as fourier_2d_time.py trains it on Navier-Stokes vorticity, with multi-resolution batches: an FNO2d (modes 16, width 32, 4 Fourier layers of rFFT2 / complex corner weights / inverse rFFT2 plus 1x1 convs, GELU, projection 128 -> 1; random init, fp32, complex Adam states) mapping the last 10 fields and the grid to the next; each step a resolution of 64, 128 or 256 px (drawn) at batch 32, 8 or 2 (at most 2 x 256^2 pixels), random vorticity fields made on the device, an autoregressive rollout of 10 steps, each prediction appended to the window (torch.cat) and fed back, the relative L2 loss summed over the rollout and back-propagated through it; Adam (lr 1e-3, weight decay 1e-4, halved every 50 steps), 150 steps, the loss read back every step; every 50 steps a zero-shot super-resolution evaluation (no_grad) of 2 rollouts at 256 and 512 px")
def fno_ns_train(rng):
    t_in, t_out = 10, _smoke(10, 3)
    model = _Fno2d(_smoke(16, 4), _smoke(32, 8), t_in).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=_smoke(50, 2), gamma=0.5)
    res = [_smoke(64, 16), _smoke(128, 24), _smoke(256, 32)]
    budget = 2 * res[-1] ** 2

    def rollout(x, y):
        loss, preds = 0.0, None
        for t in range(t_out):
            im = model(x)
            loss = loss + _rel_l2(im, y[..., t:t + 1])
            preds = im if preds is None else torch.cat((preds, im), -1)
            x = torch.cat((x[..., 1:], im), -1)
        return loss, preds

    steps = _smoke(150, 4)
    for step in range(steps):
        s = rng.choice(res)
        b = budget // (s * s)
        a = torch.randn(b, s, s, t_in, device="cuda")
        u = torch.randn(b, s, s, t_out, device="cuda")
        loss, preds = rollout(a, u)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        float(loss.detach())
        del a, u, loss, preds
        if step % _smoke(50, 2) == _smoke(49, 1):
            with torch.no_grad():
                for s in (_smoke(256, 32), _smoke(512, 48)):
                    a = torch.randn(2, s, s, t_in, device="cuda")
                    u = torch.randn(2, s, s, t_out, device="cuda")
                    loss, preds = rollout(a, u)
                    float(loss)
                    del a, u, loss, preds
    torch.cuda.synchronize()


# ---------------------------------------------------------------- DCCRN complex-spectrogram speech enhancement


class _ComplexConv(torch.nn.Module):
    """A complex (transposed) 2-D convolution as DCCRN writes it: real and imaginary kernels, (Wr*xr - Wi*xi,
    Wr*xi + Wi*xr), the two parts stacked along the channels; naive complex BatchNorm (per part) and PReLU."""

    def __init__(self, cin, cout, transposed=False, last=False):
        super().__init__()
        nn = torch.nn
        if transposed:
            mk = lambda: nn.ConvTranspose2d(cin, cout, (5, 2), (2, 1), (2, 0), output_padding=(1, 0))  # noqa: E731
        else:
            mk = lambda: nn.Conv2d(cin, cout, (5, 2), (2, 1), (2, 1))  # noqa: E731
        self.re, self.im = mk(), mk()
        self.transposed, self.last = transposed, last
        self.post = None if last else nn.Sequential(nn.BatchNorm2d(2 * cout), nn.PReLU())

    def forward(self, x, t):
        xr, xi = x.chunk(2, 1)
        y = torch.cat((self.re(xr) - self.im(xi), self.re(xi) + self.im(xr)), 1)[..., :t]  # causal: trim in time
        return y if self.last else self.post(y)


class _Dccrn(torch.nn.Module):
    """DCCRN-CL (Hu et al. 2020), narrower: STFT 512/100 (400-sample window), 256 bins without DC, a complex
    encoder of 6 stride-2 (frequency) layers of 16-32-64-128-128-128 channels a part, a complex LSTM (2 layers
    of 256 a part, real and imaginary LSTMs combined), a complex decoder with skip concatenations, a complex
    ratio mask (E: magnitude tanh, phase), inverse STFT."""

    def __init__(self, ch=(16, 32, 64, 128, 128, 128), hidden=256):
        super().__init__()
        nn = torch.nn
        chans = (1,) + tuple(ch)
        self.enc = nn.ModuleList(_ComplexConv(chans[i], chans[i + 1]) for i in range(len(ch)))
        self.dec = nn.ModuleList(_ComplexConv(2 * chans[i + 1], chans[i], True, last=i == 0)
                                 for i in reversed(range(len(ch))))
        feat = ch[-1] * 4  # 256 bins halved six times
        self.lstm_r = nn.LSTM(feat, hidden, 2, batch_first=True)
        self.lstm_i = nn.LSTM(feat, hidden, 2, batch_first=True)
        self.proj_r, self.proj_i = nn.Linear(hidden, feat), nn.Linear(hidden, feat)
        self.register_buffer("window", torch.hann_window(400).pow(0.5))

    def forward(self, wav):
        spec = torch.stft(wav, 512, 100, 400, self.window, return_complex=True)[:, 1:]  # (B, 256, T)
        t = spec.shape[-1]
        x = torch.stack((spec.real, spec.imag), 1)  # (B, 2, 256, T)
        skips = []
        for layer in self.enc:
            x = layer(x, t)
            skips.append(x)
        b, c, fq, _ = x.shape
        xr, xi = x.chunk(2, 1)
        xr = xr.permute(0, 3, 1, 2).reshape(b, t, -1)
        xi = xi.permute(0, 3, 1, 2).reshape(b, t, -1)
        rr, ii = self.lstm_r(xr)[0], self.lstm_i(xi)[0]
        ri, ir = self.lstm_i(xr)[0], self.lstm_r(xi)[0]
        yr, yi = self.proj_r(rr - ii), self.proj_i(ri + ir)
        x = torch.cat((yr.reshape(b, t, c // 2, fq).permute(0, 2, 3, 1),
                       yi.reshape(b, t, c // 2, fq).permute(0, 2, 3, 1)), 1)
        for layer, skip in zip(self.dec, reversed(skips)):
            xr, xi = x.chunk(2, 1)
            sr, si = skip.chunk(2, 1)
            x = layer(torch.cat((xr, sr, xi, si), 1), t)
        mr, mi = x[:, 0], x[:, 1]  # (B, 256, T)
        mag, pha = torch.tanh(torch.sqrt(mr * mr + mi * mi + 1e-8)), torch.atan2(mi, mr)
        est = spec * torch.polar(mag, pha)
        est = torch.cat((torch.zeros_like(est[:, :1]), est), 1)
        return torch.istft(est, 512, 100, 400, self.window, length=wav.shape[-1])


def _si_snr(est, ref):
    est, ref = est - est.mean(-1, keepdim=True), ref - ref.mean(-1, keepdim=True)
    s = (est * ref).sum(-1, keepdim=True) / (ref.pow(2).sum(-1, keepdim=True) + 1e-8) * ref
    return 10 * torch.log10(s.pow(2).sum(-1) / ((est - s).pow(2).sum(-1) + 1e-8) + 1e-8)


@_workload("speech enhancement training, DCCRN-CL-style (Hu et al. 2020) as the DNS-challenge recipes train it, written by hand (random init, fp32): a complex-spectrogram U-Net (STFT 512 / hop 100 / 400-sample sqrt-Hann window on the device, 256 bins without DC; 6 complex stride-2 conv layers of 16-32-64-128-128-128 channels a part (real and imaginary kernels, naive complex BatchNorm, PReLU), a complex 2-layer LSTM of 256 a part, 6 complex transposed-conv layers with skip concatenations, a complex ratio mask (tanh magnitude, phase), inverse STFT); 16 kHz clean speech and noise made on the device, mixed at SNRs of -5 to 20 dB (drawn per clip), segments of 2-6 s (drawn per step, multiples of 0.5 s) in batches from a budget of 64 s (at most 16 clips), negative SI-SNR loss; Adam (lr 1e-3, halved every 100 steps), gradient clipping 5, 300 steps, the loss read back every step; every 100 steps a validation (no_grad) of 4 whole utterances of 4-12 s one at a time")
def dccrn_enhance(rng):
    sr = _smoke(16000, 1600)
    model = _Dccrn(_smoke((16, 32, 64, 128, 128, 128), (2, 2, 4, 4, 4, 4)), _smoke(256, 16)).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, _smoke(100, 2), 0.5)
    steps = _smoke(300, 4)

    def mixture(b, n):
        clean = torch.randn(b, n, device="cuda") * torch.rand(b, 1, device="cuda")
        noise = torch.randn(b, n, device="cuda")
        snr = torch.tensor([rng.uniform(-5, 20) for _ in range(b)], device="cuda")
        gain = (clean.pow(2).mean(-1) / (noise.pow(2).mean(-1) * 10 ** (snr / 10) + 1e-8)).sqrt()
        return clean + gain[:, None] * noise, clean

    for step in range(steps):
        secs = rng.randint(4, 12) / 2
        b = min(16, int(64 // secs))
        mix, clean = mixture(b, int(secs * sr))
        loss = -_si_snr(model(mix), clean).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        sched.step()
        float(loss.detach())
        del mix, clean, loss
        if step % _smoke(100, 2) == _smoke(99, 1):
            model.eval()
            with torch.no_grad():
                for _ in range(4):
                    mix, clean = mixture(1, int(rng.uniform(4, 12) * sr))
                    float(_si_snr(model(mix), clean).mean())
                    del mix, clean
            model.train()
    torch.cuda.synchronize()


# ---------------------------------------------------------------- LaMa-style inpainting GAN (fast Fourier convs)


class _FourierUnit(torch.nn.Module):
    """LaMa's FourierUnit: rFFT2 (ortho), real and imaginary parts as channels, 1x1 conv, BN, ReLU, inverse."""

    def __init__(self, c):
        super().__init__()
        nn = torch.nn
        self.conv, self.bn = nn.Conv2d(2 * c, 2 * c, 1, bias=False), nn.BatchNorm2d(2 * c)

    def forward(self, x):
        b, c, h, w = x.shape
        f = torch.fft.rfft2(x.float(), norm="ortho")
        f = torch.stack((f.real, f.imag), 2).reshape(b, 2 * c, h, w // 2 + 1)
        f = torch.relu(self.bn(self.conv(f))).reshape(b, c, 2, h, w // 2 + 1)
        return torch.fft.irfft2(torch.complex(f[:, :, 0], f[:, :, 1]), s=(h, w), norm="ortho")


class _SpectralTransform(torch.nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        nn = torch.nn
        self.conv1 = nn.Sequential(nn.Conv2d(cin, cout // 2, 1, bias=False), nn.BatchNorm2d(cout // 2), nn.ReLU())
        self.fu = _FourierUnit(cout // 2)
        self.conv2 = nn.Conv2d(cout // 2, cout, 1, bias=False)

    def forward(self, x):
        x = self.conv1(x)
        return self.conv2(x + self.fu(x))


class _Ffc(torch.nn.Module):
    """FFC_BN_ACT with ratio 0.75: local (3x3 reflect convs) and global (spectral transform) branches that mix."""

    def __init__(self, c, ratio=0.75):
        super().__init__()
        nn = torch.nn
        cg = int(c * ratio)
        cl = c - cg
        conv = lambda i, o: nn.Conv2d(i, o, 3, padding=1, padding_mode="reflect", bias=False)  # noqa: E731
        self.l2l, self.l2g, self.g2l = conv(cl, cl), conv(cl, cg), conv(cg, cl)
        self.g2g = _SpectralTransform(cg, cg)
        self.bn_l, self.bn_g = nn.BatchNorm2d(cl), nn.BatchNorm2d(cg)

    def forward(self, xl, xg):
        yl = self.l2l(xl) + self.g2l(xg)
        yg = self.l2g(xl) + self.g2g(xg)
        return torch.relu(self.bn_l(yl)), torch.relu(self.bn_g(yg))


class _FfcBlock(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.a, self.b = _Ffc(c), _Ffc(c)

    def forward(self, xl, xg):
        yl, yg = self.b(*self.a(xl, xg))
        return xl + yl, xg + yg


class _LamaGen(torch.nn.Module):
    """LaMa's FFCResNetGenerator, narrower: 7x7 stem of 64, 3 stride-2 downsamplings to 512, `blocks` FFC
    residual blocks (global ratio 0.75), 3 transposed-conv upsamplings, a 7x7 conv to RGB, sigmoid."""

    def __init__(self, ch=64, blocks=9):
        super().__init__()
        nn = torch.nn

        def cbr(i, o, k, s, p):
            return [nn.Conv2d(i, o, k, s, p), nn.BatchNorm2d(o), nn.ReLU()]

        self.c = 8 * ch
        self.down = nn.Sequential(nn.ReflectionPad2d(3), *cbr(4, ch, 7, 1, 0), *cbr(ch, 2 * ch, 3, 2, 1),
                                  *cbr(2 * ch, 4 * ch, 3, 2, 1), *cbr(4 * ch, 8 * ch, 3, 2, 1))
        self.blocks = nn.ModuleList(_FfcBlock(8 * ch) for _ in range(blocks))
        up = []
        for i, o in ((8 * ch, 4 * ch), (4 * ch, 2 * ch), (2 * ch, ch)):
            up += [nn.ConvTranspose2d(i, o, 3, 2, 1, output_padding=1), nn.BatchNorm2d(o), nn.ReLU()]
        self.up = nn.Sequential(*up, nn.ReflectionPad2d(3), nn.Conv2d(ch, 3, 7), nn.Sigmoid())

    def forward(self, img, mask):
        x = self.down(torch.cat((img * (1 - mask), mask), 1))
        cl = self.c - int(self.c * 0.75)
        xl, xg = x[:, :cl], x[:, cl:]
        for blk in self.blocks:
            xl, xg = blk(xl, xg)
        return self.up(torch.cat((xl, xg), 1))


class _PatchD(torch.nn.Module):
    """LaMa's NLayerDiscriminator (PatchGAN 64-128-256-512), returning its features for feature matching."""

    def __init__(self, ch=64):
        super().__init__()
        nn = torch.nn
        lr = lambda: nn.LeakyReLU(0.2)  # noqa: E731
        self.layers = nn.ModuleList([
            nn.Sequential(nn.Conv2d(3, ch, 4, 2, 2), lr()),
            nn.Sequential(nn.Conv2d(ch, 2 * ch, 4, 2, 2), nn.BatchNorm2d(2 * ch), lr()),
            nn.Sequential(nn.Conv2d(2 * ch, 4 * ch, 4, 2, 2), nn.BatchNorm2d(4 * ch), lr()),
            nn.Sequential(nn.Conv2d(4 * ch, 8 * ch, 4, 1, 2), nn.BatchNorm2d(8 * ch), lr()),
            nn.Conv2d(8 * ch, 1, 4, 1, 2)])

    def forward(self, x):
        feats = []
        for layer in self.layers:
            x = layer(x)
            feats.append(x)
        return x, feats[:-1]


def _stroke_masks(rng, b, h, w):
    """LaMa-like irregular masks drawn on the device: per image 1-6 thick polyline strokes (segments of random
    ends and widths, a pixel masked within its width of a segment) and 0-2 boxes (counts drawn per batch)."""
    k, nbox = rng.randint(1, 6) * 4, rng.randint(0, 2)
    ys = torch.linspace(0, 1, h, device="cuda")[:, None].expand(h, w)
    xs = torch.linspace(0, 1, w, device="cuda")[None, :].expand(h, w)
    p = torch.stack((ys, xs), -1).reshape(1, 1, h * w, 2)
    a = torch.rand(b, k, 1, 2, device="cuda")
    ab = (torch.rand(b, k, 1, 2, device="cuda") - 0.5) * 0.4
    width = 0.01 + 0.04 * torch.rand(b, k, 1, device="cuda")
    t = (((p - a) * ab).sum(-1) / (ab.pow(2).sum(-1) + 1e-8)).clamp(0, 1)
    dist = (p - a - t[..., None] * ab).norm(dim=-1)
    m = (dist < width).any(1).reshape(b, 1, h, w)
    if nbox:
        lo = torch.rand(b, nbox, 1, 2, device="cuda") * 0.7
        hi = lo + 0.1 + 0.2 * torch.rand(b, nbox, 1, 2, device="cuda")
        inbox = ((p >= lo) & (p <= hi)).all(-1).any(1).reshape(b, 1, h, w)
        m = m | inbox
    return m.float()


@_workload("image inpainting GAN training, LaMa-style (Suvorov et al. 2022), written by hand (random init, fp32): an FFC-ResNet generator (masked image and mask in, 7x7 stem of 64, 3 stride-2 downsamplings to 512, 9 residual blocks of fast Fourier convolutions (75% of the channels global: 1x1 conv, rFFT2 with real and imaginary parts as channels, 1x1 conv, BN, ReLU, inverse rFFT2; 25% local 3x3 reflect convs; cross terms), 3 transposed-conv upsamplings, sigmoid), a PatchGAN discriminator (64-512, BatchNorm) and a frozen dilated torchvision ResNet-50 (random weights, eval) for the high-receptive-field perceptual loss; batches of 8 random 256 px images made on the device, LaMa-like irregular masks drawn on the device each step (1-6 thick polyline strokes and 0-2 boxes per image by point-to-segment distances); discriminator step (non-saturating loss on real and detached fakes, R1 penalty of weight 0.001 by autograd.grad with create_graph on the reals), then generator step (L1 on the known region x10, adversarial x10, discriminator feature matching x100, perceptual x30); Adam (generator lr 1e-3, discriminator 1e-4, betas 0.9/0.999) each, 88 steps, the losses read back every step; every 25 steps an evaluation (no_grad, eval mode) of 2 images at 512-1024 px (multiples of 64, drawn)")
def lama_inpaint(rng):
    import torchvision

    f = torch.nn.functional
    gen = _LamaGen(_smoke(64, 8), _smoke(9, 2)).cuda()
    disc = _PatchD(_smoke(64, 8)).cuda()
    pl = torchvision.models.resnet50(replace_stride_with_dilation=[False, True, True]).cuda().eval()
    for p in pl.parameters():
        p.requires_grad_(False)
    opt_g = torch.optim.Adam(gen.parameters(), lr=1e-3)
    opt_d = torch.optim.Adam(disc.parameters(), lr=1e-4)
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda")[:, None, None]
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda")[:, None, None]

    def pfeats(x):
        x = pl.maxpool(pl.relu(pl.bn1(pl.conv1((x - mean) / std))))
        out = []
        for layer in (pl.layer1, pl.layer2, pl.layer3, pl.layer4):
            x = layer(x)
            out.append(x)
        return out

    b, s = _smoke(8, 2), _smoke(256, 64)
    for step in range(_smoke(88, 3)):
        img = torch.rand(b, 3, s, s, device="cuda")
        mask = _stroke_masks(rng, b, s, s)
        fake = gen(img, mask)
        comp = fake * mask + img * (1 - mask)
        # discriminator: non-saturating loss and R1 on the reals
        real = img.detach().requires_grad_(True)
        dr, _ = disc(real)
        r1 = torch.autograd.grad(dr.sum(), real, create_graph=True)[0]
        df, _ = disc(comp.detach())
        loss_d = f.softplus(-dr).mean() + f.softplus(df).mean() + 0.001 * 0.5 * r1.pow(2).sum((1, 2, 3)).mean()
        opt_d.zero_grad(set_to_none=True)
        loss_d.backward()
        opt_d.step()
        del real, dr, r1, df
        # generator
        dfake, ffake = disc(comp)
        with torch.no_grad():
            _, freal = disc(img)
            preal = pfeats(img)
        pfake = pfeats(fake)
        l1 = (f.l1_loss(fake, img, reduction="none") * (1 - mask)).mean() * 10
        adv = f.softplus(-dfake).mean() * 10
        fm = sum(f.l1_loss(a, c) for a, c in zip(ffake, freal)) * 100
        perc = sum(f.mse_loss(a, c) for a, c in zip(pfake, preal)) * 30
        loss_g = l1 + adv + fm + perc
        opt_g.zero_grad(set_to_none=True)
        loss_g.backward()
        opt_g.step()
        float(loss_d.detach()), float(loss_g.detach())
        del img, mask, fake, comp, dfake, ffake, freal, preal, pfake, l1, adv, fm, perc, loss_g, loss_d
        if step % _smoke(25, 2) == _smoke(24, 1):
            gen.eval()
            with torch.no_grad():
                for _ in range(2):
                    hh, ww = rng.randrange(512, 1025, 64) // _smoke(1, 8), rng.randrange(512, 1025, 64) // _smoke(1, 8)
                    img = torch.rand(1, 3, hh, ww, device="cuda")
                    mask = _stroke_masks(rng, 1, hh, ww)
                    out = gen(img, mask) * mask + img * (1 - mask)
                    (out * 255).to(torch.uint8).cpu()
                    del img, mask, out
            gen.train()
    torch.cuda.synchronize()

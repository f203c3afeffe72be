"""The forty-ninth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch48_b.py are): signal processing, wireless communications and sensing on the GPU, written in torch alone,
first half. A DeepRx-style neural OFDM receiver (Honkala et al. 2021: a dilated depthwise-separable residual CNN
over the resource grid, complex values as two channels, trained end to end on bit cross-entropy over a fading
channel drawn per batch, the bandwidth and the slot count drawn per step, an SNR sweep of the bit error rate as its
evaluation), neural belief-propagation decoding of LDPC codes (Nachmani et al. 2018: weighted offset min-sum unrolled
over iterations with per-edge weights, three code lengths and rates one after another, a multiloss over iterations,
a BER/BLER sweep over Eb/N0 with more iterations), learned MIMO detection by deep unfolding (DetNet, Samuel et al.
2017, and OAMP-Net2, He et al. 2020, on antenna configurations drawn per phase, a fresh detector of a size fitted to
each, symbol error rates against LMMSE read back), and an automatic-modulation-classification service (a patch
transformer over IQ snippets, two models of different size, request batches of snippets of drawn lengths uploaded
from pinned host buffers on a side stream, and periodic scans of long captures cut into overlapping windows). Same
conventions as the earlier batches: nothing downloaded, data drawn at random on the device (symbols, channels,
noise), `rng` the workload's random.Random for every shape, count and sampled choice, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: iteration
counts, SNRs, antenna counts and lengths are fixed on the host, decisions made on the device are argmax or
torch.where (boolean-mask indexing is avoided); losses, error rates and class counts are read back only at logging
points. amc_iq_serve uses a side stream (uploads waited on by event, the tensors record_stream'ed); the others are
single-stream. deeprx_ofdm_train and amc_iq_serve run their networks under bf16 autocast; the decoders and the
detectors are fp32, as they are usually trained (their error floors need it).

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording (batch49_b.py's header says the same of its half): every workload of this
half was run whole at its final real sizes (RECORD_SMOKE unset) on PyTorch's meta device with the helper's runner
(/tmp/b49/meta_run.py, not committed, a copy of batch 47's: smoke_cpu.py's patching with "cuda" mapped to "meta",
readbacks answered with dummies, autocast a no-op so that fp32 sizes are counted, SDPA taking a math path, streams,
events and pinned memory no-ops; boolean-mask indexing, which the meta device cannot size, is avoided, and so are
torch.istft and window factories with a device argument, which the runners do not map), its op outputs counted
there (events about 1.8x that count) and its peak live bytes tracked: deeprx_ofdm_train 319,982 op outputs, peak
2.64 GB; nbp_ldpc_decode_train 321,933, 0.48 GB; detnet_mimo_train 357,607, 1.48 GB; amc_iq_serve 315,032,
0.65 GB (record_new49.sh's header has them too, with the first runs that led to resizes). The CPU smoke run
(RECORD_SMOKE=1) ran all four.
"""

import math

import torch

from batch_common import Batch

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional


def _qam(bits):
    """Gray-free square QAM from bits (..., q), q even: each half of the bits a PAM level, unit average energy.
    Returns (real, imag)."""
    q = bits.shape[-1]
    h = q // 2
    w = 2.0 ** torch.arange(h, device="cuda")
    m = 2 ** h
    scale = math.sqrt(2 * (m * m - 1) / 3)
    re = (2 * (bits[..., :h] * w).sum(-1) - (m - 1)) / scale
    im = (2 * (bits[..., h:] * w).sum(-1) - (m - 1)) / scale
    return re, im


# ---------------------------------------------------------------- DeepRx neural OFDM receiver


class _DeepRx(torch.nn.Module):
    """DeepRx's fully convolutional receiver: an input conv, residual blocks of (pre-activation, depthwise dilated
    3x3 conv over symbols x subcarriers, pointwise conv) twice, and a 1x1 conv to the LLRs of every bit of a RE."""

    def __init__(self, cin, width, dilations, bits):
        super().__init__()
        self.inp = torch.nn.Conv2d(cin, width, 3, padding=1)
        self.dw1 = torch.nn.ModuleList([torch.nn.Conv2d(width, width, 3, padding=d, dilation=d, groups=width)
                                        for d in dilations])
        self.pw1 = torch.nn.ModuleList([torch.nn.Conv2d(width, width, 1) for _ in dilations])
        self.dw2 = torch.nn.ModuleList([torch.nn.Conv2d(width, width, 3, padding=d, dilation=d, groups=width)
                                        for d in dilations])
        self.pw2 = torch.nn.ModuleList([torch.nn.Conv2d(width, width, 1) for _ in dilations])
        self.out = torch.nn.Conv2d(width, bits, 1)

    def forward(self, x):
        h = self.inp(x)
        for dw1, pw1, dw2, pw2 in zip(self.dw1, self.pw1, self.dw2, self.pw2):
            r = pw1(dw1(_F.relu(h)))
            h = h + pw2(dw2(_F.relu(r)))
        return self.out(_F.relu(h))


def _ofdm_batch(bsz, nsym, nsc, nrx, qbits, snr_db, taps, doppler):
    """One batch through a simulated OFDM link: QAM data on every RE but the pilot symbols (2 and 11 of each
    slot, QPSK pilots on every RE), a tapped-delay-line channel per receive antenna with an exponential power
    delay profile taken to the frequency domain by FFT and varying linearly over the slot (Doppler), AWGN.
    Returns the network input (received grid, pilot grid and raw LS estimate as channels), the bits and the
    data-RE weight map."""
    pil = torch.zeros(nsym, device="cuda")
    for s in range(0, nsym, 14):
        pil[s + 2] = 1.0
        pil[s + 11] = 1.0
    bits = torch.randint(0, 2, (bsz, nsym, nsc, qbits), device="cuda").float()
    dre, dim_ = _qam(bits)
    pbits = torch.randint(0, 2, (bsz, nsym, nsc, 2), device="cuda").float()
    pre, pim = _qam(pbits)
    sel = pil[None, :, None]
    xre = sel * pre + (1 - sel) * dre
    xim = sel * pim + (1 - sel) * dim_
    pdp = torch.exp(-torch.arange(taps, device="cuda") / (taps / 3))
    pdp = pdp / pdp.sum()
    h0 = torch.complex(torch.randn(bsz, nrx, taps, device="cuda"), torch.randn(bsz, nrx, taps, device="cuda"))
    h1 = torch.complex(torch.randn(bsz, nrx, taps, device="cuda"), torch.randn(bsz, nrx, taps, device="cuda"))
    amp = (pdp / 2).sqrt()
    hf0 = torch.fft.fft(h0 * amp, n=nsc, dim=-1)
    hf1 = torch.fft.fft(h1 * amp, n=nsc, dim=-1)
    a = (torch.linspace(0, 1, nsym, device="cuda") * doppler)[None, None, :, None]
    hf = (1 - a) * hf0[:, :, None] + a * hf1[:, :, None]  # (B, rx, S, F)
    x = torch.complex(xre, xim)[:, None]
    sigma = math.sqrt(10 ** (-snr_db / 10) / 2)
    noise = torch.complex(torch.randn(bsz, nrx, nsym, nsc, device="cuda"),
                          torch.randn(bsz, nrx, nsym, nsc, device="cuda")) * sigma
    y = hf * x + noise
    ls = y * torch.complex(pre, -pim)[:, None] * sel
    inp = torch.cat([torch.view_as_real(y).permute(0, 1, 4, 2, 3).reshape(bsz, 2 * nrx, nsym, nsc),
                     torch.stack([xre * sel, xim * sel], 1),
                     torch.view_as_real(ls).permute(0, 1, 4, 2, 3).reshape(bsz, 2 * nrx, nsym, nsc)], 1)
    del h0, h1, hf0, hf1, hf, x, noise, y, ls, pbits, dre, dim_
    return inp, bits, (1 - sel).expand(bsz, nsym, nsc)


@_workload("neural OFDM receiver, DeepRx (Honkala et al. 2021) written by hand (random init): a fully convolutional receiver over the resource grid (14 OFDM symbols a slot by 12 subcarriers a PRB; received signal of 2 antennas, pilot grid and raw LS estimate as 10 real channels; input conv, 11 residual blocks of two depthwise dilated 3x3 plus pointwise convs, width 64, dilations up to (3,8)), outputting the LLRs of 6 bits per RE; 590 training steps under bf16 autocast, each a batch whose bandwidth (6-106 PRBs) and slot count (1-2) are drawn and whose size is cut to a fixed number of REs (8-64 slots), 16/64-QAM drawn per step, a tapped-delay-line fading channel (4-24 taps, exponential delay profile, linear Doppler variation over the slot) drawn per batch and taken to frequency by FFT, SNR 0-30 dB drawn; bit cross-entropy over the data REs (the unused bits of 16-QAM weighted out), Adam with a cosine rate; every 118 steps an evaluation without grad: a sweep of 7 SNRs (-4 to 26 dB) at 52 PRBs, bit error rates read back")
def deeprx_ofdm_train(rng):
    nrx, qmax = 2, 6
    dil = [1, 1, 2, 3, 4, 6, 8, 6, 4, 2, 1][:_smoke(11, 2)]
    model = _DeepRx(4 * nrx + 2, _smoke(64, 8), dil, qmax).cuda()
    steps = _smoke(590, 3)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    re_budget = _smoke(14 * 12 * 106 * 12, 14 * 12 * 4)
    for step in range(steps):
        prb = rng.choice(_smoke([6, 12, 25, 52, 106], [1, 2]))
        slots = rng.randint(1, 2)
        nsym, nsc = 14 * slots, 12 * prb
        bsz = max(2, min(64, re_budget // (nsym * nsc)))
        q = rng.choice([4, 6])
        inp, bits, wmap = _ofdm_batch(bsz, nsym, nsc, nrx, q, rng.uniform(0, 30), rng.randint(4, 24),
                                      rng.uniform(0, 0.5))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            llr = model(inp)
        llr = llr.float().permute(0, 2, 3, 1)[..., :q]
        loss = (_F.binary_cross_entropy_with_logits(llr, bits, reduction="none").mean(-1) * wmap).sum() / wmap.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        del inp, bits, wmap, llr, loss
        if (step + 1) % _smoke(118, 3) == 0:
            errs = []
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for snr in range(-4, 27, 5):
                    inp, bits, wmap = _ofdm_batch(_smoke(16, 2), 14, 12 * _smoke(52, 2), nrx, 6, float(snr), 12,
                                                  0.2)
                    hard = (model(inp).float().permute(0, 2, 3, 1) > 0).float()
                    errs.append(((hard != bits).float().mean(-1) * wmap).sum() / wmap.sum())
                    del inp, bits, wmap, hard
            torch.stack(errs).cpu()
            del errs


# ---------------------------------------------------------------- neural BP decoding of LDPC codes


class _LdpcGraph:
    """A random (dv, dc)-regular LDPC Tanner graph: edges ordered by check node (dc consecutive edges a check),
    each edge's variable node from a random permutation of every variable repeated dv times."""

    def __init__(self, n, dv, dc):
        self.n, self.dv, self.dc = n, dv, dc
        self.m = n * dv // dc
        self.e = self.m * dc
        self.var = torch.arange(n, device="cuda").repeat_interleave(dv)[torch.randperm(self.e, device="cuda")]


def _wms_decode(g, llr, iters, w_edge, w_llr, beta, keep_all):
    """Weighted offset min-sum (Nachmani et al. 2018; Lugosch and Gross 2017) unrolled for iters iterations over
    a batch of channel LLRs (B, n): per iteration, variable-to-check messages from the channel LLR and the other
    checks' messages, check-to-variable messages as the sign product times the minimum over the other edges of the
    check (the two smallest by topk), weighted and offset; returns the marginals of every iteration (or the last)."""
    bsz = llr.shape[0]
    c2v = torch.zeros(bsz, g.e, device="cuda")
    outs = []
    for t in range(iters):
        tot = llr * w_llr[t] + torch.zeros(bsz, g.n, device="cuda").index_add(1, g.var, c2v)
        v2c = (tot[:, g.var] - c2v).view(bsz, g.m, g.dc)
        sgn = torch.where(v2c < 0, -torch.ones_like(v2c), torch.ones_like(v2c))
        mag = v2c.abs()
        two = mag.topk(2, dim=2, largest=False).values
        mn = torch.where(mag <= two[..., :1], two[..., 1:], two[..., :1])
        c2v = (sgn.prod(2, keepdim=True) * sgn * _F.relu(mn - beta[t]) * w_edge[t].view(g.m, g.dc)).view(bsz, g.e)
        marg = llr + torch.zeros(bsz, g.n, device="cuda").index_add(1, g.var, c2v)
        if keep_all or t == iters - 1:
            outs.append(marg)
        del tot, v2c, sgn, mag, two, mn
    return outs


@_workload("channel decoding, neural belief propagation (Nachmani et al. 2018) for LDPC codes written by hand (fp32): weighted offset min-sum unrolled over 10 training iterations, a learned weight per edge and iteration plus per-iteration channel weights and offsets, on random regular Tanner graphs built on the device; 3 codes one after another (n = 576-2304 of rate 1/2 with (3,6) degrees, or rate 3/4 with (3,12); drawn), each trained for 150 steps on batches of 96-256 all-zero BPSK codewords over AWGN at Eb/N0 drawn from 1-5 dB (the symmetric channel makes it sufficient), check-to-variable messages by sign product and the two smallest magnitudes (topk), variable sums by index_add over the edges, a multiloss binary cross-entropy over every iteration's marginals, Adam; after each code a BER/BLER evaluation without grad over 8 Eb/N0 points (1-4.5 dB) with 20 decoding iterations on 2048-codeword batches, the error counts read back")
def nbp_ldpc_decode_train(rng):
    codes = [(576, 3, 6), (1152, 3, 6), (2304, 3, 6), (1024, 3, 12), (2048, 3, 12)]
    for code in range(_smoke(3, 1)):
        n, dv, dc = rng.choice(codes)
        n = _smoke(n, 48)
        g = _LdpcGraph(n, dv, dc)
        rate = 1 - dv / dc
        iters, ev_iters = _smoke(10, 3), _smoke(20, 4)
        w_edge = torch.nn.Parameter(torch.ones(ev_iters, g.e, device="cuda"))
        w_llr = torch.nn.Parameter(torch.ones(ev_iters, device="cuda"))
        beta = torch.nn.Parameter(torch.full((ev_iters,), 0.1, device="cuda"))
        opt = torch.optim.Adam([w_edge, w_llr, beta], lr=3e-3)
        for step in range(_smoke(150, 3)):
            bsz = rng.choice(_smoke([96, 128, 192, 256], [4, 8]))
            ebn0 = rng.uniform(1.0, 5.0)
            sigma = math.sqrt(1 / (2 * rate * 10 ** (ebn0 / 10)))
            y = 1 + sigma * torch.randn(bsz, n, device="cuda")
            llr = 2 * y / sigma ** 2
            outs = _wms_decode(g, llr, iters, w_edge, w_llr, beta, True)
            loss = sum(_F.binary_cross_entropy_with_logits(-o, torch.zeros_like(o)) for o in outs) / iters
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            del y, llr, outs, loss
            if (step + 1) % _smoke(50, 3) == 0:
                opt.param_groups[0]["lr"] *= 0.5
        with torch.no_grad():
            counts = []
            for i in range(8):
                ebn0 = 1.0 + 0.5 * i
                sigma = math.sqrt(1 / (2 * rate * 10 ** (ebn0 / 10)))
                y = 1 + sigma * torch.randn(_smoke(2048, 8), n, device="cuda")
                marg = _wms_decode(g, 2 * y / sigma ** 2, ev_iters, w_edge, w_llr, beta, False)[0]
                err = (marg < 0).float()
                counts.append(torch.stack([err.sum(), err.amax(1).sum()]))
                del y, marg, err
            torch.stack(counts).cpu()
        del g, w_edge, w_llr, beta, opt, counts


# ---------------------------------------------------------------- deep-unfolded MIMO detection


class _DetNet(torch.nn.Module):
    """DetNet (Samuel et al. 2017), real-valued: each layer maps [H^T y, v, x, H^T H x] through a ReLU layer to
    the next estimate (a soft 4-PAM projection) and the next auxiliary vector v."""

    def __init__(self, k, layers, hid, vdim):
        super().__init__()
        self.vdim = vdim
        self.fc = torch.nn.ModuleList([torch.nn.Linear(3 * k + vdim, hid) for _ in range(layers)])
        self.fx = torch.nn.ModuleList([torch.nn.Linear(hid, k) for _ in range(layers)])
        self.fv = torch.nn.ModuleList([torch.nn.Linear(hid, vdim) for _ in range(layers)])

    def forward(self, h, y, sigma2):
        hty = torch.bmm(h.transpose(1, 2), y[..., None])[..., 0]
        hth = torch.bmm(h.transpose(1, 2), h)
        x = torch.zeros_like(hty)
        v = torch.zeros(y.shape[0], self.vdim, device="cuda")
        outs = []
        lv = torch.tensor([-3.0, -1.0, 1.0, 3.0], device="cuda") / math.sqrt(10)
        for fc, fx, fv in zip(self.fc, self.fx, self.fv):
            z = _F.relu(fc(torch.cat([hty, v, x, torch.bmm(hth, x[..., None])[..., 0]], 1)))
            t = fx(z)
            x = (torch.tanh((t[..., None] - (lv[1:] + lv[:-1]) / 2) * 8).sum(-1)) / math.sqrt(10)
            v = fv(z)
            outs.append(x)
        return outs


class _OampNet2(torch.nn.Module):
    """OAMP-Net2 (He et al. 2020), real-valued: per layer a linear estimator (the LMMSE matrix for the current
    error variance, trace-normalised, by batched solves) with learned step gamma and theta, then the posterior-mean
    denoiser over the 4-PAM alphabet with learned phi and xi."""

    def __init__(self, layers):
        super().__init__()
        self.gamma = torch.nn.Parameter(torch.ones(layers))
        self.theta = torch.nn.Parameter(torch.ones(layers))
        self.phi = torch.nn.Parameter(torch.ones(layers))
        self.xi = torch.nn.Parameter(torch.zeros(layers))

    def forward(self, h, y, sigma2):
        bsz, nr, k = h.shape
        lv = torch.tensor([-3.0, -1.0, 1.0, 3.0], device="cuda") / math.sqrt(10)
        x = torch.zeros(bsz, k, device="cuda")
        hht = torch.bmm(h, h.transpose(1, 2))
        trhth = hht.diagonal(dim1=1, dim2=2).sum(1)
        eye = torch.eye(nr, device="cuda")
        outs = []
        for t in range(self.gamma.shape[0]):
            res = y - torch.bmm(h, x[..., None])[..., 0]
            v2 = ((res * res).sum(1) - nr * sigma2 / 2) / trhth
            v2 = v2.clamp_min(1e-9)
            a = v2[:, None, None] * hht + (sigma2 / 2) * eye
            sol = torch.linalg.solve(a, torch.cat([res[..., None], h], 2))
            what = v2[:, None, None] * torch.bmm(h.transpose(1, 2), sol)
            wr, wh = what[..., 0], what[..., 1:]
            norm = k / wh.diagonal(dim1=1, dim2=2).sum(1)
            r = x + self.gamma[t] * norm[:, None] * wr
            c = torch.eye(k, device="cuda") - self.theta[t] * norm[:, None, None] * wh
            w = norm[:, None, None] * what[..., 1:].transpose(1, 2)
            tau2 = ((c * c).sum((1, 2)) / k * v2 + self.theta[t] ** 2 / (4 * k) * (w * w).sum((1, 2)) * sigma2)
            p = torch.softmax(-(r[..., None] - lv) ** 2 / (2 * tau2[:, None, None].clamp_min(1e-9)), -1)
            xhat = (p * lv).sum(-1)
            x = self.phi[t] * (xhat - self.xi[t] * r)
            outs.append(xhat)
            del res, v2, a, sol, what, wr, wh, r, c, w, tau2, p
        return outs


def _mimo_batch(bsz, nt, nr, snr_db):
    """16-QAM symbols of nt users over an i.i.d. Rayleigh channel to nr antennas, in the real-valued equivalent
    (2nr x 2nt), with AWGN at the drawn SNR per receive antenna."""
    bits = torch.randint(0, 2, (bsz, nt, 4), device="cuda").float()
    re, im = _qam(bits)
    x = torch.cat([re, im], 1)
    hr = torch.randn(bsz, nr, nt, device="cuda") / math.sqrt(2 * nr)
    hi = torch.randn(bsz, nr, nt, device="cuda") / math.sqrt(2 * nr)
    h = torch.cat([torch.cat([hr, -hi], 2), torch.cat([hi, hr], 2)], 1)
    sigma2 = nt / nr * 10 ** (-snr_db / 10)
    y = torch.bmm(h, x[..., None])[..., 0] + math.sqrt(sigma2 / 2) * torch.randn(bsz, 2 * nr, device="cuda")
    return h, y, x, sigma2


@_workload("MIMO detection by deep unfolding written by hand (fp32): 4 phases, each an antenna configuration drawn (4x8 up to 32x64 users x receive antennas, 16-QAM, real-valued equivalent of an i.i.d. Rayleigh channel drawn per sample) and a detector drawn: DetNet (Samuel et al. 2017; 10-24 layers sized to the configuration, hidden 8K, auxiliary 2K, soft 4-PAM projection by sums of tanh, a log-weighted loss over every layer) or OAMP-Net2 (He et al. 2020; 6-10 layers of an LMMSE-type linear estimator rebuilt per layer by batched linalg.solve for the current error variance, trace normalisation, the posterior-mean denoiser over the 4-PAM alphabet by softmax; 4 learned scalars a layer); 40-70 training steps of 256-4096 channel uses (drawn, smaller for large arrays) at SNR drawn from 8-22 dB, Adam; after each phase an evaluation without grad: symbol error rates at 5 SNRs of the detector and of the LMMSE baseline (batched solves) read back")
def detnet_mimo_train(rng):
    configs = [(4, 8), (8, 8), (8, 16), (16, 16), (16, 32), (32, 64)]
    lv = torch.tensor([-3.0, -1.0, 1.0, 3.0], device="cuda") / math.sqrt(10)
    for phase in range(_smoke(4, 2)):
        nt, nr = rng.choice(configs)
        nt, nr = _smoke(nt, 2), _smoke(nr, 4)
        k = 2 * nt
        if rng.random() < 0.5:
            layers = min(24, max(10, 3 * nt // 2))
            model = _DetNet(k, _smoke(layers, 2), 4 * k, k).cuda()
        else:
            model = _OampNet2(_smoke(rng.randint(6, 10), 2)).cuda()
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        bmax = max(256, _smoke(4096, 8) * 8 // nt)
        for step in range(_smoke(rng.randint(40, 70), 3)):
            bsz = rng.choice([b for b in (256, 512, 1024, 2048, 4096) if b <= bmax] or [8])
            h, y, x, s2 = _mimo_batch(_smoke(bsz, 8), nt, nr, rng.uniform(8, 22))
            outs = model(h, y, s2)
            loss = sum(math.log(i + 2) * ((o - x) ** 2).sum(1).mean() for i, o in enumerate(outs)) / len(outs)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            del h, y, x, outs, loss
        ser = []
        with torch.no_grad():
            for snr in (8.0, 11.5, 15.0, 18.5, 22.0):
                h, y, x, s2 = _mimo_batch(_smoke(4096, 8), nt, nr, snr)
                xd = model(h, y, s2)[-1]
                hth = torch.bmm(h.transpose(1, 2), h) + (s2 / 2) * torch.eye(k, device="cuda")
                xl = torch.linalg.solve(hth, torch.bmm(h.transpose(1, 2), y[..., None]))[..., 0]
                idx = x[..., None].sub(lv).abs().argmin(-1)
                for est in (xd, xl):
                    hard = est[..., None].sub(lv).abs().argmin(-1)
                    ser.append((hard != idx).float().mean())
                del h, y, x, xd, hth, xl, idx, hard
        torch.stack(ser).cpu()
        del model, opt, ser


# ---------------------------------------------------------------- automatic modulation classification service


class _AmcTransformer(torch.nn.Module):
    """A patch transformer over IQ: a strided conv stem (patches of 16 complex samples as 32 real channels), a
    class token, learned positions (interpolated to the snippet length), pre-norm encoder layers, a linear head."""

    def __init__(self, d, layers, heads, classes, patch, maxpos):
        super().__init__()
        self.heads, self.patch = heads, patch
        self.stem = torch.nn.Conv1d(2, d, patch, stride=patch)
        self.cls = torch.nn.Parameter(torch.zeros(1, 1, d))
        self.pos = torch.nn.Parameter(torch.randn(1, d, maxpos) * 0.02)
        self.n1 = torch.nn.ModuleList([torch.nn.LayerNorm(d) for _ in range(layers)])
        self.qkv = torch.nn.ModuleList([torch.nn.Linear(d, 3 * d) for _ in range(layers)])
        self.proj = torch.nn.ModuleList([torch.nn.Linear(d, d) for _ in range(layers)])
        self.n2 = torch.nn.ModuleList([torch.nn.LayerNorm(d) for _ in range(layers)])
        self.ff = torch.nn.ModuleList([torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(),
                                                           torch.nn.Linear(4 * d, d)) for _ in range(layers)])
        self.norm = torch.nn.LayerNorm(d)
        self.head = torch.nn.Linear(d, classes)

    def forward(self, iq):
        t = self.stem(iq)
        t = (t + _F.interpolate(self.pos, size=t.shape[2], mode="linear", align_corners=False)).transpose(1, 2)
        h = torch.cat([self.cls.expand(t.shape[0], 1, t.shape[2]), t], 1)
        b, n, d = h.shape
        for n1, qkv, proj, n2, ff in zip(self.n1, self.qkv, self.proj, self.n2, self.ff):
            q, k, v = qkv(n1(h)).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
            h = h + proj(_F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, d))
            h = h + ff(n2(h))
        return self.head(self.norm(h[:, 0]))


def _iq_normalise(iq):
    """The service's front end: DC removal, a coarse carrier-frequency-offset correction from the mean phase
    increment (the lag-1 autocorrelation), unit average power. iq: (B, 2, L)."""
    z = torch.complex(iq[:, 0], iq[:, 1])
    z = z - z.mean(1, keepdim=True)
    ac = (z[:, 1:] * z[:, :-1].conj()).sum(1)
    w = torch.angle(ac)
    ramp = torch.arange(z.shape[1], device="cuda")[None] * w[:, None]
    z = z * torch.polar(torch.ones_like(ramp), -ramp)
    z = z / (z.abs().pow(2).mean(1, keepdim=True).sqrt() + 1e-6)
    return torch.view_as_real(z).permute(0, 2, 1).contiguous()


@_workload("automatic modulation classification service written by hand (random init): two patch transformers over IQ (patches of 16 samples by a strided conv stem, learned positions interpolated to the length, a class token; a fast model of width 128, 4 layers, 4 heads for snippets up to 1024 samples and an accurate one of width 256, 6 layers, 8 heads for longer ones; 24 classes) answering 3,200 request batches under inference mode and bf16 autocast: each batch 8-256 snippets (drawn) of one length drawn from 128-8192 samples, from reused pinned host buffers uploaded on a side stream one batch ahead (waited on by event, record_stream'ed); a front end on the device (DC removal, CFO correction from the lag-1 autocorrelation, power normalisation), the model chosen by length, softmax, top-2 classes and confidences; the predicted class histogram read back every 10 batches; every 200 batches a scan of a long capture (1-4M samples made on the device) cut into overlapping windows of 1024 (hop 512) classified in chunks of 512 windows by the fast model, per-window labels and confidences kept")
def amc_iq_serve(rng):
    classes = 24
    fast = _AmcTransformer(_smoke(128, 16), _smoke(4, 1), 4, classes, 16, 64).cuda().eval()
    big = _AmcTransformer(_smoke(256, 16), _smoke(6, 1), 8, classes, 16, 512).cuda().eval()
    lens = _smoke([128, 256, 512, 1024, 2048, 4096, 8192], [64, 128, 256])
    bsizes = _smoke([8, 16, 32, 64, 128, 256], [2, 4])
    lmax, bmax = max(lens), max(bsizes)
    host = [torch.randn(bmax * 2 * lmax).pin_memory() for _ in range(2)]
    side = torch.cuda.Stream()
    done = [None, None]

    def fetch(i):
        n = rng.choice(lens)
        bsz = min(rng.choice(bsizes), max(2, _smoke(262_144, 4096) // n))
        s = i % 2
        if done[s] is not None:
            done[s].synchronize()
        with torch.cuda.stream(side):
            iq = host[s][:bsz * 2 * n].view(bsz, 2, n).to("cuda", non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(side)
        done[s] = ev
        return iq, ev

    hist = torch.zeros(classes, device="cuda")
    nxt = fetch(0)
    for req in range(_smoke(3200, 4)):
        iq, ev = nxt
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        iq.record_stream(cur)
        nxt = fetch(req + 1)
        with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
            x = _iq_normalise(iq)
            model = fast if iq.shape[2] <= _smoke(1024, 128) else big
            p = torch.softmax(model(x).float(), -1)
            conf, top = p.topk(2, -1)
            hist += torch.zeros_like(hist).index_add_(0, top[:, 0], torch.ones_like(conf[:, 0]))
            del x, p, conf, top
        del iq
        if (req + 1) % 10 == 0:
            hist.cpu()
        if (req + 1) % _smoke(200, 2) == 0:
            total = rng.randint(_smoke(1_000_000, 4096), _smoke(4_000_000, 8192))
            win, hop = _smoke(1024, 128), _smoke(512, 64)
            with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
                cap = torch.randn(2, total, device="cuda")
                frames = cap.unfold(1, win, hop).permute(1, 0, 2)
                labels, confs = [], []
                for i in range(0, frames.shape[0], _smoke(512, 16)):
                    p = torch.softmax(fast(_iq_normalise(frames[i:i + _smoke(512, 16)])).float(), -1)
                    c, l_ = p.max(-1)
                    labels.append(l_)
                    confs.append(c)
                    del p
                lab, cf = torch.cat(labels), torch.cat(confs)
                torch.stack([lab.float().mean(), cf.mean()]).cpu()
                del cap, frames, labels, confs, lab, cf

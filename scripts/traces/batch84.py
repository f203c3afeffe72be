"""The eighty-fourth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch83_b.py are): telecommunications, wireless and signal processing, written in torch alone, first half. Neural OFDM
channel estimation and equalisation training (a DeepRx-style dilated convolutional receiver over the resource grid of
a simulated multipath, Doppler-faded, multi-antenna uplink slot with pilots, trained to output the bit LLRs of
QPSK/16QAM/64QAM at drawn bandwidths), learned decoding of error-correcting codes (an ECCT-style transformer decoder
over the magnitude and syndrome tokens of a drawn LDPC-like code, attention masked by the code's Tanner graph, trained
to predict the channel's multiplicative noise), radio-frequency modulation classification from IQ samples (signals of
ten modulations synthesised on the device with pulse shaping, frequency offsets and noise at drawn lengths, a
convolutional stem and a transformer under the padding mask) and cell-load forecasting (a DCRNN-style graph GRU with
diffusion convolutions by index_select and index_add over a k-nearest-neighbour graph of a drawn number of cells,
encoder-decoder over drawn history lengths). Same conventions as the earlier batches: nothing downloaded, data drawn at
random on the device, `rng` the workload's random.Random for every shape, count and sampled choice, sizes through
`_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: batch sizes,
bandwidths, code choices, sequence lengths and cell counts are fixed on the host, padding handled by masks multiplied
in or by torch.where / masked_fill, no boolean-mask indexing; losses and metrics are read back only at logging points.
All four are single-stream. The models run under bf16 autocast (the channel simulations in fp32 / complex64 outside
it). Every lookup table (constellations, positions) covers the largest index that can occur.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new84.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and for
which of them the CPU smoke run (RECORD_SMOKE=1) ran.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, mlp, randint

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke, _loguniform = _b.workload, _b.smoke, _b.loguniform
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _qam(bps):
    """A square constellation of 2^bps points (bps even), unit average power, indexed by the bits' integer."""
    m = 2 ** (bps // 2)
    levels = torch.arange(m, device="cuda").float() * 2 - (m - 1)
    i = torch.arange(2 ** bps, device="cuda")
    pts = torch.complex(levels[i // m], levels[i % m])
    return pts / pts.abs().pow(2).mean().sqrt()


def _bits_to_symbols(bits, table):
    """bits (..., bps) of 0/1 -> the table's complex symbols; the integer is below 2^bps = the table's length."""
    bps = bits.shape[-1]
    w = 2 ** torch.arange(bps - 1, -1, -1, device=bits.device)
    return table[(bits * w).sum(-1)]


def _multipath(b, nrx, nsym, nsc, taps, nfft, doppler):
    """A tapped-delay-line channel with an exponential power-delay profile and per-tap Doppler: (b, nrx, nsym, nsc)."""
    delay = torch.rand(b, 1, taps, device="cuda") * 0.08 * nfft
    pdp = torch.exp(-delay / (0.02 * nfft))
    pdp = pdp / pdp.sum(-1, keepdim=True)
    g = torch.complex(torch.randn(b, nrx, taps, device="cuda"), torch.randn(b, nrx, taps, device="cuda")) \
        * (pdp / 2).sqrt()
    k = torch.arange(nsc, device="cuda").float()
    freq = torch.polar(torch.ones_like(delay)[..., None].expand(-1, -1, -1, nsc),
                       -2 * math.pi * delay[..., None] * k / nfft)  # (b, 1, taps, nsc)
    fd = (torch.rand(b, 1, taps, device="cuda") * 2 - 1) * doppler
    t = torch.arange(nsym, device="cuda").float()
    tv = torch.polar(torch.ones_like(fd)[..., None].expand(-1, -1, -1, nsym), 2 * math.pi * fd[..., None] * t)
    return torch.einsum("brl,blt,blk->brtk", g, tv[:, 0], freq[:, 0])


# ---------------------------------------------------------------- neural OFDM channel estimation and equalisation


class _DeepRx(_nn.Module):
    def __init__(self, cin, c, dil, nbits):
        super().__init__()
        self.stem = _nn.Conv2d(cin, c, 3, 1, 1)
        self.blocks = _nn.ModuleList()
        for d in dil:
            self.blocks.append(_nn.Sequential(
                _nn.BatchNorm2d(c), _nn.ReLU(), _nn.Conv2d(c, c, 3, 1, d, dilation=d, groups=c, bias=False),
                _nn.Conv2d(c, c, 1), _nn.BatchNorm2d(c), _nn.ReLU(),
                _nn.Conv2d(c, c, 3, 1, d, dilation=d, groups=c, bias=False), _nn.Conv2d(c, c, 1)))
        self.head = _nn.Sequential(_nn.BatchNorm2d(c), _nn.ReLU(), _nn.Conv2d(c, nbits, 1))

    def forward(self, x):
        h = self.stem(x)
        for blk in self.blocks:
            h = h + blk(h)
        return self.head(h)


def _rx_features(y, pilots, pmask, amask, snr_db):
    """Received grid y (b, nrx, T, K), known pilots (T, K) and their mask, antenna mask (b, nrx), SNR (b,) ->
    (b, 4 nrx + 3, T, K): y, the pilots, the least-squares estimate at the pilots, the SNR map."""
    b, nrx, t, k = y.shape
    y = y * amask[:, :, None, None]
    ls = y * pilots.conj()[None, None] * pmask[None, None]
    feats = [torch.view_as_real(y).permute(0, 1, 4, 2, 3).reshape(b, 2 * nrx, t, k),
             torch.view_as_real(ls).permute(0, 1, 4, 2, 3).reshape(b, 2 * nrx, t, k),
             torch.view_as_real(pilots * pmask).permute(2, 0, 1)[None].expand(b, 2, t, k),
             (snr_db[:, None, None, None] / 20).expand(b, 1, t, k)]
    return torch.cat(feats, 1)


@_workload("neural OFDM channel estimation and equalisation training (random init, DeepRx-like): uplink slots of 14 OFDM symbols over 12-52 resource blocks (144-624 subcarriers, drawn per step) of a 1024-point FFT, 8-24 slots a step (drawn), QPSK, 16QAM or 64QAM (drawn per step) with two DMRS pilot symbols on every other subcarrier; a 4-antenna receiver with 1-4 antennas active (drawn per slot, the rest masked), a tapped-delay-line channel of 4-16 taps (drawn per step) with an exponential power-delay profile and per-tap Doppler, AWGN at 0-25 dB per slot, all simulated in complex64 on the device; a dilated depthwise-separable residual convnet (96 channels, 10 blocks, dilations up to (3, 8), batch norm) over the received grid, the pilots, the least-squares estimates and an SNR map, 6 LLRs per resource element; bit cross-entropy over the data elements and the modulation's bits only; AdamW, bf16 autocast, 480 steps; the loss read back every 20 steps and every 120 steps an evaluation of 3 SNRs x 16 slots at 52 blocks and 16QAM with the bit error rate read back")
def ofdm_neural_rx_train(rng):
    nrx, nsym, nfft, c = 4, 14, _smoke(1024, 64), _smoke(96, 8)
    dil = _smoke([(1, 1), (1, 2), (2, 3), (2, 4), (3, 6), (3, 8), (2, 4), (2, 3), (1, 2), (1, 1)], [(1, 1), (1, 2)])
    prb = (_smoke(12, 1), _smoke(52, 3))
    model = _DeepRx(4 * nrx + 3, c, dil, 6).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    tables = {bps: _qam(bps) for bps in (2, 4, 6)}
    kmax = 12 * prb[1]
    pmask_full = torch.zeros(nsym, kmax, device="cuda")
    pmask_full[2, ::2] = 1
    pmask_full[11, ::2] = 1
    pil_full = _bits_to_symbols(torch.randint(0, 2, (nsym, kmax, 2), device="cuda"), tables[2])

    def slot(b, nsc, bps, taps, snr_lo, snr_hi):
        pm, pil = pmask_full[:, :nsc], pil_full[:, :nsc]
        bits = torch.randint(0, 2, (b, nsym, nsc, bps), device="cuda")
        x = torch.where(pm[None] > 0, pil[None], _bits_to_symbols(bits, tables[bps]))
        h = _multipath(b, nrx, nsym, nsc, taps, nfft, 0.02)
        snr = torch.rand(b, device="cuda") * (snr_hi - snr_lo) + snr_lo
        sigma = (10 ** (-snr / 20))[:, None, None, None] / math.sqrt(2)
        noise = torch.complex(torch.randn(b, nrx, nsym, nsc, device="cuda"),
                              torch.randn(b, nrx, nsym, nsc, device="cuda")) * sigma
        y = h * x[:, None] + noise
        return y, bits, pm, pil, snr

    steps = _smoke(480, 3)
    for step in range(steps):
        model.train()
        b, nsc = rng.randint(_smoke(8, 2), _smoke(24, 3)), 12 * rng.randint(*prb)
        bps, taps = rng.choice([2, 4, 6]), rng.randint(4, 16)
        active = [rng.randint(1, nrx) for _ in range(b)]
        y, bits, pm, pil, snr = slot(b, nsc, bps, taps, 0.0, 25.0)
        amask = (torch.arange(nrx, device="cuda")[None] < torch.tensor(active, device="cuda")[:, None]).float()
        x = _rx_features(y, pil, pm, amask, snr).contiguous(memory_format=torch.channels_last)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            llr = model(x)
        llr = llr[:, :bps].float().permute(0, 2, 3, 1)
        dmask = (1 - pm)[None, :, :, None]
        bce = _F.binary_cross_entropy_with_logits(llr, bits.float(), reduction="none")
        loss = (bce * dmask).sum() / (dmask.sum() * b * bps)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 20 == 0:
            loss.item()
        del y, bits, pm, pil, snr, amask, x, llr, dmask, bce, loss
        if (step + 1) % _smoke(120, 2) == 0:
            model.eval()
            bers = []
            with torch.no_grad():
                for snr_db in (5.0, 12.0, 20.0):
                    nb, nsc = _smoke(16, 2), 12 * prb[1]
                    y, bits, pm, pil, snr = slot(nb, nsc, 4, 8, snr_db, snr_db)
                    x = _rx_features(y, pil, pm, torch.ones(nb, nrx, device="cuda"), snr)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        llr = model(x.contiguous(memory_format=torch.channels_last))[:, :4].float()
                    err = ((llr.permute(0, 2, 3, 1) > 0).float() != bits.float()).float() * (1 - pm)[None, :, :, None]
                    bers.append(err.sum() / ((1 - pm).sum() * nb * 4))
                    del y, bits, pm, pil, snr, x, llr, err
                res = torch.stack(bers)
            res.tolist()
            del bers, res


# ---------------------------------------------------------------- ECCT-style transformer decoder of LDPC-like codes


def _parity_check(n, m, col_weight):
    """A random parity-check matrix (m, n) with `col_weight` ones a column and an identity part, built on the device."""
    rows = torch.rand(m, n - m, device="cuda").argsort(0)[:col_weight]
    h = torch.zeros(m, n - m, device="cuda").scatter_(0, rows, 1.0)
    return torch.cat([h, torch.eye(m, device="cuda")], 1)


def _tanner_mask(h):
    """ECCT's attention mask (True = attend) over n bit tokens then m check tokens."""
    m, n = h.shape
    bb = (h.T @ h) > 0
    cc = (h @ h.T) > 0
    top = torch.cat([bb, h.T > 0], 1)
    bot = torch.cat([h > 0, cc], 1)
    return torch.cat([top, bot], 0) | torch.eye(n + m, dtype=torch.bool, device="cuda")


class _ECCT(_nn.Module):
    def __init__(self, max_len, d, heads, layers):
        super().__init__()
        self.pos = _nn.Embedding(max_len, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm, self.out = _nn.LayerNorm(d), _nn.Linear(d, 1)

    def forward(self, mag, syn, mask):
        n = mag.shape[1]
        tok = torch.cat([mag, syn], 1)
        x = tok[..., None] * self.pos(torch.arange(tok.shape[1], device=tok.device))[None]
        for blk in self.blocks:
            x = blk(x, mask=mask)
        return self.out(self.norm(x[:, :n]))[..., 0]


@_workload("learned decoding of error-correcting codes (random init, ECCT-like transformer decoder): five LDPC-like codes built on the device at start (n, m = 64-32, 96-48, 128-64, 121-40, 155-62, column weight 3 plus an identity part), one drawn per step; BPSK over AWGN at an Eb/N0 drawn per word (3-7 dB), 64-192 words a step (drawn); n + m tokens of the received magnitudes and the hard-decision syndrome (by a matmul mod 2), each a scalar times a learned position vector (the table sized for the longest code, 217 rows), 6 pre-norm blocks (d 128, 8 heads) under the Tanner-graph attention mask (bits with bits sharing a check, bits with their checks, checks sharing a bit), a per-bit head predicting the multiplicative noise; bit cross-entropy; AdamW with a cosine schedule, bf16 autocast, 440 steps; the loss read back every 20 steps and every 110 steps an evaluation of the longest code at 3 SNRs x 256 words with the bit and frame error rates and the decoded syndrome weight read back")
def ecc_transformer_decoder_train(rng):
    codes = _smoke([(64, 32), (96, 48), (128, 64), (121, 40), (155, 62)], [(16, 8), (24, 12)])
    d, heads, layers = _smoke(128, 16), _smoke(8, 2), _smoke(6, 1)
    hs = [_parity_check(n, m, 3) for n, m in codes]
    masks = [_tanner_mask(h) for h in hs]
    max_len = max(n + m for n, m in codes)
    model = _ECCT(max_len, d, heads, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=1e-4)
    steps = _smoke(440, 3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)

    def words(b, ci, lo, hi):
        n, m = codes[ci]
        rate = (n - m) / n
        ebn0 = torch.rand(b, 1, device="cuda") * (hi - lo) + lo
        sigma = (1 / (2 * rate * 10 ** (ebn0 / 10))).sqrt()
        y = 1 + sigma * torch.randn(b, n, device="cuda")  # the all-zero codeword, BPSK +1
        hard = (y < 0).float()
        syn = 1 - 2 * (hard @ hs[ci].T).remainder(2)
        return y, hard, syn

    for step in range(steps):
        model.train()
        b, ci = rng.randint(_smoke(64, 4), _smoke(192, 8)), rng.randrange(len(codes))
        y, hard, syn = words(b, ci, 3.0, 7.0)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            z = model(y.abs(), syn, masks[ci][None, None])
        loss = _F.binary_cross_entropy_with_logits(z.float(), hard)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            loss.item()
        del y, hard, syn, z, loss
        if (step + 1) % _smoke(110, 2) == 0:
            model.eval()
            ci = max(range(len(codes)), key=lambda i: sum(codes[i]))
            out = []
            with torch.no_grad():
                for snr in (4.0, 5.0, 6.0):
                    y, hard, syn = words(_smoke(256, 4), ci, snr, snr)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        z = model(y.abs(), syn, masks[ci][None, None]).float()
                    dec = ((y < 0).float() + (z > 0).float()).remainder(2)  # flip the bits predicted noisy
                    ber = dec.mean()
                    fer = (dec.sum(1) > 0).float().mean()
                    sw = (dec @ hs[ci].T).remainder(2).sum(1).mean()
                    out.append(torch.stack([ber, fer, sw]))
                    del y, hard, syn, z, dec, ber, fer, sw
                res = torch.stack(out)
            res.tolist()
            del out, res


# ---------------------------------------------------------------- RF modulation classification from IQ samples


class _IQClassifier(_nn.Module):
    def __init__(self, d, heads, layers, max_tokens, classes):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv1d(2, d // 2, 7, 2, 3), _nn.BatchNorm1d(d // 2), _nn.GELU(),
                                   _nn.Conv1d(d // 2, d, 5, 2, 2), _nn.BatchNorm1d(d), _nn.GELU())
        self.pos = _nn.Embedding(max_tokens, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm, self.head = _nn.LayerNorm(d), _nn.Linear(d, classes)

    def forward(self, x, tmask):
        h = self.stem(x).transpose(1, 2)
        h = h + self.pos(torch.arange(h.shape[1], device=h.device))[None]
        key = ((1 - tmask) * -1e4)[:, None, None, :].to(h.dtype)
        for blk in self.blocks:
            h = blk(h, mask=key)
        m = tmask[..., None].to(h.dtype)
        return self.head(self.norm((h * m).sum(1) / m.sum(1).clamp(min=1)))


def _mod_tables():
    """Ten modulations: (10, 64) complex constellation points (linear ones) or FSK frequencies, their orders and
    which are FSK. A symbol index is drawn below the class's order (at most 64, the table's width)."""
    tab = torch.zeros(10, 64, dtype=torch.complex64, device="cuda")
    orders = [2, 4, 8, 16, 64, 4, 2, 32, 2, 4]
    k = torch.arange(64, device="cuda").float()
    tab[0, :2] = torch.polar(torch.ones(2, device="cuda"), k[:2] * math.pi)  # BPSK
    tab[1, :4] = torch.polar(torch.ones(4, device="cuda"), k[:4] * math.pi / 2 + math.pi / 4)  # QPSK
    tab[2, :8] = torch.polar(torch.ones(8, device="cuda"), k[:8] * math.pi / 4)  # 8PSK
    tab[3, :16] = _qam(4)
    tab[4, :64] = _qam(6)
    tab[5, :4] = torch.complex((k[:4] * 2 - 3) / math.sqrt(5), torch.zeros(4, device="cuda"))  # PAM4
    tab[6, :2] = torch.complex(k[:2] * math.sqrt(2), torch.zeros(2, device="cuda"))  # OOK
    ring = torch.cat([torch.polar(torch.ones(4, device="cuda") * 0.5, k[:4] * math.pi / 2),
                      torch.polar(torch.ones(12, device="cuda"), k[:12] * math.pi / 6),
                      torch.polar(torch.ones(16, device="cuda") * 1.4, k[:16] * math.pi / 8)])
    tab[7, :32] = ring / ring.abs().pow(2).mean().sqrt()  # 32APSK
    tab[8, :2] = torch.complex(k[:2] * 2 - 1, torch.zeros(2, device="cuda")) * 0.25  # 2FSK deviations
    tab[9, :4] = torch.complex((k[:4] * 2 - 3) / 3, torch.zeros(4, device="cuda")) * 0.25  # 4FSK deviations
    fsk = torch.tensor([0, 0, 0, 0, 0, 0, 0, 0, 1, 1], device="cuda").float()
    return tab, torch.tensor(orders, device="cuda").float(), fsk


def _synth_iq(b, lens, sps, tab, orders, fsk, snr_lo, snr_hi, mult):
    """b signals of the given lengths (padded to the longest, a multiple of mult): (b, 2, L), their labels, mask."""
    length = -(-max(lens) // mult) * mult
    nsym = length // sps + 8
    cls = torch.randint(0, 10, (b,), device="cuda")
    idx = (torch.rand(b, nsym, device="cuda") * orders[cls][:, None]).long().clamp(max=63)
    sym = tab[cls[:, None], idx]
    is_fsk = fsk[cls][:, None]
    up = torch.zeros(b, nsym * sps, dtype=torch.complex64, device="cuda")
    up[:, ::sps] = sym
    n = torch.arange(-4 * sps, 4 * sps + 1, device="cuda").float() / sps
    beta = 0.35
    taps = torch.sinc(n) * torch.cos(math.pi * beta * n) / (1 - (2 * beta * n).pow(2)).clamp(min=1e-3)
    taps = (taps / taps.norm()).view(1, 1, -1).expand(2, 1, -1)
    shaped = _F.conv1d(torch.view_as_real(up).permute(0, 2, 1), taps, padding=4 * sps, groups=2)
    lin = torch.complex(shaped[:, 0], shaped[:, 1])
    freq = sym.real.repeat_interleave(sps, 1)
    ph = torch.cumsum(freq * math.pi, 1)
    fsk_sig = torch.polar(torch.ones_like(ph), ph)
    sig = (is_fsk * fsk_sig + (1 - is_fsk) * lin)[:, :length]
    sig = sig / sig.abs().pow(2).mean(1, keepdim=True).clamp(min=1e-6).sqrt()
    t = torch.arange(length, device="cuda").float()
    cfo = (torch.rand(b, 1, device="cuda") - 0.5) * 0.02
    sig = sig * torch.polar(torch.ones(b, length, device="cuda"), 2 * math.pi * cfo * t
                            + torch.rand(b, 1, device="cuda") * 2 * math.pi)
    snr = torch.rand(b, 1, device="cuda") * (snr_hi - snr_lo) + snr_lo
    sig = sig + torch.complex(torch.randn(b, length, device="cuda"), torch.randn(b, length, device="cuda")) \
        * (10 ** (-snr / 20)) / math.sqrt(2)
    mask = (t[None] < torch.tensor(lens, device="cuda")[:, None]).float()
    x = torch.view_as_real(sig).permute(0, 2, 1) * mask[:, None]
    return x.contiguous(), cls, mask


@_workload("radio-frequency modulation classification training (random init, a convolutional-transformer classifier over IQ samples, RadioML-like): ten modulations (BPSK, QPSK, 8PSK, 16QAM, 64QAM, PAM4, OOK, 32APSK, 2FSK, 4FSK, from one constellation table) synthesised on the device, 2, 4 or 8 samples a symbol (drawn per step), raised-cosine pulse shaping by conv1d, FSK by phase accumulation, a carrier frequency offset and phase, AWGN at -6 to 20 dB per signal; 64-192 signals a step (drawn) of 128-1024 samples (drawn per signal, padded to the longest as a multiple of 64, masked); a 2-layer strided conv1d stem to 128 channels (length / 4), a learned position table of 256 rows (the padded maximum / 4), 4 pre-norm blocks (4 heads) under the padding mask, a masked mean and a 10-way head; cross-entropy with label smoothing; AdamW, bf16 autocast, 570 steps; the loss read back every 20 steps and every 114 steps an evaluation of 4 SNR bins x 256 signals of 1024 samples with the accuracy per bin read back")
def iq_modulation_classify_train(rng):
    d, heads, layers = _smoke(128, 16), _smoke(4, 2), _smoke(4, 1)
    lmin, lmax, mult = _smoke(128, 16), _smoke(1024, 64), _smoke(64, 8)
    model = _IQClassifier(d, heads, layers, lmax // 4, 10).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    tab, orders, fsk = _mod_tables()
    steps = _smoke(570, 3)
    for step in range(steps):
        model.train()
        b, sps = rng.randint(_smoke(64, 4), _smoke(192, 8)), rng.choice([2, 4, 8])
        lens = [rng.randint(lmin, lmax) for _ in range(b)]
        x, cls, mask = _synth_iq(b, lens, sps, tab, orders, fsk, -6.0, 20.0, mult)
        tmask = mask[:, ::4]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x, tmask)
        loss = _F.cross_entropy(logits.float(), cls, label_smoothing=0.05)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 20 == 0:
            loss.item()
        del x, cls, mask, tmask, logits, loss
        if (step + 1) % _smoke(114, 2) == 0:
            model.eval()
            accs = []
            with torch.no_grad():
                for lo in (-6.0, 0.0, 8.0, 16.0):
                    nb = _smoke(256, 4)
                    x, cls, mask = _synth_iq(nb, [lmax] * nb, 4, tab, orders, fsk, lo, lo + 4, mult)
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        logits = model(x, mask[:, ::4]).float()
                    accs.append((logits.argmax(-1) == cls).float().mean())
                    del x, cls, mask, logits
                res = torch.stack(accs)
            res.tolist()
            del accs, res


# ---------------------------------------------------------------- cell-load forecasting with a graph GRU


class _DiffConv(_nn.Module):
    """A diffusion convolution: x and its 1..K-hop propagations over weighted edges (index_select, index_add),
    concatenated and mixed by a linear layer."""

    def __init__(self, din, dout, hops):
        super().__init__()
        self.hops = hops
        self.lin = _nn.Linear(din * (hops + 1), dout)

    def forward(self, x, snd, rcv, w):
        outs, z = [x], x
        for _ in range(self.hops):
            msg = z.index_select(0, snd) * w[:, None].to(z.dtype)
            z = torch.zeros_like(z).index_add_(0, rcv, msg)
            outs.append(z)
        return self.lin(torch.cat(outs, -1))


class _GraphGRUCell(_nn.Module):
    def __init__(self, din, hidden, hops):
        super().__init__()
        self.gates = _DiffConv(din + hidden, 2 * hidden, hops)
        self.cand = _DiffConv(din + hidden, hidden, hops)

    def forward(self, x, h, g):
        r, u = torch.sigmoid(self.gates(torch.cat([x, h], -1), *g)).chunk(2, -1)
        c = torch.tanh(self.cand(torch.cat([x, r * h], -1), *g))
        return u * h + (1 - u) * c


class _DCRNN(_nn.Module):
    def __init__(self, din, hidden, layers, hops, dout):
        super().__init__()
        self.enc = _nn.ModuleList(_GraphGRUCell(din if i == 0 else hidden, hidden, hops) for i in range(layers))
        self.dec = _nn.ModuleList(_GraphGRUCell(dout + 2 if i == 0 else hidden, hidden, hops) for i in range(layers))
        self.out = _nn.Linear(hidden, dout)
        self.hidden = hidden

    def forward(self, hist, fut_time, g, target=None, tf=0.0):
        """hist (T, N, din) over N = windows x cells nodes, fut_time (H, N, 2): the forecasts (H, N, dout)."""
        n = hist.shape[1]
        hs = [torch.zeros(n, self.hidden, device=hist.device, dtype=hist.dtype) for _ in self.enc]
        for t in range(hist.shape[0]):
            x = hist[t]
            for i, cell in enumerate(self.enc):
                hs[i] = cell(x, hs[i], g)
                x = hs[i]
        prev = hist[-1, :, :1]
        preds = []
        for t in range(fut_time.shape[0]):
            x = torch.cat([prev, fut_time[t]], -1)
            for i, cell in enumerate(self.dec):
                hs[i] = cell(x, hs[i], g)
                x = hs[i]
            p = self.out(x)
            preds.append(p)
            prev = p if target is None else torch.where(torch.rand(n, 1, device=p.device) < tf, target[t], p)
        return torch.stack(preds)


def _knn_graph(pos, k, windows):
    """Edges of each cell to its k nearest (by site distance), Gaussian-kernel weights normalised per receiver,
    repeated block-diagonally over the windows."""
    n = pos.shape[0]
    dist = torch.cdist(pos, pos) + torch.eye(n, device=pos.device) * 1e6
    dk, nb = dist.topk(k, -1, largest=False)
    w = torch.exp(-dk.pow(2) / (dk.pow(2).mean() + 1e-6))
    w = w / w.sum(-1, keepdim=True)
    off = (torch.arange(windows, device=pos.device) * n)[:, None]
    snd = (nb.flatten()[None] + off).flatten()
    rcv = (torch.arange(n, device=pos.device).repeat_interleave(k)[None] + off).flatten()
    return snd, rcv, w.flatten().repeat(windows)


def _cell_load(windows, n, steps, start):
    """Synthetic per-cell traffic: daily and weekly cycles with a per-cell phase and scale, bursts and noise,
    (steps, windows, n, 5) features (load, PRB use, users, time of day as sin and cos) and the time features."""
    t = (start[:, None] + torch.arange(steps, device="cuda")[None]).float()  # (windows, steps) in 15-minute slots
    day = 2 * math.pi * t / 96
    phase = torch.rand(1, n, 1, device="cuda") * 1.5
    scale = torch.rand(1, n, 1, device="cuda") * 0.8 + 0.2
    load = scale * (0.55 + 0.35 * torch.sin(day[:, None] - phase) + 0.1 * torch.sin(day[:, None] / 7)) \
        + 0.05 * torch.randn(windows, n, steps, device="cuda") \
        + 0.3 * (torch.rand(windows, n, steps, device="cuda") > 0.98).float()
    prb = (load * 1.1 + 0.05 * torch.randn_like(load)).clamp(0, 1)
    users = load * 3 + 0.2 * torch.randn_like(load)
    tf = torch.stack([torch.sin(day), torch.cos(day)], -1)[:, None].expand(-1, n, -1, -1)
    feats = torch.cat([torch.stack([load, prb, users], -1), tf], -1)
    return feats.permute(2, 0, 1, 3), tf.permute(2, 0, 1, 3)


@_workload("cell-load forecasting training (random init, a DCRNN-style diffusion-convolutional graph GRU): a region of 400-1,200 cells (drawn per step, sites placed at random) linked to their 6 nearest by a Gaussian-kernel weighted graph built per step (cdist, topk), 2-4 windows a step (drawn) batched block-diagonally; synthetic 15-minute cell traffic (daily and weekly cycles, per-cell phase and scale, bursts, noise) with load, PRB use, users and time of day; a 2-layer graph GRU encoder (hidden 64, 2-hop diffusion convolutions by index_select and index_add) over 12-24 past slots (drawn per step) and a 2-layer decoder over 12 future slots with scheduled sampling by torch.where; L1 on the load; Adam, clipping, bf16 autocast, 68 steps; the loss read back every 4 steps and every 17 steps an evaluation of 4 windows over 1,200 cells with the MAE and MAPE per horizon read back")
def cell_load_graph_gru_train(rng):
    hidden, layers, hops, k, horizon = _smoke(64, 8), 2, 2, _smoke(6, 3), _smoke(12, 2)
    cells = (_smoke(400, 8), _smoke(1200, 16))
    model = _DCRNN(5, hidden, layers, hops, 1).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    steps = _smoke(68, 2)

    def batch(w, n, hist):
        pos = torch.rand(n, 2, device="cuda") * 10
        g = _knn_graph(pos, k, w)
        start = torch.randint(0, 96 * 7, (w,), device="cuda")
        feats, tf = _cell_load(w, n, hist + horizon, start)
        x = feats[:hist].reshape(hist, w * n, 5)
        y = feats[hist:, :, :, :1].reshape(horizon, w * n, 1)
        ft = tf[hist:].reshape(horizon, w * n, 2)
        return g, x, y, ft

    for step in range(steps):
        model.train()
        w, n = rng.randint(_smoke(2, 1), _smoke(4, 2)), rng.randint(*cells)
        hist = rng.randint(_smoke(12, 2), _smoke(24, 3))
        g, x, y, ft = batch(w, n, hist)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(x, ft, g, target=y, tf=max(0.0, 1 - step / steps))
        loss = (pred.float() - y).abs().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        if step % 4 == 0:
            loss.item()
        del g, x, y, ft, pred, loss
        if (step + 1) % _smoke(17, 2) == 0:
            model.eval()
            with torch.no_grad():
                g, x, y, ft = batch(_smoke(4, 1), cells[1], _smoke(24, 3))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pred = model(x, ft, g).float()
                err = (pred - y).abs()
                res = torch.stack([err.mean((1, 2)), (err / y.abs().clamp(min=0.05)).mean((1, 2))])
            res.tolist()
            del g, x, y, ft, pred, err, res

"""The hundred-and-twenty-fourth batch of held-out workloads for record.py, second half (see batch124.py): hearing,
audiology and hearing aids, written in torch alone. Audiogram imputation training (a conditional variational
autoencoder over partially measured air- and bone-conduction audiograms with drawn test masks and demographics, the
full audiogram by a Gaussian likelihood, a KL term under a warm-up and hearing-aid candidacy from the latent mean),
cochlear-implant stimulation coding training (a conformer over filterbank frames of drawn durations, trained against
an ACE-like n-of-m teacher: which electrodes fire each frame, their current levels and the neural excitation after a
current-spread matrix of drawn decay), otoscope image classification fine-tuning (a ConvNeXt over ear-canal photos of
drawn resolutions with its stem and lower two stages frozen, the diagnosis and an ENT-referral flag) and a hearing-aid
acoustic scene service (an inverted-residual convnet over binaural log-mel spectrograms of drawn durations, the scene,
the SNR and own voice, the program's band gains and the interaural level differences).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the scene service), `rng` the workload's random.Random for every shape, count and sampled choice,
sizes through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or
masked_fill; no boolean-mask indexing; results read back only at logging points or once per request.
hearing_aid_scene_serve uploads its audio on a side stream (two reused pinned host buffers, one request ahead, through
workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast. No
position table is used (the conformer's positions are sinusoidal).
"""

import math

import torch

from batch_common import Batch
from workload_helpers import SideUploads, _sincos, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _mel_bank(n_bin, n_band, sr, lo=50.0):
    """A (n_bin, n_band) triangular filterbank on the mel scale over an rfft's bins, made on the device."""
    f = torch.arange(n_bin, device="cuda").float() * (sr / 2.0) / (n_bin - 1)
    mel_lo, mel_hi = 2595 * math.log10(1 + lo / 700.0), 2595 * math.log10(1 + sr / 2.0 / 700.0)
    pts = 700.0 * (10 ** (torch.linspace(mel_lo, mel_hi, n_band + 2, device="cuda") / 2595) - 1)
    a, c, e = pts[:-2], pts[1:-1], pts[2:]
    up, down = (f[:, None] - a) / (c - a), (e - f[:, None]) / (e - c)
    return torch.minimum(up, down).clamp_min(0.0)


# ---------------------------------------------------------------- audiogram imputation (conditional VAE)


class _AudiogramVae(_nn.Module):
    """Demographics (age, sex, noise-exposure years, aetiology of 8) to a condition vector; an encoder MLP over the
    masked thresholds, the test mask and the condition to a latent mean and log-variance; a decoder MLP from a latent
    sample and the condition to every threshold's mean and log-variance; a candidacy head on the latent mean."""

    def __init__(self, n_thr, d, latent, n_aet):
        super().__init__()
        self.aet = _nn.Embedding(n_aet, 32)
        self.demo = _nn.Linear(3 + 32, 64)
        self.enc = mlp(2 * n_thr + 64, d, 2 * latent, layers=3, act=_nn.SiLU, norm=True)
        self.dec = mlp(latent + 64, d, 2 * n_thr, layers=3, act=_nn.SiLU, norm=True)
        self.cand = mlp(latent, 64, 1, act=_nn.SiLU)

    def forward(self, thr, mask, num, aet):
        c = self.demo(torch.cat([num, self.aet(aet)], -1))
        mu, logvar = self.enc(torch.cat([thr * mask, mask, c], -1)).float().chunk(2, -1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        mean, lv = self.dec(torch.cat([z.to(c.dtype), c], -1)).float().chunk(2, -1)
        return mean, lv, mu, logvar, self.cand(mu.to(c.dtype))[:, 0].float()


@_workload("audiogram imputation training (random init, a conditional variational autoencoder over audiograms): 1,024-8,192 patients a step (drawn), each with 30 thresholds (air conduction at 11 frequencies from 125 Hz to 8 kHz and bone conduction at 4 frequencies from 500 Hz to 4 kHz, both ears) drawn on the device from age-related slopes, a noise notch at 4-6 kHz and noise, in dB HL clamped to -10..120, and demographics (age, sex, noise-exposure years, aetiology of 8); a test mask a patient (each threshold measured with a probability of 0.3-0.9 drawn per step); the demographics through an embedding and a linear layer, an encoder MLP (3 layers, width 512, layer norm, SiLU) over the masked thresholds, the mask and the condition to a 16-d latent, a reparameterised sample, a decoder MLP of the same shape to every threshold's mean and log-variance; a Gaussian NLL over all 30 thresholds, a KL term weighted by 0.1 after a linear warm-up over 200 steps, hearing-aid candidacy (four-frequency average above 25 dB in either ear) by BCE from the latent mean; Adam on a cosine schedule, clipping, bf16 autocast, 1,150 steps; the losses read back every 25 steps and every 230 steps a no-grad pass over 8,192 patients at a measuring probability of 0.4 with the mean absolute error on the unmeasured thresholds and the candidacy accuracy read back")
def audiogram_vae_impute_train(rng):
    n_thr, d, latent, n_aet = 30, _smoke(512, 16), _smoke(16, 4), 8
    model = _AudiogramVae(n_thr, d, latent, n_aet).cuda()
    steps = _smoke(1150, 3)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    oct_ac = torch.tensor([-3.0, -2.0, -1.0, -0.415, 0.0, 0.585, 1.0, 1.585, 2.0, 2.585, 3.0], device="cuda")
    oct_bc = torch.tensor([-1.0, 0.0, 1.0, 2.0], device="cuda")
    octs = torch.cat([oct_ac, oct_ac, oct_bc, oct_bc])
    pta_idx = torch.tensor([2, 4, 6, 8, 13, 15, 17, 19], device="cuda")

    def patients(b, p_meas):
        age = torch.rand(b, 1, device="cuda") * 80.0 + 10.0
        noise_y = torch.rand(b, 1, device="cuda") * 30.0 * (torch.rand(b, 1, device="cuda") < 0.3).float()
        sex = (torch.rand(b, 1, device="cuda") < 0.5).float()
        aet = torch.randint(0, n_aet, (b,), device="cuda")
        slope = (age - 20.0).clamp_min(0.0) * (0.3 + 0.25 * octs.clamp_min(0.0))
        notch = noise_y * 0.8 * torch.exp(-(octs - 2.3).pow(2) / 0.2)
        thr = (5.0 + slope + notch + 8.0 * torch.randn(b, n_thr, device="cuda")).clamp(-10.0, 120.0)
        mask = (torch.rand(b, n_thr, device="cuda") < p_meas).float()
        pta = thr[:, pta_idx].view(b, 2, 4).mean(-1)
        cand = (pta.amax(-1) > 25.0).float()
        num = torch.cat([age / 50.0, noise_y / 15.0, sex], -1)
        return (thr - 30.0) / 30.0, mask, num, aet, cand

    def run(thr, mask, num, aet):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return model(thr, mask, num, aet)

    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(1024, 4), _smoke(8192, 16))
        thr, mask, num, aet, cand = patients(b, rng.uniform(0.3, 0.9))
        mean, lv, mu, logvar, c_logit = run(thr, mask, num, aet)
        l_nll = (0.5 * (lv + (thr - mean).pow(2) / lv.exp())).mean()
        l_kl = (-0.5 * (1 + logvar - mu.pow(2) - logvar.exp())).sum(-1).mean()
        l_cand = _F.binary_cross_entropy_with_logits(c_logit, cand)
        loss = l_nll + min(1.0, step / 200.0) * 0.1 * l_kl + l_cand
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 25 == 0:
            torch.stack([l_nll.detach(), l_kl.detach(), l_cand.detach()]).tolist()
        del thr, mask, num, aet, cand, mean, lv, mu, logvar, c_logit, l_nll, l_kl, l_cand, loss
        if (step + 1) % _smoke(230, 2) == 0:
            model.eval()
            with torch.no_grad():
                thr, mask, num, aet, cand = patients(_smoke(8192, 16), 0.4)
                mean, lv, mu, logvar, c_logit = run(thr, mask, num, aet)
                un = 1.0 - mask
                mae = ((mean - thr).abs() * 30.0 * un).sum() / un.sum().clamp_min(1.0)
                res = torch.stack([mae, ((c_logit > 0).float() == cand).float().mean()])
            res.tolist()
            del thr, mask, num, aet, cand, mean, lv, mu, logvar, c_logit, un, mae, res


# ---------------------------------------------------------------- cochlear-implant stimulation coding (conformer)


class _ConformerBlock(_nn.Module):
    """Half-step feed-forward, self-attention under a key mask, a convolution module (pointwise to a GLU, a depthwise
    convolution of 15 frames over the kept frames, batch norm, SiLU, pointwise), half-step feed-forward, layer norm."""

    def __init__(self, d, heads):
        super().__init__()
        self.ff1, self.ff2 = [_nn.Sequential(_nn.LayerNorm(d), _nn.Linear(d, 4 * d), _nn.SiLU(), _nn.Linear(4 * d, d))
                              for _ in range(2)]
        self.n_att, self.qkv, self.o = _nn.LayerNorm(d), _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.n_conv, self.pw1 = _nn.LayerNorm(d), _nn.Linear(d, 2 * d)
        self.dw, self.bn, self.pw2 = _nn.Conv1d(d, d, 15, 1, 7, groups=d), _nn.BatchNorm1d(d), _nn.Linear(d, d)
        self.out = _nn.LayerNorm(d)
        self.h = heads

    def forward(self, x, keep):
        b, t, d = x.shape
        x = x + 0.5 * self.ff1(x)
        q, k, v = self.qkv(self.n_att(x)).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        a = _F.scaled_dot_product_attention(q, k, v, attn_mask=keep[:, None, None, :])
        x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
        c = _F.glu(self.pw1(self.n_conv(x)), -1).masked_fill(~keep[..., None], 0.0)
        c = _F.silu(self.bn(self.dw(c.transpose(1, 2)))).transpose(1, 2)
        x = x + self.pw2(c)
        x = x + 0.5 * self.ff2(x)
        return self.out(x)


class _CiCoder(_nn.Module):
    def __init__(self, n_mel, d, heads, layers, n_el):
        super().__init__()
        self.inp = _nn.Linear(n_mel, d)
        self.blocks = _nn.ModuleList(_ConformerBlock(d, heads) for _ in range(layers))
        self.head = _nn.Linear(d, 2 * n_el)
        self.d = d

    def forward(self, feat, keep):
        t = feat.shape[1]
        x = self.inp(feat) + _sincos(torch.arange(t, device=feat.device), self.d)[None]
        for blk in self.blocks:
            x = blk(x, keep)
        sel, lvl = self.head(x).float().chunk(2, -1)
        return sel, torch.sigmoid(lvl)


@_workload("cochlear-implant stimulation coding training (random init, a conformer against an ACE-like n-of-m teacher): 8-32 clips a step (drawn) of 1-3 s at 16 kHz (drawn per clip in quarter seconds, padded to the step's longest) drawn on the device; a 256-point STFT (hop 128, 125 frames a second), a 64-band log-mel filterbank as the input and a 22-band filterbank (one band an electrode) for the teacher, which fires the 8 electrodes of largest envelope a frame (top-k and scatter) at levels from the log envelope mapped between threshold and comfort and clamped; a linear layer to width 192 with sinusoidal positions, 6 conformer blocks (4 heads, a key mask for the padded frames, a depthwise convolution of 15 frames in the convolution module with padded frames zeroed), a head to 22 firing logits and 22 levels a frame; the firing by BCE, the levels by MSE on the electrodes the teacher fires, and the neural excitation (fired levels through a 22 x 22 current-spread matrix of exponential decay with a length constant of 0.5-3 electrodes drawn per step) by MSE, all over the kept frames; AdamW with a warm-up, clipping, bf16 autocast, 205 steps; the losses read back every 20 steps and every 41 steps a no-grad pass over 16 clips of 3 s with the firing accuracy and the excitation correlation read back")
def cochlear_implant_conformer_train(rng):
    n_mel, d, heads, layers, n_el, n_max = 64, _smoke(192, 16), _smoke(4, 2), _smoke(6, 2), 22, 8
    sr, n_fft, hop = 16000, _smoke(256, 64), _smoke(128, 32)
    model = _CiCoder(n_mel, d, heads, layers, n_el).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 25))
    window = torch.hann_window(n_fft, device="cuda")
    mel, el_bank = _mel_bank(n_fft // 2 + 1, n_mel, sr), _mel_bank(n_fft // 2 + 1, n_el, sr, lo=188.0)
    el_pos = torch.arange(n_el, device="cuda").float()
    quarter = _smoke(4000, 256)
    lo, hi = _smoke(4, 1), _smoke(12, 3)

    def clips(lengths):
        b, n = len(lengths), max(lengths) * quarter
        keep_s = keep_mask([q * quarter for q in lengths], n)
        wav = torch.randn(b, n, device="cuda") * (0.02 + 0.2 * torch.rand(b, 1, device="cuda")) * keep_s
        pw = torch.stft(wav, n_fft, hop, window=window, return_complex=True).abs().pow(2).transpose(1, 2)
        keep = keep_mask([q * quarter // hop + 1 for q in lengths], pw.shape[1])
        feat = (pw @ mel + 1e-6).log()
        feat = (feat - feat.mean((1, 2), keepdim=True)) / 4.0
        env = 10 * torch.log10(pw @ el_bank + 1e-8)
        idx = env.topk(n_max, -1).indices
        fire = torch.zeros_like(env).scatter_(-1, idx, 1.0)
        level = ((env + 60.0) / 50.0).clamp(0.0, 1.0)
        return feat, keep, fire, level

    def losses(sel, lvl, fire, level, keep, spread):
        w = keep.float()[..., None]
        l_fire = (_F.binary_cross_entropy_with_logits(sel, fire, reduction="none") * w).sum() / (w.sum() * n_el)
        l_lvl = ((lvl - level).pow(2) * fire * w).sum() / (fire * w).sum().clamp_min(1.0)
        exc_p, exc_t = (torch.sigmoid(sel) * lvl) @ spread, (fire * level) @ spread
        l_exc = ((exc_p - exc_t).pow(2) * w).sum() / (w.sum() * n_el)
        return l_fire, l_lvl, l_exc, exc_p, exc_t

    def spread_of(lam):
        return torch.exp(-(el_pos[:, None] - el_pos[None]).abs() / lam)

    steps = _smoke(205, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(8, 2), _smoke(32, 3))
        lengths = [rng.randint(lo, hi) for _ in range(b)]
        feat, keep, fire, level = clips(lengths)
        spread = spread_of(rng.uniform(0.5, 3.0))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            sel, lvl = model(feat, keep)
        l_fire, l_lvl, l_exc, exc_p, exc_t = losses(sel, lvl, fire, level, keep, spread)
        loss = l_fire + l_lvl + l_exc
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            torch.stack([l_fire.detach(), l_lvl.detach(), l_exc.detach()]).tolist()
        del feat, keep, fire, level, spread, sel, lvl, l_fire, l_lvl, l_exc, exc_p, exc_t, loss
        if (step + 1) % _smoke(41, 2) == 0:
            model.eval()
            with torch.no_grad():
                feat, keep, fire, level = clips([hi] * _smoke(16, 2))
                spread = spread_of(1.5)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    sel, lvl = model(feat, keep)
                _, _, _, exc_p, exc_t = losses(sel, lvl, fire, level, keep, spread)
                ep, et = exc_p - exc_p.mean(), exc_t - exc_t.mean()
                res = torch.stack([((sel > 0).float() == fire).float().mean(),
                                   (ep * et).sum() / (ep.norm() * et.norm()).clamp_min(1e-8)])
            res.tolist()
            del feat, keep, fire, level, spread, sel, lvl, exc_p, exc_t, ep, et, res


# ---------------------------------------------------------------- otoscope image classification (ConvNeXt)


class _LayerNorm2d(_nn.LayerNorm):
    def forward(self, x):
        return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class _NextBlock(_nn.Module):
    """ConvNeXt's block: a 7x7 depthwise convolution, layer norm over channels, an inverted MLP of 4x, layer scale."""

    def __init__(self, c):
        super().__init__()
        self.dw = _nn.Conv2d(c, c, 7, 1, 3, groups=c)
        self.norm = _nn.LayerNorm(c)
        self.fc1, self.fc2 = _nn.Linear(c, 4 * c), _nn.Linear(4 * c, c)
        self.gamma = _nn.Parameter(torch.full((c,), 1e-6))

    def forward(self, x):
        h = self.norm(self.dw(x).permute(0, 2, 3, 1))
        h = self.fc2(_F.gelu(self.fc1(h))) * self.gamma
        return x + h.permute(0, 3, 1, 2)


class _OtoNext(_nn.Module):
    def __init__(self, widths, depths, n_cls):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, widths[0], 4, 4), _LayerNorm2d(widths[0]))
        self.stages = _nn.ModuleList()
        cin = widths[0]
        for i, (c, n) in enumerate(zip(widths, depths)):
            down = (_nn.Sequential(_LayerNorm2d(cin), _nn.Conv2d(cin, c, 2, 2)) if i else _nn.Identity())
            self.stages.append(_nn.Sequential(down, *[_NextBlock(c) for _ in range(n)]))
            cin = c
        self.norm = _nn.LayerNorm(cin)
        self.head = _nn.Linear(cin, n_cls + 1)

    def forward(self, x):
        h = self.stem(x)
        for s in self.stages:
            h = s(h)
        return self.head(self.norm(h.mean((2, 3)))).float()


@_workload("otoscope image classification fine-tuning (random init standing in for a pretrained ConvNeXt): 8-48 ear-canal photos a step (drawn, at most 32 x 256^2 pixels a step) of 224, 256, 288 or 320 px (drawn per step) drawn on the device, flipped horizontally (by torch.where) and scaled in brightness per photo (both drawn on the device); a ConvNeXt of a 4x4 stride-4 stem and four stages (64, 128, 256, 384 channels; 2, 2, 4, 2 blocks of a 7x7 depthwise convolution, layer norm and a 4x inverted MLP with layer scale; layer norm and 2x2 stride-2 downsampling between stages), in NCHW, of which the stem and the lower two stages are frozen; global mean pooling, a head to the diagnosis (of 9: normal, acute otitis media, otitis media with effusion, chronic suppurative otitis media, cerumen impaction, otitis externa, perforation, myringosclerosis, tympanostomy tube) by label-smoothed cross-entropy and an ENT-referral flag by BCE; AdamW with the third stage at half the learning rate, a cosine schedule with a warm-up, clipping, bf16 autocast, 600 steps; the losses read back every 20 steps and every 120 steps a no-grad pass over 24 photos of 288 px with the diagnosis and referral accuracies read back")
def otoscope_convnext_finetune(rng):
    widths, depths = _smoke([64, 128, 256, 384], [8, 8, 16, 16]), _smoke([2, 2, 4, 2], [1, 1, 1, 1])
    n_cls = 9
    model = _OtoNext(widths, depths, n_cls).cuda()
    frozen = [model.stem, model.stages[0], model.stages[1]]
    for m in frozen:
        m.requires_grad_(False)
    steps = _smoke(600, 3)
    warm = 20
    opt = torch.optim.AdamW([{"params": model.stages[2].parameters(), "lr": 1e-4},
                             {"params": list(model.stages[3].parameters()) + list(model.norm.parameters())
                              + list(model.head.parameters()), "lr": 2e-4}], weight_decay=0.05)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    res_opts = _smoke([224, 256, 288, 320], [32, 64])
    budget = _smoke(32 * 256 * 256, 3 * 64 * 64)

    def photos(b, r):
        x = torch.randn(b, 3, r, r, device="cuda")
        flip = torch.rand(b, 1, 1, 1, device="cuda") < 0.5
        x = torch.where(flip, x.flip(-1), x) * (0.8 + 0.4 * torch.rand(b, 1, 1, 1, device="cuda"))
        y = torch.randint(0, n_cls, (b,), device="cuda")
        refer = (y != 0).float() * (torch.rand(b, device="cuda") < 0.7).float()
        return x, y, refer

    for step in range(steps):
        model.train()
        r = rng.choice(res_opts)
        b = min(rng.randint(_smoke(8, 2), _smoke(48, 4)), budget // (r * r))
        x, y, refer = photos(b, r)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(x)
        l_cls = _F.cross_entropy(out[:, :n_cls], y, label_smoothing=0.1)
        l_ref = _F.binary_cross_entropy_with_logits(out[:, n_cls], refer)
        loss = l_cls + 0.5 * l_ref
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], 1.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            torch.stack([l_cls.detach(), l_ref.detach()]).tolist()
        del x, y, refer, out, l_cls, l_ref, loss
        if (step + 1) % _smoke(120, 2) == 0:
            model.eval()
            with torch.no_grad():
                x, y, refer = photos(_smoke(24, 2), _smoke(288, 32))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    out = model(x)
                res = torch.stack([(out[:, :n_cls].argmax(-1) == y).float().mean(),
                                   ((out[:, n_cls] > 0).float() == refer).float().mean()])
            res.tolist()
            del x, y, refer, out, res


# ---------------------------------------------------------------- hearing-aid scene service (inverted residuals)


class _InvRes(_nn.Module):
    """MobileNetV2's inverted residual: 1x1 expansion, 3x3 depthwise (strided), 1x1 projection, batch norm, ReLU6,
    a residual where the shape holds."""

    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        h = cin * expand
        self.net = _nn.Sequential(_nn.Conv2d(cin, h, 1, bias=False), _nn.BatchNorm2d(h), _nn.ReLU6(),
                                  _nn.Conv2d(h, h, 3, stride, 1, groups=h, bias=False), _nn.BatchNorm2d(h), _nn.ReLU6(),
                                  _nn.Conv2d(h, cout, 1, bias=False), _nn.BatchNorm2d(cout))
        self.res = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.net(x) if self.res else self.net(x)


class _SceneNet(_nn.Module):
    def __init__(self, cfg, n_scene):
        super().__init__()
        c0 = cfg[0][0]
        self.stem = _nn.Sequential(_nn.Conv2d(2, c0, 3, 2, 1, bias=False), _nn.BatchNorm2d(c0), _nn.ReLU6())
        blocks, cin = [], c0
        for c, s, n in cfg[1:]:
            for i in range(n):
                blocks.append(_InvRes(cin, c, s if i == 0 else 1, 4))
                cin = c
        self.blocks = _nn.Sequential(*blocks)
        self.head = mlp(cin, 128, n_scene + 2, act=_nn.ReLU)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)).mean((2, 3))).float()


@_workload("hearing-aid acoustic scene serving (random init, an inverted-residual convnet over binaural log-mel spectrograms): 1,750-1,800 requests (drawn) of 1-12 hearing aids (drawn) with two microphones each (front and rear) and 1-4 s of 16 kHz audio (drawn per request in half seconds), 16-bit PCM uploaded on a side stream from two reused pinned host buffers (filled once, sized for 12 x 2 x 4 s) one request ahead (one span, through SideUploads.ahead), scaled on the device; a 512-point STFT (hop 256), a 64-band log-mel filterbank a microphone with each band's mean over time subtracted; a MobileNetV2-style convnet (a stride-2 stem of 24 channels, 8 inverted residual blocks of expansion 4 at 24, 32, 48, 64 and 96 channels, batch norm, ReLU6) in eval under bf16 autocast, mean pooling, an MLP to the scene (of 8: quiet, speech in quiet, speech in noise, music, car, wind, restaurant babble, own voice) by softmax, an SNR estimate in dB and an own-voice probability; the program's 16 band gains by mixing a fixed 8 x 16 gain table with the scene probabilities, and the front-rear level differences in 16 bands from the mel energies; each request's scene probabilities, SNRs, own-voice probabilities, band gains and level differences read back once")
def hearing_aid_scene_serve(rng):
    cfg = _smoke([(24, 2, 1), (24, 1, 1), (32, 2, 2), (48, 2, 2), (64, 2, 2), (96, 1, 1)],
                 [(8, 2, 1), (8, 1, 1), (8, 2, 1)])
    n_scene, n_mel, n_gain = 8, _smoke(64, 16), 16
    sr, n_fft, hop = _smoke(16000, 2000), _smoke(512, 64), _smoke(256, 32)
    max_n, max_h = _smoke(12, 2), _smoke(8, 2)
    model = _SceneNet(cfg, n_scene).cuda().eval()
    model.requires_grad_(False)
    window = torch.hann_window(n_fft, device="cuda")
    mel = _mel_bank(n_fft // 2 + 1, n_mel, sr)
    gain_table = torch.rand(n_scene, n_gain, device="cuda") * 30.0
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    half = sr // 2
    host = [torch.randint(-8000, 8000, (max_n * 2 * max_h * half,), dtype=torch.int16, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)

    nreq = rng.randint(_smoke(1750, 3), _smoke(1800, 4))
    plan = [(rng.randint(1, max_n), rng.randint(_smoke(2, 1), max_h)) for _ in range(nreq)]

    for (n, nh), raw in up.ahead(plan, lambda p: (p[0] * 2 * p[1] * half,)):
        with torch.no_grad():
            wav = raw.view(n * 2, nh * half).float() / 32768.0
            pw = torch.stft(wav, n_fft, hop, window=window, return_complex=True).abs().pow(2)
            e = (pw.transpose(1, 2) @ mel).transpose(1, 2) + 1e-8
            lm = e.log()
            lm = (lm - lm.mean(-1, keepdim=True)).view(n, 2, n_mel, -1)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = model(lm)
            p_scene = out[:, :n_scene].softmax(-1)
            snr = 10.0 * torch.tanh(out[:, n_scene]) + 10.0
            own = torch.sigmoid(out[:, n_scene + 1])
            gains = p_scene @ gain_table
            eb = e.view(n, 2, n_gain, n_mel // n_gain, -1).sum((3, 4))
            ild = 10 * torch.log10(eb[:, 0] / eb[:, 1])
            res = torch.cat([p_scene.flatten(), snr, own, gains.flatten(), ild.flatten()])
        res.tolist()
        del raw, wav, pw, e, lm, out, p_scene, snr, own, gains, eb, ild, res

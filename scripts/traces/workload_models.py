"""Model classes that several of record.py's workload modules share (the diffusion UNet, HiFi-GAN generator,
VAE blocks, RRDB net, GPT block, FastSpeech2), moved verbatim from record.py; record.py imports them back."""

import torch

from workload_helpers import _mha, _sincos


class _ResBlock(torch.nn.Module):
    def __init__(self, cin, cout, tdim):
        super().__init__()
        nn = torch.nn
        self.n1, self.c1 = nn.GroupNorm(32, cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.t = nn.Linear(tdim, cout)
        self.n2, self.c2 = nn.GroupNorm(32, cout), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, t):
        f = torch.nn.functional
        h = self.c1(f.silu(self.n1(x))) + self.t(t)[:, :, None, None]
        h = self.c2(f.silu(self.n2(h)))
        return h + self.skip(x)


class _Attn(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.n = torch.nn.GroupNorm(32, c)
        self.qkv = torch.nn.Conv2d(c, 3 * c, 1)
        self.o = torch.nn.Conv2d(c, c, 1)
        self.heads = c // 64

    def forward(self, x):
        b, c, hh, ww = x.shape
        q, k, v = self.qkv(self.n(x)).reshape(b, 3, self.heads, c // self.heads, hh * ww).transpose(-1, -2).unbind(1)
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        return x + self.o(a.transpose(-1, -2).reshape(b, c, hh, ww))


class _UNet(torch.nn.Module):
    def __init__(self, ch=(128, 256, 512), tdim=512):
        super().__init__()
        nn = torch.nn
        self.tdim = tdim
        self.temb = nn.Sequential(nn.Linear(tdim, tdim), nn.SiLU(), nn.Linear(tdim, tdim))
        self.inp = nn.Conv2d(3, ch[0], 3, padding=1)
        self.down, self.up = nn.ModuleList(), nn.ModuleList()
        c = ch[0]
        for i, co in enumerate(ch):
            self.down.append(nn.ModuleList([_ResBlock(c, co, tdim), _ResBlock(co, co, tdim)]))
            c = co
        self.mid = nn.ModuleList([_ResBlock(c, c, tdim), _Attn(c), _ResBlock(c, c, tdim)])
        for co in reversed(ch):
            self.up.append(nn.ModuleList([_ResBlock(c + co, co, tdim), _ResBlock(co, co, tdim)]))
            c = co
        self.out = nn.Sequential(nn.GroupNorm(32, c), nn.SiLU(), nn.Conv2d(c, 3, 3, padding=1))

    def forward(self, x, t):
        half = self.tdim // 2
        freqs = torch.exp(-torch.arange(half, device=x.device) * (9.21 / half))
        e = t[:, None].float() * freqs[None]
        temb = self.temb(torch.cat([e.sin(), e.cos()], dim=1))
        h = self.inp(x)
        skips = []
        for i, (r1, r2) in enumerate(self.down):
            h = r2(r1(h, temb), temb)
            skips.append(h)
            if i < len(self.down) - 1:
                h = torch.nn.functional.avg_pool2d(h, 2)
        h = self.mid[2](self.mid[1](self.mid[0](h, temb)), temb)
        for i, (r1, r2) in enumerate(self.up):
            s = skips.pop()
            if h.shape[-1] != s.shape[-1]:
                h = torch.nn.functional.interpolate(h, size=s.shape[-2:], mode="nearest")
            h = r2(r1(torch.cat([h, s], 1), temb), temb)
        return self.out(h)


class _HifiResBlock(torch.nn.Module):
    """HiFi-GAN's ResBlock1: for each dilation, a dilated and a plain conv with a residual."""

    def __init__(self, c, k, dilations):
        super().__init__()
        nn = torch.nn
        wn = nn.utils.parametrizations.weight_norm
        self.c1 = nn.ModuleList([wn(nn.Conv1d(c, c, k, dilation=d, padding=d * (k - 1) // 2)) for d in dilations])
        self.c2 = nn.ModuleList([wn(nn.Conv1d(c, c, k, padding=(k - 1) // 2)) for _ in dilations])

    def forward(self, x):
        f = torch.nn.functional
        for c1, c2 in zip(self.c1, self.c2):
            x = x + c2(f.leaky_relu(c1(f.leaky_relu(x, 0.1)), 0.1))
        return x


class _HifiGenerator(torch.nn.Module):
    """HiFi-GAN V1: 80 mel channels to 512, transposed convs up by 8, 8, 2,
    2 (hop 256) halving the channels, each followed by three ResBlock1s
    (kernels 3, 7, 11, dilations 1, 3, 5) averaged; weight norm throughout."""

    def __init__(self, mels=80, ch=512):
        super().__init__()
        nn = torch.nn
        wn = nn.utils.parametrizations.weight_norm
        self.pre = wn(nn.Conv1d(mels, ch, 7, padding=3))
        self.ups, self.res = nn.ModuleList(), nn.ModuleList()
        for r, k in ((8, 16), (8, 16), (2, 4), (2, 4)):
            self.ups.append(wn(nn.ConvTranspose1d(ch, ch // 2, k, r, padding=(k - r) // 2)))
            ch //= 2
            self.res.append(nn.ModuleList([_HifiResBlock(ch, k, (1, 3, 5)) for k in (3, 7, 11)]))
        self.post = wn(nn.Conv1d(ch, 1, 7, padding=3))

    def forward(self, mel):
        f = torch.nn.functional
        x = self.pre(mel)
        for up, blocks in zip(self.ups, self.res):
            x = up(f.leaky_relu(x, 0.1))
            x = sum(blk(x) for blk in blocks) / len(blocks)
        return torch.tanh(self.post(f.leaky_relu(x, 0.01)))


class _VaeResBlock(torch.nn.Module):
    """The SD VAE's ResBlock: GroupNorm, SiLU, 3x3 conv, twice, plus a (1x1 conv when widths differ) skip."""

    def __init__(self, cin, cout):
        super().__init__()
        nn = torch.nn
        self.n1, self.c1 = nn.GroupNorm(32, cin, eps=1e-6), nn.Conv2d(cin, cout, 3, padding=1)
        self.n2, self.c2 = nn.GroupNorm(32, cout, eps=1e-6), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x):
        f = torch.nn.functional
        h = self.c2(f.silu(self.n2(self.c1(f.silu(self.n1(x))))))
        return self.skip(x) + h


class _VaeAttn(torch.nn.Module):
    """Single-head self-attention over every latent position (width 512), as in the SD VAE's mid-block."""

    def __init__(self, c):
        super().__init__()
        nn = torch.nn
        self.n = nn.GroupNorm(32, c, eps=1e-6)
        self.q, self.k, self.v, self.o = (nn.Linear(c, c) for _ in range(4))

    def forward(self, x):
        b, c, h, w = x.shape
        t = self.n(x).flatten(2).transpose(1, 2)[:, None]  # (B, 1, HW, C)
        a = torch.nn.functional.scaled_dot_product_attention(self.q(t), self.k(t), self.v(t))
        return x + self.o(a[:, 0]).transpose(1, 2).reshape(b, c, h, w)


class _Rdb(torch.nn.Module):
    """ESRGAN's residual dense block: five 3x3 convs, each fed the concatenation of all before (growth 32), scaled residual."""

    def __init__(self, c=64, g=32):
        super().__init__()
        self.convs = torch.nn.ModuleList([torch.nn.Conv2d(c + i * g, g if i < 4 else c, 3, padding=1) for i in range(5)])

    def forward(self, x):
        feats = [x]
        for i, conv in enumerate(self.convs):
            y = conv(torch.cat(feats, 1))
            feats.append(torch.nn.functional.leaky_relu(y, 0.2) if i < 4 else y)
        return x + 0.2 * feats[-1]


class _Rrdb(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rdbs = torch.nn.Sequential(_Rdb(), _Rdb(), _Rdb())

    def forward(self, x):
        return x + 0.2 * self.rdbs(x)


class _RrdbNet(torch.nn.Module):
    """ESRGAN's generator, x4: conv, RRDB trunk, conv, two nearest-2x upsamplings with convs, two convs to RGB."""

    def __init__(self, blocks):
        super().__init__()
        nn = torch.nn
        self.first = nn.Conv2d(3, 64, 3, padding=1)
        self.trunk = nn.Sequential(*[_Rrdb() for _ in range(blocks)], nn.Conv2d(64, 64, 3, padding=1))
        self.up1, self.up2 = nn.Conv2d(64, 64, 3, padding=1), nn.Conv2d(64, 64, 3, padding=1)
        self.hr, self.last = nn.Conv2d(64, 64, 3, padding=1), nn.Conv2d(64, 3, 3, padding=1)

    def forward(self, x):
        f = torch.nn.functional
        h = self.first(x)
        h = h + self.trunk(h)
        h = f.leaky_relu(self.up1(f.interpolate(h, scale_factor=2.0, mode="nearest")), 0.2)
        h = f.leaky_relu(self.up2(f.interpolate(h, scale_factor=2.0, mode="nearest")), 0.2)
        return self.last(f.leaky_relu(self.hr(h), 0.2))


class _GptBlock(torch.nn.Module):
    """nanoGPT's block: pre-norm causal self-attention (SDPA), then a 4x GELU (tanh) MLP."""

    def __init__(self, d, heads):
        super().__init__()
        nn = torch.nn
        self.ln1, self.attn, self.proj = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ln2, self.fc, self.out = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.heads = heads

    def forward(self, x):
        x = x + self.proj(_mha(*self.attn(self.ln1(x)).chunk(3, -1), self.heads, is_causal=True))
        return x + self.out(torch.nn.functional.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class _FftBlock(torch.nn.Module):
    """FastSpeech's FFT block: post-norm self-attention (key padding mask), then a conv FFN (kernels 9 and 1),
    padded positions zeroed."""

    def __init__(self, d=256, heads=2, ff=1024):
        super().__init__()
        nn = torch.nn
        self.qkv, self.o, self.n1, self.heads = nn.Linear(d, 3 * d), nn.Linear(d, d), nn.LayerNorm(d), heads
        self.c1, self.c2, self.n2 = nn.Conv1d(d, ff, 9, padding=4), nn.Conv1d(ff, d, 1), nn.LayerNorm(d)
        self.drop = nn.Dropout(0.2)

    def forward(self, x, pad):
        a = _mha(*self.qkv(x).chunk(3, -1), self.heads, attn_mask=~pad[:, None, None, :])
        x = self.n1(x + self.drop(self.o(a))).masked_fill(pad[..., None], 0)
        h = self.c2(torch.relu(self.c1(x.transpose(1, 2)))).transpose(1, 2)
        return self.n2(x + self.drop(h)).masked_fill(pad[..., None], 0)


class _VarPredictor(torch.nn.Module):
    """FastSpeech2's variance predictor: two conv (kernel 3) + ReLU + LayerNorm + dropout layers, a linear output."""

    def __init__(self, d=256):
        super().__init__()
        nn = torch.nn
        self.c1, self.n1, self.c2, self.n2 = nn.Conv1d(d, d, 3, padding=1), nn.LayerNorm(d), nn.Conv1d(d, d, 3, padding=1), nn.LayerNorm(d)
        self.lin, self.drop = nn.Linear(d, 1), nn.Dropout(0.5)

    def forward(self, x, pad):
        h = self.drop(self.n1(torch.relu(self.c1(x.transpose(1, 2))).transpose(1, 2)))
        h = self.drop(self.n2(torch.relu(self.c2(h.transpose(1, 2))).transpose(1, 2)))
        return self.lin(h).squeeze(-1).masked_fill(pad, 0)


class _FastSpeech2(torch.nn.Module):
    """FastSpeech2 (ming024's): phoneme embedding and sinusoidal positions, 4 FFT encoder blocks, duration,
    pitch and energy predictors (phoneme-level pitch and energy quantized into 256 embedded bins), the length
    regulator, 6 FFT decoder blocks, an 80-band mel projection and a 5-layer conv PostNet."""

    def __init__(self, vocab=360, d=256):
        super().__init__()
        nn = torch.nn
        self.emb = nn.Embedding(vocab, d, padding_idx=0)
        self.register_buffer("pos", _sincos(torch.arange(2048), d), persistent=False)
        self.enc = nn.ModuleList([_FftBlock(d) for _ in range(4)])
        self.dec = nn.ModuleList([_FftBlock(d) for _ in range(6)])
        self.dur, self.pitch, self.energy = _VarPredictor(d), _VarPredictor(d), _VarPredictor(d)
        self.pitch_emb, self.energy_emb = nn.Embedding(256, d), nn.Embedding(256, d)
        self.register_buffer("bins", torch.linspace(-3, 3, 255), persistent=False)
        self.mel = nn.Linear(d, 80)
        chans = [80, 512, 512, 512, 512, 80]
        post = []
        for i in range(5):
            post += [nn.Conv1d(chans[i], chans[i + 1], 5, padding=2), nn.BatchNorm1d(chans[i + 1])]
            post += [nn.Tanh(), nn.Dropout(0.5)] if i < 4 else [nn.Dropout(0.5)]
        self.postnet = nn.Sequential(*post)

    def forward(self, phones, pad, durations, pitch, energy):
        x = self.emb(phones) + self.pos[: phones.shape[1]]
        for blk in self.enc:
            x = blk(x, pad)
        log_dur, p, e = self.dur(x, pad), self.pitch(x, pad), self.energy(x, pad)
        x = x + self.pitch_emb(torch.bucketize(pitch, self.bins)) + self.energy_emb(torch.bucketize(energy, self.bins))
        # The length regulator: each phoneme's vector repeated for its (ground-truth) duration.
        frames = torch.nn.utils.rnn.pad_sequence([xi.repeat_interleave(di, 0) for xi, di in zip(x, durations)], batch_first=True)
        lengths = durations.sum(1)
        mel_pad = torch.arange(frames.shape[1], device=x.device)[None] >= lengths[:, None]
        y = frames + self.pos[: frames.shape[1]]
        for blk in self.dec:
            y = blk(y, mel_pad)
        mel = self.mel(y)
        post = mel + self.postnet(mel.transpose(1, 2)).transpose(1, 2)
        return mel, post, mel_pad, log_dur, p, e

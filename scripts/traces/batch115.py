"""The hundred-and-fifteenth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch113_b.py are): brewing, winemaking, coffee and beverages, written in torch alone, first half. Wine-must
fermentation forecasting training (two stride-2 1-d convolutions and a two-layer LSTM written out step by step over
hourly fermentation sensor logs of drawn lengths with yeast-strain and grape-variety embeddings, a gravity forecast per
step, a stuck-fermentation logit and the days to dryness per run), green coffee bean grading training (a vision
transformer over bean tray images of drawn resolutions with a 2-d position table sliced to each step's patch grid,
multi-label defects, species and moisture), grape-must near-infrared spectra fine-tuning (a dilated residual 1-d
convnet whose first half is frozen, the top half and new heads trained on spectra of drawn band counts with
scatter augmentations and SNV normalisation, laboratory targets masked where missing) and a bottling-line inspection
service (a residual convnet over the line camera's bottle images of drawn sizes, fill-level, cap and label heads, a
reject flag by torch.where, per-line counters on the device by index_add). Same conventions as the earlier batches:
nothing downloaded, data drawn at random on the device (or in reused pinned host buffers for the service), `rng` the
workload's random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)` so that
RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths, resolutions and batch sizes are fixed
on the host, padding handled by masks or by torch.where / masked_fill, no boolean-mask indexing; losses and metrics
are read back only at logging points or once per request. bottling_line_inspect_serve uploads its images on a side
stream (two reused pinned host buffers, one request ahead, through workload_helpers.SideUploads.ahead); the other
three are single-stream. The models run under bf16 autocast. Every position table is sized for the longest padded
length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new115.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and
for the CPU smoke run (RECORD_SMOKE=1).
"""

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, PreNormBlock, SideUploads, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- wine-must fermentation forecasting (LSTM)


class _FermentLstm(_nn.Module):
    """Sensor channels with the yeast-strain and grape-variety embeddings broadcast over time, two stride-2 1-d
    convolutions (1/4 of the logging rate), an LSTM of `layers` layers written out step by step (input gates for all
    steps at once, padded steps keeping the previous state and cell by torch.where); a gravity-forecast head per step
    (the next `horizon` readings) and stuck-fermentation and days-to-dryness heads on the last valid state."""

    def __init__(self, n_num, n_yeast, n_var, d_conv, hidden, layers, horizon):
        super().__init__()
        self.yeast, self.var = _nn.Embedding(n_yeast, 16), _nn.Embedding(n_var, 16)
        c = n_num + 32
        self.front = _nn.Sequential(_nn.Conv1d(c, d_conv, 5, 2, 2), _nn.GELU(), _nn.Conv1d(d_conv, d_conv, 5, 2, 2),
                                    _nn.GELU())
        self.ih = _nn.ModuleList(_nn.Linear(d_conv if i == 0 else hidden, 4 * hidden) for i in range(layers))
        self.hh = _nn.ModuleList(_nn.Linear(hidden, 4 * hidden, bias=False) for _ in range(layers))
        self.fc = mlp(hidden, hidden, horizon, act=_nn.GELU)
        self.run_head = mlp(hidden, hidden, 2, act=_nn.GELU)
        self.hidden = hidden

    def forward(self, num, yeast, var, keep):
        b, t, _ = num.shape
        stat = torch.cat([self.yeast(yeast), self.var(var)], -1)[:, :, None].expand(b, 32, t)
        z = self.front(torch.cat([num.transpose(1, 2), stat.to(num.dtype)], 1)).transpose(1, 2)
        for ih, hh in zip(self.ih, self.hh):
            gi = ih(z)
            h = z.new_zeros(b, self.hidden, dtype=torch.float32)
            c = torch.zeros_like(h)
            outs = []
            for s in range(z.shape[1]):
                ig, fg, gg, og = (gi[:, s] + hh(h)).chunk(4, -1)
                c_new = torch.sigmoid(fg) * c + torch.sigmoid(ig) * torch.tanh(gg)
                h_new = torch.sigmoid(og) * torch.tanh(c_new)
                k = keep[:, s, None]
                c, h = torch.where(k, c_new, c), torch.where(k, h_new, h)
                outs.append(h)
            z = torch.stack(outs, 1)
        stuck, dry = self.run_head(h).float().unbind(-1)
        return self.fc(z).float(), stuck, dry


@_workload("wine-must fermentation forecasting training (random init, a 1-d convnet and an LSTM written out step by step): 64-256 fermentations a step (drawn), the step's padded length 64-256 hourly readings (drawn, a multiple of 32) and each run's own length drawn between half of it and it (masked), 7 sensor channels (density, must temperature, jacket temperature, CO2 flow, pH, dissolved oxygen, refractometer Brix) drawn on the device (density a noisy decreasing curve) with a yeast strain (of 24) and a grape variety (of 48) per run; two stride-2 1-d convolutions (width 128) to 16-64 steps, a 2-layer LSTM (hidden 256) written out step by step with padded steps keeping the state and cell by torch.where; a masked MSE on the next 6 density readings per step, a BCE on a stuck-fermentation flag and a Huber loss on the days to dryness from the last state; AdamW, clipping, bf16 autocast, 100 steps; the losses read back every 20 steps and every 50 steps a no-grad evaluation of 192 runs of 256 readings with the forecast mean absolute error and the stuck-flag accuracy read back")
def must_fermentation_lstm_train(rng):
    n_num, n_yeast, n_var, horizon = 7, 24, 48, 6
    d_conv, hidden, layers = _smoke(128, 16), _smoke(256, 16), _smoke(2, 1)
    model = _FermentLstm(n_num, n_yeast, n_var, d_conv, hidden, layers, horizon).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    lo, hi = _smoke(64, 32), _smoke(256, 64)

    def runs(lengths, t):
        b = len(lengths)
        keep = keep_mask([-(-n // 4) for n in lengths], t // 4)
        raw_keep = keep_mask(lengths, t)
        drop = torch.rand(b, t, device="cuda").mul(0.004).cumsum(1)
        density = 1.09 - drop + 0.001 * torch.randn(b, t, device="cuda")
        num = torch.cat([density[..., None], torch.randn(b, t, n_num - 1, device="cuda")], -1) * raw_keep[..., None]
        yeast = torch.randint(0, n_yeast, (b,), device="cuda")
        var = torch.randint(0, n_var, (b,), device="cuda")
        ahead = torch.rand(b, t // 4, horizon, device="cuda") * 0.01 + 0.99
        stuck = torch.randint(0, 2, (b,), device="cuda").float()
        dry = torch.rand(b, device="cuda") * 14.0
        return num, yeast, var, keep, ahead, stuck, dry

    steps = _smoke(100, 3)
    for step in range(steps):
        model.train()
        b, t = rng.randint(_smoke(64, 2), _smoke(256, 4)), rng.randint(lo // 32, hi // 32) * 32
        num, yeast, var, keep, ahead, stuck, dry = runs([rng.randint(t // 2, t) for _ in range(b)], t)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            p_ahead, p_stuck, p_dry = model(num, yeast, var, keep)
        w = keep.float()[..., None]
        l_fc = ((p_ahead - ahead).pow(2) * w).sum() / (w.sum() * horizon)
        l_stuck = _F.binary_cross_entropy_with_logits(p_stuck, stuck)
        l_dry = _F.huber_loss(p_dry, dry)
        loss = 100.0 * l_fc + l_stuck + 0.1 * l_dry
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_fc.detach(), l_stuck.detach(), l_dry.detach()]).tolist()
        del num, yeast, var, keep, ahead, stuck, dry, p_ahead, p_stuck, p_dry, w, l_fc, l_stuck, l_dry, loss
        if (step + 1) % _smoke(50, 2) == 0:
            model.eval()
            with torch.no_grad():
                num, yeast, var, keep, ahead, stuck, dry = runs([hi] * _smoke(192, 3), hi)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    p_ahead, p_stuck, _ = model(num, yeast, var, keep)
                acc = (torch.where(p_stuck > 0, 1.0, 0.0) == stuck).float().mean()
                out = torch.stack([(p_ahead - ahead).abs().mean(), acc])
            out.tolist()
            del num, yeast, var, keep, ahead, stuck, dry, p_ahead, p_stuck, acc, out


# ---------------------------------------------------------------- green coffee bean grading (ViT)


class _BeanViT(_nn.Module):
    """16 x 16 patches embedded by a strided convolution, a class token, a 2-d position table (rows x columns,
    sliced to the image's patch grid), pre-norm blocks; defect, species and moisture heads on the class token."""

    def __init__(self, d, heads, layers, max_grid, n_defect, n_species):
        super().__init__()
        self.patch = _nn.Conv2d(3, d, 16, 16)
        self.cls = _nn.Parameter(torch.zeros(1, 1, d))
        self.pos = _nn.Parameter(torch.randn(max_grid, max_grid, d) * 0.02)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.defect, self.species, self.moist = (_nn.Linear(d, n_defect), _nn.Linear(d, n_species),
                                                 _nn.Linear(d, 1))

    def forward(self, x):
        y = self.patch(x)
        gh, gw = y.shape[2], y.shape[3]
        y = y.flatten(2).transpose(1, 2) + self.pos[:gh, :gw].reshape(1, gh * gw, -1)
        y = torch.cat([self.cls.expand(y.shape[0], -1, -1).to(y.dtype), y], 1)
        for blk in self.blocks:
            y = blk(y)
        c = self.norm(y[:, 0])
        return self.defect(c).float(), self.species(c).float(), self.moist(c).float()[:, 0]


@_workload("green coffee bean grading training (random init, a vision transformer): single-bean tray images of 128-256 px (drawn per step, a multiple of 32; height and width drawn separately), 24-96 beans a step (drawn, at most 64 x 224^2 pixels), drawn on the device with a per-image brightness and colour cast; 16 x 16 patches by a strided convolution, a class token, a 16 x 16 2-d position table sliced to the step's patch grid, 6 pre-norm blocks (width 256, 8 heads); a BCE on 12 defect labels (full black, full sour, fungus, foreign matter, insect damage, broken, immature, withered, shell, parchment, hull, floater, drawn per bean at 8%), a cross-entropy on the species and processing class (of 5) and a Huber loss on the moisture content (drawn 8-13%); AdamW with a cosine schedule, clipping, bf16 autocast, 430 steps; the losses read back every 20 steps and every 110 steps a no-grad pass over 128 beans of 256 x 256 with the defect hit rate at 0.5 and the species accuracy read back")
def coffee_bean_vit_train(rng):
    d, heads, layers = _smoke(256, 32), _smoke(8, 2), _smoke(6, 1)
    n_defect, n_species, max_grid = 12, 5, _smoke(16, 4)
    model = _BeanViT(d, heads, layers, max_grid, n_defect, n_species).cuda()
    steps = _smoke(430, 3)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.05)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    lo, hi, mult = _smoke(128, 32), _smoke(256, 64), 32
    budget = _smoke(64 * 224 * 224, 4 * 48 * 48)

    def beans(b, h, w):
        x = torch.rand(b, 3, h, w, device="cuda") * torch.rand(b, 3, 1, 1, device="cuda").add(0.5)
        defect = torch.where(torch.rand(b, n_defect, device="cuda") < 0.08, 1.0, 0.0)
        species = torch.randint(0, n_species, (b,), device="cuda")
        moist = torch.rand(b, device="cuda") * 5.0 + 8.0
        return (x - 0.5) / 0.25, defect, species, moist

    for step in range(steps):
        model.train()
        h, w = rng.randint(lo // mult, hi // mult) * mult, rng.randint(lo // mult, hi // mult) * mult
        b = rng.randint(_smoke(24, 2), max(_smoke(24, 2), min(_smoke(96, 4), budget // (h * w))))
        x, defect, species, moist = beans(b, h, w)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            p_def, p_sp, p_moist = model(x)
        l_def = _F.binary_cross_entropy_with_logits(p_def, defect)
        l_sp = _F.cross_entropy(p_sp, species)
        l_moist = _F.huber_loss(p_moist, moist)
        loss = l_def + l_sp + 0.1 * l_moist
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 20 == 0:
            torch.stack([l_def.detach(), l_sp.detach(), l_moist.detach()]).tolist()
        del x, defect, species, moist, p_def, p_sp, p_moist, l_def, l_sp, l_moist, loss
        if (step + 1) % _smoke(110, 2) == 0:
            model.eval()
            with torch.no_grad():
                x, defect, species, moist = beans(_smoke(128, 2), hi, hi)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    p_def, p_sp, _ = model(x)
                hit = (torch.where(p_def > 0, 1.0, 0.0) == defect).float().mean()
                out = torch.stack([hit, (p_sp.argmax(-1) == species).float().mean()])
            out.tolist()
            del x, defect, species, moist, p_def, p_sp, hit, out


# ---------------------------------------------------------------- grape-must NIR spectra (dilated 1-d convnet)


class _DilatedBlock(_nn.Module):
    """A residual block of two dilated 1-d convolutions (kernel 5) with batch norm and GELU."""

    def __init__(self, c, dilation):
        super().__init__()
        self.c1 = _nn.Conv1d(c, c, 5, 1, 2 * dilation, dilation=dilation, bias=False)
        self.b1 = _nn.BatchNorm1d(c)
        self.c2 = _nn.Conv1d(c, c, 5, 1, 2 * dilation, dilation=dilation, bias=False)
        self.b2 = _nn.BatchNorm1d(c)

    def forward(self, x):
        return x + self.b2(self.c2(_F.gelu(self.b1(self.c1(x)))))


class _NirNet(_nn.Module):
    """A stride-2 stem, `blocks` dilated residual blocks (dilations cycling 1, 2, 4, 8, a stride-2 average pool after
    every fourth), attention pooling over wavelength; regression and ripeness heads."""

    def __init__(self, c, blocks, n_reg, n_ripe):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv1d(2, c, 7, 2, 3, bias=False), _nn.BatchNorm1d(c), _nn.GELU())
        self.blocks = _nn.ModuleList(_DilatedBlock(c, 2 ** (i % 4)) for i in range(blocks))
        self.att = _nn.Conv1d(c, 1, 1)
        self.reg, self.ripe = mlp(c, c, n_reg, act=_nn.GELU), mlp(c, c, n_ripe, act=_nn.GELU)

    def features(self, x, first, last):
        if first == 0:
            x = self.stem(x)
        for i in range(first, last):
            x = self.blocks[i](x)
            if i % 4 == 3:
                x = _F.avg_pool1d(x, 2)
        return x

    def heads(self, x):
        a = torch.softmax(self.att(x).float(), -1)
        pooled = (x * a.to(x.dtype)).sum(-1)
        return self.reg(pooled).float(), self.ripe(pooled).float()


@_workload("grape-must near-infrared spectra fine-tuning (random init standing in for a pre-trained backbone, a dilated residual 1-d convnet): 64-512 spectra a step (drawn) of 256, 384, 512, 768 or 1,024 bands (drawn per step, as from different instruments), drawn on the device as smooth absorbance curves (a cumulative sum of noise smoothed by a 9-tap moving average) with multiplicative scatter, a baseline offset and slope (augmentations drawn per spectrum), SNV-normalised per spectrum, with its first difference as a second channel; a stride-2 stem (width 128) and 12 dilated residual blocks (kernel 5, dilations 1/2/4/8, stride-2 average pooling after every fourth); the stem and the first 6 blocks frozen (run under no_grad, batch norm in eval mode), the last 6 blocks (lr 1e-4) and new attention-pooling, regression and ripeness heads (lr 1e-3) trained; a masked Huber loss on 5 laboratory values (Brix, titratable acidity, pH, yeast-assimilable nitrogen, anthocyanins; each missing for 30% of spectra, drawn) and a cross-entropy on 4 ripeness classes; AdamW, clipping, bf16 autocast, 680 steps; the losses read back every 25 steps and every 170 steps a no-grad pass over 512 spectra of 1,024 bands with each target's mean absolute error and the ripeness accuracy read back")
def grape_nir_spectra_finetune(rng):
    c, blocks, frozen = _smoke(128, 16), _smoke(12, 4), _smoke(6, 2)
    n_reg, n_ripe = 5, 4
    model = _NirNet(c, blocks, n_reg, n_ripe).cuda()
    for p in list(model.stem.parameters()) + [p for blk in model.blocks[:frozen] for p in blk.parameters()]:
        p.requires_grad_(False)
    top = [p for blk in model.blocks[frozen:] for p in blk.parameters()]
    new = list(model.att.parameters()) + list(model.reg.parameters()) + list(model.ripe.parameters())
    opt = torch.optim.AdamW([{"params": top, "lr": 1e-4}, {"params": new, "lr": 1e-3}], weight_decay=0.01)
    band_opts = _smoke([256, 384, 512, 768, 1024], [64, 128])
    scale = torch.tensor([25.0, 8.0, 3.5, 250.0, 1500.0], device="cuda")

    def spectra(b, n):
        base = torch.randn(b, n, device="cuda").mul(0.05).cumsum(1)
        base = _F.avg_pool1d(base[:, None], 9, 1, 4)[:, 0]
        ramp = torch.linspace(-1, 1, n, device="cuda")[None]
        x = base * (1 + 0.1 * torch.randn(b, 1, device="cuda")) + 0.05 * torch.randn(b, 1, device="cuda") \
            + 0.02 * torch.randn(b, 1, device="cuda") * ramp
        x = (x - x.mean(1, keepdim=True)) / (x.std(1, keepdim=True) + 1e-6)
        x = torch.stack([x, torch.cat([x[:, 1:] - x[:, :-1], x.new_zeros(b, 1)], 1)], 1)
        y = torch.rand(b, n_reg, device="cuda") * scale
        have = torch.rand(b, n_reg, device="cuda") > 0.3
        ripe = torch.randint(0, n_ripe, (b,), device="cuda")
        return x, y, have, ripe

    def forward(x):
        with torch.no_grad():
            model.stem.eval()
            for blk in model.blocks[:frozen]:
                blk.eval()
            z = model.features(x, 0, frozen)
        return model.heads(model.features(z, frozen, blocks))

    steps = _smoke(680, 3)
    for step in range(steps):
        model.train()
        b, n = rng.randint(_smoke(64, 2), _smoke(512, 4)), rng.choice(band_opts)
        x, y, have, ripe = spectra(b, n)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            p_reg, p_ripe = forward(x)
        w = have.float()
        l_reg = (_F.huber_loss(p_reg, y / scale, reduction="none") * w).sum() / w.sum().clamp(min=1)
        l_ripe = _F.cross_entropy(p_ripe, ripe)
        loss = l_reg + 0.5 * l_ripe
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(top + new, 1.0)
        opt.step()
        if step % 25 == 0:
            torch.stack([l_reg.detach(), l_ripe.detach()]).tolist()
        del x, y, have, ripe, p_reg, p_ripe, w, l_reg, l_ripe, loss
        if (step + 1) % _smoke(170, 2) == 0:
            model.eval()
            with torch.no_grad():
                x, y, have, ripe = spectra(_smoke(512, 3), max(band_opts))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    p_reg, p_ripe = forward(x)
                mae = (p_reg * scale - y).abs().mean(0)
                out = torch.cat([mae, (p_ripe.argmax(-1) == ripe).float().mean()[None]])
            out.tolist()
            del x, y, have, ripe, p_reg, p_ripe, mae, out


# ---------------------------------------------------------------- bottling-line inspection service


class _BottleNet(_nn.Module):
    """A stride-2 stem and four stages of residual blocks (strides 2, 4, 8, 16, then 32); a fill-line heatmap from
    the stride-8 stage averaged over width (a soft-argmax over height gives the fill level), cap, label and
    particle heads on the pooled deepest features."""

    def __init__(self, widths, n_cap, n_label):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, widths[0], 3, 2, 1, bias=False), _nn.BatchNorm2d(widths[0]),
                                   _nn.ReLU())
        cins = [widths[0]] + widths[:-1]
        self.stages = _nn.ModuleList(
            _nn.Sequential(BasicResBlock(a, w, 2), BasicResBlock(w, w, 1)) for a, w in zip(cins, widths))
        self.fill = _nn.Conv2d(widths[1], 1, 1)
        self.cap, self.label = _nn.Linear(widths[-1], n_cap), _nn.Linear(widths[-1], n_label)
        self.particle = _nn.Linear(widths[-1], 1)

    def forward(self, x):
        y = self.stem(x)
        fill_map = None
        for i, st in enumerate(self.stages):
            y = st(y)
            if i == 1:
                fill_map = self.fill(y).float().mean(3)[:, 0]  # (B, H/8)
        g = y.mean((2, 3))
        return fill_map, self.cap(g).float(), self.label(g).float(), self.particle(g).float()[:, 0]


@_workload("bottling-line inspection serving (random init, a residual convnet over line-camera bottle images): 1,800-1,900 requests (drawn), each 4-24 bottles (drawn) from one of 6 filling lines (drawn), RGB images of 192-320 x 96-160 px (height and width drawn per request, multiples of 32), uint8 pixels uploaded on a side stream from two reused pinned host buffers (filled once, sized for 24 images of 320 x 160) one request ahead (one span, through SideUploads.ahead), normalised on the device into channels-last; a stride-2 stem and four stages of two residual blocks (24/48/96/192 channels, strides 4 to 32) under bf16 autocast; a fill-line heatmap from the stride-8 stage with a soft-argmax over height for the fill level, 4 cap classes (good, missing, skewed, damaged), 5 label flags and a foreign-particle logit; per bottle a reject flag by torch.where (fill level outside 0.18-0.24 of the height, a cap other than good, any label flag or particle probability over 0.5); the line's inspected and rejected counts and summed fill level kept on the device by index_add; each request's fill levels, reject flags and the line's running reject rate read back")
def bottling_line_inspect_serve(rng):
    widths, n_cap, n_label = _smoke([24, 48, 96, 192], [8, 16, 16, 32]), 4, 5
    model = _BottleNet(widths, n_cap, n_label).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    max_n, h_lo, h_hi, w_lo, w_hi = _smoke(24, 2), _smoke(192, 64), _smoke(320, 96), _smoke(96, 64), _smoke(160, 96)
    n_line = 6
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_n * 3 * h_hi * w_hi,), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)
    stats = torch.zeros(n_line, 3, device="cuda")  # inspected, rejected, summed fill level
    mean = torch.tensor([0.45, 0.42, 0.40], device="cuda").view(1, 3, 1, 1)

    nreq = rng.randint(_smoke(1800, 3), _smoke(1900, 4))
    plan = []
    for _ in range(nreq):
        plan.append((rng.randint(4 if max_n > 4 else 1, max_n), rng.randint(h_lo // 32, h_hi // 32) * 32,
                     rng.randint(w_lo // 32, w_hi // 32) * 32, rng.randrange(n_line)))

    for (n, h, w, line), raw in up.ahead(plan, lambda p: (p[0] * 3 * p[1] * p[2],)):
        with torch.no_grad():
            x = ((raw.view(n, 3, h, w).float() / 255.0 - mean) / 0.25).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                fill_map, cap, label, particle = model(x)
            rows = torch.linspace(0, 1, fill_map.shape[1], device="cuda")
            level = (torch.softmax(fill_map, -1) * rows).sum(-1)
            bad = (level < 0.18) | (level > 0.24) | (cap.argmax(-1) != 0) | (label > 0).any(-1) | (particle > 0)
            reject = torch.where(bad, 1.0, 0.0)
            line_t = torch.full((1,), line, device="cuda", dtype=torch.long)
            add = torch.stack([reject.new_full((), float(n)), reject.sum(), level.sum()])[None]
            stats.index_add_(0, line_t, add.to(stats.dtype))
            row = stats.index_select(0, line_t)[0]
            out = torch.cat([level, reject, (row[1] / row[0])[None]])
        out.tolist()
        del raw, x, fill_map, cap, label, particle, rows, level, bad, reject, line_t, add, row, out

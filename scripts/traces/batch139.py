"""The hundred-and-thirty-ninth batch of held-out workloads for record.py, kept in a file of their own (as batch16.py
to batch137_b.py are): pharmacies and drug dispensing, written in torch alone, first half. Prescription label reading
training (a residual convnet over scanned label lines of drawn width, its columns encoded by transformer blocks under
a key mask and the line's characters decoded by a cross-attention decoder, teacher-forced, the line's field kind from
the encoder), drug-drug interaction training (a GIN-style graph network with bond types over the atoms of drawn
molecules, bonds drawn on the device, each molecule pooled by index_add_ and drug pairs classified into interaction
types and severities), a pill photo identification service (a ResNet-style convnet embedding each photo of a
dispensed order, matched against a gallery of reference products with their shape and colour, the dispensed
product's rank checked) and refill adherence training (an LSTM written out refill by refill over each patient's
history of drawn length, left-padded refills keeping the state by torch.where; the gap to the next refill by a
log-normal likelihood, the proportion of days covered and discontinuation).
Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the service), `rng` the workload's random.Random for every shape, count and sampled choice, sizes
through `_smoke(real, small)` so that RECORD_SMOKE=1 runs are tiny. No control flow reads a tensor's value: lengths,
resolutions and batch sizes are fixed on the host, padding handled by masks or by torch.where / masked_fill, no
boolean-mask indexing; losses and metrics are read back only at logging points or once per request.
pill_photo_identify_serve uploads its photos on a side stream (two reused pinned host buffers, one request ahead,
through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16 autocast.
Every embedding and position table is sized for the longest padded length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new139.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and
for the CPU smoke run (RECORD_SMOKE=1).
"""

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, CrossDecoderBlock, PreNormBlock, SideUploads, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- prescription label reading (convnet + decoder)


class _LineReader(_nn.Module):
    """A residual convnet over a 48-px-high label line (1/8 of the width, the height pooled away), its columns
    with a position table through pre-norm transformer blocks under the column mask, a cross-attention decoder
    over the characters with the output tied to the character table, and the line's field kind from the encoder."""

    def __init__(self, c, d, heads, enc_l, dec_l, n_char, n_col, n_txt, n_kind):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(1, c[0], 3, 1, 1, bias=False), _nn.BatchNorm2d(c[0]), _nn.ReLU())
        self.body = _nn.Sequential(BasicResBlock(c[0], c[1], 2), BasicResBlock(c[1], c[2], 2),
                                   BasicResBlock(c[2], c[3], (2, 1)), BasicResBlock(c[3], c[3], (1, 2)))
        self.proj = _nn.Linear(c[3], d)
        self.col_pos, self.txt_pos = _nn.Embedding(n_col, d), _nn.Embedding(n_txt, d)
        self.char = _nn.Embedding(n_char, d)
        self.enc = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(enc_l))
        self.dec = _nn.ModuleList(CrossDecoderBlock(d, heads) for _ in range(dec_l))
        self.enc_norm, self.dec_norm = _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.kind = mlp(d, d, n_kind, act=_nn.GELU)

    def forward(self, img, keep, y_in):
        f = self.body(self.stem(img)).mean(2).transpose(1, 2)
        t = f.shape[1]
        x = self.proj(f) + self.col_pos(torch.arange(t, device=img.device))[None]
        m = keep[:, None, None, :]
        for blk in self.enc:
            x = blk(x, m)
        mem = self.enc_norm(x)
        w = keep.float()
        pooled = (mem.float() * w[..., None]).sum(1) / w.sum(1, keepdim=True)
        z = self.char(y_in) + self.txt_pos(torch.arange(y_in.shape[1], device=img.device))[None]
        for blk in self.dec:
            z = blk(z, mem, m)
        return _F.linear(self.dec_norm(z), self.char.weight).float(), self.kind(pooled).float()


@_workload("prescription label reading training (random init, a residual convnet with a transformer encoder-decoder): 16-48 scanned label lines a step (drawn), grayscale 48 px high and 192-640 px wide (the step's width drawn in steps of 32), each line's own ink width drawn (half to all of it; the rest zeroed and its columns masked); a stem of 32 channels and four basic residual blocks (64/128/192/192 channels, strides 2, 2, (2, 1), (1, 2)) to 1/8 of the width with the height averaged away, in NCHW, 2 pre-norm encoder blocks of width 256, 8 heads, over the 24-80 columns with an 80-row position table under the column mask; the line's 6-40 characters (drawn per line) and an end token of a 100-symbol set teacher-forced through 3 pre-norm cross-attention decoder blocks with a 41-row position table, the output tied to the character table; masked cross-entropy on the characters and the line's field kind (of 8: patient, drug, strength, directions, quantity, refills, prescriber, date) by cross-entropy from the masked mean of the encoder; AdamW, clipping, bf16 autocast, 260 steps; the losses read back every 10 steps and every 52 steps a no-grad pass over 32 lines of 640 px with 40 characters and the character accuracy read back")
def rx_label_ocr_train(rng):
    chans, d, heads = (_smoke(32, 4), _smoke(64, 8), _smoke(128, 8), _smoke(192, 8)), _smoke(256, 16), _smoke(8, 2)
    enc_l, dec_l, n_char, n_kind, hgt = _smoke(2, 1), _smoke(3, 1), 100, 8, 48
    w_lo, w_hi = _smoke(6, 2), _smoke(20, 3)  # widths in units of 32 px
    t_lo, t_hi = _smoke(6, 2), _smoke(40, 6)
    model = _LineReader(chans, d, heads, enc_l, dec_l, n_char, w_hi * 4, t_hi + 1, n_kind).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    steps, every = _smoke(260, 3), _smoke(52, 2)

    def batch(width, inks, t_lens):
        b, cols = len(inks), width // 8
        keep = keep_mask([-(-ink // 8) for ink in inks], cols)
        ink_mask = keep_mask(inks, width).float()
        img = torch.rand(b, 1, hgt, width, device="cuda") * ink_mask[:, None, None, :]
        u = max(t_lens) + 1
        keep_y = keep_mask([n + 1 for n in t_lens], u)
        slot = torch.arange(u, device="cuda")
        y = torch.randint(3, n_char, (b, u), device="cuda")
        y = torch.where(slot[None] == torch.tensor(t_lens, device="cuda")[:, None], 2, y).masked_fill(~keep_y, 0)
        y_in = torch.cat([torch.ones(b, 1, dtype=torch.long, device="cuda"), y[:, :-1]], 1)
        kind = torch.randint(0, n_kind, (b,), device="cuda")
        return img, keep, y, y_in, keep_y, kind

    for step in range(steps):
        model.train()
        b, width = rng.randint(_smoke(16, 2), _smoke(48, 3)), rng.randint(w_lo, w_hi) * 32
        inks = [rng.randint(width // 2, width) for _ in range(b)]
        t_lens = [rng.randint(t_lo, t_hi) for _ in range(b)]
        img, keep, y, y_in, keep_y, kind = batch(width, inks, t_lens)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits, k_out = model(img, keep, y_in)
        wy = keep_y.float()
        l_chr = (_F.cross_entropy(logits.transpose(1, 2), y, reduction="none") * wy).sum() / wy.sum()
        l_kind = _F.cross_entropy(k_out, kind)
        loss = l_chr + 0.2 * l_kind
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_chr.detach(), l_kind.detach()]).tolist()
        del img, keep, y, y_in, keep_y, kind, logits, k_out, wy, l_chr, l_kind, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                nb, width = _smoke(32, 2), w_hi * 32
                img, keep, y, y_in, keep_y, kind = batch(width, [width] * nb, [t_hi] * nb)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits, k_out = model(img, keep, y_in)
                wy = keep_y.float()
                acc = ((logits.argmax(-1) == y).float() * wy).sum() / wy.sum()
            acc.item()
            del img, keep, y, y_in, keep_y, kind, logits, k_out, wy, acc


# ---------------------------------------------------------------- drug-drug interactions (GIN over molecules)


class _GINLayer(_nn.Module):
    """A GIN layer with bond types: each bond's message the ReLU of the source atom plus its bond type's
    embedding, weighted, summed into each atom by index_add_ (in the messages' dtype), (1 + eps) times the atom
    added, a two-layer MLP, a layer norm and a residual."""

    def __init__(self, d, n_bond):
        super().__init__()
        self.bond = _nn.Embedding(n_bond, d)
        self.eps = _nn.Parameter(torch.zeros(1))
        self.mlp = mlp(d, 2 * d, d, act=_nn.ReLU)
        self.norm = _nn.LayerNorm(d)

    def forward(self, h, src, dst, bt, w):
        m = _F.relu(h.index_select(0, src) + self.bond(bt).to(h.dtype)) * w[:, None].to(h.dtype)
        agg = m.new_zeros(h.shape[0], m.shape[1]).index_add_(0, dst, m)
        return h + self.norm(self.mlp((1.0 + self.eps) * h + agg.to(h.dtype)))


class _DrugPairNet(_nn.Module):
    def __init__(self, n_atom, n_charge, n_bond, d, layers, n_type, n_sev):
        super().__init__()
        self.atom, self.charge, self.arom = _nn.Embedding(n_atom, d), _nn.Embedding(n_charge, d), _nn.Embedding(2, d)
        self.layers = _nn.ModuleList(_GINLayer(d, n_bond) for _ in range(layers))
        self.readout = mlp(2 * d, 2 * d, d, act=_nn.ReLU)
        self.pair = mlp(3 * d, 2 * d, n_type + n_sev, layers=3, act=_nn.ReLU)
        self.n_type = n_type

    def forward(self, atom, charge, arom, src, dst, bt, w, mol, inv_n, n_mol, pa, pb):
        h = self.atom(atom) + self.charge(charge) + self.arom(arom)
        for layer in self.layers:
            h = layer(h, src, dst, bt, w)
        tot = h.new_zeros(n_mol, h.shape[1]).index_add_(0, mol, h)
        g = self.readout(torch.cat([tot * inv_n.to(h.dtype), tot * 0.05], -1))
        ga, gb = g.index_select(0, pa), g.index_select(0, pb)
        out = self.pair(torch.cat([ga + gb, ga * gb, (ga - gb).abs()], -1)).float()
        return out[:, :self.n_type], out[:, self.n_type:]


@_workload("drug-drug interaction training (random init, a GIN-style graph network over molecules): 96-320 drug molecules a step (drawn), each of 12-60 heavy atoms (drawn per molecule on the host), atoms embedded by element (of 40), formal charge (of 7) and aromaticity drawn on the device; the bonds a chain within each molecule (weighted 0 across molecule boundaries) plus one ring bond an atom to a partner drawn on the device within its molecule, both ways, of 4 bond types drawn; 5 GIN layers of width 256 (messages ReLU(source + bond embedding), index_add_ into each atom in the messages' dtype, (1 + eps) self term, an MLP of 512, layer norm, residual); each molecule's sum and mean by index_add_, a readout MLP; 2-4 times as many drug pairs as molecules (drawn per step; the pairs drawn on the device), a symmetric pair head (sum, product, absolute difference, 3 layers of 512) into 86 interaction types by cross-entropy and 4 severities by cross-entropy; AdamW, clipping, bf16 autocast, 670 steps; the losses read back every 10 steps and every 134 steps a no-grad pass over 320 molecules of 60 atoms and 1,280 pairs with the type accuracy read back")
def drug_interaction_gin_train(rng):
    n_atom, n_charge, n_bond, d, layers = 40, 7, 4, _smoke(256, 16), _smoke(5, 1)
    n_type, n_sev = 86, 4
    a_lo, a_hi = _smoke(12, 3), _smoke(60, 8)
    model = _DrugPairNet(n_atom, n_charge, n_bond, d, layers, n_type, n_sev).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    steps, every = _smoke(670, 3), _smoke(134, 2)

    def graph(sizes, n_pair):
        n_mol, n = len(sizes), sum(sizes)
        starts = [0]
        for s in sizes[:-1]:
            starts.append(starts[-1] + s)
        size_t, start_t = torch.tensor(sizes, device="cuda"), torch.tensor(starts, device="cuda")
        mol = torch.arange(n_mol, device="cuda").repeat_interleave(size_t, output_size=n)
        atom = torch.randint(0, n_atom, (n,), device="cuda")
        charge = torch.randint(0, n_charge, (n,), device="cuda")
        arom = (torch.rand(n, device="cuda") < 0.3).long()
        a = torch.arange(n - 1, device="cuda")
        same = (mol[:-1] == mol[1:]).float()
        r = torch.arange(n, device="cuda")
        partner = start_t[mol] + (torch.rand(n, device="cuda") * size_t[mol]).long().clamp_max(size_t[mol] - 1)
        src = torch.cat([a, a + 1, r, partner])
        dst = torch.cat([a + 1, a, partner, r])
        w = torch.cat([same, same, torch.ones(2 * n, device="cuda")])
        bt = torch.randint(0, n_bond, (src.shape[0],), device="cuda")
        inv_n = 1.0 / size_t.float()[:, None]
        pa = torch.randint(0, n_mol, (n_pair,), device="cuda")
        pb = torch.randint(0, n_mol, (n_pair,), device="cuda")
        kind = torch.randint(0, n_type, (n_pair,), device="cuda")
        sev = torch.randint(0, n_sev, (n_pair,), device="cuda")
        return (atom, charge, arom, src, dst, bt, w, mol, inv_n, n_mol, pa, pb), kind, sev

    for step in range(steps):
        model.train()
        n_mol = rng.randint(_smoke(96, 4), _smoke(320, 6))
        sizes = [rng.randint(a_lo, a_hi) for _ in range(n_mol)]
        with torch.no_grad():
            inputs, kind, sev = graph(sizes, n_mol * rng.randint(2, 4))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            t_out, s_out = model(*inputs)
        l_type = _F.cross_entropy(t_out, kind)
        l_sev = _F.cross_entropy(s_out, sev)
        loss = l_type + 0.5 * l_sev
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_type.detach(), l_sev.detach()]).tolist()
        del inputs, kind, sev, t_out, s_out, l_type, l_sev, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                nm = _smoke(320, 6)
                inputs, kind, sev = graph([a_hi] * nm, 4 * nm)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    t_out, s_out = model(*inputs)
                acc = (t_out.argmax(-1) == kind).float().mean()
            acc.item()
            del inputs, kind, sev, t_out, s_out, acc


# ---------------------------------------------------------------- pill photo identification (service)


class _PillNet(_nn.Module):
    """A ResNet-style backbone (a strided stem, a max pool, three stages of two basic blocks), a normalised
    embedding and heads for the pill's shape, colour and whether an imprint is legible."""

    def __init__(self, w, emb, n_shape, n_colour):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, w[0], 5, 2, 2, bias=False), _nn.BatchNorm2d(w[0]), _nn.ReLU(),
                                   _nn.MaxPool2d(3, 2, 1))
        stages, cin = [], w[0]
        for c in w[1:]:
            stages += [BasicResBlock(cin, c, 2), BasicResBlock(c, c, 1)]
            cin = c
        self.stages = _nn.Sequential(*stages)
        self.emb = _nn.Linear(cin, emb)
        self.heads = _nn.Linear(cin, n_shape + n_colour + 1)
        self.n_shape = n_shape

    def forward(self, x):
        f = self.stages(self.stem(x)).mean((2, 3))
        h = self.heads(f).float()
        return (_F.normalize(self.emb(f).float(), dim=-1), h[:, :self.n_shape], h[:, self.n_shape:-1], h[:, -1])


@_workload("pill photo identification serving (random init, a ResNet-style convnet matched against a product gallery): 2,230-2,270 requests (drawn) of one dispensed order's 1-16 pill photos (drawn) at 224 x 224, 256 x 256 or 192 x 256 px (drawn per request), uint8 RGB uploaded on a side stream from two reused pinned host buffers (filled once, sized for 16 x 3 x 256 x 256) one request ahead (one span, through SideUploads.ahead), normalised on the device, channels_last; a 5x5 strided stem of 32 channels, a max pool and three stages of two basic residual blocks (64/128/256 channels), a normalised 256-d embedding and heads for shape (of 10), colour (of 14) and imprint legibility, in eval mode under bf16 autocast; a gallery of 6,000 reference products (embeddings in fp16, a shape and a colour each, made once on the device) scored by cosine plus 0.2 times the photo's log-probability of the product's shape and of its colour (index_select), the top 5 by topk, and the product the pharmacist dispensed (drawn per photo) checked: in the top 5, its rank and its margin to the best; each request's figures read back once")
def pill_photo_identify_serve(rng):
    widths = (_smoke(32, 8), _smoke(64, 8), _smoke(128, 8), _smoke(256, 16))
    res = [(224, 224), (256, 256), (192, 256)] if _smoke(1, 0) else [(32, 32), (32, 48)]
    max_n, n_gal, emb, n_shape, n_colour = _smoke(16, 3), _smoke(6000, 50), _smoke(256, 16), 10, 14
    model = _PillNet(widths, emb, n_shape, n_colour).cuda().eval().to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    gal = _F.normalize(torch.randn(n_gal, emb, device="cuda"), dim=-1).half()
    gal_shape = torch.randint(0, n_shape, (n_gal,), device="cuda")
    gal_colour = torch.randint(0, n_colour, (n_gal,), device="cuda")
    mean = torch.tensor([0.55, 0.52, 0.50], device="cuda").view(1, 3, 1, 1) * 255.0
    std = torch.tensor([0.22, 0.22, 0.23], device="cuda").view(1, 3, 1, 1) * 255.0
    big = max(h * w for h, w in res)
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_n * 3 * big,), generator=gen, dtype=torch.uint8).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)

    nreq = rng.randint(_smoke(2230, 3), _smoke(2270, 4))
    plan = []
    for _ in range(nreq):
        n, (h, w) = rng.randint(1, max_n), rng.choice(res)
        plan.append((n, h, w, [rng.randrange(n_gal) for _ in range(n)]))

    for (n, h, w, dispensed), raw in up.ahead(plan, lambda p: (p[0] * 3 * p[1] * p[2],)):
        with torch.no_grad():
            x = ((raw.view(n, 3, h, w).float() - mean) / std).contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                e, shape, colour, imprint = model(x)
            sim = (e.half() @ gal.t()).float()
            score = (sim + 0.2 * shape.log_softmax(-1).index_select(1, gal_shape)
                     + 0.2 * colour.log_softmax(-1).index_select(1, gal_colour))
            top, who = score.topk(5, -1)
            want = torch.tensor(dispensed, device="cuda")
            own = score.gather(1, want[:, None])
            hit = (who == want[:, None]).any(-1).float()
            rank = (score > own).sum(-1).float()
            margin = top[:, 0] - own[:, 0]
            figs = torch.cat([top.flatten(), who.float().flatten(), hit, rank, margin, torch.sigmoid(imprint),
                              shape.argmax(-1).float(), colour.argmax(-1).float()])
        figs.tolist()
        del raw, x, e, shape, colour, imprint, sim, score, top, who, want, own, hit, rank, margin, figs


# ---------------------------------------------------------------- refill adherence (LSTM written out refill by refill)


class _RefillLSTM(_nn.Module):
    """An LSTM written out refill by refill (the input gates of all refills at once, the hidden gates step by
    step), the first state from the drug class and the payer, padded refills keeping the state by torch.where; a
    per-refill head (the log-normal gap to the next refill) and a patient head from the last state and the masked
    mean of the states."""

    def __init__(self, fin, n_class, n_payer, d):
        super().__init__()
        self.inp = _nn.Linear(fin + 1, d)
        self.dclass, self.payer = _nn.Embedding(n_class, d), _nn.Embedding(n_payer, d)
        self.wx, self.wh = _nn.Linear(d, 4 * d), _nn.Linear(d, 4 * d, bias=False)
        self.gap = _nn.Linear(d, 2)
        self.head = mlp(2 * d, d, 2, act=_nn.GELU)

    def forward(self, x, keep, dclass, payer):
        gx_all = self.wx(_F.gelu(self.inp(torch.cat([x, keep[..., None].to(x.dtype)], -1))))
        h = torch.tanh(self.dclass(dclass) + self.payer(payer))
        c = torch.zeros_like(h)
        outs = []
        for s in range(x.shape[1]):
            i, f, g, o = (gx_all[:, s] + self.wh(h)).chunk(4, -1)
            c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h_new = torch.sigmoid(o) * torch.tanh(c_new)
            k = keep[:, s, None]
            c, h = torch.where(k, c_new, c), torch.where(k, h_new, h)
            outs.append(h)
        hs = torch.stack(outs, 1)
        w = keep.float()
        pooled = (hs.float() * w[..., None]).sum(1) / w.sum(1, keepdim=True)
        return self.gap(hs).float(), self.head(torch.cat([h.float(), pooled], -1)).float()


@_workload("refill adherence training (random init, an LSTM written out refill by refill): 96-384 patients a step (drawn), each with 6-40 refills of history (the step's length drawn; each patient's own 3-to-all refills drawn, left-padded under a mask) of 10 features (days' supply, the gap since the last fill, quantity, copay, mail or retail, a synchronised fill, an auto-refill, a reminder sent, a dose change, the pharmacy switched) and the mask, the drug class (of 40) and payer (of 12) by tables as the first state; an input projection and LSTM gates of width 160, the hidden gates step by step, padded refills keeping both states by torch.where; the log gap to the next refill at every refill by a masked log-normal negative log-likelihood (a mean and a log scale), from the last state and the masked mean of the states a proportion of days covered of at least 80% by BCE and discontinuation within 180 days by BCE; Adam, clipping, bf16 autocast, 270 steps; the losses read back every 10 steps and every 54 steps a no-grad pass over 384 patients of 40 refills with the adherence accuracy read back")
def refill_adherence_lstm_train(rng):
    fin, n_class, n_payer, d = 10, 40, 12, _smoke(160, 16)
    t_lo, t_hi = _smoke(6, 3), _smoke(40, 6)
    model = _RefillLSTM(fin, n_class, n_payer, d).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    steps, every = _smoke(270, 3), _smoke(54, 2)

    def batch(b, t, lens):
        keep = keep_mask(lens, t).flip(-1)
        x = torch.randn(b, t, fin, device="cuda") * keep[..., None].float()
        dclass = torch.randint(0, n_class, (b,), device="cuda")
        payer = torch.randint(0, n_payer, (b,), device="cuda")
        log_gap = torch.log(20.0 + 40.0 * torch.rand(b, t, device="cuda"))
        adherent = (torch.rand(b, device="cuda") < 0.6).float()
        stop = (torch.rand(b, device="cuda") < 0.15).float()
        return keep, x, dclass, payer, log_gap, adherent, stop

    def losses(gap, out, keep, log_gap, adherent, stop):
        mu, log_s = gap[:, :-1, 0], gap[:, :-1, 1].clamp(-4.0, 3.0)
        wk = (keep[:, :-1] & keep[:, 1:]).float()
        nll = log_s + 0.5 * ((log_gap[:, 1:] - mu) * torch.exp(-log_s)).pow(2)
        l_gap = (nll * wk).sum() / wk.sum().clamp_min(1.0)
        l_adh = _F.binary_cross_entropy_with_logits(out[:, 0], adherent)
        l_stop = _F.binary_cross_entropy_with_logits(out[:, 1], stop)
        return l_gap, l_adh, l_stop

    for step in range(steps):
        model.train()
        b, t = rng.randint(_smoke(96, 2), _smoke(384, 3)), rng.randint(t_lo, t_hi)
        lens = [rng.randint(3, t) for _ in range(b)]
        keep, x, dclass, payer, log_gap, adherent, stop = batch(b, t, lens)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            gap, out = model(x, keep, dclass, payer)
        l_gap, l_adh, l_stop = losses(gap, out, keep, log_gap, adherent, stop)
        loss = l_gap + l_adh + l_stop
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            torch.stack([l_gap.detach(), l_adh.detach(), l_stop.detach()]).tolist()
        del keep, x, dclass, payer, log_gap, adherent, stop, gap, out, l_gap, l_adh, l_stop, loss
        if (step + 1) % every == 0:
            model.eval()
            with torch.no_grad():
                nb = _smoke(384, 2)
                keep, x, dclass, payer, log_gap, adherent, stop = batch(nb, t_hi, [t_hi] * nb)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    gap, out = model(x, keep, dclass, payer)
                acc = ((out[:, 0] > 0).float() == adherent).float().mean()
            acc.item()
            del keep, x, dclass, payer, log_gap, adherent, stop, gap, out, acc

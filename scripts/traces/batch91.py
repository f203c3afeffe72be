"""The ninety-first batch of held-out workloads for record.py, kept in a file of their own (as batch16.py to
batch89_b.py are): banking, payments and consumer credit, written in torch alone, first half. Card-transaction fraud
training (a causal transformer over each card's transaction history of drawn length, merchant, category, country,
channel and hour embeddings with amount features, a focal loss on per-transaction fraud flags and next-category
prediction), credit default training (a deep-and-cross network over numeric application fields with missing-value
indicators and categorical fields, a masked set encoder over each applicant's drawn number of bureau tradelines,
default and loss-given-default heads, AUC evaluations), cheque reading training (a convolutional encoder over
grey-scale cheque scans of drawn widths, padded and masked, and a transformer decoder reading the cheque's fields
character by character under teacher forcing) and anti-money-laundering edge classification training (an
edge-conditioned message-passing network by index_select and index_add over drawn subgraphs of accounts and
transfers, both directions aggregated, a weighted binary cross-entropy on laundering flags of transfers). Same
conventions as the earlier batches: nothing downloaded, data drawn at random on the device, `rng` the workload's
random.Random for every shape, count and sampled choice, sizes through `_smoke(real, small)` so that RECORD_SMOKE=1
runs are tiny. No control flow reads a tensor's value: history lengths, tradeline counts, cheque widths, text
lengths, graph sizes and batch sizes are fixed on the host, padding handled by masks multiplied in or by
torch.where / masked_fill, no boolean-mask indexing; losses and metrics are read back only at logging points. All
four are single-stream. The models run under bf16 autocast. Every position table is sized for the longest padded
length that can be drawn.

record.py calls `register(<its own module object>)` once, just before main(), after the previous batch's: every
workload below is then added to record.py's WORKLOADS with its family. This file never imports record.py; it
reaches record.py's helpers through the module object it was given (`_b.rec`). The plumbing is batch_common.py's.

Real sizes checked before recording: see record_new91.sh's header for each workload's op outputs and peak live bytes
counted on PyTorch's meta device at its final real sizes (RECORD_SMOKE unset) with scripts/traces/meta_run.py, and for
which of them the CPU smoke run (RECORD_SMOKE=1) ran.
"""

import torch

from batch_common import Batch
from workload_helpers import PreNormBlock, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


def _loguniform(rng, lo, hi, mult=1):
    return _b.rec._loguniform(rng, lo, hi, mult)


# ---------------------------------------------------------------- card-transaction fraud (causal transformer)


class _TxnEncoder(_nn.Module):
    """Per-transaction embeddings (merchant, category, country, channel, hour of week) plus a projection of numeric
    features, a card-level embedding added to every transaction, a position table, pre-norm blocks under a causal
    and key mask; a fraud logit and next-category logits on every transaction."""

    def __init__(self, n_merch, n_mcc, n_ctry, n_chan, n_card_type, n_num, d, heads, layers, max_pos):
        super().__init__()
        self.merch, self.mcc, self.ctry = _nn.Embedding(n_merch, d), _nn.Embedding(n_mcc, d), _nn.Embedding(n_ctry, d)
        self.chan, self.hour, self.card = _nn.Embedding(n_chan, d), _nn.Embedding(168, d), _nn.Embedding(n_card_type, d)
        self.num = _nn.Linear(n_num, d)
        self.pos = _nn.Embedding(max_pos, d)
        self.norm_in = _nn.LayerNorm(d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.fraud, self.next_mcc = mlp(d, d, 1, act=_nn.GELU), _nn.Linear(d, n_mcc)

    def forward(self, cat, num, card, mask):
        t = cat.shape[1]
        x = (self.merch(cat[..., 0]) + self.mcc(cat[..., 1]) + self.ctry(cat[..., 2]) + self.chan(cat[..., 3])
             + self.hour(cat[..., 4]) + self.num(num) + self.card(card)[:, None]
             + self.pos(torch.arange(t, device=cat.device))[None])
        x = _F.dropout(self.norm_in(x), 0.1, self.training)
        for blk in self.blocks:
            x = blk(x, mask=mask)
        x = self.norm(x)
        return self.fraud(x)[..., 0].float(), self.next_mcc(x).float()


@_workload("card-transaction fraud training (random init, a causal transformer over card histories): 16-64 cards a step (drawn), each with a history of 16-256 transactions (drawn per card, padded to the step's longest rounded up to a multiple of 16); per transaction a merchant (60,000), category code (600), country (250), channel (5) and hour-of-week (168) index and 6 numeric features (log amount, time since the previous transaction and others) drawn on the device, a card type (8) per card; summed embeddings, a 256-row position table (the longest padded history), 4 pre-norm blocks (width 256, 4 heads) under a causal and key mask; a focal loss (gamma 2, alpha 0.25) on per-transaction fraud flags (drawn at 3%) with pads weighted out, and next-category prediction (pads and last transactions ignored); AdamW, clipping, bf16 autocast, 510 steps; the losses read back every 20 steps and every 125 steps a no-grad evaluation of 64 cards of 256 transactions with the fraud rate among the top 1% of scores read back")
def card_txn_fraud_train(rng):
    n_merch, n_mcc, n_ctry, n_chan, n_card_type, n_num = _smoke(60000, 300), _smoke(600, 40), 250, 5, 8, 6
    d, heads, layers, max_len = _smoke(256, 32), _smoke(4, 2), _smoke(4, 1), _smoke(256, 32)
    model = _TxnEncoder(n_merch, n_mcc, n_ctry, n_chan, n_card_type, n_num, d, heads, layers, max_len).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    cards_n = [n_merch, n_mcc, n_ctry, n_chan, 168]

    def histories(lengths):
        b, t = len(lengths), -(-max(lengths) // 16) * 16
        keep = keep_mask(lengths, t)
        cat = torch.stack([torch.randint(0, c, (b, t), device="cuda") for c in cards_n], -1)
        num = torch.randn(b, t, n_num, device="cuda") * keep[..., None]
        card = torch.randint(0, n_card_type, (b,), device="cuda")
        causal = torch.ones(t, t, dtype=torch.bool, device="cuda").tril()
        mask = causal[None, None] & keep[:, None, None, :]
        fraud = (torch.rand(b, t, device="cuda") < 0.03).float()
        # the next transaction's category, ignored on pads and on each card's last transaction
        nxt = torch.cat([cat[:, 1:, 1], cat.new_zeros(b, 1)], 1)
        nxt = nxt.masked_fill(~torch.cat([keep[:, 1:], keep.new_zeros(b, 1)], 1), -100)
        return cat, num, card, mask, keep, fraud, nxt

    steps = _smoke(510, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(16, 2), _smoke(64, 4))
        lengths = [rng.randint(_smoke(16, 4), max_len) for _ in range(b)]
        cat, num, card, mask, keep, fraud, nxt = histories(lengths)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            f_log, m_log = model(cat, num, card, mask)
        w = keep.float()
        p = torch.sigmoid(f_log)
        pt = p * fraud + (1 - p) * (1 - fraud)
        at = 0.25 * fraud + 0.75 * (1 - fraud)
        bce = _F.binary_cross_entropy_with_logits(f_log, fraud, reduction="none")
        l_f = (at * (1 - pt) ** 2 * bce * w).sum() / w.sum()
        l_m = _F.cross_entropy(m_log.flatten(0, 1), nxt.flatten(), ignore_index=-100)
        loss = l_f + 0.2 * l_m
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_f.detach(), l_m.detach()]).tolist()
        del cat, num, card, mask, keep, fraud, nxt, f_log, m_log, w, p, pt, at, bce, l_f, l_m, loss
        if (step + 1) % _smoke(125, 2) == 0:
            model.eval()
            with torch.no_grad():
                cat, num, card, mask, keep, fraud, nxt = histories([max_len] * _smoke(64, 3))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    f_log, _ = model(cat, num, card, mask)
                k = max(1, f_log.numel() // 100)
                top = f_log.flatten().topk(k).indices
                prec = fraud.flatten()[top].mean()
            prec.item()
            del cat, num, card, mask, keep, fraud, nxt, f_log, top, prec


# ---------------------------------------------------------------- credit default (deep & cross with tradelines)


class _CreditDCN(_nn.Module):
    """Numeric fields with learned fills for missing values and their indicators, categorical fields from one offset
    table, a set encoder over bureau tradelines (an MLP per tradeline, masked mean and max pooling), a DCN-v2 cross
    network and a deep MLP in parallel; default and loss-given-default heads."""

    def __init__(self, n_num, cards, n_tl, d_cat, d, n_cross):
        super().__init__()
        self.fill = _nn.Parameter(torch.zeros(n_num))
        self.register_buffer("offsets", torch.tensor([0] + list(cards[:-1])).cumsum(0))
        self.cat = _nn.Embedding(sum(cards), d_cat)
        self.tl_enc = mlp(n_tl, 128, 128, act=_nn.GELU)
        self.tl_type = _nn.Embedding(12, 128)
        d_in = 2 * n_num + len(cards) * d_cat + 256
        self.inp = _nn.Sequential(_nn.Linear(d_in, d), _nn.LayerNorm(d))
        self.cross = _nn.ModuleList(_nn.Linear(d, d) for _ in range(n_cross))
        self.deep = mlp(d, 2 * d, d, layers=3, act=_nn.GELU, norm=True)
        self.default, self.lgd = _nn.Linear(2 * d, 1), mlp(2 * d, d, 1)

    def forward(self, num, miss, cat, tl, tl_type, tl_keep):
        num = torch.where(miss, self.fill.to(num.dtype), num)
        c = self.cat(cat + self.offsets).flatten(1)
        h = self.tl_enc(tl) + self.tl_type(tl_type)
        w = tl_keep[..., None].to(h.dtype)
        mean = (h * w).sum(1) / w.sum(1).clamp(min=1)
        mx = h.masked_fill(~tl_keep[..., None], -1e4).amax(1) * (w.sum(1) > 0).to(h.dtype)
        x0 = self.inp(torch.cat([num, miss.to(num.dtype), c.to(num.dtype), mean.to(num.dtype), mx.to(num.dtype)], -1))
        x = x0
        for lin in self.cross:
            x = x0 * lin(x) + x
        z = torch.cat([x, self.deep(x0)], -1)
        return self.default(z)[..., 0].float(), torch.sigmoid(self.lgd(z)[..., 0].float())


@_workload("credit default training (random init, a deep-and-cross network with a tradeline set encoder): 512-8,192 loan applicants a step (log-uniform, a multiple of 128), each with 48 numeric application fields (10% missing, drawn on the device, replaced by learned fills with missing indicators) and 14 categorical fields (2-900 codes, one offset table of width 16), and 0 to the step's maximum of 8-48 bureau tradelines (the maximum drawn per step, each applicant's count drawn on the device, masked) of 20 features and a type (12); a per-tradeline MLP with masked mean and max pooling, a 4-layer DCN-v2 cross network and a 3-layer deep MLP (width 384, hidden 768) in parallel; binary cross-entropy on default (drawn at 8%) and a loss-given-default MSE weighted by the default flags; AdamW, clipping, bf16 autocast, 1,050 steps; the losses read back every 20 steps and every 210 steps the AUC of 16,384 applicants (scored in chunks of 4,096, ranks by argsort) read back")
def credit_default_tabular_train(rng):
    n_num, n_tl, d_cat, d, n_cross = 48, 20, 16, _smoke(384, 32), _smoke(4, 1)
    cards = [51, 14, 5, 11, 7, 35, 900, 4, 3, 2, 20, 6, 12, 30]
    model = _CreditDCN(n_num, cards, n_tl, d_cat, d, n_cross).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)

    def applicants(b, max_tl):
        num = torch.randn(b, n_num, device="cuda")
        miss = torch.rand(b, n_num, device="cuda") < 0.1
        cat = torch.stack([torch.randint(0, c, (b,), device="cuda") for c in cards], 1)
        tl = torch.randn(b, max_tl, n_tl, device="cuda")
        tl_type = torch.randint(0, 12, (b, max_tl), device="cuda")
        n_tl_b = torch.randint(0, max_tl + 1, (b, 1), device="cuda")
        tl_keep = torch.arange(max_tl, device="cuda")[None] < n_tl_b
        y = (torch.rand(b, device="cuda") < 0.08).float()
        lgd = torch.rand(b, device="cuda")
        return (num, miss, cat, tl, tl_type, tl_keep), y, lgd

    steps = _smoke(1050, 3)
    for step in range(steps):
        model.train()
        b = _loguniform(rng, _smoke(512, 8), _smoke(8192, 32), _smoke(128, 8))
        max_tl = rng.randint(_smoke(8, 2), _smoke(48, 6))
        x, y, lgd = applicants(b, max_tl)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            d_log, lgd_hat = model(*x)
        l_d = _F.binary_cross_entropy_with_logits(d_log, y)
        l_g = ((lgd_hat - lgd) ** 2 * y).sum() / y.sum().clamp(min=1)
        loss = l_d + l_g
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_d.detach(), l_g.detach()]).tolist()
        del x, y, lgd, d_log, lgd_hat, l_d, l_g, loss
        if (step + 1) % _smoke(210, 2) == 0:
            model.eval()
            with torch.no_grad():
                scores, labels = [], []
                for _ in range(_smoke(4, 2)):
                    x, y, _ = applicants(_smoke(4096, 16), _smoke(48, 6))
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        scores.append(model(*x)[0])
                    labels.append(y)
                s, y = torch.cat(scores), torch.cat(labels)
                ranks = torch.empty_like(s).scatter_(0, s.argsort(), torch.arange(1, s.numel() + 1, device="cuda",
                                                                                   dtype=s.dtype))
                n_pos = y.sum()
                auc = ((ranks * y).sum() - n_pos * (n_pos + 1) / 2) / (n_pos * (y.numel() - n_pos)).clamp(min=1)
            auc.item()
            del x, y, scores, labels, s, ranks, n_pos, auc


# ---------------------------------------------------------------- cheque reading (conv encoder, transformer decoder)


class _DecBlock(_nn.Module):
    """Pre-norm decoder block: causal self-attention, cross-attention to the image tokens under a key mask, a GELU
    MLP."""

    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.n1, self.n2, self.n3 = _nn.LayerNorm(d), _nn.LayerNorm(d), _nn.LayerNorm(d)
        self.qkv, self.o1 = _nn.Linear(d, 3 * d), _nn.Linear(d, d)
        self.q, self.kv, self.o2 = _nn.Linear(d, d), _nn.Linear(d, 2 * d), _nn.Linear(d, d)
        self.fc1, self.fc2 = _nn.Linear(d, 4 * d), _nn.Linear(4 * d, d)

    def _heads(self, x):
        b, t, d = x.shape
        return x.view(b, t, self.h, d // self.h).transpose(1, 2)

    def forward(self, x, mem, mem_key):
        b, t, d = x.shape
        q, k, v = (self._heads(z) for z in self.qkv(self.n1(x)).chunk(3, -1))
        x = x + self.o1(_F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, d))
        k, v = (self._heads(z) for z in self.kv(mem).chunk(2, -1))
        a = _F.scaled_dot_product_attention(self._heads(self.q(self.n2(x))), k, v, attn_mask=mem_key)
        x = x + self.o2(a.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(_F.gelu(self.fc1(self.n3(x))))


def _conv_bn(cin, cout, stride):
    return _nn.Sequential(_nn.Conv2d(cin, cout, 3, stride, 1, bias=False), _nn.BatchNorm2d(cout), _nn.SiLU())


class _ChequeReader(_nn.Module):
    """Four stride-2 convolutional stages (each two 3x3 convolutions with batch norm) to 1/16 of the scan, row and
    column position tables over the flattened feature map, a transformer decoder over character ids, a
    signature-present head on the masked mean of the image tokens."""

    def __init__(self, widths, d, heads, layers, rows, cols, vocab, max_chars):
        super().__init__()
        stages, c = [], 1
        for w in widths:
            stages += [_conv_bn(c, w, 2), _conv_bn(w, w, 1)]
            c = w
        self.cnn = _nn.Sequential(*stages)
        self.proj = _nn.Linear(c, d)
        self.row, self.col = _nn.Embedding(rows, d), _nn.Embedding(cols, d)
        self.mem_norm = _nn.LayerNorm(d)
        self.tok, self.pos = _nn.Embedding(vocab, d), _nn.Embedding(max_chars, d)
        self.blocks = _nn.ModuleList(_DecBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.out = _nn.Linear(d, vocab)
        self.sig = mlp(d, d, 1)

    def forward(self, img, mem_keep, ids):
        f = self.cnn(img)  # (B, C, H/16, W/16)
        b, _, r, c = f.shape
        pos = self.row(torch.arange(r, device=img.device))[:, None] + self.col(torch.arange(c, device=img.device))[None]
        mem = self.mem_norm(self.proj(f.flatten(2).transpose(1, 2)) + pos.flatten(0, 1)[None])
        t = ids.shape[1]
        x = self.tok(ids) + self.pos(torch.arange(t, device=ids.device))[None]
        key = mem_keep[:, None, None, :]
        for blk in self.blocks:
            x = blk(x, mem, key)
        w = mem_keep[..., None].to(mem.dtype)
        sig = self.sig((mem * w).sum(1) / w.sum(1))[..., 0]
        return self.out(self.norm(x)).float(), sig.float()


@_workload("cheque reading training (random init, a convolutional encoder and a transformer decoder): 8-32 cheque scans a step (drawn), grey-scale at a height of 96 and each of its own width of 320-1,024 pixels (drawn per cheque, a multiple of 16, padded with zeros to the step's widest and masked), drawn on the device; four stride-2 stages (two 3x3 convolutions with batch norm each, 32/64/128/192 channels) to a 6 x W/16 feature map, row (6) and column (64, the widest scan) position tables, the flattened map as memory; a 4-block transformer decoder (width 256, 4 heads; causal self-attention, cross-attention under the column mask) over the cheque's field text (payee, amount in words, amount in figures, date and MICR line; 24-120 characters drawn per cheque over a 100-symbol vocabulary, padded to the step's longest plus begin and end marks rounded up to a multiple of 8, a 128-row position table) under teacher forcing, pads ignored; a signature-present head on the masked mean of the image tokens; AdamW, clipping, bf16 autocast, 290 steps; the losses read back every 20 steps and every 72 steps a no-grad evaluation of 24 cheques 1,024 pixels wide with 120 characters and the teacher-forced character accuracy read back")
def cheque_reading_train(rng):
    widths, d, heads, layers = _smoke([32, 64, 128, 192], [8, 8, 16, 16]), _smoke(256, 32), _smoke(4, 2), _smoke(4, 1)
    height, lo_w, hi_w = _smoke(96, 32), _smoke(320, 64), _smoke(1024, 128)
    vocab, lo_c, hi_c = 100, _smoke(24, 4), _smoke(120, 12)
    max_chars = -(-(hi_c + 2) // 8) * 8
    model = _ChequeReader(widths, d, heads, layers, height // 16, hi_w // 16, vocab, max_chars).cuda()
    model = model.to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    bos, eos = 1, 2

    def cheques(ws, cs):
        b, wmax = len(ws), max(ws)
        col_keep = keep_mask(ws, wmax)
        img = (torch.rand(b, 1, height, wmax, device="cuda") * col_keep[:, None, None]).contiguous(
            memory_format=torch.channels_last)
        cols = [w // 16 for w in ws]
        mem_keep = keep_mask(cols, wmax // 16).repeat(1, height // 16)  # row-major over the 6 x W/16 map
        t = -(-(max(cs) + 2) // 8) * 8
        chars = keep_mask([c + 2 for c in cs], t)  # the begin mark, the characters and the end mark
        body = torch.randint(3, vocab, (b, t), device="cuda")
        ends = torch.tensor(cs, device="cuda")[:, None] + 1
        pos = torch.arange(t, device="cuda")[None]
        seq = torch.where(pos == ends, torch.full_like(body, eos), body)
        seq = torch.where(pos == 0, torch.full_like(body, bos), seq)
        seq = torch.where(pos <= ends, seq, torch.zeros_like(seq))
        inp = seq[:, :-1]
        tgt = seq[:, 1:].masked_fill(~chars[:, 1:], -100)
        sig = (torch.rand(b, device="cuda") < 0.9).float()
        return img, mem_keep, inp, tgt, sig

    steps = _smoke(290, 3)
    for step in range(steps):
        model.train()
        b = rng.randint(_smoke(8, 2), _smoke(32, 3))
        ws = [rng.randint(lo_w // 16, hi_w // 16) * 16 for _ in range(b)]
        cs = [rng.randint(lo_c, hi_c) for _ in range(b)]
        img, mem_keep, inp, tgt, sig = cheques(ws, cs)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits, sig_log = model(img, mem_keep, inp)
        l_c = _F.cross_entropy(logits.flatten(0, 1), tgt.flatten(), ignore_index=-100)
        l_s = _F.binary_cross_entropy_with_logits(sig_log, sig)
        loss = l_c + 0.1 * l_s
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_c.detach(), l_s.detach()]).tolist()
        del img, mem_keep, inp, tgt, sig, logits, sig_log, l_c, l_s, loss
        if (step + 1) % _smoke(72, 2) == 0:
            model.eval()
            n = _smoke(24, 2)
            with torch.no_grad():
                img, mem_keep, inp, tgt, sig = cheques([hi_w] * n, [hi_c] * n)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits, _ = model(img, mem_keep, inp)
                valid = (tgt >= 0).float()
                acc = ((logits.argmax(-1) == tgt).float() * valid).sum() / valid.sum()
            acc.item()
            del img, mem_keep, inp, tgt, sig, logits, valid, acc


# ---------------------------------------------------------------- anti-money-laundering edge classification (GNN)


class _EdgeConvLayer(_nn.Module):
    """Edge-conditioned message passing in both directions: messages ReLU(h[src] + W e) gathered by index_select and
    summed into the receivers by index_add (incoming and outgoing separately, each divided by its degree), an MLP
    over the node and both aggregates, a residual, LayerNorm; the edge states updated from both endpoints."""

    def __init__(self, d):
        super().__init__()
        self.e_in, self.e_out = _nn.Linear(d, d), _nn.Linear(d, d)
        self.node = mlp(3 * d, 2 * d, d, act=_nn.GELU)
        self.edge = mlp(3 * d, d, d, act=_nn.GELU)
        self.norm, self.e_norm = _nn.LayerNorm(d), _nn.LayerNorm(d)

    def forward(self, h, e, src, dst, deg_in, deg_out):
        m_in = _F.relu(h.index_select(0, src) + self.e_in(e))
        m_out = _F.relu(h.index_select(0, dst) + self.e_out(e))
        agg_in = torch.zeros_like(h).index_add_(0, dst, m_in.to(h.dtype)) / deg_in[:, None].to(h.dtype)
        agg_out = torch.zeros_like(h).index_add_(0, src, m_out.to(h.dtype)) / deg_out[:, None].to(h.dtype)
        h = self.norm(h + self.node(torch.cat([h, agg_in, agg_out], -1)))
        e = self.e_norm(e + self.edge(torch.cat([h.index_select(0, src), h.index_select(0, dst), e], -1)))
        return h, e


class _AmlGnn(_nn.Module):
    def __init__(self, n_node_num, n_acct_type, n_bank, n_edge_num, n_ccy, n_fmt, d, layers):
        super().__init__()
        self.node_num = _nn.Linear(n_node_num, d)
        self.acct, self.bank = _nn.Embedding(n_acct_type, d), _nn.Embedding(n_bank, d)
        self.edge_num = _nn.Linear(n_edge_num, d)
        self.ccy, self.fmt = _nn.Embedding(n_ccy, d), _nn.Embedding(n_fmt, d)
        self.layers = _nn.ModuleList(_EdgeConvLayer(d) for _ in range(layers))
        self.head = mlp(3 * d, d, 1, layers=3, act=_nn.GELU)

    def forward(self, xn, acct, bank, xe, ccy, fmt, src, dst, deg_in, deg_out):
        h = self.node_num(xn) + self.acct(acct) + self.bank(bank)
        e = self.edge_num(xe) + self.ccy(ccy) + self.fmt(fmt)
        for layer in self.layers:
            h, e = layer(h, e, src, dst, deg_in, deg_out)
        return self.head(torch.cat([h.index_select(0, src), h.index_select(0, dst), e], -1))[..., 0].float()


@_workload("anti-money-laundering edge classification training (random init, an edge-conditioned message-passing network): each step a subgraph of 20,000-60,000 accounts (drawn) with 2-6 transfers per account on average (the multiplier drawn per step, endpoints drawn on the device, a tenth of them paid into a hub set of 1% of the accounts); accounts with 12 numeric features, an account type (8) and a bank (400), transfers with 6 numeric features (log amount, time and others), a currency (30) and a payment format (7), all drawn on the device; 3 layers (width 128) of messages in both directions by index_select and index_add with degree normalisation, node MLPs with residuals and LayerNorm and edge-state updates from both endpoints; an edge MLP on the two endpoints and the edge state, binary cross-entropy with a positive weight of 20 on laundering flags (drawn at 0.5%); AdamW, clipping, bf16 autocast, 630 steps; the loss read back every 20 steps and every 126 steps, on a fresh subgraph, the precision, recall and F1 at a 0.5 threshold read back")
def aml_graph_edge_train(rng):
    n_node_num, n_acct_type, n_bank, n_edge_num, n_ccy, n_fmt = 12, 8, 400, 6, 30, 7
    d, layers = _smoke(128, 16), _smoke(3, 1)
    model = _AmlGnn(n_node_num, n_acct_type, n_bank, n_edge_num, n_ccy, n_fmt, d, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-5)
    pos_weight = torch.tensor(20.0, device="cuda")

    def subgraph():
        n = rng.randint(_smoke(20000, 60), _smoke(60000, 120))
        e = n * rng.randint(2, 6)
        n_hub, e_hub = max(1, n // 100), e // 10
        # most transfers between random accounts, a tenth touching a small set of hub accounts (mule collectors)
        src = torch.randint(0, n, (e,), device="cuda")
        dst = torch.cat([torch.randint(0, n, (e - e_hub,), device="cuda"),
                         torch.randint(0, n_hub, (e_hub,), device="cuda")])
        ones = torch.ones(e, device="cuda")
        deg_in = torch.zeros(n, device="cuda").index_add_(0, dst, ones).clamp(min=1)
        deg_out = torch.zeros(n, device="cuda").index_add_(0, src, ones).clamp(min=1)
        xn = torch.randn(n, n_node_num, device="cuda")
        acct, bank = torch.randint(0, n_acct_type, (n,), device="cuda"), torch.randint(0, n_bank, (n,), device="cuda")
        xe = torch.randn(e, n_edge_num, device="cuda")
        ccy, fmt = torch.randint(0, n_ccy, (e,), device="cuda"), torch.randint(0, n_fmt, (e,), device="cuda")
        y = (torch.rand(e, device="cuda") < 0.005).float()
        return (xn, acct, bank, xe, ccy, fmt, src, dst, deg_in, deg_out), y

    steps = _smoke(630, 3)
    for step in range(steps):
        model.train()
        g, y = subgraph()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logit = model(*g)
        loss = _F.binary_cross_entropy_with_logits(logit, y, pos_weight=pos_weight)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            loss.detach().item()
        del g, y, logit, loss
        if (step + 1) % _smoke(126, 2) == 0:
            model.eval()
            with torch.no_grad():
                g, y = subgraph()
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    pred = (model(*g) > 0).float()
                tp = (pred * y).sum()
                prec, rec = tp / pred.sum().clamp(min=1), tp / y.sum().clamp(min=1)
                f1 = 2 * prec * rec / (prec + rec).clamp(min=1e-6)
            torch.stack([prec, rec, f1]).tolist()
            del g, y, pred, tp, prec, rec, f1

"""Helper functions that several of record.py's workload modules share (configs, random draws, generation
and training loops, attention, rotary embeddings, point-cloud sampling), moved verbatim from record.py.
record.py imports them all back, so they stay reachable as record.<name> (batch16-18 use `_b.rec._rope`,
record_dist.py `from record import _train_lm, llama_config`)."""

import math

import torch


def llama_config(layers, kv_heads, positions):
    """A Llama-style config: hidden 1024, MLP 2816, 16 heads, vocab 32000."""
    from transformers import LlamaConfig

    return LlamaConfig(
        hidden_size=1024,
        intermediate_size=2816,
        num_hidden_layers=layers,
        num_attention_heads=16,
        num_key_value_heads=kv_heads,
        vocab_size=32000,
        max_position_embeddings=positions,
    )


def randint(rng, lo, hi, mult=1):
    return rng.randint(lo // mult, hi // mult) * mult


def _generate_exactly(model, ids, n, **options):
    """`model.generate` of exactly `n` new tokens after `ids` (no padding),
    greedy unless `options` say otherwise."""
    model.generate(
        ids,
        attention_mask=torch.ones_like(ids),
        max_new_tokens=n,
        min_new_tokens=n,
        pad_token_id=0,
        **{"do_sample": False, **options},
    )


def _generate(model, vocab, rng, requests, batches, prompt, new):
    model.eval()
    with torch.no_grad():
        for _ in range(requests):
            b = rng.choice(batches)
            p = rng.randint(*prompt)
            n = rng.randint(*new)
            ids = torch.randint(0, vocab, (b, p), device="cuda")
            _generate_exactly(model, ids, n)
            del ids


def _train_lm(model, vocab, rng, steps, batch, seq, opt):
    model.train()
    for _ in range(steps):
        b = rng.randint(*batch)
        s = randint(rng, seq[0], seq[1], 8)
        ids = torch.randint(0, vocab, (b, s), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, loss


def _train_vision(model, rng, steps, batch, res, opt, classes=1000, mult=32, schedule=None):
    model.train()
    for step in range(steps):
        if schedule:
            b, r = schedule(step)
        else:
            b, r = rng.randint(*batch), randint(rng, res[0], res[1], mult)
        x = torch.randn(b, 3, r, r, device="cuda").contiguous(memory_format=torch.channels_last)
        y = torch.randint(0, classes, (b,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, y, loss


def _posenc(x, freqs):
    """NeRF's positional encoding: x, then sin and cos of x at 2^0..2^(freqs-1)."""
    xb = (x[..., None, :] * (2.0 ** torch.arange(freqs, device=x.device))[:, None]).flatten(-2)
    return torch.cat([x, xb.sin(), xb.cos()], -1)


def _square_distance(a, b):
    """Squared distances between every point of a (B, N, 3) and of b (B, M, 3): (B, N, M)."""
    return a.pow(2).sum(-1)[:, :, None] + b.pow(2).sum(-1)[:, None, :] - 2 * a @ b.transpose(1, 2)


def _gather_points(points, idx):
    """points (B, N, C) picked by idx (B, ...) of point indices: (B, ..., C)."""
    batch = torch.arange(points.shape[0], device=points.device).view(-1, *([1] * (idx.dim() - 1)))
    return points[batch, idx]


def _farthest_points(xyz, npoint):
    """Farthest-point sampling, one point per iteration, as the pure-PyTorch PointNet++ does it."""
    b, n, _ = xyz.shape
    chosen = torch.zeros(b, npoint, dtype=torch.long, device=xyz.device)
    distance = torch.full((b, n), 1e10, device=xyz.device)
    farthest = torch.randint(0, n, (b,), device=xyz.device)
    batch = torch.arange(b, device=xyz.device)
    for i in range(npoint):
        chosen[:, i] = farthest
        d = (xyz - xyz[batch, farthest][:, None]).pow(2).sum(-1)
        distance = torch.minimum(distance, d)
        farthest = distance.argmax(-1)
    return chosen


def _ball_query(radius, k, xyz, centres):
    """The first k points within radius of each centre (padded with the
    first one found), by sorting a (B, S, N) index matrix."""
    b, n, _ = xyz.shape
    idx = torch.arange(n, device=xyz.device).view(1, 1, n).repeat(b, centres.shape[1], 1)
    idx.masked_fill_(_square_distance(centres, xyz) > radius * radius, n)
    idx = idx.sort(dim=-1)[0][:, :, :k]
    return torch.where(idx == n, idx[:, :, :1], idx)


def _mha(q, k, v, heads, **sdpa):
    """Multi-head attention of (N, Lq, C) queries over (N, Lk, C) keys and values: heads split off C, SDPA, merged."""

    def split(t):
        return t.unflatten(-1, (heads, -1)).transpose(1, 2)

    a = torch.nn.functional.scaled_dot_product_attention(split(q), split(k), split(v), **sdpa)
    return a.transpose(1, 2).flatten(2)


def _rope(x, cos, sin):
    """Llama's rotary embedding (rotate-half form) of x (..., dh) by cos and sin broadcast to it."""
    a, b = x.chunk(2, -1)
    return x * cos + torch.cat([-b, a], -1) * sin


def _llama_layers(lm, x, c, s, heads, kv_heads, dh, attend):
    """The final hidden states of x (T, hidden) through an HF Llama's decoder layers, run by hand:
    rotary cos c and sin s (T, 1, dh); attend(layer, q, k, v) keeps k, v and returns the attention
    output (T, heads, dh)."""
    for i, layer in enumerate(lm.model.layers):
        a = layer.self_attn
        h = layer.input_layernorm(x)
        q = _rope(a.q_proj(h).view(-1, heads, dh), c, s)
        k = _rope(a.k_proj(h).view(-1, kv_heads, dh), c, s)
        x = x + a.o_proj(attend(i, q, k, a.v_proj(h).view(-1, kv_heads, dh)).flatten(1))
        x = x + layer.mlp(layer.post_attention_layernorm(x))
    return lm.model.norm(x)


def _sincos(pos, dim):
    """Sine and cosine features of positions or timesteps at `dim // 2` geometric frequencies: (N, dim)."""
    freqs = torch.exp(-math.log(10000) * torch.arange(dim // 2, device=pos.device, dtype=torch.float32) / (dim // 2))
    a = pos.float()[:, None] * freqs[None]
    return torch.cat([a.sin(), a.cos()], -1)


def _padded_ids(vocab, lengths, pad=0, mult=1):
    """Right-padded random ids and their attention mask for rows of the given
    lengths, the longest rounded up to a multiple of `mult`."""
    s = -(-max(lengths) // mult) * mult
    ids = torch.randint(2, vocab, (len(lengths), s), device="cuda")
    mask = torch.arange(s, device="cuda")[None, :] < torch.tensor(lengths, device="cuda")[:, None]
    return ids.masked_fill(~mask, pad), mask.long()


def keep_mask(lengths, t):
    """(B, t) bool on the device: position < each row's length (lengths: a host list)."""
    return torch.arange(t, device="cuda")[None] < torch.tensor(lengths, device="cuda")[:, None]


def _loguniform(rng, lo, hi, mult=1):
    return max(lo, min(hi, int(math.exp(rng.uniform(math.log(lo), math.log(hi)))) // mult * mult))


def _rope_tables(dh, positions, theta):
    """Rotary tables (rotate-half form) for positions 0 .. positions-1: cos and sin, (positions, dh) in bf16."""
    inv = 1.0 / theta ** (torch.arange(0, dh, 2, device="cuda").float() / dh)
    ang = torch.arange(positions, device="cuda").float()[:, None] * inv
    ang = torch.cat([ang, ang], -1)
    return ang.cos().to(torch.bfloat16), ang.sin().to(torch.bfloat16)


def _repeat_kv(x, n):
    """(B, kv_heads, T, dh) -> (B, kv_heads * n, T, dh), a copy, as HF's repeat_kv before SDPA with a mask."""
    b, h, t, dh = x.shape
    return x[:, :, None].expand(b, h, n, t, dh).reshape(b, h * n, t, dh)


class PreNormBlock(torch.nn.Module):
    """A pre-norm transformer block: fused qkv, scaled_dot_product_attention (a mask, boolean or additive, or
    none), a GELU MLP of `hidden` (4 d unless given). Shared by batch51.py, batch52_b.py, batch53_b.py,
    batch54_b.py, batch57_b.py and batch59.py, which each had a copy."""

    def __init__(self, d, heads, hidden=None):
        super().__init__()
        hidden = hidden or 4 * d
        self.h = heads
        self.n1, self.n2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.qkv, self.proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
        self.fc1, self.fc2 = torch.nn.Linear(d, hidden), torch.nn.Linear(hidden, d)

    def forward(self, x, mask=None):
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.n2(x))))


class TimeResBlock(torch.nn.Module):
    """A diffusion U-Net's residual block: group norm, SiLU, 3x3 convolution, the timestep embedding added
    per channel, again; a 1x1 convolution on the skip when the widths differ."""

    def __init__(self, cin, cout, temb):
        super().__init__()
        self.n1, self.c1 = torch.nn.GroupNorm(8, cin), torch.nn.Conv2d(cin, cout, 3, 1, 1)
        self.t = torch.nn.Linear(temb, cout)
        self.n2, self.c2 = torch.nn.GroupNorm(8, cout), torch.nn.Conv2d(cout, cout, 3, 1, 1)
        self.skip = torch.nn.Conv2d(cin, cout, 1) if cin != cout else torch.nn.Identity()

    def forward(self, x, te):
        silu = torch.nn.functional.silu
        h = self.c1(silu(self.n1(x))) + self.t(te)[:, :, None, None]
        return self.skip(x) + self.c2(silu(self.n2(h)))


def mlp(din, hidden, dout, layers=2, act=torch.nn.ReLU, norm=False):
    """Linear layers of width `hidden` with `act` between them (and a LayerNorm before each `act` when `norm`),
    `layers` Linear layers in all. Shared by batch57.py (SiLU by default there), batch58.py, batch59.py,
    batch60.py and batch60_b.py, which each had a copy."""
    mods, d = [], din
    for _ in range(layers - 1):
        mods += [torch.nn.Linear(d, hidden)] + ([torch.nn.LayerNorm(hidden)] if norm else []) + [act()]
        d = hidden
    mods.append(torch.nn.Linear(d, dout))
    return torch.nn.Sequential(*mods)


class BasicResBlock(torch.nn.Module):
    """A ResNet basic block: two 3x3 convolutions with batch norm and ReLU, strided by `stride`, the shortcut a
    strided 1x1 convolution with batch norm where the stride or the width changes. Batch files from the
    hundred-and-fourth on use it; eleven earlier ones (batch75_b.py to batch98.py) each keep the copy they were
    recorded with."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1, self.b1 = torch.nn.Conv2d(cin, cout, 3, stride, 1, bias=False), torch.nn.BatchNorm2d(cout)
        self.c2, self.b2 = torch.nn.Conv2d(cout, cout, 3, 1, 1, bias=False), torch.nn.BatchNorm2d(cout)
        self.sc = (torch.nn.Sequential(torch.nn.Conv2d(cin, cout, 1, stride, bias=False), torch.nn.BatchNorm2d(cout))
                   if stride != 1 or cin != cout else torch.nn.Identity())

    def forward(self, x):
        relu = torch.nn.functional.relu
        return relu(self.b2(self.c2(relu(self.b1(self.c1(x))))) + self.sc(x))


class CrossDecoderBlock(torch.nn.Module):
    """A pre-norm decoder block: causal self-attention, cross-attention over an encoder's output under its key
    mask (`mem_mask`, as scaled_dot_product_attention takes it), a GELU MLP of 4 d. Shared by batch97_b.py
    (video captioning) and batch102_b.py (program repair), which each had a copy (the same modules made in the
    same order, so the same parameters and ops as the copies they replace)."""

    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.n1, self.n2, self.n3 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.qkv, self.o1 = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
        self.q, self.kv, self.o2 = torch.nn.Linear(d, d), torch.nn.Linear(d, 2 * d), torch.nn.Linear(d, d)
        self.ff = mlp(d, 4 * d, d, act=torch.nn.GELU)

    def forward(self, x, mem, mem_mask):
        q, k, v = self.qkv(self.n1(x)).chunk(3, -1)
        x = x + self.o1(_mha(q, k, v, self.h, is_causal=True))
        k, v = self.kv(mem).chunk(2, -1)
        x = x + self.o2(_mha(self.q(self.n2(x)), k, v, self.h, attn_mask=mem_mask))
        return x + self.ff(self.n3(x))


def fftfreq(n, d=1.0):
    """torch.fft.fftfreq made on the device by arange (the sample frequencies of an n-point FFT): the CPU smoke
    run's device mapping does not reach fftfreq's device argument."""
    return torch.cat([torch.arange(0, (n - 1) // 2 + 1, device="cuda"), torch.arange(-(n // 2), 0, device="cuda")]
                     ).float() / (n * d)


def rfftfreq(n, d=1.0):
    """torch.fft.rfftfreq made on the device by arange."""
    return torch.arange(0, n // 2 + 1, device="cuda").float() / (n * d)


class SideUploads:
    """Inputs uploaded one item ahead from two reused pinned host buffers on a side stream: `upload(i, ...)` copies
    from buffer i % 2 once that buffer's previous upload has finished, and returns the device tensors and the event
    recorded after them (the consumer waits on it and record_stream's the tensors). Shared by the side-stream
    workloads of batch62.py to batch65_b.py, which each had a copy."""

    def __init__(self, host):
        self.host = host
        self.side = torch.cuda.Stream()
        self.done = [None, None]

    def upload(self, i, *spans):
        """Each span is a slice of the buffer, or n for its first n elements."""
        slot = i % 2
        if self.done[slot] is not None:
            self.done[slot].synchronize()
        with torch.cuda.stream(self.side):
            out = [self.host[slot][s if isinstance(s, slice) else slice(0, s)].to("cuda", non_blocking=True)
                   for s in spans]
            ev = torch.cuda.Event()
            ev.record(self.side)
        self.done[slot] = ev
        return (*out, ev)

    def ahead(self, plan, spans):
        """The one-ahead loop of the side-stream services: yields each item of `plan` with its device tensors,
        uploading item i + 1 (`upload(i + 1, *spans(plan[i + 1]))`) before item i is handed over and after the
        current stream waited on item i's upload (`ready`). `spans(item)` returns a tuple of `upload`'s spans. The
        caller deletes what it was given at the end of each step, as the loops written out did."""
        nxt = self.upload(0, *spans(plan[0]))
        for i, item in enumerate(plan):
            got = nxt
            if i + 1 < len(plan):
                nxt = self.upload(i + 1, *spans(plan[i + 1]))
            *tensors, ev = got
            self.ready(ev, *tensors)
            yield (item, *tensors)
            # The caller's `del` of the tensors at the end of its step frees them now, before the next upload,
            # as in the loop this replaces.
            del got, tensors

    @staticmethod
    def ready(ev, *tensors):
        """The consumer's side of `upload`: the current stream waits on its event, and each tensor is
        record_stream'ed on it so that its memory is not reused before this stream's work on it ends."""
        cur = torch.cuda.current_stream()
        cur.wait_event(ev)
        for t in tensors:
            t.record_stream(cur)

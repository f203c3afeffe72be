"""The hundred-and-seventeenth batch of held-out workloads for record.py, second half (see batch117.py): veterinary
medicine and companion animals, written in torch alone. A pet-wearable activity trace diffusion sampler (a 1-d U-Net
denoiser conditioned on the activity and the dog's size class, classifier-free guidance in one doubled batch,
sampling synthetic collar accelerometer, gyroscope and heart-rate traces by DDIM for classifier augmentation, drawn
batch sizes, lengths, step counts and guidance scales per request), a breed and body-condition photograph service (a
convolutional stem and a transformer over owner photographs of drawn resolutions, a 2-d position table sliced to the
grid, breed top-5 by topk, an ordinal body-condition score and a weight estimate), shelter infection-risk graph
network training (gated graph convolutions over the contact graphs of animal shelters of drawn sizes, messages summed
by index_add, per-animal infection and per-shelter outbreak heads, the shelter pooling by index_add) and clinic
triage policy training (an attention policy choosing the next waiting patient a round by Gumbel-max under masks, vet
availability kept by gather and scatter, an actor-critic with a learned value baseline).

Same conventions as the earlier batches: nothing downloaded, data drawn at random on the device (or in reused pinned
host buffers for the photograph service), `rng` the workload's random.Random for every shape, count and sampled
choice, sizes through `_smoke(real, small)`. No control flow reads a tensor's value; padding by masks, torch.where or
masked_fill; no boolean-mask indexing; results read back only at logging points or once per request.
breed_body_condition_serve uploads its photographs on a side stream (two reused pinned host buffers, one request
ahead, through workload_helpers.SideUploads.ahead); the other three are single-stream. The models run under bf16
autocast.
"""

import math

import torch

from batch_common import Batch
from workload_helpers import BasicResBlock, PreNormBlock, SideUploads, _sincos, keep_mask, mlp

_b = Batch()  # this half's workloads, and record.py's module object once register() has run
_workload, _smoke = _b.workload, _b.smoke
register = _b.register  # what record.py calls

_F = torch.nn.functional
_nn = torch.nn


# ---------------------------------------------------------------- pet-wearable activity trace diffusion sampler


class _TimeRes1d(_nn.Module):
    """Group norm, SiLU, a width-3 1-d convolution, the conditioning embedding added per channel, again; a 1x1
    convolution on the skip when the widths differ."""

    def __init__(self, cin, cout, temb):
        super().__init__()
        self.n1, self.c1 = _nn.GroupNorm(8, cin), _nn.Conv1d(cin, cout, 3, 1, 1)
        self.t = _nn.Linear(temb, cout)
        self.n2, self.c2 = _nn.GroupNorm(8, cout), _nn.Conv1d(cout, cout, 3, 1, 1)
        self.skip = _nn.Conv1d(cin, cout, 1) if cin != cout else _nn.Identity()

    def forward(self, x, te):
        h = self.c1(_F.silu(self.n1(x))) + self.t(te)[:, :, None]
        return self.skip(x) + self.c2(_F.silu(self.n2(h)))


class _Unet1d(_nn.Module):
    """A 1-d U-Net over the traces: one conditioned residual block a level, stride-2 convolutions down, nearest
    upsampling with skips up, a pre-norm transformer block at the lowest level; the timestep's sine features, the
    activity and size-class embeddings (the last row of each the null label) summed into the conditioning."""

    def __init__(self, c_in, widths, n_act, n_size, heads):
        super().__init__()
        te = 4 * widths[0]
        self.temb = mlp(widths[0], te, te, act=_nn.SiLU)
        self.act, self.size = _nn.Embedding(n_act + 1, te), _nn.Embedding(n_size + 1, te)
        self.inp = _nn.Conv1d(c_in, widths[0], 3, 1, 1)
        self.enc = _nn.ModuleList(_TimeRes1d(a, w, te) for a, w in zip([widths[0]] + widths[:-1], widths))
        self.down = _nn.ModuleList(_nn.Conv1d(w, w, 3, 2, 1) for w in widths[:-1])
        self.mid = PreNormBlock(widths[-1], heads)
        self.dec = _nn.ModuleList(_TimeRes1d(a + w, w, te) for a, w in zip(widths[:0:-1], widths[-2::-1]))
        self.out = _nn.Sequential(_nn.GroupNorm(8, widths[0]), _nn.SiLU(), _nn.Conv1d(widths[0], c_in, 3, 1, 1))
        self.w0 = widths[0]

    def forward(self, x, t, act, size):
        te = self.temb(_sincos(t, self.w0)) + self.act(act) + self.size(size)
        h, skips = self.inp(x), []
        for i, blk in enumerate(self.enc):
            h = blk(h, te)
            if i < len(self.down):
                skips.append(h)
                h = self.down[i](h)
        h = self.mid(h.transpose(1, 2)).transpose(1, 2)
        for blk, skip in zip(self.dec, skips[::-1]):
            h = blk(torch.cat([_F.interpolate(h, scale_factor=2, mode="nearest"), skip], 1), te)
        return self.out(h)


@_workload("pet-wearable activity trace diffusion sampling (random init, a conditioned 1-d U-Net with classifier-free guidance): 77-82 requests (drawn) of 4-32 synthetic collar traces (drawn) of 256-1,024 samples at 25 Hz (drawn per request, a multiple of 64) with 7 channels (3-axis accelerometer, 3-axis gyroscope, heart rate), an activity (of 8: sleeping, resting, walking, trotting, playing, scratching, eating, head shaking) and a size class (of 4) drawn per trace; a 1-d U-Net of widths 64/128/256 (one conditioned residual block a level, stride-2 convolutions, nearest upsampling with skips, a pre-norm transformer block of 4 heads at the lowest level), timestep, activity and size embeddings summed, the null labels in the second half of one doubled batch; DDIM (eta 0) over a 1,000-step cosine schedule with 10-40 steps and a guidance scale of 1.5-5 (drawn per request) under bf16 autocast; per trace the mean acceleration magnitude, the mean heart-rate channel and the share of samples above a shaking threshold (by torch.where) read back once per request")
def wearable_activity_ddim_sample(rng):
    c_in, n_act, n_size = 7, 8, 4
    widths, heads = _smoke([64, 128, 256], [16, 16]), _smoke(4, 2)
    model = _Unet1d(c_in, widths, n_act, n_size, heads).cuda().eval()
    model.requires_grad_(False)
    n_train = 1000
    s_ = torch.arange(n_train + 1, dtype=torch.float64) / n_train
    abar = torch.cos((s_ + 0.008) / 1.008 * math.pi / 2) ** 2
    abar = (abar[1:] / abar[0]).clamp(1e-5, 1.0).tolist()

    nreq = rng.randint(_smoke(77, 2), _smoke(82, 3))
    for _ in range(nreq):
        b = rng.randint(_smoke(4, 1), _smoke(32, 2))
        t_len = rng.randint(_smoke(256, 64) // 64, _smoke(1024, 128) // 64) * 64
        n_steps, scale = rng.randint(_smoke(10, 2), _smoke(40, 3)), rng.uniform(1.5, 5.0)
        acts = [rng.randrange(n_act) for _ in range(b)]
        sizes = [rng.randrange(n_size) for _ in range(b)]
        ts = [int(round(n_train - 1 - i * (n_train - 1) / n_steps)) for i in range(n_steps)]
        with torch.no_grad():
            act = torch.tensor(acts + [n_act] * b, device="cuda")
            size = torch.tensor(sizes + [n_size] * b, device="cuda")
            x = torch.randn(b, c_in, t_len, device="cuda")
            for i, t in enumerate(ts):
                a_t = abar[t]
                a_prev = abar[ts[i + 1]] if i + 1 < len(ts) else 1.0
                tt = torch.full((2 * b,), t, device="cuda")
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    eps = model(torch.cat([x, x]), tt, act, size).float()
                e_c, e_u = eps.chunk(2)
                e = e_u + scale * (e_c - e_u)
                x0 = ((x - math.sqrt(1 - a_t) * e) / math.sqrt(a_t)).clamp(-4.0, 4.0)
                x = math.sqrt(a_prev) * x0 + math.sqrt(1 - a_prev) * e
            mag = x[:, :3].norm(dim=1)
            shake = torch.where(mag > 2.5, 1.0, 0.0).mean(-1)
            out = torch.cat([mag.mean(-1), x[:, 6].mean(-1), shake])
        out.tolist()
        del act, size, x, tt, eps, e_c, e_u, e, x0, mag, shake, out


# ---------------------------------------------------------------- breed and body-condition photograph service


class _BreedNet(_nn.Module):
    """A 4x4 stride-4 convolutional stem and two stride-2 residual blocks (1/16 resolution), a learned 2-d position
    table sliced to the grid, a class token and pre-norm blocks; breed logits, 8 cumulative body-condition logits and
    a log weight from the class token."""

    def __init__(self, widths, d, heads, layers, max_grid, n_breed, n_species):
        super().__init__()
        self.stem = _nn.Sequential(_nn.Conv2d(3, widths[0], 4, 4, bias=False), _nn.BatchNorm2d(widths[0]), _nn.ReLU())
        self.down = _nn.Sequential(BasicResBlock(widths[0], widths[1], 2), BasicResBlock(widths[1], d, 2))
        self.pos = _nn.Parameter(torch.randn(max_grid, max_grid, d) * 0.02)
        self.cls, self.species = _nn.Parameter(torch.zeros(1, 1, d)), _nn.Embedding(n_species, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.norm = _nn.LayerNorm(d)
        self.breed, self.bcs, self.weight = _nn.Linear(d, n_breed), _nn.Linear(d, 8), _nn.Linear(d, 1)

    def forward(self, x, species):
        t = self.down(self.stem(x))
        b, d, gh, gw = t.shape
        t = t.flatten(2).transpose(1, 2) + self.pos[:gh, :gw].reshape(1, gh * gw, d)
        z = torch.cat([self.cls.expand(b, -1, -1) + self.species(species)[:, None], t], 1)
        for blk in self.blocks:
            z = blk(z)
        c = self.norm(z[:, 0])
        return self.breed(c).float(), self.bcs(c).float(), self.weight(c)[:, 0].float()


@_workload("breed and body-condition photograph serving (random init, a convolutional stem and a transformer): 1,550-1,600 requests (drawn) of 1-8 owner photographs (drawn) of a dog or cat (species drawn per photo) at 224-384 px square (drawn per request, a multiple of 32), uint8 RGB uploaded on a side stream from two reused pinned host buffers (filled once, sized for 8 photos of 384^2) one request ahead (one span, through SideUploads.ahead), normalised on the device in channels-last; a 4x4 stride-4 stem of 64 and stride-2 residual blocks of 128 and 256 (1/16 resolution), a learned 24 x 24 position table sliced to the grid, a class token with a species embedding, 4 pre-norm blocks (width 256, 8 heads) under bf16 autocast; 180 breeds with the top-5 breeds and probabilities by topk, a 1-9 body-condition score as 1 plus the sum of 8 cumulative sigmoids, an overweight flag (score above 6) by torch.where and a weight estimate from a log-weight head; each request's results read back once")
def breed_body_condition_serve(rng):
    widths, d, heads, layers = _smoke([64, 128], [8, 16]), _smoke(256, 16), _smoke(8, 2), _smoke(4, 1)
    lo, hi, max_n, n_breed = _smoke(224, 32), _smoke(384, 64), _smoke(8, 2), 180
    model = _BreedNet(widths, d, heads, layers, hi // 16, n_breed, 2).cuda().eval()
    model = model.to(memory_format=torch.channels_last)
    model.requires_grad_(False)
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1) * 255.0
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1) * 255.0
    gen = torch.Generator().manual_seed(rng.randint(0, 2**31))
    host = [torch.randint(0, 256, (max_n * 3 * hi * hi,), dtype=torch.uint8, generator=gen).pin_memory()
            for _ in range(2)]
    up = SideUploads(host)

    nreq = rng.randint(_smoke(1550, 3), _smoke(1600, 4))
    plan = []
    for _ in range(nreq):
        n = rng.randint(1, max_n)
        plan.append((n, rng.randint(lo // 32, hi // 32) * 32, [rng.randrange(2) for _ in range(n)]))

    for (n, r, spec), raw in up.ahead(plan, lambda p: (p[0] * 3 * p[1] * p[1],)):
        with torch.no_grad():
            x = ((raw.view(n, 3, r, r).float() - mean) / std).contiguous(memory_format=torch.channels_last)
            species = torch.tensor(spec, device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                breed, bcs, logw = model(x, species)
            top_p, top_i = breed.softmax(-1).topk(5, -1)
            score = 1.0 + torch.sigmoid(bcs).sum(-1)
            over = torch.where(score > 6.0, 1.0, 0.0)
            out = torch.cat([top_p.flatten(), top_i.float().flatten(), score, over, logw.exp()])
        out.tolist()
        del raw, x, species, breed, bcs, logw, top_p, top_i, score, over, out


# ---------------------------------------------------------------- shelter infection-risk graph network


class _GatedGcn(_nn.Module):
    """A gated graph convolution: edge gates from both endpoints and the edge state, gated sender messages summed
    into the receivers by index_add and normalised by the summed gates; residual node and edge updates with
    LayerNorm."""

    def __init__(self, d):
        super().__init__()
        self.a, self.b, self.c = _nn.Linear(d, d), _nn.Linear(d, d), _nn.Linear(d, d)
        self.u, self.v = _nn.Linear(d, d), _nn.Linear(d, d)
        self.nh, self.ne = _nn.LayerNorm(d), _nn.LayerNorm(d)

    def forward(self, h, e, snd, rcv):
        e_new = self.a(h).index_select(0, rcv) + self.b(h).index_select(0, snd) + self.c(e)
        gate = torch.sigmoid(e_new)
        msg = gate * self.v(h).index_select(0, snd)
        num = msg.new_zeros(h.shape[0], msg.shape[1]).index_add_(0, rcv, msg)
        den = gate.new_zeros(h.shape[0], gate.shape[1]).index_add_(0, rcv, gate)
        agg = num / (den + 1e-6)
        h = h + _F.relu(self.nh(self.u(h) + agg))
        e = e + _F.relu(self.ne(e_new))
        return h, e


@_workload("shelter infection-risk graph network training (random init, gated graph convolutions): 4-16 animal shelters a step (drawn), each of 64-384 animals (drawn per shelter; shelters beyond 3,072 animals a step dropped), 14 numeric features per animal (age, days in shelter, vaccination dates, temperature, cough and nasal-discharge scores, ...) with species (of 3) and vaccination status (of 4) embeddings drawn on the device; 8 contacts per animal within its shelter (drawn on the device from each shelter's size and offset), each with a contact kind (of 4: shared air space, adjacent kennel, shared handler, play group) embedding and an exposure duration; 6 gated graph-convolution layers (width 192) with gated messages summed by index_add (the destination made from the message's dtype); a per-animal 7-day infection head by BCE (about 12 % positive, a positive weight of 4) and a per-shelter outbreak head on the mean of its animals' states pooled by index_add; AdamW, clipping, bf16 autocast, 380 steps; the losses read back every 20 steps and every 95 steps a no-grad evaluation of 16 shelters of 384 animals with the infection accuracy and mean outbreak probability read back")
def shelter_infection_gnn_train(rng):
    n_num, n_spec, n_vacc, n_kind, k = 14, 3, 4, 4, _smoke(8, 3)
    d, layers = _smoke(192, 16), _smoke(6, 2)
    lo, hi, budget = _smoke(64, 4), _smoke(384, 8), _smoke(3072, 24)

    class Net(_nn.Module):
        def __init__(self):
            super().__init__()
            self.node_in = mlp(n_num, d, d, act=_nn.SiLU)
            self.spec, self.vacc = _nn.Embedding(n_spec, d), _nn.Embedding(n_vacc, d)
            self.kind, self.edge_in = _nn.Embedding(n_kind, d), _nn.Linear(1, d)
            self.layers = _nn.ModuleList(_GatedGcn(d) for _ in range(layers))
            self.inf, self.outbreak = mlp(d, d, 1, act=_nn.SiLU), mlp(d, d, 1, act=_nn.SiLU)

        def forward(self, num, spec, vacc, kind, dur, snd, rcv, shelter, n_shel, inv_cnt):
            h = self.node_in(num) + self.spec(spec) + self.vacc(vacc)
            e = self.kind(kind) + self.edge_in(dur[:, None])
            for layer in self.layers:
                h, e = layer(h, e, snd, rcv)
            pooled = h.new_zeros(n_shel, h.shape[1]).index_add_(0, shelter, h) * inv_cnt[:, None].to(h.dtype)
            return self.inf(h)[:, 0].float(), self.outbreak(pooled)[:, 0].float()

    model = Net().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)

    def shelters(sizes):
        n, s = sum(sizes), len(sizes)
        offs = [sum(sizes[:i]) for i in range(s)]
        size_n = torch.tensor([z for z in sizes for _ in range(z)], device="cuda", dtype=torch.float32)
        off_n = torch.tensor([o for o, z in zip(offs, sizes) for _ in range(z)], device="cuda")
        shelter = torch.tensor([i for i, z in enumerate(sizes) for _ in range(z)], device="cuda")
        inv_cnt = 1.0 / torch.tensor(sizes, device="cuda", dtype=torch.float32)
        rcv = torch.arange(n, device="cuda").repeat_interleave(k)
        snd = ((torch.rand(n, k, device="cuda") * size_n[:, None]).long().clamp(max=max(sizes) - 1)
               + off_n[:, None]).flatten().clamp(max=n - 1)
        num = torch.randn(n, n_num, device="cuda")
        spec = torch.randint(0, n_spec, (n,), device="cuda")
        vacc = torch.randint(0, n_vacc, (n,), device="cuda")
        kind = torch.randint(0, n_kind, (n * k,), device="cuda")
        dur = torch.rand(n * k, device="cuda")
        y = (torch.rand(n, device="cuda") < 0.12).float()
        y_out = (torch.rand(s, device="cuda") < 0.3).float()
        return (num, spec, vacc, kind, dur, snd, rcv, shelter, s, inv_cnt), y, y_out

    steps = _smoke(380, 3)
    for step in range(steps):
        model.train()
        s = rng.randint(_smoke(4, 2), _smoke(16, 3))
        sizes = [rng.randint(lo, hi) for _ in range(s)]
        while sum(sizes) > budget:
            sizes.pop()
        inp, y, y_out = shelters(sizes)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            p_inf, p_out = model(*inp)
        l_inf = _F.binary_cross_entropy_with_logits(p_inf, y, pos_weight=torch.tensor(4.0, device="cuda"))
        l_out = _F.binary_cross_entropy_with_logits(p_out, y_out)
        loss = l_inf + 0.5 * l_out
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0:
            torch.stack([l_inf.detach(), l_out.detach()]).tolist()
        del inp, y, y_out, p_inf, p_out, l_inf, l_out, loss
        if (step + 1) % _smoke(95, 2) == 0:
            model.eval()
            with torch.no_grad():
                inp, y, y_out = shelters([hi] * _smoke(16, 2))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    p_inf, p_out = model(*inp)
                out = torch.stack([((p_inf > 0).float() == y).float().mean(), torch.sigmoid(p_out).mean()])
            out.tolist()
            del inp, y, y_out, p_inf, p_out, out


# ---------------------------------------------------------------- clinic triage policy (actor-critic)


class _TriagePolicy(_nn.Module):
    """Patient features (vitals, arrival and service times) with triage level, presenting complaint and species
    embeddings, pre-norm blocks under a key mask; a query from the pooled queue and the clinic state (the clock, the
    vets' free times) scoring the waiting patients; a value head on the pooled queue."""

    def __init__(self, n_num, n_level, n_comp, d, heads, layers, n_vet):
        super().__init__()
        self.inp = _nn.Linear(n_num, d)
        self.level, self.comp, self.spec = _nn.Embedding(n_level, d), _nn.Embedding(n_comp, d), _nn.Embedding(3, d)
        self.blocks = _nn.ModuleList(PreNormBlock(d, heads) for _ in range(layers))
        self.key = _nn.Linear(d, d)
        self.query = mlp(d + n_vet + 2, d, d, act=_nn.GELU)
        self.value = mlp(d, d, 1, act=_nn.GELU)
        self.d = d

    def encode(self, num, level, comp, spec, keep):
        x = self.inp(num) + self.level(level) + self.comp(comp) + self.spec(spec)
        for blk in self.blocks:
            x = blk(x, mask=keep[:, None, None, :])
        w = keep[..., None].to(x.dtype)
        pooled = (x * w).sum(1) / w.sum(1)
        return self.key(x), pooled, self.value(pooled)[:, 0].float()

    def scores(self, keys, pooled, state):
        q = self.query(torch.cat([pooled, state.to(pooled.dtype)], -1))
        return (keys @ q[:, :, None])[..., 0].float() / math.sqrt(self.d)


def _triage_rollout(model, inst, greedy, n, m, max_vet):
    """Seats n patients, one a round: the earliest-free of the m vets (argmin; the max_vet - m unused ones sit far
    in the future) takes the chosen waiting patient (Gumbel-max,
    or argmax when greedy), rounds with nobody left waiting count nothing; urgency-weighted waits summed."""
    num, level, comp, spec, keep, arrival, service, weight = inst
    keys, pooled, value = model.encode(num, level, comp, spec, keep)
    b = num.shape[0]
    vet_free = torch.cat([torch.zeros(b, m, device="cuda"),
                          torch.full((b, max_vet - m), 100.0, device="cuda")], 1)
    waiting = keep.clone()
    logp = torch.zeros(b, device="cuda")
    ent = torch.zeros((), device="cuda")
    cost = torch.zeros(b, device="cuda")
    for _ in range(n):
        clock = vet_free.min(-1).values
        state = torch.cat([(vet_free / 8.0).clamp(max=2.0), clock[:, None] / 8.0,
                           waiting.float().mean(-1, keepdim=True)], -1)
        logit = model.scores(keys, pooled, state).masked_fill(~waiting, -1e4)
        lp = logit.log_softmax(-1)
        active = waiting.any(-1).float()
        if greedy:
            pick = logit.argmax(-1)
        else:
            u = torch.rand_like(logit).clamp(1e-6, 1 - 1e-6)
            pick = (logit.detach() - torch.log(-torch.log(u))).argmax(-1)
        logp = logp + lp.gather(1, pick[:, None])[:, 0] * active
        ent = ent - ((lp.exp() * lp).sum(-1) * active).mean()
        vet = vet_free.argmin(-1, keepdim=True)
        arr = arrival.gather(1, pick[:, None])
        start = torch.maximum(vet_free.gather(1, vet), arr)
        wait = (start - arr)[:, 0] * weight.gather(1, pick[:, None])[:, 0]
        cost = cost + wait * active
        done = start + service.gather(1, pick[:, None])
        vet_free = vet_free.scatter(1, vet, torch.where(active[:, None] > 0, done, vet_free.gather(1, vet)))
        waiting = waiting.scatter(1, pick[:, None], torch.zeros_like(pick[:, None], dtype=torch.bool))
    return logp, ent / n, cost, value


@_workload("veterinary clinic triage policy training (random init, an attention policy by actor-critic): 64-256 clinic sessions a step (drawn), each with a queue of 8-32 patient slots (drawn per step, each session's own count drawn from 6 up, the rest masked) and 2-5 vets (drawn per step); per patient 8 numeric features (heart and respiratory rate, temperature, pain score, arrival time over a 4-hour window, expected service time 0.1-0.75 h, age, weight), a triage level (of 5, waits weighted 1-16), a presenting complaint (of 40) and a species (of 3) drawn on the device; 3 pre-norm blocks (width 128, 4 heads) under the key mask; each round a query from the pooled queue, the vets' free times and the clock scores the waiting patients, one picked by Gumbel-max under the waiting mask and seated with the earliest-free vet (argmin, gather and scatter), rounds with nobody waiting masked out; REINFORCE against a learned value baseline (a value head regressed on the urgency-weighted wait), an entropy bonus; AdamW, clipping, bf16 autocast, 140 steps; the weighted wait read back every 10 steps and every 28 steps a no-grad greedy rollout of 128 sessions of 32 patients and 3 vets with the mean weighted wait read back")
def clinic_triage_policy_train(rng):
    n_num, n_level, n_comp = 8, 5, 40
    d, heads, layers = _smoke(128, 16), _smoke(4, 2), _smoke(3, 1)
    max_vet = 5
    model = _TriagePolicy(n_num, n_level, n_comp, d, heads, layers, max_vet).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    level_w = torch.tensor([16.0, 8.0, 4.0, 2.0, 1.0], device="cuda")

    def sessions(counts, n, m):
        b = len(counts)
        keep = keep_mask(counts, n)
        arrival = torch.rand(b, n, device="cuda") * 4.0
        service = torch.rand(b, n, device="cuda") * 0.65 + 0.1
        level = torch.randint(0, n_level, (b, n), device="cuda")
        comp = torch.randint(0, n_comp, (b, n), device="cuda")
        spec = torch.randint(0, 3, (b, n), device="cuda")
        num = torch.cat([torch.randn(b, n, 6, device="cuda"), arrival[..., None] / 4.0, service[..., None]], -1)
        return num * keep[..., None], level, comp, spec, keep, arrival, service, level_w[level]

    steps = _smoke(140, 3)
    for step in range(steps):
        model.train()
        b, n, m = rng.randint(_smoke(64, 2), _smoke(256, 4)), rng.randint(_smoke(8, 6), _smoke(32, 8)), \
            rng.randint(2, max_vet)
        inst = sessions([rng.randint(6, n) for _ in range(b)], n, m)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logp, ent, cost, value = _triage_rollout(model, inst, False, n, m, max_vet)
        target = cost / 10.0
        adv = (target - value.detach())
        adv = adv / (adv.std() + 1e-6)
        loss = (adv * logp).mean() + 0.5 * _F.mse_loss(value, target) - 0.01 * ent
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            cost.mean().item()
        del inst, logp, ent, cost, value, target, adv, loss
        if (step + 1) % _smoke(28, 2) == 0:
            model.eval()
            with torch.no_grad():
                nb, nq = _smoke(128, 3), _smoke(32, 8)
                inst = sessions([nq] * nb, nq, 3)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    _, _, cost, _ = _triage_rollout(model, inst, True, nq, 3, max_vet)
                out = cost.mean()
            out.item()
            del inst, cost, out

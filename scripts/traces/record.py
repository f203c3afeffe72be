"""Record the device-allocation trace of one real PyTorch workload.

Runs on a GPU machine (PyTorch with CUDA; transformers, timm and peft for
some workloads). Models are built from configs with random weights: nothing
is downloaded. The trace is PyTorch's own allocation history
(`torch.cuda.memory._record_memory_history`, no stacks), reduced to what an
allocator sees, in the format of `traces/README.md`:

    a,<id>,<size requested>,<stream index>
    f,<id>                       (free completed)

Usage:
    python3 record.py --list
    python3 record.py WORKLOAD OUTDIR
writes OUTDIR/WORKLOAD.trace.csv.gz and OUTDIR/WORKLOAD.live.json (the live
run's memory_stats under PyTorch's native allocator, the one recording).
"""

import gzip
import json
import os
import random
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the workload modules, next to this file
from expanse_trace import trace_lines  # noqa: E402
from stop_early import run_until_term  # noqa: E402

WORKLOADS = {}

# RECORD_SMOKE=1 (set by scripts/traces/smoke_cpu.py for a CPU smoke run):
# the workloads that call `_smoke` run a few steps at small sizes. The GPU
# recording never sets it, so `_smoke(real, small)` is `real` there.
SMOKE = os.environ.get("RECORD_SMOKE") == "1"


def _smoke(real, small):
    return small if SMOKE else real


def workload(family):
    def wrap(fn):
        WORKLOADS[fn.__name__] = (family, fn)
        return fn

    return wrap


# The workloads' shared helpers (workload_helpers.py, workload_models.py), imported back so that they stay
# reachable as record.<name>: batch16-18 use `_b.rec._rope`, batch_common.py `rec._loguniform`, record_dist.py
# `from record import _train_lm, llama_config`.
from workload_helpers import (  # noqa: E402
    llama_config, randint, _generate_exactly, _generate, _train_lm, _train_vision, _posenc, _square_distance,
    _gather_points, _farthest_points, _ball_query, _mha, _rope, _llama_layers, _sincos, _padded_ids, _loguniform,
)
from workload_models import (  # noqa: E402
    _ResBlock, _Attn, _UNet, _HifiResBlock, _HifiGenerator, _VaeResBlock, _VaeAttn, _Rdb, _Rrdb, _RrdbNet,
    _GptBlock, _FftBlock, _VarPredictor, _FastSpeech2,
)

__all__ = ["WORKLOADS", "SMOKE", "workload", "main", "write_trace", "reduce_trace"] + [
    "llama_config", "randint", "_generate_exactly", "_generate", "_train_lm", "_train_vision", "_posenc",
    "_square_distance", "_gather_points", "_farthest_points", "_ball_query", "_mha", "_rope", "_llama_layers",
    "_sincos", "_padded_ids", "_loguniform", "_ResBlock", "_Attn", "_UNet", "_HifiResBlock", "_HifiGenerator",
    "_VaeResBlock", "_VaeAttn", "_Rdb", "_Rrdb", "_RrdbNet", "_GptBlock", "_FftBlock", "_VarPredictor",
    "_FastSpeech2",
]


# ----------------------------------------------------------------- recording


def reduce_trace(snapshot):
    """Alloc and free-completed entries of device 0, as trace lines, and
    the number of streams (python/expanse_trace.py, which users run too)."""
    lines, streams, _ = trace_lines(snapshot["device_traces"][0])
    return lines, streams


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--list":
        for name, (family, _) in WORKLOADS.items():
            print(f"{name}\t{family}")
        return
    name, outdir = sys.argv[1], sys.argv[2]
    # NAME@SEED: the same workload with other random draws.
    base, _, seed = name.partition("@")
    family, fn = WORKLOADS[base]
    rng = random.Random(f"expanse-{base}" + (f"-{seed}" if seed else ""))
    torch.manual_seed(0)
    torch.cuda.init()
    torch.cuda.memory._record_memory_history(enabled="all", context=None, stacks="python", max_entries=50_000_000)
    t0 = time.time()
    # A SIGTERM (the recording step's time limit) stops the workload and the trace so far is written.
    stopped_after = run_until_term(fn, rng)
    torch.cuda.synchronize()
    seconds = time.time() - t0
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    write_trace(name.replace("@", "_s"), f"{name}: {family}", family, "scripts/traces/record.py", snap, seconds, outdir,
                stopped_after)


def write_trace(name, title, family, script, snap, seconds, outdir, stopped_after=None):
    """OUTDIR/NAME.trace.csv.gz from a memory-history snapshot, and
    OUTDIR/NAME.live.json with this process's memory_stats. `stopped_after`:
    the seconds after which a SIGTERM stopped the workload (stop_early.py), or
    None if it ran to its end; a stopped trace says so in its header and in
    live.json (`stopped_after_s`). The trace is written to a temporary name
    and renamed, so a half-written file is never taken for a trace."""
    lines, nstreams = reduce_trace(snap)
    header = [
        f"# {title}",
        f"# recorded with PyTorch {torch.__version__} on {torch.cuda.get_device_name()} by {script}",
    ]
    if stopped_after is not None:
        header.append(f"# stopped after {stopped_after} s by the recording's time limit: the workload cut short")
    header.append("# op,id,size,stream : a=alloc (id, bytes requested, stream index), f=free (id)")
    path = f"{outdir}/{name}.trace.csv.gz"
    with gzip.open(path + ".part", "wt", compresslevel=9) as f:
        f.write("\n".join(header + lines) + "\n")
    os.replace(path + ".part", path)
    stats = torch.cuda.memory_stats()
    live = {
        "workload": name,
        "family": family,
        "events": len(lines),
        "streams": nstreams,
        "seconds": round(seconds, 2),
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(),
        "memory_stats": {k: v for k, v in stats.items() if k.endswith(".all.peak") or k.startswith("num_")},
    }
    if stopped_after is not None:
        live["stopped_after_s"] = stopped_after
    with open(f"{outdir}/{name}.live.json", "w") as f:
        json.dump(live, f, indent=1, sort_keys=True)
    stopped = f" (stopped after {stopped_after} s)" if stopped_after is not None else ""
    peak = stats["reserved_bytes.all.peak"]
    print(f"{name}: {len(lines)} events, {nstreams} streams, {seconds:.1f} s, peak reserved {peak}{stopped}")

# Every workload lives in a batch module of its own (the first corpus and each held-out recording, in the order
# they were recorded: batch01_corpus.py ... batch12_fifteenth_b.py, then batch16.py to batch47.py (the
# longest split in two, or written in two: batch16_b.py, and batch18_b.py to batch47_b.py but batch19's);
# their shared plumbing in batch_common.py); each adds its workloads to WORKLOADS through this module object,
# in this order, so that --list and WORKLOADS keep the recording order. Registered here by hand, not found by
# name: a batch a helper is still writing must not be imported by a recording run.
import batch01_corpus  # noqa: E402
import batch02_working_set  # noqa: E402
import batch03_second  # noqa: E402
import batch04_third  # noqa: E402
import batch05_fourth_a  # noqa: E402
import batch05_fourth_b  # noqa: E402
import batch06_ninth  # noqa: E402
import batch07_tenth_a  # noqa: E402
import batch07_tenth_b  # noqa: E402
import batch08_eleventh  # noqa: E402
import batch09_twelfth  # noqa: E402
import batch10_thirteenth  # noqa: E402
import batch11_fourteenth_a  # noqa: E402
import batch11_fourteenth_b  # noqa: E402
import batch12_fifteenth_a  # noqa: E402
import batch12_fifteenth_b  # noqa: E402
import batch16  # noqa: E402
import batch16_b  # noqa: E402
import batch17  # noqa: E402
import batch18  # noqa: E402
import batch18_b  # noqa: E402
import batch19  # noqa: E402
import batch20  # noqa: E402
import batch20_b  # noqa: E402
import batch21  # noqa: E402
import batch21_b  # noqa: E402
import batch22  # noqa: E402
import batch22_b  # noqa: E402
import batch23  # noqa: E402
import batch23_b  # noqa: E402
import batch24  # noqa: E402
import batch24_b  # noqa: E402
import batch25  # noqa: E402
import batch25_b  # noqa: E402
import batch26  # noqa: E402
import batch26_b  # noqa: E402
import batch27  # noqa: E402
import batch27_b  # noqa: E402
import batch28  # noqa: E402
import batch28_b  # noqa: E402
import batch29  # noqa: E402
import batch29_b  # noqa: E402
import batch30  # noqa: E402
import batch30_b  # noqa: E402
import batch31  # noqa: E402
import batch31_b  # noqa: E402
import batch32  # noqa: E402
import batch32_b  # noqa: E402
import batch33  # noqa: E402
import batch33_b  # noqa: E402
import batch34  # noqa: E402
import batch34_b  # noqa: E402
import batch35  # noqa: E402
import batch35_b  # noqa: E402
import batch36  # noqa: E402
import batch36_b  # noqa: E402
import batch37  # noqa: E402
import batch37_b  # noqa: E402
import batch38  # noqa: E402
import batch38_b  # noqa: E402
import batch39  # noqa: E402
import batch39_b  # noqa: E402
import batch40  # noqa: E402
import batch40_b  # noqa: E402
import batch41  # noqa: E402
import batch41_b  # noqa: E402
import batch42  # noqa: E402
import batch42_b  # noqa: E402
import batch43  # noqa: E402
import batch43_b  # noqa: E402
import batch44  # noqa: E402
import batch44_b  # noqa: E402
import batch45  # noqa: E402
import batch45_b  # noqa: E402
import batch46  # noqa: E402
import batch46_b  # noqa: E402
import batch47  # noqa: E402
import batch47_b  # noqa: E402
import batch48  # noqa: E402
import batch48_b  # noqa: E402
import batch49  # noqa: E402
import batch49_b  # noqa: E402
import batch50  # noqa: E402
import batch50_b  # noqa: E402
import batch51  # noqa: E402
import batch51_b  # noqa: E402
import batch52  # noqa: E402
import batch52_b  # noqa: E402
import batch53  # noqa: E402
import batch53_b  # noqa: E402
import batch54  # noqa: E402
import batch54_b  # noqa: E402
import batch55  # noqa: E402
import batch55_b  # noqa: E402
import batch56  # noqa: E402
import batch56_b  # noqa: E402
import batch57  # noqa: E402
import batch57_b  # noqa: E402
import batch58  # noqa: E402
import batch58_b  # noqa: E402
import batch59  # noqa: E402
import batch59_b  # noqa: E402
import batch60  # noqa: E402
import batch60_b  # noqa: E402
import batch61  # noqa: E402
import batch61_b  # noqa: E402
import batch62  # noqa: E402
import batch62_b  # noqa: E402
import batch63  # noqa: E402
import batch63_b  # noqa: E402
import batch64  # noqa: E402
import batch64_b  # noqa: E402
import batch65  # noqa: E402
import batch65_b  # noqa: E402
import batch66  # noqa: E402
import batch66_b  # noqa: E402
import batch67  # noqa: E402
import batch67_b  # noqa: E402
import batch68  # noqa: E402
import batch68_b  # noqa: E402
import batch69  # noqa: E402
import batch69_b  # noqa: E402
import batch70  # noqa: E402
import batch70_b  # noqa: E402
import batch71  # noqa: E402
import batch71_b  # noqa: E402
import batch72  # noqa: E402
import batch72_b  # noqa: E402
import batch73  # noqa: E402
import batch73_b  # noqa: E402
import batch74  # noqa: E402
import batch74_b  # noqa: E402
import batch75  # noqa: E402
import batch75_b  # noqa: E402
import batch76  # noqa: E402
import batch76_b  # noqa: E402
import batch77  # noqa: E402
import batch77_b  # noqa: E402
import batch78  # noqa: E402
import batch78_b  # noqa: E402
import batch79  # noqa: E402
import batch79_b  # noqa: E402
import batch80  # noqa: E402
import batch80_b  # noqa: E402
import batch81  # noqa: E402
import batch81_b  # noqa: E402
import batch82  # noqa: E402
import batch82_b  # noqa: E402
import batch83  # noqa: E402
import batch83_b  # noqa: E402
import batch84  # noqa: E402
import batch84_b  # noqa: E402
import batch85  # noqa: E402
import batch85_b  # noqa: E402
import batch86  # noqa: E402
import batch86_b  # noqa: E402
import batch87  # noqa: E402
import batch87_b  # noqa: E402
import batch88  # noqa: E402
import batch88_b  # noqa: E402
import batch89  # noqa: E402
import batch89_b  # noqa: E402
import batch90  # noqa: E402
import batch90_b  # noqa: E402
import batch91  # noqa: E402
import batch91_b  # noqa: E402
import batch92  # noqa: E402
import batch92_b  # noqa: E402
import batch93  # noqa: E402
import batch93_b  # noqa: E402
import batch94  # noqa: E402
import batch94_b  # noqa: E402
import batch95  # noqa: E402
import batch95_b  # noqa: E402
import batch96  # noqa: E402
import batch96_b  # noqa: E402
import batch97  # noqa: E402
import batch97_b  # noqa: E402
import batch98  # noqa: E402
import batch98_b  # noqa: E402
import batch99  # noqa: E402
import batch99_b  # noqa: E402
import batch100  # noqa: E402
import batch100_b  # noqa: E402
import batch101  # noqa: E402
import batch101_b  # noqa: E402
import batch102  # noqa: E402
import batch102_b  # noqa: E402
import batch103  # noqa: E402
import batch103_b  # noqa: E402
import batch104  # noqa: E402
import batch104_b  # noqa: E402
import batch105  # noqa: E402
import batch105_b  # noqa: E402
import batch106  # noqa: E402
import batch106_b  # noqa: E402
import batch107  # noqa: E402
import batch107_b  # noqa: E402
import batch108  # noqa: E402
import batch108_b  # noqa: E402
import batch109  # noqa: E402
import batch109_b  # noqa: E402
import batch110  # noqa: E402
import batch110_b  # noqa: E402
import batch111  # noqa: E402
import batch111_b  # noqa: E402
import batch112  # noqa: E402
import batch112_b  # noqa: E402
import batch113  # noqa: E402
import batch113_b  # noqa: E402
import batch114  # noqa: E402
import batch114_b  # noqa: E402
import batch115  # noqa: E402
import batch115_b  # noqa: E402
import batch116  # noqa: E402
import batch116_b  # noqa: E402
import batch117  # noqa: E402
import batch117_b  # noqa: E402
import batch118  # noqa: E402
import batch118_b  # noqa: E402
import batch119  # noqa: E402
import batch119_b  # noqa: E402
import batch120  # noqa: E402
import batch120_b  # noqa: E402
import batch121  # noqa: E402
import batch121_b  # noqa: E402
import batch122  # noqa: E402
import batch122_b  # noqa: E402
import batch123  # noqa: E402
import batch123_b  # noqa: E402
import batch124  # noqa: E402
import batch124_b  # noqa: E402
import batch125  # noqa: E402
import batch125_b  # noqa: E402
import batch126  # noqa: E402
import batch126_b  # noqa: E402
import batch127  # noqa: E402
import batch127_b  # noqa: E402
import batch128  # noqa: E402
import batch128_b  # noqa: E402
import batch129  # noqa: E402
import batch129_b  # noqa: E402
import batch130  # noqa: E402
import batch130_b  # noqa: E402
import batch131  # noqa: E402
import batch131_b  # noqa: E402
import batch132  # noqa: E402
import batch132_b  # noqa: E402
import batch133  # noqa: E402
import batch133_b  # noqa: E402
import batch134  # noqa: E402
import batch134_b  # noqa: E402
import batch135  # noqa: E402
import batch135_b  # noqa: E402
import batch136  # noqa: E402
import batch136_b  # noqa: E402
import batch137  # noqa: E402
import batch137_b  # noqa: E402
import batch138  # noqa: E402
import batch138_b  # noqa: E402
import batch139  # noqa: E402
import batch139_b  # noqa: E402

for _batch in (
    batch01_corpus, batch02_working_set, batch03_second, batch04_third, batch05_fourth_a, batch05_fourth_b,
    batch06_ninth, batch07_tenth_a, batch07_tenth_b, batch08_eleventh, batch09_twelfth, batch10_thirteenth,
    batch11_fourteenth_a, batch11_fourteenth_b, batch12_fifteenth_a, batch12_fifteenth_b, batch16, batch16_b,
    batch17, batch18, batch18_b, batch19, batch20, batch20_b, batch21, batch21_b, batch22, batch22_b, batch23,
    batch23_b, batch24, batch24_b, batch25, batch25_b, batch26, batch26_b, batch27, batch27_b, batch28,
    batch28_b, batch29, batch29_b, batch30, batch30_b, batch31, batch31_b, batch32, batch32_b, batch33,
    batch33_b, batch34, batch34_b, batch35, batch35_b, batch36, batch36_b, batch37, batch37_b, batch38,
    batch38_b, batch39, batch39_b, batch40, batch40_b, batch41, batch41_b, batch42, batch42_b, batch43, batch43_b,
    batch44, batch44_b, batch45, batch45_b, batch46, batch46_b, batch47, batch47_b, batch48, batch48_b,
    batch49, batch49_b, batch50, batch50_b, batch51, batch51_b, batch52, batch52_b, batch53, batch53_b,
    batch54, batch54_b,
    batch55, batch55_b,
    batch56, batch56_b,
    batch57, batch57_b,
    batch58, batch58_b,
    batch59, batch59_b,
    batch60, batch60_b,
    batch61, batch61_b,
    batch62, batch62_b,
    batch63, batch63_b,
    batch64, batch64_b,
    batch65, batch65_b,
    batch66, batch66_b,
    batch67, batch67_b,
    batch68, batch68_b,
    batch69, batch69_b,
    batch70, batch70_b,
    batch71, batch71_b,
    batch72, batch72_b,
    batch73, batch73_b,
    batch74, batch74_b,
    batch75, batch75_b,
    batch76, batch76_b,
    batch77, batch77_b,
    batch78, batch78_b,
    batch79, batch79_b,
    batch80, batch80_b,
    batch81, batch81_b,
    batch82, batch82_b,
    batch83, batch83_b,
    batch84, batch84_b,
    batch85, batch85_b,
    batch86, batch86_b,
    batch87, batch87_b,
    batch88, batch88_b,
    batch89, batch89_b,
    batch90, batch90_b,
    batch91, batch91_b,
    batch92, batch92_b,
    batch93, batch93_b,
    batch94, batch94_b,
    batch95, batch95_b,
    batch96, batch96_b,
    batch97, batch97_b,
    batch98, batch98_b,
    batch99, batch99_b,
    batch100, batch100_b,
    batch101, batch101_b,
    batch102, batch102_b,
    batch103, batch103_b,
    batch104, batch104_b,
    batch105, batch105_b,
    batch106, batch106_b,
    batch107, batch107_b,
    batch108, batch108_b,
    batch109, batch109_b,
    batch110, batch110_b,
    batch111, batch111_b,
    batch112, batch112_b,
    batch113, batch113_b,
    batch114, batch114_b,
    batch115, batch115_b,
    batch116, batch116_b,
    batch117, batch117_b,
    batch118, batch118_b,
    batch119, batch119_b,
    batch120, batch120_b,
    batch121, batch121_b,
    batch122, batch122_b,
    batch123, batch123_b,
    batch124, batch124_b,
    batch125, batch125_b,
    batch126, batch126_b,
    batch127, batch127_b,
    batch128, batch128_b,
    batch129, batch129_b,
    batch130, batch130_b,
    batch131, batch131_b,
    batch132, batch132_b,
    batch133, batch133_b,
    batch134, batch134_b,
    batch135, batch135_b,
    batch136, batch136_b,
    batch137, batch137_b,
    batch138, batch138_b,
    batch139, batch139_b,
):
    _batch.register(sys.modules[__name__])

if __name__ == "__main__":
    main()

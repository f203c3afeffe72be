"""Why the record_stream check cannot stage its race here: one allocator
per run (native, expandable, or expanse with the hook on / off), the same
steps as compat_table.record_stream_check, printing after each step whether
the side stream still has work queued, the elapsed time and whether the
side stream's read saw overwritten values.

    python3 scripts/gpu/record_stream_diag.py native|expandable|on|off

On the H200 (2026-11-30, docs/gpu-runs/2026-11-30-s3/rs-diag.txt) the side
stream reported no queued work right after a one-second sleep kernel was
launched on it, in all four runs, while the whole sequence took 1.01 s.
The suspected cause is CUDA's lazy module loading: the first launch of
`torch.mul` loads its module, which may synchronize the context, so the
host waited for the sleep. The sequence therefore runs twice in one
process: "cold" (kernels not yet loaded) and then "warm" (every kernel
already launched once); only the warm run should see the side stream busy.
"""
import os, sys, time
sys.path.insert(0, "python")
mode = sys.argv[1]
if mode == "expandable":
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
if mode == "off":
    os.environ["EXPANSE_RECORD_STREAM"] = "0"
import torch
if mode in ("on", "off"):
    import expanse_torch
    print("install:", expanse_torch.install())
n = 64 * 2**20 // 4
main = torch.cuda.current_stream(); side = torch.cuda.Stream()
print("CUDA_MODULE_LOADING =", os.environ.get("CUDA_MODULE_LOADING"), "CUDA_LAUNCH_BLOCKING =", os.environ.get("CUDA_LAUNCH_BLOCKING"))
for run in ("cold", "warm"):
    main = torch.cuda.current_stream(); side = torch.cuda.Stream()
    x = torch.ones(n, device="cuda")
    with torch.cuda.stream(side):
        out = torch.empty(n, device="cuda")
    torch.cuda.synchronize()
    side.wait_stream(main)
    t0 = time.time()
    with torch.cuda.stream(side):
        torch.cuda._sleep(int(2e9))
        torch.mul(x, 2, out=out)
    q = [("after launch", not side.query())]
    x.record_stream(side); q.append(("after record_stream", not side.query()))
    ptr = x.data_ptr(); del x; q.append(("after del", not side.query()))
    y = torch.empty(n, device="cuda"); q.append(("after empty", not side.query()))
    y.fill_(7.0); q.append(("after fill", not side.query()))
    torch.cuda.synchronize()
    print(mode, run, "busy:", q, "elapsed", round(time.time() - t0, 3), "reused", y.data_ptr() == ptr, "bad", int((out != 2).sum()))

"""The plumbing that every workload module (batch01_corpus.py ... batch12_fifteenth_b.py, moved out of record.py,
and batch16.py onward, written as modules) shares: each batch file keeps its workloads in a
module of its own and adds them to record.py's WORKLOADS when record.py calls its `register(<record.py's
module object>)` (just before main(), whether record.py runs as __main__ or is imported as `record`).

    from batch_common import Batch, upload

    b = Batch()

    @b.workload("family ...")
    def my_workload(rng):
        n = b.smoke(1024, 8)          # record.py's _smoke: the real size, or the small one under RECORD_SMOKE=1
        k = b.loguniform(rng, 1, 64)  # record.py's _loguniform
        b.rec._rope(...)              # any other helper of record.py, through its module object

    register = b.register             # what record.py calls

A batch file never imports record.py (that would load it a second time, with a second WORKLOADS); it
reaches record.py's helpers through the module object register() was given (b.rec).

Sizing a new batch (what the nineteenth taught, docs/gpu-results.md 22): record_batch.sh records four at a
time on one H200 within one device call, and there the workloads took 77-225 s for 0.9-1.4M events, three to
five times what was estimated from FLOPs; two that built large tensors on the CPU every step (a 1.6 GB randint
a request; fresh pinned tensors every step) did not finish in 340 s. Aim for 0.5-0.8M events and well under a
minute alone on the GPU, make inputs on the device or reuse a few host buffers, and count events with
smoke_cpu.py before estimating.
"""


class Batch:
    """One batch file's workloads, held until record.py registers them, in the order they were written."""

    def __init__(self):
        self.rec = None  # record.py's module object, set by register()
        self.pending = []  # (family, function) in the order written

    def workload(self, family):
        """A decorator: the function is one workload of this batch, with this family string."""

        def wrap(fn):
            self.pending.append((family, fn))
            return fn

        return wrap

    def register(self, rec):
        """Adds this batch's workloads to rec.WORKLOADS (rec: the record.py module calling)."""
        self.rec = rec
        for family, fn in self.pending:
            rec.workload(family)(fn)

    def smoke(self, real, small):
        return self.rec._smoke(real, small)

    def loguniform(self, rng, lo, hi):
        return self.rec._loguniform(rng, lo, hi)


def upload(t):
    """A host tensor copied to the device through pinned memory, as a DataLoader with pin_memory does."""
    return t.pin_memory().to("cuda", non_blocking=True)

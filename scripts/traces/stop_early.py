"""Run a workload to its end, or until the process is asked to stop (SIGTERM), and say which.

record.py records under a time limit (`timeout`, record_corpus.sh and record_batch.sh): a workload
still running at the limit used to be killed with nothing written, and the device time it had used was
lost. With run_until_term the first SIGTERM stops the workload between two Python statements (CUDA work
already queued completes), the recorder writes what was recorded up to there and says so (record.py:
the trace's header and `stopped_after_s` in its live.json); later SIGTERMs are ignored, so that the
writing is never cut half-way (record_batch.sh sends SIGKILL to what is left after 90 s). A
stopped trace is the same workload cut short by a clock, never by any allocator figure, so it stays
blind.

No torch here, so that scripts/traces/test_stop_early.py runs without it (CI).
"""

import signal
import time


class Stopped(BaseException):
    """Raised inside the workload by the first SIGTERM. A BaseException, so that a workload's own
    `except Exception` does not swallow it."""


def run_until_term(fn, *args):
    """fn(*args) to its end (returns None), or the seconds it had run when a SIGTERM stopped it.

    After it returns SIGTERM is ignored (stopped or not), so that what the caller writes next is written
    whole; SIGKILL still ends the process."""
    running = [True]

    def stop(signum, frame):
        if running[0]:
            running[0] = False
            raise Stopped()

    t0 = time.time()
    signal.signal(signal.SIGTERM, stop)
    try:
        fn(*args)
        running[0] = False
        return None
    except Stopped:
        return round(time.time() - t0, 2)
    finally:
        running[0] = False
        signal.signal(signal.SIGTERM, signal.SIG_IGN)

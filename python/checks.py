"""The tiny runner of the Python ABI checks: each check is a function
decorated with `@checks.test`; a failure is reported and the rest still
run; `checks.finish()` prints the count and exits 1 if any failed."""

import sys

passed = failed = 0


def test(fn):
    global passed, failed
    try:
        fn()
        passed += 1
        print(f"{fn.__name__} ... ok", flush=True)
    except Exception as e:  # report and go on
        failed += 1
        print(f"{fn.__name__} ... FAILED: {e!r}", flush=True)
    return fn


def finish():
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)

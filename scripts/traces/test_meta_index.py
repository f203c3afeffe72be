"""meta_run.py's index check: a table looked up with an integer arange reaching past its rows stops the run (the
meta device itself checks no index). Prints SKIPPED without torch, as CI's machine has none.

    python3 scripts/traces/test_meta_index.py
"""
import os
import sys

try:
    import torch
except ImportError:
    print("SKIPPED: torch is not installed")
    sys.exit(0)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import meta_run  # noqa: E402  (installs the cuda -> meta redirection, as a meta run does)


def raises(fn):
    try:
        with meta_run.CountMeta():
            fn()
    except meta_run.IndexPastTable:
        return True
    return False


def main():
    table = torch.nn.Embedding(242, 8, device="meta")
    weights = torch.empty(242, 8, device="meta")
    cases = [
        # (what, looks up past the table?, the lookup)
        ("positions 0-241 of 242 rows", False, lambda: table(torch.arange(242, device="meta"))),
        ("positions 0-247 of 242 rows", True, lambda: table(torch.arange(248, device="meta"))),
        ("positions 10-249 of 242 rows", True, lambda: table(torch.arange(10, 250, device="meta"))),
        ("every 2nd of 0-240", False, lambda: table(torch.arange(0, 241, 2, device="meta"))),
        ("every 2nd of 0-242", True, lambda: table(torch.arange(0, 243, 2, device="meta"))),
        ("a view of 0-247", True, lambda: table(torch.arange(248, device="meta")[None].expand(3, 248))),
        ("the first 200 of 0-247 (a slice)", False, lambda: table(torch.arange(248, device="meta")[:200])),
        ("the last 10 of 0-247 (a slice)", True, lambda: table(torch.arange(248, device="meta")[238:])),
        ("index_select of 0-247", True, lambda: weights.index_select(0, torch.arange(248, device="meta"))),
        ("index_select of 0-7 along 8 columns", False, lambda: weights.index_select(1, torch.arange(8, device="meta"))),
        ("an arange shifted by an op (values unknown)", False, lambda: table(torch.arange(248, device="meta") - 10)),
    ]
    failed = 0
    for what, past, fn in cases:
        got = raises(fn)
        ok = got == past
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {what}: {'stopped' if got else 'passed'}")
    print(f"{len(cases) - failed} of {len(cases)} passed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

"""Replay a trace through PyTorch's allocator (as torch_replay.py does) and
print, for every event after which reserved bytes changed, the event's
index (0-based over alloc and free lines) and the reserved bytes: the
timeline of segment allocations and releases, to find the first event at
which another allocator's replay of the same trace departs from PyTorch's.

    python3 scripts/gpu/reserved_timeline.py TRACE native|expandable > timeline.txt
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "traces"))
import torch_replay  # noqa: E402


def main():
    path, mode = sys.argv[1], sys.argv[2]
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = torch_replay.MODES[mode]
    import torch

    events = torch_replay.read(path)
    torch.cuda.init()
    streams = {0: torch.cuda.default_stream()}
    live = {}
    reserved = 0
    for n, e in enumerate(events):
        if len(e) == 3:
            i, size, s = e
            st = streams.get(s)
            if st is None:
                st = streams[s] = torch.cuda.Stream()
            live[i] = torch.cuda.caching_allocator_alloc(size, 0, st)
        else:
            ptr = live.pop(e[0])
            if ptr:
                torch.cuda.caching_allocator_delete(ptr)
        r = torch.cuda.memory_reserved()
        if r != reserved:
            reserved = r
            print(n, r)


if __name__ == "__main__":
    main()

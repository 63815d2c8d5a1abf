"""Writes a large CUDA memory snapshot (snapshot.pickle) for the PyTorch benchmarks by repeating a real one.

Usage:  python3 bench/make_torch_snapshot.py SOURCE.pickle OUT.pickle SIZE_MB

Each repetition is the source's first device's trace entries shifted past the previous repetition in
time and, so that no repetition's blocks collide with another's, in address; the segments at the dump
and everything else are the source's. The result is what a snapshot of that many more steps holds, and
is pickled as torch.cuda.memory._dump_snapshot pickles (protocol 4): every entry a dict of its own with
a list of its own of frames, the frame dicts shared between entries as PyTorch shares them (so the
memo grows by entries and frame lists, and frames are references to it). Needs about four times the
output's size in memory. The source is our own fixture, plain data: `pickle.load` on it runs nothing.
"""
import pickle
import sys

ADDR_STRIDE = 1 << 40  # far above any one repetition's address range


def repetition(entries, k, span):
    out = []
    for e in entries:
        e2 = dict(e)
        e2['time_us'] = e['time_us'] + k * span
        e2['addr'] = e['addr'] + k * ADDR_STRIDE
        e2['frames'] = list(e['frames'])
        out.append(e2)
    return out


def main():
    source, out, size_mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
    with open(source, 'rb') as f:
        snap = pickle.load(f)
    entries = snap['device_traces'][0]
    times = [e['time_us'] for e in entries]
    span = max(times) - min(times) + 1000
    # The bytes one more repetition adds, from the pickles of one and of two.
    size = lambda n: len(pickle.dumps([x for k in range(n) for x in repetition(entries, k, span)], 4))
    per = size(2) - size(1)
    base = len(pickle.dumps(snap, 4)) - per
    reps = max(1, round((size_mb * 1e6 - base) / per))
    snap['device_traces'] = [[x for k in range(reps) for x in repetition(entries, k, span)]]
    with open(out, 'wb') as f:
        pickle.dump(snap, f, protocol=4)
    n = len(snap['device_traces'][0])
    print(f'{out}: {reps} repetitions of {len(entries)} events ({n} events)')


if __name__ == '__main__':
    main()

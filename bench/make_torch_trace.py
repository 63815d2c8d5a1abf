"""Writes a large Kineto trace (*.pt.trace.json) for the PyTorch benchmarks by repeating a real one.

Usage:  python3 bench/make_torch_trace.py SOURCE.pt.trace.json[.gz] OUT.pt.trace.json SIZE_MB

Each repetition is the source's events shifted past the previous one in time, with every id that
joins events renumbered (External id, correlation, flow ids, Python ids, Ev Idx) and the steps
numbered on (ProfilerStep#N), so the result is one longer, well-formed run of the same program: what
a profile of that many more steps would hold. The metadata events (process and thread names) are
written once. Streams its output: the result may be larger than memory would like.
"""
import gzip
import json
import re
import sys

ID_ARGS = ('External id', 'correlation', 'Python id', 'Python parent id', 'Ev Idx', 'Record function id')
STEP = re.compile(r'^ProfilerStep#(\d+)$')


def load(path):
    opener = gzip.open if path.endswith('.gz') else open
    with opener(path, 'rt') as f:
        return json.load(f)


def main():
    source, out, size_mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
    trace = load(source)
    events = trace.pop('traceEvents')
    meta = [e for e in events if e.get('ph') == 'M']
    body = [e for e in events if e.get('ph') != 'M']
    timed = [e for e in body if 'ts' in e]
    begin = min(e['ts'] for e in timed)
    span = max(e['ts'] + e.get('dur', 0) for e in timed) - begin
    steps = [int(m.group(1)) for e in body if (m := STEP.match(e.get('name', '')))]
    step_stride = (max(steps) - min(steps) + 1) if steps else 0
    # Largest value of each renumbered id, so repetitions never reuse one.
    stride = {k: 1 + max((e.get('args', {}).get(k, 0) for e in body if isinstance(e.get('args', {}).get(k), int)), default=0) for k in ID_ARGS}
    flow_stride = 1 + max((e['id'] for e in body if isinstance(e.get('id'), int)), default=0)

    target = size_mb * 1e6
    with open(out, 'w') as f:
        head = json.dumps(trace)[:-1]
        f.write(head + ', "traceEvents": [\n')
        written = len(head)
        first = True
        for e in meta:
            f.write(('' if first else ',\n') + json.dumps(e))
            first = False
        k = 0
        while written < target:
            shift = k * (span + 1000.0)
            for e in body:
                e2 = dict(e)
                if 'ts' in e2:
                    e2['ts'] = e['ts'] + shift
                if isinstance(e2.get('id'), int):
                    e2['id'] = e['id'] + k * flow_stride
                args = e.get('args')
                if args:
                    a2 = dict(args)
                    for key in ID_ARGS:
                        if isinstance(a2.get(key), int) and a2[key] > 0:
                            a2[key] = args[key] + k * stride[key]
                    e2['args'] = a2
                m = STEP.match(e.get('name', ''))
                if m:
                    e2['name'] = f'ProfilerStep#{int(m.group(1)) + k * step_stride}'
                line = ',\n' + json.dumps(e2)
                f.write(line)
                written += len(line)
            k += 1
        f.write('\n]}\n')
    print(f'{out}: {k} repetitions of {len(body)} events, {written / 1e6:.0f} MB')


if __name__ == '__main__':
    main()

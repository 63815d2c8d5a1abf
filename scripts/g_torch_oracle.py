"""torch-oracle: the JSON that the PyTorch Profiler TensorBoard plugin (torch_tb_profiler 0.4.3) would serve for one
Kineto trace, plus HolisticTraceAnalysis 0.5.0's breakdowns of it. No TensorBoard server is started.

Usage:  python g_torch_oracle.py TRACE OUTDIR [--fixed | --plugin-as-is] [--verify] [--inproc]
  TRACE   a torch.profiler / Kineto trace, *.pt.trace.json or *.pt.trace.json.gz
  OUTDIR  created if missing; prints the files written and a 5-line summary (steps, top ops by device self time,
          top kernels, runtime share, peak memory)
  --fixed         (default) the plugin with the three patches listed below, applied in-process and in its worker
  --plugin-as-is  the plugin exactly as released: byte-identical to what TensorBoard serves, faults included
  --verify        recompute the key figures from the raw trace JSON with plain Python (verify() below), print the
                  result and store it in manifest.json under "verification"

Each plugin file is the body respond_as_json sends, json.dumps(obj) of the object the handler in
torch_tb_profiler/plugin.py gets, with the query the web UI sends when it opens each tab (byte-identical to the
TorchProfilerPlugin routes served through werkzeug on both H200 fixtures, in --plugin-as-is mode):
  views.json           /views                     [v.display_name for v in run.views]
  overview.json        /overview                  profile.overview + 'environments' + 'gpu_metrics' (overview_route)
  operation.json       /operation?group_by=Operation         profile.operation_pie_by_name
  operation_table.json /operation/table?group_by=Operation   profile.operation_table_by_name
  operation_input_shape.json        /operation?group_by=OperationAndInputShape        profile.operation_pie_by_name_input
  operation_table_input_shape.json  /operation/table?group_by=OperationAndInputShape  profile.operation_table_by_name_input
                       (the Operator view's "Group By: Operator + Input Shape"; written beside the others)
  kernel.json          /kernel?group_by=Kernel               profile.kernel_pie
  kernel_table.json    /kernel/table?group_by=Kernel         profile.kernel_table
  kernel_op_table.json /kernel/table?group_by=KernelNameAndOpName  profile.kernel_op_table
  kernel_tc_pie.json   /kernel/tc_pie                        profile.tc_pie
  memory.json          /memory                    profile.get_memory_stats(None, None, 'KB')
  memory_curve.json    /memory_curve              profile.get_memory_curve(time_metric='ms', memory_metric='MB')
  memory_events.json   /memory_events             profile.get_memory_events(None, None, 'ms', 'KB')
  module.json          /module                    profile.get_module_view()
  distributed_{gpuinfo,overlap,waittime,commops}.json  /distributed/*, only if the run has a worker 'All' profile
Files of a tab the profile lacks (Kernel, Memory, Module/Lightning view) are skipped, as the UI hides that tab.
  hta_breakdown.json   HTA TraceAnalysis(trace_dir).get_temporal_breakdown(visualize=False) and
                       .get_gpu_kernel_breakdown(visualize=False) (defaults duration_ratio=0.8, num_kernels=10,
                       include_memory_kernels=True) as lists of records; an analysis that raises gives {"error": ...}
                       (HTA is never patched: same bytes in both modes)
  manifest.json        mode, patches, versions, how it was loaded, run/worker/span, endpoint of each file, files
                       skipped, the summary lines, and with --verify the verification results

Loading, as TorchProfilerPlugin._load_run does: the trace is copied alone into a temp run folder, then
RunLoader(name, run_dir, io.Cache(tmp)).load() runs its worker (RunProfileData.parse -> RunGenerator(worker, span,
data).generate_run_profile(), DistributedRunProfileData, _process_spans) in a child process. All of the plugin's
queues/locks come from its own 'spawn' context (torch_tb_profiler/multiprocessing.py, TORCH_PROFILER_START_METHOD);
no other lock is created here, and the work runs under `if __name__ == '__main__'` since spawn re-imports this file.
--inproc calls RunProfileData.parse + RunGenerator.generate_run_profile in this process instead (same bytes on both
fixtures, in both modes); it is also the fallback, raising the real error, when the child returned no profile.

Plugin 0.4.3 predates current Kineto traces (PyTorch >= 2.x) and misreads them in three ways; --plugin-as-is keeps
them, --fixed corrects exactly these three and nothing else. The patches are monkeypatches applied by apply_fixes():
in this process, and in the plugin's spawned RunLoader worker, which re-imports this file as __mp_main__ and applies
them when it finds TORCH_ORACLE_MODE=fixed in the environment this process sets before the worker starts.
  P1  torch_tb_profiler/profiler/trace.py  EventTypeMap: add 'cuda_runtime' and 'cuda_driver' -> EventTypes.RUNTIME.
      Why: 0.4.3 maps only the old category 'runtime'; Kineto now writes CUDA runtime API calls as 'cuda_runtime' and
      driver launches (cuLaunchKernel[Ex], e.g. Triton/inductor kernels) as 'cuda_driver'. With no RuntimeNode,
      NodeParserMixin._parse_node cannot join a kernel/memcpy/memset to its launch (same 'correlation'), nor the
      launch to its op (same 'External id'): Runtime time 0, every op's device time 0 (operation.json's device pies
      null), every device event 'staled' and hung off CallTreeRoot, steps never stretched to their GPU work.
      Upstream made the same edit for 'cuda_runtime' (pytorch/kineto#1166, Dec 2025, never released to PyPI);
      'cuda_driver' is the same kind of event (a host API call with a correlation id to its kernel).
  P2  torch_tb_profiler/profiler/op_tree.py  OpTreeBuilder._build_tree: the 'staled' device nodes (device events
      whose launch was not found) go to the first thread whose op list holds a ProfilerStep# node, not to every such
      thread (the method is 0.4.3's with one line added). Why: the code's own comment, "only append the staled device
      nodes into main thread", and its single main_tid; 0.4.3 handed the same list to each thread with a
      ProfilerStep# node -- here the CPU thread and, through fault 3, the GPU stream -- so kernel_op_table counted each
      such kernel twice. With P1 no device event is staled in either fixture, so P2 changes no byte there on its own;
      it is the fix for the double count itself (P2 alone halves the as-is kernel_op_table).
  P3  torch_tb_profiler/profiler/trace.py  create_trace_event: an event of category 'gpu_user_annotation' named
      ProfilerStep#N yields no event (None), as 0.4.3 already does for every other GPU user annotation that is not
      an NCCL/Gloo op. Why: Kineto mirrors each host ProfilerStep#N record_function onto the GPU stream (category
      gpu_user_annotation, tid = stream, same External id) spanning that step's kernels. pytorch/kineto#709 mapped
      'user_annotation' for the host marker ("ProfilerStep# ... added via record function as a user_annotation
      instead of operator") and mapped 'gpu_user_annotation' alongside; 0.4.3 therefore also made the GPU copies
      ProfilerStepNodes: StepParser._parse_step listed each step twice (steps table, averages, GPU-utilisation span)
      and the stream's tid looked like a main thread to OpTreeBuilder (fault 2). The plugin stretches the host steps
      to their GPU work itself (StepParser.update_device_steps), so the GPU copies add nothing it needs; with P1 but
      not P3, each stretched host step swallows its GPU copy, which collapses to zero length, and 0.4.3 fails on both
      fixtures (ZeroDivisionError in RunGenerator._generate_overview).
Left as released (not among the three faults): data.py reads forward/backward links only from category
'forward_backward' (Kineto writes 'fwdbwd'), so no backward modules are built; non-step user_annotation events
(e.g. Optimizer.step#AdamW.step) are dropped; remove_dup_nodes gives a same-name parent its only child's runtimes
(none lost here); TC_Allowlist judges Tensor Core use by kernel-name substrings older than Hopper's (nvjet_* never
match). Once P1 makes runtime events exist, launches without an External id (cudaStreamIsCapturing,
cudaDeviceSynchronize; no device work) are claimed by the first ModuleNode, whose external_id is None: its host self
time in module.json drops by their duration (about 51 us in p1, 32 us in p2); op host self times now exclude the
runtime calls they make, as the plugin intends (node.py: "cpu_self_time does not include runtime's time").

--verify (verify() below) recomputes from the raw JSON, with plain Python, and compares:
  a  kernel_table (and the kernel pie): per kernel name, calls and total/mean/max/min duration of the 'kernel' events
  b  kernel_op_table summed per (kernel name, operator): against the plugin's own attribution rule (kernel ->
     runtime/driver call with the same 'correlation' -> the host node that claimed that call's 'External id', first
     thread and earliest node first; External id 0 -> CallTreeRoot; a claimed node dropped from the tree or merged
     into a same-name parent loses its launches) and against the plain rule "innermost cpu_op on the launching thread
     whose span encloses the launch"; every kernel must appear exactly once
  c  the steps: one per host ProfilerStep#N (cpu_op or user_annotation), stretched as StepParser does: start =
     max(previous step's end, host start), end = max(host end, last end of the device events launched by runtime
     calls lying wholly inside the host step), first start raised past un-stepped device work that ends before step
     0's GPU work; trailing steps without device work, or with < 80% of the previous step's, dropped
  d  device self time of the top 10 operators: sum of durations of the kernels, memcpys and memsets attributed (b)
  e  the overview's per-step breakdown: Kernel, Memcpy, Memset, Runtime, DataLoader, CPU Exec, Other as the measure
     of each category's union within the step minus every earlier category's, summing to the step time

Venv:  python3.12 -m venv .cache/torchtb && .cache/torchtb/bin/pip install torch-tb-profiler==0.4.3 holistictraceanalysis==0.5.0
"""
import json, os, shutil, sys, tempfile

MODE_ENV = 'TORCH_ORACLE_MODE'  # 'fixed' or 'plugin-as-is'; read by the spawned worker when it re-imports this file
PATCHES = [
    {'id': 'P1', 'fault': "'cuda_runtime'/'cuda_driver' events unknown: Runtime 0, kernels not linked to their ops, "
                          'op device times 0',
     'where': 'torch_tb_profiler/profiler/trace.py: EventTypeMap',
     'change': "add 'cuda_runtime' and 'cuda_driver' -> EventTypes.RUNTIME (pytorch/kineto#1166 did so for "
               "'cuda_runtime')"},
    {'id': 'P2', 'fault': 'kernel_op_table counted each device event without a found launch once per thread holding '
                          'a ProfilerStep# node (twice here)',
     'where': 'torch_tb_profiler/profiler/op_tree.py: OpTreeBuilder._build_tree',
     'change': 'the staled device nodes go to the first such thread only ("only append the staled device nodes into '
               'main thread")'},
    {'id': 'P3', 'fault': "'gpu_user_annotation' ProfilerStep#N markers taken as extra steps (every step twice)",
     'where': 'torch_tb_profiler/profiler/trace.py: create_trace_event',
     'change': "a 'gpu_user_annotation' event named ProfilerStep#N yields None, like every other non-NCCL/Gloo GPU "
               'user annotation'},
]
PATCH_IDS = tuple(p['id'] for p in PATCHES)

ROUTES = [  # (file, endpoint with the UI's query, view the tab needs, how plugin.py's handler gets the object)
    ('operation.json', '/operation?group_by=Operation', 'Operator', lambda p: p.operation_pie_by_name),
    ('operation_table.json', '/operation/table?group_by=Operation', 'Operator', lambda p: p.operation_table_by_name),
    ('operation_input_shape.json', '/operation?group_by=OperationAndInputShape', 'Operator',
     lambda p: p.operation_pie_by_name_input),
    ('operation_table_input_shape.json', '/operation/table?group_by=OperationAndInputShape', 'Operator',
     lambda p: p.operation_table_by_name_input),
    ('kernel.json', '/kernel?group_by=Kernel', 'Kernel', lambda p: p.kernel_pie),
    ('kernel_table.json', '/kernel/table?group_by=Kernel', 'Kernel', lambda p: p.kernel_table),
    ('kernel_op_table.json', '/kernel/table?group_by=KernelNameAndOpName', 'Kernel', lambda p: p.kernel_op_table),
    ('kernel_tc_pie.json', '/kernel/tc_pie', 'Kernel', lambda p: p.tc_pie),
    ('memory.json', '/memory', 'Memory', lambda p: p.get_memory_stats(None, None, 'KB')),
    ('memory_curve.json', '/memory_curve', 'Memory', lambda p: p.get_memory_curve('ms', 'MB')),
    ('memory_events.json', '/memory_events', 'Memory', lambda p: p.get_memory_events(None, None, 'ms', 'KB')),
    ('module.json', '/module', 'Module|Lightning', lambda p: p.get_module_view()),
]
DIST = [('distributed_gpuinfo.json', 'gpu_info'), ('distributed_overlap.json', 'steps_to_overlap'),
        ('distributed_waittime.json', 'steps_to_wait'), ('distributed_commops.json', 'comm_ops')]


def _build_tree_stale_once(self, tid2list, tid2zero_rt_list, staled_device_nodes):
    """P2: OpTreeBuilder._build_tree of torch_tb_profiler 0.4.3, with the one line marked P2 added."""
    tid2tree = {}

    for tid, op_list in tid2list.items():
        zero_rt_list = tid2zero_rt_list[tid] if tid in tid2zero_rt_list else []
        # Note that when 2 start_time are equal, the one with bigger end_time should be ahead of the other.
        op_list.sort(key=lambda x: (x.start_time, -x.end_time))
        main_tid = any([op.name.startswith('ProfilerStep#') for op in op_list])
        if main_tid:
            # only append the staled device nodes into main thread
            self.main_tid = op_list[0].tid
            root_node = self._build_tree_internal(op_list, zero_rt_list, tid, staled_device_nodes)
            staled_device_nodes = []  # P2: handed to one main thread only, not to every thread with a ProfilerStep#
        else:
            root_node = self._build_tree_internal(op_list, zero_rt_list, tid, [])
        tid2tree[int(tid)] = root_node

    return tid2tree


def apply_fixes(ids=PATCH_IDS):
    """Monkeypatch torch_tb_profiler 0.4.3 in this process (P1-P3 of the docstring); idempotent."""
    import torch_tb_profiler.profiler  # noqa: F401  (package first, as plugin.py does: circular import otherwise)
    from torch_tb_profiler.profiler import op_tree, trace
    done = getattr(trace, '_torch_oracle_patches', ())
    if 'P1' in ids and 'P1' not in done:
        trace.EventTypeMap['cuda_runtime'] = trace.EventTypes.RUNTIME
        trace.EventTypeMap['cuda_driver'] = trace.EventTypes.RUNTIME
    if 'P2' in ids and 'P2' not in done:
        op_tree.OpTreeBuilder._build_tree = _build_tree_stale_once
    if 'P3' in ids and 'P3' not in done:
        plugin_create_trace_event = trace.create_trace_event  # create_event looks it up in trace's globals

        def create_trace_event(event, is_pytorch_lightning):
            if ((event.get('cat') or '').lower() == 'gpu_user_annotation'
                    and (event.get('name') or '').startswith('ProfilerStep#')):
                return None  # P3: the GPU-stream copy of a host ProfilerStep#N is not a step
            return plugin_create_trace_event(event, is_pytorch_lightning)
        trace.create_trace_event = create_trace_event
    trace._torch_oracle_patches = tuple(sorted(set(done) | set(ids)))
    return trace._torch_oracle_patches


if __name__ == '__mp_main__' and os.environ.get(MODE_ENV) == 'fixed':
    apply_fixes()  # the plugin's spawned RunLoader worker re-imports this file as __mp_main__ before it parses


def load_run(trace, inproc, tmp):
    from torch_tb_profiler import consts, io, multiprocessing as mp
    from torch_tb_profiler.profiler import RunLoader, data as tb_data, run_generator
    from torch_tb_profiler.run import Run, RunProfile
    base = os.path.basename(trace)
    if not consts.WORKER_PATTERN.match(base):  # the plugin only sees *.pt.trace.json[.gz]
        base = 'worker0.pt.trace.json' + ('.gz' if trace.endswith('.gz') else '')
    run_dir, cache_dir = os.path.join(tmp, 'run'), os.path.join(tmp, 'cache')
    os.makedirs(run_dir), os.makedirs(cache_dir)
    shutil.copy(trace, os.path.join(run_dir, base))
    name = os.path.basename(os.path.dirname(os.path.abspath(trace)))
    run, how = None, 'RunLoader.load (child process, start method %s)' % mp.get_start_method()
    if not inproc:
        cache = io.Cache(cache_dir)
        run = RunLoader(name, run_dir, cache).load()
        cache.__exit__(None, None, None)
    if run is None or not any(isinstance(p, RunProfile) for p in run.profiles.values()):
        if not inproc:
            print('RunLoader returned no profile (the plugin would show none); parsing in-process', file=sys.stderr)
        m = consts.WORKER_PATTERN.match(base)  # same worker/span as RunLoader.load (one file: span index 1)
        worker, span = m.group(1), (1 if m.group(2) else None)
        data = tb_data.RunProfileData.parse(worker, span, os.path.join(run_dir, base), cache_dir)
        run, how = Run(name, run_dir), 'in-process RunProfileData.parse + RunGenerator.generate_run_profile'
        run.add_profile(run_generator.RunGenerator(worker, span, data).generate_run_profile())
    return run, how


def overview(run, p):  # TorchProfilerPlugin.overview_route
    data = p.overview
    is_gpu_used = p.has_runtime or p.has_kernel or p.has_memcpy_or_memset
    normal_workers = [worker for worker in run.workers if worker != 'All']
    data['environments'] = [{'title': 'Number of Worker(s)', 'value': str(len(normal_workers))},
                            {'title': 'Device Type', 'value': 'GPU' if is_gpu_used else 'CPU'}]
    if p.gpu_summary and p.gpu_tooltip:
        data['gpu_metrics'] = {'title': 'GPU Summary', 'data': p.gpu_summary, 'tooltip': p.gpu_tooltip}
    return data


def hta_breakdown(trace):
    def records(df):
        return [{k: (v.item() if hasattr(v, 'item') else v) for k, v in r.items()} for r in df.to_dict('records')]
    out = {'hta_version': None, 'params': {'visualize': False, 'duration_ratio': 0.8, 'num_kernels': 10,
                                           'include_memory_kernels': True}}
    err = lambda e: {'error': f'{type(e).__name__}: {e}'}
    d = tempfile.mkdtemp(prefix='torch-oracle-hta-')  # HTA reads a folder of traces, one per rank
    try:
        from importlib.metadata import version
        out['hta_version'] = version('HolisticTraceAnalysis')
        shutil.copy(trace, d)
        from hta.trace_analysis import TraceAnalysis
        analyzer = TraceAnalysis(trace_dir=d)
    except Exception as e:
        shutil.rmtree(d, ignore_errors=True)
        return {**out, **err(e)}
    try:
        out['temporal_breakdown'] = records(analyzer.get_temporal_breakdown(visualize=False))
    except Exception as e:
        out['temporal_breakdown'] = err(e)
    try:
        kt, km = analyzer.get_gpu_kernel_breakdown(visualize=False, duration_ratio=0.8, num_kernels=10,
                                                   include_memory_kernels=True)
        out['kernel_breakdown'] = {'kernel_type': records(kt), 'kernel_metrics': records(km)}
    except Exception as e:
        out['kernel_breakdown'] = err(e)
    shutil.rmtree(d, ignore_errors=True)
    return out


def step_rows(ov):
    """[(name, {column: value}, total)] of the overview steps table; the total is the one its tooltips print."""
    import re
    cols = [c.get('name') for c in ov['steps']['columns']]
    out = []
    for r in ov['steps']['rows']:
        vals = {c: v for c, v in zip(cols, r) if c and c != 'Step'}
        tips = [v for c, v in zip(cols, r) if c is None]
        m = re.search(r'Total: ([^<]*?)us<', tips[0]) if tips else None
        out.append((r[0], vals, float(m.group(1)) if m else None))
    return out


def summary(files):
    short = lambda s: s if len(s) <= 70 else s[:67] + '...'
    ov = files['overview.json']
    steps = step_rows(ov)
    names = [s[0] for s in steps]
    avg = ov['performance'][0]['value'] if ov.get('performance') else None
    lines = [f'steps: {len(names)} rows in the overview steps table ['
             + ', '.join(f'{n}: {t:.0f}' if t is not None else n for n, _, t in steps)
             + f' us] ({len(set(names))} distinct); average step time {avg} us']
    ops = (files.get('operation_table.json') or {}).get('data', [])
    top = sorted(ops, key=lambda r: -(r.get('device_self_duration') or 0))[:3]
    s = ', '.join(f"{short(r['name'])}={r.get('device_self_duration')}" for r in top)
    if not any(r.get('device_self_duration') for r in top):
        host = sorted(ops, key=lambda r: -r['host_self_duration'])[:3]
        s += ' (no device time; by host self time: ' + ', '.join(f"{short(r['name'])}={r['host_self_duration']}"
                                                        for r in host) + ')'
    lines.append('top 3 ops by device self time (us): ' + s)
    kt = files.get('kernel_table.json')
    if kt:
        cols = [c['name'] for c in kt['data']['columns']]
        i, c = cols.index('Total Duration (us)'), cols.index('Calls')
        top = sorted(kt['data']['rows'], key=lambda r: -r[i])[:3]
        lines.append('top 3 kernels by total time (us): '
                     + ', '.join(f'{short(r[0])}={r[i]} ({r[c]} calls)' for r in top))
    else:
        lines.append('top 3 kernels: no Kernel view')
    parts = {c['name']: c for c in (ov['performance'][0]['children'] if ov.get('performance') else [])}
    rt = parts.get('Runtime')
    lines.append('runtime share: ' + (f"Runtime {rt['value']} us = {rt['extra']}% of the average step"
                                      if rt else 'no Runtime category (no GPU)')
                 + ' (' + ', '.join(f"{k} {v['extra']}%" for k, v in parts.items() if k != 'Runtime') + ')')
    mc = files.get('memory_curve.json')
    lines.append('peak allocated memory: ' + ('; '.join(f'{d}: {v}' for d, v in sorted(mc['metadata']['peaks'].items()))
                                              if mc else 'no Memory view'))
    return lines


# ----------------------------------------------------------------------------------------------------------------
# --verify: independent recomputation from the raw trace JSON (plain Python; nothing from torch_tb_profiler)

def verify(trace, files):
    import bisect, gzip, math
    from collections import defaultdict
    with open(trace, 'rb') as f:
        raw = f.read()
    doc = json.loads(gzip.decompress(raw) if trace.endswith('.gz') else raw, strict=False)
    # Complete events in time order (a stable sort by 'ts', as RunProfileData sorts its events)
    X = sorted((e for e in doc['traceEvents'] if e.get('ph') == 'X' and e.get('dur') is not None),
               key=lambda e: e['ts'])
    cat = lambda e: (e.get('cat') or '').lower()
    args = lambda e: e.get('args') or {}
    end = lambda e: e['ts'] + e['dur']
    ext = lambda e: args(e).get('external id', args(e).get('External id'))
    DEV = {'kernel': 'Kernel', 'memcpy': 'Memcpy', 'gpu_memcpy': 'Memcpy', 'memset': 'Memset', 'gpu_memset': 'Memset'}
    RT = ('runtime', 'cuda_runtime', 'cuda_driver')
    COMM = {f'{lib}:{op}' for lib in ('nccl', 'gloo')
            for op in ('broadcast', 'reduce', 'all_reduce', 'all_gather', 'reduce_scatter')}
    is_step = lambda e: e['name'].startswith('ProfilerStep#') and cat(e) in ('cpu_op', 'operator', 'user_annotation')
    devs = [e for e in X if cat(e) in DEV]
    kernels = [e for e in devs if cat(e) == 'kernel']
    rts = [e for e in X if cat(e) in RT]
    dev_by_corr = defaultdict(list)
    for d in devs:
        dev_by_corr[args(d).get('correlation')].append(d)
    rt_corrs = [args(r).get('correlation') for r in rts]
    launched = {id(d) for r in rts for d in dev_by_corr.get(args(r).get('correlation'), [])}
    ulp = 2.0 ** (math.frexp(max((e['ts'] for e in X), default=1.0))[1] - 53)  # one ulp of the trace's timestamps
    slack = lambda n: n * ulp + 1e-6  # the plugin takes durations as (ts + dur) - ts: <= 1/2 ulp off per event
    cap = lambda xs: xs[:12] + ([f'... {len(xs) - 12} more'] if len(xs) > 12 else [])
    res = {'facts': {'complete_events': len(X), 'kernels': len(kernels), 'device_events': len(devs),
                     'runtime_and_driver_calls': len(rts),
                     'runtime_correlation_ids_unique': len(set(rt_corrs)) == len(rt_corrs),
                     'device_events_without_launch': len(devs) - len(launched),
                     'timestamp_ulp_us': ulp}}

    def col_index(table):
        return {c['name']: i for i, c in enumerate(table['columns'])}

    # a: kernel_table and the kernel pie against the 'kernel' events
    by_name = defaultdict(list)
    for k in kernels:
        by_name[k['name']].append(k['dur'])
    kt = (files.get('kernel_table.json') or {}).get('data')
    if kt is None:
        res['a_kernel_table'] = {'pass': not kernels, 'note': 'no Kernel view'}
    else:
        ci, bad = col_index(kt), []
        rows = {r[0]: r for r in kt['rows']}
        for n, durs in by_name.items():
            r = rows.get(n)
            want = {'Calls': len(durs), 'Total Duration (us)': math.fsum(durs),
                    'Mean Duration (us)': math.fsum(durs) / len(durs), 'Max Duration (us)': max(durs),
                    'Min Duration (us)': min(durs)}
            if r is None:
                bad.append({'kernel': n[:90], 'missing_in_plugin': want})
                continue
            for c, v in want.items():
                if abs(r[ci[c]] - v) > (0 if c == 'Calls' else 0.5 + 1e-6):  # the plugin rounds to whole us
                    bad.append({'kernel': n[:90], 'column': c, 'plugin': r[ci[c]], 'raw': v})
        bad += [{'kernel': n[:90], 'extra_in_plugin': True} for n in rows if n not in by_name]
        pie = {r[0]: r[1] for r in (files.get('kernel.json') or {}).get('total', {}).get('rows', [])}
        pie_bad = [n[:90] for n, durs in by_name.items() if abs(pie.get(n, -1e18) - math.fsum(durs)) > 1e-6]
        res['a_kernel_table'] = {'pass': not bad and not pie_bad and len(pie) == len(by_name),
                                 'kernel_names': len(by_name), 'kernels': len(kernels),
                                 'plugin_calls': sum(r[ci['Calls']] for r in kt['rows']),
                                 'mismatch_count': len(bad) + len(pie_bad), 'mismatches': cap(bad),
                                 'kernel_pie_mismatches': cap(pie_bad)}

    # b: attribution. The plugin's rule, rebuilt from the raw JSON:
    class Node:
        def __init__(s, e, kind):
            s.name, s.kind, s.tid, s.ts, s.end, s.ext = e['name'], kind, e['tid'], e['ts'], end(e), ext(e)
            s.children, s.rts = [], []
    nodes = []  # host nodes the plugin builds: cpu_op / ProfilerStep# / module python_function / NCCL-Gloo annotation
    for e in X:
        c = cat(e)
        if is_step(e):
            nodes.append(Node(e, 'step'))
        elif c in ('cpu_op', 'operator', 'python'):
            nodes.append(Node(e, 'op' if c != 'python' else 'python'))
        elif c in ('user_annotation', 'gpu_user_annotation') and e['name'] in COMM:
            nodes.append(Node(e, 'op'))
        elif c == 'python_function' and args(e).get('Python module id') is not None:
            nodes.append(Node(e, 'module'))
            nodes[-1].ext = None  # ModuleNode.create drops the external id
    tid_nodes = defaultdict(list)  # threads in order of their first node, nodes in time order
    for n in nodes:
        tid_nodes[n.tid].append(n)
    rt_by_ext, zero_rts = defaultdict(list), defaultdict(list)
    for r in rts:
        rt_by_ext[ext(r)].append(r)
        if ext(r) == 0:
            zero_rts[r['tid']].append(r)
    for lst in tid_nodes.values():  # each launch joins the first node (thread order, then time) with its External id
        for n in lst:
            n.rts.extend(rt_by_ext.pop(n.ext, []))
    unclaimed = sum(len(v) for k, v in rt_by_ext.items() if k != 0)
    stale = [d for d in devs if id(d) not in launched]
    dropped_overlap, merged_away = [], []

    def remove_dup(n):  # a node whose only child has its name (both operators) takes that child's children and
        if len(n.children) == 1:  # launches; its own launches are dropped
            ch = n.children[0]
            if n.name == ch.name and n.kind == 'op' and ch.kind == 'op':
                merged_away.extend(n.rts)
                n.children, n.rts = ch.children, ch.rts
                return remove_dup(n)
        for ch in n.children:
            remove_dup(ch)

    owner = {}  # id(device event) -> (owning node's name, is that node an operator the op table shows)
    stale_given = False
    for tid, lst in tid_nodes.items():
        root = Node({'name': 'CallTreeRoot', 'tid': tid, 'ts': -sys.maxsize - 1, 'dur': 2 * sys.maxsize + 1}, 'root')
        root.rts = list(zero_rts.get(tid, []))
        stack = [root]
        for n in sorted(lst, key=lambda n: (n.ts, -n.end)):
            while True:
                tail = stack[-1]
                if n.ts < tail.end:
                    if n.end <= tail.end:
                        tail.children.append(n)
                        stack.append(n)
                    else:
                        dropped_overlap.append(n)  # crosses its parent's end: left out of the tree
                    break
                stack.pop()
        remove_dup(root)
        walk = [root]
        while walk:
            n = walk.pop()
            walk.extend(n.children)
            shown = (n.kind == 'op' and n.name not in ('DataParallel.forward', 'DistributedDataParallel.forward')
                     and not n.name.startswith('Optimizer.')
                     and not (n.name.startswith('enumerate(DataLoader)#') and n.name.endswith('.__next__'))
                     and not n.name.startswith('enumerate(DataPipe)#'))
            for r in n.rts:
                for d in dev_by_corr.get(args(r).get('correlation'), []):
                    owner[id(d)] = (n.name, shown)
        if not stale_given and any(n.kind == 'step' for n in lst):
            stale_given = True
            for d in stale:
                owner[id(d)] = ('CallTreeRoot', False)

    # The plain rule: innermost cpu_op on the launching thread whose span encloses the launch
    ops_by_tid = defaultdict(list)
    for e in X:
        if cat(e) in ('cpu_op', 'operator') and not is_step(e):
            ops_by_tid[e['tid']].append(e)
    starts = {}
    for tid, lst in ops_by_tid.items():
        lst.sort(key=lambda e: (e['ts'], -end(e)))
        starts[tid] = [e['ts'] for e in lst]
    plain = {}
    for r in rts:
        lst, name = ops_by_tid.get(r['tid'], []), None
        i = bisect.bisect_right(starts.get(r['tid'], []), r['ts'])
        for j in range(i - 1, -1, -1):
            if end(lst[j]) >= end(r):
                name = lst[j]['name']
                break
        for d in dev_by_corr.get(args(r).get('correlation'), []):
            plain[id(d)] = name if name is not None else '(no enclosing cpu_op)'

    kot = (files.get('kernel_op_table.json') or {}).get('data')
    if kot is None:
        res['b_kernel_op_table'] = {'pass': not kernels, 'note': 'no Kernel view'}
    else:
        ci = col_index(kot)
        got = defaultdict(lambda: [0, 0.0])
        for r in kot['rows']:
            g = got[(r[ci['Name']], r[ci['Operator']])]
            g[0] += r[ci['Calls']]
            g[1] += r[ci['Total Duration (us)']]

        def compare(attrib):
            want = defaultdict(lambda: [0, 0.0])
            for k in kernels:
                if id(k) in attrib:
                    w = want[(k['name'], attrib[id(k)])]
                    w[0] += 1
                    w[1] += k['dur']
            bad, worst = [], 0.0
            for key in sorted(set(got) | set(want), key=str):
                g, w = got.get(key, [0, 0.0]), want.get(key, [0, 0.0])
                if g[0] == w[0]:
                    worst = max(worst, abs(g[1] - w[1]))
                if g[0] != w[0] or abs(g[1] - w[1]) > slack(max(g[0], w[0])):
                    bad.append({'kernel': key[0][:90], 'op': key[1], 'plugin_calls': g[0], 'raw_calls': w[0],
                                'plugin_us': round(g[1], 3), 'raw_us': round(w[1], 3)})
            return bad, worst
        plugin_attr = {i: o[0] for i, o in owner.items()}
        (bad_plugin, worst), (bad_plain, _) = compare(plugin_attr), compare(plain)
        per_name = defaultdict(int)
        for (n, _), g in got.items():
            per_name[n] += g[0]
        count_bad = [{'kernel': n[:90], 'plugin_calls': per_name.get(n, 0), 'raw_calls': len(d)}
                     for n, d in by_name.items() if per_name.get(n, 0) != len(d)]
        differ = [k for k in kernels if plain.get(id(k)) != plugin_attr.get(id(k))]
        res['b_kernel_op_table'] = {
            'pass': not bad_plugin and not count_bad,
            'pairs_in_plugin': len(got), 'kernels_in_plugin': sum(g[0] for g in got.values()),
            'each_kernel_once': not count_bad, 'count_mismatches': cap(count_bad),
            'plugin_rule_mismatch_count': len(bad_plugin), 'plugin_rule_mismatches': cap(bad_plugin),
            'max_abs_total_us_diff_where_calls_agree': worst,
            'innermost_cpu_op_rule_pass': not bad_plain, 'innermost_cpu_op_rule_mismatch_count': len(bad_plain),
            'innermost_cpu_op_rule_mismatches': cap(bad_plain),
            'kernels_where_rules_differ': len(differ),
            'rule_differences': cap([{'kernel': k['name'][:90], 'plugin_rule': plugin_attr.get(id(k)),
                                      'innermost_cpu_op': plain.get(id(k))} for k in differ]),
            'launches_unclaimed_by_any_node': unclaimed, 'nodes_left_out_of_tree': len(dropped_overlap),
            'launches_lost_to_same_name_merge': len(merged_away),
            'device_events_lost_to_same_name_merge':
                sum(len(dev_by_corr.get(args(r).get('correlation'), [])) for r in merged_away),
            'staled_device_events': len(stale)}

    # c: steps
    host = [(e['ts'], end(e), str(int(e['name'].split('#')[1]))) for e in X if is_step(e)]
    steps_dev = []
    matched = set()
    for s, t, _ in host:
        ds = [d for r in rts if r['ts'] >= s and end(r) <= t  # launches lying wholly inside the host step
              for d in dev_by_corr.get(args(r).get('correlation'), [])]
        matched.update(id(d) for d in ds)
        steps_dev.append((min((d['ts'] for d in ds), default=None), max((end(d) for d in ds), default=None), len(ds)))
    steps = [(s, t) for s, t, _ in host]
    if matched:
        prev = host[0][0]
        if steps_dev[0][0] is not None:
            prev = max([prev] + [end(d) for d in devs if id(d) not in matched and end(d) < steps_dev[0][0]])
        steps = []
        for (s, t, _), (_, dmax, _) in zip(host, steps_dev):
            s = max(prev, s)
            t = max(t, s) if dmax is None else max(t, dmax)
            t = max(t, s)
            steps.append((s, t))
            prev = t
    names = [n for _, _, n in host]
    if matched and len(steps) > 1:
        last = max(i for i, sd in enumerate(steps_dev) if sd[2] > 0)
        keep = last + 1
        if last > 0 and steps_dev[last - 1][2] * 0.8 > steps_dev[last][2]:
            keep = last
        steps, names = steps[:keep], names[:keep]
    if not steps:  # no ProfilerStep#: the plugin makes one step '0' of the host events' span
        cpu = [e for e in X if cat(e) in ('cpu_op', 'operator', 'python')]
        steps, names = [(min(e['ts'] for e in cpu), max(end(e) for e in cpu))], ['0']
    rows = step_rows(files['overview.json'])
    bad = []
    if [r[0] for r in rows] != names:
        bad.append({'plugin_steps': [r[0] for r in rows], 'raw_steps': names})
    for (n, _, tot), (s, t) in zip(rows, steps):
        if tot is None or abs(tot - (t - s)) > 1e-6:
            bad.append({'step': n, 'plugin_us': tot, 'raw_us': t - s})
    perf = files['overview.json']['performance'][0]['value']
    avg = sum(t - s for s, t in steps) / len(steps)
    res['c_steps'] = {'pass': not bad and perf == round(avg),
                      'raw_steps': [{'step': n, 'start_us': s, 'end_us': t, 'duration_us': t - s,
                                     'host_duration_us': h[1] - h[0], 'device_events': sd[2]}
                                    for n, (s, t), h, sd in zip(names, steps, host, steps_dev)],
                      'plugin_steps': [r[0] for r in rows],
                      'plugin_average_step_us': perf, 'raw_average_step_us': avg,
                      'max_abs_step_us_diff': max((abs(tot - (t - s)) for (_, _, tot), (s, t) in zip(rows, steps)
                                                   if tot is not None), default=None),
                      'mismatch_count': len(bad), 'mismatches': cap(bad)}

    # d: device self time of the top operators
    ot = (files.get('operation_table.json') or {}).get('data', [])
    top = sorted(ot, key=lambda r: -(r.get('device_self_duration') or 0))[:10]
    self_plugin, self_plain, self_kernels = defaultdict(float), defaultdict(float), defaultdict(float)
    for d in devs:
        o = owner.get(id(d))
        if o and o[1]:
            self_plugin[o[0]] += d['dur']
            if cat(d) == 'kernel':
                self_kernels[o[0]] += d['dur']
        if id(d) in plain:
            self_plain[plain[id(d)]] += d['dur']
    bad, bad_plain = [], []
    for r in top:
        v = r.get('device_self_duration')
        if v is None or abs(v - self_plugin[r['name']]) > 0.5 + 1e-6:
            bad.append({'op': r['name'], 'plugin_us': v, 'raw_us': self_plugin[r['name']]})
        if v is None or abs(v - self_plain[r['name']]) > 0.5 + 1e-6:
            bad_plain.append({'op': r['name'], 'plugin_us': v, 'innermost_cpu_op_us': self_plain[r['name']]})
    pie = (files.get('operation.json') or {}).get('device_self_time')
    res['d_op_device_self_time'] = {
        'pass': bool(top) and not bad and pie is not None and any(r.get('device_self_duration') for r in top),
        'top_ops': [{'op': r['name'], 'plugin_us': r.get('device_self_duration'), 'raw_us': self_plugin[r['name']],
                     'of_which_kernels_us': self_kernels[r['name']]} for r in top],
        'device_self_time_pie_present': pie is not None, 'mismatch_count': len(bad), 'mismatches': cap(bad),
        'innermost_cpu_op_rule_mismatch_count': len(bad_plain),
        'innermost_cpu_op_rule_mismatches': cap(bad_plain)}

    # e: the overview's per-step breakdown
    def measure(iv, s, t):  # length of the union of intervals iv clipped to [s, t]
        iv = sorted((max(a, s), min(b, t)) for a, b in iv if b > s and a < t)
        total, cur_a, cur_b = 0.0, None, None
        for a, b in iv:
            if cur_b is None or a > cur_b:
                if cur_b is not None:
                    total += cur_b - cur_a
                cur_a, cur_b = a, b
            else:
                cur_b = max(cur_b, b)
        return total + (cur_b - cur_a if cur_b is not None else 0.0)
    is_dl = lambda e: ((e['name'].startswith('enumerate(DataLoader)#') and e['name'].endswith('.__next__'))
                       or e['name'].startswith('enumerate(DataPipe)#'))
    comm_ext = {ext(e) for e in X if cat(e) in ('cpu_op', 'operator', 'user_annotation', 'gpu_user_annotation')
                and e['name'] in COMM}
    roles = [('Kernel', [e for e in kernels if ext(e) not in comm_ext]),
             ('Memcpy', [e for e in devs if DEV[cat(e)] == 'Memcpy']),
             ('Memset', [e for e in devs if DEV[cat(e)] == 'Memset']),
             ('Communication', [e for e in X if (cat(e) == 'kernel' and ext(e) in comm_ext) or (
                 cat(e) in ('cpu_op', 'operator', 'python', 'user_annotation', 'gpu_user_annotation')
                 and e['name'] in COMM)]),
             ('Runtime', rts),
             ('DataLoader', [e for e in X if cat(e) in ('cpu_op', 'operator') and is_dl(e)]),
             ('CPU Exec', [e for e in X if cat(e) in ('cpu_op', 'operator', 'python') and not is_step(e)
                           and not is_dl(e) and e['name'] not in COMM])]
    roles = [(n, [(e['ts'], end(e)) for e in evs]) for n, evs in roles]
    bad, sums, raw_rows, worst = [], [], [], 0.0
    for (n, vals, tot), (s, t) in zip(rows, steps):
        cum, prev, raw = [], 0.0, {}
        for role, iv in roles:
            cum += iv
            m = measure(cum, s, t)
            raw[role], prev = m - prev, m
        raw['Other'] = (t - s) - prev
        raw_rows.append({'step': n, **raw})
        for role, v in raw.items():
            worst = max(worst, abs(vals.get(role, 0.0) - v))
            if role in vals and abs(vals[role] - v) > 1e-3:
                bad.append({'step': n, 'category': role, 'plugin_us': vals[role], 'raw_us': v})
            elif role not in vals and abs(v) > 1e-3:
                bad.append({'step': n, 'category': role, 'plugin_us': None, 'raw_us': v})
        sums.append({'step': n, 'sum_of_categories_us': math.fsum(vals.values()), 'step_us': tot})
    sum_ok = all(x['step_us'] is not None and abs(x['sum_of_categories_us'] - x['step_us']) < 1e-3 for x in sums)
    parts = {c['name']: c['value'] for c in files['overview.json']['performance'][0]['children']}
    res['e_overview_breakdown'] = {
        'pass': not bad and sum_ok and (parts.get('Runtime') or 0) > 0,
        'plugin_average_us': parts, 'runtime_nonzero': (parts.get('Runtime') or 0) > 0,
        'categories_sum_to_step': sum_ok, 'max_abs_category_us_diff': worst, 'raw_per_step_us': raw_rows,
        'plugin_step_sums_us': sums, 'mismatch_count': len(bad), 'mismatches': cap(bad)}
    res['pass'] = all(v['pass'] for k, v in res.items() if isinstance(v, dict) and 'pass' in v)
    return res


def verify_lines(v):
    f = lambda x: 'PASS' if x['pass'] else 'FAIL'
    a, b, c, d, e = (v[k] for k in ('a_kernel_table', 'b_kernel_op_table', 'c_steps', 'd_op_device_self_time',
                                    'e_overview_breakdown'))
    return [f"verify a kernel_table: {f(a)} ({a.get('kernel_names')} names, {a.get('kernels')} kernels; "
            f"{a.get('mismatch_count')} mismatches)",
            f"verify b kernel_op_table: {f(b)} ({b.get('kernels_in_plugin')} kernels in the table for "
            f"{v['facts']['kernels']} in the trace; plugin rule: {b.get('plugin_rule_mismatch_count')} mismatching "
            f"(kernel, op) pairs; innermost enclosing cpu_op rule: {b.get('innermost_cpu_op_rule_mismatch_count')}, "
            f"{b.get('kernels_where_rules_differ')} kernels attributed differently)",
            f"verify c steps: {f(c)} (raw {[s['step'] for s in c['raw_steps']]}, average "
            f"{c['raw_average_step_us']:.1f} us; plugin {len(c['plugin_steps'])} rows, average "
            f"{c['plugin_average_step_us']} us; {c['mismatch_count']} mismatches)",
            f"verify d op device self time: {f(d)} (top {len(d['top_ops'])}; {d['mismatch_count']} mismatches)",
            f"verify e overview breakdown: {f(e)} (Runtime average {e['plugin_average_us'].get('Runtime')} us; "
            f"categories sum to step: {e['categories_sum_to_step']}; {e['mismatch_count']} mismatches)"]


def main():
    argv = sys.argv[1:]
    flags = {a for a in argv if a.startswith('--')}
    args = [a for a in argv if not a.startswith('--')]
    if len(args) != 2 or flags - {'--inproc', '--fixed', '--plugin-as-is', '--verify'} \
            or {'--fixed', '--plugin-as-is'} <= flags:
        sys.exit(__doc__.split('\n\n')[1])
    trace, outdir = args
    mode = 'plugin-as-is' if '--plugin-as-is' in flags else 'fixed'
    os.environ[MODE_ENV] = mode  # before RunLoader starts its worker, which inherits it
    os.environ.setdefault('TORCH_PROFILER_LOG_LEVEL', 'WARNING')  # read by torch_tb_profiler.utils.get_logger
    import torch_tb_profiler
    import torch_tb_profiler.profiler  # before .run, as plugin.py does (circular import otherwise)
    from torch_tb_profiler.run import DistributedRunProfile, RunProfile
    patched = apply_fixes() if mode == 'fixed' else ()
    tmp = tempfile.mkdtemp(prefix='torch-oracle-')
    try:
        run, how = load_run(trace, '--inproc' in flags, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    p = [p for p in run.profiles.values() if isinstance(p, RunProfile)][0]
    if mode == 'fixed' and p.has_kernel and not p.has_runtime:
        sys.exit('--fixed: the profile has kernels but no Runtime events; the patches did not reach the worker')
    dist = [p for p in run.profiles.values() if isinstance(p, DistributedRunProfile)]
    views = [v.display_name for v in p.views]
    files = {'views.json': [v.display_name for v in run.views], 'overview.json': overview(run, p)}
    manifest = {'mode': mode, 'patches': [q for q in PATCHES if q['id'] in patched],
                'torch_tb_profiler': torch_tb_profiler.__version__, 'trace': os.path.basename(trace),
                'loaded_by': how + (f"; patched ({', '.join(patched)}) in "
                                    + ('this process and its worker' if how.startswith('RunLoader') else 'this process')
                                    if patched else '; unpatched'),
                'run': run.name, 'worker': p.worker, 'span': p.span, 'views': views,
                'endpoints': {'views.json': '/views', 'overview.json': '/overview'}, 'skipped': {}}
    for fn, route, view, get in ROUTES:
        if set(view.split('|')) & set(views):
            files[fn] = get(p)
            manifest['endpoints'][fn] = route
        else:
            manifest['skipped'][fn] = f'{route}: no {view} view in this profile'
    for fn, attr in DIST if dist else []:
        files[fn] = getattr(dist[0], attr)
        manifest['endpoints'][fn] = '/distributed/' + fn[12:-5]
    hta = hta_breakdown(trace)
    manifest['hta_version'] = hta['hta_version']
    files['hta_breakdown.json'] = hta
    manifest['summary'] = summary(files)
    if '--verify' in flags:
        manifest['verification'] = verify(trace, files)
    files['manifest.json'] = manifest
    os.makedirs(outdir, exist_ok=True)
    for fn, obj in files.items():
        with open(os.path.join(outdir, fn), 'w') as f:
            f.write(json.dumps(obj))  # TorchProfilerPlugin.respond_as_json: content = json.dumps(obj)
        print(os.path.join(outdir, fn))
    for fn, why in manifest['skipped'].items():
        print(f'(not written) {fn}: {why}')
    print(f'mode: {mode}' + (' (' + ', '.join(patched) + ')' if patched else ''))
    print('\n'.join(manifest['summary']))
    if '--verify' in flags:
        print('\n'.join(verify_lines(manifest['verification'])))


if __name__ == '__main__':
    main()

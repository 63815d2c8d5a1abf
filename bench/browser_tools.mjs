// In-browser benchmark of every tool (issues 16 §6, 17 §6, 18 §7, 20 §5): what a user waits for in the
// release page (dist/, from `trunk build --release`) in Debian's headless Chromium, driven through
// tests/browser/harness.mjs. Reported in bench/RESULTS.md, never asserted.
//
// Per file, in a fresh page (new browser context):
//   start     from the navigation to the engine's worker started (its wasm compiled; polled every 50 ms);
//   open      from the file input's `change` to the file's row ready (read, worker, decode, overview);
//   <tool>    for every tool of the navigation, from the click on its tab to the tool drawn: no loading
//             note left in the main view and the next frame painted (the Trace Viewer: its canvas has
//             spans and no request in flight);
//   pan/zoom  in the Trace Viewer, KEYS presses of W (zoom in), A/D (pan) and S (zoom out), each timed from
//             the key to the canvas redrawn for the new window; and every frame interval while they run;
//   long task the longest main-thread task (PerformanceObserver 'longtask', ≥ 50 ms) over the whole run,
//             and how many there were; and per tool, the longest that ran between its tab's click and
//             the next step (`–`: none of 50 ms or more);
//   memory    the engine's wasm memory after opening the file, and at the end (wasm memory only grows, so
//             the end is its peak).
// Prints one table per file and one `tool_ms<TAB>FILE<TAB>TOOL<TAB>MS` line per measurement.
//
// With TRACE=DIR, each file's run is also recorded as a Chromium performance trace (DIR/FILE.trace.json,
// which Chromium's DevTools and Perfetto open), every step marked (`performance.mark`), and each task of
// the page's thread of 50 ms or more is listed with the step it ran in and what took its time (the
// trace's own events: a message handled, a layout, a paint). Tracing slows the page a little. The
// trace starts before the page loads (its start-up's tasks count too), and each long task the page
// itself observed is then found in it (one can span several of the trace's tasks). With PROFILE=1 as
// well, V8's sampling profiler runs in the trace and each observed long task lists the functions it
// ran (a build whose wasm keeps its names, as `target/wasm-bindgen/release/` holds before wasm-opt,
// names the engine's and the page's own); DIR/FILE.trace.json.observed.json keeps the page's figures.
// TOOLS=slug,slug times only those tools (the Trace Viewer's pan/zoom runs when it is among them);
// SEARCH=TEXT then also times a Trace Viewer search for TEXT, to its match count shown.
//
// usage: node bench/browser_tools.mjs [FILE.xplane.pb[.gz] ...]
//        node bench/browser_tools.mjs --tasks DIR/FILE.trace.json   (the long tasks of a recorded run)
// default files: the CPU fixtures d2_tf_cnn and a2_jax_mlp_train, and the device fixtures (read in place
// from ../shared/fixtures/device/ where present). Env: KEYS (default 12), CHROMIUM, TRACE, PROFILE, DIST (the
// built page, default dist/).
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import path from 'node:path';
import { ROOT, serve, launch, newPage, openApp, pickFiles, waitForFile, workerReady } from '../tests/browser/harness.mjs';

const KEYS = Number(process.env.KEYS || 12);
const TRACE = process.env.TRACE;
const PROFILE = Boolean(process.env.PROFILE);
const TOOLS = process.env.TOOLS ? process.env.TOOLS.split(',') : null;
const SEARCH = process.env.SEARCH;
const LONG_TASK_MS = 50;
const TIMEOUT_MS = 600_000;
const DEVICE = path.join(ROOT, '../shared/fixtures/device');
const defaults = () => {
  const files = [
    'tests/fixtures/tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz',
    'tests/fixtures/jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz',
  ].map((f) => path.join(ROOT, f));
  if (existsSync(DEVICE)) {
    for (const dir of readdirSync(DEVICE).sort()) {
      const d = path.join(DEVICE, dir);
      if (!statSync(d).isDirectory()) continue;
      for (const f of readdirSync(d).sort()) if (f.endsWith('.xplane.pb')) files.push(path.join(d, f));
    }
  } else {
    console.log(`note: ${DEVICE} is absent; the device traces are skipped`);
  }
  return files.filter(existsSync);
};

/** The engine's wasm memory in bytes (it never shrinks, so this is its peak so far). */
async function wasmBytes(page) {
  for (const w of page.workers()) {
    const n = await w.evaluate(() => self.tidemarkWasm?.memory.buffer.byteLength ?? 0).catch(() => 0);
    if (n) return n;
  }
  return 0;
}

/** Installed before anything runs: long tasks and frame intervals, read back by `probe()`. */
const INSTRUMENT = () => {
  window.__bench = { longtasks: [], longtaskStarts: [], frames: [], framing: false };
  new PerformanceObserver((l) => {
    for (const e of l.getEntries()) {
      window.__bench.longtasks.push(e.duration);
      window.__bench.longtaskStarts.push(e.startTime);
    }
  })
    .observe({ type: 'longtask', buffered: true });
  let last = performance.now();
  const tick = (t) => {
    if (window.__bench.framing) window.__bench.frames.push(t - last);
    last = t;
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
};

/** Resolves (in the page) once the main view has no loading note, then one frame later: ms since `t0`. */
const settled = (t0) => new Promise((resolve) => {
  const done = () => {
    const main = document.querySelector('main.main');
    const busy = !main || main.querySelector('.loading, [data-loading="true"], [data-testid="tool-pending"]');
    const canvas = main && main.querySelector('[data-testid="trace-canvas"]');
    const traceWaiting = main && main.querySelector('[data-testid="trace-viewer"]') && !(canvas && Number(canvas.dataset.spans) > 0);
    if (busy || traceWaiting) return void requestAnimationFrame(done);
    requestAnimationFrame(() => resolve(performance.now() - t0));
  };
  done();
});

async function timeTool(page, slug) {
  const tab = await page.$(`[data-tool="${slug}"]`);
  if (!tab || !(await tab.isVisible()) || (await tab.getAttribute('aria-disabled')) === 'true') return null;
  const t0 = await page.evaluate((slug) => { performance.mark(slug); return performance.now(); }, slug);
  await tab.click();
  return page.evaluate(settled, t0);
}

/** One W/A/D/S press on the trace canvas, timed to the canvas redrawn for the new window. */
async function timeKey(page, key) {
  return page.evaluate(async (key) => {
    performance.mark(`key ${key}`);
    const c = document.querySelector('[data-testid="trace-canvas"]');
    const before = `${c.dataset.windowStartPs}-${c.dataset.windowEndPs}`;
    const t0 = performance.now();
    c.dispatchEvent(new KeyboardEvent('keydown', { key, code: `Key${key.toUpperCase()}`, bubbles: true }));
    await new Promise((resolve) => {
      const check = () => {
        const now = `${c.dataset.windowStartPs}-${c.dataset.windowEndPs}`;
        if (now === before || c.dataset.loading === 'true') return void requestAnimationFrame(check);
        requestAnimationFrame(() => resolve());
      };
      check();
    });
    return performance.now() - t0;
  }, key);
}

/** A Trace Viewer search for `needle`, timed from the typed text sent (Tab) to its match count shown. */
async function timeSearch(page, needle) {
  await page.fill('[data-testid="trace-search"]', needle);
  const t0 = await page.evaluate(() => { performance.mark('search'); return performance.now(); });
  await page.press('[data-testid="trace-search"]', 'Tab');
  await page.waitForSelector('[data-metric="search_match_count"]');
  // Tasks after this mark are the run's end (the harness reading the results), not the search's.
  return page.evaluate((t0) => { const ms = performance.now() - t0; performance.mark('searched'); return ms; }, t0);
}

const pct = (xs, p) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};
const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : '–');

async function benchFile(browser, url, file) {
  const page = await newPage(browser);
  page.setDefaultTimeout(TIMEOUT_MS);
  await page.addInitScript(INSTRUMENT);
  const name = path.basename(file);
  const rows = [];
  // The trace starts before the page loads: its start-up's tasks are long tasks too.
  const tracePath = TRACE && path.join(TRACE, `${name}.trace.json`);
  if (tracePath) {
    mkdirSync(TRACE, { recursive: true });
    const categories = ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'blink.user_timing'];
    if (PROFILE) categories.push('disabled-by-default-v8.cpu_profiler');
    await browser.startTracing(page, { path: tracePath, categories });
  }
  await openApp(page, url);
  await page.evaluate(() => performance.mark('page loaded'));
  await workerReady(page);
  // From the navigation to the engine's worker started (its wasm compiled and instantiated), polled
  // every 50 ms.
  rows.push(['start', await page.evaluate(() => { performance.mark('worker ready'); return performance.now(); })]);
  const t0 = await page.evaluate(() => { performance.mark('open'); return performance.now(); });
  await pickFiles(page, [file]);
  await waitForFile(page, name);
  rows.push(['open', (await page.evaluate(() => performance.now())) - t0]);
  const openedBytes = await wasmBytes(page);
  const slugs = (await page.$$eval('[data-tool]', (els) => els.map((e) => e.dataset.tool))).filter((s) => !TOOLS || TOOLS.includes(s));
  for (const slug of slugs) {
    const ms = await timeTool(page, slug);
    if (ms !== null) rows.push([slug, ms]);
  }
  // Pan and zoom in the Trace Viewer (opened again: the loop above ended on another tool).
  let keys = [];
  let frames = [];
  if (slugs.includes('trace-viewer') && (await timeTool(page, 'trace-viewer')) !== null && (await page.$('[data-testid="trace-canvas"]'))) {
    await page.evaluate(() => { window.__bench.frames = []; window.__bench.framing = true; });
    const seq = ['w', 'w', 'w', 'a', 'd', 'd', 'w', 'w', 'a', 's', 's', 's'];
    for (let i = 0; i < KEYS; i++) keys.push(await timeKey(page, seq[i % seq.length]));
    frames = await page.evaluate(() => { window.__bench.framing = false; return window.__bench.frames; });
    if (SEARCH) rows.push(['search', await timeSearch(page, SEARCH)]);
  }
  const longtasks = await page.evaluate(() => window.__bench.longtasks);
  // The long tasks as the page saw them, and the marks' page times, to find them in the trace.
  const observed = await page.evaluate(() => ({
    starts: window.__bench.longtaskStarts,
    durations: window.__bench.longtasks,
    marks: performance.getEntriesByType('mark').map((m) => [m.name, m.startTime]),
  }));
  const peakBytes = await wasmBytes(page);
  if (tracePath) await browser.stopTracing();
  await page.context().close();
  // Each long task with the step it ran in (the last mark before it).
  const stepOf = (at) => observed.marks.filter(([, t]) => t <= at).pop()?.[0] ?? 'before opening';
  const longtaskSteps = observed.starts.map((at, i) => `${observed.durations[i].toFixed(0)} ms in ${stepOf(at)}`);
  // The longest task of each step (a tool's: from its tab's click to the next step's mark).
  const longestIn = new Map();
  observed.starts.forEach((at, i) => {
    const step = stepOf(at);
    longestIn.set(step, Math.max(longestIn.get(step) ?? 0, observed.durations[i]));
  });
  return { name, rows, keys, frames, longtasks, longtaskSteps, longestIn, observed, openedBytes, peakBytes, tracePath };
}

/** The page thread's tasks of LONG_TASK_MS or more in a recorded trace: when, in which step (the last
 *  mark before it), and the trace events under each that took a tenth of it or more. Then each long
 *  task the page itself observed (`observed`: their page times, found in the trace through the marks),
 *  which can span several of the trace's tasks, with those tasks; with PROFILE, the functions that
 *  V8's sampling profiler found running in it (self time, and time under each, of the page's thread). */
function longTasksOf(tracePath, observed) {
  const events = JSON.parse(readFileSync(tracePath, 'utf8')).traceEvents;
  const main = events.find((e) => e.ph === 'M' && e.name === 'thread_name' && e.args.name === 'CrRendererMain');
  const onMain = events.filter((e) => e.pid === main.pid && e.tid === main.tid && e.ph === 'X');
  const marks = events.filter((e) => e.cat === 'blink.user_timing' && e.pid === main.pid).sort((a, b) => a.ts - b.ts);
  const stepAt = (ts) => marks.filter((m) => m.ts <= ts).pop()?.name ?? 'before opening';
  const partsOf = (t) => [...new Set(onMain
    .filter((e) => e !== t && e.ts >= t.ts && e.ts < t.ts + t.dur && e.dur >= t.dur / 10 && e.name !== 'RunTask')
    .map((e) => `${e.name}${e.args?.data?.type ? `(${e.args.data.type})` : ''} ${f1(e.dur / 1000)}`))].slice(0, 8);
  const tasks = onMain.filter((e) => e.name === 'RunTask' && e.dur >= LONG_TASK_MS * 1000).sort((a, b) => a.ts - b.ts);
  const traced = tasks.map((t) => ({ step: stepAt(t.ts), ms: t.dur / 1000, parts: partsOf(t) }));
  // Page time → trace time (µs), from a mark both have.
  const pageMark = observed.marks.find(([name]) => marks.some((m) => m.name === name));
  const offsetUs = pageMark ? marks.find((m) => m.name === pageMark[0]).ts - pageMark[1] * 1000 : null;
  const samples = samplesOf(events, main);
  const seen = offsetUs === null ? [] : observed.starts.map((start, i) => {
    const from = offsetUs + start * 1000;
    const to = from + observed.durations[i] * 1000;
    const inside = onMain.filter((e) => e.name === 'RunTask' && e.ts < to && e.ts + e.dur > from && e.dur >= 1000);
    const functions = samples.length ? topFunctions(samples.filter((s) => s.ts >= from && s.ts < to)) : [];
    return { step: stepAt(from), ms: observed.durations[i], tasks: inside.map((t) => `${f1(t.dur / 1000)} [${partsOf(t).join(', ')}]`), functions };
  });
  return { traced, seen };
}

/** The page thread's CPU samples in a trace recorded with V8's profiler: each a time and its stack
 *  (function names, innermost first). */
function samplesOf(events, main) {
  const ids = new Set(events.filter((e) => e.name === 'Profile' && e.pid === main.pid && e.tid === main.tid).map((e) => e.id));
  const starts = new Map(events.filter((e) => e.name === 'Profile' && ids.has(e.id)).map((e) => [e.id, e.args.data.startTime]));
  const nodes = new Map();
  const out = [];
  const clock = new Map(starts);
  for (const e of events.filter((e) => e.name === 'ProfileChunk' && ids.has(e.id))) {
    const cpu = e.args.data.cpuProfile ?? {};
    for (const n of cpu.nodes ?? []) nodes.set(n.id, { name: n.callFrame.functionName || `(${n.callFrame.url?.split('/').pop() || 'anonymous'})`, parent: n.parent });
    const deltas = e.args.data.timeDeltas ?? [];
    (cpu.samples ?? []).forEach((id, i) => {
      clock.set(e.id, clock.get(e.id) + (deltas[i] ?? 0));
      out.push({ ts: clock.get(e.id), id });
    });
  }
  return out.map(({ ts, id }) => {
    const stack = [];
    for (let n = nodes.get(id); n; n = nodes.get(n.parent)) stack.push(n.name);
    return { ts, stack };
  });
}

/** The functions most often running (self) and most often on the stack (total) in `samples`. */
function topFunctions(samples) {
  const self = new Map();
  const total = new Map();
  for (const { stack } of samples) {
    if (stack[0] === '(idle)' || stack[0] === '(program)') continue;
    self.set(stack[0], (self.get(stack[0]) ?? 0) + 1);
    for (const f of new Set(stack)) total.set(f, (total.get(f) ?? 0) + 1);
  }
  const top = (m, n) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([f, c]) => `${f} ${c}`);
  return [`self: ${top(self, 10).join(', ')}`, `total: ${top(total, 25).join(', ')}`];
}

/** Prints the long tasks of a recorded trace: the trace's own, then those the page observed (read from
 *  `FILE.trace.json.observed.json` when not given, as `--tasks FILE.trace.json` does). */
function printLongTasks(tracePath, observed = JSON.parse(readFileSync(`${tracePath}.observed.json`, 'utf8'))) {
  const { traced, seen } = longTasksOf(tracePath, observed);
  for (const t of traced) console.log(`    ${f1(t.ms).padStart(7)} ms in ${t.step}: ${t.parts.join(', ')}`);
  console.log(`  long tasks the page observed, with the trace's tasks in each${PROFILE ? ' and the functions sampled (counts)' : ''}:`);
  for (const t of seen) {
    console.log(`    ${f1(t.ms).padStart(7)} ms in ${t.step}: ${t.tasks.join('; ')}`);
    for (const line of t.functions) console.log(`        ${line}`);
  }
}
if (process.argv[2] === '--tasks') {
  printLongTasks(process.argv[3]);
  process.exit(0);
}

const files = process.argv.slice(2).length ? process.argv.slice(2).map((f) => path.resolve(f)) : defaults();
const DIST = process.env.DIST ? path.resolve(process.env.DIST) : path.join(ROOT, 'dist');
if (!existsSync(path.join(DIST, 'index.html'))) throw new Error(`${DIST} is missing: run \`trunk build --release\` first`);
const server = await serve(DIST);
const browser = await launch();
try {
  for (const file of files) {
    const r = await benchFile(browser, server.url, file);
    // Memory is compared with the trace as the engine holds it: inflated.
    const size = file.endsWith('.gz') ? gunzipSync(readFileSync(file)).length : statSync(file).size;
    console.log(`\n${r.name} (${(size / 1e6).toFixed(1)} MB${file.endsWith('.gz') ? ' inflated' : ''})`);
    for (const [tool, ms] of r.rows) {
      const longest = r.longestIn.get(tool);
      console.log(`  ${tool.padEnd(20)} ${f1(ms).padStart(9)} ms   longest task ${longest ? `${f1(longest)} ms` : '–'}`);
      console.log(`tool_ms\t${r.name}\t${tool}\t${f1(ms)}`);
      console.log(`tool_longest_task_ms\t${r.name}\t${tool}\t${f1(longest ?? 0)}`);
    }
    if (r.keys.length) {
      console.log(`  pan/zoom key → redrawn: median ${f1(pct(r.keys, 0.5))} ms, max ${f1(Math.max(...r.keys))} ms (${r.keys.length} presses)`);
      console.log(`  frame interval while panning: p95 ${f1(pct(r.frames, 0.95))} ms, max ${f1(Math.max(...r.frames))} ms (${r.frames.length} frames)`);
      console.log(`tool_ms\t${r.name}\tkey-median\t${f1(pct(r.keys, 0.5))}`);
      console.log(`tool_ms\t${r.name}\tframe-max\t${f1(Math.max(...r.frames))}`);
    }
    const longest = r.longtasks.length ? Math.max(...r.longtasks) : 0;
    console.log(`  long tasks: ${r.longtasks.length}, longest ${f1(longest)} ms${r.longtaskSteps.length ? ` (${r.longtaskSteps.join(', ')})` : ''}`);
    const mib = (b) => `${(b / 2 ** 20).toFixed(0)} MiB (${(b / size).toFixed(1)}× the file)`;
    console.log(`  wasm memory: ${mib(r.openedBytes)} after opening, ${mib(r.peakBytes)} at the end`);
    console.log(`tool_ms\t${r.name}\tlongest-task\t${f1(longest)}`);
    if (r.tracePath) {
      console.log(`  trace: ${r.tracePath}; tasks of ${LONG_TASK_MS} ms or more on the page's thread:`);
      writeFileSync(`${r.tracePath}.observed.json`, JSON.stringify(r.observed));
      printLongTasks(r.tracePath, r.observed);
    }
  }
} finally {
  await browser.close();
  server.close();
}

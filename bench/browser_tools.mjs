// In-browser benchmark of every tool (issues 16 §6, 17 §6, 18 §7, 20 §5): what a user waits for in the
// release page (dist/, from `trunk build --release`) in Debian's headless Chromium, driven through
// tests/browser/harness.mjs. Reported in bench/RESULTS.md, never asserted.
//
// Per file, in a fresh page (new browser context):
//   open      from the file input's `change` to the file's row ready (read, worker, decode, overview);
//   <tool>    for every tool of the navigation, from the click on its tab to the tool drawn: no loading
//             note left in the main view and the next frame painted (the Trace Viewer: its canvas has
//             spans and no request in flight);
//   pan/zoom  in the Trace Viewer, KEYS presses of W (zoom in), A/D (pan) and S (zoom out), each timed from
//             the key to the canvas redrawn for the new window; and every frame interval while they run;
//   long task the longest main-thread task (PerformanceObserver 'longtask', ≥ 50 ms) over the whole run,
//             and how many there were;
//   memory    the engine's wasm memory after opening the file, and at the end (wasm memory only grows, so
//             the end is its peak).
// Prints one table per file and one `tool_ms<TAB>FILE<TAB>TOOL<TAB>MS` line per measurement.
//
// With TRACE=DIR, each file's run is also recorded as a Chromium performance trace (DIR/FILE.trace.json,
// which Chromium's DevTools and Perfetto open), every step marked (`performance.mark`), and each task of
// the page's thread of 50 ms or more is listed with the step it ran in and what took its time (the
// trace's own events: a message handled, a layout, a paint). Tracing slows the page a little.
// With PROFILE=1 as well, V8's sampling profiler runs in the trace and each long task also lists the
// functions its samples were in (self time; a wasm build that keeps its function names names them).
// TOOLS=slug,slug times only those tools (the Trace Viewer's pan/zoom runs when it is among them);
// SEARCH=TEXT then also times a Trace Viewer search for TEXT, to its match count shown.
//
// usage: node bench/browser_tools.mjs [FILE.xplane.pb[.gz] ...]
//        node bench/browser_tools.mjs --tasks DIR/FILE.trace.json   (the long tasks of a recorded run)
// default files: the CPU fixtures d2_tf_cnn and a2_jax_mlp_train, and the device fixtures (read in place
// from ../shared/fixtures/device/ where present). Env: KEYS (default 12), CHROMIUM, TRACE, DIST (the built
// page, default dist/).
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
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
      window.__bench.longtaskStarts.push([e.duration, e.startTime]);
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
  await openApp(page, url);
  await workerReady(page);
  const name = path.basename(file);
  const rows = [];
  const tracePath = TRACE && path.join(TRACE, `${name}.trace.json`);
  if (tracePath) {
    mkdirSync(TRACE, { recursive: true });
    const categories = ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'blink.user_timing'];
    if (PROFILE) categories.push('disabled-by-default-v8.cpu_profiler');
    await browser.startTracing(page, { path: tracePath, categories });
  }
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
  // Each long task with the step it ran in (the last mark before it), as the observer saw it.
  const longtaskSteps = await page.evaluate(() => window.__bench.longtaskStarts.map(([ms, at]) => {
    const step = performance.getEntriesByType('mark').filter((m) => m.startTime <= at).pop()?.name ?? 'before opening';
    return `${ms.toFixed(0)} ms in ${step}`;
  }));
  const peakBytes = await wasmBytes(page);
  if (tracePath) await browser.stopTracing();
  await page.context().close();
  return { name, rows, keys, frames, longtasks, longtaskSteps, openedBytes, peakBytes, tracePath };
}

/** The page thread's tasks of LONG_TASK_MS or more in a recorded trace: when, in which step (the last
 *  mark before it), and the trace events under each that took a tenth of it or more. */
function longTasksOf(tracePath) {
  const events = JSON.parse(readFileSync(tracePath, 'utf8')).traceEvents;
  const main = events.find((e) => e.ph === 'M' && e.name === 'thread_name' && e.args.name === 'CrRendererMain');
  const onMain = events.filter((e) => e.pid === main.pid && e.tid === main.tid && e.ph === 'X');
  const marks = events.filter((e) => e.cat === 'blink.user_timing' && e.pid === main.pid).sort((a, b) => a.ts - b.ts);
  const tasks = onMain.filter((e) => e.name === 'RunTask' && e.dur >= LONG_TASK_MS * 1000).sort((a, b) => a.ts - b.ts);
  const samples = cpuSamples(events, main.pid, main.tid);
  return tasks.map((t) => {
    const step = marks.filter((m) => m.ts <= t.ts).pop()?.name ?? 'before opening';
    const parts = onMain
      .filter((e) => e !== t && e.ts >= t.ts && e.ts < t.ts + t.dur && e.dur >= t.dur / 10 && e.name !== 'RunTask')
      .map((e) => `${e.name}${e.args?.data?.type ? `(${e.args.data.type})` : ''} ${f1(e.dur / 1000)}`);
    return { step, ms: t.dur / 1000, parts: [...new Set(parts)].slice(0, 8), functions: selfTimes(samples, t.ts, t.ts + t.dur) };
  });
}

/** The page thread's CPU samples in a recorded trace (PROFILE=1): [time µs, leaf function, stack]. */
function cpuSamples(events, pid, tid) {
  const profiles = new Map();
  for (const e of events) {
    if (e.name === 'Profile' && e.pid === pid && e.tid === tid) profiles.set(e.id, { t: e.args.data.startTime, nodes: new Map(), samples: [] });
  }
  for (const e of events.filter((e) => e.name === 'ProfileChunk' && profiles.has(e.id)).sort((a, b) => a.ts - b.ts)) {
    const p = profiles.get(e.id);
    const d = e.args.data;
    for (const n of d.cpuProfile?.nodes ?? []) p.nodes.set(n.id, n);
    const ids = d.cpuProfile?.samples ?? [];
    const deltas = d.timeDeltas ?? [];
    for (let i = 0; i < ids.length; i++) {
      p.t += deltas[i] ?? 0;
      p.samples.push([p.t, ids[i]]);
    }
  }
  const out = [];
  for (const p of profiles.values()) {
    const name = (n) => n.callFrame.functionName || `(${(n.callFrame.url ?? '').split('/').pop() || 'anonymous'})`;
    for (const [t, id] of p.samples) {
      const stack = [];
      for (let n = p.nodes.get(id); n; n = p.nodes.get(n.parent)) stack.push(name(n));
      out.push([t, stack[0] ?? '?', stack]);
    }
  }
  return out;
}

/** The functions the samples in [from, to) µs were in, by self share (≥ 5%), then the engine's and
 *  page's own (`tidemark::`) functions on the stack by inclusive share (≥ 10%). */
function selfTimes(samples, from, to) {
  const within = samples.filter(([t]) => t >= from && t < to);
  if (!within.length) return [];
  const self = new Map();
  const incl = new Map();
  for (const [, leaf, stack] of within) {
    self.set(leaf, (self.get(leaf) ?? 0) + 1);
    for (const f of new Set(stack.filter((f) => f.startsWith('tidemark::')))) incl.set(f, (incl.get(f) ?? 0) + 1);
  }
  const pct = (m, min) => [...m].sort((a, b) => b[1] - a[1]).filter(([, n]) => n / within.length >= min)
    .map(([f, n]) => `${(100 * n / within.length).toFixed(0)}% ${f.replace(/::h[0-9a-f]{16}$/, '').slice(0, 100)}`);
  return [`self: ${pct(self, 0.05).join('; ')}`, `incl: ${pct(incl, 0.1).slice(0, 12).join('; ')}`];
}

/** Prints the long tasks of a recorded trace (`--tasks FILE.trace.json`), without running anything. */
function printLongTasks(tracePath) {
  for (const t of longTasksOf(tracePath)) {
    console.log(`    ${f1(t.ms).padStart(7)} ms in ${t.step}: ${t.parts.join(', ')}`);
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
      console.log(`  ${tool.padEnd(20)} ${f1(ms).padStart(9)} ms`);
      console.log(`tool_ms\t${r.name}\t${tool}\t${f1(ms)}`);
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
      printLongTasks(r.tracePath);
    }
  }
} finally {
  await browser.close();
  server.close();
}

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
// usage: node bench/browser_tools.mjs [FILE.xplane.pb[.gz] ...]
// default files: the CPU fixtures d2_tf_cnn and a2_jax_mlp_train, and the device fixtures (read in place
// from ../shared/fixtures/device/ where present). Env: KEYS (default 12), CHROMIUM, DIST (the built page to
// serve, default dist/: another build's copy, to time it while dist/ is being rebuilt).
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import path from 'node:path';
import { ROOT, serve, launch, newPage, openApp, pickFiles, waitForFile, workerReady } from '../tests/browser/harness.mjs';

const KEYS = Number(process.env.KEYS || 12);
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
  window.__bench = { longtasks: [], frames: [], framing: false };
  new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__bench.longtasks.push(e.duration); })
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
  const t0 = await page.evaluate(() => performance.now());
  await tab.click();
  return page.evaluate(settled, t0);
}

/** One W/A/D/S press on the trace canvas, timed to the canvas redrawn for the new window. */
async function timeKey(page, key) {
  return page.evaluate(async (key) => {
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
  const t0 = await page.evaluate(() => performance.now());
  await pickFiles(page, [file]);
  await waitForFile(page, name);
  rows.push(['open', (await page.evaluate(() => performance.now())) - t0]);
  const openedBytes = await wasmBytes(page);
  const slugs = await page.$$eval('[data-tool]', (els) => els.map((e) => e.dataset.tool));
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
  }
  const longtasks = await page.evaluate(() => window.__bench.longtasks);
  const peakBytes = await wasmBytes(page);
  await page.context().close();
  return { name, rows, keys, frames, longtasks, openedBytes, peakBytes };
}

const files = process.argv.slice(2).length ? process.argv.slice(2).map((f) => path.resolve(f)) : defaults();
const DIST = path.resolve(process.env.DIST || path.join(ROOT, 'dist'));
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
    console.log(`  long tasks: ${r.longtasks.length}, longest ${f1(longest)} ms`);
    const mib = (b) => `${(b / 2 ** 20).toFixed(0)} MiB (${(b / size).toFixed(1)}× the file)`;
    console.log(`  wasm memory: ${mib(r.openedBytes)} after opening, ${mib(r.peakBytes)} at the end`);
    console.log(`tool_ms\t${r.name}\tlongest-task\t${f1(longest)}`);
  }
} finally {
  await browser.close();
  server.close();
}

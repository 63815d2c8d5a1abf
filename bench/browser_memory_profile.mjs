// In-browser benchmark of the Memory Profile tool (issue 3 §5: "native and in-browser time ... next to
// XProf's converter time, reported as a ratio"). `cargo bench --bench memory_profile` times the engine
// natively; this times what a user waits for in the release page (dist/, from `trunk build --release`),
// in Debian's headless Chromium driven by playwright-core through tests/browser/harness.mjs.
//
// Each run is a fresh page (new browser context): the app is loaded and its engine worker started, then
// the file is chosen through the page's own file input, as with the file picker. Timestamps are taken in
// the page (performance.now(), by event listeners and a MutationObserver installed before the pick), so
// Playwright's polling does not count:
//   open    from the file input's `change` event to the file's Overview drawn (in the DOM, and the next
//           frame painted):
//           read  until the file row says "decoding" (FileReader done; approximate, see below),
//           decode the rest: bytes to the worker, copy into wasm, (gunzip,) decode, overview, reply, render;
//   tab     from the click on the Memory Profile tab to `[data-testid="memory-summary"]` drawn:
//           reply  the page's own "engine reply" figure (request → analysis in the worker → JSON reply
//                  parsed by the page), render the rest (building the view: cards, timeline, breakdown);
//   total   open + tab.
// "read" is when the file row's label turns from "reading" to "decoding": after FileReader's last
// progress event, or at the worker's first decode progress if the browser skips that event.
//
// A fresh page compiles the app's wasm lazily, function by function, and V8 recompiles the hot ones
// with its optimising tier while they run: the first file a user opens pays for that. The file is
// picked as soon as the engine worker takes requests, while it is still warming up (`engine::warmup`),
// as for the files an offline bundle opens by itself. With env IDLE_MS=N the page first sits idle for
// N ms, as when a user opens the page and then drops a file (the warm-up is then over). With env
// WARM=1 each fresh page first opens the same file and its Memory Profile once, untimed (then removes
// it), so the timed run measures the engine's steady speed in wasm instead.
//
// Prints the median of REPEAT runs (env, default 3) per phase per file, then one
// `median_ms<TAB>FILE<TAB>MS` line per file (total, as the native bench prints). With env XPROF_PYTHON
// (a Python with xprof 2.24.2, see bench/xprof_compare.sh), also XProf's converter time on the same file
// (bench/xprof_time.py; gzipped files are inflated first, as XProf reads only uncompressed ones) and the
// ratio xprof / browser total. Timings are reported, never asserted.
//
// usage: node bench/browser_memory_profile.mjs [FILE.xplane.pb[.gz] ...]
//   e.g. REPEAT=3 XPROF_PYTHON=/tmp/xprof-venv/bin/python node bench/browser_memory_profile.mjs
// default files: d2_tf_cnn and d1_tf_keras_bfc (gzipped, as users have them) and the larger real trace
// bench/traces/d2_tf_cnn_250.xplane.pb.gz (19 MB inflated; the d2 fixture script run for 250 steps). Needs dist/
// (`trunk build --release`); env CHROMIUM overrides /usr/bin/chromium.
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { ROOT, serve, launch, newPage, openApp, pickFiles, waitForFile, workerReady } from '../tests/browser/harness.mjs';

const REPEAT = Number(process.env.REPEAT || 3);
const WARM = process.env.WARM === '1';
const IDLE_MS = Number(process.env.IDLE_MS || 0);
const TIMEOUT_MS = 300_000;
const DEFAULT_FILES = [
  'tests/fixtures/tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz',
  'tests/fixtures/tf/d1_tf_keras_bfc/d1_tf_keras_bfc.xplane.pb.gz',
  'bench/traces/d2_tf_cnn_250.xplane.pb.gz',
];
const PHASES = ['read', 'decode', 'open', 'reply', 'render', 'tab', 'total'];

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/**
 * Installed in the page before the pick: records when the user's actions happen and when their answers
 * reach the DOM, into `window.__bench`. `marks.failed` holds the page's message if the file or the
 * analysis fails (too large, out of memory, engine stopped...).
 */
function instrument(name) {
  const marks = {};
  window.__bench = marks;
  const mark = (k, v = performance.now()) => { if (!(k in marks)) marks[k] = v; };
  // After the frame that shows the current DOM has been painted.
  const painted = (k) => requestAnimationFrame(() => setTimeout(() => mark(k)));
  document.addEventListener('change', (e) => { if (e.target.matches?.('[data-testid="file-input"]')) mark('picked'); }, true);
  document.addEventListener('click', (e) => { if (e.target.closest?.('.tab[data-tool="memory-profile"]')) mark('tab'); }, true);
  const row = `.file-row[data-file="${CSS.escape(name)}"]`;
  const check = () => {
    const r = document.querySelector(row);
    if (!('read' in marks) && r && (r.dataset.state !== 'loading' || /decoding/.test(r.textContent))) mark('read');
    const alert = document.querySelector('[data-testid="file-error"] .message, [data-testid="page-alert"] .message');
    if (r?.dataset.state === 'failed' || alert) mark('failed', alert?.textContent || 'the file failed to open');
    if (!('overview' in marks) && document.querySelector(`article.overview[data-file="${CSS.escape(name)}"]`)) { mark('overview'); painted('overview_painted'); }
    if (!('summary' in marks) && document.querySelector('[data-testid="memory-summary"]')) { mark('summary'); painted('summary_painted'); }
    const empty = document.querySelector('[data-testid="memory-profile-empty"]');
    if (empty) mark('failed', empty.textContent);
  };
  new MutationObserver(check).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
}

/** Waits for one of `keys` in the page's marks; throws with the page's message on failure. */
async function waitMark(page, keys) {
  const handle = await page.waitForFunction(
    (keys) => { const m = window.__bench; return m && ('failed' in m || keys.every((k) => k in m)) && m; },
    keys, { timeout: TIMEOUT_MS, polling: 50 });
  const marks = await handle.jsonValue();
  if ('failed' in marks) throw new Error(`the page could not show the Memory Profile: ${marks.failed}`);
  return marks;
}

/** Opens `file` and its Memory Profile once, untimed, then goes back to the Overview tab and removes it. */
async function warmUp(page, file) {
  const name = path.basename(file);
  await pickFiles(page, [file]);
  await waitForFile(page, name);
  await page.click('.tab[data-tool="memory-profile"]');
  await page.waitForSelector('[data-testid="memory-summary"]', { timeout: TIMEOUT_MS });
  await page.click('.tab[data-tool="overview"]');
  await page.click(`.file-row[data-file="${name}"] .close`);
  await page.waitForSelector('[data-testid="landing"]');
  await page.setInputFiles('[data-testid="file-input"]', []);
}

/** One run in a fresh page: the phases of picking `file` and opening its Memory Profile, in ms. */
async function runOnce(browser, url, file) {
  const name = path.basename(file);
  const page = await newPage(browser);
  try {
    await openApp(page, url);
    await workerReady(page);
    if (IDLE_MS) await new Promise((r) => setTimeout(r, IDLE_MS));
    if (WARM) await warmUp(page, file);
    await page.evaluate(instrument, name);
    await pickFiles(page, [file]);
    await waitMark(page, ['picked', 'read', 'overview_painted']);
    await page.click('.tab[data-tool="memory-profile"]');
    const m = await waitMark(page, ['tab', 'summary_painted']);
    const reply = Number(await page.$eval('[data-metric="memory_profile_reply_ms"]', (e) => e.dataset.value));
    if (page.errors.length) throw new Error(`page errors: ${page.errors.join('; ')}`);
    const open = m.overview_painted - m.picked;
    const tab = m.summary_painted - m.tab;
    return { read: m.read - m.picked, decode: m.overview_painted - m.read, open, reply, render: tab - reply, tab, total: open + tab };
  } finally {
    await page.context().close();
  }
}

/** XProf's converter time per file (bench/xprof_time.py), or null without XPROF_PYTHON. */
function xprofTimes(files) {
  const py = process.env.XPROF_PYTHON;
  if (!py) return null;
  const out = execFileSync(py, [path.join(ROOT, 'bench/xprof_time.py'), ...files],
    { env: { ...process.env, REPEAT: String(REPEAT) }, stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 1 << 20 });
  const ms = new Map();
  for (const line of out.toString().split('\n')) {
    const [tag, f, v] = line.split('\t');
    if (tag === 'median_ms') ms.set(f, Number(v));
  }
  return ms;
}

async function main() {
  const files = (process.argv.length > 2 ? process.argv.slice(2) : DEFAULT_FILES).map((f) => path.resolve(ROOT, f));
  for (const f of files) {
    if (!existsSync(f)) throw new Error(`${f} does not exist`);
  }
  if (!existsSync(path.join(ROOT, 'dist/index.html'))) throw new Error('dist/ is missing: run `trunk build --release` first');
  if (process.env.XPROF_PYTHON) {
    try {
      execFileSync(process.env.XPROF_PYTHON, [path.join(ROOT, 'bench/xprof_time.py'), '--check'], { stdio: 'inherit' });
    } catch {
      process.exit(2); // xprof_time.py said why
    }
  }

  const server = await serve();
  const browser = await launch();
  const results = [];
  try {
    console.log(`Memory Profile in the browser (Chromium ${browser.version()}, ${WARM ? 'warm: the file opened once before in the same page' : 'cold: a fresh page'}), median of ${REPEAT} runs, ms`);
    for (const file of files) {
      const runs = [];
      for (let i = 0; i < REPEAT; i++) {
        const r = await runOnce(browser, server.url, file);
        console.error(`# ${path.basename(file)} run ${i + 1}: ` + PHASES.map((p) => `${p} ${r[p].toFixed(0)}`).join(', '));
        runs.push(r);
      }
      results.push({ file, med: Object.fromEntries(PHASES.map((p) => [p, median(runs.map((r) => r[p]))])) });
    }
  } finally {
    await browser.close();
    server.close();
  }

  const xprof = xprofTimes(files);
  const head = ['file', 'MB', ...PHASES, ...(xprof ? ['xprof', 'ratio'] : [])];
  const rows = results.map(({ file, med }) => {
    const x = xprof?.get(file);
    return [path.basename(file), (statSync(file).size / 1e6).toFixed(1), ...PHASES.map((p) => med[p].toFixed(0)),
      ...(xprof ? [x?.toFixed(0) ?? 'n/a', x ? `${(x / med.total).toFixed(1)}x` : 'n/a'] : [])];
  });
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  for (const r of [head, ...rows]) console.log(r.map((c, i) => (i ? c.padStart(width[i]) : c.padEnd(width[i]))).join('  '));
  for (const { file, med } of results) console.log(`median_ms\t${path.relative(ROOT, file)}\t${med.total.toFixed(3)}`);
}

main().catch((e) => { console.error(`browser_memory_profile: ${e.message ?? e}`); process.exit(1); });

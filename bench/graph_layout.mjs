// In-page timing of the Graph tool (issue 29), in the built page (build it with `trunk build --release`
// for release figures): never asserted, reported in bench/RESULTS.md.
//
// 1. Layout time against the node count: the ladders of 100, 1,000 and 6,500 instructions that the
//    native half writes (`cargo test --release --test graph_viewer bench_layout -- --ignored --nocapture`,
//    into $CARGO_TARGET_DIR/graph-bench or target/graph-bench), each drawn whole (centre `main`): the
//    worker's answer — the graph, its figures and its layout, in wasm — as the page shows it ("answered
//    in", the `graph_answer_ms` figure). The largest fixture module's overview is timed the same way
//    (`graph_overview_answer_ms`).
// 2. Panning the overview of that module: drags and wheel turns over its canvas while a
//    PerformanceObserver records the main thread's long tasks (over 50 ms); the longest, their count,
//    and the slowest frame the canvas reports (`data-draw-ms`).
//
// usage: node bench/graph_layout.mjs      Env: RUNS (default 5; the median is printed), DIST, BENCH_DIR.
import path from 'node:path';
import { existsSync } from 'node:fs';
import { ROOT, serve, launch, newPage, openApp, pickFiles, waitForFile, selectFile, fixture } from '../tests/browser/harness.mjs';

const RUNS = Number(process.env.RUNS || 5);
const dir = process.env.BENCH_DIR || path.join(process.env.CARGO_TARGET_DIR || path.join(ROOT, 'target'), 'graph-bench');
const ladders = [100, 1000, 6500].map((n) => ({ file: path.join(dir, `ladder_${n}.hlo.pb`), module: `ladder_${n}`, node: 'main' }));
const missing = ladders.filter((l) => !existsSync(l.file));
if (missing.length) {
  console.error(`no ${missing.map((l) => l.file).join(', ')}: run the native half first (see the header)`);
  process.exit(2);
}
// The largest module among the fixtures (1,430 instructions; tests/graph_viewer.rs bench_layout).
const largest = { file: fixture('jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz'), module: 'jit_init_params(4)' };

const server = await serve(process.env.DIST);
const browser = await launch();
const page = await newPage(browser);
await openApp(page, server.url);
const files = [...ladders.map((l) => l.file), largest.file];
await pickFiles(page, files);
for (const f of files) await waitForFile(page, path.basename(f));

/** Opens `module` of `file` centred on `node` (`null`: its entry root) at `width` through the URL;
 * waits for its answer. */
async function answer(file, module, node, width) {
  const centre = node === null ? '' : `&node=${encodeURIComponent(node)}`;
  // The file chosen first: a URL naming another file than the selected one loses its node (the page
  // forgets a node when the file changes).
  await selectFile(page, path.basename(file));
  const hash = `#tool=graph&file=${encodeURIComponent(path.basename(file))}&module=${encodeURIComponent(module)}${centre}&width=${width}`;
  // The time on screen is kept; the new answer's differs (the page updates the figure in place).
  await page.evaluate((h) => {
    window.__answerMs = document.querySelector('[data-metric="graph_answer_ms"]')?.dataset.value;
    location.hash = h;
  }, hash);
  await page.waitForFunction((n) => {
    const ready = document.querySelector('[data-testid="graph-viewer"][data-state="ready"]');
    const ms = document.querySelector('[data-metric="graph_answer_ms"]')?.dataset.value;
    return ready && (n === null || ready.querySelector('[data-metric="graph_center"]')?.dataset.value === n) && ms && ms !== window.__answerMs;
  }, node, { timeout: 300_000 });
  return {
    nodes: Number(await page.getAttribute('[data-metric="graph_nodes"]', 'data-value')),
    ms: Number(await page.getAttribute('[data-metric="graph_answer_ms"]', 'data-value')),
  };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

console.log('case\tnodes\tmedian_ms\truns_ms');
for (const l of ladders) {
  const times = [];
  let nodes = 0;
  // The first answer of a file also reads it; left out.
  for (let r = 0; r <= RUNS; r++) {
    // Another width between runs, so each run is a fresh request rather than the reply on screen.
    const a = await answer(l.file, l.module, l.node, 1 + (r % 2));
    nodes = a.nodes;
    if (r > 0) times.push(a.ms);
  }
  console.log(`${l.module} (whole)\t${nodes}\t${median(times).toFixed(1)}\t${times.map((t) => t.toFixed(0)).join(',')}`);
}

/** The overview of `module` of `file` opened afresh (from another module), RUNS times: its answer. */
async function overview(file, module) {
  const times = [];
  let nodes = 0;
  for (let r = 0; r <= RUNS; r++) {
    const other = ladders.find((l) => l.module !== module);
    await answer(other.file, other.module, 'main', 1);
    await page.evaluate(() => { window.__overviewMs = document.querySelector('[data-metric="graph_overview_answer_ms"]')?.dataset.value; });
    await answer(file, module, null, 1);
    await page.waitForFunction(() => {
      const ms = document.querySelector('[data-testid="graph-overview"][data-state="ready"] [data-metric="graph_overview_answer_ms"]')?.dataset.value;
      return ms && ms !== window.__overviewMs;
    }, null, { timeout: 300_000 });
    await page.waitForSelector('[data-testid="graph-overview-canvas"][data-marked]');
    nodes = Number(await page.getAttribute('[data-metric="overview_nodes"]', 'data-value'));
    const ms = Number(await page.getAttribute('[data-metric="graph_overview_answer_ms"]', 'data-value'));
    if (r > 0) times.push(ms);
  }
  console.log(`${module} (overview)\t${nodes}\t${median(times).toFixed(1)}\t${times.map((t) => t.toFixed(0)).join(',')}`);
  return nodes;
}

/** Wheel turns in, drags, wheel turns out over the overview on screen: its frames and the main
 * thread's long tasks meanwhile. */
async function pan(label, nodes) {
  const box = await page.locator('[data-testid="graph-overview-canvas"]').boundingBox();
  await page.evaluate(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => window.__longTasks.push(...list.getEntries().map((e) => e.duration))).observe({ type: 'longtask' });
    window.__drawMs = [];
    const c = document.querySelector('[data-testid="graph-overview-canvas"]');
    new MutationObserver(() => window.__drawMs.push(Number(c.dataset.drawMs))).observe(c, { attributes: true, attributeFilter: ['data-draw-ms'] });
  });
  const cx = box.x + box.width / 2, cy = box.y + box.height / 2;
  await page.mouse.move(cx, cy);
  const wheel = async (dy) => {
    for (let k = 0; k < 10; k++) {
      await page.mouse.wheel(0, dy);
      await page.waitForTimeout(30);
    }
  };
  await wheel(-200);
  for (let k = 0; k < 4; k++) {
    await page.mouse.move(cx, cy);
    await page.mouse.down();
    for (let s = 1; s <= 20; s++) await page.mouse.move(cx + (k % 2 ? -1 : 1) * s * 15, cy + (k < 2 ? 1 : -1) * s * 5);
    await page.mouse.up();
  }
  await wheel(200);
  await page.waitForTimeout(200);
  const { longTasks, drawMs } = await page.evaluate(() => ({ longTasks: window.__longTasks, drawMs: window.__drawMs }));
  console.log(`pan and zoom of ${label}'s overview (${nodes} nodes): ${drawMs.length} frames, slowest ${Math.max(0, ...drawMs).toFixed(1)} ms, median ${median(drawMs.length ? drawMs : [0]).toFixed(1)} ms; ${longTasks.length} long tasks (over 50 ms), longest ${Math.max(0, ...longTasks).toFixed(0)} ms`);
}

// The overviews of the largest fixture module and of the largest ladder (no fusions: every
// instruction a node), each then panned.
const big = ladders[ladders.length - 1];
for (const m of [largest, big]) {
  const nodes = await overview(m.file, m.module);
  await pan(m.module, nodes);
}
await browser.close();
server.close();

// In-page timing of the Graph tool (issue 29): for growing graphs of one module, the worker's answer —
// the graph, its figures and its layout, in the release wasm — as the page shows it ("answered in", the
// `graph_answer_ms` figure), against the node count. Reported in bench/RESULTS.md, never asserted.
//
// usage: node bench/graph_layout.mjs [FILE MODULE NODE[:WIDTH] ...]
// default: a2_mlp_train's jit_train_step(14), around ynn_fusion.5 at widths 1, 3, 10 and its entry
// computation (main.22) whole. Each case runs RUNS times (default 5; the first answer also computes the file's
// op metrics once, so the first case's first run is left out); the median is printed.
// Env: RUNS, CHROMIUM, DIST (the built page, default dist/).
import path from 'node:path';
import { ROOT, serve, launch, newPage, openApp, pickFiles, waitForFile, selectFile } from '../tests/browser/harness.mjs';

const RUNS = Number(process.env.RUNS || 5);
const args = process.argv.slice(2);
const file = args[0] || path.join(ROOT, 'tests/fixtures/jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz');
const module = args[1] || 'jit_train_step(14)';
const cases = (args.length > 2 ? args.slice(2) : ['ynn_fusion.5:1', 'ynn_fusion.5:3', 'ynn_fusion.5:10', 'main.22']).map((c) => {
  const [node, width] = c.split(':');
  return { node, width: Number(width || 1) };
});

const server = await serve(process.env.DIST);
const browser = await launch();
const page = await newPage(browser);
await openApp(page, server.url);
await pickFiles(page, [file]);
const name = path.basename(file);
await waitForFile(page, name);
await selectFile(page, name);

/** Opens the graph of `node` at `width` through the URL and waits for its answer. */
async function answer(node, width, run) {
  const hash = `#tool=graph&module=${encodeURIComponent(module)}&node=${encodeURIComponent(node)}&width=${width}&run=${run}`;
  // The figure on screen is marked; the new answer draws a new one.
  await page.evaluate((h) => {
    const old = document.querySelector('[data-metric="graph_answer_ms"]');
    if (old) old.dataset.old = '1';
    location.hash = h;
  }, hash);
  await page.waitForFunction((n) => {
    const ready = document.querySelector('[data-testid="graph-viewer"][data-state="ready"]');
    const ms = document.querySelector('[data-metric="graph_answer_ms"]');
    return ready && ready.querySelector('[data-metric="graph_center"]')?.dataset.value === n && ms && !ms.dataset.old;
  }, node, { timeout: 120_000 });
  return {
    nodes: Number(await page.getAttribute('[data-metric="graph_nodes"]', 'data-value')),
    ms: Number(await page.getAttribute('[data-metric="graph_answer_ms"]', 'data-value')),
  };
}

console.log(`file\t${name}\nmodule\t${module}\nnodes\tmedian_ms\truns_ms`);
let first = true;
for (const c of cases) {
  const node = c.node;
  const times = [];
  let nodes = 0;
  for (let r = 0; r < RUNS + (first ? 1 : 0); r++) {
    // Another graph between runs, so each run is a fresh request rather than the reply on screen.
    if (r > 0) await answer(node, c.width + 1, `x${r}`);
    const a = await answer(node, c.width, r);
    nodes = a.nodes;
    if (!(first && r === 0)) times.push(a.ms);
  }
  first = false;
  times.sort((a, b) => a - b);
  console.log(`${nodes}\t${times[times.length >> 1].toFixed(1)}\t${times.map((t) => t.toFixed(0)).join(',')}\t(${node} width ${c.width})`);
}
await browser.close();
server.close();

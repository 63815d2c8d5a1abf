// The Graph tool's figures and links on a2_mlp_train (JAX on CPU), read through data-metric and
// compared with the CLI (`tidemark graph-viewer --format json`, whose figures tests/graph_viewer_figures.rs
// checks against XProf's Memory Viewer and our XLA ops table): the centre's card (time, buffers),
// colouring by time and by bytes with the legend's top, and the links both ways — the card to the op's
// XLA ops row, its buffers in the Memory Viewer and its events in the Trace Viewer, and back from a
// Memory Viewer buffer and a Trace Viewer event to the graph at that instruction.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { serve, launch, newPage, openApp, pickFiles, waitForFile, selectFile, metric, one, close, shot, fixture, ROOT } from './harness.mjs';

const A2 = fixture('jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz');
const NAME = 'a2_mlp_train.xplane.pb.gz';
const MODULE = 'jit_train_step(14)';
// Defines the largest buffer at the Memory Viewer's peak (XProf's maxHeap[0]).
const OP = 'multiply_add_fusion.14';
const bin = () => process.env.TIDEMARK_BIN || path.join(ROOT, 'target/debug/tidemark');

function cliGraph(node, width = 1) {
  const args = ['graph-viewer', A2, '--module', MODULE, '--node', node, '--width', String(width), '--format', 'json'];
  return JSON.parse(execFileSync(bin(), args, { maxBuffer: 64 << 20 }).toString());
}

let server, browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

async function shows(page, center) {
  await page.waitForFunction((c) => document.querySelector('[data-testid="graph-viewer"][data-state="ready"] [data-metric="graph_center"]')?.dataset.value === c,
    center, { timeout: 60_000 });
}

async function graphFromXlaOps(page, op) {
  await page.click('.tab[data-tool="xla-ops-cpu"]');
  await page.waitForSelector('[data-testid="xla-ops-cpu"][data-state="ready"] table.xoc-table', { timeout: 60_000 });
  await page.fill('[data-testid="xoc-filter"]', op);
  const row = `tr[data-op="${op}"][data-module="jit_train_step"]`;
  await page.waitForSelector(row);
  await page.click(`${row} [data-testid="op-show-graph"]`);
  await shows(page, op);
}

test('a2_mlp_train: the card\'s figures, colour by time and by bytes, and links both ways', { timeout: 300_000 }, async () => {
  const page = await newPage(browser);
  await openApp(page, server.url);
  await pickFiles(page, [A2]);
  await waitForFile(page, NAME);
  await selectFile(page, NAME);
  await graphFromXlaOps(page, OP);
  const cli = cliGraph(OP);
  const figures = cli.figures.by_name;
  assert.equal(cli.figures.time_source, 'xla_ops_cpu');

  // The card: the op's self time and the buffers it defines.
  assert.equal(await one(page, 'card_name'), OP);
  assert.ok(close(await one(page, 'card_self_time_us'), figures[OP].self_time_us));
  assert.ok(close(await one(page, 'card_time_fraction'), figures[OP].self_time_fraction));
  for (const [buffer, bytes] of figures[OP].buffers) {
    assert.equal(await one(page, 'card_buffer_bytes', buffer), String(bytes));
  }

  // Colour by time: each node's share, and the legend's top the largest of them.
  await page.click('[data-testid="graph-shade-time"]');
  await page.waitForSelector('[data-testid="graph-canvas"][data-shade="time"]');
  const timed = Object.entries(figures).filter(([, f]) => f.self_time_fraction != null);
  const nodeNames = new Set(cli.nodes.map((n) => n.name));
  for (const [name, f] of timed.filter(([n]) => nodeNames.has(n))) {
    assert.ok(close(await one(page, 'node_time_fraction', name), f.self_time_fraction), name);
  }
  assert.ok(close(await one(page, 'graph_shade_max'), Math.max(...timed.map(([, f]) => f.self_time_fraction))));
  await shot(page, 'graph-viewer-time');

  // Colour by bytes: each node's buffers summed.
  await page.click('[data-testid="graph-shade-bytes"]');
  await page.waitForSelector('[data-testid="graph-canvas"][data-shade="bytes"]');
  const sized = Object.entries(figures).filter(([, f]) => f.buffers.length > 0).map(([n, f]) => [n, f.buffers.reduce((s, b) => s + b[1], 0)]);
  for (const [name, bytes] of sized.filter(([n]) => nodeNames.has(n))) {
    assert.equal(await one(page, 'node_bytes', name), String(bytes), name);
  }
  assert.equal(await one(page, 'graph_shade_max'), String(Math.max(...sized.map(([, b]) => b))));
  await shot(page, 'graph-viewer-bytes');

  // Back to the op's row in XLA ops.
  await page.click('[data-testid="graph-card"] [data-testid="node-show-xla-ops"]');
  await page.waitForSelector('[data-testid="xla-ops-cpu"][data-state="ready"] table.xoc-table', { timeout: 60_000 });
  assert.equal(await page.inputValue('[data-testid="xoc-filter"]'), OP);
  await page.waitForSelector(`tr[data-op="${OP}"][data-module="jit_train_step"]`);

  // The card's buffers: the Memory Viewer on the module with the op's buffers marked; one of them
  // back to the graph, centred on the instruction that defines it.
  await page.click(`tr[data-op="${OP}"][data-module="jit_train_step"] [data-testid="op-show-graph"]`);
  await shows(page, OP);
  await page.click('[data-testid="graph-card"] [data-testid="node-show-buffers"]');
  const marked = '[data-testid="peak-buffer"][data-highlighted="true"]';
  await page.waitForSelector(marked, { timeout: 60_000 });
  await shot(page, 'graph-viewer-buffers');
  await page.click(`${marked} [data-testid="buffer-show-graph"]`);
  await shows(page, OP);

  // The card's occurrences: the Trace Viewer on the op's events, the first opened; the event's
  // "graph" comes back to the op.
  await page.click('[data-testid="graph-card"] [data-testid="node-show-occurrences"]');
  await page.waitForSelector('[data-metric="search_match_count"]', { timeout: 60_000 });
  assert.equal(await page.inputValue('[data-testid="trace-search"]'), `="${OP}"`);
  await page.waitForSelector('[data-testid="event-details"]', { timeout: 60_000 });
  assert.equal(await one(page, 'event_arg', 'hlo_op'), OP);
  await page.click('[data-testid="trace-details"] [data-testid="event-show-graph"]');
  await shows(page, OP);
  assert.deepEqual(page.errors, []);
  await page.close();
});

// The Graph tool on a2_mlp_train (JAX on CPU): opened from an XLA ops row's "graph" link, it shows the
// CLI's graph (`tidemark graph-viewer --format json`, whose DOT equals XProf's, tests/graph_viewer.rs):
// the same nodes, read through data-metric; the centre's card and place (a fusion at the centre, drawn
// as its cluster); a node of the list re-centres it, the search centres on a named instruction, the
// width control widens it; module, node and width are in the URL. A second test reads the card's
// figures, the colouring by time and by bytes, and follows the links both ways.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { writeFileSync } from 'node:fs';
import { serve, launch, newPage, openApp, pickFiles, waitForFile, selectFile, metric, one, close, shot, fixture, cliGraph, graphNames, showsGraph, pb } from './harness.mjs';
import { scratchDir } from './support/scratch.mjs';

const A2 = fixture('jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz');
const NAME = 'a2_mlp_train.xplane.pb.gz';
const MODULE = 'jit_train_step(14)';
/** The CLI's graph of the same module: what the page must show. */
const a2Graph = (node, width = 1) => cliGraph(A2, MODULE, node, width);

let server, browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });


async function graphFromXlaOps(page, op) {
  await page.click('.tab[data-tool="xla-ops-cpu"]');
  await page.waitForSelector('[data-testid="xla-ops-cpu"][data-state="ready"] table.xoc-table', { timeout: 60_000 });
  await page.fill('[data-testid="xoc-filter"]', op);
  const row = `tr[data-op="${op}"][data-module="jit_train_step"]`;
  await page.waitForSelector(row);
  await page.click(`${row} [data-testid="op-show-graph"]`);
  await showsGraph(page, op);
}

/** Clicks the main canvas along the centre's column, then its row, a step further from the centre
 * each time, until the page asks for another node than `center`; that node's name. */
async function clickAnotherNode(page, center) {
  const canvas = page.locator('[data-testid="graph-canvas"]');
  const box = await canvas.boundingBox();
  const [cx, cy] = (await canvas.getAttribute('data-center-at')).split(',').map(Number);
  const nodeInUrl = () => page.evaluate(() => decodeURIComponent(/[#&]node=([^&]*)/.exec(location.hash)?.[1] ?? ''));
  const offsets = [];
  for (let d = 8; d < Math.max(box.width, box.height); d += 8) offsets.push([0, -d], [0, d], [-d, 0], [d, 0]);
  for (const [dx, dy] of offsets) {
    const [x, y] = [cx + dx, cy + dy];
    if (x < 1 || y < 1 || x > box.width - 1 || y > box.height - 1) continue;
    await page.mouse.click(box.x + x, box.y + y);
    const node = await nodeInUrl();
    if (node && node !== center) return node;
  }
  throw new Error(`no node but ${center} under a click`);
}

test('a2_mlp_train: the graph from an op row, re-centred, searched and widened', async () => {
  const page = await newPage(browser);
  await openApp(page, server.url);
  await pickFiles(page, [A2]);
  await waitForFile(page, NAME);
  await selectFile(page, NAME);
  // "graph" on an op of jit_train_step: the Graph tool on its module, centred on it.
  const op = 'ynn_fusion.5';
  await graphFromXlaOps(page, op);
  let cli = a2Graph(op);
  assert.deepEqual((await metric(page, 'graph_node')).sort(), graphNames(cli));
  assert.equal(await one(page, 'graph_nodes'), String(graphNames(cli).length));
  assert.equal(await one(page, 'graph_edges'), String(cli.edges.length));
  assert.equal(await one(page, 'graph_clusters'), String(cli.clusters.length));
  // The centre, a fusion drawn as its fused computation (a cluster): its card reads the instruction
  // (the CLI's `center_node`) and the canvas frames the cluster.
  assert.equal(await one(page, 'card_name'), op);
  assert.equal(await one(page, 'card_opcode'), 'fusion');
  assert.equal(await one(page, 'card_hlo_text'), cli.center_node.expression);
  assert.match(await one(page, 'card_hlo_text'), /^%ynn_fusion\.5 = f32\[128,256\]/);
  const hash = await page.evaluate(() => location.hash);
  assert.match(hash, /tool=graph-viewer/);
  assert.match(hash, new RegExp(`module=${encodeURIComponent(MODULE).replace(/[()]/g, '\\$&')}`));
  assert.match(hash, /node=ynn_fusion\.5/);
  const at = (await page.getAttribute('[data-testid="graph-canvas"]', 'data-center-at')).split(',').map(Number);
  const box = await page.locator('[data-testid="graph-canvas"]').boundingBox();
  assert.ok(at[0] > 0 && at[0] < box.width && at[1] > 0 && at[1] < box.height, `the centre is in view: ${at}`);
  await shot(page, 'graph-viewer');

  // Re-centre on a node of the list.
  const next = graphNames(cli).find((n) => n.startsWith('broadcast_maximum_fusion'));
  await page.click(`[data-metric="graph_node"][data-value="${next}"]`);
  await showsGraph(page, next);
  cli = a2Graph(next);
  assert.deepEqual((await metric(page, 'graph_node')).sort(), graphNames(cli));

  // A click on a node of the canvas re-centres there: clicks along the centre's column and row,
  // outwards from it, until one lands on another node (a click on the centre or on empty space
  // changes nothing); the graph is then the CLI's around the node clicked.
  const clicked = await clickAnotherNode(page, next);
  assert.ok(graphNames(cli).includes(clicked), `${clicked} was drawn around ${next}`);
  await showsGraph(page, clicked);
  assert.deepEqual((await metric(page, 'graph_node')).sort(), graphNames(a2Graph(clicked)));

  // Search by instruction name.
  await page.fill('[data-testid="graph-search"]', 'add_select_fusion');
  await page.press('[data-testid="graph-search"]', 'Enter');
  await showsGraph(page, 'add_select_fusion');
  // Wider: two hops.
  await page.click('[data-testid="graph-width-more"]');
  await page.waitForFunction(() => document.querySelector('[data-metric="graph_width"]')?.dataset.value === '2');
  cli = a2Graph('add_select_fusion', 2);
  await page.waitForFunction((n) => document.querySelector('[data-testid="graph-viewer"][data-state="ready"] [data-metric="graph_nodes"]')?.dataset.value === String(n),
    graphNames(cli).length, { timeout: 60_000 });
  assert.deepEqual((await metric(page, 'graph_node')).sort(), graphNames(cli));
  assert.match(await page.evaluate(() => location.hash), /width=2/);

  // A node that is not in the module: the engine's message.
  await page.fill('[data-testid="graph-search"]', 'no_such_op');
  await page.press('[data-testid="graph-search"]', 'Enter');
  await page.waitForSelector('[data-testid="graph-error"]', { timeout: 60_000 });
  assert.match(await page.textContent('[data-testid="graph-error"]'), /no instruction or computation named `no_such_op`/);
  await page.close();
});

// The card's figures and the links both ways (a second page on the same file): the CLI's figures
// (tests/graph_viewer_figures.rs checks them against XProf's Memory Viewer and our XLA ops table) on
// the card and as node colours by time and by bytes with the legend's top; the card to the op's XLA ops
// row, its buffers in the Memory Viewer and its events in the Trace Viewer, and back from a Memory
// Viewer buffer and a Trace Viewer event to the graph at that instruction.
// Defines the largest buffer at the Memory Viewer's peak (XProf's maxHeap[0]).
const OP = 'multiply_add_fusion.14';

test('a2_mlp_train: the card\'s figures, colour by time and by bytes, and links both ways', { timeout: 300_000 }, async () => {
  const page = await newPage(browser);
  await openApp(page, server.url);
  await pickFiles(page, [A2]);
  await waitForFile(page, NAME);
  await selectFile(page, NAME);
  await graphFromXlaOps(page, OP);
  const cli = a2Graph(OP);
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
  await showsGraph(page, OP);
  await page.click('[data-testid="graph-card"] [data-testid="node-show-buffers"]');
  const marked = '[data-testid="peak-buffer"][data-highlighted="true"]';
  await page.waitForSelector(marked, { timeout: 60_000 });
  await shot(page, 'graph-viewer-buffers');
  await page.click(`${marked} [data-testid="buffer-show-graph"]`);
  await showsGraph(page, OP);

  // The card's occurrences: the Trace Viewer on the op's events, the first opened; the event's
  // "graph" comes back to the op.
  await page.click('[data-testid="graph-card"] [data-testid="node-show-occurrences"]');
  await page.waitForSelector('[data-metric="search_match_count"]', { timeout: 60_000 });
  assert.equal(await page.inputValue('[data-testid="trace-search"]'), `="${OP}"`);
  await page.waitForSelector('[data-testid="event-details"]', { timeout: 60_000 });
  assert.equal(await one(page, 'event_arg', 'hlo_op'), OP);
  await page.click('[data-testid="trace-details"] [data-testid="event-show-graph"]');
  await showsGraph(page, OP);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a pasted link to another file\'s graph keeps its node', async () => {
  const page = await newPage(browser);
  await openApp(page, server.url);
  const D2 = fixture('tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz');
  await pickFiles(page, [A2, D2]);
  await waitForFile(page, NAME);
  await waitForFile(page, 'd2_tf_cnn.xplane.pb.gz');
  await selectFile(page, NAME);
  const op = 'ynn_fusion.5';
  await graphFromXlaOps(page, op);
  const link = await page.evaluate(() => location.hash);
  // Another file shown, then the link pasted: its file, module and node come back together (the
  // page forgets a file's node when another file is chosen, not when a link chooses it with its own).
  await selectFile(page, 'd2_tf_cnn.xplane.pb.gz');
  await page.waitForFunction((l) => location.hash !== l && /file=d2_tf_cnn/.test(location.hash), link);
  await page.evaluate((l) => { location.hash = l; }, link);
  await showsGraph(page, op, 60_000);
  assert.match(await page.evaluate(() => location.hash), /node=ynn_fusion\.5/);
  assert.deepEqual(page.errors, []);
});

/** An HloProto dump of one computation: `n` f32[4] parameters and a tuple of them all, its root. */
function wideHlo(name, n) {
  const { int, len, msg, varint } = pb;
  const shape = len(3, msg(int(2, 11), int(3, 4)));
  const instr = (id, iname, opcode, ...more) => len(2, msg(len(1, iname), len(2, opcode), shape, ...more, int(35, id)));
  const ids = Array.from({ length: n }, (_, k) => k + 1);
  const params = ids.map((id) => instr(id, `p.${id - 1}`, 'parameter', int(9, id - 1)));
  const root = instr(n + 1, 'tuple', 'tuple', len(36, Buffer.concat(ids.map(varint))));
  const computation = msg(len(1, 'main'), ...params, root, int(5, 1), int(6, n + 1));
  return msg(len(1, msg(len(1, name), len(2, 'main'), len(3, computation), int(6, 1))));
}

// A root with 50,000 operands (the engine's cut, tests/graph_viewer.rs, in the page): the
// neighbourhood is cut to the engine's bound with its note on the page, the same nodes as the CLI's,
// and the page answers without a hang: drawn within the timeout, then still zooming.
test('a 50,000-operand root: the bounded neighbourhood and its note, without a hang', { timeout: 300_000 }, async () => {
  const n = 50_000;
  const file = path.join(scratchDir('tidemark-wide-'), `wide_${n}.hlo.pb`);
  writeFileSync(file, wideHlo(`wide_${n}`, n));
  const cli = cliGraph(file, `wide_${n}`, 'tuple');
  assert.ok(graphNames(cli).length < n, `the CLI's graph is bounded: ${graphNames(cli).length}`);
  assert.ok(cli.notes.some((t) => /only the first/.test(t)), cli.notes.join('; '));
  const page = await newPage(browser);
  await openApp(page, server.url);
  await pickFiles(page, [file]);
  await waitForFile(page, path.basename(file));
  await selectFile(page, path.basename(file));
  await page.evaluate((h) => { location.hash = h; }, `#tool=graph-viewer&file=${path.basename(file)}&module=wide_${n}&node=tuple&width=1`);
  await showsGraph(page, 'tuple', 240_000);
  assert.equal(await one(page, 'graph_nodes'), String(graphNames(cli).length));
  assert.equal(await one(page, 'graph_edges'), String(cli.edges.length));
  const notes = await page.locator('[data-testid="graph-note"]').allTextContents();
  assert.deepEqual(notes, cli.notes);
  // The page still answers: a wheel turn over the canvas zooms it.
  const canvas = page.locator('[data-testid="graph-canvas"]');
  const scale = await canvas.getAttribute('data-scale');
  const box = await canvas.boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.wheel(0, -400);
  await page.waitForFunction((s) => document.querySelector('[data-testid="graph-canvas"]')?.dataset.scale !== s, scale, { timeout: 30_000 });
  await shot(page, 'graph-viewer-wide');
  assert.deepEqual(page.errors, []);
  await page.close();
});

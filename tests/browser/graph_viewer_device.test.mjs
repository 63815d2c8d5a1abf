// The Graph tool on an NVIDIA H200 JAX trace (n2_cnn_bf16, read in place from ../shared/fixtures/device,
// skipped with a note when absent): opened from an Op Profile op's card, it shows the CLI's graph
// (`tidemark graph-viewer --format json`) through data-metric, with the op's device time on the card;
// the whole module's overview (`--overview`) marks the neighbourhood's nodes and a click on one of its
// nodes re-centres the graph there; the search centres on a named instruction; the colouring is kept
// in the URL with the module, node and width and restored from a URL opened afresh. A second test opens
// the graph from a Memory Viewer buffer: centred on the instruction that defines it. A third, in the
// dark theme, follows HLO ops and Roofline rows to the graph and the card back to them and to Op
// Profile, and zooms and pans the canvas.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { DEVICE, deviceSkip, cliGraph, graphNames, showsGraph, serve, launch, newPage, openApp, pickFiles, waitForFile, selectFile, metric, one, close, shot } from './harness.mjs';

const N2 = path.join(DEVICE, 'nvidia_h200_jax/n2_cnn_bf16/n2_cnn_bf16.xplane.pb.gz');
const NAME = 'n2_cnn_bf16.xplane.pb.gz';
const absent = deviceSkip(N2);
if (absent) console.log(`# graph_viewer_device: ${absent}; its tests are skipped`);
/** The CLI's graph (or, with `node` null, its overview) of `module`. */
const cli = (module, node, width = 1) => cliGraph(N2, module, node, width);

let server, browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });


const hashModule = async (page) => decodeURIComponent((await page.evaluate(() => location.hash)).match(/module=([^&]*)/)[1]);

async function openTrace(page, url = server.url) {
  await openApp(page, url);
  await pickFiles(page, [N2]);
  await waitForFile(page, NAME);
  await selectFile(page, NAME);
}

/** The overview drawn, and its figures read. */
async function overviewShown(page) {
  await page.waitForSelector('[data-testid="graph-overview"][data-state="ready"] [data-testid="graph-overview-canvas"][data-marked]', { timeout: 120_000 });
}

test('H200 n2_cnn_bf16: the graph from an Op Profile op, its overview, re-centred and searched; colour in the URL', { skip: absent, timeout: 600_000 }, async () => {
  const page = await newPage(browser);
  await openTrace(page);
  await page.click('.tab[data-tool="op-profile"]');
  await page.waitForSelector('[data-testid="op-profile"][data-state="ready"]', { timeout: 120_000 });
  // The costliest fusion (the tree's first op is a delay kernel, no HLO instruction): its card's "graph".
  await page.fill('[data-testid="opp-search"]', 'fusion');
  await page.waitForFunction(() => {
    const ops = [...document.querySelectorAll('.opp-scroll .opp-row.op')];
    return ops.length > 0 && ops.every((r) => r.dataset.name.includes('fusion'));
  });
  const op = await page.waitForSelector('.opp-scroll .opp-row.op');
  const name = await op.getAttribute('data-name');
  await op.click();
  await page.waitForSelector(`[data-testid="opp-card"] [data-metric="card_name"][data-value="${name}"]`);
  await page.click('[data-testid="opp-card"] [data-testid="op-show-graph"]');
  await showsGraph(page, name);
  const module = await hashModule(page);
  assert.match(await page.evaluate(() => location.hash), /tool=graph/);

  // The CLI's neighbourhood, node for node, and the op's device time on the card.
  let g = cli(module, name);
  assert.equal(g.figures.time_source, 'hlo_stats');
  assert.deepEqual((await metric(page, 'graph_node')).sort(), graphNames(g));
  assert.equal(await one(page, 'graph_nodes'), String(graphNames(g).length));
  assert.equal(await one(page, 'graph_edges'), String(g.edges.length));
  assert.equal(await one(page, 'card_name'), name);
  assert.ok(close(await one(page, 'card_self_time_us'), g.figures.by_name[name].self_time_us));

  // The overview: the CLI's, with the neighbourhood's instructions marked (a fusion the
  // neighbourhood expands is one node there).
  await overviewShown(page);
  const o = cli(module, null);
  const overviewNames = new Set(graphNames(o));
  assert.equal(await one(page, 'overview_nodes'), String(overviewNames.size));
  assert.equal(await one(page, 'overview_edges'), String(o.edges.length));
  assert.equal(await one(page, 'overview_fusions'), String(o.nodes.filter((n) => n.opcode === 'fusion').length));
  assert.ok(overviewNames.size > 1, `overview of ${overviewNames.size} nodes`);
  const marked = new Set([...graphNames(g), ...g.clusters.filter((c) => c.fused).map((c) => c.caller), g.center].filter((n) => overviewNames.has(n)));
  assert.ok(marked.size > 0);
  assert.equal(await one(page, 'overview_marked'), String(marked.size));
  await shot(page, 'graph-viewer-h200');

  // A click on a node of the overview centres the graph there: the pointer is moved over the
  // canvas (in the page, event by event) until the canvas names a node other than the centre.
  await page.locator('[data-testid="graph-overview-canvas"]').scrollIntoViewIfNeeded();
  const target = await page.evaluate(({ skip, names }) => {
    const c = document.querySelector('[data-testid="graph-overview-canvas"]');
    const r = c.getBoundingClientRect();
    for (let y = 2; y < r.height; y += 3) {
      for (let x = 2; x < r.width; x += 3) {
        c.dispatchEvent(new MouseEvent('mousemove', { clientX: r.left + x, clientY: r.top + y, bubbles: true }));
        const hover = c.dataset.hover;
        if (hover && hover !== skip && names.includes(hover)) return { hover, x: r.left + x, y: r.top + y };
      }
    }
    return null;
  }, { skip: name, names: [...overviewNames] });
  assert.ok(target, 'no node of the overview under the pointer');
  assert.equal(await one(page, 'overview_hover'), target.hover);
  await page.mouse.click(target.x, target.y);
  await showsGraph(page, target.hover);
  g = cli(module, target.hover);
  assert.deepEqual((await metric(page, 'graph_node')).sort(), graphNames(g));
  // The overview was not asked again: the same figures, the new neighbourhood marked.
  await page.waitForSelector(`[data-testid="graph-overview-canvas"][data-marked]`);
  assert.equal(await one(page, 'overview_nodes'), String(overviewNames.size));
  await shot(page, 'graph-viewer-h200-overview');

  // Search by instruction name: a node of the overview far from here.
  const searched = [...overviewNames].find((n) => (n.startsWith('convolution') || n.includes('fusion')) && n !== target.hover && n !== name);
  await page.fill('[data-testid="graph-search"]', searched);
  await page.press('[data-testid="graph-search"]', 'Enter');
  await showsGraph(page, searched);
  assert.deepEqual((await metric(page, 'graph_node')).sort(), graphNames(cli(module, searched)));

  // The colouring is kept in the URL with the module, node and width.
  await page.click('[data-testid="graph-width-more"]');
  await page.waitForFunction(() => document.querySelector('[data-metric="graph_width"]')?.dataset.value === '2');
  await page.click('[data-testid="graph-shade-time"]');
  await page.waitForSelector('[data-testid="graph-canvas"][data-shade="time"]');
  const hash = await page.evaluate(() => location.hash);
  assert.match(hash, /color=time/);
  assert.match(hash, /width=2/);
  assert.match(hash, new RegExp(`node=${encodeURIComponent(searched).replace(/[.()]/g, '\\$&')}`));
  assert.deepEqual(page.errors, []);
  await page.close();

  // ... and restored by a page opened on that URL.
  const again = await newPage(browser);
  await openTrace(again, `${server.url}${hash}`);
  await showsGraph(again, searched);
  await again.waitForSelector('[data-testid="graph-canvas"][data-shade="time"]', { timeout: 60_000 });
  assert.ok(await again.isChecked('[data-testid="graph-shade-time"]'));
  assert.equal(await one(again, 'graph_width'), '2');
  assert.equal(await hashModule(again), module);
  assert.ok((await metric(again, 'node_time_fraction')).length > 0, 'no node shaded by its time');
  await shot(again, 'graph-viewer-h200-time');
  assert.deepEqual(again.errors, []);
  await again.close();
});

test('H200 n2_cnn_bf16: the graph from a Memory Viewer buffer', { skip: absent, timeout: 300_000 }, async () => {
  const page = await newPage(browser);
  await openTrace(page, `${server.url}#tool=memory-viewer&module=${encodeURIComponent('jit_train_step(5312)')}`);
  await page.waitForSelector('[data-testid="peak-buffer"] [data-testid="buffer-show-graph"]', { timeout: 120_000 });
  const row = page.locator('[data-testid="peak-buffer"]', { has: page.locator('[data-testid="buffer-show-graph"]') }).first();
  // The buffer's name carries its shape index (`cudnn-conv.3{0}`); the graph centres on its instruction.
  const op = (await row.locator('.br-name').textContent()).trim().replace(/\{[\d,]*\}$/, '');
  await row.locator('[data-testid="buffer-show-graph"]').click();
  await showsGraph(page, op);
  assert.equal(await hashModule(page), 'jit_train_step(5312)');
  const g = cli('jit_train_step(5312)', op);
  assert.deepEqual((await metric(page, 'graph_node')).sort(), graphNames(g));
  // The card lists the buffers the instruction defines, the one followed among them.
  for (const [buffer, bytes] of g.figures.by_name[op].buffers) {
    assert.equal(await one(page, 'card_buffer_bytes', buffer), String(bytes));
  }
  await overviewShown(page);
  assert.ok(Number(await one(page, 'overview_marked')) > 0);
  await shot(page, 'graph-viewer-h200-buffer');
  assert.deepEqual(page.errors, []);
  await page.close();
});

// The other links both ways, in the dark theme: an HLO ops row's "graph", the card back to the op's
// HLO ops row, to its Roofline row (whose "graph" comes back) and to Op Profile searching for it; and
// the canvas's zoom and pan: W/S and the wheel zoom, A/D pan, 0 shows the whole graph, at one scale.
test('H200 n2_cnn_bf16: HLO ops and Roofline rows to the graph and back, Op Profile, zoom and pan (dark)', { skip: absent, timeout: 600_000 }, async () => {
  const page = await newPage(browser, { colorScheme: 'dark' });
  await openTrace(page);
  await page.click('.tab[data-tool="hlo-stats"]');
  const linked = 'table.hlo-table tbody tr[data-op]';
  await page.waitForSelector(`[data-testid="hlo-stats"][data-state="ready"] ${linked} [data-testid="op-show-graph"]`, { timeout: 120_000 });
  // The costliest fusion (the first rows can be kernels of no instruction).
  await page.fill('[data-testid="hlo-filter"]', 'fusion');
  const row = page.locator(linked, { has: page.locator('[data-testid="op-show-graph"]') }).first();
  const key = await row.getAttribute('data-op');
  const name = key.slice(key.indexOf('/') + 1);
  assert.match(name, /fusion/);
  await row.locator('[data-testid="op-show-graph"]').click();
  await showsGraph(page, name);
  const module = await hashModule(page);
  const g = cli(module, name);
  assert.deepEqual((await metric(page, 'graph_node')).sort(), graphNames(g));
  // The card: what XLA says of the instruction (the CLI's centre node) and what the trace says.
  const c = g.center_node;
  assert.equal(await one(page, 'card_shape'), c.shape);
  assert.match(c.shape, /\{[\d,]*\}/, 'the shape carries its layout');
  assert.equal(await one(page, 'card_hlo_text'), c.expression);
  assert.ok(c.framework_op && c.source, 'a JAX op has its framework op and source line');
  assert.equal(await one(page, 'card_framework_op'), c.framework_op);
  assert.equal(await one(page, 'card_source'), c.source);
  assert.ok(close(await one(page, 'card_self_time_us'), g.figures.by_name[name].self_time_us));
  assert.ok(close(await one(page, 'card_flop_rate'), g.figures.by_name[name].flop_rate));
  await overviewShown(page);
  await shot(page, 'graph-viewer-h200-dark');

  // Zoom and pan on the canvas: the centre node's place on it and the scale tell.
  const canvas = '[data-testid="graph-canvas"]';
  const scale = async () => Number(await page.getAttribute(canvas, 'data-scale'));
  const at = async () => (await page.getAttribute(canvas, 'data-center-at')).split(',').map(Number);
  const changed = (attr, before) => page.waitForFunction(([sel, a, b]) => document.querySelector(sel)?.getAttribute(a) !== b,
    [canvas, attr, before]);
  await page.locator(canvas).scrollIntoViewIfNeeded();
  await page.focus(canvas);
  const s0 = await scale();
  assert.equal(s0, 1, 'the graph opens at zoom 1');
  await page.keyboard.press('w');
  await changed('data-scale', String(s0.toFixed(4)));
  assert.ok(await scale() > s0, 'W zooms in');
  let s = await page.getAttribute(canvas, 'data-scale');
  await page.keyboard.press('s');
  await changed('data-scale', s);
  assert.ok(Math.abs(await scale() - s0) < 1e-3, 'S zooms back out');
  const [x0] = await at();
  let before = await page.getAttribute(canvas, 'data-center-at');
  await page.keyboard.press('d');
  await changed('data-center-at', before);
  assert.ok((await at())[0] < x0, 'D pans right: the centre moves left');
  const box = await page.locator(canvas).boundingBox();
  await page.mouse.move(box.x + box.width / 3, box.y + box.height / 3);
  s = await page.getAttribute(canvas, 'data-scale');
  await page.mouse.wheel(0, -400);
  await changed('data-scale', s);
  assert.ok(Number(await page.getAttribute(canvas, 'data-scale')) > Number(s), 'the wheel zooms in');
  // 0: the whole graph fitted, every node in view.
  s = await page.getAttribute(canvas, 'data-scale');
  await page.keyboard.press('0');
  await changed('data-scale', s);
  const [cx, cy] = await at();
  assert.ok(cx > 0 && cx < box.width && cy > 0 && cy < box.height, `the centre in view after reset: ${cx},${cy}`);
  await shot(page, 'graph-viewer-h200-dark-whole');

  // The card back to the op's HLO ops row.
  await page.click('[data-testid="graph-card"] [data-testid="node-show-hlo-stats"]');
  await page.waitForSelector(`[data-testid="hlo-stats"][data-state="ready"] table.hlo-table tr[data-op="${key}"]`, { timeout: 60_000 });
  assert.equal(await page.inputValue('[data-testid="hlo-filter"]'), name);
  // To its Roofline row, whose "graph" comes back to it.
  await page.click('.tab[data-tool="graph-viewer"]');
  await showsGraph(page, name);
  await page.click('[data-testid="graph-card"] [data-testid="node-show-roofline"]');
  const roofline = `[data-testid="roofline"][data-state="ready"] table.roofline-table tr[data-op$="${name}"]`;
  await page.waitForSelector(roofline, { timeout: 60_000 });
  assert.equal(await page.inputValue('[data-testid="roofline-filter"]'), name);
  await page.click(`${roofline} [data-testid="op-show-graph"]`);
  await showsGraph(page, name);
  // To Op Profile, searching for it.
  await page.click('[data-testid="graph-card"] [data-testid="node-show-op-profile"]');
  await page.waitForSelector(`[data-testid="op-profile"][data-state="ready"] .opp-row.op[data-name="${name}"]`, { timeout: 60_000 });
  assert.equal(await page.inputValue('[data-testid="opp-search"]'), name);
  assert.deepEqual(page.errors, []);
  await page.close();
});

// The "XLA ops (CPU)" tab (Tidemark's own, not XProf's) on a2_mlp_train (JAX on CPU): the table equals
// the CLI's (row count, a row's self time through data-metric), sorting and filtering, and the op-row
// links: "buffers" lands on the Memory Viewer of the op's module with its buffers highlighted,
// "occurrences" on the Trace Viewer with the op searched and its first match framed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { serve, launch, newPage, openApp, pickFiles, waitForFile, selectFile, metric, one, close, shot, fixture, ROOT } from './harness.mjs';

const A2 = fixture('jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz');
const NAME = 'a2_mlp_train.xplane.pb.gz';

/** The CLI's table of the same file: what the page must show. */
function cliTable(file) {
  const bin = process.env.TIDEMARK_BIN || path.join(ROOT, 'target/debug/tidemark');
  return JSON.parse(execFileSync(bin, ['xla-ops-cpu', file, '--json'], { maxBuffer: 64 << 20 }).toString());
}

let server, browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

const ready = (page) => page.waitForSelector('[data-testid="xla-ops-cpu"][data-state="ready"] table.xoc-table', { timeout: 60_000 });
const rowKeys = (page) => page.$$eval('table.xoc-table tbody tr[data-op]', (rows) => rows.map((r) => `${r.dataset.module}/${r.dataset.op}`));

async function openTab(page) {
  await pickFiles(page, [A2]);
  await waitForFile(page, NAME);
  await selectFile(page, NAME);
  await page.click('.tab[data-tool="xla-ops-cpu"]');
  await ready(page);
}

test('a2_mlp_train: the XLA ops table, sort, filter, and the links to buffers and occurrences', async () => {
  const cli = cliTable(A2);
  const page = await newPage(browser);
  await openApp(page, server.url);
  await openTab(page);

  // Marked as Tidemark's own; every row of the CLI's table, in its order (self time, longest first).
  assert.match(await page.textContent('[data-testid="xoc-own"]'), /not in XProf/);
  assert.equal(await page.getAttribute('table.xoc-table', 'data-rows'), String(cli.rows.length));
  assert.equal(await one(page, 'total_ops'), String(cli.rows.length));
  assert.equal(await one(page, 'xla_op_runs'), String(cli.total_occurrences));
  const top = cli.rows[0];
  const topKey = `${top.module}/${top.op_name}`;
  assert.deepEqual((await rowKeys(page)).slice(0, 3), cli.rows.slice(0, 3).map((r) => `${r.module}/${r.op_name}`));
  assert.ok(close(await one(page, 'self_time_us', topKey), top.self_time_ps / 1e6));
  assert.ok(close(await one(page, 'avg_time_us', topKey), top.avg_time_ps / 1e6));
  assert.equal(await one(page, 'occurrences', topKey), String(top.occurrences));
  assert.equal(await one(page, 'category', topKey), top.category);
  await shot(page, 'xla-ops-cpu-light');

  // Sort by total time: largest first, then reversed.
  await page.click('th[data-sort="total"] button');
  let totals = (await metric(page, 'total_time_us')).map(Number);
  assert.equal(await page.getAttribute('th[data-sort="total"]', 'aria-sort'), 'descending');
  assert.ok(totals.every((v, i) => i === 0 || totals[i - 1] >= v), 'descending');
  assert.ok(close(totals[0], Math.max(...cli.rows.map((r) => r.total_time_ps)) / 1e6));
  await page.click('th[data-sort="total"] button');
  totals = (await metric(page, 'total_time_us')).map(Number);
  assert.ok(totals.every((v, i) => i === 0 || totals[i - 1] <= v), 'ascending');
  await page.click('th[data-sort="self"] button');

  // Filter: only the rows naming the text (op, module, category, framework op or expression).
  await page.fill('[data-testid="xoc-filter"]', 'ynn_fusion');
  const matching = cli.rows.filter((r) => [r.op_name, r.module, r.category, r.framework_op, r.expression].some((t) => t.toLowerCase().includes('ynn_fusion')));
  const keys = new Set(matching.map((r) => `${r.module}/${r.op_name}`));
  await page.waitForFunction((n) => document.querySelector('table.xoc-table')?.dataset.rows === String(n), matching.length);
  const shownKeys = await rowKeys(page);
  assert.ok(shownKeys.length > 0 && shownKeys.every((k) => keys.has(k)), JSON.stringify(shownKeys));
  await page.fill('[data-testid="xoc-filter"]', '');
  await page.waitForFunction((n) => document.querySelector('table.xoc-table')?.dataset.rows === String(n), cli.rows.length);

  // "buffers": the Memory Viewer of the op's module, the buffers the op defines highlighted (`dot` of
  // jit_train_step defines a buffer live at the peak; the top op's output shares another's allocation).
  const withBuffers = cli.rows.find((r) => r.op_name === 'dot' && r.module === 'jit_train_step');
  await page.click(`tr[data-op="${withBuffers.op_name}"][data-module="${withBuffers.module}"] [data-testid="op-show-buffers"]`);
  const banner = await page.waitForSelector('[data-testid="mv-highlight"]', { timeout: 60_000 });
  assert.equal(await banner.getAttribute('data-op'), withBuffers.op_name);
  assert.equal(await page.getAttribute('.mv-module', 'data-module'), withBuffers.module);
  assert.ok(Number(await one(page, 'highlighted_buffer_count')) > 0, 'the op defines buffers');
  const marked = await page.$$eval('tr[data-testid="peak-buffer"][data-highlighted="true"]', (rows) => rows.map((r) => r.dataset.bufferId));
  assert.ok(marked.length > 0, 'a highlighted buffer is live at the peak');
  const ids = (await banner.getAttribute('data-buffer-ids')).split(',');
  assert.ok(marked.every((id) => ids.includes(id)));
  assert.match(await page.evaluate(() => location.hash), new RegExp(`module=${encodeURIComponent(withBuffers.memory_viewer_module).replace(/[()]/g, '\\$&')}`));
  await shot(page, 'xla-ops-cpu-show-buffers');

  // "occurrences": the Trace Viewer searching for the op, the first match framed.
  await page.click('.tab[data-tool="xla-ops-cpu"]');
  await ready(page);
  const second = cli.rows[1];
  await page.click(`tr[data-op="${second.op_name}"][data-module="${second.module}"] [data-testid="op-show-occurrences"]`);
  await page.waitForSelector('[data-metric="search_match_count"]', { timeout: 60_000 });
  assert.ok(Number(await one(page, 'search_match_count')) >= second.occurrences, 'every run of the op matches');
  assert.equal(await page.inputValue('[data-testid="trace-search"]'), `="${second.op_name}"`);
  await page.waitForFunction(() => /^1 of/.test(document.querySelector('[data-testid="search-status"]').textContent));
  await page.click('[data-testid="search-next"]');
  await page.waitForFunction(() => /^2 of/.test(document.querySelector('[data-testid="search-status"]').textContent));
  await page.click('[data-testid="search-prev"]');
  await page.waitForFunction(() => /^1 of/.test(document.querySelector('[data-testid="search-status"]').textContent));
  await shot(page, 'xla-ops-cpu-show-occurrences');
  await page.close();
});

// TensorFlow names its op events by the op's type (`Conv2DBackpropFilter`), its full name `name:type` in
// the `tf_op` stat: the link's exact search (`="name"`) finds the op by that full name.
test('a framework op row links to the Trace Viewer searching for it', async () => {
  const page = await newPage(browser);
  await openApp(page, server.url);
  const D2 = fixture('tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz');
  await pickFiles(page, [D2]);
  await waitForFile(page, 'd2_tf_cnn.xplane.pb.gz');
  await selectFile(page, 'd2_tf_cnn.xplane.pb.gz');
  await page.click('.tab[data-tool="framework-op-stats"]');
  await page.waitForSelector('[data-testid="framework-op-stats"][data-state="ready"] table.fos-table', { timeout: 60_000 });
  // A framework op has no module: no "buffers" link, only "occurrences".
  const row = page.locator('table.fos-table tbody tr[data-side="host"]:not([data-op="IDLE"])').first();
  const op = await row.getAttribute('data-op');
  assert.equal(await row.locator('[data-testid="op-show-buffers"]').count(), 0);
  await row.locator('[data-testid="op-show-occurrences"]').click();
  await page.waitForSelector('[data-metric="search_match_count"]', { timeout: 60_000 });
  await page.waitForFunction(() => Number(document.querySelector('[data-metric="search_match_count"]').dataset.value) > 0, null, { timeout: 60_000 });
  assert.equal(await page.inputValue('[data-testid="trace-search"]'), `="${op}"`);
  assert.match(await page.evaluate(() => location.hash), /tool=trace-viewer.*search=/);
  await page.close();
});

test('a trace without XLA ops says so', async () => {
  const page = await newPage(browser);
  await openApp(page, server.url);
  await pickFiles(page, [fixture('tf/d1_tf_keras_none/d1_tf_keras_none.xplane.pb.gz')]);
  await waitForFile(page, 'd1_tf_keras_none.xplane.pb.gz');
  await selectFile(page, 'd1_tf_keras_none.xplane.pb.gz');
  await page.click('.tab[data-tool="xla-ops-cpu"]');
  await page.waitForSelector('[data-testid="xoc-empty"]', { timeout: 60_000 });
  assert.match(await page.textContent('[data-testid="xoc-own"]'), /not in XProf/);
  await page.close();
});

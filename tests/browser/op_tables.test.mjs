// The Framework Op Stats tab on d2_tf_cnn (TensorFlow CPU): XProf's table (row count, figures equal to
// XProf's own output), the true occurrence count beside XProf's inflated one, sorting, filtering, the
// host/device and IDLE toggles, the time unit, the two self-time-by-type pies (drawn, hovered) and
// the CSV export, in light and dark.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { serve, launch, newPage, openApp, pickFiles, waitForFile, selectFile, metric, shot, fixture } from './harness.mjs';

const D2 = fixture('tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz');
const ORACLE = JSON.parse(gunzipSync(readFileSync(fixture('tf/d2_tf_cnn/d2_tf_cnn.framework_op_stats.json.gz'))).toString());

let server, browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

/** XProf's row of op `name` in table `t` (0: with IDLE), as {column id: value}. */
function oracleRow(t, name) {
  const ids = ORACLE[t].cols.map((c) => c.id);
  const row = ORACLE[t].rows.find((r) => r.c[3].v === name);
  return Object.fromEntries(ids.map((id, i) => [id, row.c[i].v]));
}

const one = async (page, name, key) => {
  const v = await metric(page, name, key);
  assert.equal(v.length, 1, `${name}[${key}]: ${JSON.stringify(v)}`);
  return v[0];
};
const close = (a, b) => Math.abs(Number(a) - b) <= 1e-9 * Math.max(1, Math.abs(b));
const rowOps = (page) => page.$$eval('table.fos-table tbody tr[data-op]', (rows) => rows.map((r) => r.dataset.op));
const ready = (page) => page.waitForSelector('[data-testid="framework-op-stats"][data-state="ready"] table.fos-table', { timeout: 60_000 });

async function openTab(page) {
  await pickFiles(page, [D2]);
  await waitForFile(page, 'd2_tf_cnn.xplane.pb.gz');
  await selectFile(page, 'd2_tf_cnn.xplane.pb.gz');
  await page.click('.tab[data-tool="framework-op-stats"]');
  await ready(page);
}

test('d2_tf_cnn: XProf\'s table, true occurrences, sort, filter, toggles, pies and CSV', async () => {
  const page = await newPage(browser);
  await openApp(page, server.url);
  await openTab(page);

  // XProf's table with IDLE: every row counted, figures equal to XProf's.
  assert.equal(await page.getAttribute('table.fos-table', 'data-rows'), String(ORACLE[0].rows.length));
  assert.equal(await one(page, 'total_ops'), String(ORACLE[0].rows.length));
  assert.deepEqual((await rowOps(page)).slice(0, 3), ORACLE[0].rows.slice(0, 3).map((r) => r.c[3].v));
  const first = oracleRow(0, ORACLE[0].rows[0].c[3].v);
  assert.ok(close(await one(page, 'total_self_time_us', first.operation), first.total_self_time));
  assert.ok(close(await one(page, 'self_time_fraction', first.operation), first.host_total_self_time_percent));
  assert.equal(await one(page, 'task_type'), ORACLE[0].p.task_type);

  // sgd/Mul_12: XProf's 120 occurrences, and the 60 times it ran, marked.
  await page.fill('[data-testid="fos-filter"]', 'sgd/Mul_12');
  const matching = ORACLE[0].rows.filter((r) => `${r.c[2].v} ${r.c[3].v}`.toLowerCase().includes('sgd/mul_12')).length;
  await page.waitForFunction((n) => document.querySelector('table.fos-table')?.dataset.rows === String(n), matching);
  const mul = oracleRow(0, 'sgd/Mul_12');
  assert.equal(await one(page, 'occurrences', 'sgd/Mul_12'), String(mul.occurrences));
  assert.equal(mul.occurrences, 120);
  assert.equal(await one(page, 'true_occurrences', 'sgd/Mul_12'), '60');
  assert.match(await page.textContent('tr[data-op="sgd/Mul_12"] td:nth-child(5)'), /120\s+ran 60/);
  assert.ok(close(await one(page, 'avg_time_us', 'sgd/Mul_12'), mul.avg_time));
  assert.ok(await page.isVisible('[data-testid="fos-true-note"]'));

  // The time unit toggle changes the text, never the value.
  const cell = 'tr[data-op="sgd/Mul_12"] [data-metric="total_time_us"]';
  await page.selectOption('[data-testid="time-unit-select"]', 'ns');
  assert.match(await page.textContent(cell), / ns$/);
  await page.selectOption('[data-testid="time-unit-select"]', 'ms');
  assert.match(await page.textContent(cell), / ms$/);
  assert.ok(close(await page.getAttribute(cell, 'data-value'), mul.total_time));
  await page.selectOption('[data-testid="time-unit-select"]', 'auto');

  // Filter: every row shown has the text in its type or name.
  await page.fill('[data-testid="fos-filter"]', 'Conv2D');
  await page.waitForFunction(() => Number(document.querySelector('table.fos-table')?.dataset.rows) < 100);
  const [types, ops] = [await metric(page, 'op_type'), await rowOps(page)];
  assert.ok(types.length > 0 && types.length === ops.length);
  assert.ok(ops.every((op, i) => `${types[i]} ${op}`.toLowerCase().includes('conv2d')), JSON.stringify(ops));
  const expected = ORACLE[0].rows.filter((r) => `${r.c[2].v} ${r.c[3].v}`.toLowerCase().includes('conv2d')).length;
  assert.equal(await page.getAttribute('table.fos-table', 'data-rows'), String(expected));
  await page.fill('[data-testid="fos-filter"]', '');

  // Sorting by average time: largest first, then reversed.
  await page.click('th[data-sort="avg"] button');
  const avgs = async () => (await metric(page, 'avg_time_us')).map(Number);
  let a = await avgs();
  assert.equal(await page.getAttribute('th[data-sort="avg"]', 'aria-sort'), 'descending');
  assert.ok(a.every((v, i) => i === 0 || a[i - 1] >= v), 'descending');
  assert.equal(a[0], Math.max(...ORACLE[0].rows.map((r) => r.c[6].v)));
  await page.click('th[data-sort="avg"] button');
  a = await avgs();
  assert.ok(a.every((v, i) => i === 0 || a[i - 1] <= v), 'ascending');
  await page.click('th[data-sort="rank"] button');
  await page.click('th[data-sort="rank"] button');
  assert.equal(await page.getAttribute('th[data-sort="rank"]', 'aria-sort'), 'ascending');

  // The host pie is drawn (pixels at its centre) and hovering a slice names it; no device ops on CPU.
  const pie = page.locator('canvas[data-testid="fos-pie-host"]');
  await page.waitForSelector('canvas[data-testid="fos-pie-host"][data-draw-ms]');
  assert.ok(Number(await pie.getAttribute('data-slices')) > 1);
  const alpha = await pie.evaluate((c) => c.getContext('2d').getImageData(c.width / 2, c.height / 2, 1, 1).data[3]);
  assert.ok(alpha > 0, 'the pie has pixels at its centre');
  const box = await pie.boundingBox();
  await page.mouse.move(box.x + box.width / 2 + 10, box.y + box.height / 2 - 30);
  const card = await page.waitForSelector('[data-testid="fos-pie-host-card"]');
  assert.match(await card.textContent(), /%/);
  assert.ok(await page.isVisible('[data-testid="fos-pie-device"]'));
  const hostTypes = await metric(page, 'host_type_self_time_fraction');
  assert.ok(hostTypes.length > 0 && hostTypes.every((v) => Number(v) > 0 && Number(v) <= 1));
  await shot(page, 'framework-op-stats-light');

  // CSV: the filtered rows, in order.
  await page.fill('[data-testid="fos-filter"]', 'sgd/Mul_1');
  await page.waitForFunction(() => Number(document.querySelector('table.fos-table')?.dataset.rows) < 50);
  const shownRows = Number(await page.getAttribute('table.fos-table', 'data-rows'));
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="fos-csv"]')]);
  assert.match(download.suggestedFilename(), /framework_op_stats\.csv$/);
  const csv = readFileSync(await download.path()).toString().trim().split('\n');
  assert.equal(csv.length, shownRows + 1);
  assert.match(csv[0], /^rank,host_or_device,type,operation,occurrences,/);
  assert.ok(csv.some((l) => l.includes(',sgd/Mul_12,120,')), csv.join('\n'));
  await page.fill('[data-testid="fos-filter"]', '');

  // IDLE out: XProf's second table, shares of op time.
  await page.uncheck('[data-testid="fos-idle"]');
  await page.waitForFunction((n) => document.querySelector('[data-testid="framework-op-stats"][data-state="ready"] table.fos-table')?.dataset.rows === String(n), ORACLE[1].rows.length);
  assert.equal((await rowOps(page)).includes('IDLE'), false);
  const top = ORACLE[1].rows[0].c;
  assert.ok(close(await one(page, 'self_time_fraction', top[3].v), top[11].v));

  // Host only: the same rows (a CPU trace has no device ops).
  await page.selectOption('[data-testid="fos-side"]', 'device');
  await page.waitForFunction(() => document.querySelector('table.fos-table')?.dataset.rows === '0');
  await page.selectOption('[data-testid="fos-side"]', 'host');
  await page.waitForFunction((n) => document.querySelector('table.fos-table')?.dataset.rows === String(n), ORACLE[1].rows.length);
  assert.deepEqual(page.errors, []);
});

test('dark theme: the tab and its pies draw', async () => {
  const page = await newPage(browser);
  await openApp(page, server.url);
  await page.click('[data-testid="theme-toggle"]');
  await page.waitForSelector('html[data-theme="dark"]');
  await openTab(page);
  await page.waitForSelector('canvas[data-testid="fos-pie-host"][data-draw-ms]');
  await shot(page, 'framework-op-stats-dark');
  assert.deepEqual(page.errors, []);
});

test('a file that is no trace says so', async () => {
  const page = await newPage(browser);
  await openApp(page, server.url);
  const pprof = fixture('pprof/docs_seed_memory.prof');
  await pickFiles(page, [pprof]);
  await waitForFile(page, 'docs_seed_memory.prof');
  await selectFile(page, 'docs_seed_memory.prof');
  await page.click('.tab[data-tool="framework-op-stats"]');
  await page.waitForSelector('[data-testid="fos-error"]');
  assert.match(await page.textContent('[data-testid="fos-error"]'), /\S/);
});

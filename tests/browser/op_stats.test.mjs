// The HLO Op Stats, Roofline and Kernel Stats tabs on real device traces, read in place from
// ../shared/fixtures/device (skipped with a note when absent): the TPU v6e trace's HLO op table
// (row count, the top row's self time equal to XProf's, sort, filter, CSV) and roofline (points
// drawn, the peaks equal to XProf's, a point hovered for its card, keyboard zoom); the V100 trace's
// kernel table equal to XProf's and its roofline with XProf's zero peak said in words (the trace
// names no GPU vendor); light and dark screenshots. The HLO op stats charts: the category pie's slices
// equal XProf's rows summed by category, the FLOP rate bars XProf's column. The kernel table fits
// the page at 1280 px (no sideways scroll), light and dark, and at 1600 px.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DEVICE, deviceSkip, serve, launch, newPage, openApp, pickFiles, waitForFile, selectFile, metric, one, close, column, shot, fixture } from './harness.mjs';

const TPU = path.join(DEVICE, 'jax_tpu_v6e_inference/tpu_v6e_inference');
const V100 = path.join(DEVICE, 'tf_v100_multi_worker/v100_worker');
const skip = (prefix) => deviceSkip(`${prefix}.xplane.pb`);
if (skip(TPU) || skip(V100)) console.log(`# op_stats: device fixtures absent under ${DEVICE}; their tests are skipped`);
const oracle = (prefix, tool) => JSON.parse(readFileSync(`${prefix}.${tool}.json`).toString());

let server, browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

const rowsOf = (page, table) => page.getAttribute(`table.${table}`, 'data-rows').then(Number);

async function openTrace(page, prefix, { dark = false } = {}) {
  await openApp(page, server.url);
  if (dark) {
    await page.click('[data-testid="theme-toggle"]');
    await page.waitForSelector('html[data-theme="dark"]');
  }
  const name = `${path.basename(prefix)}.xplane.pb`;
  await pickFiles(page, [`${prefix}.xplane.pb`]);
  await waitForFile(page, name);
  await selectFile(page, name);
}

async function openTab(page, tool, testid) {
  await page.click(`.tab[data-tool="${tool}"]`);
  await page.waitForSelector(`[data-testid="${testid}"][data-state="ready"], [data-testid="${testid}"][data-state="failed"]`, { timeout: 60_000 });
}

test('TPU v6e: HLO op stats equal XProf\'s, sort, filter and CSV', { skip: skip(TPU) }, async () => {
  const hlo = oracle(TPU, 'hlo_stats');
  const page = await newPage(browser);
  await openTrace(page, TPU);
  await openTab(page, 'hlo-stats', 'hlo-stats');

  // Every row, the top one first, its self time XProf's.
  const n = hlo.rows.length;
  assert.equal(await rowsOf(page, 'hlo-table'), n);
  assert.equal(await one(page, 'total_ops'), String(n));
  const [programs, names, selfTimes] = [column(hlo, 'program_id'), column(hlo, 'hlo_op_name'), column(hlo, 'total_self_time')];
  const topKey = `${programs[0]}/${names[0]}`;
  const firstRow = await page.getAttribute('table.hlo-table tbody tr[data-op]', 'data-op');
  assert.equal(firstRow, topKey);
  assert.ok(close(await one(page, 'total_self_time_us', topKey), selfTimes[0]));
  assert.ok(close(await one(page, 'occurrences', topKey), column(hlo, 'occurrences')[0]));
  assert.equal(await one(page, 'hlo_op_expression', topKey), column(hlo, 'hlo_op_expression')[0]);
  assert.ok(close(await one(page, 'self_time_fraction', topKey), column(hlo, 'total_self_time_percent')[0] / 100));
  // The summary: the ops' self time, XProf's rows summed.
  const total = selfTimes.reduce((a, b) => a + b, 0);
  const summary = await page.$eval('[data-testid="hlo-summary"] [data-metric="total_self_time_us"]', (e) => e.dataset.value);
  assert.ok(close(summary, total));

  // The time unit changes the text, never the value.
  const cell = `tr[data-op="${topKey}"] [data-metric="total_self_time_us"]`;
  await page.selectOption('[data-testid="time-unit-select"]', 'ms');
  assert.match(await page.textContent(cell), / ms$/);
  assert.ok(close(await page.getAttribute(cell, 'data-value'), selfTimes[0]));
  await page.selectOption('[data-testid="time-unit-select"]', 'auto');

  // Sorting by average time: largest first, then reversed.
  await page.click('th[data-sort="avg"] button');
  const avgs = async () => (await metric(page, 'avg_time_us')).map(Number);
  let a = await avgs();
  assert.equal(await page.getAttribute('th[data-sort="avg"]', 'aria-sort'), 'descending');
  assert.ok(a.every((v, i) => i === 0 || a[i - 1] >= v), 'descending');
  assert.equal(a[0], Math.max(...column(hlo, 'avg_time')));
  await page.click('th[data-sort="avg"] button');
  a = await avgs();
  assert.ok(a.every((v, i) => i === 0 || a[i - 1] <= v), 'ascending');
  await page.click('th[data-sort="rank"] button');
  await page.click('th[data-sort="rank"] button');

  // Filter: XProf's rows whose name, category, text or framework op hold the text.
  const texts = [column(hlo, 'hlo_op_name'), column(hlo, 'category'), column(hlo, 'hlo_op_expression'), column(hlo, 'tf_op_name')];
  const matching = (s) => hlo.rows.filter((_, i) => texts.some((t) => String(t[i]).toLowerCase().includes(s))).length;
  await page.fill('[data-testid="hlo-filter"]', 'fusion');
  await page.waitForFunction((m) => document.querySelector('table.hlo-table')?.dataset.rows === String(m), matching('fusion'));
  assert.ok(matching('fusion') > 0 && matching('fusion') < n);

  // CSV: the filtered rows, in order, XProf's column ids as headers.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="hlo-csv"]')]);
  assert.match(download.suggestedFilename(), /^tpu_v6e_inference\.hlo_stats\.csv$/);
  const csv = readFileSync(await download.path()).toString().trim().split('\n');
  assert.equal(csv.length, matching('fusion') + 1);
  assert.match(csv[0], /^rank,program_id,category,hlo_op_name,hlo_op_expression,tf_op_name,occurrences,total_time_us,/);
  await page.fill('[data-testid="hlo-filter"]', '');
  await page.waitForFunction((m) => document.querySelector('table.hlo-table')?.dataset.rows === String(m), n);
  await shot(page, 'hlo-stats-light');
  assert.deepEqual(page.errors, []);
});

test('TPU v6e: HLO op stats charts are XProf\'s pies and FLOP rates', { skip: skip(TPU) }, async () => {
  const hlo = oracle(TPU, 'hlo_stats');
  const page = await newPage(browser);
  await openTrace(page, TPU);
  await openTab(page, 'hlo-stats', 'hlo-stats');
  await page.waitForSelector('[data-testid="hlo-charts"] canvas[data-testid="hlo-pie-category"][data-slices]');

  // Time per HLO category: XProf's rows (TensorCore) summed by category; the largest first.
  const [categories, selfTimes, cores] = [column(hlo, 'category'), column(hlo, 'total_self_time'), column(hlo, 'core_type')];
  const byCategory = {};
  categories.forEach((c, i) => { if (cores[i] !== 'SparseCore') byCategory[c] = (byCategory[c] ?? 0) + selfTimes[i]; });
  const total = Object.values(byCategory).reduce((a, b) => a + b, 0);
  const [top] = Object.entries(byCategory).sort((a, b) => b[1] - a[1]);
  const legend = await page.$$eval('[data-metric="category_self_time_us"]', (es) => es.map((e) => [e.dataset.key, e.dataset.value]));
  assert.equal(legend[0][0], top[0]);
  assert.ok(close(await one(page, 'category_self_time_us', top[0]), top[1]), `${top[0]}: ${JSON.stringify(legend)}`);
  assert.ok(close(await one(page, 'category_self_time_fraction', top[0]), top[1] / total));
  for (const [category, us] of legend) {
    if (category !== 'Other') assert.ok(close(us, byCategory[category]), `${category}: ${us} vs ${byCategory[category]}`);
  }
  // Hovering the pie names a slice.
  const pie = await page.$('canvas[data-testid="hlo-pie-category"]');
  const box = await pie.boundingBox();
  await page.mouse.move(box.x + box.width / 2 + 10, box.y + box.height / 2 - 30);
  await page.waitForSelector('[data-testid="hlo-pie-category-card"]');
  // The op pie groups by XProf's op text; the FLOP rate bars are XProf's column, in the table's order.
  assert.ok((await metric(page, 'op_self_time_us')).length > 1);
  const rates = (await metric(page, 'op_model_flop_rate')).map(Number);
  const theirs = column(hlo, 'model_flop_rate');
  assert.equal(rates.length, theirs.length);
  rates.forEach((r, i) => assert.ok(close(r, theirs[i]), `row ${i}: ${r} vs ${theirs[i]}`));
  assert.ok(await page.$('[data-testid="hlo-flop-rate-chart"] canvas'));
  await shot(page, 'hlo-stats-charts');
  assert.deepEqual(page.errors, []);
});

test('TPU v6e: the roofline\'s points, peaks, hover card and zoom', { skip: skip(TPU) }, async () => {
  const [model] = oracle(TPU, 'roofline_model');
  const ids = Object.fromEntries(model.cols.map((c, i) => [c.id, i]));
  const records = (inc) => model.rows.map((r) => r.c.map((c) => c.v)).filter((r) => r[ids.step] === 'Total' && r[ids.include_infeed_outfeed] === inc);
  const drawable = (rs) => rs.filter((r) => r[ids.bound_by] !== 'Unknown' && r[ids.bottleneck_operational_intensity] > 0 && r[ids.measured_flop_rate] > 0);
  const page = await newPage(browser);
  await openTrace(page, TPU);
  await openTab(page, 'roofline-model', 'roofline');
  const chart = 'canvas[data-testid="roofline-chart"]';
  await page.waitForSelector(`${chart}[data-draw-ms]`);

  // Points: XProf's whole-profile records it would place (bound by something, FLOPs and bytes).
  assert.equal(Number(await page.getAttribute(chart, 'data-points')), drawable(records(true)).length);
  assert.equal(Number(await page.getAttribute(chart, 'data-undrawn')), records(true).length - drawable(records(true)).length);
  assert.equal(await rowsOf(page, 'roofline-table'), records(true).length);
  // The roofs: XProf's peaks (it prints six significant digits).
  const p = model.p;
  assert.ok(close(await one(page, 'peak_flop_rate'), Number(p.peak_flop_rate), 5e-6));
  assert.ok(close(await one(page, 'peak_bw', 'peak_hbm_bw'), Number(p.peak_hbm_bw), 5e-6));
  assert.ok(close(await one(page, 'peak_bw', 'peak_vmem_read_bw'), Number(p.peak_vmem_read_bw), 5e-6));
  assert.ok(close(await one(page, 'ridge_point', 'HBM'), Number(p.hbm_ridge_point), 5e-6));
  assert.equal(await one(page, 'device_type'), p.device_type);

  // Hover the longest op: its card, and its row marked in the table.
  const [x, y] = (await page.getAttribute(chart, 'data-largest-at')).split(',').map(Number);
  const box = await page.locator(chart).boundingBox();
  await page.mouse.move(box.x + x, box.y + y);
  const card = await page.waitForSelector('[data-testid="roofline-card"]');
  const op = await card.getAttribute('data-op');
  const longestOp = drawable(records(true)).filter((r) => r[ids.rank] > 0).sort((a, b) => b[ids.total_time] - a[ids.total_time])[0];
  assert.equal(op, longestOp[ids.operation]);
  assert.ok(close(await one(page, 'card_flop_rate'), longestOp[ids.measured_flop_rate]));
  assert.equal(await page.getAttribute('table.roofline-table tr.selected', 'data-op'), op);
  await shot(page, 'roofline-light');

  // Keyboard zoom narrows the window; 0 resets it.
  const span = async () => { const [x0, x1] = (await page.getAttribute(chart, 'data-view')).split(',').map(Number); return x1 - x0; };
  const full = await span();
  await page.mouse.move(box.x + 2, box.y + 2);
  await page.focus(chart);
  await page.keyboard.press('w');
  await page.waitForFunction(({ sel, f }) => { const [a, b] = document.querySelector(sel).dataset.view.split(',').map(Number); return b - a < f; }, { sel: chart, f: full });
  assert.ok((await span()) < full);
  await page.keyboard.press('0');
  await page.waitForFunction(({ sel, f }) => { const [a, b] = document.querySelector(sel).dataset.view.split(',').map(Number); return b - a === f; }, { sel: chart, f: full });

  // Infeed/outfeed out: XProf's other record set.
  await page.uncheck('[data-testid="roofline-infeed"]');
  await page.waitForSelector('[data-testid="roofline"][data-state="ready"] table.roofline-table');
  assert.equal(await rowsOf(page, 'roofline-table'), records(false).length);
  assert.deepEqual(page.errors, []);
});

test('V100: kernel stats equal XProf\'s; the roofline says its peak is unknown', { skip: skip(V100) }, async () => {
  const ks = oracle(V100, 'kernel_stats');
  const page = await newPage(browser);
  await openTrace(page, V100);
  await openTab(page, 'kernel-stats', 'kernel-stats');
  assert.equal(await rowsOf(page, 'kernel-table'), ks.rows.length);
  const [totals, names, uses] = [column(ks, 'total_duration_us'), column(ks, 'kernel_name'), column(ks, 'is_kernel_using_tensor_core')];
  assert.ok(close(await one(page, 'total_duration_us', '1'), totals[0]));
  assert.equal(await one(page, 'kernel_name', '1'), names[0]);
  assert.equal(await one(page, 'registers_per_thread', '1'), String(column(ks, 'registers_per_thread')[0]));
  assert.equal(await one(page, 'block_dim', '1'), column(ks, 'block_dim')[0]);
  assert.ok(close(await one(page, 'avg_duration_us', '1'), column(ks, 'avg_duration_us')[0]));
  const total = totals.reduce((a, b) => a + b, 0);
  const onTc = totals.filter((_, i) => uses[i]).reduce((a, b) => a + b, 0);
  assert.ok(close(await one(page, 'tensor_core_fraction'), onTc / total));
  // Sorting by registers: largest first.
  await page.click('th[data-sort="registers"] button');
  const regs = (await metric(page, 'registers_per_thread')).map(Number);
  assert.equal(regs[0], Math.max(...column(ks, 'registers_per_thread')));
  await shot(page, 'kernel-stats-light');

  await openTab(page, 'roofline-model', 'roofline');
  const rm = oracle(V100, 'roofline_model');
  assert.equal(await one(page, 'peak_flop_rate'), rm[0].p.peak_flop_rate);
  assert.match(await page.textContent('[data-testid="roofline-summary"]'), /unknown \(the trace names no GPU vendor/);
  assert.ok(close(await one(page, 'peak_bw', 'peak_hbm_bw'), Number(rm[0].p.peak_hbm_bw), 1e-5));
  assert.equal(await rowsOf(page, 'roofline-table'), 1, 'the program row');
  assert.deepEqual(page.errors, []);
});

test('V100: the kernel table fits the page at 1280 px, names cut with the full name on hover', { skip: skip(V100) }, async () => {
  for (const dark of [false, true]) {
    const page = await newPage(browser);
    await page.setViewportSize({ width: 1280, height: 900 });
    await openTrace(page, V100, { dark });
    await openTab(page, 'kernel-stats', 'kernel-stats');
    await page.waitForSelector('table.kernel-table tbody tr[data-rank]');
    const fit = await page.$eval('table.kernel-table', (t) => {
      const box = t.closest('.vtable');
      const width = document.documentElement.clientWidth;
      const name = t.querySelector('tbody tr[data-rank] td.op');
      const heads = [...t.querySelectorAll('th')].map((h) => ({ text: h.textContent, right: h.getBoundingClientRect().right, clipped: h.scrollWidth > h.clientWidth + 1 }));
      return {
        width, overflow: box.scrollWidth - box.clientWidth, heads,
        nameWidth: name.getBoundingClientRect().width,
        cut: name.scrollWidth > name.clientWidth,
        title: name.querySelector('.cut').getAttribute('title'),
        page: document.scrollingElement.scrollWidth - document.scrollingElement.clientWidth,
        // Every figure is read whole: only the kernel and op names may end in an ellipsis.
        clippedFigures: [...t.querySelectorAll('tbody tr[data-rank] td:not(.op)')]
          .filter((td) => td.scrollWidth > td.clientWidth + 1).map((td) => td.textContent),
      };
    });
    assert.ok(fit.overflow <= 0, `no sideways scroll in the table: ${fit.overflow} px`);
    assert.deepEqual(fit.clippedFigures, [], 'no figure is cut');
    assert.ok(fit.page <= 0, `nor in the page: ${fit.page} px`);
    for (const h of fit.heads) assert.ok(h.right <= fit.width, `${h.text} at ${h.right} of ${fit.width}`);
    assert.ok(fit.nameWidth >= 100, `the kernel name keeps room: ${fit.nameWidth} px`);
    assert.ok(fit.cut, 'a long kernel name ends in an ellipsis');
    assert.equal(fit.title, column(oracle(V100, 'kernel_stats'), 'kernel_name')[0], 'its whole name on hover');
    await shot(page, `kernel-stats-1280-${dark ? 'dark' : 'light'}`);
    await page.setViewportSize({ width: 1600, height: 900 });
    await page.waitForFunction(() => { const b = document.querySelector('table.kernel-table').closest('.vtable'); return b.scrollWidth <= b.clientWidth; });
    await shot(page, `kernel-stats-1600-${dark ? 'dark' : 'light'}`);
    assert.deepEqual(page.errors, []);
    await page.context().close();
  }
});

test('dark theme: the three tabs draw', { skip: skip(TPU) || skip(V100) }, async () => {
  const page = await newPage(browser);
  await openTrace(page, TPU, { dark: true });
  await openTab(page, 'roofline-model', 'roofline');
  await page.waitForSelector('canvas[data-testid="roofline-chart"][data-draw-ms]');
  await shot(page, 'roofline-dark');
  await openTab(page, 'hlo-stats', 'hlo-stats');
  await shot(page, 'hlo-stats-dark');
  await pickFiles(page, [`${V100}.xplane.pb`]);
  await waitForFile(page, 'v100_worker.xplane.pb');
  await selectFile(page, 'v100_worker.xplane.pb');
  await openTab(page, 'kernel-stats', 'kernel-stats');
  await shot(page, 'kernel-stats-dark');
  assert.deepEqual(page.errors, []);
});

test('CPU trace: the three tabs say in words why they are empty', async () => {
  const page = await newPage(browser);
  await openApp(page, server.url);
  await pickFiles(page, [fixture('tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz')]);
  await waitForFile(page, 'd2_tf_cnn.xplane.pb.gz');
  await selectFile(page, 'd2_tf_cnn.xplane.pb.gz');
  for (const [tool, testid, empty] of [['hlo-stats', 'hlo-stats', 'hlo-empty'], ['kernel-stats', 'kernel-stats', 'kernel-empty'], ['roofline-model', 'roofline', 'roofline-empty']]) {
    await openTab(page, tool, testid);
    assert.match(await page.textContent(`[data-testid="${empty}"]`), /CPU/, tool);
    assert.equal(await page.$('canvas[data-testid="roofline-chart"]'), null, 'no blank chart');
  }
  assert.deepEqual(page.errors, []);
});

// The Overview tab on d2_tf_cnn (TensorFlow CPU): the summary cards and a step's values equal XProf's
// own overview_page output; a step clicked in the step-time graph is selected for every tool (the URL
// hash keeps it through a reload, the Memory Profile zooms to its window, the Trace Viewer opens on
// it, Escape clears it); a trace without steps says so; File details keeps the HLO modules' figures
// on screen at 1400 px. Screenshots in light and dark.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DEVICE, deviceSkip, serve, launch, newPage, openApp, pickFiles, waitForFile, selectFile, metric, one, close, shot, fixture } from './harness.mjs';

const D2 = fixture('tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz');
const D2_NAME = 'd2_tf_cnn.xplane.pb.gz';
const A1 = fixture('jax/a1_docs_seed/a1_docs_seed.xplane.pb.gz');
const ORACLE = JSON.parse(readFileSync(fixture('tf/d2_tf_cnn/d2_tf_cnn.overview_page.json')).toString());
const STEPS = ORACLE[1];
// The TPU v6e trace, read in place (its test is skipped with a note when absent).
const TPU = path.join(DEVICE, 'jax_tpu_v6e_inference/tpu_v6e_inference');
const TPU_ABSENT = deviceSkip(`${TPU}.xplane.pb`);

let server, browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

/** XProf's row `i` of the step table, as {column id: value}. */
const oracleStep = (i) => Object.fromEntries(STEPS.cols.map((c, k) => [c.id, STEPS.rows[i].c[k].v]));
/** The figures of the step block `which` (`selected` or `hover`). */
const stepFigures = (page, which) => page.$eval(`[data-step-figures="${which}"]`, (el) => {
  const out = { group: el.dataset.groupId, categories: {} };
  for (const f of el.querySelectorAll('[data-metric]')) {
    if (f.dataset.metric === 'step_category_ms') out.categories[f.dataset.key] = f.dataset.value;
    else out[f.dataset.metric] = f.dataset.value;
  }
  return out;
});

async function openOverview(page, file) {
  await pickFiles(page, [file]);
  const name = file.split('/').pop();
  await waitForFile(page, name);
  await selectFile(page, name);
  await page.click('.tab[data-tool="overview-page"]');
  await page.waitForSelector('[data-testid="overview-page"][data-state="ready"], [data-testid="overview-page"][data-state="failed"]', { timeout: 60_000 });
}

/** The pixel (page coordinates) of step `i`'s bar, half way up its plot. */
async function stepPoint(page, i) {
  return page.$eval('[data-testid="step-graph"]', (el, i) => {
    const r = el.getBoundingClientRect();
    const d = el.dataset;
    const [left, right, top, bottom, n] = [d.plotLeft, d.plotRight, d.plotTop, d.plotBottom, d.steps].map(Number);
    return { x: r.x + left + ((i + 0.5) / n) * (right - left), y: r.y + bottom - 2, n, mid: r.y + (top + bottom) / 2 };
  }, i);
}

const memoryWindow = (page) => page.$eval('[data-testid="timeline-canvas"]', (el) => ({
  start: Number(el.dataset.startPs), end: Number(el.dataset.endPs), step: el.dataset.step ?? null,
}));

test('d2_tf_cnn: summary cards, a step, and the step tying Memory Profile and Trace Viewer together', async () => {
  const page = await newPage(browser);
  await openApp(page, server.url);
  await openOverview(page, D2);

  // The summary cards against XProf's figures.
  const p = STEPS.p;
  assert.equal(Number(await one(page, 'step_time_avg_ms')).toFixed(1), p.steptime_ms_average);
  assert.equal(Number(await one(page, 'step_time_sdv_ms')).toFixed(1), p.steptime_ms_standard_deviation);
  assert.equal(Number(await one(page, 'step_time_min_ms')).toFixed(1), p.steptime_ms_minimum);
  assert.equal(Number(await one(page, 'step_time_max_ms')).toFixed(1), p.steptime_ms_maximum);
  assert.equal(await one(page, 'step_count'), String(STEPS.rows.length));
  assert.equal(await one(page, 'input_bottleneck'), ORACLE[3].p.bottleneck);
  assert.equal(`${Number(await one(page, 'host_tf_op_percent')).toFixed(1)}%`, ORACLE[0].p.host_tf_op_percent);
  // XProf writes 0.0% for figures it does not compute on a CPU-only trace; the page says why instead.
  for (const [m, state] of [['host_idle_time_percent', 'not_reported'], ['device_idle_time_percent', 'no_device'],
    ['device_duty_cycle_percent', 'no_device'], ['flop_rate_utilization_relative_to_roofline', 'no_device'],
    ['memory_bw_utilization_relative_to_hw_limit', 'no_device']]) {
    assert.equal(ORACLE[0].p[m], '0.0%', m);
    assert.equal(await page.getAttribute(`[data-metric="${m}"]`, 'data-state'), state, m);
    assert.doesNotMatch(await page.textContent(`[data-metric="${m}"]`), /0\.0/, m);
  }
  // Run environment, top ops (none on a CPU trace), recommendation.
  const env = ORACLE[2].p;
  assert.equal(await one(page, 'device_type'), env.device_type);
  assert.equal(await one(page, 'device_core_count'), env.device_core_count);
  assert.equal(await one(page, 'host_count'), env.host_count);
  assert.equal(await one(page, 'is_training'), env.is_training);
  assert.equal(ORACLE[0].rows.length, 0);
  assert.match(await page.textContent('[data-testid="no-top-ops"]'), /no device/);
  const statements = await page.$$eval('[data-testid="statement"]', (els) => els.map((e) => e.textContent));
  assert.ok(statements.includes(ORACLE[3].p.statement), statements.join('\n'));
  await shot(page, 'overview-d2-light');

  // Hover a step: its figures in the tooltip.
  const i = 10;
  const row = oracleStep(i);
  let at = await stepPoint(page, i);
  assert.equal(at.n, STEPS.rows.length);
  await page.mouse.move(at.x, at.y);
  await page.waitForSelector('[data-testid="step-tooltip"]');
  assert.equal((await stepFigures(page, 'hover')).step_name, row.stepnum);

  // Click it: selected, its figures are XProf's, and the URL keeps it.
  await page.mouse.click(at.x, at.y);
  await page.waitForSelector('[data-testid="selected-step"]');
  const s = await stepFigures(page, 'selected');
  assert.equal(s.step_name, row.stepnum);
  assert.ok(close(s.step_time_ms, row.stepTimeMs), `${s.step_time_ms} vs ${row.stepTimeMs}`);
  assert.deepEqual(Object.keys(s.categories).sort(), ['hostComputeTimeMs', 'infeedTimeMs', 'otherTimeMs']);
  for (const [id, v] of Object.entries(s.categories)) assert.ok(close(v, row[id]), `${id}: ${v} vs ${row[id]}`);
  const [begin, end] = [Number(s.step_begin_ps), Number(s.step_end_ps)];
  assert.equal(end - begin, Math.round(row.stepTimeMs * 1e9));
  const hash = new URL(page.url()).hash;
  assert.ok(hash.includes(`step=${s.group}&step-span=${begin}_${end}`), hash);
  await shot(page, 'overview-d2-step-selected');

  // The Memory Profile zooms to the step's window.
  await page.click('.tab[data-tool="memory-profile"]');
  await page.waitForSelector('[data-testid="timeline-canvas"]', { timeout: 60_000 });
  await page.waitForSelector('[data-testid="timeline-status"][data-zoomed="true"]', { timeout: 60_000 });
  assert.deepEqual(await memoryWindow(page), { start: begin, end, step: s.group });
  await shot(page, 'overview-d2-step-memory-profile');

  // The Trace Viewer opens on it.
  await page.click('.tab[data-tool="trace-viewer"]');
  await page.waitForFunction(() => {
    const el = document.querySelector('[data-testid="trace-canvas"]');
    return el && el.dataset.loading === 'false' && Number(el.dataset.spans) > 0;
  }, null, { timeout: 60_000 });
  const tv = await page.$eval('[data-testid="trace-canvas"]', (el) => [Number(el.dataset.windowStartPs), Number(el.dataset.windowEndPs)]);
  assert.deepEqual(tv, [begin, end]);

  // A reload keeps the step: with the file dropped again, the Memory Profile opens on it.
  await page.click('.tab[data-tool="memory-profile"]');
  await page.reload();
  await page.waitForSelector('.toolbar');
  await pickFiles(page, [D2]);
  await waitForFile(page, D2_NAME);
  await page.waitForSelector('[data-testid="timeline-status"][data-zoomed="true"]', { timeout: 60_000 });
  assert.deepEqual(await memoryWindow(page), { start: begin, end, step: s.group });

  // Escape clears it everywhere: the hash, the Memory Profile's zoom, the graph's selection.
  await page.keyboard.press('Escape');
  await page.waitForSelector('[data-testid="timeline-status"][data-zoomed="false"]');
  assert.equal((await memoryWindow(page)).step, null);
  assert.doesNotMatch(new URL(page.url()).hash, /step=/);
  await page.click('.tab[data-tool="overview-page"]');
  await page.waitForSelector('[data-testid="overview-page"][data-state="ready"]');
  assert.equal(await page.$('[data-testid="selected-step"]'), null);

  // A click on a tip's tool opens it.
  await page.click('[data-testid="tip-tool"][data-tool="framework-op-stats"]');
  await page.waitForSelector('.tab[data-tool="framework-op-stats"][aria-selected="true"]');
  assert.deepEqual(page.errors, []);
});

test('TPU v6e: the idle figures and XProf\'s TPU duty cycle with its high-confidence pair', { skip: TPU_ABSENT }, async () => {
  const oracle = JSON.parse(readFileSync(`${TPU}.overview_page.json`).toString())[0].p;
  const page = await newPage(browser);
  await openApp(page, server.url);
  await openOverview(page, `${TPU}.xplane.pb`);
  // XProf writes its percentages "%.1f%%".
  const percent = async (m) => `${Number(await one(page, m)).toFixed(1)}%`;
  for (const m of ['host_idle_time_percent', 'device_idle_time_percent', 'device_duty_cycle_percent', 'device_duty_cycle_high_confidence_percent']) {
    assert.equal(await percent(m), oracle[m], m);
    assert.equal(await page.getAttribute(`[data-metric="${m}"]`, 'data-state'), 'percent', m);
  }
  // The idle time of the high-confidence duty cycle: XProf's ps ("%g"), here in µs.
  const idleUs = Number(await one(page, 'idle_time_high_confidence_us'));
  assert.equal((idleUs * 1e6).toPrecision(6), Number(oracle.idle_time_high_confidence_ps).toPrecision(6));
  // Both sit in XProf's "TPU Duty Cycle" card, with XProf's tooltip; the idle percentages in their own.
  const card = await page.$eval('[data-metric="device_duty_cycle_percent"]', (el) => {
    const c = el.closest('.card');
    return {
      label: c.querySelector('.label').textContent,
      title: c.getAttribute('title'),
      pair: [...c.querySelectorAll('[data-testid="duty-cycle-high-confidence"] [data-metric]')].map((f) => f.dataset.metric),
      text: c.querySelector('[data-testid="duty-cycle-high-confidence"]').textContent,
    };
  });
  assert.equal(card.label, 'TPU Duty Cycle');
  assert.match(card.title, /^Percentage of the device time that is busy\./);
  assert.deepEqual(card.pair, ['device_duty_cycle_high_confidence_percent', 'idle_time_high_confidence_us']);
  assert.ok(card.text.startsWith(`high confidence: ${oracle.device_duty_cycle_high_confidence_percent.replace('%', ' %')} · idle `), card.text);
  assert.equal(await page.$eval('[data-metric="device_idle_time_percent"]', (el) => el.closest('.card').querySelector('.label').textContent), 'Device idle');
  await shot(page, 'overview-tpu-v6e-duty-cycle');
  assert.deepEqual(page.errors, []);
});

test('dark theme, a trace without steps, and a file that is no trace', async () => {
  const page = await newPage(browser, { colorScheme: 'dark' });
  await openApp(page, server.url);
  await openOverview(page, D2);
  assert.equal(await page.getAttribute('html', 'data-theme'), 'dark');
  const at = await stepPoint(page, 3);
  await page.mouse.click(at.x, at.y);
  await page.waitForSelector('[data-testid="selected-step"]');
  await page.mouse.move(at.x + 40, at.y);
  await page.waitForSelector('[data-testid="step-tooltip"]');
  await shot(page, 'overview-d2-dark');

  // JAX on CPU: no step marker, so no step time — said in XProf's words, no empty chart.
  await pickFiles(page, [A1]);
  await waitForFile(page, 'a1_docs_seed.xplane.pb.gz');
  await selectFile(page, 'a1_docs_seed.xplane.pb.gz');
  await page.waitForSelector('[data-testid="overview-page"][data-state="ready"]', { timeout: 60_000 });
  const none = await page.textContent('[data-testid="no-steps"]');
  assert.match(none, /No step time measured/);
  assert.match(none, /No step marker observed/);
  assert.equal(await page.$('[data-testid="step-graph"]'), null);
  assert.equal(await page.getAttribute('[data-metric="step_time_avg_ms"]', 'data-value'), '');
  await shot(page, 'overview-a1-no-steps-dark');

  // An HLO module is no trace: the tab says so and points at File details.
  const hlo = fixture('hlo/module_0008.jit_tiny.cpu_after_optimizations.hlo.pb');
  await pickFiles(page, [hlo]);
  await waitForFile(page, 'module_0008.jit_tiny.cpu_after_optimizations.hlo.pb');
  await selectFile(page, 'module_0008.jit_tiny.cpu_after_optimizations.hlo.pb');
  await page.waitForSelector('[data-testid="overview-not-a-trace"]');
  assert.deepEqual(page.errors, []);
});

test('File details: a long TensorFlow module name leaves the figures on screen at 1400 px', async () => {
  const page = await newPage(browser);
  await openApp(page, server.url);
  await pickFiles(page, [D2]);
  await waitForFile(page, D2_NAME);
  await selectFile(page, D2_NAME);
  await page.click('.tab[data-tool="file-details"]');
  await page.waitForSelector('table.fd-modules');
  const fit = await page.$eval('table.fd-modules', (t) => {
    const box = t.closest('.vtable');
    const width = document.documentElement.clientWidth;
    const cells = [...t.querySelectorAll('[data-metric="allocation_count"], [data-metric="total_allocation_bytes"]')].map((e) => e.getBoundingClientRect());
    const heads = [...t.querySelectorAll('th')].map((h) => ({ text: h.textContent, right: h.getBoundingClientRect().right }));
    const name = t.querySelector('td.clip code');
    return {
      width, overflow: box.scrollWidth - box.clientWidth, heads, cells: cells.map((r) => r.right),
      longest: Math.max(...[...t.querySelectorAll('td.clip code')].map((c) => c.textContent.length)),
      clipped: name.parentElement.scrollWidth > name.parentElement.clientWidth,
    };
  });
  assert.ok(fit.longest > 100, `a long module name: ${fit.longest}`);
  assert.ok(fit.clipped, 'the long name is cut with an ellipsis');
  assert.ok(fit.overflow <= 0, `no horizontal scroll: ${fit.overflow}`);
  for (const h of fit.heads) assert.ok(h.right <= fit.width, `${h.text} at ${h.right} of ${fit.width}`);
  assert.ok(fit.cells.length >= 2 && fit.cells.every((r) => r <= fit.width), JSON.stringify(fit.cells));
  await shot(page, 'file-details-d2');
  assert.deepEqual(page.errors, []);
});

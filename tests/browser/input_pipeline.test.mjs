// The Input pipeline tab on d2_tf_cnn (TensorFlow CPU, 58 steps): XProf's verdict, a step's figures
// and the step-time statistics equal to XProf's own output, the charts drawn and hovered, the host's
// input time, and the input op table (row count, sort, filter, CSV), in light and dark; a trace
// without steps says so in words.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { serve, launch, newPage, openApp, pickFiles, waitForFile, selectFile, metric, one, close, shot, fixture } from './harness.mjs';

const D2 = fixture('tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz');
const ORACLE = JSON.parse(readFileSync(fixture('tf/d2_tf_cnn/d2_tf_cnn.input_pipeline_analyzer.json')).toString());
const A1 = fixture('jax/a1_docs_seed/a1_docs_seed.xplane.pb.gz');

let server, browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

const ready = (page) => page.waitForSelector('[data-testid="input-pipeline"][data-state="ready"]', { timeout: 60_000 });
const rowOps = (page) => page.$$eval('table.ipa-ops tbody tr[data-op]', (rows) => rows.map((r) => r.dataset.op));

async function openTab(page, file, name) {
  await pickFiles(page, [file]);
  await waitForFile(page, name);
  await selectFile(page, name);
  await page.click('.tab[data-tool="input-pipeline-analyzer"]');
  await ready(page);
}

test('d2_tf_cnn: XProf\'s verdict, steps, statistics and input ops; charts, sort, filter and CSV', async () => {
  const page = await newPage(browser);
  await openApp(page, server.url);
  await openTab(page, D2, 'd2_tf_cnn.xplane.pb.gz');
  const p = ORACLE[1].p;

  // The verdict in XProf's words, and its statistics (XProf prints them with one decimal).
  assert.equal(await one(page, 'input_conclusion'), p.input_conclusion);
  assert.equal(Number(await one(page, 'steptime_ms_average')).toFixed(1), p.steptime_ms_average);
  assert.equal(Number(await one(page, 'steptime_ms_standard_deviation', 'step_time')).toFixed(1), p.steptime_ms_standard_deviation);
  assert.equal(Number(await one(page, 'steptime_ms_minimum')).toFixed(1), p.steptime_ms_minimum);
  assert.equal(Number(await one(page, 'steptime_ms_maximum')).toFixed(1), p.steptime_ms_maximum);
  assert.equal(await one(page, 'steps'), String(ORACLE[1].rows.length));
  assert.equal(Number(await one(page, 'category_ms_average', 'hostComputeTimeMs')).toFixed(1), p.host_compute_time_ms_avg);

  // A step's figures, category by category: the ones with time are drawn and listed, the others not
  // (the charts' lists are written a few slices per frame after the page is drawn: wait for them).
  await page.waitForFunction(() => [...document.querySelectorAll('ul[data-figures]')].every((u) => u.dataset.complete === 'true'));
  const ids = ORACLE[1].cols.map((c) => c.id);
  const row = ORACLE[1].rows[3];
  const step = row.c[0].v;
  for (const [i, id] of ids.entries()) {
    if (!id.endsWith('TimeMs') || id === 'stepTimeMs') continue;
    const everywhere = ORACLE[1].rows.some((r) => r.c[i].v !== 0);
    const shown = await metric(page, id, step);
    if (everywhere) {
      assert.equal(shown.length, 1, `${id} of ${step}`);
      assert.ok(close(shown[0], row.c[i].v), `${id} of ${step}: ${shown[0]} vs ${row.c[i].v}`);
    } else {
      assert.equal(shown.length, 0, `${id} is zero at every step`);
    }
  }

  // The stacked chart is drawn; hovering a step names it and lists its figures.
  await page.waitForSelector('[data-testid="ipa-step-chart"] canvas[data-draw-ms]');
  const chart = page.locator('[data-testid="ipa-step-chart"] canvas');
  const box = await chart.boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  const tip = await page.waitForSelector('[data-testid="ipa-step-chart-tip"]');
  assert.match(await tip.textContent(), /^train \d+/);
  assert.ok(Number(await one(page, 'hover_total')) > 0);
  await page.waitForSelector('[data-testid="ipa-input-chart"] canvas[data-draw-ms]');
  assert.equal((await metric(page, 'input_percent')).length, ORACLE[1].rows.length);

  // The host's input time: XProf's preprocessing figure.
  assert.equal(Number(await one(page, 'preprocessing_us')).toFixed(3), ORACLE[2].p.preprocessing_us);

  // The input op table: XProf's rows, first by self time.
  await page.waitForSelector('table.ipa-ops');
  assert.equal(await page.getAttribute('table.ipa-ops', 'data-rows'), String(ORACLE[2].rows.length));
  assert.equal(await one(page, 'total_ops'), String(ORACLE[2].rows.length));
  assert.deepEqual((await rowOps(page)).slice(0, 2), ORACLE[2].rows.slice(0, 2).map((r) => r.c[0].v));
  const first = ORACLE[2].rows[0].c;
  assert.ok(close(await one(page, 'self_time_ms', first[0].v), first[4].v));
  assert.ok(close(await one(page, 'self_time_fraction', first[0].v), first[5].v));
  assert.equal(await one(page, 'count', first[0].v), String(first[1].v));
  assert.equal(await one(page, 'category', first[0].v), first[6].v);
  await shot(page, 'input-pipeline-light');

  // Sort by count: largest first, then reversed.
  await page.click('th[data-sort="count"] button');
  let counts = (await metric(page, 'count')).map(Number);
  assert.equal(await page.getAttribute('th[data-sort="count"]', 'aria-sort'), 'descending');
  assert.ok(counts.every((v, i) => i === 0 || counts[i - 1] >= v), 'descending');
  await page.click('th[data-sort="count"] button');
  counts = (await metric(page, 'count')).map(Number);
  assert.ok(counts.every((v, i) => i === 0 || counts[i - 1] <= v), 'ascending');

  // Filter: the rows whose op or category has the text.
  const needle = 'Shuffle';
  const matching = ORACLE[2].rows.filter((r) => `${r.c[0].v} ${r.c[6].v}`.toLowerCase().includes(needle.toLowerCase())).length;
  assert.ok(matching > 0 && matching < ORACLE[2].rows.length);
  await page.fill('[data-testid="ipa-filter"]', needle);
  await page.waitForFunction((n) => document.querySelector('table.ipa-ops')?.dataset.rows === String(n), matching);
  assert.ok((await rowOps(page)).every((op) => op.includes(needle)));

  // CSV: the filtered rows, in order.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="ipa-csv"]')]);
  assert.match(download.suggestedFilename(), /input_pipeline_ops\.csv$/);
  const csv = readFileSync(await download.path()).toString().trim().split('\n');
  assert.equal(csv.length, matching + 1);
  assert.match(csv[0], /^op_name,count,time_ms,time_fraction,self_time_ms,self_time_fraction,category$/);
  await page.fill('[data-testid="ipa-filter"]', '');
  assert.deepEqual(page.errors, []);
});

test('d2_tf_cnn in the dark theme', async () => {
  const page = await newPage(browser);
  await openApp(page, server.url);
  await page.click('[data-testid="theme-toggle"]');
  await page.waitForSelector('html[data-theme="dark"]');
  await openTab(page, D2, 'd2_tf_cnn.xplane.pb.gz');
  await page.waitForSelector('[data-testid="ipa-step-chart"] canvas[data-draw-ms]');
  await shot(page, 'input-pipeline-dark');
  assert.deepEqual(page.errors, []);
});

test('a trace without steps says so in words', async () => {
  const page = await newPage(browser);
  await openApp(page, server.url);
  await openTab(page, A1, 'a1_docs_seed.xplane.pb.gz');
  assert.match(await page.textContent('[data-testid="ipa-no-steps"]'), /No step time measured/);
  assert.match(await one(page, 'input_conclusion'), /^No step time measured/);
  assert.equal(await page.$('[data-testid="ipa-step-chart"]'), null);
  assert.ok(await page.isVisible('[data-testid="ipa-warning"]'));
  await shot(page, 'input-pipeline-no-steps');
  assert.deepEqual(page.errors, []);
});

// The op tables limited to a step (Tidemark's own, beyond XProf) on d2_tf_cnn (TensorFlow CPU): a step
// clicked in the Overview's step-time graph, Framework op stats offers "Step N only"; once clicked, the
// chip "Step N · … ms window ✕" shows, the URL hash keeps the choice, and the table's host self time
// equals the engine's for that step (the CLI's `framework-op-stats --step N --json`); the chip's ✕
// restores the whole trace's total; HLO op stats and Op Profile show the same chip. Screenshots in light and dark.
// Kernel stats and the Roofline on the V100 device trace (the one fixture with kernels and a step), below.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { DEVICE, deviceSkip, ROOT, serve, launch, newPage, openApp, pickFiles, waitForFile, selectFile, one, shot, fixture } from './harness.mjs';

const D2 = fixture('tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz');
const D2_NAME = 'd2_tf_cnn.xplane.pb.gz';

let server, browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

/** The host rows' self time (µs) of XProf's table with IDLE, as the CLI computes it (over step `step`). */
function cliHostSelfTimeUs(step) {
  const bin = process.env.TIDEMARK_BIN || path.join(ROOT, 'target/debug/tidemark');
  const args = ['framework-op-stats', D2, '--json', ...(step === undefined ? [] : ['--step', String(step)])];
  const tables = JSON.parse(execFileSync(bin, args, { maxBuffer: 64 << 20 }).toString());
  const withIdle = tables.find((t) => t.rows.some((r) => r.c[2].v === 'IDLE'));
  return withIdle.rows.filter((r) => r.c[1].v === 'Host').reduce((sum, r) => sum + r.c[7].v, 0);
}

const near = (a, b) => Math.abs(Number(a) - b) <= 1e-9 * Math.max(1, Math.abs(b));
const hostTotal = (page) => one(page, 'host_self_time_us').then(Number);

/** Waits until the Framework op stats table is answered with a host total other than `previous`. */
async function waitForTotal(page, previous) {
  await page.waitForFunction((previous) => {
    const article = document.querySelector('[data-testid="framework-op-stats"]');
    const figure = document.querySelector('[data-metric="host_self_time_us"]');
    return article?.dataset.state === 'ready' && figure && figure.dataset.value !== previous;
  }, previous === undefined ? null : String(previous), { timeout: 60_000 });
}

/** Clicks the `index`-th step (from 0) of the Overview's step-time graph; its group id and span. */
async function pickStep(page, index) {
  await page.click('.tab[data-tool="overview-page"]');
  await page.waitForSelector('[data-testid="step-graph"]', { timeout: 60_000 });
  const at = await page.$eval('[data-testid="step-graph"]', (el, index) => {
    const r = el.getBoundingClientRect();
    const [left, right, bottom, n] = [el.dataset.plotLeft, el.dataset.plotRight, el.dataset.plotBottom, el.dataset.steps].map(Number);
    return { x: r.x + left + ((index + 0.5) / n) * (right - left), y: r.y + bottom - 2 };
  }, index);
  await page.mouse.click(at.x, at.y);
  await page.waitForSelector('[data-testid="selected-step"]');
  const group = await page.$eval('[data-step-figures="selected"]', (el) => el.dataset.groupId);
  const [begin, end] = await page.$eval('[data-step-figures="selected"]', (el) =>
    ['step_begin_ps', 'step_end_ps'].map((m) => Number(el.querySelector(`[data-metric="${m}"]`).dataset.value)));
  return { group, begin, end };
}

for (const dark of [false, true]) {
  test(`d2_tf_cnn: a step limits Framework op stats to its window, ✕ restores the trace${dark ? ' (dark)' : ''}`, async () => {
    const page = await newPage(browser);
    await openApp(page, server.url);
    if (dark) {
      await page.click('[data-testid="theme-toggle"]');
      await page.waitForSelector('html[data-theme="dark"]');
    }
    await pickFiles(page, [D2]);
    await waitForFile(page, D2_NAME);
    await selectFile(page, D2_NAME);

    // Framework op stats before a step is picked: the whole trace, no chip, nothing to limit.
    await page.click('.tab[data-tool="framework-op-stats"]');
    await waitForTotal(page);
    const whole = await hostTotal(page);
    assert.ok(near(whole, cliHostSelfTimeUs()), `${whole} vs the CLI's whole trace`);
    assert.equal(await page.$('[data-testid="step-only"], [data-testid="step-chip"]'), null);

    // Pick step 11 in the Overview's step-time graph.
    const { group, begin, end } = await pickStep(page, 10);

    // Back in Framework op stats: the offer, then the chip and the step's table.
    await page.click('.tab[data-tool="framework-op-stats"]');
    await page.waitForSelector('[data-testid="step-only"]', { timeout: 60_000 });
    assert.equal(await page.textContent('[data-testid="step-only"]'), `Step ${group} only`);
    await waitForTotal(page);
    assert.ok(near(await hostTotal(page), whole), 'the offer alone limits nothing');
    await page.click('[data-testid="step-only"]');
    await page.waitForSelector('[data-testid="step-chip"]');
    const chip = await page.$eval('[data-testid="step-chip"]', (el) => ({
      text: el.textContent, step: el.dataset.step, begin: Number(el.dataset.beginPs), end: Number(el.dataset.endPs),
    }));
    assert.deepEqual([chip.step, chip.begin, chip.end], [group, begin, end]);
    assert.equal(chip.text, `Step ${group} · ${((end - begin) / 1e9).toFixed(1)} ms window✕`);
    assert.ok(new URL(page.url()).hash.includes('ops=step'), page.url());
    await waitForTotal(page, whole);
    const inStep = await hostTotal(page);
    assert.ok(near(inStep, cliHostSelfTimeUs(group)), `${inStep} vs the CLI's step ${group}`);
    assert.ok(inStep < whole / 10, `${inStep} of ${whole}`);
    await shot(page, `op-tables-step-window${dark ? '-dark' : ''}`);

    // HLO op stats and Op Profile follow the same choice.
    await page.click('.tab[data-tool="hlo-stats"]');
    await page.waitForSelector('[data-testid="hlo-stats"] [data-testid="step-chip"]', { timeout: 60_000 });
    await page.click('.tab[data-tool="op-profile"]');
    await page.waitForSelector('[data-testid="op-profile"] [data-testid="step-chip"]', { timeout: 60_000 });

    // One click on ✕: the whole trace again, and the hash forgets the choice.
    await page.click('.tab[data-tool="framework-op-stats"]');
    await page.waitForSelector('[data-testid="step-chip-clear"]');
    await page.click('[data-testid="step-chip-clear"]');
    await waitForTotal(page, inStep);
    assert.ok(near(await hostTotal(page), whole));
    await page.waitForSelector('[data-testid="step-only"]');
    assert.equal(await page.$('[data-testid="step-chip"]'), null);
    assert.ok(!new URL(page.url()).hash.includes('ops=step'), page.url());
    await page.close();
  });
}

// Kernel stats and the Roofline over a step. The CPU fixtures have no GPU kernels, and of the device
// fixtures only the V100 trace has kernels and a step (step 0), so this test reads it in place from
// ../shared/fixtures/device and is skipped with a note when it is absent.
const V100 = path.join(DEVICE, 'tf_v100_multi_worker/v100_worker.xplane.pb');
const V100_NAME = 'v100_worker.xplane.pb';
const v100Skip = deviceSkip(V100);
if (v100Skip) console.log(`# op_tables_window: ${v100Skip}; the Kernel stats and Roofline step test is skipped`);

/** The CLI's `--json` table of `command` on the V100 trace (over step `step` when given). */
function cliV100(command, step) {
  const bin = process.env.TIDEMARK_BIN || path.join(ROOT, 'target/debug/tidemark');
  const args = [command, V100, '--json', ...(step === undefined ? [] : ['--step', String(step)])];
  return JSON.parse(execFileSync(bin, args, { maxBuffer: 64 << 20 }).toString());
}

/** Column `id` of XProf's DataTable `t`, row by row. */
const column = (t, id) => { const i = t.cols.findIndex((c) => c.id === id); return t.rows.map((r) => r.c[i].v); };

/** Σ total duration (µs) of the CLI's Kernel Stats table. */
const cliKernelTimeUs = (step) => column(cliV100('kernel-stats', step), 'total_duration_us').reduce((a, b) => a + b, 0);

/** The program's total time (µs) of the CLI's roofline, whole profile ("Total"), infeed/outfeed in. */
function cliProgramTimeUs(step) {
  const [records] = cliV100('roofline-model', step);
  const [spans, ranks, totals] = [column(records, 'step'), column(records, 'rank'), column(records, 'total_time')];
  return totals[spans.findIndex((s, i) => s === 'Total' && ranks[i] === 0)];
}

/** Waits until the tool `testid` is answered with `metric` (for `key`) other than `previous`. */
async function waitForFigure(page, testid, metricName, key, previous) {
  const figure = `[data-metric="${metricName}"]${key === null ? '' : `[data-key="${key}"]`}`;
  await page.waitForFunction(({ testid, figure, previous }) => {
    const article = document.querySelector(`[data-testid="${testid}"]`);
    const el = article?.querySelector(figure);
    return article?.dataset.state === 'ready' && el && el.dataset.value !== previous;
  }, { testid, figure, previous: previous === undefined ? null : String(previous) }, { timeout: 60_000 });
  return Number(await page.$eval(`[data-testid="${testid}"] ${figure}`, (el) => el.dataset.value));
}

test('V100: a step limits Kernel stats and the Roofline to its window, ✕ restores the trace', { skip: v100Skip }, async () => {
  const page = await newPage(browser);
  await openApp(page, server.url);
  await pickFiles(page, [V100]);
  await waitForFile(page, V100_NAME);
  await selectFile(page, V100_NAME);

  // Kernel stats before a step is picked: the whole trace, no chip.
  await page.click('.tab[data-tool="kernel-stats"]');
  const whole = await waitForFigure(page, 'kernel-stats', 'total_kernel_time_us', null);
  assert.ok(near(whole, cliKernelTimeUs()), `${whole} vs the CLI's whole trace`);
  assert.equal(await page.$('[data-testid="step-only"], [data-testid="step-chip"]'), null);

  // Pick the trace's one step in the Overview's step-time graph.
  const { group } = await pickStep(page, 0);
  assert.equal(group, '0');

  // Kernel stats: the offer, then the chip and the step's table, equal to the CLI's `--step 0`.
  await page.click('.tab[data-tool="kernel-stats"]');
  await page.waitForSelector('[data-testid="kernel-stats"] [data-testid="step-only"]', { timeout: 60_000 });
  await page.click('[data-testid="step-only"]');
  await page.waitForSelector('[data-testid="kernel-stats"] [data-testid="step-chip"]');
  assert.ok(new URL(page.url()).hash.includes('ops=step'), page.url());
  const inStep = await waitForFigure(page, 'kernel-stats', 'total_kernel_time_us', null, whole);
  assert.ok(near(inStep, cliKernelTimeUs(group)), `${inStep} vs the CLI's step ${group}`);
  assert.ok(inStep > 0 && inStep < whole, `${inStep} of ${whole}`);
  assert.equal(Number(await page.getAttribute('table.kernel-table', 'data-rows')), column(cliV100('kernel-stats', group), 'kernel_name').length);
  await shot(page, 'kernel-stats-step-window');

  // The Roofline follows the same choice: the program's time is the step's.
  await page.click('.tab[data-tool="roofline-model"]');
  await page.waitForSelector('[data-testid="roofline"] [data-testid="step-chip"]', { timeout: 60_000 });
  const programInStep = await waitForFigure(page, 'roofline', 'total_time_us', 'Program');
  assert.ok(near(programInStep, cliProgramTimeUs(group)), `${programInStep} vs the CLI's step ${group}`);
  await shot(page, 'roofline-step-window');

  // ✕ on the Roofline: the whole trace's program; Kernel stats' whole total too, and the hash forgets.
  await page.click('[data-testid="step-chip-clear"]');
  const programWhole = await waitForFigure(page, 'roofline', 'total_time_us', 'Program', programInStep);
  assert.ok(near(programWhole, cliProgramTimeUs()), `${programWhole} vs the CLI's whole trace`);
  assert.ok(programInStep < programWhole);
  await page.waitForSelector('[data-testid="roofline"] [data-testid="step-only"]');
  assert.ok(!new URL(page.url()).hash.includes('ops=step'), page.url());
  await page.click('.tab[data-tool="kernel-stats"]');
  assert.ok(near(await waitForFigure(page, 'kernel-stats', 'total_kernel_time_us', null, inStep), whole));
  assert.equal(await page.$('[data-testid="step-chip"]'), null);
  assert.deepEqual(page.errors, []);
  await page.close();
});

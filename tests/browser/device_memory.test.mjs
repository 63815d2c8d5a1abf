// The Device memory tab as a user meets it: drop the nine leak-loop snapshots and read the suspect,
// diff two snapshots, open one profile and hover its flame graph; every figure is checked against
// `tidemark device-memory --json` on the same files.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { serve, launch, newPage, openApp, dropFiles, waitForFile, metric, shot, fixture, ROOT } from './harness.mjs';

const LEAK = Array.from({ length: 9 }, (_, i) => fixture(`pprof/docs_leak/memory${i + 1}.prof`));
const SEED = fixture('pprof/docs_seed_memory.prof');
const LEAK_SITE = 'normal ← anotherfunc ← b2_pprof_docs_leak.py:20';
const CONSTANT_SITE = 'normal ← afunction ← b2_pprof_docs_leak.py:13';

function cli(args) {
  const bin = process.env.TIDEMARK_BIN || path.join(ROOT, 'target/debug/tidemark');
  return JSON.parse(execFileSync(bin, ['device-memory', '--json', ...args], { maxBuffer: 64 << 20 }).toString());
}

const key = (s) => `${s.kind}|${s.device}|${s.site}`;

let server, browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

/** Opens the Device memory tab and waits until the engine has answered what it shows. */
async function openTab(page, mode) {
  await page.click('[data-tool="device-memory"]');
  await waitReady(page, mode);
}

async function waitReady(page, mode) {
  await page.waitForSelector(`[data-testid="device-memory"][data-mode="${mode}"][data-state="ready"]`, { timeout: 30_000 });
}

async function loadLeakSeries(page) {
  await openApp(page, server.url);
  await dropFiles(page, LEAK);
  for (const f of LEAK) await waitForFile(page, path.basename(f));
  await openTab(page, 'series');
}

test('series of nine snapshots names the leaking call site with its growth', async () => {
  const want = cli(LEAK).report;
  const page = await newPage(browser);
  await loadLeakSeries(page);

  assert.deepEqual(await metric(page, 'snapshot_count'), ['9']);
  assert.deepEqual(await metric(page, 'suspect_count'), [String(want.suspect_count)]);
  for (const s of want.snapshots) {
    assert.deepEqual(await metric(page, 'snapshot_total_bytes', `total|${path.basename(s.name)}`), [String(s.total_bytes)], s.name);
  }
  // The top suspect, as the CLI ranks it: the leak in anotherfunc, line 20.
  const top = want.stacks[0];
  assert.equal(top.site, LEAK_SITE);
  assert.ok(top.suspect);
  const card = page.locator('.dm-stack[data-rank="1"]');
  assert.equal(await card.getAttribute('data-site'), LEAK_SITE);
  assert.equal(await card.getAttribute('data-suspect'), 'true');
  const k = key(top);
  assert.deepEqual(await metric(page, 'series_explanation', k), [top.explanation]);
  assert.match(top.explanation, /^grew in 8 of 8 steps, \+220,000 B\/step/);
  assert.deepEqual(await metric(page, 'series_net_growth_bytes', k), [String(top.growth.net_growth_bytes)]);
  assert.deepEqual(await metric(page, 'series_mean_growth_bytes_per_step', k), ['220000']);
  assert.deepEqual(await metric(page, 'series_grew_steps', k), ['8']);
  // Its bytes per snapshot: step k appends k × 10,000 float32 (40,000·k bytes).
  const bytes = [];
  for (const s of want.snapshots) bytes.push(...await metric(page, 'series_bytes', `${k}|${path.basename(s.name)}`));
  assert.deepEqual(bytes, top.bytes.map(String));
  assert.deepEqual(top.growth.deltas_bytes, [2, 3, 4, 5, 6, 7, 8, 9].map((s) => 40_000 * s));
  assert.match(await card.textContent(), /grew in 8 of 8 steps/);

  // afunction's constant 4,000,000-byte array is shown, and not as a suspect.
  const constant = page.locator(`.dm-stack[data-site="${CONSTANT_SITE}"][data-kind="buffer"]`);
  assert.equal(await constant.getAttribute('data-suspect'), 'false');
  assert.deepEqual(await metric(page, 'series_last_bytes', `buffer|cpu:0|${CONSTANT_SITE}`), ['4000000']);
  assert.equal(await page.locator('.dm-stack[data-suspect="true"]').count(), want.suspect_count);

  // Hovering the totals chart names the snapshot and its bytes.
  const chart = page.locator('.series-chart.bars canvas');
  const box = await chart.boundingBox();
  await page.mouse.move(box.x + box.width - 20, box.y + box.height / 2);
  const tip = page.locator('.series-chart.bars .chart-tip');
  assert.match(await tip.textContent(), /memory9\.prof/);
  assert.deepEqual(await metric(page, 'chart_hover_bytes'), [String(want.snapshots[8].total_bytes)]);
  await page.mouse.move(0, 0);
  await shot(page, 'device-memory-series-light');
  await page.click('[data-testid="theme-toggle"]');
  await shot(page, 'device-memory-series-dark');
  assert.deepEqual(page.errors, []);
});

test('diff of memory8 and memory9 shows the ninth array in red, in the table and the flame graph', async () => {
  const want = cli(['--base', LEAK[7], LEAK[8]]).report;
  const page = await newPage(browser);
  await loadLeakSeries(page);
  await page.click('[data-mode="diff"]');
  await page.selectOption('[data-testid="dm-base"]', 'memory8.prof');
  await page.selectOption('[data-testid="dm-target"]', 'memory9.prof');
  await page.waitForSelector('.summary-cards .label:text("Base · memory8.prof")');
  await waitReady(page, 'diff');

  const top = want.stacks[0];
  assert.equal(top.site, LEAK_SITE);
  assert.equal(top.delta_bytes, 360_000);
  assert.deepEqual(await metric(page, 'diff_delta_bytes', key(top)), ['360000']);
  assert.deepEqual(await metric(page, 'diff_delta_total_bytes'), [String(want.delta_bytes)]);
  assert.deepEqual(await metric(page, 'diff_base_total_bytes'), [String(want.base_total_bytes)]);
  assert.deepEqual(await metric(page, 'diff_target_total_bytes'), [String(want.new_total_bytes)]);
  const shown = await page.$$eval('[data-metric="diff_delta_bytes"]', (els) => els.map((e) => [e.dataset.key, e.dataset.value]));
  assert.deepEqual(shown, want.stacks.map((s) => [key(s), String(s.delta_bytes)]));
  // Growth is drawn in the growth colour.
  const cell = page.locator(`[data-metric="diff_delta_bytes"][data-key="${key(top)}"]`);
  assert.equal(await cell.getAttribute('data-sign'), 'grow');
  const [colour, grow] = await cell.evaluate((e) => {
    const probe = document.createElement('span');
    probe.style.color = 'var(--grow)';
    document.body.append(probe);
    const want = getComputedStyle(probe).color;
    probe.remove();
    return [getComputedStyle(e).color, want];
  });
  assert.equal(colour, grow, 'growth is drawn in the growth colour');
  assert.notEqual(grow, await page.evaluate(() => getComputedStyle(document.body).color));
  assert.deepEqual(await metric(page, 'flame_root_bytes'), ['360000']);
  assert.deepEqual(await metric(page, 'flame_frame_bytes', 'anotherfunc@/home/ml/profiling/b2_pprof_docs_leak.py'), ['360000']);
  await hoverFrame(page, 'anotherfunc');
  assert.deepEqual(await metric(page, 'flame_hover_total_bytes'), ['360000']);
  assert.match(await page.textContent('[data-testid="flame-tooltip"]'), /\+351\.56 KiB/);
  await shot(page, 'device-memory-diff-light');
  assert.deepEqual(page.errors, []);
});

/** Moves the pointer to the middle of the flame graph frame of `fn` and waits for its tooltip. */
async function hoverFrame(page, fn) {
  const frame = page.locator(`[data-testid="flame-canvas"] li[data-function="${fn}"]`).first();
  const [x, y, w] = await Promise.all(['data-x', 'data-y', 'data-w'].map(async (a) => Number(await frame.getAttribute(a))));
  const box = await page.locator('[data-testid="flame-canvas"]').boundingBox();
  await page.mouse.move(box.x + x + w / 2, box.y + y + 9);
  await page.waitForSelector(`[data-testid="flame-tooltip"][data-function="${fn}"]`);
  return { x: box.x + x + w / 2, y: box.y + y + 9 };
}

test('one snapshot: func2 holds the two tiled arrays, in the table and the flame graph', async () => {
  const want = cli([SEED]).report;
  const page = await newPage(browser);
  await openApp(page, server.url);
  await dropFiles(page, [SEED]);
  await waitForFile(page, 'docs_seed_memory.prof');
  await openTab(page, 'profile');

  assert.deepEqual(await metric(page, 'dm_total_bytes'), [String(want.total_bytes)]);
  for (const f of want.functions) {
    const k = `${f.function}@${f.file}`;
    assert.deepEqual(await metric(page, 'flat_bytes', k), [String(f.flat_bytes)], k);
    assert.deepEqual(await metric(page, 'cum_bytes', k), [String(f.cum_bytes)], k);
    assert.deepEqual(await metric(page, 'cum_count', k), [String(f.cum_count)], k);
  }
  for (const s of want.stacks.filter((s) => s.kind === 'buffer')) {
    assert.deepEqual(await metric(page, 'site_bytes', key(s)), [String(s.bytes)], s.site);
  }
  const func2 = want.functions.find((f) => f.function === 'func2');
  assert.equal(func2.cum_bytes, 80_000_000);
  const func2Key = `func2@${func2.file}`;
  assert.deepEqual(await metric(page, 'cum_bytes', func2Key), ['80000000']);

  // The flame graph: hover func2 for its place, bytes and count.
  assert.deepEqual(await metric(page, 'flame_frame_bytes', func2Key), ['80000000']);
  const at = await hoverFrame(page, 'func2');
  const tip = await page.textContent('[data-testid="flame-tooltip"]');
  assert.match(tip, /b1_pprof_docs_seed\.py:15,16/);
  assert.match(tip, /76\.29 MiB/);
  assert.deepEqual(await metric(page, 'flame_hover_total_bytes'), ['80000000']);
  assert.deepEqual(await metric(page, 'flame_hover_total_count'), [String(func2.cum_count)]);
  await shot(page, 'device-memory-profile-hover-light');

  // Click zooms into func2 (its callees fill the width); Esc resets.
  await page.mouse.click(at.x, at.y);
  await page.waitForSelector('.crumbs .crumb:text("func2")');
  const zoomed = page.locator('[data-testid="flame-canvas"] li[data-function="func2"]');
  assert.equal(Math.round(Number(await zoomed.getAttribute('data-x'))), 0);
  await page.keyboard.press('Escape');
  await page.waitForSelector('[data-testid="flame-canvas"][data-zoom="0"]');

  // Sort by cumulative bytes: <module> holds everything.
  await page.click('th[data-sort="CumBytes"]');
  assert.equal(await page.locator('table.dm-functions tbody tr').first().getAttribute('data-function'), '<module>');

  // Unfolded, JAX's dispatch frames appear, with the CLI's --all-frames numbers.
  const all = cli(['--all-frames', SEED]).report;
  await page.uncheck('[data-testid="dm-fold"]');
  await waitReady(page, 'profile');
  const pjit = all.functions.find((f) => f.function === '_pjit_call_impl_python');
  assert.deepEqual(await metric(page, 'cum_bytes', `${pjit.function}@${pjit.file}`), [String(pjit.cum_bytes)]);
  await page.check('[data-testid="dm-fold"]');
  await waitReady(page, 'profile');

  // Executables only: 0 bytes, and the flame graph says why it is empty.
  await page.selectOption('[data-testid="dm-kind"]', 'executable');
  await waitReady(page, 'profile');
  assert.deepEqual(await metric(page, 'dm_total_bytes'), ['0']);
  assert.deepEqual(await metric(page, 'dm_total_count'), [String(cli(['--kind', 'executable', SEED]).report.total_count)]);
  await page.waitForSelector('[data-testid="flame-empty"]');
  await page.selectOption('[data-testid="dm-kind"]', '');
  await waitReady(page, 'profile');
  await page.click('[data-testid="theme-toggle"]');
  await hoverFrame(page, 'func1');
  await shot(page, 'device-memory-profile-dark');
  assert.deepEqual(page.errors, []);
});

test('a trace or HLO file says what this tool reads and where to go instead', async () => {
  const page = await newPage(browser);
  await openApp(page, server.url);
  const hlo = fixture('hlo/module_0014.jit__normal.cpu_after_optimizations.hlo.pb');
  await dropFiles(page, [hlo]);
  await waitForFile(page, path.basename(hlo));
  await page.click('[data-tool="device-memory"]');
  const text = await page.textContent('[data-testid="dm-not-pprof"]');
  assert.match(text, /HloProto/);
  assert.match(text, /\*\.prof/);
  assert.match(text, /save_device_memory_profile/);
  assert.match(text, /Memory Viewer/);
  assert.deepEqual(page.errors, []);
});

// A run of two TensorFlow hosts opened as a log folder: "Across hosts" lists every allocator of both
// hosts with the figures the CLI gives for the same folder (`tidemark memory-across-hosts --json`),
// closest to capacity first; hovering one timeline shows every row's bytes at that time; clicking a
// row opens that host's Memory Profile on that allocator, whose peak is the row's. And "All hosts"
// drives the op tools: the Overview of both hosts equals XProf's two-host output
// (tests/fixtures/runs/tf_two_hosts/), and it survives a reload through the URL hash.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, serve, launch, newPage, openApp, waitForFile, metric, one, close, shot, fixture } from './harness.mjs';
import { scratchDir } from './support/scratch.mjs';

const RUN = '2026_11_24_09_30_00';
const RUN_DIR = `logs/plugins/profile/${RUN}`;
const HOSTS = [
  ['worker-0', fixture('tf/d1_tf_keras_bfc/d1_tf_keras_bfc.xplane.pb.gz')],
  ['worker-1', fixture('tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz')],
];
const OVERVIEW = JSON.parse(readFileSync(fixture('runs/tf_two_hosts/tf_two_hosts.overview_page.json')).toString());

let server, browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

/** The log folder (`logs/`), and the run folder the CLI reads. */
function logFolder() {
  const logdir = path.join(scratchDir('tidemark-hostmem-'), 'logs');
  const dir = path.join(logdir, 'plugins/profile', RUN);
  mkdirSync(dir, { recursive: true });
  for (const [host, src] of HOSTS) copyFileSync(src, path.join(dir, `${host}.xplane.pb.gz`));
  return { logdir, dir };
}

/** The CLI's answer for the run folder. */
function cli(dir) {
  const bin = process.env.TIDEMARK_BIN || path.join(ROOT, 'target/debug/tidemark');
  return JSON.parse(execFileSync(bin, ['memory-across-hosts', dir, '--json'], { maxBuffer: 64 << 20 }).toString());
}

async function openRun(page) {
  const { logdir, dir } = logFolder();
  await openApp(page, server.url);
  await page.setInputFiles('[data-testid="folder-input"]', logdir);
  for (const [host] of HOSTS) await waitForFile(page, `${RUN_DIR}/${host}.xplane.pb.gz`);
  return dir;
}

const ready = (page, testid) => page.waitForSelector(`[data-testid="${testid}"][data-state="ready"]`, { timeout: 90_000 });

test('every allocator of both hosts, closest to capacity first, and a row opens its Memory Profile', async () => {
  const page = await newPage(browser);
  const dir = await openRun(page);
  await page.click('.tab[data-tool="memory-across-hosts"]');
  await ready(page, 'memory-across-hosts');

  const expected = cli(dir);
  assert.ok(expected.allocators.length >= 2, 'both hosts have allocators');
  const rows = await page.$$eval('tr.hostmem-row', (rs) => rs.map((r) => ({ host: r.dataset.host, memory_id: r.dataset.memoryId })));
  assert.deepEqual(rows, expected.allocators.map((a) => ({ host: a.host, memory_id: a.memory_id })), 'the CLI\'s rows in the CLI\'s order');
  for (const a of expected.allocators) {
    const key = `${a.host}|${a.memory_id}`;
    assert.equal(Number(await one(page, 'peak_bytes', key)), a.peak_bytes, key);
    assert.equal(await one(page, 'capacity_bytes', key), a.capacity_bytes === null ? '' : String(a.capacity_bytes), key);
    if (a.peak_fraction !== null) assert.ok(close(await one(page, 'peak_fraction', key), a.peak_fraction), key);
    assert.ok(close(await one(page, 'peak_time_us', key), a.peak_time_ps / 1e6), key);
  }
  assert.equal(Number(await one(page, 'hosts')), HOSTS.length);

  // Hover the first row's timeline at its peak: every row shows its bytes at that one time (none for a
  // host whose events have not begun or have ended by then).
  const first = expected.allocators[0];
  const canvas = await page.$('tr.hostmem-row td.hostmem-spark canvas');
  const box = await canvas.boundingBox();
  const x = 4 + ((first.peak_time_ps - expected.start_ps) / (expected.end_ps - expected.start_ps)) * (box.width - 8);
  await page.mouse.move(box.x + x, box.y + box.height / 2);
  await page.waitForSelector('[data-metric="cursor_time_us"]');
  const t_ps = Number(await one(page, 'cursor_time_us')) * 1e6;
  for (const a of expected.allocators) {
    const before = a.timeline.filter((p) => p[0] <= t_ps);
    const ended = before.length === 0 || t_ps > a.timeline[a.timeline.length - 1][0];
    const shown = await metric(page, 'bytes_at_cursor', `${a.host}|${a.memory_id}`);
    assert.deepEqual(shown.map(Number), ended ? [] : [before[before.length - 1][1]], `${a.host} ${a.memory_id} at ${t_ps} ps`);
  }
  assert.equal((await metric(page, 'bytes_at_cursor', `${first.host}|${first.memory_id}`)).length, 1, 'the first row has bytes at its own peak');
  await shot(page, 'memory-across-hosts');

  // The last row: that host's Memory Profile on that allocator, with the row's peak.
  const last = expected.allocators[expected.allocators.length - 1];
  const lastPath = `${RUN_DIR}/${last.path}`;
  await page.click(`tr.hostmem-row[data-host="${last.host}"][data-memory-id="${last.memory_id}"]`);
  await page.waitForSelector(`article[data-testid="memory-profile"][data-file="${lastPath}"] [data-testid="memory-summary"]`, { timeout: 90_000 });
  await page.waitForFunction((id) => document.querySelector('[data-testid="memory-id-select"]')?.value === id, last.memory_id, { timeout: 30_000 });
  assert.equal(await page.$eval('[data-testid="file-select"]', (s) => s.value), lastPath);
  const heap = Number(await one(page, 'peak_heap_bytes'));
  const stack = Number(await one(page, 'peak_stack_bytes'));
  assert.equal(heap + stack, last.peak_bytes);
  assert.ok(page.url().includes(`memory-id=${encodeURIComponent(last.memory_id)}`), page.url());
  assert.deepEqual(page.errors, []);
});

test('All hosts drives the op tools and stays in the URL', async () => {
  const page = await newPage(browser);
  await openRun(page);
  await page.click('.tab[data-tool="overview-page"]');
  await page.selectOption('[data-testid="file-select"]', '*all-hosts*');
  const steps = OVERVIEW[1].rows.length;
  const average = Number(OVERVIEW[1].p.steptime_ms_average);
  const combined = async () => {
    await page.waitForFunction((n) => document.querySelector('[data-metric="step_count"]')?.dataset.value === String(n), steps, { timeout: 90_000 });
    // XProf writes the average with one decimal.
    assert.ok(Math.abs(Number(await one(page, 'step_time_avg_ms')) - average) <= 0.05, 'average step time of both hosts');
  };
  await combined();
  assert.ok(page.url().includes('hosts=all'), page.url());
  await shot(page, 'overview-all-hosts');

  // HLO ops follow it too (a CPU run: XProf's combined table is empty as well).
  await page.click('.tab[data-tool="hlo-stats"]');
  await page.waitForSelector('[data-testid="hlo-stats"][data-state="ready"] [data-testid="hlo-empty"]', { timeout: 90_000 });

  // A reload keeps the run's All hosts: the Overview is the combined one again.
  const url = page.url().replace('tool=hlo-stats', 'tool=overview-page');
  await page.goto('about:blank');
  await openApp(page, url);
  await page.setInputFiles('[data-testid="folder-input"]', logFolder().logdir);
  await combined();
  assert.equal(await page.$eval('[data-testid="file-select"]', (s) => s.value), '*all-hosts*');
  assert.deepEqual(page.errors, []);
});

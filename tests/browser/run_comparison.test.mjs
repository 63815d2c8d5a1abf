// Two runs compared: a log folder with a newer run of two hosts (the tf_two_hosts run, whose
// combined framework op stats equal XProf's) and an older run sharing one host name. The page
// compares nothing until a baseline is chosen in the file panel; then the Run comparison's figures
// equal the CLI's `compare-runs --json` (the same engine), the current run's op times equal XProf's
// table for those two files, the memory peaks XProf's Memory Profile peaks, and the baseline
// survives a reload through the URL hash.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import path from 'node:path';
import { ROOT, serve, launch, newPage, openApp, waitForFile, metric, one, close, shot, fixture } from './harness.mjs';
import { scratchDir } from './support/scratch.mjs';

const D1 = 'tf/d1_tf_keras_bfc/d1_tf_keras_bfc';
const D2 = 'tf/d2_tf_cnn/d2_tf_cnn';
const D1_STATS = 'tf/d1_tf_keras_stats/d1_tf_keras_stats';
const ORACLE = JSON.parse(readFileSync(fixture('runs/tf_two_hosts/tf_two_hosts.framework_op_stats.json')).toString());
const memoryOracle = (f) => JSON.parse(gunzipSync(readFileSync(fixture(`${f}.memory_profile.json.gz`))).toString());

const NEW = '2026_11_24_09_30_00';
const OLD = '2026_11_23_10_00_00';
const dirOf = (run) => `logs/plugins/profile/${run}`;

let server, browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

/** The log folder: the newer run's worker-0 and worker-1, the older run's worker-0 and worker-2. */
function logFolder() {
  const root = scratchDir('tidemark-runcmp-');
  const place = (run, f, host) => {
    const dir = path.join(root, dirOf(run));
    mkdirSync(dir, { recursive: true });
    copyFileSync(fixture(`${f}.xplane.pb.gz`), path.join(dir, `${host}.xplane.pb.gz`));
  };
  place(NEW, D1, 'worker-0');
  place(NEW, D2, 'worker-1');
  place(OLD, D2, 'worker-0');
  place(OLD, D1_STATS, 'worker-2');
  return root;
}

/** The CLI's comparison of the same two run folders. */
function cliComparison(root) {
  const bin = process.env.TIDEMARK_BIN || path.join(ROOT, 'target/debug/tidemark');
  const out = execFileSync(bin, ['compare-runs', path.join(root, dirOf(NEW)), '--baseline', path.join(root, dirOf(OLD)), '--json'], { maxBuffer: 64 << 20 });
  return JSON.parse(out.toString());
}

const opKey = (o) => `${o.on_device ? 'device' : 'host'}/${o.op_type}/${o.op_name}`;

async function openFolder(page, root) {
  await page.setInputFiles('[data-testid="folder-input"]', path.join(root, 'logs'));
  for (const [run, host] of [[NEW, 'worker-0'], [NEW, 'worker-1'], [OLD, 'worker-0'], [OLD, 'worker-2']]) {
    await waitForFile(page, `${dirOf(run)}/${host}.xplane.pb.gz`);
  }
}

const ready = '[data-testid="run-comparison"][data-state="ready"]';

test('a run against the baseline run: op times, memory peaks and step time with their changes', async () => {
  const root = logFolder();
  const want = cliComparison(root);
  const page = await newPage(browser);
  await openApp(page, server.url);
  await openFolder(page, root);
  await page.selectOption('[data-testid="run-select"]', `${dirOf(NEW)}`);
  await page.click('.tab[data-tool="run-comparison"]');

  // No baseline yet: the tool says how to pick one; the selector offers the other run, none chosen.
  await page.waitForSelector('[data-testid="rc-no-baseline"]');
  const options = await page.$$eval('[data-testid="baseline-select"] option', (os) => os.map((o) => o.textContent));
  assert.deepEqual(options, ['None', OLD]);
  await page.selectOption('[data-testid="baseline-select"]', `${dirOf(OLD)}`);
  await page.waitForSelector(ready, { timeout: 120_000 });
  assert.match(decodeURIComponent(await page.evaluate(() => location.hash)), new RegExp(`baseline=${dirOf(OLD)}`));

  // The runs, and the hosts only one of them has.
  assert.equal(await one(page, 'current_run'), NEW);
  assert.equal(await one(page, 'baseline_run'), OLD);
  assert.deepEqual(await metric(page, 'unmatched_host'), ['worker-1', 'worker-2']);

  // The summary: host op self time of both runs, the change and the ratio; the step time.
  const h = want.host_self_time_us;
  assert.ok(close(await one(page, 'current_host_self_time_us'), h.current));
  assert.ok(close(await one(page, 'baseline_host_self_time_us'), h.baseline));
  assert.ok(close(await one(page, 'delta_host_self_time_us'), h.delta));
  assert.ok(close(await one(page, 'host_self_time_ratio'), h.ratio));
  assert.equal(await page.$$eval('[data-metric="current_device_self_time_us"]', (e) => e.length), 0, 'CPU runs: no device card');
  assert.ok(close(await one(page, 'current_step_time_us'), want.step_time.average_ms.current * 1e3));
  assert.equal(await one(page, 'baseline_steps'), String(want.step_time.baseline_steps));

  // The op table: every op counted, the largest change first, each row's figures the engine's.
  assert.equal(await one(page, 'total_ops'), String(want.ops.length));
  const firstRows = await page.$$eval('[data-testid="rc-table"] tbody tr[data-op]', (rs) => rs.slice(0, 5).map((r) => r.dataset.op));
  assert.deepEqual(firstRows, want.ops.slice(0, 5).map((o) => o.op_name));
  for (const o of want.ops.slice(0, 5)) {
    const k = opKey(o);
    assert.ok(close(await one(page, 'self_time_us', k), o.self_time_us.current), k);
    assert.ok(close(await one(page, 'baseline_self_time_us', k), o.self_time_us.baseline), k);
    assert.ok(close(await one(page, 'delta_self_time_us', k), o.self_time_us.delta), k);
    assert.equal(await one(page, 'occurrences', k), String(o.current_occurrences), k);
  }
  // The current run's IDLE time is XProf's, for the same two hosts combined.
  const xprofIdle = ORACLE[0].rows.find((r) => r.c[3].v === 'IDLE').c[7].v;
  assert.ok(close(await one(page, 'self_time_us', 'host/IDLE/IDLE'), xprofIdle));
  // Bars: red where slower, green where faster.
  const signs = await page.$$eval('[data-testid="rc-table"] tbody tr[data-op] .delta-bar', (bs) => bs.slice(0, 5).map((b) => b.dataset.sign));
  assert.deepEqual(signs, want.ops.slice(0, 5).map((o) => (o.self_time_us.delta < 0 ? 'shrink' : 'grow')));
  const [slower, faster] = await page.evaluate(() => {
    const bg = (sign) => {
      const el = document.querySelector(`.delta-bar[data-sign="${sign}"]`);
      return el ? getComputedStyle(el).backgroundColor : null;
    };
    return [bg('grow'), bg('shrink')];
  });
  assert.ok(slower && faster && slower !== faster, `${slower} vs ${faster}`);

  // Sorting by this run's self time puts the longest op first.
  await page.click('th[data-sort="self"] button');
  await page.waitForFunction(() => document.querySelector('th[data-sort="self"]')?.getAttribute('aria-sort') === 'descending');
  const longest = [...want.ops].sort((a, b) => b.self_time_us.current - a.self_time_us.current)[0];
  assert.equal(await page.$eval('[data-testid="rc-table"] tbody tr[data-op]', (r) => r.dataset.op), longest.op_name);
  await shot(page, 'run-comparison-light');

  // Memory peaks: each host's allocators, matched by host name, equal XProf's Memory Profile peaks.
  const peak = (f, id) => memoryOracle(f).memoryProfilePerAllocator[id].profileSummary.peakStats.peakBytesInUse;
  assert.equal(await one(page, 'peak_bytes', 'worker-0/bfc_cpu_allocator_for_gpu'), peak(D1, 'bfc_cpu_allocator_for_gpu'));
  assert.equal(await one(page, 'baseline_peak_bytes', 'worker-0/bfc_cpu_allocator_for_gpu'), peak(D2, 'bfc_cpu_allocator_for_gpu'));
  assert.equal(await one(page, 'delta_peak_bytes', 'worker-0/bfc_cpu_allocator_for_gpu'), String(want.memory[0].delta_peak_bytes));
  assert.equal(await one(page, 'peak_bytes', 'worker-1/bfc_cpu_allocator_for_gpu'), peak(D2, 'bfc_cpu_allocator_for_gpu'));
  assert.equal(await one(page, 'baseline_peak_bytes', 'worker-2/cpu'), peak(D1_STATS, 'cpu'));
  const presence = await page.$$eval('[data-testid="rc-memory"] tbody tr[data-host]', (rs) => rs.map((r) => `${r.dataset.host}:${r.dataset.presence}`));
  assert.deepEqual(presence, ['worker-0:both', 'worker-1:this run', 'worker-2:baseline']);

  await page.click('[data-testid="theme-toggle"]');
  await page.locator('[data-testid="rc-memory"]').scrollIntoViewIfNeeded();
  await shot(page, 'run-comparison-dark');
  assert.deepEqual(page.errors, []);
});

test('the baseline is kept in the URL: a shared link compares the same runs once the folder is open', async () => {
  const root = logFolder();
  const want = cliComparison(root);
  const page = await newPage(browser);
  const hash = `#tool=run-comparison&file=${encodeURIComponent(`${dirOf(NEW)}/worker-0.xplane.pb.gz`)}&baseline=${encodeURIComponent(`${dirOf(OLD)}`)}`;
  await openApp(page, server.url + hash);
  await openFolder(page, root);
  await page.waitForSelector(ready, { timeout: 120_000 });
  assert.equal(await page.$eval('[data-testid="baseline-select"]', (s) => s.value), `${dirOf(OLD)}`);
  assert.ok(close(await one(page, 'delta_host_self_time_us'), want.host_self_time_us.delta));
  // Choosing None takes the comparison away.
  await page.selectOption('[data-testid="baseline-select"]', '*none*');
  await page.waitForSelector('[data-testid="rc-no-baseline"]');
  assert.doesNotMatch(await page.evaluate(() => location.hash), /baseline=/);
  assert.deepEqual(page.errors, []);
});

// A TensorBoard log folder opened through the page's folder input: its runs are listed newest first,
// named by their folder; the host selector lists the selected run's hosts and, where it has several,
// "All hosts"; switching run and host changes what Framework Op Stats shows, and "All hosts" shows
// the run's hosts combined, equal to XProf's output for the same two files
// (tests/fixtures/runs/tf_two_hosts/, made by scripts/f_xprof_two_host_runs.py).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { serve, launch, newPage, openApp, waitForFile, metric, shot, fixture } from './harness.mjs';
import { scratchDir } from './support/scratch.mjs';

const D1 = fixture('tf/d1_tf_keras_bfc/d1_tf_keras_bfc.xplane.pb.gz');
const D2 = fixture('tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz');
const D1_NONE = fixture('tf/d1_tf_keras_none/d1_tf_keras_none.xplane.pb.gz');
const ORACLE = JSON.parse(readFileSync(fixture('runs/tf_two_hosts/tf_two_hosts.framework_op_stats.json')).toString());

const OLD = '2026_11_23_10_00_00';
const NEW = '2026_11_24_09_30_00';
const NEW_DIR = `logs/plugins/profile/${NEW}`;

let server, browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

/** A log folder: an older run with one host, a newer run with two (XProf's host order) and a sidecar. */
function logFolder() {
  const logdir = path.join(scratchDir('tidemark-runs-'), 'logs');
  const place = (run, src, name) => {
    const dir = path.join(logdir, 'plugins/profile', run);
    mkdirSync(dir, { recursive: true });
    copyFileSync(src, path.join(dir, name));
  };
  place(OLD, D1_NONE, 'ml-host.xplane.pb.gz');
  place(NEW, D1, 'worker-0.xplane.pb.gz');
  place(NEW, D2, 'worker-1.xplane.pb.gz');
  place(NEW, D1, 'worker-0.trace.json.gz');
  return logdir;
}

const options = (page, testid) =>
  page.$$eval(`[data-testid="${testid}"] option`, (os) => os.map((o) => ({ value: o.value, label: o.textContent })));
const hostOps = async (page) => Number((await metric(page, 'host_ops'))[0]);
const idleSelf = async (page) => Number((await metric(page, 'total_self_time_us', 'IDLE'))[0]);

/** Waits for Framework Op Stats to show `hostRows` host rows (the reply of the latest choice). */
async function showsHostRows(page, hostRows) {
  await page.waitForFunction(
    (n) => document.querySelector('[data-testid="framework-op-stats"][data-state="ready"] [data-metric="host_ops"]')?.dataset.value === String(n),
    hostRows,
    { timeout: 60_000 },
  );
}

test('runs newest first, hosts of the run, and All hosts combined as XProf combines them', async () => {
  const page = await newPage(browser);
  await openApp(page, server.url);
  await page.setInputFiles('[data-testid="folder-input"]', logFolder());
  for (const p of [`logs/plugins/profile/${OLD}/ml-host.xplane.pb.gz`, `${NEW_DIR}/worker-0.xplane.pb.gz`, `${NEW_DIR}/worker-1.xplane.pb.gz`]) {
    await waitForFile(page, p);
  }
  // The sidecar is neither opened nor an error.
  assert.equal(await page.$$eval('.file-row', (rows) => rows.length), 3);
  assert.equal(await page.$$eval('[data-testid="file-error"]', (e) => e.length), 0);

  // Both runs, newest first, named by their folders.
  assert.deepEqual((await options(page, 'run-select')).map((o) => o.label), [NEW, OLD]);

  // The newer run: its two hosts and All hosts.
  await page.selectOption('[data-testid="run-select"]', `logs/plugins/profile/${NEW}`);
  assert.deepEqual((await options(page, 'file-select')).map((o) => o.label), ['worker-0', 'worker-1', 'All hosts']);
  await page.click('.tab[data-tool="framework-op-stats"]');

  // Each host shows its own trace; All hosts the two combined, equal to XProf's "all hosts".
  const xprofHostRows = ORACLE[0].rows.filter((r) => r.c[1].v === 'Host').length;
  const xprofIdle = ORACLE[0].rows.find((r) => r.c[3].v === 'IDLE').c[7].v;
  await page.selectOption('[data-testid="file-select"]', `${NEW_DIR}/worker-0.xplane.pb.gz`);
  await page.waitForSelector(`article[data-file="${NEW_DIR}/worker-0.xplane.pb.gz"][data-state="ready"]`, { timeout: 60_000 });
  const one = await hostOps(page);
  await page.selectOption('[data-testid="file-select"]', `${NEW_DIR}/worker-1.xplane.pb.gz`);
  await page.waitForSelector(`article[data-file="${NEW_DIR}/worker-1.xplane.pb.gz"][data-state="ready"]`, { timeout: 60_000 });
  const two = await hostOps(page);
  assert.notEqual(one, two, 'the two hosts are two traces');
  await page.selectOption('[data-testid="file-select"]', '*all-hosts*');
  await showsHostRows(page, xprofHostRows);
  assert.notEqual(xprofHostRows, one);
  assert.notEqual(xprofHostRows, two);
  assert.ok(Math.abs((await idleSelf(page)) - xprofIdle) <= 1e-9 * xprofIdle, 'IDLE self time of the two hosts combined');
  await shot(page, 'runs-all-hosts');

  // The older run: one host, no All hosts; the page shows its trace.
  await page.selectOption('[data-testid="run-select"]', `logs/plugins/profile/${OLD}`);
  assert.deepEqual((await options(page, 'file-select')).map((o) => o.label), ['ml-host']);
  await page.waitForSelector(`article[data-file="logs/plugins/profile/${OLD}/ml-host.xplane.pb.gz"][data-state="ready"]`, { timeout: 60_000 });
  assert.notEqual(await hostOps(page), xprofHostRows);
  assert.deepEqual(page.errors, []);
});

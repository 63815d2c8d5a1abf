// The first screen: with no file, the first-run page (what Tidemark reads, how to record each kind,
// the demo, the privacy promise); after a drop, the tool the engine names for the file (a trace with
// steps on its Overview, without on its Memory Profile / Op Profile / Trace Viewer, an HLO dump on
// the Memory Viewer, pprof files on Device memory, several traces on the run's Overview), unless the
// URL names a tool; and every empty tool's one sentence (data-metric="empty_reason"), the same the
// CLI prints first in the tool's text output. The OOM seed (n6, read in place from
// ../shared/fixtures/device, skipped when absent) says its module never finished compiling.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, DEVICE, deviceSkip, serve, launch, newPage, openApp, dropFiles, waitForFile, one, shot, fixture } from './harness.mjs';
import { scratchDir } from './support/scratch.mjs';

const A1 = fixture('jax/a1_docs_seed/a1_docs_seed.xplane.pb.gz');
const D2 = fixture('tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz');
const D1_NONE = fixture('tf/d1_tf_keras_none/d1_tf_keras_none.xplane.pb.gz');
const D1 = fixture('tf/d1_tf_keras_bfc/d1_tf_keras_bfc.xplane.pb.gz');
/** XProf's Overview of D1 and D2 as the two hosts of one run (tests/fixtures/runs/tf_two_hosts/). */
const TWO_HOSTS = JSON.parse(readFileSync(fixture('runs/tf_two_hosts/tf_two_hosts.overview_page.json')).toString());
const DUMP = fixture('hlo/module_0042.jit_mlp_train_step.cpu_after_optimizations.hlo.pb');
const LEAK = [1, 2, 3].map((k) => fixture(`pprof/docs_leak/memory${k}.prof`));
const N6 = path.join(DEVICE, 'nvidia_h200_jax/n6_oom_seed/n6_oom_seed.xplane.pb.gz');
const N6_ABSENT = deviceSkip(N6);
const BIN = process.env.TIDEMARK_BIN || path.join(ROOT, 'target/debug/tidemark');

let server, browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

/** The first line of the CLI's text output of `command` on `file` (whatever its exit status): its
 * empty-state sentence. */
const cliReason = (command, file) => spawnSync(BIN, [command, file]).stdout.toString().split('\n')[0];

/** Drops `files` on a fresh page (at `hash`) and waits until each is open. */
async function drop(files, hash = '') {
  const page = await newPage(browser);
  await openApp(page, `${server.url}${hash}`);
  await dropFiles(page, files);
  for (const f of files) await waitForFile(page, path.basename(f));
  return page;
}

const shownTool = (page) => page.$eval('.tab[aria-selected="true"]', (t) => t.dataset.tool);

/** Shows `tool` and reads the reason it gives, which must be of `kind`. */
async function reasonOf(page, tool, kind) {
  await page.click(`.tab[data-tool="${tool}"]`);
  await page.waitForSelector(`.tab[data-tool="${tool}"][aria-selected="true"]`);
  const el = await page.waitForSelector(`[data-metric="empty_reason"][data-value="${kind}"]`, { timeout: 30_000 });
  return (await el.textContent()).trim();
}

test('with no file, the first-run page says what it reads, how to record, and that nothing leaves', async () => {
  for (const scheme of ['light', 'dark']) {
    const page = await newPage(browser, { colorScheme: scheme });
    await openApp(page, server.url);
    const landing = await page.waitForSelector('[data-testid="landing"]');
    const text = await landing.textContent();
    assert.match(text, /Drop profiles here/);
    assert.match(text, /Nothing is uploaded/);
    assert.match(await page.textContent('[data-testid="record-jax"]'), /jax\.profiler\.trace\("\/tmp\/tb"\)/);
    assert.match(await page.textContent('[data-testid="record-tf"]'), /tf\.profiler\.experimental\.start/);
    assert.match(await page.textContent('[data-testid="record-pytorch"]'), /coming.*not read yet/);
    assert.ok(await page.$('[data-testid="landing-demo"]'));
    await shot(page, `first-run-${scheme}`);
    assert.deepEqual(page.errors, []);
  }
});

test('each kind of file lands on its tool', async () => {
  const cases = [
    [[D2], 'overview-page'], // steps
    [[A1], 'trace-viewer'], // no steps, no allocator event, no device
    [[DUMP], 'memory-viewer'],
    [LEAK, 'device-memory'],
    [[A1, D2], 'overview-page'], // several traces: the run's Overview
  ];
  for (const [files, tool] of cases) {
    const page = await drop(files);
    await page.waitForSelector(`.tab[data-tool="${tool}"][aria-selected="true"]`, { timeout: 30_000 });
    assert.match(page.url(), new RegExp(`tool=${tool}`));
    if (tool === 'memory-viewer') await page.waitForSelector('.mv-module', { timeout: 30_000 });
    assert.deepEqual(page.errors, [], files.join(' '));
    await page.close();
  }
});

test('a log folder lands on its newest run\'s Overview, all its hosts combined as XProf combines them', async () => {
  const logdir = path.join(scratchDir('tidemark-landing-'), 'logs');
  const place = (run, src, host) => {
    const dir = path.join(logdir, 'plugins/profile', run);
    mkdirSync(dir, { recursive: true });
    copyFileSync(src, path.join(dir, `${host}.xplane.pb.gz`));
  };
  place('2026_11_23_10_00_00', D1_NONE, 'ml-host');
  place('2026_11_24_09_30_00', D1, 'worker-0');
  place('2026_11_24_09_30_00', D2, 'worker-1');
  const page = await newPage(browser);
  await openApp(page, server.url);
  await page.setInputFiles('[data-testid="folder-input"]', logdir);
  await page.waitForSelector('.tab[data-tool="overview-page"][aria-selected="true"]', { timeout: 30_000 });
  assert.equal(await page.$eval('[data-testid="run-select"]', (s) => s.value), 'logs/plugins/profile/2026_11_24_09_30_00');
  assert.equal(await page.$eval('[data-testid="file-select"]', (s) => s.value), '*all-hosts*');
  assert.match(page.url(), /hosts=all/);
  // The two hosts' steps, combined: XProf's average step time of the run (one decimal, as it writes it).
  await page.waitForFunction(
    () => document.querySelectorAll('.file-row[data-state="ready"]').length === 3
      && document.querySelector('[data-testid="overview-page"][data-state="ready"] [data-metric="step_time_avg_ms"]'),
    null,
    { timeout: 60_000 },
  );
  await page.waitForFunction(
    (want) => Number(document.querySelector('[data-metric="step_time_avg_ms"]')?.dataset.value).toFixed(1) === want,
    TWO_HOSTS[1].p.steptime_ms_average,
    { timeout: 60_000 },
  );
  assert.equal(Number(await one(page, 'step_time_avg_ms')).toFixed(1), TWO_HOSTS[1].p.steptime_ms_average);
  await shot(page, 'landing-log-folder');
  assert.deepEqual(page.errors, []);
});

test('a URL that names a tool wins over the first screen', async () => {
  const page = await drop([D2], '#tool=file-details');
  await page.waitForSelector(`article.file-details[data-file="${path.basename(D2)}"]`);
  assert.equal(await shownTool(page), 'file-details');
});

test('each empty tool says why in one sentence, the CLI\'s', async () => {
  const page = await drop([A1]);
  await page.waitForSelector('.tab[data-tool="trace-viewer"][aria-selected="true"]');
  for (const [tool, command, kind] of [
    ['memory-profile', 'memory-profile', 'no_allocator_events'],
    ['overview-page', 'overview-page', 'no_steps'],
    ['op-profile', 'op-profile', 'no_device_planes'],
  ]) {
    assert.equal(await reasonOf(page, tool, kind), cliReason(command, A1), tool);
    if (tool === 'memory-profile') await shot(page, 'empty-memory-profile-a1');
  }
  // A tool with something to show says nothing.
  await page.click('.tab[data-tool="memory-viewer"]');
  await page.waitForSelector('.mv-module', { timeout: 30_000 });
  assert.equal(await page.$('[data-metric="empty_reason"]'), null);

  const none = await drop([D1_NONE]);
  await none.waitForSelector('.tab[data-tool="overview-page"][aria-selected="true"]');
  assert.equal(await reasonOf(none, 'memory-viewer', 'no_hlo_protos'), cliReason('memory-viewer', D1_NONE));
  await shot(none, 'empty-memory-viewer-d1');
  assert.deepEqual([...page.errors, ...none.errors], []);
});

test('the OOM seed lands on its trace and every tool says its module never finished compiling', { skip: N6_ABSENT }, async () => {
  const page = await drop([N6]);
  await page.waitForSelector('.tab[data-tool="trace-viewer"][aria-selected="true"]', { timeout: 30_000 });
  const sentence = cliReason('memory-profile', N6);
  assert.match(sentence, /^jit_oom began compiling in this trace/);
  for (const tool of ['trace-viewer', 'memory-profile', 'memory-viewer', 'overview-page', 'op-profile']) {
    assert.equal(await reasonOf(page, tool, 'unfinished_compile'), sentence, tool);
  }
  await shot(page, 'empty-oom-seed');
  assert.deepEqual(page.errors, []);
});

// Sharing: the static build from a sub-path, the offline bundle exported by the page and made by the
// CLI — opened from file:// with networking off — and a page that talks to nobody.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { cpSync, mkdirSync, statSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import {
  ROOT, serve, launch, newPage, openApp, pickFiles, waitForFile, selectFile, fileDetails, metric, shot, fixture, workerReady,
} from './harness.mjs';
import { scratchDir } from './support/scratch.mjs';

let server, browser;
const tmp = scratchDir('tidemark-share-');
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

const FILES = [
  fixture('tf/d1_tf_keras_bfc/d1_tf_keras_bfc.xplane.pb.gz'),
  fixture('hlo/module_0008.jit_tiny.cpu_after_optimizations.hlo.pb'),
];

/** Opens a bundle from disk with the network off; every request must stay inside the file. */
async function openOffline(file) {
  const page = await newPage(browser);
  await page.context().setOffline(true);
  await page.goto(pathToFileURL(file).href);
  await page.waitForSelector('.toolbar');
  return page;
}

function assertOnlyLocal(page) {
  const outside = page.requests.filter((u) => !/^(file|blob|data):/.test(u));
  assert.deepEqual(outside, [], 'the bundle contacted nothing');
}

test('the release build works from a sub-path of a static host', async () => {
  const root = path.join(tmp, 'host');
  const sub = path.join(root, 'team', 'tools', 'tidemark');
  mkdirSync(sub, { recursive: true });
  cpSync(path.join(ROOT, 'dist'), sub, { recursive: true });
  const host = await serve(root);
  try {
    const page = await newPage(browser);
    await openApp(page, `${host.url}team/tools/tidemark/#demo`);
    await waitForFile(page, 'd1_tf_keras_bfc.xplane.pb.gz');
    await fileDetails(page, 'd1_tf_keras_bfc.xplane.pb.gz');
    assert.deepEqual(await metric(page, 'allocations', 'bfc_cpu_allocator_for_gpu'), ['10246']);
    assert.deepEqual(page.errors, []);
  } finally {
    host.close();
  }
});

test('after its assets load, the page makes no network request', async () => {
  const page = await newPage(browser);
  await openApp(page, server.url);
  // The engine worker loads the wasm too, after the page is up: its assets count as the page's.
  await workerReady(page);
  const assets = page.requests.length;
  await pickFiles(page, FILES);
  for (const f of FILES) await waitForFile(page, path.basename(f));
  await page.click('[data-tool="file-details"]');
  await page.waitForTimeout(500);
  assert.deepEqual(page.requests.slice(assets), [], 'dropping and viewing files sent nothing');
  assert.ok(page.requests.every((u) => u.startsWith(server.url)), page.requests.join('\n'));
});

test('the page exports an offline bundle that reopens the same view from file:// with no network', async () => {
  const page = await newPage(browser);
  await openApp(page, server.url);
  await pickFiles(page, FILES);
  for (const f of FILES) await waitForFile(page, path.basename(f));
  await fileDetails(page, 'module_0008.jit_tiny.cpu_after_optimizations.hlo.pb');
  const expected = await metric(page, 'total_allocation_bytes');
  assert.equal(expected.length, 1);
  const hash = new URL(page.url()).hash;

  await page.click('[data-testid="export-open"]');
  await page.waitForSelector('[data-metric="bundle_bytes"]');
  const announced = Number((await metric(page, 'bundle_bytes'))[0]);
  await shot(page, 'export-dialog');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-download"]')]);
  const file = path.join(tmp, 'exported.html');
  await download.saveAs(file);
  assert.equal(statSync(file).size, announced, 'the dialog said the exact size');

  const offline = await openOffline(file);
  for (const f of FILES) await waitForFile(offline, path.basename(f));
  await offline.waitForSelector('.file-row.selected[data-file="module_0008.jit_tiny.cpu_after_optimizations.hlo.pb"]');
  assert.equal(new URL(offline.url()).hash, hash, 'the saved view is restored');
  assert.deepEqual(await metric(offline, 'total_allocation_bytes'), expected);
  await selectFile(offline, 'd1_tf_keras_bfc.xplane.pb.gz');
  assert.deepEqual(await metric(offline, 'allocations', 'bfc_cpu_allocator_for_gpu'), ['10246']);
  await shot(offline, 'bundle-offline');
  assertOnlyLocal(offline);
  assert.deepEqual(offline.errors, []);
});

test('the CLI makes the same kind of bundle', async () => {
  const out = path.join(tmp, 'cli.html');
  const bin = process.env.TIDEMARK_BIN || path.join(ROOT, 'target/debug/tidemark');
  execFileSync(bin, ['bundle', ...FILES, '-o', out, '--dist', path.join(ROOT, 'dist'), '--tool', 'file-details', '--file', 'd1_tf_keras_bfc.xplane.pb.gz']);
  const page = await openOffline(out);
  for (const f of FILES) await waitForFile(page, path.basename(f));
  await page.waitForSelector('.file-row.selected[data-file="d1_tf_keras_bfc.xplane.pb.gz"]');
  assert.deepEqual(await metric(page, 'allocations', 'bfc_cpu_allocator_for_gpu'), ['10246']);
  assert.deepEqual(await metric(page, 'deallocations', 'bfc_cpu_allocator_for_gpu'), ['10159']);
  assertOnlyLocal(page);
  assert.deepEqual(page.errors, []);
});

test('a JAX trace can be shared as a much smaller slim copy with the same memory figures', async () => {
  const trace = fixture('jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz');
  const name = path.basename(trace);
  const page = await newPage(browser);
  await openApp(page, server.url);
  await pickFiles(page, [trace]);
  await waitForFile(page, name);
  await fileDetails(page, name);
  const modules = await metric(page, 'total_allocation_bytes');
  assert.equal(modules.length, 9);
  await page.click('[data-testid="export-open"]');
  await page.waitForSelector('[data-testid="export-slim"]');
  const full = Number((await metric(page, 'bundle_bytes'))[0]);
  const slim = Number((await metric(page, 'slim_bundle_bytes'))[0]);
  // The app is the same in both; the slim copy's profiles are a fraction of the full ones.
  const app = Number((await metric(page, 'bundle_app_bytes'))[0]);
  assert.ok((slim - app) * 10 < full - app, `slim ${slim} vs full ${full}, app ${app}`);
  await page.check('[data-testid="export-slim"]');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-download"]')]);
  const file = path.join(tmp, 'slim.html');
  await download.saveAs(file);
  assert.equal(statSync(file).size, slim);

  const offline = await openOffline(file);
  await waitForFile(offline, name);
  await selectFile(offline, name);
  assert.deepEqual(await metric(offline, 'total_allocation_bytes'), modules, 'every HLO module is intact');
  assert.match(await offline.textContent('.notes'), /slim copy/);
  assertOnlyLocal(offline);
  assert.deepEqual(offline.errors, []);
});

test('a bundle restores the Memory Profile view: tool, file, memory ID and the selected row', async () => {
  const trace = fixture('tf/d1_tf_keras_bfc/d1_tf_keras_bfc.xplane.pb.gz');
  const page = await newPage(browser);
  await openApp(page, server.url);
  await pickFiles(page, [trace]);
  await waitForFile(page, path.basename(trace));
  await page.click('[data-tool="memory-profile"]');
  await page.waitForSelector('[data-testid="breakdown"] tbody tr');
  await page.selectOption('[data-testid="memory-profile"] select', 'bfc_cpu_allocator_for_gpu');
  await page.locator('[data-testid="breakdown"] tbody tr').nth(2).click();
  await page.waitForSelector('[data-testid="breakdown"] tbody tr.selected');
  assert.match(page.url(), /tool=memory-profile/);
  assert.match(page.url(), /memory-id=bfc_cpu_allocator_for_gpu/);
  assert.match(page.url(), /row=2/);
  const op = await page.textContent('[data-testid="breakdown"] tbody tr.selected td.op');

  await page.click('[data-testid="export-open"]');
  await page.waitForSelector('[data-testid="export-download"]');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-download"]')]);
  const file = path.join(tmp, 'memory-profile.html');
  await download.saveAs(file);
  const offline = await openOffline(file);
  await offline.waitForSelector('[data-testid="breakdown"] tbody tr.selected');
  assert.equal(await offline.textContent('[data-testid="breakdown"] tbody tr.selected td.op'), op);
  assert.equal(await offline.getAttribute('.tab[data-tool="memory-profile"]', 'aria-selected'), 'true');
  assertOnlyLocal(offline);
});

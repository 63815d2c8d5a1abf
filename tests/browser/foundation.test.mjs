// The foundation, as a user meets it: the landing page, the demo, dropping and picking each kind of
// real profile, bad files, a folder, and a view restored from the URL.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFileSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import {
  serve, launch, newPage, openApp, workerReady, pickFiles, dropFiles, waitForFile, selectFile, fileDetails, metric, cliOverview, shot, fixture,
} from './harness.mjs';
import { scratchDir } from './support/scratch.mjs';

let server, browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

test('landing page explains what to drop and loads without errors', async () => {
  const page = await newPage(browser);
  await openApp(page, server.url);
  await page.waitForSelector('[data-testid="landing"]');
  const text = await page.textContent('[data-testid="landing"]');
  assert.match(text, /Drop profiles here/);
  assert.match(text, /Nothing is uploaded/);
  await shot(page, 'landing');
  assert.deepEqual(page.errors, []);
});

test('the page and the engine fetch their wasm once each, and say so when this browser cannot start them', async () => {
  // Two modules: the page's (the UI, compiled by the page's loader off its thread) and the engine's
  // (fetched and compiled by the engine's worker). Each is fetched, hence compiled, exactly once.
  const page = await newPage(browser);
  await openApp(page, server.url);
  await workerReady(page);
  await page.waitForSelector('[data-testid="landing"]');
  for (const wasm of ['/tidemark-web_bg.wasm', '/tidemark-engine_bg.wasm']) {
    assert.equal(page.requests.filter((u) => u.endsWith(wasm)).length, 1, `${wasm}:\n${page.requests.join('\n')}`);
  }
  assert.deepEqual(page.errors, []);
  // Without its wasm the page says what happened instead of staying blank.
  const broken = await newPage(browser);
  await broken.route('**/tidemark-web_bg.wasm', (r) => r.abort());
  await broken.goto(server.url);
  const alert = await broken.waitForSelector('p[role="alert"]');
  assert.match(await alert.textContent(), /could not start Tidemark's WebAssembly engine.*the tidemark CLI reads the same files/);
  // Without the engine's, the page runs and says the engine could not start.
  const noEngine = await newPage(browser);
  await noEngine.route('**/tidemark-engine_bg.wasm', (r) => r.abort());
  await openApp(noEngine, server.url);
  await noEngine.waitForSelector('[data-testid="page-alert"]');
  assert.match(await noEngine.textContent('[data-testid="page-alert"]'), /The engine worker could not start/);
});

test('demo opens real profiles and shows their overview', async () => {
  const page = await newPage(browser);
  await openApp(page, server.url);
  await page.click('[data-testid="open-demo"]');
  await waitForFile(page, 'd1_tf_keras_bfc.xplane.pb.gz');
  await waitForFile(page, 'memory9.prof');
  await waitForFile(page, 'module_0042.jit_mlp_train_step.cpu_after_optimizations.hlo.pb');
  await fileDetails(page, 'd1_tf_keras_bfc.xplane.pb.gz');
  assert.deepEqual(await metric(page, 'allocations', 'bfc_cpu_allocator_for_gpu'), ['10246']);
  assert.deepEqual(await metric(page, 'deallocations', 'bfc_cpu_allocator_for_gpu'), ['10159']);
  assert.deepEqual(await metric(page, 'format'), ['xspace']);
  assert.ok(page.url().includes('demo'), page.url());
  await shot(page, 'demo-overview');
  // Only the page's own origin was contacted.
  const foreign = page.requests.filter((u) => !u.startsWith(server.url) && !u.startsWith('data:') && !u.startsWith('blob:'));
  assert.deepEqual(foreign, []);
  assert.deepEqual(page.errors, []);
});

test('dropped xplane, HloProto and pprof files show the same figures as the CLI', async () => {
  const files = [
    fixture('jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz'),
    fixture('tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz'),
    fixture('hlo/module_0014.jit__normal.cpu_after_optimizations.hlo.pb'),
    fixture('pprof/docs_seed_memory.prof'),
  ];
  const expected = cliOverview(files).files;
  const page = await newPage(browser);
  await openApp(page, server.url);
  await dropFiles(page, files);
  for (const [i, f] of files.entries()) {
    const name = path.basename(f);
    const want = expected[i];
    await waitForFile(page, name);
    await fileDetails(page, name);
    assert.deepEqual(await metric(page, 'size_bytes'), [String(want.size_bytes)], name);
    for (const p of want.planes) {
      assert.deepEqual(await metric(page, 'plane_event_count', p.name), [String(p.event_count)], `${name} ${p.name}`);
      assert.deepEqual(await metric(page, 'plane_line_count', p.name), [String(p.line_count)], `${name} ${p.name}`);
    }
    for (const a of want.allocators) {
      assert.deepEqual(await metric(page, 'allocations', a.memory_id), [String(a.allocations)]);
      assert.deepEqual(await metric(page, 'peak_bytes_in_use', a.memory_id), [String(a.max_peak_bytes_in_use)]);
    }
    for (const m of want.hlo_modules) {
      assert.deepEqual(await metric(page, 'total_allocation_bytes', m.name), [String(m.total_allocation_bytes)], m.name);
      assert.deepEqual(await metric(page, 'has_buffer_assignment', m.name), [String(m.has_buffer_assignment)], m.name);
    }
    if (want.pprof) {
      assert.deepEqual(await metric(page, 'live_bytes'), [String(want.pprof.live_bytes)]);
      assert.deepEqual(await metric(page, 'sample_count'), [String(want.pprof.sample_count)]);
    }
    await shot(page, `overview-${name}`);
  }
  // XProf's numbers, independently of the CLI: a2 has nine modules, jit_train_step(14) 12.65 MiB.
  await fileDetails(page, 'a2_mlp_train.xplane.pb.gz');
  assert.equal((await metric(page, 'total_allocation_bytes')).length, 9);
  assert.ok(await page.$('[data-testid="no-memory-events"]'), 'JAX CPU trace explains its missing memory events');
  assert.deepEqual(page.errors, []);
});

test('bad files get clear messages and the page keeps working', async () => {
  const dir = scratchDir('tidemark-bad-');
  const raw = gunzipSync(readFileSync(fixture('jax/a1_docs_seed/a1_docs_seed.xplane.pb.gz')));
  const truncated = path.join(dir, 'killed.xplane.pb');
  writeFileSync(truncated, raw.subarray(0, 1_000_000));
  const garbage = path.join(dir, 'garbage.bin');
  writeFileSync(garbage, Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 2654435761) >>> 13 & 255)));
  const png = path.join(dir, 'plot.xplane.pb');
  writeFileSync(png, Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'));
  const empty = path.join(dir, 'empty.prof');
  writeFileSync(empty, '');

  const page = await newPage(browser);
  await openApp(page, server.url);
  await pickFiles(page, [truncated, garbage, png, empty]);
  for (const f of ['garbage.bin', 'plot.xplane.pb', 'empty.prof']) await waitForFile(page, f, 'failed');
  const msg = async (f) => page.textContent(`[data-testid="file-error"][data-file="${f}"] .message`);
  assert.match(await msg('garbage.bin'), /this is not a profile|corrupt/);
  assert.match(await msg('plot.xplane.pb'), /this is not a profile: it is a PNG image/);
  assert.match(await msg('empty.prof'), /the file is empty/);
  await shot(page, 'bad-files');
  // A trace cut short opens with what lies before the cut, the cut named over every tool.
  await waitForFile(page, 'killed.xplane.pb');
  await selectFile(page, 'killed.xplane.pb');
  const banner = await page.waitForSelector('[data-testid="truncated-banner"]', { timeout: 60_000 });
  assert.match(await banner.textContent(), /^Truncated at byte 1,000,000 of at least/);
  // Still usable: a good file opens next to the failures.
  await pickFiles(page, [fixture('pprof/docs_seed_memory.prof')]);
  await waitForFile(page, 'docs_seed_memory.prof');
  await fileDetails(page, 'docs_seed_memory.prof');
  assert.deepEqual(await metric(page, 'live_bytes'), ['84000000']);
  assert.deepEqual(page.errors, []);
});

test('a folder opens the profiles inside it and skips the rest', async () => {
  const page = await newPage(browser);
  await openApp(page, server.url);
  await page.setInputFiles('[data-testid="folder-input"]', fixture('pprof/docs_leak'));
  for (let k = 1; k <= 9; k++) await waitForFile(page, `docs_leak/memory${k}.prof`); // named by its path in the picked folder
  assert.equal(await page.locator('.file-row').count(), 9);
});

test('the view lives in the URL: a reload restores tool and file', async () => {
  const page = await newPage(browser);
  await openApp(page, `${server.url}#demo&tool=overview&file=memory3.prof`);
  await waitForFile(page, 'memory3.prof');
  await page.waitForSelector('.file-row.selected[data-file="memory3.prof"]');
  await page.click('[data-tool="device-memory"]');
  assert.match(page.url(), /tool=device-memory/);
  await page.reload();
  await waitForFile(page, 'memory3.prof');
  await page.waitForSelector('.tab[data-tool="device-memory"][aria-selected="true"]');
  await page.waitForSelector('.file-row.selected[data-file="memory3.prof"]');
});

test('dark theme and unit toggle', async () => {
  const page = await newPage(browser);
  await openApp(page, server.url);
  await pickFiles(page, [fixture('pprof/docs_seed_memory.prof')]);
  await waitForFile(page, 'docs_seed_memory.prof');
  await fileDetails(page, 'docs_seed_memory.prof');
  await page.selectOption('[data-testid="unit-select"]', 'B');
  assert.match(await page.textContent('[data-metric="live_bytes"]'), /84,000,000 B/);
  await page.selectOption('[data-testid="unit-select"]', 'MiB');
  assert.match(await page.textContent('[data-metric="live_bytes"]'), /80\.11 MiB/);
  await page.click('[data-testid="theme-toggle"]');
  assert.equal(await page.getAttribute('html', 'data-theme'), 'dark');
  await shot(page, 'dark-overview');
});

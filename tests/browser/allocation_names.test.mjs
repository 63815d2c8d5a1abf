// The Memory Profile of a real JAX trace names what is in GPU memory at the peak (n2_cnn_bf16, an NVIDIA
// H200 CNN, read in place from ../shared/fixtures/device; skipped with a note when absent, a failure
// under CI=true): every live allocation by module run / compile / transfer and buffer, the peak by kind
// and by module, the name beside each of XProf's rows, each figure read through data-metric and equal
// to the command line's `memory-profile --json` (its `tidemark.allocation_names`); a row of a module
// opens the Memory Viewer on that module with its buffer highlighted.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { ROOT, serve, launch, newPage, openApp, pickFiles, waitForFile, selectFile, metric, one, shot } from './harness.mjs';

const TRACE = path.resolve(ROOT, '../shared/fixtures/device/nvidia_h200_jax/n2_cnn_bf16/n2_cnn_bf16.xplane.pb.gz');
const absent = !existsSync(TRACE);
if (absent && process.env.CI === 'true') throw new Error(`device fixture ${TRACE} is absent and CI=true: CI must have it`);
const skip = absent ? `device fixture ${path.relative(ROOT, TRACE)} is absent` : false;

let server, browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

function cliNames(file) {
  const bin = process.env.TIDEMARK_BIN || path.join(ROOT, 'target/debug/tidemark');
  const json = JSON.parse(execFileSync(bin, ['memory-profile', '--json', file], { maxBuffer: 256 << 20 }).toString());
  return json.tidemark.allocation_names;
}

test('NVIDIA H200 CNN: the peak named by module and buffer, as the command line names it, linked to the Memory Viewer', { skip, timeout: 300_000 }, async () => {
  const names = cliNames(TRACE).allocators.GPU_0_bfc;
  const peak = names.peak;
  const page = await newPage(browser);
  await openApp(page, server.url);
  await pickFiles(page, [TRACE]);
  const file = path.basename(TRACE);
  await waitForFile(page, file);
  await selectFile(page, file);
  await page.click('.tab[data-tool="memory-profile"]');
  await page.waitForSelector('[data-testid="named-peak"] table.mp-named-table tbody tr', { timeout: 90_000 });
  assert.equal(await page.inputValue('[data-testid="memory-id-select"]'), 'GPU_0_bfc');

  // The peak, and every named row: its name, kind, module, shape, count and bytes.
  assert.equal(Number(await one(page, 'named_peak_bytes')), peak.peak_bytes);
  assert.equal(Number(await one(page, 'named_rows')), peak.rows.length);
  const rows = peak.rows;
  assert.equal(rows.reduce((s, r) => s + r.allocation_bytes, 0) + peak.before_trace_bytes + peak.stack_bytes, peak.peak_bytes);
  for (const [k, r] of rows.entries()) {
    const key = String(k);
    assert.equal(await one(page, 'named_label', key), r.name.label, key);
    assert.equal(await one(page, 'named_module', key), r.name.module ?? '', key);
    assert.equal(await one(page, 'named_shape', key), r.name.shape ?? '', key);
    assert.equal(await one(page, 'named_python_frame', key), r.name.python_frame ?? '', key);
    assert.equal(Number(await one(page, 'named_allocations', key)), r.allocations, key);
    assert.equal(Number(await one(page, 'named_allocation_bytes', key)), r.allocation_bytes, key);
    assert.equal(Number(await one(page, 'named_requested_bytes', key)), r.requested_bytes, key);
  }
  assert.ok(rows.some((r) => r.name.module && r.name.kind === 'output'), 'outputs of a module are live at the peak');

  // The bars: the peak's bytes by kind and by module, every part a figure.
  assert.equal((await metric(page, 'peak_kind_bytes')).length, peak.by_kind.length + (peak.stack_bytes > 0) + (peak.before_trace_bytes > 0));
  for (const [kind, bytes] of peak.by_kind) assert.equal(Number(await one(page, 'peak_kind_bytes', kind)), bytes, kind);
  assert.equal((await metric(page, 'peak_module_bytes')).length, peak.by_module.length);
  for (const [module, bytes] of peak.by_module) assert.equal(Number(await one(page, 'peak_module_bytes', module)), bytes, module);
  const byModule = peak.by_module.reduce((s, [, b]) => s + b, 0);
  assert.equal(byModule, rows.reduce((s, r) => s + r.allocation_bytes, 0));

  // XProf's table keeps its "(no op)" and gets each row's name beside it.
  const rowNames = await metric(page, 'row_name');
  assert.deepEqual(rowNames, names.breakdown_names);
  const ops = await metric(page, 'row_op');
  assert.ok(ops.every((op, k) => names.breakdown_names[k] === '' || op === ''), 'JAX sets no op; only XProf\'s computed rows have one');
  await page.$eval('[data-testid="named-peak"]', (e) => e.scrollIntoView());
  await shot(page, 'allocation-names-n2-peak');

  // A module's row opens the Memory Viewer on that module, the row's buffer highlighted.
  const k = rows.findIndex((r) => r.name.module && r.name.instruction);
  assert.ok(k >= 0, 'a row of one buffer-assignment allocation');
  const { module, instruction } = rows[k].name;
  const link = `table.mp-named-table tbody tr[data-row="${k}"] [data-testid="named-show-buffers"]`;
  assert.equal(await page.getAttribute(link, 'data-module'), module);
  await page.click(link);
  const banner = await page.waitForSelector('[data-testid="mv-highlight"]', { timeout: 60_000 });
  assert.equal(await banner.getAttribute('data-op'), instruction);
  // The viewer names the module by its HLO name; the URL by XProf's (`jit__normal(3985)`).
  assert.equal(await page.getAttribute('.mv-module', 'data-module'), module.replace(/\(\d+\)$/, ''));
  assert.ok(decodeURIComponent(await page.evaluate(() => location.hash)).includes(`module=${module}`));
  assert.ok(Number(await one(page, 'highlighted_buffer_count')) > 0, 'the buffer is in the module');
  await shot(page, 'allocation-names-n2-memory-viewer');
  assert.deepEqual(page.errors, []);
});

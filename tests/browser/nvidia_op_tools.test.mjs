// The op tools on a real NVIDIA H200 JAX trace (n2_cnn_bf16: a bf16 CNN with cuDNN convolutions, read in
// place from ../shared/fixtures/device; skipped with a note when absent, a failure under CI=true): Op
// Profile's program time, Framework ops' device rows, Kernel stats and the Roofline, each figure read
// through data-metric and equal to XProf 2.24's own output for the same file.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DEVICE, deviceSkip, serve, launch, newPage, openApp, pickFiles, waitForFile, selectFile, one, close, column, shot } from './harness.mjs';

const N2 = path.join(DEVICE, 'nvidia_h200_jax/n2_cnn_bf16/n2_cnn_bf16');
const TRACE = `${N2}.xplane.pb.gz`;
const skip = deviceSkip(TRACE);
const oracle = (tool) => JSON.parse(readFileSync(`${N2}.${tool}.json`).toString());

let server, browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

const rowsOf = (page, table) => page.getAttribute(`table.${table}`, 'data-rows').then(Number);

async function openTab(page, tool, testid) {
  await page.click(`.tab[data-tool="${tool}"]`);
  await page.waitForSelector(`[data-testid="${testid}"][data-state="ready"], [data-testid="${testid}"][data-state="failed"]`, { timeout: 90_000 });
  assert.equal(await page.getAttribute(`[data-testid="${testid}"]`, 'data-state'), 'ready', `${tool} is not refused`);
}

test('NVIDIA H200 CNN: Op Profile, Framework ops (device), Kernels and Roofline equal XProf\'s', { skip, timeout: 300_000 }, async () => {
  const page = await newPage(browser);
  await openApp(page, server.url);
  await pickFiles(page, [TRACE]);
  await waitForFile(page, 'n2_cnn_bf16.xplane.pb.gz');
  await selectFile(page, 'n2_cnn_bf16.xplane.pb.gz');

  // Op Profile: the program's time is XProf's (once refused: an HLO op Tidemark did not cost).
  const op = oracle('op_profile');
  await openTab(page, 'op-profile', 'op-profile');
  await page.waitForSelector('[data-testid="opp-tree"] .opp-row[data-name]');
  // By program, idle excluded (XProf's first view): the root's time and FLOPS utilisation.
  const root = op.byProgramExcludeIdle;
  assert.ok(close(await one(page, 'root_time_us'), root.metrics.rawTime / 1e6));
  assert.ok(close(await one(page, 'root_flops_utilization'), root.metrics.uncappedFlops));

  // Framework ops: JAX's device ops timed from the kernels, every row and a device row's self time.
  const fos = oracle('framework_op_stats')[0];
  await openTab(page, 'framework-op-stats', 'framework-op-stats');
  assert.equal(await rowsOf(page, 'fos-table'), fos.rows.length);
  const [sides, ops, selfs] = [column(fos, 'host_or_device'), column(fos, 'operation'), column(fos, 'total_self_time')];
  const i = ops.findIndex((name, k) => sides[k] === 'Device' && name !== 'IDLE' && ops.filter((o) => o === name).length === 1);
  assert.ok(i >= 0, 'a device row');
  assert.ok(close(await one(page, 'total_self_time_us', ops[i]), selfs[i]), ops[i]);
  assert.ok((await page.$$('table.fos-table tbody tr[data-side="device"]')).length > 0);

  // Kernel stats: XProf's rows, the longest kernel first, the Tensor Core share from XProf's flags.
  const ks = oracle('kernel_stats');
  await openTab(page, 'kernel-stats', 'kernel-stats');
  assert.equal(await rowsOf(page, 'kernel-table'), ks.rows.length);
  const [totals, names, uses] = [column(ks, 'total_duration_us'), column(ks, 'kernel_name'), column(ks, 'is_kernel_using_tensor_core')];
  assert.ok(close(await one(page, 'total_duration_us', '1'), totals[0]));
  assert.equal(await one(page, 'kernel_name', '1'), names[0]);
  const total = totals.reduce((a, b) => a + b, 0);
  assert.ok(close(await one(page, 'tensor_core_fraction'), totals.filter((_, k) => uses[k]).reduce((a, b) => a + b, 0) / total));

  // Roofline: Hopper's peaks and XProf's whole-profile records.
  const [rm] = oracle('roofline_model');
  await openTab(page, 'roofline-model', 'roofline');
  const ids = Object.fromEntries(rm.cols.map((c, k) => [c.id, k]));
  const records = rm.rows.map((r) => r.c.map((c) => c.v)).filter((r) => r[ids.step] === 'Total' && r[ids.include_infeed_outfeed] === true);
  assert.equal(await rowsOf(page, 'roofline-table'), records.length);
  assert.ok(close(await one(page, 'peak_flop_rate'), Number(rm.p.peak_flop_rate), 5e-6));
  assert.ok(close(await one(page, 'peak_bw', 'peak_hbm_bw'), Number(rm.p.peak_hbm_bw), 5e-6));
  await shot(page, 'nvidia-roofline');
  assert.deepEqual(page.errors, []);
});

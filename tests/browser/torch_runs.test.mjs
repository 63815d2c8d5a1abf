// Two PyTorch runs compared on the page. The one real Kineto trace (H200, ResNet, one rank) is
// rewritten into a log folder of two runs of two ranks each (`distributedInfo.rank` set; in the
// current run, every call of the kernel with the most time twice as long), dropped as a folder; the
// Run comparison then shows the ranks side by side and each kernel's change, every figure equal to
// the CLI's `run-comparison --json` (the same engine).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import path from 'node:path';
import { ROOT, DEVICE, serve, launch, newPage, openApp, waitForFile, metric, one, close, shot, deviceSkip } from './harness.mjs';
import { scratchDir } from './support/scratch.mjs';

const TRACE = path.join(DEVICE, 'nvidia_h200_pytorch/p2_torch_resnet/tb/vm_2031.1795841222637258163.pt.trace.json.gz');
const skip = deviceSkip(TRACE);
const SPAN = '1795841222637258163';

let server, browser;
before(async () => { if (!skip) { server = await serve(); browser = await launch(); } });
after(async () => { await browser?.close(); server?.close(); });

/** The kernel name with the most time in the trace. */
function slowest(trace) {
  const sums = new Map();
  for (const e of trace.traceEvents) if (e.cat === 'kernel') sums.set(e.name, (sums.get(e.name) ?? 0) + e.dur);
  return [...sums].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0][0];
}

/** `logs/base` (ranks 0 and 1 as recorded) and `logs/cur` (the same with `kernel` twice as long). */
function logFolder() {
  const text = gunzipSync(readFileSync(TRACE)).toString();
  const kernel = slowest(JSON.parse(text));
  const root = scratchDir('tidemark-torchruns-');
  for (const [run, slowed] of [['base', false], ['cur', true]]) {
    const dir = path.join(root, 'logs', run);
    mkdirSync(dir, { recursive: true });
    for (const rank of [0, 1]) {
      const t = JSON.parse(text);
      t.distributedInfo = { backend: 'nccl', rank, world_size: 2 };
      if (slowed) for (const e of t.traceEvents) if (e.cat === 'kernel' && e.name === kernel) e.dur *= 2;
      writeFileSync(path.join(dir, `worker${rank}.${SPAN}.pt.trace.json`), JSON.stringify(t));
    }
  }
  return { root, kernel };
}

const file = (run, rank) => `logs/${run}/worker${rank}.${SPAN}.pt.trace.json`;
const ready = '[data-testid="run-comparison"][data-state="ready"]';

test('two PyTorch runs: ranks side by side, kernels and ops with their changes', { skip }, async () => {
  const { root, kernel } = logFolder();
  const bin = process.env.TIDEMARK_BIN || path.join(ROOT, 'target/debug/tidemark');
  const want = JSON.parse(execFileSync(bin, ['run-comparison', path.join(root, 'logs/cur'), path.join(root, 'logs/base'), '--json'], { maxBuffer: 64 << 20 }).toString());
  assert.equal(want.torch.kernels[0].name, kernel);

  const page = await newPage(browser);
  await openApp(page, server.url);
  await page.setInputFiles('[data-testid="folder-input"]', path.join(root, 'logs'));
  for (const run of ['base', 'cur']) for (const rank of [0, 1]) await waitForFile(page, file(run, rank));
  await page.selectOption('[data-testid="run-select"]', 'logs/cur');
  await page.click('.tab[data-tool="run-comparison"]');
  await page.waitForSelector('[data-testid="rc-no-baseline"]');
  await page.selectOption('[data-testid="baseline-select"]', 'logs/base');
  await page.waitForSelector(ready, { timeout: 120_000 });

  assert.equal(await one(page, 'current_run'), 'cur');
  assert.equal(await one(page, 'baseline_run'), 'base');
  assert.equal(await one(page, 'current_hosts'), '2');
  assert.ok(close(await one(page, 'delta_device_self_time_us'), want.device_self_time_us.delta));
  assert.ok(close(await one(page, 'delta_host_self_time_us'), want.host_self_time_us.delta));
  assert.ok(close(await one(page, 'current_step_time_us'), want.step_time.average_ms.current * 1e3));

  // Ranks: matched by rank, each one's step split and its change.
  const ranks = await page.$$eval('[data-testid="rc-ranks"] tbody tr[data-rank]', (rs) => rs.map((r) => `${r.dataset.rank}:${r.dataset.presence}`));
  assert.deepEqual(ranks, ['rank 0:both', 'rank 1:both']);
  for (const r of want.torch.ranks) {
    assert.equal(await one(page, 'worker', r.rank), r.current_worker);
    for (const f of ['step_us', 'computation_us', 'communication_us', 'memcpy_us', 'other_us']) {
      assert.ok(close(await one(page, f, r.rank), r[f].current), `${r.rank} ${f}`);
      assert.ok(close(await one(page, `delta_${f}`, r.rank), r[f].delta), `${r.rank} delta_${f}`);
    }
  }

  // Kernels: every one counted, the slowed one first with the engine's change.
  assert.equal(await one(page, 'total_kernels'), String(want.torch.kernels.length));
  assert.equal(await page.$eval('[data-testid="rc-kernels"] tbody tr[data-kernel]', (r) => r.dataset.kernel), kernel);
  const k = want.torch.kernels[0];
  assert.ok(close(await one(page, 'total_time_us', kernel), k.total_time_us.current));
  assert.ok(close(await one(page, 'baseline_total_time_us', kernel), k.total_time_us.baseline));
  assert.ok(close(await one(page, 'delta_total_time_us', kernel), k.total_time_us.delta));
  assert.equal(await one(page, 'calls', kernel), String(k.current_calls));

  // Ops: the first row the engine's, a device row of an aten op.
  const o = want.ops[0];
  const key = `${o.on_device ? 'device' : 'host'}/${o.op_type}/${o.op_name}`;
  assert.ok(close(await one(page, 'delta_self_time_us', key), o.self_time_us.delta), key);
  assert.equal(await page.$$eval('[data-testid="rc-memory-empty"]', (e) => e.length), 0, 'PyTorch runs: no allocator section');
  await shot(page, 'run-comparison-torch-light');
  await page.click('[data-testid="theme-toggle"]');
  await page.locator('[data-testid="rc-kernels"]').scrollIntoViewIfNeeded();
  await shot(page, 'run-comparison-torch-dark');
  assert.deepEqual(page.errors, []);
});

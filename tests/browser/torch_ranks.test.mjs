// A PyTorch run's ranks on the page (the Ranks view, the plugin's distributed view). The one real
// Kineto trace (H200, ResNet, one rank) is rewritten into a run folder of two ranks
// (`distributedInfo.rank` set; on rank 1 every kernel twice as long, a straggler), dropped as a
// folder; the Ranks view then shows each rank's step split side by side with their mean, and the
// operators and kernels of the ranks combined or of one rank, every figure equal to the CLI's
// `torch-ranks RUN_FOLDER --json` (the same engine).
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

/** `logs/run` with ranks 0 (as recorded) and 1 (every kernel twice as long). */
function runFolder() {
  const text = gunzipSync(readFileSync(TRACE)).toString();
  const root = scratchDir('tidemark-torchranks-');
  const dir = path.join(root, 'logs', 'run');
  mkdirSync(dir, { recursive: true });
  for (const rank of [0, 1]) {
    const t = JSON.parse(text);
    t.distributedInfo = { backend: 'nccl', rank, world_size: 2 };
    if (rank === 1) for (const e of t.traceEvents) if (e.cat === 'kernel') e.dur *= 2;
    writeFileSync(path.join(dir, `worker${rank}.${SPAN}.pt.trace.json`), JSON.stringify(t));
  }
  return root;
}

const ready = '[data-testid="torch-ranks"][data-state="ready"]';
const SPLIT = ['step_us', 'computation_us', 'communication_us', 'memcpy_us', 'other_us'];

test('a PyTorch run: each rank\'s step split side by side, operators and kernels combined or per rank', { skip, timeout: 180_000 }, async () => {
  const root = runFolder();
  const bin = process.env.TIDEMARK_BIN || path.join(ROOT, 'target/debug/tidemark');
  const want = JSON.parse(execFileSync(bin, ['torch-ranks', path.join(root, 'logs/run'), '--json'], { maxBuffer: 64 << 20 }).toString());
  assert.equal(want.ranks.length, 2);
  assert.ok(want.ranks[1].split.computation_us > want.ranks[0].split.computation_us, 'rank 1 is the straggler');

  const page = await newPage(browser);
  await openApp(page, server.url);
  await page.setInputFiles('[data-testid="folder-input"]', path.join(root, 'logs'));
  for (const rank of [0, 1]) await waitForFile(page, `logs/run/worker${rank}.${SPAN}.pt.trace.json`);
  await page.click('.tab[data-tool="torch-ranks"]');
  await page.waitForSelector(ready, { timeout: 120_000 });

  assert.equal(await one(page, 'rank_count'), '2');
  assert.equal(await one(page, 'steps'), String(want.steps));
  // Each rank's split, and their mean, as the engine has them; the rows in rank order.
  const rows = await page.$$eval('[data-testid="tr-step-table"] tbody tr[data-rank]', (rs) => rs.map((r) => r.dataset.rank));
  assert.deepEqual(rows, ['rank 0', 'rank 1', 'combined']);
  for (const [key, split] of [...want.ranks.map((r, i) => [`rank ${i}`, r.split]), ['combined', want.split]]) {
    for (const f of SPLIT) assert.ok(close(await one(page, f, key), split[f]), `${key} ${f}`);
  }
  // The bars to one scale: the straggler's the widest.
  const widths = await page.$$eval('[data-testid="tr-step-table"] .tr-bar', (bars) =>
    bars.map((b) => [...b.children].reduce((s, c) => s + c.getBoundingClientRect().width, 0)));
  assert.equal(widths.length, 3);
  assert.ok(widths[1] > widths[0] && widths[1] >= widths[2], `bar widths ${widths}`);

  // The operators and kernels summed over the ranks.
  assert.equal(await one(page, 'total_operators'), String(want.operators.length));
  assert.equal(await one(page, 'total_kernels'), String(want.kernels.length));
  const op = want.operators[0];
  assert.ok(close(await one(page, 'device_self_us', op.name), op.device_self_us));
  assert.equal(await one(page, 'calls', op.name), String(op.calls));
  const k = want.kernels[0];
  assert.ok(close(await one(page, 'kernel_total_us', k.name), k.total_us));
  await shot(page, 'torch_ranks_light');

  // One rank's: the straggler's own figures.
  await page.click('[data-testid="tr-pick"] [data-rank="rank 1"]');
  await page.waitForSelector('[data-testid="tr-pick"] [data-rank="rank 1"][aria-pressed="true"]');
  const r1 = want.ranks[1];
  assert.equal(await one(page, 'total_operators'), String(r1.operators.length));
  assert.ok(close(await one(page, 'device_self_us', r1.operators[0].name), r1.operators[0].device_self_us));
  assert.ok(close(await one(page, 'kernel_total_us', r1.kernels[0].name), r1.kernels[0].total_us));
  assert.equal(await one(page, 'kernel_calls', r1.kernels[0].name), String(r1.kernels[0].calls));

  await page.click('[data-testid="theme-toggle"]');
  assert.equal(await page.getAttribute('html', 'data-theme'), 'dark');
  await page.waitForTimeout(200);
  await shot(page, 'torch_ranks_dark');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a rank\'s CLI: torch-ranks refuses a single trace, saying why', { skip }, () => {
  const bin = process.env.TIDEMARK_BIN || path.join(ROOT, 'target/debug/tidemark');
  let err = '';
  try {
    execFileSync(bin, ['torch-ranks', TRACE], { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    err = e.stderr.toString();
    assert.equal(e.status, 2);
  }
  assert.match(err, /not a folder; the ranks are a run folder's traces/);
});

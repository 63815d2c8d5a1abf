// A PyTorch trace and its run's CUDA memory snapshot shared as one offline bundle: the CLI packs both
// with the view to restore (the trace's Kernel view); opened from file:// with the network off, the
// bundle shows that view with the plugin's figures, and the snapshot beside it in the file list opens
// on its own view with the oracle's peak.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { ROOT, DEVICE, launch, newPage, waitForFile, selectFile, one, shot, deviceSkip } from './harness.mjs';
import { scratchDir } from './support/scratch.mjs';

const RUN = path.join(DEVICE, 'nvidia_h200_pytorch/p2_torch_resnet');
const TRACE = path.join(RUN, 'tb/vm_2031.1795841222637258163.pt.trace.json.gz');
const SNAPSHOT = path.join(RUN, 'snapshot.pickle');
const skip = deviceSkip(TRACE);

let browser;
before(async () => { if (!skip) browser = await launch(); });
after(async () => { await browser?.close(); });

test('a PyTorch trace and its snapshot travel in one offline bundle and reopen on the saved view', { skip, timeout: 300_000 }, async () => {
  const out = path.join(scratchDir('tidemark-torch-bundle-'), 'torch.html');
  const bin = process.env.TIDEMARK_BIN || path.join(ROOT, 'target/debug/tidemark');
  const trace = path.basename(TRACE);
  execFileSync(bin, ['bundle', TRACE, SNAPSHOT, '-o', out, '--dist', path.join(ROOT, 'dist'), '--tool', 'torch-kernels', '--file', trace]);

  const page = await newPage(browser);
  await page.context().setOffline(true);
  await page.goto(pathToFileURL(out).href);
  await page.waitForSelector('.toolbar');
  await waitForFile(page, trace);
  await waitForFile(page, 'snapshot.pickle');

  // The saved view: the trace's Kernel view, every kernel of the plugin's table.
  const kernels = JSON.parse(readFileSync(path.join(RUN, 'oracle/kernel_table.json'), 'utf8')).data;
  await page.waitForSelector('[data-metric="kernel_count"]', { timeout: 60_000 });
  assert.equal(Number(await one(page, 'kernel_count')), kernels.rows.length);

  // The snapshot beside it opens on its own view, its peak the oracle's.
  const oracle = JSON.parse(readFileSync(path.join(RUN, 'snapshot.oracle.json'), 'utf8')).devices['0'];
  await selectFile(page, 'snapshot.pickle');
  await page.waitForSelector('[data-metric="peak_active_bytes"]', { timeout: 60_000 });
  assert.equal(await one(page, 'peak_active_bytes'), String(oracle.peak_active_bytes));
  await shot(page, 'torch-bundle-snapshot');

  const outside = page.requests.filter((u) => !/^(file|blob|data):/.test(u));
  assert.deepEqual(outside, [], 'the bundle contacted nothing');
  assert.deepEqual(page.errors, []);
});

// The Memory Viewer tab as a user meets it: pick a module of a real JAX trace and see XProf's figures,
// hover the allocation-block timeline, search the module selector, a before-optimizations dump that
// says plainly why there is nothing to show, a view restored from the URL, and the block timeline of a
// synthetic module with 100,000 buffers (timings printed, never asserted).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { existsSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import {
  ROOT, serve, launch, newPage, openApp, pickFiles, waitForFile, metric, shot, fixture,
} from './harness.mjs';

const A2 = fixture('jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz');
const TRAIN_STEP = 'jit_train_step(14)';
const XPROF = JSON.parse(readFileSync(fixture(`jax/a2_mlp_train/a2_mlp_train.memory_viewer.${TRAIN_STEP}.json`), 'utf8'));
const MIB = 2 ** 20;
// The plot area's margins inside the chart canvases (src/ui/charts/plot.rs: MARGINS).
const PLOT = { left: 72, right: 12, top: 8, bottom: 20 };

let server, browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

function cli(args) {
  const bin = process.env.TIDEMARK_BIN || path.join(ROOT, 'target/debug/tidemark');
  return JSON.parse(execFileSync(bin, args, { maxBuffer: 256 << 20 }).toString());
}

async function openMemoryViewer(page, files) {
  await openApp(page, server.url);
  await pickFiles(page, files);
  for (const f of files) await waitForFile(page, path.basename(f));
  await page.click('[data-tool="memory-viewer"]');
  await page.waitForSelector('[data-testid="module-select"]');
}

async function chooseModule(page, name, search) {
  await page.click('[data-testid="module-select"]');
  if (search) await page.fill('[data-testid="module-search"]', search);
  await page.click(`.picker-row[data-module="${name}"]`);
  await page.waitForSelector(`[data-metric="module"][data-value="${name}"]`);
  await page.waitForSelector('.mv-module');
}

const one = async (page, name, key) => {
  const v = await metric(page, name, key);
  assert.equal(v.length, 1, `${name}${key ? ` (${key})` : ''}: ${JSON.stringify(v)}`);
  return v[0];
};

test('jit_train_step(14) of a2 shows XProf\'s figures; hovering a block shows its card', async () => {
  const page = await newPage(browser);
  await openMemoryViewer(page, [A2]);
  // The selector lists every module, largest peak first.
  await page.click('[data-testid="module-select"]');
  const listed = await page.$$eval('.picker-row', (rows) => rows.map((r) => r.dataset.module));
  const peaks = await metric(page, 'listed_peak_heap_bytes');
  assert.equal(listed.length, 9, listed.join(', '));
  assert.deepEqual([...peaks].map(Number), [...peaks].map(Number).sort((a, b) => b - a));
  await page.keyboard.press('Escape');
  await chooseModule(page, TRAIN_STEP);
  console.log(`in-browser analysis of ${TRAIN_STEP} (request → drawn data): ${await page.getAttribute('.mv-module', 'data-load-ms')} ms`);

  // Overview figures: XProf's JSON (MiB × 2^20) and the CLI's for Tidemark's own.
  const xprof = {
    peak_heap_bytes: XPROF.peakHeapMib,
    peak_unpadded_heap_bytes: XPROF.peakUnpaddedHeapMib,
    entry_parameters_bytes: XPROF.entryComputationParametersMib,
    maybe_live_out_bytes: XPROF.maybeLiveOutMib,
    total_allocation_bytes: XPROF.totalBufferAllocationMib,
    indefinite_allocation_bytes: XPROF.indefiniteBufferAllocationMib,
    non_reusable_bytes: XPROF.nonReusableMib,
  };
  for (const [name, mib] of Object.entries(xprof)) {
    assert.equal(Number(await one(page, name)), Math.round(mib * MIB), name);
  }
  const ours = cli(['memory-viewer', A2, '--module', TRAIN_STEP, '--json']);
  assert.equal(Number(await one(page, 'padding_overhead_bytes')), ours.tidemark.paddingOverheadBytes);
  assert.equal(Number(await one(page, 'fragmentation')), ours.tidemark.fragmentation);
  assert.equal(
    Number(await one(page, 'temporary_allocation_bytes')),
    Math.round((XPROF.totalBufferAllocationMib - XPROF.indefiniteBufferAllocationMib) * MIB),
  );
  assert.equal(Number(await one(page, 'peak_position')), XPROF.peakHeapSizePosition ?? 0);
  // What to shrink: the groups at the peak add up to it; the buffers at the peak are XProf's.
  const groups = (await metric(page, 'peak_group_bytes')).map(Number);
  assert.equal(groups.reduce((a, b) => a + b, 0), Math.round(XPROF.peakHeapMib * MIB));
  assert.equal(Number(await one(page, 'peak_buffer_count')), XPROF.maxHeap.length);
  const bySize = await page.$$eval('[data-testid="peak-buffer"]', (rows) => rows.map((r) => r.dataset.bufferId));
  assert.deepEqual(bySize, XPROF.maxHeapBySize.map((o) => (o.logicalBufferId === -1 ? 'small' : String(o.logicalBufferId))));
  const top = XPROF.maxHeapBySize[0];
  assert.equal(await page.getAttribute('[data-testid="buffer-details"]', 'data-buffer-id'), String(top.logicalBufferId));
  assert.equal(Number(await one(page, 'buffer_size_bytes')), Math.round(top.logicalBufferSizeMib * MIB));
  assert.equal(await one(page, 'buffer_shape'), top.shapeString);
  assert.equal(await one(page, 'buffer_source'), `${top.sourceInfo.fileName}:${top.sourceInfo.lineNumber}`);
  assert.match(page.url(), /module=jit_train_step\(14\)|module=jit_train_step%2814%29/);

  // Hover the first buffer block of XProf's layout: its card and the details card name it.
  const canvas = await page.$('[data-testid="block-timeline"]');
  const box = await canvas.boundingBox();
  const blocks = XPROF.bufferBlocks;
  const steps = Math.max(XPROF.heapSizes.length - 1, ...blocks.map((b) => b.endStep ?? 0));
  const bytes = Math.max(...blocks.map((b) => (b.offset ?? 0) + b.size));
  const block = blocks.find((b) => b.logicalBufferId !== -1 && b.logicalBufferId !== undefined);
  const pw = box.width - PLOT.left - PLOT.right;
  const ph = box.height - PLOT.top - PLOT.bottom;
  const x = box.x + PLOT.left + (((block.startStep ?? 0) + block.endStep) / 2 / steps) * pw;
  const y = box.y + PLOT.top + ph - (((block.offset ?? 0) + block.size / 2) / bytes) * ph;
  await page.mouse.move(x, y);
  await page.waitForSelector(`[data-testid="block-card"][data-buffer-id="${block.logicalBufferId}"]`);
  const key = String(block.logicalBufferId);
  assert.equal(Number(await one(page, 'block_size_bytes', key)), block.size);
  assert.equal(Number(await one(page, 'block_offset_bytes', key)), block.offset ?? 0);
  assert.equal(Number(await one(page, 'block_start_step', key)), block.startStep ?? 0);
  assert.equal(Number(await one(page, 'block_end_step', key)), block.endStep);
  assert.equal(await one(page, 'block_category', key), block.category);
  assert.equal(await page.getAttribute('[data-testid="buffer-details"]', 'data-buffer-id'), key);
  await shot(page, 'memory-viewer-train-step-hover');
  // The working-space chart names the instruction under the pointer.
  const ws = await (await page.$('[data-testid="working-space"]')).boundingBox();
  const at = XPROF.peakHeapSizePosition ?? 0;
  await page.mouse.move(ws.x + PLOT.left + (at / steps) * (ws.width - PLOT.left - PLOT.right), ws.y + ws.height / 2);
  await page.waitForSelector('[data-testid="ws-tooltip"]');
  assert.equal(await one(page, 'ws_instruction'), XPROF.hloInstructionNames[at]);
  assert.equal(Number(await one(page, 'ws_heap_bytes')), Math.round(XPROF.heapSizes[at] * MIB));
  await page.mouse.move(0, 0);
  await shot(page, 'memory-viewer-train-step-light');
  await page.click('[data-testid="theme-toggle"]');
  await page.waitForTimeout(100);
  await shot(page, 'memory-viewer-train-step-dark');
  assert.deepEqual(page.errors, []);
});

test('the module selector searches modules and files', async () => {
  const page = await newPage(browser);
  await openMemoryViewer(page, [A2, fixture('hlo/module_0042.jit_mlp_train_step.cpu_after_optimizations.hlo.pb')]);
  await page.click('[data-testid="module-select"]');
  assert.equal(await page.locator('.picker-row').count(), 10);
  await page.fill('[data-testid="module-search"]', 'EVAL');
  assert.deepEqual(await page.$$eval('.picker-row', (r) => r.map((e) => e.dataset.module)), ['jit_eval_step(16)']);
  await page.fill('[data-testid="module-search"]', 'module_0042');
  assert.deepEqual(await page.$$eval('.picker-row', (r) => r.map((e) => e.dataset.module)), ['jit_mlp_train_step']);
  await page.fill('[data-testid="module-search"]', 'no such module');
  await page.waitForSelector('.picker-empty');
  await page.fill('[data-testid="module-search"]', 'threefry_seed');
  await page.keyboard.press('Enter');
  await page.waitForSelector('[data-metric="module"][data-value="jit__threefry_seed(2)"]');
  await shot(page, 'memory-viewer-search');
  assert.deepEqual(page.errors, []);
});

test('a before-optimizations dump says plainly that it has no buffer assignment', async () => {
  const page = await newPage(browser);
  await openMemoryViewer(page, [fixture('hlo/module_0008.jit_tiny.before_optimizations.hlo.pb')]);
  await page.waitForSelector('[data-testid="mv-unavailable"][data-no-buffer-assignment="true"]');
  const text = await page.textContent('[data-testid="mv-unavailable"]');
  assert.match(text, /no buffer assignment/);
  assert.match(text, /after_optimizations/);
  await shot(page, 'memory-viewer-before-optimizations');
  assert.deepEqual(page.errors, []);
});

test('the module lives in the URL: a reload restores it', async () => {
  const page = await newPage(browser);
  await openApp(page, `${server.url}#demo&tool=memory-viewer`);
  await waitForFile(page, 'module_0042.jit_mlp_train_step.cpu_after_optimizations.hlo.pb');
  await page.waitForSelector('[data-testid="module-select"]');
  await chooseModule(page, 'jit_mlp_train_step');
  assert.match(page.url(), /module=jit_mlp_train_step/);
  await page.reload();
  await waitForFile(page, 'module_0042.jit_mlp_train_step.cpu_after_optimizations.hlo.pb');
  await page.waitForSelector('[data-metric="module"][data-value="jit_mlp_train_step"]');
  await page.waitForSelector('.mv-module');
  assert.deepEqual(page.errors, []);
});

test('block timeline of a synthetic module with 100,000 buffers: frame time while panning', async () => {
  const file = path.join(ROOT, 'target/tmp/memory_viewer_synthetic_100000.hlo.pb');
  if (!existsSync(file)) {
    execFileSync('cargo', ['test', '--test', 'memory_viewer_synthetic'], { cwd: ROOT, stdio: 'inherit' });
  }
  const page = await newPage(browser);
  await openMemoryViewer(page, [file]);
  await page.waitForSelector('[data-testid="block-timeline"]', { timeout: 120_000 });
  const blocks = Number(await page.getAttribute('[data-testid="block-timeline"]', 'data-block-count'));
  assert.equal(blocks, 100_000);
  console.log(`in-browser analysis of the synthetic module (100,000 buffers; request → drawn data): ${await page.getAttribute('.mv-module', 'data-load-ms')} ms`);
  const canvas = await page.$('[data-testid="block-timeline"]');
  const box = await canvas.boundingBox();
  const cx = box.x + box.width / 2;
  const cy = box.y + box.height / 2;
  await shot(page, 'memory-viewer-synthetic-full');

  // Pans with the mouse, one move per animation frame; returns the mean draw time (the page's own
  // measurement) and the mean interval between frames.
  async function pan(label, moves) {
    const draws = [];
    await page.mouse.move(cx, cy);
    await page.mouse.down();
    const t0 = await page.evaluate(() => performance.now());
    for (let i = 1; i <= moves; i++) {
      await page.mouse.move(cx - i * 3, cy + (i % 20) - 10);
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
      draws.push(Number(await page.getAttribute('[data-testid="block-timeline"]', 'data-draw-ms')));
    }
    const t1 = await page.evaluate(() => performance.now());
    await page.mouse.up();
    const mean = draws.reduce((a, b) => a + b, 0) / draws.length;
    const max = Math.max(...draws);
    const drawn = await page.getAttribute('[data-testid="block-timeline"]', 'data-drawn-blocks');
    const folded = await page.getAttribute('[data-testid="block-timeline"]', 'data-folded-blocks');
    console.log(`${label}: draw ${mean.toFixed(2)} ms/frame (max ${max.toFixed(2)}), ${((t1 - t0) / moves).toFixed(1)} ms between frames incl. test driver; last frame: ${drawn} blocks drawn, ${folded} folded`);
  }
  // Everything in view (at this zoom the view cannot pan: it is clamped to the module).
  await pan('synthetic 100k, whole module', 30);
  // Zoomed in on x (Ctrl+wheel keeps y), then panned.
  await page.keyboard.down('Control');
  for (let i = 0; i < 4; i++) await page.mouse.wheel(0, -260);
  await page.keyboard.up('Control');
  await pan('synthetic 100k, x zoomed in', 60);
  // Zoomed in both ways.
  for (let i = 0; i < 4; i++) await page.mouse.wheel(0, -300);
  await pan('synthetic 100k, x and y zoomed in', 60);
  await page.mouse.move(cx, cy);
  await shot(page, 'memory-viewer-synthetic-zoomed');
  assert.deepEqual(page.errors, []);
});

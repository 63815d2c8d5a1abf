// The Trace Viewer on a PyTorch profiler (Kineto) trace from an NVIDIA H200 (p2_torch_resnet, read in
// place from ../shared/fixtures/device): every complete and instant event of the trace's JSON counted,
// the CPU threads before the GPU stream, a kernel found by search with its times and arguments as the
// JSON has them, its launch drawn as a flow arrow, and the GPU's `[memory]` events as a counter track
// of allocated and reserved bytes. The expected figures are read here from the trace's own JSON.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { canvas, settled, hoverCounter } from './support/trace_canvas.mjs';
import { DEVICE, deviceSkip, serve, launch, newPage, openApp, pickFiles, waitForFile, selectFile, metric, one, shot } from './harness.mjs';

const TRACE = path.join(DEVICE, 'nvidia_h200_pytorch/p2_torch_resnet/tb/vm_2031.1795841222637258163.pt.trace.json.gz');
const absent = deviceSkip(TRACE);
if (absent) console.log(`# trace_viewer_kineto: ${absent}; its test is skipped`);

let server, browser;
before(async () => { if (!absent) { server = await serve(); browser = await launch(); } });
after(async () => { await browser?.close(); server?.close(); });



test('p2_torch_resnet: every event, CPU threads then the GPU stream, a searched kernel, its launch flow, the memory counter', { skip: absent }, async () => {
  const raw = JSON.parse(gunzipSync(readFileSync(TRACE)).toString('utf8')).traceEvents;
  const events = raw.filter((e) => ['X', 'i', 'I'].includes(e.ph));
  const kernels = events.filter((e) => e.cat === 'kernel');
  const kernel = kernels.reduce((a, e) => (e.dur > a.dur ? e : a));
  const gpuMemory = events.filter((e) => e.name === '[memory]' && e.args['Device Type'] === 1 && e.args['Device Id'] === 0);
  const maxReserved = Math.max(...gpuMemory.map((e) => Math.max(e.args['Total Reserved'], e.args['Total Allocated'])));

  const page = await newPage(browser);
  await openApp(page, server.url);
  await pickFiles(page, [TRACE]);
  const name = path.basename(TRACE);
  await waitForFile(page, name);
  await selectFile(page, name);
  await page.click('[data-tool="trace-viewer"]');
  await page.waitForSelector('[data-testid="trace-viewer"]', { timeout: 120_000 });
  let c = await settled(page);

  // Every complete and instant event, all of them in the whole-trace window.
  assert.equal(Number(await one(page, 'trace_event_count')), events.length);
  assert.equal(c.visible, events.length);
  // The CPU threads, then the GPU's stream, as the metadata names them.
  const threads = await page.$$eval('[data-testid="trace-thread"]', (els) => els.map((e) => ({
    pid: Number(e.dataset.pid), tid: Number(e.dataset.tid), name: e.dataset.name, events: Number(e.dataset.events),
    top: parseFloat(e.style.top), height: parseFloat(e.style.height),
  })));
  assert.deepEqual(threads.slice(0, 3).map((t) => [t.pid, t.tid, t.name]), [
    [2031, 2031, 'thread 2031 (python3)'], [2031, 2056, 'thread 2056 (python3)'], [0, 7, 'stream 7'],
  ]);
  assert.equal(threads.reduce((a, t) => a + t.events, 0), events.length);
  const processes = await page.$$eval('[data-testid="trace-process"]', (els) => els.map((e) => e.getAttribute('title')));
  assert.deepEqual(processes.slice(0, 2), ['python3 (pid 2031): CPU', 'python3 (pid 0): GPU 0']);

  // The GPU's memory counter track, under the CPU process that wrote the events, scaled to the most reserved.
  await page.waitForSelector('[data-testid="trace-counter"][data-memory-id="GPU 0"]', { timeout: 60_000 });
  assert.equal(Number(await one(page, 'counter_event_count', 'GPU 0')), gpuMemory.length);
  assert.equal(Number(await one(page, 'counter_max_in_use_bytes', 'GPU 0')), maxReserved);
  const k = await page.$eval('[data-testid="trace-counter"][data-memory-id="GPU 0"]', (e) => ({ top: parseFloat(e.style.top), height: parseFloat(e.style.height) }));
  const stream = threads.find((t) => t.tid === 7);
  assert.ok(k.top < stream.top, 'the counter track sits with the CPU process, above the GPU stream');
  await shot(page, 'trace-viewer-kineto');
  // The CPU's main thread is 40 rows deep: scroll the counter track into view.
  const hovered = await hoverCounter(page, k, 'counter_reserved_bytes', 10);
  assert.ok(hovered, 'the counter track shows its values on hover');
  const [allocated, reserved] = [Number(await one(page, 'counter_allocated_bytes')), Number(await one(page, 'counter_reserved_bytes'))];
  assert.ok(gpuMemory.some((e) => e.args['Total Allocated'] === allocated && e.args['Total Reserved'] === reserved), `${allocated} / ${reserved} is an event's`);
  await shot(page, 'trace-viewer-kineto-counter');

  // Search the longest kernel by its name: every event whose name holds it, the first one selected.
  const same = events.filter((e) => e.name.toLowerCase().includes(kernel.name.toLowerCase()));
  await page.fill('[data-testid="trace-search"]', kernel.name);
  await page.press('[data-testid="trace-search"]', 'Tab');
  await page.waitForSelector('[data-metric="search_match_count"]', { timeout: 30_000 });
  assert.equal(Number(await one(page, 'search_match_count')), same.length);
  await page.click('[data-testid="search-next"]');
  await page.waitForFunction((n) => document.querySelector('[data-metric="event_name"]')?.dataset.value === n, kernel.name, { timeout: 30_000 });
  assert.equal(await one(page, 'event_category'), 'kernel');
  const dur = Number(await one(page, 'event_duration_ps'));
  assert.ok(same.some((e) => Math.round(e.dur * 1000) * 1000 === dur), `${dur} ps is one of its durations`);
  const origin = Math.min(...events.map((e) => e.ts));
  const start = Number(await one(page, 'event_start_ps'));
  const first = same.reduce((a, e) => (e.ts < a.ts ? e : a));
  assert.ok(Math.abs(start - (first.ts - origin) * 1e6) <= 1000, `starts at ${start} ps`);
  const args = Object.fromEntries((await page.$$eval('[data-metric="event_arg"]', (els) => els.map((e) => [e.dataset.key, e.dataset.value]))));
  assert.equal(args.correlation, String(first.args.correlation));
  assert.equal(args.grid, JSON.stringify(first.args.grid));

  // Its launch: the ac2g flow from the runtime call, drawn and listed.
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="trace-canvas"]').dataset.selectedFlows) > 0, null, { timeout: 30_000 });
  const links = await page.$$eval('[data-testid="flow-link"]', (els) => els.map((e) => e.textContent));
  assert.ok(links.some((t) => t.includes(`ac2g ${first.args.correlation}`)), JSON.stringify(links));
  c = await settled(page);
  await shot(page, 'trace-viewer-kineto-flow');

  // Every flow of the window: ac2g and fwdbwd arrows.
  await page.click('[data-testid="show-flows"]');
  await page.keyboard.press('0');
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="trace-canvas"]').dataset.windowFlows) > 0, null, { timeout: 60_000 });
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="trace-canvas"]').dataset.flowArrows) > 0, null, { timeout: 30_000 });
  await shot(page, 'trace-viewer-kineto-flows');
  await page.close();

  // Dark theme.
  const dark = await newPage(browser, { colorScheme: 'dark' });
  await openApp(dark, server.url);
  await pickFiles(dark, [TRACE]);
  await waitForFile(dark, name);
  await selectFile(dark, name);
  await dark.click('[data-tool="trace-viewer"]');
  await dark.waitForSelector('[data-testid="trace-counter"][data-memory-id="GPU 0"]', { timeout: 120_000 });
  await settled(dark);
  await shot(dark, 'trace-viewer-kineto-dark');
  assert.equal((await metric(dark, 'trace_event_count'))[0], String(events.length));
  await dark.close();
});

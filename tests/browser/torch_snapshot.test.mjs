// The CUDA memory snapshot tool as a user meets it: drop the real ResNet-18 snapshot.pickle recorded
// on an NVIDIA H200 (read in place from ../shared/fixtures/device; skipped with a note when absent, a
// failure under CI=true), land on the tool, read every figure of snapshot.oracle.json and Tidemark's
// own through data-metric against the oracle and `tidemark torch-snapshot --json`, hover the
// timeline's peak, click a point and type an event, and compare the allocator's state with `--at`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { gzipSync, gunzipSync } from 'node:zlib';
import path from 'node:path';
import { ROOT, DEVICE, deviceSkip, serve, launch, newPage, openApp, dropFiles, waitForFile, selectFile, metric, one, shot } from './harness.mjs';

const DIR = path.join(DEVICE, 'nvidia_h200_pytorch/p2_torch_resnet');
const SNAPSHOT = path.join(DIR, 'snapshot.pickle');
const skip = deviceSkip(SNAPSHOT);
const TRACE = path.join(DIR, 'tb/vm_2031.1795841222637258163.pt.trace.json.gz');

/** `tidemark torch-snapshot --json` of the fixture, with `args` besides. */
function cli(...args) {
  const bin = process.env.TIDEMARK_BIN || path.join(ROOT, 'target/debug/tidemark');
  return JSON.parse(execFileSync(bin, ['torch-snapshot', SNAPSHOT, '--json', ...args], { maxBuffer: 256 << 20 }).toString());
}

let server, browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

/** The chosen state's figures equal the CLI's `--at` state. */
async function stateEquals(page, key, want) {
  await page.waitForSelector(`[data-testid="ts-state"][data-key="${key}"][data-event="${want.event_index}"]`, { timeout: 60_000 });
  assert.equal(await one(page, 'state_event_index', key), String(want.event_index));
  for (const f of ['reserved_bytes', 'allocated_bytes', 'pending_free_bytes', 'free_bytes', 'largest_free_bytes']) {
    assert.equal(await one(page, `state_${f}`, key), String(want[f]), `${key} ${f}`);
  }
  assert.equal(await one(page, 'state_pending_free_blocks', key), String(want.pending_free_blocks));
  assert.equal(Number(await one(page, 'state_fragmentation', key)), want.fragmentation);
  assert.equal(await one(page, 'state_segments', key), String(want.segments.length));
  assert.equal(await one(page, 'state_blocks', key), String(want.segments.reduce((n, g) => n + g.blocks.length, 0)));
  assert.equal(await page.getAttribute(`[data-testid="ts-segments"][data-key="${key}"]`, 'data-segments'), String(want.segments.length));
}

test('a CUDA memory snapshot lands on its own view, every figure the oracle\'s and the CLI\'s', { skip, timeout: 300_000 }, async () => {
  const oracle = JSON.parse(readFileSync(path.join(DIR, 'snapshot.oracle.json')).toString()).devices['0'];
  const report = cli().devices['0'];
  const page = await newPage(browser);
  await openApp(page, server.url);
  await dropFiles(page, [SNAPSHOT]);
  await waitForFile(page, 'snapshot.pickle');
  await page.waitForSelector('[data-testid="torch-snapshot"] [data-testid="ts-device"]', { timeout: 60_000 });
  assert.match(await page.evaluate(() => location.hash), /tool=torch-snapshot/);
  assert.equal(await page.getAttribute('.tab[data-tool="torch-snapshot"]', 'aria-selected'), 'true');
  // One device: no picker.
  assert.equal(await page.$('[data-testid="ts-device-picker"]'), null);

  // The oracle's figures.
  assert.equal(await one(page, 'peak_active_bytes'), String(oracle.peak_active_bytes));
  assert.equal(await one(page, 'peak_event_index'), String(oracle.peak_event_index));
  assert.equal(await one(page, 'peak_time_us'), String(oracle.peak_time_us));
  assert.equal(await one(page, 'unseen_frees'), String(oracle.unseen_frees));
  assert.equal(await one(page, 'reserved_delta_bytes'), String(oracle.reserved_delta_bytes));
  for (const [action, n] of Object.entries(oracle.events)) assert.equal(await one(page, 'events', action), String(n), action);
  for (const f of ['total_size', 'allocated_size', 'active_size']) assert.equal(await one(page, `segments_${f}`, 'dump'), String(oracle.segments[f]), f);
  assert.equal(await one(page, 'segments_count'), String(oracle.segments.count));
  for (const [s, n] of Object.entries(oracle.segments.blocks_by_state)) assert.equal(await one(page, 'blocks_by_state', s), String(n), s);
  // Live at the peak: every row, by size and frame.
  for (const r of oracle.live_at_peak) {
    assert.equal(await one(page, 'live_count', `${r.size}|${r.frame}`), String(r.count), `${r.size} ${r.frame}`);
  }

  // Tidemark's own, equal to the CLI's: history, the peak with what was live before, the tables.
  const h = report.history;
  assert.equal(await page.getAttribute('[data-testid="ts-history"]', 'data-lost'), String(h.lost));
  assert.equal(await one(page, 'history_sentence'), h.sentence);
  for (const f of ['live_before_trace_blocks', 'live_before_trace_bytes', 'unseen_freed_bytes', 'active_at_start_bytes']) {
    assert.equal(await one(page, f), String(h[f]), f);
  }
  assert.equal(await one(page, 'trace_events'), String(h.trace_events));
  assert.equal(await one(page, 'peak_with_prior_bytes'), String(report.peak_with_prior_bytes));
  assert.deepEqual(await metric(page, 'largest_size'), report.largest_allocations.map((a) => String(a.size)));
  for (const f of report.never_freed) assert.equal(await one(page, 'never_freed_bytes', f.frame), String(f.bytes), f.frame);
  assert.equal((await metric(page, 'growth_net_bytes')).length, report.growth.length);
  assert.equal(await page.$('[data-testid="ts-ooms"]'), null, 'no OOM in this trace');

  // The dump's segments are the state after the last event.
  await stateEquals(page, 'dump', cli('--at', String(h.trace_events - 1)).state_at);

  // The timeline: the whole trace, its highest stack the peak with what was live before.
  const canvas = '[data-testid="ts-timeline-canvas"]';
  await page.waitForSelector(`${canvas}[data-bands]`);
  assert.equal(await one(page, 'window_max_bytes'), String(report.peak_with_prior_bytes));
  assert.equal(await one(page, 'window_events'), String(h.trace_events));
  await shot(page, 'torch_snapshot');

  // Hover the peak's column just under its top: a band names its allocation.
  const box = await page.locator(canvas).boundingBox();
  const [left, top, bottom] = await Promise.all(['data-plot-left', 'data-plot-top', 'data-plot-bottom'].map((a) => page.getAttribute(canvas, a).then(Number)));
  const right = box.width - 12;
  const n = h.trace_events;
  const peakX = left + (report.peak_with_prior_event_index + 0.5) / n * (right - left);
  const yMax = report.peak_with_prior_bytes;
  // The chart's y runs to 4 % above the highest of the stack and the reserved bytes.
  const yTop = Math.max(yMax, report.segments.total_size) * 1.04;
  const peakY = bottom - (yMax * 0.97) / yTop * (bottom - top);
  await page.mouse.move(box.x + peakX, box.y + peakY);
  await page.waitForSelector('[data-testid="ts-tooltip"]');
  const bandBytes = await metric(page, 'hover_band_bytes');
  assert.equal(bandBytes.length, 1, 'a band under the pointer');
  assert.ok(Number(bandBytes[0]) > 0);
  const at = Number((await metric(page, 'hover_event_index'))[0]);
  assert.ok(Math.abs(at - report.peak_with_prior_event_index) <= Math.ceil(n / ((right - left) / 2)), `hovered event ${at}`);
  await shot(page, 'torch_snapshot_hover');

  // Click it: the allocator's state at that event, as `--at` has it, and the URL keeps it.
  await page.mouse.click(box.x + peakX, box.y + peakY);
  await page.waitForSelector(`[data-testid="ts-state-chosen"][data-event="${at}"]`);
  await stateEquals(page, 'chosen', cli('--at', String(at)).state_at);
  assert.match(await page.evaluate(() => location.hash), new RegExp(`at=${at}(&|$)`));

  // Type an event: the state follows.
  await page.fill('[data-testid="ts-event-input"]', '100');
  await page.press('[data-testid="ts-event-input"]', 'Enter');
  await stateEquals(page, 'chosen', cli('--at', '100').state_at);
  await page.locator('[data-testid="ts-state-chosen"]').scrollIntoViewIfNeeded();
  await shot(page, 'torch_snapshot_state');

  // The largest allocation's frames: Python (library runs folded) and, unfolded on demand, Python's
  // library frames and C++.
  await page.click('table.ts-table[data-testid="ts-largest-table"] tbody tr[data-event]');
  const largest = report.largest_allocations[0];
  await page.waitForSelector(`[data-testid="ts-largest-frames"][data-event="${largest.event_index}"]`);
  const text = (f) => `${f.file}:${f.line} ${f.function}`;
  assert.deepEqual(await metric(page, 'frame', String(largest.event_index)),
    largest.python_stack.filter((f) => !f.folded).map(text));
  // A stack with library frames folded inside a library call (the fixture's allocations made in
  // torch's modules): unfolding shows every Python frame, folding hides them again.
  const withFolded = report.largest_allocations.findIndex((a) => a.python_stack.some((f) => f.folded));
  assert.ok(withFolded >= 0, 'an allocation with folded library frames');
  const folding = report.largest_allocations[withFolded];
  await page.click(`table.ts-table[data-testid="ts-largest-table"] tbody tr[data-event="${folding.event_index}"]`);
  await page.waitForSelector(`[data-testid="ts-largest-frames"][data-event="${folding.event_index}"]`);
  const folded = folding.python_stack.filter((f) => f.folded).length;
  assert.equal(await page.textContent('[data-testid="ts-unfold-python"]'), `Unfold library frames (${folded})`);
  await page.click('[data-testid="ts-unfold-python"]');
  await page.waitForSelector('[data-testid="ts-python-frames"][data-unfolded="true"]');
  assert.deepEqual(await metric(page, 'frame', String(folding.event_index)), folding.python_stack.map(text));
  await page.locator('[data-testid="ts-largest-frames"]').scrollIntoViewIfNeeded();
  await shot(page, 'torch_snapshot_unfolded');
  await page.click('[data-testid="ts-unfold-python"]');
  await page.waitForSelector('[data-testid="ts-python-frames"][data-unfolded="false"]');
  assert.deepEqual(await metric(page, 'frame', String(folding.event_index)),
    folding.python_stack.filter((f) => !f.folded).map(text));
  await page.click('[data-testid="ts-cpp-frames"] summary');
  await page.locator('[data-testid="ts-largest"]').scrollIntoViewIfNeeded();
  await shot(page, 'torch_snapshot_tables');
  await page.locator('[data-testid="ts-growth"]').scrollIntoViewIfNeeded();
  await shot(page, 'torch_snapshot_growth');

  // Zoom in: the engine answers a window of fewer events, drawn at full resolution.
  await page.locator(canvas).scrollIntoViewIfNeeded();
  const again = await page.locator(canvas).boundingBox();
  await page.mouse.move(again.x + peakX, again.y + (top + bottom) / 2);
  for (let i = 0; i < 6; i++) await page.mouse.wheel(0, -400);
  await page.waitForSelector('[data-testid="ts-window"][data-zoomed="true"]');
  await page.waitForFunction(() => Number(document.querySelector('[data-metric="window_events"]').dataset.value) < 4134);
  const shown = Number(await one(page, 'window_events'));
  assert.ok(shown > 0 && shown < n, `${shown} events in the window`);
  await page.locator(canvas).scrollIntoViewIfNeeded();
  await shot(page, 'torch_snapshot_zoomed');

  // By time, dark.
  await page.click('[data-testid="ts-axis"] [data-axis="time"]');
  await page.waitForSelector(`${canvas}[data-axis="time"][data-bands]`);
  await page.click('[data-testid="theme-toggle"]');
  assert.equal(await page.getAttribute('html', 'data-theme'), 'dark');
  await page.waitForTimeout(300);
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot(page, 'torch_snapshot_time_dark');

  // The URL keeps the chosen event.
  assert.match(await page.evaluate(() => location.hash), /at=100/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the run\'s Kineto trace lies under the timeline on its clock, and a point of its curve opens that snapshot event', { skip, timeout: 300_000 }, async () => {
  const page = await newPage(browser);
  await openApp(page, server.url);
  await dropFiles(page, [SNAPSHOT, TRACE]);
  await waitForFile(page, 'snapshot.pickle');
  await waitForFile(page, path.basename(TRACE));
  await selectFile(page, 'snapshot.pickle');
  await page.click('.tab[data-tool="torch-snapshot"]');
  await page.click('[data-testid="ts-axis"] [data-axis="time"]');
  const canvas = '[data-testid="ts-trace-canvas"]';
  await page.waitForSelector(canvas, { timeout: 60_000 });
  assert.equal(await page.getAttribute(`[data-testid="ts-trace-picker"] [data-trace="${path.basename(TRACE)}"]`, 'aria-pressed'), 'true');

  // The panel's figures: the trace's CUDA memory events, nearly all matched to the snapshot's.
  const panel = async (name) => {
    const v = await page.$$eval(`[data-testid="ts-trace-memory"] [data-metric="${name}"]`, (els) => els.map((e) => e.dataset.value));
    assert.equal(v.length, 1, `${name}: ${JSON.stringify(v)}`);
    return v[0];
  };
  const points = Number(await panel('trace_points'));
  const matched = Number(await panel('trace_matched'));
  assert.ok(points > 1000, `${points} points`);
  assert.ok(matched * 100 >= points * 95, `${matched} of ${points} matched`);
  const span = Number(await panel('trace_memory_span_us'));
  const from = Number(await panel('trace_start_offset_us'));
  assert.ok(span > 0 && from >= 0, `the trace runs ${span} µs from ${from} µs into the snapshot`);
  assert.ok(Number(await panel('trace_peak_bytes')) > 0);

  // Both plots span the same pixels on one time axis.
  const attr = async (sel, a) => Number(await page.getAttribute(sel, a));
  const timeline = '[data-testid="ts-timeline-canvas"][data-axis="time"]';
  await page.waitForSelector(timeline);
  assert.equal(await attr(canvas, 'data-plot-left'), await attr(timeline, 'data-plot-left'));

  // Hover, then click, the middle of the trace's curve.
  await page.locator(canvas).scrollIntoViewIfNeeded();
  const box = await page.locator(canvas).boundingBox();
  const [start, end, first, left, right, top, bottom] = await Promise.all(
    ['data-start-us', 'data-end-us', 'data-first-us', 'data-plot-left', 'data-plot-right', 'data-plot-top', 'data-plot-bottom'].map((a) => attr(canvas, a)));
  const usPerPx = (end - start) / (box.width - left - right);
  const t = first + from + span / 2;
  const x = left + (t - start) / usPerPx;
  const y = (top + bottom) / 2;
  await page.mouse.move(box.x + x, box.y + y);
  await page.waitForSelector('[data-testid="ts-trace-tooltip"]');
  assert.equal((await metric(page, 'hover_trace_total_bytes')).length, 1);
  await shot(page, 'torch_snapshot_trace_hover');
  await page.mouse.click(box.x + x, box.y + y);
  await page.waitForSelector('[data-testid="ts-trace-picked"]');
  const event = await one(page, 'picked_trace_event');
  const at = Number(await one(page, 'picked_trace_offset_us'));
  assert.ok(Math.abs(first + at - t) <= 2 * usPerPx, `the picked point (${at} µs) is under the pointer (${t - first} µs)`);
  // The allocator's state at that event, as `--at` has it, and the URL keeps it.
  await stateEquals(page, 'chosen', cli('--at', event).state_at);
  assert.match(await page.evaluate(() => location.hash), new RegExp(`at=${event}(&|$)`));
  await page.locator('[data-testid="ts-timeline"]').scrollIntoViewIfNeeded();
  await shot(page, 'torch_snapshot_trace');
  await page.click('[data-testid="theme-toggle"]');
  await page.waitForTimeout(300);
  await page.locator('[data-testid="ts-timeline"]').scrollIntoViewIfNeeded();
  await shot(page, 'torch_snapshot_trace_dark');
  assert.deepEqual(page.errors, []);
  await page.close();
});

/** The fixture's trace stamped an hour later: another run of the same script, on no shared clock. */
function otherRun() {
  const v = JSON.parse(gunzipSync(readFileSync(TRACE)).toString());
  v.baseTimeNanoseconds += 3_600_000_000_000;
  const dir = path.join(ROOT, 'tests/browser/out/other_run');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'other_run.pt.trace.json.gz');
  writeFileSync(file, gzipSync(JSON.stringify(v)));
  return file;
}

/** Opens the snapshot with `traces` beside it, on the snapshot's view. */
async function snapshotWith(page, traces) {
  await openApp(page, server.url);
  await dropFiles(page, [SNAPSHOT, ...traces]);
  await waitForFile(page, 'snapshot.pickle');
  for (const t of traces) await waitForFile(page, path.basename(t));
  await selectFile(page, 'snapshot.pickle');
  await page.click('.tab[data-tool="torch-snapshot"]');
}

test('the Trace memory panel and the timeline show one time window: pixel for pixel by time, the events\' times by event', { skip, timeout: 300_000 }, async () => {
  const page = await newPage(browser);
  await snapshotWith(page, [TRACE]);
  const trace = '[data-testid="ts-trace-canvas"]';
  const timeline = '[data-testid="ts-timeline-canvas"]';
  await page.waitForSelector(trace, { timeout: 60_000 });
  assert.equal(await page.getAttribute('[data-testid="ts-trace-window"]', 'data-whole'), 'true');
  const first = Number(await page.getAttribute(trace, 'data-first-us'));
  const panel = async (name) => Number(await one(page, name));
  const view = async (sel) => (await page.getAttribute(sel, 'data-view')).split('_').map(Number);
  // A view is compared as numbers: Rust and JavaScript may write one double with different last digits.
  const showsView = (sel, want) => page.waitForFunction(([sel, w]) => {
    const v = document.querySelector(sel)?.dataset.view?.split('_').map(Number);
    return v && v[0] === w[0] && v[1] === w[1];
  }, [sel, want]);
  const movedFrom = (sel, was) => page.waitForFunction(([sel, w]) => {
    const v = document.querySelector(sel).dataset.view.split('_').map(Number);
    return v[0] !== w[0] || v[1] !== w[1];
  }, [sel, was]);
  /** Waits until the panel shows `want` (`[x0, x1]`, µs since the epoch), and checks its figures say so. */
  const panelShows = async (want) => {
    await showsView(trace, want);
    assert.equal(await panel('trace_window_start_us'), want[0] - first);
    assert.equal(await panel('trace_window_end_us'), want[1] - first);
  };

  // By time: both plots span the same pixels.
  await page.click('[data-testid="ts-axis"] [data-axis="time"]');
  await page.waitForSelector(`${timeline}[data-axis="time"][data-bands]`);
  const [tb, pb] = [await page.locator(timeline).boundingBox(), await page.locator(trace).boundingBox()];
  assert.deepEqual([pb.x, pb.width], [tb.x, tb.width]);
  for (const a of ['data-plot-left', 'data-plot-right']) assert.equal(await page.getAttribute(trace, a), await page.getAttribute(timeline, a));

  // Zoom the timeline: the panel shows its window.
  await page.locator(timeline).scrollIntoViewIfNeeded();
  const box = await page.locator(timeline).boundingBox();
  // Around the trace's middle, which lies near the snapshot's end.
  const attr = async (sel, a) => Number(await page.getAttribute(sel, a));
  const [tStart, tEnd, pl, pr] = [await attr(trace, 'data-start-us'), await attr(trace, 'data-end-us'), await attr(timeline, 'data-plot-left'), await attr(timeline, 'data-plot-right')];
  const mid = first + (await panel('trace_start_offset_us')) + (await panel('trace_memory_span_us')) / 2;
  await page.mouse.move(box.x + pl + (mid - tStart) / (tEnd - tStart) * (box.width - pl - pr), box.y + box.height / 2);
  for (let i = 0; i < 3; i++) await page.mouse.wheel(0, -400);
  await page.waitForSelector('[data-testid="ts-window"][data-zoomed="true"]');
  const zoomed = await view(timeline);
  await panelShows(zoomed);
  assert.ok((await panel('trace_window_points')) > 0);
  await page.mouse.move(box.x + 2, box.y + 2);
  await page.locator('[data-testid="ts-timeline"]').evaluate((e) => e.scrollIntoView({ block: 'start' }));
  await shot(page, 'torch_snapshot_trace_window');
  assert.equal(await page.getAttribute('[data-testid="ts-trace-window"]', 'data-whole'), 'false');
  // The keys: A pans the timeline earlier; the panel follows.
  await page.focus(timeline);
  await page.keyboard.press('a');
  await movedFrom(timeline, zoomed);
  const panned = await view(timeline);
  assert.ok(panned[0] < zoomed[0], `panned from ${zoomed} to ${panned}`);
  await panelShows(panned);
  // The converse: zoom the panel, the timeline follows.
  await page.locator(trace).scrollIntoViewIfNeeded();
  const tbox = await page.locator(trace).boundingBox();
  await page.mouse.move(tbox.x + tbox.width / 2, tbox.y + tbox.height / 2);
  await page.mouse.wheel(0, -400);
  await movedFrom(trace, panned);
  const closer = await view(trace);
  await showsView(timeline, closer);
  assert.ok(closer[1] - closer[0] < panned[1] - panned[0]);
  // And both stay there: neither moves the other on.
  await page.waitForTimeout(500);
  assert.deepEqual(await view(timeline), closer);
  assert.deepEqual(await view(trace), closer);

  // By event: the panel spans the times of the window's first and last events.
  await page.click('[data-testid="ts-axis"] [data-axis="event"]');
  await page.waitForSelector(`${timeline}[data-axis="event"][data-bands]`);
  await page.waitForSelector('[data-testid="ts-trace-window"][data-whole="true"]');
  await page.locator(timeline).scrollIntoViewIfNeeded();
  const ebox = await page.locator(timeline).boundingBox();
  await page.mouse.move(ebox.x + ebox.width * 0.7, ebox.y + ebox.height / 2);
  for (let i = 0; i < 4; i++) await page.mouse.wheel(0, -400);
  await page.waitForSelector('[data-testid="ts-window"][data-zoomed="true"]');
  await page.waitForFunction((sel) => document.querySelector(sel).dataset.window !== `0_${4134 - 1}`, timeline);
  const [a, b] = (await page.getAttribute(timeline, 'data-time-window')).split('_').map(Number);
  assert.ok(a < b, `events from ${a} to ${b} µs`);
  await panelShows([a, b + 1]);
  assert.equal(await page.getAttribute('[data-testid="ts-trace-window"]', 'data-axis'), 'event');
  await page.click('[data-testid="theme-toggle"]');
  await page.waitForTimeout(300);
  await page.locator('[data-testid="ts-timeline"]').evaluate((e) => e.scrollIntoView({ block: 'start' }));
  await shot(page, 'torch_snapshot_trace_window_event_dark');
  // Zooming the panel then puts the timeline on its time axis, in the panel's window.
  await page.locator(trace).scrollIntoViewIfNeeded();
  const pbox = await page.locator(trace).boundingBox();
  await page.mouse.move(pbox.x + pbox.width / 2, pbox.y + pbox.height / 2);
  await page.mouse.wheel(0, -400);
  await page.waitForSelector('[data-testid="ts-axis"] [data-axis="time"][aria-pressed="true"]');
  await page.waitForSelector(`${timeline}[data-axis="time"][data-bands]`);
  const chosen = await view(trace);
  assert.ok(chosen[1] - chosen[0] < b + 1 - a);
  await showsView(timeline, chosen);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('only the traces the snapshot\'s run recorded are offered, with its figures the CLI\'s; another run\'s is named and left out', { skip, timeout: 300_000 }, async () => {
  const other = otherRun();
  const page = await newPage(browser);
  await snapshotWith(page, [TRACE, other]);
  await page.waitForSelector('[data-testid="ts-trace-canvas"]', { timeout: 60_000 });
  const offered = await page.$$eval('[data-testid="ts-trace-picker"] [data-trace]', (els) => els.map((e) => e.dataset.trace));
  assert.deepEqual(offered, [path.basename(TRACE)]);
  const left = `[data-testid="ts-trace-excluded"][data-trace="${path.basename(other)}"]`;
  assert.match(await page.textContent(left), /recorded .* after the snapshot's events, so it is another run's/);
  // The page's figures are `torch-snapshot --trace`'s.
  const want = cli('--trace', TRACE);
  const panel = async (name) => Number(await one(page, name));
  assert.equal(await panel('trace_points'), want.points);
  assert.equal(await panel('trace_matched'), want.matched);
  assert.equal(await panel('trace_start_offset_us'), want.start_offset_us);
  assert.equal(await panel('trace_memory_span_us'), want.span_us);
  assert.equal(await panel('trace_peak_bytes'), want.peak.total_allocated);
  await page.click('[data-testid="ts-trace-excluded-list"] summary');
  await page.locator('[data-testid="ts-trace-memory"]').scrollIntoViewIfNeeded();
  await shot(page, 'torch_snapshot_trace_offered');
  assert.deepEqual(page.errors, []);
  await page.close();

  // Only another run's trace open: said plainly, with what to open instead.
  const alone = await newPage(browser);
  await snapshotWith(alone, [other]);
  await alone.waitForSelector('[data-testid="ts-trace-memory-unrelated"]', { timeout: 60_000 });
  assert.equal(await alone.$('[data-testid="ts-trace-canvas"]'), null);
  assert.equal(await alone.$$eval('[data-testid="ts-trace-memory-unrelated"] [data-testid="ts-trace-excluded"]', (els) => els.length), 1);
  assert.match(await alone.textContent('[data-testid="ts-trace-memory-unrelated"]'), /None of the open PyTorch profiler traces was recorded by this snapshot's run/);
  await alone.click('[data-testid="theme-toggle"]');
  await alone.waitForTimeout(300);
  await alone.locator('[data-testid="ts-trace-memory"]').scrollIntoViewIfNeeded();
  await shot(alone, 'torch_snapshot_trace_unrelated_dark');
  assert.deepEqual(alone.errors, []);
  await alone.close();
});

test('a damaged snapshot says why, not a blank view', { skip, timeout: 120_000 }, async () => {
  const page = await newPage(browser);
  await openApp(page, server.url);
  const bytes = readFileSync(SNAPSHOT);
  const cut = path.join(ROOT, 'tests/browser/out/cut_snapshot.pickle');
  writeFileSync(cut, bytes.subarray(0, bytes.length >> 1));
  await dropFiles(page, [cut]);
  const banner = '[data-testid="file-error"][data-file="cut_snapshot.pickle"]';
  await page.waitForSelector(banner, { timeout: 60_000 });
  assert.match(await page.textContent(`${banner} .message`), /CUDA memory snapshot/);
  assert.deepEqual(page.errors.filter((e) => /panicked/.test(e)), []);
  await page.close();
});

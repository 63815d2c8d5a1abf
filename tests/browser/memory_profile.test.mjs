// The Memory Profile tab as a user meets it: a TF trace with allocator events shows XProf's summary,
// timeline and peak breakdown (plus Tidemark's exact counts); hover, sort, filter, export, select and
// zoom work; traces without memory events explain themselves. Figures are compared with the CLI's
// `memory-profile --json` and with XProf's own output for the same file.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import {
  ROOT, serve, launch, newPage, openApp, pickFiles, waitForFile, selectFile, metric, shot, fixture,
} from './harness.mjs';

const D2 = fixture('tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz');

let server, browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

function cliMemoryProfile(file) {
  const bin = process.env.TIDEMARK_BIN || path.join(ROOT, 'target/debug/tidemark');
  return JSON.parse(execFileSync(bin, ['memory-profile', '--json', file], { maxBuffer: 256 << 20 }).toString());
}

/** Opens `file` and its Memory Profile tab; returns the milliseconds from the click to the first paint of the answer. */
async function openMemoryProfile(page, file, ready = '[data-testid="memory-summary"], [data-testid="memory-profile-empty"]') {
  const name = path.basename(file);
  await pickFiles(page, [file]);
  await waitForFile(page, name);
  await selectFile(page, name);
  const t0 = await page.evaluate(() => performance.now());
  await page.click('.tab[data-tool="memory-profile"]');
  await page.waitForSelector(ready, { timeout: 60_000 });
  return (await page.evaluate(() => performance.now())) - t0;
}

const one = async (page, name, key) => {
  const v = await metric(page, name, key);
  assert.equal(v.length, 1, `${name}${key ? `[${key}]` : ''}: ${JSON.stringify(v)}`);
  return v[0];
};

/** Client coordinates of time `ps` on the timeline, at mid height. */
async function xyAt(page, ps) {
  const c = await page.$eval('[data-testid="timeline-canvas"]', (el) => {
    const r = el.getBoundingClientRect();
    return { x: r.x, y: r.y, h: r.height, ...Object.fromEntries(Object.entries(el.dataset)) };
  });
  const [start, end, left, right] = [Number(c.startPs), Number(c.endPs), Number(c.plotLeft), Number(c.plotRight)];
  return { x: c.x + left + ((ps - start) / (end - start)) * (right - left), y: c.y + c.h / 2, start, end, left, right, cx: c.x };
}

test('d2_tf_cnn: summary, breakdown, hover, sort, filter, export, select and zoom match the CLI and XProf', async () => {
  const cli = cliMemoryProfile(D2);
  const xprof = JSON.parse(gunzipSync(readFileSync(fixture('tf/d2_tf_cnn/d2_tf_cnn.memory_profile.json.gz'))).toString());
  const id = cli.memoryIds[0];
  const ours = cli.memoryProfilePerAllocator[id];
  const theirs = xprof.memoryProfilePerAllocator[id];
  const extra = cli.tidemark.allocators[id];
  assert.deepEqual(cli.memoryIds, xprof.memoryIds);

  const page = await newPage(browser);
  await openApp(page, server.url);
  const ms = await openMemoryProfile(page, D2, '[data-testid="memory-summary"]');
  // The breakdown and the leak hints are built a frame after the summary and the timeline.
  await page.waitForSelector('[data-testid="leak-hints"]');
  console.log(`# in-browser: Memory Profile of d2_tf_cnn (request → worker analysis → reply → rendered) ${ms.toFixed(0)} ms; ` +
    `engine reply ${await one(page, 'memory_profile_reply_ms')} ms`);

  // Summary: XProf's figures, and Tidemark's exact counts beside XProf's sampled ones.
  const sum = theirs.profileSummary;
  assert.equal(await one(page, 'peak_heap_bytes'), sum.peakStats.heapAllocatedBytes);
  assert.equal(await one(page, 'peak_heap_bytes'), '116393728');
  assert.equal(await one(page, 'peak_stack_bytes'), sum.peakStats.stackReservedBytes);
  assert.equal(await one(page, 'peak_time_ps'), sum.peakStatsTimePs);
  assert.equal(await one(page, 'memory_capacity_bytes'), sum.memoryCapacity);
  assert.equal(await one(page, 'peak_bytes_usage_lifetime'), sum.peakBytesUsageLifetime);
  assert.ok(Math.abs(Number(await one(page, 'fragmentation_at_peak')) - sum.peakStats.fragmentation) < 1e-6);
  assert.deepEqual(ours.profileSummary, sum);
  // The counts appear in the summary (first) and again in the leak hints (key `window`).
  const [allocs] = await metric(page, 'allocations');
  const [deallocs] = await metric(page, 'deallocations');
  assert.equal(await one(page, 'allocations', 'window'), allocs);
  assert.equal(allocs, String(extra.counts.allocations));
  assert.equal(allocs, '13248');
  assert.equal(deallocs, '13021');
  assert.equal(await one(page, 'xprof_sampled_allocations'), String(extra.counts.sampled_allocations));
  assert.equal(await one(page, 'xprof_sampled_deallocations'), String(extra.counts.sampled_deallocations));
  assert.equal(await one(page, 'timeline_points'), String(theirs.sampledTimelineSnapshots.length));
  assert.equal(await one(page, 'snapshot_count'), String(extra.snapshot_count));

  // Breakdown: every row of XProf's, in order, with Tidemark's "freed before peak".
  const rows = ours.activeAllocations.map((a, i) => {
    const m = Number(a.specialIndex) >= 0 ? ours.specialAllocations[Number(a.specialIndex)] : ours.memoryProfileSnapshots[Number(a.snapshotIndex)].activityMetadata;
    return { op: m.tfOpName, bytes: m.allocationBytes, requested: m.requestedBytes, n: a.numOccurrences, freed: String(extra.breakdown_freed_before_peak[i]) };
  });
  assert.equal(await one(page, 'breakdown_rows'), String(theirs.activeAllocations.length));
  assert.deepEqual(await metric(page, 'row_op'), rows.map((r) => r.op));
  assert.deepEqual(await metric(page, 'row_allocation_bytes'), rows.map((r) => r.bytes));
  assert.deepEqual(await metric(page, 'row_requested_bytes'), rows.map((r) => r.requested));
  assert.deepEqual(await metric(page, 'row_occurrences'), rows.map((r) => r.n));
  assert.deepEqual(await metric(page, 'row_freed_before_peak'), rows.map((r) => r.freed));
  // XProf's own rows, as a multiset (it breaks ties between equal rows at random).
  const key = (op, b, n) => `${op}|${b}|${n}`;
  const xrows = theirs.activeAllocations.map((a) => {
    const m = Number(a.specialIndex) >= 0 ? theirs.specialAllocations[Number(a.specialIndex)] : theirs.memoryProfileSnapshots[Number(a.snapshotIndex)].activityMetadata;
    return key(m.tfOpName, m.allocationBytes, a.numOccurrences);
  }).sort();
  assert.deepEqual(rows.map((r) => key(r.op, r.bytes, r.n)).sort(), xrows);
  await shot(page, 'memory-profile-d2-light');

  // Hover at the peak: the tooltip shows the event drawn there, one of XProf's sampled points.
  const peak = Number(sum.peakStatsTimePs);
  let at = await xyAt(page, peak);
  await page.mouse.move(at.x + 0.5, at.y);
  await page.waitForSelector('[data-testid="timeline-tooltip"]');
  const hoverTime = await one(page, 'hover_time_ps');
  const point = theirs.sampledTimelineSnapshots.find((s) => s.timeOffsetPs === hoverTime);
  assert.ok(point, `hovered time ${hoverTime} is a sampled point`);
  assert.ok(Math.abs(Number(hoverTime) - peak) <= (at.end - at.start) / (at.right - at.left) * 2, `${hoverTime} is at the peak ${peak}`);
  assert.equal(await one(page, 'hover_op'), point.activityMetadata.tfOpName);
  assert.equal(await one(page, 'hover_allocation_bytes'), point.activityMetadata.allocationBytes);
  assert.equal(await one(page, 'hover_shape'), point.activityMetadata.tensorShape);
  assert.equal(await one(page, 'hover_region'), point.activityMetadata.regionType);
  assert.equal(await one(page, 'hover_heap_bytes'), point.aggregationStats.heapAllocatedBytes);
  assert.ok(/^\d+$/.test(await one(page, 'hover_step')));
  await shot(page, 'memory-profile-d2-hover');

  // Sort by occurrences (largest first, then smallest first), then back.
  await page.click('th[data-sort="occurrences"] button');
  let occ = (await metric(page, 'row_occurrences')).map(Number);
  assert.deepEqual(occ, [...occ].sort((a, b) => b - a));
  assert.equal(await page.getAttribute('th[data-sort="occurrences"]', 'aria-sort'), 'descending');
  await page.click('th[data-sort="occurrences"] button');
  occ = (await metric(page, 'row_occurrences')).map(Number);
  assert.deepEqual(occ, [...occ].sort((a, b) => a - b));
  await page.click('th[data-sort="op"] button');
  const ops = await metric(page, 'row_op');
  assert.deepEqual(ops, [...ops].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));

  // Filter by text; hide small rows as XProf does.
  await page.fill('[data-testid="breakdown-filter"]', 'conv2dbackprop');
  const filtered = await metric(page, 'row_op');
  assert.equal(filtered.length, rows.filter((r) => r.op.toLowerCase().includes('conv2dbackprop')).length);
  assert.ok(filtered.length >= 2 && filtered.every((o) => o.includes('Conv2DBackprop')), filtered.join());
  assert.equal(await one(page, 'breakdown_rows_shown'), String(filtered.length));
  await page.fill('[data-testid="breakdown-filter"]', '');
  await page.check('[data-testid="hide-small"]');
  const big = rows.filter((r) => Number(r.requested) >= 0.001 * 2 ** 30);
  assert.equal((await metric(page, 'row_op')).length, big.length);
  assert.ok(big.length < rows.length);

  // CSV export of the rows shown.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-csv"]')]);
  assert.match(download.suggestedFilename(), /\.csv$/);
  const csv = readFileSync(await download.path()).toString().trim().split('\n');
  // Where the page names the peak's allocations (engine's allocation names), their column follows the op.
  const named = (await page.$('[data-metric="row_name"]')) !== null;
  assert.equal(csv[0], `op_name,${named ? 'allocated_by,' : ''}allocation_bytes,requested_bytes,occurrences,freed_before_peak,region_type,data_type,shape`);
  assert.equal(csv.length - 1, big.length);
  assert.ok(csv.slice(1).some((l) => l.startsWith(`${rows[0].op},`) && l.includes(`,${rows[0].bytes},${rows[0].requested},`)), csv[1]);
  await page.uncheck('[data-testid="hide-small"]');

  // Selecting a row draws its allocation's lifetime.
  const firstOpRow = await page.$(`tr:has([data-metric="row_op"][data-value="${rows[0].op}"])`);
  assert.ok(firstOpRow);
  await firstOpRow.click();
  assert.ok(await firstOpRow.evaluate((tr) => tr.classList.contains('selected')));
  await page.waitForSelector('.legend .sw.life');
  await page.$eval('[data-testid="timeline-canvas"]', (el) => el.scrollIntoView({ block: 'center' }));
  await shot(page, 'memory-profile-d2-selected-row');

  // Drag-zoom around the peak: the chart switches to the full-resolution timeline of that range.
  at = await xyAt(page, peak);
  const span = (at.right - at.left) * 0.01;
  await page.mouse.move(at.x - span, at.y);
  await page.mouse.down();
  await page.mouse.move(at.x, at.y, { steps: 3 });
  await page.mouse.move(at.x + span, at.y, { steps: 3 });
  await page.mouse.up();
  await page.waitForSelector('[data-testid="timeline-status"][data-zoomed="true"]');
  const windowEvents = Number(await one(page, 'timeline_window_events'));
  assert.ok(windowEvents > 0, `${windowEvents}`);
  const z = await xyAt(page, peak);
  assert.ok(z.start > at.start && z.end < at.end && z.start <= peak && peak <= z.end, JSON.stringify(z));
  await page.mouse.move(z.x + 1, z.y);
  await page.waitForSelector('[data-testid="timeline-tooltip"]');
  const zt = Number(await one(page, 'hover_time_ps'));
  assert.ok(zt >= z.start && zt <= z.end, `${zt} in [${z.start}, ${z.end}]`);
  await shot(page, 'memory-profile-d2-zoomed');

  // Keyboard: W zooms in, A pans left; double-click resets; the wheel zooms too.
  await page.focus('[data-testid="timeline-canvas"]');
  await page.keyboard.press('w');
  const w = await xyAt(page, peak);
  assert.ok(w.end - w.start < z.end - z.start);
  await page.keyboard.press('a');
  const a = await xyAt(page, peak);
  assert.ok(a.start < w.start);
  await page.dblclick('[data-testid="timeline-canvas"]', { position: { x: a.left + 50, y: 100 } });
  await page.waitForSelector('[data-testid="timeline-status"][data-zoomed="false"]');
  at = await xyAt(page, peak);
  await page.mouse.move(at.x, at.y);
  await page.mouse.wheel(0, -400);
  await page.waitForSelector('[data-testid="timeline-status"][data-zoomed="true"]');
  await page.click('[data-testid="zoom-reset"]');
  await page.waitForSelector('[data-testid="timeline-status"][data-zoomed="false"]');

  // Units follow the page's toggle; the exact value stays in data-value.
  await page.selectOption('[data-testid="unit-select"]', 'B');
  assert.equal((await page.textContent('[data-metric="peak_heap_bytes"]')).trim(), '116,393,728 B');
  await page.selectOption('[data-testid="unit-select"]', 'MiB');
  assert.equal((await page.textContent('[data-metric="peak_heap_bytes"]')).trim(), '111.00 MiB');
  await page.selectOption('[data-testid="unit-select"]', 'auto');

  // Leak hints: the window's totals and what is still live at the end, grouped by op.
  const hints = extra.leak_hints;
  assert.equal(await one(page, 'window_allocated_bytes'), String(hints.allocated_bytes));
  assert.equal(await one(page, 'live_at_end_bytes'), String(hints.live_at_end_bytes));
  assert.equal(await one(page, 'live_at_end_groups'), String(hints.live_at_end.length));
  assert.equal(await one(page, 'live_at_end_op_bytes', hints.live_at_end[0].tf_op_name), String(hints.live_at_end[0].allocation_bytes));
  assert.ok(await page.$(hints.heap_grows_every_step ? '[data-testid="heap-grows"]' : '[data-testid="heap-steady"]'));

  // Dark theme, the same view.
  await page.click('[data-testid="theme-toggle"]');
  await page.mouse.move(at.x + 0.5, at.y);
  await page.waitForSelector('[data-testid="timeline-tooltip"]');
  await shot(page, 'memory-profile-d2-dark');
  await page.$eval('[data-testid="leak-hints"]', (el) => el.scrollIntoView());
  await shot(page, 'memory-profile-d2-dark-leaks');
  assert.deepEqual(page.errors, []);
});

test('traces without allocator events, or with zero byte counts, say so and what to use instead', async () => {
  const page = await newPage(browser, { colorScheme: 'dark' });
  await openApp(page, server.url);
  for (const [rel, reason] of [
    ['tf/d1_tf_keras_none/d1_tf_keras_none.xplane.pb.gz', 'no_events'],
    ['jax/a1_docs_seed/a1_docs_seed.xplane.pb.gz', 'no_events'],
    ['tf/d1_tf_keras_stats/d1_tf_keras_stats.xplane.pb.gz', 'zero_bytes'],
    ['hlo/module_0014.jit__normal.cpu_after_optimizations.hlo.pb', 'not_a_trace'],
  ]) {
    const file = fixture(rel);
    await openMemoryProfile(page, file, '[data-testid="memory-profile-empty"]');
    const el = await page.$('[data-testid="memory-profile-empty"]');
    assert.equal(await el.getAttribute('data-reason'), reason, rel);
    const text = await el.textContent();
    assert.equal(await page.$('[data-testid="timeline-canvas"]'), null, `${rel}: no empty axes`);
    if (reason === 'no_events') {
      assert.match(text, /no allocator events/);
      assert.match(text, /Memory Viewer/);
      assert.match(text, /TF_CPU_ALLOCATOR_USE_BFC=true/);
    } else if (reason === 'zero_bytes') {
      assert.match(text, /every byte count in them is zero/);
      assert.match(text, /TF_CPU_ALLOCATOR_USE_BFC=true/);
      const cli = cliMemoryProfile(file).tidemark.allocators.cpu.counts;
      assert.equal(await one(page, 'allocations'), String(cli.allocations));
      assert.equal(await one(page, 'deallocations'), String(cli.deallocations));
    } else {
      assert.match(text, /Memory Viewer tab/);
    }
    await shot(page, `memory-profile-empty-${path.basename(rel).split('.')[0]}`);
    await page.click('.tab[data-tool="file-details"]');
  }
  assert.deepEqual(page.errors, []);
});

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

function cliJson(file) {
  const bin = process.env.TIDEMARK_BIN || path.join(ROOT, 'target/debug/tidemark');
  return JSON.parse(execFileSync(bin, ['memory-profile', '--json', file], { maxBuffer: 256 << 20 }).toString());
}
const cliNames = (file) => cliJson(file).tidemark.allocation_names;

async function openMemoryProfile(page) {
  await openApp(page, server.url);
  await pickFiles(page, [TRACE]);
  const file = path.basename(TRACE);
  await waitForFile(page, file);
  await selectFile(page, file);
  await page.click('.tab[data-tool="memory-profile"]');
  await page.waitForSelector('[data-testid="named-peak"] table.mp-named-table tbody tr', { timeout: 90_000 });
  assert.equal(await page.inputValue('[data-testid="memory-id-select"]'), 'GPU_0_bfc');
}

// Each bar part's share (`<prefix>_fraction`, keyed as its bytes) is its bytes over `total`, and the
// bar draws one part per share.
async function sharesOf(page, prefix, parts, total) {
  assert.equal((await metric(page, `${prefix}_fraction`)).length, (await metric(page, `${prefix}_bytes`)).length, prefix);
  for (const [key, bytes] of parts) {
    const share = Number(await one(page, `${prefix}_fraction`, key));
    assert.ok(Math.abs(share - bytes / total) < 1e-12, `${prefix} ${key}: ${share} vs ${bytes} / ${total}`);
  }
}

test('NVIDIA H200 CNN: the peak named by module and buffer, as the command line names it, linked to the Memory Viewer', { skip, timeout: 300_000 }, async () => {
  const names = cliNames(TRACE).allocators.GPU_0_bfc;
  const peak = names.peak;
  const page = await newPage(browser);
  await openMemoryProfile(page);

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
  // Each part's share of the peak is a figure of its own, the engine's, beside its bytes.
  await sharesOf(page, 'peak_kind', peak.by_kind, peak.peak_bytes);
  await sharesOf(page, 'peak_module', peak.by_module, peak.peak_bytes);

  // "Preallocated but unused": the CNN preallocates, and the allocator's fragmentation figure bounds
  // its pool to the whole limit, so the unused pool at the peak is known: a figure beside the by-kind
  // bar (not a part of it: the bar is the bytes in use), with its bounds and the note, as the command
  // line gives them.
  const pool = peak.pool;
  assert.equal(pool.known, true);
  assert.equal(pool.unused_at_most_bytes, pool.limit_bytes - pool.in_use_bytes);
  assert.equal(pool.in_use_bytes, peak.peak_bytes);
  assert.equal(Number(await one(page, 'pool_unused_bytes')), pool.unused_at_most_bytes);
  assert.equal(Number(await one(page, 'pool_unused_at_least_bytes')), pool.unused_at_least_bytes);
  assert.equal(Number(await one(page, 'pool_unused_at_most_bytes')), pool.unused_at_most_bytes);
  assert.equal(Number(await one(page, 'pool_limit_bytes')), pool.limit_bytes);
  assert.equal(Number(await one(page, 'pool_in_use_bytes')), pool.in_use_bytes);
  assert.equal(await one(page, 'pool_note'), pool.note);
  assert.match(pool.note, /the pool is the whole limit/);
  assert.match(await page.textContent('[data-testid="named-by-kind"] [data-testid="named-pool-kind"]'), /^preallocated but unused \d/);
  assert.equal(await page.$$eval('[data-testid="named-by-kind"] .mp-bar .mp-part', (e) => e.length), (await metric(page, 'peak_kind_bytes')).length);
  // Labels name the parameter an output holds only where the HLO says so; none of the train step's:
  // each of its outputs is a new value, named with the parameters of its shape.
  assert.ok(rows.every((r) => !r.name.holds || r.name.label.includes(r.name.holds.variable ?? `parameter ${r.name.holds.parameter_number}`)));
  assert.ok(rows.every((r) => !r.name.new_value_shaped_as || r.name.label.includes(', a new value ')));

  // XProf's table keeps its "(no op)" and gets each row's name beside it.
  const rowNames = await metric(page, 'row_name');
  assert.deepEqual(rowNames, names.breakdown_names);
  const ops = await metric(page, 'row_op');
  assert.ok(ops.every((op, k) => names.breakdown_names[k] === '' || op === ''), 'JAX sets no op; only XProf\'s computed rows have one');
  await page.$eval('[data-testid="named-peak"]', (e) => e.scrollIntoView());
  await shot(page, 'allocation-names-n2-peak');

  // Selecting one of XProf's rows draws its allocation's lifetime on the timeline, named there.
  const selectable = await page.$$('[data-testid="breakdown"] tbody tr.selectable');
  assert.ok(selectable.length > 0);
  const picked = await selectable[0].$eval('[data-metric="row_name"]', (e) => e.dataset.value);
  assert.ok(picked, 'the row is named');
  await selectable[0].click();
  await page.waitForSelector('[data-testid="lifetime-name"]', { timeout: 30_000 });
  assert.equal(await one(page, 'lifetime_name'), picked);
  await page.$eval('[data-testid="timeline-canvas"]', (el) => el.scrollIntoView({ block: 'center' }));
  await shot(page, 'allocation-names-n2-lifetime');
  // The same in the dark theme.
  await page.click('[data-testid="theme-toggle"]');
  assert.equal(await page.getAttribute('html', 'data-theme'), 'dark');
  await page.$eval('[data-testid="named-peak"]', (e) => e.scrollIntoView());
  await shot(page, 'allocation-names-n2-peak-dark');
  await page.click('[data-testid="theme-toggle"]');

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

// Where the trace cannot tell (the MLP, recorded with XLA_PYTHON_CLIENT_PREALLOCATE=false: the
// allocator's figures bound its pool only far below the limit), the by-kind legend says so plainly,
// with the bounds and what to record, as the command line says it.
const MLP = path.resolve(ROOT, '../shared/fixtures/device/nvidia_h200_jax/n1_mlp_adam/n1_mlp_adam.xplane.pb.gz');
test('NVIDIA H200 MLP: preallocated but unused, which the trace cannot tell, said with what to record', { skip, timeout: 300_000 }, async () => {
  const pool = cliNames(MLP).allocators.GPU_0_bfc.peak.pool;
  assert.equal(pool.known, false);
  const page = await newPage(browser);
  await openApp(page, server.url);
  await pickFiles(page, [MLP]);
  await waitForFile(page, path.basename(MLP));
  await selectFile(page, path.basename(MLP));
  await page.click('.tab[data-tool="memory-profile"]');
  await page.waitForSelector('[data-testid="named-pool-kind"]', { timeout: 90_000 });
  assert.equal(await page.textContent('[data-testid="named-pool-kind"]'), 'preallocated but unused: the trace cannot tell');
  assert.equal(await one(page, 'pool_unused_bytes'), '');
  assert.equal(Number(await one(page, 'pool_unused_at_least_bytes')), pool.unused_at_least_bytes);
  assert.equal(Number(await one(page, 'pool_unused_at_most_bytes')), pool.unused_at_most_bytes);
  const note = await one(page, 'pool_note');
  assert.equal(note, pool.note);
  assert.match(note, /^The trace cannot tell how much is preallocated but unused.*memory_stats\(\)\['pool_bytes'\].*XLA_PYTHON_CLIENT_PREALLOCATE, XLA_PYTHON_CLIENT_MEM_FRACTION/);
  await page.$eval('[data-testid="named-peak"]', (e) => e.scrollIntoView());
  await shot(page, 'allocation-names-n1-pool');
  assert.deepEqual(page.errors, []);
});

// The same names beyond the peak: the leak hints' suspects, each step's heap floor by module and kind
// (what stays allocated between steps), and the timeline's hover naming the allocation under the
// cursor, each figure equal to the command line's.
test('NVIDIA H200 CNN: leak suspects, heap floor by module and the hovered allocation named', { skip, timeout: 300_000 }, async () => {
  const json = cliJson(TRACE);
  const names = json.tidemark.allocation_names.allocators.GPU_0_bfc;
  const hints = json.tidemark.allocators.GPU_0_bfc.leak_hints;
  const page = await newPage(browser);
  await openMemoryProfile(page);
  await page.waitForSelector('[data-testid="live-at-end-named"] tbody tr', { timeout: 60_000 });

  // Leak suspects: every allocation still live at the end, by name; they add up to the leak hints.
  const end = names.live_at_end;
  assert.equal(end.rows.reduce((s, r) => s + r.allocation_bytes, 0), hints.live_at_end_bytes);
  assert.equal(Number(await one(page, 'live_at_end_bytes')), hints.live_at_end_bytes);
  for (const [k, r] of end.rows.entries()) {
    const key = String(k);
    assert.equal(await one(page, 'live_at_end_name', key), r.name.label, key);
    assert.equal(Number(await one(page, 'live_at_end_named_allocations', key)), r.allocations, key);
    assert.equal(Number(await one(page, 'live_at_end_named_bytes', key)), r.allocation_bytes, key);
  }
  for (const [module, bytes] of end.by_module) assert.equal(Number(await one(page, 'live_at_end_module_bytes', module)), bytes, module);
  await sharesOf(page, 'live_at_end_module', end.by_module, hints.live_at_end_bytes);
  await page.$eval('[data-testid="leak-hints"]', (e) => e.scrollIntoView());
  await shot(page, 'allocation-names-n2-leak-suspects');

  // The heap floor: one row per step, its bytes by module and kind; the last step's as bars.
  const floors = names.floors;
  assert.equal(floors.length, hints.step_floors.length);
  assert.deepEqual(await metric(page, 'floor_step'), floors.map((f) => String(f.step_id)));
  for (const [k, f] of floors.entries()) {
    const step = String(f.step_id);
    assert.equal(f.in_use_bytes, hints.step_floors[k].min_in_use_bytes, step);
    assert.equal(Number(await one(page, 'floor_bytes', step)), f.in_use_bytes, step);
    assert.equal(f.rows.reduce((s, r) => s + r.allocation_bytes, 0) + f.before_trace_bytes + f.stack_bytes, f.in_use_bytes, step);
    for (const [module, bytes] of f.by_module) assert.equal(Number(await one(page, 'floor_module_bytes', `${step}:${module}`)), bytes, step);
    for (const [kind, bytes] of f.by_kind) assert.equal(Number(await one(page, 'floor_kind_bytes', `${step}:${kind}`)), bytes, step);
  }
  // Each row's "Held by module" has every module and its bytes in its tooltip.
  const floorTitles = await page.$$eval('[data-testid="floor-modules"]', (els) => els.map((e) => e.getAttribute('title')));
  assert.equal(floorTitles.length, floors.length);
  for (const [k, f] of floors.entries()) {
    for (const [module] of f.by_module) assert.ok(floorTitles[k].includes(module || 'no module'), `${floorTitles[k]} has ${module}`);
  }
  const last = floors[floors.length - 1];
  assert.equal(await one(page, 'floor_last_step'), String(last.step_id));
  assert.equal(Number(await one(page, 'floor_last_bytes')), last.in_use_bytes);
  for (const [module, bytes] of last.by_module) assert.equal(Number(await one(page, 'floor_last_module_bytes', module)), bytes, module);
  for (const [kind, bytes] of last.by_kind) assert.equal(Number(await one(page, 'floor_last_kind_bytes', kind)), bytes, kind);
  await sharesOf(page, 'floor_last_kind', last.by_kind, last.in_use_bytes);
  await sharesOf(page, 'floor_last_module', last.by_module, last.in_use_bytes);
  await page.$eval('[data-testid="heap-floor"]', (e) => e.scrollIntoView());
  await shot(page, 'allocation-names-n2-heap-floor');

  // Hover at the peak: the tooltip names the allocation drawn there, one of those live at the peak.
  const peakPs = Number(json.memoryProfilePerAllocator.GPU_0_bfc.profileSummary.peakStatsTimePs);
  await page.$eval('[data-testid="timeline-canvas"]', (e) => e.scrollIntoView());
  const c = await page.$eval('[data-testid="timeline-canvas"]', (el) => {
    const r = el.getBoundingClientRect();
    return { x: r.x, y: r.y, h: r.height, ...Object.fromEntries(Object.entries(el.dataset)) };
  });
  const [start, endPs, left, right] = [Number(c.startPs), Number(c.endPs), Number(c.plotLeft), Number(c.plotRight)];
  await page.mouse.move(c.x + left + ((peakPs - start) / (endPs - start)) * (right - left) + 0.5, c.y + c.h / 2);
  await page.waitForSelector('[data-testid="hover-name"]', { timeout: 30_000 });
  const hovered = await one(page, 'hover_name');
  const labels = new Set(names.peak.rows.map((r) => r.name.label));
  if ((await one(page, 'hover_activity')) === 'allocation') assert.ok(labels.has(hovered), `${hovered} is live at the peak`);
  await shot(page, 'allocation-names-n2-hover');

  // Memory across hosts: each allocator's peak named by its largest modules, as the command line does.
  const bin = process.env.TIDEMARK_BIN || path.join(ROOT, 'target/debug/tidemark');
  const across = JSON.parse(execFileSync(bin, ['memory-across-hosts', TRACE, '--json'], { maxBuffer: 64 << 20 }).toString());
  await page.click('.tab[data-tool="memory-across-hosts"]');
  await page.waitForSelector('[data-testid="memory-across-hosts"][data-state="ready"]', { timeout: 90_000 });
  const gpu = across.allocators.find((a) => a.memory_id === 'GPU_0_bfc');
  assert.deepEqual(gpu.peak_by_module, names.peak.by_module);
  for (const a of across.allocators) {
    const shown = a.peak_by_module.slice(0, 3);
    for (const [module, bytes] of shown) {
      assert.equal(Number(await one(page, 'host_peak_module_bytes', `${a.host}|${a.memory_id}|${module}`)), bytes, `${a.memory_id} ${module}`);
    }
  }
  // In a narrow cell the module line stays one line, ellipsized, every module in its tooltip.
  await page.setViewportSize({ width: 820, height: 900 });
  const lines = await page.$$eval('[data-testid="hostmem-peak-modules"]', (els) => els.map((e) => {
    const css = getComputedStyle(e);
    return { title: e.getAttribute('title'), oneLine: e.clientHeight < 2 * parseFloat(css.fontSize), ellipsis: css.textOverflow, cut: e.scrollWidth > e.clientWidth };
  }));
  assert.ok(lines.length > 0);
  for (const l of lines) {
    assert.ok(l.oneLine, 'one line');
    assert.equal(l.ellipsis, 'ellipsis');
  }
  for (const a of across.allocators.filter((a) => a.peak_by_module.length > 0)) {
    const title = await page.getAttribute(`tr[data-memory-id="${a.memory_id}"] [data-testid="hostmem-peak-modules"]`, 'title');
    for (const [module] of a.peak_by_module) assert.ok(title.includes(module || 'no module'), `${title} has ${module}`);
  }
  await shot(page, 'allocation-names-n2-across-hosts');
  assert.deepEqual(page.errors, []);
});

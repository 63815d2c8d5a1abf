// The PyTorch Profiler's four views of a Kineto trace as a PyTorch user meets them: pick the H200
// ResNet trace, land on its Overview, step through Operators, Kernels and Memory by the navigation,
// and read every figure through data-metric against the plugin's own payloads (the fixture's
// oracle/, torch-tb-profiler's corrected output), numbers to 1e-6 relative. The view lives in the URL.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import { serve, launch, newPage, openApp, pickFiles, waitForFile, metric, one, shot, DEVICE, deviceSkip } from './harness.mjs';

const RUN = path.join(DEVICE, 'nvidia_h200_pytorch/p2_torch_resnet');
const TB = path.join(RUN, 'tb');
const TRACE = existsSync(TB) ? readdirSync(TB).filter((f) => f.endsWith('.pt.trace.json.gz')).map((f) => path.join(TB, f))[0] : path.join(TB, 'absent.pt.trace.json.gz');
const NAME = path.basename(TRACE);
const skip = deviceSkip(TRACE);
const oracle = (name) => JSON.parse(readFileSync(path.join(RUN, 'oracle', `${name}.json`), 'utf8'));

const near = (got, want, what) => {
  const g = Number(got);
  assert.ok(Math.abs(g - want) <= 1e-6 * Math.max(1, Math.abs(want)), `${what}: page ${got}, plugin ${want}`);
};

let server, browser;
before(async () => { if (!skip) { server = await serve(); browser = await launch(); } });
after(async () => { await browser?.close(); server?.close(); });

async function ready(page, testid) {
  await page.waitForSelector(`[data-testid="${testid}"][data-state="ready"]`, { timeout: 120_000 });
}

async function open(page) {
  await openApp(page, server.url);
  await pickFiles(page, [TRACE]);
  await waitForFile(page, NAME);
  await ready(page, 'torch-overview');
}

async function tab(page, slug, testid) {
  await page.click(`.tab[data-tool="${slug}"]`);
  await ready(page, testid);
  await page.waitForFunction((s) => location.hash.includes(`tool=${s}`), slug);
}

/** The keys of the rows of table `testid` in the DOM (the table keeps the rows on screen). */
const shownKeys = (page, testid, metricName) => page.$$eval(`[data-testid="${testid}"] [data-metric="${metricName}"]`, (els) => els.map((e) => e.dataset.key));

test('a Kineto trace lands on the PyTorch Overview: step time by category, GPU summary, recommendations', { skip }, async () => {
  const page = await newPage(browser);
  await open(page);
  // The navigation holds the PyTorch Profiler's views (the Ranks of the trace's run with its steps),
  // the Trace Viewer and File details alone.
  const tools = await page.$$eval('.tool-nav .tab', (els) => els.map((e) => e.dataset.tool));
  assert.deepEqual(tools, ['torch-overview', 'torch-ranks', 'torch-operators', 'torch-kernels', 'run-comparison', 'trace-viewer', 'torch-memory', 'file-details']);
  assert.match(page.url(), /tool=torch-overview/);

  const o = oracle('overview');
  const perf = o.performance[0];
  near(await one(page, 'average_step_time_us'), perf.value, 'average step');
  const ids = { Kernel: 'kernel', Memcpy: 'memcpy', Memset: 'memset', Communication: 'communication', Runtime: 'runtime', DataLoader: 'dataloader', 'CPU Exec': 'cpu_exec', Other: 'other' };
  for (const c of perf.children) {
    near(await one(page, 'average_time_us', ids[c.name]), c.value, `average ${c.name}`);
    near(await one(page, 'average_percent', ids[c.name]), c.extra, `share ${c.name}`);
  }
  // Each step's time per category, as the plugin's step table has it.
  const cols = o.steps.columns.map((c) => c.name);
  assert.equal(Number(await one(page, 'step_count')), o.steps.rows.length);
  for (const row of o.steps.rows) {
    let total = 0;
    cols.forEach((name, i) => {
      if (i === 0 || !ids[name]) return;
      total += row[i];
    });
    for (const [i, name] of cols.entries()) {
      if (i === 0 || !ids[name]) continue;
      near(await one(page, 'step_time_us', `${row[0]}|${ids[name]}`), row[i], `step ${row[0]} ${name}`);
    }
    near(await one(page, 'step_total_us', row[0]), total, `step ${row[0]} total`);
  }
  // The stacked bars carry each step's figures too (ms).
  const kernelMs = await metric(page, 'chart_kernel_ms');
  assert.equal(kernelMs.length, o.steps.rows.length);
  near(kernelMs[0], o.steps.rows[0][cols.indexOf('Kernel')] / 1000, 'chart kernel ms');

  // GPU summary: every percentage and text the plugin lists.
  const metrics = { 'GPU Utilization': 'gpu_utilization_pct', 'Est. SM Efficiency': 'sm_efficiency_pct', 'Est. Achieved Occupancy': 'achieved_occupancy_pct', 'Kernel Time using Tensor Cores': 'tensor_core_kernel_time_pct', Name: 'gpu_name', 'Compute Capability': 'gpu_compute_capability', Memory: 'gpu_memory' };
  let gpu = null;
  let percents = 0;
  for (const d of o.gpu_metrics.data) {
    const m = /^GPU (\d+):$/.exec(d.title);
    if (m) { gpu = m[1]; continue; }
    if (!metrics[d.title]) continue;
    const got = await one(page, metrics[d.title], gpu);
    if (String(d.value).endsWith(' %')) {
      near(Number(got) * 100, Number(d.value.slice(0, -2)), d.title);
      percents++;
    } else {
      assert.equal(got, d.value, d.title);
    }
  }
  assert.ok(percents >= 3, 'utilisation, SM efficiency and occupancy at least');
  const recs = (o.recommendations.match(/<li>/g) || []).length - (o.recommendations.includes('<li>N/A</li>') ? 1 : 0);
  assert.equal(Number(await one(page, 'recommendation_count')), recs);

  // Hovering a bar names the step and its categories.
  const chart = page.locator('[data-testid="torch-step-chart"] canvas');
  const box = await chart.boundingBox();
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.6);
  await page.waitForSelector('[data-testid="torch-step-chart-tip"]');
  assert.ok((await metric(page, 'hover_total')).length === 1);
  await shot(page, 'torch_overview');
  assert.deepEqual(page.errors, []);
});

test('Operators and Kernels: the plugin\'s tables and charts, row by row', { skip }, async () => {
  const page = await newPage(browser);
  await open(page);
  await tab(page, 'torch-operators', 'torch-operators');
  const ops = oracle('operation_table').data;
  assert.equal(Number(await one(page, 'operator_count')), ops.length);
  assert.equal(Number(await one(page, 'operator_calls')), ops.reduce((s, r) => s + r.calls, 0));
  const byName = new Map(ops.map((r) => [r.name, r]));
  const check = async (name) => {
    const r = byName.get(name);
    assert.equal(await one(page, 'calls', name), String(r.calls), name);
    for (const [m, f] of [['device_self_duration_us', 'device_self_duration'], ['device_total_duration_us', 'device_total_duration'], ['host_self_duration_us', 'host_self_duration'], ['host_total_duration_us', 'host_total_duration'], ['tc_self_ratio', 'tc_self_ratio'], ['tc_total_ratio', 'tc_total_ratio']]) {
      near(await one(page, m, name), r[f], `${name} ${m}`);
    }
    assert.equal(await one(page, 'tc_eligible', name), String(r.tc_eligible === 'Yes'), `${name} tc_eligible`);
  };
  const shown = await shownKeys(page, 'torch-operator-table', 'calls');
  assert.ok(shown.length >= 10, `rows shown: ${shown.length}`);
  // In the plugin's order: device self time, longest first.
  assert.deepEqual(shown, ops.slice(0, shown.length).map((r) => r.name));
  for (const name of shown) await check(name);
  // A row far down the table, found through the filter.
  const last = ops[ops.length - 1].name;
  await page.fill('[data-testid="torch-operator-filter"]', last);
  await page.waitForFunction((n) => [...document.querySelectorAll('[data-testid="torch-operator-table"] [data-metric="calls"]')].some((e) => e.dataset.key === n), last);
  await check(last);
  await page.fill('[data-testid="torch-operator-filter"]', '');
  // The top-operators pie: the plugin's device self time pie, its largest slices in the legend.
  const pie = oracle('operation').device_self_time.rows;
  const total = pie.reduce((s, r) => s + r[1], 0);
  for (const [name, value] of pie.slice(0, 8)) {
    near(await one(page, 'top_op_us', name), value, `pie ${name}`);
    near(await one(page, 'top_op_fraction', name), value / total, `pie share ${name}`);
  }
  await page.click('[data-chart="host_total_time"]');
  const host = oracle('operation').host_total_time.rows;
  await page.waitForFunction((n) => [...document.querySelectorAll('[data-metric="top_op_us"]')].some((e) => e.dataset.key === n), host[0][0]);
  near(await one(page, 'top_op_us', host[0][0]), host[0][1], 'host total pie');
  await page.click('[data-chart="device_self_time"]');
  await shot(page, 'torch_operators');

  await tab(page, 'torch-kernels', 'torch-kernels');
  const tc = oracle('kernel_tc_pie').total.rows;
  near(await one(page, 'tensor_core_fraction'), tc.find((r) => r[0] === 'Using Tensor Cores')[1], 'TC fraction');
  const kt = oracle('kernel_table').data;
  const kcol = (name) => kt.columns.findIndex((c) => c.name === name);
  assert.equal(Number(await one(page, 'kernel_count')), kt.rows.length);
  const kshown = await shownKeys(page, 'torch-kernel-table', 'calls');
  assert.ok(kshown.length >= 10, `kernels shown: ${kshown.length}`);
  assert.deepEqual(kshown, kt.rows.slice(0, kshown.length).map((r) => r[0]));
  const kmetrics = [['calls', 'Calls'], ['total_duration_us', 'Total Duration (us)'], ['mean_duration_us', 'Mean Duration (us)'], ['max_duration_us', 'Max Duration (us)'], ['min_duration_us', 'Min Duration (us)'], ['blocks_per_sm', 'Mean Blocks Per SM'], ['occupancy_pct', 'Mean Est. Achieved Occupancy (%)']];
  for (const row of kt.rows.slice(0, kshown.length)) {
    for (const [m, c] of kmetrics) near(await one(page, m, row[0]), row[kcol(c)], `${row[0]} ${m}`);
    assert.equal(await one(page, 'tc_used', row[0]), String(row[kcol('Tensor Cores Used')] === 'Yes'));
  }
  // The pie of kernel time by kernel: the plugin's unrounded sums.
  const kp = oracle('kernel').total.rows;
  for (const [name, value] of kp.slice(0, 3)) near(await one(page, 'kernel_time_us', name), value, `kernel pie ${name}`);

  // Grouped by kernel and operator: rows by rank.
  await page.click('[data-grouping="kernel_op"]');
  await page.waitForSelector('[data-testid="torch-kernel-op-table"]');
  const ko = oracle('kernel_op_table').data;
  const ocol = (name) => ko.columns.findIndex((c) => c.name === name);
  const oshown = await shownKeys(page, 'torch-kernel-op-table', 'calls');
  assert.ok(oshown.length >= 10);
  for (const key of oshown) {
    const row = ko.rows[Number(key) - 1];
    assert.equal(await one(page, 'name', key), row[0]);
    assert.equal(await one(page, 'operator', key), row[ocol('Operator')]);
    assert.equal(await one(page, 'grid', key), row[ocol('Grid')]);
    assert.equal(await one(page, 'block', key), row[ocol('Block')]);
    near(await one(page, 'registers_per_thread', key), Number(row[ocol('Register Per Thread')]), 'registers');
    near(await one(page, 'shared_memory_bytes', key), Number(row[ocol('Shared Memory')]), 'shared memory');
    for (const [m, c] of kmetrics) near(await one(page, m, key), row[ocol(c)], `${key} ${m}`);
    assert.equal(await one(page, 'op_tc_eligible', key), String(row[ocol('Op is Tensor Cores eligible')] === 'Yes'));
  }
  await shot(page, 'torch_kernels');
  // The number keys follow the navigation shown: 1 is the PyTorch Overview.
  await page.evaluate(() => document.activeElement?.blur());
  await page.keyboard.press('1');
  await ready(page, 'torch-overview');
  await page.keyboard.press(']');
  await ready(page, 'torch-ranks');
  // One trace is a run of one rank: the Ranks view says so, and the next key reaches the Operators.
  await page.waitForSelector('[data-testid="tr-one-rank"]');
  await page.keyboard.press(']');
  await ready(page, 'torch-operators');
  assert.deepEqual(page.errors, []);
});

test('Operators by name and input shape: the plugin\'s OperationAndInputShape table, in the URL', { skip }, async () => {
  const page = await newPage(browser, { colorScheme: 'dark' });
  await open(page);
  await tab(page, 'torch-operators', 'torch-operators');
  await page.click('[data-grouping="input_shape"]');
  await page.waitForFunction(() => location.hash.includes('group=input-shape'));
  await page.waitForSelector('[data-testid="torch-operator-table"] [data-metric="input_shape"]', { timeout: 120_000 });
  await ready(page, 'torch-operators');
  // The plugin's payload for this grouping, kept in the repository beside the recording.
  const ops = JSON.parse(readFileSync(path.join(import.meta.dirname, '../fixtures/device/nvidia_h200_pytorch/p2_torch_resnet/operation_table_input_shape.json'), 'utf8')).data;
  assert.equal(Number(await one(page, 'operator_count')), ops.length);
  assert.equal(Number(await one(page, 'operator_calls')), ops.reduce((s, r) => s + r.calls, 0));
  // Rows are keyed as the plugin keys them: name###shape, in its order.
  const key = (r) => `${r.name}###${r.input_shape}`;
  const byKey = new Map(ops.map((r) => [key(r), r]));
  const shown = await shownKeys(page, 'torch-operator-table', 'calls');
  assert.ok(shown.length >= 10, `rows shown: ${shown.length}`);
  assert.deepEqual(shown, ops.slice(0, shown.length).map(key));
  for (const k of shown) {
    const r = byKey.get(k);
    assert.equal(await one(page, 'input_shape', k), r.input_shape, k);
    assert.equal(await one(page, 'calls', k), String(r.calls), k);
    for (const [m, f] of [['device_self_duration_us', 'device_self_duration'], ['device_total_duration_us', 'device_total_duration'], ['host_self_duration_us', 'host_self_duration'], ['host_total_duration_us', 'host_total_duration'], ['tc_self_ratio', 'tc_self_ratio'], ['tc_total_ratio', 'tc_total_ratio']]) {
      near(await one(page, m, k), r[f], `${k} ${m}`);
    }
  }
  // The filter finds a shape as well as a name.
  const last = ops[ops.length - 1];
  await page.fill('[data-testid="torch-operator-filter"]', last.input_shape);
  await page.waitForFunction((k) => [...document.querySelectorAll('[data-testid="torch-operator-table"] [data-metric="calls"]')].some((e) => e.dataset.key === k), key(last));
  await page.fill('[data-testid="torch-operator-filter"]', '');
  await shot(page, 'torch_operators_input_shape_dark');
  // A reload and the same trace restore the grouping; "By operator" goes back to the plugin's default.
  await page.reload();
  await page.waitForSelector('[data-testid="landing"]');
  await pickFiles(page, [TRACE]);
  await waitForFile(page, NAME);
  await page.waitForSelector('[data-testid="torch-operator-table"] [data-metric="input_shape"]', { timeout: 120_000 });
  assert.equal(Number(await one(page, 'operator_count')), ops.length);
  await page.click('[data-grouping="name"]');
  await page.waitForFunction(() => !location.hash.includes('group='));
  await page.waitForFunction((n) => document.querySelector('[data-metric="operator_count"]')?.dataset.value === String(n), oracle('operation_table').data.length);
  assert.deepEqual(page.errors, []);
});

test('Memory: the curve per device with hover and zoom, the events and the operators, in the page\'s units', { skip }, async () => {
  const page = await newPage(browser, { colorScheme: 'dark' });
  await open(page);
  await tab(page, 'torch-memory', 'torch-memory');
  const curve = oracle('memory_curve');
  const events = oracle('memory_events');
  const stats = oracle('memory');
  const dev = curve.metadata.default_device;
  assert.equal(await page.getAttribute('[data-testid="torch-memory-summary"]', 'data-device'), dev);
  near(await one(page, 'peak_memory_mb', dev), Number(/([\d.]+)MB/.exec(curve.metadata.peaks[dev])[1]), 'peak');
  assert.equal(Number(await one(page, 'memory_event_count', dev)), events.rows[dev].length);
  assert.equal(Number(await one(page, 'memory_operator_count', dev)), stats.rows[dev].length);
  assert.equal(await page.getAttribute('[data-testid="torch-memory-chart"]', 'data-points'), String(curve.rows[dev].length));

  // Events by their place in the plugin's list (the tables are built after the chart is drawn).
  await page.waitForSelector('[data-testid="torch-memory-events"] [data-metric="size_kb"]');
  const eshown = await shownKeys(page, 'torch-memory-events', 'size_kb');
  assert.ok(eshown.length >= 10);
  for (const key of eshown) {
    const [op, size, alloc, release, duration] = events.rows[dev][Number(key) - 1];
    assert.equal(await one(page, 'operator', key), op);
    near(await one(page, 'size_kb', key), size, `event ${key} size`);
    for (const [m, ms] of [['allocation_time_us', alloc], ['release_time_us', release], ['duration_us', duration]]) {
      const got = await one(page, m, key);
      if (ms === null) assert.equal(got, '', `${key} ${m}`);
      else near(got, ms * 1000, `${key} ${m}`);
    }
  }
  // Operators: the plugin's first sort, self size increase largest first.
  const scol = (name) => stats.columns.findIndex((c) => c.name === name);
  const sorted = [...stats.rows[dev]].sort((a, b) => b[scol('Self Size Increase (KB)')] - a[scol('Self Size Increase (KB)')]);
  const oshown = await shownKeys(page, 'torch-memory-operators', 'calls');
  assert.ok(oshown.length >= 5);
  for (const name of oshown) {
    const row = stats.rows[dev].find((r) => r[0] === name);
    assert.equal(await one(page, 'calls', name), String(row[scol('Calls')]));
    for (const [m, c] of [['size_increase_kb', 'Size Increase (KB)'], ['self_size_increase_kb', 'Self Size Increase (KB)'], ['allocation_count', 'Allocation Count'], ['self_allocation_count', 'Self Allocation Count'], ['allocation_size_kb', 'Allocation Size (KB)'], ['self_allocation_size_kb', 'Self Allocation Size (KB)']]) {
      near(await one(page, m, name), row[scol(c)], `${name} ${m}`);
    }
  }
  assert.equal(oshown[0], sorted[0][0]);

  // Hover: the time and both figures of a point of the plugin's curve.
  const chart = page.locator('[data-testid="torch-memory-chart"]');
  const box = await chart.boundingBox();
  await page.mouse.move(box.x + box.width * 0.55, box.y + box.height * 0.5);
  await page.waitForSelector('[data-testid="torch-memory-tip"]');
  const t = Number(await one(page, 'hover_time_us', dev)) / 1000;
  const point = curve.rows[dev].find((p) => Math.abs(p[0] - t) <= 1e-9 * Math.max(1, t));
  assert.ok(point, `hovered time ${t} ms is a point of the curve`);
  const at = curve.rows[dev].findLastIndex((p) => p[0] <= t);
  near(await one(page, 'hover_allocated_mb', dev), curve.rows[dev][at][1], 'hover allocated');
  near(await one(page, 'hover_reserved_mb', dev), curve.rows[dev][at][2], 'hover reserved');
  await shot(page, 'torch_memory_dark');
  // The wheel zooms the time axis (the shared pan and zoom); a double-click resets it.
  const before = await chart.getAttribute('data-view');
  await page.mouse.wheel(0, -400);
  await page.waitForFunction((b) => document.querySelector('[data-testid="torch-memory-chart"]').dataset.view !== b, before);
  await chart.dblclick();
  await page.waitForFunction((b) => document.querySelector('[data-testid="torch-memory-chart"]').dataset.view === b, before);

  // The byte unit toggle: a size in bytes, its data-value still the plugin's KB.
  await page.selectOption('[data-testid="unit-select"]', 'B');
  const first = page.locator('[data-testid="torch-memory-events"] [data-metric="size_kb"]').first();
  assert.match(await first.textContent(), / B$/);

  // Another device: its own figures.
  const other = curve.metadata.devices.find((d) => d !== dev);
  await page.click(`[data-device="${other}"]`);
  await page.waitForSelector(`[data-testid="torch-memory-summary"][data-device="${other}"]`);
  assert.equal(Number(await one(page, 'memory_event_count', other)), (events.rows[other] || []).length);
  assert.deepEqual(page.errors, []);
});

test('the view lives in the URL: a reload and the same trace restore the Kernel view', { skip }, async () => {
  const page = await newPage(browser);
  await open(page);
  await tab(page, 'torch-kernels', 'torch-kernels');
  await page.reload();
  await page.waitForSelector('[data-testid="landing"]');
  assert.match(page.url(), /tool=torch-kernels/);
  await pickFiles(page, [TRACE]);
  await waitForFile(page, NAME);
  await page.waitForSelector('.tab[data-tool="torch-kernels"][aria-selected="true"]');
  await ready(page, 'torch-kernels');
  assert.deepEqual(page.errors, []);
});

// A log folder of six large hosts (the project's fixtures written again and again, two of them
// gzipped): the worker holds one host's bytes at a time. Memory across hosts lists every host's
// allocators with the CLI's figures without reading any host again; switching host shows that host's
// Memory Profile with the CLI's peak, the worker then holding that host alone; and the wasm memory after
// visiting every host stays under 1.5× the largest (inflated) host plus a stated allowance for one
// host's index and analyses, below the sum of the hosts that holding every one would need. Figures are
// printed; the asserts are on residency and figures, not on timing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { ROOT, serve, launch, newPage, openApp, waitForFile, one, shot, fixture } from './harness.mjs';

/** The engine's protocol version, read from its source so that a bump needs no edit here. */
const VERSION = Number(/pub const VERSION: u32 = (\d+);/.exec(readFileSync(path.join(ROOT, 'src/engine/protocol.rs'), 'utf8'))[1]);
const RUN = '2026_11_24_09_30_00';
const RUN_DIR = `logs/plugins/profile/${RUN}`;
/** host, fixture, times written, gzipped. */
const HOSTS = [
  ['worker-0', 'tf/d2_tf_cnn/d2_tf_cnn', 5, false],
  ['worker-1', 'tf/d1_tf_keras_bfc/d1_tf_keras_bfc', 8, true],
  ['worker-2', 'tf/d2_tf_cnn/d2_tf_cnn', 8, false],
  ['worker-3', 'tf/d1_tf_keras_bfc/d1_tf_keras_bfc', 12, false],
  ['worker-4', 'tf/d2_tf_cnn/d2_tf_cnn', 6, true],
  ['worker-5', 'tf/d1_tf_keras_bfc/d1_tf_keras_bfc', 10, false],
];
/** What one host's index and analyses (op metrics, steps, Memory Profile) and the engine's own memory
 *  may add to the 1.5× while a host is held, as a share of the largest host: a stated allowance, well
 *  under the sum of the hosts, which holding every host would exceed. */
const INDEX_ALLOWANCE = 0.75;
const MiB = 2 ** 20;

let server, browser, tmp;
before(async () => { server = await serve(); browser = await launch(); tmp = mkdtempSync(path.join(os.tmpdir(), 'tidemark-lazy-')); });
after(async () => { await browser?.close(); server?.close(); if (tmp) rmSync(tmp, { recursive: true, force: true }); });

/** The log folder; each host's path in the page and its inflated size. Protobuf reads a trace written
 *  twice as one XSpace with every plane twice, which every tool reads as a larger trace. */
function logFolder() {
  const logdir = path.join(tmp, 'logs');
  const dir = path.join(logdir, 'plugins/profile', RUN);
  mkdirSync(dir, { recursive: true });
  const hosts = HOSTS.map(([host, rel, times, gz]) => {
    const one = gunzipSync(readFileSync(fixture(`${rel}.xplane.pb.gz`)));
    const bytes = Buffer.concat(Array(times).fill(one));
    const name = `${host}.xplane.pb${gz ? '.gz' : ''}`;
    writeFileSync(path.join(dir, name), gz ? gzipSync(bytes, { level: 1 }) : bytes);
    return { host, path: `${RUN_DIR}/${name}`, inflated: bytes.length };
  });
  return { logdir, dir, hosts };
}

/** A page whose engine worker can be asked directly (`window.__engineWorker`). */
async function watchedPage() {
  const page = await newPage(browser);
  await page.addInitScript(() => {
    const Base = window.Worker;
    window.Worker = class extends Base {
      constructor(...args) {
        super(...args);
        window.__engineWorker = this;
      }
    };
  });
  return page;
}

/** The worker's `residency` reply: which files it holds, and its wasm memory. The page ignores the
 *  reply (no request of its own has that sequence number). */
const residency = (page) => page.evaluate((v) => new Promise((resolve) => {
  const w = window.__engineWorker;
  const seq = 4_000_000_000 + Math.floor(Math.random() * 1e6);
  const on = (ev) => {
    const text = typeof ev.data === 'string' ? ev.data : ev.data[0];
    const r = JSON.parse(text);
    if (r.seq !== seq) return;
    w.removeEventListener('message', on);
    resolve(r.body.report);
  };
  w.addEventListener('message', on);
  w.postMessage([JSON.stringify({ v, seq, body: { type: 'residency' } }), null]);
}), VERSION);

const held = (report) => report.resident.map((r) => r.path);

test('one host held at a time: every host\'s figures, and memory bounded by the largest host', async () => {
  const { logdir, dir, hosts } = logFolder();
  const bin = process.env.TIDEMARK_BIN || path.join(ROOT, 'target/debug/tidemark');
  const expected = JSON.parse(execFileSync(bin, ['memory-across-hosts', dir, '--json'], { maxBuffer: 256 << 20 }).toString());
  const largest = Math.max(...hosts.map((h) => h.inflated));
  const sum = hosts.reduce((s, h) => s + h.inflated, 0);

  const page = await watchedPage();
  await openApp(page, server.url);
  await page.setInputFiles('[data-testid="folder-input"]', logdir);
  for (const h of hosts) await waitForFile(page, h.path);
  const opened = await residency(page);
  console.log(`lazy_hosts: hosts ${hosts.map((h) => `${h.host} ${(h.inflated / MiB).toFixed(1)} MiB`).join(', ')}; `
    + `after opening: held ${JSON.stringify(opened.resident)}, wasm memory ${(opened.wasm_memory_bytes / MiB).toFixed(0)} MiB`);
  assert.equal(opened.resident.length, 1, `one host held after opening: ${held(opened)}`);
  assert.equal(opened.released.length, hosts.length - 1);

  // Memory across hosts: every host's allocators, as the CLI gives them, from what was kept.
  await page.click('.tab[data-tool="memory-across-hosts"]');
  await page.waitForSelector('[data-testid="memory-across-hosts"][data-state="ready"]', { timeout: 120_000 });
  const rows = await page.$$eval('tr.hostmem-row', (rs) => rs.map((r) => ({ host: r.dataset.host, memory_id: r.dataset.memoryId })));
  assert.deepEqual(rows, expected.allocators.map((a) => ({ host: a.host, memory_id: a.memory_id })));
  for (const a of expected.allocators) {
    assert.equal(Number(await one(page, 'peak_bytes', `${a.host}|${a.memory_id}`)), a.peak_bytes, `${a.host} ${a.memory_id}`);
  }
  assert.deepEqual(held(await residency(page)), held(opened), 'Memory across hosts read no host again');
  await shot(page, 'lazy-hosts-across');

  // Each host in turn: its Memory Profile (which reads the host's events) shows the CLI's peak, and the
  // worker holds that host alone.
  await page.click('.tab[data-tool="memory-profile"]');
  for (const h of hosts) {
    await page.selectOption('[data-testid="file-select"]', h.path);
    await page.waitForSelector(`article[data-testid="memory-profile"][data-file="${h.path}"] [data-testid="memory-summary"]`, { timeout: 120_000 });
    const memoryId = await page.$eval('[data-testid="memory-id-select"]', (s) => s.value);
    const row = expected.allocators.find((a) => a.host === h.host && a.memory_id === memoryId);
    assert.ok(row, `${h.host} ${memoryId} is one of the CLI's rows`);
    const peak = Number(await one(page, 'peak_heap_bytes')) + Number(await one(page, 'peak_stack_bytes'));
    assert.equal(peak, row.peak_bytes, `${h.host} ${memoryId} peak`);
    const r = await residency(page);
    console.log(`lazy_hosts: ${h.host} shown: held ${held(r)}, wasm memory ${(r.wasm_memory_bytes / MiB).toFixed(0)} MiB`);
    assert.deepEqual(held(r), [h.path], `only ${h.host} held`);
    if (h === hosts[1]) await shot(page, 'lazy-hosts-memory-profile');
  }

  const end = await residency(page);
  const bound = (1.5 + INDEX_ALLOWANCE) * largest;
  console.log(`lazy_hosts: wasm memory after every host ${(end.wasm_memory_bytes / MiB).toFixed(0)} MiB; largest host `
    + `${(largest / MiB).toFixed(0)} MiB, bound (1.5 + ${INDEX_ALLOWANCE} allowance) × largest = ${(bound / MiB).toFixed(0)} MiB; `
    + `all hosts together ${(sum / MiB).toFixed(0)} MiB`);
  assert.equal(end.resident.length, 1);
  assert.ok(bound < sum, 'the bound is below what holding every host would take');
  assert.ok(end.wasm_memory_bytes <= bound, `wasm memory ${end.wasm_memory_bytes} over ${bound}`);
  assert.deepEqual(page.errors, []);
});

// Shared by the browser tests: serve the built page (dist/) on a loopback port, drive Debian's
// headless Chromium with playwright-core, and read figures through data-metric/data-value.
import { spawn, execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const FIXTURES = path.join(ROOT, 'tests/fixtures');
export const SHOTS = path.join(ROOT, 'tests/browser/out');
mkdirSync(SHOTS, { recursive: true });

export const fixture = (rel) => path.join(FIXTURES, rel);

/** The real GPU/TPU profiles recorded by others, read in place beside the checkout (never copied in). */
export const DEVICE = path.resolve(ROOT, '../shared/fixtures/device');

/**
 * `false` when device fixture `file` is there, else why its test is skipped (for `test`'s `skip`). With
 * `CI=true` an absent device fixture is an error, not a skip: CI has them, so a test that would pass by
 * skipping there hides a broken checkout.
 */
export function deviceSkip(file) {
  if (existsSync(file)) return false;
  const why = `device fixture ${path.relative(ROOT, file)} is absent (it lives beside the checkout, not in it)`;
  if (process.env.CI === 'true') throw new Error(`${why}; with CI=true every device fixture must be there`);
  return why;
}

async function freePort() {
  const srv = createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address();
  srv.close();
  return port;
}

/** Serves `dir` with python's http.server (which types .wasm as application/wasm). */
export async function serve(dir = path.join(ROOT, 'dist')) {
  const port = await freePort();
  const proc = spawn('python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', dir], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/`);
      if (r.ok) break;
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url: `http://127.0.0.1:${port}/`, close: () => proc.kill() };
}

export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
}

/** A page with console errors, page errors and every request recorded. */
export async function newPage(browser, { colorScheme = 'light' } = {}) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, deviceScaleFactor: 1, colorScheme });
  const page = await context.newPage();
  page.errors = [];
  page.requests = [];
  page.on('pageerror', (e) => page.errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') page.errors.push(m.text()); });
  page.on('request', (r) => page.requests.push(r.url()));
  return page;
}

/** Opens the page and waits until the app has mounted. */
export async function openApp(page, url) {
  await page.goto(url);
  await page.waitForSelector('.toolbar');
}

/** Waits until the engine worker has started (its wasm instantiated and its message handler set). */
export async function workerReady(page, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const w of page.workers()) {
      if (await w.evaluate(() => self.onmessage !== null).catch(() => false)) return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the engine worker did not start');
}

/** Chooses files through the page's own file input, as a user with the file picker would. */
export async function pickFiles(page, files) {
  await page.setInputFiles('[data-testid="file-input"]', files);
}

/** Drops files on the page with a synthesized DataTransfer, as a drag from the desktop would. */
export async function dropFiles(page, files) {
  const payload = files.map((f) => ({ name: path.basename(f), b64: readFileSync(f).toString('base64') }));
  await page.evaluate((items) => {
    const dt = new DataTransfer();
    for (const { name, b64 } of items) {
      const bin = atob(b64);
      const bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      dt.items.add(new File([bytes], name));
    }
    const target = document.querySelector('.app');
    target.dispatchEvent(new DragEvent('dragenter', { dataTransfer: dt, bubbles: true, cancelable: true }));
    target.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, payload);
}

/** Waits until the named file is loaded (or failed) in the file list. */
export async function waitForFile(page, name, state = 'ready') {
  await page.waitForSelector(`.file-row[data-file="${name}"][data-state="${state}"]`, { timeout: 60_000 });
}

/** Selects the named file; the tool shown stays (a drop first shows the tool the file opens on). */
export async function selectFile(page, name) {
  await page.click(`.file-row[data-file="${name}"]`);
  await page.waitForSelector(`.file-row.selected[data-file="${name}"]`);
}

/** Selects the named file and shows its File details (format, planes, allocators, modules, pprof). */
export async function fileDetails(page, name) {
  await selectFile(page, name);
  await page.click('.tab[data-tool="file-details"]');
  await page.waitForSelector(`article.file-details[data-file="${name}"]`);
}

/** The raw values of every figure named `metric` (optionally of one `key`), in document order. */
export async function metric(page, name, key) {

  return page.$$eval(`[data-metric="${name}"]`, (els, key) =>
    els.filter((e) => key === undefined || e.dataset.key === key).map((e) => e.dataset.value), key);
}

/** The raw value of the one figure named `name` (and `key`); fails when there is not exactly one. */
export async function one(page, name, key) {
  const v = await metric(page, name, key);
  assert.equal(v.length, 1, `${name}[${key}]: ${JSON.stringify(v)}`);
  return v[0];
}

/** Whether the figure `a` (a string or number) equals `b` to `rel` (1e-9), relative (absolute below 1). */
export const close = (a, b, rel = 1e-9) => Math.abs(Number(a) - b) <= rel * Math.max(1, Math.abs(b));

/** Column `id` of XProf's DataTable `t`, row by row. */
export const column = (t, id) => { const i = t.cols.findIndex((c) => c.id === id); return t.rows.map((r) => r.c[i].v); };

/** The CLI's view of the same file: what the page must show. */
export function cliOverview(files) {
  const bin = process.env.TIDEMARK_BIN || path.join(ROOT, 'target/debug/tidemark');
  const out = execFileSync(bin, ['inspect', '--json', ...files], { maxBuffer: 64 << 20 });
  return JSON.parse(out.toString());
}

/** The CLI's graph of `module` in `file` around `node` (`width` hops), or with `node` null its
 * whole-module overview: what the Graph tool must show. */
export function cliGraph(file, module, node, width = 1) {
  const bin = process.env.TIDEMARK_BIN || path.join(ROOT, 'target/debug/tidemark');
  const what = node === null ? ['--overview'] : ['--node', node, '--width', String(width)];
  const args = ['graph-viewer', file, '--module', module, ...what, '--format', 'json'];
  return JSON.parse(execFileSync(bin, args, { maxBuffer: 256 << 20 }).toString());
}

/** A graph's instruction names (its root placeholder left out), sorted. */
export const graphNames = (g) => g.nodes.filter((n) => n.kind !== 'root').map((n) => n.name).sort();

/** Waits until the Graph tool is drawn around `center`. */
export async function showsGraph(page, center, timeout = 120_000) {
  await page.waitForFunction((c) => document.querySelector('[data-testid="graph-viewer"][data-state="ready"] [data-metric="graph_center"]')?.dataset.value === c,
    center, { timeout });
}

export async function shot(page, name) {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
}

// --- A minimal protobuf writer: enough to build pprof, HloProto and XSpace files by hand. --------
const varint = (n) => {
  const out = [];
  let v = BigInt(n);
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) b |= 0x80;
    out.push(b);
  } while (v > 0n);
  return Buffer.from(out);
};
export const pb = {
  varint,
  /** Field `num` with a varint value. */
  int: (num, v) => Buffer.concat([varint(num << 3), varint(v)]),
  /** Field `num` length-delimited: a string or nested message bytes. */
  len: (num, payload) => {
    const b = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
    return Buffer.concat([varint((num << 3) | 2), varint(b.length), b]);
  },
  msg: (...fields) => Buffer.concat(fields),
};

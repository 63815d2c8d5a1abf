// Hostile input in the page: profiles whose strings are HTML/script markup are shown as text and run
// nothing; a file too large for the page, a decompression bomb and an engine that dies each end in a
// banner naming the file, and the page (with the files already open) keeps working.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { writeFileSync, openSync, ftruncateSync, closeSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import {
  serve, launch, newPage, openApp, pickFiles, waitForFile as waitForPlainFile, metric, shot, fixture, pb,
} from './harness.mjs';
import { scratchDir } from './support/scratch.mjs';

/** A file name as a CSS attribute value: these names contain quotes. */
const css = (name) => name.replace(/["\\]/g, '\\$&');
const waitForFile = (page, name, state = 'ready') => waitForPlainFile(page, css(name), state);
async function selectFile(page, name) {
  await page.click(`.file-row[data-file="${css(name)}"]`);
  await page.waitForSelector(`article[data-file="${css(name)}"]`);
}

let server, browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

const { varint, int, len, msg } = pb;

const IMG = '<img src=x onerror="window.__pwned=1;alert(1)">';
const SCRIPT = '<script>window.__pwned=2;alert(2)</script>';
const STYLE = '<style>body{display:none}</style><b>bold</b>';
/** A file name cannot hold `/`, so the HloProto's file name carries an SVG handler instead. */
const SVG = '<svg onload="window.__pwned=3;alert(3)">';

/** pprof: two functions named with markup, a `kind` label that is markup. */
function markupPprof() {
  const strings = ['', 'space', 'bytes', 'kind', SCRIPT, IMG, '/tmp/<i>x</i>.py'];
  return msg(
    len(1, msg(int(1, 1), int(2, 2))), // sample_type space/bytes
    len(2, msg(len(1, Buffer.concat([varint(1), varint(2)])), len(2, varint(4096)), len(3, msg(int(1, 3), int(2, 5))))),
    len(4, msg(int(1, 1), len(4, msg(int(1, 1), int(2, 3))))), // location 1 → function 1
    len(4, msg(int(1, 2), len(4, msg(int(1, 2), int(2, 4))))),
    len(5, msg(int(1, 1), int(2, 4), int(4, 6))), // function 1: SCRIPT in /tmp/<i>x</i>.py
    len(5, msg(int(1, 2), int(2, 5), int(4, 6))),
    ...strings.map((s) => len(6, s)),
  );
}

/** HloProto: module and instruction named with markup, no buffer assignment (a note names it). */
function markupHlo(name) {
  const instruction = msg(len(1, IMG), len(2, 'fusion'), len(3, msg(int(2, 11), int(3, 4))), int(35, 1));
  return msg(len(1, msg(len(1, name), len(2, 'main'), len(3, msg(len(1, 'main'), len(2, instruction), int(5, 1))))));
}

/** XSpace: host, plane, line, allocator and an embedded HLO module all named with markup. */
function markupXSpace() {
  const stat = (id, field, v) => len(6, msg(int(1, id), typeof v === 'number' ? int(field, v) : len(field, v)));
  const mapEntry = (field, key, value) => len(field, msg(int(1, key), len(2, value)));
  const hostPlane = msg(
    int(1, 1), len(2, '/host:CPU'),
    mapEntry(4, 1, msg(int(1, 1), len(2, 'MemoryAllocation'))),
    mapEntry(5, 1, msg(int(1, 1), len(2, 'allocator_name'))),
    mapEntry(5, 2, msg(int(1, 2), len(2, 'bytes_allocated'))),
    mapEntry(5, 3, msg(int(1, 3), len(2, 'peak_bytes_in_use'))),
    len(3, msg(int(1, 1), len(2, STYLE),
      len(4, msg(int(1, 1), int(2, 10), len(4, msg(int(1, 1), len(5, IMG))), len(4, msg(int(1, 2), int(4, 1024))), len(4, msg(int(1, 3), int(4, 1024))))))),
  );
  const hloStat = 7;
  const metaPlane = msg(
    int(1, 2), len(2, '/host:metadata'),
    mapEntry(5, hloStat, msg(int(1, hloStat), len(2, 'Hlo Proto'))),
    mapEntry(4, 5, msg(int(1, 5), len(2, `${SCRIPT}(5)`), len(5, msg(int(1, hloStat), len(6, markupHlo(SCRIPT)))))),
  );
  return msg(len(1, hostPlane), len(1, metaPlane), len(4, `${IMG}-host`));
}

test('markup in profiles is shown as text and runs nothing', async () => {
  const dir = scratchDir('tidemark-markup-');
  const files = {
    // The file names are markup too: they appear in the file list, the banners and the overview.
    [`${IMG}.prof`]: markupPprof(),
    [`${SVG}.hlo.pb`]: markupHlo(`${STYLE}${SCRIPT}`),
    ['markup.xplane.pb']: markupXSpace(),
  };
  for (const [name, bytes] of Object.entries(files)) writeFileSync(path.join(dir, name), bytes);
  const page = await newPage(browser);
  const dialogs = [];
  page.on('dialog', async (d) => { dialogs.push(d.message()); await d.dismiss(); });
  await openApp(page, server.url);
  const scriptsBefore = await page.$$eval('script', (s) => s.length);
  await pickFiles(page, Object.keys(files).map((n) => path.join(dir, n)));
  for (const name of Object.keys(files)) await waitForFile(page, name);
  // Several files open on the run's Overview; these checks read File details.
  await page.click('.tab[data-tool="file-details"]');

  await selectFile(page, 'markup.xplane.pb');
  // A plane's lines are listed under the planes table once the plane is clicked.
  await page.click('tr[data-plane="/host:CPU"]');
  await page.waitForSelector('table.lines');
  const xs = await page.textContent('article.overview');
  for (const s of [IMG, STYLE, `${SCRIPT}(5)`, `${IMG}-host`]) assert.ok(xs.includes(s), `shown literally: ${s}\n${xs}`);
  assert.deepEqual(await metric(page, 'allocations', IMG), ['1']);
  await shot(page, 'hostile-markup-xspace');

  await selectFile(page, `${SVG}.hlo.pb`);
  assert.ok((await page.textContent('article.overview')).includes(`${STYLE}${SCRIPT}`));
  await selectFile(page, `${IMG}.prof`);
  assert.deepEqual(await metric(page, 'live_bytes'), ['4096']);
  assert.ok((await page.textContent('.files')).includes(`${IMG}.prof`));
  // The Device memory tab draws the same names in its tables (and on a canvas, which cannot run them).
  await page.click('[data-tool="device-memory"]');
  await page.waitForSelector('[data-testid="device-memory"][data-state="ready"]', { timeout: 30_000 });
  const dm = await page.textContent('[data-testid="device-memory"]');
  for (const s of [IMG, SCRIPT]) assert.ok(dm.includes(s), `device memory shows literally: ${s}`);
  await shot(page, 'hostile-markup-device-memory');

  // Nothing was parsed as markup, nothing ran, nothing was fetched.
  assert.equal(await page.$$eval('script', (s) => s.length), scriptsBefore);
  assert.equal(await page.$$eval('.app img, .app style, .app b, .app i, .app svg[onload]', (e) => e.length), 0);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(await page.evaluate(() => getComputedStyle(document.body).display), 'block');
  assert.deepEqual(dialogs, []);
  const foreign = page.requests.filter((u) => !u.startsWith(server.url) || /\/x$/.test(u));
  assert.deepEqual(foreign, []);
  assert.deepEqual(page.errors, []);
});

test('a file too large for the page, and a decompression bomb, are refused with what to do', async () => {
  const dir = scratchDir('tidemark-big-');
  // Sparse: 2.1 GiB on paper, nothing on disk; the page refuses it from its size, before reading.
  const big = path.join(dir, 'huge.xplane.pb');
  const fd = openSync(big, 'w');
  ftruncateSync(fd, 2100 * 1024 * 1024);
  closeSync(fd);
  // 200 MiB of zeros in 200 KiB of gzip: past the 1000× ratio limit.
  const bomb = path.join(dir, 'zeros.xplane.pb.gz');
  writeFileSync(bomb, gzipSync(Buffer.alloc(200 << 20), { level: 9 }));

  const page = await newPage(browser);
  await openApp(page, server.url);
  await pickFiles(page, [big, bomb]);
  await waitForFile(page, 'huge.xplane.pb', 'failed');
  await waitForFile(page, 'zeros.xplane.pb.gz', 'failed');
  const msg = async (f) => page.textContent(`[data-testid="file-error"][data-file="${f}"] .message`);
  assert.match(await msg('huge.xplane.pb'), /more than the 1\.95 GiB this page can hold in memory; open it with the `tidemark` command-line tool/);
  assert.match(await msg('zeros.xplane.pb.gz'), /inflates past 194\.\d\d MiB \(from 199\.\d\d KiB compressed\); refusing it as a likely decompression bomb/);
  await shot(page, 'hostile-too-large');
  await pickFiles(page, [fixture('pprof/docs_seed_memory.prof')]);
  await waitForFile(page, 'docs_seed_memory.prof');
  assert.deepEqual(page.errors, []);
});

test('an engine that dies fails its file with a banner, restarts, and the page keeps working', async () => {
  const page = await newPage(browser);
  await openApp(page, server.url);
  await pickFiles(page, [fixture('pprof/docs_seed_memory.prof')]);
  await waitForFile(page, 'docs_seed_memory.prof');
  // Make the running engine worker throw on its next request, as a trap in the engine would: an
  // uncaught error in the worker, with no reply. (The test reaches into the worker; the page ships
  // no way to do this.)
  const [worker] = page.workers();
  assert.ok(worker, 'the engine runs in a worker');
  await worker.evaluate(() => { self.onmessage = () => { throw new Error('simulated engine crash'); }; });
  await pickFiles(page, [fixture('pprof/docs_leak/memory9.prof')]);
  await waitForFile(page, 'memory9.prof', 'failed');
  const banner = await page.textContent('[data-testid="file-error"][data-file="memory9.prof"]');
  assert.match(banner, /memory9\.prof: the engine stopped while working on this file \(.*simulated engine crash.*\); it has been restarted/);
  assert.match(await page.textContent('[data-testid="page-alert"]'), /engine worker stopped .* and was restarted/);
  await shot(page, 'hostile-engine-restarted');
  // A fresh engine answers: the same file opens now, and the file opened before keeps its overview.
  await page.waitForFunction(() => true);
  await pickFiles(page, [fixture('pprof/docs_leak/memory9.prof')]);
  await waitForFile(page, 'memory9.prof');
  await page.click('.tab[data-tool="file-details"]');
  await selectFile(page, 'memory9.prof');
  assert.equal((await metric(page, 'sample_count')).length, 1);
  await selectFile(page, 'docs_seed_memory.prof');
  assert.deepEqual(await metric(page, 'live_bytes'), ['84000000']);
  const workers = page.workers();
  assert.equal(workers.length, 1, 'the dead worker was terminated, one engine runs');
  // The simulated crash is the only error the page saw.
  assert.ok(page.errors.every((e) => /simulated engine crash/.test(e)), page.errors.join('\n'));
});

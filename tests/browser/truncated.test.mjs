// A trace cut short opens in the page with what lies before the cut: a banner over every tool names the
// byte offset (the CLI's figure for the same file), and the Trace Viewer draws the events decoded before
// the cut. A gzipped trace cut short opens the same way from what was inflated before the cut, the
// banner naming the compressed file's length and the inflated offset. A trace with no events says so
// in the Trace Viewer.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { gunzipSync } from 'node:zlib';
import {
  serve, launch, newPage, openApp, pickFiles, waitForFile, selectFile, one, shot, fixture, cliOverview, pb,
} from './harness.mjs';

let server, browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

/** A fresh page with `file` opened, selected and shown in the Trace Viewer. */
async function inTraceViewer(file) {
  const page = await newPage(browser);
  await openApp(page, server.url);
  await pickFiles(page, [file]);
  await waitForFile(page, path.basename(file));
  return selectFile(page, path.basename(file)).then(() => page.click('.tab[data-tool="trace-viewer"]')).then(() => page);
}

/** `bytes` written as a file named `name` in a fresh folder, and the CLI's overview of it. */
function cutFile(name, bytes) {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'tidemark-cut-')), name);
  writeFileSync(file, bytes);
  return { file, cli: cliOverview([file]).files[0] };
}

/** A fresh page with `file` shown in the Trace Viewer, its events drawn. */
async function drawn(file) {
  const page = await inTraceViewer(file);
  await page.waitForFunction(() => {
    const el = document.querySelector('[data-testid="trace-canvas"]');
    return el && el.dataset.loading === 'false' && Number(el.dataset.spans) > 0;
  }, null, { timeout: 60_000 });
  return page;
}

/** The number `x` as the page writes counts. */
const n = (x) => x.toLocaleString('en-US');

test('a cut trace: the banner names the offset on every tool, the Trace Viewer draws what is before the cut', async () => {
  const raw = gunzipSync(readFileSync(fixture('tf/d1_tf_keras_none/d1_tf_keras_none.xplane.pb.gz')));
  const cut = Math.floor(raw.length * 2 / 3);
  const { file, cli } = cutFile('cut.xplane.pb', raw.subarray(0, cut));
  assert.equal(cli.truncation.truncated_at, cut);

  const page = await drawn(file);
  assert.equal(Number(await one(page, 'truncated_at')), cut);
  const banner = await page.$eval('[data-testid="truncated-banner"]', (el) => el.textContent);
  assert.match(banner, new RegExp(`^Truncated at byte ${n(cut)} of at least`));
  const events = cli.planes.reduce((k, p) => k + p.event_count, 0);
  assert.match(banner, new RegExp(`showing the ${n(events)} events decoded before the cut`));
  assert.ok(Number(await one(page, 'trace_event_count')) > 0);
  await shot(page, 'truncated-trace-viewer');

  // The same banner over another tool, which shows what it has.
  await page.click('.tab[data-tool="memory-profile"]');
  await page.waitForSelector('article[data-file="cut.xplane.pb"]');
  assert.equal(Number(await one(page, 'truncated_at')), cut);
  await shot(page, 'truncated-memory-profile');
  await page.close();
});

test('a cut gzipped trace opens with what was inflated before the cut, the banner naming both offsets', async () => {
  const gz = readFileSync(fixture('tf/d1_tf_keras_none/d1_tf_keras_none.xplane.pb.gz'));
  const cut = Math.floor(gz.length * 2 / 3);
  const { file, cli } = cutFile('cut.xplane.pb.gz', gz.subarray(0, cut));
  assert.equal(cli.gzip_cut.compressed_len, cut);
  const inflated = cli.truncation.truncated_at;
  assert.equal(cli.gzip_cut.inflated_bytes, inflated);

  // The page streams the file through its worker (the last four bytes, no size here, read first).
  const page = await drawn(file);
  assert.equal(Number(await one(page, 'truncated_at')), inflated);
  assert.equal(Number(await one(page, 'gzip_cut_at')), cut);
  const banner = await page.$eval('[data-testid="truncated-banner"]', (el) => el.textContent);
  assert.match(banner, new RegExp(`^Truncated: the gzip file is cut short at byte ${n(cut)}, which inflates to byte ${n(inflated)} of a trace of at least`));
  const events = cli.planes.reduce((k, p) => k + p.event_count, 0);
  assert.match(banner, new RegExp(`showing the ${n(events)} events decoded before the cut`));
  assert.match(banner, /could not be checked against its CRC/);
  assert.ok(Number(await one(page, 'trace_event_count')) > 0);
  await shot(page, 'truncated-gzip-trace-viewer');
  await page.close();
});

test('a trace with no events says so in the Trace Viewer', async () => {
  const { file } = cutFile('empty.xplane.pb', pb.msg(pb.len(4, 'host')));
  const page = await inTraceViewer(file);
  await page.waitForSelector('[data-testid="trace-empty"]', { timeout: 60_000 });
  assert.match(await page.$eval('[data-testid="trace-empty"]', (el) => el.textContent), /This trace has no events/);
  assert.equal(await page.$('[data-testid="truncated-banner"]'), null);
  await shot(page, 'empty-trace-viewer');
  await page.close();
});

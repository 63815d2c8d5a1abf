// The page while it reads a large trace: the worker reads the file itself, in slices, so the progress
// bar moves (bytes read, then decoding) and the page answers a tab switch while the file is read. The
// longest main-thread task (PerformanceObserver 'longtask') is printed, never asserted: it is a figure
// of this machine.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { openSync, writeSync, closeSync, readFileSync, statSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { serve, launch, newPage, openApp, pickFiles, waitForFile, fixture } from './harness.mjs';
import { scratchDir } from './support/scratch.mjs';

let server, browser, dir;
before(async () => { server = await serve(); browser = await launch(); dir = scratchDir('tidemark-large-'); });
after(async () => { await browser?.close(); server?.close(); });

/** A trace of about `targetBytes`: a fixture's bytes written again and again. Protobuf reads the
 *  concatenation as one XSpace with every plane repeated, which every tool reads as a larger trace. */
function largeTrace(targetBytes) {
  const one = gunzipSync(readFileSync(fixture('tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz')));
  const file = path.join(dir, 'large.xplane.pb');
  const fd = openSync(file, 'w');
  for (let written = 0; written < targetBytes; written += one.length) writeSync(fd, one);
  closeSync(fd);
  return file;
}

test('a large trace is read off the main thread: the bar moves and tabs switch while it reads', async () => {
  const file = largeTrace(200 << 20);
  const size = statSync(file).size;
  const page = await newPage(browser);
  // Before the app starts: record every long task, and every state of the file's progress bar.
  await page.addInitScript(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__longTasks.push(e.duration); })
      .observe({ type: 'longtask', buffered: true });
    window.__progress = [];
    const seen = () => {
      const bar = document.querySelector('[data-metric="progress"]');
      const text = bar?.textContent ?? '';
      if (bar && window.__progress.at(-1) !== text) window.__progress.push(text);
    };
    new MutationObserver(seen).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
  });
  await openApp(page, server.url);
  const longBefore = (await page.evaluate(() => window.__longTasks.slice())).length;
  const t0 = Date.now();
  await pickFiles(page, [file]);
  // While the file loads, switch tools twice; each switch must be answered while it still loads.
  await page.waitForSelector('[data-metric="progress"]');
  const switches = [];
  for (const tool of ['memory-profile', 'file-details']) {
    const s = Date.now();
    await page.click(`.tab[data-tool="${tool}"]`);
    await page.waitForSelector(`.tab[data-tool="${tool}"][aria-selected="true"]`, { timeout: 5_000 });
    const still = await page.$('.file-row[data-file="large.xplane.pb"][data-state="loading"]');
    switches.push({ tool, ms: Date.now() - s, whileLoading: still !== null });
  }
  // A shared test machine decodes slowly: the open itself is not what this test times.
  await page.waitForSelector('.file-row[data-file="large.xplane.pb"]:not([data-state="loading"])', { timeout: 300_000 })
    .catch(async (e) => { console.log(`large_read: progress shown: ${(await page.evaluate(() => window.__progress)).join(' | ')}`); throw e; });
  await waitForFile(page, 'large.xplane.pb');
  const openMs = Date.now() - t0;
  const progress = await page.evaluate(() => window.__progress.slice());
  const longTasks = (await page.evaluate(() => window.__longTasks.slice())).slice(longBefore);
  console.log(`large_read: ${(size / 2 ** 20).toFixed(0)} MiB opened in ${openMs} ms; tab switches ${JSON.stringify(switches)}`);
  console.log(`large_read: longest main-thread task while reading: ${Math.max(0, ...longTasks).toFixed(0)} ms (${longTasks.length} long tasks: ${longTasks.map((d) => d.toFixed(0)).join(', ')})`);
  console.log(`large_read: progress shown: ${progress.join(' | ')}`);

  assert.ok(switches.every((s) => s.whileLoading), `a tab switch was answered only after the file loaded: ${JSON.stringify(switches)}`);
  const reading = progress.filter((p) => p.startsWith('reading')).map((p) => parseFloat(p.replace(/^reading /, '')));
  assert.ok(new Set(reading).size >= 3, `the bar showed too few reading steps: ${progress.join(' | ')}`);
  assert.ok(reading.every((p, i) => i === 0 || p >= reading[i - 1]), `reading went backwards: ${reading}`);
  assert.ok(progress.some((p) => p.startsWith('decoding')), `the bar never showed decoding: ${progress.join(' | ')}`);
  assert.deepEqual(page.errors, []);
});

// The table component at scale: a device memory profile with 12,000 functions, each allocating its
// own number of bytes, fills the Device memory tab's function and site tables. Only a window of rows
// is in the DOM; sorting, filtering and scrolling to the end still reach every row.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { writeFileSync } from 'node:fs';
import { serve, launch, newPage, openApp, pickFiles, waitForFile, metric, shot, pb } from './harness.mjs';
import { scratchDir } from './support/scratch.mjs';

const ROWS = 12_000;
const FILE = '/home/ml/app.py';

let server, browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

const { varint, int, len, msg } = pb;

/** Function `fn_i` allocates (i + 1) × 1,000 bytes in one buffer, called from nowhere else. */
const name = (i) => `fn_${String(i).padStart(5, '0')}`;
const bytes = (i) => (i + 1) * 1000;

function bigPprof() {
  const strings = ['', 'space', 'bytes', 'kind', 'buffer', FILE, ...Array.from({ length: ROWS }, (_, i) => name(i))];
  const parts = [len(1, msg(int(1, 1), int(2, 2)))];
  for (let i = 0; i < ROWS; i++) {
    const id = i + 1;
    parts.push(len(2, msg(len(1, varint(id)), len(2, varint(bytes(i))), len(3, msg(int(1, 3), int(2, 4))))));
    parts.push(len(4, msg(int(1, id), len(4, msg(int(1, id), int(2, 10 + i))))));
    parts.push(len(5, msg(int(1, id), int(2, 6 + i), int(4, 5))));
  }
  for (const s of strings) parts.push(len(6, s));
  return msg(...parts);
}

/** The function names of the table's rows in the DOM, in order. */
const domRows = (page) => page.$$eval('table.dm-functions tbody tr[data-function]', (rows) => rows.map((r) => r.dataset.function));

test('12,000 functions: a window of rows in the DOM; sort, filter and scroll reach every row', async () => {
  const dir = scratchDir('tidemark-table-');
  const file = path.join(dir, 'many_functions.prof');
  writeFileSync(file, bigPprof());
  const page = await newPage(browser);
  await openApp(page, server.url);
  await pickFiles(page, [file]);
  await waitForFile(page, 'many_functions.prof');
  await page.click('[data-tool="device-memory"]');
  await page.waitForSelector('[data-testid="device-memory"][data-state="ready"]', { timeout: 60_000 });
  await page.waitForSelector('table.dm-functions tbody tr[data-function]');

  // All rows are counted, few are in the DOM; the first ones are the largest (flat bytes, descending).
  assert.equal(await page.getAttribute('table.dm-functions', 'data-rows'), String(ROWS));
  let shown = await domRows(page);
  assert.ok(shown.length > 20 && shown.length <= 200, `${shown.length} rows in the DOM`);
  assert.deepEqual(shown.slice(0, 3), [name(ROWS - 1), name(ROWS - 2), name(ROWS - 3)]);
  assert.deepEqual(await metric(page, 'flat_bytes', `${name(ROWS - 1)}@${FILE}`), [String(bytes(ROWS - 1))]);
  await shot(page, 'table-12000-top');

  // Scrolling to the end shows the last row (the smallest), with the scroll box's height unchanged.
  const box = page.locator('.vtable:has(table.dm-functions)');
  const height = await box.evaluate((el) => el.clientHeight);
  await box.evaluate((el) => { el.scrollTop = el.scrollHeight; });
  await page.waitForSelector(`table.dm-functions tr[data-function="${name(0)}"]`);
  shown = await domRows(page);
  assert.ok(shown.length <= 200, `${shown.length} rows in the DOM at the end`);
  assert.equal(shown.at(-1), name(0));
  const last = await page.locator(`table.dm-functions tr[data-function="${name(0)}"]`).boundingBox();
  const boxRect = await box.boundingBox();
  assert.ok(last.y + last.height <= boxRect.y + boxRect.height + 1, 'the last row is inside the scroll box');
  assert.ok(last.y >= boxRect.y, 'the last row is visible');
  assert.equal(await box.evaluate((el) => el.clientHeight), height);
  await shot(page, 'table-12000-end');

  // Scrolling to the middle: the rows there, and still only a window of them.
  await box.evaluate((el) => { el.scrollTop = el.scrollHeight / 2; });
  await page.waitForFunction(() => !document.querySelector('table.dm-functions tr[data-function="fn_00000"]'));
  shown = await domRows(page);
  assert.ok(shown.length <= 200 && !shown.includes(name(ROWS - 1)), `${shown.length} rows in the middle`);
  const middle = shown.map((n) => Number(n.slice(3)));
  assert.ok(middle.some((i) => Math.abs(i - ROWS / 2) < 100), middle.join());

  // Sort by function name: A→Z, one arrow, aria-sort on that column only.
  await box.evaluate((el) => { el.scrollTop = 0; });
  await page.click('th[data-sort="Function"] button');
  await page.waitForFunction((first) => document.querySelector('table.dm-functions tbody tr[data-function]')?.dataset.function === first, name(0));
  shown = await domRows(page);
  assert.deepEqual(shown.slice(0, 3), [name(0), name(1), name(2)]);
  assert.equal(await page.getAttribute('th[data-sort="Function"]', 'aria-sort'), 'ascending');
  assert.equal(await page.getAttribute('th[data-sort="FlatBytes"]', 'aria-sort'), 'none');
  const arrows = await page.$$eval('table.dm-functions th .arrow', (a) => a.map((e) => e.textContent).filter((t) => t));
  assert.deepEqual(arrows, ['▲']);
  await page.click('th[data-sort="Function"] button');
  await page.waitForFunction((first) => document.querySelector('table.dm-functions tbody tr[data-function]')?.dataset.function === first, name(ROWS - 1));
  assert.equal(await page.getAttribute('th[data-sort="Function"]', 'aria-sort'), 'descending');

  // Filter: the rows whose name holds "fn_0999" (fn_09990 … fn_09999), sorted as chosen.
  await page.fill('[data-testid="dm-filter"]', 'FN_0999');
  await page.waitForFunction(() => document.querySelector('table.dm-functions')?.dataset.rows === '10');
  shown = await domRows(page);
  assert.deepEqual(shown, Array.from({ length: 10 }, (_, k) => name(9999 - k)));
  await shot(page, 'table-12000-filtered');
  await page.fill('[data-testid="dm-filter"]', '');
  await page.waitForFunction((n) => document.querySelector('table.dm-functions')?.dataset.rows === n, String(ROWS));

  // Dark theme, the same table.
  await page.click('[data-testid="theme-toggle"]');
  await shot(page, 'table-12000-dark');
  assert.deepEqual(page.errors, []);
});

// The op-row links on the device op tables (read in place from ../shared/fixtures/device, skipped
// with a note when absent): on the TPU v6e trace, an HLO op's "occurrences" opens the Trace Viewer
// searching for exactly that op (`="name"`, in the box, marked "exact" and kept in the URL) with as
// many matches as the row's occurrences and the first one framed, and its "buffers" the Memory Viewer
// on the op's module; typed by hand, the same name matches within names again. The Op Profile card
// and the roofline table offer the same links.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { DEVICE, deviceSkip, serve, launch, newPage, openApp, pickFiles, waitForFile, selectFile, metric, shot } from './harness.mjs';

const TPU = path.join(DEVICE, 'jax_tpu_v6e_inference/tpu_v6e_inference');
const absent = deviceSkip(`${TPU}.xplane.pb`);
if (absent) console.log(`# op_links: ${absent}; its tests are skipped`);

let server, browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

const one = async (page, name, key) => {
  const v = await metric(page, name, key);
  assert.equal(v.length, 1, `${name}[${key}]: ${JSON.stringify(v)}`);
  return v[0];
};

async function openTrace(page) {
  await openApp(page, server.url);
  await pickFiles(page, [`${TPU}.xplane.pb`]);
  await waitForFile(page, 'tpu_v6e_inference.xplane.pb');
  await selectFile(page, 'tpu_v6e_inference.xplane.pb');
}

async function openTab(page, tool, testid) {
  await page.click(`.tab[data-tool="${tool}"]`);
  await page.waitForSelector(`[data-testid="${testid}"][data-state="ready"]`, { timeout: 60_000 });
}

test('TPU v6e: an HLO op\'s occurrences open the Trace Viewer on its matches', { skip: absent }, async () => {
  const page = await newPage(browser);
  await openTrace(page);
  await openTab(page, 'hlo-stats', 'hlo-stats');
  const first = 'table.hlo-table tbody tr[data-op]';
  await page.waitForSelector(first);
  const op = await page.$eval(first, (tr) => tr.getAttribute('data-op'));
  const name = op.slice(op.indexOf('/') + 1);
  const occurrences = Number(await one(page, 'occurrences', op));
  assert.ok(await page.$(`${first} [data-testid="op-show-buffers"]`), 'the op\'s module is in the trace: buffers offered');
  await shot(page, 'hlo-stats-links');
  await page.click(`${first} [data-testid="op-show-occurrences"]`);
  await page.waitForSelector('[data-metric="search_match_count"]', { timeout: 60_000 });
  assert.equal(await page.inputValue('[data-testid="trace-search"]'), `="${name}"`);
  assert.equal(Number(await one(page, 'search_match_count')), occurrences, 'the op\'s runs, as many as the row counts');
  assert.ok(await page.isVisible('[data-testid="search-exact"]'), 'marked exact');
  await page.waitForFunction((q) => location.hash.includes(`search=${q}`), encodeURIComponent(`="${name}"`));
  await page.waitForFunction(() => /^1 of/.test(document.querySelector('[data-testid="search-status"]').textContent));
  await shot(page, 'hlo-stats-occurrences');
  // Typed by hand, the name matches within names: `copy-done.4` is in no other name, `copy-done` is.
  const base = name.replace(/\.\d+$/, '');
  await page.fill('[data-testid="trace-search"]', base);
  await page.press('[data-testid="trace-search"]', 'Tab');
  await page.waitForFunction(() => !document.querySelector('[data-testid="search-exact"]'));
  await page.waitForFunction((n) => Number(document.querySelector('[data-metric="search_match_count"]')?.dataset.value) > n, occurrences);
  assert.deepEqual(page.errors, []);
});

test('TPU v6e: the Op Profile card and the roofline table link to an op\'s occurrences', { skip: absent }, async () => {
  const page = await newPage(browser);
  await openTrace(page);
  await openTab(page, 'roofline-model', 'roofline');
  await page.waitForSelector('table.roofline-table [data-testid="op-show-occurrences"]');
  await openTab(page, 'op-profile', 'op-profile');
  // Select an op of the tree (its card then stays when the pointer leaves), and follow its link.
  const op = await page.waitForSelector('.opp-row.op');
  const name = await op.getAttribute('data-name');
  await op.click();
  await page.waitForSelector(`[data-testid="opp-card"] [data-metric="card_name"][data-value="${name}"]`);
  await page.waitForSelector('[data-testid="opp-card"] [data-testid="op-show-buffers"]');
  await shot(page, 'op-profile-links');
  await page.click('[data-testid="opp-card"] [data-testid="op-show-occurrences"]');
  await page.waitForSelector('[data-metric="search_match_count"]', { timeout: 60_000 });
  assert.equal(await page.inputValue('[data-testid="trace-search"]'), `="${name}"`);
  assert.ok(Number(await one(page, 'search_match_count')) > 0, 'the op\'s events match');
  assert.deepEqual(page.errors, []);
});

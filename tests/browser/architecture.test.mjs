// The tool pattern as a user meets it: a view asks the engine once per change of what it shows —
// never because another file loaded beside it — and files are told apart by their path, so the same
// host file name in two runs opens twice. Requests are counted by wrapping the page's
// `Worker.prototype.postMessage` before the app starts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { serve, launch, newPage, openApp, pickFiles, waitForFile, selectFile, shot, fixture } from './harness.mjs';
import { scratchDir } from './support/scratch.mjs';

const D1 = fixture('tf/d1_tf_keras_bfc/d1_tf_keras_bfc.xplane.pb.gz');
const D2 = fixture('tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz');

let server, browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

/** A page whose requests to the engine are recorded in `window.__requests` as `{type, file_id}`. */
async function countingPage() {
  const page = await newPage(browser);
  await page.addInitScript(() => {
    window.__requests = [];
    const post = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function (msg, ...rest) {
      try {
        const body = JSON.parse(Array.isArray(msg) ? msg[0] : msg).body;
        if (body) window.__requests.push({ type: body.type, file_id: body.file_id });
      } catch { /* the bundle's boot message, not a request */ }
      return post.call(this, msg, ...rest);
    };
  });
  await openApp(page, server.url);
  return page;
}

const requests = (page) => page.evaluate(() => window.__requests.splice(0));
const ofType = (reqs, type) => reqs.filter((r) => r.type === type);

async function showTool(page, slug, ready) {
  await page.click(`.tab[data-tool="${slug}"]`);
  await page.waitForSelector(ready, { timeout: 60_000 });
}

const MP_READY = '[data-testid="memory-summary"]';
const DETAILS_READY = '[data-metric="plane_event_count"]';
const MV_READY = '.mv-module, [data-testid="mv-unavailable"], [data-testid="mv-no-modules"]';

test('opening a second file sends no request for the Memory Profile shown; a tool switch sends at most one', async () => {
  const page = await countingPage();
  await pickFiles(page, [D2]);
  await waitForFile(page, path.basename(D2));
  await selectFile(page, path.basename(D2));
  await showTool(page, 'memory-profile', MP_READY);
  const first = await requests(page);
  assert.equal(ofType(first, 'memory_profile').length, 1, JSON.stringify(first));
  const d2 = ofType(first, 'memory_profile')[0].file_id;

  // A second file loads (with its progress ticks) while the first one's Memory Profile is shown.
  await pickFiles(page, [D1]);
  await waitForFile(page, path.basename(D1));
  await page.waitForTimeout(300);
  const during = await requests(page);
  assert.deepEqual(during.map((r) => r.type), ['open'], JSON.stringify(during));
  assert.equal(await page.locator(MP_READY).count(), 1, 'the Memory Profile stays on screen');

  // Back and forth between two tools: one request per switch to the Memory Profile, none to the
  // File details (its figures came with the file).
  for (let i = 0; i < 3; i++) {
    await showTool(page, 'file-details', DETAILS_READY);
    assert.deepEqual(await requests(page), [], 'switching to File details asks nothing');
    await showTool(page, 'memory-profile', MP_READY);
    assert.deepEqual(await requests(page), [{ type: 'memory_profile', file_id: d2 }], 'one request per switch');
  }
  // Between the Memory Profile and the Memory Viewer: one request each way.
  for (let i = 0; i < 2; i++) {
    await showTool(page, 'memory-viewer', MV_READY);
    assert.equal((await requests(page)).length, 1, 'one request for the Memory Viewer');
    await showTool(page, 'memory-profile', MP_READY);
    assert.equal((await requests(page)).length, 1, 'one request for the Memory Profile');
  }
  assert.deepEqual(page.errors, []);
});

test('the same host file name in two runs opens as two files, each named by its path', async () => {
  const logdir = path.join(scratchDir('tidemark-runs-'), 'logs');
  for (const [run, src] of [['run1', D1], ['run2', D2]]) {
    const dir = path.join(logdir, 'plugins/profile', run);
    mkdirSync(dir, { recursive: true });
    copyFileSync(src, path.join(dir, 'ml-host.xplane.pb.gz'));
  }
  const page = await countingPage();
  await page.setInputFiles('[data-testid="folder-input"]', logdir);
  const paths = ['logs/plugins/profile/run1/ml-host.xplane.pb.gz', 'logs/plugins/profile/run2/ml-host.xplane.pb.gz'];
  for (const p of paths) await waitForFile(page, p);
  // Both listed, with as much of their paths as tells them apart (the base names repeat).
  const labels = await page.$$eval('.file-row .file-name', (els) => els.map((e) => e.textContent));
  assert.deepEqual(labels, ['run1/ml-host.xplane.pb.gz', 'run2/ml-host.xplane.pb.gz']);
  // Each opens its own trace: the Memory Profile of run1 is d1's, of run2 d2's.
  const ids = [];
  for (const p of paths) {
    await page.click(`.file-row[data-file="${p}"]`);
    await showTool(page, 'memory-profile', `article[data-file="${p}"] ${MP_READY}`);
    ids.push(await page.$eval('[data-metric="snapshot_count"]', (e) => e.dataset.value));
    assert.match(decodeURIComponent(await page.evaluate(() => location.hash)), new RegExp(`file=${p.replace(/[.()]/g, '\\$&')}`));
  }
  assert.notEqual(ids[0], ids[1], 'two different traces');
  await shot(page, 'architecture-two-runs');
  assert.deepEqual(page.errors, []);
});

test('the tools are listed by group down the side; number keys and [ ] follow that order', async () => {
  const page = await countingPage();
  await pickFiles(page, [D2]);
  await waitForFile(page, path.basename(D2));
  await selectFile(page, path.basename(D2));
  const nav = await page.$$eval('.tool-nav .tool-group', (groups) =>
    groups.map((g) => ({ group: g.dataset.group, tools: [...g.querySelectorAll('.tab')].map((t) => t.dataset.tool) })));
  const order = nav.flatMap((g) => g.tools);
  assert.equal(new Set(order).size, order.length, 'each tool once');
  assert.ok(nav.some((g) => g.group === 'Memory' && g.tools.includes('memory-profile')), JSON.stringify(nav));
  const selected = () => page.$eval('.tab[aria-selected="true"]', (t) => t.dataset.tool);
  await page.keyboard.press('2');
  assert.equal(await selected(), order[1]);
  await page.keyboard.press(']');
  assert.equal(await selected(), order[2]);
  await page.keyboard.press('[');
  await page.keyboard.press('[');
  assert.equal(await selected(), order[0]);
  await page.keyboard.press('[');
  assert.equal(await selected(), order[order.length - 1], 'wraps around');
  await shot(page, 'tool-nav');
  await page.close();
});

// The notebook package, end to end: the notebook that tests/notebook/run.py executed with a real Jupyter
// kernel and converted to HTML (target/notebook/executed.html) opened from disk with the network off.
// Each `tidemark.show` output draws the app with its profiles: the CNN trace on its Overview with
// XProf's average step time, the pprof series on Device memory, a trace `tidemark.trace` recorded on the
// Trace Viewer; the bad paths say why in one sentence; and Tidemark fetches nothing from anywhere.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, launch, newPage, shot, fixture } from './harness.mjs';

const EXECUTED = path.join(ROOT, 'target/notebook/executed.html');
const ORACLE = JSON.parse(readFileSync(fixture('tf/d2_tf_cnn/d2_tf_cnn.overview_page.json')).toString());
// scripts/test.sh makes the executed notebook first; under CI its absence is a failure, not a skip.
const ABSENT = existsSync(EXECUTED) ? false : `${path.relative(ROOT, EXECUTED)} is absent (scripts/wheel.sh, then python3 tests/notebook/run.py)`;
if (ABSENT && process.env.CI === 'true') throw new Error(`${ABSENT} and CI=true`);

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('an executed notebook shows each profile inline, offline, with the engine\'s figures', { skip: ABSENT }, async () => {
  const page = await newPage(browser);
  // What Tidemark's frames ask for; the notebook's own page (nbconvert's template) asks the web for
  // require.js and MathJax, which is nbconvert's doing and fails offline.
  const framed = [];
  page.on('request', (r) => { if (r.frame() !== page.mainFrame()) framed.push(r.url()); });
  await page.context().setOffline(true);
  await page.goto(pathToFileURL(EXECUTED).href);
  const frames = await page.$$('[data-testid="tidemark-output"] iframe');
  assert.equal(frames.length, 3, 'three cells show a page');

  // The CNN trace, on the tool the cell asked for: XProf's average step time, one decimal as it writes it.
  const trace = await frames[0].contentFrame();
  await trace.waitForSelector('.tab[data-tool="overview-page"][aria-selected="true"]', { timeout: 60_000 });
  const avg = await trace.waitForSelector('[data-testid="overview-page"][data-state="ready"] [data-metric="step_time_avg_ms"]', { timeout: 60_000 });
  assert.equal(Number(await avg.getAttribute('data-value')).toFixed(1), ORACLE[1].p.steptime_ms_average);

  // The pprof series, with no tool asked for: where a drop of it lands, Device memory.
  const series = await frames[1].contentFrame();
  await series.waitForSelector('.tab[data-tool="device-memory"][aria-selected="true"]', { timeout: 60_000 });
  assert.equal(await series.$$eval('.file-row[data-state="ready"]', (rows) => rows.length), 9);

  // What `tidemark.trace` recorded around a JAX computation, on the tool the cell asked for.
  const recorded = await frames[2].contentFrame();
  await recorded.waitForSelector('.tab[data-tool="trace-viewer"][aria-selected="true"]', { timeout: 60_000 });
  await recorded.waitForSelector('.file-row[data-state="ready"]', { timeout: 60_000 });

  // Bad input: the cells' one sentence each, no traceback.
  const errors = await page.$$eval('[data-testid="tidemark-error"]', (es) => es.map((e) => e.textContent));
  assert.equal(errors.length, 3, errors.join('\n'));
  assert.equal(errors[0], 'tidemark: /no/such/profile.xplane.pb: no such file or folder');
  assert.equal(await page.$$eval('.jp-OutputArea-output pre', (ps) => ps.filter((p) => /Traceback/.test(p.textContent)).length), 0);

  await frames[0].scrollIntoViewIfNeeded();
  await shot(page, 'notebook');
  const outside = framed.filter((u) => !/^(file|blob|data|about):/.test(u));
  assert.deepEqual(outside, [], 'Tidemark fetched nothing');
  const template = page.requests.filter((u) => /^https?:/.test(u) && !framed.includes(u));
  assert.ok(template.every((u) => /cdnjs\.cloudflare\.com\/ajax\/libs\/(require\.js|mathjax)\//.test(u)), template.join('\n'));
  assert.deepEqual(page.errors.filter((e) => !/^Failed to load resource: net::ERR_(INTERNET_DISCONNECTED|NAME_NOT_RESOLVED)/.test(e)), []);
});

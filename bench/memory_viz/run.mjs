// Times PyTorch's memory_viz loading a snapshot in headless Chromium: from the call that fetches it to
// the Active Memory Timeline's polygons in the page. Usage: node run.mjs FILE (FILE in this folder).
import { chromium } from 'playwright-core';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
const dir = path.dirname(new URL(import.meta.url).pathname);
const types = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript' };
const server = http.createServer((req, res) => {
  const p = path.join(dir, decodeURIComponent(req.url.split('?')[0]));
  if (!fs.existsSync(p)) { res.writeHead(404); return res.end(); }
  res.writeHead(200, { 'content-type': types[path.extname(p)] || 'application/octet-stream' });
  fs.createReadStream(p).pipe(res);
}).listen(0);
const port = server.address().port;
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'] });
const page = await browser.newPage();
let crashed = false;
page.on('crash', () => { crashed = true; });
page.on('pageerror', (e) => console.error('pageerror', e.message));
await page.goto(`http://127.0.0.1:${port}/index.html`);
await page.waitForFunction(() => window.memvizReady);
const file = process.argv[2];
await page.evaluate((f) => window.memvizLoad(f), file);
try {
  await page.waitForFunction(() => document.querySelectorAll('svg polygon').length > 0, null, { timeout: 600_000, polling: 200 });
  const ms = await page.evaluate(() => performance.now() - window.memvizStart);
  const polys = await page.evaluate(() => document.querySelectorAll('svg polygon').length);
  const heap = await page.evaluate(() => performance.memory ? performance.memory.usedJSHeapSize : 0);
  console.log(JSON.stringify({ file, ms: Math.round(ms), polygons: polys, js_heap_mb: Math.round(heap / 1e6) }));
} catch (e) {
  console.log(JSON.stringify({ file, failed: crashed ? 'the page crashed' : String(e.message).split('\n')[0] }));
}
await browser.close();
server.close();

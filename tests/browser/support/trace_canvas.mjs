// The Trace Viewer's canvas as the browser tests read it: its box and data attributes, waiting for a
// window to be drawn, and hovering a counter track until its tooltip shows a figure.

/** The canvas's data attributes and its box. */
export async function canvas(page) {
  return page.$eval('[data-testid="trace-canvas"]', (el) => {
    const r = el.getBoundingClientRect();
    const d = el.dataset;
    return {
      x: r.x, y: r.y, w: r.width, h: r.height, spans: Number(d.spans), visible: Number(d.visibleEvents),
      start: Number(d.windowStartPs), end: Number(d.windowEndPs), loading: d.loading === 'true', scrollTop: Number(d.scrollTop),
      selectedFlows: Number(d.selectedFlows),
    };
  });
}

/** Waits until the spans of the current window are in and drawn. */
export async function settled(page) {
  await page.waitForFunction(() => {
    const el = document.querySelector('[data-testid="trace-canvas"]');
    return el && el.dataset.loading === 'false' && Number(el.dataset.spans) > 0;
  }, null, { timeout: 60_000 });
  await page.waitForTimeout(100);
  return canvas(page);
}

/** Scrolls counter track `k` (its `top` and `height` in the tracks) into view and moves the mouse
 * along it, from `from` twentieths of the width, until the tooltip shows `metric`; whether it did. */
export async function hoverCounter(page, k, metric, from) {
  await page.$eval('.tv-tracks', (el, top) => { el.scrollTop = Math.max(0, top - 100); }, k.top);
  const c = await settled(page);
  const ky = c.y + k.top - c.scrollTop + k.height / 2;
  for (let i = from; i < 20; i++) {
    await page.mouse.move(c.x + (c.w * i) / 20, ky);
    const shown = await page.waitForSelector(`[data-testid="counter-tooltip"] [data-metric="${metric}"]`, { timeout: 1000 }).then(() => true, () => false);
    if (shown) return true;
  }
  return false;
}

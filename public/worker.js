// The engine's web worker: it runs the same wasm module as the page, which sees it is in a worker and
// serves engine requests instead of mounting the UI (see src/worker.rs).
import init from './tidemark-web.js';
// The exports stay reachable as `self.tidemarkWasm`, so that benchmarks can read the wasm memory's size.
self.tidemarkWasm = await init({ module_or_path: new URL('./tidemark-web_bg.wasm', import.meta.url) });

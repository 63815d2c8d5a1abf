// The engine's web worker: it runs the same wasm module as the page, which sees it is in a worker and
// serves engine requests instead of mounting the UI (see src/worker.rs). Its first message is the page's
// compiled module (`{ module }`, see `ui::engine_client::new_worker`): instantiated here, not compiled
// again. Without one it fetches and compiles the wasm itself. (A listener, not `onmessage`: the engine
// sets `onmessage` once it runs, which is how a test knows it has started.)
import init from './tidemark-web.js';
self.addEventListener('message', async (e) => {
  const module_or_path = e.data?.module ?? new URL('./tidemark-web_bg.wasm', import.meta.url);
  // The exports stay reachable as `self.tidemarkWasm`, so that benchmarks can read the wasm memory's size.
  self.tidemarkWasm = await init({ module_or_path });
}, { once: true });

// The engine's web worker. It runs the engine's own wasm module (`tidemark-engine`, src/bin/
// tidemark-engine.rs: the decoders and analyses, built for speed), not the page's: fetched and compiled
// here, on the worker's thread, so the page's thread never handles its bytes. Once started, the engine
// sets `onmessage` (which is how a test knows it has started) and posts `Ready`; the page sends no
// request before that (see `ui::engine_client`).
import init from './tidemark-engine.js';
// The exports stay reachable as `self.tidemarkWasm`, so that benchmarks can read the wasm memory's size.
self.tidemarkWasm = await init({ module_or_path: new URL('./tidemark-engine_bg.wasm', import.meta.url) });

// Temporary folders for the browser tests, removed when the test file ends: one `after` hook on the
// file's root, registered when this module is first imported (at the top of a test file), removes
// every folder made, whether the tests passed, failed or timed out; whatever is left when node exits
// (an interrupted run) goes too.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after } from 'node:test';

/** Folders made and not yet removed. */
const live = new Set();

function removeAll() {
  for (const dir of live) rmSync(dir, { recursive: true, force: true });
  live.clear();
}

after(removeAll);
process.once('exit', removeAll);

/** A fresh folder under the system's temporary folder (`<prefix>XXXXXX`), removed after the file's
 *  last test. */
export function scratchDir(prefix = 'tidemark-') {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  live.add(dir);
  return dir;
}

// The browser tests' temporary folders (support/scratch.mjs) are gone when a test file ends: a
// child test file makes folders at its top, in a `before` hook and in its tests (one of which
// fails), writes into them and prints where they are; once it has exited, none of them is left.
// No browser needed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './harness.mjs';
import { scratchDir } from './support/scratch.mjs';

const CHILD = `
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { scratchDir } from ${JSON.stringify(pathToFileURL(path.join(ROOT, 'tests/browser/support/scratch.mjs')).href)};
const made = (dir) => { writeFileSync(path.join(dir, 'f.bin'), 'x'); console.log('SCRATCH ' + dir); return dir; };
const top = made(scratchDir('tidemark-scratch-top-'));
let early;
before(() => { early = made(scratchDir('tidemark-scratch-before-')); });
test('made in a test, kept until the file ends', () => {
  const dir = made(scratchDir('tidemark-scratch-test-'));
  assert.ok(existsSync(top) && existsSync(early) && existsSync(dir));
});
test('a failing test still cleans up', () => {
  made(scratchDir('tidemark-scratch-fail-'));
  throw new Error('fails on purpose');
});
`;

test('scratch folders are removed when the test file ends, passing or failing', () => {
  const child = path.join(scratchDir('tidemark-scratch-child-'), 'child.test.mjs');
  writeFileSync(child, CHILD);
  // A test file of its own, not one inside this run (node:test marks its children in the environment).
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const run = spawnSync(process.execPath, ['--test', child], { encoding: 'utf8', env });
  const out = run.stdout + run.stderr;
  const dirs = [...out.matchAll(/SCRATCH (\S+)/g)].map((m) => m[1]);
  assert.equal(dirs.length, 4, out);
  assert.notEqual(run.status, 0, 'the child has a failing test');
  assert.match(out, /# pass 1/);
  for (const dir of dirs) assert.equal(existsSync(dir), false, `${dir} is left after the child ended`);
});

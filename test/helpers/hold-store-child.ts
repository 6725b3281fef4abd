/**
 * Child process for the private-copy tests: opens the store named in argv[2] (a -wal without -shm, so
 * it is read through a private copy), prints the copy's directory, then `wait`s for a signal, `exit`s
 * normally, or `throw`s.
 */
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { openSqliteReader } from '../../src/store/sqlite/reader.js';

const [, , path, then] = process.argv;
// the test runner loads every file under dist/test: without a store to hold, do nothing
if (path !== undefined) {
  const store = openSqliteReader(path);
  const copies = readdirSync(tmpdir()).filter((n) => n.startsWith(`convsearch-copy-${process.pid}-`));
  process.stdout.write(`${store.mode} ${copies.join(',')}\n`);
  if (then === 'wait') setInterval(() => {}, 1000);
  else if (then === 'throw') throw new Error('boom');
}

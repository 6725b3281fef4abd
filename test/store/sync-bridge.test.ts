/** The synchronous bridge to a driver thread: replies in order, requests sent ahead, failures as StoreErrors, never a hang. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { StoreError } from '../../src/store/errors.js';
import { ReadAhead } from '../../src/store/read-ahead.js';
import { SyncBridge } from '../../src/store/sync-bridge.js';

const DRIVER = new URL('../helpers/echo-driver.js', import.meta.url);

describe('SyncBridge', () => {
  it('answers synchronously, in order, with structured values', () => {
    const b = new SyncBridge(DRIVER, {}, 'test-store');
    assert.deepEqual(b.call({ op: 'echo', value: { a: [1, 'x', null] } }), { a: [1, 'x', null] });
    assert.equal(b.call({ op: 'echo', value: 2, ms: 30 }), 2);
    b.close();
    assert.throws(() => b.call({ op: 'echo' }), /closed/);
  });

  it("a thread started ahead (prestart) is taken by the next bridge, opened with that bridge's settings, and handed back when closed cleanly", () => {
    const spare = SyncBridge.prestart(DRIVER);
    assert.equal(SyncBridge.prestart(DRIVER), spare, 'one spare per driver');
    const refused = new SyncBridge(DRIVER, { refuse: true }, 'pg');
    assert.throws(() => refused.call({ op: 'echo' }), /pg: connection refused by the test/);
    const held = SyncBridge.prestart(DRIVER);
    assert.notEqual(held, spare, 'the first spare was taken');
    refused.close(); // there is a spare already: its thread ends
    const b = new SyncBridge(DRIVER, {}, 's');
    assert.equal(b.call({ op: 'thread' }), held);
    assert.equal(b.call({ op: 'echo', value: 'opened' }), 'opened');
    b.close();
    assert.equal(SyncBridge.prestart(DRIVER), held, 'a cleanly closed bridge hands its thread back');
    const c = new SyncBridge(DRIVER, {}, 's');
    assert.equal(c.call({ op: 'thread' }), held, 'and the next bridge reuses it');
    assert.equal(c.call({ op: 'echo', value: 'again' }), 'again', 'with a session of its own');
    const other = new SyncBridge(DRIVER, {}, 's');
    assert.notEqual(other.call({ op: 'thread' }), held, 'no spare left: a thread of its own');
    other.close();
    c.close();
  });

  it('a thread started ahead with settings opens that session ahead, once: the bridge with those settings takes it; other settings end it', () => {
    const ahead = SyncBridge.prestart(DRIVER, { name: 'ahead' });
    assert.equal(SyncBridge.prestart(DRIVER, { name: 'ahead' }), ahead, 'one spare, opened once');
    const b = new SyncBridge(DRIVER, { name: 'ahead' }, 's');
    assert.equal(b.call({ op: 'thread' }), ahead);
    assert.deepEqual(b.call({ op: 'session' }), { config: { name: 'ahead' }, live: 1 }, 'the session opened ahead, not a second one');
    b.close(); // handed back, its session closed
    assert.equal(SyncBridge.prestart(DRIVER, { name: 'first' }), ahead, 'the spare opens the next settings told');
    const c = new SyncBridge(DRIVER, { name: 'second' }, 's');
    assert.notEqual(c.call({ op: 'thread' }), ahead, 'a spare opened for other settings is not used');
    assert.deepEqual(c.call({ op: 'session' }), { config: { name: 'second' }, live: 1 });
    c.close();
    const d = new SyncBridge(DRIVER, { name: 'first' }, 's');
    assert.notEqual(d.call({ op: 'thread' }), ahead, 'nor kept: it ended');
    d.close();
  });

  it('sends ahead: a reply is taken later, or dropped when a later one is taken first', () => {
    const b = new SyncBridge(DRIVER, {}, 's');
    const t1 = b.post({ op: 'echo', value: 'one', ms: 20 });
    const t2 = b.post({ op: 'echo', value: 'two' });
    assert.ok(b.pending(t1) && b.pending(t2));
    assert.equal(b.take(t2), 'two');
    assert.equal(b.pending(t1), false);
    assert.throws(() => b.take(t1), /already taken/);
    const ahead = new ReadAhead(b);
    ahead.send('k', { op: 'echo', value: 'sent ahead' });
    assert.equal(ahead.fetch('k', { op: 'echo', value: 'fetched now' }), 'sent ahead');
    ahead.send('k', { op: 'echo', value: 'stale' });
    assert.equal(ahead.fetch('other', { op: 'echo', value: 'fetched now' }), 'fetched now');
    b.close();
  });

  it('turns driver failures into one-line StoreErrors naming the store', () => {
    const b = new SyncBridge(DRIVER, {}, 'redis://h/0');
    assert.throws(
      () => b.call({ op: 'fail' }),
      (e: unknown) => e instanceof StoreError && e.message === 'redis://h/0: failed on purpose',
    );
    assert.equal(b.call({ op: 'echo', value: 'still usable' }), 'still usable');
    b.close();
    const refused = new SyncBridge(DRIVER, { refuse: true }, 'pg');
    assert.throws(() => refused.call({ op: 'echo' }), /pg: connection refused by the test/);
    refused.close();
  });

  it('a driver thread that never gets going fails the call after its heartbeat stops, instead of hanging', () => {
    // it never beats, however long it is given: the shortest wait is the first poll's (its thread spins meanwhile)
    const b = new SyncBridge(new URL('../helpers/stuck-driver.js', import.meta.url), {}, 's', 1);
    const t0 = Date.now();
    assert.throws(() => b.call({ op: 'echo' }), /driver thread is not running/);
    assert.ok(Date.now() - t0 < 10_000);
    b.close();
  });

  it('starts under node -e with --input-type=module (flags a worker cannot take are dropped)', () => {
    const bridge = new URL('../../src/store/sync-bridge.js', import.meta.url).href;
    const code = `const { SyncBridge } = await import(${JSON.stringify(bridge)}); const b = new SyncBridge(new URL(${JSON.stringify(DRIVER.href)}), {}, 's', 5000); console.log(b.call({ op: 'echo', value: 'from -e' })); b.close();`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.stdout.trim(), 'from -e', r.stderr);
  });

  it('runs what waits for the driver threads once each one started has answered once or ended (a fresh process)', () => {
    const bridge = new URL('../../src/store/sync-bridge.js', import.meta.url).href;
    const code = `const { SyncBridge, whenThreadsUp } = await import(${JSON.stringify(bridge)});
const driver = new URL(${JSON.stringify(DRIVER.href)});
const seen = [];
whenThreadsUp(() => seen.push('none started'));
const a = new SyncBridge(driver, {}, 'a');
const b = new SyncBridge(driver, {}, 'b');
SyncBridge.prestart(driver, { name: 'ahead' });
whenThreadsUp(() => seen.push('up'));
a.call({ op: 'echo' });
seen.push('a answered');
b.close();
seen.push('b ended');
new SyncBridge(driver, { name: 'other' }, 'c').close();
seen.push('the spare ended');
whenThreadsUp(() => seen.push('then at once'));
a.close();
console.log(JSON.stringify(seen));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', timeout: 30_000 });
    assert.deepEqual(JSON.parse(r.stdout), ['none started', 'a answered', 'b ended', 'up', 'the spare ended', 'then at once'], r.stderr);
  });

  it('a driver thread that dies mid-request fails the call instead of hanging', () => {
    const b = new SyncBridge(DRIVER, {}, 's');
    assert.throws(
      () => b.call({ op: 'crash' }),
      (e: unknown) => e instanceof StoreError && /stray error event|stopped/.test(e.message),
    );
    assert.throws(() => b.call({ op: 'echo', value: 1 }), StoreError);
    b.close();
  });
});

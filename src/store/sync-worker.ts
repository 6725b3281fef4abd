/**
 * The driver thread of a {@link SyncBridge}: imports the driver module named by the main thread, opens
 * a session at once and answers each request with one reply, counted in the shared signal
 * so that the blocked main thread wakes. After a close it waits for the next `open` (a later bridge
 * reuses the thread). Never run on the main thread.
 */
import { fileURLToPath } from 'node:url';
import { isMainThread, workerData } from 'node:worker_threads';
import { runCached } from './cached-module.js';
import {
  HEARTBEAT,
  HEARTBEAT_MS,
  REPLIES,
  STOPPED,
  type BridgeData,
  type DriverReply,
  type DriverSession,
  type OpenDriver,
  type OpenMessage,
} from './sync-bridge.js';

function errorText(e: unknown): string {
  const text = e instanceof Error ? e.message || e.name : String(e);
  // one line: server messages may carry detail lines
  return text.replace(/\s*[\r\n]+\s*/g, ' ');
}

if (!isMainThread) {
  const data = workerData as BridgeData;
  const signal = new Int32Array(data.signal);
  const port = data.port;
  // alive: the main thread, blocked in Atomics.wait, cannot see an 'exit' event; it watches this instead
  Atomics.add(signal, HEARTBEAT, 1);
  setInterval(() => Atomics.add(signal, HEARTBEAT, 1), HEARTBEAT_MS);
  const reply = (r: DriverReply): void => {
    port.postMessage(r);
    Atomics.add(signal, REPLIES, 1);
    Atomics.notify(signal, REPLIES);
  };
  const stop = (e: unknown): void => {
    // a crash outside a request (a driver's stray error event): fail the pending call, then stop
    Atomics.store(signal, STOPPED, 1);
    reply({ ok: false, message: errorText(e) });
    process.exit(1);
  };
  process.on('uncaughtException', stop);
  process.on('unhandledRejection', stop);

  // the driver's import starts at once (a spare thread is started before its bridge knows the store);
  // a bundled one is run from its code cache
  const driver = (
    data.driver.endsWith('.cjs') ? Promise.resolve().then(() => runCached(fileURLToPath(data.driver)).exports) : import(data.driver)
  ) as Promise<{ open: OpenDriver }>;
  driver.catch(() => undefined);
  let session: Promise<DriverSession> = Promise.reject(new Error('no session was opened'));
  session.catch(() => undefined);
  // requests are served one at a time, in order (the main thread waits for each anyway)
  let queue: Promise<void> = Promise.resolve();
  // the requests received and not yet taken up, in order (DriverSession.handle's `waiting`)
  const received: unknown[] = [];
  port.on('message', (request: { op?: string }) => {
    if (request.op === 'open') {
      // connect at once, unanswered: the main thread usually has other work before its first request;
      // a failure is reported by the first request, not as an unhandled rejection now
      session = driver.then((m) => m.open((request as OpenMessage).config));
      session.catch(() => undefined);
      return;
    }
    received.push(request);
    queue = queue.then(async () => {
      received.shift();
      try {
        if (request.op === 'close') {
          // the connection ends; the thread stays, for the next bridge on this driver to open another
          await (await session.catch(() => null))?.close();
          session = Promise.reject(new Error('no session was opened'));
          session.catch(() => undefined);
          reply({ ok: true, value: null });
          return;
        }
        reply({ ok: true, value: await (await session).handle(request, received) });
      } catch (e) {
        reply({ ok: false, message: errorText(e) });
      }
    });
  });
}

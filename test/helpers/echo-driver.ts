/** A driver for the SyncBridge tests: echoes after a delay, fails or crashes its thread on request. */
import { threadId } from 'node:worker_threads';
import type { DriverSession } from '../../src/store/sync-bridge.js';

/** Sessions this thread opened and has not closed (a second open without a close would leak one). */
let live = 0;

export async function open(config: unknown): Promise<DriverSession> {
  if ((config as { refuse?: boolean }).refuse) throw new Error('connection refused by the test');
  live++;
  return {
    async handle(request: unknown) {
      const r = request as { op: string; value?: unknown; ms?: number };
      await new Promise((res) => setTimeout(res, r.ms ?? 0));
      if (r.op === 'thread') return threadId;
      if (r.op === 'session') return { config, live };
      if (r.op === 'fail') throw new Error('failed\non purpose');
      if (r.op === 'crash')
        setTimeout(() => {
          throw new Error('stray error event');
        });
      if (r.op === 'crash') return new Promise(() => undefined);
      return r.value;
    },
    async close() {
      live--;
    },
  };
}

import type { SyncBridge } from './sync-bridge.js';

/** Requests in flight at most: enough to keep a server busy while the caller replays a run. */
export const READ_AHEAD_DEPTH = 4;

/**
 * Requests sent ahead on a {@link SyncBridge}: while the caller works through a run, the driver thread
 * already fetches the next runs' first pages (runs are mostly read in corpus order), so server time
 * overlaps the replay. A guess that turns out wrong costs a page read for nothing.
 */
export class ReadAhead {
  /** Key → ticket, in the order sent. */
  private readonly ahead = new Map<string, number>();

  constructor(private readonly bridge: SyncBridge) {}

  /** The reply to `request`: the one sent ahead under `key` when there is one, else fetched now. */
  fetch<T>(key: string, request: unknown): T {
    const ticket = this.ahead.get(key);
    this.ahead.delete(key);
    if (ticket !== undefined && this.bridge.pending(ticket)) {
      // replies come in order: those sent before this one are dropped by taking it
      for (const [k, t] of this.ahead) if (t < ticket) this.ahead.delete(k);
      return this.bridge.take<T>(ticket);
    }
    return this.bridge.call<T>(request);
  }

  /** Sends `request` ahead under `key`, unless it is on its way already or enough are. */
  send(key: string, request: unknown): void {
    for (const [k, t] of this.ahead) if (!this.bridge.pending(t)) this.ahead.delete(k);
    if (this.ahead.has(key) || this.ahead.size >= READ_AHEAD_DEPTH) return;
    this.ahead.set(key, this.bridge.post(request));
  }
}

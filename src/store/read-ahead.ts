import type { SyncBridge } from './sync-bridge.js';

/**
 * One request sent ahead on a {@link SyncBridge}: while the caller works through a run, the driver
 * thread already fetches the next run's first page (runs are mostly read in corpus order), so server
 * time overlaps the replay. A guess that turns out wrong costs one page read for nothing.
 */
export class ReadAhead {
  private ahead: { key: string; ticket: number } | null = null;

  constructor(private readonly bridge: SyncBridge) {}

  /** The reply to `request`: the one sent ahead under `key` when there is one, else fetched now. */
  fetch<T>(key: string, request: unknown): T {
    const a = this.ahead;
    this.ahead = null;
    if (a !== null && a.key === key && this.bridge.pending(a.ticket)) return this.bridge.take<T>(a.ticket);
    return this.bridge.call<T>(request);
  }

  /** Sends `request` ahead under `key`, unless one is already on its way. */
  send(key: string, request: unknown): void {
    if (this.ahead !== null && this.bridge.pending(this.ahead.ticket)) return;
    this.ahead = { key, ticket: this.bridge.post(request) };
  }
}

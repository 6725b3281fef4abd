import { readerContent, type RunCut, type StoreContent } from './content.js';
import type { ConversationMeta } from './conversation-meta.js';
import type { StoreError } from './errors.js';
import type { StoreReader, StoreShare } from './reader.js';

/**
 * What a reader without a file of its own answers (a FileStepStore tree, a server): a stamp that is
 * never null (the view it reads, taken before any snapshot is read: a listing, a transaction's first
 * query, a key-space index), no second connection on the very same state (so one thread), no size to
 * plan an index by, failures that are StoreErrors already, the content digest read through the seam, and
 * no conversation catalog.
 */
export abstract class SeamDefaults {
  abstract stamp(): string;

  private times: { runId: string; bySeq: Map<number, string | null> } | null = null;

  /** One run's snapshot times at a time, read through the seam (asked for only by time filters and sorts, run after run). */
  snapshotTime(runId: string, seq: number): string | null {
    if (this.times?.runId !== runId) {
      const bySeq = new Map<number, string | null>();
      for (const s of (this as unknown as StoreReader).completeSnapshots(runId)) {
        bySeq.set(s.seq, typeof s.timestamp === 'string' ? s.timestamp : null);
      }
      this.times = { runId, bySeq };
    }
    return this.times.bySeq.get(seq) ?? null;
  }

  content(cuts: ReadonlyMap<string, RunCut>): StoreContent {
    return readerContent(this as unknown as StoreReader, cuts);
  }

  /** Upstream keeps a conversation catalog in SQLite only. */
  conversationMeta(_ids: readonly string[] | null): Map<string, ConversationMeta> {
    return new Map();
  }

  byteSize(): number | null {
    return null;
  }

  share(): StoreShare | null {
    return null;
  }

  storeError(_e: unknown): StoreError | null {
    return null;
  }
}

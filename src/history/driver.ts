import { completeDigested, type ContentDigester } from '../store/content.js';
import type { StoreReader } from '../store/reader.js';
import { MediaCache } from './media.js';
import { RunReplayer, type StoredPosition } from './replay.js';
import { ConversationSeeds } from './seeds.js';

/** A run as the driver needs it. */
export interface DriverRun {
  readonly runId: string;
  readonly conversationId: string | null;
}

/** Where a resumed replay starts: the stored record's positions, and the last complete seq they cover. */
export interface ReplayResume {
  readonly positions: readonly StoredPosition[];
  readonly afterSeq: number;
}

/** A run replayed by the driver: its replayer (record, skips) and what it read. */
export interface DrivenRun {
  readonly replayer: RunReplayer;
  /** Complete snapshots read by this replay (only the new ones when resumed). */
  readonly snapshotsRead: number;
  /** The last complete snapshot's seq read, or the resume point when none was new (0: none at all). */
  readonly maxSeq: number;
}

/**
 * The one loop that replays runs of a store, used by the in-memory source, the digests, the index build,
 * its resume and its workers: a run's complete snapshots in seq order into a {@link RunReplayer}, starting
 * from its conversation's last parsed snapshot (a later run mostly repeats it). With a plan (the runs
 * about to be replayed, in order), a conversation's seed is dropped after its last run.
 */
export class ReplayDriver {
  private readonly media: MediaCache;
  private seeds = new ConversationSeeds();

  constructor(
    readonly store: StoreReader,
    /** Keep each record message's stored text ({@link RunReplayer}'s keepJson). */
    private readonly keepJson = false,
  ) {
    this.media = new MediaCache(store);
  }

  /** The conversations of the runs about to be replayed, in order. */
  plan(conversations: Iterable<string | null>): void {
    this.seeds = new ConversationSeeds(conversations);
  }

  /**
   * Replays a run from nothing, or from `resume` on (only the snapshots added since). With `digest`
   * (from nothing, a store with snapshotRows), every row of the run, of any state, is added to it as read.
   */
  replay(run: DriverRun, resume?: ReplayResume, digest?: ContentDigester): DrivenRun {
    const replayer = new RunReplayer(run.runId, this.media, resume?.positions ?? [], this.seeds.seedFor(run.conversationId), this.keepJson);
    let maxSeq = resume?.afterSeq ?? 0;
    const rows = resume
      ? this.store.completeSnapshotsAfter(run.runId, resume.afterSeq)
      : digest && this.store.snapshotRows
        ? completeDigested(this.store.snapshotRows(run.runId), digest)
        : this.store.completeSnapshots(run.runId);
    for (const row of rows) {
      replayer.add(row);
      maxSeq = row.seq;
    }
    this.seeds.done(run.conversationId, replayer.lastSnapshot);
    return { replayer, snapshotsRead: replayer.snapshotsRead, maxSeq };
  }

  /** A planned run replayed elsewhere (another thread): its conversation moves on without a seed from it. */
  skip(run: DriverRun): void {
    this.seeds.done(run.conversationId, null);
  }

  /** The media cache of this store, for parsing snapshots outside a run's replay (interrupted ones). */
  get mediaCache(): MediaCache {
    return this.media;
  }
}

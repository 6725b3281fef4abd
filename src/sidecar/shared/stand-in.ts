import { resolve } from 'node:path';
import type { ConversationMeta } from '../../store/conversation-meta.js';
import type { StoreContent } from '../../store/content.js';
import { StoreError } from '../../store/errors.js';
import type { StoreNotice } from '../../store/notices.js';
import type {
  RunSnapshotStats,
  SnapshotMark,
  SnapshotStateCounts,
  StoreReader,
  StoreRun,
  StoreShare,
  StoreSnapshot,
} from '../../store/reader.js';
import { maskedUrl, postgresTarget, serverKind } from '../../store/server-url.js';
import { IndexedCorpusSource } from '../indexed-source.js';
import { readIndexMeta } from '../meta.js';
import { INDEX_FORMAT } from '../schema.js';
import { ReadSession } from './read-session.js';
import { sharedIndexTarget } from './target.js';

/**
 * A store that cannot be opened (its server down, its file gone), stood in for by its part of the shared
 * index: its runs as the last sync recorded them, and nothing else of the store. A search through the
 * index answers from it, saying the index's age and that the store could not be checked (shared-index.ts);
 * anything that needs the store itself (a replay, snapshots, its catalog's titles, the snapshot time of
 * a message without a timestamp) is not there: reading it fails with the store's own error.
 */
export class IndexStandIn implements StoreReader {
  constructor(
    readonly label: string,
    readonly identity: string,
    /** The store's error: why it could not be read (and what any read of the store here throws). */
    readonly unreachable: StoreError,
    private readonly list: readonly StoreRun[],
  ) {}

  private gone(): never {
    throw this.unreachable;
  }

  /** Thrown when `runs` asks the store for the runs' snapshot counts, which the index does not hold (a sync that did not read them). */
  private noCountsError: StoreError | null = null;
  private get noCounts(): StoreError {
    return (this.noCountsError ??= new StoreError(
      `the index cannot list the runs of ${this.label}: it holds no snapshot counts of them, and the store could not be read (${this.unreachable.message})`,
    ));
  }

  runs(): StoreRun[] {
    return [...this.list];
  }
  runCount(): number {
    return this.list.length;
  }
  completeSnapshots(): Iterable<StoreSnapshot> {
    return this.gone();
  }
  completeSnapshotsAfter(): Iterable<StoreSnapshot> {
    return this.gone();
  }
  completeUpToSeq(): SnapshotMark {
    return this.gone();
  }
  interruptedSnapshots(): Iterable<StoreSnapshot> {
    return this.gone();
  }
  latestSnapshots(): Iterable<StoreSnapshot> {
    return this.gone();
  }
  watermarks(): Map<string, SnapshotMark> {
    return this.gone();
  }
  countsByRun(): Map<string, SnapshotStateCounts> {
    throw this.noCounts;
  }
  lastSteps(): Map<string, number | null> {
    throw this.noCounts;
  }
  runSnapshotStats(): RunSnapshotStats {
    throw this.noCounts;
  }
  snapshotTime(): string | null {
    return null;
  }
  media(): Buffer | null {
    return null;
  }
  conversationMeta(): Map<string, ConversationMeta> {
    return new Map();
  }
  content(): StoreContent {
    return this.gone();
  }
  byteSize(): number | null {
    return null;
  }
  stamp(): string | null {
    return null;
  }
  share(): StoreShare | null {
    return null;
  }
  unchanged(): boolean {
    return true;
  }
  storeError(e: unknown): StoreError | null {
    return e === this.unreachable || (e !== null && e === this.noCountsError) ? (e as StoreError) : null;
  }
  notices(): readonly StoreNotice[] {
    return [];
  }
  close(): void {}
}

/** How the index may have recorded the store `label` names: its identity or its label, as the sync saw them. */
function namesOf(label: string, env: NodeJS.ProcessEnv | undefined): string[] {
  const names = [label];
  const kind = serverKind(label);
  if (kind === null) names.push(resolve(label));
  else
    try {
      names.push(maskedUrl(new URL(label)));
      if (kind === 'postgres') names.push(postgresTarget(label, env).identity);
    } catch {
      // a malformed URL: only as typed
    }
  return [...new Set(names)];
}

/**
 * The stand-in for the store `label` names, which could not be opened (`why`), from the shared index at
 * `value`; null when the index does not hold a finished sync of it (or cannot be read): the store's
 * error then stands.
 */
export function indexStandIn(value: string, label: string, why: StoreError, env?: NodeJS.ProcessEnv): IndexStandIn | null {
  try {
    const target = sharedIndexTarget(value, env);
    return ReadSession.use(target, (session) => {
      const found = session.lookUp(namesOf(label, env));
      if (found === null) return null;
      const { identity, tables } = found;
      const raw = tables.readMeta();
      if (raw.get('format') !== INDEX_FORMAT || raw.get('store') !== identity) return null;
      const meta = readIndexMeta(raw);
      // shown as a reader shows it: a server URL without its password
      const shown = serverKind(label) === null ? label : maskedUrl(new URL(label));
      return new IndexStandIn(shown, identity, why, new IndexedCorpusSource(tables, meta).runs());
    });
  } catch {
    return null;
  }
}

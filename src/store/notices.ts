import type { StoreSnapshot } from './reader.js';

/**
 * What a reader tells of the items the reference skips or tolerates silently (`StoreReader.notices`),
 * which convsearch counts and reports instead of losing them quietly.
 */
export type StoreNoticeKind =
  /** A naive `started_at` among aware ones (Python raises): read as UTC. */
  | 'naive-started-at'
  /** A snapshot listed (index member, file name) whose payload was gone when read: skipped. */
  | 'vanished-snapshot'
  /** A snapshot index entry that is not `<seq>:<state>` or repeats a seq: ignored. */
  | 'foreign-snapshot-entry'
  /** A run listed in an index set whose record has gone (expired): skipped. */
  | 'vanished-run'
  /** A second run record with a run id already seen: ignored. */
  | 'duplicate-run'
  /** A run id whose stored bytes are not UTF-8: read by its bytes, shown with U+FFFD in their place. */
  | 'non-utf8-run-id'
  /** A run whose snapshots cannot be located (a run id that is not a valid FileStepStore directory name). */
  | 'unreachable-run'
  /** A store reached again by another path (a link, `./a.db`, a directory named twice): read once. */
  | 'same-store'
  /** An entry of a directory of stores, named like one, that cannot be read (a dangling link, a FIFO, …): skipped. */
  | 'unreadable-entry'
  /** A row of the conversation catalog whose metadata upstream would reject (or a catalog of another shape): not shown. */
  | 'unreadable-conversation-metadata'
  /** A Postgres table spelled with the exact case of a mixed-case prefix (`"Steps_runs"`): not read, as upstream never reads it. */
  | 'case-twin-table';

export interface StoreNotice {
  readonly kind: StoreNoticeKind;
  readonly runId: string | null;
  readonly seq: number | null;
  readonly detail: string;
}

/** Collects notices once each (a view read twice reports its skips once). */
export class Notices {
  private readonly list: StoreNotice[] = [];
  private readonly seen = new Set<string>();

  add(kind: StoreNoticeKind, runId: string | null, seq: number | null, detail: string): void {
    const key = JSON.stringify([kind, runId, seq, detail]);
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.list.push({ kind, runId, seq, detail });
  }

  notices(): readonly StoreNotice[] {
    return this.list;
  }
}

/**
 * A snapshot that is listed but cannot be read (not UTF-8, not a JSON object, a wrong field type, an
 * unknown state). Its `messages` is null and `problem` says why; the replay skips it with that reason.
 */
export interface UnreadableSnapshot extends StoreSnapshot {
  readonly messages: null;
  readonly problem: string;
}

export function unreadable(seq: number, problem: string): UnreadableSnapshot {
  return { seq, stepIndex: null, timestamp: null, messages: null, problem };
}

import type { RecordMessage } from './replay.js';
import type { InterruptedSnapshot } from './source.js';

/** What one interrupted snapshot held that the run's durable record lacks. */
export interface InterruptedExtra {
  readonly seq: number;
  readonly step: number | null;
  /** Why the snapshot could not be read (then `messages` is empty). */
  readonly reason: string | null;
  /** Messages whose loose key (spec §3.3) is not in the record, with their position in the snapshot. */
  readonly messages: ReadonlyArray<{ readonly position: number; readonly message: RecordMessage }>;
}

/**
 * Interrupted snapshots are never replayed (spec §2.3), so anything they alone carry is not searchable.
 * This lists it, for `show --include-interrupted`, matching messages the way replay overlaps them.
 */
export function beyondRecord(record: readonly RecordMessage[], snapshots: readonly InterruptedSnapshot[]): InterruptedExtra[] {
  const known = new Set(record.map((m) => m.keys.loose));
  return snapshots.map((s) => ({
    seq: s.seq,
    step: s.step,
    reason: s.reason,
    messages: (s.messages ?? []).flatMap((message, position) => (known.has(message.keys.loose) ? [] : [{ position, message }])),
  }));
}

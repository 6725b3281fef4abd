import type { StoreRun } from '../store/reader.js';
import type { RecordMessage } from './replay.js';

/** A run's searchable slice: `record[start:]`, numbered by position in the full record. */
export interface Section {
  readonly run: StoreRun;
  readonly record: readonly RecordMessage[];
  readonly start: number;
}

export function sectionLength(s: Section): number {
  return s.record.length - s.start;
}

/**
 * Cross-run attribution (spec §3.4): in corpus order, a run's section drops the leading prefix of its
 * record that earlier in-scope runs already claimed (strict key), so threaded runs do not repeat
 * inherited history. A `--run` search (`fullRecord`) keeps the whole record. Empty sections are dropped.
 */
export function attributeSections(
  runs: ReadonlyArray<{ run: StoreRun; record: readonly RecordMessage[] }>,
  fullRecord: boolean,
): Section[] {
  const claimed = new Set<string>();
  const sections: Section[] = [];
  for (const { run, record } of runs) {
    const start = fullRecord
      ? 0
      : claimInherited(
          claimed,
          record.map((m) => m.keys.strict),
        );
    if (start < record.length) sections.push({ run, record, start });
  }
  return sections;
}

/**
 * One step of the attribution walk: the length of the leading prefix of `strictKeys` (a run's record)
 * that earlier runs already claimed; then the whole record is claimed for the runs after it.
 */
export function claimInherited(claimed: Set<string>, strictKeys: readonly string[]): number {
  let start = 0;
  while (start < strictKeys.length && claimed.has(strictKeys[start]!)) start++;
  for (const k of strictKeys) claimed.add(k);
  return start;
}

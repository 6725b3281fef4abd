import { readVarints } from './varint.js';
import type { IndexTables } from './tables.js';

const KEY_BYTES = 20;

/**
 * Recomputes cross-run attribution (spec §3.4) for every run from corpus position `fromOrd` on:
 * a run's section starts after the leading prefix of its record that earlier runs already hold,
 * store-wide and within its conversation. Reads the runs' key blobs (with their section starts), never
 * the messages, and the whole row only of a run `rewritten` (its record changed) or whose starts move.
 * Only the keys of the runs from `fromOrd` on are ever looked up, so the earlier runs' keys are scanned
 * for those alone (a 32-bit head first, no string made for a key that cannot be one of them): an
 * appended run costs a scan of the key blobs, not a set of every key. Returns the corpus positions of
 * the rows it rewrote.
 */
export function attribute(t: IndexTables, runCount: number, fromOrd: number, rewritten: ReadonlySet<number>): number[] {
  const wanted = new Set<string>();
  const heads = new Set<number>();
  // from the first run (a build): no earlier run to scan, and no key set to hold twice
  for (const run of fromOrd > 0 ? t.keysAt(fromOrd, runCount) : []) {
    for (let i = 0; i + KEY_BYTES <= run.keys.length; i += KEY_BYTES) {
      wanted.add(run.keys.toString('latin1', i, i + KEY_BYTES));
      heads.add(run.keys.readInt32LE(i));
    }
  }
  const all = new Set<string>();
  const byConv = new Map<string, Set<string>>();
  const convSet = (conv: string | null): Set<string> | null =>
    conv === null ? null : (byConv.get(conv) ?? byConv.set(conv, new Set()).get(conv)!);
  for (const run of t.keysAt(0, fromOrd)) {
    let conv: Set<string> | null | undefined;
    for (let i = 0; i + KEY_BYTES <= run.keys.length; i += KEY_BYTES) {
      if (!heads.has(run.keys.readInt32LE(i))) continue;
      const k = run.keys.toString('latin1', i, i + KEY_BYTES);
      if (!wanted.has(k)) continue;
      all.add(k);
      conv ??= convSet(run.conversation_id);
      conv?.add(k);
    }
  }
  const redo: Array<[runKey: number, startAll: number, startConv: number]> = [];
  for (const run of t.keysAt(fromOrd, runCount)) {
    const keys: string[] = [];
    for (let i = 0; i < run.keys.length; i += KEY_BYTES) keys.push(run.keys.toString('latin1', i, i + KEY_BYTES));
    const conv = convSet(run.conversation_id);
    let startAll = 0;
    while (startAll < keys.length && all.has(keys[startAll]!)) startAll++;
    let startConv = 0;
    while (conv !== null && startConv < keys.length && conv.has(keys[startConv]!)) startConv++;
    // the document length sums follow from the starts and the lengths: unchanged when neither changed
    if (rewritten.has(run.run_key) || startAll !== run.start_all || startConv !== run.start_conv)
      redo.push([run.run_key, startAll, startConv]);
    for (const k of keys) {
      all.add(k);
      conv?.add(k);
    }
  }
  const changed: number[] = [];
  for (const [runKey, startAll, startConv] of redo) {
    const row = t.run(runKey);
    let dlFull = 0;
    let dlAll = 0;
    let dlConv = 0;
    readVarints(row.lengths).forEach((dl, pos) => {
      dlFull += dl;
      if (pos >= startAll) dlAll += dl;
      if (pos >= startConv) dlConv += dl;
    });
    const next = { start_all: startAll, start_conv: startConv, dl_full: dlFull, dl_all: dlAll, dl_conv: dlConv };
    if ((Object.keys(next) as Array<keyof typeof next>).some((k) => row[k] !== next[k])) {
      t.putRun(Object.assign(row, next));
      changed.push(row.ord);
    }
  }
  return changed;
}

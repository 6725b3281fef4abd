import { readVarints } from './varint.js';
import type { IndexTables, RunRow } from './tables.js';

/**
 * Recomputes cross-run attribution (spec §3.4) for every run from corpus position `fromOrd` on:
 * a run's section starts after the leading prefix of its record that earlier runs already hold,
 * store-wide and within its conversation. Reads the runs' key blobs in corpus order, never the
 * messages; holds one 20-byte key per message, and rewrites the rows whose values changed.
 */
export function attribute(t: IndexTables, runCount: number, fromOrd: number): void {
  const all = new Set<string>();
  const byConv = new Map<string, Set<string>>();
  const changed: Array<[number, Pick<RunRow, 'start_all' | 'start_conv' | 'dl_full' | 'dl_all' | 'dl_conv'>]> = [];
  for (const run of t.runsInOrder(runCount)) {
    const keys: string[] = [];
    for (let i = 0; i < run.keys.length; i += 20) keys.push(run.keys.toString('latin1', i, i + 20));
    const conv = run.conversation_id;
    const convSet = conv === null ? null : (byConv.get(conv) ?? byConv.set(conv, new Set()).get(conv)!);
    if (run.ord >= fromOrd) {
      let startAll = 0;
      while (startAll < keys.length && all.has(keys[startAll]!)) startAll++;
      let startConv = 0;
      while (convSet !== null && startConv < keys.length && convSet.has(keys[startConv]!)) startConv++;
      let dlFull = 0;
      let dlAll = 0;
      let dlConv = 0;
      readVarints(run.lengths).forEach((dl, pos) => {
        dlFull += dl;
        if (pos >= startAll) dlAll += dl;
        if (pos >= startConv) dlConv += dl;
      });
      const next = { start_all: startAll, start_conv: startConv, dl_full: dlFull, dl_all: dlAll, dl_conv: dlConv };
      if ((Object.keys(next) as Array<keyof typeof next>).some((k) => run[k] !== next[k])) changed.push([run.run_key, next]);
    }
    for (const k of keys) {
      all.add(k);
      convSet?.add(k);
    }
  }
  for (const [runKey, next] of changed) t.putRun(Object.assign(t.run(runKey), next));
}

import type { Warning } from '../history/source.js';

export type { Warning };

/**
 * Warnings as a person reads them: per run, its unreadable snapshots together (their seqs in order),
 * and per run and unknown part kind, one total. Details stay in the warnings themselves (JSON output).
 */
export type WarningNotice =
  | { readonly kind: 'unreadable-snapshots'; readonly runId: string; readonly seqs: readonly number[] }
  | { readonly kind: 'unknown-part-kind'; readonly runId: string; readonly partKind: string; readonly count: number };

/** The notices, unreadable snapshots first, each group in the order its run first appears. */
export function warningNotices(warnings: readonly Warning[]): WarningNotice[] {
  const skipped = new Map<string, number[]>();
  const unknown = new Map<string, Map<string, number>>();
  for (const w of warnings) {
    if (w.kind === 'unreadable-snapshot') {
      const seqs = skipped.get(w.runId);
      if (seqs) seqs.push(w.seq);
      else skipped.set(w.runId, [w.seq]);
    } else {
      const m = unknown.get(w.runId) ?? new Map<string, number>();
      m.set(w.partKind, (m.get(w.partKind) ?? 0) + w.count);
      unknown.set(w.runId, m);
    }
  }
  const out: WarningNotice[] = [];
  for (const [runId, seqs] of skipped) out.push({ kind: 'unreadable-snapshots', runId, seqs });
  for (const [runId, kinds] of unknown)
    for (const [partKind, count] of kinds) out.push({ kind: 'unknown-part-kind', runId, partKind, count });
  return out;
}

import type { Warning } from '../history/source.js';
import type { StoreNoticeKind } from '../store/notices.js';

export { noticeWarnings, renameRun } from '../history/source.js';
export type { Warning };

/**
 * Warnings as a person reads them: per run, its unreadable snapshots together (their seqs in order),
 * and per run and unknown part kind, one total. Details stay in the warnings themselves (JSON output).
 */
export type WarningNotice =
  | { readonly kind: 'unreadable-snapshots'; readonly runId: string; readonly seqs: readonly number[] }
  | { readonly kind: 'unknown-part-kind'; readonly runId: string; readonly partKind: string; readonly count: number }
  /** Per kind, what the store reader skipped or read leniently: each as told, with its run and seq. */
  | { readonly kind: 'store-notices'; readonly notice: StoreNoticeKind; readonly details: readonly string[] };

/** `r` with the store readers' notices added to its warnings (they are known only once the work is done). */
export function withNotices<T extends { readonly warnings: readonly Warning[] }>(r: T, notices: readonly Warning[]): T {
  return notices.length ? { ...r, warnings: [...r.warnings, ...notices] } : r;
}

/** The notices, unreadable snapshots first, each group in the order its run (or kind) first appears. */
export function warningNotices(warnings: readonly Warning[]): WarningNotice[] {
  const skipped = new Map<string, number[]>();
  const unknown = new Map<string, Map<string, number>>();
  const store = new Map<StoreNoticeKind, string[]>();
  for (const w of warnings) {
    if (w.kind === 'unreadable-snapshot') {
      const seqs = skipped.get(w.runId);
      if (seqs) seqs.push(w.seq);
      else skipped.set(w.runId, [w.seq]);
    } else if (w.kind === 'store-notice') {
      const details = store.get(w.notice) ?? [];
      const where = [w.runId !== null ? `run ${w.runId}` : '', w.seq !== null ? `seq ${w.seq}` : ''].filter(Boolean).join(' ');
      details.push(where ? `${where}: ${w.detail}` : w.detail);
      store.set(w.notice, details);
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
  for (const [notice, details] of store) out.push({ kind: 'store-notices', notice, details });
  return out;
}

import type { WarningNotice } from '../api/warnings.js';
import type { StoreNoticeKind } from '../store/notices.js';
import { escapeInline } from './escape.js';

/** What a store notice says, counted: `3 <words> (...)`. */
const NOTICE_WORDS: Record<StoreNoticeKind, string> = {
  'naive-started-at': 'run start time(s) without a time zone, read as UTC',
  'vanished-snapshot': 'listed snapshot(s) gone when read, skipped',
  'foreign-snapshot-entry': 'snapshot index entr(ies) not of the form <seq>:<state>, ignored',
  'vanished-run': 'listed run(s) whose record has gone, skipped',
  'duplicate-run': 'run record(s) repeating a run id already seen, ignored',
  'non-utf8-run-id': 'run id(s) not UTF-8, shown with U+FFFD for the bytes that are not',
  'unreachable-run': 'run(s) whose snapshots cannot be located, skipped',
  'same-store': 'store(s) reached by more than one path, read once',
  'unreadable-entry': 'directory entr(ies) named like stores that cannot be read, skipped',
  'unreadable-conversation-metadata': 'conversation metadata row(s) that cannot be read, not shown',
  'case-twin-table': 'table(s) spelled with the exact case of the prefix, not read (PostgresStepStore reads the lower-case ones)',
};

/** One warning line for stderr (without the `convsearch: warning: ` prefix); details go to the JSON output. */
export function warningLine(n: WarningNotice): string {
  if (n.kind === 'unreadable-snapshots') {
    const count = n.seqs.length;
    const listed = n.seqs.slice(0, 10).join(', ') + (count > 10 ? ', ...' : '');
    return `skipped ${count} unreadable snapshot${count === 1 ? '' : 's'} in run ${escapeInline(n.runId)} (seq ${listed}; use --json for details)`;
  }
  if (n.kind === 'store-notices') {
    const count = n.details.length;
    const listed = n.details.slice(0, 3).map(escapeInline).join('; ') + (count > 3 ? '; ...' : '');
    return `${count} ${NOTICE_WORDS[n.notice]} (${listed}; use --json for details)`;
  }
  const c = n.count;
  return `${c} part${c === 1 ? '' : 's'} of unknown kind ${escapeInline(JSON.stringify(n.partKind))} in run ${escapeInline(n.runId)} render nothing (kept in the record)`;
}

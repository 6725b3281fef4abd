import type { WarningNotice } from '../api/warnings.js';
import { escapeInline } from './escape.js';

/** One warning line for stderr (without the `convsearch: warning: ` prefix); details go to the JSON output. */
export function warningLine(n: WarningNotice): string {
  if (n.kind === 'unreadable-snapshots') {
    const count = n.seqs.length;
    const listed = n.seqs.slice(0, 10).join(', ') + (count > 10 ? ', ...' : '');
    return `skipped ${count} unreadable snapshot${count === 1 ? '' : 's'} in run ${escapeInline(n.runId)} (seq ${listed}; use --json for details)`;
  }
  const c = n.count;
  return `${c} part${c === 1 ? '' : 's'} of unknown kind ${escapeInline(JSON.stringify(n.partKind))} in run ${escapeInline(n.runId)} render nothing (kept in the record)`;
}

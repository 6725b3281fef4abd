import type { StoreRun } from '../store/reader.js';
import { decodeRunId, type RunIdName } from '../store/run-name.js';
import { escapeInline } from './escape.js';

/** The agent name and inner run id in a run's id (the id inside its store: several stores qualify the one shown). */
export function runIdName(run: StoreRun): RunIdName | null {
  return decodeRunId(run.storeRunId ?? run.runId);
}

/** The same for the run's parent, which a run of several stores names qualified (`<store>:<id>`) when ids are shared. */
export function parentIdName(run: StoreRun): RunIdName | null {
  const p = run.parentRunId;
  if (p === null) return null;
  const own = run.store !== undefined && p.startsWith(`${run.store}:`) ? p.slice(run.store.length + 1) : p;
  return decodeRunId(own);
}

/** JSON's `…_decoded` field: `{"agent", "inner_run_id"}`, or null for an id that is not a derived one. */
export function runIdNameJson(n: RunIdName | null): Record<string, string> | null {
  return n === null ? null : { agent: n.agent, inner_run_id: n.innerRunId };
}

/** `code_librarian/0198…`: for one line, escaped like every store text. */
export function runIdNameText(n: RunIdName): string {
  return `${escapeInline(n.agent)}/${escapeInline(n.innerRunId)}`;
}

/** `<id>`, and ` (<agent>/<inner id>)` after it when the id is a derived one. */
function named(id: string, n: RunIdName | null): string {
  return `${escapeInline(id)}${n === null ? '' : ` (${runIdNameText(n)})`}`;
}

/** `run <id> (<agent>/<inner id>)`, or `run <id>` for an id that is not a derived one. */
export function runLabel(run: StoreRun): string {
  return `run ${named(run.runId, runIdName(run))}`;
}

/** The same for the run's parent (null without one). */
export function parentLabel(run: StoreRun): string | null {
  return run.parentRunId === null ? null : `parent ${named(run.parentRunId, parentIdName(run))}`;
}

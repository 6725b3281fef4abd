import { createHash } from 'node:crypto';
import { BatchedHash } from './content.js';
import type { StoreRun } from './reader.js';

/**
 * A run list's digest: SHA-256 (base64) of RUN_LIST_HEAD, then a line per run, in the list's order
 * (runLine: the JSON array of its rowid and its texts). SQLite's runs table digest is the same text over
 * its rows in rowid order (sqlite/runs.ts), so where those come in corpus order, the scan that takes it
 * takes the list's too (StoreReader.runListDigests).
 */
export const RUN_LIST_HEAD = 'runs/json\n';

export const runLine = (
  rowid: number,
  runId: string,
  conversationId: string | null,
  parentRunId: string | null,
  agentName: string | null,
  startedAt: string,
): string => `${JSON.stringify([rowid, runId, conversationId, parentRunId, agentName, startedAt])}\n`;

/** The digests of a run list: of its first `n` runs (the list the index placed: sidecar/known-runs.ts) and of all of them. */
export interface RunListDigests {
  readonly prefix: string;
  readonly all: string;
}

/** A hash of RUN_LIST_HEAD and the lines added, whose digest is taken at `n` lines and at the end. */
export class RunListHash {
  private readonly h = new BatchedHash(createHash('sha256'));
  private lines = 0;
  private prefix: string | null = null;

  constructor(private readonly n: number | null) {
    this.h.add(RUN_LIST_HEAD);
  }

  add(line: string): void {
    if (this.lines++ === this.n) this.prefix = this.h.flush().copy().digest('base64');
    this.h.add(line);
  }

  /** The digest of every line, and the one at `n` lines (the whole when no more came). */
  finish(): RunListDigests {
    const all = this.h.flush().digest('base64');
    return { all, prefix: this.prefix ?? all };
  }
}

/** The digests of `runs`, in one pass. */
export function runListDigests(runs: readonly StoreRun[], n: number): RunListDigests {
  const h = new RunListHash(n);
  for (const r of runs) h.add(runLine(r.rowid, r.runId, r.conversationId, r.parentRunId, r.agentName, r.startedAt));
  // fewer runs than n: the prefix is the whole, and the caller (comparing with a list of n) sees it is not that list
  return h.finish();
}

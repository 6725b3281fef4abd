import { createHash } from 'node:crypto';
import { BatchedHash } from './content.js';
import type { StoreRun } from './reader.js';

/**
 * A run list's digest: SHA-256 (base64) of RUN_LIST_HEAD, then the SHA-256 (32 bytes) of each block of
 * RUN_LIST_BLOCK lines in the list's order, the last block as long as it is (runLine: the JSON array of
 * a run's rowid and its texts). SQLite's runs table digest is the same text over its rows in rowid order
 * (sqlite/runs.ts), so where those come in corpus order, the scan that takes it takes the list's too
 * (StoreReader.runListDigests). In blocks so that it can go on from a block kept: a run appended to a
 * store whose runs table's first pages still hold the rows they held is hashed with the rows from the last
 * kept block on, not every row again (sqlite/runs.ts readRunsTail).
 */
export const RUN_LIST_HEAD = 'runs/json/blocks\n';
export const RUN_LIST_BLOCK = 256;
/** The bytes of one block's digest. */
export const BLOCK_DIGEST_BYTES = 32;

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
  /** The digests of the whole list's full blocks, one after another (absent: not taken). */
  readonly blocks?: Buffer;
}

/**
 * A run list read past the runs an index placed, where the store could tell they are unchanged without
 * reading them (store/sqlite/runs.ts readRunsTail): its runs after them and the whole list's digests.
 */
export interface RunsTail {
  /** The runs the index placed (the prefix digest is taken there): the tail's runs come after them. */
  readonly settled: number;
  /** The runs after the first `settled`, in corpus order. */
  readonly runs: StoreRun[];
  /** The digests of the whole run list, of its first `settled` runs, and its full blocks'. */
  readonly digests: Required<RunListDigests>;
  /** Rows of the store read for it. */
  readonly rowsRead: number;
}

/** A hash of RUN_LIST_HEAD and the lines added, whose digest is taken at `n` lines and at the end. */
export class RunListHash {
  private readonly blocks: Buffer[] = [];
  private block = new BatchedHash(createHash('sha256'));
  private inBlock = 0;
  private lines: number;
  private prefix: string | null = null;

  /**
   * `kept`: the digests of the list's first full blocks, from which it goes on (the next line added is
   * the first of the block after them); `n` must not be before their end.
   */
  constructor(
    private readonly n: number | null,
    kept: Uint8Array | null = null,
  ) {
    const count = kept === null ? 0 : Math.floor(kept.length / BLOCK_DIGEST_BYTES);
    for (let b = 0; b < count; b++) this.blocks.push(Buffer.from(kept!.subarray(b * BLOCK_DIGEST_BYTES, (b + 1) * BLOCK_DIGEST_BYTES)));
    this.lines = count * RUN_LIST_BLOCK;
  }

  /** Adds `run`'s line (runLine). */
  addRun(run: StoreRun): void {
    this.add(runLine(run.rowid, run.runId, run.conversationId, run.parentRunId, run.agentName, run.startedAt));
  }

  add(line: string): void {
    if (this.lines++ === this.n) this.prefix = this.digest();
    this.block.add(line);
    if (++this.inBlock === RUN_LIST_BLOCK) {
      this.blocks.push(this.block.flush().digest());
      this.block = new BatchedHash(createHash('sha256'));
      this.inBlock = 0;
    }
  }

  /** The digest of the lines added so far (the open block's lines as a block of their own). */
  private digest(): string {
    const h = createHash('sha256').update(RUN_LIST_HEAD);
    for (const b of this.blocks) h.update(b);
    if (this.inBlock > 0) h.update(this.block.flush().copy().digest());
    return h.digest('base64');
  }

  /** The digest of every line, the one at `n` lines (the whole when no more came), and the full blocks' digests. */
  finish(): Required<RunListDigests> {
    const all = this.digest();
    return { all, prefix: this.prefix ?? all, blocks: Buffer.concat(this.blocks) };
  }
}

/** The digests of `runs`, in one pass. */
export function runListDigests(runs: readonly StoreRun[], n: number): RunListDigests {
  const h = new RunListHash(n);
  for (const r of runs) h.addRun(r);
  // fewer runs than n: the prefix is the whole, and the caller (comparing with a list of n) sees it is not that list
  return h.finish();
}

import { isUtf8 } from 'node:buffer';
import type BetterSqlite3 from 'better-sqlite3';
import { bytesText } from '../bytes-text.js';
import { StoreError } from '../errors.js';

/**
 * Run ids stored as TEXT whose bytes are not UTF-8. SQLite hands them out with U+FFFD in place of the
 * bad bytes, and `run_id = ?` with that text finds nothing: such a run would replay empty. Its own bytes,
 * bound through `run_id = CAST(? AS TEXT)` (still a search of idx_snapshots_run), find its rows. Two
 * such ids that read as the same text cannot be told apart above this reader: a StoreError.
 */
export class RawRunIds {
  private byText: Map<string, { raw: Buffer; rowid: number }> | null = null;

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly label: string,
  ) {}

  /** What to bind for `run_id = CAST(? AS TEXT)`. */
  bind(runId: string): string | Buffer {
    if (!runId.includes('\uFFFD')) return runId;
    return this.all().get(runId)?.raw ?? runId;
  }

  /** Every such id, by the text it reads as (one scan of `runs`, made only once an id with U+FFFD is seen). */
  all(): ReadonlyMap<string, { raw: Buffer; rowid: number }> {
    if (this.byText !== null) return this.byText;
    const found = new Map<string, { raw: Buffer; rowid: number }>();
    const rows = this.db
      // only ids with a byte outside printable ASCII are looked at here (SQLite reads any other byte as a
      // character past '~'); in no order, so that SQLite scans the run id's index, not the whole table
      // (at 50k runs, 11 against 22 ms from a cold cache), then in rowid order here
      .prepare("SELECT rowid, CAST(run_id AS BLOB) FROM runs WHERE typeof(run_id) = 'text' AND run_id GLOB '*[^ -~]*'")
      .raw()
      .all() as Array<[number | bigint, Buffer | null]>;
    rows.sort((a, b) => Number(a[0]) - Number(b[0]));
    for (const [rowid, raw] of rows) {
      if (raw === null || isUtf8(raw)) continue;
      const text = raw.toString('utf8');
      const twin = found.get(text);
      if (twin !== undefined) {
        throw new StoreError(
          `${this.label}: runs rows ${twin.rowid} and ${Number(rowid)} have run ids that are not UTF-8 (${bytesText(twin.raw)}, ${bytesText(raw)}) and read as the same text`,
        );
      }
      found.set(text, { raw, rowid: Number(rowid) });
    }
    this.byText = found;
    return found;
  }
}

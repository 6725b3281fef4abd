import type BetterSqlite3 from 'better-sqlite3';
import type { SkippedSnapshot } from '../history/replay.js';
import type { Role } from '../history/roles.js';
import type { Warning } from '../history/source.js';
import type { TermStats } from '../search/bm25.js';
import { inScope, type Corpus, type CorpusSource, type DocumentText, type ScopeFilter, type SectionView } from '../search/corpus.js';
import { runRecord, type RunRecord } from '../store/runs.js';
import { decodePostings } from './postings.js';
import type { IndexRunIdentity } from './schema.js';
import { readVarints } from './varint.js';
import { fieldsFromJson } from './sync.js';
import { indexText } from '../render/fields.js';

interface IndexRunRow extends IndexRunIdentity {
  len: number;
  start_all: number;
  start_conv: number;
  dl_full: number;
  dl_all: number;
  dl_conv: number;
  unknown: string;
  lengths: Buffer;
}

interface IndexedSection extends SectionView {
  readonly runKey: number;
  readonly seg: number;
  readonly docLengthSum: number;
  /** Document lengths by position (varints). */
  readonly lengths: Uint8Array;
}

/** A corpus read from the persistent index: only the query terms' postings and the shown windows are touched. */
class IndexCorpus implements Corpus {
  private readonly byRunKey = new Map<number, number>();
  private readonly firsts: number[] = [];
  private readonly docs = new Map<string, DocumentText>();
  private readonly lengthCache = new Map<number, number[]>();

  constructor(
    private readonly q: IndexQueries,
    readonly sections: readonly IndexedSection[],
    readonly warnings: readonly Warning[],
  ) {
    let acc = 0;
    sections.forEach((s, i) => {
      this.byRunKey.set(s.runKey, i);
      this.firsts.push(acc);
      acc += s.end - s.start;
    });
  }

  termStats(terms: readonly string[]): TermStats {
    let n = 0;
    let total = 0;
    for (const s of this.sections) {
      n += s.end - s.start;
      total += s.docLengthSum;
    }
    const lengths = new Map<number, number>();
    const postings = new Map<string, Array<[number, number]>>();
    for (const term of terms) {
      const list: Array<[number, number]> = [];
      for (const row of this.q.postings.iterate(term) as IterableIterator<{ seg: number; data: Buffer }>) {
        decodePostings(
          row.data,
          (runKey, pos, tf) => {
            const si = this.byRunKey.get(runKey)!;
            const s = this.sections[si]!;
            if (pos < s.start || pos >= s.end) return;
            const doc = this.firsts[si]! + pos - s.start;
            list.push([doc, tf]);
            lengths.set(doc, this.lengthsOf(si)[pos]!);
          },
          // only the runs in scope, and only their live segment (a rebuilt run's old entries are garbage)
          (runKey) => {
            const si = this.byRunKey.get(runKey);
            return si !== undefined && this.sections[si]!.seg === row.seg;
          },
        );
      }
      list.sort((a, b) => a[0] - b[0]);
      postings.set(term, list);
    }
    return { n, totalLength: total, docLength: (d) => lengths.get(d)!, postings: (t) => postings.get(t) ?? [] };
  }

  private lengthsOf(section: number): number[] {
    let l = this.lengthCache.get(section);
    if (!l) this.lengthCache.set(section, (l = readVarints(this.sections[section]!.lengths)));
    return l;
  }

  document(section: number, position: number): DocumentText {
    const s = this.sections[section]!;
    const key = `${s.runKey}:${position}`;
    let d = this.docs.get(key);
    if (!d) {
      const row = this.q.document.get(s.runKey, position) as { fields: string; roles: string; timestamp: string | null; first_seq: number; first_step: number | null };
      const fields = fieldsFromJson(row.fields);
      d = {
        fields,
        text: indexText(fields),
        parts: (JSON.parse(row.roles) as Array<[Role, string | null]>).map(([role, toolName]) => ({ role, toolName })),
        timestamp: row.timestamp,
        firstSeq: row.first_seq,
        firstStep: row.first_step,
      };
      this.docs.set(key, d);
    }
    return d;
  }
}

interface IndexQueries {
  readonly postings: BetterSqlite3.Statement;
  readonly document: BetterSqlite3.Statement;
  readonly runs: BetterSqlite3.Statement;
}

/** Corpus source over an up-to-date index (the caller syncs it first). */
export class IndexCorpusSource implements CorpusSource {
  private readonly q: IndexQueries;
  private runRows: IndexRunRow[] | null = null;

  constructor(db: BetterSqlite3.Database) {
    this.q = {
      postings: db.prepare('SELECT seg, data FROM postings WHERE term = ?'),
      document: db.prepare('SELECT fields, roles, timestamp, first_seq, first_step FROM messages WHERE run_key = ? AND pos = ?'),
      runs: db.prepare(
        'SELECT run_key, run_id, store_rowid, conversation_id, parent_run_id, agent_name, started_at, len, start_all, start_conv, dl_full, dl_all, dl_conv, seg, skipped, unknown, lengths FROM runs ORDER BY ord',
      ),
    };
  }

  private rows(): IndexRunRow[] {
    return (this.runRows ??= this.q.runs.all() as IndexRunRow[]);
  }

  /** Runs in corpus order, as the store lists them. */
  runs(): RunRecord[] {
    return this.rows().map(toRunRecord);
  }

  corpus(scope: ScopeFilter): Corpus {
    const sections: IndexedSection[] = [];
    const warnings: Warning[] = [];
    for (const row of this.rows()) {
      const run = toRunRecord(row);
      if (!inScope(run, scope)) continue;
      warnings.push(...this.warningsOf(row));
      const [start, docLengthSum] =
        scope.runId !== null ? [0, row.dl_full] : scope.scope === 'conversation' ? [row.start_conv, row.dl_conv] : [row.start_all, row.dl_all];
      if (start < row.len) sections.push({ run, start, end: row.len, runKey: row.run_key, seg: row.seg, docLengthSum, lengths: row.lengths });
    }
    return new IndexCorpus(this.q, sections, warnings);
  }

  private warningsOf(row: IndexRunRow): Warning[] {
    if (row.skipped === '[]' && row.unknown === '[]') return [];
    const out: Warning[] = (JSON.parse(row.skipped) as SkippedSnapshot[]).map((s) => ({
      kind: 'unreadable-snapshot' as const,
      runId: s.runId,
      seq: s.seq,
      reason: s.reason,
    }));
    for (const [partKind, count] of JSON.parse(row.unknown) as Array<[string, number]>) {
      out.push({ kind: 'unknown-part-kind', runId: row.run_id, partKind, count });
    }
    return out;
  }
}

function toRunRecord(r: IndexRunRow): RunRecord {
  return runRecord({ ...r, rowid: r.store_rowid });
}

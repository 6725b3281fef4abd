import type { RecordCounts } from '../history/counts.js';
import type { SkippedSnapshot } from '../history/replay.js';
import type { Warning } from '../history/source.js';
import { searchText } from '../render/message.js';
import type { RenderedMessage } from '../render/record.js';
import type { PartRole, Role } from '../render/roles.js';
import type { TermStats } from '../search/bm25.js';
import type { Corpus, CorpusNeeds, CorpusSource, DocumentFacts, SectionView, Window } from '../search/corpus.js';
import type { ScopeFilter } from '../search/scope.js';
import { TermStatsBuilder } from '../search/term-stats.js';
import type { RunSnapshotStats, StoreRun } from '../store/reader.js';
import { IndexDamagedError } from './errors.js';
import type { IndexMeta } from './meta.js';
import { decodePostings } from './postings.js';
import { partsFromStored } from './run-build.js';
import { CACHE_CHUNK, type IndexTables, type MessageRecord } from './tables.js';
import { readVarints } from './varint.js';

/** One entry of `corpus_cache.runs`: CORPUS_RUN_COLUMNS, then warn, lengths offset and size, SNAPSHOT_STAT_COLUMNS. */
type CachedRun = [
  runKey: number,
  runId: string,
  storeRowid: number,
  conversationId: string | null,
  parentRunId: string | null,
  agentName: string | null,
  startedAt: string,
  len: number,
  startAll: number,
  startConv: number,
  dlFull: number,
  dlAll: number,
  dlConv: number,
  seg: number,
  warn: number,
  lengthsOffset: number,
  lengthsSize: number,
  completeSnaps: number,
  interruptedSnaps: number,
  lastStep: number | null,
];

interface IndexedSection extends SectionView {
  readonly runKey: number;
  readonly seg: number;
  readonly docLengthSum: number;
  /** Where its document lengths by position (varints) lie in the corpus cache's lengths: decoded only for a run a query term is in. */
  readonly lengthsAt: number;
  readonly lengthsSize: number;
}

/** A corpus read from the persistent index: only the query terms' postings and the shown windows are touched. */
class IndexedCorpus implements Corpus {
  private readonly byRunKey = new Map<number, number>();
  private readonly firsts: number[] = [];
  private readonly docs = new Map<string, RenderedMessage>();
  private readonly lengthCache = new Map<number, number[]>();
  /** Windows told (prefetch) and not read yet. */
  private readonly pending: Window[] = [];

  constructor(
    private readonly t: IndexTables,
    /** The segments with directories of their own (meta tierSegments). */
    private readonly tierSegments: readonly number[],
    readonly sections: readonly IndexedSection[],
    readonly warnings: readonly Warning[],
    readonly scopeRuns: number,
    /** Every run's document lengths (see IndexedSection.lengthsAt). */
    private readonly lengths: Buffer,
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
    // only the documents that hold a query term have their length looked up
    const stats = new TermStatsBuilder(terms, n);
    terms.forEach((term, k) => {
      // the rows the term's (checked) directory entry lists, each checked: none is silently missing
      for (const id of this.t.termRows(term, this.tierSegments)) {
        const row = this.t.posting(id, term);
        decodePostings(
          row.data,
          (runKey, pos, tf) => {
            const si = this.byRunKey.get(runKey)!;
            const s = this.sections[si]!;
            if (pos < s.start || pos >= s.end) {
              if (pos >= s.end) throw new IndexDamagedError(`a posting of run key ${runKey} points past its record`);
              return;
            }
            const doc = this.firsts[si]! + pos - s.start;
            stats.add(k, doc, tf);
            stats.setLength(doc, this.lengthsOf(si)[pos]!);
          },
          // only the runs in scope, and only their live segment (a rebuilt run's old entries are garbage)
          (runKey) => {
            const si = this.byRunKey.get(runKey);
            return si !== undefined && this.sections[si]!.seg === row.seg;
          },
        );
      }
    });
    return stats.finish(total);
  }

  private lengthsOf(section: number): number[] {
    let l = this.lengthCache.get(section);
    if (!l) {
      const s = this.sections[section]!;
      l = readVarints(this.lengths.subarray(s.lengthsAt, s.lengthsAt + s.lengthsSize));
      if (l.length !== s.end) throw new IndexDamagedError(`run key ${s.runKey} has ${l.length} document lengths for ${s.end} messages`);
      this.lengthCache.set(section, l);
    }
    return l;
  }

  /** Parts, timestamp and first snapshot without the fields (what hit filters test). */
  facts(section: number, position: number): DocumentFacts {
    const s = this.sections[section]!;
    const d = this.docs.get(`${s.runKey}:${position}`);
    if (d) return d;
    // the whole row: its checksum covers every column
    const row = this.t.message(s.runKey, position);
    return { parts: partsFromJson(row.roles), timestamp: row.timestamp, firstSeq: row.first_seq };
  }

  sectionFacts(section: number): DocumentFacts[] {
    const s = this.sections[section]!;
    const out: DocumentFacts[] = [];
    for (const row of this.t.messages(s.runKey, s.start, s.end))
      out.push({ parts: partsFromJson(row.roles), timestamp: row.timestamp, firstSeq: row.first_seq });
    return out;
  }

  document(section: number, position: number): RenderedMessage {
    const s = this.sections[section]!;
    const key = `${s.runKey}:${position}`;
    let d = this.docs.get(key);
    if (!d) {
      this.readWindow(section, position);
      d = this.docs.get(key) ?? toDocument(this.t.message(s.runKey, position));
      this.docs.set(key, d);
    }
    return d;
  }

  /**
   * The hits' windows, told before any is read: merged where they touch, less the documents read already,
   * and sent to the index to read with the first of them asked (a shared index: every window of every
   * store in one round trip).
   */
  prefetch(windows: readonly Window[]): void {
    const ranges: Window[] = [];
    const sorted = [...windows].sort((a, b) => a.section - b.section || a.start - b.start);
    for (const w of sorted) {
      const { runKey } = this.sections[w.section]!;
      let { start, end } = w;
      while (start < end && this.docs.has(`${runKey}:${start}`)) start++;
      while (end > start && this.docs.has(`${runKey}:${end - 1}`)) end--;
      if (start === end) continue;
      const last = ranges[ranges.length - 1];
      if (last !== undefined && last.section === w.section && start <= last.end)
        ranges[ranges.length - 1] = { ...last, end: Math.max(last.end, end) };
      else ranges.push({ section: w.section, start, end });
    }
    this.pending.push(...ranges);
    this.t.db.readSoon?.(ranges.map((r) => () => this.t.messageRange(this.sections[r.section]!.runKey, r.start, r.end)));
  }

  /** Reads the told window holding the document, when one does (all its documents kept). */
  private readWindow(section: number, position: number): void {
    const i = this.pending.findIndex((w) => w.section === section && w.start <= position && position < w.end);
    if (i < 0) return;
    const [w] = this.pending.splice(i, 1);
    const { runKey } = this.sections[section]!;
    for (const row of this.t.messageRange(runKey, w!.start, w!.end)) this.docs.set(`${runKey}:${row.pos}`, toDocument(row));
  }
}

function toDocument(row: MessageRecord): RenderedMessage {
  const parts = partsFromStored(row.roles, row.fields);
  return { parts, text: searchText(parts), timestamp: row.timestamp, firstSeq: row.first_seq, firstStep: row.first_step };
}

function partsFromJson(roles: string): PartRole[] {
  return (JSON.parse(roles) as Array<[Role, string | null]>).map(([role, toolName]) => ({ role, toolName }));
}

/** Corpus source over an up-to-date index (the caller syncs it first). */
export class IndexedCorpusSource implements CorpusSource {
  private cached: { runs: CachedRun[]; lengths: Buffer } | null = null;
  /** The runs as StoreRuns, each made once (a search and `runs()` share them), by corpus position. */
  private readonly storeRuns: StoreRun[] = [];
  /** runs(), made once: a search's union and a listing's counts ask for it more than once. */
  private runList: readonly StoreRun[] | null = null;

  /** The runs the index's meta says it holds (the cache must list as many). */
  private readonly runCount: number;
  /** Its segments with directories of their own (meta.ts). */
  private readonly tierSegments: readonly number[];

  constructor(
    private readonly t: IndexTables,
    meta: Pick<IndexMeta, 'runCount' | 'tierSegments'>,
  ) {
    this.runCount = meta.runCount;
    this.tierSegments = meta.tierSegments;
  }

  private cache(): { runs: CachedRun[]; lengths: Buffer } {
    if (!this.cached) {
      if (this.runCount === 0) this.cached = { runs: [], lengths: Buffer.alloc(0) };
      else {
        const runs: CachedRun[] = [];
        const blobs: Buffer[] = [];
        let base = 0;
        for (const row of this.t.cache()) {
          const chunk = JSON.parse(row.runs) as CachedRun[];
          if (!Array.isArray(chunk) || (chunk.length !== CACHE_CHUNK && runs.length + chunk.length !== this.runCount))
            throw new IndexDamagedError('the corpus cache does not list every run');
          // offsets into the row's own lengths, made offsets into all of them
          for (const r of chunk) r[15] += base;
          runs.push(...chunk);
          blobs.push(row.lengths);
          base += row.lengths.length;
        }
        if (runs.length !== this.runCount) throw new IndexDamagedError('the corpus cache does not list every run');
        this.cached = { runs, lengths: Buffer.concat(blobs) };
      }
    }
    return this.cached;
  }

  /** Runs in corpus order, as the store lists them. */
  runs(): readonly StoreRun[] {
    return (this.runList ??= this.cache().runs.map((_, i) => this.storeRun(i)));
  }

  private storeRun(i: number): StoreRun {
    return (this.storeRuns[i] ??= toStoreRun(this.cache().runs[i]!));
  }

  corpus(scope: ScopeFilter, needs: CorpusNeeds = {}): Corpus {
    // the postings are the default tokenizer's: counting another's terms in them would be silently wrong
    if ((needs.tokenizer ?? 'default') !== 'default')
      throw new Error(`the index holds default-tokenizer postings, not ${needs.tokenizer}'s`);
    const { runs, lengths } = this.cache();
    const sections: IndexedSection[] = [];
    const warnings: Warning[] = [];
    let scopeRuns = 0;
    for (let i = 0; i < runs.length; i++) {
      const r = runs[i]!;
      // scope test on the raw entry: only in-scope runs become records
      if (scope.scope === 'conversation' && r[3] !== scope.conversationId) continue;
      if (scope.runId !== null && r[1] !== scope.runId) continue;
      scopeRuns++;
      if (r[14]) warnings.push(...this.warningsOf(r[0]));
      const [start, docLengthSum] = scope.runId !== null ? [0, r[10]] : scope.scope === 'conversation' ? [r[9], r[12]] : [r[8], r[11]];
      if (start < r[7]) {
        sections.push({
          run: this.storeRun(i),
          start,
          end: r[7],
          runKey: r[0],
          seg: r[13],
          docLengthSum,
          lengthsAt: r[15],
          lengthsSize: r[16],
        });
      }
    }
    return new IndexedCorpus(this.t, this.tierSegments, sections, warnings, scopeRuns, lengths);
  }

  /** Listing counts straight from the index: the same numbers a replay gives (see RecordCounts). */
  recordCounts(): RecordCounts {
    const byId = new Map(this.cache().runs.map((r) => [r[1], r]));
    return {
      runs: () => this.runs(),
      recordLength: (runId) => byId.get(runId)?.[7] ?? 0,
      conversationMessages: (conversationId, runs) =>
        runs.reduce((n, run) => {
          const r = byId.get(run.runId);
          return r ? n + r[7] - (conversationId === null ? 0 : r[9]) : n;
        }, 0),
      warnings: (runIds) =>
        runIds.flatMap((id) => {
          const r = byId.get(id);
          return r?.[14] ? this.warningsOf(r[0]) : [];
        }),
      snapshotStats: () => {
        for (const r of byId.values()) if (r[17] < 0) return null; // not read for some run: the store tells
        // made as asked, not a second map of every run (a listing of 50k runs asks for each once)
        return {
          get: (runId: string): RunSnapshotStats | undefined => {
            const r = byId.get(runId);
            return r && { complete: r[17], interrupted: r[18], lastStep: r[19] };
          },
        };
      },
    };
  }

  private warningsOf(runKey: number): Warning[] {
    const row = this.t.run(runKey);
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

function toStoreRun(r: CachedRun): StoreRun {
  return { runId: r[1], conversationId: r[3], parentRunId: r[4], agentName: r[5], startedAt: r[6], rowid: r[2] };
}

import type { RecordCounts } from '../history/counts.js';
import type { SkippedSnapshot } from '../history/replay.js';
import type { Warning } from '../history/source.js';
import { searchText } from '../render/message.js';
import type { RenderedMessage } from '../render/record.js';
import type { PartRole, Role } from '../render/roles.js';
import type { TermStats } from '../search/bm25.js';
import {
  type Corpus,
  type CorpusNeeds,
  type CorpusSource,
  type DocumentFacts,
  DocumentIds,
  type SectionView,
  type Window,
} from '../search/corpus.js';
import type { ScopeFilter } from '../search/scope.js';
import { TermStatsBuilder } from '../search/term-stats.js';
import type { RunSnapshotStats, StoreRun } from '../store/reader.js';
import { CachedRuns, COL, TEXT_AT } from './corpus-cache.js';
import { IndexDamagedError } from './errors.js';
import type { IndexMeta } from './meta.js';
import { decodePostings } from './postings.js';
import { partsFromStored } from './run-build.js';
import type { IndexTables, MessageRecord } from './tables.js';
import { readVarints } from './varint.js';

/** A run's searchable section: its run made only when asked (a store-wide search of 50k runs shows a few). */
class IndexedSection implements SectionView {
  constructor(
    private readonly source: IndexedCorpusSource,
    /** Its run's corpus position (CachedRuns). */
    readonly ord: number,
    readonly start: number,
    readonly end: number,
  ) {}

  get run(): StoreRun {
    return this.source.storeRun(this.ord);
  }
}

/** A corpus read from the persistent index: only the query terms' postings and the shown windows are touched. */
class IndexedCorpus implements Corpus {
  /** Section by run key: an array while the keys are dense (as a build numbers them), else a map. */
  private readonly byRunKey: { get(key: number): number | undefined };
  private readonly ids: DocumentIds;
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
    private readonly cache: CachedRuns,
    /** The number (COL) that sums the scope's document lengths of a run. */
    private readonly sumAt: number,
  ) {
    this.ids = new DocumentIds(sections);
    this.byRunKey = keyIndex(sections.length, (i) => this.runKey(i));
  }

  private runKey(section: number): number {
    return this.cache.num(this.sections[section]!.ord, COL.run_key);
  }

  termStats(terms: readonly string[]): TermStats {
    // indexed, not for-of: this runs once over every section, before V8 optimizes it (an iterator result each)
    let total = 0;
    for (let i = 0; i < this.sections.length; i++) total += this.cache.num(this.sections[i]!.ord, this.sumAt);
    // only the documents that hold a query term have their length looked up
    const stats = new TermStatsBuilder(terms, this.ids.count);
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
            const doc = this.ids.first(si) + pos - s.start;
            stats.add(k, doc, tf);
            stats.setLength(doc, this.lengthsOf(si)[pos]!);
          },
          // only the runs in scope, and only their live segments (a rebuilt run's old entries are garbage)
          (runKey) => {
            const si = this.byRunKey.get(runKey);
            if (si === undefined) return false;
            const ord = this.sections[si]!.ord;
            return row.seg <= this.cache.num(ord, COL.seg) && row.seg >= this.cache.num(ord, COL.seg_from);
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
      l = readVarints(this.cache.lengths(s.ord));
      if (l.length !== s.end)
        throw new IndexDamagedError(`run key ${this.runKey(section)} has ${l.length} document lengths for ${s.end} messages`);
      this.lengthCache.set(section, l);
    }
    return l;
  }

  /** Parts, timestamp and first snapshot without the fields (what hit filters test). */
  facts(section: number, position: number): DocumentFacts {
    const runKey = this.runKey(section);
    const d = this.docs.get(`${runKey}:${position}`);
    if (d) return d;
    // the whole row: its checksum covers every column
    const row = this.t.message(runKey, position);
    return { parts: partsFromJson(row.roles), timestamp: row.timestamp, firstSeq: row.first_seq };
  }

  sectionFacts(section: number): DocumentFacts[] {
    const s = this.sections[section]!;
    const out: DocumentFacts[] = [];
    for (const row of this.t.messages(this.runKey(section), s.start, s.end))
      out.push({ parts: partsFromJson(row.roles), timestamp: row.timestamp, firstSeq: row.first_seq });
    return out;
  }

  document(section: number, position: number): RenderedMessage {
    const runKey = this.runKey(section);
    const key = `${runKey}:${position}`;
    let d = this.docs.get(key);
    if (!d) {
      this.readWindow(section, position);
      d = this.docs.get(key) ?? toDocument(this.t.message(runKey, position));
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
      const runKey = this.runKey(w.section);
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
    this.t.db.readSoon?.(ranges.map((r) => () => this.t.messageRange(this.runKey(r.section), r.start, r.end)));
  }

  /** Reads the told window holding the document, when one does (all its documents kept). */
  private readWindow(section: number, position: number): void {
    const i = this.pending.findIndex((w) => w.section === section && w.start <= position && position < w.end);
    if (i < 0) return;
    const [w] = this.pending.splice(i, 1);
    const runKey = this.runKey(section);
    for (const row of this.t.messageRange(runKey, w!.start, w!.end)) this.docs.set(`${runKey}:${row.pos}`, toDocument(row));
  }
}

/**
 * Index `0 .. n-1` by key: an array while the keys are dense, as a build numbers them (a lookup per
 * posting, and no map of 50k entries made for a store-wide search), else a map.
 */
function keyIndex(n: number, keyOf: (i: number) => number): { get(key: number): number | undefined } {
  let maxKey = -1;
  let dense = true;
  for (let i = 0; i < n && dense; i++) {
    const key = keyOf(i);
    dense = Number.isInteger(key) && key >= 0;
    if (key > maxKey) maxKey = key;
  }
  if (dense && maxKey < 4 * n + 1024) {
    const at = new Int32Array(maxKey + 1).fill(-1);
    for (let i = 0; i < n; i++) at[keyOf(i)] = i;
    return { get: (key) => (key >= 0 && key <= maxKey && at[key]! >= 0 ? at[key] : undefined) };
  }
  const map = new Map<number, number>();
  for (let i = 0; i < n; i++) map.set(keyOf(i), i);
  return map;
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
  private cached: CachedRuns | null = null;
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

  private cache(): CachedRuns {
    return (this.cached ??= new CachedRuns(this.runCount === 0 ? [] : this.t.cache(), this.runCount));
  }

  /** Runs in corpus order, as the store lists them. */
  runs(): readonly StoreRun[] {
    return (this.runList ??= Array.from({ length: this.cache().count }, (_, i) => this.storeRun(i)));
  }

  /** The run at corpus position `ord`. */
  storeRun(ord: number): StoreRun {
    let run = this.storeRuns[ord];
    if (run === undefined) {
      const c = this.cache();
      const t = c.textsOf(ord);
      run = this.storeRuns[ord] = {
        runId: t[TEXT_AT.run_id]!,
        conversationId: t[TEXT_AT.conversation_id]!,
        parentRunId: t[TEXT_AT.parent_run_id]!,
        agentName: t[TEXT_AT.agent_name]!,
        startedAt: t[TEXT_AT.started_at]!,
        rowid: c.num(ord, COL.store_rowid),
      };
    }
    return run;
  }

  corpus(scope: ScopeFilter, needs: CorpusNeeds = {}): Corpus {
    // the postings are the default tokenizer's: counting another's terms in them would be silently wrong
    if ((needs.tokenizer ?? 'default') !== 'default')
      throw new Error(`the index holds default-tokenizer postings, not ${needs.tokenizer}'s`);
    const c = this.cache();
    const sections: IndexedSection[] = [];
    const warnings: Warning[] = [];
    let scopeRuns = 0;
    // the columns a section starts at and sums its lengths over, by scope
    const [startAt, sumAt] =
      scope.runId !== null
        ? [-1, COL.dl_full]
        : scope.scope === 'conversation'
          ? [COL.start_conv, COL.dl_conv]
          : [COL.start_all, COL.dl_all];
    for (let i = 0; i < c.count; i++) {
      // scope test on the cache: only in-scope runs become records, and only the runs shown get their texts read
      if (scope.scope === 'conversation' && c.text(i, 'conversation_id') !== scope.conversationId) continue;
      if (scope.runId !== null && c.text(i, 'run_id') !== scope.runId) continue;
      scopeRuns++;
      if (c.num(i, COL.warn)) warnings.push(...this.warningsOf(c.num(i, COL.run_key)));
      const start = startAt < 0 ? 0 : c.num(i, startAt);
      const len = c.num(i, COL.len);
      // positions within a run: int32 (`| 0` keeps them small integers, not a boxed double each)
      if ((start | 0) !== start || (len | 0) !== len) throw new IndexDamagedError(`corpus position ${i} has no record length`);
      if (start < len) sections.push(new IndexedSection(this, i, start | 0, len | 0));
    }
    return new IndexedCorpus(this.t, this.tierSegments, sections, warnings, scopeRuns, c, sumAt);
  }

  /** Listing counts straight from the index: the same numbers a replay gives (see RecordCounts). */
  recordCounts(): RecordCounts {
    const c = this.cache();
    const listed = this.runs();
    // a listing of every run asks in corpus order, of each run once or twice in a row: the position
    // asked last and the next are tried before a map of every run is made (`runs` of 50,000 runs: ~15–20 ms less)
    let byId: Map<string, number> | null = null;
    let at = -1;
    const ordOf = (runId: string): number | undefined => {
      if (at >= 0 && listed[at]!.runId === runId) return at;
      if (at + 1 < listed.length && listed[at + 1]!.runId === runId) return ++at;
      byId ??= new Map(listed.map((r, i) => [r.runId, i]));
      const i = byId.get(runId);
      if (i !== undefined) at = i;
      return i;
    };
    const num = (runId: string, column: number): number | undefined => {
      const i = ordOf(runId);
      return i === undefined ? undefined : c.num(i, column);
    };
    return {
      runs: () => listed,
      recordLength: (runId) => num(runId, COL.len) ?? 0,
      conversationMessages: (conversationId, runs) =>
        runs.reduce((n, run) => {
          const len = num(run.runId, COL.len);
          return len === undefined ? n : n + len - (conversationId === null ? 0 : num(run.runId, COL.start_conv)!);
        }, 0),
      warnings: (runIds) =>
        runIds.flatMap((id) => {
          const i = ordOf(id);
          return i !== undefined && c.num(i, COL.warn) ? this.warningsOf(c.num(i, COL.run_key)) : [];
        }),
      snapshotStats: () => {
        for (let i = 0; i < c.count; i++) if (c.num(i, COL.complete_snaps) < 0) return null; // not read for some run: the store tells
        // made as asked, not a second map of every run (a listing of 50k runs asks for each once)
        return {
          get: (runId: string): RunSnapshotStats | undefined => {
            const i = ordOf(runId);
            if (i === undefined) return undefined;
            const lastStep = c.num(i, COL.last_step);
            return {
              complete: c.num(i, COL.complete_snaps),
              interrupted: c.num(i, COL.interrupted_snaps),
              lastStep: Number.isNaN(lastStep) ? null : lastStep,
            };
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

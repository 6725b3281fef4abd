import type { StoreNoticeKind } from '../store/notices.js';
import type { StoreReader, StoreRun } from '../store/reader.js';
import { ReplayDriver } from './driver.js';
import { replayRun, type RecordMessage, type RunReplay, type SkippedSnapshot } from './replay.js';

/** Something the reference would have skipped silently; convsearch counts and reports it. */
export type Warning =
  | { readonly kind: 'unreadable-snapshot'; readonly runId: string; readonly seq: number; readonly reason: string }
  | { readonly kind: 'unknown-part-kind'; readonly runId: string; readonly partKind: string; readonly count: number }
  /** Something the store reader skipped or read leniently (`StoreReader.notices`); runId and seq when it concerns one. */
  | {
      readonly kind: 'store-notice';
      readonly notice: StoreNoticeKind;
      readonly runId: string | null;
      readonly seq: number | null;
      readonly detail: string;
    };

/** The warning with its run named otherwise (several stores qualify run ids); one about no run stays as it is. */
export function renameRun(w: Warning, rename: (runId: string) => string): Warning {
  return w.runId === null ? w : { ...w, runId: rename(w.runId) };
}

/** The store's notices so far, as warnings; `label` names the store in each, where several are read together. */
export function noticeWarnings(store: StoreReader, label?: string): Warning[] {
  return store
    .notices()
    .map((n) => ({ kind: 'store-notice', notice: n.kind, runId: n.runId, seq: n.seq, detail: label ? `${label}: ${n.detail}` : n.detail }));
}

/** Called while a batch of runs is replayed: `done` of `total` runs finished. Keep it cheap. */
export type ProgressFn = (done: number, total: number) => void;

export interface HistorySourceOptions {
  readonly onProgress?: ProgressFn;
  /** Keep each run's replay for later calls (default). Off for a single pass that digests runs as it goes. */
  readonly retain?: boolean;
  /** Keep each record message's exact stored text (`RecordMessage.json`), for export. */
  readonly keepJson?: boolean;
  /** How the store's runs are read when first needed (default: `StoreReader.runs()`): a session reads them once for all its calls. */
  readonly runs?: () => readonly StoreRun[];
}

/** One interrupted snapshot parsed on its own: never part of the searchable record. */
export interface InterruptedSnapshot {
  readonly seq: number;
  readonly step: number | null;
  /** The snapshot's messages (summary artifacts dropped), or null when it cannot be parsed. */
  readonly messages: readonly RecordMessage[] | null;
  readonly reason: string | null;
}

/** Replays runs of one store on demand, each at most once per process. */
export class HistorySource {
  private readonly driver: ReplayDriver;
  private readonly replays = new Map<string, RunReplay>();
  private runList: readonly StoreRun[] | null = null;
  private conversationOf: Map<string, string | null> | null = null;

  constructor(
    readonly store: StoreReader,
    private readonly options: HistorySourceOptions = {},
  ) {
    this.driver = new ReplayDriver(store, options.keepJson === true);
  }

  runs(): readonly StoreRun[] {
    return (this.runList ??= this.options.runs?.() ?? this.store.runs());
  }

  /** Where replay progress goes (the CLI's spinner); work done on the source's behalf reports there too. */
  get onProgress(): ProgressFn | undefined {
    return this.options.onProgress;
  }

  private conversation(runId: string): string | null {
    this.conversationOf ??= new Map(this.runs().map((run) => [run.runId, run.conversationId]));
    return this.conversationOf.get(runId) ?? null;
  }

  /** The runs about to be replayed, in order: a conversation's parse seed is dropped after its last one. */
  plan(runIds: readonly string[]): void {
    this.driver.plan(runIds.map((id) => this.conversation(id)));
  }

  replay(runId: string): RunReplay {
    let r = this.replays.get(runId);
    if (!r) {
      r = this.driver.replay({ runId, conversationId: this.conversation(runId) }).replayer.result();
      if (this.options.retain !== false) this.replays.set(runId, r);
    }
    return r;
  }

  /** Replays several runs (cached ones cost nothing), reporting progress after each. */
  replayAll(runIds: readonly string[]): RunReplay[] {
    const progress = this.options.onProgress;
    const out: RunReplay[] = [];
    for (const id of runIds) {
      out.push(this.replay(id));
      progress?.(out.length, runIds.length);
    }
    return out;
  }

  /** Each interrupted snapshot of a run, in `seq` order, parsed on its own. */
  interruptedSnapshots(runId: string): InterruptedSnapshot[] {
    const out: InterruptedSnapshot[] = [];
    for (const row of [...this.store.interruptedSnapshots(runId)]) {
      const r = replayRun(runId, [row], this.driver.mediaCache);
      const step = typeof row.stepIndex === 'number' ? row.stepIndex : null;
      const reason = r.skipped[0]?.reason ?? null;
      out.push({ seq: row.seq, step, messages: reason === null ? r.messages : null, reason });
    }
    return out;
  }

  /** Warnings for the runs replayed so far, in corpus order. */
  warnings(runIds?: Iterable<string>): Warning[] {
    const ids = runIds ? [...runIds] : [...this.replays.keys()];
    const out: Warning[] = [];
    for (const id of ids) {
      const r = this.replays.get(id);
      if (r) out.push(...replayWarnings(r));
    }
    return out;
  }
}

/** What one run's replay warns of: its unreadable snapshots, then its unknown part kinds. */
export function replayWarnings(r: RunReplay): Warning[] {
  const out: Warning[] = r.skipped.map(skippedWarning);
  for (const [partKind, count] of r.unknownPartKinds) out.push({ kind: 'unknown-part-kind', runId: r.runId, partKind, count });
  return out;
}

function skippedWarning(s: SkippedSnapshot): Warning {
  return { kind: 'unreadable-snapshot', runId: s.runId, seq: s.seq, reason: s.reason };
}

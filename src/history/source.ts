import type { Store } from '../store/open.js';
import { MediaLookup } from '../store/media.js';
import { listRuns, type RunRecord } from '../store/runs.js';
import { SnapshotReader } from '../store/snapshots.js';
import { replayRun, type RunReplay, type SkippedSnapshot } from './replay.js';

/** Something the reference would have skipped silently; convsearch counts and reports it. */
export type Warning =
  | { readonly kind: 'unreadable-snapshot'; readonly runId: string; readonly seq: number; readonly reason: string }
  | { readonly kind: 'unknown-part-kind'; readonly runId: string; readonly partKind: string; readonly count: number };

/** Replays runs of one store on demand, each at most once per process. */
export class HistorySource {
  readonly snapshots: SnapshotReader;
  private readonly media: MediaLookup;
  private readonly replays = new Map<string, RunReplay>();
  private runList: RunRecord[] | null = null;

  constructor(readonly store: Store) {
    this.snapshots = new SnapshotReader(store);
    this.media = new MediaLookup(store);
  }

  runs(): RunRecord[] {
    return (this.runList ??= listRuns(this.store));
  }

  replay(runId: string): RunReplay {
    let r = this.replays.get(runId);
    if (!r) {
      r = replayRun(runId, this.snapshots.completeSnapshots(runId), this.media);
      this.replays.set(runId, r);
    }
    return r;
  }

  /** Warnings for the runs replayed so far, in corpus order. */
  warnings(runIds?: Iterable<string>): Warning[] {
    const ids = runIds ? [...runIds] : [...this.replays.keys()];
    const out: Warning[] = [];
    for (const id of ids) {
      const r = this.replays.get(id);
      if (!r) continue;
      for (const s of r.skipped) out.push(skippedWarning(s));
      for (const [partKind, count] of r.unknownPartKinds) out.push({ kind: 'unknown-part-kind', runId: id, partKind, count });
    }
    return out;
  }
}

function skippedWarning(s: SkippedSnapshot): Warning {
  return { kind: 'unreadable-snapshot', runId: s.runId, seq: s.seq, reason: s.reason };
}

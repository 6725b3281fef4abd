/**
 * Test-only: the current SQLite code behind the `StoreReader` seam, so that the backend tests compare
 * every reader with what the SQLite store gives through one interface (the real SQLite adapter is built
 * by the layout refactor).
 */
import { scanStore } from '../../src/index/content.js';
import { MediaLookup } from '../../src/store/media.js';
import { openStore } from '../../src/store/open.js';
import type { StoreReader } from '../../src/store/reader.js';
import { runCount } from '../../src/store/run-count.js';
import { listRuns } from '../../src/store/runs.js';
import { SnapshotReader } from '../../src/store/snapshots.js';
import { lastSteps } from '../../src/store/steps.js';

export function openSqliteReader(path: string): StoreReader {
  const store = openStore(path);
  const snapshots = new SnapshotReader(store);
  const media = new MediaLookup(store);
  return {
    label: path,
    identity: store.realPath,
    runs: () => listRuns(store),
    runCount: () => runCount(store),
    completeSnapshots: (runId) => snapshots.completeSnapshots(runId),
    completeSnapshotsAfter: (runId, afterSeq) => snapshots.completeSnapshotsAfter(runId, afterSeq),
    completeUpToSeq: (runId, seq) => snapshots.completeUpToSeq(runId, seq),
    interruptedSnapshots: (runId) => snapshots.interruptedSnapshots(runId),
    watermarks: () => snapshots.watermarks(),
    countsByRun: () => snapshots.countsByRun(),
    lastSteps: () => lastSteps(store),
    media: (sha) => media.get(sha),
    fingerprint: () => scanStore(store, new Map(), 0).total,
    unchanged: () => store.unchanged(),
    close: () => store.close(),
  };
}

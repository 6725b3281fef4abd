import assert from 'node:assert/strict';
import { summarizeRuns, withRecordCounts } from '../../src/api/listings.js';
import { HistorySource } from '../../src/history/source.js';
import { openSqliteReader } from '../../src/store/sqlite/reader.js';

/** The run listing through the index, with the store's whole-table counts refused, and the store's own. */
function listings(path: string, index: string): { indexed: unknown; store: unknown } {
  const reader = openSqliteReader(path);
  try {
    const source = new HistorySource(reader);
    const indexed = withRecordCounts(source, { path: index }, {}, (counts) => {
      const refuse = (): never => assert.fail('the store was asked for every run’s snapshot counts');
      const store = source.store as unknown as Record<string, unknown>;
      const saved = [store.countsByRun, store.lastSteps];
      store.countsByRun = refuse;
      store.lastSteps = refuse;
      try {
        return summarizeRuns(source, source.runs(), counts);
      } finally {
        [store.countsByRun, store.lastSteps] = saved;
      }
    });
    const store = withRecordCounts(source, false, {}, (counts) => summarizeRuns(source, source.runs(), counts));
    return { indexed, store };
  } finally {
    reader.close();
  }
}

/** The run listing of the SQLite store `path` through the (current) index `index` equals the store's, and asks the store for no counts. */
export function assertListedFromIndex(path: string, index: string, label: string): void {
  const { indexed, store } = listings(path, index);
  assert.deepEqual(indexed, store, label);
}

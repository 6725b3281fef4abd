import type { StoreReader } from '../store/reader.js';

/** A `"tool_name": "…"` member as JSON writes it; a key inside a string would have its quotes escaped. */
const TOOL_NAME = /"tool_name"\s*:\s*"((?:[^"\\]|\\.)*)"/g;

/**
 * The tool names a store's runs mention, sorted, for shell completion of `--tool`: read from each run's
 * latest snapshot as raw JSON text (no parsing, no replay), so a name that only an earlier snapshot held
 * before compaction may be missing. Fast enough to run on every Tab.
 */
export function storeToolNames(store: StoreReader): string[] {
  const names = new Set<string>();
  for (const { messages } of store.latestSnapshots()) {
    if (typeof messages !== 'string') continue;
    for (const m of messages.matchAll(TOOL_NAME)) {
      try {
        names.add(JSON.parse(`"${m[1]}"`) as string);
      } catch {
        // an escape JSON would reject: the snapshot is unreadable anyway
      }
    }
  }
  return [...names].sort();
}

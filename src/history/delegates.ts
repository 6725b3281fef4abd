import type { StoreRun } from '../store/reader.js';

/** The run and every run whose parent chain leads to it (cycles in damaged stores are cut). */
export function delegateTree(runs: readonly StoreRun[], rootId: string): Set<string> {
  const children = new Map<string, string[]>();
  for (const r of runs) {
    if (r.parentRunId === null) continue;
    const c = children.get(r.parentRunId);
    if (c) c.push(r.runId);
    else children.set(r.parentRunId, [r.runId]);
  }
  const tree = new Set<string>([rootId]);
  const todo = [rootId];
  while (todo.length) {
    for (const child of children.get(todo.pop()!) ?? []) {
      if (!tree.has(child)) {
        tree.add(child);
        todo.push(child);
      }
    }
  }
  return tree;
}

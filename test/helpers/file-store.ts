/** FileStepStore trees made by hand, as the harness's FileStepStore writes them (Python's json.dumps). */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pyJsonDumpsAscii } from '../../scripts/lib/py-json.js';

export interface RunSpec {
  runId?: unknown;
  startedAt?: string;
  conversationId?: string | null;
}

export function writeRun(root: string, dir: string, spec: RunSpec = {}): void {
  mkdirSync(join(root, dir, 'snapshots'), { recursive: true });
  const record = {
    run_id: spec.runId ?? dir,
    conversation_id: spec.conversationId ?? null,
    parent_run_id: null,
    agent_name: null,
    metadata: {},
    started_at: spec.startedAt ?? '2025-01-01T00:00:00+00:00',
    registration_id: null,
  };
  writeFileSync(join(root, dir, 'run.json'), pyJsonDumpsAscii(record));
}

export function snapshotText(runId: string, step: number, text: string, state: string | null = 'complete', pad = 0): string {
  const messages = [
    { parts: [{ content: text + ' '.repeat(pad), timestamp: '2025-01-01T00:00:00Z', part_kind: 'user-prompt' }], kind: 'request' },
  ];
  return pyJsonDumpsAscii({
    run_id: runId,
    step_index: step,
    conversation_id: null,
    parent_run_id: null,
    agent_name: null,
    timestamp: '2025-01-01T00:00:01+00:00',
    state,
    messages,
    idempotency_key: null,
  });
}

/** Like the writer: a temp sibling renamed into place. */
export function writeSnapshot(root: string, runId: string, name: string, text: string): void {
  const path = join(root, runId, 'snapshots', name);
  writeFileSync(`${path}.0123456789abcdef0123456789abcdef.tmp`, text);
  renameSync(`${path}.0123456789abcdef0123456789abcdef.tmp`, path);
}

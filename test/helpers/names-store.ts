/**
 * A store as the harness's CLI leaves it (step store and conversation catalog in one `sessions.db`):
 * runs whose ids StepPersistence derived for an agent (`sp-…`), a run without an agent name, malformed
 * `sp-` ids (not base64, not UTF-8, control characters inside), a derived id whose agent name holds
 * invisible and bidi characters, a delegate whose parent id is a derived one, and catalog rows: two
 * good ones (one with terminal escapes in its title), one that cannot be read, one for a conversation
 * without runs.
 */
import { join } from 'node:path';
import { derivedRunId, spIdOfBytes } from '../../scripts/lib/run-ids.js';
import { assistantMsg, tempDir, userMsg } from './stores.js';
import { StepStoreWriter } from '../../scripts/lib/store-writer.js';

export const INNER = '0198c4a2-7b1e-7c3d-9e4f-5a6b7c8d9e0f';
/** code_librarian's run, in conversation conv-named (catalogued). */
export const LIBRARIAN = derivedRunId('code_librarian', INNER);
/** Its delegate: a derived id too, whose parent is the librarian's. */
export const REPRODUCER = derivedRunId('reproducer', 'r-2');
/** A run of an agent without a name: the inner id as it is. */
export const PLAIN = '0198c4a2-0000-7000-8000-000000000001';
/** Decodes, with a zero-width space and a right-to-left override in the agent name (shown escaped). */
export const SNEAKY = derivedRunId('lib\u200brarian\u202e', 'r-3');
/** Malformed: not base64, not UTF-8, control characters in the decoded name. */
export const NOT_BASE64 = 'sp-not*base64';
export const NOT_UTF8 = spIdOfBytes(Buffer.from([0x32, 0x3a, 0xff, 0xfe, 0x72, 0x31]));
export const ESCAPES = derivedRunId('evil\u001b]0;pwned\u0007', 'r-4');

/** The catalog's good row for conv-named, and one with a hostile title for conv-hostile. */
export const NAMED_TITLE = 'Refund retries double-charge';
export const HOSTILE_TITLE = 'pwn\u001b[2J\u001b]0;owned\u0007 title';

const RUNS: Array<[runId: string, conversation: string | null, agent: string | null, parent: string | null]> = [
  [LIBRARIAN, 'conv-named', 'code_librarian', null],
  [REPRODUCER, 'conv-named', 'reproducer', LIBRARIAN],
  [PLAIN, 'conv-plain', null, null],
  [SNEAKY, 'conv-hostile', 'librarian', null],
  [NOT_BASE64, 'conv-corrupt', 'x', null],
  [NOT_UTF8, 'conv-corrupt', 'x', null],
  [ESCAPES, 'conv-corrupt', 'evil', null],
];

export function buildNamesStore(path = join(tempDir(), 'sessions.db')): string {
  const w = new StepStoreWriter(path);
  try {
    RUNS.forEach(([runId, conversationId, agentName, parentRunId], i) => {
      w.registerRun({ runId, conversationId, agentName, parentRunId, startedAt: `2026-01-12T10:0${i}:00Z` });
      w.saveSnapshot({
        runId,
        stepIndex: 1,
        timestamp: `2026-01-12T10:0${i}:30Z`,
        messages: [userMsg(`refund question ${i}`, 100 * i), assistantMsg(`refund answer ${i}`, 100 * i + 1)],
      });
    });
    w.saveConversation({ id: 'conv-named', summary: { title: NAMED_TITLE, tags: ['payments', 'refunds'], outcome: 'completed' } });
    w.saveConversation({ id: 'conv-hostile', summary: { title: HOSTILE_TITLE, tags: ['t\u200bag'], outcome: 'failed' } });
    w.saveConversation({ id: 'conv-corrupt', rawMetadata: '{"title": 42' });
    w.saveConversation({ id: 'conv-no-runs', summary: { title: 'Nobody ran this' } });
  } finally {
    w.close();
  }
  return path;
}

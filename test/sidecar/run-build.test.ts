import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { HistorySource } from '../../src/history/source.js';
import { renderMessage, searchText } from '../../src/render/message.js';
import { fieldsJson, searchPieces } from '../../src/sidecar/fields.js';
import { partsFromStored, storedParts } from '../../src/sidecar/run-build.js';
import { tokenize } from '../../src/text/tokenize.js';
import { openSqliteReader } from '../../src/store/sqlite/reader.js';
import { FIXTURES } from '../helpers/cli.js';

describe('sidecar/run-build', () => {
  test('rendered parts stored in the index read back as they were, for every message of the parity stores', () => {
    const dir = join(FIXTURES, 'parity');
    let checked = 0;
    let multi = 0;
    for (const name of readdirSync(dir).filter((n) => n.endsWith('.db'))) {
      const store = openSqliteReader(join(dir, name));
      try {
        const source = new HistorySource(store);
        for (const run of source.runs()) {
          for (const m of source.replay(run.runId).messages) {
            const parts = renderMessage(m.message);
            const stored = storedParts(parts);
            const json = [...fieldsJson(stored.fields)].join('');
            assert.deepEqual(partsFromStored(stored.roles, json), parts, `${name} ${run.runId}`);
            assert.deepEqual(searchPieces(JSON.parse(json)).flatMap(tokenize), tokenize(searchText(parts)));
            checked++;
            if (parts.length > 1) multi++;
          }
        }
      } finally {
        store.close();
      }
    }
    assert.ok(checked > 50 && multi > 0, `${checked} messages, ${multi} with several parts`);
  });
});

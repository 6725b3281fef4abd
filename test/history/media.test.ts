import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { binaryContent, request, textResponse, toolReturnPart, userPromptPart, type JsonObject } from '../../scripts/lib/messages.js';
import {
  addRawSnapshot,
  addRun,
  addSnapshot,
  assistantMsg,
  at,
  buildStore,
  dumps,
  recordTexts,
  replayOf,
  toolReply,
  userMsg,
  withSource,
} from '../helpers/stores.js';

const BIG = 'w'.repeat(70 * 1024) + ' PELICAN';
const sha = (s: string | Uint8Array) => createHash('sha256').update(s).digest('hex');
const URI = (s: string) => `media+sha256://${s}`;

/** A request whose tool return content is a dict that is itself a text candidate (string content + part_kind). */
function noteReturn(extra: JsonObject, content = BIG): JsonObject {
  return request([toolReturnPart('notes', { part_kind: 'note', content, ...extra }, 'c-1', { timestamp: at(1) })]);
}

/** A user request whose prompt part is replaced by a hand-made externalized-text marker. */
function markedUser(marker: JsonObject): JsonObject {
  return request([
    {
      timestamp: '2026-01-02T03:04:06Z',
      part_kind: 'user-prompt',
      __harness_external_media__: true,
      __harness_external_text__: true,
      ...marker,
    },
  ]);
}

describe('text markers are restored from the media table (§1.6)', () => {
  test('a large user prompt is externalized by the writer, restored, searchable and clipped for display', () => {
    const path = buildStore((w) => {
      addRun(w, 'r1', 'c1');
      addSnapshot(w, 'r1', [userMsg(BIG, 1), assistantMsg('ok', 2)]);
      const raw = w.db.prepare('SELECT messages FROM snapshots').pluck().get() as string;
      assert.ok(raw.includes('__harness_external_text__') && !raw.includes('PELICAN'), 'externalized in the store');
    });
    assert.equal(recordTexts(path, 'r1')[0], 'User: ' + BIG);
    const reply = toolReply(path, { query: 'pelican', conversationId: 'c1', contextLines: 0 });
    assert.ok(reply.endsWith('\n[0] User: ...' + BIG.slice(BIG.length - 500)), 'windowed around the tail term');
  });

  test('legacy markers that carry only "uri"', () => {
    const path = buildStore((w) => {
      addRun(w, 'r1', 'c1');
      const digest = w.putMedia(Buffer.from('legacy HERON text'), 'text/plain');
      addRawSnapshot(w, 'r1', dumps([markedUser({ uri: URI(digest) }), textResponse('ok', { timestamp: at(2) })]));
    });
    assert.deepEqual(recordTexts(path, 'r1'), ['User: legacy HERON text', 'Assistant: ok']);
    assert.equal(replayOf(path, 'r1').skipped.length, 0);
  });

  test('__harness_external_uri__ with a mirrored uri: the mirror is dropped; a different original uri is kept', () => {
    const mirrored = buildStore((w) => {
      addRun(w, 'r1', 'c1');
      addSnapshot(w, 'r1', [noteReturn({})]);
      const raw = w.db.prepare('SELECT messages FROM snapshots').pluck().get() as string;
      assert.match(raw, /"__harness_external_uri__": "media\+sha256:\/\/[0-9a-f]{64}", "uri": "media\+sha256:/);
    });
    assert.equal(recordTexts(mirrored, 'r1')[0], `Tool [notes]: {'part_kind': 'note', 'content': '${BIG}'}`);

    const own = buildStore((w) => {
      addRun(w, 'r1', 'c1');
      addSnapshot(w, 'r1', [noteReturn({ uri: 'https://example.org/doc' })]);
    });
    assert.equal(recordTexts(own, 'r1')[0], `Tool [notes]: {'part_kind': 'note', 'uri': 'https://example.org/doc', 'content': '${BIG}'}`);
  });

  test('binary markers come back as bytes (standard base64) inside tool-return reprs', () => {
    const bytes = new Uint8Array([0, 1, 2]);
    const path = buildStore(
      (w) => {
        addRun(w, 'r1', 'c1');
        addSnapshot(w, 'r1', [
          request([toolReturnPart('rec', binaryContent(bytes, 'audio/wav', { identifier: 'abc123' }), 'c-1', { timestamp: at(1) })]),
        ]);
        const raw = w.db.prepare('SELECT messages FROM snapshots').pluck().get() as string;
        assert.ok(raw.includes('"__harness_external_media__": true') && !raw.includes('"data"'));
      },
      { thresholdBytes: 3 },
    );
    assert.deepEqual(recordTexts(path, 'r1'), [
      "Tool [rec]: BinaryContent(data=b'\\x00\\x01\\x02', media_type='audio/wav', _identifier='abc123')",
    ]);
  });

  test('everything externalized (tiny threshold) renders exactly like everything inline', () => {
    const msgs = [userMsg('hello there', 1), assistantMsg('general kenobi', 2), noteReturn({}, 'a short note')];
    const inline = buildStore((w) => {
      addRun(w, 'r1', 'c1');
      addSnapshot(w, 'r1', msgs);
    });
    const external = buildStore(
      (w) => {
        addRun(w, 'r1', 'c1');
        addSnapshot(w, 'r1', msgs);
        addSnapshot(w, 'r1', [...msgs, userMsg('more', 3)]);
      },
      { thresholdBytes: 1 },
    );
    assert.deepEqual(recordTexts(external, 'r1'), [...recordTexts(inline, 'r1'), 'User: more']);
  });
});

describe('escaped keys (§1.6)', () => {
  const stashed = { __harness_external_uri__: 'keep-me', __harness_external_media__: 'orig' };

  test('escaped-keys-v1: the stashed original keys are written back', () => {
    const path = buildStore((w) => {
      addRun(w, 'r1', 'c1');
      addSnapshot(w, 'r1', [noteReturn(stashed)]);
      const raw = w.db.prepare('SELECT messages FROM snapshots').pluck().get() as string;
      assert.match(raw, /"__harness_external_marker_format__": "escaped-keys-v1"/);
    });
    const [text] = recordTexts(path, 'r1');
    assert.ok(text!.includes("'__harness_external_uri__': 'keep-me'"));
    assert.ok(text!.includes("'__harness_external_media__': 'orig'"));
    assert.ok(!text!.includes('escaped_keys') && !text!.includes('marker_format'));
    assert.match(toolReply(path, { query: 'pelican', conversationId: 'c1' }), /^Found 1 match/);
  });

  for (const broken of [1, 2]) {
    test(`escaped-keys-v2 in snapshot ${broken} of 2: that snapshot is skipped and reported, the other is used`, () => {
      let seqs: number[] = [];
      const path = buildStore((w) => {
        addRun(w, 'r1', 'c1');
        seqs = [
          addSnapshot(w, 'r1', [noteReturn(stashed), assistantMsg('first answer', 2)]),
          addSnapshot(w, 'r1', [
            noteReturn(stashed),
            assistantMsg('first answer', 2),
            userMsg('second question', 3),
            assistantMsg('second answer', 4),
          ]),
        ];
        w.db
          .prepare("UPDATE snapshots SET messages = replace(messages, 'escaped-keys-v1', 'escaped-keys-v2') WHERE seq = ?")
          .run(seqs[broken - 1]);
      });
      const replay = replayOf(path, 'r1');
      assert.deepEqual(replay.skipped, [
        {
          runId: 'r1',
          seq: seqs[broken - 1],
          reason: 'externalized media marker has an unsupported escaped-keys format: "escaped-keys-v2"',
        },
      ]);
      assert.equal(replay.messages.length, broken === 1 ? 4 : 2);
      const { warnings } = withSource(path, (s) => {
        s.replay('r1');
        return { warnings: s.warnings() };
      });
      assert.deepEqual(warnings, [{ kind: 'unreadable-snapshot', runId: 'r1', seq: seqs[broken - 1], reason: replay.skipped[0]!.reason }]);
    });
  }
});

describe('markers that cannot be restored skip their snapshot (§1.6, §9.15)', () => {
  function twoSnapshots(mutate: (w: import('../../scripts/lib/store-writer.js').StepStoreWriter, seq: number) => void): string {
    return buildStore((w) => {
      addRun(w, 'r1', 'c1');
      addSnapshot(w, 'r1', [userMsg('plain GANNET', 1), assistantMsg('ok', 2)]);
      const seq = addSnapshot(w, 'r1', [userMsg('plain GANNET', 1), assistantMsg('ok', 2), userMsg(BIG, 3)]);
      mutate(w, seq);
    });
  }

  test('a missing media row', () => {
    const path = twoSnapshots((w) => w.db.exec('DELETE FROM media'));
    const r = replayOf(path, 'r1');
    assert.equal(r.messages.length, 2, 'the first snapshot still counts');
    assert.deepEqual(r.skipped, [{ runId: 'r1', seq: 2, reason: `media row ${sha(BIG)} is missing` }]);
    assert.match(toolReply(path, { query: 'gannet', conversationId: 'c1' }), / in 2 persisted messages:/);
  });

  test('a store without a media table', () => {
    const path = buildStore((w) => {
      addRun(w, 'r1', 'c1');
      addRawSnapshot(w, 'r1', dumps([markedUser({ __harness_external_uri__: URI(sha('x')) })]));
    });
    withSource(path, (_, store) => assert.equal(store.file.schema.hasMedia, false));
    assert.deepEqual(replayOf(path, 'r1').skipped, [{ runId: 'r1', seq: 1, reason: `media row ${sha('x')} is missing` }]);
  });

  const badUris: Array<[string, string]> = [
    [URI('ABC'), `invalid sha256 digest in "${URI('ABC')}"`],
    [URI(sha('x').toUpperCase()), `invalid sha256 digest in "${URI(sha('x').toUpperCase())}"`],
    [URI(sha('x') + '0'), `invalid sha256 digest in "${URI(sha('x') + '0')}"`],
    [`https://example.org/${sha('x')}`, `not a media URI: "https://example.org/${sha('x')}"`],
  ];
  for (const [uri, reason] of badUris) {
    test(`a bad media URI ${uri.slice(0, 40)}`, () => {
      const path = buildStore((w) => {
        addRun(w, 'r1', 'c1');
        w.putMedia(Buffer.from('x'), 'text/plain');
        addRawSnapshot(w, 'r1', dumps([userMsg('ok GANNET', 1)]));
        addRawSnapshot(w, 'r1', dumps([userMsg('ok GANNET', 1), markedUser({ __harness_external_uri__: uri })]));
      });
      const r = replayOf(path, 'r1');
      assert.deepEqual(r.skipped, [{ runId: 'r1', seq: 2, reason }]);
      assert.equal(r.messages.length, 1);
    });
  }

  test('a marker without any URI', () => {
    const path = buildStore((w) => {
      addRun(w, 'r1', 'c1');
      addRawSnapshot(w, 'r1', dumps([markedUser({})]));
    });
    assert.equal(replayOf(path, 'r1').skipped.length, 1);
  });

  test('a user-prompt binary that was externalized never enters the corpus', () => {
    const bytes = new Uint8Array(70 * 1024).fill(0x41);
    const path = buildStore((w) => {
      addRun(w, 'r1', 'c1');
      addSnapshot(w, 'r1', [request([userPromptPart(['look at this', binaryContent(bytes, 'image/png')], { timestamp: at(1) })])]);
    });
    assert.deepEqual(recordTexts(path, 'r1'), ['User: look at this']);
    assert.equal(replayOf(path, 'r1').skipped.length, 0);
  });
});

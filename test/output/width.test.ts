import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { displayWidth, fitColumns, terminalWidth, wrapLine, wrapText } from '../../src/output/width.js';

describe('output/width', () => {
  test('display width ignores SGR codes, counts wide characters twice and combining marks not at all', () => {
    assert.equal(displayWidth('abc'), 3);
    assert.equal(displayWidth('\x1b[1m\x1b[31mabc\x1b[39m\x1b[22m'), 3);
    assert.equal(displayWidth('日本語'), 6);
    assert.equal(displayWidth('e\u0301'), 1);
    assert.equal(displayWidth('😀'), 2);
    assert.equal(displayWidth('a\tb'), 9);
  });

  test('wrapping keeps every row within the width, breaks after spaces and indents continuation rows', () => {
    const line = 'the quick brown fox jumps over the lazy dog and keeps on running through the field';
    const rows = wrapLine(line, 30, '    ');
    assert.ok(rows.length > 1);
    for (const r of rows) assert.ok(displayWidth(r) <= 30, `${JSON.stringify(r)} is wider than 30`);
    for (const r of rows.slice(1)) assert.ok(r.startsWith('    '));
    assert.equal(rows.map((r) => r.trim()).join(' '), line);
  });

  test('a word longer than the row is cut inside, nothing is lost', () => {
    const word = 'x'.repeat(70);
    const rows = wrapLine(word, 30, '  ');
    for (const r of rows) assert.ok(displayWidth(r) <= 30);
    assert.equal(rows.map((r) => r.trim()).join(''), word);
  });

  test('colour codes do not count and survive the wrap', () => {
    const styled = `\x1b[2m${'word '.repeat(20)}\x1b[22m`;
    const rows = wrapLine(styled, 24);
    for (const r of rows) assert.ok(displayWidth(r) <= 24);
    assert.ok(rows[0]!.startsWith('\x1b[2m'));
    assert.ok(rows.at(-1)!.endsWith('\x1b[22m'));
  });

  test('wide characters are never split across the edge', () => {
    const rows = wrapLine('日本語のテキストがここに長く続きます日本語のテキスト', 20);
    for (const r of rows) assert.ok(displayWidth(r) <= 20);
  });

  test('no width (not a terminal) leaves text alone', () => {
    const t = 'a '.repeat(200);
    assert.equal(wrapText(t, null), t);
    assert.equal(terminalWidth({ isTTY: false, columns: 40 }), null);
    assert.equal(terminalWidth({ isTTY: true, columns: 40 }), 40);
    assert.equal(terminalWidth({ isTTY: true }, { COLUMNS: '55' }), 55);
  });

  test('fitting columns shrinks the widest first and respects minimums', () => {
    assert.deepEqual(fitColumns([10, 20, 30], 100, [5, 5, 5]), [10, 20, 30]);
    assert.deepEqual(fitColumns([10, 20, 30], 45, [5, 5, 5]), [10, 17, 18]);
    assert.deepEqual(fitColumns([10, 20, 30], 10, [5, 6, 7]), [5, 6, 7]);
  });
});

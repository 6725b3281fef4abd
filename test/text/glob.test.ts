import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { GlobSet, globRegExp } from '../../src/text/glob.js';

describe('tool-name globs (--tool)', () => {
  test('* ? and sets match whole names, case-sensitively', () => {
    const cases: Array<[string, string, boolean]> = [
      ['delete_*', 'delete_user', true],
      ['delete_*', 'delete_', true],
      ['delete_*', 'undelete_user', false],
      ['delete_*', 'Delete_user', false],
      ['drop_?', 'drop_x', true],
      ['drop_?', 'drop_xy', false],
      ['drop_?', 'drop_é', true],
      ['[dD]elete', 'Delete', true],
      ['[!d]elete', 'delete', false],
      ['[!d]elete', 'xelete', true],
      ['v[0-9]', 'v7', true],
      ['v[0-9]', 'vx', false],
      ['a.b', 'a.b', true],
      ['a.b', 'axb', false],
      ['(x)+', '(x)+', true],
      ['lit\\*', 'lit*', true],
      ['lit\\*', 'literal', false],
      ['[unclosed', '[unclosed', true],
      ['*', '', true],
    ];
    for (const [pattern, name, want] of cases) assert.equal(globRegExp(pattern).test(name), want, `${pattern} ~ ${name}`);
  });

  test('a set matches when any pattern does; plain names match exactly', () => {
    const set = new GlobSet(['delete_*', 'drop_table', 'x?']);
    assert.deepEqual(
      ['delete_user', 'drop_table', 'drop_tables', 'xy', 'x', 'lookup'].filter((n) => set.has(n)),
      ['delete_user', 'drop_table', 'xy'],
    );
    assert.equal(set.size, 3);
    assert.deepEqual([...set], ['delete_*', 'drop_table', 'x?']);
    assert.equal(new GlobSet([]).has('anything'), false);
  });
});

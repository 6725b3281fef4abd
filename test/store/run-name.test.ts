import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeRunId } from '../../src/store/run-name.js';
import { derivedRunId, spIdOfBytes } from '../../scripts/lib/run-ids.js';

// computed with upstream's own expression in Python 3 (base64.urlsafe_b64encode(f'{len(name.encode())}:{name}{run_id}'.encode()), '=' stripped)
const PYTHON_VECTORS: Array<[string, string, string]> = [
  ['sp-MTQ6Y29kZV9saWJyYXJpYW4wMTk4YzRhMi03YjFlLTdjM2QtOWU0Zi01YTZiN2M4ZDllMGY', 'code_librarian', '0198c4a2-7b1e-7c3d-9e4f-5a6b7c8d9e0f'],
  ['sp-NTpyZXByb3Ix', 'repro', 'r1'],
  ['sp-OTrnoJTnqbblkZhydW4tNw', '研究员', 'run-7'],
  ['sp-MzphOmJ4', 'a:b', 'x'],
  ['sp-MDpzb2xv', '', 'solo'],
  ['sp-Njrvu79ib21p', '\ufeffbom', 'i'],
];

test('decodeRunId: ids derived by upstream decode into agent name and inner run id', () => {
  for (const [id, agent, innerRunId] of PYTHON_VECTORS) {
    assert.deepEqual(decodeRunId(id), { agent, innerRunId }, id);
    // the fixture writer derives the very same ids
    assert.equal(derivedRunId(agent, innerRunId), id);
  }
});

test('decodeRunId: the length, not the first colon, ends the name; names of any script round-trip', () => {
  for (const [agent, inner] of [
    ['deploy:verifier', '0:1'],
    ['😀 agent', 'inner'],
    ['x'.repeat(120), 'r'],
    ['a\u200bb', '\u202eevil'],
  ] as const) {
    assert.deepEqual(decodeRunId(derivedRunId(agent, inner)), { agent, innerRunId: inner });
  }
});

test('decodeRunId: anything not exactly a derived id is null (shown raw)', () => {
  const enc = (s: string) => Buffer.from(s, 'utf8');
  const cases: Array<[string, string]> = [
    ['run-pay-1', 'no sp- prefix'],
    ['0198c4a2-7b1e-7c3d-9e4f-5a6b7c8d9e0f', 'a plain inner id (no agent name)'],
    ['sp-', 'nothing after the prefix'],
    ['SP-NTpyZXByb3Ix', 'prefix in another case'],
    ['sp-NTpyZXByb3Ix==', 'padding upstream strips'],
    ['sp-NTpyZXByb3Ix\n', 'a trailing newline'],
    ['sp-NTpy+XByb3Ix', 'standard alphabet'],
    ['sp-N', 'a length that is no base64'],
    [spIdOfBytes(enc('5repro')), 'no colon'],
    [spIdOfBytes(enc(':repror1')), 'no length'],
    [spIdOfBytes(enc('05:reprox')), 'a leading zero'],
    [spIdOfBytes(enc('+5:reprox')), 'a sign'],
    [spIdOfBytes(enc('5:repro')), 'no inner run id'],
    [spIdOfBytes(enc('9:repro')), 'a length past the end'],
    [spIdOfBytes(enc('99999999999:x')), 'a huge length'],
    [spIdOfBytes(Buffer.from([0x32, 0x3a, 0xff, 0xfe, 0x72])), 'a name that is not UTF-8'],
    [spIdOfBytes(Buffer.from([0x31, 0x3a, 0x61, 0xc3])), 'an inner id that is not UTF-8'],
    [spIdOfBytes(enc('1:\u00e9x')), 'a length that cuts a character in two'],
    [derivedRunId('evil\u001b]0;pwned\u0007', 'r1'), 'control characters in the name'],
    [derivedRunId('agent', 'r\n1'), 'a newline in the inner id'],
    [derivedRunId('c1\u0085', 'r'), 'a C1 control'],
  ];
  for (const [id, why] of cases) {
    assert.equal(decodeRunId(id), null, `${why}: ${JSON.stringify(id)}`);
  }
  // stray bits in the last character: the same bytes, spelled as upstream never spells them
  const canonical = derivedRunId('ab', 'c');
  const last = canonical.at(-1)!;
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const stray = canonical.slice(0, -1) + alphabet[alphabet.indexOf(last) + 1];
  assert.deepEqual(Buffer.from(stray.slice(3), 'base64url'), Buffer.from(canonical.slice(3), 'base64url'));
  assert.equal(decodeRunId(stray), null);
});

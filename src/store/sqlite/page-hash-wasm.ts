/**
 * The page map's page hash (page-hash.ts) as WebAssembly SIMD, assembled here by hand (no toolchain,
 * no dependency). The hash: four 32-bit lanes per page, lane j starts at `seed ^ START[j]` and takes each
 * 16-byte step's word j as `lane = imul(lane ^ word, PRIME[j])`. The four lanes are one i32x4
 * (i32x4.mul is Math.imul per lane), and the words are read little-endian, as an Int32Array reads them
 * on a little-endian machine: the digests are the ones the JS loop gave before (the maps kept in indexes
 * stay valid; test/store/sqlite/page-hash-wasm.test.ts holds that loop as the reference). One page alone
 * is a chain of dependent multiplies; four pages at once are four chains the CPU runs side by side.
 * Hashing 1 MiB from the cache then takes ~0.03 ms against ~0.17 ms to read it: the pass costs about the
 * file's read (it was ~2× that in JS; valgrind counts 120 M instructions of hashing for 198 MB, JS 665 M).
 *
 * What `pagesFunction(4)` assembles, as text:
 *
 *   (func $hash4 (param $src i32) (param $pageSize i32) (param $seed i32) (param $out i32)
 *     (local $i i32) (local $end i32) (local $o1 i32) (local $o2 i32) (local $o3 i32)
 *     (local $prime v128) (local $start v128) (local $h0 v128) (local $h1 v128) (local $h2 v128) (local $h3 v128)
 *     (local.set $prime (v128.const i32x4 PRIME))
 *     (local.set $start (v128.xor (i32x4.splat (local.get $seed)) (v128.const i32x4 START)))
 *     (local.set $o1 (i32.mul (local.get $pageSize) (i32.const 1)))   ;; page k of the four is at $src + $ok
 *     (local.set $o2 (i32.mul (local.get $pageSize) (i32.const 2)))
 *     (local.set $o3 (i32.mul (local.get $pageSize) (i32.const 3)))
 *     (local.set $h0 (local.get $start)) … (local.set $h3 (local.get $start))
 *     (local.set $i (local.get $src))
 *     (local.set $end (i32.add (local.get $src) (local.get $pageSize)))
 *     (loop $step                                                     ;; a page is at least 512 bytes: once at least
 *       (local.set $h0 (i32x4.mul (v128.xor (local.get $h0) (v128.load (local.get $i))) (local.get $prime)))
 *       (local.set $h1 (i32x4.mul (v128.xor (local.get $h1) (v128.load (i32.add (local.get $i) (local.get $o1)))) (local.get $prime)))
 *       … $h2, $h3 likewise
 *       (local.set $i (i32.add (local.get $i) (i32.const 16)))
 *       (br_if $step (i32.lt_u (local.get $i) (local.get $end))))
 *     (v128.store offset=0 (local.get $out) (local.get $h0)) … (v128.store offset=48 (local.get $out) (local.get $h3)))
 *
 * The module imports its memory (env.memory) and exports `hash4` and `hash1`.
 */

export const START = [0x9e3779b1, 0x85ebca77, 0xc2b2ae3d, 0x27d4eb2f] as const;
export const PRIME = [0x01000193, 0x5bd1e995, 0x85ebca6b, 0xcc9e2d51] as const;

// the binary format's encodings (https://webassembly.github.io/spec/core/binary/)
function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) return [...out, b];
    out.push(b | 0x80);
  }
}

const vec = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
const name = (s: string): number[] => vec([...Buffer.from(s, 'utf8')].map((b) => [b]));
const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];

const I32 = 0x7f;
const V128 = 0x7b;
const simd = (op: number): number[] => [0xfd, ...uleb(op)];
/** The instructions used, named as in the text format. */
const op = {
  'local.get': (i: number) => [0x20, ...uleb(i)],
  'local.set': (i: number) => [0x21, ...uleb(i)],
  'i32.const': (n: number) => [0x41, ...sleb(n | 0)],
  'i32.add': [0x6a],
  'i32.mul': [0x6c],
  'i32.lt_u': [0x49],
  loop: [0x03, 0x40], // a block with no result
  br_if: (label: number) => [0x0d, ...uleb(label)],
  end: [0x0b],
  // memarg: alignment hint 2^0, then the offset
  'v128.load': [...simd(0x00), 0, 0],
  'v128.store': (offset: number) => [...simd(0x0b), 0, ...uleb(offset)],
  'v128.const': (lanes: readonly number[]) => [
    ...simd(0x0c),
    ...lanes.flatMap((x) => [x & 255, (x >>> 8) & 255, (x >>> 16) & 255, x >>> 24]),
  ],
  'i32x4.splat': simd(0x11),
  'v128.xor': simd(0x51),
  'i32x4.mul': simd(0xb5),
};

/** The body of a function hashing `n` consecutive pages at once (see the text above, for n = 4). */
function pagesFunction(n: number): number[] {
  // parameters 0–3: src, pageSize, seed, out; then the locals
  const [src, pageSize, seed, out] = [0, 1, 2, 3];
  const i = 4;
  const end = 5;
  const offset = (k: number): number => 5 + k; // k ≥ 1
  const prime = 5 + n;
  const start = prime + 1;
  const h = (k: number): number => start + 1 + k;
  const locals = vec([
    [...uleb(1 + n), I32],
    [...uleb(2 + n), V128],
  ]);
  const code: number[][] = [
    op['v128.const'](PRIME),
    op['local.set'](prime),
    op['local.get'](seed),
    op['i32x4.splat'],
    op['v128.const'](START),
    op['v128.xor'],
    op['local.set'](start),
  ];
  for (let k = 1; k < n; k++) code.push(op['local.get'](pageSize), op['i32.const'](k), op['i32.mul'], op['local.set'](offset(k)));
  for (let k = 0; k < n; k++) code.push(op['local.get'](start), op['local.set'](h(k)));
  code.push(op['local.get'](src), op['local.set'](i), op['local.get'](src), op['local.get'](pageSize), op['i32.add'], op['local.set'](end));
  code.push(op.loop);
  for (let k = 0; k < n; k++) {
    code.push(op['local.get'](h(k)), op['local.get'](i));
    if (k > 0) code.push(op['local.get'](offset(k)), op['i32.add']);
    code.push(op['v128.load'], op['v128.xor'], op['local.get'](prime), op['i32x4.mul'], op['local.set'](h(k)));
  }
  code.push(op['local.get'](i), op['i32.const'](16), op['i32.add'], op['local.set'](i));
  code.push(op['local.get'](i), op['local.get'](end), op['i32.lt_u'], op.br_if(0), op.end);
  for (let k = 0; k < n; k++) code.push(op['local.get'](out), op['local.get'](h(k)), op['v128.store'](16 * k));
  code.push(op.end);
  const body = [...locals, ...code.flat()];
  return [...uleb(body.length), ...body];
}

/** The module's bytes: one function type (four i32, no result), the imported memory, hash4 and hash1. */
function moduleBytes(): Uint8Array {
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00], // "\0asm", version 1
    ...section(1, vec([[0x60, ...vec([[I32], [I32], [I32], [I32]]), 0]])),
    ...section(2, vec([[...name('env'), ...name('memory'), 0x02, 0x00, 1]])), // a memory of at least one 64 KiB page
    ...section(3, vec([[0], [0]])),
    ...section(
      7,
      vec([
        [...name('hash4'), 0x00, 0],
        [...name('hash1'), 0x00, 1],
      ]),
    ),
    ...section(10, vec([pagesFunction(4), pagesFunction(1)])),
  ]);
}

/** What this module uses of WebAssembly (Node's types leave it to lib.dom, which a Node program does not load). */
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
  Memory: new (descriptor: { initial: number }) => { buffer: ArrayBuffer };
};

let compiled: object | undefined;

/**
 * A page hasher with its own memory: `input` takes up to `inputBytes` of whole pages (read straight into
 * it), `hash` writes their digests into `digests` (four lanes per page, the first page first).
 */
export class WasmPages {
  readonly input: Buffer;
  /** `input` as 32-bit words, in the machine's byte order. */
  readonly words: Uint32Array;
  readonly digests: Uint32Array;
  private readonly hash4: (src: number, pageSize: number, seed: number, out: number) => void;
  private readonly hash1: (src: number, pageSize: number, seed: number, out: number) => void;

  constructor(
    inputBytes: number,
    private readonly maxPages: number,
  ) {
    // the digests after the input, 16-byte aligned
    const out = Math.ceil(inputBytes / 16) * 16;
    const memory = new WebAssembly.Memory({ initial: Math.ceil((out + maxPages * 16) / 65536) });
    compiled ??= new WebAssembly.Module(moduleBytes());
    const exports = new WebAssembly.Instance(compiled, { env: { memory } }).exports as Record<'hash4' | 'hash1', WasmPages['hash4']>;
    this.hash4 = exports.hash4;
    this.hash1 = exports.hash1;
    this.input = Buffer.from(memory.buffer, 0, inputBytes);
    this.words = new Uint32Array(memory.buffer, 0, inputBytes >> 2);
    this.digests = new Uint32Array(memory.buffer, out, maxPages * 4);
  }

  /** Hashes the first `count` pages of `input` into the first `count` × 4 words of `digests`. */
  hash(count: number, pageSize: number, seed: number): void {
    if (count > this.maxPages || count * pageSize > this.input.length) throw new RangeError('more pages than the hasher holds');
    const out = this.digests.byteOffset;
    let p = 0;
    for (; p + 4 <= count; p += 4) this.hash4(p * pageSize, pageSize, seed, out + p * 16);
    for (; p < count; p++) this.hash1(p * pageSize, pageSize, seed, out + p * 16);
  }
}

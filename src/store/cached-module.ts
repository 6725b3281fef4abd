/**
 * A CommonJS bundle run from V8's code cache that the build wrote beside it (`<file>.cache`): a driver
 * thread starts afresh at every command, and compiling its driver (pg: ~80 KB) is most of its start.
 * V8 checks the cache against the source and the V8 flags and compiles anew when it refuses it, so a
 * stale or foreign cache costs time, never a wrong program. bin/convsearch.js does the same for the
 * command line's bundle (before any of convsearch is loaded, so with its own copy of these lines).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Script } from 'node:vm';

export interface CachedModule {
  readonly exports: unknown;
  /** Whether V8 compiled it from the cache. */
  readonly fromCache: boolean;
  readonly script: Script;
}

export const cacheFile = (file: string): string => `${file}.cache`;

/** Loads and runs the bundle `file` (an absolute path) as `require` would, compiled from its cache when V8 takes it. */
export function runCached(file: string): CachedModule {
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFile(file));
  } catch {
    cachedData = undefined; // none written: compiled from the source
  }
  const script = new Script(Module.wrap(readFileSync(file, 'utf8')), { filename: file, cachedData });
  const module = { exports: {} as unknown };
  const fn = script.runInThisContext() as (...args: unknown[]) => void;
  fn.call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
  return { exports: module.exports, fromCache: cachedData !== undefined && !script.cachedDataRejected, script };
}

/** Writes the code cache of a bundle run by runCached (the build does, once it has run its top level). */
export function writeCache(file: string, loaded: CachedModule): void {
  writeFileSync(cacheFile(file), loaded.script.createCachedData());
}

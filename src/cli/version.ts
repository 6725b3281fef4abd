import { createRequire } from 'node:module';

/** Set by the bundler (scripts/bundle.mjs), so that the bundle never reads package.json at run time. */
declare const CONVSEARCH_VERSION: string | undefined;

/** convsearch's version: the bundler's, else (run from tsc's output, as the tests do) package.json's. */
export const VERSION: string =
  typeof CONVSEARCH_VERSION === 'string'
    ? CONVSEARCH_VERSION
    : (createRequire(import.meta.url)('../../../package.json') as { version: string }).version;

/**
 * better-sqlite3. The bundle carries its JavaScript (compiled from the bundle's code cache with the
 * rest) and loads its addon straight from the installed package's `build/Release`: resolving the package
 * from the bundle, compiling its 14 modules from source and `bindings`' search for the addon cost every
 * command that opens a database ~20M instructions (~4 ms). That JavaScript is used only with the addon
 * of the same version: with another version installed, or an addon elsewhere, the installed package is
 * loaded as it loads itself. The addon is loaded on first use: a command that opens no database (--help,
 * --version, completion) does not pay for it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import Bundled from 'better-sqlite3';

// better-sqlite3 only honours `file:` URIs (needed for mode=ro, immutable, readonly_shm) when this is set
// before the addon first opens a database: anyone's, so on import, not on first use.
process.env.SQLITE_USE_URI = '1';

/** Set by the bundler (scripts/bundle.mjs): the version of the better-sqlite3 JavaScript it bundled. */
declare const BETTER_SQLITE3_VERSION: string | undefined;

interface Loaded {
  readonly Database: typeof Bundled;
  /** The addon, for the bundled JavaScript's `nativeBinding`; null: the package finds its own. */
  readonly addon: object | null;
}

let loaded: Loaded | undefined;

/** How this process opens databases: the bundled JavaScript with the installed addon of its version, else the installed package. */
export function sqliteBinding(): Loaded {
  if (loaded !== undefined) return loaded;
  const require = createRequire(import.meta.url);
  // run from tsc's output, the import is the installed package itself
  if (typeof BETTER_SQLITE3_VERSION !== 'string') return (loaded = { Database: Bundled, addon: null });
  try {
    const manifest = require.resolve('better-sqlite3/package.json');
    const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version?: unknown };
    const addon = join(dirname(manifest), 'build', 'Release', 'better_sqlite3.node');
    if (version === BETTER_SQLITE3_VERSION && existsSync(addon)) return (loaded = { Database: Bundled, addon: require(addon) as object });
  } catch {
    // not where a package keeps it: the package knows
  }
  return (loaded = { Database: require('better-sqlite3') as typeof Bundled, addon: null });
}

/** `new Database(filename, options)` of better-sqlite3. */
export function openDatabase(filename: string, options?: Bundled.Options): Bundled.Database {
  const { Database, addon } = sqliteBinding();
  // the typings allow a path only; the addon object itself is documented (better-sqlite3 #972)
  return new Database(filename, addon === null ? options : { ...options, nativeBinding: addon as unknown as string });
}

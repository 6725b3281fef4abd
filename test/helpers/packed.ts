import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './cli.js';
import { tempDir } from './stores.js';

/** Runs a command to its end; its stdout, or a failed assertion with its output. */
export function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/**
 * The package as `npm pack` makes it, installed into an empty folder as npm installs a tarball (its
 * files under node_modules/convsearch; its dependencies are this checkout's, linked beside it as npm
 * hoists them, as a registry install would bring the same versions without rebuilding better-sqlite3 here).
 */
export function installPacked(): { consumer: string; files: string[] } {
  const work = tempDir();
  const [packed] = JSON.parse(run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], ROOT)) as Array<{
    filename: string;
    files: Array<{ path: string }>;
  }>;
  const consumer = join(work, 'consumer');
  const modules = join(consumer, 'node_modules');
  mkdirSync(modules, { recursive: true });
  run('tar', ['-xzf', join(work, packed!.filename), '-C', modules], work);
  renameSync(join(modules, 'package'), join(modules, 'convsearch'));
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  for (const dep of [...Object.keys(manifest.dependencies), '@types', 'typescript']) {
    symlinkSync(join(ROOT, 'node_modules', dep), join(modules, dep));
  }
  return { consumer, files: packed!.files.map((f) => f.path) };
}

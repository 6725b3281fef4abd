import { Chalk, type ChalkInstance } from 'chalk';

export type ColorChoice = 'auto' | 'always' | 'never';

/**
 * convsearch's own colour policy (not chalk's argv/env sniffing): the flag wins; then NO_COLOR
 * (non-empty) disables and FORCE_COLOR / CLICOLOR_FORCE enable; auto means a TTY whose TERM is not dumb.
 */
export function colorEnabled(choice: ColorChoice, stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  if (choice === 'always') return true;
  if (choice === 'never') return false;
  if (env.NO_COLOR) return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== '') return force !== '0' && force !== 'false';
  if (env.CLICOLOR_FORCE && env.CLICOLOR_FORCE !== '0') return true;
  return Boolean(stream.isTTY) && env.TERM !== 'dumb';
}

export function makeChalk(enabled: boolean): ChalkInstance {
  return new Chalk({ level: enabled ? 1 : 0 });
}

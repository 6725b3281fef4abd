import { isGroup, type CommandDef } from '../command.js';
import type { Flag, ValueKind } from '../flags.js';

export type { ValueKind };

export interface OptionSpec {
  readonly long: string | null;
  readonly short: string | null;
  readonly description: string;
  readonly value: ValueKind;
  readonly repeatable: boolean;
}

export interface ArgSpec {
  readonly name: string;
  readonly value: ValueKind;
  readonly variadic: boolean;
}

export interface CommandSpec {
  readonly name: string;
  readonly description: string;
  readonly options: readonly OptionSpec[];
  readonly args: readonly ArgSpec[];
}

export interface CompletionModel {
  readonly program: string;
  readonly options: readonly OptionSpec[];
  readonly commands: readonly CommandSpec[];
}

const HELP: OptionSpec = {
  long: '--help',
  short: '-h',
  description: 'display help for command',
  value: { kind: 'none' },
  repeatable: false,
};
const ANY: ValueKind = { kind: 'any' };

function optionSpec(f: Flag): OptionSpec {
  const words = f.spelling.split(/[ ,]+/);
  const takesValue = words.some((w) => w.startsWith('<') || w.startsWith('['));
  return {
    long: words.find((w) => w.startsWith('--')) ?? null,
    short: words.find((w) => /^-[^-]/.test(w)) ?? null,
    description: f.help,
    value: !takesValue ? { kind: 'none' } : f.choices ? { kind: 'choices', choices: f.choices } : (f.completes ?? ANY),
    repeatable: f.repeatable === true || f.repeatable === 'whole',
  };
}

/** The command line as completion scripts see it, from the command definitions (hidden ones left out). */
export function completionModel(program: string, topFlags: readonly Flag[], defs: readonly CommandDef[]): CompletionModel {
  const commands = defs
    .filter((d) => !d.hidden)
    .map((d) => ({
      name: d.name,
      description: d.description ?? '',
      options: [...d.flags.flatMap((e) => (isGroup(e) ? [] : [optionSpec(e)])), HELP],
      args: d.args.map((a) => ({
        name: a.spelling.replace(/^[<[]|\.\.\.|[>\]]$/g, ''),
        value: a.choices ? { kind: 'choices' as const, choices: a.choices } : (a.completes ?? ANY),
        variadic: a.spelling.includes('...'),
      })),
    }));
  return { program, options: [...topFlags.map(optionSpec), HELP], commands };
}

/** Every spelling of an option: `-m`, `--max-matches`. */
export function spellings(o: OptionSpec): string[] {
  return [o.short, o.long].filter((x): x is string => x !== null);
}

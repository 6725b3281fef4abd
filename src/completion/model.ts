import type { Command, Option } from 'commander';
import { ROLES } from '../history/roles.js';

/** What a value slot completes to. */
export type ValueKind =
  | { readonly kind: 'none' }
  | { readonly kind: 'any' }
  | { readonly kind: 'file' }
  | { readonly kind: 'run' }
  | { readonly kind: 'conversation' }
  | { readonly kind: 'tool' }
  | { readonly kind: 'agent' }
  | { readonly kind: 'choices'; readonly choices: readonly string[] };

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

/** Flags and arguments whose values come from somewhere other than their definition. */
const DYNAMIC: Record<string, ValueKind> = {
  '--db': { kind: 'file' },
  '--index': { kind: 'file' },
  '--query-file': { kind: 'file' },
  '--run': { kind: 'run' },
  '--parent': { kind: 'run' },
  '--conversation': { kind: 'conversation' },
  '--tool': { kind: 'tool' },
  '--agent': { kind: 'agent' },
  'run-id': { kind: 'run' },
  // comma-separated and repeatable, so not commander choices
  '--role': { kind: 'choices', choices: ROLES },
};

const HELP: OptionSpec = { long: '--help', short: '-h', description: 'display help for command', value: { kind: 'none' }, repeatable: false };

function valueOf(key: string, takesValue: boolean, choices: readonly string[] | undefined): ValueKind {
  if (!takesValue) return { kind: 'none' };
  if (choices) return { kind: 'choices', choices };
  return DYNAMIC[key] ?? { kind: 'any' };
}

function optionSpec(o: Option, repeatable: (o: Option) => boolean): OptionSpec {
  return {
    long: o.long ?? null,
    short: o.short ?? null,
    description: o.description,
    value: valueOf(o.long ?? o.short ?? '', o.required || o.optional, o.argChoices),
    repeatable: repeatable(o),
  };
}

/**
 * The command line as completion scripts see it, read off the commander definitions (names starting
 * with `__` are internal and left out).
 */
export function completionModel(program: Command, repeatable: (o: Option) => boolean): CompletionModel {
  const commands = program.commands
    .filter((c) => !c.name().startsWith('__'))
    .map((c) => ({
      name: c.name(),
      description: c.description(),
      options: [...c.options.filter((o) => !o.hidden).map((o) => optionSpec(o, repeatable)), HELP],
      args: c.registeredArguments.map((a) => ({ name: a.name(), value: valueOf(a.name(), true, a.argChoices), variadic: a.variadic })),
    }));
  return { program: program.name(), options: [...program.options.map((o) => optionSpec(o, repeatable)), HELP], commands };
}

/** Every spelling of an option: `-m`, `--max-matches`. */
export function spellings(o: OptionSpec): string[] {
  return [o.short, o.long].filter((x): x is string => x !== null);
}

import { Argument, Command } from 'commander';
import { option, type Flag, type ValueKind } from './flags.js';
import type { Io } from './io.js';

/** A positional argument: `<words...>`, `<run-id>`. */
export interface ArgDef {
  readonly spelling: string;
  readonly help?: string;
  readonly choices?: readonly string[];
  /** What it completes to when `choices` does not say. */
  readonly completes?: ValueKind;
}

/** A heading the flags after it are listed under in the help. */
export interface FlagGroup {
  readonly group: string;
}

/**
 * A command as data: commander builds it, and the completion scripts are generated from the same
 * definitions (see completion/model.ts).
 */
export interface CommandDef {
  readonly name: string;
  readonly description?: string;
  readonly args: readonly ArgDef[];
  readonly flags: ReadonlyArray<Flag | FlagGroup>;
  readonly helpAfter?: string;
  /** Internal (`__complete`): left out of the help and the completion scripts. */
  readonly hidden?: boolean;
  /** Run with the command's sink first, then what commander passes: the arguments, then the flags object. */
  // biome-ignore lint/suspicious/noExplicitAny: commander's arguments and flags, typed by each command
  readonly action: (io: Io, ...args: any[]) => void | Promise<void>;
}

export function isGroup(entry: Flag | FlagGroup): entry is FlagGroup {
  return 'group' in entry;
}

export function buildCommand(def: CommandDef, io: Io): Command {
  const cmd = new Command(def.name);
  if (def.description !== undefined) cmd.description(def.description);
  for (const a of def.args) {
    const arg = new Argument(a.spelling, a.help);
    if (a.choices) arg.choices(a.choices);
    cmd.addArgument(arg);
  }
  for (const entry of def.flags) {
    if (isGroup(entry)) cmd.optionsGroup(entry.group);
    else cmd.addOption(option(entry));
  }
  if (def.helpAfter !== undefined) cmd.addHelpText('after', def.helpAfter);
  return cmd.action((...args: unknown[]) => def.action(io, ...args));
}

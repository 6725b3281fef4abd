import { closeSync, existsSync, openSync, realpathSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { readFileSync } from 'node:fs';
import {
  EXPORT_RECORD_CLOSE,
  escapeForTerminal,
  exportRecordOpen,
  oneLine,
  REDACT_PRESETS,
  RedactPatternError,
  Redactor,
  scopeMissMessage,
  transcriptHeader,
  transcriptMessage,
  type ExportedRun,
  type Session,
  type WorkHooks,
} from '../lib.js';
import type { CommandDef } from './command.js';
import { CommandError, EXIT_FOUND, EXIT_NOT_FOUND, UsageError } from './errors.js';
import { FLAGS, indexChoice, resolveDb, reworded } from './flags.js';
import type { Io } from './io.js';
import { queryWords, type SearchFlags, searchRequest } from './search-command.js';
import { withCliSession } from './session.js';

interface ExportFlags extends SearchFlags {
  output?: string;
  format: string;
  redact?: string[];
  redactPreset?: string[];
}

const FORMATS = ['json', 'jsonl', 'md'];

/** The file's identity when it exists (following links), else null. */
function identity(path: string): { dev: number; ino: number } | null {
  try {
    const s = statSync(path);
    return { dev: s.dev, ino: s.ino };
  } catch {
    return null;
  }
}

/**
 * Refuses an output path that is a store, one of its side files, a link to either or a file inside a
 * store directory: an export never writes over evidence.
 */
export function checkOutputPath(output: string, stores: readonly string[]): void {
  const out = resolve(output);
  const outReal = existsSync(out) ? realpathSync(out) : join(realpathSync(dirname(out)), basename(out));
  const outId = identity(out);
  for (const store of stores) {
    if (!existsSync(store)) continue; // a server URL
    const real = realpathSync(store);
    const evidence = [real, `${real}-wal`, `${real}-shm`, `${real}-journal`];
    const sameFile = evidence.some((e) => {
      const id = identity(e);
      return e === outReal || (id !== null && outId !== null && id.dev === outId.dev && id.ino === outId.ino);
    });
    if (sameFile || (statSync(real).isDirectory() && (outReal + '/').startsWith(real + '/'))) {
      throw new CommandError(`refusing to write ${output}: it is the store ${store} or one of its files`);
    }
  }
}

/** Where export writes: standard output or a file, a piece at a time. */
interface Writer {
  write(text: string): void;
  close(): void;
}

function fileWriter(path: string): Writer {
  let fd: number;
  try {
    fd = openSync(path, 'w', 0o600);
  } catch (e) {
    throw new CommandError(`cannot write ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  return {
    write: (text) => {
      const b = Buffer.from(text);
      let off = 0;
      while (off < b.length) off += writeSync(fd, b, off);
    },
    close: () => closeSync(fd),
  };
}

/** The runs to export, in order: the one run, the conversation's runs (by start), or the query's hit runs (hit order). */
function exportTargets(session: Session, words: string[], flags: ExportFlags, hooks: WorkHooks): string[] {
  if (words.length === 0) {
    if (flags.run !== undefined) return [flags.run];
    const runs = session.runs().filter((r) => r.conversationId === flags.conversation);
    if (runs.length === 0) throw new CommandError(`no runs in conversation ${flags.conversation}`);
    return runs.map((r) => r.runId);
  }
  const outcome = session.search(
    searchRequest(words, { ...flags, ...((flags.scope ?? flags.run ?? flags.conversation) ? {} : { scope: 'all' }) }),
    hooks,
  );
  if (outcome.missing) throw new CommandError(scopeMissMessage(outcome.missing));
  if (outcome.kind !== 'found') return [];
  return [...new Set(outcome.hits.map((h) => h.run.runId))];
}

function writeRun(w: Writer, r: ExportedRun, format: string, redactor: Redactor, clean: (s: string) => string, first: boolean): void {
  if (format === 'md') {
    w.write((first ? '' : '\n---\n\n') + transcriptHeader(r.run, r.messages.length, { clean }));
    for (const m of r.messages) w.write('\n' + transcriptMessage(m, { clean }));
    return;
  }
  const lines = format === 'jsonl';
  w.write((lines ? '' : first ? '[\n' : ',\n') + exportRecordOpen(r.run, r.messages.length));
  r.messages.forEach((m, i) => {
    const json = redactor.json(m.json);
    w.write((i ? ',' : '') + (lines ? oneLine(json) : json));
  });
  w.write(EXPORT_RECORD_CLOSE + (lines ? '\n' : ''));
}

export function exportCommand(): CommandDef {
  return {
    name: 'export',
    description: 'write the replayed record of a run, a conversation or the runs a query hits: stored JSON, or a Markdown transcript',
    args: [{ spelling: '[words...]', help: 'query words: export the runs of the hits (else --run or --conversation)' }],
    flags: [
      FLAGS.db,
      reworded(FLAGS.run, 'export this run (with words: search only it)'),
      reworded(FLAGS.conversation, "export this conversation's runs (with words: search only them)"),
      {
        spelling: '--format <format>',
        help: 'json (one array of run records), jsonl (one record per line) or md (a transcript)',
        choices: FORMATS,
        default: 'json',
      },
      reworded(FLAGS.output, "file to write ('-' or none: standard output); never the store"),
      { spelling: '--redact <regex>', help: 'replace matches with [redacted] (repeatable; in JSON, string values only)', repeatable: true },
      {
        spelling: '--redact-preset <name>',
        help: 'secrets: API keys, bearer tokens, passwords in URLs, e-mail addresses (repeatable)',
        repeatable: true,
        choices: Object.keys(REDACT_PRESETS),
      },
      FLAGS.scope,
      FLAGS.queryFile,
      { ...FLAGS.maxMatches, help: 'most hits whose runs a query exports', default: '20' },
      FLAGS.context,
      FLAGS.bm25K1,
      FLAGS.bm25B,
      FLAGS.index,
      FLAGS.noIndex,
      { group: 'Filters for a query (as for search):' },
      FLAGS.role,
      FLAGS.tool,
      FLAGS.minScore,
      FLAGS.agent,
      FLAGS.parent,
      FLAGS.since,
      FLAGS.until,
      FLAGS.phrase,
      FLAGS.quiet,
    ],
    helpAfter: `
json and jsonl hold each message exactly as the store holds it (the bytes of the snapshot copy the
replay keeps), so pydantic-ai's ModelMessagesTypeAdapter reads a record's "messages" back; each record
also has run_id, conversation_id, agent, parent_run_id, started_at and message_count. Redaction changes
only string values, re-encoded, so the JSON stays valid; the number of redactions goes to stderr.
md escapes terminal control characters in store text.

Exit status: 0 when something was exported, 1 when a query hit nothing, 2 on an error.

Examples:
  convsearch export --run run-alpha-1 --db sessions.db > run.json
  convsearch export --conversation conv-42 --format md -o conv-42.md
  convsearch export refund --format jsonl --redact-preset secrets --redact 'ACCT-[0-9]+' -o hits.jsonl`,
    async action(io: Io, args: string[], flags: ExportFlags) {
      const words = queryWords(args, flags.queryFile, (p) => (p === 0 ? io.sink.readStdin() : readFileSync(p, 'utf8')));
      if (words.length === 0 && flags.run === undefined && flags.conversation === undefined)
        throw new UsageError('export needs --run <id>, --conversation <id> or query words');
      if (words.length === 0 && flags.run !== undefined && flags.conversation !== undefined)
        throw new UsageError('--run and --conversation name different things to export; pass one');
      let redactor: Redactor;
      try {
        redactor = new Redactor(flags.redact ?? [], flags.redactPreset ?? []);
      } catch (e) {
        if (e instanceof RedactPatternError) throw new UsageError(e.message);
        throw e;
      }
      const toFile = flags.output !== undefined && flags.output !== '-';
      if (toFile) checkOutputPath(flags.output!, resolveDb(flags.db, io.env));
      const quiet = flags.quiet === true;
      // store text reaching a terminal is escaped; a file or pipe of JSON keeps the stored bytes
      const escaping = flags.format === 'md' || (!toFile && io.stdout.isTTY === true);
      const clean = (s: string): string => (escaping ? escapeForTerminal(redactor.text(s)) : redactor.text(s));
      let runs = 0;
      const warnings = await withCliSession(io, flags.db, { quiet, index: indexChoice(flags) }, (session, hooks) => {
        const targets = exportTargets(session, words, flags, hooks);
        if (targets.length === 0) return session.storeNotices();
        const out: Writer = toFile
          ? fileWriter(flags.output!)
          : { write: (t) => io.out(escaping && flags.format !== 'md' ? escapeForTerminal(t) : t), close: () => {} };
        const seen = session.storeNotices();
        try {
          for (const r of session.exportRuns(targets, hooks)) {
            writeRun(out, r, flags.format, redactor, clean, runs === 0);
            runs++;
            seen.push(...r.warnings);
          }
          if (flags.format === 'json') out.write('\n]\n');
        } finally {
          out.close();
        }
        return seen;
      });
      if (!quiet) io.reportWarnings(warnings);
      if (redactor.active) io.err(`convsearch: redacted ${redactor.count} match${redactor.count === 1 ? '' : 'es'}\n`);
      if (runs === 0) {
        if (flags.format === 'json' && !toFile) io.out('[]\n');
        io.status = EXIT_NOT_FOUND;
        return;
      }
      if (!quiet && toFile) io.err(`convsearch: wrote ${flags.output}: ${runs} run${runs === 1 ? '' : 's'}\n`);
      io.status = EXIT_FOUND;
    },
  };
}

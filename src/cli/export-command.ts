import {
  EXPORT_FORMATS,
  type ExportFormat,
  type ExportSelection,
  exportText,
  OutputFile,
  REDACT_PRESETS,
  RedactPatternError,
  Redactor,
  refuseStoreOutput,
  type Warning,
} from '../lib.js';
import type { CommandDef } from './command.js';
import { EXIT_FOUND, EXIT_NOT_FOUND, UsageError } from './errors.js';
import { FLAGS, HIT_FILTERS, indexChoice, resolveDb, reworded } from './flags.js';
import type { Io } from './io.js';
import { queryReader, queryWords, type SearchFlags, searchRequest } from './search-command.js';
import { withCliSession } from './session.js';

interface ExportFlags extends SearchFlags {
  output?: string;
  format: ExportFormat;
  redact?: string[];
  redactPreset?: string[];
}

/** What the flags ask to export: query words (or --phrase) search (a scope defaulting to every run), else a run, a conversation, or every run. */
function selection(words: string[], flags: ExportFlags): ExportSelection {
  if (words.length > 0 || (flags.phrase ?? []).length > 0) {
    const scoped = flags.conversation !== undefined || flags.run !== undefined || flags.scope !== undefined;
    return { search: searchRequest(words, { ...flags, ...(scoped ? {} : { scope: 'all' }) }) };
  }
  if (flags.run !== undefined && flags.conversation !== undefined)
    throw new UsageError(
      '--run and --conversation name different things to export; pass one (or add query words to search the run within the conversation)',
    );
  if (flags.run !== undefined) return { runId: flags.run };
  if (flags.conversation !== undefined) return { conversationId: flags.conversation };
  if (flags.scope === 'all') return { all: true };
  throw new UsageError('export needs --run <id>, --conversation <id>, --scope all or query words');
}

function redactor(flags: ExportFlags): Redactor {
  try {
    return new Redactor(flags.redact ?? [], flags.redactPreset ?? []);
  } catch (e) {
    if (e instanceof RedactPatternError) throw new UsageError(e.message);
    throw e;
  }
}

export function exportCommand(): CommandDef {
  return {
    name: 'export',
    description:
      'write the replayed record of a run, a conversation or the runs a query hits: the stored message JSON, or a Markdown transcript',
    args: [
      {
        spelling: '[words...]',
        help: 'query words: export the runs of the hits, as search finds them (else --run, --conversation or --scope all)',
      },
    ],
    flags: [
      FLAGS.db,
      reworded(FLAGS.run, 'export this run (with query words: search only it)'),
      reworded(FLAGS.conversation, "export this conversation's runs (with query words: search only them)"),
      reworded(FLAGS.scope, 'all: every run (with query words: search every run, the default)'),
      {
        spelling: '--format <format>',
        help: 'json (an array of run records), jsonl (one record per line) or md (a transcript for people)',
        choices: [...EXPORT_FORMATS],
        default: 'json',
      },
      reworded(FLAGS.output, "file to write, replaced whole once complete ('-' or none: standard output); never a store"),
      {
        spelling: '--redact <regex>',
        help: 'replace matches with [redacted] (JavaScript syntax; repeatable; in JSON, string values only)',
        repeatable: 'whole', // a comma is part of a pattern (a{1,3}), never a list
      },
      {
        spelling: '--redact-preset <name>',
        help: 'secrets: API keys, bearer tokens, passwords in URLs, e-mail addresses (repeatable)',
        repeatable: true,
        choices: Object.keys(REDACT_PRESETS),
      },
      reworded(FLAGS.quiet, 'no warnings and no wrote/redacted lines on stderr'),
      { group: 'With query words (as for search):' },
      FLAGS.queryFile,
      reworded(FLAGS.maxMatches, 'most hits, as search selects them: their runs are exported'),
      reworded(FLAGS.context, 'context around each hit, as search (it decides which overlapping hits search shows)'),
      FLAGS.bm25K1,
      FLAGS.bm25B,
      FLAGS.index,
      FLAGS.noIndex,
      FLAGS.tokenizer,
      FLAGS.collapse,
      ...HIT_FILTERS,
    ],
    helpAfter: `
A run's record is the one show prints: the complete snapshots replayed (interrupted ones left out,
duplicates removed as search removes them), numbered alike. json and jsonl write each message exactly
as the store holds it (the characters of the kept copy in its snapshot, media markers included), so
pydantic-ai's ModelMessagesTypeAdapter reads a record's "messages" back; each record also has
run_id, conversation_id, agent_name, parent_run_id, started_at, first_message_at, last_message_at
and message_count. Redaction changes only string values (keys, numbers and punctuation never), so the
JSON stays valid; the number of redactions goes to stderr. md escapes terminal control characters in
store text; so does JSON on a terminal (as \\u001b-style escapes).

Exit status: 0 when a run was exported, 1 when a query hit nothing (json: an empty array), 2 on an
error (an unknown run or conversation, a bad --redact pattern, an -o naming a store).

Examples:
  convsearch export --run run-alpha-1 --db sessions.db > run.json
  convsearch export --conversation conv-42 --format md -o conv-42.md
  convsearch export refund --format jsonl --redact-preset secrets --redact 'ACCT-[0-9]+' -o hits.jsonl`,
    async action(io: Io, args: string[], flags: ExportFlags) {
      const words = queryWords(args, flags.queryFile, queryReader(io));
      const chosen = selection(words, flags);
      const redact = redactor(flags);
      const toFile = flags.output !== undefined && flags.output !== '-';
      const targets = resolveDb(flags.db, io.env, io.cwd).targets;
      if (toFile) refuseStoreOutput(flags.output!, targets);
      const quiet = flags.quiet === true;
      // the whole export goes to a temporary file first: renamed into place, or spooled to stdout
      const out = new OutputFile(toFile ? flags.output! : null, targets);
      let runs = 0;
      let warnings: Warning[] = [];
      try {
        await withCliSession(io, flags.db, { quiet, index: indexChoice(flags, io.env) }, (session, hooks) => {
          // a read retried on stable copies (a writer changed a store meanwhile) starts the export again
          out.reset();
          redact.count = 0;
          const found = session.exportRuns(chosen, hooks);
          warnings = [...found.warnings];
          runs = found.runs.length;
          const records = (function* () {
            for (const r of found.records()) {
              warnings.push(...r.warnings);
              yield r;
            }
          })();
          for (const piece of exportText(records, {
            format: flags.format,
            redactor: redact,
            terminal: !toFile && io.stdout.isTTY === true,
          }))
            out.write(piece);
        });
      } catch (e) {
        out.discard();
        throw e;
      }
      if (toFile) out.commit();
      else out.drain((text) => io.out(text));
      if (!quiet) {
        // a search's warnings and its runs' replays may name the same thing: each once
        io.reportWarnings([...new Map(warnings.map((w) => [JSON.stringify(w), w])).values()]);
        if (redact.active) io.err(`convsearch: redacted ${redact.count} match${redact.count === 1 ? '' : 'es'}\n`);
        if (toFile) io.err(`convsearch: wrote ${flags.output}: ${runs} run${runs === 1 ? '' : 's'}, ${out.bytes} bytes\n`);
      }
      io.status = runs > 0 ? EXIT_FOUND : EXIT_NOT_FOUND;
    },
  };
}

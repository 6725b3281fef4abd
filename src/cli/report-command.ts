import { writeFileSync } from 'node:fs';
import { hitTranscripts, refuseStoreOutput, reportHtml } from '../lib.js';
import type { CommandDef } from './command.js';
import { CommandError, EXIT_FOUND, EXIT_NOT_FOUND, UsageError } from './errors.js';
import { FLAGS, HIT_FILTERS, indexChoice, resolveDb, reworded, sortedBy } from './flags.js';
import type { Io } from './io.js';
import { queryReader, queryWords, type SearchFlags, searchRequest } from './search-command.js';
import { withCliSession } from './session.js';

/** A page holds more than a terminal: more hits by default than search's. */
const REPORT_MAX_MATCHES = 20;

interface ReportFlags extends SearchFlags {
  output?: string;
}

export function reportCommand(): CommandDef {
  return {
    name: 'report',
    description: 'write one self-contained HTML page: the ranked hits, their match windows, a timeline and the transcripts of their runs',
    args: [{ spelling: '[words...]', help: 'query words, as for search' }],
    flags: [
      reworded(FLAGS.output, "HTML file to write ('-': standard output); required"),
      FLAGS.db,
      reworded(FLAGS.conversation, "report on this conversation's runs (default: every run)"),
      FLAGS.scope,
      FLAGS.run,
      FLAGS.queryFile,
      { ...FLAGS.maxMatches, help: 'most hits to show', default: String(REPORT_MAX_MATCHES) },
      FLAGS.context,
      FLAGS.bm25K1,
      FLAGS.bm25B,
      FLAGS.index,
      FLAGS.noIndex,
      { group: 'Filters (as for search):' },
      ...HIT_FILTERS,
      FLAGS.collapse,
      sortedBy(['score', 'time'], 'score', 'order of the hits: score (rank) or time (oldest first)'),
      FLAGS.reverse,
      FLAGS.quiet,
    ],
    helpAfter: `
The page loads nothing and runs nothing: its Content-Security-Policy forbids every fetch and script,
the timeline is inline SVG, and every piece of store text is escaped. The timeline counts every
matching message (a run's on the day it started), whatever -m shows; each hit links to its run's
transcript further down the page.

Exit status: 0 when the report holds at least one hit, 1 when it holds none (it is still written),
2 on an error.

Examples:
  convsearch report refund policy --db sessions.db -o report.html
  convsearch report delete_user --conversation conv-42 --role tool-call -m 50 -o audit.html`,
    async action(io: Io, args: string[], flags: ReportFlags) {
      if (flags.output === undefined) throw new UsageError('report needs -o <file> (or -o - for standard output)');
      // the check export's -o makes: never a store, its side files, a link to one, or inside a store directory
      if (flags.output !== '-') refuseStoreOutput(flags.output, resolveDb(flags.db, io.env, io.cwd).targets);
      // a report with no scope named covers every run
      const scoped = flags.conversation !== undefined || flags.run !== undefined || flags.scope !== undefined;
      const request = searchRequest(queryWords(args, flags.queryFile, queryReader(io)), {
        ...flags,
        ...(scoped ? {} : { scope: 'all' }),
      });
      const quiet = flags.quiet === true;
      const { outcome, transcripts, stores } = await withCliSession(
        io,
        flags.db,
        {
          quiet,
          index: indexChoice(flags, io.env),
          onFallback: (r) => {
            if (!quiet) io.warn(`index unavailable, searching without it: ${r}`);
          },
        },
        (session, hooks) => {
          const outcome = session.search(request, hooks);
          return { outcome, transcripts: hitTranscripts(session, outcome, hooks), stores: session.labels() };
        },
      );
      const html = reportHtml({ outcome, transcripts, stores, generatedAt: new Date().toISOString() });
      if (flags.output === '-') io.out(html);
      else {
        try {
          writeFileSync(flags.output, html);
        } catch (e) {
          throw new CommandError(`cannot write ${flags.output}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
        }
      }
      if (!quiet) io.reportWarnings(outcome.warnings);
      const hits = outcome.kind === 'found' ? outcome.hits.length : 0;
      if (!quiet && flags.output !== '-')
        io.err(
          `convsearch: wrote ${flags.output}: ${hits} hit${hits === 1 ? '' : 's'}, ${outcome.matches.total} matching messages, ${Buffer.byteLength(html)} bytes\n`,
        );
      io.status = hits > 0 ? EXIT_FOUND : EXIT_NOT_FOUND;
    },
  };
}

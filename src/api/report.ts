import type { SearchOutcome } from '../search/search.js';
import { NotFoundError } from './errors.js';
import type { WorkHooks } from './search.js';
import type { Session } from './session.js';
import type { ShowView } from './show.js';

/**
 * The replayed record of every run a hit is in, in hit order, keyed by the run's name in the session:
 * what a report links each hit to. A run the session cannot show (it vanished between the reads) is
 * left out, and its hits are then shown without a link.
 */
export function hitTranscripts(session: Session, outcome: SearchOutcome, hooks: WorkHooks = {}): Map<string, ShowView> {
  const views = new Map<string, ShowView>();
  if (outcome.kind !== 'found') return views;
  for (const hit of outcome.hits) {
    const id = hit.run.runId;
    if (views.has(id)) continue;
    try {
      views.set(id, session.showRun(id, {}, hooks));
    } catch (e) {
      if (!(e instanceof NotFoundError)) throw e;
    }
  }
  return views;
}

import type { IndexStanding } from '../lib.js';

/** What a shared index said of its standing during one command, per store (its last word), for JSON's `index`. */
export interface StandingLog {
  readonly onIndexStanding: (store: string, standing: IndexStanding | null) => void;
  standings(): IndexStanding[];
}

export function standingLog(): StandingLog {
  const byStore = new Map<string, IndexStanding>();
  return {
    onIndexStanding: (store, standing) => {
      if (standing === null) byStore.delete(store);
      else byStore.set(store, standing);
    },
    standings: () => [...byStore.values()],
  };
}

p='src/history/attribution.ts'
s=open(p).read()
a='''  const claimed = new Set<string>();
  const sections: Section[] = [];
  for (const { run, record } of runs) {
    let start = 0;
    if (!fullRecord) {
      while (start < record.length && claimed.has(record[start]!.keys.strict)) start++;
      for (const m of record) claimed.add(m.keys.strict);
    }
    if (start < record.length) sections.push({ run, record, start });
  }
  return sections;
}'''
b='''  const claimed = new Set<string>();
  const sections: Section[] = [];
  for (const { run, record } of runs) {
    const start = fullRecord ? 0 : claimInherited(claimed, record.map((m) => m.keys.strict));
    if (start < record.length) sections.push({ run, record, start });
  }
  return sections;
}

/**
 * One step of the attribution walk: the length of the leading prefix of `strictKeys` (a run's record)
 * that earlier runs already claimed; then the whole record is claimed for the runs after it.
 */
export function claimInherited(claimed: Set<string>, strictKeys: readonly string[]): number {
  let start = 0;
  while (start < strictKeys.length && claimed.has(strictKeys[start]!)) start++;
  for (const k of strictKeys) claimed.add(k);
  return start;
}'''
assert a in s
s=s.replace(a,b)
open(p,'w').write(s)

p='src/history/source.ts'
s=open(p).read()
def rep(a,b):
    global s
    assert a in s, a[:60]
    s=s.replace(a,b)
rep('''export interface HistorySourceOptions {
  readonly onProgress?: ProgressFn;
}''','''export interface HistorySourceOptions {
  readonly onProgress?: ProgressFn;
  /** Keep each run's replay for later calls (default). Off for a single pass that digests runs as it goes. */
  readonly retain?: boolean;
}''')
rep('''      this.replays.set(runId, r);
      if (conversation''','''      if (this.options.retain !== false) this.replays.set(runId, r);
      if (conversation''')
open(p,'w').write(s)

p='src/history/source.ts'
s=open(p).read()
def rep(a,b):
    global s
    assert a in s, a[:60]
    s=s.replace(a,b)
rep("import { replayRun, type RecordMessage, type RunReplay, type SkippedSnapshot } from './replay.js';",
"import { replayRun, RunReplayer, type ParsedSnapshot, type RecordMessage, type RunReplay, type SkippedSnapshot } from './replay.js';")
rep('''  private runList: RunRecord[] | null = null;
''','''  private runList: RunRecord[] | null = null;
  private conversationOf: Map<string, string | null> | null = null;
  /** Per conversation, the last snapshot replayed: a later run's first snapshot mostly repeats it. */
  private readonly lastSnapshots = new Map<string, ParsedSnapshot>();
''')
rep('''    if (!r) {
      r = replayRun(runId, this.snapshots.completeSnapshots(runId), this.media);
      this.replays.set(runId, r);
    }''','''    if (!r) {
      this.conversationOf ??= new Map(this.runs().map((run) => [run.runId, run.conversationId]));
      const conversation = this.conversationOf.get(runId) ?? null;
      const seed = conversation === null ? null : (this.lastSnapshots.get(conversation) ?? null);
      const replayer = new RunReplayer(runId, this.media, [], seed);
      for (const row of this.snapshots.completeSnapshots(runId)) replayer.add(row);
      r = replayer.result();
      this.replays.set(runId, r);
      if (conversation !== null && replayer.lastSnapshot) this.lastSnapshots.set(conversation, replayer.lastSnapshot);
    }''')
open(p,'w').write(s)

p='src/search/memory-corpus.ts'
s=open(p).read()
a=s[s.index('  /** Scans every document once, counting only the query terms. */'):s.index('export class ReplayCorpusSource')]
b='''  termStats(terms: readonly string[]): TermStats {
    return scanTermStats(this, terms);
  }
}

/** Term statistics by rendering and tokenizing every document of the corpus once, counting only the query terms. */
export function scanTermStats(corpus: Pick<Corpus, 'sections' | 'document'>, terms: readonly string[]): TermStats {
  const wanted = new Set(terms);
  const lengths: number[] = [];
  const postings = new Map<string, Array<[number, number]>>(terms.map((t) => [t, []]));
  const tf = new Map<string, number>();
  let total = 0;
  let doc = 0;
  corpus.sections.forEach((s, si) => {
    for (let i = s.start; i < s.end; i++, doc++) {
      tf.clear();
      const dl = forEachToken(corpus.document(si, i).text, (t) => {
        if (wanted.has(t)) tf.set(t, (tf.get(t) ?? 0) + 1);
      });
      lengths.push(dl);
      total += dl;
      for (const [t, f] of tf) postings.get(t)!.push([doc, f]);
    }
  });
  return { n: lengths.length, totalLength: total, docLength: (d) => lengths[d]!, postings: (t) => postings.get(t) ?? [] };
}

'''
s=s.replace(a,b)
open(p,'w').write(s)

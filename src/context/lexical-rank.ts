/**
 * A small Okapi BM25 ranking (k1 = 1.2, b = 0.75, the usual defaults) of documents against a
 * query. Written here rather than taken from a package: it is forty lines, deterministic, and
 * ranks a few thousand short documents (a file's path, symbol names, signatures and docs) per
 * pass, which needs no index structure.
 */

const K1 = 1.2;
const B = 0.75;

/** Words too common in task descriptions and code to tell files apart. */
const STOPWORDS = new Set(
  (
    'a an and are as at be but by can do does fix for from function has have if in into is it its make ' +
    'not of on or should so that the their then there these this to was when which while will with ' +
    'add adds added return returns const let var export import new get set use'
  ).split(' '),
);

/**
 * Lower-case terms of a text: identifiers split at camelCase, snake_case and digits
 * (`parseHTTPHeader2` -> `parse`, `http`, `header`), words of fewer than two letters and
 * stopwords dropped.
 */
export function termsOf(text: string): string[] {
  const terms: string[] = [];
  for (const word of text.match(/[A-Za-z][A-Za-z0-9]*/g) ?? []) {
    const parts = word
      .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
      .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
      .split(/[\s\d]+/);
    for (const part of parts) {
      const term = part.toLowerCase();
      if (term.length >= 2 && !STOPWORDS.has(term)) terms.push(term);
    }
  }
  return terms;
}

export interface RankedDocument {
  id: string;
  score: number;
}

/** The documents matching at least one query term, best first (ties by id). */
export function rankBm25(query: string, documents: ReadonlyArray<{ id: string; text: string }>): RankedDocument[] {
  const queryTerms = [...new Set(termsOf(query))];
  if (queryTerms.length === 0 || documents.length === 0) return [];
  const docs = documents.map((document) => {
    const counts = new Map<string, number>();
    const terms = termsOf(document.text);
    for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
    return { id: document.id, counts, length: terms.length };
  });
  const averageLength = docs.reduce((sum, doc) => sum + doc.length, 0) / docs.length || 1;
  const idf = new Map(
    queryTerms.map((term) => {
      const containing = docs.filter((doc) => doc.counts.has(term)).length;
      return [term, Math.log(1 + (docs.length - containing + 0.5) / (containing + 0.5))];
    }),
  );
  const ranked: RankedDocument[] = [];
  for (const doc of docs) {
    let score = 0;
    for (const term of queryTerms) {
      const frequency = doc.counts.get(term) ?? 0;
      if (frequency === 0) continue;
      const norm = frequency + K1 * (1 - B + (B * doc.length) / averageLength);
      score += (idf.get(term) ?? 0) * ((frequency * (K1 + 1)) / norm);
    }
    if (score > 0) ranked.push({ id: doc.id, score });
  }
  return ranked.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

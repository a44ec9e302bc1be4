// Words as the server's search reads them (search/terms.go), so the app marks
// in a hit's entry the words the search matched: a word is a run of letters,
// decimal digits and marks; folded, it is lowercase without diacritics (é → e,
// ü → u, Ø and ß stay). terms.test.ts holds these rules to a table Go's own
// tokens() wrote (terms.parity.json).

/** One word of a text: where it is (UTF-16 offsets) and its folded form. */
export interface Token {
  start: number;
  end: number;
  folded: string;
}

const inWord = /[\p{L}\p{Nd}\p{M}]/u;
const nonspacingMark = /\p{Mn}/u;
// A lexeme's bound in bytes (search/terms.go maxLexeme).
const maxLexeme = 255;
const utf8 = new TextEncoder();

/** fold lowercases a word and removes its diacritics, as the server does. */
export function fold(w: string): string {
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(w)) return bound(w.toLowerCase());
  let out = '';
  for (const ch of w.normalize('NFD')) {
    if (!nonspacingMark.test(ch)) out += ch.toLowerCase();
  }
  return bound(out);
}

// bound cuts a folded word to maxLexeme UTF-8 bytes, at a character's start.
function bound(w: string): string {
  if (w.length * 3 <= maxLexeme || utf8.encode(w).length <= maxLexeme) return w;
  let bytes = 0;
  let out = '';
  for (const ch of w) {
    const n = utf8.encode(ch).length;
    if (bytes + n > maxLexeme) break;
    bytes += n;
    out += ch;
  }
  return out;
}

/** tokens splits s into its words, each with its folded form; a word of marks alone folds to nothing and is left out. */
export function tokens(s: string): Token[] {
  const out: Token[] = [];
  let start = -1;
  let i = 0;
  for (const ch of s) {
    const w = inWord.test(ch);
    if (w && start < 0) start = i;
    else if (!w && start >= 0) {
      push(out, s, start, i);
      start = -1;
    }
    i += ch.length;
  }
  if (start >= 0) push(out, s, start, s.length);
  return out;
}

function push(out: Token[], s: string, start: number, end: number) {
  const folded = fold(s.slice(start, end));
  if (folded !== '') out.push({ start, end, folded });
}

/** Matcher is what a query looks for, folded: whole words, and words that start with a prefix. */
export interface Matcher {
  words: ReadonlySet<string>;
  prefixes: readonly string[];
}

// A filter (role:, conversation:, after:, …) reads as one: ASCII letters,
// a colon, and not a link (search/query.go isFilterName).
const filter = /^[A-Za-z]+:(?!\/\/)/;

/**
 * queryMatcher is what the query q marks in a hit's text: every word of its
 * terms and phrases, a prefix term's last word as a prefix; excluded terms
 * and filters mark nothing. It reads q as search/query.go does, but never
 * refuses one (an unclosed quote runs to the end): the server has already
 * said what is wrong with a malformed query. extra are more words to mark
 * (a hit's snippet marks them).
 */
export function queryMatcher(q: string, extra: readonly string[] = []): Matcher {
  const words = new Set<string>();
  const prefixes: string[] = [];
  const add = (text: string, prefix: boolean) => {
    const ts = tokens(text);
    ts.forEach((t, k) => {
      if (prefix && k === ts.length - 1) prefixes.push(t.folded);
      else words.add(t.folded);
    });
  };
  let i = 0;
  while (i < q.length) {
    if (/\s/.test(q[i]!)) {
      i++;
      continue;
    }
    let neg = false;
    if (q[i] === '-' && i + 1 < q.length && !/\s/.test(q[i + 1]!)) {
      neg = true;
      i++;
    }
    if (q[i] === '"') {
      let end = q.indexOf('"', i + 1);
      if (end < 0) end = q.length;
      const text = q.slice(i + 1, end);
      i = end + 1;
      let prefix = false;
      if (q[i] === '*') {
        prefix = true;
        i++;
      }
      if (!neg) add(text, prefix);
      continue;
    }
    let j = i;
    while (j < q.length && !/\s/.test(q[j]!) && q[j] !== '"') j++;
    const word = q.slice(i, j);
    i = j;
    if (neg || filter.test(word)) continue;
    const prefix = word.endsWith('*');
    add(prefix ? word.replace(/\*+$/, '') : word, prefix);
  }
  for (const w of extra) for (const t of tokens(w)) words.add(t.folded);
  return { words, prefixes };
}

/** matches says whether a folded word is one m looks for. */
export function matches(m: Matcher, folded: string): boolean {
  return m.words.has(folded) || m.prefixes.some((p) => folded.startsWith(p));
}

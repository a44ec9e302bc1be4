// Marking a hit's matched words inside its rendered entry, as a browser's
// find does: each word the query matched (search/terms.ts, the server's
// folding) is wrapped in <mark class="search-hit-word">. It works on the DOM
// after the markdown was sanitized and its math typeset, and touches text
// nodes only: it never adds markup a message wrote, and it leaves math's
// MathML, the code blocks' copy buttons and form controls alone.
import { matches, tokens, type Matcher } from './terms';

export const WORD_MARK = 'search-hit-word';

// Where no word is marked: math's hidden MathML (what a screen reader
// reads) and TeX waiting to be typeset, the app's own buttons, fields. In
// typeset math a word is marked in the glyphs shown (KaTeX puts a number's
// digits in one node, a variable's letters each in its own).
const SKIP = '.katex-mathml, .folio-math:not([data-typeset]), button, textarea, input, select, script, style, mark.' + WORD_MARK;

/**
 * markWords wraps every word of root's text that m matches in a <mark>, and
 * returns the marks in document order. Words already marked stay as they
 * are, so it can run again after root's content changed.
 */
export function markWords(root: Element, m: Matcher): HTMLElement[] {
  if (m.words.size > 0 || m.prefixes.length > 0) {
    const doc = root.ownerDocument;
    const walk = doc.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
      acceptNode: (n) => {
        const skip = n.parentElement?.closest(SKIP);
        return skip && root.contains(skip) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT;
      },
    });
    const nodes: Text[] = [];
    for (let n = walk.nextNode(); n; n = walk.nextNode()) nodes.push(n as Text);
    for (const node of nodes) {
      const text = node.nodeValue ?? '';
      const hits = tokens(text).filter((t) => matches(m, t.folded));
      // From the end, so the earlier offsets stay valid as the node splits.
      for (let k = hits.length - 1; k >= 0; k--) {
        const t = hits[k]!;
        const word = node.splitText(t.start);
        word.splitText(t.end - t.start);
        const mark = doc.createElement('mark');
        mark.className = WORD_MARK;
        word.replaceWith(mark);
        mark.append(word);
      }
    }
  }
  return [...root.querySelectorAll<HTMLElement>(`mark.${WORD_MARK}`)];
}

/** unmarkWords takes the marks markWords added out of root again, leaving its text as it was. */
export function unmarkWords(root: Element) {
  const parents = new Set<Node>();
  for (const mark of root.querySelectorAll(`mark.${WORD_MARK}`)) {
    const p = mark.parentNode;
    if (!p) continue;
    mark.replaceWith(...mark.childNodes);
    parents.add(p);
  }
  for (const p of parents) p.normalize();
}

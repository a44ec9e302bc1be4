// Math in chat markdown.
//
// marked would mangle TeX: it reads `\(` as an escaped parenthesis and `_`/`*`
// as emphasis. So complete math spans are cut out of the source before marked
// runs ("stashed") and replaced by placeholders made of private-use characters
// that markdown and the sanitizer pass through untouched. After sanitizing, each
// placeholder is put back as plain text inside a <span class="folio-math">, and
// typesetMath later hands those spans, and only those, to KaTeX's auto-render.
//
// Delimiters: `$$…$$` and `\[…\]` (display), `\(…\)` and `$…$` (inline).
// The inline `$` rule is Pandoc's, made stricter: the opening `$` must be
// followed by a non-space character; the next unescaped `$` must close it, by
// following a non-space character and not being followed by a digit; the span
// crosses no blank line and no backtick. So "$5 and $10" is prose (the second
// `$` follows a space, so it cannot close, and nothing else may), while "$x$"
// and "$a+b$" are math. `\$` is an ordinary markdown escape and never
// delimits math.
//
// Only complete pairs are stashed: while a reply streams, an opener without its
// closer stays ordinary text, and the paint that brings the closer typesets it.
// Code spans, fenced code, link destinations and raw HTML tags are skipped, and
// a placeholder that still lands inside <code> or <pre> is restored as plain
// text, so math inside code is never math.
import renderMathInElement from 'katex/contrib/auto-render';

const OPEN = '\uE000';
const CLOSE = '\uE001';
const PLACEHOLDER = /\uE000(\d+)\uE001/g;

/** The class of the span that holds one restored, not yet typeset, math source. */
export const MATH_CLASS = 'folio-math';

export interface Stash {
  /** The source with every complete math span replaced by a placeholder. */
  text: string;
  /** The stashed spans, delimiters included, by placeholder index. */
  spans: string[];
}

const HTML_TAG = /^<\/?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?\/?>/;
const AUTOLINK = /^<[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*>/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** stashMath replaces complete math spans in src by placeholders. */
export function stashMath(src: string): Stash {
  const spans: string[] = [];
  let out = '';
  let copied = 0; // src[copied:i] is not yet in out
  let i = 0;
  const stash = (end: number) => {
    out += src.slice(copied, i) + OPEN + spans.length + CLOSE;
    spans.push(src.slice(i, end));
    copied = i = end;
  };
  while (i < src.length) {
    if (i === 0 || src[i - 1] === '\n') {
      const fence = FENCE.exec(src.slice(i, i + 64));
      if (fence) {
        i = skipFencedBlock(src, i, fence[1]!);
        continue;
      }
    }
    const c = src[i];
    if (c === '`') {
      i = skipCodeSpan(src, i);
    } else if (c === '\\') {
      const next = src[i + 1];
      const closer = next === '(' ? '\\)' : next === '[' ? '\\]' : '';
      const end = closer ? findCloser(src, i + 2, closer, next === '(') : -1;
      if (end >= 0) stash(end);
      else i += 2; // an ordinary escape such as \$ or \\
    } else if (c === '$') {
      const end = src[i + 1] === '$' ? findCloser(src, i + 2, '$$', false) : findDollarCloser(src, i);
      if (end >= 0) stash(end);
      else i += src[i + 1] === '$' ? 2 : 1;
    } else if (c === ']' && src[i + 1] === '(') {
      i = skipLinkDestination(src, i + 1);
    } else if (c === '<') {
      const rest = src.slice(i, i + 512);
      const tag = AUTOLINK.exec(rest) ?? HTML_TAG.exec(rest);
      i += tag ? tag[0].length : 1;
    } else {
      i++;
    }
  }
  return { text: out + src.slice(copied), spans };
}

// findCloser returns the index just past `closer` for a span whose body starts
// at from, or -1 when there is no closer (or the body is blank, or an inline
// body would cross a blank line).
function findCloser(src: string, from: number, closer: string, inline: boolean): number {
  const at = src.indexOf(closer, from);
  if (at < 0) return -1;
  const body = src.slice(from, at);
  if (body.trim() === '' || (inline && /\n[ \t]*\n|`/.test(body))) return -1;
  return at + closer.length;
}

function findDollarCloser(src: string, open: number): number {
  const first = src[open + 1];
  if (first === undefined || /\s/.test(first)) return -1;
  for (let j = open + 1; j < src.length; j++) {
    const c = src[j];
    if (c === '\\') {
      j++;
    } else if (c === '\n' && /^\n[ \t]*\n/.test(src.slice(j, j + 64))) {
      return -1;
    } else if (c === '`') {
      return -1;
    } else if (c === '$') {
      const closes = j > open + 1 && !/\s/.test(src[j - 1]!) && !/[0-9]/.test(src[j + 1] ?? '');
      return closes ? j + 1 : -1;
    }
  }
  return -1;
}

// skipCodeSpan skips a backtick run and, when a run of the same length closes
// it, everything up to and including that run.
function skipCodeSpan(src: string, i: number): number {
  let n = 0;
  while (src[i + n] === '`') n++;
  const run = '`'.repeat(n);
  for (let j = src.indexOf(run, i + n); j >= 0; j = src.indexOf(run, j + 1)) {
    let k = j;
    while (src[k] === '`') k++;
    if (k - j === n) return k;
    j = k - 1;
  }
  return i + n;
}

// skipFencedBlock skips a fenced code block; an unclosed fence runs to the end.
function skipFencedBlock(src: string, i: number, fence: string): number {
  let line = src.indexOf('\n', i);
  while (line >= 0) {
    const start = line + 1;
    const m = /^ {0,3}(`{3,}|~{3,})[ \t]*(?:\n|$)/.exec(src.slice(start, start + 64));
    if (m && m[1]![0] === fence[0] && m[1]!.length >= fence.length) {
      return start + m[0].length;
    }
    line = src.indexOf('\n', start);
  }
  return src.length;
}

// skipLinkDestination skips "(…)" after a link's text, nested parentheses
// included, so a dollar in a URL or title is never taken for math.
function skipLinkDestination(src: string, open: number): number {
  let depth = 0;
  for (let j = open; j < src.length; j++) {
    const c = src[j];
    if (c === '\\') j++;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return j + 1;
    else if (c === '\n' && src[j + 1] === '\n') return j;
  }
  return src.length;
}

/**
 * restoreMath puts stashed spans back into sanitized DOM as text. In code the
 * text is plain; elsewhere it goes into a MATH_CLASS span for typesetMath. An
 * attribute that somehow holds a placeholder is dropped rather than restored,
 * because its value was sanitized with the placeholder, not the math.
 */
export function restoreMath(root: DocumentFragment | Element, spans: readonly string[]): void {
  if (spans.length === 0) return;
  const doc = root.ownerDocument ?? document;
  const walker = doc.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const texts: Text[] = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if ((n as Text).data.includes(OPEN)) texts.push(n as Text);
  }
  for (const node of texts) {
    const inCode = node.parentElement?.closest('code, pre') != null;
    const parts = doc.createDocumentFragment();
    let last = 0;
    for (const m of node.data.matchAll(PLACEHOLDER)) {
      const span = spans[Number(m[1])];
      if (span === undefined) continue; // a private-use character the user typed
      parts.append(node.data.slice(last, m.index));
      if (inCode) {
        parts.append(span);
      } else {
        const el = doc.createElement('span');
        el.className = MATH_CLASS;
        el.textContent = span;
        parts.append(el);
      }
      last = m.index + m[0].length;
    }
    parts.append(node.data.slice(last));
    node.replaceWith(parts);
  }
  for (const el of root.querySelectorAll('*')) {
    for (const attr of Array.from(el.attributes)) {
      if (attr.value.includes(OPEN)) el.removeAttribute(attr.name);
    }
  }
}

const DELIMITERS = [
  { left: '$$', right: '$$', display: true },
  { left: '\\[', right: '\\]', display: true },
  { left: '\\(', right: '\\)', display: false },
  { left: '$', right: '$', display: false },
];

/**
 * typesetMath runs KaTeX over every math span under root that is not typeset
 * yet. It is idempotent and cheap when nothing is pending, so both a rendered
 * markdown block and the chat pane's pin-to-bottom path may call it. Invalid
 * TeX never throws: KaTeX shows the source marked as an error, and any other
 * failure leaves the plain source in place.
 */
export function typesetMath(root: Element | null): void {
  if (!root) return;
  for (const el of root.querySelectorAll<HTMLElement>(`span.${MATH_CLASS}:not([data-typeset])`)) {
    el.dataset.typeset = '';
    const source = el.textContent ?? '';
    try {
      renderMathInElement(el, {
        delimiters: DELIMITERS,
        throwOnError: false,
        strict: 'ignore',
        errorCallback: () => {},
      });
    } catch {
      el.textContent = source;
    }
  }
}

// Markdown to sanitized HTML, math included. See math.ts for the math rules
// and cache.ts for how results are kept.
import DOMPurify from 'dompurify';
import { Marked } from 'marked';
import { MarkdownCache } from './cache';
import { highlightExtension } from './highlight';
import { restoreMath, stashMath } from './math';

// Private instances, so no other code's marked.use() changes chat output: one
// that highlights fenced code and one that leaves it plain.
const options = { gfm: true, breaks: false, async: false } as const;
const marked = new Marked(highlightExtension, options);
const plainMarked = new Marked(options);

/**
 * renderMarkdownUncached turns chat markdown into sanitized HTML: math is
 * stashed, marked parses (highlighting fenced code), DOMPurify sanitizes, and the math comes back as
 * escaped text in spans that typesetMath later typesets. Every result passes
 * through DOMPurify; nothing the cache does can skip this function's sanitizer.
 */
export function renderMarkdownUncached(source: string, highlight = true): string {
  const { text, spans } = stashMath(source);
  const html = (highlight ? marked : plainMarked).parse(text) as string;
  const fragment = DOMPurify.sanitize(html, {
    RETURN_DOM_FRAGMENT: true,
    // Beyond DOMPurify's defaults: a message must not restyle the app or put
    // form controls into it. KaTeX's own inline styles are added after this.
    FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select'],
    FORBID_ATTR: ['style'],
  });
  restoreMath(fragment, spans);
  // A wide table scrolls sideways in its own box instead of breaking words.
  for (const table of fragment.querySelectorAll('table')) {
    const box = document.createElement('div');
    box.className = 'table-scroll';
    table.replaceWith(box);
    box.append(table);
  }
  const holder = document.createElement('div');
  holder.append(fragment);
  return holder.innerHTML;
}

/** The app's one markdown cache: 256 entries within 8 MiB (see cache.ts). */
export const markdownCache = new MarkdownCache(renderMarkdownUncached);

/**
 * renderMarkdown returns sanitized HTML for source, through the shared cache
 * unless cached is false. A streaming reply passes false: each of its growing
 * prefixes is seen once, and keeping them would only evict settled messages.
 */
export function renderMarkdown(source: string, cached = true): string {
  return cached ? markdownCache.render(source) : renderMarkdownUncached(source);
}

const FENCE = /^ {0,3}(?:```|~~~)/m;

/**
 * highlightsLater reports whether a settled message should first show its
 * code plain: it has fenced code and its highlighted HTML is not cached yet.
 * Opening a conversation then paints without running a grammar over every
 * block on screen; the highlighted HTML replaces it once the browser is idle.
 */
export function highlightsLater(source: string): boolean {
  return FENCE.test(source) && !markdownCache.has(source);
}

/** renderPlain is a settled message's first paint when highlightsLater: sanitized, code plain, not cached. */
export function renderPlain(source: string): string {
  return renderMarkdownUncached(source, false);
}

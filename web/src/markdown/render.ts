// Markdown to sanitized HTML, math included. See math.ts for the math rules
// and cache.ts for how results are kept.
import DOMPurify from 'dompurify';
import { Marked } from 'marked';
import { MarkdownCache } from './cache';
import { restoreMath, stashMath } from './math';

// One private instance, so no other code's marked.use() changes chat output.
const marked = new Marked({ gfm: true, breaks: false, async: false });

/**
 * renderMarkdownUncached turns chat markdown into sanitized HTML: math is
 * stashed, marked parses, DOMPurify sanitizes, and the math comes back as
 * escaped text in spans that typesetMath later typesets. Every result passes
 * through DOMPurify; nothing the cache does can skip this function's sanitizer.
 */
export function renderMarkdownUncached(source: string): string {
  const { text, spans } = stashMath(source);
  const html = marked.parse(text) as string;
  const fragment = DOMPurify.sanitize(html, { RETURN_DOM_FRAGMENT: true });
  restoreMath(fragment, spans);
  const holder = document.createElement('div');
  holder.append(fragment);
  return holder.innerHTML;
}

/** The app's one markdown cache: 256 entries within 8 MiB (see cache.ts). */
export const markdownCache = new MarkdownCache(renderMarkdownUncached);

/** renderMarkdown returns sanitized HTML for source, through the shared cache. */
export function renderMarkdown(source: string): string {
  return markdownCache.render(source);
}

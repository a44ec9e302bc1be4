import { useEffect, useLayoutEffect, useMemo, useRef, useState, type MouseEvent } from 'react';
import { useCatalog } from '../i18n/catalog';
import { highlightsLater, renderMarkdown, renderPlain } from './render';
import { typesetMath } from './math';

export interface MarkdownTextProps {
  source: string;
  className?: string;
  /** False while the source is still growing (a streaming reply): render without caching. */
  cached?: boolean;
}

/** addCopyButtons gives every code block a copy button (the app's own element, added after sanitizing). */
function addCopyButtons(root: HTMLElement | null, label: string) {
  if (!root) return;
  for (const pre of root.querySelectorAll('pre')) {
    if (pre.querySelector(':scope > .code-copy')) continue;
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'code-copy';
    b.textContent = label;
    b.setAttribute('aria-label', label);
    pre.prepend(b);
  }
}

/** copyCode copies the code of the block whose copy button was clicked. */
function copyCode(e: MouseEvent<HTMLDivElement>, done: string, label: string) {
  const b = (e.target as Element).closest?.('button.code-copy');
  if (!(b instanceof HTMLButtonElement)) return;
  const code = b.parentElement?.querySelector('code')?.textContent ?? '';
  void navigator.clipboard?.writeText(code).then(() => {
    b.textContent = done;
    setTimeout(() => (b.textContent = label), 1500);
  });
}

/**
 * MarkdownText shows chat markdown. The HTML is sanitized (render.ts); math is
 * typeset in a layout effect, after React has committed the new HTML and before
 * the browser shows it, so a bubble never flashes raw TeX. React leaves the
 * typeset DOM (and the code blocks' copy buttons) alone until the HTML string
 * itself changes.
 */
export function MarkdownText({ source, className, cached = true }: MarkdownTextProps) {
  const t = useCatalog();
  const ref = useRef<HTMLDivElement>(null);
  // A settled message with code not yet highlighted paints plain first; the
  // highlighted HTML (cached) replaces it when the browser is idle.
  const [plainFor, setPlainFor] = useState(() => (cached && highlightsLater(source) ? source : undefined));
  const plain = cached && plainFor === source;
  const html = useMemo(() => (plain ? renderPlain(source) : renderMarkdown(source, cached)), [source, cached, plain]);
  useEffect(() => {
    if (!plain) return;
    const idle = globalThis.requestIdleCallback ?? ((fn: () => void) => setTimeout(fn, 50));
    const cancel = globalThis.cancelIdleCallback ?? clearTimeout;
    const id = idle(() => setPlainFor(undefined), { timeout: 500 });
    return () => cancel(id as number);
  }, [plain]);
  useLayoutEffect(() => {
    typesetMath(ref.current);
    addCopyButtons(ref.current, t.copyCode);
  }, [html, t]);
  return (
    <div
      ref={ref}
      className={className ? `markdown ${className}` : 'markdown'}
      onClick={(e) => copyCode(e, t.copied, t.copyCode)}
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}

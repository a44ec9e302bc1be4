import { useLayoutEffect, useMemo, useRef } from 'react';
import { renderMarkdown } from './render';
import { typesetMath } from './math';

export interface MarkdownTextProps {
  source: string;
  className?: string;
  /** False while the source is still growing (a streaming reply): render without caching. */
  cached?: boolean;
}

/**
 * MarkdownText shows chat markdown. The HTML is sanitized (render.ts); math is
 * typeset in a layout effect, after React has committed the new HTML and before
 * the browser shows it, so a bubble never flashes raw TeX. React leaves the
 * typeset DOM alone until the HTML string itself changes.
 */
export function MarkdownText({ source, className, cached = true }: MarkdownTextProps) {
  const ref = useRef<HTMLDivElement>(null);
  const html = useMemo(() => renderMarkdown(source, cached), [source, cached]);
  useLayoutEffect(() => typesetMath(ref.current), [html]);
  return (
    <div
      ref={ref}
      className={className ? `markdown ${className}` : 'markdown'}
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}

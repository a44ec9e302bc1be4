import { afterEach, describe, expect, it } from 'vitest';
import { typesetMath } from '../markdown/math';
import { renderMarkdownUncached } from '../markdown/render';
import { markWords, unmarkWords } from './mark';
import { queryMatcher } from './terms';

function rendered(md: string): HTMLElement {
  const el = document.createElement('div');
  el.className = 'markdown';
  el.innerHTML = renderMarkdownUncached(md);
  document.body.append(el);
  typesetMath(el);
  return el;
}


describe('marking a hit’s words in its rendered entry', () => {
  afterEach(() => document.body.replaceChildren());

  it('marks whole words in any case and accents, inside emphasis, links, lists and code, and nothing else', () => {
    const el = rendered('The **CAFÉ** and the café-crème, a [cafe](https://x.org/cafe) list:\n\n- cafés\n- Cafe\n\n```go\nfmt.Println("cafe")\n```\n\nand `cafe()` too; not caffeine.');
    const q = queryMatcher('cafe');
    expect(markWords(el, q).map((m) => m.textContent)).toEqual(['CAFÉ', 'café', 'cafe', 'Cafe', 'cafe', 'cafe']);
    // The href, the words around, and the code's highlighting stay.
    expect(el.querySelector('a')!.getAttribute('href')).toBe('https://x.org/cafe');
    expect(el.querySelector('a mark')).not.toBeNull();
    expect(el.querySelector('pre code mark')).not.toBeNull();
    expect(el.textContent).toContain('not caffeine.');
  });

  it('marks prefixes, and words of non-Latin scripts as the server folds them', () => {
    const el = rendered('Ёлка и ёжик; Größe, GRÖSSE; 日本語 テキスト; fold, folded, unfold.');
    expect(markWords(el, queryMatcher('елка грёза größe 日本語 fold*')).map((m) => m.textContent)).toEqual(['Ёлка', 'Größe', '日本語', 'fold', 'folded']);
  });

  it('marks a number in typeset math where it is shown, never in its MathML or TeX', () => {
    const el = rendered('The sum \\(x_i + 537\\) is 537, and $$\\sum_{i=1}^{n} x_i^2 = 537$$');
    const tex = [...el.querySelectorAll('.katex-mathml annotation')].map((a) => a.textContent);
    const marks = markWords(el, queryMatcher('537 sum'));
    expect(marks.map((m) => m.textContent)).toEqual(['sum', '537', '537', '537']);
    expect(marks.filter((m) => m.closest('.katex-html'))).toHaveLength(2);
    expect(el.querySelector('.katex-mathml mark')).toBeNull();
    expect([...el.querySelectorAll('.katex-mathml annotation')].map((a) => a.textContent)).toEqual(tex);
  });

  it('leaves math not yet typeset alone', () => {
    const el = document.createElement('div');
    el.innerHTML = renderMarkdownUncached('a \\(537\\) and 537');
    expect(markWords(el, queryMatcher('537')).map((m) => m.closest('.folio-math') === null)).toEqual([true]);
  });

  it('adds no markup of the message’s own: a message that writes <mark> or script text is only text', () => {
    const el = rendered('&lt;script&gt;alert(1)&lt;/script&gt; <img src=x onerror="alert(2)"> alert');
    const marks = markWords(el, queryMatcher('alert script onerror'));
    expect(marks.map((m) => m.textContent)).toEqual(['script', 'alert', 'script', 'alert']);
    expect(marks.every((m) => m.childNodes.length === 1 && m.firstChild!.nodeType === Node.TEXT_NODE)).toBe(true);
    expect(el.querySelector('script')).toBeNull();
    expect(el.querySelector('img')?.getAttribute('onerror') ?? null).toBeNull();
  });

  it('runs again without marking twice, and unmarking gives back the rendered HTML exactly', () => {
    const el = rendered('A *word* and a word, `word` and \\(word\\).');
    const before = el.innerHTML;
    const q = queryMatcher('word');
    const once = markWords(el, q).length;
    expect(markWords(el, q)).toHaveLength(once);
    expect(once).toBe(3);
    unmarkWords(el);
    expect(el.innerHTML).toBe(before);
  });
});

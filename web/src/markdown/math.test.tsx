import { render, waitFor } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { reply } from '../../test/messages';
import type { AssistantMessage } from '../chat/types';
import { AssistantBubble } from '../components/Bubbles';
import { MATH_CLASS, stashMath, typesetMath } from './math';
import { renderMarkdownUncached } from './render';

function bubble(text: string, state: AssistantMessage['state'] = 'completed') {
  const message: AssistantMessage = reply({ id: 'a1', state, text });
  return render(<AssistantBubble message={message} />);
}

// annotations returns the TeX sources KaTeX typeset, from its MathML annotations.
function annotations(root: ParentNode): string[] {
  return [...root.querySelectorAll('.katex-mathml annotation')].map((a) => a.textContent ?? '');
}

describe('math in an assistant bubble', () => {
  it('typesets the \\(d_t\\) sample', () => {
    const { container } = bubble('The distance \\(d_t\\) shrinks.');
    expect(container.querySelector('.katex-html')).not.toBeNull();
    expect(annotations(container)).toEqual(['d_t']);
    expect(container.textContent).toContain('The distance');
  });

  it('typesets the \\(v_t = …\\) sample with its underscores and braces intact', () => {
    const { container } = bubble('\\(v_t = (d_t - d_{t+1}) / d_t\\)');
    expect(annotations(container)).toEqual(['v_t = (d_t - d_{t+1}) / d_t']);
    expect(container.querySelector('em')).toBeNull();
  });

  it.each([
    ['\\[ … \\]', 'Before\n\n\\[\\int_0^1 x\\,dx\\]\n\nafter', '\\int_0^1 x\\,dx'],
    ['$$ … $$', 'Sum: $$\\sum_{t=0}^{T} v_t$$', '\\sum_{t=0}^{T} v_t'],
  ])('typesets display math written as %s', (_name, source, tex) => {
    const { container } = bubble(source);
    expect(container.querySelector('.katex-display')).not.toBeNull();
    expect(annotations(container)).toEqual([tex]);
  });

  it('typesets inline $ … $', () => {
    const { container } = bubble('Euler: $e^{i\\pi} + 1 = 0$.');
    expect(container.querySelector('.katex-display')).toBeNull();
    expect(annotations(container)).toEqual(['e^{i\\pi} + 1 = 0']);
  });

  it('leaves prose without math alone', () => {
    const { container } = bubble('Just *words*, (parentheses) and [brackets].');
    expect(container.querySelector('.katex')).toBeNull();
    expect(container.querySelector(`.${MATH_CLASS}`)).toBeNull();
    expect(container.querySelector('em')?.textContent).toBe('words');
  });

  it.each([
    '$5 and $10',
    'It costs $5, or $6 with tax.',
    'US$5 and US$10',
    'from $ 5 to $ 10',
    '$5 and $10 stay prose, and so does `$PATH`.',
    'Between $5 and $10, with $x$ later',
  ])(
    'does not take prices for math: %s',
    (source) => {
      const { container } = bubble(source);
      // Only the trailing $x$ of the last case is math.
      expect(annotations(container)).toEqual(source.endsWith('$x$ later') ? ['x'] : []);
      expect(container.textContent).toContain(source.replace(/`/g, '').split(', with')[0]);
    },
  );

  it('keeps \\$ an ordinary escape', () => {
    const { container } = bubble('Pay \\$5 and \\$10.');
    expect(container.querySelector('.katex')).toBeNull();
    expect(container.textContent).toContain('Pay $5 and $10.');
  });

  it.each(['\\(d_t', 'so $$x^2', '\\[ \\int', 'and $x', 'text \\(a\\) then \\(b'])(
    'does not typeset an unclosed opener while streaming: %s',
    (source) => {
      const { container } = bubble(source, 'streaming');
      const typeset = annotations(container);
      // Only complete pairs before the open one may be typeset.
      expect(typeset).toEqual(source.startsWith('text') ? ['a'] : []);
    },
  );

  it('typesets on the next paint, when the closer arrives', () => {
    const message: AssistantMessage = reply({ id: 'a1', state: 'streaming', text: 'so \\(d_' });
    const { container, rerender } = render(<AssistantBubble message={message} />);
    expect(container.querySelector('.katex')).toBeNull();
    rerender(<AssistantBubble message={reply({ id: 'a1', state: 'streaming', text: 'so \\(d_t\\)' })} />);
    expect(annotations(container)).toEqual(['d_t']);
  });

  it('never treats math inside code as math', () => {
    const { container } = bubble('Use `$HOME` and `\\(x\\)`.\n\n```\nprice = $a$ + \\(b\\)\n```\n\n    indented \\(c\\)\n');
    expect(container.querySelector('.katex')).toBeNull();
    const code = [...container.querySelectorAll('code')].map((c) => c.textContent);
    expect(code).toEqual(['$HOME', '\\(x\\)', 'price = $a$ + \\(b\\)\n', 'indented \\(c\\)\n']);
  });

  it('keeps links working, math in link text included', () => {
    const { container } = bubble('See [the $x$ case](https://example.com/a$b$c "t $y$") and <https://example.com/$z$>.');
    const links = [...container.querySelectorAll('a')];
    expect(links.map((a) => a.getAttribute('href'))).toEqual(['https://example.com/a$b$c', 'https://example.com/$z$']);
    expect(links[0]!.getAttribute('title')).toBe('t $y$');
    expect(annotations(container)).toEqual(['x']);
  });

  it('sanitizes as it would without math', () => {
    const { container } = bubble('<img src=x onerror="alert(1)"> \\(x\\) <script>alert(2)</script><a href="javascript:alert(3)">l</a>');
    expect(container.querySelector('script')).toBeNull();
    expect(container.querySelector('img')?.hasAttribute('onerror')).toBe(false);
    expect(container.querySelector('a')?.getAttribute('href')).toBeNull();
    expect(annotations(container)).toEqual(['x']);
  });

  it('keeps messages from restyling the app or adding form controls', () => {
    const { container } = bubble('<style>body{display:none}</style><p style="position:fixed">x</p><form><input><button>b</button></form>');
    // The bubble's own controls sit outside the message's markdown; the code
    // blocks' copy buttons are the app's, added after sanitizing.
    expect(container.querySelector('.markdown')!.querySelector('style, form, input, button:not(.code-copy), [style]')).toBeNull();
  });

  it('restores math as text, never as markup', () => {
    const html = renderMarkdownUncached('\\(<img src=x onerror=alert(1)>\\)');
    expect(html).not.toContain('<img');
    const { container } = bubble('\\(<img src=x onerror=alert(1)>\\)');
    expect(container.querySelector('img')).toBeNull();
  });

  it('does not apply markdown inside math', () => {
    const { container } = bubble('$a_1 * b_2 * c$ and \\(x_{1} + y_{2}\\)');
    expect(container.querySelector('em, strong')).toBeNull();
    expect(annotations(container)).toEqual(['a_1 * b_2 * c', 'x_{1} + y_{2}']);
  });

  it('shows invalid math as its source and does not throw', () => {
    expect(() => bubble('Broken: \\(\\frac{1}{\\) and $\\undefinedmacro$')).not.toThrow();
    const { container } = bubble('Broken: \\(\\frac{1}{\\)');
    expect(container.textContent).toContain('\\frac{1}{');
  });
});

describe('stashMath', () => {
  it('stashes complete pairs with their delimiters, in order', () => {
    const { text, spans } = stashMath('a \\(x\\) b $$y$$ c \\[z\\] d $w$ e');
    expect(spans).toEqual(['\\(x\\)', '$$y$$', '\\[z\\]', '$w$']);
    expect(text).toBe('a \uE0000\uE001 b \uE0001\uE001 c \uE0002\uE001 d \uE0003\uE001 e');
  });

  it('does not let inline math cross a blank line', () => {
    expect(stashMath('$a\n\nb$').spans).toEqual([]);
    expect(stashMath('\\(a\n\nb\\)').spans).toEqual([]);
    expect(stashMath('$$a\n\nb$$').spans).toEqual(['$$a\n\nb$$']);
  });

  it('leaves private-use characters the user typed as they are', () => {
    const html = renderMarkdownUncached('odd \uE0007\uE001 text');
    expect(html).toContain('odd \uE0007\uE001 text');
  });
});

describe('typesetMath', () => {
  it('typesets pending spans under a column once', () => {
    const column = document.createElement('div');
    column.innerHTML = renderMarkdownUncached('\\(a\\) and $$b$$');
    expect(column.querySelector('.katex')).toBeNull();
    typesetMath(column);
    expect(annotations(column)).toEqual(['a', 'b']);
    typesetMath(column);
    expect(annotations(column)).toEqual(['a', 'b']);
  });

  it('accepts a missing element', () => {
    expect(() => typesetMath(null)).not.toThrow();
  });
});

describe('code blocks', () => {
  it('highlights a known language through DOMPurify and gives every block a copy button', () => {
    const html = renderMarkdownUncached('```go\nfunc main() { fmt.Println("hi") }\n```\n\n```\nplain <b>text</b>\n```');
    expect(html).toContain('hljs-keyword');
    expect(html).not.toContain('<b>');
    const { container } = bubble('```go\nfunc main() {}\n```\n\n```\n<img src=x onerror=alert(1)>\n```');
    expect(container.querySelectorAll('pre .code-copy')).toHaveLength(2);
    expect(container.querySelector('img')).toBeNull();
  });
  it('a settled message paints its code plain first, then highlighted once idle', async () => {
    const { container } = bubble('```go\nfunc later() {}\n```');
    expect(container.querySelector('code.language-go')).not.toBeNull();
    expect(container.querySelector('.hljs-keyword')).toBeNull();
    await waitFor(() => expect(container.querySelector('.hljs-keyword')).not.toBeNull());
    expect(container.querySelectorAll('pre .code-copy')).toHaveLength(1);
  });
  it('puts tables in their own scroll box', () => {
    const { container } = bubble('| a | b |\n|---|---|\n| optional | x |');
    expect(container.querySelector('.table-scroll > table')).not.toBeNull();
  });
});

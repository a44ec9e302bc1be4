import { describe, expect, it } from 'vitest';
import { stashMath } from './math';
import { renderMarkdownUncached } from './render';

// A small deterministic generator (mulberry32), so a failure names its seed.
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Pieces chosen to collide: delimiters, escapes, code, links, tags, blank lines.
const PIECES = ['$', '$$', '\\', '\\(', '\\)', '\\[', '\\]', '`', '```', '\n', '\n\n', ' ', 'x', '5', '_', '*', '](', ')', '<b>', '<', '~~~', 'é'];

function randomSource(next: () => number): string {
  let s = '';
  const n = Math.floor(next() * 40);
  for (let i = 0; i < n; i++) s += PIECES[Math.floor(next() * PIECES.length)];
  return s;
}

describe('stashMath on generated input', () => {
  it('loses nothing: putting the spans back gives the source', () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const src = randomSource(rng(seed));
      const { text, spans } = stashMath(src);
      const back = text.replace(/\uE000(\d+)\uE001/g, (_m, i: string) => spans[Number(i)]!);
      expect(back, `seed ${seed}: ${JSON.stringify(src)}`).toBe(src);
      for (const span of spans) {
        expect(/^(\$\$[\s\S]+\$\$|\$[\s\S]+\$|\\\([\s\S]+\\\)|\\\[[\s\S]+\\\])$/.test(span), `seed ${seed}: span ${JSON.stringify(span)}`).toBe(true);
      }
    }
  });

  it('renders every generated source without throwing or leaking a placeholder', () => {
    for (let seed = 1; seed <= 150; seed++) {
      const src = randomSource(rng(seed));
      const html = renderMarkdownUncached(src);
      expect(html, `seed ${seed}: ${JSON.stringify(src)}`).not.toMatch(/\uE000\d+\uE001/);
    }
  });
});

// Run with: ./node_modules/.bin/vitest bench --run (jsdom, so figures are relative only).
import { bench, describe } from 'vitest';
import { MarkdownCache } from './cache';
import { renderMarkdownUncached } from './render';
import { stashMath } from './math';

const reply = Array.from({ length: 20 }, (_, i) => `Step ${i}: with \\(v_t = (d_t - d_{t+1}) / d_t\\), *costs* $5 and \`code $x$\`.`).join('\n\n');
const cache = new MarkdownCache(renderMarkdownUncached);
cache.render(reply);

describe('markdown', () => {
  bench('stashMath, 2 KB reply', () => {
    stashMath(reply);
  });
  bench('render uncached, 2 KB reply', () => {
    renderMarkdownUncached(reply);
  });
  bench('render cached (hit), 2 KB reply', () => {
    cache.render(reply);
  });
});

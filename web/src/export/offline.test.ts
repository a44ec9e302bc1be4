import { describe, expect, it } from 'vitest';
import { renderMarkdownUncached } from '../markdown/render';
import { installOffline } from './offline';

describe('the export renders markdown that loads nothing', () => {
  it('drops every outside source from what the sanitizer keeps, and keeps data: images and links', () => {
    const src = [
      '![remote](https://example.com/a.png) ![rel](x) ![inline](data:image/png;base64,AAAA)',
      '<img src=x srcset="https://example.com/b.png 2x"><video poster="https://example.com/p.png" src="v.mp4"></video>',
      '<svg><image href="https://example.com/c.png"></image><use xlink:href="https://example.com/s.svg#x"></use></svg>',
      '[a link](https://example.com/)',
    ].join('\n\n');
    const before = renderMarkdownUncached(src);
    expect(before).toContain('https://example.com/a.png');
    installOffline();
    const holder = document.createElement('div');
    holder.innerHTML = renderMarkdownUncached(src);
    for (const el of holder.querySelectorAll('*')) {
      for (const a of el.attributes) {
        if (['src', 'srcset', 'poster', 'href', 'xlink:href'].includes(a.name) && !(el.localName === 'a' && a.name === 'href')) {
          expect(a.value, `${el.localName} ${a.name}`).toMatch(/^data:/);
        }
      }
    }
    expect(holder.querySelector('a')?.getAttribute('href')).toBe('https://example.com/');
    expect(holder.querySelectorAll('img[data-offline]').length).toBe(3);
    expect(holder.querySelector('img[alt="inline"]')?.getAttribute('src')).toMatch(/^data:image\/png/);
  });
});

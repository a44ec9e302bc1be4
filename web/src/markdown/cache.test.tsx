import { describe, expect, it, vi } from 'vitest';
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_ENTRIES, entryCost, MarkdownCache } from './cache';
import { render as renderComponent } from '@testing-library/react';
import { AssistantBubble } from '../components/Bubbles';
import { reply as makeReply } from '../../test/messages';
import type { AssistantMessage } from '../chat/types';
import { markdownCache, renderMarkdownUncached } from './render';

// A stand-in render function with a known output length: "<p>" + source + "</p>".
const wrap = (s: string) => `<p>${s}</p>`;

describe('MarkdownCache', () => {
  it('defaults to 256 entries within 8 MiB', () => {
    const cache = new MarkdownCache(wrap);
    expect(cache.maxEntries).toBe(DEFAULT_MAX_ENTRIES);
    expect(DEFAULT_MAX_ENTRIES).toBe(256);
    expect(cache.maxBytes).toBe(DEFAULT_MAX_BYTES);
    expect(DEFAULT_MAX_BYTES).toBe(8 * 1024 * 1024);
    for (let i = 0; i < 300; i++) cache.render(`m${i}`);
    expect(cache.size).toBe(256);
    expect(cache.has('m43')).toBe(false);
    expect(cache.has('m44')).toBe(true);
  });

  it('estimates an entry as two bytes per UTF-16 unit of source and output', () => {
    expect(entryCost('ab', '<p>ab</p>')).toBe(2 * (2 + 9));
    expect(entryCost('😀', 'x')).toBe(2 * (2 + 1)); // one emoji is two UTF-16 units
    const cache = new MarkdownCache(wrap);
    cache.render('abc');
    cache.render('de');
    expect(cache.bytes).toBe(entryCost('abc', '<p>abc</p>') + entryCost('de', '<p>de</p>'));
  });

  it('evicts least recently used entries to stay within the byte budget', () => {
    const one = entryCost('aaaa', wrap('aaaa')); // every 4-character source costs the same
    const cache = new MarkdownCache(wrap, { maxBytes: 2 * one + one / 2 });
    cache.render('aaaa');
    cache.render('bbbb');
    expect(cache.keys()).toEqual(['aaaa', 'bbbb']);
    cache.render('cccc');
    expect(cache.keys()).toEqual(['bbbb', 'cccc']);
    expect(cache.bytes).toBe(2 * one);
    expect(cache.bytes).toBeLessThanOrEqual(cache.maxBytes);
  });

  it('evicts as many entries as one large entry needs', () => {
    const small = entryCost('a', wrap('a'));
    const cache = new MarkdownCache(wrap, { maxBytes: 10 * small });
    for (const s of 'abcdefghij') cache.render(s);
    expect(cache.size).toBe(10);
    const big = 'x'.repeat(17); // 2 × (17 + 24) = 82 bytes: five small entries (18 bytes each) must go
    cache.render(big);
    expect(cache.keys()).toEqual(['f', 'g', 'h', 'i', 'j', big]);
    expect(cache.bytes).toBe(5 * small + entryCost(big, wrap(big)));
  });

  it('promotes a hit so it is evicted last', () => {
    const render = vi.fn(wrap);
    const cache = new MarkdownCache(render, { maxEntries: 2 });
    cache.render('a');
    cache.render('b');
    expect(cache.render('a')).toBe('<p>a</p>');
    expect(render).toHaveBeenCalledTimes(2); // the second 'a' was a hit
    cache.render('c');
    expect(cache.keys()).toEqual(['a', 'c']);
    expect(cache.has('b')).toBe(false);
  });

  it('renders an entry larger than the whole budget but does not keep it', () => {
    const render = vi.fn(wrap);
    const cache = new MarkdownCache(render, { maxBytes: 1000 });
    cache.render('keep');
    const huge = 'h'.repeat(600); // 2 × (600 + 607) bytes > 1000
    expect(cache.render(huge)).toBe(wrap(huge));
    expect(cache.render(huge)).toBe(wrap(huge));
    expect(render).toHaveBeenCalledTimes(3); // 'keep' once, the huge one each time
    expect(cache.has(huge)).toBe(false);
    expect(cache.keys()).toEqual(['keep']); // and it evicted nothing
  });

  it('returns sanitized output on hits and for oversized entries', () => {
    const render = vi.fn(renderMarkdownUncached);
    const cache = new MarkdownCache(render, { maxBytes: 4096 });
    const xss = '<img src=x onerror="alert(1)"><script>alert(2)</script> \\(x\\)';
    const first = cache.render(xss);
    const second = cache.render(xss);
    expect(render).toHaveBeenCalledTimes(1);
    expect(second).toBe(first);
    for (const html of [first, second]) {
      expect(html).not.toMatch(/onerror|<script/i);
      expect(html).toContain('folio-math');
    }
    const oversized = `${xss}\n\n${'pad '.repeat(2000)}`;
    const out = cache.render(oversized);
    expect(cache.has(oversized)).toBe(false);
    expect(out).not.toMatch(/onerror|<script/i);
  });
});

describe('the shared markdown cache', () => {
  it('keeps settled replies but not the growing text of a streaming one', () => {
    markdownCache.clear();
    const reply = (text: string, state: AssistantMessage['state']): AssistantMessage => makeReply({ id: 'a', state, text });
    const { rerender } = renderComponent(<AssistantBubble message={reply('Partial \\(x', 'streaming')} />);
    rerender(<AssistantBubble message={reply('Partial \\(x\\) and more', 'streaming')} />);
    expect(markdownCache.size).toBe(0);
    rerender(<AssistantBubble message={reply('Partial \\(x\\) and more.', 'completed')} />);
    expect(markdownCache.keys()).toEqual(['Partial \\(x\\) and more.']);
  });
});

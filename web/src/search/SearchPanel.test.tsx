import { act, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LocaleContext } from '../i18n/catalog';
import { SearchPanel } from './SearchPanel';

// The search field speaks the person's language: its label, the empty
// result and each hit's role come from the catalog.
describe('SearchPanel', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('words the field, the roles and an empty result in German', async () => {
    let answer = { hits: [{ conversation: 'c1', title: 'Logs', entry: 'a1', role: 'answer', at: '2026-03-04T05:06:11Z', snippet: [{ text: 'fsync', hit: true }], score: -1 }] };
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => new Response(JSON.stringify(answer), { status: 200, headers: { 'Content-Type': 'application/json' } })),
    );
    render(
      <LocaleContext.Provider value="de">
        <SearchPanel onOpen={() => {}} />
      </LocaleContext.Provider>,
    );
    const field = screen.getByRole('searchbox', { name: 'Unterhaltungen durchsuchen' });
    fireEvent.change(field, { target: { value: 'fsync' } });
    await act(() => new Promise((r) => setTimeout(r, 400)));
    expect(screen.getByRole('list', { name: 'Suchergebnisse' }).textContent).toContain('Antwort');

    answer = { hits: [] };
    fireEvent.change(field, { target: { value: 'nichts' } });
    await act(() => new Promise((r) => setTimeout(r, 400)));
    expect(screen.getByText('Nichts gefunden für nichts')).toBeTruthy();
  });
});

describe('a hit’s matched words', () => {
  it('are the snippet’s marked words, found in any case in the entry’s text', async () => {
    const { hitWords, wordRanges } = await import('./SearchPanel');
    expect(hitWords({ conversation: 'c', role: 'answer', score: 0, snippet: [{ text: 'the ' }, { text: 'lazy dog', hit: true }, { text: ' and ' }, { text: 'Fox', hit: true }] })).toEqual(['lazy', 'dog', 'Fox']);
    const el = document.createElement('div');
    el.innerHTML = '<p>A fox, a <b>FOX</b> and a foxglove.</p><p>No dogs.</p>';
    const got = wordRanges(el, ['Fox']).map((r) => r.toString());
    expect(got).toEqual(['fox', 'FOX', 'fox']);
    expect(wordRanges(el, [])).toEqual([]);
  });
});

describe('markHit', () => {
  it('marks the hit’s words once its entry is on the page, again after its content is rendered anew, and takes them out when cancelled', async () => {
    const { markHit } = await import('./SearchPanel');
    const { queryMatcher } = await import('./terms');
    const row = document.createElement('div');
    row.setAttribute('data-message-id', 'e7');
    row.innerHTML = '<div class="markdown"><p>The Café is open.</p></div>';
    Element.prototype.scrollIntoView ??= () => {};
    // jsdom has no CSS.escape; the ids here need none.
    (globalThis as { CSS?: { escape(s: string): string } }).CSS ??= { escape: (s: string) => s };
    const stop = markHit('e7', queryMatcher('cafe conversation:c1'));
    document.body.append(row);
    await new Promise((r) => setTimeout(r, 250));
    expect(row.classList.contains('search-hit-mark')).toBe(true);
    expect([...row.querySelectorAll('mark.search-hit-word')].map((m) => m.textContent)).toEqual(['Café']);
    // The markdown re-rendered (its code highlighted later, say): marked again.
    row.querySelector('.markdown')!.innerHTML = '<p>café, CAFE</p>';
    await new Promise((r) => setTimeout(r, 50));
    expect([...row.querySelectorAll('mark.search-hit-word')].map((m) => m.textContent)).toEqual(['café', 'CAFE']);
    stop();
    expect(row.querySelector('mark')).toBeNull();
    expect(row.querySelector('.markdown')!.innerHTML).toBe('<p>café, CAFE</p>');
    row.remove();
  });
});

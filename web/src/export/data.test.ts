import { describe, expect, it } from 'vitest';
import type { Entry } from '../chat/reconcile';
import { earlier, groupEntries, later, latestWindow, MAX_PAGES, parsePage, readMeta } from './data';

const e = (id: string, kind: string): Entry => ({ id, content: { kind } }) as unknown as Entry;

describe('an exported file read back', () => {
  it('groups a page as the page index turns: a user entry alone, the reply after it', () => {
    const groups = groupEntries([e('h', 'header'), e('n', 'notice'), e('u1', 'user'), e('a1', 'agent'), e('t1', 'tool'), e('u2', 'user'), e('u3', 'user'), e('a3', 'agent')]);
    expect(groups.map((g) => g.map((h) => h.entry.id))).toEqual([['h', 'n'], ['u1'], ['a1', 't1'], ['u2'], ['u3'], ['a3']]);
  });

  it('reads a damaged page or meta as empty, and drops what is not an entry', () => {
    expect(parsePage('not json')).toEqual([]);
    expect(parsePage('{"id":"x"}')).toEqual([]);
    expect(parsePage('[{"id":"a","content":{"kind":"user","text":"hi"}},{"id":3},null]').map((x) => x.id)).toEqual(['a']);
    expect(readMeta('[1]')).toEqual({ title: '', conversationId: '', entries: 0, pages: 0, problems: 0 });
    expect(readMeta('{"title":"t","entries":3,"startedAt":"2026-01-01T00:00:00Z"}').startedAt).toBe('2026-01-01T00:00:00Z');
  });

  it('opens at the last page and keeps a window of at most MAX_PAGES pages', () => {
    expect(MAX_PAGES).toBe(6);
    let w = latestWindow(20);
    expect(w).toEqual({ lo: 19, hi: 20 });
    for (let i = 0; i < 8; i++) w = earlier(w);
    expect(w).toEqual({ lo: 11, hi: 17 });
    for (let i = 0; i < 20; i++) w = earlier(w);
    expect(w).toEqual({ lo: 0, hi: 6 });
    w = later(w, 20);
    expect(w).toEqual({ lo: 1, hi: 7 });
    for (let i = 0; i < 20; i++) w = later(w, 20);
    expect(w).toEqual({ lo: 14, hi: 20 });
    expect(latestWindow(0)).toEqual({ lo: 0, hi: 0 });
  });
});

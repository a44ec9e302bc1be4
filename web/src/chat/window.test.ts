import { describe, expect, it } from 'vitest';
import { makeGroups, FakeServer } from '../../test/fakeserver';
import { atEnd, emptyWindow, groupsOf, MAX_BYTES, MAX_PAGES, reduceWindow, windowBytes, type WindowState, type WirePage } from './window';
import { asEntry } from '../../test/messages';

const server = new FakeServer(makeGroups(2000, 400));
const BUDGET = 4096;

function opened(): WindowState {
  return reduceWindow(emptyWindow(), { type: 'snapshot', token: 's1', generation: 1, seq: 10, groups: server.groups.length });
}

function page(w: WindowState, direction: 'before' | 'after' | 'replace', p: WirePage): WindowState {
  return reduceWindow(w, { type: 'page', epoch: w.epoch, token: w.token!, direction, page: p });
}

function first(w: WindowState) {
  return w.pages[0]!.groups[0]!.ids[0]!;
}
function lastId(w: WindowState) {
  const p = w.pages[w.pages.length - 1]!;
  return p.groups[p.groups.length - 1]!.ids[0]!;
}

describe('the window reducer', () => {
  it('evicts on the side away from the reader and never keeps more than six pages', () => {
    let w = page(opened(), 'replace', server.page('latest', 'before', BUDGET) as WirePage);
    expect(atEnd(w)).toBe(true);
    for (let i = 0; i < 10; i++) w = page(w, 'before', server.page(first(w), 'before', BUDGET) as WirePage);
    expect(w.pages).toHaveLength(MAX_PAGES);
    expect(w.evictions).toBe(5);
    // Reading upward evicted the newest pages: the end is no longer loaded.
    expect(w.hasMoreAfter).toBe(true);
    expect(atEnd(w)).toBe(false);
    const top = first(w);
    // Scrolling back down fetches the evicted pages again and evicts the top.
    for (let i = 0; i < 3; i++) w = page(w, 'after', server.page(lastId(w), 'after', BUDGET) as WirePage);
    expect(w.pages).toHaveLength(MAX_PAGES);
    expect(first(w)).not.toBe(top);
    expect(w.hasMoreBefore).toBe(true);
    // held entries are exactly the window's (nothing evicted lingers).
    const ids = groupsOf(w).flatMap((g) => g.ids);
    expect([...w.held.keys()].sort()).toEqual([...ids].sort());
  });

  it("counts each group's stored size as the server states it", () => {
    const gs = makeGroups(4, 300);
    const declared = [1000, 2000, 3000, 4_000_000];
    let w = reduceWindow(emptyWindow(), { type: 'snapshot', token: 's1', generation: 1, seq: 1, groups: 4 });
    w = page(w, 'replace', { groups: gs.slice(2).map((g, i) => ({ ...g, bytes: declared[i + 2]! })), first: 2, last: 3, hasMoreBefore: true, hasMoreAfter: false });
    expect(windowBytes(w)).toBe(4_003_000);
    w = page(w, 'before', { groups: gs.slice(0, 2).map((g, i) => ({ ...g, bytes: declared[i]! })), first: 0, last: 1, hasMoreBefore: false, hasMoreAfter: true });
    expect(windowBytes(w)).toBe(4_006_000);
    expect(w.pages.map((p) => p.bytes)).toEqual([3000, 4_003_000]);
  });

  it('keeps the byte budget, except a single indivisible page', () => {
    const big = new FakeServer(makeGroups(40, 3 * 1024 * 1024));
    let w = reduceWindow(emptyWindow(), { type: 'snapshot', token: 's1', generation: 1, seq: 1, groups: 40 });
    w = page(w, 'replace', big.page('latest', 'before', BUDGET) as WirePage);
    expect(w.pages).toHaveLength(1);
    expect(windowBytes(w)).toBeGreaterThan(0);
    for (let i = 0; i < 5; i++) {
      w = page(w, 'before', big.page(first(w), 'before', BUDGET) as WirePage);
      expect(windowBytes(w)).toBeLessThanOrEqual(MAX_BYTES);
    }
    expect(w.pages.length).toBeLessThan(MAX_PAGES);
    const huge = new FakeServer(makeGroups(3, 9 * 1024 * 1024));
    let h = reduceWindow(emptyWindow(), { type: 'snapshot', token: 's1', generation: 1, seq: 1, groups: 3 });
    h = page(h, 'replace', huge.page('latest', 'before', BUDGET) as WirePage);
    expect(h.pages).toHaveLength(1);
    expect(windowBytes(h)).toBeGreaterThan(MAX_BYTES);
    h = page(h, 'before', huge.page(first(h), 'before', BUDGET) as WirePage);
    expect(h.pages).toHaveLength(1); // the new one alone, the old one evicted
  });

  it('ignores a response asked for under an older epoch or token', () => {
    let w = page(opened(), 'replace', server.page('latest', 'before', BUDGET) as WirePage);
    const oldEpoch = w.epoch;
    const stalePage = server.page(first(w), 'before', BUDGET) as WirePage;
    w = reduceWindow(w, { type: 'bump' });
    const after = reduceWindow(w, { type: 'page', epoch: oldEpoch, token: 's1', direction: 'before', page: stalePage });
    expect(after).toBe(w);
    const otherToken = reduceWindow(w, { type: 'page', epoch: w.epoch, token: 's0', direction: 'before', page: stalePage });
    expect(otherToken).toBe(w);
    // A page that is not adjacent to the window is not spliced in.
    const far = server.page('u100', 'after', BUDGET) as WirePage;
    expect(reduceWindow(w, { type: 'page', epoch: w.epoch, token: 's1', direction: 'before', page: far })).toBe(w);
  });

  it('a new generation replaces the window; the same generation keeps it', () => {
    const w = page(opened(), 'replace', server.page('latest', 'before', BUDGET) as WirePage);
    const same = reduceWindow(w, { type: 'snapshot', token: 's2', generation: 1, seq: 12, groups: server.groups.length });
    expect(same.pages).toBe(w.pages);
    expect(same.token).toBe('s2');
    const next = reduceWindow(w, { type: 'snapshot', token: 's3', generation: 2, seq: 1, groups: 5 });
    expect(next.pages).toHaveLength(0);
    expect(next.held.size).toBe(0);
  });

  it('keeps live-updated rows through eviction and puts them back in refetched groups', () => {
    let w = page(opened(), 'replace', server.page('latest', 'before', BUDGET) as WirePage);
    const lastGroupId = lastId(w);
    w = reduceWindow(w, { type: 'entry', how: 'running', entry: asEntry({ id: 't-live', content: { kind: 'tool', receipt: { app: 'shell', summary: 's', status: '' } } }), revision: 11, open: true, after: lastGroupId, seq: 11 });
    expect(groupsOf(w).at(-1)!.ids).toContain('t-live');
    for (let i = 0; i < 8; i++) w = page(w, 'before', server.page(first(w), 'before', BUDGET) as WirePage);
    expect(w.held.has('t-live')).toBe(true); // the update is kept though its page went
    while (w.hasMoreAfter) w = page(w, 'after', server.page(lastId(w), 'after', BUDGET) as WirePage);
    const g = groupsOf(w).find((x) => x.ids[0] === lastGroupId)!;
    expect(g.ids).toEqual([lastGroupId, 't-live']);
  });

  it('appends live groups after the end and dedupes them when a later capture has them', () => {
    let w = page(opened(), 'replace', server.page('latest', 'before', BUDGET) as WirePage);
    const n = server.groups.length;
    w = reduceWindow(w, { type: 'entry', how: 'running', entry: { id: 'u-new', content: { kind: 'user', text: 'hi' } }, revision: 11, open: false, after: lastId(w), seq: 11 });
    expect(groupsOf(w).at(-1)!.ids).toEqual(['u-new']);
    expect(groupsOf(w).at(-1)!.index).toBe(n);
    const grown = new FakeServer([...server.groups, { index: n, entries: [{ id: 'u-new', content: { kind: 'user', text: 'hi' } }] }]);
    w = reduceWindow(w, { type: 'snapshot', token: 's2', generation: 1, seq: 11, groups: n + 1 });
    expect(w.hasMoreAfter).toBe(false); // the tail already shows it
    w = page(w, 'replace', grown.page('latest', 'before', BUDGET) as WirePage);
    expect(groupsOf(w).filter((g) => g.ids[0] === 'u-new')).toHaveLength(1);
    expect(w.tail).toHaveLength(0);
  });

  it('marks appends it cannot place as stale instead of guessing', () => {
    let w = page(opened(), 'replace', server.page('u100', 'after', BUDGET) as WirePage);
    expect(w.hasMoreAfter).toBe(true);
    w = reduceWindow(w, { type: 'entry', how: 'running', entry: { id: 'u-x', content: { kind: 'user', text: 'x' } }, revision: 11, after: 'a1999', seq: 11 });
    expect(w.stale).toBe(true);
    expect(groupsOf(w).some((g) => g.ids.includes('u-x'))).toBe(false);
  });
});

describe('live entries after a user message', () => {
  it('start a new reply group instead of joining the user group', () => {
    const s = new FakeServer(makeGroups(4, 200));
    let w = reduceWindow(emptyWindow(), { type: 'snapshot', token: 's1', generation: 1, seq: 1, groups: 4 });
    w = reduceWindow(w, { type: 'page', epoch: w.epoch, token: 's1', direction: 'replace', page: s.page('latest', 'before', 1 << 20) as WirePage });
    w = reduceWindow(w, { type: 'entry', how: 'running', entry: { id: 'u9', content: { kind: 'user', text: 'q' } }, revision: 2, after: 'a3', seq: 2 });
    w = reduceWindow(w, { type: 'entry', how: 'running', entry: { id: 'r9', content: { kind: 'reasoning', text: 'hm' } }, revision: 3, open: true, after: 'u9', seq: 3 });
    w = reduceWindow(w, { type: 'entry', how: 'running', entry: { id: 'a9', content: { kind: 'agent', markdown: 'ok' } }, revision: 4, open: true, after: 'r9', seq: 4 });
    expect(groupsOf(w).slice(-2).map((g) => g.ids)).toEqual([['u9'], ['r9', 'a9']]);
  });
});

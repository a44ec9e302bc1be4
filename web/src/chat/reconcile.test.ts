import { describe, expect, it } from 'vitest';
import { appendText, mergeGroup, reconcile, type Held } from './reconcile';
import { asEntry, member } from '../../test/messages';

const agent = (id: string, markdown: string) => asEntry({ id, content: { kind: 'agent', markdown } });

describe('reconciling an entry', () => {
  it('ignores stale and repeated revisions', () => {
    const prev: Held = { entry: agent('a', 'hello world'), revision: 5, open: true };
    expect(reconcile(prev, { entry: agent('a', 'other'), revision: 5, open: true }, 'running')).toBe(prev);
    expect(reconcile(prev, { entry: agent('a', 'other'), revision: 4, open: true }, 'running')).toBe(prev);
  });
  it('takes a newer running value whole', () => {
    const prev: Held = { entry: agent('a', 'hello world'), revision: 5, open: true };
    const next = reconcile(prev, { entry: agent('a', 'hello'), revision: 6, open: true }, 'running');
    expect(member(next.entry, 'markdown')).toBe('hello');
    expect(next.revision).toBe(6);
  });
  it('never reopens a settled entry', () => {
    const prev: Held = { entry: agent('a', 'done'), revision: 5, open: false };
    expect(reconcile(prev, { entry: agent('a', 'done and more'), revision: 9, open: true }, 'running')).toBe(prev);
    expect(reconcile(prev, { entry: agent('a', 'x'), revision: 9, open: false }, 'settle')).toBe(prev);
  });
  it('a terminal value replaces the presentation: a draft ends with its call', () => {
    const tool = (status: string, presentation?: unknown) => asEntry({ id: 't', content: { kind: 'tool', receipt: { app: 'shell', summary: 'ls', status }, ...(presentation ? { presentation } : {}) } });
    const prev: Held = { entry: tool('', { schema: 'folio.args', version: 1, revision: 3, payload: { path: 'READ' } }), revision: 5, open: true };
    const next = reconcile(prev, { entry: tool('ok'), revision: 8, open: false }, 'settle');
    expect(next.open).toBe(false);
    expect((member(next.entry, 'receipt') as { status: string }).status).toBe('ok');
    expect(member(next.entry, 'presentation')).toBeUndefined();
    const kept = { schema: 'folio.shell', version: 1, revision: 4, payload: { command: 'ls', output: 'a' } };
    expect(member(reconcile(prev, { entry: tool('ok', kept), revision: 9, open: false }, 'settle').entry, 'presentation')).toEqual(kept);
  });
});

describe('a live presentation', () => {
  it('shows over later running values of its open call and ends at the settle', () => {
    const tool = (status: string) => asEntry({ id: 't', content: { kind: 'tool', receipt: { app: 'shell', summary: 'ls', status } } });
    const live = { schema: 'folio.progress', version: 1, revision: 2, payload: { done: 1 } };
    let held = reconcile(undefined, { entry: tool(''), revision: 1, open: true }, 'running');
    held = reconcile(held, { entry: held.entry, revision: 2, open: true, live }, 'running');
    expect(member(held.entry, 'presentation')).toEqual(live);
    held = reconcile(held, { entry: tool('running'), revision: 3, open: true }, 'running');
    expect(member(held.entry, 'presentation')).toEqual(live);
    held = reconcile(held, { entry: tool('ok'), revision: 4, open: false }, 'settle');
    expect(member(held.entry, 'presentation')).toBeUndefined();
    expect(held.live).toBeUndefined();
  });
});

describe('merging a group from a page with received entries', () => {
  it('keeps received tool calls the page omits, after their predecessor', () => {
    expect(mergeGroup(['r1', 'r2'], ['r1', 'r2', 't1', 't2'])).toEqual(['r1', 'r2', 't1', 't2']);
    expect(mergeGroup(['r1', 'x', 'r2'], ['r1', 't1', 'r2'])).toEqual(['r1', 't1', 'x', 'r2']);
    expect(mergeGroup(['r1'], [])).toEqual(['r1']);
  });
  it('keeps two calls of the same function distinct', () => {
    expect(mergeGroup(['r1', 'call-1'], ['r1', 'call-1', 'call-2'])).toEqual(['r1', 'call-1', 'call-2']);
  });
});

describe('appending streamed text', () => {
  it('appends at the offset the tab holds, and refuses any other', () => {
    const a = agent('a', 'héllo 😀');
    expect(member(appendText(a, 8, ' world'), 'markdown')).toBe('héllo 😀 world');
    expect(appendText(a, 7, ' world')).toBeUndefined();
    expect(appendText(asEntry({ id: 't', content: { kind: 'tool' } }), 0, 'x')).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { mergeGroup, reconcile, type Held } from './reconcile';

const agent = (id: string, markdown: string) => ({ id, content: { kind: 'agent', markdown } });

describe('reconciling an entry', () => {
  it('ignores stale and repeated revisions', () => {
    const prev: Held = { entry: agent('a', 'hello world'), revision: 5, open: true };
    expect(reconcile(prev, { entry: agent('a', 'other'), revision: 5, open: true }, 'running')).toBe(prev);
    expect(reconcile(prev, { entry: agent('a', 'other'), revision: 4, open: true }, 'running')).toBe(prev);
  });
  it('never shortens text while running', () => {
    const prev: Held = { entry: agent('a', 'hello world'), revision: 5, open: true };
    const next = reconcile(prev, { entry: agent('a', 'hello'), revision: 6, open: true }, 'running');
    expect(next.entry.content.markdown).toBe('hello world');
    expect(next.revision).toBe(6);
    expect(reconcile(prev, { entry: agent('a', 'hello world!'), revision: 7, open: true }, 'running').entry.content.markdown).toBe('hello world!');
  });
  it('never reopens a settled entry', () => {
    const prev: Held = { entry: agent('a', 'done'), revision: 5, open: false };
    expect(reconcile(prev, { entry: agent('a', 'done and more'), revision: 9, open: true }, 'running')).toBe(prev);
    expect(reconcile(prev, { entry: agent('a', 'x'), revision: 9, open: false }, 'settle')).toBe(prev);
  });
  it('a terminal value updates metadata and keeps an omitted presentation', () => {
    const tool = (status: string, presentation?: unknown) => ({ id: 't', content: { kind: 'tool', receipt: { app: 'shell', summary: 'ls', status }, ...(presentation ? { presentation } : {}) } });
    const prev: Held = { entry: tool('', { schema: 'folio.shell', version: 1, revision: 3, payload: { command: 'ls', output: 'a' } }), revision: 5, open: true };
    const next = reconcile(prev, { entry: tool('ok'), revision: 8, open: false }, 'settle');
    expect(next.open).toBe(false);
    expect((next.entry.content.receipt as { status: string }).status).toBe('ok');
    expect(next.entry.content.presentation).toEqual(prev.entry.content.presentation);
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

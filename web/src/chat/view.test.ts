import { afterEach, describe, expect, it, vi } from 'vitest';
import { FakeServer, makeGroups } from '../../test/fakeserver';
import { Client } from '../protocol/client';
import { ViewCache } from './cache';
import { TranscriptView } from './view';
import { atEnd } from './window';
import { member } from '../../test/messages';

const tick = () => new Promise((r) => setTimeout(r, 0));
async function until(cond: () => boolean, what = 'condition') {
  for (let i = 0; i < 200; i++) {
    if (cond()) return;
    await tick();
  }
  throw new Error(`timed out waiting for ${what}`);
}

function setup(n = 400) {
  const server = new FakeServer(makeGroups(n, 2000));
  const client = new Client({ url: 'ws://test/api/v2/ws', WebSocket: server.WebSocket, baseDelayMs: 1000 });
  const view = new TranscriptView(client, 'c1');
  const pages = (pred: (f: Record<string, unknown>) => boolean = () => true) => server.received.filter((f) => f.type === 'page' && pred(f)).length;
  return { server, client, view, pages };
}

afterEach(() => vi.useRealTimers());

describe('TranscriptView', () => {
  it('opens at the latest page and asks for one page at a time', async () => {
    const { server, view, pages } = setup();
    await until(() => view.getState().window.pages.length === 1, 'first page');
    expect(atEnd(view.getState().window)).toBe(true);
    expect(server.received.find((f) => f.type === 'hello')).toMatchObject({ protocol: 4 });
    server.hold = true;
    view.want('before');
    view.want('before');
    view.want('before');
    expect(pages()).toBe(2);
    server.release();
    await until(() => view.getState().window.pages.length === 2, 'second page');
  });

  it('an invisible view asks for nothing', async () => {
    const { view, pages } = setup();
    await until(() => view.getState().window.pages.length === 1);
    view.setVisible(false);
    view.want('before');
    expect(pages()).toBe(1);
    view.setVisible(true);
    view.want('before');
    expect(pages()).toBe(2);
  });

  it('retries failures with exponential backoff, and a reconnect drops the obsolete delay', async () => {
    const { server, client, view, pages } = setup();
    await until(() => view.getState().window.pages.length === 1);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let failing = true;
    server.failPage = () => (failing ? 'internal' : undefined);
    view.want('before');
    await vi.advanceTimersByTimeAsync(0);
    expect(view.getState().failed).toBe(true);
    expect(pages()).toBe(2);
    await vi.advanceTimersByTimeAsync(499);
    expect(pages()).toBe(2); // still waiting
    await vi.advanceTimersByTimeAsync(1);
    expect(pages()).toBe(3); // first retry after 500 ms
    await vi.advanceTimersByTimeAsync(999);
    expect(pages()).toBe(3);
    await vi.advanceTimersByTimeAsync(1);
    expect(pages()).toBe(4); // then 1000 ms
    // Now the connection drops and comes back while a 2 s delay is pending.
    failing = false;
    server.sockets[0]!.close();
    await vi.advanceTimersByTimeAsync(0);
    expect(client.status).toBe('closed');
    globalThis.dispatchEvent(new Event('online'));
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(0);
    expect(client.status).toBe('open');
    // The reopened view carries what it applied, and keeps its window.
    const reopen = server.received.filter((f) => f.type === 'open').at(-1)!;
    expect(reopen.since).toEqual({ generation: 1, seq: 0 });
    expect(view.getState().window.pages.length).toBe(1);
    view.want('before');
    await vi.advanceTimersByTimeAsync(0);
    expect(view.getState().window.pages.length).toBe(2);
    expect(view.getState().failed).toBe(false);
  });

  it('repeated jumps share one pending intent and one request', async () => {
    const { server, view, pages } = setup();
    await until(() => view.getState().window.pages.length === 1);
    for (let i = 0; i < 8; i++) {
      view.want('before');
      await until(() => !view.busy);
    }
    expect(atEnd(view.getState().window)).toBe(false);
    server.hold = true;
    const a = view.jumpToLatest();
    const b = view.jumpToLatest();
    expect(a).toBe(b);
    await until(() => server.heldCount === 1, 'latest request');
    expect(pages((f) => f.anchor === 'latest')).toBe(2); // the opening one and this one
    server.release();
    await a;
    expect(atEnd(view.getState().window)).toBe(true);
    expect(view.getState().intent).toBeUndefined();
  });

  it('a cancelled jump does not move the window when its answer arrives', async () => {
    const { server, view } = setup();
    await until(() => view.getState().window.pages.length === 1);
    for (let i = 0; i < 8; i++) {
      view.want('before');
      await until(() => !view.busy);
    }
    const before = view.getState().window.pages;
    server.hold = true;
    const p = view.jumpToLatest();
    await until(() => server.heldCount === 1);
    view.cancelIntent();
    server.release();
    await p;
    expect(view.getState().window.pages).toBe(before);
    expect(view.getState().intent).toBeUndefined();
  });

  it('a failed jump stays available and marks the failure', async () => {
    const { server, view } = setup();
    await until(() => view.getState().window.pages.length === 1);
    for (let i = 0; i < 8; i++) {
      view.want('before');
      await until(() => !view.busy);
    }
    server.failPage = (f) => (f.anchor === 'latest' ? 'internal' : undefined);
    await view.jumpToLatest();
    expect(view.getState().jumpFailed).toBe(true);
    expect(atEnd(view.getState().window)).toBe(false);
    server.failPage = undefined;
    await view.jumpToLatest();
    expect(atEnd(view.getState().window)).toBe(true);
    expect(view.getState().jumpFailed).toBe(false);
  });

  it('a replaced document rebuilds the window from a new snapshot', async () => {
    const { server, view } = setup();
    await until(() => view.getState().window.pages.length === 1);
    server.generation = 2;
    server.groups = makeGroups(10, 200);
    server.emit({ type: 'event', conversation: 'c1', generation: 2, seq: 1, op: 'replaced' });
    await until(() => view.getState().window.generation === 2 && view.getState().window.pages.length === 1);
    expect(view.getState().rows.map((r) => r.id).at(-1)).toBe('a9');
  });
});

describe('ViewCache', () => {
  it('keeps at most four views, except shown or busy ones, and releases a deleted conversation', () => {
    const disposed: string[] = [];
    const mk = (key: string) => ({ conversation: key.split('|')[0]!, busy: false, dispose: () => disposed.push(key) });
    const cache = new ViewCache(mk);
    for (const k of ['a|', 'b|', 'c|', 'd|']) {
      cache.acquire(k);
      cache.release(k);
    }
    expect(cache.size).toBe(4);
    cache.acquire('e|'); // shown
    expect(cache.size).toBe(4);
    expect(disposed).toEqual(['a|']);
    // Two shown panes and two more: shown ones may push the count over for a moment.
    cache.acquire('f|');
    cache.acquire('g|');
    cache.acquire('h|');
    cache.acquire('i|');
    expect(cache.size).toBe(5);
    cache.release('i|');
    expect(cache.size).toBe(4);
    cache.acquire('b2|');
    cache.forgetConversation('e');
    expect(cache.keys()).not.toContain('e|');
    expect(disposed).toContain('e|');
  });
});

describe('an empty conversation', () => {
  it('shows live entries once its empty first page is answered', async () => {
    const server = new FakeServer([]);
    const client = new Client({ url: 'ws://t/api/v2/ws', WebSocket: server.WebSocket });
    const view = new TranscriptView(client, 'c1');
    server.emit({ type: 'event', conversation: 'c1', generation: 1, seq: 1, op: 'upsert', entry: { id: 'u', content: { kind: 'user', text: 'hi' } }, revision: 1 });
    await until(() => view.getState().window.loaded, 'loaded');
    server.emit({ type: 'event', conversation: 'c1', generation: 1, seq: 1, op: 'upsert', entry: { id: 'u', content: { kind: 'user', text: 'hi' } }, revision: 1 });
    server.emit({ type: 'event', conversation: 'c1', generation: 1, seq: 2, op: 'upsert', entry: { id: 'r', content: { kind: 'reasoning', text: 'hm' } }, revision: 2, after: 'u' });
    await until(() => view.getState().rows.length === 2, 'rows');
    expect(view.getState().rows.map((r) => r.role)).toEqual(['user', 'assistant']);
  });

  it('rebuilds its rows when a turn starts or ends, not when only its activity changes', async () => {
    const server = new FakeServer([]);
    const client = new Client({ url: 'ws://t/api/v2/ws', WebSocket: server.WebSocket });
    const view = new TranscriptView(client, 'c1');
    await until(() => view.getState().window.loaded, 'loaded');
    server.emit({ type: 'event', conversation: 'c1', generation: 1, seq: 1, op: 'upsert', entry: { id: 'u', content: { kind: 'user', text: 'hi' } }, revision: 1 });
    server.emit({ type: 'event', conversation: 'c1', generation: 1, seq: 2, op: 'upsert', entry: { id: 'r', content: { kind: 'reasoning', text: 'hm' } }, revision: 2, after: 'u' });
    await until(() => view.getState().rows.length === 2, 'rows');
    const turn = (state: string, activity?: string) =>
      server.emit({ type: 'event', conversation: 'c1', generation: 1, seq: 2, op: 'turn', state, ...(state === 'running' ? { turn: 't1', reply: 'r', activity } : {}) });
    turn('running', 'thinking');
    await until(() => view.getState().turn?.turn === 't1', 'the running turn');
    const rows = view.getState().rows;
    turn('running', 'tool');
    turn('running', 'streaming');
    await tick();
    expect(view.getState().rows).toBe(rows);
    turn('idle');
    await until(() => view.getState().turn === undefined, 'the turn to end');
    expect(view.getState().rows).not.toBe(rows);
  });
});

describe('streamed text', () => {
  const agentText = (view: TranscriptView) => {
    const held = view.getState().window.held.get('a');
    return member(held?.entry, 'markdown');
  };
  const streaming = async () => {
    const server = new FakeServer([]);
    const client = new Client({ url: 'ws://t/api/v2/ws', WebSocket: server.WebSocket });
    const view = new TranscriptView(client, 'c1');
    await until(() => view.getState().window.loaded, 'loaded');
    const opens = () => server.received.filter((f) => f.type === 'open').length;
    const asked = () => server.received.filter((f) => f.type === 'entry');
    server.emit({ type: 'event', conversation: 'c1', generation: 1, seq: 1, op: 'upsert', entry: { id: 'a', content: { kind: 'agent', markdown: 'Hel' } }, revision: 1, open: true });
    server.emit({ type: 'event', conversation: 'c1', generation: 1, seq: 2, op: 'append', entryId: 'a', base: 1, revision: 2, offset: 3, text: 'lo' });
    await until(() => agentText(view) === 'Hello', 'appended text');
    return { server, view, opens, asked };
  };

  it('appends at the revision the tab holds, and asks for that one entry when it missed one', async () => {
    const { server, view, opens, asked } = await streaming();
    server.hold = true;
    server.onEntry = () => ({ type: 'entry', conversation: 'c1', generation: 1, seq: 5, entry: { id: 'a', content: { kind: 'agent', markdown: 'Hello there' } }, revision: 5, open: true });
    // Revision 3 never arrived: the tab cannot apply 4 and asks for entry a.
    server.emit({ type: 'event', conversation: 'c1', generation: 1, seq: 4, op: 'append', entryId: 'a', base: 3, revision: 4, offset: 9, text: '!' });
    await until(() => asked().length === 1, 'an entry request');
    expect(asked()[0]).toMatchObject({ conversation: 'c1', entryId: 'a' });
    // Appends sent before the answer are older than it: dropped, no second request.
    server.emit({ type: 'event', conversation: 'c1', generation: 1, seq: 5, op: 'append', entryId: 'a', base: 4, revision: 5, offset: 10, text: 'e' });
    server.release();
    await until(() => agentText(view) === 'Hello there', 'the entry checkpoint');
    // Streaming goes on from the answer's revision.
    server.emit({ type: 'event', conversation: 'c1', generation: 1, seq: 6, op: 'append', entryId: 'a', base: 5, revision: 6, offset: 11, text: '!' });
    await until(() => agentText(view) === 'Hello there!', 'the next append');
    expect(asked().length).toBe(1);
    expect(opens()).toBe(1); // the window was kept: no snapshot was opened again
    expect(view.getState().window.seq).toBe(6);
    expect(view.fetchedEntries).toBe(1);
  });

  it('opens again when the server cannot give the entry, or gives it from another generation', async () => {
    const { server, opens, asked } = await streaming();
    server.emit({ type: 'event', conversation: 'c1', generation: 1, seq: 4, op: 'append', entryId: 'a', base: 3, revision: 4, offset: 9, text: '!' });
    await until(() => opens() === 2, 'a second open after not-found');
    expect(asked().length).toBe(1);

    const again = await streaming();
    again.server.onEntry = () => ({ type: 'entry', conversation: 'c1', generation: 2, seq: 1, entry: { id: 'a', content: { kind: 'agent', markdown: 'x' } }, revision: 1, open: true });
    again.server.emit({ type: 'event', conversation: 'c1', generation: 1, seq: 4, op: 'append', entryId: 'a', base: 3, revision: 4, offset: 9, text: '!' });
    await until(() => again.opens() === 2, 'a second open after another generation');
  });
});

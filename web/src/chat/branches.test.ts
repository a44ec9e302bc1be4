import { describe, expect, it } from 'vitest';
import { FakeServer, makeGroups, type FakeGroup } from '../../test/fakeserver';
import { Client } from '../protocol/client';
import { alternativeAt, BranchController, emptyBranches, neighbor, reduceBranches, refusal, samePlace, type BranchMeta } from './branches';
import { TranscriptView } from './view';

const tick = () => new Promise((r) => setTimeout(r, 0));
async function until(cond: () => boolean, what = 'condition') {
  for (let i = 0; i < 300; i++) {
    if (cond()) return;
    await tick();
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('reduceBranches', () => {
  it('keeps a draft through a refusal and drops it only when cancelled or delivered', () => {
    let s = reduceBranches(emptyBranches, { type: 'edit-start', entryId: 'u1', text: 'hi' });
    s = reduceBranches(s, { type: 'edit-change', entryId: 'u1', text: 'hello' });
    // Opening the editor again keeps what was typed.
    s = reduceBranches(s, { type: 'edit-start', entryId: 'u1', text: 'hi' });
    expect(s.edits.u1).toEqual({ text: 'hello', sending: false });
    s = reduceBranches(s, { type: 'edit-sending', entryId: 'u1' });
    // While sending, the text is fixed and cancel does nothing.
    expect(reduceBranches(s, { type: 'edit-change', entryId: 'u1', text: 'x' })).toBe(s);
    expect(reduceBranches(s, { type: 'edit-cancel', entryId: 'u1' })).toBe(s);
    s = reduceBranches(s, { type: 'edit-failed', entryId: 'u1', error: 'busy' });
    expect(s.edits.u1).toEqual({ text: 'hello', sending: false, error: 'busy' });
    // Typing clears the old reason.
    expect(reduceBranches(s, { type: 'edit-change', entryId: 'u1', text: 'hello!' }).edits.u1?.error).toBeUndefined();
    expect(reduceBranches(s, { type: 'edit-cancel', entryId: 'u1' }).edits.u1).toBeUndefined();
    expect(reduceBranches(s, { type: 'edit-done', entryId: 'u1' }).edits).toEqual({});
  });

  it('tracks one switch at a time and its refusal', () => {
    let s = reduceBranches(emptyBranches, { type: 'switch-start', head: 'b1' });
    expect(s.switching).toBe('b1');
    s = reduceBranches(s, { type: 'switch-failed', error: 'no' });
    expect(s).toMatchObject({ switching: undefined, notice: 'no' });
    expect(reduceBranches(s, { type: 'dismiss' }).notice).toBeUndefined();
  });
});

describe('alternatives', () => {
  const meta: BranchMeta = {
    head: 'b2',
    branches: [],
    alternatives: [
      { entryId: 'u5', heads: ['main', 'b1', 'b2'], index: 2 },
      { entryId: 'u9', heads: ['b2'], index: 0 },
    ],
  };
  it('draws only places with siblings, and steps within their heads', () => {
    const a = alternativeAt(meta, 'u5')!;
    expect(a.index + 1).toBe(3);
    expect(neighbor(a, -1)).toBe('b1');
    expect(neighbor(a, 1)).toBeUndefined();
    expect(alternativeAt(meta, 'u9')).toBeUndefined();
    expect(alternativeAt(meta, 'nope')).toBeUndefined();
  });
  it('finds the same place in the new head by its heads, not by the old entry ID', () => {
    const next: BranchMeta = { head: 'b1', branches: [], alternatives: [{ entryId: 'x7', heads: ['main', 'b1', 'b2'], index: 1 }] };
    expect(samePlace(next, meta.alternatives[0]!)?.entryId).toBe('x7');
  });
  it('says what a busy refusal means and that the text is kept', () => {
    expect(refusal('busy', undefined, 'edit')).toMatch(/running.*kept/);
    expect(refusal('weird', 'why', 'switch')).toContain('weird');
  });
});

/** A conversation whose branches the test switches the fake server between. */
function branched() {
  const main: FakeGroup[] = makeGroups(60, 2000);
  // b1 forks before the last user message (u58): same prefix, its own entries after.
  const b1: FakeGroup[] = [
    ...main.slice(0, 58),
    { index: 58, entries: [{ id: 'e58', content: { kind: 'user', text: 'edited question' } }] },
    { index: 59, entries: [{ id: 'f59', content: { kind: 'agent', markdown: 'edited answer' } }] },
  ];
  const metas: Record<string, BranchMeta> = {
    main: { head: 'main', branches: [{ head: 'main', label: 'main' }, { head: 'b1', label: 'edited', forkedFrom: 'main', after: 'a57' }], alternatives: [{ entryId: 'u58', heads: ['main', 'b1'], index: 0 }] },
    b1: { head: 'b1', branches: [{ head: 'main', label: 'main' }, { head: 'b1', label: 'edited', forkedFrom: 'main', after: 'a57' }], alternatives: [{ entryId: 'e58', heads: ['main', 'b1'], index: 1 }] },
  };
  const server = new FakeServer(b1);
  server.head = 'b1';
  const switchTo = (head: 'main' | 'b1') => {
    server.groups = head === 'main' ? main : b1;
    server.head = head;
    server.generation++;
    server.emit({ type: 'event', conversation: 'c1', op: 'head', head });
    server.emit({ type: 'event', conversation: 'c1', op: 'replaced', generation: server.generation });
  };
  server.onCommand = (f) => {
    if (f.type !== 'select-branch') return undefined;
    queueMicrotask(() => switchTo(f.head as 'main' | 'b1'));
    return { state: 'done', head: String(f.head) };
  };
  const client = new Client({ url: 'ws://test/api/v2/ws', WebSocket: server.WebSocket, baseDelayMs: 1000 });
  const view = new TranscriptView(client, 'c1');
  let n = 0;
  const ctl = new BranchController({ client, conversation: 'c1', readMeta: async () => metas[server.head]!, view: () => view, newId: () => `k${++n}` });
  return { server, client, view, ctl, switchTo };
}

const rowIds = (v: TranscriptView) => v.getState().rows.map((r) => r.id);

describe('BranchController with a TranscriptView', () => {
  it('a switch reads pages with the new head, keeps the reader at the edited message and drops the old token’s answer', async () => {
    const { server, view, ctl } = branched();
    await until(() => view.getState().window.loaded && ctl.getState().meta !== undefined, 'first window');
    expect(rowIds(view)).toContain('e58');
    expect(server.received.filter((f) => f.type === 'page').every((f) => f.head === 'b1')).toBe(true);
    // A page of the old head (token s1) is on its way when the switch happens.
    server.hold = true;
    view.want('before');
    expect(server.heldCount).toBe(1);
    expect(server.received.filter((f) => f.type === 'page').at(-1)).toMatchObject({ token: 's1', head: 'b1', direction: 'before' });
    const done = ctl.select(alternativeAt(ctl.getState().meta, 'e58')!, -1);
    // Let the new head's requests queue behind the held one, then answer everything.
    for (let i = 0; i < 50 && server.received.filter((f) => f.type === 'open').length < 2; i++) await tick();
    server.hold = false;
    server.release();
    await done;
    await until(() => view.getState().focus?.id === 'u58' && !view.getState().loading && !view.getState().intent, 'focus on the edited message');
    const sel = server.received.filter((f) => f.type === 'select-branch');
    expect(sel).toHaveLength(1);
    expect(sel[0]).toMatchObject({ head: 'main', conversation: 'c1' });
    // Nothing of b1 survives in the window, and every later page names main.
    expect(rowIds(view).some((id) => id === 'e58' || id === 'f59')).toBe(false);
    expect(rowIds(view)).toContain('u58');
    const after = server.received.slice(server.received.indexOf(sel[0]!)).filter((f) => f.type === 'page');
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((f) => f.head === 'main')).toBe(true);
    // The window opened around the edited message, not at the latest.
    expect(after.some((f) => f.anchor === 'u58' && f.direction === 'around')).toBe(true);
    expect(ctl.getState().meta?.alternatives[0]).toMatchObject({ entryId: 'u58', index: 0 });
  });

  it('a refused switch leaves the window alone and says why', async () => {
    const { server, view, ctl } = branched();
    await until(() => view.getState().window.loaded && ctl.getState().meta !== undefined);
    server.onCommand = () => ({ state: 'rejected', code: 'busy' });
    const rows = view.getState().rows;
    expect(await ctl.select(alternativeAt(ctl.getState().meta, 'e58')!, -1)).toBe(false);
    expect(ctl.getState().notice).toMatch(/still running/);
    expect(view.getState().rows).toBe(rows);
  });

  it('an edit refused as busy keeps the draft; the retry is a new command', async () => {
    const { server, view, ctl } = branched();
    await until(() => view.getState().window.loaded);
    let busy = true;
    server.onCommand = (f) => (f.type === 'edit' ? (busy ? { state: 'rejected', code: 'busy' } : { state: 'queued', head: 'b2' }) : undefined);
    ctl.dispatch({ type: 'edit-start', entryId: 'e58', text: 'edited question' });
    ctl.dispatch({ type: 'edit-change', entryId: 'e58', text: 'edited again' });
    expect(await ctl.sendEdit('e58')).toBe(false);
    expect(ctl.getState().edits.e58).toMatchObject({ text: 'edited again', sending: false });
    expect(ctl.getState().edits.e58?.error).toMatch(/still running/);
    busy = false;
    expect(await ctl.sendEdit('e58')).toBe(true);
    expect(ctl.getState().edits.e58).toBeUndefined();
    const edits = server.received.filter((f) => f.type === 'edit');
    expect(edits.map((f) => [f.entryId, f.text])).toEqual([
      ['e58', 'edited again'],
      ['e58', 'edited again'],
    ]);
    expect(edits[0]!.commandId).not.toBe(edits[1]!.commandId);
  });
});

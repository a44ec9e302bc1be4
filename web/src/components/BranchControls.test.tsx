import { act, fireEvent, render, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { FakeServer, type FakeGroup } from '../../test/fakeserver';
import { ViewCache } from '../chat/cache';
import type { BranchMeta } from '../chat/branches';
import { TranscriptView } from '../chat/view';
import type { Api, Graph } from '../protocol/api';
import { Client } from '../protocol/client';
import { ChatPane } from './ChatPane';
import { branchTree, GraphView } from './GraphPanel';
import { asEntry } from '../../test/messages';

const tick = () => new Promise((r) => setTimeout(r, 0));
async function until(cond: () => boolean, what = 'condition') {
  for (let i = 0; i < 300; i++) {
    if (cond()) return;
    await act(tick);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const user = (id: string, text: string) => asEntry({ id, content: { kind: 'user', text } });
const agent = (id: string, markdown: string) => asEntry({ id, content: { kind: 'agent', markdown } });

const graph: Graph = {
  id: 'c1',
  head: 'b1',
  branches: [
    { head: 'main', label: 'main' },
    { head: 'b1', label: 'hello edited', forkedFrom: 'main', createdAt: '2026-01-01T00:00:00Z' },
    { head: 'b2', label: 'deeper', forkedFrom: 'b1', after: 'a3' },
  ],
  compactions: [{ entryId: 'k9', fromId: 'u0', toId: 'a1' }],
  links: [{ from: 't4', kind: 'spawn', conversation: 'c-child' }],
};

/** A pane over a fake server that edits and switches like the real one: new generation, head and replaced events. */
function pane() {
  const main: FakeGroup[] = [
    { index: 0, entries: [user('u0', 'hello')] },
    { index: 1, entries: [agent('a1', 'hi there')] },
  ];
  const b1: FakeGroup[] = [
    { index: 0, entries: [user('u2', 'hello edited')] },
    { index: 1, entries: [agent('a3', 'edited reply')] },
  ];
  const metas: Record<string, BranchMeta> = {
    main: { head: 'main', branches: [{ head: 'main', label: 'main' }], alternatives: [] },
  };
  const server = new FakeServer(main);
  const switchTo = (head: string) => {
    server.groups = head === 'main' ? main : b1;
    server.head = head;
    server.generation++;
    server.emit({ type: 'event', conversation: 'c1', op: 'head', head });
    server.emit({ type: 'event', conversation: 'c1', op: 'replaced', generation: server.generation });
  };
  let busy = false;
  server.onCommand = (f) => {
    if (f.type === 'edit') {
      if (busy) return { state: 'rejected', code: 'busy' };
      metas.main = { head: 'main', branches: [{ head: 'main', label: 'main' }, { head: 'b1', label: 'hello edited', forkedFrom: 'main' }], alternatives: [{ entryId: 'u0', heads: ['main', 'b1'], index: 0 }] };
      metas.b1 = { ...metas.main, head: 'b1', alternatives: [{ entryId: 'u2', heads: ['main', 'b1'], index: 1 }] };
      queueMicrotask(() => switchTo('b1'));
      return { state: 'queued', head: 'b1' };
    }
    if (f.type === 'select-branch') {
      queueMicrotask(() => switchTo(String(f.head)));
      return { state: 'done', head: String(f.head) };
    }
    return undefined;
  };
  const client = new Client({ url: 'ws://t/api/v2/ws', WebSocket: server.WebSocket });
  const views: TranscriptView[] = [];
  const cache = new ViewCache((key) => {
    const v = new TranscriptView(client, key.split('|')[0]!);
    views.push(v);
    return v;
  });
  const api = {
    meta: vi.fn(async () => ({ id: 'c1', ...metas[server.head]! })),
    graph: vi.fn(async () => graph),
  } as unknown as Api & { meta: ReturnType<typeof vi.fn>; graph: ReturnType<typeof vi.fn> };
  const r = render(<ChatPane client={client} api={api} cache={cache} conversation={{ id: 'c1', title: 'T', updated: '' }} head={undefined} slot={0} onOpenList={() => {}} />);
  return { ...r, server, api, views, setBusy: (b: boolean) => (busy = b) };
}

const texts = (c: HTMLElement) => [...c.querySelectorAll('.user-text')].map((e) => e.textContent);

describe('edit and resend, and ‹ n/m ›', () => {
  it('edits inline; busy keeps the draft; the new head replaces the window; the arrows switch back and keep the reader at the message', async () => {
    const { container, server, setBusy, views } = pane();
    await until(() => texts(container).includes('hello'), 'first window');
    expect(container.querySelector('[data-testid="branch-nav"]')).toBeNull();
    // The Edit action is a real button: reachable and operable from the keyboard.
    const edit = screen.getByRole('button', { name: 'Edit message' });
    expect(edit.tagName).toBe('BUTTON');
    fireEvent.click(edit);
    const box = screen.getByRole('textbox', { name: 'Edit message' }) as HTMLTextAreaElement;
    expect(box.value).toBe('hello');
    expect(document.activeElement).toBe(box);
    fireEvent.change(box, { target: { value: 'hello edited' } });

    setBusy(true);
    fireEvent.keyDown(box, { key: 'Enter' });
    await until(() => container.querySelector('.edit-error') !== null, 'busy message');
    expect(screen.getByRole('alert').textContent).toMatch(/still running.*kept/);
    expect((screen.getByRole('textbox', { name: 'Edit message' }) as HTMLTextAreaElement).value).toBe('hello edited');
    expect(texts(container)).toEqual([]); // the row still shows its editor, not a half-sent state

    setBusy(false);
    fireEvent.click(screen.getByRole('button', { name: 'Send edit' }));
    await until(() => texts(container).includes('hello edited'), 'the new head');
    expect(texts(container)).toEqual(['hello edited']);
    expect(container.querySelector('[data-message-id="u0"]')).toBeNull();
    await until(() => container.querySelector('.branch-pos')?.textContent === '2/2', '‹ 2/2 ›');
    const edits = server.received.filter((f) => f.type === 'edit');
    expect(edits.map((f) => [f.entryId, f.text])).toEqual([
      ['u0', 'hello edited'],
      ['u0', 'hello edited'],
    ]);
    expect(edits[0]!.commandId).not.toBe(edits[1]!.commandId);
    expect(screen.getByRole('button', { name: 'Next version' })).toHaveProperty('disabled', true);

    fireEvent.click(screen.getByRole('button', { name: 'Previous version' }));
    await until(() => container.querySelector('.branch-pos')?.textContent === '1/2' && texts(container).includes('hello'), '‹ 1/2 ›');
    expect(texts(container)).toEqual(['hello']);
    expect(server.received.filter((f) => f.type === 'select-branch').map((f) => f.head)).toEqual(['main']);
    // One view, rebuilt in place, and it was told to keep the reader at the edited message.
    expect(views).toHaveLength(1);
    await until(() => views[0]!.getState().focus?.id === 'u0', 'focus');
  });

  it('a refused switch shows why and changes nothing', async () => {
    const { container, server } = pane();
    await until(() => texts(container).includes('hello'));
    fireEvent.click(screen.getByRole('button', { name: 'Edit message' }));
    fireEvent.change(screen.getByRole('textbox', { name: 'Edit message' }), { target: { value: 'hello edited' } });
    fireEvent.keyDown(screen.getByRole('textbox', { name: 'Edit message' }), { key: 'Enter' });
    await until(() => container.querySelector('.branch-pos')?.textContent === '2/2');
    server.onCommand = () => ({ state: 'rejected', code: 'busy' });
    fireEvent.click(screen.getByRole('button', { name: 'Previous version' }));
    await until(() => container.querySelector('.branch-notice') !== null, 'notice');
    expect(container.querySelector('.branch-notice')!.textContent).toMatch(/still running/);
    expect(texts(container)).toEqual(['hello edited']);
  });

  it('Escape cancels the editor and the message shows again', async () => {
    const { container } = pane();
    await until(() => texts(container).includes('hello'));
    fireEvent.click(screen.getByRole('button', { name: 'Edit message' }));
    fireEvent.keyDown(screen.getByRole('textbox', { name: 'Edit message' }), { key: 'Escape' });
    await act(tick);
    expect(screen.queryByRole('textbox', { name: 'Edit message' })).toBeNull();
    expect(texts(container)).toEqual(['hello']);
  });
});

describe('the graph', () => {
  it('is requested only when opened, and shows branches as a tree, compactions and children', async () => {
    const { container, api } = pane();
    await until(() => texts(container).includes('hello') && api.meta.mock.calls.length > 0);
    await act(tick);
    expect(api.graph).not.toHaveBeenCalled();
    fireEvent.click(screen.getByRole('button', { name: 'Graph' }));
    await until(() => container.querySelector('[data-testid="graph-panel"] .graph-branch') !== null, 'graph');
    expect(api.graph).toHaveBeenCalledTimes(1);
    const panel = container.querySelector('[data-testid="graph-panel"]')!;
    // b1 is nested under main, b2 under b1; the selected head is marked.
    expect(panel.querySelector('[data-head="main"] [data-head="b1"] [data-head="b2"]')).not.toBeNull();
    expect(panel.querySelector('[data-head="b1"]')!.getAttribute('aria-current')).toBe('true');
    expect(panel.querySelector('[data-head="b2"] .graph-fork')!.textContent).toMatch(/forked from b1 after a3/);
    expect(panel.querySelector('.graph-compaction')!.textContent).toBe('k9 summarizes u0 … a1');
    expect(panel.querySelector('.graph-link')!.textContent).toBe('Spawned c-child from t4');
    // Closing and opening again asks again (the panel holds nothing while closed).
    fireEvent.click(screen.getByRole('button', { name: 'Graph' }));
    expect(container.querySelector('[data-testid="graph-panel"]')).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Graph' }));
    await until(() => api.graph.mock.calls.length === 2);
  });

  it('branchTree keeps creation order and treats an unknown parent as a root', () => {
    const t = branchTree([
      { head: 'main', label: 'm' },
      { head: 'b2', label: 'x', forkedFrom: 'gone' },
      { head: 'b1', label: 'y', forkedFrom: 'main' },
    ]);
    expect(t.map((n) => n.branch.head)).toEqual(['main', 'b2']);
    expect(t[0]!.children.map((n) => n.branch.head)).toEqual(['b1']);
    const { container } = render(<GraphView graph={{ id: 'c', head: 'main', branches: [{ head: 'main', label: 'main' }], compactions: [], links: [] }} />);
    expect(container.textContent).toContain('None on this branch.');
  });
});

import { act, fireEvent, render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { FakeServer, type FakeGroup } from '../../test/fakeserver';
import { ViewCache } from '../chat/cache';
import type { Entry } from '../chat/reconcile';
import { groupMessage } from '../chat/rows';
import type { AssistantMessage } from '../chat/types';
import { TranscriptView } from '../chat/view';
import type { Api } from '../protocol/api';
import { Client } from '../protocol/client';
import { ChatPane } from './ChatPane';
import { Transcript } from './Transcript';
import { asEntry } from '../../test/messages';

const tick = () => new Promise((r) => setTimeout(r, 0));
async function until(cond: () => boolean, what = 'condition') {
  for (let i = 0; i < 200; i++) {
    if (cond()) return;
    await act(tick);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const user = (id: string, text: string): Entry => ({ id, content: { kind: 'user', text } });
const agent = (id: string, markdown: string): Entry => ({ id, content: { kind: 'agent', markdown } });
const thinking = (id: string, text: string): Entry => ({ id, content: { kind: 'reasoning', text, label: 'Thinking' } });
const tool = (id: string, app: string, status: string, extra: Record<string, unknown> = {}): Entry => asEntry({
  id,
  content: { kind: 'tool', receipt: { app, summary: `${app} ${id}`, status, args: '{"command":"ls"}', ...(status === 'ok' ? { outputPreview: 'a.go' } : {}) }, invocationId: `inv-${id}`, ...extra },
});

function mount(groups: FakeGroup[]) {
  const server = new FakeServer(groups);
  const client = new Client({ url: 'ws://t/api/v2/ws', WebSocket: server.WebSocket });
  const view = new TranscriptView(client, 'c1');
  const heights = new Map<string, number>();
  const utils = render(<Transcript view={view} heights={heights} onSave={() => {}} />);
  return { server, client, view, ...utils };
}

let seq = 0;
function event(server: FakeServer, op: string, entry: Entry, after?: string, open = true) {
  seq++;
  server.emit({ type: 'event', conversation: 'c1', generation: 1, seq, op, entry, revision: seq, open, after });
}

// shape reads what a reader sees of each row: its strips' summaries and steps, texts, notices.
function shape(root: HTMLElement) {
  for (const b of root.querySelectorAll<HTMLButtonElement>('.strip-summary[aria-expanded="false"]')) fireEvent.click(b);
  for (const b of root.querySelectorAll<HTMLButtonElement>('.step-head[aria-expanded="false"]')) fireEvent.click(b);
  return [...root.querySelectorAll('[data-message-id]')].map((row) => ({
    id: row.getAttribute('data-message-id'),
    state: row.getAttribute('data-state'),
    parts: [...row.children].map((c) =>
      c.classList.contains('execution-strip')
        ? `strip:${c.querySelector('.strip-summary')!.textContent}:${[...c.querySelectorAll('.step')].map((s) => `${s.getAttribute('data-step-id')}/${s.getAttribute('data-state') ?? ''}/${s.textContent}`).join('|')}`
        : `${c.className}:${c.textContent}`,
    ),
  }));
}

describe('a reply through the production reducers and components', () => {
  it('streams, completes with a failure, and reloads into the same rows', async () => {
    seq = 0;
    const history: FakeGroup[] = [
      { index: 0, entries: [user('u0', 'hi')] },
      { index: 1, entries: [agent('a0', 'hello')] },
    ];
    const { server, container, view } = mount(history);
    await until(() => view.getState().rows.length === 2, 'history');
    // A new turn: the empty reply shows one loading mark.
    act(() => event(server, 'upsert', user('u1', 'list files'), 'a0', false));
    await until(() => container.querySelectorAll('svg.loading-mark').length === 1, 'placeholder');
    act(() => event(server, 'upsert', thinking('r1', 'I will look'), 'u1'));
    await until(() => container.querySelector('[data-message-id="r1"]') !== null, 'reasoning');
    expect(container.querySelectorAll('svg.loading-mark')).toHaveLength(0);
    act(() => event(server, 'upsert', tool('t1', 'shell', ''), 'r1'));
    act(() => event(server, 'upsert', tool('t2', 'shell', ''), 't1'));
    act(() => event(server, 'upsert', agent('x1', 'Partial answer'), 't2'));
    await until(() => container.textContent!.includes('Partial answer'), 'text');
    expect(screen.getByRole('button', { name: 'Thinking · Functions ×2' })).toBeTruthy();
    // A stale revision (older than what was applied) changes nothing.
    act(() => {
      seq++;
      server.emit({ type: 'event', conversation: 'c1', generation: 1, seq, op: 'upsert', entry: agent('x1', 'Partial'), revision: 1, open: true, after: 't2' });
    });
    await act(tick);
    expect(container.textContent).toContain('Partial answer');
    // A second execution group after the text; then a late presentation.
    act(() => event(server, 'upsert', tool('t3', 'read', ''), 'x1'));
    await until(() => container.querySelectorAll('.execution-strip').length === 2, 'second strip');
    fireEvent.click(container.querySelectorAll<HTMLButtonElement>('.strip-summary')[1]!);
    act(() => {
      seq++;
      server.emit({ type: 'event', conversation: 'c1', generation: 1, seq, op: 'presentation', entryId: 't3', invocationId: 'inv-t3', revision: seq, presentation: { schema: 'folio.shell', version: 1, revision: 2, payload: { command: 'ls', output: 'line one' } } });
    });
    await until(() => container.textContent!.includes('line one'), 'presentation');
    // Completion: the tools settle (t3 with the presentation it retains: the
    // settled value replaces the live one), then the failure.
    act(() => event(server, 'settle', tool('t1', 'shell', 'ok'), 'r1', false));
    act(() => event(server, 'settle', tool('t2', 'shell', 'failed', { receipt: { app: 'shell', summary: 'shell t2', status: 'failed', reason: 'exit 1' } }), 't1', false));
    act(() => event(server, 'settle', tool('t3', 'read', 'ok', { presentation: { schema: 'folio.shell', version: 1, revision: 2, payload: { command: 'ls', output: 'line one' } } }), 'x1', false));
    act(() => event(server, 'settle', { id: 'f1', content: { kind: 'failure', reason: 'rate-limit', detail: 'HTTP 429', retryable: true } }, 't3', false));
    await until(() => container.querySelector('.failure-notice') !== null, 'failure');
    expect(container.textContent).toContain('line one'); // the settled value's retained presentation
    const live = shape(container);
    const reply = live.find((r) => r.id === 'r1')!;
    expect(reply.state).toBe('failed');
    expect(reply.parts.map((p) => p.split(':')[0])).toEqual(['strip', 'markdown', 'strip', 'failure-notice', 'message-actions']);
    expect(reply.parts[0]).toContain('t1/done/');
    expect(reply.parts[0]).toContain('t2/error/');
    // Reload: the same entries come from history.
    const t3 = tool('t3', 'read', 'ok', { presentation: { schema: 'folio.shell', version: 1, revision: 2, payload: { command: 'ls', output: 'line one' } } });
    const cold = mount([
      ...history,
      { index: 2, entries: [user('u1', 'list files')] },
      {
        index: 3,
        entries: [
          thinking('r1', 'I will look'),
          tool('t1', 'shell', 'ok'),
          tool('t2', 'shell', 'failed', { receipt: { app: 'shell', summary: 'shell t2', status: 'failed', reason: 'exit 1' } }),
          agent('x1', 'Partial answer'),
          t3,
          { id: 'f1', content: { kind: 'failure', reason: 'rate-limit', detail: 'HTTP 429', retryable: true } },
        ],
      },
    ]);
    await until(() => cold.view.getState().rows.length === 4, 'cold history');
    expect(shape(cold.container)).toEqual(live);
  });

  it('typesets math on the pinned path as live rows arrive', async () => {
    seq = 0;
    const { server, container, view } = mount([{ index: 0, entries: [user('u0', 'hi')] }]);
    await until(() => view.getState().rows.length >= 1);
    const column = container.querySelector('[data-testid="message-column"]')!;
    const late = document.createElement('span');
    late.className = 'folio-math';
    late.textContent = '\\(y_1\\)';
    column.append(late);
    act(() => event(server, 'upsert', agent('a1', 'x'), 'u0'));
    await until(() => late.querySelector('.katex') !== null, 'typeset');
  });
});

describe('rows from stored records', () => {
  const held = (entries: Entry[]) => entries.map((entry) => ({ entry, revision: 1, open: false as const }));
  it('keep stored order without inventing interleaving', () => {
    const m = groupMessage(held([thinking('r1', 'a'), thinking('r2', 'b'), tool('t1', 'shell', 'ok'), tool('t2', 'shell', 'ok'), agent('x', 'done')]), false) as AssistantMessage;
    expect(m.segments.map((s) => s.kind)).toEqual(['steps', 'text']);
    const steps = m.segments[0]!.kind === 'steps' ? m.segments[0]!.steps : [];
    expect(steps.map((s) => s.id)).toEqual(['r1', 'r2', 't1', 't2']);
  });
  it('put consumed steering between the content before and after it', () => {
    const m = groupMessage(held([agent('x1', 'before'), { id: 's', content: { kind: 'steering', text: 'shorter please', commandId: 'k' } }, agent('x2', 'after')]), false) as AssistantMessage;
    expect(m.segments.map((s) => s.kind)).toEqual(['text', 'steering', 'text']);
  });
  it('a cancelled reply gets no failure notice; a sub-agent shows as one', () => {
    const m = groupMessage(held([tool('t', 'agent', 'ok'), { id: 'st', content: { kind: 'stopped', summary: { elapsedMs: 1, done: [], notDone: [] } } }]), false) as AssistantMessage;
    expect(m.state).toBe('cancelled');
    expect(m.failure).toBeUndefined();
    expect(m.segments[0]!.kind === 'steps' && m.segments[0]!.steps[0]!.kind).toBe('agent');
  });
});

describe('the queue and steering', () => {
  const api = {} as Api;
  function pane(server: FakeServer) {
    const client = new Client({ url: 'ws://t/api/v2/ws', WebSocket: server.WebSocket });
    const cache = new ViewCache((key) => new TranscriptView(client, key.split('|')[0]!));
    return render(
      <ChatPane client={client} api={api} cache={cache} conversation={{ id: 'c1', title: 'T', updated: '' }} branches={[]} head={undefined} onHead={() => {}} slot={0} onOpenList={() => {}} />,
    );
  }

  it('shows queued sends in order; a rejected one returns to the draft', async () => {
    const server = new FakeServer([{ index: 0, entries: [user('u0', 'hi')] }]);
    server.onCommand = (f) => (f.text === 'no' ? { state: 'rejected', code: 'too-large' } : { state: 'queued' });
    const { container } = pane(server);
    await until(() => container.querySelector('.composer-input') !== null);
    const input = container.querySelector<HTMLTextAreaElement>('.composer-input')!;
    for (const text of ['first', 'second']) {
      const box = container.querySelector<HTMLTextAreaElement>('.composer-input')!;
      fireEvent.change(box, { target: { value: text } });
      await act(tick);
      fireEvent.keyDown(box, { key: 'Enter' });
      await act(tick);
    }
    await until(() => container.querySelectorAll('.queue-item[data-state="queued"]').length === 2, `queued: ${JSON.stringify(server.received.map((f) => f.type))} ${container.innerHTML.slice(0, 0)}`);
    expect([...container.querySelectorAll('.queue-text')].map((e) => e.textContent)).toEqual(['first', 'second']);
    fireEvent.change(input, { target: { value: 'no' } });
    fireEvent.keyDown(input, { key: 'Enter' });
    await until(() => input.value === 'no', 'draft back');
    expect(container.querySelectorAll('.queue-item')).toHaveLength(2);
    // Pending items offer no resend, edit or remove.
    expect(container.querySelectorAll('.queue-item button')).toHaveLength(0);
  });

  it('a steer rejected by cancellation stays a draft with an explicit Send', async () => {
    const server = new FakeServer([{ index: 0, entries: [user('u0', 'hi')] }]);
    server.onCommand = (f) => (f.type === 'steer' ? { state: 'rejected', code: 'cancelled' } : { state: 'queued' });
    const { container } = pane(server);
    await until(() => container.querySelector('[data-message-id="u0"]') !== null);
    act(() => server.emit({ type: 'event', conversation: 'c1', generation: 1, seq: 1, op: 'turn', state: 'running', turn: 'u0' }));
    await until(() => container.querySelector('.steer-button') !== null, 'steer offered');
    const input = container.querySelector<HTMLTextAreaElement>('.composer-input')!;
    fireEvent.change(input, { target: { value: 'be brief' } });
    fireEvent.click(container.querySelector('.steer-button')!);
    await until(() => container.querySelector('.steer-draft') !== null, 'steer draft');
    expect(server.received.filter((f) => f.type === 'send')).toHaveLength(0); // never sent on its own
    fireEvent.click(container.querySelector('.steer-draft button')!);
    await until(() => server.received.some((f) => f.type === 'send' && f.text === 'be brief'), 'explicit send');
  });
  it('a queued send the stop cancels leaves the queue as a draft with Send and Discard', async () => {
    const server = new FakeServer([{ index: 0, entries: [user('u0', 'hi')] }]);
    server.onCommand = () => ({ state: 'queued' });
    const { container } = pane(server);
    await until(() => container.querySelector('.composer-input') !== null);
    const box = container.querySelector<HTMLTextAreaElement>('.composer-input')!;
    fireEvent.change(box, { target: { value: 'show me a table' } });
    await act(tick);
    fireEvent.keyDown(box, { key: 'Enter' });
    await until(() => container.querySelectorAll('.queue-item[data-state="queued"]').length === 1, 'queued');
    const sent = server.received.find((f) => f.type === 'send')!;
    act(() => server.emit({ type: 'event', conversation: 'c1', generation: 1, seq: 2, op: 'receipt', receipt: { commandId: sent.commandId, state: 'rejected', code: 'cancelled' } }));
    await until(() => container.querySelector('[data-testid="returned-draft"]') !== null, 'returned draft');
    expect(container.querySelectorAll('.queue-item')).toHaveLength(0);
    expect(container.querySelector('.draft-text')!.textContent).toBe('show me a table');
    const [send, discard] = [...container.querySelectorAll<HTMLButtonElement>('[data-testid="returned-draft"] button')];
    expect([send!.textContent, discard!.textContent]).toEqual(['Send', 'Discard']);
    fireEvent.click(send!);
    await until(() => server.received.filter((f) => f.type === 'send' && f.text === 'show me a table').length === 2, 'sent again');
    expect(container.querySelector('[data-testid="returned-draft"]')).toBeNull();
  });
});

describe('prefetch', () => {
  it('reads further ahead the faster the reader scrolls, up to a bound', async () => {
    const { prefetchDistance } = await import('./Transcript');
    expect(prefetchDistance(0)).toBe(800);
    expect(prefetchDistance(2)).toBeGreaterThan(prefetchDistance(1));
    expect(prefetchDistance(-2)).toBe(prefetchDistance(2));
    expect(prefetchDistance(1000)).toBe(4000);
  });
  it('reads ahead in the direction of travel only', async () => {
    const { prefetchSide } = await import('./Transcript');
    expect(prefetchSide(100, 100, 1, -1)).toBe('before');
    expect(prefetchSide(100, 100, 1, 1)).toBe('after');
    expect(prefetchSide(100, 5000, 1, 1)).toBeUndefined(); // moving down, far from the bottom
    expect(prefetchSide(3000, 5000, 0, 0)).toBeUndefined();
    expect(prefetchSide(3000, 5000, 5, -1)).toBe('before'); // fast: the distance grew
  });
});

describe('open tool calls from the engine', () => {
  const held = (entries: Entry[], open?: boolean) => entries.map((entry) => ({ entry, revision: 1, open }));
  const placeholder = (reason: string) => asEntry({ id: 't', content: { kind: 'tool', receipt: { app: 'shell', summary: 'shell', status: 'failed', reason, notDone: 'the call did not complete' } } });
  it('show a running placeholder as running, not failed', () => {
    const m = groupMessage(held([placeholder('running')], true), true) as AssistantMessage;
    const step = m.segments[0]!.kind === 'steps' ? m.segments[0]!.steps[0]! : undefined;
    expect(step?.kind === 'function' && step.call.state).toBe('running');
    expect(m.state).toBe('streaming');
  });
  it('a call waiting for approval puts the reply in the approval state, without the placeholder mark', () => {
    const m = groupMessage(held([placeholder('awaiting_approval')], true), true) as AssistantMessage;
    expect(m.state).toBe('awaiting_approval');
  });
});

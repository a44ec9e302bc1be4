import { act, fireEvent, render, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { FakeServer } from '../../test/fakeserver';
import { ViewCache } from '../chat/cache';
import { TranscriptView } from '../chat/view';
import type { Api } from '../protocol/api';
import { Client } from '../protocol/client';
import { ChatPane } from './ChatPane';

const tick = () => new Promise((r) => setTimeout(r, 0));
async function until(cond: () => boolean, what = 'condition') {
  for (let i = 0; i < 200; i++) {
    if (cond()) return;
    await act(tick);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('a draft the engine gave back', () => {
  it('is dismissed on the server when it is sent again or discarded', async () => {
    const server = new FakeServer([{ index: 0, entries: [{ id: 'u0', content: { kind: 'user', text: 'hi' } }] }]);
    server.onCommand = (f) => (f.type === 'send' && String(f.text).startsWith('stopped') ? { state: 'rejected', code: 'cancelled' } : undefined);
    const client = new Client({ url: 'ws://t/api/v2/ws', WebSocket: server.WebSocket });
    const cache = new ViewCache((key) => new TranscriptView(client, key.split('|')[0]!));
    const api = { models: async () => ({ models: [], current: undefined }) } as unknown as Api;
    const { container } = render(
      <ChatPane client={client} api={api} cache={cache} conversation={{ id: 'c1', title: 'T', updated: '' }} branches={[]} head={undefined} onHead={() => {}} slot={0} onOpenList={() => {}} />,
    );
    await until(() => container.querySelector('.composer-input') !== null, 'composer');
    const frames = (type: string) => server.received.filter((f) => f.type === type);
    for (const [text, button] of [
      ['stopped one', 'Discard'],
      ['stopped two', 'Send'],
    ] as const) {
      const box = container.querySelector<HTMLTextAreaElement>('.composer-input')!;
      fireEvent.change(box, { target: { value: text } });
      await act(tick);
      fireEvent.keyDown(box, { key: 'Enter' });
      await until(() => container.querySelector('[data-testid="returned-draft"]') !== null, `${text} given back`);
      const id = frames('send').find((f) => f.text === text)!.commandId;
      expect(frames('dismiss').some((f) => f.draft === id)).toBe(false);
      const card = container.querySelector<HTMLElement>('[data-testid="returned-draft"]')!;
      fireEvent.click(within(card).getByRole('button', { name: button }));
      await until(() => frames('dismiss').some((f) => f.draft === id && f.conversation === 'c1'), `${text} dismissed`);
      await until(() => container.querySelector('[data-testid="returned-draft"]') === null, `${text} card gone`);
    }
    // Sent again under a new command ID, which the fake server queues.
    expect(frames('send').filter((f) => f.text === 'stopped two')).toHaveLength(2);
  });
});

import { act, fireEvent, render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { FakeServer } from '../../test/fakeserver';
import { ViewCache } from '../chat/cache';
import { TranscriptView } from '../chat/view';
import type { Api, ModelInfo } from '../protocol/api';
import { Client } from '../protocol/client';
import { ChatPane } from './ChatPane';
import { Composer } from './Composer';

const tick = () => new Promise((r) => setTimeout(r, 0));
async function until(cond: () => boolean, what = 'condition') {
  for (let i = 0; i < 200; i++) {
    if (cond()) return;
    await act(tick);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const models: ModelInfo[] = [
  { name: 'demo/folio-demo', provider: 'demo', model: 'folio-demo', default: true },
  { name: 'local/qwen3', provider: 'local', model: 'qwen3', default: false },
];

describe('the model picker', () => {
  it('shows the current model and reports a pick', () => {
    const picked: string[] = [];
    render(<Composer draft="" setDraft={() => {}} onSend={() => {}} models={models} model="local/qwen3" onModel={(n) => picked.push(n)} />);
    const select = screen.getByRole<HTMLSelectElement>('combobox', { name: 'Model' });
    expect(select.value).toBe('local/qwen3');
    expect(select.selectedOptions[0]!.textContent).toBe('local · qwen3');
    expect(select.disabled).toBe(false);
    // A native select: focusable and changed from the keyboard by the platform.
    select.focus();
    expect(document.activeElement).toBe(select);
    fireEvent.change(select, { target: { value: 'demo/folio-demo' } });
    expect(picked).toEqual(['demo/folio-demo']);
  });

  it('defaults to the default model and hides without a list', () => {
    const { rerender } = render(<Composer draft="" setDraft={() => {}} onSend={() => {}} models={models} onModel={() => {}} />);
    expect(screen.getByRole<HTMLSelectElement>('combobox', { name: 'Model' }).value).toBe('demo/folio-demo');
    rerender(<Composer draft="" setDraft={() => {}} onSend={() => {}} />);
    expect(screen.queryByRole('combobox', { name: 'Model' })).toBeNull();
  });

  it('sends the picked model once, with the next send only', async () => {
    const server = new FakeServer([{ index: 0, entries: [{ id: 'u0', content: { kind: 'user', text: 'hi' } }] }]);
    const client = new Client({ url: 'ws://t/api/v2/ws', WebSocket: server.WebSocket });
    const cache = new ViewCache((key) => new TranscriptView(client, key.split('|')[0]!));
    const asked: (string | undefined)[] = [];
    const api = {
      models: async (c?: string) => {
        asked.push(c);
        return { models, current: 'demo/folio-demo' };
      },
    } as unknown as Api;
    const { container } = render(
      <ChatPane client={client} api={api} cache={cache} conversation={{ id: 'c1', title: 'T', updated: '' }} branches={[]} head={undefined} onHead={() => {}} slot={0} onOpenList={() => {}} />,
    );
    await until(() => container.querySelector('.model-picker') !== null, 'picker');
    expect(asked).toEqual(['c1']);
    const select = container.querySelector<HTMLSelectElement>('.model-picker')!;
    expect(select.value).toBe('demo/folio-demo');
    fireEvent.change(select, { target: { value: 'local/qwen3' } });
    await act(tick);
    const sends = () => server.received.filter((f) => f.type === 'send');
    for (const text of ['one', 'two']) {
      const box = container.querySelector<HTMLTextAreaElement>('.composer-input')!;
      fireEvent.change(box, { target: { value: text } });
      await act(tick);
      fireEvent.keyDown(box, { key: 'Enter' });
      await until(() => sends().some((f) => f.text === text), `send ${text}`);
    }
    expect(sends().map((f) => [f.text, f.model])).toEqual([
      ['one', 'local/qwen3'],
      ['two', undefined],
    ]);
    expect(container.querySelector<HTMLSelectElement>('.model-picker')!.value).toBe('local/qwen3');
  });

  it('gives the text back as a draft when the server refuses the model', async () => {
    const server = new FakeServer([{ index: 0, entries: [{ id: 'u0', content: { kind: 'user', text: 'hi' } }] }]);
    server.onCommand = (f) => (f.model ? { error: 'unknown-model' } : undefined);
    const client = new Client({ url: 'ws://t/api/v2/ws', WebSocket: server.WebSocket });
    const cache = new ViewCache((key) => new TranscriptView(client, key.split('|')[0]!));
    let asked = 0;
    const api = {
      models: async () => {
        asked++;
        return { models, current: 'demo/folio-demo' };
      },
    } as unknown as Api;
    const { container } = render(
      <ChatPane client={client} api={api} cache={cache} conversation={{ id: 'c1', title: 'T', updated: '' }} branches={[]} head={undefined} onHead={() => {}} slot={0} onOpenList={() => {}} />,
    );
    await until(() => container.querySelector('.model-picker') !== null, 'picker');
    fireEvent.change(container.querySelector('.model-picker')!, { target: { value: 'local/qwen3' } });
    await act(tick);
    const box = container.querySelector<HTMLTextAreaElement>('.composer-input')!;
    fireEvent.change(box, { target: { value: 'refused' } });
    await act(tick);
    fireEvent.keyDown(box, { key: 'Enter' });
    await until(() => box.value === 'refused', 'draft back');
    expect(container.querySelectorAll('.queue-item')).toHaveLength(0);
    await until(() => asked === 2, 'the list asked again');
    expect(container.querySelector<HTMLSelectElement>('.model-picker')!.value).toBe('demo/folio-demo');
  });
});

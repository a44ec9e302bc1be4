import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { AssistantMessage, Conversation, ReplyState } from '../chat/types';
import { AssistantBubble } from './Bubbles';
import { ChatPane } from './ChatPane';

function reply(fields: Partial<AssistantMessage>): AssistantMessage {
  return { id: 'r', role: 'assistant', state: 'streaming', text: '', thinking: [], tools: [], ...fields };
}

const marks = (root: ParentNode) => root.querySelectorAll('svg.loading-mark').length;

describe('the loading mark', () => {
  it('shows exactly one mark in a pane whose only empty reply is streaming', () => {
    const conversation: Conversation = {
      id: 'c',
      title: 't',
      updated: '2026-11-30T09:00:00Z',
      messages: [
        { id: 'u1', role: 'user', text: 'hi' },
        reply({ id: 'a1', state: 'completed', text: 'Hello.' }),
        reply({ id: 'a2', state: 'failed', failure: { reason: 'timeout' } }),
        { id: 'u2', role: 'user', text: 'again' },
        reply({ id: 'a3', state: 'streaming' }),
      ],
    };
    const { container } = render(<ChatPane conversation={conversation} onSend={() => {}} onOpenList={() => {}} />);
    expect(marks(container)).toBe(1);
    const placeholder = screen.getByRole('status');
    expect(placeholder.textContent).toBe('thinking…');
    expect(placeholder.closest('[data-message-id]')?.getAttribute('data-message-id')).toBe('a3');
  });

  it.each<[string, Partial<AssistantMessage>]>([
    ['text', { text: 'Partial' }],
    ['thinking', { thinking: ['considering'] }],
    ['a tool call', { tools: [{ id: 't', name: 'shell', state: 'running' }] }],
  ])('is replaced once a streaming reply has %s', (_name, fields) => {
    const { container } = render(<AssistantBubble message={reply(fields)} />);
    expect(marks(container)).toBe(0);
    expect(screen.queryByRole('status')).toBeNull();
  });

  it.each<ReplyState>(['awaiting_approval', 'completed', 'failed', 'cancelled'])(
    'is suppressed for an empty reply in state %s',
    (state) => {
      const { container } = render(<AssistantBubble message={reply({ state })} />);
      expect(marks(container)).toBe(0);
      expect(container.textContent).not.toContain('thinking…');
    },
  );

  it('is an 18px double ring hidden from assistive technology', () => {
    const { container } = render(<AssistantBubble message={reply({})} />);
    const svg = container.querySelector('svg.loading-mark')!;
    expect(svg.getAttribute('width')).toBe('18');
    expect(svg.getAttribute('height')).toBe('18');
    expect(svg.querySelectorAll('circle')).toHaveLength(2);
    expect(svg.getAttribute('aria-hidden')).toBe('true');
  });
});

describe('a failed reply', () => {
  it('keeps its partial answer and shows one notice after it, before the actions', () => {
    const { container } = render(
      <AssistantBubble
        message={reply({ state: 'failed', text: 'The log starts', failure: { reason: 'transport', detail: 'refused' } })}
      />,
    );
    const bubble = container.firstElementChild!;
    const order = [...bubble.children].map((c) => c.className);
    expect(order).toEqual(['markdown', 'failure-notice', 'message-actions']);
    expect(container.querySelectorAll('.failure-notice')).toHaveLength(1);
  });

  it('shows an empty failed reply with its notice', () => {
    const { container } = render(<AssistantBubble message={reply({ state: 'failed', failure: { reason: 'auth' } })} />);
    expect(container.querySelectorAll('.failure-notice')).toHaveLength(1);
  });

  it.each<ReplyState>(['completed', 'cancelled'])('adds no notice to a %s reply', (state) => {
    const { container } = render(<AssistantBubble message={reply({ state, text: 'Done.' })} />);
    expect(container.querySelector('.failure-notice')).toBeNull();
  });
});

describe('the chat pane pin path', () => {
  it('typesets math in the column even when it was put there outside React', () => {
    const conversation: Conversation = { id: 'c', title: 't', updated: '', messages: [reply({ id: 'a', state: 'completed', text: 'x' })] };
    const { container, rerender } = render(<ChatPane conversation={conversation} onSend={() => {}} onOpenList={() => {}} />);
    const column = container.querySelector('[data-testid="message-column"]')!;
    const late = document.createElement('span');
    late.className = 'folio-math';
    late.textContent = '\\(y_1\\)';
    column.append(late);
    rerender(<ChatPane conversation={{ ...conversation, updated: 'later' }} onSend={() => {}} onOpenList={() => {}} />);
    expect(late.querySelector('.katex')).not.toBeNull();
  });
});

import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { reply as makeReply, type ReplyParts } from '../../test/messages';
import type { AssistantMessage, ReplyState } from '../chat/types';
import { AssistantBubble } from './Bubbles';

const reply = (fields: ReplyParts): AssistantMessage => makeReply(fields);

const marks = (root: ParentNode) => root.querySelectorAll('svg.loading-mark').length;

describe('the loading mark', () => {
  it.each<[string, ReplyParts]>([
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


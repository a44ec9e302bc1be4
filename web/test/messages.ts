// Test helpers: view-model messages built from the parts a test cares about.
import type { AssistantMessage, Segment, ToolCall } from '../src/chat/types';

export interface ReplyParts extends Partial<Omit<AssistantMessage, 'segments'>> {
  text?: string;
  thinking?: string[];
  tools?: ToolCall[];
}

/** reply builds an assistant message: its steps (thinking, then tools), then its text. */
export function reply(p: ReplyParts = {}): AssistantMessage {
  const { text = '', thinking = [], tools = [], ...rest } = p;
  const segments: Segment[] = [];
  const steps = [
    ...thinking.map((t, i) => ({ kind: 'thinking' as const, id: `th${i}`, label: 'Thinking', text: t })),
    ...tools.map((call) => ({ kind: 'function' as const, id: call.id, call })),
  ];
  if (steps.length) segments.push({ kind: 'steps', id: 'steps', steps });
  if (text) segments.push({ kind: 'text', id: 'text', markdown: text });
  return { id: 'r', role: 'assistant', state: 'streaming', ...rest, segments };
}

// Test helpers: view-model messages built from the parts a test cares about.
import type { AssistantMessage, Segment, ToolCall } from '../src/chat/types';
import type { Entry } from '../src/chat/reconcile';

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

/**
 * asEntry types a test's entry literal as the client holds it. Entries the
 * client holds come from the log schema's types (src/protocol/entries.ts);
 * tests also build what only the wire carries, such as a live tool call
 * whose receipt has no status yet.
 */
export const asEntry = (e: { id: string; content: { kind: string; [member: string]: unknown } }): Entry => e as unknown as Entry;

/** member reads one member of an entry's content, whatever its kind. */
export const member = (e: Entry | undefined, name: string): unknown => (e?.content as unknown as Record<string, unknown> | undefined)?.[name];

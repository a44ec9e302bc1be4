// The chat's view model. It is what the components render; the server protocol
// (a later issue) maps its messages onto these types.

/** Why a reply failed; the keys of the failure headline catalog. */
export const FAILURE_REASONS = [
  'rate_limit',
  'auth',
  'authz',
  'context',
  'policy',
  'provider',
  'transport',
  'timeout',
  'cancelled',
] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

export interface Failure {
  /** A known reason, or any other string from a newer server (shown generically). */
  reason: FailureReason | (string & {});
  /** Technical details, shown as plain text on request. */
  detail?: string;
}

/**
 * Where a reply is in its life. `streaming` is the only state in which the
 * empty-reply placeholder may show; `awaiting_approval` waits on the user, and
 * the last three are terminal.
 */
export type ReplyState = 'streaming' | 'awaiting_approval' | 'completed' | 'failed' | 'cancelled';

export interface ToolCall {
  id: string;
  name: string;
  state: 'running' | 'done' | 'error';
}

export interface UserMessage {
  id: string;
  role: 'user';
  text: string;
}

export interface AssistantMessage {
  id: string;
  role: 'assistant';
  state: ReplyState;
  text: string;
  thinking: string[];
  tools: ToolCall[];
  failure?: Failure;
}

export type Message = UserMessage | AssistantMessage;

export interface Conversation {
  id: string;
  title: string;
  /** ISO 8601 time of the last change. */
  updated: string;
  messages: Message[];
}

/**
 * showsThinkingPlaceholder is the one rule for the empty-reply placeholder and
 * its loading mark: a reply that is streaming and has produced nothing yet. Any
 * text, thinking or tool call replaces it; approval and terminal states never
 * show it.
 */
export function showsThinkingPlaceholder(m: AssistantMessage): boolean {
  return m.state === 'streaming' && m.text === '' && m.thinking.length === 0 && m.tools.length === 0;
}

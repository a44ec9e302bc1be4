// The chat's view model: what the components render. rows.ts maps protocol
// entries (transcript entries in their canonical JSON) onto these types.
import type { TurnReceipt } from '../receipt/receipt';

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
  /** The failure entry's ID: a `retry` names it. */
  id?: string;
  /** The provider said trying again may work. */
  retryable?: boolean;
  /** How long the provider asked to wait before trying again. */
  retryAfterMs?: number;
}

/**
 * Where a reply is in its life. `streaming` is the only state in which the
 * empty-reply placeholder may show; `awaiting_approval` waits on the user, and
 * the last three are terminal.
 */
export type ReplyState = 'streaming' | 'awaiting_approval' | 'completed' | 'failed' | 'cancelled';

/** A tool's retained presentation: opaque payload tagged with its schema. */
export interface Presentation {
  schema: string;
  version: number;
  revision: number;
  payload?: unknown;
  artifact?: { ref: string; contentType: string; committedBytes: number; available: boolean; final?: boolean };
}

/** One function call in a reply's trace. Each call has its own entry ID. */
export interface ToolCall {
  id: string;
  name: string;
  state: 'running' | 'done' | 'error';
  summary?: string;
  args?: string;
  result?: string;
  error?: string;
  invocationId?: string;
  durationMs?: number;
  presentation?: Presentation;
  /**
   * The call's supplemental items, keyed, in first-use order: the retained
   * ones, and while the call runs its ephemeral ones too.
   */
  supplementals?: { key: string; presentation: Presentation }[];
  /** Calls made by a sub-agent this call started. */
  children?: ToolCall[];
}

/** A step of an execution group: thinking, a function call or a sub-agent. */
export type Step =
  | { kind: 'thinking'; id: string; /** The provider's label; empty when it gave none. */ label: string; text: string }
  | { kind: 'function'; id: string; call: ToolCall }
  | { kind: 'agent'; id: string; name: string; call: ToolCall };

/**
 * A reply's content in its stored order. Consecutive steps form one execution
 * group (one strip); text, steering and notices separate groups.
 */
export type Segment =
  | { kind: 'steps'; id: string; steps: Step[] }
  | { kind: 'text'; id: string; markdown: string }
  | { kind: 'steering'; id: string; text: string }
  | { kind: 'notice'; id: string; text: string; tone: string }
  /** An earlier attempt's failure: a retry ran after it, in the same reply. */
  | { kind: 'failure'; id: string; failure: Failure };

export type { TurnReceipt };

export interface UserMessage {
  id: string;
  role: 'user';
  text: string;
}

export interface AssistantMessage {
  id: string;
  role: 'assistant';
  state: ReplyState;
  segments: Segment[];
  failure?: Failure;
  /** The stored `turn-receipt` of the turn this reply ends. */
  /** The reply's last turn receipt. */
  receipt?: TurnReceipt;
  /** Every turn receipt of the reply, in stored order (a log may hold several in one reply, as Jazz writes them). */
  receipts?: TurnReceipt[];
  /** The reply was stopped: how long the turn had run. */
  stoppedAfterMs?: number;
}

/** A conversation's header or other entries before the first user message. */
export interface PreambleMessage {
  id: string;
  role: 'preamble';
  text: string;
}

export type Message = UserMessage | AssistantMessage | PreambleMessage;

export interface ConversationMeta {
  id: string;
  title: string;
  /** ISO 8601 time of the last change. */
  updated: string;
}

/** replyText joins a reply's text segments (for copying); empty for a reply of tool calls only. */
export function replyText(m: AssistantMessage): string {
  return m.segments
    .filter((s): s is Extract<Segment, { kind: 'text' }> => s.kind === 'text')
    .map((s) => s.markdown)
    .join('\n\n');
}

/**
 * showsThinkingPlaceholder is the one rule for the empty-reply placeholder and
 * its loading mark: a reply that is streaming and has produced nothing yet. Any
 * text, thinking or tool call replaces it; approval and terminal states never
 * show it.
 */
export function showsThinkingPlaceholder(m: AssistantMessage): boolean {
  return m.state === 'streaming' && m.segments.length === 0;
}

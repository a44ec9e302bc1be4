// Mapping a display group's entries onto one chat row. The same function maps
// a streaming reply, a finished one and one restored from history, so all
// three render through the same components.
import type { Tool } from '../protocol/entries';
import type { Entry, Held } from './reconcile';
import type { AssistantMessage, Failure, Message, Presentation, Segment, Step, ToolCall, TurnReceipt } from './types';

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
const obj = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/**
 * withoutEmptyItem drops a list marker with nothing after it at the end of a
 * text ("- " when the stop or the stream cut the answer before the item's
 * words): it would render as an empty bullet point.
 */
export function withoutEmptyItem(markdown: string): string {
  const cut = markdown.replace(/(^|\n)[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]*$/, '$1');
  return cut === markdown ? markdown : cut.trimEnd();
}

/**
 * presentationOf is a stored presentation as the components take it: the
 * schema's members with the version and revision the adapters compare
 * (0 when a log left them out).
 */
function presentationOf(v: unknown): Presentation | undefined {
  const p = obj(v);
  if (typeof p.schema !== 'string') return undefined;
  const out: Presentation = { schema: p.schema, version: num(p.version) ?? 0, revision: num(p.revision) ?? 0 };
  if ('payload' in p) out.payload = p.payload;
  const a = obj(p.artifact);
  if (typeof a.ref === 'string') {
    out.artifact = { ref: a.ref, contentType: str(a.contentType), committedBytes: num(a.committedBytes) ?? 0, available: a.available !== false };
    if (typeof a.final === 'boolean') out.artifact.final = a.final;
  }
  return out;
}

/** Tool apps that start a sub-agent: their step is shown as one. */
const AGENT_APPS = new Set(['agent', 'task', 'spawn', 'subagent']);

// Provider error classes (kebab-case in logs) onto the catalog's reasons.
function failureReason(reason: string): string {
  return reason.replace(/-/g, '_');
}

function notDone(r: { notDone?: unknown }): boolean {
  return r.notDone === true || (typeof r.notDone === 'string' && r.notDone !== '');
}

function toolCall(e: Entry, c: Tool, open: boolean | undefined): ToolCall {
  // A live placeholder's receipt may be partial (no status yet): read it member by member.
  const r = obj(c.receipt);
  const status = str(r.status);
  // An open call is a placeholder (failed, not done, with the reason it waits
  // for) until it settles; a page of a running turn carries it the same way.
  const reason = str(r.reason);
  // notDone is text (what was left undone); older logs wrote true.
  const pending = notDone(r) && (reason === 'running' || reason === 'awaiting_approval');
  const running = open !== false && (pending || (open === true && status === ''));
  const failed = !running && (status === 'failed' || status === 'denied');
  const pres = presentationOf(c.presentation);
  const call: ToolCall = {
    id: e.id,
    name: str(r.app) || 'function',
    state: running ? 'running' : failed ? 'error' : 'done',
    summary: str(r.summary) || undefined,
    args: str(r.args) || undefined,
    result: str(r.outputPreview) || str(r.diffText) || undefined,
    error: failed ? str(r.reason) || str(r.detail) || status : undefined,
    invocationId: str(c.invocationId) || undefined,
    durationMs: num(r.durationMs),
    presentation: pres,
  };
  if (Array.isArray(c.supplementals)) {
    const sup = c.supplementals
      .map((v) => obj(v))
      .filter((v) => typeof v.key === 'string' && typeof v.presentation === 'object' && v.presentation !== null)
      .flatMap((v) => {
        const p = presentationOf(v.presentation);
        return typeof v.key === 'string' && p ? [{ key: v.key, presentation: p }] : [];
      });
    if (sup.length > 0) call.supplementals = sup;
  }
  return call;
}

/**
 * agentName is what a sub-agent step is called: the label of its folio.task
 * presentation (present from the call's first update, live and restored
 * alike), else the receipt summary without the tool name the task tool
 * prefixes it with.
 */
function agentName(call: ToolCall): string {
  const p = call.presentation;
  if (p?.schema === 'folio.task') {
    const label = str(obj(p.payload).label);
    if (label) return label;
  }
  const s = call.summary ?? '';
  if (s.startsWith(`${call.name} `)) return s.slice(call.name.length + 1) || call.name;
  return s || call.name;
}

/**
 * replyMessage maps a reply group onto an assistant message. Entries are taken
 * in stored order: consecutive thinking and function entries form one
 * execution group; agent text, steering and notices separate groups. Nothing
 * is reordered or invented: a log without interleaving shows its records in the
 * order they were stored.
 */
export function replyMessage(id: string, held: readonly Held[], running: boolean): AssistantMessage {
  const segments: Segment[] = [];
  let failure: Failure | undefined;
  let cancelled = false;
  let stoppedAfterMs: number | undefined;
  const receipts: TurnReceipt[] = [];
  let awaiting = false;
  let steps: Step[] | undefined;
  const flush = () => (steps = undefined);
  const pushStep = (s: Step) => {
    if (!steps) {
      steps = [];
      segments.push({ kind: 'steps', id: `steps-${s.id}`, steps });
    }
    steps.push(s);
  };
  for (const h of held) {
    const e = h.entry;
    const c = e.content;
    // A retry runs in the same reply, after the failure: that failure becomes
    // part of the reply's history, and the new attempt decides its state.
    if (failure && c.kind !== 'turn-receipt' && c.kind !== 'failure') {
      flush();
      segments.push({ kind: 'failure', id: failure.id ?? `failure-${e.id}`, failure });
      failure = undefined;
    }
    switch (c.kind) {
      case 'reasoning':
        pushStep({ kind: 'thinking', id: e.id, label: str(c.label), text: str(c.text) });
        break;
      case 'tool': {
        const call = toolCall(e, c, h.open);
        if (h.open !== false && notDone(obj(c.receipt)) && str(obj(c.receipt).reason) === 'awaiting_approval') awaiting = true;
        if (AGENT_APPS.has(call.name)) pushStep({ kind: 'agent', id: e.id, name: agentName(call), call });
        else pushStep({ kind: 'function', id: e.id, call });
        break;
      }
      case 'agent':
        flush();
        segments.push({ kind: 'text', id: e.id, markdown: withoutEmptyItem(str(c.markdown)) });
        break;
      case 'steering':
        flush();
        segments.push({ kind: 'steering', id: e.id, text: str(c.text) });
        break;
      case 'failure':
        failure = {
          reason: failureReason(str(c.reason)),
          detail: str(c.detail) || str(c.headline) || undefined,
          id: e.id,
          retryable: c.retryable === true,
          retryAfterMs: num(c.retryAfterMs),
        };
        break;
      case 'stopped':
        cancelled = true;
        stoppedAfterMs = num(obj(c.summary).elapsedMs);
        break;
      case 'turn-receipt':
        if (Array.isArray(c.steps)) {
          receipts.push({ steps: c.steps.map((s) => ({ ...s, durationMs: s.durationMs ?? 0 })), finishedAt: num(c.finishedAt) });
        }
        break;
      case 'notice':
        if (str(c.audience) === 'classic') break;
        flush();
        segments.push({ kind: 'notice', id: e.id, text: str(c.text), tone: str(c.tone) });
        break;
      case 'compaction':
        flush();
        segments.push({ kind: 'notice', id: e.id, text: '', tone: 'summary' });
        break;
      case 'report':
        flush();
        segments.push({ kind: 'notice', id: e.id, text: str(obj(c.report).label), tone: 'info' });
        break;
      case 'expanded':
        flush();
        segments.push({ kind: 'text', id: e.id, markdown: str(c.text) });
        break;
      default:
        // header and kinds from newer servers add no content.
        break;
    }
  }
  const state = failure ? 'failed' : cancelled ? 'cancelled' : awaiting ? 'awaiting_approval' : running ? 'streaming' : 'completed';
  const m: AssistantMessage = { id, role: 'assistant', state, segments, failure };
  if (receipts.length > 0) {
    // Each receipt is shown, as `folio log show` prints each line; `receipt` is the last.
    m.receipt = receipts[receipts.length - 1];
    m.receipts = receipts;
  }
  if (cancelled) m.stoppedAfterMs = stoppedAfterMs;
  return m;
}

/** groupMessage maps one display group onto its chat row. */
export function groupMessage(held: readonly Held[], running: boolean, placeholderId?: string): Message | undefined {
  const first = held[0];
  if (!first) {
    return placeholderId ? { id: placeholderId, role: 'assistant', state: 'streaming', segments: [] } : undefined;
  }
  const c = first.entry.content;
  if (c.kind === 'user') return { id: first.entry.id, role: 'user', text: str(c.text) };
  if (c.kind === 'header' || c.kind === 'notice') {
    const hasReply = held.some((h) => h.entry.content.kind !== 'header' && h.entry.content.kind !== 'notice');
    if (!hasReply) {
      const parts = held.map(({ entry: { content: h } }) =>
        h.kind === 'header' ? [str(h.name), str(h.model)].filter(Boolean).join(' · ') : h.kind === 'notice' ? str(h.text) : '',
      );
      return { id: first.entry.id, role: 'preamble', text: parts.join(' — ') };
    }
  }
  return replyMessage(first.entry.id, held, running);
}

/**
 * holds reports whether chat row m shows entry e: a prompt is its own row;
 * a reply's row holds its answers, notices, steering, thinking and tool
 * calls, each a segment or step named by its entry. A search hit names an
 * entry; the view scrolls to and marks the row that holds it.
 */
export function holds(m: Message, e: string): boolean {
  if (m.id === e) return true;
  if (m.role !== 'assistant') return false;
  if (m.failure?.id === e) return true;
  return m.segments.some((s) => s.id === e || (s.kind === 'steps' && s.steps.some((st) => st.id === e)) || (s.kind === 'failure' && s.failure.id === e));
}

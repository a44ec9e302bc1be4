// A pane's delivery state: this tab's sends and steers from the composer to
// their final receipt, what came back to the person (a message the stop
// cancelled, a message the server refused), the draft, and the model the
// next send runs on. A pure reducer, so each transition is tested without a
// browser (delivery.test.ts); ChatPane only dispatches.
//
// The rules (docs/protocol.md, Commands): a receipt's state never moves
// back; pending or uncertain delivery is never resent under a new ID (a
// transport failure resends the same command ID on reconnect); a command
// the stop cancelled comes back as a card with Send and Discard; any other
// refusal did nothing, so its text is the draft again and a card at the
// message says why, with Send again (a new command) and Edit.
import type { CommandState } from '../protocol/frames';
import type { Refusal } from '../protocol/errors';
import { advances, isFinal, isReturned } from '../protocol/states';

/** A message the user sent, as the pane tracks its delivery. */
export interface Outgoing {
  commandId: string;
  kind: 'send' | 'steer';
  text: string;
  attachments?: string[];
  /** The model this send switches to (a name from the model list). */
  model?: string;
  /** pending: sent, no answer; uncertain: the connection dropped before the answer. */
  state: CommandState;
  code?: string;
}

/** A message given back to the person: the stop cancelled it before it ran. */
export interface Returned {
  commandId: string;
  kind: 'send' | 'steer';
  text: string;
}

/** A message the server refused: nothing happened; why, and its text. */
export interface Refused extends Returned {
  refusal: Refusal;
}

export interface DeliveryState {
  draft: string;
  outgoing: Outgoing[];
  returned: Returned[];
  refused: Refused[];
  /** The model the server says the next turn runs on. */
  current?: string;
  /** The person's pick, sent with the next send (the server then remembers it). */
  chosen?: string;
  /** The last approve that was refused. */
  approvalError?: Refusal;
}

export const initialDelivery: DeliveryState = { draft: '', outgoing: [], returned: [], refused: [] };

export type DeliveryAction =
  | { type: 'draft'; text: string }
  /** A send or steer leaves the composer (prepared by withModel). */
  | { type: 'submit'; o: Outgoing }
  | { type: 'attached'; commandId: string; attachments: string[] }
  /** A receipt: the command's answer ('answer') or a later receipt event ('event'). */
  | { type: 'receipt'; via: 'answer' | 'event'; commandId: string; state: CommandState; code?: string; reason?: string }
  /** The server refused the frame itself (an error frame), or its upload failed: nothing was sent. */
  | { type: 'refused'; commandId: string; refusal: Refusal }
  /** The connection dropped before the answer: delivery is uncertain. */
  | { type: 'lost'; commandId: string }
  | { type: 'models'; current?: string }
  | { type: 'choose'; name: string }
  /** The server's model list changed under the pick: show its current model again. */
  | { type: 'forget-choice' }
  /** A returned or refused card goes (sent again, discarded, taken back). */
  | { type: 'drop'; commandId: string; takeBack?: boolean }
  | { type: 'approval-error'; refusal?: Refusal };

/** withModel gives a send the chosen model when it differs from the current one. */
export function withModel(s: DeliveryState, o: Outgoing): Outgoing {
  if (o.kind === 'send' && s.chosen !== undefined && s.chosen !== s.current) return { ...o, model: s.chosen };
  return o;
}

function giveBack(s: DeliveryState, o: Outgoing | undefined, refusal?: Refusal): DeliveryState {
  if (!o) return s;
  const outgoing = s.outgoing.filter((x) => x.commandId !== o.commandId);
  const card = { commandId: o.commandId, kind: o.kind, text: o.text };
  if (!refusal) {
    if (s.returned.some((r) => r.commandId === o.commandId)) return { ...s, outgoing };
    return { ...s, outgoing, returned: [...s.returned, card] };
  }
  if (s.refused.some((r) => r.commandId === o.commandId)) return { ...s, outgoing };
  return { ...s, outgoing, draft: o.text, refused: [...s.refused, { ...card, refusal }] };
}

export function reduceDelivery(s: DeliveryState, a: DeliveryAction): DeliveryState {
  switch (a.type) {
    case 'draft':
      return { ...s, draft: a.text };
    case 'submit': {
      const model = a.o.model !== undefined ? { current: a.o.model } : {};
      return { ...s, ...model, draft: '', outgoing: [...s.outgoing, a.o] };
    }
    case 'attached':
      return { ...s, outgoing: s.outgoing.map((o) => (o.commandId === a.commandId ? { ...o, attachments: a.attachments } : o)) };
    case 'receipt': {
      const o = s.outgoing.find((x) => x.commandId === a.commandId);
      if (isReturned(a.state)) {
        // The stop gave it back (code cancelled; a removed or code-less
        // receipt event is the queue handing it back too): Send and Discard.
        const stopped = a.code === 'cancelled' || (a.via === 'event' && (a.state === 'removed' || !a.code));
        return giveBack(s, o, stopped ? undefined : { code: a.code ?? 'unknown', reason: a.reason });
      }
      if (!o || !advances(o.state, a.state)) return s;
      return { ...s, outgoing: s.outgoing.map((x) => (x === o ? { ...x, state: a.state, code: a.code } : x)) };
    }
    case 'refused': {
      const next = giveBack(s, s.outgoing.find((x) => x.commandId === a.commandId), a.refusal);
      return a.refusal.code === 'unknown-model' ? { ...next, chosen: undefined } : next;
    }
    case 'lost':
      return { ...s, outgoing: s.outgoing.map((o) => (o.commandId === a.commandId && advances(o.state, 'uncertain') ? { ...o, state: 'uncertain' } : o)) };
    case 'models':
      return { ...s, current: a.current };
    case 'choose':
      return { ...s, chosen: a.name };
    case 'forget-choice':
      return { ...s, chosen: undefined };
    case 'drop': {
      const r = s.refused.find((x) => x.commandId === a.commandId);
      const draft = a.takeBack && r && (s.draft === '' || s.draft === r.text) ? r.text : s.draft;
      return {
        ...s,
        draft,
        returned: s.returned.filter((x) => x.commandId !== a.commandId),
        refused: s.refused.filter((x) => x.commandId !== a.commandId),
      };
    }
    case 'approval-error':
      return { ...s, approvalError: a.refusal };
  }
}

/** uncertainSends are the commands to resend, under their own IDs, once the connection is back. */
export const uncertainSends = (s: DeliveryState): Outgoing[] => s.outgoing.filter((o) => o.state === 'uncertain');

/** visibleQueue is this tab's unfinished sends in order, then sends other tabs queued. */
export function visibleQueue(s: DeliveryState, server: readonly { commandId: string; text: string; state: CommandState }[]): Outgoing[] {
  const mine = new Set(s.outgoing.map((o) => o.commandId));
  return [
    ...s.outgoing.filter((o) => !isFinal(o.state)),
    ...server.filter((q) => !mine.has(q.commandId)).map((q) => ({ commandId: q.commandId, kind: 'send' as const, text: q.text, state: q.state })),
  ];
}

// DEV FIXTURE. An in-memory stand-in for the server, so the app can be built,
// looked at and tested before the protocol client exists. It fakes replies by
// streaming a canned answer. The protocol client replaces this whole file;
// nothing outside App.tsx may import it.
import { useCallback, useEffect, useReducer } from 'react';
import type { AssistantMessage, Conversation, Message } from '../chat/types';

const MATH_ANSWER = String.raw`The decay at step \(t\) compares consecutive distances \(d_t\):

\(v_t = (d_t - d_{t+1}) / d_t\)

Summed over a run it is

$$\sum_{t=0}^{T-1} v_t$$

and the continuous analogue is \[ \int_0^1 x^2\,dx = \tfrac{1}{3}. \]

Inline dollars work too: $e^{i\pi} + 1 = 0$. Prices like $5 and $10 stay prose, and so does \$HOME or ` + '`$PATH`' + `.`;

const at = (minute: number) => new Date(Date.UTC(2026, 10, 30, 9, minute)).toISOString();

function assistant(id: string, fields: Partial<AssistantMessage>): AssistantMessage {
  return { id, role: 'assistant', state: 'completed', text: '', thinking: [], tools: [], ...fields };
}

/** The fixture's conversations. Message IDs are stable so browser tests can find them. */
export function fixtureConversations(): Conversation[] {
  return [
    {
      id: 'c-math',
      title: 'Decay rates',
      updated: at(30),
      messages: [
        { id: 'm-math-q', role: 'user', text: 'How do I measure how fast the distance shrinks?' },
        assistant('m-math-a', { text: MATH_ANSWER, thinking: ['Define the ratio first.'] }),
      ],
    },
    {
      id: 'c-failed',
      title: 'Provider outage',
      updated: at(20),
      messages: [
        { id: 'm-failed-q', role: 'user', text: 'Summarize the log.' },
        assistant('m-failed-a', {
          state: 'failed',
          text: 'The log starts with three warnings about',
          tools: [{ id: 't1', name: 'read_file', state: 'done' }],
          failure: { reason: 'transport', detail: 'dial tcp 127.0.0.1:9: connect: connection refused\n<b>not bold</b>' },
        }),
      ],
    },
    {
      id: 'c-waiting',
      title: 'Waiting for a reply',
      updated: at(10),
      messages: [
        { id: 'm-waiting-q', role: 'user', text: 'Are you there?' },
        assistant('m-waiting-a', { state: 'streaming' }),
      ],
    },
  ];
}

interface State {
  conversations: Conversation[];
  selectedId: string | undefined;
  nextId: number;
}

type Action =
  | { type: 'select'; id: string }
  | { type: 'create'; now: string }
  | { type: 'send'; text: string; now: string }
  | { type: 'stream'; conversationId: string; messageId: string; chunk: string; done: boolean };

function updateConversation(state: State, id: string, f: (c: Conversation) => Conversation): State {
  return { ...state, conversations: state.conversations.map((c) => (c.id === id ? f(c) : c)) };
}

function reducer(state: State, action: Action): State {
  switch (action.type) {
    case 'select':
      return { ...state, selectedId: action.id };
    case 'create': {
      const id = `c-new-${state.nextId}`;
      const conversation: Conversation = { id, title: 'New conversation', updated: action.now, messages: [] };
      return { conversations: [conversation, ...state.conversations], selectedId: id, nextId: state.nextId + 1 };
    }
    case 'send': {
      const id = state.selectedId;
      if (!id) return state;
      const n = state.nextId;
      const added: Message[] = [
        { id: `m-${n}-q`, role: 'user', text: action.text },
        assistant(`m-${n}-a`, { state: 'streaming' }),
      ];
      const next = updateConversation(state, id, (c) => ({ ...c, updated: action.now, messages: [...c.messages, ...added] }));
      return { ...next, nextId: n + 1 };
    }
    case 'stream':
      return updateConversation(state, action.conversationId, (c) => ({
        ...c,
        messages: c.messages.map((m) =>
          m.id === action.messageId && m.role === 'assistant'
            ? { ...m, text: m.text + action.chunk, state: action.done ? 'completed' : 'streaming' }
            : m,
        ),
      }));
  }
}

// The fake reply: a canned answer in chunks, split mid-math on purpose so an
// unclosed opener is on screen for a moment before its closer arrives.
const REPLY_CHUNKS = ['Here is a quick one: \\(a^2', ' + b^2 = c^2\\)', ', and $$\\frac{1}{2}', '$$ done.'];
const CHUNK_MS = 400;

/** useFixtureChat runs the dev fixture: state, actions and the fake streaming. */
export function useFixtureChat() {
  const [state, dispatch] = useReducer(reducer, undefined, () => ({
    conversations: fixtureConversations(),
    selectedId: 'c-math',
    nextId: 1,
  }));

  // Stream into the newest reply the user started (never the fixture's
  // permanently waiting one, whose placeholder the browser tests look at).
  const streaming = state.conversations
    .flatMap((c) => c.messages.map((m) => ({ c, m })))
    .find(({ m }) => m.role === 'assistant' && m.state === 'streaming' && m.id !== 'm-waiting-a');
  const streamKey = streaming ? `${streaming.c.id}/${streaming.m.id}/${(streaming.m as AssistantMessage).text.length}` : '';
  useEffect(() => {
    if (!streaming) return;
    const text = (streaming.m as AssistantMessage).text;
    let sent = 0;
    let i = 0;
    while (i < REPLY_CHUNKS.length && sent < text.length) sent += REPLY_CHUNKS[i++]!.length;
    const chunk = REPLY_CHUNKS[i];
    if (chunk === undefined) return;
    const timer = setTimeout(
      () =>
        dispatch({
          type: 'stream',
          conversationId: streaming.c.id,
          messageId: streaming.m.id,
          chunk,
          done: i === REPLY_CHUNKS.length - 1,
        }),
      CHUNK_MS,
    );
    return () => clearTimeout(timer);
  }, [streamKey]);

  const now = () => new Date().toISOString();
  return {
    conversations: state.conversations,
    selected: state.conversations.find((c) => c.id === state.selectedId),
    select: useCallback((id: string) => dispatch({ type: 'select', id }), []),
    create: useCallback(() => dispatch({ type: 'create', now: now() }), []),
    send: useCallback((text: string) => dispatch({ type: 'send', text, now: now() }), []),
  };
}

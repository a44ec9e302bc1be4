import { useLayoutEffect, useRef } from 'react';
import type { Conversation } from '../chat/types';
import { typesetMath } from '../markdown/math';
import { MessageBubble } from './Bubbles';
import { Composer } from './Composer';

// How close to the bottom, in pixels, still counts as reading the latest.
const PIN_SLACK = 24;

export interface ChatPaneProps {
  conversation: Conversation | undefined;
  onSend: (text: string) => void;
  onOpenList: () => void;
}

/**
 * ChatPane shows one conversation's messages and the composer. While the
 * reader is at the bottom it stays pinned there as replies grow; on that path
 * it typesets the message column first, so the scroll height it pins to
 * already includes typeset math.
 */
export function ChatPane({ conversation, onSend, onOpenList }: ChatPaneProps) {
  const column = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);
  const shownId = useRef<string | undefined>(undefined);

  useLayoutEffect(() => {
    const el = column.current;
    if (shownId.current !== conversation?.id) {
      // Another conversation opens at its latest message.
      shownId.current = conversation?.id;
      pinned.current = true;
    }
    if (!el || !pinned.current) return;
    typesetMath(el);
    el.scrollTop = el.scrollHeight;
  });

  const onScroll = () => {
    const el = column.current;
    if (el) pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight <= PIN_SLACK;
  };

  return (
    <main className="chat-pane" aria-label="Chat">
      <header className="chat-header">
        <button type="button" className="icon-button list-toggle" aria-label="Conversations" onClick={onOpenList}>
          ☰
        </button>
        <h1 className="chat-title">{conversation?.title ?? 'No conversation'}</h1>
      </header>
      <div className="message-column" ref={column} onScroll={onScroll} data-testid="message-column">
        <div className="message-list">
          {conversation?.messages.map((m) => <MessageBubble key={m.id} message={m} />)}
        </div>
      </div>
      <Composer disabled={!conversation} onSend={onSend} />
    </main>
  );
}

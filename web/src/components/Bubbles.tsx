import type { AssistantMessage, Message, UserMessage } from '../chat/types';
import { showsThinkingPlaceholder } from '../chat/types';
import { useCatalog } from '../i18n/catalog';
import { MarkdownText } from '../markdown/MarkdownText';
import { FailureNotice } from './FailureNotice';
import { LoadingMark } from './LoadingMark';

function UserBubble({ message }: { message: UserMessage }) {
  return (
    <div className="bubble bubble-user" data-message-id={message.id}>
      <p className="user-text">{message.text}</p>
    </div>
  );
}

function ThinkingPlaceholder() {
  const t = useCatalog();
  return (
    <div className="thinking-placeholder" role="status">
      <LoadingMark />
      <span>{t.thinking}</span>
    </div>
  );
}

// TraceSummary is a stand-in for the execution strip, which a later change
// builds; it only counts the reply's steps, in plain text.
function TraceSummary({ message }: { message: AssistantMessage }) {
  const parts: string[] = [];
  if (message.thinking.length > 0) parts.push(`Thinking ×${message.thinking.length}`);
  if (message.tools.length > 0) parts.push(`Functions ×${message.tools.length}`);
  if (parts.length === 0) return null;
  return <div className="trace-summary">{parts.join(' · ')}</div>;
}

/**
 * AssistantBubble renders a reply the same way in every state: its trace, its
 * text, the empty-reply placeholder while nothing has arrived, one failure
 * notice after the content of a failed reply, then the message actions.
 */
export function AssistantBubble({ message }: { message: AssistantMessage }) {
  return (
    <div className="bubble bubble-assistant" data-message-id={message.id} data-state={message.state}>
      <TraceSummary message={message} />
      {message.text !== '' ? <MarkdownText source={message.text} cached={message.state !== 'streaming'} /> : null}
      {showsThinkingPlaceholder(message) ? <ThinkingPlaceholder /> : null}
      {message.state === 'failed' && message.failure ? <FailureNotice failure={message.failure} /> : null}
      {message.state !== 'streaming' ? (
        <div className="message-actions">
          <button type="button" className="link-button" onClick={() => void navigator.clipboard?.writeText(message.text)}>
            Copy
          </button>
        </div>
      ) : null}
    </div>
  );
}

export function MessageBubble({ message }: { message: Message }) {
  return message.role === 'user' ? <UserBubble message={message} /> : <AssistantBubble message={message} />;
}

import type { AssistantMessage, Message, PreambleMessage, UserMessage } from '../chat/types';
import { replyText, showsThinkingPlaceholder } from '../chat/types';
import { useCatalog } from '../i18n/catalog';
import { MarkdownText } from '../markdown/MarkdownText';
import { UserMessageBody } from './BranchControls';
import { ExecutionStrip } from './ExecutionStrip';
import { FailureNotice } from './FailureNotice';
import { LoadingMark } from './LoadingMark';

function UserBubble({ message }: { message: UserMessage }) {
  return (
    <div className="bubble bubble-user" data-message-id={message.id}>
      <UserMessageBody message={message} />
    </div>
  );
}

function Preamble({ message }: { message: PreambleMessage }) {
  return (
    <div className="preamble" data-message-id={message.id}>
      {message.text}
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

/**
 * AssistantBubble renders a reply the same way in every state: its segments in
 * stored order (execution strips, text, consumed steering, notices), the
 * empty-reply placeholder while nothing has arrived, one failure notice after
 * the content of a failed reply, then the message actions.
 */
export function AssistantBubble({ message }: { message: AssistantMessage }) {
  const streaming = message.state === 'streaming';
  return (
    <div className="bubble bubble-assistant" data-message-id={message.id} data-state={message.state}>
      {message.segments.map((s) => {
        switch (s.kind) {
          case 'steps':
            return <ExecutionStrip key={s.id} id={s.id} steps={s.steps} />;
          case 'text':
            return <MarkdownText key={s.id} source={s.markdown} cached={!streaming} />;
          case 'steering':
            return (
              <div key={s.id} className="steering" data-entry-id={s.id}>
                <span className="steering-label">Steered:</span> {s.text}
              </div>
            );
          case 'notice':
            return (
              <div key={s.id} className="reply-notice" data-tone={s.tone}>
                {s.text}
              </div>
            );
        }
      })}
      {showsThinkingPlaceholder(message) ? <ThinkingPlaceholder /> : null}
      {message.state === 'failed' && message.failure ? <FailureNotice failure={message.failure} /> : null}
      {!streaming ? (
        <div className="message-actions">
          <button type="button" className="link-button" onClick={() => void navigator.clipboard?.writeText(replyText(message))}>
            Copy
          </button>
        </div>
      ) : null}
    </div>
  );
}

export function MessageBubble({ message }: { message: Message }) {
  if (message.role === 'user') return <UserBubble message={message} />;
  if (message.role === 'preamble') return <Preamble message={message} />;
  return <AssistantBubble message={message} />;
}

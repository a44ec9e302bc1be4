import { Check, Copy, RotateCcw, Square } from 'lucide-react';
import { useContext, useState } from 'react';
import type { AssistantMessage, Message, PreambleMessage, UserMessage } from '../chat/types';
import { replyText, showsThinkingPlaceholder } from '../chat/types';
import { useCatalog } from '../i18n/catalog';
import { duration, receiptLine } from '../receipt/receipt';
import { TurnActionsContext } from './TurnActions';
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

function CopyReply({ text }: { text: string }) {
  const t = useCatalog();
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      className="action-button"
      onClick={() =>
        void navigator.clipboard?.writeText(text).then(() => {
          setDone(true);
          setTimeout(() => setDone(false), 1500);
        })
      }
    >
      {done ? <Check aria-hidden="true" size={14} /> : <Copy aria-hidden="true" size={14} />}
      {done ? t.copied : t.copy}
    </button>
  );
}

/**
 * AssistantBubble renders a reply the same way in every state: its segments in
 * stored order (execution strips, text, consumed steering, notices), the
 * empty-reply placeholder while nothing has arrived, the Stopped marker of a
 * stopped reply, one failure notice (with Retry) after the content of a failed
 * reply, then the turn's receipt and the message actions.
 */
export function AssistantBubble({ message }: { message: AssistantMessage }) {
  const t = useCatalog();
  const actions = useContext(TurnActionsContext);
  const streaming = message.state === 'streaming';
  const text = streaming ? '' : replyText(message);
  const failure = message.state === 'failed' ? message.failure : undefined;
  const canRetry = failure?.id !== undefined && actions !== undefined && actions.retryable === failure.id;
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
                <span className="steering-label">{t.steered}</span> {s.text}
              </div>
            );
          case 'failure':
            return <FailureNotice key={s.id} failure={s.failure} />;
          case 'notice':
            return (
              <div key={s.id} className="reply-notice" data-tone={s.tone}>
                {s.tone === 'summary' ? t.summarized : s.text}
              </div>
            );
        }
      })}
      {showsThinkingPlaceholder(message) ? <ThinkingPlaceholder /> : null}
      {message.state === 'cancelled' ? (
        <p className="stopped-marker" data-testid="stopped-marker">
          <Square aria-hidden="true" size={12} fill="currentColor" />
          {message.stoppedAfterMs !== undefined ? t.stoppedAfter(duration(message.stoppedAfterMs)) : t.stopped}
        </p>
      ) : null}
      {failure ? <FailureNotice failure={failure} /> : null}
      {!streaming && (message.receipt || text || canRetry) ? (
        <div className="message-actions">
          {canRetry ? (
            <button type="button" className="action-button retry-button" onClick={() => actions.retry(failure.id!)}>
              <RotateCcw aria-hidden="true" size={14} />
              {t.retry}
              {failure.retryAfterMs !== undefined ? <span className="retry-after"> · {t.retryIn(duration(failure.retryAfterMs))}</span> : null}
            </button>
          ) : null}
          {text ? <CopyReply text={text} /> : null}
          {(message.receipts ?? (message.receipt ? [message.receipt] : [])).map((r, i) => (
            <span key={i} className="turn-receipt" data-testid="turn-receipt" aria-label={t.receipt}>
              {receiptLine(r)}
            </span>
          ))}
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

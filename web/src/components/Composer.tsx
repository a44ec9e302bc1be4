import { useState, type FormEvent, type KeyboardEvent } from 'react';

export interface ComposerProps {
  disabled?: boolean;
  onSend: (text: string) => void;
}

/** Composer is the message input. Enter sends; Shift+Enter starts a new line. */
export function Composer({ disabled, onSend }: ComposerProps) {
  const [draft, setDraft] = useState('');
  const send = () => {
    const text = draft.trim();
    if (text === '' || disabled) return;
    onSend(text);
    setDraft('');
  };
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    send();
  };
  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      send();
    }
  };
  return (
    <form className="composer" onSubmit={onSubmit}>
      <textarea
        className="composer-input"
        aria-label="Message"
        placeholder="Message folio"
        rows={1}
        value={draft}
        disabled={disabled}
        onChange={(e) => setDraft(e.target.value)}
        onKeyDown={onKeyDown}
      />
      <button type="submit" className="send-button" disabled={disabled || draft.trim() === ''}>
        Send
      </button>
    </form>
  );
}

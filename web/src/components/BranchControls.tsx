// The branch controls on user messages: an Edit action that opens the text in
// an inline editor and sends it as an edit-and-resend, and ‹ n/m › on a
// message that has sibling branches. Rows read them through BranchContext, so
// a transcript without a controller (tests, read-only embeddings) shows none.
import { createContext, useContext, useEffect, useRef, useSyncExternalStore, type KeyboardEvent } from 'react';
import { alternativeAt, emptyBranches, type BranchController, type BranchState } from '../chat/branches';
import type { UserMessage } from '../chat/types';
import { useCatalog } from '../i18n/catalog';
import '../styles/branches.css';

export const BranchContext = createContext<BranchController | undefined>(undefined);

const noop = () => () => {};
const none = () => emptyBranches;

/** useBranches reads the pane's branch state (empty without a controller). */
export function useBranches(): [BranchController | undefined, BranchState] {
  const c = useContext(BranchContext);
  const s = useSyncExternalStore(c?.subscribe ?? noop, c?.getState ?? none);
  return [c, s];
}

/** BranchNav draws ‹ index+1/len › for a row with alternatives; the arrows send select-branch. */
export function BranchNav({ entryId }: { entryId: string }) {
  const t = useCatalog();
  const [c, s] = useBranches();
  const alt = alternativeAt(s.meta, entryId);
  if (!c || !alt) return null;
  const busy = s.switching !== undefined;
  return (
    <span className="branch-nav" role="group" aria-label={t.versions} data-testid="branch-nav">
      <button type="button" aria-label={t.previousVersion} disabled={busy || alt.index <= 0} onClick={() => void c.select(alt, -1)}>
        ‹
      </button>
      <span className="branch-pos" aria-live="polite">
        {alt.index + 1}/{alt.heads.length}
      </span>
      <button type="button" aria-label={t.nextVersion} disabled={busy || alt.index >= alt.heads.length - 1} onClick={() => void c.select(alt, 1)}>
        ›
      </button>
    </span>
  );
}

/** MessageEditor is the inline editor of one user message: Enter sends, Shift+Enter is a new line, Escape cancels. */
function MessageEditor({ c, entryId, text, sending, error }: { c: BranchController; entryId: string; text: string; sending: boolean; error?: string }) {
  const t = useCatalog();
  const ref = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    ref.current?.focus();
  }, []);
  const onKey = (e: KeyboardEvent) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      void c.sendEdit(entryId);
    } else if (e.key === 'Escape') {
      e.preventDefault();
      c.dispatch({ type: 'edit-cancel', entryId });
    }
  };
  return (
    <form
      className="message-editor"
      onSubmit={(e) => {
        e.preventDefault();
        void c.sendEdit(entryId);
      }}
    >
      <textarea
        ref={ref}
        aria-label={t.editMessage}
        value={text}
        readOnly={sending}
        rows={Math.min(8, Math.max(2, text.split('\n').length))}
        onChange={(e) => c.dispatch({ type: 'edit-change', entryId, text: e.target.value })}
        onKeyDown={onKey}
      />
      {error ? (
        <div className="edit-error" role="alert">
          {error}
        </div>
      ) : null}
      <div className="editor-actions">
        <button type="submit" className="button button-primary" disabled={sending}>
          {sending ? t.sendingEdit : t.sendEdit}
        </button>
        <button type="button" className="button" disabled={sending} onClick={() => c.dispatch({ type: 'edit-cancel', entryId })}>
          {t.cancel}
        </button>
      </div>
    </form>
  );
}

/**
 * UserMessageBody shows a user message's text, or its editor while an edit
 * is open, with the version control and the Edit action. Drafts live in the
 * controller, so a row that unmounts while scrolled away keeps its draft.
 */
export function UserMessageBody({ message }: { message: UserMessage }) {
  const t = useCatalog();
  const [c, s] = useBranches();
  const draft = s.edits[message.id];
  if (c && draft) return <MessageEditor c={c} entryId={message.id} text={draft.text} sending={draft.sending} error={draft.error} />;
  return (
    <>
      <p className="user-text">{message.text}</p>
      {c ? (
        <div className="message-actions user-actions">
          <BranchNav entryId={message.id} />
          <button type="button" className="link-button" aria-label={t.editMessage} onClick={() => c.dispatch({ type: 'edit-start', entryId: message.id, text: message.text })}>
            {t.edit}
          </button>
        </div>
      ) : null}
    </>
  );
}

/** BranchNotice says why the last switch did not happen, until dismissed. */
export function BranchNotice() {
  const t = useCatalog();
  const [c, s] = useBranches();
  if (!c || !s.notice) return null;
  return (
    <div className="branch-notice" role="alert">
      <span>{s.notice}</span>
      <button type="button" className="link-button" onClick={() => c.dispatch({ type: 'dismiss' })}>
        {t.dismiss}
      </button>
    </div>
  );
}

import { AlertTriangle, KeyRound, List, Pencil, RotateCcw, X } from 'lucide-react';
import { useContext } from 'react';
import { catalogs, LocaleContext, refusalText, useCatalog } from '../i18n/catalog';
import type { Refusal } from '../protocol/errors';

/**
 * RefusalNotice shows one refusal: the localized sentence for its code, and
 * the server's own words behind a disclosure (React text: markup in them is
 * shown, never parsed).
 */
export function RefusalNotice({ refusal, onDismiss }: { refusal: Refusal; onDismiss?: () => void }) {
  const locale = useContext(LocaleContext);
  const t = catalogs[locale];
  return (
    <div className="refusal" role="alert" data-testid="refusal" data-code={refusal.code}>
      <AlertTriangle aria-hidden="true" size={16} className="refusal-icon" />
      <div className="refusal-body">
        <p className="refusal-text">{refusalText(refusal.code, locale)}</p>
        {refusal.reason ? (
          <details className="failure-details">
            <summary>{t.details}</summary>
            <pre className="failure-detail-text">{refusal.reason}</pre>
          </details>
        ) : null}
      </div>
      {onDismiss ? (
        <button type="button" className="icon-button refusal-dismiss" aria-label={t.dismiss} title={t.dismiss} onClick={onDismiss}>
          <X aria-hidden="true" size={14} />
        </button>
      ) : null}
    </div>
  );
}

/**
 * RefusedDraft is a message the server refused (nothing happened): its text
 * where it would have gone, why, and the two ways on: send it again (a new
 * command ID, since the refusal did nothing) or take the text back into the
 * composer.
 */
export function RefusedDraft({ text, refusal, onSendAgain, onTakeBack }: { text: string; refusal: Refusal; onSendAgain: () => void; onTakeBack: () => void }) {
  const t = useCatalog();
  return (
    <div className="draft-card refused-draft" role="group" aria-label={t.refusedDraft} data-testid="refused-draft" data-code={refusal.code}>
      <span className="draft-note">{t.refusedDraft}</span>
      <span className="draft-text">{text}</span>
      <RefusalNotice refusal={refusal} />
      <span className="draft-actions">
        <button type="button" className="button button-primary" onClick={onSendAgain}>
          <RotateCcw aria-hidden="true" size={14} />
          {t.sendAgain}
        </button>
        <button type="button" className="button" onClick={onTakeBack}>
          <Pencil aria-hidden="true" size={14} />
          {t.takeBack}
        </button>
      </span>
    </div>
  );
}

/** MissingConversation replaces the transcript of a conversation the server does not have. */
export function MissingConversation({ id, onShowList }: { id: string; onShowList: () => void }) {
  const t = useCatalog();
  return (
    <div className="message-column missing-conversation" data-testid="missing-conversation">
      <div className="missing-box" role="alert">
        <h2>{t.noSuchConversation}</h2>
        <p>{t.noSuchConversationHint}</p>
        <p className="missing-id">
          <code>{id}</code>
        </p>
        <button type="button" className="button button-primary" onClick={onShowList}>
          <List aria-hidden="true" size={14} />
          {t.showConversations}
        </button>
      </div>
    </div>
  );
}

/**
 * TokenPage is the whole app when the server refused the tab's token (none,
 * or one from an earlier run): where the address with the token comes from.
 */
export function TokenPage({ origin, hadToken }: { origin: string; hadToken: boolean }) {
  const t = useCatalog();
  return (
    <main className="token-page" data-testid="token-page">
      <div className="token-box" role="alert">
        <h1>
          <KeyRound aria-hidden="true" size={20} />
          {t.tokenTitle}
        </h1>
        <p>{t.tokenBody}</p>
        <pre className="token-example">
          $ folio serve{'\n'}folio serving … (model: …; tools work in …){'\n'}open {origin}/#token=…
        </pre>
        <p>{t.tokenWhere}</p>
        {hadToken ? <p className="token-stale">{t.tokenStale}</p> : null}
      </div>
    </main>
  );
}

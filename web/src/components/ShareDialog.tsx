import { Copy, Link2, X } from 'lucide-react';
import { useCallback, useEffect, useRef, useState } from 'react';
import { useCatalog } from '../i18n/catalog';
import { HttpError, type Api, type ShareLink } from '../protocol/api';
import type { Refusal } from '../protocol/errors';
import { RefusalNotice } from './Refusal';
import '../styles/share.css';

export interface ShareDialogProps {
  api: Api;
  conversation: string;
  onClose: () => void;
  /** The address links are made absolute with (location.origin). */
  origin: string;
}

function refusalOf(e: unknown): Refusal {
  if (e instanceof HttpError) return { code: e.code, reason: e.message };
  return { code: 'internal', reason: e instanceof Error ? e.message : String(e) };
}

function when(iso: string | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/**
 * ShareDialog is the owner's sharing of one conversation (accounts only):
 * it lists the conversation's read-only links, makes a new one and shows
 * its address with a copy button (the server keeps only the token's hash,
 * so the address is shown once, when made), and revokes a link, after
 * which the server answers not-found for it at once. A refused request is
 * shown in the dialog, with the server's words.
 */
export function ShareDialog({ api, conversation, onClose, origin }: ShareDialogProps) {
  const t = useCatalog();
  const [links, setLinks] = useState<ShareLink[] | undefined>();
  const [made, setMade] = useState<string | undefined>();
  const [copied, setCopied] = useState(false);
  const [error, setError] = useState<Refusal | undefined>();
  const [busy, setBusy] = useState(false);
  const field = useRef<HTMLInputElement>(null);

  const load = useCallback(async () => {
    if (!api.shares) return;
    try {
      setLinks(await api.shares(conversation));
    } catch (e) {
      setError(refusalOf(e));
    }
  }, [api, conversation]);
  useEffect(() => {
    setLinks(undefined);
    setMade(undefined);
    setError(undefined);
    void load();
  }, [load]);
  useEffect(() => {
    if (made) field.current?.select();
  }, [made]);

  const create = async () => {
    if (!api.createShare) return;
    setBusy(true);
    setError(undefined);
    setCopied(false);
    try {
      const s = await api.createShare(conversation);
      setMade(new URL(s.path, origin).href);
      await load();
    } catch (e) {
      setError(refusalOf(e));
    } finally {
      setBusy(false);
    }
  };
  const revoke = async (id: string) => {
    if (!api.revokeShare) return;
    setBusy(true);
    setError(undefined);
    try {
      await api.revokeShare(conversation, id);
      setMade(undefined);
    } catch (e) {
      setError(refusalOf(e));
    } finally {
      setBusy(false);
      await load();
    }
  };
  const copy = async () => {
    if (!made) return;
    field.current?.select();
    try {
      await navigator.clipboard.writeText(made);
      setCopied(true);
    } catch {
      // No clipboard (an insecure origin): the address stays selected to copy by hand.
      setCopied(false);
    }
  };

  return (
    <section
      className="share-dialog"
      role="dialog"
      aria-label={t.shareTitle}
      data-testid="share-dialog"
      onKeyDown={(e) => {
        if (e.key === 'Escape') onClose();
      }}
    >
      <header className="share-head">
        <h2 className="share-title">
          <Link2 aria-hidden="true" size={16} /> {t.shareTitle}
        </h2>
        <button type="button" className="icon-button" aria-label={t.shareClose} title={t.shareClose} onClick={onClose}>
          <X aria-hidden="true" size={16} />
        </button>
      </header>
      <p className="share-hint">{t.shareHint}</p>
      <button type="button" className="button share-create" data-testid="share-create" disabled={busy} onClick={() => void create()}>
        {t.shareCreate}
      </button>
      {made ? (
        <div className="share-made" data-testid="share-made">
          <p className="share-made-note">{t.shareNew}</p>
          <div className="share-made-row">
            <input ref={field} className="share-url" readOnly value={made} aria-label={t.shareNew} data-testid="share-url" onFocus={(e) => e.target.select()} />
            <button type="button" className="button" onClick={() => void copy()}>
              <Copy aria-hidden="true" size={14} /> {copied ? t.shareCopied : t.shareCopy}
            </button>
          </div>
        </div>
      ) : null}
      {error ? <RefusalNotice refusal={error} onDismiss={() => setError(undefined)} /> : null}
      {links === undefined ? (
        error ? null : <p className="share-empty">{t.shareLoading}</p>
      ) : links.length === 0 ? (
        <p className="share-empty" data-testid="share-none">
          {t.shareNone}
        </p>
      ) : (
        <ul className="share-list" data-testid="share-list">
          {links.map((l) => (
            <li key={l.id} className="share-item" data-share-id={l.id}>
              <span className="share-when">{t.shareCreatedAt(when(l.createdAt))}</span>
              <button type="button" className="button share-revoke" disabled={busy} onClick={() => void revoke(l.id)}>
                {t.shareRevoke}
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

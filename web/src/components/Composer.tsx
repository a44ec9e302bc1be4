import { ArrowUp, Cpu, Navigation, Paperclip, Square, X } from 'lucide-react';
import { useLayoutEffect, useRef, useState, type FormEvent, type KeyboardEvent, type RefObject } from 'react';
import { useCatalog } from '../i18n/catalog';
import type { ModelInfo } from '../protocol/api';

/** The largest attachment the server takes (32 MiB), and how many per message. */
export const MAX_ATTACHMENT_BYTES = 32 * 1024 * 1024;
export const MAX_ATTACHMENTS = 16;

export interface ComposerProps {
  disabled?: boolean;
  /** A turn is running: the composer also offers to steer it. */
  running?: boolean;
  draft: string;
  setDraft: (text: string) => void;
  onSend: (text: string, files: File[]) => void;
  onSteer?: (text: string) => void;
  /** A turn is running and can be stopped. */
  onStop?: () => void;
  /** The server's models; the picker shows when there are any. */
  models?: ModelInfo[];
  /** The model the next send runs on (a ModelInfo name). */
  model?: string;
  onModel?: (name: string) => void;
  /** The text area, for a caller that puts text in and focuses it (a suggestion, a refused message taken back). */
  boxRef?: RefObject<HTMLTextAreaElement | null>;
}

/**
 * ModelPicker is a native select: keyboard users get the platform's own
 * behaviour (arrows, type-ahead, Enter) and screen readers its role.
 */
export function ModelPicker({ models, model, onModel, disabled }: { models: ModelInfo[]; model?: string; onModel?: (name: string) => void; disabled?: boolean }) {
  const t = useCatalog();
  const current = model ?? models.find((m) => m.default)?.name ?? models[0]?.name ?? '';
  // On a narrow screen the select shrinks to its icon (styles: .model-control);
  // it stays the native control, so keyboard and screen reader use are unchanged.
  return (
    <span className="model-control">
      <Cpu aria-hidden="true" size={16} className="model-icon" />
      <select className="model-picker" aria-label={t.model} title={t.modelHint} value={current} disabled={disabled || !onModel} onChange={(e) => onModel?.(e.target.value)}>
        {models.map((m) => (
          <option key={m.name} value={m.name}>
            {m.provider} · {m.model}
            {m.default ? ` (${t.defaultModel})` : ''}
          </option>
        ))}
      </select>
    </span>
  );
}

function size(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * Composer is the message input with attachments. Enter sends; Shift+Enter
 * starts a new line. Files over the size limit are refused with a note and
 * never attached; attached files show as chips until sent or removed.
 */
export function Composer({ disabled, running, draft, setDraft, onSend, onSteer, onStop, models, model, onModel, boxRef }: ComposerProps) {
  const t = useCatalog();
  const [files, setFiles] = useState<File[]>([]);
  const [note, setNote] = useState('');
  const input = useRef<HTMLInputElement>(null);
  const own = useRef<HTMLTextAreaElement>(null);
  const box = boxRef ?? own;
  // The text area grows with its text, up to the stylesheet's max-height.
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    el.style.height = 'auto';
    el.style.height = `${el.scrollHeight + 2}px`;
  }, [draft, box]);
  const send = () => {
    const text = draft.trim();
    if ((text === '' && files.length === 0) || disabled) return;
    onSend(text, files);
    setFiles([]);
    setNote('');
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
  const attach = (list: FileList | null) => {
    if (!list) return;
    const ok: File[] = [];
    const refused: string[] = [];
    for (const f of Array.from(list)) {
      if (f.size > MAX_ATTACHMENT_BYTES || files.length + ok.length >= MAX_ATTACHMENTS) refused.push(f.name);
      else ok.push(f);
    }
    setFiles([...files, ...ok]);
    setNote(refused.length ? t.notAttached(size(MAX_ATTACHMENT_BYTES), MAX_ATTACHMENTS, refused.join(', ')) : '');
    if (input.current) input.current.value = '';
  };
  return (
    <form className="composer" onSubmit={onSubmit}>
      {files.length > 0 || note ? (
        <div className="attachments">
          {files.map((f, i) => (
            <span key={`${f.name}-${i}`} className="chip" data-testid="attachment-chip">
              {f.name} · {size(f.size)}
              <button type="button" aria-label={t.remove(f.name)} onClick={() => setFiles(files.filter((_, k) => k !== i))}>
                <X aria-hidden="true" size={12} />
              </button>
            </span>
          ))}
          {note ? <span className="attach-note" role="note">{note}</span> : null}
        </div>
      ) : null}
      <div className="composer-box">
        <textarea
          ref={box}
          className="composer-input"
          aria-label={t.message}
          placeholder={t.messagePlaceholder}
          rows={1}
          value={draft}
          disabled={disabled}
          onChange={(e) => setDraft(e.target.value)}
          onKeyDown={onKeyDown}
        />
        <div className="composer-row">
          <label className="icon-button attach-button" title={t.attachFiles}>
            <input ref={input} type="file" multiple hidden disabled={disabled} onChange={(e) => attach(e.target.files)} aria-label={t.attachFiles} />
            <Paperclip aria-hidden="true" size={18} />
          </label>
          {models && models.length > 0 ? <ModelPicker models={models} model={model} onModel={onModel} disabled={disabled} /> : null}
          <span className="composer-spacer" />
          {running && onSteer ? (
            <button type="button" className="button steer-button" disabled={disabled || draft.trim() === ''} onClick={() => onSteer(draft.trim())}>
              <Navigation aria-hidden="true" size={14} />
              {t.steer}
            </button>
          ) : null}
          {onStop ? (
            <button type="button" className="button stop-button" onClick={onStop}>
              <Square aria-hidden="true" size={12} fill="currentColor" />
              {t.stop}
            </button>
          ) : null}
          <button type="submit" className="send-button" aria-label={t.send} title={t.send} disabled={disabled || (draft.trim() === '' && files.length === 0)}>
            <ArrowUp aria-hidden="true" size={18} />
          </button>
        </div>
      </div>
    </form>
  );
}

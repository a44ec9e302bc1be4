import { createContext, useContext, useRef, useState } from 'react';
import { useCatalog } from '../i18n/catalog';
import type { ArtifactRange } from '../protocol/api';

/** How much one read asks for: the server's range limit (64 KiB). */
export const ARTIFACT_CHUNK = 64 * 1024;

/**
 * ArtifactReader reads a range of one of the shown conversation's
 * artifacts. The chat pane provides it; without one (a read-only view, a
 * test of the strip alone) the full output is named, not fetched.
 */
export type ArtifactReader = (ref: string, offset: number, length: number) => Promise<ArtifactRange>;
export const ArtifactReaderContext = createContext<ArtifactReader | undefined>(undefined);

interface Artifact {
  ref: string;
  contentType: string;
  committedBytes: number;
  available: boolean;
}

function size(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * ArtifactOutput is a function step's full output: an expander that reads
 * the artifact in bounded ranges, the first 64 KiB when opened and the next
 * on "Load more". Ranges are decoded as one UTF-8 stream, so a character
 * split between two reads is not garbled. The text is rendered as text,
 * never as HTML.
 */
export function ArtifactOutput({ artifact }: { artifact: Artifact }) {
  const t = useCatalog();
  const read = useContext(ArtifactReaderContext);
  const [open, setOpen] = useState(false);
  const [text, setText] = useState('');
  const [loaded, setLoaded] = useState(0);
  const [total, setTotal] = useState(artifact.committedBytes);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const decoder = useRef<TextDecoder | undefined>(undefined);

  if (!read || !artifact.available) {
    return (
      <div className="step-full-output" data-ref={artifact.ref}>
        Full output: {size(artifact.committedBytes)}
        {artifact.available ? '' : ', not available'}
      </div>
    );
  }
  const more = async (offset: number) => {
    if (busy) return;
    setBusy(true);
    setError('');
    try {
      const r = await read(artifact.ref, offset, ARTIFACT_CHUNK);
      decoder.current ??= new TextDecoder('utf-8');
      const end = r.offset + r.bytes.length;
      const chunk = decoder.current.decode(r.bytes, { stream: end < r.total });
      setText((t) => t + chunk);
      setLoaded(end);
      setTotal(r.total);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  const toggle = () => {
    if (!open && loaded === 0) void more(0);
    setOpen(!open);
  };
  return (
    <div className="step-full-output" data-ref={artifact.ref}>
      <button type="button" className="link-button artifact-toggle" aria-expanded={open} onClick={toggle}>
        {t.fullOutput(size(total))}
      </button>
      {open ? (
        <div className="artifact-body">
          {loaded > 0 ? <pre className="artifact-text">{text}</pre> : null}
          {busy ? <span className="artifact-status">{t.loading}</span> : null}
          {error ? (
            <span className="artifact-status artifact-error" role="alert">
              {t.couldNotLoad(error)}
            </span>
          ) : null}
          {!busy && (error || (loaded > 0 && loaded < total)) ? (
            <button type="button" className="link-button artifact-more" onClick={() => void more(loaded)}>
              {error ? t.tryAgain : t.loadMore(size(loaded), size(total))}
            </button>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

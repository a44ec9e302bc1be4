// The folio.mcp.progress presenter: an MCP tool call (package mcp). While
// the call runs the payload is its latest progress, which each update
// replaces; at the end it lists the result's content blocks. Images are
// artifacts: they are read through the pane's artifact reader in bounded
// ranges and shown from a data: URL (the page's CSP allows no other
// source), and only for raster types. Resource links are links only when
// they are http(s). The terminal adapter is tui/mcp.go.
import { useContext, useEffect, useState } from 'react';
import type { ReactNode } from 'react';
import { useCatalog, type Catalog } from '../i18n/catalog';
import { ARTIFACT_CHUNK, ArtifactReaderContext } from './ArtifactOutput';
import '../styles/mcp.css';

const str = (v: unknown, max = 4000): string => (typeof v === 'string' ? v.slice(0, max) : '');
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

function size(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** MCP_BLOCKS bounds the blocks shown; the payload is bounded by the host too. */
const MCP_BLOCKS = 64;
/** MCP_IMAGE_MAX is the largest image read back for display. */
const MCP_IMAGE_MAX = 4 * 1024 * 1024;
const RASTER = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

function McpImage({ artifactRef, contentType, bytes }: { artifactRef: string; contentType: string; bytes: number }) {
  const t = useCatalog();
  const read = useContext(ArtifactReaderContext);
  const [url, setUrl] = useState('');
  const [error, setError] = useState('');
  const shown = read && artifactRef && RASTER.has(contentType) && bytes > 0 && bytes <= MCP_IMAGE_MAX;
  useEffect(() => {
    if (!shown) return;
    let live = true;
    (async () => {
      const parts: Uint8Array[] = [];
      let off = 0;
      while (off < bytes) {
        const r = await read(artifactRef, off, Math.min(ARTIFACT_CHUNK, bytes - off));
        parts.push(r.bytes);
        off = r.offset + r.bytes.length;
        if (r.bytes.length === 0) break;
      }
      let bin = '';
      for (const p of parts) for (const c of p) bin += String.fromCharCode(c);
      if (live) setUrl(`data:${contentType};base64,${btoa(bin)}`);
    })().catch((e: unknown) => live && setError(e instanceof Error ? e.message : String(e)));
    return () => {
      live = false;
    };
  }, [shown, read, artifactRef, contentType, bytes]);
  return (
    <figure className="presentation-mcp-image" data-ref={artifactRef || undefined}>
      {url ? <img src={url} alt={t.mcpImageAlt(contentType)} /> : null}
      <figcaption>
        {t.mcpImage} {contentType} · {size(bytes)}
        {error ? t.mcpCouldNotLoad(error) : ''}
      </figcaption>
    </figure>
  );
}

function block(b: Record<string, unknown>, i: number, t: Catalog): ReactNode {
  const type = str(b.type, 40);
  switch (type) {
    case 'text':
      return (
        <div key={i} className="presentation-mcp-text">
          <pre>{str(b.text, 64 * 1024)}</pre>
          {b.truncated === true ? (
            <span className="presentation-mcp-note">
              {t.mcpInAll(size(num(b.bytes)))}
              {str(b.ref, 64) ? t.mcpKeptAsArtifact : ''}
            </span>
          ) : null}
        </div>
      );
    case 'image':
      return <McpImage key={i} artifactRef={str(b.ref, 64)} contentType={str(b.contentType, 100)} bytes={num(b.bytes)} />;
    case 'audio':
    case 'resource':
      return (
        <div key={i} className="presentation-mcp-binary">
          {type} {str(b.contentType, 100)} {str(b.uri, 1024)} · {size(num(b.bytes))}
        </div>
      );
    case 'resource_link': {
      const uri = str(b.uri, 1024);
      const name = str(b.title, 1024) || str(b.name, 1024) || uri;
      return (
        <div key={i} className="presentation-mcp-link">
          ↗ {/^https?:\/\//.test(uri) ? <a href={uri} target="_blank" rel="noopener noreferrer">{name}</a> : <span>{name}</span>}{' '}
          {name !== uri ? <span className="presentation-mcp-uri">{uri}</span> : null}
        </div>
      );
    }
  }
  return null;
}

/** mcpProgress is the folio.mcp.progress v1 adapter; presenters.tsx registers it. */
export function mcpProgress(p: Record<string, unknown>, t: Catalog): ReactNode {
  const status = str(p.status, 20);
  const total = num(p.total);
  const progress = num(p.progress);
  const blocks = (Array.isArray(p.content) ? p.content : [])
    .slice(0, MCP_BLOCKS)
    .filter((b): b is Record<string, unknown> => typeof b === 'object' && b !== null && !Array.isArray(b));
  const omitted = num(p.omitted);
  return (
    <div className="presentation-mcp" data-status={status}>
      <span className="presentation-mcp-head">
        {str(p.server, 64)} · {str(p.tool, 128)} · {status}
      </span>
      {status === 'running' && (num(p.updates) > 0 || total > 0) ? (
        <div className="presentation-mcp-progress">
          {total > 0 ? <progress value={Math.min(progress, total)} max={total} /> : null}
          <span className="presentation-mcp-count">{total > 0 ? `${progress}/${total}` : `${progress}`}</span>{' '}
          <span className="presentation-mcp-message">{str(p.message, 512)}</span>
        </div>
      ) : status !== 'running' && blocks.length === 0 && str(p.message, 512) ? (
        <div className="presentation-mcp-message">{str(p.message, 512)}</div>
      ) : null}
      {blocks.map((b, i) => block(b, i, t))}
      {omitted > 0 ? <div className="presentation-mcp-note">{t.mcpMoreBlocks(omitted)}</div> : null}
    </div>
  );
}

// Live tool presentations: an adapter per schema and version turns a bounded
// payload into a view. A schema (or version) this build does not know gets a
// bounded metadata line instead: never the raw payload.
import type { ReactNode } from 'react';
import type { Presentation } from '../chat/types';

type Adapter = (payload: Record<string, unknown>) => ReactNode;

const registry = new Map<string, Adapter>();

/** registerPresenter adds the adapter for schema at version. */
export function registerPresenter(schema: string, version: number, adapter: Adapter): void {
  registry.set(`${schema}@${version}`, adapter);
}

const str = (v: unknown, max = 4000): string => (typeof v === 'string' ? v.slice(0, max) : '');

registerPresenter('folio.shell/terminal', 1, (p) => <pre className="presentation-terminal">{str(p.screen)}</pre>);
registerPresenter('folio.files/diff', 1, (p) => (
  <span className="presentation-diff">
    {str(p.path, 300)} · {typeof p.hunks === 'number' ? p.hunks : '?'} hunks
  </span>
));

/** Presentation shows a tool's current presentation through its adapter. */
export function PresentationView({ presentation }: { presentation: Presentation }) {
  const adapter = registry.get(`${presentation.schema}@${presentation.version}`);
  const payload = typeof presentation.payload === 'object' && presentation.payload !== null ? (presentation.payload as Record<string, unknown>) : {};
  if (adapter) return <div className="presentation" data-schema={presentation.schema}>{adapter(payload)}</div>;
  const a = presentation.artifact;
  return (
    <div className="presentation presentation-fallback" data-schema={presentation.schema}>
      {str(presentation.schema, 120)} v{presentation.version} · revision {presentation.revision}
      {a ? ` · ${a.committedBytes} bytes of ${str(a.contentType, 80)}` : ''}
    </div>
  );
}

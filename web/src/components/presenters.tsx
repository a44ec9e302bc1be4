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

// The built-in tools' schemas (tools/tools.go; the terminal's adapters in
// tui/adapters.go read the same payloads).
registerPresenter('folio.shell', 1, (p) => (
  <>
    <pre className="presentation-terminal">
      {str(p.command, 300) ? `$ ${str(p.command, 300)}\n` : ''}
      {str(p.output)}
    </pre>
    {typeof p.exitCode === 'number' ? <span className="presentation-exit">exit {p.exitCode}</span> : null}
  </>
));
registerPresenter('folio.diff', 1, (p) => (
  <div className="presentation-diff">
    <div className="presentation-path">{str(p.path, 300)}</div>
    <pre>
      {str(p.diff)
        .split('\n')
        .map((line, i) => (
          <span key={i} className={line.startsWith('+') ? 'diff-add' : line.startsWith('-') ? 'diff-del' : undefined}>
            {line}
            {'\n'}
          </span>
        ))}
    </pre>
  </div>
));
registerPresenter('folio.task', 1, (p) => (
  <span className="presentation-task">
    Sub-agent: {str(p.label, 200)} · {str(p.status, 40)}
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

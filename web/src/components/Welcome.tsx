import { Sparkles } from 'lucide-react';
import { useCatalog } from '../i18n/catalog';
import type { ModelInfo, Workspace } from '../protocol/api';

/**
 * Welcome is a new chat's first screen, as the terminal's: what this is, the
 * model the first turn asks, the folder the tools work in and the data
 * folder, a hint when the model is the offline demo, and a few suggestions
 * (a click puts one in the composer).
 */
export function Welcome({ model, workspace, onSuggest }: { model?: ModelInfo; workspace?: Workspace; onSuggest: (text: string) => void }) {
  const t = useCatalog();
  return (
    <section className="welcome" data-testid="welcome" aria-label={t.welcomeTitle}>
      <h2 className="welcome-title">
        <Sparkles aria-hidden="true" size={18} />
        {t.welcomeTitle} <span className="welcome-tagline">· {t.welcomeTagline}</span>
      </h2>
      <dl className="welcome-facts">
        {model ? (
          <>
            <dt>{t.model}</dt>
            <dd data-testid="welcome-model">
              {model.provider} · {model.model}
            </dd>
          </>
        ) : null}
        {workspace?.folder ? (
          <>
            <dt>{t.welcomeFolder}</dt>
            <dd data-testid="welcome-folder">{workspace.folder}</dd>
          </>
        ) : null}
        {workspace?.data ? (
          <>
            <dt>{t.welcomeData}</dt>
            <dd>{workspace.data}</dd>
          </>
        ) : null}
      </dl>
      {workspace?.demo ? (
        <p className="welcome-demo" role="note" data-testid="demo-hint">
          {t.demoHint}
        </p>
      ) : null}
      <div className="welcome-suggestions" role="group" aria-label={t.suggestionsLabel}>
        {t.suggestions.map((s) => (
          <button key={s} type="button" className="button suggestion" onClick={() => onSuggest(s)}>
            {s}
          </button>
        ))}
      </div>
    </section>
  );
}

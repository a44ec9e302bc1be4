import { useContext } from 'react';
import type { Failure } from '../chat/types';
import { catalogs, failureHeadline, LocaleContext } from '../i18n/catalog';

/**
 * FailureNotice is the one notice after a failed reply's content: a localized
 * headline, and the technical details behind a disclosure. Details are React
 * text, so markup in them is shown, never parsed.
 */
export function FailureNotice({ failure }: { failure: Failure }) {
  const locale = useContext(LocaleContext);
  return (
    <div className="failure-notice" data-reason={failure.reason}>
      <p className="failure-headline">{failureHeadline(failure.reason, locale)}</p>
      {failure.detail ? (
        <details className="failure-details">
          <summary>{catalogs[locale].details}</summary>
          <pre className="failure-detail-text">{failure.detail}</pre>
        </details>
      ) : null}
    </div>
  );
}

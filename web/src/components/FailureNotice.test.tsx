import { fireEvent, render } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { FAILURE_REASONS } from '../chat/types';
import { catalogs, failureHeadline, LocaleContext, pickLocale, type Locale } from '../i18n/catalog';
import { FailureNotice } from './FailureNotice';

describe('the failure catalog', () => {
  it.each(Object.keys(catalogs) as Locale[])('has a headline for every reason in %s', (locale) => {
    for (const reason of FAILURE_REASONS) {
      expect(failureHeadline(reason, locale)).not.toBe('');
      expect(failureHeadline(reason, locale)).not.toBe(catalogs[locale].failureUnknown);
    }
  });

  it('translates every headline', () => {
    for (const reason of FAILURE_REASONS) {
      expect(failureHeadline(reason, 'de')).not.toBe(failureHeadline(reason, 'en'));
    }
  });

  it('falls back to a generic headline for an unknown reason', () => {
    expect(failureHeadline('quota_v9', 'en')).toBe('The reply failed');
    expect(failureHeadline('toString', 'de')).toBe('Die Antwort ist fehlgeschlagen');
  });

  it('picks the first supported locale, else English', () => {
    expect(pickLocale(['de-AT', 'en'])).toBe('de');
    expect(pickLocale(['fr-FR', 'en-GB'])).toBe('en');
    expect(pickLocale([])).toBe('en');
  });
});

describe('FailureNotice', () => {
  it('shows a localized headline', () => {
    const { container } = render(
      <LocaleContext.Provider value="de">
        <FailureNotice failure={{ reason: 'rate_limit' }} />
      </LocaleContext.Provider>,
    );
    expect(container.querySelector('.failure-headline')?.textContent).toBe('Das Ratenlimit des Anbieters ist erreicht');
    expect(container.querySelector('details')).toBeNull();
  });

  it('expands details as plain text, never HTML', () => {
    const detail = 'status 502\n<img src=x onerror="alert(1)"><b>bold?</b>';
    const { container, getByText } = render(<FailureNotice failure={{ reason: 'provider', detail }} />);
    const details = container.querySelector('details')!;
    expect(details.open).toBe(false);
    fireEvent.click(getByText('Details'));
    expect(details.open).toBe(true);
    expect(container.querySelector('img, b')).toBeNull();
    expect(container.querySelector('.failure-detail-text')?.textContent).toBe(detail);
  });
});

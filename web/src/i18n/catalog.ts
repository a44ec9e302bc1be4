// The message catalog: every string the chat shows about a reply's state, in
// English and German. Adding a locale means adding one Catalog value; the type
// makes a missing key a compile error.
import { createContext, useContext } from 'react';
import type { FailureReason } from '../chat/types';

export interface Catalog {
  /** One concise headline per failure reason. */
  failure: Record<FailureReason, string>;
  /** The headline for a reason this build does not know. */
  failureUnknown: string;
  details: string;
  thinking: string;
}

export const catalogs = {
  en: {
    failure: {
      rate_limit: 'The provider’s rate limit was reached',
      auth: 'The provider did not accept the credentials',
      authz: 'Not permitted to use this model',
      context: 'The conversation is too long for this model',
      policy: 'The provider declined this request',
      provider: 'The provider reported an error',
      transport: 'Could not reach the provider',
      timeout: 'The provider took too long to answer',
      cancelled: 'The provider cancelled the reply',
    },
    failureUnknown: 'The reply failed',
    details: 'Details',
    thinking: 'thinking…',
  },
  de: {
    failure: {
      rate_limit: 'Das Ratenlimit des Anbieters ist erreicht',
      auth: 'Der Anbieter hat die Zugangsdaten nicht akzeptiert',
      authz: 'Keine Berechtigung für dieses Modell',
      context: 'Die Unterhaltung ist zu lang für dieses Modell',
      policy: 'Der Anbieter hat die Anfrage abgelehnt',
      provider: 'Der Anbieter hat einen Fehler gemeldet',
      transport: 'Der Anbieter war nicht erreichbar',
      timeout: 'Der Anbieter hat zu lange nicht geantwortet',
      cancelled: 'Der Anbieter hat die Antwort abgebrochen',
    },
    failureUnknown: 'Die Antwort ist fehlgeschlagen',
    details: 'Details',
    thinking: 'denkt nach…',
  },
} satisfies Record<string, Catalog>;

export type Locale = keyof typeof catalogs;

/** pickLocale returns the first supported locale among the user's preferences, else English. */
export function pickLocale(preferred: readonly string[]): Locale {
  for (const tag of preferred) {
    const lang = tag.toLowerCase().split('-')[0];
    if (lang && lang in catalogs) return lang as Locale;
  }
  return 'en';
}

/** failureHeadline returns the localized headline for a failure reason. */
export function failureHeadline(reason: string, locale: Locale): string {
  const c: Catalog = catalogs[locale];
  return Object.hasOwn(c.failure, reason) ? c.failure[reason as FailureReason] : c.failureUnknown;
}

export const LocaleContext = createContext<Locale>('en');

/** useCatalog returns the catalog of the locale in context. */
export function useCatalog(): Catalog {
  return catalogs[useContext(LocaleContext)];
}

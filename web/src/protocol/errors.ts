// The error codes of docs/protocol.md ("Error codes"), and the few other
// refusal codes the protocol names elsewhere (`busy` for an edit while a
// turn runs). Every one has a sentence in the message catalog
// (Catalog.refusal), so no refusal is ever silent; a Vitest test checks this
// list against the document.

export const ERROR_CODES = [
  'bad-request',
  'unknown-type',
  'too-large',
  'too-many',
  'protocol-version',
  'hello-required',
  'unauthorized',
  'host-not-allowed',
  'origin-not-allowed',
  'unsupported-media-type',
  'token-required',
  'peer-not-allowed',
  'sign-in-required',
  'csrf',
  'forbidden',
  'unavailable',
  'read-only',
  'invalid-id',
  'not-found',
  'locked',
  'token-unknown',
  'token-expired',
  'token-scope',
  'token-stale',
  'bad-anchor',
  'bad-direction',
  'bad-budget',
  'command-conflict',
  'stop-conflict',
  'not-running',
  'engine-unavailable',
  'cancelled',
  'unsupported',
  'bad-range',
  'unknown-model',
  'store-unavailable',
  'internal',
  'bad-query',
  'search-timeout',
  'busy',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** isErrorCode says whether code is one the catalog has a sentence for. */
export function isErrorCode(code: string | undefined): code is ErrorCode {
  return code !== undefined && (ERROR_CODES as readonly string[]).includes(code);
}

/** Refusal is a command or request the server (or the browser) refused: its code and the server's own words. */
export interface Refusal {
  code: string;
  /** The server's message or reason, shown as details (plain text). */
  reason?: string;
}

// The ?at={entryId} part of a conversation's URL: /c/{id}?at={entry} opens
// the conversation with its window around that entry (a search hit), a link
// that can be shared and reloaded.

/** atFromSearch is the entry a location's query names, if any. */
export function atFromSearch(search: string): string | undefined {
  const at = new URLSearchParams(search).get('at');
  return at ? at : undefined;
}

/** withAt is a location's query with at set to entry (or removed when undefined). */
export function withAt(search: string, entry: string | undefined): string {
  const p = new URLSearchParams(search);
  if (entry) p.set('at', entry);
  else p.delete('at');
  const s = p.toString();
  return s ? `?${s}` : '';
}

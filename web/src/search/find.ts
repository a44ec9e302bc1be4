// Find inside one conversation: the query (?q= beside ?at= in the
// conversation's URL), its hits newest first as GET /api/v2/search with
// order=newest answers them, and the step from the hit shown to the next.

/** findFromSearch is the find query a location's query names, if any. */
export function findFromSearch(search: string): string | undefined {
  const q = new URLSearchParams(search).get('q');
  return q ? q : undefined;
}

/**
 * withFind is a location's query with at and q set (or removed when
 * undefined), so /c/{id}?at={entry}&q={query} can be reloaded and shared.
 */
export function withFind(search: string, at: string | undefined, q: string | undefined): string {
  const p = new URLSearchParams(search);
  if (at) p.set('at', at);
  else p.delete('at');
  if (q) p.set('q', q);
  else p.delete('q');
  const s = p.toString();
  return s ? `?${s}` : '';
}

// The filter names the search language reads as a conversation filter
// (search/query.go).
const convFilter = /^-?(conversation|conv|in):/i;

/**
 * inConversation is query narrowed to conversation id: any conversation
 * filter the person wrote (a search over every conversation may have one)
 * gives way to this one. Quoted phrases are kept whole.
 */
export function inConversation(query: string, id: string): string {
  const parts = query.match(/"[^"]*"?|\S+/g) ?? [];
  const kept = parts.filter((p) => !convFilter.test(p));
  kept.push(`conversation:${id}`);
  return kept.join(' ');
}

/** FindState is what a find found and which hit the window shows. */
export interface FindState {
  /** The hits' entries, newest first. */
  hits: readonly string[];
  /** Older hits were left out (the answer was cut at its limit). */
  more: boolean;
}

/** position is the shown hit's index in hits, or -1 when it is not one of them. */
export function position(s: FindState, at: string | undefined): number {
  return at === undefined ? -1 : s.hits.indexOf(at);
}

/**
 * step is the hit dir away from the one shown: 1 the next older, -1 the
 * next newer; undefined at either end. From no hit (or one the list does
 * not hold), older starts at the newest and newer at the oldest.
 */
export function step(s: FindState, at: string | undefined, dir: 1 | -1): string | undefined {
  if (s.hits.length === 0) return undefined;
  const i = position(s, at);
  if (i < 0) return dir === 1 ? s.hits[0] : s.hits[s.hits.length - 1];
  return s.hits[i + dir];
}

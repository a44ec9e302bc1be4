// Find inside one conversation: the query (kept in the history entry), its hits newest first as GET /api/v2/search with
// order=newest answers them, and the step from the hit shown to the next.

/**
 * findFromState is the find query a history entry keeps (history.state's
 * find), so a reload or back and forward come back to the same find; the
 * URL stays /c/{id}?at={entry}, the link a hit is shared by.
 */
export function findFromState(state: unknown): string | undefined {
  const f = (state as { find?: unknown } | null)?.find;
  return typeof f === 'string' ? f : undefined;
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

import { HttpError } from '../protocol/api';
import type { SearchAnswer } from '../protocol/frames';

/**
 * searchConversations asks the server's GET /api/v2/search. A malformed
 * query is an HttpError whose code is bad-query and whose message says what
 * is wrong.
 */
export async function searchConversations(q: string, opts: { token?: string; limit?: number; signal?: AbortSignal; base?: string; order?: 'rank' | 'newest' } = {}): Promise<SearchAnswer> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
  const url = `${opts.base ?? '/api/v2'}/search?q=${encodeURIComponent(q)}&limit=${opts.limit ?? 30}${opts.order ? `&order=${opts.order}` : ''}`;
  const r = await fetch(url, { headers, signal: opts.signal });
  if (!r.ok) {
    let code = 'http';
    let message = r.statusText;
    try {
      const e = (await r.json()) as { error?: { code?: string; message?: string } };
      code = e.error?.code ?? code;
      message = e.error?.message ?? message;
    } catch {
      /* not JSON */
    }
    throw new HttpError(r.status, code, message);
  }
  return (await r.json()) as SearchAnswer;
}

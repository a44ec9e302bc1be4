// The protocol's plain HTTP resources: the conversation list, create, rename,
// delete, attachment upload, the graph (requested only while its view is
// open), the model list and bounded reads of artifacts. Every path is under
// /api/v2/.
import type { ConversationMeta } from '../chat/types';
import { csrfToken } from './token';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export interface Api {
  list(): Promise<ConversationMeta[]>;
  create(title?: string): Promise<ConversationMeta>;
  rename(id: string, title: string): Promise<ConversationMeta>;
  remove(id: string): Promise<void>;
  upload(id: string, file: File): Promise<{ id: string; name: string; size: number }>;
  graph(id: string): Promise<Graph>;
  /** One conversation's metadata with its branches and alternatives (never the graph). */
  meta?(id: string): Promise<WireMeta>;
  /** The server's models and, for a conversation, the one its next turn runs on. */
  models(conversation?: string): Promise<ModelList>;
  /** What a new chat's first screen shows: the tools' folder, the data folder, whether the model is the demo. */
  workspace?(): Promise<Workspace>;
  /** A bounded range (at most 64 KiB) of an artifact an entry of the conversation refers to. */
  artifact(conversation: string, ref: string, offset: number, length: number): Promise<ArtifactRange>;
  /** The conversation's read-only share links (accounts only; the owner's). */
  shares?(conversation: string): Promise<ShareLink[]>;
  /** A new read-only link; its path (/s/<token>) is answered this once. */
  createShare?(conversation: string): Promise<ShareLink & { path: string }>;
  /** Revoke one link: it is not-found at once. */
  revokeShare?(conversation: string, share: string): Promise<void>;
}

/** One share link as GET …/shares lists it (never its token). */
export interface ShareLink {
  id: string;
  conversation: string;
  createdBy?: string;
  createdAt?: string;
}

/** One range of an artifact: its bytes, where they start and the artifact's committed size. */
export interface ArtifactRange {
  bytes: Uint8Array;
  offset: number;
  total: number;
  final: boolean;
}

/** One model a send may name (never a key or URL). */
export interface ModelInfo {
  name: string;
  provider: string;
  model: string;
  default: boolean;
}

/** GET /api/v2/workspace. */
export interface Workspace {
  folder: string;
  data: string;
  demo: boolean;
}

export interface ModelList {
  models: ModelInfo[];
  current?: string;
}

export interface Graph {
  id: string;
  head: string;
  branches: { head: string; label: string; forkedFrom?: string; after?: string; createdAt?: string }[];
  compactions: { entryId: string; fromId: string; toId: string }[];
  links: { from: string; kind: string; conversation: string }[];
}

export interface WireMeta {
  id: string;
  title?: string;
  updatedAt?: string;
  startedAt?: string;
  head?: string;
  branches?: { head: string; label: string; forkedFrom?: string; after?: string; createdAt?: string }[];
  alternatives?: { entryId: string; heads: string[]; index: number }[];
}

// A conversation without a title yet (just created, its first turn not
// titled) has title "": the app shows "New chat", never the raw ID.
function meta(m: WireMeta): ConversationMeta {
  return { id: m.id, title: m.title ?? '', updated: m.updatedAt ?? m.startedAt ?? '' };
}

export function httpApi(token?: string, base = '/api/v2', share?: string): Api {
  const call = async (method: string, path: string, body?: BodyInit, type = 'application/json') => {
    const headers: Record<string, string> = {};
    if (token) headers.Authorization = `Bearer ${token}`;
    if (share) headers['X-Folio-Share'] = share;
    const csrf = method === 'GET' ? undefined : csrfToken();
    if (csrf) headers['X-CSRF-Token'] = csrf;
    if (body !== undefined) headers['Content-Type'] = type;
    const r = await fetch(`${base}${path}`, { method, headers, body });
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
    return r.status === 204 ? undefined : ((await r.json()) as unknown);
  };
  const enc = encodeURIComponent;
  return {
    list: async () => ((await call('GET', '/conversations')) as { conversations: WireMeta[] }).conversations.map(meta),
    create: async (title) => meta((await call('POST', '/conversations', JSON.stringify(title ? { title } : {}))) as WireMeta),
    rename: async (id, title) => meta((await call('PATCH', `/conversations/${enc(id)}`, JSON.stringify({ title }))) as WireMeta),
    remove: async (id) => {
      await call('DELETE', `/conversations/${enc(id)}`);
    },
    upload: async (id, file) =>
      ((await call('POST', `/conversations/${enc(id)}/attachments?name=${enc(file.name)}`, file, file.type || 'application/octet-stream')) as {
        attachment: { id: string; name: string; size: number };
      }).attachment,
    graph: async (id) => (await call('GET', `/conversations/${enc(id)}/graph`)) as Graph,
    meta: async (id) => (await call('GET', `/conversations/${enc(id)}`)) as WireMeta,
    artifact: async (conversation, ref, offset, length) => {
      const headers: Record<string, string> = {};
      if (token) headers.Authorization = `Bearer ${token}`;
      if (share) headers['X-Folio-Share'] = share;
      const r = await fetch(`${base}/conversations/${enc(conversation)}/artifacts/${enc(ref)}?offset=${offset}&length=${length}`, { headers });
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
      const bytes = new Uint8Array(await r.arrayBuffer());
      return {
        bytes,
        offset: Number(r.headers.get('Folio-Offset') ?? offset),
        total: Number(r.headers.get('Folio-Total') ?? offset + bytes.length),
        final: r.headers.get('Folio-Final') === 'true',
      };
    },
    workspace: async () => (await call('GET', '/workspace')) as Workspace,
    shares: async (id) => ((await call('GET', `/conversations/${enc(id)}/shares`)) as { shares: ShareLink[] | null }).shares ?? [],
    createShare: async (id) => (await call('POST', `/conversations/${enc(id)}/shares`, '{}')) as ShareLink & { path: string },
    revokeShare: async (id, share) => {
      await call('DELETE', `/conversations/${enc(id)}/shares/${enc(share)}`);
    },
    models: async (conversation) => (await call('GET', conversation ? `/models?conversation=${enc(conversation)}` : '/models')) as ModelList,
  };
}

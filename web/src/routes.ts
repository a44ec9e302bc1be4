// The app's URL routes, kept with the History API: the app's root shows a new
// chat, and c/{id} below it shows that conversation. The root is wherever the
// server mounts the app, so paths are built relative to it.

/** appRoot is the app's mount path for a location path: "/" for "/c/abc" or "/". */
export function appRoot(pathname: string): string {
  const i = pathname.lastIndexOf('/c/');
  if (i >= 0) return pathname.slice(0, i + 1);
  return pathname.slice(0, pathname.lastIndexOf('/') + 1) || '/';
}

/** conversationFromPath is the conversation a path names, if it is a c/{id} route. */
export function conversationFromPath(pathname: string): string | undefined {
  const m = /\/c\/([^/]+)\/?$/.exec(pathname);
  if (!m) return undefined;
  try {
    return decodeURIComponent(m[1]!);
  } catch {
    return undefined;
  }
}

/** pathFor is the path that shows conversation id (or a new chat) under root. */
export function pathFor(root: string, id: string | undefined): string {
  return id ? `${root}c/${encodeURIComponent(id)}` : root;
}

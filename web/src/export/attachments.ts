// The attachments an exported file embeds (history/export/attach.go): each
// a <script type="application/json" class="folio-attachment"> with the
// file's name, type, size and bytes as base64, or, for one over the
// export's limits, without its bytes and with the limit it is over.

/** ExportAttachment is one attachment read back. */
export interface ExportAttachment {
  id: string;
  name: string;
  type: string;
  size: number;
  /** A data: address of the bytes: an image's own type for a raster image, else a download's octet stream; none when left out. */
  href?: string;
  /** The file is shown as an image (a raster image type). */
  image: boolean;
  /** Why the bytes were left out: over the limit per file, or over the export's total; with that limit in bytes. */
  omitted?: 'file' | 'total';
  limit?: number;
}

// The types shown inline as <img>: raster images only. An SVG (which can
// hold script) or anything else is offered as a download, never rendered.
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'image/bmp']);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);

/** readAttachment parses one attachment block; a damaged one reads as undefined. */
export function readAttachment(text: string | null | undefined): ExportAttachment | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text ?? '');
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  const type = str(o.type).toLowerCase().split(';')[0]!.trim();
  const a: ExportAttachment = { id: str(o.id), name: str(o.name) || str(o.id) || '?', type, size: num(o.size), image: false };
  const omitted = str(o.omitted);
  if (omitted === 'file' || omitted === 'total') {
    a.omitted = omitted;
    a.limit = num(o.limit);
    return a;
  }
  const data = str(o.data);
  if (!BASE64.test(data) || data.length % 4 !== 0) return undefined;
  a.image = IMAGE_TYPES.has(type);
  a.href = `data:${a.image ? type : 'application/octet-stream'};base64,${data}`;
  return a;
}

/** readAttachments reads every attachment block of the document, in order. */
export function readAttachments(scripts: Iterable<Element>): ExportAttachment[] {
  const out: ExportAttachment[] = [];
  for (const s of scripts) {
    const a = readAttachment(s.textContent);
    if (a) out.push(a);
  }
  return out;
}

/** size says n bytes for a person: bytes, KiB or MiB. */
export function size(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}

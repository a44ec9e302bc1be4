// The export's one rule beyond the web app's sanitizer: an exported file
// opens offline and asks nothing of any server, so markup a message holds
// may not name anything to load. The file's Content-Security-Policy would
// block such a load; this keeps the browser from even trying, and shows an
// image's words instead of a broken image.
import DOMPurify from 'dompurify';

/** Attributes that make a browser load something as soon as the element is in the page. */
const LOADING = ['src', 'srcset', 'poster', 'background', 'data', 'codebase', 'ping', 'lowsrc', 'dynsrc'];

const isData = (v: string) => /^\s*data:/i.test(v);

/**
 * keepOffline removes from el every attribute that would load something
 * from outside the file (a data: URL stays), and the href of every element
 * but a link (an SVG image or use). An image left with nothing to show
 * says what it was.
 */
export function keepOffline(el: Element): void {
  for (const name of LOADING) {
    const v = el.getAttribute(name);
    if (v !== null && (name === 'srcset' || name === 'ping' || !isData(v))) el.removeAttribute(name);
  }
  if (el.localName !== 'a') {
    for (const name of ['href', 'xlink:href']) {
      const v = el.getAttribute(name);
      if (v !== null && !isData(v)) el.removeAttribute(name);
    }
  }
  if (el.localName === 'img' && !el.hasAttribute('src')) {
    el.setAttribute('data-offline', '');
    if (!el.getAttribute('alt')) el.setAttribute('alt', 'image (not in the exported file)');
  }
}

let installed = false;

/** installOffline makes every DOMPurify.sanitize after it apply keepOffline (once per page). */
export function installOffline(): void {
  if (installed) return;
  installed = true;
  DOMPurify.addHook('afterSanitizeAttributes', (node) => {
    if (node.nodeType === 1) keepOffline(node as Element);
  });
}

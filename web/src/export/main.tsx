// The entry of the self-contained HTML export (`folio log export --format
// html`): built on its own (vite.export.config.ts) into one script and one
// stylesheet with KaTeX's fonts inlined, which the Go writer puts into the
// file beside the conversation's pages. It reads only the document it is in.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import 'katex/dist/katex.min.css';
import '../styles/theme.css';
import '../styles/app.css';
import '../styles/loading-mark.css';
import './export.css';
import { LocaleContext, pickLocale } from '../i18n/catalog';
import { readMeta } from './data';
import { readAttachments } from './attachments';
import { installOffline } from './offline';
import { ExportApp, exportWords } from './ExportApp';

const root = document.getElementById('root');
if (root) {
  installOffline();
  const pages = document.querySelectorAll('script.folio-page');
  const meta = readMeta(document.getElementById('folio-meta')?.textContent);
  meta.pages = pages.length;
  const pageText = (i: number) => pages[i]?.textContent ?? null;
  const attachments = readAttachments(document.querySelectorAll('script.folio-attachment'));
  const locale = pickLocale(navigator.languages ?? [navigator.language]);
  document.documentElement.lang = locale;
  document.documentElement.dataset.theme = window.matchMedia?.('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
  createRoot(root).render(
    <StrictMode>
      <LocaleContext.Provider value={locale}>
        <ExportApp meta={meta} pageText={pageText} words={exportWords(locale)} attachments={attachments} />
      </LocaleContext.Provider>
    </StrictMode>,
  );
}

// The self-contained HTML export (`folio log export --format html`) opened
// from a file in Chromium: the XSS corpus (with hostile attachments) runs
// nothing and loads nothing, and a PNG attachment shows from the file;
// every entry `folio log show --json` reads from the CLI's fixture logs is
// in a row of the file; a long conversation shows a bounded window of
// pages that "show earlier" moves back.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { assert, newContext, repo } from './harness.mjs';

function folio(h, args) {
  const r = spawnSync(h.bin, args, { encoding: 'utf8', maxBuffer: 1 << 30, env: { ...process.env, TZ: 'UTC' } });
  if (r.status !== 0) throw new Error(`folio ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

function exportHTML(h, data, id, out) {
  folio(h, ['log', 'export', '--format', 'html', '--data', data, '--out', out, id]);
  return out;
}

/**
 * openFile opens an exported file and records what must not happen: a
 * request other than the file itself, a dialog, a page error, a script
 * that set window.__xss.
 */
async function openFile(file) {
  const context = await newContext();
  const page = await context.newPage();
  const url = pathToFileURL(file).href;
  const requests = [];
  const errors = [];
  let dialogs = 0;
  page.on('request', (r) => r.url() !== url && requests.push(r.url()));
  page.on('dialog', (d) => {
    dialogs++;
    void d.dismiss();
  });
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  page.on('console', (m) => m.type() === 'error' && errors.push(`console error: ${m.text()}`));
  await page.goto(url);
  await page.waitForSelector('[data-testid="export"]');
  return { context, page, requests, errors, dialogs: () => dialogs };
}

/**
 * allRows moves the window back to the first page and returns every row
 * it showed on the way: its entries' IDs, its text, a person's words.
 */
async function allRows(page) {
  const rows = new Map();
  for (;;) {
    const now = await page.$$eval('.row', (els) =>
      els.map((r) => ({ id: r.dataset.rowId, ids: JSON.parse(r.dataset.entryIds ?? '[]'), text: r.textContent ?? '', user: r.querySelector('.user-text')?.textContent })),
    );
    for (const r of now) rows.set(r.id, r);
    const earlier = await page.$('[data-testid="show-earlier"]');
    if (!earlier) return [...rows.values()];
    await earlier.click();
  }
}

const alnum = (s) => s.replace(/[^\p{L}\p{N}]+/gu, '').toLowerCase();

/** The fixture logs the CLI's tests read (internal/cli/logshow_test.go's showCorpus). */
function corpus(dir) {
  const conv = join(dir, 'conversations');
  mkdirSync(conv, { recursive: true });
  const ids = [];
  const add = (src) => {
    const id = `${basename(dirname(src))}-${basename(src, '.jsonl')}`;
    copyFileSync(src, join(conv, `${id}.jsonl`));
    ids.push(id);
  };
  for (const d of ['history/export/testdata/jazz', 'history/testdata']) {
    for (const f of readdirSync(join(repo, d))) if (f.endsWith('.jsonl')) add(join(repo, d, f));
  }
  const eng = join(repo, 'engine/testdata/jazz');
  for (const a of readdirSync(eng)) for (const f of readdirSync(join(eng, a))) if (f.endsWith('.jsonl')) add(join(eng, a, f));
  return ids;
}

export function exportTests(test) {
  test('export: the XSS corpus exported to HTML and opened from a file runs nothing and loads nothing', async (h) => {
    const dir = mkdtempSync(join(tmpdir(), 'folio-export-'));
    // Attachments as the server keeps them: a real 1×1 PNG, an SVG with a
    // script, and an HTML file with a hostile name.
    const att = join(h.data, 'attachments', 'xss');
    mkdirSync(att, { recursive: true });
    const put = (id, name, type, body) => {
      writeFileSync(join(att, id), body);
      writeFileSync(join(att, `${id}.json`), JSON.stringify({ id, name, contentType: type, size: body.length }));
    };
    put('a-png', 'dot.png', 'image/png', Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64'));
    put('a-svg', 'evil.svg', 'image/svg+xml', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="window.__xss=1"><script>window.__xss=2</script></svg>'));
    put('a-html', '<img src=x onerror=window.__xss=3>.html', 'text/html', Buffer.from('<script>window.__xss=4</script>'));
    try {
      const file = exportHTML(h, h.data, 'xss', join(dir, 'xss.html'));
      const { context, page, requests, errors, dialogs } = await openFile(file);
      for (const b of await page.$$('.strip-summary')) await b.click();
      for (const b of await page.$$('.step-head')) await b.click();
      for (const b of await page.$$('.failure-details summary')) await b.click();
      await page.waitForTimeout(300);
      const hit = await page.evaluate(() => window.__xss ?? 0);
      assert(hit === 0 && dialogs() === 0, `script ran: __xss=${hit}, dialogs=${dialogs()}`);
      const bad = await page.$$eval('.message-list *', (els) =>
        els.filter((e) => e.tagName === 'SCRIPT' || e.tagName === 'IFRAME' || [...e.attributes].some((a) => /^on/i.test(a.name) || /javascript:/i.test(a.value))).map((e) => e.outerHTML),
      );
      assert(bad.length === 0, `dangerous markup in the DOM: ${bad.join('\n')}`);
      // The only scripts are the file's own: its pages, its meta and the app.
      const scripts = await page.$$eval('script', (s) => s.map((e) => e.type || 'classic'));
      assert(scripts.filter((t) => t === 'classic').length === 1, `scripts: ${scripts.join(', ')}`);
      assert((await page.textContent('.message-list')).includes('<img src=x onerror'), 'user text lost its literal markup');
      assert((await page.textContent('.export-title')) === 'xss <b>title</b>', 'the title is not shown as text');
      // The attachments: the PNG shown from the file, the rest downloads; no markup of theirs.
      const atts = await page.$$eval('.export-attachment', (els) =>
        els.map((e) => ({ name: e.dataset.attachment, img: e.querySelector('img')?.naturalWidth ?? -1, href: e.querySelector('a[download]')?.getAttribute('href')?.slice(0, 40) ?? '' })),
      );
      const byName = Object.fromEntries(atts.map((a) => [a.name, a]));
      assert(atts.length === 3, `attachments shown: ${JSON.stringify(atts)}`);
      assert(byName['dot.png']?.img === 1 && byName['dot.png'].href.startsWith('data:image/png;base64,'), `the PNG: ${JSON.stringify(byName['dot.png'])}`);
      assert(byName['evil.svg']?.img === -1 && byName['evil.svg'].href.startsWith('data:application/octet-stream;base64,'), `the SVG: ${JSON.stringify(byName['evil.svg'])}`);
      assert(byName['<img src=x onerror=window.__xss=3>.html']?.img === -1, `the hostile name: ${JSON.stringify(atts)}`);
      assert((await page.$$('.export-attachments img')).length === 1, 'an attachment other than the PNG is an image');
      assert(requests.length === 0, `requests attempted: ${requests.join(', ')}`);
      // Anything blocked is blocked by the file's policy, never an error of the app.
      assert(errors.filter((e) => !/Content Security Policy/.test(e)).length === 0, errors.join('\n'));
      await context.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(att, { recursive: true, force: true });
    }
  });

  test('export: the HTML export of the fixture corpus shows every entry folio log show shows', async (h) => {
    const dir = mkdtempSync(join(tmpdir(), 'folio-export-'));
    try {
      const ids = corpus(dir);
      const context = await newContext();
      let checked = 0;
      for (const id of ids) {
        const shown = JSON.parse(folio(h, ['log', 'show', '--json', '--data', dir, id])).entries;
        const file = exportHTML(h, dir, id, join(dir, `${id}.html`));
        const page = await context.newPage();
        const errors = [];
        page.on('pageerror', (e) => errors.push(e.message));
        await page.goto(pathToFileURL(file).href);
        await page.waitForSelector('[data-testid="export"]');
        const rows = await allRows(page);
        const rowOf = new Map();
        for (const r of rows) for (const x of r.ids) rowOf.set(x, r);
        const want = shown.map((e) => e.id);
        const missing = want.filter((x) => !rowOf.has(x));
        assert(missing.length === 0, `${id}: entries not in the file: ${missing.join(', ')}`);
        assert(rowOf.size === new Set(want).size, `${id}: the file shows ${rowOf.size} entries, log show ${want.length}`);
        // Text: a person's words as written, an answer's words as rendered.
        for (const e of shown) {
          const c = e.content;
          const row = rowOf.get(e.id);
          if (c.kind === 'user' && c.text) {
            assert(row.user === c.text, `${id}: ${e.id}: user text ${JSON.stringify(row.user)} != ${JSON.stringify(c.text)}`);
          }
          if (c.kind === 'agent' && alnum(c.markdown ?? '').length > 0) {
            const want = alnum(c.markdown).slice(0, 24);
            assert(alnum(row.text).includes(want), `${id}: ${e.id}: answer text ${JSON.stringify(want)} not shown`);
          }
        }
        assert(errors.length === 0, `${id}: ${errors.join('\n')}`);
        await page.close();
        checked++;
      }
      assert(checked >= 40, `only ${checked} fixture logs`);
      await context.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('export: a long conversation opens at its last page and shows a bounded window of pages', async (h) => {
    const dir = mkdtempSync(join(tmpdir(), 'folio-export-'));
    try {
      for (const id of ['small', 'big']) {
        const t0 = performance.now();
        const file = exportHTML(h, h.data, id, join(dir, `${id}.html`));
        const wrote = performance.now() - t0;
        const { context, page, requests, errors } = await openFile(file);
        const opened = await page.evaluate(() => performance.now());
        const pages = Number(await page.getAttribute('[data-testid="export"]', 'data-pages'));
        assert(pages > 9, `${id}: only ${pages} pages`);
        assert((await page.getAttribute('[data-testid="export"]', 'data-lo')) === String(pages - 1), `${id}: did not open at the last page`);
        const rows0 = await page.$$eval('.row', (r) => r.length);
        // Eight steps back: the window holds the six pages (the web app's MAX_PAGES) it reached.
        for (let i = 0; i < 8; i++) await page.click('[data-testid="show-earlier"]');
        const lo = Number(await page.getAttribute('[data-testid="export"]', 'data-lo'));
        const hi = Number(await page.getAttribute('[data-testid="export"]', 'data-hi'));
        assert(lo === pages - 9 && hi - lo === 6, `${id}: window ${lo}..${hi} of ${pages}`);
        assert(await page.$('[data-testid="show-later"]'), `${id}: no way back to later pages`);
        // The DOM holds the window's rows and no others: as many as its pages have turns.
        const [rows, turns] = await page.evaluate(
          ([lo, hi]) => {
            const pages = [...document.querySelectorAll('script.folio-page')].slice(lo, hi);
            let n = 0;
            for (const p of pages) {
              let prevUser = true;
              for (const e of JSON.parse(p.textContent)) {
                const user = e.content.kind === 'user';
                if (user || prevUser) n++;
                prevUser = user;
              }
            }
            return [document.querySelectorAll('.row').length, n];
          },
          [lo, hi],
        );
        assert(rows === turns && rows > rows0, `${id}: ${rows} rows mounted for the ${turns} turns of 6 pages`);
        await page.click('[data-testid="show-latest"]');
        assert((await page.getAttribute('[data-testid="export"]', 'data-hi')) === String(pages), `${id}: latest did not come back`);
        assert(requests.length === 0, `${id}: requests: ${requests.join(', ')}`);
        assert(errors.length === 0, `${id}: ${errors.join('\n')}`);
        const mb = (statSync(file).size / 1e6).toFixed(1);
        console.log(`     ${id}: ${mb} MB in ${pages} pages; written in ${wrote.toFixed(0)} ms; first rows after ${opened.toFixed(0)} ms`);
        await context.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

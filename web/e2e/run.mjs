// The browser suite: the built app, served by folio's own Go handler on a
// loopback port, driven in Debian's Chromium through playwright-core.
//
// Run with `make web-e2e` (or `node e2e/run.mjs` in web/). It builds and
// starts webui/internal/devserve, which serves the embedded web/dist, so what
// is tested is what the binary ships. Without Chromium the suite is skipped
// with a message, except under CI=true or FOLIO_REQUIRE_SUITES=1, where that is
// a failure. Screenshots go to web/e2e/screenshots/ (not committed).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const web = fileURLToPath(new URL('..', import.meta.url));
const repo = join(web, '..');
const shots = join(web, 'e2e', 'screenshots');
const browserPath = process.env.FOLIO_CHROMIUM || '/usr/bin/chromium';
const truthy = (v) => v !== undefined && v !== '' && v !== '0' && v.toLowerCase() !== 'false';
const required = truthy(process.env.CI) || truthy(process.env.FOLIO_REQUIRE_SUITES);

if (!existsSync(browserPath)) {
  if (required) {
    console.error(`web-e2e: FAIL: ${browserPath} not found, and CI/FOLIO_REQUIRE_SUITES requires the browser suite.`);
    console.error('Install it with: apt-get install -y chromium');
    process.exit(1);
  }
  console.log(`web-e2e: SKIPPED: ${browserPath} not found (apt-get install -y chromium, or set FOLIO_CHROMIUM).`);
  process.exit(0);
}

const scratch = mkdtempSync(join(tmpdir(), 'folio-e2e-'));
let server;
let browser;
// An interrupted run still stops the server it started.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    server?.kill();
    process.exit(1);
  });
}

// startServer builds devserve and waits for the address it prints.
async function startServer() {
  const bin = join(scratch, 'devserve');
  const built = spawnSync('go', ['build', '-o', bin, './webui/internal/devserve'], { cwd: repo, stdio: 'inherit' });
  if (built.status !== 0) throw new Error('building webui/internal/devserve failed');
  server = spawn(bin, ['-addr', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (d) => {
      out += d;
      const m = /serving (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (m) resolve(m[1]);
    });
    server.on('exit', (code) => reject(new Error(`devserve exited with ${code} before listening`)));
  });
}

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

function assert(cond, message) {
  if (!cond) throw new Error(message);
}

// openApp opens the app in a fresh context (fresh storage) and records page
// errors and console errors, CSP violations included; a test fails on any.
async function openApp(url, options = {}) {
  const context = await browser.newContext({ viewport: { width: 1200, height: 800 }, ...options });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console error: ${m.text()}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400) errors.push(`HTTP ${r.status()} for ${r.url()}`);
  });
  await page.goto(url);
  await page.waitForSelector('[data-testid="app"]');
  return { context, page, errors };
}

async function openConversation(page, title) {
  await page.getByRole('button', { name: new RegExp(`^${title}`) }).click();
  await page.waitForFunction((t) => document.querySelector('.chat-title')?.textContent === t, title);
}

const annotations = (page, selector) =>
  page.$$eval(`${selector} .katex-mathml annotation`, (els) => els.map((e) => e.textContent));

test('the app mounts and typesets the fixture math', async (url) => {
  const { context, page, errors } = await openApp(url);
  const reply = '[data-message-id="m-math-a"]';
  await page.waitForSelector(`${reply} .katex`);
  const tex = await annotations(page, reply);
  for (const want of ['t', 'd_t', 'v_t = (d_t - d_{t+1}) / d_t', '\\sum_{t=0}^{T-1} v_t', 'e^{i\\pi} + 1 = 0']) {
    assert(tex.includes(want), `missing typeset ${want}; got ${JSON.stringify(tex)}`);
  }
  assert((await page.$$(`${reply} .katex-display`)).length === 2, 'want two display formulas ($$ and \\[)');
  assert((await page.$$(`${reply} .katex-error`)).length === 0, 'fixture math rendered as an error');
  const text = await page.textContent(reply);
  assert(text.includes('Prices like $5 and $10 stay prose'), 'prices were not left as prose');
  assert((await page.textContent(`${reply} code`)) === '$PATH', 'code span lost its dollar signs');
  // The KaTeX fonts load from the woff2-only stylesheet under the page's CSP.
  const fonts = await page.evaluate(async () => {
    await document.fonts.ready;
    return ['KaTeX_Main', 'KaTeX_Math', 'KaTeX_Size1'].map((f) => [f, document.fonts.check(`16px ${f}`)]);
  });
  const loaded = await page.evaluate(() => [...document.fonts].filter((f) => f.status === 'loaded').map((f) => f.family));
  assert(loaded.some((f) => f.includes('KaTeX_Main')), `KaTeX_Main did not load: ${JSON.stringify({ fonts, loaded })}`);
  await page.screenshot({ path: join(shots, 'math.png') });
  assert(errors.length === 0, errors.join('\n'));
  await context.close();
});

test('the empty streaming reply shows exactly one animated loading mark', async (url) => {
  const { context, page, errors } = await openApp(url);
  await openConversation(page, 'Waiting for a reply');
  const marks = await page.$$('svg.loading-mark');
  assert(marks.length === 1, `want one loading mark, got ${marks.length}`);
  const box = await marks[0].boundingBox();
  assert(Math.round(box.width) === 18 && Math.round(box.height) === 18, `mark is ${box.width}×${box.height}, want 18×18`);
  const colors = await page.evaluate(() => {
    const resolve = (value) => {
      const probe = document.createElement('span');
      probe.style.color = value;
      document.body.append(probe);
      const color = getComputedStyle(probe).color;
      probe.remove();
      return color;
    };
    return ['outer', 'inner'].map((ring) => [
      getComputedStyle(document.querySelector(`.loading-mark-${ring}`)).stroke,
      resolve(`var(--mark-${ring})`),
    ]);
  });
  for (const [stroke, token] of colors) assert(stroke === token, `ring stroke ${stroke} is not its theme token ${token}`);
  const outer = () => page.$eval('.loading-mark-outer', (c) => getComputedStyle(c).animationName);
  assert((await outer()) === 'loading-mark-outer', `rings are not animated: ${await outer()}`);
  await page.emulateMedia({ reducedMotion: 'reduce' });
  assert((await outer()) === 'none', 'reduced motion did not freeze the mark');
  await page.emulateMedia({ reducedMotion: null, forcedColors: 'active' });
  const [stroke, canvasText] = await page.evaluate(() => {
    const probe = document.createElement('span');
    probe.style.color = 'CanvasText';
    document.body.append(probe);
    const want = getComputedStyle(probe).color;
    probe.remove();
    return [getComputedStyle(document.querySelector('.loading-mark-inner')).stroke, want];
  });
  assert(stroke === canvasText, `forced colors: stroke ${stroke}, want CanvasText ${canvasText}`);
  await page.emulateMedia({ forcedColors: null });
  await page.locator('[data-message-id="m-waiting-a"]').screenshot({ path: join(shots, 'loading-mark.png') });
  assert(errors.length === 0, errors.join('\n'));
  await context.close();
});

test('a streamed reply typesets once each closer arrives', async (url) => {
  const { context, page, errors } = await openApp(url);
  await openConversation(page, 'Decay rates');
  await page.getByRole('textbox', { name: 'Message' }).fill('Pythagoras?');
  await page.keyboard.press('Enter');
  const reply = '[data-message-id="m-1-a"]';
  await page.waitForSelector(`${reply} svg.loading-mark`);
  assert((await page.$$('svg.loading-mark')).length === 1, 'want one loading mark while the reply is empty');
  await page.waitForSelector(`${reply}[data-state="completed"]`);
  assert((await page.$$(`${reply} svg.loading-mark`)).length === 0, 'the mark stayed after text arrived');
  const tex = await annotations(page, reply);
  assert(JSON.stringify(tex) === JSON.stringify(['a^2 + b^2 = c^2', '\\frac{1}{2}']), `typeset ${JSON.stringify(tex)}`);
  assert(errors.length === 0, errors.join('\n'));
  await context.close();
});

test('a failed reply shows one localized notice whose details are plain text', async (url) => {
  const { context, page, errors } = await openApp(url, { locale: 'de-DE' });
  await openConversation(page, 'Provider outage');
  const notice = page.locator('.failure-notice');
  assert((await notice.count()) === 1, 'want one failure notice');
  assert((await notice.locator('.failure-headline').textContent()) === 'Der Anbieter war nicht erreichbar', 'headline not localized');
  await notice.getByText('Details').click();
  const detail = await notice.locator('.failure-detail-text').textContent();
  assert(detail.includes('<b>not bold</b>'), `details not shown as text: ${detail}`);
  assert((await notice.locator('b').count()) === 0, 'details were parsed as HTML');
  assert(await notice.locator('.failure-detail-text').isVisible(), 'details did not expand');
  await page.screenshot({ path: join(shots, 'failure.png') });
  assert(errors.length === 0, errors.join('\n'));
  await context.close();
});

test('the narrow layout opens the list as a drawer', async (url) => {
  const { context, page, errors } = await openApp(url, { viewport: { width: 390, height: 844 } });
  // The drawer slides in from the left; wait until it is fully in or out.
  const settle = (open) =>
    page.waitForFunction((o) => {
      const r = document.querySelector('.side-pane').getBoundingClientRect();
      return o ? r.left >= 0 : r.right <= 0;
    }, open);
  await settle(false); // closed: fails by timeout if the list covers the chat at 390px
  const column = await page.locator('.message-column').boundingBox();
  assert(column.width > 350, `chat column is ${column.width}px wide at 390px`);
  await page.getByRole('button', { name: 'Conversations' }).click();
  await settle(true);
  await page.screenshot({ path: join(shots, 'narrow-drawer.png') });
  await page.getByRole('button', { name: /^Provider outage/ }).click();
  await settle(false);
  assert((await page.textContent('.chat-title')) === 'Provider outage', 'selecting did not switch conversation');
  await page.screenshot({ path: join(shots, 'narrow.png') });
  assert(errors.length === 0, errors.join('\n'));
  await context.close();
});

test('the theme switches between light and dark tokens', async (url) => {
  const { context, page, errors } = await openApp(url, { colorScheme: 'light' });
  const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert((await page.getAttribute('html', 'data-theme')) === 'light', 'light system preference not followed');
  const light = await bg();
  await page.getByRole('button', { name: 'Dark theme' }).click();
  assert((await page.getAttribute('html', 'data-theme')) === 'dark', 'toggle did not select dark');
  const dark = await bg();
  assert(light !== dark, `background stayed ${light}`);
  await page.screenshot({ path: join(shots, 'dark.png') });
  await page.reload();
  await page.waitForSelector('[data-testid="app"]');
  assert((await page.getAttribute('html', 'data-theme')) === 'dark', 'the choice was not remembered');
  assert(errors.length === 0, errors.join('\n'));
  await context.close();
});

let passed = 0;
let failed = 0;
try {
  mkdirSync(shots, { recursive: true });
  const url = await startServer();
  browser = await chromium.launch({
    executablePath: browserPath,
    headless: true,
    // playwright-core gives each launch a fresh temporary profile directory.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  for (const { name, fn } of tests) {
    try {
      await fn(url);
      passed++;
      console.log(`ok   ${name}`);
    } catch (err) {
      failed++;
      console.log(`FAIL ${name}\n     ${String(err?.stack ?? err).split('\n').join('\n     ')}`);
    }
  }
} catch (err) {
  failed++;
  console.log(`FAIL suite setup: ${err?.stack ?? err}`);
} finally {
  await browser?.close();
  server?.kill();
  rmSync(scratch, { recursive: true, force: true });
}
console.log(`\ne2e: ${passed} passed, ${failed} failed`);
process.exitCode = failed > 0 ? 1 : 0;

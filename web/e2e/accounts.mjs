// Accounts in a real browser: folio serve signs people in through a real
// OpenID Connect provider (server/auth/authtest/idp, the zitadel OP), two
// people sign in through the provider's own form in Chromium, each sees
// only their own conversations, and the owner makes a share link with the
// app's Share button, which opens the conversation read-only for a browser
// with no session and for the other person, until the owner revokes it in
// the app (then it is not-found). Run: node e2e/accounts.mjs (from web/).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { existsSync } from 'node:fs';
import { assert, browserPath, repo, required } from './harness.mjs';

if (!existsSync(browserPath)) {
  if (required) {
    console.error(`accounts: FAIL: ${browserPath} not found, and CI/FOLIO_REQUIRE_SUITES requires the browser suite.`);
    process.exit(1);
  }
  console.log(`accounts: SKIPPED: ${browserPath} not found (apt-get install -y chromium, or set FOLIO_CHROMIUM).`);
  process.exit(0);
}

const scratch = mkdtempSync(join(tmpdir(), 'folio-accounts-'));
const procs = [];
const cleanup = () => {
  for (const p of procs) p.kill();
  rmSync(scratch, { recursive: true, force: true });
};

function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// start runs a program and resolves with the first stdout line matching re.
function start(cmd, args, re, env = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { cwd: repo, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] });
    procs.push(p);
    let out = '';
    p.stdout.on('data', (b) => {
      out += b.toString();
      const m = re.exec(out);
      if (m) resolve(m);
    });
    p.on('exit', (code) => reject(new Error(`${cmd} exited ${code}: ${out}`)));
  });
}

async function signIn(browser, base, user) {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  await page.goto(`${base}/`);
  // The provider's login form.
  await page.waitForSelector('#username', { timeout: 15000 });
  await page.fill('#username', user);
  await page.fill('#password', 'verysecure');
  await page.click('button[type=submit]');
  await page.waitForSelector('[data-testid=sign-out]', { timeout: 15000 });
  assert(page.url().startsWith(base), `after sign-in the browser is at ${page.url()}`);
  return { ctx, page };
}

// api calls folio from the page, as the app does (the CSRF cookie on writes).
function api(page, method, path, body) {
  return page.evaluate(
    async ({ method, path, body }) => {
      const csrf = /(?:^|;\s*)folio_csrf=([^;]+)/.exec(document.cookie)?.[1] ?? '';
      const r = await fetch(path, { method, headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf }, body });
      return { status: r.status, body: await r.text() };
    },
    { method, path, body },
  );
}

try {
  const bin = join(scratch, 'folio');
  const built = spawnSync('go', ['build', '-o', bin, './cmd/folio'], { cwd: repo, stdio: 'inherit' });
  assert(built.status === 0, 'go build ./cmd/folio failed');
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const [, issuer] = await start('go', ['run', './server/auth/authtest/idp', '-client', 'folio', '-secret', 'e2e-secret', '-redirect', `${base}/auth/callback`], /issuer (\S+)\n/);
  await start(bin, ['serve', '--addr', `127.0.0.1:${port}`, '--data', join(scratch, 'data'), '--oidc-issuer', issuer, '--oidc-client-id', 'folio', '--admin', 'id1'], /folio serving/, {
    FOLIO_OIDC_CLIENT_SECRET: 'e2e-secret',
  });
  const browser = await chromium.launch({ executablePath: browserPath, args: ['--no-sandbox'] });
  try {
    const host = new URL(issuer).hostname;
    const alice = await signIn(browser, base, `test-user@${host}`);
    const made = await api(alice.page, 'POST', '/api/v2/conversations', JSON.stringify({ title: 'alice secret plans' }));
    assert(made.status === 201, `alice creates: ${made.status} ${made.body}`);
    const id = JSON.parse(made.body).id;
    await alice.page.reload();
    await alice.page.getByText('alice secret plans').first().waitFor({ timeout: 10000 });

    const bob = await signIn(browser, base, 'test-user2');
    const bobList = await api(bob.page, 'GET', '/api/v2/conversations');
    assert(bobList.status === 200 && !bobList.body.includes(id), `bob's list shows alice's conversation: ${bobList.body}`);
    assert((await bob.page.getByText('alice secret plans').count()) === 0, "bob's page shows alice's conversation");
    const peek = await api(bob.page, 'GET', `/api/v2/conversations/${id}`);
    assert(peek.status === 404, `bob opens alice's conversation: ${peek.status}`);

    // Bob has no Share button on a conversation (he has none open), and
    // the API refuses him alice's links.
    const bobLinks = await api(bob.page, 'GET', `/api/v2/conversations/${id}/shares`);
    assert(bobLinks.status === 404, `bob lists alice's links: ${bobLinks.status}`);

    // Alice shares through the app: the header's Share button, Create link,
    // the address shown once; at phone width the dialog fits the screen.
    await alice.page.setViewportSize({ width: 390, height: 800 });
    await alice.page.goto(`${base}/c/${encodeURIComponent(id)}`);
    await alice.page.click('[data-testid=share-open]', { timeout: 15000 });
    await alice.page.waitForSelector('[data-testid=share-none]', { timeout: 10000 });
    await alice.page.click('[data-testid=share-create]');
    const url = await alice.page.locator('[data-testid=share-url]').inputValue({ timeout: 10000 });
    assert(url.startsWith(`${base}/s/`), `the link shown: ${url}`);
    const box = await alice.page.locator('[data-testid=share-dialog]').boundingBox();
    assert(box && box.x >= 0 && box.x + box.width <= 390, `the share dialog at phone width: ${JSON.stringify(box)}`);
    assert((await alice.page.locator('[data-testid=share-list] li').count()) === 1, 'the new link is listed');
    await alice.page.setViewportSize({ width: 1280, height: 800 });

    // A browser with no session opens it read-only; so does bob's.
    const anon = await browser.newContext();
    const view = await anon.newPage();
    view.on('console', (m) => console.log('console:', m.text()));
    await view.goto(url);
    await view.waitForSelector('[data-testid=read-only]', { timeout: 15000 });
    await view.getByText('alice secret plans').first().waitFor({ timeout: 10000 });
    assert((await view.locator('textarea').count()) === 0, 'the read-only view has a composer');
    assert((await view.locator('.side-pane').count()) === 0, 'the read-only view shows a conversation list');
    assert((await view.locator('[data-testid=share-open]').count()) === 0, 'the read-only view has a Share button');
    const bobView = await bob.ctx.newPage();
    await bobView.goto(url);
    await bobView.waitForSelector('[data-testid=read-only]', { timeout: 15000 });
    await bobView.getByText('alice secret plans').first().waitFor({ timeout: 10000 });
    assert((await bobView.locator('[data-testid=share-open]').count()) === 0, "bob's read-only view has a Share button");
    await bobView.close();

    // Alice revokes it through the app; the link is then not-found.
    await alice.page.click('[data-testid=share-list] li button');
    await alice.page.waitForSelector('[data-testid=share-none]', { timeout: 10000 });
    const gone = await view.evaluate(async (p) => (await fetch('/api/v2/conversations', { headers: { 'X-Folio-Share': p } })).status, new URL(url).pathname.slice(3));
    assert(gone === 404, `the revoked link's API answers ${gone}`);
    await view.reload();
    await view.waitForSelector('[data-testid=refusal][data-code=not-found]', { timeout: 15000 });
    assert((await view.getByText('alice secret plans').count()) === 0, 'the revoked link still shows the conversation');

    // Sign-out from the app's button ends the session; alice's other tab,
    // whose connection the server closes (4401), goes to sign in at once.
    const tab2 = await alice.ctx.newPage();
    await tab2.goto(`${base}/`);
    await tab2.waitForSelector('[data-testid=sign-out]', { timeout: 15000 });
    await tab2.waitForFunction(() => window.__folio?.client?.status === 'open', null, { timeout: 15000 });
    const toSignIn = tab2.waitForRequest((r) => r.url().includes('/auth/login'), { timeout: 15000 });
    await alice.page.click('[data-testid=sign-out] button');
    await toSignIn;
    await alice.page.waitForURL(/\/auth\/signed-out/, { timeout: 10000 });
    const after = await api(alice.page, 'GET', '/api/v2/conversations');
    assert(after.status === 401, `after sign-out: ${after.status}`);
    console.log('accounts: sign-in, privacy, share links made, opened and revoked in the app, and sign-out passed in Chromium');
  } finally {
    await browser.close();
  }
} finally {
  cleanup();
}

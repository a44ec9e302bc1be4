// Accounts in a real browser: folio serve signs people in through a real
// OpenID Connect provider (server/auth/authtest/idp, the zitadel OP), two
// people sign in through the provider's own form in Chromium, each sees
// only their own conversations, and a share link opens one read-only for a
// browser with no session. Run: node e2e/accounts.mjs (from web/).
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

    const shared = await api(alice.page, 'POST', `/api/v2/conversations/${id}/shares`, '{}');
    assert(shared.status === 201, `share: ${shared.status} ${shared.body}`);
    const path = JSON.parse(shared.body).path;
    const anon = await browser.newContext();
    const view = await anon.newPage();
    view.on('console', (m) => console.log('console:', m.text()));
    await view.goto(`${base}${path}`);
    await view.waitForSelector('[data-testid=read-only]', { timeout: 15000 });
    await view.getByText('alice secret plans').first().waitFor({ timeout: 10000 });
    assert((await view.locator('textarea').count()) === 0, 'the read-only view has a composer');
    assert((await view.locator('.side-pane').count()) === 0, 'the read-only view shows a conversation list');

    // Sign-out from the app's button ends the session.
    await alice.page.click('[data-testid=sign-out] button');
    await alice.page.waitForURL(/\/auth\/signed-out/, { timeout: 10000 });
    const after = await api(alice.page, 'GET', '/api/v2/conversations');
    assert(after.status === 401, `after sign-out: ${after.status}`);
    console.log('accounts: sign-in, privacy, share link and sign-out passed in Chromium');
  } finally {
    await browser.close();
  }
} finally {
  cleanup();
}

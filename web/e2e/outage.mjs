// Browser test of a real PostgreSQL outage: `folio serve --store` on a
// throwaway cluster of its own (.ci/pg-start), which the test stops as a
// crash would and starts again. The tab shows the store banner while the
// database is gone, and once it is back the banner goes and a message sent
// from the composer is answered. Without PostgreSQL installed the test is
// skipped with a message, except under CI=true or FOLIO_REQUIRE_SUITES=1,
// where that is a failure. run.mjs registers it.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { assert, item, openApp, repo, required } from './harness.mjs';

const pane = '[data-slot="0"]';

function pgBin() {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const v = readdirSync(root).sort((a, b) => Number(a) - Number(b)).at(-1);
  const bin = v && join(root, v, 'bin');
  return bin && existsSync(join(bin, 'initdb')) ? bin : undefined;
}

// startCluster runs .ci/pg-start and returns the cluster's URL, folder and
// a pg_ctl runner (as the cluster's owner when we are root).
function startCluster() {
  const r = spawnSync(join(repo, '.ci', 'pg-start'), { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`.ci/pg-start failed: ${r.stderr}`);
  const dir = /pg-start: cluster in (\S+)/.exec(r.stderr)?.[1];
  if (!dir) throw new Error(`.ci/pg-start did not name its folder: ${r.stderr}`);
  const [server, ...opts] = readFileSync(join(dir, 'data', 'postmaster.opts'), 'utf8').trim().split(' ');
  const ctl = (args) => {
    let name = join(server, '..', 'pg_ctl');
    if (process.getuid?.() === 0) {
      const owner = spawnSync('stat', ['-c', '%U', dir], { encoding: 'utf8' }).stdout.trim();
      args = ['-u', owner, '--', name, ...args];
      name = 'runuser';
    }
    const c = spawnSync(name, args, { encoding: 'utf8' });
    if (c.status !== 0) throw new Error(`pg_ctl ${args.join(' ')}: ${c.stderr}${c.stdout}`);
  };
  const data = join(dir, 'data');
  return {
    url: r.stdout.trim(),
    dir,
    crash: () => ctl(['-D', data, '-m', 'immediate', '-w', 'stop']),
    start: () => ctl(['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', '-o', opts.join(' '), 'start']),
    stop: () => spawnSync(join(repo, '.ci', 'pg-stop'), [dir]),
  };
}

// serve starts `folio serve --store url` and returns the printed URL.
async function serve(h, url, data) {
  const tmp = join(data, 'tmp');
  mkdirSync(tmp, { recursive: true });
  const p = spawn(h.bin, ['serve', '--store', url, '--addr', '127.0.0.1:0', '--data', data], {
    stdio: ['ignore', 'pipe', 'ignore'],
    env: { ...process.env, TMPDIR: tmp },
  });
  const printed = await new Promise((resolve, reject) => {
    let out = '';
    p.stdout.on('data', (d) => {
      out += d;
      const m = /open ((http:\/\/127\.0\.0\.1:\d+\/)#token=(\S+))\n/.exec(out);
      if (m) resolve({ url: m[1], base: m[2], token: decodeURIComponent(m[3]) });
    });
    p.on('exit', (code) => reject(new Error(`folio serve --store exited with ${code} before listening`)));
  });
  return { ...printed, kill: () => p.kill() };
}

// send types text in the composer and waits until a user bubble with that
// text is shown and the answer after it settles. It does not count bubbles:
// a window that reloads after the outage is briefly empty, and a count taken
// then is already passed by the rows it reloads.
async function send(page, text) {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.keyboard.press('Enter');
  await page.waitForFunction(
    ([p, t]) => {
      const rows = [...document.querySelectorAll(`${p} .bubble-user, ${p} .bubble-assistant`)];
      const at = rows.findLastIndex((r) => r.classList.contains('bubble-user') && r.textContent.includes(t));
      return at >= 0 && rows.slice(at + 1).some((r) => r.dataset.state === 'completed');
    },
    [pane, text],
    { timeout: 60_000 },
  );
}

export function outageTests(test) {
  test('a real PostgreSQL outage shows the store banner; when the database is back the banner goes and the tab works', async (h) => {
    if (!pgBin()) {
      if (required) throw new Error('no PostgreSQL in /usr/lib/postgresql/*/bin, and CI/FOLIO_REQUIRE_SUITES requires the outage test (apt-get install -y postgresql)');
      console.log('     skipped: no PostgreSQL in /usr/lib/postgresql/*/bin');
      return;
    }
    const cl = startCluster();
    let srv;
    let context;
    try {
      const data = join(h.tmp, 'replica');
      mkdirSync(data, { recursive: true });
      srv = await serve(h, cl.url, data);
      const r = await fetch(`${srv.base}api/v2/conversations`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${srv.token}` },
        body: JSON.stringify({ title: 'outage' }),
      });
      assert(r.ok, `create on the replica: HTTP ${r.status}`);
      const id = (await r.json()).id;
      const app = await openApp(srv.url);
      context = app.context;
      const { page } = app;
      const banner = page.locator('[data-testid="store-unavailable"]');
      await item(page, 'outage').click();
      await page.waitForFunction((cid) => window.__folio.cache.peek(`${cid}||0`)?.getState().window.loaded, id);
      await send(page, 'hello');
      assert((await banner.count()) === 0, 'the banner shows while the database is up');

      cl.crash();
      await banner.waitFor({ state: 'visible', timeout: 30_000 });
      assert((await banner.getAttribute('role')) === 'status', 'the banner is not announced as a status');

      cl.start();
      await banner.waitFor({ state: 'detached', timeout: 30_000 });
      await page.locator(`${pane} .bubble-user`, { hasText: 'hello' }).waitFor({ timeout: 30_000 });
      await send(page, 'after the outage');
      const texts = await page.$$eval(`${pane} .bubble-user`, (us) => us.map((u) => u.textContent.trim()));
      assert(
        texts.length === 2 && texts[0].includes('hello') && texts[1].includes('after the outage'),
        `user messages after the outage: ${JSON.stringify(texts)}`,
      );
      assert(statSync(join(data, 'conversations', `${id}.jsonl`)).size > 0, 'the replica holds no copy of the conversation');
    } finally {
      await context?.close();
      srv?.kill();
      cl.stop();
    }
  });
}

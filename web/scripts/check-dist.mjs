// Fails when the committed web/dist is not what a fresh build of web/src makes.
//
// It builds into a temporary folder with the project's own Vite configs (the
// app's, then the HTML export's into export/) and
// compares every file byte for byte with dist/. This catches every cause of
// staleness (sources, styles, config, dependency versions) without recording
// input hashes anywhere, and it relies on the build being deterministic:
// content-hashed file names, no timestamps. Two builds of the same tree must
// be identical, so a difference always means dist/ needs `make web-build`.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';

const root = fileURLToPath(new URL('..', import.meta.url));
const committed = join(root, 'dist');
const fresh = mkdtempSync(join(tmpdir(), 'folio-web-dist-'));

function files(dir) {
  const out = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(relative(dir, p));
    }
  };
  try {
    walk(dir);
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
  }
  return out.sort();
}

try {
  await build({ root, logLevel: 'error', build: { outDir: fresh, emptyOutDir: true } });
  // The HTML export's bundle, built after the app as `make web-build` does.
  await build({ root, configFile: join(root, 'vite.export.config.ts'), logLevel: 'error', build: { outDir: join(fresh, 'export'), emptyOutDir: true } });
  const want = files(fresh);
  const have = files(committed);
  const problems = [];
  for (const f of want) {
    if (!have.includes(f)) problems.push(`missing from web/dist: ${f}`);
    else if (!readFileSync(join(fresh, f)).equals(readFileSync(join(committed, f)))) problems.push(`differs: web/dist/${f}`);
  }
  for (const f of have) if (!want.includes(f)) problems.push(`not made by the build: web/dist/${f}`);
  if (problems.length > 0) {
    console.error('web/dist is stale: it does not match a fresh build of web/src.');
    for (const p of problems) console.error(`  ${p}`);
    console.error('Run `make web-build` and commit web/dist.');
    process.exitCode = 1;
  } else {
    console.log(`web/dist is up to date (${want.length} files match a fresh build).`);
  }
} finally {
  rmSync(fresh, { recursive: true, force: true });
}

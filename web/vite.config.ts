import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vitest/config';

// KaTeX's stylesheet lists every font as woff2, woff and ttf. Every browser
// folio supports reads woff2, so the older formats are dropped: that keeps
// about 0.8 MB of fonts out of the committed, embedded web/dist.
export function katexWoff2Only(): Plugin {
  return {
    name: 'folio-katex-woff2-only',
    enforce: 'pre',
    transform(code, id) {
      if (!/katex(\.min)?\.css$/.test(id.split('?')[0] ?? '')) return null;
      return code.replace(/,\s*url\([^)]+\.(?:woff|ttf)\)\s*format\("(?:woff|truetype)"\)/g, '');
    },
  };
}

export default defineConfig({
  plugins: [react(), katexWoff2Only()],
  // Relative asset URLs, so the app works wherever the server mounts it.
  base: './',
  // `npx vite` proxies the API (and its WebSocket) to a local folio serve.
  server: { proxy: { '/api': { target: 'http://127.0.0.1:7878', ws: true } } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 1024,
  },
  test: {
    environment: 'jsdom',
    include: ['src/**/*.test.{ts,tsx}'],
    setupFiles: ['test/setup.ts'],
    // jsdom rendering is slow on a busy 2-core machine; a timeout here means
    // a hang, not a slow test.
    testTimeout: 30_000,
    reporters: ['default', './test/summary-reporter.ts'],
  },
});

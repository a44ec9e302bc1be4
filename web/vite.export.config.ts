import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';
import { katexWoff2Only } from './vite.config.ts';

// inlineSafe makes the bundle safe to put between <script> and </script>
// (and the stylesheet between <style> and </style>): the HTML parser ends a
// script at "</script" and treats "<!--" followed by "<script" specially, so
// each "<" that starts one is written as \x3C. Every such "<" in the bundle is
// inside a string, template or regular expression, where \x3C means the same.
function inlineSafe(): Plugin {
  return {
    name: 'folio-export-inline-safe',
    enforce: 'post',
    generateBundle(_options, bundle) {
      for (const f of Object.values(bundle)) {
        if (f.type === 'chunk') f.code = f.code.replace(/<(!--|\/?script)/gi, '\\x3C$1');
        else if (typeof f.source === 'string' && /<\/style/i.test(f.source)) this.error(`${f.fileName} holds "</style"`);
      }
    },
  };
}

// The self-contained HTML export's bundle (src/export): one classic script
// and one stylesheet with every asset (KaTeX's fonts) inlined as data: URLs,
// written to dist/export/ with fixed names. The Go writer
// (history/export/html.go) embeds both into each exported file, so the file
// opens offline and loads nothing from anywhere.
export default defineConfig({
  plugins: [react(), katexWoff2Only(), inlineSafe()],
  // Library mode leaves process.env alone; React reads NODE_ENV.
  define: { 'process.env.NODE_ENV': JSON.stringify('production') },
  build: {
    outDir: 'dist/export',
    emptyOutDir: true,
    sourcemap: false,
    copyPublicDir: false,
    chunkSizeWarningLimit: 2048,
    lib: {
      entry: 'src/export/main.tsx',
      formats: ['iife'],
      name: 'folioExport',
      fileName: () => 'export.js',
      cssFileName: 'export',
    },
  },
});

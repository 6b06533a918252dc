import { defineConfig } from 'tsup'

// Two bundles, both from the @kode/* sources (esbuild resolves them through the tsconfig
// `paths`), so `pnpm start` needs no prior build of the packages:
// - dist/server/server.js: the Node server (and catch-up.js, the benchmark);
// - dist/public/: the page, plain TypeScript bundled for the browser, with its HTML and CSS.
export default defineConfig([
  {
    entry: { server: 'src/main.ts', 'catch-up': 'bench/catch-up.ts' },
    outDir: 'dist/server',
    format: ['esm'],
    platform: 'node',
    target: 'node20',
    dts: false,
    sourcemap: true,
    clean: true,
    noExternal: [/^@kode\//],
  },
  {
    entry: { app: 'src/page/main.ts' },
    outDir: 'dist/public',
    format: ['esm'],
    platform: 'browser',
    target: 'es2022',
    dts: false,
    sourcemap: true,
    clean: true,
    noExternal: [/.*/],
    publicDir: 'public',
    outExtension: () => ({ js: '.js' }),
  },
])

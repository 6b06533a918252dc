import { defineConfig } from 'tsup'

// Bundles the @kode/* sources (resolved through the tsconfig `paths`), so `start` needs no package build.
export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm'],
  platform: 'node',
  target: 'node20',
  dts: false,
  clean: true,
  noExternal: [/^@kode\//],
})

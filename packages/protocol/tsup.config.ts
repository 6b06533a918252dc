import { defineConfig } from 'tsup'

export default defineConfig({
  // helpers: the plain functions alone, for importers that must not pay for TypeBox (see src/helpers.ts).
  entry: { index: 'src/index.ts', helpers: 'src/helpers.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  treeshake: true,
  // TypeBox ships as hundreds of small ESM files (~100 ms to load); bundled and tree-shaken it is one.
  noExternal: ['@sinclair/typebox'],
})

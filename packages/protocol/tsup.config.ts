import { defineConfig } from 'tsup'

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  treeshake: true,
  // TypeBox ships as hundreds of small ESM files (~100 ms to load); bundled and tree-shaken it is one.
  noExternal: ['@sinclair/typebox'],
})

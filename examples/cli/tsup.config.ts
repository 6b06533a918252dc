import { defineConfig } from 'tsup'

// One file, `dist/kode.js`. The @kode/* imports are bundled from their sources (esbuild resolves
// them through the tsconfig `paths`), so building the CLI needs no prior build of the packages.
// The MCP SDK and cross-spawn (of @kode/mcp) stay external: CommonJS code that requires Node's
// modules cannot live in an ESM bundle.
export default defineConfig({
  entry: { kode: 'src/main.ts' },
  format: ['esm'],
  platform: 'node',
  target: 'node20',
  dts: false,
  sourcemap: true,
  clean: true,
  noExternal: [/^@kode\//],
  external: [/^@modelcontextprotocol\//, 'cross-spawn'],
})

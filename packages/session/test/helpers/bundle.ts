import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { build } from 'tsup'
import { alias } from '../../../../vitest.workspace.js'

/**
 * Bundles a TypeScript entry (and the workspace sources it imports) into one `.mjs` file that a
 * plain `node` child process can run, so process tests exercise the sources, not a stale build.
 */
export async function bundleForNode(entry: string): Promise<string> {
  const outDir = mkdtempSync(join(tmpdir(), 'kode-child-'))
  const name = basename(entry, '.ts')
  await build({
    entry: { [name]: entry },
    outDir,
    format: ['esm'],
    platform: 'node',
    target: 'node20',
    noExternal: [/.*/],
    outExtension: () => ({ js: '.mjs' }),
    config: false,
    dts: false,
    sourcemap: false,
    silent: true,
    // The workspace's own aliases, matched exactly: esbuild's `alias` also maps subpaths by
    // prefix, which would send `@kode/session/file` into `session/src/index.ts/file`.
    esbuildPlugins: [
      {
        name: 'kode-sources',
        setup(build) {
          build.onResolve({ filter: /^@kode\// }, ({ path }) => {
            const file = alias[path as keyof typeof alias]
            return file ? { path: file } : undefined
          })
        },
      },
    ],
  })
  return join(outDir, `${name}.mjs`)
}

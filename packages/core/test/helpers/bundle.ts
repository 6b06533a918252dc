import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join, resolve } from 'node:path'
import { build } from 'tsup'

const repo = resolve(import.meta.dirname, '../../../..')
const source = (path: string) => join(repo, 'packages', path)

/**
 * Bundles a TypeScript entry and the workspace sources it imports into one `.mjs` file a plain
 * `node` child process can run, so crash tests exercise the sources rather than a stale build.
 */
export async function bundleForNode(entry: string): Promise<string> {
  const outDir = mkdtempSync(join(tmpdir(), 'kode-core-child-'))
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
    esbuildOptions(options) {
      options.alias = {
        '@kode/protocol/helpers': source('protocol/src/helpers.ts'),
        '@kode/protocol': source('protocol/src/index.ts'),
        '@kode/providers': source('providers/src/index.ts'),
        '@kode/session': source('session/src/index.ts'),
        '@kode/core': source('core/src/index.ts'),
      }
    },
  })
  return join(outDir, `${name}.mjs`)
}

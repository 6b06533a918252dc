import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join, resolve } from 'node:path'
import { build } from 'tsup'

const repo = resolve(import.meta.dirname, '../../../..')

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
    esbuildOptions(options) {
      options.alias = {
        '@kode/protocol': join(repo, 'packages/protocol/src/index.ts'),
        '@kode/session': join(repo, 'packages/session/src/index.ts'),
      }
    },
  })
  return join(outDir, `${name}.mjs`)
}

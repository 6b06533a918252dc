import { mkdirSync, mkdtempSync } from 'node:fs'
import { basename, join, resolve } from 'node:path'
import { build } from 'tsup'

const repo = resolve(import.meta.dirname, '../../../..')
const pkg = resolve(import.meta.dirname, '../..')

/**
 * Bundles a TypeScript entry and the workspace sources it imports into one `.mjs` a plain `node`
 * child runs, so process tests exercise the sources. `pg` stays external: the bundle is written
 * under this package's node_modules, where Node finds it.
 */
export async function bundleForNode(entry: string): Promise<string> {
  const parent = join(pkg, 'node_modules', '.kode-test-children')
  mkdirSync(parent, { recursive: true })
  const outDir = mkdtempSync(join(parent, 'child-'))
  const name = basename(entry, '.ts')
  await build({
    entry: { [name]: entry },
    outDir,
    format: ['esm'],
    platform: 'node',
    target: 'node20',
    noExternal: [/^@kode\//],
    external: ['pg'],
    outExtension: () => ({ js: '.mjs' }),
    config: false,
    dts: false,
    sourcemap: false,
    silent: true,
    esbuildOptions(options) {
      options.alias = {
        '@kode/protocol': join(repo, 'packages/protocol/src/index.ts'),
        '@kode/session': join(repo, 'packages/session/src/index.ts'),
        '@kode/session-postgres': join(repo, 'packages/session-postgres/src/index.ts'),
      }
    },
  })
  return join(outDir, `${name}.mjs`)
}

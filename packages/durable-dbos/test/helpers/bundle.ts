import { mkdirSync, mkdtempSync } from 'node:fs'
import { basename, join, resolve } from 'node:path'
import { build } from 'tsup'
import { alias } from '../../../../vitest.workspace.js'

const pkg = resolve(import.meta.dirname, '../..')

/**
 * Bundles a TypeScript entry and the workspace sources it imports (through the test aliases) into
 * one `.mjs` a plain `node` child runs. `pg` and DBOS stay external: the bundle is written under
 * this package's node_modules, where Node finds them.
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
    noExternal: [/^@kode\//, '@sinclair/typebox'],
    external: ['pg', '@dbos-inc/dbos-sdk'],
    outExtension: () => ({ js: '.mjs' }),
    config: false,
    dts: false,
    sourcemap: false,
    silent: true,
    esbuildOptions(options) {
      options.alias = { ...alias }
    },
  })
  return join(outDir, `${name}.mjs`)
}

import { mkdirSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { build } from 'tsup'
import { alias } from '../../vitest.workspace.js'

/** What a bundle leaves to Node, and where it is written so Node finds those packages. */
export interface BundleOptions {
  /** Packages left as imports (native drivers, engines with their own loaders). */
  external?: readonly string[]
  /** A package directory whose `node_modules` holds `external`; the bundle is written beneath it. */
  packageDir?: string
}

/**
 * Bundles a TypeScript entry and the workspace sources it imports into one `.mjs` file a plain
 * `node` child process can run, so process tests exercise the sources rather than a stale build.
 * Everything is bundled except `external`.
 */
export async function bundleForNode(entry: string, options: BundleOptions = {}): Promise<string> {
  const external = options.external ?? []
  if (external.length > 0 && options.packageDir === undefined)
    throw new TypeError('external packages need the packageDir whose node_modules holds them')
  const parent =
    options.packageDir === undefined
      ? tmpdir()
      : join(options.packageDir, 'node_modules', '.kode-test-children')
  mkdirSync(parent, { recursive: true })
  const outDir = mkdtempSync(join(parent, 'kode-child-'))
  const name = basename(entry, '.ts')
  await build({
    entry: { [name]: entry },
    outDir,
    format: ['esm'],
    platform: 'node',
    target: 'node20',
    noExternal: [external.length === 0 ? /.*/ : notAnyOf(external)],
    external: [...external],
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

/** Matches every import except the named packages and their subpaths. */
function notAnyOf(names: readonly string[]): RegExp {
  const escaped = names.map((name) => name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))
  return new RegExp(`^(?!(?:${escaped.join('|')})(?:/|$))`)
}

import { builtinModules } from 'node:module'
import { build, type Plugin } from 'esbuild'
import { alias } from '../../vitest.workspace.js'

/** One import of a Node built-in found while bundling, and the file that made it. */
export interface NodeImport {
  specifier: string
  importer: string
}

/** Thrown when a browser bundle reaches a Node built-in; lists every such import. */
export class NodeImportError extends Error {
  constructor(readonly imports: readonly NodeImport[]) {
    super(
      `the browser bundle imports Node built-ins:\n${imports.map((i) => `  ${i.specifier} from ${i.importer}`).join('\n')}`,
    )
    this.name = 'NodeImportError'
  }
}

const builtins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]))

/** Resolves `@kode/*` to the workspace sources, exactly (esbuild's own alias matches by prefix). */
const workspaceSources: Plugin = {
  name: 'kode-sources',
  setup(build) {
    build.onResolve({ filter: /^@kode\// }, ({ path }) => {
      const file = alias[path as keyof typeof alias]
      return file ? { path: file } : undefined
    })
  },
}

/** Records every import of a Node built-in instead of letting esbuild stub or reject it. */
function recordNodeImports(found: NodeImport[]): Plugin {
  return {
    name: 'node-imports',
    setup(build) {
      build.onResolve({ filter: /.*/ }, ({ path, importer }) => {
        if (!builtins.has(path)) return undefined
        found.push({ specifier: path, importer })
        return { path, external: true }
      })
    },
  }
}

/**
 * Bundles `code` (an ES module importing `@kode/*` and anything else) the way a web app's bundler
 * would (`platform: 'browser'`, the `browser` export conditions), into one ES module. Throws
 * `NodeImportError` when anything in the graph, ours or a dependency's, imports a Node built-in.
 */
export async function bundleForBrowser(code: string): Promise<string> {
  const found: NodeImport[] = []
  const result = await build({
    stdin: { contents: code, loader: 'ts', resolveDir: import.meta.dirname, sourcefile: 'entry.ts' },
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
    plugins: [workspaceSources, recordNodeImports(found)],
  })
  if (found.length > 0) throw new NodeImportError(found)
  return result.outputFiles[0]!.text
}

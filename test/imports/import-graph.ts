import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, posix, relative, resolve } from 'node:path'
import ts from 'typescript'

/**
 * The import statements of a package's sources, for the packages' import-direction tests. Each
 * package declares its rules (a layer order of its folders, which adapters may not import each
 * other...) and these helpers report what breaks them, as `file:line: import` lines.
 */

/** One import of one source file. */
export interface SourceImport {
  /** The importing file, relative to `src` with `/` separators (`task/turn.ts`). */
  file: string
  line: number
  /** The module specifier as written (`../tools/define-tool.js`, `@kode/protocol`). */
  specifier: string
  /** For a relative specifier: the imported file relative to `src` (`tools/define-tool.ts`). */
  target?: string
}

/** Every static and dynamic import (and `export ... from`) of the `.ts` files under `srcDir`. */
export function sourceImports(srcDir: string): SourceImport[] {
  return sourceFiles(srcDir).flatMap((path) => {
    const text = readFileSync(path, 'utf8')
    const file = relative(srcDir, path).split('\\').join('/')
    return ts.preProcessFile(text, true, true).importedFiles.map((imported) => {
      const found: SourceImport = {
        file,
        line: lineAt(text, imported.pos),
        specifier: imported.fileName,
      }
      if (imported.fileName.startsWith('.')) {
        const joined = posix.normalize(posix.join(posix.dirname(file), imported.fileName))
        found.target = joined.replace(/\.js$/, '.ts')
      }
      return found
    })
  })
}

function lineAt(text: string, pos: number): number {
  let line = 1
  for (let i = text.indexOf('\n'); i !== -1 && i < pos; i = text.indexOf('\n', i + 1)) line++
  return line
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

/** How a finding is reported. */
export function where(found: SourceImport): string {
  return `${found.file}:${found.line}: ${found.specifier}`
}

/** The folder a file belongs to at `depth` levels under `src` (`.` for a file above that depth). */
export function folderOf(file: string, depth = 1): string {
  const parts = file.split('/').slice(0, -1)
  return parts.length < depth ? '.' : parts.slice(0, depth).join('/')
}

/**
 * Imports against a layer order, lowest first (`.` names the files at the top of `src`): a file
 * may import its own folder and the folders listed before it, never one listed after it. Files
 * in `exempt` (the package's entries) may import anything; a folder missing from the order is
 * reported too, so a new folder is placed on purpose.
 */
export function layerViolations(
  imports: readonly SourceImport[],
  order: readonly string[],
  exempt: readonly string[] = [],
): string[] {
  const rank = new Map(order.map((folder, i) => [folder, i]))
  const found: string[] = []
  for (const imported of imports) {
    if (imported.target === undefined || exempt.includes(imported.file)) continue
    const from = rank.get(folderOf(imported.file))
    const to = rank.get(folderOf(imported.target))
    if (from === undefined) found.push(`${where(imported)} (the folder of ${imported.file} has no layer)`)
    else if (to === undefined) found.push(`${where(imported)} (the folder it imports has no layer)`)
    else if (to > from) found.push(`${where(imported)} (imports upward: ${order[from]} -> ${order[to]})`)
  }
  return found
}

/**
 * The cycles between folders (at `depth`), as `a -> b -> a` lines; files in `exempt` (entries,
 * which gather every folder) do not count.
 */
export function folderCycles(
  imports: readonly SourceImport[],
  depth = 1,
  exempt: readonly string[] = [],
): string[] {
  const edges = new Map<string, Set<string>>()
  for (const imported of imports) {
    if (imported.target === undefined || exempt.includes(imported.file)) continue
    const from = folderOf(imported.file, depth)
    const to = folderOf(imported.target, depth)
    if (from === to) continue
    if (!edges.has(from)) edges.set(from, new Set())
    edges.get(from)!.add(to)
  }
  const cycles = new Set<string>()
  const visit = (node: string, path: string[]) => {
    for (const next of edges.get(node) ?? []) {
      const at = path.indexOf(next)
      if (at >= 0) {
        const cycle = path.slice(at)
        // One spelling per cycle: start at its smallest folder.
        const start = cycle.indexOf([...cycle].sort()[0]!)
        const turned = [...cycle.slice(start), ...cycle.slice(0, start)]
        cycles.add([...turned, turned[0]].join(' -> '))
      } else visit(next, [...path, next])
    }
  }
  for (const node of edges.keys()) visit(node, [node])
  return [...cycles].sort()
}

/**
 * Imports of other packages that do not go through their public entries: a `@kode/*` subpath
 * the package does not export, a package that is not a dependency, or a relative path out of
 * `src`.
 */
export function foreignInternals(imports: readonly SourceImport[], packageDir: string): string[] {
  const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>
    peerDependencies?: Record<string, string>
  }
  const allowed = new Set([
    ...Object.keys(manifest.dependencies ?? {}),
    ...Object.keys(manifest.peerDependencies ?? {}),
  ])
  const packagesDir = dirname(resolve(packageDir))
  const found: string[] = []
  for (const imported of imports) {
    const { specifier } = imported
    if (imported.target !== undefined) {
      if (imported.target.startsWith('../')) found.push(`${where(imported)} (reaches out of src)`)
      continue
    }
    if (!specifier.startsWith('@kode/')) continue
    const [scope, name, ...rest] = specifier.split('/')
    const pkg = `${scope}/${name}`
    if (!allowed.has(pkg)) {
      found.push(`${where(imported)} (${pkg} is not a dependency)`)
      continue
    }
    const subpath = rest.length === 0 ? '.' : `./${rest.join('/')}`
    if (!exportedSubpaths(join(packagesDir, name!)).has(subpath)) {
      found.push(`${where(imported)} (not an entry ${pkg} exports)`)
    }
  }
  return found
}

function exportedSubpaths(packageDir: string): Set<string> {
  const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as {
    exports?: Record<string, unknown>
  }
  return new Set(Object.keys(manifest.exports ?? { '.': true }))
}

/**
 * The files reachable from `entry` (relative to `src`) through relative imports, for rules about
 * what an entry pulls in (no `node:` module in a main entry that runs anywhere).
 */
export function reachableFrom(imports: readonly SourceImport[], entry: string): Set<string> {
  const byFile = new Map<string, SourceImport[]>()
  for (const imported of imports) {
    if (!byFile.has(imported.file)) byFile.set(imported.file, [])
    byFile.get(imported.file)!.push(imported)
  }
  const seen = new Set<string>([entry])
  const queue = [entry]
  while (queue.length > 0) {
    for (const imported of byFile.get(queue.pop()!) ?? []) {
      if (imported.target !== undefined && !seen.has(imported.target)) {
        seen.add(imported.target)
        queue.push(imported.target)
      }
    }
  }
  return seen
}

/** `node:` imports of the files reachable from `entry`. */
export function nodeImportsOf(imports: readonly SourceImport[], entry: string): string[] {
  const reachable = reachableFrom(imports, entry)
  return imports
    .filter((imported) => reachable.has(imported.file) && imported.specifier.startsWith('node:'))
    .map(where)
}

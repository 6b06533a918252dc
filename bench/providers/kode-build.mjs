// Whether the build of a Kode package the benchmark would import is missing or older than its
// sources: figures for a stale build would be figures for other code.
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const PACKAGES = fileURLToPath(new URL('../../packages/', import.meta.url))

function newestMtime(dir) {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs)
  }
  return newest
}

/**
 * A warning when packages/<name> (default `providers`) has sources but no build, or a build older
 * than them.
 */
export function kodeBuildWarning(name = 'providers') {
  const src = join(PACKAGES, name, 'src')
  if (!existsSync(src)) return undefined
  const dist = join(PACKAGES, name, 'dist/index.js')
  const rebuild = `run \`pnpm --filter @kode/${name}... build\` first`
  if (!existsSync(dist)) return `@kode/${name} has sources but no build; ${rebuild}`
  if (newestMtime(src) > statSync(dist).mtimeMs)
    return `@kode/${name}'s build is older than its sources; ${rebuild}`
  return undefined
}

import { existsSync, readdirSync } from 'node:fs'
import { join, relative, resolve, sep } from 'node:path'
import { expect, test } from 'vitest'
import { sourceImports, where } from './import-graph.js'

// Helpers that tests of several packages or examples share live in the root `test/` folder
// (`test/children`, `test/model`, `test/postgres`), never in one member's `test/` for the others to
// reach into: a member's tests import their own files, the root helpers, and other members only
// through their entries (`@kode/*`).

const repo = resolve(import.meta.dirname, '../..')
const members = ['packages', 'examples']
  .flatMap((group) => readdirSync(join(repo, group)).map((name) => join(repo, group, name)))
  .filter((dir) => existsSync(join(dir, 'test')))

const inside = (path: string, dir: string) => path === dir || path.startsWith(dir + sep)

test("a package's or example's tests import no other member's files: shared helpers live in the root test/", () => {
  expect(members.length).toBeGreaterThan(5)
  const found = members.flatMap((dir) =>
    sourceImports(join(dir, 'test')).flatMap((imported) => {
      if (imported.target === undefined) return []
      const path = resolve(dir, 'test', imported.target)
      if (inside(path, dir) || inside(path, join(repo, 'test'))) return []
      return [`${relative(repo, join(dir, 'test'))}/${where(imported)}`]
    }),
  )
  expect(found).toEqual([])
})

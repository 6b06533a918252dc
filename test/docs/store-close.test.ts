import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { blocksOf, docFiles, repo } from './blocks.js'

// A snippet that opens a store holding handles (the file store: lock files and an open history
// per session; the Postgres store: a pool and a LISTEN connection) closes it, so an app copied from
// it lets go of them. `agent.close()` gives the session back but leaves the store open: the store
// is the caller's, possibly shared. The memory store holds no handles and is left out.

/** The pages users copy from: README.md, docs/*.md, and the packages' and examples' READMEs. */
const pages = [
  ...docFiles,
  ...['packages', 'examples'].flatMap((folder) =>
    readdirSync(join(repo, folder))
      .map((name) => `${folder}/${name}/README.md`)
      .filter((file) => existsSync(join(repo, file))),
  ),
]

const OPENS = /\b(?:(?:const|let)\s+(\w+)\s*=\s*(?:await\s+)?)?create(?:File|Postgres)SessionStore\(/g

/** The stores a module opens and never closes: an unnamed one, or a named one without `.close()`. */
function unclosed(code: string): string[] {
  return [...code.matchAll(OPENS)].flatMap(([opened, name]) => {
    if (name === undefined) return [`${opened.trim()}... (not bound to a name, so never closed)`]
    return code.includes(`${name}.close()`) ? [] : [`${name} (no ${name}.close())`]
  })
}

test('every snippet that opens a file or Postgres store closes it', () => {
  const found = pages.flatMap((page) =>
    blocksOf(page)
      // Signature listings (`ts fragment`) show a call's shape, not a program.
      .filter((block) => block.lang === 'ts' && block.tags[0] !== 'fragment')
      .flatMap((block) => unclosed(block.code).map((store) => `${block.where}: ${store}`)),
  )
  expect(found).toEqual([])
})

test('the check finds an unbound store, and a bound one that is never closed', () => {
  expect(unclosed("createAgent({ store: createFileSessionStore({ dir: '.kode' }) })")).toHaveLength(1)
  expect(unclosed('const store = createPostgresSessionStore({})\nawait agent.close()')).toEqual([
    'store (no store.close())',
  ])
  expect(unclosed('const store = createFileSessionStore({ dir })\nawait store.close()')).toEqual([])
})

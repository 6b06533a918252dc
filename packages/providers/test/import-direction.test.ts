import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import {
  folderOf,
  foreignInternals,
  nodeImportsOf,
  reachableFrom,
  type SourceImport,
  sourceImports,
  where,
} from '../../../test/imports/import-graph.js'

const packageDir = join(import.meta.dirname, '..')
const imports = sourceImports(join(packageDir, 'src'))

/** The one place built-in adapters are named: looked up by api, never registered on import. */
const ADAPTER_USERS = ['registry.ts', 'index.ts']

/** Adapters that build on another: OpenRouter is Chat Completions with extensions; Responses shares OpenAI's root. */
const DECLARED = new Set(['apis/openrouter -> apis/openai-chat', 'apis/openai-responses -> apis/openai-chat'])

const adapterOf = (file: string) => {
  const folder = folderOf(file, 2)
  return folder.startsWith('apis/') && folder !== 'apis/shared' ? folder : undefined
}

const internal = (found: SourceImport): found is SourceImport & { target: string } =>
  found.target !== undefined

describe('providers imports', () => {
  test('adapters do not import each other (beyond the declared flavours)', () => {
    const found = imports.filter(internal).filter((i) => {
      const from = adapterOf(i.file)
      const to = adapterOf(i.target)
      return from && to && from !== to && !DECLARED.has(`${from} -> ${to}`)
    })
    expect(found.map(where)).toEqual([])
  })

  test('only the registry and the entry name the built-in adapters; the kit, transport and catalog import none', () => {
    const found = imports
      .filter(internal)
      .filter((i) => adapterOf(i.target) && !adapterOf(i.file) && !ADAPTER_USERS.includes(i.file))
    expect(found.map(where)).toEqual([])
  })

  test('nothing outside testing/ imports the test kit', () => {
    const found = imports
      .filter(internal)
      .filter((i) => folderOf(i.target) === 'testing' && folderOf(i.file) !== 'testing')
    expect(found.map(where)).toEqual([])
  })

  test('other packages only through their public entries', () => {
    expect(foreignInternals(imports, packageDir)).toEqual([])
  })

  test('the main entry and the authoring kit run anywhere: they reach no node: module', () => {
    expect(nodeImportsOf(imports, 'index.ts')).toEqual([])
    expect(nodeImportsOf(imports, 'adapter/index.ts')).toEqual([])
    expect([...reachableFrom(imports, 'adapter/index.ts')].filter((f) => folderOf(f) === 'testing')).toEqual(
      [],
    )
  })
})

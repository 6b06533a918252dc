import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import {
  folderCycles,
  foreignInternals,
  nodeImportsOf,
  sourceImports,
} from '../../../test/imports/import-graph.js'

const packageDir = join(import.meta.dirname, '..')
const imports = sourceImports(join(packageDir, 'src'))
const ENTRIES = ['index.ts', 'helpers.ts']

describe('protocol imports', () => {
  test('no cycle between folders', () => {
    expect(folderCycles(imports, 1, ENTRIES)).toEqual([])
  })

  test('depends on no other package of the workspace', () => {
    expect(imports.filter((i) => i.specifier.startsWith('@kode/')).map((i) => i.specifier)).toEqual([])
    expect(foreignInternals(imports, packageDir)).toEqual([])
  })

  test('its entries run anywhere: they reach no node: module', () => {
    for (const entry of ENTRIES) expect(nodeImportsOf(imports, entry)).toEqual([])
  })
})

import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import {
  folderCycles,
  folderOf,
  foreignInternals,
  nodeImportsOf,
  sourceImports,
  where,
} from '../../../test/imports/import-graph.js'

const packageDir = join(import.meta.dirname, '..')
const imports = sourceImports(join(packageDir, 'src'))
const ENTRIES = ['index.ts', 'file.ts']

describe('session imports', () => {
  test('no cycle between folders', () => {
    expect(folderCycles(imports, 2, ENTRIES)).toEqual([])
  })

  test('the file store is reached only through its own entry', () => {
    const found = imports.filter(
      (i) =>
        i.target !== undefined &&
        folderOf(i.target, 2) === 'store/file' &&
        folderOf(i.file, 2) !== 'store/file' &&
        i.file !== 'file.ts',
    )
    expect(found.map(where)).toEqual([])
  })

  test('replay and export know the store by its interface only, never an implementation', () => {
    const found = imports.filter(
      (i) =>
        i.target !== undefined &&
        ['replay', 'export'].includes(folderOf(i.file)) &&
        folderOf(i.target) === 'store' &&
        i.target !== 'store/session-store.ts',
    )
    expect(found.map(where)).toEqual([])
  })

  test('other packages only through their public entries', () => {
    expect(foreignInternals(imports, packageDir)).toEqual([])
  })

  test('the main entry runs anywhere: it reaches no node: module', () => {
    expect(nodeImportsOf(imports, 'index.ts')).toEqual([])
  })
})

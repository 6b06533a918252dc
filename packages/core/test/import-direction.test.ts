import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import {
  folderCycles,
  foreignInternals,
  layerViolations,
  nodeImportsOf,
  sourceImports,
} from '../../../test/imports/import-graph.js'

const packageDir = join(import.meta.dirname, '..')
const imports = sourceImports(join(packageDir, 'src'))

/**
 * The folders of the engine, lowest first: each imports only the ones before it. The files at the
 * top of `src` (`.`: errors, the tool-name rule, what a task ends with) are the base; a child task
 * is a task, so `sub-agents` builds on `task`, and the agent (which wires `runSubAgent` into a
 * task's scope) sits on top.
 */
const LAYERS = [
  '.',
  'settings',
  'output',
  'formatters',
  'tools',
  'hooks',
  'compaction',
  'task',
  'sub-agents',
  'agent',
]

describe('core imports in one direction', () => {
  test('no folder imports a folder above it in the layer order', () => {
    expect(layerViolations(imports, LAYERS, ['index.ts'])).toEqual([])
  })

  test('no cycle between folders', () => {
    expect(folderCycles(imports, 1, ['index.ts'])).toEqual([])
  })

  test('other packages only through their public entries', () => {
    expect(foreignInternals(imports, packageDir)).toEqual([])
  })

  test('the entry runs anywhere: it reaches no node: module', () => {
    expect(nodeImportsOf(imports, 'index.ts')).toEqual([])
  })

  test('the layer check catches an upward import and a cycle', () => {
    const upward = [
      { file: 'tools/define-tool.ts', line: 3, specifier: '../task/runtime.js', target: 'task/runtime.ts' },
      {
        file: 'task/runtime.ts',
        line: 5,
        specifier: '../tools/define-tool.js',
        target: 'tools/define-tool.ts',
      },
    ]
    expect(layerViolations(upward, LAYERS)).toEqual([
      'tools/define-tool.ts:3: ../task/runtime.js (imports upward: tools -> task)',
    ])
    expect(folderCycles(upward)).toEqual(['task -> tools -> task'])
  })
})

import { join } from 'node:path'
import { expect, test } from 'vitest'
import { foreignInternals, sourceImports } from '../../../test/imports/import-graph.js'

const packageDir = join(import.meta.dirname, '..')

test('durable-dbos uses the other packages only through their public entries', () => {
  expect(foreignInternals(sourceImports(join(packageDir, 'src')), packageDir)).toEqual([])
})

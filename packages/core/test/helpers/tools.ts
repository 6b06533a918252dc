import { defineTool } from '@kode/core'
import { Type } from '@sinclair/typebox'

/** The tool most scenarios call: answers `contents of <path>`. */
export const readFile = defineTool({
  name: 'read_file',
  description: 'Reads a file',
  parameters: Type.Object({ path: Type.String() }),
  execute: ({ path }) => `contents of ${path}`,
})

import { stat } from 'node:fs/promises'
import { defineTool, type Tool } from '@kode/core'
import { Type } from '@sinclair/typebox'
import type { Workspace } from './workspace.js'
import { writeTextAtomic } from './write-text.js'

/** The largest file `write_file` writes. */
export const MAX_WRITE_BYTES = 1024 * 1024

const Parameters = Type.Object({
  path: Type.String({ description: 'File path, relative to the working directory' }),
  content: Type.String({ description: 'The whole new content of the file' }),
})

/**
 * `write_file`: creates a file of the workspace or replaces its whole content (missing parent
 * directories are created). Paths outside the working directory, and symlinks that lead out of
 * it, are refused. It asks for the user's approval first.
 */
export function writeFileTool(workspace: Workspace): Tool<typeof Parameters> {
  return defineTool({
    name: 'write_file',
    description:
      'Creates a text file in the working directory, or replaces the whole content of an existing one. ' +
      'Prefer edit_file to change part of a file. Needs the user’s approval.',
    parameters: Parameters,
    needsApproval: true,
    async execute({ path, content }, ctx) {
      const bytes = Buffer.byteLength(content, 'utf8')
      if (bytes > MAX_WRITE_BYTES)
        throw new Error(`the content is ${bytes} bytes; write_file writes at most ${MAX_WRITE_BYTES}`)
      const file = await workspace.resolveWritable(path)
      const existed = await stat(file).then(
        () => true,
        () => false,
      )
      await writeTextAtomic(workspace, file, content, ctx.signal)
      const lines = content === '' ? 0 : content.split('\n').length - (content.endsWith('\n') ? 1 : 0)
      return `${existed ? 'Replaced' : 'Created'} ${workspace.display(file)} (${lines} lines, ${bytes} bytes).`
    },
  })
}

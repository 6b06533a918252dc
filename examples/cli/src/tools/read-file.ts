import { defineTool, type Tool } from '@kode/core'
import { Type } from '@sinclair/typebox'
import { openRegularFile } from './regular-file.js'
import type { Workspace } from './workspace.js'

const MAX_BYTES = 512 * 1024
const DEFAULT_LINES = 400
const MAX_LINE_CHARS = 500

const Parameters = Type.Object({
  path: Type.String({ description: 'File path, relative to the working directory' }),
  offset: Type.Optional(Type.Integer({ minimum: 1, description: 'First line to read (1-based). Default 1' })),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, description: `How many lines to read. Default ${DEFAULT_LINES}` }),
  ),
})

/**
 * `read_file`: a UTF-8 text file of the workspace as numbered lines (`   12| text`), a window of
 * at most `limit` lines from `offset`. Binary files, files over 512 KiB and anything but a regular file (a FIFO, a device) are refused.
 */
export function readFileTool(workspace: Workspace): Tool<typeof Parameters> {
  return defineTool({
    name: 'read_file',
    description:
      'Reads a UTF-8 text file of the working directory and returns its lines numbered (`   12| text`). ' +
      'Use offset and limit to read a window of a long file.',
    parameters: Parameters,
    async execute({ path, offset = 1, limit = DEFAULT_LINES }, ctx) {
      const file = await workspace.resolve(path)
      const text = await readText(workspace, file, ctx.signal)
      const lines = text.split(/\r?\n/)
      if (lines.at(-1) === '') lines.pop()
      const window = lines.slice(offset - 1, offset - 1 + limit)
      const width = String(offset + window.length - 1).length
      const numbered = window.map((line, i) => `${String(offset + i).padStart(width)}| ${clip(line)}`)
      const shown = workspace.display(file)
      if (window.length === 0) return `${shown} has ${lines.length} lines; none from line ${offset}.`
      const last = offset + window.length - 1
      const more = last < lines.length ? `\n[lines ${offset}-${last} of ${lines.length}]` : ''
      return `${numbered.join('\n')}${more}`
    },
  })
}

async function readText(workspace: Workspace, file: string, signal: AbortSignal): Promise<string> {
  const { handle, stat } = await openRegularFile(workspace, file)
  try {
    if (stat.size > MAX_BYTES)
      throw new Error(`the file is ${stat.size} bytes; read_file reads at most ${MAX_BYTES}`)
    const bytes = await handle.readFile({ signal })
    if (bytes.includes(0)) throw new Error('the file is binary')
    return bytes.toString('utf8')
  } finally {
    await handle.close()
  }
}

function clip(line: string): string {
  return line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line
}

import { defineTool, type Tool } from '@kode/core'
import { Type } from '@sinclair/typebox'
import { openRegularFile } from './regular-file.js'
import type { Workspace } from './workspace.js'
import { MAX_WRITE_BYTES } from './write-file.js'
import { writeTextAtomic } from './write-text.js'

const Parameters = Type.Object({
  path: Type.String({ description: 'File path, relative to the working directory' }),
  oldText: Type.String({ minLength: 1, description: 'The exact text to replace, whitespace included' }),
  newText: Type.String({ description: 'What replaces it' }),
  replaceAll: Type.Optional(
    Type.Boolean({ description: 'Replace every occurrence. Default false: oldText must occur exactly once' }),
  ),
})

/**
 * `edit_file`: replaces an exact piece of text in a file of the workspace. Unless `replaceAll` is
 * set, the text must occur exactly once, so an edit never lands in the wrong place. The result
 * carries the change as a `diff` UI extra. It asks for the user's approval first.
 */
export function editFileTool(workspace: Workspace): Tool<typeof Parameters> {
  return defineTool({
    name: 'edit_file',
    description:
      'Replaces an exact piece of text (oldText, whitespace included) in a text file of the working ' +
      'directory with newText. oldText must occur exactly once unless replaceAll is true: include ' +
      'enough surrounding lines to make it unique. Needs the user’s approval.',
    parameters: Parameters,
    needsApproval: true,
    async execute({ path, oldText, newText, replaceAll = false }, ctx) {
      const file = await workspace.resolveWritable(path)
      const shown = workspace.display(file)
      const { handle, stat } = await openRegularFile(workspace, file).catch(
        (error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOENT') throw new Error(`${shown} does not exist: use write_file to create it`)
          throw error
        },
      )
      const bytes = await (async () => {
        try {
          if (stat.size > MAX_WRITE_BYTES)
            throw new Error(`the file is ${stat.size} bytes; edit_file edits at most ${MAX_WRITE_BYTES}`)
          return await handle.readFile({ signal: ctx.signal })
        } finally {
          await handle.close()
        }
      })()
      if (bytes.length > MAX_WRITE_BYTES)
        throw new Error(`the file is ${bytes.length} bytes; edit_file edits at most ${MAX_WRITE_BYTES}`)
      if (bytes.includes(0)) throw new Error('the file is binary')
      const text = bytes.toString('utf8')
      const count = occurrences(text, oldText)
      if (count === 0)
        throw new Error(`oldText was not found in ${shown}; read the file and copy the text exactly`)
      if (count > 1 && !replaceAll)
        throw new Error(
          `oldText occurs ${count} times in ${shown}; add surrounding lines to make it unique, or pass replaceAll`,
        )
      const firstLine = text.slice(0, text.indexOf(oldText)).split('\n').length
      const edited = replaceAll ? text.split(oldText).join(newText) : text.replace(oldText, () => newText)
      await writeTextAtomic(workspace, file, edited, ctx.signal)
      const where =
        count === 1 ? `at line ${firstLine}` : `${count} occurrences, the first at line ${firstLine}`
      return {
        outputText: `Edited ${shown}: ${where}.`,
        uiExtra: { type: 'diff', path: shown, diff: diffOf(oldText, newText, firstLine) },
      }
    },
  })
}

function occurrences(text: string, piece: string): number {
  let count = 0
  for (let at = text.indexOf(piece); at !== -1; at = text.indexOf(piece, at + piece.length)) count++
  return count
}

/** The replaced lines as a small unified diff hunk (the first occurrence). */
function diffOf(oldText: string, newText: string, line: number): string {
  const removed = oldText.split('\n')
  const added = newText.split('\n')
  return [
    `@@ -${line},${removed.length} +${line},${added.length} @@`,
    ...removed.map((l) => `-${l}`),
    ...added.map((l) => `+${l}`),
  ].join('\n')
}

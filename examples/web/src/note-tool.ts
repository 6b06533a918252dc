import { appendFile, mkdir } from 'node:fs/promises'
import { dirname } from 'node:path'
import { defineTool, type Tool } from '@kode/core'
import { Type } from '@sinclair/typebox'

const Parameters = Type.Object({
  text: Type.String({ description: 'The note, one paragraph of plain text' }),
})

/**
 * `save_note`: appends a note to `file`. It writes to disk, so every call waits for the user's
 * approval (the page shows Approve / Deny). The web example's only tool that changes anything;
 * the offline scripted model calls it when asked to save a note.
 */
export function saveNoteTool(file: string): Tool<typeof Parameters> {
  return defineTool({
    name: 'save_note',
    description: `Appends a note to ${file}. The user approves each call.`,
    parameters: Parameters,
    needsApproval: true,
    concurrent: false,
    async execute({ text }) {
      await mkdir(dirname(file), { recursive: true })
      await appendFile(file, `- ${text.replace(/\s+/g, ' ').trim()}\n`)
      return `saved the note to ${file}`
    },
  })
}

import type { Dirent } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { defineTool, type Tool } from '@kode/core'
import { Type } from '@sinclair/typebox'
import { openDirectory } from './confined-open.js'
import type { Workspace } from './workspace.js'

const MAX_ENTRIES = 500

const Parameters = Type.Object({
  path: Type.Optional(
    Type.String({ description: 'Directory, relative to the working directory. Default .' }),
  ),
})

/** `list_dir`: a directory's entries, sorted, directories marked with a trailing `/`. */
export function listDirTool(workspace: Workspace): Tool<typeof Parameters> {
  return defineTool({
    name: 'list_dir',
    description:
      'Lists a directory of the working directory: one entry per line, directories with a trailing /.',
    parameters: Parameters,
    async execute({ path = '.' }) {
      const dir = await workspace.resolve(path)
      const entries = await listEntries(workspace, dir)
      const names = entries.map(nameOf).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      const shown = names.slice(0, MAX_ENTRIES)
      if (shown.length === 0) return `${workspace.display(dir)} is empty.`
      const more = names.length > shown.length ? `\n[${names.length - shown.length} more entries]` : ''
      return `${shown.join('\n')}${more}`
    },
  })
}

/** Lists `dir` through a handle checked to be where the workspace said it is. */
async function listEntries(workspace: Workspace, dir: string): Promise<Dirent[]> {
  const opened = await openDirectory(workspace, dir)
  try {
    return await readdir(opened.self, { withFileTypes: true })
  } finally {
    await opened.close()
  }
}

function nameOf(entry: Dirent): string {
  return entry.isDirectory() ? `${entry.name}/` : entry.name
}

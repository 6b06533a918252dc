import type { Tool } from '@kode/core'
import { type BashOptions, bashTool } from './bash.js'
import { editFileTool } from './edit-file.js'
import { exploreSubAgent } from './explore.js'
import { listDirTool } from './list-dir.js'
import { readFileTool } from './read-file.js'
import { searchTextTool } from './search-text.js'
import { todoWriteTool } from './todo-write.js'
import type { Workspace } from './workspace.js'
import { writeFileTool } from './write-file.js'

/**
 * The CLI's built-in tools over one workspace: read_file, list_dir, search_text, write_file,
 * edit_file, bash, todo_write, explore. The ones that change something (write_file, edit_file,
 * bash) ask for the user's approval; explore gets the read-only ones only.
 */
export function builtinTools(workspace: Workspace, options: BashOptions): Tool[] {
  const changing = [writeFileTool(workspace), editFileTool(workspace), bashTool(workspace, options)]
  const [read, list, search, ...rest] = readOnlyBuiltinTools(workspace)
  return [read!, list!, search!, ...changing, ...rest]
}

/** The built-in tools that change nothing: read_file, list_dir, search_text, todo_write, explore. */
export function readOnlyBuiltinTools(workspace: Workspace): Tool[] {
  const readOnly = [readFileTool(workspace), listDirTool(workspace), searchTextTool(workspace)]
  return [...readOnly, todoWriteTool(), exploreSubAgent(readOnly)]
}

import type { Tool } from '@kode/core'
import { exploreSubAgent } from './explore.js'
import { listDirTool } from './list-dir.js'
import { readFileTool } from './read-file.js'
import { searchTextTool } from './search-text.js'
import { todoWriteTool } from './todo-write.js'
import type { Workspace } from './workspace.js'

/** The CLI's built-in tools over one workspace: read_file, list_dir, search_text, todo_write, explore. */
export function builtinTools(workspace: Workspace): Tool[] {
  const readOnly = [readFileTool(workspace), listDirTool(workspace), searchTextTool(workspace)]
  return [...readOnly, todoWriteTool(), exploreSubAgent(readOnly)]
}

import { execFileSync } from 'node:child_process'
import { closeSync, constants, mkdtempSync, openSync, realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Tool, ToolContext } from '@kode/core'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { editFileTool } from '../../src/tools/edit-file.js'
import { readFileTool } from '../../src/tools/read-file.js'
import { searchTextTool } from '../../src/tools/search-text.js'
import { openWorkspace, type Workspace } from '../../src/tools/workspace.js'

// A FIFO (or a device) in the workspace is not a file: reading one must be refused at once, never
// wait for a writer that does not come (the agent would hang) or read forever.

const ctx = { signal: new AbortController().signal, progress: () => {} } as unknown as ToolContext
// biome-ignore lint/suspicious/noExplicitAny: tools are called with the arguments the model would send
const call = (tool: Tool, args: any) => tool.execute(args, ctx)

let root: string
let fifo: string
let workspace: Workspace

beforeEach(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'kode-special-')))
  fifo = join(root, 'pipe')
  execFileSync('mkfifo', [fifo])
  workspace = await openWorkspace(root)
})

afterEach(() => {
  // A read still blocked on the FIFO (the bug) is let go, so the test run can end.
  try {
    closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK))
  } catch {}
})

/** What `result` settles with, or `'hung'` when it has not settled within a second. */
async function settle(result: unknown): Promise<unknown> {
  const hung = new Promise((resolve) => setTimeout(() => resolve('hung'), 1000))
  return Promise.race([
    Promise.resolve(result).then(
      (value: unknown) => ({ value }),
      (error: Error) => error.message,
    ),
    hung,
  ])
}

describe('special files', () => {
  test('read_file refuses a FIFO at once', async () => {
    expect(await settle(call(readFileTool(workspace), { path: 'pipe' }))).toMatch(/not a regular file/)
  })

  test('search_text given a FIFO refuses it at once', async () => {
    expect(await settle(call(searchTextTool(workspace), { pattern: 'x', path: 'pipe' }))).toMatch(
      /not a regular file/,
    )
  })

  test('edit_file refuses a FIFO at once', async () => {
    expect(await settle(call(editFileTool(workspace), { path: 'pipe', oldText: 'a', newText: 'b' }))).toMatch(
      /not a regular file/,
    )
  })
})

import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Tool, ToolContext, ToolOutput } from '@kode/core'
import { beforeEach, describe, expect, test } from 'vitest'
import { editFileTool } from '../../src/tools/edit-file.js'
import { listDirTool } from '../../src/tools/list-dir.js'
import { readFileTool } from '../../src/tools/read-file.js'
import { searchTextTool } from '../../src/tools/search-text.js'
import { openWorkspace, type Workspace, WorkspaceError } from '../../src/tools/workspace.js'
import { writeFileTool } from '../../src/tools/write-file.js'

// The workspace confines names; these are the ways a file outside could still be reached through
// one: a hard link someone placed inside, and a directory swapped for a symlink between the check
// of a path and its use.

const ctx = { signal: new AbortController().signal, progress: () => {} } as unknown as ToolContext
// biome-ignore lint/suspicious/noExplicitAny: tools are called with the arguments the model would send
const call = async (tool: Tool, args: any) => tool.execute(args, ctx)
const textOf = (result: string | ToolOutput) => (typeof result === 'string' ? result : result.outputText)
const codeOf = (error: unknown) => (WorkspaceError.is(error) ? error.code : `not a WorkspaceError: ${error}`)
/** What the call was refused with; a test fails on a call that succeeds. */
// biome-ignore lint/suspicious/noExplicitAny: as for call
const refusal = (tool: Tool, args: any): Promise<Error> =>
  call(tool, args).then(
    (result) => {
      throw new Error(`the call succeeded: ${textOf(result)}`)
    },
    (error: Error) => error,
  )

let base: string
let root: string
let workspace: Workspace

beforeEach(async () => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'kode-confine-')))
  root = join(base, 'work')
  mkdirSync(join(root, 'src/deep'), { recursive: true })
  mkdirSync(join(base, 'elsewhere/deep'), { recursive: true })
  workspace = await openWorkspace(root)
})

describe('a hard link to a file outside', () => {
  beforeEach(() => {
    writeFileSync(join(base, 'secret.txt'), 'top secret\n')
    linkSync(join(base, 'secret.txt'), join(root, 'linked.txt'))
  })

  test('write_file refuses it with a hard_linked error, and the other name keeps its content', async () => {
    const error = await refusal(writeFileTool(workspace), { path: 'linked.txt', content: 'x' })
    expect(codeOf(error)).toBe('hard_linked')
    expect(error.message).toMatch(/linked\.txt has 2 hard links/)
    expect(readFileSync(join(base, 'secret.txt'), 'utf8')).toBe('top secret\n')
    expect(readFileSync(join(root, 'linked.txt'), 'utf8')).toBe('top secret\n')
  })

  test('edit_file refuses it too', async () => {
    const error = await refusal(editFileTool(workspace), {
      path: 'linked.txt',
      oldText: 'top',
      newText: 'x',
    })
    expect(codeOf(error)).toBe('hard_linked')
    expect(readFileSync(join(base, 'secret.txt'), 'utf8')).toBe('top secret\n')
  })

  test('read_file reads it: a hard link is a file of the workspace, like a copy', async () => {
    expect(await call(readFileTool(workspace), { path: 'linked.txt' })).toBe('1| top secret')
  })
})

/**
 * `workspace` whose checks pass, then `swap` runs: what another process could do between the
 * check of a path and the tool's use of it.
 */
function racedBy(swap: () => void): Workspace {
  return {
    ...workspace,
    async resolve(path) {
      const resolved = await workspace.resolve(path)
      swap()
      return resolved
    },
    async resolveWritable(path) {
      const resolved = await workspace.resolveWritable(path)
      swap()
      return resolved
    },
  }
}

/**
 * `workspace` whose `display` runs `swap` the first time: `search_text` shows its first match
 * while it still has directories to walk, and another process swaps one of them meanwhile.
 */
function racedAtFirstMatch(swap: () => void): Workspace {
  let swapped = false
  return {
    ...workspace,
    display(absolute) {
      if (!swapped) {
        swapped = true
        swap()
      }
      return workspace.display(absolute)
    },
  }
}

/** Replaces `dir` of the workspace with a symlink to `target` outside it. */
const swapForSymlink = (dir: string, target: string) => () => {
  renameSync(join(root, dir), join(root, `${dir}.moved`))
  symlinkSync(join(base, target), join(root, dir))
}

describe('a directory swapped for a symlink after the check', () => {
  test('write_file does not write through it, at any depth', async () => {
    for (const path of ['src/a.txt', 'src/deep/a.txt']) {
      workspace = await openWorkspace(root)
      const write = writeFileTool(racedBy(swapForSymlink('src', 'elsewhere')))
      const error = await refusal(write, { path, content: 'x' })
      expect(codeOf(error)).toBe('changed')
      expect(existsSync(join(base, 'elsewhere', path.slice('src/'.length)))).toBe(false)
      renameSync(join(root, 'src'), join(base, `link-${path.length}`))
      renameSync(join(root, 'src.moved'), join(root, 'src'))
    }
  })

  test('write_file creates no directory through it', async () => {
    const write = writeFileTool(racedBy(swapForSymlink('src', 'elsewhere')))
    const error = await refusal(write, { path: 'src/new/dirs/a.txt', content: 'x' })
    expect(codeOf(error)).toBe('changed')
    expect(existsSync(join(base, 'elsewhere/new'))).toBe(false)
  })

  test('edit_file neither reads nor changes the file it now leads to', async () => {
    writeFileSync(join(root, 'src/deep/a.ts'), 'const a = 1\n')
    writeFileSync(join(base, 'elsewhere/deep/a.ts'), 'const a = 1\n')
    const edit = editFileTool(racedBy(swapForSymlink('src', 'elsewhere')))
    const error = await refusal(edit, { path: 'src/deep/a.ts', oldText: '1', newText: '2' })
    expect(codeOf(error)).toBe('changed')
    expect(readFileSync(join(base, 'elsewhere/deep/a.ts'), 'utf8')).toBe('const a = 1\n')
  })

  test('read_file and search_text do not read the file it now leads to', async () => {
    writeFileSync(join(root, 'src/deep/a.txt'), 'harmless\n')
    writeFileSync(join(base, 'elsewhere/deep/a.txt'), 'top secret\n')
    const read = readFileTool(racedBy(swapForSymlink('src', 'elsewhere')))
    const error = await refusal(read, { path: 'src/deep/a.txt' })
    expect(codeOf(error)).toBe('changed')
    renameSync(join(root, 'src'), join(base, 'link-1'))
    renameSync(join(root, 'src.moved'), join(root, 'src'))
    const search = searchTextTool(racedBy(swapForSymlink('src', 'elsewhere')))
    const found = await call(search, { pattern: 'secret', path: 'src/deep/a.txt' }).then(textOf, codeOf)
    expect(found).toBe('changed')
  })

  test('search_text given it does not walk the directory it now leads to, nor name what is there', async () => {
    writeFileSync(join(base, 'elsewhere/deep/private-name.txt'), 'top secret\n')
    const search = searchTextTool(racedBy(swapForSymlink('src', 'elsewhere')))
    const error = await refusal(search, { pattern: 'secret', path: 'src' })
    expect(codeOf(error)).toBe('changed')
    expect(error.message).toMatch(/^src changed while kode was using it/)
    expect(error.message).not.toContain('private-name')
  })

  test('search_text does not walk into it when it is swapped during the search', async () => {
    // a.txt comes before src: its match is shown, then src is swapped before the walk reaches it.
    writeFileSync(join(root, 'a.txt'), 'a secret of the workspace\n')
    writeFileSync(join(base, 'elsewhere/deep/private-name.txt'), 'top secret\n')
    const search = searchTextTool(racedAtFirstMatch(swapForSymlink('src', 'elsewhere')))
    const error = await refusal(search, { pattern: 'secret' })
    expect(codeOf(error)).toBe('changed')
    expect(error.message).toMatch(/^src changed while kode was using it/)
    expect(error.message).not.toContain('private-name')
  })

  test('list_dir does not list the directory it now leads to', async () => {
    writeFileSync(join(base, 'elsewhere/deep/private-name.txt'), '')
    const list = listDirTool(racedBy(swapForSymlink('src', 'elsewhere')))
    const listed = await call(list, { path: 'src/deep' }).then(textOf, codeOf)
    expect(listed).toBe('changed')
  })
})

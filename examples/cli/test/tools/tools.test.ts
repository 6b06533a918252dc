import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Tool, ToolContext } from '@kode/core'
import { beforeAll, describe, expect, test } from 'vitest'
import { SlowPatternError } from '../../src/tools/line-matcher.js'
import { listDirTool } from '../../src/tools/list-dir.js'
import { readFileTool } from '../../src/tools/read-file.js'
import { searchTextTool } from '../../src/tools/search-text.js'
import { todoWriteTool } from '../../src/tools/todo-write.js'
import { openWorkspace, type Workspace, WorkspaceError } from '../../src/tools/workspace.js'

const ctx = { signal: new AbortController().signal } as ToolContext
// biome-ignore lint/suspicious/noExplicitAny: tools are called with the arguments the model would send
const call = (tool: Tool, args: any) => tool.execute(args, ctx)

let root: string
let outside: string
let workspace: Workspace

beforeAll(async () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'kode-tools-')))
  root = join(base, 'work')
  outside = join(base, 'secret.txt')
  mkdirSync(join(root, 'src/deep'), { recursive: true })
  mkdirSync(join(root, 'node_modules/dep'), { recursive: true })
  writeFileSync(outside, 'top secret\n')
  writeFileSync(join(root, 'README.md'), '# Title\n\nline three\nline four\n')
  writeFileSync(join(root, 'src/a.ts'), 'export function createAgent() {}\nconst x = 1\n')
  writeFileSync(join(root, 'src/deep/b.ts'), 'createAgent()\n')
  writeFileSync(join(root, 'node_modules/dep/index.js'), 'createAgent()\n')
  writeFileSync(join(root, 'image.bin'), Buffer.from([1, 0, 2]))
  symlinkSync(outside, join(root, 'escape.txt'))
  workspace = await openWorkspace(root)
})

describe('workspace', () => {
  test('resolves a relative path inside the root', async () => {
    expect(await workspace.resolve('src/a.ts')).toBe(join(root, 'src/a.ts'))
  })

  test('rejects a path that climbs out with ..', async () => {
    await expect(workspace.resolve('../secret.txt')).rejects.toThrow(/outside the working directory/)
  })

  test('rejects an absolute path outside the root', async () => {
    await expect(workspace.resolve(outside)).rejects.toSatisfy(WorkspaceError.is)
  })

  test('rejects a symlink that leads outside', async () => {
    await expect(workspace.resolve('escape.txt')).rejects.toThrow(/leads outside/)
  })

  test('says when a path does not exist', async () => {
    await expect(workspace.resolve('nope.md')).rejects.toThrow('nope.md does not exist')
  })
})

describe('read_file', () => {
  test('returns numbered lines', async () => {
    expect(await call(readFileTool(workspace), { path: 'README.md' })).toBe(
      '1| # Title\n2| \n3| line three\n4| line four',
    )
  })

  test('reads a window and says where it is', async () => {
    expect(await call(readFileTool(workspace), { path: 'README.md', offset: 3, limit: 1 })).toBe(
      '3| line three\n[lines 3-3 of 4]',
    )
  })

  test('refuses a binary file', async () => {
    await expect(call(readFileTool(workspace), { path: 'image.bin' })).rejects.toThrow('binary')
  })

  test('refuses a file outside the workspace', async () => {
    await expect(call(readFileTool(workspace), { path: '../secret.txt' })).rejects.toThrow(/outside/)
  })
})

describe('list_dir', () => {
  test('lists entries sorted, directories marked', async () => {
    expect(await call(listDirTool(workspace), { path: 'src' })).toBe('a.ts\ndeep/')
  })

  test('lists the root by default', async () => {
    expect(await call(listDirTool(workspace), {})).toContain(
      'README.md\nescape.txt\nimage.bin\nnode_modules/\nsrc/',
    )
  })

  test('refuses a directory outside the workspace', async () => {
    await expect(call(listDirTool(workspace), { path: '..' })).rejects.toThrow(/outside/)
  })
})

describe('search_text', () => {
  test('returns path:line: text, skipping node_modules', async () => {
    expect(await call(searchTextTool(workspace), { pattern: 'createAgent' })).toBe(
      'src/a.ts:1: export function createAgent() {}\nsrc/deep/b.ts:1: createAgent()',
    )
  })

  test('stops at maxResults and says so', async () => {
    const out = await call(searchTextTool(workspace), { pattern: 'createAgent', maxResults: 1 })
    expect(out).toBe(
      'src/a.ts:1: export function createAgent() {}\n[stopped after 1 matches; narrow the search]',
    )
  })

  test('closes every directory it walked, also when it stops early', async () => {
    // What this process holds open in the workspace (Linux: its /proc/self/fd links).
    const held = () =>
      readdirSync('/proc/self/fd')
        .map((fd) => {
          try {
            return readlinkSync(`/proc/self/fd/${fd}`)
          } catch {
            return '' // the fd readdir itself used, closed by now
          }
        })
        .filter((target) => target === root || target.startsWith(`${root}/`))
    await call(searchTextTool(workspace), { pattern: 'createAgent' })
    await call(searchTextTool(workspace), { pattern: 'createAgent', maxResults: 1 })
    expect(held()).toEqual([])
  })

  test('says when nothing matches', async () => {
    expect(await call(searchTextTool(workspace), { pattern: 'zebra', path: 'src' })).toBe(
      'No matches for /zebra/ in src.',
    )
  })

  test('reports an invalid regular expression', async () => {
    await expect(call(searchTextTool(workspace), { pattern: '(' })).rejects.toThrow(
      'invalid regular expression',
    )
  })

  test('does not follow a symlink out of the workspace', async () => {
    expect(await call(searchTextTool(workspace), { pattern: 'top secret' })).toMatch(/^No matches/)
  })

  /** A workspace holding a line against which ^(a+)+$ backtracks through 2^40 ways of splitting the a's. */
  async function slowWorkspace(): Promise<Workspace> {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'kode-slow-')))
    mkdirSync(join(dir, 'slow'))
    writeFileSync(join(dir, 'slow/line.txt'), `ok\n${'a'.repeat(40)}!\n`)
    return openWorkspace(dir)
  }

  test('stops a catastrophically slow pattern at its time limit, and the next search works', async () => {
    const tool = searchTextTool(await slowWorkspace(), { matchTimeoutMs: 300 })
    await expect(call(tool, { pattern: '^(a+)+$', path: 'slow' })).rejects.toSatisfy(
      (error: Error) =>
        error instanceof SlowPatternError && /took over 300 ms on one file/.test(error.message),
    )
    expect(await call(tool, { pattern: '^ok$', path: 'slow' })).toBe('slow/line.txt:1: ok')
  })

  test('an abort ends a slow match at once', async () => {
    const controller = new AbortController()
    const tool = searchTextTool(await slowWorkspace(), { matchTimeoutMs: 60_000 })
    const search = tool.execute({ pattern: '^(a+)+$', path: 'slow' }, {
      signal: controller.signal,
    } as ToolContext)
    setTimeout(() => controller.abort(new Error('user interrupt')), 100)
    await expect(search).rejects.toThrow('user interrupt')
  })
})

describe('todo_write', () => {
  test('returns the list as a todo_list UI extra with the todo_change side effect', async () => {
    const todos = [
      { content: 'Read', status: 'completed' },
      { content: 'Write', status: 'pending' },
    ]
    expect(await call(todoWriteTool(), { todos })).toEqual({
      outputText: 'Todo list updated (1/2 done):\n[x] Read\n[ ] Write',
      uiExtra: { type: 'todo_list', todos },
      sideEffects: ['todo_change'],
    })
  })
})

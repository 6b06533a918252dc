import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Tool, ToolContext, ToolOutput } from '@kode/core'
import { beforeEach, describe, expect, test } from 'vitest'
import { withoutKeys } from '../../src/app.js'
import { bashTool, MAX_OUTPUT_BYTES } from '../../src/tools/bash.js'
import { editFileTool } from '../../src/tools/edit-file.js'
import { builtinTools } from '../../src/tools/index.js'
import { openWorkspace, type Workspace } from '../../src/tools/workspace.js'
import { writeFileTool } from '../../src/tools/write-file.js'

const ctxWith = (signal: AbortSignal) => ({ signal, progress: () => {} }) as unknown as ToolContext
// biome-ignore lint/suspicious/noExplicitAny: tools are called with the arguments the model would send
const call = (tool: Tool, args: any, signal = new AbortController().signal) =>
  tool.execute(args, ctxWith(signal))
const textOf = (result: string | ToolOutput) => (typeof result === 'string' ? result : result.outputText)

let base: string
let root: string
let workspace: Workspace

beforeEach(async () => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'kode-change-')))
  root = join(base, 'work')
  mkdirSync(join(root, 'src'), { recursive: true })
  mkdirSync(join(base, 'elsewhere'))
  writeFileSync(join(base, 'secret.txt'), 'top secret\n')
  workspace = await openWorkspace(root)
})

describe('tools that change something ask for approval', () => {
  test('write_file, edit_file and bash need approval; the read-only tools do not', async () => {
    const asks: Record<string, boolean> = {}
    for (const tool of builtinTools(workspace, { env: {} })) {
      asks[tool.name] = await tool.needsApproval({} as never, {} as never)
    }
    expect(asks).toEqual({
      read_file: false,
      list_dir: false,
      search_text: false,
      write_file: true,
      edit_file: true,
      bash: true,
      todo_write: false,
      explore: false,
    })
  })
})

describe('write_file', () => {
  const write = () => writeFileTool(workspace)

  test('creates a file, and the directories it needs', async () => {
    expect(await call(write(), { path: 'src/new/a.txt', content: 'one\ntwo\n' })).toBe(
      'Created src/new/a.txt (2 lines, 8 bytes).',
    )
    expect(readFileSync(join(root, 'src/new/a.txt'), 'utf8')).toBe('one\ntwo\n')
  })

  test('replaces a file whole, keeping its permission bits, and leaves no temporary file', async () => {
    writeFileSync(join(root, 'run.sh'), 'old\n')
    chmodSync(join(root, 'run.sh'), 0o750)
    expect(await call(write(), { path: 'run.sh', content: 'echo new\n' })).toBe(
      'Replaced run.sh (1 lines, 9 bytes).',
    )
    expect(readFileSync(join(root, 'run.sh'), 'utf8')).toBe('echo new\n')
    expect(statSync(join(root, 'run.sh')).mode & 0o777).toBe(0o750)
    expect(readdirSync(root).sort()).toEqual(['run.sh', 'src'])
  })

  test('refuses a path that climbs out with .., and an absolute path outside', async () => {
    await expect(call(write(), { path: '../escape.txt', content: 'x' })).rejects.toThrow(
      /outside the working directory/,
    )
    await expect(call(write(), { path: join(base, 'secret.txt'), content: 'x' })).rejects.toThrow(
      /outside the working directory/,
    )
    expect(existsSync(join(base, 'escape.txt'))).toBe(false)
    expect(readFileSync(join(base, 'secret.txt'), 'utf8')).toBe('top secret\n')
  })

  test('refuses a symlinked file or directory that leads outside, and a dangling symlink', async () => {
    symlinkSync(join(base, 'secret.txt'), join(root, 'link.txt'))
    symlinkSync(join(base, 'elsewhere'), join(root, 'out'))
    symlinkSync(join(base, 'missing.txt'), join(root, 'dangling.txt'))
    await expect(call(write(), { path: 'link.txt', content: 'x' })).rejects.toThrow(/leads outside/)
    await expect(call(write(), { path: 'out/new.txt', content: 'x' })).rejects.toThrow(/leads outside/)
    await expect(call(write(), { path: 'out/deeper/new.txt', content: 'x' })).rejects.toThrow(/leads outside/)
    await expect(call(write(), { path: 'dangling.txt', content: 'x' })).rejects.toThrow(
      /symlink to a file that does not exist/,
    )
    expect(readFileSync(join(base, 'secret.txt'), 'utf8')).toBe('top secret\n')
    expect(existsSync(join(base, 'elsewhere/new.txt'))).toBe(false)
    expect(existsSync(join(base, 'missing.txt'))).toBe(false)
  })

  test('writes through a symlink that stays inside, to its target', async () => {
    writeFileSync(join(root, 'src/target.txt'), 'old\n')
    symlinkSync(join(root, 'src/target.txt'), join(root, 'alias.txt'))
    await call(write(), { path: 'alias.txt', content: 'new\n' })
    expect(readFileSync(join(root, 'src/target.txt'), 'utf8')).toBe('new\n')
  })

  test('refuses a directory, and a file used as a directory', async () => {
    writeFileSync(join(root, 'plain.txt'), 'x')
    await expect(call(write(), { path: 'src', content: 'x' })).rejects.toThrow(/is a directory/)
    await expect(call(write(), { path: 'plain.txt/a.txt', content: 'x' })).rejects.toThrow(/not a directory/)
  })
})

describe('edit_file', () => {
  const edit = () => editFileTool(workspace)

  test('replaces text that occurs once, and shows the change as a diff', async () => {
    writeFileSync(join(root, 'a.ts'), 'const a = 1\nconst b = 2\nconst c = 3\n')
    const result = await call(edit(), { path: 'a.ts', oldText: 'const b = 2', newText: 'const b = 20\n// b' })
    expect(result).toEqual({
      outputText: 'Edited a.ts: at line 2.',
      uiExtra: { type: 'diff', path: 'a.ts', diff: '@@ -2,1 +2,2 @@\n-const b = 2\n+const b = 20\n+// b' },
    })
    expect(readFileSync(join(root, 'a.ts'), 'utf8')).toBe('const a = 1\nconst b = 20\n// b\nconst c = 3\n')
  })

  test('refuses text that occurs several times unless replaceAll, and text that is not there', async () => {
    writeFileSync(join(root, 'a.ts'), 'x = 1\nx = 1\n')
    await expect(call(edit(), { path: 'a.ts', oldText: 'x = 1', newText: 'y' })).rejects.toThrow(
      /occurs 2 times in a\.ts/,
    )
    await expect(call(edit(), { path: 'a.ts', oldText: 'z', newText: 'y' })).rejects.toThrow(/was not found/)
    expect(readFileSync(join(root, 'a.ts'), 'utf8')).toBe('x = 1\nx = 1\n')
    expect(
      textOf(await call(edit(), { path: 'a.ts', oldText: 'x = 1', newText: '$&y', replaceAll: true })),
    ).toBe('Edited a.ts: 2 occurrences, the first at line 1.')
    // Replacement text is taken literally (no `$&` patterns).
    expect(readFileSync(join(root, 'a.ts'), 'utf8')).toBe('$&y\n$&y\n')
  })

  test('refuses a missing file, a binary file and a symlink that leads outside', async () => {
    writeFileSync(join(root, 'bin.dat'), Buffer.from([1, 0, 2]))
    symlinkSync(join(base, 'secret.txt'), join(root, 'link.txt'))
    await expect(call(edit(), { path: 'nope.ts', oldText: 'a', newText: 'b' })).rejects.toThrow(
      /does not exist: use write_file/,
    )
    await expect(call(edit(), { path: 'bin.dat', oldText: 'a', newText: 'b' })).rejects.toThrow(/binary/)
    await expect(call(edit(), { path: 'link.txt', oldText: 'top', newText: 'b' })).rejects.toThrow(
      /leads outside/,
    )
    expect(readFileSync(join(base, 'secret.txt'), 'utf8')).toBe('top secret\n')
  })
})

describe('bash', () => {
  const bash = (env: NodeJS.ProcessEnv = { PATH: process.env.PATH }) =>
    bashTool(workspace, { env, killGraceMs: 200 })

  /** The live (not zombie) members of a process group, from /proc. */
  const groupMembers = (pgid: number) =>
    readdirSync('/proc').filter((entry) => {
      if (!/^\d+$/.test(entry)) return false
      try {
        // `pid (comm) state ppid pgrp ...`: comm may hold spaces, so read after its closing paren.
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
        const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
        return Number(pgrp) === pgid && state !== 'Z'
      } catch {
        return false
      }
    })
  /** Waits (a bounded poll: signals are delivered asynchronously) until the group has no live member. */
  const groupGone = async (pgid: number) => {
    for (let tries = 0; tries < 100 && groupMembers(pgid).length > 0; tries++)
      await new Promise((resolve) => setTimeout(resolve, 50))
    return groupMembers(pgid).length === 0
  }

  test('runs in the working directory with stdout and stderr interleaved', async () => {
    expect(await call(bash(), { command: 'pwd; echo out; echo err >&2' })).toBe(`${root}\nout\nerr`)
  })

  test('a non-zero exit is an error result that keeps the output', async () => {
    expect(await call(bash(), { command: 'echo partial; exit 3' })).toEqual({
      outputText: 'partial\n[exit code 3]',
      status: 'error',
    })
  })

  test('has no stdin: a command that reads it ends instead of waiting', async () => {
    expect(await call(bash(), { command: 'cat; echo after' })).toBe('after')
  })

  test('a timeout stops the whole process group, background children included', async () => {
    const result = await call(bash(), {
      command: 'echo $$ > group.pid; sleep 60 & echo started; wait',
      timeoutSeconds: 1,
    })
    expect(result).toEqual({ outputText: 'started\n[timed out after 1s: stopped]', status: 'error' })
    const pid = Number(readFileSync(join(root, 'group.pid'), 'utf8'))
    expect(await groupGone(pid)).toBe(true)
  })

  test('the abort signal stops the whole process group', async () => {
    const controller = new AbortController()
    const running = call(bash(), { command: 'echo $$ > group.pid; sleep 60 & sleep 60' }, controller.signal)
    while (!existsSync(join(root, 'group.pid')) || readFileSync(join(root, 'group.pid'), 'utf8') === '')
      await new Promise((resolve) => setTimeout(resolve, 20))
    controller.abort()
    expect(await running).toEqual({ outputText: '(no output)\n[interrupted: stopped]', status: 'error' })
    expect(await groupGone(Number(readFileSync(join(root, 'group.pid'), 'utf8')))).toBe(true)
  })

  test('caps the output, keeping its head and tail', async () => {
    const text = textOf(
      await call(bash(), { command: "printf 'HEAD'; head -c 200000 /dev/zero | tr '\\0' a; printf 'TAIL'" }),
    )
    expect(text.startsWith('HEADaaa')).toBe(true)
    expect(text.endsWith('aaaTAIL')).toBe(true)
    expect(text).toContain(`[… ${200_008 - MAX_OUTPUT_BYTES} bytes of output left out …]`)
    expect(text.length).toBeLessThan(MAX_OUTPUT_BYTES + 100)
  })

  test('commands never see the API keys of the CLI', async () => {
    const env = withoutKeys(
      { PATH: process.env.PATH, ANTHROPIC_API_KEY: 'sk-ant-secret', MY_KEY: 'sk-mine', HOME: '/home/me' },
      'MY_KEY',
    )
    expect(await call(bash(env), { command: 'env | grep -c -e sk- ; echo "$HOME"' })).toBe('0\n/home/me')
  })
})

import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { nodeInterpreter, runInSandbox } from '../src/index.js'

const limits = { timeoutMs: 10_000, outputLimit: 20_000 }

describe('runInSandbox (Node.js programs)', () => {
  let outside: string
  beforeEach(() => {
    outside = mkdtempSync(join(tmpdir(), 'kode-codeact-test-'))
  })
  afterEach(() => rmSync(outside, { recursive: true, force: true }))

  test('runs the program in a fresh directory of its own, removed afterwards', async () => {
    const code =
      'import fs from "node:fs"\nfs.writeFileSync("out.txt", "x")\nconsole.log(process.cwd())\nconsole.log(fs.readdirSync(".").sort().join(","))'
    const result = await runInSandbox(nodeInterpreter, code, limits)
    const [dir, files] = result.output.trim().split('\n') as [string, string]
    expect(result).toMatchObject({ exitCode: 0, timedOut: false, truncated: false, aborted: false })
    expect(dir.startsWith(tmpdir())).toBe(true)
    expect(files).toBe('main.mjs,out.txt')
    expect(() => writeFileSync(join(dir, 'later.txt'), '')).toThrow(/ENOENT/)
  })

  test('passes none of the host environment but PATH', async () => {
    process.env.KODE_TEST_SECRET = 'sk-secret-value'
    try {
      const result = await runInSandbox(nodeInterpreter, 'console.log(JSON.stringify(process.env))', limits)
      const env = JSON.parse(result.output) as Record<string, string>
      expect(Object.keys(env).sort()).toEqual(['HOME', 'LANG', 'PATH', 'TMPDIR'])
      expect(result.output).not.toContain('sk-secret-value')
    } finally {
      delete process.env.KODE_TEST_SECRET
    }
  })

  test('a program may not read files outside its directory', async () => {
    writeFileSync(join(outside, 'private.txt'), 'TOP-SECRET-CONTENT')
    const code = `import fs from "node:fs"\nconsole.log(fs.readFileSync(${JSON.stringify(join(outside, 'private.txt'))}, "utf8"))`
    const result = await runInSandbox(nodeInterpreter, code, limits)
    expect(result.exitCode).not.toBe(0)
    expect(result.output).toContain('ERR_ACCESS_DENIED')
    expect(result.output).not.toContain('TOP-SECRET-CONTENT')
  })

  test('a program may not write outside its directory, start a process or start a worker', async () => {
    const target = join(outside, 'written.txt')
    const attempt = (what: string, action: string) =>
      `try { ${action}; console.log("${what}: allowed") } catch (error) { console.log("${what}:", error.code) }`
    const code = [
      'import fs from "node:fs"',
      'import { execFileSync } from "node:child_process"',
      'import { Worker } from "node:worker_threads"',
      attempt('write', `fs.writeFileSync(${JSON.stringify(target)}, "x")`),
      attempt('process', 'execFileSync("true")'),
      attempt('worker', 'new Worker("0", { eval: true })'),
    ].join('\n')
    const result = await runInSandbox(nodeInterpreter, code, limits)
    expect(result.output.trim().split('\n')).toEqual([
      'write: ERR_ACCESS_DENIED',
      'process: ERR_ACCESS_DENIED',
      'worker: ERR_ACCESS_DENIED',
    ])
    expect(existsSync(target)).toBe(false)
  })

  test('a program that leaves a detached process holding its output still ends when it exits', async () => {
    // The grandchild starts a session of its own (out of the program's process group) and keeps the
    // program's stdout open for a minute: the run must not wait for it.
    const code =
      'import { spawn } from "node:child_process"\nconst child = spawn("sleep", ["60"], { detached: true, stdio: ["ignore", "inherit", "inherit"] })\nchild.unref()\nconsole.log("done", child.pid)'
    const result = await runInSandbox(
      { file: 'main.mjs', command: () => ({ command: process.execPath, args: ['main.mjs'] }) },
      code,
      { timeoutMs: 30_000, outputLimit: 1000 },
    )
    const pid = Number(/^done (\d+)\n$/.exec(result.output)?.[1])
    try {
      expect(result).toMatchObject({ exitCode: 0, timedOut: false })
      expect(pid).toBeGreaterThan(0)
    } finally {
      if (pid > 0) process.kill(pid, 'SIGKILL')
    }
  })

  test('a program that runs past the time limit is killed', async () => {
    const result = await runInSandbox(
      nodeInterpreter,
      'console.log("started")\nsetInterval(() => {}, 1000)',
      // Long enough for Node to start and print on a loaded machine (at 300 ms it did not, once).
      { timeoutMs: 2_000, outputLimit: 1000 },
    )
    expect(result).toMatchObject({ timedOut: true, exitCode: null, output: 'started\n' })
  })

  test('a program that writes past the output limit is stopped, its output cut at the limit', async () => {
    const code = 'for (;;) process.stdout.write("x".repeat(10000))'
    const result = await runInSandbox(nodeInterpreter, code, { timeoutMs: 10_000, outputLimit: 5000 })
    expect(result).toMatchObject({ truncated: true, exitCode: null, timedOut: false })
    expect(result.output).toBe('x'.repeat(5000))
  })

  test('output cut at the limit ends on a whole character, within the limit', async () => {
    // Two-byte characters and an odd limit: the last one would be cut in half.
    const code = 'for (;;) process.stdout.write("é".repeat(1000))'
    const result = await runInSandbox(nodeInterpreter, code, { timeoutMs: 10_000, outputLimit: 5001 })
    expect(result.truncated).toBe(true)
    expect(result.output).toBe('é'.repeat(2500))
  })

  test('an aborted signal stops the program', async () => {
    const controller = new AbortController()
    const running = runInSandbox(nodeInterpreter, 'console.log("up")\nsetInterval(() => {}, 1000)', {
      ...limits,
      signal: controller.signal,
    })
    setTimeout(() => controller.abort(), 200)
    expect(await running).toMatchObject({ aborted: true, exitCode: null, timedOut: false })
  })

  test('stdout and stderr are both kept', async () => {
    const result = await runInSandbox(
      nodeInterpreter,
      'console.log("out")\nconsole.error("err")\nprocess.exitCode = 3',
      limits,
    )
    expect(result.exitCode).toBe(3)
    expect(result.output.split('\n').sort()).toEqual(['', 'err', 'out'])
  })
})

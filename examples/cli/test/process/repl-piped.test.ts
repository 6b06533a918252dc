import { existsSync, readFileSync, realpathSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { runKode, tempDir } from './run-kode.js'

// The REPL with its input piped: each line a prompt or a command, then end of input.
describe('the REPL on piped input', () => {
  test('/fork before any task says there is nothing to fork, not an unknown session', async () => {
    const dir = realpathSync(tempDir('kode-piped-'))
    const { code, stdout } = await runKode([], {}, dir, '/fork\n')
    expect(code).toBe(0)
    expect(stdout).toContain('✗ nothing to fork yet: run a task first')
    expect(stdout).not.toContain('no session')
  })

  test('a prompt shown as it is read from the pipe carries none of its escape sequences to stdout', async () => {
    const dir = realpathSync(tempDir('kode-piped-'))
    // The second line is read while the first task runs, and shown at the next prompt.
    const prompt = 'say \x1b[31mred\x1b]0;title\x07 now'
    const { code, stdout } = await runKode([], {}, dir, `hello\n${prompt}\n`)
    expect(code).toBe(0)
    expect(stdout).toContain('› say [31mred]0;title now\n')
    for (const char of ['\x1b', '\x07']) expect(stdout).not.toContain(char)
  })

  test('/export writes to a file name with spaces in it, whole', async () => {
    const dir = realpathSync(tempDir('kode-piped-'))
    const { code, stdout } = await runKode([], {}, dir, 'hello\n/export my transcript.html\n')
    expect(code).toBe(0)
    expect(stdout).toContain('Exported to my transcript.html\n')
    expect(existsSync(join(dir, 'my'))).toBe(false)
    expect(readFileSync(join(dir, 'my transcript.html'), 'utf8')).toMatch(/^<!doctype html>/i)
  })
})

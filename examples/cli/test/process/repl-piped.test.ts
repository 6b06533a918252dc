import { realpathSync } from 'node:fs'
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
})

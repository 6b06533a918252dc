import { spawnSync } from 'node:child_process'
import { appendFileSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { runKode, tempDir } from './run-kode.js'

/** A working directory with one stored session (a finished `exec`); resolves with both. */
async function storedSession(): Promise<{ dir: string; id: string; sessionDir: string }> {
  const dir = realpathSync(tempDir('kode-store-warnings-'))
  const { code } = await runKode(['exec', 'hello'], {}, dir)
  expect(code).toBe(0)
  const [id] = readdirSync(join(dir, '.kode/sessions'))
  return { dir, id: id!, sessionDir: join(dir, '.kode/sessions', id!) }
}

/** The lines of `stderr` that are kode's warnings. */
function warnings(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line.startsWith('kode: warning: '))
}

// What the store repaired or ignored is told on stderr, once, naming the session and the file.
describe('the session store repaired or ignored something', () => {
  test('exec --resume of a history cut off mid-line says the line was ignored, then removed', async () => {
    const { dir, id, sessionDir } = await storedSession()
    const history = join(sessionDir, 'history.jsonl')
    appendFileSync(history, '{"v":1,"role":"us')
    const { code, stdout, stderr } = await runKode(['exec', '--resume', id, 'again'], {}, dir)
    expect(code, stderr).toBe(0)
    expect(warnings(stderr)).toEqual([
      `kode: warning: session ${id}: ignored the cut-off last line of ${history} (line 5, 17 bytes), left by a write that did not finish`,
      `kode: warning: session ${id}: removed the cut-off last line of ${history} (17 bytes) before appending`,
    ])
    expect(stdout).not.toContain('warning')
    expect(readFileSync(history, 'utf8')).not.toContain('"us\n')
  })

  test('exec --resume of a session locked by a process that is gone says the lock was removed', async () => {
    const { dir, id, sessionDir } = await storedSession()
    const dead = spawnSync(process.execPath, ['-e', '']).pid!
    const lock = join(sessionDir, 'writer.lock')
    writeFileSync(lock, JSON.stringify({ pid: dead, hostname: hostname(), acquiredAt: 1, token: 'old' }))
    const { code, stderr } = await runKode(['exec', '--resume', id, 'again'], {}, dir)
    expect(code, stderr).toBe(0)
    expect(warnings(stderr)).toEqual([
      `kode: warning: session ${id}: removed the lock ${lock} left by process ${dead}, which no longer runs`,
    ])
  })

  test('the REPL resuming a history cut off mid-line warns on stderr, not in its display', async () => {
    const { dir, id, sessionDir } = await storedSession()
    const history = join(sessionDir, 'history.jsonl')
    appendFileSync(history, '{"v":1,"role":"us')
    const { code, stdout, stderr } = await runKode(['--resume', id], {}, dir, 'again\n')
    expect(code, stderr).toBe(0)
    expect(warnings(stderr)).toEqual([
      `kode: warning: session ${id}: ignored the cut-off last line of ${history} (line 5, 17 bytes), left by a write that did not finish`,
      `kode: warning: session ${id}: removed the cut-off last line of ${history} (17 bytes) before appending`,
    ])
    expect(stdout).not.toContain('cut-off')
  })
})

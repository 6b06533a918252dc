import { readdirSync, readFileSync, realpathSync, renameSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { runKode, tempDir } from './run-kode.js'

/** A working directory with one stored session (a finished `exec`); resolves with both. */
async function storedSession(): Promise<{ dir: string; id: string; sessionDir: string }> {
  const dir = realpathSync(tempDir('kode-unreadable-'))
  const { code } = await runKode(['exec', 'hello'], {}, dir)
  expect(code).toBe(0)
  const [id] = readdirSync(join(dir, '.kode/sessions'))
  return { dir, id: id!, sessionDir: join(dir, '.kode/sessions', id!) }
}

// A session file that cannot be read is named, with why; the user's current session is kept.
describe('a stored session that cannot be read', () => {
  test('--resume by a prefix names its unreadable session.json, not "no session"', async () => {
    const { dir, id, sessionDir } = await storedSession()
    writeFileSync(join(sessionDir, 'session.json'), '{oops')
    const { code, stdout, stderr } = await runKode(['exec', '--resume', id.slice(0, 8), 'hello'], {}, dir)
    expect(stderr).not.toContain('no session')
    expect(stderr).toContain(join(sessionDir, 'session.json'))
    expect(code).toBe(1)
    expect(stdout).toBe('')
  })

  test('a session directory that is a symbolic link is named by a prefix and by /sessions, and left as it is', async () => {
    const { dir, id, sessionDir } = await storedSession()
    // The real session moves outside the store; a link takes its place, which the store refuses.
    const moved = join(tempDir('kode-linked-'), id)
    renameSync(sessionDir, moved)
    symlinkSync(moved, sessionDir, 'dir')
    const history = readFileSync(join(moved, 'history.jsonl'), 'utf8')
    const resumed = await runKode(['exec', '--resume', id.slice(0, 8), 'hello'], {}, dir)
    expect(resumed.stderr).not.toContain('no session')
    expect(resumed.stderr).toContain(`${sessionDir} is a symbolic link`)
    expect(resumed.code).toBe(1)
    expect(resumed.stdout).toBe('')
    const listed = await runKode([], {}, dir, '/sessions\n')
    expect(listed.code).toBe(0)
    expect(listed.stdout).toContain(`${id}  cannot be read: ${sessionDir} is a symbolic link`)
    expect(readFileSync(join(moved, 'history.jsonl'), 'utf8')).toBe(history)
  })

  test('/sessions says which sessions it cannot read, and why', async () => {
    const { dir, id, sessionDir } = await storedSession()
    writeFileSync(join(sessionDir, 'session.json'), '{oops')
    const { code, stdout } = await runKode([], {}, dir, '/sessions\n')
    expect(code).toBe(0)
    expect(stdout).toContain(`${id}  cannot be read: ${join(sessionDir, 'session.json')}`)
  })

  test('a failed /resume keeps the current session: the next prompt runs, the broken one is untouched', async () => {
    const { dir, id, sessionDir } = await storedSession()
    const file = join(sessionDir, 'history.jsonl')
    const lines = readFileSync(file, 'utf8').split('\n')
    lines[1] = `garbage${lines[1]}`
    writeFileSync(file, lines.join('\n'))
    const before = readFileSync(file, 'utf8')
    const { code, stdout } = await runKode([], {}, dir, `/resume ${id.slice(0, 8)}\nhello\n`)
    expect(code).toBe(0)
    expect(stdout).toContain(`✗ ${file}:2: not a valid history record`)
    // Once, for the /resume: the prompt after it ran in the session the REPL had.
    expect(stdout.split('not a valid history record')).toHaveLength(2)
    expect(stdout).toContain('■ Done')
    expect(readFileSync(file, 'utf8')).toBe(before)
  })
})

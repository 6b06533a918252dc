import { existsSync, readFileSync, realpathSync } from 'node:fs'
import { join } from 'node:path'
import { checkEventOrder, type Event, type HistoryEvent, validateEvent } from '@kode/protocol'
import { createFileSessionStore } from '@kode/session/file'
import { describe, expect, test } from 'vitest'
import { NO_TERMINAL_REASON } from '../../src/approvals/decide.js'
import { runKode, tempDir } from './run-kode.js'

/** A fresh working directory (the tools are confined to it) with its sessions inside. */
function workDir(): string {
  return realpathSync(tempDir('kode-approve-'))
}

async function historyOf(dir: string): Promise<HistoryEvent[]> {
  const store = createFileSessionStore({ dir: join(dir, '.kode/sessions') })
  try {
    const [session] = await store.list()
    return session ? await store.read(session.id) : []
  } finally {
    await store.close()
  }
}

const decisionsOf = (history: HistoryEvent[]) =>
  history.flatMap((record) => (!('role' in record) && record.type === 'approval_decision' ? [record] : []))

// `kode exec` as a script runs it: stdin a pipe that stays open, never a terminal.
describe('kode exec and tools that need approval', () => {
  test('without a terminal and without --yes, the call is denied at once with the reason, and nothing is written', async () => {
    const dir = workDir()
    const { code, stdout, stderr } = await runKode(['exec', 'write notes.txt'], {}, dir)
    expect(code).toBe(0)
    expect(stdout).toBe(`write_file answered: denied by the user: ${NO_TERMINAL_REASON}\n`)
    expect(stderr).toContain(
      'kode: denied write_file: no terminal to ask for approval (pass --yes to allow it)',
    )
    expect(existsSync(join(dir, 'notes.txt'))).toBe(false)
    const history = await historyOf(dir)
    expect(decisionsOf(history)).toMatchObject([{ approved: false, reason: NO_TERMINAL_REASON }])
  })

  test('--yes approves the call, records who approved it, and the file is written', async () => {
    const dir = workDir()
    const { code, stdout } = await runKode(['exec', '--yes', 'write docs/notes.txt'], {}, dir)
    expect(code).toBe(0)
    expect(stdout).toBe('write_file answered: Created docs/notes.txt (1 lines, 17 bytes).\n')
    expect(readFileSync(join(dir, 'docs/notes.txt'), 'utf8')).toBe('Hello from kode.\n')
    expect(decisionsOf(await historyOf(dir))).toMatchObject([{ approved: true, reason: 'approved by --yes' }])
  })

  test('an approved write to a path outside the working directory is still refused', async () => {
    const dir = workDir()
    const { code, stdout } = await runKode(['exec', '-y', 'write ../escape.txt'], {}, join(dir))
    expect(code).toBe(0)
    expect(stdout).toBe(`write_file answered: ../escape.txt is outside the working directory ${dir}\n`)
    expect(existsSync(join(dir, '..', 'escape.txt'))).toBe(false)
  })

  test('--yes runs a bash command; stream-json shows the request and the decision in a valid order', async () => {
    const dir = workDir()
    const { code, stdout } = await runKode(
      ['exec', '--yes', '--output', 'stream-json', 'run `echo made > made.txt; cat made.txt`'],
      {},
      dir,
    )
    expect(code).toBe(0)
    const events: Event[] = stdout
      .trimEnd()
      .split('\n')
      .map((line) => validateEvent(JSON.parse(line)))
    expect(checkEventOrder(events)).toEqual([])
    const kinds = [
      'tool_approval_request',
      'tool_approval_decision',
      'tool_call',
      'tool_result',
      'task_finish',
    ]
    expect(events.map((e) => e.type).filter((type) => kinds.includes(type))).toEqual([
      'tool_approval_request',
      'task_finish',
      'tool_approval_decision',
      'tool_call',
      'tool_result',
      'task_finish',
    ])
    expect(events.filter((e) => e.type === 'task_finish').map((e) => e.reason)).toEqual([
      'awaiting_approval',
      'completed',
    ])
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ status: 'success', result: 'made' })
    expect(readFileSync(join(dir, 'made.txt'), 'utf8')).toBe('made\n')
  })
})

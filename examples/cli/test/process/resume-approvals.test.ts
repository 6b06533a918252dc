import { existsSync, readFileSync, realpathSync } from 'node:fs'
import { join } from 'node:path'
import { checkEventOrder, type Event, type HistoryEvent, validateEvent } from '@kode/protocol'
import { createFileSessionStore } from '@kode/session/file'
import { afterEach, beforeAll, describe, expect, test } from 'vitest'
import { openApp } from '../../src/app.js'
import { APPROVAL_QUESTION, NO_TERMINAL_REASON } from '../../src/approvals/decide.js'
import { parseCliArgs } from '../../src/args.js'
import { KODE, offlineEnv, runKode, tempDir } from './run-kode.js'
import { ensureTmux, TmuxSession } from './tmux.js'

/**
 * A working directory with a stored session whose task stopped waiting for approval of
 * `write notes.txt`, as a kode that was closed at the question leaves it (the same app, the same
 * scripted model and file store); resolves with the directory and the session id.
 */
async function pausedSession(): Promise<{ dir: string; id: string }> {
  const dir = realpathSync(tempDir('kode-resume-'))
  const app = await openApp({ args: parseCliArgs([]), env: offlineEnv(), cwd: dir, scriptedDelayMs: 0 })
  try {
    const agent = app.agent()
    const outcome = await agent.run('write notes.txt').done
    expect(outcome.reason).toBe('awaiting_approval')
    await agent.close()
    return { dir, id: agent.sessionId }
  } finally {
    await app.close()
  }
}

async function historyOf(dir: string, id: string): Promise<HistoryEvent[]> {
  const store = createFileSessionStore({ dir: join(dir, '.kode/sessions') })
  try {
    return await store.read(id)
  } finally {
    await store.close()
  }
}

/** The history's approval decisions and user prompts, in order. */
function decisionsAndPrompts(history: HistoryEvent[]): string[] {
  return history.flatMap((record) => {
    if ('role' in record)
      return record.role === 'user'
        ? [`user: ${record.parts.map((p) => ('text' in p ? p.text : '')).join('')}`]
        : []
    return record.type === 'approval_decision'
      ? [`${record.approved ? 'approved' : 'denied'}: ${record.reason ?? ''}`]
      : []
  })
}

const HELP_START = "I am Kode's **scripted offline model**"

describe('resuming a session whose task waits for approval', () => {
  test('exec without a terminal denies the calls with the reason first, carries the task on, then runs the prompt', async () => {
    const { dir, id } = await pausedSession()
    const { code, stdout, stderr } = await runKode(['exec', '--resume', id, 'hello'], {}, dir)
    expect(code).toBe(0)
    expect(stderr).toContain(`kode: session ${id} waits for approval of 1 call(s); deciding them first`)
    expect(stderr).toContain(
      'kode: denied write_file: no terminal to ask for approval (pass --yes to allow it)',
    )
    expect(
      stdout.startsWith(`write_file answered: denied by the user: ${NO_TERMINAL_REASON}\n${HELP_START}`),
    ).toBe(true)
    expect(existsSync(join(dir, 'notes.txt'))).toBe(false)
    // Denied for want of a terminal (as a live call is), not by the new message.
    expect(decisionsAndPrompts(await historyOf(dir, id))).toEqual([
      'user: write notes.txt',
      `denied: ${NO_TERMINAL_REASON}`,
      'user: hello',
    ])
  })

  test('exec --yes approves the pending call, which runs before the prompt; stream-json shows both tasks in order', async () => {
    const { dir, id } = await pausedSession()
    const { code, stdout } = await runKode(
      ['exec', '--yes', '--resume', id, '--output', 'stream-json', 'hello'],
      {},
      dir,
    )
    expect(code).toBe(0)
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('Hello from kode.\n')
    const events: Event[] = stdout
      .trimEnd()
      .split('\n')
      .map((line) => validateEvent(JSON.parse(line)))
    expect(checkEventOrder(events)).toEqual([])
    const kinds = ['tool_approval_decision', 'tool_result', 'user_message', 'task_finish', 'end']
    expect(events.filter((e) => kinds.includes(e.type)).map((e) => e.type)).toEqual([
      'tool_approval_decision',
      'tool_result',
      'task_finish',
      'user_message',
      'task_finish',
      'end',
    ])
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ status: 'success' })
    expect(decisionsAndPrompts(await historyOf(dir, id))).toEqual([
      'user: write notes.txt',
      'approved: approved by --yes',
      'user: hello',
    ])
  })

  test('exec on a session with nothing pending runs the prompt alone', async () => {
    const { dir, id } = await pausedSession()
    await runKode(['exec', '--resume', id, 'hello'], {}, dir)
    const { code, stdout, stderr } = await runKode(['exec', '--resume', id, 'hello again'], {}, dir)
    expect(code).toBe(0)
    expect(stderr).not.toContain('waits for approval')
    expect(stdout.startsWith(HELP_START)).toBe(true)
  })

  describe('on a terminal', () => {
    let tmux: TmuxSession | undefined

    beforeAll(() => ensureTmux())
    afterEach(() => tmux?.kill())

    /** A shell command that runs `kode <args>` in `dir` on a real terminal, then says how it exited. */
    function kodeIn(dir: string, args: string): string {
      const env = offlineEnv()
      const vars = ['PATH', 'HOME', 'XDG_CONFIG_HOME']
        .map((name) => `${name}=${JSON.stringify(env[name] ?? '')}`)
        .join(' ')
      return `cd ${JSON.stringify(dir)} && env -i ${vars} LANG=C.UTF-8 TERM=xterm-256color node ${JSON.stringify(KODE)} ${args}; echo "EXIT=$?"; sleep 60`
    }

    test('kode --resume asks about the pending call before the prompt, and y runs it', async () => {
      const { dir, id } = await pausedSession()
      tmux = new TmuxSession('kode-resume-repl', kodeIn(dir, `--resume ${id}`))
      await tmux.waitForText(APPROVAL_QUESTION)
      const screen = tmux.screen()
      expect(screen).toContain('The task of this session waits for your approval of a call.')
      expect(screen).toContain('write_file notes.txt (1 lines):')
      // The question comes before the prompt's hint: no new input is taken until it is answered.
      expect(screen).not.toContain('Ctrl-C twice to exit')
      tmux.send('y', 'Enter')
      await tmux.waitForText('write_file answered: Created notes.txt')
      await tmux.waitForText('Ctrl-C twice to exit')
      expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('Hello from kode.\n')
      tmux.send('hello', 'Enter')
      await tmux.waitForText(HELP_START.replace(/\*\*/g, ''))
      expect(decisionsAndPrompts(await historyOf(dir, id))).toEqual([
        'user: write notes.txt',
        'approved: ',
        'user: hello',
      ])
    })

    test('kode exec --resume asks too, and a typed reason denies the call with it', async () => {
      const { dir, id } = await pausedSession()
      tmux = new TmuxSession('kode-resume-exec', kodeIn(dir, `exec --resume ${id} hello`))
      await tmux.waitForText(APPROVAL_QUESTION)
      tmux.send('not now', 'Enter')
      await tmux.waitForText('EXIT=0')
      expect(tmux.screen()).toContain('write_file answered: denied by the user: not now')
      expect(existsSync(join(dir, 'notes.txt'))).toBe(false)
      expect(decisionsAndPrompts(await historyOf(dir, id))).toEqual([
        'user: write notes.txt',
        'denied: not now',
        'user: hello',
      ])
    })
  })
})

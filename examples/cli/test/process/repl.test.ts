import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { isMessage, validateHistoryEvent } from '@kode/protocol'
import { toProviderMessages } from '@kode/protocol/helpers'
import { createFileSessionStore } from '@kode/session/file'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { KODE, offlineEnv, REPO, tempDir } from './run-kode.js'
import { ensureTmux, TmuxSession } from './tmux.js'

// The REPL in a real terminal: tmux runs it, the test types with send-keys and reads the screen.
describe('the REPL under tmux', () => {
  // `/export` writes to `exports/` beside the sessions directory: both inside a fresh one.
  const sessions = join(tempDir('kode-repl-'), 'sessions')
  let tmux: TmuxSession

  beforeAll(() => {
    ensureTmux()
    const env = offlineEnv()
    const vars = ['PATH', 'HOME', 'XDG_CONFIG_HOME']
      .map((name) => `${name}=${JSON.stringify(env[name] ?? '')}`)
      .join(' ')
    const command = `cd ${JSON.stringify(REPO)} && env -i ${vars} LANG=C.UTF-8 TERM=xterm-256color node ${JSON.stringify(KODE)} --sessions-dir ${JSON.stringify(sessions)}`
    tmux = new TmuxSession('kode-repl-test', command)
  })

  afterAll(() => tmux?.kill())

  test('starts offline with the scripted model and says so', async () => {
    await tmux.waitForText('Ctrl-C twice to exit')
    expect(tmux.screen()).toContain('Offline: no API key is set')
  })

  test('streams the answer with tool lines, sub-agent lines and a usage line', async () => {
    tmux.send('give me a tour of this repository', 'Enter')
    await tmux.waitForText('■ Done')
    const screen = tmux.screen()
    expect(screen).toContain('A tour of this repository')
    expect(screen).toContain('README: the project is Kode.')
    expect(screen).toMatch(/✓ read_file README\.md \(\d+(ms|\.\d+s)\) → 1\| # Kode/)
    expect(screen).toMatch(/✓ list_dir packages .*→ core\//)
    expect(screen).toContain('⎿ explore ✓ search_text')
    // The scripted model is free, and its usage lines say so.
    expect(screen).toMatch(/↳ [\d.]+k? in · \d+ out · \$0\.0000 · context [\d.]+% of 200k/)
    expect(screen).toMatch(/■ Done · 4 turns · [\d.]+k tokens · \$0\.0000 · /)
    expect(screen).toContain('☑ Sum up the tour')
  })

  test('Ctrl-C mid-stream interrupts the task and says so', async () => {
    tmux.send('now count please', 'Enter')
    await tmux.waitForText('1, 2, 3,')
    tmux.send('C-c')
    await tmux.waitForText('⏹ Interrupted by user')
    // The task's closing line follows the interrupt line, in a later write: wait for it too.
    await tmux.waitForText('■ Interrupted')
    const screen = tmux.screen()
    expect(screen.lastIndexOf('⏹ Interrupted by user')).toBeLessThan(screen.lastIndexOf('■ Interrupted'))
  })

  // The session commands, on the session just run (and a fork of it).
  describe('session commands', () => {
    let id: string

    /** How many times the screen shows `marker`, and what it shows after the last one. */
    const lastOf = (marker: string) => {
      const screen = tmux.screen()
      const at = screen.lastIndexOf(marker)
      return {
        count: screen.split(marker).length - 1,
        below: at === -1 ? '' : screen.slice(at + marker.length),
      }
    }
    /**
     * Types a command and waits until the screen below it shows `done`. A command run before
     * (the second `/sessions`) already shows `done` and the prompt below its earlier line, and the
     * screen may be read before the REPL has echoed the new one: so the wait is for one more line of
     * the command than the screen showed before typing, and for `done` below that one.
     */
    const command = async (line: string, done: string) => {
      const marker = `› ${line}`
      const before = lastOf(marker).count
      tmux.send(line, 'Enter')
      let shown = ''
      // Done once `done` shows below this run of the command and the prompt is back under it.
      const finished = () => {
        const { count, below } = lastOf(marker)
        shown = below
        return count > before && below.includes(done) && below.trimEnd().endsWith('›')
      }
      await tmux.waitFor(`${JSON.stringify(done)} after ${line}`, finished)
      return shown
    }

    beforeAll(async () => {
      const store = createFileSessionStore({ dir: sessions })
      id = (await store.list()).find((s) => s.subAgent === undefined)!.id
      await store.close()
    })

    test('/sessions lists the session, marked current, titled after its first prompt', async () => {
      const shown = await command('/sessions', id)
      expect(shown).toMatch(
        new RegExp(`\\* ${id}  [\\d-]+ [\\d:]+ +\\d+ records  give me a tour of this repository`),
      )
    })

    test('/export writes the session as an HTML file', async () => {
      const shown = await command('/export', '.html')
      const file = /Exported to (\S+\.html)/.exec(shown)?.[1]
      expect(file).toBe(join(sessions, '..', 'exports', `${id}.html`))
      expect(existsSync(file!)).toBe(true)
      expect(readFileSync(file!, 'utf8')).toContain('A tour of this repository')
    })

    test('/fork copies the session into a new one and continues there', async () => {
      const shown = await command('/fork', '── resumed ──')
      const forkId = /Forked into (\S+)\./.exec(shown)?.[1]
      expect(forkId).toBeDefined()
      expect(forkId).not.toBe(id)
      expect(shown).toContain(`── session ${forkId} · give me a tour of this repository (fork) ──`)
      const store = createFileSessionStore({ dir: sessions })
      expect(await store.info(forkId!)).toMatchObject({ parentSessionId: id, forkedFrom: { sessionId: id } })
      await store.close()
    })

    test('/resume <prefix> switches back and replays the session on screen', async () => {
      const prefix = id.slice(0, 8)
      const shown = await command(`/resume ${prefix}`, '── resumed ──')
      expect(shown).toContain(`── session ${id} · give me a tour of this repository ──`)
      expect(shown).toContain('› give me a tour of this repository')
      expect(shown).toMatch(/✓ read_file README\.md/)
      expect(shown).toContain('A tour of this repository')
      expect(shown).toContain('› now count please')
      expect(shown).toContain('1, 2, 3,')
      expect(shown).toContain('⏹ Interrupted by user')
    })

    test('/sessions now lists both, the resumed one current', async () => {
      const shown = await command('/sessions', '(fork)')
      expect(shown).toContain(`* ${id} `)
      expect(shown).toMatch(/\n {2}\S+ .*give me a tour of this repository \(fork\)/)
    })
  })

  test('Ctrl-C at the idle prompt asks for another, which exits', async () => {
    tmux.send('C-c')
    await tmux.waitForText('(Ctrl-C again to exit)')
    tmux.send('C-c')
    await tmux.waitFor('kode to exit', () => !tmux.running())
  })

  test('the session file is valid: it decodes, and the provider view answers every call', async () => {
    const store = createFileSessionStore({ dir: sessions })
    // The session run here; the other top-level one is its fork.
    const [info, ...others] = (await store.list()).filter(
      (s) => s.subAgent === undefined && s.forkedFrom === undefined,
    )
    expect(others).toEqual([])
    const history = await store.read(info!.id)
    for (const record of history) expect(validateHistoryEvent(record)).toBe(record)
    const last = history.filter(isMessage).at(-1)
    expect(last).toMatchObject({ role: 'assistant', stopReason: 'aborted' })
    // Every call has its persisted result, so the provider view needs no synthetic one.
    const messages = history.filter(isMessage)
    const calls = messages.flatMap((m) =>
      m.role === 'assistant' ? m.parts.filter((p) => p.type === 'tool_call') : [],
    )
    const answered = new Set(messages.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : [])))
    expect(calls.length).toBeGreaterThan(0)
    for (const call of calls) expect(answered.has(call.id)).toBe(true)
    const view = toProviderMessages(history)
    expect(view.filter((m) => m.role === 'tool' && m.id.endsWith(':missing-result'))).toEqual([])
    expect(view.at(-1)).toMatchObject({ role: 'assistant', stopReason: 'aborted' })
    await store.close()
  })
})

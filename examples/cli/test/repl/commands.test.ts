import { PassThrough } from 'node:stream'
import { createAgent } from '@kode/core'
import type { HistoryEvent } from '@kode/protocol'
import type { LLMClient } from '@kode/providers'
import { createMemorySessionStore } from '@kode/session'
import { describe, expect, test } from 'vitest'
import type { App } from '../../src/app.js'
import { createStyle } from '../../src/display/style.js'
import { LineInput } from '../../src/repl/line-input.js'
import { Repl } from '../../src/repl/repl.js'
import { shelfOf } from '../../src/sessions.js'

// The session commands on a stored session of two tasks, driven through the REPL's own input.

const unused: LLMClient = {
  api: 'none',
  provider: 'none',
  model: 'none',
  modelInfo: undefined,
  stream: () => {
    throw new Error('no model call in this test')
  },
  complete: () => Promise.reject(new Error('no model call in this test')),
}

const text = (t: string) => [{ type: 'text' as const, text: t }]
const HISTORY: HistoryEvent[] = [
  { role: 'user', id: 'u1', createdAt: 1, parts: text('first question') },
  { role: 'assistant', id: 'a1', createdAt: 2, parts: text('first answer'), stopReason: 'stop' },
  { type: 'task_metadata', id: 't1', createdAt: 3, metadata: { main: { turnCount: 1 }, subAgents: [] } },
  { role: 'user', id: 'u2', createdAt: 4, parts: text('second question') },
  { role: 'assistant', id: 'a2', createdAt: 5, parts: text('second answer'), stopReason: 'stop' },
  { type: 'task_metadata', id: 't2', createdAt: 6, metadata: { main: { turnCount: 1 }, subAgents: [] } },
]

async function startRepl() {
  const store = createMemorySessionStore()
  await store.create({ id: 's1', title: 'two tasks' })
  await store.append('s1', HISTORY)
  const app = {
    store,
    listSessions: shelfOf(store).listSessions,
    exportsDir: '',
    thinking: 'collapse',
    model: { client: unused, label: 'test', close: async () => {} },
    agent: (sessionId?: string) =>
      createAgent({ client: unused, store, ...(sessionId ? { sessionId } : {}) }),
    titleSession: async () => {},
  } as unknown as App
  const stdin = new PassThrough()
  const printed = new PassThrough()
  let shown = ''
  printed.on('data', (chunk) => {
    shown += String(chunk)
  })
  const output = {
    write: (t: string) => {
      shown += t
    },
    columns: 200,
  }
  const input = new LineInput(stdin, printed as unknown as NodeJS.WriteStream, '› ')
  const repl = new Repl(app, { input, output, style: createStyle(false), live: false }, 's1')
  const status = repl.run({ resumed: true })
  /** Types a command and waits until `until` shows. */
  const command = async (line: string, until: string) => {
    const from = shown.length
    stdin.write(`${line}\n`)
    for (let i = 0; i < 500 && !shown.slice(from).includes(until); i++)
      await new Promise((r) => setTimeout(r, 5))
    return shown.slice(from)
  }
  const close = async () => {
    stdin.end()
    await status
  }
  return { store, command, close }
}

describe('/fork', () => {
  test('before a prompt: the fork ends with the task before it, ready to ask anew', async () => {
    const repl = await startRepl()
    const shown = await repl.command('/fork before u2', 'resumed')
    const forkId = /Forked into (\S+), before u2\./.exec(shown)?.[1]
    expect(forkId).toBeDefined()
    expect((await repl.store.read(forkId!)).map((e) => e.id).slice(-3)).toEqual(['u1', 'a1', 't1'])
    await repl.close()
  })

  test('at a prompt: the fork keeps it, and says so and how to leave it out', async () => {
    const repl = await startRepl()
    const shown = await repl.command('/fork u2', 'resumed')
    expect(shown).toContain('The fork ends on that prompt, unanswered')
    expect(shown).toContain('/fork before u2 leaves it out')
    const forkId = /Forked into (\S+)\./.exec(shown)?.[1]
    expect((await repl.store.read(forkId!)).at(-1)?.id).toBe('u2')
    await repl.close()
  })

  test('before the first record is refused with a reason', async () => {
    const repl = await startRepl()
    expect(await repl.command('/fork before u1', '✗')).toContain('nothing comes before the first record')
    await repl.close()
  })

  test('/help says which record a fork keeps', async () => {
    const repl = await startRepl()
    const shown = await repl.command('/help', '/exit')
    expect(shown).toContain('/fork [before] [id]')
    expect(shown).toContain('up to and including record <id>')
    expect(shown).toContain('with before, everything before <id>')
    await repl.close()
  })
})

describe('text of a stored session on the terminal', () => {
  test('/sessions and /history show titles and prompts without escape sequences or bidi overrides', async () => {
    const repl = await startRepl()
    // A session store can come with a cloned repository (.kode/sessions): its text is anyone's.
    await repl.store.create({ id: 's2', title: 'evil\x1b]0;pwned\x07\u202e title\x9b2J' })
    await repl.store.append('s2', [
      { role: 'user', id: 'u9', createdAt: 9, parts: text('prompt\x1b]52;c;cm0gLXJmIH4=\x07\r\u2066x') },
    ])
    const listed = await repl.command('/sessions', 'title')
    expect(listed).toContain('evil]0;pwned title2J')
    const resumed = await repl.command('/resume s2', '── resumed ──')
    const history = await repl.command('/history', 'u9')
    for (const shown of [listed, resumed, history])
      for (const char of ['\x1b', '\x07', '\r', '\u202e', '\u2066', '\x9b']) expect(shown).not.toContain(char)
    await repl.close()
  })
})

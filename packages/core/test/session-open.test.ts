import { defineSubAgent } from '@kode/core'
import { createMemorySessionStore, SessionError, type SessionStore } from '@kode/session'
import { describe, expect, test } from 'vitest'
import { call, chatStream, textReply } from './helpers/chat-wire.js'
import { collect, useHarness } from './helpers/harness.js'

const harness = useHarness()

/** A memory store that logs its create and acquire calls, and how each ended. */
function loggingStore(): { store: SessionStore; log: string[] } {
  const inner = createMemorySessionStore()
  const log: string[] = []
  const logged = async <T>(name: string, id: string | undefined, run: () => Promise<T>) => {
    try {
      const result = await run()
      log.push(`${name} ${id}`)
      return result
    } catch (error) {
      log.push(`${name} ${id}: ${SessionError.is(error) ? error.code : String(error)}`)
      throw error
    }
  }
  const store: SessionStore = {
    ...inner,
    create: (init) => logged('create', init?.id, () => inner.create(init)),
    acquire: (id) => logged('acquire', id, () => inner.acquire(id)),
  }
  return { store, log }
}

describe("a task's session is opened with the fewest store calls, as before", () => {
  test('an id the agent generated: created, then taken; a second task only takes it', async () => {
    const h = harness()
    h.server.enqueue(textReply('r1', 'one'), textReply('r2', 'two'))
    const { store, log } = loggingStore()
    const agent = h.createAgent({ store })
    await collect(agent.run('first'))
    await collect(agent.run('second'))
    const id = agent.sessionId
    expect(log).toEqual([`create ${id}`, `acquire ${id}`, `acquire ${id}`])
  })

  test('an id the host named: taken when it exists, else created after the failed take', async () => {
    const h = harness()
    h.server.enqueue(textReply('r1', 'one'), textReply('r2', 'two'))
    const { store, log } = loggingStore()
    await collect(h.createAgent({ store, sessionId: 'named' }).run('first'))
    expect(log).toEqual(['acquire named: session_not_found', 'create named', 'acquire named'])
    log.length = 0
    const { outcome } = await collect(h.createAgent({ store, sessionId: 'named' }).run('second'))
    expect(log).toEqual(['acquire named'])
    expect(outcome.reason).toBe('completed')
  })

  test('a generated id the store already has: the session is continued, not replaced', async () => {
    const h = harness()
    h.server.enqueue(textReply('r1', 'one'), textReply('r2', 'two'))
    const { store, log } = loggingStore()
    const first = h.createAgent({ store, sessionId: 'same' })
    await collect(first.run('first'))
    log.length = 0
    // A host whose id generator repeats itself.
    const again = h.createAgent({ store, createId: () => 'same' })
    await collect(again.run('second'))
    expect(log).toEqual(['create same: session_exists', 'acquire same'])
    const history = await again.history()
    expect(history.filter((r) => 'role' in r && r.role === 'user')).toHaveLength(2)
  })

  test("a sub-agent's new session is created, then taken", async () => {
    const h = harness()
    const helper = defineSubAgent({ name: 'helper', description: 'Helps.', system: 'Help.' })
    h.server.enqueue(
      chatStream({ id: 'r1', steps: [call('c1', 'helper', { prompt: 'do it' })] }),
      textReply('r2', 'done by helper'),
      textReply('r3', 'all done'),
    )
    const { store, log } = loggingStore()
    const agent = h.createAgent({ store, tools: [helper] })
    const { outcome } = await collect(agent.run('go'))
    expect(outcome.reason).toBe('completed')
    const child = log[2]!.split(' ')[1]!
    expect(child).not.toBe(agent.sessionId)
    expect(log).toEqual([
      `create ${agent.sessionId}`,
      `acquire ${agent.sessionId}`,
      `create ${child}`,
      `acquire ${child}`,
    ])
  })
})

describe('continue never creates a session', () => {
  const fileHarness = useHarness('file')

  test.each([
    ['nothing', {}],
    ['decisions', { approvals: [{ toolCallId: 'c1', approved: true }] }],
  ] as const)(
    'continue with %s in a session that does not exist is session_not_found, and the store stays empty',
    async (_, options) => {
      const h = fileHarness()
      const agent = h.createAgent({ sessionId: 'never-made' })
      const run = agent.continue(options)
      const error = await run.done.catch((e: unknown) => e)
      expect(SessionError.is(error) && error.code).toBe('session_not_found')
      expect(h.server.requests).toHaveLength(0)
      expect(await h.store.list()).toEqual([])
      expect(await h.store.info('never-made')).toBeUndefined()
    },
  )

  test('an agent whose id was generated has no session to continue either', async () => {
    const h = fileHarness()
    const agent = h.createAgent()
    const error = await agent.continue().done.catch((e: unknown) => e)
    expect(SessionError.is(error) && error.code).toBe('session_not_found')
    expect(await h.store.list()).toEqual([])
  })
})

describe('compact never creates a session', () => {
  const fileHarness = useHarness('file')

  test('compact of a session that does not exist has nothing to compact, emits nothing and the store stays empty', async () => {
    const h = fileHarness()
    const agent = h.createAgent({ sessionId: 'never-made' })
    const events: string[] = []
    agent.events.on('event', (event) => events.push(event.type))
    expect(await agent.compact()).toEqual({ compacted: false, reason: 'nothing_to_compact' })
    expect(events).toEqual([])
    expect(h.server.requests).toHaveLength(0)
    expect(await h.store.list()).toEqual([])
    expect(await h.store.info('never-made')).toBeUndefined()
    expect(agent.running).toBe(false)
  })

  test('an agent whose id was generated has nothing to compact either, and its first run still creates the session', async () => {
    const h = fileHarness()
    h.server.enqueue(textReply('r1', 'one'))
    const agent = h.createAgent()
    expect(await agent.compact()).toEqual({ compacted: false, reason: 'nothing_to_compact' })
    expect(await h.store.list()).toEqual([])
    const { outcome } = await collect(agent.run('first'))
    expect(outcome.reason).toBe('completed')
    expect((await h.store.list()).map((info) => info.id)).toEqual([agent.sessionId])
  })
})

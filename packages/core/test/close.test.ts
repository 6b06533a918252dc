import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { AgentError, defineSubAgent, defineTool } from '@kode/core'
import type { RecordedRequest, ScriptedResponse } from '@kode/providers/testing'
import { SessionLockedError } from '@kode/session'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { call, chatStream, textReply } from './helpers/chat-wire.js'
import { collect, gate, useHarness } from './helpers/harness.js'
import { summarizeHistory } from './helpers/summarize.js'

// `agent.close()`: the agent lets go of its session's writer, so another store (in this process
// or another) can continue the session, and no lock file is left behind.

const harness = useHarness('file')
const lockOf = (sessionId: string) => join(harness().dir!, sessionId, 'writer.lock')

describe('agent.close()', () => {
  test('interrupts the running task that holds the session; then another store can continue it', async () => {
    const h = harness()
    const started = gate()
    const wait = defineTool({
      name: 'wait',
      description: 'Waits until interrupted',
      parameters: Type.Object({}),
      execute: (_args, ctx) =>
        new Promise<string>((_resolve, reject) => {
          started.open()
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true })
        }),
    })
    h.server.enqueue(
      chatStream({ id: 'r1', steps: [call('c1', 'wait', {})] }),
      textReply('r2', 'Hello again.'),
    )
    const first = h.createAgent({ sessionId: 's1', tools: [wait] })
    first.run('Wait')
    await started.promise
    expect(existsSync(lockOf('s1'))).toBe(true)

    // While the task runs, a second store is refused, and the error says what to do.
    const other = h.reopenStore()
    const refused = await collect(h.createAgent({ store: other, sessionId: 's1' }).run('Again')).catch(
      (e: unknown) => e,
    )
    expect(refused).toBeInstanceOf(SessionLockedError)

    await first.close()
    expect(existsSync(lockOf('s1'))).toBe(false)
    const second = h.createAgent({ store: other, sessionId: 's1' })
    const { outcome } = await collect(second.run('Again'))
    expect(outcome.reason).toBe('completed')
    expect(summarizeHistory(await second.history()).filter((line) => line.startsWith('user'))).toEqual([
      'user: Wait',
      'user: Again',
    ])
    await second.close()
    expect(existsSync(lockOf('s1'))).toBe(false)
  })

  test('a closed agent refuses to run, still reads its history, and closing again does nothing', async () => {
    const h = harness()
    h.server.enqueue(textReply('r1', 'Hello.'))
    const agent = h.createAgent({ sessionId: 's1' })
    await collect(agent.run('Hi'))
    await agent.close()
    await agent.close()
    expect(() => agent.run('more')).toThrow(
      expect.objectContaining({
        code: 'agent_closed',
        message:
          'the agent of session s1 is closed: to continue the session, make a new agent with createAgent({ sessionId })',
      }),
    )
    expect(() => agent.run('more')).toThrow(AgentError)
    expect((await agent.history()).length).toBeGreaterThan(0)
    // The store itself stays open for other agents.
    expect(await h.store.info('s1')).toBeDefined()
  })

  test('interrupts a running task and resolves once it is persisted', async () => {
    const h = harness()
    const started = gate()
    const wait = defineTool({
      name: 'wait',
      description: 'Waits until interrupted',
      parameters: Type.Object({}),
      execute: (_args, ctx) =>
        new Promise<string>((_resolve, reject) => {
          started.open()
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true })
        }),
    })
    h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'wait', {})] }))
    const agent = h.createAgent({ sessionId: 's1', tools: [wait] })
    const run = agent.run('Wait')
    await started.promise
    await agent.close()
    expect(agent.running).toBe(false)
    expect((await run.done).reason).toBe('aborted')
    expect(summarizeHistory(await agent.history())).toContain(
      'tool c1 aborted: The user interrupted this tool call before it finished.',
    )
    expect(existsSync(lockOf('s1'))).toBe(false)
  })

  test("a sub-agent's session, like the agent's, is free once its task ends", async () => {
    const h = harness()
    const helper = defineSubAgent({ name: 'helper', description: 'Helps', system: 'You help.' })
    h.server.handle((request: RecordedRequest): ScriptedResponse => {
      const messages = (request.body as { messages: { role: string; content?: unknown }[] }).messages
      if (messages[0]?.content === 'You help.') return textReply('child', 'Helped.')
      if (messages.at(-1)?.role === 'tool') return textReply('parent-2', 'Done.')
      return chatStream({
        id: 'parent-1',
        steps: [call('c1', 'helper', { prompt: 'help', description: 'Help' })],
      })
    })
    const agent = h.createAgent({ sessionId: 's1', tools: [helper] })
    expect((await collect(agent.run('Get help'))).outcome.reason).toBe('completed')
    const sessions = readdirSync(h.dir!).filter((name) => name !== 's1')
    expect(sessions).toHaveLength(1)
    // Every writer was given back when its task ended: nothing is left locked.
    expect(existsSync(lockOf(sessions[0]!))).toBe(false)
    expect(existsSync(lockOf('s1'))).toBe(false)
    await agent.close()
  })

  test('interrupts a compaction in progress and resolves once its writer is given back', async () => {
    const h = harness()
    h.server.enqueue(textReply('r1', 'Hello.'), textReply('r2', 'Hello again.'))
    const started = gate()
    const agent = h.createAgent({
      sessionId: 's1',
      compaction: {
        keepRecent: 0,
        summarize: ({ signal }) =>
          new Promise<string>((_resolve, reject) => {
            started.open()
            signal.addEventListener('abort', () => reject(signal.reason), { once: true })
          }),
      },
    })
    await collect(agent.run('Hi'))
    const compacting = agent.compact()
    await started.promise
    await agent.close()
    expect(existsSync(lockOf('s1'))).toBe(false)
    await expect(compacting).resolves.toMatchObject({ compacted: false, reason: 'aborted' })
    // Another store takes the session over at once.
    const other = h.createAgent({ store: h.reopenStore(), sessionId: 's1', compaction: false })
    expect((await collect(other.run('Again'))).outcome.reason).toBe('completed')
    await other.close()
  })
})

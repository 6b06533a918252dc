import { AgentError } from '@kode/core'
import { describe, expect, test } from 'vitest'
import { textReply } from './helpers/chat-wire.js'
import { collect, useHarness } from './helpers/harness.js'

describe('run(input, { messageId })', () => {
  const harness = useHarness('file')

  test('persists the user message under the id the host chose', async () => {
    const h = harness()
    h.server.enqueue(textReply('r1', 'Done.'))
    const agent = h.createAgent()
    const { outcome } = await collect(agent.run('Go', { messageId: 'task-7:input' }))
    expect(outcome.reason).toBe('completed')
    const history = await agent.history()
    const users = history.filter((record) => 'role' in record && record.role === 'user')
    expect(users).toEqual([
      { role: 'user', id: 'task-7:input', createdAt: 1000, parts: [{ type: 'text', text: 'Go' }] },
    ])
    // The task's end names it, so a later task's end is never taken for this one's.
    const ends = history.filter((record) => !('role' in record) && record.type === 'task_metadata')
    expect(ends).toMatchObject([{ type: 'task_metadata', inputId: 'task-7:input' }])
  })

  test('without it, the task_metadata names no input', async () => {
    const h = harness()
    h.server.enqueue(textReply('r1', 'Done.'))
    const agent = h.createAgent()
    await collect(agent.run('Go'))
    const ends = (await agent.history()).filter(
      (record) => !('role' in record) && record.type === 'task_metadata',
    )
    expect(ends).toHaveLength(1)
    expect(ends[0]).not.toHaveProperty('inputId')
  })

  test('an id a record of the session already has fails the run before anything is persisted', async () => {
    const h = harness()
    h.server.enqueue(textReply('r1', 'Done.'))
    const agent = h.createAgent()
    await collect(agent.run('First', { messageId: 'once' }))
    const before = await agent.history()
    const run = agent.run('Second', { messageId: 'once' })
    const failure = await run.done.then(
      () => undefined,
      (error: unknown) => error,
    )
    expect(AgentError.is(failure) && [failure.code, failure.message]).toEqual([
      'invalid_options',
      'messageId once is already the id of a record of this session',
    ])
    expect(await agent.history()).toEqual(before)
    expect(h.server.requests).toHaveLength(1)
  })

  test.each(['', 7])('messageId %j is refused at the call', (messageId) => {
    const agent = harness().createAgent()
    let thrown: unknown
    try {
      agent.run('Go', { messageId: messageId as string })
    } catch (error) {
      thrown = error
    }
    expect(AgentError.is(thrown) && [thrown.code, thrown.message]).toEqual([
      'invalid_options',
      'messageId must be a non-empty string',
    ])
  })
})

describe('continue({ inputId })', () => {
  const harness = useHarness('file')

  /** A session whose task, begun by the input `task-7:input`, stopped before it finished. */
  async function stoppedTask(h: ReturnType<typeof harness>) {
    await h.store.create({ id: 'stopped' })
    await h.store.append('stopped', [
      { role: 'user', id: 'task-7:input', createdAt: 1, parts: [{ type: 'text', text: 'Go' }] },
    ])
    return h.createAgent({ sessionId: 'stopped' })
  }

  test("names the input it carries on in the continued task's task_metadata", async () => {
    const h = harness()
    h.server.enqueue(textReply('r1', 'Done.'))
    const agent = await stoppedTask(h)
    const { outcome } = await collect(agent.continue({ inputId: 'task-7:input' }))
    expect(outcome.reason).toBe('completed')
    const ends = (await agent.history()).filter(
      (record) => !('role' in record) && record.type === 'task_metadata',
    )
    expect(ends).toMatchObject([{ type: 'task_metadata', inputId: 'task-7:input' }])
  })

  test('an id that is no user message of the session fails the continuation before anything is persisted', async () => {
    const h = harness()
    const agent = await stoppedTask(h)
    const before = await agent.history()
    const failure = await agent.continue({ inputId: 'task-8:input' }).done.then(
      () => undefined,
      (error: unknown) => error,
    )
    expect(AgentError.is(failure) && [failure.code, failure.message]).toEqual([
      'invalid_options',
      'inputId task-8:input is not the id of a user message of this session',
    ])
    expect(await agent.history()).toEqual(before)
    expect(h.server.requests).toHaveLength(0)
  })

  test.each(['', 7])('inputId %j is refused at the call', (inputId) => {
    const agent = harness().createAgent()
    let thrown: unknown
    try {
      agent.continue({ inputId: inputId as string })
    } catch (error) {
      thrown = error
    }
    expect(AgentError.is(thrown) && [thrown.code, thrown.message]).toEqual([
      'invalid_options',
      'inputId must be a non-empty string',
    ])
  })
})

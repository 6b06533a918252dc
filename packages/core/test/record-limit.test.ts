import { AgentError } from '@kode/core'
import { createMemorySessionStore } from '@kode/session'
import { describe, expect, test } from 'vitest'
import { call, chatStream, say, stalledChatStream, textReply } from './helpers/chat-wire.js'
import { collect, useHarness } from './helpers/harness.js'
import { expectValidHistory } from './helpers/history-checks.js'
import { summarizeHistory } from './helpers/summarize.js'
import { readFile } from './helpers/tools.js'

/** What a run's call threw, if anything. */
function thrown(run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
  return undefined
}

describe("records over the store's size limit", () => {
  const harness = useHarness()

  test('an input too large for one record is refused at the call, before anything is written', async () => {
    const h = harness()
    const store = createMemorySessionStore({ maxRecordBytes: 20_000 })
    const agent = h.createAgent({ store, sessionId: 's1' })
    const image = `data:image/png;base64,${'A'.repeat(30_000)}`
    const error = thrown(() =>
      agent.run([
        { type: 'text', text: 'What is this?' },
        { type: 'image_url', url: image },
      ]),
    )
    expect(AgentError.is(error) && error.code).toBe('input_too_large')
    expect((error as Error).message).toMatch(
      /^the input is about \d+ bytes as a history record, over the session store's limit of 20000 bytes \(maxRecordBytes\)/,
    )
    expect(await store.info('s1')).toBeUndefined()
    expect(agent.running).toBe(false)
    const steered = thrown(() => agent.steer('é'.repeat(10_001)))
    expect(AgentError.is(steered) && steered.code).toBe('input_too_large')

    // The host shrinks it, and the session takes it.
    h.server.enqueue(textReply('r1', 'A picture.'))
    const { outcome } = await collect(agent.run('What is this?'))
    expect(outcome.reason).toBe('completed')
    expect(summarizeHistory(await agent.history())).toEqual([
      'user: What is this?',
      'assistant stop: text "A picture."',
      'task_metadata turns=1 subAgents=0',
    ])
  })

  test('a response too large for one record ends the task with an error naming both sizes; the session goes on', async () => {
    const h = harness()
    const store = createMemorySessionStore({ maxRecordBytes: 20_000 })
    const agent = h.createAgent({ store, tools: [readFile] })
    h.server.enqueue(
      chatStream({ id: 'r1', steps: [say('x'.repeat(30_000)), call('c1', 'read_file', { path: 'a' })] }),
    )
    const { outcome, events } = await collect(agent.run('Write a lot'))
    expect(outcome.reason).toBe('error')
    const sized =
      /^The model's response is (\d+) bytes as a history record, over the session store's limit of 20000 bytes \(maxRecordBytes\); it was not kept\.$/
    expect(outcome.errorMessage).toMatch(sized)
    expect(Number(sized.exec(outcome.errorMessage!)![1])).toBeGreaterThan(30_000)
    expect(events.filter((e) => e.type === 'error')).toEqual([
      expect.objectContaining({ errorMessage: outcome.errorMessage, canRetry: false }),
    ])
    // No response and no call of it was kept: an error in a turn of its own, then the task's end.
    const history = await agent.history()
    expectValidHistory(history)
    expect(history.map((record) => ('role' in record ? record.role : record.type))).toEqual([
      'user',
      'error',
      'task_metadata',
    ])
    expect(history[1]).toMatchObject({
      code: 'response_too_large',
      turn: 'own',
      message: outcome.errorMessage,
    })
    expect(history[2]).toMatchObject({ reason: 'error' })

    // The next message runs on the same session.
    h.server.enqueue(textReply('r2', 'Briefly, then.'))
    const next = await collect(agent.run('Shorter, please'))
    expect(next.outcome).toMatchObject({ reason: 'completed', text: 'Briefly, then.' })
  })

  test('an interrupted response too large for one record is kept as an interrupt before any output', async () => {
    const h = harness()
    const store = createMemorySessionStore({ maxRecordBytes: 20_000 })
    const agent = h.createAgent({ store })
    h.server.enqueue(stalledChatStream({ id: 'r1', steps: [say('x'.repeat(30_000))] }))
    const controller = new AbortController()
    agent.events.on('assistant_text_delta', () => controller.abort())
    const { outcome } = await collect(agent.run('Write a lot', { signal: controller.signal }))
    expect(outcome.reason).toBe('aborted')
    const history = await agent.history()
    expectValidHistory(history)
    expect(history.map((record) => ('role' in record ? record.role : record.type))).toEqual([
      'user',
      'interrupt',
      'task_metadata',
    ])
    h.server.enqueue(textReply('r2', 'Briefly, then.'))
    expect((await collect(agent.run('Shorter, please'))).outcome.reason).toBe('completed')
  })

  test('a failed response whose text is too large for one record keeps its error alone', async () => {
    const h = harness()
    const store = createMemorySessionStore({ maxRecordBytes: 20_000 })
    const agent = h.createAgent({ store })
    h.server.enqueue(stalledChatStream({ id: 'r1', steps: [say('x'.repeat(30_000))] }))
    agent.events.on('assistant_text_delta', () => {
      throw new Error('render failed')
    })
    const run = agent.run('Write a lot')
    await expect(run.done).rejects.toThrow('render failed')
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: Write a lot',
      'error: An event listener threw: render failed',
      'task_metadata turns=1 subAgents=0',
    ])
    expect(history[1]).toMatchObject({ turn: 'own' })
  })
})

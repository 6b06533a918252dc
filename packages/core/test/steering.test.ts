import { defineTool } from '@kode/core'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { call, chatStream, say, textReply } from './helpers/chat-wire.js'
import { collect, useHarness } from './helpers/harness.js'
import { expectOrdered, expectValidHistory } from './helpers/history-checks.js'
import { withAppends } from './helpers/recording-store.js'
import { summarize, summarizeHistory } from './helpers/summarize.js'
import { readFile } from './helpers/tools.js'

const harness = useHarness()

type Messages = { role: string; content?: unknown }[]
const lastMessages = (body: unknown) => (body as { messages: Messages }).messages

describe('steering', () => {
  test('a message steered during a tool is delivered after the results, before the next model call', async () => {
    const h = harness()
    h.server.enqueue(
      chatStream({ id: 'r1', steps: [call('c1', 'read_file', { path: 'a' })] }),
      textReply('r2', 'Read a, and noted b.'),
    )
    const agent = h.createAgent({ tools: [readFile] })
    agent.events.on('tool_call', () => agent.steer('Also look at b.'))
    const { events } = await collect(agent.run('Read a'))

    expectOrdered(events)
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: Read a',
      'turn_start',
      'tool_call_start c1 read_file',
      'response_complete: ',
      'usage 100/20',
      'context_usage 120/128000',
      'tool_call c1 read_file {"path":"a"}',
      'tool_result c1 success (last): contents of a',
      'turn_end',
      'user_message: Also look at b.',
      'turn_start',
      'assistant_text_start',
      'text: Read a, and noted b.',
      'assistant_text_end',
      'response_complete: Read a, and noted b.',
      'usage 100/20',
      'context_usage 120/128000',
      'turn_end',
      'task_metadata turns=2 subAgents=0',
      'task_finish completed: Read a, and noted b.',
    ])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: Read a',
      'assistant tool_use: call c1 read_file {"path":"a"}',
      'tool c1 success: contents of a',
      'user: Also look at b.',
      'assistant stop: text "Read a, and noted b."',
      'task_metadata turns=2 subAgents=0',
    ])
    expect(lastMessages(h.server.requests[1]!.body).map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'user',
    ])
  })

  test('a message steered while the model answers starts another turn instead of finishing', async () => {
    const h = harness()
    h.server.enqueue(
      chatStream({ id: 'r1', steps: [say('Here is the answer.')] }),
      textReply('r2', 'And in French: voici.'),
    )
    const agent = h.createAgent()
    let steered = false
    agent.events.on('assistant_text_delta', () => {
      if (!steered) agent.steer('Say it in French too.')
      steered = true
    })
    const { events, outcome } = await collect(agent.run('Answer'))

    expectOrdered(events)
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: Answer',
      'turn_start',
      'assistant_text_start',
      'text: Here is the answer.',
      'assistant_text_end',
      'response_complete: Here is the answer.',
      'usage 100/20',
      'context_usage 120/128000',
      'turn_end',
      'user_message: Say it in French too.',
      'turn_start',
      'assistant_text_start',
      'text: And in French: voici.',
      'assistant_text_end',
      'response_complete: And in French: voici.',
      'usage 100/20',
      'context_usage 120/128000',
      'turn_end',
      'task_metadata turns=2 subAgents=0',
      'task_finish completed: And in French: voici.',
    ])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: Answer',
      'assistant stop: text "Here is the answer."',
      'user: Say it in French too.',
      'assistant stop: text "And in French: voici."',
      'task_metadata turns=2 subAgents=0',
    ])
    expect(outcome.metadata.main.turnCount).toBe(2)
  })

  test('a message steered after the last turn ended waits for the next run, and a continue delivers one left by a pause', async () => {
    const h = harness()
    h.server.enqueue(
      textReply('r1', 'One.'),
      textReply('r2', 'Two.'),
      chatStream({ id: 'r3', steps: [call('c1', 'write_file', { path: 'a' })] }),
      textReply('r4', 'Wrote a.'),
    )
    const write = defineTool({
      name: 'write_file',
      description: 'Writes a file',
      parameters: Type.Object({ path: Type.String() }),
      needsApproval: true,
      execute: ({ path }) => `wrote ${path}`,
    })
    const agent = h.createAgent({ tools: [write] })
    const late = () => agent.steer('late')
    agent.events.once('task_metadata', late)
    expect((await collect(agent.run('Hi'))).outcome.reason).toBe('completed')
    expect((await collect(agent.run('Again'))).outcome.reason).toBe('completed')
    agent.events.once('tool_approval_request', () => agent.steer('and b'))
    expect((await collect(agent.run('Write a'))).outcome.reason).toBe('awaiting_approval')
    const { events } = await collect(agent.continue({ approvals: [{ toolCallId: 'c1', approved: true }] }))
    expectOrdered(events)
    expect(summarize(events).slice(0, 7)).toEqual([
      'task_start',
      'turn_start',
      'tool_approval_decision c1 approved',
      'tool_call c1 write_file {"path":"a"}',
      'tool_result c1 success (last): wrote a',
      'turn_end',
      'user_message: and b',
    ])
    expect(summarizeHistory(await agent.history()).filter((line) => line.startsWith('user'))).toEqual([
      'user: Hi',
      'user: Again',
      'user: late',
      'user: Write a',
      'user: and b',
    ])
  })

  test('when the store fails to deliver a steered message, the messages queued after it wait for the next run', async () => {
    const h = harness()
    h.server.enqueue(
      chatStream({ id: 'r1', steps: [call('c1', 'read_file', { path: 'a' })] }),
      textReply('r2', 'Noted.'),
    )
    // The store refuses the first steered message once, as a full disk would.
    let refused = false
    const store = withAppends(h.store, (records, next) => {
      const text = records.find((r) => 'role' in r && r.role === 'user')
      if (!refused && text && 'parts' in text && JSON.stringify(text.parts).includes('first')) {
        refused = true
        return Promise.reject(new Error('disk full'))
      }
      return next(records)
    })
    const agent = h.createAgent({ tools: [readFile], store })
    agent.events.on('tool_call', () => {
      agent.steer('first')
      agent.steer('second')
    })
    await expect(collect(agent.run('Read a'))).rejects.toThrow('disk full')
    // The message being written when the store failed is the one a failure may lose; the next
    // run delivers the one still queued, right after its input.
    await collect(agent.run('Go on'))
    const users = summarizeHistory(await agent.history()).filter((line) => line.startsWith('user'))
    expect(users).toEqual(['user: Read a', 'user: Go on', 'user: second'])
  })

  test('a message steered while idle is delivered right after the next run’s input', async () => {
    const h = harness()
    h.server.enqueue(textReply('r1', 'Both seen.'))
    const agent = h.createAgent()
    agent.steer('(and be brief)')
    const { events } = await collect(agent.run('Explain'))
    expectOrdered(events)
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: Explain',
      'user_message: (and be brief)',
      'turn_start',
      'assistant_text_start',
      'text: Both seen.',
      'assistant_text_end',
      'response_complete: Both seen.',
      'usage 100/20',
      'context_usage 120/128000',
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      'task_finish completed: Both seen.',
    ])
    expect(summarizeHistory(await agent.history())).toEqual([
      'user: Explain',
      'user: (and be brief)',
      'assistant stop: text "Both seen."',
      'task_metadata turns=1 subAgents=0',
    ])
    expect(lastMessages(h.server.requests[0]!.body)).toEqual([
      { role: 'user', content: 'Explain' },
      { role: 'user', content: '(and be brief)' },
    ])
  })
})

describe('limits and switches', () => {
  test('maxTurns stops a task that keeps calling tools, with a clear error and a valid history', async () => {
    const h = harness()
    h.server.handle((request) => {
      const n = lastMessages(request.body).filter((m) => m.role === 'assistant').length + 1
      return chatStream({ id: `r${n}`, steps: [call(`c${n}`, 'read_file', { path: String(n) })] })
    })
    const agent = h.createAgent({ tools: [readFile], maxTurns: 2 })
    const { events, outcome } = await collect(agent.run('Loop forever'))

    expectOrdered(events)
    const message = 'The task stopped after 2 turns (maxTurns) before the model finished.'
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: Loop forever',
      'turn_start',
      'tool_call_start c1 read_file',
      'response_complete: ',
      'usage 100/20',
      'context_usage 120/128000',
      'tool_call c1 read_file {"path":"1"}',
      'tool_result c1 success (last): contents of 1',
      'turn_end',
      'turn_start',
      'tool_call_start c2 read_file',
      'response_complete: ',
      'usage 100/20',
      'context_usage 120/128000',
      'tool_call c2 read_file {"path":"2"}',
      'tool_result c2 success (last): contents of 2',
      'turn_end',
      `error: ${message}`,
      'task_metadata turns=2 subAgents=0',
      'task_finish max_turns: ',
    ])
    expect(outcome).toMatchObject({ reason: 'max_turns', errorMessage: message })
    const history = await agent.history()
    expectValidHistory(history)
    // The task's end records why it ended: a reader of the history can tell it from a failure.
    expect(history.at(-1)).toMatchObject({ type: 'task_metadata', reason: 'max_turns' })
    expect(summarizeHistory(history)).toEqual([
      'user: Loop forever',
      'assistant tool_use: call c1 read_file {"path":"1"}',
      'tool c1 success: contents of 1',
      'assistant tool_use: call c2 read_file {"path":"2"}',
      'tool c2 success: contents of 2',
      `error: ${message}`,
      'task_metadata turns=2 subAgents=0',
    ])
    expect(h.server.requests).toHaveLength(2)
  })

  test('setClient switches the model from the next model call on', async () => {
    const h = harness()
    h.server.enqueue(
      chatStream({ id: 'r1', steps: [call('c1', 'read_file', { path: 'a' })] }),
      textReply('r2', 'ok'),
    )
    const agent = h.createAgent({ tools: [readFile] })
    const mini = h.client({ model: 'gpt-4o-mini' })
    agent.events.on('tool_call', () => agent.setClient(mini))
    const { events } = await collect(agent.run('go'))
    expectOrdered(events)
    expect(h.server.requests.map((r) => (r.body as { model: string }).model)).toEqual([
      'gpt-4o',
      'gpt-4o-mini',
    ])
    expect(agent.client).toBe(mini)
    const models = (await agent.history()).flatMap((r) =>
      'role' in r && r.role === 'assistant' ? [r.model] : [],
    )
    expect(models).toEqual(['gpt-4o', 'gpt-4o-mini'])
  })
})

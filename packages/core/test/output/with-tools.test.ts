import { type Agent, defineSubAgent, defineTool } from '@kode/core'
import { deriveReplayEvents, exportHtml } from '@kode/session'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { anthropicStream } from '../helpers/anthropic-wire.js'
import { call, chatStream, textReply } from '../helpers/chat-wire.js'
import { collect, NOW, useHarness } from '../helpers/harness.js'
import { expectOrdered, expectValidHistory } from '../helpers/history-checks.js'
import { summarize, summarizeHistory } from '../helpers/summarize.js'
import { readFile } from '../helpers/tools.js'

const Summary = Type.Object(
  { file: Type.String(), words: Type.Integer() },
  { title: 'File summary', additionalProperties: false },
)
const VALID = '{"file":"a.txt","words":3}'

describe('structured output with tools', () => {
  const harness = useHarness()

  test('openai-chat: the model calls tools first; every call asks for the format; the final answer is validated', async () => {
    const h = harness()
    h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'read_file', { path: 'a.txt' })] }))
    h.server.enqueue(textReply('r2', VALID))
    const agent = h.createAgent({ tools: [readFile] })
    const { events, outcome } = await collect(agent.run('Summarise a.txt', { output: Summary }))

    expectOrdered(events)
    const formats = h.server.requests.map((r) => (r.body as { response_format: unknown }).response_format)
    const expected = {
      type: 'json_schema',
      json_schema: { name: 'File_summary', schema: JSON.parse(JSON.stringify(Summary)), strict: true },
    }
    expect(formats).toEqual([expected, expected])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: Summarise a.txt',
      'assistant tool_use: call c1 read_file {"path":"a.txt"}',
      'tool c1 success: contents of a.txt',
      `assistant stop: text "${VALID}"`,
      'task_metadata turns=2 subAgents=0',
    ])
    expect(outcome).toMatchObject({ reason: 'completed', output: { file: 'a.txt', words: 3 } })

    // Replay and export show the structured answer as the task's final assistant text.
    const replayed = summarize(deriveReplayEvents(history, { sessionId: agent.sessionId }))
    expect(replayed).toContain(`response_complete: ${VALID}`)
    expect(exportHtml(history)).toContain('{&quot;file&quot;:&quot;a.txt&quot;,&quot;words&quot;:3}')
  })

  test('anthropic: the answer tool is offered beside the tools with tool_choice any, and never runs as a tool', async () => {
    const h = harness()
    h.server.enqueue(
      anthropicStream('msg_1', [{ toolUse: { id: 'toolu_1', name: 'read_file', input: { path: 'a.txt' } } }]),
    )
    h.server.enqueue(
      anthropicStream('msg_2', [
        { toolUse: { id: 'toolu_2', name: 'structured_output', input: { file: 'a.txt', words: 3 } } },
      ]),
    )
    const agent = h.createAgent({
      client: h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' }),
      tools: [readFile],
    })
    const { events, outcome } = await collect(agent.run('Summarise a.txt', { output: Summary }))

    expectOrdered(events)
    for (const request of h.server.requests) {
      const body = request.body as { tools: { name: string }[]; tool_choice: unknown }
      expect(body.tools.map((tool) => tool.name)).toEqual(['read_file', 'structured_output'])
      expect(body.tool_choice).toEqual({ type: 'any' })
    }
    expect(events.filter((e) => e.type === 'tool_call').map((e) => e.toolName)).toEqual(['read_file'])
    expect(events.filter((e) => e.type === 'tool_call_start').map((e) => e.toolName)).toEqual(['read_file'])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: Summarise a.txt',
      'assistant tool_use: call toolu_1 read_file {"path":"a.txt"}',
      'tool toolu_1 success: contents of a.txt',
      `assistant stop: text "${VALID}"`,
      'task_metadata turns=2 subAgents=0',
    ])
    // The answer goes back to the model as its own text, so the session continues on any api.
    h.server.enqueue(anthropicStream('msg_3', [{ text: 'You are welcome.' }]))
    await collect(agent.run('Thanks'))
    const next = h.server.requests[2]!.body as { messages: unknown[]; tools: unknown[] }
    expect(next.messages.at(-2)).toEqual({ role: 'assistant', content: [{ type: 'text', text: VALID }] })
    expect(next.tools).toHaveLength(1)
    expect(outcome).toMatchObject({ reason: 'completed', text: VALID, output: { file: 'a.txt', words: 3 } })
  })

  test('anthropic with extended thinking: tool_choice auto, and an answer after a preamble is read', async () => {
    const h = harness()
    h.server.enqueue(
      anthropicStream('msg_1', [
        { thinking: 'Count the words.', signature: 'sig' },
        { text: 'Here is the summary.' },
        { toolUse: { id: 'toolu_1', name: 'structured_output', input: { file: 'a.txt', words: 3 } } },
      ]),
    )
    const agent = h.createAgent({
      client: h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' }),
      modelSettings: { reasoning: { budgetTokens: 2048 } },
    })
    const { outcome } = await collect(agent.run('Summarise a.txt', { output: Summary }))
    expect(h.server.requests[0]!.body).toMatchObject({
      thinking: { type: 'enabled', budget_tokens: 2048 },
      tool_choice: { type: 'auto' },
    })
    expect(summarizeHistory(await agent.history())).toEqual([
      'user: Summarise a.txt',
      `assistant stop: thinking "Count the words." | thinking_signature | text "Here is the summary." | text "${VALID}"`,
      'task_metadata turns=1 subAgents=0',
    ])
    expect(outcome).toMatchObject({ reason: 'completed', output: { file: 'a.txt', words: 3 } })
  })

  test('anthropic: a host tool named structured_output is refused as an invalid request', async () => {
    const h = harness()
    const clash = { ...readFile, name: 'structured_output' }
    const agent = h.createAgent({
      client: h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' }),
      tools: [clash],
    })
    const { outcome } = await collect(agent.run('Hi', { output: Summary }))
    expect(outcome.reason).toBe('error')
    expect(outcome.errorMessage).toContain(
      'a tool is named structured_output, the name structured output uses',
    )
    expect(h.server.requests).toHaveLength(0)
  })

  test('a sub-agent with an output answers its parent with the validated value', async () => {
    const h = harness()
    const counter = defineSubAgent({ name: 'counter', description: 'Counts words', output: Summary })
    h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'counter', { prompt: 'Count a.txt' })] }))
    h.server.enqueue(textReply('r2', `\`\`\`json\n${VALID}\n\`\`\``))
    h.server.enqueue(textReply('r3', 'a.txt has 3 words.'))
    const agent = h.createAgent({ tools: [counter] })
    const { events, outcome } = await collect(agent.run('How long is a.txt?'))

    const finishes = events.filter((e) => e.type === 'task_finish')
    expect(finishes.map((e) => [e.sessionId === agent.sessionId, e.hasStructuredOutput])).toEqual([
      [false, true],
      [true, false],
    ])
    const [parent, child, last] = h.server.requests.map((r) => r.body as Record<string, unknown>)
    expect(parent).not.toHaveProperty('response_format')
    expect(child).toHaveProperty('response_format.json_schema.name', 'File_summary')
    expect(last).not.toHaveProperty('response_format')
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ result: VALID, status: 'success' })
    expect(outcome).toMatchObject({ reason: 'completed', text: 'a.txt has 3 words.' })
    expect('output' in outcome).toBe(false)
  })

  test('a structured run paused for approval ends with the output when continue passes it again', async () => {
    const h = harness()
    const save = defineTool({
      name: 'save',
      description: 'Saves the summary',
      parameters: Type.Object({ file: Type.String() }),
      needsApproval: true,
      execute: ({ file }) => `saved ${file}`,
    })
    h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'save', { file: 'a.txt' })] }))
    h.server.enqueue(textReply('r2', VALID))
    const agent = h.createAgent({ tools: [save] })
    const paused = await collect(agent.run('Summarise and save a.txt', { output: Summary }))
    expect(paused.outcome.reason).toBe('awaiting_approval')
    expect('output' in paused.outcome).toBe(false)
    expect(paused.events.at(-1)).toMatchObject({ hasStructuredOutput: false })

    const { events, outcome } = await collect(
      agent.continue({ approvals: [{ toolCallId: 'c1', approved: true }], output: Summary }),
    )
    expectOrdered(events)
    expect(h.server.requests[1]!.body).toHaveProperty('response_format.json_schema.name', 'File_summary')
    expect(events.at(-1)).toMatchObject({
      type: 'task_finish',
      reason: 'completed',
      hasStructuredOutput: true,
    })
    expect(outcome).toMatchObject({ reason: 'completed', output: { file: 'a.txt', words: 3 } })
  })

  test('a structured run corrected before it paused for approval gets no second correction after it', async () => {
    const h = harness()
    const save = defineTool({
      name: 'save',
      description: 'Saves the summary',
      parameters: Type.Object({ file: Type.String() }),
      needsApproval: true,
      execute: ({ file }) => `saved ${file}`,
    })
    // Not JSON: the one corrective turn; the model then asks to save, and the task pauses.
    h.server.enqueue(textReply('r1', 'a.txt has 3 words.'))
    h.server.enqueue(chatStream({ id: 'r2', steps: [call('c1', 'save', { file: 'a.txt' })] }))
    h.server.enqueue(textReply('r3', 'Saved it.'))
    const agent = h.createAgent({ tools: [save] })
    const paused = await collect(agent.run('Summarise and save a.txt', { output: Summary }))
    expect(paused.outcome.reason).toBe('awaiting_approval')

    const { outcome } = await collect(
      agent.continue({ approvals: [{ toolCallId: 'c1', approved: true }], output: Summary }),
    )
    // The task is the one that was corrected: its answer after the pause is judged, not corrected again.
    expect(outcome).toMatchObject({
      reason: 'structured_output_invalid',
      errorMessage:
        'The final answer is not valid against the output schema after a corrective turn: the answer is not JSON',
    })
    expect(h.server.requests).toHaveLength(3)
    const corrections = summarizeHistory(await agent.history()).filter((line) =>
      line.startsWith('user: Your final answer'),
    )
    expect(corrections).toHaveLength(1)
  })
})

describe('a structured task across its pauses and a restart', () => {
  const harness = useHarness('file')
  const save = defineTool({
    name: 'save',
    description: 'Saves the summary',
    parameters: Type.Object({ file: Type.String() }),
    needsApproval: true,
    execute: ({ file }) => `saved ${file}`,
  })
  const corrections = async (agent: Agent) =>
    summarizeHistory(await agent.history()).filter((line) => line.startsWith('user: Your final answer'))

  test('corrected, paused, then continued by a new agent over a reopened store: no second correction', async () => {
    const h = harness()
    // Not JSON: the one corrective turn; the model then asks to save twice, pausing twice.
    h.server.enqueue(textReply('r1', 'a.txt has 3 words.'))
    h.server.enqueue(chatStream({ id: 'r2', steps: [call('c1', 'save', { file: 'a.txt' })] }))
    h.server.enqueue(chatStream({ id: 'r3', steps: [call('c2', 'save', { file: 'b.txt' })] }))
    h.server.enqueue(textReply('r4', 'Saved both.'))
    const agent = h.createAgent({ tools: [save] })
    const paused = await collect(agent.run('Summarise and save a.txt', { output: Summary }))
    expect(paused.outcome.reason).toBe('awaiting_approval')
    const again = await collect(
      agent.continue({ approvals: [{ toolCallId: 'c1', approved: true }], output: Summary }),
    )
    expect(again.outcome.reason).toBe('awaiting_approval')

    // The process ends; another one carries the task on over the same files.
    const later = h.createAgent({ store: h.reopenStore(), sessionId: agent.sessionId, tools: [save] })
    const { outcome } = await collect(
      later.continue({ approvals: [{ toolCallId: 'c2', approved: true }], output: Summary }),
    )
    expect(outcome).toMatchObject({
      reason: 'structured_output_invalid',
      errorMessage:
        'The final answer is not valid against the output schema after a corrective turn: the answer is not JSON',
    })
    expect(h.server.requests).toHaveLength(4)
    expect(await corrections(later)).toHaveLength(1)
  })

  test('corrected, paused, then a continue whose process died after the approved call ran: no second correction', async () => {
    const h = harness()
    h.server.enqueue(textReply('r1', 'a.txt has 3 words.'))
    h.server.enqueue(chatStream({ id: 'r2', steps: [call('c1', 'save', { file: 'a.txt' })] }))
    h.server.enqueue(textReply('r3', 'Saved it.'))
    const agent = h.createAgent({ tools: [save] })
    const paused = await collect(agent.run('Summarise and save a.txt', { output: Summary }))
    expect(paused.outcome.reason).toBe('awaiting_approval')
    // What a continue leaves when its process dies once the approved call ran: the decision and
    // the result, no task_metadata.
    const store = h.reopenStore()
    const lease = await store.acquire(agent.sessionId)
    await lease.append([
      {
        type: 'approval_decision',
        id: 'd1',
        createdAt: NOW,
        toolCallId: 'c1',
        toolName: 'save',
        approved: true,
      },
      {
        role: 'tool',
        id: 't1',
        createdAt: NOW,
        toolCallId: 'c1',
        toolName: 'save',
        status: 'success',
        outputText: 'saved a.txt',
        parts: [],
      },
    ])
    await lease.release()

    const later = h.createAgent({ store: h.reopenStore(), sessionId: agent.sessionId, tools: [save] })
    const { outcome } = await collect(later.continue({ output: Summary }))
    expect(outcome).toMatchObject({
      reason: 'structured_output_invalid',
      errorMessage:
        'The final answer is not valid against the output schema after a corrective turn: the answer is not JSON',
    })
    expect(h.server.requests).toHaveLength(3)
    expect(await corrections(later)).toHaveLength(1)
  })

  test("a host's denial in the engine's new-message words does not make a new task: no second correction", async () => {
    const h = harness()
    // Corrected, then paused to save; the host denies with the very text a new message's denial
    // has. The task goes on, pauses again, and answers wrongly once more.
    h.server.enqueue(textReply('r1', 'a.txt has 3 words.'))
    h.server.enqueue(chatStream({ id: 'r2', steps: [call('c1', 'save', { file: 'a.txt' })] }))
    h.server.enqueue(chatStream({ id: 'r3', steps: [call('c2', 'save', { file: 'a.txt' })] }))
    h.server.enqueue(textReply('r4', 'Saved it.'))
    const agent = h.createAgent({ tools: [save] })
    expect((await collect(agent.run('Summarise and save a.txt', { output: Summary }))).outcome.reason).toBe(
      'awaiting_approval',
    )
    const denied = agent.continue({
      approvals: [{ toolCallId: 'c1', approved: false, reason: 'the user sent a new message instead' }],
      output: Summary,
    })
    expect((await collect(denied)).outcome.reason).toBe('awaiting_approval')

    const later = h.createAgent({ store: h.reopenStore(), sessionId: agent.sessionId, tools: [save] })
    const { outcome } = await collect(
      later.continue({ approvals: [{ toolCallId: 'c2', approved: true }], output: Summary }),
    )
    expect(outcome).toMatchObject({ reason: 'structured_output_invalid' })
    expect(h.server.requests).toHaveLength(4)
    expect(await corrections(later)).toHaveLength(1)
  })

  test("a new task after a corrected task that paused gets its own correction: the earlier task's is not its", async () => {
    const h = harness()
    // The first task is corrected, then pauses to save; the user moves on with a new message.
    h.server.enqueue(textReply('r1', 'a.txt has 3 words.'))
    h.server.enqueue(chatStream({ id: 'r2', steps: [call('c1', 'save', { file: 'a.txt' })] }))
    // The new task pauses to save before it answers, then answers wrongly, then rightly.
    h.server.enqueue(chatStream({ id: 'r3', steps: [call('c2', 'save', { file: 'b.txt' })] }))
    h.server.enqueue(textReply('r4', 'b.txt has 3 words.'))
    h.server.enqueue(textReply('r5', '{"file":"b.txt","words":3}'))
    const agent = h.createAgent({ tools: [save] })
    const first = await collect(agent.run('Summarise and save a.txt', { output: Summary }))
    expect(first.outcome.reason).toBe('awaiting_approval')
    const second = await collect(agent.run('Summarise and save b.txt instead', { output: Summary }))
    expect(second.outcome.reason).toBe('awaiting_approval')

    const later = h.createAgent({ store: h.reopenStore(), sessionId: agent.sessionId, tools: [save] })
    const { outcome } = await collect(
      later.continue({ approvals: [{ toolCallId: 'c2', approved: true }], output: Summary }),
    )
    expect(outcome).toMatchObject({ reason: 'completed', output: { file: 'b.txt', words: 3 } })
    expect(await corrections(later)).toHaveLength(2)
  })
})

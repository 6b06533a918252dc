import { type HistoryEvent, toolCallsOf } from '@kode/protocol'
import { scriptedResponse } from '@kode/providers/testing'
import { expect, test } from 'vitest'
import { anthropicStream } from './helpers/anthropic-wire.js'
import { collect, useHarness } from './helpers/harness.js'
import { expectOrdered, expectValidHistory } from './helpers/history-checks.js'
import { replayedPart, replayOf } from './helpers/replayed.js'
import { summarize, summarizeHistory } from './helpers/summarize.js'
import { readFile } from './helpers/tools.js'

const harness = useHarness()

const run = {
  type: 'server_tool_use',
  id: 'srvtoolu_1',
  name: 'code_execution',
  input: { code: 'print(6*7)' },
}
const ran = {
  type: 'code_execution_tool_result',
  tool_use_id: 'srvtoolu_1',
  content: { type: 'code_execution_result', stdout: '42\n', stderr: '', return_code: 0, content: [] },
}
const container = { id: 'container_1', expires_at: '2026-12-01T00:00:00Z' }

/** A response Anthropic paused mid-turn: signed thinking, a server tool's call and result, text. */
function paused() {
  return anthropicStream(
    'msg_1',
    [
      { thinking: 'I will run it.', signature: 'sig-1' },
      { server: run },
      { server: ran },
      { text: 'Ran it.' },
    ],
    { stop: 'pause_turn', container },
  )
}

/** The paused response as the next request must send it back: every block as it came. */
const pausedBack = {
  role: 'assistant',
  content: [
    { type: 'thinking', thinking: 'I will run it.', signature: 'sig-1' },
    run,
    ran,
    { type: 'text', text: 'Ran it.' },
  ],
}

const question = {
  role: 'user',
  content: [{ type: 'text', text: 'What is 6 times 7?', cache_control: { type: 'ephemeral' } }],
}

type Body = { messages: unknown[] } & Record<string, unknown>

test('a turn Anthropic paused is carried on: the history goes back as it is, ending with the paused response', async () => {
  const h = harness()
  h.server.enqueue(paused(), anthropicStream('msg_2', [{ text: 'It is 42.' }]))
  const agent = h.createAgent({
    client: h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' }),
    tools: [readFile],
    system: 'Be brief.',
    modelSettings: { maxOutputTokens: 4096, reasoning: { budgetTokens: 2048 } },
  })
  const { events, outcome } = await collect(agent.run('What is 6 times 7?'))

  expect(outcome).toMatchObject({ reason: 'completed', text: 'It is 42.' })
  expect(h.server.requests).toHaveLength(2)
  const [first, second] = h.server.requests.map((request) => request.body as Body)
  const cache = { type: 'ephemeral' }
  expect(first).toEqual({
    model: 'claude-sonnet-4-5',
    max_tokens: 4096,
    messages: [question],
    stream: true,
    system: [{ type: 'text', text: 'Be brief.', cache_control: cache }],
    tools: [
      {
        name: 'read_file',
        description: 'Reads a file',
        input_schema: { type: 'object', required: ['path'], properties: { path: { type: 'string' } } },
        cache_control: cache,
      },
    ],
    thinking: { type: 'enabled', budget_tokens: 2048 },
  })
  // No new user message: the paused response is the last one, sent back whole (thinking with its
  // signature, the server tool's blocks), and the container it ran in is named.
  expect(second).toEqual({ ...first, messages: [question, pausedBack], container: 'container_1' })

  // Each response is a turn of its own, as the replay of the history shows it.
  expectOrdered(events)
  expect(summarize(events)).toEqual([
    'task_start',
    'user_message: What is 6 times 7?',
    'turn_start',
    'thinking_start',
    'thinking: I will run it.',
    'thinking_end',
    'assistant_text_start',
    'text: Ran it.',
    'assistant_text_end',
    'response_complete: Ran it. | thinking: I will run it.',
    'usage 50/30',
    'context_usage 80/200000',
    'turn_end',
    'turn_start',
    'assistant_text_start',
    'text: It is 42.',
    'assistant_text_end',
    'response_complete: It is 42.',
    'usage 50/30',
    'context_usage 80/200000',
    'turn_end',
    'task_metadata turns=2 subAgents=0',
    'task_finish completed: It is 42.',
  ])
  const history = await agent.history()
  expectValidHistory(history)
  expect(summarizeHistory(history)).toEqual([
    'system: Be brief.',
    'user: What is 6 times 7?',
    'assistant -: thinking "I will run it." | thinking_signature | server_tool | server_tool | text "Ran it."',
    'assistant stop: text "It is 42."',
    'task_metadata turns=2 subAgents=0',
  ])
  expect(history[2]).toMatchObject({ rawStopReason: 'pause_turn', api: 'anthropic' })
  expect(replayedPart(events)).toEqual(replayOf(history, agent.sessionId))
})

test('a paused turn counts against maxTurns like a turn that called tools', async () => {
  const h = harness()
  h.server.enqueue(paused())
  const agent = h.createAgent({
    client: h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' }),
    maxTurns: 1,
  })
  const { events, outcome } = await collect(agent.run('What is 6 times 7?'))

  expect(h.server.requests).toHaveLength(1)
  const message = 'The task stopped after 1 turns (maxTurns) before the model finished.'
  expect(outcome).toMatchObject({ reason: 'max_turns', text: 'Ran it.', errorMessage: message })
  expectOrdered(events)
  expect(summarize(events).slice(-4)).toEqual([
    'turn_end',
    `error: ${message}`,
    'task_metadata turns=1 subAgents=0',
    'task_finish max_turns: Ran it.',
  ])
  expectValidHistory(await agent.history())
})

test('a message steered during a paused turn waits until the turn carried on has ended', async () => {
  const h = harness()
  h.server.enqueue(
    paused(),
    anthropicStream('msg_2', [{ text: 'It is 42.' }]),
    anthropicStream('msg_3', [{ text: 'Quarante-deux.' }]),
  )
  const agent = h.createAgent({ client: h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' }) })
  let steered = false
  agent.events.on('assistant_text_delta', () => {
    if (!steered) agent.steer('In French, please.')
    steered = true
  })
  const { outcome } = await collect(agent.run('What is 6 times 7?'))

  expect(outcome).toMatchObject({ reason: 'completed', text: 'Quarante-deux.' })
  const bodies = h.server.requests.map((request) => request.body as Body)
  expect(bodies).toHaveLength(3)
  expect(bodies[1]!.messages).toEqual([question, pausedBack])
  // The paused response and its continuation are one assistant turn on this wire.
  const turn = { role: 'assistant', content: [...pausedBack.content, { type: 'text', text: 'It is 42.' }] }
  expect(bodies[2]!.messages.slice(1)).toEqual([
    turn,
    {
      role: 'user',
      content: [{ type: 'text', text: 'In French, please.', cache_control: { type: 'ephemeral' } }],
    },
  ])
  expectValidHistory(await agent.history())
})

test('a session whose process died after a paused response carries the turn on with continue', async () => {
  const h = harness()
  // What the dead process had persisted: the input and the paused response, no end of the task.
  const seeded: HistoryEvent[] = [
    { role: 'user', id: 'u1', createdAt: 1, parts: [{ type: 'text', text: 'What is 6 times 7?' }] },
    {
      role: 'assistant',
      id: 'a1',
      createdAt: 2,
      parts: [
        { type: 'thinking_text', text: 'I will run it.' },
        { type: 'thinking_signature', signature: 'sig-1', format: 'anthropic', model: 'claude-sonnet-4-5' },
        { type: 'server_tool', format: 'anthropic', block: run },
        { type: 'server_tool', format: 'anthropic', block: ran },
        { type: 'text', text: 'Ran it.' },
      ],
      rawStopReason: 'pause_turn',
      responseId: 'msg_1',
      model: 'claude-sonnet-4-5',
      provider: 'anthropic',
      api: 'anthropic',
      providerFields: { format: 'anthropic', fields: { container } },
    },
  ]
  await h.store.create({ id: 'dead' })
  await h.store.append('dead', seeded)
  h.server.enqueue(anthropicStream('msg_2', [{ text: 'It is 42.' }]))
  const agent = h.createAgent({
    sessionId: 'dead',
    client: h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' }),
  })
  agent.steer('In French, please.')
  h.server.enqueue(anthropicStream('msg_3', [{ text: 'Quarante-deux.' }]))
  const { events, outcome } = await collect(agent.continue())

  expect(outcome).toMatchObject({ reason: 'completed', text: 'Quarante-deux.' })
  const bodies = h.server.requests.map((request) => request.body as Body)
  expect(bodies).toHaveLength(2)
  // The turn is carried on first, with the history as the dead process left it; the message
  // steered before `continue` follows its end.
  expect(bodies[0]).toMatchObject({ messages: [question, pausedBack], container: 'container_1' })
  expect(bodies[1]!.messages.slice(1)).toEqual([
    { role: 'assistant', content: [...pausedBack.content, { type: 'text', text: 'It is 42.' }] },
    {
      role: 'user',
      content: [{ type: 'text', text: 'In French, please.', cache_control: { type: 'ephemeral' } }],
    },
  ])
  expectOrdered(events)
  const history = await agent.history()
  expectValidHistory(history)
  // The replay of the dead process's records, then this task's events, are the replay of the whole.
  expect([...replayOf(seeded, 'dead'), ...replayedPart(events)]).toEqual(replayOf(history, 'dead'))
})

test('another wire whose raw stop value reads pause_turn ends the task as any answer does', async () => {
  const h = harness()
  h.server.enqueue(
    scriptedResponse('openai-chat', { id: 'r1', steps: [{ text: 'Done.' }], stop: 'pause_turn' }),
  )
  const agent = h.createAgent()
  const { outcome } = await collect(agent.run('Go'))

  expect(outcome).toMatchObject({ reason: 'completed', text: 'Done.' })
  expect(h.server.requests).toHaveLength(1)
  const history = await agent.history()
  const answer = history.find((record) => 'role' in record && record.role === 'assistant')
  expect(answer).toMatchObject({ rawStopReason: 'pause_turn', api: 'openai-chat' })
  expect(answer && 'role' in answer && answer.role === 'assistant' && toolCallsOf(answer)).toEqual([])
})

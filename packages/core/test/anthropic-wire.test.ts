import { reactFormatter } from '@kode/core'
import { frameTyped } from '@kode/providers/testing'
import { deriveReplayEvents } from '@kode/session'
import { expect, test } from 'vitest'
import { anthropicStream } from './helpers/anthropic-wire.js'
import { collect, useHarness } from './helpers/harness.js'
import { expectOrdered, expectValidHistory } from './helpers/history-checks.js'
import { summarize, summarizeHistory } from './helpers/summarize.js'
import { readFile } from './helpers/tools.js'

const harness = useHarness()

test('over the Anthropic wire: thinking with its signature, a tool turn, and the signature sent back', async () => {
  const h = harness()
  h.server.enqueue(
    anthropicStream('msg_1', [
      { thinking: 'I need the file first.', signature: 'sig-abc' },
      { text: 'Reading it.' },
      { toolUse: { id: 'toolu_1', name: 'read_file', input: { path: 'notes.md' } } },
    ]),
    anthropicStream('msg_2', [{ text: 'The notes say hi.' }]),
  )
  const agent = h.createAgent({
    client: h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' }),
    tools: [readFile],
    system: 'Be helpful.',
  })
  const { events, outcome } = await collect(agent.run('What do the notes say?'))

  expectOrdered(events)
  expect(summarize(events)).toEqual([
    'task_start',
    'user_message: What do the notes say?',
    'turn_start',
    'thinking_start',
    'thinking: I need the file first.',
    'thinking_end',
    'assistant_text_start',
    'text: Reading it.',
    'assistant_text_end',
    'tool_call_start toolu_1 read_file',
    'response_complete: Reading it. | thinking: I need the file first.',
    'usage 50/30',
    expect.stringMatching(/^context_usage 80\/\d+$/),
    'tool_call toolu_1 read_file {"path":"notes.md"}',
    'tool_result toolu_1 success (last): contents of notes.md',
    'turn_end',
    'turn_start',
    'assistant_text_start',
    'text: The notes say hi.',
    'assistant_text_end',
    'response_complete: The notes say hi.',
    'usage 50/30',
    expect.stringMatching(/^context_usage 80\/\d+$/),
    'turn_end',
    'task_metadata turns=2 subAgents=0',
    'task_finish completed: The notes say hi.',
  ])
  expect(outcome).toMatchObject({ reason: 'completed', text: 'The notes say hi.' })
  const history = await agent.history()
  expectValidHistory(history)
  expect(summarizeHistory(history)).toEqual([
    'system: Be helpful.',
    'user: What do the notes say?',
    'assistant tool_use: thinking "I need the file first." | thinking_signature | text "Reading it." | call toolu_1 read_file {"path":"notes.md"}',
    'tool toolu_1 success: contents of notes.md',
    'assistant stop: text "The notes say hi."',
    'task_metadata turns=2 subAgents=0',
  ])
  // The second request replays the thinking block with its signature, then the tool result.
  const second = h.server.requests[1]!.body as {
    system: unknown
    messages: { role: string; content: unknown }[]
  }
  expect(second.messages[1]).toMatchObject({
    role: 'assistant',
    content: [
      { type: 'thinking', thinking: 'I need the file first.', signature: 'sig-abc' },
      { type: 'text', text: 'Reading it.' },
      { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'notes.md' } },
    ],
  })
  expect(second.messages[2]).toMatchObject({
    role: 'user',
    content: [
      {
        type: 'tool_result',
        tool_use_id: 'toolu_1',
        content: [{ type: 'text', text: 'contents of notes.md' }],
      },
    ],
  })
})

test('a ReAct agent over the Anthropic wire sends past actions as text, so a request without tools holds no tool blocks', async () => {
  const h = harness()
  const action = 'Thought: I need the notes.\nAction: read_file\nArgs: {"path": "notes.md"}'
  h.server.enqueue(
    anthropicStream('msg_1', [{ text: action }]),
    anthropicStream('msg_2', [{ text: 'Thought: I have them.\nFinal Answer: The notes say hi.' }]),
  )
  const agent = h.createAgent({
    client: h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' }),
    tools: [readFile],
    historyFormatter: reactFormatter(),
  })
  const { events, outcome } = await collect(agent.run('What do the notes say?'))
  expectOrdered(events)
  const answer = 'Thought: I have them.\nFinal Answer: The notes say hi.'
  expect(summarize(events)).toEqual([
    'task_start',
    'user_message: What do the notes say?',
    'turn_start',
    'assistant_text_start',
    `text: ${action}`,
    'assistant_text_end',
    `response_complete: ${action}`,
    'usage 50/30',
    expect.stringMatching(/^context_usage 80\/\d+$/),
    'tool_call call_m1_0 read_file {"path": "notes.md"}',
    'tool_result call_m1_0 success (last): contents of notes.md',
    'turn_end',
    'turn_start',
    'assistant_text_start',
    `text: ${answer}`,
    'assistant_text_end',
    `response_complete: ${answer}`,
    'usage 50/30',
    expect.stringMatching(/^context_usage 80\/\d+$/),
    'turn_end',
    'task_metadata turns=2 subAgents=0',
    'task_finish completed: The notes say hi.',
  ])
  expect(outcome).toMatchObject({ reason: 'completed', text: 'The notes say hi.' })
  const history = await agent.history()
  expectValidHistory(history)
  // The typed history holds the action as a call, as with native tools...
  expect(summarizeHistory(history)).toEqual([
    'user: What do the notes say?',
    `assistant stop: text "${action}" | call call_m1_0 read_file {"path": "notes.md"}`,
    'tool call_m1_0 success: contents of notes.md',
    `assistant stop: text "${answer}"`,
    'task_metadata turns=2 subAgents=0',
  ])
  // ...but the second request, which declares no tools, sends it as text and an observation.
  const second = h.server.requests[1]!.body as { tools?: unknown; messages: unknown[] }
  expect(second.tools).toBeUndefined()
  expect(second.messages).toMatchObject([
    { role: 'user', content: [{ type: 'text', text: 'What do the notes say?' }] },
    { role: 'assistant', content: [{ type: 'text', text: action }] },
    { role: 'user', content: [{ type: 'text', text: 'Observation: contents of notes.md' }] },
  ])
  expect(JSON.stringify(second)).not.toMatch(/"tool_use"|"tool_result"/)
})

test('over the Anthropic wire: server-tool blocks are never executed, announced with the response, kept and replayed alike', async () => {
  const h = harness()
  const search = { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'kode' } }
  const found = {
    type: 'web_search_tool_result',
    tool_use_id: 'srvtoolu_1',
    content: [{ type: 'web_search_result', title: 'Kode', url: 'https://example.org/kode' }],
  }
  h.server.enqueue(anthropicStream('msg_1', [{ server: search }, { server: found }, { text: 'Found it.' }]))
  const agent = h.createAgent({
    client: h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' }),
    tools: [readFile],
  })
  const { events, outcome } = await collect(agent.run('Search for kode'))

  expectOrdered(events)
  expect(events.some((e) => e.type === 'tool_call' || e.type === 'tool_call_start')).toBe(false)
  const serverTools = [
    { type: 'server_tool', format: 'anthropic', block: search },
    { type: 'server_tool', format: 'anthropic', block: found },
  ]
  const complete = events.find((e) => e.type === 'response_complete')
  expect(complete).toMatchObject({ content: 'Found it.', serverTools })
  expect(outcome).toMatchObject({ reason: 'completed', text: 'Found it.' })
  const history = await agent.history()
  expectValidHistory(history)
  expect(history.find((e) => 'role' in e && e.role === 'assistant')).toMatchObject({
    parts: [...serverTools, { type: 'text', text: 'Found it.' }],
  })
  const replayed = deriveReplayEvents(history, { sessionId: agent.sessionId })
  const { timestamp: _live, ...live } = complete!
  const { timestamp: _replayed, ...again } = replayed.find((e) => e.type === 'response_complete')!
  expect(again).toEqual(live)
})

test('over the Anthropic wire: citations are kept on the text, announced with the response, replayed alike', async () => {
  const h = harness()
  const cited = {
    type: 'web_search_result_location',
    cited_text: 'The press dates from about 1440.',
    url: 'https://example.org/press',
    title: 'Press',
    encrypted_index: 'EI1',
  }
  const lines = [
    { type: 'message_start', message: { id: 'msg_c', usage: { input_tokens: 10, output_tokens: 1 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '', citations: [] } },
    { type: 'content_block_delta', index: 0, delta: { type: 'citations_delta', citation: cited } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'About 1440.' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 5 } },
    { type: 'message_stop' },
  ]
  h.server.enqueue({ body: frameTyped(lines.map((line) => JSON.stringify(line))) })
  const agent = h.createAgent({ client: h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' }) })
  const { events } = await collect(agent.run('When?'))

  expectOrdered(events)
  const citations = [
    {
      url: 'https://example.org/press',
      title: 'Press',
      citedText: 'The press dates from about 1440.',
      providerFields: { format: 'anthropic', fields: cited },
    },
  ]
  const complete = events.find((e) => e.type === 'response_complete')
  expect(complete).toMatchObject({ content: 'About 1440.', citations })
  const history = await agent.history()
  expectValidHistory(history)
  expect(history.find((e) => 'role' in e && e.role === 'assistant')).toMatchObject({
    parts: [{ type: 'text', text: 'About 1440.', citations }],
  })
  const replayed = deriveReplayEvents(history, { sessionId: agent.sessionId })
  const { timestamp: _live, ...live } = complete!
  const { timestamp: _replayed, ...again } = replayed.find((e) => e.type === 'response_complete')!
  expect(again).toEqual(live)
})

import { type Agent, defineSubAgent, defineTool, reactFormatter } from '@kode/core'
import { checkEventOrder } from '@kode/protocol'
import type { RecordedRequest } from '@kode/providers/testing'
import { deriveReplayEvents, exportHtml } from '@kode/session'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { say, stalledChatStream, textReply } from './helpers/chat-wire.js'
import { collect, collectInterrupting, useHarness } from './helpers/harness.js'
import { expectOrdered, expectValidHistory } from './helpers/history-checks.js'
import { summarize, summarizeHistory, textResponse } from './helpers/summarize.js'
import { readFile } from './helpers/tools.js'

const harness = useHarness()

const act = (thought: string, tool: string, args: string) =>
  `Thought: ${thought}\nAction: ${tool}\nArgs: ${args}`

/** Reads a.txt, then b.txt, then answers. */
function twoReadsThenAnswer(h: ReturnType<typeof harness>): void {
  h.server.enqueue(
    textReply('r1', act('I need a.txt first.', 'read_file', '{"path": "a.txt"}')),
    textReply('r2', act('Now b.txt.', 'read_file', '{"path": "b.txt"}')),
    textReply('r3', 'Thought: I have both.\nFinal Answer: a.txt and b.txt both say hello.'),
  )
}

type ChatBody = {
  messages: { role: string; content?: unknown; tool_calls?: { id: string }[]; tool_call_id?: string }[]
  tools?: unknown
}
const bodyOf = (request: RecordedRequest | undefined) => request!.body as ChatBody

describe('a ReAct task', () => {
  test('runs the actions it reads from the text, turn by turn, and answers with the final answer', async () => {
    const h = harness()
    twoReadsThenAnswer(h)
    const agent = h.createAgent({ tools: [readFile], historyFormatter: reactFormatter() })
    const { events, outcome } = await collect(agent.run('What do a.txt and b.txt say?'))

    expectOrdered(events)
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: What do a.txt and b.txt say?',
      ...textResponse(act('I need a.txt first.', 'read_file', '{"path": "a.txt"}')),
      'tool_call call_m1_0 read_file {"path": "a.txt"}',
      'tool_result call_m1_0 success (last): contents of a.txt',
      'turn_end',
      ...textResponse(act('Now b.txt.', 'read_file', '{"path": "b.txt"}')),
      'tool_call call_m2_0 read_file {"path": "b.txt"}',
      'tool_result call_m2_0 success (last): contents of b.txt',
      'turn_end',
      ...textResponse('Thought: I have both.\nFinal Answer: a.txt and b.txt both say hello.'),
      'turn_end',
      'task_metadata turns=3 subAgents=0',
      'task_finish completed: a.txt and b.txt both say hello.',
    ])
    expect(outcome).toMatchObject({ reason: 'completed', text: 'a.txt and b.txt both say hello.' })

    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: What do a.txt and b.txt say?',
      'assistant stop: text "Thought: I need a.txt first.\nAction: read_file\nArgs: {"path": "a.txt"}" | call call_m1_0 read_file {"path": "a.txt"}',
      'tool call_m1_0 success: contents of a.txt',
      'assistant stop: text "Thought: Now b.txt.\nAction: read_file\nArgs: {"path": "b.txt"}" | call call_m2_0 read_file {"path": "b.txt"}',
      'tool call_m2_0 success: contents of b.txt',
      'assistant stop: text "Thought: I have both.\nFinal Answer: a.txt and b.txt both say hello."',
      'task_metadata turns=3 subAgents=0',
    ])
  })

  test("with history: 'tool_calls' the request still offers no native tools and carries the format; past actions go back as tool calls with stable ids", async () => {
    const h = harness()
    twoReadsThenAnswer(h)
    const historyFormatter = reactFormatter({ history: 'tool_calls' })
    await collect(h.createAgent({ system: 'Be brief.', tools: [readFile], historyFormatter }).run('Go'))
    const [first, second, third] = h.server.requests.map(bodyOf)
    expect(first!.tools).toBeUndefined()
    expect(first!.messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining('Args:') })
    expect(first!.messages.slice(1)).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Go' },
    ])
    // The call ids in order: on assistant messages' calls and on tool messages.
    const calls = (body: ChatBody) =>
      body.messages.flatMap((m) =>
        m.tool_call_id ? [m.tool_call_id] : (m.tool_calls ?? []).map((c) => c.id),
      )
    expect(calls(second!)).toEqual(['call_m1_0', 'call_m1_0'])
    expect(calls(third!)).toEqual(['call_m1_0', 'call_m1_0', 'call_m2_0', 'call_m2_0'])
    expect(third!.messages.slice(0, second!.messages.length)).toEqual(second!.messages)
  })

  test('by default past actions go back as the model wrote them, results as observations (the requests declare no tools)', async () => {
    const h = harness()
    twoReadsThenAnswer(h)
    const agent = h.createAgent({ tools: [readFile], historyFormatter: reactFormatter() })
    await collect(agent.run('Go'))
    expect(bodyOf(h.server.requests[2]).tools).toBeUndefined()
    expect(bodyOf(h.server.requests[2]).messages.slice(1)).toEqual([
      { role: 'user', content: 'Go' },
      { role: 'assistant', content: act('I need a.txt first.', 'read_file', '{"path": "a.txt"}') },
      { role: 'user', content: 'Observation: contents of a.txt' },
      { role: 'assistant', content: act('Now b.txt.', 'read_file', '{"path": "b.txt"}') },
      { role: 'user', content: 'Observation: contents of b.txt' },
    ])
    // The history itself is the same typed history as with tool calls.
    expect(summarizeHistory(await agent.history())[1]).toMatch(/\| call call_m1_0 read_file/)
  })

  test('with real UUID message ids, the 43-character action ids are rewritten to fit openai-chat, stably', async () => {
    const h = harness()
    twoReadsThenAnswer(h)
    const uuids = [
      '0f8fad5b-d9cb-469f-a165-70867728950e',
      '7c9e6679-7425-40de-944b-e07fc1f90ae7',
      'c9bf9e57-1685-4c89-bafb-ff5af830be8a',
    ]
    const agent = h.createAgent({
      client: h.client({ createId: () => uuids.shift()! }),
      tools: [readFile],
      historyFormatter: reactFormatter({ history: 'tool_calls' }),
    })
    const { events, outcome } = await collect(agent.run('Go'))
    expectOrdered(events)
    expect(outcome).toMatchObject({ reason: 'completed', text: 'a.txt and b.txt both say hello.' })

    // The history keeps the derived ids as they are: `call_<message id>_<index>`, 43 characters.
    const first = 'call_0f8fad5b-d9cb-469f-a165-70867728950e_0'
    const second = 'call_7c9e6679-7425-40de-944b-e07fc1f90ae7_0'
    expect(first).toHaveLength(43)
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: Go',
      `assistant stop: text "${act('I need a.txt first.', 'read_file', '{"path": "a.txt"}')}" | call ${first} read_file {"path": "a.txt"}`,
      `tool ${first} success: contents of a.txt`,
      `assistant stop: text "${act('Now b.txt.', 'read_file', '{"path": "b.txt"}')}" | call ${second} read_file {"path": "b.txt"}`,
      `tool ${second} success: contents of b.txt`,
      'assistant stop: text "Thought: I have both.\nFinal Answer: a.txt and b.txt both say hello."',
      'task_metadata turns=3 subAgents=0',
    ])
    expect(summarize(events).filter((line) => line.startsWith('tool_call '))).toEqual([
      `tool_call ${first} read_file {"path": "a.txt"}`,
      `tool_call ${second} read_file {"path": "b.txt"}`,
    ])

    // On the wire every id fits OpenAI's 40 characters; a call and its result keep one id, the
    // same in every request, and the two calls' ids stay distinct.
    const ids = (body: ChatBody) =>
      body.messages.flatMap((m) =>
        m.tool_call_id ? [m.tool_call_id] : (m.tool_calls ?? []).map((c) => c.id),
      )
    const [, request2, request3] = h.server.requests.map(bodyOf)
    const [a1, a2] = ids(request2!)
    expect(a1).toBe(a2)
    expect(a1!.length).toBeLessThanOrEqual(40)
    expect(a1).not.toBe(first)
    expect(a1!.startsWith('call_0f8fad5b-d9cb-469f')).toBe(true)
    const [b1, b2, b3, b4] = ids(request3!)
    expect([b1, b2]).toEqual([a1, a1])
    expect(b3).toBe(b4)
    expect(b3!.length).toBeLessThanOrEqual(40)
    expect(b3).not.toBe(a1)
  })

  test('replay and export show the actions like a native run', async () => {
    const h = harness()
    twoReadsThenAnswer(h)
    const agent = h.createAgent({ tools: [readFile], historyFormatter: reactFormatter() })
    await collect(agent.run('Go'))
    const history = await agent.history()

    const replay = deriveReplayEvents(history, { sessionId: agent.sessionId })
    expect(checkEventOrder(replay)).toEqual([])
    expect(summarize(replay).filter((line) => line.startsWith('tool_'))).toEqual([
      'tool_call call_m1_0 read_file {"path": "a.txt"}',
      'tool_result call_m1_0 success (last): contents of a.txt',
      'tool_call call_m2_0 read_file {"path": "b.txt"}',
      'tool_result call_m2_0 success (last): contents of b.txt',
    ])
    const html = exportHtml(history)
    expect(html).toContain('contents of b.txt')
    expect(html.match(/read_file/g)?.length).toBeGreaterThanOrEqual(2)
  })

  test('a malformed action becomes an error result the model reads, and the loop goes on', async () => {
    const h = harness()
    h.server.enqueue(
      textReply('r1', act('Read it.', 'read_file', '{"path": a.txt}')),
      textReply('r2', act('Try the other tool.', 'open_file', '{"path": "a.txt"}')),
      textReply('r3', act('Properly now.', 'read_file', '{"path": "a.txt"}')),
      textReply('r4', 'Final Answer: It says hello.'),
    )
    const agent = h.createAgent({ tools: [readFile], historyFormatter: reactFormatter({ history: 'text' }) })
    const { events, outcome } = await collect(agent.run('Read a.txt'))

    expectOrdered(events)
    const parseError = (() => {
      try {
        JSON.parse('{"path": a.txt}')
      } catch (error) {
        return (error as Error).message
      }
    })()
    const invalid = `Invalid arguments for tool "read_file": the arguments are not valid JSON (${parseError})`
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: Read a.txt',
      ...textResponse(act('Read it.', 'read_file', '{"path": a.txt}')),
      'tool_call call_m1_0 read_file {"path": a.txt}',
      `tool_result call_m1_0 error (last): ${invalid}`,
      'turn_end',
      ...textResponse(act('Try the other tool.', 'open_file', '{"path": "a.txt"}')),
      'tool_call call_m2_0 open_file {"path": "a.txt"}',
      'tool_result call_m2_0 error (last): Unknown tool "open_file". Available tools: read_file.',
      'turn_end',
      ...textResponse(act('Properly now.', 'read_file', '{"path": "a.txt"}')),
      'tool_call call_m3_0 read_file {"path": "a.txt"}',
      'tool_result call_m3_0 success (last): contents of a.txt',
      'turn_end',
      ...textResponse('Final Answer: It says hello.'),
      'turn_end',
      'task_metadata turns=4 subAgents=0',
      'task_finish completed: It says hello.',
    ])
    expect(outcome).toMatchObject({ reason: 'completed', text: 'It says hello.' })
    expect(bodyOf(h.server.requests[1]).messages.at(-1)).toEqual({
      role: 'user',
      content: `Observation (error): ${invalid}`,
    })
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: Read a.txt',
      `assistant stop: text "${act('Read it.', 'read_file', '{"path": a.txt}')}" | call call_m1_0 read_file {"path": a.txt}`,
      `tool call_m1_0 error: ${invalid}`,
      `assistant stop: text "${act('Try the other tool.', 'open_file', '{"path": "a.txt"}')}" | call call_m2_0 open_file {"path": "a.txt"}`,
      'tool call_m2_0 error: Unknown tool "open_file". Available tools: read_file.',
      `assistant stop: text "${act('Properly now.', 'read_file', '{"path": "a.txt"}')}" | call call_m3_0 read_file {"path": "a.txt"}`,
      'tool call_m3_0 success: contents of a.txt',
      'assistant stop: text "Final Answer: It says hello."',
      'task_metadata turns=4 subAgents=0',
    ])
  })

  test('an action shown inside a code block is text, not an action, and a later answer counts', async () => {
    const h = harness()
    const shown =
      'Thought: You would delete it like this:\n```\nAction: delete_file\nArgs: {"path": "a.txt"}\n```\nFinal Answer: Use delete_file.'
    h.server.enqueue(textReply('r1', shown))
    let deleted = false
    const deleteFile = defineTool({
      name: 'delete_file',
      description: 'Deletes a file',
      parameters: Type.Object({ path: Type.String() }),
      execute: () => {
        deleted = true
        return 'deleted'
      },
    })
    const agent = h.createAgent({ tools: [readFile, deleteFile], historyFormatter: reactFormatter() })
    const { outcome } = await collect(agent.run('How do I delete a.txt?'))
    expect(outcome).toMatchObject({ reason: 'completed', text: 'Use delete_file.' })
    expect(deleted).toBe(false)
    expect(summarizeHistory(await agent.history())).toEqual([
      'user: How do I delete a.txt?',
      `assistant stop: text "${shown}"`,
      'task_metadata turns=1 subAgents=0',
    ])
  })

  test("an action's arguments are its own: Args after a later Action line belong to that one", async () => {
    const h = harness()
    const text = 'Action: read_file\nThought: no, better\nAction: delete_file\nArgs: {"path": "a.txt"}'
    h.server.enqueue(textReply('r1', text), textReply('r2', 'Final Answer: done'))
    const seen: unknown[] = []
    const echo = defineTool({
      name: 'read_file',
      description: 'Reads a file',
      parameters: Type.Object({ path: Type.Optional(Type.String()) }),
      execute: (args) => {
        seen.push(args)
        return 'read'
      },
    })
    const agent = h.createAgent({ tools: [echo], historyFormatter: reactFormatter() })
    const { outcome } = await collect(agent.run('Go'))
    expect(outcome).toMatchObject({ reason: 'completed', text: 'done' })
    // The first action wins, and it has no Args line of its own.
    expect(seen).toEqual([{}])
    expect(summarizeHistory(await agent.history()).slice(1, 3)).toEqual([
      `assistant stop: text "${text}" | call call_m1_0 read_file `,
      'tool call_m1_0 success: read',
    ])
  })

  test('a sub-agent talks to its model the way its parent does', async () => {
    const h = harness()
    h.server.handle((request) => {
      const messages = bodyOf(request).messages
      if (messages.some((m) => m.content === 'You research.'))
        return textReply('child', 'Final Answer: cats purr')
      if (messages.length > 2) return textReply('p2', 'Final Answer: They purr.')
      return textReply('p1', act('Ask.', 'researcher', '{"prompt": "cats"}'))
    })
    const researcher = defineSubAgent({
      name: 'researcher',
      description: 'Researches',
      system: 'You research.',
    })
    const agent = h.createAgent({ tools: [researcher], historyFormatter: reactFormatter() })
    const { events, outcome } = await collect(agent.run('What do cats do?'))

    expectOrdered(events)
    expect(outcome.text).toBe('They purr.')
    const child = bodyOf(h.server.requests[1])
    expect(child.tools).toBeUndefined()
    expect(child.messages[0]!.content).toContain('Final Answer:')
    expect(summarize(events)).toContain('tool_result call_m1_0 success (last): cats purr')
  })
})

describe('an interrupted ReAct action', () => {
  /** Runs `input`, interrupting as soon as a text delta contains `marker`. */
  const interruptAt = (agent: Agent, input: string, marker: string) =>
    collectInterrupting(
      agent,
      input,
      (event) => event.type === 'assistant_text_delta' && event.content.includes(marker),
    )

  test('cut while its arguments stream: recorded as an incomplete call with an aborted result', async () => {
    const h = harness()
    h.server.enqueue(
      stalledChatStream({ id: 'r1', steps: [say('Thought: read it.\nAction: read_file\nArgs: {"pa')] }),
      textReply('r2', 'Final Answer: Never mind then.'),
    )
    const agent = h.createAgent({ tools: [readFile], historyFormatter: reactFormatter() })
    const { events, outcome } = await interruptAt(agent, 'Go', '{"pa')

    expectOrdered(events)
    expect(outcome.reason).toBe('aborted')
    const cut = 'Thought: read it.\nAction: read_file\nArgs: {"pa'
    const pending = 'The user interrupted the task before this tool call ran.'
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: Go',
      'turn_start',
      'assistant_text_start',
      `text: ${cut}`,
      'assistant_text_end',
      'tool_call call_m1_0 read_file {"pa',
      `tool_result call_m1_0 error (last): ${pending}`,
      'interrupt',
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      `task_finish aborted: ${cut}`,
    ])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: Go',
      `assistant aborted: text "${cut}" | call call_m1_0 read_file {"pa (incomplete)`,
      `tool call_m1_0 aborted: ${pending}`,
      'task_metadata turns=1 subAgents=0',
    ])

    // The history is valid input: the next task sends the action and its placeholder result.
    const next = await collect(agent.run('Forget it'))
    expect(next.outcome).toMatchObject({ reason: 'completed', text: 'Never mind then.' })
    expect(bodyOf(h.server.requests[1]).messages.slice(1)).toEqual([
      { role: 'user', content: 'Go' },
      { role: 'assistant', content: 'Thought: read it.\nAction: read_file\nArgs: {"pa' },
      {
        role: 'user',
        content: 'Observation (aborted): The user interrupted the task before this tool call ran.',
      },
      { role: 'user', content: 'Forget it' },
    ])
  })

  test('cut before its Action line is complete: only the text is kept', async () => {
    const h = harness()
    h.server.enqueue(stalledChatStream({ id: 'r1', steps: [say('Thought: read it.\nAction: read_')] }))
    const agent = h.createAgent({ tools: [readFile], historyFormatter: reactFormatter() })
    const { events } = await interruptAt(agent, 'Go', 'read_')

    expectOrdered(events)
    const cut = 'Thought: read it.\nAction: read_'
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: Go',
      'turn_start',
      'assistant_text_start',
      `text: ${cut}`,
      'assistant_text_end',
      'interrupt',
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      `task_finish aborted: ${cut}`,
    ])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: Go',
      `assistant aborted: text "${cut}"`,
      'task_metadata turns=1 subAgents=0',
    ])
  })
})

import { compactedHistory, defineTool, IMAGE_NOTE, type SummarizeInput } from '@kode/core'
import type { Event, HistoryEvent } from '@kode/protocol'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { anthropicStream } from '../helpers/anthropic-wire.js'
import { say, stalledChatStream, textReply } from '../helpers/chat-wire.js'
import { collect, NOW, useHarness } from '../helpers/harness.js'
import { expectValidHistory } from '../helpers/history-checks.js'
import { isSummaryRequest, readChunk, readChunkSession, TINY } from '../helpers/small-window.js'
import { readFile } from '../helpers/tools.js'

const at = { createdAt: NOW }
const signature = {
  type: 'thinking_signature' as const,
  signature: 'sig-abc',
  format: 'anthropic' as const,
  model: 'claude-sonnet-4-5',
}

/** Three turns: an image in the first user message, thinking with a signature in every response. */
function session(): HistoryEvent[] {
  const turn = (n: number): HistoryEvent[] => [
    {
      role: 'assistant',
      id: `a${n}`,
      ...at,
      parts: [
        { type: 'thinking_text', text: `think ${n}` },
        signature,
        { type: 'tool_call', id: `c${n}`, name: 'look', argumentsJson: '{}' },
      ],
      stopReason: 'tool_use',
    },
    {
      role: 'tool',
      id: `t${n}`,
      ...at,
      toolCallId: `c${n}`,
      toolName: 'look',
      status: 'success',
      outputText: `seen ${n}`,
      parts: [],
    },
  ]
  return [
    { role: 'system', id: 's', ...at, parts: [{ type: 'text', text: 'You look at things.' }] },
    {
      role: 'user',
      id: 'u',
      ...at,
      parts: [
        { type: 'text', text: 'Look at this' },
        { type: 'image_url', url: 'data:image/png;base64,AAAA' },
      ],
    },
    ...turn(1),
    ...turn(2),
    ...turn(3),
  ]
}

/**
 * A task paused for approval: c1 (write_file) waits, c2 (read_file) answered with output too large
 * for the kept part of a `tiny` window.
 */
function pausedSession(): HistoryEvent[] {
  return [
    { role: 'user', id: 'u1', ...at, parts: [{ type: 'text', text: 'Write a, read b' }] },
    {
      role: 'assistant',
      id: 'a1',
      ...at,
      parts: [
        { type: 'tool_call', id: 'c1', name: 'write_file', argumentsJson: '{"path":"a.txt"}' },
        { type: 'tool_call', id: 'c2', name: 'read_file', argumentsJson: '{"path":"b.txt"}' },
      ],
      stopReason: 'tool_use',
    },
    {
      type: 'approval_request',
      id: 'q1',
      ...at,
      toolCallId: 'c1',
      toolName: 'write_file',
      arguments: '{"path":"a.txt"}',
    },
    {
      role: 'tool',
      id: 't2',
      ...at,
      toolCallId: 'c2',
      toolName: 'read_file',
      status: 'success',
      outputText: 'b'.repeat(8_000),
      parts: [],
    },
  ]
}

describe('agent.compact()', () => {
  const harness = useHarness()

  test('summarises all but the kept turns; images become a note; kept messages go out unchanged', async () => {
    const h = harness()
    await h.store.create({ id: 'long' })
    await h.store.append('long', session())
    const inputs: SummarizeInput[] = []
    const agent = h.createAgent({
      sessionId: 'long',
      compaction: {
        keepRecent: 1,
        summarize: async (input) => {
          inputs.push(input)
          return 'Looked at an image twice.'
        },
      },
    })
    const events: Event[] = []
    agent.events.on('event', (event) => events.push(event))
    const result = await agent.compact()
    expect(result).toMatchObject({
      compacted: true,
      record: { reason: 'manual', firstKeptId: 'a3', summary: 'Looked at an image twice.' },
    })
    expect(events.map((e) => e.type)).toEqual(['compaction_start', 'compaction_end'])
    expect(inputs[0]!.transcript).toContain(`User: Look at this ${IMAGE_NOTE}`)
    expect(inputs[0]!.transcript).not.toContain('base64')
    expect(inputs[0]!.transcript).not.toContain('think 1')
    expect(inputs[0]!.messages.map((m) => m.id)).toEqual(['u', 'a1', 't1', 'a2', 't2'])

    const history = await agent.history()
    const view = compactedHistory(history).records
    expect(view.map((r) => r.id)).toEqual(['s', history.at(-1)!.id, 'a3', 't3'])
    // The kept response is the persisted one, thinking and signature included.
    expect(view[2]).toEqual(session()[6])
  })

  test('the kept response goes to the provider with its thinking signature; the summarised ones are gone', async () => {
    const h = harness()
    await h.store.create({ id: 'long' })
    await h.store.append('long', session())
    const agent = h.createAgent({
      client: h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' }),
      sessionId: 'long',
      compaction: { keepRecent: 1, summarize: async () => 'Looked at an image twice.' },
    })
    await agent.compact()
    h.server.enqueue(anthropicStream('msg_1', [{ text: 'Done.' }]))
    expect((await agent.run('Go on').done).reason).toBe('completed')
    const { messages } = h.server.requests[0]!.body as { messages: { role: string; content: unknown }[] }
    // The summary, then the kept turn exactly as persisted (a signature the API checks), then the input.
    expect(messages[0]).toMatchObject({ role: 'user' })
    expect(JSON.stringify(messages[0])).toContain('Looked at an image twice.')
    expect(messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'think 3', signature: 'sig-abc' },
        { type: 'tool_use', id: 'c3', name: 'look', input: {} },
      ],
    })
    const body = h.server.requests[0]!.rawBody
    expect(body).not.toContain('think 1')
    expect(body).not.toContain('base64')
  })

  test('an interrupted summary saves no compaction, only its marker, even from a summarizer that ignores its signal', async () => {
    const h = harness()
    await h.store.create({ id: 'long' })
    await h.store.append('long', session())
    let started!: () => void
    const summarizing = new Promise<void>((done) => {
      started = done
    })
    let calls = 0
    const agent = h.createAgent({
      sessionId: 'long',
      compaction: {
        keepRecent: 1,
        // Never answers, and never looks at its signal.
        summarize: () => {
          calls++
          started()
          return new Promise<string>(() => {})
        },
      },
    })
    const events: Event[] = []
    agent.events.on('event', (event) => events.push(event))
    const controller = new AbortController()
    const compacting = agent.compact({ signal: controller.signal })
    await summarizing
    controller.abort()
    await expect(compacting).resolves.toMatchObject({ compacted: false, reason: 'aborted' })
    expect(events.map((e) => e.type)).toEqual(['compaction_start', 'compaction_end'])
    const tokensBefore = events[0]?.type === 'compaction_start' ? events[0].tokensBefore : -1
    // The interrupt is kept so replay shows the compaction; the model's view is the same.
    const interrupted = { type: 'interrupt', compaction: { reason: 'manual', tokensBefore } }
    expect(await agent.history()).toMatchObject([...session(), interrupted])
    expect(compactedHistory(await agent.history()).compaction).toBeUndefined()

    // A signal aborted before the summary began: the summarizer is not even called.
    const before = new AbortController()
    agent.events.on('compaction_start', () => before.abort())
    await expect(agent.compact({ signal: before.signal })).resolves.toMatchObject({ reason: 'aborted' })
    expect(calls).toBe(1)
    expect(await agent.history()).toMatchObject([...session(), interrupted, interrupted])
  })

  test('a summarizer that interrupts as it starts ends the compaction, not hangs it', async () => {
    const h = harness()
    await h.store.create({ id: 'long' })
    await h.store.append('long', session())
    const controller = new AbortController()
    const agent = h.createAgent({
      sessionId: 'long',
      compaction: {
        keepRecent: 1,
        // Gives up at once (a budget spent, say) by aborting, and never answers.
        summarize: () => {
          controller.abort()
          return new Promise<string>(() => {})
        },
      },
    })
    await expect(agent.compact({ signal: controller.signal })).resolves.toMatchObject({
      compacted: false,
      reason: 'aborted',
    })
    expect(await agent.history()).toMatchObject([
      ...session(),
      { type: 'interrupt', compaction: { reason: 'manual' } },
    ])
  })

  test('a compaction while a task runs is refused', async () => {
    const h = harness()
    const agent = h.createAgent()
    h.server.enqueue(stalledChatStream({ id: 'r1', steps: [say('Working')] }))
    const run = agent.run('Go on')
    await expect(agent.compact()).rejects.toMatchObject({ code: 'agent_busy' })
    await agent.close()
    expect((await run.done).reason).toBe('aborted')
  })

  test('a session with nothing to summarise is left as it is', async () => {
    const h = harness()
    // An empty session the store has (one it does not have is session_not_found: session-open.test.ts).
    await h.store.create({ id: 'empty' })
    const agent = h.createAgent({ sessionId: 'empty' })
    // No event either: nothing is written, so a replay could show none.
    const seen: string[] = []
    agent.events.on('compaction_start', (event) => seen.push(event.type))
    agent.events.on('compaction_end', (event) => seen.push(event.type))
    await expect(agent.compact()).resolves.toEqual({ compacted: false, reason: 'nothing_to_compact' })
    expect(await agent.history()).toEqual([])
    expect(seen).toEqual([])
  })

  test('a response whose calls await approval is kept, so the approved result reaches the model', async () => {
    const h = harness()
    await h.store.create({ id: 'paused' })
    await h.store.append('paused', pausedSession())
    const writeFile = defineTool({
      name: 'write_file',
      description: 'Writes a file',
      parameters: Type.Object({ path: Type.String() }),
      needsApproval: true,
      execute: ({ path }) => `wrote ${path}`,
    })
    const agent = h.createAgent({
      client: h.client({ model: 'tiny', catalog: TINY }),
      sessionId: 'paused',
      tools: [writeFile, readFile],
      compaction: { keepRecent: 0, summarize: async () => 'The user asked to write a and read b.' },
    })
    // Only the user message before the paused response can be summarised.
    await expect(agent.compact()).resolves.toMatchObject({ compacted: true, record: { firstKeptId: 'a1' } })
    h.server.enqueue(textReply('r1', 'Done.'))
    const { outcome } = await collect(agent.continue({ approvals: [{ toolCallId: 'c1', approved: true }] }))
    expect(outcome.reason).toBe('completed')
    const history = await agent.history()
    expectValidHistory(compactedHistory(history).records)
    const { messages } = h.server.requests[0]!.body as { messages: { role: string; tool_call_id?: string }[] }
    expect(messages.map((m) => m.tool_call_id ?? m.role)).toEqual(['user', 'assistant', 'c2', 'c1'])
    expect(JSON.stringify(messages[3])).toContain('wrote a.txt')
  })
})

describe("agent.compact() and the agent's model settings", () => {
  const harness = useHarness()

  test("keeps what the agent's output reserve leaves room for, so its next task does not compact again at once", async () => {
    const h = harness()
    await h.store.create({ id: 'long' })
    // Six chunks of about 650 tokens each.
    await h.store.append(
      'long',
      readChunkSession(6, (n) => `chunk ${n}: ${'y'.repeat(2_600)}`, { id: 'done', text: 'Read them.' }),
    )
    const agent = h.createAgent({
      sessionId: 'long',
      client: h.client({ model: 'tiny', catalog: TINY }),
      tools: [readChunk],
      // A reserve of 2,500 of the 4,000-token window leaves requests 1,500 input tokens.
      modelSettings: { maxOutputTokens: 2_500 },
    })
    h.server.enqueue(textReply('s1', 'Six chunks were read.'), textReply('r1', 'Nothing more.'))
    expect((await agent.compact()).compacted).toBe(true)

    const { events, outcome } = await collect(agent.run('Anything else?'))
    expect(outcome.reason).toBe('completed')
    expect(events.some((e) => e.type === 'compaction_start')).toBe(false)
    expect(h.server.requests).toHaveLength(2)
    expect(isSummaryRequest(h.server.requests[1]!)).toBe(false)
  })
})

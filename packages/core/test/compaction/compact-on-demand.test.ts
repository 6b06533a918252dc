import { compactedHistory, IMAGE_NOTE, type SummarizeInput } from '@kode/core'
import type { Event, HistoryEvent } from '@kode/protocol'
import { describe, expect, test } from 'vitest'
import { NOW, useHarness } from '../helpers/harness.js'

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

  test('a session with nothing to summarise is left as it is', async () => {
    const h = harness()
    const agent = h.createAgent()
    await expect(agent.compact()).resolves.toEqual({ compacted: false, reason: 'nothing_to_compact' })
    expect(await agent.history()).toEqual([])
  })
})

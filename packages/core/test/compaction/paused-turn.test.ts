import type { AssistantMessage, HistoryEvent } from '@kode/protocol'
import { expect, test } from 'vitest'
import { anthropicStream } from '../helpers/anthropic-wire.js'
import { collect, NOW, useHarness } from '../helpers/harness.js'
import { isSummaryRequest } from '../helpers/small-window.js'

// A response Anthropic paused and the responses that carry it on are one turn of the model's: the
// wire sends them as one assistant message. A compaction keeps or summarises them together, so
// that a kept continuation never reaches the model without the start of its turn.

const harness = useHarness()

const at = { createdAt: NOW }
const user = (id: string, text: string): HistoryEvent => ({
  role: 'user',
  id,
  ...at,
  parts: [{ type: 'text', text }],
})
const answer = (id: string, text: string, paused = false): AssistantMessage => ({
  role: 'assistant',
  id,
  ...at,
  parts: [{ type: 'text', text }],
  ...(paused ? { rawStopReason: 'pause_turn' } : { stopReason: 'stop' }),
  model: 'claude-sonnet-4-5',
  provider: 'anthropic',
  api: 'anthropic',
})

type Body = { messages: { role: string; content: unknown }[] }

test('a compaction does not keep a continuation without the paused response it carries on', async () => {
  const h = harness()
  await h.store.create({ id: 'long' })
  await h.store.append('long', [
    user('u1', 'Hello'),
    answer('a1', 'Hi.'),
    user('u2', 'What is 6 times 7?'),
    answer('a2', 'Running it.', true),
    answer('a3', 'It is 42.'),
  ])
  const client = h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' })
  const agent = h.createAgent({ sessionId: 'long', client, compaction: { keepRecent: 1 } })
  h.server.enqueue(anthropicStream('sum-1', [{ text: 'Greeted.' }]))

  expect(await agent.compact()).toMatchObject({ compacted: true, record: { firstKeptId: 'u2' } })
})

test('a turn paused when the process died is kept whole, and carried on after the compaction', async () => {
  const h = harness()
  await h.store.create({ id: 'dead' })
  await h.store.append('dead', [
    user('u1', 'Hello'),
    answer('a1', 'Hi.'),
    user('u2', 'What is 6 times 7?'),
    answer('a2', 'Running it.', true),
    answer('a3', 'Still running.', true),
  ])
  const client = h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' })
  const agent = h.createAgent({ sessionId: 'dead', client, compaction: { keepRecent: 1 } })
  h.server.enqueue(anthropicStream('sum-1', [{ text: 'Greeted.' }]))
  expect(await agent.compact()).toMatchObject({ compacted: true, record: { firstKeptId: 'u2' } })

  h.server.enqueue(anthropicStream('msg_4', [{ text: 'It is 42.' }]))
  const { outcome } = await collect(agent.continue())
  expect(outcome).toMatchObject({ reason: 'completed', text: 'It is 42.' })
  const turns = h.server.requests.filter((request) => !isSummaryRequest(request))
  const { messages } = turns[0]!.body as Body
  // The turn carried on goes back whole, as the last message.
  expect(messages.at(-1)).toEqual({
    role: 'assistant',
    content: [
      { type: 'text', text: 'Running it.' },
      { type: 'text', text: 'Still running.' },
    ],
  })
})

test('a turn paused is kept while it is to be carried on, even when no recent turn is to be kept', async () => {
  const h = harness()
  await h.store.create({ id: 'dead' })
  await h.store.append('dead', [
    user('u1', 'Hello'),
    answer('a1', 'Hi.'),
    user('u2', 'What is 6 times 7?'),
    answer('a2', 'Running it.', true),
  ])
  const client = h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' })
  const agent = h.createAgent({ sessionId: 'dead', client, compaction: { keepRecent: 0 } })
  h.server.enqueue(anthropicStream('sum-1', [{ text: 'Greeted, then asked for 6 times 7.' }]))
  expect(await agent.compact()).toMatchObject({ compacted: true, record: { firstKeptId: 'a2' } })

  h.server.enqueue(anthropicStream('msg_3', [{ text: 'It is 42.' }]))
  const { outcome } = await collect(agent.continue())
  expect(outcome).toMatchObject({ reason: 'completed', text: 'It is 42.' })
  const turns = h.server.requests.filter((request) => !isSummaryRequest(request))
  const { messages } = turns[0]!.body as Body
  expect(messages.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Running it.' }] })
})

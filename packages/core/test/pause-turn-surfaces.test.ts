import { checkEventOrder } from '@kode/protocol'
import { scriptedResponse } from '@kode/providers/testing'
import { deriveReplayEvents, exportSessionHtml, forkSession, replaySession } from '@kode/session'
import { expect, test } from 'vitest'
import { anthropicStream } from './helpers/anthropic-wire.js'
import { collect, NOW, useHarness } from './helpers/harness.js'
import { expectOrdered, expectValidHistory } from './helpers/history-checks.js'
import { replayedPart, replayOf } from './helpers/replayed.js'
import { TINY } from './helpers/small-window.js'

// A paused turn leaves two responses in a row in one task: the session's other readers (replay,
// export, fork) take such a history as they take any other.

const harness = useHarness()

const paused = () =>
  anthropicStream('msg_1', [{ thinking: 'I will run it.', signature: 'sig-1' }, { text: 'Ran it.' }], {
    stop: 'pause_turn',
  })

test('replay, export and fork take a history with a paused turn carried on', async () => {
  const h = harness()
  h.server.enqueue(paused(), anthropicStream('msg_2', [{ text: 'It is 42.' }]))
  const client = h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' })
  const agent = h.createAgent({ client })
  await collect(agent.run('What is 6 times 7?'))
  const history = await h.store.read(agent.sessionId)

  const replay = await replaySession(h.store, agent.sessionId)
  expect(checkEventOrder(replay)).toEqual([])
  expect(JSON.parse(JSON.stringify(replay))).toEqual(replayOf(history, agent.sessionId))
  expect(replay.filter((event) => event.type === 'response_complete').map((event) => event.content)).toEqual([
    'Ran it.',
    'It is 42.',
  ])

  const page = await exportSessionHtml(h.store, agent.sessionId)
  expect(page).toContain('I will run it.')
  expect(page).toContain('Ran it.')
  expect(page).toContain('It is 42.')
  expect(page.match(/<section class="msg assistant/g)).toHaveLength(2)

  // A fork at the paused response is a session left in the middle of its turn: continue carries it on.
  const pausedId = history.find((record) => 'role' in record && record.role === 'assistant')!.id
  const fork = await forkSession(h.store, agent.sessionId, pausedId)
  expect(checkEventOrder(deriveReplayEvents(await h.store.read(fork.id)))).toEqual([])
  h.server.enqueue(anthropicStream('msg_3', [{ text: 'Forty-two.' }]))
  const forked = h.createAgent({ sessionId: fork.id, client })
  const { outcome } = await collect(forked.continue())
  expect(outcome).toMatchObject({ reason: 'completed', text: 'Forty-two.' })
  const last = h.server.requests.at(-1)!.body as { messages: { role: string }[] }
  expect(last.messages.map((message) => message.role)).toEqual(['user', 'assistant'])
  expectValidHistory(await forked.history())
})

test('a compaction before the paused turn is carried on keeps it, and replays as it ran', async () => {
  const h = harness()
  await h.store.create({ id: 'long' })
  await h.store.append('long', [
    { role: 'user', id: 'u1', createdAt: NOW, parts: [{ type: 'text', text: 'Tell me a long story' }] },
    {
      role: 'assistant',
      id: 'a1',
      createdAt: NOW,
      parts: [{ type: 'text', text: 'Once upon a time. '.repeat(350) }],
      stopReason: 'stop',
    },
  ])
  // The paused response reports a context past the threshold: the engine compacts before it
  // carries the turn on.
  h.server.enqueue(
    scriptedResponse('anthropic', {
      id: 'msg_1',
      model: 'tiny',
      steps: [{ text: 'Ran it.' }],
      usage: { inputTokens: 3_000, outputTokens: 30 },
      stop: 'pause_turn',
    }),
    anthropicStream('sum-1', [{ text: 'A long story was told.' }]),
    anthropicStream('msg_2', [{ text: 'It is 42.' }]),
  )
  const agent = h.createAgent({
    sessionId: 'long',
    client: h.client({ api: 'anthropic', model: 'tiny', catalog: TINY }),
  })
  const { events, outcome } = await collect(agent.run('What is 6 times 7?'))

  expect(outcome).toMatchObject({ reason: 'completed', text: 'It is 42.' })
  expect(events.filter((event) => event.type === 'compaction_end')).toMatchObject([{ compacted: true }])
  const requests = h.server.requests.map((request) => request.body as { messages: unknown[] })
  expect(requests).toHaveLength(3)
  expect(requests[2]!.messages.at(-1)).toEqual({
    role: 'assistant',
    content: [{ type: 'text', text: 'Ran it.' }],
  })
  expectOrdered(events)
  const history = await agent.history()
  expectValidHistory(history)
  expect(checkEventOrder(deriveReplayEvents(history))).toEqual([])
  expect([...replayOf(history.slice(0, 2), 'long'), ...replayedPart(events)]).toEqual(
    replayOf(history, 'long'),
  )
})

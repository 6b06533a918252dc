import type { AssistantMessage, HistoryEvent } from '@kode/protocol'
import { describe, expect, test } from 'vitest'
import { say, stalledChatStream, textReply } from './helpers/chat-wire.js'
import { collect, collectInterrupting, useHarness } from './helpers/harness.js'
import { cutStream } from './replay-parity/scenario.js'

// The agent's clock (`now`) stamps every record it writes, the model's responses included: a
// host that injects a clock gets one timeline, whatever clock the provider client was given.
// The harness client's clock stays at 1,000 throughout.

const assistants = (history: readonly HistoryEvent[]) =>
  history.filter((r): r is AssistantMessage => 'role' in r && r.role === 'assistant')

/** A clock the test moves: it reads 10,000 until the server gets the request, 25,000 after. */
function movingClock() {
  let time = 10_000
  return { now: () => time, requestArrived: () => (time = 25_000) }
}

describe("assistant messages are stamped by the agent's clock", () => {
  const harness = useHarness('file')

  test('a response: createdAt when the request was sent, durationMs until it finished', async () => {
    const h = harness()
    const clock = movingClock()
    h.server.handle(() => {
      clock.requestArrived()
      return textReply('r1', 'Hello.')
    })
    const agent = h.createAgent({ now: clock.now })

    const { outcome } = await collect(agent.run('Hi'))

    expect(outcome.reason).toBe('completed')
    const [message] = assistants(await agent.history())
    expect(message).toMatchObject({ createdAt: 10_000, durationMs: 15_000 })
  })

  test('an interrupted response keeps the same stamps', async () => {
    const h = harness()
    const clock = movingClock()
    h.server.handle(() => {
      clock.requestArrived()
      return stalledChatStream({ id: 'r1', steps: [say('Partly')] })
    })
    const agent = h.createAgent({ now: clock.now })

    const { outcome } = await collectInterrupting(agent, 'Hi', (e) => e.type === 'assistant_text_delta')

    expect(outcome.reason).toBe('aborted')
    const [message] = assistants(await agent.history())
    expect(message).toMatchObject({ stopReason: 'aborted', createdAt: 10_000, durationMs: 15_000 })
  })

  test('a response that failed after some text keeps the same stamps', async () => {
    const h = harness()
    const clock = movingClock()
    h.server.handle(() => {
      clock.requestArrived()
      return cutStream('r1', 'Partly there, then a connection reset before the rest of this answer.')
    })
    const agent = h.createAgent({ now: clock.now, retry: { maxAttempts: 1 } })

    const { outcome } = await collect(agent.run('Hi'))

    expect(outcome.reason).toBe('error')
    const [message] = assistants(await agent.history())
    expect(message).toMatchObject({ stopReason: 'error', createdAt: 10_000, durationMs: 15_000 })
  })
})

import type { Event, HistoryEvent } from '@kode/protocol'
import type { ScriptedResponse } from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'
import { chatStream, say, textReply } from '../helpers/chat-wire.js'
import { collect, type Harness, useHarness } from '../helpers/harness.js'
import { replayOf } from '../helpers/replayed.js'
import { readChunk, readChunkSession, TINY } from '../helpers/small-window.js'

// The client retries a summary request as it retries a turn's: each retry is announced live as a
// retryable `error` inside the compaction, and the compaction's one record keeps the notices, so
// its replay shows them where the live run did.

/** A session big enough to pass the tiny model's compaction threshold. */
const longSession = (): HistoryEvent[] =>
  readChunkSession(6, (n) => `chunk ${n}: ${'x'.repeat(2_000)}`, { id: 'done', text: 'Read them.' })

/** Service unavailable before any output: the client retries it, and nothing was billed. */
const UNAVAILABLE: ScriptedResponse = {
  status: 503,
  body: JSON.stringify({ error: { message: 'The server is busy.', type: 'server_error' } }),
}

const summaryReply = textReply('sum-1', 'The user had six chunks read.')

/** The compaction's events and the errors, as JSON carries them (the replay's shape). */
const compactionPart = (events: readonly unknown[]) =>
  (JSON.parse(JSON.stringify(events)) as Event[]).filter((e) =>
    ['compaction_start', 'compaction_end', 'error'].includes(e.type),
  )

/** The compaction's events in short: `compaction_start`, `error <canRetry>`, `end <compacted>`. */
const shapeOf = (live: readonly unknown[]) =>
  compactionPart(live).map((e) =>
    e.type === 'error' ? `error ${e.canRetry}` : e.type === 'compaction_end' ? `end ${e.compacted}` : e.type,
  )

async function longAgent(h: Harness, live: Event[]) {
  await h.store.create({ id: 'long' })
  await h.store.append('long', longSession())
  const agent = h.createAgent({
    sessionId: 'long',
    client: h.client({ model: 'tiny', catalog: TINY }),
    tools: [readChunk],
    compaction: { keepRecent: 1 },
  })
  agent.events.on('event', (event) => live.push(event))
  return agent
}

describe("a summary request's retries", () => {
  const harness = useHarness('file')

  test('are announced inside the compaction, kept on its record and replayed', async () => {
    const h = harness()
    const live: Event[] = []
    const agent = await longAgent(h, live)
    h.server.enqueue(UNAVAILABLE, UNAVAILABLE, summaryReply, textReply('r1', 'Done.'))

    const { outcome } = await collect(agent.run('Go on'))

    expect(outcome.reason).toBe('completed')
    expect(h.server.requests).toHaveLength(4)
    const shape = shapeOf(live)
    expect(shape).toEqual(['compaction_start', 'error true', 'error true', 'end true'])
    const notices = compactionPart(live).flatMap((e) => (e.type === 'error' ? [e.errorMessage] : []))
    expect(notices[0]).toMatch(/\(retrying in \d+ ms\)$/)
    const task = (await agent.history()).slice(longSession().length)
    expect(task).toContainEqual(expect.objectContaining({ type: 'compaction', retries: notices }))
    expect(compactionPart(replayOf(task, agent.sessionId))).toEqual(compactionPart(live))
  })

  test('of a summary that then failed are kept on its error marker and replayed', async () => {
    const h = harness()
    const live: Event[] = []
    const agent = await longAgent(h, live)
    const cut = chatStream({ id: 'sum-cut', steps: [say('The user asked to')], finish: 'length' })
    h.server.enqueue(UNAVAILABLE, cut)

    const result = await agent.compact()

    expect(result).toMatchObject({ compacted: false, reason: 'failed' })
    const notices = compactionPart(live).flatMap((e) => (e.type === 'error' ? [e.errorMessage] : []))
    expect(notices).toHaveLength(1)
    const task = (await agent.history()).slice(longSession().length)
    expect(task).toEqual([
      expect.objectContaining({
        type: 'error',
        canRetry: false,
        compaction: expect.objectContaining({ reason: 'manual', retries: notices }),
      }),
    ])
    expect(compactionPart(replayOf(task, agent.sessionId))).toEqual(compactionPart(live))
  })

  test('a summary cut after its output began is sent again, as a turn is, and the compaction saved', async () => {
    const h = harness()
    const live: Event[] = []
    const agent = await longAgent(h, live)
    const summary = `The user had six chunks read. ${'They held log lines. '.repeat(20)}`
    const whole = chatStream({ id: 'sum-1', steps: [say(summary)] })
    const bytes = (whole.body as string[]).join('').length
    // The connection resets a third of the way into the summary's stream: after output began.
    const cut: ScriptedResponse = { ...whole, resetAfterBytes: Math.floor(bytes / 3) }
    h.server.enqueue(cut, chatStream({ id: 'sum-2', steps: [say(summary)] }), textReply('r1', 'Done.'))

    const { outcome } = await collect(agent.run('Go on'))

    expect(outcome.reason).toBe('completed')
    expect(h.server.requests).toHaveLength(3)
    const shape = shapeOf(live)
    expect(shape).toEqual(['compaction_start', 'error true', 'end true'])
    const notices = compactionPart(live).flatMap((e) => (e.type === 'error' ? [e.errorMessage] : []))
    expect(notices[0]).toMatch(/\(retrying in \d+ ms\)$/)
    const task = (await agent.history()).slice(longSession().length)
    expect(task).toContainEqual(expect.objectContaining({ type: 'compaction', summary, retries: notices }))
    expect(compactionPart(replayOf(task, agent.sessionId))).toEqual(compactionPart(live))
  })
})

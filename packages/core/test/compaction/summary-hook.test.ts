import { COMPACTION_PROMPT } from '@kode/core'
import { checkEventOrder, type Event } from '@kode/protocol'
import type { LLMRequest } from '@kode/providers'
import type { SessionStore } from '@kode/session'
import { describe, expect, test } from 'vitest'
import { chatStream, say, textReply } from '../helpers/chat-wire.js'
import { collect, useHarness } from '../helpers/harness.js'
import { isSummaryRequest, readChunk, readChunkSession, TINY } from '../helpers/small-window.js'

// The summary request is a request to the model like a turn's: a host that redacts, routes or
// refuses requests in beforeModelCall must see it too, or the older part of the session would
// reach the model without the hook.

/** A hook that replaces `SECRET` in every message with `REDACTED`, noting each request's system text. */
function redacting(seen: (string | undefined)[]) {
  return (request: LLMRequest): LLMRequest => {
    seen.push(request.system)
    return {
      ...request,
      messages: request.messages.map((m) => JSON.parse(JSON.stringify(m).replaceAll('SECRET', 'REDACTED'))),
    }
  }
}

/** Stores session `long`: six long read_chunk turns, past the tiny threshold, each output holding `marker`. */
async function storeLongSession(store: SessionStore, marker: string) {
  await store.create({ id: 'long' })
  await store.append(
    'long',
    readChunkSession(6, (n) => `chunk ${n} ${marker} ${'x'.repeat(2_000)}`, {
      id: 'done',
      text: 'Read them.',
    }),
  )
}

describe('beforeModelCall and the summary request', () => {
  const h = useHarness()
  const longSession = () => storeLongSession(h().store, 'SECRET')

  test("a threshold compaction's summary request goes through the hook, and is sent as it returns it", async () => {
    await longSession()
    h().server.enqueue(chatStream({ id: 's1', steps: [say('Six chunks read.')] }), textReply('r1', 'ok'))
    const seen: (string | undefined)[] = []
    const agent = h().createAgent({
      sessionId: 'long',
      client: h().client({ model: 'tiny', catalog: TINY }),
      tools: [readChunk],
      compaction: { keepRecent: 1 },
      hooks: { beforeModelCall: redacting(seen) },
    })
    const { outcome, events } = await collect(agent.run('Go on'))
    expect(outcome.reason).toBe('completed')
    const [summary, turn] = h().server.requests
    expect(isSummaryRequest(summary!)).toBe(true)
    expect(isSummaryRequest(turn!)).toBe(false)
    // The hook saw the summary request (told apart by its system prompt), then the turn's.
    expect(seen).toEqual([COMPACTION_PROMPT, undefined])
    expect(summary!.rawBody).toContain('REDACTED')
    expect(summary!.rawBody).not.toContain('SECRET')
    expect(turn!.rawBody).not.toContain('SECRET')
    expect(checkEventOrder(events)).toEqual([])
  })

  test('a hook that throws on the summary request fails the task before anything is sent', async () => {
    await longSession()
    const agent = h().createAgent({
      sessionId: 'long',
      client: h().client({ model: 'tiny', catalog: TINY }),
      tools: [readChunk],
      compaction: { keepRecent: 1 },
      hooks: {
        beforeModelCall: () => {
          throw new Error('no requests now')
        },
      },
    })
    const events: Event[] = []
    agent.events.on('event', (event) => events.push(event))
    await expect(agent.run('Go on').done).rejects.toThrow('no requests now')
    expect(h().server.requests).toHaveLength(0)
    const failure = 'The beforeModelCall hook threw: no requests now'
    expect(events.find((e) => e.type === 'compaction_end')).toMatchObject({
      compacted: false,
      errorMessage: failure,
    })
    expect(events.find((e) => e.type === 'task_finish')).toMatchObject({ reason: 'error' })
    expect(await agent.history()).toContainEqual(
      expect.objectContaining({ type: 'error', message: failure, compaction: expect.anything() }),
    )
    expect(checkEventOrder(events)).toEqual([])
  })

  test("agent.compact()'s summary request goes through the hook; a hook that throws fails the compaction", async () => {
    await longSession()
    h().server.enqueue(chatStream({ id: 's1', steps: [say('Six chunks read.')] }))
    const seen: (string | undefined)[] = []
    const agent = h().createAgent({
      sessionId: 'long',
      client: h().client({ model: 'tiny', catalog: TINY }),
      compaction: { keepRecent: 1 },
      hooks: { beforeModelCall: redacting(seen) },
    })
    expect(await agent.compact()).toMatchObject({ compacted: true })
    expect(seen).toEqual([COMPACTION_PROMPT])
    expect(h().server.requests[0]!.rawBody).not.toContain('SECRET')

    const refusing = h().createAgent({
      sessionId: 'long',
      client: h().client({ model: 'tiny', catalog: TINY }),
      compaction: { keepRecent: 0 },
      hooks: {
        beforeModelCall: () => {
          throw new Error('no requests now')
        },
      },
    })
    expect(await refusing.compact()).toEqual({
      compacted: false,
      reason: 'failed',
      errorMessage: 'The beforeModelCall hook threw: no requests now',
    })
    expect(h().server.requests).toHaveLength(1)
  })

  test('an interrupt while the hook ignores its signal ends the compaction at once, sending nothing', async () => {
    await longSession()
    const controller = new AbortController()
    const agent = h().createAgent({
      sessionId: 'long',
      client: h().client({ model: 'tiny', catalog: TINY }),
      compaction: { keepRecent: 1 },
      hooks: {
        // Never settles, and never looks at its signal.
        beforeModelCall: () => {
          controller.abort()
          return new Promise<undefined>(() => {})
        },
      },
    })
    expect(await agent.compact({ signal: controller.signal })).toEqual({
      compacted: false,
      reason: 'aborted',
    })
    expect(h().server.requests).toHaveLength(0)
    expect((await agent.history()).at(-1)).toMatchObject({
      type: 'interrupt',
      compaction: { reason: 'manual' },
    })
  })
})

// A gateway or deployment that needs a field on every request needs it on the summary request too.
describe('the summary request and the model settings', () => {
  const h = useHarness()
  const longSession = () => storeLongSession(h().store, 'plain')

  test("carries the task's providerOptions (the run's over the agent's), and none of a turn's other settings", async () => {
    await longSession()
    h().server.enqueue(chatStream({ id: 's1', steps: [say('Six chunks read.')] }), textReply('r1', 'ok'))
    const agent = h().createAgent({
      sessionId: 'long',
      client: h().client({ model: 'tiny', catalog: TINY }),
      tools: [readChunk],
      compaction: { keepRecent: 1 },
      modelSettings: {
        temperature: 0.2,
        providerOptions: { 'openai-chat': { user: 'agent', store: false } },
      },
    })
    const run = agent.run('Go on', {
      modelSettings: { providerOptions: { 'openai-chat': { user: 'run-7' } } },
    })
    expect((await collect(run)).outcome.reason).toBe('completed')
    const [summary, turn] = h().server.requests
    expect(isSummaryRequest(summary!)).toBe(true)
    expect(summary!.body).toMatchObject({ user: 'run-7' })
    expect(summary!.body).not.toHaveProperty('store')
    expect(summary!.body).not.toHaveProperty('temperature')
    expect(turn!.body).toMatchObject({ user: 'run-7', temperature: 0.2 })
  })

  test("agent.compact()'s summary request carries the agent's providerOptions", async () => {
    await longSession()
    h().server.enqueue(chatStream({ id: 's1', steps: [say('Six chunks read.')] }))
    const agent = h().createAgent({
      sessionId: 'long',
      client: h().client({ model: 'tiny', catalog: TINY }),
      tools: [readChunk],
      compaction: { keepRecent: 1 },
      modelSettings: { providerOptions: { 'openai-chat': { user: 'agent' } } },
    })
    expect(await agent.compact()).toMatchObject({ compacted: true })
    const [summary] = h().server.requests
    expect(isSummaryRequest(summary!)).toBe(true)
    expect(summary!.body).toMatchObject({ user: 'agent' })
  })

  test("an OpenAI summary carries the openai-chat options alone: another api's thinking never goes with it", async () => {
    await longSession()
    h().server.enqueue(chatStream({ id: 's1', steps: [say('Six chunks read.')] }))
    const agent = h().createAgent({
      sessionId: 'long',
      client: h().client({ model: 'tiny', catalog: TINY }),
      tools: [readChunk],
      compaction: { keepRecent: 1 },
      modelSettings: {
        providerOptions: {
          anthropic: { thinking: { type: 'enabled', budget_tokens: 2_048 } },
          google: { generationConfig: { thinkingConfig: { thinkingBudget: 2_048 } } },
          'openai-chat': { user: 'agent' },
        },
      },
    })
    expect(await agent.compact()).toMatchObject({ compacted: true })
    const [summary] = h().server.requests
    expect(isSummaryRequest(summary!)).toBe(true)
    // The transport sends the entry of the client's api alone (`providerOptions[api]`).
    const { messages: _messages, ...fields } = summary!.body as Record<string, unknown>
    expect(fields).toEqual({
      model: 'tiny',
      stream: true,
      stream_options: { include_usage: true },
      max_completion_tokens: 500,
      user: 'agent',
    })
  })
})

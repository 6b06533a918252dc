import { defineTool } from '@kode/core'
import type { Event } from '@kode/protocol'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { call, chatStream, textReply } from './helpers/chat-wire.js'
import { useHarness } from './helpers/harness.js'

// Keys a host's own code put in an error message: a gateway's refusal quoting the header, an SDK
// naming the key it was given. Core does not know the keys, so it redacts them by their shape.
const BEARER = 'sk-live-0123456789abcdefXYZ'
const HEADER_KEY = 'abcdefghijklmnopqrstuvwx'
const BARE_KEY = 'sk-proj-AbCdEf0123456789AbCdEf0123'
const GOOGLE_KEY = 'AIzaSyA0123456789abcdefghijklmnopqrstu'

describe('a credential in a thrown message', () => {
  const h = useHarness()

  test('a hook’s is redacted in the events and the history, and the host still gets its error', async () => {
    h().server.enqueue(textReply('r1', 'Hi.'))
    const thrown = new Error(`the gateway refused Authorization: Bearer ${BEARER}`)
    const agent = h().createAgent({
      hooks: {
        beforeModelCall: () => {
          throw thrown
        },
      },
    })
    const run = agent.run('Hello')
    const events: Event[] = []
    const error = await (async () => {
      for await (const event of run) events.push(event)
    })().catch((e: unknown) => e)
    expect(error).toBe(thrown)
    await expect(run.done).rejects.toBe(thrown)
    const history = JSON.stringify(await agent.history())
    expect(history).toContain('the gateway refused Authorization: Bearer [redacted]')
    expect(history).not.toContain(BEARER)
    expect(JSON.stringify(events)).not.toContain(BEARER)
  })

  test('a tool’s is redacted in its result, so neither the model nor the history sees the key', async () => {
    const failing = defineTool({
      name: 'fetch_report',
      description: 'Fetches the report',
      parameters: Type.Object({}),
      execute: () => {
        throw new Error(`401 for x-api-key: ${HEADER_KEY}; the SDK was given ${BARE_KEY} and ${GOOGLE_KEY}`)
      },
    })
    h().server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'fetch_report', {})] }))
    h().server.enqueue(textReply('r2', 'It failed.'))
    const agent = h().createAgent({ tools: [failing] })
    const events: Event[] = []
    for await (const event of agent.run('Get the report')) events.push(event)
    const result = events.find((e) => e.type === 'tool_result')
    expect(result).toMatchObject({
      result: '401 for x-api-key: [redacted]; the SDK was given [redacted] and [redacted]',
    })
    const everything = [
      JSON.stringify(events),
      JSON.stringify(await agent.history()),
      h().server.requests[1]!.rawBody,
    ]
    for (const text of everything) {
      for (const key of [HEADER_KEY, BARE_KEY, GOOGLE_KEY]) expect(text).not.toContain(key)
    }
  })
})

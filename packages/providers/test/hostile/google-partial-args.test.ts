import { ProviderError } from '@kode/providers'
import { afterEach, describe, expect, test } from 'vitest'
import { ask, collect, streamOf, testClient, useServer } from '../helpers.js'

const server = useServer()

/** A Gemini 3 call whose `partialArgs` set `piece`, in the wire's real shape. */
function streamedCall(piece: Record<string, unknown>): string[] {
  const chunk = (functionCall: unknown, extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      candidates: [{ content: { role: 'model', parts: [{ functionCall }] }, ...extra }],
      responseId: 'hostile-1',
    })
  return [
    chunk({ name: 'set_light', willContinue: true }),
    chunk({ partialArgs: [piece], willContinue: true }),
    chunk({ partialArgs: [] }, { finishReason: 'STOP' }),
  ]
}

afterEach(() => {
  // If a test polluted the process, clean up so the others still mean something.
  for (const proto of [Object.prototype, Array.prototype] as Record<string, unknown>[]) delete proto.polluted
})

describe('Gemini partialArgs paths from a hostile server', () => {
  test.each([
    ['$.__proto__.polluted'],
    ['$.constructor.prototype.polluted'],
    ["$['__proto__']['polluted']"],
    ['$.a.prototype'],
  ])('%s is refused as an invalid response', async (jsonPath) => {
    server().enqueue(streamOf('google', streamedCall({ jsonPath, boolValue: true })))
    const client = testClient(server(), { api: 'google', model: 'gemini-3-pro-preview' })
    const error = await collect(client.stream(ask())).catch((e: unknown) => e)
    expect(ProviderError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'invalid_response', retryable: false })
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(server().requests).toHaveLength(1)
  })

  test('a path through an array to its prototype pollutes nothing', async () => {
    const payloads = streamedCall({ jsonPath: '$.list[0]', numberValue: 1 })
    payloads.splice(2, 0, streamedCall({ jsonPath: '$.list.__proto__.polluted', boolValue: true })[1]!)
    server().enqueue(streamOf('google', payloads))
    const client = testClient(server(), { api: 'google', model: 'gemini-3-pro-preview' })
    const error = await collect(client.stream(ask())).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'invalid_response' })
    expect(([] as unknown as Record<string, unknown>).polluted).toBeUndefined()
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  test.each([
    ['an index far past the end (a sparse array of a billion holes)', '$.list[1000000000]'],
    ['a named key on an array (its length)', '$.list.length'],
  ])('%s is refused', async (_, jsonPath) => {
    const payloads = streamedCall({ jsonPath: '$.list[0]', numberValue: 1 })
    payloads.splice(2, 0, streamedCall({ jsonPath, numberValue: 1_000_000_000 })[1]!)
    server().enqueue(streamOf('google', payloads))
    const client = testClient(server(), { api: 'google', model: 'gemini-3-pro-preview' })
    const error = await collect(client.stream(ask())).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'invalid_response', retryable: false })
  })

  test('ordinary nested paths still build the arguments', async () => {
    const payloads = streamedCall({ jsonPath: '$.list[0].name', stringValue: 'a' })
    payloads.splice(2, 0, streamedCall({ jsonPath: '$.list[1]', numberValue: 2 })[1]!)
    server().enqueue(streamOf('google', payloads))
    const client = testClient(server(), { api: 'google', model: 'gemini-3-pro-preview' })
    const message = await client.complete(ask())
    expect(message.parts).toEqual([
      {
        type: 'tool_call',
        id: 'call_hostile-1_0',
        name: 'set_light',
        argumentsJson: '{"list":[{"name":"a"},2]}',
      },
    ])
  })
})

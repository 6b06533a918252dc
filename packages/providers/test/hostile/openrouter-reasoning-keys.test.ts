import { describe, expect, test } from 'vitest'
import { ask, streamOf, testClient, useServer } from '../helpers.js'

const server = useServer()

const chunk = (delta: unknown, finish: string | null = null) =>
  JSON.stringify({
    id: 'gen-hostile',
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, finish_reason: finish }],
  })

describe('OpenRouter reasoning_details with hostile keys', () => {
  test('a __proto__ key in a later piece is kept as data and changes no prototype', async () => {
    const payloads = [
      chunk({ role: 'assistant', reasoning_details: [{ type: 'reasoning.text', text: 'a', index: 0 }] }),
      // Written as JSON text: JSON.parse makes `__proto__` an own key, the way it arrives on the wire.
      `{"id":"gen-hostile","choices":[{"index":0,"delta":{"reasoning_details":[{"type":"reasoning.text","index":0,"__proto__":{"polluted":true},"signature":"sig"}]},"finish_reason":null}]}`,
      chunk({ content: 'ok' }, 'stop'),
    ]
    server().enqueue(streamOf('openrouter', payloads))
    const message = await testClient(server(), { api: 'openrouter', model: 'x/y' }).complete(ask())
    const signature = message.parts.find((p) => p.type === 'thinking_signature')
    expect(signature?.type === 'thinking_signature' && JSON.parse(signature.signature)).toEqual([
      // JSON.parse gives `__proto__` back as an own key: the detail went through unchanged.
      JSON.parse(
        '{"type":"reasoning.text","text":"a","index":0,"__proto__":{"polluted":true},"signature":"sig"}',
      ),
    ])
    expect(signature?.type === 'thinking_signature' && signature.signature).toContain('"__proto__"')
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })
})

import type { ClientConfig } from '@kode/providers'
import { describe, expect, test } from 'vitest'
import { ask, collect, streamOf, testClient, useServer } from '../helpers.js'
import { user } from '../messages.js'

// URL schemes are case-insensitive (RFC 3986; `data:` and `;base64,` too, RFC 2397): an image URL
// in any case is the image it names, and goes to the server with its scheme in lower case.

type FramedApiName = 'anthropic' | 'google' | 'openai-chat' | 'openai-responses'

const server = useServer()
const END: Record<FramedApiName, string[]> = {
  anthropic: [
    '{"type":"message_start","message":{"id":"m","usage":{"input_tokens":1,"output_tokens":1}}}',
    '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}',
    '{"type":"message_stop"}',
  ],
  google: ['{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}]}'],
  'openai-chat': ['{"id":"c","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}'],
  'openai-responses': [
    '{"type":"response.completed","response":{"id":"r","status":"completed","output":[{"type":"message","id":"msg","role":"assistant","content":[{"type":"output_text","text":"ok"}]}]}}',
  ],
}

const images = user(
  { type: 'image_url', url: 'HTTPS://example.com/cat.png' },
  { type: 'image_url', url: 'Data:image/png;base64,iVBORw0KGgo=' },
  { type: 'image_url', url: 'data:image/png;BASE64,AAAA' },
)

async function bodyFor(api: FramedApiName): Promise<unknown> {
  server().enqueue(streamOf(api, END[api]))
  const config: Partial<ClientConfig> = api === 'anthropic' ? { cacheControl: false } : {}
  await testClient(server(), { api, model: 'm', ...config }).complete({ messages: [images] })
  return server().requests.at(-1)!.body
}

describe('image URL schemes in any case, in requests', () => {
  test('anthropic: data URLs go as base64, web URLs with a lower-case scheme', async () => {
    const body = (await bodyFor('anthropic')) as { messages: { content: unknown[] }[] }
    expect(body.messages[0]!.content).toEqual([
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
    ])
  })

  test('google: data URLs go inline, web URLs as fileData with a lower-case scheme', async () => {
    const body = (await bodyFor('google')) as { contents: { parts: unknown[] }[] }
    expect(body.contents[0]!.parts).toEqual([
      { fileData: { fileUri: 'https://example.com/cat.png', mimeType: 'image/png' } },
      { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
      { inlineData: { mimeType: 'image/png', data: 'AAAA' } },
    ])
  })

  test('openai-chat: every URL with a lower-case scheme', async () => {
    const body = (await bodyFor('openai-chat')) as { messages: { content: unknown[] }[] }
    expect(body.messages[0]!.content).toEqual([
      { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
      { type: 'image_url', image_url: { url: 'data:image/png;BASE64,AAAA' } },
    ])
  })

  test('openai-responses: every URL with a lower-case scheme', async () => {
    const body = (await bodyFor('openai-responses')) as { input: { content: unknown[] }[] }
    expect(body.input[0]!.content).toEqual([
      { type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'auto' },
      { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' },
      { type: 'input_image', image_url: 'data:image/png;BASE64,AAAA', detail: 'auto' },
    ])
  })
})

test('an image the server sends with an upper-case scheme is kept, as the server sent it', async () => {
  server().enqueue(
    streamOf('openai-chat', [
      '{"id":"g","choices":[{"index":0,"delta":{"images":[{"type":"image_url","image_url":{"url":"HTTPS://example.com/out.png"}}]},"finish_reason":"stop"}]}',
    ]),
  )
  const items = await collect(testClient(server(), { api: 'openai-chat', model: 'm' }).stream(ask()))
  const done = items.at(-1)
  expect(done?.type === 'done' && done.message.parts).toEqual([
    { type: 'image_url', url: 'HTTPS://example.com/out.png' },
  ])
})

import { frameChat } from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'
import { ask, fixture, testClient, useServer } from '../helpers.js'

const server = useServer()
const TEXT = 'Gutenberg built it around 1440 ([Wikipedia](https://en.wikipedia.org/wiki/Printing_press)).'
const annotation = {
  type: 'url_citation',
  url_citation: {
    end_index: 89,
    start_index: 32,
    title: 'Printing press - Wikipedia',
    url: 'https://en.wikipedia.org/wiki/Printing_press',
  },
}

describe('Chat Completions annotations', () => {
  test.each(['openai-chat', 'openrouter'] as const)(
    '%s: url_citation annotations are kept as citations on the text, and not sent back',
    async (api) => {
      server().enqueue({ body: frameChat(fixture('openai-chat', 'kode-citations')) })
      const client = testClient(server(), { api, model: 'gpt-4o-search-preview' })
      const message = await client.complete(ask())
      expect(message.parts).toEqual([
        {
          type: 'text',
          text: TEXT,
          citations: [
            {
              url: 'https://en.wikipedia.org/wiki/Printing_press',
              title: 'Printing press - Wikipedia',
              providerFields: { format: 'openai-chat', fields: annotation },
            },
          ],
        },
      ])
      server().enqueue({ body: frameChat(fixture('openai-chat', 'kode-citations')) })
      await client.complete({
        messages: [
          ...ask().messages,
          message,
          { role: 'user', id: 'u2', createdAt: 3, parts: [{ type: 'text', text: 'More?' }] },
        ],
      })
      const body = server().requests[1]!.body as { messages: unknown[] }
      expect(body.messages[1]).toEqual({ role: 'assistant', content: TEXT })
    },
  )

  test('annotations of another shape are kept as sent; a value that is no list is ignored', async () => {
    const lines = fixture('openai-chat', 'kode-citations').map((line) =>
      line
        .replace('"annotations":[]', '"annotations":"none"')
        .replace('{"type":"url_citation","url_citation":{', '{"type":"file_citation","file_citation":{'),
    )
    server().enqueue({ body: frameChat(lines) })
    const message = await testClient(server(), { api: 'openai-chat', model: 'gpt-4o' }).complete(ask())
    expect(message.parts).toEqual([
      {
        type: 'text',
        text: TEXT,
        citations: [
          {
            providerFields: {
              format: 'openai-chat',
              fields: { type: 'file_citation', file_citation: annotation.url_citation },
            },
          },
        ],
      },
    ])
  })
})

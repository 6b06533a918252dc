import { ProviderError } from '@kode/providers'
import { describe, expect, test } from 'vitest'
import { ask, fixture, streamOf, testClient, useServer } from '../helpers.js'

const server = useServer()
const NAME = 'kode-citations'
const responses = () => {
  server().enqueue(streamOf('openai-responses', fixture('openai-responses', NAME)))
  return testClient(server(), { api: 'openai-responses', model: 'gpt-5' })
}
const fields = (raw: unknown) => ({ format: 'openai-responses', fields: raw })

describe('OpenAI Responses annotations', () => {
  test("a finished message's annotations are kept as citations on its text, streamed or whole", async () => {
    const message = await responses().complete(ask())
    const url = {
      type: 'url_citation',
      end_index: 89,
      start_index: 32,
      title: 'Printing press - Wikipedia',
      url: 'https://en.wikipedia.org/wiki/Printing_press',
    }
    expect(message.parts.slice(1)).toEqual([
      {
        type: 'text',
        text: 'Gutenberg built it around 1440 ([Wikipedia](https://en.wikipedia.org/wiki/Printing_press)).',
        itemId: 'msg_kode_cite',
        // Once, from the finished item: not again from `annotation.added` or `content_part.done`.
        citations: [{ url: url.url, title: url.title, providerFields: fields(url) }],
      },
      {
        type: 'text',
        text: 'See the handbook.',
        itemId: 'msg_kode_file',
        citations: [
          {
            title: 'handbook.pdf',
            providerFields: fields({
              type: 'file_citation',
              file_id: 'file-kode1',
              filename: 'handbook.pdf',
              index: 12,
            }),
          },
          { providerFields: fields({ type: 'file_path', file_id: 'file-kode2', index: 20 }) },
        ],
      },
    ])
    expect(message.parts[0]).toMatchObject({ type: 'server_tool', block: { type: 'web_search_call' } })
  })

  test('citations are not sent back: the assistant message goes as its text', async () => {
    const message = await responses().complete(ask())
    server().enqueue(streamOf('openai-responses', fixture('openai-responses', NAME)))
    await testClient(server(), { api: 'openai-responses', model: 'gpt-5' }).complete({
      messages: [
        ...ask().messages,
        message,
        { role: 'user', id: 'u2', createdAt: 3, parts: [{ type: 'text', text: 'More?' }] },
      ],
    })
    const body = server().requests[1]!.body as { input: unknown[] }
    expect(body.input.slice(1, 3)).toEqual([
      {
        role: 'assistant',
        content: [
          {
            type: 'output_text',
            text: 'Gutenberg built it around 1440 ([Wikipedia](https://en.wikipedia.org/wiki/Printing_press)).',
          },
        ],
        id: 'msg_kode_cite',
      },
      {
        role: 'assistant',
        content: [{ type: 'output_text', text: 'See the handbook.' }],
        id: 'msg_kode_file',
      },
    ])
  })
})

describe('OpenAI Responses annotations of a message the stream ends inside', () => {
  const url = {
    type: 'url_citation',
    end_index: 89,
    start_index: 32,
    title: 'Printing press - Wikipedia',
    url: 'https://en.wikipedia.org/wiki/Printing_press',
  }
  /** Streams the fixture's first `count` events, then ends the body. */
  const cutAfter = async (count: number): Promise<ProviderError> => {
    server().enqueue(streamOf('openai-responses', fixture('openai-responses', NAME).slice(0, count)))
    const client = testClient(server(), { api: 'openai-responses', model: 'gpt-5' })
    const error = await client.complete(ask()).catch((e: unknown) => e)
    if (!(error instanceof ProviderError)) throw new Error('the response did not fail')
    return error
  }

  test('an annotation that arrived before the cut is kept on the text, as it is once the item is done', async () => {
    const error = await cutAfter(8)
    expect(error.code).toBe('stream_cut')
    expect(error.partial?.parts.slice(1)).toEqual([
      {
        type: 'text',
        text: 'Gutenberg built it around 1440 ([Wikipedia](https://en.wikipedia.org/wiki/Printing_press)).',
        itemId: 'msg_kode_cite',
        citations: [{ url: url.url, title: url.title, providerFields: fields(url) }],
      },
    ])
  })

  test('a cut before the annotation keeps the text without it', async () => {
    const error = await cutAfter(7)
    expect(error.partial?.parts.slice(1)).toEqual([
      {
        type: 'text',
        text: 'Gutenberg built it around 1440 ([Wikipedia](https://en.wikipedia.org/wiki/Printing_press)).',
        itemId: 'msg_kode_cite',
      },
    ])
  })
})

import type { AssistantMessage, StreamItem } from '@kode/protocol'
import { ProviderError } from '@kode/providers'
import { frameFor } from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'
import { ask, fixture, streamOf, testClient, useServer } from '../helpers.js'

const server = useServer()
const MODEL = 'claude-sonnet-4-5'
const NAME = 'kode-citations'
const claude = () => {
  server().enqueue(streamOf('anthropic', fixture('anthropic', NAME)))
  return testClient(server(), { api: 'anthropic', model: MODEL })
}
/** The citation of `citations_delta` on fixture line `line`, as recorded. */
const deltaCitation = (line: number) => JSON.parse(fixture('anthropic', NAME)[line]!).delta.citation
const anthropic = (fields: unknown) => ({ format: 'anthropic', fields })

describe('Anthropic citations', () => {
  test('each text block keeps its citations, whether they come before, after or with its text', async () => {
    const message = await claude().complete(ask())
    expect(message.parts).toEqual([
      { type: 'text', text: 'Here is what I found. ' },
      {
        type: 'text',
        text: 'Gutenberg built it around 1440.',
        citations: [
          {
            url: 'https://en.wikipedia.org/wiki/Printing_press',
            title: 'Printing press - Wikipedia',
            citedText: 'Johannes Gutenberg introduced the printing press around 1440.',
            providerFields: anthropic(deltaCitation(5)),
          },
        ],
      },
      {
        type: 'text',
        text: ' The contract runs for two years.',
        citations: [
          {
            title: 'Contract.pdf',
            citedText: 'The term of this agreement is two (2) years.',
            providerFields: anthropic(deltaCitation(11)),
          },
          { citedText: 'Term: 24 months', providerFields: anthropic(deltaCitation(12)) },
        ],
      },
      {
        type: 'text',
        text: ' Both agree.',
        citations: [
          {
            title: 'Policy 7',
            citedText: 'Both parties agree.',
            providerFields: anthropic({
              type: 'search_result_location',
              source: 'kb://policies/7',
              title: 'Policy 7',
              cited_text: 'Both parties agree.',
              search_result_index: 0,
              start_block_index: 0,
              end_block_index: 1,
            }),
          },
          // A citation type Kode does not know is kept as sent.
          { providerFields: anthropic({ type: 'future_location', note: 'kept as sent' }) },
        ],
      },
    ])
    expect(message.stopReason).toBe('stop')
  })

  test('citations are not sent back: the next request carries the text alone', async () => {
    const message: AssistantMessage = await claude().complete(ask())
    server().enqueue(streamOf('anthropic', fixture('anthropic', 'anthropic-text')))
    await testClient(server(), { api: 'anthropic', model: MODEL, cacheControl: false }).complete({
      messages: [
        ...ask().messages,
        message,
        { role: 'user', id: 'u2', createdAt: 3, parts: [{ type: 'text', text: 'Thanks' }] },
      ],
    })
    const body = server().requests[1]!.body as { messages: { role: string; content: unknown }[] }
    expect(body.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Here is what I found. ' },
        { type: 'text', text: 'Gutenberg built it around 1440.' },
        { type: 'text', text: ' The contract runs for two years.' },
        { type: 'text', text: ' Both agree.' },
      ],
    })
  })
})

describe('Anthropic citations of a block the stream ends inside', () => {
  const lines = fixture('anthropic', NAME)
  /** The request every test sends: the fixture client's, exactly. */
  const expectedBody = {
    model: MODEL,
    max_tokens: 64000,
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral' } }] },
    ],
    stream: true,
  }
  const gutenberg = {
    url: 'https://en.wikipedia.org/wiki/Printing_press',
    title: 'Printing press - Wikipedia',
    citedText: 'Johannes Gutenberg introduced the printing press around 1440.',
    providerFields: anthropic(deltaCitation(5)),
  }
  /** Streams the fixture's first `count` events, then ends the body. */
  const cutAfter = (count: number) => {
    server().enqueue(streamOf('anthropic', lines.slice(0, count)))
    return testClient(server(), { api: 'anthropic', model: MODEL })
  }
  const failureOf = async (stream: AsyncIterable<StreamItem>): Promise<ProviderError> => {
    try {
      for await (const _ of stream) {
        // read to the end
      }
    } catch (error) {
      if (error instanceof ProviderError) return error
      throw error
    }
    throw new Error('the stream did not fail')
  }

  test('a cut after the citation and some of the text keeps the citation on that text', async () => {
    const error = await failureOf(cutAfter(7).stream(ask()))
    expect(server().requests[0]!.body).toEqual(expectedBody)
    expect(error.code).toBe('stream_cut')
    expect(error.partial?.parts).toEqual([
      { type: 'text', text: 'Here is what I found. ' },
      { type: 'text', text: 'Gutenberg built it ', citations: [gutenberg] },
    ])
    expect(error.partial?.stopReason).toBe('error')
  })

  test('a cut between the citation and the text keeps the citation on a text part of its own', async () => {
    const error = await failureOf(cutAfter(6).stream(ask()))
    expect(error.code).toBe('stream_cut')
    expect(error.partial?.parts).toEqual([
      { type: 'text', text: 'Here is what I found. ' },
      { type: 'text', text: '', citations: [gutenberg] },
    ])
  })

  test('an abort inside the block keeps the citation on the text handed out', async () => {
    // The stream stays open after the block's first text: only the abort ends it.
    const body = frameFor('anthropic', lines.slice(0, 7))
    server().enqueue({ body, stallAfterBytes: Buffer.byteLength(body.join('')) })
    const client = testClient(server(), { api: 'anthropic', model: MODEL })
    const controller = new AbortController()
    const items: StreamItem[] = []
    for await (const item of client.stream(ask(), { signal: controller.signal })) {
      items.push(item)
      if (item.type === 'text_delta' && item.text === 'Gutenberg built it ') controller.abort()
    }
    const done = items.at(-1)
    expect(done?.type).toBe('done')
    const message = done?.type === 'done' ? done.message : undefined
    expect(message?.stopReason).toBe('aborted')
    expect(message?.parts).toEqual([
      { type: 'text', text: 'Here is what I found. ' },
      { type: 'text', text: 'Gutenberg built it ', citations: [gutenberg] },
    ])
  })
})

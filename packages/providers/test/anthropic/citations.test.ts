import type { AssistantMessage } from '@kode/protocol'
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

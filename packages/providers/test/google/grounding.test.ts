import { ProviderError } from '@kode/providers'
import { describe, expect, test } from 'vitest'
import { ask, fixture, streamOf, testClient, useServer } from '../helpers.js'

const server = useServer()
const NAME = 'kode-grounding'
const gemini = (lines = fixture('google', NAME)) => {
  server().enqueue(streamOf('google', lines))
  return testClient(server(), { api: 'google', model: 'gemini-2.5-flash' })
}
const last = JSON.parse(fixture('google', NAME).at(-1)!).candidates[0].groundingMetadata
const support = last.groundingSupports[0]

describe('Gemini grounding', () => {
  test('grounding chunks become citations on the text, each with the supports that rely on it', async () => {
    const message = await gemini().complete(ask())
    expect(message.parts).toEqual([
      {
        type: 'text',
        text: 'Gutenberg built the printing press around 1440.',
        citations: [
          {
            url: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbF9wXkode1',
            title: 'wikipedia.org',
            providerFields: {
              format: 'google',
              fields: { web: last.groundingChunks[0].web, groundingSupports: [support] },
            },
          },
          {
            url: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbF9wXkode2',
            title: 'britannica.com',
            providerFields: {
              format: 'google',
              fields: { web: last.groundingChunks[1].web, groundingSupports: [support] },
            },
          },
        ],
      },
    ])
    expect(message.stopReason).toBe('stop')
  })

  test('a retrieved document quotes its passage; a chunk no support relies on is kept alone', async () => {
    const chunk = { retrievedContext: { uri: 'gs://kb/policy.txt', title: 'Policy', text: 'Both agree.' } }
    const lines = fixture('google', NAME).map((line, i, all) =>
      i === all.length - 1
        ? line.replace('"britannica.com"}}]', `"britannica.com"}},${JSON.stringify(chunk)}]`)
        : line,
    )
    const message = await gemini(lines).complete(ask())
    const text = message.parts[0]
    expect(text?.type === 'text' && text.citations?.[2]).toEqual({
      url: 'gs://kb/policy.txt',
      title: 'Policy',
      citedText: 'Both agree.',
      providerFields: { format: 'google', fields: chunk },
    })
    expect(text?.type === 'text' && text.citations?.map((c) => c.title)).toEqual([
      'wikipedia.org',
      'britannica.com',
      'Policy',
    ])
  })

  test('grounding without chunks, or of the wrong type, adds nothing', async () => {
    const lines = fixture('google', NAME).map((line, i, all) =>
      i === all.length - 1
        ? line.replace(
            /"groundingMetadata":\{.*\}\}\],"usageMetadata"/,
            '"groundingMetadata":7}],"usageMetadata"',
          )
        : line,
    )
    const message = await gemini(lines).complete(ask())
    expect(message.parts).toEqual([{ type: 'text', text: 'Gutenberg built the printing press around 1440.' }])
  })

  test('a response cut after its grounding arrived keeps it: the partial message cites it', async () => {
    // The grounding of the last chunk, sent with the second, and the chunk with the finish never comes.
    const lines = fixture('google', NAME)
    const early = JSON.parse(lines[1]!)
    early.candidates[0].groundingMetadata = last
    const client = gemini([lines[0]!, JSON.stringify(early)])
    let error: unknown
    try {
      for await (const _ of client.stream(ask())) {
        // read to the end
      }
    } catch (thrown) {
      error = thrown
    }
    expect(server().requests[0]!.body).toEqual({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] })
    expect(error).toBeInstanceOf(ProviderError)
    expect((error as ProviderError).code).toBe('stream_cut')
    expect((error as ProviderError).partial?.parts).toEqual([
      {
        type: 'text',
        text: 'Gutenberg built the printing press around 1440.',
        citations: [
          {
            url: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbF9wXkode1',
            title: 'wikipedia.org',
            providerFields: {
              format: 'google',
              fields: { web: last.groundingChunks[0].web, groundingSupports: [support] },
            },
          },
          {
            url: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbF9wXkode2',
            title: 'britannica.com',
            providerFields: {
              format: 'google',
              fields: { web: last.groundingChunks[1].web, groundingSupports: [support] },
            },
          },
        ],
      },
    ])
  })
})

import { describe, expect, test } from 'vitest'
import { ask, fixture, streamOf, testClient, useServer } from '../helpers.js'

const server = useServer()
const NAME = 'kode-recitation'
const gemini = (lines = fixture('google', NAME)) => {
  server().enqueue(streamOf('google', lines))
  return testClient(server(), { api: 'google', model: 'gemini-2.5-flash' })
}
const loc = { startIndex: 0, endIndex: 56, uri: 'https://www.loc.gov/resource/rbpe.24404500/' }
const wiki = {
  startIndex: 40,
  endIndex: 88,
  uri: 'https://en.wikipedia.org/wiki/Gettysburg_Address',
  license: 'CC-BY-SA-4.0',
}

describe('Gemini citation metadata (the sources an answer recites)', () => {
  test('each source becomes a citation on the text once, however many chunks repeat it', async () => {
    const message = await gemini().complete(ask())
    expect(message.parts).toEqual([
      {
        type: 'text',
        text: 'Four score and seven years ago our fathers brought forth on this continent, a new nation',
        citations: [
          { url: loc.uri, providerFields: { format: 'google', fields: loc } },
          { url: wiki.uri, providerFields: { format: 'google', fields: wiki } },
        ],
      },
    ])
    expect(message).toMatchObject({ rawStopReason: 'RECITATION', responseId: 'kodeRecitation01' })
    expect(message.stopReason).toBeUndefined()
  })

  test("Vertex AI's citations (under `citations`, with a title) are read the same way", async () => {
    const source = { startIndex: 0, endIndex: 9, uri: 'https://example.com/a', title: 'A page' }
    const message = await gemini([
      `{"candidates": [{"content": {"role": "model","parts": [{"text": "Recited."}]},"citationMetadata": {"citations": [${JSON.stringify(source)}]}}],"modelVersion": "gemini-2.5-flash"}`,
      '{"candidates": [{"content": {"role": "model","parts": [{"text": ""}]},"finishReason": "STOP"}],"usageMetadata": {"promptTokenCount": 3,"candidatesTokenCount": 2,"totalTokenCount": 5},"modelVersion": "gemini-2.5-flash"}',
    ]).complete(ask())
    expect(message.parts).toEqual([
      {
        type: 'text',
        text: 'Recited.',
        citations: [
          { url: source.uri, title: 'A page', providerFields: { format: 'google', fields: source } },
        ],
      },
    ])
    expect(message.stopReason).toBe('stop')
  })

  test('sources that arrived before the stream was cut are kept on the partial message', async () => {
    const lines = fixture('google', NAME).slice(0, 1)
    server().enqueue(streamOf('google', lines))
    const client = testClient(server(), {
      api: 'google',
      model: 'gemini-2.5-flash',
      retry: { maxAttempts: 1 },
    })
    const error = (await client.complete(ask()).catch((e: unknown) => e)) as {
      code?: string
      partial?: unknown
    }
    expect(error.code).toBe('stream_cut')
    expect(error.partial).toMatchObject({
      parts: [
        {
          type: 'text',
          text: 'Four score and seven years ago our fathers brought forth',
          citations: [{ url: loc.uri, providerFields: { format: 'google', fields: loc } }],
        },
      ],
    })
  })
})

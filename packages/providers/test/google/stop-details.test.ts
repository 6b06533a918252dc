import { describe, expect, test } from 'vitest'
import { ask, streamOf, testClient, useServer } from '../helpers.js'

// What Gemini says beyond its finish reason (`finishMessage`, the blocking safety rating, a blocked
// prompt's `blockReasonMessage`) is kept as the message's `stopDetails`, as an Anthropic refusal's is.

const server = useServer()
const gemini = (payloads: object[]) => {
  server().enqueue(
    streamOf(
      'google',
      payloads.map((p) => JSON.stringify(p)),
    ),
  )
  return testClient(server(), { api: 'google', model: 'gemini-2.5-flash' }).complete(ask())
}

describe('google stop details', () => {
  test('MALFORMED_FUNCTION_CALL keeps finishMessage, which quotes the call the model wrote', async () => {
    const finishMessage = 'Malformed function call: print(default_api.get_weather(city="Paris"'
    const message = await gemini([
      {
        candidates: [{ content: {}, finishReason: 'MALFORMED_FUNCTION_CALL', finishMessage, index: 0 }],
        usageMetadata: { promptTokenCount: 40, totalTokenCount: 40 },
        modelVersion: 'gemini-2.5-flash',
        responseId: 'g-malformed-1',
      },
    ])
    expect(message).toMatchObject({
      parts: [],
      rawStopReason: 'MALFORMED_FUNCTION_CALL',
      stopDetails: { explanation: finishMessage },
      responseId: 'g-malformed-1',
    })
    expect(message.stopReason).toBeUndefined()
  })

  test('SAFETY names the category of the rating that blocked the answer', async () => {
    const message = await gemini([
      { candidates: [{ content: { role: 'model', parts: [{ text: 'I can describe the' }] } }] },
      {
        candidates: [
          {
            content: { role: 'model', parts: [] },
            finishReason: 'SAFETY',
            safetyRatings: [
              { category: 'HARM_CATEGORY_HARASSMENT', probability: 'NEGLIGIBLE' },
              { category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'HIGH', blocked: true },
            ],
          },
        ],
      },
    ])
    expect(message.parts).toEqual([{ type: 'text', text: 'I can describe the' }])
    expect(message.rawStopReason).toBe('SAFETY')
    expect(message.stopDetails).toEqual({ category: 'HARM_CATEGORY_DANGEROUS_CONTENT' })
  })

  test('a blocked prompt keeps blockReasonMessage', async () => {
    const message = await gemini([
      {
        promptFeedback: {
          blockReason: 'PROHIBITED_CONTENT',
          blockReasonMessage: 'The prompt was blocked due to prohibited content.',
        },
        usageMetadata: { promptTokenCount: 7, totalTokenCount: 7 },
        responseId: 'g-block-1',
      },
    ])
    expect(message.rawStopReason).toBe('PROHIBITED_CONTENT')
    expect(message.stopDetails).toEqual({ explanation: 'The prompt was blocked due to prohibited content.' })
  })

  test('a plain STOP has no details', async () => {
    const message = await gemini([
      { candidates: [{ content: { role: 'model', parts: [{ text: 'Hi' }] }, finishReason: 'STOP' }] },
    ])
    expect(message.stopReason).toBe('stop')
    expect(message).not.toHaveProperty('stopDetails')
  })
})

import type { AssistantMessage, StreamItem } from '@kode/protocol'
import type { ProviderError } from '@kode/providers'
import { type FramedApi, frameChat, frameFor } from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'
import { ask, fixture, testClient, useServer } from './helpers.js'

// Issue 3: "A stream cut before its terminal event is an error, never silently accepted as
// complete". Wires with a terminal event declare `completesOn: 'terminal_event'`; Gemini has none.

const server = useServer()
const MODELS: Record<FramedApi, string> = {
  anthropic: 'claude-sonnet-4-5',
  'openai-chat': 'gpt-4.1',
  openrouter: 'anthropic/claude-sonnet-4.5',
  'openai-responses': 'gpt-5.1',
  google: 'gemini-2.5-pro',
}

async function run(api: FramedApi): Promise<{ items: StreamItem[]; error: ProviderError | undefined }> {
  const items: StreamItem[] = []
  const client = testClient(server(), { api, model: MODELS[api] })
  try {
    for await (const item of client.stream(ask())) items.push(item)
    return { items, error: undefined }
  } catch (error) {
    return { items, error: error as ProviderError }
  }
}

/** The frames of a fixture, framed as `api` does, without the last `drop` of them. */
function framesWithout(api: FramedApi, dir: string, name: string, drop = 1): string[] {
  const frames = frameFor(api, fixture(dir, name))
  return frames.slice(0, frames.length - drop)
}

function expectCutAfterOutput(
  outcome: { items: StreamItem[]; error: ProviderError | undefined },
  partial: Partial<AssistantMessage>,
) {
  expect(outcome.items.length).toBeGreaterThan(0)
  expect(outcome.items.some((i) => i.type === 'done')).toBe(false)
  expect(outcome.error).toMatchObject({ code: 'stream_cut', partial: { stopReason: 'error', ...partial } })
  // Output was delivered, so the transport did not retry.
  expect(server().requests).toHaveLength(1)
}

describe('a clean close after the stop reason but before the terminal event is a stream_cut', () => {
  test('anthropic: message_delta with end_turn arrived, message_stop did not', async () => {
    const frames = framesWithout('anthropic', 'anthropic', 'anthropic-text')
    expect(frames.at(-1)).toContain('"stop_reason":"end_turn"')
    server().enqueue({ body: frames })
    expectCutAfterOutput(await run('anthropic'), {
      parts: [{ type: 'text', text: expect.stringMatching(/^Hello!/) }],
    })
  })

  test('openai-chat: finish_reason arrived, data: [DONE] did not', async () => {
    const payloads = fixture('openai-chat', 'kode-interleaved-reasoning')
    server().enqueue({ body: frameChat(payloads, { done: false }) })
    expectCutAfterOutput(await run('openai-chat'), {
      parts: [
        { type: 'text', text: 'Let me check. ' },
        { type: 'thinking_text', text: expect.any(String) },
        { type: 'text', text: expect.any(String) },
      ],
    })
  })

  test('openrouter: finish_reason and usage arrived, data: [DONE] did not', async () => {
    server().enqueue({ body: frameChat(fixture('openrouter', 'kode-reasoning-details'), { done: false }) })
    expectCutAfterOutput(await run('openrouter'), {})
  })

  test('openai-responses: the output item is done, response.completed did not come', async () => {
    const frames = framesWithout('openai-responses', 'openai-responses', 'azure-text.1')
    expect(frames.at(-1)).not.toContain('response.completed')
    server().enqueue({ body: frames })
    expectCutAfterOutput(await run('openai-responses'), { parts: [{ type: 'text', text: 'Hello' }] })
  })
})

test('openai-responses: response.incomplete is terminal too', async () => {
  server().enqueue({ body: frameFor('openai-responses', fixture('openai-responses', 'kode-unknown-values')) })
  const { items, error } = await run('openai-responses')
  expect(error).toBeUndefined()
  expect(items.at(-1)).toMatchObject({ type: 'done', message: { rawStopReason: 'content_filter' } })
})

describe('a server that never sends its terminal event', () => {
  const finishOnly = () =>
    frameChat(['{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}'], { done: false })

  test('the error names the missing data: [DONE] and the completesOn fix', async () => {
    server().enqueue({
      body: frameChat(fixture('openai-chat', 'kode-interleaved-reasoning'), { done: false }),
    })
    const { error } = await run('openai-chat')
    expect(error).toMatchObject({ code: 'stream_cut', retryable: false })
    expect(error?.message).toContain('data: [DONE]')
    expect(error?.message).toContain("completesOn: 'stop_reason'")
  })

  test('is not retried, even before any output: the same request would fail the same way', async () => {
    server().enqueue(
      { body: finishOnly() },
      { body: frameChat(fixture('openai-chat', 'kode-interleaved-reasoning')) },
    )
    const { items, error } = await run('openai-chat')
    expect(items).toEqual([])
    expect(error).toMatchObject({ code: 'stream_cut', retryable: false })
    expect(error?.message).toContain("completesOn: 'stop_reason'")
    expect(server().requests).toHaveLength(1)
  })

  test('a cut before the finish reason is still retried', async () => {
    server().enqueue(
      { body: frameChat([], { done: false }) },
      { body: frameChat(fixture('openai-chat', 'kode-interleaved-reasoning')) },
    )
    const { items, error } = await run('openai-chat')
    expect(error).toBeUndefined()
    expect(items.at(-1)).toMatchObject({ type: 'done', message: { stopReason: 'stop' } })
    expect(server().requests).toHaveLength(2)
  })
})

describe('google has no terminal event', () => {
  test('the chunk with the finish reason completes the response', async () => {
    server().enqueue({ body: frameFor('google', fixture('google', 'google-text')) })
    const { items, error } = await run('google')
    expect(error).toBeUndefined()
    expect(items.at(-1)).toMatchObject({
      type: 'done',
      message: { stopReason: 'stop', rawStopReason: 'STOP' },
    })
  })

  test('a close before the finish reason is a stream_cut', async () => {
    const frames = framesWithout('google', 'google', 'kode-thought-signatures')
    expect(frames.join('')).not.toContain('finishReason')
    server().enqueue({ body: frames })
    expectCutAfterOutput(await run('google'), {})
  })
})

describe('completesOn in the client config', () => {
  test("'stop_reason' accepts an OpenAI-compatible server that never sends data: [DONE]", async () => {
    server().enqueue({
      body: frameChat(fixture('openai-chat', 'kode-interleaved-reasoning'), { done: false }),
    })
    const client = testClient(server(), {
      api: 'openai-chat',
      model: 'local-model',
      completesOn: 'stop_reason',
    })
    const items: StreamItem[] = []
    for await (const item of client.stream(ask())) items.push(item)
    expect(items.at(-1)).toMatchObject({ type: 'done', message: { stopReason: 'stop' } })
    expect(server().requests).toHaveLength(1)
  })

  test('a value no version of Kode knows is an invalid_config error when the client is made', () => {
    expect(() =>
      testClient(server(), { api: 'openai-chat', model: 'm', completesOn: 'eventually' as 'stop_reason' }),
    ).toThrow(expect.objectContaining({ code: 'invalid_config' }))
  })
})

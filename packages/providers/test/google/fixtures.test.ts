import type { AssistantMessage, StreamItem } from '@kode/protocol'
import { ProviderError, type RetryInfo } from '@kode/providers'
import { describe, expect, test } from 'vitest'
import { ask, collect, fixture, streamOf, testClient, useServer } from '../helpers.js'

const server = useServer()
const gemini = (name: string, model = 'gemini-3-pro-preview') => {
  server().enqueue(streamOf('google', fixture('google', name)))
  return testClient(server(), { api: 'google', model })
}
const stamps = { id: 'id-1', createdAt: 1_000, durationMs: 0, provider: 'google', api: 'google' }
const doneOf = (items: StreamItem[]): AssistantMessage => {
  const done = items.at(-1)
  if (done?.type !== 'done') throw new Error('no done')
  return done.message
}
/** The `thoughtSignature` of part `part` on line `line` of a fixture, as recorded. */
const signatureIn = (name: string, line: number, part = 0): string =>
  JSON.parse(fixture('google', name)[line]!).candidates[0].content.parts[part].thoughtSignature
const sig = (signature: string, model = 'gemini-3-pro-preview') => ({
  type: 'thinking_signature',
  signature,
  format: 'google',
  model,
})

describe('google recorded streams', () => {
  test('text in two chunks, then the signature Gemini sends on an empty final part', async () => {
    const items = await collect(gemini('google-text').stream(ask()))
    expect(
      items.filter((i) => i.type === 'text_delta').map((i) => i.type === 'text_delta' && i.text),
    ).toEqual(['There are **3**', ' "r"s in strawberry.\n\nst**r**awbe**rr**y'])
    expect(doneOf(items)).toEqual({
      role: 'assistant',
      ...stamps,
      model: 'gemini-3-pro-preview',
      parts: [
        { type: 'text', text: 'There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y' },
        sig(signatureIn('google-text', 2)),
      ],
      // output = candidates 23 + thoughts 185
      usage: { inputTokens: 9, outputTokens: 208, reasoningTokens: 185, totalTokens: 217 },
      stopReason: 'stop',
      rawStopReason: 'STOP',
      responseId: 'bH6LaZW8Fp_3nsEPqtaSwQ4',
      costUsd: (9 * 2 + 208 * 12) / 1e6,
    })
  })

  test('a whole function call with its signature right after it; STOP with calls is tool_use', async () => {
    const items = await collect(gemini('google-tool-call-gemini3').stream(ask()))
    const id = 'call_QHiLaa6LBrb8vdIPoNztsAg_0'
    expect(items[0]).toEqual({
      type: 'tool_call_start',
      toolCallId: id,
      toolName: 'weather',
      responseId: 'QHiLaa6LBrb8vdIPoNztsAg',
    })
    expect(doneOf(items)).toMatchObject({
      parts: [
        { type: 'tool_call', id, name: 'weather', argumentsJson: '{"location":"San Francisco"}' },
        sig(signatureIn('google-tool-call-gemini3', 0)),
      ],
      usage: { inputTokens: 29, outputTokens: 819, reasoningTokens: 804, totalTokens: 848 },
      stopReason: 'tool_use',
      rawStopReason: 'STOP',
    })
  })

  test('thought, a no-argument call, and calls whose arguments stream as partialArgs', async () => {
    const name = 'google-stream-no-args-tool-call'
    const message = await gemini(name, 'gemini-3-flash-preview').complete(ask())
    const thought = JSON.parse(fixture('google', name)[0]!).candidates[0].content.parts[0].text
    const id = (n: number) => `call__vr4aYiWEJnYodAPkujX0QM_${n}`
    expect(message.parts).toEqual([
      { type: 'thinking_text', text: thought },
      { type: 'tool_call', id: id(0), name: 'read_theme', argumentsJson: '{}' },
      sig(signatureIn(name, 1), 'gemini-3-flash-preview'),
      { type: 'tool_call', id: id(1), name: 'read_screen', argumentsJson: '{"id":"A"}' },
      { type: 'tool_call', id: id(2), name: 'read_screen', argumentsJson: '{"id":"B"}' },
      { type: 'tool_call', id: id(3), name: 'read_screen', argumentsJson: '{"id":"C"}' },
    ])
    expect(message.usage).toEqual({
      inputTokens: 249,
      outputTokens: 241,
      reasoningTokens: 183,
      totalTokens: 490,
    })
    expect(message.stopReason).toBe('tool_use')
  })

  test('two streamed calls of one function, the first signed', async () => {
    const name = 'google-stream-tool-call-arguments'
    const message = await gemini(name).complete(ask())
    expect(message.parts).toEqual([
      {
        type: 'tool_call',
        id: 'call_dqHOab6xGLzWodAPkPuViA4_0',
        name: 'getWeather',
        argumentsJson: '{"location":"Boston"}',
      },
      sig(signatureIn(name, 0)),
      {
        type: 'tool_call',
        id: 'call_dqHOab6xGLzWodAPkPuViA4_1',
        name: 'getWeather',
        argumentsJson: '{"location":"San Francisco"}',
      },
    ])
    expect(message.usage).toEqual({
      inputTokens: 26,
      outputTokens: 155,
      reasoningTokens: 132,
      totalTokens: 181,
    })
  })

  test('nested partialArgs paths build objects and arrays; continued strings are joined', async () => {
    const message = await gemini('google-vertex-stream-tool-call-arguments-nested.1').complete(ask())
    const call = message.parts[0]
    if (call?.type !== 'tool_call') throw new Error('expected a tool call')
    expect(call).toMatchObject({ id: 'call_tjXVaYaxFISTq8YP_MWiyAo_0', name: 'cookRecipe' })
    const ingredient = (amount: string, name: string) => ({ amount, name })
    expect(JSON.parse(call.argumentsJson)).toEqual({
      recipe: {
        ingredients: [
          ingredient('16 oz', 'Lasagna noodles'),
          ingredient('1 lb', 'Ground beef'),
          ingredient('15 oz', 'Ricotta cheese'),
          ingredient('3 cups', 'Mozzarella cheese'),
          ingredient('1/2 cup', 'Parmesan cheese'),
          ingredient('24 oz', 'Tomato sauce'),
          ingredient('1', 'Egg'),
          ingredient('2 cloves', 'Garlic'),
          ingredient('1 tsp', 'Salt'),
          ingredient('1/2 tsp', 'Pepper'),
        ],
        name: 'Lasagna',
        steps: [
          'Preheat oven to 375°F (190°C).',
          'Cook lasagna noodles according to package directions, drain and set aside.',
          'Brown ground beef with minced garlic in a skillet. Drain fat and stir in tomato sauce. Simmer for 10 minutes.',
          'In a bowl, mix ricotta cheese, egg, salt, pepper, and Parmesan cheese.',
          'In a 9x13 baking dish, spread a thin layer of meat sauce.',
          'Layer noodles, ricotta mixture, mozzarella, and meat sauce. Repeat.',
          'Top with remaining mozzarella cheese.',
          'Cover with foil and bake for 25 minutes.',
          'Remove foil and bake for another 25 minutes until golden.',
          'Let stand for 15 minutes before serving.',
        ],
      },
    })
    expect(message.usage).toEqual({
      inputTokens: 31,
      outputTokens: 1710,
      reasoningTokens: 1026,
      totalTokens: 1741,
    })
  })
})

describe('google quirks (Kode fixtures)', () => {
  test('signatures on a thought, on text and on the first call each follow the part they sign', async () => {
    const message = await gemini('kode-thought-signatures', 'gemini-2.5-pro').complete(ask())
    expect(message).toEqual({
      role: 'assistant',
      ...stamps,
      model: 'gemini-2.5-pro',
      parts: [
        { type: 'thinking_text', text: '**Planning**\n\nI should read both files.' },
        sig('c2lnLXRob3VnaHQ=', 'gemini-2.5-pro'),
        { type: 'text', text: 'Let me look.' },
        sig('c2lnLXRleHQ=', 'gemini-2.5-pro'),
        { type: 'tool_call', id: 'call_kode-sig-1_0', name: 'read_file', argumentsJson: '{"path":"a.txt"}' },
        sig('c2lnLWNhbGw=', 'gemini-2.5-pro'),
        { type: 'tool_call', id: 'call_kode-sig-1_1', name: 'read_file', argumentsJson: '{"path":"b.txt"}' },
      ],
      // input includes the 100 cached tokens; output = 30 candidates + 50 thoughts
      usage: {
        inputTokens: 120,
        outputTokens: 80,
        cacheReadTokens: 100,
        reasoningTokens: 50,
        totalTokens: 200,
      },
      stopReason: 'tool_use',
      rawStopReason: 'STOP',
      responseId: 'kode-sig-1',
      costUsd: (20 * 1.25 + 100 * 0.125 + 80 * 10) / 1e6,
    })
  })

  test('partialArgs numbers, booleans, null, array items and escaped strings; a call left open at STOP is closed', async () => {
    const message = await gemini('kode-partial-args-types').complete(ask())
    expect(message.parts).toEqual([
      {
        type: 'tool_call',
        id: 'call_kode-pa-1_0',
        name: 'set_light',
        argumentsJson:
          '{"brightness":50,"on":true,"scene":null,"rgb":[255,0.5],"label":"Küche \\"hell\\" — 100%"}',
      },
      sig('c2lnLWxpZ2h0'),
      { type: 'tool_call', id: 'call_kode-pa-1_1', name: 'set_light', argumentsJson: '{"room":"hall"}' },
    ])
    expect(message.usage).toEqual({ inputTokens: 40, outputTokens: 12, totalTokens: 52 })
  })

  test('MAX_TOKENS is length, and a call cut mid-arguments is incomplete', async () => {
    const items = await collect(gemini('kode-max-tokens').stream(ask()))
    expect(items.map((i) => i.type)).toEqual(['text_delta', 'tool_call_start', 'done'])
    expect(doneOf(items)).toMatchObject({
      parts: [
        { type: 'text', text: 'Writing the file now.' },
        {
          type: 'tool_call',
          id: 'call_kode-max-1_0',
          name: 'write_file',
          argumentsJson: '',
          incomplete: true,
        },
      ],
      stopReason: 'length',
      rawStopReason: 'MAX_TOKENS',
    })
  })

  test('MAX_TOKENS after a whole call without args: the call is whole, with {} arguments', async () => {
    // Gemini sends a call whole (without `args` when it takes none): the limit cannot have cut it.
    server().enqueue(
      streamOf('google', [
        '{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"list_rooms"}}]},"finishReason":"MAX_TOKENS"}],"responseId":"kode-max-2"}',
      ]),
    )
    const message = await testClient(server(), { api: 'google', model: 'gemini-2.5-flash' }).complete(ask())
    expect(message).toMatchObject({ stopReason: 'length', rawStopReason: 'MAX_TOKENS' })
    expect(message.parts).toEqual([
      { type: 'tool_call', id: 'call_kode-max-2_0', name: 'list_rooms', argumentsJson: '{}' },
    ])
  })

  test('SAFETY keeps the text so far, with no stop reason and the raw value', async () => {
    const message = await gemini('kode-safety').complete(ask())
    expect(message.parts).toEqual([{ type: 'text', text: 'I can describe the' }])
    expect(message.stopReason).toBeUndefined()
    expect(message.rawStopReason).toBe('SAFETY')
    expect(message.usage).toEqual({ inputTokens: 12, outputTokens: 4, totalTokens: 16 })
  })

  test('a blocked prompt ends the response with its block reason; output tokens stay absent', async () => {
    const message = await gemini('kode-prompt-blocked').complete(ask())
    expect(message).toMatchObject({
      parts: [],
      rawStopReason: 'PROHIBITED_CONTENT',
      usage: { inputTokens: 7 },
    })
    expect(message.stopReason).toBeUndefined()
    expect(message.usage).not.toHaveProperty('outputTokens')
  })

  test('an error chunk after output is a retryable ProviderError with the partial message', async () => {
    const client = gemini('kode-in-stream-error')
    const seen: StreamItem[] = []
    const error = await (async () => {
      try {
        for await (const item of client.stream(ask())) seen.push(item)
      } catch (e) {
        return e
      }
    })()
    expect(seen).toEqual([{ type: 'text_delta', text: 'Partial', responseId: 'kode-err-1' }])
    expect(ProviderError.is(error)).toBe(true)
    expect(error).toMatchObject({
      code: 'UNAVAILABLE',
      status: 503,
      retryable: true,
      providerMessage: 'The model is overloaded. Please try again later.',
      partial: { parts: [{ type: 'text', text: 'Partial' }], stopReason: 'error', isApiError: true },
    })
    expect(server().requests).toHaveLength(1)
  })

  test('an attempt whose chunks reported usage before an error chunk hands onRetry what it was billed', async () => {
    server().enqueue(
      streamOf('google', [
        '{"candidates":[{"content":{"role":"model","parts":[{"text":""}]}}],"usageMetadata":{"promptTokenCount":640,"totalTokenCount":640},"modelVersion":"gemini-3-pro-preview","responseId":"kode-busy-1"}',
        '{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}',
      ]),
    )
    const client = gemini('google-text')
    const retries: RetryInfo[] = []
    await client.complete(ask(), { onRetry: (info) => retries.push(info) })
    expect(retries).toHaveLength(1)
    expect(retries[0]!.error).toMatchObject({ code: 'UNAVAILABLE', retryable: true })
    expect(retries[0]!.partial).toMatchObject({
      parts: [],
      stopReason: 'error',
      responseId: 'kode-busy-1',
      usage: { inputTokens: 640 },
    })
  })

  test('code Gemini ran itself and its output are server_tool parts in stream order; a non-object is dropped', async () => {
    const message = await gemini('kode-code-execution', 'gemini-2.5-flash').complete(ask())
    expect(message.parts).toEqual([
      { type: 'text', text: 'Let me compute that.' },
      {
        type: 'server_tool',
        format: 'google',
        block: {
          type: 'executableCode',
          executableCode: { language: 'PYTHON', code: 'print(sum(range(101)))\n' },
        },
      },
      {
        type: 'server_tool',
        format: 'google',
        block: {
          type: 'codeExecutionResult',
          codeExecutionResult: { outcome: 'OUTCOME_OK', output: '5050\n' },
        },
      },
      { type: 'text', text: 'The sum is 5050.' },
    ])
    expect(message.stopReason).toBe('stop')
  })

  test('unknown part kinds are skipped and an unknown finish reason is kept raw only', async () => {
    const message = await gemini('kode-unknown-values').complete(ask())
    expect(message.parts).toEqual([{ type: 'text', text: 'Done.' }])
    expect(message.stopReason).toBeUndefined()
    expect(message.rawStopReason).toBe('SOMETHING_NEW')
  })

  test("Gemini's own call id is kept; without a response id the derived id uses the name", async () => {
    const items = await collect(gemini('kode-call-ids-and-image').stream(ask()))
    const image = { type: 'image_url', url: 'data:image/png;base64,iVBORw0KGgo=' }
    expect(items.slice(0, -1)).toEqual([
      { type: 'text_delta', text: 'Here it is:' },
      { type: 'image_delta', part: image },
      { type: 'tool_call_start', toolCallId: 'fc-7', toolName: 'lookup' },
      { type: 'tool_call_start', toolCallId: 'call_lookup_1', toolName: 'lookup' },
    ])
    expect(doneOf(items).parts).toEqual([
      { type: 'text', text: 'Here it is:' },
      image,
      {
        type: 'tool_call',
        id: 'fc-7',
        name: 'lookup',
        argumentsJson: '{"q":"a"}',
        // Kept apart from Kode's id, so only a call that had a wire id gets one back.
        providerFields: { format: 'google', fields: { id: 'fc-7' } },
      },
      { type: 'tool_call', id: 'call_lookup_1', name: 'lookup', argumentsJson: '{"q":"b"}' },
    ])
  })
})

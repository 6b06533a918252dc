import type { AssistantPart, Message } from '@kode/protocol'
import type { ClientConfig, LLMRequest } from '@kode/providers'
import { describe, expect, test } from 'vitest'
import { fixture, streamOf, testClient, useServer } from '../helpers.js'
import { assistant, call, developer, PNG_DATA_URL, result, system, user } from '../messages.js'

const server = useServer()
const END = streamOf('google', [
  '{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}]}',
])
const MODEL = 'gemini-2.5-pro'
const OWN = { api: 'google', provider: 'google', model: MODEL } as const

async function sent(request: LLMRequest, config: Partial<ClientConfig> = {}) {
  server().enqueue(END)
  await testClient(server(), { api: 'google', model: MODEL, ...config }).complete(request)
  return server().requests.at(-1)!
}
const bodyOf = async (request: LLMRequest, config: Partial<ClientConfig> = {}) =>
  (await sent(request, config)).body as Record<string, unknown>
const contentsOf = async (messages: Message[], config: Partial<ClientConfig> = {}) =>
  (await bodyOf({ messages }, config)).contents as unknown[]
type GoogleTurn = { parts: { functionResponse?: unknown }[] }
const sig = (signature: string, model = MODEL): AssistantPart => ({
  type: 'thinking_signature',
  signature,
  format: 'google',
  model,
})

describe('google request', () => {
  test('posts the exact body with x-goog-api-key to models/<model>:streamGenerateContent?alt=sse', async () => {
    const recorded = await sent({
      system: 'Be brief.',
      messages: [system('Use tools.'), user('Hi')],
      tools: [{ name: 'read', description: 'Read a file', parameters: { type: 'object', properties: {} } }],
      toolChoice: 'auto',
      maxOutputTokens: 100,
      temperature: 0.5,
    })
    expect(recorded.url).toBe(`/models/${MODEL}:streamGenerateContent?alt=sse`)
    expect(recorded.headers['x-goog-api-key']).toBe('sk-test-key-0123456789')
    expect(recorded.headers.authorization).toBeUndefined()
    expect(recorded.body).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
      systemInstruction: { parts: [{ text: 'Be brief.' }, { text: 'Use tools.' }] },
      tools: [
        {
          functionDeclarations: [
            {
              name: 'read',
              description: 'Read a file',
              parametersJsonSchema: { type: 'object', properties: {} },
            },
          ],
        },
      ],
      toolConfig: { functionCallingConfig: { mode: 'AUTO' } },
      generationConfig: { maxOutputTokens: 100, temperature: 0.5 },
    })
  })

  test('a model named by its resource name (models/…, tunedModels/…) is posted to that resource', async () => {
    // What models.list returns, and the only name a tuned model has.
    const urlOf = async (model: string) => (await sent({ messages: [user('Hi')] }, { model })).url
    expect(await urlOf('models/gemini-2.5-flash')).toBe(
      '/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    )
    expect(await urlOf('tunedModels/support-bot-7')).toBe(
      '/tunedModels/support-bot-7:streamGenerateContent?alt=sse',
    )
  })

  test('tool choices map to NONE, ANY, and ANY limited to one function', async () => {
    const tools = [{ name: 'read', description: 'Read', parameters: { type: 'object' } }]
    const configOf = async (toolChoice: LLMRequest['toolChoice']) =>
      (await bodyOf({ messages: [user('Hi')], tools, toolChoice })).toolConfig
    expect(await configOf('none')).toEqual({ functionCallingConfig: { mode: 'NONE' } })
    expect(await configOf('required')).toEqual({ functionCallingConfig: { mode: 'ANY' } })
    expect(await configOf({ name: 'read' })).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['read'] },
    })
  })

  test('AUTO and NONE are not sent without function declarations (the API refuses a toolConfig without them)', async () => {
    expect(await bodyOf({ messages: [user('Hi')], toolChoice: 'none' })).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
    })
    expect(await bodyOf({ messages: [user('Hi')], toolChoice: 'auto' })).not.toHaveProperty('toolConfig')
  })

  describe('reasoning is sized the way the model takes it (catalog reasoningControl)', () => {
    const thinkingOf = async (
      model: string,
      reasoning: LLMRequest['reasoning'],
      config: Partial<ClientConfig> = {},
    ) => {
      const body = await bodyOf({ messages: [user('Hi')], reasoning }, { model, ...config })
      return (body.generationConfig as { thinkingConfig: unknown }).thinkingConfig
    }

    test('Gemini 2.5 takes a thinkingBudget: an effort becomes its budget, never a thinkingLevel', async () => {
      expect(await thinkingOf('gemini-2.5-pro', { effort: 'low' })).toEqual({
        includeThoughts: true,
        thinkingBudget: 4_096,
      })
      expect(await thinkingOf('gemini-2.5-pro', { budgetTokens: 2_048 })).toEqual({
        includeThoughts: true,
        thinkingBudget: 2_048,
      })
    })

    test("Gemini 2.5 budgets are kept within the model's range", async () => {
      expect(await thinkingOf('gemini-2.5-pro', { budgetTokens: 50 })).toMatchObject({ thinkingBudget: 128 })
      expect(await thinkingOf('gemini-2.5-flash', { effort: 'high' })).toMatchObject({
        thinkingBudget: 24_576,
      })
      expect(await thinkingOf('gemini-2.5-flash-lite', { effort: 'minimal' })).toMatchObject({
        thinkingBudget: 1_024,
      })
    })

    test('Gemini 3 Flash takes every effort as its thinkingLevel', async () => {
      for (const effort of ['minimal', 'low', 'medium', 'high'] as const) {
        expect(await thinkingOf('gemini-3-flash-preview', { effort })).toEqual({
          includeThoughts: true,
          thinkingLevel: effort,
        })
      }
    })

    test('Gemini 3 Pro has only low and high: other efforts move up to the next level it has', async () => {
      const levelOf = async (effort: 'minimal' | 'low' | 'medium' | 'high') =>
        ((await thinkingOf('gemini-3-pro-preview', { effort })) as { thinkingLevel: string }).thinkingLevel
      expect([
        await levelOf('minimal'),
        await levelOf('low'),
        await levelOf('medium'),
        await levelOf('high'),
      ]).toEqual(['low', 'low', 'high', 'high'])
    })

    test('a model the catalog does not know: a budget as thinkingBudget, an effort as thinkingLevel', async () => {
      expect(await thinkingOf('gemini-next', { effort: 'medium' })).toEqual({
        includeThoughts: true,
        thinkingLevel: 'medium',
      })
      expect(await thinkingOf('gemini-next', { budgetTokens: 1_000 })).toEqual({
        includeThoughts: true,
        thinkingBudget: 1_000,
      })
    })

    test('a host catalog entry says how its model sizes reasoning', async () => {
      const catalog = {
        'gemini-2.5-custom': { reasoningControl: { type: 'budget', min: 0, max: 8_192 } },
      } as const
      expect(await thinkingOf('gemini-2.5-custom', { effort: 'medium' }, { catalog })).toEqual({
        includeThoughts: true,
        thinkingBudget: 8_192,
      })
    })
  })

  test('tool results are functionResponse parts in one user turn: output, or error when the tool failed', async () => {
    const messages = [
      user('Go'),
      assistant([call('c1', 'read', '{"path":"a"}'), call('c2', 'read', '{"path":"b"}')], OWN),
      { ...result('c1', 'contents of a', [{ type: 'image_url', url: PNG_DATA_URL }]), toolName: 'read' },
      { ...result('c2', 'no such file', [], 'error'), toolName: 'read' },
      developer('Be careful.'),
    ]
    expect((await contentsOf(messages)).slice(2)).toEqual([
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'read', response: { output: 'contents of a' } } },
          { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
          { functionResponse: { name: 'read', response: { error: 'no such file' } } },
          { text: 'Be careful.' },
        ],
      },
    ])
  })

  describe('images a tool returned, on a model that takes them inside its function response', () => {
    const GEMINI_3 = 'gemini-3-flash-preview'
    const OWN_3 = { api: 'google', provider: 'google', model: GEMINI_3 } as const
    /** A result holding a PNG, a JPEG file, a GIF and a page's image, after a call of `shot`. */
    const shot = (own: typeof OWN | typeof OWN_3) => [
      user('Go'),
      assistant([call('c1', 'shot')], own),
      {
        ...result('c1', 'done', [
          { type: 'image_url', url: PNG_DATA_URL },
          { type: 'image_file', path: '/tmp/a.jpg', mimeType: 'image/jpeg' },
          { type: 'image_url', url: 'data:image/gif;base64,R0lGOD==' },
          { type: 'image_url', url: 'https://example.com/shot.webp' },
        ]),
        toolName: 'shot',
      },
    ]
    const readImageFile = async () => new Uint8Array([1, 2, 3])

    test('Gemini 3: inline PNG, JPEG and WebP go in functionResponse.parts, the rest beside it', async () => {
      const recorded = await sent({ messages: shot(OWN_3) }, { model: GEMINI_3, readImageFile })
      expect(recorded.url).toBe(`/models/${GEMINI_3}:streamGenerateContent?alt=sse`)
      expect(recorded.body).toEqual({
        contents: [
          { role: 'user', parts: [{ text: 'Go' }] },
          {
            role: 'model',
            parts: [
              {
                functionCall: { name: 'shot', args: {} },
                thoughtSignature: 'skip_thought_signature_validator',
              },
            ],
          },
          {
            role: 'user',
            parts: [
              {
                functionResponse: {
                  name: 'shot',
                  response: { output: 'done' },
                  parts: [
                    { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
                    { inlineData: { mimeType: 'image/jpeg', data: 'AQID' } },
                  ],
                },
              },
              { inlineData: { mimeType: 'image/gif', data: 'R0lGOD==' } },
              { fileData: { fileUri: 'https://example.com/shot.webp', mimeType: 'image/webp' } },
            ],
          },
        ],
      })
    })

    test('an older model gets every image beside the function response, as before', async () => {
      expect((await contentsOf(shot(OWN), { readImageFile }))[2]).toEqual({
        role: 'user',
        parts: [
          { functionResponse: { name: 'shot', response: { output: 'done' } } },
          { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
          { inlineData: { mimeType: 'image/jpeg', data: 'AQID' } },
          { inlineData: { mimeType: 'image/gif', data: 'R0lGOD==' } },
          { fileData: { fileUri: 'https://example.com/shot.webp', mimeType: 'image/webp' } },
        ],
      })
    })

    test('a catalog entry says so for a model the catalog does not list', async () => {
      const model = 'gemini-3-pro-image-preview'
      const own = { api: 'google', provider: 'google', model } as const
      const messages = [
        user('Go'),
        assistant([call('c1', 'shot')], own),
        { ...result('c1', 'done', [{ type: 'image_url', url: PNG_DATA_URL }]), toolName: 'shot' },
      ] satisfies Message[]
      const catalog = { [model]: { imagesInToolResults: true } }
      expect((await contentsOf(messages, { model, catalog }))[2]).toEqual({
        role: 'user',
        parts: [
          {
            functionResponse: {
              name: 'shot',
              response: { output: 'done' },
              parts: [{ inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }],
            },
          },
        ],
      })
    })
  })

  describe('function call ids', () => {
    /** A call Gemini gave an id, as the stream leaves it (see events.ts). */
    const googleCall = (id: string, name: string, args = '{}'): AssistantPart => ({
      type: 'tool_call',
      id,
      name,
      argumentsJson: args,
      providerFields: { format: 'google', fields: { id } },
    })

    test("a call's Gemini id goes back on its functionCall and on its functionResponse", async () => {
      const messages = [
        user('Go'),
        assistant([googleCall('fc-1', 'read', '{"path":"a"}')], OWN),
        { ...result('fc-1', 'contents of a'), toolName: 'read' },
      ]
      expect((await contentsOf(messages)).slice(1)).toEqual([
        {
          role: 'model',
          parts: [
            {
              functionCall: { id: 'fc-1', name: 'read', args: { path: 'a' } },
              thoughtSignature: 'skip_thought_signature_validator',
            },
          ],
        },
        {
          role: 'user',
          parts: [{ functionResponse: { id: 'fc-1', name: 'read', response: { output: 'contents of a' } } }],
        },
      ])
    })

    test("a call that had no Gemini id gets none: neither Kode's own id nor another format's", async () => {
      const messages = [
        user('Go'),
        assistant(
          [
            call('call_r1_0', 'read', '{"path":"a"}'),
            {
              type: 'tool_call',
              id: 'toolu_1',
              name: 'read',
              argumentsJson: '{"path":"b"}',
              providerFields: { format: 'anthropic', fields: { id: 'x' } },
            },
          ],
          OWN,
        ),
        { ...result('call_r1_0', 'a'), toolName: 'read' },
        { ...result('toolu_1', 'b'), toolName: 'read' },
      ]
      const [, model, results] = await contentsOf(messages)
      expect(JSON.stringify([model, results])).not.toContain('"id"')
    })

    test("over a session's successive requests, each result gets the id of its own call", async () => {
      const client = testClient(server(), { api: 'google', model: MODEL })
      const history: Message[] = [
        user('Go'),
        assistant([googleCall('fc-1', 'read', '{"path":"a"}')], OWN),
        { ...result('fc-1', 'a'), toolName: 'read' },
      ]
      const responsesOf = async () => {
        server().enqueue(END)
        await client.complete({ messages: history })
        const contents = (server().requests.at(-1)!.body as { contents: GoogleTurn[] }).contents
        return contents.flatMap((turn) =>
          turn.parts.flatMap((p) => (p.functionResponse ? [p.functionResponse] : [])),
        )
      }
      expect(await responsesOf()).toEqual([{ id: 'fc-1', name: 'read', response: { output: 'a' } }])
      history.push(
        assistant([call('c2', 'read', '{"path":"b"}'), googleCall('fc-3', 'read')], OWN),
        { ...result('c2', 'b'), toolName: 'read' },
        { ...result('fc-3', 'c'), toolName: 'read' },
        user('And?'),
        assistant([googleCall('fc-4', 'read')], OWN),
        { ...result('fc-4', 'd'), toolName: 'read' },
      )
      expect(await responsesOf()).toEqual([
        { id: 'fc-1', name: 'read', response: { output: 'a' } },
        { name: 'read', response: { output: 'b' } },
        { id: 'fc-3', name: 'read', response: { output: 'c' } },
        { id: 'fc-4', name: 'read', response: { output: 'd' } },
      ])
    })

    test('a streamed response round-trips: the call Gemini gave an id gets it back, the other none', async () => {
      server().enqueue(streamOf('google', fixture('google', 'kode-call-ids-and-image')))
      const client = testClient(server(), { api: 'google', model: MODEL })
      const reply = await client.complete({ messages: [user('Look up a and b')] })
      const [first, second] = reply.parts.filter((p) => p.type === 'tool_call')
      const history = [
        user('Look up a and b'),
        reply,
        { ...result(first!.id, 'A'), toolName: 'lookup' },
        { ...result(second!.id, 'B'), toolName: 'lookup' },
      ]
      const contents = await contentsOf(history)
      expect(contents[1]).toMatchObject({
        role: 'model',
        parts: [
          { text: 'Here it is:' },
          { inlineData: { mimeType: 'image/png' } },
          { functionCall: { id: 'fc-7', name: 'lookup', args: { q: 'a' } } },
          { functionCall: { name: 'lookup', args: { q: 'b' } } },
        ],
      })
      expect(
        (contents[1] as { parts: { functionCall?: object }[] }).parts[3]!.functionCall,
      ).not.toHaveProperty('id')
      expect(contents[2]).toEqual({
        role: 'user',
        parts: [
          { functionResponse: { id: 'fc-7', name: 'lookup', response: { output: 'A' } } },
          { functionResponse: { name: 'lookup', response: { output: 'B' } } },
        ],
      })
    })
  })

  test('user images: data URLs inline, http URLs as fileData, files read through readImageFile', async () => {
    const messages = [
      user(
        'Look',
        { type: 'image_url', url: PNG_DATA_URL },
        { type: 'image_url', url: 'https://example.com/cat.png' },
        { type: 'image_file', path: '/tmp/dog.png', mimeType: 'image/png' },
      ),
    ]
    const readImageFile = async () => new Uint8Array([1, 2, 3])
    expect(await contentsOf(messages, { readImageFile })).toEqual([
      {
        role: 'user',
        parts: [
          { text: 'Look' },
          { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
          { fileData: { fileUri: 'https://example.com/cat.png', mimeType: 'image/png' } },
          { inlineData: { mimeType: 'image/png', data: 'AQID' } },
        ],
      },
    ])
  })

  test('a data URL with parameters before ;base64 goes as inline data, not as a file URI', async () => {
    const url = 'data:image/png;name=cat.png;base64,iVBORw0KGgo='
    expect(await contentsOf([user({ type: 'image_url', url })])).toEqual([
      { role: 'user', parts: [{ inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }] },
    ])
  })

  test('image/jpg and upper-case types go as the names Gemini takes (it answers 400 to image/jpg)', async () => {
    const readImageFile = async () => Uint8Array.of(255, 216, 255)
    const messages = [
      user(
        { type: 'image_file', path: '/a.jpg', mimeType: 'image/jpg' },
        { type: 'image_url', url: 'data:IMAGE/PNG;base64,iVBORw0KGgo=' },
        { type: 'image_url', url: 'data:image/heic;base64,AAAA' },
      ),
      assistant([call('c1', 'snap')], OWN),
      {
        ...result('c1', 'shot', [{ type: 'image_url', url: 'data:image/JPG;base64,/9j/' }]),
        toolName: 'snap',
      },
    ]
    const contents = (await contentsOf(messages, { readImageFile })) as {
      parts: { inlineData?: { mimeType: string } }[]
    }[]
    const types = contents.flatMap((turn) => turn.parts.flatMap((part) => part.inlineData?.mimeType ?? []))
    // A type Gemini does not take is sent as given: its error names it.
    expect(types).toEqual(['image/jpeg', 'image/png', 'image/heic', 'image/jpeg'])
  })

  test("an http image URL's fileData carries the media type its path's extension names", async () => {
    const cases = {
      'https://example.com/a.png': 'image/png',
      'https://example.com/b.jpg': 'image/jpeg',
      'https://example.com/c.JPEG': 'image/jpeg',
      'https://example.com/d.webp?size=large#top': 'image/webp',
      'http://example.com/e.gif': 'image/gif',
      'https://example.com/photos/f.heic': 'image/heic',
      'https://example.com/g.heif?v=2': 'image/heif',
    }
    const urls = Object.keys(cases)
    const messages = [user(...urls.map((url) => ({ type: 'image_url' as const, url })))]
    expect(await contentsOf(messages)).toEqual([
      {
        role: 'user',
        parts: Object.entries(cases).map(([fileUri, mimeType]) => ({ fileData: { fileUri, mimeType } })),
      },
    ])
  })

  test('a tool result image by http URL carries its media type too', async () => {
    const messages = [
      user('Go'),
      assistant([call('c1', 'shot')], OWN),
      {
        ...result('c1', 'done', [{ type: 'image_url', url: 'https://example.com/shot.webp' }]),
        toolName: 'shot',
      },
    ]
    expect((await contentsOf(messages))[2]).toEqual({
      role: 'user',
      parts: [
        { functionResponse: { name: 'shot', response: { output: 'done' } } },
        { fileData: { fileUri: 'https://example.com/shot.webp', mimeType: 'image/webp' } },
      ],
    })
  })

  test.each([
    'https://example.com/image',
    'https://example.com/scan.tiff',
    'https://example.com/render?format=png',
  ])('an http image URL whose media type cannot be told (%s) goes as fileData without one', async (url) => {
    expect(await contentsOf([user('Look', { type: 'image_url', url })])).toEqual([
      { role: 'user', parts: [{ text: 'Look' }, { fileData: { fileUri: url } }] },
    ])
  })

  test("this model's signatures go back on the very part they came with: thought, text and call", async () => {
    const messages = [
      user('Go'),
      assistant(
        [
          { type: 'thinking_text', text: 'Plan' },
          sig('s-thought'),
          { type: 'text', text: 'Reading.' },
          sig('s-text'),
          call('c1', 'read', '{"path":"a"}'),
          sig('s-call'),
          call('c2', 'read', '{"path":"b"}'),
        ],
        OWN,
      ),
    ]
    expect((await contentsOf(messages))[1]).toEqual({
      role: 'model',
      parts: [
        { text: 'Plan', thought: true, thoughtSignature: 's-thought' },
        { text: 'Reading.', thoughtSignature: 's-text' },
        { functionCall: { name: 'read', args: { path: 'a' } }, thoughtSignature: 's-call' },
        { functionCall: { name: 'read', args: { path: 'b' } } },
      ],
    })
  })

  test('a signed image the model made goes back inline with its signature', async () => {
    const messages = [
      user('Draw'),
      assistant(
        [{ type: 'image_url', url: PNG_DATA_URL }, sig('s-image'), { type: 'text', text: 'Done.' }],
        OWN,
      ),
    ]
    expect((await contentsOf(messages))[1]).toEqual({
      role: 'model',
      parts: [
        { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' }, thoughtSignature: 's-image' },
        { text: 'Done.' },
      ],
    })
  })

  test("another model's thinking becomes text, its signatures are dropped, and its first call gets Google's stand-in signature", async () => {
    const messages = [
      user('Go'),
      assistant(
        [
          { type: 'thinking_text', text: 'Plan' },
          sig('s-other', 'gemini-2.5-flash'),
          { type: 'text', text: 'Reading.' },
          call('toolu_1', 'read', '{"path":"a"}'),
          call('toolu_2', 'read', '{"path":"b"}'),
        ],
        { api: 'anthropic', provider: 'anthropic', model: 'claude-sonnet-4-5' },
      ),
    ]
    expect((await contentsOf(messages))[1]).toEqual({
      role: 'model',
      parts: [
        { text: '<thinking>\nPlan\n</thinking>' },
        { text: 'Reading.' },
        {
          functionCall: { name: 'read', args: { path: 'a' } },
          thoughtSignature: 'skip_thought_signature_validator',
        },
        { functionCall: { name: 'read', args: { path: 'b' } } },
      ],
    })
  })

  test('thinkingAsText: false drops foreign thinking', async () => {
    const messages = [
      user('Go'),
      assistant(
        [
          { type: 'thinking_text', text: 'Plan' },
          { type: 'text', text: 'A' },
        ],
        {
          api: 'openai-chat',
          provider: 'openai-chat',
          model: 'gpt-5',
        },
      ),
    ]
    expect((await contentsOf(messages, { thinkingAsText: false }))[1]).toEqual({
      role: 'model',
      parts: [{ text: 'A' }],
    })
  })

  test('an incomplete call is sent with {} args and answered by a synthetic error response', async () => {
    const messages = [user('Go'), assistant([call('c1', 'write', '{"path": "a', true)], OWN), user('Next')]
    expect((await contentsOf(messages)).slice(1)).toEqual([
      {
        role: 'model',
        parts: [
          {
            functionCall: { name: 'write', args: {} },
            thoughtSignature: 'skip_thought_signature_validator',
          },
        ],
      },
      {
        role: 'user',
        parts: [
          {
            functionResponse: {
              name: 'write',
              response: {
                error:
                  'Error: the arguments of this tool call were cut off before they closed, so it was not run.',
              },
            },
          },
          { text: 'Next' },
        ],
      },
    ])
  })

  test('provider options merge into generationConfig: topP and stopSequences keep the limit, thinking and schema', async () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }
    const body = await bodyOf({
      messages: [user('Hi')],
      maxOutputTokens: 100,
      reasoning: { budgetTokens: 2_048 },
      responseFormat: { type: 'json_schema', name: 'out', schema },
      providerOptions: { google: { generationConfig: { topP: 0.9, stopSequences: ['END'] } } },
    })
    expect(body.generationConfig).toEqual({
      maxOutputTokens: 100,
      thinkingConfig: { includeThoughts: true, thinkingBudget: 2_048 },
      responseMimeType: 'application/json',
      responseJsonSchema: schema,
      topP: 0.9,
      stopSequences: ['END'],
    })
  })

  test('an aborted assistant message with nothing in it is left out', async () => {
    expect(await contentsOf([user('Go'), assistant([]), user('Again')])).toEqual([
      { role: 'user', parts: [{ text: 'Go' }, { text: 'Again' }] },
    ])
  })

  test("Gemini's code execution goes back where it was, with its signature; another format's server tool is left out", async () => {
    const code = { language: 'PYTHON', code: 'print(2 + 2)' }
    const output = { outcome: 'OUTCOME_OK', output: '4\n' }
    const contents = await contentsOf([
      user('What is 2 + 2?'),
      assistant(
        [
          { type: 'text', text: 'Computing.' },
          { type: 'server_tool', format: 'google', block: { type: 'executableCode', executableCode: code } },
          sig('c2lnLWNvZGU='),
          {
            type: 'server_tool',
            format: 'google',
            block: { type: 'codeExecutionResult', codeExecutionResult: output },
          },
          {
            type: 'server_tool',
            format: 'anthropic',
            block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} },
          },
          { type: 'server_tool', format: 'google', block: { type: 'somethingNew', value: 1 } },
          { type: 'text', text: 'It is 4.' },
        ],
        OWN,
      ),
      user('Thanks'),
    ])
    expect(contents).toEqual([
      { role: 'user', parts: [{ text: 'What is 2 + 2?' }] },
      {
        role: 'model',
        parts: [
          { text: 'Computing.' },
          { executableCode: code, thoughtSignature: 'c2lnLWNvZGU=' },
          { codeExecutionResult: output },
          { text: 'It is 4.' },
        ],
      },
      { role: 'user', parts: [{ text: 'Thanks' }] },
    ])
  })
})

import type { AssistantPart, Message } from '@kode/protocol'
import type { ClientConfig, LLMRequest } from '@kode/providers'
import { describe, expect, test } from 'vitest'
import { streamOf, testClient, useServer } from '../helpers.js'
import { assistant, call, developer, PNG_DATA_URL, result, system, user } from '../messages.js'

const server = useServer()
const END = streamOf('openai-responses', [
  '{"type":"response.completed","response":{"id":"r","status":"completed","output":[]}}',
])
const MODEL = 'gpt-5.1'
const OWN = { api: 'openai-responses', provider: 'openai-responses', model: MODEL } as const

async function sent(request: LLMRequest, config: Partial<ClientConfig> = {}) {
  server().enqueue(END)
  await testClient(server(), { api: 'openai-responses', model: MODEL, ...config }).complete(request)
  return server().requests.at(-1)!
}
const bodyOf = async (request: LLMRequest, config: Partial<ClientConfig> = {}) =>
  (await sent(request, config)).body as Record<string, unknown>
const inputOf = async (messages: Message[], config: Partial<ClientConfig> = {}) =>
  (await bodyOf({ messages }, config)).input as unknown[]
const encrypted = (signature: string, itemId: string, model = MODEL): AssistantPart => ({
  type: 'thinking_signature',
  signature,
  format: 'openai-responses',
  model,
  itemId,
})
const userText = (text: string) => ({ role: 'user', content: [{ type: 'input_text', text }] })

describe('openai-responses request', () => {
  test('posts the exact stateless body with bearer auth to /responses', async () => {
    const recorded = await sent({
      system: 'Be brief.',
      messages: [system('Use tools.'), user('Hi')],
      tools: [{ name: 'read', description: 'Read a file', parameters: { type: 'object', properties: {} } }],
      toolChoice: { name: 'read' },
      maxOutputTokens: 100,
      temperature: 0.2,
    })
    expect(recorded.url).toBe('/responses')
    expect(recorded.headers.authorization).toBe('Bearer sk-test-key-0123456789')
    expect(recorded.body).toEqual({
      model: MODEL,
      input: [userText('Hi')],
      stream: true,
      store: false,
      include: ['reasoning.encrypted_content'],
      instructions: 'Be brief.\n\nUse tools.',
      max_output_tokens: 100,
      temperature: 0.2,
      tools: [
        {
          type: 'function',
          name: 'read',
          description: 'Read a file',
          parameters: { type: 'object', properties: {} },
          strict: false,
        },
      ],
      tool_choice: { type: 'function', name: 'read' },
    })
  })

  test('auto and none are not sent without tools (the API refuses a tool_choice without tools)', async () => {
    expect(await bodyOf({ messages: [user('Hi')], toolChoice: 'none' })).toEqual({
      model: MODEL,
      input: [userText('Hi')],
      stream: true,
      store: false,
      include: ['reasoning.encrypted_content'],
    })
    expect(await bodyOf({ messages: [user('Hi')], toolChoice: 'auto' })).not.toHaveProperty('tool_choice')
  })

  test('a model the catalog says does not reason is not asked for encrypted reasoning (the API refuses it)', async () => {
    expect(await bodyOf({ messages: [user('Hi')] }, { model: 'gpt-4.1' })).toEqual({
      model: 'gpt-4.1',
      input: [userText('Hi')],
      stream: true,
      store: false,
    })
    // A reasoning model, and one the catalog does not know, are asked for it; the host's list wins.
    expect((await bodyOf({ messages: [user('Hi')] })).include).toEqual(['reasoning.encrypted_content'])
    expect((await bodyOf({ messages: [user('Hi')] }, { model: 'my-proxy-model' })).include).toEqual([
      'reasoning.encrypted_content',
    ])
    const chosen = await bodyOf(
      { messages: [user('Hi')] },
      { model: 'gpt-4.1', apiOptions: { 'openai-responses': { include: ['message.output_text.logprobs'] } } },
    )
    expect(chosen.include).toEqual(['message.output_text.logprobs'])
  })

  test('a model the catalog says refuses a temperature is sent none (the API answers it with a 400)', async () => {
    const hot = { messages: [user('Hi')], temperature: 0.2 }
    // o3 and gpt-5 sample at their own temperature only.
    expect(await bodyOf(hot, { model: 'o3' })).toEqual({
      model: 'o3',
      input: [userText('Hi')],
      stream: true,
      store: false,
      include: ['reasoning.encrypted_content'],
    })
    expect(await bodyOf(hot, { model: 'gpt-5-mini' })).not.toHaveProperty('temperature')
    // gpt-5.1 takes one only while it does not reason (its default).
    expect((await bodyOf(hot)).temperature).toBe(0.2)
    const reasoning = await bodyOf({ ...hot, reasoning: { effort: 'low' } })
    expect(reasoning).not.toHaveProperty('temperature')
    expect(reasoning.reasoning).toEqual({ effort: 'low', summary: 'auto' })
    // Models the catalog does not know, or knows to take one, get it as set; a host entry can say otherwise.
    expect((await bodyOf(hot, { model: 'gpt-4.1' })).temperature).toBe(0.2)
    expect((await bodyOf(hot, { model: 'my-proxy-model' })).temperature).toBe(0.2)
    const own = { 'my-reasoner': { reasoning: true, fixedTemperature: 'always' as const } }
    expect(await bodyOf(hot, { model: 'my-reasoner', catalog: own })).not.toHaveProperty('temperature')
  })

  test('provider options merge into nested objects: text.verbosity keeps the format, reasoning.summary the effort', async () => {
    const schema = { type: 'object', properties: {}, required: [], additionalProperties: false }
    const body = await bodyOf({
      messages: [user('Hi')],
      reasoning: { effort: 'high' },
      responseFormat: { type: 'json_schema', name: 'out', schema, strict: true },
      providerOptions: {
        'openai-responses': { text: { verbosity: 'low' }, reasoning: { summary: 'detailed' }, include: [] },
      },
    })
    expect(body.text).toEqual({
      format: { type: 'json_schema', name: 'out', schema, strict: true },
      verbosity: 'low',
    })
    expect(body.reasoning).toEqual({ effort: 'high', summary: 'detailed' })
    // Arrays and other values replace the adapter's.
    expect(body.include).toEqual([])
  })

  test('max_output_tokens below the API minimum of 16 is raised to 16 (the API answers 400)', async () => {
    expect((await bodyOf({ messages: [user('Hi')], maxOutputTokens: 1 })).max_output_tokens).toBe(16)
    expect((await bodyOf({ messages: [user('Hi')], maxOutputTokens: 16 })).max_output_tokens).toBe(16)
    expect((await bodyOf({ messages: [user('Hi')], maxOutputTokens: 500 })).max_output_tokens).toBe(500)
  })

  test('store and include are configurable; an empty include is left out', async () => {
    const body = await bodyOf(
      { messages: [user('Hi')], toolChoice: 'required' },
      { store: true, include: [] },
    )
    expect(body).toMatchObject({ store: true, tool_choice: 'required' })
    expect(body).not.toHaveProperty('include')
  })

  test('reasoning asks for an effort and summaries; a budget alone means medium', async () => {
    expect((await bodyOf({ messages: [user('Hi')], reasoning: { effort: 'high' } })).reasoning).toEqual({
      effort: 'high',
      summary: 'auto',
    })
    expect((await bodyOf({ messages: [user('Hi')], reasoning: { budgetTokens: 500 } })).reasoning).toEqual({
      effort: 'medium',
      summary: 'auto',
    })
  })

  test("this model's output goes back as ordered reasoning, message and function_call items with their ids", async () => {
    const messages = [
      user('Go'),
      assistant(
        [
          { type: 'thinking_text', text: 'First' },
          { type: 'thinking_text', text: 'Second' },
          encrypted('enc-1', 'rs_1'),
          { type: 'text', text: 'Looking.', itemId: 'msg_1', phase: 'commentary' },
          { ...call('call_1', 'search', '{"q":"x"}'), itemId: 'fc_1' } as AssistantPart,
          encrypted('enc-2', 'rs_2'),
        ],
        OWN,
      ),
      result('call_1', 'found'),
    ]
    expect((await inputOf(messages)).slice(1)).toEqual([
      {
        type: 'reasoning',
        id: 'rs_1',
        summary: [
          { type: 'summary_text', text: 'First' },
          { type: 'summary_text', text: 'Second' },
        ],
        encrypted_content: 'enc-1',
      },
      {
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Looking.' }],
        id: 'msg_1',
        phase: 'commentary',
      },
      { type: 'function_call', call_id: 'call_1', name: 'search', arguments: '{"q":"x"}', id: 'fc_1' },
      // rs_2 had no item after it in its response: left out (see the tests below).
      { type: 'function_call_output', call_id: 'call_1', output: 'found' },
    ])
  })

  describe('a reasoning item with no output item after it in its response', () => {
    test('a response cut off right after its reasoning sends none of it back', async () => {
      const messages = [
        user('Go'),
        {
          ...assistant([{ type: 'thinking_text', text: 'Plan' }, encrypted('enc-1', 'rs_1')], OWN),
          stopReason: 'aborted' as const,
        },
        user('Go on'),
      ]
      expect(await inputOf(messages)).toEqual([userText('Go'), userText('Go on')])
    })

    test('trailing reasoning items are left out; those before an output item, and the output ids, stay', async () => {
      const messages = [
        user('Go'),
        assistant(
          [
            encrypted('enc-1', 'rs_1'),
            { type: 'text', text: 'Looking.', itemId: 'msg_1', phase: 'commentary' },
            { type: 'thinking_text', text: 'Next' },
            encrypted('enc-2', 'rs_2'),
            encrypted('enc-3', 'rs_3'),
          ],
          OWN,
        ),
        user('And?'),
      ]
      expect((await inputOf(messages)).slice(1)).toEqual([
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'enc-1' },
        {
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Looking.' }],
          id: 'msg_1',
          phase: 'commentary',
        },
        userText('And?'),
      ])
    })

    test('reasoning followed only by reasoning rendered as text is left out too', async () => {
      const messages = [
        user('Go'),
        assistant(
          [
            { type: 'text', text: 'Looking.', itemId: 'msg_1' },
            encrypted('enc-2', 'rs_2'),
            { type: 'thinking_text', text: 'Cut' },
          ],
          OWN,
        ),
      ]
      const input = await inputOf(messages)
      expect(input.filter((item) => (item as { type?: string }).type === 'reasoning')).toEqual([])
      expect(input.at(-1)).toEqual({
        role: 'assistant',
        content: [{ type: 'output_text', text: '<thinking>\nCut\n</thinking>' }],
      })
    })
  })

  test('own reasoning whose encrypted content never arrived becomes text, and item ids are left out', async () => {
    const messages = [
      user('Go'),
      assistant(
        [
          { type: 'thinking_text', text: 'Hmm' },
          { type: 'text', text: 'Done.', itemId: 'msg_1', phase: 'final_answer' },
        ],
        OWN,
      ),
    ]
    expect((await inputOf(messages)).slice(1)).toEqual([
      { role: 'assistant', content: [{ type: 'output_text', text: '<thinking>\nHmm\n</thinking>' }] },
      { role: 'assistant', content: [{ type: 'output_text', text: 'Done.' }], phase: 'final_answer' },
    ])
  })

  test("another model's output: thinking as text, signatures and ids dropped, call ids cut to 64", async () => {
    const long = `toolu_${'b'.repeat(70)}`
    const messages = [
      user('Go'),
      assistant(
        [
          { type: 'thinking_text', text: 'Plan' },
          { type: 'thinking_signature', signature: 'sig', format: 'anthropic', model: 'claude-sonnet-4-5' },
          encrypted('enc', 'rs_x', 'gpt-5'),
          { type: 'text', text: 'Calling.', itemId: 'msg_x', phase: 'commentary' },
          { ...call(long, 'read'), itemId: 'fc_x' } as AssistantPart,
        ],
        { api: 'anthropic', provider: 'anthropic', model: 'claude-sonnet-4-5' },
      ),
      result(long, 'ok'),
    ]
    const input = (await inputOf(messages)) as Record<string, unknown>[]
    const callId = input[3]!.call_id as string
    expect(callId).toHaveLength(64)
    expect(input.slice(1)).toEqual([
      { role: 'assistant', content: [{ type: 'output_text', text: '<thinking>\nPlan\n</thinking>' }] },
      { role: 'assistant', content: [{ type: 'output_text', text: 'Calling.' }] },
      { type: 'function_call', call_id: callId, name: 'read', arguments: '{}' },
      { type: 'function_call_output', call_id: callId, output: 'ok' },
    ])
  })

  test("images go as input_image with detail 'auto', the API's default, which strict servers (vLLM) require", async () => {
    expect(await inputOf([user('Look', { type: 'image_url', url: PNG_DATA_URL })])).toEqual([
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'Look' },
          { type: 'input_image', image_url: PNG_DATA_URL, detail: 'auto' },
        ],
      },
    ])
  })

  test('tool output takes appended developer text; tool and developer images follow the outputs', async () => {
    const messages = [
      user('Go'),
      assistant([call('c1', 'shot'), call('c2', 'shot')], OWN),
      result('c1', 'one', [{ type: 'image_url', url: PNG_DATA_URL }]),
      result('c2', 'two'),
      developer('Note this.', { type: 'image_url', url: 'https://example.com/x.png' }),
      user('Next'),
    ]
    expect((await inputOf(messages)).slice(3)).toEqual([
      { type: 'function_call_output', call_id: 'c1', output: 'one' },
      { type: 'function_call_output', call_id: 'c2', output: 'two\n\nNote this.' },
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'Images returned by tool tool (c1):' },
          { type: 'input_image', image_url: PNG_DATA_URL, detail: 'auto' },
          { type: 'input_image', image_url: 'https://example.com/x.png', detail: 'auto' },
        ],
      },
      userText('Next'),
    ])
  })

  test('a developer message is appended to the preceding user message', async () => {
    expect(await inputOf([user('Hi'), developer('Be nice.')])).toEqual([
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'Hi' },
          { type: 'input_text', text: 'Be nice.' },
        ],
      },
    ])
  })

  test('an incomplete call is sent with {} arguments and a synthetic error output', async () => {
    const messages = [user('Go'), assistant([call('c1', 'write', '{"pa', true)], OWN)]
    expect((await inputOf(messages)).slice(1)).toEqual([
      { type: 'function_call', call_id: 'c1', name: 'write', arguments: '{}' },
      {
        type: 'function_call_output',
        call_id: 'c1',
        output: 'Error: the arguments of this tool call were cut off before they closed, so it was not run.',
      },
    ])
  })
})

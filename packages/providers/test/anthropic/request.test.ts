import type { AssistantPart, Message } from '@kode/protocol'
import type { ClientConfig, LLMRequest } from '@kode/providers'
import { describe, expect, test } from 'vitest'
import { streamOf, testClient, useServer } from '../helpers.js'
import { assistant, call, developer, PNG_DATA_URL, result, system, user } from '../messages.js'

const server = useServer()
const END = streamOf('anthropic', [
  '{"type":"message_start","message":{"id":"m","usage":{"input_tokens":1,"output_tokens":1}}}',
  '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}',
  '{"type":"message_stop"}',
])
const MODEL = 'claude-sonnet-4-5'

async function sent(request: LLMRequest, config: Partial<ClientConfig> = {}) {
  server().enqueue(END)
  await testClient(server(), { api: 'anthropic', model: MODEL, ...config }).complete(request)
  return server().requests.at(-1)!
}
const bodyOf = async (request: LLMRequest, config: Partial<ClientConfig> = {}) =>
  (await sent(request, config)).body as Record<string, unknown>
const messagesOf = async (messages: Message[], config: Partial<ClientConfig> = {}) =>
  (await bodyOf({ messages }, { cacheControl: false, ...config })).messages as unknown[]
const text = (t: string) => ({ type: 'text', text: t })

describe('anthropic request', () => {
  test('posts the exact body with x-api-key and anthropic-version to /messages', async () => {
    const recorded = await sent({
      system: 'Be brief.',
      messages: [user('Hi')],
      tools: [{ name: 'read_file', description: 'Read a file', parameters: { type: 'object' } }],
      toolChoice: 'required',
      temperature: 0.5,
    })
    expect(recorded.url).toBe('/messages')
    expect(recorded.headers).toMatchObject({
      'x-api-key': 'sk-test-key-0123456789',
      'anthropic-version': '2023-06-01',
      'content-type': 'application/json',
    })
    expect(recorded.headers.authorization).toBeUndefined()
    expect(recorded.body).toEqual({
      model: MODEL,
      max_tokens: 64_000,
      stream: true,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral' } }] },
      ],
      tools: [
        {
          name: 'read_file',
          description: 'Read a file',
          input_schema: { type: 'object' },
          cache_control: { type: 'ephemeral' },
        },
      ],
      tool_choice: { type: 'any' },
      temperature: 0.5,
    })
  })

  test('cache breakpoints go on the last user turn only, with the configured ttl', async () => {
    const body = await bodyOf(
      { messages: [user('One'), assistant([{ type: 'text', text: 'Two' }]), user('Three')] },
      { cacheControl: { ttl: '1h' } },
    )
    expect(body.messages).toEqual([
      { role: 'user', content: [text('One')] },
      { role: 'assistant', content: [text('Two')] },
      {
        role: 'user',
        content: [{ type: 'text', text: 'Three', cache_control: { type: 'ephemeral', ttl: '1h' } }],
      },
    ])
  })

  test('a cache breakpoint never leaks into the cached conversion of a message', async () => {
    const first = user('One')
    const client = testClient(server(), { api: 'anthropic', model: MODEL })
    server().enqueue(END, END)
    await client.complete({ messages: [first] })
    await client.complete({ messages: [first, assistant([{ type: 'text', text: 'Two' }]), user('Three')] })
    expect((server().requests[1]!.body as { messages: unknown[] }).messages[0]).toEqual({
      role: 'user',
      content: [text('One')],
    })
  })

  test('a temperature above 1, which Anthropic refuses with a 400, is sent as 1', async () => {
    expect((await bodyOf({ messages: [user('Q')], temperature: 1.7 })).temperature).toBe(1)
    expect((await bodyOf({ messages: [user('Q')], temperature: 0.3 })).temperature).toBe(0.3)
  })

  test('reasoning becomes a thinking budget below max_tokens, and temperature is left out', async () => {
    expect(
      await bodyOf({
        messages: [user('Q')],
        reasoning: { effort: 'high' },
        temperature: 1,
        maxOutputTokens: 8_000,
      }),
    ).toMatchObject({
      max_tokens: 8_000,
      thinking: { type: 'enabled', budget_tokens: 7_999 },
    })
    const low = await bodyOf({ messages: [user('Q')], reasoning: { budgetTokens: 2_000 }, temperature: 1 })
    expect(low.thinking).toEqual({ type: 'enabled', budget_tokens: 2_000 })
    expect(low.temperature).toBeUndefined()
    expect(
      (await bodyOf({ messages: [user('Q')], reasoning: { effort: 'low' }, maxOutputTokens: 500 })).thinking,
    ).toBeUndefined()
  })

  test('thinking is left off while a tool loop continues whose assistant turn has no thinking to start it', async () => {
    const signed: AssistantPart = {
      type: 'thinking_signature',
      signature: 'sig',
      format: 'anthropic',
      model: MODEL,
    }
    const foreign = { api: 'openai-responses', provider: 'openai-responses', model: 'gpt-5.1' }
    const request = (messages: Message[]): LLMRequest => ({
      messages,
      reasoning: { budgetTokens: 2_000 },
      temperature: 1,
    })
    // Another model's call, being answered now: Anthropic requires a thinking block first, so no thinking.
    const switched = await bodyOf(
      request([
        user('Go'),
        assistant([{ type: 'text', text: 'Reading.' }, call('c1', 'read')], foreign),
        result('c1', 'ok'),
      ]),
    )
    expect(switched.thinking).toBeUndefined()
    expect(switched.temperature).toBe(1)
    // This model's own signed thinking starts the turn: thinking stays on.
    const own = await bodyOf(
      request([
        user('Go'),
        assistant([{ type: 'thinking_text', text: 'Plan' }, signed, call('t1', 'read')], {
          api: 'anthropic',
          provider: 'anthropic',
          model: MODEL,
        }),
        result('t1', 'ok'),
      ]),
    )
    expect(own.thinking).toEqual({ type: 'enabled', budget_tokens: 2_000 })
    // A finished loop (the last assistant turn called no tool) does not need thinking back.
    const finished = await bodyOf(
      request([
        user('Go'),
        assistant([call('c1', 'read')], foreign),
        result('c1', 'ok'),
        assistant([{ type: 'text', text: 'Done.' }], foreign),
        user('More'),
      ]),
    )
    expect(finished.thinking).toEqual({ type: 'enabled', budget_tokens: 2_000 })
  })

  test('a tool choice that forces a call leaves thinking off (Anthropic allows only auto and none with it)', async () => {
    const reasoning = { budgetTokens: 2_000 }
    const required = await bodyOf({ messages: [user('Q')], reasoning, toolChoice: 'required' })
    expect(required.tool_choice).toEqual({ type: 'any' })
    expect(required.thinking).toBeUndefined()
    const named = await bodyOf({ messages: [user('Q')], reasoning, toolChoice: { name: 'x' } })
    expect(named.tool_choice).toEqual({ type: 'tool', name: 'x' })
    expect(named.thinking).toBeUndefined()
    const auto = await bodyOf({ messages: [user('Q')], reasoning, toolChoice: 'auto' })
    expect(auto.thinking).toEqual({ type: 'enabled', budget_tokens: 2_000 })
  })

  test('tool choices map to auto, none and a named tool', async () => {
    const tools = [{ name: 'x', description: 'X', parameters: { type: 'object' } }]
    expect((await bodyOf({ messages: [user('Q')], tools, toolChoice: 'auto' })).tool_choice).toEqual({
      type: 'auto',
    })
    expect((await bodyOf({ messages: [user('Q')], tools, toolChoice: 'none' })).tool_choice).toEqual({
      type: 'none',
    })
    expect((await bodyOf({ messages: [user('Q')], tools, toolChoice: { name: 'x' } })).tool_choice).toEqual({
      type: 'tool',
      name: 'x',
    })
  })

  test('auto and none are not sent without tools (the API refuses a tool_choice without tools)', async () => {
    const none = await bodyOf({ messages: [user('Q')], toolChoice: 'none' }, { cacheControl: false })
    expect(none).toEqual({
      model: MODEL,
      max_tokens: 64_000,
      stream: true,
      messages: [{ role: 'user', content: [text('Q')] }],
    })
    expect(await bodyOf({ messages: [user('Q')], toolChoice: 'auto' })).not.toHaveProperty('tool_choice')
    // A structured answer declares its own tool: the choice goes with it.
    const format = { type: 'json_schema' as const, name: 'a', schema: { type: 'object' } }
    const withFormat = await bodyOf({ messages: [user('Q')], toolChoice: 'none', responseFormat: format })
    expect(withFormat.tool_choice).toEqual({ type: 'none' })
  })

  test('a history with tool calls but no tools declared names them as tools it may not call', async () => {
    // The API refuses tool_use and tool_result blocks in a request that declares no tools ("Requests
    // which include tool_use or tool_result blocks must define tools"): an agent whose tools were
    // taken away, or complete() over a tool history.
    const messages = [
      user('Go'),
      assistant([call('t1', 'shot', '{"x":1}'), call('t2', 'read'), call('t3', 'shot')]),
      result('t1', 'done'),
      result('t2', 'read it'),
      result('t3', 'again'),
      user('Now sum it up'),
    ]
    const body = await bodyOf({ messages }, { cacheControl: false })
    const placeholder = (name: string) => ({
      name,
      description: 'Called earlier in this conversation; not available now.',
      input_schema: { type: 'object' },
    })
    expect(body.tools).toEqual([placeholder('shot'), placeholder('read')])
    expect(body.tool_choice).toEqual({ type: 'none' })
    // A choice that forces a call is the host's to fix: it goes as set, with no tools to force.
    const forced = await bodyOf({ messages, toolChoice: 'required' }, { cacheControl: false })
    expect(forced).not.toHaveProperty('tools')
    expect(forced.tool_choice).toEqual({ type: 'any' })
    // Declared tools, or no tool blocks: nothing is added.
    const tools = [{ name: 'x', description: 'X', parameters: { type: 'object' } }]
    const declared = await bodyOf({ messages, tools }, { cacheControl: false })
    expect(declared.tools).toEqual([{ name: 'x', description: 'X', input_schema: { type: 'object' } }])
    expect(declared).not.toHaveProperty('tool_choice')
    expect(await bodyOf({ messages: [user('Q')] })).not.toHaveProperty('tools')
  })

  test('system messages join the system prompt', async () => {
    const body = await bodyOf({ system: 'A', messages: [system('B'), user('Hi')] }, { cacheControl: false })
    expect(body.system).toEqual([text('A'), text('B')])
  })

  test('a whitespace-only system prompt is not sent', async () => {
    const body = await bodyOf({ system: '\n', messages: [system(' '), user('Hi')] }, { cacheControl: false })
    expect(body).not.toHaveProperty('system')
  })

  test('tool results become tool_result blocks in one user turn, with the developer message after them', async () => {
    const image = { type: 'image_url' as const, url: PNG_DATA_URL }
    const messages = [
      user('Go'),
      assistant([call('t1', 'shot', '{"x":1}'), call('t2', 'read')]),
      result('t1', 'done', [image]),
      result('t2', 'failed', [], 'error'),
      developer('Remember the rules.'),
    ]
    expect((await messagesOf(messages)).slice(1)).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 't1', name: 'shot', input: { x: 1 } },
          { type: 'tool_use', id: 't2', name: 'read', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 't1',
            content: [
              text('done'),
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            ],
          },
          { type: 'tool_result', tool_use_id: 't2', content: [text('failed')], is_error: true },
          text('Remember the rules.'),
        ],
      },
    ])
  })

  test('a developer message is appended to the preceding user message', async () => {
    expect(
      await messagesOf([
        user('Question'),
        developer('Reminder', { type: 'image_url', url: 'https://x/y.png' }),
      ]),
    ).toEqual([
      {
        role: 'user',
        content: [
          text('Question'),
          text('Reminder'),
          { type: 'image', source: { type: 'url', url: 'https://x/y.png' } },
        ],
      },
    ])
  })

  test('image files are read and sent as base64', async () => {
    const readImageFile = async () => Uint8Array.of(255, 216, 255)
    expect(
      await messagesOf([user({ type: 'image_file', path: '/a.jpg', mimeType: 'image/jpeg' })], {
        readImageFile,
      }),
    ).toEqual([
      {
        role: 'user',
        content: [{ type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/' } }],
      },
    ])
  })

  test('a data URL with parameters before ;base64 is sent as base64, not as a URL the API refuses', async () => {
    const url = 'data:image/png;name=cat.png;charset=binary;base64,iVBORw0KGgo='
    expect(await messagesOf([user({ type: 'image_url', url })])).toEqual([
      {
        role: 'user',
        content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
        ],
      },
    ])
  })

  test("image/jpg and upper-case types go as the API's own names (it takes only four, lower-case)", async () => {
    const readImageFile = async () => Uint8Array.of(255, 216, 255)
    const content = (await messagesOf(
      [
        user(
          { type: 'image_file', path: '/a.jpg', mimeType: 'image/jpg' },
          { type: 'image_url', url: 'data:IMAGE/PNG;base64,iVBORw0KGgo=' },
          { type: 'image_url', url: 'data:image/heic;base64,AAAA' },
        ),
      ],
      { readImageFile },
    )) as { content: { source: { media_type: string } }[] }[]
    // A type the API does not take is sent as given: its error names it.
    expect(content[0]!.content.map((block) => block.source.media_type)).toEqual([
      'image/jpeg',
      'image/png',
      'image/heic',
    ])
  })

  test('signed and redacted thinking go back unchanged to the model that signed them', async () => {
    const own = { api: 'anthropic', provider: 'anthropic', model: MODEL }
    const messages = [
      user('Q'),
      assistant(
        [
          {
            type: 'thinking_signature',
            signature: 'opaque',
            format: 'anthropic',
            model: MODEL,
            redacted: true,
          },
          { type: 'thinking_text', text: 'hmm' },
          { type: 'thinking_signature', signature: 'sig', format: 'anthropic', model: MODEL },
          { type: 'text', text: 'A' },
          call('t1', 'x'),
        ],
        own,
      ),
      result('t1', 'ok'),
    ]
    expect((await messagesOf(messages))[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'redacted_thinking', data: 'opaque' },
        { type: 'thinking', thinking: 'hmm', signature: 'sig' },
        text('A'),
        { type: 'tool_use', id: 't1', name: 'x', input: {} },
      ],
    })
  })

  test("another model's thinking becomes text and its signatures are dropped", async () => {
    const other = 'claude-opus-4-5'
    const messages = [
      user('Q'),
      assistant([
        {
          type: 'thinking_signature',
          signature: 'opaque',
          format: 'anthropic',
          model: other,
          redacted: true,
        },
        { type: 'thinking_text', text: 'hmm' },
        { type: 'thinking_signature', signature: 'sig', format: 'anthropic', model: other },
        { type: 'thinking_text', text: 'more' },
        { type: 'thinking_signature', signature: 'g', format: 'google', model: MODEL },
        { type: 'text', text: 'A' },
      ]),
    ]
    expect((await messagesOf(messages))[1]).toEqual({
      role: 'assistant',
      content: [text('<thinking>\nhmm\n</thinking>'), text('<thinking>\nmore\n</thinking>'), text('A')],
    })
  })

  test('thinking whose signature never arrived (aborted) is sent as text', async () => {
    const messages = [user('Q'), assistant([{ type: 'thinking_text', text: 'half a thou' }]), user('Go on')]
    expect((await messagesOf(messages))[1]).toEqual({
      role: 'assistant',
      content: [text('<thinking>\nhalf a thou\n</thinking>')],
    })
  })

  test('an incomplete tool call is sent with {} input and a synthetic error result', async () => {
    const messages = [user('Go'), assistant([call('t1', 'write', '{"path": "a', true)]), user('Next')]
    expect((await messagesOf(messages)).slice(1)).toEqual([
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'write', input: {} }] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 't1',
            content: [
              text(
                'Error: the arguments of this tool call were cut off before they closed, so it was not run.',
              ),
            ],
            is_error: true,
          },
          text('Next'),
        ],
      },
    ])
  })

  test('a foreign tool-call id Anthropic would reject is rewritten, its result identically', async () => {
    const messages = [
      user('Go'),
      assistant([call('functions.read:0', 'read')]),
      result('functions.read:0', 'ok'),
    ]
    const [, turn, results] = (await messagesOf(messages)) as {
      content: { id?: string; tool_use_id?: string }[]
    }[]
    const id = turn!.content[0]!.id!
    expect(id).toMatch(/^functions_read_0_[0-9a-f]{8}$/)
    expect(results!.content[0]!.tool_use_id).toBe(id)
  })

  test('empty text parts are not sent (Anthropic rejects them)', async () => {
    expect(await messagesOf([user('', 'Hi')])).toEqual([{ role: 'user', content: [text('Hi')] }])
  })

  test('whitespace-only text is not sent anywhere: user, assistant or tool result (Anthropic rejects it)', async () => {
    const messages = [
      user('\n', 'Go'),
      assistant([{ type: 'text', text: '\n\n' }, call('t1', 'run')]),
      result('t1', ' \n'),
      developer('\t'),
      user('Next'),
    ]
    expect(await messagesOf(messages)).toEqual([
      { role: 'user', content: [text('Go')] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'run', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1' }, text('Next')] },
    ])
  })
})

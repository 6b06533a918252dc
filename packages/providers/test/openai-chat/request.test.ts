import type { Message } from '@kode/protocol'
import { type ClientConfig, type LLMRequest, ProviderError } from '@kode/providers'
import { describe, expect, test } from 'vitest'
import { ask, fixture, streamOf, testClient, useServer } from '../helpers.js'
import { assistant, call, developer, PNG_DATA_URL, result, system, user } from '../messages.js'

const server = useServer()
const EMPTY = streamOf('openai-chat', [
  '{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
])

async function sent(request: LLMRequest, config: Partial<ClientConfig> = {}) {
  server().enqueue(EMPTY)
  await testClient(server(), { api: 'openai-chat', model: 'gpt-4.1', ...config }).complete(request)
  const recorded = server().requests.at(-1)!
  return recorded
}
const messagesOf = async (messages: Message[], config: Partial<ClientConfig> = {}) =>
  ((await sent({ messages }, config)).body as { messages: unknown[] }).messages

describe('openai-chat request', () => {
  test('posts the exact body with bearer auth to /chat/completions', async () => {
    const recorded = await sent({
      system: 'Be brief.',
      messages: [user('Hi')],
      tools: [
        { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: {} } },
      ],
      toolChoice: { name: 'read_file' },
      maxOutputTokens: 100,
      temperature: 0.2,
      reasoning: { effort: 'low' },
    })
    expect(recorded.method).toBe('POST')
    expect(recorded.url).toBe('/chat/completions')
    expect(recorded.headers).toMatchObject({
      authorization: 'Bearer sk-test-key-0123456789',
      'content-type': 'application/json',
      accept: 'text/event-stream',
    })
    expect(recorded.body).toEqual({
      model: 'gpt-4.1',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
      stream: true,
      stream_options: { include_usage: true },
      max_completion_tokens: 100,
      temperature: 0.2,
      reasoning_effort: 'low',
      tools: [
        {
          type: 'function',
          function: {
            name: 'read_file',
            description: 'Read a file',
            parameters: { type: 'object', properties: {} },
          },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'read_file' } },
    })
  })

  test('auto and none are not sent without tools (the API refuses a tool_choice without tools)', async () => {
    expect((await sent({ messages: [user('Hi')], toolChoice: 'none' })).body).toEqual({
      model: 'gpt-4.1',
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
      stream_options: { include_usage: true },
    })
    expect((await sent({ messages: [user('Hi')], toolChoice: 'auto' })).body).not.toHaveProperty(
      'tool_choice',
    )
  })

  test('a model the catalog says refuses a temperature is sent none (the API answers it with a 400)', async () => {
    const hot = { messages: [user('Hi')], temperature: 0.7 }
    expect((await sent(hot, { model: 'o4-mini' })).body).toEqual({
      model: 'o4-mini',
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
      stream_options: { include_usage: true },
    })
    expect((await sent(hot, { model: 'gpt-5' })).body).not.toHaveProperty('temperature')
    expect((await sent(hot, { model: 'gpt-5.1' })).body).toMatchObject({ temperature: 0.7 })
    const reasoning = (await sent({ ...hot, reasoning: { effort: 'high' } }, { model: 'gpt-5.1' })).body
    expect(reasoning).toMatchObject({ reasoning_effort: 'high' })
    expect(reasoning).not.toHaveProperty('temperature')
    // DeepSeek's reasoner accepts (and ignores) one; models the catalog does not know get it as set.
    expect((await sent(hot, { model: 'deepseek-reasoner' })).body).toMatchObject({ temperature: 0.7 })
    expect((await sent(hot, { model: 'my-model' })).body).toMatchObject({ temperature: 0.7 })
  })

  test('compat options: no include_usage, max_tokens, no auth without a key, host headers win', async () => {
    const recorded = await sent(
      { messages: [user('Hi')], maxOutputTokens: 5 },
      {
        includeUsage: false,
        maxTokensField: 'max_tokens',
        apiKey: undefined,
        headers: { 'api-key': 'azure' },
      },
    )
    expect(recorded.body).toEqual({
      model: 'gpt-4.1',
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
      max_tokens: 5,
    })
    expect(recorded.headers.authorization).toBeUndefined()
    expect(recorded.headers['api-key']).toBe('azure')
  })

  test('baseUrl replaces the api root, trailing slash or not', async () => {
    server().enqueue(EMPTY)
    await testClient(server(), { api: 'openai-chat', model: 'm', baseUrl: `${server().url}/v1/` }).complete({
      messages: [user('Hi')],
    })
    expect(server().requests[0]?.url).toBe('/v1/chat/completions')
  })

  test('system messages join the system prompt after request.system', async () => {
    expect(await messagesOf([system('Persisted prompt.'), user('Hi')])).toEqual([
      { role: 'system', content: 'Persisted prompt.' },
      { role: 'user', content: 'Hi' },
    ])
  })

  test('a developer message is appended to the preceding user message', async () => {
    expect(await messagesOf([user('Question'), developer('Reminder')])).toEqual([
      { role: 'user', content: 'Question\n\nReminder' },
    ])
  })

  test('a developer message is appended to the preceding tool result', async () => {
    const messages = [user('Go'), assistant([call('c1', 'tool')]), result('c1', 'output'), developer('Note')]
    expect((await messagesOf(messages)).slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'c1', content: 'output\n\nNote' },
    ])
  })

  test('a developer message after an assistant message stands as a user message', async () => {
    const messages = [user('Go'), assistant([{ type: 'text', text: 'Done.' }]), developer('Note')]
    expect((await messagesOf(messages)).slice(1)).toEqual([
      { role: 'assistant', content: 'Done.' },
      { role: 'user', content: 'Note' },
    ])
  })

  test('tool text comes from outputText and tool images follow the run of tool messages', async () => {
    const image = { type: 'image_url' as const, url: PNG_DATA_URL }
    const messages = [
      user('Go'),
      assistant([call('c1', 'shot'), call('c2', 'shot')]),
      result('c1', 'first', [image]),
      result('c2', 'second'),
    ]
    expect((await messagesOf(messages)).slice(1)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'shot', arguments: '{}' } },
          { id: 'c2', type: 'function', function: { name: 'shot', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'first' },
      { role: 'tool', tool_call_id: 'c2', content: 'second' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Images returned by tool tool (c1):' },
          { type: 'image_url', image_url: { url: PNG_DATA_URL } },
        ],
      },
    ])
  })

  test('developer images folded into a tool result join the image message after the run', async () => {
    const messages = [
      user('Go'),
      assistant([call('c1', 'shot'), call('c2', 'shot')]),
      result('c1', 'one', [{ type: 'image_url', url: PNG_DATA_URL }]),
      result('c2', 'two'),
      developer('Note this.', { type: 'image_url', url: 'https://example.com/x.png' }),
      user('Next'),
    ]
    expect((await messagesOf(messages)).slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'c1', content: 'one' },
      { role: 'tool', tool_call_id: 'c2', content: 'two\n\nNote this.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Images returned by tool tool (c1):' },
          { type: 'image_url', image_url: { url: PNG_DATA_URL } },
          { type: 'image_url', image_url: { url: 'https://example.com/x.png' } },
        ],
      },
      { role: 'user', content: 'Next' },
    ])
  })

  test('user images: URLs as given, files read through readImageFile as data URLs', async () => {
    const reads: string[] = []
    const readImageFile = async (path: string) => {
      reads.push(path)
      return Uint8Array.of(1, 2, 3)
    }
    const messages = [
      user(
        'Look',
        { type: 'image_url', url: 'https://example.com/a.png' },
        { type: 'image_file', path: '/tmp/b.jpg', mimeType: 'image/jpeg' },
      ),
    ]
    expect(await messagesOf(messages, { readImageFile })).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look' },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
          { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,AQID' } },
        ],
      },
    ])
    expect(reads).toEqual(['/tmp/b.jpg'])
  })

  test('an image file without readImageFile fails before any request is sent', async () => {
    const client = testClient(server(), { api: 'openai-chat', model: 'm' })
    const error = await client
      .complete({ messages: [user({ type: 'image_file', path: '/x.png', mimeType: 'image/png' })] })
      .catch((e: unknown) => e)
    expect(ProviderError.is(error) && error.code).toBe('invalid_request')
    expect((error as ProviderError).retryable).toBe(false)
    expect(server().requests).toHaveLength(0)
  })

  test("this model's own reasoning goes back in reasoning_content", async () => {
    const own = { api: 'openai-chat', provider: 'openai-chat', model: 'gpt-4.1' }
    const messages = [
      user('Q'),
      assistant(
        [
          { type: 'thinking_text', text: 'hmm' },
          { type: 'text', text: 'A' },
        ],
        own,
      ),
    ]
    expect((await messagesOf(messages))[1]).toEqual({
      role: 'assistant',
      content: 'A',
      reasoning_content: 'hmm',
    })
    expect((await messagesOf(messages, { reasoningField: false }))[1]).toEqual({
      role: 'assistant',
      content: 'A',
    })
  })

  test('a response that streamed the reasoning field with nothing in it sends the field back empty', async () => {
    // DeepSeek's thinking mode answers 400 ("Missing `reasoning_content` field") to a history whose
    // tool-calling assistant message lacks the field, also when that message reasoned nothing.
    const client = testClient(server(), { api: 'openai-chat', model: 'deepseek-v4-flash' })
    server().enqueue(streamOf('openai-chat', fixture('openai-chat', 'kode-deepseek-empty-reasoning')))
    const first = ask('Weather in Oslo?')
    const answer = await client.complete(first)
    server().enqueue(EMPTY)
    await client.complete({
      messages: [...first.messages, answer, result('call_00_kodeEmptyReasoning01', '4°C')],
    })
    const body = server().requests.at(-1)!.body as { messages: unknown[] }
    expect(body.messages[1]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: 'call_00_kodeEmptyReasoning01',
          type: 'function',
          function: { name: 'weather', arguments: '{"location": "Oslo"}' },
        },
      ],
      reasoning_content: '',
    })
  })

  test('a response from a server that sent no reasoning field goes back without one', async () => {
    const client = testClient(server(), { api: 'openai-chat', model: 'llama-3.3-70b-versatile' })
    server().enqueue(streamOf('openai-chat', fixture('openai-chat', 'groq-tool-call')))
    const first = ask('Weather?')
    const answer = await client.complete(first)
    server().enqueue(EMPTY)
    const results = answer.parts.flatMap((p) => (p.type === 'tool_call' ? [result(p.id, 'ok')] : []))
    await client.complete({ messages: [...first.messages, answer, ...results] })
    const body = server().requests.at(-1)!.body as { messages: Record<string, unknown>[] }
    expect(body.messages[1]).not.toHaveProperty('reasoning_content')
    expect(Object.keys(body.messages[1]!)).toEqual(['role', 'content', 'tool_calls'])
  })

  test('an assistant message holding only reasoning goes with empty content, not null (null needs tool_calls)', async () => {
    const own = { api: 'openai-chat', provider: 'openai-chat', model: 'gpt-4.1' }
    const messages = [user('Q'), assistant([{ type: 'thinking_text', text: 'hmm' }], own), user('Go on')]
    expect(await messagesOf(messages)).toEqual([
      { role: 'user', content: 'Q' },
      { role: 'assistant', content: '', reasoning_content: 'hmm' },
      { role: 'user', content: 'Go on' },
    ])
    // With tool calls the content stays null, as the API documents.
    const calling = [user('Q'), assistant([{ type: 'thinking_text', text: 'hmm' }, call('c1', 'read')], own)]
    expect((await messagesOf(calling))[1]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{}' } }],
      reasoning_content: 'hmm',
    })
  })

  test("another model's thinking degrades to <thinking> text and its signature is dropped", async () => {
    const foreign = { api: 'anthropic', provider: 'anthropic', model: 'claude-sonnet-4-5' }
    const messages = [
      user('Q'),
      assistant(
        [
          { type: 'thinking_text', text: 'hmm' },
          { type: 'thinking_signature', signature: 'sig', format: 'anthropic', model: 'claude-sonnet-4-5' },
          { type: 'text', text: 'A' },
        ],
        foreign,
      ),
    ]
    expect((await messagesOf(messages))[1]).toEqual({
      role: 'assistant',
      content: '<thinking>\nhmm\n</thinking>\n\nA',
    })
    expect((await messagesOf(messages, { thinkingAsText: (t) => `[${t}]` }))[1]).toEqual({
      role: 'assistant',
      content: '[hmm]\n\nA',
    })
    expect((await messagesOf(messages, { thinkingAsText: false }))[1]).toEqual({
      role: 'assistant',
      content: 'A',
    })
  })

  test('a tool call without a result gets a synthetic error result right after', async () => {
    const messages = [
      user('Go'),
      assistant([call('c1', 'a'), call('c2', 'b')]),
      result('c1', 'ok'),
      user('Next'),
    ]
    expect((await messagesOf(messages)).slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'c1', content: 'ok' },
      {
        role: 'tool',
        tool_call_id: 'c2',
        content: 'Error: this tool call has no result; it was not run or its result was lost.',
      },
      { role: 'user', content: 'Next' },
    ])
  })

  test('an incomplete tool call is sent with {} arguments and a synthetic error result', async () => {
    const messages = [user('Go'), assistant([call('c1', 'a', '{"path":"/et', true)])]
    expect((await messagesOf(messages)).slice(1)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'a', arguments: '{}' } }],
      },
      {
        role: 'tool',
        tool_call_id: 'c1',
        content: 'Error: the arguments of this tool call were cut off before they closed, so it was not run.',
      },
    ])
  })

  test('a tool-call id over 40 characters is cut to fit, its result identically', async () => {
    const long = `toolu_${'a'.repeat(50)}`
    const messages = [user('Go'), assistant([call(long, 'read')]), result(long, 'ok')]
    const [, turn, tool] = (await messagesOf(messages)) as {
      tool_calls?: { id: string }[]
      tool_call_id?: string
    }[]
    const id = turn!.tool_calls![0]!.id
    expect(id).toHaveLength(40)
    expect(tool!.tool_call_id).toBe(id)
  })

  test('an aborted assistant message with nothing in it is left out', async () => {
    const messages = [user('Go'), assistant([]), user('Again')]
    expect(await messagesOf(messages)).toEqual([
      { role: 'user', content: 'Go' },
      { role: 'user', content: 'Again' },
    ])
  })

  test('each message is converted once per client, not on every turn', async () => {
    let reads = 0
    const counted = user('Hi')
    const parts = counted.parts
    Object.defineProperty(counted, 'parts', {
      get: () => {
        reads++
        return parts
      },
    })
    const client = testClient(server(), { api: 'openai-chat', model: 'm' })
    server().enqueue(EMPTY, EMPTY)
    await client.complete({ messages: [counted] })
    const afterFirst = reads
    await client.complete({ messages: [counted, assistant([{ type: 'text', text: 'Hello' }]), user('More')] })
    expect(afterFirst).toBeGreaterThan(0)
    expect(reads).toBe(afterFirst)
    expect((server().requests[1]!.body as { messages: unknown[] }).messages[0]).toEqual({
      role: 'user',
      content: 'Hi',
    })
  })
})

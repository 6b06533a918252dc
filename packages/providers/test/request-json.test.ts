import type { HistoryEvent, Message } from '@kode/protocol'
import type { ClientConfig, LLMClient, LLMRequest } from '@kode/providers'
import { JsonTextCache } from '@kode/providers/adapter'
import { type ScriptedApi, scriptedResponse } from '@kode/providers/testing'
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest'
import { generateSession } from '../../../test/history/generate-session.js'
import { testClient, useServer } from './helpers.js'
import { assistant, call, developer, PNG_DATA_URL, result, system, user } from './messages.js'

// Each client keeps the JSON text of the messages it sent and re-sends it. What goes on the wire
// must stay what `JSON.stringify` of the whole body gave before that: a reference client whose
// cache hands back the plain lists (so the transport serialises the body in one JSON.stringify)
// sends each request too, and the two bodies must match byte for byte.

const server = useServer()

const WIRES: { api: ScriptedApi; model: string }[] = [
  { api: 'openai-chat', model: 'gpt-4.1' },
  { api: 'openrouter', model: 'anthropic/claude-sonnet-4-5' },
  { api: 'anthropic', model: 'claude-sonnet-4-5' },
  { api: 'google', model: 'gemini-2.5-pro' },
  { api: 'openai-responses', model: 'gpt-5' },
]

let plain = false
beforeEach(() => {
  const kept = JsonTextCache.prototype.list
  vi.spyOn(JsonTextCache.prototype, 'list').mockImplementation(function (
    this: JsonTextCache,
    values,
    rebuilt,
    known,
  ) {
    return plain ? (values as never) : kept.call(this, values, rebuilt, known)
  })
})
afterEach(() => {
  vi.restoreAllMocks()
})

/** Image files read as their path's bytes. */
const readImageFile = async (path: string) => new TextEncoder().encode(path)

/** Messages whose JSON is easy to get wrong: escapes, lone surrogates, numbers, nested arguments. */
function awkwardTurn(n: number): Message[] {
  const args = {
    query: `héllo 日本語 🎉 \u2028 "q" \\ \n\t\u0000 lone \ud800 and \udfff, cut \ud83d`,
    numbers: [0, 1e21, 1e-7, 0.1 + 0.2, 5e-324, 1.7976931348623157e308, -1.5, 2 ** 53 + 1],
    nested: { a: [{ b: { c: [1, 'two', null, true, {}, []] } }], '': 'empty key', 10: 'index key' },
  }
  return [
    assistant(
      [
        { type: 'text', text: `turn ${n}: 🎉 \ud800 "done" \u2029` },
        call(`call_${n}_a`, 'lookup', JSON.stringify(args)),
        // Arguments as a model writes them: number forms JSON.stringify would not write.
        call(`call_${n}_b`, 'stat', '{"size": 1.0, "big": 1E21, "neg": -0, "esc": "\\u00e9\\ud800"}'),
        call(`call_${n}_c`, 'cut', '{"path": "/tmp/x', true),
      ],
      { api: 'anthropic', provider: 'anthropic', model: 'claude-sonnet-4-5' },
    ),
    result(`call_${n}_a`, `found \udc00 ${'line of output '.repeat(20)}`),
    result(`call_${n}_b`, 'ok: 1.0 bytes \u{1f600}'),
    result(`call_${n}_c`, 'failed', [], 'error'),
    user(`next ${n}: \ud83d\ude00 and a lone \ud83d`),
  ]
}

function history(): Message[] {
  const generated = generateSession({ seed: 7, tasks: 12, sessionId: 'json' }).history
  const messages = generated.filter((event: HistoryEvent): event is Message => 'role' in event)
  return [...messages, ...awkwardTurn(1), ...awkwardTurn(2), ...awkwardTurn(3)]
}

/** The body one request puts on the wire. */
async function sentBody(client: LLMClient, api: ScriptedApi, request: LLMRequest): Promise<string> {
  server().enqueue(scriptedResponse(api, { steps: [{ text: 'ok' }] }))
  await client.complete(request)
  return server().requests.at(-1)!.rawBody
}

describe.each(WIRES)('$api request body', ({ api, model }) => {
  const config: Pick<ClientConfig, 'api' | 'model' | 'readImageFile'> = { api, model, readImageFile }

  /** Sends `request` through `client` and through a fresh reference client; both bodies. */
  async function both(client: LLMClient, reference: LLMClient, request: LLMRequest) {
    const kept = await sentBody(client, api, request)
    plain = true
    try {
      return { kept, reference: await sentBody(reference, api, request) }
    } finally {
      plain = false
    }
  }

  test('turn by turn, the body is what JSON.stringify of the whole body gives', async () => {
    const client = testClient(server(), config)
    const reference = testClient(server(), config)
    const all = history()
    const messages: Message[] = []
    const tools = [{ name: 'lookup', description: 'Looks up 🎉', parameters: { type: 'object' } }]
    for (const [i, message] of all.entries()) {
      messages.push(message)
      // Every few messages, as an agent sends them (and always near the awkward end).
      if (i % 5 !== 4 && i < all.length - 12) continue
      const { kept, reference: expected } = await both(client, reference, {
        system: 'sys 🎉',
        messages,
        tools,
      })
      expect(kept).toBe(expected)
    }
    expect(JSON.parse(server().requests.at(-1)!.rawBody)).toBeTruthy()
  })

  test('a changed earlier message, a shorter history and provider options: still byte for byte', async () => {
    const client = testClient(server(), config)
    const reference = testClient(server(), config)
    const all = history()
    for (let end = all.length - 10; end <= all.length; end += 5) {
      const request = { messages: all.slice(0, end) }
      const { kept, reference: expected } = await both(client, reference, request)
      expect(kept).toBe(expected)
    }
    // An earlier message replaced by another object: the client starts over.
    const edited = [...all]
    const at = edited.findIndex((m) => m.role === 'user')
    edited[at] = user('edited: \ud800 🎉')
    let bodies = await both(client, reference, { messages: edited })
    expect(bodies.kept).toBe(bodies.reference)
    expect(bodies.kept).toContain('edited: \\ud800 🎉')
    // Compacted: a shorter history that starts elsewhere.
    bodies = await both(client, reference, { messages: all.slice(all.length - 6) })
    expect(bodies.kept).toBe(bodies.reference)
    // The host's provider options merged over a body holding kept JSON.
    const providerOptions = { [api]: { seed: 7, extra: { nested: '\ud800' } } }
    bodies = await both(client, reference, { messages: all, providerOptions })
    expect(bodies.kept).toBe(bodies.reference)
    expect(JSON.parse(bodies.kept).extra).toEqual({ nested: '\ud800' })
  })

  test('histories whose settled part ends where turns merge or images wait: byte for byte, request by request', async () => {
    const image = { type: 'image_url' as const, url: PNG_DATA_URL }
    const history: Message[] = [
      user('start'),
      assistant([call('c1', 'lookup')]),
      result('c1', 'with an image', [image]),
      developer('a note folded into the result', image),
      // Converts to nothing on every wire: the user turns around it merge on the turn-based wires.
      assistant([{ type: 'text', text: '' }]),
      user('after an empty reply'),
      developer('a note on the user message'),
      assistant([{ type: 'text', text: 'a reply' }]),
      // Two replies in a row (a prefill, then the rest): one assistant turn.
      assistant([{ type: 'text', text: 'the rest of it' }, call('c2', 'stat')]),
      result('c2', 'two', [image]),
      system('a new system prompt'),
      user('go on'),
      assistant([call('c3', 'lookup'), call('c4', 'stat')]),
      result('c3', 'three'),
      result('c4', 'four', [image], 'error'),
      developer('after the results'),
      assistant([{ type: 'text', text: 'done' }]),
      assistant([{ type: 'text', text: 'and a second reply, after the last user turn' }]),
    ]
    const client = testClient(server(), config)
    const reference = testClient(server(), config)
    for (let end = 1; end <= history.length; end++) {
      const request = { system: 'sys', messages: history.slice(0, end) }
      const { kept, reference: expected } = await both(client, reference, request)
      expect(kept).toBe(expected)
    }
  })

  test('two histories taking turns on one client: each body byte for byte', async () => {
    const client = testClient(server(), config)
    const reference = testClient(server(), config)
    const all = history()
    const other = all.slice(0, 40).map((m) => ({ ...m }))
    for (let end = 30; end <= 60; end += 3) {
      for (const messages of [all.slice(0, end), other.slice(0, Math.min(end - 10, other.length))]) {
        const { kept, reference: expected } = await both(client, reference, { messages })
        expect(kept).toBe(expected)
      }
    }
    // Two requests prepared at once: the second starts over while the first is being built.
    const requests = [{ messages: all.slice(0, 50) }, { messages: other }]
    for (const _ of requests) server().enqueue(scriptedResponse(api, { steps: [{ text: 'ok' }] }))
    await Promise.all(requests.map((request) => client.complete(request)))
    const sent = server()
      .requests.slice(-2)
      .map((request) => request.rawBody)
    plain = true
    try {
      const expected = []
      for (const request of requests) expected.push(await sentBody(reference, api, request))
      expect(sent.sort()).toEqual(expected.sort())
    } finally {
      plain = false
    }
  })

  test('two histories taking turns keep their settled parts: each turn writes its new messages only', async () => {
    const all = history()
    const other = all.map((m) => ({ ...m }))
    const join = vi.spyOn(JsonTextCache.prototype, 'join')
    const written = () => join.mock.calls.reduce((sum, [values]) => sum + values.length, 0)
    const alone = testClient(server(), config)
    for (let end = 20; end <= all.length; end += 2)
      await sentBody(alone, api, { messages: all.slice(0, end) })
    const once = written()
    join.mockClear()
    const shared = testClient(server(), config)
    for (let end = 20; end <= all.length; end += 2) {
      await sentBody(shared, api, { messages: all.slice(0, end) })
      await sentBody(shared, api, { messages: other.slice(0, end) })
    }
    // Each history's settled items are written once, as for a history alone: starting over on
    // every switch would write each history again on every turn (about 30 times as much here).
    expect(once).toBeGreaterThan(all.length / 2)
    expect(written()).toBe(2 * once)
  })

  test('a retry re-sends the same bytes', async () => {
    const client = testClient(server(), config)
    const messages = history()
    await sentBody(client, api, { messages: messages.slice(0, -5) })
    server().enqueue({ status: 503, body: '{"error":{"message":"busy"}}' })
    const body = await sentBody(client, api, { messages })
    const [failed, retried] = server().requests.slice(-2)
    expect(failed!.rawBody).toBe(body)
    expect(retried!.rawBody).toBe(body)
    expect(server().requests).toHaveLength(3)
  })
})

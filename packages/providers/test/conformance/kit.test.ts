import type { Usage } from '@kode/protocol'
import type { ProviderFactory } from '@kode/providers'
import { type EventMapper, parseEventJson, type ResponseBuilder } from '@kode/providers/adapter'
import {
  type ConformanceCase,
  frameChat,
  frameGoogle,
  frameTyped,
  runProviderConformance,
  sseFrame,
  unknownFrameFor,
} from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'

// A tiny wire (`data: {"t": ...}` events) and adapters for it that break the contract on purpose:
// the kit must pass the right one and name what each broken one gets wrong.

type TinyEvent =
  | { t: 'text'; v: string }
  | { t: 'call'; i: number; id: string; name: string; args: string }
  | { t: 'end'; reason: string; in?: number; out?: number }

type Quirk = 'throws-on-unknown' | 'never-completes' | 'exclusive-usage' | 'zero-for-absent'

function tiny(quirk?: Quirk): ProviderFactory {
  const usageOf = (end: Extract<TinyEvent, { t: 'end' }>): Usage | undefined => {
    if (quirk === 'exclusive-usage') return { inputTokens: 1, outputTokens: end.out ?? 0, cacheReadTokens: 4 }
    if (quirk === 'zero-for-absent') return { inputTokens: end.in ?? 0, outputTokens: end.out ?? 0 }
    const usage: Usage = {}
    if (end.in !== undefined) usage.inputTokens = end.in
    if (end.out !== undefined) usage.outputTokens = end.out
    return Object.keys(usage).length > 0 ? usage : undefined
  }
  return (config) => ({
    defaultBaseUrl: 'http://127.0.0.1:9',
    buildRequest: (request) => ({
      path: '/tiny',
      headers: {},
      body: { model: config.model, n: request.messages.length },
    }),
    createEventMapper: (): EventMapper => (event, out: ResponseBuilder) => {
      const data = parseEventJson(event.data, config.errors) as TinyEvent
      switch (data.t) {
        case 'text':
          return out.text(data.v)
        case 'call':
          out.toolCall(data.i, data.id, data.name)
          out.toolCallArgs(data.i, data.args)
          return out.endBlock(data.i)
        case 'end': {
          const usage = usageOf(data)
          if (usage) out.usage(usage)
          if (quirk !== 'never-completes') out.stop(data.reason, data.reason === 'done' ? 'stop' : undefined)
          return
        }
        default:
          if (quirk === 'throws-on-unknown') throw new Error(`unknown event ${JSON.stringify(data)}`)
          return
      }
    },
  })
}

const frames = (...events: string[]) => events.map((e) => sseFrame(e))
const CASES: ConformanceCase[] = [
  {
    name: 'text',
    frames: frames(
      '{"t":"text","v":"Hel"}',
      '{"t":"text","v":"lo ÷"}',
      '{"t":"end","reason":"done","in":5,"out":2}',
    ),
    expect: {
      text: 'Hello ÷',
      stopReason: 'stop',
      rawStopReason: 'done',
      usage: { inputTokens: 5, outputTokens: 2 },
    },
  },
  {
    name: 'tool call, no output count',
    frames: frames(
      '{"t":"text","v":"Reading."}',
      '{"t":"call","i":0,"id":"c1","name":"read","args":"{\\"path\\":\\"a\\"}"}',
      '{"t":"end","reason":"later-invented","in":9}',
    ),
    expect: {
      stopReason: null,
      usage: { inputTokens: 9 },
      toolCalls: [{ name: 'read', argumentsJson: '{"path":"a"}' }],
    },
  },
]
const UNKNOWN = sseFrame('{"t":"something-new","x":1}')
const run = (quirk?: Quirk) =>
  runProviderConformance(tiny(quirk), CASES, { api: 'tiny', unknownEvent: UNKNOWN })
const checksOf = async (quirk: Quirk) => new Set((await run(quirk)).failures.map((f) => f.check))

describe('runProviderConformance', () => {
  test('an adapter that keeps the contract has no failures', async () => {
    const report = await run()
    expect(report.failures).toEqual([])
    expect(report.passed).toBeGreaterThan(20)
  })

  test('throwing on an unknown event type fails unknown-event, for each case', async () => {
    const report = await run('throws-on-unknown')
    expect(report.failures.map((f) => [f.check, f.case])).toEqual([
      ['unknown-event', 'text'],
      ['unknown-event', 'tool call, no output count'],
    ])
  })

  test('a stream that never says it is complete fails as a cut stream', async () => {
    const failed = await checksOf('never-completes')
    expect(failed.has('stream')).toBe(true)
  })

  test('cache tokens outside the input count fail the usage check', async () => {
    expect(await checksOf('exclusive-usage')).toContain('usage')
  })

  test('a 0 reported for a count the provider did not send fails the case expectation', async () => {
    const report = await run('zero-for-absent')
    expect(report.failures).toEqual([
      {
        check: 'expectations',
        case: 'tool call, no output count',
        message: 'usage is {"inputTokens":9,"outputTokens":0,"totalTokens":9}, expected {"inputTokens":9}',
      },
    ])
  })

  test('without options.unknownEvent, a frame modelled on the cases still catches a throw on unknown events', async () => {
    const report = await runProviderConformance(tiny('throws-on-unknown'), CASES, { api: 'tiny' })
    expect(report.failures.map((f) => [f.check, f.case])).toEqual([
      ['unknown-event', 'text'],
      ['unknown-event', 'tool call, no output count'],
    ])
    expect(report.notRun).toEqual([])
  })

  test('skipped checks are not run, and the report says so', async () => {
    const report = await runProviderConformance(tiny('throws-on-unknown'), CASES, {
      unknownEvent: UNKNOWN,
      skip: ['unknown-event'],
    })
    expect(report.failures).toEqual([])
    expect(report.notRun).toEqual([
      { check: 'unknown-event', case: 'text', reason: 'listed in options.skip' },
      { check: 'unknown-event', case: 'tool call, no output count', reason: 'listed in options.skip' },
    ])
  })

  test('a case with no JSON event to model an unknown one on reports unknown-event as not run', async () => {
    // A wire of plain-text events: `data: <text>`, ended by `data: .`.
    const plain: ProviderFactory = (config) => ({
      defaultBaseUrl: 'http://127.0.0.1:9',
      buildRequest: () => ({ path: '/plain', headers: {}, body: { model: config.model } }),
      createEventMapper: () => (event, out) => {
        if (event.data === '.') out.stop('end', 'stop')
        else out.text(event.data)
      },
    })
    const report = await runProviderConformance(plain, [{ name: 'plain', frames: frames('Hello', '.') }], {
      skip: ['chunking', 'abort', 'cut-stream', 'break', 'http-error', 'retry-after', 'stall'],
    })
    expect(report.failures).toEqual([])
    expect(report.notRun).toContainEqual({
      check: 'unknown-event',
      case: 'plain',
      reason: expect.stringContaining('give options.unknownEvent'),
    })
  })

  test('at least one case is required', async () => {
    await expect(runProviderConformance(tiny(), [])).rejects.toThrow(TypeError)
  })
})

describe('unknownFrameFor models an unknown event on the frames of a case', () => {
  test('typed, named events (Anthropic, OpenAI Responses): a new type under a new event name', () => {
    const frames = frameTyped(['{"type":"message_start"}', '{"type":"message_stop"}'])
    expect(unknownFrameFor(frames)).toBe('event: kode_unknown\ndata: {"type":"kode_unknown"}\n\n')
  })

  test('untyped events (Chat Completions): a field no chunk has, no event name', () => {
    const frames = frameChat(['{"id":"c","choices":[]}'])
    expect(unknownFrameFor(frames)).toBe('data: {"kode_unknown":{}}\n\n')
  })

  test('CRLF framing (Gemini) is kept', () => {
    const frames = frameGoogle(['{"candidates":[]}'])
    expect(unknownFrameFor(frames)).toBe('data: {"kode_unknown":{}}\r\n\r\n')
  })

  test('nothing to model it on when no event carries a JSON object', () => {
    expect(unknownFrameFor(frames('plain text', '[DONE]'))).toBeUndefined()
  })
})

import {
  anthropic,
  google,
  openaiChat,
  openaiResponses,
  openrouter,
  type ProviderFactory,
} from '@kode/providers'
import {
  type ConformanceCase,
  type FramedApi,
  frameChat,
  frameFor,
  runProviderConformance,
} from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'
import { fixture } from '../helpers.js'

// Every built-in adapter meets the contract plugins are held to, on recorded and Kode fixtures,
// with the kit's defaults (the unknown event is modelled on each case's frames).

const recorded = (
  api: FramedApi,
  dir: string,
  name: string,
  expect?: ConformanceCase['expect'],
): ConformanceCase => ({
  name,
  frames: frameFor(api, fixture(dir, name)),
  ...(expect ? { expect } : {}),
})

interface Suite {
  api: FramedApi
  factory: ProviderFactory
  model: string
  cases: ConformanceCase[]
}

const SUITES: Suite[] = [
  {
    api: 'openai-chat',
    factory: openaiChat,
    model: 'gpt-4.1',
    cases: [
      recorded('openai-chat', 'openai-chat', 'groq-tool-call', {
        stopReason: 'tool_use',
        rawStopReason: 'tool_calls',
      }),
      recorded('openai-chat', 'openai-chat', 'kode-parallel-tool-calls', { stopReason: 'tool_use' }),
      {
        name: 'unknown finish reason',
        frames: frameChat([
          '{"id":"c1","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"kode_new"}]}',
        ]),
        expect: { stopReason: null, rawStopReason: 'kode_new', text: 'x' },
        cutAtByte: false,
      },
    ],
  },
  {
    api: 'openrouter',
    factory: openrouter,
    model: 'anthropic/claude-sonnet-4.5',
    cases: [
      recorded('openrouter', 'openrouter', 'kode-reasoning-details'),
      recorded('openrouter', 'openrouter', 'kode-encrypted-reasoning-tool', { stopReason: 'tool_use' }),
    ],
  },
  {
    api: 'anthropic',
    factory: anthropic,
    model: 'claude-sonnet-4-5',
    cases: [
      recorded('anthropic', 'anthropic', 'anthropic-text', { stopReason: 'stop' }),
      recorded('anthropic', 'anthropic', 'kode-redacted-thinking-tools', { stopReason: 'tool_use' }),
      recorded('anthropic', 'anthropic', 'anthropic-refusal', { stopReason: null, rawStopReason: 'refusal' }),
    ],
  },
  {
    api: 'google',
    factory: google,
    model: 'gemini-2.5-pro',
    cases: [
      recorded('google', 'google', 'google-text', { stopReason: 'stop' }),
      recorded('google', 'google', 'kode-thought-signatures', {
        stopReason: 'tool_use',
        usage: { inputTokens: 120, outputTokens: 80, cacheReadTokens: 100, reasoningTokens: 50 },
      }),
      recorded('google', 'google', 'google-stream-no-args-tool-call', { stopReason: 'tool_use' }),
      recorded('google', 'google', 'kode-unknown-values', {
        stopReason: null,
        rawStopReason: 'SOMETHING_NEW',
      }),
    ],
  },
  {
    api: 'openai-responses',
    factory: openaiResponses,
    model: 'gpt-5.1',
    cases: [
      recorded('openai-responses', 'openai-responses', 'azure-text.1', { stopReason: 'stop', text: 'Hello' }),
      recorded('openai-responses', 'openai-responses', 'kode-reasoning-summaries-phase', {
        stopReason: 'tool_use',
      }),
      recorded('openai-responses', 'openai-responses', 'kode-unknown-values', {
        stopReason: null,
        rawStopReason: 'content_filter',
      }),
    ],
  },
]

describe.each(SUITES.map((s) => [s.api, s] as const))('%s', (api, suite) => {
  test('meets the provider contract', async () => {
    const report = await runProviderConformance(suite.factory, suite.cases, {
      api,
      model: suite.model,
    })
    expect(report.failures).toEqual([])
    // The unknown-event check ran on a frame modelled on each case (no unknownEvent given).
    expect(report.notRun.filter((n) => n.check === 'unknown-event')).toEqual([])
    expect(report.passed).toBeGreaterThan(suite.cases.length * 8)
  }, 60_000)
})

import {
  type AssistantMessage,
  addUsage,
  approvalResponseId,
  computeCostUsd,
  cutText,
  graphemeBoundary,
  type HistoryEvent,
  isInterrupt,
  isRefusal,
  joinText,
  joinThinking,
  toolCallsOf,
  toolResultEventStatus,
  USAGE_KEYS,
  Usage,
} from '@kode/protocol'
import { describe, expect, test } from 'vitest'

describe('computeCostUsd', () => {
  const prices = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }

  test('prices cache reads and writes apart from the inclusive input count', () => {
    const usage = {
      inputTokens: 10_000,
      cacheReadTokens: 6_000,
      cacheWriteTokens: 1_000,
      outputTokens: 2_000,
    }
    // 3,000 fresh input * 3 + 6,000 * 0.3 + 1,000 * 3.75 + 2,000 * 15, per million
    expect(computeCostUsd(usage, prices)).toBeCloseTo((9_000 + 1_800 + 3_750 + 30_000) / 1e6, 12)
  })

  test('cache prices default to the input price', () => {
    expect(
      computeCostUsd({ inputTokens: 1_000_000, cacheReadTokens: 500_000 }, { input: 2, output: 8 }),
    ).toBe(2)
  })

  test('is undefined when the provider reported neither input nor output', () => {
    expect(computeCostUsd({ reasoningTokens: 10 }, prices)).toBeUndefined()
  })
})

test('USAGE_KEYS lists every count of the Usage schema, and nothing else', () => {
  expect([...USAGE_KEYS].sort()).toEqual(Object.keys(Usage.properties).sort())
})

test('addUsage sums field by field and keeps unreported fields absent', () => {
  expect(addUsage({ inputTokens: 1, cacheReadTokens: 2 }, { inputTokens: 3, outputTokens: 4 })).toStrictEqual(
    {
      inputTokens: 4,
      outputTokens: 4,
      cacheReadTokens: 2,
    },
  )
})

test('addUsage keeps totalTokens the sum of input and output when one side reported no total', () => {
  // A response cut before its output (Anthropic reports input as the message starts) has input
  // and no total; summed with a whole response, the total must still cover its input.
  const whole = { inputTokens: 10, outputTokens: 5, totalTokens: 15 }
  const cut = { inputTokens: 100, cacheReadTokens: 40 }
  expect(addUsage(whole, cut)).toStrictEqual({
    inputTokens: 110,
    outputTokens: 5,
    totalTokens: 115,
    cacheReadTokens: 40,
  })
  expect(addUsage(cut, whole)).toStrictEqual(addUsage(whole, cut))
  // Absent on both sides, it stays absent; a side that reported a total keeps it as reported.
  expect(addUsage(cut, { inputTokens: 1 })).toStrictEqual({ inputTokens: 101, cacheReadTokens: 40 })
  expect(addUsage({ totalTokens: 7 }, { outputTokens: 2 })).toStrictEqual({ outputTokens: 2, totalTokens: 9 })
})

test('addUsage saturates at Number.MAX_SAFE_INTEGER: counts near the largest number never sum to Infinity', () => {
  const huge = { inputTokens: 1e308, outputTokens: 1, totalTokens: 1e308 }
  const max = Number.MAX_SAFE_INTEGER
  expect(addUsage(huge, huge)).toStrictEqual({ inputTokens: max, outputTokens: 2, totalTokens: max })
  // A total made up from input and output saturates too.
  expect(addUsage({ inputTokens: 1e308 }, { inputTokens: 1e308, totalTokens: 1 })).toStrictEqual({
    inputTokens: max,
    totalTokens: max,
  })
  expect(addUsage({ outputTokens: max }, { outputTokens: 1 })).toStrictEqual({ outputTokens: max })
})

describe('interrupt derivation (seed 000)', () => {
  const base = { id: 'x', createdAt: 1 }
  const assistant = (stopReason?: AssistantMessage['stopReason']): HistoryEvent => ({
    role: 'assistant',
    ...base,
    parts: [],
    ...(stopReason ? { stopReason } : {}),
  })
  const tool = (status: 'success' | 'error' | 'aborted'): HistoryEvent => ({
    role: 'tool',
    ...base,
    toolCallId: 'c',
    toolName: 't',
    status,
    outputText: '',
    parts: [],
  })

  test('an aborted assistant message is an interrupt', () =>
    expect(isInterrupt(assistant('aborted'))).toBe(true))
  test('an aborted tool result is an interrupt', () => expect(isInterrupt(tool('aborted'))).toBe(true))
  test('an interrupt record is an interrupt', () =>
    expect(isInterrupt({ type: 'interrupt', ...base })).toBe(true))
  test('errors and other stop reasons are not', () => {
    expect(isInterrupt(assistant('error'))).toBe(false)
    expect(isInterrupt(assistant('length'))).toBe(false)
    expect(isInterrupt(assistant())).toBe(false)
    expect(isInterrupt(tool('error'))).toBe(false)
    expect(isInterrupt({ type: 'error', ...base, message: 'x', canRetry: false })).toBe(false)
  })
  test('the UI status of an aborted tool result is error', () => {
    expect(toolResultEventStatus('aborted')).toBe('error')
    expect(toolResultEventStatus('error')).toBe('error')
    expect(toolResultEventStatus('success')).toBe('success')
  })
})

test("isRefusal: Anthropic's refusal stop or a refusal category, nothing else", () => {
  const message = (fields: Partial<AssistantMessage>): AssistantMessage => ({
    role: 'assistant',
    id: 'a',
    createdAt: 1,
    parts: [],
    ...fields,
  })
  expect(isRefusal(message({ rawStopReason: 'refusal' }))).toBe(true)
  expect(isRefusal(message({ stopReason: 'stop', stopDetails: { category: 'refusal' } }))).toBe(true)
  expect(isRefusal(message({ stopReason: 'stop', rawStopReason: 'end_turn' }))).toBe(false)
  expect(isRefusal(message({ stopDetails: { category: 'cyber' } }))).toBe(false)
})

test('joinText, joinThinking and toolCallsOf keep part order', () => {
  const message: AssistantMessage = {
    role: 'assistant',
    id: 'a',
    createdAt: 1,
    parts: [
      { type: 'text', text: 'A' },
      { type: 'thinking_text', text: 't1' },
      { type: 'tool_call', id: 'c1', name: 'x', argumentsJson: '{}' },
      { type: 'text', text: 'B' },
      { type: 'thinking_text', text: 't2' },
      { type: 'tool_call', id: 'c2', name: 'y', argumentsJson: '{}' },
    ],
  }
  expect(joinText(message.parts)).toBe('AB')
  expect(joinThinking(message.parts)).toBe('t1t2')
  expect(joinThinking([{ type: 'text', text: 'x' }])).toBeUndefined()
  expect(toolCallsOf(message).map((c) => c.id)).toEqual(['c1', 'c2'])
})

describe('approvalResponseId', () => {
  test("a sub-agent's call shows the sub-agent's response; any other, or one recorded before that field, its own", () => {
    expect(approvalResponseId({ responseId: 'parent', subAgentResponseId: 'child' })).toBe('child')
    expect(approvalResponseId({ responseId: 'parent' })).toBe('parent')
    expect(approvalResponseId({ subAgentResponseId: 'child' })).toBe('child')
    expect(approvalResponseId({})).toBeUndefined()
  })
})

describe('cutText', () => {
  test('keeps text that fits, and marks a cut with … within the limit', () => {
    expect(cutText('short', 5)).toBe('short')
    expect(cutText('a longer text', 6)).toBe('a lon…')
    expect(cutText('a longer text', 6)).toHaveLength(6)
  })

  test('never keeps half of an emoji (a surrogate pair) at the cut', () => {
    // '😀' is two UTF-16 units; a cut after its first would leave a lone high surrogate.
    const cut = cutText('ab😀cd', 4)
    expect(cut).toBe('ab…')
    expect(/[\ud800-\udbff]/.test(cut)).toBe(false)
    expect(cutText('ab😀cd', 5)).toBe('ab😀…')
  })

  test('never keeps part of an emoji made of several characters: a flag, a skin tone, a family, a keycap', () => {
    // Each is one character on screen; a cut inside leaves another one (🇫 alone, a yellow 👍, 👨‍👩‍).
    expect(cutText('ab🇫🇷cd', 5)).toBe('ab…')
    expect(cutText('ab👍🏽cd', 5)).toBe('ab…')
    expect(cutText('ab👨‍👩‍👧‍👦cd', 8)).toBe('ab…')
    expect(cutText('ab1️⃣cd', 4)).toBe('ab…')
    expect(cutText('cafe\u0301s', 5)).toBe('caf…')
    // A cut between two whole ones keeps the first.
    expect(cutText('🇫🇷🇩🇪', 6)).toBe('🇫🇷…')
  })

  test('a cut deep in a run of flags keeps them paired, though it reads only around the cut', () => {
    // Flags pair their letters from the run's start, far before the text the cut reads.
    const flags = '🇫🇷'.repeat(100)
    for (let max = 150; max < 160; max++) {
      const cut = cutText(flags, max)
      expect(cut.slice(0, -1)).toBe('🇫🇷'.repeat((cut.length - 1) / 4))
    }
  })

  test('a limit with no room for the mark gives the empty text, never more than the limit', () => {
    expect(cutText('abc', 0)).toBe('')
    expect(cutText('abc', -1)).toBe('')
    expect(cutText('abc', 0.5)).toBe('')
    expect(cutText('abc', 1)).toBe('…')
    expect(cutText('', 0)).toBe('')
  })
})

describe('graphemeBoundary', () => {
  test('moves an index inside a character to its start or its end', () => {
    const text = 'ab👨‍👩‍👧‍👦cd'
    expect(graphemeBoundary(text, 2, 'before')).toBe(2)
    expect(graphemeBoundary(text, 5, 'before')).toBe(2)
    expect(graphemeBoundary(text, 5, 'after')).toBe(13)
    expect(graphemeBoundary(text, 13, 'after')).toBe(13)
    expect(graphemeBoundary('cafe\u0301s', 4, 'after')).toBe(5)
    expect(graphemeBoundary('abc', -3, 'before')).toBe(0)
    expect(graphemeBoundary('abc', 9, 'after')).toBe(3)
  })
})

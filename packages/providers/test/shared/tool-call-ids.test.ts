import { fitToolCallId, TOOL_CALL_ID_RULES } from '@kode/providers/adapter'
import { describe, expect, test } from 'vitest'

const anthropic = TOOL_CALL_ID_RULES.anthropic
const chat = TOOL_CALL_ID_RULES['openai-chat']

describe('fitToolCallId', () => {
  test('an id that already fits is kept as it is', () => {
    expect(fitToolCallId('toolu_01A-b_2', anthropic)).toBe('toolu_01A-b_2')
    expect(fitToolCallId('call_abc', chat)).toBe('call_abc')
  })

  test('rejected characters become underscores and a hash of the original keeps it unique', () => {
    const a = fitToolCallId('functions.read:0', anthropic)
    const b = fitToolCallId('functions.read/0', anthropic)
    expect(a).toMatch(/^functions_read_0_[0-9a-f]{8}$/)
    expect(b).toMatch(/^functions_read_0_[0-9a-f]{8}$/)
    expect(a).not.toBe(b)
  })

  test('a long id is cut to the limit, hash included', () => {
    const long = `call_${'x'.repeat(80)}`
    const fitted = fitToolCallId(long, chat)
    expect(fitted).toHaveLength(40)
    expect(fitted).toMatch(/^call_x+_[0-9a-f]{8}$/)
    expect(fitToolCallId(`${long}y`, chat)).not.toBe(fitted)
  })

  test('the same id always gives the same result', () => {
    expect(fitToolCallId('a.b', anthropic)).toBe(fitToolCallId('a.b', anthropic))
  })
})

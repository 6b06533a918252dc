import { AgentError, defineSubAgent } from '@kode/core'
import { describe, expect, test } from 'vitest'
import { readFile } from '../helpers/tools.js'

function codeOf(make: () => unknown): unknown {
  try {
    make()
  } catch (error) {
    return AgentError.is(error) ? error.code : error
  }
  return undefined
}

describe('defineSubAgent', () => {
  test('is a tool with default arguments { prompt, description? }, running without a timeout', () => {
    const researcher = defineSubAgent({ name: 'researcher', description: 'Researches', system: 'S' })
    expect(researcher.parseArguments('{"prompt":"cats","description":"Cats"}')).toEqual({
      ok: true,
      args: { prompt: 'cats', description: 'Cats' },
    })
    expect(researcher.parseArguments('{}').ok).toBe(false)
    expect([researcher.concurrent, researcher.timeoutMs]).toEqual([true, Number.POSITIVE_INFINITY])
  })

  test('refuses what no child could run', () => {
    expect(codeOf(() => defineSubAgent({ name: 'bad name', description: '' }))).toBe('invalid_tool')
    expect(codeOf(() => defineSubAgent({ name: 'r', description: '', maxTurns: 0 }))).toBe('invalid_options')
    expect(codeOf(() => defineSubAgent({ name: 'r', description: '', tools: [readFile, readFile] }))).toBe(
      'invalid_options',
    )
  })
})

import type { AssistantMessage } from '@kode/protocol'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { readStructuredOutput } from '../../src/index.js'

// An answer read back from a stored history must be read exactly as the run read it.

const Weather = Type.Object({ city: Type.String(), celsius: Type.Number() })

const answer = (...texts: string[]): AssistantMessage => ({
  role: 'assistant',
  id: 'a1',
  createdAt: 1,
  parts: texts.map((text) => ({ type: 'text', text })),
  stopReason: 'stop',
})

describe('readStructuredOutput', () => {
  test('reads the text as JSON, a fenced block in it, or the last text part after a preamble', () => {
    expect(readStructuredOutput(Weather, answer('{"city":"Oslo","celsius":4}'))).toEqual({
      city: 'Oslo',
      celsius: 4,
    })
    expect(
      readStructuredOutput(Weather, answer('Here it is:\n```json\n{"city":"Oslo","celsius":4}\n```')),
    ).toEqual({ city: 'Oslo', celsius: 4 })
    expect(readStructuredOutput(Weather, answer('Let me answer. ', '{"city":"Rome","celsius":20}'))).toEqual({
      city: 'Rome',
      celsius: 20,
    })
  })

  test('is undefined for an answer the run would not accept', () => {
    expect(readStructuredOutput(Weather, answer('{"city":"Oslo","celsius":"cold"}'))).toBeUndefined()
    expect(readStructuredOutput(Weather, answer('sunny'))).toBeUndefined()
    expect(readStructuredOutput(Weather, answer(''))).toBeUndefined()
    expect(readStructuredOutput(Weather, undefined)).toBeUndefined()
    // Lossy JSON is refused as the run refuses it: the id would change without a word.
    const Id = Type.Object({ id: Type.Number() })
    expect(readStructuredOutput(Id, answer('{"id":9007199254740993}'))).toBeUndefined()
    expect(readStructuredOutput(Id, answer('{"id":1,"id":2}'))).toBeUndefined()
  })

  test("takes the run's answer text when a text strategy chose it", () => {
    const message = answer('Thought: done\nFinal Answer: {"city":"Oslo","celsius":4}')
    expect(readStructuredOutput(Weather, message)).toBeUndefined()
    expect(readStructuredOutput(Weather, message, '{"city":"Oslo","celsius":4}')).toEqual({
      city: 'Oslo',
      celsius: 4,
    })
  })
})

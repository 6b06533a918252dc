import { AgentError, defineTool } from '@kode/core'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'

const echo = defineTool({
  name: 'echo',
  description: 'Echoes',
  parameters: Type.Object({ text: Type.String(), times: Type.Optional(Type.Integer({ minimum: 1 })) }),
  execute: ({ text }) => text,
})

describe('defineTool', () => {
  test('parses and validates arguments', () => {
    expect(echo.parseArguments('{"text":"hi","times":2}')).toEqual({
      ok: true,
      args: { text: 'hi', times: 2 },
    })
  })

  test("onResume defaults to 'error' and refuses any other value than 'error' or 'rerun'", () => {
    expect(echo.onResume).toBe('error')
    const spec = { name: 'pay', description: '', parameters: Type.Object({}), execute: () => '' }
    expect(defineTool({ ...spec, onResume: 'rerun' }).onResume).toBe('rerun')
    const bad = (() => {
      try {
        defineTool({ ...spec, onResume: 'retry' as 'rerun' })
      } catch (error) {
        return error
      }
    })()
    expect(AgentError.is(bad) && [bad.code, bad.message]).toEqual([
      'invalid_tool',
      "tool pay: onResume must be 'error' or 'rerun'",
    ])
  })

  test('empty argument text means an empty object', () => {
    const none = defineTool({ name: 'none', description: '', parameters: Type.Object({}), execute: () => '' })
    expect(none.parseArguments('  ')).toEqual({ ok: true, args: {} })
  })

  test('every mismatch is listed with its path', () => {
    expect(echo.parseArguments('{"times":0}')).toEqual({
      ok: false,
      error: '/text: Expected required property; /times: Expected integer to be greater or equal to 1',
    })
  })

  test('invalid JSON says so', () => {
    const parsed = echo.parseArguments('{"text":')
    expect(parsed.ok).toBe(false)
    expect(!parsed.ok && parsed.error).toMatch(/^the arguments are not valid JSON \(/)
  })

  test('a custom validate replaces the schema check for a plain JSON Schema', () => {
    const seen: unknown[] = []
    const plain = defineTool({
      name: 'plain',
      description: '',
      parameters: Type.Unsafe<{ n: number }>({ type: 'object', properties: { n: { type: 'number' } } }),
      validate: (args) => {
        seen.push(args)
        return typeof (args as { n?: unknown }).n === 'number'
          ? { ok: true, args: args as { n: number } }
          : { ok: false, error: '/n: must be number' }
      },
      execute: ({ n }) => String(n),
    })
    expect(plain.parseArguments('{"n":1}')).toEqual({ ok: true, args: { n: 1 } })
    expect(plain.parseArguments('{"n":"x"}')).toEqual({ ok: false, error: '/n: must be number' })
    expect(plain.parseArguments('{"n":')).toMatchObject({ ok: false })
    expect(seen).toEqual([{ n: 1 }, { n: 'x' }])
  })

  test('defaults: concurrent, no own timeout', () => {
    expect([echo.concurrent, echo.timeoutMs]).toEqual([true, undefined])
  })

  test('a name providers would reject is an invalid_tool AgentError', () => {
    const error = (() => {
      try {
        defineTool({ name: 'read file', description: '', parameters: Type.Object({}), execute: () => '' })
      } catch (e) {
        return e
      }
    })()
    expect(AgentError.is(error) && error.code).toBe('invalid_tool')
  })

  test('a non-positive timeout is refused', () => {
    expect(() =>
      defineTool({
        name: 't',
        description: '',
        parameters: Type.Object({}),
        timeoutMs: 0,
        execute: () => '',
      }),
    ).toThrow(/timeoutMs must be a positive number/)
  })
})

import { AgentError, defineTool } from '@kode/core'
import { type TSchema, Type } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { afterEach, describe, expect, test, vi } from 'vitest'

afterEach(() => vi.restoreAllMocks())

/** What `run` throws (or `undefined`). */
function thrownBy(run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
  return undefined
}

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

  test('numbers of any length are read whole: a long float is no integer, keys in strings are no keys', () => {
    const anything = defineTool({
      name: 'anything',
      description: 'Takes anything',
      parameters: Type.Object({}, { additionalProperties: true }),
      execute: () => '',
    })
    const long = `0.${'1'.repeat(500)}`
    const json = `{"x":${long},"y":[1e400,-2.5E-3,9007199254740991,-9007199254740991],"z":"{\\"a\\":1,\\"a\\":2}"}`
    expect(anything.parseArguments(json).ok).toBe(true)
    expect(anything.parseArguments('{"ids":[1,9007199254740993]}')).toEqual({
      ok: false,
      error:
        'the integer 9007199254740993 cannot be read exactly (beyond 2^53); send it as a string (at /ids/1)',
    })
    // Beyond 2^53 but held exactly (2^53, 2^60, a nanosecond timestamp): read as written.
    const exact = '{"n":[9007199254740992,1152921504606846976,1700000000000000000,-1152921504606846976]}'
    expect(anything.parseArguments(exact).ok).toBe(true)
    expect(anything.parseArguments('{"a/b~c":{"k":1,"k":2}}')).toEqual({
      ok: false,
      error: 'the key "k" appears twice in one object (at /a~1b~0c)',
    })
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

  test('parameters TypeBox cannot check (plain JSON Schema) are refused when the tool is defined', () => {
    const plain = { type: 'object', properties: { n: { type: 'number' } } } as unknown as TSchema
    for (const parameters of [plain, Type.Unsafe<{ n: number }>(plain), Type.Object({ n: Type.Ref('N') })]) {
      const error = thrownBy(() =>
        defineTool({ name: 'plain', description: '', parameters, execute: () => '' }),
      )
      expect(AgentError.is(error) && [error.code, error.message]).toEqual([
        'invalid_tool',
        expect.stringMatching(/^tool plain: its parameters are not a schema TypeBox can check \(.+\); wrap/),
      ])
      expect((error as Error).cause).toBeInstanceOf(Error)
    }
  })

  test('parameters that do not describe an object are refused when the tool is defined', () => {
    // Every provider takes only an object schema for a tool's arguments: without this check the
    // mistake would surface as a 400 on every model call of every agent offering the tool.
    const cases: [TSchema, string][] = [
      [Type.String(), 'type "string"'],
      [Type.Array(Type.String()), 'type "array"'],
      [Type.Union([Type.Object({ a: Type.String() }), Type.Object({ b: Type.String() })]), 'no type'],
      [Type.Unsafe<{ n: number }>({ properties: { n: { type: 'number' } } }), 'no type'],
    ]
    for (const [parameters, got] of cases) {
      const error = thrownBy(() =>
        defineTool({
          name: 'odd',
          description: '',
          parameters,
          validate: () => ({ ok: true, args: {} }),
          execute: () => '',
        }),
      )
      expect(AgentError.is(error) && [error.code, error.message]).toEqual([
        'invalid_tool',
        `tool odd: parameters must be an object schema, such as Type.Object({ ... }) (Type.Object({}) for no arguments), as providers accept no other; this one has ${got}`,
      ])
    }
    // An object by its type, whatever else it says, is accepted.
    for (const parameters of [
      Type.Record(Type.String(), Type.String()),
      Type.Intersect([Type.Object({ a: Type.String() }), Type.Object({ b: Type.String() })]),
    ]) {
      expect(defineTool({ name: 'fine', description: '', parameters, execute: () => '' }).name).toBe('fine')
    }
  })

  test('the schema is compiled once, when the tool is defined, not at each call', () => {
    const compile = vi.spyOn(TypeCompiler, 'Compile')
    const tool = defineTool({
      name: 'once',
      description: '',
      parameters: Type.Object({ n: Type.Number() }),
      execute: () => '',
    })
    expect(compile).toHaveBeenCalledTimes(1)
    expect(tool.parseArguments('{"n":1}')).toEqual({ ok: true, args: { n: 1 } })
    expect(tool.parseArguments('{"n":"x"}')).toMatchObject({ ok: false })
    expect(compile).toHaveBeenCalledTimes(1)
  })

  test('where code generation is refused (a Content Security Policy), the schema is interpreted', () => {
    vi.spyOn(TypeCompiler, 'Compile').mockImplementation(() => {
      throw new EvalError('Code generation from strings disallowed for this context')
    })
    const tool = defineTool({
      name: 'csp',
      description: '',
      parameters: Type.Object({ n: Type.Number() }),
      execute: () => '',
    })
    expect(tool.parseArguments('{"n":1}')).toEqual({ ok: true, args: { n: 1 } })
    expect(tool.parseArguments('{"n":"x"}')).toEqual({ ok: false, error: '/n: Expected number' })
  })
})

test('a tool name starts with a letter or _, which Gemini and Vertex AI require', () => {
  const spec = { description: '', parameters: Type.Object({}), execute: () => '' }
  expect(defineTool({ ...spec, name: '_2fa' }).name).toBe('_2fa')
  for (const name of ['2fa_verify', '-x', '']) {
    const error = (() => {
      try {
        defineTool({ ...spec, name })
      } catch (e) {
        return e
      }
    })()
    expect(AgentError.is(error) && [error.code, error.message], name).toEqual([
      'invalid_tool',
      `invalid tool name ${JSON.stringify(name)}: use 1-64 characters from A-Z a-z 0-9 _ -, starting with a letter or _`,
    ])
  }
})
